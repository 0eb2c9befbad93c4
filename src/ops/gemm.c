/* ops/gemm.c - packed, cache-blocked GEMM (the BLIS/GotoBLAS scheme) for float32 and float64,
 * and a blocked integer GEMM (wrapping, as PyTorch's; see its section at the end).
 *
 * C = alpha * (A @ B) + beta * C, each operand given by a pointer and its row and column
 * strides in elements, so transposed and strided views cost nothing extra: packing copies
 * them into the layouts the micro-kernels read.
 *
 * Dimension legend:
 *   M, N, K   C is (M, N), A is (M, K), B is (K, N)
 *   MC, KC, NC  cache blocks: a packed A block (MC, KC) stays in L2 and a packed B panel
 *               (KC, NC) in L3; each B micro-panel (KC, NR) is reused from L1/L2 across
 *               the MC / MR micro-panels of A
 *   MR, NR    the register tile of the micro-kernel: MR rows of A times NR columns of B
 *   mr, nr    the valid part of an edge tile (mr <= MR, nr <= NR)
 *
 * Loop nest (outermost first): jc over NC columns, pc over KC (pack B), ic over MC rows
 * (pack A), jr over NR columns, ir over MR rows, then the micro-kernel over kc.
 * A with contiguous rows (csa == 1, e.g. activations (tokens, features)) is not packed: the
 * micro-kernel reads its whole MR-row micro-panels in place (MR rows of kc contiguous values
 * stay in L1 across the jr loop); only an edge micro-panel is packed. Transposing A into the
 * packed layout cost as much as a fifth of a product with K = 128.
 *
 * Packed layouts (zero-padded to whole tiles):
 *   A block: for each MR-row micro-panel, kc steps of MR values:  a[p * MR + i]
 *   B panel: for each NR-col micro-panel, kc steps of NR values:  b[p * NR + j]
 *
 * Micro-kernels, chosen at compile time (MR x NR, float32 / float64):
 *   AVX-512F:     8 x 32 / 8 x 16   (16 zmm accumulators, A broadcast, B loaded)
 *   AVX2 + FMA:   6 x 16 / 6 x 8    (12 ymm accumulators)
 *   NEON aarch64: 8 x 12 / 8 x 6    (24 q accumulators, fma by lane of A)
 *   NEON armhf:   6 x 8  / portable (12 of the 16 q registers accumulate, A broadcast;
 *                 ARMv7 NEON has vfma.f32 (VFPv4) but no float64 vectors)
 *   portable C:   4 x 8  / 4 x 8    (the only one under CTORCH_NO_SIMD)
 * The SIMD kernels run only half of their rows on edge tiles with mr <= MR / 2.
 *
 * Orientation: when C is column-major, or when N is so far below NR that the transposed
 * product pads much less (e.g. N = 10 logits), C^T = B^T @ A^T is computed instead; it is
 * the same product with the operands' strides swapped.
 *
 * Threads: C is split into a grid of ntm x ntn blocks (MR/NR-aligned), one per thread,
 * handed out by the intra-op pool to whichever thread is free: when a thread has not started
 * (descheduled on a busy machine), the caller computes its block too instead of waiting.
 * Each task packs its own A and B into its thread's buffers, so no barriers. (Two blocks per
 * thread packed A and B more often and measured up to 2x slower on the MLP's products.)
 * Tiny products stay serial. Products with few rows or columns skip packing (the thin
 * forms, see their section) and split C's columns through ct__parallel_for instead.
 * Determinism: each element of C sums its K products in the same order (kc blocks in turn,
 * p ascending within a block) whatever the thread count, so results are bit-exact across
 * thread counts. The SIMD kernels fuse each multiply-add (FMA); the portable kernel does too
 * where the target has FMA instructions (__FP_FAST_FMAF, e.g. armhf's VFPv4), and then gives
 * the NEON kernels' results bit for bit (make arm-icount compares them); without FMA it
 * rounds each product, and its results differ from the SIMD paths' in rounding.
 */
#include "../core/internal.h"

#include <string.h>

#if !defined(CTORCH_NO_SIMD) && defined(__AVX512F__)
#define CT__GEMM_AVX512 1
#include <immintrin.h>
#elif !defined(CTORCH_NO_SIMD) && defined(__AVX2__) && defined(__FMA__)
#define CT__GEMM_AVX2 1
#include <immintrin.h>
#elif !defined(CTORCH_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__)
#define CT__GEMM_NEON 1
#include <arm_neon.h>
#elif !defined(CTORCH_NO_SIMD) && defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)
#define CT__GEMM_NEON32 1
#include <arm_neon.h>
#endif

#if defined(CT__GEMM_NEON) || defined(CT__GEMM_NEON32)
/* Four values of A at a, ars apart (four rows of a micro-panel), as one q register. */
static inline float32x4_t ct__gemm_neon_a_f32(const float *a, int64_t ars)
{
    if (ars == 1) {
        return vld1q_f32(a);
    }
    float32x4_t v = vdupq_n_f32(a[0]);
    v = vsetq_lane_f32(a[ars], v, 1);
    v = vsetq_lane_f32(a[2 * ars], v, 2);
    return vsetq_lane_f32(a[3 * ars], v, 3);
}
#endif

/* Register tiles (see the legend above). */
#if defined(CT__GEMM_AVX512)
#define CT__GEMM_MR_f32 8
#define CT__GEMM_NR_f32 32
#define CT__GEMM_MR_f64 8
#define CT__GEMM_NR_f64 16
#elif defined(CT__GEMM_AVX2)
#define CT__GEMM_MR_f32 6
#define CT__GEMM_NR_f32 16
#define CT__GEMM_MR_f64 6
#define CT__GEMM_NR_f64 8
#elif defined(CT__GEMM_NEON)
#define CT__GEMM_MR_f32 8
#define CT__GEMM_NR_f32 12
#define CT__GEMM_MR_f64 8
#define CT__GEMM_NR_f64 6
#elif defined(CT__GEMM_NEON32)
#define CT__GEMM_MR_f32 6
#define CT__GEMM_NR_f32 8
#define CT__GEMM_MR_f64 4
#define CT__GEMM_NR_f64 8
#else
#define CT__GEMM_MR_f32 4
#define CT__GEMM_NR_f32 8
#define CT__GEMM_MR_f64 4
#define CT__GEMM_NR_f64 8
#endif

/* Cache blocks in elements, tuned on Zen4 (L1d 32K, L2 1M per core, 32M L3): the A block
   MC x KC is about 150K-200K, the B panel KC x NC 3-5M (performance was flat within a few
   percent for KC 256-512, MC 64-192). Each dimension is split into nearly equal blocks no
   larger than these. MC is a multiple of MR and NC of NR for every kernel above. */
#define CT__GEMM_KC_f32 384
#define CT__GEMM_MC_f32 96
#define CT__GEMM_NC_f32 3072
#define CT__GEMM_KC_f64 256
#define CT__GEMM_MC_f64 96
#define CT__GEMM_NC_f64 1536
/* Products with fewer multiply-adds than this (M * N * K) run on one thread. */
#define CT__GEMM_PAR_MIN_MACS ((int64_t)96 * 96 * 96)

#define CT__GEMM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CT__GEMM_CEIL(a, b) (((a) + (b)-1) / (b))
#define CT__GEMM_ROUND_UP(a, b) (CT__GEMM_CEIL(a, b) * (b))

/* ---------------------------------------------------------------------------------------
 * Micro-kernels.
 *
 * ct__gemm_ukr_<dt>(kc, a, ars, acs, b, alpha, beta, c, rsc, csc, mr, nr):
 *   a  A micro-panel (MR, kc), a[i * ars + p * acs]: packed (ars 1, acs MR) or in place
 *      (ars the row stride of A, acs 1); all MR rows are read unless mr <= MR / 2
 *   b  packed B micro-panel (kc, NR), b[p * NR + j]
 *   c  the (mr, nr) tile of C at rows rsc, columns csc apart
 * computes C = alpha * (a @ b) + beta * C on the valid (mr, nr) part; beta == 0 does not
 * read C. Full tiles with csc == 1 are written straight from registers; edge tiles and
 * strided C go through a local (MR, NR) tile and ct__gemm_update_<dt>.
 * ------------------------------------------------------------------------------------- */

/* C (mr, nr) at (rsc, csc) = alpha * t + beta * C, t (MR, NR) row-major with row stride ldt. */
static void ct__gemm_update_f32(int64_t mr, int64_t nr, float alpha, const float *t, int64_t ldt,
                                float beta, float *c, int64_t rsc, int64_t csc)
{
    if (rsc == 1 && csc != 1) {
        // C column-major: walk down its contiguous columns
        for (int64_t j = 0; j < nr; j++) {
            float *cj = c + j * csc;
            if (beta == 0.0f) {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j];
                }
            } else {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j] + beta * cj[i];
                }
            }
        }
        return;
    }
    for (int64_t i = 0; i < mr; i++) {
        float *ci = c + i * rsc;
        const float *ti = t + i * ldt;
        if (beta == 0.0f) {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j];
            }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j] + beta * ci[j * csc];
            }
        }
    }
}

static void ct__gemm_update_f64(int64_t mr, int64_t nr, double alpha, const double *t,
                                int64_t ldt, double beta, double *c, int64_t rsc, int64_t csc)
{
    if (rsc == 1 && csc != 1) {
        // C column-major: walk down its contiguous columns
        for (int64_t j = 0; j < nr; j++) {
            double *cj = c + j * csc;
            if (beta == 0.0) {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j];
                }
            } else {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j] + beta * cj[i];
                }
            }
        }
        return;
    }
    for (int64_t i = 0; i < mr; i++) {
        double *ci = c + i * rsc;
        const double *ti = t + i * ldt;
        if (beta == 0.0) {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j];
            }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j] + beta * ci[j * csc];
            }
        }
    }
}

#if defined(CT__GEMM_AVX512)

/* Row i of the tile: two zmm accumulators ci0, ci1 (16 columns each). */
#define CT__GEMM_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define CT__GEMM_ROWS4(X) X(0) X(1) X(2) X(3)
#define CT__GEMM_DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm512_set1_ps(a[(i) * ars]);                                                     \
    c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);                                            \
    c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm512_mul_ps(c##i##0, va);                                                  \
    c##i##1 = _mm512_mul_ps(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm512_storeu_ps(c + i * rsc, c##i##0);                                                \
    _mm512_storeu_ps(c + i * rsc + 16, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm512_storeu_ps(c + i * rsc, _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + i * rsc), c##i##0)); \
    _mm512_storeu_ps(c + i * rsc + 16,                                                     \
                     _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + i * rsc + 16), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm512_storeu_ps(t + i * 32, c##i##0);                                                 \
    _mm512_storeu_ps(t + i * 32 + 16, c##i##1);
#define CT__GEMM_PREFETCH(i)                                                               \
    _mm_prefetch((const char *)(c + i * rsc), _MM_HINT_T0);                                \
    _mm_prefetch((const char *)(c + i * rsc + 31), _MM_HINT_T0);

/* float32, MR = 8, NR = 32. */
static void ct__gemm_ukr_f32(int64_t kc, const float *a, int64_t ars, int64_t acs,
                             const float *b, float alpha, float beta, float *c, int64_t rsc,
                             int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    int full = mr == 8 && nr == 32 && csc == 1;
    if (full) {
        CT__GEMM_ROWS8(CT__GEMM_PREFETCH)
    }
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
            __m512 ai;
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += acs;
            b += 32;
        }
    } else {
        // a (8, kc) at (ars, acs), b (kc, 32) packed; 16 zmm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
            __m512 ai;
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += acs;
            b += 32;
        }
    }
    __m512 va = _mm512_set1_ps(alpha);
    CT__GEMM_ROWS8(CT__GEMM_SCALE)
    if (full) {
        // c (8, 32) at rows rsc apart, contiguous columns
        if (beta == 0.0f) {
            CT__GEMM_ROWS8(CT__GEMM_STORE0)
        } else {
            __m512 vb = _mm512_set1_ps(beta);
            CT__GEMM_ROWS8(CT__GEMM_STOREB)
        }
        return;
    }
    float t[8 * 32];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f32(mr, nr, 1.0f, t, 32, beta, c, rsc, csc);
}

#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET
#undef CT__GEMM_PREFETCH

#define CT__GEMM_DECL(i) __m512d c##i##0 = _mm512_setzero_pd(), c##i##1 = _mm512_setzero_pd();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm512_set1_pd(a[(i) * ars]);                                                     \
    c##i##0 = _mm512_fmadd_pd(ai, b0, c##i##0);                                            \
    c##i##1 = _mm512_fmadd_pd(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm512_mul_pd(c##i##0, va);                                                  \
    c##i##1 = _mm512_mul_pd(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm512_storeu_pd(c + i * rsc, c##i##0);                                                \
    _mm512_storeu_pd(c + i * rsc + 8, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm512_storeu_pd(c + i * rsc, _mm512_fmadd_pd(vb, _mm512_loadu_pd(c + i * rsc), c##i##0)); \
    _mm512_storeu_pd(c + i * rsc + 8,                                                      \
                     _mm512_fmadd_pd(vb, _mm512_loadu_pd(c + i * rsc + 8), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm512_storeu_pd(t + i * 16, c##i##0);                                                 \
    _mm512_storeu_pd(t + i * 16 + 8, c##i##1);
#define CT__GEMM_PREFETCH(i)                                                               \
    _mm_prefetch((const char *)(c + i * rsc), _MM_HINT_T0);                                \
    _mm_prefetch((const char *)(c + i * rsc + 15), _MM_HINT_T0);

/* float64, MR = 8, NR = 16. */
static void ct__gemm_ukr_f64(int64_t kc, const double *a, int64_t ars, int64_t acs,
                             const double *b, double alpha, double beta, double *c,
                             int64_t rsc, int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    int full = mr == 8 && nr == 16 && csc == 1;
    if (full) {
        CT__GEMM_ROWS8(CT__GEMM_PREFETCH)
    }
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
            __m512d ai;
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += acs;
            b += 16;
        }
    } else {
        // a (8, kc) at (ars, acs), b (kc, 16) packed; 16 zmm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
            __m512d ai;
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += acs;
            b += 16;
        }
    }
    __m512d va = _mm512_set1_pd(alpha);
    CT__GEMM_ROWS8(CT__GEMM_SCALE)
    if (full) {
        // c (8, 16) at rows rsc apart, contiguous columns
        if (beta == 0.0) {
            CT__GEMM_ROWS8(CT__GEMM_STORE0)
        } else {
            __m512d vb = _mm512_set1_pd(beta);
            CT__GEMM_ROWS8(CT__GEMM_STOREB)
        }
        return;
    }
    double t[8 * 16];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f64(mr, nr, 1.0, t, 16, beta, c, rsc, csc);
}

#undef CT__GEMM_ROWS8
#undef CT__GEMM_ROWS4
#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET
#undef CT__GEMM_PREFETCH

#elif defined(CT__GEMM_AVX2)

/* Row i of the tile: two ymm accumulators ci0, ci1. */
#define CT__GEMM_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define CT__GEMM_ROWS3(X) X(0) X(1) X(2)
#define CT__GEMM_DECL(i) __m256 c##i##0 = _mm256_setzero_ps(), c##i##1 = _mm256_setzero_ps();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm256_broadcast_ss(a + (i) * ars);                                               \
    c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm256_mul_ps(c##i##0, va);                                                  \
    c##i##1 = _mm256_mul_ps(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm256_storeu_ps(c + i * rsc, c##i##0);                                                \
    _mm256_storeu_ps(c + i * rsc + 8, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm256_storeu_ps(c + i * rsc, _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + i * rsc), c##i##0)); \
    _mm256_storeu_ps(c + i * rsc + 8,                                                      \
                     _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + i * rsc + 8), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm256_storeu_ps(t + i * 16, c##i##0);                                                 \
    _mm256_storeu_ps(t + i * 16 + 8, c##i##1);

/* float32, MR = 6, NR = 16. */
static void ct__gemm_ukr_f32(int64_t kc, const float *a, int64_t ars, int64_t acs,
                             const float *b, float alpha, float beta, float *c, int64_t rsc,
                             int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS6(CT__GEMM_DECL)
    if (mr <= 3) {
        // edge tile of at most 3 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            __m256 ai;
            CT__GEMM_ROWS3(CT__GEMM_FMA)
            a += acs;
            b += 16;
        }
    } else {
        // a (6, kc) at (ars, acs), b (kc, 16) packed; 12 ymm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            __m256 ai;
            CT__GEMM_ROWS6(CT__GEMM_FMA)
            a += acs;
            b += 16;
        }
    }
    __m256 va = _mm256_set1_ps(alpha);
    CT__GEMM_ROWS6(CT__GEMM_SCALE)
    if (mr == 6 && nr == 16 && csc == 1) {
        // c (6, 16) at rows rsc apart, contiguous columns
        if (beta == 0.0f) {
            CT__GEMM_ROWS6(CT__GEMM_STORE0)
        } else {
            __m256 vb = _mm256_set1_ps(beta);
            CT__GEMM_ROWS6(CT__GEMM_STOREB)
        }
        return;
    }
    float t[6 * 16];
    CT__GEMM_ROWS6(CT__GEMM_STORET)
    ct__gemm_update_f32(mr, nr, 1.0f, t, 16, beta, c, rsc, csc);
}

#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET

#define CT__GEMM_DECL(i) __m256d c##i##0 = _mm256_setzero_pd(), c##i##1 = _mm256_setzero_pd();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm256_broadcast_sd(a + (i) * ars);                                               \
    c##i##0 = _mm256_fmadd_pd(ai, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_pd(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm256_mul_pd(c##i##0, va);                                                  \
    c##i##1 = _mm256_mul_pd(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm256_storeu_pd(c + i * rsc, c##i##0);                                                \
    _mm256_storeu_pd(c + i * rsc + 4, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm256_storeu_pd(c + i * rsc, _mm256_fmadd_pd(vb, _mm256_loadu_pd(c + i * rsc), c##i##0)); \
    _mm256_storeu_pd(c + i * rsc + 4,                                                      \
                     _mm256_fmadd_pd(vb, _mm256_loadu_pd(c + i * rsc + 4), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm256_storeu_pd(t + i * 8, c##i##0);                                                  \
    _mm256_storeu_pd(t + i * 8 + 4, c##i##1);

/* float64, MR = 6, NR = 8. */
static void ct__gemm_ukr_f64(int64_t kc, const double *a, int64_t ars, int64_t acs,
                             const double *b, double alpha, double beta, double *c,
                             int64_t rsc, int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS6(CT__GEMM_DECL)
    if (mr <= 3) {
        // edge tile of at most 3 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
            __m256d ai;
            CT__GEMM_ROWS3(CT__GEMM_FMA)
            a += acs;
            b += 8;
        }
    } else {
        // a (6, kc) at (ars, acs), b (kc, 8) packed; 12 ymm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
            __m256d ai;
            CT__GEMM_ROWS6(CT__GEMM_FMA)
            a += acs;
            b += 8;
        }
    }
    __m256d va = _mm256_set1_pd(alpha);
    CT__GEMM_ROWS6(CT__GEMM_SCALE)
    if (mr == 6 && nr == 8 && csc == 1) {
        // c (6, 8) at rows rsc apart, contiguous columns
        if (beta == 0.0) {
            CT__GEMM_ROWS6(CT__GEMM_STORE0)
        } else {
            __m256d vb = _mm256_set1_pd(beta);
            CT__GEMM_ROWS6(CT__GEMM_STOREB)
        }
        return;
    }
    double t[6 * 8];
    CT__GEMM_ROWS6(CT__GEMM_STORET)
    ct__gemm_update_f64(mr, nr, 1.0, t, 8, beta, c, rsc, csc);
}

#undef CT__GEMM_ROWS6
#undef CT__GEMM_ROWS3
#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET

#elif defined(CT__GEMM_NEON)

/* Row i of the tile: three q accumulators ci0..ci2; A comes as two (f32) or four (f64)
   q registers and each row multiplies by one lane of them. */
/* The MR / 2 values of A at a, ars apart, as q registers (f64; f32: ct__gemm_neon_a_f32). */
static inline float64x2_t ct__gemm_neon_a_f64(const double *a, int64_t ars)
{
    return ars == 1 ? vld1q_f64(a) : vsetq_lane_f64(a[ars], vdupq_n_f64(a[0]), 1);
}

#define CT__GEMM_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define CT__GEMM_ROWS4(X) X(0) X(1) X(2) X(3)
#define CT__GEMM_DECL(i)                                                                   \
    float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define CT__GEMM_FMA(i)                                                                    \
    c##i##0 = vfmaq_laneq_f32(c##i##0, b0, (i) < 4 ? a0 : a1, (i) % 4);                    \
    c##i##1 = vfmaq_laneq_f32(c##i##1, b1, (i) < 4 ? a0 : a1, (i) % 4);                    \
    c##i##2 = vfmaq_laneq_f32(c##i##2, b2, (i) < 4 ? a0 : a1, (i) % 4);
#define CT__GEMM_STORET(i)                                                                 \
    vst1q_f32(t + i * 12, c##i##0);                                                        \
    vst1q_f32(t + i * 12 + 4, c##i##1);                                                    \
    vst1q_f32(t + i * 12 + 8, c##i##2);

/* float32, MR = 8, NR = 12. */
static void ct__gemm_ukr_f32(int64_t kc, const float *a, int64_t ars, int64_t acs,
                             const float *b, float alpha, float beta, float *c, int64_t rsc,
                             int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            float32x4_t a0 = ct__gemm_neon_a_f32(a, ars);
            float32x4_t a1 = ct__gemm_neon_a_f32(a + 4 * ars, ars);
            float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += acs;
            b += 12;
        }
    } else {
        // a (8, kc) at (ars, acs), b (kc, 12) packed; 24 q accumulators
        for (int64_t p = 0; p < kc; p++) {
            float32x4_t a0 = ct__gemm_neon_a_f32(a, ars);
            float32x4_t a1 = ct__gemm_neon_a_f32(a + 4 * ars, ars);
            float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += acs;
            b += 12;
        }
    }
    float t[8 * 12];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f32(mr, nr, alpha, t, 12, beta, c, rsc, csc);
}

#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_STORET

#define CT__GEMM_DECL(i)                                                                   \
    float64x2_t c##i##0 = vdupq_n_f64(0.0), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define CT__GEMM_FMA(i)                                                                    \
    c##i##0 = vfmaq_laneq_f64(c##i##0, b0, CT__GEMM_AQ(i), (i) % 2);                       \
    c##i##1 = vfmaq_laneq_f64(c##i##1, b1, CT__GEMM_AQ(i), (i) % 2);                       \
    c##i##2 = vfmaq_laneq_f64(c##i##2, b2, CT__GEMM_AQ(i), (i) % 2);
#define CT__GEMM_AQ(i) ((i) < 2 ? a0 : (i) < 4 ? a1 : (i) < 6 ? a2 : a3)
#define CT__GEMM_STORET(i)                                                                 \
    vst1q_f64(t + i * 6, c##i##0);                                                         \
    vst1q_f64(t + i * 6 + 2, c##i##1);                                                     \
    vst1q_f64(t + i * 6 + 4, c##i##2);

/* float64, MR = 8, NR = 6. */
static void ct__gemm_ukr_f64(int64_t kc, const double *a, int64_t ars, int64_t acs,
                             const double *b, double alpha, double beta, double *c,
                             int64_t rsc, int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            float64x2_t a0 = ct__gemm_neon_a_f64(a, ars);
            float64x2_t a1 = ct__gemm_neon_a_f64(a + 2 * ars, ars);
            float64x2_t a2 = ct__gemm_neon_a_f64(a + 4 * ars, ars);
            float64x2_t a3 = ct__gemm_neon_a_f64(a + 6 * ars, ars);
            float64x2_t b0 = vld1q_f64(b), b1 = vld1q_f64(b + 2), b2 = vld1q_f64(b + 4);
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += acs;
            b += 6;
        }
    } else {
        // a (8, kc) at (ars, acs), b (kc, 6) packed; 24 q accumulators
        for (int64_t p = 0; p < kc; p++) {
            float64x2_t a0 = ct__gemm_neon_a_f64(a, ars);
            float64x2_t a1 = ct__gemm_neon_a_f64(a + 2 * ars, ars);
            float64x2_t a2 = ct__gemm_neon_a_f64(a + 4 * ars, ars);
            float64x2_t a3 = ct__gemm_neon_a_f64(a + 6 * ars, ars);
            float64x2_t b0 = vld1q_f64(b), b1 = vld1q_f64(b + 2), b2 = vld1q_f64(b + 4);
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += acs;
            b += 6;
        }
    }
    double t[8 * 6];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f64(mr, nr, alpha, t, 6, beta, c, rsc, csc);
}

#undef CT__GEMM_ROWS8
#undef CT__GEMM_ROWS4
#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_AQ
#undef CT__GEMM_STORET

#elif defined(CT__GEMM_NEON32)

/* Row i of the tile: two q accumulators ci0, ci1. ARMv7's vfma.f32 has no by-lane form, so
   a[i] is broadcast: rows 0-3 from the lanes of one load of A's rows 0..3, rows 4 and 5 by
   dup loads (all 16 q registers are busy at row 3; a[4..5] in a register spilled an
   accumulator). */
#define CT__GEMM_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define CT__GEMM_ROWS3(X) X(0) X(1) X(2)
#define CT__GEMM_DECL(i) float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0;
#define CT__GEMM_AI(i)                                                                     \
    ((i) < 4 ? vdupq_lane_f32((i) < 2 ? vget_low_f32(a0) : vget_high_f32(a0), (i) % 2)     \
             : vld1q_dup_f32(a + (i) * ars))
#define CT__GEMM_FMA(i)                                                                    \
    ai = CT__GEMM_AI(i);                                                                   \
    c##i##0 = vfmaq_f32(c##i##0, ai, b0);                                                  \
    c##i##1 = vfmaq_f32(c##i##1, ai, b1);
#define CT__GEMM_STORET(i)                                                                 \
    vst1q_f32(t + i * 8, c##i##0);                                                         \
    vst1q_f32(t + i * 8 + 4, c##i##1);

/* float32, MR = 6, NR = 8 (float64 takes the portable kernel). */
static void ct__gemm_ukr_f32(int64_t kc, const float *a, int64_t ars, int64_t acs,
                             const float *b, float alpha, float beta, float *c, int64_t rsc,
                             int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS6(CT__GEMM_DECL)
    const float *end = b + kc * 8; /* a pointer, not a 64-bit count, ends the loops */
    if (mr <= 3) {
        // edge tile of at most 3 rows: the other rows stay zero
        for (; b < end; a += acs, b += 8) {
            float32x4_t a0 = ct__gemm_neon_a_f32(a, ars), b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
            float32x4_t ai;
            CT__GEMM_ROWS3(CT__GEMM_FMA)
        }
    } else {
        // a (6, kc) at (ars, acs), b (kc, 8) packed; 12 q accumulators
        for (; b < end; a += acs, b += 8) {
            float32x4_t a0 = ct__gemm_neon_a_f32(a, ars), b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
            float32x4_t ai;
            CT__GEMM_ROWS6(CT__GEMM_FMA)
        }
    }
    float t[6 * 8];
    CT__GEMM_ROWS6(CT__GEMM_STORET)
    ct__gemm_update_f32(mr, nr, alpha, t, 8, beta, c, rsc, csc);
}

#undef CT__GEMM_ROWS6
#undef CT__GEMM_ROWS3
#undef CT__GEMM_DECL
#undef CT__GEMM_AI
#undef CT__GEMM_FMA
#undef CT__GEMM_STORET

#endif

#if !defined(CT__GEMM_AVX512) && !defined(CT__GEMM_AVX2) && !defined(CT__GEMM_NEON)

/* Portable micro-kernel: (MR, NR) accumulators in a local array; fused multiply-adds where
   the target has them (the SIMD kernels' rounding: the same results), else a multiply and
   an add (fmaf would be a slow library call). */
#if defined(__FP_FAST_FMAF)
#define CT__GEMM_MADD_f32(x, y, z) fmaf(x, y, z)
#else
#define CT__GEMM_MADD_f32(x, y, z) ((z) + (x) * (y))
#endif
#if defined(__FP_FAST_FMA)
#define CT__GEMM_MADD_f64(x, y, z) fma(x, y, z)
#else
#define CT__GEMM_MADD_f64(x, y, z) ((z) + (x) * (y))
#endif
#define CT__GEMM_PORTABLE_UKR(T, S)                                                        \
    static void ct__gemm_ukr_##S(int64_t kc, const T *a, int64_t ars, int64_t acs,         \
                                 const T *b, T alpha, T beta, T *c, int64_t rsc,           \
                                 int64_t csc, int64_t mr, int64_t nr)                      \
    {                                                                                      \
        const int MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                              \
        T t[CT__GEMM_MR_##S * CT__GEMM_NR_##S];                                            \
        for (int i = 0; i < MR * NR; i++) {                                                \
            t[i] = (T)0;                                                                   \
        }                                                                                  \
        /* a (MR, kc) at (ars, acs), b (kc, NR) packed; t (MR, NR) */                      \
        for (int64_t p = 0; p < kc; p++) {                                                 \
            for (int i = 0; i < MR; i++) {                                                 \
                T ai = a[p * acs + i * ars];                                               \
                for (int j = 0; j < NR; j++) {                                             \
                    t[i * NR + j] = CT__GEMM_MADD_##S(ai, b[p * NR + j], t[i * NR + j]); \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        ct__gemm_update_##S(mr, nr, alpha, t, NR, beta, c, rsc, csc);                      \
    }
#if !defined(CT__GEMM_NEON32)
CT__GEMM_PORTABLE_UKR(float, f32)
#endif
CT__GEMM_PORTABLE_UKR(double, f64)
#undef CT__GEMM_PORTABLE_UKR
#undef CT__GEMM_MADD_f32
#undef CT__GEMM_MADD_f64

#endif

/* ---------------------------------------------------------------------------------------
 * Transposing copies for packing: dst[p * R + l] = src[l * ld + p] for l < lines, p < kc.
 * They pack an edge micro-panel of A whose rows are contiguous (csa == 1) and B when its
 * columns are (rsb == 1, e.g. a Linear weight used as W^T). With AVX, 8 x 8 (float32) or 4 x 4
 * (float64) blocks are transposed in registers; other lines go element by element.
 * ------------------------------------------------------------------------------------- */

static void ct__gemm_pack_t_f32(int64_t lines, int64_t kc, const float *src, int64_t ld,
                                float *dst, int64_t R)
{
    int64_t l = 0;
#if defined(CT__GEMM_AVX512) || defined(CT__GEMM_AVX2)
    // src (8, kc) at rows ld apart -> dst (kc, 8) at rows R apart, 8 x 8 blocks
    for (; l + 8 <= lines; l += 8) {
        const float *s = src + l * ld;
        float *d = dst + l;
        int64_t p = 0;
        for (; p + 8 <= kc; p += 8) {
            __m256 r0 = _mm256_loadu_ps(s + 0 * ld + p), r1 = _mm256_loadu_ps(s + 1 * ld + p);
            __m256 r2 = _mm256_loadu_ps(s + 2 * ld + p), r3 = _mm256_loadu_ps(s + 3 * ld + p);
            __m256 r4 = _mm256_loadu_ps(s + 4 * ld + p), r5 = _mm256_loadu_ps(s + 5 * ld + p);
            __m256 r6 = _mm256_loadu_ps(s + 6 * ld + p), r7 = _mm256_loadu_ps(s + 7 * ld + p);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
            float *dp = d + p * R;
            _mm256_storeu_ps(dp + 0 * R, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(dp + 1 * R, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(dp + 2 * R, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(dp + 3 * R, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(dp + 4 * R, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(dp + 5 * R, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(dp + 6 * R, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(dp + 7 * R, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
        for (; p < kc; p++) {
            for (int64_t i = 0; i < 8; i++) {
                d[p * R + i] = s[i * ld + p];
            }
        }
    }
#endif
    // src (lines - l, kc) -> dst (kc, lines - l), in chunks of 64 p that stay in L1
    for (int64_t p0 = 0; p0 < kc && l < lines; p0 += 64) {
        int64_t p1 = CT__GEMM_MIN(p0 + 64, kc);
        for (int64_t i = l; i < lines; i++) {
            for (int64_t p = p0; p < p1; p++) {
                dst[p * R + i] = src[i * ld + p];
            }
        }
    }
}

static void ct__gemm_pack_t_f64(int64_t lines, int64_t kc, const double *src, int64_t ld,
                                double *dst, int64_t R)
{
    int64_t l = 0;
#if defined(CT__GEMM_AVX512) || defined(CT__GEMM_AVX2)
    // src (4, kc) at rows ld apart -> dst (kc, 4) at rows R apart, 4 x 4 blocks
    for (; l + 4 <= lines; l += 4) {
        const double *s = src + l * ld;
        double *d = dst + l;
        int64_t p = 0;
        for (; p + 4 <= kc; p += 4) {
            __m256d r0 = _mm256_loadu_pd(s + 0 * ld + p), r1 = _mm256_loadu_pd(s + 1 * ld + p);
            __m256d r2 = _mm256_loadu_pd(s + 2 * ld + p), r3 = _mm256_loadu_pd(s + 3 * ld + p);
            __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
            __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            double *dp = d + p * R;
            _mm256_storeu_pd(dp + 0 * R, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(dp + 1 * R, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(dp + 2 * R, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(dp + 3 * R, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
        for (; p < kc; p++) {
            for (int64_t i = 0; i < 4; i++) {
                d[p * R + i] = s[i * ld + p];
            }
        }
    }
#endif
    // src (lines - l, kc) -> dst (kc, lines - l), in chunks of 64 p that stay in L1
    for (int64_t p0 = 0; p0 < kc && l < lines; p0 += 64) {
        int64_t p1 = CT__GEMM_MIN(p0 + 64, kc);
        for (int64_t i = l; i < lines; i++) {
            for (int64_t p = p0; p < p1; p++) {
                dst[p * R + i] = src[i * ld + p];
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Thin products without packing (float32, AVX-512 only).
 *
 * For small products thin in one dimension (e.g. an MLP's 10-class logits layer: (64, 512)
 * @ (512, 10), its gradients (10, 64) @ (64, 512) and (64, 10) @ (10, 512)), or tiny
 * altogether, packing and padding to whole MR x NR tiles cost as much as the arithmetic. Two kernels read the operands in place instead:
 *   axpy form  B and C rows contiguous (csb == csc == 1): an R x 16Z tile of C (R <= 6
 *              rows, Z <= 4 zmm, masked at the right edge) accumulates A[i, p] (broadcast)
 *              times row p of B over all K, then C = alpha * acc + beta * C is stored once.
 *              C^T = B^T @ A^T takes it when A and C are column-major instead.
 *   dot form   A rows and B columns contiguous along K (csa == rsb == 1): a 4 x 5 tile of
 *              C keeps 20 zmm partial dot products over K (masked K tail), reduced by a
 *              transpose-and-add tree; any C strides. Each group of 5 columns of B meets
 *              every row of A while it is in L1, so B is read once, in place.
 * Both also take larger products with few rows (a Linear on a few tokens: x (M, K) @ W^T,
 * the dot form when W (N, K) is row-major, the axpy form when W^T is) or few columns, where
 * packing all of B (A) for so few products cost more than the products. Both are threaded
 * over columns of C (rows of C^T) with ct__parallel_for, whose chunks do not depend on the
 * thread count, nor does any element depend on where its chunk starts.
 * Edge tiles recompute clamped rows (and, in the dot form, columns) and store only the
 * valid part. Each element sums its K products in one pass (no KC blocks), so results
 * differ from the packed path only in rounding.
 * ------------------------------------------------------------------------------------- */
#if defined(CT__GEMM_AVX512)

/* Largest product (M * N * K) taken by the thin kernels whatever its shape. */
#define CT__GEMM_THIN_MAX_MACS CT__GEMM_PAR_MIN_MACS
/* Larger products with few rows (or columns) take the dot or axpy form, threaded: the dot
   form when the rows of A (columns of B) are at most CT__GEMM_DOT_ROWS and hold at most
   CT__GEMM_DOT_ELEMS elements (it beat packing by 1.5x - 5x for 4 - 32 rows of K = 384, a
   MiniLM at batch 1, and lost from 64 rows, or from 24 rows of K = 1536), the axpy form up
   to CT__GEMM_AXPY_ROWS rows of any K (1.1x - 4.8x for 4 - 64 rows of K = 384 or 1536). */
#define CT__GEMM_DOT_ROWS 48
#define CT__GEMM_DOT_ELEMS ((int64_t)16 * 1536)
#define CT__GEMM_AXPY_ROWS 64

/* Keeps a loaded chunk of B in a register: gcc otherwise folds the load into each FMA
   that uses it, reloading it up to 6 times. */
#if defined(__GNUC__)
#define CT__GEMM_KEEP(v) __asm__("" : "+v"(v))
#else
#define CT__GEMM_KEEP(v) (void)0
#endif

/* Lists over the zmm columns z and rows r of an axpy tile: F(r, z), G(r, Z). */
#define CT__GEMM_AXZ1(F, r) F(r, 0)
#define CT__GEMM_AXZ2(F, r) F(r, 0) F(r, 1)
#define CT__GEMM_AXZ3(F, r) F(r, 0) F(r, 1) F(r, 2)
#define CT__GEMM_AXZ4(F, r) F(r, 0) F(r, 1) F(r, 2) F(r, 3)
#define CT__GEMM_AXR1(G, Z) G(0, Z)
#define CT__GEMM_AXR2(G, Z) G(0, Z) G(1, Z)
#define CT__GEMM_AXR4(G, Z) G(0, Z) G(1, Z) G(2, Z) G(3, Z)
#define CT__GEMM_AXR6(G, Z) G(0, Z) G(1, Z) G(2, Z) G(3, Z) G(4, Z) G(5, Z)

#define CT__GEMM_AX_ROWPTR(r, Z) const float *a##r = a + ((r) < mr ? (r) : mr - 1) * rsa;
#define CT__GEMM_AX_DECL(r, z) __m512 c##r##_##z = _mm512_setzero_ps();
#define CT__GEMM_AX_DECL_R(r, Z) CT__GEMM_AXZ##Z(CT__GEMM_AX_DECL, r)
#define CT__GEMM_AX_LD_m(k, p) _mm512_maskz_loadu_ps(k, p)
#define CT__GEMM_AX_LD_f(k, p) _mm512_loadu_ps(p)
#define CT__GEMM_AX_ST_m(p, k, v) _mm512_mask_storeu_ps(p, k, v)
#define CT__GEMM_AX_ST_f(p, k, v) _mm512_storeu_ps(p, v)
#define CT__GEMM_AX_LOADB(r, z)                                                            \
    __m512 b##z = CT__GEMM_AX_LD(k##z, bp + 16 * (z));                                     \
    CT__GEMM_KEEP(b##z);
#define CT__GEMM_AX_FMA(r, z) c##r##_##z = _mm512_fmadd_ps(av, b##z, c##r##_##z);
#define CT__GEMM_AX_FMA_R(r, Z)                                                            \
    {                                                                                      \
        __m512 av = _mm512_set1_ps(a##r[p * csa]);                                         \
        CT__GEMM_AXZ##Z(CT__GEMM_AX_FMA, r)                                                \
    }
/* stores of an accumulator x: alpha * x or x (alpha == 1), plus beta * C when beta != 0 */
#define CT__GEMM_AX_STORE0(r, z, X) CT__GEMM_AX_ST(cr + 16 * (z), k##z, X(c##r##_##z));
#define CT__GEMM_AX_STOREB(r, z, X)                                                        \
    CT__GEMM_AX_ST(cr + 16 * (z), k##z,                                                    \
                   _mm512_fmadd_ps(vb, CT__GEMM_AX_LD(k##z, cr + 16 * (z)), X(c##r##_##z)));
#define CT__GEMM_AX_ALPHA(x) _mm512_mul_ps(va, x)
#define CT__GEMM_AX_ONE(x) (x)
#define CT__GEMM_AX_ST0A(r, z) CT__GEMM_AX_STORE0(r, z, CT__GEMM_AX_ALPHA)
#define CT__GEMM_AX_ST01(r, z) CT__GEMM_AX_STORE0(r, z, CT__GEMM_AX_ONE)
#define CT__GEMM_AX_STBA(r, z) CT__GEMM_AX_STOREB(r, z, CT__GEMM_AX_ALPHA)
#define CT__GEMM_AX_STB1(r, z) CT__GEMM_AX_STOREB(r, z, CT__GEMM_AX_ONE)
#define CT__GEMM_AX_STORE_R(r, Z)                                                          \
    if ((r) < mr) {                                                                        \
        float *cr = c + (r)*rsc;                                                           \
        if (beta == 0.0f) {                                                                \
            if (alpha == 1.0f) {                                                           \
                CT__GEMM_AXZ##Z(CT__GEMM_AX_ST01, r)                                       \
            } else {                                                                       \
                CT__GEMM_AXZ##Z(CT__GEMM_AX_ST0A, r)                                       \
            }                                                                              \
        } else if (alpha == 1.0f) {                                                        \
            CT__GEMM_AXZ##Z(CT__GEMM_AX_STB1, r)                                           \
        } else {                                                                           \
            CT__GEMM_AXZ##Z(CT__GEMM_AX_STBA, r)                                           \
        }                                                                                  \
    }

/* C (mr, <= 16Z) at row stride rsc = alpha * A (mr, K) @ B (K, <= 16Z) + beta * C, for
   mr <= R; B rows rsb apart and contiguous, masked by k (one mask per zmm) in the m
   flavor, all 16Z columns valid in the f flavor (CT__GEMM_AX_LD / ST name the flavor). */
#define CT__GEMM_AX_KERNEL(R, Z, F)                                                        \
    static void ct__gemm_ax_##R##_##Z##F(int64_t mr, int64_t K, float alpha, const float *a,  \
                                      int64_t rsa, int64_t csa, const float *b,            \
                                      int64_t rsb, float beta, float *c, int64_t rsc,      \
                                      const __mmask16 *k)                                  \
    {                                                                                      \
        __mmask16 k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3];                              \
        (void)k0;                                                                          \
        (void)k1;                                                                          \
        (void)k2;                                                                          \
        (void)k3;                                                                          \
        CT__GEMM_AXR##R(CT__GEMM_AX_ROWPTR, Z)                                             \
        CT__GEMM_AXR##R(CT__GEMM_AX_DECL_R, Z)                                             \
        for (int64_t p = 0; p < K; p++) {                                                  \
            const float *bp = b + p * rsb;                                                 \
            CT__GEMM_AXZ##Z(CT__GEMM_AX_LOADB, 0)                                          \
            CT__GEMM_AXR##R(CT__GEMM_AX_FMA_R, Z)                                          \
        }                                                                                  \
        __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);                      \
        CT__GEMM_AXR##R(CT__GEMM_AX_STORE_R, Z)                                            \
    }

#define CT__GEMM_AX_LD CT__GEMM_AX_LD_m
#define CT__GEMM_AX_ST CT__GEMM_AX_ST_m
CT__GEMM_AX_KERNEL(6, 4, m)
CT__GEMM_AX_KERNEL(6, 3, m)
CT__GEMM_AX_KERNEL(6, 2, m)
CT__GEMM_AX_KERNEL(6, 1, m)
CT__GEMM_AX_KERNEL(4, 4, m)
CT__GEMM_AX_KERNEL(4, 3, m)
CT__GEMM_AX_KERNEL(4, 2, m)
CT__GEMM_AX_KERNEL(4, 1, m)
CT__GEMM_AX_KERNEL(2, 4, m)
CT__GEMM_AX_KERNEL(2, 3, m)
CT__GEMM_AX_KERNEL(2, 2, m)
CT__GEMM_AX_KERNEL(2, 1, m)
CT__GEMM_AX_KERNEL(1, 4, m)
CT__GEMM_AX_KERNEL(1, 3, m)
CT__GEMM_AX_KERNEL(1, 2, m)
CT__GEMM_AX_KERNEL(1, 1, m)
#undef CT__GEMM_AX_LD
#undef CT__GEMM_AX_ST
#define CT__GEMM_AX_LD CT__GEMM_AX_LD_f
#define CT__GEMM_AX_ST CT__GEMM_AX_ST_f
CT__GEMM_AX_KERNEL(6, 4, f)
CT__GEMM_AX_KERNEL(6, 3, f)
CT__GEMM_AX_KERNEL(4, 4, f)
CT__GEMM_AX_KERNEL(4, 3, f)
CT__GEMM_AX_KERNEL(2, 4, f)
CT__GEMM_AX_KERNEL(2, 3, f)
CT__GEMM_AX_KERNEL(1, 4, f)
CT__GEMM_AX_KERNEL(1, 3, f)
#undef CT__GEMM_AX_LD
#undef CT__GEMM_AX_ST

typedef void (*ct__gemm_ax_fn)(int64_t, int64_t, float, const float *, int64_t, int64_t,
                               const float *, int64_t, float, float *, int64_t,
                               const __mmask16 *);

/* A thin product C (M, N) at (rsc, csc) = alpha * A (M, K) @ B (K, N) + beta * C, for the
   threaded forms' tasks. */
typedef struct {
    int64_t M, N, K, rsa, csa, rsb, csb, rsc, csc;
    float alpha, beta;
    const float *A, *B;
    float *C;
} ct__gemm_thin_job;

/* Axpy form: C (M, N) = alpha * A (M, K) @ B (K, N) + beta * C, B and C rows contiguous. */
static void ct__gemm_axpy_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                              int64_t rsa, int64_t csa, const float *B, int64_t rsb, float beta,
                              float *C, int64_t rsc)
{
    /* [rows 6, 4, 2, 1][full 4 or 3 zmm, masked 4, 3, 2, 1 zmm] */
    static const ct__gemm_ax_fn fns[4][6] = {
        {ct__gemm_ax_6_4f, ct__gemm_ax_6_3f, ct__gemm_ax_6_4m, ct__gemm_ax_6_3m, ct__gemm_ax_6_2m, ct__gemm_ax_6_1m},
        {ct__gemm_ax_4_4f, ct__gemm_ax_4_3f, ct__gemm_ax_4_4m, ct__gemm_ax_4_3m, ct__gemm_ax_4_2m, ct__gemm_ax_4_1m},
        {ct__gemm_ax_2_4f, ct__gemm_ax_2_3f, ct__gemm_ax_2_4m, ct__gemm_ax_2_3m, ct__gemm_ax_2_2m, ct__gemm_ax_2_1m},
        {ct__gemm_ax_1_4f, ct__gemm_ax_1_3f, ct__gemm_ax_1_4m, ct__gemm_ax_1_3m, ct__gemm_ax_1_2m, ct__gemm_ax_1_1m},
    };
    /* column blocks of 64 outermost, so each (K, 64) block of B is reused from L1/L2 */
    for (int64_t j = 0; j < N; j += 64) {
        int64_t nc = CT__GEMM_MIN(64, N - j);
        __mmask16 k[4];
        for (int z = 0; z < 4; z++) {
            int64_t rem = nc - 16 * z;
            k[z] = rem >= 16 ? (__mmask16)0xFFFF
                             : rem > 0 ? (__mmask16)((1u << rem) - 1u) : (__mmask16)0;
        }
        int zi = nc == 64 ? 0 : nc == 48 ? 1 : nc > 48 ? 2 : nc > 32 ? 3 : nc > 16 ? 4 : 5;
        for (int64_t i = 0; i < M;) {
            int64_t mr = CT__GEMM_MIN(6, M - i);
            int ri = mr >= 5 ? 0 : mr >= 3 ? 1 : mr == 2 ? 2 : 3;
            fns[ri][zi](mr, K, alpha, A + i * rsa, rsa, csa, B + j, rsb, beta,
                        C + i * rsc + j, rsc, k);
            i += mr;
        }
    }
}

/* Column blocks [b0, b1) of 64 of the axpy form's C. */
static void ct__gemm_axpy_task_f32(int64_t b0, int64_t b1, void *ctx)
{
    const ct__gemm_thin_job *d = (const ct__gemm_thin_job *)ctx;
    int64_t j0 = 64 * b0, j1 = CT__GEMM_MIN(64 * b1, d->N);
    ct__gemm_axpy_f32(d->M, j1 - j0, d->K, d->alpha, d->A, d->rsa, d->csa, d->B + j0, d->rsb,
                      d->beta, d->C + j0, d->rsc);
}

/* The axpy form over all of C, threaded over blocks of 64 columns of at least 2^17
   multiply-adds each (an element's sum does not depend on its block). */
static void ct__gemm_thin_axpy_f32(int64_t M, int64_t N, int64_t K, float alpha,
                                   const float *A, int64_t rsa, int64_t csa, const float *B,
                                   int64_t rsb, float beta, float *C, int64_t rsc)
{
    ct__gemm_thin_job d = {M, N, K, rsa, csa, rsb, 1, rsc, 1, alpha, beta, A, B, C};
    ct__parallel_for(CT__GEMM_CEIL(N, 64), CT__GEMM_CEIL((int64_t)1 << 17, M * K * 64),
                     ct__gemm_axpy_task_f32, &d);
}

/* Dot form: C (M, N) at (rsc, csc) = alpha * A (M, K) @ B (K, N) + beta * C, A rows and
   B columns contiguous (csa == rsb == 1); 4 x 5 tiles (20 accumulators c<r><s>). */
#define CT__GEMM_DOT5(F, r) F(r, 0) F(r, 1) F(r, 2) F(r, 3) F(r, 4)
#define CT__GEMM_DOT_TILE(F) CT__GEMM_DOT5(F, 0) CT__GEMM_DOT5(F, 1) CT__GEMM_DOT5(F, 2) CT__GEMM_DOT5(F, 3)
#define CT__GEMM_DOT_DECL(r, s) __m512 c##r##s = _mm512_setzero_ps();
#define CT__GEMM_DOT_FMA(r, s) c##r##s = _mm512_fmadd_ps(va##r, vb##s, c##r##s);
/* The reduction shuffles are the zero-masking forms with all lanes set: the plain ones
   trip g++ 12's -Wmaybe-uninitialized inside its own headers (_mm512_undefined_ps). */
#define CT__GEMM_DOT_ALL ((__mmask16)0xFFFF)
/* (u, v) -> per 128-bit lane [u0 + u2, v0 + v2, u1 + u3, v1 + v3] */
#define CT__GEMM_DOT_PAIR(u, v)                                                            \
    _mm512_add_ps(_mm512_maskz_unpacklo_ps(CT__GEMM_DOT_ALL, u, v),                        \
                  _mm512_maskz_unpackhi_ps(CT__GEMM_DOT_ALL, u, v))
/* two pairs -> per 128-bit lane the partial sums of the 4 vectors, in order */
#define CT__GEMM_DOT_QUAD(s, t)                                                            \
    _mm512_add_ps(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd((__mmask8)0xFF,                \
                                                            _mm512_castps_pd(s),           \
                                                            _mm512_castps_pd(t))),         \
                  _mm512_castpd_ps(_mm512_maskz_unpackhi_pd((__mmask8)0xFF,                \
                                                            _mm512_castps_pd(s),           \
                                                            _mm512_castps_pd(t))))
/* two quads -> [lanes 0+1 of x, lanes 2+3 of x, lanes 0+1 of y, lanes 2+3 of y] */
#define CT__GEMM_DOT_LANES(x, y)                                                           \
    _mm512_add_ps(_mm512_maskz_shuffle_f32x4(CT__GEMM_DOT_ALL, x, y, 0x88),                \
                  _mm512_maskz_shuffle_f32x4(CT__GEMM_DOT_ALL, x, y, 0xDD))
#define CT__GEMM_DOT_ROWQ(r)                                                               \
    CT__GEMM_DOT_QUAD(CT__GEMM_DOT_PAIR(c##r##0, c##r##1), CT__GEMM_DOT_PAIR(c##r##2, c##r##3))
#define CT__GEMM_DOT_PTR(x, base, i, n, s, ld)                                             \
    const float *x##s = base + ((i) + CT__GEMM_MIN(s, (n)-1)) * (ld);
#define CT__GEMM_DOT_LOADS(LOAD)                                                           \
    __m512 va0 = LOAD(a0), va1 = LOAD(a1), va2 = LOAD(a2), va3 = LOAD(a3);                 \
    __m512 vb0 = LOAD(b0), vb1 = LOAD(b1), vb2 = LOAD(b2), vb3 = LOAD(b3), vb4 = LOAD(b4); \
    CT__GEMM_KEEP(vb0);                                                                    \
    CT__GEMM_KEEP(vb1);                                                                    \
    CT__GEMM_KEEP(vb2);                                                                    \
    CT__GEMM_KEEP(vb3);                                                                    \
    CT__GEMM_KEEP(vb4);
#define CT__GEMM_DOT_LOAD(x) _mm512_loadu_ps(x + p)
#define CT__GEMM_DOT_LOADT(x) _mm512_maskz_loadu_ps(kt, x + kfull)

/* Columns [j0, j1) of the dot form's C: for each group of 5 columns of B (kept in L1), every
   group of 4 rows of A; a tile's elements do not depend on where the range starts. */
static void ct__gemm_dot_cols_f32(const ct__gemm_thin_job *d, int64_t j0, int64_t j1)
{
    const int64_t K = d->K, rsa = d->rsa, csb = d->csb, rsc = d->rsc, csc = d->csc;
    const float *A = d->A, *B = d->B;
    float *C = d->C;
    int64_t kfull = K & ~(int64_t)15;
    __mmask16 kt = (__mmask16)((1u << (K - kfull)) - 1u);
    __m512 valpha = _mm512_set1_ps(d->alpha), vbeta = _mm512_set1_ps(d->beta);
    const __m512i idx[4] = {
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 3, 2, 1, 0),
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 17, 7, 6, 5, 4),
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 18, 11, 10, 9, 8),
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 19, 15, 14, 13, 12),
    };
    for (int64_t j = j0; j < j1; j += 5) {
        int64_t nr = CT__GEMM_MIN(5, j1 - j);
        CT__GEMM_DOT_PTR(b, B, j, nr, 0, csb)
        CT__GEMM_DOT_PTR(b, B, j, nr, 1, csb)
        CT__GEMM_DOT_PTR(b, B, j, nr, 2, csb)
        CT__GEMM_DOT_PTR(b, B, j, nr, 3, csb)
        CT__GEMM_DOT_PTR(b, B, j, nr, 4, csb)
        for (int64_t i = 0; i < d->M; i += 4) {
            int64_t mr = CT__GEMM_MIN(4, d->M - i);
            CT__GEMM_DOT_PTR(a, A, i, mr, 0, rsa)
            CT__GEMM_DOT_PTR(a, A, i, mr, 1, rsa)
            CT__GEMM_DOT_PTR(a, A, i, mr, 2, rsa)
            CT__GEMM_DOT_PTR(a, A, i, mr, 3, rsa)
            CT__GEMM_DOT_TILE(CT__GEMM_DOT_DECL)
            for (int64_t p = 0; p < kfull; p += 16) {
                CT__GEMM_DOT_LOADS(CT__GEMM_DOT_LOAD)
                CT__GEMM_DOT_TILE(CT__GEMM_DOT_FMA)
            }
            if (kfull < K) {
                CT__GEMM_DOT_LOADS(CT__GEMM_DOT_LOADT)
                CT__GEMM_DOT_TILE(CT__GEMM_DOT_FMA)
            }
            /* r1 lane 4r + s = alpha * sum of c<r><s> for s < 4, r2 lane r for s = 4 */
            __m512 h0 = CT__GEMM_DOT_LANES(CT__GEMM_DOT_ROWQ(0), CT__GEMM_DOT_ROWQ(1));
            __m512 h1 = CT__GEMM_DOT_LANES(CT__GEMM_DOT_ROWQ(2), CT__GEMM_DOT_ROWQ(3));
            __m512 r1 = _mm512_mul_ps(valpha, CT__GEMM_DOT_LANES(h0, h1));
            __m512 r2 = CT__GEMM_DOT_QUAD(CT__GEMM_DOT_PAIR(c04, c14), CT__GEMM_DOT_PAIR(c24, c34));
            r2 = CT__GEMM_DOT_LANES(r2, r2);
            r2 = _mm512_mul_ps(valpha, CT__GEMM_DOT_LANES(r2, r2));
            if (csc == 1) {
                /* row r: lanes 4r .. 4r + 3 of r1 and lane r of r2, nr of them */
                __mmask16 kn = (__mmask16)((1u << nr) - 1u);
                for (int64_t r = 0; r < mr; r++) {
                    float *cr = C + (i + r) * rsc + j;
                    __m512 v = _mm512_permutex2var_ps(r1, idx[r], r2);
                    if (d->beta != 0.0f) {
                        v = _mm512_fmadd_ps(vbeta, _mm512_maskz_loadu_ps(kn, cr), v);
                    }
                    _mm512_mask_storeu_ps(cr, kn, v);
                }
                continue;
            }
            float out[32];
            _mm512_storeu_ps(out, r1);
            _mm512_storeu_ps(out + 16, r2);
            for (int64_t r = 0; r < mr; r++) {
                float *cr = C + (i + r) * rsc + j * csc;
                for (int64_t s = 0; s < nr; s++) {
                    float v = s < 4 ? out[4 * r + s] : out[16 + r];
                    cr[s * csc] = d->beta == 0.0f ? v : fmaf(d->beta, cr[s * csc], v);
                }
            }
        }
    }
}

static void ct__gemm_dot_task_f32(int64_t j0, int64_t j1, void *ctx)
{
    ct__gemm_dot_cols_f32((const ct__gemm_thin_job *)ctx, j0, j1);
}

/* The dot form over all of C, threaded over columns of at least 2^17 multiply-adds each. */
static void ct__gemm_thin_dot_f32(int64_t M, int64_t N, int64_t K, float alpha,
                                  const float *A, int64_t rsa, const float *B, int64_t csb,
                                  float beta, float *C, int64_t rsc, int64_t csc)
{
    ct__gemm_thin_job d = {M, N, K, rsa, 1, 1, csb, rsc, csc, alpha, beta, A, B, C};
    int64_t grain = CT__GEMM_ROUND_UP(CT__GEMM_CEIL((int64_t)1 << 17, M * K), 5);
    ct__parallel_for(N, grain, ct__gemm_dot_task_f32, &d);
}

/* Takes C = alpha * A @ B + beta * C when a thin kernel fits the shape and strides:
   products too small to thread, the axpy form when its strides fit (it beats packing up
   to there), else the dot form when M or N is below 16 (where packing pads most). */
static int ct__gemm_thin_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                             int64_t rsa, int64_t csa, const float *B, int64_t rsb,
                             int64_t csb, float beta, float *C, int64_t rsc, int64_t csc)
{
    int dot = csa == 1 && rsb == 1 && K >= 32;
    if (M * N * K >= CT__GEMM_THIN_MAX_MACS) {
        /* few rows (columns): the dot or axpy form reads all of B (A) once, in place,
           instead of packing it for so few products */
        int dot_m = dot && M <= CT__GEMM_DOT_ROWS && M * K <= CT__GEMM_DOT_ELEMS;
        int dot_n = dot && N <= CT__GEMM_DOT_ROWS && N * K <= CT__GEMM_DOT_ELEMS;
        if (dot_m) {
            ct__gemm_thin_dot_f32(M, N, K, alpha, A, rsa, B, csb, beta, C, rsc, csc);
        } else if (M <= CT__GEMM_AXPY_ROWS && csb == 1 && csc == 1) {
            ct__gemm_thin_axpy_f32(M, N, K, alpha, A, rsa, csa, B, rsb, beta, C, rsc);
        } else if (dot_n) {
            /* C^T (N, M) = B^T (N, K) @ A^T (K, M) */
            ct__gemm_thin_dot_f32(N, M, K, alpha, B, csb, A, rsa, beta, C, csc, rsc);
        } else if (N <= CT__GEMM_AXPY_ROWS && rsa == 1 && rsc == 1) {
            ct__gemm_thin_axpy_f32(N, M, K, alpha, B, csb, rsb, A, csa, beta, C, csc);
        } else {
            return 0;
        }
        return 1;
    }
    if (dot && N < 16) {
        /* the axpy form would fill under N / 16 of each zmm */
        ct__gemm_thin_dot_f32(M, N, K, alpha, A, rsa, B, csb, beta, C, rsc, csc);
        return 1;
    }
    if (csb == 1 && csc == 1) {
        ct__gemm_thin_axpy_f32(M, N, K, alpha, A, rsa, csa, B, rsb, beta, C, rsc);
        return 1;
    }
    if (rsa == 1 && rsc == 1) {
        /* C^T (N, M) = B^T (N, K) @ A^T (K, M) */
        ct__gemm_thin_axpy_f32(N, M, K, alpha, B, csb, rsb, A, csa, beta, C, csc);
        return 1;
    }
    if (dot && M < 16) {
        ct__gemm_thin_dot_f32(M, N, K, alpha, A, rsa, B, csb, beta, C, rsc, csc);
        return 1;
    }
    return 0;
}

#define CT__GEMM_THIN_f32                                                                  \
    if (ct__gemm_thin_f32(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc)) {  \
        return;                                                                            \
    }
#else
#define CT__GEMM_THIN_f32
#endif
#define CT__GEMM_THIN_f64

/* ---------------------------------------------------------------------------------------
 * Packing, the blocked loop nest, threading and the fallback, once per dtype.
 * ------------------------------------------------------------------------------------- */

/* Splits n into ceil(n / cap) nearly equal blocks, each rounded up to a multiple of unit
   (cap is a multiple of unit), so no tiny last block wastes a pass. */
static int64_t ct__gemm_block(int64_t n, int64_t cap, int64_t unit)
{
    int64_t nb = CT__GEMM_CEIL(n, cap);
    return CT__GEMM_ROUND_UP(CT__GEMM_CEIL(n, nb), unit);
}

/* Picks the block grid ntm x ntn == nt that minimizes the padded work of the largest block
   plus the cost of packing its A and B. */
static void ct__gemm_grid(int64_t M, int64_t N, int nt, int64_t mr, int64_t nr, int *ntm,
                          int *ntn)
{
    double best = -1.0;
    *ntm = 1;
    *ntn = nt;
    for (int tm = 1; tm <= nt; tm++) {
        if (nt % tm != 0) {
            continue;
        }
        int tn = nt / tm;
        double m = (double)CT__GEMM_ROUND_UP(CT__GEMM_CEIL(M, tm), mr);
        double n = (double)CT__GEMM_ROUND_UP(CT__GEMM_CEIL(N, tn), nr);
        double cost = m * n + 4.0 * (m + n);
        if (best < 0.0 || cost < best) {
            best = cost;
            *ntm = tm;
            *ntn = tn;
        }
    }
}

/* Start of part t of n split into nt parts in whole units. */
static int64_t ct__gemm_split(int64_t n, int64_t unit, int t, int nt)
{
    int64_t units = CT__GEMM_CEIL(n, unit);
    int64_t at = units * t / nt * unit;
    return CT__GEMM_MIN(at, n);
}

#define CT__GEMM_DEFINE(T, S)                                                              \
    /* Packs n lines (a multiple of R) that are contiguous in src, whose kc steps lie ld   \
       apart, into n / R micro-panels of R lines: step p of all n lines in one pass (whole \
       cache lines read once, where a micro-panel at a time read each line n / R times). */\
    static inline void ct__gemm_pack_rows_##S(int64_t n, int64_t kc, const T *src,         \
                                              int64_t ld, T *dst, int64_t R)               \
    {                                                                                      \
        for (int64_t p = 0; p < kc; p++) {                                                 \
            for (int64_t q = 0; q < n; q += R) {                                           \
                memcpy(dst + q * kc + p * R, src + p * ld + q, sizeof(T) * (size_t)R);     \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* Packs A (mc, kc) at (rsa, csa) into MR-row micro-panels: ap[p * MR + i]. */         \
    static void ct__gemm_pack_a_##S(int64_t mc, int64_t kc, const T *A, int64_t rsa,       \
                                    int64_t csa, T *ap)                                    \
    {                                                                                      \
        const int64_t MR = CT__GEMM_MR_##S;                                                \
        int64_t ir = 0;                                                                    \
        if (rsa == 1 && csa != 1) {                                                        \
            /* columns of A are contiguous (A transposed): MR values per p */              \
            ir = mc / MR * MR;                                                             \
            ct__gemm_pack_rows_##S(ir, kc, A, csa, ap, CT__GEMM_MR_##S);                   \
            ap += ir * kc;                                                                 \
        }                                                                                  \
        for (; ir < mc; ir += MR) {                                                        \
            int64_t mr = CT__GEMM_MIN(MR, mc - ir);                                        \
            const T *a = A + ir * rsa;                                                     \
            if (mr < MR) {                                                                 \
                memset(ap, 0, sizeof(T) * (size_t)(MR * kc));                              \
            }                                                                              \
            if (csa == 1 && rsa != 1) {                                                    \
                /* rows of A are contiguous: transpose (mr, kc) into (kc, MR) */           \
                ct__gemm_pack_t_##S(mr, kc, a, rsa, ap, MR);                               \
            } else {                                                                       \
                /* any strides: mr values per p */                                         \
                for (int64_t p = 0; p < kc; p++) {                                         \
                    for (int64_t i = 0; i < mr; i++) {                                     \
                        ap[p * MR + i] = a[p * csa + i * rsa];                             \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            ap += MR * kc;                                                                 \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* Packs B (kc, nc) at (rsb, csb) into NR-column micro-panels: bp[p * NR + j]. */      \
    static void ct__gemm_pack_b_##S(int64_t kc, int64_t nc, const T *B, int64_t rsb,       \
                                    int64_t csb, T *bp)                                    \
    {                                                                                      \
        const int64_t NR = CT__GEMM_NR_##S;                                                \
        int64_t jr = 0;                                                                    \
        if (csb == 1) {                                                                    \
            /* rows of B are contiguous: NR values per p */                                \
            jr = nc / NR * NR;                                                             \
            ct__gemm_pack_rows_##S(jr, kc, B, rsb, bp, CT__GEMM_NR_##S);                   \
            bp += jr * kc;                                                                 \
        }                                                                                  \
        for (; jr < nc; jr += NR) {                                                        \
            int64_t nr = CT__GEMM_MIN(NR, nc - jr);                                        \
            const T *b = B + jr * csb;                                                     \
            if (nr < NR) {                                                                 \
                memset(bp, 0, sizeof(T) * (size_t)(NR * kc));                              \
            }                                                                              \
            if (rsb == 1 && csb != 1) {                                                    \
                /* columns of B are contiguous (B transposed): transpose (nr, kc) */       \
                ct__gemm_pack_t_##S(nr, kc, b, csb, bp, NR);                               \
            } else {                                                                       \
                /* any strides: nr values per p */                                         \
                for (int64_t p = 0; p < kc; p++) {                                         \
                    for (int64_t j = 0; j < nr; j++) {                                     \
                        bp[p * NR + j] = b[p * rsb + j * csb];                             \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            bp += NR * kc;                                                                 \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* One thread's product on C (M, N), with packing buffers ap (MC, KC), bp (KC, NC). */ \
    static void ct__gemm_blocked_##S(int64_t M, int64_t N, int64_t K, T alpha, const T *A, \
                                     int64_t rsa, int64_t csa, const T *B, int64_t rsb,    \
                                     int64_t csb, T beta, T *C, int64_t rsc, int64_t csc,  \
                                     T *ap, T *bp)                                         \
    {                                                                                      \
        const int64_t MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                          \
        int64_t MC = ct__gemm_block(M, CT__GEMM_MC_##S, MR);                               \
        int64_t NC = ct__gemm_block(N, CT__GEMM_NC_##S, NR);                               \
        int64_t KC = ct__gemm_block(K, CT__GEMM_KC_##S, 1);                                \
        /* jc: NC columns of B and C */                                                    \
        for (int64_t jc = 0; jc < N; jc += NC) {                                           \
            int64_t nc = CT__GEMM_MIN(NC, N - jc);                                         \
            /* pc: KC rows of B, columns of A; the first block applies beta */             \
            for (int64_t pc = 0; pc < K; pc += KC) {                                       \
                int64_t kc = CT__GEMM_MIN(KC, K - pc);                                     \
                T beta_p = pc == 0 ? beta : (T)1;                                          \
                ct__gemm_pack_b_##S(kc, nc, B + pc * rsb + jc * csb, rsb, csb, bp);        \
                /* ic: MC rows of A and C */                                               \
                for (int64_t ic = 0; ic < M; ic += MC) {                                   \
                    int64_t mc = CT__GEMM_MIN(MC, M - ic);                                 \
                    const T *a = A + ic * rsa + pc * csa;                                  \
                    /* whole MR-row micro-panels of A with contiguous rows are read in     \
                       place; the others (edge, other strides) packed */                   \
                    int64_t in_place = csa == 1 ? mc / MR * MR : 0;                        \
                    ct__gemm_pack_a_##S(mc - in_place, kc, a + in_place * rsa, rsa, csa,   \
                                        ap);                                               \
                    /* jr, ir: (MR, NR) tiles of C (mc, nc); micro-panels kc long */       \
                    for (int64_t jr = 0; jr < nc; jr += NR) {                              \
                        for (int64_t ir = 0; ir < mc; ir += MR) {                          \
                            T *c = C + (ic + ir) * rsc + (jc + jr) * csc;                  \
                            int in = ir < in_place;                                        \
                            const T *pa = in ? a + ir * rsa : ap + (ir - in_place) * kc;   \
                            ct__gemm_ukr_##S(kc, pa, in ? rsa : 1, in ? 1 : MR,            \
                                             bp + jr * kc, alpha, beta_p, c, rsc, csc,     \
                                             CT__GEMM_MIN(MR, mc - ir),                    \
                                             CT__GEMM_MIN(NR, nc - jr));                   \
                        }                                                                  \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* Unpacked fallback when no packing memory could be had: correct and slow. */         \
    static void ct__gemm_naive_##S(int64_t M, int64_t N, int64_t K, T alpha, const T *A,   \
                                   int64_t rsa, int64_t csa, const T *B, int64_t rsb,      \
                                   int64_t csb, T beta, T *C, int64_t rsc, int64_t csc)    \
    {                                                                                      \
        /* C (M, N), A (M, K), B (K, N), any strides */                                    \
        for (int64_t i = 0; i < M; i++) {                                                  \
            for (int64_t j = 0; j < N; j++) {                                              \
                T acc = (T)0;                                                              \
                for (int64_t p = 0; p < K; p++) {                                          \
                    acc += A[i * rsa + p * csa] * B[p * rsb + j * csb];                    \
                }                                                                          \
                T *c = C + i * rsc + j * csc;                                              \
                *c = beta == (T)0 ? alpha * acc : alpha * acc + beta * *c;                 \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* A threaded product: C (M, N) in an ntm x ntn grid of blocks; buffers of             \
       per_thread elements per slot, the A block first, the B panel at b_off. */           \
    typedef struct {                                                                       \
        int64_t M, N, K, rsa, csa, rsb, csb, rsc, csc;                                     \
        T alpha, beta;                                                                     \
        const T *A, *B;                                                                    \
        T *C, *buf;                                                                        \
        size_t per_thread, b_off;                                                          \
        int ntm, ntn;                                                                      \
    } ct__gemm_job_##S;                                                                    \
                                                                                           \
    /* Task `task` of the grid (row-major): its block of C, with slot's buffers. */        \
    static void ct__gemm_task_##S(int64_t task, int slot, void *ctx)                       \
    {                                                                                      \
        const ct__gemm_job_##S *j = (const ct__gemm_job_##S *)ctx;                         \
        const int64_t MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                          \
        int tm = (int)(task / j->ntn), tn = (int)(task % j->ntn);                          \
        int64_t m0 = ct__gemm_split(j->M, MR, tm, j->ntm);                                 \
        int64_t m1 = ct__gemm_split(j->M, MR, tm + 1, j->ntm);                             \
        int64_t n0 = ct__gemm_split(j->N, NR, tn, j->ntn);                                 \
        int64_t n1 = ct__gemm_split(j->N, NR, tn + 1, j->ntn);                             \
        T *ap = j->buf + j->per_thread * (size_t)slot;                                     \
        if (m1 > m0 && n1 > n0) {                                                          \
            ct__gemm_blocked_##S(m1 - m0, n1 - n0, j->K, j->alpha, j->A + m0 * j->rsa,     \
                                 j->rsa, j->csa, j->B + n0 * j->csb, j->rsb, j->csb,       \
                                 j->beta, j->C + m0 * j->rsc + n0 * j->csc, j->rsc,        \
                                 j->csc, ap, ap + j->b_off);                               \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    void ct__gemm_##S(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t rsa,   \
                      int64_t csa, const T *B, int64_t rsb, int64_t csb, T beta, T *C,     \
                      int64_t rsc, int64_t csc)                                            \
    {                                                                                      \
        const int64_t MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                          \
        if (M <= 0 || N <= 0) {                                                            \
            return;                                                                        \
        }                                                                                  \
        if (K <= 0 || alpha == (T)0) {                                                     \
            /* C (M, N) = beta * C; beta == 0 overwrites NaN */                            \
            for (int64_t i = 0; i < M; i++) {                                              \
                for (int64_t j = 0; j < N; j++) {                                          \
                    T *c = C + i * rsc + j * csc;                                          \
                    *c = beta == (T)0 ? (T)0 : beta * *c;                                  \
                }                                                                          \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        CT__GEMM_THIN_##S                                                                  \
        /* Compute C^T = B^T @ A^T instead when C is column-major, or when that pads much  \
           less (N far below NR). */                                                       \
        int64_t pad = CT__GEMM_ROUND_UP(M, MR) * CT__GEMM_ROUND_UP(N, NR);                 \
        int64_t pad_t = CT__GEMM_ROUND_UP(N, MR) * CT__GEMM_ROUND_UP(M, NR);               \
        int col_major = csc != 1 && rsc == 1;                                              \
        if ((col_major && pad_t <= pad + pad / 4) || (!col_major && 4 * pad_t < 3 * pad)) { \
            const T *tp = A;                                                               \
            int64_t t0 = M, t1 = rsa, t2 = csa;                                            \
            A = B;                                                                         \
            rsa = csb;                                                                     \
            csa = rsb;                                                                     \
            B = tp;                                                                        \
            rsb = t2;                                                                      \
            csb = t1;                                                                      \
            M = N;                                                                         \
            N = t0;                                                                        \
            t0 = rsc;                                                                      \
            rsc = csc;                                                                     \
            csc = t0;                                                                      \
        }                                                                                  \
        int nt = M * N * K >= CT__GEMM_PAR_MIN_MACS ? ct__parallel_threads() : 1;          \
        int64_t kc_max = CT__GEMM_MIN(K, (int64_t)CT__GEMM_KC_##S);                        \
        size_t a_len = (size_t)(CT__GEMM_ROUND_UP(CT__GEMM_MIN(M, (int64_t)CT__GEMM_MC_##S), \
                                                  MR) * kc_max);                           \
        size_t b_len = (size_t)(CT__GEMM_ROUND_UP(CT__GEMM_MIN(N, (int64_t)CT__GEMM_NC_##S), \
                                                  NR) * kc_max);                           \
        /* one buffer: per thread, an A block then a B panel, 64-byte multiples */         \
        size_t per_thread = CT__GEMM_ROUND_UP(a_len, (size_t)16) +                         \
                            CT__GEMM_ROUND_UP(b_len, (size_t)16);                          \
        T *buf = (T *)ct__malloc(sizeof(T) * per_thread * (size_t)nt);                     \
        if (buf == NULL && nt > 1) {                                                       \
            nt = 1;                                                                        \
            buf = (T *)ct__malloc(sizeof(T) * per_thread);                                 \
        }                                                                                  \
        if (buf == NULL) {                                                                 \
            ct__gemm_naive_##S(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc); \
            return;                                                                        \
        }                                                                                  \
        if (nt == 1) {                                                                     \
            ct__gemm_blocked_##S(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc,   \
                                 csc, buf, buf + CT__GEMM_ROUND_UP(a_len, (size_t)16));    \
            ct__free(buf);                                                                 \
            return;                                                                        \
        }                                                                                  \
        ct__gemm_job_##S j = {M, N, K, rsa, csa, rsb, csb, rsc, csc, alpha, beta, A, B, C, \
                              buf, per_thread, CT__GEMM_ROUND_UP(a_len, (size_t)16), 1, 1}; \
        ct__gemm_grid(M, N, nt, MR, NR, &j.ntm, &j.ntn);                                   \
        ct__parallel_tasks((int64_t)j.ntm * j.ntn, nt, ct__gemm_task_##S, &j);             \
        ct__free(buf);                                                                     \
    }

CT__GEMM_DEFINE(float, f32)
CT__GEMM_DEFINE(double, f64)

/* ---------------------------------------------------------------------------------------
 * Integer GEMM (int64), as PyTorch's CPU gemm for integer types, which accumulates in the
 * element type: products and sums wrap modulo 2^bits. They are computed in unsigned
 * arithmetic (defined on overflow), and the low bits of a sum of products depend only on the
 * low bits of the operands, so the narrower integer dtypes compute through int64 copies
 * (ct__gemm_integer, ops/linalg.c), and the result does not depend on the order of the sums
 * (nor on the thread count).
 *
 * Loop nest of a block of rows: jc over NC columns, pc over KC rows of B (a (KC, NC) block
 * of B stays in L2 while every row of the block uses it), rows i, p in the block, then the
 * contiguous columns: C[i, jc..] += (alpha * A[i, p]) * B[p, jc..]. B is copied row-major
 * first when its rows are not contiguous. N == 1 (mv, dot) runs one dot product per row.
 * ------------------------------------------------------------------------------------- */
#define CT__IGEMM_KC 128
#define CT__IGEMM_NC 512

typedef struct ct__igemm_job {
    int64_t N, K, rsa, csa, ldb, rsc;
    int64_t alpha, beta;
    const void *A, *B;
    void *C;
} ct__igemm_job;

/* U the element's unsigned type, W the arithmetic type (at least unsigned int). */
#define CT__IGEMM_DEFINE(U, W, S)                                                          \
    static void ct__igemm_rows_##S(int64_t i0, int64_t i1, void *ctx)                      \
    {                                                                                      \
        const ct__igemm_job *j = (const ct__igemm_job *)ctx;                               \
        const U *A = (const U *)j->A, *B = (const U *)j->B;                                \
        U *C = (U *)j->C;                                                                  \
        W alpha = (W)(uint64_t)j->alpha, beta = (W)(uint64_t)j->beta;                      \
        if (j->N == 1) { /* C[i] = beta * C[i] + alpha * (A[i, :] . B[:, 0]) */            \
            for (int64_t i = i0; i < i1; i++) {                                            \
                W acc = 0;                                                                 \
                for (int64_t p = 0; p < j->K; p++) {                                       \
                    acc += (W)A[i * j->rsa + p * j->csa] * (W)B[p * j->ldb];               \
                }                                                                          \
                U *c = C + i * j->rsc;                                                     \
                *c = (U)(alpha * acc + (beta == 0 ? 0 : beta * (W)*c));                    \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = i0; i < i1; i++) { /* C = beta * C; beta == 0 does not read C */  \
            U *c = C + i * j->rsc;                                                         \
            for (int64_t n = 0; n < j->N; n++) {                                           \
                c[n] = beta == 0 ? (U)0 : (U)(beta * (W)c[n]);                             \
            }                                                                              \
        }                                                                                  \
        for (int64_t jc = 0; jc < j->N; jc += CT__IGEMM_NC) {                              \
            int64_t nc = CT__GEMM_MIN((int64_t)CT__IGEMM_NC, j->N - jc);                   \
            for (int64_t pc = 0; pc < j->K; pc += CT__IGEMM_KC) {                          \
                int64_t kc = CT__GEMM_MIN((int64_t)CT__IGEMM_KC, j->K - pc);               \
                for (int64_t i = i0; i < i1; i++) {                                        \
                    U *c = C + i * j->rsc + jc;                                            \
                    const U *a = A + i * j->rsa;                                           \
                    int64_t p = pc;                                                        \
                    for (; p + 4 <= pc + kc; p += 4) { /* four rows of B per pass over c */ \
                        W a0 = alpha * (W)a[p * j->csa], a1 = alpha * (W)a[(p + 1) * j->csa]; \
                        W a2 = alpha * (W)a[(p + 2) * j->csa];                             \
                        W a3 = alpha * (W)a[(p + 3) * j->csa];                             \
                        const U *b0 = B + p * j->ldb + jc, *b1 = b0 + j->ldb;              \
                        const U *b2 = b1 + j->ldb, *b3 = b2 + j->ldb;                      \
                        for (int64_t n = 0; n < nc; n++) {                                 \
                            c[n] = (U)(c[n] + a0 * (W)b0[n] + a1 * (W)b1[n] + a2 * (W)b2[n] + \
                                       a3 * (W)b3[n]);                                     \
                        }                                                                  \
                    }                                                                      \
                    for (; p < pc + kc; p++) {                                             \
                        W a0 = alpha * (W)a[p * j->csa];                                   \
                        const U *b0 = B + p * j->ldb + jc;                                 \
                        for (int64_t n = 0; n < nc; n++) {                                 \
                            c[n] = (U)(c[n] + a0 * (W)b0[n]);                              \
                        }                                                                  \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }
CT__VECTORIZE_BEGIN
CT__IGEMM_DEFINE(uint64_t, uint64_t, 64)
CT__VECTORIZE_END
#undef CT__IGEMM_DEFINE

/* B (K, N) at (rsb, csb) copied row-major into a new buffer (NULL: out of memory). */
static void *ct__igemm_pack_b(size_t es, int64_t K, int64_t N, const void *B, int64_t rsb,
                              int64_t csb)
{
    char *bp = (char *)ct__malloc(es * (size_t)(K * N));
    const char *b = (const char *)B;
    for (int64_t p = 0; bp && p < K; p++) {
        for (int64_t n = 0; n < N; n++) {
            memcpy(bp + es * (size_t)(p * N + n), b + (int64_t)es * (p * rsb + n * csb), es);
        }
    }
    return bp;
}

bool ct__gemm_int(const char *op, ct_dtype dtype, int64_t M, int64_t N, int64_t K,
                  int64_t alpha, const void *A, int64_t rsa, int64_t csa, const void *B,
                  int64_t rsb, int64_t csb, int64_t beta, void *C, int64_t rsc)
{
    size_t es = ct_dtype_size(dtype);
    if (M <= 0 || N <= 0) {
        return true;
    }
    void *packed = NULL;
    if (csb != 1 && N > 1) { /* rows of B not contiguous: a row-major copy */
        packed = ct__igemm_pack_b(es, K, N, B, rsb, csb);
        if (!packed) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return false;
        }
        B = packed;
        rsb = N;
    }
    ct__igemm_job j = {N, K, rsa, csa, rsb, rsc, alpha, beta, A, B, C};
    /* about 2^18 multiply-adds per chunk of rows */
    int64_t work = N * (K > 0 ? K : 1);
    ct__parallel_for(M, work >= ((int64_t)1 << 18) ? 1 : ((int64_t)1 << 18) / work,
                     ct__igemm_rows_64, &j);
    ct__free(packed);
    return true;
}
#undef CT__IGEMM_KC
#undef CT__IGEMM_NC

#undef CT__GEMM_DEFINE
#undef CT__GEMM_THIN_f32
#undef CT__GEMM_THIN_f64
#undef CT__GEMM_AVX512
#undef CT__GEMM_AVX2
#undef CT__GEMM_NEON
#undef CT__GEMM_NEON32
#undef CT__GEMM_MR_f32
#undef CT__GEMM_NR_f32
#undef CT__GEMM_MR_f64
#undef CT__GEMM_NR_f64
#undef CT__GEMM_KC_f32
#undef CT__GEMM_MC_f32
#undef CT__GEMM_NC_f32
#undef CT__GEMM_KC_f64
#undef CT__GEMM_MC_f64
#undef CT__GEMM_NC_f64
#undef CT__GEMM_PAR_MIN_MACS
#undef CT__GEMM_THIN_MAX_MACS
#undef CT__GEMM_DOT_ROWS
#undef CT__GEMM_DOT_ELEMS
#undef CT__GEMM_AXPY_ROWS
#undef CT__GEMM_MIN
#undef CT__GEMM_CEIL
#undef CT__GEMM_ROUND_UP
