/* tests/test_reduce2.c - prod, cumsum/cumprod/cummax/cummin/logcumsumexp, nansum/nanmean,
 * var_mean/std_mean, aminmax, count_nonzero, dist and cdist against PyTorch
 * (tools/gen_golden_reduce2.py writes tests/golden/reduce2_golden.h): both outputs and the
 * gradients over contiguous, transposed, step-sliced and broadcast inputs; gradcheck and
 * gradgradcheck; errors; the same bits for any thread count.
 */
#include "test.h"
#include "golden/reduce2_golden.h"

#define F64 CT_FLOAT64

/* The case's base tensor (a leaf that requires grad when floating point). */
static ct_tensor *case_base(const r2_case *k)
{
    ct_tensor *b = ct_tensor_from_data(k->x, F64, k->sizes, k->ndim);
    if (k->dtype != F64) {
        b = ct_to_dtype(b, k->dtype);
    }
    return ct_dtype_is_floating_point(k->dtype) ? ct_requires_grad_(b, true) : b;
}

/* The other input of dist / cdist (the base's dtype, a leaf), or NULL. */
static ct_tensor *case_other(const r2_case *k)
{
    if (!k->other) {
        return NULL;
    }
    ct_tensor *o = ct_to_dtype(ct_tensor_from_data(k->other, F64, k->other_sizes,
                                                   k->other_ndim), k->dtype);
    return ct_requires_grad_(o, true);
}

/* The base in the case's layout: as is, transposed, every second column, broadcast. */
static ct_tensor *case_layout(const r2_case *k, ct_tensor *b)
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

static ct_tensor *case_run(const r2_case *k, const ct_tensor *x, const ct_tensor *o,
                           ct_tensor **out2)
{
    bool kd = k->keepdim != 0;
    int64_t d = k->dims[0];
    ct_tensor *r = NULL;
    ct_status st = CT_OK;
    *out2 = NULL;
    switch (k->op) {
    case R2_PROD:
        return ct_prod(x);
    case R2_PROD_DIM:
        return ct_prod_dim(x, d, kd);
    case R2_CUMSUM:
        return ct_cumsum(x, d, (ct_dtype)k->arg);
    case R2_CUMPROD:
        return ct_cumprod(x, d, (ct_dtype)k->arg);
    case R2_CUMMAX:
        st = ct_cummax(x, d, &r, out2);
        break;
    case R2_CUMMIN:
        st = ct_cummin(x, d, &r, out2);
        break;
    case R2_LOGCUMSUMEXP:
        return ct_logcumsumexp(x, d);
    case R2_NANSUM:
        return ct_nansum(x, k->dims, k->n_dims, kd);
    case R2_NANMEAN:
        return ct_nanmean(x, k->dims, k->n_dims, kd);
    case R2_VAR_MEAN:
        st = ct_var_mean(x, k->dims, k->n_dims, k->p, kd, &r, out2);
        break;
    case R2_STD_MEAN:
        st = ct_std_mean(x, k->dims, k->n_dims, k->p, kd, &r, out2);
        break;
    case R2_AMINMAX:
        st = ct_aminmax(x, k->n_dims ? k->dims : NULL, kd, &r, out2);
        break;
    case R2_COUNT_NONZERO:
        return ct_count_nonzero(x, k->dims, k->n_dims);
    case R2_DIST:
        return ct_dist(x, o, k->p);
    case R2_CDIST:
        return ct_cdist(x, o, k->p, (ct_cdist_compute_mode)k->arg);
    }
    return st == CT_OK ? r : NULL; /* a two-output op: the first (the second in out2) */
}

/* Compares t with n values (equal values, infinities and NaNs included, match exactly); a
   float32 t against the values rounded to float32 (the fixture holds 9 digits). */
static void check_values(int line, const ct_tensor *t, const double *want, int64_t n,
                         double tol)
{
    ct_tensor *c = ct_contiguous(ct_to_dtype(t, F64));
    if (!c || ct_numel(c) != n) {
        ct_test_fail(__FILE__, line, "got %lld values, want %lld", (long long)ct_numel(c),
                     (long long)n);
        return;
    }
    double got[160], exp[160];
    int64_t m = n < 160 ? n : 160;
    for (int64_t i = 0; i < m; i++) {
        double w = ct_tensor_dtype(t) == CT_FLOAT32 ? (double)(float)want[i] : want[i];
        double v = ((const double *)ct_data_ptr(c))[i];
        bool same = v == w || (isnan(v) && isnan(w));
        got[i] = same ? 0.0 : v;
        exp[i] = same ? 0.0 : w;
    }
    ct_test_close(__FILE__, line, got, exp, m, tol, tol);
}

/* The tolerance of a case's first output: scans, counts and integer results are PyTorch's
   bit for bit; the others within a few float32 / float64 ulps. */
static double case_tol(const r2_case *k)
{
    bool exact = k->op == R2_CUMSUM || k->op == R2_CUMPROD || k->op == R2_CUMMAX ||
                 k->op == R2_CUMMIN || k->op == R2_COUNT_NONZERO ||
                 !ct_dtype_is_floating_point(k->out_dtype);
    if (exact) {
        return 0.0;
    }
    return k->dtype == CT_FLOAT32 || k->out_dtype == CT_FLOAT32 ? 2e-6 : 1e-13;
}

/* sum(out * linspace(-1, 1.5)) over the float outputs (NULL entries skipped) */
static ct_tensor *weighted_loss(ct_tensor *const *outs, int n)
{
    ct_tensor *loss = NULL;
    for (int i = 0; i < n; i++) {
        if (!outs[i] || !ct_requires_grad(outs[i])) {
            continue;
        }
        ct_tensor *g = ct_reshape(ct_linspace(-1, 1.5, ct_numel(outs[i]),
                                              ct_tensor_dtype(outs[i])),
                                  ct_sizes(outs[i]), ct_dim(outs[i]));
        ct_tensor *s = ct_sum(ct_mul(outs[i], g));
        loss = loss ? ct_add(loss, s) : s;
    }
    return loss;
}

static void run_case(int i, const r2_case *k)
{
    ct_tensor *b = case_base(k), *o = case_other(k), *out2 = NULL;
    ct_tensor *out = case_run(k, case_layout(k, b), o, &out2);
    CHECK_MSG(out && ct_tensor_dtype(out) == k->out_dtype && ct_dim(out) == k->out_ndim,
              "case %d: %s", i, out ? "dtype or ndim" : ct_error());
    ct_error_clear();
    if (!out) {
        return;
    }
    check_values(__LINE__, out, k->out, ct_numel(out), case_tol(k));
    if (k->out2) {
        CHECK_MSG(out2 && ct_tensor_dtype(out2) == k->out2_dtype, "case %d: second output", i);
        check_values(__LINE__, out2, k->out2, ct_numel(out2),
                     k->out2_dtype == CT_INT64 ? 0.0 : case_tol(k));
    }
    if (k->grad) {
        ct_tensor *outs[2] = {out, out2};
        ct_tensor *loss = weighted_loss(outs, 2);
        CHECK_MSG(loss && ct_backward(loss, NULL, false) == CT_OK, "case %d: backward", i);
        double tol = k->dtype == CT_FLOAT32 ? 1e-5 : 1e-12;
        check_values(__LINE__, ct_grad(b), k->grad, ct_test_numel(k->sizes, k->ndim), tol);
        if (k->grad_other) {
            check_values(__LINE__, ct_grad(o), k->grad_other,
                         ct_test_numel(k->other_sizes, k->other_ndim), tol);
        }
    }
}

static void test_reduce2_golden(void)
{
    int n = (int)(sizeof r2_cases / sizeof r2_cases[0]);
    for (int i = 0; i < n; i++) {
        int failed = ct_test_failed_checks;
        ct_scope_begin();
        run_case(i, &r2_cases[i]);
        if (ct_test_failed_checks != failed) {
            fprintf(stderr, "  (case %d)\n", i);
        }
        ct_scope_end();
    }
}

/* ---- gradcheck ------------------------------------------------------------------------- */
static ct_tensor *gc_prod(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_add(ct_sum(ct_prod_dim(in[0], 1, false)), ct_prod(in[0]));
}

static ct_tensor *gc_cumsum(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_cumsum(in[0], *(const int64_t *)user, CT_DTYPE_DEFAULT);
}

static ct_tensor *gc_cumprod(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_cumprod(in[0], *(const int64_t *)user, CT_DTYPE_DEFAULT);
}

static ct_tensor *gc_logcumsumexp(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_logcumsumexp(in[0], *(const int64_t *)user);
}

static ct_tensor *gc_cummaxmin(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    ct_tensor *hi = NULL, *lo = NULL;
    int64_t d = *(const int64_t *)user;
    if (ct_cummax(in[0], d, &hi, NULL) != CT_OK || ct_cummin(in[0], d, &lo, NULL) != CT_OK) {
        return NULL;
    }
    return ct_add(hi, ct_mul_scalar(lo, 2.0));
}

static ct_tensor *gc_nan_stats(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    const int64_t d[1] = {1};
    ct_tensor *v = NULL, *m = NULL, *s = NULL, *m2 = NULL;
    if (ct_var_mean(in[0], d, 1, 1.0, false, &v, &m) != CT_OK ||
        ct_std_mean(in[0], NULL, 0, 0.0, false, &s, &m2) != CT_OK) {
        return NULL;
    }
    ct_tensor *r = ct_add(ct_add(v, ct_mul_scalar(m, 3.0)), ct_add(s, m2));
    return ct_add(r, ct_add(ct_nansum(in[0], d, 1, false), ct_nanmean(in[0], d, 1, false)));
}

static ct_tensor *gc_aminmax(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    const int64_t d = 0;
    ct_tensor *lo = NULL, *hi = NULL;
    if (ct_aminmax(in[0], &d, true, &lo, &hi) != CT_OK) {
        return NULL;
    }
    return ct_sub(hi, ct_mul_scalar(lo, 0.5));
}

static ct_tensor *gc_dist(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_dist(in[0], in[1], *(const double *)user);
}

/* user: {p, mode} */
static ct_tensor *gc_cdist(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const double *pm = (const double *)user;
    return ct_cdist(in[0], in[1], pm[0], (ct_cdist_compute_mode)pm[1]);
}

static void test_reduce2_gradcheck(void)
{
    ct_scope_begin();
    const int64_t s[3] = {2, 3, 4}, s2[2] = {4, 3}, s3[3] = {2, 5, 3};
    ct_gradcheck_opts o = ct_gradcheck_defaults();
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 3, F64, NULL), true);
    /* zeros: one in a line, two in another (the zero-safe prod / cumprod gradients) */
    double zv[24];
    for (int i = 0; i < 24; i++) {
        zv[i] = (i % 7 == 3 || i == 4) ? 0.0 : 0.5 + 0.1 * (double)i;
    }
    ct_tensor *z = ct_requires_grad_(ct_tensor_from_data(zv, F64, s, 3), true);
    ct_tensor *in[1] = {x}, *inz[1] = {z};
    const int64_t dims[3] = {0, 1, -1};
    CHECK_MSG(ct_gradcheck(gc_prod, in, 1, NULL, &o), "prod: %s", ct_error());
    CHECK_MSG(ct_gradcheck(gc_prod, inz, 1, NULL, &o), "prod with zeros: %s", ct_error());
    for (int k = 0; k < 3; k++) {
        void *d = (void *)&dims[k];
        CHECK_MSG(ct_gradcheck(gc_cumsum, in, 1, d, &o), "cumsum %d: %s", k, ct_error());
        CHECK_MSG(ct_gradcheck(gc_cumprod, in, 1, d, &o), "cumprod %d: %s", k, ct_error());
        CHECK_MSG(ct_gradcheck(gc_cumprod, inz, 1, d, &o), "cumprod zeros %d: %s", k,
                  ct_error());
        CHECK_MSG(ct_gradcheck(gc_logcumsumexp, in, 1, d, &o), "logcumsumexp %d: %s", k,
                  ct_error());
        CHECK_MSG(ct_gradcheck(gc_cummaxmin, in, 1, d, &o), "cummax/cummin %d: %s", k,
                  ct_error());
    }
    CHECK_MSG(ct_gradcheck(gc_nan_stats, in, 1, NULL, &o), "var_mean...: %s", ct_error());
    CHECK_MSG(ct_gradcheck(gc_aminmax, in, 1, NULL, &o), "aminmax: %s", ct_error());
    ct_tensor *a = ct_requires_grad_(ct_randn(s2, 2, F64, NULL), true);
    ct_tensor *b = ct_requires_grad_(ct_randn(s3, 3, F64, NULL), true);
    ct_tensor *ab[2] = {a, b}, *xy[2] = {x, ct_requires_grad_(ct_randn(s, 3, F64, NULL), true)};
    const double ps[5] = {2.0, 1.0, 3.0, 1.5, INFINITY};
    for (int k = 0; k < 5; k++) {
        CHECK_MSG(ct_gradcheck(gc_dist, xy, 2, (void *)&ps[k], &o), "dist %g: %s", ps[k],
                  ct_error());
        const double pm[2] = {ps[k], (double)CT_CDIST_DONOT_USE_MM};
        CHECK_MSG(ct_gradcheck(gc_cdist, ab, 2, (void *)pm, &o), "cdist %g: %s", ps[k],
                  ct_error());
    }
    const double mm[2] = {2.0, (double)CT_CDIST_USE_MM};
    CHECK_MSG(ct_gradcheck(gc_cdist, ab, 2, (void *)mm, &o), "cdist mm: %s", ct_error());
    ct_error_clear();
    ct_scope_end();
}

/* Double backward: the gradient of f (user: a function of one input) at in[0] against the
   output weights in[1], as a function of both (create_graph). */
static ct_tensor *gg_grad(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const ct_gradcheck_fn *f = (const ct_gradcheck_fn *)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true);
    ct_tensor *y = (*f)(in, 1, NULL);
    const ct_tensor *go[1] = {in[1]};
    ct_tensor *g = NULL;
    if (y && ct_autograd_grad(&y, 1, in, 1, go, false, true, false, &g) != CT_OK) {
        g = NULL;
    }
    ct_set_grad_enabled(prev);
    return g;
}

static ct_tensor *gg_cumsum1(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    const int64_t d = 1;
    return gc_cumsum(in, n, (void *)&d);
}

static ct_tensor *gg_cumprod1(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    const int64_t d = 1;
    return gc_cumprod(in, n, (void *)&d);
}

static ct_tensor *gg_cumprod0(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    const int64_t d = 0;
    return gc_cumprod(in, n, (void *)&d);
}

static ct_tensor *gg_logcumsumexp0(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    const int64_t d = 0;
    return gc_logcumsumexp(in, n, (void *)&d);
}

static ct_tensor *gg_prod_dim(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_prod_dim(in[0], 1, false);
}

static ct_tensor *gg_cdist(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    ct_tensor *y = ct_ones_like(in[0]);
    return ct_cdist(in[0], ct_add_scalar(y, 0.25), 2.0, CT_CDIST_DONOT_USE_MM);
}

static void test_reduce2_gradgradcheck(void)
{
    ct_scope_begin();
    const int64_t s[2] = {3, 4}, s1[1] = {3}, s33[2] = {3, 3};
    ct_gradcheck_opts o = ct_gradcheck_defaults();
    ct_tensor *x = ct_requires_grad_(ct_add_scalar(ct_rand(s, 2, F64, NULL), 0.5), true);
    struct {
        const char *name;
        ct_gradcheck_fn f;
        const int64_t *out;
        int nd;
    } cases[5] = {{"cumsum", gg_cumsum1, s, 2}, {"cumprod", gg_cumprod1, s, 2},
                  {"logcumsumexp", gg_logcumsumexp0, s, 2}, {"prod", gg_prod_dim, s1, 1},
                  {"cdist", gg_cdist, s33, 2}};
    for (int k = 0; k < 5; k++) {
        ct_gradcheck_fn f[1] = {cases[k].f};
        ct_tensor *in[2] = {x, ct_requires_grad_(ct_randn(cases[k].out, cases[k].nd, F64, NULL),
                                                 true)};
        CHECK_MSG(ct_gradcheck(gg_grad, in, 2, (void *)f, &o), "%s: %s", cases[k].name,
                  ct_error());
        ct_error_clear();
    }
    /* cumprod with zeros (two in the first column, one in the second) along both dims */
    const double zv[12] = {0.0, 0.5, 1.5, -1.0, 0.0, 1.25, 0.0, 2.0, 0.75, 1.5, 0.5, 0.0};
    ct_tensor *z = ct_requires_grad_(ct_tensor_from_data(zv, F64, s, 2), true);
    ct_gradcheck_fn fz[2] = {gg_cumprod1, gg_cumprod0};
    for (int k = 0; k < 2; k++) {
        ct_tensor *in[2] = {z, ct_requires_grad_(ct_randn(s, 2, F64, NULL), true)};
        CHECK_MSG(ct_gradcheck(gg_grad, in, 2, (void *)&fz[k], &o), "cumprod zeros %d: %s", k,
                  ct_error());
        ct_error_clear();
    }
    ct_scope_end();
}

static void test_reduce2_grad_fn_names(void)
{
    ct_scope_begin();
    const int64_t s[2] = {2, 3};
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 2, F64, NULL), true), *v = NULL;
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_cumsum(x, 1, CT_DTYPE_DEFAULT))),
                  "CumsumBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_cumprod(x, 1, CT_DTYPE_DEFAULT))),
                  "CumprodBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_logcumsumexp(x, 0))), "LogcumsumexpBackward0"));
    CHECK(ct_cummax(x, 0, &v, NULL) == CT_OK && !strcmp(ct_node_name(ct_grad_fn(v)),
                                                         "CummaxBackward0"));
    CHECK(ct_cummin(x, 0, &v, NULL) == CT_OK && !strcmp(ct_node_name(ct_grad_fn(v)),
                                                         "CumminBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_prod(x))), "ProdBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_prod_dim(x, 0, false))), "ProdBackward1"));
    ct_scope_end();
}

static void test_reduce2_errors(void)
{
    ct_scope_begin();
    const int64_t s[2] = {2, 3}, e[2] = {2, 0}, d5 = 5, d00[2] = {0, 0}, d1 = 1, s1 = 3;
    const int64_t s4[2] = {2, 4};
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL), *empty = ct_zeros(e, 2, CT_FLOAT32);
    ct_tensor *i = ct_zeros(s, 2, CT_INT64), *v = NULL, *ix = NULL;
    CHECK(ct_prod_dim(x, 2, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                "got 2)");
    CHECK(ct_cumsum(x, -3, CT_DTYPE_DEFAULT) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                "got -3)");
    CHECK(ct_cumprod(x, 0, (ct_dtype)99) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "invalid dtype 99");
    CHECK(ct_cummax(x, 2, &v, &ix) == CT_ERR_INDEX && v == NULL && ix == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range");
    CHECK(ct_logcumsumexp(i, 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"logcumsumexp\" not implemented for 'Long'");
    CHECK(ct_nanmean(i, NULL, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "nanmean(): expected input to have floating point or complex "
                "dtype but got Long");
    CHECK(ct_nansum(x, &d5, 1, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range");
    CHECK(ct_var_mean(i, NULL, 0, 1.0, false, &v, &ix) == CT_ERR_DTYPE && !v && !ix);
    CHECK_ERROR(CT_ERR_DTYPE, "var_mean only support floating point and complex dtypes");
    CHECK(ct_std_mean(i, NULL, 0, 1.0, false, &v, NULL) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "std_mean only support floating point and complex dtypes");
    CHECK(ct_aminmax(ct_zeros(&s1, 0, CT_FLOAT32), NULL, false, &v, &ix) == CT_OK);
    CHECK(ct_aminmax(empty, NULL, false, &v, &ix) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "aminmax(): cannot compute aminmax over an empty dimension as the "
                "operation has no identity.");
    CHECK(ct_aminmax(empty, &d1, false, &v, &ix) == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "aminmax: Expected reduction dim 1 to have non-zero size.");
    CHECK(ct_count_nonzero(x, d00, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "dim 0 appears multiple times in the list of dims");
    CHECK(ct_dist(i, i, 2.0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "norm(): input dtype should be either floating point or complex. "
                "Got Long instead.");
    CHECK(ct_dist(x, ct_zeros(&d5, 1, CT_FLOAT32), 2.0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (3) must match the size of tensor b (5)");
    CHECK(ct_cdist(ct_zeros(&s1, 1, CT_FLOAT32), x, 2.0, CT_CDIST_USE_MM_IF_NECESSARY) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "cdist only supports at least 2D tensors, X1 got: 1D");
    CHECK(ct_cdist(x, ct_zeros(s4, 2, CT_FLOAT32), 2.0, CT_CDIST_USE_MM_IF_NECESSARY) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "X1 and X2 must have the same number of columns. X1: 3 X2: 4");
    CHECK(ct_cdist(i, i, 2.0, CT_CDIST_USE_MM_IF_NECESSARY) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "cdist only supports floating-point dtypes, X1 got: Long");
    CHECK(ct_cdist(x, ct_to_dtype(x, F64), 2.0, CT_CDIST_USE_MM_IF_NECESSARY) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected scalar type Float but found Double");
    CHECK(ct_cdist(x, x, -1.0, CT_CDIST_USE_MM_IF_NECESSARY) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "cdist only supports non-negative p values");
    CHECK(ct_cdist(x, x, 2.0, (ct_cdist_compute_mode)3) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "possible modes: 0, 1, 2, but was: 3");
    ct_scope_end();
}

/* Empty inputs: the scans give empty results, prod 1, nansum 0, count_nonzero 0. */
static void test_reduce2_empty(void)
{
    ct_scope_begin();
    const int64_t e[2] = {2, 0}, d1 = 1;
    ct_tensor *empty = ct_zeros(e, 2, CT_FLOAT32), *v = NULL, *ix = NULL;
    CHECK(ct_test_has_shape(ct_cumsum(empty, 1, CT_DTYPE_DEFAULT), e, 2));
    CHECK(ct_test_has_shape(ct_logcumsumexp(empty, 0), e, 2));
    CHECK(ct_cummin(empty, 1, &v, &ix) == CT_OK && ct_test_has_shape(ix, e, 2));
    CHECK(ct_item(ct_prod(empty)) == 1.0);
    CHECK(ct_item(ct_nansum(empty, NULL, 0, false)) == 0.0);
    ct_tensor *count = ct_count_nonzero(empty, &d1, 1);
    CHECK(count && ct_numel(count) == 2 && ct_item(ct_sum(count)) == 0.0);
    CHECK(!ct_error());
    ct_scope_end();
}

/* A direct cdist large enough to run in pieces of x1's rows: the same values as over a few
   rows alone, across a piece boundary. */
static void test_reduce2_cdist_pieces(void)
{
    ct_scope_begin();
    const int64_t s1[2] = {300, 8}, s2[2] = {2000, 8}, s3[2] = {300, 2000};
    ct_tensor *a = ct_randn(s1, 2, CT_FLOAT32, NULL), *b = ct_randn(s2, 2, CT_FLOAT32, NULL);
    ct_test_op_log log;
    ct_test_op_log_begin(&log);
    ct_tensor *all = ct_cdist(a, b, 1.0, CT_CDIST_USE_MM_IF_NECESSARY);
    ct_test_op_log_end();
    int pieces = 0; /* calls of narrow on x1: one per piece */
    for (int k = 0; k < log.n; k++) {
        pieces += !strcmp(log.call[k].op->name, "aten::narrow") && log.input0[k] == a;
    }
    CHECK_MSG(pieces == 2, "%d pieces", pieces);
    ct_tensor *few = ct_cdist(ct_narrow(a, 0, 140, 20), b, 1.0, CT_CDIST_USE_MM_IF_NECESSARY);
    ct_tensor *same = ct_contiguous(ct_narrow(all, 0, 140, 20));
    CHECK(ct_test_has_shape(all, s3, 2) && few && same);
    CHECK(same && few && !memcmp(ct_data_ptr(same), ct_data_ptr(few), ct_nbytes(few)));
    ct_scope_end();
}

/* The same bits with 1 and 4 threads (each line scanned in order). */
static void reduce2_thread_results(ct_tensor **r)
{
    const int64_t s[2] = {300, 1001};
    ct_manual_seed(5);
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL), *v = NULL;
    r[0] = ct_keep(ct_cumsum(x, 1, CT_DTYPE_DEFAULT));
    r[1] = ct_keep(ct_cumsum(x, 0, CT_DTYPE_DEFAULT));
    r[2] = ct_keep(ct_cumprod(ct_add_scalar(ct_mul_scalar(x, 0.01), 1.0), 0, CT_DTYPE_DEFAULT));
    r[3] = ct_keep(ct_logcumsumexp(x, 1));
    r[4] = ct_cummax(x, 0, NULL, &v) == CT_OK ? ct_keep(v) : NULL;
    r[5] = ct_keep(ct_prod_dim(ct_add_scalar(ct_mul_scalar(x, 0.001), 1.0), 0, false));
}

static void test_reduce2_thread_count_invariant(void)
{
    CHECK_THREAD_INVARIANT(reduce2_thread_results, 6);
}

void test_reduce2(void)
{
    RUN(test_reduce2_golden);
    RUN(test_reduce2_gradcheck);
    RUN(test_reduce2_gradgradcheck);
    RUN(test_reduce2_grad_fn_names);
    RUN(test_reduce2_errors);
    RUN(test_reduce2_empty);
    RUN(test_reduce2_cdist_pieces);
    RUN(test_reduce2_thread_count_invariant);
}
