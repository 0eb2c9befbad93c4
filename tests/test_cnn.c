/* tests/test_cnn.c - the in-suite version of tools/cross_check_cnn.py: a small version of
 * examples/fashion_mnist_cnn.c's network (Conv-BatchNorm-ReLU-MaxPool x2, Flatten, Dropout,
 * Linear) trained with Adam + OneCycleLR step by step against PyTorch
 * (tools/gen_golden_cnn.py, tests/golden/cnn_golden.h): the default initialization, every
 * step's loss (dropout masks and batch order from the same generator stream), the parameters
 * and BatchNorm buffers after training and the eval-mode logits in float64; the first steps in
 * float32; and a checkpoint (safetensors bytes of the model, optimizer, scheduler and
 * generator state) that resumes with the losses of the uninterrupted run.
 */
#include "test.h"

#include "golden/cnn_golden.h"

#include <stdlib.h>

#define CNN_ENTRIES ((int64_t)(sizeof cnn_init / sizeof cnn_init[0] / 2))

typedef struct cnn_run {
    ct_module *model;
    ct_optimizer *opt;
    ct_lr_scheduler *sched;
    ct_tensor *order, *pool_x, *pool_y; /* owned (made outside any scope) */
    ct_dtype dtype;
} cnn_run;

static void cnn_block(ct_module *m, int64_t c_in, int64_t c_out)
{
    ct_conv_opts c = ct_conv_defaults();
    c.padding[0] = c.padding[1] = 1;
    int64_t two[2] = {2, 2};
    ct_sequential_append(m, ct_conv2d_new(c_in, c_out, 3, 3, &c));
    ct_sequential_append(m, ct_batch_norm2d_new(c_out, NULL));
    ct_sequential_append(m, ct_relu_new());
    ct_sequential_append(m, ct_max_pool2d_new(two, NULL));
}

/* The generator's pool: sample i is 28x28 pixels ((17 k + 31 i) mod 101) / 100 (float32),
   label (7 i + 3) mod 10. */
static void cnn_pool(cnn_run *r)
{
    float *x = (float *)malloc(sizeof(float) * CNN_POOL * 784);
    int64_t y[CNN_POOL], xs[4] = {CNN_POOL, 1, 28, 28}, ys[1] = {CNN_POOL};
    for (int i = 0; i < CNN_POOL; i++) {
        for (int k = 0; k < 784; k++) {
            x[i * 784 + k] = (float)((k * 17 + i * 31) % 101) / 100.0f;
        }
        y[i] = (i * 7 + 3) % 10;
    }
    r->pool_x = ct_tensor_from_data(x, CT_FLOAT32, xs, 4);
    r->pool_y = ct_tensor_from_data(y, CT_INT64, ys, 1);
    free(x);
}

/* (sum, sum of |x|) in float64 of each floating state_dict entry, in order, into s. */
static void cnn_sums(const ct_module *m, double *s)
{
    ct_scope_begin();
    ct_state_dict *sd = ct_module_state_dict(m);
    int64_t j = 0;
    for (int64_t i = 0; i < ct_state_dict_len(sd) && j < CNN_ENTRIES; i++) {
        ct_tensor *t = ct_state_dict_get(sd, ct_state_dict_key(sd, i));
        if (ct_is_floating_point(t)) {
            ct_tensor *d = ct_to_dtype(t, CT_FLOAT64);
            s[2 * j] = ct_item(ct_sum(d));
            s[2 * j + 1] = ct_item(ct_sum(ct_abs(d)));
            j++;
        }
    }
    CHECK(j == CNN_ENTRIES);
    ct_state_dict_free(sd);
    ct_scope_end();
}

/* Seeds, builds the model (its init checked against PyTorch's), converts it to dtype, makes
   Adam + OneCycleLR and draws the batch order, in the generator's order. */
static void cnn_setup(cnn_run *r, ct_dtype dtype)
{
    double init[2 * CNN_ENTRIES];
    r->dtype = dtype;
    ct_manual_seed(CNN_SEED);
    r->model = ct_sequential_new();
    cnn_block(r->model, 1, CNN_C1);
    cnn_block(r->model, CNN_C1, CNN_C2);
    ct_sequential_append(r->model, ct_flatten_new(1, -1));
    ct_sequential_append(r->model, ct_dropout_new(0.25));
    ct_sequential_append(r->model, ct_linear_new(CNN_C2 * 7 * 7, 10, true));
    cnn_sums(r->model, init);
    CHECK_CLOSE(init, cnn_init, 2 * CNN_ENTRIES, 1e-12, 1e-12);
    ct_module_to(r->model, dtype);
    ct_tensor *params[16];
    int64_t n = ct_module_parameters(r->model, params, 16);
    ct_adam_opts a = ct_adam_defaults();
    a.lr = CNN_MAX_LR / 25;
    r->opt = ct_adam_new(params, n, &a);
    ct_one_cycle_lr_opts so = ct_one_cycle_lr_defaults();
    so.total_steps = CNN_STEPS;
    r->sched = ct_one_cycle_lr_new(r->opt, CNN_MAX_LR, &so);
    r->order = ct_randperm(CNN_POOL, NULL);
    cnn_pool(r);
    CHECK(r->model && r->opt && r->sched && r->order && !ct_error());
}

static void cnn_free(cnn_run *r)
{
    ct_lr_scheduler_free(r->sched);
    ct_optimizer_free(r->opt);
    ct_module_free(r->model);
    ct_free(r->order);
    ct_free(r->pool_x);
    ct_free(r->pool_y);
}

/* Training step `step` (0-based): the batch of pool indices order[(step N + j) mod POOL];
   returns the loss. */
static double cnn_step(cnn_run *r, int step)
{
    ct_scope_begin();
    int64_t idx[CNN_N], len[1] = {CNN_N};
    const int64_t *order = (const int64_t *)ct_data_ptr(r->order);
    for (int j = 0; j < CNN_N; j++) {
        idx[j] = order[(step * CNN_N + j) % CNN_POOL];
    }
    ct_tensor *rows = ct_tensor_from_data(idx, CT_INT64, len, 1);
    ct_tensor *x = ct_to_dtype(ct_index_select(r->pool_x, 0, rows), r->dtype);
    ct_tensor *y = ct_index_select(r->pool_y, 0, rows);
    ct_module_train(r->model, true);
    ct_tensor *loss = ct_cross_entropy(ct_module_forward(r->model, x), y, NULL);
    ct_optimizer_zero_grad(r->opt, true);
    ct_backward(loss, NULL, false);
    ct_optimizer_step(r->opt);
    ct_lr_scheduler_step(r->sched);
    double l = ct_item(loss);
    ct_scope_end();
    return l;
}

static void cnn_trains_as_pytorch_float64(void)
{
    cnn_run r;
    double losses[CNN_STEPS], sums[2 * CNN_ENTRIES];
    cnn_setup(&r, CT_FLOAT64);
    for (int s = 0; s < CNN_STEPS; s++) {
        losses[s] = cnn_step(&r, s);
    }
    CHECK_CLOSE(losses, cnn_losses, CNN_STEPS, 1e-10, 0);
    /* The convolutions' biases feed BatchNorm, which cancels their gradient: it is rounding
       noise (~1e-17) in both libraries, and Adam turns the noise into ~1e-7 moves. */
    cnn_sums(r.model, sums);
    CHECK_CLOSE(sums, cnn_final, 2 * CNN_ENTRIES, 1e-9, 1e-6);
    ct_scope_begin();
    ct_module_eval(r.model);
    ct_no_grad_begin();
    ct_tensor *x = ct_to_dtype(ct_narrow(r.pool_x, 0, 0, CNN_N), CT_FLOAT64);
    CHECK_TENSOR(ct_module_forward(r.model, x), cnn_eval_logits, CNN_N * 10, 1e-9, 1e-6);
    ct_no_grad_end();
    ct_scope_end();
    cnn_free(&r);
}

/* float32 rounding differences (summation orders) grow as training goes: PyTorch itself
   drifts by as much between its two convolution algorithms. The first steps agree closely. */
static void cnn_float32_first_steps(void)
{
    cnn_run r;
    double losses[4];
    cnn_setup(&r, CT_FLOAT32);
    for (int s = 0; s < 4; s++) {
        losses[s] = cnn_step(&r, s);
    }
    CHECK_CLOSE(losses, cnn_losses32, 4, 1e-5, 0);
    cnn_free(&r);
}

/* The training state after `steps` steps as safetensors bytes (*n of them; free()). */
static void *cnn_checkpoint(const cnn_run *r, size_t *n)
{
    ct_checkpoint_dict *ck = ct_state_dict_new();
    ct_state_dict *parts[3] = {ct_module_state_dict(r->model), ct_optimizer_state_dict(r->opt),
                               ct_lr_scheduler_state_dict(r->sched)};
    const char *prefix[3] = {"model.", "optim.", "sched."};
    for (int k = 0; k < 3; k++) {
        CHECK(ct_state_dict_update(ck, parts[k], prefix[k]) == CT_OK);
        ct_state_dict_free(parts[k]);
    }
    ct_scope_begin();
    CHECK(ct_state_dict_set(ck, "rng_state", ct_get_rng_state()) == CT_OK);
    ct_scope_end();
    *n = ct_save_buffer(ck, NULL, 0);
    void *buf = malloc(*n);
    CHECK(ct_save_buffer(ck, buf, *n) == *n);
    ct_state_dict_free(ck);
    return buf;
}

static void cnn_restore(cnn_run *r, const void *buf, size_t n)
{
    ct_checkpoint_dict *ck = ct_load_buffer(buf, n);
    ct_state_dict *model = ct_state_dict_select(ck, "model.");
    ct_state_dict *optim = ct_state_dict_select(ck, "optim.");
    ct_state_dict *sched = ct_state_dict_select(ck, "sched.");
    CHECK(ct_module_load_state_dict(r->model, model, true, NULL) == CT_OK);
    CHECK(ct_optimizer_load_state_dict(r->opt, optim) == CT_OK);
    CHECK(ct_lr_scheduler_load_state_dict(r->sched, sched) == CT_OK);
    CHECK(ct_set_rng_state(ct_state_dict_get(ck, "rng_state")) == CT_OK);
    ct_state_dict_free(model);
    ct_state_dict_free(optim);
    ct_state_dict_free(sched);
    ct_state_dict_free(ck);
}

/* Stop after half the steps, checkpoint, rebuild everything (a new process would), restore:
   the remaining steps' losses equal the uninterrupted run's bit for bit. */
static void cnn_resume_same_losses(void)
{
    enum { HALF = CNN_STEPS / 2 };
    cnn_run r, again;
    double straight[CNN_STEPS], resumed[CNN_STEPS - HALF];
    size_t n = 0;
    void *buf = NULL;
    cnn_setup(&r, CT_FLOAT32);
    for (int s = 0; s < CNN_STEPS; s++) {
        if (s == HALF) {
            buf = cnn_checkpoint(&r, &n);
        }
        straight[s] = cnn_step(&r, s);
    }
    cnn_free(&r);
    cnn_setup(&again, CT_FLOAT32);
    ct_manual_seed(12345); /* the restored generator state must replace this one */
    cnn_restore(&again, buf, n);
    for (int s = HALF; s < CNN_STEPS; s++) {
        resumed[s - HALF] = cnn_step(&again, s);
    }
    CHECK(memcmp(resumed, straight + HALF, sizeof resumed) == 0);
    CHECK_CLOSE(resumed, straight + HALF, CNN_STEPS - HALF, 0, 0);
    cnn_free(&again);
    free(buf);
}

void test_cnn(void)
{
    RUN(cnn_trains_as_pytorch_float64);
    RUN(cnn_float32_first_steps);
    RUN(cnn_resume_same_losses);
}
