/* tests/test_lr_scheduler.c - every LR scheduler against torch.optim.lr_scheduler for 100
 * steps (tests/golden/lr_scheduler_golden.h, from tools/gen_golden_optim2.py): the lrs of
 * every group (and the cycled momentum) bit for bit, ReduceLROnPlateau on a metric sequence,
 * construction errors with PyTorch's wording. */
#include "test.h"
#include "golden/lr_scheduler_golden.h"

/* An optimizer over one scalar parameter per group, with the groups' lrs; *params gets the
   parameters (free them after the optimizer). SGD has momentum 0.9, as the generator's. */
static ct_optimizer *ls_opt(bool adam, const double *lrs, int ngroups, ct_tensor **params)
{
    const int64_t one = 1;
    for (int g = 0; g < ngroups; g++) {
        params[g] = ct_requires_grad_(ct_zeros(&one, 1, CT_FLOAT32), true);
    }
    ct_optimizer *opt = NULL;
    if (adam) {
        ct_adam_opts o = ct_adam_defaults();
        o.lr = lrs[0];
        opt = ct_adam_new(params, 1, &o);
    } else {
        ct_sgd_opts o = ct_sgd_defaults();
        o.lr = lrs[0];
        o.momentum = 0.9;
        opt = ct_sgd_new(params, 1, &o);
    }
    for (int g = 1; g < ngroups; g++) {
        CHECK(ct_optimizer_add_param_group(opt, params + g, 1, NULL) == CT_OK);
        CHECK(ct_optimizer_set_lr(opt, g, lrs[g]) == CT_OK);
    }
    return opt;
}

static double ls_lambda(int64_t epoch, int64_t group, void *user)
{
    (void)user;
    return group == 0 ? pow(0.95, (double)epoch) : 1.0 / (double)(1 + epoch);
}

static double ls_mult(int64_t epoch, int64_t group, void *user)
{
    (void)epoch;
    (void)user;
    return group == 0 ? 0.99 : 0.98;
}

/* The scheduler of golden case `name` (as tools/gen_golden_optim2.py builds it); sub-
   schedulers of SequentialLR/ChainedScheduler go to subs (freed by the caller). */
static ct_lr_scheduler *ls_build(const char *name, ct_optimizer *o, ct_lr_scheduler **subs)
{
    ct_one_cycle_lr_opts oc = ct_one_cycle_lr_defaults();
    ct_cyclic_lr_opts cy = ct_cyclic_lr_defaults();
    if (!strcmp(name, "step")) {
        return ct_step_lr_new(o, 7, 0.5);
    }
    if (!strcmp(name, "multi_step")) {
        const int64_t ms[4] = {10, 30, 30, 60};
        return ct_multi_step_lr_new(o, ms, 4, 0.3);
    }
    if (!strcmp(name, "exponential")) {
        return ct_exponential_lr_new(o, 0.97);
    }
    if (!strcmp(name, "cosine") || !strcmp(name, "cosine_100")) {
        return name[6] ? ct_cosine_annealing_lr_new(o, 100, 0.0)
                       : ct_cosine_annealing_lr_new(o, 30, 0.001);
    }
    if (!strcmp(name, "warm_restarts")) {
        return ct_cosine_annealing_warm_restarts_new(o, 10, 2, 1e-4);
    }
    if (!strcmp(name, "warm_restarts_1")) {
        return ct_cosine_annealing_warm_restarts_new(o, 7, 1, 0.0);
    }
    if (!strcmp(name, "linear")) {
        return ct_linear_lr_new(o, 0.25, 1.0, 20);
    }
    if (!strcmp(name, "linear_default")) {
        return ct_linear_lr_new(o, 1.0 / 3, 1.0, 5);
    }
    if (!strcmp(name, "constant")) {
        return ct_constant_lr_new(o, 0.5, 10);
    }
    if (!strcmp(name, "polynomial")) {
        return ct_polynomial_lr_new(o, 50, 2.0);
    }
    if (!strcmp(name, "lambda")) {
        return ct_lambda_lr_new(o, ls_lambda, NULL);
    }
    if (!strcmp(name, "multiplicative")) {
        return ct_multiplicative_lr_new(o, ls_mult, NULL);
    }
    if (!strcmp(name, "one_cycle")) {
        oc.total_steps = 100;
        return ct_one_cycle_lr_new(o, 0.5, &oc);
    }
    if (!strcmp(name, "one_cycle_linear3")) {
        oc.total_steps = 100;
        oc.anneal_strategy = "linear";
        oc.three_phase = true;
        oc.pct_start = 0.25;
        return ct_one_cycle_lr_new(o, 1.0, &oc);
    }
    if (!strcmp(name, "one_cycle_epochs")) {
        oc.epochs = 10;
        oc.steps_per_epoch = 10;
        oc.cycle_momentum = false;
        oc.div_factor = 10.0;
        oc.final_div_factor = 100.0;
        return ct_one_cycle_lr_new(o, 0.3, &oc);
    }
    if (!strcmp(name, "cyclic")) {
        cy.step_size_up = 10;
        return ct_cyclic_lr_new(o, 0.01, 0.1, &cy);
    }
    if (!strcmp(name, "cyclic_triangular2")) {
        cy.step_size_up = 5;
        cy.step_size_down = 15;
        cy.mode = "triangular2";
        return ct_cyclic_lr_new(o, 0.01, 0.1, &cy);
    }
    if (!strcmp(name, "cyclic_exp_range")) {
        cy.step_size_up = 8;
        cy.mode = "exp_range";
        cy.gamma = 0.99;
        cy.cycle_momentum = false;
        return ct_cyclic_lr_new(o, 0.02, 0.2, &cy);
    }
    if (!strcmp(name, "sequential")) {
        const int64_t ms[1] = {5};
        subs[0] = ct_linear_lr_new(o, 0.1, 1.0, 5);
        subs[1] = ct_cosine_annealing_lr_new(o, 50, 0.0);
        return ct_sequential_lr_new(o, subs, 2, ms, 1);
    }
    if (!strcmp(name, "sequential3")) {
        const int64_t ms[2] = {10, 40};
        subs[0] = ct_constant_lr_new(o, 0.5, 3);
        subs[1] = ct_exponential_lr_new(o, 0.9);
        subs[2] = ct_step_lr_new(o, 10, 0.5);
        return ct_sequential_lr_new(o, subs, 3, ms, 2);
    }
    subs[0] = ct_exponential_lr_new(o, 0.98); /* "chained" */
    subs[1] = ct_step_lr_new(o, 5, 0.5);
    return ct_chained_scheduler_new(subs, 2);
}

/* Compares the groups' lrs (and momenta where want_m) at row k with the golden values. */
static bool ls_check_row(const ct_golden_sched_case *c, const ct_lr_scheduler *s,
                         const ct_optimizer *o, int k)
{
    double lr[2] = {0, 0};
    bool ok = ct_lr_scheduler_get_last_lr(s, lr, 2) == c->ngroups;
    for (int g = 0; ok && g < c->ngroups; g++) {
        ok = lr[g] == c->lr[k * c->ngroups + g] && ct_optimizer_get_lr(o, g) == lr[g];
        CHECK_MSG(ok, "%s step %d group %d: lr %.17g, want %.17g", c->name, k, g, lr[g],
                  c->lr[k * c->ngroups + g]);
        if (ok && c->momentum) {
            double m = ct_optimizer_get_momentum(o, g);
            ok = m == c->momentum[k * c->ngroups + g];
            CHECK_MSG(ok, "%s step %d group %d: momentum %.17g, want %.17g", c->name, k, g, m,
                      c->momentum[k * c->ngroups + g]);
        }
    }
    return ok;
}

static void test_lr_scheduler_golden(void)
{
    for (int i = 0; i < CT_GOLDEN_SCHED_NCASES; i++) {
        const ct_golden_sched_case *c = &ct_golden_sched_cases[i];
        ct_tensor *params[2];
        ct_lr_scheduler *subs[3] = {NULL, NULL, NULL};
        ct_optimizer *o = ls_opt(c->adam != 0, c->group_lr, c->ngroups, params);
        ct_lr_scheduler *s = ls_build(c->name, o, subs);
        CHECK_MSG(s != NULL, "%s: %s", c->name, ct_error() ? ct_error() : "?");
        for (int k = 0; s && k <= CT_GOLDEN_SCHED_STEPS; k++) {
            if (k > 0) {
                CHECK(ct_lr_scheduler_step(s) == CT_OK);
            }
            if (!ls_check_row(c, s, o, k)) {
                break;
            }
        }
        ct_lr_scheduler_free(s);
        for (int k = 0; k < 3; k++) {
            ct_lr_scheduler_free(subs[k]);
        }
        ct_optimizer_free(o);
        for (int g = 0; g < c->ngroups; g++) {
            ct_free(params[g]);
        }
    }
}

static void test_lr_scheduler_plateau(void)
{
    const double lrs[2] = {0.1, 0.05};
    for (int i = 0; i < (int)(sizeof ct_golden_plateau_cases / sizeof ct_golden_plateau_cases[0]);
         i++) {
        const ct_golden_plateau_case *c = &ct_golden_plateau_cases[i];
        ct_tensor *params[2];
        ct_optimizer *o = ls_opt(false, lrs, 2, params);
        ct_reduce_lr_on_plateau_opts po = ct_reduce_lr_on_plateau_defaults();
        po.mode = c->mode;
        po.factor = c->factor;
        po.patience = c->patience;
        po.threshold = c->threshold;
        po.threshold_mode = c->threshold_mode;
        po.cooldown = c->cooldown;
        po.min_lr = c->min_lr;
        po.eps = c->eps;
        ct_lr_scheduler *s = ct_reduce_lr_on_plateau_new(o, &po);
        CHECK(s && ct_lr_scheduler_last_epoch(s) == 0);
        CHECK(ct_lr_scheduler_step(s) == CT_ERR_VALUE);
        CHECK_ERROR(CT_ERR_VALUE, "ReduceLROnPlateau.step() needs the metric");
        for (int k = 0; s && k <= CT_GOLDEN_SCHED_STEPS; k++) {
            if (k > 0) {
                CHECK(ct_reduce_lr_on_plateau_step(s, ct_golden_plateau_metrics[k - 1]) == CT_OK);
            }
            double lr[2];
            CHECK(ct_lr_scheduler_get_last_lr(s, lr, 2) == 2);
            bool ok = lr[0] == c->lr[2 * k] && lr[1] == c->lr[2 * k + 1];
            CHECK_MSG(ok, "%s step %d: lr %.17g %.17g, want %.17g %.17g", c->name, k, lr[0],
                      lr[1], c->lr[2 * k], c->lr[2 * k + 1]);
            if (!ok) {
                break;
            }
        }
        CHECK(ct_lr_scheduler_last_epoch(s) == CT_GOLDEN_SCHED_STEPS);
        ct_lr_scheduler_free(s);
        ct_optimizer_free(o);
        ct_free(params[0]);
        ct_free(params[1]);
    }
}

/* The lr schedule drives the optimizer: SGD's update uses the lr the scheduler set. */
static void test_lr_scheduler_drives_optimizer(void)
{
    const int64_t one = 1;
    ct_tensor *p = ct_requires_grad_(ct_zeros(&one, 1, CT_FLOAT64), true);
    ct_sgd_opts so = ct_sgd_defaults();
    so.lr = 1.0;
    ct_optimizer *o = ct_sgd_new(&p, 1, &so);
    ct_lr_scheduler *s = ct_step_lr_new(o, 1, 0.5);
    double total = 0.0;
    for (int k = 0; k < 4; k++) {
        ct_scope_begin();
        CHECK(ct_set_grad(p, ct_ones(&one, 1, CT_FLOAT64)) == CT_OK);
        ct_scope_end();
        CHECK(ct_optimizer_step(o) == CT_OK && ct_lr_scheduler_step(s) == CT_OK);
        total += pow(0.5, k);
    }
    CHECK_NEAR(((const double *)ct_data_ptr(p))[0], -total, 0);
    CHECK(ct_lr_scheduler_last_epoch(s) == 4 && ct_optimizer_get_lr(o, 0) == 0.0625);
    ct_lr_scheduler_free(s);
    ct_optimizer_free(o);
    ct_free(p);
}

/* SGD stepped without momentum, then given one by CyclicLR: the buffer starts from the grad
   (PyTorch's `if buf is None: buf = clone(grad)`), not from stale memory. */
static void test_lr_scheduler_momentum_set_later(void)
{
    const int64_t one = 1;
    ct_tensor *p = ct_requires_grad_(ct_zeros(&one, 1, CT_FLOAT64), true);
    ct_sgd_opts so = ct_sgd_defaults();
    so.lr = 0.1;
    ct_optimizer *o = ct_sgd_new(&p, 1, &so);
    ct_scope_begin();
    CHECK(ct_set_grad(p, ct_ones(&one, 1, CT_FLOAT64)) == CT_OK);
    ct_scope_end();
    CHECK(ct_optimizer_step(o) == CT_OK); /* p = -0.1 */
    ct_cyclic_lr_opts cy = ct_cyclic_lr_defaults();
    cy.step_size_up = 10;
    ct_lr_scheduler *s = ct_cyclic_lr_new(o, 0.01, 0.1, &cy);
    CHECK(ct_optimizer_get_momentum(o, 0) == 0.9 && ct_optimizer_get_lr(o, 0) == 0.01);
    CHECK(ct_optimizer_step(o) == CT_OK); /* buf = grad: p = -0.1 - 0.01 */
    CHECK(ct_optimizer_step(o) == CT_OK); /* buf = 0.9 + 1: p -= 0.01 * 1.9 */
    CHECK_NEAR(((const double *)ct_data_ptr(p))[0], -0.1 - 0.01 - 0.019, 1e-15);
    ct_lr_scheduler_free(s);
    ct_optimizer_free(o);
    ct_free(p);
}

static void test_lr_scheduler_errors(void)
{
    const double lrs[2] = {0.1, 0.05};
    ct_tensor *params[2];
    ct_optimizer *o = ls_opt(false, lrs, 1, params);
    CHECK(ct_step_lr_new(o, 0, 0.1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_step_lr_new: step_size must be a positive integer, got 0");
    CHECK(ct_linear_lr_new(o, 0.0, 1.0, 5) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Starting multiplicative factor expected to be greater than 0 "
                "and less or equal to 1.");
    CHECK(ct_linear_lr_new(o, 0.5, 1.5, 5) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Ending multiplicative factor expected to be between 0 and 1.");
    CHECK(ct_constant_lr_new(o, 2.0, 5) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Constant multiplicative factor expected to be between 0 and 1.");
    CHECK(ct_cosine_annealing_warm_restarts_new(o, 0, 1, 0.0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Expected positive integer T_0, but got 0");
    CHECK(ct_cosine_annealing_warm_restarts_new(o, 5, 0, 0.0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Expected integer T_mult >= 1, but got 0");
    CHECK(ct_cosine_annealing_lr_new(o, 0, 0.0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "T_max must be a positive integer, got 0");
    ct_one_cycle_lr_opts oc = ct_one_cycle_lr_defaults();
    CHECK(ct_one_cycle_lr_new(o, 0.1, &oc) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "You must define either total_steps OR (epochs AND "
                "steps_per_epoch)");
    oc.total_steps = -1;
    CHECK(ct_one_cycle_lr_new(o, 0.1, &oc) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Expected positive integer total_steps, but got -1");
    oc.total_steps = 10;
    oc.pct_start = 1.5;
    CHECK(ct_one_cycle_lr_new(o, 0.1, &oc) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Expected float between 0 and 1 pct_start, but got 1.5");
    oc.pct_start = 0.3;
    oc.anneal_strategy = "sine";
    CHECK(ct_one_cycle_lr_new(o, 0.1, &oc) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "anneal_strategy must be one of 'cos' or 'linear', instead got "
                "sine");
    oc.anneal_strategy = "cos";
    ct_lr_scheduler *s = ct_one_cycle_lr_new(o, 0.1, &oc);
    for (int k = 0; k < 10; k++) {
        CHECK(ct_lr_scheduler_step(s) == CT_OK);
    }
    CHECK(ct_lr_scheduler_step(s) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Tried to step 11 times. The specified number of total steps "
                "is 10");
    ct_lr_scheduler_free(s);
    ct_cyclic_lr_opts cy = ct_cyclic_lr_defaults();
    cy.mode = "square";
    CHECK(ct_cyclic_lr_new(o, 0.01, 0.1, &cy) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "mode is invalid and scale_fn is None");
    ct_reduce_lr_on_plateau_opts po = ct_reduce_lr_on_plateau_defaults();
    po.factor = 1.0;
    CHECK(ct_reduce_lr_on_plateau_new(o, &po) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Factor should be < 1.0.");
    po = ct_reduce_lr_on_plateau_defaults();
    po.mode = "middle";
    CHECK(ct_reduce_lr_on_plateau_new(o, &po) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "mode middle is unknown!");
    po = ct_reduce_lr_on_plateau_defaults();
    po.threshold_mode = "pct";
    CHECK(ct_reduce_lr_on_plateau_new(o, &po) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "threshold mode pct is unknown!");
    CHECK(ct_sequential_lr_new(o, NULL, 0, NULL, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "SequentialLR expects at least one scheduler, but got no "
                "scheduler.");
    ct_lr_scheduler *e = ct_exponential_lr_new(o, 0.9);
    const int64_t ms[2] = {3, 4};
    CHECK(ct_sequential_lr_new(o, &e, 1, ms, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Sequential Schedulers expects number of schedulers provided to be "
                "one more than the number of milestone points, but got number of schedulers 1 "
                "and the number of milestones to be equal to 2");
    ct_lr_scheduler *pl = ct_reduce_lr_on_plateau_new(o, NULL);
    ct_lr_scheduler *two[2] = {e, pl};
    CHECK(ct_chained_scheduler_new(two, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ChainedScheduler does not support `ReduceLROnPlateau` scheduler");
    CHECK(ct_reduce_lr_on_plateau_step(e, 1.0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "the scheduler is not a ReduceLROnPlateau");
    ct_tensor *other_p[1];
    ct_optimizer *other = ls_opt(false, lrs, 1, other_p);
    ct_lr_scheduler *f = ct_step_lr_new(other, 2, 0.5);
    two[1] = f;
    CHECK(ct_chained_scheduler_new(two, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ChainedScheduler expects all schedulers to belong to the same "
                "optimizer");
    /* Adagrad has neither momentum nor betas */
    ct_optimizer *ada = ct_adagrad_new(other_p, 1, NULL);
    CHECK(ct_cyclic_lr_new(ada, 0.01, 0.1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "optimizer must support momentum or beta1 with `cycle_momentum` "
                "option enabled");
    /* a group added after construction */
    ct_tensor *extra = NULL;
    {
        const int64_t one = 1;
        extra = ct_requires_grad_(ct_zeros(&one, 1, CT_FLOAT32), true);
    }
    CHECK(ct_optimizer_add_param_group(o, &extra, 1, NULL) == CT_OK);
    CHECK(ct_lr_scheduler_step(e) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "the optimizer has 2 param groups, the scheduler was built for 1");
    CHECK(ct_lambda_lr_new(o, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_lambda_lr_new");
    CHECK(ct_lr_scheduler_step(NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_lr_scheduler_step");
    CHECK(ct_lr_scheduler_get_last_lr(NULL, NULL, 0) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_lr_scheduler_get_last_lr");
    ct_lr_scheduler_free(NULL);
    ct_lr_scheduler_free(e);
    ct_lr_scheduler_free(pl);
    ct_lr_scheduler_free(f);
    ct_optimizer_free(ada);
    ct_optimizer_free(other);
    ct_optimizer_free(o);
    ct_free(extra);
    ct_free(other_p[0]);
    ct_free(params[0]);
}

/* The defaults of the options structs are PyTorch's keyword defaults. */
static void test_lr_scheduler_defaults(void)
{
    ct_one_cycle_lr_opts oc = ct_one_cycle_lr_defaults();
    CHECK(oc.total_steps == 0 && oc.pct_start == 0.3 && !strcmp(oc.anneal_strategy, "cos"));
    CHECK(oc.cycle_momentum && oc.base_momentum == 0.85 && oc.max_momentum == 0.95);
    CHECK(oc.div_factor == 25.0 && oc.final_div_factor == 1e4 && !oc.three_phase);
    ct_cyclic_lr_opts cy = ct_cyclic_lr_defaults();
    CHECK(cy.step_size_up == 2000 && cy.step_size_down == 0 && !strcmp(cy.mode, "triangular"));
    CHECK(cy.gamma == 1.0 && cy.scale_fn == NULL && !strcmp(cy.scale_mode, "cycle"));
    CHECK(cy.cycle_momentum && cy.base_momentum == 0.8 && cy.max_momentum == 0.9);
    ct_reduce_lr_on_plateau_opts po = ct_reduce_lr_on_plateau_defaults();
    CHECK(!strcmp(po.mode, "min") && po.factor == 0.1 && po.patience == 10);
    CHECK(po.threshold == 1e-4 && !strcmp(po.threshold_mode, "rel") && po.cooldown == 0);
    CHECK(po.min_lr == 0.0 && po.eps == 1e-8);
}

void test_lr_scheduler(void)
{
    RUN(test_lr_scheduler_golden);
    RUN(test_lr_scheduler_plateau);
    RUN(test_lr_scheduler_drives_optimizer);
    RUN(test_lr_scheduler_momentum_set_later);
    RUN(test_lr_scheduler_errors);
    RUN(test_lr_scheduler_defaults);
}
