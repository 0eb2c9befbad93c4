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

/* ---- schedulers defined outside lr_scheduler.c (optim/swa_utils.c's SWALR) ------------- */
struct ct_lr_scheduler;
/* A scheduler's get_lr: the new lr of group from its current lr at the scheduler's
   _step_count (1 in the construction step). */
typedef double (*ct__lrs_get_lr_fn)(void *user, int64_t step_count, int64_t group, double lr);
/* A scheduler of opt stepped as every other (LRScheduler.step) with get_lr fn(user, ...),
   after PyTorch's initial step. It owns user: user_free(user) runs when it is freed, and after
   an error here. Returns: the scheduler, or NULL after an error. */
CT__INTERNAL struct ct_lr_scheduler *ct__lr_scheduler_custom_new(const char *op,
                                                                 ct_optimizer *opt,
                                                                 ct__lrs_get_lr_fn fn, void *user,
                                                                 void (*user_free)(void *user));
