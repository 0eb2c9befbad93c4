/* ops/index.c - gather, index_select, scatter, scatter_add, index_add and masked_fill, then
 * (second part) nonzero, advanced indexing, masked_select/masked_scatter, take,
 * take_along_dim, index_fill_/index_copy_ and scatter_reduce, as op descriptors.
 *
 * Legend: the five index ops are one family walking a loop shape L (index's shape for
 * gather/scatter, the output's for index_select, source's for index_add). At each position
 * p of L the index tensor gives k; tensor A (read by gather/index_select, written by the
 * others) is addressed at p with p[dim] replaced by k, tensor B (the output, or src/source)
 * at p. The in-place forms check every index before anything is written, so one that fails
 * leaves self unchanged; the others check as they go and report the first bad index in index
 * order (their new output is dropped). The walk goes a row of L's last dim at a time (typed loops by element
 * size, or by dtype for the adds) in row-major order of L, so duplicates accumulate (and the
 * last write wins) in index order. Threads split rows where no two rows write the same element
 * (gather and index_select; the writing ops when dim is L's last dim), else columns of L's
 * last dim (each walked through every row in order), so results are the same for any thread
 * count.
 */
#include "../core/internal.h"
#include "index.h"
#include "pointwise.h"
#include "view.h"

typedef enum ct__ix_mode {
    CT__IX_GATHER,
    CT__IX_SELECT,
    CT__IX_SCATTER,
    CT__IX_SCATTER_ADD,
    CT__IX_INDEX_ADD
} ct__ix_mode;
#define CT__IX_INPLACE 8 /* variant bit: writes self */

/* ---- derivative formulas ------------------------------------------------------------------- */
static const ct_tensor *ct__ix_zeros_like_input(const ct_node *n, const ct_tensor *g)
{
    return ct_zeros(n->next[0].sizes, n->next[0].ndim, g->dtype);
}

CT__GLUE_BEGIN
/* gather: zeros of input's shape, scatter_add-ed with grad at index. */
static void ct__gather_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_scatter_add(ct__ix_zeros_like_input(n, g), (int64_t)n->f[0], ct__saved(n, 1), g);
}

/* index_select: zeros of input's shape, index_add-ed with grad. */
static void ct__index_select_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_index_add(ct__ix_zeros_like_input(n, g), (int64_t)n->f[0], ct__saved(n, 1), g, 1.0);
}

/* scatter: grad with the written positions zeroed; src: grad gathered at index. */
static void ct__scatter_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *index = ct__saved(n, 1);
    int64_t dim = (int64_t)n->f[0];
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_scatter(g, dim, index, ct_zeros(index->sizes, index->ndim, g->dtype));
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_gather(g, dim, index);
    }
}

/* scatter_add: grad passes to input; src: grad gathered at index. */
static void ct__scatter_add_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = (ct_tensor *)(uintptr_t)g;
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_gather(g, (int64_t)n->f[0], ct__saved(n, 1));
    }
}

/* index_add: grad passes to input; source: alpha * grad index_select-ed. */
static void ct__index_add_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = (ct_tensor *)(uintptr_t)g;
    }
    if (ct__needs_grad(n, 2)) {
        ct_tensor *s = ct_index_select(g, (int64_t)n->f[0], ct__saved(n, 1));
        gi[2] = n->f[1] == 1.0 ? s : ct_mul_scalar(s, n->f[1]);
    }
}

/* masked_fill: grad with the masked positions zeroed. */
static void ct__masked_fill_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_masked_fill(g, ct__saved(n, 1), 0.0);
}
CT__GLUE_END

/* ---- meta -------------------------------------------------------------------------------- */
/* PyTorch's ensure_nonempty_dim / ensure_nonempty_size: a 0-dim tensor counts as [1]. */
static int ct__ix_ndim(const ct_tensor *t)
{
    return t->ndim > 0 ? t->ndim : 1;
}
static int64_t ct__ix_size(const ct_tensor *t, int d)
{
    return t->ndim > 0 ? t->sizes[d] : 1;
}

static bool ct__ix_index_dtype_ok(const ct_tensor *index)
{
    return index->dtype == CT_INT32 || index->dtype == CT_INT64;
}

/* gather's checks (PyTorch's gather_shape_check). */
static bool ct__gather_check(const ct_op_call *c, const ct_tensor *self, const ct_tensor *index,
                             int dim)
{
    char a[96], b[96];
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "gather(): Expected dtype int32/int64 for index");
    }
    if (ct__ix_ndim(index) != ct__ix_ndim(self)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "Index tensor must have the same number of dimensions as input tensor");
    }
    for (int d = 0; d < ct__ix_ndim(self); d++) {
        if (d != dim && ct__ix_size(index, d) > ct__ix_size(self, d)) {
            return !ct__fail(CT_ERR_SHAPE, c->fn,
                             "Size does not match at dimension %d expected index %s to be no "
                             "larger than self %s apart from dimension %d",
                             d, ct__shape_str(index->sizes, index->ndim, a, sizeof a),
                             ct__shape_str(self->sizes, self->ndim, b, sizeof b), dim);
        }
    }
    return true;
}

/* scatter's and scatter_add's checks (PyTorch's scatter_gather_dtype_check and
   scatter_shape_check; an empty index skips the shape checks, as there). */
static bool ct__scatter_check(const ct_op_call *c, const ct_tensor *self, const ct_tensor *index,
                              const ct_tensor *src, int dim)
{
    char a[96], b[96], s[96];
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "scatter(): Expected dtype int32/int64 for index");
    }
    if (self->dtype != src->dtype) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "scatter(): Expected self.dtype to be equal to src.dtype");
    }
    if (ct_numel(index) == 0) {
        return true;
    }
    if (ct__ix_ndim(index) != ct__ix_ndim(self) || ct__ix_ndim(index) != ct__ix_ndim(src)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "Index tensor must have the same number of dimensions as %s tensor",
                         ct__ix_ndim(index) != ct__ix_ndim(self) ? "self" : "src");
    }
    for (int d = 0; d < ct__ix_ndim(self); d++) {
        int64_t k = ct__ix_size(index, d);
        if (k > ct__ix_size(src, d) || (d != dim && k > ct__ix_size(self, d))) {
            return !ct__fail(CT_ERR_SHAPE, c->fn,
                             "Expected index %s to be no larger than self %s apart from "
                             "dimension %d and to be no larger size than src %s",
                             ct__shape_str(index->sizes, index->ndim, a, sizeof a),
                             ct__shape_str(self->sizes, self->ndim, b, sizeof b), dim,
                             ct__shape_str(src->sizes, src->ndim, s, sizeof s));
        }
    }
    return true;
}

/* index_select's checks. */
static bool ct__select_check(const ct_op_call *c, const ct_tensor *index)
{
    if (index->ndim > 1) {
        return !ct__fail(CT_ERR_INDEX, c->fn, "index_select(): Index is supposed to be a vector");
    }
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "index_select(): Expected dtype int32 or int64 for index");
    }
    return true;
}

/* index_add's checks (PyTorch's index_func_meta_impl). */
static bool ct__index_add_check(const ct_op_call *c, const ct_tensor *self, const ct_tensor *index,
                                const ct_tensor *src, int dim)
{
    char a[96], b[96];
    if (index->ndim > 1) {
        return !ct__fail(CT_ERR_INDEX, c->fn,
                         "index_add_(): Index is supposed to be a vector, but got dim: %d with "
                         "type: %s and size: %s",
                         index->ndim, ct__dtype_title(index->dtype),
                         ct__shape_str(index->sizes, index->ndim, a, sizeof a));
    }
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "index_add_(): Expected dtype int32/int64 for index but got: %s",
                         ct__dtype_title(index->dtype));
    }
    if (self->dtype != src->dtype) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "index_add_(): self (%s) and source (%s) must have the same scalar type",
                         ct__dtype_title(self->dtype), ct__dtype_title(src->dtype));
    }
    if (dim != 0 && dim >= src->ndim) {
        return !ct__fail(CT_ERR_INDEX, c->fn,
                         "index_add_(): Indexing dim %d is out of bounds of the source tensor "
                         "with dim %d",
                         dim, src->ndim);
    }
    if (ct_numel(index) != ct__ix_size(src, dim)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "index_add_(): Number of indices (%lld) should be equal to "
                         "source.size(dim): (%lld), for dim: %d",
                         (long long)ct_numel(index), (long long)ct__ix_size(src, dim), dim);
    }
    bool same = ct__ix_ndim(self) == ct__ix_ndim(src);
    for (int d = 0; same && d < ct__ix_ndim(self); d++) {
        same = d == dim || ct__ix_size(self, d) == ct__ix_size(src, d);
    }
    if (!same) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "source tensor shape must match self tensor shape, excluding the "
                         "specified dimension. Got self.shape = %s source.shape = %s",
                         ct__shape_str(self->sizes, self->ndim, a, sizeof a),
                         ct__shape_str(src->sizes, src->ndim, b, sizeof b));
    }
    return true;
}

CT__GLUE_BEGIN
/* The index family (inputs self, index[, src]; attributes dim[, alpha]): checks, the wrapped
   dim written back into attribute 0, and the output (self for the in-place forms). */
static bool ct__ix_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *index = c->inputs[1];
    const ct_tensor *src = c->n_inputs > 2 ? c->inputs[2] : NULL;
    int mode = c->op->variant & 7;
    int dim = ct__wrap_dim(c->fn, c->attrs[0].i, self->ndim);
    if (dim < 0) {
        return false;
    }
    c->attrs[0].i = dim;
    c->attrs[0].f = dim;
    bool ok = mode == CT__IX_GATHER      ? ct__gather_check(c, self, index, dim)
              : mode == CT__IX_SELECT    ? ct__select_check(c, index)
              : mode == CT__IX_INDEX_ADD ? ct__index_add_check(c, self, index, src, dim)
                                         : ct__scatter_check(c, self, index, src, dim);
    if (!ok) {
        return false;
    }
    c->dtype = self->dtype;
    if (c->op->variant & CT__IX_INPLACE) {
        c->outputs[c->n_outputs++] = (ct_tensor *)(uintptr_t)self;
        return true;
    }
    if (mode == CT__IX_GATHER) {
        return ct__op_output(c, index->sizes, index->ndim, self->dtype) != NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (mode == CT__IX_SELECT && self->ndim > 0) {
        sizes[dim] = ct_numel(index);
    }
    return ct__op_output(c, sizes, self->ndim, self->dtype) != NULL;
}

/* masked_fill's C++ element type names, as PyTorch's message prints them. */
static const char *ct__ix_ctype(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "",    "bool",     "unsigned char", "signed char", "short int",
        "int", "long int", "float",         "double",      "c10::Half", "c10::BFloat16"};
    return names[d];
}

/* The output of an op whose operands broadcast to sizes (nd dims): a new tensor of self's
   dtype, or for the in-place form self itself, which must have that shape ("output with shape
   [3] doesn't match the broadcast shape [2, 3]"). */
static bool ct__ix_broadcast_output(ct_op_call *c, const ct_tensor *self, const int64_t *sizes,
                                    int nd, bool inplace)
{
    char a[96], b[96];
    c->dtype = self->dtype;
    if (!inplace) {
        return ct__op_output(c, sizes, nd, self->dtype) != NULL;
    }
    if (nd != self->ndim || memcmp(sizes, self->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "output with shape %s doesn't match the broadcast shape %s",
                         ct__shape_str(self->sizes, self->ndim, a, sizeof a),
                         ct__shape_str(sizes, nd, b, sizeof b));
    }
    c->outputs[c->n_outputs++] = (ct_tensor *)(uintptr_t)self;
    return true;
}

/* masked_fill (inputs self, mask; attribute value): a bool mask broadcast with self (to
   self's shape for the in-place form). */
static bool ct__masked_fill_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *mask = c->inputs[1];
    int64_t sizes[CT_MAX_DIMS];
    int nd;
    if (mask->dtype != CT_BOOL) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                         ct__ix_ctype(mask->dtype));
    }
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, mask->sizes, mask->ndim, sizes,
                              &nd)) {
        return false;
    }
    return ct__ix_broadcast_output(c, self, sizes, nd, c->op->variant & CT__IX_INPLACE);
}
CT__GLUE_END

/* ---- kernels ----------------------------------------------------------------------------- */
/* One walk of the family (see the legend), a row of L's last dim at a time. */
typedef struct ct__ix_walk ct__ix_walk;
typedef bool (*ct__ix_row_fn)(const ct__ix_walk *w, char *a, char *b, const char *ix, int64_t n);
struct ct__ix_walk {
    int nd, dim;
    int64_t sizes[CT_MAX_DIMS]; /* the loop shape L */
    char *a, *b, *ix;
    int64_t sa[CT_MAX_DIMS], sb[CT_MAX_DIMS], si[CT_MAX_DIMS]; /* element strides over L */
    int64_t sk; /* A's stride along dim (sa[dim] is 0: the index gives that coordinate) */
    int64_t bound; /* A's size along dim: an index outside [0, bound) stops its row */
    int *bad;      /* counts the rows that met one (then the kernel reports the first) */
    size_t esz, isz;
    double alpha;
    ct__ix_row_fn row;
};

/* The elements of a row with the strides given (constants in the unit-stride case). */
#define CT__IX_LOOP(T, SA, SB, SI, SK, BODY)                                                       \
    for (int64_t j = 0; j < n; j++) {                                                              \
        int64_t k = (int64_t)ix[j * (SI)];                                                         \
        if ((uint64_t)k >= (uint64_t)bound) {                                                      \
            return false;                                                                          \
        }                                                                                          \
        T *pa = a + j * (SA) + k * (SK), *pb = b + j * (SB);                                       \
        BODY;                                                                                      \
    }
/* A row of n elements: pa = A at the index, pb = B; PRE runs once, BODY per element; false at
   an index out of bounds. Along a contiguous last dim (the common gather/scatter_add) the
   strides are constants the compiler sees. */
#define CT__IX_ROW(NAME, T, IX, PRE, BODY)                                                         \
    static bool NAME(const ct__ix_walk *w, char *a0, char *b0, const char *i0, int64_t n)          \
    {                                                                                              \
        T *a = (T *)(void *)a0, *b = (T *)(void *)b0;                                              \
        const IX *ix = (const IX *)(const void *)i0;                                               \
        int64_t sa = w->sa[w->nd - 1], sb = w->sb[w->nd - 1], si = w->si[w->nd - 1];               \
        int64_t sk = w->sk, bound = w->bound;                                                      \
        PRE;                                                                                       \
        if (sa == 0 && sb == 1 && si == 1 && sk == 1) {                                           \
            CT__IX_LOOP(T, 0, 1, 1, 1, BODY)                                                       \
        } else {                                                                                   \
            CT__IX_LOOP(T, sa, sb, si, sk, BODY)                                                   \
        }                                                                                          \
        return true;                                                                               \
    }
/* Copies by element size (gather/index_select read A, scatter writes it). */
#define CT__IX_COPY_ROWS(T, S)                                                                     \
    CT__IX_ROW(ct__ix_get_##S##_i32, T, int32_t, (void)0, *pb = *pa)                               \
    CT__IX_ROW(ct__ix_get_##S##_i64, T, int64_t, (void)0, *pb = *pa)                               \
    CT__IX_ROW(ct__ix_put_##S##_i32, T, int32_t, (void)0, *pa = *pb)                               \
    CT__IX_ROW(ct__ix_put_##S##_i64, T, int64_t, (void)0, *pa = *pb)
CT__IX_COPY_ROWS(uint8_t, 1)
CT__IX_COPY_ROWS(uint16_t, 2)
CT__IX_COPY_ROWS(uint32_t, 4)
CT__IX_COPY_ROWS(uint64_t, 8)
/* A += alpha * B per dtype (bool: logical or; integers wrap; floats: one fma). */
#define CT__IX_ADD_ROWS(T, S, PRE, BODY)                                                           \
    CT__IX_ROW(ct__ix_add_##S##_i32, T, int32_t, PRE, BODY)                                        \
    CT__IX_ROW(ct__ix_add_##S##_i64, T, int64_t, PRE, BODY)
#define CT__IX_ADD_INT(T, S)                                                                       \
    CT__IX_ADD_ROWS(T, S, uint64_t al = (uint64_t)(int64_t)w->alpha,                               \
                    *pa = (T)((uint64_t)(int64_t)*pa + al * (uint64_t)(int64_t)*pb))
CT__IX_ADD_ROWS(bool, b8, bool al = w->alpha != 0.0, *pa = *pa || (*pb && al))
CT__IX_ADD_INT(uint8_t, u8)
CT__IX_ADD_INT(int8_t, i8)
CT__IX_ADD_INT(int16_t, i16)
CT__IX_ADD_INT(int32_t, i32)
CT__IX_ADD_INT(int64_t, i64)
CT__IX_ADD_ROWS(float, f32, float al = (float)w->alpha, *pa = fmaf(al, *pb, *pa))
CT__IX_ADD_ROWS(double, f64, double al = w->alpha, *pa = fma(al, *pb, *pa))
/* float16/bfloat16: each accumulation computed in float32 and rounded to the element, as
   PyTorch's CPU kernels add into half storage (duplicates round once per addition). */
CT__IX_ADD_ROWS(uint16_t, f16, float al = (float)w->alpha,
                *pa = ct_float_to_half(fmaf(al, ct_half_to_float(*pb), ct_half_to_float(*pa))))
CT__IX_ADD_ROWS(uint16_t, bf16, float al = (float)w->alpha,
                *pa = ct_float_to_bfloat16(fmaf(al, ct_bfloat16_to_float(*pb),
                                                ct_bfloat16_to_float(*pa))))

/* Row functions by [int64 index][log2 element size] and [int64 index][dtype]. */
static const ct__ix_row_fn ct__ix_gets[2][4] = {
    {ct__ix_get_1_i32, ct__ix_get_2_i32, ct__ix_get_4_i32, ct__ix_get_8_i32},
    {ct__ix_get_1_i64, ct__ix_get_2_i64, ct__ix_get_4_i64, ct__ix_get_8_i64}};
static const ct__ix_row_fn ct__ix_puts[2][4] = {
    {ct__ix_put_1_i32, ct__ix_put_2_i32, ct__ix_put_4_i32, ct__ix_put_8_i32},
    {ct__ix_put_1_i64, ct__ix_put_2_i64, ct__ix_put_4_i64, ct__ix_put_8_i64}};
static const ct__ix_row_fn ct__ix_adds[2][CT_DTYPE_COUNT] = {
    {NULL, ct__ix_add_b8_i32, ct__ix_add_u8_i32, ct__ix_add_i8_i32, ct__ix_add_i16_i32,
     ct__ix_add_i32_i32, ct__ix_add_i64_i32, ct__ix_add_f32_i32, ct__ix_add_f64_i32,
     ct__ix_add_f16_i32, ct__ix_add_bf16_i32},
    {NULL, ct__ix_add_b8_i64, ct__ix_add_u8_i64, ct__ix_add_i8_i64, ct__ix_add_i16_i64,
     ct__ix_add_i32_i64, ct__ix_add_i64_i64, ct__ix_add_f32_i64, ct__ix_add_f64_i64,
     ct__ix_add_f16_i64, ct__ix_add_bf16_i64}};

/* Advances the row-major position pos over sizes; false after the last one. */
static bool ct__ix_step(int64_t *pos, const int64_t *sizes, int nd)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++pos[d] < sizes[d]) {
            return true;
        }
        pos[d] = 0;
    }
    return false;
}

/* Sizes and element strides of t over nd >= 1 dims (a 0-dim tensor as [1]). */
static void ct__ix_geom(const ct_tensor *t, int64_t *sizes, int64_t *strides)
{
    sizes[0] = 1;
    strides[0] = 0;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
}

/* A parallel scan of index for entries outside [0, bound): rows of its last dim. */
typedef struct ct__ix_scan {
    const ct_tensor *index;
    int nd;
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], bound;
    int *bad;
} ct__ix_scan;

CT__VECTORIZE_BEGIN
/* The smallest and largest entries of a row of n (branch-free: vectorized). */
#define CT__IX_ROW_MAX(IX, P, ST, N, LO, HI)                                                       \
    do {                                                                                           \
        const IX *p_ = (const IX *)(const void *)(P);                                              \
        for (int64_t j = 0; j < (N); j++) {                                                        \
            int64_t v_ = (int64_t)p_[j * (ST)];                                                    \
            (LO) = v_ < (LO) ? v_ : (LO);                                                          \
            (HI) = v_ > (HI) ? v_ : (HI);                                                          \
        }                                                                                          \
    } while (0)

static void ct__ix_scan_rows(int64_t begin, int64_t end, void *ctx)
{
    const ct__ix_scan *s = (const ct__ix_scan *)ctx;
    int64_t pos[CT_MAX_DIMS], r = begin, n = s->sizes[s->nd - 1], st = s->strides[s->nd - 1];
    size_t isz = ct_dtype_size(s->index->dtype);
    for (int d = s->nd - 2; d >= 0; d--) {
        pos[d] = r % s->sizes[d];
        r /= s->sizes[d];
    }
    for (int64_t row = begin; row < end; row++) {
        int64_t off = 0, lo = 0, hi = 0;
        for (int d = 0; d < s->nd - 1; d++) {
            off += pos[d] * s->strides[d];
        }
        const char *p = ct__data(s->index) + off * (int64_t)isz;
        if (s->index->dtype == CT_INT64 && st == 1) {
            CT__IX_ROW_MAX(int64_t, p, 1, n, lo, hi);
        } else if (s->index->dtype == CT_INT64) {
            CT__IX_ROW_MAX(int64_t, p, st, n, lo, hi);
        } else {
            CT__IX_ROW_MAX(int32_t, p, st, n, lo, hi);
        }
        if (lo < 0 || hi >= s->bound) {
            CT__ATOMIC_ADD(s->bad, 1);
            return;
        }
        ct__ix_step(pos, s->sizes, s->nd - 1);
    }
}
#undef CT__IX_ROW_MAX
CT__VECTORIZE_END

/* Checks every entry of index lies in [0, bound): a parallel scan, then, when one does not,
   the first in index order named in the error. */
static ct_status ct__ix_check_bounds(const ct_op_call *c, const ct_tensor *index, int dim,
                                     int64_t bound)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], pos[CT_MAX_DIMS] = {0};
    int nd = ct__ix_ndim(index), bad = 0;
    if (ct_numel(index) == 0) {
        return CT_OK;
    }
    ct__ix_geom(index, sizes, strides);
    ct__ix_scan scan;
    scan.index = index;
    scan.nd = nd;
    scan.bound = bound;
    scan.bad = &bad;
    memcpy(scan.sizes, sizes, sizeof sizes);
    memcpy(scan.strides, strides, sizeof strides);
    int64_t n = sizes[nd - 1], rows = ct_numel(index) / n;
    ct__parallel_for(rows, n >= CT__GRAIN ? 1 : CT__GRAIN / n, ct__ix_scan_rows, &scan);
    if (!bad) {
        return CT_OK;
    }
    do {
        int64_t off = 0;
        for (int d = 0; d < nd - 1; d++) {
            off += pos[d] * strides[d];
        }
        for (int64_t j = 0; j < sizes[nd - 1]; j++) {
            int64_t o = off + j * strides[nd - 1];
            int64_t k = index->dtype == CT_INT64 ? ((const int64_t *)(void *)ct__data(index))[o]
                                                 : ((const int32_t *)(void *)ct__data(index))[o];
            if (k >= 0 && k < bound) {
                continue;
            }
            if ((c->op->variant & 7) == CT__IX_SELECT) {
                return ct__fail(CT_ERR_INDEX, c->fn, "index out of range in self");
            }
            return ct__fail(CT_ERR_INDEX, c->fn,
                            "index %lld is out of bounds for dimension %d with size %lld",
                            (long long)k, dim, (long long)bound);
        }
    } while (ct__ix_step(pos, sizes, nd - 1));
    return CT_OK;
}

/* Rows [begin, end) of the walk (a row: one position of L's dims but the last). */
static void ct__ix_rows(int64_t begin, int64_t end, void *ctx)
{
    const ct__ix_walk *w = (const ct__ix_walk *)ctx;
    int64_t pos[CT_MAX_DIMS], r = begin;
    for (int d = w->nd - 2; d >= 0; d--) {
        pos[d] = r % w->sizes[d];
        r /= w->sizes[d];
    }
    for (int64_t row = begin; row < end; row++) {
        int64_t oa = 0, ob = 0, oi = 0;
        for (int d = 0; d < w->nd - 1; d++) {
            oa += pos[d] * w->sa[d];
            ob += pos[d] * w->sb[d];
            oi += pos[d] * w->si[d];
        }
        if (!w->row(w, w->a + oa * (int64_t)w->esz, w->b + ob * (int64_t)w->esz,
                    w->ix + oi * (int64_t)w->isz, w->sizes[w->nd - 1])) {
            CT__ATOMIC_ADD(w->bad, 1);
            return;
        }
        ct__ix_step(pos, w->sizes, w->nd - 1);
    }
}

/* Columns [begin, end) of L's last dim, through every row in order (for a writing op along
   another dim: a column's elements are written only by that column, in index order). */
static void ct__ix_cols(int64_t begin, int64_t end, void *ctx)
{
    ct__ix_walk w = *(const ct__ix_walk *)ctx;
    int last = w.nd - 1;
    w.a += begin * w.sa[last] * (int64_t)w.esz;
    w.b += begin * w.sb[last] * (int64_t)w.esz;
    w.ix += begin * w.si[last] * (int64_t)w.isz;
    w.sizes[last] = end - begin;
    ct__ix_rows(0, ct__numel(w.sizes, last), &w);
}

/* log2 of an element size of 1, 2, 4 or 8 bytes. */
static int ct__ix_log2(size_t esz)
{
    return esz == 1 ? 0 : esz == 2 ? 1 : esz == 4 ? 2 : 3;
}

/* The index family on the CPU: the in-place forms check every index first (self stays as it
   was on error); self copied into a new output; then the walk, in parallel over rows where no
   two rows write the same element (gather and index_select, or the writing ops along L's last
   dim), else over columns of the last dim. The rows check their indices as they go; when one
   is out of bounds, the first in index order is reported (the new output is dropped). */
static ct_status ct__ix_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *index = c->inputs[1];
    const ct_tensor *src = c->n_inputs > 2 ? c->inputs[2] : NULL;
    ct_tensor *out = c->outputs[0];
    int mode = c->op->variant & 7, dim = (int)c->attrs[0].i, bad = 0;
    int64_t dummy[CT_MAX_DIMS];
    ct_status st = out == self ? ct__ix_check_bounds(c, index, dim, ct__ix_size(self, dim)) : CT_OK;
    if (st != CT_OK) {
        return st;
    }
    bool a_reads = mode == CT__IX_GATHER || mode == CT__IX_SELECT;
    if (!a_reads && out != self) {
        ct__copy_kernel(out, self);
    }
    const ct_tensor *loop = mode == CT__IX_SELECT ? out : mode == CT__IX_INDEX_ADD ? src : index;
    if (ct_numel(loop) == 0) {
        return CT_OK;
    }
    ct__ix_walk w;
    w.nd = ct__ix_ndim(self);
    w.dim = dim;
    w.esz = ct_dtype_size(self->dtype);
    w.isz = ct_dtype_size(index->dtype);
    w.alpha = mode == CT__IX_INDEX_ADD ? c->attrs[1].f : 1.0;
    w.bound = ct__ix_size(self, dim);
    w.bad = &bad;
    ct__ix_geom(loop, w.sizes, dummy);
    ct__ix_geom(a_reads ? self : out, dummy, w.sa);
    ct__ix_geom(a_reads ? out : src, dummy, w.sb);
    w.sk = w.sa[dim];
    w.sa[dim] = 0;
    w.a = ct__data(a_reads ? self : out);
    w.b = ct__data(a_reads ? out : src);
    w.ix = ct__data(index);
    if (loop == index) {
        ct__ix_geom(index, dummy, w.si);
    } else {
        memset(w.si, 0, sizeof w.si);
        w.si[dim] = index->ndim > 0 ? index->strides[0] : 0;
    }
    int i64 = index->dtype == CT_INT64;
    w.row = mode == CT__IX_SCATTER_ADD || mode == CT__IX_INDEX_ADD ? ct__ix_adds[i64][self->dtype]
            : a_reads ? ct__ix_gets[i64][ct__ix_log2(w.esz)]
                      : ct__ix_puts[i64][ct__ix_log2(w.esz)];
    int64_t n = w.sizes[w.nd - 1], rows = ct_numel(loop) / n;
    if (a_reads || dim == w.nd - 1) {
        ct__parallel_for(rows, n >= CT__GRAIN ? 1 : CT__GRAIN / n, ct__ix_rows, &w);
    } else {
        ct__parallel_for(n, rows >= CT__GRAIN ? 1 : CT__GRAIN / rows, ct__ix_cols, &w);
    }
    return bad ? ct__ix_check_bounds(c, index, dim, w.bound) : CT_OK;
}

/* masked_fill's inner loop: data[0] the output, data[1] the mask; params the value's bytes
   (first) and size. */
typedef struct ct__mfill_value {
    union {
        double f64;
        int64_t i64;
        char bytes[8];
    } v;
    size_t esz;
} ct__mfill_value;
static void ct__masked_fill_loop(char **data, const int64_t *strides, int64_t n, const void *params)
{
    const ct__mfill_value *p = (const ct__mfill_value *)params;
    for (int64_t k = 0; k < n; k++) {
        if (*(const bool *)(data[1] + k * strides[1])) {
            memcpy(data[0] + k * strides[0], p->v.bytes, p->esz);
        }
    }
}

/* masked_fill on the CPU: self copied (broadcast) into a new output, then the fill. */
static ct_status ct__masked_fill_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    const ct_tensor *mask = c->inputs[1];
    ct__mfill_value p;
    ct__iter it;
    if (out != c->inputs[0]) {
        ct__copy_kernel(out, c->inputs[0]);
    }
    p.esz = ct_dtype_size(out->dtype);
    ct__store_f64(p.v.bytes, out->dtype, c->attrs[0].f);
    ct__iter_build(&it, out, &mask, 1);
    ct__iter_run(&it, ct__masked_fill_loop, &p);
    return CT_OK;
}

CT__GLUE_BEGIN
/* ---- descriptors ------------------------------------------------------------------------ */
/* K: CT__K_ANY runs float16/bfloat16 natively (copies; index_add rounds each addition, as
   PyTorch); CT__K_ALL through float32 (scatter_add accumulates in float32, as PyTorch). */
#define CT__IX_OP(SYM, NAME, SCHEMA, API, KIND, VAR, META, K, KERNEL, NODE, BW)                    \
    static const ct_op ct__op_##SYM = {                                                            \
        "aten::" NAME, SCHEMA, API,  KIND, CT_AUTOCAST_NONE, VAR,  0u,  NULL, META,                \
        K(KERNEL),     NULL,   NODE, CT__BACKWARD(BW),   1u << 1,          NULL, NULL};

CT__IX_OP(gather, "gather",
          "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
          "ct_gather ct_take_along_dim", CT_OP_OTHER, CT__IX_GATHER, ct__ix_meta, CT__K_ANY,
          ct__ix_kernel, "GatherBackward0", ct__gather_backward)
CT__IX_OP(index_select, "index_select",
          "index_select(Tensor self, int dim, Tensor index) -> Tensor", "ct_index_select",
          CT_OP_OTHER, CT__IX_SELECT, ct__ix_meta, CT__K_ANY, ct__ix_kernel,
          "IndexSelectBackward0", ct__index_select_backward)
CT__IX_OP(scatter, "scatter",
          "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", "ct_scatter",
          CT_OP_OTHER, CT__IX_SCATTER, ct__ix_meta, CT__K_ANY, ct__ix_kernel, "ScatterBackward0",
          ct__scatter_backward)
CT__IX_OP(scatter_, "scatter_",
          "scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
          "ct_scatter_", CT_OP_INPLACE, CT__IX_SCATTER | CT__IX_INPLACE, ct__ix_meta, CT__K_ANY,
          ct__ix_kernel, "ScatterBackward0", ct__scatter_backward)
CT__IX_OP(scatter_add, "scatter_add",
          "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
          "ct_scatter_add", CT_OP_OTHER, CT__IX_SCATTER_ADD, ct__ix_meta, CT__K_ALL,
          ct__ix_kernel, "ScatterAddBackward0", ct__scatter_add_backward)
CT__IX_OP(scatter_add_, "scatter_add_",
          "scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
          "ct_scatter_add_", CT_OP_INPLACE, CT__IX_SCATTER_ADD | CT__IX_INPLACE, ct__ix_meta,
          CT__K_ALL, ct__ix_kernel, "ScatterAddBackward0", ct__scatter_add_backward)
CT__IX_OP(index_add, "index_add",
          "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> "
          "Tensor",
          "ct_index_add", CT_OP_OTHER, CT__IX_INDEX_ADD, ct__ix_meta, CT__K_ANY, ct__ix_kernel,
          "IndexAddBackward0", ct__index_add_backward)
CT__IX_OP(index_add_, "index_add_",
          "index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar "
          "alpha=1) -> Tensor(a!)",
          "ct_index_add_", CT_OP_INPLACE, CT__IX_INDEX_ADD | CT__IX_INPLACE, ct__ix_meta,
          CT__K_ANY, ct__ix_kernel, "IndexAddBackward0", ct__index_add_backward)
CT__IX_OP(masked_fill, "masked_fill",
          "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
          "ct_masked_fill", CT_OP_OTHER, 0, ct__masked_fill_meta, CT__K_ANY,
          ct__masked_fill_kernel, "MaskedFillBackward0", ct__masked_fill_backward)
CT__IX_OP(masked_fill_, "masked_fill_",
          "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
          "ct_masked_fill_", CT_OP_INPLACE, CT__IX_INPLACE, ct__masked_fill_meta, CT__K_ANY,
          ct__masked_fill_kernel, "MaskedFillBackward0", ct__masked_fill_backward)

/* ---- public functions -------------------------------------------------------------------- */
/* A call of op over self, index and src (n_inputs 3) or not (2), with attributes dim and, for
   index_add, alpha. */
static ct_tensor *ct__ix_call(const ct_op *op, const char *fn, const ct_tensor *self, int64_t dim,
                              const ct_tensor *index, const ct_tensor *src, int n_inputs,
                              double alpha)
{
    const ct_tensor *in[3] = {self, index, src};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n_inputs);
    ct__call_i(&c, dim);
    if (op->variant % CT__IX_INPLACE == CT__IX_INDEX_ADD) {
        ct__call_f(&c, alpha);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_gather(const ct_tensor *input, int64_t dim, const ct_tensor *index)
{
    return ct__ix_call(&ct__op_gather, "ct_gather", input, dim, index, NULL, 2, 1.0);
}

ct_tensor *ct_index_select(const ct_tensor *input, int64_t dim, const ct_tensor *index)
{
    return ct__ix_call(&ct__op_index_select, "ct_index_select", input, dim, index, NULL, 2, 1.0);
}

ct_tensor *ct_scatter(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                      const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter, "ct_scatter", input, dim, index, src, 3, 1.0);
}

ct_tensor *ct_scatter_(ct_tensor *self, int64_t dim, const ct_tensor *index, const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter_, "ct_scatter_", self, dim, index, src, 3, 1.0);
}

ct_tensor *ct_scatter_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                          const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter_add, "ct_scatter_add", input, dim, index, src, 3, 1.0);
}

ct_tensor *ct_scatter_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                           const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter_add_, "ct_scatter_add_", self, dim, index, src, 3, 1.0);
}

ct_tensor *ct_index_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                        const ct_tensor *source, double alpha)
{
    return ct__ix_call(&ct__op_index_add, "ct_index_add", input, dim, index, source, 3, alpha);
}

ct_tensor *ct_index_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                         const ct_tensor *source, double alpha)
{
    return ct__ix_call(&ct__op_index_add_, "ct_index_add_", self, dim, index, source, 3, alpha);
}

/* A call of masked_fill (op: the out-of-place or in-place descriptor). */
static ct_tensor *ct__masked_fill_call(const ct_op *op, const char *fn, const ct_tensor *self,
                                       const ct_tensor *mask, double value)
{
    const ct_tensor *in[2] = {self, mask};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    ct__call_f(&c, value);
    return ct__dispatch(&c);
}

ct_tensor *ct_masked_fill(const ct_tensor *input, const ct_tensor *mask, double value)
{
    return ct__masked_fill_call(&ct__op_masked_fill, "ct_masked_fill", input, mask, value);
}

ct_tensor *ct_masked_fill_(ct_tensor *self, const ct_tensor *mask, double value)
{
    return ct__masked_fill_call(&ct__op_masked_fill_, "ct_masked_fill_", self, mask, value);
}

/* ==== issue 7, second slice: nonzero, advanced indexing (index, index_put), masked_select,
   masked_scatter, take, take_along_dim, index_fill_, index_copy_, scatter_reduce ==============
 *
 * Advanced indexing runs on one int64 tensor of shape (k, B...): the k index tensors, masks
 * turned into their nonzero positions' columns, broadcast to B and stacked by the public
 * functions (PyTorch's expandTensors + broadcast); attribute dims names the self dim each
 * indexes. The result's dims follow PyTorch's placement rule: B replaces the indexed dims when
 * they are adjacent, else B comes first. Reads run in parallel over the result; writes
 * (index_put, accumulate or not) run in the result's row-major order, so duplicates
 * accumulate, and the last write wins, in index order for any thread count.
 */
static ct_tensor *ct__adv_call(bool put, const char *fn, const ct_tensor *self,
                               const ct_tensor *stacked, const int64_t *dims, int k,
                               const ct_tensor *values, bool accumulate);

/* ---- derivative formulas ------------------------------------------------------------------- */
/* index: zeros of self's shape with the gradient index_put-accumulated (n->i: the dims). */
static void ct__index_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *stacked = ct__saved(n, 1);
    gi[0] = ct__adv_call(true, "ct_index_put", ct__ix_zeros_like_input(n, g), stacked, n->i,
                         (int)stacked->sizes[0], g, true);
}

/* index_put: self's is the gradient, with the written positions zeroed unless accumulating
   (n->i[CT_MAX_DIMS]); values' is the gradient at the positions. */
static void ct__index_put_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *stacked = ct__saved(n, 1);
    int k = (int)stacked->sizes[0];
    if (ct__needs_grad(n, 0)) {
        gi[0] = n->i[CT_MAX_DIMS] ? (ct_tensor *)(uintptr_t)g
                                  : ct__adv_call(true, "ct_index_put", g, stacked, n->i, k,
                                                 ct_zeros(NULL, 0, g->dtype), false);
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct__adv_call(false, "ct_index", g, stacked, n->i, k, NULL, false);
    }
}

/* masked_scatter: self's is the gradient with the mask's positions zeroed; source's the
   gradient at those positions, then zeros up to source's numel, in source's shape. */
static void ct__masked_scatter_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *mask = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_masked_fill(g, mask, 0.0);
    }
    if (ct__needs_grad(n, 2)) {
        const ct__edge *src = &n->next[2];
        ct_tensor *sel = ct_masked_select(g, mask);
        int64_t rest = ct__numel(src->sizes, src->ndim) - (sel ? ct_numel(sel) : 0);
        const ct_tensor *parts[2] = {sel, ct_zeros(&rest, 1, g->dtype)};
        gi[2] = ct_reshape(ct_cat(parts, 2, 0), src->sizes, src->ndim);
    }
}

typedef enum ct__sr_op { CT__SR_SUM, CT__SR_PROD, CT__SR_MEAN, CT__SR_AMAX, CT__SR_AMIN } ct__sr_op;

/* scatter_reduce (PyTorch's scatter_reduce_backward): saved self, index, src, result; f[] =
   {dim, reduce, include_self}. */
static void ct__scatter_reduce_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *self = ct__saved(n, 0), *index = ct__saved(n, 1), *src = ct__saved(n, 2);
    const ct_tensor *result = ct__saved(n, 3);
    int64_t dim = (int64_t)n->f[0];
    int op = (int)n->f[1];
    bool incl = n->f[2] != 0.0;
    ct_dtype dt = g->dtype;
    ct_tensor *gs = NULL, *gsrc = NULL;
    if (op == CT__SR_SUM) {
        gs = (ct_tensor *)(uintptr_t)g;
        gsrc = ct_gather(g, dim, index);
    } else if (op == CT__SR_MEAN) {
        ct_tensor *cnt = ct_scatter_add(incl ? ct_ones_like(g) : ct_zeros_like(g), dim, index,
                                        ct_ones_like(src));
        cnt = ct_masked_fill(cnt, ct_eq_scalar(cnt, 0.0), 1.0);
        gs = ct_div(g, cnt);
        gsrc = ct_div(ct_gather(g, dim, index), ct_gather(cnt, dim, index));
    } else if (op == CT__SR_PROD) {
        ct_tensor *masked_self = ct_masked_fill(self, ct_eq_scalar(self, 0.0), 1.0);
        ct_tensor *msr = ct_scatter_reduce(masked_self, dim, index, src, "prod", incl);
        gs = ct_div(ct_mul(g, msr), masked_self);
        ct_tensor *src_zero = ct_eq_scalar(src, 0.0);
        ct_tensor *nz = ct_gather(ct_scatter_add(ct_zeros_like(self), dim, index,
                                                 ct_to_dtype(src_zero, dt)), dim, index);
        ct_tensor *single = ct_logical_and(src_zero, ct_eq_scalar(nz, 1.0));
        ct_tensor *masked_src = ct_masked_fill(src, single, 1.0);
        ct_tensor *msrc_res = ct_scatter_reduce(self, dim, index, masked_src, "prod", incl);
        gsrc = ct_where(single, ct_gather(ct_mul(g, msrc_res), dim, index),
                        ct_div(ct_gather(ct_mul(g, result), dim, index),
                               ct_masked_fill(src, src_zero, 1.0)));
    } else {
        ct_tensor *value = ct_gather(result, dim, index);
        ct_tensor *self_is = ct_to_dtype(ct_eq(self, result), dt);
        ct_tensor *src_is = ct_to_dtype(ct_eq(src, value), dt);
        ct_tensor *share = ct_div(g, ct_scatter_add(self_is, dim, index, src_is));
        gs = ct_mul(self_is, share);
        gsrc = ct_mul(src_is, ct_gather(share, dim, index));
    }
    if (!incl && gs) {
        gs = ct_scatter(gs, dim, index, ct_zeros(index->sizes, index->ndim, dt));
    }
    if (ct__needs_grad(n, 0)) {
        gi[0] = gs;
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = gsrc;
    }
}

/* ---- meta -------------------------------------------------------------------------------- */
/* What advanced indexing's meta computes (c->state): the result's shape and, per result dim,
   the self dim it walks (>= 0) or the dim of B (-1 - b). */
typedef struct ct__adv {
    int k, rnd;
    int dims[CT_MAX_DIMS];
    int64_t rsizes[CT_MAX_DIMS];
    int src[CT_MAX_DIMS];
} ct__adv;

/* index and index_put (inputs self, stacked (k, B...) contiguous int64[, values]; attributes
   dims[, accumulate]): the result's geometry; index's output, or index_put's (self for the
   in-place form) after the values checks. */
static bool ct__adv_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *st = c->inputs[1];
    const ct_tensor *values = c->n_inputs > 2 ? c->inputs[2] : NULL;
    ct__adv *a = (ct__adv *)c->state;
    char s1[160], s2[160];
    a->k = (int)c->attrs[0].i;
    int bnd = st->ndim - 1, r = 0;
    bool adjacent = true;
    for (int j = 0; j < a->k; j++) {
        a->dims[j] = (int)c->attrs[0].ints[j];
        adjacent = adjacent && (j == 0 || a->dims[j] == a->dims[j - 1] + 1);
    }
    a->rnd = self->ndim - a->k + bnd;
    if (a->rnd > CT_MAX_DIMS) {
        return !ct__fail(CT_ERR_SHAPE, c->fn, "the indexing result has %d dims (at most %d)",
                         a->rnd, CT_MAX_DIMS);
    }
    int first = a->k == 0 ? 0 : adjacent ? a->dims[0] : 0;
    for (int d = 0; d < first; d++) {
        a->src[r++] = d;
    }
    for (int b = 0; b < bnd; b++) {
        a->src[r++] = -1 - b;
    }
    for (int d = first, j = 0; d < self->ndim; d++) {
        if (j < a->k && a->dims[j] == d) {
            j++;
        } else {
            a->src[r++] = d;
        }
    }
    for (int d = 0; d < a->rnd; d++) {
        a->rsizes[d] = a->src[d] >= 0 ? self->sizes[a->src[d]] : st->sizes[-a->src[d]];
    }
    c->dtype = self->dtype;
    if (!values) {
        return ct__op_output(c, a->rsizes, a->rnd, self->dtype) != NULL;
    }
    if (values->dtype != self->dtype) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "Index put requires the source and destination "
                         "dtypes match, got %s for the destination and %s for the source.",
                         ct__dtype_title(self->dtype), ct__dtype_title(values->dtype));
    }
    bool fits = values->ndim <= a->rnd;
    for (int d = 1; fits && d <= values->ndim; d++) {
        int64_t v = values->sizes[values->ndim - d];
        fits = v == 1 || v == a->rsizes[a->rnd - d];
    }
    if (!fits) {
        return !ct__fail(CT_ERR_SHAPE, c->fn, "shape mismatch: value tensor of shape %s cannot be "
                         "broadcast to indexing result of shape %s",
                         ct__shape_str(values->sizes, values->ndim, s1, sizeof s1),
                         ct__shape_str(a->rsizes, a->rnd, s2, sizeof s2));
    }
    if (c->op->kind == CT_OP_INPLACE) {
        c->outputs[c->n_outputs++] = (ct_tensor *)(uintptr_t)self;
        return true;
    }
    return ct__op_output(c, self->sizes, self->ndim, self->dtype) != NULL;
}

/* masked_scatter (inputs self, mask, source): a bool mask, source of self's dtype; the output
   has the broadcast shape (self's for the in-place form). */
static bool ct__masked_scatter_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *mask = c->inputs[1], *src = c->inputs[2];
    int64_t sizes[CT_MAX_DIMS];
    int nd;
    if (mask->dtype != CT_BOOL) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "masked_scatter_ only supports boolean masks, but "
                         "got mask with dtype %s", ct__ix_ctype(mask->dtype));
    }
    if (src->dtype != self->dtype) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "masked_scatter_: expected self and source to have "
                         "same dtypes but got %s and %s", ct__dtype_title(self->dtype),
                         ct__dtype_title(src->dtype));
    }
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, mask->sizes, mask->ndim, sizes,
                              &nd)) {
        return false;
    }
    return ct__ix_broadcast_output(c, self, sizes, nd, c->op->kind == CT_OP_INPLACE);
}

static bool ct__nonzero_meta(ct_op_call *c)
{
    c->dtype = c->inputs[0]->dtype;
    return true;
}

/* ---- kernels ----------------------------------------------------------------------------- */
/* Element offset of t at position pos of a shape of nd dims that t broadcasts to (trailing
   dims aligned; t's size-1 dims contribute nothing). */
static int64_t ct__bc_offset(const ct_tensor *t, const int64_t *pos, int nd)
{
    int64_t o = t->offset;
    for (int d = 1; d <= t->ndim; d++) {
        if (t->sizes[t->ndim - d] != 1) {
            o += pos[nd - d] * t->strides[t->ndim - d];
        }
    }
    return o;
}

/* Copies one element of esz bytes. */
static void ct__copy_elem(char *d, const char *s, size_t esz)
{
    switch (esz) {
    case 1:
        memcpy(d, s, 1);
        break;
    case 2:
        memcpy(d, s, 2);
        break;
    case 4:
        memcpy(d, s, 4);
        break;
    default:
        memcpy(d, s, 8);
    }
}

/* Adds the element at s to the one at d (dtype dt; bool: or; integers wrap). */
static void ct__add_elem(ct_dtype dt, char *d, const char *s)
{
    double x = ct__load_f64(d, dt), y = ct__load_f64(s, dt);
    switch (dt) {
    case CT_FLOAT32:
        *(float *)(void *)d += *(const float *)(const void *)s;
        break;
    case CT_FLOAT64:
        *(double *)(void *)d = x + y;
        break;
    case CT_INT64:
        *(int64_t *)(void *)d = (int64_t)((uint64_t) * (int64_t *)(void *)d +
                                          (uint64_t) * (const int64_t *)(const void *)s);
        break;
    case CT_BOOL:
        *(bool *)(void *)d = x != 0.0 || y != 0.0;
        break;
    case CT_FLOAT16:
    case CT_BFLOAT16: /* computed in float32, rounded to the element, as PyTorch's += */
        ct__store_f64(d, dt, (double)((float)x + (float)y));
        break;
    default: /* the narrower integers: exact in double, wrapped by the store */
        ct__store_f64(d, dt, x + y);
    }
}

/* The advanced-indexing walk over the result's positions: t the indexed tensor. */
typedef struct ct__adv_walk {
    const ct__adv *a;
    const ct_tensor *t, *st, *src; /* src: index's output, or index_put's values */
    char *out;                     /* index: the output's data */
    size_t esz;
    int64_t bnumel;
    bool put, accumulate;
} ct__adv_walk;

/* Element offset of w->t at result position pos. */
static int64_t ct__adv_offset(const ct__adv_walk *w, const int64_t *pos)
{
    const ct__adv *a = w->a;
    const ct_tensor *t = w->t, *st = w->st;
    int64_t o = t->offset, b = 0;
    for (int d = 0; d < a->rnd; d++) {
        if (a->src[d] >= 0) {
            o += pos[d] * t->strides[a->src[d]];
        } else {
            b += pos[d] * st->strides[-a->src[d]];
        }
    }
    const int64_t *ix = (const int64_t *)(const void *)ct__data(st) + b;
    for (int j = 0; j < a->k; j++) {
        int64_t v = ix[j * st->strides[0]];
        o += (v < 0 ? v + t->sizes[a->dims[j]] : v) * t->strides[a->dims[j]];
    }
    return o;
}

/* Result positions [begin, end): index copies into its contiguous output; index_put writes
   (or adds) values into t. */
static void ct__adv_chunk(int64_t begin, int64_t end, void *ctx)
{
    const ct__adv_walk *w = (const ct__adv_walk *)ctx;
    int64_t pos[CT_MAX_DIMS], r = begin;
    char *base = (char *)w->t->storage->data;
    for (int d = w->a->rnd - 1; d >= 0; d--) {
        pos[d] = r % w->a->rsizes[d];
        r /= w->a->rsizes[d];
    }
    for (int64_t e = begin; e < end; e++) {
        char *p = base + ct__adv_offset(w, pos) * (int64_t)w->esz;
        if (!w->put) {
            ct__copy_elem(w->out + e * (int64_t)w->esz, p, w->esz);
        } else {
            const char *v = (const char *)w->src->storage->data +
                            ct__bc_offset(w->src, pos, w->a->rnd) * (int64_t)w->esz;
            if (w->accumulate) {
                ct__add_elem(w->t->dtype, p, v);
            } else {
                ct__copy_elem(p, v, w->esz);
            }
        }
        ct__ix_step(pos, w->a->rsizes, w->a->rnd);
    }
}

/* Checks every index of the stacked tensor against the size of the dim it indexes. */
static ct_status ct__adv_bounds(const ct_op_call *c, const ct__adv *a, const ct_tensor *self,
                                const ct_tensor *st)
{
    const int64_t *ix = (const int64_t *)(const void *)ct__data(st);
    int64_t bn = a->k ? ct_numel(st) / a->k : 0;
    for (int j = 0; j < a->k; j++) {
        int64_t size = self->sizes[a->dims[j]];
        for (int64_t b = 0; b < bn; b++) {
            int64_t v = ix[j * bn + b];
            if (v < -size || v >= size) {
                return ct__fail(CT_ERR_INDEX, c->fn, "index %lld is out of bounds for dimension "
                                "%d with size %lld", (long long)v, a->dims[j], (long long)size);
            }
        }
    }
    return CT_OK;
}

/* index and index_put on the CPU (any dtype): bounds, then the walk (index in parallel,
   index_put in order). */
static ct_status ct__adv_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0];
    const ct__adv *a = (const ct__adv *)c->state;
    ct_tensor *out = c->outputs[0];
    ct__adv_walk w;
    ct_status s = ct__adv_bounds(c, a, self, c->inputs[1]);
    if (s != CT_OK) {
        return s;
    }
    w.a = a;
    w.st = c->inputs[1];
    w.esz = ct_dtype_size(self->dtype);
    w.put = c->n_inputs > 2;
    w.accumulate = w.put && c->attrs[1].i != 0;
    w.src = w.put ? c->inputs[2] : NULL;
    w.out = ct__data(out);
    w.t = w.put ? out : self;
    if (w.put && out != self) {
        ct__copy_kernel(out, self);
    }
    int64_t n = ct__numel(a->rsizes, a->rnd);
    if (w.put) {
        ct__adv_chunk(0, n, &w);
    } else {
        ct__parallel_for(n, CT__GRAIN, ct__adv_chunk, &w);
    }
    return CT_OK;
}

/* Keeps the stacked indices and the dims (and accumulate at i[CT_MAX_DIMS]). */
static void ct__adv_record(ct_node *n, const ct_op_call *c)
{
    const ct__adv *a = (const ct__adv *)c->state;
    ct__save(n, NULL);
    ct__save(n, c->inputs[1]);
    for (int j = 0; j < a->k; j++) {
        n->i[j] = a->dims[j];
    }
    n->i[CT_MAX_DIMS] = c->n_attrs > 1 ? c->attrs[1].i : 0;
}

/* masked_scatter on the CPU: self copied (broadcast) into a new output, the mask's ones
   counted against source, then source's elements written in order. */
static ct_status ct__masked_scatter_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    const ct_tensor *mask = c->inputs[1], *src = c->inputs[2];
    int64_t pos[CT_MAX_DIMS] = {0}, spos[CT_MAX_DIMS] = {0}, n = ct_numel(out), ones = 0;
    size_t esz = ct_dtype_size(out->dtype);
    const char *md = (const char *)mask->storage->data;
    if (out != c->inputs[0]) {
        ct__copy_kernel(out, c->inputs[0]);
    }
    for (int64_t e = 0; e < n; e++, ct__ix_step(pos, out->sizes, out->ndim)) {
        ones += md[ct__bc_offset(mask, pos, out->ndim)] != 0;
    }
    if (ones > ct_numel(src)) {
        return ct__fail(CT_ERR_SHAPE, c->fn, "Number of elements of source < number of ones in "
                        "mask");
    }
    memset(pos, 0, sizeof pos);
    for (int64_t e = 0; e < n; e++, ct__ix_step(pos, out->sizes, out->ndim)) {
        if (md[ct__bc_offset(mask, pos, out->ndim)]) {
            ct__copy_elem((char *)out->storage->data + ct__bc_offset(out, pos, out->ndim) *
                              (int64_t)esz,
                          (const char *)src->storage->data + ct__bc_offset(src, spos, src->ndim) *
                              (int64_t)esz, esz);
            ct__ix_step(spos, src->sizes, src->ndim);
        }
    }
    return CT_OK;
}

/* nonzero on the CPU: a counting pass, then the (count, ndim) int64 output filled. */
static ct_status ct__nonzero_kernel(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t pos[CT_MAX_DIMS] = {0}, n = ct_numel(t), count = 0;
    size_t esz = ct_dtype_size(t->dtype);
    const char *base = (const char *)t->storage->data;
    for (int64_t e = 0; e < n; e++, ct__ix_step(pos, t->sizes, t->ndim)) {
        count += ct__load_f64(base + ct__bc_offset(t, pos, t->ndim) * (int64_t)esz, t->dtype) != 0;
    }
    int64_t sizes[2] = {count, t->ndim};
    ct_tensor *out = ct__op_output(c, sizes, 2, CT_INT64);
    if (!out) {
        return ct_error_code();
    }
    int64_t *o = (int64_t *)(void *)ct__data(out);
    memset(pos, 0, sizeof pos);
    for (int64_t e = 0; e < n; e++, ct__ix_step(pos, t->sizes, t->ndim)) {
        if (ct__load_f64(base + ct__bc_offset(t, pos, t->ndim) * (int64_t)esz, t->dtype) != 0) {
            memcpy(o, pos, sizeof(int64_t) * (size_t)t->ndim);
            o += t->ndim;
        }
    }
    return CT_OK;
}

static ct_status ct__argwhere_composite(ct_op_call *c)
{
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_nonzero(c->inputs[0]));
}

/* scatter_reduce's combining step per dtype (d = d op s; integers wrap) and mean's division
   (integers round down). */
#define CT__SR_FLT(E, T, S)                                                                    \
    static void ct__sr_##S(char *pd, const char *ps, int op)                                  \
    {                                                                                          \
        T *d = (T *)(void *)pd, s = *(const T *)(const void *)ps;                              \
        *d = op == CT__SR_PROD   ? *d * s                                                      \
             : op == CT__SR_AMAX ? (s != s || s > *d ? s : *d)                                 \
             : op == CT__SR_AMIN ? (s != s || s < *d ? s : *d)                                 \
                                 : *d + s;                                                     \
    }                                                                                          \
    static void ct__sr_mean_##S(char *pd, int64_t n)                                           \
    {                                                                                          \
        *(T *)(void *)pd /= (T)n;                                                              \
    }
#define CT__SR_INT(E, T, S)                                                                    \
    static void ct__sr_##S(char *pd, const char *ps, int op)                                  \
    {                                                                                          \
        T *d = (T *)(void *)pd, s = *(const T *)(const void *)ps;                              \
        uint64_t x = (uint64_t)(int64_t)*d, y = (uint64_t)(int64_t)s;                          \
        *d = op == CT__SR_PROD   ? (T)(x * y)                                                  \
             : op == CT__SR_AMAX ? (s > *d ? s : *d)                                           \
             : op == CT__SR_AMIN ? (s < *d ? s : *d)                                           \
                                 : (T)(x + y);                                                 \
    }                                                                                          \
    static void ct__sr_mean_##S(char *pd, int64_t n)                                           \
    {                                                                                          \
        T *d = (T *)(void *)pd;                                                                \
        *d = (T)floor((double)*d / (double)n);                                                 \
    }
CT__SR_INT(CT_UINT8, uint8_t, u8)
CT__SR_INT(CT_INT8, int8_t, i8)
CT__SR_INT(CT_INT16, int16_t, i16)
CT__SR_INT(CT_INT32, int32_t, i32)
CT__SR_INT(CT_INT64, int64_t, i64)
CT__SR_FLT(CT_FLOAT32, float, f32)
CT__SR_FLT(CT_FLOAT64, double, f64)
#undef CT__SR_FLT
#undef CT__SR_INT
typedef void (*ct__sr_fn)(char *pd, const char *ps, int op);
typedef void (*ct__sr_mean_fn)(char *pd, int64_t n);
static const ct__sr_fn ct__sr_fns[CT_DTYPE_COUNT] = {
    NULL, NULL, ct__sr_u8, ct__sr_i8, ct__sr_i16, ct__sr_i32, ct__sr_i64, ct__sr_f32, ct__sr_f64};
static const ct__sr_mean_fn ct__sr_means[CT_DTYPE_COUNT] = {
    NULL,           NULL,           ct__sr_mean_u8,  ct__sr_mean_i8, ct__sr_mean_i16,
    ct__sr_mean_i32, ct__sr_mean_i64, ct__sr_mean_f32, ct__sr_mean_f64};

/* scatter_reduce on the CPU: bounds, self copied into the output, then src combined in at
   index in index order (a count per output element tells the first value written when
   include_self is false, and divides for mean). */
static ct_status ct__scatter_reduce_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *index = c->inputs[1], *src = c->inputs[2];
    ct_tensor *out = c->outputs[0];
    int dim = (int)c->attrs[0].i, op = (int)c->attrs[1].i, nd = ct__ix_ndim(self);
    bool incl = c->attrs[2].i != 0;
    ct_status st = ct__ix_check_bounds(c, index, dim, ct__ix_size(self, dim));
    if (st != CT_OK) {
        return st;
    }
    ct__copy_kernel(out, self);
    int64_t n = ct_numel(out), *count = NULL;
    if (ct_numel(index) == 0) {
        return CT_OK;
    }
    if (!incl || op == CT__SR_MEAN) {
        count = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
        if (!count) {
            return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        }
        for (int64_t e = 0; e < n; e++) {
            count[e] = incl;
        }
    }
    int64_t isz[CT_MAX_DIMS], ist[CT_MAX_DIMS], ost[CT_MAX_DIMS], sst[CT_MAX_DIMS];
    int64_t dummy[CT_MAX_DIMS];
    int64_t pos[CT_MAX_DIMS] = {0};
    ct__ix_geom(index, isz, ist);
    ct__ix_geom(out, dummy, ost);
    ct__ix_geom(src, dummy, sst);
    size_t esz = ct_dtype_size(out->dtype);
    ct__sr_fn fn = ct__sr_fns[out->dtype];
    char *od = ct__data(out);
    const char *sd = ct__data(src), *id = ct__data(index);
    do {
        int64_t io = 0, oo = 0, so = 0;
        for (int d = 0; d < nd; d++) {
            io += pos[d] * ist[d];
            so += pos[d] * sst[d];
            oo += d == dim ? 0 : pos[d] * ost[d];
        }
        int64_t k = index->dtype == CT_INT64 ? ((const int64_t *)(const void *)id)[io]
                                             : ((const int32_t *)(const void *)id)[io];
        oo += k * ost[dim];
        if (count && count[oo] == 0) {
            ct__copy_elem(od + oo * (int64_t)esz, sd + so * (int64_t)esz, esz);
        } else {
            fn(od + oo * (int64_t)esz, sd + so * (int64_t)esz, op);
        }
        if (count) {
            count[oo]++;
        }
    } while (ct__ix_step(pos, isz, nd));
    for (int64_t e = 0; op == CT__SR_MEAN && e < n; e++) {
        if (count[e] > 1) {
            ct__sr_means[out->dtype](od + e * (int64_t)esz, count[e]);
        }
    }
    ct__free(count);
    return CT_OK;
}

/* ---- descriptors ------------------------------------------------------------------------ */
static const ct_op ct__op_nonzero = {
    "aten::nonzero", "nonzero(Tensor self) -> Tensor", "ct_nonzero", CT_OP_OTHER,
    CT_AUTOCAST_NONE, 0, 0u, NULL, ct__nonzero_meta, CT__K_ALL(ct__nonzero_kernel), NULL, NULL,
    NULL, 0u, NULL, NULL};
static const ct_op ct__op_argwhere = {
    "aten::argwhere", "argwhere(Tensor self) -> Tensor", "ct_argwhere", CT_OP_OTHER,
    CT_AUTOCAST_NONE, 0, 0u, NULL, ct__nonzero_meta, CT__K_NONE, ct__argwhere_composite, NULL,
    NULL, 0u, NULL, NULL};
static const ct_op ct__op_index = {
    "aten::index", "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "ct_index ct_masked_select ct_take", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL,
    ct__adv_meta, CT__K_ANY(ct__adv_kernel), NULL, "IndexBackward0", ct__index_backward, 0u,
    ct__adv_record, NULL};
static const ct_op ct__op_index_put = {
    "aten::index_put", "index_put(Tensor self, Tensor?[] indices, Tensor values, bool "
    "accumulate=False) -> Tensor", "ct_index_put", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL,
    ct__adv_meta, CT__K_ANY(ct__adv_kernel), NULL, "IndexPutBackward0", ct__index_put_backward,
    0u, ct__adv_record, NULL};
static const ct_op ct__op_index_put_ = {
    "aten::index_put_", "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool "
    "accumulate=False) -> Tensor(a!)", "ct_index_put_ ct_index_fill_ ct_index_copy_",
    CT_OP_INPLACE, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__adv_meta, CT__K_ANY(ct__adv_kernel), NULL,
    "IndexPutBackward0", ct__index_put_backward, 0u, ct__adv_record, NULL};
static const ct_op ct__op_masked_scatter = {
    "aten::masked_scatter", "masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
    "ct_masked_scatter", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__masked_scatter_meta,
    CT__K_ALL(ct__masked_scatter_kernel), NULL, "MaskedScatterBackward0",
    ct__masked_scatter_backward, CT__SAVE_IN(1), NULL, NULL};
static const ct_op ct__op_masked_scatter_ = {
    "aten::masked_scatter_", "masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> "
    "Tensor(a!)", "ct_masked_scatter_", CT_OP_INPLACE, CT_AUTOCAST_NONE, 0, 0u, NULL,
    ct__masked_scatter_meta, CT__K_ALL(ct__masked_scatter_kernel), NULL,
    "MaskedScatterBackward0", ct__masked_scatter_backward, CT__SAVE_IN(1), NULL, NULL};
static const ct_op ct__op_scatter_reduce = {
    "aten::scatter_reduce", "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, "
    "str reduce, *, bool include_self=True) -> Tensor", "ct_scatter_reduce ct_scatter_reduce_",
    CT_OP_OTHER, CT_AUTOCAST_NONE, CT__IX_SCATTER, 0u, NULL, ct__ix_meta,
    CT__K_NUMERIC(ct__scatter_reduce_kernel), NULL, "ScatterReduceBackward0",
    ct__scatter_reduce_backward,
    CT__SAVE_IN(0) | CT__SAVE_IN(1) | CT__SAVE_IN(2) | CT__SAVE_OUT(0), NULL, NULL};

/* ---- public functions -------------------------------------------------------------------- */
/* A call of op (index, index_put, index_put_) over self and the stacked indices. */
static ct_tensor *ct__adv_dispatch(const ct_op *op, const char *fn, const ct_tensor *self,
                                   const ct_tensor *stacked, const int64_t *dims, int k,
                                   const ct_tensor *values, bool accumulate)
{
    const ct_tensor *in[3] = {self, stacked, values};
    ct__adv a;
    ct_op_call c;
    ct__call_init(&c, op, fn, in, values ? 3 : 2);
    ct__call_ints(&c, dims, k);
    if (values) {
        ct__call_i(&c, accumulate);
    }
    c.state = &a;
    return ct__dispatch(&c);
}

static ct_tensor *ct__adv_call(bool put, const char *fn, const ct_tensor *self,
                               const ct_tensor *stacked, const int64_t *dims, int k,
                               const ct_tensor *values, bool accumulate)
{
    return ct__adv_dispatch(put ? &ct__op_index_put : &ct__op_index, fn, self, stacked, dims, k,
                            put ? values : NULL, accumulate);
}

/* Whether the k index tensors broadcast together (else PyTorch's error). */
static bool ct__adv_broadcastable(const char *fn, const ct_tensor *const *list, int k)
{
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    for (int j = 0; j < k; j++) {
        const ct_tensor *t = list[j];
        for (int d = 1; d <= t->ndim; d++) {
            int64_t *have = &shape[CT_MAX_DIMS - d], want = t->sizes[t->ndim - d];
            if (d > nd) {
                *have = want;
            } else if (*have == 1) {
                *have = want;
            } else if (want != 1 && want != *have) {
                char buf[400], one[96];
                size_t len = 0;
                buf[0] = '\0';
                for (int i = 0; i < k && len + 100 < sizeof buf; i++) {
                    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : "",
                                            ct__shape_str(list[i]->sizes, list[i]->ndim, one,
                                                          sizeof one));
                }
                return !ct__fail(CT_ERR_SHAPE, fn, "shape mismatch: indexing tensors could not be "
                                 "broadcast together with shapes %s", buf);
            }
        }
        nd = t->ndim > nd ? t->ndim : nd;
    }
    return true;
}

/* The index tensors of indices[0..n-1] for t (a mask: the columns of its nonzero positions;
   int32: as int64) broadcast together and stacked into a (k, B...) int64 tensor (k == 0:
   shape (0)), the dims they index in dims[0..k-1]. NULL after an error. */
static ct_tensor *ct__adv_stack(const char *fn, const ct_tensor *t,
                                const ct_tensor *const *indices, int n, int64_t *dims, int *k)
{
    const ct_tensor *list[CT_MAX_DIMS];
    ct_tensor *bc[CT_MAX_DIMS];
    char a[96], b[96];
    int pos = 0;
    *k = 0;
    if (ct__null(fn, t) || (n > 0 && ct__null(fn, indices))) {
        return NULL;
    }
    for (int j = 0; j < n; j++) {
        const ct_tensor *ix = indices[j];
        bool mask = ix && (ix->dtype == CT_BOOL || ix->dtype == CT_UINT8);
        if (ix && !mask && ix->dtype != CT_INT64 && ix->dtype != CT_INT32) {
            ct__fail(CT_ERR_DTYPE, fn, "tensors used as indices must be long, int, byte or bool "
                     "tensors");
            return NULL;
        }
        int used = mask ? ix->ndim : 1;
        if (mask && ix->ndim == 0) {
            ct__fail(CT_ERR_INDEX, fn, "0-dim bool masks are not supported as indices");
            return NULL;
        }
        if (pos + used > t->ndim) {
            ct__fail(CT_ERR_INDEX, fn, "too many indices for tensor of dimension %d", t->ndim);
            return NULL;
        }
        for (int d = 0; mask && d < ix->ndim; d++) {
            if (ix->sizes[d] != t->sizes[pos + d]) {
                ct__fail(CT_ERR_INDEX, fn, "The shape of the mask %s at index %d does not match "
                         "the shape of the indexed tensor %s at index %d",
                         ct__shape_str(ix->sizes, ix->ndim, a, sizeof a), d,
                         ct__shape_str(t->sizes, t->ndim, b, sizeof b), pos + d);
                return NULL;
            }
        }
        if (mask) {
            ct_tensor *nz = ct_nonzero(ix);
            for (int d = 0; d < ix->ndim; d++) {
                dims[*k] = pos + d;
                list[(*k)++] = ct_select(nz, 1, d);
            }
        } else if (ix) {
            dims[*k] = pos;
            list[(*k)++] = ix->dtype == CT_INT32 ? ct_to_dtype(ix, CT_INT64) : ix;
        }
        pos += ix ? used : 1;
    }
    if (*k == 0) {
        int64_t zero = 0;
        return ct_zeros(&zero, 1, CT_INT64);
    }
    if (!ct__adv_broadcastable(fn, list, *k) || ct_broadcast_tensors(list, *k, bc) != CT_OK) {
        return NULL;
    }
    return ct_stack((const ct_tensor *const *)bc, *k, 0);
}

/* index (values NULL) or index_put(_) of t through the list indices[0..n-1], the
   intermediate tensors dropped with a scope of their own. */
static ct_tensor *ct__adv_run(const ct_op *op, const char *fn, const ct_tensor *t,
                              const ct_tensor *const *indices, int n, const ct_tensor *values,
                              bool accumulate)
{
    int64_t dims[CT_MAX_DIMS];
    int k;
    if (ct_scope_begin() != CT_OK) {
        return NULL;
    }
    ct_tensor *st = ct__adv_stack(fn, t, indices, n, dims, &k);
    ct_tensor *r = st ? ct__adv_dispatch(op, fn, t, st, dims, k, values, accumulate) : NULL;
    bool inplace = op->kind == CT_OP_INPLACE;
    if (r && !inplace) {
        ct_retain(r);
    }
    ct_scope_end();
    return r && !inplace ? ct__scoped(r) : r;
}

ct_tensor *ct_index(const ct_tensor *input, const ct_tensor *const *indices, int n)
{
    return ct__adv_run(&ct__op_index, "ct_index", input, indices, n, NULL, false);
}

ct_tensor *ct_index_put(const ct_tensor *input, const ct_tensor *const *indices, int n,
                        const ct_tensor *values, bool accumulate)
{
    if (ct__null("ct_index_put", values)) {
        return NULL;
    }
    return ct__adv_run(&ct__op_index_put, "ct_index_put", input, indices, n, values, accumulate);
}

ct_tensor *ct_index_put_(ct_tensor *self, const ct_tensor *const *indices, int n,
                         const ct_tensor *values, bool accumulate)
{
    if (ct__null("ct_index_put_", values)) {
        return NULL;
    }
    return ct__adv_run(&ct__op_index_put_, "ct_index_put_", self, indices, n, values, accumulate);
}

ct_tensor *ct_nonzero(const ct_tensor *input)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_nonzero, "ct_nonzero", in, 1);
    return ct__dispatch(&c);
}

ct_tensor *ct_argwhere(const ct_tensor *input)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_argwhere, "ct_argwhere", in, 1);
    return ct__dispatch(&c);
}

ct_tensor *ct_masked_select(const ct_tensor *input, const ct_tensor *mask)
{
    const char *fn = "ct_masked_select";
    if (ct__null(fn, input) || ct__null(fn, mask)) {
        return NULL;
    }
    if (mask->dtype != CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, fn, "masked_select: expected BoolTensor for mask");
        return NULL;
    }
    const ct_tensor *pair[2] = {input, mask};
    ct_tensor *bc[2];
    if (ct_scope_begin() != CT_OK) {
        return NULL;
    }
    ct_tensor *r = ct_broadcast_tensors(pair, 2, bc) == CT_OK
                       ? ct__adv_run(&ct__op_index, fn, bc[0], (const ct_tensor *const *)&bc[1], 1,
                                     NULL, false)
                       : NULL;
    ct_retain(r);
    ct_scope_end();
    return r ? ct__scoped(r) : NULL;
}

/* A call of masked_scatter (op: out-of-place or in-place). */
static ct_tensor *ct__masked_scatter_call(const ct_op *op, const char *fn, const ct_tensor *self,
                                          const ct_tensor *mask, const ct_tensor *source)
{
    const ct_tensor *in[3] = {self, mask, source};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 3);
    return ct__dispatch(&c);
}

ct_tensor *ct_masked_scatter_(ct_tensor *self, const ct_tensor *mask, const ct_tensor *source)
{
    return ct__masked_scatter_call(&ct__op_masked_scatter_, "ct_masked_scatter_", self, mask,
                                   source);
}

ct_tensor *ct_masked_scatter(const ct_tensor *input, const ct_tensor *mask,
                             const ct_tensor *source)
{
    return ct__masked_scatter_call(&ct__op_masked_scatter, "ct_masked_scatter", input, mask,
                                   source);
}

/* index_fill_ and index_copy_: the checks of a 1-D/0-dim int64 index along dim of self; the
   wrapped dim, or -1. */
static int ct__index_dim_check(const char *fn, const char *what, const ct_tensor *self,
                               int64_t dim, const ct_tensor *index)
{
    if (ct__null(fn, self) || ct__null(fn, index)) {
        return -1;
    }
    int d = ct__wrap_dim(fn, dim, self->ndim);
    if (d < 0) {
        return -1;
    }
    if (index->ndim > 1) {
        ct__fail(CT_ERR_INDEX, fn, "%s", what[6] == 'f' ? "Index has to be a vector/scalar"
                 : "index_copy_(): Index should have dimension 1 or 0 (got 2)");
        return -1;
    }
    if (index->dtype != CT_INT64) {
        if (what[6] == 'f') {
            ct__fail(CT_ERR_DTYPE, fn, "index_fill_(): Expected dtype int64 for index.");
        } else {
            ct__fail(CT_ERR_DTYPE, fn, "index_copy_(): Expected a long tensor for index, but got "
                     "%s", ct__dtype_title(index->dtype));
        }
        return -1;
    }
    return self->ndim == 0 ? 0 : d;
}

/* self[:, .., :, index] (index at dim d) = values through index_put_. */
static ct_tensor *ct__index_along(const char *fn, ct_tensor *self, int d, const ct_tensor *index,
                                  const ct_tensor *values)
{
    const ct_tensor *list[CT_MAX_DIMS] = {NULL};
    int64_t one = 1;
    list[d] = self->ndim == 0 ? ct_reshape(index, &one, 0) : index;
    return ct__adv_run(&ct__op_index_put_, fn, self, list, d + 1, values, false);
}

ct_tensor *ct_index_fill_(ct_tensor *self, int64_t dim, const ct_tensor *index, double value)
{
    const char *fn = "ct_index_fill_";
    int d = ct__index_dim_check(fn, "index_fill_", self, dim, index);
    if (d < 0) {
        return NULL;
    }
    return ct__index_along(fn, self, d, index, ct_full(NULL, 0, value, self->dtype));
}

ct_tensor *ct_index_copy_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                          const ct_tensor *source)
{
    const char *fn = "ct_index_copy_";
    if (ct__null(fn, source)) {
        return NULL;
    }
    int d = ct__index_dim_check(fn, "index_copy_", self, dim, index);
    if (d < 0) {
        return NULL;
    }
    if (source->dtype != self->dtype) {
        ct__fail(CT_ERR_DTYPE, fn, "index_copy_(): self and source expected to have the same "
                 "dtype, but got (self) %s and (source) %s", ct__dtype_title(self->dtype),
                 ct__dtype_title(source->dtype));
        return NULL;
    }
    int64_t want = source->ndim == 0 ? 1 : source->ndim > d ? source->sizes[d] : -1;
    if (ct_numel(index) != want) {
        ct__fail(CT_ERR_SHAPE, fn, "index_copy_(): Number of indices (%lld) should be equal to "
                 "source.size(dim) (%lld)", (long long)ct_numel(index), (long long)want);
        return NULL;
    }
    return ct__index_along(fn, self, d, index, source);
}

ct_tensor *ct_take(const ct_tensor *input, const ct_tensor *index)
{
    const char *fn = "ct_take";
    int64_t flat = -1;
    if (ct__null(fn, input) || ct__null(fn, index)) {
        return NULL;
    }
    if (index->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, fn, "take(): Expected a long tensor for index, but got %s",
                 ct__dtype_title(index->dtype));
        return NULL;
    }
    if (ct_scope_begin() != CT_OK) {
        return NULL;
    }
    const ct_tensor *list[1] = {index};
    ct_tensor *r =
        ct__adv_run(&ct__op_index, fn, ct_reshape(input, &flat, 1), list, 1, NULL, false);
    ct_retain(r);
    ct_scope_end();
    return r ? ct__scoped(r) : NULL;
}

ct_tensor *ct_take_along_dim(const ct_tensor *input, const ct_tensor *indices, int64_t dim)
{
    const char *fn = "ct_take_along_dim";
    if (ct__null(fn, input) || ct__null(fn, indices)) {
        return NULL;
    }
    if (indices->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, fn, "torch.take_along_dim(): dtype of indices should be Long but "
                 "got %s", ct__dtype_title(indices->dtype));
        return NULL;
    }
    if (input->ndim != indices->ndim) {
        ct__fail(CT_ERR_SHAPE, fn, "torch.take_along_dim(): input and indices should have the "
                 "same number of dimensions, but got %d dimensions for input, and %d dimensions "
                 "for indices", input->ndim, indices->ndim);
        return NULL;
    }
    int d = ct__wrap_dim(fn, dim, input->ndim);
    if (d < 0) {
        return NULL;
    }
    int64_t a[CT_MAX_DIMS], b[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int nd;
    memcpy(a, input->sizes, sizeof(int64_t) * (size_t)input->ndim);
    memcpy(b, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
    if (input->ndim > 0) {
        a[d] = indices->sizes[d];
        b[d] = input->sizes[d];
    }
    if (ct_scope_begin() != CT_OK) {
        return NULL;
    }
    ct_tensor *r = NULL;
    if (ct__broadcast_shapes(fn, a, input->ndim, indices->sizes, indices->ndim, shape, &nd)) {
        ct_tensor *ib = ct_broadcast_to(indices, shape, nd);
        r = ct__broadcast_shapes(fn, b, input->ndim, input->sizes, input->ndim, shape, &nd)
                ? ct_gather(ct_broadcast_to(input, shape, nd), d, ib)
                : NULL;
    }
    ct_retain(r);
    ct_scope_end();
    return r ? ct__scoped(r) : NULL;
}

/* The reduction named reduce, or -1 after the error. */
static int ct__sr_parse(const char *fn, const char *reduce)
{
    static const char *const names[5] = {"sum", "prod", "mean", "amax", "amin"};
    if (ct__null(fn, reduce)) {
        return -1;
    }
    for (int k = 0; k < 5; k++) {
        if (!strcmp(reduce, names[k])) {
            return k;
        }
    }
    ct__fail(CT_ERR_VALUE, fn, "reduce argument must be either sum, prod, mean, amax or amin, "
             "got %s", reduce);
    return -1;
}

static ct_tensor *ct__scatter_reduce(const char *fn, const ct_tensor *input, int64_t dim,
                                     const ct_tensor *index, const ct_tensor *src, int op,
                                     bool include_self)
{
    const ct_tensor *in[3] = {input, index, src};
    ct_op_call c;
    ct__call_init(&c, &ct__op_scatter_reduce, fn, in, 3);
    ct__call_i(&c, dim);
    ct__call_i(&c, op);
    ct__call_i(&c, include_self);
    return ct__dispatch(&c);
}

ct_tensor *ct_scatter_reduce(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                             const ct_tensor *src, const char *reduce, bool include_self)
{
    const char *fn = "ct_scatter_reduce";
    if (ct__null(fn, input) || ct__null(fn, index) || ct__null(fn, src)) {
        return NULL;
    }
    int op = ct__sr_parse(fn, reduce);
    return op < 0 ? NULL
                  : ct__scatter_reduce("ct_scatter_reduce", input, dim, index, src, op,
                                       include_self);
}

/* In place: the out-of-place result on a copy of self (which the node keeps), copied back. */
ct_tensor *ct_scatter_reduce_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                              const ct_tensor *src, const char *reduce, bool include_self)
{
    const char *fn = "ct_scatter_reduce_";
    if (ct__null(fn, self) || ct__null(fn, index) || ct__null(fn, src)) {
        return NULL;
    }
    int op = ct__sr_parse(fn, reduce);
    if (op < 0 || ct_scope_begin() != CT_OK) {
        return NULL;
    }
    ct_tensor *r = ct__scatter_reduce(fn, ct_clone(self), dim, index, src, op, include_self);
    r = r ? ct_copy_(self, r) : NULL;
    ct_scope_end();
    return r;
}
CT__GLUE_END
