/* tests/test_debug.c - the CTORCH_DEBUG build catches a user's lifetime mistakes (issue 6)
 * with a clear message naming the op that made the tensor.
 *
 * These checks exist only in the debug build: `make test` runs the suite twice, and in
 * build/test_runner_debug (-DCTORCH_DEBUG) this file registers its tests. In the release
 * build it registers none (the mistakes below are undefined behaviour there).
 */
#include "test.h"

#ifdef CTORCH_DEBUG

/* Checks the pending error is CT_ERR_STATE with both fragments in its message; clears it. */
#define CHECK_LIFETIME_ERROR(what, made_by)                                                 \
    do {                                                                                    \
        CHECK_MSG(ct_error_code() == CT_ERR_STATE && strstr(ct_error(), (what)) &&          \
                      strstr(ct_error(), (made_by)),                                        \
                  "error '%s' (%s), want CT_ERR_STATE with '%s' and '%s'",                  \
                  ct_error() ? ct_error() : "none", ct_status_str(ct_error_code()), (what), \
                  (made_by));                                                               \
        ct_error_clear();                                                                   \
    } while (0)

/* A small model and one training step's loss, as the quickstart builds them. */
static ct_module *tiny_model(void)
{
    ct_manual_seed(0);
    ct_module *m = ct_sequential_new();
    ct_sequential_append(m, ct_linear_new(4, 3, true));
    return m;
}

static ct_tensor *tiny_loss(ct_module *m)
{
    int64_t xs[2] = {2, 4}, ts[1] = {2};
    int64_t labels[2] = {0, 2};
    ct_tensor *x = ct_ones(xs, 2, CT_FLOAT32);
    ct_tensor *t = ct_tensor_from_data(labels, CT_INT64, ts, 1);
    return ct_cross_entropy(ct_module_forward(m, x), t, NULL);
}

/* The first case: a loss read after its scope ended (it printed 1.072961). */
static void test_loss_read_after_scope_end(void)
{
    ct_module *m = tiny_model();
    ct_scope_begin();
    ct_tensor *loss = tiny_loss(m);
    CHECK(loss != NULL);
    ct_scope_end();
    double v = ct_item(loss);
    CHECK(isnan(v));
    CHECK_LIFETIME_ERROR("ct_item: tensor argument was freed (created by ", "end of its scope");
    ct_module_free(m);
}

/* The second: the old .grad read after zero_grad(set_to_none) (it still summed). */
static void test_grad_read_after_zero_grad_set_to_none(void)
{
    ct_module *m = tiny_model();
    ct_tensor *params[2];
    int64_t n = ct_module_parameters(m, params, 2);
    ct_optimizer *opt = ct_sgd_new(params, n, NULL);
    ct_scope_begin();
    ct_backward(tiny_loss(m), NULL, false);
    ct_scope_end();
    ct_tensor *g = ct_grad(params[0]);
    CHECK(g != NULL);
    ct_optimizer_zero_grad(opt, true);
    ct_scope_begin();
    CHECK(ct_sum(g) == NULL);
    CHECK_LIFETIME_ERROR("ct_sum: tensor argument was freed", "zero_grad with set_to_none");
    ct_scope_end();
    ct_optimizer_free(opt);
    ct_module_free(m);
}

/* The third: ct_free on a parameter borrowed from a module (training went on until
   ct_memory_allocated() printed 18446744073709550800). Now nothing is freed. */
static void test_free_of_module_parameter(void)
{
    ct_module *m = tiny_model();
    size_t live = ct_memory_allocated();
    ct_tensor *w = ct_module_get_parameter(m, "0.weight");
    CHECK(w != NULL);
    ct_free(w);
    CHECK_LIFETIME_ERROR("ct_free: the tensor (created by ct_linear_new) is borrowed", "module");
    CHECK(ct_memory_allocated() == live);
    ct_scope_begin();
    CHECK(tiny_loss(m) != NULL); /* the model still works */
    ct_scope_end();
    ct_module_free(m);
}

static void test_double_free(void)
{
    int64_t s[1] = {3};
    ct_tensor *t = ct_zeros(s, 1, CT_FLOAT32); /* no scope open: the caller's */
    ct_free(t);
    ct_free(t);
    CHECK_LIFETIME_ERROR("ct_free: double free", "created by ct_zeros");
}

static void test_free_of_grad_and_scope_owned_tensor(void)
{
    ct_scope_begin();
    int64_t s[1] = {3};
    ct_tensor *x = ct_requires_grad_(ct_ones(s, 1, CT_FLOAT64), true);
    ct_backward(ct_sum(ct_mul(x, x)), NULL, false);
    ct_free(ct_grad(x)); /* the leaf owns its .grad */
    CHECK_LIFETIME_ERROR("ct_free: the tensor", "is borrowed");
    CHECK(ct_grad(x) != NULL);
    ct_tensor *y = ct_ones(s, 1, CT_FLOAT64);
    ct_free(y); /* a scope's tensor may be freed early */
    CHECK(ct_error() == NULL);
    ct_scope_end();
}

static void test_foreign_pointer_rejected(void)
{
    static double not_a_tensor[64];
    const ct_tensor *bogus = (const ct_tensor *)(void *)not_a_tensor;
    CHECK(ct_numel(bogus) == 0);
    CHECK_LIFETIME_ERROR("ct_numel: tensor argument", "is not a live tensor made by ctorch");
    CHECK(ct_add(bogus, bogus) == NULL);
    CHECK_LIFETIME_ERROR("ct_add: tensor argument", "is not a live tensor made by ctorch");
}

static void test_freed_memory_is_poisoned(void)
{
    int64_t s[1] = {4};
    ct_tensor *t = ct_ones(s, 1, CT_FLOAT32);
    const float *stale = (const float *)ct_data_ptr(t); /* a raw pointer kept too long */
    ct_free(t);
    for (int i = 0; i < 4; i++) {
        CHECK(isnan(stale[i])); /* quarantined, not reused, all bits set */
    }
}

/* ct_debug_report lists live tensors by creating op (the atexit report prints the same). */
static void test_leak_report(void)
{
    int64_t s[1] = {2};
    ct_tensor *a = ct_zeros(s, 1, CT_FLOAT32), *b = ct_arange(0, 2, 1, CT_FLOAT32);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    int64_t live = f ? ct_debug_report(f) : -1;
    CHECK(live >= 2);
    char text[4096] = {0};
    if (f) {
        rewind(f);
        CHECK(fread(text, 1, sizeof text - 1, f) > 0);
        fclose(f);
    }
    CHECK_MSG(strstr(text, "tensor(s) never freed") && strstr(text, "made by ct_zeros") &&
                  strstr(text, "made by ct_arange"),
              "report was '%s'", text);
    ct_free(a);
    ct_free(b);
    CHECK(ct_debug_report(NULL) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_debug_report");
}

void test_debug(void)
{
    RUN(test_loss_read_after_scope_end);
    RUN(test_grad_read_after_zero_grad_set_to_none);
    RUN(test_free_of_module_parameter);
    RUN(test_double_free);
    RUN(test_free_of_grad_and_scope_owned_tensor);
    RUN(test_foreign_pointer_rejected);
    RUN(test_freed_memory_is_poisoned);
    RUN(test_leak_report);
}

#else

void test_debug(void) {} /* release build: no tests (see the top of the file) */

#endif
