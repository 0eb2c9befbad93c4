/* tests/dist/test_ddp.c - ct_ddp's tests, run by `make dist-test` under mpirun at world sizes
 * 1, 2 and 3: DDP training on each rank's shard gives the parameters of one process training
 * on the concatenated batch (1e-6 relative, float64, 20 steps) for SGD with momentum and Adam,
 * with and without no_sync accumulation, one bucket or several, gradients as bucket views; a
 * model with a parameter no rank uses (find_unused_parameters); rank 0's parameters and
 * buffers broadcast at construction; comm hooks (bucket order, is_last, fp16/bf16 compression,
 * noop); errors. Then the stores (hash, file, TCP: set/get/add/wait across the ranks, timeouts,
 * errors) and ct_dist_init_env. Rank 0 prints "N passed, N failed"; the exit status is 1 on a
 * failure.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#define CTORCH_IMPLEMENTATION
#define CTORCH_DIST_IMPLEMENTATION
#include "../../ctorch.h"
#include "../../ctorch_dist.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "dist_test.h"

enum { IN = 6, HID = 10, OUT = 3, B = 4, STEPS = 20 };

/* fc2(tanh(fc1(x))); "unused" takes part in no forward. */
static ct_tensor *net_forward(ct_module *m, const ct_tensor *x)
{
    ct_tensor *h = ct_tanh(ct_linear_forward(ct_module_get_submodule(m, "fc1"), x));
    return ct_linear_forward(ct_module_get_submodule(m, "fc2"), h);
}

/* The test network in float64 from seed (a buffer "scale" holds seed). */
static ct_module *net_new(uint64_t seed)
{
    ct_manual_seed(seed);
    ct_module *m = ct_module_new("Net", net_forward, NULL, NULL);
    ct_module_register_module(m, "fc1", ct_linear_new(IN, HID, true));
    ct_module_register_module(m, "unused", ct_linear_new(2, 2, true));
    ct_module_register_module(m, "fc2", ct_linear_new(HID, OUT, true));
    ct_scope_begin();
    ct_module_register_buffer(m, "scale", ct_full(NULL, 0, (double)seed, CT_FLOAT64));
    ct_scope_end();
    return ct_module_to(m, CT_FLOAT64);
}

/* Step k's batch of all ranks: inputs (W*B, IN) and targets (W*B, OUT), the same everywhere. */
static void batch(int k, ct_tensor **x, ct_tensor **y)
{
    ct_manual_seed(1000 + (uint64_t)k);
    int64_t sx[2] = {W * B, IN}, sy[2] = {W * B, OUT};
    *x = ct_randn(sx, 2, CT_FLOAT64, NULL);
    *y = ct_randn(sy, 2, CT_FLOAT64, NULL);
}

static ct_status loss_backward(ct_tensor *out, const ct_tensor *y)
{
    return ct_backward(ct_mse_loss(out, y, CT_REDUCTION_MEAN), NULL, false);
}

static ct_optimizer *optimizer(ct_module *m, bool adam)
{
    ct_tensor *all[16], *p[16];
    int64_t n = 0, n_all = ct_module_parameters(m, all, 16);
    for (int64_t i = 0; i < n_all; i++) {
        if (ct_requires_grad(all[i])) {
            p[n++] = all[i];
        }
    }
    if (adam) {
        ct_adam_opts o = ct_adam_defaults();
        o.lr = 0.01;
        return ct_adam_new(p, n, &o);
    }
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = 0.1;
    o.momentum = 0.9;
    return ct_sgd_new(p, n, &o);
}

/* Records the buckets a comm hook saw, then all-reduces as the default. */
typedef struct hook_log {
    int calls, last_index, n_last;
    bool in_order;
} hook_log;

static ct_work *counting_hook(void *state, ct_grad_bucket *bucket)
{
    hook_log *log = (hook_log *)state;
    int i = ct_grad_bucket_index(bucket);
    log->in_order = log->in_order && i == log->last_index + 1;
    log->last_index = ct_grad_bucket_is_last(bucket) ? -1 : i;
    log->n_last += ct_grad_bucket_is_last(bucket);
    log->calls++;
    CHECK(ct_tensor_dtype(ct_grad_bucket_buffer(bucket)) == CT_FLOAT64);
    return ct_ddp_allreduce_hook(NULL, bucket);
}

/* The largest relative difference between the two modules' parameters. */
static double max_rel_diff(const ct_module *a, const ct_module *b)
{
    ct_tensor *pa[16], *pb[16];
    int64_t n = ct_module_parameters(a, pa, 16);
    ct_module_parameters(b, pb, 16);
    double worst = 0;
    ct_scope_begin();
    for (int64_t i = 0; i < n; i++) {
        double d = ct_item(ct_max(ct_abs(ct_sub(pa[i], pb[i]))));
        double s = ct_item(ct_max(ct_abs(pb[i])));
        worst = fmax(worst, d / fmax(s, 1e-30));
    }
    ct_scope_end();
    return worst;
}

/* Trains a DDP copy (rank-seeded: the broadcast makes it rank 0's) on this rank's shards and
   a reference on the whole batches for STEPS steps; micro: batches per step (the first
   micro - 1 under no_sync). Returns the largest relative parameter difference. */
static double train(const ct_ddp_opts *opts, bool adam, int micro, hook_log *log)
{
    ct_module *ref = net_new(7), *m = net_new(7 + (uint64_t)R * 13);
    if (!opts->find_unused_parameters) { /* every parameter DDP sees must be used */
        ct_module_requires_grad_(ct_module_get_submodule(m, "unused"), false);
        ct_module_requires_grad_(ct_module_get_submodule(ref, "unused"), false);
    }
    ct_ddp *ddp = ct_ddp_new(m, NULL, opts);
    CHECK(ddp != NULL);
    if (!ddp) {
        ct_module_free(ref);
        ct_module_free(m);
        return INFINITY;
    }
    if (log) {
        CHECK(ct_ddp_register_comm_hook(ddp, log, counting_hook) == CT_OK);
    }
    ct_optimizer *o_ref = optimizer(ref, adam), *o_ddp = optimizer(m, adam);
    for (int step = 0; step < STEPS && !ct_error(); step++) {
        ct_scope_begin();
        for (int k = 0; k < micro; k++) {
            ct_tensor *x, *y;
            batch(step * micro + k, &x, &y);
            CHECK(loss_backward(ct_module_forward(ref, x), y) == CT_OK);
            if (k < micro - 1) {
                ct_ddp_no_sync_begin(ddp);
            }
            ct_tensor *xs = ct_narrow(x, 0, R * B, B), *ys = ct_narrow(y, 0, R * B, B);
            CHECK(loss_backward(ct_ddp_forward(ddp, xs), ys) == CT_OK);
            if (k < micro - 1) {
                ct_ddp_no_sync_end(ddp);
            }
        }
        CHECK(ct_optimizer_step(o_ref) == CT_OK && ct_optimizer_step(o_ddp) == CT_OK);
        ct_module_zero_grad(ref, true);
        ct_module_zero_grad(m, !opts->gradient_as_bucket_view); /* views: zeroed in place */
        ct_scope_end();
    }
    /* no rank used "unused": its .grad was never set */
    CHECK(ct_grad(ct_module_get_parameter(m, "unused.weight")) == NULL);
    double d = max_rel_diff(m, ref);
    ct_optimizer_free(o_ref);
    ct_optimizer_free(o_ddp);
    ct_ddp_free(ddp);
    ct_module_free(ref);
    ct_module_free(m);
    return d;
}

static ct_ddp_opts unused_opts(double cap_mb, bool view)
{
    ct_ddp_opts o = ct_ddp_defaults();
    o.find_unused_parameters = true;
    o.bucket_cap_mb = cap_mb;
    o.gradient_as_bucket_view = view;
    return o;
}

static void test_sgd(void)
{
    ct_ddp_opts o = unused_opts(25, false);
    CHECK(train(&o, false, 1, NULL) <= 1e-6);
    o = ct_ddp_defaults(); /* the unused layer frozen: every parameter of DDP's is used */
    CHECK(train(&o, false, 1, NULL) <= 1e-6);
}

static void test_adam(void)
{
    ct_ddp_opts o = unused_opts(25, false);
    CHECK(train(&o, true, 1, NULL) <= 1e-6);
}

static void test_no_sync_sgd(void)
{
    ct_ddp_opts o = unused_opts(25, false);
    CHECK(train(&o, false, 2, NULL) <= 1e-6);
}

static void test_no_sync_adam(void)
{
    ct_ddp_opts o = unused_opts(25, false);
    CHECK(train(&o, true, 3, NULL) <= 1e-6);
}

/* 100-byte buckets over the parameters in reverse: fc2.bias (24 bytes) and fc2.weight (240);
   unused.bias (16), unused.weight (32) and fc1.bias (80); fc1.weight (480). Reduced in bucket
   order (the second and third at the end of the backward: the unused parameter). */
static void test_buckets(void)
{
    ct_ddp_opts o = unused_opts(100.0 / 1048576.0, false);
    hook_log log = {0, -1, 0, true};
    CHECK(train(&o, true, 2, &log) <= 1e-6);
    CHECK(log.calls == 3 * STEPS && log.n_last == STEPS && log.in_order);
}

static void test_bucket_view(void)
{
    ct_ddp_opts o = unused_opts(100.0 / 1048576.0, true);
    CHECK(train(&o, false, 2, NULL) <= 1e-6);
}

/* construction: every rank gets rank 0's parameters and buffers */
static void test_broadcast(void)
{
    ct_module *m = net_new(7 + (uint64_t)R * 13), *ref = net_new(7);
    ct_ddp *ddp = ct_ddp_new(m, NULL, NULL);
    CHECK(ddp && ct_ddp_module(ddp) == m && max_rel_diff(m, ref) == 0);
    ct_tensor *s = NULL;
    ct_module_buffers(m, &s, 1);
    CHECK(s && ct_item(s) == 7.0);
    ct_ddp_free(ddp);
    ct_module_free(m);
    ct_module_free(ref);
}

/* One synced backward with hook: every rank's gradient against the reference's, within
   rtol of its largest element (the compressions' rounding of terms that may cancel). */
static void one_step_hook(ct_ddp_comm_hook hook, double rtol)
{
    ct_module *ref = net_new(7), *m = net_new(7);
    ct_ddp_opts o = unused_opts(25, false);
    ct_ddp *ddp = ct_ddp_new(m, NULL, &o);
    CHECK(ct_ddp_register_comm_hook(ddp, NULL, hook) == CT_OK);
    ct_scope_begin();
    ct_tensor *x, *y;
    batch(0, &x, &y);
    CHECK(loss_backward(ct_module_forward(ref, x), y) == CT_OK);
    ct_tensor *xs = ct_narrow(x, 0, R * B, B), *ys = ct_narrow(y, 0, R * B, B);
    CHECK(loss_backward(ct_ddp_forward(ddp, xs), ys) == CT_OK);
    const char *names[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    for (int i = 0; i < 4; i++) {
        ct_tensor *g = ct_grad(ct_module_get_parameter(m, names[i]));
        ct_tensor *want = ct_grad(ct_module_get_parameter(ref, names[i]));
        double atol = want ? rtol * ct_item(ct_max(ct_abs(want))) : 0;
        CHECK(g && want && ct_allclose(g, want, 0, atol, false));
    }
    ct_scope_end();
    ct_ddp_free(ddp);
    ct_module_free(m);
    ct_module_free(ref);
}

static void test_compress_hooks(void)
{
    one_step_hook(ct_ddp_allreduce_hook, 1e-12);
    one_step_hook(ct_ddp_fp16_compress_hook, 2e-3);
    one_step_hook(ct_ddp_bf16_compress_hook, 1.6e-2);
    if (W == 1) { /* the noop hook leaves the local gradient: the reference's at world 1 */
        one_step_hook(ct_ddp_noop_hook, 1e-12);
    }
}

/* a parameter no rank used, without find_unused_parameters: the backward fails */
static void test_unused_error(void)
{
    ct_module *m = net_new(7);
    ct_ddp *ddp = ct_ddp_new(m, NULL, NULL);
    ct_scope_begin();
    ct_tensor *x, *y;
    batch(0, &x, &y);
    CHECK(loss_backward(ct_ddp_forward(ddp, ct_narrow(x, 0, R * B, B)),
                        ct_narrow(y, 0, R * B, B)) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "Expected to have finished reduction in the prior iteration");
    CHECK(ct_ddp_forward(ddp, x) == NULL);
    CHECK_ERROR(CT_ERR_STATE, "Expected to have finished reduction in the prior iteration");
    ct_scope_end();
    ct_ddp_free(ddp);
    ct_module_free(m);
}

static void test_errors(void)
{
    ct_module *m = net_new(7), *empty = ct_module_new("Empty", net_forward, NULL, NULL);
    CHECK(ct_ddp_new(NULL, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "module");
    ct_ddp_opts o = ct_ddp_defaults();
    o.bucket_cap_mb = 0;
    CHECK(ct_ddp_new(m, NULL, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "bucket_cap_mb");
    CHECK(ct_ddp_new(empty, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "DistributedDataParallel is not needed");
    ct_ddp *ddp = ct_ddp_new(m, NULL, NULL);
    CHECK(ct_ddp_register_comm_hook(ddp, NULL, NULL) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_ddp_register_comm_hook(ddp, NULL, ct_ddp_allreduce_hook) == CT_OK);
    CHECK(ct_ddp_register_comm_hook(ddp, NULL, ct_ddp_allreduce_hook) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "can only be called once");
    CHECK(ct_ddp_forward(NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ddp");
    CHECK(ct_grad_bucket_buffer(NULL) == NULL && ct_grad_bucket_index(NULL) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "bucket");
    ct_ddp_free(ddp);
    ct_ddp_free(NULL);
    ct_module_free(m);
    ct_module_free(empty);
}

/* ---- stores --------------------------------------------------------------------------- */
/* What every rank does with a store shared by all: a counter, one key per rank, waits. */
static void store_exchange(ct_store *s)
{
    char key[32];
    snprintf(key, sizeof key, "rank%d", R);
    int64_t mine = 100 + R;
    CHECK(ct_store_set(s, key, &mine, sizeof mine) == CT_OK);
    CHECK(ct_store_add(s, "count", 1) >= 1);
    for (int r = 0; r < W; r++) {
        int64_t v = 0;
        snprintf(key, sizeof key, "rank%d", r);
        const char *keys[1] = {key};
        CHECK(ct_store_wait(s, keys, 1, -1) == CT_OK);
        CHECK(ct_store_get(s, key, &v, sizeof v) == (int64_t)sizeof v && v == 100 + r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(ct_store_add(s, "count", 0) == W);
    char text[8] = {0};
    CHECK(ct_store_get(s, "count", text, sizeof text) == 1 && text[0] == '0' + W);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody frees (a master: stops serving) before all read */
}

/* One process's view of a store: values, a counter, a truncated get, timeouts, errors. */
static void store_local(ct_store *s)
{
    CHECK(ct_store_set(s, "a", "hello", 5) == CT_OK);
    char buf[8] = {0};
    CHECK(ct_store_get(s, "a", buf, 3) == 5 && memcmp(buf, "hel", 3) == 0 && buf[3] == 0);
    CHECK(ct_store_set(s, "a", "", 0) == CT_OK && ct_store_get(s, "a", NULL, 0) == 0);
    CHECK(ct_store_add(s, "n", 5) == 5 && ct_store_add(s, "n", -7) == -2);
    CHECK(ct_store_add(s, "a", 1) == INT64_MIN);
    CHECK_ERROR(CT_ERR_VALUE, "is not an integer");
    const char *keys[2] = {"a", "missing"};
    CHECK(ct_store_wait(s, keys, 1, 0) == CT_OK);
    CHECK(ct_store_wait(s, keys, 2, 20) == CT_ERR_DIST);
    CHECK_ERROR(CT_ERR_DIST, "Wait timeout after");
    CHECK(ct_store_set_timeout(s, 10) == CT_OK);
    CHECK(ct_store_get(s, "missing", buf, sizeof buf) == -1);
    CHECK_ERROR(CT_ERR_DIST, "Wait timeout after 10 ms for key(s): [missing]");
    CHECK(ct_store_set_timeout(s, 0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "timeout must be positive");
    CHECK(ct_store_set(s, NULL, "x", 1) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "key");
}

static void test_hash_store(void)
{
    ct_store *s = ct_hash_store_new();
    store_local(s);
    CHECK(ct_tcp_store_port(s) == -1);
    ct_store_free(s);
    ct_store_free(NULL);
}

static void test_file_store(void)
{
    char path[64];
    unsigned stamp = (unsigned)time(NULL) ^ (unsigned)clock();
    MPI_Bcast(&stamp, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "/tmp/ct_file_store_%u", stamp);
    ct_store *s = ct_file_store_new(path, W);
    CHECK(s != NULL);
    store_exchange(s);
    if (R == 0) {
        char local[80];
        snprintf(local, sizeof local, "%s_local", path);
        ct_store *l = ct_file_store_new(local, 1);
        store_local(l);
        ct_store_free(l);
        ct_store *again = ct_file_store_new(local, 1); /* the file keeps its keys */
        int64_t n = again ? ct_store_add(again, "n", 0) : 0;
        CHECK(n == -2);
        ct_store_free(again);
        remove(local);
        remove(path);
    }
    ct_store_free(s);
    CHECK(ct_file_store_new("/nonexistent-dir/x", 1) == NULL);
    CHECK_ERROR(CT_ERR_IO, "cannot open");
}

static void test_tcp_store(void)
{
    ct_store *master = R == 0 ? ct_tcp_store_new("127.0.0.1", 0, W, true, 20000, false) : NULL;
    int port = master ? ct_tcp_store_port(master) : 0;
    MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(port > 0);
    ct_store *s = master ? master : ct_tcp_store_new("localhost", port, W, false, 20000, false);
    CHECK(s != NULL && ct_tcp_store_port(s) == port);
    store_exchange(s);
    if (R == 0) {
        ct_store *c = ct_tcp_store_new("localhost", port, 1, false, 2000, false);
        store_local(c); /* through a client */
        ct_store_free(c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (s != master) {
        ct_store_free(s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ct_store_free(master);
    MPI_Barrier(MPI_COMM_WORLD);
    /* nobody serves that port any more */
    CHECK(ct_tcp_store_new("127.0.0.1", port, 1, false, 50, false) == NULL);
    CHECK_ERROR(CT_ERR_DIST, "has timed out after 50 ms");
    CHECK(ct_tcp_store_new("127.0.0.1", 70000, 1, false, 50, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid port 70000");
    CHECK(ct_tcp_store_new("no such host.invalid", 1, 1, false, 50, false) == NULL);
    CHECK_ERROR(CT_ERR_DIST, "cannot resolve");
}

/* the last test: the default group again, from torchrun's variables */
static void test_init_env(void)
{
    CHECK(ct_dist_destroy_process_group(NULL) == CT_OK);
    unsetenv("RANK");
    CHECK(ct_dist_init_env("mpi", 20000) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Error initializing torch.distributed using env:// rendezvous: "
                              "environment variable RANK expected, but not set");
    ct_store *probe = R == 0 ? ct_tcp_store_new("127.0.0.1", 0, 1, true, 1000, false) : NULL;
    int port = probe ? ct_tcp_store_port(probe) : 0;
    ct_store_free(probe); /* a port that was free a moment ago */
    MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char v[16];
    snprintf(v, sizeof v, "%d", R);
    setenv("RANK", v, 1);
    snprintf(v, sizeof v, "%d", W);
    setenv("WORLD_SIZE", v, 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    snprintf(v, sizeof v, "%d", port);
    setenv("MASTER_PORT", v, 1);
    CHECK(ct_dist_init_env("mpi", 20000) == CT_OK);
    CHECK(ct_dist_get_rank(NULL) == R && ct_dist_get_world_size(NULL) == W);
    int64_t n = 4;
    ct_scope_begin();
    ct_tensor *t = ct_ones(&n, 1, CT_FLOAT32);
    CHECK(ct_dist_all_reduce(t, CT_REDUCE_SUM, NULL, NULL) == CT_OK && ct_item(ct_sum(t)) == 4 * W);
    ct_scope_end();
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
}

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

static const test_case TESTS[] = {
    {"sgd", test_sgd},
    {"adam", test_adam},
    {"no_sync_sgd", test_no_sync_sgd},
    {"no_sync_adam", test_no_sync_adam},
    {"buckets", test_buckets},
    {"bucket_view", test_bucket_view},
    {"broadcast", test_broadcast},
    {"compress_hooks", test_compress_hooks},
    {"unused_error", test_unused_error},
    {"errors", test_errors},
    {"hash_store", test_hash_store},
    {"file_store", test_file_store},
    {"tcp_store", test_tcp_store},
    {"init_env", test_init_env},
};

/* Runs one test on every rank; it fails on any rank's failed check, pending error or leak. */
static bool run(const test_case *t)
{
    size_t before = ct_memory_allocated();
    checks_failed = 0;
    t->fn();
    if (ct_error()) {
        fprintf(stderr, "  rank %d: error left pending: %s\n", R, ct_error());
        ct_error_clear();
        checks_failed++;
    }
    if (ct_memory_allocated() != before) {
        fprintf(stderr, "  rank %d: %zu bytes leaked\n", R, ct_memory_allocated() - before);
        checks_failed++;
    }
    int failed = checks_failed > 0, any = failed;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && R == 0) {
        fprintf(stderr, "FAIL ddp %s (world size %d)\n", t->name, W);
    }
    return !any;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &W);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    ct_set_error_handler(silent, NULL);
    if (ct_dist_init_process_group("mpi", NULL) != CT_OK) {
        fprintf(stderr, "rank %d: %s\n", R, ct_error());
        return 1;
    }
    int passed = 0, failed = 0;
    for (size_t k = 0; k < sizeof TESTS / sizeof TESTS[0]; k++) {
        if (argc < 2 || strstr(TESTS[k].name, argv[1])) {
            run(&TESTS[k]) ? passed++ : failed++;
        }
    }
    ct_dist_destroy_process_group(NULL);
    if (R == 0) {
        printf("ddp, world size %d: %d passed, %d failed\n", W, passed, failed);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
