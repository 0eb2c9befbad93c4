/* tests/test_parallel.c - threading: intra-op count precedence, bit-identical results at
 * 1-4 intra-op threads (reductions, softmax, cross-entropy, GEMM, a training step), ops from
 * several user threads at once, inter-op futures, the interop count rule, the
 * oversubscription rule, flush-to-zero and parallel_info.
 *
 * Tests that fork end with ct_parallel_shutdown(), which frees the pool (the runner's leak
 * check counts ctorch's bytes) and lets the next test set the interop count again.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include "test.h"

#include <pthread.h>
#include <stdlib.h>

/* Intra-op threads exist: ctorch's pool needs pthreads and GCC/clang atomics. */
#if !defined(CTORCH_NO_THREADS) && (defined(__unix__) || defined(__APPLE__)) &&             \
    (defined(__GNUC__) || defined(__clang__))
#define TP_POOL 1
#endif

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#define TP_X86 1
#endif

/* ---- environment helpers ------------------------------------------------------------ */
typedef struct {
    char *omp, *ct; /* saved copies, or NULL when unset */
} tp_env;

static char *tp_dup(const char *s)
{
    if (!s) {
        return NULL;
    }
    char *d = (char *)malloc(strlen(s) + 1);
    strcpy(d, s);
    return d;
}

static void tp_env_save(tp_env *e)
{
    e->omp = tp_dup(getenv("OMP_NUM_THREADS"));
    e->ct = tp_dup(getenv("CTORCH_NUM_THREADS"));
}

static void tp_env_set(const char *name, const char *v)
{
    if (v) {
        setenv(name, v, 1);
    } else {
        unsetenv(name);
    }
}

static void tp_env_restore(tp_env *e)
{
    tp_env_set("OMP_NUM_THREADS", e->omp);
    tp_env_set("CTORCH_NUM_THREADS", e->ct);
    free(e->omp);
    free(e->ct);
    ct_reset_num_threads();
}

static void test_num_threads_precedence(void)
{
    tp_env env;
    tp_env_save(&env);
#ifdef TP_POOL
    tp_env_set("OMP_NUM_THREADS", NULL);
    tp_env_set("CTORCH_NUM_THREADS", NULL);
    ct_reset_num_threads();
    int cores = ct_get_num_threads();
    CHECK(cores >= 1);
    CHECK(ct_get_num_interop_threads() >= 1);

    tp_env_set("OMP_NUM_THREADS", "3");
    CHECK(ct_get_num_threads() == cores); /* the environment is read once */
    ct_reset_num_threads();
    CHECK(ct_get_num_threads() == 3); /* OMP_NUM_THREADS over the core count */

    tp_env_set("CTORCH_NUM_THREADS", "5");
    ct_reset_num_threads();
    CHECK(ct_get_num_threads() == 5); /* CTORCH_NUM_THREADS over OMP_NUM_THREADS */

    CHECK(ct_set_num_threads(7) == CT_OK);
    CHECK(ct_get_num_threads() == 7); /* explicit over both */
    tp_env_set("CTORCH_NUM_THREADS", "6");
    CHECK(ct_get_num_threads() == 7);

    tp_env_set("CTORCH_NUM_THREADS", "abc"); /* not a positive integer: ignored */
    ct_reset_num_threads();
    CHECK(ct_get_num_threads() == 3);
    tp_env_set("OMP_NUM_THREADS", "0");
    ct_reset_num_threads();
    CHECK(ct_get_num_threads() == cores);
#else
    CHECK(ct_set_num_threads(4) == CT_OK);
    CHECK(ct_get_num_threads() == 1); /* no pthreads, or CTORCH_NO_THREADS: always 1 */
#endif
    CHECK(ct_set_num_threads(0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "ct_set_num_threads: Expected positive number of threads, got 0");
    CHECK(ct_set_num_threads(-2) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "got -2");
    tp_env_restore(&env);
}

/* Results do not depend on the thread count (elementwise and the float64 sum of integers). */
static void test_ops_same_result_any_thread_count(void)
{
    ct_scope_begin();
    ct_tensor *x = ct_arange(0, 1 << 20, 1, CT_FLOAT64);
    CHECK(ct_set_num_threads(1) == CT_OK);
    double s1 = ct_item(ct_sum(ct_mul(x, x)));
    CHECK(ct_set_num_threads(4) == CT_OK);
    double s4 = ct_item(ct_sum(ct_mul(x, x)));
    CHECK(s1 == s4);
    ct_reset_num_threads();
    ct_scope_end();
}

/* ---- bit-identical results at 1, 2, 3 and 4 threads ---------------------------------- */
/* Appends t's bytes (contiguous) to *buf of *len bytes. */
static void tp_append(unsigned char **buf, size_t *len, const ct_tensor *t)
{
    ct_tensor *c = ct_contiguous(t);
    CHECK(c != NULL);
    if (!c) {
        return;
    }
    size_t n = ct_nbytes(c);
    *buf = (unsigned char *)realloc(*buf, *len + n);
    memcpy(*buf + *len, ct_data_ptr(c), n);
    *len += n;
}

/* Runs work at 1, 2, 3 and 4 intra-op threads (each run appends its results' bytes) and
   checks that every run gives the bytes of the 1-thread run. */
static void tp_same_bytes(const char *what, void (*work)(unsigned char **buf, size_t *len))
{
    unsigned char *first = NULL;
    size_t first_len = 0;
    for (int nt = 1; nt <= 4; nt++) {
        unsigned char *buf = NULL;
        size_t len = 0;
        CHECK(ct_set_num_threads(nt) == CT_OK);
        ct_scope_begin();
        work(&buf, &len);
        ct_scope_end();
        CHECK(ct_error() == NULL);
        if (nt == 1) {
            first = buf;
            first_len = len;
            CHECK(len > 0);
            continue;
        }
        CHECK_MSG(len == first_len && memcmp(buf, first, len) == 0,
                  "%s: %d threads differ from 1 thread", what, nt);
        free(buf);
    }
    free(first);
    ct_reset_num_threads();
}

/* Inputs from a fixed seed: standard normal float32 of the given shape. */
static ct_tensor *tp_randn(int64_t rows, int64_t cols, uint64_t seed)
{
    ct_manual_seed(seed);
    int64_t s[2] = {rows, cols};
    return ct_randn(s, 2, CT_FLOAT32, NULL);
}

/* 3 * 65536 elements: more than two grains of 32768, whatever the dim reduced. */
static void tp_work_reductions(unsigned char **buf, size_t *len)
{
    ct_tensor *x = tp_randn(384, 512, 1), *big = tp_randn(1, 1 << 20, 2);
    int64_t d01[2] = {0, 1}, s[2] = {2048, 512};
    ct_tensor *r[] = {ct_sum(x), ct_mean(x), ct_sum_dim(x, 0, false), ct_sum_dim(x, 1, true),
                      ct_mean_dim(x, 0, false), ct_mean_dim(x, 1, false),
                      ct_sum_dims(x, d01, 2, false), ct_sum(big), ct_mean(big),
                      ct_sum_dim(ct_reshape(big, s, 2), 0, false), ct_max(x)};
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        tp_append(buf, len, r[i]);
    }
}

static void tp_work_softmax(unsigned char **buf, size_t *len)
{
    ct_tensor *x = ct_requires_grad_(tp_randn(4096, 1024, 3), true);
    ct_tensor *y = ct_softmax(x, 1), *ly = ct_log_softmax(x, 0);
    tp_append(buf, len, y);
    tp_append(buf, len, ly);
    ct_tensor *w = tp_randn(4096, 1024, 4);
    ct_backward(ct_add(ct_sum(ct_mul(y, w)), ct_sum(ct_mul(ly, w))), NULL, false);
    tp_append(buf, len, ct_grad(x));
}

static void tp_work_cross_entropy(unsigned char **buf, size_t *len)
{
    ct_tensor *x = ct_requires_grad_(tp_randn(4096, 1000, 5), true);
    int64_t n[1] = {4096};
    ct_tensor *target = ct_randint(0, 1000, n, 1, CT_INT64, NULL);
    ct_tensor *loss = ct_cross_entropy(x, target, NULL);
    tp_append(buf, len, loss);
    ct_backward(loss, NULL, false);
    tp_append(buf, len, ct_grad(x));
}

static void tp_work_gemm(unsigned char **buf, size_t *len)
{
    static const int64_t shapes[][3] = {{67, 131, 259}, {1, 1000, 3}, {513, 17, 1025},
                                        {300, 300, 300}, {1000, 3, 1}, {97, 1025, 513}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int64_t *s = shapes[i]; /* (M, K) @ (K, N) */
        ct_tensor *a = tp_randn(s[0], s[1], 10 + i), *b = tp_randn(s[1], s[2], 20 + i);
        tp_append(buf, len, ct_mm(a, b));
        tp_append(buf, len, ct_mm(ct_t(b), ct_t(a))); /* transposed operands; float64 */
        tp_append(buf, len, ct_mm(ct_to_dtype(a, CT_FLOAT64), ct_to_dtype(b, CT_FLOAT64)));
    }
}

/* Two SGD (momentum) and two Adam steps of a small MLP on a batch of 512. */
static void tp_work_training_step(unsigned char **buf, size_t *len)
{
    for (int adam = 0; adam < 2; adam++) {
        ct_manual_seed(7);
        ct_module *m = ct_sequential_new();
        ct_sequential_append(m, ct_linear_new(784, 512, true));
        ct_sequential_append(m, ct_relu_new());
        ct_sequential_append(m, ct_linear_new(512, 256, true));
        ct_sequential_append(m, ct_relu_new());
        ct_sequential_append(m, ct_linear_new(256, 10, true));
        ct_tensor *params[8];
        int64_t np = ct_module_parameters(m, params, 8);
        ct_optimizer *opt;
        if (adam) {
            ct_adam_opts o = ct_adam_defaults();
            opt = ct_adam_new(params, np, &o);
        } else {
            ct_sgd_opts o = ct_sgd_defaults();
            o.lr = 0.05;
            o.momentum = 0.9;
            opt = ct_sgd_new(params, np, &o);
        }
        ct_tensor *x = tp_randn(512, 784, 8);
        int64_t n[1] = {512};
        ct_tensor *y = ct_randint(0, 10, n, 1, CT_INT64, NULL);
        for (int step = 0; step < 2; step++) {
            ct_tensor *loss = ct_cross_entropy(ct_module_forward(m, x), y, NULL);
            tp_append(buf, len, loss);
            ct_backward(loss, NULL, false);
            for (int64_t i = 0; i < np; i++) {
                tp_append(buf, len, ct_grad(params[i]));
            }
            ct_optimizer_step(opt);
            ct_optimizer_zero_grad(opt, true);
        }
        for (int64_t i = 0; i < np; i++) {
            tp_append(buf, len, params[i]);
        }
        ct_optimizer_free(opt);
        ct_module_free(m);
    }
}

static void test_same_bits_any_thread_count(void)
{
    tp_same_bytes("sum/mean", tp_work_reductions);
    tp_same_bytes("softmax", tp_work_softmax);
    tp_same_bytes("cross-entropy", tp_work_cross_entropy);
    tp_same_bytes("gemm", tp_work_gemm);
    tp_same_bytes("training step", tp_work_training_step);
}

/* Several user threads run parallel ops at once: one gets the pool, the others run their
   ops serially meanwhile; all results are right. */
typedef struct {
    int seed;
    double got, want;
} tp_user;

static void *tp_user_thread(void *arg)
{
    tp_user *u = (tp_user *)arg;
    ct_scope_begin();
    ct_tensor *x = ct_arange(u->seed, u->seed + (1 << 20), 1, CT_FLOAT64);
    for (int i = 0; i < 20; i++) {
        u->got = ct_item(ct_sum(ct_mul(x, ct_full_like(x, 2.0))));
    }
    double n = (double)(1 << 20), a = u->seed;
    u->want = 2.0 * (n * a + n * (n - 1) / 2);
    ct_scope_end();
    return NULL;
}

static void test_ops_from_several_threads(void)
{
    CHECK(ct_set_num_threads(2) == CT_OK);
    pthread_t th[3];
    tp_user u[3] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
    for (int i = 0; i < 3; i++) {
        CHECK(pthread_create(&th[i], NULL, tp_user_thread, &u[i]) == 0);
    }
    tp_user mine = {4, 0, 0};
    tp_user_thread(&mine);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK(u[i].got == u[i].want);
    }
    CHECK(mine.got == mine.want);
    CHECK(ct_parallel_shutdown() == CT_OK); /* joins the intra-op workers too */
    tp_user again = {4, 0, 0};
    tp_user_thread(&again); /* the pool starts again on use */
    CHECK(again.got == mine.want);
    CHECK(ct_parallel_shutdown() == CT_OK);
    ct_reset_num_threads();
}

/* ---- futures ------------------------------------------------------------------------ */
typedef struct {
    int64_t lo, hi;
    int64_t sum;
} tp_range;

static void *tp_sum_range(void *arg)
{
    tp_range *r = (tp_range *)arg;
    int64_t s = 0;
    for (int64_t i = r->lo; i < r->hi; i++) {
        s += i;
    }
    r->sum = s;
    return arg;
}

static void test_fork_wait_sums(void)
{
    tp_range r[8];
    ct_future *f[8];
    for (int i = 0; i < 8; i++) {
        r[i].lo = (int64_t)i * 100000;
        r[i].hi = (int64_t)(i + 1) * 100000;
        r[i].sum = -1;
        f[i] = ct_fork(tp_sum_range, &r[i]);
        CHECK(f[i] != NULL);
    }
    int64_t total = 0;
    for (int i = 7; i >= 0; i--) { /* wait out of order */
        CHECK(ct_wait(f[i]) == &r[i]);
        int64_t lo = r[i].lo, hi = r[i].hi;
        CHECK(r[i].sum == (hi * (hi - 1) - lo * (lo - 1)) / 2);
        total += r[i].sum;
    }
    CHECK(total == (int64_t)800000 * 799999 / 2);
    CHECK(ct_wait(NULL) == NULL);
    CHECK(ct_fork(NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_fork");
    CHECK(ct_parallel_shutdown() == CT_OK);
}

/* A task that forks children (more than the pool has threads) and waits on them. */
static void *tp_nested(void *arg)
{
    int depth = *(int *)arg;
    if (depth == 0) {
        return (void *)(intptr_t)1;
    }
    int child = depth - 1;
    ct_future *f[3];
    for (int i = 0; i < 3; i++) {
        f[i] = ct_fork(tp_nested, &child);
    }
    intptr_t leaves = 0;
    for (int i = 0; i < 3; i++) {
        leaves += (intptr_t)ct_wait(f[i]);
    }
    return (void *)leaves;
}

static void test_fork_nested(void)
{
    int depth = 4; /* 3^4 = 81 leaves, 121 tasks */
    ct_future *f = ct_fork(tp_nested, &depth);
    CHECK((intptr_t)ct_wait(f) == 81);
    CHECK(ct_parallel_shutdown() == CT_OK);
}

/* A task running ctorch ops: its own scope, serial intra-op (the oversubscription rule). */
typedef struct {
    int64_t n;
    double sum;
    int threads;
} tp_op;

static void *tp_op_task(void *arg)
{
    tp_op *o = (tp_op *)arg;
    o->threads = ct_get_num_threads();
    ct_scope_begin();
    ct_tensor *x = ct_arange(0, (double)o->n, 1, CT_FLOAT64);
    o->sum = ct_item(ct_sum(ct_mul(x, ct_full_like(x, 2.0))));
    ct_scope_end();
    return NULL;
}

static void test_fork_runs_ops_concurrently(void)
{
    tp_op a = {1 << 20, 0, 0}, b = {(1 << 20) + 5, 0, 0};
    ct_future *fa = ct_fork(tp_op_task, &a);
    ct_future *fb = ct_fork(tp_op_task, &b);
    /* the main thread computes meanwhile, with its own intra-op threads */
    tp_op m = {1 << 20, 0, 0};
    tp_op_task(&m);
    ct_wait(fa);
    ct_wait(fb);
    double n = (double)(1 << 20);
    CHECK(m.sum == n * (n - 1));
    CHECK(a.sum == m.sum);
    CHECK(b.sum == (n + 5) * (n + 4));
    CHECK(a.threads == 1 && b.threads == 1);
    CHECK(m.threads == ct_get_num_threads());
    CHECK(ct_parallel_shutdown() == CT_OK);
}

static void *tp_try_shutdown(void *arg)
{
    (void)arg;
    ct_status st = ct_parallel_shutdown();
    ct_error_clear(); /* the task thread's own error state */
    return (void *)(intptr_t)st;
}

static void test_interop_threads_rule(void)
{
    /* Make the state known whatever ran before: a fresh, unstarted pool. */
    CHECK(ct_parallel_shutdown() == CT_OK);
    CHECK(ct_set_num_interop_threads(0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Expected positive number of threads");
#if defined(CTORCH_NO_THREADS)
    int want = 1;
#else
    int want = 3;
#endif
    CHECK(ct_set_num_interop_threads(3) == CT_OK);
    CHECK(ct_get_num_interop_threads() == want);
    CHECK(ct_set_num_interop_threads(2) == CT_ERR_STATE); /* set once */
    CHECK_ERROR(CT_ERR_STATE, "ct_set_num_interop_threads: Error: cannot set number of interop "
                              "threads after parallel work has started or "
                              "set_num_interop_threads called");
    CHECK(ct_parallel_shutdown() == CT_OK);

    /* Starting the pool (first fork) also locks the count. */
    int depth = 1;
    ct_future *f = ct_fork(tp_nested, &depth);
    CHECK(ct_set_num_interop_threads(4) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "after parallel work has started");
    CHECK((intptr_t)ct_wait(f) == 3);
    f = ct_fork(tp_try_shutdown, NULL);
    CHECK((intptr_t)ct_wait(f) == CT_ERR_STATE); /* not from inside a task */
    CHECK(ct_parallel_shutdown() == CT_OK);
    CHECK(ct_set_num_interop_threads(2) == CT_OK); /* shutdown reset the rule */
    CHECK(ct_parallel_shutdown() == CT_OK);
}

/* ---- flush-to-zero ------------------------------------------------------------------ */
static void test_flush_denormal(void)
{
#ifdef TP_X86
    unsigned saved_csr = _mm_getcsr();
    volatile float tiny = 1e-30f, scale = 1e-10f; /* product 1e-40 is subnormal */
    CHECK(ct_set_flush_denormal(false));
    float p = tiny * scale;
    CHECK(p != 0.0f);
    CHECK(ct_set_flush_denormal(true));
    p = tiny * scale;
    CHECK(p == 0.0f);

    /* ctorch kernels follow the setting whatever the calling thread's own mode is */
    _mm_setcsr(saved_csr & ~0x8040u);
    ct_scope_begin();
    int64_t s[1] = {4};
    ct_tensor *a = ct_full(s, 1, 1e-30, CT_FLOAT32);
    ct_tensor *prod = ct_mul(a, ct_full(s, 1, 1e-10, CT_FLOAT32));
    CHECK(ct_item(ct_sum(prod)) == 0.0);
    CHECK(ct_set_flush_denormal(false));
    prod = ct_mul(a, ct_full(s, 1, 1e-10, CT_FLOAT32));
    CHECK(ct_item(ct_select(prod, 0, 0)) != 0.0);
    ct_scope_end();

    ct_set_flush_denormal(true); /* the default for ctorch's kernels */
    _mm_setcsr(saved_csr);       /* the main thread's own mode as it was */
#else
    (void)ct_set_flush_denormal(true);
#endif
}

/* ---- parallel_info ------------------------------------------------------------------ */
static void test_parallel_info(void)
{
    size_t need = ct_parallel_info_string(NULL, 0);
    CHECK(need > 0);
    char *text = (char *)malloc(need + 1);
    CHECK(ct_parallel_info_string(text, need + 1) == need);
    CHECK(strlen(text) == need);
    char want[64];
    snprintf(want, sizeof want, "\tct_get_num_threads() : %d\n", ct_get_num_threads());
    CHECK_MSG(strstr(text, want), "'%s' lacks '%s'", text, want);
    snprintf(want, sizeof want, "\tct_get_num_interop_threads() : %d\n",
             ct_get_num_interop_threads());
    CHECK(strstr(text, want));
    CHECK(strstr(text, "Intra-op parallelism settings:\n"));
    CHECK(strstr(text, "\tOMP_NUM_THREADS : "));
    CHECK(strstr(text, "\tCTORCH_NUM_THREADS : "));
    CHECK(strstr(text, "ISA (compile time) : "));
#ifdef TP_POOL
    CHECK(strstr(text, "\tbackend : ctorch pool (pthreads"));
#else
    CHECK(strstr(text, "\tbackend : none (serial)"));
#endif
    char small[8];
    CHECK(ct_parallel_info_string(small, sizeof small) == need); /* truncates, NUL-ends */
    CHECK(strlen(small) == 7);

    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        ct_parallel_info(f);
        long size = ftell(f);
        CHECK(size == (long)need);
        rewind(f);
        char *back = (char *)malloc(need + 1);
        size_t got = fread(back, 1, need, f);
        back[got] = '\0';
        CHECK(strcmp(back, text) == 0);
        free(back);
        fclose(f);
    }
    free(text);
}

void test_parallel(void)
{
    RUN(test_num_threads_precedence);
    RUN(test_ops_same_result_any_thread_count);
    RUN(test_same_bits_any_thread_count);
    RUN(test_ops_from_several_threads);
    RUN(test_fork_wait_sums);
    RUN(test_fork_nested);
    RUN(test_fork_runs_ops_concurrently);
    RUN(test_interop_threads_rule);
    RUN(test_flush_denormal);
    RUN(test_parallel_info);
}
