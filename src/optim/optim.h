/* optim/optim.h - optimizers (torch.optim): SGD, Adam and AdamW.
 *
 * An optimizer holds ordered parameter groups. Each group is a list of parameters (leaf
 * tensors that require grad, of a floating dtype, on the CPU) with its own hyperparameters;
 * the first group is built by the constructor, more come from ct_optimizer_add_param_group.
 * ct_optimizer_step updates every parameter whose .grad is set, in place, with
 * torch.optim's single-tensor math (the CPU default), and skips those whose .grad is NULL.
 * State (momentum_buffer; exp_avg, exp_avg_sq, max_exp_avg_sq and the per-parameter step)
 * is allocated on a parameter's first update and owned by the optimizer.
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

/* PyTorch's SGD defaults (table above). Mirrors: torch.optim.SGD(params).defaults. */
CTORCH_API ct_sgd_opts ct_sgd_defaults(void);
/* PyTorch's Adam defaults (weight_decay 0). Mirrors: torch.optim.Adam(params).defaults. */
CTORCH_API ct_adam_opts ct_adam_defaults(void);
/* PyTorch's AdamW defaults (weight_decay 1e-2). Mirrors: torch.optim.AdamW(params).defaults. */
CTORCH_API ct_adam_opts ct_adamw_defaults(void);

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
   options type (ct_sgd_opts for SGD; ct_adam_opts for Adam and AdamW), or is NULL for the
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
/* Number of successful ct_optimizer_step calls; 0 for NULL. (Each parameter also counts
   its own updates, as state['step'] does, for Adam's bias correction.) */
CTORCH_API int64_t ct_optimizer_step_count(const ct_optimizer *opt);
/* The optimizer's PyTorch class name: "SGD", "Adam" or "AdamW". Mirrors: type(opt).__name__. */
CTORCH_API const char *ct_optimizer_name(const ct_optimizer *opt);
