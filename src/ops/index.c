/* ops/index.c - gather, index_select, scatter, scatter_add, index_add and masked_fill, as
 * op descriptors.
 *
 * Legend: the five index ops are one family walking a loop shape L (index's shape for
 * gather/scatter, the output's for index_select, source's for index_add). At each position
 * p of L the index tensor gives k; tensor A (read by gather/index_select, written by the
 * others) is addressed at p with p[dim] replaced by k, tensor B (the output, or src/source)
 * at p. Every index is checked before anything is written, so an in-place op that fails
 * leaves self unchanged. The walk goes a row of L's last dim at a time (typed loops by element
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

/* masked_fill (inputs self, mask; attribute value): a bool mask broadcast with self (to
   self's shape for the in-place form). */
static bool ct__masked_fill_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *mask = c->inputs[1];
    int64_t sizes[CT_MAX_DIMS];
    int nd;
    char a[96], b[96];
    if (mask->dtype != CT_BOOL) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                         ct__ix_ctype(mask->dtype));
    }
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, mask->sizes, mask->ndim, sizes,
                              &nd)) {
        return false;
    }
    c->dtype = self->dtype;
    if (!(c->op->variant & CT__IX_INPLACE)) {
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

/* ---- kernels ----------------------------------------------------------------------------- */
/* One walk of the family (see the legend), a row of L's last dim at a time. */
typedef struct ct__ix_walk ct__ix_walk;
typedef void (*ct__ix_row_fn)(const ct__ix_walk *w, char *a, char *b, const char *ix, int64_t n);
struct ct__ix_walk {
    int nd, dim;
    int64_t sizes[CT_MAX_DIMS]; /* the loop shape L */
    char *a, *b, *ix;
    int64_t sa[CT_MAX_DIMS], sb[CT_MAX_DIMS], si[CT_MAX_DIMS]; /* element strides over L */
    int64_t sk; /* A's stride along dim (sa[dim] is 0: the index gives that coordinate) */
    size_t esz, isz;
    double alpha;
    ct__ix_row_fn row;
};

/* A row of n elements: pa = A at the index, pb = B; PRE runs once, BODY per element. */
#define CT__IX_ROW(NAME, T, IX, PRE, BODY)                                                         \
    static void NAME(const ct__ix_walk *w, char *a0, char *b0, const char *i0, int64_t n)          \
    {                                                                                              \
        T *a = (T *)(void *)a0, *b = (T *)(void *)b0;                                              \
        const IX *ix = (const IX *)(const void *)i0;                                               \
        int64_t sa = w->sa[w->nd - 1], sb = w->sb[w->nd - 1], si = w->si[w->nd - 1];               \
        int64_t sk = w->sk;                                                                        \
        PRE;                                                                                       \
        for (int64_t j = 0; j < n; j++) {                                                          \
            T *pa = a + j * sa + (int64_t)ix[j * si] * sk, *pb = b + j * sb;                       \
            BODY;                                                                                  \
        }                                                                                          \
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

/* Row functions by [int64 index][log2 element size] and [int64 index][dtype]. */
static const ct__ix_row_fn ct__ix_gets[2][4] = {
    {ct__ix_get_1_i32, ct__ix_get_2_i32, ct__ix_get_4_i32, ct__ix_get_8_i32},
    {ct__ix_get_1_i64, ct__ix_get_2_i64, ct__ix_get_4_i64, ct__ix_get_8_i64}};
static const ct__ix_row_fn ct__ix_puts[2][4] = {
    {ct__ix_put_1_i32, ct__ix_put_2_i32, ct__ix_put_4_i32, ct__ix_put_8_i32},
    {ct__ix_put_1_i64, ct__ix_put_2_i64, ct__ix_put_4_i64, ct__ix_put_8_i64}};
static const ct__ix_row_fn ct__ix_adds[2][CT_DTYPE_COUNT] = {
    {NULL, ct__ix_add_b8_i32, ct__ix_add_u8_i32, ct__ix_add_i8_i32, ct__ix_add_i16_i32,
     ct__ix_add_i32_i32, ct__ix_add_i64_i32, ct__ix_add_f32_i32, ct__ix_add_f64_i32},
    {NULL, ct__ix_add_b8_i64, ct__ix_add_u8_i64, ct__ix_add_i8_i64, ct__ix_add_i16_i64,
     ct__ix_add_i32_i64, ct__ix_add_i64_i64, ct__ix_add_f32_i64, ct__ix_add_f64_i64}};

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

/* Checks every entry of index lies in [0, bound), in index order. */
static ct_status ct__ix_check_bounds(const ct_op_call *c, const ct_tensor *index, int dim,
                                     int64_t bound)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], pos[CT_MAX_DIMS] = {0};
    int nd = ct__ix_ndim(index);
    if (ct_numel(index) == 0) {
        return CT_OK;
    }
    ct__ix_geom(index, sizes, strides);
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
        w->row(w, w->a + oa * (int64_t)w->esz, w->b + ob * (int64_t)w->esz,
               w->ix + oi * (int64_t)w->isz, w->sizes[w->nd - 1]);
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

/* The index family on the CPU: bounds first, then self copied into a new output, then the
   walk: in parallel over rows where no two rows write the same element (gather and
   index_select, or the writing ops along L's last dim), else over columns of the last dim. */
static ct_status ct__ix_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *index = c->inputs[1];
    const ct_tensor *src = c->n_inputs > 2 ? c->inputs[2] : NULL;
    ct_tensor *out = c->outputs[0];
    int mode = c->op->variant & 7, dim = (int)c->attrs[0].i;
    int64_t dummy[CT_MAX_DIMS];
    ct_status st = ct__ix_check_bounds(c, index, dim, ct__ix_size(self, dim));
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
    return CT_OK;
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

/* ---- descriptors ------------------------------------------------------------------------ */
#define CT__IX_OP(SYM, NAME, SCHEMA, API, KIND, VAR, META, KERNEL, NODE, BW)                       \
    static const ct_op ct__op_##SYM = {                                                            \
        "aten::" NAME,     SCHEMA, API,  KIND, CT_AUTOCAST_NONE, VAR,  0u,  NULL, META,            \
        CT__K_ALL(KERNEL), NULL,   NODE, BW,   1u << 1,          NULL, NULL};

CT__IX_OP(gather, "gather",
          "gather(Tensor self, int dim, Tensor index, *, bool "
          "sparse_grad=False) -> Tensor",
          "ct_gather", CT_OP_OTHER, CT__IX_GATHER, ct__ix_meta, ct__ix_kernel, "GatherBackward0",
          ct__gather_backward)
CT__IX_OP(index_select, "index_select",
          "index_select(Tensor self, int dim, Tensor index) -> "
          "Tensor",
          "ct_index_select", CT_OP_OTHER, CT__IX_SELECT, ct__ix_meta, ct__ix_kernel,
          "IndexSelectBackward0", ct__index_select_backward)
CT__IX_OP(scatter, "scatter",
          "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> "
          "Tensor",
          "ct_scatter", CT_OP_OTHER, CT__IX_SCATTER, ct__ix_meta, ct__ix_kernel, "ScatterBackward0",
          ct__scatter_backward)
CT__IX_OP(scatter_, "scatter_",
          "scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor "
          "src) -> Tensor(a!)",
          "ct_scatter_", CT_OP_INPLACE, CT__IX_SCATTER | CT__IX_INPLACE, ct__ix_meta, ct__ix_kernel,
          "ScatterBackward0", ct__scatter_backward)
CT__IX_OP(scatter_add, "scatter_add",
          "scatter_add(Tensor self, int dim, Tensor index, Tensor "
          "src) -> Tensor",
          "ct_scatter_add", CT_OP_OTHER, CT__IX_SCATTER_ADD, ct__ix_meta, ct__ix_kernel,
          "ScatterAddBackward0", ct__scatter_add_backward)
CT__IX_OP(scatter_add_, "scatter_add_",
          "scatter_add_(Tensor(a!) self, int dim, Tensor index, "
          "Tensor src) -> Tensor(a!)",
          "ct_scatter_add_", CT_OP_INPLACE, CT__IX_SCATTER_ADD | CT__IX_INPLACE, ct__ix_meta,
          ct__ix_kernel, "ScatterAddBackward0", ct__scatter_add_backward)
CT__IX_OP(index_add, "index_add",
          "index_add(Tensor self, int dim, Tensor index, Tensor source, "
          "*, Scalar alpha=1) -> Tensor",
          "ct_index_add", CT_OP_OTHER, CT__IX_INDEX_ADD, ct__ix_meta, ct__ix_kernel,
          "IndexAddBackward0", ct__index_add_backward)
CT__IX_OP(index_add_, "index_add_",
          "index_add_(Tensor(a!) self, int dim, Tensor index, Tensor "
          "source, *, Scalar alpha=1) -> Tensor(a!)",
          "ct_index_add_", CT_OP_INPLACE, CT__IX_INDEX_ADD | CT__IX_INPLACE, ct__ix_meta,
          ct__ix_kernel, "IndexAddBackward0", ct__index_add_backward)
CT__IX_OP(masked_fill, "masked_fill",
          "masked_fill.Scalar(Tensor self, Tensor mask, Scalar "
          "value) -> Tensor",
          "ct_masked_fill", CT_OP_OTHER, 0, ct__masked_fill_meta, ct__masked_fill_kernel,
          "MaskedFillBackward0", ct__masked_fill_backward)
CT__IX_OP(masked_fill_, "masked_fill_",
          "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, "
          "Scalar value) -> Tensor(a!)",
          "ct_masked_fill_", CT_OP_INPLACE, CT__IX_INPLACE, ct__masked_fill_meta,
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
