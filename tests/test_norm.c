/* tests/test_norm.c - batch, layer, group, instance and RMS norm and dropout: PyTorch's outputs,
 * gradients and running statistics (tools/gen_golden_norm.py, tests/golden/norm_golden.h) on
 * contiguous float32 and transposed float64 inputs over several steps, dropout's masks bit for
 * bit at seeds 0, 1, 42, the modules (buffers, num_batches_tracked, momentum None, eval),
 * gradcheck, PyTorch's errors, float16 and thread invariance.
 */
#include "test.h"

#include <stdlib.h>

#include "golden/norm_golden.h"

/* The generator's values(n, k): sin(1.3 i + 0.7 + k) * 2 + cos(0.37 i) + 0.5 k */
static ct_tensor *norm_values(int64_t n, int k, double scale, double shift, bool absval,
                              ct_dtype dt)
{
    double *v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        double x = ct_test_wave(i, k);
        v[i] = (absval ? fabs(x) : x) * scale + shift;
    }
    ct_tensor *t = ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, &n, 1), dt);
    free(v);
    return t;
}

/* The input of step k: contiguous, or the transpose of a base with the last two dims swapped */
static ct_tensor *norm_input(const norm_golden *c, int k, ct_dtype dt)
{
    int64_t s[4];
    memcpy(s, c->shape, sizeof s);
    if (c->transposed) {
        s[c->nd - 1] = c->shape[c->nd - 2];
        s[c->nd - 2] = c->shape[c->nd - 1];
    }
    ct_tensor *x = ct_reshape(norm_values(ct_test_numel(s, c->nd), k, 1, 0, false, dt), s, c->nd);
    x = c->transposed ? ct_transpose(x, -1, -2) : x;
    return ct_requires_grad_(ct_detach(x), true);
}

static ct_tensor *norm_apply(const norm_golden *c, const ct_tensor *x, const ct_tensor *w,
                             const ct_tensor *b, ct_tensor *rm, ct_tensor *rv)
{
    if (!strcmp(c->kind, "bn")) {
        ct_batch_norm_opts o = ct_batch_norm_defaults();
        o.weight = w;
        o.bias = b;
        o.training = c->training;
        o.momentum = c->momentum;
        o.eps = c->eps;
        return ct_batch_norm(x, rm, rv, &o);
    }
    if (!strcmp(c->kind, "ln")) {
        return ct_layer_norm(x, c->pshape, c->pnd, w, b, c->eps);
    }
    if (!strcmp(c->kind, "gn")) {
        return ct_group_norm(x, c->groups, w, b, c->eps);
    }
    if (!strcmp(c->kind, "in")) {
        ct_instance_norm_opts o = ct_instance_norm_defaults();
        o.weight = w;
        o.bias = b;
        o.use_input_stats = c->training;
        o.momentum = c->momentum;
        o.eps = c->eps;
        return ct_instance_norm(x, rm, rv, &o);
    }
    return ct_rms_norm(x, c->pshape, c->pnd, w, c->eps);
}

static void test_norm_golden(void)
{
    int n = (int)(sizeof norm_golden_cases / sizeof norm_golden_cases[0]);
    for (int i = 0; i < n; i++) {
        const norm_golden *c = &norm_golden_cases[i];
        ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
        double tol = c->f64 ? 1e-10 : 2e-5;
        ct_scope_begin();
        int64_t np = ct_test_numel(c->pshape, c->pnd);
        ct_tensor *w = NULL, *b = NULL, *rm = NULL, *rv = NULL;
        if (c->weight) {
            w = ct_requires_grad_(ct_reshape(norm_values(np, 3, 0.5, 1, false, dt), c->pshape,
                                             c->pnd), true);
        }
        if (c->bias) {
            b = ct_requires_grad_(ct_reshape(norm_values(np, 5, 0.3, 0, false, dt), c->pshape,
                                             c->pnd), true);
        }
        if (c->running) {
            int64_t C = c->shape[1];
            rm = ct_to_dtype(ct_tensor_from_data(c->rm0, CT_FLOAT64, &C, 1), dt);
            rv = ct_to_dtype(ct_tensor_from_data(c->rv0, CT_FLOAT64, &C, 1), dt);
        }
        ct_tensor *x = NULL, *y = NULL;
        for (int k = 0; k < c->steps; k++) {
            if (w) {
                ct_set_grad(w, NULL);
            }
            if (b) {
                ct_set_grad(b, NULL);
            }
            x = norm_input(c, k, dt);
            y = norm_apply(c, x, w, b, rm, rv);
            CHECK_MSG(y != NULL, "case %d %s: %s", i, c->kind, ct_error() ? ct_error() : "?");
            if (!y) {
                break;
            }
            int64_t ny = ct_numel(y);
            ct_tensor *g = norm_values(ny, 11, 1, 0, false, dt);
            ct_backward(ct_sum(ct_mul(ct_flatten(y, 0, -1), g)), NULL, false);
        }
        ct_error_clear();
        if (y) {
            int64_t ny = ct_numel(y);
            CHECK_MSG(CHECK_TENSOR(y, c->y, ny, tol, tol), "case %d %s output", i, c->kind);
            CHECK_MSG(CHECK_TENSOR(ct_grad(x), c->dx, ny, tol * 10, tol * 10), "case %d %s dx", i,
                      c->kind);
            if (w) {
                CHECK_MSG(CHECK_TENSOR(ct_grad(w), c->dw, np, tol * 10, tol * 10),
                          "case %d %s dweight", i, c->kind);
            }
            if (b) {
                CHECK_MSG(CHECK_TENSOR(ct_grad(b), c->db, np, tol * 10, tol * 10),
                          "case %d %s dbias", i, c->kind);
            }
            if (rm) {
                CHECK_MSG(CHECK_TENSOR(rm, c->rm, c->shape[1], tol, tol) &&
                              CHECK_TENSOR(rv, c->rv, c->shape[1], tol, tol),
                          "case %d %s running statistics", i, c->kind);
            }
        }
        ct_scope_end();
    }
}

/* ---- dropout: PyTorch's masks bit for bit ------------------------------------------------- */
static uint64_t norm_fnv(const ct_tensor *t)
{
    ct_scope_begin();
    ct_tensor *c = ct_contiguous(t);
    const unsigned char *p = (const unsigned char *)ct_data_ptr(c);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < ct_nbytes(c); i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    ct_scope_end();
    return h;
}

/* the generator's dropout input ((37 i) % 101 - 50) / 8: exact in every float dtype */
static ct_tensor *drop_input(int64_t n, ct_dtype dt)
{
    ct_tensor *i37 = ct_mul_scalar(ct_arange(0, (double)n, 1, CT_FLOAT64), 37);
    ct_tensor *r = ct_remainder(i37, ct_scalar_tensor(101, CT_FLOAT64));
    return ct_to_dtype(ct_div_scalar(ct_sub_scalar(r, 50), 8), dt);
}

static void test_norm_dropout_golden(void)
{
    int n = (int)(sizeof dropout_golden_cases / sizeof dropout_golden_cases[0]);
    for (int i = 0; i < n; i++) {
        const dropout_golden *d = &dropout_golden_cases[i];
        ct_scope_begin();
        int64_t s[4];
        memcpy(s, d->shape, sizeof s);
        if (d->transposed) {
            s[0] = d->shape[1];
            s[1] = d->shape[0];
        }
        ct_tensor *x = ct_reshape(drop_input(ct_test_numel(s, d->nd), d->dtype), s, d->nd);
        x = ct_requires_grad_(ct_detach(d->transposed ? ct_t(x) : x), true);
        ct_manual_seed((uint64_t)d->seed);
        ct_tensor *y = d->feature ? ct_dropout2d(x, d->p, true) : ct_dropout(x, d->p, true);
        CHECK_MSG(y != NULL, "dropout case %d: %s", i, ct_error() ? ct_error() : "?");
        if (y) {
            ct_backward(ct_sum(y), NULL, false);
            ct_tensor *zeros = ct_sum(ct_eq_scalar(y, 0));
            CHECK_MSG((int64_t)ct_item(zeros) == d->zeros, "dropout case %d: %lld zeros, want %lld",
                      i, (long long)ct_item(zeros), (long long)d->zeros);
            CHECK_MSG(norm_fnv(y) == d->out_hash, "dropout case %d: output bits differ", i);
            CHECK_MSG(norm_fnv(ct_grad(x)) == d->grad_hash, "dropout case %d: grad bits differ",
                      i);
        }
        ct_error_clear();
        ct_scope_end();
    }
}

/* p = 0, eval and p = 1 */
static void test_norm_dropout_special(void)
{
    ct_scope_begin();
    int64_t s[2] = {3, 4};
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL);
    CHECK(ct_equal(ct_dropout(x, 0.5, false), x));
    CHECK(ct_equal(ct_dropout(x, 0.0, true), x));
    CHECK(ct_equal(ct_dropout(x, 1.0, true), ct_zeros(s, 2, CT_FLOAT32)));
    CHECK(ct_equal(ct_dropout2d(x, 0.5, false), x));
    ct_module *m = ct_dropout_new(0.5);
    ct_module_eval(m);
    CHECK(ct_equal(ct_dropout_forward(m, x), x) && !strcmp(ct_module_name(m), "Dropout"));
    ct_module_train(m, true);
    ct_manual_seed(0);
    ct_tensor *a = ct_dropout_forward(m, x);
    ct_manual_seed(0);
    CHECK(ct_equal(a, ct_dropout(x, 0.5, true)));
    ct_module_free(m);
    m = ct_dropout2d_new(0.25);
    ct_manual_seed(7);
    ct_tensor *a2 = ct_module_forward(m, x);
    ct_manual_seed(7);
    CHECK(ct_equal(a2, ct_dropout2d(x, 0.25, true)));
    ct_module_free(m);
    ct_scope_end();
}

/* ---- modules ------------------------------------------------------------------------------- */
static bool norm_is(const ct_tensor *t, double v, int64_t n)
{
    if (!t || ct_numel(t) != n) {
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        if (ct_item(ct_select(ct_reshape(t, &n, 1), 0, i)) != v) {
            return false;
        }
    }
    return true;
}

static void test_norm_batch_norm_module(void)
{
    ct_scope_begin();
    ct_batch_norm_module_opts o = ct_batch_norm_module_defaults();
    o.momentum = NAN;
    ct_module *m = ct_batch_norm2d_new(3, &o);
    CHECK(m && !strcmp(ct_module_name(m), "BatchNorm2d"));
    CHECK(norm_is(ct_module_get_parameter(m, "weight"), 1, 3) &&
          norm_is(ct_module_get_parameter(m, "bias"), 0, 3) &&
          norm_is(ct_module_get_parameter(m, "running_mean"), 0, 3) &&
          norm_is(ct_module_get_parameter(m, "running_var"), 1, 3));
    ct_tensor *nbt = ct_module_get_parameter(m, "num_batches_tracked");
    CHECK(nbt && ct_tensor_dtype(nbt) == CT_INT64 && ct_dim(nbt) == 0 && ct_item(nbt) == 0);
    CHECK(ct_module_parameters(m, NULL, 0) == 2);
    const norm_golden c = {"bn", 0, 0, 4, {2, 3, 2, 2}, 0, {0, 0}, 0, 0, 0, 1, 0, 0, 0, 0,
                           {0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}};
    for (int k = 0; k < 3; k++) {
        CHECK(ct_batch_norm_forward(m, norm_input(&c, k, CT_FLOAT32)) != NULL);
    }
    CHECK(ct_item(nbt) == 3);
    CHECK_TENSOR(ct_module_get_parameter(m, "running_mean"), bn_module_rm, 3, 1e-5, 1e-6);
    CHECK_TENSOR(ct_module_get_parameter(m, "running_var"), bn_module_rv, 3, 1e-5, 1e-6);
    ct_module_eval(m);
    CHECK_TENSOR(ct_module_forward(m, norm_input(&c, 5, CT_FLOAT32)), bn_module_y, 24, 1e-5,
                 1e-5);
    CHECK(ct_item(nbt) == 3);
    int64_t s3[3] = {2, 3, 4};
    CHECK(!ct_batch_norm_forward(m, ct_zeros(s3, 3, CT_FLOAT32)));
    CHECK_ERROR(CT_ERR_SHAPE, "expected 4D input (got 3D input)");
    ct_module_free(m);
    /* track_running_stats false: batch statistics in eval too, no buffers */
    o = ct_batch_norm_module_defaults();
    o.track_running_stats = false;
    o.affine = false;
    m = ct_batch_norm1d_new(3, &o);
    CHECK(ct_module_parameters(m, NULL, 0) == 0 && !ct_module_get_parameter(m, "running_mean"));
    ct_module_eval(m);
    ct_tensor *x = ct_randn(s3, 3, CT_FLOAT32, NULL);
    ct_batch_norm_opts train = ct_batch_norm_defaults();
    train.training = true;
    CHECK(ct_equal(ct_module_forward(m, x), ct_batch_norm(x, NULL, NULL, &train)));
    CHECK(!ct_batch_norm_forward(m, ct_zeros(s3, 1, CT_FLOAT32)));
    CHECK_ERROR(CT_ERR_SHAPE, "expected 2D or 3D input (got 1D input)");
    ct_module_free(m);
    m = ct_batch_norm3d_new(3, NULL);
    int64_t s5[5] = {2, 3, 2, 2, 2};
    ct_tensor *x5 = ct_randn(s5, 5, CT_FLOAT32, NULL);
    ct_tensor *y5 = ct_batch_norm_forward(m, x5);
    ct_batch_norm_opts t5 = ct_batch_norm_defaults();
    t5.training = true;
    CHECK(y5 && ct_equal(y5, ct_batch_norm(x5, NULL, NULL, &t5)));
    CHECK(!ct_batch_norm_forward(m, x));
    CHECK_ERROR(CT_ERR_SHAPE, "expected 5D input (got 3D input)");
    ct_module_free(m);
    m = ct_relu_new();
    CHECK(!ct_batch_norm_forward(m, x));
    CHECK_ERROR(CT_ERR_VALUE, "expected a BatchNorm2d module, got ReLU");
    ct_module_free(m);
    ct_scope_end();
}

static void test_norm_other_modules(void)
{
    ct_scope_begin();
    int64_t s[4] = {2, 4, 3, 5}, ns[2] = {3, 5};
    ct_tensor *x = ct_randn(s, 4, CT_FLOAT32, NULL);
    ct_module *ln = ct_layer_norm_new(ns, 2, 1e-5, true, true);
    CHECK(norm_is(ct_module_get_parameter(ln, "weight"), 1, 15) &&
          norm_is(ct_module_get_parameter(ln, "bias"), 0, 15));
    CHECK(ct_equal(ct_layer_norm_forward(ln, x), ct_layer_norm(x, ns, 2, NULL, NULL, 1e-5)));
    ct_module_free(ln);
    ln = ct_layer_norm_new(ns, 2, 1e-5, true, false);
    CHECK(ct_module_parameters(ln, NULL, 0) == 1 && !ct_module_get_parameter(ln, "bias"));
    ct_module_free(ln);
    ct_module *gn = ct_group_norm_new(2, 4, 1e-5, true);
    CHECK(ct_module_parameters(gn, NULL, 0) == 2);
    CHECK(ct_equal(ct_module_forward(gn, x), ct_group_norm(x, 2, NULL, NULL, 1e-5)));
    ct_module_free(gn);
    CHECK(!ct_group_norm_new(3, 4, 1e-5, true));
    CHECK_ERROR(CT_ERR_VALUE, "num_channels must be divisible by num_groups");
    ct_module *in = ct_instance_norm2d_new(4, NULL);
    CHECK(in && ct_module_parameters(in, NULL, 0) == 0 &&
          !ct_module_get_parameter(in, "running_mean"));
    CHECK(ct_equal(ct_module_forward(in, x), ct_instance_norm(x, NULL, NULL, NULL)));
    ct_tensor *y3 = ct_module_forward(in, ct_select(x, 0, 1));
    CHECK(y3 && ct_equal(y3, ct_select(ct_instance_norm(x, NULL, NULL, NULL), 0, 1)));
    ct_module_free(in);
    ct_module *rms = ct_rms_norm_new(&ns[1], 1, NAN, true);
    CHECK(norm_is(ct_module_get_parameter(rms, "weight"), 1, 5));
    CHECK(ct_equal(ct_module_forward(rms, x), ct_rms_norm(x, &ns[1], 1, NULL, NAN)));
    ct_module_free(rms);
    ct_scope_end();
}

/* ---- gradcheck ----------------------------------------------------------------------------- */
typedef struct norm_gc {
    const norm_golden *c;
    ct_tensor *rm, *rv;
} norm_gc;

static ct_tensor *gc_norm(ct_tensor *const *in, int n, void *user)
{
    const norm_gc *u = (const norm_gc *)user;
    const norm_golden *c = u->c;
    int k = 1;
    const ct_tensor *w = c->weight && k < n ? in[k++] : NULL;
    const ct_tensor *b = c->bias && k < n ? in[k++] : NULL;
    ct_tensor *rm = u->rm ? ct_clone(u->rm) : NULL, *rv = u->rv ? ct_clone(u->rv) : NULL;
    return norm_apply(c, in[0], w, b, rm, rv);
}

static void test_norm_gradcheck(void)
{
    int n = (int)(sizeof norm_golden_cases / sizeof norm_golden_cases[0]);
    for (int i = 0; i < n; i++) {
        const norm_golden *c = &norm_golden_cases[i];
        ct_scope_begin();
        int64_t np = ct_test_numel(c->pshape, c->pnd);
        ct_tensor *in[3];
        int k = 0;
        in[k++] = norm_input(c, 0, CT_FLOAT64);
        if (c->weight) {
            in[k++] = ct_requires_grad_(ct_reshape(norm_values(np, 3, 0.5, 1, false, CT_FLOAT64),
                                                   c->pshape, c->pnd), true);
        }
        if (c->bias) {
            in[k++] = ct_requires_grad_(ct_reshape(norm_values(np, 5, 0.3, 0, false, CT_FLOAT64),
                                                   c->pshape, c->pnd), true);
        }
        norm_gc u = {c, NULL, NULL};
        if (c->running) {
            int64_t C = c->shape[1];
            u.rm = ct_tensor_from_data(c->rm0, CT_FLOAT64, &C, 1);
            u.rv = ct_tensor_from_data(c->rv0, CT_FLOAT64, &C, 1);
        }
        CHECK_MSG(ct_gradcheck(gc_norm, in, k, &u, NULL), "gradcheck case %d %s: %s", i, c->kind,
                  ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_scope_end();
    }
}

/* Double backward through the fused batch and layer norm (PyTorch: gradgradcheck passes for
   F.batch_norm and F.layer_norm): the gradients of sum(norm(x, w, b) * go) in x, w, b with
   create_graph, flattened and concatenated, checked by gradcheck in x, w, b and go. */
static ct_tensor *gg_norm(ct_tensor *const *in, int n, void *user)
{
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true);
    ct_tensor *y = gc_norm(in, n - 1, user), *g[3] = {NULL, NULL, NULL}, *out = NULL;
    const ct_tensor *go[1] = {in[n - 1]};
    if (y && ct_autograd_grad(&y, 1, in, n - 1, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[3];
        for (int k = 0; k < n - 1; k++) {
            parts[k] = ct_flatten(g[k], 0, -1);
        }
        out = ct_cat(parts, n - 1, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

static void test_norm_gradgradcheck(void)
{
    int n = (int)(sizeof norm_golden_cases / sizeof norm_golden_cases[0]), checked = 0;
    for (int i = 0; i < n; i++) {
        const norm_golden *c = &norm_golden_cases[i];
        bool bn = !strcmp(c->kind, "bn");
        if (!bn && strcmp(c->kind, "ln")) {
            continue;
        }
        ct_scope_begin();
        int64_t np = ct_test_numel(c->pshape, c->pnd);
        ct_tensor *in[4];
        int k = 0;
        in[k++] = norm_input(c, 0, CT_FLOAT64);
        if (c->weight) {
            in[k++] = ct_requires_grad_(ct_reshape(norm_values(np, 3, 0.5, 1, false, CT_FLOAT64),
                                                   c->pshape, c->pnd), true);
        }
        if (c->bias) {
            in[k++] = ct_requires_grad_(ct_reshape(norm_values(np, 5, 0.3, 0, false, CT_FLOAT64),
                                                   c->pshape, c->pnd), true);
        }
        in[k] = ct_requires_grad_(ct_reshape(norm_values(ct_numel(in[0]), 7, 1, 0, false,
                                                          CT_FLOAT64), ct_sizes(in[0]),
                                             ct_dim(in[0])), true);
        norm_gc u = {c, NULL, NULL};
        if (c->running) {
            int64_t C = c->shape[1];
            u.rm = ct_tensor_from_data(c->rm0, CT_FLOAT64, &C, 1);
            u.rv = ct_tensor_from_data(c->rv0, CT_FLOAT64, &C, 1);
        }
        CHECK_MSG(ct_gradcheck(gg_norm, in, k + 1, &u, NULL), "gradgradcheck case %d %s: %s", i,
                  c->kind, ct_error() ? ct_error() : "?");
        ct_error_clear();
        checked += bn ? 1 : 100;
        ct_scope_end();
    }
    CHECK(checked % 100 > 0 && checked / 100 > 0); /* both kinds ran */
}

/* ---- errors -------------------------------------------------------------------------------- */
static void test_norm_errors(void)
{
    ct_scope_begin();
    int64_t s14[2] = {1, 4}, s34[2] = {3, 4}, s342[3] = {3, 4, 2}, s341[3] = {3, 4, 1}, c5 = 5,
            c3 = 3, c4 = 4;
    ct_batch_norm_opts o = ct_batch_norm_defaults();
    o.training = true;
    ct_tensor *x = ct_zeros(s34, 2, CT_FLOAT32);
    CHECK(!ct_batch_norm(ct_zeros(s14, 2, CT_FLOAT32), NULL, NULL, &o));
    CHECK_ERROR(CT_ERR_VALUE,
                "Expected more than 1 value per channel when training, got input size [1, 4]");
    CHECK(!ct_batch_norm(x, ct_zeros(&c5, 1, CT_FLOAT32), ct_ones(&c5, 1, CT_FLOAT32), &o));
    CHECK_ERROR(CT_ERR_SHAPE, "running_mean should contain 4 elements not 5");
    o.weight = ct_ones(&c5, 1, CT_FLOAT32);
    CHECK(!ct_batch_norm(x, NULL, NULL, &o));
    CHECK_ERROR(CT_ERR_SHAPE, "weight should contain 4 elements not 5");
    CHECK(!ct_batch_norm(x, NULL, NULL, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "running_mean must be defined in evaluation mode");
    CHECK(!ct_layer_norm(x, &c5, 1, NULL, NULL, 1e-5));
    CHECK_ERROR(CT_ERR_SHAPE, "Given normalized_shape=[5], expected input with shape [*, 5], but "
                              "got input of size[3, 4]");
    CHECK(!ct_layer_norm(x, &c4, 1, ct_ones(&c3, 1, CT_FLOAT32), NULL, 1e-5));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected weight to be of same shape as normalized_shape, but got "
                              "weight of shape [3] and normalized_shape = [4]");
    CHECK(!ct_rms_norm(x, &c5, 1, NULL, NAN));
    CHECK_ERROR(CT_ERR_SHAPE, "Given normalized_shape=[5], expected input with shape [*5], but "
                              "got input of size[3, 4]");
    CHECK(!ct_group_norm(ct_zeros(s342, 3, CT_FLOAT32), 3, NULL, NULL, 1e-5));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected number of channels in input to be divisible by "
                              "num_groups, but got input of shape [3, 4, 2] and num_groups=3");
    CHECK(!ct_instance_norm(ct_zeros(s341, 3, CT_FLOAT32), NULL, NULL, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Expected more than 1 spatial element when training, got input "
                              "size [3, 4, 1]");
    CHECK(!ct_dropout(x, 1.5, true));
    CHECK_ERROR(CT_ERR_VALUE, "dropout probability has to be between 0 and 1, but got 1.5");
    CHECK(!ct_dropout_new(-0.5));
    CHECK_ERROR(CT_ERR_VALUE, "dropout probability has to be between 0 and 1, but got -0.5");
    CHECK(!ct_dropout2d(ct_zeros(&c3, 1, CT_FLOAT32), 0.5, true));
    CHECK_ERROR(CT_ERR_SHAPE, "Feature dropout requires at least 2 dimensions in the input");
    CHECK(!ct_batch_norm(ct_zeros(s34, 2, CT_INT64), NULL, NULL, &o));
    CHECK_ERROR(CT_ERR_DTYPE, "\"batch_norm\" not implemented for 'Long'");
    ct_scope_end();
}

/* float16 batch and layer norm compute in float32 and round once, as PyTorch's CPU kernels */
static void test_norm_half(void)
{
    ct_scope_begin();
    int64_t s[3] = {4, 3, 5}, c3 = 3, c5 = 5;
    ct_tensor *x32 = ct_randn(s, 3, CT_FLOAT32, NULL);
    ct_tensor *x16 = ct_to_dtype(x32, CT_FLOAT16);
    ct_tensor *rm = ct_zeros(&c3, 1, CT_FLOAT32), *rv = ct_ones(&c3, 1, CT_FLOAT32);
    ct_batch_norm_opts o = ct_batch_norm_defaults();
    o.training = true;
    ct_tensor *y16 = ct_batch_norm(x16, rm, rv, &o);
    ct_tensor *y32 = ct_batch_norm(ct_to_dtype(x16, CT_FLOAT32), NULL, NULL, &o);
    CHECK(y16 && ct_tensor_dtype(y16) == CT_FLOAT16 &&
          ct_equal(y16, ct_to_dtype(y32, CT_FLOAT16)));
    CHECK(ct_item(ct_sum(rm)) != 0); /* the float32 buffers were updated */
    ct_tensor *l16 = ct_layer_norm(x16, &c5, 1, NULL, NULL, 1e-5);
    CHECK(l16 && ct_equal(l16, ct_to_dtype(ct_layer_norm(ct_to_dtype(x16, CT_FLOAT32), &c5, 1,
                                                         NULL, NULL, 1e-5), CT_FLOAT16)));
    ct_scope_end();
}

static void norm_threads(ct_tensor **out)
{
    int64_t s[4] = {16, 8, 20, 20}, c8 = 8, k = 400;
    ct_manual_seed(2);
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 4, CT_FLOAT32, NULL), true);
    ct_tensor *w = ct_requires_grad_(ct_rand(&c8, 1, CT_FLOAT32, NULL), true);
    ct_tensor *rm = ct_zeros(&c8, 1, CT_FLOAT32), *rv = ct_ones(&c8, 1, CT_FLOAT32);
    ct_batch_norm_opts o = ct_batch_norm_defaults();
    o.weight = w;
    o.training = true;
    ct_tensor *y = ct_batch_norm(x, rm, rv, &o);
    int64_t s2[2] = {128, 400};
    ct_tensor *l = ct_layer_norm(ct_reshape(y, s2, 2), &k, 1, NULL, NULL, 1e-5);
    ct_backward(ct_sum(ct_mul(l, l)), NULL, false);
    out[0] = ct_keep(l);
    out[1] = ct_keep(ct_mul_scalar(ct_grad(x), 1));
    out[2] = ct_keep(ct_mul_scalar(ct_grad(w), 1));
    out[3] = ct_keep(ct_clone(rv));
}

static void test_norm_threads(void)
{
    CHECK_THREAD_INVARIANT(norm_threads, 4);
}

/* the option defaults are PyTorch's */
static void test_norm_defaults(void)
{
    ct_batch_norm_opts b = ct_batch_norm_defaults();
    CHECK(!b.weight && !b.bias && !b.training && b.momentum == 0.1 && b.eps == 1e-5);
    ct_instance_norm_opts i = ct_instance_norm_defaults();
    CHECK(!i.weight && !i.bias && i.use_input_stats && i.momentum == 0.1 && i.eps == 1e-5);
    ct_batch_norm_module_opts m = ct_batch_norm_module_defaults();
    CHECK(m.eps == 1e-5 && m.momentum == 0.1 && m.affine && m.track_running_stats);
    m = ct_instance_norm_module_defaults();
    CHECK(m.eps == 1e-5 && m.momentum == 0.1 && !m.affine && !m.track_running_stats);
}

void test_norm(void)
{
    RUN(test_norm_defaults);
    RUN(test_norm_golden);
    RUN(test_norm_dropout_golden);
    RUN(test_norm_dropout_special);
    RUN(test_norm_batch_norm_module);
    RUN(test_norm_other_modules);
    RUN(test_norm_gradcheck);
    RUN(test_norm_gradgradcheck);
    RUN(test_norm_errors);
    RUN(test_norm_half);
    RUN(test_norm_threads);
}
