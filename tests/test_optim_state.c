/* tests/test_optim_state.c - optimizer and LR scheduler state_dicts: a checkpoint PyTorch
 * wrote (tests/golden/optim_state_golden.h, from tools/gen_golden_optim_state.py) loaded and
 * the run continued as PyTorch's; ctorch's own state_dicts against PyTorch's keys and values;
 * the round trip through ct_save_buffer / ct_load_buffer; PyTorch's errors. */
#include "test.h"
#include "golden/optim_state_golden.h"

#include <math.h>
#include <stdlib.h>

static const char *const os_names[OS_NCASES] = {"adam", "sgd", "rmsprop", "nadam"};

/* The two float32 parameters (3,) and (2, 2) holding data[0..7), caller-owned. */
static void os_params(const float *data, ct_dtype dtype, ct_tensor **ps)
{
    const int64_t s0[1] = {3}, s1[2] = {2, 2};
    ps[0] = ct_tensor_from_data(data, CT_FLOAT32, s0, 1);
    ps[1] = ct_tensor_from_data(data + 3, CT_FLOAT32, s1, 2);
    for (int i = 0; i < 2; i++) {
        if (dtype != CT_FLOAT32) {
            ct_tensor *c = ct_to_dtype(ps[i], dtype);
            ct_free(ps[i]);
            ps[i] = c;
        }
        ct_requires_grad_(ps[i], true);
    }
}

/* The optimizer and scheduler of golden case c, as the generator builds them. */
static ct_optimizer *os_optimizer(int c, ct_tensor **ps, ct_lr_scheduler **sched)
{
    ct_optimizer *opt = NULL;
    if (c == 0) {
        ct_adam_opts o = ct_adam_defaults();
        o.lr = 0.01;
        o.betas[1] = 0.99;
        o.weight_decay = 0.01;
        o.amsgrad = true;
        opt = ct_adam_new(ps, 2, &o);
        ct_one_cycle_lr_opts so = ct_one_cycle_lr_defaults();
        so.total_steps = 10;
        *sched = ct_one_cycle_lr_new(opt, 0.05, &so);
    } else if (c == 1) {
        ct_sgd_opts o = ct_sgd_defaults();
        o.lr = 0.1;
        o.momentum = 0.9;
        o.nesterov = true;
        o.weight_decay = 1e-3;
        opt = ct_sgd_new(ps, 1, &o);
        o.lr = 0.05;
        CHECK(ct_optimizer_add_param_group(opt, ps + 1, 1, &o) == CT_OK);
        *sched = ct_step_lr_new(opt, 2, 0.5);
    } else if (c == 2) {
        ct_rmsprop_opts o = ct_rmsprop_defaults();
        o.lr = 0.01;
        o.momentum = 0.5;
        o.centered = true;
        opt = ct_rmsprop_new(ps, 2, &o);
        *sched = ct_step_lr_new(opt, 3, 0.7);
    } else {
        ct_nadam_opts o = ct_nadam_defaults();
        o.lr = 0.01;
        opt = ct_nadam_new(ps, 2, &o);
        *sched = ct_exponential_lr_new(opt, 0.9);
    }
    CHECK(opt != NULL && *sched != NULL);
    return opt;
}

/* ReduceLROnPlateau's metric at a step: it stops improving after step 2. */
static const double os_metric[OS_K + OS_N] = {1.0, 0.8, 0.7, 0.75, 0.9, 0.7, 0.72, 0.71};

/* Sets the gradients of step `step` (the golden sequence), then opt.step(); sched.step()
   (plateau: sched.step(metric)). */
static void os_step_any(ct_optimizer *opt, ct_lr_scheduler *sched, ct_tensor **ps, int step,
                        bool plateau)
{
    ct_scope_begin();
    const float *g = os_grads + step * OS_NUMEL;
    for (int i = 0; i < 2; i++) {
        ct_tensor *t = ct_tensor_from_data(i ? g + 3 : g, CT_FLOAT32, ct_sizes(ps[i]),
                                           ct_dim(ps[i]));
        CHECK(ct_set_grad(ps[i], ct_to_dtype(t, ct_tensor_dtype(ps[i]))) == CT_OK);
    }
    ct_scope_end();
    CHECK(ct_optimizer_step(opt) == CT_OK);
    CHECK((plateau ? ct_reduce_lr_on_plateau_step(sched, os_metric[step])
                   : ct_lr_scheduler_step(sched)) == CT_OK);
}

static void os_step(ct_optimizer *opt, ct_lr_scheduler *sched, ct_tensor **ps, int step)
{
    os_step_any(opt, sched, ps, step, false);
}

/* The parameters' values flattened into out[0..7) as floats. */
static void os_values(ct_tensor **ps, float *out)
{
    ct_scope_begin();
    for (int i = 0; i < 2; i++) {
        ct_tensor *f = ct_contiguous(ct_to_dtype(ps[i], CT_FLOAT32));
        memcpy(i ? out + 3 : out, ct_data_ptr(f), sizeof(float) * (size_t)(i ? 4 : 3));
    }
    ct_scope_end();
}

static void os_free(ct_optimizer *opt, ct_lr_scheduler *sched, ct_tensor **ps)
{
    ct_lr_scheduler_free(sched);
    ct_optimizer_free(opt);
    ct_free(ps[0]);
    ct_free(ps[1]);
}

/* Case c's part `what` ("optim." or "sched.") of the checkpoint ck. */
static ct_state_dict *os_part(const ct_state_dict *ck, int c, const char *what)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s.%s", os_names[c], what);
    ct_state_dict *sd = ct_state_dict_select(ck, prefix);
    CHECK(sd != NULL && ct_state_dict_len(sd) > 0);
    return sd;
}

/* Whether got[0..n) equals want: bit for bit (exact), else within test_optim.c's float32
   tolerance (ctorch's SGD and Adam round as PyTorch's vectorized kernels, which differ from
   its single-tensor path in the last bits; the other optimizers match it bit for bit). */
static bool os_close(const float *got, const float *want, int n, bool exact)
{
    for (int i = 0; i < n; i++) {
        double tol = exact ? 0.0 : 1e-6 + 1e-5 * fabs((double)want[i]);
        if (!(fabs((double)got[i] - (double)want[i]) <= tol)) {
            return false;
        }
    }
    return true;
}

/* PyTorch's SGD and Adam single-tensor path rounds differently (os_close). */
static bool os_exact(int c)
{
    return c >= 2;
}

/* Continues case c for N steps from the loaded optimizer and scheduler state: the parameters
   want (N x NUMEL; exact or within os_close's tolerance) and PyTorch's lrs, bit for bit. */
static void os_continue(int c, ct_optimizer *opt, ct_lr_scheduler *sched, ct_tensor **ps,
                        const float *want, bool exact)
{
    for (int j = 0; j < OS_N; j++) {
        os_step(opt, sched, ps, OS_K + j);
        float got[OS_NUMEL];
        os_values(ps, got);
        const float *w = want + j * OS_NUMEL;
        CHECK_MSG(os_close(got, w, OS_NUMEL, exact), "%s: step %d: params differ (%.9g vs "
                  "%.9g)", os_names[c], OS_K + j, got[0], w[0]);
        CHECK_MSG(ct_optimizer_get_lr(opt, 0) == os_lr[c * OS_N + j], "%s: step %d: lr %.17g, "
                  "PyTorch %.17g", os_names[c], OS_K + j, ct_optimizer_get_lr(opt, 0),
                  os_lr[c * OS_N + j]);
    }
}

/* PyTorch's checkpoint after K steps, loaded into a freshly built optimizer and scheduler:
   the next N steps give PyTorch's parameters and lrs. */
static void test_optim_state_pytorch_checkpoint(void)
{
    ct_state_dict *ck = ct_load_buffer(os_ckpt, sizeof os_ckpt);
    CHECK(ck != NULL);
    for (int c = 0; c < OS_NCASES; c++) {
        ct_tensor *ps[2];
        ct_lr_scheduler *sched = NULL;
        os_params(os_after_k + c * OS_NUMEL, CT_FLOAT32, ps);
        ct_optimizer *opt = os_optimizer(c, ps, &sched);
        ct_state_dict *osd = os_part(ck, c, "optim."), *ssd = os_part(ck, c, "sched.");
        CHECK(ct_optimizer_load_state_dict(opt, osd) == CT_OK);
        CHECK(ct_lr_scheduler_load_state_dict(sched, ssd) == CT_OK);
        CHECK(ct_lr_scheduler_last_epoch(sched) == OS_K);
        os_continue(c, opt, sched, ps, os_expect + c * OS_N * OS_NUMEL, os_exact(c));
        ct_state_dict_free(osd);
        ct_state_dict_free(ssd);
        os_free(opt, sched, ps);
    }
    ct_state_dict_free(ck);
}

/* Every entry of mine is in PyTorch's state_dict with the same value (tensors as os_close,
   numbers exactly), and mine has as many tensors. */
static void os_same_entries(const ct_state_dict *mine, const ct_state_dict *torch_sd,
                            const char *what, bool exact)
{
    int64_t n_tensors = 0, torch_tensors = 0;
    for (int64_t i = 0; i < ct_state_dict_len(mine); i++) {
        const char *key = ct_state_dict_key(mine, i);
        if (ct_state_dict_kind(mine, key) == CT_STATE_TENSOR) {
            ct_tensor *a = ct_state_dict_get(mine, key), *b = ct_state_dict_get(torch_sd, key);
            CHECK_MSG(b && ct_tensor_dtype(a) == CT_FLOAT32 && ct_tensor_dtype(b) == CT_FLOAT32 &&
                      ct_numel(a) == ct_numel(b) &&
                      os_close((const float *)ct_data_ptr(a), (const float *)ct_data_ptr(b),
                               (int)ct_numel(a), exact),
                      "%s: tensor '%s' differs from PyTorch's", what, key);
            n_tensors++;
            continue;
        }
        double a = NAN, b = NAN;
        CHECK(ct_state_dict_get_double(mine, key, &a));
        CHECK_MSG(ct_state_dict_get_double(torch_sd, key, &b) && a == b,
                  "%s: '%s' = %.17g, PyTorch's %.17g", what, key, a, b);
    }
    for (int64_t i = 0; i < ct_state_dict_len(torch_sd); i++) {
        torch_tensors += ct_state_dict_kind(torch_sd, ct_state_dict_key(torch_sd, i)) ==
                         CT_STATE_TENSOR;
    }
    CHECK_MSG(n_tensors == torch_tensors, "%s: %lld tensors, PyTorch's %lld", what,
              (long long)n_tensors, (long long)torch_tensors);
}

/* ctorch's own K steps from the same start: its state_dicts hold PyTorch's keys and values. */
static void test_optim_state_matches_pytorch_keys(void)
{
    ct_state_dict *ck = ct_load_buffer(os_ckpt, sizeof os_ckpt);
    for (int c = 0; c < OS_NCASES; c++) {
        ct_tensor *ps[2];
        ct_lr_scheduler *sched = NULL;
        os_params(os_init, CT_FLOAT32, ps);
        ct_optimizer *opt = os_optimizer(c, ps, &sched);
        for (int j = 0; j < OS_K; j++) {
            os_step(opt, sched, ps, j);
        }
        ct_state_dict *osd = os_part(ck, c, "optim."), *ssd = os_part(ck, c, "sched.");
        ct_state_dict *mo = ct_optimizer_state_dict(opt), *ms = ct_lr_scheduler_state_dict(sched);
        os_same_entries(mo, osd, os_names[c], os_exact(c));
        os_same_entries(ms, ssd, os_names[c], true);
        ct_state_dict_free(mo);
        ct_state_dict_free(ms);
        ct_state_dict_free(osd);
        ct_state_dict_free(ssd);
        os_free(opt, sched, ps);
    }
    ct_state_dict_free(ck);
}

/* ctorch's uninterrupted run of case c: the parameters after steps K .. K+N-1 into want. */
static void os_uninterrupted(int c, float *want)
{
    ct_tensor *ps[2];
    ct_lr_scheduler *sched = NULL;
    os_params(os_init, CT_FLOAT32, ps);
    ct_optimizer *opt = os_optimizer(c, ps, &sched);
    for (int j = 0; j < OS_K + OS_N; j++) {
        os_step(opt, sched, ps, j);
        if (j >= OS_K) {
            os_values(ps, want + (j - OS_K) * OS_NUMEL);
        }
    }
    os_free(opt, sched, ps);
}

/* K steps, optimizer and scheduler state_dicts into one checkpoint, ct_save_buffer,
   ct_load_buffer, loaded into a fresh optimizer and scheduler: the next N steps are the
   uninterrupted run's bit for bit. */
static void test_optim_state_round_trip(void)
{
    for (int c = 0; c < OS_NCASES; c++) {
        float want[OS_N * OS_NUMEL];
        os_uninterrupted(c, want);
        ct_tensor *ps[2];
        ct_lr_scheduler *sched = NULL;
        os_params(os_init, CT_FLOAT32, ps);
        ct_optimizer *opt = os_optimizer(c, ps, &sched);
        for (int j = 0; j < OS_K; j++) {
            os_step(opt, sched, ps, j);
        }
        float at_k[OS_NUMEL];
        os_values(ps, at_k);
        ct_state_dict *ck = ct_state_dict_new(), *mo = ct_optimizer_state_dict(opt),
                      *ms = ct_lr_scheduler_state_dict(sched);
        CHECK(ct_state_dict_update(ck, mo, "optim.") == CT_OK);
        CHECK(ct_state_dict_update(ck, ms, "sched.") == CT_OK);
        size_t n = ct_save_buffer(ck, NULL, 0);
        unsigned char *buf = (unsigned char *)malloc(n);
        CHECK(buf && ct_save_buffer(ck, buf, n) == n);
        ct_state_dict_free(ck);
        ct_state_dict_free(mo);
        ct_state_dict_free(ms);
        os_free(opt, sched, ps);

        ct_state_dict *back = ct_load_buffer(buf, n);
        free(buf);
        ct_state_dict *bo = ct_state_dict_select(back, "optim.");
        ct_state_dict *bs = ct_state_dict_select(back, "sched.");
        os_params(at_k, CT_FLOAT32, ps);
        opt = os_optimizer(c, ps, &sched);
        CHECK(ct_optimizer_load_state_dict(opt, bo) == CT_OK);
        CHECK(ct_lr_scheduler_load_state_dict(sched, bs) == CT_OK);
        os_continue(c, opt, sched, ps, want, true);
        ct_state_dict_free(back);
        ct_state_dict_free(bo);
        ct_state_dict_free(bs);
        os_free(opt, sched, ps);
    }
}

/* Floating state is converted to the parameter's dtype (float32 state, float64 parameters);
   a parameter without saved state has none; hyperparameters come back. */
static void test_optim_state_dtype_and_hyperparameters(void)
{
    ct_state_dict *ck = ct_load_buffer(os_ckpt, sizeof os_ckpt);
    ct_state_dict *osd = os_part(ck, 0, "optim.");
    ct_tensor *ps[2];
    ct_lr_scheduler *sched = NULL;
    os_params(os_after_k, CT_FLOAT64, ps);
    ct_optimizer *opt = os_optimizer(0, ps, &sched);
    CHECK(ct_optimizer_load_state_dict(opt, osd) == CT_OK);
    ct_state_dict *mine = ct_optimizer_state_dict(opt);
    ct_tensor *m = ct_state_dict_get(mine, "state.1.exp_avg");
    ct_tensor *t = ct_state_dict_get(osd, "state.1.exp_avg");
    CHECK(m && t && ct_tensor_dtype(m) == CT_FLOAT64 && ct_dim(m) == 2);
    for (int64_t i = 0; m && t && i < 4; i++) {
        CHECK(((const double *)ct_data_ptr(m))[i] == ((const float *)ct_data_ptr(t))[i]);
    }
    double lr = 0, beta1 = 0, want_lr = 1, want_beta1 = 1;
    CHECK(ct_state_dict_get_double(osd, "param_groups.0.lr", &want_lr));
    CHECK(ct_state_dict_get_double(osd, "param_groups.0.betas.0", &want_beta1));
    CHECK(ct_state_dict_get_double(mine, "param_groups.0.lr", &lr) && lr == want_lr);
    CHECK(ct_optimizer_get_lr(opt, 0) == want_lr);
    CHECK(ct_state_dict_get_double(mine, "param_groups.0.betas.0", &beta1) &&
          beta1 == want_beta1);
    ct_state_dict_free(mine);
    /* no saved state for parameter 1: it starts afresh, as PyTorch's */
    CHECK(ct_state_dict_remove(osd, "state.1.exp_avg") == CT_OK);
    CHECK(ct_state_dict_remove(osd, "state.1.exp_avg_sq") == CT_OK);
    CHECK(ct_state_dict_remove(osd, "state.1.max_exp_avg_sq") == CT_OK);
    CHECK(ct_state_dict_remove(osd, "state.1.step") == CT_OK);
    CHECK(ct_optimizer_load_state_dict(opt, osd) == CT_OK);
    mine = ct_optimizer_state_dict(opt);
    CHECK(ct_state_dict_contains(mine, "state.0.exp_avg"));
    CHECK(!ct_state_dict_contains(mine, "state.1.exp_avg"));
    CHECK(!ct_state_dict_contains(mine, "state.1.step"));
    ct_state_dict_free(mine);
    ct_state_dict_free(osd);
    ct_state_dict_free(ck);
    os_free(opt, sched, ps);
}

static double os_lambda(int64_t epoch, int64_t group, void *user)
{
    (void)user;
    return pow(0.9, (double)epoch) + 0.1 * (double)group;
}

static double os_mult(int64_t epoch, int64_t group, void *user)
{
    (void)group;
    (void)user;
    return epoch % 2 ? 0.95 : 0.9;
}

enum { OS_SCHED_KINDS = 15, OS_PLATEAU = 12 };

/* Scheduler `kind` (every class, in lr_scheduler.h's order) for opt; SequentialLR (13) and
   ChainedScheduler (14) put their two schedulers into subs. */
static ct_lr_scheduler *os_scheduler(int kind, ct_optimizer *opt, ct_lr_scheduler **subs)
{
    const int64_t milestones[3] = {1, 3, 3};
    ct_one_cycle_lr_opts oc = ct_one_cycle_lr_defaults();
    ct_cyclic_lr_opts cy = ct_cyclic_lr_defaults();
    ct_reduce_lr_on_plateau_opts pl = ct_reduce_lr_on_plateau_defaults();
    switch (kind) {
    case 0: return ct_step_lr_new(opt, 3, 0.5);
    case 1: return ct_multi_step_lr_new(opt, milestones, 3, 0.5);
    case 2: return ct_exponential_lr_new(opt, 0.8);
    case 3: return ct_cosine_annealing_lr_new(opt, 3, 0.01);
    case 4: return ct_cosine_annealing_warm_restarts_new(opt, 2, 2, 0.001);
    case 5: return ct_linear_lr_new(opt, 0.25, 1.0, 6);
    case 6: return ct_constant_lr_new(opt, 0.5, 5);
    case 7: return ct_polynomial_lr_new(opt, 6, 2.0);
    case 8: return ct_lambda_lr_new(opt, os_lambda, NULL);
    case 9: return ct_multiplicative_lr_new(opt, os_mult, NULL);
    case 10:
        oc.total_steps = 10;
        oc.anneal_strategy = "linear";
        return ct_one_cycle_lr_new(opt, 0.5, &oc);
    case 11:
        cy.step_size_up = 2;
        cy.step_size_down = 3;
        cy.mode = "exp_range";
        cy.gamma = 0.9;
        return ct_cyclic_lr_new(opt, 0.01, 0.2, &cy);
    case OS_PLATEAU:
        pl.patience = 1;
        pl.cooldown = 1;
        pl.factor = 0.5;
        return ct_reduce_lr_on_plateau_new(opt, &pl);
    case 13:
        subs[0] = ct_linear_lr_new(opt, 0.5, 1.0, 2);
        subs[1] = ct_cosine_annealing_warm_restarts_new(opt, 2, 2, 0.0);
        return ct_sequential_lr_new(opt, subs, 2, milestones + 1, 1);
    default:
        subs[0] = ct_exponential_lr_new(opt, 0.9);
        subs[1] = ct_constant_lr_new(opt, 0.5, 5);
        return ct_chained_scheduler_new(subs, 2);
    }
}

/* An SGD with momentum over two groups (lrs 0.1, 0.05) of ps, with scheduler `kind`. */
static ct_optimizer *os_sgd(int kind, ct_tensor **ps, ct_lr_scheduler **sched,
                            ct_lr_scheduler **subs)
{
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = 0.1;
    o.momentum = 0.9;
    ct_optimizer *opt = ct_sgd_new(ps, 1, &o);
    o.lr = 0.05;
    CHECK(ct_optimizer_add_param_group(opt, ps + 1, 1, &o) == CT_OK);
    subs[0] = subs[1] = NULL;
    *sched = os_scheduler(kind, opt, subs);
    CHECK(*sched != NULL);
    return opt;
}

/* opt's and sched's state_dicts through ct_save_buffer and ct_load_buffer, loaded into
   opt2 and sched2. */
static void os_transfer(const ct_optimizer *opt, const ct_lr_scheduler *sched,
                        ct_optimizer *opt2, ct_lr_scheduler *sched2)
{
    ct_state_dict *ck = ct_state_dict_new(), *mo = ct_optimizer_state_dict(opt),
                  *ms = ct_lr_scheduler_state_dict(sched);
    CHECK(ct_state_dict_update(ck, mo, "optim.") == CT_OK);
    CHECK(ct_state_dict_update(ck, ms, "sched.") == CT_OK);
    size_t n = ct_save_buffer(ck, NULL, 0);
    unsigned char *buf = (unsigned char *)malloc(n);
    CHECK(buf && ct_save_buffer(ck, buf, n) == n);
    ct_state_dict *back = ct_load_buffer(buf, n);
    ct_state_dict *bo = ct_state_dict_select(back, "optim.");
    ct_state_dict *bs = ct_state_dict_select(back, "sched.");
    CHECK(ct_optimizer_load_state_dict(opt2, bo) == CT_OK);
    CHECK(ct_lr_scheduler_load_state_dict(sched2, bs) == CT_OK);
    free(buf);
    ct_state_dict_free(ck);
    ct_state_dict_free(mo);
    ct_state_dict_free(ms);
    ct_state_dict_free(back);
    ct_state_dict_free(bo);
    ct_state_dict_free(bs);
}

static void os_free_sched(ct_optimizer *opt, ct_lr_scheduler *sched, ct_lr_scheduler **subs,
                          ct_tensor **ps)
{
    os_free(opt, sched, ps);
    ct_lr_scheduler_free(subs[0]);
    ct_lr_scheduler_free(subs[1]);
}

/* Every scheduler class: K steps, both state_dicts saved and loaded into a fresh optimizer
   and scheduler, then N steps of both runs side by side: the same lrs, momenta, epochs and
   parameters, bit for bit. */
static void test_optim_state_every_scheduler(void)
{
    for (int kind = 0; kind < OS_SCHED_KINDS; kind++) {
        bool plateau = kind == OS_PLATEAU;
        ct_tensor *ps[2], *ps2[2];
        ct_lr_scheduler *sched = NULL, *sched2 = NULL, *subs[2], *subs2[2];
        os_params(os_init, CT_FLOAT32, ps);
        ct_optimizer *opt = os_sgd(kind, ps, &sched, subs);
        for (int j = 0; j < OS_K; j++) {
            os_step_any(opt, sched, ps, j, plateau);
        }
        float at_k[OS_NUMEL];
        os_values(ps, at_k);
        os_params(at_k, CT_FLOAT32, ps2);
        ct_optimizer *opt2 = os_sgd(kind, ps2, &sched2, subs2);
        os_transfer(opt, sched, opt2, sched2);
        for (int j = OS_K; j < OS_K + OS_N; j++) {
            os_step_any(opt, sched, ps, j, plateau);
            os_step_any(opt2, sched2, ps2, j, plateau);
            double a[2], b[2];
            float va[OS_NUMEL], vb[OS_NUMEL];
            CHECK(ct_lr_scheduler_get_last_lr(sched, a, 2) == 2);
            CHECK(ct_lr_scheduler_get_last_lr(sched2, b, 2) == 2);
            os_values(ps, va);
            os_values(ps2, vb);
            CHECK_MSG(a[0] == b[0] && a[1] == b[1] &&
                      ct_optimizer_get_momentum(opt, 1) == ct_optimizer_get_momentum(opt2, 1),
                      "scheduler %d, step %d: lr %.17g vs %.17g", kind, j, a[0], b[0]);
            CHECK_MSG(ct_lr_scheduler_last_epoch(sched) == ct_lr_scheduler_last_epoch(sched2),
                      "scheduler %d: last_epoch", kind);
            CHECK_MSG(memcmp(va, vb, sizeof va) == 0, "scheduler %d, step %d: params", kind, j);
        }
        os_free_sched(opt, sched, subs, ps);
        os_free_sched(opt2, sched2, subs2, ps2);
    }
}

/* Optimizer `kind` (every class, options that use each state slot) over ps. */
static ct_optimizer *os_any_optimizer(int kind, ct_tensor **ps)
{
    ct_adam_opts adam = ct_adamw_defaults();
    ct_rmsprop_opts rms = ct_rmsprop_defaults();
    ct_adagrad_opts ada = ct_adagrad_defaults();
    ct_nadam_opts nadam = ct_nadam_defaults();
    ct_radam_opts radam = ct_radam_defaults();
    adam.amsgrad = true;
    rms.momentum = 0.3;
    ada.lr_decay = 0.1;
    ada.initial_accumulator_value = 0.2;
    nadam.decoupled_weight_decay = true;
    nadam.weight_decay = 0.1;
    radam.decoupled_weight_decay = true;
    radam.weight_decay = 0.1;
    switch (kind) {
    case 0: return ct_adamw_new(ps, 2, &adam);
    case 1: return ct_rmsprop_new(ps, 2, &rms);
    case 2: return ct_adagrad_new(ps, 2, &ada);
    case 3: return ct_adadelta_new(ps, 2, NULL);
    case 4: return ct_adamax_new(ps, 2, NULL);
    case 5: return ct_nadam_new(ps, 2, &nadam);
    case 6: return ct_radam_new(ps, 2, &radam);
    case 7: return ct_sgd_new(ps, 2, NULL);
    default: return ct_adam_new(ps, 2, NULL);
    }
}

/* Every optimizer (each state slot in use, float32 and float64): K steps, state_dict, saved
   and loaded into a fresh optimizer, N more steps: the uninterrupted run's parameters bit
   for bit. */
static void test_optim_state_every_optimizer(void)
{
    for (int kind = 0; kind < 9; kind++) {
        for (int dtype = 0; dtype < 2; dtype++) {
            ct_dtype dt = dtype ? CT_FLOAT64 : CT_FLOAT32;
            ct_tensor *ps[2], *ps2[2];
            os_params(os_init, dt, ps);
            ct_optimizer *opt = os_any_optimizer(kind, ps);
            ct_lr_scheduler *sched = ct_exponential_lr_new(opt, 0.9);
            for (int j = 0; j < OS_K; j++) {
                os_step(opt, sched, ps, j);
            }
            float at_k[OS_NUMEL];
            os_values(ps, at_k);
            os_params(at_k, dt, ps2);
            if (dt == CT_FLOAT64) { /* the float64 values themselves */
                ct_no_grad_begin();
                CHECK(ct_copy_(ps2[0], ps[0]) && ct_copy_(ps2[1], ps[1]));
                ct_no_grad_end();
            }
            ct_optimizer *opt2 = os_any_optimizer(kind, ps2);
            ct_lr_scheduler *sched2 = ct_exponential_lr_new(opt2, 0.9);
            os_transfer(opt, sched, opt2, sched2);
            for (int j = OS_K; j < OS_K + OS_N; j++) {
                os_step(opt, sched, ps, j);
                os_step(opt2, sched2, ps2, j);
                for (int i = 0; i < 2; i++) {
                    CHECK_MSG(memcmp(ct_data_ptr(ps[i]), ct_data_ptr(ps2[i]),
                                     ct_nbytes(ps[i])) == 0,
                              "%s %s step %d: parameter %d differs", ct_optimizer_name(opt),
                              ct_dtype_name(dt), j, i);
                }
            }
            os_free(opt, sched, ps);
            os_free(opt2, sched2, ps2);
        }
    }
}

/* PyTorch's errors; nothing changes on an error. */
static void test_optim_state_errors(void)
{
    ct_state_dict *ck = ct_load_buffer(os_ckpt, sizeof os_ckpt);
    ct_state_dict *adam = os_part(ck, 0, "optim."), *sgd = os_part(ck, 1, "optim.");
    ct_tensor *ps[2];
    ct_lr_scheduler *sched = NULL;
    os_params(os_init, CT_FLOAT32, ps);
    ct_optimizer *opt = os_optimizer(0, ps, &sched);
    double lr = ct_optimizer_get_lr(opt, 0);
    CHECK(ct_optimizer_load_state_dict(opt, sgd) == CT_ERR_VALUE); /* 2 groups, 1 here */
    CHECK_ERROR(CT_ERR_VALUE, "loaded state dict has a different number of parameter groups");
    CHECK(ct_state_dict_remove(adam, "param_groups.0.params.1") == CT_OK);
    CHECK(ct_optimizer_load_state_dict(opt, adam) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "loaded state dict contains a parameter group that doesn't "
                "match the size of optimizer's group");
    CHECK(ct_state_dict_set_int(adam, "param_groups.0.params.1", 1) == CT_OK);
    ct_tensor *wrong = ct_zeros((const int64_t[]){4}, 1, CT_FLOAT32);
    CHECK(ct_state_dict_set(adam, "state.1.exp_avg", wrong) == CT_OK);
    ct_free(wrong);
    CHECK(ct_optimizer_load_state_dict(opt, adam) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "state 'exp_avg' of parameter 1 does not match");
    CHECK(ct_optimizer_get_lr(opt, 0) == lr);
    ct_state_dict *mine = ct_optimizer_state_dict(opt);
    CHECK(mine && !ct_state_dict_contains(mine, "state.0.step"));
    ct_state_dict_free(mine);
    CHECK(ct_optimizer_load_state_dict(NULL, adam) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_lr_scheduler_load_state_dict(sched, NULL) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_optimizer_state_dict(NULL) == NULL && ct_lr_scheduler_state_dict(NULL) == NULL);
    ct_error_clear();
    ct_state_dict_free(adam);
    ct_state_dict_free(sgd);
    ct_state_dict_free(ck);
    os_free(opt, sched, ps);
}

void test_optim_state(void)
{
    RUN(test_optim_state_pytorch_checkpoint);
    RUN(test_optim_state_matches_pytorch_keys);
    RUN(test_optim_state_round_trip);
    RUN(test_optim_state_dtype_and_hyperparameters);
    RUN(test_optim_state_every_scheduler);
    RUN(test_optim_state_every_optimizer);
    RUN(test_optim_state_errors);
}
