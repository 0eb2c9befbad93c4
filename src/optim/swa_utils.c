/* optim/swa_utils.c - torch.optim.swa_utils: AveragedModel (a module holding the averaged copy
 * and n_averaged), SWALR (a scheduler whose get_lr lives here, run by lr_scheduler.c's
 * stepping) and update_bn. The averages are ctorch ops under no_grad, written as PyTorch's CPU
 * path computes them (get_swa_avg_fn per tensor with the int64 n_averaged, _foreach_lerp_ for
 * the EMA), so the values equal PyTorch's. */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../autograd/autograd.h"
#include "../nn/state_dict.h"
#include "../nn/module.h"
#include "../data/dataset.h"
#include "../data/dataloader.h"
#include "optim.h"
#include "lr_scheduler.h"
#include "optim_internal.h"
#include "swa_utils.h"

#include <math.h>

CT__GLUE_BEGIN

/* ---- AveragedModel ---------------------------------------------------------------------- */
static ct_tensor *ct__averaged_forward(ct_module *m, const ct_tensor *x)
{
    return ct_module_forward(ct_module_get_submodule(m, "module"), x);
}

ct_averaged_model_opts ct_averaged_model_defaults(void)
{
    ct_averaged_model_opts o;
    memset(&o, 0, sizeof o);
    o.decay = 0.999;
    return o;
}

/* The parameters (which 0) or buffers (1) of m, a new array of *n borrowed pointers (NULL
   with *n 0 when there are none, or after an error). */
static ct_tensor **ct__swa_list(const ct_module *m, int which, int64_t *n)
{
    *n = which ? ct_module_buffers(m, NULL, 0) : ct_module_parameters(m, NULL, 0);
    ct_tensor **t = *n ? (ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)*n) : NULL;
    if (*n && !t) {
        ct__fail(CT_ERR_OOM, "ct_averaged_model", "out of memory");
        *n = 0;
        return NULL;
    }
    if (t) {
        *n = which ? ct_module_buffers(m, t, *n) : ct_module_parameters(m, t, *n);
    }
    return t;
}

/* Applies fn(dst[i], src[i], ctx) to the parameters (which 0) or buffers (1) of dst and src,
   which must match in number and shapes; runs under no_grad in a scope. */
typedef void (*ct__swa_pair_fn)(ct_tensor *dst, const ct_tensor *src, const void *ctx);

static ct_status ct__swa_pairs(const char *op, const ct_module *dst, const ct_module *src,
                               int which, ct__swa_pair_fn fn, const void *ctx)
{
    int64_t nd = 0, ns = 0;
    ct_tensor **d = ct__swa_list(dst, which, &nd), **s = ct__swa_list(src, which, &ns);
    const char *what = which ? "buffers" : "parameters";
    ct_status st = ct_error_code();
    if (st == CT_OK && nd != ns) {
        st = ct__fail(CT_ERR_VALUE, op, "copy has %lld %s, model has %lld", (long long)nd, what,
                      (long long)ns);
    }
    for (int64_t i = 0; st == CT_OK && i < nd; i++) {
        if (ct_dim(d[i]) != ct_dim(s[i]) ||
            memcmp(ct_sizes(d[i]), ct_sizes(s[i]), sizeof(int64_t) * (size_t)ct_dim(d[i]))) {
            st = ct__fail(CT_ERR_VALUE, op, "the shapes of %s %lld differ between copy and "
                          "model", what, (long long)i);
        }
    }
    ct_scope_begin();
    ct_no_grad_begin();
    for (int64_t i = 0; st == CT_OK && i < nd; i++) {
        fn(d[i], s[i], ctx);
        st = ct_error_code();
    }
    ct_no_grad_end();
    ct_scope_end();
    ct__free(d);
    ct__free(s);
    return st;
}

static void ct__swa_copy(ct_tensor *dst, const ct_tensor *src, const void *ctx)
{
    (void)ctx;
    ct_copy_(dst, src);
}

/* The averaging of one update: the options and the int64 n_averaged. */
typedef struct ct__swa_avg {
    const ct_averaged_model_opts *o;
    const ct_tensor *n_averaged;
} ct__swa_avg;

/* One averaged tensor: avg_fn; the EMA (_foreach_lerp_ for floats, else avg * decay + model
   * (1 - decay)); SWA's avg + (model - avg) / (n_averaged + 1) (get_swa_avg_fn). */
static void ct__swa_average(ct_tensor *avg, const ct_tensor *model, const void *ctx)
{
    const ct__swa_avg *a = (const ct__swa_avg *)ctx;
    const ct_averaged_model_opts *o = a->o;
    if (o->avg_fn) {
        ct_copy_(avg, o->avg_fn(avg, model, a->n_averaged, o->avg_user));
    } else if (o->ema && ct_is_floating_point(avg)) {
        ct_lerp_scalar_(avg, model, 1 - o->decay);
    } else if (o->ema) {
        ct_copy_(avg, ct_add(ct_mul_scalar(avg, o->decay), ct_mul_scalar(model, 1 - o->decay)));
    } else {
        ct_tensor *d = ct_div(ct_sub(model, avg), ct_add_scalar(a->n_averaged, 1));
        ct_copy_(avg, ct_add(avg, d));
    }
}

ct_module *ct_averaged_model_new(const ct_module *model, ct_module *copy,
                                 const ct_averaged_model_opts *opts)
{
    const char *op = "ct_averaged_model_new";
    ct_averaged_model_opts o = opts ? *opts : ct_averaged_model_defaults();
    ct_averaged_model_opts *u = NULL;
    ct_module *m = NULL;
    if (ct__null(op, model) || ct__null(op, copy)) {
        ct_module_free(copy);
        return NULL;
    }
    if (o.ema && !(o.decay >= 0.0 && o.decay <= 1.0)) {
        char buf[32];
        ct__fail(CT_ERR_VALUE, op, "Invalid decay value %s provided. Please provide a value in "
                 "[0,1] range.", ct__optim_repr(o.decay, buf, sizeof buf));
    } else if (o.ema && o.avg_fn) {
        ct__fail(CT_ERR_VALUE, op, "Only one of avg_fn and ema should be given");
    } else if ((u = (ct_averaged_model_opts *)ct__malloc(sizeof *u)) == NULL) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
    } else {
        *u = o;
        m = ct_module_new("AveragedModel", ct__averaged_forward, u, ct__free);
    }
    ct_tensor *n = m ? ct__tensor_new(op, NULL, 0, CT_INT64) : NULL;
    bool ok = n && ct_module_register_module(m, "module", copy) == CT_OK;
    copy = ok ? NULL : copy; /* m owns it now */
    if (n) {
        ct__fill_contig(n, 0);
    }
    ok = ok && ct_module_register_buffer(m, "n_averaged", n) == CT_OK &&
         ct__swa_pairs(op, ct_module_get_submodule(m, "module"), model, 0, ct__swa_copy,
                       NULL) == CT_OK &&
         ct__swa_pairs(op, ct_module_get_submodule(m, "module"), model, 1, ct__swa_copy,
                       NULL) == CT_OK;
    ct__release(n);
    if (!ok) {
        if (!m) {
            ct__free(u);
        }
        ct_module_free(m);
        ct_module_free(copy);
        return NULL;
    }
    return m;
}

ct_status ct_averaged_model_update_parameters(ct_module *averaged, const ct_module *model)
{
    const char *op = "ct_averaged_model_update_parameters";
    if (ct__null(op, averaged) || ct__null(op, model)) {
        return ct_error_code();
    }
    const ct_averaged_model_opts *o = (const ct_averaged_model_opts *)ct_module_user(averaged);
    ct_tensor *n = ct_module_get_parameter(averaged, "n_averaged");
    if (strcmp(ct_module_name(averaged), "AveragedModel") != 0 || !o || !n) {
        return ct__fail(CT_ERR_VALUE, op, "expected an AveragedModel module, got %s",
                        ct_module_name(averaged));
    }
    ct_module *copy = ct_module_get_submodule(averaged, "module");
    ct__swa_avg a = {o, n};
    bool first = ct_item_int64(n) == 0;
    ct__swa_pair_fn fn = first ? ct__swa_copy : ct__swa_average;
    ct_status st = ct__swa_pairs(op, copy, model, 0, fn, &a);
    if (st == CT_OK) {
        st = ct__swa_pairs(op, copy, model, 1, o->use_buffers ? fn : ct__swa_copy, &a);
    }
    if (st == CT_OK) {
        ct_scope_begin();
        ct_add_(n, ct_scalar_tensor(1, CT_INT64), 1);
        ct_scope_end();
        st = ct_error_code();
    }
    return st;
}

/* ---- SWALR ------------------------------------------------------------------------------ */
typedef struct ct__swalr {
    int64_t anneal_epochs;
    bool cos;
    double *swa_lr; /* per group, after the struct in its block */
} ct__swalr;

/* x*y rounded by itself (an fma with a zero addend): Python rounds every product. */
static double ct__swa_mul(double x, double y)
{
    return fma(x, y, 0.0);
}

static double ct__swalr_anneal(const ct__swalr *s, double t)
{
    return s->cos ? (1 - cos(3.141592653589793 * t)) / 2 : t;
}

/* max(0, min(1, x / max(1, anneal_epochs))) */
static double ct__swalr_t(const ct__swalr *s, int64_t x)
{
    double t = (double)x / (double)(s->anneal_epochs > 1 ? s->anneal_epochs : 1);
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

/* SWALR.get_lr: the lr before annealing recovered from the current one, then interpolated to
   swa_lr at this step. */
static double ct__swalr_get_lr(void *user, int64_t step_count, int64_t g, double lr)
{
    const ct__swalr *s = (const ct__swalr *)user;
    double swa = s->swa_lr[g];
    int64_t step = step_count - 1;
    step = s->anneal_epochs == 0 && step < 1 ? 1 : step;
    double prev_alpha = ct__swalr_anneal(s, ct__swalr_t(s, step - 1));
    double prev = prev_alpha == 1 ? swa : (lr - ct__swa_mul(prev_alpha, swa)) / (1 - prev_alpha);
    double alpha = ct__swalr_anneal(s, ct__swalr_t(s, step));
    return ct__swa_mul(swa, alpha) + ct__swa_mul(prev, 1 - alpha);
}

ct_lr_scheduler *ct_swalr_new(ct_optimizer *opt, const double *swa_lrs, int64_t n,
                              int64_t anneal_epochs, const char *anneal_strategy)
{
    const char *op = "ct_swalr_new";
    const char *strategy = anneal_strategy ? anneal_strategy : "cos";
    if (ct__null(op, opt) || ct__null(op, swa_lrs)) {
        return NULL;
    }
    int64_t groups = ct_optimizer_num_param_groups(opt);
    if (n != 1 && n != groups) {
        ct__fail(CT_ERR_VALUE, op, "swa_lr must have the same length as optimizer.param_groups. "
                 "swa_lr has %lld values, param_groups has %lld.", (long long)n,
                 (long long)groups);
        return NULL;
    }
    if (strcmp(strategy, "cos") != 0 && strcmp(strategy, "linear") != 0) {
        ct__fail(CT_ERR_VALUE, op, "anneal_strategy must be one of 'cos' or 'linear', instead "
                 "got %s", strategy);
        return NULL;
    }
    if (anneal_epochs < 0) {
        ct__fail(CT_ERR_VALUE, op, "anneal_epochs must be equal or greater than 0, got %lld",
                 (long long)anneal_epochs);
        return NULL;
    }
    ct__swalr *s = (ct__swalr *)ct__malloc(sizeof *s + sizeof(double) * (size_t)groups);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->anneal_epochs = anneal_epochs;
    s->cos = strcmp(strategy, "cos") == 0;
    s->swa_lr = (double *)(void *)(s + 1);
    for (int64_t g = 0; g < groups; g++) {
        s->swa_lr[g] = swa_lrs[n == 1 ? 0 : g];
    }
    return ct__lr_scheduler_custom_new(op, opt, ct__swalr_get_lr, s, ct__free);
}

/* ---- update_bn -------------------------------------------------------------------------- */
/* The BatchNorm modules of model (a new array of *n borrowed pointers; NULL when none). */
static ct_module **ct__swa_batch_norms(ct_module *model, int64_t *n)
{
    int64_t total = ct_module_named_modules(model, NULL, 0, NULL, 0);
    ct_module **all = (ct_module **)ct__malloc(sizeof(ct_module *) * (size_t)(total + 1));
    *n = 0;
    if (!all) {
        ct__fail(CT_ERR_OOM, "ct_update_bn", "out of memory");
        return NULL;
    }
    total = ct_module_named_modules(model, NULL, 0, all, total);
    for (int64_t i = 0; i < total; i++) {
        if (ct__batch_norm_is(all[i])) {
            all[(*n)++] = all[i];
        }
    }
    return all;
}

/* _BatchNorm.reset_running_stats (with tracked statistics). */
static void ct__swa_reset_stats(ct_module *bn)
{
    ct_tensor *rm = ct_module_get_parameter(bn, "running_mean");
    ct_tensor *rv = ct_module_get_parameter(bn, "running_var");
    ct_tensor *nbt = ct_module_get_parameter(bn, "num_batches_tracked");
    if (rm && rv && nbt) {
        ct_zero_(rm);
        ct_fill_(rv, 1.0);
        ct_zero_(nbt);
    }
}

/* One epoch of loader through model (no_grad, a scope per batch). */
static ct_status ct__swa_bn_epoch(ct_dataloader *loader, ct_module *model)
{
    ct_tensor *batch[CT_DATASET_MAX_FIELDS];
    ct_status st = CT_OK;
    ct_dataloader_reset(loader);
    ct_no_grad_begin();
    while (st == CT_OK) {
        ct_scope_begin();
        bool more = ct_dataloader_next(loader, batch);
        if (more) {
            ct_module_forward(model, batch[0]);
        }
        st = ct_error_code();
        ct_scope_end();
        if (!more) {
            break;
        }
    }
    ct_no_grad_end();
    return st;
}

ct_status ct_update_bn(ct_dataloader *loader, ct_module *model)
{
    const char *op = "ct_update_bn";
    if (ct__null(op, loader) || ct__null(op, model)) {
        return ct_error_code();
    }
    int64_t n = 0;
    ct_module **bns = ct__swa_batch_norms(model, &n);
    double *momenta = n ? (double *)ct__malloc(sizeof(double) * (size_t)n) : NULL;
    if (!bns || (n && !momenta)) {
        ct__free(bns);
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_status st = CT_OK;
    if (n) {
        ct_no_grad_begin();
        for (int64_t i = 0; i < n; i++) {
            ct__swa_reset_stats(bns[i]);
            momenta[i] = ct__batch_norm_momentum(bns[i], NAN);
        }
        ct_no_grad_end();
        bool was_training = ct_module_is_training(model);
        ct_module_train(model, true);
        st = ct__swa_bn_epoch(loader, model);
        for (int64_t i = 0; i < n; i++) {
            ct__batch_norm_momentum(bns[i], momenta[i]);
        }
        ct_module_train(model, was_training);
    }
    ct__free(momenta);
    ct__free(bns);
    return st;
}
CT__GLUE_END
