/* optim/swa_utils.h - stochastic weight averaging (torch.optim.swa_utils): an averaged copy of
 * a model (SWA's running mean, or an EMA), the SWALR scheduler and update_bn.
 *
 *     ct_module *swa = ct_averaged_model_new(model, my_model_new(), NULL);
 *     ct_lr_scheduler *swa_sched = ct_swalr_new(opt, &swa_lr, 1, 10, "cos");
 *     for (epoch ...) {
 *         ... train model ...
 *         if (epoch > swa_start) {
 *             ct_averaged_model_update_parameters(swa, model);
 *             ct_lr_scheduler_step(swa_sched);
 *         }
 *     }
 *     ct_update_bn(loader, swa);  // BatchNorm statistics of the averaged weights
 *
 * C has no deepcopy of a module: the caller builds the copy (the same architecture, e.g. by
 * calling the model's constructor again) and ct_averaged_model_new copies the model's values
 * into it, as AveragedModel's deepcopy(model).
 */

/* A custom averaging function (AveragedModel's avg_fn): returns the new value of an averaged
   parameter (a new tensor, owned by the current scope) from its current value, the model's
   value and the number of models averaged so far (n_averaged, an int64 0-dim tensor). It runs
   under no_grad; its result is copied into the averaged parameter. */
typedef ct_tensor *(*ct_avg_fn)(const ct_tensor *averaged, const ct_tensor *model,
                                const ct_tensor *num_averaged, void *user);

/* Options of ct_averaged_model_new.
   field        default  meaning
   avg_fn       NULL     a custom average (with avg_user); NULL: SWA's equal running mean
                         averaged + (model - averaged) / (n_averaged + 1), or the EMA
   avg_user     NULL     passed to avg_fn
   ema          false    exponential moving average: averaged.lerp_(model, 1 - decay) (for
                         integer buffers averaged * decay + model * (1 - decay)), as
                         get_ema_multi_avg_fn(decay)
   decay        0.999    the EMA's decay, in [0, 1]
   use_buffers  false    average the buffers too (else they are copied from the model at
                         every update) */
typedef struct ct_averaged_model_opts {
    ct_avg_fn avg_fn;
    void *avg_user;
    bool ema;
    double decay;
    bool use_buffers;
} ct_averaged_model_opts;

/* PyTorch's defaults (table above). Mirrors: AveragedModel's keyword defaults and
   get_ema_multi_avg_fn's decay. */
CTORCH_API ct_averaged_model_opts ct_averaged_model_defaults(void);

/* An AveragedModel: a module named "AveragedModel" with the submodule "module" (copy, whose
   parameters and buffers receive model's values) and the int64 0-dim buffer "n_averaged" (0),
   so its state_dict has PyTorch's keys ("n_averaged", "module.<name>"); ct_module_forward runs
   copy's forward. Takes ownership of copy (freed on error too); model is only read. opts NULL
   means the defaults (copied). Returns: a new module (ct_module_free), or NULL.
   Errors: CT_ERR_VALUE when copy's parameters or buffers differ from model's in number or
   shape ("copy has 2 parameters, model has 4"), "Invalid decay value 1.5 provided. Please
   provide a value in [0,1] range.", "Only one of avg_fn and ema should be given".
   Mirrors: torch.optim.swa_utils.AveragedModel(model, avg_fn, multi_avg_fn, use_buffers). */
CTORCH_API ct_module *ct_averaged_model_new(const ct_module *model, ct_module *copy,
                                            const ct_averaged_model_opts *opts);
/* Averages model's parameters (and buffers with use_buffers) into averaged's, in place,
   without autograd: the first call (n_averaged 0) copies them, later calls apply the average;
   without use_buffers the buffers are copied from model. Then n_averaged += 1.
   Errors: CT_ERR_VALUE when averaged is not an AveragedModel or model's parameters or buffers
   differ from its copy's in number or shape. Mirrors: AveragedModel.update_parameters(model). */
CTORCH_API ct_status ct_averaged_model_update_parameters(ct_module *averaged,
                                                         const ct_module *model);

/* SWALR: anneals each group's lr to its swa_lr over anneal_epochs steps ("cos" or "linear";
   NULL means "cos"), then keeps it there, in PyTorch's recursive form from the group's current
   lr, expression for expression in double (lrs equal PyTorch's bit for bit). swa_lrs: n values,
   one for every group (n = 1) or one per group. Returns: a new scheduler (ct_lr_scheduler_step,
   ct_lr_scheduler_free) after PyTorch's initial step; its state_dict holds the common fields
   (last_epoch, _step_count, base_lrs, _last_lr). Errors: CT_ERR_VALUE "swa_lr must have the
   same length as optimizer.param_groups. swa_lr has 3 values, param_groups has 2.",
   "anneal_strategy must be one of 'cos' or 'linear', instead got step", "anneal_epochs must be
   equal or greater than 0, got -1". Mirrors: torch.optim.swa_utils.SWALR(optimizer, swa_lr,
   anneal_epochs=10, anneal_strategy='cos'). */
CTORCH_API ct_lr_scheduler *ct_swalr_new(ct_optimizer *opt, const double *swa_lrs, int64_t n,
                                         int64_t anneal_epochs, const char *anneal_strategy);

/* Recomputes the running statistics of every BatchNorm1d/2d/3d in model over one epoch of
   loader: resets them (running_mean 0, running_var 1, num_batches_tracked 0), sets the
   momentum to None (a cumulative average), runs ct_module_forward(model, batch[0]) in training
   mode without autograd for every batch (the first field of a batch is the input, as PyTorch
   takes input[0] of a list), then restores the momenta and model's training mode. The loader
   starts a new epoch first (ct_dataloader_reset). A model without BatchNorm is left alone.
   Returns: CT_OK or the first error (from the loader or the forward). Mirrors:
   torch.optim.swa_utils.update_bn(loader, model). */
CTORCH_API ct_status ct_update_bn(ct_dataloader *loader, ct_module *model);
