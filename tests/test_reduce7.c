/* tests/test_reduce7.c - amax/amin, logsumexp, var/std, all/any, linalg.vector_norm,
 * allclose and equal against PyTorch (tools/gen_golden_reduce7.py writes
 * tests/golden/reduce7_golden.h): forward and gradients over contiguous, transposed,
 * step-sliced and broadcast inputs; gradcheck; errors; the same bits for any thread count.
 */
#include "test.h"
#include "golden/reduce7_golden.h"

#define F64 CT_FLOAT64

/* The case's base tensor (a leaf that requires grad when floating point). */
static ct_tensor *case_base(const r7_case *k)
{
    ct_tensor *b = ct_tensor_from_data(k->x, F64, k->sizes, k->ndim);
    if (k->dtype != F64) {
        b = ct_to_dtype(b, k->dtype);
    }
    return ct_dtype_is_floating_point(k->dtype) ? ct_requires_grad_(b, true) : b;
}

/* The base in the case's layout: as is, transposed, every second column, broadcast. */
static ct_tensor *case_layout(const r7_case *k, ct_tensor *b)
{
    if (k->layout == 1) {
        return ct_transpose(b, 0, 1);
    }
    if (k->layout == 2) {
        const int64_t s[3] = {k->sizes[0], k->sizes[1] / 2, 2};
        return ct_select(ct_reshape(b, s, 3), 2, 0);
    }
    if (k->layout == 3) {
        const int64_t s[2] = {3, k->sizes[1]};
        return ct_expand(b, s, 2);
    }
    return b;
}

static ct_tensor *case_run(const r7_case *k, const ct_tensor *x)
{
    bool kd = k->keepdim != 0;
    switch (k->op) {
    case R7_AMAX:
        return ct_amax(x, k->dims, k->n_dims, kd);
    case R7_AMIN:
        return ct_amin(x, k->dims, k->n_dims, kd);
    case R7_LOGSUMEXP:
        return ct_logsumexp(x, k->dims, k->n_dims, kd);
    case R7_VAR:
        return ct_var(x, k->p);
    case R7_STD:
        return ct_std(x, k->p);
    case R7_VAR_DIM:
        return ct_var_dim(x, k->dims, k->n_dims, k->p, kd);
    case R7_STD_DIM:
        return ct_std_dim(x, k->dims, k->n_dims, k->p, kd);
    case R7_ALL:
        return ct_all(x);
    case R7_ANY:
        return ct_any(x);
    case R7_ALL_DIM:
        return ct_all_dim(x, k->dims[0], kd);
    case R7_ANY_DIM:
        return ct_any_dim(x, k->dims[0], kd);
    case R7_VECTOR_NORM:
        return ct_linalg_vector_norm(x, k->p, k->dims, k->n_dims, kd);
    }
    return NULL;
}

/* Compares t with n values (equal values, infinities included, match exactly). */
static void check_values(int line, const ct_tensor *t, const double *want, int64_t n,
                         double tol)
{
    ct_tensor *c = ct_contiguous(ct_to_dtype(t, F64));
    if (!c || ct_numel(c) != n) {
        ct_test_fail(__FILE__, line, "got %lld values, want %lld", (long long)ct_numel(c),
                     (long long)n);
        return;
    }
    double got[64], exp[64];
    for (int64_t i = 0; i < n && i < 64; i++) {
        got[i] = ((const double *)ct_data_ptr(c))[i];
        exp[i] = got[i] == want[i] ? 0.0 : want[i];
        got[i] = got[i] == want[i] ? 0.0 : got[i];
    }
    ct_test_close(__FILE__, line, got, exp, n < 64 ? n : 64, tol, tol);
}

static void test_reduce7_golden(void)
{
    int n = (int)(sizeof r7_cases / sizeof r7_cases[0]);
    for (int i = 0; i < n; i++) {
        const r7_case *k = &r7_cases[i];
        double tol = k->dtype == CT_FLOAT32 || k->out_dtype == CT_FLOAT32 ? 1e-5 : 1e-12;
        int failed = ct_test_failed_checks;
        ct_scope_begin();
        ct_tensor *b = case_base(k);
        ct_tensor *out = case_run(k, case_layout(k, b));
        CHECK_MSG(out && ct_tensor_dtype(out) == k->out_dtype && ct_dim(out) == k->out_ndim,
                  "case %d: %s", i, out ? "dtype or ndim" : ct_error());
        ct_error_clear();
        if (out) {
            check_values(__LINE__ + 0, out, k->out, ct_numel(out), tol);
            CHECK_MSG(ct_requires_grad(out) == k->out_grad, "case %d: requires_grad", i);
        }
        if (out && k->grad) {
            int64_t m = ct_numel(out);
            ct_tensor *g = ct_reshape(ct_linspace(-1, 1.5, m, ct_tensor_dtype(out)),
                                      ct_sizes(out), ct_dim(out));
            CHECK(ct_backward(ct_sum(ct_mul(out, g)), NULL, false) == CT_OK);
            check_values(__LINE__ + 0, ct_grad(b), k->grad, ct_test_numel(k->sizes, k->ndim), tol);
        }
        if (ct_test_failed_checks != failed) {
            fprintf(stderr, "  (case %d)\n", i);
        }
        ct_scope_end();
    }
}

static void test_reduce7_allclose_equal(void)
{
    int n = (int)(sizeof r7_pairs / sizeof r7_pairs[0]);
    for (int i = 0; i < n; i++) {
        const r7_pair *p = &r7_pairs[i];
        int64_t len = p->n;
        ct_scope_begin();
        ct_tensor *a = ct_tensor_from_data(p->a, F64, &len, 1);
        ct_tensor *b = ct_tensor_from_data(p->b, F64, &len, 1);
        CHECK_MSG(ct_allclose(a, b, p->rtol, p->atol, p->equal_nan) == p->allclose,
                  "pair %d: allclose", i);
        CHECK_MSG(ct_equal(a, b) == p->equal, "pair %d: equal", i);
        ct_scope_end();
    }
    ct_scope_begin();
    const int64_t s2[2] = {2, 2}, s4 = 4;
    ct_tensor *x = ct_randn(s2, 2, CT_FLOAT32, NULL), *flat = ct_reshape(x, &s4, 1);
    CHECK(ct_equal(x, x) && !ct_equal(x, flat));               /* sizes must match */
    CHECK(ct_equal(x, ct_to_dtype(x, F64)));                    /* after promotion */
    CHECK(ct_allclose(x, ct_select(x, 0, 1), 1e10, 1e10, false)); /* broadcasts */
    CHECK(ct_allclose(ct_to_dtype(x, CT_INT64), ct_to_dtype(x, CT_INT64), 1e-5, 1e-8, false));
    CHECK(!ct_error());
    ct_scope_end();
}

static ct_tensor *gc_amax(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const int64_t *dims = (const int64_t *)user;
    return ct_add(ct_amax(in[0], dims, 1, true), ct_amin(in[0], dims + 1, 1, true));
}

static ct_tensor *gc_logsumexp(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    const int64_t d[2] = {0, 2};
    return ct_logsumexp(in[0], d, 2, true);
}

static ct_tensor *gc_var_std(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    const int64_t d[1] = {1};
    return ct_add(ct_var_dim(in[0], d, 1, 1.0, false),
                  ct_add(ct_std_dim(in[0], d, 1, 0.0, false), ct_std(in[0], 1.0)));
}

static ct_tensor *gc_norm(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const int64_t d[1] = {-1};
    return ct_linalg_vector_norm(in[0], *(const double *)user, d, 1, false);
}

static void test_reduce7_gradcheck(void)
{
    const int64_t s[3] = {2, 3, 4};
    ct_gradcheck_opts o = ct_gradcheck_defaults();
    const int64_t dims[2] = {2, 0};
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 3, F64, NULL), true);
    ct_tensor *in[1] = {x};
    CHECK_MSG(ct_gradcheck(gc_amax, in, 1, (void *)dims, &o), "amax: %s", ct_error());
    CHECK_MSG(ct_gradcheck(gc_logsumexp, in, 1, NULL, &o), "logsumexp: %s", ct_error());
    CHECK_MSG(ct_gradcheck(gc_var_std, in, 1, NULL, &o), "var/std: %s", ct_error());
    const double ords[5] = {2.0, 1.0, 3.0, INFINITY, -INFINITY};
    for (int k = 0; k < 5; k++) {
        CHECK_MSG(ct_gradcheck(gc_norm, in, 1, (void *)&ords[k], &o), "norm %g: %s", ords[k],
                  ct_error());
    }
    ct_error_clear();
    ct_free(x);
}

/* Double backward: the gradient of f (user: a gradcheck function of one input) at in[0]
   against the output weights in[1], as a function of both (create_graph). */
static ct_tensor *gg_grad(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    ct_gradcheck_fn f = *(ct_gradcheck_fn *)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true);
    ct_tensor *y = f(in, 1, NULL);
    const ct_tensor *go[1] = {in[1]};
    ct_tensor *g = NULL;
    if (y && ct_autograd_grad(&y, 1, in, 1, go, false, true, false, &g) != CT_OK) {
        g = NULL;
    }
    ct_set_grad_enabled(prev);
    return g;
}

static ct_tensor *gg_amax(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    const int64_t d[1] = {1};
    return ct_amax(in[0], d, 1, false);
}

static ct_tensor *gg_norm2(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    const double two = 2.0;
    return gc_norm(in, n, (void *)&two);
}

static void test_reduce7_gradgradcheck(void)
{
    ct_scope_begin();
    const int64_t s[3] = {2, 3, 4}, s2[2] = {2, 4}, s3[3] = {1, 3, 1}, s4[2] = {2, 3};
    ct_gradcheck_opts o = ct_gradcheck_defaults();
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 3, F64, NULL), true);
    struct {
        const char *name;
        ct_gradcheck_fn f;
        const int64_t *out;
        int nd;
    } cases[4] = {{"amax", gg_amax, s2, 2}, {"logsumexp", gc_logsumexp, s3, 3},
                  {"var/std", gc_var_std, s2, 2}, {"vector_norm 2", gg_norm2, s4, 2}};
    for (int k = 0; k < 4; k++) {
        ct_tensor *in[2] = {x, ct_requires_grad_(ct_randn(cases[k].out, cases[k].nd, F64, NULL),
                                                 true)};
        CHECK_MSG(ct_gradcheck(gg_grad, in, 2, (void *)&cases[k].f, &o), "%s: %s",
                  cases[k].name, ct_error());
        ct_error_clear();
    }
    ct_scope_end();
}

static void test_reduce7_errors(void)
{
    ct_scope_begin();
    const int64_t s[2] = {2, 3}, e[2] = {2, 0}, d5 = 5, d00[2] = {0, 0}, d1 = 1;
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL), *empty = ct_zeros(e, 2, CT_FLOAT32);
    ct_tensor *i = ct_zeros(s, 2, CT_INT64);
    CHECK(ct_amax(x, &d5, 1, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                "got 5)");
    CHECK(ct_amin(x, d00, 2, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "dim 0 appears multiple times in the list of dims");
    CHECK(ct_amax(empty, &d1, 1, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "amax(): Expected reduction dim 1 to have non-zero size.");
    CHECK(ct_amin(empty, NULL, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "amin(): Expected reduction dim to be specified for input.numel() "
                "== 0. Specify the reduction dim with the 'dim' argument.");
    CHECK(ct_amax(x, NULL, 1, false) == NULL);
    CHECK(ct_error_code() != CT_OK);
    ct_error_clear();
    CHECK(ct_var(i, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "std and var only support floating point and complex dtypes");
    CHECK(ct_std_dim(x, &d5, 1, 1.0, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range");
    CHECK(ct_logsumexp(x, &d5, 1, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range");
    CHECK(ct_all_dim(x, -3, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                "got -3)");
    CHECK(ct_linalg_vector_norm(i, 2.0, NULL, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "linalg.vector_norm: Expected a floating point or complex tensor "
                "as input. Got Long");
    CHECK(ct_linalg_vector_norm(empty, INFINITY, NULL, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.vector_norm cannot compute the inf norm on an empty tensor "
                "because the operation does not have an identity");
    CHECK(ct_linalg_vector_norm(empty, -1.0, &d1, 1, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.vector_norm cannot compute the -1 norm on the dimension "
                "1because this dimension is empty and the operation does not have an identity");
    ct_tensor *ok = ct_linalg_vector_norm(empty, 2.0, &d1, 1, false); /* 2-norm: identity 0 */
    CHECK(ok && ct_numel(ok) == 2 && !ct_error());
    CHECK(!ct_allclose(x, ct_to_dtype(x, CT_FLOAT64), 1e-5, 1e-8, false));
    CHECK_ERROR(CT_ERR_DTYPE, "Float did not match Double");
    CHECK(!ct_allclose(x, ct_zeros(&d5, 1, CT_FLOAT32), 1e-5, 1e-8, false));
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (3) must match the size of tensor b (5) at "
                "non-singleton dimension 1");
    ct_scope_end();
}

/* Long rows (the 16-lane path): the max / min, and NaN wherever it sits. */
static void test_reduce7_long_rows(void)
{
    ct_scope_begin();
    double v[37];
    for (int i = 0; i < 37; i++) {
        v[i] = (double)((i * 17) % 37) - 18.0;
    }
    const int64_t n = 37, d0 = 0;
    ct_tensor *x = ct_tensor_from_data(v, F64, &n, 1);
    CHECK(ct_item(ct_amax(x, &d0, 1, false)) == 18.0);
    CHECK(ct_item(ct_amin(x, NULL, 0, false)) == -18.0);
    for (int at = 0; at < 37; at += 12) {
        double w[37];
        memcpy(w, v, sizeof w);
        w[at] = NAN;
        ct_tensor *y = ct_tensor_from_data(w, F64, &n, 1);
        CHECK_MSG(isnan(ct_item(ct_amax(y, &d0, 1, false))), "NaN at %d", at);
        CHECK_MSG(isnan(ct_item(ct_amin(ct_to_dtype(y, CT_FLOAT32), &d0, 1, false))),
                  "NaN at %d", at);
    }
    ct_scope_end();
}

/* The same bits with 1 and 4 threads (fixed-order accumulation). */
static void reduce7_thread_results(ct_tensor **r)
{
    const int64_t s[2] = {300, 1001}, d0 = 0, d1 = 1;
    ct_manual_seed(3);
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL);
    r[0] = ct_keep(ct_var_dim(x, &d0, 1, 1.0, false));
    r[1] = ct_keep(ct_logsumexp(x, &d1, 1, false));
    r[2] = ct_keep(ct_std(x, 1.0));
    r[3] = ct_keep(ct_linalg_vector_norm(x, 2.0, NULL, 0, false));
    r[4] = ct_keep(ct_amax(x, &d0, 1, false));
}

static void test_reduce7_thread_count_invariant(void)
{
    CHECK_THREAD_INVARIANT(reduce7_thread_results, 5);
}

void test_reduce7(void)
{
    RUN(test_reduce7_golden);
    RUN(test_reduce7_allclose_equal);
    RUN(test_reduce7_gradcheck);
    RUN(test_reduce7_gradgradcheck);
    RUN(test_reduce7_errors);
    RUN(test_reduce7_long_rows);
    RUN(test_reduce7_thread_count_invariant);
}
