/* ops/reduce.c - sum, mean, max, min, argmax, argmin.
 *
 * Legend: the input (made contiguous) is viewed as (outer, R, inner) around the reduced
 * dim; the result is (outer, inner). Kernels exist for float32, float64 and int64; other
 * integer types and bool reduce through int64.
 */
#include "../core/internal.h"
#include "reduce.h"
#include "pointwise.h"
#include "view.h"
#include "../autograd/autograd.h"

CT__VECTORIZE_BEGIN

typedef enum ct__redop { CT__RSUM, CT__RMAX, CT__RMIN } ct__redop;

typedef struct ct__red_job {
    ct__redop op;
    const char *x;    /* (outer, R, inner) contiguous */
    char *v;          /* values (outer, inner) or NULL */
    int64_t *ix;      /* indices (outer, inner) or NULL */
    int64_t outer, R, inner, chunk;
} ct__red_job;

#define CT__RED_BLOCK 4096

/* Sum of n contiguous values: fixed blocks of CT__RED_BLOCK in 16 lanes of type LANE, block
   sums in ACC (int64 sums run in uint64, so that overflow wraps as in PyTorch). */
#define CT__SUM_FN(T, S, ACC, LANE)                                                        \
    static ACC ct__sum_##S(const T *p, int64_t n)                                           \
    {                                                                                       \
        ACC total = 0;                                                                      \
        for (int64_t b = 0; b < n; b += CT__RED_BLOCK) {                                    \
            int64_t m = n - b < CT__RED_BLOCK ? n - b : CT__RED_BLOCK;                      \
            const T *q = p + b;                                                             \
            LANE acc[16] = {0};                                                             \
            int64_t i = 0;                                                                  \
            for (; i + 16 <= m; i += 16) {                                                  \
                for (int k = 0; k < 16; k++) {                                              \
                    acc[k] += (LANE)q[i + k];                                               \
                }                                                                           \
            }                                                                               \
            LANE s = 0;                                                                     \
            for (int k = 0; k < 16; k++) {                                                  \
                s += acc[k];                                                                \
            }                                                                               \
            for (; i < m; i++) {                                                            \
                s += (LANE)q[i];                                                            \
            }                                                                               \
            total += (ACC)s;                                                                \
        }                                                                                   \
        return total;                                                                       \
    }

/* is v a better max (sign +1) / min (sign -1) than best? NaN wins and stays. */
#define CT__BETTER(v, best, sign)                                                          \
    ((best) == (best) && ((v) != (v) || ((sign) > 0 ? (v) > (best) : (v) < (best))))

#define CT__RED_KERNELS(T, S, ACC, LANE)                                                   \
    CT__SUM_FN(T, S, ACC, LANE)                                                             \
    /* items: rows o of (outer, R), inner == 1 */                                           \
    static void ct__red_rows_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                       \
        const ct__red_job *j = (const ct__red_job *)ctx;                                    \
        for (int64_t o = b; o < e; o++) {                                                   \
            const T *p = (const T *)j->x + o * j->R;                                        \
            if (j->op == CT__RSUM) {                                                        \
                ((T *)j->v)[o] = (T)ct__sum_##S(p, j->R);                                   \
                continue;                                                                   \
            }                                                                               \
            int sign = j->op == CT__RMAX ? 1 : -1;                                          \
            T best = p[0];                                                                  \
            int64_t bi = 0;                                                                 \
            for (int64_t r = 1; r < j->R; r++) {                                            \
                if (CT__BETTER(p[r], best, sign)) {                                         \
                    best = p[r];                                                            \
                    bi = r;                                                                 \
                }                                                                           \
            }                                                                               \
            if (j->v) {                                                                     \
                ((T *)j->v)[o] = best;                                                      \
            }                                                                               \
            if (j->ix) {                                                                    \
                j->ix[o] = bi;                                                              \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    /* items: (o, column chunk) pairs; each reduces R rows of `chunk` columns */            \
    static void ct__red_cols_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                       \
        const ct__red_job *j = (const ct__red_job *)ctx;                                    \
        int64_t nchunks = (j->inner + j->chunk - 1) / j->chunk;                             \
        ACC acc[256];                                                                       \
        T best[256];                                                                        \
        int64_t bi[256];                                                                    \
        for (int64_t it = b; it < e; it++) {                                                \
            int64_t o = it / nchunks, c0 = (it % nchunks) * j->chunk;                       \
            int64_t w = j->inner - c0 < j->chunk ? j->inner - c0 : j->chunk;                \
            const T *p = (const T *)j->x + o * j->R * j->inner + c0;                        \
            T *v = j->v ? (T *)j->v + o * j->inner + c0 : NULL;                             \
            if (j->op == CT__RSUM) {                                                        \
                for (int64_t c = 0; c < w; c++) {                                           \
                    acc[c] = 0;                                                             \
                }                                                                           \
                for (int64_t r = 0; r < j->R; r++) {                                        \
                    const T *row = p + r * j->inner;                                        \
                    for (int64_t c = 0; c < w; c++) {                                       \
                        acc[c] += (ACC)row[c];                                              \
                    }                                                                       \
                }                                                                           \
                for (int64_t c = 0; c < w; c++) {                                           \
                    v[c] = (T)acc[c];                                                       \
                }                                                                           \
                continue;                                                                   \
            }                                                                               \
            int sign = j->op == CT__RMAX ? 1 : -1;                                          \
            for (int64_t c = 0; c < w; c++) {                                               \
                best[c] = p[c];                                                             \
                bi[c] = 0;                                                                  \
            }                                                                               \
            for (int64_t r = 1; r < j->R; r++) {                                            \
                const T *row = p + r * j->inner;                                            \
                for (int64_t c = 0; c < w; c++) {                                           \
                    bool take = CT__BETTER(row[c], best[c], sign);                          \
                    best[c] = take ? row[c] : best[c];                                      \
                    bi[c] = take ? r : bi[c];                                               \
                }                                                                           \
            }                                                                               \
            for (int64_t c = 0; c < w; c++) {                                               \
                if (v) {                                                                    \
                    v[c] = best[c];                                                         \
                }                                                                           \
                if (j->ix) {                                                                \
                    j->ix[o * j->inner + c0 + c] = bi[c];                                   \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
CT__RED_KERNELS(float, f32, double, float)
CT__RED_KERNELS(double, f64, double, double)
CT__RED_KERNELS(int64_t, i64, uint64_t, uint64_t)

/* Runs a reduction of contiguous x as (outer, R, inner) into v / ix. */
static void ct__reduce_run(ct__redop op, const ct_tensor *x, int64_t outer, int64_t R,
                           int64_t inner, ct_tensor *v, ct_tensor *ix)
{
    ct__red_job j;
    j.op = op;
    j.x = ct__data(x);
    j.v = v ? ct__data(v) : NULL;
    j.ix = ix ? (int64_t *)ct__data(ix) : NULL;
    j.outer = outer;
    j.R = R;
    j.inner = inner;
    j.chunk = 256;
    void (*rows)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_rows_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_rows_f64
                                                                      : ct__red_rows_i64;
    void (*cols)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_cols_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_cols_f64
                                                                      : ct__red_cols_i64;
    if (inner == 1) {
        int64_t grain = R > 0 ? CT__GRAIN / R + 1 : CT__GRAIN;
        ct__parallel_for(outer, grain, rows, &j);
    } else {
        int64_t items = outer * ((inner + j.chunk - 1) / j.chunk);
        int64_t per_item = R * (inner < j.chunk ? inner : j.chunk);
        ct__parallel_for(items, CT__GRAIN / (per_item ? per_item : 1) + 1, cols, &j);
    }
}

/* The dtype reductions compute in: float32/float64 as is, everything else as int64. */
static ct_dtype ct__red_compute_dtype(ct_dtype d)
{
    return ct_dtype_is_floating_point(d) ? d : CT_INT64;
}

/* Reduces dim d of t (keepdim shape) into new unscoped tensors; values in compute dtype. */
static bool ct__reduce_dim_raw(const char *op, ct__redop rop, const ct_tensor *t, int d,
                               ct_tensor **values, ct_tensor **indices)
{
    ct_dtype cd = ct__red_compute_dtype(t->dtype);
    int64_t sizes[CT_MAX_DIMS];
    int nd = t->ndim;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)nd);
    int64_t outer = 1, inner = 1, R = nd ? t->sizes[d] : 1;
    for (int k = 0; k < nd; k++) {
        if (k < d) {
            outer *= sizes[k];
        } else if (k > d) {
            inner *= sizes[k];
        }
    }
    if (nd) {
        sizes[d] = 1;
    }
    if (rop != CT__RSUM && R == 0) {
        ct__fail(CT_ERR_VALUE, op, "%s(): Expected reduction dim %d to have non-zero size.",
                 op + 3, d);
        return false;
    }
    /* contiguous input in the compute dtype (a copy only when t is not one already) */
    bool reuse = t->dtype == cd && ct_is_contiguous(t);
    ct_tensor *x = reuse ? NULL : ct__tensor_new(op, t->sizes, nd, cd);
    ct_tensor *v = values ? ct__tensor_new(op, sizes, nd, cd) : NULL;
    ct_tensor *ix = indices ? ct__tensor_new(op, sizes, nd, CT_INT64) : NULL;
    bool ok = (reuse || x) && (!values || v) && (!indices || ix);
    if (ok) {
        if (!reuse) {
            ct__copy_kernel(x, t);
        }
        if (R == 0) {
            memset(ct__data(v), 0, ct_nbytes(v));
        } else {
            ct__reduce_run(rop, reuse ? t : x, outer, R, inner, v, ix);
        }
    }
    ct__release(x);
    if (!ok) {
        ct__release(v);
        ct__release(ix);
        return false;
    }
    if (values) {
        *values = v;
    }
    if (indices) {
        *indices = ix;
    }
    return true;
}

/* Reduced-dims bitmask from a dims list (n == 0: all). */
static bool ct__dims_mask(const char *op, const ct_tensor *t, const int64_t *dims, int n,
                          unsigned *mask)
{
    *mask = 0;
    if (n == 0) {
        *mask = (1u << t->ndim) - 1u;
        return true;
    }
    if (ct__null(op, dims)) {
        return false;
    }
    for (int k = 0; k < n; k++) {
        int d = ct__wrap_dim(op, dims[k], t->ndim);
        if (d < 0) {
            return false;
        }
        if (t->ndim == 0) {
            continue;
        }
        if (*mask & (1u << d)) {
            ct__fail(CT_ERR_VALUE, op, "dim %d appears multiple times in the list of dims", d);
            return false;
        }
        *mask |= 1u << d;
    }
    return true;
}

/* Shape of t with the masked dims removed (or kept as 1). */
static int ct__reduced_shape(const ct_tensor *t, unsigned mask, bool keepdim, int64_t *out)
{
    int nd = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (!(mask & (1u << d))) {
            out[nd++] = t->sizes[d];
        } else if (keepdim) {
            out[nd++] = 1;
        }
    }
    return nd;
}

/* g (reduced shape) expanded back to the input's shape. */
static ct_tensor *ct__unreduce(const ct_node *n, const ct_tensor *g)
{
    const ct__edge *e = &n->next[0];
    unsigned mask = (unsigned)n->i[0];
    int64_t keep[CT_MAX_DIMS];
    for (int d = 0; d < e->ndim; d++) {
        keep[d] = (mask & (1u << d)) ? 1 : e->sizes[d];
    }
    return ct_expand(ct_reshape(g, keep, e->ndim), e->sizes, e->ndim);
}

static void ct__sum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__unreduce(n, g);
}

static void ct__mean_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div_scalar(ct__unreduce(n, g), n->f[0]);
}

/* The result of a reduction of an empty t over the masked dims: a new unscoped tensor of
   the reduced shape in the compute dtype, every element `value` (0 for sum, NaN for mean).
   Costs O(output) whatever the sizes of t's other dims. */
static ct_tensor *ct__reduce_empty(const char *op, const ct_tensor *t, unsigned mask,
                                   bool keepdim, double value)
{
    int64_t shape[CT_MAX_DIMS];
    int nd = ct__reduced_shape(t, mask, keepdim, shape);
    ct_tensor *r = ct__tensor_new(op, shape, nd, ct__red_compute_dtype(t->dtype));
    int64_t n = ct_numel(r);
    if (r && value == 0) {
        memset(ct__data(r), 0, ct_nbytes(r));
    }
    for (int64_t i = 0; r && value != 0 && i < n; i++) {
        ct__store_f64(ct__data(r) + (size_t)i * ct_dtype_size(r->dtype), r->dtype, value);
    }
    return r;
}

/* Sums a non-empty t over the masked dims, innermost first: a new unscoped tensor in the
   compute dtype with the reduced dims kept as 1 (t's shape when nothing is reduced). */
static ct_tensor *ct__sum_dims_raw(const char *op, const ct_tensor *t, unsigned mask)
{
    ct_tensor *cur = ct_retain((ct_tensor *)(uintptr_t)t);
    for (int d = t->ndim - 1; d >= 0 && cur; d--) {
        if (!(mask & (1u << d))) {
            continue;
        }
        ct_tensor *next = NULL;
        if (!ct__reduce_dim_raw(op, CT__RSUM, cur, d, &next, NULL)) {
            next = NULL;
        }
        ct__release(cur);
        cur = next;
    }
    if (cur && (cur == t || cur->dtype != ct__red_compute_dtype(t->dtype))) { /* nothing reduced */
        ct_tensor *c = ct__tensor_new(op, cur->sizes, cur->ndim, ct__red_compute_dtype(t->dtype));
        if (c) {
            ct__copy_kernel(c, cur);
        }
        ct__release(cur);
        cur = c;
    }
    return cur;
}

/* Sum (or mean) over the masked dims. */
static ct_tensor *ct__sum_impl(const char *op, const ct_tensor *t, const int64_t *dims, int n,
                               bool keepdim, bool mean)
{
    unsigned mask;
    if (ct__null(op, t) || !ct__check_cpu(op, t) || !ct__dims_mask(op, t, dims, n, &mask)) {
        return NULL;
    }
    if (mean && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "mean(): could not infer output dtype. Input dtype must be "
                 "either a floating point or complex dtype. Got: %s", ct__dtype_title(t->dtype));
        return NULL;
    }
    int64_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        count *= (mask & (1u << d)) ? t->sizes[d] : 1;
    }
    ct_tensor *cur = ct_numel(t) == 0 ? ct__reduce_empty(op, t, mask, keepdim, mean ? NAN : 0.0)
                                      : ct__sum_dims_raw(op, t, mask);
    if (!cur) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    cur->ndim = ct__reduced_shape(t, mask, keepdim, shape);
    memcpy(cur->sizes, shape, sizeof(int64_t) * (size_t)cur->ndim);
    ct__contiguous_strides(cur->sizes, cur->ndim, cur->strides);
    if (mean && ct_numel(t) != 0) {
        double inv = 1.0 / (double)count;
        int64_t m = ct_numel(cur);
        for (int64_t i = 0; i < m; i++) {
            char *p = ct__data(cur) + (size_t)i * ct_dtype_size(cur->dtype);
            ct__store_f64(p, cur->dtype, ct__load_f64(p, cur->dtype) * inv);
        }
    }
    if (ct_dtype_is_floating_point(t->dtype)) {
        ct_node *node = ct__node_new(n == 0 ? (mean ? "MeanBackward0" : "SumBackward0")
                                            : (mean ? "MeanBackward1" : "SumBackward1"),
                                     mean ? ct__mean_backward : ct__sum_backward, &t, 1);
        if (node) {
            node->i[0] = mask;
            node->f[0] = (double)count;
        }
        cur = ct__set_history(cur, node);
    }
    return ct__scoped(cur);
}

ct_tensor *ct_sum(const ct_tensor *t) { return ct__sum_impl("ct_sum", t, NULL, 0, false, false); }

ct_tensor *ct_sum_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__sum_impl("ct_sum", t, &dim, 1, keepdim, false);
}

ct_tensor *ct_sum_dims(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    if (n > 0 && ct__null("ct_sum", dims)) {
        return NULL;
    }
    return ct__sum_impl("ct_sum", t, dims, n, keepdim, false);
}

ct_tensor *ct_mean(const ct_tensor *t) { return ct__sum_impl("ct_mean", t, NULL, 0, false, true); }

ct_tensor *ct_mean_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__sum_impl("ct_mean", t, &dim, 1, keepdim, true);
}

ct_tensor *ct_sum_to_size(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_sum_to_size";
    if (ct__null(op, t) || (ndim > 0 && ct__null(op, sizes))) {
        return NULL;
    }
    int64_t dims[CT_MAX_DIMS];
    int n = 0, lead = t->ndim - ndim;
    bool ok = lead >= 0;
    for (int d = 0; ok && d < t->ndim; d++) {
        if (d < lead) {
            dims[n++] = d;
        } else if (sizes[d - lead] == 1 && t->sizes[d] != 1) {
            dims[n++] = d;
        } else if (sizes[d - lead] != t->sizes[d]) {
            ok = false;
        }
    }
    if (!ok) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, op, "size {%s} is not expandable to size {%s}.",
                 ndim ? ct__shape_str(sizes, ndim, a, sizeof a) : "[]",
                 ct__shape_str(t->sizes, t->ndim, b, sizeof b));
        return NULL;
    }
    if (n == 0) {
        return ct_alias(t);
    }
    ct_scope_begin();
    ct_tensor *r = ct_reshape(ct_sum_dims(t, dims, n, true), sizes, ndim);
    ct_keep(r);
    ct_scope_end();
    return r;
}

/* ---- max / min / argmax / argmin ----------------------------------------------------- */
/* zeros of the input's shape with g placed at indices along dim (i[0]) */
static void ct__select_index_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    if (!ix) {
        return;
    }
    const ct__edge *e = &n->next[0];
    int d = (int)n->i[0];
    int64_t keep[CT_MAX_DIMS];
    memcpy(keep, e->sizes, sizeof keep);
    keep[d] = 1;
    ct_tensor *gc = ct_contiguous(ct_reshape(g, keep, e->ndim));
    ct_tensor *out = ct_zeros(e->sizes, e->ndim, g->dtype);
    if (!gc || !out) {
        return;
    }
    int64_t outer = 1, inner = 1, R = e->sizes[d];
    for (int k = 0; k < e->ndim; k++) {
        outer *= k < d ? e->sizes[k] : 1;
        inner *= k > d ? e->sizes[k] : 1;
    }
    const int64_t *idx = (const int64_t *)ct__data(ix);
    size_t es = ct_dtype_size(g->dtype);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t c = 0; c < inner; c++) {
            int64_t r = idx[o * inner + c];
            memcpy(ct__data(out) + (size_t)((o * R + r) * inner + c) * es,
                   ct__data(gc) + (size_t)(o * inner + c) * es, es);
        }
    }
    gi[0] = out;
}

static ct_status ct__minmax_dim(const char *op, ct__redop rop, const ct_tensor *t, int64_t dim,
                                bool keepdim, ct_tensor **values, ct_tensor **indices)
{
    if (values) {
        *values = NULL;
    }
    if (indices) {
        *indices = NULL;
    }
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return ct_error_code();
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    ct_tensor *v = NULL, *ix = NULL;
    if (d < 0 || !ct__reduce_dim_raw(op, rop, t, d, &v, &ix)) {
        return ct_error_code();
    }
    if (v->dtype != t->dtype) {
        ct_tensor *c = ct__tensor_new(op, v->sizes, v->ndim, t->dtype);
        if (c) {
            ct__copy_kernel(c, v);
        }
        ct__release(v);
        v = c;
    }
    if (!v) {
        ct__release(ix);
        return ct_error_code();
    }
    if (ct_dtype_is_floating_point(t->dtype)) {
        ct_node *n = ct__node_new(rop == CT__RMAX ? "MaxBackward0" : "MinBackward0",
                                  ct__select_index_backward, &t, 1);
        if (n) {
            n->i[0] = t->ndim ? d : 0;
            ct__save(n, ix);
        }
        v = ct__set_history(v, n);
    }
    if (!v) {
        ct__release(ix);
        return ct_error_code();
    }
    if (!keepdim && t->ndim > 0) {
        int64_t shape[CT_MAX_DIMS];
        int nd = ct__reduced_shape(t, 1u << d, false, shape);
        for (int k = 0; k < 2; k++) {
            ct_tensor *r = k ? ix : v;
            r->ndim = nd;
            memcpy(r->sizes, shape, sizeof(int64_t) * (size_t)nd);
            ct__contiguous_strides(r->sizes, nd, r->strides);
        }
    }
    if (values) {
        *values = ct__scoped(v);
    } else {
        ct__release(v);
    }
    if (indices) {
        *indices = ct__scoped(ix);
    } else {
        ct__release(ix);
    }
    return CT_OK;
}

ct_status ct_max_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim("ct_max", CT__RMAX, t, dim, keepdim, values, indices);
}

ct_status ct_min_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim("ct_min", CT__RMIN, t, dim, keepdim, values, indices);
}

static ct_tensor *ct__arg_dim(const char *op, ct__redop rop, const ct_tensor *t, int64_t dim,
                              bool keepdim)
{
    ct_tensor *ix = NULL;
    ct__minmax_dim(op, rop, t, dim, keepdim, NULL, &ix);
    return ix;
}

ct_tensor *ct_argmax_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__arg_dim("ct_argmax", CT__RMAX, t, dim, keepdim);
}

ct_tensor *ct_argmin_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__arg_dim("ct_argmin", CT__RMIN, t, dim, keepdim);
}

static ct_tensor *ct__arg_all(const char *op, ct__redop rop, const ct_tensor *t)
{
    if (ct__null(op, t)) {
        return NULL;
    }
    if (ct_numel(t) == 0) {
        ct__fail(CT_ERR_VALUE, op, "%s(): Expected reduction dim to be specified for "
                 "input.numel() == 0.", op + 3);
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = ct_keep(ct__arg_dim(op, rop, ct_flatten(t, 0, -1), 0, false));
    ct_scope_end();
    return r;
}

ct_tensor *ct_argmax(const ct_tensor *t) { return ct__arg_all("ct_argmax", CT__RMAX, t); }

ct_tensor *ct_argmin(const ct_tensor *t) { return ct__arg_all("ct_argmin", CT__RMIN, t); }

/* full max/min: the gradient is split evenly among the elements equal to the result */
static void ct__minmax_all_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    ct_tensor *mask = ct_to_dtype(ct_eq(x, y), g->dtype);
    gi[0] = ct_mul(mask, ct_div(g, ct_sum(mask)));
}

static ct_tensor *ct__minmax_all(const char *op, ct__redop rop, const ct_tensor *t)
{
    if (ct__null(op, t)) {
        return NULL;
    }
    if (ct_numel(t) == 0) {
        ct__fail(CT_ERR_VALUE, op, "%s(): Expected reduction dim to be specified for input.numel() "
                 "== 0. Specify the reduction dim with the 'dim' argument.",
                 rop == CT__RMAX ? "max" : "min");
        return NULL;
    }
    ct_tensor *v = NULL;
    ct_scope_begin();
    ct_no_grad_begin();
    ct__minmax_dim(op, rop, ct_flatten(t, 0, -1), 0, false, &v, NULL);
    ct_no_grad_end();
    ct_keep(v);
    ct_scope_end();
    if (v && ct_dtype_is_floating_point(t->dtype)) {
        ct_node *n = ct__node_new(rop == CT__RMAX ? "MaxBackward1" : "MinBackward1",
                                  ct__minmax_all_backward, &t, 1);
        if (n) {
            ct__save(n, t);
            ct__save_output(n, v);
        }
        v = ct__set_history(v, n);
    }
    return v;
}

ct_tensor *ct_max(const ct_tensor *t) { return ct__minmax_all("ct_max", CT__RMAX, t); }

ct_tensor *ct_min(const ct_tensor *t) { return ct__minmax_all("ct_min", CT__RMIN, t); }

#undef CT__RED_BLOCK
#undef CT__SUM_FN
#undef CT__BETTER
#undef CT__RED_KERNELS

CT__VECTORIZE_END
