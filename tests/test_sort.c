/* tests/test_sort.c - sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, quantile,
 * nanquantile, unique, unique_consecutive, isin, searchsorted, bucketize, bincount, histc:
 * PyTorch's outputs, indices and gradients (tools/gen_golden_sort.py,
 * tests/golden/sort_golden.h) on contiguous, transposed and step-sliced inputs with ties, NaN
 * and -0.0, gradcheck, PyTorch's errors, every dtype through the radix sort, and the same bits
 * for any thread count.
 */
#include "test.h"

typedef struct sort_golden {
    const char *op;
    ct_dtype dtype;
    int how; /* 0 contiguous, 1 transposed base, 2 every other element of the base */
    int64_t dim, k;
    int flag; /* descending / largest / invert / right / the quantile interpolation */
    int keepdim, all;
    double lo, hi; /* histc's range */
    int nd;
    int64_t base_shape[4];
    double base[200];
    int snd; /* q, test_elements, boundaries (-1: none) */
    int64_t second_shape[4];
    ct_dtype second_dtype;
    double second[16];
    int ond;
    int64_t out_shape[4];
    double out[200];
    int ind; /* indices or inverse: ndim (-1: none) */
    int64_t idx[200];
    int ncnt; /* counts (-1: none) */
    int64_t cnt[64];
    int grad;
    double grad_in[200];
} sort_golden;

typedef struct bincount_golden {
    int64_t x[8];
    int n, has_w;
    double w[8];
    int64_t minlength;
    ct_dtype dtype;
    int nout;
    double out[16];
} bincount_golden;
#include "golden/sort_golden.h"

#define N_CASES ((int)(sizeof sort_golden_cases / sizeof sort_golden_cases[0]))
static int g_case; /* the golden case being checked, for messages */

/* The case's input: its base in the case's dtype, then transposed or stepped. */
static ct_tensor *case_input(const sort_golden *g)
{
    ct_tensor *b =
        ct_to_dtype(ct_tensor_from_data(g->base, CT_FLOAT64, g->base_shape, g->nd), g->dtype);
    if (g->how == 1) {
        return ct_t(b);
    }
    if (g->how == 2) {
        int64_t s[5];
        memcpy(s, g->base_shape, sizeof(int64_t) * 4);
        s[g->nd - 1] /= 2;
        s[g->nd] = 2;
        return ct_select(ct_reshape(b, s, g->nd + 1), -1, 0);
    }
    return b;
}

static ct_tensor *case_second(const sort_golden *g)
{
    if (g->snd < 0) {
        return NULL;
    }
    ct_tensor *t = ct_tensor_from_data(g->second, CT_FLOAT64, g->second_shape, g->snd);
    return ct_to_dtype(t, g->second_dtype);
}

/* The case's op: the result, and its indices (or inverse) and counts where it has them. */
static ct_tensor *run_op(const sort_golden *g, const ct_tensor *x, const ct_tensor *second,
                         ct_tensor **ix, ct_tensor **cnt)
{
    const char *op = g->op;
    ct_tensor *v = NULL;
    *ix = *cnt = NULL;
    if (!strcmp(op, "sort")) {
        ct_sort(x, g->dim, g->flag, true, &v, ix);
    } else if (!strcmp(op, "argsort")) {
        v = ct_argsort(x, g->dim, g->flag, true);
    } else if (!strcmp(op, "msort")) {
        v = ct_msort(x);
    } else if (!strcmp(op, "topk")) {
        ct_topk(x, g->k, g->dim, g->flag, true, &v, ix);
    } else if (!strcmp(op, "kthvalue")) {
        ct_kthvalue(x, g->k, g->dim, g->keepdim, &v, ix);
    } else if (!strcmp(op, "median_dim")) {
        ct_median_dim(x, g->dim, g->keepdim, &v, ix);
    } else if (!strcmp(op, "nanmedian_dim")) {
        ct_nanmedian_dim(x, g->dim, g->keepdim, &v, ix);
    } else if (!strcmp(op, "mode")) {
        ct_mode(x, g->dim, g->keepdim, &v, ix);
    } else if (!strcmp(op, "median")) {
        v = ct_median(x);
    } else if (!strcmp(op, "nanmedian")) {
        v = ct_nanmedian(x);
    } else if (!strcmp(op, "quantile") || !strcmp(op, "nanquantile")) {
        const int64_t *dim = g->all ? NULL : &g->dim;
        v = op[0] == 'q' ? ct_quantile(x, second, dim, g->keepdim, g->flag)
                         : ct_nanquantile(x, second, dim, g->keepdim, g->flag);
    } else if (!strcmp(op, "unique")) {
        v = ct_unique(x, true, ix, cnt);
    } else if (!strcmp(op, "unique_consecutive")) {
        v = ct_unique_consecutive(x, ix, cnt);
    } else if (!strcmp(op, "isin")) {
        v = ct_isin(x, second, false, g->flag);
    } else if (!strcmp(op, "searchsorted")) {
        v = ct_searchsorted(second, x, false, g->flag, NULL);
    } else if (!strcmp(op, "bucketize")) {
        v = ct_bucketize(x, second, false, g->flag);
    } else {
        v = ct_histc(x, g->k, g->lo, g->hi);
    }
    return v;
}

/* Compares t with want (exactly but for float rounding; NaN equals NaN). */
static void check_values(const sort_golden *g, const ct_tensor *t, const int64_t *shape, int nd,
                         const double *want, const char *what)
{
    CHECK_MSG(t != NULL, "%s %s: %s", g->op, what, ct_error() ? ct_error() : "NULL");
    if (!t) {
        ct_error_clear();
        return;
    }
    CHECK_MSG(ct_test_has_shape(t, shape, nd), "%s %s: shape", g->op, what);
    int64_t n = ct_test_numel(shape, nd);
    ct_tensor *d = ct_contiguous(ct_to_dtype(t, CT_FLOAT64));
    const double *p = (const double *)ct_data_ptr(d);
    for (int64_t k = 0; p && k < n && k < ct_numel(d); k++) {
        bool same =
            (isnan(p[k]) && isnan(want[k])) || fabs(p[k] - want[k]) <= 1e-6 * fabs(want[k]) + 1e-12;
        CHECK_MSG(same, "case %d %s %s [%lld]: %.17g, want %.17g", g_case, g->op, what,
                  (long long)k, p[k], want[k]);
        if (!same) {
            break;
        }
    }
}

static void check_ints(const sort_golden *g, const ct_tensor *t, const int64_t *want, int64_t n,
                       const char *what)
{
    CHECK_MSG(t != NULL && ct_numel(t) == n, "%s %s: %lld elements, want %lld", g->op, what,
              t ? (long long)ct_numel(t) : -1LL, (long long)n);
    if (!t || ct_numel(t) != n) {
        return;
    }
    ct_tensor *c = ct_contiguous(ct_to_dtype(t, CT_INT64));
    const int64_t *p = (const int64_t *)ct_data_ptr(c);
    for (int64_t k = 0; k < n; k++) {
        CHECK_MSG(p[k] == want[k], "case %d %s %s [%lld]: %lld, want %lld", g_case, g->op, what,
                  (long long)k, (long long)p[k], (long long)want[k]);
        if (p[k] != want[k]) {
            break;
        }
    }
}

static void check_case(const sort_golden *g)
{
    ct_tensor *x = case_input(g), *second = case_second(g), *ix, *cnt;
    if (g->grad) {
        ct_requires_grad_(x, true);
    }
    ct_tensor *out = run_op(g, x, second, &ix, &cnt);
    check_values(g, out, g->out_shape, g->ond, g->out, "output");
    if (g->ind >= 0) {
        int64_t n = !strcmp(g->op, "unique") || !strcmp(g->op, "unique_consecutive")
                        ? ct_numel(x)
                        : ct_test_numel(g->out_shape, g->ond);
        check_ints(g, ix, g->idx, n, "indices");
    }
    if (g->ncnt >= 0) {
        check_ints(g, cnt, g->cnt, g->ncnt, "counts");
    }
    if (!g->grad || !out) {
        return;
    }
    double wv[200];
    int64_t xs[4];
    int64_t n = ct_test_numel(g->out_shape, g->ond);
    for (int64_t k = 0; k < n; k++) {
        wv[k] = (double)(k % 7 - 3);
    }
    for (int d = 0; d < ct_dim(x); d++) {
        xs[d] = ct_size(x, d);
    }
    ct_tensor *w = ct_to_dtype(ct_tensor_from_data(wv, CT_FLOAT64, g->out_shape, g->ond), g->dtype);
    CHECK(ct_backward(ct_sum(ct_mul(out, w)), NULL, false) == CT_OK);
    check_values(g, ct_grad(x), xs, ct_dim(x), g->grad_in, "grad");
}

static void test_sort_golden(void)
{
    CHECK(N_CASES == 53);
    for (int k = 0; k < N_CASES; k++) {
        ct_scope_begin();
        g_case = k;
        check_case(&sort_golden_cases[k]);
        ct_scope_end();
    }
}

static void test_sort_bincount_golden(void)
{
    int n = (int)(sizeof bincount_golden_cases / sizeof bincount_golden_cases[0]);
    for (int k = 0; k < n; k++) {
        const bincount_golden *g = &bincount_golden_cases[k];
        ct_scope_begin();
        const int64_t len = g->n, nout = g->nout;
        ct_tensor *x = ct_tensor_from_data(g->x, CT_INT64, &len, 1);
        ct_tensor *w = g->has_w ? ct_tensor_from_data(g->w, CT_FLOAT64, &len, 1) : NULL;
        ct_tensor *out = ct_bincount(ct_to_dtype(x, k == 2 ? CT_UINT8 : CT_INT64), w, g->minlength);
        CHECK_MSG(out && ct_test_has_shape(out, &nout, 1) && ct_tensor_dtype(out) == g->dtype,
                  "bincount %d: %s", k, ct_error() ? ct_error() : "shape or dtype");
        if (out) {
            CHECK_TENSOR(ct_to_dtype(out, CT_FLOAT64), g->out, nout, 0, 0);
        }
        ct_scope_end();
    }
    ct_scope_begin();
    const float wf[3] = {0.5f, 1.25f, 2};
    const int64_t xv[3] = {0, 2, 0}, n3 = 3;
    const double want[3] = {2.5, 0, 1.25};
    ct_tensor *out = ct_bincount(ct_tensor_from_data(xv, CT_INT64, &n3, 1),
                                 ct_tensor_from_data(wf, CT_FLOAT32, &n3, 1), 0);
    CHECK(out && ct_tensor_dtype(out) == CT_FLOAT32); /* PyTorch keeps float32 weights */
    CHECK_TENSOR(out, want, 3, 0, 0);
    ct_scope_end();
}

/* ---- gradcheck ------------------------------------------------------------------------------ */
typedef struct gc_args {
    const char *op;
    int64_t dim, k;
    bool flag, keepdim;
    const ct_tensor *q;
} gc_args;

static ct_tensor *gc_fn(ct_tensor *const *in, int n, void *user)
{
    const gc_args *a = (const gc_args *)user;
    ct_tensor *v = NULL;
    (void)n;
    if (!strcmp(a->op, "sort")) {
        ct_sort(in[0], a->dim, a->flag, false, &v, NULL);
    } else if (!strcmp(a->op, "msort")) {
        v = ct_msort(in[0]);
    } else if (!strcmp(a->op, "topk")) {
        ct_topk(in[0], a->k, a->dim, a->flag, true, &v, NULL);
    } else if (!strcmp(a->op, "kthvalue")) {
        ct_kthvalue(in[0], a->k, a->dim, a->keepdim, &v, NULL);
    } else if (!strcmp(a->op, "median_dim")) {
        ct_median_dim(in[0], a->dim, a->keepdim, &v, NULL);
    } else if (!strcmp(a->op, "nanmedian_dim")) {
        ct_nanmedian_dim(in[0], a->dim, a->keepdim, &v, NULL);
    } else if (!strcmp(a->op, "mode")) {
        ct_mode(in[0], a->dim, a->keepdim, &v, NULL);
    } else if (!strcmp(a->op, "median")) {
        v = ct_median(in[0]);
    } else if (!strcmp(a->op, "nanmedian")) {
        v = ct_nanmedian(in[0]);
    } else {
        const int64_t *dim = a->dim == 99 ? NULL : &a->dim;
        v = a->op[0] == 'q' ? ct_quantile(in[0], a->q, dim, a->keepdim, (int)a->k)
                            : ct_nanquantile(in[0], a->q, dim, a->keepdim, (int)a->k);
    }
    return v;
}

static void test_sort_gradcheck(void)
{
    ct_scope_begin();
    ct_manual_seed(11);
    const int64_t s45[2] = {4, 5}, s54[2] = {5, 4}, s3[1] = {3};
    const double qv[3] = {0.1, 0.5, 0.85};
    ct_tensor *q = ct_tensor_from_data(qv, CT_FLOAT64, s3, 1);
    ct_tensor *q0 = ct_scalar_tensor(0.3, CT_FLOAT64);
    const gc_args cases[] = {
        {"sort", -1, 0, false, false, NULL},     {"sort", 0, 0, true, false, NULL},
        {"msort", 0, 0, false, false, NULL},     {"topk", 1, 3, true, false, NULL},
        {"topk", -1, 2, false, false, NULL},     {"kthvalue", 1, 2, false, true, NULL},
        {"kthvalue", 0, 4, false, false, NULL},  {"median_dim", 1, 0, false, false, NULL},
        {"median_dim", 0, 0, false, true, NULL}, {"nanmedian_dim", -1, 0, false, true, NULL},
        {"mode", 1, 0, false, false, NULL},      {"median", 0, 0, false, false, NULL},
        {"nanmedian", 0, 0, false, false, NULL}, {"quantile", 1, 0, false, false, q},
        {"quantile", 0, 3, false, true, q0},     {"quantile", 99, 4, false, false, q},
        {"nanquantile", 99, 0, false, true, q0}, {"nanquantile", -1, 1, false, false, q},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        /* distinct values (a permutation of 0..19 scaled, plus noise), so no tie moves under
           the finite differences; transposed for every other case */
        ct_tensor *perm = ct_reshape(ct_to_dtype(ct_randperm(20, NULL), CT_FLOAT64), s45, 2);
        ct_tensor *x = ct_add(ct_mul_scalar(perm, 0.1),
                              ct_mul_scalar(ct_rand(s45, 2, CT_FLOAT64, NULL), 0.01));
        x = k % 2 ? ct_t(ct_reshape(x, s54, 2)) : x;
        ct_tensor *in[1] = {ct_requires_grad_(ct_detach(x), true)};
        if (k % 2) {
            in[0] = ct_t(ct_requires_grad_(ct_contiguous(ct_detach(ct_t(x))), true));
        }
        CHECK_MSG(ct_gradcheck(gc_fn, in, 1, (void *)(uintptr_t)&cases[k], NULL),
                  "gradcheck %s (%zu): %s", cases[k].op, k, ct_error() ? ct_error() : "?");
        ct_error_clear();
    }
    ct_scope_end();
}

/* Double backward: with x fixed, d/dw of sum(f(x) * w) is f's vector-Jacobian product at w,
   whose own gradient (through the backward formula, recorded with create_graph) gradcheck
   tests against finite differences in w. */
typedef struct gg_args {
    gc_args f;
    ct_tensor *x;
} gg_args;

static ct_tensor *gg_fn(ct_tensor *const *in, int n, void *user)
{
    const gg_args *a = (const gg_args *)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *xs[1] = {a->x}, *y = gc_fn(xs, 1, (void *)(uintptr_t)&a->f), *g = NULL;
    ct_tensor *s = y ? ct_sum(ct_mul(y, in[0])) : NULL;
    (void)n;
    if (s && ct_autograd_grad(&s, 1, xs, 1, NULL, false, true, false, &g) != CT_OK) {
        g = NULL;
    }
    ct_set_grad_enabled(prev);
    return g;
}

static void test_sort_gradgradcheck(void)
{
    ct_scope_begin();
    ct_manual_seed(12);
    const int64_t s45[2] = {4, 5};
    gg_args cases[4] = {{{"sort", -1, 0, true, false, NULL}, NULL},
                        {{"topk", 0, 2, true, false, NULL}, NULL},
                        {{"median_dim", 1, 0, false, true, NULL}, NULL},
                        {{"quantile", 1, 0, false, false, NULL}, NULL}};
    cases[3].f.q = ct_scalar_tensor(0.4, CT_FLOAT64);
    for (int k = 0; k < 4; k++) {
        ct_tensor *perm = ct_reshape(ct_to_dtype(ct_randperm(20, NULL), CT_FLOAT64), s45, 2);
        cases[k].x = ct_requires_grad_(perm, true);
        ct_tensor *xs[1] = {cases[k].x};
        ct_no_grad_begin();
        ct_tensor *y = gc_fn(xs, 1, &cases[k].f);
        ct_no_grad_end();
        CHECK(y != NULL);
        if (!y) {
            ct_error_clear();
            continue;
        }
        ct_tensor *in[1] = {
            ct_requires_grad_(ct_randn(ct_sizes(y), ct_dim(y), CT_FLOAT64, NULL), true)};
        CHECK_MSG(ct_gradcheck(gg_fn, in, 1, &cases[k], NULL), "gradgradcheck %s: %s",
                  cases[k].f.op, ct_error() ? ct_error() : "?");
        ct_error_clear();
    }
    ct_scope_end();
}

/* ---- errors --------------------------------------------------------------------------------- */
static void test_sort_errors(void)
{
    ct_scope_begin();
    const int64_t s23[2] = {2, 3}, s20[2] = {2, 0}, s2[1] = {2}, s11[2] = {1, 1};
    ct_tensor *x = ct_randn(s23, 2, CT_FLOAT32, NULL), *v = NULL, *i = NULL;
    ct_tensor *l = ct_zeros(s2, 1, CT_INT64), *e = ct_zeros(s20, 2, CT_FLOAT32);

    CHECK(ct_sort(x, 2, false, false, &v, &i) == CT_ERR_INDEX && v == NULL && i == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                              "got 2)");
    CHECK(ct_topk(x, 4, -1, true, true, &v, &i) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "selected index k out of range");
    CHECK(ct_topk(x, -1, -1, true, true, &v, NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "selected index k out of range");
    CHECK(ct_topk(ct_gt_scalar(x, 0), 1, -1, true, true, &v, &i) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "topk does not support bool dtypes on CPU");
    CHECK(ct_kthvalue(x, 4, 1, false, &v, &i) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "kthvalue(): selected number k out of range for dimension 1");
    CHECK(ct_kthvalue(x, 0, 1, false, &v, &i) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "kthvalue(): selected number k out of range for dimension 1");
    CHECK(ct_kthvalue(e, 1, 1, false, &v, &i) == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "kthvalue(): Expected reduction dim 1 to have non-zero size.");
    CHECK(ct_median_dim(e, 1, false, &v, &i) == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "median(): Expected reduction dim 1 to have non-zero size.");
    CHECK(ct_mode(e, -1, false, &v, &i) == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "mode(): Expected reduction dim 1 to have non-zero size.");
    CHECK(ct_median(ct_gt_scalar(x, 0)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"median\" not implemented for 'Bool'");
    /* an empty dim that is not reduced gives empty results, as PyTorch */
    CHECK(ct_median_dim(e, 0, false, &v, &i) == CT_OK && ct_numel(v) == 0 && ct_numel(i) == 0);
    CHECK(ct_topk(x, 0, -1, true, true, &v, &i) == CT_OK && ct_numel(v) == 0);
    CHECK(isnan(ct_item(ct_median(e)))); /* PyTorch: median of an empty tensor is nan */

    ct_tensor *q = ct_scalar_tensor(0.5, CT_FLOAT32);
    const int64_t dim = 1, bad_dim = 3;
    CHECK(ct_quantile(x, ct_scalar_tensor(1.5, CT_FLOAT32), NULL, false, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "quantile() q values must be in the range [0, 1]");
    CHECK(ct_quantile(x, ct_zeros(s11, 2, CT_FLOAT32), NULL, false, 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "quantile() q must be a scalar or 1D tensor");
    CHECK(ct_quantile(ct_to_dtype(x, CT_INT64), q, NULL, false, 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "quantile() input tensor must be either float or double dtype");
    CHECK(ct_quantile(x, ct_to_dtype(q, CT_FLOAT64), &dim, false, 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "quantile() q tensor must be same dtype as the input tensor");
    CHECK(ct_nanquantile(e, q, NULL, false, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "quantile() input tensor must be non-empty");
    CHECK(ct_quantile(x, q, NULL, false, (ct_quantile_interpolation)7) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "quantile() interpolation must be one of linear, lower, higher, "
                              "midpoint or nearest, but got 7");
    const int64_t one = 1, big = ((int64_t)1 << 24) + 1; /* an expanded view: no memory */
    CHECK(ct_quantile(ct_expand(ct_zeros(&one, 1, CT_FLOAT32), &big, 1), q, NULL, false, 0) ==
          NULL);
    CHECK_ERROR(CT_ERR_VALUE, "quantile() input tensor is too large");
    CHECK(ct_quantile(x, q, &bad_dim, false, 0) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range");

    const int64_t s3[1] = {3}, sv[3] = {5, 1, 3}, bad_sorter[3] = {1, 2, 3};
    ct_tensor *seq = ct_tensor_from_data(sv, CT_INT64, s3, 1);
    CHECK(ct_searchsorted(ct_unsqueeze(seq, 0), ct_zeros(s23, 2, CT_INT64), false, false, NULL) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "torch.searchsorted(): boundaries tensor should be 1 dimension or "
                              "the first N-1 dimensions of boundaries tensor and input value "
                              "tensor must match, but we got boundaries tensor [1, 3] and input "
                              "value tensor [2, 3]");
    CHECK(ct_searchsorted(seq, l, false, false, ct_tensor_from_data(bad_sorter, CT_INT64, s3, 1)) ==
          NULL);
    CHECK_ERROR(CT_ERR_INDEX, "torch.searchsorted(): sorter index out of range");
    CHECK(ct_searchsorted(seq, l, false, false, ct_zeros(s3, 1, CT_INT32)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "torch.searchsorted(): sorter must be a tensor of long dtype");
    CHECK(ct_searchsorted(seq, l, false, false, ct_zeros(s2, 1, CT_INT64)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "torch.searchsorted(): boundary and sorter must have the same size");
    CHECK(ct_bucketize(l, ct_unsqueeze(seq, 0), false, false) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "boundaries tensor must be 1 dimension, but got dim(2)");

    const int64_t neg[2] = {1, -1};
    CHECK(ct_bincount(ct_tensor_from_data(neg, CT_INT64, s2, 1), NULL, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "bincount only supports 1-d non-negative integral inputs.");
    CHECK(ct_bincount(ct_unsqueeze(l, 0), NULL, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "bincount only supports 1-d non-negative integral inputs.");
    CHECK(ct_bincount(x, NULL, 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"bincount_cpu\" not implemented for 'Float'");
    CHECK(ct_bincount(l, NULL, -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "minlength should be >= 0");
    CHECK(ct_bincount(l, ct_zeros(s3, 1, CT_FLOAT64), 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "weights should be 1-d and have the same length as input");

    CHECK(ct_histc(l, 3, 0, 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"histc\" not implemented for 'Long'");
    CHECK(ct_histc(x, 0, 0, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "torch.histogram(): bins must be > 0, but got 0 for dimension 0");
    CHECK(ct_histc(x, 3, 3, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "torch.histc: max must be larger than min");
    CHECK(ct_histc(ct_full(s2, 1, NAN, CT_FLOAT32), 3, 0, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "is not finite");
    ct_scope_end();
}

/* ---- every dtype through both sorts ------------------------------------------------------- */
/* Checks that v is x's lines along dim 1 sorted by idx: v[r][j] = x[r][idx[r][j]], ordered
   (NaN last; first when descending), and ties in index order. */
static void check_sorted(const ct_tensor *x, const ct_tensor *v, const ct_tensor *idx, bool desc)
{
    ct_tensor *xd = ct_contiguous(ct_to_dtype(x, CT_FLOAT64));
    ct_tensor *vd = ct_contiguous(ct_to_dtype(v, CT_FLOAT64)), *id = ct_contiguous(idx);
    const double *px = (const double *)ct_data_ptr(xd), *pv = (const double *)ct_data_ptr(vd);
    const int64_t *pi = (const int64_t *)ct_data_ptr(id);
    int64_t rows = ct_size(x, 0), n = ct_size(x, 1), bad = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < n; j++) {
            double a = pv[r * n + j];
            bad +=
                !(px[r * n + pi[r * n + j]] == a || (isnan(a) && isnan(px[r * n + pi[r * n + j]])));
            if (j == 0) {
                continue;
            }
            double p = pv[r * n + j - 1];
            bool nan_ok = desc ? !isnan(a) || isnan(p) : !isnan(p) || isnan(a);
            bool order = isnan(a) || isnan(p) || (desc ? p >= a : p <= a);
            bool tie = (p == a || (isnan(p) && isnan(a)));
            bad += !nan_ok || !order || (tie && pi[r * n + j - 1] > pi[r * n + j]);
        }
    }
    CHECK_MSG(bad == 0, "%lld misplaced elements", (long long)bad);
}

static void test_sort_dtypes(void)
{
    ct_scope_begin();
    ct_manual_seed(5);
    const ct_dtype dts[8] = {CT_BOOL,  CT_UINT8, CT_INT8,    CT_INT16,
                             CT_INT32, CT_INT64, CT_FLOAT32, CT_FLOAT64};
    const int64_t lens[3] = {7, 33, 700};
    for (int d = 0; d < 8; d++) {
        for (int l = 0; l < 3; l++) {
            const int64_t s[2] = {5, lens[l]};
            /* values spread over the dtype's range, with ties; floats also with NaNs */
            const double range[8] = {2, 256, 128, 30000, 2e9, 1e15, 1000, 1000};
            double lo = dts[d] == CT_BOOL || dts[d] == CT_UINT8 ? 0 : -range[d];
            ct_tensor *x = ct_to_dtype(
                ct_randint((int64_t)lo, (int64_t)range[d], s, 2, CT_INT64, NULL), dts[d]);
            if (dts[d] == CT_FLOAT32 || dts[d] == CT_FLOAT64) {
                ct_tensor *nan = ct_lt_scalar(ct_rand(s, 2, CT_FLOAT64, NULL), 0.1);
                x = ct_masked_fill(ct_mul_scalar(x, 0.25), nan, NAN);
            }
            for (int desc = 0; desc < 2; desc++) {
                ct_tensor *v = NULL, *i = NULL;
                CHECK(ct_sort(x, 1, desc, true, &v, &i) == CT_OK);
                if (v && i) {
                    check_sorted(x, v, i, desc);
                }
                ct_tensor *tv = NULL, *ti = NULL;
                if (dts[d] != CT_BOOL) { /* topk gives sort's first k */
                    CHECK(ct_topk(x, lens[l] / 2, 1, desc, true, &tv, &ti) == CT_OK);
                    CHECK(tv && ct_equal(ti, ct_narrow(i, 1, 0, lens[l] / 2)));
                }
            }
        }
    }
    ct_scope_end();
}

/* Sorted lines split over several threads give the bits of one thread. */
static void test_sort_thread_count(void)
{
    ct_scope_begin();
    ct_manual_seed(6);
    const int64_t s[2] = {256, 300};
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL), *want[4] = {NULL, NULL, NULL, NULL};
    int old = ct_get_num_threads();
    for (int threads = 1; threads <= 4; threads *= 2) {
        CHECK(ct_set_num_threads(threads) == CT_OK);
        ct_tensor *got[4] = {NULL, NULL, NULL, NULL};
        ct_sort(x, 1, false, false, &got[0], &got[1]);
        ct_topk(x, 16, 1, true, true, &got[2], &got[3]);
        for (int k = 0; k < 4; k++) {
            if (!want[k]) {
                want[k] = got[k];
            } else {
                CHECK(got[k] && ct_equal(got[k], want[k]));
            }
        }
    }
    CHECK(ct_set_num_threads(old) == CT_OK);
    ct_scope_end();
}

/* The grad_fn names PyTorch gives, and the outputs a caller leaves out are freed. */
static void test_sort_node_names(void)
{
    ct_scope_begin();
    const int64_t s23[2] = {2, 3}, dim = 1;
    ct_tensor *x = ct_requires_grad_(ct_randn(s23, 2, CT_FLOAT64, NULL), true), *v[8];
    ct_sort(x, 1, false, false, &v[0], NULL);
    ct_topk(x, 2, 1, true, true, &v[1], NULL);
    ct_kthvalue(x, 1, 1, false, &v[2], NULL);
    ct_median_dim(x, 1, false, &v[3], NULL);
    ct_mode(x, 1, false, &v[4], NULL);
    v[5] = ct_median(x);
    v[6] = ct_quantile(x, ct_scalar_tensor(0.5, CT_FLOAT64), &dim, false, CT_QUANTILE_LINEAR);
    v[7] = ct_nanmedian(x);
    const char *want[8] = {"SortBackward0",     "TopkBackward0",     "KthvalueBackward0",
                           "MedianBackward1",   "ModeBackward0",     "MedianBackward0",
                           "QuantileBackward0", "NanmedianBackward0"};
    for (int k = 0; k < 8; k++) {
        const char *nm = v[k] ? ct_node_name(ct_grad_fn(v[k])) : NULL;
        CHECK_MSG(nm && !strcmp(nm, want[k]), "grad_fn %s, want %s", nm ? nm : "NULL", want[k]);
    }
    CHECK(ct_argsort(x, 1, false, false) && !ct_requires_grad(ct_argsort(x, 1, false, false)));
    ct_scope_end();
}

void test_sort(void)
{
    RUN(test_sort_golden);
    RUN(test_sort_bincount_golden);
    RUN(test_sort_gradcheck);
    RUN(test_sort_gradgradcheck);
    RUN(test_sort_errors);
    RUN(test_sort_dtypes);
    RUN(test_sort_thread_count);
    RUN(test_sort_node_names);
}
