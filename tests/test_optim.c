/* tests/test_optim.c - SGD, Adam and AdamW against torch.optim (tests/golden/optim_golden.h,
 * from tools/gen_golden_optim.py), plus zero_grad, parameter groups, errors and threads. */
#include "test.h"
#include "golden/optim_golden.h"

#include <stdlib.h>

static ct_optimizer *opt_from_case(const ct_golden_optim_case *c, ct_tensor **params, int n)
{
    if (c->kind == 1) {
        ct_sgd_opts o = ct_sgd_defaults();
        o.lr = c->lr;
        o.momentum = c->momentum;
        o.dampening = c->dampening;
        o.weight_decay = c->weight_decay;
        o.nesterov = c->nesterov != 0;
        o.maximize = c->maximize != 0;
        return ct_sgd_new(params, n, &o);
    }
    ct_adam_opts o = c->kind == 2 ? ct_adam_defaults() : ct_adamw_defaults();
    o.lr = c->lr;
    o.betas[0] = c->beta1;
    o.betas[1] = c->beta2;
    o.eps = c->eps;
    o.weight_decay = c->weight_decay;
    o.amsgrad = c->amsgrad != 0;
    o.maximize = c->maximize != 0;
    return c->kind == 2 ? ct_adam_new(params, n, &o) : ct_adamw_new(params, n, &o);
}

static void test_optim_defaults_match_pytorch(void)
{
    ct_sgd_opts s = ct_sgd_defaults();
    CHECK(s.lr == CT_GOLDEN_SGD_LR && s.momentum == CT_GOLDEN_SGD_MOMENTUM);
    CHECK(s.dampening == CT_GOLDEN_SGD_DAMPENING && s.weight_decay == CT_GOLDEN_SGD_WEIGHT_DECAY);
    CHECK(s.nesterov == CT_GOLDEN_SGD_NESTEROV && s.maximize == CT_GOLDEN_SGD_MAXIMIZE);
    ct_adam_opts a = ct_adam_defaults();
    CHECK(a.lr == CT_GOLDEN_ADAM_LR && a.eps == CT_GOLDEN_ADAM_EPS);
    CHECK(a.betas[0] == CT_GOLDEN_ADAM_BETA1 && a.betas[1] == CT_GOLDEN_ADAM_BETA2);
    CHECK(a.weight_decay == CT_GOLDEN_ADAM_WEIGHT_DECAY);
    CHECK(a.amsgrad == CT_GOLDEN_ADAM_AMSGRAD && a.maximize == CT_GOLDEN_ADAM_MAXIMIZE);
    ct_adam_opts w = ct_adamw_defaults();
    CHECK(w.lr == CT_GOLDEN_ADAMW_LR && w.eps == CT_GOLDEN_ADAMW_EPS);
    CHECK(w.betas[0] == CT_GOLDEN_ADAMW_BETA1 && w.betas[1] == CT_GOLDEN_ADAMW_BETA2);
    CHECK(w.weight_decay == CT_GOLDEN_ADAMW_WEIGHT_DECAY);
    CHECK(w.amsgrad == CT_GOLDEN_ADAMW_AMSGRAD && w.maximize == CT_GOLDEN_ADAMW_MAXIMIZE);
}

static void opt_run_golden(const ct_golden_optim_case *c, ct_dtype dtype)
{
    ct_tensor *params[CT_GOLDEN_OPTIM_NPARAMS];
    int64_t off[CT_GOLDEN_OPTIM_NPARAMS + 1];
    off[0] = 0;
    for (int k = 0; k < CT_GOLDEN_OPTIM_NPARAMS; k++) {
        params[k] = ct_test_param(ct_golden_optim_init + off[k], ct_golden_optim_sizes[k],
                                  ct_golden_optim_ndim[k], dtype);
        off[k + 1] = off[k] + ct_numel(params[k]);
    }
    CHECK(off[CT_GOLDEN_OPTIM_NPARAMS] == CT_GOLDEN_OPTIM_NUMEL);
    ct_optimizer *opt = opt_from_case(c, params, CT_GOLDEN_OPTIM_NPARAMS);
    CHECK_MSG(opt != NULL, "%s: %s", c->name, ct_error() ? ct_error() : "?");
    bool f64 = dtype == CT_FLOAT64;
    double rtol = f64 ? 1e-10 : 1e-5, atol = f64 ? 1e-12 : 1e-6;
    for (int s = 0; opt && s < CT_GOLDEN_OPTIM_STEPS; s++) {
        if (c->lr_step == s) {
            CHECK(ct_optimizer_set_lr(opt, -1, c->new_lr) == CT_OK);
            CHECK(ct_optimizer_get_lr(opt, 0) == c->new_lr);
        }
        for (int k = 0; k < CT_GOLDEN_OPTIM_NPARAMS; k++) {
            if (c->skip & (1u << (4 * s + k))) {
                CHECK(ct_set_grad(params[k], NULL) == CT_OK);
            } else {
                ct_test_set_grad(params[k], ct_golden_optim_grads[s] + off[k]);
            }
        }
        CHECK(ct_optimizer_step(opt) == CT_OK);
        const double *want = f64 ? c->want_f64[s] : c->want_f32[s];
        bool ok = true;
        for (int k = 0; k < CT_GOLDEN_OPTIM_NPARAMS && ok; k++) {
            ok = CHECK_TENSOR(params[k], want + off[k], off[k + 1] - off[k], rtol, atol) != 0;
        }
        if (!ok) {
            CHECK_MSG(0, "golden case %s (%s) after step %d", c->name, ct_dtype_name(dtype),
                      s + 1);
            break;
        }
    }
    ct_optimizer_free(opt);
    for (int k = 0; k < CT_GOLDEN_OPTIM_NPARAMS; k++) {
        ct_free(params[k]);
    }
}

static void test_optim_golden_float64(void)
{
    for (int i = 0; i < CT_GOLDEN_OPTIM_NCASES; i++) {
        opt_run_golden(&ct_golden_optim_cases[i], CT_FLOAT64);
    }
}

static void test_optim_golden_float32(void)
{
    for (int i = 0; i < CT_GOLDEN_OPTIM_NCASES; i++) {
        opt_run_golden(&ct_golden_optim_cases[i], CT_FLOAT32);
    }
}

static void test_optim_skips_null_grad_and_bumps_versions(void)
{
    const int64_t s[1] = {3};
    const double a[3] = {1, 2, 3}, g[3] = {1, 1, 1};
    ct_tensor *p[2];
    p[0] = ct_test_param(a, s, 1, CT_FLOAT32);
    p[1] = ct_test_param(a, s, 1, CT_FLOAT32);
    ct_optimizer *opt = ct_adam_new(p, 2, NULL);
    CHECK(opt && strcmp(ct_optimizer_name(opt), "Adam") == 0);
    ct_test_set_grad(p[0], g);
    uint32_t v0 = ct_version(p[0]), v1 = ct_version(p[1]);
    CHECK(ct_optimizer_step(opt) == CT_OK);
    CHECK(ct_version(p[0]) == v0 + 1 && ct_version(p[1]) == v1);
    CHECK_TENSOR(p[1], a, 3, 0, 0); /* untouched: no grad */
    const double want[3] = {1 - 1e-3, 2 - 1e-3, 3 - 1e-3}; /* Adam's first step is -lr*sign */
    CHECK_TENSOR(p[0], want, 3, 1e-6, 0);
    /* the update records no history: still a leaf that requires grad */
    CHECK(ct_is_leaf(p[0]) && ct_requires_grad(p[0]) && ct_grad_fn(p[0]) == NULL);
    CHECK(ct_optimizer_step_count(opt) == 1);
    ct_optimizer_free(opt);
    ct_free(p[0]);
    ct_free(p[1]);
}

static void test_optim_zero_grad_both_modes(void)
{
    const int64_t s[2] = {2, 2};
    const double a[4] = {1, 2, 3, 4}, zero[4] = {0, 0, 0, 0};
    ct_tensor *p = ct_test_param(a, s, 2, CT_FLOAT64);
    ct_optimizer *opt = ct_sgd_new(&p, 1, NULL);
    ct_optimizer_zero_grad(opt, true); /* no grad yet: a no-op */
    CHECK(ct_grad(p) == NULL);
    ct_test_set_grad(p, a);
    ct_tensor *g = ct_grad(p);
    ct_optimizer_zero_grad(opt, false);
    CHECK(ct_grad(p) == g); /* the same tensor, zeroed in place */
    CHECK_TENSOR(ct_grad(p), zero, 4, 0, 0);
    ct_optimizer_zero_grad(opt, true);
    CHECK(ct_grad(p) == NULL);
    ct_optimizer_zero_grad(NULL, true);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_optimizer_zero_grad");
    ct_optimizer_free(opt);
    ct_optimizer_free(NULL);
    ct_free(p);
}

static void test_optim_zero_grad_after_backward(void)
{
    const int64_t s[1] = {3};
    const double a[3] = {1, 2, 3}, zero[3] = {0, 0, 0}, want[3] = {0.9, 1.8, 2.7};
    ct_tensor *p = ct_test_param(a, s, 1, CT_FLOAT64);
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = 0.05;
    ct_optimizer *opt = ct_sgd_new(&p, 1, &o);
    ct_scope_begin();
    ct_tensor *loss = ct_sum(ct_mul(p, p)); /* grad = 2p */
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    ct_scope_end();
    CHECK(ct_optimizer_step(opt) == CT_OK);
    CHECK_TENSOR(p, want, 3, 1e-15, 0);
    ct_optimizer_zero_grad(opt, false);
    CHECK_TENSOR(ct_grad(p), zero, 3, 0, 0);
    ct_optimizer_free(opt);
    ct_free(p);
}

static void test_optim_invalid_options(void)
{
    const int64_t s[1] = {2};
    const double a[2] = {1, 2};
    ct_tensor *p = ct_test_param(a, s, 1, CT_FLOAT32);
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = -1.0;
    CHECK(ct_sgd_new(&p, 1, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_sgd_new: Invalid learning rate: -1.0");
    o = ct_sgd_defaults();
    o.momentum = -0.5;
    CHECK(ct_sgd_new(&p, 1, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid momentum value: -0.5");
    o = ct_sgd_defaults();
    o.weight_decay = -1e-5;
    CHECK(ct_sgd_new(&p, 1, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid weight_decay value: -1e-05");
    o = ct_sgd_defaults();
    o.nesterov = true;
    CHECK(ct_sgd_new(&p, 1, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Nesterov momentum requires a momentum and zero dampening");
    o.momentum = 0.9;
    o.dampening = 0.1;
    CHECK(ct_sgd_new(&p, 1, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Nesterov momentum requires a momentum and zero dampening");

    ct_adam_opts d = ct_adam_defaults();
    d.betas[0] = 1.0;
    CHECK(ct_adam_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_adam_new: Invalid beta parameter at index 0: 1.0");
    d = ct_adam_defaults();
    d.betas[1] = -0.1;
    CHECK(ct_adam_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid beta parameter at index 1: -0.1");
    d = ct_adam_defaults();
    d.eps = -1e-8;
    CHECK(ct_adam_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid epsilon value: -1e-08");
    d = ct_adam_defaults();
    d.lr = NAN;
    CHECK(ct_adam_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid learning rate: nan");
    d = ct_adamw_defaults();
    d.weight_decay = -0.01;
    CHECK(ct_adamw_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_adamw_new: Invalid weight_decay value: -0.01");
    d = ct_adamw_defaults();
    d.lr = -100.0;
    CHECK(ct_adamw_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid learning rate: -100.0");
    d.lr = -2.5e16;
    CHECK(ct_adamw_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid learning rate: -2.5e+16");
    d.lr = -0.0001;
    CHECK(ct_adamw_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid learning rate: -0.0001");

    ct_optimizer *opt = ct_adam_new(&p, 1, NULL);
    CHECK(ct_optimizer_set_lr(opt, 0, -0.5) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "ct_optimizer_set_lr: Invalid learning rate: -0.5");
    CHECK(ct_optimizer_set_lr(opt, 1, 0.5) == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "param group 1 out of range");
    CHECK(isnan(ct_optimizer_get_lr(opt, -1)));
    CHECK_ERROR(CT_ERR_INDEX, "param group -1 out of range");
    CHECK(ct_optimizer_get_lr(opt, 0) == 1e-3);
    CHECK(ct_optimizer_step(NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_optimizer_step");
    ct_optimizer_free(opt);
    ct_free(p);
}

static void test_optim_rejects_bad_params(void)
{
    const int64_t s[1] = {2};
    const double a[2] = {1, 2};
    ct_tensor *p = ct_test_param(a, s, 1, CT_FLOAT32);
    ct_tensor *plain = ct_tensor_from_data(a, CT_FLOAT64, s, 1);
    ct_tensor *nonleaf = ct_mul_scalar(p, 2.0);
    CHECK(ct_sgd_new(&nonleaf, 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_sgd_new: can't optimize a non-leaf Tensor");
    CHECK(ct_adam_new(&plain, 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "optimizer can only optimize Tensors that require grad");
    CHECK(ct_adamw_new(&p, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "optimizer got an empty parameter list");
    CHECK(ct_adam_new(NULL, 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_adam_new");
    ct_tensor *two[2] = {p, NULL};
    CHECK(ct_adam_new(two, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_adam_new");
    two[1] = p;
    CHECK(ct_sgd_new(two, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "duplicate parameters");
    ct_optimizer *opt = ct_sgd_new(&p, 1, NULL);
    CHECK(ct_optimizer_add_param_group(opt, &p, 1, NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "some parameters appear in more than one parameter group");
    ct_sgd_opts bad = ct_sgd_defaults();
    bad.lr = -3.0;
    CHECK(ct_optimizer_add_param_group(opt, &plain, 1, &bad) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "ct_optimizer_add_param_group: Invalid learning rate: -3.0");
    CHECK(ct_optimizer_num_param_groups(opt) == 1);
    ct_optimizer_free(opt);
    ct_free(nonleaf);
    ct_free(plain);
    ct_free(p);
}

static void test_optim_param_groups(void)
{
    const int64_t s[1] = {2};
    const double a[2] = {1, 2}, g[2] = {1, -1};
    ct_tensor *p0 = ct_test_param(a, s, 1, CT_FLOAT64), *p1 = ct_test_param(a, s, 1, CT_FLOAT64);
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = 0.1;
    ct_optimizer *opt = ct_sgd_new(&p0, 1, &o);
    o.lr = 0.5;
    o.momentum = 0.9;
    CHECK(ct_optimizer_add_param_group(opt, &p1, 1, &o) == CT_OK);
    CHECK(ct_optimizer_num_param_groups(opt) == 2);
    CHECK(ct_optimizer_get_lr(opt, 0) == 0.1 && ct_optimizer_get_lr(opt, 1) == 0.5);
    ct_tensor *got[2] = {NULL, NULL};
    CHECK(ct_optimizer_params(opt, 1, got, 2) == 1 && got[0] == p1);
    CHECK(ct_optimizer_params(opt, 0, NULL, 0) == 1);
    ct_test_set_grad(p0, g);
    ct_test_set_grad(p1, g);
    CHECK(ct_optimizer_step(opt) == CT_OK);
    const double w0[2] = {0.9, 2.1}, w1[2] = {0.5, 2.5};
    CHECK_TENSOR(p0, w0, 2, 1e-15, 0);
    CHECK_TENSOR(p1, w1, 2, 1e-15, 0);
    CHECK(ct_optimizer_set_lr(opt, -1, 0.01) == CT_OK);
    CHECK(ct_optimizer_step(opt) == CT_OK); /* p1: buf = 0.9*g + g = 1.9g */
    const double v0[2] = {0.89, 2.11}, v1[2] = {0.481, 2.519};
    CHECK_TENSOR(p0, v0, 2, 1e-14, 0);
    CHECK_TENSOR(p1, v1, 2, 1e-14, 0);
    /* NULL options: the constructor's (lr 0.1, no momentum) */
    ct_tensor *p2 = ct_test_param(a, s, 1, CT_FLOAT64);
    CHECK(ct_optimizer_add_param_group(opt, &p2, 1, NULL) == CT_OK);
    CHECK(ct_optimizer_get_lr(opt, 2) == 0.1);
    ct_free(p2); /* the optimizer keeps its own reference */
    CHECK(ct_optimizer_params(opt, 2, got, 1) == 1 && ct_numel(got[0]) == 2);
    ct_test_set_grad(got[0], g);
    CHECK(ct_optimizer_step(opt) == CT_OK);
    CHECK_TENSOR(got[0], w0, 2, 1e-15, 0);
    ct_optimizer_free(opt);
    ct_free(p0);
    ct_free(p1);
}

/* Non-contiguous parameters and gradients give the same result as contiguous ones (a
   gradient of another dtype is rejected by ct_set_grad, as in PyTorch). */
static void test_optim_noncontiguous_and_converted(void)
{
    const int64_t s43[2] = {4, 3};
    double a[12], g[12];
    for (int i = 0; i < 12; i++) {
        a[i] = 0.25 * i - 1;
        g[i] = 0.1 * (i % 5) - 0.2;
    }
    /* reference: contiguous (3, 4) parameter equal to a^T viewed (3, 4) */
    ct_tensor *base = ct_tensor_from_data(a, CT_FLOAT64, s43, 2);
    ct_tensor *view = ct_t(base); /* a leaf view with strides (1, 3) */
    ct_tensor *ref = ct_requires_grad_(ct_contiguous(view), true);
    CHECK(ct_requires_grad_(view, true) == view);
    CHECK(view && !ct_is_contiguous(view) && ct_is_leaf(view));
    ct_tensor *gbase = ct_tensor_from_data(g, CT_FLOAT64, s43, 2);
    ct_tensor *gview = ct_t(gbase);              /* non-contiguous grad */
    ct_tensor *gref = ct_contiguous(gview);      /* contiguous grad */
    ct_adam_opts o = ct_adamw_defaults();
    o.lr = 0.1;
    o.amsgrad = true;
    ct_optimizer *a1 = ct_adamw_new(&view, 1, &o), *a2 = ct_adamw_new(&ref, 1, &o);
    for (int step = 0; step < 3; step++) {
        CHECK(ct_set_grad(view, gview) == CT_OK);
        CHECK(ct_set_grad(ref, gref) == CT_OK);
        CHECK(ct_optimizer_step(a1) == CT_OK && ct_optimizer_step(a2) == CT_OK);
    }
    ct_scope_begin();
    ct_tensor *want = ct_contiguous(ref);
    ct_tensor *gotc = ct_contiguous(view);
    CHECK(want && gotc);
    CHECK_TENSOR(gotc, (const double *)ct_data_ptr(want), 12, 0, 0);
    /* base sees the update through the view */
    ct_tensor *bt = ct_contiguous(ct_t(base));
    CHECK_TENSOR(bt, (const double *)ct_data_ptr(gotc), 12, 0, 0);
    ct_scope_end();
    CHECK(ct_version(base) == 3);
    ct_optimizer_free(a1);
    ct_optimizer_free(a2);
    ct_free(gref);
    ct_free(gview);
    ct_free(gbase);
    ct_free(ref);
    ct_free(view);
    ct_free(base);
}

/* A parameter large enough for the parallel path, with a length that is not a multiple of
   the vector width: matches a scalar double reference and is bit-identical across thread
   counts. */
static void opt_large_run(int threads, bool amsgrad, float *out, int64_t n)
{
    int saved = ct_get_num_threads();
    CHECK(ct_set_num_threads(threads) == CT_OK);
    ct_tensor *p = ct_requires_grad_(ct_zeros(&n, 1, CT_FLOAT32), true);
    float *pd = (float *)ct_data_ptr(p);
    for (int64_t i = 0; i < n; i++) {
        pd[i] = (float)((i % 13) - 6) * 0.125f;
    }
    ct_tensor *g = ct_zeros(&n, 1, CT_FLOAT32);
    ct_adam_opts o = ct_adam_defaults();
    o.lr = 0.01;
    o.weight_decay = 0.01;
    o.amsgrad = amsgrad;
    ct_optimizer *opt = ct_adam_new(&p, 1, &o);
    for (int step = 0; step < 4; step++) {
        float *gd = (float *)ct_data_ptr(g);
        for (int64_t i = 0; i < n; i++) { /* zeros, tiny and large values */
            int64_t k = (i * 7 + step * 3) % 11;
            gd[i] = k == 0 ? 0.0f : (float)(k - 5) * (step == 1 ? 1e-30f : 0.5f);
        }
        CHECK(ct_set_grad(p, g) == CT_OK);
        CHECK(ct_optimizer_step(opt) == CT_OK);
    }
    memcpy(out, ct_data_ptr(p), sizeof(float) * (size_t)n);
    ct_optimizer_free(opt);
    ct_free(g);
    ct_free(p);
    ct_set_num_threads(saved);
}

static void opt_large_reference(bool amsgrad, double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double p = (double)((i % 13) - 6) * 0.125, m = 0, v = 0, vmax = 0;
        for (int step = 0; step < 4; step++) {
            int64_t k = (i * 7 + step * 3) % 11;
            double g = k == 0 ? 0.0 : (double)(float)((float)(k - 5) *
                                                      (step == 1 ? 1e-30f : 0.5f));
            g += 0.01 * p;
            m = 0.9 * m + 0.1 * g;
            v = 0.999 * v + 0.001 * g * g;
            vmax = v > vmax ? v : vmax;
            double t = step + 1, vv = amsgrad ? vmax : v;
            p -= 0.01 / (1 - pow(0.9, t)) * m / (sqrt(vv) / sqrt(1 - pow(0.999, t)) + 1e-8);
        }
        out[i] = p;
    }
}

static void test_optim_large_parallel_adam(void)
{
    const int64_t n = 200003;
    float *one = (float *)malloc(sizeof(float) * (size_t)n);
    float *four = (float *)malloc(sizeof(float) * (size_t)n);
    double *got = (double *)malloc(sizeof(double) * (size_t)n);
    double *want = (double *)malloc(sizeof(double) * (size_t)n);
    for (int ams = 0; ams < 2; ams++) {
        opt_large_run(1, ams != 0, one, n);
        opt_large_run(4, ams != 0, four, n);
        CHECK_MSG(memcmp(one, four, sizeof(float) * (size_t)n) == 0,
                  "1 and 4 threads differ (amsgrad %d)", ams);
        opt_large_reference(ams != 0, want, n);
        for (int64_t i = 0; i < n; i++) {
            got[i] = one[i];
        }
        CHECK_CLOSE(got, want, n, 1e-5, 1e-6);
    }
    free(one);
    free(four);
    free(got);
    free(want);
}

static void test_optim_large_parallel_sgd(void)
{
    int64_t n = 100001;
    ct_tensor *p = ct_requires_grad_(ct_ones(&n, 1, CT_FLOAT64), true);
    ct_tensor *g = ct_full(&n, 1, 0.5, CT_FLOAT64);
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = 0.1;
    o.momentum = 0.9;
    o.nesterov = true;
    ct_optimizer *opt = ct_sgd_new(&p, 1, &o);
    CHECK(ct_set_grad(p, g) == CT_OK);
    CHECK(ct_optimizer_step(opt) == CT_OK); /* buf = g; p -= lr*(g + 0.9g) */
    CHECK(ct_optimizer_step(opt) == CT_OK); /* buf = 1.9g; p -= lr*(g + 1.71g) */
    double want = 1 - 0.1 * 0.5 * 1.9 - 0.1 * 0.5 * 2.71;
    const double *pd = (const double *)ct_data_ptr(p);
    CHECK_NEAR(pd[0], want, 1e-15);
    CHECK_NEAR(pd[n - 1], want, 1e-15);
    CHECK_NEAR(pd[n / 2], want, 1e-15);
    ct_optimizer_free(opt);
    ct_free(g);
    ct_free(p);
}

/* The vector loops against the scalar one: SGD and Adam/AdamW under several options update
   one parameter of 37 elements (vectors, then a tail) and 37 parameters of one element (the
   scalar loop) alike, bit for bit, in float32 and float64. */
#define OPT_VN 37
static ct_optimizer *opt_vec_new(int k, ct_tensor **ps, int64_t n)
{
    ct_sgd_opts s = ct_sgd_defaults();
    ct_adam_opts a = k == 7 ? ct_adamw_defaults() : ct_adam_defaults();
    s.lr = a.lr = 0.05;
    s.weight_decay = k == 0 || k == 3 ? 0.1 : 0;
    s.momentum = k >= 1 ? 0.9 : 0;
    s.dampening = k == 2 ? 0.3 : 0;
    s.nesterov = k == 3;
    s.maximize = k == 4;
    a.weight_decay = 0.2;
    a.amsgrad = k == 6;
    a.maximize = k == 6;
    return k < 5 ? ct_sgd_new(ps, n, &s) : k == 7 ? ct_adamw_new(ps, n, &a)
                                                  : ct_adam_new(ps, n, &a);
}

static void test_optim_vector_loops_match_scalar(void)
{
    for (int dt = 0; dt < 2; dt++) {
        ct_dtype dtype = dt ? CT_FLOAT64 : CT_FLOAT32;
        for (int k = 0; k < 8; k++) {
            ct_scope_begin();
            int64_t n = OPT_VN, one = 1;
            ct_tensor *big = ct_requires_grad_(ct_randn(&n, 1, dtype, NULL), true), *small[OPT_VN];
            for (int64_t i = 0; i < n; i++) {
                small[i] = ct_requires_grad_(ct_detach(ct_clone(ct_narrow(big, 0, i, 1))), true);
            }
            ct_optimizer *a = opt_vec_new(k, &big, 1), *b = opt_vec_new(k, small, n);
            for (int step = 0; step < 3; step++) {
                ct_tensor *g = ct_randn(&n, 1, dtype, NULL);
                CHECK(ct_set_grad(big, g) == CT_OK);
                for (int64_t i = 0; i < n; i++) {
                    CHECK(ct_set_grad(small[i], ct_reshape(ct_narrow(g, 0, i, 1), &one, 1)) ==
                          CT_OK);
                }
                CHECK(ct_optimizer_step(a) == CT_OK && ct_optimizer_step(b) == CT_OK);
            }
            const ct_tensor *parts[OPT_VN];
            for (int64_t i = 0; i < n; i++) {
                parts[i] = small[i];
            }
            CHECK_MSG(ct_equal(big, ct_cat(parts, OPT_VN, 0)), "case %d (%s)", k,
                      ct_dtype_name(dtype));
            ct_optimizer_free(a);
            ct_optimizer_free(b);
            ct_scope_end();
        }
    }
}

/* Each parameter's update is one call of PyTorch's fused op through the one entry: the
   parameter, its grad and its state as inputs, the hyperparameters as attributes. */
static void test_optim_fused_ops_dispatch(void)
{
    const int64_t s[1] = {3};
    const double a[3] = {1, 2, 3}, g[3] = {0.5, -1, 2};
    ct_tensor *p[2];
    p[0] = ct_test_param(a, s, 1, CT_FLOAT32);
    p[1] = ct_test_param(a, s, 1, CT_FLOAT64);
    ct_sgd_opts so = ct_sgd_defaults();
    so.lr = 0.25;
    so.momentum = 0.9;
    ct_adam_opts ao = ct_adamw_defaults();
    ao.amsgrad = true;
    ct_optimizer *opts[3] = {ct_sgd_new(p, 2, &so), ct_adam_new(p, 2, NULL),
                             ct_adamw_new(p, 2, &ao)};
    static const char *names[3] = {"aten::_fused_sgd_", "aten::_fused_adam_",
                                   "aten::_fused_adamw_"};
    ct_test_set_grad(p[0], g);
    ct_test_set_grad(p[1], g);
    for (int o = 0; o < 3; o++) {
        ct_test_op_log log;
        ct_test_op_log_begin(&log);
        CHECK(ct_optimizer_step(opts[o]) == CT_OK && ct_optimizer_step(opts[o]) == CT_OK);
        ct_test_op_log_end();
        CHECK(log.n == 4);
        for (int k = 0; k < 4 && k < log.n; k++) {
            const ct_op_call *c = &log.call[k];
            CHECK_MSG(strcmp(c->op->name, names[o]) == 0, "op %s, want %s", c->op->name,
                      names[o]);
            CHECK(c->op->kind == CT_OP_INPLACE && ct_op_find(names[o]) == c->op);
            CHECK(log.input0[k] == p[k % 2] && c->n_inputs == (o == 0 ? 3 : 5));
            if (o == 0) { /* lr, momentum, is_first_step */
                CHECK(c->attrs[2].f == 0.25 && c->attrs[1].f == 0.9);
                CHECK(c->attrs[6].i == (k < 2));
            } else { /* amsgrad, the step count */
                CHECK(c->attrs[5].i == (o == 2) && c->attrs[7].i == 1 + k / 2);
            }
        }
    }
    for (int o = 0; o < 3; o++) {
        ct_optimizer_free(opts[o]);
    }
    ct_free(p[0]);
    ct_free(p[1]);
}

void test_optim(void)
{
    RUN(test_optim_defaults_match_pytorch);
    RUN(test_optim_golden_float64);
    RUN(test_optim_golden_float32);
    RUN(test_optim_skips_null_grad_and_bumps_versions);
    RUN(test_optim_zero_grad_both_modes);
    RUN(test_optim_zero_grad_after_backward);
    RUN(test_optim_invalid_options);
    RUN(test_optim_rejects_bad_params);
    RUN(test_optim_param_groups);
    RUN(test_optim_noncontiguous_and_converted);
    RUN(test_optim_large_parallel_adam);
    RUN(test_optim_large_parallel_sgd);
    RUN(test_optim_vector_loops_match_scalar);
    RUN(test_optim_fused_ops_dispatch);
}
