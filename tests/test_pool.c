/* tests/test_pool.c - pooling, padding, interpolation and pixel shuffle: PyTorch's outputs,
 * indices and gradients (tools/gen_golden_pool.py, tests/golden/pool_golden.h) on contiguous,
 * transposed and step-sliced inputs in every dtype, gradcheck and gradgradcheck, PyTorch's
 * errors, the modules, and results independent of the thread count.
 */
#include "test.h"

#include <stdlib.h>

typedef struct pool_golden {
    const char *op;
    ct_dtype dtype;
    int how; /* 0 contiguous, 1 the base's last two dims transposed, 2 every other element */
    int64_t p[12];
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

/* Runs the case's op; *indices receives max's indices where the op has them. */
static ct_tensor *run_op(const pool_golden *g, const ct_tensor *x, ct_tensor **indices)
{
    const int64_t *p = g->p;
    const char *op = g->op;
    *indices = NULL;
    if (!strcmp(op, "max_pool2d") || !strcmp(op, "max_pool1d")) {
        ct_max_pool2d_opts o = ct_max_pool2d_defaults();
        bool two = op[8] == '2';
        int n = two ? 2 : 1;
        for (int a = 0; a < n; a++) {
            o.stride[a] = p[n + a];
            o.padding[a] = p[2 * n + a];
            o.dilation[a] = p[3 * n + a];
        }
        o.ceil_mode = p[4 * n] != 0;
        if (!two) {
            return ct_max_pool1d(x, p[0], &o);
        }
        ct_tensor *y = NULL;
        ct_max_pool2d_with_indices(x, p, &o, &y, indices);
        return y;
    }
    if (!strcmp(op, "avg_pool2d") || !strcmp(op, "avg_pool1d")) {
        ct_avg_pool2d_opts o = ct_avg_pool2d_defaults();
        int n = op[8] == '2' ? 2 : 1;
        for (int a = 0; a < n; a++) {
            o.stride[a] = p[n + a];
            o.padding[a] = p[2 * n + a];
        }
        o.ceil_mode = p[3 * n] != 0;
        o.count_include_pad = p[3 * n + 1] != 0;
        o.divisor_override = n == 2 ? p[8] : 0;
        return n == 2 ? ct_avg_pool2d(x, p, &o) : ct_avg_pool1d(x, p[0], &o);
    }
    if (!strcmp(op, "adaptive_avg_pool2d")) {
        return ct_adaptive_avg_pool2d(x, p);
    }
    if (!strcmp(op, "adaptive_max_pool2d")) {
        return ct_adaptive_max_pool2d(x, p, indices);
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
    CHECK(N_CASES >= 40 && half >= 4);
}

void test_pool(void)
{
    RUN(test_pool_golden);
}
