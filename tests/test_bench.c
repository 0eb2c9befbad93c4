/* tests/test_bench.c - Timer, Measurement and Compare (torch.utils.benchmark).
 *
 * Timers run on a synthetic clock: the statement advances a fake time by scripted costs and
 * each clock read adds a scripted overhead, so block sizes, run counts and statistics are
 * exact. The expected values come from torch.utils.benchmark (torch 2.x) driven by the same
 * fake clock in Python: Timer(stmt="f.stmt()", globals={"f": f}, timer=f.clock) where
 *     f.clock(): f.now += reads[f.nr % len(reads)]; f.nr += 1; return f.now / 1e9
 *     f.stmt():  f.now += costs[f.nc % len(costs)]; f.nc += 1
 * and the printed texts are repr(Measurement) (minus its first line) and str(Compare) + "\n".
 */
#include "test.h"

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

static const uint64_t zero_reads[1] = {0};

static void fake_init(fake_clock *f, const uint64_t *costs, int n_costs, const uint64_t *reads,
                      int n_reads)
{
    memset(f, 0, sizeof *f);
    f->costs = costs;
    f->n_costs = n_costs;
    f->reads = reads ? reads : zero_reads;
    f->n_reads = reads ? n_reads : 1;
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

#define CHECK_REL(a, b, rtol) CHECK_NEAR(a, b, (rtol) * fabs((double)(b)))

/* Checks the whole text of ct_measurement_str and ct_compare_str against `want`. */
static void check_measurement_text(const ct_measurement *m, const char *want)
{
    char buf[1024];
    size_t len = ct_measurement_str(m, buf, sizeof buf);
    CHECK(len == strlen(want));
    CHECK_MSG(strcmp(buf, want) == 0, "got:\n%s\nwant:\n%s", buf, want);
}

static void check_compare_text(const ct_compare *c, const char *want)
{
    size_t need = ct_compare_str(c, NULL, 0);
    char *buf = (char *)malloc(need + 1);
    size_t len = ct_compare_str(c, buf, need + 1);
    CHECK(len == need && len == strlen(want));
    CHECK_MSG(strcmp(buf, want) == 0, "got:\n%s\nwant:\n%s", buf, want);
    free(buf);
}

static ct_timer_opts spec(const char *label, const char *sub_label, const char *description,
                          int num_threads)
{
    ct_timer_opts o;
    memset(&o, 0, sizeof o);
    o.label = label;
    o.sub_label = sub_label;
    o.description = description;
    o.num_threads = num_threads;
    return o;
}

/* ---- statistics --------------------------------------------------------------------- */
static void test_bench_statistics(void)
{
    const double raw[7] = {0.0243, 0.0251, 0.0239, 0.0262, 0.0247, 0.0244, 0.0290};
    ct_timer_opts o = spec("matmul", "[64, 64]", "float32", 1);
    ct_measurement *m = ct_measurement_new(10, raw, 7, &o);
    CHECK(m != NULL);
    CHECK(ct_measurement_number_per_run(m) == 10);
    CHECK(ct_measurement_number_of_runs(m) == 7);
    CHECK(ct_measurement_num_threads(m) == 1);
    CHECK_NEAR(ct_measurement_times(m)[6], 0.0029, 1e-18);
    CHECK_NEAR(ct_measurement_raw_times(m)[6], 0.0290, 0);
    /* t = numpy.array(raw) / 10: numpy.mean(t), numpy.median(t),
       numpy.percentile(t, 75) - numpy.percentile(t, 25) */
    CHECK_REL(ct_measurement_mean(m), 0.0025371428571428572, 1e-15);
    CHECK_REL(ct_measurement_median(m), 0.00247, 1e-15);
    CHECK_REL(ct_measurement_iqr(m), 0.00012999999999999991, 1e-12);
    CHECK(ct_measurement_significant_figures(m) == 1);
    CHECK(!ct_measurement_has_warnings(m)); /* IQR is 5.3% of the median */
    CHECK(ct_measurement_meets_confidence(m, 0.1));
    CHECK(!ct_measurement_meets_confidence(m, 0.05));
    ct_measurement_free(m);

    /* Measurement(1, times, spec).significant_figures */
    const double a[6] = {2.43e-3, 2.44e-3, 2.42e-3, 2.43e-3, 2.45e-3, 2.41e-3};
    const double b[8] = {1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6};
    const double c[4] = {1.0e-3, 1.5e-3, 2.0e-3, 2.5e-3};
    const double d[5] = {5e-05, 5.001e-05, 4.999e-05, 5.0002e-05, 5.0001e-05};
    const double e[4] = {1e-3, 1.0001e-3, 0.9999e-3, 1.00005e-3};
    const double *sets[5] = {a, b, c, d, e};
    const int64_t sizes[5] = {6, 8, 4, 5, 4};
    const int want_sf[5] = {2, 1, 1, 3, 4};
    for (int i = 0; i < 5; i++) {
        m = ct_measurement_new(1, sets[i], sizes[i], NULL);
        CHECK_MSG(ct_measurement_significant_figures(m) == want_sf[i], "set %d: %d sig figs, "
                  "want %d", i, ct_measurement_significant_figures(m), want_sf[i]);
        if (i == 0) {
            /* numpy.median(a), numpy.percentile(a, 75) - numpy.percentile(a, 25): the
               even-count median and interpolated quartiles */
            CHECK_REL(ct_measurement_median(m), 0.0024299999999999999, 1e-15);
            CHECK_REL(ct_measurement_iqr(m), 1.5000000000000256e-05, 1e-9);
            CHECK_REL(ct_measurement_mean(m), 0.0024299999999999999, 1e-15);
        }
        ct_measurement_free(m);
    }
}

/* ---- the printed Measurement -------------------------------------------------------- */
static void test_bench_measurement_print(void)
{
    const double raw[7] = {0.0243, 0.0251, 0.0239, 0.0262, 0.0247, 0.0244, 0.0290};
    ct_timer_opts o = spec("matmul", "[64, 64]", "float32", 1);
    ct_measurement *m = ct_measurement_new(10, raw, 7, &o);
    const char *want = "matmul: [64, 64]\n"
                       "float32\n"
                       "  Median: 2.47 ms\n"
                       "  IQR:    0.13 ms (2.44 to 2.56)\n"
                       "  7 measurements, 10 runs per measurement, 1 thread\n";
    check_measurement_text(m, want);
    /* asking for the size, then a short buffer: truncated and terminated */
    CHECK(ct_measurement_str(m, NULL, 0) == strlen(want));
    char small[8];
    CHECK(ct_measurement_str(m, small, sizeof small) == strlen(want));
    CHECK(strcmp(small, "matmul:") == 0);
    ct_measurement_free(m);

    /* Measurement(100, [3.1e-4, 3.3e-4], TaskSpec("x = 1\ny = 2", "pass", sub_label="small",
       num_threads=4)): multi-line stmt title, no IQR line under 4 runs */
    const double r2[2] = {3.1e-6 * 100, 3.3e-6 * 100};
    o = spec(NULL, "small", NULL, 4);
    o.stmt_name = "x = 1\ny = 2";
    m = ct_measurement_new(100, r2, 2, &o);
    check_measurement_text(m, "stmt: (small)\n"
                              "  x = 1\n"
                              "  y = 2\n"
                              "\n"
                              "  Median: 3.20 us\n"
                              "  2 measurements, 100 runs per measurement, 4 threads\n");
    ct_measurement_free(m);

    /* one run: no "Median: " and PyTorch's "runs ," */
    const double r3[1] = {5.5e-7 * 1000};
    o = spec(NULL, NULL, "d", 2);
    o.stmt_name = "f()";
    m = ct_measurement_new(1000, r3, 1, &o);
    check_measurement_text(m, "f()\n"
                              "d\n"
                              "  550.00 ns\n"
                              "  1 measurement, 1000 runs , 2 threads\n");
    ct_measurement_free(m);

    /* IQR / median 33%: the gross warning; seconds */
    const double r4[5] = {1.0, 1.2, 1.5, 2.0, 1.1};
    o = spec("slow", NULL, NULL, 1);
    m = ct_measurement_new(1, r4, 5, &o);
    CHECK(ct_measurement_has_warnings(m));
    check_measurement_text(m, "slow\n"
                              "  Median: 1.20 s\n"
                              "  IQR:    0.40 s (1.10 to 1.50)\n"
                              "  5 measurements, 1 runs per measurement, 1 thread\n"
                              "  WARNING: Interquartile range is 33.3% of the median measurement.\n"
                              "           This suggests significant environmental influence.\n");
    ct_measurement_free(m);

    /* an empty label and no stmt: the summary line stays, empty */
    const double r5[5] = {1.0, 1.05, 1.12, 1.2, 1.1};
    o = spec("", NULL, NULL, 0);
    m = ct_measurement_new(1, r5, 5, &o);
    check_measurement_text(m, "\n"
                              "  Median: 1.10 s\n"
                              "  IQR:    0.07 s (1.05 to 1.12)\n"
                              "  5 measurements, 1 runs per measurement, 1 thread\n");
    ct_measurement_free(m);

    /* 10% <= IQR / median < 25%: the milder warning */
    const double r6[4] = {1.0e-3, 1.2e-3, 0.95e-3, 1.1e-3};
    m = ct_measurement_new(1, r6, 4, NULL);
    check_measurement_text(m, "\n"
                              "  Median: 1.05 ms\n"
                              "  IQR:    0.14 ms (0.99 to 1.12)\n"
                              "  4 measurements, 1 runs per measurement, 1 thread\n"
                              "  WARNING: Interquartile range is 13.1% of the median measurement.\n"
                              "           This could indicate system fluctuation.\n");
#ifndef CTORCH_NO_STDIO
    FILE *f = tmpfile();
    if (f) {
        char back[512] = {0};
        CHECK(ct_measurement_print(m, f) == CT_OK);
        rewind(f);
        size_t got = fread(back, 1, sizeof back - 1, f);
        CHECK(got == ct_measurement_str(m, NULL, 0));
        CHECK(strncmp(back, "\n  Median: 1.05 ms\n", 19) == 0);
        fclose(f);
    }
#endif
    ct_measurement_free(m);
}

/* ---- timers on the synthetic clock -------------------------------------------------- */
static void test_bench_timeit(void)
{
    const uint64_t cost[1] = {1500};
    fake_clock f;
    fake_init(&f, cost, 1, NULL, 0);
    ct_timer *t = fake_timer(&f, 0);
    ct_measurement *m = ct_timer_timeit(t, 100);
    /* warmup max(100 // 100, 2) = 2 calls, then 100 timed; 2 clock reads per run */
    CHECK(f.calls == 102 && f.clock_reads == 4 && f.setups == 2);
    CHECK(ct_measurement_number_per_run(m) == 100);
    CHECK(ct_measurement_number_of_runs(m) == 1);
    CHECK_REL(ct_measurement_times(m)[0], 1.5e-6, 1e-12);
    CHECK_REL(ct_measurement_raw_times(m)[0], 1.5e-4, 1e-12);
    CHECK_REL(ct_measurement_median(m), 1.5e-6, 1e-12);
    CHECK(ct_measurement_iqr(m) == 0);
    CHECK(ct_measurement_num_threads(m) == 1); /* PyTorch's default num_threads=1 */
    ct_measurement_free(m);
    /* timeit(1000): 10 warmup calls */
    fake_init(&f, cost, 1, NULL, 0);
    m = ct_timer_timeit(t, 1000);
    CHECK(f.calls == 1010 && f.clock_reads == 4);
    ct_measurement_free(m);
    ct_timer_free(t);
}

static void test_bench_blocked_autorange(void)
{
    fake_clock f;
    /* 1.1 us per call, free clock: overhead is the 1 ns floor; 1000 calls (1.1 ms) is the
       first block >= 0.2 ms with overhead <= 1e-4; 182 blocks reach 0.2 s */
    const uint64_t c1[1] = {1100};
    fake_init(&f, c1, 1, NULL, 0);
    ct_timer *t = fake_timer(&f, 1);
    ct_measurement *m = ct_timer_blocked_autorange(t, 0.2);
    CHECK(ct_measurement_number_per_run(m) == 1000);
    CHECK(ct_measurement_number_of_runs(m) == 182);
    CHECK(f.calls == 183111 && f.clock_reads == 382);
    CHECK_REL(ct_measurement_median(m), 1.1e-6, 1e-9);
    CHECK_REL(ct_measurement_mean(m), 1.1e-6, 1e-9);
    CHECK_NEAR(ct_measurement_iqr(m), 0, 1e-18);
    ct_measurement_free(m);
    ct_timer_free(t);

    /* a 200 ns clock read: the overhead rule needs a 2 ms block -> 10000 calls, 19 blocks */
    const uint64_t r2[2] = {0, 200};
    fake_init(&f, c1, 1, r2, 2);
    t = fake_timer(&f, 1);
    m = ct_timer_blocked_autorange(t, 0.2);
    CHECK(ct_measurement_number_per_run(m) == 10000);
    CHECK(ct_measurement_number_of_runs(m) == 19);
    CHECK(f.calls == 201111 && f.clock_reads == 58);
    CHECK_REL(ct_measurement_median(m), 1.10002e-06, 1e-9);
    ct_measurement_free(m);
    ct_timer_free(t);

    /* 0.25 s per call with a 1 ms clock: one call already exceeds min_run_time -> block 1,
       one block */
    const uint64_t c3[1] = {250000000}, r3[1] = {1000000};
    fake_init(&f, c3, 1, r3, 1);
    t = fake_timer(&f, 1);
    m = ct_timer_blocked_autorange(t, 0.2);
    CHECK(ct_measurement_number_per_run(m) == 1);
    CHECK(ct_measurement_number_of_runs(m) == 1);
    CHECK(f.calls == 2 && f.clock_reads == 14);
    CHECK_REL(ct_measurement_median(m), 0.251, 1e-12);
    CHECK(ct_measurement_significant_figures(m) == 4);
    ct_measurement_free(m);
    ct_timer_free(t);

    /* varying costs and clock reads */
    const uint64_t c4[7] = {1000, 1200, 900, 1500, 1100, 1000, 1300};
    const uint64_t r4[6] = {0, 30, 0, 70, 0, 10};
    fake_init(&f, c4, 7, r4, 6);
    t = fake_timer(&f, 1);
    m = ct_timer_blocked_autorange(t, 0.05);
    CHECK(ct_measurement_number_per_run(m) == 1000);
    CHECK(ct_measurement_number_of_runs(m) == 44);
    CHECK(f.calls == 45111 && f.clock_reads == 106);
    CHECK_REL(ct_measurement_times(m)[0], 1.1429300000000001e-06, 1e-9);
    CHECK_REL(ct_measurement_times(m)[1], 1.1425699999999999e-06, 1e-9);
    CHECK_REL(ct_measurement_median(m), 1.1429300000000001e-06, 1e-9);
    CHECK_REL(ct_measurement_mean(m), 1.1428872727272727e-06, 1e-9);
    CHECK_REL(ct_measurement_iqr(m), 2.6999999999919443e-10, 1e-6);
    CHECK(ct_measurement_significant_figures(m) == 1);
    check_measurement_text(m, "f.stmt()\n"
                              "  Median: 1.14 us\n"
                              "  IQR:    0.00 us (1.14 to 1.14)\n"
                              "  44 measurements, 1000 runs per measurement, 1 thread\n");
    ct_measurement_free(m);
    ct_timer_free(t);
}

static void test_bench_adaptive_autorange(void)
{
    fake_clock f;
    const uint64_t c1[1] = {1100};
    /* constant times meet any threshold: stops after 4 blocks (more than 3) when
       min_run_time is already reached, else at min_run_time; blocks sized for 0.05 s */
    fake_init(&f, c1, 1, NULL, 0);
    ct_timer *t = fake_timer(&f, 1);
    ct_measurement *m = ct_timer_adaptive_autorange(t, 0.1, 0.0002, 10);
    CHECK(ct_measurement_number_per_run(m) == 100);
    CHECK(ct_measurement_number_of_runs(m) == 4);
    CHECK(f.calls == 511 && f.clock_reads == 24);
    ct_measurement_free(m);
    fake_init(&f, c1, 1, NULL, 0);
    m = ct_timer_adaptive_autorange(t, 0.1, 0.01, 10);
    CHECK(ct_measurement_number_of_runs(m) == 91);
    CHECK(f.calls == 9211 && f.clock_reads == 198);
    ct_measurement_free(m);
    ct_timer_free(t);

    /* blocks of 100 calls over a 300-call cost cycle: IQR / median is 17% after 4 blocks */
    static uint64_t cyc[300];
    for (int i = 0; i < 300; i++) {
        cyc[i] = i < 100 ? 1000 : i < 200 ? 1300 : 1100;
    }
    fake_init(&f, cyc, 300, NULL, 0);
    t = fake_timer(&f, 1);
    m = ct_timer_adaptive_autorange(t, 0.2, 0.0002, 0.01); /* 17% < 20%: stops at 4 */
    CHECK(ct_measurement_number_of_runs(m) == 4);
    CHECK(f.calls == 511 && f.clock_reads == 24);
    CHECK_REL(ct_measurement_median(m), 1.1835000000000002e-06, 1e-9);
    CHECK_REL(ct_measurement_mean(m), 1.1695e-06, 1e-9);
    CHECK_REL(ct_measurement_iqr(m), 2.0300000000000022e-07, 1e-6);
    CHECK_REL(ct_measurement_iqr(m) / ct_measurement_median(m), 0.17152513730460514, 1e-6);
    ct_measurement_free(m);
    fake_init(&f, cyc, 300, NULL, 0);
    m = ct_timer_adaptive_autorange(t, 0.05, 0.0002, 0.01); /* never below 5%: max_run_time */
    CHECK(ct_measurement_number_of_runs(m) == 89);
    CHECK(f.calls == 9011 && f.clock_reads == 194);
    CHECK_REL(ct_measurement_median(m), 1.0890000000000033e-06, 1e-9);
    CHECK_REL(ct_measurement_mean(m), 1.1344606741573031e-06, 1e-9);
    CHECK_REL(ct_measurement_iqr(m), 2.4499999999999363e-07, 1e-6);
    double total = 0;
    for (int64_t i = 0; i < ct_measurement_number_of_runs(m); i++) {
        total += ct_measurement_raw_times(m)[i];
    }
    CHECK_REL(total, 0.0100967, 1e-9); /* the first total past 0.01 s */
    ct_measurement_free(m);
    ct_timer_free(t);
}

static void test_bench_num_threads_restored(void)
{
    const uint64_t c1[1] = {1100};
    fake_clock f;
    fake_init(&f, c1, 1, NULL, 0);
    CHECK(ct_set_num_threads(2) == CT_OK);
    int before = ct_get_num_threads(); /* 2 with OpenMP, 1 without */
    ct_timer *t = fake_timer(&f, 3);
    ct_measurement *m = ct_timer_timeit(t, 10);
    CHECK(ct_measurement_num_threads(m) == 3);
#ifdef _OPENMP
    CHECK(f.threads_seen == 3);
#endif
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
/* 2 labels x 2 sub_labels x 2 thread counts x 2 descriptions; times per call are base / 10
   with the factors F (NOISY for one). The first task comes in two pieces (runs of 10 and
   20 calls) that Compare merges. */
static int make_compare_set(ct_measurement **ms)
{
    static const double F[5] = {1.0, 1.02, 0.99, 1.01, 0.97};
    static const double NOISY[5] = {1.0, 1.3, 0.8, 1.1, 0.9};
    static const char *labels[2] = {"matmul", "add"};
    static const char *subs[2] = {"[64, 64]", "[256, 256]"};
    static const char *descs[2] = {"float32", "float64"};
    static const int threads[2] = {1, 4};
    /* base[label][sub][threads][desc] */
    static const double base[2][2][2][2] = {
        {{{2.1e-5, 4.3e-5}, {8.0e-6, 1.5e-5}}, {{1.2e-3, 2.5e-3}, {3.3e-4, 6.8e-4}}},
        {{{1.1e-6, 1.3e-6}, {1.6e-6, 1.7e-6}}, {{1.5e-5, 2.9e-5}, {6.0e-6, 1.1e-5}}}};
    int n = 0;
    for (int l = 0; l < 2; l++) {
        for (int s = 0; s < 2; s++) {
            for (int h = 0; h < 2; h++) {
                for (int d = 0; d < 2; d++) {
                    double b = base[l][s][h][d];
                    const double *fac = (l == 1 && s == 1 && h == 1 && d == 1) ? NOISY : F;
                    ct_timer_opts o = spec(labels[l], subs[s], descs[d], threads[h]);
                    double raw[5];
                    if (l == 0 && s == 0 && h == 0 && d == 0) {
                        for (int i = 0; i < 3; i++) {
                            raw[i] = b * fac[i];
                        }
                        ms[n++] = ct_measurement_new(10, raw, 3, &o);
                        for (int i = 0; i < 2; i++) {
                            raw[i] = b * fac[3 + i] * 2;
                        }
                        ms[n++] = ct_measurement_new(20, raw, 2, &o);
                    } else {
                        for (int i = 0; i < 5; i++) {
                            raw[i] = b * fac[i];
                        }
                        ms[n++] = ct_measurement_new(10, raw, 5, &o);
                    }
                }
            }
        }
    }
    return n;
}

static void test_bench_compare_table(void)
{
    ct_measurement *ms[17];
    int n = make_compare_set(ms);
    CHECK(n == 17);
    /* Compare(ms); str(c) + "\n" */
    ct_compare *c = ct_compare_new(ms, n);
    check_compare_text(c, "[---------------- matmul ----------------]\n"
                          "                  |  float32   |  float64 \n"
                          "1 threads: -------------------------------\n"
                          "      [64, 64]    |    2100.0  |    4300.0\n"
                          "      [256, 256]  |  120000.0  |  250000.0\n"
                          "4 threads: -------------------------------\n"
                          "      [64, 64]    |     800.0  |    1500.0\n"
                          "      [256, 256]  |   33000.0  |   68000.0\n"
                          "\n"
                          "Times are in nanoseconds (ns).\n"
                          "\n"
                          "[---------------- add -----------------]\n"
                          "                  |  float32  |  float64\n"
                          "1 threads: -----------------------------\n"
                          "      [64, 64]    |    110.0  |    130.0\n"
                          "      [256, 256]  |   1500.0  |   2900.0\n"
                          "4 threads: -----------------------------\n"
                          "      [64, 64]    |    160.0  |    170.0\n"
                          "      [256, 256]  |    600.0  |   1100.0\n"
                          "\n"
                          "Times are in nanoseconds (ns).\n"
                          "\n");
    /* c.trim_significant_figures() */
    ct_compare_trim_significant_figures(c);
    const char *matmul_trimmed = "[--------------- matmul ---------------]\n"
                                 "                  |  float32  |  float64\n"
                                 "1 threads: -----------------------------\n"
                                 "      [64, 64]    |     2000  |     4300\n"
                                 "      [256, 256]  |   120000  |   250000\n"
                                 "4 threads: -----------------------------\n"
                                 "      [64, 64]    |      800  |     2000\n"
                                 "      [256, 256]  |    33000  |    68000\n"
                                 "\n"
                                 "Times are in nanoseconds (ns).\n"
                                 "\n";
    char want[4096];
    snprintf(want, sizeof want, "%s%s", matmul_trimmed,
             "[---------------- add -----------------]\n"
             "                  |  float32  |  float64\n"
             "1 threads: -----------------------------\n"
             "      [64, 64]    |     100   |     100 \n"
             "      [256, 256]  |    2000   |    2900 \n"
             "4 threads: -----------------------------\n"
             "      [64, 64]    |     200   |     200 \n"
             "      [256, 256]  |     600   |    1000 \n"
             "\n"
             "Times are in nanoseconds (ns).\n"
             "\n");
    check_compare_text(c, want);
    /* c.trim_significant_figures(); c.highlight_warnings() */
    ct_compare_highlight_warnings(c);
    snprintf(want, sizeof want, "%s%s", matmul_trimmed,
             "[------------------- add -------------------]\n"
             "                  |  float32  |    float64   \n"
             "1 threads: ----------------------------------\n"
             "      [64, 64]    |     100   |   100        \n"
             "      [256, 256]  |    2000   |  2900        \n"
             "4 threads: ----------------------------------\n"
             "      [64, 64]    |     200   |   200        \n"
             "      [256, 256]  |     600   |  1000 (! 20%)\n"
             "\n"
             "Times are in nanoseconds (ns).\n"
             "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
             "\n");
    check_compare_text(c, want);
    ct_compare_free(c);

    /* Compare(ms[:8]).colorize(): a missing cell, colors by column within a thread group */
    c = ct_compare_new(ms, 8);
    ct_compare_colorize(c, false);
    check_compare_text(c, "[---------------- matmul ----------------]\n"
                          "                  |  float32   |  float64 \n"
                          "1 threads: -------------------------------\n"
                          "      [64, 64]    |  \033[92m\033[1m  2100.0\033[0m\033[0m  |  "
                          "\033[92m\033[1m  4300.0\033[0m\033[0m\n"
                          "      [256, 256]  |  \033[31m\033[1m120000.0\033[0m\033[0m  |  "
                          "\033[31m\033[1m250000.0\033[0m\033[0m\n"
                          "4 threads: -------------------------------\n"
                          "      [64, 64]    |  \033[92m\033[1m   800.0\033[0m\033[0m  |  "
                          "\033[92m\033[1m  1500.0\033[0m\033[0m\n"
                          "      [256, 256]  |  \033[31m\033[1m 33000.0\033[0m\033[0m  |  "
                          "        \n"
                          "\n"
                          "Times are in nanoseconds (ns).\n"
                          "\n");
    /* c.colorize(rowwise=True) */
    ct_compare_colorize(c, true);
    check_compare_text(c, "[---------------- matmul ----------------]\n"
                          "                  |  float32   |  float64 \n"
                          "1 threads: -------------------------------\n"
                          "      [64, 64]    |  \033[92m\033[1m  2100.0\033[0m\033[0m  |  "
                          "\033[2m\033[91m  4300.0\033[0m\033[0m\n"
                          "      [256, 256]  |  \033[92m\033[1m120000.0\033[0m\033[0m  |  "
                          "\033[2m\033[91m250000.0\033[0m\033[0m\n"
                          "4 threads: -------------------------------\n"
                          "      [64, 64]    |  \033[92m\033[1m   800.0\033[0m\033[0m  |  "
                          "  1500.0\n"
                          "      [256, 256]  |  \033[92m\033[1m 33000.0\033[0m\033[0m  |  "
                          "        \n"
                          "\n"
                          "Times are in nanoseconds (ns).\n"
                          "\n");
    ct_compare_free(c);
    for (int i = 0; i < n; i++) {
        ct_measurement_free(ms[i]);
    }

    /* envs differ: the env column; a row named by its stmt; extend_results */
    const double e1[4] = {2e-3, 2.1e-3, 1.9e-3, 2.05e-3}, e2[4] = {3e-3, 3.1e-3, 2.9e-3, 3.05e-3};
    const double e3[1] = {1e-3};
    ct_timer_opts o = spec("env", "x", "a", 0);
    o.env = "A";
    ct_measurement *em[3];
    em[0] = ct_measurement_new(1, e1, 4, &o);
    o.env = "B";
    o.description = "b";
    em[1] = ct_measurement_new(1, e2, 4, &o);
    o.env = "long_env";
    o.description = "a";
    o.sub_label = NULL;
    o.stmt_name = "f(x)";
    em[2] = ct_measurement_new(1, e3, 1, &o);
    c = ct_compare_new(em, 1);
    CHECK(ct_compare_extend_results(c, em + 1, 2) == CT_OK);
    check_compare_text(c, "[------------- env --------------]\n"
                          "                    |   a   |   b \n"
                          "1 threads: -----------------------\n"
                          "  (A)         x     |  2.0  |     \n"
                          "  (B)         x     |       |  3.0\n"
                          "  (long_env)  f(x)  |  1.0  |     \n"
                          "\n"
                          "Times are in milliseconds (ms).\n"
                          "\n");
#ifndef CTORCH_NO_STDIO
    FILE *f = tmpfile();
    if (f) {
        CHECK(ct_compare_print(c, f) == CT_OK);
        CHECK(ftell(f) == (long)ct_compare_str(c, NULL, 0));
        fclose(f);
    }
#endif
    ct_compare_free(c);
    for (int i = 0; i < 3; i++) {
        ct_measurement_free(em[i]);
    }
    /* an empty compare prints an empty line, as print(str(Compare([]))) */
    c = ct_compare_new(NULL, 0);
    check_compare_text(c, "\n");
    ct_compare_free(c);
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
    RUN(test_bench_real_clock);
}
