/* tests/test_activation.c - activation functions and modules: PyTorch's outputs and
 * gradients (tools/gen_golden_activation.py, tests/golden/activation_golden.h) on contiguous
 * float32, transposed float64 and float16/bfloat16 inputs, rrelu's random slopes, gradcheck,
 * PyTorch's errors, the modules and thread invariance.
 */
#include "test.h"

#include "golden/activation_golden.h"

static const ct_dtype act_dtypes[4] = {CT_FLOAT32, CT_FLOAT64, CT_FLOAT16, CT_BFLOAT16};

/* The activation of a golden case on x (prelu: weight w). */
static ct_tensor *act_apply(const act_golden *k, const ct_tensor *x, const ct_tensor *w)
{
    const char *n = k->name;
    const double *p = k->p;
    if (!strcmp(n, "gelu")) {
        return ct_gelu(x, CT_GELU_NONE);
    }
    if (!strcmp(n, "gelu_tanh")) {
        return ct_gelu(x, CT_GELU_TANH);
    }
    if (!strcmp(n, "silu")) {
        return ct_silu(x);
    }
    if (!strcmp(n, "leaky_relu")) {
        return ct_leaky_relu(x, p[0]);
    }
    if (!strcmp(n, "elu")) {
        return ct_elu(x, p[0]);
    }
    if (!strcmp(n, "selu")) {
        return ct_selu(x);
    }
    if (!strcmp(n, "celu")) {
        return ct_celu(x, p[0]);
    }
    if (!strcmp(n, "softplus")) {
        return ct_softplus(x, p[0], p[1]);
    }
    if (!strcmp(n, "hardswish")) {
        return ct_hardswish(x);
    }
    if (!strcmp(n, "hardsigmoid")) {
        return ct_hardsigmoid(x);
    }
    if (!strcmp(n, "hardtanh")) {
        return ct_hardtanh(x, p[0], p[1]);
    }
    if (!strcmp(n, "relu6")) {
        return ct_relu6(x);
    }
    if (!strcmp(n, "mish")) {
        return ct_mish(x);
    }
    if (!strcmp(n, "logsigmoid")) {
        return ct_logsigmoid(x);
    }
    if (!strcmp(n, "softsign")) {
        return ct_softsign(x);
    }
    if (!strcmp(n, "tanhshrink")) {
        return ct_tanhshrink(x);
    }
    if (!strcmp(n, "softshrink")) {
        return ct_softshrink(x, p[0]);
    }
    if (!strcmp(n, "hardshrink")) {
        return ct_hardshrink(x, p[0]);
    }
    if (!strcmp(n, "threshold")) {
        return ct_threshold(x, p[0], p[1]);
    }
    if (!strcmp(n, "glu")) {
        return ct_glu(x, (int64_t)p[0]);
    }
    if (!strcmp(n, "softmin")) { /* softmin(x / 4) * 4 */
        return ct_mul_scalar(ct_softmin(ct_div_scalar(x, 4), (int64_t)p[0]), 4);
    }
    if (!strcmp(n, "rrelu_eval")) {
        return ct_rrelu(x, p[0], p[1], false);
    }
    if (!strcmp(n, "rrelu_train")) {
        ct_manual_seed(0);
        return ct_rrelu(x, p[0], p[1], true);
    }
    return ct_prelu(x, w);
}

/* x of a case: (4, 6) contiguous, or the transpose of a (6, 4) base, in the case's dtype */
static ct_tensor *act_input(const act_golden *k)
{
    int64_t s[2] = {k->transposed ? 6 : 4, k->transposed ? 4 : 6};
    ct_tensor *base = ct_to_dtype(ct_tensor_from_data(act_golden_x, CT_FLOAT64, s, 2),
                                  act_dtypes[k->dtype]);
    ct_tensor *x = k->transposed ? ct_t(base) : base;
    return ct_requires_grad_(ct_detach(x), true);
}

static void test_activation_golden(void)
{
    int n = (int)(sizeof act_golden_cases / sizeof act_golden_cases[0]);
    for (int i = 0; i < n; i++) {
        const act_golden *k = &act_golden_cases[i];
        ct_scope_begin();
        ct_dtype dt = act_dtypes[k->dtype];
        double tol = dt == CT_FLOAT64 ? 1e-12 : (dt == CT_FLOAT32 ? 2e-6 : 1e-2);
        ct_tensor *x = act_input(k), *w = NULL;
        if (!strncmp(k->name, "prelu", 5)) {
            int64_t c = strcmp(k->name, "prelu") ? 6 : 1;
            const double one[1] = {0.25};
            w = ct_to_dtype(ct_tensor_from_data(c == 1 ? one : act_golden_prelu_w, CT_FLOAT64,
                                                &c, 1), dt);
            ct_requires_grad_(w, true);
        }
        ct_tensor *y = act_apply(k, x, w);
        CHECK_MSG(y && ct_tensor_dtype(y) == dt, "case %d %s: %s", i, k->name,
                  ct_error() ? ct_error() : "wrong dtype");
        if (!y) {
            ct_error_clear();
            ct_scope_end();
            continue;
        }
        CHECK_MSG(CHECK_TENSOR(y, k->y, k->n_out, tol, tol), "case %d %s (dtype %d) output", i,
                  k->name, k->dtype);
        int64_t ny = k->n_out;
        ct_tensor *g = ct_to_dtype(ct_tensor_from_data(act_golden_g, CT_FLOAT64, &ny, 1), dt);
        ct_backward(ct_sum(ct_mul(ct_reshape(ct_contiguous(y), &ny, 1), g)), NULL, false);
        CHECK_MSG(CHECK_TENSOR(ct_grad(x), k->dx, 24, tol, tol), "case %d %s (dtype %d) grad", i,
                  k->name, k->dtype);
        if (w) {
            CHECK_MSG(CHECK_TENSOR(ct_grad(w), k->dw, ct_numel(w), tol, tol * 4),
                      "case %d %s weight grad", i, k->name);
        }
        ct_scope_end();
    }
}

/* ---- gradcheck (float64, values away from the kinks) ------------------------------------- */
static ct_tensor *gc_act(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return act_apply((const act_golden *)user, in[0], n > 1 ? in[1] : NULL);
}

static void test_activation_gradcheck(void)
{
    static const double xs[12] = {-2.7, -1.3, -0.8, -0.35, -0.1, 0.15, 0.4, 0.9, 1.7, 2.2,
                                  2.6, 4.1};
    int n = (int)(sizeof act_golden_cases / sizeof act_golden_cases[0]);
    for (int i = 0; i < n; i++) {
        const act_golden *k = &act_golden_cases[i];
        if (k->dtype != 1 || !strcmp(k->name, "rrelu_train")) {
            continue;
        }
        ct_scope_begin();
        int64_t s[2] = {2, 6}, c = 6, one = 1;
        ct_tensor *in[2] = {ct_requires_grad_(ct_tensor_from_data(xs, CT_FLOAT64, s, 2), true),
                            NULL};
        if (!strncmp(k->name, "prelu", 5)) {
            bool chan = strcmp(k->name, "prelu") != 0;
            in[1] = ct_requires_grad_(ct_tensor_from_data(act_golden_prelu_w, CT_FLOAT64,
                                                          chan ? &c : &one, 1), true);
        }
        CHECK_MSG(ct_gradcheck(gc_act, in, in[1] ? 2 : 1, (void *)(uintptr_t)k, NULL),
                  "gradcheck %s: %s", k->name, ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_scope_end();
    }
}

/* rrelu in training: slopes in [lower, upper) for x <= 0 only, and gradient = the slopes */
static void test_activation_rrelu_train(void)
{
    ct_scope_begin();
    int64_t s[1] = {1000};
    ct_manual_seed(3);
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 1, CT_FLOAT64, NULL), true);
    ct_tensor *y = ct_rrelu(x, 0.1, 0.3, true);
    ct_backward(ct_sum(y), NULL, false);
    const double *xv = (const double *)ct_data_ptr(x), *yv = (const double *)ct_data_ptr(y);
    const double *gv = (const double *)ct_data_ptr(ct_grad(x));
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        double r = xv[i] > 0 ? 1 : yv[i] / xv[i];
        bad += xv[i] > 0 ? (yv[i] != xv[i] || gv[i] != 1)
                         : (r < 0.1 || r >= 0.3 || fabs(gv[i] - r) > 1e-12);
    }
    CHECK(bad == 0);
    ct_scope_end();
}

static void test_activation_errors(void)
{
    ct_scope_begin();
    int64_t s[2] = {3, 5}, s3 = 3;
    ct_tensor *x = ct_zeros(s, 2, CT_FLOAT32);
    CHECK(!ct_gelu(x, (ct_gelu_approximate)7));
    CHECK_ERROR(CT_ERR_VALUE, "approximate argument must be either none or tanh.");
    CHECK(!ct_hardtanh(x, 2, 1));
    CHECK_ERROR(CT_ERR_VALUE, "min_val cannot be greater than max_val");
    CHECK(!ct_hardtanh_new(2, 1));
    CHECK_ERROR(CT_ERR_VALUE, "min_val cannot be greater than max_val");
    CHECK(!ct_rrelu(x, 0.5, 0.1, true));
    CHECK_ERROR(CT_ERR_VALUE, "Lower bound should be less than or equal to the upper bound");
    CHECK(!ct_softshrink(x, -1));
    CHECK_ERROR(CT_ERR_VALUE,
                "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -1");
    CHECK(!ct_glu(x, 1));
    CHECK_ERROR(CT_ERR_SHAPE, "Halving dimension must be even, but dimension 1 is size 5");
    CHECK(!ct_prelu(ct_zeros(s, 2, CT_FLOAT32), ct_ones(&s3, 1, CT_FLOAT32)));
    CHECK_ERROR(CT_ERR_SHAPE, "Mismatch of parameter numbers and input channel size. Found "
                              "parameter numbers = 3 and channel size = 5.");
    CHECK(!ct_silu(ct_zeros(s, 2, CT_INT64)));
    CHECK_ERROR(CT_ERR_DTYPE, "\"silu\" not implemented for 'Long'");
    CHECK(!ct_celu(x, 0));
    CHECK_ERROR(CT_ERR_VALUE, "ZeroDivisionError");
    CHECK(!ct_prelu_new(0, 0.25));
    CHECK_ERROR(CT_ERR_VALUE, "num_parameters must be positive");
    ct_scope_end();
}

/* Each module's forward equals its functional form; PReLU's weight is filled with init. */
static void test_activation_modules(void)
{
    ct_scope_begin();
    int64_t s[3] = {2, 4, 3};
    ct_manual_seed(1);
    ct_tensor *x = ct_randn(s, 3, CT_FLOAT32, NULL);
    const int64_t us[2] = {2, 2};
    ct_module *m[14] = {ct_gelu_new(CT_GELU_TANH), ct_silu_new(), ct_leaky_relu_new(0.2),
                        ct_elu_new(0.7), ct_selu_new(), ct_softplus_new(2, 1),
                        ct_hardtanh_new(-0.5, 0.5), ct_relu6_new(), ct_mish_new(),
                        ct_prelu_new(4, 0.3), ct_glu_new(1), ct_softmax_new(2),
                        ct_log_softmax_new(1), ct_unflatten_new(1, us, 2)};
    ct_tensor *w = ct_full(&s[1], 1, 0.3, CT_FLOAT32);
    ct_tensor *want[14] = {ct_gelu(x, CT_GELU_TANH), ct_silu(x), ct_leaky_relu(x, 0.2),
                           ct_elu(x, 0.7), ct_selu(x), ct_softplus(x, 2, 1),
                           ct_hardtanh(x, -0.5, 0.5), ct_relu6(x), ct_mish(x), ct_prelu(x, w),
                           ct_glu(x, 1), ct_softmax(x, 2), ct_log_softmax(x, 1),
                           ct_unflatten(x, 1, us, 2)};
    static const char *names[14] = {"GELU", "SiLU", "LeakyReLU", "ELU", "SELU", "Softplus",
                                    "Hardtanh", "ReLU6", "Mish", "PReLU", "GLU", "Softmax",
                                    "LogSoftmax", "Unflatten"};
    for (int i = 0; i < 14; i++) {
        ct_tensor *y = ct_module_forward(m[i], x);
        CHECK_MSG(y && want[i] && ct_equal(y, want[i]) && !strcmp(ct_module_name(m[i]), names[i]),
                  "module %s", names[i]);
        ct_module_free(m[i]);
    }
    ct_module *p = ct_prelu_new(1, 0.25);
    ct_tensor *pw = ct_module_get_parameter(p, "weight");
    CHECK(pw && ct_numel(pw) == 1 && ct_item(pw) == 0.25 && ct_requires_grad(pw));
    ct_module_free(p);
    ct_scope_end();
}

/* The largest |a - b| / (1 + |b|) over two tensors (b the float64 reference) */
static double act_max_err(const ct_tensor *a, const ct_tensor *b)
{
    ct_tensor *d = ct_sub(ct_to_dtype(a, CT_FLOAT64), b);
    return ct_item(ct_max(ct_div(ct_abs(d), ct_add_scalar(ct_abs(b), 1))));
}

/* float32 GELU and its gradient over [-10, 10] in more elements than one vector (PyTorch's
   vectorized float32 erf, absolute error <= 1.5e-7) against float64 */
static void test_activation_gelu_float32(void)
{
    ct_scope_begin();
    ct_tensor *x64 = ct_requires_grad_(ct_linspace(-10, 10, 4001, CT_FLOAT64), true);
    ct_tensor *x32 = ct_requires_grad_(ct_linspace(-10, 10, 4001, CT_FLOAT32), true);
    ct_tensor *g = ct_cos(ct_detach(x64));
    ct_tensor *y64 = ct_gelu(x64, CT_GELU_NONE), *y32 = ct_gelu(x32, CT_GELU_NONE);
    ct_backward(y64, g, false);
    ct_backward(y32, ct_to_dtype(g, CT_FLOAT32), false);
    double ey = act_max_err(y32, y64), eg = act_max_err(ct_grad(x32), ct_grad(x64));
    CHECK_MSG(ey < 4e-7 && eg < 4e-7, "gelu float32 errors %g (output) %g (gradient)", ey, eg);
    ct_scope_end();
}

static void act_threads(ct_tensor **out)
{
    int64_t s[2] = {300, 257};
    ct_manual_seed(5);
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 2, CT_FLOAT32, NULL), true);
    ct_tensor *y = ct_gelu(ct_t(x), CT_GELU_NONE);
    ct_backward(ct_sum(ct_mul(y, y)), NULL, false);
    out[0] = ct_keep(y);
    out[1] = ct_keep(ct_mul_scalar(ct_grad(x), 1));
}

static void test_activation_threads(void)
{
    CHECK_THREAD_INVARIANT(act_threads, 2);
}

void test_activation(void)
{
    RUN(test_activation_golden);
    RUN(test_activation_gradcheck);
    RUN(test_activation_rrelu_train);
    RUN(test_activation_errors);
    RUN(test_activation_modules);
    RUN(test_activation_threads);
    RUN(test_activation_gelu_float32);
}
