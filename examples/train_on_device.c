/* examples/train_on_device.c - training on a small device: fine-tunes the last layer of the
 * Fashion-MNIST MLP of examples/embed_infer.c on new samples, every byte from one static arena.
 *
 * Build (one command, for any target; make check-embed runs it on x86-64, aarch64 and armhf):
 *   cc -O2 examples/train_on_device.c -o train_on_device -lm
 * The model and the 64 new samples are C arrays in examples/embed_model.h
 * (tools/gen_embed_model.py). Start-up lays an arena over a static buffer, loads the model,
 * computes the frozen first layer's features of the samples and draws each epoch's batch order
 * (torch.randperm with a generator seeded EMBED_TUNE_SEED + epoch). Training is SGD (lr 0.1)
 * on the last layer's weight and bias, in batches of 16. ct_arena_plan runs the first two
 * training steps and reports the exact bytes the program needs; from then on the allocator
 * hooks refuse every call (the program fails if one is made). Each epoch's mean loss is
 * printed beside PyTorch's (from the generator) and must be within 1e-4 of it.
 * Expected output (the arena's bytes depend on the target's pointer size):
 *   arena: 232880 bytes needed (buffer 524288)
 *   epoch 1: loss 0.525471 (PyTorch 0.525471)
 *   epoch 2: loss 0.447023 (PyTorch 0.447023)
 *   epoch 3: loss 0.504294 (PyTorch 0.504294)
 *   no allocator call after start-up
 */
#include <stdbool.h>
#include <stddef.h>

/* The device's allocator: the arena until start-up ends, then nothing. */
static void *device_malloc(void *arena, size_t n);
static void device_free(void *arena, void *p);
#define CTORCH_NO_STDIO
#define CTORCH_NO_THREADS
#define CTORCH_MALLOC(ctx, n) device_malloc(ctx, n)
#define CTORCH_REALLOC(ctx, p, n) ct_arena_realloc(ctx, p, n) /* ctorch does not call it */
#define CTORCH_FREE(ctx, p) device_free(ctx, p)
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"

#include <math.h>
#include <stdio.h>

#include "embed_model.h"

#ifndef EMBED_ARENA_BYTES
#define EMBED_ARENA_BYTES (512 * 1024)
#endif
/* AddressSanitizer (make sanitize) turns ctorch's block cache off: every block goes back to
   the hooks, so they must stay open there. */
#if defined(__SANITIZE_ADDRESS__)
#define EMBED_NO_CACHE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBED_NO_CACHE 1
#endif
#endif

#define STEPS_PER_EPOCH (EMBED_TUNE / EMBED_TUNE_BATCH)

static union {
    double align;
    unsigned char bytes[EMBED_ARENA_BYTES];
} arena_buffer;
static bool started;      /* start-up is over: the hooks refuse */
static size_t late_calls; /* hook calls after start-up */

static void *device_malloc(void *arena, size_t n)
{
#ifndef EMBED_NO_CACHE
    if (started) {
        late_calls++;
        return NULL;
    }
#endif
    return ct_arena_malloc(arena, n);
}

static void device_free(void *arena, void *p)
{
#ifndef EMBED_NO_CACHE
    late_calls += started;
#endif
    ct_arena_free(arena, p);
}

typedef struct trainer {
    ct_tensor *features;                    /* (64, 32): relu(linear(x, w1, b1)), frozen */
    ct_tensor *labels;                      /* (64,) int64 */
    ct_tensor *order[EMBED_TUNE_EPOCHS];    /* each epoch's batch order (randperm) */
    ct_tensor *w, *b;                       /* the last layer: the parameters trained */
    ct_optimizer *opt;                      /* SGD on w and b */
    int step;                               /* the next training step */
    double loss[EMBED_TUNE_EPOCHS];         /* each epoch's summed batch losses */
} trainer;

/* One SGD step on batch t->step (of its epoch's order). */
static void train_step(void *user)
{
    trainer *t = (trainer *)user;
    int epoch = t->step / STEPS_PER_EPOCH, batch = t->step % STEPS_PER_EPOCH;
    ct_scope_begin();
    ct_tensor *idx = ct_narrow(t->order[epoch], 0, (int64_t)batch * EMBED_TUNE_BATCH,
                               EMBED_TUNE_BATCH);
    ct_tensor *logits = ct_linear(ct_index_select(t->features, 0, idx), t->w, t->b);
    ct_tensor *loss = ct_cross_entropy(logits, ct_index_select(t->labels, 0, idx), NULL);
    ct_optimizer_zero_grad(t->opt, true);
    ct_backward(loss, NULL, false);
    ct_optimizer_step(t->opt);
    t->loss[epoch] += loss ? ct_item(loss) : NAN;
    ct_scope_end();
    t->step++;
}

/* Start-up: the frozen features, the labels, the batch orders, the parameters and SGD. */
static void trainer_init(trainer *t, const ct_state_dict *sd)
{
    int64_t xs[2] = {EMBED_TUNE, 196}, ys[1] = {EMBED_TUNE};
    ct_tensor *x = ct_empty(xs, 2, CT_FLOAT32);
    t->labels = ct_empty(ys, 1, CT_INT64);
    if (x && t->labels) {
        for (int i = 0; i < EMBED_TUNE * 196; i++) {
            ((float *)ct_data_ptr(x))[i] = (float)embed_tune_images[i] / 255.0f;
        }
        for (int i = 0; i < EMBED_TUNE; i++) {
            ((int64_t *)ct_data_ptr(t->labels))[i] = embed_tune_labels[i];
        }
    }
    t->features = ct_relu(ct_linear(x, ct_state_dict_get(sd, "0.weight"),
                                     ct_state_dict_get(sd, "0.bias")));
    ct_free(x);
    ct_generator *g = ct_generator_new();
    for (int e = 0; e < EMBED_TUNE_EPOCHS; e++) {
        ct_generator_manual_seed(g, (uint64_t)(EMBED_TUNE_SEED + e));
        t->order[e] = ct_randperm(EMBED_TUNE, g);
    }
    ct_generator_free(g);
    t->w = ct_parameter(ct_state_dict_get(sd, "2.weight"), true);
    t->b = ct_parameter(ct_state_dict_get(sd, "2.bias"), true);
    ct_tensor *params[2] = {t->w, t->b};
    ct_sgd_opts opts = {EMBED_TUNE_LR, 0.0, 0.0, 0.0, false, false};
    t->opt = ct_sgd_new(params, 2, &opts);
}

static void trainer_free(trainer *t)
{
    ct_optimizer_free(t->opt);
    ct_tensor *own[3 + EMBED_TUNE_EPOCHS] = {t->features, t->labels, t->w};
    for (int e = 0; e < EMBED_TUNE_EPOCHS; e++) {
        own[3 + e] = t->order[e];
    }
    for (int k = 0; k < 3 + EMBED_TUNE_EPOCHS; k++) {
        ct_free(own[k]);
    }
    ct_free(t->b);
}

int main(void)
{
    ct_arena *arena = ct_arena_new(arena_buffer.bytes, sizeof arena_buffer.bytes);
    ct_set_alloc_context(arena);
    ct_state_dict *sd = ct_load_buffer(embed_model, sizeof embed_model);
    trainer t = {NULL, NULL, {NULL}, NULL, NULL, NULL, 0, {0.0}};
    trainer_init(&t, sd);
    size_t need = ct_error() ? 0 : ct_arena_plan(arena, train_step, &t);
    started = true;
    printf("arena: %zu bytes needed (buffer %zu)\n", need, sizeof arena_buffer.bytes);
    while (t.step < EMBED_TUNE_EPOCHS * STEPS_PER_EPOCH && !ct_error()) {
        train_step(&t);
    }
    started = false;
    int failed = ct_error() != NULL || need == 0 || late_calls != 0;
    for (int e = 0; e < EMBED_TUNE_EPOCHS && !ct_error(); e++) {
        double loss = t.loss[e] / STEPS_PER_EPOCH;
        printf("epoch %d: loss %.6f (PyTorch %.6f)\n", e + 1, loss, embed_tune_loss[e]);
        failed |= !(fabs(loss - embed_tune_loss[e]) <= 1e-4);
    }
    if (ct_error()) {
        printf("error: %s\n", ct_error());
    } else {
        printf("%s\n", late_calls ? "allocator called after start-up"
                                  : "no allocator call after start-up");
    }
    trainer_free(&t);
    ct_state_dict_free(sd);
    ct_empty_cache();
    return failed;
}
