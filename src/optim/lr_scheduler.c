/* optim/lr_scheduler.c - torch.optim.lr_scheduler: one struct for every scheduler, stepped
 * as PyTorch's LRScheduler.step: last_epoch += 1, each group's lr = get_lr(group), then
 * last_lr = the groups' lrs. get_lr is each class's recursive form, written expression for
 * expression as PyTorch's Python (same operand order, in double); a product that feeds an
 * addition is rounded first (ct__lrs_mul), so no -ffp-contract setting fuses it.
 *
 * Per-group values (v, CT__LRS_NV per group): BASE = base_lrs (from the group's
 * initial_lr); MAX_LR, MIN_LR (OneCycleLR; MIN_LR is ReduceLROnPlateau's min_lr too);
 * MAX_M, BASE_M (OneCycleLR's and CyclicLR's max_momentum and base_momentum). These and the
 * scalar fields below are what a scheduler's state_dict holds in PyTorch (last_epoch,
 * _step_count, base_lrs, _last_lr, T_cur, best, num_bad_epochs, ...).
 */
#include "../core/internal.h"
#include "../nn/state_dict.h"
#include "optim.h"
#include "lr_scheduler.h"
#include "optim_internal.h"

CT__GLUE_BEGIN

enum {
    CT__LRS_STEP = 1,
    CT__LRS_MULTI_STEP,
    CT__LRS_EXPONENTIAL,
    CT__LRS_COSINE,
    CT__LRS_WARM_RESTARTS,
    CT__LRS_LINEAR,
    CT__LRS_CONSTANT,
    CT__LRS_POLYNOMIAL,
    CT__LRS_LAMBDA,
    CT__LRS_MULTIPLICATIVE,
    CT__LRS_ONE_CYCLE,
    CT__LRS_CYCLIC,
    CT__LRS_PLATEAU,
    CT__LRS_SEQUENTIAL,
    CT__LRS_CHAINED,
    CT__LRS_EXTERNAL /* get_lr from another part (ct__lr_scheduler_custom_new) */
};

enum { CT__LRS_BASE, CT__LRS_MAX_LR, CT__LRS_MIN_LR, CT__LRS_MAX_M, CT__LRS_BASE_M, CT__LRS_NV };

/* CyclicLR's scale functions (mode), CT__LRS_CUSTOM: the user's scale_fn. */
enum { CT__LRS_TRIANGULAR, CT__LRS_TRIANGULAR2, CT__LRS_EXP_RANGE, CT__LRS_CUSTOM };

/* A OneCycleLR phase: up to end_step, lr and momentum anneal between the per-group values
   at the indices (CT__LRS_BASE ...). */
typedef struct ct__lrs_phase {
    double end_step;
    int start_lr, end_lr, start_m, end_m;
} ct__lrs_phase;

struct ct_lr_scheduler {
    int kind;
    ct_optimizer *opt; /* borrowed */
    int64_t n_groups;
    double *v;       /* n_groups x CT__LRS_NV (see the legend) */
    double *last_lr; /* n_groups */
    int64_t last_epoch, step_count;
    bool initial; /* inside the construction step (PyTorch's _is_initial) */
    /* StepLR .. PolynomialLR: gamma, factor (ConstantLR; LinearLR's start_factor),
       end_factor, power, eta_min; period = step_size, T_max, total_iters or T_0 */
    double gamma, factor, end_factor, power, eta_min;
    int64_t period;
    int64_t t_i, t_mult, t_cur; /* CosineAnnealingWarmRestarts */
    int64_t *milestones;        /* MultiStepLR, SequentialLR */
    int64_t n_milestones;
    ct_lr_lambda_fn fn; /* LambdaLR, MultiplicativeLR */
    void *user;
    ct__lrs_get_lr_fn get_lr; /* CT__LRS_EXTERNAL, owning user (user_free) */
    void (*user_free)(void *user);
    /* OneCycleLR and CyclicLR */
    ct__lrs_phase phases[3];
    int n_phases;
    bool cos_anneal, cycle_momentum;
    int64_t total_steps;
    double total_size, step_ratio;
    int scale_mode; /* CT__LRS_TRIANGULAR ... */
    bool scale_iterations;
    double (*scale_fn)(double x, void *user);
    /* ReduceLROnPlateau */
    bool mode_max, threshold_abs;
    double threshold, best, eps;
    int64_t patience, cooldown, cooldown_counter, num_bad_epochs;
    /* SequentialLR, ChainedScheduler (borrowed) */
    ct_lr_scheduler **subs;
    int64_t n_subs;
};

/* math.pi */
#define CT__LRS_PI 3.141592653589793

/* x*y rounded by itself (an fma with a zero addend): Python rounds every product. */
static double ct__lrs_mul(double x, double y)
{
    return fma(x, y, 0.0);
}

/* Python's a % b for b > 0 (the result has b's sign). */
static int64_t ct__lrs_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* ---- defaults ---------------------------------------------------------------------------- */
ct_one_cycle_lr_opts ct_one_cycle_lr_defaults(void)
{
    ct_one_cycle_lr_opts o;
    memset(&o, 0, sizeof o);
    o.pct_start = 0.3;
    o.anneal_strategy = "cos";
    o.cycle_momentum = true;
    o.base_momentum = 0.85;
    o.max_momentum = 0.95;
    o.div_factor = 25.0;
    o.final_div_factor = 1e4;
    return o;
}

ct_cyclic_lr_opts ct_cyclic_lr_defaults(void)
{
    ct_cyclic_lr_opts o;
    memset(&o, 0, sizeof o);
    o.step_size_up = 2000;
    o.mode = "triangular";
    o.gamma = 1.0;
    o.scale_mode = "cycle";
    o.cycle_momentum = true;
    o.base_momentum = 0.8;
    o.max_momentum = 0.9;
    return o;
}

ct_reduce_lr_on_plateau_opts ct_reduce_lr_on_plateau_defaults(void)
{
    ct_reduce_lr_on_plateau_opts o;
    memset(&o, 0, sizeof o);
    o.mode = "min";
    o.factor = 0.1;
    o.patience = 10;
    o.threshold = 1e-4;
    o.threshold_mode = "rel";
    o.eps = 1e-8;
    return o;
}

/* ---- construction ------------------------------------------------------------------------ */
void ct_lr_scheduler_free(ct_lr_scheduler *s)
{
    if (!s) {
        return;
    }
    ct__free(s->v);
    ct__free(s->last_lr);
    ct__free(s->milestones);
    ct__free(s->subs);
    if (s->user_free) {
        s->user_free(s->user);
    }
    ct__free(s);
}

/* A scheduler of kind for opt with its per-group arrays (zeroed), last_epoch -1; NULL after
   an error. */
static ct_lr_scheduler *ct__lrs_alloc(const char *op, ct_optimizer *opt, int kind)
{
    if (ct__null(op, opt)) {
        return NULL;
    }
    int64_t n = ct_optimizer_num_param_groups(opt);
    ct_lr_scheduler *s = (ct_lr_scheduler *)ct__calloc(sizeof(ct_lr_scheduler));
    if (s) {
        s->v = (double *)ct__calloc(sizeof(double) * (size_t)(n * CT__LRS_NV));
        s->last_lr = (double *)ct__calloc(sizeof(double) * (size_t)n);
    }
    if (!s || !s->v || !s->last_lr) {
        ct_lr_scheduler_free(s);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->kind = kind;
    s->opt = opt;
    s->n_groups = n;
    s->last_epoch = -1;
    return s;
}

/* last_lr = the groups' current lrs. */
static void ct__lrs_read_lrs(ct_lr_scheduler *s)
{
    for (int64_t g = 0; g < s->n_groups; g++) {
        s->last_lr[g] = ct_optimizer_get_lr(s->opt, g);
    }
}

/* Fails unless the optimizer still has the groups the scheduler was built for. */
static bool ct__lrs_groups_ok(const char *op, const ct_lr_scheduler *s)
{
    int64_t n = ct_optimizer_num_param_groups(s->opt);
    if (n != s->n_groups) {
        ct__fail(CT_ERR_VALUE, op, "the optimizer has %lld param groups, the scheduler was "
                 "built for %lld", (long long)n, (long long)s->n_groups);
        return false;
    }
    return true;
}

/* ---- get_lr -------------------------------------------------------------------------------- */
static double ct__lrs_anneal(const ct_lr_scheduler *s, double start, double end, double pct)
{
    if (s->cos_anneal) {
        double cos_out = cos(CT__LRS_PI * pct) + 1;
        return end + ct__lrs_mul((start - end) / 2.0, cos_out);
    }
    return ct__lrs_mul(end - start, pct) + start;
}

/* OneCycleLR's lr of group g (and its momentum into *m). */
static double ct__lrs_one_cycle(const ct_lr_scheduler *s, int64_t g, double *m)
{
    const double *v = s->v + g * CT__LRS_NV;
    double step = (double)s->last_epoch, start = 0.0;
    for (int i = 0; i < s->n_phases; i++) {
        const ct__lrs_phase *ph = &s->phases[i];
        if (step <= ph->end_step || i == s->n_phases - 1) {
            double pct = (step - start) / (ph->end_step - start);
            *m = ct__lrs_anneal(s, v[ph->start_m], v[ph->end_m], pct);
            return ct__lrs_anneal(s, v[ph->start_lr], v[ph->end_lr], pct);
        }
        start = ph->end_step;
    }
    return NAN; /* unreachable: the last phase always matches */
}

/* CyclicLR's scale function at x. */
static double ct__lrs_scale(const ct_lr_scheduler *s, double x)
{
    switch (s->scale_mode) {
    case CT__LRS_TRIANGULAR:
        return 1.0;
    case CT__LRS_TRIANGULAR2:
        return 1 / pow(2.0, x - 1);
    case CT__LRS_EXP_RANGE:
        return pow(s->gamma, x);
    default:
        return s->scale_fn(x, s->user);
    }
}

/* CyclicLR's lr of group g (and its momentum into *m). */
static double ct__lrs_cyclic(const ct_lr_scheduler *s, int64_t g, double *m)
{
    const double *v = s->v + g * CT__LRS_NV;
    double e = (double)s->last_epoch;
    double cycle = floor(1 + e / s->total_size);
    double x = 1.0 + e / s->total_size - cycle;
    double sf = x <= s->step_ratio ? x / s->step_ratio : (x - 1) / (s->step_ratio - 1);
    double scale = ct__lrs_scale(s, s->scale_iterations ? e : cycle);
    *m = v[CT__LRS_MAX_M] - ct__lrs_mul((v[CT__LRS_MAX_M] - v[CT__LRS_BASE_M]) * sf, scale);
    return v[CT__LRS_BASE] + ct__lrs_mul((v[CT__LRS_MAX_LR] - v[CT__LRS_BASE]) * sf, scale);
}

/* CosineAnnealingLR's recursive step from lr. */
static double ct__lrs_cosine(const ct_lr_scheduler *s, double lr, double base)
{
    int64_t e = s->last_epoch, T = s->period;
    if (ct__lrs_mod(e - 1 - T, 2 * T) == 0) {
        return lr + (base - s->eta_min) * (1 - cos(CT__LRS_PI / (double)T)) / 2;
    }
    double num = 1 + cos(CT__LRS_PI * (double)e / (double)T);
    double r = num / (1 + cos(CT__LRS_PI * (double)(e - 1) / (double)T));
    return ct__lrs_mul(r, lr - s->eta_min) + s->eta_min;
}

/* How many times epoch e appears in the milestones. */
static int64_t ct__lrs_count(const ct_lr_scheduler *s, int64_t e)
{
    int64_t k = 0;
    for (int64_t i = 0; i < s->n_milestones; i++) {
        k += s->milestones[i] == e;
    }
    return k;
}

/* The recursive get_lr of a group whose current lr is lr (PyTorch's get_lr). */
static double ct__lrs_get_lr(ct_lr_scheduler *s, int64_t g, double lr)
{
    int64_t e = s->last_epoch;
    double base = s->v[g * CT__LRS_NV + CT__LRS_BASE], m = 0.0;
    double te = (double)e, tn = (double)s->period;
    switch (s->kind) {
    case CT__LRS_STEP:
        return e == 0 || e % s->period != 0 ? lr : lr * s->gamma;
    case CT__LRS_MULTI_STEP:
        return ct__lrs_count(s, e) == 0 ? lr : lr * pow(s->gamma, (double)ct__lrs_count(s, e));
    case CT__LRS_EXPONENTIAL:
        return s->initial ? lr : lr * s->gamma;
    case CT__LRS_COSINE:
        return s->initial ? lr : ct__lrs_cosine(s, lr, base);
    case CT__LRS_WARM_RESTARTS:
        return s->eta_min + (base - s->eta_min) *
                                (1 + cos(CT__LRS_PI * (double)s->t_cur / (double)s->t_i)) / 2;
    case CT__LRS_LINEAR:
        if (e == 0) {
            return lr * s->factor;
        }
        if (s->initial || e > s->period) {
            return lr;
        }
        return lr * (1.0 + (s->end_factor - s->factor) /
                               (ct__lrs_mul(tn, s->factor) +
                                ct__lrs_mul(te - 1, s->end_factor - s->factor)));
    case CT__LRS_CONSTANT:
        return e == 0 ? lr * s->factor : e != s->period ? lr : lr * (1.0 / s->factor);
    case CT__LRS_POLYNOMIAL:
        if (s->initial || e > s->period) {
            return lr;
        }
        return lr * pow((1.0 - te / tn) / (1.0 - (te - 1) / tn), s->power);
    case CT__LRS_LAMBDA:
        return base * s->fn(e, g, s->user);
    case CT__LRS_MULTIPLICATIVE:
        return s->initial ? lr : lr * s->fn(e, g, s->user);
    case CT__LRS_EXTERNAL:
        return s->get_lr(s->user, s->step_count, g, lr);
    case CT__LRS_ONE_CYCLE:
        lr = ct__lrs_one_cycle(s, g, &m);
        break;
    default: /* CT__LRS_CYCLIC */
        lr = ct__lrs_cyclic(s, g, &m);
        break;
    }
    if (s->cycle_momentum) {
        ct__optim_set_momentum(s->opt, g, m);
    }
    return lr;
}

/* The closed form at last_epoch of the schedulers that have one (PyTorch's
   _get_closed_form_lr, which SequentialLR uses at a milestone); else get_lr. */
static double ct__lrs_closed_form(ct_lr_scheduler *s, int64_t g, double lr)
{
    double base = s->v[g * CT__LRS_NV + CT__LRS_BASE], te = (double)s->last_epoch;
    double tn = (double)s->period, f = s->factor, done = te < tn ? te : tn;
    switch (s->kind) {
    case CT__LRS_STEP:
        return base * pow(s->gamma, (double)(s->last_epoch / s->period));
    case CT__LRS_MULTI_STEP: {
        int64_t k = 0; /* bisect_right(sorted milestones, last_epoch) */
        for (int64_t i = 0; i < s->n_milestones; i++) {
            k += s->milestones[i] <= s->last_epoch;
        }
        return base * pow(s->gamma, (double)k);
    }
    case CT__LRS_EXPONENTIAL:
        return base * pow(s->gamma, te);
    case CT__LRS_COSINE:
        return s->eta_min + (base - s->eta_min) * (1 + cos(CT__LRS_PI * te / tn)) / 2;
    case CT__LRS_LINEAR:
        return base * (f + ct__lrs_mul(s->end_factor - f, done) / tn);
    case CT__LRS_CONSTANT:
        return base * (f + (double)(te >= tn) * (1 - f));
    case CT__LRS_POLYNOMIAL:
        return base * pow(1.0 - done / tn, s->power);
    default:
        return ct__lrs_get_lr(s, g, lr);
    }
}

/* ---- stepping ------------------------------------------------------------------------------ */
/* Sets every group's lr to get_lr (closed: the closed form) at the current last_epoch. */
static ct_status ct__lrs_apply(const char *op, ct_lr_scheduler *s, bool closed)
{
    if (!ct__lrs_groups_ok(op, s)) {
        return ct_error_code();
    }
    if (s->kind == CT__LRS_ONE_CYCLE && s->last_epoch > s->total_steps) {
        return ct__fail(CT_ERR_VALUE, op, "Tried to step %lld times. The specified number of "
                        "total steps is %lld", (long long)s->last_epoch,
                        (long long)s->total_steps);
    }
    for (int64_t g = 0; g < s->n_groups; g++) { /* computed first, as PyTorch's list */
        double lr = ct_optimizer_get_lr(s->opt, g);
        s->last_lr[g] = closed ? ct__lrs_closed_form(s, g, lr) : ct__lrs_get_lr(s, g, lr);
    }
    for (int64_t g = 0; g < s->n_groups; g++) {
        ct__optim_put_lr(s->opt, g, s->last_lr[g]);
    }
    return CT_OK;
}

/* CosineAnnealingWarmRestarts.step(): epoch 0 on the first call, else T_cur += 1 with a
   restart (T_i *= T_mult) when it reaches T_i. */
static void ct__lrs_warm_restarts_advance(ct_lr_scheduler *s)
{
    if (s->last_epoch < 0) {
        s->t_i = s->period;
        s->t_cur = 0;
        s->last_epoch = 0;
        return;
    }
    s->last_epoch++;
    s->t_cur++;
    if (s->t_cur >= s->t_i) {
        s->t_cur = s->t_cur % s->t_i;
        s->t_i = s->t_i * s->t_mult;
    }
}

static ct_status ct__lrs_step(const char *op, ct_lr_scheduler *s);

/* SequentialLR.step(): the scheduler of the current milestone interval steps; at a milestone
   it restarts at epoch 0 (its closed form, else get_lr). */
static ct_status ct__lrs_sequential_step(const char *op, ct_lr_scheduler *s)
{
    s->last_epoch++;
    int64_t idx = 0;
    while (idx < s->n_milestones && s->milestones[idx] <= s->last_epoch) {
        idx++;
    }
    ct_lr_scheduler *sub = s->subs[idx];
    ct_status st = CT_OK;
    if (idx > 0 && s->milestones[idx - 1] == s->last_epoch && !sub->subs) {
        sub->last_epoch = 0;
        st = ct__lrs_apply(op, sub, true);
    } else {
        st = ct__lrs_step(op, sub);
    }
    memcpy(s->last_lr, sub->last_lr, sizeof(double) * (size_t)s->n_groups);
    return st;
}

/* One step of any scheduler but ReduceLROnPlateau. */
static ct_status ct__lrs_step(const char *op, ct_lr_scheduler *s)
{
    switch (s->kind) {
    case CT__LRS_PLATEAU:
        return ct__fail(CT_ERR_VALUE, op, "ReduceLROnPlateau.step() needs the metric: use "
                        "ct_reduce_lr_on_plateau_step");
    case CT__LRS_SEQUENTIAL:
        return ct__lrs_sequential_step(op, s);
    case CT__LRS_CHAINED:
        for (int64_t i = 0; i < s->n_subs; i++) {
            if (ct__lrs_step(op, s->subs[i]) != CT_OK) {
                return ct_error_code();
            }
        }
        ct__lrs_read_lrs(s);
        return CT_OK;
    case CT__LRS_WARM_RESTARTS:
        ct__lrs_warm_restarts_advance(s);
        return ct__lrs_apply(op, s, false);
    default:
        s->step_count++;
        s->last_epoch++;
        return ct__lrs_apply(op, s, false);
    }
}

/* PyTorch's _initial_step: a step in initial mode with the step count reset. */
static ct_status ct__lrs_initial_step(const char *op, ct_lr_scheduler *s)
{
    s->step_count = 0;
    s->initial = true;
    ct_status st = ct__lrs_step(op, s);
    s->initial = false;
    return st;
}

/* LRScheduler.__init__ (last_epoch -1): base lrs from the groups' initial_lr (set to the
   current lr where unset), then the initial step. Frees s and returns NULL after an error. */
static ct_lr_scheduler *ct__lrs_start(const char *op, ct_lr_scheduler *s)
{
    for (int64_t g = 0; g < s->n_groups; g++) {
        s->v[g * CT__LRS_NV + CT__LRS_BASE] = ct__optim_initial_lr(s->opt, g);
    }
    if (ct__lrs_initial_step(op, s) != CT_OK) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    return s;
}

ct_status ct_lr_scheduler_step(ct_lr_scheduler *s)
{
    const char *op = "ct_lr_scheduler_step";
    if (ct__null(op, s)) {
        return ct_error_code();
    }
    return ct__lrs_step(op, s);
}

/* ---- the simple schedulers ----------------------------------------------------------------- */
ct_lr_scheduler *ct_step_lr_new(ct_optimizer *opt, int64_t step_size, double gamma)
{
    const char *op = "ct_step_lr_new";
    if (ct__null(op, opt)) {
        return NULL;
    }
    if (step_size < 1) {
        ct__fail(CT_ERR_VALUE, op, "step_size must be a positive integer, got %lld",
                 (long long)step_size);
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_STEP);
    if (!s) {
        return NULL;
    }
    s->period = step_size;
    s->gamma = gamma;
    return ct__lrs_start(op, s);
}

/* A copy of n int64 values into *dst (NULL for n 0); false after an error. */
static bool ct__lrs_copy_ints(const char *op, int64_t **dst, const int64_t *src, int64_t n)
{
    if (n > 0 && ct__null(op, src)) {
        return false;
    }
    if (n <= 0) {
        return true;
    }
    *dst = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!*dst) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return false;
    }
    memcpy(*dst, src, sizeof(int64_t) * (size_t)n);
    return true;
}

ct_lr_scheduler *ct_multi_step_lr_new(ct_optimizer *opt, const int64_t *milestones, int64_t n,
                                      double gamma)
{
    const char *op = "ct_multi_step_lr_new";
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_MULTI_STEP);
    if (!s) {
        return NULL;
    }
    if (!ct__lrs_copy_ints(op, &s->milestones, milestones, n)) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    s->n_milestones = n > 0 ? n : 0;
    s->gamma = gamma;
    return ct__lrs_start(op, s);
}

ct_lr_scheduler *ct_exponential_lr_new(ct_optimizer *opt, double gamma)
{
    ct_lr_scheduler *s = ct__lrs_alloc("ct_exponential_lr_new", opt, CT__LRS_EXPONENTIAL);
    if (!s) {
        return NULL;
    }
    s->gamma = gamma;
    return ct__lrs_start("ct_exponential_lr_new", s);
}

ct_lr_scheduler *ct_cosine_annealing_lr_new(ct_optimizer *opt, int64_t T_max, double eta_min)
{
    const char *op = "ct_cosine_annealing_lr_new";
    if (ct__null(op, opt)) {
        return NULL;
    }
    if (T_max < 1) {
        ct__fail(CT_ERR_VALUE, op, "T_max must be a positive integer, got %lld",
                 (long long)T_max);
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_COSINE);
    if (!s) {
        return NULL;
    }
    s->period = T_max;
    s->eta_min = eta_min;
    return ct__lrs_start(op, s);
}

ct_lr_scheduler *ct_cosine_annealing_warm_restarts_new(ct_optimizer *opt, int64_t T_0,
                                                       int64_t T_mult, double eta_min)
{
    const char *op = "ct_cosine_annealing_warm_restarts_new";
    if (ct__null(op, opt)) {
        return NULL;
    }
    if (T_0 <= 0) {
        ct__fail(CT_ERR_VALUE, op, "Expected positive integer T_0, but got %lld",
                 (long long)T_0);
        return NULL;
    }
    if (T_mult < 1) {
        ct__fail(CT_ERR_VALUE, op, "Expected integer T_mult >= 1, but got %lld",
                 (long long)T_mult);
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_WARM_RESTARTS);
    if (!s) {
        return NULL;
    }
    s->period = T_0;
    s->t_i = T_0;
    s->t_mult = T_mult;
    s->t_cur = -1;
    s->eta_min = eta_min;
    return ct__lrs_start(op, s);
}

ct_lr_scheduler *ct_linear_lr_new(ct_optimizer *opt, double start_factor, double end_factor,
                                  int64_t total_iters)
{
    const char *op = "ct_linear_lr_new";
    if (ct__null(op, opt)) {
        return NULL;
    }
    if (start_factor > 1.0 || start_factor <= 0) {
        ct__fail(CT_ERR_VALUE, op, "Starting multiplicative factor expected to be greater "
                 "than 0 and less or equal to 1.");
        return NULL;
    }
    if (end_factor > 1.0 || end_factor < 0) {
        ct__fail(CT_ERR_VALUE, op, "Ending multiplicative factor expected to be between 0 "
                 "and 1.");
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_LINEAR);
    if (!s) {
        return NULL;
    }
    s->factor = start_factor;
    s->end_factor = end_factor;
    s->period = total_iters;
    return ct__lrs_start(op, s);
}

ct_lr_scheduler *ct_constant_lr_new(ct_optimizer *opt, double factor, int64_t total_iters)
{
    const char *op = "ct_constant_lr_new";
    if (ct__null(op, opt)) {
        return NULL;
    }
    if (factor > 1.0 || factor < 0) {
        ct__fail(CT_ERR_VALUE, op, "Constant multiplicative factor expected to be between 0 "
                 "and 1.");
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_CONSTANT);
    if (!s) {
        return NULL;
    }
    s->factor = factor;
    s->period = total_iters;
    return ct__lrs_start(op, s);
}

ct_lr_scheduler *ct_polynomial_lr_new(ct_optimizer *opt, int64_t total_iters, double power)
{
    ct_lr_scheduler *s = ct__lrs_alloc("ct_polynomial_lr_new", opt, CT__LRS_POLYNOMIAL);
    if (!s) {
        return NULL;
    }
    s->period = total_iters;
    s->power = power;
    return ct__lrs_start("ct_polynomial_lr_new", s);
}

static ct_lr_scheduler *ct__lrs_lambda_new(const char *op, int kind, ct_optimizer *opt,
                                           ct_lr_lambda_fn fn, void *user)
{
    if (!fn) {
        ct__fail(CT_ERR_NULL_ARG, op, "lr_lambda is NULL");
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, kind);
    if (!s) {
        return NULL;
    }
    s->fn = fn;
    s->user = user;
    return ct__lrs_start(op, s);
}

ct_lr_scheduler *ct_lambda_lr_new(ct_optimizer *opt, ct_lr_lambda_fn fn, void *user)
{
    return ct__lrs_lambda_new("ct_lambda_lr_new", CT__LRS_LAMBDA, opt, fn, user);
}

ct_lr_scheduler *ct_multiplicative_lr_new(ct_optimizer *opt, ct_lr_lambda_fn fn, void *user)
{
    return ct__lrs_lambda_new("ct_multiplicative_lr_new", CT__LRS_MULTIPLICATIVE, opt, fn, user);
}

ct_lr_scheduler *ct__lr_scheduler_custom_new(const char *op, ct_optimizer *opt,
                                             ct__lrs_get_lr_fn fn, void *user,
                                             void (*user_free)(void *user))
{
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_EXTERNAL);
    if (!s) {
        user_free(user);
        return NULL;
    }
    s->get_lr = fn;
    s->user = user;
    s->user_free = user_free;
    return ct__lrs_start(op, s);
}

/* ---- OneCycleLR and CyclicLR -------------------------------------------------------------- */
/* With cycle_momentum: checks that the optimizer has a momentum or betas and sets every
   group's to max_momentum, recording max and base momentum per group. */
static bool ct__lrs_momentum_init(const char *op, ct_lr_scheduler *s, bool cycle, double base_m,
                                  double max_m)
{
    s->cycle_momentum = cycle;
    if (!cycle) {
        return true;
    }
    if (ct__optim_momentum_kind(s->opt) == 0) {
        ct__fail(CT_ERR_VALUE, op, "optimizer must support momentum or beta1 with "
                 "`cycle_momentum` option enabled");
        return false;
    }
    for (int64_t g = 0; g < s->n_groups; g++) {
        ct__optim_set_momentum(s->opt, g, max_m);
        s->v[g * CT__LRS_NV + CT__LRS_MAX_M] = max_m;
        s->v[g * CT__LRS_NV + CT__LRS_BASE_M] = base_m;
    }
    return true;
}

static void ct__lrs_phase_set(ct__lrs_phase *ph, double end_step, int start_lr, int end_lr,
                              int start_m, int end_m)
{
    ph->end_step = end_step;
    ph->start_lr = start_lr;
    ph->end_lr = end_lr;
    ph->start_m = start_m;
    ph->end_m = end_m;
}

/* OneCycleLR's checks of opts and its phases; false after an error. */
static bool ct__lrs_one_cycle_phases(const char *op, ct_lr_scheduler *s,
                                     const ct_one_cycle_lr_opts *o)
{
    if (o->total_steps != 0) {
        if (o->total_steps < 0) {
            ct__fail(CT_ERR_VALUE, op, "Expected positive integer total_steps, but got %lld",
                     (long long)o->total_steps);
            return false;
        }
        s->total_steps = o->total_steps;
    } else if (o->epochs > 0 && o->steps_per_epoch > 0) {
        s->total_steps = o->epochs * o->steps_per_epoch;
    } else {
        ct__fail(CT_ERR_VALUE, op, "You must define either total_steps OR (epochs AND "
                 "steps_per_epoch)");
        return false;
    }
    double pct = o->pct_start, total = (double)s->total_steps;
    if (o->three_phase) {
        s->n_phases = 3;
        ct__lrs_phase_set(&s->phases[0], ct__lrs_mul(pct, total) - 1, CT__LRS_BASE,
                          CT__LRS_MAX_LR, CT__LRS_MAX_M, CT__LRS_BASE_M);
        ct__lrs_phase_set(&s->phases[1], ct__lrs_mul(2 * pct, total) - 2, CT__LRS_MAX_LR,
                          CT__LRS_BASE, CT__LRS_BASE_M, CT__LRS_MAX_M);
        ct__lrs_phase_set(&s->phases[2], total - 1, CT__LRS_BASE, CT__LRS_MIN_LR,
                          CT__LRS_MAX_M, CT__LRS_MAX_M);
    } else {
        s->n_phases = 2;
        ct__lrs_phase_set(&s->phases[0], ct__lrs_mul(pct, total) - 1, CT__LRS_BASE,
                          CT__LRS_MAX_LR, CT__LRS_MAX_M, CT__LRS_BASE_M);
        ct__lrs_phase_set(&s->phases[1], total - 1, CT__LRS_MAX_LR, CT__LRS_MIN_LR,
                          CT__LRS_BASE_M, CT__LRS_MAX_M);
    }
    if (!(pct >= 0 && pct <= 1)) {
        char num[32];
        snprintf(num, sizeof num, "%g", pct);
        ct__fail(CT_ERR_VALUE, op, "Expected float between 0 and 1 pct_start, but got %s", num);
        return false;
    }
    const char *a = o->anneal_strategy ? o->anneal_strategy : "cos";
    if (strcmp(a, "cos") != 0 && strcmp(a, "linear") != 0) {
        ct__fail(CT_ERR_VALUE, op, "anneal_strategy must be one of 'cos' or 'linear', instead "
                 "got %s", a);
        return false;
    }
    s->cos_anneal = strcmp(a, "cos") == 0;
    return true;
}

ct_lr_scheduler *ct_one_cycle_lr_new(ct_optimizer *opt, double max_lr,
                                     const ct_one_cycle_lr_opts *opts)
{
    const char *op = "ct_one_cycle_lr_new";
    ct_one_cycle_lr_opts o = opts ? *opts : ct_one_cycle_lr_defaults();
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_ONE_CYCLE);
    if (!s) {
        return NULL;
    }
    if (!ct__lrs_one_cycle_phases(op, s, &o)) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    for (int64_t g = 0; g < s->n_groups; g++) {
        double *v = s->v + g * CT__LRS_NV;
        double initial = max_lr / o.div_factor;
        ct__optim_set_initial_lr(opt, g, initial);
        v[CT__LRS_MAX_LR] = max_lr;
        v[CT__LRS_MIN_LR] = initial / o.final_div_factor;
    }
    if (!ct__lrs_momentum_init(op, s, o.cycle_momentum, o.base_momentum, o.max_momentum)) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    return ct__lrs_start(op, s);
}

/* CyclicLR's checks and scale function; false after an error. */
static bool ct__lrs_cyclic_setup(const char *op, ct_lr_scheduler *s, const ct_cyclic_lr_opts *o)
{
    double up = (double)o->step_size_up;
    double down = o->step_size_down > 0 ? (double)o->step_size_down : up;
    if (!(up + down > 0)) {
        ct__fail(CT_ERR_VALUE, op, "step_size_up + step_size_down must be positive, got %g",
                 up + down);
        return false;
    }
    s->total_size = up + down;
    s->step_ratio = up / s->total_size;
    const char *mode = o->mode ? o->mode : "triangular";
    static const char *const modes[3] = {"triangular", "triangular2", "exp_range"};
    s->scale_mode = -1;
    for (int k = 0; k < 3; k++) {
        s->scale_mode = strcmp(mode, modes[k]) == 0 ? k : s->scale_mode;
    }
    if (s->scale_mode < 0 && !o->scale_fn) {
        ct__fail(CT_ERR_VALUE, op, "mode is invalid and scale_fn is None");
        return false;
    }
    s->gamma = o->gamma;
    s->scale_iterations = s->scale_mode == CT__LRS_EXP_RANGE;
    if (o->scale_fn) {
        s->scale_mode = CT__LRS_CUSTOM;
        s->scale_fn = o->scale_fn;
        s->user = o->scale_user;
        s->scale_iterations = o->scale_mode && strcmp(o->scale_mode, "iterations") == 0;
    }
    return true;
}

ct_lr_scheduler *ct_cyclic_lr_new(ct_optimizer *opt, double base_lr, double max_lr,
                                  const ct_cyclic_lr_opts *opts)
{
    const char *op = "ct_cyclic_lr_new";
    ct_cyclic_lr_opts o = opts ? *opts : ct_cyclic_lr_defaults();
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_CYCLIC);
    if (!s) {
        return NULL;
    }
    for (int64_t g = 0; g < s->n_groups; g++) {
        s->v[g * CT__LRS_NV + CT__LRS_MAX_LR] = max_lr;
    }
    for (int64_t g = 0; g < s->n_groups; g++) {
        ct__optim_put_lr(opt, g, base_lr);
    }
    if (!ct__lrs_cyclic_setup(op, s, &o) ||
        !ct__lrs_momentum_init(op, s, o.cycle_momentum, o.base_momentum, o.max_momentum)) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    s = ct__lrs_start(op, s);
    for (int64_t g = 0; s && g < s->n_groups; g++) { /* self.base_lrs = base_lrs, after */
        s->v[g * CT__LRS_NV + CT__LRS_BASE] = base_lr;
    }
    return s;
}

/* ---- ReduceLROnPlateau ------------------------------------------------------------------- */
ct_lr_scheduler *ct_reduce_lr_on_plateau_new(ct_optimizer *opt,
                                             const ct_reduce_lr_on_plateau_opts *opts)
{
    const char *op = "ct_reduce_lr_on_plateau_new";
    ct_reduce_lr_on_plateau_opts o = opts ? *opts : ct_reduce_lr_on_plateau_defaults();
    if (ct__null(op, opt)) {
        return NULL;
    }
    const char *mode = o.mode ? o.mode : "min", *tmode = o.threshold_mode ? o.threshold_mode
                                                                            : "rel";
    if (o.factor >= 1.0) {
        ct__fail(CT_ERR_VALUE, op, "Factor should be < 1.0.");
        return NULL;
    }
    if (strcmp(mode, "min") != 0 && strcmp(mode, "max") != 0) {
        ct__fail(CT_ERR_VALUE, op, "mode %s is unknown!", mode);
        return NULL;
    }
    if (strcmp(tmode, "rel") != 0 && strcmp(tmode, "abs") != 0) {
        ct__fail(CT_ERR_VALUE, op, "threshold mode %s is unknown!", tmode);
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_PLATEAU);
    if (!s) {
        return NULL;
    }
    s->factor = o.factor;
    s->patience = o.patience;
    s->cooldown = o.cooldown;
    s->eps = o.eps;
    s->threshold = o.threshold;
    s->mode_max = strcmp(mode, "max") == 0;
    s->threshold_abs = strcmp(tmode, "abs") == 0;
    s->best = s->mode_max ? -INFINITY : INFINITY;
    s->last_epoch = 0;
    for (int64_t g = 0; g < s->n_groups; g++) {
        s->v[g * CT__LRS_NV + CT__LRS_MIN_LR] = o.min_lr;
    }
    ct__lrs_read_lrs(s);
    return s;
}

static bool ct__lrs_is_better(const ct_lr_scheduler *s, double a)
{
    if (!s->mode_max) {
        return s->threshold_abs ? a < s->best - s->threshold
                                : a < s->best * (1.0 - s->threshold);
    }
    return s->threshold_abs ? a > s->best + s->threshold : a > s->best * (s->threshold + 1.0);
}

/* ReduceLROnPlateau._reduce_lr: lr = max(lr * factor, min_lr) where that lowers it by more
   than eps. */
static void ct__lrs_reduce(ct_lr_scheduler *s)
{
    for (int64_t g = 0; g < s->n_groups; g++) {
        double old = ct_optimizer_get_lr(s->opt, g), min_lr = s->v[g * CT__LRS_NV +
                                                                     CT__LRS_MIN_LR];
        double lr = ct__lrs_mul(old, s->factor);
        lr = min_lr > lr ? min_lr : lr; /* Python's max(lr, min_lr) */
        if (old - lr > s->eps) {
            ct__optim_put_lr(s->opt, g, lr);
        }
    }
}

ct_status ct_reduce_lr_on_plateau_step(ct_lr_scheduler *s, double metric)
{
    const char *op = "ct_reduce_lr_on_plateau_step";
    if (ct__null(op, s)) {
        return ct_error_code();
    }
    if (s->kind != CT__LRS_PLATEAU) {
        return ct__fail(CT_ERR_VALUE, op, "the scheduler is not a ReduceLROnPlateau: use "
                        "ct_lr_scheduler_step");
    }
    if (!ct__lrs_groups_ok(op, s)) {
        return ct_error_code();
    }
    s->last_epoch++;
    if (ct__lrs_is_better(s, metric)) {
        s->best = metric;
        s->num_bad_epochs = 0;
    } else {
        s->num_bad_epochs++;
    }
    if (s->cooldown_counter > 0) {
        s->cooldown_counter--;
        s->num_bad_epochs = 0;
    }
    if (s->num_bad_epochs > s->patience) {
        ct__lrs_reduce(s);
        s->cooldown_counter = s->cooldown;
        s->num_bad_epochs = 0;
    }
    ct__lrs_read_lrs(s);
    return CT_OK;
}

/* ---- SequentialLR and ChainedScheduler --------------------------------------------------- */
/* Checks the n schedulers of a SequentialLR/ChainedScheduler (`name`) for opt (NULL: the
   first one's) and stores them in s; false after an error. */
static bool ct__lrs_subs(const char *op, const char *name, ct_lr_scheduler *s,
                         ct_lr_scheduler *const *subs, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (ct__null(op, subs[i])) {
            return false;
        }
        if (subs[i]->kind == CT__LRS_PLATEAU) {
            ct__fail(CT_ERR_VALUE, op, "%s does not support `ReduceLROnPlateau` scheduler as "
                     "it requires additional kwargs to be specified when calling `step`, but "
                     "got one at index %lld in the given schedulers sequence.", name,
                     (long long)i);
            return false;
        }
        if (subs[i]->opt != s->opt) {
            ct__fail(CT_ERR_VALUE, op, "%s expects all schedulers to belong to the same "
                     "optimizer, but got scheduler at index %lld with another one", name,
                     (long long)i);
            return false;
        }
    }
    s->subs = (ct_lr_scheduler **)ct__malloc(sizeof(ct_lr_scheduler *) * (size_t)n);
    if (!s->subs) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return false;
    }
    memcpy(s->subs, subs, sizeof(ct_lr_scheduler *) * (size_t)n);
    s->n_subs = n;
    return true;
}

/* SequentialLR.recursive_undo: last_epoch -= 1 through nested sequences. */
static void ct__lrs_undo(ct_lr_scheduler *s)
{
    if (s->subs) {
        for (int64_t i = 0; i < s->n_subs; i++) {
            ct__lrs_undo(s->subs[i]);
        }
    } else {
        s->last_epoch--;
    }
}

ct_lr_scheduler *ct_sequential_lr_new(ct_optimizer *opt, ct_lr_scheduler *const *schedulers,
                                      int64_t n, const int64_t *milestones, int64_t n_milestones)
{
    const char *op = "ct_sequential_lr_new";
    if (n > 0 && ct__null(op, schedulers)) {
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, op, "SequentialLR expects at least one scheduler, but got no "
                 "scheduler.");
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, opt, CT__LRS_SEQUENTIAL);
    if (!s) {
        return NULL;
    }
    if (!ct__lrs_subs(op, "SequentialLR", s, schedulers, n)) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    if (n_milestones != n - 1) {
        ct__fail(CT_ERR_VALUE, op, "Sequential Schedulers expects number of schedulers "
                 "provided to be one more than the number of milestone points, but got number "
                 "of schedulers %lld and the number of milestones to be equal to %lld",
                 (long long)n, (long long)n_milestones);
        ct_lr_scheduler_free(s);
        return NULL;
    }
    if (!ct__lrs_copy_ints(op, &s->milestones, milestones, n_milestones)) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    s->n_milestones = n_milestones;
    s->last_epoch = 0;
    for (int64_t g = 0; g < s->n_groups; g++) {
        ct__optim_put_lr(opt, g, ct__optim_initial_lr(opt, g));
    }
    ct__lrs_undo(s); /* the children's last_epoch, not this one's */
    int64_t idx = 0;
    while (idx < n_milestones && s->milestones[idx] <= 0) {
        idx++;
    }
    if (ct__lrs_initial_step(op, s->subs[idx]) != CT_OK) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    memcpy(s->last_lr, s->subs[idx]->last_lr, sizeof(double) * (size_t)s->n_groups);
    return s;
}

ct_lr_scheduler *ct_chained_scheduler_new(ct_lr_scheduler *const *schedulers, int64_t n)
{
    const char *op = "ct_chained_scheduler_new";
    if (ct__null(op, schedulers)) {
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, op, "ChainedScheduler expects at least one scheduler to be "
                 "chained, but got no scheduler.");
        return NULL;
    }
    if (ct__null(op, schedulers[0])) {
        return NULL;
    }
    ct_lr_scheduler *s = ct__lrs_alloc(op, schedulers[0]->opt, CT__LRS_CHAINED);
    if (!s) {
        return NULL;
    }
    if (!ct__lrs_subs(op, "ChainedScheduler", s, schedulers, n)) {
        ct_lr_scheduler_free(s);
        return NULL;
    }
    ct__lrs_read_lrs(s);
    return s;
}

/* ---- attributes -------------------------------------------------------------------------- */
int64_t ct_lr_scheduler_get_last_lr(const ct_lr_scheduler *s, double *lrs, int64_t cap)
{
    if (ct__null("ct_lr_scheduler_get_last_lr", s)) {
        return -1;
    }
    for (int64_t g = 0; lrs && g < s->n_groups && g < cap; g++) {
        lrs[g] = s->last_lr[g];
    }
    return s->n_groups;
}

int64_t ct_lr_scheduler_last_epoch(const ct_lr_scheduler *s)
{
    return ct__null("ct_lr_scheduler_last_epoch", s) ? -1 : s->last_epoch;
}

#undef CT__LRS_PI

/* ---- state_dict ----------------------------------------------------------------------------
 * One walk over a scheduler's fields under PyTorch's __dict__ names both saves (out set) and
 * loads (in set: a field takes the saved value where one is present). */
typedef struct ct__lrs_io {
    ct_state_dict *out;
    const ct_state_dict *in;
    char prefix[64]; /* "" or "_schedulers.<k>." (nested, as PyTorch's sub-state_dicts) */
    bool ok; /* no error so far */
} ct__lrs_io;

static void ct__lrs_key(const ct__lrs_io *io, const char *name, int64_t i, char *key, size_t n)
{
    if (i < 0) {
        snprintf(key, n, "%s%s", io->prefix, name);
    } else {
        snprintf(key, n, "%s%s.%lld", io->prefix, name, (long long)i);
    }
}

/* Saves or loads the integer field *v as name (name.<i> for i >= 0). */
static void ct__lrs_int(ct__lrs_io *io, const char *name, int64_t i, int64_t *v)
{
    char key[128];
    ct__lrs_key(io, name, i, key, sizeof key);
    if (io->out) {
        io->ok = io->ok && ct_state_dict_set_int(io->out, key, *v) == CT_OK;
    } else {
        ct_state_dict_get_int(io->in, key, v);
    }
}

/* Saves or loads the double field *v as name (name.<i> for i >= 0). */
static void ct__lrs_double(ct__lrs_io *io, const char *name, int64_t i, double *v)
{
    char key[128];
    ct__lrs_key(io, name, i, key, sizeof key);
    if (io->out) {
        io->ok = io->ok && ct_state_dict_set_double(io->out, key, *v) == CT_OK;
    } else {
        ct_state_dict_get_double(io->in, key, v);
    }
}

/* Saves or loads the bool field *v as an int 0/1. */
static void ct__lrs_bool(ct__lrs_io *io, const char *name, bool *v)
{
    int64_t x = *v;
    ct__lrs_int(io, name, -1, &x);
    *v = x != 0;
}

/* The per-group lists: base_lrs, _last_lr and the class's own (CyclicLR max_lrs,
   ReduceLROnPlateau min_lrs). */
static void ct__lrs_walk_groups(ct__lrs_io *io, ct_lr_scheduler *s)
{
    for (int64_t g = 0; g < s->n_groups; g++) {
        double *v = &s->v[g * CT__LRS_NV];
        if (s->kind != CT__LRS_PLATEAU && s->kind != CT__LRS_CHAINED &&
            s->kind != CT__LRS_SEQUENTIAL) {
            ct__lrs_double(io, "base_lrs", g, &v[CT__LRS_BASE]);
        }
        ct__lrs_double(io, "_last_lr", g, &s->last_lr[g]);
        if (s->kind == CT__LRS_CYCLIC) {
            ct__lrs_double(io, "max_lrs", g, &v[CT__LRS_MAX_LR]);
        } else if (s->kind == CT__LRS_PLATEAU) {
            ct__lrs_double(io, "min_lrs", g, &v[CT__LRS_MIN_LR]);
        }
    }
}

/* The class's own scalar fields under PyTorch's names. */
static void ct__lrs_walk_class(ct__lrs_io *io, ct_lr_scheduler *s)
{
    switch (s->kind) {
    case CT__LRS_STEP:
        ct__lrs_int(io, "step_size", -1, &s->period);
        ct__lrs_double(io, "gamma", -1, &s->gamma);
        break;
    case CT__LRS_MULTI_STEP:
    case CT__LRS_EXPONENTIAL:
        ct__lrs_double(io, "gamma", -1, &s->gamma);
        break;
    case CT__LRS_COSINE:
        ct__lrs_int(io, "T_max", -1, &s->period);
        ct__lrs_double(io, "eta_min", -1, &s->eta_min);
        break;
    case CT__LRS_WARM_RESTARTS:
        ct__lrs_int(io, "T_0", -1, &s->period);
        ct__lrs_int(io, "T_i", -1, &s->t_i);
        ct__lrs_int(io, "T_mult", -1, &s->t_mult);
        ct__lrs_double(io, "eta_min", -1, &s->eta_min);
        ct__lrs_int(io, "T_cur", -1, &s->t_cur);
        break;
    case CT__LRS_LINEAR:
        ct__lrs_double(io, "start_factor", -1, &s->factor);
        ct__lrs_double(io, "end_factor", -1, &s->end_factor);
        ct__lrs_int(io, "total_iters", -1, &s->period);
        break;
    case CT__LRS_CONSTANT:
        ct__lrs_double(io, "factor", -1, &s->factor);
        ct__lrs_int(io, "total_iters", -1, &s->period);
        break;
    case CT__LRS_POLYNOMIAL:
        ct__lrs_int(io, "total_iters", -1, &s->period);
        ct__lrs_double(io, "power", -1, &s->power);
        break;
    case CT__LRS_ONE_CYCLE:
        ct__lrs_int(io, "total_steps", -1, &s->total_steps);
        ct__lrs_bool(io, "cycle_momentum", &s->cycle_momentum);
        break;
    case CT__LRS_CYCLIC:
        ct__lrs_double(io, "total_size", -1, &s->total_size);
        ct__lrs_double(io, "step_ratio", -1, &s->step_ratio);
        ct__lrs_double(io, "gamma", -1, &s->gamma);
        ct__lrs_bool(io, "cycle_momentum", &s->cycle_momentum);
        break;
    case CT__LRS_PLATEAU:
        ct__lrs_double(io, "factor", -1, &s->factor);
        ct__lrs_int(io, "patience", -1, &s->patience);
        ct__lrs_int(io, "cooldown", -1, &s->cooldown);
        ct__lrs_int(io, "cooldown_counter", -1, &s->cooldown_counter);
        ct__lrs_double(io, "threshold", -1, &s->threshold);
        ct__lrs_double(io, "best", -1, &s->best);
        ct__lrs_int(io, "num_bad_epochs", -1, &s->num_bad_epochs);
        ct__lrs_double(io, "eps", -1, &s->eps);
        break;
    case CT__LRS_SEQUENTIAL:
        for (int64_t i = 0; i < s->n_milestones; i++) {
            ct__lrs_int(io, "_milestones", i, &s->milestones[i]);
        }
        break;
    default: /* LambdaLR, MultiplicativeLR: PyTorch saves no function; ChainedScheduler; a
                custom get_lr (SWALR: its own fields stay with its creator) */
        break;
    }
}

static void ct__lrs_walk(ct__lrs_io *io, ct_lr_scheduler *s)
{
    ct__lrs_int(io, "last_epoch", -1, &s->last_epoch);
    if (s->kind != CT__LRS_PLATEAU && s->kind != CT__LRS_SEQUENTIAL &&
        s->kind != CT__LRS_CHAINED) {
        ct__lrs_int(io, "_step_count", -1, &s->step_count);
    }
    ct__lrs_walk_class(io, s);
    ct__lrs_walk_groups(io, s);
    char outer[sizeof io->prefix];
    memcpy(outer, io->prefix, sizeof outer);
    for (int64_t k = 0; k < s->n_subs; k++) {
        int len = snprintf(io->prefix, sizeof io->prefix, "%s_schedulers.%lld.", outer,
                           (long long)k);
        if (len < 0 || (size_t)len >= sizeof io->prefix) { /* schedulers nested 5 deep */
            ct__fail(CT_ERR_VALUE, "ct_lr_scheduler_state_dict", "schedulers nested too deeply");
            io->ok = false;
            break;
        }
        ct__lrs_walk(io, s->subs[k]);
    }
    memcpy(io->prefix, outer, sizeof outer);
}

ct_state_dict *ct_lr_scheduler_state_dict(const ct_lr_scheduler *s)
{
    if (ct__null("ct_lr_scheduler_state_dict", s)) {
        return NULL;
    }
    ct__lrs_io io;
    memset(&io, 0, sizeof io);
    io.out = ct_state_dict_new();
    io.ok = io.out != NULL;
    /* the walk only reads when saving */
    ct__lrs_walk(&io, (ct_lr_scheduler *)(uintptr_t)s);
    if (!io.ok) {
        ct_state_dict_free(io.out);
        return NULL;
    }
    return io.out;
}

ct_status ct_lr_scheduler_load_state_dict(ct_lr_scheduler *s, const ct_state_dict *sd)
{
    const char *op = "ct_lr_scheduler_load_state_dict";
    if (ct__null(op, s) || ct__null(op, sd)) {
        return ct_error_code();
    }
    ct__lrs_io io;
    memset(&io, 0, sizeof io);
    io.in = sd;
    io.ok = true;
    ct__lrs_walk(&io, s);
    return io.ok ? CT_OK : ct_error_code();
}
CT__GLUE_END
