/* tests/test_autograd13.c - post-accumulate-grad hooks, hook removal and end-of-backward
 * callbacks (what DistributedDataParallel's reducer stands on) against PyTorch's order of
 * events (tools/gen_golden_autograd13.py, tests/golden/autograd13_golden.h), and their errors.
 */
#include "test.h"

#include "golden/autograd13_golden.h"

#define CHECK_A13(call) CHECK((call) == CT_OK)

typedef struct a13_log {
    ct_tensor *x, *w;
    int kind[32];
    double sum[32];
    int n;
} a13_log;

static double a13_sum(const ct_tensor *t)
{
    ct_scope_begin();
    double s = ct_item(ct_sum(t));
    ct_scope_end();
    return s;
}

static void a13_add(a13_log *log, int kind, double sum)
{
    if (log->n < 32) {
        log->kind[log->n] = kind;
        log->sum[log->n] = sum;
    }
    log->n++;
}

static ct_tensor *a13_grad_hook(const ct_tensor *g, void *user)
{
    a13_add((a13_log *)user, 1, a13_sum(g));
    return NULL;
}

static void a13_second(void *user)
{
    a13_log *log = (a13_log *)user;
    a13_add(log, 5, a13_sum(ct_grad(log->x)));
}

static void a13_first(void *user)
{
    a13_log *log = (a13_log *)user;
    a13_add(log, 4, a13_sum(ct_grad(log->x)) + a13_sum(ct_grad(log->w)));
    CHECK_A13(ct_autograd_queue_callback(a13_second, log));
}

static void a13_post_x(ct_tensor *t, void *user)
{
    a13_add((a13_log *)user, 2, a13_sum(ct_grad(t)));
    CHECK_A13(ct_autograd_queue_callback(a13_first, user));
}

static void a13_post_w(ct_tensor *t, void *user)
{
    a13_add(*(a13_log **)user, 3, a13_sum(ct_grad(t)));
}

static ct_tensor *a13_leaf(double a, double b, double c)
{
    double v[3] = {a, b, c};
    int64_t n = 3;
    return ct_requires_grad_(ct_tensor_from_data(v, CT_FLOAT64, &n, 1), true);
}

/* sum(x * x) + 2 * sum(x * w), recorded in that order (it decides the order of hooks) */
static ct_tensor *a13_loss(const a13_log *log)
{
    ct_tensor *xx = ct_sum(ct_mul(log->x, log->x));
    ct_tensor *xw = ct_mul_scalar(ct_sum(ct_mul(log->x, log->w)), 2.0);
    return ct_add(xx, xw);
}

/* Each gradient, post-accumulate hook and callback happens once per backward, after the
   leaf's last gradient arrived and in PyTorch's order; removal stops w's hook. */
static void test_post_accumulate_golden(void)
{
    ct_scope_begin();
    static a13_log log; /* the hooks' user pointer: also identifies them for removal */
    memset(&log, 0, sizeof log);
    log.x = a13_leaf(1, 2, 3);
    log.w = a13_leaf(0.5, -1, 2);
    static a13_log *w_tag; /* w's hook: another user pointer, leading to the same log */
    w_tag = &log;
    CHECK_A13(ct_register_hook(log.x, a13_grad_hook, &log));
    CHECK_A13(ct_register_post_accumulate_grad_hook(log.x, a13_post_x, &log));
    CHECK_A13(ct_register_post_accumulate_grad_hook(log.w, a13_post_w, &w_tag));
    for (int k = 0; k < 3; k++) {
        if (k == 2) {
            CHECK(ct_remove_hook(log.w, &w_tag) == 1);
            CHECK(ct_remove_hook(log.w, &w_tag) == 0); /* removing twice: nothing */
        }
        CHECK_A13(ct_backward(a13_loss(&log), NULL, false));
    }
    CHECK(log.n == HOOK_EVENTS);
    for (int i = 0; i < HOOK_EVENTS && i < log.n; i++) {
        CHECK(log.kind[i] == hook_event_kind[i]);
        CHECK_NEAR(log.sum[i], hook_event_sum[i], 0);
    }
    /* removing x's: both its gradient hook and its post hook go */
    CHECK(ct_remove_hook(log.x, &log) == 2);
    int before = log.n;
    CHECK_A13(ct_backward(a13_loss(&log), NULL, false));
    CHECK(log.n == before);
    ct_scope_end();
}

static void a13_count(ct_tensor *t, void *user)
{
    (void)t;
    (*(int *)user)++;
}

/* Only accumulations into .grad run post hooks: not ct_autograd_grad, not a leaf left out
   by ct_autograd_backward's inputs, not a leaf that got no gradient. */
static void test_post_accumulate_only_grad(void)
{
    ct_scope_begin();
    ct_tensor *x = a13_leaf(1, 2, 3), *w = a13_leaf(4, 5, 6);
    int calls_x = 0, calls_w = 0;
    CHECK_A13(ct_register_post_accumulate_grad_hook(x, a13_count, &calls_x));
    CHECK_A13(ct_register_post_accumulate_grad_hook(w, a13_count, &calls_w));
    ct_tensor *y = ct_sum(ct_mul(x, w)), *g[1] = {NULL};
    CHECK_A13(ct_autograd_grad(&y, 1, &x, 1, NULL, true, false, false, g));
    CHECK(calls_x == 0 && calls_w == 0 && ct_grad(x) == NULL);
    CHECK_A13(ct_autograd_backward(&y, 1, NULL, true, false, &x, 1));
    CHECK(calls_x == 1 && calls_w == 0);
    ct_tensor *z = ct_sum(ct_mul(x, ct_detach(w)));
    CHECK_A13(ct_backward(z, NULL, false));
    CHECK(calls_x == 2 && calls_w == 0);
    CHECK_A13(ct_backward(y, NULL, false));
    CHECK(calls_x == 3 && calls_w == 1);
    ct_scope_end();
}

static void a13_fail(void *user)
{
    (void)user;
    ct_error_set(CT_ERR_VALUE, "a13_fail", "callback failed");
}

static void a13_queue_failing(ct_tensor *t, void *user)
{
    (void)t;
    (void)user;
    CHECK_A13(ct_autograd_queue_callback(a13_fail, NULL));
}

static void test_callback_errors(void)
{
    ct_scope_begin();
    ct_tensor *x = a13_leaf(1, 2, 3), *w = a13_leaf(4, 5, 6);
    CHECK(ct_autograd_queue_callback(a13_second, NULL) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Final callbacks can only be installed during backward pass.");
    CHECK(ct_autograd_queue_callback(NULL, NULL) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_register_post_accumulate_grad_hook(ct_mul(x, w), a13_count, NULL) ==
          CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD,
                "post accumulate grad hooks cannot be registered on non-leaf tensors");
    CHECK(ct_register_post_accumulate_grad_hook(ct_detach(x), a13_count, NULL) ==
          CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "cannot register a hook on a tensor that doesn't require "
                                 "gradient");
    CHECK(ct_register_post_accumulate_grad_hook(x, NULL, NULL) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_remove_hook(NULL, NULL) == -1);
    ct_error_clear();
    /* a callback's error is the backward's */
    CHECK_A13(ct_register_post_accumulate_grad_hook(x, a13_queue_failing, NULL));
    CHECK(ct_backward(ct_sum(ct_mul(x, w)), NULL, false) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "callback failed");
    /* the callbacks of a finished backward are gone: the next queues afresh */
    CHECK(ct_autograd_queue_callback(a13_second, NULL) == CT_ERR_AUTOGRAD);
    ct_error_clear();
    ct_scope_end();
}

void test_autograd13(void)
{
    RUN(test_post_accumulate_golden);
    RUN(test_post_accumulate_only_grad);
    RUN(test_callback_errors);
}
