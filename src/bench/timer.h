/* bench/timer.h - benchmark timers (DESIGN §10): Timer, Measurement and Compare, as in
 * torch.utils.benchmark.
 *
 * A ct_timer runs a statement callback many times and returns a ct_measurement: the time of
 * each run of `number_per_run` calls, with the median, IQR and mean per call. ct_compare
 * prints many measurements as one table per label. Times are in seconds everywhere.
 *     static void stmt(void *user) { ct_free(ct_matmul((ct_tensor *)user, (ct_tensor *)user)); }
 *     ct_timer_opts o = {0};
 *     o.stmt = stmt; o.user = x; o.label = "matmul"; o.sub_label = "[64, 64]";
 *     ct_timer *t = ct_timer_new(&o);
 *     ct_measurement *m = ct_timer_blocked_autorange(t, 0.2);
 *     ct_measurement_print(m, stdout);
 *     ct_measurement_free(m);
 *     ct_timer_free(t);
 * Statistics match PyTorch's: the median and quartiles use linear interpolation between
 * the sorted per-call times (numpy.percentile's default, torch.quantile's 'linear').
 * Thread safety: a timer and the measurements are not locked; use each from one thread at
 * a time. A timer changes the global intra-op thread count while it measures.
 */

typedef struct ct_timer ct_timer;
typedef struct ct_measurement ct_measurement;
typedef struct ct_compare ct_compare;

/* How a ct_timer runs and labels a statement. Zero means default for every field, so
   `ct_timer_opts o = {0};` (C) or `ct_timer_opts o = {};` (C++) then setting stmt is
   enough. Strings are copied by ct_timer_new; NULL means "not given" (Python's None).
     field        default              meaning
     stmt         (required)           the statement, called stmt(user) `number` times a run
     setup        NULL (none)          called setup(user) once before each run, not timed
     user         NULL                 passed to stmt and setup
     stmt_name    NULL ("")            the statement's text, PyTorch's `stmt` string: shown
                                       when label is NULL, row name when sub_label is NULL
     label        NULL                 Compare groups tables by label; the title line
     sub_label    NULL                 Compare's row name, after "label: " in the title
     description  NULL                 Compare's column; its own line in the print
     env          NULL                 Compare: tells apart otherwise identical rows
     num_threads  0 (1 thread)         intra-op threads while measuring (>= 0); PyTorch's
                                       default is also 1
     clock_ns     NULL (monotonic)     a clock in nanoseconds: clock_gettime(
                                       CLOCK_MONOTONIC) on POSIX, else C11 timespec_get;
                                       required under CTORCH_NO_STDIO
     clock_user   NULL                 passed to clock_ns
   Mirrors: torch.utils.benchmark.Timer(stmt, setup, timer, label, sub_label, description,
   env, num_threads); stmt/setup are callbacks instead of source strings. */
typedef struct ct_timer_opts {
    void (*stmt)(void *user);
    void (*setup)(void *user);
    void *user;
    const char *stmt_name;
    const char *label;
    const char *sub_label;
    const char *description;
    const char *env;
    int num_threads;
    uint64_t (*clock_ns)(void *clock_user);
    void *clock_user;
} ct_timer_opts;

/* A new timer for opts->stmt (opts is read, its strings copied).
   Returns: a new timer, freed with ct_timer_free; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL opts or opts->stmt; CT_ERR_VALUE for num_threads < 0;
   CT_ERR_UNSUPPORTED when clock_ns is NULL and the build has no default clock
   (CTORCH_NO_STDIO); CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.__init__. */
CTORCH_API ct_timer *ct_timer_new(const ct_timer_opts *opts);
/* Frees a timer; NULL is a no-op. Measurements it returned stay valid. */
CTORCH_API void ct_timer_free(ct_timer *t);

/* Runs stmt max(number / 100, 2) times as a warmup, then once more `number` times in one
   timed run (setup, then the clock, the calls, the clock), with the intra-op thread count
   set to the timer's num_threads and restored afterwards.
   Units: a run takes at least 1 ns (PyTorch's floor).
   Returns: a new measurement of 1 run with number_per_run = number, freed with
   ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for number < 1; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.timeit. */
CTORCH_API ct_measurement *ct_timer_timeit(ct_timer *t, int64_t number);
/* Chooses a block size, then times blocks of that many calls until their total time
   reaches min_run_time_s. The block size: with `overhead` the median of 5 empty runs,
   number = 1, 10, 100 ... until a run of `number` calls takes >= min_run_time_s / 1000
   with overhead / time <= 1e-4, or takes > min_run_time_s, or number * 10 would pass
   2^31 - 1. Those runs are the warmup; the measurement holds only the blocks.
   Units: seconds (PyTorch's default min_run_time is 0.2).
   Returns: a new measurement (number_per_run = the block size), freed with
   ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE unless min_run_time_s > 0; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.blocked_autorange. */
CTORCH_API ct_measurement *ct_timer_blocked_autorange(ct_timer *t, double min_run_time_s);
/* Like blocked_autorange with the block size chosen for 0.05 s, but keeps timing blocks
   until, after more than 3 blocks and at least min_run_time_s in total, IQR / median of the
   times is below threshold; or stops once the total passes max_run_time_s.
   Units: seconds (PyTorch's defaults: threshold 0.1, min_run_time 0.01, max_run_time 10).
   Returns: a new measurement, freed with ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for a NaN threshold, min_run_time_s < 0 or
   max_run_time_s <= 0 (PyTorch reads 0 as "no limit"; ctorch always needs one); CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.adaptive_autorange. */
CTORCH_API ct_measurement *ct_timer_adaptive_autorange(ct_timer *t, double threshold,
                                                       double min_run_time_s,
                                                       double max_run_time_s);

/* A measurement from times taken elsewhere: n runs of number_per_run calls each.
   spec gives the labels and num_threads (its callbacks are ignored; NULL: no labels, 1
   thread). Copies raw_times_s and the strings.
   Units: raw_times_s in seconds per run (all runs of number_per_run calls).
   Returns: a new measurement, freed with ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL raw_times_s; CT_ERR_VALUE for number_per_run < 1,
   n < 1, a time that is not finite and > 0, or spec->num_threads < 0; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Measurement(number_per_run, raw_times, task_spec). */
CTORCH_API ct_measurement *ct_measurement_new(int64_t number_per_run, const double *raw_times_s,
                                              int64_t n, const ct_timer_opts *spec);
/* Frees a measurement; NULL is a no-op. */
CTORCH_API void ct_measurement_free(ct_measurement *m);

/* Calls per run (the block size). 0 (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.number_per_run. */
CTORCH_API int64_t ct_measurement_number_per_run(const ct_measurement *m);
/* Number of runs (replicates) measured. 0 (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: len(Measurement.times). */
CTORCH_API int64_t ct_measurement_number_of_runs(const ct_measurement *m);
/* The intra-op thread count the measurement was taken with. 0 (and CT_ERR_NULL_ARG) for
   NULL. Mirrors: Measurement.num_threads. */
CTORCH_API int ct_measurement_num_threads(const ct_measurement *m);
/* Seconds per call of each run, in run order (raw time / number_per_run); the array has
   ct_measurement_number_of_runs entries and lives as long as m. NULL (and CT_ERR_NULL_ARG)
   for NULL. Mirrors: Measurement.times. */
CTORCH_API const double *ct_measurement_times(const ct_measurement *m);
/* Seconds per run, in run order. Mirrors: Measurement.raw_times. */
CTORCH_API const double *ct_measurement_raw_times(const ct_measurement *m);
/* Mean of the per-call times, in seconds. NaN (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.mean. */
CTORCH_API double ct_measurement_mean(const ct_measurement *m);
/* Median of the per-call times, in seconds (the mean of the middle two for an even count).
   NaN (and CT_ERR_NULL_ARG) for NULL. Mirrors: Measurement.median. */
CTORCH_API double ct_measurement_median(const ct_measurement *m);
/* Interquartile range of the per-call times, p75 - p25, in seconds, each percentile
   interpolated linearly (numpy.percentile(times, 75) - numpy.percentile(times, 25)).
   NaN (and CT_ERR_NULL_ARG) for NULL. Mirrors: Measurement.iqr. */
CTORCH_API double ct_measurement_iqr(const ct_measurement *m);
/* Estimated significant figures of the median, 1..4: with the sorted times' middle half
   (indices n/4 up to ceil(3n/4)), ci = max(1.645 * std / sqrt(count), 25 ns) and the
   result floor(log10(median / ci)) clamped to [1, 4]; the std, sqrt and log10 in float32,
   as PyTorch's. 0 (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.significant_figures. */
CTORCH_API int ct_measurement_significant_figures(const ct_measurement *m);
/* Whether IQR / median < threshold. false (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.meets_confidence. */
CTORCH_API bool ct_measurement_meets_confidence(const ct_measurement *m, double threshold);
/* Whether IQR / median >= 0.1, which adds a WARNING to the print.
   Mirrors: Measurement.has_warnings. */
CTORCH_API bool ct_measurement_has_warnings(const ct_measurement *m);

/* Writes the text PyTorch's repr(Measurement) shows, without its first line (the object
   address), ending in a newline as print(m) does:
       matmul: [64, 64]
       Median: 2.43 ms
       IQR:    0.01 ms (2.42 to 2.43)
       4 measurements, 100 runs per measurement, 1 thread
   (each line after the title indented by 2). The unit (ns, us, ms, s) follows the median;
   the IQR line appears from 4 runs on; WARNING lines when IQR / median >= 0.1.
   buf may be NULL (n 0) to ask for the size; a short buf gets a truncated text.
   Returns: the length of the whole text without the final NUL (like snprintf); 0 on error.
   Errors: CT_ERR_NULL_ARG for a NULL m; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Measurement.__repr__. */
CTORCH_API size_t ct_measurement_str(const ct_measurement *m, char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Writes ct_measurement_str's text to f. Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_IO when the write fails; CT_ERR_OOM.
   Mirrors: print(measurement). */
CTORCH_API ct_status ct_measurement_print(const ct_measurement *m, FILE *f);
#endif

/* A table of measurements. Copies the n measurements (they may be freed afterwards).
   Measurements with identical labels, env and num_threads are merged (their per-call times
   pooled) when printed, as PyTorch's Measurement.merge.
   Returns: a new compare, freed with ct_compare_free; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL ms with n > 0 or a NULL entry; CT_ERR_VALUE for n < 0;
   CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Compare(results). */
CTORCH_API ct_compare *ct_compare_new(ct_measurement *const *ms, int n);
/* Appends copies of n more measurements. Returns: CT_OK or the error code.
   Errors: as ct_compare_new, and CT_ERR_NULL_ARG for a NULL c.
   Mirrors: Compare.extend_results. */
CTORCH_API ct_status ct_compare_extend_results(ct_compare *c, ct_measurement *const *ms, int n);
/* Prints each value with the significant figures its measurement supports (see
   ct_measurement_significant_figures) instead of one decimal. Mirrors:
   Compare.trim_significant_figures. */
CTORCH_API void ct_compare_trim_significant_figures(ct_compare *c);
/* Colors cells with ANSI escapes against the best (lowest) median of their column within
   each thread-count group, or of their row when rowwise: green bold within 1% (or 100 ns),
   blue bold within 10%, dim red from 2x, red bold from 5x. Mirrors: Compare.colorize. */
CTORCH_API void ct_compare_colorize(ct_compare *c, bool rowwise);
/* Appends " (! XX%)" (IQR / median in percent) to cells of measurements with warnings, and
   a footnote. Mirrors: Compare.highlight_warnings. */
CTORCH_API void ct_compare_highlight_warnings(ct_compare *c);
/* Writes the tables as str(Compare) then a newline, as Compare.print() does: one table per
   label, in order of first appearance, separated by an empty line:
       [--------------- add ----------------]
                       |  float32  |  float64
       1 threads: ---------------------------
             [64, 64]  |   110.0   |   130.0
       4 threads: ---------------------------
             [64, 64]  |   160.0   |   170.0

       Times are in nanoseconds (ns).
   Columns are descriptions, rows sub_labels (else stmt_name, else "[Unknown]"), grouped by
   num_threads; one unit per table, chosen from its smallest median. buf may be NULL (n 0)
   to ask for the size; a short buf gets a truncated text.
   Returns: the length of the whole text without the final NUL; 0 on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_OOM.
   Mirrors: str(torch.utils.benchmark.Compare). */
CTORCH_API size_t ct_compare_str(const ct_compare *c, char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Writes ct_compare_str's text to f. Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_IO when the write fails; CT_ERR_OOM.
   Mirrors: Compare.print. */
CTORCH_API ct_status ct_compare_print(const ct_compare *c, FILE *f);
#endif
/* Frees a compare (and its copies); NULL is a no-op. */
CTORCH_API void ct_compare_free(ct_compare *c);
