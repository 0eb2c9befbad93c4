/* core/parallel.h - CPU threading: intra-op threads, the inter-op pool, flush-to-zero
 * (DESIGN §7; PyTorch's "CPU threading and TorchScript inference" note).
 *
 * Two levels, as in PyTorch:
 *   intra-op  one op split over ctorch's own pool of persistent pthreads (large pointwise
 *             ops, reductions, softmax, cross-entropy, optimizer steps, GEMM) in chunks
 *             of at least CT__GRAIN (32768) elements. The calling thread works too;
 *             chunks go to whichever thread is free, so a thread the OS deschedules (a
 *             busy machine) delays one chunk, not the op; idle workers spin for some
 *             microseconds, then sleep. OpenMP is not used (-fopenmp changes nothing).
 *             Link with -pthread. Under CTORCH_NO_THREADS, or without pthreads and
 *             GCC/clang atomics (e.g. MSVC), every op runs on the calling thread and
 *             ct_get_num_threads() is 1. At most 256 threads per op.
 *   inter-op  ct_fork / ct_wait: tasks on one process-wide pthread pool of
 *             ct_get_num_interop_threads() threads, started by the first ct_fork. Compile
 *             and link with -pthread (glibc 2.34+ has the symbols in libc, so it links
 *             without, but -pthread is the portable spelling). Under CTORCH_NO_THREADS, or
 *             on platforms without pthreads (e.g. MSVC), ct_fork runs the task at once on
 *             the calling thread.
 *
 * Oversubscription rule: intra-op work launched from inside an inter-op task runs on one
 * thread (ct_get_num_threads() returns 1 there), so a full pool plus its tasks' ops never
 * use more than ct_get_num_interop_threads() threads. Intra-op work inside an intra-op
 * chunk also runs serially, and so does an op started while another thread's op holds
 * the intra-op pool (one op at a time uses it).
 *
 * Flush-to-zero: ctorch's kernels run with subnormal floats flushed to zero (x86 MXCSR
 * FTZ|DAZ, aarch64 FPCR.FZ) by default, like torch.set_flush_denormal(True), which fast
 * CPU training (e.g. Adam's tiny second moments) relies on. The mode is set, and the
 * caller's mode restored, around every intra-op loop (serial or parallel, so results do
 * not depend on the thread count) and around every inter-op task; pool workers set it
 * for each op. The caller's own code keeps its thread's mode, which ct_set_flush_denormal
 * also sets for the calling thread. ct_set_flush_denormal(false) restores IEEE subnormals
 * everywhere.
 *
 * Determinism: how an op is cut into chunks depends on its sizes only, never on the thread
 * count or on which thread runs a chunk, and every output element is computed within
 * one chunk; results are bit-identical for any thread count (tests/test_parallel.c checks
 * reductions, softmax, cross-entropy, GEMM and a training step at 1-4 threads).
 */

/* Sets the number of intra-op threads. Takes precedence over the environment variables
   CTORCH_NUM_THREADS and OMP_NUM_THREADS. Without pthreads or under CTORCH_NO_THREADS
   the value is recorded but ct_get_num_threads() stays 1.
   Errors: CT_ERR_VALUE for n < 1 ("Expected positive number of threads, got 0").
   Thread safety: any thread; takes effect for ops started afterwards.
   Mirrors: torch.set_num_threads. */
CTORCH_API ct_status ct_set_num_threads(int n);
/* The intra-op thread count for ops launched from the calling thread, first found of:
   ct_set_num_threads's value, CTORCH_NUM_THREADS, OMP_NUM_THREADS (positive integers;
   others are ignored), the number of physical cores (logical CPUs available to the
   process divided by SMT threads per core, read once from Linux sysfs; else the logical
   CPUs). The environment is read once, on first use (see ct_reset_num_threads).
   Returns 1 without pthreads, under CTORCH_NO_THREADS, and inside an inter-op task (the
   oversubscription rule). Thread safety: any thread. Mirrors: torch.get_num_threads. */
CTORCH_API int ct_get_num_threads(void);
/* Forgets ct_set_num_threads's value and the cached environment, so the next
   ct_get_num_threads() re-reads CTORCH_NUM_THREADS and OMP_NUM_THREADS (for tests and
   programs that change the environment). Thread safety: any thread. Mirrors: nothing
   (PyTorch cannot un-set the count). */
CTORCH_API void ct_reset_num_threads(void);

/* Sets the size of the inter-op pool. Allowed once, before the pool starts (the first
   ct_fork), like PyTorch. Under CTORCH_NO_THREADS the count is checked and recorded, but
   tasks still run synchronously.
   Errors: CT_ERR_VALUE for n < 1 ("Expected positive number of threads"); CT_ERR_STATE
   when the pool has started or the count was already set ("Error: cannot set number of
   interop threads after parallel work has started or set_num_interop_threads called").
   Thread safety: any thread. Mirrors: torch.set_num_interop_threads. */
CTORCH_API ct_status ct_set_num_interop_threads(int n);
/* The inter-op pool size: ct_set_num_interop_threads's value, else the number of physical
   cores (as ct_get_num_threads). 1 under CTORCH_NO_THREADS or without pthreads.
   Thread safety: any thread. Mirrors: torch.get_num_interop_threads. */
CTORCH_API int ct_get_num_interop_threads(void);

/* An inter-op task's handle: created by ct_fork, consumed (freed) by ct_wait. */
typedef struct ct_future ct_future;
/* Runs fn(arg) asynchronously on the inter-op pool (started on first use) and returns its
   future. Tasks may fork and wait on further tasks: a waited task that has not started
   yet runs on the waiting thread, so nested fork/wait never deadlocks. Inside the task,
   ct_get_num_threads() is 1, scopes, grad mode and the error state are the pool
   thread's own (open a scope in fn for the tensors it makes) and subnormals are flushed
   per ct_set_flush_denormal. Under CTORCH_NO_THREADS or without pthreads fn runs at once.
   Returns: a new future, owned by the caller, which must pass it to ct_wait exactly once;
   NULL + CT_ERR_NULL_ARG for a NULL fn, CT_ERR_OOM when out of memory.
   Thread safety: any thread, including inside tasks. Mirrors: torch.jit.fork. */
CTORCH_API ct_future *ct_fork(void *(*fn)(void *arg), void *arg);
/* Blocks until the task of f has finished, frees f and returns fn's result. Runs the task
   on the calling thread when no pool thread has picked it up yet. NULL f: returns NULL.
   Thread safety: any one thread per future. Mirrors: torch.jit.wait. */
CTORCH_API void *ct_wait(ct_future *f);
/* Drains the queue, joins the inter-op pool's threads and frees the pool, returning the
   inter-op settings to their initial state (ct_set_num_interop_threads may be called
   again; the next ct_fork starts a fresh pool); also joins the intra-op pool's workers
   (after the op running on them, if any; the next parallel op starts them again). Not
   called at exit: idle pool threads simply end with the process; call it before
   unloading the library or checking leaks.
   Errors: CT_ERR_STATE when called from inside an inter-op task or an intra-op chunk.
   Thread safety: no other thread may use ct_fork/ct_wait meanwhile. Mirrors: nothing. */
CTORCH_API ct_status ct_parallel_shutdown(void);

/* Turns flushing of subnormal floats to zero on or off for the calling thread and for
   ctorch's kernels and worker threads (the default is on for those; see the part's head).
   Returns: whether the CPU supports it (x86 SSE: MXCSR FTZ and DAZ; aarch64: FPCR.FZ);
   false and nothing changes elsewhere.
   Thread safety: any thread; other threads pick up the setting at their next kernel or
   task. Mirrors: torch.set_flush_denormal. */
CTORCH_API bool ct_set_flush_denormal(bool on);

/* Writes the threading settings into buf (at most n bytes, NUL-terminated) in the layout
   of torch.__config__.parallel_info(): thread counts, "OpenMP not used", intra-op settings
   (backend, grain, flush-to-zero, compile-time ISA), core counts and the environment
   variables. Returns the length needed (excluding the NUL), so (NULL, 0) sizes it.
   Thread safety: any thread. Mirrors: torch.__config__.parallel_info. */
CTORCH_API size_t ct_parallel_info_string(char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Prints ct_parallel_info_string's text to f. Mirrors: torch.__config__.parallel_info. */
CTORCH_API void ct_parallel_info(FILE *f);
#endif
