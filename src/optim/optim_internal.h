/* optim/optim_internal.h - private access to an optimizer's parameter groups for the LR
 * schedulers (optim/lr_scheduler.c): PyTorch's schedulers read and write param_group keys
 * that ctorch keeps private ('initial_lr', 'momentum', 'betas'). */

/* Formats v as Python's repr(float) does ("-1.0", "1e-05", "0.001", "nan", "inf") into buf
   (n bytes); returns buf. For PyTorch's error messages. */
CT__INTERNAL const char *ct__optim_repr(double v, char *buf, size_t n);
/* param_group.setdefault('initial_lr', param_group['lr']): returns the group's initial_lr,
   setting it to the current lr first when unset. group must be valid. */
CT__INTERNAL double ct__optim_initial_lr(ct_optimizer *opt, int64_t group);
/* param_group['lr'] = lr as schedulers write it: unchecked (a schedule may go negative, as
   OneCycleLR's linear three-phase one does at its end); group must be valid. */
CT__INTERNAL void ct__optim_put_lr(ct_optimizer *opt, int64_t group, double lr);
/* param_group['initial_lr'] = lr (OneCycleLR); group must be valid. */
CT__INTERNAL void ct__optim_set_initial_lr(ct_optimizer *opt, int64_t group, double lr);
/* How the optimizer exposes a momentum: 1 'momentum' (SGD, RMSprop), 2 'betas' (the Adam
   family: betas[0]), 0 none (Adagrad, Adadelta). */
CT__INTERNAL int ct__optim_momentum_kind(const ct_optimizer *opt);
/* Sets the group's momentum or betas[0]; group must be valid. */
CT__INTERNAL void ct__optim_set_momentum(ct_optimizer *opt, int64_t group, double momentum);
