/* core/parallel.c - intra-op thread count, the intra-op pool (ct__parallel_tasks and
 * ct__parallel_for on top), the inter-op pool (ct_fork / ct_wait), flush-to-zero and
 * parallel_info.
 *
 * State: the intra-op count and the flush setting are process-wide atomics; each pool is
 * one struct (ct__ipool for intra-op jobs, ct__pool for inter-op futures); whether the
 * calling thread runs an inter-op task or an intra-op job is thread-local.
 *
 * The intra-op pool runs one job at a time: tasks [0, ntasks) handed out one by one through
 * an atomic claim word (job generation << 32 | next task), so a descheduled thread delays
 * at most the task it holds; the caller claims tasks too, and returns as soon as every task
 * has finished, without waiting for workers that never woke. Idle workers spin briefly on
 * the job sequence number, then sleep on a condition variable.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h> /* vsnprintf (also under CTORCH_NO_STDIO) */

/* CT__PAR_PTHREADS: both pools exist (the intra-op one also needs GCC/clang atomics). */
#if !defined(CTORCH_NO_THREADS) && (defined(__unix__) || defined(__APPLE__)) &&              \
    (defined(__GNUC__) || defined(__clang__))
#define CT__PAR_PTHREADS 1
#include <pthread.h>
#include <time.h> /* timespec_get */
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
#if defined(CT__PAR_PTHREADS) && defined(_SC_NPROCESSORS_ONLN)
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
#ifdef CT__PAR_PTHREADS
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

/* ---- the intra-op pool ------------------------------------------------------------- */
static CT__THREAD_LOCAL int ct__par_in_job = 0; /* running (part of) an intra-op job */

int ct__parallel_threads(void)
{
    int n = ct__par_in_job ? 1 : ct_get_num_threads();
    return n < CT__PAR_MAX_THREADS ? n : CT__PAR_MAX_THREADS;
}

#ifdef CT__PAR_PTHREADS
/* How long an idle worker spins before it sleeps: enough to bridge short serial code
   between ops, short enough to leave a busy machine's cores to the caller and others. The
   quickstart at 2 threads, 2 cores: with one competing process, 100 us made it 1.1x slower
   than 1 thread and 20 us 0.85x; on a quiet machine 100 us was 1.3x faster than 20 us
   (yield-spinning, or sleeping when preempted mid-spin, got neither). So the spin adapts:
   a spinning thread that finds it was descheduled (over CT__PAR_PREEMPTED_NS between two
   clock reads), or a worker that starts a job over CT__PAR_PREEMPTED_NS after it was
   published, marks the machine busy for CT__PAR_BUSY_NS, and meanwhile workers spin
   CT__PAR_SPIN_BUSY_NS. */
#define CT__PAR_SPIN_NS 100000
#define CT__PAR_SPIN_BUSY_NS 20000
#define CT__PAR_PREEMPTED_NS 500000
#define CT__PAR_BUSY_NS 1000000000
/* How long the caller spins for the last tasks before it sleeps: short, because on a busy
   machine the thread holding a task may be waiting for the very core the caller spins on. */
#define CT__PAR_DONE_SPIN_NS 5000
#if defined(__x86_64__) || defined(__i386__)
#define CT__PAR_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CT__PAR_PAUSE() __asm__ __volatile__("yield")
#else
#define CT__PAR_PAUSE() ((void)0)
#endif
#define CT__PAR_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define CT__PAR_SET(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

static struct {
    pthread_mutex_t owner;       /* held by the caller running a job */
    pthread_mutex_t lock;        /* guards the sleeps and wake-ups only */
    pthread_cond_t work;         /* seq changed */
    pthread_cond_t done_cv;      /* the job's last task finished */
    pthread_t threads[CT__PAR_MAX_THREADS - 1]; /* workers; slot of threads[i] is i + 1 */
    int nworkers;                /* written by the owner only */
    int stop;                    /* workers exit at the next seq */
    uint32_t seq;                /* bumped for each job and for stop; workers wait on it */
    uint64_t claim;              /* job generation << 32 | next unclaimed task */
    void (*fn)(int64_t task, int slot, void *ctx);
    void *ctx;
    uint32_t ntasks;             /* the job: tasks [0, ntasks) on slots [0, nslots) */
    int nslots;
    uint32_t done;               /* tasks of the job finished */
    int sleepers;                /* workers asleep on work */
    int caller_asleep;           /* the owner sleeps on done_cv */
    int64_t busy_until_ns;       /* a thread was found descheduled: spin short until then */
    int64_t job_start_ns;        /* when the owner published the job */
} ct__ipool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
               PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0, 0};

/* Claims and runs tasks of job generation gen as slot until none is left; returns at once
   for another generation or a slot the job does not use. Job fields are read before the
   claim and are valid when the claim (a CAS on the unchanged word) succeeds. */
static CT__UNUSED void ct__ipool_run_tasks(uint32_t gen, int slot)
{
    for (;;) {
        uint64_t w = __atomic_load_n(&ct__ipool.claim, __ATOMIC_ACQUIRE);
        /* acquire: when a field of the next job is read, the CAS below sees the claim word
           closed for it (ct__ipool_run) and fails */
        void (*fn)(int64_t, int, void *) = __atomic_load_n(&ct__ipool.fn, __ATOMIC_ACQUIRE);
        void *ctx = __atomic_load_n(&ct__ipool.ctx, __ATOMIC_ACQUIRE);
        uint32_t ntasks = __atomic_load_n(&ct__ipool.ntasks, __ATOMIC_ACQUIRE);
        if ((uint32_t)(w >> 32) != gen || (uint32_t)w >= ntasks ||
            slot >= __atomic_load_n(&ct__ipool.nslots, __ATOMIC_ACQUIRE)) {
            return;
        }
        if (!__atomic_compare_exchange_n(&ct__ipool.claim, &w, w + 1, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED)) {
            continue;
        }
        fn((int64_t)(uint32_t)w, slot, ctx);
        if (__atomic_add_fetch(&ct__ipool.done, 1, __ATOMIC_SEQ_CST) == ntasks &&
            __atomic_load_n(&ct__ipool.caller_asleep, __ATOMIC_SEQ_CST)) {
            pthread_mutex_lock(&ct__ipool.lock);
            pthread_cond_signal(&ct__ipool.done_cv);
            pthread_mutex_unlock(&ct__ipool.lock);
        }
    }
}

/* Whether *word == v (equal) or != v (!equal). */
static CT__UNUSED bool ct__ipool_ready(const uint32_t *word, uint32_t v, bool equal)
{
    uint32_t now = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    return equal ? now == v : now != v;
}

/* Wall-clock nanoseconds (C11 timespec_get: a clock jump only lengthens or cuts one spin). */
static CT__UNUSED int64_t ct__ipool_now_ns(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

/* Waits until ct__ipool_ready(word, v, equal): spins about spin_ns (busy_spin_ns while the
   machine is marked busy), then sleeps on cv, counted in *asleep meanwhile so the waker
   knows to signal. */
static CT__UNUSED void ct__ipool_wait(const uint32_t *word, uint32_t v, bool equal,
                                      int64_t spin_ns, int64_t busy_spin_ns, pthread_cond_t *cv,
                                      int *asleep)
{
    int64_t until = 0, last = 0;
    for (int i = 0;; i++) {
        if (ct__ipool_ready(word, v, equal)) {
            return;
        }
        CT__PAR_PAUSE();
        if ((i & 63) == 0) {
            int64_t now = ct__ipool_now_ns();
            if (last && now - last > CT__PAR_PREEMPTED_NS) { /* descheduled mid-spin */
                CT__PAR_SET(&ct__ipool.busy_until_ns, now + CT__PAR_BUSY_NS);
            }
            last = now;
            if (!until) {
                bool busy = now < CT__PAR_RELAXED(&ct__ipool.busy_until_ns);
                until = now + (busy ? busy_spin_ns : spin_ns);
            }
            if (now > until) {
                break;
            }
        }
    }
    pthread_mutex_lock(&ct__ipool.lock);
    __atomic_add_fetch(asleep, 1, __ATOMIC_SEQ_CST);
    while (!ct__ipool_ready(word, v, equal)) {
        pthread_cond_wait(cv, &ct__ipool.lock);
    }
    __atomic_sub_fetch(asleep, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&ct__ipool.lock);
}

static CT__UNUSED void *ct__ipool_main(void *arg)
{
    int slot = (int)(intptr_t)arg;
    ct__par_in_job = 1; /* ops inside a task run serially */
    uint32_t seen = __atomic_load_n(&ct__ipool.seq, __ATOMIC_ACQUIRE);
    for (;;) {
        ct__ipool_wait(&ct__ipool.seq, seen, false, CT__PAR_SPIN_NS, CT__PAR_SPIN_BUSY_NS,
                       &ct__ipool.work, &ct__ipool.sleepers);
        seen = __atomic_load_n(&ct__ipool.seq, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&ct__ipool.stop, __ATOMIC_ACQUIRE)) {
            return NULL;
        }
        int64_t now = ct__ipool_now_ns();
        if (now - CT__PAR_RELAXED(&ct__ipool.job_start_ns) > CT__PAR_PREEMPTED_NS) {
            CT__PAR_SET(&ct__ipool.busy_until_ns, now + CT__PAR_BUSY_NS); /* woke late */
        }
        unsigned saved = 0;
        (void)ct__par_ftz_enter(&saved); /* a ctorch thread: keeps the mode */
        uint64_t claim = __atomic_load_n(&ct__ipool.claim, __ATOMIC_ACQUIRE);
        ct__ipool_run_tasks((uint32_t)(claim >> 32), slot);
    }
}

/* Bumps seq and wakes the sleeping workers. */
static CT__UNUSED void ct__ipool_bump(void)
{
    __atomic_add_fetch(&ct__ipool.seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ct__ipool.sleepers, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&ct__ipool.lock);
        pthread_cond_broadcast(&ct__ipool.work);
        pthread_mutex_unlock(&ct__ipool.lock);
    }
}

/* Runs a job on nslots slots (the caller is slot 0); the caller holds the owner lock. */
static CT__UNUSED void ct__ipool_run(int64_t ntasks, int nslots,
                                     void (*fn)(int64_t task, int slot, void *ctx), void *ctx)
{
    while (ct__ipool.nworkers < nslots - 1 &&
           pthread_create(&ct__ipool.threads[ct__ipool.nworkers], NULL, ct__ipool_main,
                          (void *)(intptr_t)(ct__ipool.nworkers + 1)) == 0) {
        ct__ipool.nworkers++;
    }
    nslots = ct__ipool.nworkers + 1 < nslots ? ct__ipool.nworkers + 1 : nslots;
    uint32_t gen = (uint32_t)(CT__PAR_RELAXED(&ct__ipool.claim) >> 32) + 1;
    /* Close the claim word first (no task index is ever >= 2^31), then write the fields with
       release: a worker late for the last job that reads a new field can no longer claim a
       task of that job with it (it ran a task of this job twice and counted it in done, which
       then went past ntasks: the caller waited forever). */
    __atomic_store_n(&ct__ipool.claim, (uint64_t)gen << 32 | 0xffffffffu, __ATOMIC_RELAXED);
    __atomic_store_n(&ct__ipool.fn, fn, __ATOMIC_RELEASE);
    __atomic_store_n(&ct__ipool.ctx, ctx, __ATOMIC_RELEASE);
    __atomic_store_n(&ct__ipool.ntasks, (uint32_t)ntasks, __ATOMIC_RELEASE);
    __atomic_store_n(&ct__ipool.nslots, nslots, __ATOMIC_RELEASE);
    CT__PAR_SET(&ct__ipool.done, 0u);
    CT__PAR_SET(&ct__ipool.job_start_ns, ct__ipool_now_ns());
    __atomic_store_n(&ct__ipool.claim, (uint64_t)gen << 32, __ATOMIC_RELEASE);
    ct__ipool_bump();
    ct__ipool_run_tasks(gen, 0);
    ct__ipool_wait(&ct__ipool.done, (uint32_t)ntasks, true, CT__PAR_DONE_SPIN_NS,
                   CT__PAR_DONE_SPIN_NS, &ct__ipool.done_cv, &ct__ipool.caller_asleep);
}

/* Stops and joins the workers (ct_parallel_shutdown); waits for a running job first. */
static CT__UNUSED void ct__ipool_shutdown(void)
{
    pthread_mutex_lock(&ct__ipool.owner);
    __atomic_store_n(&ct__ipool.stop, 1, __ATOMIC_RELEASE);
    ct__ipool_bump();
    for (int i = 0; i < ct__ipool.nworkers; i++) {
        pthread_join(ct__ipool.threads[i], NULL);
    }
    ct__ipool.nworkers = 0;
    __atomic_store_n(&ct__ipool.stop, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ct__ipool.owner);
}
#endif

void ct__parallel_tasks(int64_t ntasks, int nthreads,
                        void (*fn)(int64_t task, int slot, void *ctx), void *ctx)
{
    CT_ASSERT(ntasks < ((int64_t)1 << 31));
    unsigned saved = 0;
    bool changed = ct__par_ftz_enter(&saved);
    int was = ct__par_in_job;
    ct__par_in_job = 1;
    bool pooled = false;
#ifdef CT__PAR_PTHREADS
    if (nthreads > 1 && ntasks > 1 && !was && pthread_mutex_trylock(&ct__ipool.owner) == 0) {
        ct__ipool_run(ntasks, nthreads < ntasks ? nthreads : (int)ntasks, fn, ctx);
        pthread_mutex_unlock(&ct__ipool.owner);
        pooled = true;
    }
#else
    (void)nthreads;
#endif
    for (int64_t t = 0; !pooled && t < ntasks; t++) { /* one thread, or the pool is busy */
        fn(t, 0, ctx);
    }
    ct__par_in_job = was;
    ct__par_ftz_leave(changed, saved);
}

/* ---- parallel for ------------------------------------------------------------------- */
/* ct__parallel_for's chunks: at least a grain, at most CT__PAR_CHUNKS of them. */
#define CT__PAR_CHUNKS 64

typedef struct {
    void (*fn)(int64_t begin, int64_t end, void *ctx);
    void *ctx;
    int64_t n, chunk;
} ct__par_for_job;

static CT__UNUSED void ct__par_for_task(int64_t task, int slot, void *ctx)
{
    const ct__par_for_job *j = (const ct__par_for_job *)ctx;
    int64_t b = task * j->chunk, e = b + j->chunk < j->n ? b + j->chunk : j->n;
    (void)slot;
    j->fn(b, e, j->ctx);
}

void ct__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void *ctx),
                      void *ctx)
{
    if (n <= 0) {
        return;
    }
    grain = grain > 0 ? grain : 1;
    if (n / grain < 2) {
        unsigned saved = 0;
        bool changed = ct__par_ftz_enter(&saved);
        fn(0, n, ctx);
        ct__par_ftz_leave(changed, saved);
        return;
    }
    int64_t per = (n + CT__PAR_CHUNKS - 1) / CT__PAR_CHUNKS;
    ct__par_for_job j = {fn, ctx, n, per > grain ? per : grain};
    ct__parallel_tasks((n + j.chunk - 1) / j.chunk, ct__parallel_threads(), ct__par_for_task, &j);
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
    if (ct__par_in_task || ct__par_in_job) {
        return ct__fail(CT_ERR_STATE, "ct_parallel_shutdown",
                        "cannot shut the thread pools down from inside a task");
    }
#ifdef CT__PAR_PTHREADS
    ct__ipool_shutdown();
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

size_t ct_parallel_info_string(char *buf, size_t n)
{
    size_t len = 0;
    if (buf && n) {
        buf[0] = '\0';
    }
    ct__par_appendf(buf, n, &len, "ctorch/Parallel:\n\tct_get_num_threads() : %d\n"
                    "\tct_get_num_interop_threads() : %d\n", ct_get_num_threads(),
                    ct_get_num_interop_threads());
    ct__par_appendf(buf, n, &len, "OpenMP not used\n");
#if defined(CT__HAS_AVX512)
    const char *isa = "AVX-512";
#elif defined(CT__HAS_AVX2)
    const char *isa = "AVX2+FMA";
#elif defined(CT__HAS_NEON)
    const char *isa = "NEON";
#elif defined(CT__HAS_NEON32)
    const char *isa = "NEON (32-bit ARM, VFPv4)";
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
#ifdef CT__PAR_PTHREADS
    const char *backend = "ctorch pool (pthreads; dynamic chunks, spin then sleep)";
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

#undef CT__PAR_SPIN_NS
#undef CT__PAR_SPIN_BUSY_NS
#undef CT__PAR_PREEMPTED_NS
#undef CT__PAR_BUSY_NS
#undef CT__PAR_DONE_SPIN_NS
#undef CT__PAR_PAUSE
#undef CT__PAR_RELAXED
#undef CT__PAR_SET
#undef CT__PAR_CHUNKS
#undef CT__PAR_PTHREADS
#undef CT__PAR_LOAD
#undef CT__PAR_STORE
#undef CT__PAR_FTZ_X86
#undef CT__PAR_FTZ_ARM
#undef CT__PAR_FTZ_BITS
