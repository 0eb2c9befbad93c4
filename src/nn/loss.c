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

ct_tensor *ct_nll_loss(const ct_tensor *x, const ct_tensor *target, const ct_nll_loss_opts *opts)
{
    const char *op = "ct_nll_loss";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    ct_reduction red = ct__reduction(o.reduction);
    if (!ct__check_reduction(op, o.reduction) || !ct__nll_check(op, x, target, o.weight)) {
        return NULL;
    }
    int64_t N = x->ndim == 2 ? x->sizes[0] : 1, C = x->sizes[x->ndim - 1];
    int64_t tstride = target->ndim ? target->strides[0] : 0;
    const int64_t *t = (const int64_t *)ct__data(target);
    size_t es = ct_dtype_size(x->dtype);
    int64_t xs0 = x->ndim == 2 ? x->strides[0] : 0, xs1 = x->strides[x->ndim - 1];
    ct_tensor *out = red == CT_REDUCTION_NONE
                         ? ct__tensor_new(op, target->sizes, target->ndim, x->dtype)
                         : ct__tensor_new(op, NULL, 0, x->dtype);
    if (!out) {
        return NULL;
    }
    double sum = 0, total = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t c = t[i * tstride];
        double li = 0;
        if (c != o.ignore_index) {
            if (c < 0 || c >= C) {
                ct__release(out);
                ct__fail(CT_ERR_INDEX, op, "Target %lld is out of bounds.", (long long)c);
                return NULL;
            }
            double wc = ct__class_weight(o.weight, c);
            li = -wc * ct__load_f64(ct__data(x) + (size_t)(i * xs0 + c * xs1) * es, x->dtype);
            total += wc;
        }
        sum += li;
        if (red == CT_REDUCTION_NONE) {
            ct__store_f64(ct__data(out) + (size_t)i * es, x->dtype, li);
        }
    }
    if (red != CT_REDUCTION_NONE) {
        ct__store_f64(ct__data(out), x->dtype, red == CT_REDUCTION_MEAN ? sum / total : sum);
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

/* dx[i, c] = s_i * (exp(logp[i, c]) - [c == t_i]) in one pass, s_i = w[t_i] * g_i (/ total
   for mean), 0 on ignored rows; rows split over the intra-op threads. Not differentiable
   (create_graph takes the op path). */
typedef struct ct__xent_job {
    const ct_node *n;
    const ct_tensor *logp, *target, *w;
    const double *g;
    ct_tensor *dx;
} ct__xent_job;

static void ct__xent_rows(int64_t b, int64_t e, void *ctx)
{
    const ct__xent_job *j = (const ct__xent_job *)ctx;
    int64_t C = j->logp->sizes[1], ignore = j->n->i[1];
    ct_reduction red = (ct_reduction)j->n->i[0];
    const int64_t *t = (const int64_t *)ct__data(j->target);
    for (int64_t i = b; i < e; i++) {
        int64_t c = t[i * j->target->strides[0]];
        double s = 0;
        if (c != ignore) {
            s = ct__class_weight(j->w, c) * (red == CT_REDUCTION_NONE ? j->g[i] : j->g[0]);
            s /= red == CT_REDUCTION_MEAN ? j->n->f[0] : 1.0;
        }
        if (j->logp->dtype == CT_FLOAT32) {
            const float *lp = (const float *)ct__data(j->logp) + i * C;
            float *d = (float *)ct__data(j->dx) + i * C, sf = (float)s;
            for (int64_t k = 0; k < C; k++) {
                d[k] = sf * ct__expf(lp[k]);
            }
            if (c != ignore) {
                d[c] -= sf;
            }
        } else {
            const double *lp = (const double *)ct__data(j->logp) + i * C;
            double *d = (double *)ct__data(j->dx) + i * C;
            for (int64_t k = 0; k < C; k++) {
                d[k] = s * exp(lp[k]);
            }
            if (c != ignore) {
                d[c] -= s;
            }
        }
    }
}

static ct_tensor *ct__cross_entropy_grad(const ct_node *n, const ct_tensor *logp,
                                         const ct_tensor *target, const ct_tensor *w,
                                         const ct_tensor *g)
{
    ct_tensor *dx = ct_empty(logp->sizes, 2, logp->dtype);
    ct_tensor *gc = ct_contiguous(ct_to_dtype(g, CT_FLOAT64));
    if (!dx || !gc) {
        return NULL;
    }
    ct__xent_job j = {n, logp, target, w, (const double *)ct__data(gc), dx};
    int64_t C = logp->sizes[1];
    ct__parallel_for(logp->sizes[0], CT__GRAIN / (C ? C : 1) + 1, ct__xent_rows, &j);
    return dx;
}

/* Fused cross entropy on (N, C) logits: dx = (softmax(x) - onehot) * scale, with softmax
   = exp(saved log-probabilities), or recomputed from x under create_graph so the gradient
   has history. */
static void ct__cross_entropy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *logp = ct__saved(n, 0), *target = ct__saved(n, 1), *w = ct__saved(n, 2);
    const ct_tensor *x = ct__saved(n, 3);
    ct_tensor *onehot = NULL, *wv = NULL;
    if (!logp || !target || !x) {
        return;
    }
    int64_t N = logp->sizes[0], C = logp->sizes[1];
    if (!ct_is_grad_enabled()) { /* the usual backward: one fused pass */
        gi[0] = ct__cross_entropy_grad(n, logp, target, w, g);
        return;
    }
    if (!ct__nll_factors(n, target, w, N, C, logp->dtype, &onehot, &wv)) {
        return;
    }
    gi[0] = ct_mul(ct_sub(ct_softmax(x, 1), onehot), ct__nll_scale(wv, g, N));
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
        /* forward without history, then one node for the whole loss */
        ct_no_grad_begin();
        ct_tensor *logp = ct_log_softmax(x, 1);
        r = ct_nll_loss(logp, target, &o);
        ct_no_grad_end();
        const ct_tensor *ins[1] = {x};
        ct_node *n =
            r ? ct__node_new("NllLossBackward0", ct__cross_entropy_backward, ins, 1) : NULL;
        if (n) {
            int64_t N = x->sizes[0];
            double total = 0;
            for (int64_t i = 0; i < N; i++) {
                int64_t c = ((const int64_t *)ct__data(target))[i * target->strides[0]];
                total += c == o.ignore_index ? 0.0 : ct__class_weight(o.weight, c);
            }
            n->i[0] = ct__reduction(o.reduction);
            n->i[1] = o.ignore_index;
            n->f[0] = total;
            ct__save(n, logp);
            ct__save(n, ct_contiguous(target));
            ct__save(n, o.weight);
            ct__save(n, x);
        }
        r = ct__set_history(r, n);
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
