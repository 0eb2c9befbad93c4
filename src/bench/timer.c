/* bench/timer.c - Timer, Measurement and Compare (torch.utils.benchmark).
 *
 * Everything mirrors torch/utils/benchmark/utils/{timer,common,compare}.py: the block-size
 * search and measurement loops of Timer, Measurement's statistics and repr, and Compare's
 * table layout (Python's str.center/ljust padding included), so the printed text is the
 * same byte for byte. Determinism: statistics are computed in float64 from the sorted
 * times, and in float32 where PyTorch makes float32 tensors of them (significant figures,
 * time units, trimmed figures, column digits), so the same times always give the same
 * numbers and text, PyTorch's.
 */
#include "../core/internal.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h> /* vsnprintf; FILE only without CTORCH_NO_STDIO */

CT__GLUE_BEGIN

/* The measured task: PyTorch's TaskSpec without the setup strings. Strings are owned
   copies, NULL when not given. */
typedef struct ct__bench_spec {
    char *stmt, *label, *sub_label, *description, *env;
    int num_threads;
} ct__bench_spec;

struct ct_timer {
    void (*stmt)(void *user);
    void (*setup)(void *user);
    void *user;
    uint64_t (*clock_ns)(void *clock_user);
    void *clock_user;
    ct__bench_spec spec;
};

struct ct_measurement {
    ct__bench_spec spec;
    int64_t number_per_run;
    int64_t n;
    double *raw;    /* seconds per run, run order */
    double *times;  /* seconds per call, run order */
    double *sorted; /* times, ascending */
    double median, mean, p25, p75;
};

struct ct_compare {
    ct_measurement **ms;
    int64_t n, cap;
    bool trim, highlight;
    int colorize; /* 0 none, 1 columnwise, 2 rowwise */
};

/* ---- strings ------------------------------------------------------------------------ */
static CT__UNUSED char *ct__bench_strdup(const char *s, bool *oom)
{
    if (!s) {
        return NULL;
    }
    size_t len = strlen(s);
    char *p = (char *)ct__malloc(len + 1);
    if (!p) {
        *oom = true;
        return NULL;
    }
    memcpy(p, s, len + 1);
    return p;
}

static CT__UNUSED void ct__bench_spec_free(ct__bench_spec *s)
{
    ct__free(s->stmt);
    ct__free(s->label);
    ct__free(s->sub_label);
    ct__free(s->description);
    ct__free(s->env);
}

/* Copies the strings of src into dst; false on out of memory (dst then holds nothing). */
static CT__UNUSED bool ct__bench_spec_copy(ct__bench_spec *dst, const char *stmt,
                                           const char *label, const char *sub_label,
                                           const char *description, const char *env,
                                           int num_threads)
{
    bool oom = false;
    dst->stmt = ct__bench_strdup(stmt, &oom);
    dst->label = ct__bench_strdup(label, &oom);
    dst->sub_label = ct__bench_strdup(sub_label, &oom);
    dst->description = ct__bench_strdup(description, &oom);
    dst->env = ct__bench_strdup(env, &oom);
    dst->num_threads = num_threads;
    if (oom) {
        ct__bench_spec_free(dst);
        memset(dst, 0, sizeof *dst);
    }
    return !oom;
}

static CT__UNUSED bool ct__bench_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static CT__UNUSED bool ct__bench_spec_eq(const ct__bench_spec *a, const ct__bench_spec *b)
{
    return a->num_threads == b->num_threads && ct__bench_str_eq(a->stmt, b->stmt) &&
           ct__bench_str_eq(a->label, b->label) && ct__bench_str_eq(a->sub_label, b->sub_label) &&
           ct__bench_str_eq(a->description, b->description) && ct__bench_str_eq(a->env, b->env);
}

/* A growing text buffer; `oom` is sticky. */
typedef struct ct__bench_buf {
    char *p;
    size_t len, cap;
    bool oom;
} ct__bench_buf;

static CT__UNUSED void ct__bench_putn(ct__bench_buf *b, const char *s, size_t n)
{
    if (b->oom) {
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *q = (char *)ct__realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static CT__UNUSED void ct__bench_puts(ct__bench_buf *b, const char *s)
{
    ct__bench_putn(b, s, strlen(s));
}

static CT__UNUSED void ct__bench_fill(ct__bench_buf *b, char c, int64_t count)
{
    char chunk[64];
    memset(chunk, c, sizeof chunk);
    while (count > 0) {
        size_t k = count > 64 ? 64 : (size_t)count;
        ct__bench_putn(b, chunk, k);
        count -= (int64_t)k;
    }
}

static CT__UNUSED
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    void ct__bench_printf(ct__bench_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0) {
        return;
    }
    if ((size_t)k < sizeof small) {
        ct__bench_putn(b, small, (size_t)k);
        return;
    }
    char *big = (char *)ct__malloc((size_t)k + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)k + 1, fmt, ap);
    va_end(ap);
    ct__bench_putn(b, big, (size_t)k);
    ct__free(big);
}

/* Display width of UTF-8 text in code points (Python's len of the str). */
static CT__UNUSED int64_t ct__bench_width(const char *s)
{
    int64_t w = 0;
    for (; *s; s++) {
        w += ((unsigned char)*s & 0xC0) != 0x80;
    }
    return w;
}

/* Python's s.center(width, fill). */
static CT__UNUSED void ct__bench_center(ct__bench_buf *b, const char *s, int64_t width, char fill)
{
    int64_t marg = width - ct__bench_width(s);
    if (marg <= 0) {
        ct__bench_puts(b, s);
        return;
    }
    int64_t left = marg / 2 + (marg & width & 1);
    ct__bench_fill(b, fill, left);
    ct__bench_puts(b, s);
    ct__bench_fill(b, fill, marg - left);
}

/* Python's s.ljust(width, fill). */
static CT__UNUSED void ct__bench_ljust(ct__bench_buf *b, const char *s, int64_t width, char fill)
{
    ct__bench_puts(b, s);
    ct__bench_fill(b, fill, width - ct__bench_width(s));
}

/* Hands the text to the caller as snprintf does; frees the buffer. */
static CT__UNUSED size_t ct__bench_finish(ct__bench_buf *b, const char *op, char *buf, size_t n)
{
    if (b->oom) {
        ct__free(b->p);
        ct__fail(CT_ERR_OOM, op, "out of memory while formatting");
        return 0;
    }
    size_t len = b->len;
    if (buf && n > 0) {
        size_t k = len < n - 1 ? len : n - 1;
        if (k) {
            memcpy(buf, b->p, k);
        }
        buf[k] = '\0';
    }
    ct__free(b->p);
    return len;
}

/* ---- statistics --------------------------------------------------------------------- */
static CT__UNUSED int ct__bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted values with linear interpolation; the lerp is torch.quantile's and
   numpy's (a + w (b - a) below w = 0.5, b - (1 - w)(b - a) from it). */
static CT__UNUSED double ct__bench_quantile(const double *s, int64_t n, double q)
{
    double rank = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(rank);
    int64_t hi = lo + 1 < n ? lo + 1 : n - 1;
    double w = rank - (double)lo;
    double a = s[lo], d = s[hi] - s[lo];
    return w < 0.5 ? a + w * d : s[hi] - d * (1.0 - w);
}

/* A measurement taking over spec's strings on success (spec is cleared either way is not
   assumed: on failure the caller still owns them). raw: n seconds per run. */
static CT__UNUSED ct_measurement *ct__bench_measurement(const char *op, ct__bench_spec *spec,
                                                        int64_t number_per_run,
                                                        const double *raw, int64_t n)
{
    ct_measurement *m = (ct_measurement *)ct__calloc(sizeof *m);
    double *mem = (double *)ct__malloc(sizeof(double) * 3 * (size_t)n);
    if (!m || !mem) {
        ct__free(m);
        ct__free(mem);
        ct__fail(CT_ERR_OOM, op, "out of memory for %lld times", (long long)n);
        return NULL;
    }
    m->spec = *spec;
    memset(spec, 0, sizeof *spec);
    m->number_per_run = number_per_run;
    m->n = n;
    m->raw = mem;
    m->times = mem + n;
    m->sorted = mem + 2 * n;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        m->raw[i] = raw[i];
        m->times[i] = raw[i] / (double)number_per_run;
        m->sorted[i] = m->times[i];
        sum += m->times[i];
    }
    qsort(m->sorted, (size_t)n, sizeof(double), ct__bench_cmp);
    m->mean = sum / (double)n;
    m->median = ct__bench_quantile(m->sorted, n, 0.5);
    m->p25 = ct__bench_quantile(m->sorted, n, 0.25);
    m->p75 = ct__bench_quantile(m->sorted, n, 0.75);
    return m;
}

static CT__UNUSED bool ct__bench_meets(const ct_measurement *m, double threshold)
{
    return (m->p75 - m->p25) / m->median < threshold;
}

/* ---- timer -------------------------------------------------------------------------- */
ct_timer *ct_timer_new(const ct_timer_opts *opts)
{
    const char *op = "ct_timer_new";
    if (ct__null(op, opts)) {
        return NULL;
    }
    if (!opts->stmt) {
        ct__fail(CT_ERR_NULL_ARG, op, "opts->stmt is NULL");
        return NULL;
    }
    if (opts->num_threads < 0) {
        ct__fail(CT_ERR_VALUE, op, "num_threads must be >= 0 (0: 1 thread), got %d",
                 opts->num_threads);
        return NULL;
    }
    uint64_t (*clock_ns)(void *) = opts->clock_ns;
    if (!clock_ns) {
#ifdef CT__CLOCK
        clock_ns = ct__clock_ns;
#else
        ct__fail(CT_ERR_UNSUPPORTED, op, "no default clock in this build (CTORCH_NO_STDIO): "
                 "set opts->clock_ns");
        return NULL;
#endif
    }
    ct_timer *t = (ct_timer *)ct__calloc(sizeof *t);
    if (!t || !ct__bench_spec_copy(&t->spec, opts->stmt_name, opts->label, opts->sub_label,
                                   opts->description, opts->env,
                                   opts->num_threads ? opts->num_threads : 1)) {
        ct__free(t);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    t->stmt = opts->stmt;
    t->setup = opts->setup;
    t->user = opts->user;
    t->clock_ns = clock_ns;
    t->clock_user = opts->clock_user;
    return t;
}

void ct_timer_free(ct_timer *t)
{
    if (!t) {
        return;
    }
    ct__bench_spec_free(&t->spec);
    ct__free(t);
}

/* One run: setup, clock, `number` calls, clock. Seconds, at least 1 ns (Timer._timeit).
   timeit's time.perf_counter() reads the clock in seconds as CPython makes them from ns,
   (double)ns / 1e9, and subtracts: the same clock reads give PyTorch's times to the bit. */
static CT__UNUSED double ct__bench_run(const ct_timer *t, int64_t number)
{
    if (t->setup) {
        t->setup(t->user);
    }
    uint64_t t0 = t->clock_ns(t->clock_user);
    for (int64_t i = 0; i < number; i++) {
        t->stmt(t->user);
    }
    uint64_t t1 = t->clock_ns(t->clock_user);
    double s = (double)t1 / 1e9 - (double)t0 / 1e9;
    return s > 1e-9 ? s : 1e-9;
}

/* Timer._estimate_block_size. */
static CT__UNUSED int64_t ct__bench_block_size(const ct_timer *t, double min_run_time)
{
    double empty[5];
    for (int i = 0; i < 5; i++) {
        empty[i] = ct__bench_run(t, 0);
    }
    qsort(empty, 5, sizeof(double), ct__bench_cmp);
    double overhead = (double)(float)empty[2]; /* torch.tensor([...]).median(): float32 */
    int64_t number = 1;
    for (;;) {
        double taken = ct__bench_run(t, number);
        if (overhead / taken <= 1e-4 && taken >= min_run_time / 1000) {
            break;
        }
        if (taken > min_run_time) {
            break;
        }
        if (number * 10 > 2147483647) {
            break;
        }
        number *= 10;
    }
    return number;
}

/* A growing list of run times. */
typedef struct ct__bench_times {
    double *v;
    int64_t n, cap;
} ct__bench_times;

static CT__UNUSED bool ct__bench_times_push(ct__bench_times *ts, double x)
{
    if (ts->n == ts->cap) {
        int64_t cap = ts->cap ? 2 * ts->cap : 64;
        double *v = (double *)ct__realloc(ts->v, sizeof(double) * (size_t)cap);
        if (!v) {
            return false;
        }
        ts->v = v;
        ts->cap = cap;
    }
    ts->v[ts->n++] = x;
    return true;
}

/* A measurement of the timer's task from raw run times. */
static CT__UNUSED ct_measurement *ct__bench_from_timer(const char *op, const ct_timer *t,
                                                       int64_t number, const double *raw,
                                                       int64_t n)
{
    ct__bench_spec spec;
    const ct__bench_spec *s = &t->spec;
    if (!ct__bench_spec_copy(&spec, s->stmt, s->label, s->sub_label, s->description, s->env,
                             s->num_threads)) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_measurement *m = ct__bench_measurement(op, &spec, number, raw, n);
    ct__bench_spec_free(&spec); /* cleared when m took the strings */
    return m;
}

/* Timer._threaded_measurement_loop, with the adaptive stop rule when threshold is given. */
static CT__UNUSED ct_measurement *ct__bench_loop(const char *op, ct_timer *t, int64_t number,
                                                 double min_run_time, bool adaptive,
                                                 double threshold, double max_run_time)
{
    ct__bench_times ts = {NULL, 0, 0};
    double total = 0;
    bool can_stop = false;
    bool oom = false;
    while (total < min_run_time || !can_stop) {
        double spent = ct__bench_run(t, number);
        if (!ct__bench_times_push(&ts, spent)) {
            oom = true;
            break;
        }
        total += spent;
        if (!adaptive) {
            can_stop = true;
        } else if (ts.n > 3) {
            /* Measurement(number, times).meets_confidence(threshold) */
            double *s = (double *)ct__malloc(sizeof(double) * (size_t)ts.n);
            if (!s) {
                oom = true;
                break;
            }
            for (int64_t i = 0; i < ts.n; i++) {
                s[i] = ts.v[i] / (double)number;
            }
            qsort(s, (size_t)ts.n, sizeof(double), ct__bench_cmp);
            double iqr = ct__bench_quantile(s, ts.n, 0.75) - ct__bench_quantile(s, ts.n, 0.25);
            can_stop = iqr / ct__bench_quantile(s, ts.n, 0.5) < threshold;
            ct__free(s);
        }
        if (adaptive && total > max_run_time) {
            break;
        }
    }
    ct_measurement *m = NULL;
    if (oom) {
        ct__fail(CT_ERR_OOM, op, "out of memory after %lld runs", (long long)ts.n);
    } else {
        m = ct__bench_from_timer(op, t, number, ts.v, ts.n);
    }
    ct__free(ts.v);
    return m;
}

ct_measurement *ct_timer_timeit(ct_timer *t, int64_t number)
{
    const char *op = "ct_timer_timeit";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (number < 1) {
        ct__fail(CT_ERR_VALUE, op, "number must be positive, got %lld", (long long)number);
        return NULL;
    }
    int prior = ct_get_num_threads();
    ct_set_num_threads(t->spec.num_threads);
    ct__bench_run(t, number / 100 > 2 ? number / 100 : 2); /* warmup */
    double raw = ct__bench_run(t, number);
    ct_set_num_threads(prior);
    return ct__bench_from_timer(op, t, number, &raw, 1);
}

ct_measurement *ct_timer_blocked_autorange(ct_timer *t, double min_run_time_s)
{
    const char *op = "ct_timer_blocked_autorange";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (!(min_run_time_s > 0)) {
        ct__fail(CT_ERR_VALUE, op, "min_run_time must be positive, got %g", min_run_time_s);
        return NULL;
    }
    int prior = ct_get_num_threads();
    ct_set_num_threads(t->spec.num_threads);
    int64_t number = ct__bench_block_size(t, min_run_time_s);
    ct_measurement *m = ct__bench_loop(op, t, number, min_run_time_s, false, 0, 0);
    ct_set_num_threads(prior);
    return m;
}

ct_measurement *ct_timer_adaptive_autorange(ct_timer *t, double threshold,
                                            double min_run_time_s, double max_run_time_s)
{
    const char *op = "ct_timer_adaptive_autorange";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (isnan(threshold) || !(min_run_time_s >= 0) || !(max_run_time_s > 0)) {
        ct__fail(CT_ERR_VALUE, op, "expected threshold not NaN, min_run_time >= 0 and "
                 "max_run_time > 0, got %g, %g and %g", threshold, min_run_time_s,
                 max_run_time_s);
        return NULL;
    }
    int prior = ct_get_num_threads();
    ct_set_num_threads(t->spec.num_threads);
    int64_t number = ct__bench_block_size(t, 0.05);
    ct_measurement *m = ct__bench_loop(op, t, number, min_run_time_s, true, threshold,
                                       max_run_time_s);
    ct_set_num_threads(prior);
    return m;
}

/* ---- measurement -------------------------------------------------------------------- */
ct_measurement *ct_measurement_new(int64_t number_per_run, const double *raw_times_s, int64_t n,
                                   const ct_timer_opts *spec)
{
    const char *op = "ct_measurement_new";
    if (ct__null(op, raw_times_s)) {
        return NULL;
    }
    if (number_per_run < 1 || n < 1) {
        ct__fail(CT_ERR_VALUE, op, "expected number_per_run >= 1 and n >= 1, got %lld and %lld",
                 (long long)number_per_run, (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (!(raw_times_s[i] > 0) || isinf(raw_times_s[i])) {
            ct__fail(CT_ERR_VALUE, op, "times must be finite and positive, got %g at index %lld",
                     raw_times_s[i], (long long)i);
            return NULL;
        }
    }
    ct__bench_spec s;
    memset(&s, 0, sizeof s);
    s.num_threads = 1;
    if (spec) {
        if (spec->num_threads < 0) {
            ct__fail(CT_ERR_VALUE, op, "num_threads must be >= 0 (0: 1 thread), got %d",
                     spec->num_threads);
            return NULL;
        }
        if (!ct__bench_spec_copy(&s, spec->stmt_name, spec->label, spec->sub_label,
                                 spec->description, spec->env,
                                 spec->num_threads ? spec->num_threads : 1)) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return NULL;
        }
    }
    ct_measurement *m = ct__bench_measurement(op, &s, number_per_run, raw_times_s, n);
    ct__bench_spec_free(&s);
    return m;
}

void ct_measurement_free(ct_measurement *m)
{
    if (!m) {
        return;
    }
    ct__bench_spec_free(&m->spec);
    ct__free(m->raw);
    ct__free(m);
}

int64_t ct_measurement_number_per_run(const ct_measurement *m)
{
    return ct__null("ct_measurement_number_per_run", m) ? 0 : m->number_per_run;
}

int64_t ct_measurement_number_of_runs(const ct_measurement *m)
{
    return ct__null("ct_measurement_number_of_runs", m) ? 0 : m->n;
}

int ct_measurement_num_threads(const ct_measurement *m)
{
    return ct__null("ct_measurement_num_threads", m) ? 0 : m->spec.num_threads;
}

const double *ct_measurement_times(const ct_measurement *m)
{
    return ct__null("ct_measurement_times", m) ? NULL : m->times;
}

const double *ct_measurement_raw_times(const ct_measurement *m)
{
    return ct__null("ct_measurement_raw_times", m) ? NULL : m->raw;
}

double ct_measurement_mean(const ct_measurement *m)
{
    return ct__null("ct_measurement_mean", m) ? NAN : m->mean;
}

double ct_measurement_median(const ct_measurement *m)
{
    return ct__null("ct_measurement_median", m) ? NAN : m->median;
}

double ct_measurement_iqr(const ct_measurement *m)
{
    return ct__null("ct_measurement_iqr", m) ? NAN : m->p75 - m->p25;
}

/* log10 of torch.tensor(x): PyTorch's benchmark utilities make float32 tensors of Python
   floats and take their log10 (then floor, ceil or round) in float32. x > 0 is clamped to
   float's range, where PyTorch's inf or 0 would raise OverflowError. */
static CT__UNUSED double ct__bench_log10_f32(double x)
{
    float f = x > FLT_MAX ? FLT_MAX : x < FLT_TRUE_MIN ? FLT_TRUE_MIN : (float)x;
    return (double)log10f(f);
}

/* Measurement.significant_figures, in float32 where PyTorch makes tensors: the std of the
   middle half as torch.std of float32 values (their float32 mean, the squared deviations
   summed in double, the root rounded to float32), sqrt(k), and log10(median / ci). */
static CT__UNUSED int ct__bench_sigfigs(const ct_measurement *m)
{
    int64_t lo = m->n / 4, hi = (int64_t)ceilf((float)(3.0 * (double)m->n / 4.0));
    int64_t k = hi - lo;
    float sum = 0;
    for (int64_t i = lo; i < hi; i++) {
        sum += (float)m->sorted[i];
    }
    double mean = (double)(sum / (float)k), var = 0;
    for (int64_t i = lo; i < hi; i++) {
        double d = (double)(float)m->sorted[i] - mean;
        var += fma(d, d, 0.0); /* the square rounded on its own: no contraction with += */
    }
    double std = (double)(float)sqrt(var / (double)k);
    double ci = 1.645 * std / (double)sqrtf((float)k);
    if (ci < 25e-9) {
        ci = 25e-9;
    }
    double f = floor(ct__bench_log10_f32(m->median / ci));
    return !(f >= 1) ? 1 : f > 4 ? 4 : (int)f; /* 1 for NaN: times beyond float32 */
}

int ct_measurement_significant_figures(const ct_measurement *m)
{
    return ct__null("ct_measurement_significant_figures", m) ? 0 : ct__bench_sigfigs(m);
}

bool ct_measurement_meets_confidence(const ct_measurement *m, double threshold)
{
    return ct__null("ct_measurement_meets_confidence", m) ? false : ct__bench_meets(m, threshold);
}

bool ct_measurement_has_warnings(const ct_measurement *m)
{
    return ct__null("ct_measurement_has_warnings", m) ? false : !ct__bench_meets(m, 0.1);
}

/* common.select_unit: the unit for the magnitude of t seconds (log10 in float32). */
static CT__UNUSED const char *ct__bench_unit(double t, double *scale)
{
    double e = floor(ct__bench_log10_f32(t) / 3);
    if (e == -3) {
        *scale = 1e-9;
        return "ns";
    }
    if (e == -2) {
        *scale = 1e-6;
        return "us";
    }
    if (e == -1) {
        *scale = 1e-3;
        return "ms";
    }
    *scale = 1;
    return "s";
}

static CT__UNUSED const char *ct__bench_unit_english(const char *unit)
{
    return unit[0] == 'n' ? "nanosecond" : unit[0] == 'u' ? "microsecond"
                                         : unit[0] == 'm' ? "millisecond" : "second";
}

/* Writes s indented by two spaces per non-blank line (textwrap.indent(s, '  ')). */
static CT__UNUSED void ct__bench_indent(ct__bench_buf *b, const char *s)
{
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) + 1 : strlen(s);
        bool blank = true;
        for (size_t i = 0; i < len; i++) {
            blank = blank && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r');
        }
        if (!blank) {
            ct__bench_puts(b, "  ");
        }
        ct__bench_putn(b, s, len);
        s += len;
    }
}

/* TaskSpec.summarize: the title, the description, each followed by a newline when it has
   several lines, joined by newlines. */
static CT__UNUSED void ct__bench_summarize(ct__bench_buf *b, const ct__bench_spec *s)
{
    ct__bench_buf title = {NULL, 0, 0, false};
    bool has_sub = s->sub_label && s->sub_label[0];
    const char *stmt = s->stmt ? s->stmt : "";
    if (s->label || !strchr(stmt, '\n')) {
        ct__bench_puts(&title, s->label ? s->label : stmt);
        if (has_sub) {
            ct__bench_puts(&title, ": ");
            ct__bench_puts(&title, s->sub_label);
        }
    } else {
        ct__bench_puts(&title, "stmt:");
        if (has_sub) {
            ct__bench_printf(&title, " (%s)", s->sub_label);
        }
        ct__bench_puts(&title, "\n");
        ct__bench_indent(&title, stmt);
    }
    const char *sections[2];
    sections[0] = title.p ? title.p : "";
    sections[1] = s->description ? s->description : "";
    bool first = true;
    for (int i = 0; i < 2; i++) {
        if (!sections[i][0]) {
            continue;
        }
        if (!first) {
            ct__bench_puts(b, "\n");
        }
        first = false;
        ct__bench_puts(b, sections[i]);
        if (strchr(sections[i], '\n')) {
            ct__bench_puts(b, "\n");
        }
    }
    b->oom = b->oom || title.oom;
    ct__free(title.p);
}

/* Measurement.__repr__ without its first line, plus the newline print() adds. */
static CT__UNUSED void ct__bench_repr(ct__bench_buf *b, const ct_measurement *m)
{
    ct__bench_buf body = {NULL, 0, 0, false};
    double scale = 1;
    const char *unit = ct__bench_unit(m->median, &scale);
    int64_t n = m->n;
    int nt = m->spec.num_threads;
    ct__bench_summarize(&body, &m->spec);
    ct__bench_printf(&body, "\n  %s%.2f %s", n > 1 ? "Median: " : "", m->median / scale, unit);
    if (n >= 4) {
        ct__bench_printf(&body, "\n  IQR:    %.2f %s (%.2f to %.2f)", (m->p75 - m->p25) / scale,
                         unit, m->p25 / scale, m->p75 / scale);
    }
    ct__bench_printf(&body, "\n  %lld measurement%s, %lld runs %s %d thread%s", (long long)n,
                     n > 1 ? "s" : "", (long long)m->number_per_run,
                     n > 1 ? "per measurement," : ",", nt, nt > 1 ? "s" : "");
    double rel = (m->p75 - m->p25) / m->median;
    if (!(rel < 0.1)) {
        ct__bench_printf(&body, "\n  WARNING: Interquartile range is %.1f%% of the median "
                         "measurement.\n           %s", rel * 100,
                         !(rel < 0.25) ? "This suggests significant environmental influence."
                                       : "This could indicate system fluctuation.");
    }
    /* .strip(): only trailing whitespace can remain here */
    size_t len = body.p ? body.len : 0;
    while (len > 0 && (body.p[len - 1] == ' ' || body.p[len - 1] == '\n')) {
        len--;
    }
    if (body.p) {
        ct__bench_putn(b, body.p, len);
    }
    ct__bench_puts(b, "\n");
    b->oom = b->oom || body.oom;
    ct__free(body.p);
}

size_t ct_measurement_str(const ct_measurement *m, char *buf, size_t n)
{
    if (ct__null("ct_measurement_str", m)) {
        return 0;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_repr(&b, m);
    return ct__bench_finish(&b, "ct_measurement_str", buf, n);
}

#ifndef CTORCH_NO_STDIO
static CT__UNUSED ct_status ct__bench_write(const char *op, ct__bench_buf *b, FILE *f)
{
    if (b->oom) {
        ct__free(b->p);
        return ct__fail(CT_ERR_OOM, op, "out of memory while formatting");
    }
    bool ok = b->len == 0 || fwrite(b->p, 1, b->len, f) == b->len;
    ct__free(b->p);
    return ok ? CT_OK : ct__fail(CT_ERR_IO, op, "write failed");
}

ct_status ct_measurement_print(const ct_measurement *m, FILE *f)
{
    const char *op = "ct_measurement_print";
    if (ct__null(op, m) || ct__null(op, f)) {
        return ct_error_code() ? ct_error_code() : CT_ERR_NULL_ARG;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_repr(&b, m);
    return ct__bench_write(op, &b, f);
}
#endif

/* ---- compare ------------------------------------------------------------------------ */
static CT__UNUSED ct_status ct__bench_extend(const char *op, ct_compare *c,
                                             ct_measurement *const *ms, int n)
{
    if (n < 0) {
        return ct__fail(CT_ERR_VALUE, op, "n must be >= 0, got %d", n);
    }
    if (n > 0 && ct__null(op, ms)) {
        return CT_ERR_NULL_ARG;
    }
    for (int i = 0; i < n; i++) {
        if (!ms[i]) {
            return ct__fail(CT_ERR_NULL_ARG, op, "measurement %d is NULL", i);
        }
    }
    if (c->n + n > c->cap) {
        int64_t cap = c->cap ? c->cap : 8;
        while (cap < c->n + n) {
            cap *= 2;
        }
        ct_measurement **p = (ct_measurement **)ct__realloc(c->ms, sizeof(*p) * (size_t)cap);
        if (!p) {
            return ct__fail(CT_ERR_OOM, op, "out of memory");
        }
        c->ms = p;
        c->cap = cap;
    }
    for (int i = 0; i < n; i++) {
        const ct_measurement *m = ms[i];
        ct__bench_spec s;
        const ct__bench_spec *o = &m->spec;
        ct_measurement *copy = NULL;
        if (ct__bench_spec_copy(&s, o->stmt, o->label, o->sub_label, o->description, o->env,
                                o->num_threads)) {
            copy = ct__bench_measurement(op, &s, m->number_per_run, m->raw, m->n);
            ct__bench_spec_free(&s);
        } else {
            ct__fail(CT_ERR_OOM, op, "out of memory");
        }
        if (!copy) {
            return ct_error_code();
        }
        c->ms[c->n++] = copy;
    }
    return CT_OK;
}

ct_compare *ct_compare_new(ct_measurement *const *ms, int n)
{
    const char *op = "ct_compare_new";
    ct_compare *c = (ct_compare *)ct__calloc(sizeof *c);
    if (!c) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (ct__bench_extend(op, c, ms, n) != CT_OK) {
        ct_compare_free(c);
        return NULL;
    }
    return c;
}

ct_status ct_compare_extend_results(ct_compare *c, ct_measurement *const *ms, int n)
{
    const char *op = "ct_compare_extend_results";
    if (ct__null(op, c)) {
        return CT_ERR_NULL_ARG;
    }
    return ct__bench_extend(op, c, ms, n);
}

void ct_compare_trim_significant_figures(ct_compare *c)
{
    if (!ct__null("ct_compare_trim_significant_figures", c)) {
        c->trim = true;
    }
}

void ct_compare_colorize(ct_compare *c, bool rowwise)
{
    if (!ct__null("ct_compare_colorize", c)) {
        c->colorize = rowwise ? 2 : 1;
    }
}

void ct_compare_highlight_warnings(ct_compare *c)
{
    if (!ct__null("ct_compare_highlight_warnings", c)) {
        c->highlight = true;
    }
}

void ct_compare_free(ct_compare *c)
{
    if (!c) {
        return;
    }
    for (int64_t i = 0; i < c->n; i++) {
        ct_measurement_free(c->ms[i]);
    }
    ct__free(c->ms);
    ct__free(c);
}

/* Measurement.as_row_name. */
static CT__UNUSED const char *ct__bench_row_name(const ct_measurement *m)
{
    if (m->spec.sub_label && m->spec.sub_label[0]) {
        return m->spec.sub_label;
    }
    if (m->spec.stmt && m->spec.stmt[0]) {
        return m->spec.stmt;
    }
    return "[Unknown]";
}

/* Orders envs as Python sorts them, NULL (None) first. */
static CT__UNUSED int ct__bench_env_cmp(const char *a, const char *b)
{
    if (!a || !b) {
        return (a != NULL) - (b != NULL);
    }
    return strcmp(a, b);
}

/* common.trim_sigfig: log10, the rounding (half to even) and the product in float32. */
static CT__UNUSED double ct__bench_trim_sigfig(double x, int n)
{
    int magnitude = (int)ceil(ct__bench_log10_f32(fabs(x)));
    double scale = pow(10.0, magnitude - n);
    return (double)(nearbyintf((float)(x / scale)) * (float)scale);
}

/* A rendered table column (compare._Column). */
typedef struct ct__bench_col {
    int length, decimals;
    bool highlight;
} ct__bench_col;

/* _Column.num_to_str; m NULL gives the blank of the same width. */
static CT__UNUSED void ct__bench_cell(ct__bench_buf *b, const ct__bench_col *col,
                                      const ct_measurement *m, double scale, bool trim)
{
    double value = 1;
    int sigfigs = 1;
    if (m) {
        value = m->median / scale;
        sigfigs = ct__bench_sigfigs(m);
    }
    if (trim) {
        value = ct__bench_trim_sigfig(value, sigfigs);
    }
    ct__bench_buf cell = {NULL, 0, 0, false};
    ct__bench_printf(&cell, "%*.*f", col->length, col->decimals, value);
    if (col->highlight) {
        char spread[48] = "";
        if (m && !ct__bench_meets(m, 0.1)) {
            snprintf(spread, sizeof spread, " (! %.0f%%)", (m->p75 - m->p25) / m->median * 100);
        }
        ct__bench_printf(&cell, "%7s", spread);
    }
    if (m) {
        ct__bench_putn(b, cell.p ? cell.p : "", cell.len);
    } else {
        ct__bench_fill(b, ' ', (int64_t)cell.len);
    }
    b->oom = b->oom || cell.oom;
    ct__free(cell.p);
}

/* _Row.color_segment. */
static CT__UNUSED void ct__bench_color(ct__bench_buf *b, const char *seg, double value,
                                       double best)
{
    const char *pre = NULL;
    if (value <= best * 1.01 || value <= best + 100e-9) {
        pre = "\033[92m\033[1m";
    } else if (value <= best * 1.1) {
        pre = "\033[34m\033[1m";
    } else if (value >= best * 5) {
        pre = "\033[31m\033[1m";
    } else if (value >= best * 2) {
        pre = "\033[2m\033[91m";
    }
    if (pre) {
        ct__bench_puts(b, pre);
    }
    ct__bench_puts(b, seg);
    if (pre) {
        ct__bench_puts(b, "\033[0m\033[0m");
    }
}

/* Scratch of one table: k measurements, so at most k rows and k columns. */
typedef struct ct__bench_grid {
    int64_t *row_of, *rows; /* 2k each: row/column of each result, row/column representative */
    ct_measurement **cells; /* k x k */
    char **strs;            /* (k + 1) x (k + 1) strings: header row, then the rows */
    int64_t *widths;        /* k + 1 */
    ct__bench_col *cols;    /* k */
} ct__bench_grid;

/* compare.Table.render for the k measurements r (one label). */
static CT__UNUSED void ct__bench_table_body(ct__bench_buf *out, const ct_compare *c,
                                            ct_measurement *const *r, int64_t k,
                                            const ct__bench_grid *g)
{
    int64_t *row_of = g->row_of, *rows = g->rows, *widths = g->widths;
    ct_measurement **cells = g->cells;
    char **strs = g->strs;
    ct__bench_col *cols = g->cols;
    /* one unit from the smallest median */
    double min_median = r[0]->median;
    for (int64_t i = 1; i < k; i++) {
        min_median = r[i]->median < min_median ? r[i]->median : min_median;
    }
    double scale = 1;
    const char *unit = ct__bench_unit(min_median, &scale);

    /* rows keyed (num_threads, env, row name), columns by description; first appearance */
    int64_t nrows = 0, ncols = 0;
    int64_t *col_of = row_of + k, *col_rep = rows + k;
    for (int64_t i = 0; i < k; i++) {
        const ct_measurement *m = r[i];
        int64_t j = 0;
        for (; j < nrows; j++) {
            const ct_measurement *o = r[rows[j]];
            if (o->spec.num_threads == m->spec.num_threads &&
                ct__bench_str_eq(o->spec.env, m->spec.env) &&
                strcmp(ct__bench_row_name(o), ct__bench_row_name(m)) == 0) {
                break;
            }
        }
        if (j == nrows) {
            rows[nrows++] = i;
        }
        for (j = 0; j < ncols; j++) {
            if (ct__bench_str_eq(r[col_rep[j]]->spec.description, m->spec.description)) {
                break;
            }
        }
        if (j == ncols) {
            col_rep[ncols++] = i;
        }
        col_of[i] = j;
    }
    /* stable sort of the rows by (num_threads, env): insertion sort */
    for (int64_t i = 1; i < nrows; i++) {
        int64_t v = rows[i], j = i;
        for (; j > 0; j--) {
            const ct_measurement *a = r[rows[j - 1]], *b = r[v];
            int cmp = a->spec.num_threads != b->spec.num_threads
                          ? (a->spec.num_threads > b->spec.num_threads ? 1 : -1)
                          : ct__bench_env_cmp(a->spec.env, b->spec.env);
            if (cmp <= 0) {
                break;
            }
            rows[j] = rows[j - 1];
        }
        rows[j] = v;
    }
    for (int64_t i = 0; i < k; i++) {
        const ct_measurement *m = r[i];
        for (int64_t j = 0; j < nrows; j++) {
            const ct_measurement *o = r[rows[j]];
            if (o->spec.num_threads == m->spec.num_threads &&
                ct__bench_str_eq(o->spec.env, m->spec.env) &&
                strcmp(ct__bench_row_name(o), ct__bench_row_name(m)) == 0) {
                row_of[i] = j;
                cells[j * k + col_of[i]] = r[i];
                break;
            }
        }
    }
    /* env column: shown when envs differ (None prints as "None") */
    bool render_env = false;
    int64_t env_len = 0;
    for (int64_t i = 0; i < k; i++) {
        render_env = render_env || !ct__bench_str_eq(r[i]->spec.env, r[0]->spec.env);
        const char *e = r[i]->spec.env ? r[i]->spec.env : "None";
        env_len = ct__bench_width(e) > env_len ? ct__bench_width(e) : env_len;
    }
    if (!render_env) {
        env_len = 0;
    }
    /* columns (_Column): widths from leading digits and significant figures */
    for (int64_t j = 0; j < ncols; j++) {
        int unit_digits = INT32_MIN, decimals = INT32_MAX;
        bool warn = false;
        for (int64_t i = 0; i < nrows; i++) {
            const ct_measurement *m = cells[i * k + j];
            if (!m) {
                continue;
            }
            int digits = (int)ceil(ct__bench_log10_f32(m->median / scale));
            unit_digits = digits > unit_digits ? digits : unit_digits;
            int d = ct__bench_sigfigs(m) - digits;
            d = d > 0 ? d : 0;
            decimals = d < decimals ? d : decimals;
            warn = warn || !ct__bench_meets(m, 0.1);
        }
        cols[j].decimals = c->trim ? decimals : 1;
        cols[j].length = unit_digits + cols[j].decimals + (cols[j].decimals ? 1 : 0);
        cols[j].highlight = c->highlight && warn;
    }
    /* the string grid: header row, then one row per key */
    int64_t w = ncols + 1;
    for (int64_t j = 0; j < ncols; j++) {
        const char *d = r[col_rep[j]]->spec.description;
        bool oom = false;
        strs[j + 1] = ct__bench_strdup(d ? d : "", &oom);
        out->oom = out->oom || oom;
    }
    bool prior_env_set = false;
    const char *prior_env = NULL;
    int prior_threads = -1;
    for (int64_t i = 0; i < nrows; i++) {
        const ct_measurement *first = r[rows[i]];
        if (first->spec.num_threads != prior_threads) {
            prior_threads = first->spec.num_threads;
            prior_env_set = false;
        }
        bool show_env = render_env && !(prior_env_set && ct__bench_str_eq(prior_env,
                                                                           first->spec.env));
        ct__bench_buf b = {NULL, 0, 0, false};
        ct__bench_puts(&b, "  ");
        ct__bench_buf e = {NULL, 0, 0, false};
        if (show_env) {
            ct__bench_printf(&e, "(%s)", first->spec.env ? first->spec.env : "None");
        }
        ct__bench_ljust(&b, e.p ? e.p : "", env_len + 4, ' ');
        ct__free(e.p);
        b.oom = b.oom || e.oom;
        ct__bench_puts(&b, ct__bench_row_name(first));
        strs[(i + 1) * w] = b.p;
        out->oom = out->oom || b.oom;
        for (int64_t j = 0; j < ncols; j++) {
            ct__bench_buf cb = {NULL, 0, 0, false};
            ct__bench_cell(&cb, &cols[j], cells[i * k + j], scale, c->trim);
            ct__bench_puts(&cb, ""); /* a non-NULL string even when empty */
            strs[(i + 1) * w + j + 1] = cb.p;
            out->oom = out->oom || cb.oom;
        }
        prior_env_set = true;
        prior_env = first->spec.env;
    }
    if (out->oom) {
        return;
    }
    for (int64_t i = 0; i <= nrows; i++) {
        for (int64_t j = 0; j < w; j++) {
            int64_t len = strs[i * w + j] ? ct__bench_width(strs[i * w + j]) : 0;
            widths[j] = len > widths[j] ? len : widths[j];
        }
    }
    ct__bench_buf body = {NULL, 0, 0, false};
    for (int64_t j = 0; j < w; j++) {
        if (j) {
            ct__bench_puts(&body, "  |  ");
        }
        ct__bench_center(&body, strs[j] ? strs[j] : "", widths[j], ' ');
    }
    int64_t overall = body.p ? ct__bench_width(body.p) : 0;
    prior_threads = -1;
    int64_t group_start = 0;
    for (int64_t i = 0; i < nrows; i++) {
        const ct_measurement *first = r[rows[i]];
        ct__bench_puts(&body, "\n");
        if (first->spec.num_threads != prior_threads) {
            prior_threads = first->spec.num_threads;
            group_start = i;
            char sep[32];
            snprintf(sep, sizeof sep, "%d threads: ", prior_threads);
            ct__bench_ljust(&body, sep, overall, '-');
            ct__bench_puts(&body, "\n");
        }
        int64_t group_end = i;
        while (group_end < nrows && r[rows[group_end]]->spec.num_threads == prior_threads) {
            group_end++;
        }
        double row_best = INFINITY;
        for (int64_t j = 0; j < ncols; j++) {
            const ct_measurement *m = cells[i * k + j];
            row_best = m && m->median < row_best ? m->median : row_best;
        }
        ct__bench_ljust(&body, strs[(i + 1) * w], widths[0], ' ');
        for (int64_t j = 0; j < ncols; j++) {
            const ct_measurement *m = cells[i * k + j];
            ct__bench_puts(&body, "  |  ");
            ct__bench_buf seg = {NULL, 0, 0, false};
            ct__bench_center(&seg, strs[(i + 1) * w + j + 1], widths[j + 1], ' ');
            double best = row_best;
            if (c->colorize == 1) {
                best = INFINITY;
                for (int64_t g = group_start; g < group_end; g++) {
                    const ct_measurement *o = cells[g * k + j];
                    best = o && o->median < best ? o->median : best;
                }
            }
            if (c->colorize && m) {
                ct__bench_color(&body, seg.p ? seg.p : "", m->median, best);
            } else {
                ct__bench_puts(&body, seg.p ? seg.p : "");
            }
            body.oom = body.oom || seg.oom;
            ct__free(seg.p);
        }
    }
    const char *label = r[0]->spec.label ? r[0]->spec.label : "";
    ct__bench_buf title = {NULL, 0, 0, false};
    ct__bench_printf(&title, " %s ", label);
    ct__bench_puts(out, "[");
    ct__bench_center(out, title.p ? title.p : "", overall - 2, '-');
    ct__bench_puts(out, "]\n");
    ct__bench_puts(out, body.p ? body.p : "");
    ct__bench_printf(out, "\n\nTimes are in %ss (%s).\n", ct__bench_unit_english(unit), unit);
    bool warnings = false;
    for (int64_t i = 0; i < k; i++) {
        warnings = warnings || (c->highlight && !ct__bench_meets(r[i], 0.1));
    }
    if (warnings) {
        ct__bench_puts(out, "(! XX%) Measurement has high variance, where XX is the IQR / median "
                            "* 100.\n");
    }
    out->oom = out->oom || title.oom || body.oom;
    ct__free(title.p);
    ct__free(body.p);
}

static CT__UNUSED void ct__bench_table(ct__bench_buf *out, const ct_compare *c,
                                       ct_measurement *const *r, int64_t k)
{
    ct__bench_grid g;
    g.row_of = (int64_t *)ct__malloc(sizeof(int64_t) * 2 * (size_t)k);
    g.rows = (int64_t *)ct__malloc(sizeof(int64_t) * 2 * (size_t)k);
    g.cells = (ct_measurement **)ct__calloc(sizeof(ct_measurement *) * (size_t)(k * k));
    g.strs = (char **)ct__calloc(sizeof(char *) * (size_t)((k + 1) * (k + 1)));
    g.widths = (int64_t *)ct__calloc(sizeof(int64_t) * (size_t)(k + 1));
    g.cols = (ct__bench_col *)ct__calloc(sizeof(ct__bench_col) * (size_t)k);
    if (g.row_of && g.rows && g.cells && g.strs && g.widths && g.cols) {
        ct__bench_table_body(out, c, r, k, &g);
    } else {
        out->oom = true;
    }
    if (g.strs) {
        for (int64_t i = 0; i < (k + 1) * (k + 1); i++) {
            ct__free(g.strs[i]);
        }
    }
    ct__free(g.row_of);
    ct__free(g.rows);
    ct__free(g.cells);
    ct__free(g.strs);
    ct__free(g.widths);
    ct__free(g.cols);
}

/* str(Compare) + "\n": merge equal tasks, group by label, one table each. */
static CT__UNUSED void ct__bench_compare(ct__bench_buf *out, const ct_compare *c)
{
    const char *op = "ct_compare_str";
    int64_t n = c->n;
    ct_measurement **merged = (ct_measurement **)ct__calloc(sizeof(ct_measurement *) *
                                                            (size_t)(n ? n : 1));
    ct_measurement **group = (ct_measurement **)ct__malloc(sizeof(ct_measurement *) *
                                                           (size_t)(n ? n : 1));
    double *pool = NULL;
    int64_t nm = 0, total = 0;
    if (!merged || !group) {
        out->oom = true;
        goto done;
    }
    /* Measurement.merge: pool the per-call times of equal task specs, number_per_run 1 */
    for (int64_t i = 0; i < n; i++) {
        total += c->ms[i]->n;
    }
    pool = (double *)ct__malloc(sizeof(double) * (size_t)(total ? total : 1));
    if (!pool) {
        out->oom = true;
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++) {
            seen = ct__bench_spec_eq(&c->ms[i]->spec, &c->ms[j]->spec);
        }
        if (seen) {
            continue;
        }
        int64_t np = 0;
        for (int64_t j = i; j < n; j++) {
            if (ct__bench_spec_eq(&c->ms[i]->spec, &c->ms[j]->spec)) {
                memcpy(pool + np, c->ms[j]->times, sizeof(double) * (size_t)c->ms[j]->n);
                np += c->ms[j]->n;
            }
        }
        ct__bench_spec s;
        const ct__bench_spec *o = &c->ms[i]->spec;
        if (!ct__bench_spec_copy(&s, o->stmt, o->label, o->sub_label, o->description, o->env,
                                 o->num_threads)) {
            out->oom = true;
            goto done;
        }
        merged[nm] = ct__bench_measurement(op, &s, 1, pool, np);
        ct__bench_spec_free(&s);
        if (!merged[nm]) {
            ct_error_clear(); /* reported once as out of memory by the caller */
            out->oom = true;
            goto done;
        }
        nm++;
    }
    /* group by label in order of first appearance */
    for (int64_t i = 0; i < nm; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++) {
            seen = ct__bench_str_eq(merged[i]->spec.label, merged[j]->spec.label);
        }
        if (seen) {
            continue;
        }
        int64_t k = 0;
        for (int64_t j = i; j < nm; j++) {
            if (ct__bench_str_eq(merged[i]->spec.label, merged[j]->spec.label)) {
                group[k++] = merged[j];
            }
        }
        if (i) {
            ct__bench_puts(out, "\n");
        }
        ct__bench_table(out, c, group, k);
    }
    ct__bench_puts(out, "\n");
done:
    for (int64_t i = 0; i < nm; i++) {
        ct_measurement_free(merged[i]);
    }
    ct__free(merged);
    ct__free(group);
    ct__free(pool);
}

size_t ct_compare_str(const ct_compare *c, char *buf, size_t n)
{
    if (ct__null("ct_compare_str", c)) {
        return 0;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_compare(&b, c);
    return ct__bench_finish(&b, "ct_compare_str", buf, n);
}

#ifndef CTORCH_NO_STDIO
ct_status ct_compare_print(const ct_compare *c, FILE *f)
{
    const char *op = "ct_compare_print";
    if (ct__null(op, c) || ct__null(op, f)) {
        return ct_error_code() ? ct_error_code() : CT_ERR_NULL_ARG;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_compare(&b, c);
    return ct__bench_write(op, &b, f);
}
#endif
CT__GLUE_END
