/* tests/test_nn.c - modules, Linear's PyTorch initialization, Sequential, init. Golden values
 * come from tools/gen_golden_nn.py (tests/golden/nn_golden.h) and, for the quickstart's initial
 * weights, tools/gen_golden_rng.py (tests/golden/rng_golden.h).
 */
#include "test.h"
#include "golden/nn_golden.h"
#include "golden/rng_golden.h"

static void test_linear_init_matches_pytorch(void)
{
    ct_manual_seed(0);
    ct_module *lin = ct_linear_new(4, 3, true);
    CHECK(lin != NULL);
    CHECK(strcmp(ct_module_name(lin), "Linear") == 0);
    ct_tensor *w = ct_module_get_parameter(lin, "weight");
    ct_tensor *b = ct_module_get_parameter(lin, "bias");
    CHECK(ct_dim(w) == 2 && ct_size(w, 0) == 3 && ct_size(w, 1) == 4);
    CHECK(ct_tensor_dtype(w) == CT_FLOAT32 && ct_requires_grad(w) && ct_is_leaf(w));
    CHECK_TENSOR(w, nn_linear_weight, 12, 0, 0);
    CHECK_TENSOR(b, nn_linear_bias, 3, 0, 0);
    ct_module_free(lin);
}

/* The quickstart's layers (examples/fashion_mnist.c): Linear(784, 512), Linear(512, 512) and
   Linear(512, 10) built in that order after manual_seed(s) have PyTorch's initial weights and
   biases bit for bit, for s = 0, 1 and 42. */
static void test_linear_init_rng_bits_match_pytorch(void)
{
    const int64_t dims[4] = {784, 512, 512, 10};
    const int n = (int)(sizeof rng_golden_linear / sizeof rng_golden_linear[0]);
    CHECK(n == 3 * 6);
    for (int k = 0; k + 6 <= n; k += 6) {
        ct_manual_seed(rng_golden_linear[k].seed);
        ct_module *layer[3];
        for (int l = 0; l < 3; l++) {
            layer[l] = ct_linear_new(dims[l], dims[l + 1], true);
        }
        for (int p = 0; p < 6; p++) {
            const rng_golden *want = &rng_golden_linear[k + p];
            CHECK(want->lo == dims[p / 2] && want->hi == dims[p / 2 + 1]);
            ct_tensor *t = ct_module_get_parameter(layer[p / 2], p % 2 ? "bias" : "weight");
            RNG_GOLDEN_CHECK(t, want);
        }
        for (int l = 0; l < 3; l++) {
            ct_module_free(layer[l]);
        }
    }
}

static ct_module *make_mlp(void)
{
    ct_manual_seed(1);
    ct_module *m = ct_sequential_new();
    ct_sequential_append(m, ct_flatten_new(1, -1));
    ct_sequential_append(m, ct_linear_new(6, 5, true));
    ct_sequential_append(m, ct_relu_new());
    ct_sequential_append(m, ct_linear_new(5, 3, true));
    return m;
}

static void test_sequential_forward_backward_matches_pytorch(void)
{
    ct_module *m = make_mlp();
    ct_scope_begin();
    int64_t xs[3] = {2, 2, 3}, ys[1] = {2};
    int64_t labels[2] = {2, 0};
    ct_tensor *x = ct_reshape(ct_linspace(-1, 1, 12, CT_FLOAT32), xs, 3);
    ct_tensor *y = ct_tensor_from_data(labels, CT_INT64, ys, 1);
    ct_tensor *out = ct_module_forward(m, x);
    ct_tensor *loss = ct_cross_entropy(out, y, NULL);
    CHECK_TENSOR(out, nn_mlp_out, 6, 1e-5, 1e-7);
    CHECK_TENSOR(loss, nn_mlp_loss, 1, 1e-5, 0);
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    CHECK_TENSOR(ct_module_get_parameter(m, "1.weight")
                     ? ct_grad(ct_module_get_parameter(m, "1.weight"))
                     : NULL,
                 nn_mlp_grad_1_weight, 30, 1e-5, 1e-7);
    CHECK_TENSOR(ct_grad(ct_module_get_parameter(m, "1.bias")), nn_mlp_grad_1_bias, 5, 1e-5, 1e-7);
    CHECK_TENSOR(ct_grad(ct_module_get_parameter(m, "3.weight")), nn_mlp_grad_3_weight, 15, 1e-5,
                 1e-7);
    CHECK_TENSOR(ct_grad(ct_module_get_parameter(m, "3.bias")), nn_mlp_grad_3_bias, 3, 1e-5, 1e-7);
    ct_scope_end();
    ct_module_zero_grad(m, true);
    CHECK(ct_grad(ct_module_get_parameter(m, "1.weight")) == NULL);
    ct_module_free(m);
}

static void test_named_parameters_and_modes(void)
{
    ct_module *m = make_mlp();
    char buf[4][32];
    char *names[4] = {buf[0], buf[1], buf[2], buf[3]};
    ct_tensor *params[4];
    CHECK(ct_module_parameters(m, NULL, 0) == 4);
    CHECK(ct_module_named_parameters(m, names, 32, params, 4) == 4);
    CHECK(strcmp(names[0], "1.weight") == 0 && strcmp(names[1], "1.bias") == 0);
    CHECK(strcmp(names[2], "3.weight") == 0 && strcmp(names[3], "3.bias") == 0);
    CHECK(params[3] == ct_module_get_parameter(m, "3.bias"));
    CHECK(ct_module_num_children(m) == 4);
    CHECK(strcmp(ct_module_name(ct_module_child(m, 2)), "ReLU") == 0);
    CHECK(ct_module_is_training(m));
    ct_module_eval(m);
    CHECK(!ct_module_is_training(ct_module_child(m, 1)));
    ct_module_train(m, true);
    CHECK(ct_module_is_training(ct_module_child(m, 1)));
    CHECK(ct_module_get_parameter(m, "9.weight") == NULL);
    ct_module_free(m);
}

static void test_zero_grad_in_place(void)
{
    ct_module *m = make_mlp();
    ct_scope_begin();
    int64_t xs[2] = {1, 6};
    ct_tensor *loss = ct_sum(ct_module_forward(m, ct_ones(xs, 2, CT_FLOAT32)));
    ct_backward(loss, NULL, false);
    ct_scope_end();
    ct_tensor *g = ct_grad(ct_module_get_parameter(m, "3.bias"));
    CHECK(g != NULL);
    ct_module_zero_grad(m, false);
    double zeros[3] = {0, 0, 0};
    CHECK(ct_grad(ct_module_get_parameter(m, "3.bias")) == g);
    CHECK_TENSOR(g, zeros, 3, 0, 0);
    ct_module_free(m);
}

static void test_init_functions(void)
{
    double gains[6] = {
        ct_init_calculate_gain(CT_NONLINEARITY_LINEAR, 0),
        ct_init_calculate_gain(CT_NONLINEARITY_SIGMOID, 0),
        ct_init_calculate_gain(CT_NONLINEARITY_TANH, 0),
        ct_init_calculate_gain(CT_NONLINEARITY_RELU, 0),
        ct_init_calculate_gain(CT_NONLINEARITY_LEAKY_RELU, sqrt(5.0)),
        ct_init_calculate_gain(CT_NONLINEARITY_SELU, 0),
    };
    CHECK_CLOSE(gains, nn_gains, 6, 1e-15, 0);
    ct_scope_begin();
    int64_t s[3] = {8, 4, 3};
    ct_tensor *w = ct_empty(s, 3, CT_FLOAT64);
    int64_t fi = 0, fo = 0;
    CHECK(ct_init_calculate_fan_in_and_fan_out(w, &fi, &fo) == CT_OK);
    CHECK(fi == 12 && fo == 24);
    ct_init_xavier_uniform_(w, 1.0, NULL);
    double bound = sqrt(6.0 / 36.0);
    CHECK(ct_item(ct_max(w)) <= bound && ct_item(ct_min(w)) >= -bound);
    ct_init_constant_(w, 0.25);
    CHECK_NEAR(ct_item(ct_mean(w)), 0.25, 0);
    ct_tensor *v = ct_empty(s, 1, CT_FLOAT32);
    CHECK(ct_init_calculate_fan_in_and_fan_out(v, &fi, &fo) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "fewer than 2 dimensions");
    ct_scope_end();
}

static void test_module_errors(void)
{
    ct_module *m = ct_linear_new(-1, 3, true);
    CHECK(m == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_linear_new: in_features (-1)");
    CHECK(ct_module_forward(NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_module_forward");
    ct_module *lin = ct_linear_new(4, 3, false);
    CHECK(ct_module_get_parameter(lin, "bias") == NULL);
    ct_scope_begin();
    int64_t s[2] = {2, 5};
    CHECK(ct_module_forward(lin, ct_ones(s, 2, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)");
    ct_tensor *p = ct_ones(s, 2, CT_FLOAT32);
    CHECK(ct_module_register_parameter(lin, "weight", p) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "attribute 'weight' already exists");
    ct_scope_end();
    ct_module_free(lin);
    ct_module_free(NULL);
}

void test_nn(void)
{
    RUN(test_linear_init_matches_pytorch);
    RUN(test_linear_init_rng_bits_match_pytorch);
    RUN(test_sequential_forward_backward_matches_pytorch);
    RUN(test_named_parameters_and_modes);
    RUN(test_zero_grad_in_place);
    RUN(test_init_functions);
    RUN(test_module_errors);
}
