/* amp/grad_scaler.h - dynamic loss scaling for float16 training (torch.amp.GradScaler).
 *
 * One iteration, as PyTorch's:
 *     ct_tensor *loss = ...forward under ct_autocast_begin(CT_CPU, CT_FLOAT16, true)...;
 *     ct_backward(ct_grad_scaler_scale(scaler, loss), NULL, false); // gradients * scale
 *     ct_grad_scaler_unscale_(scaler, opt);                      // optional: before clipping
 *     ct_clip_grad_norm_(params, n, 1.0, 2.0, false);
 *     ct_grad_scaler_step(scaler, opt, NULL);                    // skipped on inf/NaN grads
 *     ct_grad_scaler_update(scaler);                             // backoff or growth
 * The scale is a float32 (PyTorch's _scale tensor) made at the first ct_grad_scaler_scale; the
 * inf/NaN checks are recorded per optimizer and combined by update. Works with every
 * ct_optimizer (all its parameter groups) and any number of optimizers per iteration.
 * Thread safety: one thread at a time per scaler.
 */
typedef struct ct_grad_scaler ct_grad_scaler;

/* field            default  meaning
   init_scale       65536    the scale before the first update (2**16)
   growth_factor    2.0      scale *= growth_factor after growth_interval unskipped steps
   backoff_factor   0.5      scale *= backoff_factor after an iteration with inf/NaN grads
   growth_interval  2000     consecutive unskipped iterations before growing
   enabled          true     false: scale returns its input, step just steps, the rest does
                             nothing (one code path for mixed and full precision) */
typedef struct ct_grad_scaler_opts {
    double init_scale;
    double growth_factor;
    double backoff_factor;
    int64_t growth_interval;
    bool enabled;
} ct_grad_scaler_opts;

/* PyTorch's defaults (table above). */
CTORCH_API ct_grad_scaler_opts ct_grad_scaler_defaults(void);
/* A new scaler (opts NULL: the defaults); free with ct_grad_scaler_free. Errors (NULL),
   when enabled: CT_ERR_VALUE "The growth factor must be > 1.0.", "The backoff factor must be
   < 1.0.". Mirrors: torch.amp.GradScaler("cpu", init_scale, growth_factor, backoff_factor,
   growth_interval, enabled). */
CTORCH_API ct_grad_scaler *ct_grad_scaler_new(const ct_grad_scaler_opts *opts);
/* Frees a scaler (NULL: nothing). */
CTORCH_API void ct_grad_scaler_free(ct_grad_scaler *scaler);
/* outputs * scale (a float32 0-dim factor: a float32 loss stays float32), differentiable, in
   the current scope; outputs itself when disabled. Shapes: any. Errors: NULL propagation.
   Mirrors: GradScaler.scale(outputs). */
CTORCH_API ct_tensor *ct_grad_scaler_scale(ct_grad_scaler *scaler, const ct_tensor *outputs);
/* Divides the .grad of every parameter of opt (all groups; parameters without .grad are
   skipped) in place by the scale (multiplies by the float32 1/scale, PyTorch's
   _amp_foreach_non_finite_check_and_unscale_) and records whether any is inf or NaN. Once
   per optimizer per iteration. Errors: CT_ERR_STATE "unscale_() has already been called on
   this optimizer since the last update().", "unscale_() is being called after step().",
   "Attempted unscale_ but _scale is None.  This may indicate your script did not use
   scaler.scale(loss or outputs) earlier in the iteration."; CT_ERR_VALUE "Attempting to
   unscale FP16 gradients." (float16 .grad). Mirrors: GradScaler.unscale_(optimizer). */
CTORCH_API ct_status ct_grad_scaler_unscale_(ct_grad_scaler *scaler, ct_optimizer *opt);
/* Unscales opt's gradients if ct_grad_scaler_unscale_ did not, then runs
   ct_optimizer_step(opt) unless they held an inf or NaN; *stepped (may be NULL) says whether
   it ran. Disabled: just ct_optimizer_step. Errors: CT_ERR_STATE "step() has already been
   called since the last update().", "No inf checks were recorded for this optimizer." (no
   parameter had a .grad), "Attempted step but _scale is None.  ..." (no scale call yet); the
   errors of unscale_ and of the optimizer's step. Mirrors: GradScaler.step(optimizer). */
CTORCH_API ct_status ct_grad_scaler_step(ct_grad_scaler *scaler, ct_optimizer *opt,
                                         bool *stepped);
/* Ends the iteration: scale *= backoff_factor (growth tracker reset) when any optimizer's
   gradients held inf/NaN, else after growth_interval such iterations in a row scale *=
   growth_factor (kept only when finite); forgets the per-optimizer records. Disabled: nothing.
   Errors: CT_ERR_STATE "No inf checks were recorded prior to update.", "Attempted update but
   _scale is None.  ...". Mirrors: GradScaler.update() (torch._amp_update_scale_). */
CTORCH_API ct_status ct_grad_scaler_update(ct_grad_scaler *scaler);
/* The current scale (init_scale before the first scale call; 1.0 when disabled; NAN for
   NULL). Mirrors: GradScaler.get_scale(). */
CTORCH_API double ct_grad_scaler_get_scale(const ct_grad_scaler *scaler);
/* Whether the scaler is enabled (false for NULL). Mirrors: GradScaler.is_enabled(). */
CTORCH_API bool ct_grad_scaler_is_enabled(const ct_grad_scaler *scaler);
/* A new state dict: doubles "scale", "growth_factor", "backoff_factor" and ints
   "growth_interval", "_growth_tracker" (PyTorch's keys); empty when disabled. Free with
   ct_state_dict_free. Mirrors: GradScaler.state_dict(). */
CTORCH_API ct_state_dict *ct_grad_scaler_state_dict(const ct_grad_scaler *scaler);
/* Loads those keys (nothing when disabled). Errors: CT_ERR_VALUE "The source state dict is
   empty, possibly because it was saved from a disabled instance of GradScaler.", or a
   missing key. Mirrors: GradScaler.load_state_dict(state_dict). */
CTORCH_API ct_status ct_grad_scaler_load_state_dict(ct_grad_scaler *scaler,
                                                    const ct_state_dict *sd);
