/* tests/test_conv.c - convolutions and their modules against PyTorch
 * (tests/golden/conv_golden.h from tools/gen_golden_conv.py): outputs and gradients of
 * conv1d/conv2d/conv_transpose1d/conv_transpose2d over every option, gradcheck, initial
 * weights bit for bit, errors in PyTorch's words, thread invariance.
 */
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

#include "golden/conv_golden.h"

/* sin(0.77 k + phase) * scale over n values, in a new float64 tensor of shape s. */
static ct_tensor *conv_values(const int64_t *s, int nd, double phase, double scale)
{
    int64_t n = ct_test_numel(s, nd);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t k = 0; k < n; k++) {
        v[k] = sin((double)k * 0.77 + phase) * scale;
    }
    ct_tensor *t = ct_tensor_from_data(v, CT_FLOAT64, s, nd);
    free(v);
    return t;
}

/* The case's input: its base in the case's dtype, viewed through the layout. */
static ct_tensor *conv_input(const conv_golden *c)
{
    int64_t s[4];
    memcpy(s, c->xshape, sizeof s);
    if (c->layout == 1) {
        int64_t t = s[c->xnd - 1];
        s[c->xnd - 1] = s[c->xnd - 2];
        s[c->xnd - 2] = t;
    } else if (c->layout == 2) {
        s[c->xnd - 1] *= 2;
    }
    ct_tensor *base = ct_to_dtype(conv_values(s, c->xnd, 0.3, 1.5), c->dtype);
    if (c->layout == 1) {
        return ct_transpose(base, -1, -2);
    }
    if (c->layout == 2) {
        return ct_slice(base, -1, 0, s[c->xnd - 1], 2);
    }
    return base;
}

static ct_conv_opts conv_opts_of(const conv_golden *c)
{
    ct_conv_opts o = ct_conv_defaults();
    for (int d = 0; d < 2; d++) {
        o.stride[d] = c->stride[d];
        o.padding[d] = c->padding[d];
        o.dilation[d] = c->dilation[d];
        o.output_padding[d] = c->output_padding[d];
    }
    o.padding_type = (ct_conv_padding)c->padding_type;
    o.groups = c->groups;
    return o;
}

typedef ct_tensor *(*conv_fn)(const ct_tensor *, const ct_tensor *, const ct_tensor *,
                              const ct_conv_opts *);
static const conv_fn conv_fns[4] = {ct_conv1d, ct_conv2d, ct_conv_transpose1d,
                                    ct_conv_transpose2d};

/* g[k] = (k % 7 - 3) / 4 in out's shape and dtype. */
static ct_tensor *conv_grad_out(const ct_tensor *out)
{
    int64_t n = ct_numel(out);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t k = 0; k < n; k++) {
        v[k] = (double)(k % 7 - 3) / 4.0;
    }
    ct_tensor *g = ct_tensor_from_data(v, CT_FLOAT64, ct_sizes(out), ct_dim(out));
    free(v);
    return ct_to_dtype(g, ct_tensor_dtype(out));
}

static void conv_check_case(const conv_golden *c)
{
    double rtol = 1e-9, atol = 1e-10;
    if (c->dtype == CT_FLOAT32) {
        rtol = 1e-5;
        atol = 1e-5;
    } else if (c->dtype == CT_FLOAT16 || c->dtype == CT_BFLOAT16) {
        rtol = 2e-2;
        atol = 2e-2;
    }
    ct_scope_begin();
    ct_tensor *x = ct_requires_grad_(conv_input(c), true);
    ct_tensor *w = ct_to_dtype(conv_values(c->wshape, c->wnd, 1.1, 0.75), c->dtype);
    ct_requires_grad_(w, true);
    int64_t bs = c->kind >= 2 ? c->wshape[1] * c->groups : c->wshape[0];
    ct_tensor *b = ct_to_dtype(conv_values(&bs, 1, 2.0, 1.5), c->dtype);
    ct_requires_grad_(b, true);
    ct_conv_opts o = conv_opts_of(c);
    ct_tensor *y = conv_fns[c->kind](x, w, c->bias ? b : NULL, &o);
    CHECK_MSG(y != NULL, "%s: %s", c->name, ct_error() ? ct_error() : "?");
    if (y) {
        CHECK_MSG(ct_test_has_shape(y, c->oshape, c->ond), "%s: output shape", c->name);
        CHECK_MSG(CHECK_TENSOR(y, c->out, ct_numel(y), rtol, atol), "%s: output", c->name);
        CHECK(ct_backward(ct_sum(ct_mul(y, conv_grad_out(y))), NULL, false) == CT_OK);
        CHECK_MSG(CHECK_TENSOR(ct_grad(x), c->gx, ct_numel(x), rtol, atol), "%s: grad input",
                  c->name);
        CHECK_MSG(CHECK_TENSOR(ct_grad(w), c->gw, ct_numel(w), rtol, atol), "%s: grad weight",
                  c->name);
        if (c->bias) {
            CHECK_MSG(CHECK_TENSOR(ct_grad(b), c->gb, bs, rtol, atol), "%s: grad bias", c->name);
        } else {
            CHECK(ct_grad(b) == NULL);
        }
    }
    ct_scope_end();
}

static void test_conv_golden(void)
{
    for (size_t k = 0; k < sizeof conv_cases / sizeof conv_cases[0]; k++) {
        conv_check_case(&conv_cases[k]);
        ct_error_clear();
    }
}

/* ---- gradcheck ------------------------------------------------------------------------------- */
typedef struct conv_gc {
    int kind;
    ct_conv_opts o;
} conv_gc;

static ct_tensor *gc_conv(ct_tensor *const *in, int n, void *user)
{
    const conv_gc *g = (const conv_gc *)user;
    return conv_fns[g->kind](in[0], in[1], n > 2 ? in[2] : NULL, &g->o);
}

static void conv_gradcheck(const char *label, int kind, const int64_t *xs, int xnd,
                           const int64_t *ws, int wnd, int64_t nbias, const ct_conv_opts *o)
{
    ct_scope_begin();
    conv_gc g = {kind, *o};
    ct_tensor *in[3] = {ct_requires_grad_(ct_randn(xs, xnd, CT_FLOAT64, NULL), true),
                        ct_requires_grad_(ct_randn(ws, wnd, CT_FLOAT64, NULL), true),
                        ct_requires_grad_(ct_randn(&nbias, 1, CT_FLOAT64, NULL), true)};
    CHECK_MSG(ct_gradcheck(gc_conv, in, 3, &g, NULL), "gradcheck %s: %s", label,
              ct_error() ? ct_error() : "?");
    ct_error_clear();
    ct_scope_end();
}

static void test_conv_gradcheck(void)
{
    ct_manual_seed(3);
    ct_conv_opts o = ct_conv_defaults();
    const int64_t x2[4] = {2, 4, 5, 4}, w2[4] = {4, 2, 3, 2}, x1[3] = {2, 2, 6}, w1[3] = {3, 2, 3};
    o.stride[0] = 2;
    o.padding[0] = 1;
    o.padding[1] = 1;
    o.dilation[1] = 2;
    o.groups = 2;
    conv_gradcheck("conv2d", 1, x2, 4, w2, 4, 4, &o);
    const int64_t wt2[4] = {4, 1, 3, 2};
    o.output_padding[0] = 1;
    conv_gradcheck("conv_transpose2d", 3, x2, 4, wt2, 4, 2, &o);
    ct_conv_opts d = ct_conv_defaults();
    d.padding_type = CT_CONV_PADDING_SAME;
    conv_gradcheck("conv1d same", 0, x1, 3, w1, 3, 3, &d);
    const int64_t wt1[3] = {2, 3, 2};
    d = ct_conv_defaults();
    d.stride[0] = 3;
    d.output_padding[0] = 2;
    conv_gradcheck("conv_transpose1d", 2, x1, 3, wt1, 3, 3, &d);
    const int64_t xd[4] = {1, 3, 4, 4}, wd[4] = {3, 1, 3, 3}, w11[4] = {2, 3, 1, 1};
    d = ct_conv_defaults();
    d.groups = 3;
    conv_gradcheck("depthwise", 1, xd, 4, wd, 4, 3, &d);
    d = ct_conv_defaults();
    conv_gradcheck("1x1", 1, xd, 4, w11, 4, 2, &d);
}

static void test_conv_grad_fn(void)
{
    ct_scope_begin();
    const int64_t xs[4] = {1, 2, 4, 4}, ws[4] = {3, 2, 3, 3};
    ct_tensor *x = ct_requires_grad_(ct_randn(xs, 4, CT_FLOAT32, NULL), true);
    ct_tensor *y = ct_conv2d(x, ct_randn(ws, 4, CT_FLOAT32, NULL), NULL, NULL);
    CHECK(y && strcmp(ct_node_name(ct_grad_fn(y)), "ConvolutionBackward0") == 0);
    CHECK(ct_op_find("aten::convolution") != NULL);
    CHECK(ct_op_find("aten::convolution_backward") != NULL);
    CHECK(ct_op_find("aten::im2col") != NULL && ct_op_find("aten::col2im") != NULL);
    const int64_t ks[2] = {2, 2};
    CHECK(strcmp(ct_node_name(ct_grad_fn(ct_unfold(x, ks, NULL))), "Im2ColBackward0") == 0);
    ct_scope_end();
}

/* ---- modules --------------------------------------------------------------------------------- */
static void conv_check_init(const char *name, ct_module *m)
{
    const conv_init_golden *g = NULL;
    for (size_t k = 0; k < sizeof conv_inits / sizeof conv_inits[0]; k++) {
        if (strcmp(conv_inits[k].name, name) == 0) {
            g = &conv_inits[k];
        }
    }
    CHECK(g != NULL && m != NULL);
    if (!g || !m) {
        return;
    }
    const ct_tensor *w = ct_module_get_parameter(m, "weight");
    const ct_tensor *b = ct_module_get_parameter(m, "bias");
    CHECK(w && b && ct_numel(w) == g->wn && ct_numel(b) == g->bn);
    if (w && b && ct_numel(w) == g->wn && ct_numel(b) == g->bn) {
        const float *wd = (const float *)ct_data_ptr(w), *bd = (const float *)ct_data_ptr(b);
        for (int64_t k = 0; k < g->wn; k++) {
            CHECK_MSG(wd[k] == (float)g->w[k], "%s weight[%lld] %.9g != %.9g", name,
                      (long long)k, wd[k], g->w[k]);
        }
        for (int64_t k = 0; k < g->bn; k++) {
            CHECK_MSG(bd[k] == (float)g->b[k], "%s bias[%lld]", name, (long long)k);
        }
    }
    ct_module_free(m);
}

static void test_conv_module_init(void)
{
    ct_conv_opts o = ct_conv_defaults();
    ct_manual_seed(0);
    conv_check_init("conv2d", ct_conv2d_new(3, 4, 3, 3, NULL));
    o.groups = 2;
    ct_manual_seed(7);
    conv_check_init("conv2d_groups", ct_conv2d_new(4, 6, 3, 2, &o));
    ct_manual_seed(42);
    conv_check_init("conv1d", ct_conv1d_new(4, 5, 3, NULL));
    ct_manual_seed(1);
    conv_check_init("convt2d", ct_conv_transpose2d_new(4, 6, 2, 3, &o));
}

static void test_conv_module_forward(void)
{
    ct_scope_begin();
    ct_conv_opts o = ct_conv_defaults();
    o.stride[0] = o.stride[1] = 2;
    o.padding[0] = o.padding[1] = 1;
    ct_module *m = ct_conv2d_new(3, 5, 3, 3, &o);
    const int64_t xs[4] = {2, 3, 7, 6}, want[4] = {2, 5, 4, 3};
    ct_tensor *x = ct_randn(xs, 4, CT_FLOAT32, NULL);
    ct_tensor *y = ct_conv2d_forward(m, x);
    ct_tensor *ref = ct_conv2d(x, ct_module_get_parameter(m, "weight"),
                               ct_module_get_parameter(m, "bias"), &o);
    CHECK(y && ref && ct_test_has_shape(y, want, 4) && ct_test_same_bytes(y, ref));
    CHECK(strcmp(ct_module_name(m), "Conv2d") == 0);
    CHECK(ct_conv1d_forward(m, x) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected a Conv1d module, got Conv2d");
    o = ct_conv_defaults();
    o.bias = false;
    ct_module *m1 = ct_conv1d_new(2, 3, 2, &o);
    CHECK(m1 && ct_module_get_parameter(m1, "bias") == NULL);
    const int64_t x1[3] = {2, 2, 5}, w1[3] = {2, 3, 4};
    CHECK(ct_test_has_shape(ct_conv1d_forward(m1, ct_randn(x1, 3, CT_FLOAT32, NULL)), w1, 3));
    ct_module *mt = ct_conv_transpose2d_new(3, 2, 3, 3, NULL);
    const int64_t wt[4] = {3, 2, 3, 3}, yt[4] = {2, 2, 9, 8};
    CHECK(ct_test_has_shape(ct_module_get_parameter(mt, "weight"), wt, 4));
    CHECK(ct_test_has_shape(ct_conv_transpose2d_forward(mt, x), yt, 4));
    ct_module_free(m);
    ct_module_free(m1);
    ct_module_free(mt);
    ct_scope_end();
}

/* ---- errors ---------------------------------------------------------------------------------- */
static void test_conv_errors(void)
{
    ct_scope_begin();
    const int64_t x4[4] = {2, 4, 5, 5}, w8[4] = {8, 3, 3, 3}, x3[4] = {2, 3, 2, 2};
    const int64_t s2[2] = {5, 5}, b7 = 7, w6[4] = {6, 2, 3, 3};
    ct_tensor *w = ct_zeros(w8, 4, CT_FLOAT32);
    ct_tensor *x = ct_zeros(x4, 4, CT_FLOAT32);
    ct_tensor *xok = ct_zeros(x3, 4, CT_FLOAT32);
    CHECK(ct_conv2d(x, w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_conv2d: Given groups=1, weight of size [8, 3, 3, 3], expected "
                "input[2, 4, 5, 5] to have 3 channels, but got 4 channels instead");
    CHECK(ct_conv2d(xok, w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Calculated padded input size per channel: (2 x 2). Kernel size: "
                "(3 x 3). Kernel size can't be greater than actual input size");
    CHECK(ct_conv2d(ct_zeros(s2, 2, CT_FLOAT32), w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                "input of size: [5, 5]");
    CHECK(ct_conv1d(x, w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 2D (unbatched) or 3D (batched) input to conv1d");
    ct_conv_opts o = ct_conv_defaults();
    o.stride[1] = 0;
    CHECK(ct_conv2d(x, w, NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "non-positive stride is not supported");
    o = ct_conv_defaults();
    o.padding[0] = -1;
    CHECK(ct_conv2d(x, w, NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "negative padding is not supported");
    o = ct_conv_defaults();
    o.dilation[0] = 0;
    CHECK(ct_conv2d(x, w, NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "non-positive dilation is not supported");
    o = ct_conv_defaults();
    o.groups = 0;
    CHECK(ct_conv2d(x, w, NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "non-positive groups is not supported");
    o = ct_conv_defaults();
    o.padding_type = CT_CONV_PADDING_SAME;
    o.stride[0] = 2;
    CHECK(ct_conv2d(x, w, NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "padding='same' is not supported for strided convolutions");
    o = ct_conv_defaults();
    o.padding_type = (ct_conv_padding)9;
    CHECK(ct_conv2d(x, w, NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "9 is not a valid value for padding");
    o = ct_conv_defaults();
    o.groups = 4;
    CHECK(ct_conv2d(x, ct_zeros(w6, 4, CT_FLOAT32), NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given groups=4, expected weight to be divisible by 4 at dimension "
                "0, but got weight of size [[6, 2, 3, 3]] instead");
    CHECK(ct_conv2d(xok, w, ct_zeros(&b7, 1, CT_FLOAT32), NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given weight of size [8, 3, 3, 3], expected bias to be "
                "1-dimensional with 8 elements, but got bias of size [7] instead");
    CHECK(ct_conv2d(ct_to_dtype(x, CT_FLOAT64), w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected scalar type Double but found Float");
    const int64_t x5[4] = {2, 3, 5, 5};
    CHECK(ct_conv2d(ct_zeros(x5, 4, CT_INT64), ct_to_dtype(w, CT_INT64), NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "not implemented for 'Long'");
    const int64_t wt[4] = {3, 4, 3, 3}, xt[4] = {2, 3, 5, 5}, w44[4] = {4, 4, 3, 3};
    o = ct_conv_defaults();
    o.stride[0] = o.stride[1] = 2;
    o.output_padding[0] = o.output_padding[1] = 2;
    CHECK(ct_conv_transpose2d(ct_zeros(xt, 4, CT_FLOAT32), ct_zeros(wt, 4, CT_FLOAT32), NULL,
                              &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "output padding must be smaller than either stride or dilation, "
                "but got output_padding_height: 2 output_padding_width: 2 stride_height: 2 "
                "stride_width: 2 dilation_height: 1 dilation_width: 1");
    CHECK(ct_conv_transpose2d(ct_zeros(xt, 4, CT_FLOAT32), ct_zeros(w44, 4, CT_FLOAT32), NULL,
                              NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given transposed=1, weight of size [4, 4, 3, 3], expected "
                "input[2, 3, 5, 5] to have 4 channels, but got 3 channels instead");
    o = ct_conv_defaults();
    o.padding[0] = o.padding[1] = 5;
    CHECK(ct_conv_transpose2d(ct_zeros(xt, 4, CT_FLOAT32), ct_zeros(wt, 4, CT_FLOAT32), NULL,
                              &o) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Output size is too small");
    o = ct_conv_defaults();
    o.groups = 2;
    CHECK(ct_conv2d_new(3, 4, 3, 3, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "in_channels must be divisible by groups");
    o = ct_conv_defaults();
    o.padding_mode = CT_CONV_PADDING_MODE_REFLECT;
    CHECK(ct_conv_transpose2d_new(3, 4, 3, 3, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Only \"zeros\" padding mode is supported for ConvTranspose2d");
    o.padding_mode = (ct_conv_padding_mode)9;
    CHECK(ct_conv2d_new(3, 4, 3, 3, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "9 is not a valid value for padding_mode");
    ct_scope_end();
}

/* ---- threads --------------------------------------------------------------------------------- */
static void conv_thread_compute(ct_tensor **out)
{
    ct_manual_seed(11);
    const int64_t xs[4] = {6, 8, 12, 12}, ws[4] = {16, 4, 3, 3}, bs = 16;
    ct_tensor *x = ct_requires_grad_(ct_randn(xs, 4, CT_FLOAT32, NULL), true);
    ct_tensor *w = ct_requires_grad_(ct_randn(ws, 4, CT_FLOAT32, NULL), true);
    ct_tensor *b = ct_requires_grad_(ct_randn(&bs, 1, CT_FLOAT32, NULL), true);
    ct_conv_opts o = ct_conv_defaults();
    o.padding[0] = o.padding[1] = 1;
    o.groups = 2;
    ct_tensor *y = ct_conv2d(x, w, b, &o);
    ct_backward(ct_sum(ct_mul(y, y)), NULL, false);
    out[0] = ct_keep(y);
    out[1] = ct_keep(ct_clone(ct_grad(x)));
    out[2] = ct_keep(ct_clone(ct_grad(w)));
    out[3] = ct_keep(ct_clone(ct_grad(b)));
    /* depthwise (the direct loops) */
    const int64_t wd[4] = {8, 1, 3, 3};
    ct_tensor *x2 = ct_requires_grad_(ct_narrow(ct_randn(xs, 4, CT_FLOAT32, NULL), 1, 0, 8), true);
    ct_tensor *w2 = ct_requires_grad_(ct_randn(wd, 4, CT_FLOAT32, NULL), true);
    o.groups = 8;
    ct_tensor *y2 = ct_conv2d(ct_detach(x2), w2, NULL, &o);
    ct_backward(ct_sum(ct_mul(y2, y2)), NULL, false);
    out[4] = ct_keep(y2);
    out[5] = ct_keep(ct_clone(ct_grad(w2)));
}

static void test_conv_threads(void)
{
    CHECK_THREAD_INVARIANT(conv_thread_compute, 6);
}

void test_conv(void)
{
    RUN(test_conv_golden);
    RUN(test_conv_gradcheck);
    RUN(test_conv_grad_fn);
    RUN(test_conv_module_init);
    RUN(test_conv_module_forward);
    RUN(test_conv_errors);
    RUN(test_conv_threads);
}
