/* tests/test_pool.c - pooling (1-D, 2-D, 3-D), padding, interpolation and pixel shuffle:
 * PyTorch's outputs, indices and gradients (tools/gen_golden_pool.py,
 * tests/golden/pool_golden.h) on contiguous, transposed and step-sliced inputs in every dtype,
 * gradcheck and gradgradcheck, PyTorch's errors, the modules, and results independent of the
 * thread count.
 */
#include "test.h"

#include <stdlib.h>

typedef struct pool_golden {
    const char *op;
    ct_dtype dtype;
    int how; /* 0 contiguous, 1 the base's last two dims transposed, 2 every other element */
    int64_t p[16];
    double f[2];
    int bnd;
    int64_t base_shape[5];
    int ond;
    int64_t out_shape[5];
    const double *x, *out, *grad, *idx;
} pool_golden;
#include "golden/pool_golden.h"

#define N_CASES ((int)(sizeof pool_golden_cases / sizeof pool_golden_cases[0]))

/* The case's input: its base in the case's dtype, then transposed or stepped. */
static ct_tensor *case_input(const pool_golden *g)
{
    ct_tensor *b = ct_to_dtype(ct_tensor_from_data(g->x, CT_FLOAT64, g->base_shape, g->bnd),
                               g->dtype);
    if (g->how == 1) {
        return ct_transpose(b, -1, -2);
    }
    if (g->how == 2) {
        int64_t s[6];
        memcpy(s, g->base_shape, sizeof(int64_t) * (size_t)g->bnd);
        s[g->bnd - 1] /= 2;
        s[g->bnd] = 2;
        return ct_select(ct_reshape(b, s, g->bnd + 1), -1, 0);
    }
    return b;
}

/* A case's pooling options (n of each array used). */
typedef struct pool_opts {
    int64_t stride[3], padding[3], dilation[3], divisor_override;
    bool ceil_mode, count_include_pad;
} pool_opts;

/* max_pool{n}d with o on kernel k (max_pool1d: no indices). */
static ct_tensor *run_max(const ct_tensor *x, const int64_t *k, int n, const pool_opts *o,
                          ct_tensor **indices)
{
    ct_max_pool2d_opts o2 = ct_max_pool2d_defaults();
    ct_max_pool3d_opts o3 = ct_max_pool3d_defaults();
    memcpy(o2.stride, o->stride, sizeof o2.stride);
    memcpy(o2.padding, o->padding, sizeof o2.padding);
    memcpy(o2.dilation, o->dilation, sizeof o2.dilation);
    memcpy(o3.stride, o->stride, sizeof o3.stride);
    memcpy(o3.padding, o->padding, sizeof o3.padding);
    memcpy(o3.dilation, o->dilation, sizeof o3.dilation);
    o2.ceil_mode = o3.ceil_mode = o->ceil_mode;
    ct_tensor *y = NULL;
    if (n == 1) {
        return ct_max_pool1d(x, k[0], &o2);
    }
    if (n == 2) {
        ct_max_pool2d_with_indices(x, k, &o2, &y, indices);
    } else {
        ct_max_pool3d_with_indices(x, k, &o3, &y, indices);
    }
    return y;
}

/* avg_pool{n}d with o on kernel k (avg_pool1d: no divisor_override). */
static ct_tensor *run_avg(const ct_tensor *x, const int64_t *k, int n, const pool_opts *o)
{
    ct_avg_pool2d_opts o2 = ct_avg_pool2d_defaults();
    ct_avg_pool3d_opts o3 = ct_avg_pool3d_defaults();
    memcpy(o2.stride, o->stride, sizeof o2.stride);
    memcpy(o2.padding, o->padding, sizeof o2.padding);
    memcpy(o3.stride, o->stride, sizeof o3.stride);
    memcpy(o3.padding, o->padding, sizeof o3.padding);
    o2.ceil_mode = o3.ceil_mode = o->ceil_mode;
    o2.count_include_pad = o3.count_include_pad = o->count_include_pad;
    o2.divisor_override = o3.divisor_override = n == 1 ? 0 : o->divisor_override;
    return n == 1 ? ct_avg_pool1d(x, k[0], &o2)
                  : n == 2 ? ct_avg_pool2d(x, k, &o2) : ct_avg_pool3d(x, k, &o3);
}

/* Runs the case's op; *indices receives max's indices where the op has them. */
static ct_tensor *run_op(const pool_golden *g, const ct_tensor *x, ct_tensor **indices)
{
    const int64_t *p = g->p;
    const char *op = g->op;
    *indices = NULL;
    if (!strncmp(op, "max_pool", 8) || !strncmp(op, "avg_pool", 8)) {
        int n = op[8] - '0';
        pool_opts o;
        memset(&o, 0, sizeof o);
        for (int a = 0; a < n; a++) { /* k, s, p, then max: d, ceil; avg: ceil, cip, div */
            o.stride[a] = p[n + a];
            o.padding[a] = p[2 * n + a];
            o.dilation[a] = op[0] == 'm' ? p[3 * n + a] : 1;
        }
        o.ceil_mode = p[op[0] == 'm' ? 4 * n : 3 * n] != 0;
        o.count_include_pad = p[3 * n + 1] != 0;
        o.divisor_override = p[3 * n + 2];
        return op[0] == 'm' ? run_max(x, p, n, &o, indices) : run_avg(x, p, n, &o);
    }
    if (!strcmp(op, "adaptive_avg_pool2d")) {
        return ct_adaptive_avg_pool2d(x, p);
    }
    if (!strcmp(op, "adaptive_max_pool2d")) {
        return ct_adaptive_max_pool2d(x, p, indices);
    }
    if (!strncmp(op, "max_unpool", 10)) { /* of max_pool's output and indices */
        int n = op[10] - '0';
        pool_opts o;
        memset(&o, 0, sizeof o);
        memcpy(o.stride, p + n, sizeof(int64_t) * (size_t)n);
        memcpy(o.padding, p + 2 * n, sizeof(int64_t) * (size_t)n);
        o.dilation[0] = o.dilation[1] = o.dilation[2] = 1;
        ct_tensor *i = NULL, *y = run_max(x, p, n, &o, &i);
        const int64_t *os = p[3 * n] ? p + 3 * n : NULL;
        return n == 2 ? ct_max_unpool2d(y, i, p, p + n, p + 2 * n, os)
                      : ct_max_unpool3d(y, i, p, p + n, p + 2 * n, os);
    }
    if (!strncmp(op, "lp_pool", 7)) { /* k, s (0: the kernel), ceil; f[0] the norm */
        int n = op[7] - '0';
        bool ceil = p[2 * n] != 0;
        return n == 1   ? ct_lp_pool1d(x, g->f[0], p[0], p[1], ceil)
               : n == 2 ? ct_lp_pool2d(x, g->f[0], p, p + 2, ceil)
                        : ct_lp_pool3d(x, g->f[0], p, p + 3, ceil);
    }
    if (!strcmp(op, "adaptive_avg_pool3d")) {
        return ct_adaptive_avg_pool3d(x, p);
    }
    if (!strcmp(op, "adaptive_max_pool3d")) {
        return ct_adaptive_max_pool3d(x, p, indices);
    }
    if (!strcmp(op, "adaptive_avg_pool1d")) {
        return ct_adaptive_avg_pool1d(x, p[0]);
    }
    if (!strcmp(op, "pad")) {
        return ct_pad(x, p + 2, (int)p[1], (ct_pad_mode)p[0], g->f[0]);
    }
    if (!strcmp(op, "interpolate")) {
        ct_interpolate_opts o;
        memset(&o, 0, sizeof o);
        o.mode = (ct_interpolate_mode)p[0];
        o.size[0] = p[1];
        o.size[1] = p[2];
        o.scale_factor[0] = p[1] ? 0 : g->f[0];
        o.scale_factor[1] = p[1] ? 0 : g->f[1];
        o.align_corners = p[3] != 0;
        return ct_interpolate(x, &o);
    }
    return !strcmp(op, "pixel_shuffle") ? ct_pixel_shuffle(x, p[0]) : ct_pixel_unshuffle(x, p[0]);
}

static double case_rtol(ct_dtype d)
{
    return d == CT_FLOAT64 ? 1e-12 : d == CT_FLOAT32 ? 2e-6 : d == CT_FLOAT16 ? 1e-3 : 8e-3;
}

/* out, indices and the gradient of sum(out * w), w[k] = k % 7 - 3. */
static void check_case(int k, const pool_golden *g)
{
    ct_tensor *x = case_input(g), *ix = NULL;
    ct_requires_grad_(x, true);
    ct_tensor *y = run_op(g, x, &ix);
    CHECK_MSG(ct_test_has_shape(y, g->out_shape, g->ond), "case %d %s: shape (%s)", k, g->op,
              ct_error() ? ct_error() : "");
    if (!ct_test_has_shape(y, g->out_shape, g->ond)) {
        ct_error_clear();
        return;
    }
    CHECK(ct_tensor_dtype(y) == g->dtype);
    int64_t n = ct_test_numel(g->out_shape, g->ond);
    double rtol = case_rtol(g->dtype), atol = g->dtype == CT_FLOAT64 ? 1e-13 : 1e-6;
    CHECK_MSG(CHECK_TENSOR(y, g->out, n, rtol, atol), "case %d %s: output", k, g->op);
    if (g->idx) {
        CHECK_MSG(ix && ct_tensor_dtype(ix) == CT_INT64 && CHECK_TENSOR(ix, g->idx, n, 0, 0),
                  "case %d %s: indices", k, g->op);
    }
    double *wv = (double *)malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        wv[i] = (double)(i % 7 - 3);
    }
    ct_tensor *w = ct_to_dtype(ct_tensor_from_data(wv, CT_FLOAT64, g->out_shape, g->ond), g->dtype);
    free(wv);
    CHECK(ct_backward(ct_sum(ct_mul(y, w)), NULL, false) == CT_OK);
    CHECK_MSG(CHECK_TENSOR(ct_grad(x), g->grad, ct_numel(x), rtol, atol), "case %d %s: grad", k,
              g->op);
}

static void test_pool_golden(void)
{
    int half = 0;
    for (int k = 0; k < N_CASES; k++) {
        ct_scope_begin();
        check_case(k, &pool_golden_cases[k]);
        half += ct_dtype_size(pool_golden_cases[k].dtype) == 2;
        ct_scope_end();
    }
    CHECK(N_CASES >= 69 && half >= 6);
}

/* The 2x2 fast path keeps PyTorch's rules: the last NaN wins, ties and all -inf keep the
   first (PyTorch: (nan, -inf) at (4, 2); (nan, 5) at (1, 3)); float32 and float64. */
static void test_pool_max_2x2_rules(void)
{
    ct_scope_begin();
    const double v[2][8] = {{1, NAN, -INFINITY, -INFINITY, NAN, 0, -INFINITY, -INFINITY},
                            {3, NAN, 2, 5, 1, 3, 5, 1}};
    const double want[2][2] = {{NAN, -INFINITY}, {NAN, 5}}, want_ix[2][2] = {{4, 2}, {1, 3}};
    const int64_t s[4] = {1, 1, 2, 4}, k2[2] = {2, 2};
    for (int d = 0; d < 2; d++) {
        for (int k = 0; k < 2; k++) {
            ct_tensor *x = ct_to_dtype(ct_tensor_from_data(v[k], CT_FLOAT64, s, 4),
                                       d ? CT_FLOAT64 : CT_FLOAT32);
            ct_tensor *y = NULL, *ix = NULL;
            CHECK(ct_max_pool2d_with_indices(x, k2, NULL, &y, &ix) == CT_OK);
            const double *got = (const double *)ct_data_ptr(ct_to_dtype(y, CT_FLOAT64));
            for (int o = 0; o < 2; o++) { /* NaN and -inf compared as themselves */
                CHECK(isnan(want[k][o]) ? isnan(got[o]) : got[o] == want[k][o]);
            }
            CHECK(CHECK_TENSOR(ix, want_ix[k], 2, 0, 0));
        }
    }
    ct_scope_end();
}

/* The 2x2 path on rows of 3, 14 and 21 outputs (one masked step, one with a masked upper half,
   a full step and a tail) against adaptive max pooling over the same windows (the window walk):
   the same values and indices, bit for bit; values in steps of 1 for ties, some NaN. The
   backward (the 2x2 path writes each window, the other zeroes and scatters) too, on an output
   gradient with some -0 (the scatter's 0 + -0 is +0). */
static void test_pool_max_2x2_wide(void)
{
    const int64_t widths[3] = {6, 28, 42};
    for (int d = 0; d < 2; d++) {
        for (int k = 0; k < 3; k++) {
            ct_scope_begin();
            const int64_t s[4] = {2, 3, 4, widths[k]}, k2[2] = {2, 2}, o[2] = {2, widths[k] / 2};
            ct_tensor *x = ct_floor(ct_mul_scalar(ct_rand(s, 4, CT_FLOAT64, NULL), 4));
            x = ct_to_dtype(ct_masked_fill(x, ct_gt_scalar(ct_rand(s, 4, CT_FLOAT64, NULL), 0.9),
                                           NAN),
                            d ? CT_FLOAT64 : CT_FLOAT32);
            ct_tensor *y = NULL, *ix = NULL, *aix = NULL;
            CHECK(ct_max_pool2d_with_indices(x, k2, NULL, &y, &ix) == CT_OK);
            ct_tensor *ay = ct_adaptive_max_pool2d(x, o, &aix);
            CHECK(ct_test_same_bytes(y, ay) && ct_test_same_bytes(ix, aix));
            ct_tensor *g = ct_randn(ct_sizes(y), 4, ct_tensor_dtype(y), NULL);
            g = ct_where(ct_gt_scalar(g, 1.0), ct_neg(ct_zeros_like(g)), g);
            ct_tensor *xa = ct_requires_grad_(ct_detach(x), true);
            ct_tensor *xb = ct_requires_grad_(ct_clone(ct_detach(x)), true);
            ct_backward(ct_max_pool2d(xa, k2, NULL), g, false);
            ct_backward(ct_adaptive_max_pool2d(xb, o, NULL), g, false);
            CHECK(ct_test_same_bytes(ct_grad(xa), ct_grad(xb)));
            ct_scope_end();
        }
    }
}

/* ---- gradcheck ---------------------------------------------------------------------------- */
/* The function under test: op k of the table below on in[0]. */
typedef ct_tensor *(*pool_fn)(const ct_tensor *x);

static ct_tensor *gc_max_pool2d(const ct_tensor *x)
{
    ct_max_pool2d_opts o = ct_max_pool2d_defaults();
    const int64_t k[2] = {2, 3};
    o.stride[0] = 1;
    o.stride[1] = 2;
    o.padding[1] = 1;
    o.ceil_mode = true;
    return ct_max_pool2d(x, k, &o);
}
static ct_tensor *gc_max_pool2d_dilated(const ct_tensor *x)
{
    ct_max_pool2d_opts o = ct_max_pool2d_defaults();
    const int64_t k[2] = {2, 2};
    o.dilation[0] = 2;
    o.padding[1] = 1;
    return ct_max_pool2d(x, k, &o);
}
/* the 2x2 path (its backward one pass): rows (5) and, transposed, columns (5) left over */
static ct_tensor *gc_max_pool2d_2x2(const ct_tensor *x)
{
    const int64_t k[2] = {2, 2};
    return ct_max_pool2d(x, k, NULL);
}
static ct_tensor *gc_max_pool2d_2x2_t(const ct_tensor *x)
{
    const int64_t k[2] = {2, 2};
    return ct_max_pool2d(ct_transpose(x, -2, -1), k, NULL);
}
static ct_tensor *gc_max_pool1d(const ct_tensor *x)
{
    return ct_max_pool1d(ct_flatten(x, -2, -1), 3, NULL);
}
static ct_tensor *gc_avg_pool2d(const ct_tensor *x)
{
    ct_avg_pool2d_opts o = ct_avg_pool2d_defaults();
    const int64_t k[2] = {3, 2};
    o.padding[0] = 1;
    o.ceil_mode = true;
    o.count_include_pad = false;
    return ct_avg_pool2d(x, k, &o);
}
static ct_tensor *gc_avg_pool2d_divisor(const ct_tensor *x)
{
    ct_avg_pool2d_opts o = ct_avg_pool2d_defaults();
    const int64_t k[2] = {2, 2};
    o.stride[0] = o.stride[1] = 1;
    o.divisor_override = 3;
    return ct_avg_pool2d(x, k, &o);
}
static ct_tensor *gc_avg_pool1d(const ct_tensor *x)
{
    ct_avg_pool2d_opts o = ct_avg_pool2d_defaults();
    o.padding[0] = 1;
    return ct_avg_pool1d(ct_flatten(x, -2, -1), 3, &o);
}
static ct_tensor *gc_adaptive_avg(const ct_tensor *x)
{
    const int64_t o[2] = {3, 2};
    return ct_adaptive_avg_pool2d(x, o);
}
static ct_tensor *gc_adaptive_avg_global(const ct_tensor *x)
{
    const int64_t o[2] = {1, 1};
    return ct_adaptive_avg_pool2d(x, o);
}
static ct_tensor *gc_adaptive_avg1d(const ct_tensor *x)
{
    return ct_adaptive_avg_pool1d(ct_flatten(x, -2, -1), 4);
}
static ct_tensor *gc_adaptive_max(const ct_tensor *x)
{
    const int64_t o[2] = {2, 3};
    return ct_adaptive_max_pool2d(x, o, NULL);
}
static ct_tensor *gc_pad_constant(const ct_tensor *x)
{
    const int64_t p[4] = {2, -1, 1, 1};
    return ct_pad(x, p, 4, CT_PAD_CONSTANT, 0.5);
}
static ct_tensor *gc_pad_reflect(const ct_tensor *x)
{
    const int64_t p[4] = {2, 1, 1, 2};
    return ct_pad(x, p, 4, CT_PAD_REFLECT, 0);
}
static ct_tensor *gc_pad_replicate(const ct_tensor *x)
{
    const int64_t p[2] = {3, -1};
    return ct_pad(ct_flatten(x, -2, -1), p, 2, CT_PAD_REPLICATE, 0);
}
static ct_tensor *gc_pad_circular(const ct_tensor *x)
{
    const int64_t p[4] = {1, 2, 2, -1};
    return ct_pad(x, p, 4, CT_PAD_CIRCULAR, 0);
}
static ct_tensor *gc_interp(const ct_tensor *x, ct_interpolate_mode m, bool align)
{
    ct_interpolate_opts o;
    memset(&o, 0, sizeof o);
    o.mode = m;
    o.align_corners = align;
    o.size[0] = 5;
    o.size[1] = 3;
    if (m == CT_INTERPOLATE_LINEAR) {
        o.size[1] = 0;
        return ct_interpolate(ct_flatten(x, -2, -1), &o);
    }
    return ct_interpolate(x, &o);
}
static ct_tensor *gc_nearest(const ct_tensor *x)
{
    return gc_interp(x, CT_INTERPOLATE_NEAREST, false);
}
static ct_tensor *gc_nearest_exact(const ct_tensor *x)
{
    return gc_interp(x, CT_INTERPOLATE_NEAREST_EXACT, false);
}
static ct_tensor *gc_linear(const ct_tensor *x)
{
    return gc_interp(x, CT_INTERPOLATE_LINEAR, true);
}
static ct_tensor *gc_bilinear(const ct_tensor *x)
{
    return gc_interp(x, CT_INTERPOLATE_BILINEAR, false);
}
static ct_tensor *gc_bilinear_align(const ct_tensor *x)
{
    return gc_interp(x, CT_INTERPOLATE_BILINEAR, true);
}
static ct_tensor *gc_pixel(const ct_tensor *x)
{
    return ct_pixel_unshuffle(ct_pixel_shuffle(ct_narrow(x, -3, 0, 4), 2), 1);
}
static ct_tensor *gc_pixel_unshuffle(const ct_tensor *x)
{
    return ct_pixel_unshuffle(ct_narrow(x, -2, 0, 4), 2);
}

/* The 3-D ops on gc_input() as an unbatched (C, D, H, W) = (2, 4, 5, 4) volume. */
static ct_tensor *gc_max_pool3d(const ct_tensor *x)
{
    ct_max_pool3d_opts o = ct_max_pool3d_defaults();
    const int64_t k[3] = {2, 2, 2};
    o.stride[1] = 2;
    o.stride[0] = o.stride[2] = 1;
    o.padding[0] = o.padding[2] = 1;
    o.dilation[2] = 2;
    o.ceil_mode = true;
    return ct_max_pool3d(x, k, &o);
}
static ct_tensor *gc_avg_pool3d(const ct_tensor *x)
{
    ct_avg_pool3d_opts o = ct_avg_pool3d_defaults();
    const int64_t k[3] = {2, 3, 2};
    o.padding[0] = o.padding[1] = 1;
    o.ceil_mode = true;
    o.count_include_pad = false;
    return ct_avg_pool3d(x, k, &o);
}
static ct_tensor *gc_avg_pool3d_divisor(const ct_tensor *x)
{
    ct_avg_pool3d_opts o = ct_avg_pool3d_defaults();
    const int64_t k[3] = {3, 2, 2};
    o.stride[0] = o.stride[1] = o.stride[2] = 1;
    o.divisor_override = 5;
    return ct_avg_pool3d(x, k, &o);
}
static ct_tensor *gc_adaptive_avg3d(const ct_tensor *x)
{
    const int64_t o[3] = {3, 2, 3};
    return ct_adaptive_avg_pool3d(x, o);
}
static ct_tensor *gc_adaptive_avg3d_global(const ct_tensor *x)
{
    const int64_t o[3] = {1, 1, 1};
    return ct_adaptive_avg_pool3d(x, o);
}
static ct_tensor *gc_adaptive_max3d(const ct_tensor *x)
{
    const int64_t o[3] = {2, 3, 2};
    return ct_adaptive_max_pool3d(x, o, NULL);
}

static ct_tensor *gc_lp_pool2d(const ct_tensor *x)
{
    const int64_t k[2] = {2, 3}, s[2] = {1, 2};
    return ct_lp_pool2d(x, 2, k, s, true);
}
static ct_tensor *gc_lp_pool1d(const ct_tensor *x)
{
    return ct_lp_pool1d(ct_flatten(x, -2, -1), 3, 3, 2, false);
}
static ct_tensor *gc_lp_pool3d(const ct_tensor *x)
{
    const int64_t k[3] = {2, 2, 2};
    return ct_lp_pool3d(ct_add_scalar(x, 1), 1.5, k, NULL, false); /* x^1.5 away from 0 */
}

/* max_unpool of max_pool (its indices from the pooling itself), 1-D through a unit height */
static ct_tensor *gc_max_unpool2d(const ct_tensor *x)
{
    const int64_t k[2] = {2, 2}, o[2] = {5, 4};
    ct_tensor *y = NULL, *i = NULL;
    ct_max_pool2d_with_indices(x, k, NULL, &y, &i);
    return ct_max_unpool2d(y, i, k, NULL, NULL, o);
}
static ct_tensor *gc_max_unpool1d(const ct_tensor *x)
{
    const int64_t k[2] = {1, 2};
    ct_tensor *y = NULL, *i = NULL;
    ct_max_pool2d_with_indices(ct_unsqueeze(ct_flatten(x, -2, -1), -2), k, NULL, &y, &i);
    return ct_max_unpool1d(ct_squeeze_dim(y, -2), ct_squeeze_dim(i, -2), 2, 2, 0, 21);
}
/* windows apart: an element twice a maximum would be placed once but get both gradients (as
   in PyTorch, whose derivative is the same gather) */
static ct_tensor *gc_max_unpool3d(const ct_tensor *x)
{
    const int64_t k[3] = {2, 2, 2}, s[3] = {2, 2, 2}, o[3] = {4, 5, 4};
    ct_tensor *y = NULL, *i = NULL;
    ct_max_pool3d_with_indices(x, k, NULL, &y, &i);
    return ct_max_unpool3d(y, i, k, s, NULL, o);
}

typedef struct gc_case {
    const char *name;
    pool_fn f;
} gc_case;

static const gc_case gc_cases[] = {
    {"max_pool2d", gc_max_pool2d}, {"max_pool2d dilated", gc_max_pool2d_dilated},
    {"max_pool2d 2x2", gc_max_pool2d_2x2}, {"max_pool2d 2x2 transposed", gc_max_pool2d_2x2_t},
    {"max_pool1d", gc_max_pool1d}, {"avg_pool2d", gc_avg_pool2d},
    {"avg_pool2d divisor", gc_avg_pool2d_divisor}, {"avg_pool1d", gc_avg_pool1d},
    {"adaptive_avg_pool2d", gc_adaptive_avg},
    {"adaptive_avg_pool2d (1, 1)", gc_adaptive_avg_global},
    {"adaptive_avg_pool1d", gc_adaptive_avg1d}, {"adaptive_max_pool2d", gc_adaptive_max},
    {"pad constant", gc_pad_constant}, {"pad reflect", gc_pad_reflect},
    {"pad replicate", gc_pad_replicate}, {"pad circular", gc_pad_circular},
    {"nearest", gc_nearest}, {"nearest-exact", gc_nearest_exact}, {"linear", gc_linear},
    {"bilinear", gc_bilinear}, {"bilinear align_corners", gc_bilinear_align},
    {"pixel_shuffle", gc_pixel}, {"pixel_unshuffle", gc_pixel_unshuffle},
    {"max_pool3d", gc_max_pool3d}, {"avg_pool3d", gc_avg_pool3d},
    {"avg_pool3d divisor", gc_avg_pool3d_divisor}, {"adaptive_avg_pool3d", gc_adaptive_avg3d},
    {"adaptive_avg_pool3d (1, 1, 1)", gc_adaptive_avg3d_global},
    {"adaptive_max_pool3d", gc_adaptive_max3d}, {"lp_pool2d", gc_lp_pool2d},
    {"lp_pool1d", gc_lp_pool1d}, {"lp_pool3d", gc_lp_pool3d},
    {"max_unpool2d", gc_max_unpool2d}, {"max_unpool1d", gc_max_unpool1d},
    {"max_unpool3d", gc_max_unpool3d},
};
#define N_GC ((int)(sizeof gc_cases / sizeof gc_cases[0]))

static ct_tensor *gc_call(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ((const gc_case *)user)->f(in[0]);
}

/* Double backward: the gradient (create_graph) of sum(f(x) * w) as a function of x and w. */
static ct_tensor *gc_gradgrad(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = ((const gc_case *)user)->f(in[0]), *g = NULL;
    const ct_tensor *go[1] = {in[1]};
    if (y) {
        ct_autograd_grad(&y, 1, in, 1, go, false, true, false, &g);
    }
    ct_set_grad_enabled(prev);
    return g;
}

/* (2, 4, 5, 4) float64 values in distinct steps, so no window holds two equal values and
   finite differences of 1e-6 cannot move a maximum. */
static ct_tensor *gc_input(void)
{
    const int64_t s[4] = {2, 4, 5, 4};
    ct_tensor *x = ct_randperm(160, NULL);
    return ct_requires_grad_(ct_div_scalar(ct_reshape(ct_to_dtype(x, CT_FLOAT64), s, 4), 7), true);
}

static void test_pool_gradcheck(void)
{
    for (int k = 0; k < N_GC; k++) {
        ct_scope_begin();
        ct_tensor *in[1] = {gc_input()};
        CHECK_MSG(ct_gradcheck(gc_call, in, 1, (void *)(uintptr_t)&gc_cases[k], NULL),
                  "gradcheck %s: %s", gc_cases[k].name, ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_scope_end();
    }
}

/* The backward ops' own derivatives (max: the gradient's gradient at the indices; averages:
   the forward op again). */
static void test_pool_gradgradcheck(void)
{
    const int ops[14] = {0, 3, 4, 6, 9, 17, 21, 22, 23, 24, 26, 30, 31, 32};
    for (int k = 0; k < 14; k++) {
        ct_scope_begin();
        const gc_case *c = &gc_cases[ops[k]];
        ct_tensor *in[2] = {gc_input(), NULL};
        ct_no_grad_begin();
        ct_tensor *y = c->f(in[0]);
        ct_no_grad_end();
        in[1] = ct_requires_grad_(ct_randn(ct_sizes(y), ct_dim(y), CT_FLOAT64, NULL), true);
        CHECK_MSG(ct_gradcheck(gc_gradgrad, in, 2, (void *)(uintptr_t)c, NULL),
                  "gradgradcheck %s: %s", c->name, ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_scope_end();
    }
}

/* PyTorch's node names (type(y.grad_fn).__name__), the backward ops' too. */
static void test_pool_grad_fn_names(void)
{
    static const char *const names[8][2] = {
        {"MaxPool2DWithIndicesBackward0", "MaxPool2DWithIndicesBackwardBackward0"},
        {"AvgPool2DBackward0", "AvgPool2DBackwardBackward0"},
        {"AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool2DBackwardBackward0"},
        {"AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool2DBackwardBackward0"},
        {"MaxPool3DWithIndicesBackward0", "MaxPool3DWithIndicesBackwardBackward0"},
        {"AvgPool3DBackward0", "AvgPool3DBackwardBackward0"},
        {"AdaptiveAvgPool3DBackward0", "AdaptiveAvgPool3DBackwardBackward0"},
        {"AdaptiveMaxPool3DBackward0", "AdaptiveMaxPool3DBackwardBackward0"}};
    static const pool_fn fns[8] = {gc_max_pool2d, gc_avg_pool2d, gc_adaptive_avg,
                                   gc_adaptive_max, gc_max_pool3d, gc_avg_pool3d,
                                   gc_adaptive_avg3d, gc_adaptive_max3d};
    ct_scope_begin();
    for (int k = 0; k < 8; k++) {
        ct_tensor *x = gc_input(), *y = fns[k](x), *g = NULL;
        const ct_tensor *xs[1] = {x}, *go[1] = {ct_ones_like(y)};
        CHECK(ct_autograd_grad(&y, 1, (ct_tensor *const *)xs, 1, go, false, true, false, &g) ==
              CT_OK);
        CHECK(!strcmp(ct_node_name(ct_grad_fn(y)), names[k][0]));
        CHECK(!strcmp(ct_node_name(ct_grad_fn(g)), names[k][1]));
    }
    ct_scope_end();
}

/* ---- errors ------------------------------------------------------------------------------- */
static void test_pool_errors(void)
{
    ct_scope_begin();
    const int64_t s234[3] = {2, 3, 4}, s34[2] = {3, 4}, s5[5] = {2, 2, 3, 4, 5};
    const int64_t s2034[4] = {2, 0, 3, 4}, k2[2] = {2, 2}, k5[2] = {5, 5}, k0[2] = {0, 0};
    ct_tensor *x = ct_randn(s234, 3, CT_FLOAT32, NULL), *x2 = ct_randn(s34, 2, CT_FLOAT32, NULL);
    ct_tensor *x5 = ct_randn(s5, 5, CT_FLOAT32, NULL);
    ct_max_pool2d_opts mo = ct_max_pool2d_defaults();
    ct_avg_pool2d_opts ao = ct_avg_pool2d_defaults();

    CHECK(ct_max_pool2d(x, k5, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_max_pool2d: Given input size: (2x3x4). Calculated output size: "
                              "(2x0x0). Output size is too small");
    mo.padding[0] = mo.padding[1] = 2;
    CHECK(ct_max_pool2d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pad should be at most half of effective kernel size, but got "
                              "pad=2, kernel_size=2 and dilation=1");
    mo = ct_max_pool2d_defaults();
    CHECK(ct_max_pool2d(x, k0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "stride should not be zero");
    mo.stride[0] = mo.stride[1] = 1;
    CHECK(ct_max_pool2d(x, k0, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "kernel size should be greater than zero, but got kH: 0 kW: 0");
    mo.stride[0] = mo.stride[1] = -1;
    CHECK(ct_max_pool2d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "stride should be greater than zero, but got dH: -1 dW: -1");
    mo = ct_max_pool2d_defaults();
    mo.padding[1] = -1;
    CHECK(ct_max_pool2d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pad must be non-negative, but got pad: -1");
    mo = ct_max_pool2d_defaults();
    mo.dilation[0] = mo.dilation[1] = 0;
    CHECK(ct_max_pool2d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "dilation should be greater than zero, but got dilationH: 0 "
                              "dilationW: 0");
    mo = ct_max_pool2d_defaults();
    mo.padding[0] = mo.padding[1] = 2;
    mo.dilation[0] = mo.dilation[1] = 3;
    CHECK(ct_max_pool2d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pad should be smaller than or equal to half of kernel size, but "
                              "got padW = 2, padH = 2, kW = 2, kH = 2");
    CHECK(ct_max_pool2d(x5, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "non-empty 3D or 4D (batch mode) tensor expected for input");
    CHECK(ct_max_pool2d(ct_zeros(s2034, 4, CT_FLOAT32), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                              "size for input, but got:[2, 0, 3, 4]");
    CHECK(ct_max_pool2d(ct_ones(s234, 3, CT_INT64), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"max_pool2d_with_indices\" not implemented for 'Long'");

    CHECK(ct_avg_pool2d(x2, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                              "got -3)");
    CHECK(ct_avg_pool2d(x5, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                              "size for input, but got:[2, 2, 3, 4, 5]");
    ao.padding[0] = ao.padding[1] = 2;
    CHECK(ct_avg_pool2d(x, k2, &ao) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pad should be at most half of effective kernel size");

    CHECK(ct_max_pool1d(x, 5, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_max_pool1d: max_pool1d() Invalid computed output size: 0");
    CHECK(ct_max_pool1d(x, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "max_pool1d() kernel_size must be greater than zero, but got 0");
    mo = ct_max_pool2d_defaults();
    mo.padding[0] = 2;
    CHECK(ct_max_pool1d(x, 2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "max_pool1d() padding should be at most half of kernel size, but "
                              "got padding=2 and kernel_size=2");
    mo.padding[0] = 0;
    mo.dilation[0] = 0;
    CHECK(ct_max_pool1d(x, 2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "max_pool1d() dilation must be greater than zero, but got 0");
    CHECK(ct_max_pool1d(ct_select(x2, 0, 0), 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                              "dim batch size for input, but got:[4]");
    CHECK(ct_avg_pool1d(x5, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 2 to 3 dimensions, but got 5-dimensional tensor for "
                              "argument #1 'self' (while checking arguments for avg_pool1d)");
    CHECK(ct_avg_pool1d(x, 5, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given input size: (3x1x4). Calculated output size: (3x1x0). "
                              "Output size is too small");

    const int64_t neg[2] = {2, -1};
    CHECK(ct_adaptive_avg_pool2d(x, neg) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "adaptive_avg_pool2d: elements of output_size must be greater than "
                              "or equal to 0 but received {2, -1}");
    CHECK(ct_adaptive_avg_pool2d(x5, k2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                              "[2, 2, 3, 4, 5]");
    CHECK(ct_adaptive_avg_pool2d(ct_zeros(s2034, 3, CT_FLOAT32), k2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "adaptive_avg_pool2d(): Expected input to have non-zero size for "
                              "non-batch dimensions, but input has sizes [2, 0, 3] with "
                              "dimension 1 being empty");
    CHECK(ct_adaptive_avg_pool1d(x, -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "received {1, -1}");
    CHECK(ct_adaptive_avg_pool1d(x5, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "while checking arguments for adaptive_avg_pool1d");
    CHECK(ct_adaptive_max_pool2d(x5, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                              "[2, 2, 3, 4, 5]");
    CHECK(ct_adaptive_max_pool2d(ct_zeros(s2034, 4, CT_FLOAT32), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "with dimension 1 being empty");
    CHECK(ct_adaptive_max_pool2d(ct_unsqueeze(x, 0), neg, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Trying to create tensor with negative dimension -1: [1, 2, 2, -1]");
    ct_scope_end();
}

/* The 3-D ops' checks, in PyTorch's order and wording. */
static void test_pool3d_errors(void)
{
    ct_scope_begin();
    const int64_t s5[5] = {1, 2, 3, 4, 5}, s3[3] = {3, 4, 5}, s6[6] = {1, 1, 2, 3, 4, 5};
    const int64_t s0[5] = {2, 0, 3, 4, 5}, s0b[4] = {0, 2, 3, 4}, s0c[3] = {2, 0, 3};
    const int64_t k2[3] = {2, 2, 2}, k4[3] = {4, 4, 4}, k0[3] = {0, 0, 0}, k422[3] = {4, 2, 2};
    const int64_t neg[3] = {2, -1, 2};
    ct_tensor *x = ct_randn(s5, 5, CT_FLOAT32, NULL), *x3 = ct_randn(s3, 3, CT_FLOAT32, NULL);
    ct_tensor *x6 = ct_randn(s6, 6, CT_FLOAT32, NULL), *z = ct_zeros(s0, 5, CT_FLOAT32);
    ct_max_pool3d_opts mo = ct_max_pool3d_defaults();
    ct_avg_pool3d_opts ao = ct_avg_pool3d_defaults();

    CHECK(ct_max_pool3d(x3, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_max_pool3d: non-empty 4D or 5D (batch mode) tensor expected "
                              "for input");
    CHECK(ct_avg_pool3d(x6, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "non-empty 4D or 5D (batch mode) tensor expected for input");
    CHECK(ct_max_pool3d(x, k4, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Given input size: (2x3x4x5). Calculated output size: (2x0x1x1). "
                              "Output size is too small");
    CHECK(ct_max_pool3d(x, k0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "stride should not be zero");
    mo.stride[0] = mo.stride[1] = mo.stride[2] = -1;
    CHECK(ct_max_pool3d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "stride should be greater than zero, but got dT: -1 dH: -1 dW: -1");
    mo = ct_max_pool3d_defaults();
    mo.stride[0] = mo.stride[1] = mo.stride[2] = 1;
    CHECK(ct_max_pool3d(x, k0, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "kernel size should be greater than zero, but got kT: 0 kH: 0 kW: "
                              "0");
    mo = ct_max_pool3d_defaults();
    mo.padding[2] = 2;
    CHECK(ct_max_pool3d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pad should be at most half of effective kernel size, but got "
                              "pad=2, kernel_size=2 and dilation=1");
    mo.padding[2] = -1;
    CHECK(ct_max_pool3d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pad must be non-negative, but got pad: -1");
    mo = ct_max_pool3d_defaults();
    mo.dilation[0] = mo.dilation[1] = mo.dilation[2] = 0;
    CHECK(ct_max_pool3d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "dilation should be greater than zero, but got dilationT: 0 "
                              "dilationH: 0 dilationW: 0");
    mo.padding[0] = mo.padding[1] = mo.padding[2] = 2;
    mo.dilation[0] = mo.dilation[1] = mo.dilation[2] = 3;
    CHECK(ct_max_pool3d(x, k2, &mo) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pad should be smaller than or equal to half of kernel size, but "
                              "got kT: 2 kW: 2 kH: 2 padT: 2 padW: 2 padH: 2");
    CHECK(ct_max_pool3d(z, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "max_pool3d_with_indices_out_cpu_template(): Expected input to "
                              "have non-zero size for non-batch dimensions, but input has sizes "
                              "[2, 0, 3, 4, 5] with dimension 1 being empty");
    CHECK(ct_avg_pool3d(ct_zeros(s0b, 4, CT_FLOAT32), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "avg_pool3d(): Expected input to have non-zero size for non-batch "
                              "dimensions, but input has sizes [0, 2, 3, 4] with dimension 0 "
                              "being empty");
    CHECK(ct_avg_pool3d(x, k4, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "input image (T: 3 H: 4 W: 5) smaller than kernel size (kT: 4 "
                              "kH: 4 kW: 4)");
    ao.ceil_mode = true;
    CHECK(ct_avg_pool3d(x, k422, &ao) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "input image (T: 3 H: 4 W: 5) smaller than kernel size (kT: 4 "
                              "kH: 2 kW: 2)");
    CHECK(ct_max_pool3d(ct_ones(s5, 5, CT_INT64), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"max_pool3d_with_indices\" not implemented for 'Long'");
    CHECK(ct_max_pool3d_with_indices(x, NULL, NULL, NULL, NULL) == CT_ERR_NULL_ARG);
    ct_error_clear();

    CHECK(ct_adaptive_avg_pool3d(x, neg) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "adaptive_avg_pool3d: elements of output_size must be greater than "
                              "or equal to 0 but received {2, -1,2}");
    CHECK(ct_adaptive_avg_pool3d(x3, k2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                              "[3, 4, 5]");
    CHECK(ct_adaptive_avg_pool3d(ct_zeros(s0c, 3, CT_FLOAT32), k2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "adaptive_avg_pool3d(): Expected input to have non-zero size for "
                              "non-batch dimensions, but input has sizes [2, 0, 3] with "
                              "dimension 1 being empty");
    CHECK(ct_adaptive_max_pool3d(ct_zeros(s0c, 3, CT_FLOAT32), k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: "
                              "[2, 0, 3]");
    CHECK(ct_adaptive_max_pool3d(z, k2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "adaptive_max_pool3d(): Expected input to have non-zero size for "
                              "non-batch dimensions, but input has sizes [2, 0, 3, 4, 5] with "
                              "dimension 1 being empty");
    CHECK(ct_adaptive_max_pool3d(x, neg, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Trying to create tensor with negative dimension -1: "
                              "[1, 2, 2, -1, 2]");
    CHECK(ct_lp_pool2d(ct_select(x, 0, 0), 0, k2, NULL, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_lp_pool2d: norm_type must be a non-zero value, but got 0");
    CHECK(ct_lp_pool1d(x3, 2, 9, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_lp_pool1d: Given input size: (4x1x5). Calculated output size: "
                              "(4x1x0). Output size is too small");
    ct_tensor *y = NULL, *i = NULL;
    const int64_t o99[2] = {9, 9};
    CHECK(ct_max_pool2d_with_indices(ct_select(x, 0, 0), k2, NULL, &y, &i) == CT_OK);
    CHECK(ct_max_unpool2d(y, i, k2, NULL, NULL, o99) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_max_unpool2d: invalid output_size \"(9, 9)\" (dim 0 must be "
                              "between 2 and 6)");
    CHECK(ct_max_unpool2d(y, ct_to_dtype(i, CT_INT32), k2, NULL, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "elements in indices should be type int64 but got: Int");
    CHECK(ct_max_unpool2d(ct_flatten(y, 0, 2), ct_flatten(i, 0, 2), k2, NULL, NULL, NULL) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                              "tensor with 2 dimensions.");
    CHECK(ct_max_unpool2d(y, ct_select(i, 0, 0), k2, NULL, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected shape of indices to be same as that of the input tensor "
                              "([2, 3, 2, 2]) but got indices tensor with shape: [3, 2, 2]");
    CHECK(ct_max_unpool2d(ct_select(y, 0, 0), ct_full_like(ct_select(i, 0, 0), 100), k2, NULL,
                          NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Found an invalid max index: 100 (output volumes are of size 4x4)");
    ct_tensor *v5 = ct_select(ct_select(x3, 0, 0), 0, 0);
    CHECK(ct_max_unpool1d(v5, ct_zeros(s3 + 2, 1, CT_INT64), 2, 0, 0, 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                              "tensor with 2 dimensions.");
    /* an empty batch passes, as PyTorch: (0, 2, 3, 4) unbatched pools to (0, 2, 2, 2) */
    const int64_t want[4] = {0, 2, 2, 2};
    CHECK(ct_test_has_shape(ct_adaptive_avg_pool3d(ct_zeros(s0b, 4, CT_FLOAT32), k2), want, 4));
    ct_scope_end();
}

static void test_pad_errors(void)
{
    ct_scope_begin();
    const int64_t s133[3] = {1, 3, 3}, s203[3] = {2, 0, 3}, p44[2] = {4, 4};
    const int64_t p6[6] = {1, 1, 1, 1, 1, 1}, p8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const int64_t pneg[2] = {-2, -1}, p3222[4] = {2, 2, 3, 2}, pcirc[2] = {4, 0};
    const int64_t pm2[4] = {-2, -2, 0, 0}, pcrop[2] = {-4, 0};
    ct_tensor *x = ct_randn(s133, 3, CT_FLOAT32, NULL);
    CHECK(ct_pad(x, p44, 2, CT_PAD_REFLECT, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_pad: Argument #4: Padding size should be less than the "
                              "corresponding input dimension, but got: padding (4, 4) at "
                              "dimension 2 of input [1, 3, 3]");
    CHECK(ct_pad(x, p3222, 4, CT_PAD_REFLECT, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Argument #6: Padding size should be less than the corresponding "
                              "input dimension, but got: padding (3, 2) at dimension 1 of input "
                              "[1, 3, 3]");
    CHECK(ct_pad(x, p44, 1, CT_PAD_CONSTANT, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Padding length must be divisible by 2");
    CHECK(ct_pad(x, p8, 8, CT_PAD_CONSTANT, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Padding length should be less than or equal to two times the input "
                              "dimension but got padding length 8 and input of dimension 3");
    CHECK(ct_pad(x, p6, 6, CT_PAD_REFLECT, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Padding size 6 is not supported for 3D input tensor.");
    CHECK(ct_pad(x, p44, 2, CT_PAD_REPLICATE, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Padding mode \"replicate\" doesn't take in value argument");
    CHECK(ct_pad(x, pneg, 2, CT_PAD_REFLECT, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "input (W: 3) is too small. Calculated output W: 0");
    CHECK(ct_pad(ct_unsqueeze(x, 0), pm2, 4, CT_PAD_REPLICATE, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Calculated output H: 3 W: -1 must be >= 1 in every dimension "
                              "(input H: 3, W: 3)");
    CHECK(ct_pad(x, pcirc, 2, CT_PAD_CIRCULAR, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Padding value causes wrapping around more than once.");
    CHECK(ct_pad(ct_zeros(s203, 3, CT_FLOAT32), p44, 2, CT_PAD_REPLICATE, 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size "
                              "and other non-zero dimensions for input, but got: [2, 0, 3]");
    CHECK(ct_pad(x, pcrop, 2, CT_PAD_CONSTANT, 0) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "narrow(): length must be non-negative.");
    CHECK(ct_pad(x, p44, 2, (ct_pad_mode)9, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "9 is not a valid value for mode");
    ct_scope_end();
}

static void test_interpolate_errors(void)
{
    ct_scope_begin();
    const int64_t s4[4] = {1, 2, 4, 4};
    ct_tensor *x = ct_randn(s4, 4, CT_FLOAT32, NULL);
    ct_interpolate_opts o;
    memset(&o, 0, sizeof o);
    CHECK(ct_interpolate(x, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_interpolate: either size or scale_factor should be defined");
    CHECK(ct_interpolate(x, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "either size or scale_factor should be defined");
    o.size[0] = 3;
    o.scale_factor[0] = 2;
    CHECK(ct_interpolate(x, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "only one of size or scale_factor should be defined");
    o.scale_factor[0] = 0;
    o.align_corners = true;
    CHECK(ct_interpolate(x, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "align_corners option can only be set with the interpolating "
                              "modes: linear | bilinear | bicubic | trilinear");
    o.align_corners = false;
    o.recompute_scale_factor = true;
    CHECK(ct_interpolate(x, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "recompute_scale_factor is not meaningful with an explicit size.");
    o.recompute_scale_factor = false;
    o.mode = CT_INTERPOLATE_BILINEAR;
    CHECK(ct_interpolate(ct_select(x, 0, 0), &o) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Got 3D input, but bilinear mode needs 4D input");
    o.mode = CT_INTERPOLATE_LINEAR;
    CHECK(ct_interpolate(x, &o) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Got 4D input, but linear mode needs 3D input");
    o.mode = CT_INTERPOLATE_NEAREST;
    CHECK(ct_interpolate(ct_select(ct_select(x, 0, 0), 0, 0), &o) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) "
                              "for the modes: nearest | linear | bilinear | bicubic | trilinear | "
                              "lanczos | area | nearest-exact (got nearest)");
    o.size[0] = 0;
    o.scale_factor[0] = 0.1;
    CHECK(ct_interpolate(x, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Input and output sizes should be greater than 0, but got input "
                              "(H: 4, W: 4) output (H: 0, W: 0)");
    CHECK(ct_interpolate(ct_select(x, 0, 0), &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Input and output sizes should be greater than 0, but got input "
                              "(W: 4) and output (W: 0)");
    o.scale_factor[1] = 2;
    CHECK(ct_interpolate(ct_select(x, 0, 0), &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Input and scale_factor must have the same number of spatial "
                              "dimensions, but got input with spatial dimensions of [4]");
    const int64_t s3[4] = {1, 3, 3, 3}, s233[3] = {2, 3, 3};
    CHECK(ct_pixel_shuffle(ct_zeros(s3, 4, CT_FLOAT32), 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "pixel_shuffle expects its input's 'channel' dimension to be "
                              "divisible by the square of upscale_factor, but input.size(-3)=3 "
                              "is not divisible by 4");
    CHECK(ct_pixel_shuffle(ct_zeros(s3, 2, CT_FLOAT32), 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "pixel_shuffle expects input to have at least 3 dimensions, but "
                              "got input with 2 dimension(s)");
    CHECK(ct_pixel_shuffle(ct_zeros(s3, 4, CT_FLOAT32), 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pixel_shuffle expects a positive upscale_factor, but got 0");
    CHECK(ct_pixel_unshuffle(ct_zeros(s233, 3, CT_FLOAT32), -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pixel_unshuffle expects a positive downscale_factor, but got -1");
    CHECK(ct_pixel_unshuffle(ct_zeros(s233, 3, CT_FLOAT32), 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "pixel_unshuffle expects height to be divisible by "
                              "downscale_factor, but input.size(-2)=3 is not divisible by 2");
    ct_scope_end();
}

/* ---- threads ---------------------------------------------------------------------------- */
/* Outputs and gradients of the pooling kernels on (8, 64, 16, 16), enough planes to run in
   parallel chunks (in the runner's scope; the results kept out of it). */
static void pool_threads_compute(ct_tensor **out)
{
    const int64_t s[4] = {8, 64, 16, 16}, k2[2] = {2, 2}, k3[2] = {3, 3}, o5[2] = {5, 7};
    ct_manual_seed(7);
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 4, CT_FLOAT32, NULL), true);
    ct_avg_pool2d_opts ao = ct_avg_pool2d_defaults();
    ao.padding[0] = ao.padding[1] = 1;
    ct_tensor *y[4] = {ct_max_pool2d(x, k2, NULL), ct_avg_pool2d(x, k3, &ao),
                       ct_adaptive_avg_pool2d(x, o5), ct_adaptive_max_pool2d(x, o5, NULL)};
    for (int k = 0; k < 4; k++) {
        ct_tensor *g = NULL;
        ct_tensor *xs[1] = {x};
        const ct_tensor *go[1] = {ct_mul_scalar(ct_ones_like(y[k]), 0.5)};
        ct_autograd_grad(&y[k], 1, xs, 1, go, false, false, false, &g);
        out[2 * k] = ct_keep(y[k]);
        out[2 * k + 1] = ct_keep(g);
    }
}

static void test_pool_threads(void)
{
    CHECK_THREAD_INVARIANT(pool_threads_compute, 8);
}

/* The defaults are PyTorch's: nn.MaxPool2d(k) has stride None (here 0: the kernel),
   padding 0, dilation 1, ceil_mode False; nn.AvgPool2d(k) padding 0, ceil_mode False,
   count_include_pad True, divisor_override None (0). */
static void test_pool_defaults(void)
{
    ct_max_pool2d_opts m = ct_max_pool2d_defaults();
    ct_avg_pool2d_opts a = ct_avg_pool2d_defaults();
    CHECK(m.stride[0] == 0 && m.stride[1] == 0 && m.padding[0] == 0 && m.padding[1] == 0);
    CHECK(m.dilation[0] == 1 && m.dilation[1] == 1 && !m.ceil_mode);
    CHECK(a.stride[0] == 0 && a.stride[1] == 0 && a.padding[0] == 0 && a.padding[1] == 0);
    CHECK(!a.ceil_mode && a.count_include_pad && a.divisor_override == 0);
    ct_scope_begin(); /* NULL options are the defaults; stride 0 is the kernel */
    ct_tensor *x = ct_detach(gc_input());
    const int64_t k[2] = {2, 3};
    m.stride[0] = 2;
    m.stride[1] = 3;
    CHECK(ct_test_same_bytes(ct_max_pool2d(x, k, NULL), ct_max_pool2d(x, k, &m)));
    CHECK(ct_test_same_bytes(ct_avg_pool2d(x, k, NULL), ct_avg_pool2d(x, k, &a)));
    ct_scope_end();
}

/* ---- modules --------------------------------------------------------------------------- */
/* Each module's forward is its function with the module's settings; names as PyTorch's. */
static void test_pool_modules(void)
{
    ct_scope_begin();
    ct_tensor *x = ct_detach(gc_input());
    const int64_t k23[2] = {2, 3}, o32[2] = {3, 2}, pad[4] = {1, 2, 2, 0};
    ct_max_pool2d_opts mo = ct_max_pool2d_defaults();
    ct_avg_pool2d_opts ao = ct_avg_pool2d_defaults();
    mo.padding[1] = 1;
    ao.ceil_mode = true;
    ct_interpolate_opts io;
    memset(&io, 0, sizeof io);
    io.scale_factor[0] = 2;
    io.mode = CT_INTERPOLATE_BILINEAR;
    ct_module *m[13] = {
        ct_max_pool2d_new(k23, &mo), ct_avg_pool2d_new(k23, &ao), ct_adaptive_avg_pool2d_new(o32),
        ct_max_pool1d_new(3, &mo), ct_avg_pool1d_new(3, &ao), ct_adaptive_max_pool2d_new(o32),
        ct_zero_pad2d_new(pad), ct_constant_pad2d_new(pad, 2.5), ct_reflection_pad2d_new(pad),
        ct_replication_pad2d_new(pad), ct_circular_pad2d_new(pad), ct_upsample_new(&io),
        ct_pixel_shuffle_new(2)};
    static const char *const names[13] = {
        "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "MaxPool1d", "AvgPool1d",
        "AdaptiveMaxPool2d", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d",
        "CircularPad2d", "Upsample", "PixelShuffle"};
    ct_tensor *x1 = ct_flatten(x, -2, -1);
    ct_tensor *want[13] = {
        ct_max_pool2d(x, k23, &mo), ct_avg_pool2d(x, k23, &ao), ct_adaptive_avg_pool2d(x, o32),
        ct_max_pool1d(x1, 3, &mo), ct_avg_pool1d(x1, 3, &ao), ct_adaptive_max_pool2d(x, o32, NULL),
        ct_pad(x, pad, 4, CT_PAD_CONSTANT, 0), ct_pad(x, pad, 4, CT_PAD_CONSTANT, 2.5),
        ct_pad(x, pad, 4, CT_PAD_REFLECT, 0), ct_pad(x, pad, 4, CT_PAD_REPLICATE, 0),
        ct_pad(x, pad, 4, CT_PAD_CIRCULAR, 0), ct_interpolate(x, &io), ct_pixel_shuffle(x, 2)};
    for (int k = 0; k < 13; k++) {
        CHECK_MSG(m[k] && !strcmp(ct_module_name(m[k]), names[k]), "module %d", k);
        CHECK(ct_module_parameters(m[k], NULL, 0) == 0);
        ct_tensor *y = ct_module_forward(m[k], k == 3 || k == 4 ? x1 : x);
        CHECK_MSG(ct_test_same_bytes(y, want[k]), "module %s", names[k]);
        ct_module_free(m[k]);
    }
    ct_module *c = ct_circular_pad2d_new(pad);
    CHECK(ct_module_forward(c, ct_select(x1, 0, 0)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "expected 3D or 4D input (got 2D input)");
    ct_module_free(c);
    ct_scope_end();
}

void test_pool(void)
{
    RUN(test_pool_golden);
    RUN(test_pool_max_2x2_rules);
    RUN(test_pool_max_2x2_wide);
    RUN(test_pool_gradcheck);
    RUN(test_pool_gradgradcheck);
    RUN(test_pool_grad_fn_names);
    RUN(test_pool_errors);
    RUN(test_pool3d_errors);
    RUN(test_pad_errors);
    RUN(test_interpolate_errors);
    RUN(test_pool_defaults);
    RUN(test_pool_modules);
    RUN(test_pool_threads);
}
