/* ops/softmax.c - fused, numerically stable softmax and log_softmax.
 *
 * Legend: the input (made contiguous) is (outer, R, inner) around dim; each (o, c) line of R
 * elements at stride inner is normalized independently, in parallel over lines.
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

typedef struct ct__softmax_job {
    const char *x;
    char *y;
    int64_t R, inner;
    bool log;
} ct__softmax_job;

/* One contiguous row x[0..R) -> y: max and sums in 16 partial lanes (vectorized; the NaN of
   a row propagates through its exp and sum), exp through the vectorized vmath. */
#define CT__SOFTMAX_ROW(T, S, EXP, LOG)                                                     \
    static void ct__softmax_row_##S(const T *x, T *y, int64_t R, bool take_log)                  \
    {                                                                                       \
        T m[16], acc[16];                                                                   \
        for (int k = 0; k < 16; k++) {                                                      \
            m[k] = -(T)INFINITY;                                                            \
            acc[k] = 0;                                                                     \
        }                                                                                   \
        int64_t r = 0;                                                                      \
        for (; r + 16 <= R; r += 16) {                                                      \
            for (int k = 0; k < 16; k++) {                                                  \
                m[k] = x[r + k] > m[k] ? x[r + k] : m[k];                                   \
            }                                                                               \
        }                                                                                   \
        for (; r < R; r++) {                                                                \
            m[0] = x[r] > m[0] ? x[r] : m[0];                                               \
        }                                                                                   \
        T mx = m[0];                                                                        \
        for (int k = 1; k < 16; k++) {                                                      \
            mx = m[k] > mx ? m[k] : mx;                                                     \
        }                                                                                   \
        mx = mx == -(T)INFINITY ? 0 : mx; /* an all -inf row ends NaN, as in PyTorch */      \
        if (take_log) { /* sum exp(x - max) without storing it */                            \
            for (r = 0; r + 16 <= R; r += 16) {                                             \
                for (int k = 0; k < 16; k++) {                                              \
                    acc[k] += EXP(x[r + k] - mx);                                           \
                }                                                                           \
            }                                                                               \
            for (; r < R; r++) {                                                            \
                acc[0] += EXP(x[r] - mx);                                                   \
            }                                                                               \
        } else { /* y = exp(x - max), summed */                                             \
            for (r = 0; r < R; r++) {                                                       \
                y[r] = EXP(x[r] - mx);                                                      \
            }                                                                               \
            for (r = 0; r + 16 <= R; r += 16) {                                             \
                for (int k = 0; k < 16; k++) {                                              \
                    acc[k] += y[r + k];                                                     \
                }                                                                           \
            }                                                                               \
            for (; r < R; r++) {                                                            \
                acc[0] += y[r];                                                             \
            }                                                                               \
        }                                                                                   \
        T sum = 0;                                                                          \
        for (int k = 0; k < 16; k++) {                                                      \
            sum += acc[k];                                                                  \
        }                                                                                   \
        if (take_log) {                                                                     \
            T lse = mx + LOG(sum);                                                          \
            for (r = 0; r < R; r++) {                                                       \
                y[r] = x[r] - lse;                                                          \
            }                                                                               \
        } else {                                                                            \
            T inv = (T)1 / sum;                                                             \
            for (r = 0; r < R; r++) {                                                       \
                y[r] *= inv;                                                                \
            }                                                                               \
        }                                                                                   \
    }

/* lines of R elements at stride inner (inner == 1: contiguous rows) */
#define CT__SOFTMAX_KERNEL(T, S, EXP, LOG)                                                  \
    CT__SOFTMAX_ROW(T, S, EXP, LOG)                                                         \
    static void ct__softmax_lines_##S(int64_t b, int64_t e, void *ctx)                      \
    {                                                                                       \
        const ct__softmax_job *j = (const ct__softmax_job *)ctx;                            \
        int64_t R = j->R, in = j->inner;                                                    \
        for (int64_t line = b; line < e; line++) {                                          \
            int64_t o = line / in, c = line % in;                                           \
            const T *x = (const T *)j->x + o * R * in + c;                                  \
            T *y = (T *)j->y + o * R * in + c;                                              \
            if (in == 1) {                                                                  \
                ct__softmax_row_##S(x, y, R, j->log);                                       \
                continue;                                                                   \
            }                                                                               \
            T mx = -(T)INFINITY;                                                            \
            for (int64_t r = 0; r < R; r++) {                                               \
                mx = x[r * in] > mx || x[r * in] != x[r * in] ? x[r * in] : mx;             \
            }                                                                               \
            T sum = 0;                                                                      \
            for (int64_t r = 0; r < R; r++) {                                               \
                y[r * in] = EXP(x[r * in] - mx);                                            \
                sum += y[r * in];                                                           \
            }                                                                               \
            T lse = mx + LOG(sum), inv = (T)1 / sum;                                        \
            for (int64_t r = 0; r < R; r++) {                                               \
                y[r * in] = j->log ? x[r * in] - lse : y[r * in] * inv;                     \
            }                                                                               \
        }                                                                                   \
    }
CT__SOFTMAX_KERNEL(float, f32, ct__expf, ct__logf)
CT__SOFTMAX_KERNEL(double, f64, exp, log)
#undef CT__SOFTMAX_ROW

/* An empty input's gradient is empty: skip the sums, whose outputs (every line of dim) can
   be far larger than the input. */
static void ct__softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* y * (g - sum(g * y)) */
    const ct_tensor *y = ct__saved(n, 0);
    gi[0] = ct_numel(g) == 0 ? ct_zeros_like(g)
                             : ct_mul(y, ct_sub(g, ct_sum_dim(ct_mul(g, y), n->i[0], true)));
}

static void ct__log_softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g - exp(y) * sum(g) */
    const ct_tensor *y = ct__saved(n, 0);
    gi[0] = ct_numel(g) == 0 ? ct_zeros_like(g)
                             : ct_sub(g, ct_mul(ct_exp(y), ct_sum_dim(g, n->i[0], true)));
}

static ct_tensor *ct__softmax_impl(const char *op, const ct_tensor *t, int64_t dim, bool log)
{
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return NULL;
    }
    if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s_lastdim_kernel_impl\" not implemented for '%s'",
                 log ? "log_softmax" : "softmax", ct_dtype_name(t->dtype));
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    if (d < 0) {
        return NULL;
    }
    ct_tensor *x = ct_is_contiguous(t) ? ct_retain((ct_tensor *)(uintptr_t)t)
                                       : ct__tensor_new(op, t->sizes, t->ndim, t->dtype);
    ct_tensor *y = ct__tensor_new(op, t->sizes, t->ndim, t->dtype);
    if (!x || !y) {
        ct__release(x);
        ct__release(y);
        return NULL;
    }
    if (x != t) {
        ct__copy_kernel(x, t);
    }
    ct__softmax_job j;
    j.x = ct__data(x);
    j.y = ct__data(y);
    j.R = t->ndim ? t->sizes[d] : 1;
    j.inner = 1;
    j.log = log;
    for (int k = d + 1; k < t->ndim; k++) {
        j.inner *= t->sizes[k];
    }
    int64_t lines = j.R ? ct_numel(t) / j.R : 0;
    int64_t grain = CT__GRAIN / (j.R ? j.R : 1) + 1;
    ct__parallel_for(lines, grain, t->dtype == CT_FLOAT32 ? ct__softmax_lines_f32
                                                          : ct__softmax_lines_f64, &j);
    ct__release(x);
    ct_node *n = ct__node_new(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0",
                              log ? ct__log_softmax_backward : ct__softmax_backward, &t, 1);
    if (n) {
        n->i[0] = d;
        ct__save_output(n, y);
    }
    y = ct__set_history(y, n);
    return ct__scoped(y);
}

ct_tensor *ct_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__softmax_impl("ct_softmax", t, dim, false);
}

ct_tensor *ct_log_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__softmax_impl("ct_log_softmax", t, dim, true);
}

#undef CT__SOFTMAX_KERNEL

CT__VECTORIZE_END
