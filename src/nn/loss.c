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

static ct_status ct__nll_kernel(ct_op_call *c)
{
    ct_nll_loss_opts o = ct__nll_opts(c);
    ct__nll_state *s = (ct__nll_state *)c->state;
    return ct__nll_forward(c->fn, c->inputs[0], NULL, c->inputs[1], &o, c->outputs[0], &s->total)
               ? CT_OK
               : ct_error_code();
}

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

/* The fused backward op: inputs grad (the loss's shape), self (N, C) contiguous, lse (N),
   target, weight (or NULL); attributes reduction, ignore_index, total_weight. dx (N, C). */
static bool ct__cross_entropy_bw_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[1];
    c->dtype = x->dtype;
    return ct__op_output(c, x->sizes, 2, x->dtype) != NULL;
}

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

/* mse_loss (composite): (input - target)^2, reduced; attribute: reduction */
static ct_status ct__mse_loss_composite(ct_op_call *c)
{
    ct_reduction red = ct__reduction((ct_reduction)c->attrs[0].i);
    ct_scope_begin();
    ct_tensor *d = ct_square(ct_sub(c->inputs[0], c->inputs[1]));
    ct_tensor *r = red == CT_REDUCTION_NONE ? d : red == CT_REDUCTION_SUM ? ct_sum(d) : ct_mean(d);
    return ct__composite_end(c, r);
}

/* ---- descriptors ------------------------------------------------------------------------ */
/* The reduction attribute holds a ct_reduction (PyTorch's int enum differs: None 0, Mean 1,
   Sum 2). cross_entropy_loss is fused on (N, C) logits (one op, one node, PyTorch's name
   NllLossBackward0); other shapes run log_softmax and nll_loss. ctorch's fused backward of
   it, ctorch::cross_entropy_loss_backward, runs when the gradient needs no graph. nll_loss's
   own backward is written with ops (ct__nll_backward). */
#define CT__LOSS_OP(SYM, NAME, SCHEMA, API, OPT, META, K, COMP, NODE, BW, RECORD)               \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, 0,    \
                                       OPT, NULL, META, K, COMP, NODE, BW, 0u, RECORD, NULL};
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

ct_tensor *ct_nll_loss(const ct_tensor *x, const ct_tensor *target, const ct_nll_loss_opts *opts)
{
    const char *fn = "ct_nll_loss";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    if (!ct__check_reduction(fn, o.reduction)) {
        return NULL;
    }
    return ct__call_nll(&ct__op_nll_loss, fn, x, target, &o);
}

ct_tensor *ct_cross_entropy(const ct_tensor *x, const ct_tensor *target,
                            const ct_nll_loss_opts *opts)
{
    const char *fn = "ct_cross_entropy";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    if (ct__null(fn, x) || ct__null(fn, target) || !ct__check_reduction(fn, o.reduction)) {
        return NULL;
    }
    if (x->ndim == 2) {
        return ct__call_nll(&ct__op_cross_entropy, fn, x, target, &o);
    }
    ct_scope_begin(); /* not (N, C): log_softmax (over dim 0 of 1-D logits), then nll_loss */
    ct_tensor *r = ct_keep(ct_nll_loss(ct_log_softmax(x, x->ndim == 1 ? 0 : 1), target, opts));
    ct_scope_end();
    return r;
}

ct_tensor *ct_mse_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction)
{
    if (!ct__check_reduction("ct_mse_loss", reduction)) {
        return NULL;
    }
    const ct_tensor *in[2] = {x, target};
    ct_op_call c;
    ct__call_init(&c, &ct__op_mse_loss, "ct_mse_loss", in, 2);
    ct__call_i(&c, reduction);
    return ct__dispatch(&c);
}

CT__VECTORIZE_END
