/* tests/test_swa.c - torch.optim.swa_utils against PyTorch (tests/golden/swa_golden.h, from
 * tools/gen_golden_swa.py): AveragedModel's SWA and EMA averages over 10 steps (with and
 * without buffers, float32 and float64) bit for bit, SWALR's lrs for 100 steps bit for bit,
 * update_bn's statistics, custom averages, the state_dict keys and PyTorch's errors. */
#include "test.h"
#include "golden/swa_golden.h"

/* Sequential(Linear(3, 2), BatchNorm1d(2), Linear(2, 1)) in dtype. */
static ct_module *swa_model_new(ct_dtype dtype)
{
    ct_module *m = ct_sequential_new();
    ct_sequential_append(m, ct_linear_new(3, 2, true));
    ct_sequential_append(m, ct_batch_norm1d_new(2, NULL));
    ct_sequential_append(m, ct_linear_new(2, 1, true));
    return ct_module_to(m, dtype);
}

/* The parameters, then the buffers of m into t (cap 16); returns their count. */
static int swa_tensors(const ct_module *m, ct_tensor **t)
{
    int64_t np = ct_module_parameters(m, t, 16);
    return (int)(np + ct_module_buffers(m, t + np, 16 - np));
}

/* Sets m's parameters and buffers to v (CT_GOLDEN_SWA_VALUES values, in swa_tensors order). */
static void swa_set(ct_module *m, const double *v)
{
    ct_tensor *t[16];
    int n = swa_tensors(m, t);
    ct_scope_begin();
    ct_no_grad_begin();
    for (int k = 0; k < n; k++) {
        ct_copy_(t[k], ct_tensor_from_data(v, CT_FLOAT64, ct_sizes(t[k]), ct_dim(t[k])));
        v += ct_numel(t[k]);
    }
    ct_no_grad_end();
    ct_scope_end();
}

/* Whether m's parameters and buffers hold exactly v. */
static bool swa_equal(const ct_module *m, const double *v)
{
    ct_tensor *t[16];
    int n = swa_tensors(m, t);
    bool ok = n > 0;
    for (int k = 0; k < n; k++) {
        ok = ok && CHECK_TENSOR(t[k], v, ct_numel(t[k]), 0, 0);
        v += ct_numel(t[k]);
    }
    return ok;
}

static void test_swa_averaged_model(void)
{
    int n = (int)(sizeof ct_golden_swa_cases / sizeof ct_golden_swa_cases[0]);
    for (int k = 0; k < n; k++) {
        const ct_golden_swa_case *c = &ct_golden_swa_cases[k];
        ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
        ct_module *model = swa_model_new(dt);
        ct_averaged_model_opts o = ct_averaged_model_defaults();
        o.ema = c->ema != 0;
        o.decay = c->decay;
        o.use_buffers = c->use_buffers != 0;
        ct_module *avg = ct_averaged_model_new(model, swa_model_new(dt), &o);
        CHECK(avg != NULL);
        for (int s = 0; avg && s < CT_GOLDEN_SWA_STEPS; s++) {
            swa_set(model, c->model + s * CT_GOLDEN_SWA_VALUES);
            CHECK(ct_averaged_model_update_parameters(avg, model) == CT_OK);
            CHECK_MSG(swa_equal(ct_module_get_submodule(avg, "module"),
                                c->avg + s * CT_GOLDEN_SWA_VALUES),
                      "case %s, step %d", c->name, s);
        }
        CHECK(ct_item_int64(ct_module_get_parameter(avg, "n_averaged")) == CT_GOLDEN_SWA_STEPS);
        ct_module_free(avg);
        ct_module_free(model);
    }
}

/* The defaults, the state_dict's keys and the forward, which runs the copy's. */
static void test_swa_averaged_model_module(void)
{
    ct_averaged_model_opts o = ct_averaged_model_defaults();
    CHECK(o.decay == 0.999 && !o.ema && !o.use_buffers && !o.avg_fn && !o.avg_user);
    ct_manual_seed(0);
    ct_module *model = swa_model_new(CT_FLOAT32);
    ct_module *avg = ct_averaged_model_new(model, swa_model_new(CT_FLOAT32), NULL);
    CHECK(avg && !strcmp(ct_module_name(avg), "AveragedModel"));
    ct_tensor *na = ct_module_get_parameter(avg, "n_averaged");
    CHECK(na && ct_dim(na) == 0 && ct_tensor_dtype(na) == CT_INT64 && ct_item_int64(na) == 0);
    ct_state_dict *sd = ct_module_state_dict(avg);
    CHECK(sd && ct_state_dict_len(sd) == 10);
    CHECK(sd && !strcmp(ct_state_dict_key(sd, 0), "n_averaged"));
    CHECK(sd && !strcmp(ct_state_dict_key(sd, 1), "module.0.weight"));
    ct_state_dict_free(sd);
    const int64_t s[2] = {4, 3};
    ct_scope_begin();
    ct_module_eval(model);
    ct_module_eval(avg);
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL);
    /* the copy holds the model's values from the start, as deepcopy */
    CHECK(ct_allclose(ct_module_forward(avg, x), ct_module_forward(model, x), 0, 0, false));
    ct_scope_end();
    ct_module_free(avg);
    ct_module_free(model);
}

/* avg_fn: averaged = (averaged + model) / 2 (n_averaged must be the number so far) */
static ct_tensor *swa_half_fn(const ct_tensor *avg, const ct_tensor *model, const ct_tensor *n,
                              void *user)
{
    int *calls = (int *)user;
    (*calls) += ct_item_int64(n) >= 1;
    return ct_mul_scalar(ct_add(avg, model), 0.5);
}

static void test_swa_custom_avg(void)
{
    int calls = 0;
    ct_module *model = swa_model_new(CT_FLOAT64);
    ct_averaged_model_opts o = ct_averaged_model_defaults();
    o.avg_fn = swa_half_fn;
    o.avg_user = &calls;
    ct_module *avg = ct_averaged_model_new(model, swa_model_new(CT_FLOAT64), &o);
    const double *v = ct_golden_swa_cases[4].model; /* float64 values */
    swa_set(model, v);
    CHECK(ct_averaged_model_update_parameters(avg, model) == CT_OK);
    CHECK(calls == 0 && swa_equal(ct_module_get_submodule(avg, "module"), v));
    swa_set(model, v + CT_GOLDEN_SWA_VALUES);
    CHECK(ct_averaged_model_update_parameters(avg, model) == CT_OK);
    CHECK(calls == 6); /* the parameters; the buffers are copied (no use_buffers) */
    ct_tensor *t[16];
    swa_tensors(ct_module_get_submodule(avg, "module"), t);
    double want = (v[0] + v[CT_GOLDEN_SWA_VALUES]) * 0.5;
    ct_scope_begin();
    CHECK(ct_item(ct_select(ct_select(t[0], 0, 0), 0, 0)) == want);
    ct_scope_end();
    ct_module_free(avg);
    ct_module_free(model);
}

/* An SGD (momentum 0.9) over one scalar parameter per group with the case's lrs. */
static ct_optimizer *swa_opt(const ct_golden_swalr_case *c, ct_tensor **params)
{
    const int64_t one = 1;
    for (int g = 0; g < c->n_groups; g++) {
        params[g] = ct_requires_grad_(ct_zeros(&one, 1, CT_FLOAT32), true);
    }
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = c->lrs[0];
    o.momentum = 0.9;
    ct_optimizer *opt = ct_sgd_new(params, 1, &o);
    for (int g = 1; g < c->n_groups; g++) {
        CHECK(ct_optimizer_add_param_group(opt, params + g, 1, NULL) == CT_OK);
        CHECK(ct_optimizer_set_lr(opt, g, c->lrs[g]) == CT_OK);
    }
    return opt;
}

static void test_swa_swalr(void)
{
    int n = (int)(sizeof ct_golden_swalr_cases / sizeof ct_golden_swalr_cases[0]);
    for (int k = 0; k < n; k++) {
        const ct_golden_swalr_case *c = &ct_golden_swalr_cases[k];
        ct_tensor *params[2];
        ct_optimizer *opt = swa_opt(c, params);
        ct_lr_scheduler *before = c->before ? ct_cosine_annealing_lr_new(opt, 10, 0.0) : NULL;
        for (int s = 0; s < c->before; s++) {
            CHECK(ct_optimizer_step(opt) == CT_OK && ct_lr_scheduler_step(before) == CT_OK);
        }
        ct_lr_scheduler *sched =
            ct_swalr_new(opt, c->swa_lrs, c->n_swa, c->anneal_epochs, c->strategy);
        CHECK(sched != NULL);
        for (int s = 0; sched && s <= CT_GOLDEN_SWALR_STEPS; s++) {
            if (s > 0) {
                CHECK(ct_optimizer_step(opt) == CT_OK && ct_lr_scheduler_step(sched) == CT_OK);
            }
            for (int g = 0; g < c->n_groups; g++) {
                double want = c->lrs_out[s * c->n_groups + g];
                CHECK_MSG(ct_optimizer_get_lr(opt, g) == want, "%s step %d group %d: %.17g, "
                          "want %.17g", c->name, s, g, ct_optimizer_get_lr(opt, g), want);
            }
        }
        ct_lr_scheduler_free(sched);
        ct_lr_scheduler_free(before);
        ct_optimizer_free(opt);
        for (int g = 0; g < c->n_groups; g++) {
            ct_free(params[g]);
        }
    }
}

/* running_mean of the BatchNorm after one training forward of x (momentum 0.3 expected):
   0.7 * before + 0.3 * mean(linear(x), 0) */
static void swa_check_momentum(ct_module *model, const ct_tensor *x)
{
    ct_module *bn = ct_module_child(model, 1);
    ct_tensor *rm = ct_module_get_parameter(bn, "running_mean");
    ct_scope_begin();
    ct_tensor *want = ct_add(ct_mul_scalar(ct_clone(rm), 0.7),
                             ct_mul_scalar(ct_mean_dim(ct_linear_forward(ct_module_child(model, 0),
                                                                         x), 0, false), 0.3));
    ct_module_train(model, true);
    ct_no_grad_begin();
    ct_module_forward(model, x);
    ct_no_grad_end();
    CHECK(ct_allclose(rm, want, 1e-6, 1e-6, false));
    ct_scope_end();
}

/* Sequential(Linear(3, 4), BatchNorm1d(4, momentum=0.3)) */
static ct_module *swa_bn_model_new(void)
{
    ct_batch_norm_module_opts bo = ct_batch_norm_module_defaults();
    bo.momentum = 0.3;
    ct_module *model = ct_sequential_new();
    ct_sequential_append(model, ct_linear_new(3, 4, true));
    ct_sequential_append(model, ct_batch_norm1d_new(4, &bo));
    return model;
}

/* Whether bn's statistics are the golden ones of update_bn. */
static bool swa_bn_stats_ok(const ct_module *bn)
{
    const double *st = ct_golden_update_bn_stats;
    return CHECK_TENSOR(ct_module_get_parameter(bn, "running_mean"), st, 4, 1e-6, 1e-6) &&
           CHECK_TENSOR(ct_module_get_parameter(bn, "running_var"), st + 4, 4, 1e-6, 1e-6) &&
           ct_item_int64(ct_module_get_parameter(bn, "num_batches_tracked")) == (int64_t)st[8];
}

static void test_swa_update_bn(void)
{
    ct_manual_seed(1);
    ct_module *model = swa_bn_model_new();
    ct_module_eval(model);
    ct_module *bn = ct_module_child(model, 1);
    const int64_t sx[2] = {10, 3};
    ct_scope_begin();
    ct_tensor *data[2] = {ct_to_dtype(ct_tensor_from_data(ct_golden_update_bn_x, CT_FLOAT64,
                                                          sx, 2), CT_FLOAT32),
                          ct_arange(0, 10, 1, CT_INT64)};
    ct_dataset *ds = ct_tensor_dataset_new(data, 2);
    ct_dataloader_opts lo = ct_dataloader_defaults();
    lo.batch_size = 4;
    ct_dataloader *dl = ct_dataloader_new(ds, &lo);
    ct_fill_(ct_module_get_parameter(bn, "running_mean"), 5);
    ct_fill_(ct_module_get_parameter(bn, "num_batches_tracked"), 9);
    /* an averaged model first: its copy's BatchNorm, through the AveragedModel's forward */
    ct_module *avg = ct_averaged_model_new(model, swa_bn_model_new(), NULL);
    CHECK(ct_update_bn(dl, avg) == CT_OK);
    CHECK(swa_bn_stats_ok(ct_module_get_submodule(avg, "module.1")));
    CHECK(ct_update_bn(dl, model) == CT_OK);
    CHECK(swa_bn_stats_ok(bn));
    CHECK(!ct_module_is_training(model) && !ct_module_is_training(bn));
    swa_check_momentum(model, data[0]);
    ct_module_free(avg);
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    ct_scope_end();
    ct_module_free(model);
}

/* A model without BatchNorm is left alone; errors of the loader stop the pass. */
static void test_swa_update_bn_no_bn(void)
{
    ct_module *lin = ct_linear_new(3, 2, true);
    const int64_t s[2] = {4, 3};
    ct_tensor *x = ct_ones(s, 2, CT_FLOAT32);
    ct_dataset *ds = ct_tensor_dataset_new(&x, 1);
    ct_dataloader *dl = ct_dataloader_new(ds, NULL);
    ct_module_eval(lin);
    CHECK(ct_update_bn(dl, lin) == CT_OK && !ct_module_is_training(lin));
    ct_module *bad = ct_sequential_new(); /* Linear(2, 2) on 3 features: the forward fails */
    ct_sequential_append(bad, ct_linear_new(2, 2, true));
    ct_sequential_append(bad, ct_batch_norm1d_new(2, NULL));
    CHECK(ct_update_bn(dl, bad) != CT_OK);
    ct_error_clear();
    ct_module_free(bad);
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    ct_free(x);
    ct_module_free(lin);
}

static void test_swa_errors(void)
{
    ct_module *model = swa_model_new(CT_FLOAT32);
    ct_averaged_model_opts o = ct_averaged_model_defaults();
    o.ema = true;
    o.decay = 1.5;
    CHECK(ct_averaged_model_new(model, swa_model_new(CT_FLOAT32), &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid decay value 1.5 provided. Please provide a value in "
                "[0,1] range.");
    CHECK(ct_averaged_model_new(model, ct_linear_new(3, 2, true), NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "copy has 2 parameters, model has 6");
    CHECK(ct_averaged_model_update_parameters(model, model) != CT_OK);
    CHECK_ERROR(CT_ERR_VALUE, "expected an AveragedModel module, got Sequential");
    ct_module *avg = ct_averaged_model_new(model, swa_model_new(CT_FLOAT32), NULL);
    ct_module *other = ct_linear_new(3, 2, true);
    CHECK(ct_averaged_model_update_parameters(avg, other) != CT_OK);
    CHECK_ERROR(CT_ERR_VALUE, "copy has 6 parameters, model has 2");
    ct_module_free(other);
    ct_module_free(avg);
    ct_module_free(model);

    const int64_t one = 1;
    ct_tensor *p = ct_requires_grad_(ct_zeros(&one, 1, CT_FLOAT32), true);
    ct_optimizer *opt = ct_sgd_new(&p, 1, NULL);
    const double lrs[2] = {0.1, 0.2};
    CHECK(ct_swalr_new(opt, lrs, 2, 10, "cos") == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "swa_lr must have the same length as optimizer.param_groups. "
                "swa_lr has 2 values, param_groups has 1.");
    CHECK(ct_swalr_new(opt, lrs, 1, 10, "step") == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "anneal_strategy must be one of 'cos' or 'linear', instead got "
                "step");
    CHECK(ct_swalr_new(opt, lrs, 1, -1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "anneal_epochs must be equal or greater than 0, got -1");
    ct_lr_scheduler *s = ct_swalr_new(opt, lrs, 1, 3, NULL); /* NULL: "cos" */
    ct_state_dict *sd = s ? ct_lr_scheduler_state_dict(s) : NULL;
    int64_t step_count = 0;
    CHECK(sd && ct_state_dict_get_int(sd, "_step_count", &step_count) && step_count == 1);
    ct_state_dict_free(sd);
    ct_lr_scheduler_free(s);
    ct_optimizer_free(opt);
    ct_free(p);
}

void test_swa(void)
{
    RUN(test_swa_averaged_model);
    RUN(test_swa_averaged_model_module);
    RUN(test_swa_custom_avg);
    RUN(test_swa_swalr);
    RUN(test_swa_update_bn);
    RUN(test_swa_update_bn_no_bn);
    RUN(test_swa_errors);
}
