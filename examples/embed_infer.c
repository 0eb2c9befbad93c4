/* examples/embed_infer.c - inference as on a small device: a Fashion-MNIST MLP read from a C
 * array (no file system), no threads, no autograd, every byte from one static arena.
 *
 * Build (one command, for any target; `make size` builds it with -Os, static and stripped for
 * x86-64, aarch64 and armhf and prints the sizes):
 *   cc -O2 examples/embed_infer.c -o embed_infer -lm
 * The model (Linear 196->32, ReLU, Linear 32->10, on 14x14 images) and the test images are
 * C arrays in examples/embed_model.h, made by tools/gen_embed_model.py with PyTorch.
 * Start-up lays an arena over a static buffer (the allocator hooks below), loads the
 * safetensors model from memory and plans one classification (ct_arena_plan: the exact bytes
 * the program needs). From then on the hooks refuse every call: each later classification
 * shows that nothing is allocated after start-up (the program fails if a hook is called).
 * Expected output (the arena's bytes depend on the target's pointer size):
 *   arena: 75680 bytes needed (buffer 262144)
 *   image 0: class 9 (p 0.54), label 9
 *   ...
 *   accuracy 25/32, no allocator call after start-up
 */
#include <stdbool.h>
#include <stddef.h>

/* The device's allocator: the arena until start-up ends, then nothing. */
static void *device_malloc(void *arena, size_t n);
static void device_free(void *arena, void *p);
#define CTORCH_NO_STDIO
#define CTORCH_NO_THREADS
#define CTORCH_NO_AUTOGRAD
#define CTORCH_MALLOC(ctx, n) device_malloc(ctx, n)
#define CTORCH_REALLOC(ctx, p, n) ct_arena_realloc(ctx, p, n) /* ctorch does not call it */
#define CTORCH_FREE(ctx, p) device_free(ctx, p)
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"

#include <stdio.h>

#include "embed_model.h"

#ifndef EMBED_ARENA_BYTES
#define EMBED_ARENA_BYTES (256 * 1024)
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

static union {
    double align;
    unsigned char bytes[EMBED_ARENA_BYTES];
} arena_buffer;
static bool started;       /* start-up is over: the hooks refuse */
static size_t late_calls;  /* hook calls after start-up */

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

typedef struct classifier {
    const ct_tensor *w1, *b1, *w2, *b2; /* the model's parameters */
    ct_tensor *x;                       /* the input, (1, 196) float32 */
    int image;                          /* which test image to classify */
    int label;                          /* the result: class and probability */
    float prob;
} classifier;

/* Classifies test image c->image: the class of highest probability in
   softmax(linear(relu(linear(x)))) (read from the result: a device needs no ct_argmax). */
static void classify(void *user)
{
    classifier *c = (classifier *)user;
    float *x = (float *)ct_data_ptr(c->x);
    for (int i = 0; i < 196; i++) {
        x[i] = (float)embed_test_images[c->image * 196 + i] / 255.0f;
    }
    ct_scope_begin();
    ct_tensor *h = ct_relu(ct_linear(c->x, c->w1, c->b1));
    ct_tensor *p = ct_softmax(ct_linear(h, c->w2, c->b2), 1);
    const float *prob = p ? (const float *)ct_data_ptr(p) : NULL;
    c->label = prob ? 0 : -1;
    for (int k = 1; prob && k < 10; k++) {
        c->label = prob[k] > prob[c->label] ? k : c->label;
    }
    c->prob = prob ? prob[c->label] : 0.0f;
    ct_scope_end();
}

int main(void)
{
    ct_arena *arena = ct_arena_new(arena_buffer.bytes, sizeof arena_buffer.bytes);
    ct_set_alloc_context(arena);
    ct_state_dict *sd = ct_load_buffer(embed_model, sizeof embed_model);
    int64_t xs[2] = {1, 196};
    classifier c = {ct_state_dict_get(sd, "0.weight"), ct_state_dict_get(sd, "0.bias"),
                    ct_state_dict_get(sd, "2.weight"), ct_state_dict_get(sd, "2.bias"),
                    ct_empty(xs, 2, CT_FLOAT32), 0, 0, 0.0f};
    size_t need = c.w1 && c.b1 && c.w2 && c.b2 ? ct_arena_plan(arena, classify, &c) : 0;
    started = true;
    printf("arena: %zu bytes needed (buffer %zu)\n", need, sizeof arena_buffer.bytes);
    int correct = 0;
    for (c.image = 0; c.image < EMBED_TEST && !ct_error(); c.image++) {
        classify(&c);
        correct += c.label == embed_test_labels[c.image];
        if (c.image < 4) {
            printf("image %d: class %d (p %.2f), label %d\n", c.image, c.label, (double)c.prob,
                   embed_test_labels[c.image]);
        }
    }
    started = false;
    int failed = ct_error() != NULL || need == 0 || late_calls != 0;
    if (ct_error()) {
        printf("error: %s\n", ct_error());
    } else {
        printf("accuracy %d/%d, %s\n", correct, EMBED_TEST,
               late_calls ? "allocator called after start-up" : "no allocator call after start-up");
    }
    ct_free(c.x);
    ct_state_dict_free(sd);
    ct_empty_cache();
    return failed;
}
