/* ops/softmax.c - fused, numerically stable softmax and log_softmax, and the row kernels
 * cross-entropy shares (nn/loss.c).
 *
 * Legend: the input (made contiguous) is (outer, R, inner) around dim; each (o, c) line of R
 * elements at stride inner is normalized independently, in parallel over lines.
 * Contiguous rows (inner == 1) take three passes over a row, which stays in L1: the max m;
 * e = exp(x - m) summed and stored into y (which brings y's lines in during the arithmetic,
 * for log_softmax too); y = e / sum, or y = x - lse with lse = m + log(sum). The next row is
 * prefetched during the exp pass, so its trip from memory overlaps the arithmetic. (A one-pass
 * online softmax, with a running max and a rescaled sum, would compute every exp twice: with
 * the row in L1, re-reading it is cheaper. Streaming stores measured no faster: the output
 * stays in this machine's large L3.) Sums run in 16 lanes: lane k adds elements 16 j + k,
 * lane 0 then the tail, and the lanes are summed pairwise. The float32 AVX-512 path does the
 * same IEEE operations in the same order (vmath.h's exp is bit-identical to ct__expf), so it
 * matches the scalar path bit for bit; tests/test_ops.c checks it.
 * Determinism: each line is computed by one thread in a fixed order: bit-exact across
 * thread counts.
 */
#include "../core/internal.h"
#include "softmax.h"
#include "pointwise.h"
#include "reduce.h"
#include "view.h"
#include "vmath.h"
#include "../autograd/autograd.h"

CT__VECTORIZE_BEGIN

/* prefetch for reading (rw 0) or writing (rw 1) into all cache levels */
#if defined(__GNUC__) || defined(__clang__)
#define CT__PREFETCH(p, rw) __builtin_prefetch((p), (rw), 3)
#else
#define CT__PREFETCH(p, rw) ((void)(p))
#endif

/* ---- row kernels: the scalar reference, float32 and float64 --------------------------- */
/* Each continues from element r with its 16 lanes (m or acc) holding elements [0, r), so a
   vector part can do the first elements.
   ct__row_max_S: the max of x[0..R) ignoring NaN; 0 when none is above -inf (an all -inf
   row then ends NaN, as in PyTorch).
   ct__row_expsum_S: the sum of exp(x - shift) over x[0..R), the terms stored into y unless
   NULL: lane k adds the terms 16 j + k, lane 0 then the tail's in order, and the lanes are
   summed pairwise (k + 8 into k, then k + 4, k + 2, k + 1).
   ct__row_exp_S: y = scale * exp(x - shift).
   prefetch: the next row (x + R, and y + R where y is written) comes next: each chunk
   prefetches its 16 elements there. */
#define CT__ROW_PREFETCH(T, p, r, rw)                                                      \
    for (size_t b_ = 0; b_ < 16 * sizeof(T); b_ += 64) {                                   \
        CT__PREFETCH((const char *)((p) + (r)) + b_, rw);                                  \
    }
#define CT__ROW_KERNELS(T, S, EXP)                                                         \
    static T ct__row_max_##S(const T *x, int64_t r, int64_t R, T *m)                       \
    {                                                                                      \
        for (; r + 16 <= R; r += 16) {                                                     \
            for (int k = 0; k < 16; k++) {                                                 \
                m[k] = x[r + k] > m[k] ? x[r + k] : m[k];                                  \
            }                                                                              \
        }                                                                                  \
        for (; r < R; r++) {                                                               \
            m[0] = x[r] > m[0] ? x[r] : m[0];                                              \
        }                                                                                  \
        T mx = m[0];                                                                       \
        for (int k = 1; k < 16; k++) {                                                     \
            mx = m[k] > mx ? m[k] : mx;                                                    \
        }                                                                                  \
        return mx == -(T)INFINITY ? 0 : mx;                                                \
    }                                                                                      \
    static T ct__row_expsum_##S(const T *x, T *y, int64_t r, int64_t R, T shift, T *acc,   \
                                bool prefetch)                                             \
    {                                                                                      \
        for (; r + 16 <= R; r += 16) {                                                     \
            if (prefetch) {                                                                \
                CT__ROW_PREFETCH(T, x + R, r, 0)                                           \
            }                                                                              \
            if (y) {                                                                       \
                for (int k = 0; k < 16; k++) {                                             \
                    y[r + k] = EXP(x[r + k] - shift);                                      \
                    acc[k] += y[r + k];                                                    \
                }                                                                          \
            } else {                                                                       \
                for (int k = 0; k < 16; k++) {                                             \
                    acc[k] += EXP(x[r + k] - shift);                                       \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        T e[16];                                                                           \
        int64_t n = R - r;                                                                 \
        for (int64_t k = 0; k < n; k++) {                                                  \
            e[k] = EXP(x[r + k] - shift);                                                  \
        }                                                                                  \
        for (int64_t k = 0; k < n; k++) {                                                  \
            acc[0] += e[k];                                                                \
            if (y) {                                                                       \
                y[r + k] = e[k];                                                           \
            }                                                                              \
        }                                                                                  \
        for (int w = 8; w > 0; w /= 2) {                                                   \
            for (int k = 0; k < w; k++) {                                                  \
                acc[k] += acc[k + w];                                                      \
            }                                                                              \
        }                                                                                  \
        return acc[0];                                                                     \
    }                                                                                      \
    static void ct__row_exp_##S(const T *x, T *y, int64_t r, int64_t R, T shift, T scale,  \
                                bool prefetch)                                             \
    {                                                                                      \
        for (; r + 16 <= R; r += 16) {                                                     \
            if (prefetch) {                                                                \
                CT__ROW_PREFETCH(T, x + R, r, 0)                                           \
                CT__ROW_PREFETCH(T, y + R, r, 1)                                           \
            }                                                                              \
            for (int k = 0; k < 16; k++) {                                                 \
                y[r + k] = scale * EXP(x[r + k] - shift);                                  \
            }                                                                              \
        }                                                                                  \
        for (; r < R; r++) {                                                               \
            y[r] = scale * EXP(x[r] - shift);                                              \
        }                                                                                  \
    }
CT__ROW_KERNELS(float, f32, ct__expf)
CT__ROW_KERNELS(double, f64, exp)
#undef CT__ROW_KERNELS
#undef CT__ROW_PREFETCH

/* ---- vector parts (float32 AVX-512): the full chunks, one vector of 16 lanes each ----- */
/* Each does the scalar kernel's operations on whole 16-element chunks (lane k of the vector
   is lane k of the scalar kernel), then the tail of 0..15 elements by masked loads and
   stores (expsum adds its terms into lane 0 in order), and returns R. */
#define CT__NO_VECTOR_PART(...) 0
#if defined(CT__HAS_AVX512)
static int64_t ct__vec_max_f32(const float *x, int64_t R, float *m)
{ /* four vectors in flight (max is exact: any grouping gives the same lanes) */
    __m512 v0 = _mm512_loadu_ps(m), v1 = v0, v2 = v0, v3 = v0;
    int64_t r = 0;
    for (; r + 64 <= R; r += 64) { /* x > m ? x : m: NaN skipped */
        v0 = ct__max_v16(_mm512_loadu_ps(x + r), v0);
        v1 = ct__max_v16(_mm512_loadu_ps(x + r + 16), v1);
        v2 = ct__max_v16(_mm512_loadu_ps(x + r + 32), v2);
        v3 = ct__max_v16(_mm512_loadu_ps(x + r + 48), v3);
    }
    for (; r + 16 <= R; r += 16) {
        v0 = ct__max_v16(_mm512_loadu_ps(x + r), v0);
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    v0 = ct__max_v16(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + r), v0);
    _mm512_storeu_ps(m, ct__max_v16(ct__max_v16(v0, v1), ct__max_v16(v2, v3)));
    return R; /* the tail is in the lanes too */
}

static int64_t ct__vec_expsum_f32(const float *x, float *y, int64_t R, float shift,
                                  float *acc, bool prefetch)
{
    __m512 a = _mm512_loadu_ps(acc), s = _mm512_set1_ps(shift);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        if (prefetch) {
            CT__PREFETCH(x + R + r, 0);
        }
        __m512 e = ct__expf_v16(_mm512_sub_ps(_mm512_loadu_ps(x + r), s));
        a = _mm512_add_ps(a, e);
        if (y) {
            _mm512_storeu_ps(y + r, e);
        }
    }
    _mm512_storeu_ps(acc, a);
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    float e[16];
    _mm512_storeu_ps(e, ct__expf_v16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + r), s)));
    for (int64_t i = 0; i < R - r; i++) {
        acc[0] += e[i];
    }
    if (y) {
        _mm512_mask_storeu_ps(y + r, k, _mm512_loadu_ps(e));
    }
    return R;
}

static int64_t ct__vec_exp_f32(const float *x, float *y, int64_t R, float shift, float scale,
                               bool prefetch)
{
    __m512 s = _mm512_set1_ps(shift), c = _mm512_set1_ps(scale);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        if (prefetch) {
            CT__PREFETCH(x + R + r, 0);
            CT__PREFETCH(y + R + r, 1);
        }
        __m512 e = ct__expf_v16(_mm512_sub_ps(_mm512_loadu_ps(x + r), s));
        _mm512_storeu_ps(y + r, _mm512_mul_ps(c, e));
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    __m512 e = ct__expf_v16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + r), s));
    _mm512_mask_storeu_ps(y + r, k, _mm512_mul_ps(c, e));
    return R;
}
/* y *= scale */
static int64_t ct__vec_scale_f32(float *y, int64_t R, float scale)
{
    __m512 c = _mm512_set1_ps(scale);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        _mm512_storeu_ps(y + r, _mm512_mul_ps(_mm512_loadu_ps(y + r), c));
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    _mm512_mask_storeu_ps(y + r, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + r), c));
    return R;
}

/* y = x - shift */
static int64_t ct__vec_shift_f32(const float *x, float *y, int64_t R, float shift)
{
    __m512 s = _mm512_set1_ps(shift);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        _mm512_storeu_ps(y + r, _mm512_sub_ps(_mm512_loadu_ps(x + r), s));
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    _mm512_mask_storeu_ps(y + r, k, _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + r), s));
    return R;
}
#define CT__VEC_MAX_F32 ct__vec_max_f32
#define CT__VEC_SCALE_F32 ct__vec_scale_f32
#define CT__VEC_SHIFT_F32 ct__vec_shift_f32
#define CT__VEC_EXPSUM_F32 ct__vec_expsum_f32
#define CT__VEC_EXP_F32 ct__vec_exp_f32
#else
#define CT__VEC_MAX_F32 CT__NO_VECTOR_PART
#define CT__VEC_EXPSUM_F32 CT__NO_VECTOR_PART
#define CT__VEC_EXP_F32 CT__NO_VECTOR_PART
#define CT__VEC_SCALE_F32 CT__NO_VECTOR_PART
#define CT__VEC_SHIFT_F32 CT__NO_VECTOR_PART
#endif

/* ---- whole rows ------------------------------------------------------------------------ */
/* The vector part first unless scalar, then the scalar kernel on the rest. The last pass is
   elementwise (y = e * (1 / sum), or y = x - lse), the same in both paths. */
#define CT__ROWS(T, S, LOG, VMAX, VEXPSUM, VEXP, VSCALE, VSHIFT)                           \
    T ct__softmax_row_##S(const T *x, T *y, int64_t R, ct__softmax_mode mode, bool prefetch, \
                          bool scalar)                                                     \
    {                                                                                      \
        T lanes[16];                                                                       \
        for (int k = 0; k < 16; k++) {                                                     \
            lanes[k] = -(T)INFINITY;                                                       \
        }                                                                                  \
        int64_t r = scalar ? 0 : VMAX(x, R, lanes);                                        \
        T mx = ct__row_max_##S(x, r, R, lanes);                                            \
        T *e = mode == CT__SOFTMAX_LSE ? NULL : y;                                         \
        for (int k = 0; k < 16; k++) {                                                     \
            lanes[k] = 0;                                                                  \
        }                                                                                  \
        r = scalar ? 0 : VEXPSUM(x, e, R, mx, lanes, prefetch);                            \
        T sum = ct__row_expsum_##S(x, e, r, R, mx, lanes, prefetch);                       \
        T lse = mode == CT__SOFTMAX_EXP ? 0 : mx + LOG(sum);                               \
        if (mode == CT__SOFTMAX_EXP) {                                                     \
            T inv = (T)1 / sum;                                                            \
            for (r = scalar ? 0 : VSCALE(y, R, inv); r < R; r++) {                         \
                y[r] *= inv;                                                               \
            }                                                                              \
        } else if (mode == CT__SOFTMAX_LOG) {                                              \
            for (r = scalar ? 0 : VSHIFT(x, y, R, lse); r < R; r++) {                      \
                y[r] = x[r] - lse;                                                         \
            }                                                                              \
        }                                                                                  \
        return lse;                                                                        \
    }                                                                                      \
    void ct__exp_row_##S(const T *x, T *y, int64_t R, T shift, T scale, bool prefetch,     \
                         bool scalar)                                                      \
    {                                                                                      \
        int64_t r = scalar ? 0 : VEXP(x, y, R, shift, scale, prefetch);                    \
        ct__row_exp_##S(x, y, r, R, shift, scale, prefetch);                               \
    }
CT__ROWS(float, f32, ct__logf, CT__VEC_MAX_F32, CT__VEC_EXPSUM_F32, CT__VEC_EXP_F32,
         CT__VEC_SCALE_F32, CT__VEC_SHIFT_F32)
CT__ROWS(double, f64, log, CT__NO_VECTOR_PART, CT__NO_VECTOR_PART, CT__NO_VECTOR_PART,
         CT__NO_VECTOR_PART, CT__NO_VECTOR_PART)
#undef CT__ROWS
#undef CT__VEC_MAX_F32
#undef CT__VEC_EXPSUM_F32
#undef CT__VEC_EXP_F32
#undef CT__VEC_SCALE_F32
#undef CT__VEC_SHIFT_F32
#undef CT__NO_VECTOR_PART

/* ---- softmax / log_softmax along a dim ------------------------------------------------ */
typedef struct ct__softmax_job {
    const char *x;
    char *y;
    int64_t R, inner;
    bool log;
} ct__softmax_job;

/* lines [b, e) of R elements at stride inner; contiguous rows (inner == 1) prefetch the
   next row of the chunk while computing one */
#define CT__SOFTMAX_LINES(T, S, EXP, LOG)                                                  \
    static void ct__softmax_lines_##S(int64_t b, int64_t e, void *ctx)                     \
    {                                                                                      \
        const ct__softmax_job *j = (const ct__softmax_job *)ctx;                           \
        int64_t R = j->R, in = j->inner;                                                   \
        ct__softmax_mode mode = j->log ? CT__SOFTMAX_LOG : CT__SOFTMAX_EXP;                \
        for (int64_t line = b; line < e; line++) {                                         \
            int64_t o = line / in, c = line % in;                                          \
            const T *x = (const T *)j->x + o * R * in + c;                                 \
            T *y = (T *)j->y + o * R * in + c;                                             \
            if (in == 1) {                                                                 \
                ct__softmax_row_##S(x, y, R, mode, line + 1 < e, false);                   \
                continue;                                                                  \
            }                                                                              \
            T mx = -(T)INFINITY;                                                           \
            for (int64_t r = 0; r < R; r++) {                                              \
                mx = x[r * in] > mx || x[r * in] != x[r * in] ? x[r * in] : mx;            \
            }                                                                              \
            T sum = 0;                                                                     \
            for (int64_t r = 0; r < R; r++) {                                              \
                y[r * in] = EXP(x[r * in] - mx);                                           \
                sum += y[r * in];                                                          \
            }                                                                              \
            T lse = mx + LOG(sum), inv = (T)1 / sum;                                       \
            for (int64_t r = 0; r < R; r++) {                                              \
                y[r * in] = j->log ? x[r * in] - lse : y[r * in] * inv;                    \
            }                                                                              \
        }                                                                                  \
    }
CT__SOFTMAX_LINES(float, f32, ct__expf, ct__logf)
CT__SOFTMAX_LINES(double, f64, exp, log)
#undef CT__SOFTMAX_LINES

CT__GLUE_BEGIN
/* ---- descriptors ------------------------------------------------------------------------ */
static ct_tensor *ct__softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim);
static ct_tensor *ct__log_softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim);

static void ct__softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__softmax_bw(g, ct__saved(n, 0), n->i[0]);
}

static void ct__log_softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__log_softmax_bw(g, ct__saved(n, 0), n->i[0]);
}

/* Saves the output and the (wrapped) dim. */
static void ct__softmax_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->attrs[0].i;
    ct__save_output(n, c->outputs[0]);
}

/* Attribute: dim, wrapped here for the kernel and the node. Float inputs only; the output has
   the input's shape and dtype. */
static bool ct__softmax_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"%s_lastdim_kernel_impl\" not implemented for '%s'",
                 c->op->variant ? "log_softmax" : "softmax", ct_dtype_name(t->dtype));
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    c->attrs[0].i = d;
    c->attrs[0].f = d;
    c->dtype = t->dtype;
    return ct__op_output(c, t->sizes, t->ndim, t->dtype) != NULL;
}

static ct_status ct__softmax_kernel(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int d = (int)c->attrs[0].i;
    ct_tensor *x = ct_is_contiguous(t) ? ct_retain((ct_tensor *)(uintptr_t)t)
                                       : ct__tensor_new(c->fn, t->sizes, t->ndim, t->dtype);
    if (!x) {
        return ct_error_code();
    }
    if (x != t) {
        ct__copy_kernel(x, t);
    }
    ct__softmax_job j;
    j.x = ct__data(x);
    j.y = ct__data(c->outputs[0]);
    j.R = t->ndim ? t->sizes[d] : 1;
    j.inner = 1;
    j.log = c->op->variant != 0;
    for (int k = d + 1; k < t->ndim; k++) {
        j.inner *= t->sizes[k];
    }
    int64_t lines = j.R ? ct_numel(t) / j.R : 0;
    int64_t grain = CT__GRAIN / (j.R ? j.R : 1) + 1;
    ct__parallel_for(lines, grain, t->dtype == CT_FLOAT32 ? ct__softmax_lines_f32
                                                          : ct__softmax_lines_f64, &j);
    ct__release(x);
    return CT_OK;
}

/* The backward ops (composite: built on ops, so they run on any device and differentiate
   again). An empty input's gradient is empty: skip the sums, whose outputs (every line of
   dim) can be far larger than the input. float16/bfloat16 compute in float32 and round once,
   as PyTorch's CPU kernels. Attributes: dim, the input's dtype. */
static ct_status ct__softmax_bw_composite(ct_op_call *c)
{
    int64_t dim = c->attrs[0].i;
    ct_dtype dt = c->inputs[0]->dtype;
    ct_scope_begin();
    const ct_tensor *g = c->inputs[0], *y = c->inputs[1];
    if (ct__is_half(dt)) {
        g = ct_to_dtype(g, CT_FLOAT32);
        y = ct_to_dtype(y, CT_FLOAT32);
    }
    ct_tensor *r = NULL;
    if (ct_numel(g) == 0) {
        r = ct_zeros_like(g);
    } else if (c->op->variant) { /* g - exp(y) * sum(g) */
        r = ct_sub(g, ct_mul(ct_exp(y), ct_sum_dim(g, dim, true)));
    } else { /* y * (g - sum(g * y)) */
        r = ct_mul(y, ct_sub(g, ct_sum_dim(ct_mul(g, y), dim, true)));
    }
    return ct__composite_end(c, ct_to_dtype(r, dt));
}

static const ct_op ct__op_softmax = {
    "aten::softmax", "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "ct_softmax", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__softmax_meta,
    CT__K_FLOAT(ct__softmax_kernel), NULL, "SoftmaxBackward0",
    CT__BACKWARD(ct__softmax_backward), 0u, ct__softmax_record, NULL};
static const ct_op ct__op_log_softmax = {
    "aten::log_softmax", "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> "
    "Tensor", "ct_log_softmax", CT_OP_OTHER, CT_AUTOCAST_NONE, 1, 0u, NULL, ct__softmax_meta,
    CT__K_FLOAT(ct__softmax_kernel), NULL, "LogSoftmaxBackward0",
    CT__BACKWARD(ct__log_softmax_backward), 0u, ct__softmax_record, NULL};
static const ct_op ct__op_softmax_backward = {
    "aten::_softmax_backward_data", "_softmax_backward_data(Tensor grad_output, Tensor output, "
    "int dim, ScalarType input_dtype) -> Tensor", "ct_backward (softmax)", CT_OP_OTHER,
    CT_AUTOCAST_NONE, 0, 0u, NULL, NULL, CT__K_NONE, ct__softmax_bw_composite, NULL, NULL, 0u,
    NULL, NULL};
static const ct_op ct__op_log_softmax_backward = {
    "aten::_log_softmax_backward_data", "_log_softmax_backward_data(Tensor grad_output, Tensor "
    "output, int dim, ScalarType input_dtype) -> Tensor", "ct_backward (log_softmax)",
    CT_OP_OTHER, CT_AUTOCAST_NONE, 1, 0u, NULL, NULL, CT__K_NONE, ct__softmax_bw_composite,
    NULL, NULL, 0u, NULL, NULL};

/* ---- public functions ---------------------------------------------------------------------- */
static ct_tensor *ct__call_softmax(const ct_op *op, const char *fn, const ct_tensor *t,
                                   int64_t dim)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_i(&c, dim);
    return ct__dispatch(&c);
}

/* A backward op over the gradient g and the forward's output y (y's dtype: the input's). */
static ct_tensor *ct__call_softmax_bw(const ct_op *op, const char *fn, const ct_tensor *g,
                                      const ct_tensor *y, int64_t dim)
{
    if (ct__null(fn, y)) {
        return NULL;
    }
    const ct_tensor *in[2] = {g, y};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    ct__call_i(&c, dim);
    ct__call_i(&c, y->dtype);
    return ct__dispatch(&c);
}

static ct_tensor *ct__softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim)
{
    return ct__call_softmax_bw(&ct__op_softmax_backward, "ct_softmax_backward", g, y, dim);
}

static ct_tensor *ct__log_softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim)
{
    return ct__call_softmax_bw(&ct__op_log_softmax_backward, "ct_log_softmax_backward", g, y,
                               dim);
}

ct_tensor *ct_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__call_softmax(&ct__op_softmax, "ct_softmax", t, dim);
}

ct_tensor *ct_log_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__call_softmax(&ct__op_log_softmax, "ct_log_softmax", t, dim);
}

#undef CT__PREFETCH
CT__GLUE_END
CT__VECTORIZE_END
