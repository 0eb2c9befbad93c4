/* tests/test_ops.c - ops against PyTorch golden fixtures, the NPY reader/writer, and op
 * error messages.
 *
 * Fixtures come from tools/gen_golden.py (tests/golden/<case>.<role>.npy, see its header):
 * each case loads its inputs with ct_npy_load, runs the ctorch op and compares the result's
 * dtype, shape and values with PyTorch's; where PyTorch's gradients were saved, it runs
 * ct_backward with the saved upstream gradient and compares each input's ct_grad.
 * Tolerances (|got - want| <= atol + rtol * |want|): cases touching float32 use rtol 1e-5,
 * atol 1e-6; pure float64 cases rtol 1e-10, atol 1e-12; integer and bool results are exact.
 * Paths are relative to tests/ (the runner's working directory).
 */
#include "test.h"

#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Internal (src/core/internal.h): the softmax row kernels, scalar = the reference path. */
typedef enum { CT__SOFTMAX_EXP, CT__SOFTMAX_LOG, CT__SOFTMAX_LSE } ct__softmax_mode;
float ct__softmax_row_f32(const float *x, float *y, int64_t R, ct__softmax_mode mode,
                          bool prefetch, bool scalar);
void ct__exp_row_f32(const float *x, float *y, int64_t R, float shift, float scale,
                     bool prefetch, bool scalar);
#ifdef __cplusplus
}
#endif

#define GOLDEN_DIR "golden/"
#define F32_RTOL 1e-5
#define F32_ATOL 1e-6
#define F64_RTOL 1e-10
#define F64_ATOL 1e-12

/* ---- fixture helpers -------------------------------------------------------------------- */
static const char *const g_roles[4] = {"a", "b", "c", "d"};

static void g_path(char *buf, size_t n, const char *name, const char *role)
{
    snprintf(buf, n, GOLDEN_DIR "%s.%s.npy", name, role);
}

/* tests/golden/MANIFEST (written by tools/gen_golden.py) lists every fixture file, sorted:
   whether a case has a gradient, index or layout fixture is read from it, so a listed file
   that is missing on disk fails the case loudly instead of skipping its comparison. Each
   listed file is marked when a case loads it; test_fixtures_all_used checks that every one
   was. */
typedef struct g_manifest {
    char *text;   /* the file, with each '\n' replaced by '\0' */
    char **names; /* sorted */
    bool *used;
    size_t n;
    bool loaded, failed;
} g_manifest;
static g_manifest g_man;

static int g_cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool g_manifest_load(void)
{
    if (g_man.loaded || g_man.failed) {
        return g_man.loaded;
    }
    FILE *f = fopen(GOLDEN_DIR "MANIFEST", "rb");
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        len = ftell(f);
        fseek(f, 0, SEEK_SET);
    }
    g_man.text = len > 0 ? (char *)malloc((size_t)len + 1) : NULL;
    if (!g_man.text || fread(g_man.text, 1, (size_t)len, f) != (size_t)len) {
        ct_test_fail(__FILE__, __LINE__, "cannot read " GOLDEN_DIR "MANIFEST (run "
                     "tools/gen_golden.py)");
        g_man.failed = true;
        free(g_man.text);
        g_man.text = NULL;
        if (f) {
            fclose(f);
        }
        return false;
    }
    fclose(f);
    g_man.text[len] = '\0';
    for (long i = 0; i < len; i++) {
        g_man.n += g_man.text[i] == '\n';
    }
    g_man.names = (char **)malloc(sizeof(char *) * (g_man.n + 1));
    g_man.used = (bool *)calloc(g_man.n + 1, sizeof(bool));
    size_t k = 0;
    for (char *line = g_man.text; k < g_man.n; k++) {
        char *end = strchr(line, '\n');
        *end = '\0';
        g_man.names[k] = line;
        line = end + 1;
    }
    qsort(g_man.names, g_man.n, sizeof(char *), g_cmp_name);
    g_man.loaded = true;
    return true;
}

/* The index of "<name>.<role>.npy" in the manifest, or -1. */
static long g_find(const char *name, const char *role)
{
    char file[256];
    snprintf(file, sizeof file, "%s.%s.npy", name, role);
    if (!g_manifest_load()) {
        return -1;
    }
    const char *key = file;
    char **hit = (char **)bsearch(&key, g_man.names, g_man.n, sizeof(char *), g_cmp_name);
    return hit ? (long)(hit - g_man.names) : -1;
}

static bool g_exists(const char *name, const char *role)
{
    return g_find(name, role) >= 0;
}

/* Loads a fixture; a failure is reported at file:line and the error cleared (NULL returned). */
static ct_tensor *g_load_at(const char *file, int line, const char *name, const char *role)
{
    char p[256];
    g_path(p, sizeof p, name, role);
    long k = g_find(name, role);
    if (k >= 0) {
        g_man.used[k] = true;
    } else if (g_man.loaded) {
        ct_test_fail(file, line, "fixture %s is not in " GOLDEN_DIR "MANIFEST", p);
    }
    ct_tensor *t = ct_npy_load(p);
    if (!t) {
        ct_test_fail(file, line, "cannot load fixture %s: %s (run tools/gen_golden.py)", p,
                     ct_error() ? ct_error() : "?");
        ct_error_clear();
    }
    return t;
}

/* Compares got with want: dtype, shape and values (exact for integer and bool dtypes). */
static void g_compare_at(const char *file, int line, const char *what, const ct_tensor *got,
                         const ct_tensor *want, bool f32)
{
    if (!got || !want) {
        ct_test_fail(file, line, "%s: result is NULL (%s)", what,
                     ct_error() ? ct_error() : "no error");
        ct_error_clear();
        return;
    }
    if (ct_tensor_dtype(got) != ct_tensor_dtype(want)) {
        ct_test_fail(file, line, "%s: dtype %s, PyTorch gives %s", what,
                     ct_dtype_name(ct_tensor_dtype(got)), ct_dtype_name(ct_tensor_dtype(want)));
    }
    bool same_shape = ct_dim(got) == ct_dim(want);
    for (int d = 0; same_shape && d < ct_dim(got); d++) {
        same_shape = ct_size(got, d) == ct_size(want, d);
    }
    if (!same_shape) {
        char a[128], b[128];
        int na = 0, nb = 0;
        na += snprintf(a, sizeof a, "[");
        for (int d = 0; d < ct_dim(got); d++) {
            na += snprintf(a + na, sizeof a - (size_t)na, d ? ", %lld" : "%lld",
                           (long long)ct_size(got, d));
        }
        snprintf(a + na, sizeof a - (size_t)na, "]");
        nb += snprintf(b, sizeof b, "[");
        for (int d = 0; d < ct_dim(want); d++) {
            nb += snprintf(b + nb, sizeof b - (size_t)nb, d ? ", %lld" : "%lld",
                           (long long)ct_size(want, d));
        }
        snprintf(b + nb, sizeof b - (size_t)nb, "]");
        ct_test_fail(file, line, "%s: shape %s, PyTorch gives %s", what, a, b);
        return;
    }
    int64_t n = ct_numel(want);
    double *x = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    double *y = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    ct_scope_begin();
    ct_tensor *gx = ct_contiguous(ct_to_dtype(got, CT_FLOAT64));
    ct_tensor *gy = ct_contiguous(ct_to_dtype(want, CT_FLOAT64));
    bool read = gx && gy;
    if (read) {
        memcpy(x, ct_data_ptr(gx), sizeof(double) * (size_t)n);
        memcpy(y, ct_data_ptr(gy), sizeof(double) * (size_t)n);
    }
    ct_scope_end();
    if (!read) {
        ct_test_fail(file, line, "%s: cannot convert to float64 to compare: %s", what,
                     ct_error() ? ct_error() : "no error");
        ct_error_clear();
        free(x);
        free(y);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (x[i] == y[i]) { /* equal infinities included */
            x[i] = y[i] = 0;
        }
    }
    bool exact = !ct_is_floating_point(want);
    if (!ct_test_close(file, line, x, y, n, exact ? 0 : f32 ? F32_RTOL : F64_RTOL,
                       exact ? 0 : f32 ? F32_ATOL : F64_ATOL)) {
        ct_test_fail(file, line, "  (in %s)", what);
    }
    free(x);
    free(y);
}

static void g_check_at(const char *file, int line, const char *name, const char *role,
                       const ct_tensor *got, bool f32)
{
    char what[160];
    snprintf(what, sizeof what, "%s.%s", name, role);
    ct_tensor *want = g_load_at(file, line, name, role);
    g_compare_at(file, line, what, got, want, f32);
    ct_free(want);
}
#define G_CHECK(name, role, got, f32) g_check_at(__FILE__, __LINE__, name, role, got, f32)

/* One golden case: inputs a..d, requires_grad set where PyTorch saved a gradient. */
typedef struct gcase {
    const char *name;
    ct_tensor *in[4];
    int n;
    bool f32;  /* float32 tolerance: some input is float32 */
    bool grad; /* a .gout fixture exists */
} gcase;

static ct_tensor *g_idx = NULL; /* indices of the last max_dim/min_dim wrapper call */
static int g_cases_run = 0;

static bool g_begin_at(const char *file, int line, gcase *g, const char *name, int n)
{
    memset(g, 0, sizeof *g);
    g->name = name;
    g->n = n;
    g_idx = NULL;
    ct_scope_begin();
    for (int i = 0; i < n; i++) {
        g->in[i] = g_load_at(file, line, name, g_roles[i]);
        if (!g->in[i]) {
            ct_scope_end();
            return false;
        }
        if (ct_tensor_dtype(g->in[i]) == CT_FLOAT32) {
            g->f32 = true;
        }
        char role[16];
        snprintf(role, sizeof role, "grad_%s", g_roles[i]);
        if (g_exists(name, role)) {
            ct_requires_grad_(g->in[i], true);
        }
    }
    g->grad = g_exists(name, "gout");
    return true;
}

static void g_finish_at(const char *file, int line, gcase *g, ct_tensor *out)
{
    g_cases_run++;
    bool f32 = g->f32 || (out && ct_tensor_dtype(out) == CT_FLOAT32);
    g_check_at(file, line, g->name, "out", out, f32);
    if (g_exists(g->name, "idx")) {
        g_check_at(file, line, g->name, "idx", g_idx, f32);
    }
    if (out && g_exists(g->name, "layout")) {
        ct_tensor *lay = g_load_at(file, line, g->name, "layout");
        if (lay) {
            const int64_t *want = (const int64_t *)ct_data_ptr(lay);
            bool ok = ct_numel(lay) == ct_dim(out) + 1;
            for (int d = 0; ok && d < ct_dim(out); d++) {
                ok = ct_stride(out, d) == want[d];
            }
            ok = ok && ct_storage_offset(out) == want[ct_dim(out)];
            if (!ok) {
                char got_s[160];
                int k = snprintf(got_s, sizeof got_s, "strides");
                for (int d = 0; d < ct_dim(out); d++) {
                    k += snprintf(got_s + k, sizeof got_s - (size_t)k, " %lld",
                                  (long long)ct_stride(out, d));
                }
                snprintf(got_s + k, sizeof got_s - (size_t)k, " offset %lld",
                         (long long)ct_storage_offset(out));
                char want_s[160];
                k = snprintf(want_s, sizeof want_s, "strides");
                for (int64_t d = 0; d + 1 < ct_numel(lay); d++) {
                    k += snprintf(want_s + k, sizeof want_s - (size_t)k, " %lld",
                                  (long long)want[d]);
                }
                snprintf(want_s + k, sizeof want_s - (size_t)k, " offset %lld",
                         (long long)want[ct_numel(lay) - 1]);
                ct_test_fail(file, line, "%s: layout %s, PyTorch gives %s", g->name, got_s, want_s);
            }
        }
    }
    if (out && g->grad) {
        ct_tensor *gout = g_load_at(file, line, g->name, "gout");
        if (ct_backward(out, gout, false) != CT_OK) {
            ct_test_fail(file, line, "%s: ct_backward failed: %s", g->name,
                         ct_error() ? ct_error() : "?");
            ct_error_clear();
        }
        for (int i = 0; i < g->n; i++) {
            char role[16];
            snprintf(role, sizeof role, "grad_%s", g_roles[i]);
            if (!g_exists(g->name, role)) {
                continue;
            }
            const ct_tensor *gr = ct_grad(g->in[i]);
            if (!gr) {
                ct_test_fail(file, line, "%s: no gradient for input %s", g->name, g_roles[i]);
                continue;
            }
            g_check_at(file, line, g->name, role, gr, f32);
        }
    }
    if (ct_error()) {
        ct_test_fail(file, line, "%s: unexpected error: %s", g->name, ct_error());
        ct_error_clear();
    }
    ct_scope_end();
}

/* GOLDEN(name, number of inputs, expression over A, B, C, D) */
#define GOLDEN(name, n, expr)                                                                \
    do {                                                                                     \
        gcase g_;                                                                            \
        if (g_begin_at(__FILE__, __LINE__, &g_, name, n)) {                                  \
            g_finish_at(__FILE__, __LINE__, &g_, (expr));                                    \
        }                                                                                    \
    } while (0)
#define A (g_.in[0])
#define B (g_.in[1])
#define C (g_.in[2])
#define D (g_.in[3])
#define SZ(...) (const int64_t[]){__VA_ARGS__}

/* ---- creation and random ---------------------------------------------------------------- */
static void test_golden_creation(void)
{
    ct_scope_begin();
    G_CHECK("c_zeros_f32", "out", ct_zeros(SZ(2, 3), 2, CT_FLOAT32), true);
    G_CHECK("c_ones_i64", "out", ct_ones(SZ(3), 1, CT_INT64), false);
    G_CHECK("c_full_f64", "out", ct_full(SZ(2, 2), 2, 1.5, CT_FLOAT64), false);
    G_CHECK("c_full_i32", "out", ct_full(SZ(4), 1, 7, CT_INT32), false);
    G_CHECK("c_scalar_f64", "out", ct_scalar_tensor(3.5, CT_FLOAT64), false);
    G_CHECK("c_arange_i64", "out", ct_arange(0, 10, 3, CT_INT64), false);
    G_CHECK("c_arange_f32", "out", ct_arange(0, 1, 0.1, CT_FLOAT32), true);
    G_CHECK("c_arange_f32_b", "out", ct_arange(1, 2.5, 0.5, CT_FLOAT32), true);
    G_CHECK("c_arange_f32_c", "out", ct_arange(-3, 3, 0.7, CT_FLOAT32), true);
    G_CHECK("c_arange_f64_neg", "out", ct_arange(1, -1, -0.25, CT_FLOAT64), false);
    G_CHECK("c_linspace_f32", "out", ct_linspace(0, 1, 5, CT_FLOAT32), true);
    G_CHECK("c_linspace_f32_long", "out", ct_linspace(-2, 7, 100, CT_FLOAT32), true);
    G_CHECK("c_linspace_f64", "out", ct_linspace(-1, 1, 7, CT_FLOAT64), false);
    G_CHECK("c_linspace_one", "out", ct_linspace(2, 3, 1, CT_FLOAT32), true);
    G_CHECK("c_linspace_zero", "out", ct_linspace(0, 10, 0, CT_FLOAT32), true);
    G_CHECK("c_eye_f32", "out", ct_eye(3, -1, CT_FLOAT32), true);
    G_CHECK("c_eye_2x4_f64", "out", ct_eye(2, 4, CT_FLOAT64), false);
    G_CHECK("c_eye_3x2_i64", "out", ct_eye(3, 2, CT_INT64), false);
    /* the default dtype is float32 */
    G_CHECK("c_zeros_f32", "out", ct_zeros(SZ(2, 3), 2, CT_DTYPE_DEFAULT), true);
    ct_scope_end();
}

/* The generator reproduces torch's CPU generator exactly: every value equal (tests/test_rng.c
   compares the streams bit for bit at many more sizes and seeds). */
static void g_rng_at(const char *file, int line, const char *name, const char *role,
                     const ct_tensor *got)
{
    ct_tensor *want = g_load_at(file, line, name, role);
    char what[160];
    snprintf(what, sizeof what, "%s.%s", name, role);
    if (got && want && ct_tensor_dtype(got) == ct_tensor_dtype(want) &&
        ct_numel(got) == ct_numel(want)) {
        ct_scope_begin();
        ct_tensor *gx = ct_contiguous(ct_to_dtype(got, CT_FLOAT64));
        ct_tensor *gy = ct_contiguous(ct_to_dtype(want, CT_FLOAT64));
        if (!ct_test_close(file, line, (const double *)ct_data_ptr(gx),
                           (const double *)ct_data_ptr(gy), ct_numel(want), 0, 0)) {
            ct_test_fail(file, line, "  (in %s)", what);
        }
        ct_scope_end();
    }
    g_compare_at(file, line, what, got, want, true); /* dtype and shape */
    ct_free(want);
}
#define G_RNG(name, role, got) g_rng_at(__FILE__, __LINE__, name, role, got)

static void test_golden_rng_rand(void)
{
    ct_scope_begin();
    ct_manual_seed(0);
    G_RNG("rng_rand_f32_5", "out", ct_rand(SZ(5), 1, CT_FLOAT32, NULL));
    ct_manual_seed(42);
    G_RNG("rng_rand_f32_3x7", "out", ct_rand(SZ(3, 7), 2, CT_FLOAT32, NULL));
    ct_manual_seed(5);
    G_RNG("rng_rand_f32_40", "out", ct_rand(SZ(40), 1, CT_FLOAT32, NULL));
    ct_manual_seed(1);
    G_RNG("rng_rand_f64_10", "out", ct_rand(SZ(10), 1, CT_FLOAT64, NULL));
    ct_manual_seed(3);
    G_RNG("rng_rand_f64_20", "out", ct_rand(SZ(20), 1, CT_FLOAT64, NULL));
    /* a separate generator seeded alike gives the same numbers */
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 42);
    G_RNG("rng_rand_f32_3x7", "out", ct_rand(SZ(3, 7), 2, CT_FLOAT32, g));
    ct_generator_free(g);
    ct_scope_end();
}

static void test_golden_rng_randn(void)
{
    ct_scope_begin();
    static const int64_t n32[5] = {5, 16, 37, 20, 48}, s32[5] = {0, 1, 2, 3, 9};
    for (int i = 0; i < 5; i++) {
        char name[64];
        snprintf(name, sizeof name, "rng_randn_f32_%lld", (long long)n32[i]);
        ct_manual_seed((uint64_t)s32[i]);
        G_RNG(name, "out", ct_randn(&n32[i], 1, CT_FLOAT32, NULL));
    }
    ct_manual_seed(4);
    G_RNG("rng_randn_f32_4x5", "out", ct_randn(SZ(4, 5), 2, CT_FLOAT32, NULL));
    static const int64_t n64[3] = {7, 16, 33}, s64[3] = {5, 6, 7};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "rng_randn_f64_%lld", (long long)n64[i]);
        ct_manual_seed((uint64_t)s64[i]);
        G_RNG(name, "out", ct_randn(&n64[i], 1, CT_FLOAT64, NULL));
    }
    ct_scope_end();
}

static void test_golden_rng_int(void)
{
    ct_scope_begin();
    ct_manual_seed(0);
    G_RNG("rng_randint_0_10", "out", ct_randint(0, 10, SZ(20), 1, CT_DTYPE_DEFAULT, NULL));
    ct_manual_seed(11);
    G_RNG("rng_randint_m5_5", "out", ct_randint(-5, 5, SZ(3, 4), 2, CT_INT64, NULL));
    ct_manual_seed(12);
    G_RNG("rng_randint_big", "out", ct_randint(0, (int64_t)1 << 40, SZ(6), 1, CT_INT64, NULL));
    ct_manual_seed(13);
    G_RNG("rng_randint_i32", "out", ct_randint(0, 100, SZ(10), 1, CT_INT32, NULL));
    static const int64_t np[3] = {1, 10, 100};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "rng_randperm_%lld", (long long)np[i]);
        ct_manual_seed((uint64_t)i);
        G_RNG(name, "out", ct_randperm(np[i], NULL));
    }
    ct_scope_end();
}

static void test_golden_rng_sequence(void)
{
    ct_scope_begin();
    ct_manual_seed(7);
    G_RNG("rng_seq", "out0", ct_rand(SZ(5), 1, CT_FLOAT32, NULL));
    G_RNG("rng_seq", "out1", ct_randn(SZ(5), 1, CT_FLOAT32, NULL));
    G_RNG("rng_seq", "out2", ct_randint(0, 100, SZ(5), 1, CT_INT64, NULL));
    G_RNG("rng_seq", "out3", ct_randn(SZ(20), 1, CT_FLOAT32, NULL));
    G_RNG("rng_seq", "out4", ct_rand(SZ(3), 1, CT_FLOAT64, NULL));
    ct_scope_end();
}

/* ---- pointwise -------------------------------------------------------------------------- */
typedef ct_tensor *(*unary_fn)(const ct_tensor *);
typedef ct_tensor *(*binary_fn)(const ct_tensor *, const ct_tensor *);
typedef ct_tensor *(*scalar_fn)(const ct_tensor *, double);

static void test_golden_unary(void)
{
    static const struct { const char *op; unary_fn fn; } ops[] = {
        {"neg", ct_neg}, {"abs", ct_abs}, {"exp", ct_exp}, {"log", ct_log},
        {"log1p", ct_log1p}, {"sqrt", ct_sqrt}, {"rsqrt", ct_rsqrt}, {"sin", ct_sin},
        {"cos", ct_cos}, {"sigmoid", ct_sigmoid}, {"tanh", ct_tanh}, {"relu", ct_relu},
        {"square", ct_square}, {"reciprocal", ct_reciprocal},
    };
    static const char *const dts[3] = {"f32", "f64", "i64"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        for (int d = 0; d < 3; d++) {
            char name[64];
            snprintf(name, sizeof name, "u_%s_%s", ops[i].op, dts[d]);
            GOLDEN(name, 1, ops[i].fn(A));
        }
    }
    GOLDEN("u_exp_f32_t", 1, ct_exp(ct_t(A)));
    GOLDEN("u_tanh_f64_t", 1, ct_tanh(ct_t(A)));
}

static void test_golden_binary(void)
{
    static const struct { const char *op; binary_fn fn; } ops[] = {
        {"add", ct_add}, {"sub", ct_sub}, {"mul", ct_mul}, {"div", ct_div}, {"pow", ct_pow},
        {"maximum", ct_maximum}, {"minimum", ct_minimum}, {"eq", ct_eq}, {"ne", ct_ne},
        {"lt", ct_lt}, {"le", ct_le}, {"gt", ct_gt}, {"ge", ct_ge},
        {"logical_and", ct_logical_and}, {"logical_or", ct_logical_or},
    };
    static const char *const variants[] = {
        "same_f32", "same_f64", "bcast_f32", "bcast3_f64", "bcast0_f32", "zerod_f32", "f32_f64",
        "i64_f32", "i64_0df64", "i32_i64", "i32_0di64", "u8_i8", "bool_i32", "nan_f64",
        "bool_bool",
    };
    int before = g_cases_run;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            char name[64];
            snprintf(name, sizeof name, "b_%s_%s", ops[i].op, variants[v]);
            if (g_exists(name, "out")) { /* the (op, variant) pairs gen_golden.py writes */
                GOLDEN(name, 2, ops[i].fn(A, B));
            }
        }
    }
    CHECK_MSG(g_cases_run - before == 102, "ran %d binary cases, gen_golden.py writes 102",
              g_cases_run - before);
    GOLDEN("b_add_alpha_same_f32", 2, ct_add_alpha(A, B, 2.5));
    GOLDEN("b_add_alpha_bcast3_f64", 2, ct_add_alpha(A, B, -0.5));
    GOLDEN("b_add_alpha_i32_i64", 2, ct_add_alpha(A, B, 3));
}

static void test_golden_scalar_ops(void)
{
    static const struct { const char *name; scalar_fn fn; double s; } cases[] = {
        {"s_add_f32", ct_add_scalar, 2.5}, {"s_add_f64_int", ct_add_scalar, -1},
        {"s_add_i64", ct_add_scalar, 2}, {"s_add_i64_float", ct_add_scalar, 2.5},
        {"s_add_i32", ct_add_scalar, 3}, {"s_add_u8", ct_add_scalar, 3},
        {"s_add_bool", ct_add_scalar, 1},
        {"s_sub_f32", ct_sub_scalar, 1.5}, {"s_sub_i64", ct_sub_scalar, 2},
        {"s_mul_f64", ct_mul_scalar, -1.5}, {"s_mul_i32_float", ct_mul_scalar, 2.5},
        {"s_mul_i16", ct_mul_scalar, 3},
        {"s_div_f32", ct_div_scalar, 4}, {"s_div_i64", ct_div_scalar, 2},
        {"s_pow_f32_2", ct_pow_scalar, 2}, {"s_pow_f32_0p5", ct_pow_scalar, 0.5},
        {"s_pow_f32_m1", ct_pow_scalar, -1}, {"s_pow_f64_3", ct_pow_scalar, 3},
        {"s_pow_f64_0", ct_pow_scalar, 0}, {"s_pow_f64_2p5", ct_pow_scalar, 2.5},
        {"s_pow_i64_2", ct_pow_scalar, 2}, {"s_pow_i64_0p5", ct_pow_scalar, 0.5},
        {"s_eq_f32", ct_eq_scalar, 1}, {"s_eq_i64_float", ct_eq_scalar, 2.5},
        {"s_gt_f32", ct_gt_scalar, 0.5}, {"s_gt_i64", ct_gt_scalar, 2},
        {"s_lt_f64", ct_lt_scalar, -0.5}, {"s_lt_i32", ct_lt_scalar, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        GOLDEN(cases[i].name, 1, cases[i].fn(A, cases[i].s));
    }
}

static void test_golden_where_clamp(void)
{
    GOLDEN("where_f32", 3, ct_where(A, B, C));
    GOLDEN("where_bcast_f64", 3, ct_where(A, B, C));
    GOLDEN("where_mixed", 3, ct_where(A, B, C));
    GOLDEN("where_i64", 3, ct_where(A, B, C));
    GOLDEN("clamp_f32", 1, ct_clamp(A, -0.5, 0.5));
    GOLDEN("clamp_f64_hi", 1, ct_clamp(A, -INFINITY, 0.3));
    GOLDEN("clamp_f64_lo", 1, ct_clamp(A, -0.2, INFINITY));
    GOLDEN("clamp_i64", 1, ct_clamp(A, -2, 3));
    GOLDEN("clamp_nan_f32", 1, ct_clamp(A, -1, 1));
}

/* ---- reductions ------------------------------------------------------------------------- */
static ct_tensor *max_dim_v(const ct_tensor *a, int64_t dim, bool keepdim)
{
    ct_tensor *v = NULL;
    ct_max_dim(a, dim, keepdim, &v, &g_idx);
    return v;
}

static ct_tensor *min_dim_v(const ct_tensor *a, int64_t dim, bool keepdim)
{
    ct_tensor *v = NULL;
    ct_min_dim(a, dim, keepdim, &v, &g_idx);
    return v;
}

static void test_golden_reduce_all(void)
{
    GOLDEN("r_sum_f32", 1, ct_sum(A));
    GOLDEN("r_sum_f64", 1, ct_sum(A));
    GOLDEN("r_mean_f32", 1, ct_mean(A));
    GOLDEN("r_mean_f64", 1, ct_mean(A));
    GOLDEN("r_max_f32", 1, ct_max(A));
    GOLDEN("r_max_f64", 1, ct_max(A));
    GOLDEN("r_min_f32", 1, ct_min(A));
    GOLDEN("r_min_f64", 1, ct_min(A));
    GOLDEN("r_sum_i32", 1, ct_sum(A));
    GOLDEN("r_sum_u8", 1, ct_sum(A));
    GOLDEN("r_sum_bool", 1, ct_sum(A));
    GOLDEN("r_sum_i64", 1, ct_sum(A));
    GOLDEN("r_sum_u8_big", 1, ct_sum(A));
    GOLDEN("r_max_ties_f64", 1, ct_max(A));
    GOLDEN("r_min_ties_f32", 1, ct_min(A));
    GOLDEN("r_max_i32", 1, ct_max(A));
    GOLDEN("r_argmax_f32", 1, ct_argmax(A));
    GOLDEN("r_argmax_ties", 1, ct_argmax(A));
    GOLDEN("r_argmax_i64", 1, ct_argmax(A));
    GOLDEN("r_argmin_f32", 1, ct_argmin(A));
    GOLDEN("r_argmin_ties", 1, ct_argmin(A));
    GOLDEN("r_argmin_i64", 1, ct_argmin(A));
}

static void test_golden_reduce_nan(void)
{
    GOLDEN("r_max_nan", 1, ct_max(A));
    GOLDEN("r_min_nan", 1, ct_min(A));
    GOLDEN("r_argmax_nan", 1, ct_argmax(A));
    GOLDEN("r_argmin_nan", 1, ct_argmin(A));
    GOLDEN("r_sum_nan", 1, ct_sum(A));
    GOLDEN("r_max_dim_nan", 1, max_dim_v(A, 1, false));
    GOLDEN("r_argmax_dim_nan", 1, ct_argmax_dim(A, 0, false));
}

static void test_golden_reduce_dim(void)
{
    static const int64_t dims[3] = {0, 1, -1};
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 2; k++) {
            char sfx[16], name[64];
            snprintf(sfx, sizeof sfx, "%s%d_%d", dims[i] < 0 ? "m" : "",
                     (int)llabs((long long)dims[i]), k);
            snprintf(name, sizeof name, "r_sum_dim_%s", sfx);
            GOLDEN(name, 1, ct_sum_dim(A, dims[i], k));
            snprintf(name, sizeof name, "r_mean_dim_%s", sfx);
            GOLDEN(name, 1, ct_mean_dim(A, dims[i], k));
            snprintf(name, sizeof name, "r_max_dim_%s", sfx);
            GOLDEN(name, 1, max_dim_v(A, dims[i], k));
            snprintf(name, sizeof name, "r_min_dim_%s", sfx);
            GOLDEN(name, 1, min_dim_v(A, dims[i], k));
            snprintf(name, sizeof name, "r_argmax_dim_%s", sfx);
            GOLDEN(name, 1, ct_argmax_dim(A, dims[i], k));
            snprintf(name, sizeof name, "r_argmin_dim_%s", sfx);
            GOLDEN(name, 1, ct_argmin_dim(A, dims[i], k));
        }
    }
    GOLDEN("r_sum_dim_i32", 1, ct_sum_dim(A, 1, false));
    GOLDEN("r_sum_dim_1_f32", 1, ct_sum_dim(A, 1, false));
    GOLDEN("r_mean_dim_0_f32", 1, ct_mean_dim(A, 0, false));
    GOLDEN("r_sum_dims_02_1", 1, ct_sum_dims(A, SZ(0, 2), 2, true));
    GOLDEN("r_sum_dims_m1m2_0", 1, ct_sum_dims(A, SZ(-1, -2), 2, false));
    GOLDEN("r_sum_to_size", 1, ct_sum_to_size(A, SZ(3, 1), 2));
    GOLDEN("r_max_dim_ties_f32", 1, max_dim_v(A, 1, false));
    GOLDEN("r_min_dim_ties_f64", 1, min_dim_v(A, 0, false));
    GOLDEN("r_max_dim_i64", 1, max_dim_v(A, 1, false));
}

/* ---- views ------------------------------------------------------------------------------ */
static ct_tensor *cat2(const ct_tensor *a, const ct_tensor *b, int64_t dim)
{
    const ct_tensor *ts[2] = {a, b};
    return ct_cat(ts, 2, dim);
}

static ct_tensor *cat3(const ct_tensor *a, const ct_tensor *b, const ct_tensor *c, int64_t dim)
{
    const ct_tensor *ts[3] = {a, b, c};
    return ct_cat(ts, 3, dim);
}

static ct_tensor *stack2(const ct_tensor *a, const ct_tensor *b, int64_t dim)
{
    const ct_tensor *ts[2] = {a, b};
    return ct_stack(ts, 2, dim);
}

static ct_tensor *stack3(const ct_tensor *a, const ct_tensor *b, const ct_tensor *c, int64_t dim)
{
    const ct_tensor *ts[3] = {a, b, c};
    return ct_stack(ts, 3, dim);
}

static void test_golden_views(void)
{
    GOLDEN("v_view_6x4", 1, ct_view(A, SZ(6, 4), 2));
    GOLDEN("v_view_m1", 1, ct_view(A, SZ(4, -1), 2));
    GOLDEN("v_view_flat_f32", 1, ct_view(A, SZ(-1), 1));
    GOLDEN("v_reshape_view", 1, ct_reshape(A, SZ(3, 8), 2));
    GOLDEN("v_reshape_copy", 1, ct_reshape(ct_transpose(A, 0, 2), SZ(4, 6), 2));
    GOLDEN("v_permute", 1, ct_permute(A, SZ(2, 0, 1), 3));
    GOLDEN("v_permute_f32", 1, ct_permute(A, SZ(1, 2, 0), 3));
    GOLDEN("v_transpose", 1, ct_transpose(A, 0, 2));
    GOLDEN("v_transpose_neg", 1, ct_transpose(A, -1, -2));
    GOLDEN("v_t_2d", 1, ct_t(A));
    GOLDEN("v_t_1d", 1, ct_t(A));
    GOLDEN("v_unsqueeze_0", 1, ct_unsqueeze(A, 0));
    GOLDEN("v_unsqueeze_m1", 1, ct_unsqueeze(A, -1));
    GOLDEN("v_unsqueeze_2", 1, ct_unsqueeze(A, 2));
    GOLDEN("v_squeeze", 1, ct_squeeze(A));
    GOLDEN("v_squeeze_dim0", 1, ct_squeeze_dim(A, 0));
    GOLDEN("v_squeeze_dim1_noop", 1, ct_squeeze_dim(A, 1));
    GOLDEN("v_expand", 1, ct_expand(A, SZ(3, 4), 2));
    GOLDEN("v_expand_new", 1, ct_expand(A, SZ(2, 3, 5), 3));
    GOLDEN("v_expand_m1", 1, ct_expand(A, SZ(2, -1, 4), 3));
    GOLDEN("v_narrow", 1, ct_narrow(A, 1, 1, 2));
    GOLDEN("v_narrow_neg", 1, ct_narrow(A, -1, 2, 2));
    GOLDEN("v_select", 1, ct_select(A, 0, 1));
    GOLDEN("v_select_neg", 1, ct_select(A, -1, 2));
    GOLDEN("v_flatten_all", 1, ct_flatten(A, 0, -1));
    GOLDEN("v_flatten_12", 1, ct_flatten(A, 1, 2));
    GOLDEN("v_flatten_copy", 1, ct_flatten(ct_transpose(A, 0, 1), 1, 2));
    GOLDEN("v_contiguous_t", 1, ct_contiguous(ct_transpose(A, 0, 1)));
    GOLDEN("v_chain", 1, ct_select(ct_narrow(ct_permute(A, SZ(2, 0, 1), 3), 0, 1, 2), 2, 1));
}

static void test_golden_cat_stack(void)
{
    GOLDEN("v_cat_0", 2, cat2(A, B, 0));
    GOLDEN("v_cat_1", 3, cat3(A, B, C, 1));
    GOLDEN("v_cat_m1", 2, cat2(A, B, -1));
    GOLDEN("v_cat_mixed", 2, cat2(A, B, 0));
    GOLDEN("v_cat_int", 2, cat2(A, B, 1));
    GOLDEN("v_stack_0", 2, stack2(A, B, 0));
    GOLDEN("v_stack_1", 3, stack3(A, B, C, 1));
    GOLDEN("v_stack_m1", 2, stack2(A, B, -1));
}

/* Appends the name of each op the dispatcher runs (nested ones after their caller). */
static bool log_op_name(void *user, ct_op_call *call)
{
    char *log = (char *)user;
    size_t n = strlen(log);
    snprintf(log + n, 256 - n, "%s%s", n ? " " : "", call->op->name);
    return false;
}

/* Runs CALL (which must succeed) with log_op_name hooked in and checks the ops it ran. */
#define CHECK_OPS(CALL, WANT)                                                                 \
    do {                                                                                      \
        char log_[256] = "";                                                                  \
        ct_dispatch_hook hook_ = {log_op_name, NULL, log_};                                   \
        CHECK(ct_dispatch_hook_push(&hook_) == CT_OK);                                        \
        CHECK((CALL) != NULL);                                                                \
        CHECK(ct_dispatch_hook_pop() == CT_OK);                                               \
        CHECK_MSG(strcmp(log_, WANT) == 0, "%s ran '%s', want '%s'", #CALL, log_, WANT);      \
    } while (0)

/* Views, cat and stack go through the dispatcher as PyTorch's operators, those built on
   others calling them as PyTorch's profiler shows (narrow: slice; contiguous: alias or
   clone; stack: unsqueeze and cat). */
static void test_view_ops_dispatch(void)
{
    ct_scope_begin();
    ct_tensor *x = ct_zeros(SZ(2, 3, 4), 3, CT_FLOAT32), *xt = ct_transpose(x, 0, 1);
    const ct_tensor *two[2] = {x, x};
    CHECK_OPS(ct_view(x, SZ(6, 4), 2), "aten::view");
    CHECK_OPS(ct_reshape(x, SZ(6, 4), 2), "aten::reshape aten::view");
    CHECK_OPS(ct_reshape(xt, SZ(24), 1), "aten::reshape aten::clone aten::view");
    CHECK_OPS(ct_flatten(x, 1, 2), "aten::flatten aten::reshape aten::view");
    CHECK_OPS(ct_permute(x, SZ(2, 0, 1), 3), "aten::permute");
    CHECK_OPS(ct_transpose(x, 0, 2), "aten::transpose");
    CHECK_OPS(ct_t(ct_select(x, 0, 0)), "aten::select aten::t");
    CHECK_OPS(ct_unsqueeze(x, 1), "aten::unsqueeze");
    CHECK_OPS(ct_squeeze(x), "aten::squeeze");
    CHECK_OPS(ct_squeeze_dim(x, 0), "aten::squeeze");
    CHECK_OPS(ct_expand(x, SZ(5, 2, 3, 4), 4), "aten::expand");
    CHECK_OPS(ct_narrow(x, 1, 1, 2), "aten::narrow aten::slice");
    CHECK_OPS(ct_select(x, 2, 3), "aten::select");
    CHECK_OPS(ct_contiguous(x), "aten::contiguous aten::alias");
    CHECK_OPS(ct_contiguous(xt), "aten::contiguous aten::clone");
    CHECK_OPS(ct_alias(x), "aten::alias");
    CHECK_OPS(ct_cat(two, 2, 1), "aten::cat");
    CHECK_OPS(ct_stack(two, 2, 1), "aten::stack aten::unsqueeze aten::unsqueeze aten::cat");
    /* the backward of select and narrow runs select_backward and slice_backward */
    ct_tensor *w = ct_zeros(SZ(2, 3), 2, CT_FLOAT64);
    ct_requires_grad_(w, true);
    ct_tensor *loss = ct_add(ct_sum(ct_select(w, 1, 2)), ct_sum(ct_narrow(w, 0, 1, 1)));
    char log[256] = "";
    ct_dispatch_hook hook = {log_op_name, NULL, log};
    CHECK(ct_dispatch_hook_push(&hook) == CT_OK);
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    CHECK(ct_dispatch_hook_pop() == CT_OK);
    CHECK_MSG(strstr(log, "aten::select_backward") && strstr(log, "aten::slice_backward"),
              "backward ran '%s'", log);
    double want[6] = {0, 0, 1, 1, 1, 2};
    CHECK_TENSOR(ct_grad(w), want, 6, 0, 0);
    /* PyTorch's checks, in its order */
    CHECK(ct_transpose(ct_zeros(NULL, 0, CT_FLOAT32), 1, 0) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but "
                              "got 1)");
    const ct_tensor *zerod[2] = {ct_zeros(SZ(2), 1, CT_FLOAT32), ct_zeros(NULL, 0, CT_FLOAT32)};
    CHECK(ct_cat(zerod, 2, 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "zero-dimensional tensor (at position 1) cannot be concatenated");
    CHECK(cat2(ct_zeros(SZ(2, 3), 2, CT_FLOAT32), ct_zeros(SZ(3), 1, CT_FLOAT32), 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Tensors must have same number of dimensions: got 2 and 1");
    CHECK(ct_cat(two, 0, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_cat: expected a non-empty list of Tensors");
    CHECK(ct_stack(two, 0, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_stack: stack expects a non-empty TensorList");
    ct_scope_end();
}
#undef CHECK_OPS

/* ---- linear algebra --------------------------------------------------------------------- */
static void test_golden_matmul(void)
{
    static const char *const forms[] = {"1d1d", "2d2d", "1d2d", "2d1d", "3d3d", "bcast4d3d",
                                        "3d1d", "1d3d", "3d2d", "big"};
    static const char *const dts[2] = {"f32", "f64"};
    for (int d = 0; d < 2; d++) {
        for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
            char name[64];
            snprintf(name, sizeof name, "m_matmul_%s_%s", forms[i], dts[d]);
            GOLDEN(name, 2, ct_matmul(A, B));
        }
    }
}

static void test_golden_linalg(void)
{
    static const char *const dts[2] = {"f32", "f64"};
    for (int d = 0; d < 2; d++) {
        char name[64];
#define NAME(fmt) (snprintf(name, sizeof name, fmt, dts[d]), name)
        GOLDEN(NAME("m_mm_%s"), 2, ct_mm(A, B));
        GOLDEN(NAME("m_mm_tA_%s"), 2, ct_mm(ct_t(A), B));
        GOLDEN(NAME("m_mm_tB_%s"), 2, ct_mm(A, ct_t(B)));
        GOLDEN(NAME("m_bmm_%s"), 2, ct_bmm(A, B));
        GOLDEN(NAME("m_addmm_%s"), 3, ct_addmm(A, B, C, 0.5, 2.0));
        GOLDEN(NAME("m_addmm_full_%s"), 3, ct_addmm(A, B, C, 1.0, 1.0));
        GOLDEN(NAME("m_mv_%s"), 2, ct_mv(A, B));
        GOLDEN(NAME("m_dot_%s"), 2, ct_dot(A, B));
        GOLDEN(NAME("m_linear_bias_%s"), 3, ct_linear(A, B, C));
        GOLDEN(NAME("m_linear_nobias_%s"), 2, ct_linear(A, B, NULL));
        GOLDEN(NAME("m_linear_1d_%s"), 3, ct_linear(A, B, C));
#undef NAME
    }
    GOLDEN("m_addmm_beta0_nan", 3, ct_addmm(A, B, C, 0.0, 1.5));
}

/* ---- softmax and losses ----------------------------------------------------------------- */
static void test_golden_softmax(void)
{
    static const char *const dts[2] = {"f32", "f64"};
    for (int d = 0; d < 2; d++) {
        for (int op = 0; op < 2; op++) {
            ct_tensor *(*fn)(const ct_tensor *, int64_t) = op ? ct_log_softmax : ct_softmax;
            const char *opname = op ? "log_softmax" : "softmax";
            static const int64_t d2[3] = {0, 1, -1}, d3[3] = {0, 1, 2};
            for (int i = 0; i < 3; i++) {
                char name[64];
                snprintf(name, sizeof name, "sm_%s_2d_%s%d_%s", opname, d2[i] < 0 ? "m" : "",
                         (int)llabs((long long)d2[i]), dts[d]);
                GOLDEN(name, 1, fn(A, d2[i]));
                snprintf(name, sizeof name, "sm_%s_3d_%d_%s", opname, (int)d3[i], dts[d]);
                GOLDEN(name, 1, fn(A, d3[i]));
            }
        }
    }
    GOLDEN("sm_softmax_large_f32", 1, ct_softmax(A, 1));
    GOLDEN("sm_log_softmax_large_f32", 1, ct_log_softmax(A, 1));
}

static ct_nll_loss_opts nll_opts(const ct_tensor *weight, int64_t ignore_index, ct_reduction r)
{
    ct_nll_loss_opts o = ct_nll_loss_defaults();
    o.weight = weight;
    o.ignore_index = ignore_index;
    o.reduction = r;
    return o;
}

static void test_golden_losses(void)
{
    static const char *const dts[2] = {"f32", "f64"};
    static const char *const reds[3] = {"mean", "sum", "none"};
    static const ct_reduction rv[3] = {CT_REDUCTION_MEAN, CT_REDUCTION_SUM, CT_REDUCTION_NONE};
    for (int d = 0; d < 2; d++) {
        for (int r = 0; r < 3; r++) {
            char name[64];
            ct_nll_loss_opts o = nll_opts(NULL, -100, rv[r]);
            snprintf(name, sizeof name, "l_nll_%s_%s", reds[r], dts[d]);
            GOLDEN(name, 2, ct_nll_loss(A, B, &o));
            snprintf(name, sizeof name, "l_ce_%s_%s", reds[r], dts[d]);
            GOLDEN(name, 2, ct_cross_entropy(A, B, &o));
            snprintf(name, sizeof name, "l_mse_%s_%s", reds[r], dts[d]);
            GOLDEN(name, 2, ct_mse_loss(A, B, rv[r]));
        }
    }
    GOLDEN("l_mse_bcast_f64", 2, ct_mse_loss(A, B, CT_REDUCTION_DEFAULT));
    /* defaults: NULL opts and a zeroed reduction mean 'mean' */
    GOLDEN("l_nll_mean_f64", 2, ct_nll_loss(A, B, NULL));
    GOLDEN("l_ce_mean_f32", 2, ct_cross_entropy(A, B, NULL));
}

static ct_nll_loss_opts g_opts;

static void test_golden_losses_weight_ignore(void)
{
    static const char *const reds[3] = {"mean", "sum", "none"};
    static const ct_reduction rv[3] = {CT_REDUCTION_MEAN, CT_REDUCTION_SUM, CT_REDUCTION_NONE};
    for (int r = 0; r < 3; r++) {
        char name[64];
        snprintf(name, sizeof name, "l_nll_weight_%s_f64", reds[r]);
        GOLDEN(name, 3, ct_nll_loss(A, B, (g_opts = nll_opts(C, -100, rv[r]), &g_opts)));
        snprintf(name, sizeof name, "l_ce_weight_%s_f64", reds[r]);
        GOLDEN(name, 3, ct_cross_entropy(A, B, (g_opts = nll_opts(C, -100, rv[r]), &g_opts)));
    }
    GOLDEN("l_nll_ignore_f64", 3,
           ct_nll_loss(A, B, (g_opts = nll_opts(C, 2, CT_REDUCTION_MEAN), &g_opts)));
    GOLDEN("l_ce_ignore_f64", 3,
           ct_cross_entropy(A, B, (g_opts = nll_opts(C, 2, CT_REDUCTION_MEAN), &g_opts)));
    GOLDEN("l_nll_ignore_default_f32", 2, ct_nll_loss(A, B, NULL));
    GOLDEN("l_ce_ignore_default_f32", 2, ct_cross_entropy(A, B, NULL));
    GOLDEN("l_nll_ignore_none_f32", 2,
           ct_nll_loss(A, B, (g_opts = nll_opts(NULL, -100, CT_REDUCTION_NONE), &g_opts)));
    GOLDEN("l_ce_ignore_none_f32", 2,
           ct_cross_entropy(A, B, (g_opts = nll_opts(NULL, -100, CT_REDUCTION_NONE), &g_opts)));
    GOLDEN("l_nll_1d_f64", 2, ct_nll_loss(A, B, NULL));
    GOLDEN("l_ce_1d_f64", 2, ct_cross_entropy(A, B, NULL));
    GOLDEN("l_nll_allignored_f32", 2, ct_nll_loss(A, B, NULL));
    GOLDEN("l_ce_allignored_f32", 2, ct_cross_entropy(A, B, NULL));
}

/* ---- dispatched reductions, softmax, GEMM and losses ------------------------------------ */
/* The GEMM ops' flops (the profiler's with_flops): 2 M N K, times the batch. */
static double op_flops(const char *name, const ct_tensor *a, const ct_tensor *b,
                       const ct_tensor *c)
{
    const ct_op *op = ct_op_find(name);
    if (!op || !op->flops) {
        ct_test_fail(__FILE__, __LINE__, "%s: no descriptor with flops", name);
        return -1;
    }
    const ct_tensor *in[3] = {a, b, c};
    ct_op_call call;
    memset(&call, 0, sizeof call);
    call.op = op;
    call.inputs = in;
    call.n_inputs = c ? 3 : 2;
    return op->flops(&call);
}

static void test_dispatch_gemm_flops(void)
{
    ct_scope_begin();
    int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s54[2] = {5, 4}, s3[1] = {3}, s4[1] = {4};
    int64_t s623[3] = {6, 2, 3}, s634[3] = {6, 3, 4}, s1634[4] = {7, 1, 3, 4};
    ct_tensor *a = ct_zeros(s23, 2, CT_FLOAT32), *b = ct_zeros(s34, 2, CT_FLOAT32);
    ct_tensor *v3 = ct_zeros(s3, 1, CT_FLOAT32), *v4 = ct_zeros(s4, 1, CT_FLOAT32);
    ct_tensor *ba = ct_zeros(s623, 3, CT_FLOAT32), *bb = ct_zeros(s634, 3, CT_FLOAT32);
    ct_tensor *w = ct_zeros(s54, 2, CT_FLOAT32), *x = ct_zeros(s1634, 4, CT_FLOAT32);
    CHECK(op_flops("aten::mm", a, b, NULL) == 2 * 2 * 4 * 3);
    CHECK(op_flops("aten::addmm", v4, a, b) == 2 * 2 * 4 * 3);
    CHECK(op_flops("aten::bmm", ba, bb, NULL) == 2 * 6 * 2 * 4 * 3);
    CHECK(op_flops("aten::matmul", ba, x, NULL) == 2 * 7 * 6 * 2 * 4 * 3);
    CHECK(op_flops("aten::mv", a, v3, NULL) == 2 * 2 * 3);
    CHECK(op_flops("aten::dot", v3, v3, NULL) == 2 * 3);
    CHECK(op_flops("aten::linear", x, w, NULL) == 2 * (7 * 3) * 5 * 4);
    CHECK(op_flops("ctorch::linear_relu", b, w, v4) == 2 * 3 * 5 * 4);
    ct_scope_end();
}

/* A hook that records the names of the ops it sees after they ran, and their outputs. */
typedef struct op_log {
    const char *names[64];
    int n_outputs[64];
    int n;
} op_log;

static void op_log_after(void *user, ct_op_call *call)
{
    op_log *log = (op_log *)user;
    if (log->n < 64) {
        log->names[log->n] = call->op->name;
        log->n_outputs[log->n++] = call->n_outputs;
    }
}

static int op_log_find(const op_log *log, const char *name)
{
    for (int k = 0; k < log->n; k++) {
        if (strcmp(log->names[k], name) == 0) {
            return k;
        }
    }
    return -1;
}

/* max.dim returns two outputs (an unwanted one is freed: the leak check sees it); the
   backward ops of softmax and of the fused cross-entropy are dispatched ops. */
static void test_dispatch_reduce_softmax_loss(void)
{
    op_log log;
    log.n = 0;
    ct_dispatch_hook hook = {NULL, op_log_after, &log};
    CHECK(ct_dispatch_hook_push(&hook) == CT_OK);
    int64_t s[2] = {4, 5}, ts = 4;
    ct_tensor *x = ct_randn(s, 2, CT_FLOAT32, NULL);
    ct_tensor *ix = NULL;
    CHECK(ct_max_dim(x, 1, false, NULL, &ix) == CT_OK && ix && ct_tensor_dtype(ix) == CT_INT64);
    int k = op_log_find(&log, "aten::max");
    CHECK(k >= 0 && log.n_outputs[k] == 2);
    ct_free(ix);
    ct_free(x);
    ct_scope_begin();
    x = ct_requires_grad_(ct_randn(s, 2, CT_FLOAT64, NULL), true);
    ct_tensor *target = ct_zeros(&ts, 1, CT_INT64);
    CHECK(ct_backward(ct_sum(ct_softmax(x, 1)), NULL, false) == CT_OK);
    CHECK(ct_backward(ct_cross_entropy(x, target, NULL), NULL, false) == CT_OK);
    CHECK(ct_backward(ct_sum(ct_log_softmax(x, 0)), NULL, false) == CT_OK);
    ct_scope_end();
    CHECK(ct_dispatch_hook_pop() == CT_OK);
    static const char *const want[] = {"aten::sum", "aten::softmax",
                                       "aten::_softmax_backward_data",
                                       "aten::cross_entropy_loss",
                                       "ctorch::cross_entropy_loss_backward",
                                       "aten::log_softmax", "aten::_log_softmax_backward_data"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_MSG(op_log_find(&log, want[i]) >= 0, "%s not dispatched", want[i]);
    }
}

/* Every fixture gen_golden.py wrote was compared by some case (run after all golden tests;
   a filtered run that skips cases skips this too, by its name). */
static void test_fixtures_all_used(void)
{
    CHECK(g_manifest_load() && g_man.n > 1000);
    int unused = 0;
    for (size_t k = 0; k < g_man.n; k++) {
        if (!g_man.used[k] && unused++ < 5) {
            ct_test_fail(__FILE__, __LINE__, "fixture %s was not used by any case",
                         g_man.names[k]);
        }
    }
    CHECK_MSG(unused == 0, "%d fixtures unused", unused);
}

/* ---- softmax row kernels: the AVX-512 path against the scalar reference --------------- */
/* Equal bit patterns, or both NaN. */
static bool same_f32(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* n values: normal floats of every exponent and sign, subnormals, zeros, infinities, NaN */
static void spread_f32(float *x, int64_t n, uint32_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        uint32_t bits = seed;
        memcpy(&x[i], &bits, sizeof bits);
    }
    static const float special[8] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -88.5f,
                                     88.75f};
    for (int64_t i = 0; i < 8 && i < n; i++) {
        x[i * 7 % n] = special[i];
    }
}

/* Softmax-like rows: normal values times 1, 30 or 1000, some -inf (masked) entries. */
static void rows_f32(float *x, int64_t n, uint32_t seed, float scale)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = scale * ((float)(seed >> 8) / (float)(1u << 24) - 0.5f);
        x[i] = seed % 97 == 0 ? -INFINITY : x[i];
    }
}

/* exp (ct__exp_row_f32 with shift 0, scale 1) over 1M spread floats, then softmax,
   log_softmax and lse of rows of every length class (tails of 0..15 elements, with the next
   row prefetched), each bit-identical between the two paths, with and without
   flush-to-zero. Without AVX-512 both calls take the scalar path. */
static void test_softmax_rows_simd_equals_scalar(void)
{
    const int64_t n = 1 << 20;
    float *x = (float *)malloc(sizeof(float) * (size_t)n);
    float *a = (float *)malloc(sizeof(float) * (size_t)n);
    float *b = (float *)malloc(sizeof(float) * (size_t)n);
    for (int f = 0; f < 2; f++) { /* the runner restores the flush mode afterwards */
        ct_set_flush_denormal(f == 1);
        spread_f32(x, n, 12345u);
        ct__exp_row_f32(x, a, n, 0.0f, 1.0f, false, false);
        ct__exp_row_f32(x, b, n, 0.0f, 1.0f, false, true);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            bad += !same_f32(a[i], b[i]);
        }
        CHECK_MSG(bad == 0, "exp: %lld of %lld differ (ftz %d)", (long long)bad, (long long)n, f);
        static const int64_t lens[9] = {1, 15, 16, 17, 64, 100, 1000, 1024, 1031};
        static const float scales[3] = {1.0f, 30.0f, 1000.0f};
        for (int c = 0; c < 9 * 3 * 16; c++) { /* length, scale, 16 seeds */
            int64_t R = lens[c / 48];
            rows_f32(x, 2 * R, (uint32_t)c, scales[c / 16 % 3]);
            for (int m = 0; m < 3; m++) {
                float la = ct__softmax_row_f32(x, a, R, (ct__softmax_mode)m, true, false);
                float lb = ct__softmax_row_f32(x, b, R, (ct__softmax_mode)m, true, true);
                bad = !same_f32(la, lb);
                for (int64_t i = 0; m != CT__SOFTMAX_LSE && i < R; i++) {
                    bad += !same_f32(a[i], b[i]);
                }
                ct__exp_row_f32(x, a, R, 0.5f, 0.25f, true, false);
                ct__exp_row_f32(x, b, R, 0.5f, 0.25f, true, true);
                for (int64_t i = 0; i < R; i++) {
                    bad += !same_f32(a[i], b[i]);
                }
                CHECK_MSG(bad == 0, "mode %d, R %lld, case %d: %lld differ", m, (long long)R, c,
                          (long long)bad);
            }
        }
    }
    free(x);
    free(a);
    free(b);
}

/* Same dtype, numel and bytes (contiguous tensors). */
static bool same_tensor(const ct_tensor *a, const ct_tensor *b)
{
    return a && b && ct_tensor_dtype(a) == ct_tensor_dtype(b) && ct_numel(a) == ct_numel(b) &&
           memcmp(ct_data_ptr(a), ct_data_ptr(b),
                  (size_t)ct_numel(a) * ct_dtype_size(ct_tensor_dtype(a))) == 0;
}

/* Softmax, log_softmax and cross-entropy forward + backward (float32, float64): the same
   bits at 1, 2, 3 and 4 threads; cross-entropy's loss equals nll_loss of log_softmax. */
static void test_softmax_xent_thread_counts(void)
{
    int saved = ct_get_num_threads();
    for (int d = 0; d < 2; d++) {
        ct_dtype dt = d ? CT_FLOAT64 : CT_FLOAT32;
        int64_t s[2] = {300, 1031}, ts[1] = {300};
        ct_manual_seed(7);
        ct_scope_begin();
        ct_tensor *x = ct_keep(ct_requires_grad_(ct_mul_scalar(ct_randn(s, 2, dt, NULL), 5.0),
                                                 true));
        ct_tensor *t = ct_keep(ct_randint(0, 1031, ts, 1, CT_INT64, NULL));
        ct_scope_end();
        ct_tensor *ref[4] = {NULL, NULL, NULL, NULL};
        for (int th = 1; th <= 4; th++) {
            ct_set_num_threads(th);
            ct_scope_begin();
            ct_set_grad(x, NULL);
            ct_tensor *got[4] = {ct_softmax(x, 1), ct_log_softmax(x, 1),
                                 ct_cross_entropy(x, t, NULL), NULL};
            ct_backward(got[2], NULL, false);
            got[3] = ct_detach(ct_grad(x));
            for (int k = 0; k < 4; k++) {
                if (th == 1) {
                    ref[k] = ct_keep(ct_detach(got[k]));
                    continue;
                }
                CHECK_MSG(same_tensor(got[k], ref[k]), "dtype %d, output %d, %d threads", d, k,
                          th);
            }
            CHECK(same_tensor(ct_nll_loss(ct_log_softmax(ct_detach(x), 1), t, NULL), got[2]));
            ct_scope_end();
        }
        ct_set_grad(x, NULL);
        for (int k = 0; k < 4; k++) {
            ct_free(ref[k]);
        }
        ct_free(x);
        ct_free(t);
    }
    ct_set_num_threads(saved);
}

/* ---- NPY reader and writer -------------------------------------------------------------- */
/* Reads a whole file into a malloc'd buffer (the caller frees); NULL when missing. */
static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = (unsigned char *)malloc((size_t)(len > 0 ? len : 1));
    *n = fread(buf, 1, (size_t)len, f);
    fclose(f);
    return buf;
}

static void test_npy_numpy_files(void)
{
    /* numpy-written files of every dtype load with the right dtype and shape, and
       ct_npy_save_buffer reproduces numpy.save's bytes exactly */
    static const struct { const char *name; ct_dtype dtype; } files[] = {
        {"npy_f32", CT_FLOAT32}, {"npy_f64", CT_FLOAT64}, {"npy_i64", CT_INT64},
        {"npy_i32", CT_INT32}, {"npy_i16", CT_INT16}, {"npy_i8", CT_INT8},
        {"npy_u8", CT_UINT8}, {"npy_bool", CT_BOOL}, {"npy_f64_0d", CT_FLOAT64},
        {"npy_i16_empty", CT_INT16},
    };
    ct_scope_begin();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[256];
        g_path(path, sizeof path, files[i].name, "out");
        long k = g_find(files[i].name, "out");
        CHECK_MSG(k >= 0, "%s is not in " GOLDEN_DIR "MANIFEST", path);
        if (k >= 0) {
            g_man.used[k] = true;
        }
        size_t n = 0;
        unsigned char *bytes = read_file(path, &n);
        CHECK_MSG(bytes != NULL, "missing %s", path);
        if (!bytes) {
            continue;
        }
        ct_tensor *t = ct_npy_load(path);
        CHECK_MSG(t && ct_tensor_dtype(t) == files[i].dtype, "%s: dtype", path);
        size_t need = ct_npy_save_buffer(t, NULL, 0);
        CHECK_MSG(need == n, "%s: save size %zu, numpy wrote %zu", path, need, n);
        unsigned char *mine = (unsigned char *)malloc(need ? need : 1);
        CHECK(ct_npy_save_buffer(t, mine, need) == need);
        CHECK_MSG(need == n && memcmp(mine, bytes, n) == 0, "%s: bytes differ from numpy.save",
                  path);
        /* too small a buffer: the size is returned and nothing written */
        memset(mine, 0xAB, need);
        CHECK(ct_npy_save_buffer(t, mine, need - 1) == need && mine[0] == 0xAB);
        ct_tensor *back = ct_npy_load_buffer(bytes, n);
        CHECK(back && ct_dim(back) == ct_dim(t) && ct_numel(back) == ct_numel(t));
        CHECK(back && memcmp(ct_data_ptr(back), ct_data_ptr(t), ct_nbytes(t)) == 0);
        free(mine);
        free(bytes);
    }
    ct_tensor *z = ct_npy_load(GOLDEN_DIR "npy_f64_0d.out.npy");
    CHECK(z && ct_dim(z) == 0 && ct_item(z) == 2.5);
    ct_tensor *e = ct_npy_load(GOLDEN_DIR "npy_i16_empty.out.npy");
    CHECK(e && ct_dim(e) == 3 && ct_size(e, 1) == 0 && ct_numel(e) == 0);
    ct_scope_end();
}

static void test_npy_round_trip(void)
{
    static const ct_dtype dts[8] = {CT_BOOL, CT_UINT8, CT_INT8, CT_INT16, CT_INT32, CT_INT64,
                                    CT_FLOAT32, CT_FLOAT64};
    const char *path = "npy_round_trip.tmp.npy";
    ct_scope_begin();
    for (int i = 0; i < 8; i++) {
        /* a non-contiguous view: saved in C order of its logical shape */
        ct_tensor *x = ct_reshape(ct_arange(-5, 19, 1, CT_FLOAT64), SZ(2, 3, 4), 3);
        if (dts[i] == CT_BOOL) {
            x = ct_gt_scalar(x, 2);
        } else if (dts[i] == CT_UINT8) {
            x = ct_to_dtype(ct_add_scalar(x, 5), dts[i]);
        } else {
            x = ct_to_dtype(ct_mul_scalar(x, dts[i] >= CT_FLOAT32 ? 0.37 : 1), dts[i]);
        }
        ct_tensor *v = ct_permute(x, SZ(2, 0, 1), 3);
        CHECK(ct_npy_save(path, v) == CT_OK);
        ct_tensor *y = ct_npy_load(path);
        CHECK(y && ct_tensor_dtype(y) == dts[i] && ct_dim(y) == 3 && ct_size(y, 0) == 4 &&
              ct_size(y, 1) == 2 && ct_size(y, 2) == 3);
        ct_tensor *vc = ct_contiguous(v); /* compared bytewise: independent of ct_eq */
        CHECK(y && vc && memcmp(ct_data_ptr(y), ct_data_ptr(vc), ct_nbytes(vc)) == 0);
        /* the buffer form agrees with the file form */
        size_t n = ct_npy_save_buffer(v, NULL, 0);
        unsigned char *buf = (unsigned char *)malloc(n);
        CHECK(ct_npy_save_buffer(v, buf, n) == n);
        ct_tensor *w = ct_npy_load_buffer(buf, n);
        CHECK(w && vc && memcmp(ct_data_ptr(w), ct_data_ptr(vc), ct_nbytes(vc)) == 0);
        free(buf);
    }
    /* 0-d and empty */
    ct_tensor *s = ct_scalar_tensor(-7, CT_INT32);
    CHECK(ct_npy_save(path, s) == CT_OK);
    ct_tensor *s2 = ct_npy_load(path);
    CHECK(s2 && ct_dim(s2) == 0 && ct_item(s2) == -7 && ct_tensor_dtype(s2) == CT_INT32);
    ct_tensor *e = ct_zeros(SZ(0, 3), 2, CT_FLOAT32);
    CHECK(ct_npy_save(path, e) == CT_OK);
    ct_tensor *e2 = ct_npy_load(path);
    CHECK(e2 && ct_dim(e2) == 2 && ct_size(e2, 0) == 0 && ct_size(e2, 1) == 3);
    /* 8 dims, and a loaded tensor is an ordinary leaf */
    ct_tensor *m = ct_ones(SZ(1, 2, 1, 2, 1, 2, 1, 2), 8, CT_FLOAT64);
    CHECK(ct_npy_save(path, m) == CT_OK);
    ct_tensor *m2 = ct_npy_load(path);
    CHECK(m2 && ct_dim(m2) == 8 && ct_numel(m2) == 16 && ct_is_leaf(m2) && ct_is_contiguous(m2));
    remove(path);
    ct_scope_end();
}

/* Builds a .npy file with a given header dict (format 1.0) and data bytes. */
static size_t make_npy(unsigned char *out, size_t cap, const char *dict, size_t data_bytes)
{
    size_t hl = strlen(dict);
    size_t total = 10 + hl + data_bytes;
    if (total > cap) {
        return 0;
    }
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(hl & 0xff);
    out[9] = (unsigned char)(hl >> 8);
    memcpy(out + 10, dict, hl);
    for (size_t i = 0; i < data_bytes; i++) {
        out[10 + hl + i] = (unsigned char)(i * 37 + 1);
    }
    return total;
}

#define NPY_REJECT(buf, n, code, substr)                                                      \
    do {                                                                                     \
        CHECK(ct_npy_load_buffer(buf, n) == NULL);                                           \
        CHECK_ERROR(code, substr);                                                           \
    } while (0)

static void test_npy_hostile_headers(void)
{
    unsigned char b[512];
    size_t n;
    ct_scope_begin();
    /* a valid file for reference */
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24);
    ct_tensor *ok = ct_npy_load_buffer(b, n);
    CHECK(ok && ct_numel(ok) == 6 && ct_tensor_dtype(ok) == CT_FLOAT32);
    /* keys in any order, double quotes, no trailing comma, Python 2 longs */
    n = make_npy(b, sizeof b, "{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"|u1\"}",
                 3);
    ok = ct_npy_load_buffer(b, n);
    CHECK(ok && ct_numel(ok) == 3 && ct_tensor_dtype(ok) == CT_UINT8);
    /* format 2.0: 4-byte header length */
    {
        const char *dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }\n";
        size_t hl = strlen(dict);
        memcpy(b, "\x93NUMPY\x02\x00", 8);
        b[8] = (unsigned char)hl;
        b[9] = b[10] = b[11] = 0;
        memcpy(b + 12, dict, hl);
        b[12 + hl] = 0x34;
        b[13 + hl] = 0x12;
        b[14 + hl] = 0xff;
        b[15 + hl] = 0xff;
        ok = ct_npy_load_buffer(b, 16 + hl);
        CHECK(ok && ct_tensor_dtype(ok) == CT_INT16 && ct_numel(ok) == 2);
        CHECK(ok && ((const int16_t *)ct_data_ptr(ok))[0] == 0x1234 &&
              ((const int16_t *)ct_data_ptr(ok))[1] == -1);
        b[8] = 0xff; /* header length beyond the file */
        NPY_REJECT(b, 16 + hl, CT_ERR_FORMAT, "header length 255 exceeds");
        b[6] = 4; /* unknown version */
        NPY_REJECT(b, 16 + hl, CT_ERR_UNSUPPORTED, "not (4, 0)");
    }
    /* bool bytes other than 0/1 read as true */
    n = make_npy(b, sizeof b, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 3);
    b[n - 3] = 0;
    b[n - 2] = 2;
    b[n - 1] = 255;
    ok = ct_npy_load_buffer(b, n);
    CHECK(ok && ct_item(ct_sum(ok)) == 2);

    /* truncated preamble, bad magic */
    NPY_REJECT(b, 5, CT_ERR_FORMAT, "truncated file: 5 bytes");
    NPY_REJECT(NULL, 0, CT_ERR_FORMAT, "truncated file: 0 bytes");
    NPY_REJECT("\x93NUMPY\x01", 7, CT_ERR_FORMAT, "truncated");
    NPY_REJECT("\x93NUMPY\x01\x00\x10", 9, CT_ERR_FORMAT, "truncated");
    NPY_REJECT("PK\x03\x04\x14\x00\x00\x00\x00\x00", 10, CT_ERR_FORMAT,
               "magic string is not correct");
    /* header length larger than the file */
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
    b[8] = 0xff;
    b[9] = 0x7f;
    NPY_REJECT(b, n, CT_ERR_FORMAT, "header length 32767 exceeds");
    /* fortran order, unknown and big-endian dtypes, structured dtypes */
    n = make_npy(b, sizeof b, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 32);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "shape [2, 3] (fortran_order) of <f8 needs 48");
    n = make_npy(b, sizeof b, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16);
    NPY_REJECT(b, n, CT_ERR_DTYPE, "unsupported dtype descr '<c8'");
    n = make_npy(b, sizeof b, "{'descr': '>u4', 'fortran_order': False, 'shape': (2,), }", 8);
    NPY_REJECT(b, n, CT_ERR_DTYPE, "unsupported dtype descr '>u4'");
    n = make_npy(b, sizeof b, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", 8);
    NPY_REJECT(b, n, CT_ERR_DTYPE, "'<u4'");
    n = make_npy(b, sizeof b, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                 8);
    NPY_REJECT(b, n, CT_ERR_DTYPE, "structured dtypes are not supported");
    /* bad shapes */
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", 0);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "'shape' entries must be non-negative integers");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", 0);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "expected ',' or ')' in 'shape'");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (4), }", 16);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "trailing comma");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", 24);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "expected '(' to open 'shape'");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3), }", 24);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "non-negative integers");
    n = make_npy(b, sizeof b,
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "'shape' entry is too large");
    n = make_npy(b, sizeof b,
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                 0);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "is too large");
    n = make_npy(
        b, sizeof b,
        "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776), }",
        0);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "is too large");
    n = make_npy(b, sizeof b,
                 "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }",
                 1);
    NPY_REJECT(b, n, CT_ERR_UNSUPPORTED, "more than 8 dimensions");
    /* data size mismatch */
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 40);
    NPY_REJECT(b, n, CT_ERR_FORMAT,
               "data has 40 bytes but shape [3, 4] of <f4 needs 48 (truncated file)");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 52);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "data has 52 bytes but shape [3, 4] of <f4 needs 48");
    /* malformed dicts */
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False}", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "missing 'shape'");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "unexpected key 'x'");
    n = make_npy(b, sizeof b,
                 "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "key 'descr' appears twice");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': Nope, 'shape': (1,)}", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "expected True or False");
    n = make_npy(b, sizeof b, "{'descr': '<f4 , 'fortran_order': False, 'shape': (1,)}", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "malformed header");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "expected ',' or '}'");
    n = make_npy(b, sizeof b, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "unexpected characters after '}'");
    n = make_npy(b, sizeof b, "'descr': '<f4'", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "expected '{'");
    n = make_npy(b, sizeof b, "", 4);
    NPY_REJECT(b, n, CT_ERR_FORMAT, "expected '{'");
    /* files: missing, and NULL arguments */
    CHECK(ct_npy_load("golden/does_not_exist.npy") == NULL);
    CHECK_ERROR(CT_ERR_IO, "ct_npy_load: No such file or directory: 'golden/does_not_exist.npy'");
    CHECK(ct_npy_load("golden") == NULL); /* a directory */
    CHECK_ERROR(CT_ERR_IO, "golden");
    CHECK(ct_npy_load(NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_npy_load");
    CHECK(ct_npy_load_buffer(NULL, 10) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_npy_load_buffer");
    CHECK(ct_npy_save("x.npy", NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_npy_save");
    CHECK(ct_npy_save_buffer(NULL, NULL, 0) == 0);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_npy_save_buffer");
    CHECK(ct_npy_save("no_such_dir/x.npy", ok) == CT_ERR_IO);
    CHECK_ERROR(CT_ERR_IO, "no_such_dir/x.npy");
    ct_scope_end();
}

/* A fixed-seed fuzz loop: random byte mutations and truncations of valid files must give a
   tensor or an error, never a crash, a leak or an out-of-bounds read (run under ASan by
   `make sanitize`). */
static uint64_t fuzz_state = 0x9E3779B97F4A7C15ull;
static uint32_t fuzz_next(void)
{
    fuzz_state ^= fuzz_state << 13;
    fuzz_state ^= fuzz_state >> 7;
    fuzz_state ^= fuzz_state << 17;
    return (uint32_t)(fuzz_state >> 16);
}

static void test_npy_fuzz(void)
{
    static const char *const seeds[3] = {"npy_f32", "npy_bool", "npy_f64_0d"};
    static const char interesting[] = "{}()[],:' \"0123456789-LTrueFalse<|>fiub\n\x00\xff";
    int accepted = 0, rejected = 0;
    fuzz_state = 0x9E3779B97F4A7C15ull;
    for (int s = 0; s < 3; s++) {
        char path[256];
        g_path(path, sizeof path, seeds[s], "out");
        size_t n = 0;
        unsigned char *orig = read_file(path, &n);
        CHECK_MSG(orig != NULL, "missing %s", path);
        if (!orig) {
            continue;
        }
        for (int iter = 0; iter < 1500; iter++) {
            /* an exact-size heap copy, so ASan catches any read past the end */
            size_t len = n;
            int kind = (int)(fuzz_next() % 4);
            if (kind == 0) {
                len = fuzz_next() % (n + 1);
            }
            unsigned char *buf = (unsigned char *)malloc(len ? len : 1);
            memcpy(buf, orig, len);
            int muts = kind == 0 ? 0 : 1 + (int)(fuzz_next() % 4);
            for (int m = 0; m < muts && len > 0; m++) {
                size_t at = fuzz_next() % len;
                if (kind == 1) {
                    buf[at] = (unsigned char)fuzz_next();
                } else if (kind == 2) {
                    buf[at] = (unsigned char)interesting[fuzz_next() % (sizeof interesting - 1)];
                } else {
                    buf[at] ^= (unsigned char)(1u << (fuzz_next() % 8));
                }
            }
            size_t live = ct_memory_allocated();
            ct_scope_begin();
            ct_tensor *t = ct_npy_load_buffer(buf, len);
            if (t) {
                accepted++;
                CHECK(ct_nbytes(t) <= len);
            } else {
                rejected++;
                CHECK_MSG(ct_error_code() == CT_ERR_FORMAT || ct_error_code() == CT_ERR_DTYPE ||
                          ct_error_code() == CT_ERR_UNSUPPORTED,
                          "fuzz: unexpected code %s (%s)", ct_status_str(ct_error_code()),
                          ct_error() ? ct_error() : "none");
                CHECK(ct_error() && strncmp(ct_error(), "ct_npy_load_buffer: ", 20) == 0);
                ct_error_clear();
            }
            ct_scope_end();
            CHECK(ct_memory_allocated() == live);
            free(buf);
        }
        free(orig);
    }
    CHECK(accepted > 0 && rejected > 0);
}

/* ---- op errors -------------------------------------------------------------------------- */
static void test_op_errors_shapes(void)
{
    ct_scope_begin();
    ct_tensor *a23 = ct_zeros(SZ(2, 3), 2, CT_FLOAT32);
    ct_tensor *a24 = ct_zeros(SZ(2, 4), 2, CT_FLOAT32);
    ct_tensor *a45 = ct_zeros(SZ(4, 5), 2, CT_FLOAT32);
    ct_tensor *v3 = ct_zeros(SZ(3), 1, CT_FLOAT32);
    ct_tensor *v4 = ct_zeros(SZ(4), 1, CT_FLOAT32);
    CHECK(ct_add(a23, a24) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_add: The size of tensor a (3) must match the size of tensor b "
                              "(4) at non-singleton dimension 1");
    CHECK(ct_mul(v3, v4) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (3) must match the size of tensor b (4) at "
                              "non-singleton dimension 0");
    CHECK(ct_where(ct_zeros(SZ(2, 3), 2, CT_BOOL), a23, a24) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "must match the size of tensor");
    CHECK(ct_mm(a23, a45) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    CHECK(ct_matmul(a23, a45) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    CHECK(ct_linear(a23, ct_zeros(SZ(5, 4), 2, CT_FLOAT32), NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    CHECK(ct_bmm(ct_zeros(SZ(2, 3, 4), 3, CT_FLOAT32), ct_zeros(SZ(2, 5, 6), 3, CT_FLOAT32)) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: "
                              "[2, 4] but got: [2, 5].");
    CHECK(ct_bmm(ct_zeros(SZ(2, 3, 4), 3, CT_FLOAT32), ct_zeros(SZ(3, 4, 6), 3, CT_FLOAT32)) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: "
                              "[2, 4] but got: [3, 4].");
    CHECK(ct_dot(v3, v4) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "inconsistent tensor size, expected tensor [3] and src [4] to have "
                              "the same number of elements, but got 3 and 4 elements respectively");
    CHECK(ct_matmul(v3, v4) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "inconsistent tensor size, expected tensor [3] and src [4]");
    CHECK(ct_mv(a23, v4) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "size mismatch, got input (2), mat (2x3), vec (4)");
    CHECK(ct_matmul(ct_zeros(SZ(2, 3, 4), 3, CT_FLOAT32), ct_zeros(SZ(5), 1, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "size mismatch, got input (6), mat (6x4), vec (5)");
    CHECK(ct_sum_dim(a23, 2, false) == NULL);
    CHECK_ERROR(CT_ERR_INDEX,
                "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    CHECK(cat2(a23, ct_zeros(SZ(3, 3), 2, CT_FLOAT32), 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Sizes of tensors must match except in dimension 1. Expected size 2 "
                              "but got size 3 for tensor number 1 in the list.");
    CHECK(stack2(ct_zeros(SZ(2), 1, CT_FLOAT32), v3, 0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "stack expects each tensor to be equal size, but got [2] at entry 0 "
                              "and [3] at entry 1");
    CHECK(ct_expand(a23, SZ(2, 4), 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The expanded size of the tensor (4) must match the existing size "
                              "(3) at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor "
                              "sizes: [2, 3]");
    CHECK(ct_max_dim(ct_zeros(SZ(0, 3), 2, CT_FLOAT32), 0, false, NULL, NULL) != CT_OK);
    CHECK_ERROR(CT_ERR_VALUE, "max(): Expected reduction dim 0 to have non-zero size.");
    ct_tensor *tgt = ct_zeros(SZ(4), 1, CT_INT64);
    CHECK(ct_nll_loss(ct_zeros(SZ(3, 4), 2, CT_FLOAT32), tgt, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected input batch_size (3) to match target batch_size (4).");
    int64_t bad[3] = {0, 1, 10};
    CHECK(ct_nll_loss(ct_zeros(SZ(3, 4), 2, CT_FLOAT32),
                      ct_tensor_from_data(bad, CT_INT64, SZ(3), 1), NULL) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Target 10 is out of bounds.");
    ct_scope_end();
}

static void test_op_errors_dtypes(void)
{
    ct_scope_begin();
    ct_tensor *f = ct_zeros(SZ(2, 3), 2, CT_FLOAT32);
    ct_tensor *d = ct_zeros(SZ(3, 5), 2, CT_FLOAT64);
    ct_tensor *l = ct_zeros(SZ(3), 1, CT_INT64);
    CHECK(ct_mm(f, d) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE,
                "expected m1 and m2 to have the same dtype, but got: float != double");
    CHECK(ct_mean(l) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "mean(): could not infer output dtype. Input dtype must be either a "
                              "floating point or complex dtype. Got: Long");
    CHECK(ct_add_(l, ct_zeros(SZ(3), 1, CT_FLOAT32), 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type Float can't be cast to the desired output type Long");
    CHECK(ct_where(f, f, f) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "where expected condition to be a boolean tensor, but got a tensor "
                              "with dtype Float");
    CHECK(ct_softmax(l, 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_softmax");
    CHECK(ct_log_softmax(l, 0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_log_softmax");
    CHECK(ct_requires_grad_(l, true) == NULL || !ct_requires_grad(l));
    CHECK_ERROR(CT_ERR_DTYPE, "only Tensors of floating point dtype can require gradients");
    CHECK(ct_nll_loss(ct_zeros(SZ(3, 4), 2, CT_FLOAT32), ct_zeros(SZ(3), 1, CT_INT32), NULL) ==
          NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Int");
    /* PyTorch: "Subtraction, the `-` operator, with a bool tensor is not supported" */
    ct_tensor *bb = ct_zeros(SZ(3), 1, CT_BOOL);
    CHECK(ct_sub(bb, ct_zeros(SZ(3), 1, CT_INT32)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Subtraction, the `-` operator, with a bool tensor is not supported");
    CHECK(ct_randint(5, 5, SZ(3), 1, CT_INT64, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE,
                "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
    CHECK(ct_arange(0, 5, -1, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "upper bound and lower bound inconsistent with step sign");
    CHECK(ct_arange(0, 5, 0, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_arange");
    ct_scope_end();
}

static void test_op_errors_null(void)
{
    ct_scope_begin();
    ct_tensor *x = ct_ones(SZ(2, 2), 2, CT_FLOAT32);
    /* each op given NULL returns NULL with CT_ERR_NULL_ARG naming it */
    static const struct { const char *op; unary_fn fn; } un[] = {
        {"ct_neg", ct_neg}, {"ct_exp", ct_exp}, {"ct_relu", ct_relu}, {"ct_sum", ct_sum},
        {"ct_mean", ct_mean}, {"ct_argmax", ct_argmax}, {"ct_contiguous", ct_contiguous},
        {"ct_t", ct_t}, {"ct_squeeze", ct_squeeze}, {"ct_clone", ct_clone},
    };
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) {
        CHECK(un[i].fn(NULL) == NULL);
        CHECK_ERROR(CT_ERR_NULL_ARG, un[i].op);
    }
    static const struct { const char *op; binary_fn fn; } bin[] = {
        {"ct_add", ct_add}, {"ct_mul", ct_mul}, {"ct_matmul", ct_matmul}, {"ct_mm", ct_mm},
        {"ct_dot", ct_dot}, {"ct_eq", ct_eq}, {"ct_maximum", ct_maximum},
    };
    for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++) {
        CHECK(bin[i].fn(x, NULL) == NULL);
        CHECK_ERROR(CT_ERR_NULL_ARG, bin[i].op);
        CHECK(bin[i].fn(NULL, x) == NULL);
        CHECK_ERROR(CT_ERR_NULL_ARG, bin[i].op);
    }
    CHECK(ct_softmax(NULL, 0) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_softmax");
    CHECK(ct_view(NULL, SZ(4), 1) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_view");
    CHECK(ct_cross_entropy(x, NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_cross_entropy");
    CHECK(ct_addmm(x, NULL, x, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_addmm");
    /* NULL propagation: a chain after a failure keeps the first message */
    ct_tensor *bad = ct_add(x, ct_ones(SZ(3), 1, CT_FLOAT32));
    ct_tensor *chain = ct_softmax(ct_matmul(ct_exp(bad), x), 1);
    CHECK(bad == NULL && chain == NULL);
    CHECK(ct_sum(ct_relu(NULL)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE,
                "ct_add: The size of tensor a (2) must match the size of tensor b (3) "
                "at non-singleton dimension 1");
    ct_scope_end();
}

void test_ops(void)
{
    RUN(test_golden_creation);
    RUN(test_golden_rng_rand);
    RUN(test_golden_rng_randn);
    RUN(test_golden_rng_int);
    RUN(test_golden_rng_sequence);
    RUN(test_golden_unary);
    RUN(test_golden_binary);
    RUN(test_golden_scalar_ops);
    RUN(test_golden_where_clamp);
    RUN(test_golden_reduce_all);
    RUN(test_golden_reduce_nan);
    RUN(test_golden_reduce_dim);
    RUN(test_golden_views);
    RUN(test_golden_cat_stack);
    RUN(test_view_ops_dispatch);
    RUN(test_golden_matmul);
    RUN(test_golden_linalg);
    RUN(test_golden_softmax);
    RUN(test_golden_losses);
    RUN(test_golden_losses_weight_ignore);
    RUN(test_dispatch_gemm_flops);
    RUN(test_dispatch_reduce_softmax_loss);
    RUN(test_softmax_rows_simd_equals_scalar);
    RUN(test_softmax_xent_thread_counts);
    RUN(test_npy_numpy_files);
    RUN(test_fixtures_all_used);
    RUN(test_npy_round_trip);
    RUN(test_npy_hostile_headers);
    RUN(test_npy_fuzz);
    RUN(test_op_errors_shapes);
    RUN(test_op_errors_dtypes);
    RUN(test_op_errors_null);
}
