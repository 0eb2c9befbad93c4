/* tests/test_module_act.c - the nn.Sigmoid and nn.Identity modules against PyTorch
 * (ct_golden_act_module_cases in tests/golden/distance_golden.h, from
 * tools/gen_golden_distance.py): outputs and gradients through ct_module_forward, float32 and
 * float64, contiguous and transposed inputs; gradcheck; Identity returns its input's data. */
#include "test.h"
#include "golden/distance_golden.h"

#include <stdint.h>

static void act_check_case(int k, const ct_golden_act_module_case *c)
{
    bool sigmoid = !strcmp(c->module, "sigmoid");
    ct_module *m = sigmoid ? ct_sigmoid_new() : ct_identity_new();
    ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
    double tol = c->f64 ? 1e-15 : 1e-7;
    int64_t base[2] = {c->shape[c->transposed], c->shape[1 - c->transposed]};
    int64_t n = c->shape[0] * c->shape[1];
    ct_tensor *leaf = ct_test_param(c->in, base, 2, dt);
    CHECK(m && !strcmp(ct_module_name(m), sigmoid ? "Sigmoid" : "Identity"));
    CHECK(ct_module_parameters(m, NULL, 0) == 0 && ct_module_buffers(m, NULL, 0) == 0);
    ct_scope_begin();
    ct_tensor *x = c->transposed ? ct_transpose(leaf, 0, 1) : leaf;
    ct_tensor *y = ct_module_forward(m, x);
    CHECK_MSG(ct_test_has_shape(y, c->shape, 2) && ct_tensor_dtype(y) == dt, "case %d", k);
    CHECK_MSG(CHECK_TENSOR(y, c->out, n, tol, tol), "case %d (%s): output", k, c->module);
    if (!sigmoid) { /* PyTorch's Identity returns its input: the same elements */
        CHECK(y && ct_data_ptr(y) == ct_data_ptr(x));
    }
    ct_tensor *g = ct_to_dtype(ct_tensor_from_data(c->gout, CT_FLOAT64, c->shape, 2), dt);
    CHECK(ct_backward(ct_sum(ct_mul(y, g)), NULL, false) == CT_OK);
    ct_tensor *gr = ct_grad(leaf);
    gr = gr && c->transposed ? ct_transpose(gr, 0, 1) : gr;
    CHECK_MSG(gr && CHECK_TENSOR(gr, c->grad, n, tol, tol), "case %d (%s): grad", k, c->module);
    ct_scope_end();
    ct_free(leaf);
    ct_module_free(m);
}

static void test_module_act_golden(void)
{
    int n = (int)(sizeof ct_golden_act_module_cases / sizeof ct_golden_act_module_cases[0]);
    for (int k = 0; k < n; k++) {
        act_check_case(k, &ct_golden_act_module_cases[k]);
    }
}

static ct_tensor *act_gc_fn(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_module_forward((ct_module *)user, in[0]);
}

static void test_module_act_gradcheck(void)
{
    ct_module *mods[2] = {ct_sigmoid_new(), ct_identity_new()};
    const int64_t s[2] = {3, 4};
    ct_scope_begin();
    ct_tensor *x = ct_requires_grad_(ct_tensor_from_data(ct_golden_act_module_cases[1].in,
                                                         CT_FLOAT64, s, 2), true);
    for (int k = 0; k < 2; k++) {
        CHECK_MSG(ct_gradcheck(act_gc_fn, &x, 1, mods[k], NULL), "gradcheck %s: %s",
                  ct_module_name(mods[k]), ct_error() ? ct_error() : "");
        ct_error_clear();
        ct_module_free(mods[k]);
    }
    ct_scope_end();
}

void test_module_act(void)
{
    RUN(test_module_act_golden);
    RUN(test_module_act_gradcheck);
}
