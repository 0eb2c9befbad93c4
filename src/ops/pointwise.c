/* ops/pointwise.c - elementwise kernels, their meta layer and derivative formulas.
 *
 * Legend: out (broadcast shape), a/b (operands broadcast to out), g (gradient of out).
 * Each kernel is an inner loop over n elements with byte strides s[0] (out), s[1] (a),
 * s[2] (b); the contiguous case is a separate flat loop the compiler vectorizes.
 * The per-element math is in small inline functions, one per op and dtype.
 */
#include "../core/internal.h"
#include "pointwise.h"
#include "view.h"
#include "vmath.h"
#include "../autograd/autograd.h"

CT__VECTORIZE_BEGIN

typedef enum ct__binop {
    CT__ADD, CT__SUB, CT__MUL, CT__DIV, CT__POW, CT__MAXIMUM, CT__MINIMUM,
    CT__EQ, CT__NE, CT__LT, CT__LE, CT__GT, CT__GE, CT__AND, CT__OR,
    CT__RELU_BW, CT__SIGMOID_BW, CT__TANH_BW, CT__BINOP_COUNT
} ct__binop;

typedef enum ct__unop {
    CT__NEG, CT__ABS, CT__RELU, CT__SQUARE, CT__SIGN, /* every numeric dtype */
    CT__EXP, CT__LOG, CT__LOG1P, CT__SQRT, CT__RSQRT, CT__SIN, CT__COS, CT__SIGMOID,
    CT__TANH, CT__RECIPROCAL, CT__CLAMP, CT__POWS, CT__NOT, CT__UNOP_COUNT
} ct__unop;

/* ---- per-element math ---------------------------------------------------------------- */
/* v < 0 for any integer type (a call, so unsigned types raise no always-false warning) */
static inline bool ct__is_neg(double v) { return v < 0; }

/* ct__w_<S>: the type integer arithmetic of dtype S runs in, unsigned so that overflow wraps
   modulo 2^bits as in PyTorch instead of being undefined; the float types themselves. */
typedef uint32_t ct__w_u8;
typedef uint32_t ct__w_i8;
typedef uint32_t ct__w_i16;
typedef uint32_t ct__w_i32;
typedef uint64_t ct__w_i64;
typedef float ct__w_f32;
typedef double ct__w_f64;

#define CT__INT_MATH(E, T, S)                                                              \
    static inline T ct__maximum_##S(T x, T y, T alpha) { (void)alpha; return x > y ? x : y; } \
    static inline T ct__minimum_##S(T x, T y, T alpha) { (void)alpha; return x < y ? x : y; } \
    static inline T ct__pow_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        (void)alpha;                                                                        \
        T r = 1;                                                                            \
        if (ct__is_neg(y)) {                                                               \
            return (T)(x == 1 ? 1 : (x == (T)-1 ? ((y & 1) ? -1 : 1) : 0));                 \
        }                                                                                   \
        for (; y > 0; y = (T)(y >> 1), x = (T)((ct__w_##S)x * (ct__w_##S)x)) {              \
            if (y & 1) {                                                                    \
                r = (T)((ct__w_##S)r * (ct__w_##S)x);                                       \
            }                                                                               \
        }                                                                                   \
        return r;                                                                           \
    }
#define CT__FLOAT_MATH(E, T, S, F, EXP, LOG, TANH, SIGMOID)                                 \
    static inline T ct__div_##S(T x, T y, T alpha) { (void)alpha; return x / y; }           \
    static inline T ct__pow_##S(T x, T y, T alpha) { (void)alpha; return pow##F(x, y); }    \
    static inline T ct__maximum_##S(T x, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (x != x || x > y) ? x : y;                                                   \
    }                                                                                       \
    static inline T ct__minimum_##S(T x, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (x != x || x < y) ? x : y;                                                   \
    }                                                                                       \
    static inline T ct__relu_bw_##S(T g, T x, T alpha) { (void)alpha; return x > 0 ? g : 0; } \
    static inline T ct__sigmoid_bw_##S(T g, T y, T alpha)                                   \
    {                                                                                       \
        (void)alpha;                                                                        \
        return g * y * ((T)1 - y);                                                          \
    }                                                                                       \
    static inline T ct__tanh_bw_##S(T g, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return g * ((T)1 - y * y);                                                          \
    }                                                                                       \
    static inline T ct__exp_##S(T x, const double *p) { (void)p; return EXP(x); }        \
    static inline T ct__log_##S(T x, const double *p) { (void)p; return LOG(x); }        \
    static inline T ct__log1p_##S(T x, const double *p) { (void)p; return log1p##F(x); }    \
    static inline T ct__sqrt_##S(T x, const double *p) { (void)p; return sqrt##F(x); }      \
    static inline T ct__rsqrt_##S(T x, const double *p) { (void)p; return (T)1 / sqrt##F(x); } \
    static inline T ct__sin_##S(T x, const double *p) { (void)p; return sin##F(x); }        \
    static inline T ct__cos_##S(T x, const double *p) { (void)p; return cos##F(x); }        \
    static inline T ct__sigmoid_##S(T x, const double *p) { (void)p; return SIGMOID(x); }   \
    static inline T ct__tanh_##S(T x, const double *p) { (void)p; return TANH(x); }      \
    static inline T ct__reciprocal_##S(T x, const double *p) { (void)p; return (T)1 / x; }  \
    static inline T ct__clamp_##S(T x, const double *p)                                     \
    {                                                                                       \
        T lo = (T)p[0], hi = (T)p[1];                                                       \
        return x != x ? x : (x < lo ? lo : (x > hi ? hi : x));                              \
    }                                                                                       \
    static inline T ct__pows_##S(T x, const double *p) { return pow##F(x, (T)p[0]); }
/* ops defined for every numeric dtype */
#define CT__ANY_MATH(E, T, S)                                                              \
    static inline T ct__add_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        return (T)((ct__w_##S)x + (ct__w_##S)alpha * (ct__w_##S)y);                         \
    }                                                                                       \
    static inline T ct__sub_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        return (T)((ct__w_##S)x - (ct__w_##S)alpha * (ct__w_##S)y);                         \
    }                                                                                       \
    static inline T ct__mul_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (T)((ct__w_##S)x * (ct__w_##S)y);                                            \
    }                                                                                       \
    static inline T ct__neg_##S(T x, const double *p) { (void)p; return (T)-(ct__w_##S)x; } \
    static inline T ct__abs_##S(T x, const double *p)                                      \
    {                                                                                      \
        (void)p;                                                                           \
        return ct__is_neg(x) ? (T)-(ct__w_##S)x : x;                                       \
    }                                                                                      \
    static inline T ct__relu_##S(T x, const double *p) { (void)p; return x > 0 ? x : (T)0; } \
    static inline T ct__square_##S(T x, const double *p)                                    \
    {                                                                                       \
        (void)p;                                                                            \
        return (T)((ct__w_##S)x * (ct__w_##S)x);                                            \
    }                                                                                       \
    static inline T ct__sign_##S(T x, const double *p)                                      \
    {                                                                                       \
        (void)p;                                                                            \
        return (T)((x > 0) - (ct__is_neg(x)));                                                     \
    }
CT__INT_MATH(CT_UINT8, uint8_t, u8)
CT__INT_MATH(CT_INT8, int8_t, i8)
CT__INT_MATH(CT_INT16, int16_t, i16)
CT__INT_MATH(CT_INT32, int32_t, i32)
CT__INT_MATH(CT_INT64, int64_t, i64)
/* float64 sigmoid through libm */
static inline double ct__sigmoid_libm(double x) { return 1.0 / (1.0 + exp(-x)); }
CT__FLOAT_MATH(CT_FLOAT32, float, f32, f, ct__expf, ct__logf, ct__tanhf, ct__sigmoidf)
CT__FLOAT_MATH(CT_FLOAT64, double, f64, , exp, log, tanh, ct__sigmoid_libm)
CT__FOR_NUMERIC_DTYPES(CT__ANY_MATH)

/* ---- loops --------------------------------------------------------------------------- */
/* out[i] = FN(a[i], b[i], alpha); contiguous, scalar-b, scalar-a and strided variants. */
#define CT__BIN_LOOP(FN, T, S)                                                             \
    static void ct__loop_##FN##_##S(char **d, const int64_t *s, int64_t n, const void *pp)  \
    {                                                                                       \
        const T alpha = (T)((const double *)pp)[0];                                         \
        T *o = (T *)d[0];                                                                   \
        const T *a = (const T *)d[1], *b = (const T *)d[2];                                 \
        const int64_t e = (int64_t)sizeof(T);                                               \
        if (s[0] == e && s[1] == e && s[2] == e) {                                          \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(a[i], b[i], alpha);                                   \
            }                                                                               \
        } else if (s[0] == e && s[1] == e && s[2] == 0) {                                   \
            const T y = b[0];                                                               \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(a[i], y, alpha);                                      \
            }                                                                               \
        } else if (s[0] == e && s[1] == 0 && s[2] == e) {                                   \
            const T x = a[0];                                                               \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(x, b[i], alpha);                                      \
            }                                                                               \
        } else {                                                                            \
            for (int64_t i = 0; i < n; i++) {                                               \
                *(T *)(d[0] + i * s[0]) = ct__##FN##_##S(*(const T *)(d[1] + i * s[1]),     \
                                                         *(const T *)(d[2] + i * s[2]), alpha); \
            }                                                                               \
        }                                                                                   \
    }
/* out[i] = (a[i] CMP b[i]) as bool */
#define CT__CMP_LOOP(NAME, CMP, T, S)                                                      \
    static void ct__loop_##NAME##_##S(char **d, const int64_t *s, int64_t n, const void *pp) \
    {                                                                                       \
        (void)pp;                                                                           \
        if (s[0] == 1 && s[1] == (int64_t)sizeof(T) && s[2] == 0) {                         \
            bool *o = (bool *)d[0];                                                         \
            const T *a = (const T *)d[1], y = *(const T *)d[2];                             \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = a[i] CMP y;                                                          \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(bool *)(d[0] + i * s[0]) =                                                    \
                *(const T *)(d[1] + i * s[1]) CMP * (const T *)(d[2] + i * s[2]);           \
        }                                                                                   \
    }
#define CT__UN_LOOP(FN, T, S)                                                              \
    static void ct__loop_##FN##_##S(char **d, const int64_t *s, int64_t n, const void *pp)  \
    {                                                                                       \
        const double *p = (const double *)pp;                                               \
        const int64_t e = (int64_t)sizeof(T);                                               \
        if (s[0] == e && s[1] == e) {                                                       \
            T *o = (T *)d[0];                                                               \
            const T *a = (const T *)d[1];                                                   \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(a[i], p);                                             \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(T *)(d[0] + i * s[0]) = ct__##FN##_##S(*(const T *)(d[1] + i * s[1]), p);     \
        }                                                                                   \
    }
#define CT__ARITH_LOOPS(E, T, S)                                                           \
    CT__BIN_LOOP(add, T, S)                                                                 \
    CT__BIN_LOOP(sub, T, S)                                                                 \
    CT__BIN_LOOP(mul, T, S)                                                                 \
    CT__BIN_LOOP(pow, T, S)                                                                 \
    CT__BIN_LOOP(maximum, T, S)                                                             \
    CT__BIN_LOOP(minimum, T, S)                                                             \
    CT__UN_LOOP(neg, T, S)                                                                  \
    CT__UN_LOOP(abs, T, S)                                                                  \
    CT__UN_LOOP(relu, T, S)                                                                 \
    CT__UN_LOOP(square, T, S)                                                               \
    CT__UN_LOOP(sign, T, S)
#define CT__FLOAT_LOOPS(E, T, S)                                                           \
    CT__BIN_LOOP(div, T, S)                                                                 \
    CT__BIN_LOOP(relu_bw, T, S)                                                             \
    CT__BIN_LOOP(sigmoid_bw, T, S)                                                          \
    CT__BIN_LOOP(tanh_bw, T, S)                                                             \
    CT__UN_LOOP(exp, T, S)                                                                  \
    CT__UN_LOOP(log, T, S)                                                                  \
    CT__UN_LOOP(log1p, T, S)                                                                \
    CT__UN_LOOP(sqrt, T, S)                                                                 \
    CT__UN_LOOP(rsqrt, T, S)                                                                \
    CT__UN_LOOP(sin, T, S)                                                                  \
    CT__UN_LOOP(cos, T, S)                                                                  \
    CT__UN_LOOP(sigmoid, T, S)                                                              \
    CT__UN_LOOP(tanh, T, S)                                                                 \
    CT__UN_LOOP(reciprocal, T, S)                                                           \
    CT__UN_LOOP(clamp, T, S)                                                                \
    CT__UN_LOOP(pows, T, S)
#define CT__CMP_LOOPS(E, T, S)                                                             \
    CT__CMP_LOOP(eq, ==, T, S)                                                              \
    CT__CMP_LOOP(ne, !=, T, S)                                                              \
    CT__CMP_LOOP(lt, <, T, S)                                                               \
    CT__CMP_LOOP(le, <=, T, S)                                                              \
    CT__CMP_LOOP(gt, >, T, S)                                                               \
    CT__CMP_LOOP(ge, >=, T, S)
CT__FOR_NUMERIC_DTYPES(CT__ARITH_LOOPS)
CT__FOR_FLOAT_DTYPES(CT__FLOAT_LOOPS)
CT__FOR_ALL_DTYPES(CT__CMP_LOOPS)

static void ct__loop_and(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) =
            *(const bool *)(d[1] + i * s[1]) && *(const bool *)(d[2] + i * s[2]);
    }
}

static void ct__loop_or(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) =
            *(const bool *)(d[1] + i * s[1]) || *(const bool *)(d[2] + i * s[2]);
    }
}

static void ct__loop_not(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) = !*(const bool *)(d[1] + i * s[1]);
    }
}

#define CT__WHERE_LOOP(E, T, S)                                                            \
    static void ct__loop_where_##S(char **d, const int64_t *s, int64_t n, const void *pp)   \
    {                                                                                       \
        (void)pp;                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(T *)(d[0] + i * s[0]) = *(const bool *)(d[1] + i * s[1])                      \
                                          ? *(const T *)(d[2] + i * s[2])                   \
                                          : *(const T *)(d[3] + i * s[3]);                  \
        }                                                                                   \
    }
CT__FOR_ALL_DTYPES(CT__WHERE_LOOP)

/* ---- kernel tables ------------------------------------------------------------------- */
#define CT__NUM_CASES(FN)                                                                  \
    case CT_UINT8: return ct__loop_##FN##_u8;                                               \
    case CT_INT8: return ct__loop_##FN##_i8;                                                \
    case CT_INT16: return ct__loop_##FN##_i16;                                              \
    case CT_INT32: return ct__loop_##FN##_i32;                                              \
    case CT_INT64: return ct__loop_##FN##_i64;                                              \
    case CT_FLOAT32: return ct__loop_##FN##_f32;                                            \
    case CT_FLOAT64: return ct__loop_##FN##_f64;
#define CT__FLT_CASES(FN)                                                                  \
    case CT_FLOAT32: return ct__loop_##FN##_f32;                                            \
    case CT_FLOAT64: return ct__loop_##FN##_f64;
#define CT__ALL_CASES(FN) CT__NUM_CASES(FN) case CT_BOOL: return ct__loop_##FN##_b8;
#define CT__OP(OP, CASES, FN)                                                              \
    case OP:                                                                                \
        switch (dt) {                                                                       \
            CASES(FN)                                                                       \
        default: return NULL;                                                               \
        }

/* The CPU loop of a binary op for compute dtype dt, or NULL when unsupported. */
static ct__loop_fn ct__cpu_binary_loop(ct__binop op, ct_dtype dt)
{
    switch (op) {
        CT__OP(CT__ADD, CT__NUM_CASES, add)
        CT__OP(CT__SUB, CT__NUM_CASES, sub)
        CT__OP(CT__MUL, CT__NUM_CASES, mul)
        CT__OP(CT__DIV, CT__FLT_CASES, div)
        CT__OP(CT__POW, CT__NUM_CASES, pow)
        CT__OP(CT__MAXIMUM, CT__NUM_CASES, maximum)
        CT__OP(CT__MINIMUM, CT__NUM_CASES, minimum)
        CT__OP(CT__EQ, CT__ALL_CASES, eq)
        CT__OP(CT__NE, CT__ALL_CASES, ne)
        CT__OP(CT__LT, CT__ALL_CASES, lt)
        CT__OP(CT__LE, CT__ALL_CASES, le)
        CT__OP(CT__GT, CT__ALL_CASES, gt)
        CT__OP(CT__GE, CT__ALL_CASES, ge)
        CT__OP(CT__RELU_BW, CT__FLT_CASES, relu_bw)
        CT__OP(CT__SIGMOID_BW, CT__FLT_CASES, sigmoid_bw)
        CT__OP(CT__TANH_BW, CT__FLT_CASES, tanh_bw)
    case CT__AND: return dt == CT_BOOL ? ct__loop_and : NULL;
    case CT__OR: return dt == CT_BOOL ? ct__loop_or : NULL;
    default: return NULL;
    }
}

static ct__loop_fn ct__cpu_unary_loop(ct__unop op, ct_dtype dt)
{
    switch (op) {
        CT__OP(CT__NEG, CT__NUM_CASES, neg)
        CT__OP(CT__ABS, CT__NUM_CASES, abs)
        CT__OP(CT__RELU, CT__NUM_CASES, relu)
        CT__OP(CT__SQUARE, CT__NUM_CASES, square)
        CT__OP(CT__SIGN, CT__NUM_CASES, sign)
        CT__OP(CT__EXP, CT__FLT_CASES, exp)
        CT__OP(CT__LOG, CT__FLT_CASES, log)
        CT__OP(CT__LOG1P, CT__FLT_CASES, log1p)
        CT__OP(CT__SQRT, CT__FLT_CASES, sqrt)
        CT__OP(CT__RSQRT, CT__FLT_CASES, rsqrt)
        CT__OP(CT__SIN, CT__FLT_CASES, sin)
        CT__OP(CT__COS, CT__FLT_CASES, cos)
        CT__OP(CT__SIGMOID, CT__FLT_CASES, sigmoid)
        CT__OP(CT__TANH, CT__FLT_CASES, tanh)
        CT__OP(CT__RECIPROCAL, CT__FLT_CASES, reciprocal)
        CT__OP(CT__CLAMP, CT__FLT_CASES, clamp)
        CT__OP(CT__POWS, CT__FLT_CASES, pows)
    case CT__NOT: return dt == CT_BOOL ? ct__loop_not : NULL;
    default: return NULL;
    }
}

static ct__loop_fn ct__cpu_where_loop(ct_dtype dt)
{
    switch (dt) {
        CT__ALL_CASES(where)
    default: return NULL;
    }
}

/* ---- meta: type promotion ------------------------------------------------------------ */
/* PyTorch's combine_categories: how a lower-priority class of operands affects the dtype. */
static ct_dtype ct__combine_categories(ct_dtype higher, ct_dtype lower)
{
    if (ct_dtype_is_floating_point(higher)) {
        return higher;
    }
    if (higher == CT_BOOL || ct_dtype_is_floating_point(lower)) {
        return higher == CT_DTYPE_DEFAULT ? lower
               : lower == CT_DTYPE_DEFAULT ? higher : ct_promote_types(higher, lower);
    }
    return higher != CT_DTYPE_DEFAULT ? higher : lower;
}

static ct_dtype ct__promote_opt(ct_dtype acc, ct_dtype d)
{
    return acc == CT_DTYPE_DEFAULT ? d : ct_promote_types(acc, d);
}

/* The dtype of an op over n operands (dimensioned > 0-dim > wrapped scalars). */
static ct_dtype ct__result_type(const ct_tensor *const *ops, int n)
{
    ct_dtype dim = CT_DTYPE_DEFAULT, zero = CT_DTYPE_DEFAULT, wrapped = CT_DTYPE_DEFAULT;
    for (int k = 0; k < n; k++) {
        const ct_tensor *t = ops[k];
        if (t->wrapped_number) {
            ct_dtype d = ct_dtype_is_floating_point(t->dtype) ? ct_get_default_dtype() : t->dtype;
            wrapped = ct__promote_opt(wrapped, d);
        } else if (t->ndim == 0) {
            zero = ct__promote_opt(zero, t->dtype);
        } else {
            dim = ct__promote_opt(dim, t->dtype);
        }
    }
    return ct__combine_categories(dim, ct__combine_categories(zero, wrapped));
}

ct_dtype ct_result_type(const ct_tensor *a, const ct_tensor *b)
{
    if (ct__null("ct_result_type", a) || ct__null("ct_result_type", b)) {
        return CT_DTYPE_DEFAULT;
    }
    const ct_tensor *ops[2] = {a, b};
    return ct__result_type(ops, 2);
}

/* A 0-dim wrapped number: int64 when v is integral, else float64 (promotes as the default
   float dtype). Not registered in a scope. */
static ct_tensor *ct__wrap_scalar(double v)
{
    bool integral = v == floor(v) && fabs(v) < 9.2e18;
    ct_tensor *t = ct__tensor_new("ct_scalar", NULL, 0, integral ? CT_INT64 : CT_FLOAT64);
    if (t) {
        ct__store_f64(ct__data(t), t->dtype, v);
        t->wrapped_number = true;
    }
    return t;
}

/* t converted to dtype without autograd (a new unscoped reference; t itself, retained,
   when the dtype matches). */
static ct_tensor *ct__cast(const ct_tensor *t, ct_dtype dtype)
{
    if (t->dtype == dtype) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *r = ct__tensor_new("ct_to", t->sizes, t->ndim, dtype);
    if (r) {
        ct__copy_kernel(r, t);
        r->wrapped_number = t->wrapped_number;
    }
    return r;
}

static bool ct__check_operands(const char *op, const ct_tensor *const *ops, int n)
{
    for (int k = 0; k < n; k++) {
        if (ct__null(op, ops[k]) || !ct__check_cpu(op, ops[k])) {
            return false;
        }
    }
    return true;
}

/* Runs the loop of op over inputs (cast to compute dtype ct) into out. */
static bool ct__run_kernel(const char *op, ct_tensor *out, const ct_tensor *const *inputs, int n,
                           ct_dtype ct, ct__loop_fn loop, const double *params)
{
    if (!loop) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for '%s'", op, ct__dtype_title(ct));
        return false;
    }
    ct_tensor *cast[CT__ITER_MAX_OPS];
    bool ok = true;
    for (int k = 0; k < n; k++) {
        cast[k] = ok ? ct__cast(inputs[k], ct) : NULL;
        ok = ok && cast[k];
    }
    if (ok) {
        ct__iter it;
        ct__iter_build(&it, out, (const ct_tensor *const *)cast, n);
        ct__iter_run(&it, loop, params);
    }
    for (int k = 0; k < n; k++) {
        ct__release(cast[k]);
    }
    return ok;
}

static bool ct__is_cmp(ct__binop op) { return op >= CT__EQ && op <= CT__GE; }

/* Result and compute dtypes of a binary op. */
static bool ct__binary_dtypes(const char *op, ct__binop bop, const ct_tensor *a,
                              const ct_tensor *b, ct_dtype *result, ct_dtype *compute)
{
    const ct_tensor *ops[2] = {a, b};
    ct_dtype rt = ct__result_type(ops, 2);
    if (bop == CT__SUB && a->dtype == CT_BOOL && b->dtype == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "Subtraction, the `-` operator, with two bool tensors is not "
                 "supported. Use the `^` or `logical_xor()` operator instead.");
        return false;
    }
    if (bop == CT__SUB && (a->dtype == CT_BOOL || b->dtype == CT_BOOL)) {
        ct__fail(CT_ERR_DTYPE, op, "Subtraction, the `-` operator, with a bool tensor is not "
                 "supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
                 "operator instead.");
        return false;
    }
    if ((bop == CT__DIV || bop >= CT__RELU_BW) && !ct_dtype_is_floating_point(rt)) {
        rt = ct_get_default_dtype(); /* true division of integers */
    }
    if (bop == CT__AND || bop == CT__OR) {
        *compute = CT_BOOL;
        *result = CT_BOOL;
    } else if (ct__is_cmp(bop)) {
        *compute = rt;
        *result = CT_BOOL;
    } else {
        *compute = rt == CT_BOOL ? CT_UINT8 : rt;
        *result = rt;
    }
    return true;
}

/* PyTorch's checks of add/sub's alpha for result dtype rt: an integral (or bool) result
   takes only an integral alpha, and alpha must convert to rt without overflow. Replaces a
   bool result's alpha by alpha != 0 (bool arithmetic runs in uint8). */
static bool ct__check_alpha(const char *op, ct_dtype rt, double *alpha)
{
    if (!ct_dtype_is_floating_point(rt) && *alpha != floor(*alpha)) {
        ct__fail(CT_ERR_VALUE, op, "For integral input tensors, argument alpha must not be a "
                 "floating point number.");
        return false;
    }
    if (!ct__check_scalar(op, *alpha, rt)) {
        return false;
    }
    *alpha = rt == CT_BOOL ? (double)(*alpha != 0) : *alpha;
    return true;
}

/* The forward of a binary op: a new unscoped tensor, no autograd. */
static ct_tensor *ct__binary_forward(const char *op, ct__binop bop, const ct_tensor *a,
                                     const ct_tensor *b, double alpha)
{
    const ct_tensor *ops[2] = {a, b};
    if (!ct__check_operands(op, ops, 2)) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    ct_dtype rt, ct;
    if (!ct__broadcast_shapes(op, a->sizes, a->ndim, b->sizes, b->ndim, shape, &nd) ||
        !ct__binary_dtypes(op, bop, a, b, &rt, &ct) || !ct__check_alpha(op, rt, &alpha)) {
        return NULL;
    }
    ct_tensor *out = ct__tensor_new(op, shape, nd, rt);
    if (!out) {
        return NULL;
    }
    double params[1] = {alpha};
    if (ct == rt || ct__is_cmp(bop)) { /* comparison loops write bool directly */
        if (!ct__run_kernel(op, out, ops, 2, ct, ct__cpu_binary_loop(bop, ct), params)) {
            ct__release(out);
            return NULL;
        }
        return out;
    }
    /* bool arithmetic runs in uint8 and converts back */
    ct_tensor *tmp = ct__tensor_new(op, shape, nd, ct);
    bool ok = tmp && ct__run_kernel(op, tmp, ops, 2, ct, ct__cpu_binary_loop(bop, ct), params);
    if (ok) {
        ct__copy_kernel(out, tmp);
    }
    ct__release(tmp);
    if (!ok) {
        ct__release(out);
        return NULL;
    }
    return out;
}

/* ---- derivative formulas ------------------------------------------------------------- */
static void ct__add_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) {
        gi[1] = n->f[0] == 1.0 ? (ct_tensor *)(uintptr_t)g : ct_mul_scalar(g, n->f[0]);
    }
}

static void ct__sub_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul_scalar(g, -n->f[0]);
    }
}

static void ct__mul_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_mul(g, ct__saved(n, 1));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul(g, ct__saved(n, 0));
    }
}

static void ct__div_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_div(g, b);
    }
    if (ct__needs_grad(n, 1)) { /* -g * a / b^2 */
        gi[1] = ct_neg(ct_div(ct_mul(g, a), ct_mul(b, b)));
    }
}

static void ct__pow_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1), *out = ct__saved(n, 2);
    if (ct__needs_grad(n, 0)) { /* g * b * a^(b-1), 0 where b == 0 */
        ct_tensor *d = ct_mul(b, ct_pow(a, ct_sub_scalar(b, 1.0)));
        gi[0] = ct_mul(g, ct_where(ct_eq_scalar(b, 0.0), ct_zeros_like(d), d));
    }
    if (ct__needs_grad(n, 1)) { /* g * out * log(a), 0 where a == 0 and b >= 0 */
        ct_tensor *d = ct_mul(out, ct_log(a));
        ct_tensor *zero =
            ct_logical_and(ct_eq_scalar(a, 0.0), ct_logical_not(ct_lt_scalar(b, 0.0)));
        gi[1] = ct_mul(g, ct_where(zero, ct_zeros_like(d), d));
    }
}

static void ct__minmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    /* the gradient goes to the selected input; ties split it evenly, as PyTorch */
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    bool is_max = n->f[0] > 0;
    ct_tensor *half = ct_mul_scalar(g, 0.5);
    ct_tensor *a_wins = is_max ? ct_gt(a, b) : ct_lt(a, b);
    ct_tensor *b_wins = is_max ? ct_lt(a, b) : ct_gt(a, b);
    ct_tensor *tie = ct_eq(a, b);
    ct_tensor *zero = ct_zeros_like(g);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_where(a_wins, g, ct_where(tie, half, zero));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_where(b_wins, g, ct_where(tie, half, zero));
    }
}

static void ct__relu_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);
static void ct__sigmoid_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);
static void ct__tanh_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);

typedef struct ct__binary_info {
    const char *node;
    ct__backward_fn backward;
    bool save_a, save_b, save_out;
} ct__binary_info;

static const ct__binary_info *ct__binary_meta(ct__binop op)
{
    static const ct__binary_info info[CT__BINOP_COUNT] = {
        {"AddBackward0", ct__add_backward, false, false, false},
        {"SubBackward0", ct__sub_backward, false, false, false},
        {"MulBackward0", ct__mul_backward, true, true, false},
        {"DivBackward0", ct__div_backward, true, true, false},
        {"PowBackward1", ct__pow_backward, true, true, true},
        {"MaximumBackward0", ct__minmax_backward, true, true, false},
        {"MinimumBackward0", ct__minmax_backward, true, true, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {"ThresholdBackwardBackward0", ct__relu_bw_backward, false, true, false},
        {"SigmoidBackwardBackward0", ct__sigmoid_bw_backward, true, true, false},
        {"TanhBackwardBackward0", ct__tanh_bw_backward, true, true, false},
    };
    return &info[op];
}

/* A binary op with autograd: the forward plus, when needed, its node. Scoped result. */
static ct_tensor *ct__binary(const char *op, ct__binop bop, const ct_tensor *a,
                             const ct_tensor *b, double alpha)
{
    ct_tensor *out = ct__binary_forward(op, bop, a, b, alpha);
    const ct__binary_info *info = ct__binary_meta(bop);
    if (out && info->backward && ct_dtype_is_floating_point(out->dtype)) {
        const ct_tensor *ins[2] = {a, b};
        ct_node *n = ct__node_new(info->node, info->backward, ins, 2);
        if (n) {
            n->f[0] = bop == CT__MAXIMUM ? 1.0 : bop == CT__MINIMUM ? -1.0 : alpha;
            ct__save(n, info->save_a ? a : NULL);
            ct__save(n, info->save_b ? b : NULL);
            ct__save_output(n, info->save_out ? out : NULL);
        }
        out = ct__set_history(out, n);
    }
    return ct__scoped(out);
}

static void ct__relu_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__binary("ct_threshold_backward", CT__RELU_BW, g, ct__saved(n, 1), 1.0);
    }
}

static void ct__sigmoid_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__binary("ct_sigmoid_backward", CT__SIGMOID_BW, g, y, 1.0);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*y*(1-y)] = go*(1-2y) */
        gi[1] = ct_mul(ct_mul(g, go), ct_add_scalar(ct_mul_scalar(y, -2.0), 1.0));
    }
}

static void ct__tanh_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__binary("ct_tanh_backward", CT__TANH_BW, g, y, 1.0);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*(1-y^2)] = -2*go*y */
        gi[1] = ct_mul(ct_mul(g, go), ct_mul_scalar(y, -2.0));
    }
}

/* binary op with a C scalar as the second operand */
static ct_tensor *ct__binary_scalar(const char *op, ct__binop bop, const ct_tensor *a, double v)
{
    if (ct__null(op, a)) {
        return NULL;
    }
    ct_tensor *s = ct__wrap_scalar(v);
    ct_tensor *out = s ? ct__binary(op, bop, a, s, 1.0) : NULL;
    ct__release(s);
    return out;
}

/* The public binary ops: ct_<name>(a, b) and ct_<name>_scalar(a, v). */
#define CT__BINARY_OP(NAME, OP)                                                            \
    ct_tensor *ct_##NAME(const ct_tensor *a, const ct_tensor *b)                           \
    {                                                                                      \
        return ct__binary("ct_" #NAME, OP, a, b, 1.0);                                     \
    }
#define CT__SCALAR_OP(NAME, OP)                                                            \
    ct_tensor *ct_##NAME##_scalar(const ct_tensor *a, double v)                            \
    {                                                                                      \
        return ct__binary_scalar("ct_" #NAME, OP, a, v);                                   \
    }
CT__BINARY_OP(add, CT__ADD)
CT__BINARY_OP(sub, CT__SUB)
CT__BINARY_OP(mul, CT__MUL)
CT__BINARY_OP(div, CT__DIV)
CT__BINARY_OP(pow, CT__POW)
CT__BINARY_OP(maximum, CT__MAXIMUM)
CT__BINARY_OP(minimum, CT__MINIMUM)
CT__BINARY_OP(eq, CT__EQ)
CT__BINARY_OP(ne, CT__NE)
CT__BINARY_OP(lt, CT__LT)
CT__BINARY_OP(le, CT__LE)
CT__BINARY_OP(gt, CT__GT)
CT__BINARY_OP(ge, CT__GE)
CT__BINARY_OP(logical_and, CT__AND)
CT__BINARY_OP(logical_or, CT__OR)
CT__SCALAR_OP(add, CT__ADD)
CT__SCALAR_OP(sub, CT__SUB)
CT__SCALAR_OP(mul, CT__MUL)
CT__SCALAR_OP(div, CT__DIV)
CT__SCALAR_OP(eq, CT__EQ)
CT__SCALAR_OP(gt, CT__GT)
CT__SCALAR_OP(lt, CT__LT)
#undef CT__BINARY_OP
#undef CT__SCALAR_OP

ct_tensor *ct_add_alpha(const ct_tensor *a, const ct_tensor *b, double alpha)
{
    return ct__binary("ct_add", CT__ADD, a, b, alpha);
}

ct_tensor *ct_pow_scalar(const ct_tensor *a, double exponent);

/* ---- in-place binary ops ------------------------------------------------------------- */
static ct_tensor *ct__binary_inplace(const char *op, ct__binop bop, ct_tensor *self,
                                     const ct_tensor *other, double alpha)
{
    const ct_tensor *ops[2] = {self, other};
    if (!ct__check_operands(op, ops, 2) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    ct_dtype rt, ct;
    if (!ct__broadcast_shapes(op, self->sizes, self->ndim, other->sizes, other->ndim, shape, &nd) ||
        !ct__binary_dtypes(op, bop, self, other, &rt, &ct) ||
        !ct__check_alpha(op, rt, &alpha)) {
        return NULL;
    }
    if (nd != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, op, "output with shape %s doesn't match the broadcast shape %s",
                 ct__shape_str(self->sizes, self->ndim, a, sizeof a),
                 ct__shape_str(shape, nd, b, sizeof b));
        return NULL;
    }
    if (!ct_can_cast(rt, self->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "result type %s can't be cast to the desired output type %s",
                 ct__dtype_title(rt), ct__dtype_title(self->dtype));
        return NULL;
    }
    const ct__binary_info *info = ct__binary_meta(bop);
    ct_node *n = ct__node_new(info->node, info->backward, ops, 2);
    if (n) { /* the old value of self is needed by mul/div: save a copy */
        n->f[0] = alpha;
        ct_tensor *old_copy = info->save_a ? ct_clone(self) : NULL;
        ct__save(n, old_copy);
        ct__save(n, info->save_b ? other : NULL);
        ct__save(n, NULL);
        ct_free(old_copy); /* the node holds what it needs */
    }
    double params[1] = {alpha};
    bool ok;
    if (ct == self->dtype) {
        ok = ct__run_kernel(op, self, ops, 2, ct, ct__cpu_binary_loop(bop, ct), params);
    } else {
        ct_tensor *tmp = ct__binary_forward(op, bop, self, other, alpha);
        ok = tmp != NULL;
        if (ok) {
            ct__copy_kernel(self, tmp);
        }
        ct__release(tmp);
    }
    if (!ok) {
        ct__node_release(n);
        return NULL;
    }
    ct__bump_version(self);
    ct__rebase_history(self, n);
    return self;
}

ct_tensor *ct_add_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__binary_inplace("ct_add_", CT__ADD, self, other, alpha);
}

ct_tensor *ct_sub_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__binary_inplace("ct_sub_", CT__SUB, self, other, alpha);
}

ct_tensor *ct_mul_(ct_tensor *self, const ct_tensor *other)
{
    return ct__binary_inplace("ct_mul_", CT__MUL, self, other, 1.0);
}

ct_tensor *ct_div_(ct_tensor *self, const ct_tensor *other)
{
    return ct__binary_inplace("ct_div_", CT__DIV, self, other, 1.0);
}

/* ---- unary ops ----------------------------------------------------------------------- */
static void ct__neg_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_neg(g);
}

static void ct__abs_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);
static void ct__exp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct__saved(n, 1));
}

static void ct__log_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div(g, ct__saved(n, 0));
}

static void ct__log1p_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div(g, ct_add_scalar(ct__saved(n, 0), 1.0));
}

static void ct__sqrt_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div(g, ct_mul_scalar(ct__saved(n, 1), 2.0));
}

static void ct__rsqrt_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* d/dx x^-1/2 = -1/2 * out^3 */
    const ct_tensor *y = ct__saved(n, 1);
    gi[0] = ct_mul(g, ct_mul_scalar(ct_mul(y, ct_mul(y, y)), -0.5));
}

static void ct__sin_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_cos(ct__saved(n, 0)));
}

static void ct__cos_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_neg(ct_sin(ct__saved(n, 0))));
}

static void ct__sigmoid_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__binary("ct_sigmoid_backward", CT__SIGMOID_BW, g, ct__saved(n, 1), 1.0);
}

static void ct__tanh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__binary("ct_tanh_backward", CT__TANH_BW, g, ct__saved(n, 1), 1.0);
}

static void ct__relu_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__binary("ct_threshold_backward", CT__RELU_BW, g, ct__saved(n, 1), 1.0);
}

static void ct__square_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_mul_scalar(ct__saved(n, 0), 2.0));
}

static void ct__reciprocal_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* -g * out^2 */
    const ct_tensor *y = ct__saved(n, 1);
    gi[0] = ct_neg(ct_mul(g, ct_mul(y, y)));
}

static void ct__clamp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0);
    ct_tensor *lo = ct__binary_scalar("ct_clamp", CT__GE, x, n->f[0]);
    ct_tensor *hi = ct__binary_scalar("ct_clamp", CT__LE, x, n->f[1]);
    gi[0] = ct_where(ct_logical_and(lo, hi), g, ct_zeros_like(g));
}

static void ct__pows_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * p * x^(p-1); 0 when p == 0 */
    double p = n->f[0];
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = p == 0 ? ct_zeros_like(g) : ct_mul(g, ct_mul_scalar(ct_pow_scalar(x, p - 1), p));
}

typedef struct ct__unary_info {
    const char *node;
    ct__backward_fn backward;
    bool floating; /* integer inputs compute in the default float dtype */
    bool save_in, save_out;
} ct__unary_info;

static const ct__unary_info *ct__unary_meta(ct__unop op)
{
    static const ct__unary_info info[CT__UNOP_COUNT] = {
        {"NegBackward0", ct__neg_backward, false, false, false},
        {"AbsBackward0", ct__abs_backward, false, true, false},
        {"ReluBackward0", ct__relu_backward, false, false, true},
        {"PowBackward0", ct__square_backward, false, true, false},
        {NULL, NULL, false, false, false}, /* sign: zero gradient, not recorded */
        {"ExpBackward0", ct__exp_backward, true, false, true},
        {"LogBackward0", ct__log_backward, true, true, false},
        {"Log1PBackward0", ct__log1p_backward, true, true, false},
        {"SqrtBackward0", ct__sqrt_backward, true, false, true},
        {"RsqrtBackward0", ct__rsqrt_backward, true, false, true},
        {"SinBackward0", ct__sin_backward, true, true, false},
        {"CosBackward0", ct__cos_backward, true, true, false},
        {"SigmoidBackward0", ct__sigmoid_backward, true, false, true},
        {"TanhBackward0", ct__tanh_backward, true, false, true},
        {"ReciprocalBackward0", ct__reciprocal_backward, true, false, true},
        {"ClampBackward1", ct__clamp_backward, true, true, false},
        {"PowBackward0", ct__pows_backward, true, true, false},
        {NULL, NULL, false, false, false},
    };
    return &info[op];
}

static ct_tensor *ct__unary(const char *op, ct__unop uop, const ct_tensor *a, double p0, double p1)
{
    if (!ct__check_operands(op, &a, 1)) {
        return NULL;
    }
    const ct__unary_info *info = ct__unary_meta(uop);
    ct_dtype dt = a->dtype;
    if (uop == CT__NOT) {
        dt = CT_BOOL;
    } else if (info->floating && !ct_dtype_is_floating_point(dt)) {
        dt = ct_get_default_dtype();
    } else if (dt == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for 'Bool'", op);
        return NULL;
    }
    ct_tensor *out = ct__tensor_new(op, a->sizes, a->ndim, dt);
    double params[2] = {p0, p1};
    if (!out || !ct__run_kernel(op, out, &a, 1, dt, ct__cpu_unary_loop(uop, dt), params)) {
        ct__release(out);
        return NULL;
    }
    if (info->backward && ct_dtype_is_floating_point(dt)) {
        ct_node *n = ct__node_new(info->node, info->backward, &a, 1);
        if (n) {
            n->f[0] = p0;
            n->f[1] = p1;
            ct__save(n, info->save_in ? a : NULL);
            ct__save_output(n, info->save_out ? out : NULL);
        }
        out = ct__set_history(out, n);
    }
    return ct__scoped(out);
}

static void ct__abs_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct__unary("ct_sign", CT__SIGN, ct__saved(n, 0), 0, 0));
}

ct_tensor *ct_neg(const ct_tensor *a) { return ct__unary("ct_neg", CT__NEG, a, 0, 0); }
ct_tensor *ct_abs(const ct_tensor *a) { return ct__unary("ct_abs", CT__ABS, a, 0, 0); }
ct_tensor *ct_exp(const ct_tensor *a) { return ct__unary("ct_exp", CT__EXP, a, 0, 0); }
ct_tensor *ct_log(const ct_tensor *a) { return ct__unary("ct_log", CT__LOG, a, 0, 0); }
ct_tensor *ct_log1p(const ct_tensor *a) { return ct__unary("ct_log1p", CT__LOG1P, a, 0, 0); }
ct_tensor *ct_sqrt(const ct_tensor *a) { return ct__unary("ct_sqrt", CT__SQRT, a, 0, 0); }
ct_tensor *ct_rsqrt(const ct_tensor *a) { return ct__unary("ct_rsqrt", CT__RSQRT, a, 0, 0); }
ct_tensor *ct_sin(const ct_tensor *a) { return ct__unary("ct_sin", CT__SIN, a, 0, 0); }
ct_tensor *ct_cos(const ct_tensor *a) { return ct__unary("ct_cos", CT__COS, a, 0, 0); }
ct_tensor *ct_sigmoid(const ct_tensor *a)
{
    return ct__unary("ct_sigmoid", CT__SIGMOID, a, 0, 0);
}
ct_tensor *ct_tanh(const ct_tensor *a)
{
    return ct__unary("ct_tanh", CT__TANH, a, 0, 0);
}
ct_tensor *ct_relu(const ct_tensor *a)
{
    return ct__unary("ct_relu", CT__RELU, a, 0, 0);
}
ct_tensor *ct_square(const ct_tensor *a)
{
    return ct__unary("ct_square", CT__SQUARE, a, 0, 0);
}
ct_tensor *ct_reciprocal(const ct_tensor *a)
{
    return ct__unary("ct_reciprocal", CT__RECIPROCAL, a, 0, 0);
}
ct_tensor *ct_logical_not(const ct_tensor *a)
{
    if (ct__null("ct_logical_not", a)) {
        return NULL;
    }
    ct_tensor *b = ct__cast(a, CT_BOOL);
    ct_tensor *out = b ? ct__unary("ct_logical_not", CT__NOT, b, 0, 0) : NULL;
    ct__release(b);
    return out;
}

ct_tensor *ct_clamp(const ct_tensor *a, double min, double max)
{
    if (ct__null("ct_clamp", a)) {
        return NULL;
    }
    if (min > max) {
        ct__fail(CT_ERR_VALUE, "ct_clamp", "min (%g) must be less than or equal to max (%g)", min,
                 max);
        return NULL;
    }
    if (!ct_dtype_is_floating_point(a->dtype) && a->dtype != CT_BOOL &&
        (isinf(min) || min == floor(min)) && (isinf(max) || max == floor(max))) {
        /* bounds beyond the dtype's range clamp nothing, unless nothing would be left */
        bool lo = ct__scalar_fits(min, a->dtype), hi = ct__scalar_fits(max, a->dtype);
        if ((!lo && min > 0) || (!hi && max < 0)) {
            ct__fail(CT_ERR_VALUE, "ct_clamp", "Clamp %s value %g is outside the representable "
                     "range of %s", !lo && min > 0 ? "min" : "max", !lo && min > 0 ? min : max,
                     ct__dtype_title(a->dtype));
            return NULL;
        }
        ct_scope_begin(); /* integer clamp keeps the dtype: maximum/minimum with the bounds */
        ct_tensor *r = (ct_tensor *)(uintptr_t)a;
        r = lo ? ct__binary_scalar("ct_clamp", CT__MAXIMUM, r, min) : r;
        r = hi ? ct__binary_scalar("ct_clamp", CT__MINIMUM, r, max) : r;
        r = ct_keep(r == a ? ct_clone(a) : r);
        ct_scope_end();
        return r;
    }
    return ct__unary("ct_clamp", CT__CLAMP, a, min, max);
}

ct_tensor *ct_pow_scalar(const ct_tensor *a, double exponent)
{
    if (ct__null("ct_pow", a)) {
        return NULL;
    }
    if (!ct_dtype_is_floating_point(a->dtype) && exponent == floor(exponent) &&
        fabs(exponent) < 9.2e18) { /* an int64 scalar, as ct__wrap_scalar decides */
        if (exponent < 0) { /* integer power: PyTorch's checks of the exponent */
            ct__fail(CT_ERR_VALUE, "ct_pow", "Integers to negative integer powers are not "
                     "allowed.");
            return NULL;
        }
        if (!ct__check_scalar("ct_pow", exponent, a->dtype == CT_BOOL ? CT_INT64 : a->dtype)) {
            return NULL;
        }
        return ct__binary_scalar("ct_pow", CT__POW, a, exponent);
    }
    return ct__unary("ct_pow", CT__POWS, a, exponent, 0);
}

ct_tensor *ct__threshold_backward(const ct_tensor *g, const ct_tensor *y)
{
    return ct__binary("ct_threshold_backward", CT__RELU_BW, g, y, 1.0);
}

void ct__relu_inplace_kernel(ct_tensor *t)
{
    double params[2] = {0, 0};
    const ct_tensor *in = t;
    ct__iter it;
    ct__iter_build(&it, t, &in, 1);
    ct__iter_run(&it, ct__cpu_unary_loop(CT__RELU, t->dtype), params);
}

ct_tensor *ct_relu_(ct_tensor *self)
{
    const char *op = "ct_relu_";
    if (!ct__check_operands(op, (const ct_tensor *const *)&self, 1) ||
        !ct__check_inplace(op, self)) {
        return NULL;
    }
    const ct_tensor *in = self;
    ct_node *n = ct__node_new("ReluBackward0", ct__relu_backward, &in, 1);
    double params[2] = {0, 0};
    if (!ct__run_kernel(op, self, &in, 1, self->dtype, ct__cpu_unary_loop(CT__RELU, self->dtype),
                        params)) {
        ct__node_release(n);
        return NULL;
    }
    ct__bump_version(self);
    if (n) {
        ct__save(n, NULL);
        ct__save_output(n, self);
    }
    ct__rebase_history(self, n);
    return self;
}

/* ---- where --------------------------------------------------------------------------- */
static void ct__where_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *c = ct__saved(n, 0);
    ct_tensor *zero = ct_zeros_like(g);
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_where(c, g, zero);
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_where(c, zero, g);
    }
}

ct_tensor *ct_where(const ct_tensor *cond, const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_where";
    const ct_tensor *ops[3] = {cond, a, b};
    if (!ct__check_operands(op, ops, 3)) {
        return NULL;
    }
    if (cond->dtype != CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "where expected condition to be a boolean tensor, but got a "
                 "tensor with dtype %s", ct__dtype_title(cond->dtype));
        return NULL;
    }
    int64_t s1[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int n1 = 0, nd = 0;
    if (!ct__broadcast_shapes(op, cond->sizes, cond->ndim, a->sizes, a->ndim, s1, &n1) ||
        !ct__broadcast_shapes(op, s1, n1, b->sizes, b->ndim, shape, &nd)) {
        return NULL;
    }
    ct_dtype rt = ct__result_type(ops + 1, 2);
    ct_tensor *out = ct__tensor_new(op, shape, nd, rt);
    ct_tensor *cb = ct__cast(cond, CT_BOOL);
    ct_tensor *ca = ct__cast(a, rt), *cbb = ct__cast(b, rt);
    bool ok = out && cb && ca && cbb;
    if (ok) {
        const ct_tensor *ins[3] = {cb, ca, cbb};
        ct__iter it;
        ct__iter_build(&it, out, ins, 3);
        ct__iter_run(&it, ct__cpu_where_loop(rt), NULL);
    }
    ct__release(cb);
    ct__release(ca);
    ct__release(cbb);
    if (!ok) {
        ct__release(out);
        return NULL;
    }
    if (ct_dtype_is_floating_point(rt)) {
        ct_node *n = ct__node_new("WhereBackward0", ct__where_backward, ops, 3);
        if (n) {
            ct__save(n, cond);
        }
        out = ct__set_history(out, n);
    }
    return ct__scoped(out);
}

/* ---- fill, copy, clone, cast --------------------------------------------------------- */
ct_tensor *ct_fill_(ct_tensor *self, double value)
{
    const char *op = "ct_fill_";
    if (ct__null(op, self) || !ct__check_cpu(op, self) || !ct__check_inplace(op, self) ||
        !ct__check_scalar(op, value, self->dtype)) {
        return NULL;
    }
    ct_tensor *s = ct__tensor_new(op, NULL, 0, self->dtype);
    if (!s) {
        return NULL;
    }
    ct__store_f64(ct__data(s), s->dtype, value);
    ct__copy_kernel(self, s);
    ct__release(s);
    ct__bump_version(self);
    if (ct_is_grad_enabled()) { /* the new value has no history */
        ct__node_release(self->grad_fn);
        self->grad_fn = NULL;
    }
    return self;
}

ct_tensor *ct_zero_(ct_tensor *self) { return ct_fill_(self, 0.0); }

static void ct__copy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[1] = (ct_tensor *)(uintptr_t)g; /* the engine sums to src's shape and casts */
}

ct_tensor *ct_copy_(ct_tensor *self, const ct_tensor *src)
{
    const char *op = "ct_copy_";
    const ct_tensor *ops[2] = {self, src};
    if (!ct__check_operands(op, ops, 2) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    if (!ct__broadcast_shapes(op, self->sizes, self->ndim, src->sizes, src->ndim, shape, &nd)) {
        return NULL;
    }
    if (nd != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, op, "output with shape %s doesn't match the broadcast shape %s",
                 ct__shape_str(self->sizes, self->ndim, a, sizeof a),
                 ct__shape_str(shape, nd, b, sizeof b));
        return NULL;
    }
    const ct_tensor *ins[2] = {NULL, src}; /* the old value of self gets no gradient */
    ct_node *n = ct_dtype_is_floating_point(self->dtype) && ct_dtype_is_floating_point(src->dtype)
                     ? ct__node_new("CopyBackwards", ct__copy_backward, ins, 2)
                     : NULL;
    ct__copy_kernel(self, src);
    ct__bump_version(self);
    ct__rebase_history(self, n);
    return self;
}

static void ct__clone_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = (ct_tensor *)(uintptr_t)g;
}

ct_tensor *ct_clone(const ct_tensor *a)
{
    if (ct__null("ct_clone", a) || !ct__check_cpu("ct_clone", a)) {
        return NULL;
    }
    ct_tensor *out = ct__tensor_new("ct_clone", a->sizes, a->ndim, a->dtype);
    if (!out) {
        return NULL;
    }
    ct__copy_kernel(out, a);
    out = ct__set_history(out, ct__node_new("CloneBackward0", ct__clone_backward, &a, 1));
    return ct__scoped(out);
}

static void ct__to_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = (ct_tensor *)(uintptr_t)g; /* the engine casts back to the input dtype */
}

ct_tensor *ct_to_dtype(const ct_tensor *a, ct_dtype dtype)
{
    const char *op = "ct_to_dtype";
    if (ct__null(op, a) || !ct__check_cpu(op, a)) {
        return NULL;
    }
    if (!ct__check_dtype_arg(op, dtype)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    if (a->dtype == dtype) {
        return ct_alias(a);
    }
    ct_tensor *out = ct__cast(a, dtype);
    if (!out) {
        return NULL;
    }
    out->wrapped_number = false;
    if (ct_dtype_is_floating_point(dtype) && ct_dtype_is_floating_point(a->dtype)) {
        out = ct__set_history(out, ct__node_new("ToCopyBackward0", ct__to_backward, &a, 1));
    }
    return ct__scoped(out);
}

CT__VECTORIZE_END
