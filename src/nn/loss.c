/* nn/loss.c - nll_loss (a direct kernel), cross_entropy (fused on (N, C) logits), the
 * pointwise losses as composites of ops, binary_cross_entropy with PyTorch's clamped gradient,
 * and the loss modules.
 *
 * Legend: input (N, C) log-probabilities, target (N) int64, w (C) class weights.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/softmax.h"
#include "../ops/view.h"
#include "../ops/vmath.h"
#include "../ops/index.h"
#include "../autograd/autograd.h"
#include "state_dict.h"
#include "module.h"
#include "loss.h"

ct_nll_loss_opts ct_nll_loss_defaults(void)
{
    ct_nll_loss_opts o;
    o.weight = NULL;
    o.ignore_index = -100;
    o.reduction = CT_REDUCTION_MEAN;
    o.label_smoothing = 0.0;
    return o;
}

static ct_reduction ct__reduction(ct_reduction r)
{
    return r == CT_REDUCTION_DEFAULT ? CT_REDUCTION_MEAN : r;
}

/* Fails with CT_ERR_VALUE unless r is one of the ct_reduction values (batchmean: ct_kl_div's
   own check). */
static bool ct__check_reduction(const char *op, ct_reduction r)
{
    return ct__check_enum(op, "reduction", (int)r, (int)CT_REDUCTION_NONE + 1);
}

/* l itself ('none'), its sum or its mean */
static ct_tensor *ct__reduce_loss(ct_tensor *l, ct_reduction red)
{
    red = ct__reduction(red);
    return red == CT_REDUCTION_NONE ? l : red == CT_REDUCTION_SUM ? ct_sum(l) : ct_mean(l);
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

CT__GLUE_BEGIN
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
CT__GLUE_END

static bool ct__nll_check(const char *op, const ct_tensor *x, const ct_tensor *target,
                          const ct_tensor *w)
{
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

/* What the nll and cross-entropy kernels hand to their nodes (c->state). */
typedef struct ct__nll_state {
    double total;     /* the summed weights of the counted targets */
    ct_tensor *lse;   /* cross-entropy: the rows' log-sum-exp (N), released by the caller */
} ct__nll_state;

/* The call's options: inputs self, target, weight (or NULL); attributes reduction,
   ignore_index. */
static ct_nll_loss_opts ct__nll_opts(const ct_op_call *c)
{
    ct_nll_loss_opts o;
    o.weight = c->inputs[2];
    o.reduction = (ct_reduction)c->attrs[0].i;
    o.ignore_index = c->attrs[1].i;
    return o;
}

CT__GLUE_BEGIN
/* Checks; the output is (N) for 'none', else 0-dim, in the input's dtype. */
static bool ct__nll_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *target = c->inputs[1];
    if (!ct__nll_check(c->fn, x, target, c->inputs[2])) {
        return false;
    }
    c->dtype = x->dtype;
    bool none = c->attrs[0].i == CT_REDUCTION_NONE;
    return ct__op_output(c, target->sizes, none ? target->ndim : 0, x->dtype) != NULL;
}
CT__GLUE_END

static ct_status ct__nll_kernel(ct_op_call *c)
{
    ct_nll_loss_opts o = ct__nll_opts(c);
    ct__nll_state *s = (ct__nll_state *)c->state;
    return ct__nll_forward(c->fn, c->inputs[0], NULL, c->inputs[1], &o, c->outputs[0], &s->total)
               ? CT_OK
               : ct_error_code();
}

CT__GLUE_BEGIN
/* Saves target and weight (and cross-entropy's lse and input first), the reduction, the
   ignored index and the total weight. */
static void ct__nll_record(ct_node *n, const ct_op_call *c)
{
    const ct__nll_state *s = (const ct__nll_state *)c->state;
    n->i[0] = c->attrs[0].i;
    n->i[1] = c->attrs[1].i;
    n->f[0] = s->total;
    if (s->lse) {
        ct__save(n, s->lse);
    }
    ct__save(n, c->inputs[1]);
    ct__save(n, c->inputs[2]);
    if (s->lse) {
        ct__save(n, c->inputs[0]);
    }
}
CT__GLUE_END

/* ---- fused cross-entropy on (N, C) logits ----------------------------------------------
 * Forward: lse_i = log(sum_c exp(x[i, c])) per row (ops/softmax.c's row kernel, one read of
 * x), then nll on x[i, t_i] - lse_i: no (N, C) intermediate. Backward: dx[i, c] =
 * s_i * (exp(x[i, c] - lse_i) - [c == t_i]) in one pass (one read of x, one write of dx),
 * with s_i = w[t_i] * g_i (/ total weight for mean), 0 on ignored rows. Rows are split over
 * the intra-op threads, each row computed by one thread: bit-exact across thread counts. */
typedef struct ct__xent_job {
    const ct_tensor *x, *target, *w;
    const double *g;
    const ct_tensor *lse;
    ct_tensor *dx;
    ct_reduction reduction;
    int64_t ignore_index;
    double total;
} ct__xent_job;

CT__VECTORIZE_BEGIN /* the fused rows only: the rest is scalar or composite */
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
        int64_t C = j->x->sizes[1], ignore = j->ignore_index;                              \
        ct_reduction red = j->reduction;                                                   \
        const int64_t *t = (const int64_t *)ct__data(j->target);                           \
        const T *x = (const T *)ct__data(j->x), *lse = (const T *)ct__data(j->lse);        \
        for (int64_t i = b; i < e; i++) {                                                  \
            int64_t c = t[i * j->target->strides[0]];                                      \
            double s = 0;                                                                  \
            if (c != ignore) {                                                             \
                s = ct__class_weight(j->w, c) * (red == CT_REDUCTION_NONE ? j->g[i] : j->g[0]); \
                s /= red == CT_REDUCTION_MEAN ? j->total : 1.0;                            \
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
CT__VECTORIZE_END

/* A job over x (N, C) contiguous, target (N), weight w (or NULL) and the options. */
static ct__xent_job ct__xent_job_of(const ct_tensor *x, const ct_tensor *target,
                                    const ct_tensor *w, ct_reduction reduction,
                                    int64_t ignore_index)
{
    ct__xent_job j;
    j.x = x;
    j.target = target;
    j.w = w;
    j.g = NULL;
    j.lse = NULL;
    j.dx = NULL;
    j.reduction = ct__reduction(reduction);
    j.ignore_index = ignore_index;
    j.total = 0;
    return j;
}

/* t itself when it is contiguous in dtype, else a contiguous copy (a new reference either
   way; NULL when out of memory). */
static ct_tensor *ct__contiguous_as(const char *fn, const ct_tensor *t, ct_dtype dtype)
{
    if (t->dtype == dtype && ct_is_contiguous(t)) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *r = ct__tensor_new(fn, t->sizes, t->ndim, dtype);
    if (r) {
        ct__copy_kernel(r, t);
    }
    return r;
}

/* Forward: lse (N) per row, then nll on x[i, t_i] - lse_i. The lse goes to the node through
   c->state. */
static ct_status ct__cross_entropy_kernel(ct_op_call *c)
{
    ct__nll_state *s = (ct__nll_state *)c->state;
    const ct_tensor *x = c->inputs[0];
    ct_tensor *xc = ct__contiguous_as(c->fn, x, x->dtype);
    s->lse = xc ? ct__tensor_new(c->fn, xc->sizes, 1, xc->dtype) : NULL;
    bool ok = s->lse != NULL;
    if (ok) {
        ct_nll_loss_opts o = ct__nll_opts(c);
        ct__xent_job j = ct__xent_job_of(xc, c->inputs[1], o.weight, o.reduction,
                                         o.ignore_index);
        j.lse = s->lse;
        int64_t C = x->sizes[1];
        ct__parallel_for(x->sizes[0], CT__GRAIN / (C ? C : 1) + 1,
                         x->dtype == CT_FLOAT32 ? ct__xent_lse_f32 : ct__xent_lse_f64, &j);
        ok = ct__nll_forward(c->fn, xc, s->lse, c->inputs[1], &o, c->outputs[0], &s->total);
    }
    ct__release(xc);
    return ok ? CT_OK : ct_error_code();
}

CT__GLUE_BEGIN
/* The fused backward op: inputs grad (the loss's shape), self (N, C) contiguous, lse (N),
   target, weight (or NULL); attributes reduction, ignore_index, total_weight. dx (N, C). */
static bool ct__cross_entropy_bw_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[1];
    c->dtype = x->dtype;
    return ct__op_output(c, x->sizes, 2, x->dtype) != NULL;
}
CT__GLUE_END

static ct_status ct__cross_entropy_bw_kernel(ct_op_call *c)
{
    ct_tensor *gc = ct__contiguous_as(c->fn, c->inputs[0], CT_FLOAT64);
    if (!gc) {
        return ct_error_code();
    }
    ct__xent_job j = ct__xent_job_of(c->inputs[1], c->inputs[3], c->inputs[4],
                                     (ct_reduction)c->attrs[0].i, c->attrs[1].i);
    j.g = (const double *)ct__data(gc);
    j.lse = c->inputs[2];
    j.dx = c->outputs[0];
    j.total = c->attrs[2].f;
    const ct_tensor *x = c->inputs[1];
    int64_t C = x->sizes[1];
    ct__parallel_for(x->sizes[0], CT__GRAIN / (C ? C : 1) + 1,
                     x->dtype == CT_FLOAT32 ? ct__xent_grad_f32 : ct__xent_grad_f64, &j);
    ct__release(gc);
    return CT_OK;
}

static ct_tensor *ct__cross_entropy_grad(const ct_node *n, const ct_tensor *x,
                                         const ct_tensor *lse, const ct_tensor *target,
                                         const ct_tensor *w, const ct_tensor *g);

/* dx = (softmax(x) - onehot) * scale: the fused op, or, under create_graph, ops on
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

CT__GLUE_BEGIN
/* ---- pointwise losses (composites: autograd from their ops) -----------------------------
 * Inputs self, target (then the optional tensors of the schema); attribute 0 the reduction. */
static ct_status ct__mse_loss_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *d = ct_square(ct_sub(c->inputs[0], c->inputs[1]));
    return ct__composite_end(c, ct__reduce_loss(d, (ct_reduction)c->attrs[0].i));
}

static ct_status ct__l1_loss_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *d = ct_abs(ct_sub(c->inputs[0], c->inputs[1]));
    return ct__composite_end(c, ct__reduce_loss(d, (ct_reduction)c->attrs[0].i));
}

/* z = |x - t|; below p (attribute 1): 0.5 z z (/ p for smooth_l1), above: z - 0.5 p (times
   p for huber), as PyTorch's kernels round. smooth_l1 with beta 0 is l1. */
static ct_status ct__smooth_loss(ct_op_call *c, bool huber)
{
    double p = c->attrs[1].f;
    ct_scope_begin();
    ct_tensor *z = ct_abs(ct_sub(c->inputs[0], c->inputs[1])), *l = z;
    if (huber || p != 0.0) {
        ct_tensor *q = ct_mul(ct_mul_scalar(z, 0.5), z);
        ct_tensor *lin = ct_sub_scalar(z, 0.5 * p);
        l = huber ? ct_where(ct_lt_scalar(z, p), q, ct_mul_scalar(lin, p))
                  : ct_where(ct_lt_scalar(z, p), ct_div_scalar(q, p), lin);
    }
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[0].i));
}

static ct_status ct__smooth_l1_loss_composite(ct_op_call *c)
{
    return ct__smooth_loss(c, false);
}

static ct_status ct__huber_loss_composite(ct_op_call *c)
{
    return ct__smooth_loss(c, true);
}

/* -log_sigmoid(x) = log(1 + exp(-x)), stable for any x */
static ct_tensor *ct__softplus_neg(const ct_tensor *x)
{
    return ct_logaddexp(ct_scalar_tensor(0.0, x->dtype), ct_neg(x));
}

/* (1 - t) x - lw log_sigmoid(x), lw = (pos_weight - 1) t + 1; times weight. Inputs self,
   target, weight, pos_weight. */
static ct_status ct__bce_logits_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1], *w = c->inputs[2];
    const ct_tensor *pw = c->inputs[3];
    ct_scope_begin();
    ct_tensor *sp = ct__softplus_neg(x); /* -log_sigmoid(x) */
    if (pw) {
        sp = ct_mul(sp, ct_add_scalar(ct_mul(ct_sub_scalar(pw, 1.0), t), 1.0));
    }
    ct_tensor *l = ct_add(ct_mul(ct_add_scalar(ct_neg(t), 1.0), x), sp);
    l = w ? ct_mul(l, w) : l;
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[0].i));
}

/* log_target: exp(t) (t - x); else xlogy(t, t) - t x. Attribute 1: log_target; batchmean
   divides the sum by size(0). */
static ct_status ct__kl_div_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1];
    ct_reduction red = (ct_reduction)c->attrs[0].i;
    ct_scope_begin();
    ct_tensor *l = c->attrs[1].i ? ct_mul(ct_exp(t), ct_sub(t, x))
                                 : ct_sub(ct_xlogy(t, t), ct_mul(t, x));
    ct_tensor *r = NULL;
    if (red == CT_REDUCTION_BATCHMEAN) {
        r = ct_sum(l);
        r = x->ndim ? ct_div_scalar(r, (double)x->sizes[0]) : r;
    } else {
        r = ct__reduce_loss(l, red);
    }
    return ct__composite_end(c, r);
}

/* ---- margin and likelihood losses (composites) -------------------------------------------- */
static ct_tensor *ct__clamp_min0(const ct_tensor *l)
{
    return ct_clamp(l, 0.0, INFINITY);
}

/* inputs input1, input2, target; attributes margin, reduction */
static ct_status ct__margin_ranking_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *d = ct_mul(ct_neg(c->inputs[2]), ct_sub(c->inputs[0], c->inputs[1]));
    ct_tensor *l = ct__clamp_min0(ct_add_scalar(d, c->attrs[0].f));
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[1].i));
}

/* inputs self, target; attributes margin, reduction */
static ct_status ct__hinge_embedding_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1];
    ct_scope_begin();
    ct_tensor *zeros = ct_zeros_like(x);
    ct_tensor *m = ct__clamp_min0(ct_add_scalar(ct_neg(x), c->attrs[0].f));
    ct_tensor *l = ct_add(ct_where(ct_logical_not(ct_eq_scalar(t, 1.0)), m, zeros),
                          ct_where(ct_logical_not(ct_eq_scalar(t, -1.0)), x, zeros));
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[1].i));
}

/* inputs self, target; attribute reduction */
static ct_status ct__soft_margin_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *l = ct_log1p(ct_exp(ct_mul(ct_neg(c->inputs[0]), c->inputs[1])));
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[0].i));
}

/* inputs input1, input2, target; attributes margin, reduction */
static ct_status ct__cosine_embedding_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1], *t = c->inputs[2];
    int64_t d = t->ndim;
    ct_scope_begin();
    ct_tensor *ma = ct_add_scalar(ct_sum_dim(ct_mul(a, a), d, false), 1e-12);
    ct_tensor *mb = ct_add_scalar(ct_sum_dim(ct_mul(b, b), d, false), 1e-12);
    ct_tensor *cs = ct_div(ct_sum_dim(ct_mul(a, b), d, false), ct_sqrt(ct_mul(ma, mb)));
    ct_tensor *zeros = ct_zeros_like(cs);
    ct_tensor *pos = ct_where(ct_eq_scalar(t, 1.0), ct_add_scalar(ct_neg(cs), 1.0), zeros);
    ct_tensor *neg = ct__clamp_min0(ct_sub_scalar(cs, c->attrs[0].f));
    ct_tensor *l = ct_add(pos, ct_where(ct_eq_scalar(t, -1.0), neg, zeros));
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[1].i));
}

/* inputs self (N, C) or (C), target, weight; attributes p, margin, reduction. Per row the sum
   over j != y of w[y] max(0, margin - x[y] + x[j])^p, over C. */
static ct_status ct__multi_margin_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1], *w = c->inputs[2];
    int64_t C = x->sizes[x->ndim - 1], col[2] = {-1, 1};
    ct_scope_begin();
    ct_tensor *x2 = x->ndim == 1 ? ct_unsqueeze(x, 0) : (ct_tensor *)(uintptr_t)x;
    ct_tensor *t2 = ct_reshape(t, col, 2);
    ct_tensor *z = ct_add(ct_add_scalar(ct_neg(ct_gather(x2, 1, t2)), c->attrs[1].f), x2);
    ct_tensor *h = ct__clamp_min0(z);
    h = c->attrs[0].f == 2.0 ? ct_mul(h, h) : h;
    h = w ? ct_mul(h, ct_reshape(ct_index_select(w, 0, ct_flatten(t2, 0, -1)), col, 2)) : h;
    ct_tensor *own = ct_eq(ct_arange(0.0, (double)C, 1.0, CT_INT64), t2);
    ct_tensor *l = ct_div_scalar(ct_sum_dim(ct_masked_fill(h, own, 0.0), 1, false), (double)C);
    l = x->ndim == 1 ? ct_squeeze_dim(l, 0) : l;
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[2].i));
}

/* ||a - b + eps||_p over the last dim (PyTorch's pairwise_distance) */
static ct_tensor *ct__pairwise_distance(const ct_tensor *a, const ct_tensor *b, double p,
                                        double eps)
{
    int64_t last = -1;
    return ct_linalg_vector_norm(ct_add_scalar(ct_sub(a, b), eps), p, &last, 1, false);
}

/* inputs anchor, positive, negative; attributes margin, p, eps, swap, reduction */
static ct_status ct__triplet_margin_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *pos = c->inputs[1], *neg = c->inputs[2];
    double p = c->attrs[1].f, eps = c->attrs[2].f;
    ct_scope_begin();
    ct_tensor *dp = ct__pairwise_distance(a, pos, p, eps);
    ct_tensor *dn = ct__pairwise_distance(a, neg, p, eps);
    dn = c->attrs[3].i ? ct_minimum(dn, ct__pairwise_distance(pos, neg, p, eps)) : dn;
    ct_tensor *l = ct__clamp_min0(ct_sub(ct_add_scalar(dp, c->attrs[0].f), dn));
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[4].i));
}
CT__GLUE_END

#define CT__LOG_2PI 1.8378770664093454836 /* log(2 pi) */

CT__GLUE_BEGIN
/* inputs input, target; attributes log_input, full, eps, reduction */
static ct_status ct__poisson_nll_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1];
    ct_scope_begin();
    ct_tensor *l = c->attrs[0].i ? ct_sub(ct_exp(x), ct_mul(t, x))
                                 : ct_sub(x, ct_mul(t, ct_log(ct_add_scalar(x, c->attrs[2].f))));
    if (c->attrs[1].i) { /* Stirling's term where target > 1 */
        ct_tensor *s = ct_sub(ct_mul(t, ct_log(t)), t);
        s = ct_add(s, ct_mul_scalar(ct_log(ct_mul_scalar(t, 2.0 * 3.14159265358979323846)), 0.5));
        l = ct_add(l, ct_masked_fill(s, ct_logical_not(ct_gt_scalar(t, 1.0)), 0.0));
    }
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[3].i));
}

/* inputs input, target, var (broadcastable); attributes full, eps, reduction. var is clamped
   to eps in a clone without history, as PyTorch's no_grad clamp_. */
static ct_status ct__gaussian_nll_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1];
    ct_scope_begin();
    ct_tensor *v = ct_clone(c->inputs[2]);
    ct_no_grad_begin();
    ct_clamp_(v, c->attrs[1].f, INFINITY);
    ct_no_grad_end();
    ct_tensor *l = ct_add(ct_log(v), ct_div(ct_pow_scalar(ct_sub(x, t), 2.0), v));
    l = ct_mul_scalar(l, 0.5);
    l = c->attrs[0].i ? ct_add_scalar(l, 0.5 * CT__LOG_2PI) : l;
    return ct__composite_end(c, ct__reduce_loss(l, (ct_reduction)c->attrs[2].i));
}

/* ---- binary_cross_entropy --------------------------------------------------------------
 * Forward (ops under no_grad, PyTorch's kernel): (t - 1) max(log1p(-x), -100) - t max(log(x),
 * -100), times weight, reduced. Its own node, as PyTorch's derivative: d/dx = w (x - t) /
 * max((1 - x) x, 1e-12f), d/dt = -w logit(x) (/ numel for 'mean'), written with ops. */
static bool ct__bce_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1];
    if (t->dtype != x->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "Found dtype %s but expected %s",
                 ct__dtype_title(t->dtype), ct__dtype_title(x->dtype));
        return false;
    }
    if (!ct_dtype_is_floating_point(x->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"binary_cross_entropy\" not implemented for '%s'",
                 ct__dtype_title(x->dtype));
        return false;
    }
    c->dtype = x->dtype;
    return true;
}

/* whether every element of v lies in [0, 1] (NaN does not) */
static bool ct__in_unit(const ct_tensor *v)
{
    if (ct_numel(v) == 0) {
        return true;
    }
    double lo = ct_item(ct_amin(v, NULL, 0, false)), hi = ct_item(ct_amax(v, NULL, 0, false));
    return lo >= 0.0 && hi <= 1.0;
}

static ct_tensor *ct__log_clamped(ct_tensor *l)
{
    return ct_clamp(l, -100.0, INFINITY);
}

static ct_status ct__bce_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *t = c->inputs[1], *w = c->inputs[2];
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *r = NULL;
    if (!ct__in_unit(x)) {
        ct__fail(CT_ERR_VALUE, c->fn, "all elements of input should be between 0 and 1");
    } else if (!ct__in_unit(t)) {
        ct__fail(CT_ERR_VALUE, c->fn, "all elements of target should be between 0 and 1");
    } else {
        ct_tensor *l = ct_sub(ct_mul(ct_sub_scalar(t, 1.0), ct__log_clamped(ct_log1p(ct_neg(x)))),
                              ct_mul(t, ct__log_clamped(ct_log(x))));
        r = ct__reduce_loss(w ? ct_mul(l, w) : l, (ct_reduction)c->attrs[0].i);
    }
    ct_no_grad_end();
    return ct__composite_end(c, r);
}

/* Saves self, target, weight and the reduction. */
static void ct__bce_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->attrs[0].i;
    for (int k = 0; k < 3; k++) {
        ct__save(n, c->inputs[k]);
    }
}

/* g times w, divided by numel for 'mean' (the gradient's common factor) */
static ct_tensor *ct__bce_scale(const ct_node *n, ct_tensor *d, const ct_tensor *w,
                                const ct_tensor *x)
{
    d = w ? ct_mul(d, w) : d;
    return n->i[0] == CT_REDUCTION_MEAN ? ct_div_scalar(d, (double)ct_numel(x)) : d;
}

static void ct__bce_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *t = ct__saved(n, 1), *w = ct__saved(n, 2);
    if (!x || !t) {
        return;
    }
    ct_tensor *one_minus = ct_add_scalar(ct_neg(x), 1.0); /* PyTorch's EPSILON is 1e-12f */
    ct_tensor *den = ct_clamp(ct_mul(one_minus, x), (double)1e-12f, INFINITY);
    gi[0] = ct__bce_scale(n, ct_div(ct_mul(g, ct_sub(x, t)), den), w, x);
    if (n->n_next > 1 && (n->next[1].node || n->next[1].leaf)) { /* target needs grad */
        gi[1] = ct__bce_scale(n, ct_mul(ct_neg(ct_logit(x, -1.0)), g), w, x);
    }
}

/* ---- descriptors ------------------------------------------------------------------------ */
/* The reduction attribute holds a ct_reduction (PyTorch's int enum differs: None 0, Mean 1,
   Sum 2). cross_entropy_loss is fused on (N, C) logits (one op, one node, PyTorch's name
   NllLossBackward0); other shapes run log_softmax and nll_loss. ctorch's fused backward of
   it, ctorch::cross_entropy_loss_backward, runs when the gradient needs no graph. nll_loss's
   own backward is written with ops (ct__nll_backward). */
#define CT__LOSS_OP(SYM, NAME, SCHEMA, API, OPT, META, K, COMP, NODE, BW, RECORD)               \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, 0,    \
                                       OPT, NULL, META, K, COMP, NODE, CT__BACKWARD(BW), 0u,   \
                                       RECORD, NULL};
CT__LOSS_OP(nll_loss, "aten::nll_loss", "nll_loss(Tensor self, Tensor target, Tensor? "
            "weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor", "ct_nll_loss",
            1u << 2, ct__nll_meta, CT__K_FLOAT(ct__nll_kernel), NULL, "NllLossBackward0",
            ct__nll_backward, ct__nll_record)
CT__LOSS_OP(cross_entropy, "aten::cross_entropy_loss", "cross_entropy_loss(Tensor self, Tensor "
            "target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100, float "
            "label_smoothing=0.0) -> Tensor", "ct_cross_entropy", 1u << 2, ct__nll_meta,
            CT__K_FLOAT(ct__cross_entropy_kernel), NULL, "NllLossBackward0",
            ct__cross_entropy_backward, ct__nll_record)
CT__LOSS_OP(cross_entropy_backward, "ctorch::cross_entropy_loss_backward",
            "cross_entropy_loss_backward(Tensor grad_output, Tensor self, Tensor lse, Tensor "
            "target, Tensor? weight, int reduction, SymInt ignore_index, float total_weight) -> "
            "Tensor", "ct_backward (cross_entropy)", 1u << 4, ct__cross_entropy_bw_meta,
            CT__K_FLOAT(ct__cross_entropy_bw_kernel), NULL, NULL, NULL, NULL)
CT__LOSS_OP(mse_loss, "aten::mse_loss", "mse_loss(Tensor self, Tensor target, int "
            "reduction=Mean) -> Tensor", "ct_mse_loss", 0u, NULL, CT__K_NONE,
            ct__mse_loss_composite, NULL, NULL, NULL)
CT__LOSS_OP(l1_loss, "aten::l1_loss", "l1_loss(Tensor self, Tensor target, int reduction=Mean) "
            "-> Tensor", "ct_l1_loss", 0u, NULL, CT__K_NONE, ct__l1_loss_composite, NULL, NULL,
            NULL)
CT__LOSS_OP(smooth_l1_loss, "aten::smooth_l1_loss", "smooth_l1_loss(Tensor self, Tensor target, "
            "int reduction=Mean, float beta=1.0) -> Tensor", "ct_smooth_l1_loss", 0u, NULL,
            CT__K_NONE, ct__smooth_l1_loss_composite, NULL, NULL, NULL)
CT__LOSS_OP(huber_loss, "aten::huber_loss", "huber_loss(Tensor self, Tensor target, int "
            "reduction=Mean, float delta=1.0) -> Tensor", "ct_huber_loss", 0u, NULL, CT__K_NONE,
            ct__huber_loss_composite, NULL, NULL, NULL)
CT__LOSS_OP(binary_cross_entropy, "aten::binary_cross_entropy", "binary_cross_entropy(Tensor "
            "self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor",
            "ct_binary_cross_entropy", 1u << 2, ct__bce_meta, CT__K_NONE, ct__bce_composite,
            "BinaryCrossEntropyBackward0", ct__bce_backward, ct__bce_record)
CT__LOSS_OP(binary_cross_entropy_with_logits, "aten::binary_cross_entropy_with_logits",
            "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
            "Tensor? pos_weight=None, int reduction=Mean) -> Tensor",
            "ct_binary_cross_entropy_with_logits", 3u << 2, NULL, CT__K_NONE,
            ct__bce_logits_composite, NULL, NULL, NULL)
CT__LOSS_OP(kl_div, "aten::kl_div", "kl_div(Tensor self, Tensor target, int reduction=Mean, *, "
            "bool log_target=False) -> Tensor", "ct_kl_div", 0u, NULL, CT__K_NONE,
            ct__kl_div_composite, NULL, NULL, NULL)
CT__LOSS_OP(margin_ranking_loss, "aten::margin_ranking_loss", "margin_ranking_loss(Tensor "
            "input1, Tensor input2, Tensor target, float margin=0.0, int reduction=Mean) -> "
            "Tensor", "ct_margin_ranking_loss", 0u, NULL, CT__K_NONE,
            ct__margin_ranking_composite, NULL, NULL, NULL)
CT__LOSS_OP(hinge_embedding_loss, "aten::hinge_embedding_loss", "hinge_embedding_loss(Tensor "
            "self, Tensor target, float margin=1.0, int reduction=Mean) -> Tensor",
            "ct_hinge_embedding_loss", 0u, NULL, CT__K_NONE, ct__hinge_embedding_composite,
            NULL, NULL, NULL)
CT__LOSS_OP(soft_margin_loss, "aten::soft_margin_loss", "soft_margin_loss(Tensor self, Tensor "
            "target, int reduction=Mean) -> Tensor", "ct_soft_margin_loss", 0u, NULL,
            CT__K_NONE, ct__soft_margin_composite, NULL, NULL, NULL)
CT__LOSS_OP(cosine_embedding_loss, "aten::cosine_embedding_loss", "cosine_embedding_loss(Tensor "
            "input1, Tensor input2, Tensor target, float margin=0.0, int reduction=Mean) -> "
            "Tensor", "ct_cosine_embedding_loss", 0u, NULL, CT__K_NONE,
            ct__cosine_embedding_composite, NULL, NULL, NULL)
CT__LOSS_OP(multi_margin_loss, "aten::multi_margin_loss", "multi_margin_loss(Tensor self, "
            "Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int "
            "reduction=Mean) -> Tensor", "ct_multi_margin_loss", 1u << 2, NULL, CT__K_NONE,
            ct__multi_margin_composite, NULL, NULL, NULL)
CT__LOSS_OP(triplet_margin_loss, "aten::triplet_margin_loss", "triplet_margin_loss(Tensor "
            "anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2, float "
            "eps=1e-06, bool swap=False, int reduction=Mean) -> Tensor",
            "ct_triplet_margin_loss", 0u, NULL, CT__K_NONE, ct__triplet_margin_composite, NULL,
            NULL, NULL)
CT__LOSS_OP(poisson_nll_loss, "aten::poisson_nll_loss", "poisson_nll_loss(Tensor input, Tensor "
            "target, bool log_input, bool full, float eps, int reduction) -> Tensor",
            "ct_poisson_nll_loss", 0u, NULL, CT__K_NONE, ct__poisson_nll_composite, NULL, NULL,
            NULL)
CT__LOSS_OP(gaussian_nll_loss, "ctorch::gaussian_nll_loss", "gaussian_nll_loss(Tensor input, "
            "Tensor target, Tensor var, bool full=False, float eps=1e-06, int reduction=Mean) -> "
            "Tensor", "ct_gaussian_nll_loss", 0u, NULL, CT__K_NONE, ct__gaussian_nll_composite,
            NULL, NULL, NULL)
#undef CT__LOSS_OP

/* ---- public functions ---------------------------------------------------------------------- */
/* nll_loss or the fused cross-entropy: the call, its state, the lse released after */
static ct_tensor *ct__call_nll(const ct_op *op, const char *fn, const ct_tensor *x,
                               const ct_tensor *target, const ct_nll_loss_opts *o)
{
    const ct_tensor *in[3] = {x, target, o->weight};
    ct__nll_state s = {0, NULL};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 3);
    ct__call_i(&c, ct__reduction(o->reduction));
    ct__call_i(&c, o->ignore_index);
    c.state = &s;
    ct_tensor *r = ct__dispatch(&c);
    ct__release(s.lse);
    return r;
}

/* the fused backward: dx (N, C) from the contiguous logits x and their lse */
static ct_tensor *ct__cross_entropy_grad(const ct_node *n, const ct_tensor *x,
                                         const ct_tensor *lse, const ct_tensor *target,
                                         const ct_tensor *w, const ct_tensor *g)
{
    const ct_tensor *in[5] = {g, x, lse, target, w};
    ct_op_call c;
    ct__call_init(&c, &ct__op_cross_entropy_backward, "ct_cross_entropy_backward", in, 5);
    ct__call_i(&c, n->i[0]);
    ct__call_i(&c, n->i[1]);
    ct__call_f(&c, n->f[0]);
    return ct__dispatch(&c);
}

/* Whether a and b have the same sizes. */
static bool ct__same_sizes(const ct_tensor *a, const ct_tensor *b)
{
    return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof(int64_t));
}

/* CT_ERR_SHAPE fmt with the target's and the input's shapes (two %s, in that order) */
static void ct__fail_sizes(ct_status code, const char *fn, const char *fmt, const ct_tensor *a,
                           const ct_tensor *b)
{
    char sa[256], sb[256];
    ct__fail(code, fn, fmt, ct__shape_str(a->sizes, a->ndim, sa, sizeof sa),
             ct__shape_str(b->sizes, b->ndim, sb, sizeof sb));
}

/* The checks of PyTorch's nll_loss_nd on an (N, C, d1, ...) input x and its target. */
static bool ct__nll_nd_check(const char *fn, const ct_tensor *x, const ct_tensor *t)
{
    if (t->ndim < 1 || x->sizes[0] != t->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, fn, "Expected input batch_size (%lld) to match target batch_size "
                 "(%lld).", (long long)x->sizes[0], (long long)(t->ndim ? t->sizes[0] : 0));
        return false;
    }
    if (x->ndim == 4 && t->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, fn, "only batches of spatial targets supported (3D tensors) but "
                 "got targets of dimension: %d", t->ndim);
        return false;
    }
    bool same = t->ndim == x->ndim - 1;
    for (int d = 1; same && d < t->ndim; d++) {
        same = t->sizes[d] == x->sizes[d + 1];
    }
    if (!same && x->ndim == 4) {
        ct__fail_sizes(CT_ERR_SHAPE, fn, "size mismatch (got input: %s , target: %s", x, t);
    } else if (!same) {
        int64_t want[CT_MAX_DIMS];
        want[0] = x->sizes[0];
        memcpy(want + 1, x->sizes + 2, (size_t)(x->ndim - 2) * sizeof(int64_t));
        char sw[256], st[256];
        ct__fail(CT_ERR_SHAPE, fn, "Expected target size %s, got %s",
                 ct__shape_str(want, x->ndim - 1, sw, sizeof sw),
                 ct__shape_str(t->sizes, t->ndim, st, sizeof st));
    }
    return same;
}

/* op on x (N, C, d1, ...) as (N d1 ..., C) rows and the target as (N d1 ...); 'none' gives
   the target's shape. */
static ct_tensor *ct__nll_nd(const ct_op *op, const char *fn, const ct_tensor *x,
                             const ct_tensor *t, const ct_nll_loss_opts *o)
{
    if (!ct__nll_nd_check(fn, x, t)) {
        return NULL;
    }
    int64_t src = 1, dst = -1, rows[2] = {ct_numel(t), x->sizes[1]};
    ct_scope_begin();
    ct_tensor *xf = ct_reshape(ct_movedim(x, &src, &dst, 1), rows, 2);
    ct_tensor *tf = ct_reshape(t, rows, 1);
    ct_tensor *r = xf && tf ? ct__call_nll(op, fn, xf, tf, o) : NULL;
    if (r && ct__reduction(o->reduction) == CT_REDUCTION_NONE) {
        r = ct_reshape(r, t->sizes, t->ndim);
    }
    r = ct_keep(r);
    ct_scope_end();
    return r;
}

ct_tensor *ct_nll_loss(const ct_tensor *x, const ct_tensor *target, const ct_nll_loss_opts *opts)
{
    const char *fn = "ct_nll_loss";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    if (ct__null(fn, x) || ct__null(fn, target) || !ct__check_reduction(fn, o.reduction)) {
        return NULL;
    }
    return x->ndim > 2 ? ct__nll_nd(&ct__op_nll_loss, fn, x, target, &o)
                       : ct__call_nll(&ct__op_nll_loss, fn, x, target, &o);
}

/* the class weights w (C) shaped to broadcast over the class dim of an ndim input */
static ct_tensor *ct__class_weights(const ct_tensor *w, int ndim)
{
    int64_t s[CT_MAX_DIMS];
    for (int d = 0; d + 1 < ndim; d++) {
        s[d] = d ? 1 : w->sizes[0];
    }
    return ndim <= 2 ? (ct_tensor *)(uintptr_t)w : ct_reshape(w, s, ndim - 1);
}

/* cross entropy with class probabilities t (input's shape): -sum(lsm * t * w) over the class
   dim, 'mean' over numel / C. */
static ct_tensor *ct__cross_entropy_probs(const char *fn, const ct_tensor *x, const ct_tensor *t,
                                          const ct_nll_loss_opts *o)
{
    int cd = x->ndim == 1 ? 0 : 1;
    int64_t C = x->ndim ? x->sizes[cd] : 1;
    const ct_tensor *w = o->weight;
    if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, fn, "Expected floating point type for target with class "
                 "probabilities, got %s", ct__dtype_title(t->dtype));
        return NULL;
    }
    if (o->ignore_index >= 0) {
        ct__fail(CT_ERR_VALUE, fn, "ignore_index is not supported for floating point target");
        return NULL;
    }
    if (w && (w->ndim != 1 || w->sizes[0] != C)) {
        char sw[256];
        ct__fail(CT_ERR_SHAPE, fn, "cross_entropy: weight tensor should be defined either for "
                 "all %lld classes or no classes but got weight tensor of shape: %s",
                 (long long)C, ct__shape_str(w->sizes, w->ndim, sw, sizeof sw));
        return NULL;
    }
    double ls = o->label_smoothing;
    ct_reduction red = ct__reduction(o->reduction);
    ct_scope_begin();
    const ct_tensor *tg = ls > 0 ? ct_add_scalar(ct_mul_scalar(t, 1.0 - ls), ls / (double)C) : t;
    ct_tensor *p = ct_mul(ct_log_softmax(x, cd), tg);
    p = w ? ct_mul(p, ct__class_weights(w, x->ndim)) : p;
    ct_tensor *r = red == CT_REDUCTION_NONE ? ct_neg(ct_sum_dim(p, cd, false)) : ct_neg(ct_sum(p));
    if (red == CT_REDUCTION_MEAN) {
        r = ct_div_scalar(r, (double)(C ? ct_numel(x) / C : 0));
    }
    r = ct_keep(r);
    ct_scope_end();
    return r;
}

/* label smoothing on class indices: (1 - ls) nll + ls / C * the smoothing loss
   -sum_c(w_c lsm_c), 0 on ignored targets, 'mean' over the counted targets' weights. */
static ct_tensor *ct__cross_entropy_smoothed(const char *fn, const ct_tensor *x,
                                             const ct_tensor *t, const ct_nll_loss_opts *o)
{
    (void)fn;
    int cd = x->ndim == 1 ? 0 : 1;
    int64_t C = x->ndim ? x->sizes[cd] : 1;
    const ct_tensor *w = o->weight;
    double ls = o->label_smoothing;
    ct_reduction red = ct__reduction(o->reduction);
    ct_scope_begin();
    ct_tensor *lsm = ct_log_softmax(x, cd), *nll = ct_nll_loss(lsm, t, o);
    ct_tensor *r = NULL;
    if (nll) { /* nll checked the shapes, the weight and the target */
        ct_tensor *mask = ct_eq_scalar(t, (double)o->ignore_index);
        ct_tensor *p = w ? ct_mul(lsm, ct__class_weights(w, x->ndim)) : lsm;
        r = ct_masked_fill(ct_neg(ct_sum_dim(p, cd, false)), mask, 0.0);
        if (red == CT_REDUCTION_MEAN) {
            ct_tensor *kept = ct_logical_not(mask);
            r = ct_div(ct_sum(r), w ? ct_sum(ct_index_select(w, 0, ct_masked_select(t, kept)))
                                    : ct_sum(kept));
        } else if (red == CT_REDUCTION_SUM) {
            r = ct_sum(r);
        }
        r = ct_add(ct_mul_scalar(nll, 1.0 - ls), ct_mul_scalar(r, ls / (double)C));
    }
    r = ct_keep(r);
    ct_scope_end();
    return r;
}

ct_tensor *ct_cross_entropy(const ct_tensor *x, const ct_tensor *target,
                            const ct_nll_loss_opts *opts)
{
    const char *fn = "ct_cross_entropy";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    if (ct__null(fn, x) || ct__null(fn, target) || (o.weight && ct__null(fn, o.weight)) ||
        !ct__check_reduction(fn, o.reduction)) {
        return NULL;
    }
    if (o.label_smoothing > 1.0) {
        ct__fail(CT_ERR_VALUE, fn, "label_smoothing must be between 0.0 and 1.0. Got: %g",
                 o.label_smoothing);
        return NULL;
    }
    if (x->ndim && ct__same_sizes(x, target)) {
        return ct__cross_entropy_probs(fn, x, target, &o);
    }
    if (o.label_smoothing > 0.0) {
        return ct__cross_entropy_smoothed(fn, x, target, &o);
    }
    if (x->ndim >= 2) {
        return x->ndim == 2 ? ct__call_nll(&ct__op_cross_entropy, fn, x, target, &o)
                            : ct__nll_nd(&ct__op_cross_entropy, fn, x, target, &o);
    }
    ct_scope_begin(); /* 1-D logits: log_softmax over dim 0, then nll_loss */
    ct_tensor *r = ct_keep(ct_nll_loss(ct_log_softmax(x, 0), target, &o));
    ct_scope_end();
    return r;
}

/* a two-input loss op with its reduction (and the float parameter p when with_p) */
static ct_tensor *ct__call_loss2(const ct_op *op, const char *fn, const ct_tensor *x,
                                 const ct_tensor *t, ct_reduction reduction, bool with_p,
                                 double p)
{
    if (!ct__check_reduction(fn, reduction)) {
        return NULL;
    }
    const ct_tensor *in[2] = {x, t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    ct__call_i(&c, ct__reduction(reduction));
    if (with_p) {
        ct__call_f(&c, p);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_mse_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction)
{
    return ct__call_loss2(&ct__op_mse_loss, "ct_mse_loss", x, target, reduction, false, 0.0);
}

ct_tensor *ct_l1_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction)
{
    return ct__call_loss2(&ct__op_l1_loss, "ct_l1_loss", x, target, reduction, false, 0.0);
}

ct_tensor *ct_smooth_l1_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction,
                             double beta)
{
    if (beta < 0) {
        ct__fail(CT_ERR_VALUE, "ct_smooth_l1_loss",
                 "smooth_l1_loss does not support negative values for beta.");
        return NULL;
    }
    return ct__call_loss2(&ct__op_smooth_l1_loss, "ct_smooth_l1_loss", x, target, reduction,
                          true, beta);
}

ct_tensor *ct_huber_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction,
                         double delta)
{
    if (!(delta > 0)) {
        ct__fail(CT_ERR_VALUE, "ct_huber_loss",
                 "huber_loss does not support non-positive values for delta.");
        return NULL;
    }
    return ct__call_loss2(&ct__op_huber_loss, "ct_huber_loss", x, target, reduction, true,
                          delta);
}

ct_tensor *ct_binary_cross_entropy(const ct_tensor *x, const ct_tensor *target,
                                   const ct_tensor *weight, ct_reduction reduction)
{
    const char *fn = "ct_binary_cross_entropy";
    if (ct__null(fn, x) || ct__null(fn, target) || !ct__check_reduction(fn, reduction)) {
        return NULL;
    }
    if (!ct__same_sizes(x, target)) {
        ct__fail_sizes(CT_ERR_VALUE, fn, "Using a target size (torch.Size(%s)) that is different "
                       "to the input size (torch.Size(%s)) is deprecated. Please ensure they "
                       "have the same size.", target, x);
        return NULL;
    }
    ct_scope_begin(); /* the weight expanded to the target's size, as PyTorch */
    const ct_tensor *in[3] = {x, target, weight ? ct_expand(weight, x->sizes, x->ndim) : NULL};
    ct_tensor *r = NULL;
    if (!weight || in[2]) {
        ct_op_call c;
        ct__call_init(&c, &ct__op_binary_cross_entropy, fn, in, 3);
        ct__call_i(&c, ct__reduction(reduction));
        r = ct__dispatch(&c);
    }
    r = ct_keep(r);
    ct_scope_end();
    return r;
}

ct_tensor *ct_binary_cross_entropy_with_logits(const ct_tensor *x, const ct_tensor *target,
                                               const ct_tensor *weight,
                                               const ct_tensor *pos_weight,
                                               ct_reduction reduction)
{
    const char *fn = "ct_binary_cross_entropy_with_logits";
    if (ct__null(fn, x) || ct__null(fn, target) || !ct__check_reduction(fn, reduction)) {
        return NULL;
    }
    if (!ct__same_sizes(x, target)) {
        ct__fail_sizes(CT_ERR_VALUE, fn, "Target size (torch.Size(%s)) must be the same as input "
                       "size (torch.Size(%s))", target, x);
        return NULL;
    }
    const ct_tensor *in[4] = {x, target, weight, pos_weight};
    ct_op_call c;
    ct__call_init(&c, &ct__op_binary_cross_entropy_with_logits, fn, in, 4);
    ct__call_i(&c, ct__reduction(reduction));
    return ct__dispatch(&c);
}

ct_tensor *ct_kl_div(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction,
                     bool log_target)
{
    const char *fn = "ct_kl_div";
    if (!ct__check_enum(fn, "reduction", (int)reduction, (int)CT_REDUCTION_BATCHMEAN + 1)) {
        return NULL;
    }
    const ct_tensor *in[2] = {x, target};
    ct_op_call c;
    ct__call_init(&c, &ct__op_kl_div, fn, in, 2);
    ct__call_i(&c, ct__reduction(reduction));
    ct__call_i(&c, log_target);
    return ct__dispatch(&c);
}

/* ---- margin and likelihood losses ---------------------------------------------------------- */
/* a loss op on n inputs with attributes f[0..nf-1] (floats, ints where is_int has bit k) and
   the reduction last */
static ct_tensor *ct__call_loss(const ct_op *op, const char *fn, const ct_tensor *const *in,
                                int n, const double *f, int nf, unsigned is_int,
                                ct_reduction reduction)
{
    if (!ct__check_reduction(fn, reduction)) {
        return NULL;
    }
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n);
    for (int k = 0; k < nf; k++) {
        if (is_int >> k & 1u) {
            ct__call_i(&c, (int64_t)f[k]);
        } else {
            ct__call_f(&c, f[k]);
        }
    }
    ct__call_i(&c, ct__reduction(reduction));
    return ct__dispatch(&c);
}

ct_tensor *ct_margin_ranking_loss(const ct_tensor *input1, const ct_tensor *input2,
                                  const ct_tensor *target, double margin, ct_reduction reduction)
{
    const char *fn = "ct_margin_ranking_loss";
    if (ct__null(fn, input1) || ct__null(fn, input2) || ct__null(fn, target)) {
        return NULL;
    }
    if (input1->ndim != input2->ndim || input1->ndim != target->ndim) {
        char a[256], b[256], t[256];
        ct__fail(CT_ERR_SHAPE, fn, "margin_ranking_loss : All input tensors should have same "
                 "dimension but got sizes: input1: torch.Size(%s), input2: torch.Size(%s), "
                 "target: torch.Size(%s) ", ct__shape_str(input1->sizes, input1->ndim, a, 256),
                 ct__shape_str(input2->sizes, input2->ndim, b, 256),
                 ct__shape_str(target->sizes, target->ndim, t, 256));
        return NULL;
    }
    const ct_tensor *in[3] = {input1, input2, target};
    return ct__call_loss(&ct__op_margin_ranking_loss, fn, in, 3, &margin, 1, 0u, reduction);
}

ct_tensor *ct_hinge_embedding_loss(const ct_tensor *input, const ct_tensor *target,
                                   double margin, ct_reduction reduction)
{
    const ct_tensor *in[2] = {input, target};
    return ct__call_loss(&ct__op_hinge_embedding_loss, "ct_hinge_embedding_loss", in, 2, &margin,
                         1, 0u, reduction);
}

ct_tensor *ct_soft_margin_loss(const ct_tensor *input, const ct_tensor *target,
                               ct_reduction reduction)
{
    const ct_tensor *in[2] = {input, target};
    return ct__call_loss(&ct__op_soft_margin_loss, "ct_soft_margin_loss", in, 2, NULL, 0, 0u,
                         reduction);
}

ct_tensor *ct_cosine_embedding_loss(const ct_tensor *input1, const ct_tensor *input2,
                                    const ct_tensor *target, double margin,
                                    ct_reduction reduction)
{
    const char *fn = "ct_cosine_embedding_loss";
    if (ct__null(fn, input1) || ct__null(fn, input2) || ct__null(fn, target)) {
        return NULL;
    }
    if (target->ndim > 1) {
        ct__fail(CT_ERR_SHAPE, fn, "0D or 1D target tensor expected, multi-target not supported");
        return NULL;
    }
    if (input1->ndim != target->ndim + 1 || input2->ndim != target->ndim + 1) {
        char a[256], b[256];
        ct__fail(CT_ERR_SHAPE, fn, "%dD target tensor expects %dD input tensors, but found "
                 "inputs with sizes %s and %s.", target->ndim, target->ndim + 1,
                 ct__shape_str(input1->sizes, input1->ndim, a, sizeof a),
                 ct__shape_str(input2->sizes, input2->ndim, b, sizeof b));
        return NULL;
    }
    const ct_tensor *in[3] = {input1, input2, target};
    return ct__call_loss(&ct__op_cosine_embedding_loss, fn, in, 3, &margin, 1, 0u, reduction);
}

/* multi_margin_loss's shape and target checks (PyTorch's multi_margin_loss_shape_check) */
static bool ct__multi_margin_check(const char *fn, const ct_tensor *x, const ct_tensor *t,
                                   const ct_tensor *w)
{
    char sx[256], st[256];
    int64_t C = x->ndim ? x->sizes[x->ndim - 1] : 0, N = x->ndim == 2 ? x->sizes[0] : 1;
    if (!((x->ndim == 2 && C != 0) || (x->ndim == 1 && C != 0))) {
        ct__fail(CT_ERR_SHAPE, fn, "Expected non-empty vector or matrix with optional 0-dim "
                 "batch size, but got: %s", ct__shape_str(x->sizes, x->ndim, sx, sizeof sx));
        return false;
    }
    if (t->ndim > 1 || ct_numel(t) != N) {
        ct__fail(CT_ERR_SHAPE, fn, "multi_margin_loss: target tensor should be 1-D with size "
                 "equal to the number of input samples (batch size). Expected target size [%lld], "
                 "but got %s. Input has shape %s.", (long long)N,
                 ct__shape_str(t->sizes, t->ndim, st, sizeof st),
                 ct__shape_str(x->sizes, x->ndim, sx, sizeof sx));
        return false;
    }
    if (w && (w->ndim != 1 || w->sizes[0] != C)) {
        ct__fail(w->ndim != 1 ? CT_ERR_VALUE : CT_ERR_SHAPE, fn, w->ndim != 1 ?
                 "weight must be one-dimensional" : "inconsistent weight size, expected %lld but "
                 "got %s", (long long)C, ct__shape_str(w->sizes, w->ndim, sx, sizeof sx));
        return false;
    }
    if (t->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, fn, "expected scalar type Long but found %s",
                 ct__dtype_title(t->dtype));
        return false;
    }
    if (N && (ct_item(ct_amin(t, NULL, 0, false)) < 0 ||
              ct_item(ct_amax(t, NULL, 0, false)) >= (double)C)) {
        ct__fail(CT_ERR_INDEX, fn, "target out of range");
        return false;
    }
    return true;
}

ct_tensor *ct_multi_margin_loss(const ct_tensor *input, const ct_tensor *target, int64_t p,
                                double margin, const ct_tensor *weight, ct_reduction reduction)
{
    const char *fn = "ct_multi_margin_loss";
    if (ct__null(fn, input) || ct__null(fn, target) || (weight && ct__null(fn, weight))) {
        return NULL;
    }
    if (p != 1 && p != 2) {
        ct__fail(CT_ERR_VALUE, fn, "only p == 1 and p == 2 supported");
        return NULL;
    }
    ct_scope_begin(); /* the target range check's temporaries */
    bool ok = ct__multi_margin_check(fn, input, target, weight);
    ct_scope_end();
    const ct_tensor *in[3] = {input, target, weight};
    const double f[2] = {(double)p, margin};
    return ok ? ct__call_loss(&ct__op_multi_margin_loss, fn, in, 3, f, 2, 0u, reduction) : NULL;
}

/* Python's repr of a float that holds an integer ("0.0") or not ("0.5") */
static const char *ct__float_repr(double v, char *buf, size_t n)
{
    snprintf(buf, n, v == floor(v) && fabs(v) < 1e16 ? "%.1f" : "%.17g", v);
    return buf;
}

ct_tensor *ct_triplet_margin_loss(const ct_tensor *anchor, const ct_tensor *positive,
                                  const ct_tensor *negative, double margin, double p, double eps,
                                  bool swap, ct_reduction reduction)
{
    const char *fn = "ct_triplet_margin_loss";
    if (ct__null(fn, anchor) || ct__null(fn, positive) || ct__null(fn, negative)) {
        return NULL;
    }
    char m[64];
    if (!(margin > 0)) {
        ct__fail(CT_ERR_VALUE, fn, "margin must be greater than 0, got %s",
                 ct__float_repr(margin, m, sizeof m));
        return NULL;
    }
    if (anchor->ndim != positive->ndim || positive->ndim != negative->ndim) {
        ct__fail(CT_ERR_SHAPE, fn, "The anchor, positive, and negative tensors are expected to "
                 "have the same number of dimensions, but got: anchor %dD, positive %dD, and "
                 "negative %dD inputs", anchor->ndim, positive->ndim, negative->ndim);
        return NULL;
    }
    const ct_tensor *in[3] = {anchor, positive, negative};
    const double f[4] = {margin, p, eps, swap ? 1.0 : 0.0};
    return ct__call_loss(&ct__op_triplet_margin_loss, fn, in, 3, f, 4, 1u << 3, reduction);
}

ct_tensor *ct_poisson_nll_loss(const ct_tensor *input, const ct_tensor *target, bool log_input,
                               bool full, double eps, ct_reduction reduction)
{
    const ct_tensor *in[2] = {input, target};
    const double f[3] = {log_input ? 1.0 : 0.0, full ? 1.0 : 0.0, eps};
    return ct__call_loss(&ct__op_poisson_nll_loss, "ct_poisson_nll_loss", in, 2, f, 3, 3u,
                         reduction);
}

/* var as gaussian_nll_loss broadcasts it (a new reference), or NULL (reported) */
static ct_tensor *ct__gaussian_var(const char *fn, const ct_tensor *x, const ct_tensor *var)
{
    if (ct_item(ct_any(ct_lt_scalar(var, 0.0))) != 0.0) {
        ct__fail(CT_ERR_VALUE, fn, "var has negative entry/entries");
        return NULL;
    }
    int mismatched = 0;
    for (int d = 0; var->ndim == x->ndim && d < x->ndim; d++) {
        mismatched += var->sizes[d] != x->sizes[d] ? (int)var->sizes[d] : 0;
    }
    bool one_short = var->ndim == x->ndim - 1 &&
                     !memcmp(var->sizes, x->sizes, (size_t)var->ndim * sizeof(int64_t));
    if (one_short) {
        return ct_unsqueeze(var, -1);
    }
    if (var->ndim == x->ndim && mismatched <= 1) {
        return (ct_tensor *)(uintptr_t)var;
    }
    ct__fail(CT_ERR_VALUE, fn, "var is of incorrect size");
    return NULL;
}

ct_tensor *ct_gaussian_nll_loss(const ct_tensor *input, const ct_tensor *target,
                                const ct_tensor *var, bool full, double eps,
                                ct_reduction reduction)
{
    const char *fn = "ct_gaussian_nll_loss";
    if (ct__null(fn, input) || ct__null(fn, target) || ct__null(fn, var)) {
        return NULL;
    }
    ct_scope_begin();
    const ct_tensor *in[3] = {input, target, ct__gaussian_var(fn, input, var)};
    const double f[2] = {full ? 1.0 : 0.0, eps};
    ct_tensor *r = in[2] ? ct__call_loss(&ct__op_gaussian_nll_loss, fn, in, 3, f, 2, 1u, reduction)
                         : NULL;
    r = ct_keep(r);
    ct_scope_end();
    return r;
}

/* ---- loss modules ---------------------------------------------------------------------------
 * A ct_module named as PyTorch's class whose user data holds the options; weight and
 * pos_weight are its buffers, read at each forward (as PyTorch's modules read theirs). */
typedef enum ct__loss_kind {
    CT__LOSS_CROSS_ENTROPY, CT__LOSS_NLL, CT__LOSS_MSE, CT__LOSS_L1, CT__LOSS_BCE,
    CT__LOSS_BCE_LOGITS, CT__LOSS_HUBER, CT__LOSS_SMOOTH_L1, CT__LOSS_KL_DIV, CT__LOSS_COUNT
} ct__loss_kind;

static const char *const ct__loss_names[CT__LOSS_COUNT] = {
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss",
    "HuberLoss", "SmoothL1Loss", "KLDivLoss"};

typedef struct ct__loss_module {
    ct__loss_kind kind;
    ct_reduction reduction;
    int64_t ignore_index;
    double p; /* label_smoothing, delta or beta */
    bool log_target;
} ct__loss_module;

static ct_tensor *ct__loss_module_forward(ct_module *m, const ct_tensor *input)
{
    (void)input;
    ct__fail(CT_ERR_VALUE, "ct_module_forward", "%s takes an input and a target: call "
             "ct_loss_forward(m, input, target)", ct_module_name(m));
    return NULL;
}

/* A loss module of kind with options l (copied) and the optional buffers. */
static ct_module *ct__loss_module_new(ct__loss_kind kind, ct__loss_module l, ct_tensor *weight,
                                      ct_tensor *pos_weight)
{
    ct__loss_module *u = (ct__loss_module *)ct__calloc(sizeof *u);
    if (!u) {
        ct__fail(CT_ERR_OOM, "ct_loss_new", "out of memory");
        return NULL;
    }
    l.kind = kind;
    *u = l;
    ct_module *m = ct_module_new(ct__loss_names[kind], ct__loss_module_forward, u, ct__free);
    if (!m) {
        ct__free(u);
        return NULL;
    }
    if ((weight && ct_module_register_buffer(m, "weight", weight) != CT_OK) ||
        (pos_weight && ct_module_register_buffer(m, "pos_weight", pos_weight) != CT_OK)) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

static ct__loss_module ct__loss_opts(ct_reduction reduction, double p)
{
    ct__loss_module l;
    memset(&l, 0, sizeof l);
    l.reduction = reduction;
    l.ignore_index = -100;
    l.p = p;
    return l;
}

/* cross-entropy and nll modules: the options of opts (NULL: defaults) */
static ct_module *ct__nll_module_new(ct__loss_kind kind, const ct_nll_loss_opts *opts)
{
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    ct__loss_module l = ct__loss_opts(o.reduction, o.label_smoothing);
    l.ignore_index = o.ignore_index;
    return ct__loss_module_new(kind, l, (ct_tensor *)(uintptr_t)o.weight, NULL);
}

ct_module *ct_cross_entropy_loss_new(const ct_nll_loss_opts *opts)
{
    return ct__nll_module_new(CT__LOSS_CROSS_ENTROPY, opts);
}

ct_module *ct_nll_loss_new(const ct_nll_loss_opts *opts)
{
    return ct__nll_module_new(CT__LOSS_NLL, opts);
}

ct_module *ct_mse_loss_new(ct_reduction reduction)
{
    return ct__loss_module_new(CT__LOSS_MSE, ct__loss_opts(reduction, 0), NULL, NULL);
}

ct_module *ct_l1_loss_new(ct_reduction reduction)
{
    return ct__loss_module_new(CT__LOSS_L1, ct__loss_opts(reduction, 0), NULL, NULL);
}

ct_module *ct_bce_loss_new(ct_tensor *weight, ct_reduction reduction)
{
    return ct__loss_module_new(CT__LOSS_BCE, ct__loss_opts(reduction, 0), weight, NULL);
}

ct_module *ct_bce_with_logits_loss_new(ct_tensor *weight, ct_reduction reduction,
                                       ct_tensor *pos_weight)
{
    return ct__loss_module_new(CT__LOSS_BCE_LOGITS, ct__loss_opts(reduction, 0), weight,
                               pos_weight);
}

ct_module *ct_huber_loss_new(ct_reduction reduction, double delta)
{
    return ct__loss_module_new(CT__LOSS_HUBER, ct__loss_opts(reduction, delta), NULL, NULL);
}

ct_module *ct_smooth_l1_loss_new(ct_reduction reduction, double beta)
{
    return ct__loss_module_new(CT__LOSS_SMOOTH_L1, ct__loss_opts(reduction, beta), NULL, NULL);
}

ct_module *ct_kl_div_loss_new(ct_reduction reduction, bool log_target)
{
    ct__loss_module l = ct__loss_opts(reduction, 0);
    l.log_target = log_target;
    return ct__loss_module_new(CT__LOSS_KL_DIV, l, NULL, NULL);
}

/* m's options when m is a loss module, else NULL (reported) */
static const ct__loss_module *ct__loss_of(const ct_module *m)
{
    const char *name = ct_module_name(m);
    const ct__loss_module *l = (const ct__loss_module *)ct_module_user(m);
    for (int k = 0; name && l && k < CT__LOSS_COUNT; k++) {
        if (!strcmp(name, ct__loss_names[k]) && l->kind == (ct__loss_kind)k) {
            return l;
        }
    }
    if (name) {
        ct__fail(CT_ERR_VALUE, "ct_loss_forward", "%s is not a loss module", name);
    }
    return NULL;
}

ct_tensor *ct_loss_forward(ct_module *m, const ct_tensor *input, const ct_tensor *target)
{
    const char *fn = "ct_loss_forward";
    if (ct__null(fn, m) || ct__null(fn, input) || ct__null(fn, target)) {
        return NULL;
    }
    const ct__loss_module *l = ct__loss_of(m);
    if (!l) {
        return NULL;
    }
    ct_tensor *w = ct_module_get_parameter(m, "weight");
    ct_nll_loss_opts o = {w, l->ignore_index, l->reduction, l->p};
    switch (l->kind) {
    case CT__LOSS_CROSS_ENTROPY: return ct_cross_entropy(input, target, &o);
    case CT__LOSS_NLL: return ct_nll_loss(input, target, &o);
    case CT__LOSS_MSE: return ct_mse_loss(input, target, l->reduction);
    case CT__LOSS_L1: return ct_l1_loss(input, target, l->reduction);
    case CT__LOSS_BCE: return ct_binary_cross_entropy(input, target, w, l->reduction);
    case CT__LOSS_BCE_LOGITS:
        return ct_binary_cross_entropy_with_logits(input, target, w,
                                                   ct_module_get_parameter(m, "pos_weight"),
                                                   l->reduction);
    case CT__LOSS_HUBER: return ct_huber_loss(input, target, l->reduction, l->p);
    case CT__LOSS_SMOOTH_L1: return ct_smooth_l1_loss(input, target, l->reduction, l->p);
    default: return ct_kl_div(input, target, l->reduction, l->log_target);
    }
}
CT__GLUE_END
