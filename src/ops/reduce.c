/* ops/reduce.c - sum, mean, max, min, argmax, argmin, amax, amin, logsumexp, var, std, all,
 * any, linalg.vector_norm, allclose, equal; prod, nansum, nanmean, var_mean, std_mean,
 * aminmax, count_nonzero, dist, cdist.
 *
 * Legend: the input (made contiguous) is viewed as (outer, R, inner) around the reduced
 * dim; the result is (outer, inner). Kernels exist for float32, float64 and int64; other
 * integer types and bool reduce through int64.
 */
#include "../core/internal.h"
#include "reduce.h"
#include "pointwise.h"
#include "view.h"
#include "index.h"
#include "scan.h"
#include "linalg.h"
#include "../autograd/autograd.h"

CT__VECTORIZE_BEGIN

typedef enum ct__redop { CT__RSUM, CT__RPROD, CT__RMAX, CT__RMIN } ct__redop;

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

/* lane[k] = the better of lane[k] and q[k] for 16 lanes (OP: > for max, < for min) */
#define CT__BEST_LANES(lane, q, OP)                                                        \
    for (int k = 0; k < 16; k++) {                                                          \
        bool take = lane[k] == lane[k] && (q[k] != q[k] || q[k] OP lane[k]);                \
        lane[k] = take ? q[k] : lane[k];                                                    \
    }

/* The max (sign +1) / min (sign -1) of n > 0 contiguous values in 16 lanes, the lanes then
   the tail combined in order; NaN wins (the value only: no index is tracked). */
#define CT__BEST_FN(T, S)                                                                  \
    static T ct__best_##S(const T *p, int64_t n, int sign)                                  \
    {                                                                                       \
        T lane[16];                                                                         \
        for (int k = 0; k < 16; k++) {                                                      \
            lane[k] = p[k < n ? k : 0];                                                     \
        }                                                                                   \
        int64_t i = n < 16 ? n : 16;                                                        \
        for (; i + 16 <= n; i += 16) {                                                      \
            if (sign > 0) {                                                                 \
                CT__BEST_LANES(lane, (p + i), >)                                            \
            } else {                                                                        \
                CT__BEST_LANES(lane, (p + i), <)                                            \
            }                                                                               \
        }                                                                                   \
        T best = lane[0];                                                                   \
        for (int k = 1; k < 16; k++) {                                                      \
            best = CT__BETTER(lane[k], best, sign) ? lane[k] : best;                        \
        }                                                                                   \
        for (; i < n; i++) {                                                                \
            best = CT__BETTER(p[i], best, sign) ? p[i] : best;                              \
        }                                                                                   \
        return best;                                                                        \
    }

#define CT__RED_KERNELS(T, S, ACC, LANE)                                                   \
    CT__SUM_FN(T, S, ACC, LANE)                                                             \
    CT__BEST_FN(T, S)                                                                       \
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
            if (j->op == CT__RPROD) {                                                       \
                ACC acc = 1;                                                                \
                for (int64_t r = 0; r < j->R; r++) {                                        \
                    acc *= (ACC)p[r];                                                       \
                }                                                                           \
                ((T *)j->v)[o] = (T)acc;                                                    \
                continue;                                                                   \
            }                                                                               \
            int sign = j->op == CT__RMAX ? 1 : -1;                                          \
            if (!j->ix) {                                                                   \
                ((T *)j->v)[o] = ct__best_##S(p, j->R, sign);                               \
                continue;                                                                   \
            }                                                                               \
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
            if (j->op == CT__RSUM || j->op == CT__RPROD) {                                  \
                bool prod = j->op == CT__RPROD;                                             \
                for (int64_t c = 0; c < w; c++) {                                           \
                    acc[c] = prod ? 1 : 0;                                                  \
                }                                                                           \
                for (int64_t r = 0; r < j->R; r++) {                                        \
                    const T *row = p + r * j->inner;                                        \
                    if (prod) {                                                             \
                        for (int64_t c = 0; c < w; c++) {                                   \
                            acc[c] *= (ACC)row[c];                                          \
                        }                                                                   \
                    } else {                                                                \
                        for (int64_t c = 0; c < w; c++) {                                   \
                            acc[c] += (ACC)row[c];                                          \
                        }                                                                   \
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
CT__RED_KERNELS(uint8_t, u8, uint64_t, uint64_t)

/* Whether dtypes a and b hold the same bytes for max/min: equal, or bool and uint8. */
static bool ct__red_same_bytes(ct_dtype a, ct_dtype b)
{
    bool ba = a == CT_BOOL || a == CT_UINT8, bb = b == CT_BOOL || b == CT_UINT8;
    return a == b || (ba && bb);
}

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
    bool u8 = ct__red_same_bytes(x->dtype, CT_UINT8);
    void (*rows)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_rows_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_rows_f64
                                             : u8                     ? ct__red_rows_u8
                                                                      : ct__red_rows_i64;
    void (*cols)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_cols_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_cols_f64
                                             : u8                     ? ct__red_cols_u8
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

/* The dtype reduction rop computes in: max/min of bool/uint8 in uint8 (a byte per element,
   exact), else ct__red_compute_dtype. */
static ct_dtype ct__red_op_dtype(ct__redop rop, ct_dtype d)
{
    bool minmax = rop == CT__RMAX || rop == CT__RMIN;
    return minmax && ct__red_same_bytes(d, CT_UINT8) ? CT_UINT8 : ct__red_compute_dtype(d);
}

/* Sizes around dim d of t: outer (before), R (d itself; 1 for a 0-dim t), inner (after). */
static void ct__red_geometry(const ct_tensor *t, int d, int64_t *outer, int64_t *R,
                             int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    *R = t->ndim ? t->sizes[d] : 1;
    for (int k = 0; k < t->ndim; k++) {
        if (k < d) {
            *outer *= t->sizes[k];
        } else if (k > d) {
            *inner *= t->sizes[k];
        }
    }
}

/* Reduces t viewed as (outer, R, inner) (R > 0) into the contiguous v (values in t's dtype or
   the compute dtype, or NULL) and ix (int64 indices, or NULL). The values are computed in
   the compute dtype (through a temporary when v's dtype differs); t is copied first unless
   it is contiguous in the compute dtype. False (reported) when out of memory. */
static bool ct__reduce_into(const char *fn, ct__redop rop, const ct_tensor *t, int64_t outer,
                            int64_t R, int64_t inner, ct_tensor *v, ct_tensor *ix)
{
    ct_dtype cd = ct__red_op_dtype(rop, t->dtype);
    bool reuse = ct__red_same_bytes(t->dtype, cd) && ct_is_contiguous(t);
    bool cast = v && !ct__red_same_bytes(v->dtype, cd);
    ct_tensor *x = reuse ? NULL : ct__tensor_new(fn, t->sizes, t->ndim, cd);
    ct_tensor *vc = cast ? ct__tensor_new(fn, v->sizes, v->ndim, cd) : v;
    bool ok = (reuse || x) && (!cast || vc);
    if (ok) {
        if (!reuse) {
            ct__copy_kernel(x, t);
        }
        ct__reduce_run(rop, reuse ? t : x, outer, R, inner, vc, ix);
        if (cast) {
            ct__copy_kernel(v, vc);
        }
    }
    ct__release(x);
    if (cast) {
        ct__release(vc);
    }
    return ok;
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

/* The number of elements of t reduced into each output over the masked dims. */
static int64_t ct__red_count(const ct_tensor *t, unsigned mask)
{
    int64_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        count *= (mask & (1u << d)) ? t->sizes[d] : 1;
    }
    return count;
}

/* ---- sum / mean / prod ----------------------------------------------------------------- */
/* The sum family's variants. */
#define CT__SV_SUM 0
#define CT__SV_MEAN 1
#define CT__SV_PROD 2

/* What meta computes for the kernel and the node of a sum or mean (c->state). */
typedef struct ct__sum_state {
    unsigned mask; /* the reduced dims */
    int64_t count; /* the number of elements reduced into each output */
} ct__sum_state;

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

CT__GLUE_BEGIN
static void ct__sum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__unreduce(n, g);
}

static void ct__mean_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div_scalar(ct__unreduce(n, g), n->f[0]);
}

static void ct__sum_record(ct_node *n, const ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    n->i[0] = s->mask;
    n->f[0] = (double)s->count;
}

/* Attributes: dims (int[]; none or empty: all) and keepdim. Mean needs a float input. The
   output is in the compute dtype, with the reduced shape. (prod: a dim or none.) */
static bool ct__sum_meta(ct_op_call *c)
{
    ct__sum_state *s = (ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    bool keepdim = c->n_attrs > 1 && c->attrs[1].i;
    if (!ct__dims_mask(c->fn, t, c->n_attrs ? c->attrs[0].ints : NULL,
                       c->n_attrs ? (int)c->attrs[0].i : 0, &s->mask)) {
        return false;
    }
    if (c->op->variant == CT__SV_MEAN && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "mean(): could not infer output dtype. Input dtype must "
                 "be either a floating point or complex dtype. Got: %s",
                 ct__dtype_title(t->dtype));
        return false;
    }
    s->count = ct__red_count(t, s->mask);
    int64_t shape[CT_MAX_DIMS];
    int nd = ct__reduced_shape(t, s->mask, keepdim, shape);
    c->dtype = t->dtype;
    return ct__op_output(c, shape, nd, ct__red_compute_dtype(t->dtype)) != NULL;
}
CT__GLUE_END

/* Reduces (rop) the masked dims of a non-empty t into out, innermost first: each step reduces
   one dim (kept as 1) into a temporary, the last one into out (contiguous, the same
   elements). */
static bool ct__reduce_dims_into(const char *fn, ct__redop rop, const ct_tensor *t,
                                 unsigned mask, ct_tensor *out)
{
    if (mask == 0) { /* nothing reduced (a 0-dim input): a conversion */
        ct__copy_kernel(out, t);
        return true;
    }
    int first = 0;
    while (!(mask & (1u << first))) {
        first++;
    }
    ct_tensor *cur = ct_retain((ct_tensor *)(uintptr_t)t);
    for (int d = t->ndim - 1; d >= first && cur; d--) {
        if (!(mask & (1u << d))) {
            continue;
        }
        int64_t outer, R, inner, sizes[CT_MAX_DIMS];
        ct__red_geometry(cur, d, &outer, &R, &inner);
        memcpy(sizes, cur->sizes, sizeof(int64_t) * (size_t)cur->ndim);
        sizes[d] = 1;
        ct_tensor *next = d == first ? ct_retain(out) : ct__tensor_new(fn, sizes, cur->ndim,
                                                                       out->dtype);
        if (next && !ct__reduce_into(fn, rop, cur, outer, R, inner, next, NULL)) {
            ct__release(next);
            next = NULL;
        }
        ct__release(cur);
        cur = next;
    }
    bool ok = cur != NULL;
    ct__release(cur);
    return ok;
}

static ct_status ct__sum_kernel(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    ct_tensor *out = c->outputs[0];
    bool mean = c->op->variant == CT__SV_MEAN, prod = c->op->variant == CT__SV_PROD;
    if (ct_numel(t) == 0) { /* an empty input: O(output) */
        ct__fill_contig(out, mean ? NAN : prod ? 1.0 : 0.0);
        return CT_OK;
    }
    if (!ct__reduce_dims_into(c->fn, prod ? CT__RPROD : CT__RSUM, t, s->mask, out)) {
        return ct_error_code();
    }
    if (mean) {
        double inv = 1.0 / (double)s->count;
        int64_t m = ct_numel(out);
        for (int64_t i = 0; i < m; i++) {
            char *p = ct__data(out) + (size_t)i * ct_dtype_size(out->dtype);
            ct__store_f64(p, out->dtype, ct__load_f64(p, out->dtype) * inv);
        }
    }
    return CT_OK;
}

/* sum_to_size (composite): the dims to sum, kept as 1, from meta (c->state) */
typedef struct ct__sum_to_state {
    int64_t dims[CT_MAX_DIMS];
    int n;
} ct__sum_to_state;

CT__GLUE_BEGIN
/* Attribute: the target sizes (int[]), which input must broadcast to. */
static bool ct__sum_to_size_meta(ct_op_call *c)
{
    ct__sum_to_state *s = (ct__sum_to_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    const int64_t *sizes = c->attrs[0].ints;
    int ndim = (int)c->attrs[0].i, lead = t->ndim - ndim;
    bool ok = lead >= 0;
    s->n = 0;
    for (int d = 0; ok && d < t->ndim; d++) {
        if (d < lead) {
            s->dims[s->n++] = d;
        } else if (sizes[d - lead] == 1 && t->sizes[d] != 1) {
            s->dims[s->n++] = d;
        } else if (sizes[d - lead] != t->sizes[d]) {
            ok = false;
        }
    }
    if (!ok) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "size {%s} is not expandable to size {%s}.",
                 ndim ? ct__shape_str(sizes, ndim, a, sizeof a) : "[]",
                 ct__shape_str(t->sizes, t->ndim, b, sizeof b));
    }
    c->dtype = t->dtype;
    return ok;
}

/* sum over the dims meta found, reshaped to the sizes; an alias when there are none */
static ct_status ct__sum_to_size_composite(ct_op_call *c)
{
    const ct__sum_to_state *s = (const ct__sum_to_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    ct_scope_begin();
    ct_tensor *r = s->n == 0 ? ct_alias(t)
                             : ct_reshape(ct_sum_dims(t, s->dims, s->n, true), c->attrs[0].ints,
                                          (int)c->attrs[0].i);
    return ct__composite_end(c, r);
}
CT__GLUE_END

/* ---- max / min / argmax / argmin ----------------------------------------------------- */
/* What meta computes for the kernel and the node of max/min/argmax/argmin (c->state). */
typedef struct ct__minmax_state {
    int d;                      /* the wrapped dim (0 for a 0-dim input or all elements) */
    int64_t outer, R, inner;    /* the input around it (all: 1, numel, 1) */
} ct__minmax_state;

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

CT__GLUE_BEGIN
/* max.dim / min.dim save the indices and the dim */
static void ct__minmax_dim_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = ((const ct__minmax_state *)c->state)->d;
    ct__save(n, c->outputs[1]);
}

/* full max/min: the gradient is split evenly among the elements equal to the result */
static void ct__minmax_all_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    ct_tensor *mask = ct_to_dtype(ct_eq(x, y), g->dtype);
    gi[0] = ct_mul(mask, ct_div(g, ct_sum(mask)));
}
CT__GLUE_END

/* The family's variant: bit 0 min (else max), bit 1 indices only (argmax/argmin). A call
   over a dim has the attributes dim and keepdim, one over all elements none. Outputs: the
   values in the input's dtype unless indices only, then the int64 indices over a dim (or
   argmax's over all elements). */
#define CT__MM_MIN 1
#define CT__MM_ARG 2
CT__GLUE_BEGIN
static bool ct__minmax_meta(ct_op_call *c)
{
    ct__minmax_state *s = (ct__minmax_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    int var = c->op->variant;
    bool dim_form = c->n_attrs > 0;
    const char *name = (var & CT__MM_ARG) ? ((var & CT__MM_MIN) ? "argmin" : "argmax")
                                          : ((var & CT__MM_MIN) ? "min" : "max");
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    c->dtype = t->dtype;
    if (!dim_form) {
        if (ct_numel(t) == 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "%s(): Expected reduction dim to be specified for "
                     "input.numel() == 0.%s", name, (var & CT__MM_ARG) ? "" : " Specify the "
                     "reduction dim with the 'dim' argument.");
            return false;
        }
        s->d = 0;
        s->outer = 1;
        s->R = ct_numel(t);
        s->inner = 1;
    } else {
        s->d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
        if (s->d < 0) {
            return false;
        }
        ct__red_geometry(t, s->d, &s->outer, &s->R, &s->inner);
        if (s->R == 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "%s(): Expected reduction dim %d to have non-zero "
                     "size.", name, s->d);
            return false;
        }
        nd = ct__reduced_shape(t, t->ndim ? 1u << s->d : 0u, c->attrs[1].i != 0, shape);
    }
    if (!(var & CT__MM_ARG) && !ct__op_output(c, shape, nd, t->dtype)) {
        return false;
    }
    return (!dim_form && !(var & CT__MM_ARG)) || ct__op_output(c, shape, nd, CT_INT64);
}
CT__GLUE_END

static ct_status ct__minmax_kernel(ct_op_call *c)
{
    const ct__minmax_state *s = (const ct__minmax_state *)c->state;
    int var = c->op->variant;
    bool arg = (var & CT__MM_ARG) != 0;
    ct_tensor *v = arg ? NULL : c->outputs[0];
    ct_tensor *ix = arg ? c->outputs[0] : c->n_outputs > 1 ? c->outputs[1] : NULL;
    ct__redop rop = (var & CT__MM_MIN) ? CT__RMIN : CT__RMAX;
    return ct__reduce_into(c->fn, rop, c->inputs[0], s->outer, s->R, s->inner, v, ix)
               ? CT_OK
               : ct_error_code();
}

/* ---- amax / amin --------------------------------------------------------------------- */
CT__GLUE_BEGIN
/* amax / amin save the reduced dims (i[0]), the input and the result. */
static void ct__amax_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = ((const ct__sum_state *)c->state)->mask;
    ct__save(n, c->inputs[0]);
    ct__save_output(n, c->outputs[0]);
}

/* The dims of a mask over ndim dims as a list; returns how many. */
static int ct__mask_dims(unsigned mask, int ndim, int64_t *dims)
{
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (mask & (1u << d)) {
            dims[nd++] = d;
        }
    }
    return nd;
}

/* The reduced dims of a node's input (mask i[0]) as a list; returns how many. */
static int ct__node_dims(const ct_node *n, int64_t *dims)
{
    return ct__mask_dims((unsigned)n->i[0], n->next[0].ndim, dims);
}

/* t minus its mean over the masked dims (count elements each), the mean taken as x0 +
   mean(t - x0) with x0 the first element of each reduced slice: exact for constant data, so
   that var / std of equal elements is 0 (as PyTorch's Welford). */
static ct_tensor *ct__centered(const ct_tensor *t, unsigned mask, int64_t count)
{
    int64_t dims[CT_MAX_DIMS];
    int nd = ct__mask_dims(mask, t->ndim, dims);
    const ct_tensor *x0 = t;
    for (int k = 0; k < nd && count > 0; k++) {
        x0 = ct_narrow(x0, dims[k], 0, 1);
    }
    ct_tensor *shift = ct_div_scalar(ct_sum_dims(ct_sub(t, x0), dims, nd, true), (double)count);
    return ct_sub(t, ct_add(x0, shift));
}

/* The gradient split evenly among the elements equal to the result along the reduced dims. */
static void ct__amax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    int64_t dims[CT_MAX_DIMS];
    int nd = ct__node_dims(n, dims);
    ct_tensor *hit = ct_to_dtype(ct_eq(x, ct__unreduce(n, y)), g->dtype);
    gi[0] = ct_mul(hit, ct_div(ct__unreduce(n, g), ct_sum_dims(hit, dims, nd, true)));
}

/* Attributes: dims (int[]; empty: all) and keepdim; variant 1 for amin. The output has the
   input's dtype and the reduced shape. */
static bool ct__amax_meta(ct_op_call *c)
{
    ct__sum_state *s = (ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    const char *name = c->op->variant ? "amin" : "amax";
    int n = (int)c->attrs[0].i;
    if (!ct__dims_mask(c->fn, t, c->attrs[0].ints, n, &s->mask)) {
        return false;
    }
    if (n == 0 && ct_numel(t) == 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s(): Expected reduction dim to be specified for "
                 "input.numel() == 0. Specify the reduction dim with the 'dim' argument.", name);
        return false;
    }
    for (int d = 0; d < t->ndim; d++) {
        if ((s->mask & (1u << d)) && t->sizes[d] == 0) {
            ct__fail(CT_ERR_INDEX, c->fn, "%s(): Expected reduction dim %d to have non-zero "
                     "size.", name, d);
            return false;
        }
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = ct__reduced_shape(t, s->mask, c->attrs[1].i != 0, shape);
    c->dtype = t->dtype;
    return ct__op_output(c, shape, nd, t->dtype) != NULL;
}
CT__GLUE_END

static ct_status ct__amax_kernel(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    ct__redop rop = c->op->variant ? CT__RMIN : CT__RMAX;
    return ct__reduce_dims_into(c->fn, rop, c->inputs[0], s->mask, c->outputs[0])
               ? CT_OK
               : ct_error_code();
}

/* ---- composite reductions ------------------------------------------------------------ */
/* What the composites' input must be (their variant). */
#define CT__RC_VAR 1  /* floating point, worded as var/std */
#define CT__RC_STD 2  /* std (with CT__RC_VAR) */
#define CT__RC_NORM 4 /* floating point, worded as linalg.vector_norm; attrs: ord, dims */
#define CT__RC_ANY 8  /* any (else all) */
#define CT__RC_NANMEAN 16 /* floating point, worded as nanmean; nansum divided by the count */
#define CT__RC_MEAN 32 /* worded as var_mean / std_mean (with CT__RC_VAR) */

/* A norm of negative or infinite order (attrs[0]) has no identity: it cannot reduce an empty
   dim (dims in attrs[1]; none: all elements). */
static bool ct__norm_identity_check(ct_op_call *c, unsigned mask)
{
    const ct_tensor *t = c->inputs[0];
    double ord = c->attrs[0].f;
    if (!(ord < 0 || isinf(ord))) {
        return true;
    }
    if (c->attrs[1].i == 0 && ct_numel(t) == 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "linalg.vector_norm cannot compute the %g norm on an empty "
                 "tensor because the operation does not have an identity", ord);
        return false;
    }
    for (int d = 0; d < t->ndim; d++) {
        if ((mask & (1u << d)) && t->sizes[d] == 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "linalg.vector_norm cannot compute the %g norm on the "
                     "dimension %dbecause this dimension is empty and the operation does not "
                     "have an identity", ord, d);
            return false;
        }
    }
    return true;
}

CT__GLUE_BEGIN
/* Meta of the composite reductions: checks the dims (attrs[0], or attrs[1] after a norm's
   ord; none or empty: all) and the dtype, and counts the reduced elements (c->state). */
static bool ct__red_composite_meta(ct_op_call *c)
{
    ct__sum_state *s = (ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    int var = c->op->variant, ia = var & CT__RC_NORM ? 1 : 0;
    bool has = c->n_attrs > ia;
    if (!ct__dims_mask(c->fn, t, has ? c->attrs[ia].ints : NULL, has ? (int)c->attrs[ia].i : 0,
                       &s->mask)) {
        return false;
    }
    s->count = ct__red_count(t, s->mask);
    c->dtype = t->dtype;
    if ((var & (CT__RC_VAR | CT__RC_NORM | CT__RC_NANMEAN)) &&
        !ct_dtype_is_floating_point(t->dtype)) {
        if (var & CT__RC_NORM) {
            ct__fail(CT_ERR_DTYPE, c->fn, "linalg.vector_norm: Expected a floating point or "
                     "complex tensor as input. Got %s", ct__dtype_title(t->dtype));
        } else if (var & CT__RC_NANMEAN) {
            ct__fail(CT_ERR_DTYPE, c->fn, "nanmean(): expected input to have floating point or "
                     "complex dtype but got %s", ct__dtype_title(t->dtype));
        } else if (var & CT__RC_MEAN) {
            ct__fail(CT_ERR_DTYPE, c->fn, "%s_mean only support floating point and complex "
                     "dtypes", (var & CT__RC_STD) ? "std" : "var");
        } else {
            ct__fail(CT_ERR_DTYPE, c->fn, "std and var only support floating point and "
                     "complex dtypes");
        }
        return false;
    }
    return !(var & CT__RC_NORM) || ct__norm_identity_check(c, s->mask);
}

/* The dims (attrs[k]; none: all) of a composite reduction. */
static const int64_t *ct__attr_dims(const ct_op_call *c, int k, int *n)
{
    *n = c->n_attrs > k ? (int)c->attrs[k].i : 0;
    return c->n_attrs > k ? c->attrs[k].ints : NULL;
}

/* log(sum(exp(x - m))) + m with m the amax (0 where infinite); float for integers. Computed
   without grad: its node takes PyTorch's formula. */
static ct_status ct__logsumexp_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    bool keepdim = c->attrs[1].i != 0;
    ct_no_grad_begin();
    ct_scope_begin();
    const ct_tensor *x = ct_dtype_is_floating_point(t->dtype)
                             ? t
                             : ct_to_dtype(t, ct_get_default_dtype());
    ct_tensor *r;
    if (ct_numel(t) == 0) {
        r = ct_log(ct_sum_dims(ct_exp(x), dims, n, keepdim));
    } else {
        ct_tensor *m = ct_amax(x, dims, n, true);
        m = ct_where(ct_eq_scalar(ct_abs(m), INFINITY), ct_zeros_like(m), m);
        r = ct_add(ct_log(ct_sum_dims(ct_exp(ct_sub(x, m)), dims, n, keepdim)),
                   ct_sum_dims(m, dims, n, keepdim));
    }
    ct_status st = ct__composite_end(c, r);
    ct_no_grad_end();
    return st;
}

/* logsumexp saves the reduced dims (i[0]), the input and the result. */
static void ct__logsumexp_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = ((const ct__sum_state *)c->state)->mask;
    ct__save(n, c->inputs[0]);
    ct__save_output(n, c->outputs[0]);
}

/* PyTorch's logsumexp_backward: g * exp(x - result), g and result brought back to x's shape */
static void ct__logsumexp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = ct_mul(ct__unreduce(n, g), ct_exp(ct_sub(x, ct__unreduce(n, ct__saved(n, 1)))));
}

/* The divisor of var / std: max(0, N - correction). */
static double ct__var_divisor(const ct_op_call *c)
{
    double den = (double)((const ct__sum_state *)c->state)->count - c->attrs[1].f;
    return den > 0 ? den : 0.0;
}

/* sum((x - mean)^2) / max(0, N - correction), its square root for std (float16/bfloat16 in
   float32, rounded once). Attributes: dims, correction, keepdim. var's autograd comes from its ops; std has its own node (its
   gradient is 0 where the result is 0, as PyTorch's), so it computes without grad. */
static ct_status ct__var_composite(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    bool std = (c->op->variant & CT__RC_STD) != 0;
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    if (std) {
        ct_no_grad_begin();
    }
    ct_scope_begin();
    ct_dtype dt = t->dtype; /* float16/bfloat16: in float32, rounded once (PyTorch's CPU) */
    ct_tensor *d = ct__centered(ct__is_half(dt) ? ct_to_dtype(t, CT_FLOAT32) : t, s->mask,
                                s->count);
    ct_tensor *r = ct_div_scalar(ct_sum_dims(ct_mul(d, d), dims, n, c->attrs[2].i != 0),
                                 ct__var_divisor(c));
    ct_status st = ct__composite_end(c, ct_to_dtype(std ? ct_sqrt(r) : r, dt));
    if (std) {
        ct_no_grad_end();
    }
    return st;
}

/* std saves the reduced dims (i[0]), N - correction (f[0]), whether dims were given (f[1]),
   the input and the result. */
static void ct__std_record(ct_node *n, const ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    int nd;
    n->i[0] = s->mask;
    n->f[0] = (double)s->count - c->attrs[1].f;
    n->f[1] = ct__attr_dims(c, 0, &nd) != NULL && nd > 0;
    ct__save(n, c->inputs[0]);
    ct__save_output(n, c->outputs[0]);
}

static ct_tensor *ct__mean_keepdim(const ct_tensor *x, const int64_t *dims, int n);

/* PyTorch's std_backward: var_backward of g / (2 std), 0 where std is 0, with var_backward
   = (2 / (N - correction)) * g * (x - mean(x)) (g brought back to x's shape; without dims
   and N - correction <= 0: g * NaN), each op in x's dtype as PyTorch's formula. */
static void ct__std_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    ct_tensor *gv = ct_div(g, ct_mul_scalar(y, 2.0));
    gv = ct__unreduce(n, ct_where(ct_eq_scalar(y, 0.0), ct_zeros_like(gv), gv));
    double dof = n->f[0];
    if (dof <= 0 && n->f[1] == 0) {
        gi[0] = ct_mul_scalar(gv, NAN);
        return;
    }
    int64_t dims[CT_MAX_DIMS];
    int nd = ct__mask_dims((unsigned)n->i[0], x->ndim, dims);
    gi[0] = ct_mul(ct_mul_scalar(gv, 2.0 / dof), ct_sub(x, ct__mean_keepdim(x, dims, nd)));
}

/* all: the amin of the input as bool (true for an empty reduction); any (CT__RC_ANY): the
   amax (false when empty). Attributes: dims (none: all), keepdim. Bool, uint8 for a uint8
   input (as PyTorch). */
static ct_status ct__all_composite(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    bool any = (c->op->variant & CT__RC_ANY) != 0;
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    bool keepdim = n > 0 && c->attrs[1].i;
    ct_scope_begin();
    ct_tensor *r;
    if (s->count == 0) {
        int64_t shape[CT_MAX_DIMS];
        int nd = ct__reduced_shape(t, s->mask, keepdim, shape);
        r = ct_full(shape, nd, any ? 0.0 : 1.0, CT_BOOL);
    } else {
        ct_tensor *b = ct_to_dtype(t, CT_BOOL);
        r = any ? ct_amax(b, dims, n, keepdim) : ct_amin(b, dims, n, keepdim);
    }
    return ct__composite_end(c, t->dtype == CT_UINT8 ? ct_to_dtype(r, CT_UINT8) : r);
}

/* s^(1/ord) (sqrt for 2) with a 0 gradient where s is 0 (PyTorch's norm_backward) */
static ct_tensor *ct__norm_root(ct_tensor *s, double ord)
{
    ct_tensor *zero = ct_eq_scalar(s, 0.0), *z = ct_zeros_like(s);
    ct_tensor *safe = ct_where(zero, ct_add_scalar(z, 1.0), s);
    return ct_where(zero, z, ord == 2 ? ct_sqrt(safe) : ct_pow_scalar(safe, 1.0 / ord));
}

/* |x|^ord for an ord below 1, with a 0 gradient where x is 0 (PyTorch's norm_backward) */
static ct_tensor *ct__abs_pow(ct_tensor *a, double ord)
{
    ct_tensor *zero = ct_eq_scalar(a, 0.0), *z = ct_zeros_like(a);
    return ct_where(zero, z, ct_pow_scalar(ct_where(zero, ct_add_scalar(z, 1.0), a), ord));
}

/* vector norm of order attrs[0] over dims attrs[1], keepdim attrs[2] */
static ct_status ct__vector_norm_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    double ord = c->attrs[0].f;
    int n;
    const int64_t *dims = ct__attr_dims(c, 1, &n);
    bool keepdim = c->attrs[2].i != 0;
    ct_scope_begin();
    ct_tensor *a = ct_abs(t), *r;
    if (isinf(ord)) {
        r = ord > 0 ? ct_amax(a, dims, n, keepdim) : ct_amin(a, dims, n, keepdim);
    } else if (ord == 0) {
        r = ct_sum_dims(ct_to_dtype(ct_logical_not(ct_logical_not(t)), t->dtype), dims, n,
                        keepdim);
    } else if (ord == 1) {
        r = ct_sum_dims(a, dims, n, keepdim);
    } else {
        r = ct__norm_root(ord == 2 ? ct_sum_dims(ct_mul(t, t), dims, n, keepdim)
                                   : ct_sum_dims(ord < 1 ? ct__abs_pow(a, ord)
                                                         : ct_pow_scalar(a, ord),
                                                 dims, n, keepdim),
                          ord);
    }
    return ct__composite_end(c, r);
}

/* isclose over the broadcast inputs, then all (0-dim bool). Attributes: rtol, atol,
   equal_nan. Error: CT_ERR_DTYPE when the dtypes differ ("Float did not match Double"). */
static bool ct__allclose_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    c->dtype = a->dtype;
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "%s did not match %s", ct__dtype_title(a->dtype),
                 ct__dtype_title(b->dtype));
        return false;
    }
    return true;
}

static ct_status ct__allclose_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    double rtol = c->attrs[0].f, atol = c->attrs[1].f;
    ct_scope_begin();
    ct_tensor *err = ct_abs(ct_sub(a, b));
    ct_tensor *near = ct_logical_and(ct_lt_scalar(err, INFINITY),
                                     ct_le(err, ct_add_scalar(ct_mul_scalar(ct_abs(b), rtol),
                                                              atol)));
    ct_tensor *close = ct_logical_or(ct_eq(a, b), near);
    if (c->attrs[2].i) {
        close = ct_logical_or(close, ct_logical_and(ct_ne(a, a), ct_ne(b, b)));
    }
    return ct__composite_end(c, ct_all(close));
}

/* same sizes and equal elements (0-dim bool) */
static ct_status ct__equal_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    bool same = a->ndim == b->ndim &&
                !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim);
    ct_scope_begin();
    return ct__composite_end(c, same ? ct_all(ct_eq(a, b)) : ct_zeros(NULL, 0, CT_BOOL));
}

/* ---- prod, nansum / nanmean, var_mean / std_mean, aminmax, count_nonzero, dist, cdist --- */
/* t reversed along dim d. Mirrors: torch.flip(t, [d]). */
static ct_tensor *ct__flip(const ct_tensor *t, int d)
{
    if (ct_dim(t) == 0) {
        return ct_alias(t);
    }
    double n = (double)ct_size(t, d);
    return ct_index_select(t, d, ct_arange(n - 1.0, -1.0, -1.0, CT_INT64));
}

/* PyTorch's prod_safe_zeros_backward: g times the product of the other elements along d,
   as an exclusive cumprod from the start times one from the end (exact with zeros). */
static ct_tensor *ct__prod_safe_zeros(const ct_tensor *g, const ct_tensor *x, int d)
{
    int64_t n = x->sizes[d], ones_size[CT_MAX_DIMS];
    if (n == 0) {
        return ct_expand_as(g, x);
    }
    memcpy(ones_size, x->sizes, sizeof ones_size);
    ones_size[d] = 1;
    ct_tensor *ones = ct_ones(ones_size, x->ndim, x->dtype);
    const ct_tensor *fwd[2] = {ones, ct_narrow(x, d, 0, n - 1)};
    const ct_tensor *rev[2] = {ones, ct__flip(ct_narrow(x, d, 1, n - 1), d)};
    ct_tensor *before = ct_cumprod(ct_cat(fwd, 2, d), d, CT_DTYPE_DEFAULT);
    ct_tensor *after = ct__flip(ct_cumprod(ct_cat(rev, 2, d), d, CT_DTYPE_DEFAULT), d);
    return ct_mul(g, ct_mul(before, after));
}

/* PyTorch's prod_backward: g * result / input without zeros, else the zero-safe form (over
   the flattened input for a product of all elements). Saved: the input and the result. */
static void ct__prod_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    const ct__edge *e = &n->next[0];
    if (!x || !y) {
        return;
    }
    if (e->ndim == 0) {
        gi[0] = ct_alias(g);
        return;
    }
    ct_tensor *gu = ct__unreduce(n, g);
    if (!ct_item(ct_any(ct_eq_scalar(x, 0.0)))) {
        gi[0] = ct_mul(gu, ct_div(ct__unreduce(n, y), x));
    } else if ((unsigned)n->i[0] == (1u << e->ndim) - 1u && e->ndim > 1) {
        int64_t numel = ct_numel(x);
        ct_tensor *flat = ct_reshape(ct_contiguous(x), &numel, 1);
        gi[0] = ct_reshape(ct__prod_safe_zeros(ct_reshape(ct_contiguous(gu), &numel, 1), flat,
                                               0), e->sizes, e->ndim);
    } else {
        int d = 0;
        while (!((unsigned)n->i[0] & (1u << d))) {
            d++;
        }
        gi[0] = ct__prod_safe_zeros(gu, x, d);
    }
}

/* nansum: the sum with NaN read as 0 (attributes: dims, keepdim), computed without grad: its
   node's gradient is g * !isnan(x), NaN where g is (PyTorch's nansum_backward) */
static ct_status ct__nansum_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    ct_no_grad_begin();
    ct_scope_begin();
    const ct_tensor *x = ct_dtype_is_floating_point(t->dtype)
                             ? ct_where(ct_isnan(t), ct_zeros_like(t), t)
                             : t;
    ct_status st = ct__composite_end(c, ct_sum_dims(x, dims, n, c->attrs[1].i != 0));
    ct_no_grad_end();
    return st;
}

/* nansum saves the reduced dims (i[0]) and the input */
static void ct__nansum_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = ((const ct__sum_state *)c->state)->mask;
    ct__save(n, c->inputs[0]);
}

static void ct__nansum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0);
    ct_tensor *keep = x ? ct_logical_not(ct_isnan(x)) : NULL;
    gi[0] = ct_mul(ct__unreduce(n, g), ct_to_dtype(keep, ct_tensor_dtype(g)));
}

/* nanmean: nansum over the count of non-NaN elements (autograd from those ops) */
static ct_status ct__nanmean_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    bool keepdim = c->attrs[1].i != 0;
    ct_scope_begin();
    ct_tensor *count = ct_sum_dims(ct_logical_not(ct_isnan(t)), dims, n, keepdim);
    return ct__composite_end(c, ct_div(ct_nansum(t, dims, n, keepdim), count));
}

/* The second output r1 of a composite: an unscoped reference appended after output 0. */
static ct_status ct__composite_end2(ct_op_call *c, ct_tensor *r0, ct_tensor *r1)
{
    ct_retain(r1);
    ct_status st = ct__composite_end(c, r1 ? r0 : NULL);
    if (st == CT_OK) {
        c->outputs[c->n_outputs++] = r1;
    } else {
        ct_release(r1);
    }
    return st;
}

/* var_mean / std_mean (CT__RC_STD): (var or std, mean) over dims; attributes as var's */
static ct_status ct__var_mean_composite(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    bool keepdim = c->attrs[2].i != 0;
    ct_scope_begin();
    ct_tensor *v = (c->op->variant & CT__RC_STD) ? ct_std_dim(t, dims, n, c->attrs[1].f, keepdim)
                                                 : ct_var_dim(t, dims, n, c->attrs[1].f, keepdim);
    ct_tensor *m = ct_div_scalar(ct_sum_dims(t, dims, n, keepdim), (double)s->count);
    return ct__composite_end2(c, v, m);
}

/* aminmax: attributes dim (int[] of 0 or 1: none or one dim) and keepdim. */
static bool ct__aminmax_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    c->dtype = t->dtype;
    if (c->attrs[0].i == 0) {
        if (ct_numel(t) == 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "aminmax(): cannot compute aminmax over an empty "
                     "dimension as the operation has no identity.");
            return false;
        }
        return true;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].ints[0], t->ndim);
    if (d >= 0 && t->ndim && t->sizes[d] == 0) {
        ct__fail(CT_ERR_INDEX, c->fn, "aminmax: Expected reduction dim %d to have non-zero size.",
                 d);
        return false;
    }
    return d >= 0;
}

/* (amin, amax) over the dim or all elements; without a dim, keepdim keeps every dim as 1 */
static ct_status ct__aminmax_composite(ct_op_call *c)
{
    int n = (int)c->attrs[0].i;
    bool keepdim = c->attrs[1].i != 0;
    ct_scope_begin();
    ct_tensor *lo = ct_amin(c->inputs[0], c->attrs[0].ints, n, keepdim);
    ct_tensor *hi = ct_amax(c->inputs[0], c->attrs[0].ints, n, keepdim);
    return ct__composite_end2(c, lo, hi);
}

/* count_nonzero over dims (attrs[0]; empty: all): the int64 sum of the nonzero mask */
static ct_status ct__count_nonzero_composite(ct_op_call *c)
{
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    ct_scope_begin();
    ct_tensor *nz = ct_logical_not(ct_logical_not(c->inputs[0]));
    return ct__composite_end(c, ct_sum_dims(nz, dims, n, false));
}

/* dist: the inputs' promoted dtype must be floating point (PyTorch's norm() wording). */
static bool ct__dist_meta(ct_op_call *c)
{
    ct_dtype d = ct_promote_types(c->inputs[0]->dtype, c->inputs[1]->dtype);
    c->dtype = d;
    if (!ct_dtype_is_floating_point(d)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "norm(): input dtype should be either floating point or "
                 "complex. Got %s instead.", ct__dtype_title(d));
        return false;
    }
    return true;
}

/* the p-norm (attrs[0]) of input - other over all elements */
static ct_status ct__dist_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *r = ct_linalg_vector_norm(ct_sub(c->inputs[0], c->inputs[1]), c->attrs[0].f, NULL,
                                         0, false);
    return ct__composite_end(c, r);
}

/* cdist: x1 (B.., P, M) and x2 (B.., R, M) of one float dtype; p (attrs[0]) >= 0; compute
   mode (attrs[1]) 0, 1 or 2. */
static bool ct__cdist_meta(ct_op_call *c)
{
    const ct_tensor *x[2] = {c->inputs[0], c->inputs[1]};
    double p = c->attrs[0].f;
    int64_t mode = c->attrs[1].i;
    c->dtype = x[0]->dtype;
    for (int k = 0; k < 2; k++) {
        if (x[k]->ndim < 2) {
            ct__fail(CT_ERR_SHAPE, c->fn, "cdist only supports at least 2D tensors, X%d got: %dD",
                     k + 1, x[k]->ndim);
            return false;
        }
    }
    int64_t m1 = x[0]->sizes[x[0]->ndim - 1], m2 = x[1]->sizes[x[1]->ndim - 1];
    if (m1 != m2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "X1 and X2 must have the same number of columns. X1: %lld "
                 "X2: %lld", (long long)m1, (long long)m2);
        return false;
    }
    for (int k = 0; k < 2; k++) {
        if (!ct_dtype_is_floating_point(x[k]->dtype)) {
            ct__fail(CT_ERR_DTYPE, c->fn, "cdist only supports floating-point dtypes, X%d got: "
                     "%s", k + 1, ct__dtype_title(x[k]->dtype));
            return false;
        }
        if (x[k]->dtype == CT_FLOAT16 || x[k]->dtype == CT_BFLOAT16) { /* as PyTorch's CPU */
            ct__fail(CT_ERR_DTYPE, c->fn, "\"cdist\" not implemented for '%s'",
                     ct__dtype_title(x[k]->dtype));
            return false;
        }
    }
    if (x[0]->dtype != x[1]->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "expected scalar type %s but found %s",
                 ct__dtype_title(x[0]->dtype), ct__dtype_title(x[1]->dtype));
        return false;
    }
    if (!(p >= 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "cdist only supports non-negative p values");
        return false;
    }
    if (mode < 0 || mode > 2) {
        ct__fail(CT_ERR_VALUE, c->fn, "possible modes: 0, 1, 2, but was: %lld", (long long)mode);
        return false;
    }
    return true;
}
CT__GLUE_END

/* PyTorch's _euclidean_dist: |a|^2 - 2 a.b + |b|^2 as one matmul of padded operands, clamped
   at 1e-30 before the square root */
static ct_tensor *ct__euclidean_dist(const ct_tensor *x1, const ct_tensor *x2)
{
    const int64_t last = -1;
    ct_tensor *n1 = ct_sum_dims(ct_mul(x1, x1), &last, 1, true);
    ct_tensor *n2 = ct_sum_dims(ct_mul(x2, x2), &last, 1, true);
    const ct_tensor *a[3] = {ct_mul_scalar(x1, -2.0), n1, ct_ones_like(n1)};
    const ct_tensor *b[3] = {x2, ct_ones_like(n2), n2};
    ct_tensor *r = ct_matmul(ct_cat(a, 3, -1), ct_mt(ct_cat(b, 3, -1)));
    return ct_sqrt(ct_clamp(r, 1e-30, INFINITY));
}

/* The direct cdist: the p-norms over M of the broadcast differences (B.., P, R, M), in at most
   CT__CDIST_PIECES pieces of x1's rows of about CT__CDIST_BLOCK differences each (without
   grad, the memory stays bounded). */
#define CT__CDIST_BLOCK ((int64_t)1 << 22)
#define CT__CDIST_PIECES 64
static ct_tensor *ct__cdist_direct(const ct_tensor *x1, const ct_tensor *x2, double p)
{
    const int64_t last = -1;
    int64_t rows = x1->sizes[x1->ndim - 2], batch1 = 1;
    for (int k = 0; k < x1->ndim - 2; k++) {
        batch1 *= x1->sizes[k];
    }
    int64_t total = rows * batch1 * ct_numel(x2);
    int64_t pieces = (total + CT__CDIST_BLOCK - 1) / CT__CDIST_BLOCK;
    pieces = pieces < 1 ? 1 : pieces > CT__CDIST_PIECES ? CT__CDIST_PIECES : pieces;
    pieces = pieces > rows ? (rows ? rows : 1) : pieces;
    int64_t step = (rows + pieces - 1) / pieces;
    const ct_tensor *part[CT__CDIST_PIECES];
    int n = 0;
    for (int64_t at = 0; at < rows || n == 0; at += step) {
        int64_t len = rows - at < step ? rows - at : step;
        const ct_tensor *a = pieces == 1 ? x1 : ct_narrow(x1, -2, at, len);
        part[n++] = ct_linalg_vector_norm(ct_sub(ct_unsqueeze(a, -2), ct_unsqueeze(x2, -3)), p,
                                          &last, 1, false);
    }
    return n == 1 ? (ct_tensor *)(uintptr_t)part[0] : ct_cat(part, n, -2);
}

CT__GLUE_BEGIN
/* the p-norm of every pair of rows: through the matmul form for p == 2 when the mode asks
   (1) or by default (0) when either has more than 25 rows, else directly */
static ct_status ct__cdist_composite(ct_op_call *c)
{
    const ct_tensor *x1 = c->inputs[0], *x2 = c->inputs[1];
    double p = c->attrs[0].f;
    int64_t mode = c->attrs[1].i, r1 = x1->sizes[x1->ndim - 2], r2 = x2->sizes[x2->ndim - 2];
    bool mm = p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
    ct_scope_begin();
    return ct__composite_end(c, mm ? ct__euclidean_dist(x1, x2) : ct__cdist_direct(x1, x2, p));
}

/* ---- descriptors ------------------------------------------------------------------------ */
#define CT__REDUCTION(SYM, NAME, SCHEMA, API, VAR, META, K, NODE, BW, SAVE, RECORD)            \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_REDUCTION, CT_AUTOCAST_NONE,    \
                                       VAR, 0u, NULL, META, K, NULL, NODE, CT__BACKWARD(BW),       \
                                       SAVE, RECORD, NULL};
CT__REDUCTION(sum, "aten::sum", "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
              "ct_sum", 0, ct__sum_meta, CT__K_ALL(ct__sum_kernel), "SumBackward0",
              ct__sum_backward, 0u, ct__sum_record)
CT__REDUCTION(sum_dim, "aten::sum", "sum.dim_IntList(Tensor self, int[1]? dim, bool "
              "keepdim=False, *, ScalarType? dtype=None) -> Tensor", "ct_sum_dim ct_sum_dims",
              0, ct__sum_meta, CT__K_ALL(ct__sum_kernel), "SumBackward1", ct__sum_backward, 0u,
              ct__sum_record)
CT__REDUCTION(mean, "aten::mean", "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
              "ct_mean", CT__SV_MEAN, ct__sum_meta, CT__K_FLOAT(ct__sum_kernel), "MeanBackward0",
              ct__mean_backward, 0u, ct__sum_record)
CT__REDUCTION(mean_dim, "aten::mean", "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, "
              "*, ScalarType? dtype=None) -> Tensor", "ct_mean_dim", CT__SV_MEAN, ct__sum_meta,
              CT__K_FLOAT(ct__sum_kernel), "MeanBackward1", ct__mean_backward, 0u,
              ct__sum_record)
CT__REDUCTION(max, "aten::max", "max(Tensor self) -> Tensor", "ct_max", 0, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), "MaxBackward1", ct__minmax_all_backward,
              (1u << 0) | (1u << 8), NULL)
CT__REDUCTION(min, "aten::min", "min(Tensor self) -> Tensor", "ct_min", CT__MM_MIN,
              ct__minmax_meta, CT__K_ALL(ct__minmax_kernel), "MinBackward1",
              ct__minmax_all_backward, (1u << 0) | (1u << 8), NULL)
CT__REDUCTION(max_dim, "aten::max", "max.dim(Tensor self, int dim, bool keepdim=False) -> "
              "(Tensor values, Tensor indices)", "ct_max_dim", 0, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), "MaxBackward0", ct__select_index_backward, 0u,
              ct__minmax_dim_record)
CT__REDUCTION(min_dim, "aten::min", "min.dim(Tensor self, int dim, bool keepdim=False) -> "
              "(Tensor values, Tensor indices)", "ct_min_dim", CT__MM_MIN,
              ct__minmax_meta, CT__K_ALL(ct__minmax_kernel), "MinBackward0",
              ct__select_index_backward, 0u, ct__minmax_dim_record)
CT__REDUCTION(argmax, "aten::argmax", "argmax(Tensor self, int? dim=None, bool keepdim=False) "
              "-> Tensor", "ct_argmax ct_argmax_dim", CT__MM_ARG, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), NULL, NULL, 0u, NULL)
CT__REDUCTION(argmin, "aten::argmin", "argmin(Tensor self, int? dim=None, bool keepdim=False) "
              "-> Tensor", "ct_argmin ct_argmin_dim", CT__MM_ARG | CT__MM_MIN, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), NULL, NULL, 0u, NULL)
CT__REDUCTION(amax, "aten::amax", "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> "
              "Tensor", "ct_amax", 0, ct__amax_meta, CT__K_ALL(ct__amax_kernel), "AmaxBackward0",
              ct__amax_backward, 0u, ct__amax_record)
CT__REDUCTION(amin, "aten::amin", "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> "
              "Tensor", "ct_amin", 1, ct__amax_meta, CT__K_ALL(ct__amax_kernel), "AminBackward0",
              ct__amax_backward, 0u, ct__amax_record)
CT__REDUCTION(prod, "aten::prod", "prod(Tensor self, *, ScalarType? dtype=None) -> Tensor",
              "ct_prod", CT__SV_PROD, ct__sum_meta, CT__K_ALL(ct__sum_kernel), "ProdBackward0",
              ct__prod_backward, 0u, ct__amax_record)
CT__REDUCTION(prod_dim, "aten::prod", "prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
              "ScalarType? dtype=None) -> Tensor", "ct_prod_dim", CT__SV_PROD, ct__sum_meta,
              CT__K_ALL(ct__sum_kernel), "ProdBackward1", ct__prod_backward, 0u,
              ct__amax_record)
#undef CT__REDUCTION
/* composites: autograd comes from the ops they are built from */
#define CT__RED_COMPOSITE(SYM, NAME, SCHEMA, API, VAR, META, COMPOSITE)                        \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_REDUCTION, CT_AUTOCAST_NONE,    \
                                       VAR, 0u, NULL, META, CT__K_NONE, COMPOSITE, NULL, NULL,  \
                                       0u, NULL, NULL};
static const ct_op ct__op_logsumexp = {
    "aten::logsumexp", "logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
    "ct_logsumexp", CT_OP_REDUCTION, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__red_composite_meta,
    CT__K_NONE, ct__logsumexp_composite, "LogsumexpBackward0", ct__logsumexp_backward, 0u,
    ct__logsumexp_record, NULL};
CT__RED_COMPOSITE(var, "aten::var", "var.correction(Tensor self, int[1]? dim=None, *, Scalar? "
                  "correction=None, bool keepdim=False) -> Tensor", "ct_var ct_var_dim",
                  CT__RC_VAR, ct__red_composite_meta, ct__var_composite)
static const ct_op ct__op_std = {"aten::std", "std.correction(Tensor self, int[1]? dim=None, *, "
                                 "Scalar? correction=None, bool keepdim=False) -> Tensor",
                                 "ct_std ct_std_dim", CT_OP_REDUCTION, CT_AUTOCAST_NONE,
                                 CT__RC_VAR | CT__RC_STD, 0u, NULL, ct__red_composite_meta,
                                 CT__K_NONE, ct__var_composite, "StdBackward0",
                                 ct__std_backward, 0u, ct__std_record, NULL};
CT__RED_COMPOSITE(all, "aten::all", "all(Tensor self) -> Tensor", "ct_all", 0,
                  ct__red_composite_meta, ct__all_composite)
CT__RED_COMPOSITE(all_dim, "aten::all", "all.dim(Tensor self, int dim, bool keepdim=False) -> "
                  "Tensor", "ct_all_dim", 0, ct__red_composite_meta, ct__all_composite)
CT__RED_COMPOSITE(any, "aten::any", "any(Tensor self) -> Tensor", "ct_any", CT__RC_ANY,
                  ct__red_composite_meta, ct__all_composite)
CT__RED_COMPOSITE(any_dim, "aten::any", "any.dim(Tensor self, int dim, bool keepdim=False) -> "
                  "Tensor", "ct_any_dim", CT__RC_ANY, ct__red_composite_meta,
                  ct__all_composite)
CT__RED_COMPOSITE(linalg_vector_norm, "aten::linalg_vector_norm", "linalg_vector_norm(Tensor "
                  "self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
                  "dtype=None) -> Tensor", "ct_linalg_vector_norm", CT__RC_NORM,
                  ct__red_composite_meta, ct__vector_norm_composite)
CT__RED_COMPOSITE(allclose, "aten::allclose", "allclose(Tensor self, Tensor other, float "
                  "rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool", "ct_allclose",
                  0, ct__allclose_meta, ct__allclose_composite)
CT__RED_COMPOSITE(equal, "aten::equal", "equal(Tensor self, Tensor other) -> bool", "ct_equal",
                  0, NULL, ct__equal_composite)
CT__RED_COMPOSITE(nanmean, "aten::nanmean", "nanmean(Tensor self, int[1]? dim=None, bool "
                  "keepdim=False, *, ScalarType? dtype=None) -> Tensor", "ct_nanmean",
                  CT__RC_NANMEAN, ct__red_composite_meta, ct__nanmean_composite)
CT__RED_COMPOSITE(var_mean, "aten::var_mean", "var_mean.correction(Tensor self, int[1]? "
                  "dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
                  "ct_var_mean", CT__RC_VAR | CT__RC_MEAN, ct__red_composite_meta,
                  ct__var_mean_composite)
CT__RED_COMPOSITE(std_mean, "aten::std_mean", "std_mean.correction(Tensor self, int[1]? "
                  "dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
                  "ct_std_mean", CT__RC_VAR | CT__RC_STD | CT__RC_MEAN, ct__red_composite_meta,
                  ct__var_mean_composite)
CT__RED_COMPOSITE(aminmax, "aten::aminmax", "aminmax(Tensor self, *, int? dim=None, bool "
                  "keepdim=False) -> (Tensor min, Tensor max)", "ct_aminmax", 0,
                  ct__aminmax_meta, ct__aminmax_composite)
CT__RED_COMPOSITE(count_nonzero, "aten::count_nonzero", "count_nonzero.dim_IntList(Tensor self, "
                  "int[] dim) -> Tensor", "ct_count_nonzero", 0, ct__red_composite_meta,
                  ct__count_nonzero_composite)
CT__RED_COMPOSITE(dist, "aten::dist", "dist(Tensor self, Tensor other, Scalar p=2) -> Tensor",
                  "ct_dist", 0, ct__dist_meta, ct__dist_composite)
CT__RED_COMPOSITE(cdist, "aten::cdist", "cdist(Tensor x1, Tensor x2, float p=2, int? "
                  "compute_mode=None) -> Tensor", "ct_cdist", 0, ct__cdist_meta,
                  ct__cdist_composite)
#undef CT__RED_COMPOSITE
static const ct_op ct__op_nansum = {"aten::nansum", "nansum(Tensor self, int[1]? dim=None, bool "
                                    "keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                                    "ct_nansum", CT_OP_REDUCTION, CT_AUTOCAST_NONE, 0, 0u, NULL,
                                    ct__red_composite_meta, CT__K_NONE, ct__nansum_composite,
                                    "NansumBackward0", ct__nansum_backward, 0u,
                                    ct__nansum_record, NULL};
static const ct_op ct__op_sum_to_size = {"aten::sum_to_size", "sum_to_size(Tensor self, SymInt[] "
                                         "size) -> Tensor", "ct_sum_to_size", CT_OP_REDUCTION,
                                         CT_AUTOCAST_NONE, 0, 0u, NULL, ct__sum_to_size_meta,
                                         CT__K_NONE, ct__sum_to_size_composite, NULL, NULL, 0u,
                                         NULL, NULL};

/* ---- public functions ---------------------------------------------------------------------- */
/* A sum or mean over n dims (NULL: none, all reduced). */
static ct_tensor *ct__call_sum(const ct_op *op, const char *fn, const ct_tensor *t,
                               bool dim_form, const int64_t *dims, int n, bool keepdim)
{
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (dim_form) {
        ct__call_ints(&c, dims, n);
        ct__call_i(&c, keepdim);
    }
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_sum(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_sum, "ct_sum", t, false, NULL, 0, false);
}

ct_tensor *ct_sum_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_sum_dim, "ct_sum", t, true, &dim, 1, keepdim);
}

ct_tensor *ct_sum_dims(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    if (n > 0 && ct__null("ct_sum", dims)) {
        return NULL;
    }
    return ct__call_sum(&ct__op_sum_dim, "ct_sum", t, true, dims, n, keepdim);
}

/* The mean over n dims (n >= 1), kept as size 1. */
static ct_tensor *ct__mean_keepdim(const ct_tensor *x, const int64_t *dims, int n)
{
    return ct__call_sum(&ct__op_mean_dim, "ct_mean", x, true, dims, n, true);
}

ct_tensor *ct_mean(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_mean, "ct_mean", t, false, NULL, 0, false);
}

ct_tensor *ct_mean_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_mean_dim, "ct_mean", t, true, &dim, 1, keepdim);
}

ct_tensor *ct_sum_to_size(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *fn = "ct_sum_to_size";
    if (ndim > 0 && ct__null(fn, sizes)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__sum_to_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_sum_to_size, fn, in, 1);
    ct__call_ints(&c, sizes, ndim);
    c.state = &s;
    return ct__dispatch(&c);
}

/* A max/min/argmax/argmin over dim (all elements when the op has no dim form). */
static ct_op_call *ct__call_minmax(ct_op_call *c, ct__minmax_state *s, const ct_tensor **in,
                                   const ct_op *op, const char *fn, bool dim_form, int64_t dim,
                                   bool keepdim)
{
    ct__call_init(c, op, fn, in, 1);
    if (dim_form) {
        ct__call_i(c, dim);
        ct__call_i(c, keepdim);
    }
    c->state = s;
    return c;
}

static ct_tensor *ct__minmax(const ct_op *op, const char *fn, const ct_tensor *t, bool dim_form,
                             int64_t dim, bool keepdim)
{
    const ct_tensor *in[1] = {t};
    ct__minmax_state s;
    ct_op_call c;
    return ct__dispatch(ct__call_minmax(&c, &s, in, op, fn, dim_form, dim, keepdim));
}

/* The two outputs of a dispatched call of two-output op (r: what the entry returned, output
   0; the other in outputs[1]), both scoped, through the out pointers; an output the caller
   does not want (NULL pointer) is freed. Returns CT_OK or the error code. */
static ct_status ct__pair_outputs(const ct_op_call *c, ct_tensor *r, ct_tensor **first,
                                  ct_tensor **second)
{
    if (first) {
        *first = NULL;
    }
    if (second) {
        *second = NULL;
    }
    if (!r) {
        return ct_error_code();
    }
    if (first) {
        *first = r;
    } else {
        ct_free(r);
    }
    if (second) {
        *second = c->outputs[1];
    } else {
        ct_free(c->outputs[1]);
    }
    return CT_OK;
}

/* max.dim / min.dim: values and indices */
static ct_status ct__minmax_dim(const ct_op *op, const char *fn, const ct_tensor *t,
                                int64_t dim, bool keepdim, ct_tensor **values,
                                ct_tensor **indices)
{
    const ct_tensor *in[1] = {t};
    ct__minmax_state s;
    ct_op_call c;
    ct_tensor *v = ct__dispatch(ct__call_minmax(&c, &s, in, op, fn, true, dim, keepdim));
    return ct__pair_outputs(&c, v, values, indices);
}

ct_status ct_max_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim(&ct__op_max_dim, "ct_max", t, dim, keepdim, values, indices);
}

ct_status ct_min_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim(&ct__op_min_dim, "ct_min", t, dim, keepdim, values, indices);
}

ct_tensor *ct_argmax_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__minmax(&ct__op_argmax, "ct_argmax", t, true, dim, keepdim);
}

ct_tensor *ct_argmin_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__minmax(&ct__op_argmin, "ct_argmin", t, true, dim, keepdim);
}

ct_tensor *ct_argmax(const ct_tensor *t)
{
    return ct__minmax(&ct__op_argmax, "ct_argmax", t, false, 0, false);
}

ct_tensor *ct_argmin(const ct_tensor *t)
{
    return ct__minmax(&ct__op_argmin, "ct_argmin", t, false, 0, false);
}

ct_tensor *ct_max(const ct_tensor *t)
{
    return ct__minmax(&ct__op_max, "ct_max", t, false, 0, false);
}

ct_tensor *ct_min(const ct_tensor *t)
{
    return ct__minmax(&ct__op_min, "ct_min", t, false, 0, false);
}

/* A reduction over n dims (dims checked first) with keepdim; state: a ct__sum_state. */
static ct_tensor *ct__call_dims(const ct_op *op, const char *fn, const ct_tensor *t,
                                const int64_t *dims, int n, bool keepdim)
{
    if (n > 0 && ct__null(fn, dims)) {
        return NULL;
    }
    return ct__call_sum(op, fn, t, true, dims, n, keepdim);
}

ct_tensor *ct_amax(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_amax, "ct_amax", t, dims, n, keepdim);
}

ct_tensor *ct_amin(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_amin, "ct_amin", t, dims, n, keepdim);
}

ct_tensor *ct_logsumexp(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_logsumexp, "ct_logsumexp", t, dims, n, keepdim);
}

ct_tensor *ct_all(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_all, "ct_all", t, false, NULL, 0, false);
}

ct_tensor *ct_any(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_any, "ct_any", t, false, NULL, 0, false);
}

ct_tensor *ct_all_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_all_dim, "ct_all", t, true, &dim, 1, keepdim);
}

ct_tensor *ct_any_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_any_dim, "ct_any", t, true, &dim, 1, keepdim);
}

/* var / std over n dims (attributes in schema order: dims, correction, keepdim) */
static ct_tensor *ct__call_var(const ct_op *op, const char *fn, const ct_tensor *t,
                               const int64_t *dims, int n, double correction, bool keepdim)
{
    if (n > 0 && ct__null(fn, dims)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_ints(&c, dims, n);
    ct__call_f(&c, correction);
    ct__call_i(&c, keepdim);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_var(const ct_tensor *t, double correction)
{
    return ct__call_var(&ct__op_var, "ct_var", t, NULL, 0, correction, false);
}

ct_tensor *ct_std(const ct_tensor *t, double correction)
{
    return ct__call_var(&ct__op_std, "ct_std", t, NULL, 0, correction, false);
}

ct_tensor *ct_var_dim(const ct_tensor *t, const int64_t *dims, int n, double correction,
                      bool keepdim)
{
    return ct__call_var(&ct__op_var, "ct_var", t, dims, n, correction, keepdim);
}

ct_tensor *ct_std_dim(const ct_tensor *t, const int64_t *dims, int n, double correction,
                      bool keepdim)
{
    return ct__call_var(&ct__op_std, "ct_std", t, dims, n, correction, keepdim);
}

ct_tensor *ct_linalg_vector_norm(const ct_tensor *t, double ord, const int64_t *dims, int n,
                                 bool keepdim)
{
    const char *fn = "ct_linalg_vector_norm";
    if (n > 0 && ct__null(fn, dims)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_vector_norm, fn, in, 1);
    ct__call_f(&c, ord);
    ct__call_ints(&c, dims, n);
    ct__call_i(&c, keepdim);
    c.state = &s;
    return ct__dispatch(&c);
}

/* allclose / equal: the op's 0-dim bool read back; false after an error */
static bool ct__call_bool(ct_op_call *c)
{
    ct_tensor *r = ct__dispatch(c);
    bool v = r && ct_item(r) != 0.0;
    ct_free(r);
    return v;
}

bool ct_allclose(const ct_tensor *input, const ct_tensor *other, double rtol, double atol,
                 bool equal_nan)
{
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, &ct__op_allclose, "ct_allclose", in, 2);
    ct__call_f(&c, rtol);
    ct__call_f(&c, atol);
    ct__call_i(&c, equal_nan);
    return ct__call_bool(&c);
}

bool ct_equal(const ct_tensor *input, const ct_tensor *other)
{
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, &ct__op_equal, "ct_equal", in, 2);
    return ct__call_bool(&c);
}

ct_tensor *ct_prod(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_prod, "ct_prod", t, false, NULL, 0, false);
}

ct_tensor *ct_prod_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_prod_dim, "ct_prod", t, true, &dim, 1, keepdim);
}

ct_tensor *ct_nansum(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_nansum, "ct_nansum", t, dims, n, keepdim);
}

ct_tensor *ct_nanmean(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_nanmean, "ct_nanmean", t, dims, n, keepdim);
}

/* var_mean / std_mean: the two results through the out pointers */
static ct_status ct__var_mean(const ct_op *op, const char *fn, const ct_tensor *t,
                              const int64_t *dims, int n, double correction, bool keepdim,
                              ct_tensor **first, ct_tensor **mean)
{
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_ints(&c, dims, n);
    ct__call_f(&c, correction);
    ct__call_i(&c, keepdim);
    c.state = &s;
    return ct__pair_outputs(&c, ct__dispatch(&c), first, mean);
}

ct_status ct_var_mean(const ct_tensor *t, const int64_t *dims, int n, double correction,
                      bool keepdim, ct_tensor **var, ct_tensor **mean)
{
    return ct__var_mean(&ct__op_var_mean, "ct_var_mean", t, dims, n, correction, keepdim, var,
                        mean);
}

ct_status ct_std_mean(const ct_tensor *t, const int64_t *dims, int n, double correction,
                      bool keepdim, ct_tensor **std, ct_tensor **mean)
{
    return ct__var_mean(&ct__op_std_mean, "ct_std_mean", t, dims, n, correction, keepdim, std,
                        mean);
}

ct_status ct_aminmax(const ct_tensor *t, const int64_t *dim, bool keepdim, ct_tensor **min,
                     ct_tensor **max)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, &ct__op_aminmax, "ct_aminmax", in, 1);
    ct__call_ints(&c, dim, dim ? 1 : 0);
    ct__call_i(&c, keepdim);
    return ct__pair_outputs(&c, ct__dispatch(&c), min, max);
}

ct_tensor *ct_count_nonzero(const ct_tensor *t, const int64_t *dims, int n)
{
    const char *fn = "ct_count_nonzero";
    if (n > 0 && ct__null(fn, dims)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_count_nonzero, fn, in, 1);
    ct__call_ints(&c, dims, n);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_dist(const ct_tensor *input, const ct_tensor *other, double p)
{
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, &ct__op_dist, "ct_dist", in, 2);
    ct__call_f(&c, p);
    return ct__dispatch(&c);
}

ct_tensor *ct_cdist(const ct_tensor *x1, const ct_tensor *x2, double p,
                    ct_cdist_compute_mode compute_mode)
{
    const ct_tensor *in[2] = {x1, x2};
    ct_op_call c;
    ct__call_init(&c, &ct__op_cdist, "ct_cdist", in, 2);
    ct__call_f(&c, p);
    ct__call_i(&c, (int64_t)compute_mode);
    return ct__dispatch(&c);
}

#undef CT__RED_BLOCK
#undef CT__SUM_FN
#undef CT__BETTER
#undef CT__BEST_LANES
#undef CT__BEST_FN
#undef CT__RED_KERNELS
#undef CT__MM_MIN
#undef CT__MM_ARG
#undef CT__RC_VAR
#undef CT__RC_STD
#undef CT__RC_NORM
#undef CT__RC_ANY
#undef CT__RC_NANMEAN
#undef CT__RC_MEAN
#undef CT__SV_SUM
#undef CT__SV_MEAN
#undef CT__SV_PROD
#undef CT__CDIST_BLOCK
#undef CT__CDIST_PIECES
CT__GLUE_END
CT__VECTORIZE_END
