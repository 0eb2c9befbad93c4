/* examples/ddp_fashion_mnist.c - the CNN of examples/fashion_mnist_cnn.c trained with
 * DistributedDataParallel: one process per rank under mpirun, each on its DistributedSampler
 * share of every epoch, gradients averaged by ct_ddp during the backward pass.
 *
 * Build and run (Open MPI: add --allow-run-as-root as root, --oversubscribe beyond the cores):
 *   mpicc -std=c11 -O2 -march=native -pthread -DCTORCH_ZLIB examples/ddp_fashion_mnist.c \
 *       -o ddp_fashion_mnist -lm -lz
 *   mpirun -np 2 ./ddp_fashion_mnist [--data DIR] [--epochs N] [--steps N] [--batch N]
 *                                    [--lr X] [--threads N] [--hook allreduce|fp16|bf16|noop]
 *                                    [--bucket-cap-mb X] [--synthetic N] [--no-eval]
 * --batch is the batch of each rank (64); the global batch is world size times it. SGD with
 * momentum 0.9 at --lr (0.01). --bucket-cap-mb sets ct_ddp's bucket size (25: the whole
 * network's 0.2 MB in one bucket, reduced after the backward; 0.05: the linear layer's
 * gradient is reduced while the convolutions' backward runs). --steps N ends each epoch after N batches; --synthetic N trains
 * on N random images instead of Fashion-MNIST (for timing, `make dist-bench`); --hook picks
 * the comm hook (noop: no communication, to time the backward without it); --no-eval skips
 * the test set. Each epoch rank 0 prints the mean loss, the test accuracy and where the time
 * went per step: forward, backward (the reductions overlap it), the part of the backward spent
 * waiting for the last reductions (ct_ddp_comm_wait_seconds), and the optimizer step.
 * Data: --data, else $FASHION_MNIST_DIR, else /usr/share/datasets/fashion-mnist, else the
 * subset shipped in data/fashion-mnist.
 * Expected output (2 processes, full dataset, --epochs 1; times vary):
 *   data: /usr/share/datasets/fashion-mnist (60000 train, 10000 test), 2 processes, batch 64 x 2
 *   epoch 1/1  loss 0.4710  test accuracy 86.9%  per step: forward 21.3 ms  backward 39.0 ms
 *   (waiting 1.2 ms)  step 0.4 ms  ...
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, access under -std=c11 */
#define CTORCH_IMPLEMENTATION
#define CTORCH_DIST_IMPLEMENTATION
#include "../ctorch.h"
#include "../ctorch_dist.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct options {
    const char *data, *hook;
    int epochs, threads;
    int64_t steps, batch, synthetic;
    double lr, bucket_cap_mb;
    bool eval;
} options;

static void die_on_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)user;
    fprintf(stderr, "error: %s\n", message);
    exit(1);
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np N ddp_fashion_mnist [--data DIR] [--epochs N] "
            "[--steps N] [--batch N] [--lr X] [--threads N] [--hook allreduce|fp16|bf16|noop] "
            "[--bucket-cap-mb X] [--synthetic N] [--no-eval]\n");
    exit(2);
}

static options parse_args(int argc, char **argv)
{
    options o = {NULL, "allreduce", 1, 0, 0, 64, 0, 0.01, 25, true};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--no-eval")) {
            o.eval = false;
            continue;
        }
        if (!v) {
            usage();
        }
        i++;
        if (!strcmp(argv[i - 1], "--data")) {
            o.data = v;
        } else if (!strcmp(argv[i - 1], "--hook")) {
            o.hook = v;
        } else if (!strcmp(argv[i - 1], "--epochs")) {
            o.epochs = atoi(v);
        } else if (!strcmp(argv[i - 1], "--threads")) {
            o.threads = atoi(v);
        } else if (!strcmp(argv[i - 1], "--steps")) {
            o.steps = atoll(v);
        } else if (!strcmp(argv[i - 1], "--batch")) {
            o.batch = atoll(v);
        } else if (!strcmp(argv[i - 1], "--synthetic")) {
            o.synthetic = atoll(v);
        } else if (!strcmp(argv[i - 1], "--lr")) {
            o.lr = atof(v);
        } else if (!strcmp(argv[i - 1], "--bucket-cap-mb")) {
            o.bucket_cap_mb = atof(v);
        } else {
            usage();
        }
    }
    if (o.epochs < 1 || o.batch < 1) {
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

/* images (N, 1, 28, 28) float32 in [0, 1]; labels (N) int64 */
typedef struct split {
    ct_tensor *x, *y;
} split;

/* DIR/<prefix>-{images-idx3,labels-idx1}-ubyte[.gz] into s; false when missing. */
static bool load_split(const char *dir, const char *prefix, split *s)
{
    ct_tensor *t[2] = {NULL, NULL};
    const char *kind[2] = {"images-idx3", "labels-idx1"};
    for (int f = 0; f < 2; f++) {
        for (int gz = 0; gz < 2 && !t[f]; gz++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s-%s-ubyte%s", dir, prefix, kind[f], gz ? ".gz" : "");
            t[f] = access(path, R_OK) == 0 ? ct_idx_load(path) : NULL;
        }
    }
    if (t[0] && t[1]) {
        ct_scope_begin();
        s->x = ct_keep(ct_unsqueeze(ct_div_scalar(ct_to_dtype(t[0], CT_FLOAT32), 255.0), 1));
        s->y = ct_keep(ct_to_dtype(t[1], CT_INT64));
        ct_scope_end();
    }
    ct_free(t[0]);
    ct_free(t[1]);
    return t[0] && t[1];
}

/* Fashion-MNIST (--data, $FASHION_MNIST_DIR, the system's, the shipped subset), or n random
   images with random labels (the same on every rank: drawn from seed 0). */
static const char *load_data(const options *o, split *train, split *test)
{
    if (o->synthetic > 0) {
        int64_t sx[4] = {o->synthetic, 1, 28, 28};
        ct_manual_seed(0);
        train->x = ct_rand(sx, 4, CT_FLOAT32, NULL);
        train->y = ct_randint(0, 10, sx, 1, CT_INT64, NULL);
        test->x = test->y = NULL;
        return "synthetic";
    }
    const char *dirs[5] = {o->data, getenv("FASHION_MNIST_DIR"),
                           "/usr/share/datasets/fashion-mnist", "data/fashion-mnist",
                           "../data/fashion-mnist"};
    for (int k = 0; k < 5; k++) {
        if (dirs[k] && load_split(dirs[k], "train", train) && load_split(dirs[k], "t10k", test)) {
            return dirs[k];
        }
    }
    fprintf(stderr, "error: no Fashion-MNIST data found (try --data DIR)\n");
    exit(1);
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

static ct_ddp_comm_hook hook_named(const char *name)
{
    ct_ddp_comm_hook hooks[4] = {ct_ddp_allreduce_hook, ct_ddp_fp16_compress_hook,
                                 ct_ddp_bf16_compress_hook, ct_ddp_noop_hook};
    const char *names[4] = {"allreduce", "fp16", "bf16", "noop"};
    for (int k = 0; k < 4; k++) {
        if (!strcmp(name, names[k])) {
            return hooks[k];
        }
    }
    usage();
    return NULL;
}

/* Seconds spent in each part of the steps of an epoch. */
typedef struct timing {
    double forward, backward, step;
    int64_t steps;
} timing;

/* One epoch of the rank's share; returns the mean loss over all ranks. */
static double train_epoch(ct_ddp *ddp, ct_optimizer *opt, ct_dataloader *loader, int64_t steps,
                          timing *t)
{
    ct_tensor *batch[2];
    double total = 0;
    int64_t b = 0;
    ct_module_train(ct_ddp_module(ddp), true);
    for (; steps <= 0 || b < steps; b++) {
        ct_scope_begin();
        if (!ct_dataloader_next(loader, batch)) {
            ct_scope_end();
            break;
        }
        double t0 = now_s();
        ct_tensor *loss = ct_cross_entropy(ct_ddp_forward(ddp, batch[0]), batch[1], NULL);
        double t1 = now_s();
        ct_optimizer_zero_grad(opt, true);
        ct_backward(loss, NULL, false);
        double t2 = now_s();
        ct_optimizer_step(opt);
        double t3 = now_s();
        t->forward += t1 - t0;
        t->backward += t2 - t1;
        t->step += t3 - t2;
        total += ct_item(loss);
        ct_scope_end();
    }
    t->steps += b;
    ct_scope_begin();
    ct_tensor *sum = ct_scalar_tensor(total / (double)(b ? b : 1), CT_FLOAT64);
    ct_dist_all_reduce(sum, CT_REDUCE_AVG, NULL, NULL);
    double mean = ct_item(sum);
    ct_scope_end();
    return mean;
}

/* Test accuracy of rank 0's model, batches of 1000, eval mode, no autograd. */
static double evaluate(ct_module *model, const split *test)
{
    int64_t n = ct_size(test->x, 0), correct = 0;
    ct_module_eval(model);
    ct_no_grad_begin();
    for (int64_t i = 0; i < n; i += 1000) {
        ct_scope_begin();
        int64_t len = n - i < 1000 ? n - i : 1000;
        ct_tensor *logits = ct_module_forward(model, ct_narrow(test->x, 0, i, len));
        ct_tensor *hit = ct_eq(ct_argmax_dim(logits, 1, false), ct_narrow(test->y, 0, i, len));
        correct += (int64_t)ct_item(ct_sum(hit));
        ct_scope_end();
    }
    ct_no_grad_end();
    return (double)correct / (double)n;
}

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);
    ct_set_error_handler(die_on_error, NULL);
    ct_dist_init_process_group("mpi", NULL);
    int rank = ct_dist_get_rank(NULL), world = ct_dist_get_world_size(NULL);
    if (o.threads > 0) {
        ct_set_num_threads(o.threads);
    }
    split train, test;
    const char *dir = load_data(&o, &train, &test);
    ct_manual_seed(1 + (uint64_t)rank); /* ranks differ: ct_ddp_new makes them rank 0's */
    ct_module *model = cnn_model();
    ct_ddp_opts dopts = ct_ddp_defaults();
    dopts.bucket_cap_mb = o.bucket_cap_mb;
    ct_ddp *ddp = ct_ddp_new(model, NULL, &dopts);
    ct_ddp_register_comm_hook(ddp, NULL, hook_named(o.hook));
    ct_tensor *params[16];
    int64_t n_params = ct_module_parameters(model, params, 16);
    ct_sgd_opts so = ct_sgd_defaults();
    so.lr = o.lr;
    so.momentum = 0.9;
    ct_optimizer *opt = ct_sgd_new(params, n_params, &so);

    ct_tensor *fields[2] = {train.x, train.y};
    ct_dataset *ds = ct_tensor_dataset_new(fields, 2);
    ct_distributed_sampler_opts sa = ct_distributed_sampler_defaults();
    sa.num_replicas = world;
    sa.rank = rank;
    ct_sampler *sampler = ct_distributed_sampler_new(ds, &sa);
    ct_dataloader_opts lo = ct_dataloader_defaults();
    lo.batch_size = o.batch;
    lo.sampler = sampler;
    ct_dataloader *loader = ct_dataloader_new(ds, &lo);
    if (rank == 0) {
        printf("data: %s (%lld train), %d processes, batch %lld x %d, hook %s\n", dir,
               (long long)ct_size(train.x, 0), world, (long long)o.batch, world, o.hook);
    }
    for (int e = 0; e < o.epochs; e++) {
        ct_distributed_sampler_set_epoch(sampler, e);
        ct_dataloader_reset(loader);
        timing t = {0, 0, 0, 0};
        double wait0 = ct_ddp_comm_wait_seconds(ddp), t0 = now_s();
        double loss = train_epoch(ddp, opt, loader, o.steps, &t);
        double secs = now_s() - t0, wait = ct_ddp_comm_wait_seconds(ddp) - wait0;
        double acc = o.eval && test.x && rank == 0 ? evaluate(model, &test) : -1;
        if (rank == 0) {
            double k = 1e3 / (double)(t.steps ? t.steps : 1);
            printf("epoch %d/%d  loss %.4f  ", e + 1, o.epochs, loss);
            if (acc >= 0) {
                printf("test accuracy %.1f%%  ", 100 * acc);
            }
            printf("%.2f s, %lld steps (%.0f samples/s); per step: forward %.1f ms  backward "
                   "%.1f ms (waiting for communication %.2f ms)  optimizer %.1f ms\n", secs,
                   (long long)t.steps, (double)(t.steps * o.batch * world) / secs,
                   t.forward * k, t.backward * k, wait * k, t.step * k);
            fflush(stdout);
        }
    }
    ct_dataloader_free(loader);
    ct_sampler_free(sampler);
    ct_dataset_free(ds);
    ct_optimizer_free(opt);
    ct_ddp_free(ddp);
    ct_module_free(model);
    ct_free(train.x);
    ct_free(train.y);
    ct_free(test.x);
    ct_free(test.y);
    ct_dist_destroy_process_group(NULL);
    return 0;
}
