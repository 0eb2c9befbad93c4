/* tests/test_parallel.c - threading: intra-op count precedence, inter-op futures, the
 * interop count rule, the oversubscription rule, flush-to-zero and parallel_info.
 *
 * Tests that fork end with ct_parallel_shutdown(), which frees the pool (the runner's leak
 * check counts ctorch's bytes) and lets the next test set the interop count again.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include "test.h"

#include <stdlib.h>

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
#if defined(_OPENMP) && !defined(CTORCH_NO_THREADS)
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
    CHECK(ct_get_num_threads() == 1); /* no OpenMP, or CTORCH_NO_THREADS: always 1 */
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
#ifdef _OPENMP
    CHECK(strstr(text, "OpenMP 20"));
    CHECK(strstr(text, "omp_get_max_threads() : "));
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
    RUN(test_fork_wait_sums);
    RUN(test_fork_nested);
    RUN(test_fork_runs_ops_concurrently);
    RUN(test_interop_threads_rule);
    RUN(test_flush_denormal);
    RUN(test_parallel_info);
}
