/* optim/optim.h - optimizers (torch.optim): SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta,
 * Adamax, NAdam and RAdam.
 *
 * An optimizer holds ordered parameter groups. Each group is a list of parameters (leaf
 * tensors that require grad, of a floating dtype, on the CPU) with its own hyperparameters;
 * the first group is built by the constructor, more come from ct_optimizer_add_param_group.
 * ct_optimizer_step updates every parameter whose .grad is set, in place, with
 * torch.optim's single-tensor math (the CPU default), and skips those whose .grad is NULL.
 * State (PyTorch's per-parameter state tensors: momentum_buffer; exp_avg, exp_avg_sq,
 * max_exp_avg_sq; square_avg, grad_avg; sum; acc_delta; exp_inf; with the per-parameter step
 * and NAdam's mu_product) is allocated on a parameter's first update (Adagrad: at its first
 * update too, filled with initial_accumulator_value) and owned by the optimizer.
 *
 * Dtypes: the update runs in the parameter's dtype (float32 math for float32 parameters,
 * hyperparameters rounded to it as PyTorch's scalar arguments are); a gradient of another
 * dtype or layout is converted to a contiguous copy first. float16 and bfloat16 parameters
 * take torch.optim's single-tensor ops one by one (aten::lerp_, aten::addcdiv_ ...), each
 * computing in float32 and rounding to the parameter's dtype, as PyTorch on the CPU.
 * Determinism: bit-exact across thread counts (every element is updated independently).
 * Subnormals: computed as IEEE prescribes, like PyTorch with torch.set_flush_denormal(False)
 * (its default). A gradient that stays zero for hundreds of steps decays exp_avg into the
 * subnormal range, where some CPUs run the update more slowly; enable flush-to-zero in
 * the calling thread (MXCSR FTZ/DAZ) to trade exactness for speed, as
 * torch.set_flush_denormal(True) does.
 * Thread safety: an optimizer may be used by one thread at a time; a step must not run
 * while another thread reads or writes its parameters or their gradients.
 */
typedef struct ct_optimizer ct_optimizer;

/* ---- options ----------------------------------------------------------------------------
 * Start from the defaults function and edit fields; a NULL opts means the defaults.
 *
 * ct_sgd_opts    field         default  meaning
 *                lr            1e-3     learning rate (step size per unit of gradient)
 *                momentum      0        momentum factor; 0 disables the momentum buffer
 *                dampening     0        dampening for momentum: buf = m*buf + (1-d)*g
 *                weight_decay  0        L2 penalty: g += weight_decay * p
 *                nesterov      false    Nesterov momentum (needs momentum > 0, dampening 0)
 *                maximize      false    maximize the objective (g = -grad)
 *
 * ct_adam_opts   field         Adam     AdamW    meaning
 *                lr            1e-3     1e-3     learning rate
 *                betas[0]      0.9      0.9      decay rate of exp_avg (first moment)
 *                betas[1]      0.999    0.999    decay rate of exp_avg_sq (second moment)
 *                eps           1e-8     1e-8     added to the denominator, in the units of
 *                                                the gradient
 *                weight_decay  0        1e-2     Adam: L2 penalty g += wd * p (coupled);
 *                                                AdamW: p *= 1 - lr * wd (decoupled)
 *                amsgrad       false    false    use max(max_exp_avg_sq, exp_avg_sq)
 *                maximize      false    false    maximize the objective (g = -grad)
 *
 * ct_rmsprop_opts   lr 1e-2, alpha 0.99 (decay of square_avg), eps 1e-8, weight_decay 0 (L2),
 *                   momentum 0, centered false (divide by the variance estimate
 *                   square_avg - grad_avg^2 instead of square_avg), maximize false
 * ct_adagrad_opts   lr 1e-2, lr_decay 0 (clr = lr / (1 + (t-1)*lr_decay)), weight_decay 0,
 *                   initial_accumulator_value 0 (the start of `sum`), eps 1e-10, maximize false
 * ct_adadelta_opts  lr 1.0, rho 0.9 (decay of square_avg and acc_delta), eps 1e-6,
 *                   weight_decay 0, maximize false
 * ct_adamax_opts    lr 2e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0, maximize false
 * ct_nadam_opts     lr 2e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0, momentum_decay 4e-3,
 *                   decoupled_weight_decay false (true: p *= 1 - lr*wd as AdamW), maximize false
 * ct_radam_opts     lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0,
 *                   decoupled_weight_decay false, maximize false
 */
typedef struct ct_sgd_opts {
    double lr;
    double momentum;
    double dampening;
    double weight_decay;
    bool nesterov;
    bool maximize;
} ct_sgd_opts;

typedef struct ct_adam_opts {
    double lr;
    double betas[2];
    double eps;
    double weight_decay;
    bool amsgrad;
    bool maximize;
} ct_adam_opts;

typedef struct ct_rmsprop_opts {
    double lr;
    double alpha;
    double eps;
    double weight_decay;
    double momentum;
    bool centered;
    bool maximize;
} ct_rmsprop_opts;

typedef struct ct_adagrad_opts {
    double lr;
    double lr_decay;
    double weight_decay;
    double initial_accumulator_value;
    double eps;
    bool maximize;
} ct_adagrad_opts;

typedef struct ct_adadelta_opts {
    double lr;
    double rho;
    double eps;
    double weight_decay;
    bool maximize;
} ct_adadelta_opts;

typedef struct ct_adamax_opts {
    double lr;
    double betas[2];
    double eps;
    double weight_decay;
    bool maximize;
} ct_adamax_opts;

typedef struct ct_nadam_opts {
    double lr;
    double betas[2];
    double eps;
    double weight_decay;
    double momentum_decay;
    bool decoupled_weight_decay;
    bool maximize;
} ct_nadam_opts;

typedef struct ct_radam_opts {
    double lr;
    double betas[2];
    double eps;
    double weight_decay;
    bool decoupled_weight_decay;
    bool maximize;
} ct_radam_opts;

/* PyTorch's SGD defaults (table above). Mirrors: torch.optim.SGD(params).defaults. */
CTORCH_API ct_sgd_opts ct_sgd_defaults(void);
/* PyTorch's Adam defaults (weight_decay 0). Mirrors: torch.optim.Adam(params).defaults. */
CTORCH_API ct_adam_opts ct_adam_defaults(void);
/* PyTorch's AdamW defaults (weight_decay 1e-2). Mirrors: torch.optim.AdamW(params).defaults. */
CTORCH_API ct_adam_opts ct_adamw_defaults(void);
/* PyTorch's RMSprop defaults (table above). Mirrors: torch.optim.RMSprop(params).defaults. */
CTORCH_API ct_rmsprop_opts ct_rmsprop_defaults(void);
/* PyTorch's Adagrad defaults (table above). Mirrors: torch.optim.Adagrad(params).defaults. */
CTORCH_API ct_adagrad_opts ct_adagrad_defaults(void);
/* PyTorch's Adadelta defaults (table above). Mirrors: torch.optim.Adadelta(params).defaults. */
CTORCH_API ct_adadelta_opts ct_adadelta_defaults(void);
/* PyTorch's Adamax defaults (table above). Mirrors: torch.optim.Adamax(params).defaults. */
CTORCH_API ct_adamax_opts ct_adamax_defaults(void);
/* PyTorch's NAdam defaults (table above). Mirrors: torch.optim.NAdam(params).defaults. */
CTORCH_API ct_nadam_opts ct_nadam_defaults(void);
/* PyTorch's RAdam defaults (table above). Mirrors: torch.optim.RAdam(params).defaults. */
CTORCH_API ct_radam_opts ct_radam_defaults(void);

/* ---- constructors -----------------------------------------------------------------------
 * params: n (>= 1) distinct leaf tensors that require grad, floating point, CPU; the
 * optimizer retains each (ct_retain) until ct_optimizer_free, so the caller may free its
 * own references. opts: NULL for the defaults; copied.
 * Returns: a new optimizer owned by the caller (free with ct_optimizer_free), or NULL.
 * Errors: CT_ERR_NULL_ARG for a NULL params array or element; CT_ERR_VALUE for n < 1
 * ("optimizer got an empty parameter list"), a parameter that does not require grad
 * ("optimizer can only optimize Tensors that require grad"), a non-leaf ("can't optimize
 * a non-leaf Tensor"), a repeated parameter ("optimizer contains a parameter group with
 * duplicate parameters"; PyTorch only warns) and the invalid options named below;
 * CT_ERR_DTYPE for a non-float parameter; CT_ERR_DEVICE for a parameter off the CPU;
 * CT_ERR_OOM. Note: PyTorch accepts parameters that do not require grad (and never updates
 * them); ctorch rejects them so a forgotten ct_requires_grad_ shows up at once. */

/* Stochastic gradient descent, optionally with momentum, Nesterov momentum and weight
   decay: g = grad (negated when maximize); g += wd*p; buf = g on a parameter's first
   update, else buf = momentum*buf + (1-dampening)*g; g = nesterov ? g + momentum*buf : buf;
   p -= lr*g. Errors: "Invalid learning rate: -1.0", "Invalid momentum value: ...",
   "Invalid weight_decay value: ..." (each for values < 0), "Nesterov momentum requires a
   momentum and zero dampening". Mirrors: torch.optim.SGD(params, **opts). */
CTORCH_API ct_optimizer *ct_sgd_new(ct_tensor *const *params, int64_t n,
                                    const ct_sgd_opts *opts);
/* Adam with L2 weight decay added to the gradient: per parameter, t += 1; g = grad
   (negated when maximize) + wd*p; m = lerp(m, g, 1-b1); v = b2*v + (1-b2)*g*g;
   (amsgrad: vmax = max(vmax, v), used for v); p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t)
   + eps). Errors: "Invalid learning rate: ...", "Invalid epsilon value: ...", "Invalid beta
   parameter at index 0: 1.0" (each beta must be in [0, 1)), "Invalid weight_decay value:
   ..." (negative values and NaN). Mirrors: torch.optim.Adam(params, **opts). */
CTORCH_API ct_optimizer *ct_adam_new(ct_tensor *const *params, int64_t n,
                                     const ct_adam_opts *opts);
/* Adam with decoupled weight decay: p *= 1 - lr*wd before the Adam update (which then
   adds no L2 term). NULL opts means ct_adamw_defaults(). Errors: as ct_adam_new.
   Mirrors: torch.optim.AdamW(params, **opts). */
CTORCH_API ct_optimizer *ct_adamw_new(ct_tensor *const *params, int64_t n,
                                      const ct_adam_opts *opts);

/* RMSprop: g = grad (negated when maximize) + wd*p; square_avg = alpha*square_avg +
   (1-alpha)*g*g; centered: grad_avg = lerp(grad_avg, g, 1-alpha), avg = sqrt(square_avg -
   grad_avg^2) + eps, else avg = sqrt(square_avg) + eps; momentum > 0: buf = momentum*buf +
   g/avg, p -= lr*buf; else p -= lr*g/avg. Errors: "Invalid learning rate: ...", "Invalid
   epsilon value: ...", "Invalid momentum value: ...", "Invalid weight_decay value: ...",
   "Invalid alpha value: ..." (each for values < 0 and NaN).
   Mirrors: torch.optim.RMSprop(params, **opts). */
CTORCH_API ct_optimizer *ct_rmsprop_new(ct_tensor *const *params, int64_t n,
                                        const ct_rmsprop_opts *opts);
/* Adagrad: t += 1; g = grad (negated when maximize) + wd*p; sum += g*g; p -= clr * g /
   (sqrt(sum) + eps) with clr = lr / (1 + (t-1)*lr_decay). `sum` starts at the constructor's
   initial_accumulator_value (PyTorch's self.defaults, also for added groups). Errors:
   "Invalid learning rate: ...", "Invalid lr_decay value: ...", "Invalid weight_decay value:
   ...", "Invalid initial_accumulator_value value: ...", "Invalid epsilon value: ..." (values
   < 0 and NaN). Mirrors: torch.optim.Adagrad(params, **opts). */
CTORCH_API ct_optimizer *ct_adagrad_new(ct_tensor *const *params, int64_t n,
                                        const ct_adagrad_opts *opts);
/* Adadelta: g = grad (negated when maximize) + wd*p; square_avg = rho*square_avg +
   (1-rho)*g*g; delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g; acc_delta =
   rho*acc_delta + (1-rho)*delta^2; p -= lr*delta. Errors: "Invalid learning rate: ...",
   "Invalid rho value: ..." (outside [0, 1]), "Invalid epsilon value: ...", "Invalid
   weight_decay value: ...". Mirrors: torch.optim.Adadelta(params, **opts). */
CTORCH_API ct_optimizer *ct_adadelta_new(ct_tensor *const *params, int64_t n,
                                         const ct_adadelta_opts *opts);
/* Adamax (Adam with the infinity norm): t += 1; g = grad (negated when maximize) + wd*p;
   exp_avg = lerp(exp_avg, g, 1-b1); exp_inf = maximum(b2*exp_inf, |g| + eps); p -= lr/(1-b1^t)
   * exp_avg / exp_inf. Errors: as ct_adam_new. Mirrors: torch.optim.Adamax(params, **opts). */
CTORCH_API ct_optimizer *ct_adamax_new(ct_tensor *const *params, int64_t n,
                                       const ct_adamax_opts *opts);
/* NAdam (Adam with Nesterov momentum): t += 1; weight decay coupled (g += wd*p) or decoupled
   (p *= 1 - lr*wd); mu_t = b1*(1 - 0.5*0.96^(t*momentum_decay)); mu_product *= mu_t (a float32
   scalar, as PyTorch's state tensor); exp_avg, exp_avg_sq as Adam; denom = sqrt(exp_avg_sq /
   (1-b2^t)) + eps; p -= lr*(1-mu_t)/(1-mu_product) * g/denom + lr*mu_{t+1}/(1-mu_product*
   mu_{t+1}) * exp_avg/denom. Errors: as ct_adam_new, and "Invalid momentum_decay value: ...".
   Mirrors: torch.optim.NAdam(params, **opts). */
CTORCH_API ct_optimizer *ct_nadam_new(ct_tensor *const *params, int64_t n,
                                      const ct_nadam_opts *opts);
/* RAdam (rectified Adam): t += 1; weight decay coupled or decoupled as NAdam; exp_avg,
   exp_avg_sq as Adam; rho_inf = 2/(1-b2) - 1, rho_t = rho_inf - 2t*b2^t/(1-b2^t); when rho_t
   > 5: p -= exp_avg/(1-b1^t) * lr * sqrt(1-b2^t)/(sqrt(exp_avg_sq) + eps) * rect(rho_t), else
   p -= exp_avg/(1-b1^t) * lr. Errors: as ct_adam_new. Mirrors: torch.optim.RAdam(params,
   **opts). */
CTORCH_API ct_optimizer *ct_radam_new(ct_tensor *const *params, int64_t n,
                                      const ct_radam_opts *opts);

/* ---- use -------------------------------------------------------------------------------- */
/* Frees the optimizer and its state and releases its references to the parameters.
   Invalidates: parameters no one else holds (their pointers from ct_optimizer_params).
   NULL is a no-op. */
CTORCH_API void ct_optimizer_free(ct_optimizer *opt);
/* Performs one update of every parameter that has a .grad (others are skipped and keep
   their state), in place and without recording autograd history; bumps the version of
   each updated parameter. Large parameters are updated in parallel over elements.
   Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG; CT_ERR_SHAPE when a .grad's
   shape differs from its parameter's; CT_ERR_OOM (no parameter is changed when state
   allocation fails). Mirrors: Optimizer.step() (without closure). */
CTORCH_API ct_status ct_optimizer_step(ct_optimizer *opt);
/* Resets the .grad of every parameter: to NULL when set_to_none (PyTorch 2's default),
   else detached and filled with zeros in place. Invalidates (set_to_none): every .grad
   pointer taken with ct_grad. Mirrors: Optimizer.zero_grad(set_to_none). */
CTORCH_API void ct_optimizer_zero_grad(ct_optimizer *opt, bool set_to_none);
/* Adds a parameter group with its own hyperparameters. opts points to the optimizer's own
   options type (ct_sgd_opts for SGD; ct_adam_opts for Adam and AdamW; ct_<name>_opts for the
   others, e.g. ct_rmsprop_opts for RMSprop), or is NULL for the
   options the optimizer was constructed with. Errors: as the constructor; CT_ERR_VALUE
   "some parameters appear in more than one parameter group". Mirrors:
   Optimizer.add_param_group({'params': params, **opts}). */
CTORCH_API ct_status ct_optimizer_add_param_group(ct_optimizer *opt, ct_tensor *const *params,
                                                  int64_t n, const void *opts);
/* Number of parameter groups (>= 1); 0 for NULL. Mirrors: len(Optimizer.param_groups). */
CTORCH_API int64_t ct_optimizer_num_param_groups(const ct_optimizer *opt);
/* The parameters of group (in order): writes up to cap borrowed pointers into params (may
   be NULL) and returns the group's count; -1 + CT_ERR_INDEX for a bad group.
   Mirrors: Optimizer.param_groups[group]['params']. */
CTORCH_API int64_t ct_optimizer_params(const ct_optimizer *opt, int64_t group,
                                       ct_tensor **params, int64_t cap);
/* The learning rate of a parameter group; NAN + CT_ERR_INDEX for a bad group.
   Mirrors: Optimizer.param_groups[group]['lr']. */
CTORCH_API double ct_optimizer_get_lr(const ct_optimizer *opt, int64_t group);
/* Sets the learning rate of a group (group -1: every group), as LR schedulers do; it
   applies from the next step. Errors: CT_ERR_INDEX for a bad group; CT_ERR_VALUE
   "Invalid learning rate: ..." for lr < 0 or NaN. Mirrors: param_group['lr'] = lr. */
CTORCH_API ct_status ct_optimizer_set_lr(ct_optimizer *opt, int64_t group, double lr);
/* A group's momentum (SGD, RMSprop) or betas[0] (Adam, AdamW, Adamax, NAdam, RAdam), which
   OneCycleLR and CyclicLR cycle. Errors (NAN): CT_ERR_INDEX for a bad group; CT_ERR_VALUE
   for Adagrad and Adadelta ("Adagrad has neither momentum nor betas"). Mirrors:
   param_group['momentum'] or param_group['betas'][0]. */
CTORCH_API double ct_optimizer_get_momentum(const ct_optimizer *opt, int64_t group);
/* Number of successful ct_optimizer_step calls; 0 for NULL. (Each parameter also counts
   its own updates, as state['step'] does, for Adam's bias correction.) */
CTORCH_API int64_t ct_optimizer_step_count(const ct_optimizer *opt);
/* The optimizer's PyTorch class name: "SGD", "Adam", "AdamW", "RMSprop", "Adagrad",
   "Adadelta", "Adamax", "NAdam" or "RAdam". Mirrors: type(opt).__name__. */
CTORCH_API const char *ct_optimizer_name(const ct_optimizer *opt);

/* ---- state_dict ---------------------------------------------------------------------------
 * PyTorch's Optimizer.state_dict() {'state': {i: {...}}, 'param_groups': [{...}]} flattened
 * to dotted keys (parameters numbered 0.. across the groups in order, as PyTorch does):
 *   state.<i>.step            float32 0-dim tensor (every optimizer but SGD, which keeps none)
 *   state.<i>.mu_product      float32 0-dim tensor (NAdam)
 *   state.<i>.<name>          the state tensors (shared, not copied): SGD momentum_buffer;
 *                             Adam/AdamW exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad);
 *                             RMSprop square_avg, momentum_buffer, grad_avg; Adagrad sum;
 *                             Adadelta square_avg, acc_delta; Adamax exp_avg, exp_inf;
 *                             NAdam, RAdam exp_avg, exp_avg_sq
 *                             (a parameter never updated has no state.<i> entries)
 *   param_groups.<g>.<hp>     doubles: lr, momentum, dampening, alpha, rho, lr_decay,
 *                             betas.0, betas.1 (PyTorch's betas tuple), eps, weight_decay,
 *                             initial_accumulator_value, momentum_decay, initial_lr (once a
 *                             scheduler set it); ints 0/1 for the bools nesterov, amsgrad,
 *                             centered, decoupled_weight_decay (NAdam, RAdam), maximize:
 *                             each optimizer's own keys as in its PyTorch param_groups
 *   param_groups.<g>.params.<k>  int: the index of the group's k-th parameter
 * PyTorch's keys foreach, fused, capturable, differentiable (CPU defaults) are not written,
 * nor the keys schedulers add to param_groups besides initial_lr (OneCycleLR's max_lr ...:
 * ctorch keeps them in the scheduler). ct_save writes tensors and numbers (numbers in the
 * safetensors metadata); a checkpoint puts it under a prefix with ct_state_dict_update. */

/* A new state_dict of the optimizer's state and hyperparameters (keys above). Returns: a new
   ct_state_dict (ct_state_dict_free), or NULL. Errors: CT_ERR_NULL_ARG; CT_ERR_OOM.
   Mirrors: Optimizer.state_dict(). */
CTORCH_API ct_state_dict *ct_optimizer_state_dict(const ct_optimizer *opt);
/* Loads a state_dict of the layout above (from ct_optimizer_state_dict, ct_load or
   PyTorch's flattened): parameters are matched by position (the k-th of the saved group g
   is the k-th of this optimizer's group g); each parameter's state is replaced by the saved
   one (tensors copied and converted to the parameter's dtype; step and mu_product read
   from 0-dim tensors or numbers; no saved entries: no state), and each group's
   hyperparameters present in sd replace its own (initial_lr is unset when absent). Keys it
   does not know are ignored. Returns: CT_OK or the error code; on an error nothing has
   changed (except after CT_ERR_OOM, when earlier parameters may hold the loaded state).
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "loaded state dict has a different number of
   parameter groups", "loaded state dict contains a parameter group that doesn't match the
   size of optimizer's group"; CT_ERR_SHAPE for a state tensor of another shape than its
   parameter; CT_ERR_OOM. Mirrors: Optimizer.load_state_dict(state_dict). */
CTORCH_API ct_status ct_optimizer_load_state_dict(ct_optimizer *opt, const ct_state_dict *sd);
