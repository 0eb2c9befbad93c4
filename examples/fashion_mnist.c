/* examples/fashion_mnist.c - PyTorch's "Quickstart" network trained on Fashion-MNIST.
 *
 * Build (one command; add -DCTORCH_ZLIB ... -lz to read the .gz files of the full dataset):
 *   cc -O2 -march=native -pthread -DCTORCH_ZLIB examples/fashion_mnist.c -o fashion_mnist -lm -lz
 * Run:
 *   ./fashion_mnist [--data DIR] [--epochs N] [--optimizer sgd|adam] [--lr X] [--threads N]
 *                   [--seed N] [--steps N] [--profile trace.json] [--amp bf16|fp16]
 * --steps N ends each epoch after N batches (for timing; the default runs whole epochs).
 * --profile FILE profiles the first epoch (torch.profiler): prints the ops' table (sorted by
 * self CPU time, 15 rows), how much of the epoch's wall time the self times cover, and
 * writes the Chrome trace to FILE (open it in chrome://tracing or ui.perfetto.dev).
 * --amp bf16 runs the forward passes and the loss under CPU autocast (ct_autocast_begin: the
 * Linear layers in bfloat16, the loss in float32, parameters and optimizer in float32);
 * --amp fp16 the same in float16 with a GradScaler, as torch.autocast + torch.amp.GradScaler.
 * Data: --data, else $FASHION_MNIST_DIR, else /usr/share/datasets/fashion-mnist
 * (`apt-get install dataset-fashion-mnist`), else the subset shipped in data/fashion-mnist.
 * Model: Flatten, Linear 784->512, ReLU, Linear 512->512, ReLU, Linear 512->10; cross-entropy,
 * batch 64, pixels scaled to [0, 1], shuffled each epoch.
 * Expected output (full dataset, --optimizer adam --epochs 1 --threads 2; times vary):
 *   data: /usr/share/datasets/fashion-mnist (60000 train, 10000 test)
 *   epoch 1/1  train loss 0.4863  test accuracy 84.9%  avg test loss 0.4105  1.36 s (44118 samples/s)
 *   test accuracy: 0.8493
 * On a terminal a progress bar (batches, loss, samples/s) is drawn on stderr during each epoch.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty under -std=c11 */
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die_on_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)user;
    fprintf(stderr, "error: %s\n", message);
    exit(1);
}

/* Keeps an expected error (a missing file) quiet: the caller reports it. */
static void ignore_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)message;
    (void)user;
}

typedef struct options {
    const char *data;
    int epochs, threads, steps;
    const char *optimizer;
    double lr;
    unsigned long long seed;
    const char *profile;
    const char *amp;
} options;

static void usage(void)
{
    fprintf(stderr, "usage: fashion_mnist [--data DIR] [--epochs N] [--optimizer sgd|adam] "
                    "[--lr X] [--threads N] [--seed N] [--steps N] [--profile trace.json] "
                    "[--amp bf16|fp16]\n");
    exit(2);
}

static options parse_args(int argc, char **argv)
{
    options o = {NULL, 5, 0, 0, "sgd", 1e-3, 0, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
        }
        if (!strcmp(a, "--data")) {
            o.data = v;
        } else if (!strcmp(a, "--epochs")) {
            o.epochs = atoi(v);
        } else if (!strcmp(a, "--optimizer")) {
            o.optimizer = v;
        } else if (!strcmp(a, "--lr")) {
            o.lr = atof(v);
        } else if (!strcmp(a, "--threads")) {
            o.threads = atoi(v);
        } else if (!strcmp(a, "--steps")) {
            o.steps = atoi(v);
        } else if (!strcmp(a, "--seed")) {
            o.seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--profile")) {
            o.profile = v;
        } else if (!strcmp(a, "--amp") && (!strcmp(v, "bf16") || !strcmp(v, "fp16"))) {
            o.amp = v;
        } else {
            usage();
        }
        i++;
    }
    if (o.epochs < 1 || (strcmp(o.optimizer, "sgd") && strcmp(o.optimizer, "adam"))) {
        usage();
    }
    return o;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Loads DIR/<name> or DIR/<name>.gz; NULL (error cleared) when neither can be read. */
static ct_tensor *load_idx(const char *dir, const char *name, char *why, size_t why_len)
{
    char path[1024];
    const char *suffix[2] = {"", ".gz"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix[k]);
        if (access(path, R_OK) != 0) {
            continue;
        }
        ct_set_error_handler(ignore_error, NULL);
        ct_tensor *t = ct_idx_load(path);
        ct_set_error_handler(die_on_error, NULL);
        if (t) {
            return t;
        }
        snprintf(why, why_len, "%s", ct_error());
        ct_error_clear();
    }
    return NULL;
}

/* images (N, 28, 28) uint8 -> float32 in [0, 1]; labels -> int64 */
typedef struct split {
    ct_tensor *x, *y;
} split;

static bool load_split(const char *dir, const char *prefix, split *s, char *why, size_t n)
{
    char name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
    ct_tensor *img = load_idx(dir, name, why, n);
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
    ct_tensor *lab = img ? load_idx(dir, name, why, n) : NULL;
    if (!img || !lab) {
        ct_free(img);
        return false;
    }
    ct_scope_begin(); /* frees the float32 copy of the images; keeps the results */
    s->x = ct_keep(ct_div_scalar(ct_to_dtype(img, CT_FLOAT32), 255.0));
    s->y = ct_keep(ct_to_dtype(lab, CT_INT64));
    ct_scope_end();
    ct_free(img);
    ct_free(lab);
    return s->x && s->y;
}

/* Tries --data, $FASHION_MNIST_DIR, the system dataset, then the shipped subset. */
static const char *load_data(const char *flag, split *train, split *test)
{
    const char *env = getenv("FASHION_MNIST_DIR");
    const char *dirs[5] = {flag, env, "/usr/share/datasets/fashion-mnist", "data/fashion-mnist",
                           "../data/fashion-mnist"};
    for (int k = 0; k < 5; k++) {
        char why[512] = "files not found";
        if (!dirs[k]) {
            continue;
        }
        if (load_split(dirs[k], "train", train, why, sizeof why)) {
            if (load_split(dirs[k], "t10k", test, why, sizeof why)) {
                return dirs[k];
            }
            ct_free(train->x);
            ct_free(train->y);
        }
        if (k < 2) { /* a directory the user named must work */
            fprintf(stderr, "error: cannot read Fashion-MNIST from %s: %s\n", dirs[k], why);
            exit(1);
        }
        if (k == 2 && access(dirs[k], F_OK) == 0) {
            fprintf(stderr, "note: skipping %s: %s\n", dirs[k], why);
        }
    }
    fprintf(stderr, "error: no Fashion-MNIST data found (try --data DIR)\n");
    exit(1);
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

static void progress(int64_t batch, int64_t batches, double loss, double samples_per_s)
{
    int width = 30, done = (int)(width * (batch + 1) / batches);
    fprintf(stderr, "\r  [%.*s%*s] %lld/%lld  loss %.4f  %.0f samples/s", done,
            "##############################", width - done, "", (long long)(batch + 1),
            (long long)batches, loss, samples_per_s);
    if (batch + 1 == batches) {
        fprintf(stderr, "\r%*s\r", 90, "");
    }
}

/* Mixed precision (--amp): autocast's dtype (CT_DTYPE_DEFAULT: off) and the GradScaler
   (enabled for float16, a pass-through otherwise). */
typedef struct amp_state {
    ct_dtype dtype;
    ct_grad_scaler *scaler;
} amp_state;

/* The model's logits for x, under autocast when --amp is given. */
static ct_tensor *forward(ct_module *model, const amp_state *amp, const ct_tensor *x)
{
    if (amp->dtype != CT_DTYPE_DEFAULT) {
        ct_autocast_begin(CT_CPU, amp->dtype, true);
    }
    ct_tensor *logits = ct_module_forward(model, x);
    if (amp->dtype != CT_DTYPE_DEFAULT) {
        ct_autocast_end();
    }
    return logits;
}

/* One pass over the training set (its first `steps` batches when steps > 0); returns the mean
   batch loss. */
static double train_epoch(ct_module *model, ct_optimizer *opt, ct_dataloader *loader, bool tty,
                          int steps, const amp_state *amp)
{
    int64_t batches = ct_dataloader_len(loader), b = 0, seen = 0;
    if (steps > 0 && steps < batches) {
        batches = steps;
    }
    double total = 0, t0 = now_s();
    ct_tensor *batch[2];
    ct_module_train(model, true);
    for (;;) {
        ct_scope_begin();
        if (b == batches || !ct_dataloader_next(loader, batch)) {
            ct_scope_end();
            break;
        }
        ct_tensor *loss = ct_cross_entropy(forward(model, amp, batch[0]), batch[1], NULL);
        ct_backward(ct_grad_scaler_scale(amp->scaler, loss), NULL, false);
        ct_grad_scaler_step(amp->scaler, opt, NULL);
        ct_grad_scaler_update(amp->scaler);
        ct_optimizer_zero_grad(opt, true);
        double l = ct_item(loss);
        total += l;
        seen += ct_size(batch[0], 0);
        if (tty && (b % 20 == 0 || b + 1 == batches)) {
            progress(b, batches, l, (double)seen / (now_s() - t0));
        }
        b++;
        ct_scope_end();
    }
    ct_dataloader_reset(loader); /* after --steps: the next epoch starts a new pass */
    return total / (double)(b ? b : 1);
}

/* After the profiled epoch of secs seconds: the table, the share of the wall time that the
   self times cover (all of it at one thread), and the trace written to path. */
static void report_profile(const char *path, double secs)
{
    ct_profiler_print_table(stdout, "self_cpu_time_total", 15);
    int64_t n = ct_profiler_key_averages(NULL, 0);
    ct_profiler_event_avg *rows = (ct_profiler_event_avg *)malloc(sizeof *rows * (size_t)n);
    double self_us = 0;
    ct_profiler_key_averages(rows, n);
    for (int64_t r = 0; r < n; r++) {
        self_us += rows[r].self_cpu_time_total_us;
    }
    free(rows);
    printf("profiler: self CPU total %.1f ms = %.1f%% of the epoch's %.1f ms wall time\n",
           self_us / 1e3, 100.0 * self_us / (secs * 1e6), secs * 1e3);
    ct_profiler_export_chrome_trace(path);
    printf("profiler: trace written to %s\n", path);
    ct_profiler_reset();
}

/* Accuracy (fraction) and mean batch loss on the test set, batches of 1000. */
static double evaluate(ct_module *model, const amp_state *amp, const split *test,
                       double *avg_loss)
{
    int64_t n = ct_size(test->x, 0), correct = 0, batches = 0;
    double loss = 0;
    ct_module_eval(model);
    ct_no_grad_begin();
    for (int64_t i = 0; i < n; i += 1000) {
        int64_t len = n - i < 1000 ? n - i : 1000;
        ct_scope_begin();
        ct_tensor *x = ct_narrow(test->x, 0, i, len), *y = ct_narrow(test->y, 0, i, len);
        ct_tensor *logits = forward(model, amp, x);
        loss += ct_item(ct_cross_entropy(logits, y, NULL));
        correct += ct_item_int64(ct_sum(ct_eq(ct_argmax_dim(logits, 1, false), y)));
        batches++;
        ct_scope_end();
    }
    ct_no_grad_end();
    *avg_loss = loss / (double)batches;
    return (double)correct / (double)n;
}

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);
    ct_set_error_handler(die_on_error, NULL);
    if (o.threads > 0) {
        ct_set_num_threads(o.threads);
    }
    ct_manual_seed(o.seed);
    split train, test;
    const char *dir = load_data(o.data, &train, &test);
    printf("data: %s (%lld train, %lld test)\n", dir, (long long)ct_size(train.x, 0),
           (long long)ct_size(test.x, 0));

    ct_module *model = quickstart_model();
    amp_state amp = {!o.amp ? CT_DTYPE_DEFAULT : !strcmp(o.amp, "bf16") ? CT_BFLOAT16
                                                                        : CT_FLOAT16, NULL};
    ct_grad_scaler_opts go = ct_grad_scaler_defaults();
    go.enabled = amp.dtype == CT_FLOAT16;
    amp.scaler = ct_grad_scaler_new(&go);
    ct_tensor *params[16];
    int64_t n_params = ct_module_parameters(model, params, 16);
    ct_optimizer *opt;
    if (!strcmp(o.optimizer, "adam")) {
        ct_adam_opts a = ct_adam_defaults();
        a.lr = o.lr;
        opt = ct_adam_new(params, n_params, &a);
    } else {
        ct_sgd_opts s = ct_sgd_defaults();
        s.lr = o.lr;
        opt = ct_sgd_new(params, n_params, &s);
    }
    ct_tensor *fields[2] = {train.x, train.y};
    ct_dataset *ds = ct_tensor_dataset_new(fields, 2);
    ct_dataloader_opts lo = ct_dataloader_defaults();
    lo.batch_size = 64;
    lo.shuffle = true;
    ct_dataloader *loader = ct_dataloader_new(ds, &lo);
    bool tty = isatty(2);

    double acc = 0;
    for (int e = 0; e < o.epochs; e++) {
        bool profile = o.profile && e == 0;
        if (profile) {
            ct_profiler_begin(NULL);
        }
        double t0 = now_s();
        double train_loss = train_epoch(model, opt, loader, tty, o.steps, &amp);
        double secs = now_s() - t0, test_loss = 0;
        if (profile) {
            ct_profiler_end();
            report_profile(o.profile, secs);
        }
        int64_t trained = ct_size(train.x, 0);
        if (o.steps > 0 && (int64_t)o.steps * lo.batch_size < trained) {
            trained = (int64_t)o.steps * lo.batch_size;
        }
        acc = evaluate(model, &amp, &test, &test_loss);
        printf("epoch %d/%d  train loss %.4f  test accuracy %.1f%%  avg test loss %.4f  "
               "%.2f s (%.0f samples/s)\n", e + 1, o.epochs, train_loss, 100 * acc, test_loss,
               secs, (double)trained / secs);
        fflush(stdout);
    }
    printf("test accuracy: %.4f\n", acc);

    ct_dataloader_free(loader);
    ct_dataset_free(ds);
    ct_grad_scaler_free(amp.scaler);
    ct_optimizer_free(opt);
    ct_module_free(model);
    ct_free(train.x);
    ct_free(train.y);
    ct_free(test.x);
    ct_free(test.y);
    return 0;
}
