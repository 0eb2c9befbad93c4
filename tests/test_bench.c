/* tests/test_bench.c - Timer, Measurement and Compare (torch.utils.benchmark).
 *
 * Every input and expected value comes from tools/gen_golden_bench.py, which drives
 * torch.utils.benchmark with the same inputs (tests/golden/bench_golden.h): Measurements
 * built from raw times, Timers on a synthetic clock and the printed Compare tables.
 *
 * Timers run on the synthetic clock: the statement advances a fake time by scripted costs and
 * each clock read adds a scripted overhead, so block sizes, run counts and statistics are
 * exact. In Python: Timer(stmt="f.stmt()", globals={"f": f}, timer=f.clock) where
 *     f.clock(): f.now += reads[f.nr % len(reads)]; f.nr += 1; return f.now / 1e9
 *     f.stmt():  f.now += costs[f.nc % len(costs)]; f.nc += 1
 * and the printed texts are repr(Measurement) (minus its first line) and str(Compare) + "\n".
 */
#include "test.h"

#include "golden/bench_golden.h"

#include <float.h>
#include <stdlib.h>

/* ---- the synthetic clock ------------------------------------------------------------ */
typedef struct fake_clock {
    uint64_t now;               /* ns */
    const uint64_t *costs;      /* ns per stmt call, cycled */
    int n_costs;
    const uint64_t *reads;      /* ns added at each clock read, cycled */
    int n_reads;
    int64_t calls, clock_reads, setups;
    int threads_seen;           /* ct_get_num_threads() inside stmt */
} fake_clock;

static uint64_t fake_now(void *user)
{
    fake_clock *f = (fake_clock *)user;
    f->now += f->reads[f->clock_reads % f->n_reads];
    f->clock_reads++;
    return f->now;
}

static void fake_stmt(void *user)
{
    fake_clock *f = (fake_clock *)user;
    f->now += f->costs[f->calls % f->n_costs];
    f->calls++;
    f->threads_seen = ct_get_num_threads();
}

static void fake_setup(void *user)
{
    ((fake_clock *)user)->setups++;
}

static void fake_init(fake_clock *f, const uint64_t *costs, int n_costs, const uint64_t *reads,
                      int n_reads)
{
    memset(f, 0, sizeof *f);
    f->costs = costs;
    f->n_costs = n_costs;
    f->reads = reads;
    f->n_reads = n_reads;
}

static ct_timer *fake_timer(fake_clock *f, int num_threads)
{
    ct_timer_opts o;
    memset(&o, 0, sizeof o);
    o.stmt = fake_stmt;
    o.setup = fake_setup;
    o.user = f;
    o.stmt_name = "f.stmt()";
    o.num_threads = num_threads;
    o.clock_ns = fake_now;
    o.clock_user = f;
    return ct_timer_new(&o);
}

/* ---- checking against PyTorch ------------------------------------------------------- */
static void check_value(const char *name, const char *what, double got, double want, double tol)
{
    CHECK_MSG(fabs(got - want) <= tol, "%s: %s = %.17g, want %.17g (tol %g)", name, what, got,
              want, tol);
}

static void check_text(const char *name, const char *got, size_t len, const char *want)
{
    CHECK_MSG(len == strlen(want) && strcmp(got, want) == 0, "%s: got:\n%s\nwant:\n%s", name, got,
              want);
}

/* Checks the whole text of ct_measurement_str against `want`. */
static void check_measurement_text(const char *name, const ct_measurement *m, const char *want)
{
    char buf[1024];
    size_t len = ct_measurement_str(m, buf, sizeof buf);
    CHECK(len < sizeof buf);
    check_text(name, buf, len, want);
}

/* Checks every statistic of m, and its text, against PyTorch's Measurement. */
static void check_result(const char *name, const ct_measurement *m, const bench_golden_result *w)
{
    CHECK_MSG(m != NULL, "%s: no measurement (%s)", name, ct_error() ? ct_error() : "");
    if (!m) {
        return;
    }
    int64_t n = ct_measurement_number_of_runs(m), per_run = ct_measurement_number_per_run(m);
    CHECK_MSG(per_run == w->number_per_run && n == w->number_of_runs &&
              ct_measurement_num_threads(m) == w->num_threads, "%s: %lld x %lld runs, %d threads;"
              " want %lld x %lld, %d", name, (long long)n, (long long)per_run,
              ct_measurement_num_threads(m), (long long)w->number_of_runs,
              (long long)w->number_per_run, w->num_threads);
    if (n != w->number_of_runs || per_run != w->number_per_run) {
        return;
    }
    int close = CHECK_CLOSE(ct_measurement_raw_times(m), w->raw_times, n, 0, 0);
    close &= CHECK_CLOSE(ct_measurement_times(m), w->times, n, 0, 0);
    CHECK_MSG(close, "%s: raw_times / times", name);
    double median = ct_measurement_median(m), iqr = ct_measurement_iqr(m);
    /* the same arithmetic as PyTorch, bit for bit, but for the mean: torch.mean sums in
       another order, n rounding errors at most */
    check_value(name, "mean", ct_measurement_mean(m), w->mean, (double)n * DBL_EPSILON * w->mean);
    check_value(name, "median", median, w->median, 0);
    check_value(name, "iqr", iqr, w->iqr, 0);
    check_value(name, "iqr / median", iqr / median, w->iqr_over_median, 0);
    double total = 0;
    for (int64_t i = 0; i < n; i++) {
        total += ct_measurement_raw_times(m)[i];
    }
    check_value(name, "sum of raw_times", total, w->raw_total, 0);
    CHECK_MSG(ct_measurement_significant_figures(m) == w->significant_figures,
              "%s: %d significant figures, want %d", name, ct_measurement_significant_figures(m),
              w->significant_figures);
    CHECK_MSG(ct_measurement_has_warnings(m) == (w->has_warnings != 0), "%s: has_warnings", name);
    for (int k = 0; k < (int)(sizeof bench_thresholds / sizeof bench_thresholds[0]); k++) {
        bool meets = ct_measurement_meets_confidence(m, bench_thresholds[k]);
        CHECK_MSG(meets == ((w->meets_confidence >> k & 1u) != 0), "%s: meets_confidence(%g) %d",
                  name, bench_thresholds[k], (int)meets);
    }
    check_measurement_text(name, m, w->text);
}

/* Measurement(number_per_run, raw_times, TaskSpec(...)) of a golden case. */
static ct_measurement *golden_measurement(const bench_golden_measurement *g)
{
    ct_timer_opts o;
    memset(&o, 0, sizeof o);
    o.stmt_name = g->stmt;
    o.label = g->label;
    o.sub_label = g->sub_label;
    o.description = g->description;
    o.env = g->env;
    o.num_threads = g->num_threads;
    return ct_measurement_new(g->number_per_run, g->raw_times, g->n, g->has_spec ? &o : NULL);
}

/* ---- Measurements from raw times ---------------------------------------------------- */
static void test_bench_statistics(void)
{
    /* every case: statistics, significant figures, warnings and its printed text */
    for (int i = 0; i < BENCH_MEASUREMENTS_N; i++) {
        const bench_golden_measurement *g = bench_measurements[i];
        ct_measurement *m = golden_measurement(g);
        check_result(g->name, m, &g->want);
        ct_measurement_free(m);
    }
}

static void test_bench_measurement_print(void)
{
    const char *want = bench_m_matmul.want.text;
    ct_measurement *m = golden_measurement(&bench_m_matmul);
    /* asking for the size, then a short buffer: truncated and terminated */
    CHECK(ct_measurement_str(m, NULL, 0) == strlen(want));
    char small[8];
    CHECK(ct_measurement_str(m, small, sizeof small) == strlen(want));
    CHECK(strncmp(small, want, sizeof small - 1) == 0 && small[sizeof small - 1] == '\0');
    ct_measurement_free(m);
#ifndef CTORCH_NO_STDIO
    /* ct_measurement_print writes the same text */
    m = golden_measurement(&bench_m_mild_warning);
    FILE *f = tmpfile();
    if (f) {
        char back[512] = {0};
        CHECK(ct_measurement_print(m, f) == CT_OK);
        rewind(f);
        size_t got = fread(back, 1, sizeof back - 1, f);
        CHECK(got == ct_measurement_str(m, NULL, 0));
        check_text(bench_m_mild_warning.name, back, got, bench_m_mild_warning.want.text);
        fclose(f);
    }
    ct_measurement_free(m);
#endif
}

/* ---- timers on the synthetic clock -------------------------------------------------- */
static ct_measurement *run_golden_timer(ct_timer *t, const bench_golden_timer *g)
{
    switch (g->method) {
    case BENCH_TIMEIT:
        return ct_timer_timeit(t, g->number);
    case BENCH_BLOCKED_AUTORANGE:
        return ct_timer_blocked_autorange(t, g->min_run_time);
    default:
        return ct_timer_adaptive_autorange(t, g->threshold, g->min_run_time, g->max_run_time);
    }
}

/* Runs every golden timer of `method` twice on one timer (the clock restarted): the calls of
   stmt and setup, the clock reads and the Measurement are PyTorch's. */
static void check_golden_timers(int method)
{
    int cases = 0;
    for (int i = 0; i < BENCH_TIMERS_N; i++) {
        const bench_golden_timer *g = bench_timers[i];
        if (g->method != method) {
            continue;
        }
        cases++;
        fake_clock f;
        fake_init(&f, g->costs, g->n_costs, g->reads, g->n_reads);
        ct_timer *t = fake_timer(&f, g->num_threads);
        for (int rep = 0; rep < 2; rep++) {
            fake_init(&f, g->costs, g->n_costs, g->reads, g->n_reads);
            ct_measurement *m = run_golden_timer(t, g);
            CHECK_MSG(f.calls == g->calls && f.clock_reads == g->clock_reads &&
                      f.setups == g->setups, "%s: %lld calls, %lld clock reads, %lld setups; "
                      "want %lld, %lld, %lld", g->name, (long long)f.calls,
                      (long long)f.clock_reads, (long long)f.setups, (long long)g->calls,
                      (long long)g->clock_reads, (long long)g->setups);
            check_result(g->name, m, &g->want);
            ct_measurement_free(m);
        }
        ct_timer_free(t);
    }
    CHECK(cases > 0);
}

static void test_bench_timeit(void)
{
    check_golden_timers(BENCH_TIMEIT);
}

static void test_bench_blocked_autorange(void)
{
    check_golden_timers(BENCH_BLOCKED_AUTORANGE);
}

static void test_bench_adaptive_autorange(void)
{
    check_golden_timers(BENCH_ADAPTIVE_AUTORANGE);
}

static void test_bench_num_threads_restored(void)
{
    fake_clock f;
    fake_init(&f, bench_cost_1100ns, 1, bench_read_free, 1);
    CHECK(ct_set_num_threads(2) == CT_OK);
    int before = ct_get_num_threads(); /* 2 with the pool, 1 without (CTORCH_NO_THREADS) */
    ct_timer *t = fake_timer(&f, 3);
    ct_measurement *m = ct_timer_timeit(t, 10);
    CHECK(ct_measurement_num_threads(m) == 3);
    CHECK(f.threads_seen == (before == 2 ? 3 : 1));
    CHECK(ct_get_num_threads() == before);
    ct_measurement_free(m);
    m = ct_timer_blocked_autorange(t, 0.001);
    CHECK(ct_get_num_threads() == before);
    ct_measurement_free(m);
    m = ct_timer_adaptive_autorange(t, 0.1, 0.001, 0.01);
    CHECK(ct_get_num_threads() == before);
    CHECK(ct_measurement_num_threads(m) == 3);
    ct_measurement_free(m);
    ct_timer_free(t);
}

/* ---- Compare ------------------------------------------------------------------------ */
static void check_compare_text(const char *name, const ct_compare *c, const char *want)
{
    size_t need = ct_compare_str(c, NULL, 0);
    char *buf = (char *)malloc(need + 1);
    CHECK(buf != NULL);
    if (!buf) {
        return;
    }
    size_t len = ct_compare_str(c, buf, need + 1);
    CHECK(len == need);
    check_text(name, buf, len, want);
    free(buf);
}

/* The golden measurements gs[0..n) in ms; true when all were made. */
static bool golden_measurements(const bench_golden_measurement *const *gs, int n,
                                ct_measurement **ms)
{
    bool ok = true;
    for (int i = 0; i < n; i++) {
        ms[i] = golden_measurement(gs[i]);
        ok = ok && ms[i];
    }
    return ok;
}

static void free_measurements(ct_measurement **ms, int n)
{
    for (int i = 0; i < n; i++) {
        ct_measurement_free(ms[i]);
    }
}

static void test_bench_compare_table(void)
{
    /* 2 labels x 2 sub_labels x 2 thread counts x 2 descriptions; the first task comes in two
       pieces that Compare merges */
    ct_measurement *ms[BENCH_COMPARE_SET_N];
    CHECK(golden_measurements(bench_compare_set, BENCH_COMPARE_SET_N, ms));
    ct_compare *c = ct_compare_new(ms, BENCH_COMPARE_SET_N);
    check_compare_text("Compare(ms)", c, bench_compare_text_plain);
    ct_compare_trim_significant_figures(c);
    check_compare_text("trim_significant_figures", c, bench_compare_text_trimmed);
    ct_compare_highlight_warnings(c);
    check_compare_text("highlight_warnings", c, bench_compare_text_trimmed_highlighted);
    ct_compare_free(c);

    /* a missing cell, colors by column within a thread group, then by row */
    c = ct_compare_new(ms, BENCH_COMPARE_COLORIZED_N);
    ct_compare_colorize(c, false);
    check_compare_text("colorize()", c, bench_compare_text_colorized);
    ct_compare_colorize(c, true);
    check_compare_text("colorize(rowwise=True)", c, bench_compare_text_colorized_rowwise);
    ct_compare_free(c);
    free_measurements(ms, BENCH_COMPARE_SET_N);

    /* envs differ: the env column; a row named by its stmt; extend_results */
    ct_measurement *em[BENCH_COMPARE_ENV_N];
    CHECK(golden_measurements(bench_compare_env, BENCH_COMPARE_ENV_N, em));
    c = ct_compare_new(em, 1);
    CHECK(ct_compare_extend_results(c, em + 1, BENCH_COMPARE_ENV_N - 1) == CT_OK);
    check_compare_text("env", c, bench_compare_text_env);
#ifndef CTORCH_NO_STDIO
    FILE *f = tmpfile();
    if (f) {
        CHECK(ct_compare_print(c, f) == CT_OK);
        CHECK(ftell(f) == (long)ct_compare_str(c, NULL, 0));
        fclose(f);
    }
#endif
    ct_compare_free(c);
    free_measurements(em, BENCH_COMPARE_ENV_N);
    /* an empty compare prints an empty line, as print(str(Compare([]))) */
    c = ct_compare_new(NULL, 0);
    check_compare_text("Compare([])", c, bench_compare_text_empty);
    ct_compare_free(c);

    /* leading digits and trimmed figures in float32, as PyTorch */
    ct_measurement *xm[BENCH_COMPARE_EDGE_N];
    CHECK(golden_measurements(bench_compare_edge, BENCH_COMPARE_EDGE_N, xm));
    c = ct_compare_new(xm, BENCH_COMPARE_EDGE_N);
    check_compare_text("edge", c, bench_compare_text_edge);
    ct_compare_trim_significant_figures(c);
    check_compare_text("edge trimmed", c, bench_compare_text_edge_trimmed);
    ct_compare_free(c);
    free_measurements(xm, BENCH_COMPARE_EDGE_N);
}

/* ---- errors ------------------------------------------------------------------------- */
static void test_bench_errors(void)
{
    CHECK(ct_timer_new(NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_timer_new");
    ct_timer_opts o;
    memset(&o, 0, sizeof o);
    CHECK(ct_timer_new(&o) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_timer_new: opts->stmt is NULL");
    o.stmt = fake_stmt;
    o.num_threads = -1;
    CHECK(ct_timer_new(&o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "num_threads must be >= 0");

    CHECK(ct_timer_timeit(NULL, 10) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_timer_timeit");
    CHECK(ct_timer_blocked_autorange(NULL, 0.2) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_timer_blocked_autorange");
    CHECK(ct_timer_adaptive_autorange(NULL, 0.1, 0.01, 10) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_timer_adaptive_autorange");

    const uint64_t c1[1] = {1000};
    fake_clock f;
    fake_init(&f, c1, 1, NULL, 0);
    ct_timer *t = fake_timer(&f, 1);
    CHECK(ct_timer_timeit(t, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_timer_timeit: number must be positive, got 0");
    CHECK(ct_timer_blocked_autorange(t, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "min_run_time must be positive");
    CHECK(ct_timer_adaptive_autorange(t, 0.1, 0.01, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "max_run_time > 0");
    CHECK(ct_timer_adaptive_autorange(t, NAN, 0.01, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "threshold not NaN");
    CHECK(f.calls == 0);
    ct_timer_free(t);
    ct_timer_free(NULL);

    const double raw[2] = {1e-3, 2e-3}, bad[2] = {1e-3, -1.0};
    CHECK(ct_measurement_new(1, NULL, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_measurement_new");
    CHECK(ct_measurement_new(0, raw, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "number_per_run >= 1");
    CHECK(ct_measurement_new(1, raw, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "n >= 1");
    CHECK(ct_measurement_new(1, bad, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "times must be finite and positive, got -1 at index 1");
    CHECK(isnan(ct_measurement_median(NULL)));
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_measurement_median");
    CHECK(isnan(ct_measurement_mean(NULL)) && isnan(ct_measurement_iqr(NULL)));
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_measurement_mean");
    CHECK(ct_measurement_number_of_runs(NULL) == 0);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_measurement_number_of_runs");
    CHECK(ct_measurement_significant_figures(NULL) == 0);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_measurement_significant_figures");
    CHECK(ct_measurement_str(NULL, NULL, 0) == 0);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_measurement_str");
    ct_measurement_free(NULL);

    ct_measurement *m = ct_measurement_new(1, raw, 2, NULL);
    ct_measurement *two[2] = {m, NULL};
    CHECK(ct_compare_new(two, 2) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_compare_new: measurement 1 is NULL");
    CHECK(ct_compare_new(NULL, 1) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_compare_new");
    CHECK(ct_compare_new(two, -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "n must be >= 0");
    CHECK(ct_compare_extend_results(NULL, two, 1) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_compare_extend_results");
    CHECK(ct_compare_str(NULL, NULL, 0) == 0);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_compare_str");
#ifndef CTORCH_NO_STDIO
    CHECK(ct_compare_print(NULL, stdout) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_compare_print");
    CHECK(ct_measurement_print(m, NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_measurement_print");
#endif
    ct_compare_free(NULL);
    ct_measurement_free(m);
}

/* Times beyond float32's range, where PyTorch's float32 log10 overflows and raises: ctorch
   prints them (clamped), without undefined float-to-int conversions. */
static void test_bench_extreme_times(void)
{
    const double huge[4] = {1e300, 2e300, 3e300, 4e300}, tiny[4] = {1e-50, 2e-50, 3e-50, 4e-50};
    ct_measurement *ms[2] = {ct_measurement_new(1, huge, 4, NULL),
                             ct_measurement_new(1, tiny, 4, NULL)};
    CHECK(ms[0] && ms[1]);
    char buf[512];
    CHECK(ct_measurement_str(ms[0], buf, sizeof buf) > 0 && strstr(buf, " s\n") != NULL);
    CHECK(ct_measurement_significant_figures(ms[0]) == 1);
    CHECK(ct_measurement_str(ms[1], buf, sizeof buf) > 0);
    ct_compare *c = ct_compare_new(ms, 2);
    ct_compare_trim_significant_figures(c);
    CHECK(ct_compare_str(c, NULL, 0) > 0);
    ct_compare_free(c);
    free_measurements(ms, 2);
}

/* ---- the real clock ----------------------------------------------------------------- */
static void tiny_stmt(void *user)
{
    volatile double *x = (volatile double *)user;
    for (int i = 0; i < 100; i++) {
        *x = *x * 1.0000001 + 1e-9;
    }
}

static void test_bench_real_clock(void)
{
    volatile double x = 1.0;
    ct_timer_opts o;
    memset(&o, 0, sizeof o);
    o.stmt = tiny_stmt;
    o.user = (void *)&x;
    o.label = "tiny";
    ct_timer *t = ct_timer_new(&o);
    CHECK(t != NULL);
    ct_measurement *m = ct_timer_blocked_autorange(t, 0.01);
    CHECK(m && ct_measurement_median(m) > 0 && ct_measurement_median(m) < 1e-3);
    CHECK(ct_measurement_number_per_run(m) >= 1 && ct_measurement_number_of_runs(m) >= 1);
    char buf[512];
    CHECK(ct_measurement_str(m, buf, sizeof buf) > 0 && strncmp(buf, "tiny\n", 5) == 0);
    ct_measurement_free(m);
    m = ct_timer_timeit(t, 100);
    CHECK(m && ct_measurement_median(m) > 0);
    ct_measurement_free(m);
    m = ct_timer_adaptive_autorange(t, 0.5, 0.001, 0.2);
    CHECK(m && ct_measurement_median(m) > 0 && ct_measurement_number_of_runs(m) >= 4);
    ct_measurement_free(m);
    ct_timer_free(t);
}

void test_bench(void)
{
    RUN(test_bench_statistics);
    RUN(test_bench_measurement_print);
    RUN(test_bench_timeit);
    RUN(test_bench_blocked_autorange);
    RUN(test_bench_adaptive_autorange);
    RUN(test_bench_num_threads_restored);
    RUN(test_bench_compare_table);
    RUN(test_bench_errors);
    RUN(test_bench_extreme_times);
    RUN(test_bench_real_clock);
}
