/* core/parallel.c - intra-op thread count, the parallel-for helper, the inter-op pool
 * (ct_fork / ct_wait), flush-to-zero and parallel_info.
 *
 * State: the intra-op count and the flush setting are process-wide atomics; the pool is
 * one mutex-guarded struct (ct__pool) with a FIFO of queued futures; whether the calling
 * thread runs an inter-op task is thread-local (ct__par_in_task).
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h> /* vsnprintf (also under CTORCH_NO_STDIO) */

#ifdef _OPENMP
#include <omp.h>
#endif

/* CT__PAR_OMP: intra-op threads exist. CT__PAR_PTHREADS: the inter-op pool exists. */
#if defined(_OPENMP) && !defined(CTORCH_NO_THREADS)
#define CT__PAR_OMP 1
#endif
#if !defined(CTORCH_NO_THREADS) && (defined(__unix__) || defined(__APPLE__))
#define CT__PAR_PTHREADS 1
#include <pthread.h>
#include <unistd.h>
#endif

#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
#define CT__PAR_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define CT__PAR_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#define CT__PAR_LOAD(p) (*(p))
#define CT__PAR_STORE(p, v) (*(p) = (v))
#endif

/* Flush-to-zero hardware. CT__PAR_FTZ_BITS: the mode bits set when flushing. */
#if (defined(__SSE__) || defined(_M_X64)) && (defined(__x86_64__) || defined(_M_X64))
#include <xmmintrin.h>
#define CT__PAR_FTZ_X86 1
#define CT__PAR_FTZ_BITS 0x8040u /* MXCSR FTZ (bit 15) | DAZ (bit 6) */
#elif defined(__SSE__)
#include <xmmintrin.h>
#define CT__PAR_FTZ_X86 1
#define CT__PAR_FTZ_BITS 0x8000u /* 32-bit x86: FTZ only (early CPUs lack DAZ) */
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define CT__PAR_FTZ_ARM 1
#define CT__PAR_FTZ_BITS (1u << 24) /* FPCR.FZ */
#endif

/* ---- cores ------------------------------------------------------------------------- */
static CT__UNUSED int ct__par_logical_cpus(void)
{
#if defined(_OPENMP)
    return omp_get_num_procs(); /* honours the affinity mask */
#elif defined(CT__PAR_PTHREADS) && defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

/* SMT threads per core from cpu0's sibling list ("0,64", "0-1" or "0"); 1 when unknown. */
static CT__UNUSED int ct__par_smt_per_core(void)
{
#if defined(__linux__) && !defined(CTORCH_NO_STDIO)
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "r");
    if (!f) {
        return 1;
    }
    char line[128];
    int count = 0;
    if (fgets(line, (int)sizeof line, f)) {
        const char *p = line;
        while (*p >= '0' && *p <= '9') {
            long a = strtol(p, NULL, 10), b = a;
            while (*p >= '0' && *p <= '9') {
                p++;
            }
            if (*p == '-') {
                p++;
                b = strtol(p, NULL, 10);
                while (*p >= '0' && *p <= '9') {
                    p++;
                }
            }
            count += b >= a ? (int)(b - a + 1) : 1;
            if (*p == ',') {
                p++;
            }
        }
    }
    fclose(f);
    return count > 0 ? count : 1;
#else
    return 1;
#endif
}

static int ct__par_cores_cache = 0;

/* Physical cores available to the process: logical CPUs / SMT threads per core. */
static CT__UNUSED int ct__par_cores(void)
{
    int n = CT__PAR_LOAD(&ct__par_cores_cache);
    if (n == 0) {
        int logical = ct__par_logical_cpus(), smt = ct__par_smt_per_core();
        n = logical / smt > 0 ? logical / smt : 1;
        CT__PAR_STORE(&ct__par_cores_cache, n);
    }
    return n;
}

/* ---- intra-op thread count ---------------------------------------------------------- */
static int ct__num_threads = 0;          /* ct_set_num_threads's value; 0: not set */
static int ct__num_threads_default = 0;  /* from the environment or cores; 0: not read */
static CT__THREAD_LOCAL int ct__par_in_task = 0; /* inside an inter-op task */

ct_status ct_set_num_threads(int n)
{
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, "ct_set_num_threads",
                        "Expected positive number of threads, got %d", n);
    }
    CT__PAR_STORE(&ct__num_threads, n);
    return CT_OK;
}

void ct_reset_num_threads(void)
{
    CT__PAR_STORE(&ct__num_threads, 0);
    CT__PAR_STORE(&ct__num_threads_default, 0);
}

/* A positive integer environment variable, else 0. */
static CT__UNUSED int ct__env_threads(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        return 0;
    }
    char *end = NULL;
    long n = strtol(v, &end, 10);
    while (end && (*end == ' ' || *end == '\n')) {
        end++;
    }
    return (end && *end == '\0' && n > 0 && n <= 1 << 20) ? (int)n : 0;
}

int ct_get_num_threads(void)
{
#ifdef CT__PAR_OMP
    if (ct__par_in_task) {
        return 1; /* the oversubscription rule */
    }
    int n = CT__PAR_LOAD(&ct__num_threads);
    if (n > 0) {
        return n;
    }
    n = CT__PAR_LOAD(&ct__num_threads_default);
    if (n == 0) {
        n = ct__env_threads("CTORCH_NUM_THREADS");
        if (!n) {
            n = ct__env_threads("OMP_NUM_THREADS");
        }
        if (!n) {
            n = ct__par_cores();
        }
        CT__PAR_STORE(&ct__num_threads_default, n);
    }
    return n;
#else
    return 1;
#endif
}

/* ---- flush-to-zero ------------------------------------------------------------------ */
static int ct__par_ftz = 1; /* the setting for ctorch's kernels and workers (default on) */

#ifdef CT__PAR_FTZ_BITS
static CT__UNUSED unsigned ct__par_fpmode_get(void)
{
#ifdef CT__PAR_FTZ_X86
    return _mm_getcsr();
#else
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return (unsigned)fpcr;
#endif
}

static CT__UNUSED void ct__par_fpmode_set(unsigned mode)
{
#ifdef CT__PAR_FTZ_X86
    _mm_setcsr(mode);
#else
    uint64_t fpcr = mode;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
#endif
}
#endif

/* Puts the calling thread in the ctorch flush mode; returns true (and the old mode in
   *saved) when it had to change it, so ct__par_ftz_leave restores it. */
static CT__UNUSED bool ct__par_ftz_enter(unsigned *saved)
{
#ifdef CT__PAR_FTZ_BITS
    unsigned old = ct__par_fpmode_get();
    unsigned want = CT__PAR_LOAD(&ct__par_ftz) ? (old | CT__PAR_FTZ_BITS)
                                              : (old & ~(unsigned)CT__PAR_FTZ_BITS);
    if (want == old) {
        return false;
    }
    *saved = old;
    ct__par_fpmode_set(want);
    return true;
#else
    (void)saved;
    return false;
#endif
}

static CT__UNUSED void ct__par_ftz_leave(bool changed, unsigned saved)
{
#ifdef CT__PAR_FTZ_BITS
    if (changed) {
        ct__par_fpmode_set(saved);
    }
#else
    (void)changed;
    (void)saved;
#endif
}

bool ct_set_flush_denormal(bool on)
{
#ifdef CT__PAR_FTZ_BITS
    CT__PAR_STORE(&ct__par_ftz, on ? 1 : 0);
    unsigned saved = 0;
    (void)ct__par_ftz_enter(&saved); /* the calling thread keeps the new mode */
    return true;
#else
    (void)on;
    return false;
#endif
}

/* ---- parallel for ------------------------------------------------------------------- */
void ct__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void *ctx),
                      void *ctx)
{
    if (n <= 0) {
        return;
    }
    unsigned saved = 0;
    bool changed = ct__par_ftz_enter(&saved);
#ifdef CT__PAR_OMP
    int nt = ct_get_num_threads();
    int64_t chunks = grain > 0 ? n / grain : n;
    if (nt > 1 && chunks > 1 && !omp_in_parallel()) {
        if (chunks < nt) {
            nt = (int)chunks;
        }
#pragma omp parallel num_threads(nt)
        {
            int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
            unsigned wsaved = 0;
            bool wchanged = tid != 0 && ct__par_ftz_enter(&wsaved);
            int64_t per = (n + cnt - 1) / cnt;
            int64_t b = per * tid, e = b + per < n ? b + per : n;
            if (b < e) {
                fn(b, e, ctx);
            }
            ct__par_ftz_leave(wchanged, wsaved);
        }
        ct__par_ftz_leave(changed, saved);
        return;
    }
#else
    (void)grain;
#endif
    fn(0, n, ctx);
    ct__par_ftz_leave(changed, saved);
}

/* ---- the inter-op pool -------------------------------------------------------------- */
enum { CT__FUT_QUEUED, CT__FUT_RUNNING, CT__FUT_DONE };

struct ct_future {
    void *(*fn)(void *arg);
    void *arg;
    void *result;
    int state;              /* CT__FUT_*, guarded by the pool lock */
    ct_future *prev, *next; /* queue links while queued */
};

static int ct__interop_threads = 0; /* ct_set_num_interop_threads's value; 0: not set */
static int ct__interop_locked = 0;  /* set called or pool started: no more sets */

/* Runs one task on the calling thread as an inter-op task (serial intra-op, flush mode). */
static CT__UNUSED void ct__par_run_task(ct_future *f)
{
    int was = ct__par_in_task;
    ct__par_in_task = 1;
    unsigned saved = 0;
    bool changed = ct__par_ftz_enter(&saved);
    f->result = f->fn(f->arg);
    ct__par_ftz_leave(changed, saved);
    ct__par_in_task = was;
}

#ifdef CT__PAR_PTHREADS
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a task was queued, or stop */
    pthread_cond_t done;     /* a task finished */
    ct_future *head, *tail;  /* FIFO of queued tasks */
    pthread_t *threads;
    int nthreads;
    int started, stop;
} ct__pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
              NULL, NULL, NULL, 0, 0, 0};

/* Unlinks f from the queue; the lock is held. */
static CT__UNUSED void ct__pool_unlink(ct_future *f)
{
    if (f->prev) {
        f->prev->next = f->next;
    } else {
        ct__pool.head = f->next;
    }
    if (f->next) {
        f->next->prev = f->prev;
    } else {
        ct__pool.tail = f->prev;
    }
    f->prev = f->next = NULL;
}

/* Takes queued f off the queue and runs it outside the lock, which is held on entry and
   exit; wakes the waiters. */
static CT__UNUSED void ct__pool_run_locked(ct_future *f)
{
    ct__pool_unlink(f);
    f->state = CT__FUT_RUNNING;
    pthread_mutex_unlock(&ct__pool.lock);
    ct__par_run_task(f);
    pthread_mutex_lock(&ct__pool.lock);
    f->state = CT__FUT_DONE;
    pthread_cond_broadcast(&ct__pool.done);
}

static CT__UNUSED void *ct__pool_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&ct__pool.lock);
    for (;;) {
        while (!ct__pool.head && !ct__pool.stop) {
            pthread_cond_wait(&ct__pool.work, &ct__pool.lock);
        }
        ct_future *f = ct__pool.head;
        if (!f) {
            break; /* stop, and the queue is drained */
        }
        ct__pool_run_locked(f);
    }
    pthread_mutex_unlock(&ct__pool.lock);
    return NULL;
}

/* Starts the threads; the lock is held. Leaves nthreads 0 when none could start. */
static CT__UNUSED void ct__pool_start(void)
{
    int n = ct_get_num_interop_threads();
    ct__pool.started = 1;
    CT__PAR_STORE(&ct__interop_locked, 1);
    ct__pool.threads = (pthread_t *)ct__malloc(sizeof(pthread_t) * (size_t)n);
    if (!ct__pool.threads) {
        return;
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&ct__pool.threads[ct__pool.nthreads], NULL, ct__pool_main, NULL)
            == 0) {
            ct__pool.nthreads++;
        }
    }
}
#endif

ct_status ct_set_num_interop_threads(int n)
{
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, "ct_set_num_interop_threads",
                        "Expected positive number of threads");
    }
#ifdef CT__PAR_PTHREADS
    pthread_mutex_lock(&ct__pool.lock);
#endif
    ct_status st = CT_OK;
    if (CT__PAR_LOAD(&ct__interop_locked)) {
        st = ct__fail(CT_ERR_STATE, "ct_set_num_interop_threads",
                      "Error: cannot set number of interop threads after parallel work has "
                      "started or set_num_interop_threads called");
    } else {
        CT__PAR_STORE(&ct__interop_threads, n);
        CT__PAR_STORE(&ct__interop_locked, 1);
    }
#ifdef CT__PAR_PTHREADS
    pthread_mutex_unlock(&ct__pool.lock);
#endif
    return st;
}

int ct_get_num_interop_threads(void)
{
#ifdef CT__PAR_PTHREADS
    int n = CT__PAR_LOAD(&ct__interop_threads);
    return n > 0 ? n : ct__par_cores();
#else
    return 1;
#endif
}

ct_future *ct_fork(void *(*fn)(void *arg), void *arg)
{
    if (!fn) {
        ct__fail(CT_ERR_NULL_ARG, "ct_fork", "fn must not be NULL");
        return NULL;
    }
    ct_future *f = (ct_future *)ct__malloc(sizeof(ct_future));
    if (!f) {
        ct__fail(CT_ERR_OOM, "ct_fork", "out of memory allocating a future");
        return NULL;
    }
    f->fn = fn;
    f->arg = arg;
    f->result = NULL;
    f->prev = f->next = NULL;
    f->state = CT__FUT_QUEUED;
#ifdef CT__PAR_PTHREADS
    pthread_mutex_lock(&ct__pool.lock);
    if (!ct__pool.started) {
        ct__pool_start();
    }
    if (ct__pool.nthreads > 0) {
        f->prev = ct__pool.tail;
        if (ct__pool.tail) {
            ct__pool.tail->next = f;
        } else {
            ct__pool.head = f;
        }
        ct__pool.tail = f;
        pthread_cond_signal(&ct__pool.work);
        pthread_mutex_unlock(&ct__pool.lock);
        return f;
    }
    pthread_mutex_unlock(&ct__pool.lock);
#else
    CT__PAR_STORE(&ct__interop_locked, 1);
#endif
    ct__par_run_task(f); /* no pool: synchronous */
    f->state = CT__FUT_DONE;
    return f;
}

void *ct_wait(ct_future *f)
{
    if (!f) {
        return NULL;
    }
#ifdef CT__PAR_PTHREADS
    pthread_mutex_lock(&ct__pool.lock);
    if (f->state == CT__FUT_QUEUED) {
        /* Not picked up yet: run it here, so nested fork/wait cannot deadlock. */
        ct__pool_run_locked(f);
    }
    while (f->state != CT__FUT_DONE) {
        pthread_cond_wait(&ct__pool.done, &ct__pool.lock);
    }
    pthread_mutex_unlock(&ct__pool.lock);
#endif
    void *result = f->result;
    ct__free(f);
    return result;
}

ct_status ct_parallel_shutdown(void)
{
    if (ct__par_in_task) {
        return ct__fail(CT_ERR_STATE, "ct_parallel_shutdown",
                        "cannot shut the inter-op pool down from inside an inter-op task");
    }
#ifdef CT__PAR_PTHREADS
    pthread_mutex_lock(&ct__pool.lock);
    ct__pool.stop = 1;
    pthread_cond_broadcast(&ct__pool.work);
    pthread_mutex_unlock(&ct__pool.lock);
    for (int i = 0; i < ct__pool.nthreads; i++) {
        pthread_join(ct__pool.threads[i], NULL);
    }
    pthread_mutex_lock(&ct__pool.lock);
    ct__free(ct__pool.threads);
    ct__pool.threads = NULL;
    ct__pool.nthreads = 0;
    ct__pool.started = 0;
    ct__pool.stop = 0;
    pthread_mutex_unlock(&ct__pool.lock);
#endif
    CT__PAR_STORE(&ct__interop_threads, 0);
    CT__PAR_STORE(&ct__interop_locked, 0);
    return CT_OK;
}

/* ---- parallel_info ------------------------------------------------------------------ */
/* Appends printf-style text at *len into buf (capacity n), counting what would be needed. */
static CT__UNUSED void ct__par_appendf(char *buf, size_t n, size_t *len, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static CT__UNUSED void ct__par_appendf(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = buf && *len < n ? buf + *len : NULL;
    int k = vsnprintf(dst, dst ? n - *len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) {
        *len += (size_t)k;
    }
}

static CT__UNUSED const char *ct__par_omp_version(int v)
{
    switch (v) {
    case 200505: return "2.5";
    case 200805: return "3.0";
    case 201107: return "3.1";
    case 201307: return "4.0";
    case 201511: return "4.5";
    case 201811: return "5.0";
    case 202011: return "5.1";
    case 202111: return "5.2";
    case 202411: return "6.0";
    default: return "unknown";
    }
}

size_t ct_parallel_info_string(char *buf, size_t n)
{
    size_t len = 0;
    if (buf && n) {
        buf[0] = '\0';
    }
    ct__par_appendf(buf, n, &len, "ctorch/Parallel:\n\tct_get_num_threads() : %d\n"
                    "\tct_get_num_interop_threads() : %d\n", ct_get_num_threads(),
                    ct_get_num_interop_threads());
#ifdef _OPENMP
    ct__par_appendf(buf, n, &len, "OpenMP %d (a.k.a. OpenMP %s)\n\tomp_get_max_threads() : %d\n",
                    (int)_OPENMP, ct__par_omp_version((int)_OPENMP), omp_get_max_threads());
#else
    ct__par_appendf(buf, n, &len, "OpenMP not found\n");
#endif
#if defined(CT__HAS_AVX512)
    const char *isa = "AVX-512";
#elif defined(CT__HAS_AVX2)
    const char *isa = "AVX2+FMA";
#elif defined(CT__HAS_NEON)
    const char *isa = "NEON";
#else
    const char *isa = "portable C";
#endif
#if defined(CT__PAR_FTZ_X86) && defined(__x86_64__)
    const char *ftz_hw = "x86 MXCSR FTZ|DAZ";
#elif defined(CT__PAR_FTZ_X86)
    const char *ftz_hw = "x86 MXCSR FTZ";
#elif defined(CT__PAR_FTZ_ARM)
    const char *ftz_hw = "aarch64 FPCR.FZ";
#else
    const char *ftz_hw = NULL;
#endif
#ifdef CT__PAR_OMP
    const char *backend = "OpenMP";
#else
    const char *backend = "none (serial)";
#endif
    ct__par_appendf(buf, n, &len, "Intra-op parallelism settings:\n\tbackend : %s\n"
                    "\tgrain size : %d elements\n\tflush denormal : %s%s%s%s\n"
                    "\tISA (compile time) : %s\n", backend, (int)CT__GRAIN,
                    ftz_hw ? (CT__PAR_LOAD(&ct__par_ftz) ? "on" : "off") : "not supported",
                    ftz_hw ? " (" : "", ftz_hw ? ftz_hw : "", ftz_hw ? ")" : "", isa);
#ifdef CT__PAR_PTHREADS
    const char *interop = "pthreads";
#else
    const char *interop = "none (ct_fork runs synchronously)";
#endif
    ct__par_appendf(buf, n, &len, "Inter-op parallelism settings:\n\tbackend : %s\n"
                    "number of cores : %d physical, %d logical\n", interop, ct__par_cores(),
                    ct__par_logical_cpus());
    ct__par_appendf(buf, n, &len, "Environment variables:\n");
    const char *names[2] = {"OMP_NUM_THREADS", "CTORCH_NUM_THREADS"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        ct__par_appendf(buf, n, &len, "\t%s : %s\n", names[i], v ? v : "[not set]");
    }
    ct__par_appendf(buf, n, &len, "ctorch parallel backend: %s\n", backend);
    return len;
}

#ifndef CTORCH_NO_STDIO
void ct_parallel_info(FILE *f)
{
    if (ct__null("ct_parallel_info", f)) {
        return;
    }
    size_t need = ct_parallel_info_string(NULL, 0);
    char *text = (char *)ct__malloc(need + 1);
    if (!text) {
        return;
    }
    ct_parallel_info_string(text, need + 1);
    fputs(text, f);
    ct__free(text);
}
#endif

/* ---- spin lock ---------------------------------------------------------------------- */
void ct__mutex_lock(ct__mutex *m)
{
#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
    while (__atomic_exchange_n(&m->locked, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&m->locked, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    }
#else
    m->locked = 1;
#endif
}

void ct__mutex_unlock(ct__mutex *m)
{
#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
    __atomic_store_n(&m->locked, 0, __ATOMIC_RELEASE);
#else
    m->locked = 0;
#endif
}

#undef CT__PAR_OMP
#undef CT__PAR_PTHREADS
#undef CT__PAR_LOAD
#undef CT__PAR_STORE
#undef CT__PAR_FTZ_X86
#undef CT__PAR_FTZ_ARM
#undef CT__PAR_FTZ_BITS
