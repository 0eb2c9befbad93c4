/* optim/lr_scheduler.h - learning rate schedulers (torch.optim.lr_scheduler).
 *
 * A scheduler adjusts the lr of every parameter group of one optimizer. It borrows the
 * optimizer (which must outlive it) and, as PyTorch's, works in its recursive ("chainable")
 * form: each step derives a group's new lr from its current one, so schedulers compose
 * (ChainedScheduler, or two schedulers stepped in turn). Construction performs PyTorch's
 * initial step (last_epoch -1 -> 0): it records each group's initial_lr (only where unset,
 * as param_group.setdefault('initial_lr', lr)) as the scheduler's base lr and sets epoch 0's
 * lr. Call ct_lr_scheduler_step after ct_optimizer_step, once per epoch (or per batch for
 * OneCycleLR and CyclicLR). All arithmetic is in double, operation for operation as PyTorch's
 * Python (so lrs equal PyTorch's bit for bit), with no fused multiply-adds.
 * Errors: CT_ERR_NULL_ARG for a NULL optimizer or scheduler; CT_ERR_VALUE with PyTorch's
 * wording for invalid arguments; CT_ERR_VALUE when the optimizer's number of param groups
 * changed since construction ("the optimizer has 3 param groups, the scheduler was built
 * for 2"). Thread safety: as the optimizer's.
 */
typedef struct ct_lr_scheduler ct_lr_scheduler;

/* A user function of the epoch (LambdaLR: the factor of base_lr; MultiplicativeLR: the
   factor of the current lr) for param group `group`. */
typedef double (*ct_lr_lambda_fn)(int64_t epoch, int64_t group, void *user);

/* ---- options ---------------------------------------------------------------------------
 * ct_one_cycle_lr_opts  field             default  meaning
 *                       total_steps       0        steps in the cycle (0: epochs *
 *                                                  steps_per_epoch)
 *                       epochs            0        used when total_steps is 0
 *                       steps_per_epoch   0        used when total_steps is 0
 *                       pct_start         0.3      fraction of the cycle spent increasing lr
 *                       anneal_strategy   "cos"    "cos" or "linear"
 *                       cycle_momentum    true     cycle momentum (betas[0]) inversely to lr
 *                       base_momentum     0.85     lowest momentum
 *                       max_momentum      0.95     highest momentum
 *                       div_factor        25       initial_lr = max_lr / div_factor
 *                       final_div_factor  1e4      min_lr = initial_lr / final_div_factor
 *                       three_phase       false    a third phase annealing to min_lr
 * ct_cyclic_lr_opts     step_size_up 2000, step_size_down 0 (0: step_size_up), mode
 *                       "triangular" ("triangular2", "exp_range"), gamma 1.0 (exp_range),
 *                       scale_fn NULL (a custom scale function of the cycle or iteration,
 *                       with scale_user; replaces mode), scale_mode "cycle" ("iterations";
 *                       only with scale_fn), cycle_momentum true, base_momentum 0.8,
 *                       max_momentum 0.9
 * ct_reduce_lr_on_plateau_opts  mode "min" ("max"), factor 0.1, patience 10, threshold 1e-4,
 *                       threshold_mode "rel" ("abs"), cooldown 0, min_lr 0, eps 1e-8
 */
typedef struct ct_one_cycle_lr_opts {
    int64_t total_steps;
    int64_t epochs;
    int64_t steps_per_epoch;
    double pct_start;
    const char *anneal_strategy;
    bool cycle_momentum;
    double base_momentum;
    double max_momentum;
    double div_factor;
    double final_div_factor;
    bool three_phase;
} ct_one_cycle_lr_opts;

typedef struct ct_cyclic_lr_opts {
    int64_t step_size_up;
    int64_t step_size_down;
    const char *mode;
    double gamma;
    double (*scale_fn)(double x, void *user);
    void *scale_user;
    const char *scale_mode;
    bool cycle_momentum;
    double base_momentum;
    double max_momentum;
} ct_cyclic_lr_opts;

typedef struct ct_reduce_lr_on_plateau_opts {
    const char *mode;
    double factor;
    int64_t patience;
    double threshold;
    const char *threshold_mode;
    int64_t cooldown;
    double min_lr;
    double eps;
} ct_reduce_lr_on_plateau_opts;

/* PyTorch's defaults (tables above). Mirrors: the keyword defaults of
   torch.optim.lr_scheduler.OneCycleLR / CyclicLR / ReduceLROnPlateau. */
CTORCH_API ct_one_cycle_lr_opts ct_one_cycle_lr_defaults(void);
CTORCH_API ct_cyclic_lr_opts ct_cyclic_lr_defaults(void);
CTORCH_API ct_reduce_lr_on_plateau_opts ct_reduce_lr_on_plateau_defaults(void);

/* ---- constructors -----------------------------------------------------------------------
 * Each returns a new scheduler owned by the caller (ct_lr_scheduler_free) that borrows opt,
 * or NULL. Every one has already made PyTorch's initial step (the optimizer's lrs are those
 * of epoch 0). */

/* lr *= gamma every step_size epochs. Errors: step_size < 1 ("step_size must be a positive
   integer, got 0"). Mirrors: lr_scheduler.StepLR(opt, step_size, gamma=0.1). */
CTORCH_API ct_lr_scheduler *ct_step_lr_new(ct_optimizer *opt, int64_t step_size, double gamma);
/* lr *= gamma^k at an epoch listed k times in milestones (n of them; NULL when n is 0).
   Mirrors: lr_scheduler.MultiStepLR(opt, milestones, gamma=0.1). */
CTORCH_API ct_lr_scheduler *ct_multi_step_lr_new(ct_optimizer *opt, const int64_t *milestones,
                                                 int64_t n, double gamma);
/* lr *= gamma every epoch. Mirrors: lr_scheduler.ExponentialLR(opt, gamma). */
CTORCH_API ct_lr_scheduler *ct_exponential_lr_new(ct_optimizer *opt, double gamma);
/* Cosine annealing from base_lr to eta_min over T_max epochs (and back up, periodically),
   in PyTorch's recursive form: lr_t = (1 + cos(pi t/T)) / (1 + cos(pi (t-1)/T)) *
   (lr_{t-1} - eta_min) + eta_min. Errors: T_max < 1 ("T_max must be a positive integer, got
   0"). Mirrors: lr_scheduler.CosineAnnealingLR(opt, T_max, eta_min=0.0). */
CTORCH_API ct_lr_scheduler *ct_cosine_annealing_lr_new(ct_optimizer *opt, int64_t T_max,
                                                       double eta_min);
/* Cosine annealing with warm restarts: T_cur counts epochs since the last restart, which
   comes after T_i epochs (T_i = T_0, then T_i *= T_mult). Errors: "Expected positive integer
   T_0, but got 0", "Expected integer T_mult >= 1, but got 0". Mirrors:
   lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0, T_mult=1, eta_min=0.0). */
CTORCH_API ct_lr_scheduler *ct_cosine_annealing_warm_restarts_new(ct_optimizer *opt,
                                                                  int64_t T_0, int64_t T_mult,
                                                                  double eta_min);
/* The factor of lr moves linearly from start_factor to end_factor over total_iters epochs
   (defaults 1/3, 1.0, 5). Errors: "Starting multiplicative factor expected to be greater
   than 0 and less or equal to 1.", "Ending multiplicative factor expected to be between 0
   and 1.". Mirrors: lr_scheduler.LinearLR(opt, start_factor, end_factor, total_iters). */
CTORCH_API ct_lr_scheduler *ct_linear_lr_new(ct_optimizer *opt, double start_factor,
                                             double end_factor, int64_t total_iters);
/* lr is multiplied by factor until epoch total_iters (defaults 1/3, 5). Errors: "Constant
   multiplicative factor expected to be between 0 and 1.". Mirrors:
   lr_scheduler.ConstantLR(opt, factor, total_iters). */
CTORCH_API ct_lr_scheduler *ct_constant_lr_new(ct_optimizer *opt, double factor,
                                               int64_t total_iters);
/* Polynomial decay to 0 over total_iters epochs (defaults 5, 1.0). Mirrors:
   lr_scheduler.PolynomialLR(opt, total_iters, power). */
CTORCH_API ct_lr_scheduler *ct_polynomial_lr_new(ct_optimizer *opt, int64_t total_iters,
                                                 double power);
/* lr = base_lr * fn(epoch, group, user). Mirrors: lr_scheduler.LambdaLR(opt, lr_lambda)
   (a list of lambdas: switch on group). Errors: CT_ERR_NULL_ARG for a NULL fn. */
CTORCH_API ct_lr_scheduler *ct_lambda_lr_new(ct_optimizer *opt, ct_lr_lambda_fn fn, void *user);
/* lr *= fn(epoch, group, user) every epoch after the first. Mirrors:
   lr_scheduler.MultiplicativeLR(opt, lr_lambda). Errors: CT_ERR_NULL_ARG for a NULL fn. */
CTORCH_API ct_lr_scheduler *ct_multiplicative_lr_new(ct_optimizer *opt, ct_lr_lambda_fn fn,
                                                     void *user);
/* The 1cycle policy: lr rises from max_lr/div_factor to max_lr over pct_start of the cycle,
   then anneals to min_lr (cos or linear), stepping once per batch; with cycle_momentum the
   momentum (SGD, RMSprop) or betas[0] (the Adam family) moves inversely between
   max_momentum and base_momentum. Errors: "You must define either total_steps OR (epochs
   AND steps_per_epoch)", "Expected positive integer total_steps, but got -1", "Expected
   float between 0 and 1 pct_start, but got 1.5", "anneal_strategy must be one of 'cos' or
   'linear', instead got x", "optimizer must support momentum or beta1 with `cycle_momentum`
   option enabled"; a step past the cycle: "Tried to step 101 times. The specified number
   of total steps is 100". Mirrors: lr_scheduler.OneCycleLR(opt, max_lr, **opts). */
CTORCH_API ct_lr_scheduler *ct_one_cycle_lr_new(ct_optimizer *opt, double max_lr,
                                                const ct_one_cycle_lr_opts *opts);
/* Cyclical lr between base_lr and max_lr (sets the groups' lr to base_lr), with momentum
   cycled inversely as OneCycleLR. Errors: "mode is invalid and scale_fn is None", "optimizer
   must support momentum or beta1 with `cycle_momentum` option enabled". Mirrors:
   lr_scheduler.CyclicLR(opt, base_lr, max_lr, **opts). */
CTORCH_API ct_lr_scheduler *ct_cyclic_lr_new(ct_optimizer *opt, double base_lr, double max_lr,
                                             const ct_cyclic_lr_opts *opts);
/* Reduces lr by factor when a metric has stopped improving for patience epochs; step it
   with ct_reduce_lr_on_plateau_step (ct_lr_scheduler_step is an error for it). Errors:
   "Factor should be < 1.0.", "mode x is unknown!", "threshold mode x is unknown!".
   Mirrors: lr_scheduler.ReduceLROnPlateau(opt, **opts). */
CTORCH_API ct_lr_scheduler *ct_reduce_lr_on_plateau_new(ct_optimizer *opt,
                                                        const ct_reduce_lr_on_plateau_opts *opts);
/* Runs schedulers[i] (n of them, borrowed: free them after this one) from milestones[i-1]
   (n - 1 increasing epochs) on; at a milestone the next one restarts at its epoch 0.
   Construction resets the groups' lr to initial_lr and redoes the first scheduler's initial
   step. Errors: "SequentialLR expects at least one scheduler, but got no scheduler.",
   "Sequential Schedulers expects number of schedulers provided to be one more than the
   number of milestone points, but got number of schedulers 2 and the number of milestones
   to be equal to 2", a scheduler of another optimizer ("SequentialLR expects all schedulers
   to belong to the same optimizer"), a ReduceLROnPlateau ("SequentialLR does not support
   `ReduceLROnPlateau` scheduler"). Mirrors: lr_scheduler.SequentialLR(opt, schedulers,
   milestones). */
CTORCH_API ct_lr_scheduler *ct_sequential_lr_new(ct_optimizer *opt,
                                                 ct_lr_scheduler *const *schedulers, int64_t n,
                                                 const int64_t *milestones, int64_t n_milestones);
/* Steps every one of schedulers (n >= 1, borrowed, of one optimizer) in turn. Errors as
   SequentialLR's ("ChainedScheduler expects at least one scheduler to be chained, but got no
   scheduler."). Mirrors: lr_scheduler.ChainedScheduler(schedulers). */
CTORCH_API ct_lr_scheduler *ct_chained_scheduler_new(ct_lr_scheduler *const *schedulers,
                                                     int64_t n);

/* ---- use -------------------------------------------------------------------------------- */
/* One epoch (or batch) step: updates the lr of every group (and momentum where cycled).
   Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for a
   ReduceLROnPlateau ("ReduceLROnPlateau.step() needs the metric: use
   ct_reduce_lr_on_plateau_step"), OneCycleLR past its cycle, a changed number of groups.
   Mirrors: LRScheduler.step(). */
CTORCH_API ct_status ct_lr_scheduler_step(ct_lr_scheduler *s);
/* ReduceLROnPlateau's step with this epoch's metric. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE
   for another scheduler. Mirrors: ReduceLROnPlateau.step(metrics). */
CTORCH_API ct_status ct_reduce_lr_on_plateau_step(ct_lr_scheduler *s, double metric);
/* The lrs the last step (or construction) set, one per group: writes up to cap of them into
   lrs (may be NULL) and returns the number of groups; -1 on a NULL scheduler.
   Mirrors: LRScheduler.get_last_lr(). */
CTORCH_API int64_t ct_lr_scheduler_get_last_lr(const ct_lr_scheduler *s, double *lrs,
                                                int64_t cap);
/* The epoch counter (0 after construction, +1 per step); -1 for NULL.
   Mirrors: LRScheduler.last_epoch. */
CTORCH_API int64_t ct_lr_scheduler_last_epoch(const ct_lr_scheduler *s);
/* Frees the scheduler (not its optimizer nor the schedulers it sequences). NULL is a no-op.
   Mirrors: del scheduler. */
CTORCH_API void ct_lr_scheduler_free(ct_lr_scheduler *s);

/* ---- state_dict ---------------------------------------------------------------------------
 * PyTorch's LRScheduler.state_dict() (its __dict__ without the optimizer) under dotted keys:
 *   last_epoch, _step_count                   ints (no _step_count: ReduceLROnPlateau,
 *                                             SequentialLR, ChainedScheduler)
 *   base_lrs.<g>, _last_lr.<g>                doubles, per parameter group
 *   the class's own fields                    StepLR step_size, gamma; MultiStepLR,
 *       ExponentialLR gamma; CosineAnnealingLR T_max, eta_min; CosineAnnealingWarmRestarts
 *       T_0, T_i, T_mult, eta_min, T_cur; LinearLR start_factor, end_factor, total_iters;
 *       ConstantLR factor, total_iters; PolynomialLR total_iters, power; OneCycleLR
 *       total_steps, cycle_momentum; CyclicLR total_size, step_ratio, gamma, cycle_momentum,
 *       max_lrs.<g>; ReduceLROnPlateau factor, patience, cooldown, cooldown_counter,
 *       threshold, best, num_bad_epochs, eps, min_lrs.<g>; SequentialLR _milestones.<k>
 *   _schedulers.<k>.<key>                     SequentialLR's and ChainedScheduler's
 *                                             schedulers' own state_dicts
 * Bools are ints 0/1. Not saved: functions (LambdaLR's lr_lambda, as PyTorch saves none
 * for a plain function), string options (mode, anneal_strategy) and OneCycleLR's phases,
 * which a scheduler built with the same arguments already has; OneCycleLR's per-group
 * max_lr, min_lr and momenta (PyTorch's param_group keys) likewise. */

/* A new state_dict of the scheduler's state (keys above). Returns: a new ct_state_dict
   (ct_state_dict_free), or NULL. Errors: CT_ERR_NULL_ARG; CT_ERR_OOM; CT_ERR_VALUE
   "schedulers nested too deeply" (SequentialLR / ChainedScheduler nested over 4 levels).
   Mirrors: LRScheduler.state_dict(). */
CTORCH_API ct_state_dict *ct_lr_scheduler_state_dict(const ct_lr_scheduler *s);
/* Loads a state_dict of the layout above (from ct_lr_scheduler_state_dict, ct_load or
   PyTorch's flattened) into a scheduler of the same class built for the same optimizer:
   every field present in sd takes its value (absent ones keep theirs, unknown keys are
   ignored), so the next ct_lr_scheduler_step continues the saved schedule. The optimizer's
   lrs are not touched (load the optimizer's state_dict for them). Returns: CT_OK or the
   error code. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE as ct_lr_scheduler_state_dict.
   Mirrors: LRScheduler.load_state_dict(state_dict) (self.__dict__.update(state_dict)). */
CTORCH_API ct_status ct_lr_scheduler_load_state_dict(ct_lr_scheduler *s,
                                                     const ct_state_dict *sd);
