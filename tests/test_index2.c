/* tests/test_index2.c - issue 7's second slice of views and indexing: repeat, tile,
 * repeat_interleave, flip, fliplr, flipud, roll, rot90, movedim, diagonal, diag, diag_embed,
 * diagflat, as_strided, unfold, the stacks, unbind and the splits, nonzero, argwhere, advanced
 * indexing (index, index_put), masked_select, masked_scatter, index_fill_, index_copy_, take,
 * take_along_dim, scatter_reduce. PyTorch's outputs and gradients
 * (tools/gen_golden_index2.py, tests/golden/index2_golden.h) on contiguous, transposed and
 * step-sliced inputs, gradcheck and gradgradcheck of every float64 case, views sharing
 * storage, PyTorch's errors and results independent of the thread count.
 */
#include "test.h"

typedef struct index2_golden {
    const char *op;
    ct_dtype dtype;
    int how, nd; /* how: 0 contiguous, 1 transposed base, 2 every other element of the base */
    int64_t shape[4];
    int np;
    int64_t p[10]; /* the op's integer arguments (see tools/gen_golden_index2.py's run) */
    double scalar;
    int ind; /* the index tensor (-1: none) */
    int64_t ishape[4];
    int64_t idx[24];
    int ind2; /* the second index tensor */
    int64_t ishape2[4];
    int64_t idx2[8];
    int snd; /* the second input (values1 in the case's dtype; -1: none) */
    int64_t sshape[4];
    int ond, pieces; /* pieces > 0: a list result, compared flattened and concatenated */
    int64_t oshape[6];
    double out[96];
    int grad;
    double g0[48], g1[48];
} index2_golden;
#include "golden/index2_golden.h"

#define N_CASES ((int)(sizeof index2_golden_cases / sizeof index2_golden_cases[0]))
#define MAX_PIECES 8

/* values0 (first) or values1 of the generator, in dtype (exact in each). */
static ct_tensor *make_values(const int64_t *shape, int nd, ct_dtype dtype, bool first)
{
    double v[64];
    int64_t n = ct_test_numel(shape, nd);
    bool floating = dtype == CT_FLOAT32 || dtype == CT_FLOAT64;
    for (int64_t k = 0; k < n; k++) {
        double f = first ? (double)(k * 7 % 19 - 9) * 0.25 : (double)(k * 5 % 13 - 6) * 0.5;
        double i = first ? (double)(k * 7 % 19 - 9) : (double)(k * 5 % 13 - 6);
        v[k] = dtype == CT_BOOL ? (f > 0) : floating ? f : i;
    }
    return ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, shape, nd), dtype);
}

/* The case's input: its base, then transposed or stepped. */
static ct_tensor *case_input(const index2_golden *g)
{
    int64_t base[4];
    memcpy(base, g->shape, sizeof base);
    if (g->how == 1) {
        base[0] = g->shape[1];
        base[1] = g->shape[0];
    } else if (g->how == 2) {
        base[g->nd - 1] *= 2;
    }
    ct_tensor *b = make_values(base, g->nd, g->dtype, true);
    return g->how == 1 ? ct_t(b) : g->how == 2 ? ct_slice(b, -1, 0, INT64_MAX, 2) : b;
}

static const ct_tensor *case_index(const index2_golden *g, int code)
{
    ct_tensor *i = code == 4 ? ct_tensor_from_data(g->idx2, CT_INT64, g->ishape2, g->ind2)
                             : ct_tensor_from_data(g->idx, CT_INT64, g->ishape, g->ind);
    return code == 2 ? ct_to_dtype(i, CT_BOOL) : code == 3 ? ct_to_dtype(i, CT_INT32) : i;
}

/* The flattened pieces of a list result (count, or -1) concatenated. */
static ct_tensor *cat_pieces(int count, ct_tensor **pieces)
{
    const ct_tensor *flat[MAX_PIECES];
    if (count <= 0) {
        return NULL;
    }
    for (int k = 0; k < count; k++) {
        flat[k] = ct_flatten(pieces[k], 0, -1);
    }
    return ct_cat(flat, count, 0);
}

/* The list-result ops. */
static ct_tensor *run_list(const index2_golden *g, const ct_tensor *x)
{
    const char *op = g->op;
    const int64_t *p = g->p;
    ct_tensor *out[MAX_PIECES];
    int n = !strcmp(op, "unbind")           ? ct_unbind(x, p[0], out, MAX_PIECES)
            : !strcmp(op, "tensor_split")   ? ct_tensor_split(x, p[0], p[1], out, MAX_PIECES)
            : !strcmp(op, "hsplit")         ? ct_hsplit(x, p[0], out, MAX_PIECES)
            : !strcmp(op, "vsplit")         ? ct_vsplit(x, p[0], out, MAX_PIECES)
            : !strcmp(op, "dsplit")         ? ct_dsplit(x, p[0], out, MAX_PIECES)
                                            : ct_tensor_split_indices(x, p + 1, g->np - 1, p[0],
                                                                      out, MAX_PIECES);
    CHECK_MSG(n == g->pieces, "%s: %d pieces, want %d", op, n, g->pieces);
    return n == g->pieces ? cat_pieces(n, out) : NULL;
}

/* index and index_put(_): slots p[1..p[0]] (0 ':', 1 idx, 2 idx as a mask, 3 idx as int32,
   4 idx2), accumulate after them. */
static ct_tensor *run_adv(const index2_golden *g, const ct_tensor *x, const ct_tensor *y,
                          bool inplace)
{
    const ct_tensor *list[CT_MAX_DIMS];
    int n = (int)g->p[0];
    for (int k = 0; k < n; k++) {
        list[k] = g->p[1 + k] ? case_index(g, (int)g->p[1 + k]) : NULL;
    }
    if (!strcmp(g->op, "index")) {
        return ct_index(x, list, n);
    }
    bool acc = g->p[1 + n] != 0;
    return inplace ? ct_index_put_(ct_clone(x), list, n, y, acc) : ct_index_put(x, list, n, y, acc);
}

/* The case's op on x (and y), out of place or (inplace) on a clone of x. */
static ct_tensor *run_case(const index2_golden *g, const ct_tensor *x, const ct_tensor *y,
                           bool inplace)
{
    static const char *const reduce[5] = {"sum", "prod", "mean", "amax", "amin"};
    const char *op = g->op;
    const int64_t *p = g->p;
    const ct_tensor *pair[2] = {x, y}, *ix = g->ind >= 0 ? case_index(g, 1) : NULL;
    if (g->pieces) {
        return run_list(g, x);
    }
    if (!strcmp(op, "index") || !strcmp(op, "index_put")) {
        return run_adv(g, x, y, inplace);
    }
    if (!strcmp(op, "masked_scatter")) {
        const ct_tensor *m = case_index(g, 2);
        return inplace ? ct_masked_scatter_(ct_clone(x), m, y) : ct_masked_scatter(x, m, y);
    }
    if (!strcmp(op, "scatter_reduce")) {
        return inplace ? ct_scatter_reduce_(ct_clone(x), p[0], ix, y, reduce[p[1]], p[2] != 0)
                       : ct_scatter_reduce(x, p[0], ix, y, reduce[p[1]], p[2] != 0);
    }
    if (!strcmp(op, "index_fill")) {
        return ct_index_fill_(ct_clone(x), p[0], ix, g->scalar);
    }
    if (!strcmp(op, "index_copy")) {
        return ct_index_copy_(ct_clone(x), p[0], ix, y);
    }
    if (!strcmp(op, "repeat")) {
        return ct_repeat(x, p, g->np);
    }
    if (!strcmp(op, "tile")) {
        return ct_tile(x, p, g->np);
    }
    if (!strcmp(op, "repeat_interleave")) {
        return ct_repeat_interleave(x, p[0], p[1]);
    }
    if (!strcmp(op, "flip")) {
        return ct_flip(x, p, g->np);
    }
    if (!strcmp(op, "fliplr")) {
        return ct_fliplr(x);
    }
    if (!strcmp(op, "flipud")) {
        return ct_flipud(x);
    }
    if (!strcmp(op, "roll")) {
        int ns = (int)p[0];
        return ct_roll(x, p + 1, ns, p + 1 + ns, g->np - 1 - ns);
    }
    if (!strcmp(op, "rot90")) {
        return ct_rot90(x, p[0], p + 1, 2);
    }
    if (!strcmp(op, "movedim")) {
        return ct_movedim(x, p + 1, p + 1 + p[0], (int)p[0]);
    }
    if (!strcmp(op, "diagonal")) {
        return ct_diagonal(x, p[0], p[1], p[2]);
    }
    if (!strcmp(op, "diag")) {
        return ct_diag(x, p[0]);
    }
    if (!strcmp(op, "diag_embed")) {
        return ct_diag_embed(x, p[0], p[1], p[2]);
    }
    if (!strcmp(op, "diagflat")) {
        return ct_diagflat(x, p[0]);
    }
    if (!strcmp(op, "as_strided")) {
        int nd = (int)p[0];
        return ct_as_strided(x, p + 1, p + 1 + nd, nd, p[1 + 2 * nd]);
    }
    if (!strcmp(op, "unfold")) {
        return ct_unfold_view(x, p[0], p[1], p[2]);
    }
    if (!strcmp(op, "hstack")) {
        return ct_hstack(pair, 2);
    }
    if (!strcmp(op, "vstack")) {
        return ct_vstack(pair, 2);
    }
    if (!strcmp(op, "dstack")) {
        return ct_dstack(pair, 2);
    }
    if (!strcmp(op, "column_stack")) {
        return ct_column_stack(pair, 2);
    }
    if (!strcmp(op, "nonzero")) {
        return ct_nonzero(x);
    }
    if (!strcmp(op, "argwhere")) {
        return ct_argwhere(x);
    }
    if (!strcmp(op, "masked_select")) {
        return ct_masked_select(x, case_index(g, 2));
    }
    if (!strcmp(op, "take")) {
        return ct_take(x, ix);
    }
    return ct_take_along_dim(x, ix, p[0]);
}

/* Whether the op has an in-place form next to the out-of-place one. */
static bool has_inplace(const char *op)
{
    return !strcmp(op, "index_put") || !strcmp(op, "masked_scatter") ||
           !strcmp(op, "scatter_reduce");
}

/* Compares t (any dtype) with want (exact for integer and bool results). */
static void check_values(const index2_golden *g, const ct_tensor *t, const int64_t *shape, int nd,
                         const double *want, const char *what, int k)
{
    CHECK_MSG(t != NULL, "case %d %s %s: %s", k, g->op, what, ct_error() ? ct_error() : "NULL");
    if (!t) {
        ct_error_clear();
        return;
    }
    CHECK_MSG(ct_test_has_shape(t, shape, nd), "case %d %s %s: shape", k, g->op, what);
    ct_dtype dt = ct_tensor_dtype(t);
    double rtol = dt == CT_FLOAT32 ? 1e-6 : dt == CT_FLOAT64 ? 1e-12 : 0;
    if (ct_test_has_shape(t, shape, nd)) {
        CHECK_TENSOR(ct_to_dtype(t, CT_FLOAT64), want, ct_test_numel(shape, nd), rtol, 1e-12);
    }
}

/* out and, for float cases, the gradients of sum(out * w), w[k] = k % 7 - 3. */
static void check_case(const index2_golden *g, int k, bool inplace)
{
    ct_tensor *x = case_input(g);
    ct_tensor *y = g->snd >= 0 ? make_values(g->sshape, g->snd, g->dtype, false) : NULL;
    if (g->grad) {
        ct_requires_grad_(x, true);
        if (y) {
            ct_requires_grad_(y, true);
        }
    }
    ct_tensor *out = run_case(g, x, y, inplace);
    check_values(g, out, g->oshape, g->ond, g->out, inplace ? "in-place output" : "output", k);
    if (!g->grad || !out) {
        return;
    }
    double wv[96];
    int64_t n = ct_test_numel(g->oshape, g->ond);
    for (int64_t j = 0; j < n; j++) {
        wv[j] = (double)(j % 7 - 3);
    }
    ct_tensor *w = ct_to_dtype(ct_tensor_from_data(wv, CT_FLOAT64, g->oshape, g->ond), g->dtype);
    CHECK(ct_backward(ct_sum(ct_mul(out, w)), NULL, false) == CT_OK);
    const ct_tensor *gx = ct_grad(x);
    check_values(g, gx ? gx : ct_zeros_like(x), ct_sizes(x), ct_dim(x), g->g0, "grad 0", k);
    if (y) {
        check_values(g, ct_grad(y), g->sshape, g->snd, g->g1, "grad 1", k);
    }
}

static void test_index2_golden(void)
{
    int inplace = 0;
    CHECK(N_CASES == 94);
    for (int k = 0; k < N_CASES; k++) {
        const index2_golden *g = &index2_golden_cases[k];
        ct_scope_begin();
        check_case(g, k, false);
        if (has_inplace(g->op)) {
            check_case(g, k, true);
            inplace++;
        }
        ct_scope_end();
    }
    CHECK(inplace == 19);
}

/* ---- gradcheck and gradgradcheck over every float64 case ---------------------------------- */
/* The case's op on fresh inputs, its output flattened. */
static ct_tensor *gc_case(ct_tensor *const *in, int n, void *user)
{
    const index2_golden *g = (const index2_golden *)user;
    return ct_flatten(run_case(g, in[0], n > 1 ? in[1] : NULL, false), 0, -1);
}

/* Double backward: the gradients (create_graph) of sum(f(x, y) * w) with respect to the
   inputs but the last (w), flattened and concatenated. */
static ct_tensor *gc_gradgrad(ct_tensor *const *in, int n, void *user)
{
    bool prev = ct_is_grad_enabled();
    int nx = n - 1;
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = gc_case(in, nx, user);
    const ct_tensor *go[1] = {in[nx]};
    ct_tensor *g[2] = {NULL, NULL}, *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, nx, go, false, true, true, g) == CT_OK) {
        const ct_tensor *parts[2] = {ct_flatten(g[0] ? g[0] : ct_zeros_like(in[0]), 0, -1),
                                     nx > 1 ? ct_flatten(g[1] ? g[1] : ct_zeros_like(in[1]), 0,
                                                         -1)
                                            : NULL};
        out = ct_cat(parts, nx, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

/* Random float64 inputs of the case's shapes (away from 0, so prod and the ties of amax stay
   clear). */
static int gc_inputs(const index2_golden *g, ct_tensor **in)
{
    in[0] = ct_add_scalar(ct_rand(g->shape, g->nd, CT_FLOAT64, NULL), 0.5);
    in[1] = g->snd >= 0 ? ct_add_scalar(ct_rand(g->sshape, g->snd, CT_FLOAT64, NULL), 0.5) : NULL;
    if (g->how == 1) { /* a transposed input */
        in[0] = ct_t(ct_contiguous(ct_t(in[0])));
    }
    ct_requires_grad_(in[0], true);
    if (in[1]) {
        ct_requires_grad_(in[1], true);
    }
    return in[1] ? 2 : 1;
}

static void test_index2_gradcheck(void)
{
    int checked = 0;
    ct_manual_seed(7);
    for (int k = 0; k < N_CASES; k++) {
        const index2_golden *g = &index2_golden_cases[k];
        if (g->dtype != CT_FLOAT64 || !g->grad || !strcmp(g->op, "as_strided")) {
            continue;
        }
        ct_scope_begin();
        ct_tensor *in[3];
        int n = gc_inputs(g, in);
        CHECK_MSG(ct_gradcheck(gc_case, in, n, (void *)(uintptr_t)g, NULL), "gradcheck %d %s: %s",
                  k, g->op, ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_no_grad_begin();
        ct_tensor *y = gc_case(in, n, (void *)(uintptr_t)g);
        ct_no_grad_end();
        in[n] = y ? ct_requires_grad_(ct_randn(ct_sizes(y), 1, CT_FLOAT64, NULL), true) : NULL;
        CHECK_MSG(y && ct_gradcheck(gc_gradgrad, in, n + 1, (void *)(uintptr_t)g, NULL),
                  "gradgradcheck %d %s: %s", k, g->op, ct_error() ? ct_error() : "?");
        ct_error_clear();
        checked++;
        ct_scope_end();
    }
    CHECK_MSG(checked == 45, "%d float64 cases", checked);
}

/* as_strided's gradient reads storage positions: gradcheck on a contiguous input, with
   overlapping windows (accumulating) and an offset; unfold's overlapping windows too. */
static ct_tensor *gc_as_strided(ct_tensor *const *in, int n, void *user)
{
    const int64_t sizes[2] = {3, 3}, strides[2] = {2, 1};
    (void)n;
    (void)user;
    return ct_as_strided(in[0], sizes, strides, 2, 1);
}

static ct_tensor *gc_unfold(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_unfold_view(ct_mul_scalar(in[0], 2.0), 1, 3, 1);
}

static void test_index2_gradcheck_overlap(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4};
    ct_tensor *in[1] = {ct_requires_grad_(ct_randn(s34, 2, CT_FLOAT64, NULL), true)};
    CHECK(ct_gradcheck(gc_as_strided, in, 1, NULL, NULL));
    CHECK(ct_gradcheck(gc_unfold, in, 1, NULL, NULL));
    ct_error_clear();
    ct_scope_end();
}

/* ---- views share storage, grad_fn names --------------------------------------------------- */
static void test_index2_views(void)
{
    ct_scope_begin();
    const int64_t s234[3] = {2, 3, 4}, s12[1] = {12}, s33[2] = {3, 3}, st[2] = {4, 1};
    const int64_t src[1] = {0}, dst[1] = {-1};
    ct_tensor *x = ct_requires_grad_(ct_randn(s234, 3, CT_FLOAT32, NULL), true);
    ct_tensor *views[5] = {ct_diagonal(x, 0, 1, 2), ct_movedim(x, src, dst, 1),
                           ct_unfold_view(x, 2, 2, 2), ct_as_strided(x, s33, st, 2, 1),
                           ct_select(x, 0, 1)};
    const char *names[5] = {"DiagonalBackward0", "PermuteBackward0", "UnfoldBackward0",
                            "AsStridedBackward0", "SelectBackward0"};
    for (int k = 0; k < 5; k++) {
        CHECK_MSG(views[k] && ct_data_ptr(views[k]) >= ct_data_ptr(x) &&
                      (char *)ct_data_ptr(views[k]) < (char *)ct_data_ptr(x) + 24 * 4,
                  "view %d shares storage", k);
        const char *nm = views[k] ? ct_node_name(ct_grad_fn(views[k])) : NULL;
        CHECK_MSG(nm && !strcmp(nm, names[k]), "view %d: grad_fn %s", k, nm ? nm : "NULL");
    }
    ct_tensor *pieces[3];
    CHECK(ct_unbind(x, 0, pieces, 3) == 2 && ct_data_ptr(pieces[1]) ==
                                                 (char *)ct_data_ptr(x) + 12 * sizeof(float));
    CHECK(ct_unbind(x, 1, NULL, 0) == 3);
    CHECK(ct_tensor_split(x, 5, 2, NULL, 0) == 5);
    /* a write through the diagonal view changes the base */
    ct_tensor *base = ct_zeros(s33, 2, CT_FLOAT32);
    ct_fill_(ct_diagonal(base, 1, 0, 1), 2.0);
    CHECK(ct_item(ct_sum(base)) == 4.0);
    const char *copies[4] = {"FlipBackward0", "DiagEmbedBackward0", "IndexBackward0",
                             "ScatterReduceBackward0"};
    const int64_t d0[1] = {0}, ix[2] = {1, 0}, s2[1] = {2};
    ct_tensor *i = ct_tensor_from_data(ix, CT_INT64, s2, 1);
    ct_tensor *y = ct_requires_grad_(ct_randn(s12, 1, CT_FLOAT32, NULL), true);
    const ct_tensor *list[1] = {i};
    ct_tensor *outs[4] = {ct_flip(y, d0, 1), ct_diag_embed(y, 0, 0, 1), ct_index(y, list, 1),
                          ct_scatter_reduce(y, 0, i, y, "amax", true)};
    for (int k = 0; k < 4; k++) {
        const char *nm = outs[k] ? ct_node_name(ct_grad_fn(outs[k])) : NULL;
        CHECK_MSG(nm && !strcmp(nm, copies[k]), "copy %d: grad_fn %s", k, nm ? nm : "NULL");
    }
    ct_scope_end();
}

/* ---- errors ------------------------------------------------------------------------------- */
static void test_index2_errors_views(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s3[1] = {3}, r1[1] = {2}, rneg[2] = {-1, 2}, d00[2] = {0, 0};
    const int64_t d01[2] = {0, 1}, d3[3] = {0, 1, 2}, sh2[2] = {1, 2}, d1[1] = {1};
    const int64_t big[2] = {4, 4}, one[2] = {1, 1}, negs[2] = {-1, 1};
    ct_tensor *x = ct_randn(s34, 2, CT_FLOAT32, NULL), *v = ct_randn(s3, 1, CT_FLOAT32, NULL);
    ct_tensor *out[4];
    CHECK(ct_repeat(x, r1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Number of dimensions of repeat dims can not be smaller than "
                              "number of dimensions of tensor");
    CHECK(ct_repeat(x, rneg, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Trying to create tensor with negative dimension -3: [-3, 8]");
    CHECK(ct_repeat_interleave(x, -1, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "repeats can not be negative");
    CHECK(ct_flip(x, d00, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "dim 0 appears multiple times in the list of dims");
    CHECK(ct_flip(x, r1, 1) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                              "got 2)");
    CHECK(ct_fliplr(v) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Input must be >= 2-d.");
    CHECK(ct_flipud(ct_sum(v)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Input must be >= 1-d.");
    CHECK(ct_roll(x, sh2, 2, d1, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "shifts and dimensions must align. shifts: 2, dims:1");
    CHECK(ct_rot90(x, 1, d3, 3) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected total rotation dims == 2, but got dims = 3");
    CHECK(ct_rot90(v, 1, d01, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected total dims >= 2, but got total dims = 1");
    CHECK(ct_rot90(x, 1, one, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected rotation dims to be different, but got dim0 = 1 and "
                              "dim1 = 1");
    CHECK(ct_movedim(x, d00, d01, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "movedim: repeated dim in `source` ([0, 0])");
    CHECK(ct_movedim(x, d01, d00, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "movedim: repeated dim in `destination` ([0, 0])");
    CHECK(ct_diagonal(x, 0, 1, -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "diagonal dimensions cannot be identical 1, -1");
    CHECK(ct_diag(ct_unsqueeze(x, 0), 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "diag(): Supports 1D or 2D tensors. Got 3D");
    CHECK(ct_as_strided(x, big, one, 2, 6) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "setStorage: sizes [4, 4], strides [1, 1], storage offset 6, and "
                              "itemsize 4 requiring a storage size of 52 are out of bounds for "
                              "storage of size 48");
    CHECK(ct_as_strided(x, one, negs, 2, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "as_strided: Negative strides are not supported at the moment, "
                              "got strides: [-1, 1]");
    CHECK(ct_unfold_view(x, 1, 5, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "maximum size for tensor at dimension 1 is 4 but size is 5");
    CHECK(ct_unfold_view(x, 1, 2, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "step is 0 but must be > 0");
    CHECK(ct_hstack((const ct_tensor *const *)out, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "hstack expects a non-empty TensorList");
    CHECK(ct_unbind(ct_sum(x), 0, out, 4) == -1);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
    CHECK(ct_unbind(x, 1, out, 3) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "the output array holds 3 tensors but the split makes 4");
    CHECK(ct_tensor_split(x, 0, 0, out, 4) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "number of sections must be larger than 0, got 0");
    CHECK(ct_tensor_split(ct_sum(x), 2, 0, out, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "tensor_split expected at least a 1-dimensional tensor, but got a "
                              "tensor with 0 dims");
    CHECK(ct_hsplit(x, 3, out, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "torch.hsplit attempted to split along dimension 1, but the size "
                              "of the dimension 4 is not divisible by the split_size 3!");
    CHECK(ct_vsplit(v, 3, out, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "torch.vsplit requires a tensor with at least 2 dimension, but "
                              "got a tensor with 1 dimensions!");
    CHECK(ct_dsplit(x, 1, out, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "torch.dsplit requires a tensor with at least 3 dimension, but "
                              "got a tensor with 2 dimensions!");
    ct_error_clear();
    ct_scope_end();
}

static void test_index2_errors_indexing(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s3[1] = {3}, s2[1] = {2}, s22[2] = {2, 2}, s4[1] = {4};
    const int64_t v5[2] = {0, 5}, v2[2] = {0, 2};
    ct_tensor *x = ct_randn(s34, 2, CT_FLOAT32, NULL);
    ct_tensor *i5 = ct_tensor_from_data(v5, CT_INT64, s2, 1);
    ct_tensor *i2 = ct_tensor_from_data(v2, CT_INT64, s2, 1);
    ct_tensor *fi = ct_to_dtype(i2, CT_FLOAT32), *m3 = ct_zeros(s3, 1, CT_BOOL);
    ct_tensor *m4 = ct_zeros(s4, 1, CT_BOOL);
    const ct_tensor *l5[1] = {i5}, *lf[1] = {fi}, *lm[1] = {m4}, *l3[3] = {i2, i2, i2};
    const ct_tensor *l2[2] = {i2, ct_tensor_from_data(v2, CT_INT64, s22, 1)};
    CHECK(ct_index(x, l5, 1) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 5 is out of bounds for dimension 0 with size 3");
    CHECK(ct_index(x, lf, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "tensors used as indices must be long, int, byte or bool tensors");
    CHECK(ct_index(x, lm, 1) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "The shape of the mask [4] at index 0 does not match the shape of "
                              "the indexed tensor [3, 4] at index 0");
    CHECK(ct_index(x, l3, 3) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "too many indices for tensor of dimension 2");
    const int64_t v3[3] = {0, 1, 2};
    l2[1] = ct_tensor_from_data(v3, CT_INT64, s3, 1);
    CHECK(ct_index(x, l2, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "shape mismatch: indexing tensors could not be broadcast together "
                              "with shapes [2], [3]");
    CHECK(ct_index_put(x, l5 + 0, 0, ct_randn(s3, 1, CT_FLOAT32, NULL), false) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "shape mismatch: value tensor of shape [3] cannot be broadcast to "
                              "indexing result of shape [3, 4]");
    const ct_tensor *li[1] = {i2};
    CHECK(ct_index_put(x, li, 1, ct_zeros(s4, 1, CT_FLOAT64), false) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Index put requires the source and destination dtypes match, got "
                              "Float for the destination and Double for the source.");
    CHECK(ct_masked_select(x, ct_to_dtype(m4, CT_INT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "masked_select: expected BoolTensor for mask");
    CHECK(ct_masked_select(x, m3) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "must match");
    CHECK(ct_masked_scatter_(x, ct_to_dtype(m4, CT_INT64), x) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "masked_scatter_ only supports boolean masks, but got mask with "
                              "dtype long int");
    CHECK(ct_masked_scatter_(x, m4, ct_to_dtype(x, CT_FLOAT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "masked_scatter_: expected self and source to have same dtypes but "
                              "got Float and Double");
    CHECK(ct_masked_scatter_(x, ct_logical_not(m4), ct_randn(s3, 1, CT_FLOAT32, NULL)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Number of elements of source < number of ones in mask");
    CHECK(ct_index_fill_(x, 0, fi, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "index_fill_(): Expected dtype int64 for index.");
    CHECK(ct_index_fill_(x, 0, ct_unsqueeze(i2, 0), 1.0) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Index has to be a vector/scalar");
    CHECK(ct_index_fill_(x, 0, i5, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 5 is out of bounds for dimension 0 with size 3");
    CHECK(ct_index_copy_(x, 0, ct_to_dtype(i2, CT_INT32), x) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "index_copy_(): Expected a long tensor for index, but got Int");
    CHECK(ct_index_copy_(x, 0, i2, ct_to_dtype(x, CT_FLOAT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "index_copy_(): self and source expected to have the same dtype, "
                              "but got (self) Float and (source) Double");
    CHECK(ct_index_copy_(x, 0, i2, x) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "index_copy_(): Number of indices (2) should be equal to "
                              "source.size(dim) (3)");
    CHECK(ct_take(x, fi) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "take(): Expected a long tensor for index, but got Float");
    CHECK(ct_take(x, ct_mul_scalar(i5, 3)) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 15 is out of bounds for dimension 0 with size 12");
    CHECK(ct_take_along_dim(x, i2, 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "torch.take_along_dim(): input and indices should have the same "
                              "number of dimensions, but got 2 dimensions for input, and 1 "
                              "dimensions for indices");
    CHECK(ct_take_along_dim(x, ct_to_dtype(i2, CT_INT32), 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "torch.take_along_dim(): dtype of indices should be Long but got "
                              "Int");
    ct_tensor *si = ct_unsqueeze(i2, 0);
    CHECK(ct_scatter_reduce(x, 1, si, x, "max", true) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "reduce argument must be either sum, prod, mean, amax or amin, got "
                              "max");
    CHECK(ct_scatter_reduce(x, 1, ct_mul_scalar(si, 3), x, "sum", true) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 6 is out of bounds for dimension 1 with size 4");
    CHECK(ct_scatter_reduce(x, 1, si, ct_to_dtype(x, CT_FLOAT64), "sum", true) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "scatter(): Expected self.dtype to be equal to src.dtype");
    CHECK(ct_scatter_reduce(ct_to_dtype(x, CT_BOOL), 1, si, ct_to_dtype(x, CT_BOOL), "sum",
                            true) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"scatter_reduce\" not implemented for 'Bool'");
    ct_error_clear();
    ct_scope_end();
}

/* Accumulation order and thread-count independence: index_put accumulate and scatter_reduce
   (sum, mean) with many duplicates in float32 give the same bits on 1 and 4 threads, and
   index reads a large result the same way. */
static void test_index2_threads(void)
{
    ct_scope_begin();
    const int64_t n = 1 << 16, s[1] = {1 << 16}, s2[2] = {64, 1024};
    ct_manual_seed(3);
    ct_tensor *vals = ct_randn(s, 1, CT_FLOAT32, NULL);
    ct_tensor *idx = ct_randint(0, 7, s, 1, CT_INT64, NULL);
    ct_tensor *x = ct_randn(s2, 2, CT_FLOAT32, NULL);
    ct_tensor *ri = ct_randint(0, 64, s, 1, CT_INT64, NULL);
    const ct_tensor *list[1] = {idx}, *rl[1] = {ri};
    ct_tensor *r[2][4];
    int saved = ct_get_num_threads();
    for (int k = 0; k < 2; k++) {
        ct_set_num_threads(k == 0 ? 1 : 4);
        const int64_t seven[1] = {7};
        ct_tensor *z = ct_zeros(seven, 1, CT_FLOAT32);
        r[k][0] = ct_index_put(z, list, 1, vals, true);
        r[k][1] = ct_scatter_reduce(z, 0, idx, vals, "sum", false);
        r[k][2] = ct_scatter_reduce(z, 0, idx, vals, "mean", true);
        r[k][3] = ct_index(x, rl, 1);
    }
    ct_set_num_threads(saved);
    for (int j = 0; j < 4; j++) {
        CHECK_MSG(r[0][j] && r[1][j] && ct_equal(r[0][j], r[1][j]), "result %d", j);
    }
    CHECK(r[0][0] && fabs(ct_item(ct_sum(r[0][0])) - ct_item(ct_sum(vals))) < 1e-2 * (double)n);
    ct_scope_end();
}

/* The gather family checks indices in its parallel rows (out of place) or in a parallel scan
   first (in place): the error names the first bad index in index order, and a failed in-place
   op leaves self unchanged. */
static void test_index2_bounds_order(void)
{
    ct_scope_begin();
    const int64_t s[2] = {64, 1024};
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL), *z = ct_zeros(s, 2, CT_FLOAT32);
    ct_tensor *i = ct_contiguous(ct_randint(0, 1024, s, 2, CT_INT64, NULL));
    int64_t *iv = (int64_t *)ct_data_ptr(i);
    iv[40 * 1024 + 7] = 5000;
    iv[10 * 1024 + 3] = -1;
    CHECK(ct_gather(x, 1, i) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index -1 is out of bounds for dimension 1 with size 1024");
    ct_error_clear();
    CHECK(ct_scatter_add_(z, 1, i, x) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index -1 is out of bounds for dimension 1 with size 1024");
    ct_error_clear();
    CHECK(ct_item(ct_sum(ct_abs(z))) == 0.0);
    iv[10 * 1024 + 3] = 1;
    CHECK(ct_scatter_add(z, 1, i, x) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "index 5000 is out of bounds for dimension 1 with size 1024");
    ct_error_clear();
    ct_scope_end();
}

void test_index2(void)
{
    RUN(test_index2_golden);
    RUN(test_index2_gradcheck);
    RUN(test_index2_gradcheck_overlap);
    RUN(test_index2_views);
    RUN(test_index2_errors_views);
    RUN(test_index2_errors_indexing);
    RUN(test_index2_threads);
    RUN(test_index2_bounds_order);
}
