/* amp/grad_scaler.c - torch.amp.GradScaler: the scale, the per-optimizer unscale / inf checks
 * and the update rule of torch._amp_update_scale_ (CPU), composed of dispatched ops.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../autograd/autograd.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../nn/state_dict.h"
#include "../optim/optim.h"
#include "grad_scaler.h"

CT__GLUE_BEGIN

/* PyTorch's OptState: where an optimizer is in the iteration. */
typedef enum ct__scaler_stage {
    CT__STAGE_READY,
    CT__STAGE_UNSCALED,
    CT__STAGE_STEPPED
} ct__scaler_stage;

typedef struct ct__scaler_opt {
    const ct_optimizer *opt;
    ct__scaler_stage stage;
    bool checked;   /* an inf check was recorded (some parameter had a .grad) */
    bool found_inf; /* it found an inf or NaN */
} ct__scaler_opt;

struct ct_grad_scaler {
    ct_grad_scaler_opts o;
    bool has_scale;       /* _scale exists (the first scale call made it) */
    float scale;          /* PyTorch's float32 _scale */
    int32_t growth_tracker;
    ct__scaler_opt *opts; /* this iteration's optimizers */
    int n_opts, cap_opts;
};

ct_grad_scaler_opts ct_grad_scaler_defaults(void)
{
    ct_grad_scaler_opts o = {65536.0, 2.0, 0.5, 2000, true};
    return o;
}

ct_grad_scaler *ct_grad_scaler_new(const ct_grad_scaler_opts *opts)
{
    const char *fn = "ct_grad_scaler_new";
    ct_grad_scaler_opts o = opts ? *opts : ct_grad_scaler_defaults();
    if (o.enabled && !(o.growth_factor > 1.0)) {
        ct__fail(CT_ERR_VALUE, fn, "The growth factor must be > 1.0.");
        return NULL;
    }
    if (o.enabled && !(o.backoff_factor < 1.0)) {
        ct__fail(CT_ERR_VALUE, fn, "The backoff factor must be < 1.0.");
        return NULL;
    }
    ct_grad_scaler *s = (ct_grad_scaler *)ct__calloc(sizeof *s);
    if (!s) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return NULL;
    }
    s->o = o;
    return s;
}

void ct_grad_scaler_free(ct_grad_scaler *scaler)
{
    if (scaler) {
        ct__free(scaler->opts);
        ct__free(scaler);
    }
}

ct_tensor *ct_grad_scaler_scale(ct_grad_scaler *scaler, const ct_tensor *outputs)
{
    const char *fn = "ct_grad_scaler_scale";
    if (ct__null(fn, scaler) || ct__null(fn, outputs)) {
        return NULL;
    }
    if (!scaler->o.enabled) {
        return (ct_tensor *)(uintptr_t)outputs;
    }
    if (!scaler->has_scale) {
        scaler->scale = (float)scaler->o.init_scale;
        scaler->growth_tracker = 0;
        scaler->has_scale = true;
    }
    return ct_mul(outputs, ct_scalar_tensor(scaler->scale, CT_FLOAT32));
}

/* PyTorch's _check_scale_growth_tracker. */
static bool ct__scaler_has_scale(const ct_grad_scaler *s, const char *fn, const char *what)
{
    if (!s->has_scale) {
        ct__fail(CT_ERR_STATE, fn, "Attempted %s but _scale is None.  This may indicate your "
                 "script did not use scaler.scale(loss or outputs) earlier in the iteration.",
                 what);
    }
    return s->has_scale;
}

/* The record of opt in this iteration (a new READY one at its first use), or NULL. */
static ct__scaler_opt *ct__scaler_state(ct_grad_scaler *s, const ct_optimizer *opt)
{
    for (int i = 0; i < s->n_opts; i++) {
        if (s->opts[i].opt == opt) {
            return &s->opts[i];
        }
    }
    if (s->n_opts == s->cap_opts) {
        int cap = s->cap_opts ? 2 * s->cap_opts : 4;
        ct__scaler_opt *m = (ct__scaler_opt *)ct__realloc(s->opts, (size_t)cap * sizeof *m);
        if (!m) {
            ct__fail(CT_ERR_OOM, "ct_grad_scaler", "out of memory");
            return NULL;
        }
        s->opts = m;
        s->cap_opts = cap;
    }
    ct__scaler_opt *r = &s->opts[s->n_opts++];
    memset(r, 0, sizeof *r);
    r->opt = opt;
    return r;
}

/* grad *= inv_scale in place; *found_inf |= any element not finite. */
static ct_status ct__scaler_unscale_grad(const char *fn, ct_tensor *g, const ct_tensor *inv,
                                         bool *found_inf)
{
    if (g->dtype == CT_FLOAT16) {
        return ct__fail(CT_ERR_VALUE, fn, "Attempting to unscale FP16 gradients.");
    }
    *found_inf = *found_inf || ct_item(ct_all(ct_isfinite(g))) == 0.0;
    return ct_mul_(g, inv) ? CT_OK : ct_error_code();
}

/* Unscales every .grad of opt's parameter groups (inside the caller's scope). */
static ct_status ct__scaler_unscale_all(ct_grad_scaler *s, ct_optimizer *opt,
                                        ct__scaler_opt *st)
{
    const char *fn = "ct_grad_scaler_unscale_";
    ct_tensor *inv = ct_scalar_tensor((float)(1.0 / (double)s->scale), CT_FLOAT32);
    ct_status rc = inv ? CT_OK : ct_error_code();
    for (int64_t g = 0; rc == CT_OK && g < ct_optimizer_num_param_groups(opt); g++) {
        int64_t n = ct_optimizer_params(opt, g, NULL, 0);
        ct_tensor **ps = (ct_tensor **)ct__malloc(sizeof(*ps) * (size_t)(n > 0 ? n : 1));
        if (!ps) {
            return ct__fail(CT_ERR_OOM, fn, "out of memory");
        }
        ct_optimizer_params(opt, g, ps, n);
        for (int64_t i = 0; rc == CT_OK && i < n; i++) {
            ct_tensor *grad = ct_grad(ps[i]);
            if (grad) {
                st->checked = true;
                rc = ct__scaler_unscale_grad(fn, grad, inv, &st->found_inf);
            }
        }
        ct__free(ps);
    }
    return rc;
}

ct_status ct_grad_scaler_unscale_(ct_grad_scaler *scaler, ct_optimizer *opt)
{
    const char *fn = "ct_grad_scaler_unscale_";
    if (ct__null(fn, scaler) || ct__null(fn, opt)) {
        return CT_ERR_NULL_ARG;
    }
    if (!scaler->o.enabled) {
        return CT_OK;
    }
    if (!ct__scaler_has_scale(scaler, fn, "unscale_")) {
        return CT_ERR_STATE;
    }
    ct__scaler_opt *st = ct__scaler_state(scaler, opt);
    if (!st) {
        return CT_ERR_OOM;
    }
    if (st->stage == CT__STAGE_UNSCALED) {
        return ct__fail(CT_ERR_STATE, fn, "unscale_() has already been called on this "
                        "optimizer since the last update().");
    }
    if (st->stage == CT__STAGE_STEPPED) {
        return ct__fail(CT_ERR_STATE, fn, "unscale_() is being called after step().");
    }
    st->checked = st->found_inf = false;
    ct_scope_begin();
    ct_no_grad_begin();
    ct_status rc = ct__scaler_unscale_all(scaler, opt, st);
    ct_no_grad_end();
    ct_scope_end();
    if (rc == CT_OK) {
        st->stage = CT__STAGE_UNSCALED;
    }
    return rc;
}

ct_status ct_grad_scaler_step(ct_grad_scaler *scaler, ct_optimizer *opt, bool *stepped)
{
    const char *fn = "ct_grad_scaler_step";
    if (stepped) {
        *stepped = false;
    }
    if (ct__null(fn, scaler) || ct__null(fn, opt)) {
        return CT_ERR_NULL_ARG;
    }
    bool run = true;
    if (scaler->o.enabled) {
        if (!ct__scaler_has_scale(scaler, fn, "step")) {
            return CT_ERR_STATE;
        }
        ct__scaler_opt *st = ct__scaler_state(scaler, opt);
        if (!st) {
            return CT_ERR_OOM;
        }
        if (st->stage == CT__STAGE_STEPPED) {
            return ct__fail(CT_ERR_STATE, fn, "step() has already been called since the last "
                            "update().");
        }
        ct_status rc = st->stage == CT__STAGE_READY ? ct_grad_scaler_unscale_(scaler, opt) : CT_OK;
        st = ct__scaler_state(scaler, opt); /* the records may have moved */
        if (rc != CT_OK) {
            return rc;
        }
        if (!st->checked) {
            return ct__fail(CT_ERR_STATE, fn, "No inf checks were recorded for this optimizer.");
        }
        st->stage = CT__STAGE_STEPPED;
        run = !st->found_inf;
    }
    ct_status rc = run ? ct_optimizer_step(opt) : CT_OK;
    if (stepped) {
        *stepped = run && rc == CT_OK;
    }
    return rc;
}

ct_status ct_grad_scaler_update(ct_grad_scaler *scaler)
{
    const char *fn = "ct_grad_scaler_update";
    if (ct__null(fn, scaler)) {
        return CT_ERR_NULL_ARG;
    }
    if (!scaler->o.enabled) {
        return CT_OK;
    }
    if (!ct__scaler_has_scale(scaler, fn, "update")) {
        return CT_ERR_STATE;
    }
    bool checked = false, found_inf = false;
    for (int i = 0; i < scaler->n_opts; i++) {
        checked = checked || scaler->opts[i].checked;
        found_inf = found_inf || scaler->opts[i].found_inf;
    }
    if (!checked) {
        return ct__fail(CT_ERR_STATE, fn, "No inf checks were recorded prior to update.");
    }
    if (found_inf) {
        scaler->scale = (float)((double)scaler->scale * scaler->o.backoff_factor);
        scaler->growth_tracker = 0;
    } else if (scaler->growth_tracker + 1 == scaler->o.growth_interval) {
        float grown = (float)((double)scaler->scale * scaler->o.growth_factor);
        scaler->scale = isfinite(grown) ? grown : scaler->scale;
        scaler->growth_tracker = 0;
    } else {
        scaler->growth_tracker++;
    }
    scaler->n_opts = 0;
    return CT_OK;
}

double ct_grad_scaler_get_scale(const ct_grad_scaler *scaler)
{
    if (ct__null("ct_grad_scaler_get_scale", scaler)) {
        return NAN;
    }
    return !scaler->o.enabled ? 1.0 : scaler->has_scale ? (double)scaler->scale
                                                         : scaler->o.init_scale;
}

bool ct_grad_scaler_is_enabled(const ct_grad_scaler *scaler)
{
    return scaler && scaler->o.enabled;
}

ct_state_dict *ct_grad_scaler_state_dict(const ct_grad_scaler *scaler)
{
    if (ct__null("ct_grad_scaler_state_dict", scaler)) {
        return NULL;
    }
    ct_state_dict *sd = ct_state_dict_new();
    if (sd && scaler->o.enabled &&
        (ct_state_dict_set_double(sd, "scale", ct_grad_scaler_get_scale(scaler)) ||
         ct_state_dict_set_double(sd, "growth_factor", scaler->o.growth_factor) ||
         ct_state_dict_set_double(sd, "backoff_factor", scaler->o.backoff_factor) ||
         ct_state_dict_set_int(sd, "growth_interval", scaler->o.growth_interval) ||
         ct_state_dict_set_int(sd, "_growth_tracker", scaler->growth_tracker))) {
        ct_state_dict_free(sd);
        return NULL;
    }
    return sd;
}

ct_status ct_grad_scaler_load_state_dict(ct_grad_scaler *scaler, const ct_state_dict *sd)
{
    const char *fn = "ct_grad_scaler_load_state_dict";
    if (ct__null(fn, scaler) || ct__null(fn, sd)) {
        return CT_ERR_NULL_ARG;
    }
    if (!scaler->o.enabled) {
        return CT_OK;
    }
    if (ct_state_dict_len(sd) == 0) {
        return ct__fail(CT_ERR_VALUE, fn, "The source state dict is empty, possibly because it "
                        "was saved from a disabled instance of GradScaler.");
    }
    ct_grad_scaler_opts o = scaler->o;
    int64_t tracker = 0;
    const char *missing = !ct_state_dict_get_double(sd, "scale", &o.init_scale) ? "scale"
        : !ct_state_dict_get_double(sd, "growth_factor", &o.growth_factor) ? "growth_factor"
        : !ct_state_dict_get_double(sd, "backoff_factor", &o.backoff_factor) ? "backoff_factor"
        : !ct_state_dict_get_int(sd, "growth_interval", &o.growth_interval) ? "growth_interval"
        : !ct_state_dict_get_int(sd, "_growth_tracker", &tracker) ? "_growth_tracker"
                                                                  : NULL;
    if (missing) {
        return ct__fail(CT_ERR_VALUE, fn, "missing key '%s'", missing);
    }
    scaler->o = o;
    if (scaler->has_scale) {
        scaler->scale = (float)o.init_scale;
        scaler->growth_tracker = (int32_t)tracker;
    }
    return CT_OK;
}

CT__GLUE_END
