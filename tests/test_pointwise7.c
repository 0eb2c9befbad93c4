/* tests/test_pointwise7.c - the pointwise ops of issue 7 against PyTorch: erf, isnan/isinf/
 * isfinite and the in-place unary ops (neg_, abs_, exp_, log_, sqrt_, sigmoid_, tanh_, pow_,
 * clamp_): values and gradients from tools/gen_golden_pointwise7.py on contiguous, transposed
 * and step-sliced inputs of every dtype the op takes, gradcheck, and PyTorch's errors.
 */
#include "test.h"

#include <stdlib.h>

typedef struct pw7_case {
    const char *op;
    ct_dtype dtype, out_dtype;
    char layout; /* 'c' contiguous (3, 4), 't' transpose of (4, 3), 's' (3, 8)[:, ::2] */
    const double *in, *out, *grad;
} pw7_case;

/* addcmul/addcdiv/lerp/div_mode: self as pw7_case's input, tensor1 (4,) and tensor2 (3, 1)
   from pw7_t1 and pw7_t2 (row 0 for float dtypes, row 1 integers), the gradients of the
   three. */
typedef struct pw7_tcase {
    const char *op;
    ct_dtype dtype, out_dtype;
    char layout;
    const double *in;
    double value;
    const double *out, *grad[3];
} pw7_tcase;

/* torch.bernoulli(p) at a seed and size: FNV-1a 64 of the 0/1 draws, their count, and two
   torch.rand doubles drawn after them. */
typedef struct pw7_bern {
    int seed;
    int64_t n;
    ct_dtype dtype;
    int transposed; /* p (3, 5) as the transpose of a (5, 3) tensor */
    uint64_t hash;
    int64_t ones;
    double after[2];
} pw7_bern;

#include "golden/pointwise7_golden.h"

#define F64 CT_FLOAT64

/* The (3, 4) input of a case: the stored values in its dtype, laid out as PyTorch's. */
static ct_tensor *pw7_input(const pw7_case *k)
{
    static const int64_t c[2] = {3, 4}, t[2] = {4, 3}, s[2] = {3, 8}, s3[3] = {3, 4, 2};
    const int64_t *shape = k->layout == 't' ? t : (k->layout == 's' ? s : c);
    ct_tensor *x = ct_to_dtype(ct_tensor_from_data(k->in, F64, shape, 2), k->dtype);
    if (k->layout == 't') {
        return ct_t(x);
    }
    return k->layout == 's' ? ct_select(ct_view(x, s3, 3), 2, 0) : x;
}

/* Applies the case's op (in-place ones to a clone, as the generator). */
static ct_tensor *pw7_apply(const char *op, const ct_tensor *x)
{
    if (strcmp(op, "isnan") == 0) {
        return ct_isnan(x);
    }
    if (strcmp(op, "isinf") == 0) {
        return ct_isinf(x);
    }
    if (strcmp(op, "isfinite") == 0) {
        return ct_isfinite(x);
    }
    if (strcmp(op, "erf") == 0) {
        return ct_erf(x);
    }
    ct_tensor *y = ct_clone(x);
    static const struct {
        const char *name;
        ct_tensor *(*fn)(ct_tensor *);
    } unary[] = {{"neg_", ct_neg_}, {"abs_", ct_abs_}, {"exp_", ct_exp_}, {"log_", ct_log_},
                 {"sqrt_", ct_sqrt_}, {"sigmoid_", ct_sigmoid_}, {"tanh_", ct_tanh_}};
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        if (strcmp(op, unary[i].name) == 0) {
            return unary[i].fn(y);
        }
    }
    if (strcmp(op, "pow_") == 0 || strcmp(op, "pow_int") == 0) {
        return ct_pow_(y, strcmp(op, "pow_") == 0 ? 2.5 : 3.0);
    }
    if (strcmp(op, "clamp_") == 0) {
        return ct_clamp_(y, -0.5, 0.75);
    }
    return strcmp(op, "clamp_int") == 0 ? ct_clamp_(y, -2, 3) : NULL;
}

static void test_pw7_golden(void)
{
    static const int64_t s34[2] = {3, 4};
    double w[12];
    for (int i = 0; i < 12; i++) {
        w[i] = 0.5 + 0.125 * i;
    }
    int n = (int)(sizeof pw7_cases / sizeof pw7_cases[0]);
    CHECK(n == 77); /* every generated case is compared */
    for (int i = 0; i < n; i++) {
        const pw7_case *k = &pw7_cases[i];
        ct_scope_begin();
        ct_tensor *x = pw7_input(k);
        if (k->grad) {
            x = ct_requires_grad_(ct_detach(x), true);
        }
        ct_tensor *out = pw7_apply(k->op, x);
        bool f32 = k->out_dtype == CT_FLOAT32, exact = !ct_dtype_is_floating_point(k->out_dtype);
        double rtol = exact ? 0 : (f32 ? 1e-5 : 1e-10), atol = exact ? 0 : (f32 ? 1e-6 : 1e-12);
        CHECK_MSG(out && ct_tensor_dtype(out) == k->out_dtype, "%s %s %c: wrong dtype (%s)", k->op,
                  ct_dtype_name(k->dtype), k->layout, ct_error() ? ct_error() : "");
        CHECK_TENSOR(out, k->out, 12, rtol, atol);
        if (k->grad && out) {
            ct_tensor *wt = ct_to_dtype(ct_tensor_from_data(w, F64, s34, 2), k->out_dtype);
            CHECK(ct_backward(ct_sum(ct_mul(out, wt)), NULL, false) == CT_OK);
            CHECK_TENSOR(ct_grad(x), k->grad, 12, rtol, atol);
        }
        if (ct_error()) {
            fprintf(stderr, "  case %s %s %c: %s\n", k->op, ct_dtype_name(k->dtype), k->layout,
                    ct_error());
            ct_test_failed_checks++;
            ct_error_clear();
        }
        ct_scope_end();
    }
}

static ct_tensor *pw7_ternary(const char *op, const ct_tensor *x, const ct_tensor *a,
                             const ct_tensor *b, double value)
{
    if (strcmp(op, "addcmul") == 0) {
        return ct_addcmul(x, a, b, value);
    }
    if (strcmp(op, "addcdiv") == 0) {
        return ct_addcdiv(x, a, b, value);
    }
    if (strcmp(op, "lerp") == 0) {
        return ct_lerp(x, a, b);
    }
    static const char *const modes[3] = {"div_none", "div_trunc", "div_floor"};
    for (int m = 0; m < 3; m++) {
        if (strcmp(op, modes[m]) == 0) {
            return ct_div_mode(x, b, (ct_rounding_mode)m);
        }
    }
    if (strncmp(op, "lerp_scalar", 11) == 0 && strcmp(op, "lerp_scalar_") != 0) {
        return ct_lerp_scalar(x, a, value);
    }
    ct_tensor *y = ct_clone(x);
    if (strcmp(op, "lerp_") == 0) {
        return ct_lerp_(y, a, b);
    }
    if (strcmp(op, "lerp_scalar_") == 0) {
        return ct_lerp_scalar_(y, a, value);
    }
    return strcmp(op, "addcmul_") == 0 ? ct_addcmul_(y, a, b, value) : ct_addcdiv_(y, a, b, value);
}

static void test_pw7_golden_ternary(void)
{
    static const int64_t s34[2] = {3, 4}, s4[1] = {4}, s31[2] = {3, 1};
    static const int64_t n_el[3] = {12, 4, 3};
    double w[12];
    for (int i = 0; i < 12; i++) {
        w[i] = 0.5 + 0.125 * i;
    }
    int n = (int)(sizeof pw7_tcases / sizeof pw7_tcases[0]);
    CHECK(n == 45);
    for (int i = 0; i < n; i++) {
        const pw7_tcase *k = &pw7_tcases[i];
        bool fl = ct_dtype_is_floating_point(k->dtype);
        ct_scope_begin();
        pw7_case base = {k->op, k->dtype, k->out_dtype, k->layout, k->in, NULL, NULL};
        ct_tensor *in[3] = {
            pw7_input(&base),
            ct_to_dtype(ct_tensor_from_data(pw7_t1[fl ? 0 : 1], F64, s4, 1), k->dtype),
            ct_to_dtype(ct_tensor_from_data(pw7_t2[fl ? 0 : 1], F64, s31, 2), k->dtype)};
        for (int j = 0; j < 3 && fl; j++) {
            in[j] = ct_requires_grad_(ct_detach(in[j]), true);
        }
        ct_tensor *out = pw7_ternary(k->op, in[0], in[1], in[2], k->value);
        bool f32 = k->out_dtype == CT_FLOAT32, exact = !ct_dtype_is_floating_point(k->out_dtype);
        double rtol = exact ? 0 : (f32 ? 1e-5 : 1e-10), atol = exact ? 0 : (f32 ? 1e-6 : 1e-12);
        CHECK(out && ct_tensor_dtype(out) == k->out_dtype);
        CHECK_TENSOR(out, k->out, 12, rtol, atol);
        if (fl && out) {
            ct_tensor *wt = ct_to_dtype(ct_tensor_from_data(w, F64, s34, 2), k->out_dtype);
            CHECK(ct_backward(ct_sum(ct_mul(out, wt)), NULL, false) == CT_OK);
            for (int j = 0; j < 3; j++) { /* lerp.Scalar: the unused tensor gets none */
                if (k->grad[j]) {
                    CHECK_TENSOR(ct_grad(in[j]), k->grad[j], n_el[j], rtol, atol);
                } else {
                    CHECK(ct_grad(in[j]) == NULL);
                }
            }
        }
        if (ct_error()) {
            fprintf(stderr, "  case %s %s %c: %s\n", k->op, ct_dtype_name(k->dtype), k->layout,
                    ct_error());
            ct_test_failed_checks++;
            ct_error_clear();
        }
        ct_scope_end();
    }
}

/* ---- gradcheck ------------------------------------------------------------------------ */
typedef struct pw7_fn {
    const char *name;
    ct_tensor *(*inplace)(ct_tensor *);
    double lo, hi; /* inputs uniform in [lo, hi) */
} pw7_fn;

static ct_tensor *pw7_gc_inplace(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const pw7_fn *f = (const pw7_fn *)user;
    return f->inplace ? f->inplace(ct_mul_scalar(in[0], 1.0)) : ct_erf(in[0]);
}

static ct_tensor *pw7_gc_pow(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_pow_(ct_mul_scalar(in[0], 1.0), 2.5);
}

static ct_tensor *pw7_gc_clamp(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_clamp_(ct_mul_scalar(in[0], 1.0), -0.5, 0.75);
}

static ct_tensor *pw7_gc_addc(ct_tensor *const *in, int n, void *user)
{
    return pw7_ternary((const char *)user, in[0], in[1], n > 2 ? in[2] : NULL, 0.75);
}

static void test_pw7_gradcheck_ternary(void)
{
    static const char *const ops[] = {"addcmul", "addcdiv", "addcmul_", "addcdiv_", "lerp",
                                      "lerp_", "lerp_scalar", "lerp_scalar_"};
    static const int64_t s[3][2] = {{2, 3}, {2, 1}, {1, 3}};
    ct_manual_seed(8);
    for (int i = 0; i < 8; i++) {
        ct_scope_begin();
        ct_tensor *in[3];
        for (int j = 0; j < 3; j++) {
            ct_tensor *r = ct_add_scalar(ct_rand(s[j], 2, F64, NULL), 0.5);
            in[j] = ct_requires_grad_(j == 2 ? ct_neg(r) : r, true);
        }
        int n_in = strncmp(ops[i], "lerp_scalar", 11) == 0 ? 2 : 3;
        CHECK_MSG(ct_gradcheck(pw7_gc_addc, in, n_in, (void *)(uintptr_t)ops[i], NULL), "%s: %s",
                  ops[i], ct_error() ? ct_error() : "");
        ct_error_clear();
        ct_scope_end();
    }
}

static void test_pw7_gradcheck(void)
{
    static const pw7_fn fns[] = {
        {"erf", NULL, -2, 2},          {"neg_", ct_neg_, -2, 2},   {"abs_", ct_abs_, 0.2, 2},
        {"exp_", ct_exp_, -2, 2},      {"log_", ct_log_, 0.2, 3},  {"sqrt_", ct_sqrt_, 0.2, 3},
        {"sigmoid_", ct_sigmoid_, -3, 3}, {"tanh_", ct_tanh_, -2, 2},
    };
    static const int64_t shape[2] = {3, 5}, t_shape[2] = {5, 3};
    ct_manual_seed(7);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        ct_scope_begin();
        double w = fns[i].hi - fns[i].lo;
        ct_tensor *x = ct_add_scalar(ct_mul_scalar(ct_rand(shape, 2, F64, NULL), w), fns[i].lo);
        ct_tensor *xt = ct_t(ct_add_scalar(ct_mul_scalar(ct_rand(t_shape, 2, F64, NULL), w),
                                           fns[i].lo));
        ct_tensor *in[1] = {ct_requires_grad_(x, true)};
        CHECK_MSG(ct_gradcheck(pw7_gc_inplace, in, 1, (void *)&fns[i], NULL), "%s: %s",
                  fns[i].name, ct_error() ? ct_error() : "");
        in[0] = ct_requires_grad_(ct_detach(xt), true); /* non-contiguous */
        CHECK_MSG(ct_gradcheck(pw7_gc_inplace, in, 1, (void *)&fns[i], NULL), "%s (t): %s",
                  fns[i].name, ct_error() ? ct_error() : "");
        ct_error_clear();
        ct_scope_end();
    }
    ct_scope_begin();
    ct_tensor *x = ct_add_scalar(ct_mul_scalar(ct_rand(shape, 2, F64, NULL), 2.0), 0.2);
    ct_tensor *in[1] = {ct_requires_grad_(x, true)};
    CHECK(ct_gradcheck(pw7_gc_pow, in, 1, NULL, NULL));
    in[0] = ct_requires_grad_(ct_add_scalar(ct_mul_scalar(ct_rand(shape, 2, F64, NULL), 3.0),
                                            -1.5), true);
    CHECK(ct_gradcheck(pw7_gc_clamp, in, 1, NULL, NULL));
    ct_error_clear();
    ct_scope_end();
}

/* ---- autograd through the in-place ops ------------------------------------------------ */
static void test_pw7_inplace_autograd(void)
{
    static const double v[3] = {0.5, 1.0, 2.0};
    static const int64_t s3[1] = {3};
    ct_scope_begin();
    ct_tensor *x = ct_requires_grad_(ct_tensor_from_data(v, F64, s3, 1), true);
    ct_tensor *y = ct_mul_scalar(x, 1.0);
    CHECK(ct_exp_(y) == y); /* returns self */
    const char *nm = ct_node_name(ct_grad_fn(y));
    CHECK(nm && strcmp(nm, "ExpBackward0") == 0);
    ct_tensor *l = ct_mul_scalar(x, 1.0);
    ct_tensor *z = ct_log_(ct_clamp_(l, 0.75, 10.0)); /* log of the clamped values */
    nm = ct_node_name(ct_grad_fn(z));
    CHECK(nm && strcmp(nm, "LogBackward0") == 0);
    CHECK(ct_backward(ct_sum(ct_add(y, z)), NULL, false) == CT_OK);
    static const double want[3] = {1.6487212707001282, 2.718281828459045 + 1.0,
                                   7.38905609893065 + 0.5}; /* exp(x) + [x >= 0.75] / x */
    CHECK_TENSOR(ct_grad(x), want, 3, 1e-12, 1e-12);
    /* a saved input changed in place: the backward refuses, as PyTorch */
    ct_tensor *a = ct_mul_scalar(x, 1.0);
    ct_tensor *b = ct_log(a);
    ct_sqrt_(a);
    CHECK(ct_backward(ct_sum(b), NULL, false) != CT_OK);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    /* a leaf that requires grad */
    CHECK(ct_tanh_(x) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "a leaf Variable that requires grad is being used in an "
                "in-place operation.");
    ct_scope_end();
}

static void test_pw7_errors(void)
{
    static const int64_t s3[1] = {3};
    ct_scope_begin();
    ct_tensor *l = ct_arange(0, 3, 1, CT_INT64);
    CHECK(ct_exp_(l) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ct_exp_: result type Float can't be cast to the desired output "
                "type Long");
    CHECK(ct_pow_(l, -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Integers to negative integer powers are not allowed.");
    CHECK(ct_pow_(l, 0.5) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type Float can't be cast to the desired output type Long");
    CHECK(ct_clamp_(l, -0.5, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type Float can't be cast to the desired output type Long");
    CHECK(ct_clamp_(l, 2, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "min (2) must be less than or equal to max (1)");
    ct_tensor *b = ct_gt_scalar(l, 0.5);
    CHECK(ct_pow_(b, 2) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type Long can't be cast to the desired output type Bool");
    CHECK(ct_neg_(b) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "not implemented for 'Bool'");
    ct_tensor *e = ct_erf(b); /* bool computes in the default float dtype, as PyTorch */
    static const double want[3] = {0, 0.84270079294971478, 0.84270079294971478};
    CHECK(e && ct_tensor_dtype(e) == CT_FLOAT32);
    CHECK_TENSOR(e, want, 3, 1e-6, 1e-7);
    CHECK(ct_addcdiv(l, l, l, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Integer division with addcdiv is no longer supported");
    CHECK(ct_addcmul(b, b, b, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"addcmul\" not implemented for 'Bool'");
    CHECK(ct_addcmul(l, l, l, 1e30) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "value cannot be converted to type int64_t without overflow");
    static const int64_t s23[2] = {2, 3};
    ct_tensor *f = ct_zeros(s3, 1, CT_FLOAT32);
    CHECK(ct_addcmul_(f, f, ct_zeros(s23, 2, CT_FLOAT32), 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "output with shape [3] doesn't match the broadcast shape [2, 3]");
    CHECK(ct_addcmul_(ct_clone(l), l, f, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type Float can't be cast to the desired output type Long");
    CHECK(ct_addcmul(f, f, ct_zeros(s3, 1, CT_FLOAT64), 1) != NULL); /* promotes */
    CHECK(ct_lerp_scalar(f, ct_zeros(s3, 1, CT_FLOAT64), 0.5) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected dtype float for `end` but got dtype double");
    CHECK(ct_lerp(f, f, ct_zeros(s3, 1, CT_FLOAT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected dtype float for `weight` but got dtype double");
    CHECK(ct_lerp_scalar(l, l, 0.5) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"lerp\" not implemented for 'Long'");
    CHECK(ct_lerp_(f, f, ct_zeros(s23, 2, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "output with shape [3] doesn't match the broadcast shape [2, 3]");
    ct_tensor *z = ct_zeros(s3, 1, CT_INT64);
    CHECK(ct_div_mode(l, z, CT_ROUNDING_FLOOR) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_div_mode: ZeroDivisionError");
    CHECK(ct_div_mode(l, z, CT_ROUNDING_TRUNC) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_div_mode: ZeroDivisionError");
    CHECK(ct_div_mode(b, b, CT_ROUNDING_FLOOR) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"div\" not implemented for 'Bool'");
    CHECK(ct_div_mode(f, f, (ct_rounding_mode)7) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                "but found 7");
    static const double fd[3] = {-1, 0, 1};
    ct_tensor *q = ct_div_mode(ct_tensor_from_data(fd, F64, s3, 1), ct_zeros(s3, 1, F64),
                               CT_ROUNDING_FLOOR); /* floats divide by zero as IEEE */
    const double *qd = q ? (const double *)ct_data_ptr(q) : NULL;
    CHECK(qd && qd[0] == -INFINITY && isnan(qd[1]) && qd[2] == INFINITY);
    static const int64_t lo[2] = {INT64_MIN, -7}, m1[2] = {-1, 2};
    static const double lo_q[2] = {(double)INT64_MIN, -4};
    static const int64_t s2[1] = {2};
    q = ct_div_mode(ct_tensor_from_data(lo, CT_INT64, s2, 1),
                    ct_tensor_from_data(m1, CT_INT64, s2, 1), CT_ROUNDING_FLOOR);
    CHECK_TENSOR(q, lo_q, 2, 0, 0); /* INT64_MIN // -1 wraps instead of trapping */
    ct_tensor *c = ct_pow_(ct_clone(l), 2); /* integers stay integers */
    static const double sq[3] = {0, 1, 4};
    CHECK(c && ct_tensor_dtype(c) == CT_INT64);
    CHECK_TENSOR(c, sq, 3, 0, 0);
    ct_scope_end();
}

/* p[i] = (37 i mod 101) / 100 in dtype, as the generator makes it (the division in dtype). */
static ct_tensor *pw7_bern_p(int64_t n, ct_dtype dtype, int transposed)
{
    int64_t *v = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = i * 37 % 101;
    }
    static const int64_t s35[2] = {3, 5};
    ct_tensor *p = ct_div_scalar(ct_to_dtype(ct_tensor_from_data(v, CT_INT64, &n, 1), dtype),
                                 100.0);
    free(v);
    /* torch: p.reshape(3, 5).t(), i.e. element (i, j) = p[j * 5 + i] */
    return transposed ? ct_t(ct_view(p, s35, 2)) : p;
}

static void test_pw7_bernoulli(void)
{
    int n_cases = (int)(sizeof pw7_berns / sizeof pw7_berns[0]);
    CHECK(n_cases == 3 * 6 * 2 + 3 * 2); /* seeds x sizes x dtypes, transposed at size 15 */
    for (int i = 0; i < n_cases; i++) {
        const pw7_bern *k = &pw7_berns[i];
        ct_scope_begin();
        ct_tensor *p = pw7_bern_p(k->n, k->dtype, k->transposed);
        ct_manual_seed((uint64_t)k->seed);
        ct_tensor *y = ct_contiguous(ct_to_dtype(ct_bernoulli(p, NULL), CT_UINT8));
        static const int64_t two[1] = {2};
        ct_tensor *after = ct_rand(two, 1, F64, NULL);
        CHECK_MSG(y != NULL, "%s", ct_error() ? ct_error() : "");
        if (y) {
            const uint8_t *d = (const uint8_t *)ct_data_ptr(y);
            uint64_t h = 0xcbf29ce484222325ull;
            int64_t ones = 0;
            for (int64_t e = 0; e < k->n; e++) {
                h = (h ^ d[e]) * 0x100000001b3ull;
                ones += d[e];
            }
            CHECK_MSG(h == k->hash && ones == k->ones, "bernoulli seed %d n %lld %s%s: %lld ones, "
                      "want %lld", k->seed, (long long)k->n, ct_dtype_name(k->dtype),
                      k->transposed ? " (t)" : "", (long long)ones, (long long)k->ones);
        }
        CHECK_TENSOR(after, k->after, 2, 0, 0); /* the generator moved as PyTorch's */
        ct_error_clear();
        ct_scope_end();
    }
}

static void test_pw7_bernoulli_errors(void)
{
    static const double bad[3] = {0.5, 1.5, 0.25};
    static const int64_t s3[1] = {3};
    ct_scope_begin();
    ct_generator *g = ct_generator_new();
    ct_tensor *p = ct_tensor_from_data(bad, F64, s3, 1);
    CHECK(ct_bernoulli(p, g) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but got "
                "false.");
    CHECK(ct_bernoulli(ct_arange(0, 2, 1, CT_INT64), g) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"bernoulli\" not implemented for 'Long'");
    static const int64_t s4[1] = {4};
    ct_tensor *x = ct_requires_grad_(ct_full(s4, 1, 0.5, F64), true);
    ct_tensor *y = ct_bernoulli(x, g); /* BernoulliBackward0: zero gradient */
    CHECK(y && ct_tensor_dtype(y) == F64);
    const char *nm = ct_node_name(ct_grad_fn(y));
    CHECK(nm && strcmp(nm, "BernoulliBackward0") == 0);
    CHECK(ct_backward(ct_sum(y), NULL, false) == CT_OK);
    static const double zero[4] = {0, 0, 0, 0};
    CHECK_TENSOR(ct_grad(x), zero, 4, 0, 0);
    ct_generator_free(g);
    ct_scope_end();
}

void test_pointwise7(void)
{
    RUN(test_pw7_golden);
    RUN(test_pw7_golden_ternary);
    RUN(test_pw7_gradcheck);
    RUN(test_pw7_gradcheck_ternary);
    RUN(test_pw7_inplace_autograd);
    RUN(test_pw7_errors);
    RUN(test_pw7_bernoulli);
    RUN(test_pw7_bernoulli_errors);
}
