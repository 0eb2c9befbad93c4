/* nn/loss.c - nll_loss (a direct kernel), cross_entropy and mse_loss.
 *
 * Legend: input (N, C) log-probabilities, target (N) int64, w (C) class weights.
 */
#include "../core/internal.h"
#include "loss.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/softmax.h"
#include "../ops/view.h"
#include "../ops/vmath.h"
#include "../autograd/autograd.h"

CT__VECTORIZE_BEGIN

ct_nll_loss_opts ct_nll_loss_defaults(void)
{
    ct_nll_loss_opts o;
    o.weight = NULL;
    o.ignore_index = -100;
    o.reduction = CT_REDUCTION_MEAN;
    return o;
}

static ct_reduction ct__reduction(ct_reduction r)
{
    return r == CT_REDUCTION_DEFAULT ? CT_REDUCTION_MEAN : r;
}

/* Fails with CT_ERR_VALUE unless r is one of the ct_reduction values. */
static bool ct__check_reduction(const char *op, ct_reduction r)
{
    return ct__check_enum(op, "reduction", (int)r, (int)CT_REDUCTION_NONE + 1);
}

/* the weight of class c (1 without weights) */
static double ct__class_weight(const ct_tensor *w, int64_t c)
{
    return w ? ct__load_f64(ct__data(w) + (size_t)(c * w->strides[0]) * ct_dtype_size(w->dtype),
                            w->dtype)
             : 1.0;
}

/* The constants of the nll/cross-entropy gradients, as (N, C) and (N) tensors of dtype:
   onehot[i, c] = [c == t_i] and wv[i] = w[t_i] (/ total_weight for mean), both 0 on ignored
   rows. With them the gradients are ctorch ops, so create_graph can differentiate them. */
static bool ct__nll_factors(const ct_node *n, const ct_tensor *target, const ct_tensor *w,
                            int64_t N, int64_t C, ct_dtype dtype, ct_tensor **onehot,
                            ct_tensor **wv)
{
    int64_t shape[2] = {N, C};
    *onehot = ct_zeros(shape, 2, dtype);
    *wv = ct_zeros(shape, 1, dtype);
    if (!*onehot || !*wv) {
        return false;
    }
    size_t es = ct_dtype_size(dtype);
    int64_t ts = target->ndim ? target->strides[0] : 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t c = ((const int64_t *)ct__data(target))[i * ts];
        if (c == n->i[1]) {
            continue;
        }
        double v = ct__class_weight(w, c);
        v /= n->i[0] == CT_REDUCTION_MEAN ? n->f[0] : 1.0;
        ct__store_f64(ct__data(*onehot) + (size_t)(i * C + c) * es, dtype, 1.0);
        ct__store_f64(ct__data(*wv) + (size_t)i * es, dtype, v);
    }
    return true;
}

/* (N, 1) column of per-row gradient scales: wv * g (g is 0-dim, or (N) for 'none') */
static ct_tensor *ct__nll_scale(const ct_tensor *wv, const ct_tensor *g, int64_t N)
{
    int64_t col[2] = {N, 1};
    return ct_reshape(ct_mul(wv, ct_reshape(g, col, g->ndim ? 1 : 0)), col, 2);
}

/* d nll / d input = -onehot * scale */
static void ct__nll_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *target = ct__saved(n, 0), *w = ct__saved(n, 1);
    const ct__edge *e = &n->next[0];
    int64_t N = e->ndim == 2 ? e->sizes[0] : 1, C = e->sizes[e->ndim - 1];
    ct_tensor *onehot = NULL, *wv = NULL;
    if (!target || !ct__nll_factors(n, target, w, N, C, g->dtype, &onehot, &wv)) {
        return;
    }
    gi[0] = ct_reshape(ct_neg(ct_mul(onehot, ct__nll_scale(wv, g, N))), e->sizes, e->ndim);
}

static bool ct__nll_check(const char *op, const ct_tensor *x, const ct_tensor *target,
                          const ct_tensor *w)
{
    if (ct__null(op, x) || ct__null(op, target) || !ct__check_cpu(op, x) ||
        !ct__check_cpu(op, target)) {
        return false;
    }
    if (!ct_dtype_is_floating_point(x->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"nll_loss\" not implemented for '%s'",
                 ct_dtype_name(x->dtype));
        return false;
    }
    if (target->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, op, "expected scalar type Long but found %s",
                 ct__dtype_title(target->dtype));
        return false;
    }
    if (x->ndim < 1 || x->ndim > 2) {
        ct__fail(CT_ERR_SHAPE, op, "input tensor should be 1D or 2D, got %dD", x->ndim);
        return false;
    }
    if (target->ndim != x->ndim - 1) {
        ct__fail(CT_ERR_SHAPE, op, "0D or 1D target tensor expected, multi-target not supported");
        return false;
    }
    if (x->ndim == 2 && x->sizes[0] != target->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "Expected input batch_size (%lld) to match target batch_size "
                 "(%lld).",
                 (long long)x->sizes[0], (long long)target->sizes[0]);
        return false;
    }
    int64_t C = x->sizes[x->ndim - 1];
    if (w && (w->ndim != 1 || w->sizes[0] != C || !ct_dtype_is_floating_point(w->dtype))) {
        ct__fail(CT_ERR_SHAPE, op,
                 "weight tensor should be defined either for all %lld classes "
                 "or no classes but got weight tensor of shape: [%lld]",
                 (long long)C, (long long)(w->ndim ? w->sizes[0] : 0));
        return false;
    }
    return true;
}

/* The nll forward: per-row losses l_i = -w[t_i] v_i (0 on ignored rows) into out ((N) for
   'none', else their sum or mean over w[t_i]), with v_i = x[i, t_i], or x[i, t_i] - lse[i]
   computed in x's dtype when lse (N) is given (cross-entropy's log-probability); total: the
   sum of w[t_i] over rows not ignored. False (reported) on a target out of bounds. */
static bool ct__nll_forward(const char *op, const ct_tensor *x, const ct_tensor *lse,
                            const ct_tensor *target, const ct_nll_loss_opts *o, ct_tensor *out,
                            double *total)
{
    ct_reduction red = ct__reduction(o->reduction);
    int64_t N = x->ndim == 2 ? x->sizes[0] : 1, C = x->sizes[x->ndim - 1];
    int64_t tstride = target->ndim ? target->strides[0] : 0;
    const int64_t *t = (const int64_t *)ct__data(target);
    size_t es = ct_dtype_size(x->dtype);
    int64_t xs0 = x->ndim == 2 ? x->strides[0] : 0, xs1 = x->strides[x->ndim - 1];
    double sum = 0;
    *total = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t c = t[i * tstride];
        double li = 0;
        if (c != o->ignore_index) {
            if (c < 0 || c >= C) {
                ct__fail(CT_ERR_INDEX, op, "Target %lld is out of bounds.", (long long)c);
                return false;
            }
            const char *xi = ct__data(x) + (size_t)(i * xs0 + c * xs1) * es;
            double v = ct__load_f64(xi, x->dtype);
            if (lse && x->dtype == CT_FLOAT32) {
                v = (double)(*(const float *)xi - ((const float *)ct__data(lse))[i]);
            } else if (lse) {
                v -= ((const double *)ct__data(lse))[i];
            }
            double wc = ct__class_weight(o->weight, c);
            li = fma(-wc, v, -0.0); /* -wc * v, a product never contracted into sum */
            *total += wc;
        }
        sum += li;
        if (red == CT_REDUCTION_NONE) {
            ct__store_f64(ct__data(out) + (size_t)i * es, x->dtype, li);
        }
    }
    if (red != CT_REDUCTION_NONE) {
        ct__store_f64(ct__data(out), x->dtype, red == CT_REDUCTION_MEAN ? sum / *total : sum);
    }
    return true;
}

ct_tensor *ct_nll_loss(const ct_tensor *x, const ct_tensor *target, const ct_nll_loss_opts *opts)
{
    const char *op = "ct_nll_loss";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    ct_reduction red = ct__reduction(o.reduction);
    if (!ct__check_reduction(op, o.reduction) || !ct__nll_check(op, x, target, o.weight)) {
        return NULL;
    }
    ct_tensor *out = red == CT_REDUCTION_NONE
                         ? ct__tensor_new(op, target->sizes, target->ndim, x->dtype)
                         : ct__tensor_new(op, NULL, 0, x->dtype);
    double total = 0;
    if (!out || !ct__nll_forward(op, x, NULL, target, &o, out, &total)) {
        ct__release(out);
        return NULL;
    }
    const ct_tensor *ins[2] = {x, NULL};
    ct_node *n = ct__node_new("NllLossBackward0", ct__nll_backward, ins, 2);
    if (n) {
        n->i[0] = red;
        n->i[1] = o.ignore_index;
        n->f[0] = total;
        ct__save(n, target);
        ct__save(n, o.weight);
    }
    out = ct__set_history(out, n);
    return ct__scoped(out);
}

/* ---- fused cross-entropy on (N, C) logits ----------------------------------------------
 * Forward: lse_i = log(sum_c exp(x[i, c])) per row (ops/softmax.c's row kernel, one read of
 * x), then nll on x[i, t_i] - lse_i: no (N, C) intermediate. Backward: dx[i, c] =
 * s_i * (exp(x[i, c] - lse_i) - [c == t_i]) in one pass (one read of x, one write of dx),
 * with s_i = w[t_i] * g_i (/ total weight for mean), 0 on ignored rows. Rows are split over
 * the intra-op threads, each row computed by one thread: bit-exact across thread counts. */
typedef struct ct__xent_job {
    const ct_node *n;
    const ct_tensor *x, *target, *w;
    const double *g;
    const ct_tensor *lse;
    ct_tensor *dx;
} ct__xent_job;

/* lse of rows [b, e), prefetching each next row */
#define CT__XENT_ROWS(T, S)                                                                \
    static void ct__xent_lse_##S(int64_t b, int64_t e, void *ctx)                          \
    {                                                                                      \
        const ct__xent_job *j = (const ct__xent_job *)ctx;                                 \
        int64_t C = j->x->sizes[1];                                                        \
        const T *x = (const T *)ct__data(j->x);                                            \
        T *lse = (T *)ct__data(j->lse);                                                    \
        for (int64_t i = b; i < e; i++) {                                                  \
            const T *xi = x + i * C;                                                       \
            lse[i] = ct__softmax_row_##S(xi, NULL, C, CT__SOFTMAX_LSE, i + 1 < e, false);  \
        }                                                                                  \
    }                                                                                      \
    static void ct__xent_grad_##S(int64_t b, int64_t e, void *ctx)                         \
    {                                                                                      \
        const ct__xent_job *j = (const ct__xent_job *)ctx;                                 \
        int64_t C = j->x->sizes[1], ignore = j->n->i[1];                                   \
        ct_reduction red = (ct_reduction)j->n->i[0];                                       \
        const int64_t *t = (const int64_t *)ct__data(j->target);                           \
        const T *x = (const T *)ct__data(j->x), *lse = (const T *)ct__data(j->lse);        \
        for (int64_t i = b; i < e; i++) {                                                  \
            int64_t c = t[i * j->target->strides[0]];                                      \
            double s = 0;                                                                  \
            if (c != ignore) {                                                             \
                s = ct__class_weight(j->w, c) * (red == CT_REDUCTION_NONE ? j->g[i] : j->g[0]); \
                s /= red == CT_REDUCTION_MEAN ? j->n->f[0] : 1.0;                          \
            }                                                                              \
            T *d = (T *)ct__data(j->dx) + i * C;                                           \
            ct__exp_row_##S(x + i * C, d, C, lse[i], (T)s, i + 1 < e, false);              \
            if (c != ignore) {                                                             \
                d[c] -= (T)s;                                                              \
            }                                                                              \
        }                                                                                  \
    }
CT__XENT_ROWS(float, f32)
CT__XENT_ROWS(double, f64)
#undef CT__XENT_ROWS

/* the fused backward: dx (N, C) from the contiguous logits x and their lse */
static ct_tensor *ct__cross_entropy_grad(const ct_node *n, const ct_tensor *x,
                                         const ct_tensor *lse, const ct_tensor *target,
                                         const ct_tensor *w, const ct_tensor *g)
{
    ct_tensor *dx = ct_empty(x->sizes, 2, x->dtype);
    ct_tensor *gc = ct_contiguous(ct_to_dtype(g, CT_FLOAT64));
    if (!dx || !gc) {
        return NULL;
    }
    ct__xent_job j = {n, x, target, w, (const double *)ct__data(gc), lse, dx};
    int64_t C = x->sizes[1];
    ct__parallel_for(x->sizes[0], CT__GRAIN / (C ? C : 1) + 1,
                     x->dtype == CT_FLOAT32 ? ct__xent_grad_f32 : ct__xent_grad_f64, &j);
    return dx;
}

/* dx = (softmax(x) - onehot) * scale: the fused pass, or, under create_graph, ops on
   softmax(x) so the gradient has history. Saved: lse, target, weight, x. */
static void ct__cross_entropy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *lse = ct__saved(n, 0), *target = ct__saved(n, 1), *w = ct__saved(n, 2);
    const ct_tensor *x = ct__saved(n, 3);
    ct_tensor *onehot = NULL, *wv = NULL;
    if (!lse || !target || !x) {
        return;
    }
    int64_t N = x->sizes[0], C = x->sizes[1];
    if (!ct_is_grad_enabled()) { /* the usual backward: one fused pass */
        gi[0] = ct__cross_entropy_grad(n, ct_contiguous(x), lse, target, w, g);
        return;
    }
    if (!ct__nll_factors(n, target, w, N, C, x->dtype, &onehot, &wv)) {
        return;
    }
    gi[0] = ct_mul(ct_sub(ct_softmax(x, 1), onehot), ct__nll_scale(wv, g, N));
}

/* Cross-entropy of 2-D float logits x (N, C), checked, in the current scope. */
static ct_tensor *ct__cross_entropy_2d(const char *op, const ct_tensor *x,
                                       const ct_tensor *target, const ct_nll_loss_opts *o)
{
    ct_no_grad_begin(); /* forward without history, then one node for the whole loss */
    const ct_tensor *xc = ct_contiguous(x);
    ct_tensor *lse = xc ? ct_empty(xc->sizes, 1, xc->dtype) : NULL;
    ct_no_grad_end();
    ct_reduction red = ct__reduction(o->reduction);
    ct_tensor *out = red == CT_REDUCTION_NONE
                         ? ct__tensor_new(op, target->sizes, target->ndim, x->dtype)
                         : ct__tensor_new(op, NULL, 0, x->dtype);
    double total = 0;
    if (lse && out) {
        ct__xent_job j = {NULL, xc, target, o->weight, NULL, lse, NULL};
        int64_t C = x->sizes[1];
        ct__parallel_for(x->sizes[0], CT__GRAIN / (C ? C : 1) + 1,
                         x->dtype == CT_FLOAT32 ? ct__xent_lse_f32 : ct__xent_lse_f64, &j);
    }
    if (!lse || !out || !ct__nll_forward(op, xc, lse, target, o, out, &total)) {
        ct__release(out);
        return NULL;
    }
    const ct_tensor *ins[1] = {x};
    ct_node *n = ct__node_new("NllLossBackward0", ct__cross_entropy_backward, ins, 1);
    if (n) {
        n->i[0] = red;
        n->i[1] = o->ignore_index;
        n->f[0] = total;
        ct__save(n, lse);
        ct__save(n, ct_contiguous(target));
        ct__save(n, o->weight);
        ct__save(n, x);
    }
    out = ct__set_history(out, n);
    return ct__scoped(out);
}

ct_tensor *ct_cross_entropy(const ct_tensor *x, const ct_tensor *target,
                            const ct_nll_loss_opts *opts)
{
    const char *op = "ct_cross_entropy";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    if (ct__null(op, x) || ct__null(op, target) || !ct__check_reduction(op, o.reduction)) {
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = NULL;
    if (x->ndim != 2 || !ct__nll_check(op, x, target, o.weight)) {
        r = ct_nll_loss(ct_log_softmax(x, x->ndim == 1 ? 0 : 1), target, opts); /* 1-D case */
    } else {
        r = ct__cross_entropy_2d(op, x, target, &o);
    }
    ct_keep(r);
    ct_scope_end();
    return r;
}

ct_tensor *ct_mse_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction)
{
    if (!ct__check_reduction("ct_mse_loss", reduction)) {
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *d = ct_square(ct_sub(x, target));
    ct_reduction red = ct__reduction(reduction);
    ct_tensor *r = red == CT_REDUCTION_NONE ? d : red == CT_REDUCTION_SUM ? ct_sum(d) : ct_mean(d);
    ct_keep(r);
    ct_scope_end();
    return r;
}

CT__VECTORIZE_END
