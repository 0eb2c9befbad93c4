/* ops/pointwise.c - elementwise kernels, their meta layer and derivative formulas.
 *
 * Legend: out (broadcast shape), a/b (operands broadcast to out), g (gradient of out).
 * Each kernel is an inner loop over n elements with byte strides s[0] (out), s[1] (a),
 * s[2] (b); the contiguous case is a separate flat loop the compiler vectorizes.
 * The per-element math is in small inline functions, one per op and dtype.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "pointwise.h"
#include "view.h"
#include "vmath.h"
#include "../autograd/autograd.h"

#include <float.h>

CT__VECTORIZE_BEGIN
CT__FP_SPECULATE /* vmath.h: gcc if-converts and vectorizes the kernels' selects */

/* Binary ops. Bool operands of ids up to CT__MINIMUM and from CT__FMAX to CT__BITXOR compute in
   uint8; those between (rounding divisions, hypot, logaddexp, fmod, remainder) and the shifts
   have no bool kernel; comparisons and logical ops give bool; ids from CT__RELU_BW on compute
   integers in the default float dtype. */
typedef enum ct__binop {
    CT__ADD, CT__SUB, CT__MUL, CT__DIV, CT__POW, CT__MAXIMUM, CT__MINIMUM, CT__DIV_TRUNC,
    CT__DIV_FLOOR, CT__HYPOT, CT__LOGADDEXP, CT__LOGADDEXP2, CT__FMOD, CT__REMAINDER, CT__FMAX,
    CT__FMIN, CT__BITAND, CT__BITOR, CT__BITXOR, CT__LSHIFT, CT__RSHIFT,
    CT__EQ, CT__NE, CT__LT, CT__LE, CT__GT, CT__GE, CT__AND, CT__OR, CT__XOR,
    CT__RELU_BW, CT__SIGMOID_BW, CT__TANH_BW, CT__ATAN2, CT__XLOGY, CT__BINOP_COUNT
} ct__binop;

typedef enum ct__terop { CT__ADDCMUL, CT__ADDCDIV, CT__LERP } ct__terop;

typedef enum ct__unop {
    CT__NEG, CT__ABS, CT__RELU, CT__SQUARE, CT__SIGN, /* every numeric dtype */
    CT__EXP, CT__LOG, CT__LOG1P, CT__SQRT, CT__RSQRT, CT__SIN, CT__COS, CT__SIGMOID,
    CT__TANH, CT__RECIPROCAL, CT__CLAMP, CT__POWS, CT__NOT, CT__ERF, CT__ISNAN, CT__ISINF,
    CT__ISFINITE, CT__EXPM1, CT__EXP2, CT__LOG2, CT__LOG10, CT__TAN, CT__ASIN, CT__ACOS, CT__ATAN,
    CT__SINH, CT__COSH, CT__ASINH, CT__ACOSH, CT__ATANH, CT__ERFC, CT__ERFINV, CT__FLOOR, CT__CEIL,
    CT__ROUND, CT__TRUNC, CT__FRAC, CT__SGN, CT__SIGNBIT, CT__ISPOSINF, CT__ISNEGINF, CT__ISREAL,
    CT__NAN_TO_NUM, CT__LOGIT, CT__BITNOT, CT__UNOP_COUNT
} ct__unop;

/* ---- per-element math ---------------------------------------------------------------- */
/* CT__VM_<S>(fn): the function computing fn for dtype S: vmath.h's vectorizable ct__<fn>f for
   float32, libm's for float64 */
#define CT__VM_f32(fn) ct__##fn##f
#define CT__VM_f64(fn) fn
/* v < 0 for any integer type (a call, so unsigned types raise no always-false warning) */
static inline bool ct__is_neg(double v) { return v < 0; }

/* The dtypes with arithmetic loops of their own. bool (where it computes), uint8, int8, int16
   and int32 compute in int64 and narrow the result (ct__loop_dtype): their results wrap
   modulo 2^bits either way, as in PyTorch, and the header does not compile every loop four
   more times. */
#define CT__FOR_WIDE_DTYPES(X)                                                             \
    X(CT_INT64, int64_t, i64)                                                               \
    CT__FOR_FLOAT_DTYPES(X)

/* ct__w_<S>: the type integer arithmetic of dtype S runs in, unsigned so that overflow wraps
   modulo 2^bits as in PyTorch instead of being undefined; the float types themselves. */
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
    }                                                                                       \
    static inline T ct__pows_##S(T x, const double *p) { return ct__pow_##S(x, (T)p[0], 0); } \
    /* integer division rounding toward zero and toward -inf; the kernel rejected y == 0 (0 is  \
       returned), x / -1 wraps instead of trapping */                                         \
    static inline T ct__div_trunc_##S(T x, T y, T alpha)                                    \
    {                                                                                       \
        (void)alpha;                                                                        \
        if (ct__is_neg(y) && y == (T)-1) {                                                  \
            return (T)-(ct__w_##S)x;                                                        \
        }                                                                                   \
        return y == 0 ? (T)0 : (T)(x / y);                                                  \
    }                                                                                       \
    static inline T ct__div_floor_##S(T x, T y, T alpha)                                    \
    {                                                                                       \
        T q = ct__div_trunc_##S(x, y, alpha);                                               \
        T r = (T)(x - (T)((ct__w_##S)q * (ct__w_##S)y));                                    \
        return (r != 0 && ct__is_neg(r) != ct__is_neg(y)) ? (T)(q - 1) : q;                \
    }                                                                                       \
    /* C's %, the sign of x (fmod) or of y (remainder, Python's %); y == 0 was rejected, x % -1 \
       is 0 instead of trapping */                                                          \
    static inline T ct__fmod_##S(T x, T y, T alpha)                                         \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (y == 0 || (ct__is_neg(y) && y == (T)-1)) ? (T)0 : (T)(x % y);               \
    }                                                                                       \
    static inline T ct__remainder_##S(T x, T y, T alpha)                                    \
    {                                                                                       \
        T r = ct__fmod_##S(x, y, alpha);                                                    \
        return (r != 0 && ct__is_neg(r) != ct__is_neg(y)) ? (T)(r + y) : r;                \
    }                                                                                       \
    static inline T ct__fmax_##S(T x, T y, T alpha) { return ct__maximum_##S(x, y, alpha); } \
    static inline T ct__fmin_##S(T x, T y, T alpha) { return ct__minimum_##S(x, y, alpha); } \
    static inline T ct__bitand_##S(T x, T y, T alpha) { (void)alpha; return (T)(x & y); }   \
    static inline T ct__bitor_##S(T x, T y, T alpha) { (void)alpha; return (T)(x | y); }    \
    static inline T ct__bitxor_##S(T x, T y, T alpha) { (void)alpha; return (T)(x ^ y); }   \
    static inline T ct__bitnot_##S(T x, const double *p) { (void)p; return (T)~x; }        \
    /* PyTorch's shifts: a shift by a negative count or by the width or more gives 0 (left), \
       the sign bits (right, signed) or 0 (right, unsigned) */                              \
    static inline T ct__lshift_##S(T x, T y, T alpha)                                       \
    {                                                                                       \
        (void)alpha;                                                                        \
        if (ct__is_neg(y) || (int64_t)y >= (int64_t)(8 * sizeof(T))) {                     \
            return (T)0;                                                                    \
        }                                                                                   \
        return (T)((ct__w_##S)x << y);                                                      \
    }                                                                                       \
    static inline T ct__rshift_##S(T x, T y, T alpha)                                       \
    {                                                                                       \
        (void)alpha;                                                                        \
        const int64_t max_shift = (int64_t)(8 * sizeof(T)) - (ct__is_neg((T)-1) ? 1 : 0);    \
        return (T)(x >> (ct__is_neg(y) || (int64_t)y >= max_shift ? max_shift : (int64_t)y)); \
    }
#define CT__INT_CLAMP(E, T, S)                                                              \
    static inline T ct__clamp_##S(T x, const double *p)                                     \
    { /* bounds saturated by meta: an open side is infinite */                              \
        T lo = p[0] == -INFINITY ? x : (T)p[0], hi = p[1] == INFINITY ? x : (T)p[1];        \
        return x < lo ? lo : (x > hi ? hi : x);                                             \
    }
#define CT__FLOAT_MATH(E, T, S, F, EXP, LOG, TANH, SIGMOID, ERF)                                 \
    CT__FORCE_INLINE T ct__div_##S(T x, T y, T alpha) { (void)alpha; return x / y; }           \
    CT__FORCE_INLINE T ct__pow_##S(T x, T y, T alpha) { (void)alpha; return pow##F(x, y); }    \
    CT__FORCE_INLINE T ct__maximum_##S(T x, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (x != x || x > y) ? x : y;                                                   \
    }                                                                                       \
    CT__FORCE_INLINE T ct__minimum_##S(T x, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (x != x || x < y) ? x : y;                                                   \
    }                                                                                       \
    CT__FORCE_INLINE T ct__relu_bw_##S(T g, T x, T alpha) { (void)alpha; return x > 0 ? g : 0; } \
    CT__FORCE_INLINE T ct__sigmoid_bw_##S(T g, T y, T alpha)                                   \
    {                                                                                       \
        (void)alpha;                                                                        \
        return g * y * ((T)1 - y);                                                          \
    }                                                                                       \
    CT__FORCE_INLINE T ct__tanh_bw_##S(T g, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return g * ((T)1 - y * y);                                                          \
    }                                                                                       \
    CT__FORCE_INLINE T ct__exp_##S(T x, const double *p) { (void)p; return EXP(x); }        \
    CT__FORCE_INLINE T ct__log_##S(T x, const double *p) { (void)p; return LOG(x); }        \
    CT__FORCE_INLINE T ct__log1p_##S(T x, const double *p)                                  \
    {                                                                                       \
        (void)p;                                                                            \
        return CT__VM_##S(log1p)(x);                                                        \
    }                                                                                       \
    CT__FORCE_INLINE T ct__sqrt_##S(T x, const double *p) { (void)p; return sqrt##F(x); }      \
    CT__FORCE_INLINE T ct__erf_##S(T x, const double *p) { (void)p; return ERF(x); }        \
    CT__FORCE_INLINE T ct__rsqrt_##S(T x, const double *p) { (void)p; return (T)1 / sqrt##F(x); } \
    CT__FORCE_INLINE T ct__sin_##S(T x, const double *p) { (void)p; return sin##F(x); }        \
    CT__FORCE_INLINE T ct__cos_##S(T x, const double *p) { (void)p; return cos##F(x); }        \
    CT__FORCE_INLINE T ct__sigmoid_##S(T x, const double *p) { (void)p; return SIGMOID(x); }   \
    CT__FORCE_INLINE T ct__tanh_##S(T x, const double *p) { (void)p; return TANH(x); }      \
    CT__FORCE_INLINE T ct__reciprocal_##S(T x, const double *p) { (void)p; return (T)1 / x; }  \
    CT__FORCE_INLINE T ct__clamp_##S(T x, const double *p)                                     \
    {                                                                                       \
        T lo = (T)p[0], hi = (T)p[1];                                                       \
        return x != x ? x : (x < lo ? lo : (x > hi ? hi : x));                              \
    }                                                                                       \
    CT__FORCE_INLINE T ct__pows_##S(T x, const double *p) { return pow##F(x, (T)p[0]); }     \
    CT__FORCE_INLINE T ct__div_trunc_##S(T x, T y, T alpha)                                 \
    {                                                                                       \
        (void)alpha;                                                                        \
        return trunc##F(x / y);                                                             \
    }                                                                                       \
    CT__FORCE_INLINE T ct__div_floor_##S(T x, T y, T alpha)                                    \
    { /* PyTorch's div_floor_floating */                                                    \
        (void)alpha;                                                                        \
        if (y == 0) {                                                                       \
            return x / y;                                                                   \
        }                                                                                   \
        T mod = fmod##F(x, y), div = (x - mod) / y;                                         \
        if (mod != 0 && (y < 0) != (mod < 0)) {                                             \
            div -= (T)1;                                                                    \
        }                                                                                   \
        if (div == 0) {                                                                     \
            return copysign##F((T)0, x / y);                                                \
        }                                                                                   \
        T fl = floor##F(div);                                                               \
        return div - fl > (T)0.5 ? fl + (T)1 : fl;                                          \
    }                                                                                       \
    CT__FORCE_INLINE T ct__addcdiv_##S(T x, T a, T b, T v) { return x + v * a / b; }         \
    CT__FORCE_INLINE T ct__lerp_w_##S(T x, T e, T w)                                           \
    { /* PyTorch's vectorized lerp: from the nearer end, one fused multiply-add */           \
        bool small = w < (T)0.5 && w > (T)-0.5;                                             \
        return fma##F(small ? w : w - (T)1, e - x, small ? x : e);                          \
    }                                                                                       \
    CT__FORCE_INLINE T ct__lerp_##S(T x, T e, T w, T v)                                    \
    {                                                                                       \
        (void)v;                                                                            \
        return ct__lerp_w_##S(x, e, w);                                                     \
    }                                                                                       \
    CT__FORCE_INLINE T ct__lerps_##S(T x, T e, T w) { return ct__lerp_w_##S(x, e, w); }         \
    CT__FORCE_INLINE T ct__hypot_##S(T x, T y, T alpha) { (void)alpha; return hypot##F(x, y); } \
    CT__FORCE_INLINE T ct__atan2_##S(T x, T y, T alpha)                                     \
    {                                                                                       \
        (void)alpha;                                                                        \
        return CT__VM_##S(atan2)(x, y);                                                     \
    }                                                                                       \
    CT__FORCE_INLINE T ct__fmod_##S(T x, T y, T alpha) { (void)alpha; return fmod##F(x, y); }   \
    CT__FORCE_INLINE T ct__remainder_##S(T x, T y, T alpha)                                    \
    { /* Python's %: the sign of the divisor */                                              \
        (void)alpha;                                                                        \
        T m = fmod##F(x, y);                                                                \
        return (m != 0 && (y < 0) != (m < 0)) ? m + y : m;                                  \
    }                                                                                       \
    CT__FORCE_INLINE T ct__fmax_##S(T x, T y, T alpha)                                         \
    { /* NaN only when both are */                                                          \
        (void)alpha;                                                                        \
        return (y != y || x > y) ? x : y;                                                   \
    }                                                                                       \
    CT__FORCE_INLINE T ct__fmin_##S(T x, T y, T alpha)                                         \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (y != y || x < y) ? x : y;                                                   \
    }                                                                                       \
    CT__FORCE_INLINE T ct__logaddexp_##S(T x, T y, T alpha)                                    \
    { /* max + log1p(e^-|x - y|); equal infinities give themselves */                       \
        (void)alpha;                                                                        \
        if (isinf(x) && x == y) {                                                           \
            return x;                                                                       \
        }                                                                                   \
        return (x < y ? y : x) + CT__VM_##S(log1p)(EXP(-fabs##F(x - y))); \
    }                                                                                       \
    CT__FORCE_INLINE T ct__logaddexp2_##S(T x, T y, T alpha)                                   \
    { /* max + log1p(2^-|x - y|) / ln 2 */                                                  \
        (void)alpha;                                                                        \
        if (isinf(x) && x == y) {                                                           \
            return x;                                                                       \
        }                                                                                   \
        T l = CT__VM_##S(log1p)(CT__VM_##S(exp2)(-fabs##F(x - y)));                           \
        return fma##F(l, (T)1.4426950408889634, x < y ? y : x);                             \
    }                                                                                       \
    CT__FORCE_INLINE T ct__xlogy_##S(T x, T y, T alpha)                                        \
    { /* 0 where x == 0 unless y is NaN */                                                  \
        (void)alpha;                                                                        \
        return y != y ? y : (x == 0 ? (T)0 : x * LOG(y));                                   \
    }                                                                                       \
    CT__FORCE_INLINE T ct__expm1_##S(T x, const double *p)                                  \
    {                                                                                       \
        (void)p;                                                                            \
        return CT__VM_##S(expm1)(x);                                                        \
    }                                                                                       \
    CT__FORCE_INLINE T ct__exp2_##S(T x, const double *p) { (void)p; return CT__VM_##S(exp2)(x); } \
    CT__FORCE_INLINE T ct__log2_##S(T x, const double *p) { (void)p; return CT__VM_##S(log2)(x); } \
    CT__FORCE_INLINE T ct__log10_##S(T x, const double *p)                                  \
    {                                                                                       \
        (void)p;                                                                            \
        return CT__VM_##S(log10)(x);                                                        \
    }                                                                                       \
    CT__FORCE_INLINE T ct__tan_##S(T x, const double *p) { (void)p; return tan##F(x); }        \
    CT__FORCE_INLINE T ct__asin_##S(T x, const double *p) { (void)p; return CT__VM_##S(asin)(x); } \
    CT__FORCE_INLINE T ct__acos_##S(T x, const double *p) { (void)p; return CT__VM_##S(acos)(x); } \
    CT__FORCE_INLINE T ct__atan_##S(T x, const double *p) { (void)p; return CT__VM_##S(atan)(x); } \
    CT__FORCE_INLINE T ct__sinh_##S(T x, const double *p) { (void)p; return sinh##F(x); }      \
    CT__FORCE_INLINE T ct__cosh_##S(T x, const double *p) { (void)p; return cosh##F(x); }      \
    CT__FORCE_INLINE T ct__asinh_##S(T x, const double *p) { (void)p; return asinh##F(x); }    \
    CT__FORCE_INLINE T ct__acosh_##S(T x, const double *p) { (void)p; return acosh##F(x); }    \
    CT__FORCE_INLINE T ct__atanh_##S(T x, const double *p)                                  \
    {                                                                                       \
        (void)p;                                                                            \
        return CT__VM_##S(atanh)(x);                                                        \
    }                                                                                       \
    CT__FORCE_INLINE T ct__erfc_##S(T x, const double *p) { (void)p; return erfc##F(x); }      \
    CT__FORCE_INLINE T ct__erfinv_##S(T x, const double *p) { (void)p; return ct__erfinv##F(x); } \
    CT__FORCE_INLINE T ct__floor_##S(T x, const double *p) { (void)p; return floor##F(x); }    \
    CT__FORCE_INLINE T ct__ceil_##S(T x, const double *p) { (void)p; return ceil##F(x); }      \
    CT__FORCE_INLINE T ct__round_##S(T x, const double *p) { (void)p; return nearbyint##F(x); } \
    CT__FORCE_INLINE T ct__trunc_##S(T x, const double *p) { (void)p; return trunc##F(x); }    \
    CT__FORCE_INLINE T ct__frac_##S(T x, const double *p) { (void)p; return x - trunc##F(x); } \
    CT__FORCE_INLINE T ct__nan_to_num_##S(T x, const double *p)                                \
    { /* p: the replacements of NaN, +inf and -inf */                                       \
        T r = x == (T)INFINITY ? (T)p[1] : (x == (T)-INFINITY ? (T)p[2] : x);               \
        return x != x ? (T)p[0] : r;                                                        \
    }                                                                                       \
    CT__FORCE_INLINE T ct__logit_##S(T x, const double *p)                                     \
    { /* log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps = p[0] >= 0 */           \
        T lo = (T)p[0], hi = (T)1 - lo;                                                     \
        T z = p[0] < 0 ? x : (x < lo ? lo : (x > hi ? hi : x));                             \
        return LOG(z / ((T)1 - z));                                                         \
    }
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
    }                                                                                       \
    static inline T ct__addcmul_##S(T x, T a, T b, T v)                                     \
    {                                                                                       \
        return (T)((ct__w_##S)x + (ct__w_##S)v * (ct__w_##S)a * (ct__w_##S)b);              \
    }
CT__INT_MATH(CT_INT64, int64_t, i64)
CT__INT_CLAMP(CT_INT64, int64_t, i64)
/* erf^-1(y), PyTorch's calc_erfinv: a rational first guess (central range |y| <= 0.7, else a
   rational function of sqrt(-log((1 - |y|) / 2))), then two Newton steps on erf(x) - y.
   Float64; float32's is vmath.h's ct__erfinvf. */
static inline double ct__erfinv(double y)
{
    double a = fabs(y), x;
    if (!(a < 1)) {
        return a == 1 ? copysign((double)INFINITY, y) : (double)NAN;
    }
    if (a <= (double)0.7) {
        double z = y * y;
        double num = fma(fma(fma((double)-0.140543331, z, (double)0.914624893), z,
                              (double)-1.645349621), z, (double)0.886226899);
        double dem = fma(fma(fma(fma((double)0.012229801, z, (double)-0.329097515), z,
                                     (double)1.442710462), z, (double)-2.118377725), z, (double)1);
        x = y * num / dem;
    } else {
        double z = sqrt(-log(((double)1 - a) / (double)2));
        double num = fma(fma(fma((double)1.641345311, z, (double)3.429567803), z,
                              (double)-1.624906493), z, (double)-1.970840454);
        double dem = fma(fma((double)1.637067800, z, (double)3.543889200), z, (double)1);
        x = copysign(num, y) / dem;
    }
    for (int k = 0; k < 2; k++) { /* 2 / sqrt(pi) = 1.1283791670955126 */
        x = x - (erf(x) - y) / ((double)1.1283791670955126 * exp(-x * x));
    }
    return x;
}
/* float64 sigmoid through libm */
static inline double ct__sigmoid_libm(double x) { return 1.0 / (1.0 + exp(-x)); }
CT__FLOAT_MATH(CT_FLOAT32, float, f32, f, ct__expf, ct__logf, ct__tanhf, ct__sigmoidf, ct__erff)
CT__FLOAT_MATH(CT_FLOAT64, double, f64, , exp, log, tanh, ct__sigmoid_libm, erf)
CT__FOR_WIDE_DTYPES(CT__ANY_MATH)
/* the identity: rounding ops and nan_to_num of integers, sign and sgn of bool */
#define CT__IDENT_MATH(E, T, S)                                                            \
    static inline T ct__ident_##S(T x, const double *p) { (void)p; return x; }
CT__IDENT_MATH(CT_BOOL, bool, b8)
CT__IDENT_MATH(CT_INT64, int64_t, i64)

/* ---- loops --------------------------------------------------------------------------- */
/* out[i] = FN(a[i], b[i], alpha); contiguous, scalar-b and scalar-a variants over whole blocks
   (CT__WHOLE_BLOCKS), the strided loop for the rest. */
#define CT__BIN_LOOP(FN, T, S)                                                          \
    static void ct__loop_##FN##_##S(char **d, const int64_t *s, int64_t n, const void *pp)\
    {                                                                                   \
        const T alpha = (T)((const double *)pp)[0];                                     \
        T *o = (T *)d[0];                                                               \
        const T *a = (const T *)d[1], *b = (const T *)d[2];                             \
        const int64_t e = (int64_t)sizeof(T), nb = CT__WHOLE_BLOCKS(n);                 \
        int64_t i = 0;                                                                  \
        if (s[0] == e && s[1] == e && s[2] == e) {                                      \
            for (; i < nb; i++) {                                                       \
                o[i] = ct__##FN##_##S(a[i], b[i], alpha);                               \
            }                                                                           \
        } else if (s[0] == e && s[1] == e && s[2] == 0) {                               \
            const T y = b[0];                                                           \
            for (; i < nb; i++) {                                                       \
                o[i] = ct__##FN##_##S(a[i], y, alpha);                                  \
            }                                                                           \
        } else if (s[0] == e && s[1] == 0 && s[2] == e) {                               \
            const T x = a[0];                                                           \
            for (; i < nb; i++) {                                                       \
                o[i] = ct__##FN##_##S(x, b[i], alpha);                                  \
            }                                                                           \
        }                                                                               \
        for (; i < n; i++) {                                                            \
            *(T *)(d[0] + i * s[0]) = ct__##FN##_##S(*(const T *)(d[1] + i * s[1]),     \
                                                     *(const T *)(d[2] + i * s[2]), alpha);\
        }                                                                               \
    }
/* out[i] = (a[i] CMP b[i]) as bool */
#define CT__CMP_LOOP(NAME, CMP, T, S)                                                      \
    static void ct__loop_##NAME##_##S(char **d, const int64_t *s, int64_t n, const void *pp) \
    {                                                                                       \
        (void)pp;                                                                           \
        int64_t i = 0;                                                                      \
        if (s[0] == 1 && s[1] == (int64_t)sizeof(T) && s[2] == 0) {                         \
            bool *o = (bool *)d[0];                                                         \
            const T *a = (const T *)d[1], y = *(const T *)d[2];                             \
            for (const int64_t nb = CT__WHOLE_BLOCKS(n); i < nb; i++) {                     \
                o[i] = a[i] CMP y;                                                          \
            }                                                                               \
        }                                                                                   \
        for (; i < n; i++) {                                                                \
            *(bool *)(d[0] + i * s[0]) =                                                    \
                *(const T *)(d[1] + i * s[1]) CMP * (const T *)(d[2] + i * s[2]);           \
        }                                                                                   \
    }
/* Costly math (every unary op, the binary ops of CT__BIN_LOOP_CALL, the ternary ops) is compiled
   once per op and dtype, in a block function: out and operands contiguous, n a multiple of
   CT__VEC_BLOCK, so the vectorizer leaves no scalar or narrower remainder copy of the math, and
   under CT__PW_IVDEP, so no overlap check with a scalar fallback copy (out is an operand itself
   or disjoint from it). ct__pw_blocks runs a block function at any strides: whole blocks in
   place when every operand is contiguous, the rest (the tail, strided and broadcast operands)
   gathered into blocks on the stack, their unused lanes zero. */
#if defined(__GNUC__) && !defined(__clang__)
#define CT__PW_IVDEP _Pragma("GCC ivdep")
#else
#define CT__PW_IVDEP
#endif
typedef void (*ct__pw_block_fn)(char **d, int64_t n, const void *pp);

/* m elements of es bytes from src (byte stride ss) to dst (byte stride ds) */
static void ct__pw_copy(char *dst, int64_t ds, const char *src, int64_t ss, int64_t m, int64_t es)
{
    if (es == 8) {
        for (int64_t j = 0; j < m; j++) {
            memcpy(dst + j * ds, src + j * ss, 8);
        }
    } else if (es == 4) {
        for (int64_t j = 0; j < m; j++) {
            memcpy(dst + j * ds, src + j * ss, 4);
        }
    } else {
        for (int64_t j = 0; j < m; j++) {
            memcpy(dst + j * ds, src + j * ss, (size_t)es);
        }
    }
}

/* fn over n elements of nops operands (out first, at most 4) of es bytes at byte strides s */
static void ct__pw_blocks(char **d, const int64_t *s, int64_t n, const void *pp, int nops,
                          int64_t es, ct__pw_block_fn fn)
{
    int64_t i = 0;
    bool flat = true;
    for (int k = 0; k < nops; k++) {
        flat = flat && s[k] == es;
    }
    if (flat) {
        i = CT__WHOLE_BLOCKS(n);
        if (i > 0) {
            fn(d, i, pp);
        }
    }
    for (; i < n; i += CT__VEC_BLOCK) {
        const int64_t m = n - i < CT__VEC_BLOCK ? n - i : CT__VEC_BLOCK;
        uint64_t buf[4][CT__VEC_BLOCK];
        char *b[4];
        for (int k = 0; k < nops; k++) {
            b[k] = (char *)buf[k];
            if (k > 0) {
                ct__pw_copy(b[k], es, d[k] + i * s[k], s[k], m, es);
                memset(b[k] + m * es, 0, (size_t)((CT__VEC_BLOCK - m) * es));
            }
        }
        fn(b, CT__VEC_BLOCK, pp);
        ct__pw_copy(d[0] + i * s[0], s[0], b[0], es, m, es);
    }
}

/* the block function ct__blk_FN_S of BODY over i from I0 (an expression of o, the operands'
   pointers declared by DECL and nb) and the loop running it */
#define CT__BLOCK_LOOP_FROM(FN, T, S, NOPS, DECL, I0, BODY)                                 \
    static CT__NOINLINE void ct__blk_##FN##_##S(char **d, int64_t n, const void *pp)        \
    {                                                                                       \
        const double *p = (const double *)pp;                                               \
        T *o = (T *)d[0];                                                                   \
        DECL                                                                                \
        const int64_t nb = CT__WHOLE_BLOCKS(n);                                             \
        (void)p;                                                                            \
        CT__PW_IVDEP                                                                        \
        for (int64_t i = I0; i < nb; i++) {                                                 \
            o[i] = BODY;                                                                    \
        }                                                                                   \
    }                                                                                       \
    static void ct__loop_##FN##_##S(char **d, const int64_t *s, int64_t n, const void *pp)  \
    {                                                                                       \
        ct__pw_blocks(d, s, n, pp, NOPS, (int64_t)sizeof(T), ct__blk_##FN##_##S);           \
    }
#define CT__BLOCK_LOOP(FN, T, S, NOPS, DECL, BODY)                                          \
    CT__BLOCK_LOOP_FROM(FN, T, S, NOPS, DECL, 0, BODY)
/* out[i] = FN(a[i], p) */
#define CT__UN_LOOP(FN, T, S)                                                              \
    CT__BLOCK_LOOP(FN, T, S, 2, const T *a = (const T *)d[1];, ct__##FN##_##S(a[i], p))
/* CT__UN_LOOP_V: exp, log, tanh, sigmoid and erf, whose float32 blocks start with vmath.h's
   NEON part on 32-bit ARM (elsewhere the compiler vectorizes the loop itself). */
#if defined(CT__HAS_NEON32)
#define CT__VPART_f32(FN, x, y, n) ct__vpart_##FN##_f32(x, y, n)
#define CT__VPART_f64(FN, x, y, n) 0
#define CT__UN_LOOP_V(FN, T, S)                                                            \
    CT__BLOCK_LOOP_FROM(FN, T, S, 2, const T *a = (const T *)d[1];,                         \
                        CT__VPART_##S(FN, a, o, nb), ct__##FN##_##S(a[i], p))
#else
#define CT__UN_LOOP_V CT__UN_LOOP
#endif
/* out[i] = FN(a[i], b[i], alpha) */
#define CT__BIN_LOOP_CALL(FN, T, S)                                                        \
    CT__BLOCK_LOOP(FN, T, S, 3, const T *a = (const T *)d[1]; const T *b = (const T *)d[2];, \
                   ct__##FN##_##S(a[i], b[i], (T)p[0]))
/* out[i] = FN(x[i], a[i], b[i], value) */
#define CT__TER_LOOP(FN, T, S)                                                             \
    CT__BLOCK_LOOP(FN, T, S, 4,                                                             \
                   const T *x = (const T *)d[1]; const T *a = (const T *)d[2];              \
                   const T *b = (const T *)d[3];,                                           \
                   ct__##FN##_##S(x[i], a[i], b[i], (T)p[0]))
/* The cheap binary ops of float32 specialize every loop variant (broadcast scalars included);
   int64 and float64, and the ops a division or a shift dominates, run in block functions
   (each variant costs the header's compile time). */
#define CT__BIN_LOOP_f32 CT__BIN_LOOP
#define CT__BIN_LOOP_f64 CT__BIN_LOOP_CALL
#define CT__BIN_LOOP_i64 CT__BIN_LOOP_CALL
#define CT__ARITH_LOOPS(E, T, S)                                                           \
    CT__BIN_LOOP_##S(add, T, S)                                                             \
    CT__BIN_LOOP_##S(sub, T, S)                                                             \
    CT__BIN_LOOP_##S(mul, T, S)                                                             \
    CT__BIN_LOOP_CALL(pow, T, S)                                                            \
    CT__BIN_LOOP_##S(maximum, T, S)                                                         \
    CT__BIN_LOOP_##S(minimum, T, S)                                                         \
    CT__UN_LOOP(neg, T, S)                                                                  \
    CT__UN_LOOP(abs, T, S)                                                                  \
    CT__UN_LOOP(relu, T, S)                                                                 \
    CT__UN_LOOP(square, T, S)                                                               \
    CT__UN_LOOP(sign, T, S)                                                                 \
    CT__UN_LOOP(clamp, T, S)                                                                \
    CT__UN_LOOP(pows, T, S)                                                                 \
    CT__TER_LOOP(addcmul, T, S)                                                             \
    CT__BIN_LOOP_CALL(div_trunc, T, S)                                                      \
    CT__BIN_LOOP_CALL(div_floor, T, S)                                                      \
    CT__BIN_LOOP_CALL(fmod, T, S)                                                           \
    CT__BIN_LOOP_CALL(remainder, T, S)                                                      \
    CT__BIN_LOOP_CALL(fmax, T, S)                                                           \
    CT__BIN_LOOP_CALL(fmin, T, S)
/* integer dtypes only: bitwise ops, the identity (also for bool) */
#define CT__BIT_LOOPS(E, T, S)                                                             \
    CT__BIN_LOOP_##S(bitand, T, S)                                                          \
    CT__BIN_LOOP_##S(bitor, T, S)                                                           \
    CT__BIN_LOOP_##S(bitxor, T, S)                                                          \
    CT__BIN_LOOP_CALL(lshift, T, S)                                                         \
    CT__BIN_LOOP_CALL(rshift, T, S)                                                         \
    CT__UN_LOOP(bitnot, T, S)                                                               \
    CT__UN_LOOP(ident, T, S)
#define CT__FLOAT_LOOPS(E, T, S)                                                           \
    CT__BIN_LOOP_##S(div, T, S)                                                             \
    CT__BIN_LOOP_##S(relu_bw, T, S)                                                         \
    CT__BIN_LOOP_##S(sigmoid_bw, T, S)                                                      \
    CT__BIN_LOOP_##S(tanh_bw, T, S)                                                         \
    CT__UN_LOOP_V(exp, T, S)                                                                \
    CT__UN_LOOP_V(log, T, S)                                                                \
    CT__UN_LOOP(log1p, T, S)                                                                \
    CT__UN_LOOP(sqrt, T, S)                                                                 \
    CT__UN_LOOP(rsqrt, T, S)                                                                \
    CT__UN_LOOP(sin, T, S)                                                                  \
    CT__UN_LOOP(cos, T, S)                                                                  \
    CT__UN_LOOP_V(sigmoid, T, S)                                                            \
    CT__UN_LOOP_V(tanh, T, S)                                                               \
    CT__UN_LOOP(reciprocal, T, S)                                                           \
    CT__UN_LOOP_V(erf, T, S)                                                                \
    CT__TER_LOOP(addcdiv, T, S)                                                             \
    CT__TER_LOOP(lerp, T, S)                                                                \
    CT__BIN_LOOP(lerps, T, S)                                                               \
    CT__BIN_LOOP_CALL(hypot, T, S)                                                          \
    CT__BIN_LOOP_CALL(atan2, T, S)                                                          \
    CT__BIN_LOOP_CALL(logaddexp, T, S)                                                      \
    CT__BIN_LOOP_CALL(logaddexp2, T, S)                                                     \
    CT__BIN_LOOP_CALL(xlogy, T, S)                                                          \
    CT__UN_LOOP(expm1, T, S)                                                                \
    CT__UN_LOOP(exp2, T, S)                                                                 \
    CT__UN_LOOP(log2, T, S)                                                                 \
    CT__UN_LOOP(log10, T, S)                                                                \
    CT__UN_LOOP(tan, T, S)                                                                  \
    CT__UN_LOOP(asin, T, S)                                                                 \
    CT__UN_LOOP(acos, T, S)                                                                 \
    CT__UN_LOOP(atan, T, S)                                                                 \
    CT__UN_LOOP(sinh, T, S)                                                                 \
    CT__UN_LOOP(cosh, T, S)                                                                 \
    CT__UN_LOOP(asinh, T, S)                                                                \
    CT__UN_LOOP(acosh, T, S)                                                                \
    CT__UN_LOOP(atanh, T, S)                                                                \
    CT__UN_LOOP(erfc, T, S)                                                                 \
    CT__UN_LOOP(erfinv, T, S)                                                               \
    CT__UN_LOOP(floor, T, S)                                                                \
    CT__UN_LOOP(ceil, T, S)                                                                 \
    CT__UN_LOOP(round, T, S)                                                                \
    CT__UN_LOOP(trunc, T, S)                                                                \
    CT__UN_LOOP(frac, T, S)                                                                 \
    CT__UN_LOOP(nan_to_num, T, S)                                                           \
    CT__UN_LOOP(logit, T, S)
/* out[i] = TEST(a[i]) as bool, TEST a classification macro of math.h (isnan ...) on the value
   as a double: exact for every dtype, and integers are never NaN nor infinite. */
#define CT__TEST_LOOP(NAME, TEST, T, S)                                                    \
    static void ct__loop_##NAME##_##S(char **d, const int64_t *s, int64_t n, const void *pp) \
    {                                                                                       \
        (void)pp;                                                                           \
        int64_t i = 0;                                                                      \
        if (s[0] == 1 && s[1] == (int64_t)sizeof(T)) {                                      \
            bool *o = (bool *)d[0];                                                         \
            const T *a = (const T *)d[1];                                                   \
            for (const int64_t nb = CT__WHOLE_BLOCKS(n); i < nb; i++) {                     \
                o[i] = TEST((double)a[i]);                                                  \
            }                                                                               \
        }                                                                                   \
        for (; i < n; i++) {                                                                \
            *(bool *)(d[0] + i * s[0]) = TEST((double)*(const T *)(d[1] + i * s[1]));      \
        }                                                                                   \
    }
#define CT__TEST_LOOPS(E, T, S)                                                            \
    CT__TEST_LOOP(isnan, isnan, T, S)                                                       \
    CT__TEST_LOOP(isinf, isinf, T, S)                                                       \
    CT__TEST_LOOP(isfinite, isfinite, T, S)                                                 \
    CT__TEST_LOOP(signbit, signbit, T, S)                                                   \
    CT__TEST_LOOP(isposinf, CT__ISPOSINF, T, S)                                             \
    CT__TEST_LOOP(isneginf, CT__ISNEGINF, T, S)                                             \
    CT__TEST_LOOP(isreal, CT__ISREAL, T, S)
/* The float dtypes have every test loop; the others test their value as a float64 (exact in
   sign and zero, never NaN nor infinite), except iszero (the integer division's check). */
#define CT__ISZERO(v) ((v) == 0)
#define CT__ISPOSINF(v) ((v) == INFINITY)
#define CT__ISNEGINF(v) ((v) == -INFINITY)
#define CT__ISREAL(v) ((void)(v), true) /* no complex dtypes */
#define CT__CMP_LOOPS(E, T, S)                                                             \
    CT__CMP_LOOP(eq, ==, T, S)                                                              \
    CT__CMP_LOOP(ne, !=, T, S)                                                              \
    CT__CMP_LOOP(lt, <, T, S)                                                               \
    CT__CMP_LOOP(le, <=, T, S)                                                              \
    CT__CMP_LOOP(gt, >, T, S)                                                               \
    CT__CMP_LOOP(ge, >=, T, S)
CT__FOR_WIDE_DTYPES(CT__ARITH_LOOPS)
CT__FOR_FLOAT_DTYPES(CT__FLOAT_LOOPS)
CT__FOR_WIDE_DTYPES(CT__CMP_LOOPS)
CT__FOR_FLOAT_DTYPES(CT__TEST_LOOPS)
#define CT__ISZERO_LOOP(E, T, S) CT__TEST_LOOP(iszero, CT__ISZERO, T, S)
CT__FOR_ALL_DTYPES(CT__ISZERO_LOOP)
#undef CT__ISZERO_LOOP
CT__UN_LOOP(ident, bool, b8)
CT__BIT_LOOPS(CT_INT64, int64_t, i64)

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

static void ct__loop_xor(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) =
            *(const bool *)(d[1] + i * s[1]) != *(const bool *)(d[2] + i * s[2]);
    }
}

static void ct__loop_not(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) = !*(const bool *)(d[1] + i * s[1]);
    }
}

/* where copies elements: one loop per element size */
#define CT__WHERE_LOOP(T, S)                                                               \
    static void ct__loop_where_##S(char **d, const int64_t *s, int64_t n, const void *pp)   \
    {                                                                                       \
        (void)pp;                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(T *)(d[0] + i * s[0]) = *(const bool *)(d[1] + i * s[1])                      \
                                          ? *(const T *)(d[2] + i * s[2])                   \
                                          : *(const T *)(d[3] + i * s[3]);                  \
        }                                                                                   \
    }
CT__WHERE_LOOP(uint8_t, 1)
CT__WHERE_LOOP(uint16_t, 2)
CT__WHERE_LOOP(uint32_t, 4)
CT__WHERE_LOOP(uint64_t, 8)

/* ---- loop tables: the per-element math of each op by dtype ------------------------------ */
/* Loop tables by dtype; the integer dtypes narrower than int64 have none (they compute in it). */
#define CT__L_NUM(FN)                                                                          \
    {NULL, NULL, NULL, NULL, NULL, NULL, ct__loop_##FN##_i64, ct__loop_##FN##_f32, \
     ct__loop_##FN##_f64}
#define CT__L_FLT(FN)                                                                          \
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, ct__loop_##FN##_f32, ct__loop_##FN##_f64}
#define CT__L_ALL(FN)                                                                          \
    {NULL, ct__loop_##FN##_b8, ct__loop_##FN##_u8, ct__loop_##FN##_i8, ct__loop_##FN##_i16,   \
     ct__loop_##FN##_i32, ct__loop_##FN##_i64, ct__loop_##FN##_f32, ct__loop_##FN##_f64}
#define CT__L_BOOL(F) {NULL, F, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
/* integer dtypes (bool: B) */
#define CT__L_INT(FN, B)                                                                       \
    {NULL, B, NULL, NULL, NULL, NULL, ct__loop_##FN##_i64, NULL, NULL}
/* the identity on integer dtypes (bool: B), FN on floats */
#define CT__L_IDENT(FN, B)                                                                     \
    {NULL, B, NULL, NULL, NULL, NULL, ct__loop_ident_i64, ct__loop_##FN##_f32,      \
     ct__loop_##FN##_f64}
/* Kernel tables of integer dtypes, laid out as the CT__K_* macros of internal.h: without bool
   (shifts) and with it (bitwise and/or/xor/not). */
#define CT__K_INT(K) {NULL, NULL, K, K, K, K, K, NULL, NULL}
#define CT__K_INT_BOOL(K) {NULL, K, K, K, K, K, K, NULL, NULL}
static const ct_loop_fn ct__loops_iszero[CT_DTYPE_COUNT] = CT__L_ALL(iszero);

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
   when the dtype matches). CPU tensors only: the kernels' own conversion. */
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
    if (bop == CT__AND || bop == CT__OR || bop == CT__XOR) {
        *compute = CT_BOOL;
        *result = CT_BOOL;
    } else if (ct__is_cmp(bop)) {
        *compute = rt;
        *result = CT_BOOL;
    } else { /* bool arithmetic runs in uint8 (see ct__binop) */
        bool u8 = bop <= CT__MINIMUM || (bop >= CT__FMAX && bop <= CT__BITXOR);
        *compute = rt == CT_BOOL && u8 ? CT_UINT8 : rt;
        *result = rt;
    }
    return true;
}

/* PyTorch's checks of add/sub's alpha (attribute 0) for result dtype rt: an integral (or
   bool) result takes only an integral alpha, and alpha must convert to rt without overflow.
   Replaces a bool result's alpha by alpha != 0 (bool arithmetic runs in uint8). */
static bool ct__check_alpha(ct_op_call *c, ct_dtype rt)
{
    if (c->n_attrs == 0 || c->op->variant > CT__SUB) {
        return true;
    }
    double *alpha = &c->attrs[0].f;
    if (!ct_dtype_is_floating_point(rt) && *alpha != floor(*alpha)) {
        ct__fail(CT_ERR_VALUE, c->fn, "For integral input tensors, argument alpha must not be a "
                 "floating point number.");
        return false;
    }
    if (!ct__check_scalar(c->fn, *alpha, rt)) {
        return false;
    }
    *alpha = rt == CT_BOOL ? (double)(*alpha != 0) : *alpha;
    return true;
}

/* Fails unless shape is self's: an in-place op cannot grow its output. */
static bool ct__check_inplace_shape(const char *op, const ct_tensor *self, const int64_t *shape,
                                    int nd)
{
    if (nd == self->ndim && memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd) == 0) {
        return true;
    }
    char a[160], b[160];
    ct__fail(CT_ERR_SHAPE, op, "output with shape %s doesn't match the broadcast shape %s",
             ct__shape_str(self->sizes, self->ndim, a, sizeof a),
             ct__shape_str(shape, nd, b, sizeof b));
    return false;
}

/* An in-place op writing a result of dtype rt into self (c->inputs[0]), the first of n
   inputs: self must hold rt; self becomes the output; when the derivative reads the old self
   (save bit 0) and autograd will record, a copy of it goes to c->state (the public function
   releases it). */
static bool ct__inplace_output(ct_op_call *c, ct_dtype rt, int n)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    if (!ct_can_cast(rt, self->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "result type %s can't be cast to the desired output type %s",
                 ct__dtype_title(rt), ct__dtype_title(self->dtype));
        return false;
    }
    c->outputs[c->n_outputs++] = self;
    if ((c->op->save & 1u) && ct_dtype_is_floating_point(self->dtype) &&
        ct__any_requires_grad(c->inputs, n)) {
        c->state = ct__tensor_new(c->fn, self->sizes, self->ndim, self->dtype);
        if (!c->state) {
            return false;
        }
        ct__copy_kernel((ct_tensor *)c->state, self);
    }
    return true;
}

CT__GLUE_BEGIN
/* Meta of a binary op (inputs self, other; attribute 0: alpha): broadcast shape, PyTorch's
   promotion; an in-place op checks that self can hold the result and saves the old self
   for a backward that reads it (c->state: the clone). */
static bool ct__binary_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct__binop bop = (ct__binop)c->op->variant;
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    ct_dtype rt, ct;
    if (!ct__broadcast_shapes(c->fn, a->sizes, a->ndim, b->sizes, b->ndim, shape, &nd) ||
        !ct__binary_dtypes(c->fn, bop, a, b, &rt, &ct) || !ct__check_alpha(c, rt)) {
        return false;
    }
    c->dtype = ct;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, shape, nd, rt) != NULL;
    }
    return ct__check_inplace_shape(c->fn, a, shape, nd) && ct__inplace_output(c, rt, 2);
}
CT__GLUE_END

/* The dtype c's loop runs in: the compute dtype c->dtype; where the op has no loop for it, int64
   (bool, uint8, int8, int16, int32: CT__FOR_WIDE_DTYPES), else float64 (the value tests). */
static ct_dtype ct__loop_dtype(const ct_op_call *c)
{
    const ct_loop_fn *loops = c->op->loops;
    return loops[c->dtype] ? c->dtype : loops[CT_INT64] ? CT_INT64 : CT_FLOAT64;
}

/* Runs c's loop over the inputs (cast to the loop's dtype) into out, which has that dtype (or
   bool for comparisons). */
static bool ct__run_loop(const ct_op_call *c, ct_tensor *out)
{
    double params[3] = {0, 0, 0};
    for (int k = 0; k < c->n_attrs && k < 3; k++) {
        params[k] = c->attrs[k].f;
    }
    ct_dtype ld = ct__loop_dtype(c);
    ct_tensor *cast[CT__ITER_MAX_OPS];
    bool ok = true;
    for (int k = 0; k < c->n_inputs; k++) { /* through c->dtype: a wrapped scalar wraps there */
        cast[k] = ok ? ct__cast(c->inputs[k], c->dtype) : NULL;
        if (cast[k] && ld != c->dtype) {
            ct_tensor *w = ct__cast(cast[k], ld);
            ct__release(cast[k]);
            cast[k] = w;
        }
        ok = ok && cast[k];
    }
    if (ok) {
        ct__iter it;
        ct__iter_build(&it, out, (const ct_tensor *const *)cast, c->n_inputs);
        ct__iter_run(&it, c->op->loops[ld], params);
    }
    for (int k = 0; k < c->n_inputs; k++) {
        ct__release(cast[k]);
    }
    return ok;
}

/* The CPU kernel of unary and binary pointwise ops. The loop writes its dtype (comparisons:
   bool) into the output, or into a temporary the output converts from (bool arithmetic runs
   in uint8, narrower integers in int64; an in-place op on a narrower self). */
static ct_status ct__pointwise_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    bool cmp = c->n_inputs == 2 && ct__is_cmp((ct__binop)c->op->variant);
    ct_dtype ld = ct__loop_dtype(c);
    if (out->dtype == ld || cmp) {
        return ct__run_loop(c, out) ? CT_OK : CT_ERR_OOM;
    }
    ct_tensor *tmp = ct__tensor_new(c->fn, out->sizes, out->ndim, ld);
    bool ok = tmp && ct__run_loop(c, tmp);
    if (ok) {
        ct__copy_kernel(out, tmp);
    }
    ct__release(tmp);
    return ok ? CT_OK : CT_ERR_OOM;
}

/* The CPU kernel of ops whose loop writes bool from the input's dtype (isnan ...). */
static ct_status ct__bool_out_kernel(ct_op_call *c)
{
    return ct__run_loop(c, c->outputs[0]) ? CT_OK : CT_ERR_OOM;
}

/* The CPU kernel of integer divisions (div with a rounding mode, floor_divide, fmod,
   remainder): an integer division by zero is PyTorch's error (checked on the divisor in the
   compute dtype, as a wrapped scalar converts). */
static ct_status ct__int_div_kernel(ct_op_call *c)
{
    if (!ct_dtype_is_floating_point(c->dtype)) {
        ct_tensor *b = ct__cast(c->inputs[1], c->dtype);
        ct_tensor *zero = b ? ct__tensor_new(c->fn, b->sizes, b->ndim, CT_BOOL) : NULL;
        bool any = true;
        if (zero) {
            const ct_tensor *in = b;
            ct__iter it;
            ct__iter_build(&it, zero, &in, 1);
            ct__iter_run(&it, ct__loops_iszero[b->dtype], NULL);
            any = memchr(ct__data(zero), 1, (size_t)ct_numel(zero)) != NULL;
        }
        ct__release(zero);
        ct__release(b);
        if (!zero) {
            return CT_ERR_OOM;
        }
        if (any) {
            return ct__fail(CT_ERR_VALUE, c->fn, "ZeroDivisionError");
        }
    }
    return ct__pointwise_kernel(c);
}

/* float16/bfloat16 add, sub, mul, div, relu and its backward (the hottest ops; the others
   take the dispatcher's float32 path, with the same bits): blocks of the one or two operands
   in float32 (half inputs converted, float32 ones read in place: other dtypes are cast to
   float32 first, as PyTorch's CPU kernels read a wrapped scalar), the op's float32 loop, the
   result rounded once per element into the half output. */
typedef struct ct__half_job {
    ct_dtype out, in[2]; /* the output's half dtype; each input's (that half dtype or float32) */
    int nin;
    ct_loop_fn f32;
    const double *params;
} ct__half_job;

static void ct__loop_half(char **d, const int64_t *s, int64_t n, const void *p)
{
    const ct__half_job *h = (const ct__half_job *)p;
    float buf[3][CT__HALF_BLOCK];
    for (int64_t i = 0; i < n; i += CT__HALF_BLOCK) {
        int64_t m = n - i < CT__HALF_BLOCK ? n - i : CT__HALF_BLOCK;
        char *ptr[3] = {(char *)buf[0], NULL, NULL};
        int64_t st[3] = {4, 0, 0};
        for (int k = 1; k <= h->nin; k++) {
            ptr[k] = d[k] + i * s[k];
            st[k] = s[k];
            if (ct__is_half(h->in[k - 1])) { /* a broadcast operand (stride 0): one value */
                ct__half_to_float_n(h->in[k - 1], ptr[k], s[k], buf[k], s[k] ? m : 1);
                ptr[k] = (char *)buf[k];
                st[k] = s[k] ? 4 : 0;
            }
        }
        h->f32(ptr, st, m, h->params);
        ct__float_to_half_n(h->out, buf[0], d[0] + i * s[0], s[0], m);
    }
}

static ct_status ct__half_pointwise_kernel(ct_op_call *c)
{
    double params[2] = {c->n_attrs > 0 ? c->attrs[0].f : 0, 0};
    ct_tensor *cast[2] = {NULL, NULL};
    int nin = c->n_inputs;
    bool ok = true;
    for (int k = 0; k < nin; k++) {
        const ct_tensor *t = c->inputs[k];
        cast[k] = ok ? ct__cast(t, t->dtype == c->dtype ? t->dtype : CT_FLOAT32) : NULL;
        ok = ok && cast[k];
    }
    if (ok) {
        ct__half_job job = {c->dtype, {cast[0]->dtype, nin > 1 ? cast[1]->dtype : CT_FLOAT32},
                            nin, c->op->loops[CT_FLOAT32], params};
        ct__iter it;
        ct__iter_build(&it, c->outputs[0], (const ct_tensor *const *)cast, nin);
        ct__iter_run(&it, ct__loop_half, &job);
    }
    ct__release(cast[0]);
    ct__release(cast[1]);
    return ok ? CT_OK : CT_ERR_OOM;
}

CT__GLUE_BEGIN
/* In-place unary ops whose derivative reads the input save the old self (the copy meta
   made) and their scalar attributes (clamp_'s bounds, pow_'s exponent). */
static void ct__unary_inplace_record(ct_node *n, const ct_op_call *c)
{
    for (int k = 0; k < c->n_attrs && k < 4; k++) {
        n->f[k] = c->attrs[k].f;
    }
    ct__save(n, (const ct_tensor *)c->state);
}

/* In-place binary ops save the old self (the clone meta made), then other. */
static void ct__binary_inplace_record(ct_node *n, const ct_op_call *c)
{
    n->f[0] = c->n_attrs ? c->attrs[0].f : 1.0;
    ct__save(n, (const ct_tensor *)c->state);
    ct__save(n, (c->op->save & 2u) ? c->inputs[1] : NULL);
    ct__save(n, NULL);
}

/* ---- derivative formulas ------------------------------------------------------------- */
static ct_tensor *ct__threshold_bw(const ct_tensor *g, const ct_tensor *y);
static ct_tensor *ct__sigmoid_bw(const ct_tensor *g, const ct_tensor *y);
static ct_tensor *ct__tanh_bw(const ct_tensor *g, const ct_tensor *y);
static ct_tensor *ct__transfer(const ct_tensor *src, ct_device device);
static ct_tensor *ct__ge_scalar(const ct_tensor *x, double v);
static ct_tensor *ct__le_scalar(const ct_tensor *x, double v);

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

/* The gradient goes to the selected input; ties split it evenly, as PyTorch. */
static void ct__minmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi, bool is_max)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
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

static void ct__zeros_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* piecewise constant (rounded quotients, floor, sign ...): PyTorch's zero gradients */
    for (int k = 0; k < n->n_next; k++) {
        if (ct__needs_grad(n, k)) {
            gi[k] = ct_zeros_like(g);
        }
    }
}

static void ct__maximum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__minmax_backward(n, g, gi, true);
}

static void ct__minimum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__minmax_backward(n, g, gi, false);
}

static void ct__relu_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__threshold_bw(g, ct__saved(n, 1));
    }
}

static void ct__sigmoid_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__sigmoid_bw(g, y);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*y*(1-y)] = go*(1-2y) */
        gi[1] = ct_mul(ct_mul(g, go), ct_add_scalar(ct_mul_scalar(y, -2.0), 1.0));
    }
}

static void ct__tanh_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__tanh_bw(g, y);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*(1-y^2)] = -2*go*y */
        gi[1] = ct_mul(ct_mul(g, go), ct_mul_scalar(y, -2.0));
    }
}

static void ct__neg_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_neg(g);
}

static void ct__abs_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_sign(ct__saved(n, 0)));
}

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
    gi[0] = ct__sigmoid_bw(g, ct__saved(n, 1));
}

static void ct__tanh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__tanh_bw(g, ct__saved(n, 1));
}

static void ct__relu_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__threshold_bw(g, ct__saved(n, 1));
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
    ct_tensor *lo = ct__ge_scalar(x, n->f[0]), *hi = ct__le_scalar(x, n->f[1]);
    gi[0] = ct_where(ct_logical_and(lo, hi), g, ct_zeros_like(g));
}

static void ct__erf_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * 2/sqrt(pi) * exp(-x^2) */
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = ct_mul(g, ct_mul_scalar(ct_exp(ct_neg(ct_square(x))), 1.1283791670955126));
}

static void ct__pows_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * p * x^(p-1); 0 when p == 0 */
    double p = n->f[0];
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = p == 0 ? ct_zeros_like(g) : ct_mul(g, ct_mul_scalar(ct_pow_scalar(x, p - 1), p));
}

/* ---- derivative formulas of issue 7's second slice (PyTorch's derivatives.yaml) ------------ */
static void ct__expm1_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * (out + 1) */
    gi[0] = ct_mul(g, ct_add_scalar(ct__saved(n, 1), 1.0));
}

static void ct__exp2_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * out * ln 2 */
    gi[0] = ct_mul(g, ct_mul_scalar(ct__saved(n, 1), 0.6931471805599453));
}

static void ct__log2_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / (x ln 2) */
    gi[0] = ct_div(g, ct_mul_scalar(ct__saved(n, 0), 0.6931471805599453));
}

static void ct__log10_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / (x ln 10) */
    gi[0] = ct_div(g, ct_mul_scalar(ct__saved(n, 0), 2.302585092994046));
}

static void ct__tan_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * (1 + out^2) */
    gi[0] = ct_mul(g, ct_add_scalar(ct_square(ct__saved(n, 1)), 1.0));
}

/* 1 - x^2 */
static ct_tensor *ct__one_minus_sq(const ct_tensor *x)
{
    return ct_add_scalar(ct_neg(ct_square(x)), 1.0);
}

static void ct__asin_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / sqrt(1 - x^2) */
    gi[0] = ct_mul(g, ct_rsqrt(ct__one_minus_sq(ct__saved(n, 0))));
}

static void ct__acos_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* -g / sqrt(1 - x^2) */
    gi[0] = ct_neg(ct_mul(g, ct_rsqrt(ct__one_minus_sq(ct__saved(n, 0)))));
}

static void ct__atan_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / (1 + x^2) */
    gi[0] = ct_div(g, ct_add_scalar(ct_square(ct__saved(n, 0)), 1.0));
}

static void ct__sinh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_cosh(ct__saved(n, 0)));
}

static void ct__cosh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_sinh(ct__saved(n, 0)));
}

static void ct__asinh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / sqrt(x^2 + 1) */
    gi[0] = ct_mul(g, ct_rsqrt(ct_add_scalar(ct_square(ct__saved(n, 0)), 1.0)));
}

static void ct__acosh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / sqrt(x^2 - 1) */
    gi[0] = ct_mul(g, ct_rsqrt(ct_add_scalar(ct_square(ct__saved(n, 0)), -1.0)));
}

static void ct__atanh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / (1 - x^2) */
    gi[0] = ct_div(g, ct__one_minus_sq(ct__saved(n, 0)));
}

static void ct__erfc_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* -g * 2/sqrt(pi) * exp(-x^2) */
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = ct_mul(g, ct_mul_scalar(ct_exp(ct_neg(ct_square(x))), -1.1283791670955126));
}

static void ct__erfinv_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * sqrt(pi)/2 * exp(out^2) */
    gi[0] = ct_mul(g, ct_mul_scalar(ct_exp(ct_square(ct__saved(n, 1))), 0.88622692545275801));
}

static void ct__nan_to_num_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g where x is finite, else 0 */
    gi[0] = ct_mul(g, ct_isfinite(ct__saved(n, 0)));
}

static void ct__logit_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g / (x (1 - x)); outside [eps, 1 - eps] 0, or without eps (f[0] < 0) NaN outside [0, 1] */
    const ct_tensor *x = ct__saved(n, 0);
    double eps = n->f[0], lo = eps < 0 ? 0 : eps;
    ct_tensor *d = ct_div(g, ct_mul(x, ct_add_scalar(ct_neg(x), 1.0)));
    ct_tensor *outside = ct_logical_or(ct_lt_scalar(x, lo), ct_gt_scalar(x, 1.0 - lo));
    gi[0] = ct_where(outside, ct_full_like(d, eps < 0 ? (double)NAN : 0.0), d);
}

static void ct__hypot_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* d/da hypot(a, b) = a / out, d/db = b / out (PyTorch: grad * self / result) */
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1), *out = ct__saved(n, 2);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_div(ct_mul(g, a), out);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_div(ct_mul(g, b), out);
    }
}

static void ct__atan2_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * b / (a^2 + b^2), -g * a / (a^2 + b^2) */
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    ct_tensor *r = ct_reciprocal(ct_add(ct_square(a), ct_square(b)));
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_mul(ct_mul(g, b), r);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul(ct_mul(g, ct_neg(a)), r);
    }
}

/* logaddexp (base e) and logaddexp2: g / (1 + base^(b - a)), g / (1 + base^(a - b)) */
static void ct__logaddexp_backward_base(ct_node *n, const ct_tensor *g, ct_tensor **gi, bool two)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    for (int k = 0; k < 2; k++) {
        if (ct__needs_grad(n, k)) {
            ct_tensor *d = k == 0 ? ct_sub(b, a) : ct_sub(a, b);
            gi[k] = ct_div(g, ct_add_scalar(two ? ct_exp2(d) : ct_exp(d), 1.0));
        }
    }
}

static void ct__logaddexp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__logaddexp_backward_base(n, g, gi, false);
}

static void ct__logaddexp2_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__logaddexp_backward_base(n, g, gi, true);
}

static void ct__xlogy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* xlogy(g, b), 0 where a == 0 and b <= 0; g * a / b */
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        ct_tensor *d = ct_xlogy(g, b);
        ct_tensor *zero = ct_logical_and(ct_eq_scalar(a, 0.0), ct_le(b, ct_zeros_like(b)));
        gi[0] = ct_where(zero, ct_zeros_like(d), d);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_div(ct_mul(g, a), b);
    }
}

/* fmod and remainder: g, and -g * (a / b rounded toward zero (fmod) or -inf (remainder)) */
static void ct__mod_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi, ct_rounding_mode m)
{
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_neg(ct_mul(g, ct_div_mode(ct__saved(n, 0), ct__saved(n, 1), m)));
    }
}

static void ct__fmod_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__mod_backward(n, g, gi, CT_ROUNDING_TRUNC);
}

static void ct__remainder_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__mod_backward(n, g, gi, CT_ROUNDING_FLOOR);
}

/* fmax/fmin: the gradient goes to a where it was chosen (a >= b (fmax) or a <= b (fmin), or b
   is NaN), else to b; no split on ties, as PyTorch */
static void ct__fminmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi, bool is_max)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    ct_tensor *a_wins = ct_logical_or(is_max ? ct_ge(a, b) : ct_le(a, b), ct_isnan(b));
    ct_tensor *zero = ct_zeros_like(g);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_where(a_wins, g, zero);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_where(a_wins, zero, g);
    }
}

static void ct__fmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__fminmax_backward(n, g, gi, true);
}

static void ct__fmin_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__fminmax_backward(n, g, gi, false);
}

/* ---- unary meta ---------------------------------------------------------------------------- */
/* The compute dtype of a unary op over dt. Ops whose loops are float-only compute integer
   (and bool) inputs in the default float dtype; the others keep the input's dtype (bool: no
   kernel, PyTorch's "not implemented"). logical_not converts its input to bool. clamp on
   integers with integral bounds (c->state set) keeps the dtype, its bounds saturated to the
   dtype's range; a scalar power of an integer keeps it for an integral exponent (bool: int64). */
static ct_dtype ct__unary_dtype(ct_op_call *c, ct_dtype dt)
{
    ct__unop op = (ct__unop)c->op->variant;
    if (op == CT__NOT) {
        return CT_BOOL;
    }
    if (ct_dtype_is_floating_point(dt) || op == CT__FRAC) { /* frac: no integer kernel */
        return dt;
    }
    if (op == CT__CLAMP && dt != CT_BOOL && c->state) {
        c->attrs[0].f = ct__scalar_fits(c->attrs[0].f, dt) ? c->attrs[0].f : -INFINITY;
        c->attrs[1].f = ct__scalar_fits(c->attrs[1].f, dt) ? c->attrs[1].f : INFINITY;
        return dt;
    }
    if (op == CT__POWS && c->attrs[0].f == floor(c->attrs[0].f) && fabs(c->attrs[0].f) < 9.2e18) {
        return dt == CT_BOOL ? CT_INT64 : dt;
    }
    const ct_loop_fn *loops = c->op->loops;
    return op == CT__CLAMP || op == CT__POWS || (!loops[CT_INT64] && loops[CT_FLOAT32])
               ? ct_get_default_dtype() : dt;
}

/* Meta of unary ops: the input's shape, ct__unary_dtype; in-place forms write into self. */
static bool ct__unary_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    ct_dtype dt = ct__unary_dtype(c, a->dtype);
    c->dtype = dt;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, a->sizes, a->ndim, dt) != NULL;
    }
    return ct__inplace_output(c, dt, 1);
}

/* Meta of isnan/isinf/isfinite: a bool tensor of the input's shape; the loop reads the
   input's own dtype. */
static bool ct__test_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    c->dtype = a->dtype;
    return ct__op_output(c, a->sizes, a->ndim, CT_BOOL) != NULL;
}

/* ---- addcmul, addcdiv ---------------------------------------------------------------------- */
/* input + value * tensor1 * tensor2 (addcmul), input + value * tensor1 / tensor2 (addcdiv) */
static void ct__addcmul_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 1), *b = ct__saved(n, 2);
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul(g, ct_mul_scalar(b, n->f[0]));
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_mul(g, ct_mul_scalar(a, n->f[0]));
    }
}

static void ct__addcdiv_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 1), *b = ct__saved(n, 2);
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) { /* g * value / b */
        gi[1] = ct_mul(g, ct_div(ct_full_like(b, n->f[0]), b));
    }
    if (ct__needs_grad(n, 2)) { /* -g * value * a / b^2 */
        gi[2] = ct_mul(ct_mul_scalar(g, -n->f[0]), ct_div(a, ct_mul(b, b)));
    }
}

/* Meta of addcmul/addcdiv (inputs self, tensor1, tensor2; attribute 0: value): the three
   broadcast, promoted as one op; value must fit an integral result (it is truncated to it,
   as PyTorch). addcdiv of two integral tensors is PyTorch's error. */
static bool ct__addc_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *a = c->inputs[1], *b = c->inputs[2];
    int64_t s1[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int n1 = 0, nd = 0;
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, a->sizes, a->ndim, s1, &n1) ||
        !ct__broadcast_shapes(c->fn, s1, n1, b->sizes, b->ndim, shape, &nd)) {
        return false;
    }
    if (c->op->variant == CT__ADDCDIV && !ct_dtype_is_floating_point(a->dtype) &&
        !ct_dtype_is_floating_point(b->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "Integer division with addcdiv is no longer supported, and "
                 "in a future  release addcdiv will perform a true division of tensor1 and "
                 "tensor2. The historic addcdiv behavior can be implemented as (input + value * "
                 "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                 "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                 "behavior is just the latter implementation: (input + value * tensor1 / "
                 "tensor2), for all dtypes.");
        return false;
    }
    ct_dtype rt = ct__result_type(c->inputs, 3);
    if (!ct_dtype_is_floating_point(rt) && !ct__check_scalar(c->fn, c->attrs[0].f, rt)) {
        return false;
    }
    c->dtype = rt;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, shape, nd, rt) != NULL;
    }
    return ct__check_inplace_shape(c->fn, self, shape, nd) && ct__inplace_output(c, rt, 3);
}

/* ---- lerp ----------------------------------------------------------------------------------- */
static void ct__lerp_scalar_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_mul_scalar(g, 1.0 - n->f[0]);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul_scalar(g, n->f[0]);
    }
}

static void ct__lerp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *e = ct__saved(n, 1), *w = ct__saved(n, 2);
    if (ct__needs_grad(n, 0)) { /* g * (1 - weight) */
        gi[0] = ct_mul(g, ct_add_scalar(ct_neg(w), 1.0));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul(g, w);
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_mul(g, ct_sub(e, x));
    }
}

/* lerp_ with a tensor weight saves the old self (meta's copy), end and weight. */
static void ct__lerp_inplace_record(ct_node *n, const ct_op_call *c)
{
    ct__save(n, (const ct_tensor *)c->state);
    ct__save(n, c->inputs[1]);
    ct__save(n, c->inputs[2]);
}

/* The name PyTorch's lerp gives a dtype in its messages (C++'s type name). */
static const char *ct__type_name(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "default", "bool", "unsigned char", "signed char", "short int", "int", "long int",
        "float", "double", "c10::Half", "c10::BFloat16"};
    return names[d];
}

/* Meta of lerp (inputs self, end and, for lerp.Tensor, weight; lerp.Scalar: attribute 0):
   all broadcast, end and weight of self's dtype (PyTorch does not promote here). */
static bool ct__lerp_meta(ct_op_call *c)
{
    static const char *const names[3] = {"self", "end", "weight"};
    const ct_tensor *self = c->inputs[0];
    int64_t shape[CT_MAX_DIMS];
    int nd = self->ndim;
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)nd);
    for (int k = 1; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        int64_t s[CT_MAX_DIMS];
        int ns = 0;
        if (t->dtype != self->dtype) {
            ct__fail(CT_ERR_DTYPE, c->fn, "expected dtype %s for `%s` but got dtype %s",
                     ct__type_name(self->dtype), names[k], ct__type_name(t->dtype));
            return false;
        }
        if (!ct__broadcast_shapes(c->fn, shape, nd, t->sizes, t->ndim, s, &ns)) {
            return false;
        }
        memcpy(shape, s, sizeof(int64_t) * (size_t)ns);
        nd = ns;
    }
    c->dtype = self->dtype;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, shape, nd, self->dtype) != NULL;
    }
    return ct__check_inplace_shape(c->fn, self, shape, nd) &&
           ct__inplace_output(c, self->dtype, c->n_inputs);
}

/* ---- where ------------------------------------------------------------------------------- */
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

static bool ct__where_meta(ct_op_call *c)
{
    const ct_tensor *cond = c->inputs[0], *a = c->inputs[1], *b = c->inputs[2];
    if (cond->dtype != CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "where expected condition to be a boolean tensor, but got "
                 "a tensor with dtype %s", ct__dtype_title(cond->dtype));
        return false;
    }
    int64_t s1[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int n1 = 0, nd = 0;
    if (!ct__broadcast_shapes(c->fn, cond->sizes, cond->ndim, a->sizes, a->ndim, s1, &n1) ||
        !ct__broadcast_shapes(c->fn, s1, n1, b->sizes, b->ndim, shape, &nd)) {
        return false;
    }
    c->dtype = ct__result_type(c->inputs + 1, 2);
    return ct__op_output(c, shape, nd, c->dtype) != NULL;
}
CT__GLUE_END

static ct_status ct__where_kernel(ct_op_call *c)
{
    ct_tensor *ca = ct__cast(c->inputs[1], c->dtype), *cb = ct__cast(c->inputs[2], c->dtype);
    if (ca && cb) {
        const ct_tensor *ins[3] = {c->inputs[0], ca, cb};
        ct__iter it;
        ct__iter_build(&it, c->outputs[0], ins, 3);
        ct__iter_run(&it, c->op->loops[c->dtype], NULL);
    }
    ct_status st = ca && cb ? CT_OK : CT_ERR_OOM;
    ct__release(ca);
    ct__release(cb);
    return st;
}

CT__GLUE_BEGIN
/* ---- fill, copy, clone, conversions --------------------------------------------------------- */
static bool ct__fill_meta(ct_op_call *c)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    if (!ct__check_scalar(c->fn, c->attrs[0].f, self->dtype)) {
        return false;
    }
    c->dtype = self->dtype;
    c->outputs[c->n_outputs++] = self;
    return true;
}
CT__GLUE_END

static ct_status ct__fill_kernel(ct_op_call *c)
{
    ct_tensor *self = c->outputs[0];
    ct_tensor *s = ct__tensor_new(c->fn, NULL, 0, self->dtype);
    if (!s) {
        return CT_ERR_OOM;
    }
    ct__store_f64(ct__data(s), s->dtype, c->attrs[0].f);
    ct__copy_kernel(self, s);
    ct__release(s);
    return CT_OK;
}

CT__GLUE_BEGIN
static void ct__fill_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    (void)g;
    gi[0] = NULL; /* the old value gets no gradient */
}

/* copy_'s call: its inputs, where src is replaced by its copy on self's device when it is on
   another one (c->state points here). */
typedef struct ct__copy_state {
    const ct_tensor *in[2];
    ct_tensor *moved; /* src on self's device (an unscoped reference), or NULL */
} ct__copy_state;

static bool ct__same_device(ct_device a, ct_device b)
{
    return a.type == b.type && a.index == b.index;
}

static bool ct__copy_meta(ct_op_call *c)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    const ct_tensor *src = c->inputs[1];
    if (!ct__same_device(src->storage->device, self->storage->device)) {
        ct__copy_state *s = (ct__copy_state *)c->state; /* src comes over first, recorded */
        s->moved = ct__transfer(src, self->storage->device);
        if (!s->moved) {
            return false;
        }
        src = s->in[1] = s->moved;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, src->sizes, src->ndim, shape,
                              &nd) ||
        !ct__check_inplace_shape(c->fn, self, shape, nd)) {
        return false;
    }
    c->dtype = self->dtype;
    c->outputs[c->n_outputs++] = self;
    return true;
}
CT__GLUE_END

static ct_status ct__copy_cpu_kernel(ct_op_call *c)
{
    ct__copy_kernel(c->outputs[0], c->inputs[1]);
    return CT_OK;
}

CT__GLUE_BEGIN
/* copy_: self's old values get a zero gradient (PyTorch: zeros_like(grad)), src the
   gradient. */
static void ct__copy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_zeros_like(g);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = (ct_tensor *)(uintptr_t)g; /* the engine sums to src's shape and casts */
    }
}

/* Output of a copy: the input's shape and dtype (clone), or the dtype attribute (to). */
static bool ct__same_shape_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    c->dtype = a->dtype;
    ct_dtype out = c->n_attrs ? (ct_dtype)c->attrs[0].i : a->dtype;
    return ct__op_output(c, a->sizes, a->ndim, out) != NULL;
}
CT__GLUE_END

static ct_status ct__copy_to_output_kernel(ct_op_call *c)
{
    ct__copy_kernel(c->outputs[0], c->inputs[0]);
    return CT_OK;
}

/* ---- devices ------------------------------------------------------------------------------ */
CT__GLUE_BEGIN
/* _to_copy to a device: attrs (device type, device index); the input's shape and dtype. */
static bool ct__to_device_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    c->dtype = a->dtype;
    c->device = ct_make_device((ct_device_type)c->attrs[0].i, (int)c->attrs[1].i);
    return ct__op_output(c, a->sizes, a->ndim, a->dtype) != NULL;
}
CT__GLUE_END

/* Moves the bytes of the input, made contiguous on its device, into the output through the
   backends' copy (the target's, or the source's when the target is the CPU); between two
   backends, through the host. Runs on any device pair: the descriptor's composite. */
static ct_status ct__to_device_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    size_t nbytes = ct_nbytes(out);
    if (nbytes == 0) {
        return CT_OK;
    }
    ct_no_grad_begin();
    ct_scope_begin();
    const ct_tensor *src = ct_contiguous(c->inputs[0]);
    ct_device from = c->inputs[0]->storage->device, to = out->storage->device;
    if (src && from.type != CT_CPU && to.type != CT_CPU && from.type != to.type) {
        src = ct_to_device(src, ct_device_cpu());
        from = ct_device_cpu();
    }
    ct_status st = src ? CT_OK : ct_error_code();
    if (src) {
        const ct_backend *b = ct__backend(to.type != CT_CPU ? to.type : from.type);
        st = b->copy(b->user, ct__data(out), to, ct__data(src), from, nbytes);
        if (st != CT_OK) {
            char a[32], d[32];
            ct__fail(st, c->fn, "the %s backend failed to copy %zu bytes from %s to %s",
                     b->name, nbytes, ct__device_str(from, a, sizeof a),
                     ct__device_str(to, d, sizeof d));
        }
    }
    ct_scope_end();
    ct_no_grad_end();
    return st;
}

CT__GLUE_BEGIN
/* _pin_memory: a CPU input; the output in page-locked memory of the backend that has it. */
static bool ct__pin_memory_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    const ct_backend *pin = ct__pin_backend();
    char d[32];
    if (a->storage->device.type != CT_CPU) {
        ct__fail(CT_ERR_DEVICE, c->fn, "cannot pin a tensor on %s: only dense CPU tensors can "
                 "be pinned", ct__device_str(a->storage->device, d, sizeof d));
        return false;
    }
    if (!pin) {
        ct__fail(CT_ERR_DEVICE, c->fn, "Found no accelerator on your system: pinned memory "
                 "comes from a registered backend with host_alloc (ct_cuda_init)");
        return false;
    }
    c->dtype = a->dtype;
    ct_tensor *t = ct__tensor_new_pinned(c->fn, a->sizes, a->ndim, a->dtype, pin);
    if (t) {
        c->outputs[c->n_outputs++] = t;
    }
    return t != NULL;
}

/* The source's device, for the backward. */
static void ct__to_device_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->inputs[0]->storage->device.type;
    n->i[1] = c->inputs[0]->storage->device.index;
}

/* The gradient goes back to the source's device. */
static void ct__to_device_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__transfer(g, ct_make_device((ct_device_type)n->i[0], (int)n->i[1]));
    if (gi[0]) {
        gi[0] = ct__scoped(gi[0]); /* ct__transfer returned an unscoped reference */
    }
}


/* ---- descriptors ----------------------------------------------------------------------------- */
#define CT__SAVE_IN(k) (1u << (k))
#define CT__SAVE_OUT(k) (1u << (8 + (k)))
#define CT__BINARY_SCHEMA(N, EXTRA) N ".Tensor(Tensor self, Tensor other" EXTRA ") -> Tensor"

static const ct_loop_fn ct__loops_add[CT_DTYPE_COUNT] = CT__L_NUM(add);
static const ct_loop_fn ct__loops_sub[CT_DTYPE_COUNT] = CT__L_NUM(sub);
static const ct_loop_fn ct__loops_mul[CT_DTYPE_COUNT] = CT__L_NUM(mul);
static const ct_loop_fn ct__loops_div[CT_DTYPE_COUNT] = CT__L_FLT(div);
static const ct_loop_fn ct__loops_pow[CT_DTYPE_COUNT] = CT__L_NUM(pow);
static const ct_loop_fn ct__loops_maximum[CT_DTYPE_COUNT] = CT__L_NUM(maximum);
static const ct_loop_fn ct__loops_minimum[CT_DTYPE_COUNT] = CT__L_NUM(minimum);
static const ct_loop_fn ct__loops_eq[CT_DTYPE_COUNT] = CT__L_NUM(eq);
static const ct_loop_fn ct__loops_ne[CT_DTYPE_COUNT] = CT__L_NUM(ne);
static const ct_loop_fn ct__loops_lt[CT_DTYPE_COUNT] = CT__L_NUM(lt);
static const ct_loop_fn ct__loops_le[CT_DTYPE_COUNT] = CT__L_NUM(le);
static const ct_loop_fn ct__loops_gt[CT_DTYPE_COUNT] = CT__L_NUM(gt);
static const ct_loop_fn ct__loops_ge[CT_DTYPE_COUNT] = CT__L_NUM(ge);
static const ct_loop_fn ct__loops_and[CT_DTYPE_COUNT] = CT__L_BOOL(ct__loop_and);
static const ct_loop_fn ct__loops_or[CT_DTYPE_COUNT] = CT__L_BOOL(ct__loop_or);
static const ct_loop_fn ct__loops_relu_bw[CT_DTYPE_COUNT] = CT__L_FLT(relu_bw);
static const ct_loop_fn ct__loops_sigmoid_bw[CT_DTYPE_COUNT] = CT__L_FLT(sigmoid_bw);
static const ct_loop_fn ct__loops_tanh_bw[CT_DTYPE_COUNT] = CT__L_FLT(tanh_bw);
static const ct_loop_fn ct__loops_neg[CT_DTYPE_COUNT] = CT__L_NUM(neg);
static const ct_loop_fn ct__loops_abs[CT_DTYPE_COUNT] = CT__L_NUM(abs);
static const ct_loop_fn ct__loops_relu[CT_DTYPE_COUNT] = CT__L_NUM(relu);
static const ct_loop_fn ct__loops_square[CT_DTYPE_COUNT] = CT__L_NUM(square);
static const ct_loop_fn ct__loops_sign[CT_DTYPE_COUNT] = {
    NULL, ct__loop_ident_b8, NULL, NULL, NULL,
    NULL, ct__loop_sign_i64, ct__loop_sign_f32, ct__loop_sign_f64}; /* bool: x */
static const ct_loop_fn ct__loops_exp[CT_DTYPE_COUNT] = CT__L_FLT(exp);
static const ct_loop_fn ct__loops_log[CT_DTYPE_COUNT] = CT__L_FLT(log);
static const ct_loop_fn ct__loops_log1p[CT_DTYPE_COUNT] = CT__L_FLT(log1p);
static const ct_loop_fn ct__loops_sqrt[CT_DTYPE_COUNT] = CT__L_FLT(sqrt);
static const ct_loop_fn ct__loops_rsqrt[CT_DTYPE_COUNT] = CT__L_FLT(rsqrt);
static const ct_loop_fn ct__loops_sin[CT_DTYPE_COUNT] = CT__L_FLT(sin);
static const ct_loop_fn ct__loops_cos[CT_DTYPE_COUNT] = CT__L_FLT(cos);
static const ct_loop_fn ct__loops_sigmoid[CT_DTYPE_COUNT] = CT__L_FLT(sigmoid);
static const ct_loop_fn ct__loops_tanh[CT_DTYPE_COUNT] = CT__L_FLT(tanh);
static const ct_loop_fn ct__loops_reciprocal[CT_DTYPE_COUNT] = CT__L_FLT(reciprocal);
static const ct_loop_fn ct__loops_clamp[CT_DTYPE_COUNT] = CT__L_NUM(clamp);
static const ct_loop_fn ct__loops_pows[CT_DTYPE_COUNT] = CT__L_NUM(pows);
static const ct_loop_fn ct__loops_erf[CT_DTYPE_COUNT] = CT__L_FLT(erf);
static const ct_loop_fn ct__loops_addcmul[CT_DTYPE_COUNT] = CT__L_NUM(addcmul);
static const ct_loop_fn ct__loops_addcdiv[CT_DTYPE_COUNT] = CT__L_FLT(addcdiv);
static const ct_loop_fn ct__loops_lerp[CT_DTYPE_COUNT] = CT__L_FLT(lerp);
static const ct_loop_fn ct__loops_div_trunc[CT_DTYPE_COUNT] = CT__L_NUM(div_trunc);
static const ct_loop_fn ct__loops_div_floor[CT_DTYPE_COUNT] = CT__L_NUM(div_floor);
static const ct_loop_fn ct__loops_lerps[CT_DTYPE_COUNT] = CT__L_FLT(lerps);
static const ct_loop_fn ct__loops_isnan[CT_DTYPE_COUNT] = CT__L_FLT(isnan);
static const ct_loop_fn ct__loops_isinf[CT_DTYPE_COUNT] = CT__L_FLT(isinf);
static const ct_loop_fn ct__loops_isfinite[CT_DTYPE_COUNT] = CT__L_FLT(isfinite);
static const ct_loop_fn ct__loops_not[CT_DTYPE_COUNT] = CT__L_BOOL(ct__loop_not);
static const ct_loop_fn ct__loops_where[CT_DTYPE_COUNT] = {
    NULL, ct__loop_where_1, ct__loop_where_1, ct__loop_where_1, ct__loop_where_2, ct__loop_where_4,
    ct__loop_where_8, ct__loop_where_4, ct__loop_where_8};

/* A pointwise op: name, schema, public functions, kind, variant, loops, meta, kernels, node,
   backward, saved tensors. */
#define CT__POINTWISE(SYM, NAME, SCHEMA, API, KIND, VAR, LOOPS, META, KERNELS, NODE, BW, SAVE,  \
                      RECORD)                                                                  \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, VAR, 0u,     \
                                       LOOPS, META, KERNELS, NULL, NODE, CT__BACKWARD(BW), SAVE,  \
                                       RECORD, NULL};
#define CT__BINARY(SYM, NAME, API, VAR, LOOPS, K, NODE, BW, SAVE)                               \
    CT__POINTWISE(SYM, "aten::" NAME, NAME ".Tensor(Tensor self, Tensor other) -> Tensor", API, \
                  CT_OP_POINTWISE, VAR, ct__loops_##LOOPS, ct__binary_meta,                     \
                  K(ct__pointwise_kernel), NODE, BW, SAVE, NULL)
#define CT__UNARY(SYM, NAME, API, VAR, LOOPS, K, NODE, BW, SAVE)                                \
    CT__POINTWISE(SYM, "aten::" NAME, NAME "(Tensor self) -> Tensor", API, CT_OP_POINTWISE, VAR, \
                  ct__loops_##LOOPS, ct__unary_meta, K(ct__pointwise_kernel), NODE, BW, SAVE,    \
                  NULL)

/* add, sub, mul, div, relu (and in place) and threshold_backward have float16/bfloat16
   kernels of their own */
#define CT__K_NUMERIC_H(K)                                                                   \
    {NULL, NULL, K, K, K, K, K, K, K, ct__half_pointwise_kernel, ct__half_pointwise_kernel}
#define CT__K_FLOAT_H(K)                                                                     \
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, K, K, ct__half_pointwise_kernel,              \
     ct__half_pointwise_kernel}
CT__POINTWISE(add, "aten::add", "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
              "Tensor", "ct_add ct_add_alpha ct_add_scalar", CT_OP_POINTWISE, CT__ADD,
              ct__loops_add, ct__binary_meta, CT__K_NUMERIC_H(ct__pointwise_kernel),
              "AddBackward0", ct__add_backward, 0u, NULL)
CT__POINTWISE(sub, "aten::sub", "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
              "Tensor", "ct_sub ct_sub_scalar", CT_OP_POINTWISE, CT__SUB, ct__loops_sub,
              ct__binary_meta, CT__K_NUMERIC_H(ct__pointwise_kernel), "SubBackward0",
              ct__sub_backward, 0u, NULL)
CT__BINARY(mul, "mul", "ct_mul ct_mul_scalar", CT__MUL, mul, CT__K_NUMERIC_H, "MulBackward0",
           ct__mul_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY(div, "div", "ct_div ct_div_scalar", CT__DIV, div, CT__K_FLOAT_H, "DivBackward0",
           ct__div_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__POINTWISE(pow, "aten::pow", "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
              "ct_pow ct_pow_scalar", CT_OP_POINTWISE, CT__POW, ct__loops_pow, ct__binary_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "PowBackward1", ct__pow_backward,
              CT__SAVE_IN(0) | CT__SAVE_IN(1) | CT__SAVE_OUT(0), NULL)
#define CT__DIV_MODE(SYM, VAR, LOOPS, K, KERNEL, BW, SAVE)                                     \
    CT__POINTWISE(SYM, "aten::div", "div.Tensor_mode(Tensor self, Tensor other, *, str? "       \
                  "rounding_mode) -> Tensor", "ct_div_mode", CT_OP_POINTWISE, VAR,              \
                  ct__loops_##LOOPS, ct__binary_meta, K(KERNEL), "DivBackward2", BW, SAVE, NULL)
CT__DIV_MODE(div_true, CT__DIV, div, CT__K_FLOAT, ct__pointwise_kernel, ct__div_backward,
             CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__DIV_MODE(div_trunc, CT__DIV_TRUNC, div_trunc, CT__K_NUMERIC, ct__int_div_kernel,
             ct__zeros_backward, 0u)
CT__DIV_MODE(div_floor, CT__DIV_FLOOR, div_floor, CT__K_NUMERIC, ct__int_div_kernel,
             ct__zeros_backward, 0u)
CT__BINARY(maximum, "maximum", "ct_maximum", CT__MAXIMUM, maximum, CT__K_NUMERIC,
           "MaximumBackward0", ct__maximum_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY(minimum, "minimum", "ct_minimum", CT__MINIMUM, minimum, CT__K_NUMERIC,
           "MinimumBackward0", ct__minimum_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY(eq, "eq", "ct_eq ct_eq_scalar", CT__EQ, eq, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(ne, "ne", "ct_ne", CT__NE, ne, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(lt, "lt", "ct_lt ct_lt_scalar", CT__LT, lt, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(le, "le", "ct_le", CT__LE, le, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(gt, "gt", "ct_gt ct_gt_scalar", CT__GT, gt, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(ge, "ge", "ct_ge", CT__GE, ge, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(logical_and, "logical_and", "ct_logical_and", CT__AND, and, CT__K_BOOL, NULL, NULL, 0u)
CT__BINARY(logical_or, "logical_or", "ct_logical_or", CT__OR, or, CT__K_BOOL, NULL, NULL, 0u)
CT__POINTWISE(threshold_backward, "aten::threshold_backward", "threshold_backward(Tensor "
              "grad_output, Tensor self, Scalar threshold) -> Tensor", "ct_backward (ReLU)",
              CT_OP_POINTWISE, CT__RELU_BW, ct__loops_relu_bw, ct__binary_meta,
              CT__K_FLOAT_H(ct__pointwise_kernel), "ThresholdBackwardBackward0",
              ct__relu_bw_backward, CT__SAVE_IN(1), NULL)
CT__POINTWISE(sigmoid_backward, "aten::sigmoid_backward", "sigmoid_backward(Tensor "
              "grad_output, Tensor output) -> Tensor", "ct_backward (sigmoid)", CT_OP_POINTWISE,
              CT__SIGMOID_BW, ct__loops_sigmoid_bw, ct__binary_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "SigmoidBackwardBackward0",
              ct__sigmoid_bw_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1), NULL)
CT__POINTWISE(tanh_backward, "aten::tanh_backward", "tanh_backward(Tensor grad_output, Tensor "
              "output) -> Tensor", "ct_backward (tanh)", CT_OP_POINTWISE, CT__TANH_BW,
              ct__loops_tanh_bw, ct__binary_meta, CT__K_FLOAT(ct__pointwise_kernel),
              "TanhBackwardBackward0", ct__tanh_bw_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1),
              NULL)
#define CT__BINARY_INPLACE(SYM, NAME, API, VAR, LOOPS, K, NODE, BW, SAVE)                     \
    CT__POINTWISE(SYM, "aten::" NAME, NAME ".Tensor(Tensor(a!) self, Tensor other, *, Scalar " \
                  "alpha=1) -> Tensor(a!)", API, CT_OP_INPLACE, VAR, ct__loops_##LOOPS,         \
                  ct__binary_meta, K(ct__pointwise_kernel), NODE, BW, SAVE,                     \
                  ct__binary_inplace_record)
CT__BINARY_INPLACE(add_, "add_", "ct_add_", CT__ADD, add, CT__K_NUMERIC_H, "AddBackward0",
                   ct__add_backward, 0u)
CT__BINARY_INPLACE(sub_, "sub_", "ct_sub_", CT__SUB, sub, CT__K_NUMERIC_H, "SubBackward0",
                   ct__sub_backward, 0u)
CT__BINARY_INPLACE(mul_, "mul_", "ct_mul_", CT__MUL, mul, CT__K_NUMERIC_H, "MulBackward0",
                   ct__mul_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY_INPLACE(div_, "div_", "ct_div_", CT__DIV, div, CT__K_FLOAT_H, "DivBackward0",
                   ct__div_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))

CT__UNARY(neg, "neg", "ct_neg", CT__NEG, neg, CT__K_NUMERIC, "NegBackward0", ct__neg_backward, 0u)
CT__UNARY(abs, "abs", "ct_abs", CT__ABS, abs, CT__K_NUMERIC, "AbsBackward0", ct__abs_backward,
          CT__SAVE_IN(0))
CT__UNARY(relu, "relu", "ct_relu", CT__RELU, relu, CT__K_NUMERIC_H, "ReluBackward0",
          ct__relu_backward, CT__SAVE_OUT(0))
CT__UNARY(square, "square", "ct_square", CT__SQUARE, square, CT__K_NUMERIC, "PowBackward0",
          ct__square_backward, CT__SAVE_IN(0))
CT__UNARY(sign, "sign", "ct_sign ct_abs (backward)", CT__SIGN, sign, CT__K_ALL, "SignBackward0",
          ct__zeros_backward, 0u)
CT__UNARY(exp, "exp", "ct_exp", CT__EXP, exp, CT__K_FLOAT, "ExpBackward0", ct__exp_backward,
          CT__SAVE_OUT(0))
CT__UNARY(log, "log", "ct_log", CT__LOG, log, CT__K_FLOAT, "LogBackward0", ct__log_backward,
          CT__SAVE_IN(0))
CT__UNARY(log1p, "log1p", "ct_log1p", CT__LOG1P, log1p, CT__K_FLOAT, "Log1PBackward0",
          ct__log1p_backward, CT__SAVE_IN(0))
CT__UNARY(sqrt, "sqrt", "ct_sqrt", CT__SQRT, sqrt, CT__K_FLOAT, "SqrtBackward0",
          ct__sqrt_backward, CT__SAVE_OUT(0))
CT__UNARY(rsqrt, "rsqrt", "ct_rsqrt", CT__RSQRT, rsqrt, CT__K_FLOAT, "RsqrtBackward0",
          ct__rsqrt_backward, CT__SAVE_OUT(0))
CT__UNARY(sin, "sin", "ct_sin", CT__SIN, sin, CT__K_FLOAT, "SinBackward0", ct__sin_backward,
          CT__SAVE_IN(0))
CT__UNARY(cos, "cos", "ct_cos", CT__COS, cos, CT__K_FLOAT, "CosBackward0", ct__cos_backward,
          CT__SAVE_IN(0))
CT__UNARY(sigmoid, "sigmoid", "ct_sigmoid", CT__SIGMOID, sigmoid, CT__K_FLOAT,
          "SigmoidBackward0", ct__sigmoid_backward, CT__SAVE_OUT(0))
CT__UNARY(tanh, "tanh", "ct_tanh", CT__TANH, tanh, CT__K_FLOAT, "TanhBackward0",
          ct__tanh_backward, CT__SAVE_OUT(0))
CT__UNARY(reciprocal, "reciprocal", "ct_reciprocal", CT__RECIPROCAL, reciprocal, CT__K_FLOAT,
          "ReciprocalBackward0", ct__reciprocal_backward, CT__SAVE_OUT(0))
CT__UNARY(erf, "erf", "ct_erf", CT__ERF, erf, CT__K_FLOAT, "ErfBackward0", ct__erf_backward,
          CT__SAVE_IN(0))
#define CT__TEST(SYM, VAR)                                                                      \
    CT__POINTWISE(SYM, "aten::" #SYM, #SYM "(Tensor self) -> Tensor", "ct_" #SYM,              \
                  CT_OP_POINTWISE, VAR, ct__loops_##SYM, ct__test_meta,                         \
                  CT__K_ALL(ct__bool_out_kernel), NULL, NULL, 0u, NULL)
CT__TEST(isnan, CT__ISNAN)
CT__TEST(isinf, CT__ISINF)
CT__TEST(isfinite, CT__ISFINITE)
CT__UNARY(logical_not, "logical_not", "ct_logical_not", CT__NOT, not, CT__K_ALL, NULL, NULL, 0u)
CT__POINTWISE(clamp, "aten::clamp", "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> "
              "Tensor", "ct_clamp", CT_OP_POINTWISE, CT__CLAMP, ct__loops_clamp, ct__unary_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "ClampBackward1", ct__clamp_backward,
              CT__SAVE_IN(0), NULL)
CT__POINTWISE(pow_scalar, "aten::pow", "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> "
              "Tensor", "ct_pow_scalar", CT_OP_POINTWISE, CT__POWS, ct__loops_pows,
              ct__unary_meta, CT__K_FLOAT(ct__pointwise_kernel), "PowBackward0",
              ct__pows_backward, CT__SAVE_IN(0), NULL)
CT__POINTWISE(relu_, "aten::relu_", "relu_(Tensor(a!) self) -> Tensor(a!)", "ct_relu_",
              CT_OP_INPLACE, CT__RELU, ct__loops_relu, ct__unary_meta,
              CT__K_NUMERIC_H(ct__pointwise_kernel), "ReluBackward0", ct__relu_backward,
              CT__SAVE_OUT(0), NULL)
#undef CT__K_NUMERIC_H
#undef CT__K_FLOAT_H
/* In-place unary ops: the loops of their out-of-place forms, written into self. Those whose
   derivative reads the input record a copy of the old self (ct__unary_inplace_record). */
#define CT__UNARY_INPLACE(SYM, SCHEMA, VAR, LOOPS, K, NODE, BW, SAVE, RECORD)                   \
    CT__POINTWISE(SYM##_, "aten::" #SYM "_", SCHEMA, "ct_" #SYM "_", CT_OP_INPLACE, VAR,         \
                  ct__loops_##LOOPS, ct__unary_meta, K(ct__pointwise_kernel), NODE, BW, SAVE,   \
                  RECORD)
#define CT__INPLACE_SCHEMA(N) N "_(Tensor(a!) self) -> Tensor(a!)"
CT__UNARY_INPLACE(neg, CT__INPLACE_SCHEMA("neg"), CT__NEG, neg, CT__K_NUMERIC, "NegBackward0",
                  ct__neg_backward, 0u, NULL)
CT__UNARY_INPLACE(abs, CT__INPLACE_SCHEMA("abs"), CT__ABS, abs, CT__K_NUMERIC, "AbsBackward0",
                  ct__abs_backward, CT__SAVE_IN(0), ct__unary_inplace_record)
CT__UNARY_INPLACE(exp, CT__INPLACE_SCHEMA("exp"), CT__EXP, exp, CT__K_FLOAT, "ExpBackward0",
                  ct__exp_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(log, CT__INPLACE_SCHEMA("log"), CT__LOG, log, CT__K_FLOAT, "LogBackward0",
                  ct__log_backward, CT__SAVE_IN(0), ct__unary_inplace_record)
CT__UNARY_INPLACE(sqrt, CT__INPLACE_SCHEMA("sqrt"), CT__SQRT, sqrt, CT__K_FLOAT, "SqrtBackward0",
                  ct__sqrt_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(sigmoid, CT__INPLACE_SCHEMA("sigmoid"), CT__SIGMOID, sigmoid, CT__K_FLOAT,
                  "SigmoidBackward0", ct__sigmoid_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(tanh, CT__INPLACE_SCHEMA("tanh"), CT__TANH, tanh, CT__K_FLOAT, "TanhBackward0",
                  ct__tanh_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(pow, "pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", CT__POWS,
                  pows, CT__K_NUMERIC, "PowBackward0", ct__pows_backward, CT__SAVE_IN(0),
                  ct__unary_inplace_record)
CT__UNARY_INPLACE(clamp, "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> "
                  "Tensor(a!)", CT__CLAMP, clamp, CT__K_NUMERIC, "ClampBackward1",
                  ct__clamp_backward, CT__SAVE_IN(0), ct__unary_inplace_record)
#define CT__ADDC_SCHEMA(N, SELF, RET)                                                         \
    N "(Tensor" SELF " self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor" RET
#define CT__ADDC_SAVE (CT__SAVE_IN(1) | CT__SAVE_IN(2))
CT__POINTWISE(addcmul, "aten::addcmul", CT__ADDC_SCHEMA("addcmul", "", ""), "ct_addcmul",
              CT_OP_POINTWISE, CT__ADDCMUL, ct__loops_addcmul, ct__addc_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "AddcmulBackward0", ct__addcmul_backward,
              CT__ADDC_SAVE, NULL)
CT__POINTWISE(addcmul_, "aten::addcmul_", CT__ADDC_SCHEMA("addcmul_", "(a!)", "(a!)"),
              "ct_addcmul_", CT_OP_INPLACE, CT__ADDCMUL, ct__loops_addcmul, ct__addc_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "AddcmulBackward0", ct__addcmul_backward,
              CT__ADDC_SAVE, NULL)
CT__POINTWISE(addcdiv, "aten::addcdiv", CT__ADDC_SCHEMA("addcdiv", "", ""), "ct_addcdiv",
              CT_OP_POINTWISE, CT__ADDCDIV, ct__loops_addcdiv, ct__addc_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "AddcdivBackward0", ct__addcdiv_backward,
              CT__ADDC_SAVE, NULL)
CT__POINTWISE(addcdiv_, "aten::addcdiv_", CT__ADDC_SCHEMA("addcdiv_", "(a!)", "(a!)"),
              "ct_addcdiv_", CT_OP_INPLACE, CT__ADDCDIV, ct__loops_addcdiv, ct__addc_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "AddcdivBackward0", ct__addcdiv_backward,
              CT__ADDC_SAVE, NULL)
#define CT__LERP_SCHEMA(N, OVL, SELF, W, RET)                                                 \
    N "." OVL "(Tensor" SELF " self, Tensor end, " W " weight) -> Tensor" RET
CT__POINTWISE(lerp, "aten::lerp", CT__LERP_SCHEMA("lerp", "Tensor", "", "Tensor", ""), "ct_lerp",
              CT_OP_POINTWISE, CT__LERP, ct__loops_lerp, ct__lerp_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward1", ct__lerp_backward,
              CT__SAVE_IN(0) | CT__SAVE_IN(1) | CT__SAVE_IN(2), NULL)
CT__POINTWISE(lerp_scalar, "aten::lerp", CT__LERP_SCHEMA("lerp", "Scalar", "", "Scalar", ""),
              "ct_lerp_scalar", CT_OP_POINTWISE, CT__LERP, ct__loops_lerps, ct__lerp_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward0", ct__lerp_scalar_backward, 0u,
              NULL)
CT__POINTWISE(lerp_, "aten::lerp_", CT__LERP_SCHEMA("lerp_", "Tensor", "(a!)", "Tensor", "(a!)"),
              "ct_lerp_", CT_OP_INPLACE, CT__LERP, ct__loops_lerp, ct__lerp_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward1", ct__lerp_backward,
              CT__SAVE_IN(0) | CT__SAVE_IN(1) | CT__SAVE_IN(2), ct__lerp_inplace_record)
CT__POINTWISE(lerp_scalar_, "aten::lerp_", CT__LERP_SCHEMA("lerp_", "Scalar", "(a!)", "Scalar",
              "(a!)"), "ct_lerp_scalar_", CT_OP_INPLACE, CT__LERP, ct__loops_lerps,
              ct__lerp_meta, CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward0",
              ct__lerp_scalar_backward, 0u, NULL)
CT__POINTWISE(where, "aten::where", "where.self(Tensor condition, Tensor self, Tensor other) -> "
              "Tensor", "ct_where", CT_OP_POINTWISE, 0, ct__loops_where, ct__where_meta,
              CT__K_ALL(ct__where_kernel), "WhereBackward0", ct__where_backward, CT__SAVE_IN(0),
              NULL)
CT__POINTWISE(fill_, "aten::fill_", "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
              "ct_fill_ ct_zero_", CT_OP_INPLACE, 0, NULL, ct__fill_meta,
              CT__K_ANY(ct__fill_kernel), "FillBackward0", ct__fill_backward, 0u, NULL)
/* src may be on another device: meta brings it over through _to_copy (recorded by autograd). */
static const ct_op ct__op_copy_ = {"aten::copy_", "copy_(Tensor(a!) self, Tensor src, bool "
                                   "non_blocking=False) -> Tensor(a!)", "ct_copy_",
                                   CT_OP_INPLACE, CT_AUTOCAST_NONE, 0, CT_OP_ANY_DEVICE(1), NULL,
                                   ct__copy_meta, CT__K_ANY(ct__copy_cpu_kernel), NULL,
                                   "CopyBackwards", CT__BACKWARD(ct__copy_backward), 0u, NULL,
                                   NULL};
CT__POINTWISE(clone, "aten::clone", "clone(Tensor self, *, MemoryFormat? memory_format=None) -> "
              "Tensor", "ct_clone", CT_OP_OTHER, 0, NULL, ct__same_shape_meta,
              CT__K_ANY(ct__copy_to_output_kernel), "CloneBackward0", ct__identity_backward, 0u,
              NULL)
CT__POINTWISE(to_dtype, "aten::_to_copy", "_to_copy(Tensor self, *, ScalarType? dtype=None) -> "
              "Tensor", "ct_to_dtype", CT_OP_OTHER, 0, NULL, ct__same_shape_meta,
              CT__K_ANY(ct__copy_to_output_kernel), "ToCopyBackward0", ct__identity_backward, 0u,
              NULL)
/* The same operator to another device: one kernel for every pair of devices (the composite),
   built on the backends' copy. Attributes: the device's type and index. */
static const ct_op ct__op_to_device = {"aten::_to_copy", "_to_copy(Tensor self, *, Device? "
                                       "device=None) -> Tensor", "ct_to_device ct_cpu ct_copy_",
                                       CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL,
                                       ct__to_device_meta, CT__K_NONE, ct__to_device_kernel,
                                       "ToCopyBackward0", CT__BACKWARD(ct__to_device_backward), 0u,
                                       ct__to_device_record, NULL};
static const ct_op ct__op_pin_memory = {"aten::_pin_memory", "_pin_memory(Tensor self, Device? "
                                        "device=None) -> Tensor", "ct_pin_memory", CT_OP_OTHER,
                                        CT_AUTOCAST_NONE, 0, 0u, NULL, ct__pin_memory_meta,
                                        CT__K_ANY(ct__copy_to_output_kernel), NULL,
                                        "PinMemoryBackward0", ct__identity_backward, 0u, NULL,
                                        NULL};

/* ---- descriptors of issue 7's second slice -------------------------------------------------- */
#define CT__LOOPS(SYM, TABLE) static const ct_loop_fn ct__loops_##SYM[CT_DTYPE_COUNT] = TABLE;
CT__LOOPS(expm1, CT__L_FLT(expm1))
CT__LOOPS(exp2, CT__L_FLT(exp2))
CT__LOOPS(log2, CT__L_FLT(log2))
CT__LOOPS(log10, CT__L_FLT(log10))
CT__LOOPS(tan, CT__L_FLT(tan))
CT__LOOPS(asin, CT__L_FLT(asin))
CT__LOOPS(acos, CT__L_FLT(acos))
CT__LOOPS(atan, CT__L_FLT(atan))
CT__LOOPS(sinh, CT__L_FLT(sinh))
CT__LOOPS(cosh, CT__L_FLT(cosh))
CT__LOOPS(asinh, CT__L_FLT(asinh))
CT__LOOPS(acosh, CT__L_FLT(acosh))
CT__LOOPS(atanh, CT__L_FLT(atanh))
CT__LOOPS(erfc, CT__L_FLT(erfc))
CT__LOOPS(erfinv, CT__L_FLT(erfinv))
CT__LOOPS(frac, CT__L_FLT(frac))
CT__LOOPS(logit, CT__L_FLT(logit))
CT__LOOPS(floor, CT__L_IDENT(floor, NULL))
CT__LOOPS(ceil, CT__L_IDENT(ceil, NULL))
CT__LOOPS(round, CT__L_IDENT(round, NULL))
CT__LOOPS(trunc, CT__L_IDENT(trunc, NULL))
CT__LOOPS(nan_to_num, CT__L_IDENT(nan_to_num, ct__loop_ident_b8))
CT__LOOPS(signbit, CT__L_FLT(signbit))
CT__LOOPS(isposinf, CT__L_FLT(isposinf))
CT__LOOPS(isneginf, CT__L_FLT(isneginf))
CT__LOOPS(isreal, CT__L_FLT(isreal))
CT__LOOPS(bitnot, CT__L_INT(bitnot, ct__loop_not))
CT__LOOPS(bitand, CT__L_INT(bitand, NULL))
CT__LOOPS(bitor, CT__L_INT(bitor, NULL))
CT__LOOPS(bitxor, CT__L_INT(bitxor, NULL))
CT__LOOPS(lshift, CT__L_INT(lshift, NULL))
CT__LOOPS(rshift, CT__L_INT(rshift, NULL))
CT__LOOPS(xor, CT__L_BOOL(ct__loop_xor))
CT__LOOPS(fmod, CT__L_NUM(fmod))
CT__LOOPS(remainder, CT__L_NUM(remainder))
CT__LOOPS(fmax, CT__L_NUM(fmax))
CT__LOOPS(fmin, CT__L_NUM(fmin))
CT__LOOPS(hypot, CT__L_FLT(hypot))
CT__LOOPS(atan2, CT__L_FLT(atan2))
CT__LOOPS(logaddexp, CT__L_FLT(logaddexp))
CT__LOOPS(logaddexp2, CT__L_FLT(logaddexp2))
CT__LOOPS(xlogy, CT__L_FLT(xlogy))
#undef CT__LOOPS

/* Float unary ops and their in-place forms (those whose derivative reads the input save a copy
   of the old self). */
#define CT__UNARY_F(SYM, VAR, NODE, SAVE_RECORD) CT__UNARY_F2(SYM, VAR, NODE, SAVE_RECORD)
#define CT__UNARY_F2(SYM, VAR, NODE, SAVE, RECORD)                                             \
    CT__UNARY(SYM, #SYM, "ct_" #SYM, VAR, SYM, CT__K_FLOAT, NODE, ct__##SYM##_backward, SAVE)  \
    CT__UNARY_INPLACE(SYM, CT__INPLACE_SCHEMA(#SYM), VAR, SYM, CT__K_FLOAT, NODE,              \
                      ct__##SYM##_backward, SAVE, RECORD)
#define CT__IN CT__SAVE_IN(0), ct__unary_inplace_record
#define CT__OUT CT__SAVE_OUT(0), NULL
CT__UNARY_F(expm1, CT__EXPM1, "Expm1Backward0", CT__OUT)
CT__UNARY_F(exp2, CT__EXP2, "Exp2Backward0", CT__OUT)
CT__UNARY_F(log2, CT__LOG2, "Log2Backward0", CT__IN)
CT__UNARY_F(log10, CT__LOG10, "Log10Backward0", CT__IN)
CT__UNARY_F(tan, CT__TAN, "TanBackward0", CT__OUT)
CT__UNARY_F(asin, CT__ASIN, "AsinBackward0", CT__IN)
CT__UNARY_F(acos, CT__ACOS, "AcosBackward0", CT__IN)
CT__UNARY_F(atan, CT__ATAN, "AtanBackward0", CT__IN)
CT__UNARY_F(sinh, CT__SINH, "SinhBackward0", CT__IN)
CT__UNARY_F(cosh, CT__COSH, "CoshBackward0", CT__IN)
CT__UNARY_F(asinh, CT__ASINH, "AsinhBackward0", CT__IN)
CT__UNARY_F(acosh, CT__ACOSH, "AcoshBackward0", CT__IN)
CT__UNARY_F(atanh, CT__ATANH, "AtanhBackward0", CT__IN)
CT__UNARY_F(erfc, CT__ERFC, "ErfcBackward0", CT__IN)
CT__UNARY_F(erfinv, CT__ERFINV, "ErfinvBackward0", CT__OUT)
#undef CT__UNARY_F
#undef CT__UNARY_F2
#undef CT__IN
#undef CT__OUT
/* floor, ceil, round, trunc keep integer dtypes (a copy); frac is float only (no promotion) */
#define CT__ROUNDING(SYM, VAR, K, NODE, BW)                                                    \
    CT__UNARY(SYM, #SYM, "ct_" #SYM, VAR, SYM, K, NODE, BW, 0u)                                \
    CT__UNARY_INPLACE(SYM, CT__INPLACE_SCHEMA(#SYM), VAR, SYM, K, NODE, BW, 0u, NULL)
CT__ROUNDING(floor, CT__FLOOR, CT__K_NUMERIC, "FloorBackward0", ct__zeros_backward)
CT__ROUNDING(ceil, CT__CEIL, CT__K_NUMERIC, "CeilBackward0", ct__zeros_backward)
CT__ROUNDING(round, CT__ROUND, CT__K_NUMERIC, "RoundBackward0", ct__zeros_backward)
CT__ROUNDING(trunc, CT__TRUNC, CT__K_NUMERIC, "TruncBackward0", ct__zeros_backward)
CT__ROUNDING(frac, CT__FRAC, CT__K_FLOAT, "FracBackward0", ct__identity_backward)
#undef CT__ROUNDING
CT__UNARY(sgn, "sgn", "ct_sgn", CT__SGN, sign, CT__K_ALL, "SgnBackward0", ct__zeros_backward, 0u)
CT__UNARY_INPLACE(sign, CT__INPLACE_SCHEMA("sign"), CT__SIGN, sign, CT__K_ALL, "SignBackward0",
                  ct__zeros_backward, 0u, NULL)
CT__UNARY_INPLACE(sgn, CT__INPLACE_SCHEMA("sgn"), CT__SGN, sign, CT__K_ALL, "SgnBackward0",
                  ct__zeros_backward, 0u, NULL)
CT__TEST(signbit, CT__SIGNBIT)
CT__TEST(isposinf, CT__ISPOSINF)
CT__TEST(isneginf, CT__ISNEGINF)
CT__TEST(isreal, CT__ISREAL)
#define CT__NAN_TO_NUM_SCHEMA(N, SELF, RET)                                                    \
    N "(Tensor" SELF " self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor" RET
CT__POINTWISE(nan_to_num, "aten::nan_to_num", CT__NAN_TO_NUM_SCHEMA("nan_to_num", "", ""),
              "ct_nan_to_num", CT_OP_POINTWISE, CT__NAN_TO_NUM, ct__loops_nan_to_num,
              ct__unary_meta, CT__K_ALL(ct__pointwise_kernel), "NanToNumBackward0",
              ct__nan_to_num_backward, CT__SAVE_IN(0), NULL)
CT__POINTWISE(nan_to_num_, "aten::nan_to_num_", CT__NAN_TO_NUM_SCHEMA("nan_to_num_", "(a!)",
              "(a!)"), "ct_nan_to_num_", CT_OP_INPLACE, CT__NAN_TO_NUM, ct__loops_nan_to_num,
              ct__unary_meta, CT__K_ALL(ct__pointwise_kernel), "NanToNumBackward0",
              ct__nan_to_num_backward, CT__SAVE_IN(0), ct__unary_inplace_record)
CT__POINTWISE(logit, "aten::logit", "logit(Tensor self, float? eps=None) -> Tensor", "ct_logit",
              CT_OP_POINTWISE, CT__LOGIT, ct__loops_logit, ct__unary_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LogitBackward0", ct__logit_backward,
              CT__SAVE_IN(0), NULL)
CT__UNARY(bitwise_not, "bitwise_not", "ct_bitwise_not", CT__BITNOT, bitnot, CT__K_INT_BOOL, NULL,
          NULL, 0u)
CT__UNARY_INPLACE(bitwise_not, CT__INPLACE_SCHEMA("bitwise_not"), CT__BITNOT, bitnot,
                  CT__K_INT_BOOL, NULL, NULL, 0u, NULL)
CT__POINTWISE(logit_, "aten::logit_", "logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)",
              "ct_logit_", CT_OP_INPLACE, CT__LOGIT, ct__loops_logit, ct__unary_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LogitBackward0", ct__logit_backward,
              CT__SAVE_IN(0), ct__unary_inplace_record)

/* binary ops: the schema is PyTorch's (ops without an overload name have no ".Tensor") */
#define CT__BINARY2(SYM, SCHEMA, API, VAR, LOOPS, K, KERNEL, NODE, BW, SAVE)                    \
    CT__POINTWISE(SYM, "aten::" #SYM, SCHEMA, API, CT_OP_POINTWISE, VAR, ct__loops_##LOOPS,     \
                  ct__binary_meta, K(KERNEL), NODE, BW, SAVE, NULL)
#define CT__SCHEMA2(N) N "(Tensor self, Tensor other) -> Tensor"
#define CT__SAVE_AB (CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY2(hypot, CT__SCHEMA2("hypot"), "ct_hypot", CT__HYPOT, hypot, CT__K_FLOAT,
            ct__pointwise_kernel, "HypotBackward0", ct__hypot_backward,
            CT__SAVE_AB | CT__SAVE_OUT(0))
CT__BINARY2(atan2, CT__SCHEMA2("atan2"), "ct_atan2", CT__ATAN2, atan2, CT__K_FLOAT,
            ct__pointwise_kernel, "Atan2Backward0", ct__atan2_backward, CT__SAVE_AB)
CT__BINARY2(logaddexp, CT__SCHEMA2("logaddexp"), "ct_logaddexp", CT__LOGADDEXP, logaddexp,
            CT__K_FLOAT, ct__pointwise_kernel, "LogaddexpBackward0", ct__logaddexp_backward,
            CT__SAVE_AB)
CT__BINARY2(logaddexp2, CT__SCHEMA2("logaddexp2"), "ct_logaddexp2", CT__LOGADDEXP2, logaddexp2,
            CT__K_FLOAT, ct__pointwise_kernel, "Logaddexp2Backward0", ct__logaddexp2_backward,
            CT__SAVE_AB)
/* xlogy in float16/bfloat16 as PyTorch's CPU kernel, whose scalar code takes the log in the
   reduced dtype: log(y) rounded to it, then x * log(y) rounded; 0 where x is 0, NaN where y
   is (the other dtypes: the loops). */
static ct_status ct__xlogy_half_kernel(ct_op_call *c)
{
    ct_no_grad_begin();
    ct_scope_begin();
    ct_tensor *x = ct_to_dtype(c->inputs[0], c->dtype), *y = ct_to_dtype(c->inputs[1], c->dtype);
    ct_tensor *r = ct_mul(x, ct_log(y));
    r = ct_where(ct_isnan(y), y, ct_where(ct_eq_scalar(x, 0.0), ct_zeros_like(r), r));
    ct_status st = r ? CT_OK : ct_error_code();
    if (r) {
        ct__copy_kernel(c->outputs[0], r);
    }
    ct_scope_end();
    ct_no_grad_end();
    return st;
}
#define CT__K_XLOGY(K) {NULL, NULL, NULL, NULL, NULL, NULL, NULL, K, K, ct__xlogy_half_kernel,  \
                        ct__xlogy_half_kernel}
CT__BINARY2(xlogy, CT__SCHEMA2("xlogy.Tensor"), "ct_xlogy", CT__XLOGY, xlogy, CT__K_XLOGY,
            ct__pointwise_kernel, "XlogyBackward0", ct__xlogy_backward, CT__SAVE_AB)
CT__BINARY2(fmax, CT__SCHEMA2("fmax"), "ct_fmax", CT__FMAX, fmax, CT__K_NUMERIC,
            ct__pointwise_kernel, "FmaxBackward0", ct__fmax_backward, CT__SAVE_AB)
CT__BINARY2(fmin, CT__SCHEMA2("fmin"), "ct_fmin", CT__FMIN, fmin, CT__K_NUMERIC,
            ct__pointwise_kernel, "FminBackward0", ct__fmin_backward, CT__SAVE_AB)
CT__BINARY2(fmod, CT__SCHEMA2("fmod.Tensor"), "ct_fmod", CT__FMOD, fmod, CT__K_NUMERIC,
            ct__int_div_kernel, "FmodBackward1", ct__fmod_backward, CT__SAVE_AB)
CT__BINARY2(remainder, CT__SCHEMA2("remainder.Tensor"), "ct_remainder", CT__REMAINDER,
            remainder, CT__K_NUMERIC, ct__int_div_kernel, "RemainderBackward1",
            ct__remainder_backward, CT__SAVE_AB)
CT__BINARY2(floor_divide, CT__SCHEMA2("floor_divide"), "ct_floor_divide", CT__DIV_FLOOR,
            div_floor, CT__K_NUMERIC, ct__int_div_kernel, NULL, NULL, 0u)
CT__BINARY2(bitwise_and, CT__SCHEMA2("bitwise_and.Tensor"), "ct_bitwise_and", CT__BITAND, bitand,
            CT__K_INT, ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY2(bitwise_or, CT__SCHEMA2("bitwise_or.Tensor"), "ct_bitwise_or", CT__BITOR, bitor,
            CT__K_INT, ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY2(bitwise_xor, CT__SCHEMA2("bitwise_xor.Tensor"), "ct_bitwise_xor", CT__BITXOR, bitxor,
            CT__K_INT, ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY2(bitwise_left_shift, CT__SCHEMA2("bitwise_left_shift.Tensor"),
            "ct_bitwise_left_shift", CT__LSHIFT, lshift, CT__K_INT, ct__pointwise_kernel, NULL,
            NULL, 0u)
CT__BINARY2(bitwise_right_shift, CT__SCHEMA2("bitwise_right_shift.Tensor"),
            "ct_bitwise_right_shift", CT__RSHIFT, rshift, CT__K_INT, ct__pointwise_kernel, NULL,
            NULL, 0u)
CT__BINARY2(logical_xor, CT__SCHEMA2("logical_xor"), "ct_logical_xor", CT__XOR, xor, CT__K_BOOL,
            ct__pointwise_kernel, NULL, NULL, 0u)
/* In-place binary ops: the out-of-place loops written into self (the old self is saved for a
   backward that reads it). */
#define CT__BINARY_INPLACE2(SYM, SCHEMA, VAR, LOOPS, K, KERNEL, NODE, BW, SAVE)                 \
    CT__POINTWISE(SYM##_, "aten::" #SYM "_", SCHEMA "(Tensor(a!) self, Tensor other) -> "        \
                  "Tensor(a!)", "ct_" #SYM "_", CT_OP_INPLACE, VAR, ct__loops_##LOOPS,          \
                  ct__binary_meta, K(KERNEL), NODE, BW, SAVE, ct__binary_inplace_record)
CT__BINARY_INPLACE2(fmod, "fmod_.Tensor", CT__FMOD, fmod, CT__K_NUMERIC, ct__int_div_kernel,
                    "FmodBackward1", ct__fmod_backward, CT__SAVE_AB)
CT__BINARY_INPLACE2(remainder, "remainder_.Tensor", CT__REMAINDER, remainder, CT__K_NUMERIC,
                    ct__int_div_kernel, "RemainderBackward1", ct__remainder_backward, CT__SAVE_AB)
CT__BINARY_INPLACE2(floor_divide, "floor_divide_.Tensor", CT__DIV_FLOOR, div_floor,
                    CT__K_NUMERIC, ct__int_div_kernel, NULL, NULL, 0u)
CT__BINARY_INPLACE2(atan2, "atan2_", CT__ATAN2, atan2, CT__K_FLOAT, ct__pointwise_kernel,
                    "Atan2Backward0", ct__atan2_backward, CT__SAVE_AB)
CT__BINARY_INPLACE2(xlogy, "xlogy_.Tensor", CT__XLOGY, xlogy, CT__K_XLOGY, ct__pointwise_kernel,
                    "XlogyBackward0", ct__xlogy_backward, CT__SAVE_AB)
#undef CT__K_XLOGY
CT__BINARY_INPLACE2(bitwise_and, "bitwise_and_.Tensor", CT__BITAND, bitand, CT__K_INT,
                    ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY_INPLACE2(bitwise_or, "bitwise_or_.Tensor", CT__BITOR, bitor, CT__K_INT,
                    ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY_INPLACE2(bitwise_xor, "bitwise_xor_.Tensor", CT__BITXOR, bitxor, CT__K_INT,
                    ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY_INPLACE2(bitwise_left_shift, "bitwise_left_shift_.Tensor", CT__LSHIFT, lshift,
                    CT__K_INT, ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY_INPLACE2(bitwise_right_shift, "bitwise_right_shift_.Tensor", CT__RSHIFT, rshift,
                    CT__K_INT, ct__pointwise_kernel, NULL, NULL, 0u)
CT__BINARY_INPLACE2(logical_xor, "logical_xor_", CT__XOR, xor, CT__K_BOOL, ct__pointwise_kernel,
                    NULL, NULL, 0u)
#undef CT__BINARY_INPLACE2
#undef CT__BINARY2
#undef CT__SCHEMA2
#undef CT__SAVE_AB

/* isclose: PyTorch's composite (|a - b| <= atol + rtol |b|, or a == b; NaN == NaN when
   equal_nan), after meta's checks. Attributes: rtol, atol, equal_nan. */
static bool ct__isclose_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    if (!ct__broadcast_shapes(c->fn, a->sizes, a->ndim, b->sizes, b->ndim, shape, &nd)) {
        return false;
    }
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "%s did not match %s", ct__dtype_title(a->dtype),
                 ct__dtype_title(b->dtype));
        return false;
    }
    for (int k = 0; k < 2; k++) {
        if (c->attrs[k].f < 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "%s must be greater than or equal to zero, but got %g",
                     k ? "atol" : "rtol", c->attrs[k].f);
            return false;
        }
    }
    return true;
}

static ct_status ct__isclose_kernel(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    double rtol = c->attrs[0].f, atol = c->attrs[1].f;
    ct_scope_begin();
    ct_tensor *close = ct_eq(a, b);
    if (c->attrs[2].i && ct_dtype_is_floating_point(a->dtype)) {
        close = ct_logical_or(close, ct_logical_and(ct_isnan(a), ct_isnan(b)));
    }
    if (rtol != 0 || atol != 0) { /* bool operands compute in the default float dtype */
        const ct_tensor *x = a->dtype == CT_BOOL ? ct_to_dtype(a, ct_get_default_dtype()) : a;
        const ct_tensor *y = b->dtype == CT_BOOL ? ct_to_dtype(b, ct_get_default_dtype()) : b;
        ct_tensor *allowed = ct_add_scalar(ct_abs(ct_mul_scalar(y, rtol)), atol);
        ct_tensor *actual = ct_abs(ct_sub(x, y));
        close = ct_logical_or(close,
                              ct_logical_and(ct_isfinite(actual), ct_le(actual, allowed)));
    }
    return ct__composite_end(c, close);
}

static const ct_op ct__op_isclose = {"aten::isclose", "isclose(Tensor self, Tensor other, float "
                                     "rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> "
                                     "Tensor", "ct_isclose", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u,
                                     NULL, ct__isclose_meta, CT__K_NONE, ct__isclose_kernel,
                                     NULL, NULL, 0u, NULL, NULL};

/* torch._foreach_*: lists of tensors. The call's inputs are self's tensors, then the second
   list's; the composite applies the per-tensor op to each (autograd records those).
   c->state: the list length and, for out-of-place ops, the caller's output array. */
typedef enum ct__foreach_op {
    CT__FOREACH_ADD, CT__FOREACH_MUL, CT__FOREACH_LERP, CT__FOREACH_ZERO, CT__FOREACH_SQRT
} ct__foreach_op;

typedef struct ct__foreach_state {
    int n;
    ct_tensor **out;
} ct__foreach_state;

/* The per-tensor op k of a foreach call: self k (and other k); a new reference for sqrt. */
static ct_tensor *ct__foreach_one(const ct_op_call *c, int n, int k)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[k];
    const ct_tensor *other = c->n_inputs > n ? c->inputs[n + k] : NULL;
    switch ((ct__foreach_op)c->op->variant) {
    case CT__FOREACH_ADD:
        return ct_add_(self, other, c->attrs[0].f);
    case CT__FOREACH_MUL:
        return ct_mul_(self, other);
    case CT__FOREACH_LERP:
        return ct_lerp_scalar_(self, other, c->attrs[0].f);
    case CT__FOREACH_ZERO:
        return ct_zero_(self);
    default:
        return ct_retain(ct_sqrt(self));
    }
}

/* Output 0: an unscoped reference to self 0 (in-place ops) or to result 0, the other results
   in the state's array, unscoped (the public function scopes them). */
static ct_status ct__foreach_kernel(ct_op_call *c)
{
    ct__foreach_state *st = (ct__foreach_state *)c->state;
    bool inplace = c->op->variant != CT__FOREACH_SQRT;
    ct_scope_begin();
    int k = 0;
    for (; k < st->n; k++) {
        ct_tensor *r = ct__foreach_one(c, st->n, k);
        if (!r) {
            break;
        }
        if (!inplace) {
            st->out[k] = r;
        }
    }
    ct_scope_end();
    if (k < st->n) {
        for (int j = 0; j < k && !inplace; j++) {
            ct__release(st->out[j]);
        }
        return ct_error_code();
    }
    c->outputs[c->n_outputs++] = inplace ? ct_retain((ct_tensor *)(uintptr_t)c->inputs[0])
                                         : st->out[0];
    return CT_OK;
}

#define CT__FOREACH(SYM, SCHEMA, VAR)                                                          \
    static const ct_op ct__op_foreach_##SYM = {"aten::_foreach_" #SYM, SCHEMA,                  \
                                               "ct_foreach_" #SYM, CT_OP_OTHER,                 \
                                               CT_AUTOCAST_NONE, VAR, 0u, NULL, NULL,           \
                                               CT__K_NONE, ct__foreach_kernel, NULL, NULL, 0u,  \
                                               NULL, NULL};
CT__FOREACH(add_, "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
            CT__FOREACH_ADD)
CT__FOREACH(mul_, "_foreach_mul_.List(Tensor(a!)[] self, Tensor[] other) -> ()", CT__FOREACH_MUL)
CT__FOREACH(lerp_, "_foreach_lerp_.Scalar(Tensor(a!)[] self, Tensor[] tensors1, Scalar weight) "
            "-> ()", CT__FOREACH_LERP)
CT__FOREACH(zero_, "_foreach_zero_(Tensor(a!)[] self) -> ()", CT__FOREACH_ZERO)
CT__FOREACH(sqrt, "_foreach_sqrt(Tensor[] self) -> Tensor[]", CT__FOREACH_SQRT)
#undef CT__FOREACH

/* ---- public functions ---------------------------------------------------------------------- */
static ct_tensor *ct__call1(const ct_op *op, const char *fn, const ct_tensor *a, int n_attrs,
                            double p0, double p1)
{
    const ct_tensor *in[1] = {a};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (n_attrs > 0) {
        ct__call_f(&c, p0);
    }
    if (n_attrs > 1) {
        ct__call_f(&c, p1);
    }
    ct_tensor *out = ct__dispatch(&c);
    if (c.state) { /* an in-place op's saved old self */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

/* A call over tensors a and b; alpha is attribute 0 of ops whose schema has one (add, sub
   and their in-place forms). */
static ct_tensor *ct__call2(const ct_op *op, const char *fn, const ct_tensor *a,
                            const ct_tensor *b, double alpha)
{
    const ct_tensor *in[2] = {a, b};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    if (op->variant <= CT__SUB && op->meta == ct__binary_meta) {
        ct__call_f(&c, alpha);
    }
    ct_tensor *out = ct__dispatch(&c);
    if (c.state) { /* an in-place op's saved old self */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

/* binary op with a C scalar as the second operand (a wrapped number) */
static ct_tensor *ct__call2_scalar(const ct_op *op, const char *fn, const ct_tensor *a, double v)
{
    if (ct__null(fn, a)) {
        return NULL;
    }
    ct_tensor *s = ct__wrap_scalar(v);
    ct_tensor *out = s ? ct__call2(op, fn, a, s, 1.0) : NULL;
    ct__release(s);
    return out;
}

static ct_tensor *ct__threshold_bw(const ct_tensor *g, const ct_tensor *y)
{
    return ct__call2(&ct__op_threshold_backward, "ct_threshold_backward", g, y, 0.0);
}

static ct_tensor *ct__sigmoid_bw(const ct_tensor *g, const ct_tensor *y)
{
    return ct__call2(&ct__op_sigmoid_backward, "ct_sigmoid_backward", g, y, 1.0);
}

static ct_tensor *ct__tanh_bw(const ct_tensor *g, const ct_tensor *y)
{
    return ct__call2(&ct__op_tanh_backward, "ct_tanh_backward", g, y, 1.0);
}

static ct_tensor *ct__ge_scalar(const ct_tensor *x, double v)
{
    return ct__call2_scalar(&ct__op_ge, "ct_clamp", x, v);
}

static ct_tensor *ct__le_scalar(const ct_tensor *x, double v)
{
    return ct__call2_scalar(&ct__op_le, "ct_clamp", x, v);
}

ct_tensor *ct__threshold_backward(const ct_tensor *g, const ct_tensor *y)
{
    return ct__threshold_bw(g, y);
}

/* The public binary ops: ct_<name>(a, b) and ct_<name>_scalar(a, v). */
#define CT__BINARY_OP(NAME)                                                                    \
    ct_tensor *ct_##NAME(const ct_tensor *a, const ct_tensor *b)                               \
    {                                                                                          \
        return ct__call2(&ct__op_##NAME, "ct_" #NAME, a, b, 1.0);                              \
    }
#define CT__SCALAR_OP(NAME)                                                                    \
    ct_tensor *ct_##NAME##_scalar(const ct_tensor *a, double v)                                \
    {                                                                                          \
        return ct__call2_scalar(&ct__op_##NAME, "ct_" #NAME, a, v);                            \
    }
CT__BINARY_OP(add)
CT__BINARY_OP(sub)
CT__BINARY_OP(mul)
CT__BINARY_OP(div)
CT__BINARY_OP(pow)
CT__BINARY_OP(maximum)
CT__BINARY_OP(minimum)
CT__BINARY_OP(eq)
CT__BINARY_OP(ne)
CT__BINARY_OP(lt)
CT__BINARY_OP(le)
CT__BINARY_OP(gt)
CT__BINARY_OP(ge)
CT__BINARY_OP(logical_and)
CT__BINARY_OP(logical_or)
CT__SCALAR_OP(add)
CT__SCALAR_OP(sub)
CT__SCALAR_OP(mul)
CT__SCALAR_OP(div)
CT__SCALAR_OP(eq)
CT__SCALAR_OP(gt)
CT__SCALAR_OP(lt)
#undef CT__BINARY_OP
#undef CT__SCALAR_OP

ct_tensor *ct_div_mode(const ct_tensor *input, const ct_tensor *other,
                       ct_rounding_mode rounding_mode)
{
    static const ct_op *const ops[3] = {&ct__op_div_true, &ct__op_div_trunc, &ct__op_div_floor};
    if ((int)rounding_mode < 0 || (int)rounding_mode > (int)CT_ROUNDING_FLOOR) {
        ct__fail(CT_ERR_VALUE, "ct_div_mode", "div expected rounding_mode to be one of None, "
                 "'trunc', or 'floor' but found %d", (int)rounding_mode);
        return NULL;
    }
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, ops[rounding_mode], "ct_div_mode", in, 2);
    ct__call_i(&c, rounding_mode);
    return ct__dispatch(&c);
}

ct_tensor *ct_add_alpha(const ct_tensor *a, const ct_tensor *b, double alpha)
{
    return ct__call2(&ct__op_add, "ct_add", a, b, alpha);
}

ct_tensor *ct_add_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__call2(&ct__op_add_, "ct_add_", self, other, alpha);
}

ct_tensor *ct_sub_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__call2(&ct__op_sub_, "ct_sub_", self, other, alpha);
}

ct_tensor *ct_mul_(ct_tensor *self, const ct_tensor *other)
{
    return ct__call2(&ct__op_mul_, "ct_mul_", self, other, 1.0);
}

ct_tensor *ct_div_(ct_tensor *self, const ct_tensor *other)
{
    return ct__call2(&ct__op_div_, "ct_div_", self, other, 1.0);
}

#define CT__UNARY_OP(NAME)                                                                     \
    ct_tensor *ct_##NAME(const ct_tensor *a)                                                   \
    {                                                                                          \
        return ct__call1(&ct__op_##NAME, "ct_" #NAME, a, 0, 0, 0);                             \
    }
CT__UNARY_OP(neg)
CT__UNARY_OP(abs)
CT__UNARY_OP(exp)
CT__UNARY_OP(log)
CT__UNARY_OP(log1p)
CT__UNARY_OP(sqrt)
CT__UNARY_OP(rsqrt)
CT__UNARY_OP(sin)
CT__UNARY_OP(cos)
CT__UNARY_OP(sigmoid)
CT__UNARY_OP(tanh)
CT__UNARY_OP(relu)
CT__UNARY_OP(square)
CT__UNARY_OP(reciprocal)
CT__UNARY_OP(logical_not)
CT__UNARY_OP(erf)
CT__UNARY_OP(isnan)
CT__UNARY_OP(isinf)
CT__UNARY_OP(isfinite)
#undef CT__UNARY_OP
#define CT__INPLACE_OP(NAME)                                                                   \
    ct_tensor *ct_##NAME##_(ct_tensor *self)                                                   \
    {                                                                                          \
        return ct__call1(&ct__op_##NAME##_, "ct_" #NAME "_", self, 0, 0, 0);                   \
    }
CT__INPLACE_OP(neg)
CT__INPLACE_OP(abs)
CT__INPLACE_OP(exp)
CT__INPLACE_OP(log)
CT__INPLACE_OP(sqrt)
CT__INPLACE_OP(sigmoid)
CT__INPLACE_OP(tanh)
CT__INPLACE_OP(relu)
#undef CT__INPLACE_OP

/* clamp and clamp_: PyTorch's checks of the bounds; integral bounds on an integer tensor keep
   its dtype (the call's state says so to meta), other bounds compute in the default float
   dtype. */
static ct_tensor *ct__clamp(const ct_op *op, const char *fn, const ct_tensor *a, double min,
                            double max)
{
    if (ct__null(fn, a)) {
        return NULL;
    }
    if (min > max) {
        ct__fail(CT_ERR_VALUE, fn, "min (%g) must be less than or equal to max (%g)", min, max);
        return NULL;
    }
    bool int_path = !ct_dtype_is_floating_point(a->dtype) && a->dtype != CT_BOOL &&
                    (isinf(min) || min == floor(min)) && (isinf(max) || max == floor(max));
    if (int_path) { /* bounds beyond the dtype's range clamp nothing, unless nothing is left */
        bool lo = ct__scalar_fits(min, a->dtype), hi = ct__scalar_fits(max, a->dtype);
        if ((!lo && min > 0) || (!hi && max < 0)) {
            ct__fail(CT_ERR_VALUE, fn, "Clamp %s value %g is outside the representable range "
                     "of %s", !lo && min > 0 ? "min" : "max", !lo && min > 0 ? min : max,
                     ct__dtype_title(a->dtype));
            return NULL;
        }
    }
    const ct_tensor *in[1] = {a};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_f(&c, min);
    ct__call_f(&c, max);
    c.state = int_path ? &c : NULL;
    ct_tensor *out = ct__dispatch(&c);
    if (c.state && c.state != &c) { /* clamp_'s saved old self (float only: no int path) */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

ct_tensor *ct_clamp(const ct_tensor *a, double min, double max)
{
    return ct__clamp(&ct__op_clamp, "ct_clamp", a, min, max);
}

ct_tensor *ct_clamp_(ct_tensor *self, double min, double max)
{
    return ct__clamp(&ct__op_clamp_, "ct_clamp_", self, min, max);
}

/* An integral exponent of an integer power: PyTorch's checks (an int64 scalar, as
   ct__wrap_scalar decides). */
static bool ct__check_int_pow(const char *fn, const ct_tensor *a, double exponent)
{
    if (ct_dtype_is_floating_point(a->dtype) || exponent != floor(exponent) ||
        fabs(exponent) >= 9.2e18) {
        return true;
    }
    if (exponent < 0) {
        ct__fail(CT_ERR_VALUE, fn, "Integers to negative integer powers are not allowed.");
        return false;
    }
    return ct__check_scalar(fn, exponent, a->dtype == CT_BOOL ? CT_INT64 : a->dtype);
}

ct_tensor *ct_pow_scalar(const ct_tensor *a, double exponent)
{
    if (ct__null("ct_pow", a) || !ct__check_int_pow("ct_pow", a, exponent)) {
        return NULL;
    }
    if (!ct_dtype_is_floating_point(a->dtype) && exponent == floor(exponent) &&
        fabs(exponent) < 9.2e18) { /* the integer power of two tensors */
        return ct__call2_scalar(&ct__op_pow, "ct_pow", a, exponent);
    }
    return ct__call1(&ct__op_pow_scalar, "ct_pow", a, 1, exponent, 0);
}

ct_tensor *ct_pow_(ct_tensor *self, double exponent)
{
    if (ct__null("ct_pow_", self) || !ct__check_int_pow("ct_pow_", self, exponent)) {
        return NULL;
    }
    return ct__call1(&ct__op_pow_, "ct_pow_", self, 1, exponent, 0);
}

/* A call over the tensors x, a and (n == 3) b, with the scalar attribute *value when value is
   not NULL. */
static ct_tensor *ct__call3(const ct_op *op, const char *fn, int n, const ct_tensor *x,
                            const ct_tensor *a, const ct_tensor *b, const double *value)
{
    const ct_tensor *in[3] = {x, a, b};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n);
    if (value) {
        ct__call_f(&c, *value);
    }
    ct_tensor *out = ct__dispatch(&c);
    if (c.state) { /* an in-place op's saved old self */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

ct_tensor *ct_addcmul(const ct_tensor *input, const ct_tensor *tensor1, const ct_tensor *tensor2,
                      double value)
{
    return ct__call3(&ct__op_addcmul, "ct_addcmul", 3, input, tensor1, tensor2, &value);
}

ct_tensor *ct_addcmul_(ct_tensor *self, const ct_tensor *tensor1, const ct_tensor *tensor2,
                       double value)
{
    return ct__call3(&ct__op_addcmul_, "ct_addcmul_", 3, self, tensor1, tensor2, &value);
}

ct_tensor *ct_addcdiv(const ct_tensor *input, const ct_tensor *tensor1, const ct_tensor *tensor2,
                      double value)
{
    return ct__call3(&ct__op_addcdiv, "ct_addcdiv", 3, input, tensor1, tensor2, &value);
}

ct_tensor *ct_addcdiv_(ct_tensor *self, const ct_tensor *tensor1, const ct_tensor *tensor2,
                       double value)
{
    return ct__call3(&ct__op_addcdiv_, "ct_addcdiv_", 3, self, tensor1, tensor2, &value);
}

ct_tensor *ct_lerp(const ct_tensor *input, const ct_tensor *end, const ct_tensor *weight)
{
    return ct__call3(&ct__op_lerp, "ct_lerp", 3, input, end, weight, NULL);
}

ct_tensor *ct_lerp_scalar(const ct_tensor *input, const ct_tensor *end, double weight)
{
    return ct__call3(&ct__op_lerp_scalar, "ct_lerp_scalar", 2, input, end, NULL, &weight);
}

ct_tensor *ct_lerp_(ct_tensor *self, const ct_tensor *end, const ct_tensor *weight)
{
    return ct__call3(&ct__op_lerp_, "ct_lerp_", 3, self, end, weight, NULL);
}

ct_tensor *ct_lerp_scalar_(ct_tensor *self, const ct_tensor *end, double weight)
{
    return ct__call3(&ct__op_lerp_scalar_, "ct_lerp_scalar_", 2, self, end, NULL, &weight);
}

void ct__relu_inplace_kernel(ct_tensor *t)
{
    double params[2] = {0, 0};
    const ct_tensor *in = t;
    ct__iter it;
    ct__iter_build(&it, t, &in, 1);
    ct__iter_run(&it, ct__loops_relu[t->dtype], params);
}

ct_tensor *ct_where(const ct_tensor *cond, const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[3] = {cond, a, b};
    ct_op_call c;
    ct__call_init(&c, &ct__op_where, "ct_where", in, 3);
    return ct__dispatch(&c);
}

ct_tensor *ct_fill_(ct_tensor *self, double value)
{
    return ct__call1(&ct__op_fill_, "ct_fill_", self, 1, value, 0);
}

ct_tensor *ct_zero_(ct_tensor *self)
{
    return ct__call1(&ct__op_fill_, "ct_zero_", self, 1, 0.0, 0);
}

ct_tensor *ct_copy_(ct_tensor *self, const ct_tensor *src)
{
    ct__copy_state s = {{self, src}, NULL};
    ct_op_call c;
    ct__call_init(&c, &ct__op_copy_, "ct_copy_", s.in, 2);
    c.state = &s;
    ct_tensor *out = ct__dispatch(&c);
    ct__release(s.moved);
    return out;
}

ct_tensor *ct_clone(const ct_tensor *a)
{
    return ct__call1(&ct__op_clone, "ct_clone", a, 0, 0, 0);
}

ct_tensor *ct_to_dtype(const ct_tensor *a, ct_dtype dtype)
{
    const char *fn = "ct_to_dtype";
    if (ct__null(fn, a) || !ct__check_dtype_arg(fn, dtype)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    if (a->dtype == dtype) {
        return ct_alias(a);
    }
    const ct_tensor *in[1] = {a};
    ct_op_call c;
    ct__call_init(&c, &ct__op_to_dtype, fn, in, 1);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

/* input on device (the caller checked both), as an unscoped reference. */
static ct_tensor *ct__transfer(const ct_tensor *input, ct_device device)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_to_device, "ct_to_device", in, 1);
    ct__call_i(&c, device.type);
    ct__call_i(&c, device.index);
    ct_scope_begin();
    ct_tensor *r = ct_retain(ct__dispatch(&c));
    ct_scope_end();
    return r;
}

static ct_tensor *ct__to_device(const char *fn, const ct_tensor *input, ct_device device)
{
    if (ct__null(fn, input)) {
        return NULL;
    }
    if ((int)device.type < 0 || (int)device.type >= (int)CT_DEVICE_TYPE_COUNT) {
        ct__fail(CT_ERR_VALUE, fn, "invalid device type %d", (int)device.type);
        return NULL;
    }
    device = ct_make_device(device.type, device.index);
    if (ct__same_device(input->storage->device, device)) {
        return ct_alias(input);
    }
    return ct__scoped(ct__transfer(input, device));
}

ct_tensor *ct_to_device(const ct_tensor *input, ct_device device)
{
    return ct__to_device("ct_to_device", input, device);
}

ct_tensor *ct_cpu(const ct_tensor *input)
{
    return ct__to_device("ct_cpu", input, ct_device_cpu());
}

ct_tensor *ct_pin_memory(const ct_tensor *input)
{
    const char *fn = "ct_pin_memory";
    if (ct__null(fn, input)) {
        return NULL;
    }
    if (input->storage->pinned) {
        return ct_alias(input);
    }
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_pin_memory, fn, in, 1);
    return ct__dispatch(&c);
}

/* ---- public functions of issue 7's second slice --------------------------------------------- */
#define CT__UNARY_OP(NAME)                                                                     \
    ct_tensor *ct_##NAME(const ct_tensor *a)                                                   \
    {                                                                                          \
        return ct__call1(&ct__op_##NAME, "ct_" #NAME, a, 0, 0, 0);                             \
    }
CT__UNARY_OP(sign)
CT__UNARY_OP(sgn)
CT__UNARY_OP(expm1)
CT__UNARY_OP(exp2)
CT__UNARY_OP(log2)
CT__UNARY_OP(log10)
CT__UNARY_OP(tan)
CT__UNARY_OP(asin)
CT__UNARY_OP(acos)
CT__UNARY_OP(atan)
CT__UNARY_OP(sinh)
CT__UNARY_OP(cosh)
CT__UNARY_OP(asinh)
CT__UNARY_OP(acosh)
CT__UNARY_OP(atanh)
CT__UNARY_OP(erfc)
CT__UNARY_OP(erfinv)
CT__UNARY_OP(floor)
CT__UNARY_OP(ceil)
CT__UNARY_OP(round)
CT__UNARY_OP(trunc)
CT__UNARY_OP(frac)
CT__UNARY_OP(signbit)
CT__UNARY_OP(isposinf)
CT__UNARY_OP(isneginf)
CT__UNARY_OP(isreal)
CT__UNARY_OP(bitwise_not)
#undef CT__UNARY_OP
#define CT__INPLACE_OP(NAME)                                                                   \
    ct_tensor *ct_##NAME##_(ct_tensor *self)                                                   \
    {                                                                                          \
        return ct__call1(&ct__op_##NAME##_, "ct_" #NAME "_", self, 0, 0, 0);                   \
    }
CT__INPLACE_OP(expm1)
CT__INPLACE_OP(exp2)
CT__INPLACE_OP(log2)
CT__INPLACE_OP(log10)
CT__INPLACE_OP(tan)
CT__INPLACE_OP(asin)
CT__INPLACE_OP(acos)
CT__INPLACE_OP(atan)
CT__INPLACE_OP(sinh)
CT__INPLACE_OP(cosh)
CT__INPLACE_OP(asinh)
CT__INPLACE_OP(acosh)
CT__INPLACE_OP(atanh)
CT__INPLACE_OP(erfc)
CT__INPLACE_OP(erfinv)
CT__INPLACE_OP(floor)
CT__INPLACE_OP(ceil)
CT__INPLACE_OP(round)
CT__INPLACE_OP(trunc)
CT__INPLACE_OP(frac)
CT__INPLACE_OP(sign)
CT__INPLACE_OP(sgn)
CT__INPLACE_OP(bitwise_not)
#undef CT__INPLACE_OP
#define CT__BINARY_OP(NAME)                                                                    \
    ct_tensor *ct_##NAME(const ct_tensor *a, const ct_tensor *b)                               \
    {                                                                                          \
        return ct__call2(&ct__op_##NAME, "ct_" #NAME, a, b, 1.0);                              \
    }
CT__BINARY_OP(hypot)
CT__BINARY_OP(atan2)
CT__BINARY_OP(logaddexp)
CT__BINARY_OP(logaddexp2)
CT__BINARY_OP(xlogy)
CT__BINARY_OP(fmax)
CT__BINARY_OP(fmin)
CT__BINARY_OP(fmod)
CT__BINARY_OP(remainder)
CT__BINARY_OP(floor_divide)
CT__BINARY_OP(bitwise_and)
CT__BINARY_OP(bitwise_or)
CT__BINARY_OP(bitwise_xor)
CT__BINARY_OP(bitwise_left_shift)
CT__BINARY_OP(bitwise_right_shift)
CT__BINARY_OP(logical_xor)
#undef CT__BINARY_OP

#define CT__BINARY_INPLACE_OP(NAME)                                                            \
    ct_tensor *ct_##NAME##_(ct_tensor *self, const ct_tensor *other)                           \
    {                                                                                          \
        return ct__call2(&ct__op_##NAME##_, "ct_" #NAME "_", self, other, 1.0);                \
    }
CT__BINARY_INPLACE_OP(fmod)
CT__BINARY_INPLACE_OP(remainder)
CT__BINARY_INPLACE_OP(floor_divide)
CT__BINARY_INPLACE_OP(atan2)
CT__BINARY_INPLACE_OP(xlogy)
CT__BINARY_INPLACE_OP(bitwise_and)
CT__BINARY_INPLACE_OP(bitwise_or)
CT__BINARY_INPLACE_OP(bitwise_xor)
CT__BINARY_INPLACE_OP(bitwise_left_shift)
CT__BINARY_INPLACE_OP(bitwise_right_shift)
CT__BINARY_INPLACE_OP(logical_xor)
#undef CT__BINARY_INPLACE_OP

ct_tensor *ct_logit_(ct_tensor *self, double eps)
{
    return ct__call1(&ct__op_logit_, "ct_logit_", self, 1, eps, 0);
}

/* nan_to_num and nan_to_num_: a NULL posinf/neginf is PyTorch's None, the dtype's largest
   and lowest finite value (float dtypes; integers and bool are copied). */
static ct_tensor *ct__nan_to_num(const ct_op *op, const char *fn, const ct_tensor *input,
                                 double nan, const double *posinf, const double *neginf)
{
    if (ct__null(fn, input)) {
        return NULL;
    }
    double big = input->dtype == CT_FLOAT32 ? (double)FLT_MAX : DBL_MAX;
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_f(&c, nan);
    ct__call_f(&c, posinf ? *posinf : big);
    ct__call_f(&c, neginf ? *neginf : -big);
    ct_tensor *out = ct__dispatch(&c);
    if (c.state) { /* an in-place op's saved old self */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

ct_tensor *ct_nan_to_num(const ct_tensor *input, double nan, const double *posinf,
                         const double *neginf)
{
    return ct__nan_to_num(&ct__op_nan_to_num, "ct_nan_to_num", input, nan, posinf, neginf);
}

ct_tensor *ct_nan_to_num_(ct_tensor *self, double nan, const double *posinf, const double *neginf)
{
    return ct__nan_to_num(&ct__op_nan_to_num_, "ct_nan_to_num_", self, nan, posinf, neginf);
}

ct_tensor *ct_logit(const ct_tensor *input, double eps)
{
    return ct__call1(&ct__op_logit, "ct_logit", input, 1, eps, 0);
}

ct_tensor *ct_isclose(const ct_tensor *input, const ct_tensor *other, double rtol, double atol,
                      bool equal_nan)
{
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, &ct__op_isclose, "ct_isclose", in, 2);
    ct__call_f(&c, rtol);
    ct__call_f(&c, atol);
    ct__call_i(&c, equal_nan);
    return ct__dispatch(&c);
}

/* A foreach call over self[0..n-1] and other[0..n_other-1] (other NULL: none), with the scalar
   *scalar when not NULL; out receives the results of out-of-place ops. PyTorch's list checks. */
static ct_tensor *ct__foreach(const ct_op *op, const char *fn, const ct_tensor *const *self,
                              int n, const ct_tensor *const *other, int n_other,
                              const double *scalar, ct_tensor **out)
{
    if (ct__null(fn, self) || (other && ct__null(fn, other))) {
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, fn, "Tensor list must have at least one tensor.");
        return NULL;
    }
    if (other && n_other != n) {
        ct__fail(CT_ERR_VALUE, fn, "Tensor lists must have the same number of tensors, got %d "
                 "and %d", n, n_other);
        return NULL;
    }
    int n_in = other ? 2 * n : n;
    const ct_tensor **in = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n_in);
    if (!in) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return NULL;
    }
    memcpy(in, self, sizeof(ct_tensor *) * (size_t)n);
    if (other) {
        memcpy(in + n, other, sizeof(ct_tensor *) * (size_t)n);
    }
    ct__foreach_state st = {n, out};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n_in);
    if (scalar) {
        ct__call_f(&c, *scalar);
    }
    c.state = &st;
    ct_tensor *r = ct__dispatch(&c);
    ct__free(in);
    return r;
}

ct_status ct_foreach_add_(ct_tensor *const *self, int n, const ct_tensor *const *other,
                          int n_other, double alpha)
{
    return ct__foreach(&ct__op_foreach_add_, "ct_foreach_add_", (const ct_tensor *const *)self, n,
                       other, n_other, &alpha, NULL) ? CT_OK : ct_error_code();
}

ct_status ct_foreach_mul_(ct_tensor *const *self, int n, const ct_tensor *const *other,
                          int n_other)
{
    return ct__foreach(&ct__op_foreach_mul_, "ct_foreach_mul_", (const ct_tensor *const *)self, n,
                       other, n_other, NULL, NULL) ? CT_OK : ct_error_code();
}

ct_status ct_foreach_lerp_(ct_tensor *const *self, int n, const ct_tensor *const *tensors1,
                           int n_tensors1, double weight)
{
    return ct__foreach(&ct__op_foreach_lerp_, "ct_foreach_lerp_", (const ct_tensor *const *)self,
                       n, tensors1, n_tensors1, &weight, NULL) ? CT_OK : ct_error_code();
}

ct_status ct_foreach_zero_(ct_tensor *const *self, int n)
{
    return ct__foreach(&ct__op_foreach_zero_, "ct_foreach_zero_", (const ct_tensor *const *)self,
                       n, NULL, 0, NULL, NULL) ? CT_OK : ct_error_code();
}

int ct_foreach_sqrt(const ct_tensor *const *self, int n, ct_tensor **out, int capacity)
{
    const char *fn = "ct_foreach_sqrt";
    if (ct__null(fn, self) || ct__null(fn, out)) {
        return -1;
    }
    if (capacity < n) {
        ct__fail(CT_ERR_VALUE, fn, "the output array holds %d tensors but the list has %d",
                 capacity, n);
        return -1;
    }
    ct_tensor *r = ct__foreach(&ct__op_foreach_sqrt, fn, self, n, NULL, 0, NULL, out);
    if (!r) {
        return -1;
    }
    out[0] = r; /* scoped by the entry; the others come back unscoped */
    for (int k = 1; k < n; k++) {
        ct__scoped(out[k]);
    }
    return n;
}
CT__GLUE_END
CT__VECTORIZE_END
