/* tests/test_init.c - nn/init.c against PyTorch (tools/gen_golden_init.py,
 * tests/golden/init_golden.h): every initializer after ct_manual_seed(s), s = 0, 1, 42, bit
 * for bit (orthogonal_ within QR's rounding), calculate_gain, the fans, no autograd history,
 * and PyTorch's errors.
 */
#include "test.h"

typedef struct init_golden {
    const char *name;
    int seed;
    ct_dtype dtype;
    int nd;
    int64_t shape[4];
    double a, b, c; /* the case's scalar arguments */
    double v[72];
} init_golden;

typedef struct gain_golden {
    ct_nonlinearity nl;
    double param, gain;
} gain_golden;
#include "golden/init_golden.h"

#define N_INIT ((int)(sizeof init_golden_cases / sizeof init_golden_cases[0]))
#define N_GAIN ((int)(sizeof gain_golden_cases / sizeof gain_golden_cases[0]))

static ct_tensor *run_init(const init_golden *g, ct_tensor *t)
{
    const char *n = g->name;
    ct_fan_mode mode = (ct_fan_mode)g->b;
    ct_nonlinearity nl = (ct_nonlinearity)g->c;
    if (!strcmp(n, "uniform_")) {
        return ct_init_uniform_(t, g->a, g->b, NULL);
    }
    if (!strcmp(n, "normal_")) {
        return ct_init_normal_(t, g->a, g->b, NULL);
    }
    if (!strcmp(n, "constant_")) {
        return ct_init_constant_(t, g->a);
    }
    if (!strcmp(n, "ones_") || !strcmp(n, "zeros_")) {
        return n[0] == 'o' ? ct_init_ones_(t) : ct_init_zeros_(t);
    }
    if (!strcmp(n, "xavier_uniform_") || !strcmp(n, "xavier_normal_")) {
        return n[7] == 'u' ? ct_init_xavier_uniform_(t, g->a, NULL)
                           : ct_init_xavier_normal_(t, g->a, NULL);
    }
    if (!strcmp(n, "kaiming_uniform_")) {
        return ct_init_kaiming_uniform_(t, g->a, mode, nl, NULL);
    }
    if (!strcmp(n, "kaiming_normal_")) {
        return ct_init_kaiming_normal_(t, g->a, mode, nl, NULL);
    }
    if (!strcmp(n, "trunc_normal_")) { /* c: bounds [-2, 2], [-1, 2] or [1, 1.5] */
        const double lo[3] = {-2.0, -1.0, 1.0}, hi[3] = {2.0, 2.0, 1.5};
        return ct_init_trunc_normal_(t, g->a, g->b, lo[(int)g->c], hi[(int)g->c], NULL);
    }
    if (!strcmp(n, "eye_")) {
        return ct_init_eye_(t);
    }
    if (!strcmp(n, "dirac_")) {
        return ct_init_dirac_(t, (int64_t)g->a);
    }
    if (!strcmp(n, "sparse_")) {
        return ct_init_sparse_(t, g->a, g->b, NULL);
    }
    return ct_init_orthogonal_(t, g->a, NULL);
}

static void test_init_golden(void)
{
    for (int k = 0; k < N_INIT; k++) {
        const init_golden *g = &init_golden_cases[k];
        ct_scope_begin();
        ct_manual_seed((uint64_t)g->seed);
        ct_tensor *t = ct_requires_grad_(ct_empty(g->shape, g->nd, g->dtype), true);
        uint32_t v0 = ct_version(t);
        ct_tensor *r = run_init(g, t);
        CHECK_MSG(r == t, "%s seed %d: %s", g->name, g->seed, ct_error() ? ct_error() : "?");
        ct_error_clear();
        CHECK(ct_is_leaf(t) && !ct_grad_fn(t) && ct_version(t) > v0);
        bool qr = !strcmp(g->name, "orthogonal_");
        double tol = !qr ? 0.0 : g->dtype == CT_FLOAT32 ? 2e-6 : 1e-13;
        if (!CHECK_TENSOR(t, g->v, ct_test_numel(g->shape, g->nd), tol, tol)) {
            fprintf(stderr, "  %s seed %d\n", g->name, g->seed);
        }
        ct_scope_end();
    }
}

/* orthogonal_'s result is orthogonal: W W^T = gain^2 I for a wide W */
static void test_init_orthogonal(void)
{
    ct_scope_begin();
    const int64_t s[2] = {4, 7};
    ct_tensor *w = ct_init_orthogonal_(ct_empty(s, 2, CT_FLOAT64), 3.0, NULL);
    ct_tensor *e = ct_mul_scalar(ct_eye(4, -1, CT_FLOAT64), 9.0);
    CHECK(ct_allclose(ct_mm(w, ct_t(w)), e, 1e-12, 1e-12, false));
    ct_scope_end();
}

static void test_init_gain_fans(void)
{
    for (int k = 0; k < N_GAIN; k++) {
        const gain_golden *g = &gain_golden_cases[k];
        CHECK_NEAR(ct_init_calculate_gain(g->nl, g->param), g->gain, 0.0);
    }
    ct_scope_begin();
    const int64_t s[4] = {5, 3, 2, 4};
    int64_t fi = 0, fo = 0;
    CHECK(ct_init_calculate_fan_in_and_fan_out(ct_empty(s, 4, CT_FLOAT32), &fi, &fo) == CT_OK);
    CHECK(fi == 24 && fo == 40);
    CHECK(ct_init_calculate_fan_in_and_fan_out(ct_empty(s, 1, CT_FLOAT32), &fi, NULL) ==
          CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "Fan in and fan out can not be computed for tensor with fewer than "
                "2 dimensions");
    ct_scope_end();
}

static void test_init_errors(void)
{
    ct_scope_begin();
    const int64_t s[4] = {4, 3, 3, 3};
    ct_tensor *t1 = ct_empty(s, 1, CT_FLOAT32), *t3 = ct_empty(s, 3, CT_FLOAT32);
    ct_tensor *t2 = ct_empty(s, 2, CT_FLOAT32);
    CHECK(!ct_init_eye_(t3));
    CHECK_ERROR(CT_ERR_VALUE, "Only tensors with 2 dimensions are supported");
    CHECK(!ct_init_sparse_(t3, 0.5, 0.01, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Only tensors with 2 dimensions are supported");
    CHECK(!ct_init_dirac_(t2, 1));
    CHECK_ERROR(CT_ERR_VALUE, "Only tensors with 3, 4, or 5 dimensions are supported");
    CHECK(!ct_init_dirac_(t3, 3));
    CHECK_ERROR(CT_ERR_VALUE, "dim 0 must be divisible by groups");
    CHECK(!ct_init_orthogonal_(t1, 1.0, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Only tensors with 2 or more dimensions are supported");
    CHECK(!ct_init_kaiming_uniform_(t2, 0.0, (ct_fan_mode)5, CT_NONLINEARITY_RELU, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Mode 5 not supported");
    CHECK(!ct_init_kaiming_normal_(t2, 0.0, CT_FAN_IN, (ct_nonlinearity)17, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Unsupported nonlinearity 17");
    CHECK(!ct_init_xavier_uniform_(t1, 1.0, NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "Fan in and fan out can not be computed");
    CHECK(!ct_init_xavier_normal_(t1, 1.0, NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "Fan in and fan out can not be computed");
    CHECK(!ct_init_uniform_(ct_empty(s, 2, CT_INT64), 0.0, 1.0, NULL));
    CHECK_ERROR(CT_ERR_DTYPE, "");
    ct_scope_end();
}

void test_init(void)
{
    RUN(test_init_golden);
    RUN(test_init_orthogonal);
    RUN(test_init_gain_fans);
    RUN(test_init_errors);
}
