/* ops/scan.c - cumsum, cumprod, cummax, cummin, logcumsumexp.
 *
 * Legend: the input (made contiguous in the compute dtype: float32, float64 or int64) is
 * viewed as (outer, R, inner) around dim; each of its outer * inner lines (R elements at
 * stride inner) is scanned in order, as PyTorch's cpu_cum_base_kernel. Sums and products run
 * two rows, or a chunk of columns, at once (independent accumulators, so the adds overlap),
 * each line still in order, so the numbers are PyTorch's bit for bit.
 */
#include "../core/internal.h"
#include "scan.h"
#include "reduce.h"
#include "pointwise.h"
#include "view.h"
#include "index.h"
#include "../autograd/autograd.h"

CT__VECTORIZE_BEGIN

typedef enum ct__scanop { CT__SC_SUM, CT__SC_PROD, CT__SC_LSE, CT__SC_MAX, CT__SC_MIN } ct__scanop;

/* What meta computes for the kernel and the node (c->state). */
typedef struct ct__scan_state {
    int d;                   /* the wrapped dim (0 for a 0-dim input) */
    int64_t outer, R, inner; /* the input around it */
} ct__scan_state;

typedef struct ct__scan_job {
    ct__scanop op;
    const char *x; /* (outer, R, inner) contiguous, compute dtype */
    char *y;       /* the same shape and dtype */
    int64_t *ix;   /* cummax / cummin indices, or NULL */
    int64_t outer, R, inner;
} ct__scan_job;

/* Sums and products of rows (inner == 1) run two rows at once, the second CT__SCAN_LAG
   elements behind the first: rows a multiple of 4 KiB apart would otherwise load and store
   at addresses the CPU takes for aliases of each other. Columns (inner > 1) run in chunks of
   CT__SCAN_CHUNK. */
#define CT__SCAN_LAG 16
#define CT__SCAN_CHUNK 256

/* PyTorch's _log_add_exp_helper: log(exp(x) + exp(acc)); NaN in acc propagates, equal
   infinities stay as they are. */
static double ct__log_add_exp(double x, double acc)
{
    double lo = isnan(acc) ? acc : (acc < x ? acc : x);
    double hi = isnan(acc) ? acc : (x < acc ? acc : x);
    if (lo != hi || isfinite(lo)) {
        return log1p(exp(lo - hi)) + hi;
    }
    return x;
}

/* Sum (OP +) or product (OP *) scans of T accumulating in ACC (double for floats, uint64 for
   int64 so that overflow wraps): NAME_rows scans row `row` and, when pair, the next one
   lagging behind; NAME_cols scans w columns of (R, inner) rows from p into q. */
#define CT__SCAN_ACC(T, ACC, NAME, OP, INIT)                                               \
    static void NAME##_rows(const T *p0, T *q0, int64_t R, bool pair)                       \
    {                                                                                       \
        const T *p1 = p0 + R;                                                               \
        T *q1 = q0 + R;                                                                     \
        int64_t lag = pair ? (R < CT__SCAN_LAG ? R : CT__SCAN_LAG) : R, i = 0;              \
        ACC a0 = INIT, a1 = INIT;                                                           \
        for (; i < lag; i++) {                                                              \
            a0 = a0 OP(ACC) p0[i];                                                          \
            q0[i] = (T)a0;                                                                  \
        }                                                                                   \
        for (; i < R; i++) {                                                                \
            a0 = a0 OP(ACC) p0[i];                                                          \
            q0[i] = (T)a0;                                                                  \
            a1 = a1 OP(ACC) p1[i - lag];                                                    \
            q1[i - lag] = (T)a1;                                                            \
        }                                                                                   \
        for (i = pair ? R - lag : R; i < R; i++) {                                          \
            a1 = a1 OP(ACC) p1[i];                                                          \
            q1[i] = (T)a1;                                                                  \
        }                                                                                   \
    }                                                                                       \
    static void NAME##_cols(const T *p, T *q, int64_t R, int64_t inner, int64_t w)          \
    {                                                                                       \
        ACC acc[CT__SCAN_CHUNK];                                                            \
        for (int64_t c = 0; c < w; c++) {                                                   \
            acc[c] = INIT;                                                                  \
        }                                                                                   \
        for (int64_t r = 0; r < R; r++) {                                                   \
            for (int64_t c = 0; c < w; c++) {                                               \
                acc[c] = acc[c] OP(ACC) p[r * inner + c];                                   \
                q[r * inner + c] = (T)acc[c];                                               \
            }                                                                               \
        }                                                                                   \
    }

/* Per compute dtype: the sum and product scans, one line of logcumsumexp / cummax / cummin
   (cummax / cummin keep the later of equal values and the latest NaN), and the parallel
   body over items: pairs of rows or (outer, column chunk) pairs for sums and products, lines
   for the others. */
#define CT__SCAN_KERNELS(T, S, ACC)                                                        \
    CT__SCAN_ACC(T, ACC, ct__scan_sum_##S, +, 0)                                            \
    CT__SCAN_ACC(T, ACC, ct__scan_prod_##S, *, 1)                                           \
    static void ct__scan_line_##S(const ct__scan_job *j, int64_t line)                      \
    {                                                                                       \
        int64_t st = j->inner, off = (line / st) * j->R * st + line % st, bi = 0;           \
        const T *p = (const T *)j->x + off;                                                 \
        T *q = (T *)j->y + off, best = p[0];                                                \
        double lse = -INFINITY;                                                             \
        for (int64_t r = 0; r < j->R; r++) {                                                \
            T v = p[r * st];                                                                \
            if (j->op == CT__SC_LSE) {                                                      \
                lse = ct__log_add_exp((double)v, lse);                                      \
                q[r * st] = (T)lse;                                                         \
                continue;                                                                   \
            }                                                                               \
            bool take = j->op == CT__SC_MAX ? v >= best : v <= best;                        \
            if (v != v || (best == best && take)) {                                         \
                best = v;                                                                   \
                bi = r;                                                                     \
            }                                                                               \
            q[r * st] = best;                                                               \
            j->ix[off + r * st] = bi;                                                       \
        }                                                                                   \
    }                                                                                       \
    static void ct__scan_##S(int64_t b, int64_t e, void *ctx)                               \
    {                                                                                       \
        const ct__scan_job *j = (const ct__scan_job *)ctx;                                  \
        const T *x = (const T *)j->x;                                                       \
        T *y = (T *)j->y;                                                                   \
        bool sum = j->op == CT__SC_SUM;                                                     \
        int64_t chunks = (j->inner + CT__SCAN_CHUNK - 1) / CT__SCAN_CHUNK;                  \
        for (int64_t it = b; it < e; it++) {                                                \
            if (j->op != CT__SC_SUM && j->op != CT__SC_PROD) {                              \
                ct__scan_line_##S(j, it);                                                   \
            } else if (j->inner == 1) {                                                     \
                int64_t row = 2 * it;                                                       \
                bool pair = row + 1 < j->outer;                                             \
                (sum ? ct__scan_sum_##S##_rows : ct__scan_prod_##S##_rows)(                 \
                    x + row * j->R, y + row * j->R, j->R, pair);                            \
            } else {                                                                        \
                int64_t o = it / chunks, c0 = (it % chunks) * CT__SCAN_CHUNK;               \
                int64_t w = j->inner - c0 < CT__SCAN_CHUNK ? j->inner - c0 : CT__SCAN_CHUNK; \
                int64_t at = o * j->R * j->inner + c0;                                      \
                (sum ? ct__scan_sum_##S##_cols : ct__scan_prod_##S##_cols)(                 \
                    x + at, y + at, j->R, j->inner, w);                                     \
            }                                                                               \
        }                                                                                   \
    }
CT__SCAN_KERNELS(float, f32, double)
CT__SCAN_KERNELS(double, f64, double)
CT__SCAN_KERNELS(int64_t, i64, uint64_t)

/* The number of parallel items of a job (see ct__scan_##S) and the elements each covers. */
static int64_t ct__scan_items(const ct__scan_job *j, int64_t *per_item)
{
    if (j->op != CT__SC_SUM && j->op != CT__SC_PROD) {
        *per_item = j->R;
        return j->outer * j->inner;
    }
    if (j->inner == 1) {
        *per_item = 2 * j->R;
        return (j->outer + 1) / 2;
    }
    *per_item = j->R * (j->inner < CT__SCAN_CHUNK ? j->inner : CT__SCAN_CHUNK);
    return j->outer * ((j->inner + CT__SCAN_CHUNK - 1) / CT__SCAN_CHUNK);
}

/* The dtype an op computes in, from the input's (in) and the output's (out) dtype. */
static ct_dtype ct__scan_compute_dtype(ct__scanop op, ct_dtype in, ct_dtype out)
{
    ct_dtype d = op == CT__SC_SUM || op == CT__SC_PROD ? out : in;
    return ct_dtype_is_floating_point(d) ? d : CT_INT64;
}

CT__GLUE_BEGIN
/* dim (attrs[0]) and, for cumsum / cumprod, dtype (attrs[1]; CT_DTYPE_DEFAULT: None).
   Outputs: the values (the input's shape) and for cummax / cummin the int64 indices. */
static bool ct__scan_meta(ct_op_call *c)
{
    ct__scan_state *s = (ct__scan_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    ct__scanop op = (ct__scanop)c->op->variant;
    s->d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (s->d < 0) {
        return false;
    }
    s->outer = s->inner = 1;
    s->R = t->ndim ? t->sizes[s->d] : 1;
    for (int k = 0; k < t->ndim; k++) {
        s->outer *= k < s->d ? t->sizes[k] : 1;
        s->inner *= k > s->d ? t->sizes[k] : 1;
    }
    ct_dtype out = t->dtype;
    if (op == CT__SC_SUM || op == CT__SC_PROD) {
        int64_t want = c->attrs[1].i;
        if (want < 0 || want >= CT_DTYPE_COUNT) {
            ct__fail(CT_ERR_DTYPE, c->fn, "invalid dtype %lld", (long long)want);
            return false;
        }
        out = want ? (ct_dtype)want : ct_dtype_is_floating_point(out) ? out : CT_INT64;
    }
    c->dtype = out;
    if (!ct__op_output(c, t->sizes, t->ndim, out)) {
        return false;
    }
    return (op != CT__SC_MAX && op != CT__SC_MIN) ||
           ct__op_output(c, t->sizes, t->ndim, CT_INT64) != NULL;
}
CT__GLUE_END

static ct_status ct__scan_kernel(ct_op_call *c)
{
    const ct__scan_state *s = (const ct__scan_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    ct_tensor *y = c->outputs[0];
    ct__scanop op = (ct__scanop)c->op->variant;
    if (ct_numel(t) == 0) {
        return CT_OK;
    }
    ct_dtype cd = ct__scan_compute_dtype(op, t->dtype, y->dtype);
    bool reuse = t->dtype == cd && ct_is_contiguous(t), cast = y->dtype != cd;
    ct_tensor *x = reuse ? NULL : ct__tensor_new(c->fn, t->sizes, t->ndim, cd);
    ct_tensor *yc = cast ? ct__tensor_new(c->fn, y->sizes, y->ndim, cd) : y;
    bool ok = (reuse || x) && yc;
    if (ok) {
        if (!reuse) {
            ct__copy_kernel(x, t);
        }
        ct__scan_job j;
        j.op = op;
        j.x = ct__data(reuse ? t : x);
        j.y = ct__data(yc);
        j.ix = c->n_outputs > 1 ? (int64_t *)ct__data(c->outputs[1]) : NULL;
        j.outer = s->outer;
        j.R = s->R;
        j.inner = s->inner;
        void (*fn)(int64_t, int64_t, void *) = cd == CT_FLOAT32   ? ct__scan_f32
                                               : cd == CT_FLOAT64 ? ct__scan_f64
                                                                  : ct__scan_i64;
        int64_t per_item, items = ct__scan_items(&j, &per_item);
        ct__parallel_for(items, CT__GRAIN / per_item + 1, fn, &j);
        if (cast) {
            ct__copy_kernel(y, yc);
        }
    }
    ct__release(x);
    if (cast) {
        ct__release(yc);
    }
    return ok ? CT_OK : ct_error_code();
}

/* ---- derivatives ------------------------------------------------------------------------ */
CT__GLUE_BEGIN
/* The nodes keep the dim (i[0]); cumprod and logcumsumexp save the input and the result,
   cummax / cummin the indices. */
static void ct__scan_record(ct_node *n, const ct_op_call *c)
{
    ct__scanop op = (ct__scanop)c->op->variant;
    n->i[0] = ((const ct__scan_state *)c->state)->d;
    if (op == CT__SC_PROD || op == CT__SC_LSE) {
        ct__save(n, c->inputs[0]);
        ct__save_output(n, c->outputs[0]);
    } else if (op != CT__SC_SUM) {
        ct__save(n, c->outputs[1]);
    }
}

/* Cumulative sum of g along d from the end: flip(cumsum(flip(g))). */
static ct_tensor *ct__reversed_cumsum(const ct_tensor *g, int d)
{
    return ct__flip(ct_cumsum(ct__flip(g, d), d, CT_DTYPE_DEFAULT), d);
}

static void ct__cumsum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__reversed_cumsum(g, (int)n->i[0]);
}
CT__GLUE_END

/* where(mask, a, 0) */
static ct_tensor *ct__keep(const ct_tensor *mask, const ct_tensor *a)
{
    return ct_where(mask, a, ct_zeros_like(a));
}

/* The gradient of cumprod at x (with zeros) as a function PyTorch can differentiate again
   (its path under create_graph): for each k along d, sum over j >= k of g_j times the product
   of x_0..x_j without x_k. O(n^2). */
static ct_tensor *ct__cumprod_backward_graph(const ct_tensor *g, const ct_tensor *x, int d)
{
    int64_t n = x->sizes[d];
    ct_tensor *out = NULL;
    for (int64_t k = 0; k < n; k++) {
        ct_tensor *omitted = k ? ct_prod_dim(ct_narrow(x, d, 0, k), d, true) : NULL;
        if (k + 1 < n) {
            ct_tensor *after = ct_cumprod(ct_narrow(x, d, k + 1, n - k - 1), d, CT_DTYPE_DEFAULT);
            const ct_tensor *parts[2] = {k ? omitted : ct_ones_like(ct_narrow(x, d, 0, 1)),
                                         k ? ct_mul(omitted, after) : after};
            omitted = ct_cat(parts, 2, d);
        }
        ct_tensor *slice = ct_sum_dim(ct_mul(ct_narrow(g, d, k, n - k), omitted), d, true);
        const ct_tensor *both[2] = {out, slice};
        out = k ? ct_cat(both, 2, d) : slice;
    }
    return out;
}

CT__GLUE_BEGIN
/* PyTorch's cumprod_backward: without zeros, reversed_cumsum(out * g) / x. With zeros, under
   create_graph ct__cumprod_backward_graph; else per line: before the first zero the same
   over that part; at the first zero, the product before it times sum(g_j * prod(x over
   (zero, j])) over j up to the second zero; after it 0. */
static void ct__cumprod_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    int d = (int)n->i[0];
    if (!x || !y) {
        return;
    }
    ct_tensor *w = ct_mul(y, g), *is_zero = ct_eq_scalar(x, 0.0);
    if (!ct_item(ct_any(is_zero))) {
        gi[0] = ct_div(ct__reversed_cumsum(w, d), x);
        return;
    }
    if (ct_is_grad_enabled() && x->ndim > 0) {
        gi[0] = ct__cumprod_backward_graph(g, x, d);
        return;
    }
    ct_tensor *z = ct_cumsum(is_zero, d, CT_DTYPE_DEFAULT), *one = ct_ones_like(x);
    ct_tensor *before = ct_eq_scalar(z, 0.0), *seg = ct_eq_scalar(z, 1.0);
    ct_tensor *first = ct_logical_and(is_zero, seg);
    ct_tensor *head = ct__keep(before, ct_div(ct__reversed_cumsum(ct__keep(before, w), d),
                                              ct_where(before, x, one)));
    ct_tensor *lead = ct_prod_dim(ct_where(before, x, one), d, true);
    ct_tensor *tail = ct_cumprod(ct_where(ct_logical_and(seg, ct_logical_not(first)), x, one),
                                 d, CT_DTYPE_DEFAULT);
    ct_tensor *at_zero = ct_mul(lead, ct_sum_dim(ct_mul(ct__keep(seg, g), tail), d, true));
    gi[0] = ct_add(head, ct__keep(first, at_zero));
}

/* PyTorch's logcumsumexp_backward: the positive and negative parts of g in log space,
   reverse-scanned against the result. */
static void ct__logcumsumexp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    int d = (int)n->i[0];
    if (!x || !y) {
        return;
    }
    double lowest_value = ct_tensor_dtype(g) == CT_FLOAT32 ? -3.4028234663852886e38 /* FLT_MAX */
                                                           : -1.7976931348623157e308;
    ct_tensor *lowest = ct_full_like(g, lowest_value);
    ct_tensor *log_abs = ct_log(ct_abs(g)), *part[2];
    for (int k = 0; k < 2; k++) {
        ct_tensor *lg = ct_where(k ? ct_lt_scalar(g, 0.0) : ct_gt_scalar(g, 0.0), log_abs,
                                 lowest);
        ct_tensor *r = ct__flip(ct_logcumsumexp(ct__flip(ct_sub(lg, y), d), d), d);
        part[k] = ct_exp(ct_add(r, x));
    }
    gi[0] = ct_sub(part[0], part[1]);
}

/* cummax / cummin: g added at the saved indices of a zero tensor of the input's shape */
static void ct__cummaxmin_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    const ct__edge *e = &n->next[0];
    if (ix) {
        gi[0] = e->ndim == 0 ? ct_alias(g)
                             : ct_scatter_add(ct_zeros(e->sizes, e->ndim, ct_tensor_dtype(g)),
                                              (int)n->i[0], ix, g);
    }
}

/* ---- descriptors ------------------------------------------------------------------------ */
#define CT__SCAN(SYM, NAME, SCHEMA, API, VAR, K, NODE, BW)                                      \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VAR,  \
                                       0u, NULL, ct__scan_meta, K, NULL, NODE, CT__BACKWARD(BW),\
                                       0u, ct__scan_record, NULL};
CT__SCAN(cumsum, "aten::cumsum", "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> "
         "Tensor", "ct_cumsum", CT__SC_SUM, CT__K_ALL(ct__scan_kernel), "CumsumBackward0",
         ct__cumsum_backward)
CT__SCAN(cumprod, "aten::cumprod", "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> "
         "Tensor", "ct_cumprod", CT__SC_PROD, CT__K_ALL(ct__scan_kernel), "CumprodBackward0",
         ct__cumprod_backward)
CT__SCAN(logcumsumexp, "aten::logcumsumexp", "logcumsumexp(Tensor self, int dim) -> Tensor",
         "ct_logcumsumexp", CT__SC_LSE, CT__K_FLOAT(ct__scan_kernel), "LogcumsumexpBackward0",
         ct__logcumsumexp_backward)
CT__SCAN(cummax, "aten::cummax", "cummax(Tensor self, int dim) -> (Tensor values, Tensor "
         "indices)", "ct_cummax", CT__SC_MAX, CT__K_ALL(ct__scan_kernel), "CummaxBackward0",
         ct__cummaxmin_backward)
CT__SCAN(cummin, "aten::cummin", "cummin(Tensor self, int dim) -> (Tensor values, Tensor "
         "indices)", "ct_cummin", CT__SC_MIN, CT__K_ALL(ct__scan_kernel), "CumminBackward0",
         ct__cummaxmin_backward)
#undef CT__SCAN

/* ---- public functions ---------------------------------------------------------------------- */
/* A scan over dim; dtype only for cumsum / cumprod. The call stays in c (outputs). */
static ct_tensor *ct__call_scan(ct_op_call *c, ct__scan_state *s, const ct_tensor **in,
                                const ct_op *op, const char *fn, int64_t dim, int64_t dtype)
{
    ct__call_init(c, op, fn, in, 1);
    ct__call_i(c, dim);
    if (dtype >= 0) {
        ct__call_i(c, dtype);
    }
    c->state = s;
    return ct__dispatch(c);
}

/* cumsum / cumprod */
static ct_tensor *ct__cum(const ct_op *op, const char *fn, const ct_tensor *t, int64_t dim,
                          ct_dtype dtype)
{
    const ct_tensor *in[1] = {t};
    ct__scan_state s;
    ct_op_call c;
    return ct__call_scan(&c, &s, in, op, fn, dim, (int64_t)dtype);
}

ct_tensor *ct_cumsum(const ct_tensor *t, int64_t dim, ct_dtype dtype)
{
    return ct__cum(&ct__op_cumsum, "ct_cumsum", t, dim, dtype);
}

ct_tensor *ct_cumprod(const ct_tensor *t, int64_t dim, ct_dtype dtype)
{
    return ct__cum(&ct__op_cumprod, "ct_cumprod", t, dim, dtype);
}

ct_tensor *ct_logcumsumexp(const ct_tensor *t, int64_t dim)
{
    const ct_tensor *in[1] = {t};
    ct__scan_state s;
    ct_op_call c;
    return ct__call_scan(&c, &s, in, &ct__op_logcumsumexp, "ct_logcumsumexp", dim, -1);
}

/* cummax / cummin: values and indices through the out pointers */
static ct_status ct__cummaxmin(const ct_op *op, const char *fn, const ct_tensor *t, int64_t dim,
                               ct_tensor **values, ct_tensor **indices)
{
    const ct_tensor *in[1] = {t};
    ct__scan_state s;
    ct_op_call c;
    ct_tensor *r = ct__call_scan(&c, &s, in, op, fn, dim, -1);
    return ct__pair_outputs(&c, r, values, indices);
}

ct_status ct_cummax(const ct_tensor *t, int64_t dim, ct_tensor **values, ct_tensor **indices)
{
    return ct__cummaxmin(&ct__op_cummax, "ct_cummax", t, dim, values, indices);
}

ct_status ct_cummin(const ct_tensor *t, int64_t dim, ct_tensor **values, ct_tensor **indices)
{
    return ct__cummaxmin(&ct__op_cummin, "ct_cummin", t, dim, values, indices);
}

#undef CT__SCAN_LAG
#undef CT__SCAN_CHUNK
#undef CT__SCAN_ACC
#undef CT__SCAN_KERNELS
CT__GLUE_END
CT__VECTORIZE_END
