/* bench/profiler.h - the op profiler (torch.profiler), built on the dispatcher.
 *
 * Between ct_profiler_begin and ct_profiler_end every op that goes through the dispatcher,
 * on every thread, is recorded as an event (its name, e.g. "aten::addmm", start and
 * duration), nested inside the op or range that called it: ops of composite ops, of
 * autograd formulas ("autograd::engine::evaluate_function: AddmmBackward0" ranges), of
 * optimizer steps ("Optimizer.step#SGD.step") and of DataLoader batches
 * ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), and inside the user's
 * own ranges (ct_record_function_begin/end). After ct_profiler_end the profile can be read
 * as key averages, printed as PyTorch's table or written as a Chrome trace:
 *     ct_profiler_opts po = ct_profiler_defaults();
 *     po.record_shapes = true;
 *     ct_profiler_begin(&po);
 *     ct_record_function_begin("model_inference");
 *     ct_module_forward(model, x);
 *     ct_record_function_end();
 *     ct_profiler_end();
 *     ct_profiler_print_table(stdout, "self_cpu_time_total", 10);
 *     ct_profiler_export_chrome_trace("trace.json");
 *     ct_profiler_reset();
 * Definitions (PyTorch's): an event's CPU total is its duration; its self CPU time is the
 * duration minus its direct children's durations (events of the same thread that ran inside
 * it), so the self times of a thread add up to the time covered by its outermost events.
 * Memory (profile_memory) is ct_memory_allocated()'s change over the event (allocations
 * minus frees, all threads; the profiler's own storage excluded); self memory again minus
 * the children's. Times are microseconds in the results, as PyTorch's.
 * Thread safety: one profile at a time for the whole process; events are recorded from any
 * thread (under a lock, only while the profiler runs); each thread has its own stack of open
 * ranges. Read the results (key averages, table, trace) after ct_profiler_end.
 * Cost: with the profiler off, the dispatcher pays one predictable branch; while on, each
 * op takes a lock twice and reads the clock twice (60 to 150 ns a call on x86-64).
 */

/* How the profiler records. Zero means default for every field, so `{0}` or
   ct_profiler_defaults() (the same values) work; NULL opts means the defaults.
     field           default           meaning
     record_shapes   false             record each op's input shapes; the key averages
                                       and the table group by (name, input shapes), as
                                       key_averages(group_by_input_shape=True); the trace
                                       gets "Input Dims"
     profile_memory  false             record the change in ct_memory_allocated() over each
                                       event ("CPU Mem", "Self CPU Mem")
     with_flops      false             record the floating point operations of ops that
                                       count them (matrix multiplies; "Total MFLOPs", the
                                       unit scaled to the smallest count)
     clock_ns        NULL (monotonic)  a clock in nanoseconds: clock_gettime(
                                       CLOCK_MONOTONIC) on POSIX, else C11 timespec_get;
                                       required under CTORCH_NO_STDIO; called under the
                                       profiler's lock from every recording thread
     clock_user      NULL              passed to clock_ns
   Mirrors: torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes,
   profile_memory, with_flops). */
typedef struct ct_profiler_opts {
    bool record_shapes;
    bool profile_memory;
    bool with_flops;
    uint64_t (*clock_ns)(void *clock_user);
    void *clock_user;
} ct_profiler_opts;

/* PyTorch's defaults: nothing but the times recorded, the monotonic clock. */
CTORCH_API ct_profiler_opts ct_profiler_defaults(void);

/* Starts profiling every thread (opts copied; NULL: the defaults). Frees the previous
   profile's results.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_STATE while the profiler runs; CT_ERR_UNSUPPORTED when clock_ns is NULL
   and the build has no default clock (CTORCH_NO_STDIO).
   Mirrors: torch.profiler.profile.__enter__ (start). */
CTORCH_API ct_status ct_profiler_begin(const ct_profiler_opts *opts);
/* Stops profiling. Events still open (ranges not ended, ops running on other threads)
   are closed at this time; ops that finish later are not recorded.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_STATE when the profiler does not run; CT_ERR_OOM when events were dropped
   because their storage could not be allocated (the profile keeps the others).
   Mirrors: torch.profiler.profile.__exit__ (stop). */
CTORCH_API ct_status ct_profiler_end(void);
/* Frees the recorded profile (the key averages' strings with it); nothing recorded is a
   no-op. Returns: CT_OK. Errors: CT_ERR_STATE while the profiler runs. */
CTORCH_API ct_status ct_profiler_reset(void);

/* Opens a user range named name (copied; at most 1023 bytes kept) on this thread: the ops
   and ranges that follow on this thread nest in it until ct_record_function_end. Does
   nothing (CT_OK) while the profiler is off, as PyTorch.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_STATE beyond 256 open ranges and ops on one thread;
   CT_ERR_OOM. After CT_ERR_STATE or CT_ERR_OOM the range is not recorded but still takes
   its ct_record_function_end (which then closes nothing).
   Mirrors: torch.profiler.record_function(name).__enter__. */
CTORCH_API ct_status ct_record_function_begin(const char *name);
/* Closes this thread's innermost range opened by ct_record_function_begin. Does nothing
   (CT_OK) while the profiler is off, as ct_record_function_begin.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_STATE while the profiler runs and this thread's innermost open event is
   not a range of ct_record_function_begin (none is open, or an op is running).
   Mirrors: torch.profiler.record_function.__exit__. */
CTORCH_API ct_status ct_record_function_end(void);

/* One row of the key averages: the events of one name (and, under record_shapes, one
   list of input shapes), summed. Strings live until the next ct_profiler_begin or
   ct_profiler_reset. Mirrors: torch.autograd.profiler_util.FunctionEventAvg. */
typedef struct ct_profiler_event_avg {
    const char *key;               /* the op or range name: "aten::add", "Optimizer.step#..." */
    const char *input_shapes;      /* "[[64, 784], [512, 784], [512]]" (one entry per tensor
                                      input, then a [] per scalar argument); "[]" for ranges
                                      and without record_shapes */
    int64_t count;                 /* # of Calls */
    double cpu_time_total_us;      /* sum of the durations */
    double self_cpu_time_total_us; /* sum of the self times */
    int64_t cpu_memory_usage;      /* bytes; profile_memory, else 0 */
    int64_t self_cpu_memory_usage; /* bytes; profile_memory, else 0 */
    double flops;                  /* with_flops, else 0 */
} ct_profiler_event_avg;

/* The recorded profile's key averages, in the order each key first started, into rows
   (the first cap of them).
   Returns: the number of rows of the profile (so (NULL, 0) counts them).
   Errors: CT_ERR_STATE while the profiler runs or when no profile was recorded; CT_ERR_VALUE
   for cap < 0; CT_ERR_NULL_ARG for NULL rows with cap > 0 (each returns 0).
   Mirrors: torch.profiler.profile.key_averages(group_by_input_shape=record_shapes). */
CTORCH_API int64_t ct_profiler_key_averages(ct_profiler_event_avg *rows, int64_t cap);

/* Writes the key averages as PyTorch's table into buf (at most n bytes, NUL-terminated):
   dashed lines, the columns Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
   avg, then CPU Mem and Self CPU Mem (profile_memory), # of Calls, Input Shapes
   (record_shapes) and Total <unit>FLOPs (with_flops, scaled by the smallest count), right
   aligned; then "Self CPU time total: ...". Times print as PyTorch's ("12.345us", "1.234ms",
   "1.234s"), percentages of the self CPU time total.
   sort_by: "self_cpu_time_total", "cpu_time_total", "count", "self_cpu_memory_usage",
   "cpu_memory_usage" or "flops", largest first (ties keep the order of first start);
   NULL: that order. row_limit: the rows printed (< 0: all).
   Returns: the length of the table (excluding the NUL), so (NULL, 0) sizes it; 0 on error.
   Errors: CT_ERR_STATE while the profiler runs or when no profile was recorded;
   CT_ERR_VALUE for another sort_by; CT_ERR_OOM.
   Mirrors: prof.key_averages().table(sort_by=..., row_limit=...). */
CTORCH_API size_t ct_profiler_table(char *buf, size_t n, const char *sort_by, int row_limit);
/* Writes the recorded profile in the Trace Event format that chrome://tracing and Perfetto
   open into buf (at most n bytes, NUL-terminated): {"traceEvents": [...]} with a
   "thread_name" metadata event per thread (tid 1 is the thread that began the profile,
   then in order of first event) and one complete event ("ph": "X") per event, "cat" as
   PyTorch's: "cpu_op" for ops and the autograd engine's ranges, "user_annotation" for
   user, optimizer and DataLoader ranges; "ts" and "dur" in microseconds from the begin,
   "args" with "Input Dims" (record_shapes) and "flops" (with_flops).
   Returns: the length (excluding the NUL); 0 on error.
   Errors: as ct_profiler_table (no sort_by). Mirrors: prof.export_chrome_trace. */
CTORCH_API size_t ct_profiler_chrome_trace(char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Prints ct_profiler_table's text to f.
   Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG, then as ct_profiler_table.
   Mirrors: print(prof.key_averages().table(sort_by=..., row_limit=...)). */
CTORCH_API ct_status ct_profiler_print_table(FILE *f, const char *sort_by, int row_limit);
/* Writes ct_profiler_chrome_trace's text to the file at path (replaced).
   Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_IO when the file cannot be written; then as
   ct_profiler_chrome_trace. Mirrors: torch.profiler.profile.export_chrome_trace(path). */
CTORCH_API ct_status ct_profiler_export_chrome_trace(const char *path);
#endif
