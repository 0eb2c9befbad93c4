/* tests/test_pointwise2.c - the pointwise ops of issue 7's second slice against PyTorch:
 * expm1/exp2/log2/log10, the trigonometric and hyperbolic family, atan2, rounding (floor,
 * ceil, round, trunc, frac and their _ forms), fmod/remainder/floor_divide, sign/sgn/signbit,
 * nan_to_num, logaddexp/logaddexp2/xlogy/logit, erfc/erfinv, hypot, bitwise ops, logical_xor,
 * fmax/fmin, isclose/isposinf/isneginf/isreal: values and gradients from
 * tools/gen_golden_pointwise2.py on contiguous, transposed, step-sliced and broadcast inputs
 * of every dtype the op takes; gradcheck and double backward; PyTorch's edge values and
 * errors; the _foreach_ ops against their per-tensor ops.
 */
#include "test.h"

#include <float.h>

typedef struct pw2_case {
    const char *op;
    ct_dtype da, db, out_dtype;
    char layout; /* a: 'c' contiguous (3, 4), 't' transpose of (4, 3), 's' (3, 8)[:, ::2] */
    char bshape; /* b: 'f' (3, 4), 'r' (4,), 'k' (3, 1); '-': unary */
    const double *a, *b;
    int grad;
    double out[12], ga[12], gb[12];
} pw2_case;

#include "golden/pointwise2_golden.h"

#define F64 CT_FLOAT64
#define N_CASES ((int)(sizeof pw2_cases / sizeof pw2_cases[0]))

typedef ct_tensor *(*pw2_un)(const ct_tensor *);
typedef ct_tensor *(*pw2_bin)(const ct_tensor *, const ct_tensor *);
typedef ct_tensor *(*pw2_un_)(ct_tensor *);
typedef ct_tensor *(*pw2_bin_)(ct_tensor *, const ct_tensor *);

static const struct {
    const char *name;
    pw2_un fn;
} pw2_unary[] = {
    {"expm1", ct_expm1},       {"exp2", ct_exp2},         {"log2", ct_log2},
    {"log10", ct_log10},       {"tan", ct_tan},           {"asin", ct_asin},
    {"acos", ct_acos},         {"atan", ct_atan},         {"sinh", ct_sinh},
    {"cosh", ct_cosh},         {"asinh", ct_asinh},       {"acosh", ct_acosh},
    {"atanh", ct_atanh},       {"erfc", ct_erfc},         {"erfinv", ct_erfinv},
    {"floor", ct_floor},       {"ceil", ct_ceil},         {"round", ct_round},
    {"trunc", ct_trunc},       {"frac", ct_frac},         {"sign", ct_sign},
    {"sgn", ct_sgn},           {"signbit", ct_signbit},   {"isposinf", ct_isposinf},
    {"isneginf", ct_isneginf}, {"isreal", ct_isreal},     {"bitwise_not", ct_bitwise_not},
};

static const struct {
    const char *name;
    pw2_un_ fn;
} pw2_unary_[] = {
    {"floor_", ct_floor_}, {"ceil_", ct_ceil_},   {"round_", ct_round_}, {"trunc_", ct_trunc_},
    {"frac_", ct_frac_},   {"expm1_", ct_expm1_}, {"exp2_", ct_exp2_},   {"log2_", ct_log2_},
    {"log10_", ct_log10_}, {"tan_", ct_tan_},     {"asin_", ct_asin_},   {"acos_", ct_acos_},
    {"atan_", ct_atan_},   {"sinh_", ct_sinh_},   {"cosh_", ct_cosh_},   {"asinh_", ct_asinh_},
    {"acosh_", ct_acosh_}, {"atanh_", ct_atanh_}, {"erfc_", ct_erfc_},   {"erfinv_", ct_erfinv_},
    {"sign_", ct_sign_},   {"sgn_", ct_sgn_},     {"bitwise_not_", ct_bitwise_not_},
};

static const struct {
    const char *name;
    pw2_bin_ fn;
} pw2_binary_[] = {
    {"fmod_", ct_fmod_},
    {"remainder_", ct_remainder_},
    {"floor_divide_", ct_floor_divide_},
    {"atan2_", ct_atan2_},
    {"xlogy_", ct_xlogy_},
    {"bitwise_and_", ct_bitwise_and_},
    {"bitwise_or_", ct_bitwise_or_},
    {"bitwise_xor_", ct_bitwise_xor_},
    {"bitwise_left_shift_", ct_bitwise_left_shift_},
    {"bitwise_right_shift_", ct_bitwise_right_shift_},
    {"logical_xor_", ct_logical_xor_},
};

static const struct {
    const char *name;
    pw2_bin fn;
} pw2_binary[] = {
    {"atan2", ct_atan2},
    {"hypot", ct_hypot},
    {"logaddexp", ct_logaddexp},
    {"logaddexp2", ct_logaddexp2},
    {"xlogy", ct_xlogy},
    {"fmod", ct_fmod},
    {"remainder", ct_remainder},
    {"floor_divide", ct_floor_divide},
    {"fmax", ct_fmax},
    {"fmin", ct_fmin},
    {"bitwise_and", ct_bitwise_and},
    {"bitwise_or", ct_bitwise_or},
    {"bitwise_xor", ct_bitwise_xor},
    {"bitwise_left_shift", ct_bitwise_left_shift},
    {"bitwise_right_shift", ct_bitwise_right_shift},
    {"logical_xor", ct_logical_xor},
};

/* The case's op on a (and b); in-place ops on a clone of a, as the generator. */
static ct_tensor *pw2_apply(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    for (size_t i = 0; i < sizeof pw2_unary / sizeof pw2_unary[0]; i++) {
        if (!strcmp(op, pw2_unary[i].name)) {
            return pw2_unary[i].fn(a);
        }
    }
    for (size_t i = 0; i < sizeof pw2_binary / sizeof pw2_binary[0]; i++) {
        if (!strcmp(op, pw2_binary[i].name)) {
            return pw2_binary[i].fn(a, b);
        }
    }
    for (size_t i = 0; i < sizeof pw2_unary_ / sizeof pw2_unary_[0]; i++) {
        if (!strcmp(op, pw2_unary_[i].name)) {
            return pw2_unary_[i].fn(ct_clone(a));
        }
    }
    static const double big = 2.0, low = -3.0, low_ = -7.0;
    if (!strcmp(op, "nan_to_num")) {
        return ct_nan_to_num(a, 0.0, NULL, NULL);
    }
    if (!strcmp(op, "nan_to_num_args")) {
        return ct_nan_to_num(a, 1.5, &big, &low);
    }
    if (!strcmp(op, "nan_to_num_")) {
        return ct_nan_to_num_(ct_clone(a), -1.0, NULL, &low_);
    }
    if (!strncmp(op, "logit", 5)) {
        return ct_logit(a, op[5] ? 0.2 : -1.0);
    }
    for (size_t i = 0; i < sizeof pw2_binary_ / sizeof pw2_binary_[0]; i++) {
        if (!strcmp(op, pw2_binary_[i].name)) {
            return pw2_binary_[i].fn(ct_clone(a), b);
        }
    }
    if (!strcmp(op, "logit_")) {
        return ct_logit_(ct_clone(a), 0.2);
    }
    if (!strcmp(op, "isclose")) {
        return ct_isclose(a, b, 1e-5, 1e-8, false);
    }
    return !strcmp(op, "isclose_nan") ? ct_isclose(a, b, 1e-3, 0.1, true)
                                      : ct_isclose(a, b, 0, 0, false);
}

/* The case's a: the stored values in its dtype, laid out as PyTorch's. */
static ct_tensor *pw2_a(const pw2_case *k)
{
    static const int64_t c[2] = {3, 4}, t[2] = {4, 3}, s[2] = {3, 8}, s3[3] = {3, 4, 2};
    const int64_t *shape = k->layout == 't' ? t : (k->layout == 's' ? s : c);
    ct_tensor *x = ct_to_dtype(ct_tensor_from_data(k->a, F64, shape, 2), k->da);
    if (k->layout == 't') {
        return ct_t(x);
    }
    return k->layout == 's' ? ct_select(ct_view(x, s3, 3), 2, 0) : x;
}

static ct_tensor *pw2_b(const pw2_case *k, int64_t *numel)
{
    static const int64_t f[2] = {3, 4}, r[1] = {4}, kk[2] = {3, 1};
    const int64_t *shape = k->bshape == 'r' ? r : (k->bshape == 'k' ? kk : f);
    int nd = k->bshape == 'r' ? 1 : 2;
    *numel = ct_test_numel(shape, nd);
    return ct_to_dtype(ct_tensor_from_data(k->b, F64, shape, nd), k->db);
}

/* Float32 results within 2e-5 relative (libm's and PyTorch's vectorized float math differ in
   the last bits), float64 within 1e-10, integers and bool exactly. */
static void pw2_tolerances(ct_dtype d, double *rtol, double *atol)
{
    bool exact = !ct_dtype_is_floating_point(d);
    *rtol = exact ? 0 : (d == CT_FLOAT32 ? 2e-5 : 1e-10);
    *atol = exact ? 0 : (d == CT_FLOAT32 ? 2e-6 : 1e-12);
}

/* CHECK_TENSOR that also accepts equal infinities (n <= 12). */
static int pw2_close(int line, const ct_tensor *t, const double *want, int64_t n, double rtol,
                     double atol)
{
    double got[12], exp[12];
    ct_tensor *c = t ? ct_contiguous(ct_to_dtype(ct_detach(t), F64)) : NULL;
    if (!c || ct_numel(c) != n || n > 12) {
        ct_test_fail(__FILE__, line, "tensor NULL or of %lld elements (%s)",
                     (long long)(c ? ct_numel(c) : -1), ct_error() ? ct_error() : "");
        return 0;
    }
    memcpy(got, ct_data_ptr(c), sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        bool same_inf = isinf(got[i]) && got[i] == want[i];
        exp[i] = same_inf ? 0 : want[i];
        got[i] = same_inf ? 0 : got[i];
    }
    return ct_test_close(__FILE__, line, got, exp, n, rtol, atol);
}
#define PW2_CLOSE(t, want, n, rtol, atol) pw2_close(__LINE__, t, want, n, rtol, atol)

static void pw2_check_case(const pw2_case *k, const double *w)
{
    static const int64_t s34[2] = {3, 4};
    ct_tensor *a = pw2_a(k), *b = NULL;
    int64_t nb = 0;
    if (k->bshape != '-') {
        b = pw2_b(k, &nb);
    }
    if (k->grad) {
        a = ct_requires_grad_(ct_detach(a), true);
        b = b ? ct_requires_grad_(b, true) : NULL;
    }
    ct_tensor *out = pw2_apply(k->op, a, b);
    double rtol, atol;
    pw2_tolerances(k->out_dtype, &rtol, &atol);
    CHECK_MSG(out && ct_tensor_dtype(out) == k->out_dtype, "%s %s: dtype %s (%s)", k->op,
              ct_dtype_name(k->da), out ? ct_dtype_name(ct_tensor_dtype(out)) : "-",
              ct_error() ? ct_error() : "");
    CHECK_MSG(ct_test_has_shape(out, s34, 2), "%s: shape", k->op);
    CHECK_MSG(PW2_CLOSE(out, k->out, 12, rtol, atol), "%s %s %c%c: values", k->op,
              ct_dtype_name(k->da), k->layout, k->bshape);
    if (k->grad && out) {
        ct_tensor *wt = ct_to_dtype(ct_tensor_from_data(w, F64, s34, 2), k->out_dtype);
        CHECK(ct_backward(ct_sum(ct_mul(out, wt)), NULL, false) == CT_OK);
        CHECK_MSG(PW2_CLOSE(ct_grad(a), k->ga, 12, rtol, atol), "%s %s: grad a", k->op,
                  ct_dtype_name(k->da));
        if (b) {
            CHECK_MSG(PW2_CLOSE(ct_grad(b), k->gb, nb, rtol, atol), "%s %s: grad b", k->op,
                      ct_dtype_name(k->da));
        }
    }
}

static void test_pw2_golden(void)
{
    double w[12];
    for (int i = 0; i < 12; i++) {
        w[i] = 0.5 + 0.125 * i;
    }
    CHECK(N_CASES == 144); /* every generated case is compared */
    int with_grad = 0;
    for (int i = 0; i < N_CASES; i++) {
        const pw2_case *k = &pw2_cases[i];
        ct_scope_begin();
        pw2_check_case(k, w);
        with_grad += k->grad;
        if (ct_error()) {
            fprintf(stderr, "  case %s %s %c: %s\n", k->op, ct_dtype_name(k->da), k->layout,
                    ct_error());
            ct_test_failed_checks++;
            ct_error_clear();
        }
        ct_scope_end();
    }
    CHECK(with_grad > 60);
}

/* ---- gradcheck ------------------------------------------------------------------------ */
typedef struct pw2_gc {
    const char *name;
    double lo, hi, lo_b, hi_b; /* a uniform in [lo, hi), b in [lo_b, hi_b) (binary ops) */
} pw2_gc;

static ct_tensor *pw2_gc_fn(ct_tensor *const *in, int n, void *user)
{
    return pw2_apply(((const pw2_gc *)user)->name, in[0], n > 1 ? in[1] : NULL);
}

static ct_tensor *pw2_uniform(const int64_t *shape, int nd, double lo, double hi)
{
    return ct_add_scalar(ct_mul_scalar(ct_rand(shape, nd, F64, NULL), hi - lo), lo);
}

/* Unary ops away from their non-smooth points (the rounding ops: between the jumps, where the
   gradient is PyTorch's zero). */
static const pw2_gc pw2_gc_unary[] = {
    {"expm1", -2, 2, 0, 0},     {"exp2", -2, 2, 0, 0},         {"log2", 0.2, 3, 0, 0},
    {"log10", 0.2, 3, 0, 0},    {"tan", -1.2, 1.2, 0, 0},      {"asin", -0.9, 0.9, 0, 0},
    {"acos", -0.9, 0.9, 0, 0},  {"atan", -2, 2, 0, 0},         {"sinh", -2, 2, 0, 0},
    {"cosh", -2, 2, 0, 0},      {"asinh", -2, 2, 0, 0},        {"acosh", 1.2, 3, 0, 0},
    {"atanh", -0.9, 0.9, 0, 0}, {"erfc", -2, 2, 0, 0},         {"erfinv", -0.9, 0.9, 0, 0},
    {"floor", 0.1, 0.9, 0, 0},  {"ceil", 1.1, 1.9, 0, 0},      {"round", 0.1, 0.4, 0, 0},
    {"trunc", -0.9, -0.1, 0, 0}, {"frac", 1.1, 1.9, 0, 0},     {"sign", 0.1, 2, 0, 0},
    {"sgn", -2, -0.1, 0, 0},    {"floor_", 0.1, 0.9, 0, 0},    {"round_", 1.6, 2.4, 0, 0},
    {"frac_", -1.9, -1.1, 0, 0}, {"nan_to_num", -2, 2, 0, 0},  {"nan_to_num_", -2, 2, 0, 0},
    {"logit", 0.1, 0.9, 0, 0},  {"logit_eps", 0.25, 0.75, 0, 0}, {"logit_eps", 0.02, 0.18, 0, 0},
};

/* Binary ops, b broadcast; fmod and remainder with quotients away from the integers. */
static const pw2_gc pw2_gc_binary[] = {
    {"atan2", 0.5, 2, -2, -0.5},      {"hypot", 0.5, 2, -2, -0.5},
    {"logaddexp", -2, 2, -2, 2},      {"logaddexp2", -2, 2, -2, 2},
    {"xlogy", -1, 1, 0.5, 2},         {"fmod", 2.2, 2.8, 1.0, 1.05},
    {"remainder", 2.2, 2.8, -1.05, -1}, {"fmod_", -2.8, -2.2, 1.0, 1.05},
    {"remainder_", -2.8, -2.2, 1.0, 1.05}, {"fmax", -2, 2, -2, 2},
    {"fmin", -2, 2, -2, 2},
};

static void pw2_gradcheck(const pw2_gc *f, int n)
{
    static const int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s3[1] = {3}, s21[2] = {2, 1};
    for (int pass = 0; pass < 2; pass++) { /* contiguous with b (3,), transposed with b (2, 1) */
        ct_scope_begin();
        ct_tensor *a = pass ? ct_t(pw2_uniform(s32, 2, f->lo, f->hi))
                            : pw2_uniform(s23, 2, f->lo, f->hi);
        ct_tensor *in[2] = {ct_requires_grad_(ct_detach(a), true), NULL};
        if (n > 1) {
            in[1] = ct_requires_grad_(pw2_uniform(pass ? s21 : s3, pass ? 2 : 1, f->lo_b,
                                                  f->hi_b), true);
        }
        CHECK_MSG(ct_gradcheck(pw2_gc_fn, in, n, (void *)(uintptr_t)f, NULL), "%s (%d): %s",
                  f->name, pass, ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_scope_end();
    }
}

static void test_pw2_gradcheck(void)
{
    ct_manual_seed(21);
    for (size_t i = 0; i < sizeof pw2_gc_unary / sizeof pw2_gc_unary[0]; i++) {
        pw2_gradcheck(&pw2_gc_unary[i], 1);
    }
    for (size_t i = 0; i < sizeof pw2_gc_binary / sizeof pw2_gc_binary[0]; i++) {
        pw2_gradcheck(&pw2_gc_binary[i], 2);
    }
}

/* The float unary ops in place (on a transposed clone, float32 and float64) give the bits of
   their out-of-place forms, and their gradients pass gradcheck; an integer self is refused. */
static void test_pw2_inplace_unary(void)
{
    static const int64_t s43[2] = {4, 3}, s3[1] = {3};
    ct_manual_seed(24);
    CHECK(!strcmp(pw2_unary_[19].name, "erfinv_"));
    for (size_t i = 5; i < 20; i++) { /* expm1_ ... erfinv_ */
        const char *name = pw2_unary_[i].name;
        size_t len = strlen(name) - 1;
        pw2_un out_of_place = NULL;
        const pw2_gc *range = NULL;
        for (size_t j = 0; j < sizeof pw2_unary / sizeof pw2_unary[0]; j++) {
            out_of_place = strncmp(pw2_unary[j].name, name, len) || pw2_unary[j].name[len]
                               ? out_of_place : pw2_unary[j].fn;
        }
        for (size_t j = 0; j < sizeof pw2_gc_unary / sizeof pw2_gc_unary[0]; j++) {
            bool same = !strncmp(pw2_gc_unary[j].name, name, len) && !pw2_gc_unary[j].name[len];
            range = same ? &pw2_gc_unary[j] : range;
        }
        CHECK_MSG(out_of_place && range, "%s: no out-of-place form or range", name);
        if (!out_of_place || !range) {
            continue;
        }
        ct_scope_begin();
        for (int d = 0; d < 2; d++) {
            ct_dtype dt = d ? F64 : CT_FLOAT32;
            ct_tensor *x = ct_to_dtype(ct_t(pw2_uniform(s43, 2, range->lo, range->hi)), dt);
            ct_tensor *y = ct_t(ct_clone(ct_t(x))); /* transposed like x */
            ct_tensor *r = pw2_unary_[i].fn(y);
            ct_tensor *eq = ct_eq(r, out_of_place(x));
            CHECK_MSG(r == y && eq && ct_item(ct_all(eq)) == 1, "%s %s", name, ct_dtype_name(dt));
        }
        pw2_gc g = *range;
        g.name = name;
        pw2_gradcheck(&g, 1);
        CHECK(pw2_unary_[i].fn(ct_ones(s3, 1, CT_INT64)) == NULL);
        CHECK_ERROR(CT_ERR_DTYPE, "can't be cast to the desired output type Long");
        ct_scope_end();
    }
}

/* The other in-place forms on a clone give the bits of their out-of-place forms (integer and
   bool dtypes where the op takes them); gradcheck through atan2_, xlogy_ and logit_. */
static void test_pw2_inplace_more(void)
{
    static const struct {
        const char *name, *base;
        ct_dtype dtype;
        double lo, hi;
    } cases[] = {
        {"atan2_", "atan2", F64, -2, 2},
        {"xlogy_", "xlogy", CT_FLOAT32, 0.1, 2},
        {"floor_divide_", "floor_divide", CT_INT64, 1, 9},
        {"floor_divide_", "floor_divide", F64, -3, 3},
        {"bitwise_and_", "bitwise_and", CT_INT32, 0, 60},
        {"bitwise_or_", "bitwise_or", CT_BOOL, 0, 2},
        {"bitwise_xor_", "bitwise_xor", CT_UINT8, 0, 200},
        {"bitwise_left_shift_", "bitwise_left_shift", CT_INT64, 0, 9},
        {"bitwise_right_shift_", "bitwise_right_shift", CT_INT8, 0, 9},
        {"logical_xor_", "logical_xor", CT_FLOAT32, 0, 2},
        {"sign_", "sign", F64, -2, 2},
        {"sgn_", "sgn", CT_INT64, -3, 3},
        {"bitwise_not_", "bitwise_not", CT_INT16, -100, 100},
        {"logit_", "logit_eps", F64, 0, 1},
    };
    static const int64_t s34[2] = {3, 4}, s4[1] = {4};
    ct_manual_seed(25);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ct_scope_begin();
        ct_dtype dt = cases[i].dtype;
        bool integral = !ct_dtype_is_floating_point(dt);
        ct_tensor *a = pw2_uniform(s34, 2, cases[i].lo, cases[i].hi);
        ct_tensor *b = pw2_uniform(s4, 1, cases[i].lo, cases[i].hi); /* broadcast */
        a = ct_to_dtype(integral ? ct_floor(a) : a, dt);
        b = ct_to_dtype(integral ? ct_floor(b) : b, dt);
        ct_tensor *want = pw2_apply(cases[i].base, a, b);
        ct_tensor *got = pw2_apply(cases[i].name, a, b); /* on a clone of a */
        ct_tensor *eq = want && got ? ct_eq(got, want) : NULL;
        CHECK_MSG(got && ct_tensor_dtype(got) == dt && eq && ct_item(ct_all(eq)) == 1, "%s: %s",
                  cases[i].name, ct_error() ? ct_error() : "differs");
        ct_error_clear();
        ct_scope_end();
    }
    static const pw2_gc gcs[] = {{"atan2_", 0.5, 2, -2, -0.5}, {"xlogy_", -1, 1, 0.5, 2}};
    for (int k = 0; k < 2; k++) {
        pw2_gradcheck(&gcs[k], 2);
    }
    static const pw2_gc lg = {"logit_", 0.25, 0.75, 0, 0};
    pw2_gradcheck(&lg, 1);
}

/* Double backward: the gradients (create_graph) of sum(f(a[, b]) * w) with respect to a and
   b, concatenated; the last input is w. */
static ct_tensor *pw2_gradgrad(ct_tensor *const *in, int n, void *user)
{
    int nx = n - 1;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = pw2_gc_fn(in, nx, user);
    const ct_tensor *go[1] = {in[nx]};
    ct_tensor *g[2] = {NULL, NULL}, *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, nx, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[2] = {ct_flatten(g[0], 0, -1),
                                     nx > 1 ? ct_flatten(g[1], 0, -1) : NULL};
        out = ct_cat(parts, nx, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

static void test_pw2_gradgradcheck(void)
{
    static const pw2_gc fns[] = {
        {"tan", -1, 1, 0, 0},          {"asin", -0.8, 0.8, 0, 0},    {"atanh", -0.8, 0.8, 0, 0},
        {"erfc", -2, 2, 0, 0},         {"erfinv", -0.8, 0.8, 0, 0},  {"logit", 0.2, 0.8, 0, 0},
        {"expm1", -2, 2, 0, 0},        {"log2", 0.3, 3, 0, 0},       {"atan2", 0.5, 2, 0.5, 2},
        {"logaddexp", -2, 2, -2, 2},   {"xlogy", 0.3, 1, 0.5, 2},    {"hypot", 0.5, 2, -2, -0.5},
        {"fmod", 2.2, 2.8, 1.0, 1.05},
    };
    static const int64_t s23[2] = {2, 3};
    ct_manual_seed(22);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        const pw2_gc *f = &fns[i];
        int nx = f->lo_b != f->hi_b ? 2 : 1;
        ct_scope_begin();
        ct_tensor *in[3] = {ct_requires_grad_(pw2_uniform(s23, 2, f->lo, f->hi), true), NULL,
                            NULL};
        if (nx > 1) {
            in[1] = ct_requires_grad_(pw2_uniform(s23, 2, f->lo_b, f->hi_b), true);
        }
        in[nx] = ct_requires_grad_(ct_randn(s23, 2, F64, NULL), true);
        CHECK_MSG(ct_gradcheck(pw2_gradgrad, in, nx + 1, (void *)(uintptr_t)f, NULL),
                  "gradgradcheck %s: %s", f->name, ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_scope_end();
    }
}

/* The autograd node names PyTorch gives these ops. */
static void test_pw2_grad_fn_names(void)
{
    static const struct {
        const char *op, *node;
    } names[] = {
        {"expm1", "Expm1Backward0"}, {"erfinv", "ErfinvBackward0"}, {"floor", "FloorBackward0"},
        {"frac", "FracBackward0"},   {"sign", "SignBackward0"},     {"sgn", "SgnBackward0"},
        {"logit", "LogitBackward0"}, {"nan_to_num", "NanToNumBackward0"},
        {"atan2", "Atan2Backward0"}, {"hypot", "HypotBackward0"},   {"xlogy", "XlogyBackward0"},
        {"fmod", "FmodBackward1"},   {"remainder", "RemainderBackward1"},
        {"fmax", "FmaxBackward0"},   {"logaddexp2", "Logaddexp2Backward0"},
    };
    static const double v[3] = {0.25, 0.5, 0.75};
    static const int64_t s3[1] = {3};
    ct_scope_begin();
    ct_tensor *x = ct_requires_grad_(ct_tensor_from_data(v, F64, s3, 1), true);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *got = ct_node_name(ct_grad_fn(pw2_apply(names[i].op, x, x)));
        CHECK_MSG(got && !strcmp(got, names[i].node), "%s: %s", names[i].op, got ? got : "-");
    }
    ct_scope_end();
}

/* ---- PyTorch's values at the edges ------------------------------------------------------ */
static ct_tensor *pw2_vec(const double *v, int64_t n, ct_dtype dtype)
{
    return ct_to_dtype(ct_tensor_from_data(v, F64, &n, 1), dtype);
}

static void test_pw2_edges(void)
{
    ct_scope_begin();
    static const double inf2[2] = {-INFINITY, INFINITY}, ok2[2] = {-INFINITY, INFINITY};
    ct_tensor *ii = pw2_vec(inf2, 2, F64);
    PW2_CLOSE(ct_logaddexp(ii, ii), ok2, 2, 0, 0); /* equal infinities give themselves */
    PW2_CLOSE(ct_logaddexp2(ii, ii), ok2, 2, 0, 0);
    static const double xa[3] = {0, 0, NAN}, xb[3] = {0, NAN, 0}, xw[3] = {0, NAN, NAN};
    CHECK_TENSOR(ct_xlogy(pw2_vec(xa, 3, F64), pw2_vec(xb, 3, F64)), xw, 3, 0, 0);
    static const double sa[2] = {5, -5}, sb[2] = {-1, 9}, sl[2] = {0, 0}, sr[2] = {0, -1};
    ct_tensor *a8 = pw2_vec(sa, 2, CT_INT8), *b8 = pw2_vec(sb, 2, CT_INT8);
    CHECK_TENSOR(ct_bitwise_left_shift(a8, b8), sl, 2, 0, 0);
    CHECK_TENSOR(ct_bitwise_right_shift(a8, b8), sr, 2, 0, 0);
    static const double ua[2] = {200, 7}, ub[2] = {9, 1}, ur[2] = {0, 3};
    CHECK_TENSOR(ct_bitwise_right_shift(pw2_vec(ua, 2, CT_UINT8), pw2_vec(ub, 2, CT_UINT8)), ur,
                 2, 0, 0);
    static const double m1[2] = {-128, 7}, d1[2] = {-1, -1}, z2[2] = {0, 0};
    CHECK_TENSOR(ct_fmod(pw2_vec(m1, 2, CT_INT8), pw2_vec(d1, 2, CT_INT8)), z2, 2, 0, 0);
    static const int64_t lo[2] = {INT64_MIN, -7}, lod[2] = {-1, 3}, s2 = 2;
    static const double lor[2] = {0, 2}; /* INT64_MIN % -1 does not trap */
    CHECK_TENSOR(ct_remainder(ct_tensor_from_data(lo, CT_INT64, &s2, 1),
                              ct_tensor_from_data(lod, CT_INT64, &s2, 1)), lor, 2, 0, 0);
    static const double ra[3] = {-3, 3, -0.0}, rb[3] = {2, -2, 2}, rr[3] = {1, -1, 0};
    ct_tensor *r = ct_remainder(pw2_vec(ra, 3, F64), pw2_vec(rb, 3, F64));
    CHECK_TENSOR(r, rr, 3, 0, 0);
    CHECK(r && signbit(((const double *)ct_data_ptr(r))[2])); /* -0.0, as PyTorch */
    static const double fz[2] = {1, -2}, zz[2] = {0, 0};
    const double *q = (const double *)ct_data_ptr(ct_fmod(pw2_vec(fz, 2, F64),
                                                          pw2_vec(zz, 2, F64)));
    CHECK(q && isnan(q[0]) && isnan(q[1])); /* float fmod by zero: NaN */
    static const double sp[3] = {NAN, INFINITY, -INFINITY};
    static const double n32[3] = {0, 3.4028234663852886e38, -3.4028234663852886e38};
    static const double n64[3] = {0, 1.7976931348623157e308, -1.7976931348623157e308};
    CHECK_TENSOR(ct_nan_to_num(pw2_vec(sp, 3, CT_FLOAT32), 0, NULL, NULL), n32, 3, 0, 0);
    CHECK_TENSOR(ct_nan_to_num(pw2_vec(sp, 3, F64), 0, NULL, NULL), n64, 3, 0, 0);
    static const double ev[4] = {1, -1, 1.5, 0}, ew[4] = {INFINITY, -INFINITY, NAN, 0};
    const double *e = (const double *)ct_data_ptr(ct_erfinv(pw2_vec(ev, 4, F64)));
    CHECK(e && e[0] == INFINITY && e[1] == -INFINITY && isnan(e[2]) && e[3] == ew[3]);
    static const double half[6] = {0.5, 1.5, 2.5, -0.5, -2.5, 3.5}, even[6] = {0, 2, 2, 0, -2, 4};
    CHECK_TENSOR(ct_round(pw2_vec(half, 6, CT_FLOAT32)), even, 6, 0, 0); /* ties to even */
    static const double sg[3] = {NAN, -0.0, -2}, sgw[3] = {0, 0, -1}, sbw[3] = {0, 1, 1};
    CHECK_TENSOR(ct_sign(pw2_vec(sg, 3, F64)), sgw, 3, 0, 0);
    CHECK_TENSOR(ct_signbit(pw2_vec(sg, 3, F64)), sbw, 3, 0, 0);
    static const double bl[2] = {1, 0};
    ct_tensor *sb_ = ct_sign(pw2_vec(bl, 2, CT_BOOL)); /* bool keeps bool */
    CHECK(sb_ && ct_tensor_dtype(sb_) == CT_BOOL);
    CHECK_TENSOR(sb_, bl, 2, 0, 0);
    static const double fl[3] = {-1.5, 2.5, 7}, fl_w[3] = {-2, 2, 7};
    ct_tensor *fi = ct_floor_(pw2_vec(fl, 3, CT_INT32)); /* integers stay integers */
    CHECK(fi && ct_tensor_dtype(fi) == CT_INT32);
    ct_tensor *ff = ct_floor_(pw2_vec(fl, 3, F64));
    CHECK_TENSOR(ff, fl_w, 3, 0, 0);
    ct_scope_end();
}

/* docs/ARCHITECTURE.md section 7's worked example, as it states its results. */
static void test_pw2_hypot_doc_example(void)
{
    static const double av[3] = {3, 5, -8}, bv[3] = {4, 12, 15}, want[3] = {5, 13, 17};
    static const double ga[3] = {0.6, 0.3846, -0.4706}, gb[3] = {0.8, 0.9231, 0.8824};
    ct_scope_begin();
    ct_tensor *a = ct_requires_grad_(pw2_vec(av, 3, F64), true);
    ct_tensor *b = ct_requires_grad_(pw2_vec(bv, 3, F64), true);
    ct_tensor *out = ct_hypot(a, b);
    CHECK_TENSOR(out, want, 3, 0, 0);
    const char *nm = ct_node_name(ct_grad_fn(out));
    CHECK(nm && !strcmp(nm, "HypotBackward0"));
    CHECK(ct_backward(ct_sum(out), NULL, false) == CT_OK);
    CHECK_TENSOR(ct_grad(a), ga, 3, 0, 5e-5);
    CHECK_TENSOR(ct_grad(b), gb, 3, 0, 5e-5);
    CHECK(ct_hypot(ct_to_dtype(a, CT_INT64), ct_to_dtype(b, CT_INT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_hypot: \"hypot\" not implemented for 'Long'");
    ct_scope_end();
}

/* float32 erf (vmath.h's ct__erff) within 2 ulp of erf in double over [-5, 5], its special
   values, and the vectorized contiguous loop bit-identical to the strided scalar one. */
static void test_pw2_erff_ulp(void)
{
    enum { N = 1 << 20 };
    static float x[N];
    for (int i = 0; i < N; i++) { /* 2^20 floats, denser near 0 */
        double u = (double)i / N;
        x[i] = (float)((i % 2 ? -5.0 : 5.0) * u * u);
    }
    const int64_t n = N, s2[2] = {N / 2, 2};
    ct_scope_begin();
    ct_tensor *t = ct_tensor_from_data(x, CT_FLOAT32, &n, 1);
    ct_tensor *y = ct_erf(t);
    const float *yd = y ? (const float *)ct_data_ptr(y) : NULL;
    double worst = 0;
    for (int i = 0; yd && i < N; i++) {
        double want = erf((double)x[i]);
        float w = (float)want;
        double ulp = (double)nextafterf(fabsf(w), INFINITY) - fabs((double)w);
        double e = fabs((double)yd[i] - want) / ulp;
        worst = e > worst ? e : worst;
    }
    CHECK_MSG(yd && worst <= 2.0, "erf float32: %.3f ulp", worst);
    /* the strided (scalar) loop over the transposed view gives the same bits */
    ct_tensor *st = ct_erf(ct_t(ct_view(t, s2, 2)));
    ct_tensor *same = ct_eq(ct_contiguous(ct_t(st)), ct_view(y, s2, 2));
    CHECK(same && ct_item(ct_all(same)) == 1);
    static const double sp[5] = {0.0, -0.0, INFINITY, -INFINITY, NAN};
    const float *e = (const float *)ct_data_ptr(ct_erf(pw2_vec(sp, 5, CT_FLOAT32)));
    CHECK(e && e[0] == 0 && !signbit(e[0]) && e[1] == 0 && signbit(e[1]) && e[2] == 1 &&
          e[3] == -1 && isnan(e[4]));
    ct_scope_end();
}

/* Worst error in ulp of ys (float32) against the double reference want (the correctly rounded
   float's ulp; NaN must give NaN, an infinite or overflowing result the same infinity). */
static double pw2_ulp_err(float y, double want)
{
    if (isnan(want) || isnan(y)) {
        return isnan(want) && isnan(y) ? 0 : INFINITY;
    }
    float w = (float)want;
    if (isinf(w) || isinf(y)) {
        return w == y ? 0 : (fabs(want) > FLT_MAX && fabsf(y) == FLT_MAX ? 1 : INFINITY);
    }
    double ulp = (double)nextafterf(fabsf(w), INFINITY) - fabs((double)w);
    return fabs((double)y - want) / ulp;
}

/* 2^20 float32 inputs spread over every finite float of both signs, plus the special values */
static ct_tensor *pw2_all_floats(float *x, int n)
{
    for (int i = 0; i < n - 6; i++) {
        uint32_t u = (uint32_t)(((uint64_t)(i / 2) * 0x7f7fffffu) / (uint64_t)(n / 2));
        u |= (uint32_t)(i % 2) << 31;
        memcpy(&x[i], &u, sizeof u);
    }
    const float sp[6] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f};
    memcpy(x + n - 6, sp, sizeof sp);
    const int64_t len = n;
    return ct_tensor_from_data(x, CT_FLOAT32, &len, 1);
}

/* vmath.h's float32 functions behind expm1 ... atan2 are within 2 ulp of the correctly
   rounded result everywhere (double libm as reference), and erfinv within 2 ulp plus the
   error that the rounding of erf(x) to float itself implies (its condition number). */
static void test_pw2_vmath_ulp(void)
{
    enum { N = 1 << 20 };
    static float x[N];
    static const struct {
        const char *name;
        ct_tensor *(*fn)(const ct_tensor *);
        double (*ref)(double);
    } cases[] = {
        {"expm1", ct_expm1, expm1}, {"log1p", ct_log1p, log1p}, {"exp2", ct_exp2, exp2},
        {"log2", ct_log2, log2},    {"log10", ct_log10, log10}, {"atan", ct_atan, atan},
        {"asin", ct_asin, asin},    {"acos", ct_acos, acos},    {"atanh", ct_atanh, atanh},
    };
    ct_set_flush_denormal(false); /* subnormal inputs and results too */
    ct_scope_begin();
    ct_tensor *t = pw2_all_floats(x, N);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ct_tensor *y = cases[c].fn(t);
        const float *yd = y ? (const float *)ct_data_ptr(y) : NULL;
        double worst = 0, at = 0;
        for (int i = 0; yd && i < N; i++) {
            double e = pw2_ulp_err(yd[i], cases[c].ref((double)x[i]));
            at = e > worst ? x[i] : at;
            worst = e > worst ? e : worst;
        }
        CHECK_MSG(yd && worst <= 2.0, "%s float32: %.3f ulp at %a", cases[c].name, worst, at);
    }
    /* atan2 over pairs: x against x reversed */
    static float xr[N];
    for (int i = 0; i < N; i++) {
        xr[i] = x[N - 1 - i];
    }
    const int64_t n = N;
    ct_tensor *y = ct_atan2(t, ct_tensor_from_data(xr, CT_FLOAT32, &n, 1));
    const float *yd = y ? (const float *)ct_data_ptr(y) : NULL;
    double worst = 0;
    int at2 = 0;
    for (int i = 0; yd && i < N; i++) {
        double e = pw2_ulp_err(yd[i], atan2((double)x[i], (double)xr[i]));
        at2 = e > worst ? i : at2;
        worst = e > worst ? e : worst;
    }
    CHECK_MSG(yd && worst <= 2.0, "atan2 float32: %.3f ulp at (%a, %a)", worst, x[at2], xr[at2]);
    /* erfinv on (-1, 1) against float64 erfinv */
    ct_tensor *e32 = ct_erfinv(t), *e64 = ct_erfinv(ct_to_dtype(t, CT_FLOAT64));
    const float *a = e32 ? (const float *)ct_data_ptr(e32) : NULL;
    const double *b = e64 ? (const double *)ct_data_ptr(e64) : NULL;
    worst = 0;
    for (int i = 0; a && b && i < N; i++) {
        double xi = fabs((double)x[i]), cond = 0;
        if (xi < 1) { /* d erfinv / dy = sqrt(pi)/2 e^(x^2): a y error of 1 ulp(1) moves x */
            cond = 0.886226925 * exp(b[i] * b[i]) * 5.96e-8;
        }
        double ulp = (double)nextafterf(fabsf((float)b[i]), INFINITY) - fabs(b[i]);
        double e = xi < 1 ? fabs(a[i] - b[i]) / (2 * ulp + cond) : pw2_ulp_err(a[i], b[i]) / 2;
        worst = e > worst ? e : worst;
    }
    CHECK_MSG(a && b && worst <= 1.0, "erfinv float32: %.3f of the bound", worst);
    ct_scope_end();
    ct_set_flush_denormal(true);
}

/* ---- errors ------------------------------------------------------------------------------ */
static void test_pw2_errors(void)
{
    static const int64_t s3[1] = {3}, s2[1] = {2};
    ct_scope_begin();
    ct_tensor *l = ct_arange(1, 4, 1, CT_INT64), *f = ct_zeros(s3, 1, CT_FLOAT32);
    ct_tensor *b = ct_gt_scalar(l, 1.5), *z = ct_zeros(s3, 1, CT_INT64);
    CHECK(ct_frac(l) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_frac: \"frac\" not implemented for 'Long'");
    CHECK(ct_floor(b) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"floor\" not implemented for 'Bool'");
    CHECK(ct_hypot(l, l) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_hypot: \"hypot\" not implemented for 'Long'");
    CHECK(ct_logaddexp(b, b) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"logaddexp\" not implemented for 'Bool'");
    CHECK(ct_logaddexp2(l, l) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"logaddexp2\" not implemented for 'Long'");
    CHECK(ct_fmod(l, z) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_fmod: ZeroDivisionError");
    CHECK(ct_remainder(l, z) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_remainder: ZeroDivisionError");
    CHECK(ct_floor_divide(l, z) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_floor_divide: ZeroDivisionError");
    CHECK(ct_fmod(b, b) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"fmod\" not implemented for 'Bool'");
    CHECK(ct_floor_divide(b, b) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"floor_divide\" not implemented for 'Bool'");
    CHECK(ct_fmod_(ct_clone(l), f) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type Float can't be cast to the desired output type Long");
    CHECK(ct_bitwise_and(f, f) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_bitwise_and: \"bitwise_and\" not implemented for 'Float'");
    CHECK(ct_bitwise_or(l, f) == NULL); /* promotes to float first, as PyTorch */
    CHECK_ERROR(CT_ERR_DTYPE, "\"bitwise_or\" not implemented for 'Float'");
    CHECK(ct_bitwise_not(f) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"bitwise_not\" not implemented for 'Float'");
    CHECK(ct_bitwise_left_shift(b, b) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"bitwise_left_shift\" not implemented for 'Bool'");
    CHECK(ct_bitwise_right_shift(f, l) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"bitwise_right_shift\" not implemented for 'Float'");
    CHECK(ct_isclose(f, ct_zeros(s3, 1, F64), 1e-5, 1e-8, false) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_isclose: Float did not match Double");
    CHECK(ct_isclose(f, f, -1, 1e-8, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "rtol must be greater than or equal to zero, but got -1");
    CHECK(ct_isclose(f, f, 1e-5, -2, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "atol must be greater than or equal to zero, but got -2");
    CHECK(ct_isclose(f, ct_zeros(s2, 1, CT_FLOAT32), 1e-5, 1e-8, false) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_isclose: The size of tensor a (3) must match the size of "
                "tensor b (2) at non-singleton dimension 0");
    CHECK(ct_atan2(f, ct_zeros(s2, 1, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (3) must match the size of tensor b (2)");
    ct_tensor *ln = ct_log2(l); /* integers compute in the default float dtype */
    CHECK(ln && ct_tensor_dtype(ln) == CT_FLOAT32);
    ct_tensor *lx = ct_logical_xor(l, f);
    CHECK(lx && ct_tensor_dtype(lx) == CT_BOOL);
    ct_tensor *fm = ct_fmax(l, ct_zeros(s3, 1, CT_INT32)); /* integer promotion */
    CHECK(fm && ct_tensor_dtype(fm) == CT_INT64);
    ct_tensor *leaf = ct_requires_grad_(ct_ones(s3, 1, F64), true);
    CHECK(ct_floor_(leaf) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "a leaf Variable that requires grad is being used in an "
                "in-place operation.");
    ct_scope_end();
}

/* ---- _foreach_ ------------------------------------------------------------------------ */
#define PW2_N 3

/* Three tensors of different shapes and dtypes (the k-th of set `which`). */
static void pw2_list(ct_tensor **t, int which)
{
    static const int64_t s23[2] = {2, 3}, s4[1] = {4}, s1[1] = {1};
    t[0] = ct_add_scalar(ct_rand(s23, 2, CT_FLOAT32, NULL), 0.5 + which);
    t[1] = ct_add_scalar(ct_rand(s4, 1, F64, NULL), 0.25 + which);
    t[2] = ct_add_scalar(ct_rand(s1, 1, CT_FLOAT32, NULL), 1 + which);
}

/* Each self[k] equals want[k] exactly. */
static void pw2_same(ct_tensor *const *self, ct_tensor *const *want, const char *what)
{
    for (int k = 0; k < PW2_N; k++) {
        ct_tensor *eq = ct_eq(self[k], want[k]);
        CHECK_MSG(eq && ct_item(ct_all(eq)) == 1, "%s: tensor %d differs", what, k);
    }
}

static void test_pw2_foreach(void)
{
    ct_scope_begin();
    ct_manual_seed(23);
    ct_tensor *s[PW2_N], *o[PW2_N], *want[PW2_N], *out[PW2_N];
    pw2_list(s, 0);
    pw2_list(o, 1);
    const ct_tensor *const *oc = (const ct_tensor *const *)o;
    for (int k = 0; k < PW2_N; k++) {
        want[k] = ct_add_alpha(s[k], o[k], 2.5);
    }
    CHECK(ct_foreach_add_(s, PW2_N, oc, PW2_N, 2.5) == CT_OK);
    pw2_same(s, want, "foreach_add_");
    for (int k = 0; k < PW2_N; k++) {
        want[k] = ct_mul(s[k], o[k]);
    }
    CHECK(ct_foreach_mul_(s, PW2_N, oc, PW2_N) == CT_OK);
    pw2_same(s, want, "foreach_mul_");
    for (int k = 0; k < PW2_N; k++) {
        want[k] = ct_lerp_scalar(s[k], o[k], 0.25);
    }
    CHECK(ct_foreach_lerp_(s, PW2_N, oc, PW2_N, 0.25) == CT_OK);
    pw2_same(s, want, "foreach_lerp_");
    for (int k = 0; k < PW2_N; k++) {
        want[k] = ct_sqrt(s[k]);
    }
    CHECK(ct_foreach_sqrt((const ct_tensor *const *)s, PW2_N, out, PW2_N) == PW2_N);
    pw2_same(out, want, "foreach_sqrt");
    CHECK(out[0] != s[0] && out[2] != s[2]);
    for (int k = 0; k < PW2_N; k++) {
        want[k] = ct_zeros_like(s[k]);
    }
    CHECK(ct_foreach_zero_(s, PW2_N) == CT_OK);
    pw2_same(s, want, "foreach_zero_");
    ct_scope_end();
}

static void test_pw2_foreach_autograd_errors(void)
{
    ct_scope_begin();
    static const double v[3] = {1, 2, 3}, ov[3] = {0.5, -1, 4};
    static const int64_t s3[1] = {3};
    ct_tensor *x = ct_requires_grad_(ct_tensor_from_data(v, F64, s3, 1), true);
    ct_tensor *s[1] = {ct_mul_scalar(x, 1.0)};
    const ct_tensor *o[2] = {ct_tensor_from_data(ov, F64, s3, 1), NULL};
    CHECK(ct_foreach_mul_(s, 1, o, 1) == CT_OK);
    const char *nm = ct_node_name(ct_grad_fn(s[0])); /* the per-tensor op's autograd */
    CHECK(nm && !strcmp(nm, "MulBackward0"));
    CHECK(ct_backward(ct_sum(s[0]), NULL, false) == CT_OK);
    CHECK_TENSOR(ct_grad(x), ov, 3, 0, 0);
    ct_tensor *l[1] = {x}; /* a leaf that requires grad: the per-tensor op's error */
    CHECK(ct_foreach_zero_(l, 1) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "a leaf Variable that requires grad");
    CHECK(ct_foreach_add_(s, 0, o, 0, 1.0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "ct_foreach_add_: Tensor list must have at least one tensor.");
    ct_tensor *s2[2] = {s[0], s[0]};
    CHECK(ct_foreach_add_(s2, 2, o, 1, 1.0) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Tensor lists must have the same number of tensors, got 2 and 1");
    CHECK(ct_foreach_lerp_(s2, 2, o, 1, 0.5) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Tensor lists must have the same number of tensors, got 2 and 1");
    CHECK(ct_foreach_mul_(s, 1, o + 1, 1) == CT_ERR_NULL_ARG); /* a NULL tensor in a list */
    ct_error_clear();
    ct_tensor *out[1];
    CHECK(ct_foreach_sqrt((const ct_tensor *const *)s2, 2, out, 1) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "the output array holds 1 tensors but the list has 2");
    ct_scope_end();
}

/* The foreach op is one dispatched call over both lists (hooks and the profiler see it),
   with the per-tensor ops nested in it. */
static void test_pw2_foreach_dispatch(void)
{
    ct_scope_begin();
    static const int64_t s3[1] = {3};
    ct_tensor *s[2] = {ct_ones(s3, 1, F64), ct_ones(s3, 1, F64)};
    const ct_tensor *o[2] = {ct_ones(s3, 1, F64), ct_ones(s3, 1, F64)};
    ct_test_op_log log;
    ct_test_op_log_begin(&log);
    ct_status st = ct_foreach_add_(s, 2, o, 2, 3.0);
    ct_test_op_log_end();
    CHECK(st == CT_OK);
    CHECK(log.n == 3 && !strcmp(log.call[0].op->name, "aten::_foreach_add_"));
    CHECK(log.call[0].n_inputs == 4 && log.call[0].n_attrs == 1 && log.call[0].attrs[0].f == 3);
    CHECK(log.n == 3 && !strcmp(log.call[1].op->name, "aten::add_"));
    static const double four[3] = {4, 4, 4};
    CHECK_TENSOR(s[1], four, 3, 0, 0);
    ct_scope_end();
}

void test_pointwise2(void)
{
    RUN(test_pw2_golden);
    RUN(test_pw2_gradcheck);
    RUN(test_pw2_gradgradcheck);
    RUN(test_pw2_inplace_unary);
    RUN(test_pw2_inplace_more);
    RUN(test_pw2_grad_fn_names);
    RUN(test_pw2_edges);
    RUN(test_pw2_hypot_doc_example);
    RUN(test_pw2_erff_ulp);
    RUN(test_pw2_vmath_ulp);
    RUN(test_pw2_errors);
    RUN(test_pw2_foreach);
    RUN(test_pw2_foreach_autograd_errors);
    RUN(test_pw2_foreach_dispatch);
}
