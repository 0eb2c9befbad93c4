/* examples/xor.c - the smallest complete ctorch program (the one in README.md): an MLP learns XOR.
 *
 * Build: cc -O2 -march=native -pthread examples/xor.c -o xor -lm
 * Expected output: "step 0 loss 0.7439" then the loss falling below 0.01 by step 50.
 */
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"

int main(void) {
    ct_manual_seed(0);
    float xs[8] = {0, 0, 0, 1, 1, 0, 1, 1};
    int64_t ys[4] = {0, 1, 1, 0}, xshape[2] = {4, 2}, yshape[1] = {4};
    ct_tensor *x = ct_tensor_from_data(xs, CT_FLOAT32, xshape, 2);
    ct_tensor *y = ct_tensor_from_data(ys, CT_INT64, yshape, 1);

    ct_module *model = ct_sequential_new();
    ct_sequential_append(model, ct_linear_new(2, 16, true));
    ct_sequential_append(model, ct_relu_new());
    ct_sequential_append(model, ct_linear_new(16, 2, true));

    ct_tensor *params[8];
    int64_t n = ct_module_parameters(model, params, 8);
    ct_adam_opts opts = ct_adam_defaults();
    opts.lr = 0.05;
    ct_optimizer *opt = ct_adam_new(params, n, &opts);

    for (int step = 0; step < 200; step++) {
        ct_scope_begin();                      // every tensor made below is freed at the end
        ct_tensor *loss = ct_cross_entropy(ct_module_forward(model, x), y, NULL);
        ct_optimizer_zero_grad(opt, true);
        ct_backward(loss, NULL, false);
        ct_optimizer_step(opt);
        if (step % 50 == 0) printf("step %d loss %.4f\n", step, ct_item(loss));
        ct_scope_end();
    }
    if (ct_error()) { puts(ct_error()); return 1; }   // errors are sticky: check once
    ct_optimizer_free(opt);
    ct_module_free(model);
    ct_free(x);
    ct_free(y);
    return 0;
}
