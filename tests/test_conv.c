/* tests/test_conv.c - convolutions, F.unfold / F.fold and the conv modules against PyTorch
 * (tests/golden/conv_golden.h from tools/gen_golden_conv.py, tests/golden/conv3_golden.h
 * from tools/gen_golden_conv3.py): outputs and gradients of conv1d/2d/3d and
 * conv_transpose1d/2d/3d over every option, unfold/fold, padding_mode, gradcheck and
 * gradgradcheck (double backward), initial weights bit for bit, errors in PyTorch's words,
 * thread invariance.
 */
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

#include "golden/conv_golden.h"
#include "golden/conv3_golden.h"

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
static ct_tensor *conv_layout_input(const int64_t *shape, int nd, int layout, ct_dtype dtype)
{
    int64_t s[5];
    memcpy(s, shape, sizeof(int64_t) * (size_t)nd);
    if (layout == 1) {
        int64_t t = s[nd - 1];
        s[nd - 1] = s[nd - 2];
        s[nd - 2] = t;
    } else if (layout == 2) {
        s[nd - 1] *= 2;
    }
    ct_tensor *base = ct_to_dtype(conv_values(s, nd, 0.3, 1.5), dtype);
    if (layout == 1) {
        return ct_transpose(base, -1, -2);
    }
    if (layout == 2) {
        return ct_slice(base, -1, 0, s[nd - 1], 2);
    }
    return base;
}

static ct_tensor *conv_input(const conv_golden *c)
{
    return conv_layout_input(c->xshape, c->xnd, c->layout, c->dtype);
}

/* Options from a golden case's arrays (dims entries each). */
static ct_conv_opts conv_opts_from(int dims, const int64_t *stride, const int64_t *padding,
                                   const int64_t *dilation, const int64_t *output_padding,
                                   int padding_type, int64_t groups)
{
    ct_conv_opts o = ct_conv_defaults();
    for (int d = 0; d < dims; d++) {
        o.stride[d] = stride[d];
        o.padding[d] = padding[d];
        o.dilation[d] = dilation[d];
        o.output_padding[d] = output_padding[d];
    }
    o.padding_type = (ct_conv_padding)padding_type;
    o.groups = groups;
    return o;
}

static ct_conv_opts conv_opts_of(const conv_golden *c)
{
    return conv_opts_from(2, c->stride, c->padding, c->dilation, c->output_padding,
                          c->padding_type, c->groups);
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

/* y against PyTorch's output, then the gradients of sum(y * conv_grad_out(y)) of in[k]
   against want[k] (want[k] NULL: no gradient). */
static void conv_check_result(const char *name, ct_dtype dt, ct_tensor *y, const int64_t *oshape,
                              int ond, const double *out, ct_tensor *const *in,
                              const double *const *want, int n)
{
    double rtol = 1e-9, atol = 1e-10;
    if (dt == CT_FLOAT32) {
        rtol = 1e-5;
        atol = 1e-5;
    } else if (dt == CT_FLOAT16 || dt == CT_BFLOAT16) {
        rtol = 2e-2;
        atol = 2e-2;
    }
    CHECK_MSG(y != NULL, "%s: %s", name, ct_error() ? ct_error() : "?");
    if (!y) {
        return;
    }
    CHECK_MSG(ct_test_has_shape(y, oshape, ond), "%s: output shape", name);
    CHECK_MSG(CHECK_TENSOR(y, out, ct_numel(y), rtol, atol), "%s: output", name);
    CHECK(ct_backward(ct_sum(ct_mul(y, conv_grad_out(y))), NULL, false) == CT_OK);
    for (int k = 0; k < n; k++) {
        if (want[k]) {
            CHECK_MSG(CHECK_TENSOR(ct_grad(in[k]), want[k], ct_numel(in[k]), rtol, atol),
                      "%s: grad of input %d", name, k);
        } else {
            CHECK_MSG(ct_grad(in[k]) == NULL, "%s: grad of input %d", name, k);
        }
    }
}

/* The golden weight and bias (requiring grad) of a convolution case. */
static void conv_params(const int64_t *ws, int wnd, int64_t bs, ct_dtype dt, ct_tensor **w,
                        ct_tensor **b)
{
    *w = ct_requires_grad_(ct_to_dtype(conv_values(ws, wnd, 1.1, 0.75), dt), true);
    *b = ct_requires_grad_(ct_to_dtype(conv_values(&bs, 1, 2.0, 1.5), dt), true);
}

static void conv_check_case(const conv_golden *c)
{
    ct_scope_begin();
    ct_tensor *in[3] = {ct_requires_grad_(conv_input(c), true), NULL, NULL};
    conv_params(c->wshape, c->wnd, c->kind >= 2 ? c->wshape[1] * c->groups : c->wshape[0],
                c->dtype, &in[1], &in[2]);
    ct_conv_opts o = conv_opts_of(c);
    ct_tensor *y = conv_fns[c->kind](in[0], in[1], c->bias ? in[2] : NULL, &o);
    const double *want[3] = {c->gx, c->gw, c->bias ? c->gb : NULL};
    conv_check_result(c->name, c->dtype, y, c->oshape, c->ond, c->out, in, want, 3);
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
/* m's float32 weight and bias equal PyTorch's initial values bit for bit; frees m. */
static void conv_check_init_values(const char *name, ct_module *m, const double *gw, int64_t wn,
                                   const double *gb, int64_t bn)
{
    const ct_tensor *w = m ? ct_module_get_parameter(m, "weight") : NULL;
    const ct_tensor *b = m ? ct_module_get_parameter(m, "bias") : NULL;
    CHECK_MSG(w && b && ct_numel(w) == wn && ct_numel(b) == bn, "%s: parameters", name);
    if (w && b && ct_numel(w) == wn && ct_numel(b) == bn) {
        const float *wd = (const float *)ct_data_ptr(w), *bd = (const float *)ct_data_ptr(b);
        for (int64_t k = 0; k < wn; k++) {
            CHECK_MSG(wd[k] == (float)gw[k], "%s weight[%lld] %.9g != %.9g", name,
                      (long long)k, wd[k], gw[k]);
        }
        for (int64_t k = 0; k < bn; k++) {
            CHECK_MSG(bd[k] == (float)gb[k], "%s bias[%lld]", name, (long long)k);
        }
    }
    ct_module_free(m);
}

static void conv_check_init(const char *name, ct_module *m)
{
    const conv_init_golden *g = NULL;
    for (size_t k = 0; k < sizeof conv_inits / sizeof conv_inits[0]; k++) {
        if (strcmp(conv_inits[k].name, name) == 0) {
            g = &conv_inits[k];
        }
    }
    CHECK(g != NULL);
    if (g) {
        conv_check_init_values(name, m, g->w, g->wn, g->b, g->bn);
    }
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
    ct_manual_seed(5);
    conv_check_init_values("conv3d", ct_conv3d_new(4, 6, 2, 3, 2, &o), init_conv3d_w,
                           (int64_t)(sizeof init_conv3d_w / sizeof(double)), init_conv3d_b, 6);
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

/* ---- 3-D, unfold / fold, padding_mode against PyTorch ------------------------------------- */
static void test_conv3_golden(void)
{
    for (size_t k = 0; k < sizeof conv3_cases / sizeof conv3_cases[0]; k++) {
        const conv3_golden *c = &conv3_cases[k];
        ct_scope_begin();
        ct_tensor *x = conv_layout_input(c->xshape, c->xnd, c->layout, c->dtype);
        ct_tensor *in[3] = {ct_requires_grad_(x, true), NULL, NULL};
        conv_params(c->wshape, 5, c->kind ? c->wshape[1] * c->groups : c->wshape[0], c->dtype,
                    &in[1], &in[2]);
        ct_conv_opts o = conv_opts_from(3, c->stride, c->padding, c->dilation,
                                        c->output_padding, c->padding_type, c->groups);
        ct_tensor *b = c->bias ? in[2] : NULL;
        ct_tensor *y = c->kind ? ct_conv_transpose3d(in[0], in[1], b, &o)
                               : ct_conv3d(in[0], in[1], b, &o);
        const double *want[3] = {c->gx, c->gw, c->bias ? c->gb : NULL};
        conv_check_result(c->name, c->dtype, y, c->oshape, c->ond, c->out, in, want, 3);
        ct_scope_end();
        ct_error_clear();
    }
}

static ct_fold_opts fold_opts_of(const int64_t *dilation, const int64_t *padding,
                                 const int64_t *stride)
{
    ct_fold_opts o = ct_fold_defaults();
    for (int d = 0; d < 2; d++) {
        o.dilation[d] = dilation[d];
        o.padding[d] = padding[d];
        o.stride[d] = stride[d];
    }
    return o;
}

static void test_fold_golden(void)
{
    for (size_t k = 0; k < sizeof fold_cases / sizeof fold_cases[0]; k++) {
        const fold_golden *f = &fold_cases[k];
        ct_scope_begin();
        ct_tensor *x = conv_layout_input(f->xshape, f->xnd, f->layout, f->dtype);
        ct_requires_grad_(x, true);
        ct_fold_opts o = fold_opts_of(f->dilation, f->padding, f->stride);
        ct_tensor *y = f->kind ? ct_fold(x, f->output_size, f->kernel, &o)
                               : ct_unfold(x, f->kernel, &o);
        const double *want[1] = {f->gx};
        conv_check_result(f->name, f->dtype, y, f->oshape, f->ond, f->out, &x, want, 1);
        ct_scope_end();
        ct_error_clear();
    }
}

/* The module of a padding_mode case, float64, its parameters drawn after seed. */
static ct_module *conv_mode_module(const conv_mode_golden *c)
{
    ct_conv_opts o = ct_conv_defaults();
    for (int d = 0; d < 3; d++) {
        o.padding[d] = c->padding[d];
        o.stride[d] = c->dims > d ? c->stride[d] : 1;
        o.dilation[d] = c->dims > d ? c->dilation[d] : 1;
    }
    o.padding_type = (ct_conv_padding)c->padding_type;
    o.padding_mode = (ct_conv_padding_mode)c->padding_mode;
    ct_manual_seed(c->seed);
    const int64_t *k = c->kernel;
    ct_module *m = c->dims == 1   ? ct_conv1d_new(c->cin, c->cout, k[0], &o)
                   : c->dims == 2 ? ct_conv2d_new(c->cin, c->cout, k[0], k[1], &o)
                                  : ct_conv3d_new(c->cin, c->cout, k[0], k[1], k[2], &o);
    return ct_module_to(m, CT_FLOAT64);
}

static void test_conv_padding_mode(void)
{
    for (size_t k = 0; k < sizeof conv_mode_cases / sizeof conv_mode_cases[0]; k++) {
        const conv_mode_golden *c = &conv_mode_cases[k];
        ct_scope_begin();
        ct_module *m = conv_mode_module(c);
        ct_tensor *in[3] = {ct_requires_grad_(conv_values(c->xshape, c->xnd, 0.3, 1.5), true),
                            m ? ct_module_get_parameter(m, "weight") : NULL,
                            m ? ct_module_get_parameter(m, "bias") : NULL};
        CHECK_MSG(m != NULL, "%s: %s", c->name, ct_error() ? ct_error() : "?");
        if (m) {
            ct_tensor *y = ct_module_forward(m, in[0]);
            const double *want[3] = {c->gx, c->gw, c->gb};
            conv_check_result(c->name, CT_FLOAT64, y, c->oshape, c->ond, c->out, in, want, 3);
        }
        ct_module_free(m);
        ct_scope_end();
        ct_error_clear();
    }
}

/* ---- gradcheck and gradgradcheck of the new ops --------------------------------------------- */
typedef struct conv_gg {
    int kind; /* conv_fns index, 4 conv3d, 5 conv_transpose3d, 6 unfold, 7 fold */
    ct_conv_opts o;
    ct_fold_opts f;
    int64_t k[2], size[2];
} conv_gg;

static ct_tensor *conv_gg_apply(const conv_gg *g, ct_tensor *const *in, int n)
{
    const ct_tensor *b = n > 2 ? in[2] : NULL;
    switch (g->kind) {
    case 4:
        return ct_conv3d(in[0], in[1], b, &g->o);
    case 5:
        return ct_conv_transpose3d(in[0], in[1], b, &g->o);
    case 6:
        return ct_unfold(in[0], g->k, &g->f);
    case 7:
        return ct_fold(in[0], g->size, g->k, &g->f);
    default:
        return conv_fns[g->kind](in[0], in[1], b, &g->o);
    }
}

static ct_tensor *gc_conv_gg(ct_tensor *const *in, int n, void *user)
{
    return conv_gg_apply((const conv_gg *)user, in, n);
}

/* The gradients of sum(op(in...) * gy) with respect to in[0..n-2] (create_graph),
   flattened and concatenated; the last input is gy. */
static ct_tensor *gc_conv_double(ct_tensor *const *in, int n, void *user)
{
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = conv_gg_apply((const conv_gg *)user, in, n - 1);
    const ct_tensor *go[1] = {in[n - 1]};
    ct_tensor *g[3] = {NULL, NULL, NULL};
    ct_tensor *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, n - 1, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[3];
        for (int k = 0; k < n - 1; k++) {
            parts[k] = ct_flatten(g[k], 0, -1);
        }
        out = ct_cat(parts, n - 1, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

/* gradcheck of the op, then of its gradients (double backward), over random float64
   inputs of shapes xs and ws (wnd 0: no weight) and nbias (0: no bias). */
static void conv_gg_check(const char *label, const conv_gg *g, const int64_t *xs, int xnd,
                          const int64_t *ws, int wnd, int64_t nbias)
{
    ct_scope_begin();
    ct_tensor *in[4];
    int n = 0;
    in[n++] = ct_requires_grad_(ct_randn(xs, xnd, CT_FLOAT64, NULL), true);
    if (wnd > 0) {
        in[n++] = ct_requires_grad_(ct_randn(ws, wnd, CT_FLOAT64, NULL), true);
    }
    if (nbias > 0) {
        in[n++] = ct_requires_grad_(ct_randn(&nbias, 1, CT_FLOAT64, NULL), true);
    }
    CHECK_MSG(ct_gradcheck(gc_conv_gg, in, n, (void *)(uintptr_t)g, NULL), "gradcheck %s: %s",
              label, ct_error() ? ct_error() : "?");
    ct_error_clear();
    ct_tensor *y = conv_gg_apply(g, in, n);
    in[n] = ct_requires_grad_(ct_randn(ct_sizes(y), ct_dim(y), CT_FLOAT64, NULL), true);
    CHECK_MSG(y && ct_gradcheck(gc_conv_double, in, n + 1, (void *)(uintptr_t)g, NULL),
              "gradgradcheck %s: %s", label, ct_error() ? ct_error() : "?");
    ct_error_clear();
    ct_scope_end();
}

static void test_conv_gradgradcheck(void)
{
    ct_manual_seed(4);
    conv_gg g;
    memset(&g, 0, sizeof g);
    g.o = ct_conv_defaults();
    g.o.stride[0] = 2;
    g.o.padding[1] = 1;
    g.o.dilation[1] = 2;
    g.o.groups = 2;
    g.kind = 1;
    const int64_t x2[4] = {2, 4, 5, 4}, w2[4] = {4, 2, 2, 2}, wt2[4] = {4, 1, 2, 2};
    conv_gg_check("conv2d", &g, x2, 4, w2, 4, 4);
    g.kind = 3;
    g.o.output_padding[0] = 1;
    conv_gg_check("conv_transpose2d", &g, x2, 4, wt2, 4, 2);
    const int64_t x1[3] = {2, 2, 5}, w1[3] = {3, 2, 2}, wt1[3] = {2, 3, 3};
    g.o = ct_conv_defaults();
    g.o.padding_type = CT_CONV_PADDING_SAME;
    g.kind = 0;
    conv_gg_check("conv1d same", &g, x1, 3, w1, 3, 3);
    g.o = ct_conv_defaults();
    g.o.stride[0] = 2;
    g.o.dilation[0] = 3;
    g.o.output_padding[0] = 2; /* >= stride: the transposed op's output is longer */
    g.kind = 2;
    conv_gg_check("conv_transpose1d", &g, x1, 3, wt1, 3, 3);
    const int64_t x3[5] = {2, 2, 3, 3, 2}, w3[5] = {2, 1, 2, 2, 1}, x3u[4] = {2, 2, 3, 2};
    g.o = ct_conv_defaults();
    g.o.groups = 2;
    g.o.padding[2] = 1;
    g.o.stride[1] = 2;
    g.kind = 4;
    conv_gg_check("conv3d depthwise", &g, x3, 5, w3, 5, 2);
    g.kind = 5;
    g.o.padding[2] = 0;
    g.o.output_padding[1] = 1;
    conv_gg_check("conv_transpose3d", &g, x3, 5, w3, 5, 2);
    g.o = ct_conv_defaults();
    g.o.groups = 2;
    g.kind = 4;
    conv_gg_check("conv3d unbatched", &g, x3u, 4, w3, 5, 0);
    const int64_t xd[4] = {1, 3, 4, 4}, wd[4] = {3, 1, 3, 3}, w11[4] = {2, 3, 1, 1};
    g.o.groups = 3;
    g.kind = 1;
    conv_gg_check("depthwise 2d", &g, xd, 4, wd, 4, 3);
    g.o.groups = 1;
    conv_gg_check("1x1", &g, xd, 4, w11, 4, 0);
    g.kind = 6;
    g.k[0] = 2;
    g.k[1] = 3;
    g.f = ct_fold_defaults();
    g.f.padding[1] = 1;
    g.f.stride[0] = 2;
    conv_gg_check("unfold", &g, xd, 4, NULL, 0, 0);
    const int64_t xf[3] = {2, 12, 6};
    g.kind = 7;
    g.size[0] = 4;
    g.size[1] = 3;
    conv_gg_check("fold", &g, xf, 3, NULL, 0, 0);
}

/* gradcheck of a padding_mode module's forward (float64) with respect to its input. */
static ct_tensor *gc_conv_module(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_module_forward((ct_module *)user, in[0]);
}

static void test_conv_padding_mode_gradcheck(void)
{
    for (size_t k = 0; k < sizeof conv_mode_cases / sizeof conv_mode_cases[0]; k += 3) {
        const conv_mode_golden *c = &conv_mode_cases[k];
        ct_scope_begin();
        ct_module *m = conv_mode_module(c);
        ct_tensor *x = ct_requires_grad_(conv_values(c->xshape, c->xnd, 0.3, 1.5), true);
        CHECK_MSG(m && ct_gradcheck(gc_conv_module, &x, 1, m, NULL), "gradcheck %s: %s",
                  c->name, ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_module_free(m);
        ct_scope_end();
    }
}

static void test_conv3_errors(void)
{
    ct_scope_begin();
    const int64_t x4[4] = {2, 3, 2, 2}, x5[5] = {2, 3, 2, 2, 2}, w5[5] = {4, 3, 3, 3, 3};
    const int64_t wt5[5] = {3, 4, 3, 3, 3}, xt1[3] = {2, 3, 5}, wt1[3] = {3, 4, 3};
    ct_tensor *w = ct_zeros(w5, 5, CT_FLOAT32);
    CHECK(ct_conv3d(ct_zeros(x4, 4, CT_FLOAT32), w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given groups=1, weight of size [4, 3, 3, 3, 3], expected "
                "input[1, 2, 3, 2, 2] to have 3 channels, but got 2 channels instead");
    CHECK(ct_conv3d(ct_zeros(x5, 5, CT_FLOAT32), w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Calculated padded input size per channel: (2 x 2 x 2). Kernel "
                "size: (3 x 3 x 3). Kernel size can't be greater than actual input size");
    CHECK(ct_conv3d(ct_zeros(xt1, 3, CT_FLOAT32), w, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got "
                "input of size: [2, 3, 5]");
    ct_conv_opts o = ct_conv_defaults();
    o.stride[0] = o.stride[1] = o.stride[2] = 2;
    o.output_padding[0] = o.output_padding[1] = o.output_padding[2] = 2;
    CHECK(ct_conv_transpose3d(ct_zeros(x5, 5, CT_FLOAT32), ct_zeros(wt5, 5, CT_FLOAT32), NULL,
                              &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "output padding must be smaller than either stride or dilation, "
                "but got output_padding_depth: 2 output_padding_height: 2 output_padding_width: "
                "2 stride_depth: 2 stride_height: 2 stride_width: 2 dilation_depth: 1 "
                "dilation_height: 1 dilation_width: 1");
    o.output_padding[0] = 2;
    CHECK(ct_conv_transpose1d(ct_zeros(xt1, 3, CT_FLOAT32), ct_zeros(wt1, 3, CT_FLOAT32), NULL,
                              &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "but got output_padding_height: 0 output_padding_width: 2 "
                "stride_height: 1 stride_width: 2 dilation_height: 1 dilation_width: 1");
    o = ct_conv_defaults();
    o.padding_type = CT_CONV_PADDING_SAME;
    CHECK(ct_conv_transpose3d(ct_zeros(x5, 5, CT_FLOAT32), ct_zeros(wt5, 5, CT_FLOAT32), NULL,
                              &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "conv_transpose3d(): argument 'padding' must be tuple of ints, "
                "not str");
    CHECK(ct_conv3d_new(4, 6, 2, 0, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "kernel_size must be positive");
    ct_module *m = ct_conv3d_new(3, 4, 1, 1, 1, NULL);
    const int64_t y5[5] = {2, 4, 2, 2, 2};
    CHECK(ct_test_has_shape(ct_conv3d_forward(m, ct_zeros(x5, 5, CT_FLOAT32)), y5, 5));
    CHECK(strcmp(ct_module_name(m), "Conv3d") == 0);
    CHECK(ct_conv2d_forward(m, ct_zeros(x5, 5, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected a Conv2d module, got Conv3d");
    ct_module_free(m);
    ct_scope_end();
}

static void test_fold_errors(void)
{
    ct_scope_begin();
    const int64_t x4[4] = {2, 3, 4, 7}, x5[5] = {2, 3, 4, 4, 4};
    const int64_t k0[2] = {0, 2}, k5[2] = {5, 5}, k2[2] = {2, 2}, o44[2] = {4, 4};
    const int64_t c9[3] = {2, 12, 9}, c8[3] = {2, 12, 8}, c13[3] = {2, 13, 9}, e[3] = {2, 12, 0};
    ct_tensor *x = ct_zeros(x4, 4, CT_FLOAT32);
    CHECK(ct_unfold(x, k0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "kernel size should be greater than zero, but got kernel_height: 0 "
                "kernel_width: 2");
    ct_fold_opts o = ct_fold_defaults();
    o.stride[1] = 0;
    o.padding[0] = -1;
    CHECK(ct_unfold(x, k2, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "padding should be non-negative, but got pad_height: -1 "
                "pad_width: 0");
    CHECK(ct_fold(ct_zeros(c9, 3, CT_FLOAT32), o44, k2, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "stride should be greater than zero, but got stride_height: 1 "
                "stride_width: 0");
    o = ct_fold_defaults();
    o.dilation[0] = 0;
    CHECK(ct_unfold(x, k2, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "dilation should be greater than zero, but got dilation_height: 0 "
                "dilation_width: 1");
    CHECK(ct_unfold(ct_zeros(x5, 5, CT_FLOAT32), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                "and other non-zero dimensions for input, but got: [2, 3, 4, 4, 4]");
    CHECK(ct_unfold(x, k5, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given input with spatial size (4, 7), kernel_size=(5, 5), "
                "dilation=(1, 1), padding=(0, 0), calculated shape of the array of sliding "
                "blocks as (0, 3), but its components must be at least one.");
    const int64_t u[2] = {12, 9}, xu[3] = {3, 4, 4}; /* unbatched */
    CHECK(ct_test_has_shape(ct_unfold(ct_zeros(xu, 3, CT_FLOAT32), k2, NULL), u, 2));
    CHECK(ct_test_has_shape(ct_fold(ct_zeros(u, 2, CT_FLOAT32), o44, k2, NULL), xu, 3));
    CHECK(ct_fold(ct_zeros(c8, 3, CT_FLOAT32), o44, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given output_size=(4, 4), kernel_size=(2, 2), dilation=(1, 1), "
                "padding=(0, 0), stride=(1, 1), expected size of input's dimension 2 to match "
                "the calculated number of sliding blocks 3 * 3 = 9, but got input.size(2)=8.");
    CHECK(ct_fold(ct_zeros(c13, 3, CT_FLOAT32), o44, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected size of input's dimension 1 to be divisible by the "
                "product of kernel_size, but got input.size(1)=13 and kernel_size=(2, 2).");
    CHECK(ct_fold(ct_zeros(e, 3, CT_FLOAT32), o44, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                "batch size and non-zero dimensions for input, but got: [2, 12, 0]");
    CHECK(ct_fold(ct_zeros(x4, 4, CT_FLOAT32), o44, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "but got: [2, 3, 4, 7]");
    CHECK(ct_unfold(ct_zeros(x4, 4, CT_INT32), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "not implemented for 'Int'");
    CHECK(ct_unfold(x, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "argument is NULL");
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
    /* 3-D, strided, grouped */
    const int64_t x3[5] = {5, 4, 5, 6, 7}, w3[5] = {6, 2, 3, 2, 3};
    ct_tensor *x5 = ct_requires_grad_(ct_randn(x3, 5, CT_FLOAT32, NULL), true);
    ct_tensor *w5 = ct_requires_grad_(ct_randn(w3, 5, CT_FLOAT32, NULL), true);
    o = ct_conv_defaults();
    o.stride[2] = 2;
    o.padding[0] = 1;
    o.groups = 2;
    ct_tensor *y3 = ct_conv3d(x5, w5, NULL, &o);
    ct_backward(ct_sum(ct_mul(y3, y3)), NULL, false);
    out[6] = ct_keep(y3);
    out[7] = ct_keep(ct_clone(ct_grad(x5)));
    out[8] = ct_keep(ct_clone(ct_grad(w5)));
}

static void test_conv_threads(void)
{
    CHECK_THREAD_INVARIANT(conv_thread_compute, 9);
}

void test_conv(void)
{
    RUN(test_conv_golden);
    RUN(test_conv_gradcheck);
    RUN(test_conv_grad_fn);
    RUN(test_conv_module_init);
    RUN(test_conv_module_forward);
    RUN(test_conv_errors);
    RUN(test_conv3_golden);
    RUN(test_fold_golden);
    RUN(test_conv_padding_mode);
    RUN(test_conv_gradgradcheck);
    RUN(test_conv_padding_mode_gradcheck);
    RUN(test_conv3_errors);
    RUN(test_fold_errors);
    RUN(test_conv_threads);
}
