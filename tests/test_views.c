/* tests/test_views.c - in-place ops on views of tensors that require grad: PyTorch's
 * CopySlices and regenerated view histories (autograd/views.c). Ten scenarios written the
 * same way in tools/gen_golden_views.py give PyTorch's outputs, grad_fn names and gradients
 * (tests/golden/views_golden.h); each also passes gradcheck. Then the errors PyTorch raises.
 */
#include "test.h"

typedef struct views_golden {
    const char *name;
    const char *grad_fn;
    int nd;
    int64_t shape[2];
    double out[12];
    double grad_x[12];
    double grad_w[4];
} views_golden;
#include "golden/views_golden.h"

#define N_CASES ((int)(sizeof views_golden_cases / sizeof views_golden_cases[0]))

static ct_tensor *w_head(ct_tensor *w, int64_t n) { return ct_narrow(w, 0, 0, n); }

static ct_tensor *select_mul(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *y = ct_mul_scalar(x, 2.0);
    ct_mul_(ct_select(y, 1, 1), w);
    return y;
}

static ct_tensor *step_slice_add(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *y = ct_sin(x);
    ct_add_(ct_slice(ct_slice(y, 0, 0, 4, 2), 1, 1, 3, 1), w_head(w, 2), 1.0);
    return y;
}

static ct_tensor *view_of_view_sigmoid(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *y = ct_mul(x, x);
    ct_sigmoid_(ct_select(ct_t(y), 0, 1));
    return ct_add(y, ct_unsqueeze(w, 1));
}

static ct_tensor *stale_view(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *y = ct_mul_scalar(x, 2.0);
    ct_tensor *v = ct_select(y, 0, 0);
    ct_mul_(y, ct_unsqueeze(w, 1));
    return ct_exp(v);
}

static ct_tensor *two_views(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *y = ct_add_scalar(x, 1.0);
    ct_tensor *a = ct_select(y, 0, 0), *b = ct_select(y, 0, 1);
    ct_mul_(a, w_head(w, 3));
    return ct_mul(b, a);
}

static ct_tensor *nongrad_base(ct_tensor *x, ct_tensor *w)
{
    int64_t s[2] = {4, 3};
    ct_tensor *b = ct_zeros(s, 2, CT_FLOAT64);
    ct_add_(ct_select(b, 0, 1), ct_select(x, 0, 0), 1.0);
    ct_mul_(ct_select(b, 1, 2), w);
    ct_add_(ct_select(b, 1, 2), w, 1.0);
    return b;
}

static ct_tensor *chain_inplace(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *y = ct_mul_scalar(x, 1.5);
    ct_tensor *v = ct_narrow(y, 0, 1, 2);
    ct_mul_(v, ct_scalar_tensor(2.0, CT_FLOAT64));
    ct_add_(v, ct_mul(ct_narrow(x, 0, 0, 2), ct_unsqueeze(w_head(w, 2), 1)), 1.0);
    ct_tanh_(v);
    return y;
}

static ct_tensor *copy_into_view(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *y = ct_clone(x);
    ct_copy_(ct_select(y, 1, 0), w);
    return ct_mul(y, y);
}

static ct_tensor *inplace_then_view_use(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *v = ct_select(ct_mul_scalar(x, 2.0), 0, 2);
    ct_mul_(v, w_head(w, 3));
    return ct_exp(v);
}

static ct_tensor *view_after_inplace(ct_tensor *x, ct_tensor *w)
{
    ct_tensor *v = ct_select(ct_mul_scalar(x, 2.0), 0, 1);
    return ct_mul_(v, w_head(w, 3));
}

typedef ct_tensor *(*scenario_fn)(ct_tensor *x, ct_tensor *w);
static const struct {
    const char *name;
    scenario_fn fn;
} scenarios[] = {
    {"select_mul", select_mul},
    {"step_slice_add", step_slice_add},
    {"view_of_view_sigmoid", view_of_view_sigmoid},
    {"stale_view", stale_view},
    {"two_views", two_views},
    {"nongrad_base", nongrad_base},
    {"chain_inplace", chain_inplace},
    {"copy_into_view", copy_into_view},
    {"inplace_then_view_use", inplace_then_view_use},
    {"view_after_inplace", view_after_inplace},
};

static scenario_fn scenario(const char *name)
{
    for (size_t k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++) {
        if (strcmp(scenarios[k].name, name) == 0) {
            return scenarios[k].fn;
        }
    }
    return NULL;
}

static ct_tensor *leaves(const double *v, int64_t n0, int64_t n1, int nd)
{
    int64_t s[2] = {n0, n1};
    return ct_requires_grad_(ct_tensor_from_data(v, CT_FLOAT64, s, nd), true);
}

/* The weights c[k] = k % 7 - 3 of the loss sum(out * c), in out's shape. */
static ct_tensor *loss_weights(const ct_tensor *out)
{
    double c[12];
    int64_t n = ct_numel(out);
    for (int64_t k = 0; k < n && k < 12; k++) {
        c[k] = (double)(k % 7) - 3.0;
    }
    return ct_tensor_from_data(c, CT_FLOAT64, ct_sizes(out), ct_dim(out));
}

static void test_views_golden(void)
{
    CHECK(N_CASES == (int)(sizeof scenarios / sizeof scenarios[0]));
    for (int k = 0; k < N_CASES; k++) {
        const views_golden *g = &views_golden_cases[k];
        scenario_fn fn = scenario(g->name);
        CHECK_MSG(fn != NULL, "no scenario %s", g->name);
        if (!fn) {
            continue;
        }
        ct_scope_begin();
        ct_tensor *x = leaves(views_golden_x, 4, 3, 2), *w = leaves(views_golden_w, 4, 0, 1);
        ct_tensor *out = fn(x, w);
        CHECK_MSG(ct_test_has_shape(out, g->shape, g->nd), "%s: shape", g->name);
        CHECK_TENSOR(out, g->out, ct_test_numel(g->shape, g->nd), 1e-12, 1e-12);
        const char *name = ct_node_name(ct_grad_fn(out));
        CHECK_MSG(name && strcmp(name, g->grad_fn) == 0, "%s: grad_fn %s, want %s", g->name,
                  name ? name : "(none)", g->grad_fn);
        CHECK(ct_backward(ct_sum(ct_mul(out, loss_weights(out))), NULL, false) == CT_OK);
        CHECK_MSG(ct_grad(x) && ct_grad(w), "%s: no gradient", g->name);
        CHECK_TENSOR(ct_grad(x), g->grad_x, 12, 1e-12, 1e-12);
        CHECK_TENSOR(ct_grad(w), g->grad_w, 4, 1e-12, 1e-12);
        ct_scope_end();
    }
}

static ct_tensor *scenario_gc(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ((scenario_fn)(uintptr_t)user)(in[0], in[1]);
}

static void test_views_gradcheck(void)
{
    for (size_t k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++) {
        ct_scope_begin();
        ct_tensor *in[2] = {leaves(views_golden_x, 4, 3, 2), leaves(views_golden_w, 4, 0, 1)};
        CHECK_MSG(ct_gradcheck(scenario_gc, in, 2, (void *)(uintptr_t)scenarios[k].fn, NULL),
                  "gradcheck %s: %s", scenarios[k].name, ct_error() ? ct_error() : "");
        ct_error_clear();
        ct_scope_end();
    }
}

/* PyTorch's errors: a view of a leaf that requires grad (also when the base was marked
   after the view was taken), and a saved output modified through a view. Without grad mode
   a view of such a leaf may be written. */
static void test_views_errors(void)
{
    ct_scope_begin();
    int64_t s[2] = {4, 3};
    ct_tensor *x = leaves(views_golden_x, 4, 3, 2), *w = leaves(views_golden_w, 4, 0, 1);
    CHECK(ct_mul_(ct_select(x, 1, 0), w) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "a view of a leaf Variable that requires grad is being used");
    ct_tensor *b = ct_zeros(s, 2, CT_FLOAT64);
    ct_tensor *v = ct_select(b, 0, 0), *one = ct_scalar_tensor(1.0, CT_FLOAT64);
    ct_requires_grad_(b, true);
    CHECK(ct_add_(v, one, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "a view of a leaf Variable that requires grad is being used");
    ct_no_grad_begin();
    CHECK(ct_add_(v, one, 1.0) == v);
    ct_no_grad_end();
    CHECK_NEAR(ct_item(ct_sum(b)), 3.0, 0.0);

    ct_tensor *y = ct_exp(x); /* exp saves its output: writing it through a view breaks it */
    ct_add_(ct_slice(y, 0, 0, 4, 2), w_head(w, 3), 1.0);
    CHECK(ct_backward(ct_sum(y), NULL, false) != CT_OK);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    ct_scope_end();
}

void test_views(void)
{
    RUN(test_views_golden);
    RUN(test_views_gradcheck);
    RUN(test_views_errors);
}
