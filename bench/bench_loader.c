/* bench/bench_loader.c - DataLoader throughput with transforms, and the quickstart step rate.
 *
 * Fashion-MNIST's training images (float32 in [0, 1], (N, 1, 28, 28)) and labels in a tensor
 * dataset, wrapped by ct_transformed_dataset_new with Compose(RandomCrop(28, padding=4),
 * RandomHorizontalFlip(), Normalize((0.2860,), (0.3530,))); a DataLoader with batch 64,
 * shuffle and --workers worker threads. Prints the batches per second of the best of
 * --repeat windows of --batches batches (after 20 warm-up batches, which start the workers),
 * then the time of one quickstart training step (examples/fashion_mnist.c's MLP, cross-entropy,
 * backward, SGD lr 1e-3) on a batch of 64 at --threads intra-op threads, the best of --repeat
 * means over 50 steps. tools/bench_torch_loader.py runs PyTorch's DataLoader on the same
 * pipeline; tools/bench.py --only loader prints both and the ratios.
 * Build: cc -O2 -march=native -pthread -DCTORCH_ZLIB bench/bench_loader.c -o bench_loader -lm -lz
 * Usage: bench_loader [--data DIR] [--workers N] [--batches N] [--repeat N] [--threads N]
 * Output: "loader_batches_per_s X" and "step_ms Y" lines.
 */
#define _POSIX_C_SOURCE 200809L
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die_on_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)user;
    fprintf(stderr, "bench_loader: %s\n", message);
    exit(1);
}

/* DIR/NAME.gz, else DIR/NAME. */
static ct_tensor *load_idx(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.gz", dir, name);
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
    } else {
        snprintf(path, sizeof path, "%s/%s", dir, name);
    }
    return ct_idx_load(path);
}

/* Batches per second over `batches` batches of dl (starting new epochs as needed). */
static double loader_rate(ct_dataloader *dl, int batches)
{
    double t0 = now_s();
    for (int k = 0; k < batches; k++) {
        ct_tensor *b[2];
        ct_scope_begin();
        if (!ct_dataloader_next(dl, b)) {
            ct_dataloader_next(dl, b);
        }
        ct_scope_end();
    }
    return batches / (now_s() - t0);
}

static ct_module *quickstart_model(void)
{
    ct_module *m = ct_sequential_new();
    ct_sequential_append(m, ct_flatten_new(1, -1));
    ct_sequential_append(m, ct_linear_new(28 * 28, 512, true));
    ct_sequential_append(m, ct_relu_new());
    ct_sequential_append(m, ct_linear_new(512, 512, true));
    ct_sequential_append(m, ct_relu_new());
    ct_sequential_append(m, ct_linear_new(512, 10, true));
    return m;
}

/* The mean seconds of one SGD step on (x, y), the best of `repeat` means over 50 steps. */
static double step_time(const ct_tensor *x, const ct_tensor *y, int repeat)
{
    ct_module *model = quickstart_model();
    ct_tensor *params[16];
    int64_t n = ct_module_parameters(model, params, 16);
    ct_sgd_opts s = ct_sgd_defaults();
    s.lr = 1e-3;
    ct_optimizer *opt = ct_sgd_new(params, n, &s);
    double best = 1e30;
    for (int r = -1; r < repeat; r++) { /* r = -1: warm-up */
        double t0 = now_s();
        for (int k = 0; k < 50; k++) {
            ct_scope_begin();
            ct_backward(ct_cross_entropy(ct_module_forward(model, x), y, NULL), NULL, false);
            ct_optimizer_step(opt);
            ct_optimizer_zero_grad(opt, true);
            ct_scope_end();
        }
        double t = (now_s() - t0) / 50;
        best = r >= 0 && t < best ? t : best;
    }
    ct_optimizer_free(opt);
    ct_module_free(model);
    return best;
}

int main(int argc, char **argv)
{
    const char *data = "/usr/share/datasets/fashion-mnist";
    int workers = 2, batches = 250, repeat = 3, threads = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--data")) {
            data = argv[i + 1];
        } else if (!strcmp(argv[i], "--workers")) {
            workers = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--batches")) {
            batches = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--repeat")) {
            repeat = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--threads")) {
            threads = atoi(argv[i + 1]);
        } else {
            fprintf(stderr, "usage: bench_loader [--data DIR] [--workers N] [--batches N] "
                            "[--repeat N] [--threads N]\n");
            return 2;
        }
    }
    ct_set_error_handler(die_on_error, NULL);
    ct_set_num_threads(threads);
    ct_tensor *img = load_idx(data, "train-images-idx3-ubyte");
    ct_tensor *lab = load_idx(data, "train-labels-idx1-ubyte");
    int64_t shape[4] = {ct_size(img, 0), 1, 28, 28};
    ct_tensor *fields[2] = {ct_reshape(ct_div_scalar(ct_to_dtype(img, CT_FLOAT32), 255.0), shape,
                                       4),
                            ct_to_dtype(lab, CT_INT64)};
    ct_random_crop_opts co = {{28, 28}, {4, 4, 4, 4}, false, 0, CT_PADDING_CONSTANT};
    double mean = 0.2860, std = 0.3530;
    ct_transform *steps[3] = {ct_random_crop_new(&co), ct_random_horizontal_flip_new(0.5),
                              ct_transforms_normalize_new(&mean, &std, 1, false)};
    ct_transform *pipeline = ct_compose_new(steps, 3);
    ct_dataset *base = ct_tensor_dataset_new(fields, 2);
    ct_dataset *ds = ct_transformed_dataset_new(base, 0, pipeline);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 0);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 64;
    o.shuffle = true;
    o.num_workers = workers;
    o.generator = g;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    loader_rate(dl, 20);
    double best = 0;
    for (int r = 0; r < repeat; r++) {
        double rate = loader_rate(dl, batches);
        best = rate > best ? rate : best;
    }
    printf("loader_batches_per_s %.1f\n", best);
    fflush(stdout);
    ct_tensor *b[2];
    ct_dataloader_next(dl, b);
    ct_dataloader_free(dl);
    printf("step_ms %.3f\n", 1e3 * step_time(b[0], b[1], repeat));
    ct_generator_free(g);
    ct_dataset_free(ds);
    ct_dataset_free(base);
    ct_transform_free(pipeline);
    for (int k = 0; k < 3; k++) {
        ct_transform_free(steps[k]);
    }
    return 0;
}
