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
    {"floor_", ct_floor_}, {"ceil_", ct_ceil_}, {"round_", ct_round_},
    {"trunc_", ct_trunc_}, {"frac_", ct_frac_},
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
    if (!strcmp(op, "fmod_") || !strcmp(op, "remainder_")) {
        pw2_bin_ f = op[0] == 'f' ? ct_fmod_ : ct_remainder_;
        return f(ct_clone(a), b);
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

void test_pointwise2(void)
{
    RUN(test_pw2_golden);
}
