/* nn/activation.c - activation functions: a table of per-element math (forward and the
 * derivative of derivatives.yaml) run by one strided loop, composites for the rest, and
 * the activation modules.
 *
 * Legend: x (any shape), g (gradient of the output, x's shape), p (the op's scalars).
 * Each activation has a forward and a backward row function per float type over n
 * contiguous elements (the compiler vectorizes them; float32 uses vmath.h's exp/tanh/erf);
 * one loop hands them contiguous runs, or gathers strided operands into blocks.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../ops/softmax.h"
#include "../ops/view.h"
#include "../ops/vmath.h"
#include "../autograd/autograd.h"
#include "state_dict.h"
#include "module.h"
#include "activation.h"

#include <float.h>

CT__VECTORIZE_BEGIN
CT__FP_SPECULATE

typedef enum ct__act_id {
    CT__ACT_GELU, CT__ACT_GELU_TANH, CT__ACT_SILU, CT__ACT_LEAKY_RELU, CT__ACT_ELU,
    CT__ACT_SOFTPLUS, CT__ACT_HARDSWISH, CT__ACT_HARDSIGMOID, CT__ACT_HARDTANH, CT__ACT_MISH,
    CT__ACT_LOGSIGMOID, CT__ACT_SOFTSHRINK, CT__ACT_HARDSHRINK, CT__ACT_THRESHOLD, CT__ACT_COUNT
} ct__act_id;

/* ---- per-element math: fw(x, p) and bw(g, x, p) ------------------------------------------ */
/* The standard normal's cdf at x, and its pdf into *pdf unless pdf is NULL: float32 as
   PyTorch's vectorized GELU kernels (vmath.h's ct__erff_as, whose exp the pdf shares), float64
   (below) by libm's erf and exp. */
CT__FORCE_INLINE float ct__act_cdf_f32(float x, float *pdf)
{
    float z = x * 0.70710678118654752440f;
    float e = ct__expf(-(z * z));
    if (pdf) {
        *pdf = e * 0.39894228040143267794f;
    }
    return 0.5f * (1.0f + ct__erff_as(z, e));
}

/* elu: p = alpha, scale, input_scale; softplus: beta, threshold; hardtanh: min, max;
   leaky_relu: slope; shrinks: lambd; threshold: threshold, value. */
#define CT__ACT_MATH_HOT(T, S, F, EXP, TANH)                                                   \
    CT__FORCE_INLINE T ct__act_gelu_fw_##S(T x, const T *p)                                     \
    {                                                                                           \
        (void)p;                                                                                \
        return x * ct__act_cdf_##S(x, NULL);                                                    \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_gelu_bw_##S(T g, T x, const T *p)                                \
    {                                                                                           \
        T pdf, cdf = ct__act_cdf_##S(x, &pdf);                                                  \
        (void)p;                                                                                \
        return g * fma##F(x, pdf, cdf);                                                         \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_gelu_tanh_fw_##S(T x, const T *p)                                \
    {                                                                                           \
        (void)p;                                                                                \
        T inner = (T)0.79788456080286535588 * fma##F((T)0.044715 * x, x * x, x);               \
        return (T)0.5 * x * ((T)1 + TANH(inner));                                               \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_gelu_tanh_bw_##S(T g, T x, const T *p)                           \
    {                                                                                           \
        (void)p;                                                                                \
        T x_sq = x * x;                                                                         \
        T t = TANH((T)0.79788456080286535588 * fma##F((T)0.044715 * x, x_sq, x));              \
        T left_d = (T)0.5 * ((T)1 + t);                                                         \
        T right_d = (T)0.5 * x * ((T)1 - t * t) * (T)0.79788456080286535588 *                   \
                    fma##F((T)(3 * 0.044715), x_sq, (T)1);                                      \
        return g * (left_d + right_d);                                                          \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_silu_fw_##S(T x, const T *p)                                     \
    {                                                                                           \
        (void)p;                                                                                \
        return x / ((T)1 + EXP(-x));                                                            \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_silu_bw_##S(T g, T x, const T *p)                                \
    {                                                                                           \
        (void)p;                                                                                \
        T s = (T)1 / ((T)1 + EXP(-x));                                                          \
        return g * s * fma##F(x, (T)1 - s, (T)1);                                               \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_leaky_relu_fw_##S(T x, const T *p) { return x > 0 ? x : x * p[0]; } \
    CT__FORCE_INLINE T ct__act_leaky_relu_bw_##S(T g, T x, const T *p)                          \
    {                                                                                           \
        return x > 0 ? g : g * p[0];                                                            \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardswish_fw_##S(T x, const T *p)                                \
    {                                                                                           \
        (void)p;                                                                                \
        T r = x + (T)3;                                                                         \
        r = r < 0 ? (T)0 : (r > 6 ? (T)6 : r);                                                  \
        return x * r / (T)6;                                                                    \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardswish_bw_##S(T g, T x, const T *p)                           \
    {                                                                                           \
        (void)p;                                                                                \
        return x <= (T)-3 ? (T)0 : (x < (T)3 ? g * (x / (T)3 + (T)0.5) : g);                   \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardsigmoid_fw_##S(T x, const T *p)                              \
    {                                                                                           \
        (void)p;                                                                                \
        T r = x + (T)3;                                                                         \
        return (r < 0 ? (T)0 : (r > 6 ? (T)6 : r)) / (T)6;                                      \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardsigmoid_bw_##S(T g, T x, const T *p)                         \
    {                                                                                           \
        (void)p;                                                                                \
        return x > (T)-3 && x < (T)3 ? g * (T)(1.0f / 6.0f) : (T)0; /* float 1/6, as PyTorch */ \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardtanh_fw_##S(T x, const T *p)                                 \
    {                                                                                           \
        return x != x ? x : (x < p[0] ? p[0] : (x > p[1] ? p[1] : x));                          \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardtanh_bw_##S(T g, T x, const T *p)                            \
    {                                                                                           \
        return x <= p[0] || x >= p[1] ? (T)0 : g;                                               \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_softshrink_fw_##S(T x, const T *p)                               \
    {                                                                                           \
        return x > p[0] ? x - p[0] : (x < -p[0] ? x + p[0] : x * (T)0);                         \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_softshrink_bw_##S(T g, T x, const T *p)                          \
    {                                                                                           \
        return x >= -p[0] && x <= p[0] ? (T)0 : g;                                              \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardshrink_fw_##S(T x, const T *p)                               \
    {                                                                                           \
        return x >= -p[0] && x <= p[0] ? (T)0 : x;                                              \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_hardshrink_bw_##S(T g, T x, const T *p)                          \
    {                                                                                           \
        return x >= -p[0] && x <= p[0] ? (T)0 : g;                                              \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_threshold_fw_##S(T x, const T *p) { return x <= p[0] ? p[1] : x; } \
    CT__FORCE_INLINE T ct__act_threshold_bw_##S(T g, T x, const T *p)                           \
    {                                                                                           \
        return x <= p[0] ? (T)0 : g;                                                            \
    }
CT__ACT_MATH_HOT(float, f32, f, ct__expf, ct__tanhf)

/* ---- row functions and their table -------------------------------------------------------- */
/* The row functions' operands never overlap (the output is a new tensor or a block buffer):
   restrict spares the compiler an aliasing check and a second copy of each loop. */
#if defined(__GNUC__) || defined(__clang__)
#define CT__ACT_RESTRICT __restrict
#else
#define CT__ACT_RESTRICT
#endif

/* A row function: out[i] from a[i] (forward: x) and b[i] (backward: a = g, b = x) for n
   contiguous elements of the function's float type, n a multiple of CT__VEC_BLOCK (its loop
   then has no remainder copies, internal.h); p: the op's scalars. */
typedef void (*ct__act_row_fn)(void *out, const void *a, const void *b, int64_t n,
                               const double *p);

typedef struct ct__act_rows {
    ct__act_row_fn fw_f32, fw_f64, bw_f32, bw_f64;
} ct__act_rows;

#define CT__ACT_ROWS_T(NAME, T, S) CT__ACT_ROWS_FROM(NAME, T, S, 0, 0)
/* The forward loop starts at element FW0 (an expression of x, y and n), the backward one at
   BW0 (of g, x, dx and n). */
#define CT__ACT_ROWS_FROM(NAME, T, S, FW0, BW0)                                                 \
    static void ct__act_##NAME##_fwrow_##S(void *out, const void *a, const void *b, int64_t n,  \
                                           const double *p)                                     \
    {                                                                                           \
        const T q[3] = {(T)p[0], (T)p[1], (T)p[2]};                                             \
        const T *CT__ACT_RESTRICT x = (const T *)a;                                             \
        T *CT__ACT_RESTRICT y = (T *)out;                                                       \
        (void)b;                                                                                \
        for (int64_t i = FW0; i < CT__WHOLE_BLOCKS(n); i++) {                                   \
            y[i] = ct__act_##NAME##_fw_##S(x[i], q);                                            \
        }                                                                                       \
    }                                                                                           \
    static void ct__act_##NAME##_bwrow_##S(void *out, const void *a, const void *b, int64_t n,  \
                                           const double *p)                                     \
    {                                                                                           \
        const T q[3] = {(T)p[0], (T)p[1], (T)p[2]};                                             \
        const T *CT__ACT_RESTRICT g = (const T *)a, *CT__ACT_RESTRICT x = (const T *)b;         \
        T *CT__ACT_RESTRICT dx = (T *)out;                                                      \
        for (int64_t i = BW0; i < CT__WHOLE_BLOCKS(n); i++) {                                   \
            dx[i] = ct__act_##NAME##_bw_##S(g[i], x[i], q);                                     \
        }                                                                                       \
    }
/* the activations vectorized in float32 (vmath.h's functions); the cold ones and every
   float64 loop call libm (scalar loops: little to compile) */
#define CT__ACT_HOT(X)                                                                          \
    X(gelu_tanh) X(silu) X(leaky_relu) X(hardswish) X(hardsigmoid) X(hardtanh) X(softshrink)    \
    X(hardshrink) X(threshold)
#define CT__ACT_COLD(X) X(elu) X(softplus) X(mish) X(logsigmoid)
#define CT__ACT_ROWS_F32(NAME) CT__ACT_ROWS_T(NAME, float, f32)
#define CT__ACT_ROWS_F64(NAME) CT__ACT_ROWS_T(NAME, double, f64)
CT__ACT_HOT(CT__ACT_ROWS_F32)
/* GELU's float32 loops in gcc's AVX-512 vectors of 16 lanes where the target has them
   (-march=native prefers 8): every lane runs the same operations, the results do not change */
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
#pragma GCC push_options
#pragma GCC target("prefer-vector-width=512")
#endif
#if defined(CT__HAS_NEON32)
/* 32-bit ARM: GELU's whole 4-lane chunks by vmath.h's NEON functions (gcc vectorizes no
   float32 arithmetic there), the same operations lane by lane; the lanes
   ct__neon32_lane_exact rejects (zero, subnormal or NaN x or result) by the scalar function.
   Each returns the number of elements done. */
static inline float32x4_t ct__act_cdf_v4(float32x4_t x, float32x4_t *pdf)
{
    float32x4_t z = vmulq_f32(x, vdupq_n_f32(0.70710678118654752440f));
    float32x4_t e = ct__expf_v4(vnegq_f32(vmulq_f32(z, z)));
    *pdf = vmulq_f32(e, vdupq_n_f32(0.39894228040143267794f));
    return vmulq_f32(vdupq_n_f32(0.5f), vaddq_f32(vdupq_n_f32(1.0f), ct__erff_as_v4(z, e)));
}

static int64_t ct__act_gelu_fw_vpart(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i), pdf;
        float32x4_t r = vmulq_f32(v, ct__act_cdf_v4(v, &pdf));
        vst1q_f32(y + i, r);
        if (ct__neon32_exact(v, r)) {
            continue;
        }
        for (int k = 0; k < 4; k++) {
            if (!ct__neon32_lane_exact(x[i + k], y[i + k])) {
                y[i + k] = ct__act_gelu_fw_f32(x[i + k], NULL);
            }
        }
    }
    return i;
}

static int64_t ct__act_gelu_bw_vpart(const float *g, const float *x, float *dx, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i), pdf;
        float32x4_t cdf = ct__act_cdf_v4(v, &pdf);
        float32x4_t r = vmulq_f32(vld1q_f32(g + i), vfmaq_f32(cdf, v, pdf));
        vst1q_f32(dx + i, r);
        if (ct__neon32_exact(v, r)) {
            continue;
        }
        for (int k = 0; k < 4; k++) {
            if (!ct__neon32_lane_exact(x[i + k], dx[i + k])) {
                dx[i + k] = ct__act_gelu_bw_f32(g[i + k], x[i + k], NULL);
            }
        }
    }
    return i;
}
CT__ACT_ROWS_FROM(gelu, float, f32, ct__act_gelu_fw_vpart(x, y, n),
                  ct__act_gelu_bw_vpart(g, x, dx, n))
#else
CT__ACT_ROWS_F32(gelu)
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
#pragma GCC pop_options
#endif
CT__VECTORIZE_END

CT__FORCE_INLINE double ct__act_cdf_f64(double x, double *pdf)
{
    if (pdf) {
        *pdf = exp(-0.5 * x * x) * 0.39894228040143267794;
    }
    return 0.5 * (1.0 + erf(x * 0.70710678118654752440));
}
CT__ACT_MATH_HOT(double, f64, , exp, tanh)
/* the cold activations (exp, expm1, log1p and tanh of libm in both float types: scalar
   loops, little to compile) */
#define CT__ACT_MATH_COLD(T, S, F, EXP, EXPM1, LOG1P, TANH)                                    \
    CT__FORCE_INLINE T ct__act_elu_fw_##S(T x, const T *p)                                      \
    {                                                                                           \
        return x > 0 ? x * p[1] : EXPM1(x * p[2]) * (p[0] * p[1]);                              \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_elu_bw_##S(T g, T x, const T *p)                                 \
    {                                                                                           \
        return x > 0 ? g * p[1] : g * (p[2] * p[0] * p[1]) * EXP(x * p[2]);                     \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_softplus_fw_##S(T x, const T *p)                                 \
    {                                                                                           \
        return x * p[0] > p[1] ? x : LOG1P(EXP(x * p[0])) / p[0];                               \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_softplus_bw_##S(T g, T x, const T *p)                            \
    {                                                                                           \
        T z = EXP(x * p[0]);                                                                    \
        return x * p[0] > p[1] ? g : g * z / (z + (T)1);                                        \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_mish_fw_##S(T x, const T *p)                                     \
    {                                                                                           \
        (void)p;                                                                                \
        return x * TANH(LOG1P(EXP(x)));                                                         \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_mish_bw_##S(T g, T x, const T *p)                                \
    {                                                                                           \
        (void)p;                                                                                \
        T s = (T)1 / ((T)1 + EXP(-x)), t = TANH(LOG1P(EXP(x)));                                 \
        return g * fma##F(x * s, (T)1 - t * t, t);                                              \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_logsigmoid_fw_##S(T x, const T *p)                               \
    {                                                                                           \
        (void)p;                                                                                \
        return (x < 0 ? x : (T)0) - LOG1P(EXP(-fabs##F(x)));                                   \
    }                                                                                           \
    CT__FORCE_INLINE T ct__act_logsigmoid_bw_##S(T g, T x, const T *p)                          \
    {                                                                                           \
        (void)p;                                                                                \
        T z = EXP(-fabs##F(x));                                                                 \
        return g * ((x < 0 ? (T)1 : (T)0) - (x < 0 ? (T)1 : (T)-1) * (z / ((T)1 + z)));         \
    }
CT__ACT_MATH_COLD(float, f32, f, expf, expm1f, log1pf, tanhf)
CT__ACT_MATH_COLD(double, f64, , exp, expm1, log1p, tanh)
CT__ACT_ROWS_F64(gelu)
CT__ACT_HOT(CT__ACT_ROWS_F64)
CT__ACT_COLD(CT__ACT_ROWS_F32)
CT__ACT_COLD(CT__ACT_ROWS_F64)
#undef CT__ACT_MATH_HOT
#undef CT__ACT_MATH_COLD
#undef CT__ACT_HOT
#undef CT__ACT_COLD
#undef CT__ACT_ROWS_F32
#undef CT__ACT_ROWS_F64

#define CT__ACT_ENTRY(NAME)                                                                     \
    {ct__act_##NAME##_fwrow_f32, ct__act_##NAME##_fwrow_f64, ct__act_##NAME##_bwrow_f32,       \
     ct__act_##NAME##_bwrow_f64}
static const ct__act_rows ct__act_table[CT__ACT_COUNT] = {
    CT__ACT_ENTRY(gelu),       CT__ACT_ENTRY(gelu_tanh),   CT__ACT_ENTRY(silu),
    CT__ACT_ENTRY(leaky_relu), CT__ACT_ENTRY(elu),         CT__ACT_ENTRY(softplus),
    CT__ACT_ENTRY(hardswish),  CT__ACT_ENTRY(hardsigmoid), CT__ACT_ENTRY(hardtanh),
    CT__ACT_ENTRY(mish),       CT__ACT_ENTRY(logsigmoid),  CT__ACT_ENTRY(softshrink),
    CT__ACT_ENTRY(hardshrink), CT__ACT_ENTRY(threshold)};
#undef CT__ACT_ROWS_T
#undef CT__ACT_ENTRY
#undef CT__ACT_RESTRICT

/* ---- the loop --------------------------------------------------------------------------- */
/* What the loop runs: the row function (of the kernel's dtype; float32 for float16 and
   bfloat16), its operands' count (1: forward x, 2: backward g, x), the element size of the
   row function's type, the scalars, and the half dtype of the operands (else float32). */
typedef struct ct__act_job {
    ct__act_row_fn row;
    int nin;
    int64_t es;
    double p[3];
    ct_dtype half;
} ct__act_job;

#define CT__ACT_BLOCK 256

/* Contiguous operands go to the row function as they are, in whole blocks; strided ones and
   the tail are gathered into blocks (the unused lanes zero) and the output scattered back,
   half ones converted to float32 blocks and the output rounded back once per element
   (PyTorch's CPU kernels compute those in float32). */
static void ct__act_loop(char **d, const int64_t *s, int64_t n, const void *pp)
{
    const ct__act_job *j = (const ct__act_job *)pp;
    int64_t es = j->es, i = 0;
    bool half = j->half != CT_FLOAT32;
    bool dense = !half && s[0] == es && s[1] == es && (j->nin < 2 || s[2] == es);
    if (dense) {
        i = CT__WHOLE_BLOCKS(n);
        j->row(d[0], d[1], j->nin > 1 ? d[2] : NULL, i, j->p);
    }
    double buf[3][CT__ACT_BLOCK]; /* room for CT__ACT_BLOCK elements of either float type */
    for (; i < n; i += CT__ACT_BLOCK) {
        int64_t m = n - i < CT__ACT_BLOCK ? n - i : CT__ACT_BLOCK;
        int64_t mb = CT__WHOLE_BLOCKS(m + CT__VEC_BLOCK - 1);
        for (int k = 1; k <= j->nin; k++) {
            if (half) {
                ct__half_to_float_n(j->half, d[k] + i * s[k], s[k], (float *)buf[k], m);
            }
            for (int64_t e = 0; e < m && !half; e++) {
                memcpy((char *)buf[k] + e * es, d[k] + (i + e) * s[k], (size_t)es);
            }
            memset((char *)buf[k] + m * es, 0, (size_t)((mb - m) * es));
        }
        j->row(buf[0], buf[1], j->nin > 1 ? buf[2] : NULL, mb, j->p);
        if (half) {
            ct__float_to_half_n(j->half, (const float *)buf[0], d[0] + i * s[0], s[0], m);
        }
        for (int64_t e = 0; e < m && !half; e++) {
            memcpy(d[0] + (i + e) * s[0], (char *)buf[0] + e * es, (size_t)es);
        }
    }
}

/* The row function of activation id (its backward when bw) for dtype. */
static ct__act_row_fn ct__act_row(int id, bool bw, ct_dtype dtype)
{
    const ct__act_rows *r = &ct__act_table[id];
    bool f32 = dtype == CT_FLOAT32;
    return bw ? (f32 ? r->bw_f32 : r->bw_f64) : (f32 ? r->fw_f32 : r->fw_f64);
}

/* The kernel of every activation op and its backward, float16 and bfloat16 included: inputs
   x (forward) or g, x (backward); attributes the scalars; op->variant the activation id. */
static ct_status ct__act_kernel(ct_op_call *c)
{
    ct__act_job j;
    j.nin = c->n_inputs;
    j.half = ct__is_half(c->dtype) ? c->dtype : CT_FLOAT32;
    ct_dtype rt = j.half != CT_FLOAT32 ? CT_FLOAT32 : c->dtype; /* the row function's type */
    j.row = ct__act_row(c->op->variant, c->n_inputs == 2, rt);
    j.es = (int64_t)ct_dtype_size(rt);
    for (int k = 0; k < 3; k++) {
        j.p[k] = k < c->n_attrs ? c->attrs[k].f : 0;
    }
    ct__iter it;
    ct__iter_build(&it, c->outputs[0], c->inputs, c->n_inputs);
    ct__iter_run(&it, ct__act_loop, &j);
    return CT_OK;
}

/* The op's short name ("gelu" of "aten::gelu") for messages */
static const char *ct__act_name(const ct_op *op)
{
    return op->name + 6;
}

/* Checks that the last input (x) is floating point. */
static bool ct__act_float_check(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[c->n_inputs - 1];
    if (!ct_dtype_is_floating_point(x->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"%s\" not implemented for '%s'", ct__act_name(c->op),
                 ct__dtype_title(x->dtype));
        return false;
    }
    return true;
}

CT__GLUE_BEGIN
/* Meta of the activations (x) and their backward ops (g, x, the same shape): the output has
   x's shape and dtype. */
static bool ct__act_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[c->n_inputs - 1];
    if (!ct__act_float_check(c)) {
        return false;
    }
    c->dtype = x->dtype;
    return ct__op_output(c, x->sizes, x->ndim, x->dtype) != NULL;
}

static ct_tensor *ct__act_grad(const ct_node *n, const ct_tensor *g, const ct_tensor *x);

/* dx = g * f'(x): the activation's backward op, with the scalars the node kept */
static void ct__act_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0);
    if (x) {
        gi[0] = ct__act_grad(n, g, x);
    }
}

/* Saved: x; the scalars in f[0..2]; i[0] the activation id */
static void ct__act_record(ct_node *n, const ct_op_call *c)
{
    for (int k = 0; k < c->n_attrs && k < 3; k++) {
        n->f[k] = c->attrs[k].f;
    }
    n->i[0] = c->op->variant;
    ct__save(n, c->inputs[0]);
}

/* ---- composites ------------------------------------------------------------------------------ */
/* softsign: x / (|x| + 1), as PyTorch's Python definition */
static ct_status ct__softsign_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct_div(c->inputs[0], ct_add_scalar(ct_abs(c->inputs[0]), 1)));
}

/* tanhshrink: x - tanh(x) */
static ct_status ct__tanhshrink_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct_sub(c->inputs[0], ct_tanh(c->inputs[0])));
}

/* softmin: softmax(-x, dim) */
static ct_status ct__softmin_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct_softmax(ct_neg(c->inputs[0]), c->attrs[0].i));
}

/* glu: a * sigmoid(b) of the halves along dim */
static ct_status ct__glu_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *h[2] = {NULL, NULL};
    int k = ct_chunk(c->inputs[0], 2, c->attrs[0].i, h, 2);
    return ct__composite_end(c, k == 2 ? ct_mul(h[0], ct_sigmoid(h[1])) : NULL);
}

static bool ct__glu_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    if (x->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, c->fn, "glu does not support scalars because halving size must "
                 "be even");
        return false;
    }
    int64_t d = c->attrs[0].i < 0 ? c->attrs[0].i + x->ndim : c->attrs[0].i;
    if (d < 0 || d >= x->ndim) {
        ct__fail(CT_ERR_INDEX, c->fn, "Dimension out of range (expected to be in range of "
                 "[%d, %d], but got %lld)", -x->ndim, x->ndim - 1, (long long)c->attrs[0].i);
        return false;
    }
    if (x->sizes[d] % 2 != 0) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Halving dimension must be even, but dimension %lld is "
                 "size %lld", (long long)d, (long long)x->sizes[d]);
        return false;
    }
    return true;
}

/* prelu: where(x > 0, x, w * x), w (C) viewed along dim 1 */
static ct_status ct__prelu_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    ct_scope_begin();
    int64_t s[CT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        s[d] = d == 1 ? ct_numel(w) : 1;
    }
    ct_tensor *wv = x->ndim >= 2 ? ct_reshape(w, s, x->ndim) : ct_reshape(w, s, 0);
    return ct__composite_end(c, ct_where(ct_gt_scalar(x, 0), x, ct_mul(wv, x)));
}

static bool ct__prelu_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    int64_t C = x->ndim >= 2 ? x->sizes[1] : 1, P = ct_numel(w);
    if (w->ndim > 1 || (P != 1 && P != C)) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Mismatch of parameter numbers and input channel size. "
                 "Found parameter numbers = %lld and channel size = %lld.", (long long)P,
                 (long long)C);
        return false;
    }
    return true;
}
CT__GLUE_END

/* rrelu in training: x * noise, noise 1 where x > 0, else a uniform draw from [lower, upper)
   per such element in row-major order (PyTorch's rrelu_with_noise CPU kernel) */
static ct_status ct__rrelu_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    double lower = c->attrs[0].f, upper = c->attrs[1].f;
    if (!c->attrs[2].i) {
        ct_scope_begin();
        return ct__composite_end(c, ct_leaky_relu(x, (lower + upper) / 2));
    }
    if (!ct__check_cpu(c->fn, x)) {
        return ct_error_code();
    }
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *xd = ct_contiguous(ct_to_dtype(x, CT_FLOAT64));
    ct_tensor *noise = xd ? ct_ones_like(xd) : NULL;
    int64_t n = xd ? ct_numel(xd) : 0, k = 0;
    const double *xv = xd ? (const double *)ct_data_ptr(xd) : NULL;
    for (int64_t i = 0; i < n; i++) {
        k += xv[i] <= 0;
    }
    ct_tensor *u = noise ? ct_uniform_(ct_empty(&k, 1, CT_FLOAT64), lower, upper, NULL) : NULL;
    if (u) {
        double *nv = (double *)ct_data_ptr(noise);
        const double *uv = (const double *)ct_data_ptr(u);
        for (int64_t i = 0, m = 0; i < n; i++) {
            nv[i] = xv[i] <= 0 ? uv[m++] : 1.0;
        }
    }
    ct_tensor *nz = ct_to_dtype(noise, x->dtype);
    ct_no_grad_end();
    return ct__composite_end(c, ct_mul(x, nz));
}

CT__GLUE_BEGIN
static bool ct__rrelu_meta(ct_op_call *c)
{
    if (c->attrs[0].f > c->attrs[1].f) {
        ct__fail(CT_ERR_VALUE, c->fn, "Lower bound should be less than or equal to the upper "
                 "bound");
        return false;
    }
    return ct__act_float_check(c);
}

/* ---- descriptors ----------------------------------------------------------------------------- */
/* The activations' kernel tables: float32, float64, float16, bfloat16 */
#define CT__K_ACT                                                                            \
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, ct__act_kernel, ct__act_kernel, ct__act_kernel, \
     ct__act_kernel}
#define CT__ACT_OP(SYM, NAME, SCHEMA, API, ID, NODE)                                          \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_POINTWISE, CT_AUTOCAST_NONE,  \
                                       ID, 0u, NULL, ct__act_meta, CT__K_ACT,                  \
                                       NULL, NODE, ct__act_backward, 0u, ct__act_record, NULL};
#define CT__ACT_BW_OP(SYM, NAME, SCHEMA, ID)                                                   \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, "ct_backward", CT_OP_POINTWISE,           \
                                       CT_AUTOCAST_NONE, ID, 0u, NULL, ct__act_meta,           \
                                       CT__K_ACT, NULL, NULL, NULL, 0u, NULL,                 \
                                       NULL};
#define CT__ACT_COMPOSITE(SYM, NAME, SCHEMA, API, META, COMP)                                  \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, \
                                       NULL, META, CT__K_NONE, COMP, NULL, NULL, 0u, NULL, NULL};
CT__ACT_OP(gelu, "aten::gelu", "gelu(Tensor self, *, str approximate='none') -> Tensor",
           "ct_gelu", CT__ACT_GELU, "GeluBackward0")
CT__ACT_OP(gelu_tanh, "aten::gelu", "gelu(Tensor self, *, str approximate='tanh') -> Tensor",
           "ct_gelu", CT__ACT_GELU_TANH, "GeluBackward0")
CT__ACT_OP(silu, "aten::silu", "silu(Tensor self) -> Tensor", "ct_silu", CT__ACT_SILU,
           "SiluBackward0")
CT__ACT_OP(leaky_relu, "aten::leaky_relu", "leaky_relu(Tensor self, Scalar negative_slope=0.01) "
           "-> Tensor", "ct_leaky_relu ct_rrelu", CT__ACT_LEAKY_RELU, "LeakyReluBackward0")
CT__ACT_OP(elu, "aten::elu", "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar "
           "input_scale=1) -> Tensor", "ct_elu ct_selu ct_celu", CT__ACT_ELU, "EluBackward0")
CT__ACT_OP(softplus, "aten::softplus", "softplus(Tensor self, Scalar beta=1, Scalar "
           "threshold=20) -> Tensor", "ct_softplus", CT__ACT_SOFTPLUS, "SoftplusBackward0")
CT__ACT_OP(hardswish, "aten::hardswish", "hardswish(Tensor self) -> Tensor", "ct_hardswish",
           CT__ACT_HARDSWISH, "HardswishBackward0")
CT__ACT_OP(hardsigmoid, "aten::hardsigmoid", "hardsigmoid(Tensor self) -> Tensor",
           "ct_hardsigmoid", CT__ACT_HARDSIGMOID, "HardsigmoidBackward0")
CT__ACT_OP(hardtanh, "aten::hardtanh", "hardtanh(Tensor self, Scalar min_val=-1, Scalar "
           "max_val=1) -> Tensor", "ct_hardtanh ct_relu6", CT__ACT_HARDTANH, "HardtanhBackward0")
CT__ACT_OP(mish, "aten::mish", "mish(Tensor self) -> Tensor", "ct_mish", CT__ACT_MISH,
           "MishBackward0")
CT__ACT_OP(log_sigmoid, "aten::log_sigmoid", "log_sigmoid(Tensor self) -> Tensor",
           "ct_logsigmoid", CT__ACT_LOGSIGMOID, "LogSigmoidBackward0")
CT__ACT_OP(softshrink, "aten::softshrink", "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
           "ct_softshrink", CT__ACT_SOFTSHRINK, "SoftshrinkBackward0")
CT__ACT_OP(hardshrink, "aten::hardshrink", "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
           "ct_hardshrink", CT__ACT_HARDSHRINK, "HardshrinkBackward0")
CT__ACT_OP(threshold, "aten::threshold", "threshold(Tensor self, Scalar threshold, Scalar value) "
           "-> Tensor", "ct_threshold", CT__ACT_THRESHOLD, "ThresholdBackward0")
CT__ACT_BW_OP(gelu_backward, "aten::gelu_backward", "gelu_backward(Tensor grad_output, Tensor "
              "self, *, str approximate='none') -> Tensor", CT__ACT_GELU)
CT__ACT_BW_OP(gelu_tanh_backward, "aten::gelu_backward", "gelu_backward(Tensor grad_output, "
              "Tensor self, *, str approximate='tanh') -> Tensor", CT__ACT_GELU_TANH)
CT__ACT_BW_OP(silu_backward, "aten::silu_backward", "silu_backward(Tensor grad_output, Tensor "
              "self) -> Tensor", CT__ACT_SILU)
CT__ACT_BW_OP(leaky_relu_backward, "aten::leaky_relu_backward", "leaky_relu_backward(Tensor "
              "grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor",
              CT__ACT_LEAKY_RELU)
CT__ACT_BW_OP(elu_backward, "aten::elu_backward", "elu_backward(Tensor grad_output, Scalar "
              "alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result) "
              "-> Tensor", CT__ACT_ELU)
CT__ACT_BW_OP(softplus_backward, "aten::softplus_backward", "softplus_backward(Tensor "
              "grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
              CT__ACT_SOFTPLUS)
CT__ACT_BW_OP(hardswish_backward, "aten::hardswish_backward", "hardswish_backward(Tensor "
              "grad_output, Tensor self) -> Tensor", CT__ACT_HARDSWISH)
CT__ACT_BW_OP(hardsigmoid_backward, "aten::hardsigmoid_backward", "hardsigmoid_backward(Tensor "
              "grad_output, Tensor self) -> Tensor", CT__ACT_HARDSIGMOID)
CT__ACT_BW_OP(hardtanh_backward, "aten::hardtanh_backward", "hardtanh_backward(Tensor "
              "grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
              CT__ACT_HARDTANH)
CT__ACT_BW_OP(mish_backward, "aten::mish_backward", "mish_backward(Tensor grad_output, Tensor "
              "self) -> Tensor", CT__ACT_MISH)
CT__ACT_BW_OP(log_sigmoid_backward, "aten::log_sigmoid_backward", "log_sigmoid_backward(Tensor "
              "grad_output, Tensor self, Tensor buffer) -> Tensor", CT__ACT_LOGSIGMOID)
CT__ACT_BW_OP(softshrink_backward, "aten::softshrink_backward", "softshrink_backward(Tensor "
              "grad_output, Tensor self, Scalar lambd) -> Tensor", CT__ACT_SOFTSHRINK)
CT__ACT_BW_OP(hardshrink_backward, "aten::hardshrink_backward", "hardshrink_backward(Tensor "
              "grad_out, Tensor self, Scalar lambd) -> Tensor", CT__ACT_HARDSHRINK)
CT__ACT_BW_OP(threshold_backward_value, "ctorch::threshold_backward", "threshold_backward(Tensor "
              "grad_output, Tensor self, Scalar threshold) -> Tensor", CT__ACT_THRESHOLD)
CT__ACT_COMPOSITE(softsign, "aten::softsign", "softsign(Tensor self) -> Tensor", "ct_softsign",
                  ct__act_float_check, ct__softsign_composite)
CT__ACT_COMPOSITE(tanhshrink, "aten::tanhshrink", "tanhshrink(Tensor self) -> Tensor",
                  "ct_tanhshrink", ct__act_float_check, ct__tanhshrink_composite)
CT__ACT_COMPOSITE(softmin, "aten::softmin", "softmin(Tensor self, int dim) -> Tensor",
                  "ct_softmin", NULL, ct__softmin_composite)
CT__ACT_COMPOSITE(glu, "aten::glu", "glu(Tensor self, int dim=-1) -> Tensor", "ct_glu",
                  ct__glu_meta, ct__glu_composite)
CT__ACT_COMPOSITE(prelu, "aten::prelu", "prelu(Tensor self, Tensor weight) -> Tensor",
                  "ct_prelu", ct__prelu_meta, ct__prelu_composite)
CT__ACT_COMPOSITE(rrelu, "aten::rrelu", "rrelu(Tensor self, Scalar lower=0.125, Scalar "
                  "upper=0.3333333333333333, bool training=False, Generator? generator=None) -> "
                  "Tensor", "ct_rrelu", ct__rrelu_meta, ct__rrelu_composite)
#undef CT__ACT_OP
#undef CT__K_ACT
#undef CT__ACT_BW_OP
#undef CT__ACT_COMPOSITE

/* the forward descriptors by activation id, and their backward ops */
static const ct_op *const ct__act_ops[CT__ACT_COUNT] = {
    &ct__op_gelu,        &ct__op_gelu_tanh, &ct__op_silu,        &ct__op_leaky_relu,
    &ct__op_elu,         &ct__op_softplus,  &ct__op_hardswish,   &ct__op_hardsigmoid,
    &ct__op_hardtanh,    &ct__op_mish,      &ct__op_log_sigmoid, &ct__op_softshrink,
    &ct__op_hardshrink,  &ct__op_threshold};
static const ct_op *const ct__act_bw_ops[CT__ACT_COUNT] = {
    &ct__op_gelu_backward,        &ct__op_gelu_tanh_backward,   &ct__op_silu_backward,
    &ct__op_leaky_relu_backward,  &ct__op_elu_backward,         &ct__op_softplus_backward,
    &ct__op_hardswish_backward,   &ct__op_hardsigmoid_backward, &ct__op_hardtanh_backward,
    &ct__op_mish_backward,        &ct__op_log_sigmoid_backward, &ct__op_softshrink_backward,
    &ct__op_hardshrink_backward,  &ct__op_threshold_backward_value};

/* ---- public functions ------------------------------------------------------------------------ */
/* Calls activation id on x with n scalars p. */
static ct_tensor *ct__act_call(const char *fn, int id, const ct_tensor *x, int n, double p0,
                               double p1, double p2)
{
    const ct_tensor *in[1] = {x};
    double p[3] = {p0, p1, p2};
    ct_op_call c;
    ct__call_init(&c, ct__act_ops[id], fn, in, 1);
    for (int k = 0; k < n; k++) {
        ct__call_f(&c, p[k]);
    }
    return ct__dispatch(&c);
}

static ct_tensor *ct__act_grad(const ct_node *n, const ct_tensor *g, const ct_tensor *x)
{
    int id = (int)n->i[0];
    const ct_tensor *in[2] = {g, x};
    ct_op_call c;
    ct__call_init(&c, ct__act_bw_ops[id], "ct_backward", in, 2);
    for (int k = 0; k < 3; k++) {
        ct__call_f(&c, n->f[k]);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_gelu(const ct_tensor *input, ct_gelu_approximate approximate)
{
    if (approximate != CT_GELU_NONE && approximate != CT_GELU_TANH) {
        ct__fail(CT_ERR_VALUE, "ct_gelu", "approximate argument must be either none or tanh.");
        return NULL;
    }
    int id = approximate == CT_GELU_TANH ? CT__ACT_GELU_TANH : CT__ACT_GELU;
    return ct__act_call("ct_gelu", id, input, 0, 0, 0, 0);
}

ct_tensor *ct_silu(const ct_tensor *input)
{
    return ct__act_call("ct_silu", CT__ACT_SILU, input, 0, 0, 0, 0);
}

ct_tensor *ct_leaky_relu(const ct_tensor *input, double negative_slope)
{
    return ct__act_call("ct_leaky_relu", CT__ACT_LEAKY_RELU, input, 1, negative_slope, 0, 0);
}

ct_tensor *ct_elu(const ct_tensor *input, double alpha)
{
    return ct__act_call("ct_elu", CT__ACT_ELU, input, 3, alpha, 1, 1);
}

ct_tensor *ct_selu(const ct_tensor *input)
{
    return ct__act_call("ct_selu", CT__ACT_ELU, input, 3, 1.6732632423543772848170429916717,
                        1.0507009873554804934193349852946, 1);
}

ct_tensor *ct_celu(const ct_tensor *input, double alpha)
{
    if (alpha == 0) {
        ct__fail(CT_ERR_VALUE, "ct_celu", "ZeroDivisionError");
        return NULL;
    }
    return ct__act_call("ct_celu", CT__ACT_ELU, input, 3, alpha, 1, 1 / alpha);
}

ct_tensor *ct_softplus(const ct_tensor *input, double beta, double threshold)
{
    return ct__act_call("ct_softplus", CT__ACT_SOFTPLUS, input, 2, beta, threshold, 0);
}

ct_tensor *ct_hardswish(const ct_tensor *input)
{
    return ct__act_call("ct_hardswish", CT__ACT_HARDSWISH, input, 0, 0, 0, 0);
}

ct_tensor *ct_hardsigmoid(const ct_tensor *input)
{
    return ct__act_call("ct_hardsigmoid", CT__ACT_HARDSIGMOID, input, 0, 0, 0, 0);
}

static bool ct__hardtanh_check(const char *fn, double min_val, double max_val)
{
    if (min_val > max_val) {
        ct__fail(CT_ERR_VALUE, fn, "min_val cannot be greater than max_val");
        return false;
    }
    return true;
}

ct_tensor *ct_hardtanh(const ct_tensor *input, double min_val, double max_val)
{
    if (!ct__hardtanh_check("ct_hardtanh", min_val, max_val)) {
        return NULL;
    }
    return ct__act_call("ct_hardtanh", CT__ACT_HARDTANH, input, 2, min_val, max_val, 0);
}

ct_tensor *ct_relu6(const ct_tensor *input)
{
    return ct__act_call("ct_relu6", CT__ACT_HARDTANH, input, 2, 0, 6, 0);
}

ct_tensor *ct_mish(const ct_tensor *input)
{
    return ct__act_call("ct_mish", CT__ACT_MISH, input, 0, 0, 0, 0);
}

ct_tensor *ct_logsigmoid(const ct_tensor *input)
{
    return ct__act_call("ct_logsigmoid", CT__ACT_LOGSIGMOID, input, 0, 0, 0, 0);
}

ct_tensor *ct_softshrink(const ct_tensor *input, double lambd)
{
    const char *fn = "ct_softshrink";
    if (ct__null(fn, input)) {
        return NULL;
    }
    bool f64 = input->dtype == CT_FLOAT64;
    double top = f64 ? DBL_MAX : FLT_MAX;
    if (!(lambd >= 0 && lambd <= top)) {
        ct__fail(CT_ERR_VALUE, fn, "lambda must be in range [0, %g] for input dtype %s, but "
                 "found %g", top, ct__dtype_title(input->dtype), lambd);
        return NULL;
    }
    return ct__act_call(fn, CT__ACT_SOFTSHRINK, input, 1, lambd, 0, 0);
}

ct_tensor *ct_hardshrink(const ct_tensor *input, double lambd)
{
    return ct__act_call("ct_hardshrink", CT__ACT_HARDSHRINK, input, 1, lambd, 0, 0);
}

ct_tensor *ct_threshold(const ct_tensor *input, double threshold, double value)
{
    return ct__act_call("ct_threshold", CT__ACT_THRESHOLD, input, 2, threshold, value, 0);
}

/* one call of a composite op over n inputs with int attribute i (when has_i) */
static ct_tensor *ct__act_composite_call(const ct_op *op, const char *fn,
                                         const ct_tensor *const *in, int n, int64_t i, bool has_i)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n);
    if (has_i) {
        ct__call_i(&c, i);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_softsign(const ct_tensor *input)
{
    const ct_tensor *in[1] = {input};
    return ct__act_composite_call(&ct__op_softsign, "ct_softsign", in, 1, 0, false);
}

ct_tensor *ct_tanhshrink(const ct_tensor *input)
{
    const ct_tensor *in[1] = {input};
    return ct__act_composite_call(&ct__op_tanhshrink, "ct_tanhshrink", in, 1, 0, false);
}

ct_tensor *ct_softmin(const ct_tensor *input, int64_t dim)
{
    const ct_tensor *in[1] = {input};
    return ct__act_composite_call(&ct__op_softmin, "ct_softmin", in, 1, dim, true);
}

ct_tensor *ct_glu(const ct_tensor *input, int64_t dim)
{
    const ct_tensor *in[1] = {input};
    return ct__act_composite_call(&ct__op_glu, "ct_glu", in, 1, dim, true);
}

ct_tensor *ct_prelu(const ct_tensor *input, const ct_tensor *weight)
{
    const ct_tensor *in[2] = {input, weight};
    return ct__act_composite_call(&ct__op_prelu, "ct_prelu", in, 2, 0, false);
}

ct_tensor *ct_rrelu(const ct_tensor *input, double lower, double upper, bool training)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_rrelu, "ct_rrelu", in, 1);
    ct__call_f(&c, lower);
    ct__call_f(&c, upper);
    ct__call_i(&c, training);
    return ct__dispatch(&c);
}

/* ---- modules ------------------------------------------------------------------------------- */
typedef enum ct__act_module_kind {
    CT__M_GELU, CT__M_SILU, CT__M_LEAKY_RELU, CT__M_ELU, CT__M_SELU, CT__M_SOFTPLUS,
    CT__M_HARDTANH, CT__M_RELU6, CT__M_MISH, CT__M_PRELU, CT__M_GLU, CT__M_SOFTMAX,
    CT__M_LOG_SOFTMAX, CT__M_UNFLATTEN
} ct__act_module_kind;

/* An activation module's settings (its user data). */
typedef struct ct__act_cfg {
    ct__act_module_kind kind;
    double p[2];
    int64_t dim;
    int n; /* unflatten: the sizes */
    int64_t sizes[CT_MAX_DIMS];
} ct__act_cfg;

static ct_tensor *ct__act_module_forward(ct_module *m, const ct_tensor *x)
{
    const ct__act_cfg *a = (const ct__act_cfg *)ct_module_user(m);
    switch (a->kind) {
    case CT__M_GELU: return ct_gelu(x, (ct_gelu_approximate)a->dim);
    case CT__M_SILU: return ct_silu(x);
    case CT__M_LEAKY_RELU: return ct_leaky_relu(x, a->p[0]);
    case CT__M_ELU: return ct_elu(x, a->p[0]);
    case CT__M_SELU: return ct_selu(x);
    case CT__M_SOFTPLUS: return ct_softplus(x, a->p[0], a->p[1]);
    case CT__M_HARDTANH: return ct_hardtanh(x, a->p[0], a->p[1]);
    case CT__M_RELU6: return ct_relu6(x);
    case CT__M_MISH: return ct_mish(x);
    case CT__M_PRELU: return ct_prelu(x, ct_module_get_parameter(m, "weight"));
    case CT__M_GLU: return ct_glu(x, a->dim);
    case CT__M_SOFTMAX: return ct_softmax(x, a->dim);
    case CT__M_LOG_SOFTMAX: return ct_log_softmax(x, a->dim);
    case CT__M_UNFLATTEN: return ct_unflatten(x, a->dim, a->sizes, a->n);
    }
    return NULL;
}

/* A module named name of kind with scalars p0, p1 and dim. */
static ct_module *ct__act_module(const char *name, ct__act_module_kind kind, double p0, double p1,
                                 int64_t dim)
{
    ct__act_cfg *a = (ct__act_cfg *)ct__calloc(sizeof *a);
    if (!a) {
        ct__fail(CT_ERR_OOM, name, "out of memory");
        return NULL;
    }
    a->kind = kind;
    a->p[0] = p0;
    a->p[1] = p1;
    a->dim = dim;
    ct_module *m = ct_module_new(name, ct__act_module_forward, a, ct__free);
    if (!m) {
        ct__free(a);
    }
    return m;
}

ct_module *ct_gelu_new(ct_gelu_approximate approximate)
{
    return ct__act_module("GELU", CT__M_GELU, 0, 0, approximate);
}

ct_module *ct_silu_new(void)
{
    return ct__act_module("SiLU", CT__M_SILU, 0, 0, 0);
}

ct_module *ct_leaky_relu_new(double negative_slope)
{
    return ct__act_module("LeakyReLU", CT__M_LEAKY_RELU, negative_slope, 0, 0);
}

ct_module *ct_elu_new(double alpha)
{
    return ct__act_module("ELU", CT__M_ELU, alpha, 0, 0);
}

ct_module *ct_selu_new(void)
{
    return ct__act_module("SELU", CT__M_SELU, 0, 0, 0);
}

ct_module *ct_softplus_new(double beta, double threshold)
{
    return ct__act_module("Softplus", CT__M_SOFTPLUS, beta, threshold, 0);
}

ct_module *ct_hardtanh_new(double min_val, double max_val)
{
    if (!ct__hardtanh_check("ct_hardtanh_new", min_val, max_val)) {
        return NULL;
    }
    return ct__act_module("Hardtanh", CT__M_HARDTANH, min_val, max_val, 0);
}

ct_module *ct_relu6_new(void)
{
    return ct__act_module("ReLU6", CT__M_RELU6, 0, 0, 0);
}

ct_module *ct_mish_new(void)
{
    return ct__act_module("Mish", CT__M_MISH, 0, 0, 0);
}

ct_module *ct_prelu_new(int64_t num_parameters, double init)
{
    if (num_parameters < 1) {
        ct__fail(CT_ERR_VALUE, "ct_prelu_new", "num_parameters must be positive, got %lld",
                 (long long)num_parameters);
        return NULL;
    }
    ct_module *m = ct__act_module("PReLU", CT__M_PRELU, 0, 0, 0);
    ct_tensor *w = m ? ct__tensor_new("ct_prelu_new", &num_parameters, 1, CT_FLOAT32) : NULL;
    if (w) {
        ct__fill_contig(w, init);
    }
    ct_status st = w ? ct_module_register_parameter(m, "weight", w) : ct_error_code();
    ct__release(w);
    if (st != CT_OK) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

ct_module *ct_glu_new(int64_t dim)
{
    return ct__act_module("GLU", CT__M_GLU, 0, 0, dim);
}

ct_module *ct_softmax_new(int64_t dim)
{
    return ct__act_module("Softmax", CT__M_SOFTMAX, 0, 0, dim);
}

ct_module *ct_log_softmax_new(int64_t dim)
{
    return ct__act_module("LogSoftmax", CT__M_LOG_SOFTMAX, 0, 0, dim);
}

ct_module *ct_unflatten_new(int64_t dim, const int64_t *sizes, int n)
{
    const char *fn = "ct_unflatten_new";
    if (ct__null(fn, sizes)) {
        return NULL;
    }
    if (n < 1 || n > CT_MAX_DIMS) {
        ct__fail(CT_ERR_VALUE, fn, "unflattened_size must have 1 to %d sizes, got %d",
                 CT_MAX_DIMS, n);
        return NULL;
    }
    ct_module *m = ct__act_module("Unflatten", CT__M_UNFLATTEN, 0, 0, dim);
    if (m) {
        ct__act_cfg *a = (ct__act_cfg *)ct_module_user(m);
        a->n = n;
        memcpy(a->sizes, sizes, sizeof(int64_t) * (size_t)n);
    }
    return m;
}

#undef CT__ACT_BLOCK
CT__GLUE_END
