/* optim/optim.c - the optimizers as fused per-parameter loops, each parameter's update one
 * call of a fused in-place op through the one entry: PyTorch's own where it has one
 * (aten::_fused_sgd_, aten::_fused_adam_, aten::_fused_adamw_, aten::_fused_adagrad_), else
 * ctorch's (ctorch::_fused_rmsprop_, _fused_adadelta_, _fused_adamax_, _fused_nadam_,
 * _fused_radam_), which do in one pass what torch.optim's foreach path does in several.
 *
 * Legend: n = numel of one parameter; P (n) the parameter's data, G (n) its gradient, both
 * contiguous in the parameter's dtype (a copy is made otherwise); S0..S2 (n) its state
 * tensors, named per optimizer in ct__optim_kinds (SGD: B = momentum_buffer; Adam: M =
 * exp_avg, V = exp_avg_sq, VM = max_exp_avg_sq), owned by the optimizer.
 * Each step reads every array once and writes P and the state once, with no temporary
 * tensors; elements are independent, so a large parameter is split across the intra-op
 * threads in contiguous chunks (ct__parallel_for).
 * The arithmetic follows torch.optim's single-tensor path op by op (same operand order,
 * hyperparameters rounded to the parameter's dtype, as PyTorch's scalar arguments are).
 * SGD, Adam and AdamW use no fused multiply-adds; the later optimizers write the ones
 * PyTorch's vectorized CPU kernels make (add with alpha, addcmul, lerp) as explicit fma, so
 * they match PyTorch's AVX2/AVX-512 builds bit for bit. Every optimizer (SGD when it has
 * weight decay or momentum; plain SGD's loop vectorizes by itself) has an AVX-512 / AVX2 path
 * for float32 (Adam for float64 too) doing the scalar loop's IEEE operations lane by lane
 * (sqrt and division are correctly rounded), then the scalar loop finishes the tail: it
 * matches the scalar path bit for bit
 * (tests/test_optim.c, tests/test_optim2.c check it) and results do not depend on the thread
 * count. (The scalar loops alone do not vectorize: libm's sqrt may set errno, and the
 * loop-invariant options are branches.)
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../autograd/autograd.h"
#include "../ops/pointwise.h"
#include "../nn/state_dict.h"
#include "optim.h"
#include "optim_internal.h"

CT__VECTORIZE_BEGIN

#include <stdio.h>

#if !defined(CTORCH_NO_SIMD) && (defined(CT__HAS_AVX512) || defined(CT__HAS_AVX2))
#include <immintrin.h>
#endif

enum {
    CT__OPTIM_SGD = 1,
    CT__OPTIM_ADAM,
    CT__OPTIM_ADAMW,
    CT__OPTIM_RMSPROP,
    CT__OPTIM_ADAGRAD,
    CT__OPTIM_ADADELTA,
    CT__OPTIM_ADAMAX,
    CT__OPTIM_NADAM,
    CT__OPTIM_RADAM
};

/* Per kind: PyTorch's class name and the names of its per-parameter state tensors (state
   slots 0..2, NULL past the last), as torch.optim's state_dict keys them; besides them every
   parameter has its "step" (ct__optim_param.step) and NAdam its "mu_product". */
typedef struct ct__optim_kind {
    const char *name;
    const char *state[3];
} ct__optim_kind;

static const ct__optim_kind ct__optim_kinds[] = {
    {"", {NULL, NULL, NULL}},
    {"SGD", {"momentum_buffer", NULL, NULL}},
    {"Adam", {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}},
    {"AdamW", {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}},
    {"RMSprop", {"square_avg", "momentum_buffer", "grad_avg"}},
    {"Adagrad", {"sum", NULL, NULL}},
    {"Adadelta", {"square_avg", "acc_delta", NULL}},
    {"Adamax", {"exp_avg", "exp_inf", NULL}},
    {"NAdam", {"exp_avg", "exp_avg_sq", NULL}},
    {"RAdam", {"exp_avg", "exp_avg_sq", NULL}},
};

/* The hyperparameters of one parameter group (the union of every optimizer's; PyTorch's
   param_group keys: beta1/beta2 are betas, alpha RMSprop's, rho Adadelta's). initial_lr is
   NAN until an LR scheduler sets it (param_group.setdefault('initial_lr', lr)). */
typedef struct ct__optim_group {
    double lr, momentum, dampening, weight_decay, beta1, beta2, eps;
    double alpha, rho, lr_decay, initial_accumulator_value, momentum_decay, initial_lr;
    bool nesterov, amsgrad, maximize, centered, decoupled;
    int64_t first, count; /* its parameters: params[first, first + count) */
} ct__optim_group;

typedef struct ct__optim_param {
    ct_tensor *p;     /* retained */
    int64_t step;     /* updates so far (state['step']) */
    double mu_product; /* NAdam's state['mu_product'], a float32 scalar as PyTorch's */
    bool has_state;   /* updated once (SGD: the momentum buffer holds a value) */
    ct_tensor *state[3]; /* slots named in ct__optim_kinds (contiguous, the parameter's shape
                            and dtype; NULL when unused) */
} ct__optim_param;

struct ct_optimizer {
    int kind;
    ct__optim_group defaults; /* the constructor's options, for add_param_group(NULL) */
    ct__optim_group *groups;
    int64_t n_groups;
    ct__optim_param *params;
    int64_t n_params;
    int64_t steps;
};

CT__GLUE_BEGIN
/* ---- defaults and validation --------------------------------------------------------- */
ct_sgd_opts ct_sgd_defaults(void)
{
    ct_sgd_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1e-3;
    o.momentum = 0.0;
    o.dampening = 0.0;
    o.weight_decay = 0.0;
    o.nesterov = false;
    o.maximize = false;
    return o;
}

ct_adam_opts ct_adam_defaults(void)
{
    ct_adam_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1e-3;
    o.betas[0] = 0.9;
    o.betas[1] = 0.999;
    o.eps = 1e-8;
    o.weight_decay = 0.0;
    o.amsgrad = false;
    o.maximize = false;
    return o;
}

ct_adam_opts ct_adamw_defaults(void)
{
    ct_adam_opts o = ct_adam_defaults();
    o.weight_decay = 1e-2;
    return o;
}

const char *ct__optim_repr(double v, char *buf, size_t n)
{
    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, n, v < 0 ? "-inf" : "inf");
        return buf;
    }
    char sci[40];
    for (int prec = 0; prec < 17; prec++) { /* the shortest digits that round-trip */
        snprintf(sci, sizeof sci, "%.*e", prec, v);
        if (strtod(sci, NULL) == v) {
            break;
        }
    }
    char digits[24];
    int nd = 0;
    const char *s = sci;
    bool neg = *s == '-';
    s += neg;
    for (; *s && *s != 'e'; s++) {
        if (*s >= '0' && *s <= '9' && nd < 23) {
            digits[nd++] = *s;
        }
    }
    digits[nd] = '\0';
    int exp = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') { /* %.*e may keep trailing zeros */
        digits[--nd] = '\0';
    }
    char out[64];
    int k = 0;
    if (neg) {
        out[k++] = '-';
    }
    if (exp < -4 || exp >= 16) { /* 1e-05, 1.5e+16 */
        out[k++] = digits[0];
        if (nd > 1) {
            out[k++] = '.';
            for (int i = 1; i < nd; i++) {
                out[k++] = digits[i];
            }
        }
        k += snprintf(out + k, sizeof out - (size_t)k, "e%c%02d", exp < 0 ? '-' : '+',
                      exp < 0 ? -exp : exp);
    } else if (exp < 0) { /* 0.001 */
        out[k++] = '0';
        out[k++] = '.';
        for (int i = 0; i < -exp - 1; i++) {
            out[k++] = '0';
        }
        for (int i = 0; i < nd; i++) {
            out[k++] = digits[i];
        }
    } else { /* 100.0, 2.5 */
        for (int i = 0; i <= exp; i++) {
            out[k++] = i < nd ? digits[i] : '0';
        }
        out[k++] = '.';
        if (nd > exp + 1) {
            for (int i = exp + 1; i < nd; i++) {
                out[k++] = digits[i];
            }
        } else {
            out[k++] = '0';
        }
    }
    out[k] = '\0';
    snprintf(buf, n, "%s", out);
    return buf;
}

/* Fails with CT_ERR_VALUE "<what>: <repr(v)>". */
static bool ct__optim_bad(const char *op, const char *what, double v)
{
    char num[64];
    ct__fail(CT_ERR_VALUE, op, "%s: %s", what, ct__optim_repr(v, num, sizeof num));
    return false;
}

static bool ct__optim_sgd_group(const char *op, const ct_sgd_opts *o, ct__optim_group *g)
{
    /* PyTorch compares with `x < 0.0`, so NaN passes as it does there */
    if (o->lr < 0.0) {
        return ct__optim_bad(op, "Invalid learning rate", o->lr);
    }
    if (o->momentum < 0.0) {
        return ct__optim_bad(op, "Invalid momentum value", o->momentum);
    }
    if (o->weight_decay < 0.0) {
        return ct__optim_bad(op, "Invalid weight_decay value", o->weight_decay);
    }
    if (o->nesterov && (o->momentum <= 0 || o->dampening != 0)) {
        ct__fail(CT_ERR_VALUE, op, "Nesterov momentum requires a momentum and zero dampening");
        return false;
    }
    memset(g, 0, sizeof *g);
    g->lr = o->lr;
    g->momentum = o->momentum;
    g->dampening = o->dampening;
    g->weight_decay = o->weight_decay;
    g->nesterov = o->nesterov;
    g->maximize = o->maximize;
    return true;
}

static bool ct__optim_adam_group(const char *op, const ct_adam_opts *o, ct__optim_group *g)
{
    /* PyTorch writes `not 0.0 <= x`, which also rejects NaN */
    if (!(0.0 <= o->lr)) {
        return ct__optim_bad(op, "Invalid learning rate", o->lr);
    }
    if (!(0.0 <= o->eps)) {
        return ct__optim_bad(op, "Invalid epsilon value", o->eps);
    }
    if (!(0.0 <= o->betas[0] && o->betas[0] < 1.0)) {
        return ct__optim_bad(op, "Invalid beta parameter at index 0", o->betas[0]);
    }
    if (!(0.0 <= o->betas[1] && o->betas[1] < 1.0)) {
        return ct__optim_bad(op, "Invalid beta parameter at index 1", o->betas[1]);
    }
    if (!(0.0 <= o->weight_decay)) {
        return ct__optim_bad(op, "Invalid weight_decay value", o->weight_decay);
    }
    memset(g, 0, sizeof *g);
    g->lr = o->lr;
    g->beta1 = o->betas[0];
    g->beta2 = o->betas[1];
    g->eps = o->eps;
    g->weight_decay = o->weight_decay;
    g->amsgrad = o->amsgrad;
    g->maximize = o->maximize;
    return true;
}

ct_rmsprop_opts ct_rmsprop_defaults(void)
{
    ct_rmsprop_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1e-2;
    o.alpha = 0.99;
    o.eps = 1e-8;
    return o;
}

ct_adagrad_opts ct_adagrad_defaults(void)
{
    ct_adagrad_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1e-2;
    o.eps = 1e-10;
    return o;
}

ct_adadelta_opts ct_adadelta_defaults(void)
{
    ct_adadelta_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1.0;
    o.rho = 0.9;
    o.eps = 1e-6;
    return o;
}

ct_adamax_opts ct_adamax_defaults(void)
{
    ct_adamax_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 2e-3;
    o.betas[0] = 0.9;
    o.betas[1] = 0.999;
    o.eps = 1e-8;
    return o;
}

ct_nadam_opts ct_nadam_defaults(void)
{
    ct_nadam_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 2e-3;
    o.betas[0] = 0.9;
    o.betas[1] = 0.999;
    o.eps = 1e-8;
    o.momentum_decay = 4e-3;
    return o;
}

ct_radam_opts ct_radam_defaults(void)
{
    ct_radam_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1e-3;
    o.betas[0] = 0.9;
    o.betas[1] = 0.999;
    o.eps = 1e-8;
    return o;
}

/* PyTorch's `if not 0.0 <= v: raise ValueError(f"{what}: {v}")` (NaN fails too). */
static bool ct__optim_nonneg(const char *op, const char *what, double v)
{
    return 0.0 <= v || ct__optim_bad(op, what, v);
}

/* The checks of lr, eps, betas and weight_decay shared by the Adam family, in PyTorch's
   order; fills g's common fields. */
static bool ct__optim_betas_group(const char *op, double lr, const double *betas, double eps,
                                  double wd, bool maximize, ct__optim_group *g)
{
    ct_adam_opts o = ct_adam_defaults();
    o.lr = lr;
    o.betas[0] = betas[0];
    o.betas[1] = betas[1];
    o.eps = eps;
    o.weight_decay = wd;
    o.maximize = maximize;
    return ct__optim_adam_group(op, &o, g);
}

static bool ct__optim_rmsprop_group(const char *op, const ct_rmsprop_opts *o,
                                    ct__optim_group *g)
{
    if (!ct__optim_nonneg(op, "Invalid learning rate", o->lr) ||
        !ct__optim_nonneg(op, "Invalid epsilon value", o->eps) ||
        !ct__optim_nonneg(op, "Invalid momentum value", o->momentum) ||
        !ct__optim_nonneg(op, "Invalid weight_decay value", o->weight_decay) ||
        !ct__optim_nonneg(op, "Invalid alpha value", o->alpha)) {
        return false;
    }
    memset(g, 0, sizeof *g);
    g->lr = o->lr;
    g->alpha = o->alpha;
    g->eps = o->eps;
    g->weight_decay = o->weight_decay;
    g->momentum = o->momentum;
    g->centered = o->centered;
    g->maximize = o->maximize;
    return true;
}

static bool ct__optim_adagrad_group(const char *op, const ct_adagrad_opts *o,
                                    ct__optim_group *g)
{
    if (!ct__optim_nonneg(op, "Invalid learning rate", o->lr) ||
        !ct__optim_nonneg(op, "Invalid lr_decay value", o->lr_decay) ||
        !ct__optim_nonneg(op, "Invalid weight_decay value", o->weight_decay) ||
        !ct__optim_nonneg(op, "Invalid initial_accumulator_value value",
                          o->initial_accumulator_value) ||
        !ct__optim_nonneg(op, "Invalid epsilon value", o->eps)) {
        return false;
    }
    memset(g, 0, sizeof *g);
    g->lr = o->lr;
    g->lr_decay = o->lr_decay;
    g->weight_decay = o->weight_decay;
    g->initial_accumulator_value = o->initial_accumulator_value;
    g->eps = o->eps;
    g->maximize = o->maximize;
    return true;
}

static bool ct__optim_adadelta_group(const char *op, const ct_adadelta_opts *o,
                                     ct__optim_group *g)
{
    if (!ct__optim_nonneg(op, "Invalid learning rate", o->lr)) {
        return false;
    }
    if (!(0.0 <= o->rho && o->rho <= 1.0)) {
        return ct__optim_bad(op, "Invalid rho value", o->rho);
    }
    if (!ct__optim_nonneg(op, "Invalid epsilon value", o->eps) ||
        !ct__optim_nonneg(op, "Invalid weight_decay value", o->weight_decay)) {
        return false;
    }
    memset(g, 0, sizeof *g);
    g->lr = o->lr;
    g->rho = o->rho;
    g->eps = o->eps;
    g->weight_decay = o->weight_decay;
    g->maximize = o->maximize;
    return true;
}

static bool ct__optim_nadam_group(const char *op, const ct_nadam_opts *o, ct__optim_group *g)
{
    if (!ct__optim_betas_group(op, o->lr, o->betas, o->eps, o->weight_decay, o->maximize, g) ||
        !ct__optim_nonneg(op, "Invalid momentum_decay value", o->momentum_decay)) {
        return false;
    }
    g->momentum_decay = o->momentum_decay;
    g->decoupled = o->decoupled_weight_decay;
    return true;
}

/* The group of an optimizer of `kind` from its options type (NULL: its defaults). */
static bool ct__optim_group_from(const char *op, int kind, const void *opts, ct__optim_group *g)
{
    bool ok = false;
    switch (kind) {
    case CT__OPTIM_SGD: {
        ct_sgd_opts o = opts ? *(const ct_sgd_opts *)opts : ct_sgd_defaults();
        ok = ct__optim_sgd_group(op, &o, g);
        break;
    }
    case CT__OPTIM_ADAM:
    case CT__OPTIM_ADAMW: {
        ct_adam_opts o = opts ? *(const ct_adam_opts *)opts
                              : kind == CT__OPTIM_ADAM ? ct_adam_defaults() : ct_adamw_defaults();
        ok = ct__optim_adam_group(op, &o, g);
        break;
    }
    case CT__OPTIM_RMSPROP: {
        ct_rmsprop_opts o = opts ? *(const ct_rmsprop_opts *)opts : ct_rmsprop_defaults();
        ok = ct__optim_rmsprop_group(op, &o, g);
        break;
    }
    case CT__OPTIM_ADAGRAD: {
        ct_adagrad_opts o = opts ? *(const ct_adagrad_opts *)opts : ct_adagrad_defaults();
        ok = ct__optim_adagrad_group(op, &o, g);
        break;
    }
    case CT__OPTIM_ADADELTA: {
        ct_adadelta_opts o = opts ? *(const ct_adadelta_opts *)opts : ct_adadelta_defaults();
        ok = ct__optim_adadelta_group(op, &o, g);
        break;
    }
    case CT__OPTIM_ADAMAX: {
        ct_adamax_opts o = opts ? *(const ct_adamax_opts *)opts : ct_adamax_defaults();
        ok = ct__optim_betas_group(op, o.lr, o.betas, o.eps, o.weight_decay, o.maximize, g);
        break;
    }
    case CT__OPTIM_NADAM: {
        ct_nadam_opts o = opts ? *(const ct_nadam_opts *)opts : ct_nadam_defaults();
        ok = ct__optim_nadam_group(op, &o, g);
        break;
    }
    default: {
        ct_radam_opts o = opts ? *(const ct_radam_opts *)opts : ct_radam_defaults();
        ok = ct__optim_betas_group(op, o.lr, o.betas, o.eps, o.weight_decay, o.maximize, g);
        g->decoupled = o.decoupled_weight_decay;
        break;
    }
    }
    g->initial_lr = NAN;
    return ok;
}

/* ---- construction --------------------------------------------------------------------- */
static bool ct__optim_check_param(const char *op, const ct_optimizer *opt,
                                  ct_tensor *const *params, int64_t i)
{
    const ct_tensor *p = params[i];
    if (ct__null(op, p)) {
        return false;
    }
    if (!ct_is_leaf(p)) {
        ct__fail(CT_ERR_VALUE, op, "can't optimize a non-leaf Tensor");
        return false;
    }
    if (!ct_requires_grad(p)) {
        ct__fail(CT_ERR_VALUE, op, "optimizer can only optimize Tensors that require grad "
                 "(parameter %lld does not)", (long long)i);
        return false;
    }
    if (!ct_dtype_is_floating_point(p->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "optimizer can only optimize floating point Tensors, got %s",
                 ct_dtype_name(p->dtype));
        return false;
    }
    if (!ct__check_cpu(op, p)) {
        return false;
    }
    for (int64_t j = 0; j < i; j++) {
        if (params[j] == p) {
            ct__fail(CT_ERR_VALUE, op, "optimizer contains a parameter group with duplicate "
                     "parameters (parameters %lld and %lld)", (long long)j, (long long)i);
            return false;
        }
    }
    for (int64_t j = 0; opt && j < opt->n_params; j++) {
        if (opt->params[j].p == p) {
            ct__fail(CT_ERR_VALUE, op, "some parameters appear in more than one parameter "
                     "group");
            return false;
        }
    }
    return true;
}

/* Appends a group of n parameters with hyperparameters g (its range is filled in here). */
static ct_status ct__optim_append(const char *op, ct_optimizer *opt, ct_tensor *const *params,
                                  int64_t n, const ct__optim_group *g)
{
    if (ct__null(op, params)) {
        return ct_error_code();
    }
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, op, "optimizer got an empty parameter list");
    }
    for (int64_t i = 0; i < n; i++) {
        if (!ct__optim_check_param(op, opt, params, i)) {
            return ct_error_code();
        }
    }
    ct__optim_group *groups = (ct__optim_group *)ct__malloc(
        sizeof(ct__optim_group) * (size_t)(opt->n_groups + 1));
    ct__optim_param *ps = (ct__optim_param *)ct__malloc(
        sizeof(ct__optim_param) * (size_t)(opt->n_params + n));
    if (!groups || !ps) {
        ct__free(groups);
        ct__free(ps);
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    if (opt->n_groups) {
        memcpy(groups, opt->groups, sizeof(ct__optim_group) * (size_t)opt->n_groups);
    }
    if (opt->n_params) {
        memcpy(ps, opt->params, sizeof(ct__optim_param) * (size_t)opt->n_params);
    }
    groups[opt->n_groups] = *g;
    groups[opt->n_groups].first = opt->n_params;
    groups[opt->n_groups].count = n;
    for (int64_t i = 0; i < n; i++) {
        ct__optim_param *q = &ps[opt->n_params + i];
        memset(q, 0, sizeof *q);
        q->p = ct_retain(params[i]);
        q->mu_product = 1.0;
    }
    ct__free(opt->groups);
    ct__free(opt->params);
    opt->groups = groups;
    opt->params = ps;
    opt->n_groups++;
    opt->n_params += n;
    return CT_OK;
}

static ct_optimizer *ct__optim_new(const char *op, int kind, ct_tensor *const *params,
                                   int64_t n, const ct__optim_group *g)
{
    ct_optimizer *opt = (ct_optimizer *)ct__calloc(sizeof(ct_optimizer));
    if (!opt) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    opt->kind = kind;
    opt->defaults = *g;
    if (ct__optim_append(op, opt, params, n, g) != CT_OK) {
        ct_optimizer_free(opt);
        return NULL;
    }
    return opt;
}

/* The optimizer of `kind` built by op from its options type (NULL: the defaults). */
static ct_optimizer *ct__optim_create(const char *op, int kind, ct_tensor *const *params,
                                      int64_t n, const void *opts)
{
    ct__optim_group g;
    if (!ct__optim_group_from(op, kind, opts, &g)) {
        return NULL;
    }
    return ct__optim_new(op, kind, params, n, &g);
}

#define CT__OPTIM_NEW(NAME, OPTS, KIND)                                                        \
    ct_optimizer *ct_##NAME##_new(ct_tensor *const *params, int64_t n, const OPTS *opts)       \
    {                                                                                          \
        return ct__optim_create("ct_" #NAME "_new", KIND, params, n, opts);                    \
    }
CT__OPTIM_NEW(sgd, ct_sgd_opts, CT__OPTIM_SGD)
CT__OPTIM_NEW(adam, ct_adam_opts, CT__OPTIM_ADAM)
CT__OPTIM_NEW(adamw, ct_adam_opts, CT__OPTIM_ADAMW)
CT__OPTIM_NEW(rmsprop, ct_rmsprop_opts, CT__OPTIM_RMSPROP)
CT__OPTIM_NEW(adagrad, ct_adagrad_opts, CT__OPTIM_ADAGRAD)
CT__OPTIM_NEW(adadelta, ct_adadelta_opts, CT__OPTIM_ADADELTA)
CT__OPTIM_NEW(adamax, ct_adamax_opts, CT__OPTIM_ADAMAX)
CT__OPTIM_NEW(nadam, ct_nadam_opts, CT__OPTIM_NADAM)
CT__OPTIM_NEW(radam, ct_radam_opts, CT__OPTIM_RADAM)
#undef CT__OPTIM_NEW

ct_status ct_optimizer_add_param_group(ct_optimizer *opt, ct_tensor *const *params, int64_t n,
                                       const void *opts)
{
    const char *op = "ct_optimizer_add_param_group";
    if (ct__null(op, opt)) {
        return ct_error_code();
    }
    ct__optim_group g = opt->defaults;
    if (opts && !ct__optim_group_from(op, opt->kind, opts, &g)) {
        return ct_error_code();
    }
    return ct__optim_append(op, opt, params, n, &g);
}

void ct_optimizer_free(ct_optimizer *opt)
{
    if (!opt) {
        return;
    }
    for (int64_t i = 0; i < opt->n_params; i++) {
        for (int k = 0; k < 3; k++) {
            ct__release(opt->params[i].state[k]);
        }
        ct__release(opt->params[i].p);
    }
    ct__free(opt->params);
    ct__free(opt->groups);
    ct__free(opt);
}

/* ---- attributes ------------------------------------------------------------------------ */
int64_t ct_optimizer_num_param_groups(const ct_optimizer *opt)
{
    return ct__null("ct_optimizer_num_param_groups", opt) ? 0 : opt->n_groups;
}

static bool ct__optim_group_ok(const char *op, const ct_optimizer *opt, int64_t group)
{
    if (ct__null(op, opt)) {
        return false;
    }
    if (group < 0 || group >= opt->n_groups) {
        ct__fail(CT_ERR_INDEX, op, "param group %lld out of range (the optimizer has %lld)",
                 (long long)group, (long long)opt->n_groups);
        return false;
    }
    return true;
}

int64_t ct_optimizer_params(const ct_optimizer *opt, int64_t group, ct_tensor **params,
                            int64_t cap)
{
    if (!ct__optim_group_ok("ct_optimizer_params", opt, group)) {
        return -1;
    }
    const ct__optim_group *g = &opt->groups[group];
    for (int64_t i = 0; params && i < g->count && i < cap; i++) {
        params[i] = opt->params[g->first + i].p;
    }
    return g->count;
}

double ct_optimizer_get_lr(const ct_optimizer *opt, int64_t group)
{
    if (!ct__optim_group_ok("ct_optimizer_get_lr", opt, group)) {
        return NAN;
    }
    return opt->groups[group].lr;
}

ct_status ct_optimizer_set_lr(ct_optimizer *opt, int64_t group, double lr)
{
    const char *op = "ct_optimizer_set_lr";
    if (group != -1 && !ct__optim_group_ok(op, opt, group)) {
        return ct_error_code();
    }
    if (ct__null(op, opt)) {
        return ct_error_code();
    }
    if (!(lr >= 0.0)) {
        ct__optim_bad(op, "Invalid learning rate", lr);
        return ct_error_code();
    }
    for (int64_t i = 0; i < opt->n_groups; i++) {
        if (group == -1 || group == i) {
            opt->groups[i].lr = lr;
        }
    }
    return CT_OK;
}

double ct__optim_initial_lr(ct_optimizer *opt, int64_t group)
{
    ct__optim_group *g = &opt->groups[group];
    if (isnan(g->initial_lr)) {
        g->initial_lr = g->lr;
    }
    return g->initial_lr;
}

void ct__optim_put_lr(ct_optimizer *opt, int64_t group, double lr)
{
    opt->groups[group].lr = lr;
}

void ct__optim_set_initial_lr(ct_optimizer *opt, int64_t group, double lr)
{
    opt->groups[group].initial_lr = lr;
}

int ct__optim_momentum_kind(const ct_optimizer *opt)
{
    switch (opt->kind) {
    case CT__OPTIM_SGD:
    case CT__OPTIM_RMSPROP:
        return 1;
    case CT__OPTIM_ADAGRAD:
    case CT__OPTIM_ADADELTA:
        return 0;
    default:
        return 2;
    }
}

void ct__optim_set_momentum(ct_optimizer *opt, int64_t group, double momentum)
{
    ct__optim_group *g = &opt->groups[group];
    if (ct__optim_momentum_kind(opt) == 1) {
        g->momentum = momentum;
    } else {
        g->beta1 = momentum;
    }
}

double ct_optimizer_get_momentum(const ct_optimizer *opt, int64_t group)
{
    const char *op = "ct_optimizer_get_momentum";
    if (!ct__optim_group_ok(op, opt, group)) {
        return NAN;
    }
    const ct__optim_group *g = &opt->groups[group];
    switch (ct__optim_momentum_kind(opt)) {
    case 1:
        return g->momentum;
    case 2:
        return g->beta1;
    default:
        ct__fail(CT_ERR_VALUE, op, "%s has neither momentum nor betas",
                 ct__optim_kinds[opt->kind].name);
        return NAN;
    }
}

int64_t ct_optimizer_step_count(const ct_optimizer *opt)
{
    return ct__null("ct_optimizer_step_count", opt) ? 0 : opt->steps;
}

const char *ct_optimizer_name(const ct_optimizer *opt)
{
    if (ct__null("ct_optimizer_name", opt)) {
        return NULL;
    }
    return ct__optim_kinds[opt->kind].name;
}

void ct_optimizer_zero_grad(ct_optimizer *opt, bool set_to_none)
{
    if (ct__null("ct_optimizer_zero_grad", opt)) {
        return;
    }
    ct__profiler_range_begin(false, "Optimizer.zero_grad#%s.zero_grad", ct_optimizer_name(opt));
    for (int64_t i = 0; i < opt->n_params; i++) {
        ct_tensor *p = opt->params[i].p;
        ct_tensor *g = p->grad;
        if (!g) {
            continue;
        }
        if (set_to_none) {
            ct_set_grad(p, NULL);
            continue;
        }
        ct_detach_(g); /* PyTorch: grad.detach_() or grad.requires_grad_(False) */
        ct_no_grad_begin();
        ct_zero_(g);
        ct_no_grad_end();
    }
    ct__profiler_range_end();
}

/* ---- scalars ------------------------------------------------------------------------------
 * torch.optim's Python arithmetic on hyperparameters, product by product: x*y is rounded by
 * itself (an fma with a zero addend) where it feeds an addition, so no -ffp-contract setting
 * fuses it. */
static double ct__optim_mul(double x, double y)
{
    return fma(x, y, 0.0);
}

/* The decoupled weight decay factor 1 - lr*wd (AdamW, NAdam, RAdam). */
static double ct__optim_decay(double lr, double wd)
{
    return 1.0 - ct__optim_mul(lr, wd);
}

/* Adagrad's clr = lr / (1 + (t - 1)*lr_decay) at step t. */
static double ct__optim_adagrad_clr(double lr, double lr_decay, double t)
{
    return lr / (1.0 + ct__optim_mul(t - 1.0, lr_decay));
}
CT__GLUE_END

/* ---- vector types: AVX-512 or AVX2, float32 and float64 (CT__OPTIM_VEC when one is on) -- */
#if !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX512)
#define CT__OPTIM_VEC 1
typedef __m512 ct__optim_vf32;
typedef __m512d ct__optim_vf64;
#define CT__OPTIM_N_f32 16
#define CT__OPTIM_N_f64 8
#define CT__OPTIM_LD_f32 _mm512_loadu_ps
#define CT__OPTIM_LD_f64 _mm512_loadu_pd
#define CT__OPTIM_ST_f32 _mm512_storeu_ps
#define CT__OPTIM_ST_f64 _mm512_storeu_pd
#define CT__OPTIM_SET_f32 _mm512_set1_ps
#define CT__OPTIM_SET_f64 _mm512_set1_pd
#define CT__OPTIM_ADD_f32 _mm512_add_ps
#define CT__OPTIM_ADD_f64 _mm512_add_pd
#define CT__OPTIM_SUB_f32 _mm512_sub_ps
#define CT__OPTIM_SUB_f64 _mm512_sub_pd
/* products rounded by themselves (fma with a zero addend), so no -ffp-contract setting fuses
   them into the additions that follow, as in the scalar loop */
#define CT__OPTIM_MUL_f32(a, b) _mm512_fmadd_ps((a), (b), _mm512_setzero_ps())
#define CT__OPTIM_MUL_f64(a, b) _mm512_fmadd_pd((a), (b), _mm512_setzero_pd())
#define CT__OPTIM_DIV_f32 _mm512_div_ps
#define CT__OPTIM_DIV_f64 _mm512_div_pd
#define CT__OPTIM_MULP_f32 _mm512_mul_ps /* a plain product: x*y in the scalar loops */
#define CT__OPTIM_FMA_f32 _mm512_fmadd_ps
#define CT__OPTIM_FNMA_f32 _mm512_fnmadd_ps /* fma(-a, b, c) */
#define CT__OPTIM_ABS_f32 _mm512_abs_ps
/* zero-masking sqrt: _mm512_sqrt_* trips g++ 12's -Wmaybe-uninitialized (see below) */
#define CT__OPTIM_SQRT_f32(x) _mm512_maskz_sqrt_ps((__mmask16)0xFFFF, (x))
#define CT__OPTIM_SQRT_f64(x) _mm512_maskz_sqrt_pd((__mmask8)0xFF, (x))
/* maximum(a, b) with NaN propagation: (a > b || a is NaN) ? a : b. (No _mm512_max_*: in C++
   g++ 12 warns about its _mm512_undefined passthrough under -Wmaybe-uninitialized.) */
static inline __m512 ct__optim_max_f32(__m512 a, __m512 b)
{
    __mmask16 k = _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(k, b, a);
}
static inline __m512d ct__optim_max_f64(__m512d a, __m512d b)
{
    __mmask8 k = _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ) | _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q);
    return _mm512_mask_blend_pd(k, b, a);
}
#elif !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX2)
#define CT__OPTIM_VEC 1
typedef __m256 ct__optim_vf32;
typedef __m256d ct__optim_vf64;
#define CT__OPTIM_N_f32 8
#define CT__OPTIM_N_f64 4
#define CT__OPTIM_LD_f32 _mm256_loadu_ps
#define CT__OPTIM_LD_f64 _mm256_loadu_pd
#define CT__OPTIM_ST_f32 _mm256_storeu_ps
#define CT__OPTIM_ST_f64 _mm256_storeu_pd
#define CT__OPTIM_SET_f32 _mm256_set1_ps
#define CT__OPTIM_SET_f64 _mm256_set1_pd
#define CT__OPTIM_ADD_f32 _mm256_add_ps
#define CT__OPTIM_ADD_f64 _mm256_add_pd
#define CT__OPTIM_SUB_f32 _mm256_sub_ps
#define CT__OPTIM_SUB_f64 _mm256_sub_pd
#define CT__OPTIM_MUL_f32(a, b) _mm256_fmadd_ps((a), (b), _mm256_setzero_ps())
#define CT__OPTIM_MUL_f64(a, b) _mm256_fmadd_pd((a), (b), _mm256_setzero_pd())
#define CT__OPTIM_DIV_f32 _mm256_div_ps
#define CT__OPTIM_DIV_f64 _mm256_div_pd
#define CT__OPTIM_MULP_f32 _mm256_mul_ps
#define CT__OPTIM_FMA_f32 _mm256_fmadd_ps
#define CT__OPTIM_FNMA_f32 _mm256_fnmadd_ps
#define CT__OPTIM_ABS_f32(x) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (x))
#define CT__OPTIM_SQRT_f32 _mm256_sqrt_ps
#define CT__OPTIM_SQRT_f64 _mm256_sqrt_pd
/* maximum(a, b) with NaN propagation: max_ps(a, b) gives b when either is NaN. */
static inline __m256 ct__optim_max_f32(__m256 a, __m256 b)
{
    return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
static inline __m256d ct__optim_max_f64(__m256d a, __m256d b)
{
    return _mm256_blendv_pd(_mm256_max_pd(a, b), a, _mm256_cmp_pd(a, a, _CMP_UNORD_Q));
}
#endif


/* ---- kernels ----------------------------------------------------------------------------
 * SGD, per element i of [begin, end) (P, G, B as in the legend):
 *   g = sign*G[i]; if wd: g = g + wd*P[i];
 *   if momentum: b = first ? g : B[i]*momentum + (1-dampening)*g; B[i] = b;
 *                g = nesterov ? g + momentum*b : b;
 *   P[i] = P[i] + (-lr)*g                                                           */

/* x*y rounded by itself (an fma with a zero addend): a product that feeds an addition is
   never fused with it, whatever -ffp-contract says (PyTorch's kernels round it too). */
static inline float ct__optim_mul_f32(float x, float y) { return fmaf(x, y, 0.0f); }
static inline double ct__optim_mul_f64(double x, double y) { return fma(x, y, 0.0); }
typedef struct ct__optim_sgd_ctx {
    char *p, *buf;
    const char *g;
    double sign, wd, momentum, damp1, nlr;
    bool use_wd, use_momentum, first, nesterov;
} ct__optim_sgd_ctx;

#ifdef CT__OPTIM_VEC
/* SGD with weight decay or momentum: the scalar loop's operations, CT__OPTIM_N_<S> lanes at a
   time; returns where the scalar loop goes on. float32 only, as the loops below (float64
   keeps the scalar loops: compile time). */
#define CT__OPTIM_SGD_VEC(T, S)                                                            \
    static int64_t ct__optim_sgd_vec_##S(const ct__optim_sgd_ctx *c, int64_t i, int64_t end) \
    {                                                                                      \
        T *P = (T *)(void *)c->p, *B = (T *)(void *)c->buf;                                \
        const T *G = (const T *)(const void *)c->g;                                        \
        const ct__optim_v##S sign = CT__OPTIM_SET_##S((T)c->sign);                         \
        const ct__optim_v##S wd = CT__OPTIM_SET_##S((T)c->wd);                             \
        const ct__optim_v##S mom = CT__OPTIM_SET_##S((T)c->momentum);                      \
        const ct__optim_v##S damp1 = CT__OPTIM_SET_##S((T)c->damp1);                       \
        const ct__optim_v##S nlr = CT__OPTIM_SET_##S((T)c->nlr);                           \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            ct__optim_v##S p = CT__OPTIM_LD_##S(P + i);                                    \
            ct__optim_v##S g = CT__OPTIM_MULP_##S(sign, CT__OPTIM_LD_##S(G + i));          \
            if (c->use_wd) {                                                               \
                g = CT__OPTIM_ADD_##S(g, CT__OPTIM_MUL_##S(wd, p));                        \
            }                                                                              \
            if (c->use_momentum) {                                                         \
                ct__optim_v##S b = g;                                                      \
                if (!c->first) {                                                           \
                    b = CT__OPTIM_MUL_##S(CT__OPTIM_LD_##S(B + i), mom);                   \
                    b = CT__OPTIM_ADD_##S(b, CT__OPTIM_MUL_##S(damp1, g));                 \
                }                                                                          \
                CT__OPTIM_ST_##S(B + i, b);                                                \
                g = c->nesterov ? CT__OPTIM_ADD_##S(g, CT__OPTIM_MUL_##S(mom, b)) : b;     \
            }                                                                              \
            CT__OPTIM_ST_##S(P + i, CT__OPTIM_ADD_##S(p, CT__OPTIM_MUL_##S(nlr, g)));      \
        }                                                                                  \
        return i;                                                                          \
    }
CT__OPTIM_SGD_VEC(float, f32)
#undef CT__OPTIM_SGD_VEC
#define CT__OPTIM_SGD_VCALL_f32 begin = ct__optim_sgd_vec_f32(c, begin, end);
#define CT__OPTIM_SGD_VCALL_f64
#define CT__OPTIM_SGD_VCALL(S) CT__OPTIM_SGD_VCALL_##S
#else
#define CT__OPTIM_SGD_VCALL(S)
#endif

#define CT__OPTIM_SGD_KERNEL(T, S)                                                         \
    static void ct__optim_sgd_##S(int64_t begin, int64_t end, void *vctx)                  \
    {                                                                                      \
        const ct__optim_sgd_ctx *c = (const ct__optim_sgd_ctx *)vctx;                      \
        T *P = (T *)(void *)c->p, *B = (T *)(void *)c->buf;                                \
        const T *G = (const T *)(const void *)c->g;                                        \
        const T sign = (T)c->sign, wd = (T)c->wd, mom = (T)c->momentum;                    \
        const T damp1 = (T)c->damp1, nlr = (T)c->nlr;                                      \
        const bool use_wd = c->use_wd, use_mom = c->use_momentum, first = c->first;        \
        const bool nesterov = c->nesterov;                                                 \
        if (!use_wd && !use_mom) { /* plain SGD: one flat loop the compiler vectorizes */  \
            for (int64_t i = begin; i < end; i++) {                                        \
                P[i] = P[i] + ct__optim_mul_##S(nlr, sign * G[i]);                         \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        CT__OPTIM_SGD_VCALL(S)                                                             \
        for (int64_t i = begin; i < end; i++) {                                            \
            T g = sign * G[i];                                                             \
            if (use_wd) {                                                                  \
                g = g + ct__optim_mul_##S(wd, P[i]);                                       \
            }                                                                              \
            if (use_mom) {                                                                 \
                T b = first ? g : ct__optim_mul_##S(B[i], mom) + ct__optim_mul_##S(damp1, g); \
                B[i] = b;                                                                  \
                g = nesterov ? g + ct__optim_mul_##S(mom, b) : b;                          \
            }                                                                              \
            P[i] = P[i] + ct__optim_mul_##S(nlr, g);                                       \
        }                                                                                  \
    }
CT__OPTIM_SGD_KERNEL(float, f32)
CT__OPTIM_SGD_KERNEL(double, f64)
#undef CT__OPTIM_SGD_KERNEL
#undef CT__OPTIM_SGD_VCALL
#undef CT__OPTIM_SGD_VCALL_f32
#undef CT__OPTIM_SGD_VCALL_f64

/* Adam / AdamW, per element i (P, G, M, V, VM as in the legend; t = the parameter's step):
 *   p = P[i]*decay                      (AdamW: decay = 1 - lr*wd; Adam: 1, exact)
 *   g = sign*G[i]; if coupled wd: g = g + wd*p
 *   m = M[i] + (1-b1)*(g - M[i])        (Tensor.lerp_ with weight < 0.5)
 *   v = V[i]*b2 + ((1-b2)*g)*g          (mul_ then addcmul_)
 *   if amsgrad: VM[i] = v = maximum(VM[i], v)   (NaN propagates)
 *   P[i] = p + (-lr/(1-b1^t)) * (m / (sqrt(v)/sqrt(1-b2^t) + eps))               */
typedef struct ct__optim_adam_ctx {
    char *p, *m, *v, *vmax;
    const char *g;
    double decay, sign, wd, w1, b2, c2, bc2_sqrt, eps, nstep;
    bool use_wd, amsgrad;
} ct__optim_adam_ctx;

#ifdef CT__OPTIM_VEC
/* The vector loop: the scalar formula above, CT__OPTIM_N_<S> lanes at a time; returns the
   index where the scalar tail starts. */
#define CT__OPTIM_ADAM_VEC(T, S)                                                           \
    static int64_t ct__optim_adam_vec_##S(const ct__optim_adam_ctx *c, int64_t i,        \
                                          int64_t end)                                   \
    {                                                                                      \
        T *P = (T *)(void *)c->p, *M = (T *)(void *)c->m, *V = (T *)(void *)c->v;          \
        T *VM = (T *)(void *)c->vmax;                                                      \
        const T *G = (const T *)(const void *)c->g;                                        \
        const ct__optim_v##S decay = CT__OPTIM_SET_##S((T)c->decay);                       \
        const ct__optim_v##S sign = CT__OPTIM_SET_##S((T)c->sign);                         \
        const ct__optim_v##S wd = CT__OPTIM_SET_##S((T)c->wd);                             \
        const ct__optim_v##S w1 = CT__OPTIM_SET_##S((T)c->w1);                             \
        const ct__optim_v##S b2 = CT__OPTIM_SET_##S((T)c->b2);                             \
        const ct__optim_v##S c2 = CT__OPTIM_SET_##S((T)c->c2);                             \
        const ct__optim_v##S bc2 = CT__OPTIM_SET_##S((T)c->bc2_sqrt);                      \
        const ct__optim_v##S eps = CT__OPTIM_SET_##S((T)c->eps);                           \
        const ct__optim_v##S nstep = CT__OPTIM_SET_##S((T)c->nstep);                       \
        const bool use_wd = c->use_wd, amsgrad = c->amsgrad;                               \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            ct__optim_v##S p = CT__OPTIM_MUL_##S(CT__OPTIM_LD_##S(P + i), decay);          \
            ct__optim_v##S g = CT__OPTIM_MUL_##S(sign, CT__OPTIM_LD_##S(G + i));           \
            if (use_wd) {                                                                  \
                g = CT__OPTIM_ADD_##S(g, CT__OPTIM_MUL_##S(wd, p));                        \
            }                                                                              \
            ct__optim_v##S m = CT__OPTIM_LD_##S(M + i);                                    \
            m = CT__OPTIM_ADD_##S(m, CT__OPTIM_MUL_##S(w1, CT__OPTIM_SUB_##S(g, m)));      \
            ct__optim_v##S v = CT__OPTIM_MUL_##S(CT__OPTIM_LD_##S(V + i), b2);             \
            v = CT__OPTIM_ADD_##S(v, CT__OPTIM_MUL_##S(CT__OPTIM_MUL_##S(c2, g), g));      \
            CT__OPTIM_ST_##S(M + i, m);                                                    \
            CT__OPTIM_ST_##S(V + i, v);                                                    \
            if (amsgrad) {                                                                 \
                v = ct__optim_max_##S(CT__OPTIM_LD_##S(VM + i), v);                        \
                CT__OPTIM_ST_##S(VM + i, v);                                               \
            }                                                                              \
            ct__optim_v##S d = CT__OPTIM_DIV_##S(CT__OPTIM_SQRT_##S(v), bc2);              \
            d = CT__OPTIM_ADD_##S(d, eps);                                                 \
            p = CT__OPTIM_ADD_##S(p, CT__OPTIM_MUL_##S(nstep, CT__OPTIM_DIV_##S(m, d)));   \
            CT__OPTIM_ST_##S(P + i, p);                                                    \
        }                                                                                  \
        return i;                                                                          \
    }
CT__OPTIM_ADAM_VEC(float, f32)
CT__OPTIM_ADAM_VEC(double, f64)
#undef CT__OPTIM_ADAM_VEC
#define CT__OPTIM_ADAM_VEC_CALL(S) begin = ct__optim_adam_vec_##S(c, begin, end);
#else
#define CT__OPTIM_ADAM_VEC_CALL(S)
#endif

#define CT__OPTIM_ADAM_KERNEL(T, S, SQRT)                                                  \
    static void ct__optim_adam_##S(int64_t begin, int64_t end, void *vctx)                 \
    {                                                                                      \
        const ct__optim_adam_ctx *c = (const ct__optim_adam_ctx *)vctx;                    \
        CT__OPTIM_ADAM_VEC_CALL(S)                                                         \
        T *P = (T *)(void *)c->p, *M = (T *)(void *)c->m, *V = (T *)(void *)c->v;          \
        T *VM = (T *)(void *)c->vmax;                                                      \
        const T *G = (const T *)(const void *)c->g;                                        \
        const T decay = (T)c->decay, sign = (T)c->sign, wd = (T)c->wd, w1 = (T)c->w1;      \
        const T b2 = (T)c->b2, c2 = (T)c->c2, bc2 = (T)c->bc2_sqrt, eps = (T)c->eps;       \
        const T nstep = (T)c->nstep;                                                       \
        const bool use_wd = c->use_wd, amsgrad = c->amsgrad;                               \
        for (int64_t i = begin; i < end; i++) {                                            \
            T p = ct__optim_mul_##S(P[i], decay);                                          \
            T g = sign * G[i];                                                             \
            if (use_wd) {                                                                  \
                g = g + ct__optim_mul_##S(wd, p);                                          \
            }                                                                              \
            T m = M[i];                                                                    \
            m = m + ct__optim_mul_##S(w1, g - m);                                          \
            T v = ct__optim_mul_##S(V[i], b2) + ct__optim_mul_##S(c2 * g, g);             \
            M[i] = m;                                                                      \
            V[i] = v;                                                                      \
            if (amsgrad) {                                                                 \
                T mx = VM[i];                                                              \
                v = (mx > v || mx != mx) ? mx : v;                                         \
                VM[i] = v;                                                                 \
            }                                                                              \
            T d = SQRT(v) / bc2 + eps;                                                     \
            P[i] = p + ct__optim_mul_##S(nstep, m / d);                                    \
        }                                                                                  \
    }
CT__OPTIM_ADAM_KERNEL(float, f32, sqrtf)
CT__OPTIM_ADAM_KERNEL(double, f64, sqrt)
#undef CT__OPTIM_ADAM_KERNEL
#undef CT__OPTIM_ADAM_VEC_CALL

/* RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam share one context: P, G, the state
 * arrays S0..S2 (ct__optim_kinds names them), sign = -1 under maximize, wd = the coupled L2
 * coefficient (use_wd: wd != 0), decay = the decoupled factor 1 - lr*wd (1: none; p * 1 is
 * exact) and k[] as each kernel's comment says. Per element i, every kernel starts with
 *   p = P[i]*decay; g = sign*G[i]; if use_wd: g = fma(wd, p, g)      (grad.add(p, alpha=wd))
 * and lerp(x, e, w) is PyTorch's: fma(w, e-x, x) for |w| < 0.5, else fma(w-1, e-x, e). */
typedef struct ct__optim_ctx {
    char *p, *s[3];
    const char *g;
    double sign, wd, decay, k[8];
    bool use_wd, flag;
} ct__optim_ctx;

#ifdef CT__OPTIM_VEC
/* The float32 vector loops of the kernels below (float64 keeps the scalar loops: compile
   time): each kernel's scalar formula, CT__OPTIM_N_<S> lanes at a time, with the same
   operations (x*y: MULP; a product rounded by itself: MUL; fma(a, b, c): FMA; fma(-a, b, c):
   FNMA) and the same selects; each continues from i and returns where the scalar loop goes
   on. Loop-invariant conditions stay branches (predicted, one per
   vector). */
#define CT__OV(S) ct__optim_v##S
#define CT__OPTIM_VBEGIN(T, S)                                                             \
    const ct__optim_ctx *c = (const ct__optim_ctx *)vctx;                                  \
    T *P = (T *)(void *)c->p, *S0 = (T *)(void *)c->s[0], *S1 = (T *)(void *)c->s[1];      \
    T *S2 = (T *)(void *)c->s[2];                                                          \
    const T *G = (const T *)(const void *)c->g;                                            \
    const CT__OV(S) sign = CT__OPTIM_SET_##S((T)c->sign), wd = CT__OPTIM_SET_##S((T)c->wd); \
    const CT__OV(S) decay = CT__OPTIM_SET_##S((T)c->decay);                                \
    (void)S1;                                                                              \
    (void)S2;
/* p = P*decay (rounded alone), g = sign*G, + wd*p in one fma when use_wd */
#define CT__OPTIM_VGRAD(S)                                                                 \
    CT__OV(S) p = CT__OPTIM_MUL_##S(CT__OPTIM_LD_##S(P + i), decay);                       \
    CT__OV(S) g = CT__OPTIM_MULP_##S(sign, CT__OPTIM_LD_##S(G + i));                       \
    if (c->use_wd) {                                                                       \
        g = CT__OPTIM_FMA_##S(wd, p, g);                                                   \
    }
/* NAME = k[K] (as a T) in every lane */
#define CT__OPTIM_VK(T, S, NAME, K) const CT__OV(S) NAME = CT__OPTIM_SET_##S((T)c->k[K]);
/* w1 = k[K] - 1 in every lane and small = |k[K]| < 0.5: lerp's two forms (ct__optim_vlerp) */
#define CT__OPTIM_VLERP_K(T, S, K)                                                         \
    const CT__OV(S) w1 = CT__OPTIM_SET_##S((T)c->k[K] - (T)1);                             \
    bool small = (T)c->k[K] < (T)0.5 && (T)c->k[K] > (T)-0.5;
/* m = lerp(S0[i], g, w), stored back: Adam's first moment */
#define CT__OPTIM_VFIRST_MOMENT(S)                                                         \
    CT__OV(S) m = ct__optim_vlerp_##S(CT__OPTIM_LD_##S(S0 + i), g, w, w1, small);          \
    CT__OPTIM_ST_##S(S0 + i, m);
/* fma(w*g, g, X*b): the decaying average of g^2 (w = 1 - b) */
#define CT__OPTIM_VSQAVG(S, X, b, w, g)                                                    \
    CT__OPTIM_FMA_##S(CT__OPTIM_MULP_##S(w, g), g, CT__OPTIM_MULP_##S(CT__OPTIM_LD_##S(X), b))
#define CT__OPTIM_VKERNELS(T, S)                                                           \
    /* lerp(x, e, w) with w1 = w - 1 (small: |w| < 0.5) */                                 \
    static inline CT__OV(S) ct__optim_vlerp_##S(CT__OV(S) x, CT__OV(S) e, CT__OV(S) w,     \
                                                CT__OV(S) w1, bool small)                  \
    {                                                                                      \
        CT__OV(S) d = CT__OPTIM_SUB_##S(e, x);                                             \
        return small ? CT__OPTIM_FMA_##S(w, d, x) : CT__OPTIM_FMA_##S(w1, d, e);           \
    }                                                                                      \
    static int64_t ct__optim_rmsprop_vec_##S(const void *vctx, int64_t i, int64_t end)     \
    {                                                                                      \
        CT__OPTIM_VBEGIN(T, S)                                                             \
        CT__OPTIM_VK(T, S, alpha, 0) CT__OPTIM_VK(T, S, w, 1) CT__OPTIM_VK(T, S, eps, 2)   \
        CT__OPTIM_VK(T, S, mom, 3) CT__OPTIM_VK(T, S, nlr, 4)                              \
        CT__OPTIM_VLERP_K(T, S, 1)                                                         \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            CT__OPTIM_VGRAD(S)                                                             \
            CT__OV(S) v = CT__OPTIM_VSQAVG(S, S0 + i, alpha, w, g);                        \
            CT__OPTIM_ST_##S(S0 + i, v);                                                   \
            if (c->flag) {                                                                 \
                CT__OV(S) ga = ct__optim_vlerp_##S(CT__OPTIM_LD_##S(S2 + i), g, w, w1, small); \
                CT__OPTIM_ST_##S(S2 + i, ga);                                              \
                v = CT__OPTIM_FNMA_##S(ga, ga, v);                                         \
            }                                                                              \
            CT__OV(S) avg = CT__OPTIM_ADD_##S(CT__OPTIM_SQRT_##S(v), eps);                 \
            if (S1) {                                                                      \
                CT__OV(S) b = CT__OPTIM_MUL_##S(CT__OPTIM_LD_##S(S1 + i), mom);            \
                b = CT__OPTIM_ADD_##S(b, CT__OPTIM_DIV_##S(g, avg));                       \
                CT__OPTIM_ST_##S(S1 + i, b);                                               \
                CT__OPTIM_ST_##S(P + i, CT__OPTIM_FMA_##S(nlr, b, p));                     \
            } else {                                                                       \
                CT__OV(S) u = CT__OPTIM_DIV_##S(CT__OPTIM_MULP_##S(nlr, g), avg);          \
                CT__OPTIM_ST_##S(P + i, CT__OPTIM_ADD_##S(p, u));                          \
            }                                                                              \
        }                                                                                  \
        return i;                                                                          \
    }                                                                                      \
    static int64_t ct__optim_adagrad_vec_##S(const void *vctx, int64_t i, int64_t end)     \
    {                                                                                      \
        CT__OPTIM_VBEGIN(T, S)                                                             \
        CT__OPTIM_VK(T, S, eps, 0) CT__OPTIM_VK(T, S, nclr, 1)                             \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            CT__OPTIM_VGRAD(S)                                                             \
            CT__OV(S) sum = CT__OPTIM_FMA_##S(g, g, CT__OPTIM_LD_##S(S0 + i));             \
            CT__OPTIM_ST_##S(S0 + i, sum);                                                 \
            CT__OV(S) d = CT__OPTIM_ADD_##S(CT__OPTIM_SQRT_##S(sum), eps);                 \
            d = CT__OPTIM_DIV_##S(CT__OPTIM_MULP_##S(nclr, g), d);                         \
            CT__OPTIM_ST_##S(P + i, CT__OPTIM_ADD_##S(p, d));                              \
        }                                                                                  \
        return i;                                                                          \
    }                                                                                      \
    static int64_t ct__optim_adadelta_vec_##S(const void *vctx, int64_t i, int64_t end)    \
    {                                                                                      \
        CT__OPTIM_VBEGIN(T, S)                                                             \
        CT__OPTIM_VK(T, S, rho, 0) CT__OPTIM_VK(T, S, w, 1) CT__OPTIM_VK(T, S, eps, 2)     \
        CT__OPTIM_VK(T, S, nlr, 3)                                                         \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            CT__OPTIM_VGRAD(S)                                                             \
            CT__OV(S) v = CT__OPTIM_VSQAVG(S, S0 + i, rho, w, g);                          \
            CT__OPTIM_ST_##S(S0 + i, v);                                                   \
            CT__OV(S) a = CT__OPTIM_LD_##S(S1 + i);                                        \
            CT__OV(S) d = CT__OPTIM_DIV_##S(CT__OPTIM_SQRT_##S(CT__OPTIM_ADD_##S(a, eps)), \
                                            CT__OPTIM_SQRT_##S(CT__OPTIM_ADD_##S(v, eps))); \
            d = CT__OPTIM_MULP_##S(d, g);                                                  \
            CT__OPTIM_ST_##S(S1 + i, CT__OPTIM_VSQAVG(S, S1 + i, rho, w, d));              \
            CT__OPTIM_ST_##S(P + i, CT__OPTIM_FMA_##S(nlr, d, p));                         \
        }                                                                                  \
        return i;                                                                          \
    }                                                                                      \
    static int64_t ct__optim_adamax_vec_##S(const void *vctx, int64_t i, int64_t end)      \
    {                                                                                      \
        CT__OPTIM_VBEGIN(T, S)                                                             \
        CT__OPTIM_VK(T, S, w, 0) CT__OPTIM_VK(T, S, b2, 1) CT__OPTIM_VK(T, S, eps, 2)      \
        CT__OPTIM_VK(T, S, nclr, 3)                                                        \
        CT__OPTIM_VLERP_K(T, S, 0)                                                         \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            CT__OPTIM_VGRAD(S)                                                             \
            CT__OPTIM_VFIRST_MOMENT(S)                                                     \
            CT__OV(S) u = CT__OPTIM_MULP_##S(CT__OPTIM_LD_##S(S1 + i), b2);                \
            u = ct__optim_max_##S(u, CT__OPTIM_ADD_##S(CT__OPTIM_ABS_##S(g), eps));        \
            CT__OPTIM_ST_##S(S1 + i, u);                                                   \
            u = CT__OPTIM_DIV_##S(CT__OPTIM_MULP_##S(nclr, m), u);                         \
            CT__OPTIM_ST_##S(P + i, CT__OPTIM_ADD_##S(p, u));                              \
        }                                                                                  \
        return i;                                                                          \
    }                                                                                      \
    static int64_t ct__optim_nadam_vec_##S(const void *vctx, int64_t i, int64_t end)       \
    {                                                                                      \
        CT__OPTIM_VBEGIN(T, S)                                                             \
        CT__OPTIM_VK(T, S, w, 0) CT__OPTIM_VK(T, S, b2, 1) CT__OPTIM_VK(T, S, w2, 2)       \
        CT__OPTIM_VK(T, S, bc2, 3) CT__OPTIM_VK(T, S, eps, 4) CT__OPTIM_VK(T, S, cg, 5)    \
        CT__OPTIM_VK(T, S, cm, 6)                                                          \
        CT__OPTIM_VLERP_K(T, S, 0)                                                         \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            CT__OPTIM_VGRAD(S)                                                             \
            CT__OPTIM_VFIRST_MOMENT(S)                                                     \
            CT__OV(S) v = CT__OPTIM_VSQAVG(S, S1 + i, b2, w2, g);                          \
            CT__OPTIM_ST_##S(S1 + i, v);                                                   \
            CT__OV(S) d = CT__OPTIM_SQRT_##S(CT__OPTIM_DIV_##S(v, bc2));                   \
            d = CT__OPTIM_ADD_##S(d, eps);                                                 \
            p = CT__OPTIM_ADD_##S(p, CT__OPTIM_DIV_##S(CT__OPTIM_MULP_##S(cg, g), d));     \
            p = CT__OPTIM_ADD_##S(p, CT__OPTIM_DIV_##S(CT__OPTIM_MULP_##S(cm, m), d));     \
            CT__OPTIM_ST_##S(P + i, p);                                                    \
        }                                                                                  \
        return i;                                                                          \
    }                                                                                      \
    static int64_t ct__optim_radam_vec_##S(const void *vctx, int64_t i, int64_t end)       \
    {                                                                                      \
        CT__OPTIM_VBEGIN(T, S)                                                             \
        CT__OPTIM_VK(T, S, w, 0) CT__OPTIM_VK(T, S, b2, 1) CT__OPTIM_VK(T, S, w2, 2)       \
        CT__OPTIM_VK(T, S, bc1, 3) CT__OPTIM_VK(T, S, lr, 4) CT__OPTIM_VK(T, S, eps, 5)    \
        CT__OPTIM_VK(T, S, sbc2, 6) CT__OPTIM_VK(T, S, rect, 7)                            \
        CT__OPTIM_VLERP_K(T, S, 0)                                                         \
        const CT__OV(S) one = CT__OPTIM_SET_##S((T)1);                                     \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            CT__OPTIM_VGRAD(S)                                                             \
            CT__OPTIM_VFIRST_MOMENT(S)                                                     \
            CT__OV(S) v = CT__OPTIM_VSQAVG(S, S1 + i, b2, w2, g);                          \
            CT__OPTIM_ST_##S(S1 + i, v);                                                   \
            CT__OV(S) u = CT__OPTIM_MUL_##S(CT__OPTIM_DIV_##S(m, bc1), lr);                \
            if (c->flag) {                                                                 \
                CT__OV(S) a = CT__OPTIM_ADD_##S(CT__OPTIM_SQRT_##S(v), eps);               \
                a = CT__OPTIM_MULP_##S(CT__OPTIM_DIV_##S(one, a), sbc2);                   \
                u = CT__OPTIM_MUL_##S(CT__OPTIM_MULP_##S(u, a), rect);                     \
            }                                                                              \
            CT__OPTIM_ST_##S(P + i, CT__OPTIM_SUB_##S(p, u));                              \
        }                                                                                  \
        return i;                                                                          \
    }
CT__OPTIM_VKERNELS(float, f32)
#undef CT__OPTIM_VKERNELS
#undef CT__OPTIM_VBEGIN
#undef CT__OPTIM_VGRAD
#undef CT__OPTIM_VK
#undef CT__OPTIM_VSQAVG
#undef CT__OV
#define CT__OPTIM_VCALL_f32(NAME) begin = ct__optim_##NAME##_vec_f32(c, begin, end);
#define CT__OPTIM_VCALL_f64(NAME)
#define CT__OPTIM_VCALL(NAME, S) CT__OPTIM_VCALL_##S(NAME)
#else
#define CT__OPTIM_VCALL(NAME, S)
#endif

#define CT__OPTIM_KERNELS(T, S, F)                                                         \
    static inline T ct__optim_lerp_##S(T x, T e, T w)                                     \
    {                                                                                      \
        bool small = w < (T)0.5 && w > (T)-0.5;                                            \
        return fma##F(small ? w : w - (T)1, e - x, small ? x : e);                         \
    }                                                                                      \
    /* RMSprop: k = alpha, 1-alpha, eps, momentum, -lr; flag = centered; S1 (momentum    \
       buffer) when present:                                                               \
         v = fma((1-alpha)*g, g, S0*alpha); centered: S2 = lerp(S2, g, 1-alpha),           \
         avg = sqrt(fma(-S2, S2, v)), else avg = sqrt(v); avg = avg + eps;                 \
         S1: b = S1*momentum + g/avg, P = fma(-lr, b, p); else P = p + (-lr*g)/avg */     \
    static void ct__optim_rmsprop_##S(int64_t begin, int64_t end, void *vctx)              \
    {                                                                                      \
        CT__OPTIM_BEGIN(T)                                                                 \
        CT__OPTIM_VCALL(rmsprop, S)                                                        \
        const T alpha = (T)c->k[0], w = (T)c->k[1], eps = (T)c->k[2], mom = (T)c->k[3];    \
        const T nlr = (T)c->k[4];                                                          \
        for (int64_t i = begin; i < end; i++) {                                            \
            CT__OPTIM_GRAD(T, F)                                                            \
            T v = fma##F(w * g, g, S0[i] * alpha);                                         \
            S0[i] = v;                                                                     \
            if (c->flag) {                                                                 \
                T ga = ct__optim_lerp_##S(S2[i], g, w);                                    \
                S2[i] = ga;                                                                \
                v = fma##F(-ga, ga, v);                                                    \
            }                                                                              \
            T avg = sqrt##F(v) + eps;                                                      \
            if (S1) {                                                                      \
                T b = ct__optim_mul_##S(S1[i], mom) + g / avg;                             \
                S1[i] = b;                                                                 \
                P[i] = fma##F(nlr, b, p);                                                  \
            } else {                                                                       \
                P[i] = p + (nlr * g) / avg;                                                \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    /* Adagrad: k = eps, -clr: S0 = fma(g, g, S0); P = p + (-clr*g)/(sqrt(S0) + eps) */    \
    static void ct__optim_adagrad_##S(int64_t begin, int64_t end, void *vctx)              \
    {                                                                                      \
        CT__OPTIM_BEGIN(T)                                                                 \
        CT__OPTIM_VCALL(adagrad, S)                                                        \
        const T eps = (T)c->k[0], nclr = (T)c->k[1];                                       \
        for (int64_t i = begin; i < end; i++) {                                            \
            CT__OPTIM_GRAD(T, F)                                                            \
            T sum = fma##F(g, g, S0[i]);                                                   \
            S0[i] = sum;                                                                   \
            P[i] = p + (nclr * g) / (sqrt##F(sum) + eps);                                  \
        }                                                                                  \
    }                                                                                      \
    /* Adadelta: k = rho, 1-rho, eps, -lr: v = fma((1-rho)*g, g, S0*rho); S0 = v;          \
       d = sqrt(S1 + eps) / sqrt(v + eps) * g; S1 = fma((1-rho)*d, d, S1*rho);             \
       P = fma(-lr, d, p) */                                                               \
    static void ct__optim_adadelta_##S(int64_t begin, int64_t end, void *vctx)             \
    {                                                                                      \
        CT__OPTIM_BEGIN(T)                                                                 \
        CT__OPTIM_VCALL(adadelta, S)                                                       \
        const T rho = (T)c->k[0], w = (T)c->k[1], eps = (T)c->k[2], nlr = (T)c->k[3];      \
        for (int64_t i = begin; i < end; i++) {                                            \
            CT__OPTIM_GRAD(T, F)                                                            \
            T v = fma##F(w * g, g, S0[i] * rho);                                           \
            S0[i] = v;                                                                     \
            T d = sqrt##F(S1[i] + eps) / sqrt##F(v + eps) * g;                             \
            S1[i] = fma##F(w * d, d, S1[i] * rho);                                         \
            P[i] = fma##F(nlr, d, p);                                                      \
        }                                                                                  \
    }                                                                                      \
    /* Adamax: k = 1-b1, b2, eps, -lr/(1-b1^t): S0 = lerp(S0, g, 1-b1);                    \
       S1 = maximum(S1*b2, |g| + eps) (NaN propagates); P = p + (-clr*S0)/S1 */            \
    static void ct__optim_adamax_##S(int64_t begin, int64_t end, void *vctx)               \
    {                                                                                      \
        CT__OPTIM_BEGIN(T)                                                                 \
        CT__OPTIM_VCALL(adamax, S)                                                         \
        const T w = (T)c->k[0], b2 = (T)c->k[1], eps = (T)c->k[2], nclr = (T)c->k[3];      \
        for (int64_t i = begin; i < end; i++) {                                            \
            CT__OPTIM_GRAD(T, F)                                                            \
            T m = ct__optim_lerp_##S(S0[i], g, w);                                         \
            S0[i] = m;                                                                     \
            T u = S1[i] * b2, n = fabs##F(g) + eps;                                        \
            u = (u > n || u != u) ? u : n;                                                 \
            S1[i] = u;                                                                     \
            P[i] = p + (nclr * m) / u;                                                     \
        }                                                                                  \
    }                                                                                      \
    /* NAdam: k = 1-b1, b2, 1-b2, 1-b2^t, eps, cg, cm: S0 = lerp(S0, g, 1-b1);             \
       S1 = fma((1-b2)*g, g, S1*b2); d = sqrt(S1/(1-b2^t)) + eps;                          \
       P = (p + (cg*g)/d) + (cm*S0)/d */                                                   \
    static void ct__optim_nadam_##S(int64_t begin, int64_t end, void *vctx)                \
    {                                                                                      \
        CT__OPTIM_BEGIN(T)                                                                 \
        CT__OPTIM_VCALL(nadam, S)                                                          \
        const T w = (T)c->k[0], b2 = (T)c->k[1], w2 = (T)c->k[2], bc2 = (T)c->k[3];        \
        const T eps = (T)c->k[4], cg = (T)c->k[5], cm = (T)c->k[6];                        \
        for (int64_t i = begin; i < end; i++) {                                            \
            CT__OPTIM_GRAD(T, F)                                                            \
            T m = ct__optim_lerp_##S(S0[i], g, w);                                         \
            S0[i] = m;                                                                     \
            T v = fma##F(w2 * g, g, S1[i] * b2);                                           \
            S1[i] = v;                                                                     \
            T d = sqrt##F(v / bc2) + eps;                                                  \
            p = p + (cg * g) / d;                                                          \
            P[i] = p + (cm * m) / d;                                                       \
        }                                                                                  \
    }                                                                                      \
    /* RAdam: k = 1-b1, b2, 1-b2, 1-b1^t, lr, eps, sqrt(1-b2^t), rect; flag = rho_t > 5:     \
       S0, S1 as NAdam; u = (S0/(1-b1^t))*lr; flag: u = (u * ((1/(sqrt(S1) + eps))           \
       * sqrt(1-b2^t))) * rect; P = p - u */                                               \
    static void ct__optim_radam_##S(int64_t begin, int64_t end, void *vctx)                \
    {                                                                                      \
        CT__OPTIM_BEGIN(T)                                                                 \
        CT__OPTIM_VCALL(radam, S)                                                          \
        const T w = (T)c->k[0], b2 = (T)c->k[1], w2 = (T)c->k[2], bc1 = (T)c->k[3];        \
        const T lr = (T)c->k[4], eps = (T)c->k[5], sbc2 = (T)c->k[6], rect = (T)c->k[7];   \
        for (int64_t i = begin; i < end; i++) {                                            \
            CT__OPTIM_GRAD(T, F)                                                            \
            T m = ct__optim_lerp_##S(S0[i], g, w);                                         \
            S0[i] = m;                                                                     \
            T v = fma##F(w2 * g, g, S1[i] * b2);                                           \
            S1[i] = v;                                                                     \
            T u = ct__optim_mul_##S(m / bc1, lr);                                          \
            if (c->flag) {                                                                 \
                T a = ((T)1 / (sqrt##F(v) + eps)) * sbc2;                                  \
                u = ct__optim_mul_##S(u * a, rect);                                        \
            }                                                                              \
            P[i] = p - u;                                                                  \
        }                                                                                  \
    }
/* The common start of the kernels above: the arrays and the weight-decay scalars. */
#define CT__OPTIM_BEGIN(T)                                                                 \
    const ct__optim_ctx *c = (const ct__optim_ctx *)vctx;                                  \
    T *P = (T *)(void *)c->p, *S0 = (T *)(void *)c->s[0], *S1 = (T *)(void *)c->s[1];      \
    T *S2 = (T *)(void *)c->s[2];                                                          \
    const T *G = (const T *)(const void *)c->g;                                            \
    const T sign = (T)c->sign, wd = (T)c->wd, decay = (T)c->decay;                         \
    (void)S1;                                                                              \
    (void)S2;
#define CT__OPTIM_GRAD(T, F)                                                               \
    T p = fma##F(P[i], decay, (T)0);                                                       \
    T g = sign * G[i];                                                                     \
    if (c->use_wd) {                                                                       \
        g = fma##F(wd, p, g);                                                              \
    }
CT__OPTIM_KERNELS(float, f32, f)
CT__OPTIM_KERNELS(double, f64, )
#undef CT__OPTIM_KERNELS
#undef CT__OPTIM_BEGIN
#undef CT__OPTIM_GRAD
#undef CT__OPTIM_VCALL
#undef CT__OPTIM_VCALL_f32
#undef CT__OPTIM_VCALL_f64

/* ---- the fused ops ------------------------------------------------------------------------
 * One call updates one parameter: inputs self (the parameter), its grad and its state
 * tensors (PyTorch's lists, of one tensor each here), the hyperparameters as attributes.
 * The kernels need contiguous data of the parameter's dtype: a copy is made otherwise and
 * written back. */
/* Inputs after self must have self's numel; state inputs (2 on) are contiguous of its dtype;
   the optional inputs whose bits are set in `needed` must be present. */
static bool ct__fused_check(ct_op_call *c, unsigned needed)
{
    ct_tensor *p = (ct_tensor *)(uintptr_t)c->inputs[0];
    for (int k = 1; k < c->n_inputs; k++) {
        if ((needed >> k & 1u) && !c->inputs[k]) {
            ct__null(c->fn, c->inputs[k]);
            return false;
        }
    }
    for (int k = 1; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        if (t && (ct_numel(t) != ct_numel(p) ||
                  (k >= 2 && (t->dtype != p->dtype || !ct_is_contiguous(t))))) {
            ct__fail(CT_ERR_SHAPE, c->fn, "%s: tensor %d of the call does not match the "
                     "parameter (%lld elements of %s)", c->op->name, k, (long long)ct_numel(p),
                     ct_dtype_name(p->dtype));
            return false;
        }
    }
    c->dtype = p->dtype;
    c->outputs[c->n_outputs++] = p;
    return true;
}

CT__GLUE_BEGIN
/* _fused_sgd_: the momentum buffer (input 2) is needed when momentum (attribute 1) is set. */
static bool ct__fused_sgd_meta(ct_op_call *c)
{
    return ct__fused_check(c, c->attrs[1].f != 0.0 ? 1u << 2 : 0u);
}

/* _fused_adam(w)_: max_exp_avg_sq (input 4) is needed under amsgrad (attribute 5). */
static bool ct__fused_adam_meta(ct_op_call *c)
{
    return ct__fused_check(c, c->attrs[5].i ? 1u << 4 : 0u);
}

/* _fused_rmsprop_: momentum_buffer (input 3) when momentum (attribute 4) > 0, grad_avg
   (input 4) when centered (attribute 5). */
static bool ct__fused_rmsprop_meta(ct_op_call *c)
{
    return ct__fused_check(c, (c->attrs[4].f > 0.0 ? 1u << 3 : 0u) |
                                  (c->attrs[5].i ? 1u << 4 : 0u));
}

/* The other fused ops: every input is required (the entry checks them). */
static bool ct__fused_meta(ct_op_call *c)
{
    return ct__fused_check(c, 0u);
}
CT__GLUE_END

/* A contiguous tensor (new, unscoped) holding src converted to dtype; NULL on OOM. */
static ct_tensor *ct__optim_contiguous(const char *op, const ct_tensor *src, ct_dtype dtype)
{
    ct_tensor *t = ct__tensor_new(op, src->sizes, src->ndim, dtype);
    if (t) {
        ct__copy_kernel(t, src);
    }
    return t;
}

/* Runs loop f32 or f64 over the parameter with ctx, after pointing *p and *g at contiguous
   data of the parameter and its grad. */
static ct_status ct__fused_run(ct_op_call *c, void *ctx, char **p, const char **g,
                               void (*f32)(int64_t, int64_t, void *),
                               void (*f64)(int64_t, int64_t, void *))
{
    ct_tensor *param = c->outputs[0];
    const ct_tensor *grad = c->inputs[1];
    ct_tensor *pc = ct_is_contiguous(param) ? param
                                            : ct__optim_contiguous(c->fn, param, param->dtype);
    const ct_tensor *gc = ct_is_contiguous(grad) && grad->dtype == param->dtype
                              ? grad
                              : ct__optim_contiguous(c->fn, grad, param->dtype);
    if (pc && gc) {
        *p = ct__data(pc);
        *g = ct__data(gc);
        ct__parallel_for(ct_numel(param), CT__GRAIN, param->dtype == CT_FLOAT32 ? f32 : f64,
                         ctx);
        if (pc != param) {
            ct__copy_kernel(param, pc);
        }
    }
    ct_status st = pc && gc ? CT_OK : ct_error_code();
    if (pc != param) {
        ct__release(pc);
    }
    if (gc != grad) {
        ct__release((ct_tensor *)(uintptr_t)gc);
    }
    return st;
}

/* _fused_sgd_: attributes weight_decay, momentum, lr, dampening, nesterov, maximize,
   is_first_step. */
static ct_status ct__fused_sgd_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_sgd_ctx x;
    memset(&x, 0, sizeof x);
    x.buf = c->inputs[2] ? ct__data(c->inputs[2]) : NULL;
    x.sign = a[5].i ? -1.0 : 1.0;
    x.wd = a[0].f;
    x.momentum = a[1].f;
    x.damp1 = 1.0 - a[3].f;
    x.nlr = -a[2].f;
    x.use_wd = a[0].f != 0.0;
    x.use_momentum = a[1].f != 0.0;
    x.first = a[6].i != 0;
    x.nesterov = a[4].i != 0;
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_sgd_f32, ct__optim_sgd_f64);
}

/* _fused_adam_ and _fused_adamw_ (variant CT__OPTIM_ADAMW: decoupled weight decay):
   attributes lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, then the parameter's
   step count (PyTorch's state_steps tensor, already incremented). */
static ct_status ct__fused_adam_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    double lr = a[0].f, beta1 = a[1].f, beta2 = a[2].f, wd = a[3].f, t = (double)a[7].i;
    double bc1 = 1.0 - pow(beta1, t), bc2 = 1.0 - pow(beta2, t);
    bool decoupled = c->op->variant == CT__OPTIM_ADAMW;
    ct__optim_adam_ctx x;
    memset(&x, 0, sizeof x);
    x.m = ct__data(c->inputs[2]);
    x.v = ct__data(c->inputs[3]);
    x.vmax = c->inputs[4] ? ct__data(c->inputs[4]) : NULL;
    x.decay = decoupled && wd != 0.0 ? ct__optim_decay(lr, wd) : 1.0;
    x.sign = a[6].i ? -1.0 : 1.0;
    x.wd = wd;
    x.use_wd = !decoupled && wd != 0.0;
    x.w1 = 1.0 - beta1;
    x.b2 = beta2;
    x.c2 = 1.0 - beta2;
    x.bc2_sqrt = sqrt(bc2);
    x.eps = a[4].f;
    x.nstep = -(lr / bc1);
    x.amsgrad = a[5].i != 0;
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_adam_f32, ct__optim_adam_f64);
}

/* The common part of the later optimizers' contexts: the state inputs (2 on), maximize,
   and weight decay wd, decoupled (p *= 1 - lr*wd) or coupled (g += wd*p). */
static void ct__optim_ctx_init(const ct_op_call *c, ct__optim_ctx *x, double lr, double wd,
                               bool decoupled, int64_t maximize)
{
    memset(x, 0, sizeof *x);
    for (int k = 2; k < c->n_inputs; k++) {
        x->s[k - 2] = c->inputs[k] ? ct__data(c->inputs[k]) : NULL;
    }
    x->sign = maximize ? -1.0 : 1.0;
    x->wd = wd;
    x->use_wd = !decoupled && wd != 0.0;
    x->decay = decoupled && wd != 0.0 ? ct__optim_decay(lr, wd) : 1.0;
}

/* The parameter's step count after this update (PyTorch's state['step'] += 1). */
static double ct__optim_t(const ct_op_call *c)
{
    return (double)(((const ct__optim_param *)c->state)->step + 1);
}

/* ctorch::_fused_rmsprop_: attributes lr, alpha, eps, weight_decay, momentum, centered,
   maximize. */
static ct_status ct__fused_rmsprop_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_ctx x;
    ct__optim_ctx_init(c, &x, a[0].f, a[3].f, false, a[6].i);
    if (!(a[4].f > 0.0)) {
        x.s[1] = NULL;
    }
    x.k[0] = a[1].f;
    x.k[1] = 1.0 - a[1].f;
    x.k[2] = a[2].f;
    x.k[3] = a[4].f;
    x.k[4] = -a[0].f;
    x.flag = a[5].i != 0;
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_rmsprop_f32, ct__optim_rmsprop_f64);
}

/* aten::_fused_adagrad_: attributes lr, lr_decay, weight_decay, eps, maximize. */
static ct_status ct__fused_adagrad_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_ctx x;
    ct__optim_ctx_init(c, &x, a[0].f, a[2].f, false, a[4].i);
    x.k[0] = a[3].f;
    x.k[1] = -ct__optim_adagrad_clr(a[0].f, a[1].f, ct__optim_t(c));
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_adagrad_f32, ct__optim_adagrad_f64);
}

/* ctorch::_fused_adadelta_: attributes lr, rho, eps, weight_decay, maximize. */
static ct_status ct__fused_adadelta_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_ctx x;
    ct__optim_ctx_init(c, &x, a[0].f, a[3].f, false, a[4].i);
    x.k[0] = a[1].f;
    x.k[1] = 1.0 - a[1].f;
    x.k[2] = a[2].f;
    x.k[3] = -a[0].f;
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_adadelta_f32, ct__optim_adadelta_f64);
}

/* ctorch::_fused_adamax_: attributes lr, beta1, beta2, eps, weight_decay, maximize. */
static ct_status ct__fused_adamax_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_ctx x;
    ct__optim_ctx_init(c, &x, a[0].f, a[4].f, false, a[5].i);
    x.k[0] = 1.0 - a[1].f;
    x.k[1] = a[2].f;
    x.k[2] = a[3].f;
    x.k[3] = -(a[0].f / (1.0 - pow(a[1].f, ct__optim_t(c))));
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_adamax_f32, ct__optim_adamax_f64);
}

/* NAdam's scalars at step t (as torch.optim computes them, in double): k[0..6] as the
   kernel's legend; *mp = the new mu_product, mu_product*mu_t rounded to float32. */
static void ct__optim_nadam_coefs(double lr, double b1, double b2, double eps,
                                  double momentum_decay, double t, double mu_product, double *k,
                                  double *mp)
{
    double mu = b1 * (1.0 - 0.5 * pow(0.96, t * momentum_decay));
    double mu_next = b1 * (1.0 - 0.5 * pow(0.96, (t + 1.0) * momentum_decay));
    *mp = (double)((float)mu_product * (float)mu);
    k[0] = 1.0 - b1;
    k[1] = b2;
    k[2] = 1.0 - b2;
    k[3] = 1.0 - pow(b2, t);
    k[4] = eps;
    k[5] = -lr * (1.0 - mu) / (1.0 - *mp);
    k[6] = -lr * mu_next / (1.0 - ct__optim_mul(*mp, mu_next));
}

/* ctorch::_fused_nadam_: attributes lr, beta1, beta2, eps, weight_decay, momentum_decay,
   decoupled_weight_decay, maximize; the parameter's mu_product is updated when the step
   succeeds. */
static ct_status ct__fused_nadam_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_param *q = (ct__optim_param *)c->state;
    ct__optim_ctx x;
    ct__optim_ctx_init(c, &x, a[0].f, a[4].f, a[6].i != 0, a[7].i);
    double mp = 0.0;
    ct__optim_nadam_coefs(a[0].f, a[1].f, a[2].f, a[3].f, a[5].f, ct__optim_t(c), q->mu_product,
                          x.k, &mp);
    ct_status st = ct__fused_run(c, &x, &x.p, &x.g, ct__optim_nadam_f32, ct__optim_nadam_f64);
    if (st == CT_OK) {
        q->mu_product = mp;
    }
    return st;
}

/* RAdam's scalars at step t: k[0..7] as the kernel's legend; returns rho_t > 5 (whether
   the variance is rectified). */
static bool ct__optim_radam_coefs(double lr, double b1, double b2, double eps, double t,
                                  double *k)
{
    double bc2 = 1.0 - pow(b2, t);
    double rho_inf = 2.0 / (1.0 - b2) - 1.0;
    double rho_t = rho_inf - 2.0 * t * pow(b2, t) / bc2;
    k[0] = 1.0 - b1;
    k[1] = b2;
    k[2] = 1.0 - b2;
    k[3] = 1.0 - pow(b1, t);
    k[4] = lr;
    k[5] = eps;
    k[6] = pow(bc2, 0.5);
    k[7] = pow((rho_t - 4.0) * (rho_t - 2.0) * rho_inf /
                   ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t), 0.5);
    return rho_t > 5.0;
}

/* ctorch::_fused_radam_: attributes lr, beta1, beta2, eps, weight_decay,
   decoupled_weight_decay, maximize. */
static ct_status ct__fused_radam_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_ctx x;
    ct__optim_ctx_init(c, &x, a[0].f, a[4].f, a[5].i != 0, a[6].i);
    x.flag = ct__optim_radam_coefs(a[0].f, a[1].f, a[2].f, a[3].f, ct__optim_t(c), x.k);
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_radam_f32, ct__optim_radam_f64);
}

#define CT__FUSED(SYM, NAME, SCHEMA, VAR, OPTIONAL, META, KERNEL)                              \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, "ct_optimizer_step",             \
                                       CT_OP_INPLACE, CT_AUTOCAST_NONE, VAR, OPTIONAL, NULL,   \
                                       META, CT__K_FLOAT(KERNEL), NULL, NULL, NULL, 0u, NULL,  \
                                       NULL};
#define CT__FUSED_ADAM_SCHEMA(N)                                                               \
    N "(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] "           \
      "exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float "   \
      "beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, "       \
      "Tensor? grad_scale=None, Tensor? found_inf=None) -> ()"
CT__FUSED(fused_sgd_, "aten::_fused_sgd_", "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, "
          "Tensor(c!)[] momentum_buffer_list, *, float weight_decay, float momentum, float lr, "
          "float dampening, bool nesterov, bool maximize, bool is_first_step, Tensor? "
          "grad_scale=None, Tensor? found_inf=None) -> ()", CT__OPTIM_SGD, 1u << 2,
          ct__fused_sgd_meta, ct__fused_sgd_kernel)
CT__FUSED(fused_adam_, "aten::_fused_adam_", CT__FUSED_ADAM_SCHEMA("_fused_adam_"), CT__OPTIM_ADAM,
          1u << 4, ct__fused_adam_meta, ct__fused_adam_kernel)
CT__FUSED(fused_adamw_, "aten::_fused_adamw_", CT__FUSED_ADAM_SCHEMA("_fused_adamw_"),
          CT__OPTIM_ADAMW, 1u << 4, ct__fused_adam_meta, ct__fused_adam_kernel)
#define CT__FUSED_X(SYM, SCHEMA, VAR, OPTIONAL, META)                                         \
    CT__FUSED(SYM, "ctorch::_" #SYM, "_" #SYM "(Tensor(a!) self, Tensor grad, " SCHEMA " -> ()",  \
              VAR, OPTIONAL, META, ct__##SYM##kernel)
CT__FUSED_X(fused_rmsprop_, "Tensor(b!) square_avg, Tensor(c!)? momentum_buffer, Tensor(d!)? "
            "grad_avg, *, float lr, float alpha, float eps, float weight_decay, float momentum, "
            "bool centered, bool maximize)", CT__OPTIM_RMSPROP, 3u << 3, ct__fused_rmsprop_meta)
CT__FUSED(fused_adagrad_, "aten::_fused_adagrad_", "_fused_adagrad_(Tensor(a!)[] self, "
          "Tensor(b!)[] grads, Tensor(c!)[] state_sums, Tensor(d!)[] state_steps, *, float "
          "lr, float lr_decay, float weight_decay, float eps, bool maximize, Tensor? "
          "grad_scale=None, Tensor? found_inf=None) -> ()", CT__OPTIM_ADAGRAD, 0u, ct__fused_meta,
          ct__fused_adagrad_kernel)
CT__FUSED_X(fused_adadelta_, "Tensor(b!) square_avg, Tensor(c!) acc_delta, *, float lr, float "
            "rho, float eps, float weight_decay, bool maximize)", CT__OPTIM_ADADELTA, 0u,
            ct__fused_meta)
CT__FUSED_X(fused_adamax_, "Tensor(b!) exp_avg, Tensor(c!) exp_inf, *, float lr, float beta1, "
            "float beta2, float eps, float weight_decay, bool maximize)", CT__OPTIM_ADAMAX, 0u,
            ct__fused_meta)
CT__FUSED_X(fused_nadam_, "Tensor(b!) exp_avg, Tensor(c!) exp_avg_sq, *, float lr, float beta1, "
            "float beta2, float eps, float weight_decay, float momentum_decay, bool "
            "decoupled_weight_decay, bool maximize)", CT__OPTIM_NADAM, 0u, ct__fused_meta)
CT__FUSED_X(fused_radam_, "Tensor(b!) exp_avg, Tensor(c!) exp_avg_sq, *, float lr, float beta1, "
            "float beta2, float eps, float weight_decay, bool decoupled_weight_decay, bool "
            "maximize)", CT__OPTIM_RADAM, 0u, ct__fused_meta)
#undef CT__FUSED_X
#undef CT__FUSED
#undef CT__FUSED_ADAM_SCHEMA

CT__GLUE_BEGIN
/* ---- step ------------------------------------------------------------------------------- */
/* Whether state slot k of a parameter is used under group g (its name in ct__optim_kinds
   says whether the optimizer has the slot at all), as torch.optim's _init_group decides. */
static bool ct__optim_slot_used(int kind, const ct__optim_group *g, int k)
{
    if (!ct__optim_kinds[kind].state[k]) {
        return false;
    }
    switch (kind) {
    case CT__OPTIM_SGD:
        return g->momentum != 0.0;
    case CT__OPTIM_ADAM:
    case CT__OPTIM_ADAMW:
        return k < 2 || g->amsgrad;
    case CT__OPTIM_RMSPROP:
        return k == 0 || (k == 1 && g->momentum > 0.0) || (k == 2 && g->centered);
    default:
        return true;
    }
}

/* Allocates a parameter's missing state tensors (SGD's momentum buffer uninitialized, as its
   first update copies the gradient; Adagrad's sum filled with the constructor's
   initial_accumulator_value; the others zeroed); false after an error (tensors already
   allocated are kept for the next step). */
static bool ct__optim_alloc_state(const char *op, const ct_optimizer *opt,
                                  const ct__optim_group *g, ct__optim_param *q)
{
    for (int k = 0; k < 3; k++) {
        if (q->state[k] || !ct__optim_slot_used(opt->kind, g, k)) {
            continue;
        }
        ct_tensor *t = ct__tensor_new(op, q->p->sizes, q->p->ndim, q->p->dtype);
        if (!t) {
            return false;
        }
        q->state[k] = t;
        double init = opt->kind == CT__OPTIM_ADAGRAD ? opt->defaults.initial_accumulator_value
                                                      : 0.0;
        if (opt->kind != CT__OPTIM_SGD && init == 0.0) {
            memset(ct__data(t), 0, ct_nbytes(t));
        } else if (opt->kind != CT__OPTIM_SGD && !ct_fill_(t, init)) {
            return false;
        }
    }
    return true;
}

/* add's alpha as PyTorch's CPU kernel takes it for a float16/bfloat16 tensor:
   alpha_scalar.to<scalar_t>(), rounded to the dtype (its other scalars stay float). */
static double ct__optim_alpha(const ct_tensor *p, double alpha)
{
    return p->dtype == CT_FLOAT16 ? ct_half_to_float(ct_float_to_half((float)alpha))
                                  : ct_bfloat16_to_float(ct_float_to_bfloat16((float)alpha));
}

/* SGD's update of a float16/bfloat16 parameter: torch.optim's _single_tensor_sgd op by op. */
static void ct__optim_sgd_half(const ct__optim_group *g, ct__optim_param *q, const ct_tensor *grad)
{
    ct_tensor *p = q->p, *buf = q->state[0];
    if (g->weight_decay != 0.0) {
        grad = ct_add_alpha(grad, p, ct__optim_alpha(p, g->weight_decay));
    }
    if (g->momentum != 0.0) {
        if (q->has_state) {
            ct_add_(ct_copy_(buf, ct_mul_scalar(buf, g->momentum)), grad,
                    ct__optim_alpha(p, 1.0 - g->dampening));
        } else {
            ct_copy_(buf, grad);
        }
        grad = g->nesterov ? ct_add_alpha(grad, buf, ct__optim_alpha(p, g->momentum)) : buf;
    }
    ct_add_(p, grad, ct__optim_alpha(p, -g->lr));
}

/* Adam's and AdamW's update of a float16/bfloat16 parameter: torch.optim's _single_tensor_adam
   op by op (the bias corrections in double, as Python floats). */
static void ct__optim_adam_half(const ct_optimizer *opt, const ct__optim_group *g,
                                ct__optim_param *q, const ct_tensor *grad)
{
    ct_tensor *p = q->p, *m = q->state[0], *v = q->state[1], *vmax = q->state[2];
    double t = (double)(q->step + 1);
    if (g->weight_decay != 0.0 && opt->kind == CT__OPTIM_ADAMW) {
        ct_copy_(p, ct_mul_scalar(p, ct__optim_decay(g->lr, g->weight_decay)));
    } else if (g->weight_decay != 0.0) {
        grad = ct_add_alpha(grad, p, ct__optim_alpha(p, g->weight_decay));
    }
    ct_lerp_scalar_(m, grad, 1.0 - g->beta1);
    ct_addcmul_(ct_copy_(v, ct_mul_scalar(v, g->beta2)), grad, grad, 1.0 - g->beta2);
    if (g->amsgrad) {
        v = ct_copy_(vmax, ct_maximum(vmax, v));
    }
    double step_size = g->lr / (1.0 - pow(g->beta1, t));
    double bc2_sqrt = sqrt(1.0 - pow(g->beta2, t));
    ct_tensor *denom = ct_add_scalar(ct_div_scalar(ct_sqrt(v), bc2_sqrt), g->eps);
    ct_addcdiv_(p, m, denom, -step_size);
}

/* grad + wd*p (grad.add(param, alpha=wd)) when wd != 0, else grad. */
static const ct_tensor *ct__optim_l2(const ct_tensor *grad, const ct_tensor *p, double wd)
{
    return wd != 0.0 ? ct_add_alpha(grad, p, ct__optim_alpha(p, wd)) : grad;
}

/* x.mul_(s).addcmul_(a, b, value=v). */
static void ct__optim_ema(ct_tensor *x, double s, const ct_tensor *a, const ct_tensor *b,
                          double v)
{
    ct_addcmul_(ct_copy_(x, ct_mul_scalar(x, s)), a, b, v);
}

/* Weight decay of NAdam and RAdam: decoupled (param.mul_(1 - lr*wd)) or coupled (returns
   grad + wd*p). */
static const ct_tensor *ct__optim_wd(const ct__optim_group *g, ct_tensor *p,
                                     const ct_tensor *grad)
{
    if (g->decoupled && g->weight_decay != 0.0) {
        ct_copy_(p, ct_mul_scalar(p, ct__optim_decay(g->lr, g->weight_decay)));
        return grad;
    }
    return ct__optim_l2(grad, p, g->decoupled ? 0.0 : g->weight_decay);
}

/* The later optimizers' updates of a float16/bfloat16 parameter: torch.optim's
   _single_tensor_<name> op by op, scalars as the fused kernels compute them. */
static void ct__optim_rmsprop_half(const ct__optim_group *g, ct__optim_param *q,
                                   const ct_tensor *grad)
{
    ct_tensor *p = q->p, *sq = q->state[0], *buf = q->state[1], *ga = q->state[2];
    grad = ct__optim_l2(grad, p, g->weight_decay);
    ct__optim_ema(sq, g->alpha, grad, grad, 1.0 - g->alpha);
    const ct_tensor *v = sq;
    if (g->centered) {
        ct_lerp_scalar_(ga, grad, 1.0 - g->alpha);
        v = ct_addcmul(sq, ga, ga, -1.0);
    }
    ct_tensor *avg = ct_add_scalar(ct_sqrt(v), g->eps);
    if (g->momentum > 0.0) {
        ct_addcdiv_(ct_copy_(buf, ct_mul_scalar(buf, g->momentum)), grad, avg, 1.0);
        ct_add_(p, buf, ct__optim_alpha(p, -g->lr));
    } else {
        ct_addcdiv_(p, grad, avg, -g->lr);
    }
}

static void ct__optim_adagrad_half(const ct__optim_group *g, ct__optim_param *q,
                                   const ct_tensor *grad)
{
    ct_tensor *p = q->p, *sum = q->state[0];
    double clr = ct__optim_adagrad_clr(g->lr, g->lr_decay, (double)(q->step + 1));
    grad = ct__optim_l2(grad, p, g->weight_decay);
    ct_addcmul_(sum, grad, grad, 1.0);
    ct_addcdiv_(p, grad, ct_add_scalar(ct_sqrt(sum), g->eps), -clr);
}

static void ct__optim_adadelta_half(const ct__optim_group *g, ct__optim_param *q,
                                    const ct_tensor *grad)
{
    ct_tensor *p = q->p, *sq = q->state[0], *acc = q->state[1];
    grad = ct__optim_l2(grad, p, g->weight_decay);
    ct__optim_ema(sq, g->rho, grad, grad, 1.0 - g->rho);
    ct_tensor *std = ct_sqrt(ct_add_scalar(sq, g->eps));
    ct_tensor *delta = ct_mul(ct_div(ct_sqrt(ct_add_scalar(acc, g->eps)), std), grad);
    ct__optim_ema(acc, g->rho, delta, delta, 1.0 - g->rho);
    ct_add_(p, delta, ct__optim_alpha(p, -g->lr));
}

static void ct__optim_adamax_half(const ct__optim_group *g, ct__optim_param *q,
                                  const ct_tensor *grad)
{
    ct_tensor *p = q->p, *m = q->state[0], *u = q->state[1];
    grad = ct__optim_l2(grad, p, g->weight_decay);
    ct_lerp_scalar_(m, grad, 1.0 - g->beta1);
    ct_copy_(u, ct_maximum(ct_mul_scalar(u, g->beta2), ct_add_scalar(ct_abs(grad), g->eps)));
    double clr = g->lr / (1.0 - pow(g->beta1, (double)(q->step + 1)));
    ct_addcdiv_(p, m, u, -clr);
}

static void ct__optim_nadam_half(const ct__optim_group *g, ct__optim_param *q,
                                 const ct_tensor *grad)
{
    ct_tensor *p = q->p, *m = q->state[0], *v = q->state[1];
    double k[8], mp = 0.0;
    ct__optim_nadam_coefs(g->lr, g->beta1, g->beta2, g->eps, g->momentum_decay,
                          (double)(q->step + 1), q->mu_product, k, &mp);
    grad = ct__optim_wd(g, p, grad);
    ct_lerp_scalar_(m, grad, k[0]);
    ct__optim_ema(v, k[1], grad, grad, k[2]);
    ct_tensor *denom = ct_add_scalar(ct_sqrt(ct_div_scalar(v, k[3])), k[4]);
    ct_addcdiv_(p, grad, denom, k[5]);
    ct_addcdiv_(p, m, denom, k[6]);
    q->mu_product = mp;
}

static void ct__optim_radam_half(const ct__optim_group *g, ct__optim_param *q,
                                 const ct_tensor *grad)
{
    ct_tensor *p = q->p, *m = q->state[0], *v = q->state[1];
    double k[8];
    bool rect = ct__optim_radam_coefs(g->lr, g->beta1, g->beta2, g->eps, (double)(q->step + 1), k);
    grad = ct__optim_wd(g, p, grad);
    ct_lerp_scalar_(m, grad, k[0]);
    ct__optim_ema(v, k[1], grad, grad, k[2]);
    ct_tensor *u = ct_mul_scalar(ct_div_scalar(m, k[3]), k[4]);
    if (rect) {
        ct_tensor *adaptive = ct_mul_scalar(ct_reciprocal(ct_add_scalar(ct_sqrt(v), k[5])), k[6]);
        u = ct_mul_scalar(ct_mul(u, adaptive), k[7]);
    }
    ct_add_(p, u, ct__optim_alpha(p, -1.0));
}

/* The update of a float16/bfloat16 parameter. PyTorch's optimizers on the CPU run their
   single-tensor path (no fused or foreach kernel), every op in the parameter's dtype computing
   in float32 and rounding once: the same ctorch ops here, in a scope of their own. */
static bool ct__optim_update_half(const ct_optimizer *opt, const ct__optim_group *g,
                                  ct__optim_param *q)
{
    if (ct_scope_begin() != CT_OK) {
        return false;
    }
    const ct_tensor *grad = g->maximize ? ct_neg(q->p->grad) : q->p->grad;
    switch (opt->kind) {
    case CT__OPTIM_SGD:
        ct__optim_sgd_half(g, q, grad);
        break;
    case CT__OPTIM_ADAM:
    case CT__OPTIM_ADAMW:
        ct__optim_adam_half(opt, g, q, grad);
        break;
    case CT__OPTIM_RMSPROP:
        ct__optim_rmsprop_half(g, q, grad);
        break;
    case CT__OPTIM_ADAGRAD:
        ct__optim_adagrad_half(g, q, grad);
        break;
    case CT__OPTIM_ADADELTA:
        ct__optim_adadelta_half(g, q, grad);
        break;
    case CT__OPTIM_ADAMAX:
        ct__optim_adamax_half(g, q, grad);
        break;
    case CT__OPTIM_NADAM:
        ct__optim_nadam_half(g, q, grad);
        break;
    default:
        ct__optim_radam_half(g, q, grad);
        break;
    }
    ct_scope_end();
    return ct_error_code() == CT_OK;
}

/* The fused op of the later optimizers and its attributes (schema order) for group g. */
static const ct_op *ct__optim_fused_op(ct_op_call *c, int kind, const ct__optim_group *g)
{
    switch (kind) {
    case CT__OPTIM_RMSPROP: {
        const double f[5] = {g->lr, g->alpha, g->eps, g->weight_decay, g->momentum};
        for (int k = 0; k < 5; k++) {
            ct__call_f(c, f[k]);
        }
        ct__call_i(c, g->centered);
        ct__call_i(c, g->maximize);
        return &ct__op_fused_rmsprop_;
    }
    case CT__OPTIM_ADAGRAD:
        ct__call_f(c, g->lr);
        ct__call_f(c, g->lr_decay);
        ct__call_f(c, g->weight_decay);
        ct__call_f(c, g->eps);
        ct__call_i(c, g->maximize);
        return &ct__op_fused_adagrad_;
    case CT__OPTIM_ADADELTA:
        ct__call_f(c, g->lr);
        ct__call_f(c, g->rho);
        ct__call_f(c, g->eps);
        ct__call_f(c, g->weight_decay);
        ct__call_i(c, g->maximize);
        return &ct__op_fused_adadelta_;
    default: /* the Adam family: lr, beta1, beta2, eps, weight_decay, ... */
        ct__call_f(c, g->lr);
        ct__call_f(c, g->beta1);
        ct__call_f(c, g->beta2);
        ct__call_f(c, g->eps);
        ct__call_f(c, g->weight_decay);
        if (kind == CT__OPTIM_NADAM) {
            ct__call_f(c, g->momentum_decay);
        }
        if (kind != CT__OPTIM_ADAMAX) {
            ct__call_i(c, g->decoupled);
        }
        ct__call_i(c, g->maximize);
        return kind == CT__OPTIM_ADAMAX  ? &ct__op_fused_adamax_
               : kind == CT__OPTIM_NADAM ? &ct__op_fused_nadam_
                                         : &ct__op_fused_radam_;
    }
}

/* After an update: step += 1; the state holds values (SGD's momentum buffer only once a
   step ran with momentum: a momentum set later, e.g. by OneCycleLR, starts it from the grad,
   as PyTorch's `if buf is None`). */
static void ct__optim_updated(const ct_optimizer *opt, const ct__optim_group *g,
                              ct__optim_param *q)
{
    q->step++;
    q->has_state = q->has_state || opt->kind != CT__OPTIM_SGD || g->momentum != 0.0;
}

/* One parameter's update through its fused op (float32, float64) or op by op (float16,
   bfloat16); false after an error. */
static bool ct__optim_update(const char *op, const ct_optimizer *opt, const ct__optim_group *g,
                             ct__optim_param *q)
{
    if (ct__is_half(q->p->dtype)) {
        if (!ct__optim_update_half(opt, g, q)) {
            return false;
        }
        ct__optim_updated(opt, g, q);
        return true;
    }
    const ct_tensor *in[5] = {q->p, q->p->grad, q->state[0], q->state[1], q->state[2]};
    ct_op_call c;
    if (opt->kind == CT__OPTIM_SGD) {
        ct__call_init(&c, &ct__op_fused_sgd_, op, in, 3);
        ct__call_f(&c, g->weight_decay);
        ct__call_f(&c, g->momentum);
        ct__call_f(&c, g->lr);
        ct__call_f(&c, g->dampening);
        ct__call_i(&c, g->nesterov);
        ct__call_i(&c, g->maximize);
        ct__call_i(&c, !q->has_state);
    } else if (opt->kind == CT__OPTIM_ADAM || opt->kind == CT__OPTIM_ADAMW) {
        ct__call_init(&c, opt->kind == CT__OPTIM_ADAM ? &ct__op_fused_adam_ : &ct__op_fused_adamw_,
                      op, in, 5);
        ct__call_f(&c, g->lr);
        ct__call_f(&c, g->beta1);
        ct__call_f(&c, g->beta2);
        ct__call_f(&c, g->weight_decay);
        ct__call_f(&c, g->eps);
        ct__call_i(&c, g->amsgrad);
        ct__call_i(&c, g->maximize);
        ct__call_i(&c, q->step + 1);
    } else {
        int n_in = 2;
        while (n_in < 5 && ct__optim_kinds[opt->kind].state[n_in - 2]) {
            n_in++;
        }
        ct__call_init(&c, NULL, op, in, n_in); /* the op comes with its attributes */
        c.op = ct__optim_fused_op(&c, opt->kind, g);
        c.state = q;
    }
    if (!ct__dispatch(&c)) {
        return false;
    }
    ct__optim_updated(opt, g, q);
    return true;
}

static ct_status ct__optim_step(ct_optimizer *opt)
{
    const char *op = "ct_optimizer_step";
    /* validate every gradient and allocate every state first: a failure changes nothing */
    for (int64_t gi = 0; gi < opt->n_groups; gi++) {
        const ct__optim_group *g = &opt->groups[gi];
        for (int64_t i = g->first; i < g->first + g->count; i++) {
            ct__optim_param *q = &opt->params[i];
            const ct_tensor *p = q->p, *grad = p->grad;
            if (!grad) {
                continue;
            }
            if (grad->ndim != p->ndim ||
                memcmp(grad->sizes, p->sizes, sizeof(int64_t) * (size_t)p->ndim) != 0) {
                char a[128], b[128];
                return ct__fail(CT_ERR_SHAPE, op, "the grad of parameter %lld has shape %s, "
                                "expected %s", (long long)i,
                                ct__shape_str(grad->sizes, grad->ndim, a, sizeof a),
                                ct__shape_str(p->sizes, p->ndim, b, sizeof b));
            }
            if (!ct__check_cpu(op, grad)) {
                return ct_error_code();
            }
            if (!ct__optim_alloc_state(op, opt, g, q)) {
                return ct_error_code();
            }
        }
    }
    /* in place on leaves that require grad, as torch.optim's step under no_grad */
    ct_no_grad_begin();
    bool ok = true;
    for (int64_t gi = 0; ok && gi < opt->n_groups; gi++) {
        const ct__optim_group *g = &opt->groups[gi];
        for (int64_t i = g->first; ok && i < g->first + g->count; i++) {
            ct__optim_param *q = &opt->params[i];
            ok = !q->p->grad || ct__optim_update(op, opt, g, q);
        }
    }
    ct_no_grad_end();
    if (!ok) {
        return ct_error_code();
    }
    opt->steps++;
    return CT_OK;
}

ct_status ct_optimizer_step(ct_optimizer *opt)
{
    if (ct__null("ct_optimizer_step", opt)) {
        return ct_error_code();
    }
    ct__profiler_range_begin(false, "Optimizer.step#%s.step", ct_optimizer_name(opt));
    ct_status st = ct__optim_step(opt);
    ct__profiler_range_end();
    return st;
}

/* ---- state_dict -------------------------------------------------------------------------
 * PyTorch's Optimizer.state_dict() flattened to dotted keys (documented at the declaration).
 * The hyperparameters each optimizer keeps in its param_groups, in PyTorch's key order: a
 * field of ct__optim_group, whether it is a bool (saved as int 0/1) and the kinds it
 * belongs to (a bit per CT__OPTIM_ kind). */
#define CT__OPTIM_BIT(k) (1u << (k))
#define CT__OPTIM_BETAS                                                                        \
    (CT__OPTIM_BIT(CT__OPTIM_ADAM) | CT__OPTIM_BIT(CT__OPTIM_ADAMW) |                          \
     CT__OPTIM_BIT(CT__OPTIM_ADAMAX) | CT__OPTIM_BIT(CT__OPTIM_NADAM) |                        \
     CT__OPTIM_BIT(CT__OPTIM_RADAM))
#define CT__OPTIM_ALL 0xffffu

typedef struct ct__optim_hp {
    const char *name;
    size_t offset;
    bool flag;
    unsigned kinds;
} ct__optim_hp;

static const ct__optim_hp ct__optim_hps[] = {
    {"lr", offsetof(ct__optim_group, lr), false, CT__OPTIM_ALL},
    {"momentum", offsetof(ct__optim_group, momentum), false,
     CT__OPTIM_BIT(CT__OPTIM_SGD) | CT__OPTIM_BIT(CT__OPTIM_RMSPROP)},
    {"dampening", offsetof(ct__optim_group, dampening), false, CT__OPTIM_BIT(CT__OPTIM_SGD)},
    {"alpha", offsetof(ct__optim_group, alpha), false, CT__OPTIM_BIT(CT__OPTIM_RMSPROP)},
    {"rho", offsetof(ct__optim_group, rho), false, CT__OPTIM_BIT(CT__OPTIM_ADADELTA)},
    {"lr_decay", offsetof(ct__optim_group, lr_decay), false, CT__OPTIM_BIT(CT__OPTIM_ADAGRAD)},
    {"betas.0", offsetof(ct__optim_group, beta1), false, CT__OPTIM_BETAS},
    {"betas.1", offsetof(ct__optim_group, beta2), false, CT__OPTIM_BETAS},
    {"eps", offsetof(ct__optim_group, eps), false, CT__OPTIM_ALL & ~CT__OPTIM_BIT(CT__OPTIM_SGD)},
    {"weight_decay", offsetof(ct__optim_group, weight_decay), false, CT__OPTIM_ALL},
    {"initial_accumulator_value", offsetof(ct__optim_group, initial_accumulator_value), false,
     CT__OPTIM_BIT(CT__OPTIM_ADAGRAD)},
    {"momentum_decay", offsetof(ct__optim_group, momentum_decay), false,
     CT__OPTIM_BIT(CT__OPTIM_NADAM)},
    {"nesterov", offsetof(ct__optim_group, nesterov), true, CT__OPTIM_BIT(CT__OPTIM_SGD)},
    {"amsgrad", offsetof(ct__optim_group, amsgrad), true,
     CT__OPTIM_BIT(CT__OPTIM_ADAM) | CT__OPTIM_BIT(CT__OPTIM_ADAMW)},
    {"centered", offsetof(ct__optim_group, centered), true, CT__OPTIM_BIT(CT__OPTIM_RMSPROP)},
    {"decoupled_weight_decay", offsetof(ct__optim_group, decoupled), true,
     CT__OPTIM_BIT(CT__OPTIM_NADAM) | CT__OPTIM_BIT(CT__OPTIM_RADAM)},
    {"maximize", offsetof(ct__optim_group, maximize), true, CT__OPTIM_ALL},
};

/* Whether the optimizer keeps a float32 0-dim "step" tensor per parameter (all but SGD). */
static bool ct__optim_has_step(int kind)
{
    return kind != CT__OPTIM_SGD;
}

/* sd[key] = a new float32 0-dim tensor holding v (torch.optim's step and mu_product). */
static bool ct__optim_put_scalar(ct_state_dict *sd, const char *key, double v)
{
    ct_tensor *t = ct__tensor_new("ct_optimizer_state_dict", NULL, 0, CT_FLOAT32);
    if (!t) {
        return false;
    }
    *(float *)ct__data(t) = (float)v;
    ct_status st = ct_state_dict_set(sd, key, t);
    ct__release(t);
    return st == CT_OK;
}

/* Writes "state.<i>.*" for parameter i (nothing before its first update, as PyTorch). */
static bool ct__optim_state_out(const ct_optimizer *opt, int64_t i, ct_state_dict *sd)
{
    const ct__optim_param *q = &opt->params[i];
    if (!q->has_state) {
        return true;
    }
    char key[96];
    if (ct__optim_has_step(opt->kind)) {
        snprintf(key, sizeof key, "state.%lld.step", (long long)i);
        if (!ct__optim_put_scalar(sd, key, (double)q->step)) {
            return false;
        }
    }
    if (opt->kind == CT__OPTIM_NADAM) {
        snprintf(key, sizeof key, "state.%lld.mu_product", (long long)i);
        if (!ct__optim_put_scalar(sd, key, q->mu_product)) {
            return false;
        }
    }
    for (int k = 0; k < 3; k++) {
        if (!q->state[k]) {
            continue;
        }
        snprintf(key, sizeof key, "state.%lld.%s", (long long)i,
                 ct__optim_kinds[opt->kind].state[k]);
        if (ct_state_dict_set(sd, key, q->state[k]) != CT_OK) {
            return false;
        }
    }
    return true;
}

/* Writes "param_groups.<gi>.*": the hyperparameters, initial_lr once a scheduler set it,
   and the indices of the group's parameters. */
static bool ct__optim_group_out(const ct_optimizer *opt, int64_t gi, ct_state_dict *sd)
{
    const ct__optim_group *g = &opt->groups[gi];
    char key[96];
    bool ok = true;
    for (size_t h = 0; ok && h < sizeof ct__optim_hps / sizeof ct__optim_hps[0]; h++) {
        const ct__optim_hp *hp = &ct__optim_hps[h];
        if (!(hp->kinds & CT__OPTIM_BIT(opt->kind))) {
            continue;
        }
        snprintf(key, sizeof key, "param_groups.%lld.%s", (long long)gi, hp->name);
        const char *field = (const char *)g + hp->offset;
        ok = (hp->flag ? ct_state_dict_set_int(sd, key, *(const bool *)field)
                       : ct_state_dict_set_double(sd, key, *(const double *)field)) == CT_OK;
    }
    if (ok && !isnan(g->initial_lr)) {
        snprintf(key, sizeof key, "param_groups.%lld.initial_lr", (long long)gi);
        ok = ct_state_dict_set_double(sd, key, g->initial_lr) == CT_OK;
    }
    for (int64_t k = 0; ok && k < g->count; k++) {
        snprintf(key, sizeof key, "param_groups.%lld.params.%lld", (long long)gi, (long long)k);
        ok = ct_state_dict_set_int(sd, key, g->first + k) == CT_OK;
    }
    return ok;
}

ct_state_dict *ct_optimizer_state_dict(const ct_optimizer *opt)
{
    if (ct__null("ct_optimizer_state_dict", opt)) {
        return NULL;
    }
    ct_state_dict *sd = ct_state_dict_new();
    bool ok = sd != NULL;
    for (int64_t i = 0; ok && i < opt->n_params; i++) {
        ok = ct__optim_state_out(opt, i, sd);
    }
    for (int64_t gi = 0; ok && gi < opt->n_groups; gi++) {
        ok = ct__optim_group_out(opt, gi, sd);
    }
    if (!ok) {
        ct_state_dict_free(sd);
        return NULL;
    }
    return sd;
}

/* The number of entries "<prefix>0", "<prefix>1", ... with an int value. */
static int64_t ct__optim_count(const ct_state_dict *sd, const char *prefix)
{
    char key[96];
    int64_t n = 0, v;
    for (;; n++) {
        snprintf(key, sizeof key, "%s%lld", prefix, (long long)n);
        if (!ct_state_dict_get_int(sd, key, &v)) {
            return n;
        }
    }
}

/* The saved index of the k-th parameter of group gi (validated by ct__optim_check_sd). */
static int64_t ct__optim_saved_id(const ct_state_dict *sd, int64_t gi, int64_t k)
{
    char key[96];
    int64_t id = -1;
    snprintf(key, sizeof key, "param_groups.%lld.params.%lld", (long long)gi, (long long)k);
    ct_state_dict_get_int(sd, key, &id);
    return id;
}

/* The state tensor "state.<id>.<name>" if it fits parameter p (its shape), else NULL;
   *bad is set when it is there but does not fit. */
static const ct_tensor *ct__optim_saved_state(const ct_state_dict *sd, int64_t id,
                                              const char *name, const ct_tensor *p, bool *bad)
{
    char key[128];
    snprintf(key, sizeof key, "state.%lld.%s", (long long)id, name);
    const ct_tensor *t = ct_state_dict_get(sd, key);
    if (t && (t->ndim != p->ndim ||
              memcmp(t->sizes, p->sizes, sizeof(int64_t) * (size_t)p->ndim) != 0)) {
        *bad = true;
        return NULL;
    }
    return t;
}

/* PyTorch's checks of load_state_dict before anything changes: the group count, each group's
   size, the state tensors' shapes. */
static bool ct__optim_check_sd(const char *op, const ct_optimizer *opt, const ct_state_dict *sd)
{
    char prefix[64];
    int64_t n_groups = 0;
    for (;; n_groups++) {
        snprintf(prefix, sizeof prefix, "param_groups.%lld.params.", (long long)n_groups);
        if (ct__optim_count(sd, prefix) == 0) {
            break;
        }
    }
    if (n_groups != opt->n_groups) {
        ct__fail(CT_ERR_VALUE, op, "loaded state dict has a different number of parameter groups");
        return false;
    }
    for (int64_t gi = 0; gi < n_groups; gi++) {
        snprintf(prefix, sizeof prefix, "param_groups.%lld.params.", (long long)gi);
        if (ct__optim_count(sd, prefix) != opt->groups[gi].count) {
            ct__fail(CT_ERR_VALUE, op, "loaded state dict contains a parameter group that "
                     "doesn't match the size of optimizer's group");
            return false;
        }
    }
    for (int64_t gi = 0; gi < n_groups; gi++) {
        const ct__optim_group *g = &opt->groups[gi];
        for (int64_t k = 0; k < g->count; k++) {
            const ct_tensor *p = opt->params[g->first + k].p;
            int64_t id = ct__optim_saved_id(sd, gi, k);
            for (int s = 0; s < 3 && ct__optim_kinds[opt->kind].state[s]; s++) {
                bool bad = false;
                ct__optim_saved_state(sd, id, ct__optim_kinds[opt->kind].state[s], p, &bad);
                if (bad) {
                    char a[128];
                    ct__fail(CT_ERR_SHAPE, op, "state '%s' of parameter %lld does not match "
                             "the parameter's shape %s", ct__optim_kinds[opt->kind].state[s],
                             (long long)id, ct__shape_str(p->sizes, p->ndim, a, sizeof a));
                    return false;
                }
            }
        }
    }
    return true;
}

/* Reads a saved step or mu_product: a 0-dim tensor (PyTorch's) or a number; false when
   absent. */
static bool ct__optim_saved_number(const ct_state_dict *sd, int64_t id, const char *name,
                                   double *v)
{
    char key[96];
    snprintf(key, sizeof key, "state.%lld.%s", (long long)id, name);
    const ct_tensor *t = ct_state_dict_get(sd, key);
    if (t && ct_numel(t) == 1) {
        *v = ct_item(t);
        return true;
    }
    return !t && ct_state_dict_get_double(sd, key, v);
}

/* Replaces parameter q's state with the saved one of id (state tensors copied, converted to
   the parameter's dtype as PyTorch's _process_value_according_to_param_policy); false on
   OOM (q keeps what it had). */
static bool ct__optim_state_in(const char *op, const ct_optimizer *opt, ct__optim_param *q,
                               const ct_state_dict *sd, int64_t id)
{
    ct_tensor *fresh[3] = {NULL, NULL, NULL};
    bool any = false, bad = false;
    for (int k = 0; k < 3; k++) {
        const char *name = ct__optim_kinds[opt->kind].state[k];
        const ct_tensor *t = name ? ct__optim_saved_state(sd, id, name, q->p, &bad) : NULL;
        if (t && !(fresh[k] = ct__optim_contiguous(op, t, q->p->dtype))) {
            for (int j = 0; j < k; j++) {
                ct__release(fresh[j]);
            }
            return false;
        }
        any = any || t;
    }
    double step = 0.0, mu = 1.0;
    bool has_step = ct__optim_saved_number(sd, id, "step", &step);
    ct__optim_saved_number(sd, id, "mu_product", &mu);
    for (int k = 0; k < 3; k++) {
        ct__release(q->state[k]);
        q->state[k] = fresh[k];
    }
    q->step = (int64_t)step;
    q->mu_product = mu;
    q->has_state = any || has_step;
    return true;
}

/* Sets group gi's hyperparameters from the saved ones present (PyTorch replaces the group's
   dict by the saved one, keeping only its params); initial_lr is unset when not saved. */
static void ct__optim_group_in(ct_optimizer *opt, int64_t gi, const ct_state_dict *sd)
{
    ct__optim_group *g = &opt->groups[gi];
    char key[96];
    for (size_t h = 0; h < sizeof ct__optim_hps / sizeof ct__optim_hps[0]; h++) {
        const ct__optim_hp *hp = &ct__optim_hps[h];
        double v;
        snprintf(key, sizeof key, "param_groups.%lld.%s", (long long)gi, hp->name);
        if (!(hp->kinds & CT__OPTIM_BIT(opt->kind)) || !ct_state_dict_get_double(sd, key, &v)) {
            continue;
        }
        char *field = (char *)g + hp->offset;
        if (hp->flag) {
            *(bool *)field = v != 0.0;
        } else {
            *(double *)field = v;
        }
    }
    snprintf(key, sizeof key, "param_groups.%lld.initial_lr", (long long)gi);
    if (!ct_state_dict_get_double(sd, key, &g->initial_lr)) {
        g->initial_lr = NAN;
    }
}

ct_status ct_optimizer_load_state_dict(ct_optimizer *opt, const ct_state_dict *sd)
{
    const char *op = "ct_optimizer_load_state_dict";
    if (ct__null(op, opt) || ct__null(op, sd) || !ct__optim_check_sd(op, opt, sd)) {
        return ct_error_code();
    }
    for (int64_t gi = 0; gi < opt->n_groups; gi++) {
        const ct__optim_group *g = &opt->groups[gi];
        for (int64_t k = 0; k < g->count; k++) {
            int64_t id = ct__optim_saved_id(sd, gi, k);
            if (!ct__optim_state_in(op, opt, &opt->params[g->first + k], sd, id)) {
                return ct_error_code();
            }
        }
        ct__optim_group_in(opt, gi, sd);
    }
    return CT_OK;
}

#undef CT__OPTIM_BIT
#undef CT__OPTIM_BETAS
#undef CT__OPTIM_ALL

#ifdef CT__OPTIM_VEC
#undef CT__OPTIM_VEC
#undef CT__OPTIM_N_f32
#undef CT__OPTIM_N_f64
#undef CT__OPTIM_LD_f32
#undef CT__OPTIM_LD_f64
#undef CT__OPTIM_ST_f32
#undef CT__OPTIM_ST_f64
#undef CT__OPTIM_SET_f32
#undef CT__OPTIM_SET_f64
#undef CT__OPTIM_ADD_f32
#undef CT__OPTIM_ADD_f64
#undef CT__OPTIM_SUB_f32
#undef CT__OPTIM_SUB_f64
#undef CT__OPTIM_MUL_f32
#undef CT__OPTIM_MUL_f64
#undef CT__OPTIM_DIV_f32
#undef CT__OPTIM_DIV_f64
#undef CT__OPTIM_SQRT_f32
#undef CT__OPTIM_SQRT_f64
#endif
CT__GLUE_END
CT__VECTORIZE_END
