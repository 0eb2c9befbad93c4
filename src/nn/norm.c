/* nn/norm.c - batch and layer norm (fused kernels, forward and backward), group, instance and
 * RMS norm (composites), dropout, and their modules.
 *
 * Legend: batch norm x (N, C, L) contiguous (L: the spatial dims flattened, 1 for (N, C)),
 * M = N * L values per channel; layer norm x (R, K): R rows of the K normalized values.
 * Sums run in 32 lanes of the data's type over chunks of CT__NORM_CHUNK values (lane k adds
 * the elements 32 j + k, lane 0 then the tail in order; a batch norm channel's planes shorter
 * than a chunk go through the same lanes one after another in runs of whole planes of at most
 * a chunk), each chunk's lanes added into a double in lane order: four independent vector
 * chains, and the same bits for any thread count (a channel or row is summed by one thread).
 * float32 on AVX2 does the lanes' same operations in four vectors (ct__norm_v*): the same
 * bits as the scalar loops.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/view.h"
#include "../autograd/autograd.h"
#include "state_dict.h"
#include "module.h"
#include "norm.h"

#include <float.h>
#if defined(CT__HAS_AVX2)
#include <immintrin.h>
#endif

CT__VECTORIZE_BEGIN

#define CT__NORM_LANES 32
#define CT__NORM_CHUNK 1024

/* ---- lane sums -------------------------------------------------------------------------- */
/* The vector parts: whole blocks of 32 from i while they fit in [i, e), lanes acc[0..32) (a0,
   a1) in four vectors; each returns where the scalar loop goes on. */
#if defined(CT__HAS_AVX2)
/* STMT for u = 0..3, spelled out (a loop over u keeps the vectors in memory) */
#define CT__NORM_V1(STMT, U)                                                                    \
    {                                                                                           \
        const int u = U;                                                                        \
        STMT;                                                                                   \
    }
#define CT__NORM_V4(STMT)                                                                       \
    CT__NORM_V1(STMT, 0) CT__NORM_V1(STMT, 1) CT__NORM_V1(STMT, 2) CT__NORM_V1(STMT, 3)
/* sq 0: acc += x; sq 1: acc = fma(x - m, x - m, acc) */
static int64_t ct__norm_vsum_f32(const float *x, int64_t i, int64_t e, float m, int sq,
                                 float *acc)
{
    __m256 a[4], vm = _mm256_set1_ps(m);
    CT__NORM_V4(a[u] = _mm256_loadu_ps(acc + 8 * u))
    if (sq) {
        for (; i + 32 <= e; i += 32) {
            CT__NORM_V4(__m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8 * u), vm);
                        a[u] = _mm256_fmadd_ps(d, d, a[u]))
        }
    } else {
        for (; i + 32 <= e; i += 32) {
            CT__NORM_V4(a[u] = _mm256_add_ps(a[u], _mm256_loadu_ps(x + i + 8 * u)))
        }
    }
    CT__NORM_V4(_mm256_storeu_ps(acc + 8 * u, a[u]))
    return i;
}

/* a0 += g; a1 = fma(g, x - m, a1) */
static int64_t ct__norm_vgdot_f32(const float *g, const float *x, int64_t i, int64_t e,
                                  float m, float *a0, float *a1)
{
    __m256 s[4], t[4], vm = _mm256_set1_ps(m);
    CT__NORM_V4(s[u] = _mm256_loadu_ps(a0 + 8 * u); t[u] = _mm256_loadu_ps(a1 + 8 * u))
    for (; i + 32 <= e; i += 32) {
        CT__NORM_V4(__m256 gv = _mm256_loadu_ps(g + i + 8 * u); s[u] = _mm256_add_ps(s[u], gv);
                    t[u] = _mm256_fmadd_ps(gv, _mm256_sub_ps(_mm256_loadu_ps(x + i + 8 * u), vm),
                                           t[u]))
    }
    CT__NORM_V4(_mm256_storeu_ps(a0 + 8 * u, s[u]); _mm256_storeu_ps(a1 + 8 * u, t[u]))
    return i;
}
#undef CT__NORM_V4
#undef CT__NORM_V1
#define CT__NORM_VSUM_f32(x, i, e, m, sq, acc) ct__norm_vsum_f32(x, i, e, m, sq, acc)
#define CT__NORM_VGDOT_f32(g, x, i, e, m, a0, a1) ct__norm_vgdot_f32(g, x, i, e, m, a0, a1)
#else
#define CT__NORM_VSUM_f32(x, i, e, m, sq, acc) (i)
#define CT__NORM_VGDOT_f32(g, x, i, e, m, a0, a1) (i)
#endif
#define CT__NORM_VSUM_f64(x, i, e, m, sq, acc) (i)
#define CT__NORM_VGDOT_f64(g, x, i, e, m, a0, a1) (i)

/* sum: s[0] = sum x; sqdev: s[0] = sum (x - m)^2; gdot: s[0] = sum g, s[1] = sum g (x - m) */
#define CT__NORM_SUMS(T, S, F)                                                                  \
    /* the lanes acc of x[0, n): sq 0 adds x, sq 1 (x - m)^2 */                                 \
    static void ct__norm_acc_##S(const T *x, int64_t n, T m, int sq, T *acc)                    \
    {                                                                                           \
        int64_t i = CT__NORM_VSUM_##S(x, 0, n, m, sq, acc);                                     \
        for (; i + CT__NORM_LANES <= n; i += CT__NORM_LANES) {                                  \
            for (int k = 0; k < CT__NORM_LANES; k++) {                                          \
                T d = x[i + k] - m;                                                             \
                acc[k] = sq ? fma##F(d, d, acc[k]) : acc[k] + x[i + k];                         \
            }                                                                                   \
        }                                                                                       \
        for (; i < n; i++) {                                                                    \
            acc[0] = sq ? fma##F(x[i] - m, x[i] - m, acc[0]) : acc[0] + x[i];                   \
        }                                                                                       \
    }                                                                                           \
    /* the lanes a0 += g, a1 = fma(g, x - m, a1) of [0, n) */                                   \
    static void ct__norm_gacc_##S(const T *g, const T *x, int64_t n, T m, T *a0, T *a1)         \
    {                                                                                           \
        int64_t i = CT__NORM_VGDOT_##S(g, x, 0, n, m, a0, a1);                                  \
        for (; i + CT__NORM_LANES <= n; i += CT__NORM_LANES) {                                  \
            for (int k = 0; k < CT__NORM_LANES; k++) {                                          \
                a0[k] += g[i + k];                                                              \
                a1[k] = fma##F(g[i + k], x[i + k] - m, a1[k]);                                  \
            }                                                                                   \
        }                                                                                       \
        for (; i < n; i++) {                                                                    \
            a0[0] += g[i];                                                                      \
            a1[0] = fma##F(g[i], x[i] - m, a1[0]);                                              \
        }                                                                                       \
    }                                                                                           \
    /* Over segs segments of n values, step apart: gdot (g given) s[0] = sum g, s[1] = sum      \
       g (x - m); else s[0] = sum x (sq 0) or sum (x - m)^2 (sq 1). A run of whole segments     \
       of at most CT__NORM_CHUNK values (short ones: a batch norm channel's planes) shares      \
       the lanes; a longer segment is one run in chunks; each chunk's lanes go into the         \
       run's double in lane order, each run's double into s. */                                 \
    static void ct__norm_runs_##S(const T *g, const T *x, int64_t segs, int64_t step,           \
                                  int64_t n, T m, int sq, double *s)                            \
    {                                                                                           \
        int64_t per = n > 0 && n < CT__NORM_CHUNK ? CT__NORM_CHUNK / n : 1;                     \
        s[0] = s[1] = 0;                                                                        \
        for (int64_t r0 = 0; r0 < segs; r0 += per) {                                            \
            int64_t r1 = segs - r0 < per ? segs : r0 + per;                                     \
            double t[2] = {0, 0};                                                               \
            for (int64_t c0 = 0; c0 < n; c0 += CT__NORM_CHUNK) {                                \
                int64_t e = n - c0 < CT__NORM_CHUNK ? n : c0 + CT__NORM_CHUNK;                  \
                T a0[CT__NORM_LANES] = {0}, a1[CT__NORM_LANES] = {0};                           \
                for (int64_t r = r0; r < r1; r++) {                                             \
                    if (g) {                                                                    \
                        ct__norm_gacc_##S(g + r * step + c0, x + r * step + c0, e - c0, m,      \
                                          a0, a1);                                              \
                    } else {                                                                    \
                        ct__norm_acc_##S(x + r * step + c0, e - c0, m, sq, a0);                 \
                    }                                                                           \
                }                                                                               \
                for (int k = 0; k < CT__NORM_LANES; k++) {                                      \
                    t[0] += (double)a0[k];                                                      \
                    t[1] += (double)a1[k];                                                      \
                }                                                                               \
            }                                                                                   \
            s[0] += t[0];                                                                       \
            s[1] += t[1];                                                                       \
        }                                                                                       \
    }                                                                                           \
    static double ct__norm_sum_##S(const T *x, int64_t segs, int64_t step, int64_t n)           \
    {                                                                                           \
        double s[2];                                                                            \
        ct__norm_runs_##S(NULL, x, segs, step, n, 0, 0, s);                                     \
        return s[0];                                                                            \
    }                                                                                           \
    static double ct__norm_sqdev_##S(const T *x, int64_t segs, int64_t step, int64_t n, T m)    \
    {                                                                                           \
        double s[2];                                                                            \
        ct__norm_runs_##S(NULL, x, segs, step, n, m, 1, s);                                     \
        return s[0];                                                                            \
    }

/* ---- batch norm kernels ------------------------------------------------------------------ */
typedef struct ct__bn_job {
    const ct_tensor *x, *g, *w, *b; /* x, g: contiguous (N, C, L) of the kernel's dtype */
    ct_tensor *y, *rm, *rv;         /* y or dx; the running statistics (or NULL) */
    ct_tensor *mean, *invstd;       /* (C) of the kernel's dtype: computed, or read (backward) */
    ct_tensor *dw, *db;             /* backward: (C) */
    int64_t N, C, L;
    bool training;
    double momentum, eps;
} ct__bn_job;

/* t[c] as a double (t: 1-D of any float dtype and stride), or dflt when t is NULL */
static double ct__norm_at(const ct_tensor *t, int64_t c, double dflt)
{
    if (!t) {
        return dflt;
    }
    const char *p = ct__data(t) + (size_t)(c * t->strides[0]) * ct_dtype_size(t->dtype);
    return ct__load_f64(p, t->dtype);
}

static void ct__norm_set(ct_tensor *t, int64_t c, double v)
{
    ct__store_f64(ct__data(t) + (size_t)(c * t->strides[0]) * ct_dtype_size(t->dtype), t->dtype,
                  v);
}

/* Channel c's mean and invstd: the batch's (training; the running statistics updated with
   the unbiased variance) or the running ones. */
#define CT__BN_STATS(T, S, F)                                                                   \
    static void ct__bn_stats_##S(const ct__bn_job *j, int64_t c, T *mean, T *invstd)            \
    {                                                                                           \
        const T *x = (const T *)ct__data(j->x);                                                 \
        int64_t N = j->N, C = j->C, L = j->L, M = N * L;                                        \
        if (!j->training) {                                                                     \
            *mean = (T)ct__norm_at(j->rm, c, 0);                                                \
            *invstd = (T)(1.0 / sqrt(ct__norm_at(j->rv, c, 1) + j->eps));                       \
            return;                                                                             \
        }                                                                                       \
        double mu = ct__norm_sum_##S(x + c * L, N, C * L, L) / (double)M;                       \
        double sq = ct__norm_sqdev_##S(x + c * L, N, C * L, L, (T)mu);                          \
        *mean = (T)mu;                                                                          \
        *invstd = (T)(1.0 / sqrt(sq / (double)M + j->eps));                                     \
        double m = j->momentum;                                                                 \
        if (j->rm) {                                                                            \
            ct__norm_set(j->rm, c, m * mu + (1 - m) * ct__norm_at(j->rm, c, 0));                \
        }                                                                                       \
        if (j->rv) {                                                                            \
            double unbiased = sq / (double)(M - 1);                                             \
            ct__norm_set(j->rv, c, m * unbiased + (1 - m) * ct__norm_at(j->rv, c, 1));          \
        }                                                                                       \
    }                                                                                           \
    /* y = x * scale + shift per channel, scale = w * invstd, shift = b - mean * scale */       \
    static void ct__bn_forward_##S(int64_t cb, int64_t ce, void *ctx)                           \
    {                                                                                           \
        const ct__bn_job *j = (const ct__bn_job *)ctx;                                          \
        const T *x = (const T *)ct__data(j->x);                                                 \
        T *y = (T *)ct__data(j->y);                                                             \
        for (int64_t c = cb; c < ce; c++) {                                                     \
            T mean, invstd;                                                                     \
            ct__bn_stats_##S(j, c, &mean, &invstd);                                             \
            ((T *)ct__data(j->mean))[c] = mean;                                                 \
            ((T *)ct__data(j->invstd))[c] = invstd;                                             \
            T scale = (T)ct__norm_at(j->w, c, 1) * invstd;                                      \
            T shift = (T)ct__norm_at(j->b, c, 0) - mean * scale;                                \
            for (int64_t n = 0; n < j->N; n++) {                                                \
                const T *xr = x + (n * j->C + c) * j->L;                                        \
                T *yr = y + (n * j->C + c) * j->L;                                              \
                for (int64_t l = 0; l < j->L; l++) {                                            \
                    yr[l] = fma##F(xr[l], scale, shift);                                        \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    /* dbias = sum g; dweight = sum g (x - mean) invstd; dx = k g + a x + b0 with k = w invstd  \
       and, in training, the projection of the batch statistics (a, b0; 0 in eval) */           \
    static void ct__bn_backward_##S(int64_t cb, int64_t ce, void *ctx)                          \
    {                                                                                           \
        const ct__bn_job *j = (const ct__bn_job *)ctx;                                          \
        const T *x = (const T *)ct__data(j->x), *g = (const T *)ct__data(j->g);                 \
        T *dx = (T *)ct__data(j->y);                                                            \
        int64_t N = j->N, C = j->C, L = j->L;                                                   \
        double M = (double)(N * L);                                                             \
        for (int64_t c = cb; c < ce; c++) {                                                     \
            T mean = ((const T *)ct__data(j->mean))[c];                                         \
            T invstd = ((const T *)ct__data(j->invstd))[c];                                     \
            double s[2];                                                                        \
            ct__norm_runs_##S(g + c * L, x + c * L, N, C * L, L, mean, 0, s);                   \
            ((T *)ct__data(j->db))[c] = (T)s[0];                                                \
            ((T *)ct__data(j->dw))[c] = (T)(s[1] * (double)invstd);                             \
            double k = ct__norm_at(j->w, c, 1) * (double)invstd, a = 0, b0 = 0;                 \
            if (j->training) {                                                                  \
                double proj = s[1] * (double)invstd * (double)invstd / M;                       \
                a = -k * proj;                                                                  \
                b0 = k * ((double)mean * proj - s[0] / M);                                      \
            }                                                                                   \
            for (int64_t n = 0; n < N; n++) {                                                   \
                int64_t o = (n * C + c) * L;                                                    \
                for (int64_t l = 0; l < L; l++) {                                               \
                    dx[o + l] = fma##F(g[o + l], (T)k, fma##F(x[o + l], (T)a, (T)b0));          \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }

/* ---- layer norm kernels ------------------------------------------------------------------ */
typedef struct ct__ln_job {
    const ct_tensor *x, *g;     /* contiguous (R, K) */
    const ct_tensor *w, *b;     /* contiguous (K) of the kernel's dtype (ones, zeros if absent) */
    ct_tensor *y, *mean, *rstd; /* y or dx (R, K); (R) */
    void *part;                 /* backward: (blocks, 2, K) of the data's type */
    double *dw, *db;            /* backward: (K) column sums */
    int64_t R, K;
    double eps;
} ct__ln_job;

/* The parameter gradients sum each block of CT__LN_ROWS rows in the data's type (in row order,
   while the block's dx is computed), then add the blocks' sums into a double in block order:
   the same bits for any thread count. */
#define CT__LN_ROWS 64

#define CT__LN_KERNELS(T, S, F)                                                                 \
    static void ct__ln_forward_##S(int64_t rb, int64_t re, void *ctx)                           \
    {                                                                                           \
        const ct__ln_job *j = (const ct__ln_job *)ctx;                                          \
        int64_t K = j->K;                                                                       \
        const T *w = (const T *)ct__data(j->w), *b = (const T *)ct__data(j->b);                 \
        for (int64_t r = rb; r < re; r++) {                                                     \
            const T *x = (const T *)ct__data(j->x) + r * K;                                     \
            T *y = (T *)ct__data(j->y) + r * K;                                                 \
            T mean = (T)(ct__norm_sum_##S(x, 1, 0, K) / (double)K);                             \
            double var = ct__norm_sqdev_##S(x, 1, 0, K, mean) / (double)K;                      \
            T rstd = (T)(1.0 / sqrt(var + j->eps));                                             \
            ((T *)ct__data(j->mean))[r] = mean;                                                 \
            ((T *)ct__data(j->rstd))[r] = rstd;                                                 \
            for (int64_t k = 0; k < K; k++) {                                                   \
                y[k] = fma##F((x[k] - mean) * rstd, w[k], b[k]);                                \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    /* Blocks [bb, be) of CT__LN_ROWS rows: per row, with gw = g w (first stored in dx),        \
       dx = rstd (gw - sum(gw) / K - xhat sum(gw xhat) / K); the block's column sums of g xhat  \
       and g into part. */                                                                      \
    static void ct__ln_backward_##S(int64_t bb, int64_t be, void *ctx)                          \
    {                                                                                           \
        const ct__ln_job *j = (const ct__ln_job *)ctx;                                          \
        int64_t K = j->K;                                                                       \
        const T *w = (const T *)ct__data(j->w);                                                 \
        for (int64_t blk = bb; blk < be; blk++) {                                               \
            T *aw = (T *)j->part + blk * 2 * K, *ab = aw + K;                                   \
            for (int64_t k = 0; k < K; k++) {                                                   \
                aw[k] = ab[k] = 0;                                                              \
            }                                                                                   \
            int64_t r0 = blk * CT__LN_ROWS;                                                     \
            int64_t r1 = j->R - r0 < CT__LN_ROWS ? j->R : r0 + CT__LN_ROWS;                     \
            for (int64_t r = r0; r < r1; r++) {                                                 \
                const T *x = (const T *)ct__data(j->x) + r * K;                                 \
                const T *g = (const T *)ct__data(j->g) + r * K;                                 \
                T *dx = (T *)ct__data(j->y) + r * K;                                            \
                T mean = ((const T *)ct__data(j->mean))[r];                                     \
                T rstd = ((const T *)ct__data(j->rstd))[r];                                     \
                for (int64_t k = 0; k < K; k++) {                                               \
                    dx[k] = g[k] * w[k];                                                        \
                    ab[k] += g[k];                                                              \
                }                                                                               \
                double s[2];                                                                    \
                ct__norm_runs_##S(dx, x, 1, 0, K, mean, 0, s);                                  \
                T a = (T)(s[0] / (double)K), c = (T)(s[1] * (double)rstd / (double)K);          \
                for (int64_t k = 0; k < K; k++) {                                               \
                    T xhat = (x[k] - mean) * rstd;                                              \
                    aw[k] = fma##F(g[k], xhat, aw[k]);                                          \
                    dx[k] = fma##F(-xhat, c, dx[k] - a) * rstd;                                 \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    /* dw[k], db[k] for columns [kb, ke): the blocks' sums in block order */                    \
    static void ct__ln_param_grads_##S(int64_t kb, int64_t ke, void *ctx)                       \
    {                                                                                           \
        const ct__ln_job *j = (const ct__ln_job *)ctx;                                          \
        int64_t K = j->K, nb = (j->R + CT__LN_ROWS - 1) / CT__LN_ROWS;                          \
        for (int64_t k = kb; k < ke; k++) {                                                     \
            double dw = 0, db = 0;                                                              \
            for (int64_t blk = 0; blk < nb; blk++) {                                            \
                dw += (double)((const T *)j->part)[blk * 2 * K + k];                            \
                db += (double)((const T *)j->part)[blk * 2 * K + K + k];                        \
            }                                                                                   \
            j->dw[k] = dw;                                                                      \
            j->db[k] = db;                                                                      \
        }                                                                                       \
    }

CT__NORM_SUMS(float, f32, f)
CT__BN_STATS(float, f32, f)
CT__LN_KERNELS(float, f32, f)
CT__VECTORIZE_END

/* float64: -O2's own (very cheap) vectorization only, little to compile */
CT__NORM_SUMS(double, f64, )
CT__BN_STATS(double, f64, )
CT__LN_KERNELS(double, f64, )
#undef CT__NORM_SUMS
#undef CT__BN_STATS
#undef CT__LN_KERNELS

/* t itself when it is contiguous in dtype, else a contiguous copy (a new reference either
   way; NULL when out of memory or t is NULL). */
static ct_tensor *ct__norm_dense(const char *fn, const ct_tensor *t, ct_dtype dtype)
{
    if (!t || (t->dtype == dtype && ct_is_contiguous(t))) {
        return t ? ct_retain((ct_tensor *)(uintptr_t)t) : NULL;
    }
    ct_tensor *r = ct__tensor_new(fn, t->sizes, t->ndim, dtype);
    if (r) {
        ct__copy_kernel(r, t);
    }
    return r;
}

/* ct__norm_dense of a layer norm parameter, or (K) filled with v when it is absent */
static ct_tensor *ct__ln_param(const char *fn, const ct_tensor *t, int64_t K, double v,
                               ct_dtype dtype)
{
    if (t) {
        return ct__norm_dense(fn, t, dtype);
    }
    ct_tensor *r = ct__tensor_new(fn, &K, 1, dtype);
    if (r) {
        ct__fill_contig(r, v);
    }
    return r;
}

/* ---- batch norm: meta, kernels, derivative ---------------------------------------------- */
static bool ct__bn_check_vec(const char *fn, const char *name, const ct_tensor *t, int64_t C)
{
    if (t && (t->ndim != 1 || t->sizes[0] != C)) {
        ct__fail(CT_ERR_SHAPE, fn, "%s should contain %lld elements not %lld", name,
                 (long long)C, (long long)ct_numel(t));
        return false;
    }
    return true;
}

/* The dtype of the statistics: the kernel's (float32 for half inputs) */
static ct_dtype ct__norm_stat_dtype(ct_dtype d)
{
    return ct__is_half(d) ? CT_FLOAT32 : d;
}

/* inputs x, weight, bias, running_mean, running_var; attrs training, momentum, eps.
   Outputs y, save_mean (C), save_invstd (C). */
static bool ct__bn_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    if (!ct_dtype_is_floating_point(x->dtype)) {
        return ct__fail(CT_ERR_DTYPE, c->fn, "\"batch_norm\" not implemented for '%s'",
                        ct__dtype_title(x->dtype)) == CT_OK;
    }
    if (x->ndim < 2) {
        return ct__fail(CT_ERR_SHAPE, c->fn, "Expected 2D or higher input (got %dD input)",
                        x->ndim) == CT_OK;
    }
    int64_t C = x->sizes[1];
    if (c->attrs[0].i && C && ct_numel(x) / C == 1) {
        char a[128];
        return ct__fail(CT_ERR_VALUE, c->fn, "Expected more than 1 value per channel when "
                        "training, got input size %s",
                        ct__shape_str(x->sizes, x->ndim, a, sizeof a)) == CT_OK;
    }
    const char *names[4] = {"weight", "bias", "running_mean", "running_var"};
    for (int k = 0; k < 4; k++) {
        if (!ct__bn_check_vec(c->fn, names[k], c->inputs[k + 1], C)) {
            return false;
        }
    }
    if (!c->attrs[0].i && (!c->inputs[3] || !c->inputs[4])) {
        return ct__fail(CT_ERR_VALUE, c->fn, "running_mean must be defined in evaluation mode") ==
               CT_OK;
    }
    c->dtype = x->dtype;
    ct_dtype sd = ct__norm_stat_dtype(x->dtype);
    return ct__op_output(c, x->sizes, x->ndim, x->dtype) && ct__op_output(c, &C, 1, sd) &&
           ct__op_output(c, &C, 1, sd);
}

static ct__bn_job ct__bn_job_of(const ct_tensor *x)
{
    ct__bn_job j;
    memset(&j, 0, sizeof j);
    j.N = x->sizes[0];
    j.C = x->sizes[1];
    j.L = 1;
    for (int d = 2; d < x->ndim; d++) {
        j.L *= x->sizes[d];
    }
    return j;
}

static ct_status ct__bn_kernel(ct_op_call *c)
{
    ct_tensor *xc = ct__norm_dense(c->fn, c->inputs[0], c->dtype);
    if (!xc) {
        return ct_error_code();
    }
    ct__bn_job j = ct__bn_job_of(xc);
    j.x = xc;
    j.w = c->inputs[1];
    j.b = c->inputs[2];
    j.rm = (ct_tensor *)(uintptr_t)c->inputs[3];
    j.rv = (ct_tensor *)(uintptr_t)c->inputs[4];
    j.training = c->attrs[0].i != 0;
    j.momentum = c->attrs[1].f;
    j.eps = c->attrs[2].f;
    j.y = c->outputs[0];
    j.mean = c->outputs[1];
    j.invstd = c->outputs[2];
    int64_t per = j.N * j.L;
    ct__parallel_for(j.C, CT__GRAIN / (per ? per : 1) + 1,
                     c->dtype == CT_FLOAT32 ? ct__bn_forward_f32 : ct__bn_forward_f64, &j);
    ct__release(xc);
    return CT_OK;
}

/* inputs grad_out, x, weight, running_mean, running_var, save_mean, save_invstd; attr train.
   Outputs dx, dweight (C), dbias (C). */
static bool ct__bn_bw_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[1];
    int64_t C = x->sizes[1];
    c->dtype = x->dtype;
    ct_dtype sd = ct__norm_stat_dtype(x->dtype);
    return ct__op_output(c, x->sizes, x->ndim, x->dtype) && ct__op_output(c, &C, 1, sd) &&
           ct__op_output(c, &C, 1, sd);
}

static ct_status ct__bn_bw_kernel(ct_op_call *c)
{
    ct_tensor *gc = ct__norm_dense(c->fn, c->inputs[0], c->dtype);
    ct_tensor *xc = gc ? ct__norm_dense(c->fn, c->inputs[1], c->dtype) : NULL;
    if (xc) {
        ct__bn_job j = ct__bn_job_of(xc);
        j.x = xc;
        j.g = gc;
        j.w = c->inputs[2];
        j.mean = (ct_tensor *)(uintptr_t)c->inputs[5];
        j.invstd = (ct_tensor *)(uintptr_t)c->inputs[6];
        j.training = c->attrs[0].i != 0;
        j.y = c->outputs[0];
        j.dw = c->outputs[1];
        j.db = c->outputs[2];
        int64_t per = j.N * j.L;
        ct__parallel_for(j.C, CT__GRAIN / (per ? per : 1) + 1,
                         c->dtype == CT_FLOAT32 ? ct__bn_backward_f32 : ct__bn_backward_f64, &j);
    }
    ct__release(gc);
    ct__release(xc);
    return xc ? CT_OK : ct_error_code();
}

/* Batch and layer norm save x, weight and the two statistics (mean, invstd / rstd), i[0]
   (batch norm: training; layer norm: the number of normalized dims) and f[0] = eps (the last
   attribute of both). */
static void ct__norm_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->attrs[0].i;
    n->f[0] = c->attrs[c->n_attrs - 1].f;
    ct__save(n, c->inputs[0]);
    ct__save(n, c->inputs[1]);
    ct__save(n, c->outputs[1]);
    ct__save(n, c->outputs[2]);
}

/* A backward op of batch or layer norm: dx, with dweight and dbias through out-pointers. */
typedef ct_tensor *(*ct__norm_grad_fn)(const ct_node *n, const ct_tensor *g, const ct_tensor *x,
                                        const ct_tensor *w, const ct_tensor *mean,
                                        const ct_tensor *inv, ct_tensor **dw, ct_tensor **db);

/* gi for input, weight and bias from the saved tensors through grad. */
static void ct__norm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi,
                              ct__norm_grad_fn grad)
{
    const ct_tensor *x = ct__saved(n, 0), *w = ct__saved(n, 1);
    const ct_tensor *mean = ct__saved(n, 2), *inv = ct__saved(n, 3);
    if (!x || !mean || !inv) {
        return;
    }
    ct_tensor *dw = NULL, *db = NULL;
    gi[0] = grad(n, g, x, w, mean, inv, &dw, &db);
    gi[1] = ct__needs_grad(n, 1) ? dw : NULL;
    gi[2] = ct__needs_grad(n, 2) ? db : NULL;
}

static ct_tensor *ct__bn_grad(const ct_node *n, const ct_tensor *g, const ct_tensor *x,
                              const ct_tensor *w, const ct_tensor *mean, const ct_tensor *invstd,
                              ct_tensor **dw, ct_tensor **db);

static void ct__bn_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__norm_backward(n, g, gi, ct__bn_grad);
}

/* ---- layer norm: meta, kernels, derivative ----------------------------------------------- */
/* "[4, 5]" */
static const char *ct__norm_shape(const int64_t *s, int n, char *buf, size_t cap)
{
    return ct__shape_str(s, n, buf, cap);
}

/* layer_norm's and rms_norm's checks of input 0 against normalized_shape (attr 0): a
   floating dtype and trailing sizes equal to it; sep is what follows "[*" in the shape
   message (", " for layer_norm, "" for rms_norm, as PyTorch words them). */
static bool ct__norm_check_input(const ct_op_call *c, const char *name, const char *sep)
{
    const ct_tensor *x = c->inputs[0];
    const int64_t *ns = c->attrs[0].ints;
    int n = (int)c->attrs[0].i;
    char a[128], b[128], e[128];
    if (!ct_dtype_is_floating_point(x->dtype)) {
        return ct__fail(CT_ERR_DTYPE, c->fn, "\"%s\" not implemented for '%s'", name,
                        ct__dtype_title(x->dtype)) == CT_OK;
    }
    bool fits = n >= 1 && n <= x->ndim;
    for (int k = 0; fits && k < n; k++) {
        fits = x->sizes[x->ndim - n + k] == ns[k];
    }
    if (!fits) {
        return ct__fail(CT_ERR_SHAPE, c->fn,
                        "Given normalized_shape=%s, expected input with shape [*%s%s, but got "
                        "input of size%s",
                        ct__norm_shape(ns, n, a, sizeof a), sep,
                        ct__norm_shape(ns, n, b, sizeof b) + 1,
                        ct__shape_str(x->sizes, x->ndim, e, sizeof e)) == CT_OK;
    }
    return true;
}

/* inputs x, weight, bias; attrs normalized_shape, eps. Outputs y, mean (R), rstd (R). */
static bool ct__ln_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    const int64_t *ns = c->attrs[0].ints;
    int n = (int)c->attrs[0].i;
    char a[128], b[128];
    if (!ct__norm_check_input(c, "layer_norm", ", ")) {
        return false;
    }
    const char *names[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++) {
        const ct_tensor *p = c->inputs[k + 1];
        bool same = !p || p->ndim == n;
        for (int d = 0; same && p && d < n; d++) {
            same = p->sizes[d] == ns[d];
        }
        if (!same) {
            return ct__fail(CT_ERR_SHAPE, c->fn,
                            "Expected %s to be of same shape as normalized_shape, but got %s of "
                            "shape %s and normalized_shape = %s",
                            names[k], names[k], ct__shape_str(p->sizes, p->ndim, a, sizeof a),
                            ct__norm_shape(ns, n, b, sizeof b)) == CT_OK;
        }
    }
    c->dtype = x->dtype;
    int64_t R = 1;
    for (int d = 0; d < x->ndim - n; d++) {
        R *= x->sizes[d];
    }
    ct_dtype sd = ct__norm_stat_dtype(x->dtype);
    return ct__op_output(c, x->sizes, x->ndim, x->dtype) && ct__op_output(c, &R, 1, sd) &&
           ct__op_output(c, &R, 1, sd);
}

static ct__ln_job ct__ln_job_of(const ct_tensor *x, int64_t R)
{
    ct__ln_job j;
    memset(&j, 0, sizeof j);
    j.R = R;
    j.K = R ? ct_numel(x) / R : 0;
    return j;
}

static ct_status ct__ln_kernel(ct_op_call *c)
{
    ct__ln_job j = ct__ln_job_of(c->inputs[0], c->outputs[1]->sizes[0]);
    ct_tensor *xc = ct__norm_dense(c->fn, c->inputs[0], c->dtype);
    ct_tensor *wc = ct__ln_param(c->fn, c->inputs[1], j.K, 1, c->dtype);
    ct_tensor *bc = ct__ln_param(c->fn, c->inputs[2], j.K, 0, c->dtype);
    bool ok = xc && wc && bc;
    if (ok) {
        j.x = xc;
        j.w = wc;
        j.b = bc;
        j.y = c->outputs[0];
        j.mean = c->outputs[1];
        j.rstd = c->outputs[2];
        j.eps = c->attrs[1].f;
        ct__parallel_for(j.R, CT__GRAIN / (j.K ? j.K : 1) + 1,
                         c->dtype == CT_FLOAT32 ? ct__ln_forward_f32 : ct__ln_forward_f64, &j);
    }
    ct__release(xc);
    ct__release(wc);
    ct__release(bc);
    return ok ? CT_OK : ct_error_code();
}

/* inputs grad_out, x, mean, rstd, weight, bias (unread); attrs normalized_shape, output_mask
   (bit 1: dweight, bit 2: dbias). Outputs dx, and dweight, dbias (normalized_shape) when the
   mask asks for either. */
static bool ct__ln_bw_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[1];
    int n = (int)c->attrs[0].i;
    c->dtype = x->dtype;
    if (!ct__op_output(c, x->sizes, x->ndim, x->dtype)) {
        return false;
    }
    if (!(c->attrs[1].i & 6)) {
        return true;
    }
    const int64_t *ps = x->sizes + x->ndim - n;
    return ct__op_output(c, ps, n, x->dtype) && ct__op_output(c, ps, n, x->dtype);
}

static ct_status ct__ln_bw_kernel(ct_op_call *c)
{
    ct_tensor *gc = ct__norm_dense(c->fn, c->inputs[0], c->dtype);
    ct_tensor *xc = ct__norm_dense(c->fn, c->inputs[1], c->dtype);
    ct__ln_job j = ct__ln_job_of(c->inputs[1], c->inputs[2]->sizes[0]);
    ct_tensor *wc = ct__ln_param(c->fn, c->inputs[4], j.K, 1, c->dtype);
    int64_t nb = (j.R + CT__LN_ROWS - 1) / CT__LN_ROWS;
    size_t ts = ct_dtype_size(c->dtype);
    char *buf = (char *)ct__malloc(sizeof(double) * (size_t)(2 * j.K) +
                                   ts * (size_t)(2 * nb * j.K) + 1);
    bool ok = gc && xc && wc && buf;
    if (ok) {
        bool f32 = c->dtype == CT_FLOAT32;
        j.x = xc;
        j.g = gc;
        j.w = wc;
        j.y = c->outputs[0];
        j.mean = (ct_tensor *)(uintptr_t)c->inputs[2];
        j.rstd = (ct_tensor *)(uintptr_t)c->inputs[3];
        j.dw = (double *)(void *)buf;
        j.db = j.dw + j.K;
        j.part = j.db + j.K;
        ct__parallel_for(nb, CT__GRAIN / (CT__LN_ROWS * j.K + 1) + 1,
                         f32 ? ct__ln_backward_f32 : ct__ln_backward_f64, &j);
        if (c->n_outputs == 3) {
            ct__parallel_for(j.K, CT__GRAIN / (nb + 1) + 1,
                             f32 ? ct__ln_param_grads_f32 : ct__ln_param_grads_f64, &j);
            for (int64_t k = 0; k < j.K; k++) {
                ct__store_f64(ct__data(c->outputs[1]) + (size_t)k * ts, c->dtype, j.dw[k]);
                ct__store_f64(ct__data(c->outputs[2]) + (size_t)k * ts, c->dtype, j.db[k]);
            }
        }
    }
    ct__free(buf);
    ct__release(gc);
    ct__release(xc);
    ct__release(wc);
    return ok ? CT_OK : ct__fail(CT_ERR_OOM, c->fn, "out of memory");
}

static ct_tensor *ct__ln_grad(const ct_node *n, const ct_tensor *g, const ct_tensor *x,
                              const ct_tensor *w, const ct_tensor *mean, const ct_tensor *rstd,
                              ct_tensor **dw, ct_tensor **db);

static void ct__ln_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__norm_backward(n, g, gi, ct__ln_grad);
}

/* ---- composites: group norm, instance norm, rms norm, dropout ---------------------------- */
/* (C) viewed as (1, C, 1, ...) for an input of ndim dims */
static ct_tensor *ct__norm_channel_view(const ct_tensor *v, int ndim)
{
    int64_t s[CT_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        s[d] = d == 1 ? v->sizes[0] : 1;
    }
    return ct_reshape(v, s, ndim);
}

/* y * weight + bias per channel (either may be NULL) */
static ct_tensor *ct__norm_affine(ct_tensor *y, const ct_tensor *w, const ct_tensor *b, int nd)
{
    y = w ? ct_mul(y, ct__norm_channel_view(w, nd)) : y;
    return b ? ct_add(y, ct__norm_channel_view(b, nd)) : y;
}

/* inputs x, weight, bias; attrs num_groups, eps: layer_norm over each group, then affine */
static ct_status ct__group_norm_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    int64_t G = c->attrs[0].i;
    ct_scope_begin();
    int64_t s3[3] = {x->sizes[0], G, -1};
    ct_tensor *x3 = ct_reshape(x, s3, 3);
    int64_t last = x3 ? x3->sizes[2] : 0;
    ct_tensor *y = ct_reshape(ct_layer_norm(x3, &last, 1, NULL, NULL, c->attrs[1].f), x->sizes,
                              x->ndim);
    y = ct__norm_affine(y, c->inputs[1], c->inputs[2], x->ndim);
    /* a float16/bfloat16 input with float32 parameters keeps its dtype, as PyTorch's CPU
       kernel (mixed types) */
    return ct__composite_end(c, y && ct__is_half(x->dtype) ? ct_to_dtype(y, x->dtype) : y);
}

static bool ct__group_norm_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    int64_t G = c->attrs[0].i;
    char a[128];
    if (x->ndim < 2) {
        return ct__fail(CT_ERR_SHAPE, c->fn, "Expected at least 2 dimensions for input tensor "
                        "but received %d", x->ndim) == CT_OK;
    }
    int64_t C = x->sizes[1];
    if (G <= 0 || C % G != 0) {
        return ct__fail(CT_ERR_SHAPE, c->fn,
                        "Expected number of channels in input to be divisible by num_groups, but "
                        "got input of shape %s and num_groups=%lld",
                        ct__shape_str(x->sizes, x->ndim, a, sizeof a), (long long)G) == CT_OK;
    }
    for (int k = 1; k < 3; k++) {
        const ct_tensor *p = c->inputs[k];
        if (p && (p->ndim != 1 || p->sizes[0] != C)) {
            char b[128];
            return ct__fail(CT_ERR_SHAPE, c->fn,
                            "Expected %s to be a vector of size equal to the number of channels "
                            "in input, but got %s of shape %s and input of shape %s",
                            k == 1 ? "weight" : "bias", k == 1 ? "weight" : "bias",
                            ct__shape_str(p->sizes, p->ndim, b, sizeof b),
                            ct__shape_str(x->sizes, x->ndim, a, sizeof a)) == CT_OK;
        }
    }
    return true;
}

/* t (C) repeated N times (N * C), or NULL */
static ct_tensor *ct__norm_repeat(const ct_tensor *t, int64_t N)
{
    return t ? ct_repeat(t, &N, 1) : NULL;
}

/* inputs x, weight, bias, running_mean, running_var; attrs use_input_stats, momentum, eps:
   batch_norm of x viewed as (1, N * C, *), the running statistics the batch mean of the
   repeated ones (PyTorch's instance_norm) */
static ct_status ct__instance_norm_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    ct_tensor *rm = (ct_tensor *)(uintptr_t)c->inputs[3];
    ct_tensor *rv = (ct_tensor *)(uintptr_t)c->inputs[4];
    int64_t N = x->sizes[0], C = x->sizes[1];
    ct_scope_begin();
    int64_t s[CT_MAX_DIMS];
    s[0] = 1;
    s[1] = N * C;
    for (int d = 2; d < x->ndim; d++) {
        s[d] = x->sizes[d];
    }
    ct_tensor *rm_ = ct__norm_repeat(rm, N), *rv_ = ct__norm_repeat(rv, N);
    ct_batch_norm_opts o = ct_batch_norm_defaults();
    o.weight = ct__norm_repeat(c->inputs[1], N);
    o.bias = ct__norm_repeat(c->inputs[2], N);
    o.training = c->attrs[0].i != 0;
    o.momentum = c->attrs[1].f;
    o.eps = c->attrs[2].f;
    ct_tensor *y = ct_batch_norm(ct_reshape(ct_contiguous(x), s, x->ndim), rm_, rv_, &o);
    int64_t nc[2] = {N, C};
    ct_no_grad_begin();
    if (rm && y) {
        ct_copy_(rm, ct_mean_dim(ct_reshape(rm_, nc, 2), 0, false));
    }
    if (rv && y) {
        ct_copy_(rv, ct_mean_dim(ct_reshape(rv_, nc, 2), 0, false));
    }
    ct_no_grad_end();
    return ct__composite_end(c, ct_reshape(y, x->sizes, x->ndim));
}

static bool ct__instance_norm_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    if (x->ndim < 2) {
        return ct__fail(CT_ERR_SHAPE, c->fn, "Expected 2D or higher input (got %dD input)",
                        x->ndim) == CT_OK;
    }
    int64_t spatial = 1;
    for (int d = 2; d < x->ndim; d++) {
        spatial *= x->sizes[d];
    }
    if (c->attrs[0].i && spatial == 1) {
        char a[128];
        return ct__fail(CT_ERR_VALUE, c->fn, "Expected more than 1 spatial element when "
                        "training, got input size %s",
                        ct__shape_str(x->sizes, x->ndim, a, sizeof a)) == CT_OK;
    }
    const char *names[4] = {"weight", "bias", "running_mean", "running_var"};
    for (int k = 0; k < 4; k++) {
        if (!ct__bn_check_vec(c->fn, names[k], c->inputs[k + 1], x->sizes[1])) {
            return false;
        }
    }
    return true;
}

/* inputs x, weight; attrs normalized_shape, eps: x * rsqrt(mean(x^2) + eps) * weight, in
   float32 for a float16/bfloat16 x and returned in x's dtype (PyTorch's rms_norm: opmath,
   then type_as(input)) */
static ct_status ct__rms_norm_composite(ct_op_call *c)
{
    const ct_tensor *x0 = c->inputs[0], *w = c->inputs[1];
    int n = (int)c->attrs[0].i;
    int64_t K = 1, s2[2];
    for (int d = x0->ndim - n; d < x0->ndim; d++) {
        K *= x0->sizes[d];
    }
    s2[0] = K ? ct_numel(x0) / K : 0;
    s2[1] = K;
    ct_scope_begin();
    const ct_tensor *x = ct__is_half(x0->dtype) ? ct_to_dtype(x0, CT_FLOAT32) : x0;
    ct_tensor *x2 = ct_reshape(x, s2, 2);
    ct_tensor *r = ct_rsqrt(ct_add_scalar(ct_mean_dim(ct_square(x2), 1, true), c->attrs[1].f));
    ct_tensor *y = ct_reshape(ct_mul(x2, r), x->sizes, x->ndim);
    y = w ? ct_mul(y, w) : y;
    return ct__composite_end(c, y && y->dtype != x0->dtype ? ct_to_dtype(y, x0->dtype) : y);
}

static bool ct__rms_norm_meta(ct_op_call *c)
{
    const ct_tensor *w = c->inputs[1];
    const int64_t *ns = c->attrs[0].ints;
    int n = (int)c->attrs[0].i;
    char a[128], b[128];
    if (!ct__norm_check_input(c, "rms_norm", "")) {
        return false;
    }
    bool same = !w || w->ndim == n;
    for (int d = 0; same && w && d < n; d++) {
        same = w->sizes[d] == ns[d];
    }
    if (!same) {
        return ct__fail(CT_ERR_SHAPE, c->fn,
                        "Expected weight to be of same shape as normalized_shape, but got weight "
                        "of shape %s and normalized_shape = %s",
                        ct__shape_str(w->sizes, w->ndim, a, sizeof a),
                        ct__norm_shape(ns, n, b, sizeof b)) == CT_OK;
    }
    return true;
}

static bool ct__dropout_check(const char *fn, double p)
{
    if (!(p >= 0 && p <= 1)) {
        ct__fail(CT_ERR_VALUE, fn, "dropout probability has to be between 0 and 1, but got %g", p);
        return false;
    }
    return true;
}

/* Whether t's elements fill its storage span without gaps or overlap in some dim order (then
   empty_like keeps its strides: PyTorch's preserve_format). */
static bool ct__norm_is_dense(const ct_tensor *t)
{
    int64_t expected = 1;
    bool used[CT_MAX_DIMS] = {false};
    for (int k = 0; k < t->ndim; k++) {
        int best = -1; /* the unused dim of size > 1 with the smallest stride */
        for (int d = 0; d < t->ndim; d++) {
            if (!used[d] && t->sizes[d] > 1 && (best < 0 || t->strides[d] < t->strides[best])) {
                best = d;
            }
        }
        if (best < 0) {
            break;
        }
        if (t->strides[best] != expected) {
            return false;
        }
        used[best] = true;
        expected *= t->sizes[best];
    }
    return true;
}

/* inputs x; attrs p, train, feature (dropout2d): x * bernoulli_(1 - p) / (1 - p) with one
   draw per element, or per (N, C) channel for feature dropout (PyTorch's _dropout_impl) */
static ct_status ct__dropout_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    double p = c->attrs[0].f;
    bool train = c->attrs[1].i != 0, feature = c->attrs[2].i != 0;
    ct_scope_begin();
    if (p == 0 || !train || ct_numel(x) == 0) {
        return ct__composite_end(c, ct_alias(x));
    }
    if (p == 1) {
        return ct__composite_end(c, ct_mul(x, ct_scalar_tensor(0, x->dtype)));
    }
    int64_t s[CT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        s[d] = feature && d >= 2 ? 1 : x->sizes[d];
    }
    ct_tensor *noise = feature || !ct__norm_is_dense(x)
                           ? ct_empty(s, x->ndim, x->dtype)
                           : ct_empty_strided(x->sizes, x->strides, x->ndim, x->dtype);
    ct_no_grad_begin();
    noise = ct_div_scalar(ct_bernoulli_(noise, 1 - p, NULL), 1 - p);
    ct_no_grad_end();
    return ct__composite_end(c, ct_mul(x, noise));
}

static bool ct__dropout_meta(ct_op_call *c)
{
    if (!ct__dropout_check(c->fn, c->attrs[0].f)) {
        return false;
    }
    if (c->attrs[2].i && c->inputs[0]->ndim < 2) {
        return ct__fail(CT_ERR_SHAPE, c->fn,
                        "Feature dropout requires at least 2 dimensions in the input") == CT_OK;
    }
    return true;
}

CT__GLUE_BEGIN
/* ---- descriptors ---------------------------------------------------------------------------- */
#define CT__NORM_OP(SYM, NAME, SCHEMA, API, OPT, META, K, COMP, NODE, BW, RECORD)               \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, 0,    \
                                       OPT, NULL, META, K, COMP, NODE, CT__BACKWARD(BW), 0u,   \
                                       RECORD, NULL};
CT__NORM_OP(native_batch_norm, "aten::native_batch_norm", "native_batch_norm(Tensor input, "
            "Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool "
            "training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", "ct_batch_norm",
            0x1eu, ct__bn_meta, CT__K_FLOAT(ct__bn_kernel), NULL, "NativeBatchNormBackward0",
            ct__bn_backward, ct__norm_record)
CT__NORM_OP(native_batch_norm_backward, "aten::native_batch_norm_backward",
            "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? "
            "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool "
            "train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
            "ct_backward (batch_norm)", 0x1cu, ct__bn_bw_meta, CT__K_FLOAT(ct__bn_bw_kernel),
            NULL, NULL, NULL, NULL)
CT__NORM_OP(native_layer_norm, "aten::native_layer_norm", "native_layer_norm(Tensor input, "
            "SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, "
            "Tensor, Tensor)", "ct_layer_norm", 0x6u, ct__ln_meta, CT__K_FLOAT(ct__ln_kernel),
            NULL, "NativeLayerNormBackward0", ct__ln_backward, ct__norm_record)
CT__NORM_OP(native_layer_norm_backward, "aten::native_layer_norm_backward",
            "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] "
            "normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] "
            "output_mask) -> (Tensor, Tensor, Tensor)", "ct_backward (layer_norm)", 0x30u,
            ct__ln_bw_meta, CT__K_FLOAT(ct__ln_bw_kernel), NULL, NULL, NULL, NULL)
CT__NORM_OP(group_norm, "aten::group_norm", "group_norm(Tensor input, int num_groups, Tensor? "
            "weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
            "ct_group_norm", 0x6u, ct__group_norm_meta, CT__K_NONE, ct__group_norm_composite,
            NULL, NULL, NULL)
CT__NORM_OP(instance_norm, "aten::instance_norm", "instance_norm(Tensor input, Tensor? weight, "
            "Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float "
            "momentum, float eps, bool cudnn_enabled) -> Tensor", "ct_instance_norm", 0x1eu,
            ct__instance_norm_meta, CT__K_NONE, ct__instance_norm_composite, NULL, NULL, NULL)
CT__NORM_OP(rms_norm, "aten::rms_norm", "rms_norm(Tensor input, SymInt[] normalized_shape, "
            "Tensor? weight=None, float? eps=None) -> Tensor", "ct_rms_norm", 0x2u,
            ct__rms_norm_meta, CT__K_NONE, ct__rms_norm_composite, NULL, NULL, NULL)
CT__NORM_OP(dropout, "aten::dropout", "dropout(Tensor input, float p, bool train) -> Tensor",
            "ct_dropout", 0u, ct__dropout_meta, CT__K_NONE, ct__dropout_composite, NULL, NULL,
            NULL)
CT__NORM_OP(feature_dropout, "aten::feature_dropout", "feature_dropout(Tensor input, float p, "
            "bool train) -> Tensor", "ct_dropout2d", 0u, ct__dropout_meta, CT__K_NONE,
            ct__dropout_composite, NULL, NULL, NULL)
#undef CT__NORM_OP

/* ---- backward under create_graph -----------------------------------------------------------
 * The gradients as ops (so they differentiate again), the statistics recomputed from x where
 * they depend on it: with xhat = (x - mean) * invstd over the reduced dims D (M values each),
 * dx = k (g - sum_D(g) / M - xhat sum_D(g xhat) / M), k = w * invstd (batch norm in eval: dx = k
 * g with the saved statistics), dweight = sum(g xhat), dbias = sum(g) over the other dims. */
/* x's mean and invstd over dims (keepdim), eps added to the biased variance */
static void ct__norm_stats_graph(const ct_tensor *x, const int64_t *dims, int nd, double M,
                                 double eps, ct_tensor **xc, ct_tensor **inv)
{
    *xc = ct_sub(x, ct_div_scalar(ct_sum_dims(x, dims, nd, true), M));
    ct_tensor *var = ct_div_scalar(ct_sum_dims(ct_mul(*xc, *xc), dims, nd, true), M);
    *inv = ct_rsqrt(ct_add_scalar(var, eps));
}

/* g - sum_D(g) / M - xhat sum_D(g xhat) / M (the projection of a gradient gw) */
static ct_tensor *ct__norm_project(const ct_tensor *gw, const ct_tensor *xhat,
                                   const int64_t *dims, int nd, double M)
{
    ct_tensor *a = ct_div_scalar(ct_sum_dims(gw, dims, nd, true), M);
    ct_tensor *b = ct_div_scalar(ct_sum_dims(ct_mul(gw, xhat), dims, nd, true), M);
    return ct_sub(ct_sub(gw, a), ct_mul(xhat, b));
}

static ct_tensor *ct__bn_grad_graph(const ct_node *n, const ct_tensor *g, const ct_tensor *x,
                                    const ct_tensor *w, const ct_tensor *mean,
                                    const ct_tensor *invstd, ct_tensor **dw, ct_tensor **db)
{
    int64_t dims[CT_MAX_DIMS], C = x->sizes[1];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (d != 1) {
            dims[nd++] = d;
        }
    }
    double M = (double)(C ? ct_numel(x) / C : 0);
    ct_tensor *xc, *inv, *dx;
    if (n->i[0]) {
        ct__norm_stats_graph(x, dims, nd, M, n->f[0], &xc, &inv);
    } else {
        xc = ct_sub(x, ct__norm_channel_view(mean, x->ndim));
        inv = ct__norm_channel_view(invstd, x->ndim);
    }
    ct_tensor *xhat = ct_mul(xc, inv);
    ct_tensor *k = w ? ct_mul(ct__norm_channel_view(w, x->ndim), inv) : inv;
    dx = ct_mul(k, n->i[0] ? ct__norm_project(g, xhat, dims, nd, M) : g);
    *dw = ct_sum_dims(ct_mul(g, xhat), dims, nd, false);
    *db = ct_sum_dims(g, dims, nd, false);
    return dx;
}

static ct_tensor *ct__ln_grad_graph(const ct_node *n, const ct_tensor *g, const ct_tensor *x,
                                    const ct_tensor *w, ct_tensor **dw, ct_tensor **db)
{
    int nn = (int)n->i[0], nl = x->ndim - nn;
    int64_t dims[CT_MAX_DIMS], lead[CT_MAX_DIMS], K = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d < nl) {
            lead[d] = d;
        } else {
            dims[d - nl] = d;
            K *= x->sizes[d];
        }
    }
    ct_tensor *xc, *rstd;
    ct__norm_stats_graph(x, dims, nn, (double)K, n->f[0], &xc, &rstd);
    ct_tensor *xhat = ct_mul(xc, rstd), *gx = ct_mul(g, xhat);
    ct_tensor *dx = ct_mul(rstd, ct__norm_project(w ? ct_mul(g, w) : g, xhat, dims, nn,
                                                  (double)K));
    *dw = nl ? ct_sum_dims(gx, lead, nl, false) : gx;
    *db = nl ? ct_sum_dims(g, lead, nl, false) : ct_alias(g);
    return dx;
}

/* ---- public functions -------------------------------------------------------------------- */
static ct_tensor *ct__bn_grad(const ct_node *n, const ct_tensor *g, const ct_tensor *x,
                              const ct_tensor *w, const ct_tensor *mean, const ct_tensor *invstd,
                              ct_tensor **dw, ct_tensor **db)
{
    if (ct_is_grad_enabled()) {
        return ct__bn_grad_graph(n, g, x, w, mean, invstd, dw, db);
    }
    const ct_tensor *in[7] = {g, x, w, NULL, NULL, mean, invstd};
    ct_op_call c;
    ct__call_init(&c, &ct__op_native_batch_norm_backward, "ct_batch_norm_backward", in, 7);
    ct__call_i(&c, n->i[0]);
    ct_tensor *dx = ct__dispatch(&c);
    *dw = dx ? c.outputs[1] : NULL;
    *db = dx ? c.outputs[2] : NULL;
    return dx;
}

static ct_tensor *ct__ln_grad(const ct_node *n, const ct_tensor *g, const ct_tensor *x,
                              const ct_tensor *w, const ct_tensor *mean, const ct_tensor *rstd,
                              ct_tensor **dw, ct_tensor **db)
{
    int nd = (int)n->i[0];
    if (ct_is_grad_enabled()) {
        return ct__ln_grad_graph(n, g, x, w, dw, db);
    }
    const ct_tensor *in[6] = {g, x, mean, rstd, w, NULL};
    ct_op_call c;
    ct__call_init(&c, &ct__op_native_layer_norm_backward, "ct_layer_norm_backward", in, 6);
    ct__call_ints(&c, x->sizes + x->ndim - nd, nd);
    ct__call_i(&c, 1 | (ct__needs_grad(n, 1) ? 2 : 0) | (ct__needs_grad(n, 2) ? 4 : 0));
    ct_tensor *dx = ct__dispatch(&c);
    *dw = dx && c.n_outputs == 3 ? c.outputs[1] : NULL;
    *db = dx && c.n_outputs == 3 ? c.outputs[2] : NULL;
    return dx;
}

ct_batch_norm_opts ct_batch_norm_defaults(void)
{
    ct_batch_norm_opts o;
    o.weight = o.bias = NULL;
    o.training = false;
    o.momentum = 0.1;
    o.eps = 1e-5;
    return o;
}

ct_tensor *ct_batch_norm(const ct_tensor *input, ct_tensor *running_mean, ct_tensor *running_var,
                         const ct_batch_norm_opts *opts)
{
    const char *fn = "ct_batch_norm";
    ct_batch_norm_opts o = opts ? *opts : ct_batch_norm_defaults();
    const ct_tensor *in[5] = {input, o.weight, o.bias, running_mean, running_var};
    ct_op_call c;
    ct__call_init(&c, &ct__op_native_batch_norm, fn, in, 5);
    ct__call_i(&c, o.training);
    ct__call_f(&c, o.momentum);
    ct__call_f(&c, o.eps);
    return ct__dispatch(&c);
}

ct_tensor *ct_layer_norm(const ct_tensor *input, const int64_t *normalized_shape, int n,
                         const ct_tensor *weight, const ct_tensor *bias, double eps)
{
    if (ct__null("ct_layer_norm", normalized_shape)) {
        return NULL;
    }
    const ct_tensor *in[3] = {input, weight, bias};
    ct_op_call c;
    ct__call_init(&c, &ct__op_native_layer_norm, "ct_layer_norm", in, 3);
    ct__call_ints(&c, normalized_shape, n);
    ct__call_f(&c, eps);
    return ct__dispatch(&c);
}

ct_tensor *ct_group_norm(const ct_tensor *input, int64_t num_groups, const ct_tensor *weight,
                         const ct_tensor *bias, double eps)
{
    const ct_tensor *in[3] = {input, weight, bias};
    ct_op_call c;
    ct__call_init(&c, &ct__op_group_norm, "ct_group_norm", in, 3);
    ct__call_i(&c, num_groups);
    ct__call_f(&c, eps);
    return ct__dispatch(&c);
}

ct_instance_norm_opts ct_instance_norm_defaults(void)
{
    ct_instance_norm_opts o;
    o.weight = o.bias = NULL;
    o.use_input_stats = true;
    o.momentum = 0.1;
    o.eps = 1e-5;
    return o;
}

ct_tensor *ct_instance_norm(const ct_tensor *input, ct_tensor *running_mean,
                            ct_tensor *running_var, const ct_instance_norm_opts *opts)
{
    const char *fn = "ct_instance_norm";
    ct_instance_norm_opts o = opts ? *opts : ct_instance_norm_defaults();
    const ct_tensor *in[5] = {input, o.weight, o.bias, running_mean, running_var};
    ct_op_call c;
    ct__call_init(&c, &ct__op_instance_norm, fn, in, 5);
    ct__call_i(&c, o.use_input_stats);
    ct__call_f(&c, o.momentum);
    ct__call_f(&c, o.eps);
    return ct__dispatch(&c);
}

ct_tensor *ct_rms_norm(const ct_tensor *input, const int64_t *normalized_shape, int n,
                       const ct_tensor *weight, double eps)
{
    const char *fn = "ct_rms_norm";
    if (ct__null(fn, input) || ct__null(fn, normalized_shape)) {
        return NULL;
    }
    if (isnan(eps)) {
        eps = input->dtype == CT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
    }
    const ct_tensor *in[2] = {input, weight};
    ct_op_call c;
    ct__call_init(&c, &ct__op_rms_norm, fn, in, 2);
    ct__call_ints(&c, normalized_shape, n);
    ct__call_f(&c, eps);
    return ct__dispatch(&c);
}

static ct_tensor *ct__dropout_call(const ct_op *op, const char *fn, const ct_tensor *input,
                                   double p, bool training, bool feature)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_f(&c, p);
    ct__call_i(&c, training);
    ct__call_i(&c, feature);
    return ct__dispatch(&c);
}

ct_tensor *ct_dropout(const ct_tensor *input, double p, bool training)
{
    return ct__dropout_call(&ct__op_dropout, "ct_dropout", input, p, training, false);
}

ct_tensor *ct_dropout2d(const ct_tensor *input, double p, bool training)
{
    return ct__dropout_call(&ct__op_feature_dropout, "ct_dropout2d", input, p, training, true);
}

/* ---- modules ------------------------------------------------------------------------------ */
typedef enum ct__norm_kind {
    CT__BN1D, CT__BN2D, CT__BN3D, CT__IN2D, CT__LN, CT__GN, CT__RMS, CT__DROPOUT, CT__DROPOUT2D
} ct__norm_kind;

/* A norm or dropout module's settings (its user data). */
typedef struct ct__norm_cfg {
    ct__norm_kind kind;
    ct_batch_norm_module_opts o; /* eps also for layer, group and rms norm */
    int64_t groups;              /* group norm */
    int n;                       /* layer and rms norm: the normalized dims */
    int64_t shape[CT_MAX_DIMS];
    double p; /* dropout */
} ct__norm_cfg;

ct_batch_norm_module_opts ct_batch_norm_module_defaults(void)
{
    ct_batch_norm_module_opts o;
    o.eps = 1e-5;
    o.momentum = 0.1;
    o.affine = true;
    o.track_running_stats = true;
    return o;
}

ct_batch_norm_module_opts ct_instance_norm_module_defaults(void)
{
    ct_batch_norm_module_opts o = ct_batch_norm_module_defaults();
    o.affine = false;
    o.track_running_stats = false;
    return o;
}

static const ct__norm_cfg *ct__norm_cfg_of(const ct_module *m)
{
    return (const ct__norm_cfg *)ct_module_user(m);
}

/* Whether m is a module named a, b or c (typed forwards); CT_ERR_VALUE otherwise. */
static bool ct__norm_module_is(const char *fn, const ct_module *m, const char *a, const char *b,
                               const char *c)
{
    const char *name = ct_module_name(m);
    bool ok = name && ct_module_user(m) && (!strcmp(name, a) || !strcmp(name, b) ||
                                            !strcmp(name, c));
    if (!ok) {
        ct__fail(CT_ERR_VALUE, fn, "expected a %s module, got %s", a, name ? name : "NULL");
    }
    return ok;
}

/* Registers a new float32 tensor of shape filled with v as a parameter or buffer of m. */
static bool ct__norm_register(ct_module *m, const char *name, const int64_t *s, int nd,
                              double v, ct_dtype dtype, bool param)
{
    ct_tensor *t = ct__tensor_new(ct_module_name(m), s, nd, dtype);
    if (!t) {
        return false;
    }
    ct__fill_contig(t, v);
    ct_status st = param ? ct_module_register_parameter(m, name, t)
                         : ct_module_register_buffer(m, name, t);
    ct__release(t); /* the module holds it */
    return st == CT_OK;
}

/* A module named name with forward and a copy of cfg; parameters weight (1) and bias (0) of
   shape s when affine (bias only with bias), buffers of batch norm when track. */
static ct_module *ct__norm_module(const char *name, ct_module_forward_fn forward,
                                  const ct__norm_cfg *cfg, const int64_t *s, int nd, bool affine,
                                  bool bias, bool track)
{
    ct__norm_cfg *u = (ct__norm_cfg *)ct__malloc(sizeof *u);
    if (!u) {
        ct__fail(CT_ERR_OOM, name, "out of memory");
        return NULL;
    }
    *u = *cfg;
    ct_module *m = ct_module_new(name, forward, u, ct__free);
    if (!m) {
        ct__free(u);
        return NULL;
    }
    bool ok = !affine || ct__norm_register(m, "weight", s, nd, 1, CT_FLOAT32, true);
    ok = ok && (!affine || !bias || ct__norm_register(m, "bias", s, nd, 0, CT_FLOAT32, true));
    if (ok && track) {
        ok = ct__norm_register(m, "running_mean", s, nd, 0, CT_FLOAT32, false) &&
             ct__norm_register(m, "running_var", s, nd, 1, CT_FLOAT32, false) &&
             ct__norm_register(m, "num_batches_tracked", s, 0, 0, CT_INT64, false);
    }
    if (!ok) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

static bool ct__norm_check_features(const char *fn, int64_t n)
{
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, fn, "num_features must be positive, got %lld", (long long)n);
        return false;
    }
    return true;
}

/* _BatchNorm.forward: num_batches_tracked += 1 in training (momentum None: the factor
   1 / num_batches_tracked); the batch statistics in training or without running ones. */
ct_tensor *ct_batch_norm_forward(ct_module *m, const ct_tensor *x)
{
    const char *fn = "ct_batch_norm_forward";
    if (ct__null(fn, m) || ct__null(fn, x) ||
        !ct__norm_module_is(fn, m, "BatchNorm2d", "BatchNorm1d", "BatchNorm3d")) {
        return NULL;
    }
    const ct__norm_cfg *cfg = ct__norm_cfg_of(m);
    bool ok = cfg->kind == CT__BN1D ? x->ndim == 2 || x->ndim == 3
                                    : x->ndim == (cfg->kind == CT__BN2D ? 4 : 5);
    if (!ok) {
        ct__fail(CT_ERR_SHAPE, fn, "expected %s input (got %dD input)",
                 cfg->kind == CT__BN1D ? "2D or 3D" : (cfg->kind == CT__BN2D ? "4D" : "5D"),
                 x->ndim);
        return NULL;
    }
    bool training = ct_module_is_training(m);
    ct_tensor *nbt = ct_module_get_parameter(m, "num_batches_tracked");
    ct_batch_norm_opts o = ct_batch_norm_defaults();
    o.momentum = isnan(cfg->o.momentum) ? 0.0 : cfg->o.momentum;
    o.eps = cfg->o.eps;
    o.weight = ct_module_get_parameter(m, "weight");
    o.bias = ct_module_get_parameter(m, "bias");
    if (training && nbt) {
        ct_scope_begin();
        ct_no_grad_begin();
        ct_add_(nbt, ct_scalar_tensor(1, CT_INT64), 1);
        ct_no_grad_end();
        ct_scope_end();
        o.momentum = isnan(cfg->o.momentum) ? 1.0 / ct_item(nbt) : cfg->o.momentum;
    }
    ct_tensor *rm = ct_module_get_parameter(m, "running_mean");
    ct_tensor *rv = ct_module_get_parameter(m, "running_var");
    o.training = training || !rm;
    return ct_batch_norm(x, rm, rv, &o);
}

static ct_module *ct__batch_norm_new(const char *name, ct__norm_kind kind, int64_t num_features,
                                     const ct_batch_norm_module_opts *opts,
                                     ct_module_forward_fn forward)
{
    if (!ct__norm_check_features(name, num_features)) {
        return NULL;
    }
    ct__norm_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.kind = kind;
    cfg.o = opts ? *opts
                 : (kind == CT__IN2D ? ct_instance_norm_module_defaults()
                                     : ct_batch_norm_module_defaults());
    return ct__norm_module(name, forward, &cfg, &num_features, 1, cfg.o.affine, true,
                           cfg.o.track_running_stats);
}

ct_module *ct_batch_norm1d_new(int64_t num_features, const ct_batch_norm_module_opts *opts)
{
    return ct__batch_norm_new("BatchNorm1d", CT__BN1D, num_features, opts,
                              ct_batch_norm_forward);
}

ct_module *ct_batch_norm2d_new(int64_t num_features, const ct_batch_norm_module_opts *opts)
{
    return ct__batch_norm_new("BatchNorm2d", CT__BN2D, num_features, opts,
                              ct_batch_norm_forward);
}

ct_module *ct_batch_norm3d_new(int64_t num_features, const ct_batch_norm_module_opts *opts)
{
    return ct__batch_norm_new("BatchNorm3d", CT__BN3D, num_features, opts,
                              ct_batch_norm_forward);
}

/* _InstanceNorm.forward: unbatched (C, H, W) input gets a batch dim; the running statistics
   are used in eval when tracked. */
static ct_tensor *ct__instance_norm_forward(ct_module *m, const ct_tensor *x)
{
    const ct__norm_cfg *cfg = ct__norm_cfg_of(m);
    if (x->ndim != 3 && x->ndim != 4) {
        ct__fail(CT_ERR_SHAPE, "ct_instance_norm2d", "expected 3D or 4D input (got %dD input)",
                 x->ndim);
        return NULL;
    }
    ct_instance_norm_opts o = ct_instance_norm_defaults();
    o.weight = ct_module_get_parameter(m, "weight");
    o.bias = ct_module_get_parameter(m, "bias");
    o.momentum = isnan(cfg->o.momentum) ? 0.1 : cfg->o.momentum;
    o.eps = cfg->o.eps;
    ct_tensor *rm = ct_module_get_parameter(m, "running_mean");
    ct_tensor *rv = ct_module_get_parameter(m, "running_var");
    o.use_input_stats = ct_module_is_training(m) || !rm;
    if (x->ndim == 4) {
        return ct_instance_norm(x, rm, rv, &o);
    }
    ct_scope_begin();
    ct_tensor *y = ct_keep(ct_squeeze_dim(ct_instance_norm(ct_unsqueeze(x, 0), rm, rv, &o), 0));
    ct_scope_end();
    return y;
}

ct_module *ct_instance_norm2d_new(int64_t num_features, const ct_batch_norm_module_opts *opts)
{
    return ct__batch_norm_new("InstanceNorm2d", CT__IN2D, num_features, opts,
                              ct__instance_norm_forward);
}

ct_tensor *ct_layer_norm_forward(ct_module *m, const ct_tensor *x)
{
    if (ct__null("ct_layer_norm_forward", m) || ct__null("ct_layer_norm_forward", x) ||
        !ct__norm_module_is("ct_layer_norm_forward", m, "LayerNorm", "LayerNorm", "LayerNorm")) {
        return NULL;
    }
    const ct__norm_cfg *cfg = ct__norm_cfg_of(m);
    return ct_layer_norm(x, cfg->shape, cfg->n, ct_module_get_parameter(m, "weight"),
                         ct_module_get_parameter(m, "bias"), cfg->o.eps);
}

/* A settings block for layer and rms norm; false (reported) for a bad shape. */
static bool ct__norm_shape_cfg(const char *fn, ct__norm_cfg *cfg, const int64_t *s, int n,
                               double eps)
{
    memset(cfg, 0, sizeof *cfg);
    if (ct__null(fn, s)) {
        return false;
    }
    if (n < 1 || n > CT_MAX_DIMS) {
        ct__fail(CT_ERR_VALUE, fn, "normalized_shape must have 1 to %d dims, got %d", CT_MAX_DIMS,
                 n);
        return false;
    }
    cfg->n = n;
    memcpy(cfg->shape, s, sizeof(int64_t) * (size_t)n);
    cfg->o.eps = eps;
    return true;
}

ct_module *ct_layer_norm_new(const int64_t *normalized_shape, int n, double eps,
                             bool elementwise_affine, bool bias)
{
    ct__norm_cfg cfg;
    if (!ct__norm_shape_cfg("ct_layer_norm_new", &cfg, normalized_shape, n, eps)) {
        return NULL;
    }
    cfg.kind = CT__LN;
    return ct__norm_module("LayerNorm", ct_layer_norm_forward, &cfg, normalized_shape, n,
                           elementwise_affine, bias, false);
}

static ct_tensor *ct__group_norm_forward(ct_module *m, const ct_tensor *x)
{
    const ct__norm_cfg *cfg = ct__norm_cfg_of(m);
    return ct_group_norm(x, cfg->groups, ct_module_get_parameter(m, "weight"),
                         ct_module_get_parameter(m, "bias"), cfg->o.eps);
}

ct_module *ct_group_norm_new(int64_t num_groups, int64_t num_channels, double eps, bool affine)
{
    if (num_groups <= 0 || num_channels % num_groups != 0) {
        ct__fail(CT_ERR_VALUE, "ct_group_norm_new", "num_channels must be divisible by "
                 "num_groups");
        return NULL;
    }
    ct__norm_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.kind = CT__GN;
    cfg.groups = num_groups;
    cfg.o.eps = eps;
    return ct__norm_module("GroupNorm", ct__group_norm_forward, &cfg, &num_channels, 1, affine,
                           true, false);
}

static ct_tensor *ct__rms_norm_forward(ct_module *m, const ct_tensor *x)
{
    const ct__norm_cfg *cfg = ct__norm_cfg_of(m);
    return ct_rms_norm(x, cfg->shape, cfg->n, ct_module_get_parameter(m, "weight"), cfg->o.eps);
}

ct_module *ct_rms_norm_new(const int64_t *normalized_shape, int n, double eps,
                           bool elementwise_affine)
{
    ct__norm_cfg cfg;
    if (!ct__norm_shape_cfg("ct_rms_norm_new", &cfg, normalized_shape, n, eps)) {
        return NULL;
    }
    cfg.kind = CT__RMS;
    return ct__norm_module("RMSNorm", ct__rms_norm_forward, &cfg, normalized_shape, n,
                           elementwise_affine, false, false);
}

ct_tensor *ct_dropout_forward(ct_module *m, const ct_tensor *x)
{
    if (ct__null("ct_dropout_forward", m) || ct__null("ct_dropout_forward", x) ||
        !ct__norm_module_is("ct_dropout_forward", m, "Dropout", "Dropout2d", "Dropout2d")) {
        return NULL;
    }
    const ct__norm_cfg *cfg = ct__norm_cfg_of(m);
    bool training = ct_module_is_training(m);
    return cfg->kind == CT__DROPOUT2D ? ct_dropout2d(x, cfg->p, training)
                                      : ct_dropout(x, cfg->p, training);
}

static ct_module *ct__dropout_new(const char *name, ct__norm_kind kind, double p)
{
    if (!ct__dropout_check(name, p)) {
        return NULL;
    }
    ct__norm_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.kind = kind;
    cfg.p = p;
    return ct__norm_module(name, ct_dropout_forward, &cfg, NULL, 0, false, false, false);
}

ct_module *ct_dropout_new(double p)
{
    return ct__dropout_new("Dropout", CT__DROPOUT, p);
}

ct_module *ct_dropout2d_new(double p)
{
    return ct__dropout_new("Dropout2d", CT__DROPOUT2D, p);
}

#undef CT__NORM_LANES
#undef CT__NORM_CHUNK
/* ---- for update_bn (optim/swa_utils.c) --------------------------------------------------- */
bool ct__batch_norm_is(const ct_module *m)
{
    const char *name = ct_module_name(m);
    const ct__norm_cfg *cfg = ct__norm_cfg_of(m);
    return cfg && (!strcmp(name, "BatchNorm1d") || !strcmp(name, "BatchNorm2d") ||
                   !strcmp(name, "BatchNorm3d")) &&
           (cfg->kind == CT__BN1D || cfg->kind == CT__BN2D || cfg->kind == CT__BN3D);
}

double ct__batch_norm_momentum(ct_module *m, double momentum)
{
    ct__norm_cfg *cfg = (ct__norm_cfg *)ct_module_user(m);
    double old = cfg->o.momentum;
    cfg->o.momentum = momentum;
    return old;
}
CT__GLUE_END
