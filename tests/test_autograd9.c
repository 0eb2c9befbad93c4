/* tests/test_autograd9.c - inference mode and torch.autograd.backward against PyTorch
 * (tools/gen_golden_autograd9.py, tests/golden/autograd9_golden.h): inference mode's state
 * (nesting, grad mode, per thread), inference tensors and PyTorch's errors for them outside
 * inference mode, views and versions; ct_autograd_backward over several roots with implicit
 * and explicit root gradients, inputs (a leaf, a non-leaf that stays retained), create_graph,
 * float32 and float64, and its errors.
 */
#include "test.h"

#include <pthread.h>

#include "golden/autograd9_golden.h"

static ct_tensor *a9_vec(const double *v, ct_dtype dt, bool requires_grad)
{
    int64_t n = 3;
    ct_tensor *t = ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, &n, 1), dt);
    return requires_grad ? ct_requires_grad_(t, true) : t;
}

static ct_tensor *a9_ones(bool requires_grad)
{
    int64_t n = 3;
    ct_tensor *t = ct_ones(&n, 1, CT_FLOAT32);
    return requires_grad ? ct_requires_grad_(t, true) : t;
}

static void test_inference_mode_state(void)
{
    ct_scope_begin();
    ct_tensor *w = a9_ones(true);
    CHECK(ct_is_inference_mode_enabled() == INFER_OUTSIDE);
    ct_inference_mode_begin();
    CHECK(ct_is_inference_mode_enabled() && ct_is_grad_enabled() == INFER_GRAD_INSIDE);
    ct_inference_mode_begin();
    CHECK(ct_is_inference_mode_enabled() == INFER_NESTED_INNER);
    ct_inference_mode_end();
    CHECK(ct_is_inference_mode_enabled() == INFER_NESTED_OUTER);
    ct_set_grad_enabled(true); /* torch.enable_grad() inside: still nothing is recorded */
    CHECK(ct_is_grad_enabled());
    ct_tensor *y = ct_mul_scalar(w, 2);
    CHECK(y && ct_requires_grad(y) == INFER_ENABLE_GRAD_RECORDS && !ct_grad_fn(y));
    CHECK(ct_add_(w, ct_ones_like(w), 1.0) == w); /* a leaf that requires grad, in place */
    ct_inference_mode_end();
    CHECK(!ct_is_inference_mode_enabled() && ct_is_grad_enabled());
    ct_set_grad_enabled(false); /* the grad mode from before is restored */
    ct_inference_mode_begin();
    ct_inference_mode_end();
    CHECK(!ct_is_grad_enabled());
    ct_set_grad_enabled(true);
    ct_inference_mode_end(); /* without a begin: nothing */
    CHECK(!ct_is_inference_mode_enabled() && ct_is_grad_enabled());
    ct_scope_end();
}

static void *a9_thread(void *arg)
{
    *(bool *)arg = ct_is_inference_mode_enabled();
    return NULL;
}

static void test_inference_mode_per_thread(void)
{
    bool other = true;
    pthread_t th;
    ct_inference_mode_begin();
    if (pthread_create(&th, NULL, a9_thread, &other) == 0) {
        pthread_join(th, NULL);
        CHECK(!other);
    }
    CHECK(ct_is_inference_mode_enabled());
    ct_inference_mode_end();
}

/* Tensors made inside inference mode, used outside it: PyTorch's errors and what works. */
static void test_inference_tensors(void)
{
    ct_scope_begin();
    ct_tensor *w = a9_ones(true), *n = a9_ones(false);
    float blob[3] = {1, 2, 3};
    int64_t three = 3;
    ct_inference_mode_begin();
    ct_tensor *x = ct_ones(&three, 1, CT_FLOAT32), *b = ct_from_blob(blob, CT_FLOAT32, &three, 1,
                                                                      NULL, NULL);
    ct_tensor *xv = ct_narrow(x, 0, 1, 2), *wv = ct_narrow(w, 0, 1, 2);
    CHECK(ct_add_(x, x, 1.0) == x);               /* in place inside: fine */
    CHECK(ct_add_(n, ct_ones_like(n), 1.0) == n); /* a normal tensor's version still moves */
    ct_inference_mode_end();
    CHECK(ct_version(n) == 1);
    /* versions: inference tensors and their views have none */
    CHECK(ct_version(x) == 0);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_VERSION);
    CHECK(ct_version(xv) == 0);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_VERSION);
    CHECK(ct_version(b) == 0);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_VERSION);
    CHECK(ct_version(wv) == 0 && !ct_error()); /* a view of a normal tensor stays normal */
    /* saved for backward: fails; not saved (add): fine, and records */
    CHECK(ct_mul(w, x) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_SAVE);
    ct_tensor *s = ct_add(w, x);
    CHECK(s && ct_requires_grad(s) == INFER_ADD_RECORDS && ct_version(s) == 0);
    CHECK(ct_mul(w, ct_clone(x)) != NULL && !ct_error()); /* a clone is a normal tensor */
    /* in place: fails outside inference mode, with or without grad mode */
    CHECK(ct_add_(x, w, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_INPLACE);
    ct_no_grad_begin();
    CHECK(ct_mul_(xv, xv) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_INPLACE);
    CHECK(ct_add_(wv, wv, 1.0) == wv); /* the view made inside, in place under no_grad: fine */
    ct_no_grad_end();
    CHECK(ct_add_(wv, wv, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_VIEW);
    CHECK(ct_requires_grad_(x, true) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, INFER_MSG_REQUIRES_GRAD);
    ct_scope_end();
}

/* requires_grad_ on an inference tensor inside inference mode is allowed; outside, ops on it
   alone do not record (it has no autograd key), with another input that requires grad they
   do and it gets its gradient. */
static void test_inference_requires_grad(void)
{
    ct_scope_begin();
    ct_tensor *w = a9_ones(true);
    ct_inference_mode_begin();
    ct_tensor *x = ct_requires_grad_(a9_ones(false), true);
    ct_inference_mode_end();
    CHECK(x && ct_requires_grad(x));
    ct_tensor *y = ct_sin(x);
    CHECK(y && !ct_requires_grad(y) && !ct_error());
    CHECK(ct_backward(ct_sum(ct_add(w, x)), NULL, false) == CT_OK);
    double ones[3] = {1, 1, 1};
    CHECK_TENSOR(ct_grad(x), ones, 3, 0, 0);
    CHECK_TENSOR(ct_grad(w), ones, 3, 0, 0);
    ct_scope_end();
}

/* ---- ct_autograd_backward ---------------------------------------------------------------- */
typedef struct a9_graph {
    ct_tensor *x, *w, *h, *y1, *y2, *y3;
} a9_graph;

/* x, w leaves; h = x * w; y1 = sum(h * h); y2 = sum(sin(h)); y3 = h * 2. */
static a9_graph a9_make(ct_dtype dt)
{
    static const double X[3] = {1, 2, 3}, W[3] = {0.5, -1, 2};
    a9_graph g;
    g.x = a9_vec(X, dt, true);
    g.w = a9_vec(W, dt, true);
    g.h = ct_mul(g.x, g.w);
    g.y1 = ct_sum(ct_mul(g.h, g.h));
    g.y2 = ct_sum(ct_sin(g.h));
    g.y3 = ct_mul_scalar(g.h, 2);
    return g;
}

/* Runs the case named c->name; fills got[] with the tensors to compare. */
static void a9_run(const ab_golden *c, ct_tensor **got)
{
    static const double G3[3] = {0.25, -2, 1.5};
    ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
    a9_graph g = a9_make(dt);
    ct_tensor *roots[3] = {g.y1, g.y2, NULL};
    if (strcmp(c->name, "two_roots") == 0) {
        CHECK(ct_autograd_backward(roots, 2, NULL, false, false, NULL, 0) == CT_OK);
        got[0] = ct_grad(g.x);
        got[1] = ct_grad(g.w);
    } else if (strcmp(c->name, "weighted") == 0) {
        ct_tensor *r3[3] = {g.y1, g.y3, g.y2};
        const ct_tensor *gr[3] = {ct_scalar_tensor(2, dt), a9_vec(G3, dt, false), NULL};
        CHECK(ct_autograd_backward(r3, 3, gr, false, false, NULL, 0) == CT_OK);
        got[0] = ct_grad(g.x);
        got[1] = ct_grad(g.w);
    } else if (strcmp(c->name, "inputs_leaf") == 0) {
        CHECK(ct_autograd_backward(roots, 2, NULL, false, false, &g.x, 1) == CT_OK);
        CHECK(ct_grad(g.w) == NULL);
        got[0] = ct_grad(g.x);
    } else if (strcmp(c->name, "inputs_nonleaf") == 0) {
        CHECK(ct_autograd_backward(roots, 2, NULL, true, false, &g.h, 1) == CT_OK);
        CHECK(ct_grad(g.x) == NULL && ct_grad(g.w) == NULL);
        got[0] = ct_clone(ct_grad(g.h));
        CHECK(ct_autograd_backward(roots, 2, NULL, false, false, &g.x, 1) == CT_OK);
        got[1] = ct_grad(g.h);
        got[2] = ct_grad(g.x);
    } else {
        CHECK(ct_autograd_backward(roots, 2, NULL, false, true, NULL, 0) == CT_OK);
        ct_tensor *gx = ct_grad(g.x), *dw = NULL;
        CHECK(gx && ct_requires_grad(gx));
        ct_tensor *z = ct_sum(ct_mul(gx, gx));
        CHECK(ct_autograd_grad(&z, 1, &g.w, 1, NULL, false, false, false, &dw) == CT_OK);
        got[0] = ct_clone(gx);
        got[1] = dw;
        ct_set_grad(g.x, NULL); /* .grad holds x's graph: a cycle PyTorch warns about */
        ct_set_grad(g.w, NULL);
    }
}

static void test_autograd_backward_golden(void)
{
    for (size_t i = 0; i < sizeof ab_cases / sizeof ab_cases[0]; i++) {
        const ab_golden *c = &ab_cases[i];
        ct_scope_begin();
        ct_tensor *got[4] = {NULL, NULL, NULL, NULL};
        a9_run(c, got);
        double tol = c->f64 ? 1e-13 : 1e-5;
        for (int k = 0; k < c->n; k++) {
            CHECK_MSG(got[k], "%s (%s): gradient %d missing: %s", c->name,
                      c->f64 ? "float64" : "float32", k, ct_error() ? ct_error() : "");
            if (got[k]) {
                CHECK_TENSOR(got[k], c->grads[k], 3, tol, tol);
            }
        }
        ct_scope_end();
    }
}

static void test_autograd_backward_errors(void)
{
    ct_scope_begin();
    a9_graph g = a9_make(CT_FLOAT64);
    ct_tensor *plain = a9_ones(false);
    ct_tensor *bad[2] = {g.y1, ct_sum(plain)};
    CHECK(ct_autograd_backward(bad, 2, NULL, false, false, NULL, 0) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "element 1 of tensors does not require grad and does not have "
                                 "a grad_fn");
    ct_tensor *vec[1] = {g.h};
    CHECK(ct_autograd_backward(vec, 1, NULL, true, false, NULL, 0) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "grad can be implicitly created only for scalar outputs");
    int64_t two = 2;
    const ct_tensor *wrong[1] = {ct_ones(&two, 1, CT_FLOAT64)};
    CHECK(ct_autograd_backward(vec, 1, wrong, true, false, NULL, 0) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "Mismatch in shape: grad_output[0] has a shape of [2] and "
                              "output[0] has a shape of [3].");
    ct_tensor *roots[2] = {g.y1, g.y2};
    CHECK(ct_autograd_backward(roots, 2, NULL, true, false, &g.x, 0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "`inputs` argument to `backward()` cannot be empty.");
    CHECK(ct_autograd_backward(roots, 2, NULL, true, false, &plain, 1) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "can't retain_grad on Tensor that has requires_grad=False");
    CHECK(ct_autograd_backward(NULL, 1, NULL, true, false, NULL, 0) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_autograd_backward(NULL, 0, NULL, true, false, NULL, 0) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_autograd_backward(roots, 0, NULL, true, false, &g.x, 1) == CT_OK); /* no roots */
    CHECK(ct_grad(g.x) == NULL);
    CHECK(ct_autograd_backward(roots, 2, NULL, false, false, NULL, 0) == CT_OK);
    CHECK(ct_autograd_backward(roots, 2, NULL, false, false, NULL, 0) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Trying to backward through the graph a second time");
    ct_scope_end();
}

void test_autograd9(void)
{
    RUN(test_inference_mode_state);
    RUN(test_inference_mode_per_thread);
    RUN(test_inference_tensors);
    RUN(test_inference_requires_grad);
    RUN(test_autograd_backward_golden);
    RUN(test_autograd_backward_errors);
}
