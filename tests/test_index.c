/* tests/test_index.c - gather, index_select, scatter, scatter_add, index_add, masked_fill:
 * PyTorch's outputs and gradients (tools/gen_golden_index.py, tests/golden/index_golden.h) on
 * contiguous, transposed and step-sliced inputs and broadcast masks, the in-place forms,
 * gradcheck, PyTorch's errors, and accumulation in index order.
 */
#include "test.h"

typedef struct index_golden {
    const char *op;
    ct_dtype dtype;
    int dim, how;  /* how: 0 contiguous, 1 transposed base, 2 every other element of the base */
    double scalar; /* alpha or value */
    int idx32;
    int nd;
    int64_t base_shape[4];
    double base[48];
    int ind;
    int64_t idx_shape[4];
    int64_t idx[16];
    int snd; /* src/source, or the mask */
    int64_t second_shape[4];
    double second[32];
    int ond;
    int64_t out_shape[4];
    double out[48];
    int grad;
    double grad_self[48];
    double grad_second[32];
} index_golden;
#include "golden/index_golden.h"

#define N_CASES ((int)(sizeof index_golden_cases / sizeof index_golden_cases[0]))

/* The case's self: its base in the case's dtype, then transposed or stepped. */
static ct_tensor *case_self(const index_golden *g)
{
    ct_tensor *b =
        ct_to_dtype(ct_tensor_from_data(g->base, CT_FLOAT64, g->base_shape, g->nd), g->dtype);
    if (g->how == 1) {
        return ct_t(b);
    }
    if (g->how == 2) {
        int64_t s[4];
        memcpy(s, g->base_shape, sizeof s);
        s[g->nd - 1] /= 2;
        s[g->nd] = 2;
        return ct_select(ct_reshape(b, s, g->nd + 1), -1, 0);
    }
    return b;
}

static ct_tensor *case_index(const index_golden *g)
{
    ct_tensor *i = ct_tensor_from_data(g->idx, CT_INT64, g->idx_shape, g->ind);
    return g->idx32 ? ct_to_dtype(i, CT_INT32) : i;
}

static ct_tensor *case_second(const index_golden *g, bool is_mask)
{
    ct_tensor *t = ct_tensor_from_data(g->second, CT_FLOAT64, g->second_shape, g->snd);
    return ct_to_dtype(t, is_mask ? CT_BOOL : g->dtype);
}

/* The case's op, out of place or (inplace) on self. */
static ct_tensor *run_op(const index_golden *g, ct_tensor *self, const ct_tensor *index,
                         const ct_tensor *second, bool inplace)
{
    const char *op = g->op;
    if (!strcmp(op, "gather")) {
        return ct_gather(self, g->dim, index);
    }
    if (!strcmp(op, "index_select")) {
        return ct_index_select(self, g->dim, index);
    }
    if (!strcmp(op, "scatter")) {
        return inplace ? ct_scatter_(self, g->dim, index, second)
                       : ct_scatter(self, g->dim, index, second);
    }
    if (!strcmp(op, "scatter_add")) {
        return inplace ? ct_scatter_add_(self, g->dim, index, second)
                       : ct_scatter_add(self, g->dim, index, second);
    }
    if (!strcmp(op, "index_add")) {
        return inplace ? ct_index_add_(self, g->dim, index, second, g->scalar)
                       : ct_index_add(self, g->dim, index, second, g->scalar);
    }
    return inplace ? ct_masked_fill_(self, second, g->scalar)
                   : ct_masked_fill(self, second, g->scalar);
}

/* Compares t (any dtype) with want: exact for integer and bool dtypes. */
static void check_values(const index_golden *g, const ct_tensor *t, const int64_t *shape, int nd,
                         const double *want, const char *what)
{
    CHECK_MSG(t != NULL, "%s %s: %s", g->op, what, ct_error() ? ct_error() : "NULL");
    if (!t) {
        ct_error_clear();
        return;
    }
    CHECK_MSG(ct_dim(t) == nd, "%s %s: ndim %d, want %d", g->op, what, ct_dim(t), nd);
    for (int d = 0; d < nd && d < ct_dim(t); d++) {
        CHECK_MSG(ct_size(t, d) == shape[d], "%s %s: size %d", g->op, what, d);
    }
    double rtol = g->dtype == CT_FLOAT32 ? 1e-6 : g->dtype == CT_FLOAT64 ? 1e-12 : 0;
    CHECK_TENSOR(ct_to_dtype(t, CT_FLOAT64), want, ct_test_numel(shape, nd), rtol, 0);
}

/* out and, for float cases, the gradients of sum(out * w), w[k] = k % 7 - 3. */
static void check_case(const index_golden *g)
{
    bool is_mask = !strcmp(g->op, "masked_fill");
    ct_tensor *self = case_self(g), *index = case_index(g);
    ct_tensor *second = g->snd ? case_second(g, is_mask) : NULL;
    if (g->grad) {
        ct_requires_grad_(self, true);
        if (second && !is_mask) {
            ct_requires_grad_(second, true);
        }
    }
    ct_tensor *out = run_op(g, self, index, second, false);
    check_values(g, out, g->out_shape, g->ond, g->out, "output");
    if (!g->grad || !out) {
        return;
    }
    double wv[48];
    int64_t self_shape[4];
    for (int64_t k = 0; k < ct_test_numel(g->out_shape, g->ond); k++) {
        wv[k] = (double)(k % 7 - 3);
    }
    for (int d = 0; d < ct_dim(self); d++) {
        self_shape[d] = ct_size(self, d);
    }
    ct_tensor *w = ct_tensor_from_data(wv, CT_FLOAT64, g->out_shape, g->ond);
    CHECK(ct_backward(ct_sum(ct_mul(out, ct_to_dtype(w, g->dtype))), NULL, false) == CT_OK);
    check_values(g, ct_grad(self), self_shape, ct_dim(self), g->grad_self, "grad self");
    if (second && !is_mask) {
        check_values(g, ct_grad(second), g->second_shape, g->snd, g->grad_second, "grad src");
    }
}

/* The in-place form on a copy of self gives the out-of-place result (masked_fill with a mask
   broader than self: PyTorch's error). */
static void check_inplace(const index_golden *g)
{
    bool is_mask = !strcmp(g->op, "masked_fill");
    ct_tensor *self = ct_clone(case_self(g));
    ct_tensor *second = case_second(g, is_mask);
    ct_tensor *r = run_op(g, self, case_index(g), second, true);
    if (g->ond != ct_dim(self)) {
        CHECK(r == NULL);
        CHECK_ERROR(CT_ERR_SHAPE, "output with shape [3, 4] doesn't match the broadcast shape");
        return;
    }
    CHECK(r == self);
    check_values(g, r, g->out_shape, g->ond, g->out, "in-place output");
}

static void test_index_golden(void)
{
    int inplace = 0;
    CHECK(N_CASES == 24);
    for (int k = 0; k < N_CASES; k++) {
        const index_golden *g = &index_golden_cases[k];
        ct_scope_begin();
        check_case(g);
        if (strcmp(g->op, "gather") && strcmp(g->op, "index_select")) {
            check_inplace(g);
            inplace++;
        }
        ct_scope_end();
    }
    CHECK(inplace == 16);
}

/* ---- gradcheck ---------------------------------------------------------------------------- */
static ct_tensor *i64(const int64_t *v, const int64_t *s, int nd)
{
    return ct_tensor_from_data(v, CT_INT64, s, nd);
}

static ct_tensor *gc_gather(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_gather(in[0], 1, (const ct_tensor *)user);
}
static ct_tensor *gc_index_select(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_index_select(in[0], 0, (const ct_tensor *)user);
}
static ct_tensor *gc_scatter(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_scatter(in[0], 1, (const ct_tensor *)user, in[1]);
}
static ct_tensor *gc_scatter_add(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_scatter_add(in[0], 1, (const ct_tensor *)user, in[1]);
}
static ct_tensor *gc_index_add(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_index_add(in[0], 0, (const ct_tensor *)user, in[1], -1.5);
}
static ct_tensor *gc_masked_fill(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_masked_fill(in[0], (const ct_tensor *)user, 3.0);
}
/* The in-place forms on a non-leaf (self * 1). */
static ct_tensor *gc_scatter_add_(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_scatter_add_(ct_mul_scalar(in[0], 1), 1, (const ct_tensor *)user, in[1]);
}
static ct_tensor *gc_masked_fill_(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_masked_fill_(ct_mul_scalar(in[0], 1), (const ct_tensor *)user, 3.0);
}

static void gc(const char *label, ct_gradcheck_fn fn, ct_tensor *a, ct_tensor *b,
               const ct_tensor *user)
{
    ct_tensor *in[2] = {ct_requires_grad_(a, true), b ? ct_requires_grad_(b, true) : NULL};
    CHECK_MSG(ct_gradcheck(fn, in, b ? 2 : 1, (void *)(uintptr_t)user, NULL), "gradcheck %s: %s",
              label, ct_error() ? ct_error() : "?");
    ct_error_clear();
}

static void test_index_gradcheck(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s32[2] = {3, 2}, s31[2] = {3, 1}, s4[1] = {4};
    const int64_t ig[6] = {0, 3, 2, 2, 1, 0}, iv[4] = {2, 0, 2, 1}, iu[6] = {3, 0, 1, 2, 0, 1};
    const int64_t s43[2] = {4, 3}, s44[2] = {4, 4};
    const bool m[4] = {true, false, false, true};
    ct_tensor *gather_ix = i64(ig, s32, 2), *vec = i64(iv, s4, 1), *uniq = i64(iu, s32, 2);
    ct_tensor *mask = ct_tensor_from_data(m, CT_BOOL, s4, 1);
    gc("gather", gc_gather, ct_randn(s34, 2, CT_FLOAT64, NULL), NULL, gather_ix);
    gc("gather transposed", gc_gather, ct_t(ct_randn(s43, 2, CT_FLOAT64, NULL)), NULL, gather_ix);
    gc("index_select", gc_index_select, ct_randn(s34, 2, CT_FLOAT64, NULL), NULL,
       ct_narrow(vec, 0, 0, 3));
    gc("scatter", gc_scatter, ct_randn(s34, 2, CT_FLOAT64, NULL),
       ct_randn(s32, 2, CT_FLOAT64, NULL), uniq);
    gc("scatter_add", gc_scatter_add, ct_randn(s34, 2, CT_FLOAT64, NULL),
       ct_randn(s32, 2, CT_FLOAT64, NULL), gather_ix);
    gc("scatter_add_", gc_scatter_add_, ct_randn(s34, 2, CT_FLOAT64, NULL),
       ct_randn(s32, 2, CT_FLOAT64, NULL), gather_ix);
    gc("index_add", gc_index_add, ct_randn(s34, 2, CT_FLOAT64, NULL),
       ct_randn(s44, 2, CT_FLOAT64, NULL), vec);
    gc("masked_fill", gc_masked_fill, ct_randn(s34, 2, CT_FLOAT64, NULL), NULL, mask);
    gc("masked_fill broadcast self", gc_masked_fill, ct_randn(s31, 2, CT_FLOAT64, NULL), NULL,
       mask);
    gc("masked_fill_", gc_masked_fill_, ct_randn(s34, 2, CT_FLOAT64, NULL), NULL, mask);
    ct_scope_end();
}

/* Double backward: the gradients (create_graph) of sum(f(x...) * w) with respect to the nx
   inputs x..., flattened and concatenated; the last input is w. */
typedef struct gg_case {
    ct_gradcheck_fn f;
    const ct_tensor *user;
    int nx;
} gg_case;

static ct_tensor *gc_gradgrad(ct_tensor *const *in, int n, void *user)
{
    const gg_case *c = (const gg_case *)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = c->f(in, c->nx, (void *)(uintptr_t)c->user);
    const ct_tensor *go[1] = {in[n - 1]};
    ct_tensor *g[2] = {NULL, NULL}, *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, c->nx, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[2] = {ct_flatten(g[0], 0, -1),
                                     c->nx > 1 ? ct_flatten(g[1], 0, -1) : NULL};
        out = ct_cat(parts, c->nx, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

static void test_index_gradgradcheck(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s32[2] = {3, 2}, s4[1] = {4}, s44[2] = {4, 4};
    const int64_t ig[6] = {0, 3, 2, 2, 1, 0}, iu[6] = {3, 0, 1, 2, 0, 1}, iv[4] = {2, 0, 2, 1};
    const bool m[4] = {true, false, false, true};
    ct_tensor *gather_ix = i64(ig, s32, 2), *uniq = i64(iu, s32, 2), *vec = i64(iv, s4, 1);
    gg_case cases[6] = {{gc_gather, gather_ix, 1}, {gc_index_select, vec, 1},
                        {gc_scatter, uniq, 2},     {gc_scatter_add, gather_ix, 2},
                        {gc_index_add, vec, 2},    {gc_masked_fill, NULL, 1}};
    cases[5].user = ct_tensor_from_data(m, CT_BOOL, s4, 1);
    for (int k = 0; k < 6; k++) {
        gg_case *c = &cases[k];
        ct_tensor *in[3] = {ct_requires_grad_(ct_randn(s34, 2, CT_FLOAT64, NULL), true), NULL};
        if (c->nx > 1) {
            const int64_t *s = c->f == gc_index_add ? s44 : s32;
            in[1] = ct_requires_grad_(ct_randn(s, 2, CT_FLOAT64, NULL), true);
        }
        ct_no_grad_begin();
        ct_tensor *y = c->f(in, c->nx, (void *)(uintptr_t)c->user);
        ct_no_grad_end();
        CHECK(y != NULL);
        if (!y) {
            ct_error_clear();
            continue;
        }
        in[c->nx] = ct_requires_grad_(ct_randn(ct_sizes(y), ct_dim(y), CT_FLOAT64, NULL), true);
        CHECK_MSG(ct_gradcheck(gc_gradgrad, in, c->nx + 1, c, NULL), "gradgradcheck %d: %s", k,
                  ct_error() ? ct_error() : "?");
        ct_error_clear();
    }
    ct_scope_end();
}

/* ---- errors ------------------------------------------------------------------------------- */
static void test_index_errors(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s22[2] = {2, 2}, s42[2] = {4, 2}, s2[1] = {2}, s12[2] = {1, 2};
    const int64_t v22[4] = {0, 1, 2, 0}, v2[2] = {0, 1}, v7[2] = {0, 7}, vneg[2] = {0, -1};
    ct_tensor *x = ct_randn(s34, 2, CT_FLOAT32, NULL), *i = i64(v22, s22, 2);
    ct_tensor *src = ct_randn(s22, 2, CT_FLOAT32, NULL);
    ct_tensor *fi = ct_to_dtype(i, CT_FLOAT32);

    CHECK(ct_gather(x, 1, fi) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "gather(): Expected dtype int32/int64 for index");
    CHECK(ct_gather(x, 1, i64(v2, s2, 1)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE,
                "Index tensor must have the same number of dimensions as input tensor");
    CHECK(ct_gather(x, 1, ct_zeros(s42, 2, CT_INT64)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Size does not match at dimension 0 expected index [4, 2] to be "
                              "no larger than self [3, 4] apart from dimension 1");
    CHECK(ct_gather(x, 1, i64(v7, s12, 2)) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 7 is out of bounds for dimension 1 with size 4");
    CHECK(ct_gather(x, -1, i64(vneg, s12, 2)) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index -1 is out of bounds for dimension 1 with size 4");
    CHECK(ct_gather(x, 2, i) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                              "got 2)");

    CHECK(ct_index_select(x, 1, ct_to_dtype(i64(v2, s2, 1), CT_FLOAT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "index_select(): Expected dtype int32 or int64 for index");
    CHECK(ct_index_select(x, 1, i) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index_select(): Index is supposed to be a vector");
    CHECK(ct_index_select(x, 0, i64(v7, s2, 1)) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index out of range in self");
    CHECK(ct_index_select(x, 5, i64(v2, s2, 1)) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range");

    CHECK(ct_scatter(x, 1, i, ct_to_dtype(src, CT_FLOAT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "scatter(): Expected self.dtype to be equal to src.dtype");
    CHECK(ct_scatter_add(x, 1, fi, src) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "scatter(): Expected dtype int32/int64 for index");
    CHECK(ct_scatter(x, 1, i64(v7, s12, 2), src) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 7 is out of bounds for dimension 1 with size 4");
    CHECK(ct_scatter_add(x, 1, i, ct_narrow(ct_narrow(src, 0, 0, 1), 1, 0, 1)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected index [2, 2] to be no larger than self [3, 4] apart "
                              "from dimension 1 and to be no larger size than src [1, 1]");
    CHECK(ct_scatter(x, 1, i, ct_select(src, 0, 0)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Index tensor must have the same number of dimensions as src tensor");
    CHECK(ct_scatter(x, 1, ct_unsqueeze(i, 0), src) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE,
                "Index tensor must have the same number of dimensions as self tensor");

    const int64_t s32[2] = {3, 2}, s33[2] = {3, 3};
    ct_tensor *src32 = ct_randn(s32, 2, CT_FLOAT32, NULL), *ivec = i64(v2, s2, 1);
    CHECK(ct_index_add(x, 1, ivec, ct_to_dtype(src32, CT_FLOAT64), 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE,
                "index_add_(): self (Float) and source (Double) must have the same scalar type");
    CHECK(ct_index_add(x, 1, ct_to_dtype(ivec, CT_FLOAT32), src32, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "index_add_(): Expected dtype int32/int64 for index but got: Float");
    CHECK(ct_index_add(x, 1, i64(v7, s2, 1), src32, 1) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 7 is out of bounds for dimension 1 with size 4");
    CHECK(ct_index_add(x, 1, ivec, ct_randn(s33, 2, CT_FLOAT32, NULL), 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "index_add_(): Number of indices (2) should be equal to "
                              "source.size(dim): (3), for dim: 1");
    CHECK(ct_index_add(x, 1, ivec, src, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "source tensor shape must match self tensor shape, excluding the "
                              "specified dimension. Got self.shape = [3, 4] source.shape = "
                              "[2, 2]");
    CHECK(ct_index_add(x, 1, i64(v2, s12, 2), src32, 1) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index_add_(): Index is supposed to be a vector, but got dim: 2 "
                              "with type: Long and size: [1, 2]");

    CHECK(ct_masked_fill(x, ct_ones(s2, 1, CT_INT64), 2) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE,
                "masked_fill_ only supports boolean masks, but got mask with dtype long int");
    CHECK(ct_masked_fill(x, ct_ones(s2, 1, CT_BOOL), 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (4) must match the size of tensor b (2)");

    /* a failed in-place op leaves self as it was */
    const int64_t v39[2] = {3, 9};
    ct_tensor *before = ct_clone(x);
    CHECK(ct_scatter_add_(x, 1, i64(v39, s12, 2), ct_narrow(src, 0, 0, 1)) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 9 is out of bounds");
    CHECK(ct_item(ct_sum(ct_ne(x, before))) == 0);
    ct_scope_end();
}

/* Duplicates accumulate in index order, with any thread count: in float32
   ((0 + 1e8) + 1) - 1e8 and ((0 + 1) + 1e8) - 1e8 are 0 (1e8 + 1 rounds to 1e8), where
   summing 1e8 and -1e8 first gives 1. */
static void test_index_accumulation_order(void)
{
    ct_scope_begin();
    const float v[3] = {1e8f, 1, -1e8f};
    const int64_t n3 = 3, n1 = 1, iz[3] = {0, 0, 0};
    ct_tensor *src = ct_tensor_from_data(v, CT_FLOAT32, &n3, 1), *idx = i64(iz, &n3, 1);
    const float w[3] = {1, 1e8f, -1e8f};
    ct_tensor *src2 = ct_tensor_from_data(w, CT_FLOAT32, &n3, 1);
    int old = ct_get_num_threads();
    for (int threads = 1; threads <= 4; threads *= 2) {
        CHECK(ct_set_num_threads(threads) == CT_OK);
        CHECK(ct_item(ct_scatter_add(ct_zeros(&n1, 1, CT_FLOAT32), 0, idx, src)) == 0);
        CHECK(ct_item(ct_index_add(ct_zeros(&n1, 1, CT_FLOAT32), 0, idx, src, 1)) == 0);
        CHECK(ct_item(ct_scatter_add(ct_zeros(&n1, 1, CT_FLOAT32), 0, idx, src2)) == 0);
        CHECK(ct_item(ct_index_add(ct_zeros(&n1, 1, CT_FLOAT32), 0, idx, src2, 1)) == 0);
    }
    CHECK(ct_set_num_threads(old) == CT_OK);
    ct_scope_end();
}

/* Large walks split into parallel row chunks give the bits of one thread (scatter_add along
   the last dim is parallel, along dim 0 serial; gather is parallel). */
static void test_index_thread_count(void)
{
    ct_scope_begin();
    ct_manual_seed(3);
    const int64_t s[2] = {64, 4096};
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL), *z = ct_zeros(s, 2, CT_FLOAT32);
    ct_tensor *i1 = ct_randint(0, 4096, s, 2, CT_INT64, NULL);
    ct_tensor *i0 = ct_randint(0, 64, s, 2, CT_INT64, NULL);
    ct_tensor *want[3] = {NULL, NULL, NULL};
    int old = ct_get_num_threads();
    for (int threads = 1; threads <= 4; threads *= 2) {
        CHECK(ct_set_num_threads(threads) == CT_OK);
        ct_tensor *got[3] = {ct_scatter_add(z, 1, i1, x), ct_scatter_add(z, 0, i0, x),
                             ct_gather(x, 1, i1)};
        for (int k = 0; k < 3; k++) {
            if (!want[k]) {
                want[k] = got[k];
            } else {
                CHECK(ct_item(ct_sum(ct_ne(got[k], want[k]))) == 0);
            }
        }
    }
    CHECK(ct_set_num_threads(old) == CT_OK);
    ct_scope_end();
}

/* Strided index and src tensors give what their contiguous copies give. */
static void test_index_strided_operands(void)
{
    ct_scope_begin();
    ct_manual_seed(4);
    const int64_t s34[2] = {3, 4}, s43[2] = {4, 3}, s8[1] = {8};
    ct_tensor *x = ct_randn(s34, 2, CT_FLOAT64, NULL);
    ct_tensor *it = ct_t(ct_randint(0, 3, s43, 2, CT_INT64, NULL)); /* (3, 4), strided */
    ct_tensor *st = ct_t(ct_randn(s43, 2, CT_FLOAT64, NULL));
    ct_tensor *iv = ct_narrow(ct_randint(0, 3, s8, 1, CT_INT32, NULL), 0, 1, 6);
    const int64_t s62[2] = {3, 2};
    ct_tensor *step = ct_select(ct_reshape(iv, s62, 2), 1, 0); /* stride 2 */
    ct_tensor *pairs[4][2] = {
        {ct_gather(x, 0, it), ct_gather(x, 0, ct_contiguous(it))},
        {ct_scatter_add(x, 0, it, st), ct_scatter_add(x, 0, ct_contiguous(it), ct_contiguous(st))},
        {ct_index_select(x, 0, step), ct_index_select(x, 0, ct_contiguous(step))},
        {ct_index_add(x, 0, step, ct_narrow(st, 0, 0, 3), 2),
         ct_index_add(x, 0, ct_contiguous(step), ct_contiguous(ct_narrow(st, 0, 0, 3)), 2)}};
    for (int k = 0; k < 4; k++) {
        CHECK(pairs[k][0] && pairs[k][1] && ct_item(ct_sum(ct_ne(pairs[k][0], pairs[k][1]))) == 0);
    }
    ct_scope_end();
}

/* The grad_fn names PyTorch gives. */
static void test_index_node_names(void)
{
    ct_scope_begin();
    const int64_t s23[2] = {2, 3}, iv[2] = {1, 0}, s2[1] = {2};
    ct_tensor *x = ct_requires_grad_(ct_randn(s23, 2, CT_FLOAT64, NULL), true);
    ct_tensor *i = ct_unsqueeze(i64(iv, s2, 1), 0), *v = ct_select(i, 0, 0);
    const char *want[6] = {"GatherBackward0",     "IndexSelectBackward0", "ScatterBackward0",
                           "ScatterAddBackward0", "IndexAddBackward0",    "MaskedFillBackward0"};
    ct_tensor *got[6] = {ct_gather(x, 1, i),
                         ct_index_select(x, 1, v),
                         ct_scatter(x, 1, i, ct_narrow(x, 1, 0, 2)),
                         ct_scatter_add(x, 1, i, ct_narrow(x, 1, 0, 2)),
                         ct_index_add(x, 1, v, ct_narrow(x, 1, 0, 2), 1),
                         ct_masked_fill(x, ct_gt_scalar(x, 0), 0)};
    for (int k = 0; k < 6; k++) {
        const char *nm = got[k] ? ct_node_name(ct_grad_fn(got[k])) : NULL;
        CHECK_MSG(nm && !strcmp(nm, want[k]), "grad_fn %s, want %s", nm ? nm : "NULL", want[k]);
    }
    ct_scope_end();
}

void test_index(void)
{
    RUN(test_index_golden);
    RUN(test_index_gradcheck);
    RUN(test_index_gradgradcheck);
    RUN(test_index_errors);
    RUN(test_index_accumulation_order);
    RUN(test_index_thread_count);
    RUN(test_index_strided_operands);
    RUN(test_index_node_names);
}
