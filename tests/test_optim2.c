/* tests/test_optim2.c - RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam against
 * torch.optim (tests/golden/optim2_golden.h, from tools/gen_golden_optim2.py): every option,
 * parameter groups, float64/float32/bfloat16, PyTorch's defaults and errors, the fused ops
 * and thread invariance. */
#include "test.h"
#include "golden/optim2_golden.h"

#include <stdlib.h>

/* The options struct of kind filled from h (the golden header's field order), in *buf. */
typedef union o2_opts {
    ct_rmsprop_opts rmsprop;
    ct_adagrad_opts adagrad;
    ct_adadelta_opts adadelta;
    ct_adamax_opts adamax;
    ct_nadam_opts nadam;
    ct_radam_opts radam;
} o2_opts;

static const void *o2_fill(int kind, const double *h, o2_opts *u)
{
    memset(u, 0, sizeof *u);
    switch (kind) {
    case 4: {
        ct_rmsprop_opts o = {h[0], h[1], h[2], h[3], h[4], h[5] != 0, h[6] != 0};
        u->rmsprop = o;
        break;
    }
    case 5: {
        ct_adagrad_opts o = {h[0], h[1], h[2], h[3], h[4], h[5] != 0};
        u->adagrad = o;
        break;
    }
    case 6: {
        ct_adadelta_opts o = {h[0], h[1], h[2], h[3], h[4] != 0};
        u->adadelta = o;
        break;
    }
    case 7: {
        ct_adamax_opts o = {h[0], {h[1], h[2]}, h[3], h[4], h[5] != 0};
        u->adamax = o;
        break;
    }
    case 8: {
        ct_nadam_opts o = {h[0], {h[1], h[2]}, h[3], h[4], h[5], h[6] != 0, h[7] != 0};
        u->nadam = o;
        break;
    }
    default: {
        ct_radam_opts o = {h[0], {h[1], h[2]}, h[3], h[4], h[5] != 0, h[6] != 0};
        u->radam = o;
        break;
    }
    }
    return u;
}

static ct_optimizer *o2_new(int kind, ct_tensor *const *params, int64_t n, const void *o)
{
    switch (kind) {
    case 4:
        return ct_rmsprop_new(params, n, (const ct_rmsprop_opts *)o);
    case 5:
        return ct_adagrad_new(params, n, (const ct_adagrad_opts *)o);
    case 6:
        return ct_adadelta_new(params, n, (const ct_adadelta_opts *)o);
    case 7:
        return ct_adamax_new(params, n, (const ct_adamax_opts *)o);
    case 8:
        return ct_nadam_new(params, n, (const ct_nadam_opts *)o);
    default:
        return ct_radam_new(params, n, (const ct_radam_opts *)o);
    }
}

/* Tolerances: float32 and float64 two ulps: the kernels follow PyTorch's op order and its
   fused multiply-adds and match bit for bit but for a few 1-ulp differences (PyTorch's CPU
   sqrt is not always correctly rounded). bfloat16 two ulps, plus 4e-3 absolute: PyTorch
   rounds add's alpha*other to bfloat16 before the sum on tensors too small for its vector
   loop (these), ctorch rounds once as PyTorch's vector loop does; 8 of the 9 cases match bit
   for bit. */
static void o2_tol(ct_dtype dtype, double *rtol, double *atol)
{
    *rtol = dtype == CT_FLOAT64 ? 4.5e-16 : dtype == CT_FLOAT32 ? 2.4e-7 : 1.6e-2;
    *atol = dtype == CT_FLOAT64 ? 1e-17 : dtype == CT_FLOAT32 ? 1e-9 : 4e-3;
}

/* want (float32 and bfloat16 values written with 9 digits) as the exact values of dtype. */
static void o2_want(ct_dtype dtype, const double *want, double *out)
{
    for (int i = 0; i < CT_GOLDEN_OPTIM2_NUMEL; i++) {
        out[i] = dtype == CT_FLOAT64 ? want[i] : (double)(float)want[i];
    }
}

static void o2_run_case(const ct_golden_optim2_case *c)
{
    ct_tensor *params[CT_GOLDEN_OPTIM2_NPARAMS];
    int64_t off[CT_GOLDEN_OPTIM2_NPARAMS + 1];
    off[0] = 0;
    for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
        params[k] = ct_test_param(ct_golden_optim2_init + off[k], ct_golden_optim2_sizes[k],
                                  ct_golden_optim2_ndim[k], c->dtype);
        off[k + 1] = off[k] + ct_numel(params[k]);
    }
    o2_opts u;
    int64_t n0 = c->ngroups == 2 ? 2 : CT_GOLDEN_OPTIM2_NPARAMS;
    ct_optimizer *opt = o2_new(c->kind, params, n0, o2_fill(c->kind, c->h[0], &u));
    CHECK_MSG(opt != NULL, "%s: %s", c->name, ct_error() ? ct_error() : "?");
    if (opt && c->ngroups == 2) {
        CHECK(ct_optimizer_add_param_group(opt, params + 2, 1, o2_fill(c->kind, c->h[1], &u)) ==
              CT_OK);
        CHECK(ct_optimizer_num_param_groups(opt) == 2 && ct_optimizer_get_lr(opt, 1) == c->h[1][0]);
    }
    double rtol = 0, atol = 0;
    o2_tol(c->dtype, &rtol, &atol);
    for (int s = 0; opt && s < CT_GOLDEN_OPTIM2_STEPS; s++) {
        for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
            if (c->skip & (1u << (3 * s + k))) {
                CHECK(ct_set_grad(params[k], NULL) == CT_OK);
            } else {
                ct_test_set_grad(params[k], ct_golden_optim2_grads[s] + off[k]);
            }
        }
        CHECK(ct_optimizer_step(opt) == CT_OK);
        double want[CT_GOLDEN_OPTIM2_NUMEL];
        o2_want(c->dtype, c->want[s], want);
        bool ok = true;
        for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS && ok; k++) {
            ok = CHECK_TENSOR(params[k], want + off[k], off[k + 1] - off[k], rtol, atol);
        }
        if (!ok) {
            CHECK_MSG(0, "golden case %s (%s) after step %d", c->name, ct_dtype_name(c->dtype),
                      s + 1);
            break;
        }
    }
    ct_optimizer_free(opt);
    for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
        ct_free(params[k]);
    }
}

static void o2_golden(ct_dtype dtype)
{
    int n = 0;
    for (int i = 0; i < CT_GOLDEN_OPTIM2_NCASES; i++) {
        if (ct_golden_optim2_cases[i].dtype == dtype) {
            o2_run_case(&ct_golden_optim2_cases[i]);
            n++;
        }
    }
    CHECK(n >= 9);
}

static void test_optim2_golden_float64(void) { o2_golden(CT_FLOAT64); }
static void test_optim2_golden_float32(void) { o2_golden(CT_FLOAT32); }
static void test_optim2_golden_bfloat16(void) { o2_golden(CT_BFLOAT16); }

/* The vector loops (float32 and float64 lanes) against the scalar one: every golden case run
   on its parameters (under one vector each: the scalar loop) and on 1-D parameters holding
   them 7 times over (vectors, then a tail), with the grads repeated alike; the long
   parameters must hold the short ones' results repeated, bit for bit. */
#define O2_TILE 7
static ct_tensor *o2_tiled(const double *data, int64_t n, int tile, ct_dtype dtype)
{
    double v[CT_GOLDEN_OPTIM2_NUMEL * O2_TILE];
    for (int64_t i = 0; i < n * tile; i++) {
        v[i] = data[i % n];
    }
    int64_t len = n * tile;
    return ct_test_param(v, &len, 1, dtype);
}

static void o2_run_tiled(const ct_golden_optim2_case *c, int tile, ct_tensor **params)
{
    int64_t off[CT_GOLDEN_OPTIM2_NPARAMS + 1];
    off[0] = 0;
    for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
        int64_t n = ct_golden_optim2_sizes[k][0] * ct_golden_optim2_sizes[k][1];
        params[k] = o2_tiled(ct_golden_optim2_init + off[k], n, tile, c->dtype);
        off[k + 1] = off[k] + n;
    }
    o2_opts u;
    int64_t n0 = c->ngroups == 2 ? 2 : CT_GOLDEN_OPTIM2_NPARAMS;
    ct_optimizer *opt = o2_new(c->kind, params, n0, o2_fill(c->kind, c->h[0], &u));
    if (opt && c->ngroups == 2) {
        ct_optimizer_add_param_group(opt, params + 2, 1, o2_fill(c->kind, c->h[1], &u));
    }
    for (int s = 0; opt && s < CT_GOLDEN_OPTIM2_STEPS; s++) {
        for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
            ct_tensor *g = c->skip & (1u << (3 * s + k))
                               ? NULL
                               : o2_tiled(ct_golden_optim2_grads[s] + off[k],
                                          off[k + 1] - off[k], tile, c->dtype);
            CHECK(ct_set_grad(params[k], g ? ct_detach(g) : NULL) == CT_OK);
            ct_free(g);
        }
        CHECK(ct_optimizer_step(opt) == CT_OK);
    }
    CHECK(opt != NULL);
    ct_optimizer_free(opt);
}

static void test_optim2_vector_loops_match_scalar(void)
{
    int n = 0;
    for (int i = 0; i < CT_GOLDEN_OPTIM2_NCASES; i++) {
        const ct_golden_optim2_case *c = &ct_golden_optim2_cases[i];
        if (c->dtype != CT_FLOAT32 && c->dtype != CT_FLOAT64) {
            continue;
        }
        ct_scope_begin();
        ct_tensor *a[CT_GOLDEN_OPTIM2_NPARAMS], *b[CT_GOLDEN_OPTIM2_NPARAMS];
        o2_run_tiled(c, 1, a);
        o2_run_tiled(c, O2_TILE, b);
        for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
            int64_t t = O2_TILE;
            CHECK_MSG(ct_equal(b[k], ct_repeat(a[k], &t, 1)), "%s (%s) parameter %d", c->name,
                      ct_dtype_name(c->dtype), k);
            ct_free(a[k]);
            ct_free(b[k]);
        }
        ct_scope_end();
        n++;
    }
    CHECK(n >= 18);
}

static bool o2_same(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

static void test_optim2_defaults_match_pytorch(void)
{
    ct_rmsprop_opts r = ct_rmsprop_defaults();
    const double rh[7] = {r.lr, r.alpha, r.eps, r.weight_decay, r.momentum, (double)r.centered,
                          (double)r.maximize};
    CHECK(o2_same(rh, ct_golden_optim2_defaults_rmsprop, 7));
    ct_adagrad_opts a = ct_adagrad_defaults();
    const double ah[6] = {a.lr, a.lr_decay, a.weight_decay, a.initial_accumulator_value, a.eps,
                          (double)a.maximize};
    CHECK(o2_same(ah, ct_golden_optim2_defaults_adagrad, 6));
    ct_adadelta_opts d = ct_adadelta_defaults();
    const double dh[5] = {d.lr, d.rho, d.eps, d.weight_decay, (double)d.maximize};
    CHECK(o2_same(dh, ct_golden_optim2_defaults_adadelta, 5));
    ct_adamax_opts x = ct_adamax_defaults();
    const double xh[6] = {x.lr, x.betas[0], x.betas[1], x.eps, x.weight_decay,
                          (double)x.maximize};
    CHECK(o2_same(xh, ct_golden_optim2_defaults_adamax, 6));
    ct_nadam_opts na = ct_nadam_defaults();
    const double nh[8] = {na.lr, na.betas[0], na.betas[1], na.eps, na.weight_decay,
                          na.momentum_decay, (double)na.decoupled_weight_decay,
                          (double)na.maximize};
    CHECK(o2_same(nh, ct_golden_optim2_defaults_nadam, 8));
    ct_radam_opts ra = ct_radam_defaults();
    const double qh[7] = {ra.lr, ra.betas[0], ra.betas[1], ra.eps, ra.weight_decay,
                          (double)ra.decoupled_weight_decay, (double)ra.maximize};
    CHECK(o2_same(qh, ct_golden_optim2_defaults_radam, 7));
}

/* NULL opts means the defaults: the same trajectory as the defaults struct. */
static void test_optim2_null_opts_are_defaults(void)
{
    const int64_t s[1] = {4};
    const double a[4] = {1, -2, 3, 0.5}, g[4] = {0.3, -0.1, 2, -4};
    for (int kind = 4; kind <= 9; kind++) {
        ct_tensor *p[2] = {ct_test_param(a, s, 1, CT_FLOAT64), ct_test_param(a, s, 1, CT_FLOAT64)};
        o2_opts u;
        const double *h = kind == 4   ? ct_golden_optim2_defaults_rmsprop
                          : kind == 5 ? ct_golden_optim2_defaults_adagrad
                          : kind == 6 ? ct_golden_optim2_defaults_adadelta
                          : kind == 7 ? ct_golden_optim2_defaults_adamax
                          : kind == 8 ? ct_golden_optim2_defaults_nadam
                                      : ct_golden_optim2_defaults_radam;
        ct_optimizer *o1 = o2_new(kind, &p[0], 1, NULL);
        ct_optimizer *o2 = o2_new(kind, &p[1], 1, o2_fill(kind, h, &u));
        for (int step = 0; step < 3; step++) {
            ct_test_set_grad(p[0], g);
            ct_test_set_grad(p[1], g);
            CHECK(ct_optimizer_step(o1) == CT_OK && ct_optimizer_step(o2) == CT_OK);
        }
        CHECK(ct_equal(p[0], p[1]));
        CHECK(ct_optimizer_step_count(o1) == 3);
        ct_optimizer_free(o1);
        ct_optimizer_free(o2);
        ct_free(p[0]);
        ct_free(p[1]);
    }
}

static void test_optim2_names(void)
{
    static const char *names[6] = {"RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"};
    const int64_t s[1] = {2};
    const double a[2] = {1, 2};
    ct_tensor *p = ct_test_param(a, s, 1, CT_FLOAT32);
    for (int kind = 4; kind <= 9; kind++) {
        ct_optimizer *o = o2_new(kind, &p, 1, NULL);
        CHECK(o && strcmp(ct_optimizer_name(o), names[kind - 4]) == 0);
        /* the momentum schedulers cycle: RMSprop's momentum, the Adam family's betas[0] */
        double m = ct_optimizer_get_momentum(o, 0);
        if (kind == 5 || kind == 6) {
            CHECK(isnan(m));
            CHECK_ERROR(CT_ERR_VALUE, "has neither momentum nor betas");
        } else {
            CHECK(m == (kind == 4 ? 0.0 : 0.9));
        }
        ct_optimizer_free(o);
    }
    ct_optimizer *sgd = ct_sgd_new(&p, 1, NULL);
    CHECK(isnan(ct_optimizer_get_momentum(sgd, 1)));
    CHECK_ERROR(CT_ERR_INDEX, "param group 1 out of range");
    ct_optimizer_free(sgd);
    ct_free(p);
}

static void test_optim2_invalid_options(void)
{
    const int64_t s[1] = {2};
    const double a[2] = {1, 2};
    ct_tensor *p = ct_test_param(a, s, 1, CT_FLOAT32);
    ct_rmsprop_opts r = ct_rmsprop_defaults();
    r.lr = -1.0;
    CHECK(ct_rmsprop_new(&p, 1, &r) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_rmsprop_new: Invalid learning rate: -1.0");
    r = ct_rmsprop_defaults();
    r.alpha = -0.5;
    CHECK(ct_rmsprop_new(&p, 1, &r) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid alpha value: -0.5");
    r = ct_rmsprop_defaults();
    r.momentum = NAN;
    CHECK(ct_rmsprop_new(&p, 1, &r) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid momentum value: nan");
    ct_adagrad_opts g = ct_adagrad_defaults();
    g.lr_decay = -0.1;
    CHECK(ct_adagrad_new(&p, 1, &g) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_adagrad_new: Invalid lr_decay value: -0.1");
    g = ct_adagrad_defaults();
    g.initial_accumulator_value = -1;
    CHECK(ct_adagrad_new(&p, 1, &g) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid initial_accumulator_value value: -1.0");
    ct_adadelta_opts d = ct_adadelta_defaults();
    d.rho = 1.5;
    CHECK(ct_adadelta_new(&p, 1, &d) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_adadelta_new: Invalid rho value: 1.5");
    ct_adamax_opts x = ct_adamax_defaults();
    x.betas[1] = 1.0;
    CHECK(ct_adamax_new(&p, 1, &x) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_adamax_new: Invalid beta parameter at index 1: 1.0");
    ct_nadam_opts n = ct_nadam_defaults();
    n.momentum_decay = -0.004;
    CHECK(ct_nadam_new(&p, 1, &n) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_nadam_new: Invalid momentum_decay value: -0.004");
    ct_radam_opts q = ct_radam_defaults();
    q.eps = -1e-8;
    CHECK(ct_radam_new(&p, 1, &q) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_radam_new: Invalid epsilon value: -1e-08");
    q = ct_radam_defaults();
    q.weight_decay = -0.5;
    ct_optimizer *o = ct_radam_new(&p, 1, NULL);
    ct_tensor *p2 = ct_test_param(a, s, 1, CT_FLOAT32);
    CHECK(ct_optimizer_add_param_group(o, &p2, 1, &q) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "ct_optimizer_add_param_group: Invalid weight_decay value: -0.5");
    CHECK(ct_optimizer_num_param_groups(o) == 1);
    ct_optimizer_free(o);
    ct_free(p2);
    ct_free(p);
}

/* Each update is one call of the optimizer's fused op, with its state tensors as inputs. */
static void test_optim2_fused_ops_dispatch(void)
{
    static const char *names[6] = {"ctorch::_fused_rmsprop_", "aten::_fused_adagrad_",
                                   "ctorch::_fused_adadelta_", "ctorch::_fused_adamax_",
                                   "ctorch::_fused_nadam_", "ctorch::_fused_radam_"};
    static const int n_inputs[6] = {5, 3, 4, 4, 4, 4};
    const int64_t s[1] = {3};
    const double a[3] = {1, 2, 3}, g[3] = {0.5, -1, 2};
    ct_tensor *p = ct_test_param(a, s, 1, CT_FLOAT32);
    ct_test_set_grad(p, g);
    for (int kind = 4; kind <= 9; kind++) {
        ct_optimizer *o = o2_new(kind, &p, 1, NULL);
        ct_test_op_log log;
        ct_test_op_log_begin(&log);
        CHECK(ct_optimizer_step(o) == CT_OK);
        ct_test_op_log_end();
        CHECK(log.n == 1);
        if (log.n == 1) {
            const ct_op_call *c = &log.call[0];
            CHECK_MSG(strcmp(c->op->name, names[kind - 4]) == 0, "op %s", c->op->name);
            CHECK(c->op->kind == CT_OP_INPLACE && ct_op_find(names[kind - 4]) == c->op);
            CHECK(log.input0[0] == p && c->n_inputs == n_inputs[kind - 4]);
        }
        ct_optimizer_free(o);
    }
    ct_free(p);
}

/* A large parameter is updated in parallel chunks: 1 and 4 threads give the same bits, and a
   non-contiguous float32 parameter matches the contiguous run. */
static void test_optim2_threads_and_layouts(void)
{
    const int64_t n = 100003, two[2] = {n / 2, 2};
    int saved = ct_get_num_threads();
    for (int kind = 4; kind <= 9; kind++) {
        ct_tensor *res[2];
        for (int r = 0; r < 2; r++) {
            ct_set_num_threads(r == 0 ? 1 : 4);
            ct_manual_seed(7);
            ct_tensor *p = ct_requires_grad_(ct_randn(&n, 1, CT_FLOAT32, NULL), true);
            ct_tensor *g = ct_randn(&n, 1, CT_FLOAT32, NULL);
            ct_rmsprop_opts ro = ct_rmsprop_defaults();
            ro.centered = true;
            ro.momentum = 0.5;
            ct_optimizer *o = o2_new(kind, &p, 1, kind == 4 ? (const void *)&ro : NULL);
            CHECK(ct_set_grad(p, g) == CT_OK);
            CHECK(ct_optimizer_step(o) == CT_OK && ct_optimizer_step(o) == CT_OK);
            res[r] = p;
            ct_optimizer_free(o);
            ct_free(g);
        }
        CHECK_MSG(ct_equal(res[0], res[1]), "kind %d: 1 and 4 threads differ", kind);
        ct_free(res[0]);
        ct_free(res[1]);
    }
    ct_set_num_threads(saved);
    /* a transposed (non-contiguous) parameter */
    ct_manual_seed(3);
    ct_tensor *base = ct_randn(two, 2, CT_FLOAT32, NULL);
    ct_tensor *gb = ct_randn(two, 2, CT_FLOAT32, NULL);
    ct_scope_begin();
    ct_tensor *tb = ct_keep(ct_contiguous(ct_t(base)));
    ct_scope_end();
    ct_tensor *pt = ct_requires_grad_(ct_t(tb), true);
    ct_tensor *pc = ct_requires_grad_(ct_clone(base), true);
    CHECK(!ct_is_contiguous(pt) && ct_is_leaf(pt));
    ct_optimizer *o1 = ct_nadam_new(&pt, 1, NULL), *o2 = ct_nadam_new(&pc, 1, NULL);
    CHECK(ct_set_grad(pt, gb) == CT_OK && ct_set_grad(pc, gb) == CT_OK);
    CHECK(ct_optimizer_step(o1) == CT_OK && ct_optimizer_step(o2) == CT_OK);
    CHECK(ct_equal(pt, pc));
    ct_optimizer_free(o1);
    ct_optimizer_free(o2);
    ct_free(pt);
    ct_free(tb);
    ct_free(pc);
    ct_free(base);
    ct_free(gb);
}

/* Parameters of the golden shapes (values init) of dtype whose grads are src (none for
   parameter skip). */
static void clip_params(ct_tensor **ps, const double *src, int skip, ct_dtype dtype)
{
    int64_t off = 0;
    for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
        ps[k] = ct_test_param(ct_golden_optim2_init + off, ct_golden_optim2_sizes[k],
                            ct_golden_optim2_ndim[k], dtype);
        if (k != skip) {
            ct_test_set_grad(ps[k], src + off);
        }
        off += ct_numel(ps[k]);
    }
}

/* The grads (0 for a missing one) match want, in the tolerance of dtype. */
static void clip_check_grads(ct_tensor *const *ps, const double *want, ct_dtype dtype,
                             const char *name)
{
    double w[CT_GOLDEN_OPTIM2_NUMEL], rtol = 0, atol = 0;
    o2_want(dtype, want, w);
    o2_tol(dtype, &rtol, &atol);
    int64_t off = 0;
    for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
        int64_t n = ct_numel(ps[k]);
        if (ct_grad(ps[k])) {
            CHECK_MSG(CHECK_TENSOR(ct_grad(ps[k]), w + off, n, rtol, atol), "%s: grad %d", name,
                      k);
        }
        off += n;
    }
}

static void clip_free(ct_tensor **ps)
{
    for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
        ct_free(ps[k]);
    }
}

static void test_optim2_clip_grad_norm(void)
{
    double g3[CT_GOLDEN_OPTIM2_NUMEL];
    for (int i = 0; i < CT_GOLDEN_OPTIM2_NUMEL; i++) {
        g3[i] = ct_golden_optim2_grads[0][i] * 3.0;
    }
    int n = (int)(sizeof ct_golden_clip_cases / sizeof ct_golden_clip_cases[0]);
    for (int i = 0; i < n; i++) {
        const ct_golden_clip_case *c = &ct_golden_clip_cases[i];
        ct_tensor *ps[CT_GOLDEN_OPTIM2_NPARAMS];
        clip_params(ps, g3, c->skip, c->dtype);
        double rtol = 0, atol = 0;
        o2_tol(c->dtype, &rtol, &atol);
        ct_scope_begin();
        ct_tensor *total = ct_clip_grad_norm_(ps, CT_GOLDEN_OPTIM2_NPARAMS, c->max_norm,
                                              c->norm_type, false);
        CHECK_MSG(total && ct_dim(total) == 0 && ct_tensor_dtype(total) == c->dtype, "%s: %s",
                  c->name, ct_error() ? ct_error() : "?");
        double want = c->dtype == CT_FLOAT64 ? c->total : (double)(float)c->total;
        CHECK_MSG(total && fabs(ct_item(total) - want) <= atol + rtol * fabs(want),
                  "%s: total %.17g, want %.17g", c->name, total ? ct_item(total) : NAN, want);
        ct_scope_end();
        clip_check_grads(ps, c->want, c->dtype, c->name);
        clip_free(ps);
    }
}

/* get_total_norm + clip_grads_with_norm_ is clip_grad_norm_ in two calls. */
static void test_optim2_clip_in_two_calls(void)
{
    const ct_golden_clip_case *c = &ct_golden_clip_cases[0];
    double g3[CT_GOLDEN_OPTIM2_NUMEL];
    for (int i = 0; i < CT_GOLDEN_OPTIM2_NUMEL; i++) {
        g3[i] = ct_golden_optim2_grads[0][i] * 3.0;
    }
    ct_tensor *ps[CT_GOLDEN_OPTIM2_NPARAMS];
    clip_params(ps, g3, c->skip, c->dtype);
    ct_scope_begin();
    const ct_tensor *grads[CT_GOLDEN_OPTIM2_NPARAMS];
    for (int k = 0; k < CT_GOLDEN_OPTIM2_NPARAMS; k++) {
        grads[k] = ct_grad(ps[k]);
    }
    ct_tensor *total = ct_get_total_norm(grads, CT_GOLDEN_OPTIM2_NPARAMS, c->norm_type, false);
    CHECK(total && ct_item(total) == c->total);
    CHECK(ct_clip_grads_with_norm_(ps, CT_GOLDEN_OPTIM2_NPARAMS, c->max_norm, total) == CT_OK);
    ct_tensor *empty = ct_get_total_norm(NULL, 0, 2.0, false);
    CHECK(empty && ct_item(empty) == 0.0 && ct_tensor_dtype(empty) == CT_FLOAT32);
    ct_scope_end();
    clip_check_grads(ps, c->want, c->dtype, c->name);
    clip_free(ps);
}

static void test_optim2_clip_grad_value_and_errors(void)
{
    double g30[CT_GOLDEN_OPTIM2_NUMEL];
    for (int i = 0; i < CT_GOLDEN_OPTIM2_NUMEL; i++) {
        g30[i] = ct_golden_optim2_grads[1][i] * 30.0;
    }
    ct_tensor *ps[CT_GOLDEN_OPTIM2_NPARAMS];
    clip_params(ps, g30, 2, CT_FLOAT64);
    CHECK(ct_clip_grad_value_(ps, CT_GOLDEN_OPTIM2_NPARAMS, 0.3) == CT_OK);
    clip_check_grads(ps, ct_golden_clip_value_want, CT_FLOAT64, "clip_grad_value_");
    /* a non-finite norm: error_if_nonfinite names the order as Python prints it */
    ct_scope_begin();
    ct_fill_(ct_grad(ps[0]), INFINITY);
    ct_tensor *before = ct_clone(ct_grad(ps[1]));
    CHECK(ct_clip_grad_norm_(ps, CT_GOLDEN_OPTIM2_NPARAMS, 1.0, 2.0, true) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_clip_grad_norm_: The total norm of order 2.0 for gradients "
                "from `parameters` is non-finite, so it cannot be clipped. To disable this "
                "error and scale the gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`");
    CHECK(ct_equal(before, ct_grad(ps[1]))); /* nothing changed */
    CHECK(ct_clip_grad_norm_(ps, CT_GOLDEN_OPTIM2_NPARAMS, 1.0, INFINITY, true) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "The total norm of order inf for gradients");
    ct_tensor *t = ct_clip_grad_norm_(ps, CT_GOLDEN_OPTIM2_NPARAMS, 1.0, 2.0, false);
    CHECK(t && isinf(ct_item(t))); /* scaled by 1/inf, as PyTorch */
    ct_scope_end();
    CHECK(ct_clip_grad_norm_(NULL, 1, 1.0, 2.0, false) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_clip_grad_norm_");
    CHECK(ct_clip_grad_value_(ps, -1, 1.0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "got -1");
    clip_free(ps);
}

static void test_optim2_parameters_vector(void)
{
    ct_tensor *ps[CT_GOLDEN_OPTIM2_NPARAMS];
    clip_params(ps, ct_golden_optim2_grads[0], -1, CT_FLOAT64);
    ct_scope_begin();
    ct_tensor *v = ct_parameters_to_vector(ps, CT_GOLDEN_OPTIM2_NPARAMS);
    CHECK(v && ct_dim(v) == 1 && ct_requires_grad(v));
    CHECK_TENSOR(v, ct_golden_optim2_init, CT_GOLDEN_OPTIM2_NUMEL, 0, 0);
    ct_tensor *twice = ct_mul_scalar(ct_detach(v), 2.0);
    CHECK(ct_vector_to_parameters(twice, ps, CT_GOLDEN_OPTIM2_NPARAMS) == CT_OK);
    double want[CT_GOLDEN_OPTIM2_NUMEL];
    for (int i = 0; i < CT_GOLDEN_OPTIM2_NUMEL; i++) {
        want[i] = 2.0 * ct_golden_optim2_init[i];
    }
    CHECK_TENSOR(ct_parameters_to_vector(ps, CT_GOLDEN_OPTIM2_NPARAMS), want,
                 CT_GOLDEN_OPTIM2_NUMEL, 0, 0);
    CHECK(ct_is_leaf(ps[0]) && ct_requires_grad(ps[0]));
    CHECK(ct_vector_to_parameters(ct_narrow(twice, 0, 0, 5), ps, 3) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "vector_to_parameters: vec has 5 elements, the parameters need 13");
    ct_scope_end();
    clip_free(ps);
}

void test_optim2(void)
{
    RUN(test_optim2_golden_float64);
    RUN(test_optim2_golden_float32);
    RUN(test_optim2_golden_bfloat16);
    RUN(test_optim2_vector_loops_match_scalar);
    RUN(test_optim2_defaults_match_pytorch);
    RUN(test_optim2_null_opts_are_defaults);
    RUN(test_optim2_names);
    RUN(test_optim2_invalid_options);
    RUN(test_optim2_fused_ops_dispatch);
    RUN(test_optim2_threads_and_layouts);
    RUN(test_optim2_clip_grad_norm);
    RUN(test_optim2_clip_in_two_calls);
    RUN(test_optim2_clip_grad_value_and_errors);
    RUN(test_optim2_parameters_vector);
}
