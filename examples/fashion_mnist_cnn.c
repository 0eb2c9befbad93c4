/* examples/fashion_mnist_cnn.c - a convolutional network trained on Fashion-MNIST, with
 * checkpoints.
 *
 * Build (one command; -DCTORCH_ZLIB ... -lz reads the .gz files of the full dataset):
 *   cc -O2 -march=native -pthread -DCTORCH_ZLIB examples/fashion_mnist_cnn.c -o fashion_mnist_cnn \
 *      -lm -lz
 * Run:
 *   ./fashion_mnist_cnn [--data DIR] [--epochs N] [--optimizer adam|sgd] [--lr X] [--threads N]
 *                       [--seed N] [--steps N] [--save FILE] [--resume FILE] [--stop-after N]
 *                       [--latency N] [--save-init FILE] [--log-steps N] [--dtype float64]
 *                       [--amp bf16|fp16]
 * --lr is OneCycleLR's max_lr (the lr starts at max_lr / 25, peaks after 30% of the steps and
 * anneals to max_lr / 25e4); sgd uses momentum 0.9 (cycled by OneCycleLR as Adam's beta1 is).
 * --save FILE writes a checkpoint (safetensors) after every epoch: the model's state_dict under
 * "model.", the optimizer's under "optim.", the scheduler's under "sched.", the default
 * generator's state and the epoch count. --resume FILE continues such a run where it stopped,
 * with the same losses as an uninterrupted run (the schedule length comes from the
 * checkpoint). --stop-after N ends the run after epoch N (as if interrupted; for --resume).
 * --steps N ends each epoch after N batches (for timing). --latency N times N single-image
 * forwards in eval mode after training and prints their median. --save-init FILE writes the
 * model's initial state_dict and --log-steps N prints the loss of each of the first N steps
 * of the training (a resumed run counts from the start of the run it continues);
 * tools/cross_check_cnn.py trains the same network in PyTorch from them. --dtype float64
 * trains the model and data converted to float64 (Module.double()).
 * --amp bf16 runs the forward passes and the loss under CPU autocast (ct_autocast_begin:
 * convolutions and the linear layer in bfloat16, the loss in float32, the parameters and the
 * optimizer in float32); --amp fp16 does the same in float16 with a GradScaler (dynamic loss
 * scaling, steps skipped on inf/NaN gradients), as torch.autocast + torch.amp.GradScaler.
 * Data: --data, else $FASHION_MNIST_DIR, else /usr/share/datasets/fashion-mnist
 * (`apt-get install dataset-fashion-mnist`), else the subset shipped in data/fashion-mnist.
 * Model (on (N, 1, 28, 28) images in [0, 1]): two blocks Conv2d(3x3, padding 1)-BatchNorm2d-
 * ReLU-MaxPool2d(2) with 32 and 64 channels, Flatten, Dropout(0.25), Linear 3136 -> 10;
 * cross-entropy, batch 64, shuffled each epoch; evaluated in eval mode without autograd.
 * Expected output (full dataset, defaults, --threads 2; times vary, these on a busy machine):
 *   data: /usr/share/datasets/fashion-mnist (60000 train, 10000 test)
 *   epoch 1/5  train loss 0.4594  test accuracy 87.1%  avg test loss 0.3574  108.24 s (554 ...
 *   ...
 *   epoch 5/5  train loss 0.1826  test accuracy 92.2%  avg test loss 0.2244  131.11 s (458 ...
 *   test accuracy: 0.9219
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

typedef struct options {
    const char *data, *optimizer, *save, *resume, *save_init, *dtype, *amp;
    int epochs, threads, steps, stop_after, latency, log_steps;
    double lr;
    unsigned long long seed;
} options;

static void usage(void)
{
    fprintf(stderr, "usage: fashion_mnist_cnn [--data DIR] [--epochs N] [--optimizer adam|sgd] "
                    "[--lr X] [--threads N] [--seed N] [--steps N] [--save FILE] "
                    "[--resume FILE] [--stop-after N] [--latency N] [--save-init FILE] "
                    "[--log-steps N] [--dtype float32|float64] [--amp bf16|fp16]\n");
    exit(2);
}

static options parse_args(int argc, char **argv)
{
    options o = {NULL, "adam", NULL, NULL, NULL, "float32", NULL, 5, 0, 0, 0, 0, 0, 0.01, 0};
    const char *names[] = {"--data",    "--optimizer", "--save",    "--resume",   "--save-init",
                           "--dtype",   "--amp",       "--epochs",  "--threads",  "--steps",
                           "--stop-after", "--latency", "--log-steps", "--lr",    "--seed"};
    const char **strs[] = {&o.data,      &o.optimizer, &o.save, &o.resume,
                           &o.save_init, &o.dtype,     &o.amp};
    int *ints[] = {&o.epochs, &o.threads, &o.steps, &o.stop_after, &o.latency, &o.log_steps};
    for (int i = 1; i < argc; i += 2) {
        int k = 0;
        if (i + 1 == argc) {
            usage();
        }
        while (k < 15 && strcmp(argv[i], names[k])) {
            k++;
        }
        const char *v = argv[i + 1];
        if (k < 7) {
            *strs[k] = v;
        } else if (k < 13) {
            *ints[k - 7] = atoi(v);
        } else if (k == 13) {
            o.lr = atof(v);
        } else if (k == 14) {
            o.seed = strtoull(v, NULL, 10);
        } else {
            usage();
        }
    }
    if (o.epochs < 1 || (strcmp(o.optimizer, "sgd") && strcmp(o.optimizer, "adam")) ||
        (strcmp(o.dtype, "float32") && strcmp(o.dtype, "float64")) ||
        (o.amp && strcmp(o.amp, "bf16") && strcmp(o.amp, "fp16"))) {
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

/* Keeps an expected error (an unreadable file) quiet: the caller reports it. */
static void quiet_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)message;
    (void)user;
}

/* images (N, 1, 28, 28) float32 in [0, 1]; labels (N) int64 */
typedef struct split {
    ct_tensor *x, *y;
} split;

/* DIR/<prefix>-{images-idx3,labels-idx1}-ubyte[.gz] into s; false (the reason in why, the
   error cleared) when they cannot be read. */
static bool load_split(const char *dir, const char *prefix, split *s, char why[256])
{
    ct_tensor *t[2] = {NULL, NULL};
    const char *kind[2] = {"images-idx3", "labels-idx1"};
    for (int f = 0; f < 2; f++) {
        for (int gz = 0; gz < 2 && !t[f]; gz++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s-%s-ubyte%s", dir, prefix, kind[f], gz ? ".gz" : "");
            if (access(path, R_OK) == 0) {
                ct_set_error_handler(quiet_error, NULL);
                t[f] = ct_idx_load(path);
                ct_set_error_handler(die_on_error, NULL);
                snprintf(why, 256, "%.200s", t[f] ? "" : ct_error());
                ct_error_clear();
            }
        }
    }
    if (t[0] && t[1]) {
        ct_scope_begin(); /* frees the intermediate copies; keeps the results */
        s->x = ct_keep(ct_unsqueeze(ct_div_scalar(ct_to_dtype(t[0], CT_FLOAT32), 255.0), 1));
        s->y = ct_keep(ct_to_dtype(t[1], CT_INT64));
        ct_scope_end();
    }
    ct_free(t[0]);
    ct_free(t[1]);
    return t[0] && t[1];
}

/* Tries --data, $FASHION_MNIST_DIR, the system dataset, then the shipped subset. */
static const char *load_data(const char *flag, split *train, split *test)
{
    const char *dirs[5] = {flag, getenv("FASHION_MNIST_DIR"), "/usr/share/datasets/fashion-mnist",
                           "data/fashion-mnist", "../data/fashion-mnist"};
    for (int k = 0; k < 5; k++) {
        char why[256] = "files not found";
        if (dirs[k] && load_split(dirs[k], "train", train, why)) {
            if (load_split(dirs[k], "t10k", test, why)) {
                return dirs[k];
            }
            ct_free(train->x);
            ct_free(train->y);
        }
        if (k < 2 && dirs[k]) { /* a directory the user named must work */
            fprintf(stderr, "error: cannot read Fashion-MNIST from %s: %s\n", dirs[k], why);
            exit(1);
        }
    }
    fprintf(stderr, "error: no Fashion-MNIST data found (try --data DIR)\n");
    exit(1);
}

/* Replaces *x by its float64 copy (no scope is open: both are the caller's). */
static void to_float64(ct_tensor **x)
{
    ct_tensor *d = ct_to_dtype(*x, CT_FLOAT64);
    ct_free(*x);
    *x = d;
}

/* Conv2d(c_in, c_out, 3, padding=1), BatchNorm2d(c_out), ReLU, MaxPool2d(2) appended to m. */
static void conv_block(ct_module *m, int64_t c_in, int64_t c_out)
{
    ct_conv_opts c = ct_conv_defaults();
    c.padding[0] = c.padding[1] = 1;
    int64_t two[2] = {2, 2};
    ct_sequential_append(m, ct_conv2d_new(c_in, c_out, 3, 3, &c));
    ct_sequential_append(m, ct_batch_norm2d_new(c_out, NULL));
    ct_sequential_append(m, ct_relu_new());
    ct_sequential_append(m, ct_max_pool2d_new(two, NULL));
}

static ct_module *cnn_model(void)
{
    ct_module *m = ct_sequential_new();
    conv_block(m, 1, 32);
    conv_block(m, 32, 64);
    ct_sequential_append(m, ct_flatten_new(1, -1));
    ct_sequential_append(m, ct_dropout_new(0.25));
    ct_sequential_append(m, ct_linear_new(64 * 7 * 7, 10, true));
    return m;
}

/* Adam (or SGD with momentum 0.9) over the model's parameters. */
static ct_optimizer *make_optimizer(ct_module *model, const char *name)
{
    ct_tensor *params[16];
    int64_t n = ct_module_parameters(model, params, 16);
    if (!strcmp(name, "adam")) {
        return ct_adam_new(params, n, NULL);
    }
    ct_sgd_opts s = ct_sgd_defaults();
    s.momentum = 0.9;
    return ct_sgd_new(params, n, &s);
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

typedef struct trainer {
    ct_module *model;
    ct_optimizer *opt;
    ct_lr_scheduler *sched;
    ct_dataloader *loader;
    int64_t batches; /* per epoch */
    int64_t step;    /* steps done (in this run and the one it resumes) */
    int log_steps;   /* print the loss of the first log_steps steps */
    bool tty;
    ct_dtype amp;           /* autocast's dtype (--amp), CT_DTYPE_DEFAULT: off */
    ct_grad_scaler *scaler; /* enabled for --amp fp16; a pass-through otherwise */
} trainer;

/* The model's logits for x, under autocast when --amp is given. */
static ct_tensor *forward(ct_module *model, ct_dtype amp, const ct_tensor *x)
{
    if (amp != CT_DTYPE_DEFAULT) {
        ct_autocast_begin(CT_CPU, amp, true);
    }
    ct_tensor *logits = ct_module_forward(model, x);
    if (amp != CT_DTYPE_DEFAULT) {
        ct_autocast_end();
    }
    return logits;
}

/* One epoch (its first tr->batches batches); returns the mean batch loss and sets *seen to
   the samples trained on. The scheduler steps after every batch, as OneCycleLR expects. */
static double train_epoch(trainer *tr, int64_t *seen_out)
{
    int64_t b = 0, seen = 0;
    double total = 0, t0 = now_s();
    ct_tensor *batch[2];
    ct_module_train(tr->model, true);
    for (;;) {
        ct_scope_begin();
        if (b == tr->batches || !ct_dataloader_next(tr->loader, batch)) {
            ct_scope_end();
            break;
        }
        ct_tensor *loss = ct_cross_entropy(forward(tr->model, tr->amp, batch[0]), batch[1], NULL);
        ct_optimizer_zero_grad(tr->opt, true);
        ct_backward(ct_grad_scaler_scale(tr->scaler, loss), NULL, false);
        ct_grad_scaler_step(tr->scaler, tr->opt, NULL);
        ct_grad_scaler_update(tr->scaler);
        ct_lr_scheduler_step(tr->sched);
        double l = ct_item(loss);
        if (tr->step++ < tr->log_steps) {
            printf("step %lld loss %.9g\n", (long long)tr->step, l);
        }
        total += l;
        seen += ct_size(batch[0], 0);
        if (tr->tty && (b % 20 == 0 || b + 1 == tr->batches)) {
            progress(b, tr->batches, l, (double)seen / (now_s() - t0));
        }
        b++;
        ct_scope_end();
    }
    ct_dataloader_reset(tr->loader); /* after --steps: the next epoch starts a new pass */
    *seen_out = seen;
    return total / (double)(b ? b : 1);
}

/* Accuracy (fraction) and mean batch loss on the test set, batches of 1000, in eval mode
   without autograd. */
static double evaluate(ct_module *model, ct_dtype amp, const split *test, double *avg_loss)
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

/* Writes the training state after `epoch` epochs to path. */
static void save_checkpoint(const trainer *tr, int epoch, const char *path)
{
    ct_checkpoint_dict *ck = ct_state_dict_new();
    ct_state_dict *parts[3] = {ct_module_state_dict(tr->model), ct_optimizer_state_dict(tr->opt),
                               ct_lr_scheduler_state_dict(tr->sched)};
    const char *prefix[3] = {"model.", "optim.", "sched."};
    for (int k = 0; k < 3; k++) {
        ct_state_dict_update(ck, parts[k], prefix[k]);
        ct_state_dict_free(parts[k]);
    }
    ct_scope_begin();
    ct_state_dict_set(ck, "rng_state", ct_get_rng_state());
    ct_scope_end();
    ct_state_dict_set_int(ck, "epoch", epoch);
    ct_checkpoint_dict_save(ck, path);
    ct_state_dict_free(ck);
}

/* Restores the state save_checkpoint wrote; returns the epochs it had done. */
static int load_checkpoint(const trainer *tr, const char *path)
{
    ct_checkpoint_dict *ck = ct_checkpoint_dict_load(path);
    ct_state_dict *model = ct_state_dict_select(ck, "model.");
    ct_state_dict *optim = ct_state_dict_select(ck, "optim.");
    ct_state_dict *sched = ct_state_dict_select(ck, "sched.");
    ct_module_load_state_dict(tr->model, model, true, NULL);
    ct_optimizer_load_state_dict(tr->opt, optim);
    ct_lr_scheduler_load_state_dict(tr->sched, sched);
    ct_set_rng_state(ct_state_dict_get(ck, "rng_state"));
    int64_t epoch = 0;
    if (!ct_state_dict_get_int(ck, "epoch", &epoch)) {
        fprintf(stderr, "error: %s: no epoch count in the checkpoint\n", path);
        exit(1);
    }
    ct_state_dict_free(model);
    ct_state_dict_free(optim);
    ct_state_dict_free(sched);
    ct_state_dict_free(ck);
    return (int)epoch;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median time of n single-image forwards (eval mode, no autograd), in microseconds. */
static double latency_us(ct_module *model, const split *test, int n)
{
    double *t = (double *)malloc(sizeof *t * (size_t)n), med;
    ct_module_eval(model);
    ct_no_grad_begin();
    for (int i = 0; i < n; i++) {
        ct_scope_begin();
        ct_tensor *x = ct_narrow(test->x, 0, i % ct_size(test->x, 0), 1);
        double t0 = now_s();
        ct_module_forward(model, x);
        t[i] = (now_s() - t0) * 1e6;
        ct_scope_end();
    }
    ct_no_grad_end();
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    med = t[n / 2];
    free(t);
    return med;
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

    trainer tr = {cnn_model(), NULL, NULL, NULL, 0, 0, o.log_steps, isatty(2),
                  !o.amp ? CT_DTYPE_DEFAULT : !strcmp(o.amp, "bf16") ? CT_BFLOAT16 : CT_FLOAT16,
                  NULL};
    ct_grad_scaler_opts go = ct_grad_scaler_defaults();
    go.enabled = tr.amp == CT_FLOAT16;
    tr.scaler = ct_grad_scaler_new(&go);
    if (!strcmp(o.dtype, "float64")) {
        ct_module_to(tr.model, CT_FLOAT64);
        to_float64(&train.x);
        to_float64(&test.x);
    }
    if (o.save_init && ct_module_save(tr.model, o.save_init) != CT_OK) {
        exit(1);
    }
    tr.opt = make_optimizer(tr.model, o.optimizer);
    ct_tensor *fields[2] = {train.x, train.y};
    ct_dataset *ds = ct_tensor_dataset_new(fields, 2);
    ct_dataloader_opts lo = ct_dataloader_defaults();
    lo.batch_size = 64;
    lo.shuffle = true;
    tr.loader = ct_dataloader_new(ds, &lo);
    tr.batches = ct_dataloader_len(tr.loader);
    if (o.steps > 0 && o.steps < tr.batches) {
        tr.batches = o.steps;
    }
    ct_one_cycle_lr_opts so = ct_one_cycle_lr_defaults();
    so.total_steps = tr.batches * o.epochs;
    tr.sched = ct_one_cycle_lr_new(tr.opt, o.lr, &so);
    int first = o.resume ? load_checkpoint(&tr, o.resume) : 0;
    if (o.resume) {
        printf("resumed from %s after epoch %d\n", o.resume, first);
        tr.step = (int64_t)first * tr.batches;
    }

    double acc = 0;
    int last = o.stop_after > 0 && o.stop_after < o.epochs ? o.stop_after : o.epochs;
    for (int e = first; e < last; e++) {
        int64_t seen;
        double t0 = now_s(), train_loss = train_epoch(&tr, &seen), secs = now_s() - t0, test_loss;
        acc = evaluate(tr.model, tr.amp, &test, &test_loss);
        printf("epoch %d/%d  train loss %.4f  test accuracy %.1f%%  avg test loss %.4f  "
               "%.2f s (%.0f samples/s)\n", e + 1, o.epochs, train_loss, 100 * acc, test_loss,
               secs, (double)seen / secs);
        fflush(stdout);
        if (o.save) {
            save_checkpoint(&tr, e + 1, o.save);
        }
    }
    if (o.latency > 0) {
        printf("single-image latency: %.1f us (median of %d)\n",
               latency_us(tr.model, &test, o.latency), o.latency);
    }
    printf("test accuracy: %.4f\n", acc);

    ct_grad_scaler_free(tr.scaler);
    ct_lr_scheduler_free(tr.sched);
    ct_dataloader_free(tr.loader);
    ct_dataset_free(ds);
    ct_optimizer_free(tr.opt);
    ct_module_free(tr.model);
    ct_free(train.x);
    ct_free(train.y);
    ct_free(test.x);
    ct_free(test.y);
    return 0;
}
