/* core/parallel.c - intra-op thread count and the parallel-for helper. */
#include "internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static int ct__num_threads = 0; /* 0: not yet decided */

ct_status ct_set_num_threads(int n)
{
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, "ct_set_num_threads",
                        "Expected positive number of threads, got %d", n);
    }
    ct__num_threads = n;
    return CT_OK;
}

#ifdef _OPENMP
static int ct__env_threads(const char *name)
{
    const char *v = getenv(name);
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : 0;
}
#endif

int ct_get_num_threads(void)
{
#ifdef _OPENMP
    if (ct__num_threads == 0) {
        int n = ct__env_threads("CTORCH_NUM_THREADS");
        if (!n) {
            n = ct__env_threads("OMP_NUM_THREADS");
        }
        ct__num_threads = n ? n : omp_get_num_procs();
    }
    return ct__num_threads;
#else
    return 1;
#endif
}

void ct__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void *ctx),
                      void *ctx)
{
    if (n <= 0) {
        return;
    }
#ifdef _OPENMP
    int nt = ct_get_num_threads();
    int64_t chunks = grain > 0 ? n / grain : n;
    if (nt > 1 && chunks > 1 && !omp_in_parallel()) {
        if (chunks < nt) {
            nt = (int)chunks;
        }
#pragma omp parallel num_threads(nt)
        {
            int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
            int64_t per = (n + cnt - 1) / cnt;
            int64_t b = per * tid, e = b + per < n ? b + per : n;
            if (b < e) {
                fn(b, e, ctx);
            }
        }
        return;
    }
#else
    (void)grain;
#endif
    fn(0, n, ctx);
}

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
