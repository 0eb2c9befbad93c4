/* nn/pool.c - max, average and adaptive pooling over 1, 2 or 3 spatial dims, lp_pool and
 * max_unpool: kernels, descriptors, public functions and modules.
 *
 * Legend: every op works on three axes (T, H, W); a 2-D op's T axis is a unit one (the 1-D
 * ops are 2-D ops on a unit height). P = numel / (T * H * W) planes of the contiguous input;
 * x / y the input / output plane, g / gx the output's / input's gradient. Output (a, b, c)
 * reads the window rows of output row (a, b) (their offsets (d * H + h) * W, precomputed:
 * ct__pool_rows) and in each the columns st[2][c] .. en[2][c] (step: the dilation); the
 * tables per axis come from ct__pool_axis, cnt the axes' factors of an average's divisor.
 * One walk (ct__pool_window) computes a max, an average or average's backward; max's backward
 * and max_unpool put values at indices. Each plane is computed by one thread in a fixed order.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "state_dict.h"
#include "module.h"
#include "pool.h"
#include "../ops/index.h"
#include "../ops/reduce.h"
#include "../ops/view.h"
#include "../ops/pointwise.h"
#include "../autograd/autograd.h"

#include <math.h>
#include <string.h>
#if defined(CT__HAS_AVX512)
#include <immintrin.h>
#endif


/* The pooling kinds; a descriptor's variant is kind | spatial dims << 2. */
enum { CT__POOL_MAX, CT__POOL_AVG, CT__POOL_ADAPTIVE_AVG, CT__POOL_ADAPTIVE_MAX };
#define CT__POOL_VARIANT(kind, dims) ((kind) | (dims) << 2)

/* The geometry of a call as ints over three axes (T, H, W; a 2-D op's T axis is a unit one:
   kernel, stride, dilation and output 1, padding 0), the layout of the node's i[] too: kernel
   (3), stride (3), padding (3), dilation (3), ceil_mode, count_include_pad, divisor_override,
   output (3), the op's spatial dims (2 or 3). */
enum { CT__PG_K = 0, CT__PG_S = 3, CT__PG_P = 6, CT__PG_D = 9, CT__PG_CEIL = 12, CT__PG_CIP = 13,
       CT__PG_DIV = 14, CT__PG_OUT = 15, CT__PG_ND = 18, CT__PG_N = 19 };

/* What a job does over each window: its maximum (and index), its sum over the divisor, the
   output's gradient over the divisor added to it (average's backward); or, without windows,
   the gradient added at the indices (max's backward), or put there (max_unpool: the last of
   a repeated index stays). */
enum { CT__WALK_MAX, CT__WALK_AVG, CT__WALK_SPREAD, CT__WALK_SCATTER, CT__WALK_PLACE };

typedef struct ct__pool_job {
    const char *x, *g;
    char *y, *gx;
    int64_t *idx;
    int walk;
    int64_t in[3], out[3], step[3], divisor; /* step: the dilation of each axis */
    const int64_t *st[3], *en[3], *cnt[3];  /* the windows of each axis (ct__pool_axis) */
    const void *cf[3]; /* cnt in the kernel's float type (no int conversion in the loop) */
    const int64_t *rows, *rs; /* output row (a, b)'s window rows: rows[rs[ab] .. rs[ab + 1]) */
    int64_t *own[2];          /* the tables' memory */
    int seq_div;  /* adaptive average: sum / kt / kh / kw (3-D: 3), sum / kh / kw (2-D: 2) */
    bool fast2x2; /* max, 1x2x2 windows at stride 1x2x2, no padding or dilation, all inside */
} ct__pool_job;

/* ---- kernels ------------------------------------------------------------------------- */
/* The 2x2 maxima and average's backward vectorized (blends, independent adds); the forward
   window walks not (their rows are short and carry a dependence: the vectorizer's versions of
   them cost more than they save). */
CT__VECTORIZE_BEGIN
#if defined(CT__HAS_AVX512)
/* The float32 2x2 maxima of ct__pool_max2x2_f32 below, 16 outputs a step with masked edges
   (rows of 7 or 14 outputs are too short for the vectorizer's loop, and their scalar compares
   mispredict on every other window): the same compares in the same order, so the same
   values and indices (the window offsets k kept as int64 in two halves). Returns OW. */
static int64_t ct__pool_max2x2_v_f32(const float *r0, int64_t W, float *y, int64_t *ix,
                                     int64_t OW, int64_t base)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2,
                                          0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i lane2 = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i kw[3] = {_mm512_set1_epi64(1), _mm512_set1_epi64(W), _mm512_set1_epi64(W + 1)};
    for (int64_t ow = 0; ow < OW; ow += 16) {
        int64_t n = OW - ow < 16 ? OW - ow : 16;
        __mmask16 mn = (__mmask16)((1u << n) - 1u);
        __mmask16 lo = (__mmask16)(n >= 8 ? 0xFFFFu : (1u << (2 * n)) - 1u);
        __mmask16 hi = (__mmask16)(n <= 8 ? 0u : (1u << (2 * n - 16)) - 1u);
        __m512 v[4]; /* the window's elements in compare order: r0 even, odd, r1 even, odd */
        for (int r = 0; r < 2; r++) {
            const float *p = (r ? r0 + W : r0) + 2 * ow;
            __m512 a = _mm512_maskz_loadu_ps(lo, p), b = _mm512_maskz_loadu_ps(hi, p + 16);
            v[2 * r] = _mm512_permutex2var_ps(a, even, b);
            v[2 * r + 1] = _mm512_permutex2var_ps(a, odd, b);
        }
        __m512 m = v[0];
        __m512i k[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
        for (int e = 1; e < 4; e++) { /* v > m || v != v */
            __mmask16 t = _mm512_cmp_ps_mask(v[e], m, _CMP_GT_OQ) |
                          _mm512_cmp_ps_mask(v[e], v[e], _CMP_UNORD_Q);
            m = _mm512_mask_mov_ps(m, t, v[e]);
            k[0] = _mm512_mask_mov_epi64(k[0], (__mmask8)t, kw[e - 1]);
            k[1] = _mm512_mask_mov_epi64(k[1], (__mmask8)(t >> 8), kw[e - 1]);
        }
        _mm512_mask_storeu_ps(y + ow, mn, m);
        for (int h = 0; h < 2; h++) { /* ix = base + 2 (ow + lane) + k, 8 lanes at a time */
            __m512i i8 = _mm512_add_epi64(k[h], _mm512_add_epi64(lane2, _mm512_set1_epi64(
                                                                     base + 2 * (ow + 8 * h))));
            _mm512_mask_storeu_epi64(ix + ow + 8 * h, (__mmask8)(mn >> (8 * h)), i8);
        }
    }
    return OW;
}
#define CT__POOL_MAX2X2_V_f32(r0, W, y, ix, OW, base) ct__pool_max2x2_v_f32(r0, W, y, ix, OW, base)

/* Max's backward on the fast 2x2 path for one float32 plane gx (in[1] x W) from its outputs'
   g and ix (out[1] x OW), 16 windows a step: each window's four elements written (0 + g at
   its index, as the scatter into zeroed gx adds; 0 elsewhere), so gx is written once instead
   of zeroed and then scattered into. false (gx partly written) when an index lies outside
   its window or a row or column is left uncovered (odd sizes): the caller zeroes and
   scatters instead. */
static bool ct__pool_unpool2x2_v_f32(const float *g, const int64_t *ix, float *gx,
                                     const int64_t *in, const int64_t *out)
{
    int64_t W = in[2], OW = out[2];
    if (2 * out[1] != in[1] || 2 * OW != W) {
        return false;
    }
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    const __m512i lane2 = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i kw[4] = {_mm512_setzero_si512(), _mm512_set1_epi64(1), _mm512_set1_epi64(W),
                           _mm512_set1_epi64(W + 1)};
    for (int64_t o = 0, r = 0; o < out[0] * out[1] * OW; o += OW, r += 2 * W) {
        for (int64_t ow = 0; ow < OW; ow += 16) {
            int64_t n = OW - ow < 16 ? OW - ow : 16;
            __mmask16 mn = (__mmask16)((1u << n) - 1u), hit = 0;
            __m512 v = _mm512_add_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(mn, g + o + ow));
            __m512i b = _mm512_add_epi64(lane2, _mm512_set1_epi64(r + 2 * ow));
            __m512i k[2] = {
                _mm512_sub_epi64(_mm512_maskz_loadu_epi64((__mmask8)mn, ix + o + ow), b),
                _mm512_sub_epi64(_mm512_maskz_loadu_epi64((__mmask8)(mn >> 8), ix + o + ow + 8),
                                 _mm512_add_epi64(b, _mm512_set1_epi64(16)))};
            __m512 e[4];
            for (int t = 0; t < 4; t++) {
                __mmask16 m = (__mmask16)(_mm512_cmpeq_epi64_mask(k[0], kw[t]) |
                                          (unsigned)_mm512_cmpeq_epi64_mask(k[1], kw[t]) << 8);
                hit |= m;
                e[t] = _mm512_maskz_mov_ps(m, v);
            }
            if ((hit & mn) != mn) {
                return false;
            }
            __mmask16 m0 = (__mmask16)(n >= 8 ? 0xFFFFu : (1u << (2 * n)) - 1u);
            __mmask16 m1 = (__mmask16)(n <= 8 ? 0u : (1u << (2 * n - 16)) - 1u);
            for (int rr = 0; rr < 2; rr++) {
                float *row = gx + r + rr * W + 2 * ow;
                _mm512_mask_storeu_ps(row, m0, _mm512_permutex2var_ps(e[2 * rr], lo,
                                                                      e[2 * rr + 1]));
                _mm512_mask_storeu_ps(row + 16, m1, _mm512_permutex2var_ps(e[2 * rr], hi,
                                                                           e[2 * rr + 1]));
            }
        }
    }
    return true;
}
#define CT__POOL_UNPOOL2X2_V_f32(g, ix, gx, in, out) ct__pool_unpool2x2_v_f32(g, ix, gx, in, out)
#else
#define CT__POOL_UNPOOL2X2_V_f32(g, ix, gx, in, out) false
#define CT__POOL_MAX2X2_V_f32(r0, W, y, ix, OW, base) 0
#endif
#define CT__POOL_MAX2X2_V_f64(r0, W, y, ix, OW, base) 0
#define CT__POOL_UNPOOL2X2_V_f64(g, ix, gx, in, out) false
#define CT__POOL_MAX2X2(T, S)                                                                   \
    /* one output row of 2x2 windows: rows r0, r0 + W from column 0, index base of r0 */      \
    static void ct__pool_max2x2_##S(const T *r0, int64_t W, T *y, int64_t *ix, int64_t OW,     \
                                    int64_t base)                                              \
    {                                                                                          \
        const T *r1 = r0 + W;                                                                  \
        for (int64_t ow = CT__POOL_MAX2X2_V_##S(r0, W, y, ix, OW, base); ow < OW; ow++) {      \
            T m = r0[2 * ow], v = r0[2 * ow + 1];                                              \
            int64_t k = 0;                                                                     \
            if (v > m || v != v) {                                                             \
                m = v;                                                                         \
                k = 1;                                                                         \
            }                                                                                  \
            v = r1[2 * ow];                                                                    \
            if (v > m || v != v) {                                                             \
                m = v;                                                                         \
                k = W;                                                                         \
            }                                                                                  \
            v = r1[2 * ow + 1];                                                                \
            if (v > m || v != v) {                                                             \
                m = v;                                                                         \
                k = W + 1;                                                                     \
            }                                                                                  \
            y[ow] = m;                                                                         \
            ix[ow] = base + 2 * ow + k;                                                        \
        }                                                                                      \
    }
CT__POOL_MAX2X2(float, f32)
CT__POOL_MAX2X2(double, f64)
#undef CT__POOL_MAX2X2
#undef CT__POOL_MAX2X2_V_f32
#undef CT__POOL_MAX2X2_V_f64
CT__VECTORIZE_END

#define CT__POOL_KERNELS(T, S)                                                                  \
    /* v over the divisor of output (a, b, c) */                                              \
    CT__BITS_INLINE T ct__pool_div_##S(const ct__pool_job *j, T v, int64_t a, int64_t b,       \
                                       int64_t c)                                              \
    {                                                                                          \
        if (j->seq_div) { /* a 2-D op's unit axis would divide by 1: skipped */               \
            const T *ka = (const T *)j->cf[0], *kb = (const T *)j->cf[1];                      \
            return (j->seq_div == 3 ? v / ka[a] : v) / kb[b] / ((const T *)j->cf[2])[c];       \
        }                                                                                      \
        return v / (T)(j->divisor ? j->divisor : j->cnt[0][a] * j->cnt[1][b] * j->cnt[2][c]);  \
    }                                                                                          \
    /* window row r (columns of output column c): its maximum (NaN wins) into *m and *mi, its \
       sum into *m, or *m added to gx */                                                       \
    CT__BITS_INLINE void ct__pool_row_##S(const ct__pool_job *j, int walk, const T *x, T *gx,    \
                                        int64_t r, int64_t c, T *m, int64_t *mi)               \
    {                                                                                          \
        int64_t w0 = j->st[2][c], w1 = j->en[2][c];                                            \
        if (walk == CT__WALK_SPREAD) {                                                         \
            for (int64_t w = w0; w < w1; w++) {                                                \
                gx[r + w] += *m;                                                               \
            }                                                                                  \
        } else if (walk == CT__WALK_AVG) {                                                     \
            T s = *m;                                                                          \
            for (int64_t w = w0; w < w1; w++) {                                                \
                s += x[r + w];                                                                 \
            }                                                                                  \
            *m = s;                                                                            \
        } else {                                                                               \
            for (int64_t w = w0; w < w1; w += j->step[2]) {                                    \
                T v = x[r + w];                                                                \
                if (v > *m || v != v) {                                                        \
                    *m = v;                                                                    \
                    *mi = r + w;                                                               \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    /* the window of output o = (a, b, c) over the plane x (or gx): its rows r0 .. r1 (their  \
       offsets, in (T, H) order), then its columns */                                          \
    CT__BITS_INLINE void ct__pool_window_##S(const ct__pool_job *j, int walk, const T *x,      \
                                             T *gx, T *y, int64_t *ix, const T *g,             \
                                             const int64_t *r0, const int64_t *r1, int64_t a,  \
                                             int64_t b, int64_t c, int64_t o)                  \
    {                                                                                          \
        T m = walk == CT__WALK_MAX ? -(T)INFINITY                                              \
              : walk == CT__WALK_SPREAD ? ct__pool_div_##S(j, g[o], a, b, c) : (T)0;           \
        int64_t mi = r1 > r0 ? r0[0] + j->st[2][c] : 0;                                        \
        for (const int64_t *r = r0; r < r1; r++) {                                             \
            ct__pool_row_##S(j, walk, x, gx, *r, c, &m, &mi);                                  \
        }                                                                                      \
        if (walk == CT__WALK_MAX) {                                                            \
            y[o] = m;                                                                          \
            ix[o] = mi;                                                                        \
        } else if (walk == CT__WALK_AVG) {                                                     \
            bool empty = r1 == r0 || j->en[2][c] <= j->st[2][c];                               \
            y[o] = empty ? (T)0 : ct__pool_div_##S(j, m, a, b, c);                             \
        }                                                                                      \
    }                                                                                          \
    /* plane p: every output's window (2x2 maxima row by row on the fast path), or max's      \
       backward: gx[idx] += g in output order; walk: j->walk, a constant once inlined */       \
    CT__BITS_INLINE void ct__pool_plane_##S(const ct__pool_job *j, int walk, int64_t p)        \
    {                                                                                          \
        int64_t HW = j->in[1] * j->in[2], I = j->in[0] * HW;                                   \
        int64_t O = j->out[0] * j->out[1] * j->out[2], o = 0;                                  \
        bool bw = walk >= CT__WALK_SPREAD;                                                     \
        const T *x = bw ? NULL : (const T *)j->x + p * I;                                      \
        const T *g = bw ? (const T *)j->g + p * O : NULL;                                      \
        T *y = bw ? NULL : (T *)j->y + p * O, *gx = bw ? (T *)j->gx + p * I : NULL;            \
        int64_t *ix = j->idx ? j->idx + p * O : NULL;                                          \
        if (walk == CT__WALK_SCATTER && j->fast2x2 &&                                          \
            CT__POOL_UNPOOL2X2_V_##S(g, ix, gx, j->in, j->out)) {                              \
            return;                                                                            \
        }                                                                                      \
        if (bw) {                                                                              \
            memset(gx, 0, sizeof(T) * (size_t)I);                                              \
        }                                                                                      \
        for (o = 0; walk >= CT__WALK_SCATTER && o < O; o++) {                                  \
            gx[ix[o]] = walk == CT__WALK_PLACE ? g[o] : gx[ix[o]] + g[o];                      \
        }                                                                                      \
        if (walk >= CT__WALK_SCATTER) {                                                        \
            return;                                                                            \
        }                                                                                      \
        o = 0;                                                                                 \
        for (int64_t a = 0; a < j->out[0]; a++) {                                              \
            for (int64_t b = 0; b < j->out[1]; b++) {                                          \
                if (walk == CT__WALK_MAX && j->fast2x2) {                                      \
                    int64_t r = a * HW + 2 * b * j->in[2];                                     \
                    ct__pool_max2x2_##S(x + r, j->in[2], y + o, ix + o, j->out[2], r);         \
                    o += j->out[2];                                                            \
                    continue;                                                                  \
                }                                                                              \
                const int64_t *r0 = j->rows + j->rs[a * j->out[1] + b];                        \
                const int64_t *r1 = j->rows + j->rs[a * j->out[1] + b + 1];                    \
                for (int64_t c = 0; c < j->out[2]; c++, o++) {                                 \
                    ct__pool_window_##S(j, walk, x, gx, y, ix, g, r0, r1, a, b, c, o);         \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    static void ct__pool_planes_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                          \
        const ct__pool_job *j = (const ct__pool_job *)ctx;                                     \
        for (int64_t p = b; p < e; p++) {                                                      \
            switch (j->walk) {                                                                 \
            case CT__WALK_MAX:                                                                 \
                ct__pool_plane_##S(j, CT__WALK_MAX, p);                                        \
                break;                                                                         \
            case CT__WALK_AVG:                                                                 \
                ct__pool_plane_##S(j, CT__WALK_AVG, p);                                        \
                break;                                                                         \
            case CT__WALK_SCATTER:                                                             \
                ct__pool_plane_##S(j, CT__WALK_SCATTER, p);                                    \
                break;                                                                         \
            default:                                                                           \
                ct__pool_plane_##S(j, CT__WALK_PLACE, p);                                      \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    /* average's backward vectorized: its rows' adds are independent */                       \
    CT__VECTORIZE_BEGIN                                                                        \
    static void ct__pool_spread_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                          \
        for (int64_t p = b; p < e; p++) {                                                      \
            ct__pool_plane_##S((const ct__pool_job *)ctx, CT__WALK_SPREAD, p);                 \
        }                                                                                      \
    }                                                                                          \
    CT__VECTORIZE_END
CT__POOL_KERNELS(float, f32)
CT__POOL_KERNELS(double, f64)
#undef CT__POOL_UNPOOL2X2_V_f32
#undef CT__POOL_UNPOOL2X2_V_f64
#undef CT__POOL_KERNELS

/* ---- glue: once per call (tables, checks, descriptors, wrappers, modules) ---------------- */
CT__GLUE_BEGIN
/* The windows of axis a (input size n) into st, en, cnt for each output position. */
static void ct__pool_axis(int kind, const int64_t *gi, int a, int64_t n, int64_t *st,
                          int64_t *en, int64_t *cnt)
{
    int64_t out = gi[CT__PG_OUT + a], k = gi[CT__PG_K + a], s = gi[CT__PG_S + a];
    int64_t p = gi[CT__PG_P + a], d = gi[CT__PG_D + a];
    for (int64_t o = 0; o < out; o++) {
        if (kind == CT__POOL_ADAPTIVE_AVG || kind == CT__POOL_ADAPTIVE_MAX) {
            st[o] = o * n / out; /* [floor(o * n / out), ceil((o + 1) * n / out)) */
            en[o] = ((o + 1) * n + out - 1) / out;
            cnt[o] = en[o] - st[o];
        } else if (kind == CT__POOL_MAX) {
            int64_t s0 = o * s - p;
            en[o] = s0 + (k - 1) * d + 1 < n ? s0 + (k - 1) * d + 1 : n;
            while (s0 < 0) {
                s0 += d;
            }
            st[o] = s0;
            cnt[o] = 1;
        } else {
            int64_t s0 = o * s - p, e0 = s0 + k < n + p ? s0 + k : n + p;
            st[o] = s0 > 0 ? s0 : 0;
            en[o] = e0 < n ? e0 : n;
            cnt[o] = gi[CT__PG_CIP] ? e0 - s0 : en[o] - st[o];
        }
    }
}

/* The number of positions from s below e in steps of d. */
static int64_t ct__pool_span(int64_t s, int64_t e, int64_t d)
{
    return e > s ? (e - s + d - 1) / d : 0;
}

/* The window rows of each output row (a, b): their offsets (d * H + h) * W into j->rows,
   output row ab's from j->rs[ab] below j->rs[ab + 1]. */
static bool ct__pool_rows(const char *fn, ct__pool_job *j)
{
    int64_t nab = j->out[0] * j->out[1], n = nab + 1;
    for (int64_t a = 0; a < j->out[0]; a++) {
        for (int64_t b = 0; b < j->out[1]; b++) {
            n += ct__pool_span(j->st[0][a], j->en[0][a], j->step[0]) *
                 ct__pool_span(j->st[1][b], j->en[1][b], j->step[1]);
        }
    }
    int64_t *rs = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n), *r = rs + nab + 1;
    if (!rs) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return false;
    }
    j->own[1] = rs;
    j->rs = rs;
    j->rows = r;
    for (int64_t ab = 0; ab < nab; ab++) {
        int64_t a = ab / j->out[1], b = ab % j->out[1];
        rs[ab] = r - j->rows;
        for (int64_t d = j->st[0][a]; d < j->en[0][a]; d += j->step[0]) {
            for (int64_t h = j->st[1][b]; h < j->en[1][b]; h += j->step[1]) {
                *r++ = (d * j->in[1] + h) * j->in[2];
            }
        }
    }
    rs[nab] = r - j->rows;
    return true;
}

/* The job over self's planes for the geometry gi (c->state), with the window rows when
   windows; free its tables with ct__pool_job_free (also after a failure). */
static bool ct__pool_job_init(ct_op_call *c, const ct_tensor *self, ct__pool_job *j,
                              bool windows)
{
    const int64_t *gi = (const int64_t *)c->state;
    int kind = c->op->variant & 3, nd = self->ndim, dims = (int)gi[CT__PG_ND];
    memset(j, 0, sizeof *j);
    int64_t n = 1;
    for (int a = 0; a < 3; a++) {
        j->in[a] = a < 3 - dims ? 1 : self->sizes[nd - 3 + a];
        j->out[a] = gi[CT__PG_OUT + a];
        n += 4 * j->out[a];
    }
    int64_t *t = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!t) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        return false;
    }
    j->own[0] = t;
    bool max = kind == CT__POOL_MAX;
    for (int a = 0; a < 3; a++) {
        ct__pool_axis(kind, gi, a, j->in[a], t, t + j->out[a], t + 2 * j->out[a]);
        j->st[a] = t;
        j->en[a] = t + j->out[a];
        j->cnt[a] = t + 2 * j->out[a];
        j->step[a] = max ? gi[CT__PG_D + a] : 1;
        t += 3 * j->out[a];
        for (int64_t o = 0; o < j->out[a]; o++) { /* 8 bytes a count: room for either type */
            if (c->dtype == CT_FLOAT32) {
                ((float *)(void *)t)[o] = (float)j->cnt[a][o];
            } else {
                ((double *)(void *)t)[o] = (double)j->cnt[a][o];
            }
        }
        j->cf[a] = t;
        t += j->out[a];
    }
    j->divisor = kind == CT__POOL_AVG ? gi[CT__PG_DIV] : 0;
    j->seq_div = kind == CT__POOL_ADAPTIVE_AVG ? dims : 0;
    j->fast2x2 = max && gi[CT__PG_K] == 1 && gi[CT__PG_S] == 1 && !gi[CT__PG_P];
    for (int a = 1; a < 3; a++) {
        j->fast2x2 = j->fast2x2 && gi[CT__PG_K + a] == 2 && gi[CT__PG_S + a] == 2 &&
                     !gi[CT__PG_P + a] && j->step[a] == 1 && 2 * j->out[a] <= j->in[a];
    }
    return j->fast2x2 || !windows || ct__pool_rows(c->fn, j);
}

static void ct__pool_job_free(ct__pool_job *j)
{
    ct__free(j->own[0]);
    ct__free(j->own[1]);
}

/* t itself when contiguous, else a contiguous copy (a reference either way). */
static ct_tensor *ct__pool_contig(const char *fn, const ct_tensor *t)
{
    if (ct_is_contiguous(t)) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *x = ct__tensor_new(fn, t->sizes, t->ndim, t->dtype);
    if (x) {
        ct__copy_kernel(x, t);
    }
    return x;
}

/* Runs the job over the planes of self in chunks of about CT__GRAIN elements. */
static void ct__pool_run(const ct_tensor *self, ct__pool_job *j, bool f32)
{
    int64_t in = j->in[0] * j->in[1] * j->in[2], out = j->out[0] * j->out[1] * j->out[2];
    int64_t planes = in > 0 ? ct_numel(self) / in : 0;
    bool spread = j->walk == CT__WALK_SPREAD;
    ct__parallel_for(planes, CT__GRAIN / (in + out + 1) + 1,
                     spread ? (f32 ? ct__pool_spread_f32 : ct__pool_spread_f64)
                            : (f32 ? ct__pool_planes_f32 : ct__pool_planes_f64), j);
}

/* Forward: input self -> outputs (values, and indices for max). */
static ct_status ct__pool_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0];
    ct__pool_job j;
    ct_tensor *x = ct__pool_job_init(c, self, &j, true) ? ct__pool_contig(c->fn, self) : NULL;
    if (x) {
        bool max = c->n_outputs > 1;
        j.walk = max ? CT__WALK_MAX : CT__WALK_AVG;
        j.x = ct__data(x);
        j.y = ct__data(c->outputs[0]);
        j.idx = max ? (int64_t *)(void *)ct__data(c->outputs[1]) : NULL;
        ct__pool_run(self, &j, c->dtype == CT_FLOAT32);
    }
    ct__release(x);
    ct__pool_job_free(&j);
    return x ? CT_OK : ct_error_code();
}

/* Backward: inputs grad_output, self (and indices for max) -> the gradient of self. */
static ct_status ct__pool_bw_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[1];
    ct__pool_job j;
    bool max = c->n_inputs > 2;
    ct_tensor *g = ct__pool_job_init(c, self, &j, !max) ? ct__pool_contig(c->fn, c->inputs[0])
                                                          : NULL;
    ct_tensor *ix = max && g ? ct__pool_contig(c->fn, c->inputs[2]) : NULL;
    bool ok = g && (ix || !max);
    if (ok) {
        j.walk = max ? CT__WALK_SCATTER : CT__WALK_SPREAD;
        j.g = ct__data(g);
        j.gx = ct__data(c->outputs[0]);
        j.idx = ix ? (int64_t *)(void *)ct__data(ix) : NULL;
        ct__pool_run(self, &j, c->dtype == CT_FLOAT32);
    }
    ct__release(g);
    ct__release(ix);
    ct__pool_job_free(&j);
    return ok ? CT_OK : ct_error_code();
}

/* ---- meta ------------------------------------------------------------------------------ */
/* The geometry of a dims-D op with every axis a unit one (no padding, no flags). */
static void ct__pool_geom_unit(int64_t *gi, int dims)
{
    memset(gi, 0, sizeof(int64_t) * CT__PG_N);
    for (int a = 0; a < 3; a++) {
        gi[CT__PG_K + a] = gi[CT__PG_S + a] = gi[CT__PG_D + a] = gi[CT__PG_OUT + a] = 1;
    }
    gi[CT__PG_ND] = dims;
}

/* Reads the schema's attributes into the geometry ints gi (c->state). */
static void ct__pool_read_attrs(const ct_op_call *c, int64_t *gi)
{
    int kind = c->op->variant & 3, dims = c->op->variant >> 2, a0 = 3 - dims;
    ct__pool_geom_unit(gi, dims);
    for (int a = 0; a < dims; a++) {
        if (kind == CT__POOL_MAX || kind == CT__POOL_AVG) {
            gi[CT__PG_K + a0 + a] = c->attrs[0].ints[a];
            gi[CT__PG_S + a0 + a] = c->attrs[1].ints[a];
            gi[CT__PG_P + a0 + a] = c->attrs[2].ints[a];
        }
        if (kind == CT__POOL_MAX) {
            gi[CT__PG_D + a0 + a] = c->attrs[3].ints[a];
        } else if (kind != CT__POOL_AVG && c->n_attrs) {
            gi[CT__PG_OUT + a0 + a] = c->attrs[0].ints[a];
        }
    }
    if (kind == CT__POOL_MAX) {
        gi[CT__PG_CEIL] = c->attrs[4].i;
    } else if (kind == CT__POOL_AVG) {
        gi[CT__PG_CEIL] = c->attrs[3].i;
        gi[CT__PG_CIP] = c->attrs[4].i;
        gi[CT__PG_DIV] = c->attrs[5].i;
    }
}

/* PyTorch's pooling_output_shape with its checks: the output size of axis a. */
static bool ct__pool_out_size(const char *fn, int64_t n, const int64_t *gi, int a, int64_t *out)
{
    int64_t k = gi[CT__PG_K + a], s = gi[CT__PG_S + a], p = gi[CT__PG_P + a];
    int64_t d = gi[CT__PG_D + a];
    if (s == 0) {
        ct__fail(CT_ERR_VALUE, fn, "stride should not be zero");
        return false;
    }
    if (p < 0) {
        ct__fail(CT_ERR_VALUE, fn, "pad must be non-negative, but got pad: %lld", (long long)p);
        return false;
    }
    if (p > ((k - 1) * d + 1) / 2) {
        ct__fail(CT_ERR_VALUE, fn, "pad should be at most half of effective kernel size, but got "
                 "pad=%lld, kernel_size=%lld and dilation=%lld", (long long)p, (long long)k,
                 (long long)d);
        return false;
    }
    int64_t num = n + 2 * p - d * (k - 1) - 1 + (gi[CT__PG_CEIL] ? s - 1 : 0);
    int64_t q = num / s - ((num % s != 0) && ((num < 0) != (s < 0)));
    *out = q + 1;
    if (gi[CT__PG_CEIL] && q * s >= n + p) {
        --*out;
    }
    return true;
}

/* The output sizes of the op's axes from t's trailing dims. */
static bool ct__pool_out_sizes(const char *fn, const ct_tensor *t, int64_t *gi)
{
    int dims = (int)gi[CT__PG_ND];
    for (int a = 3 - dims; a < 3; a++) {
        if (!ct__pool_out_size(fn, t->sizes[t->ndim - 3 + a], gi, a, &gi[CT__PG_OUT + a])) {
            return false;
        }
    }
    return true;
}

/* "kT: 2 kH: 2 kW: 2" (name "k"): the values of v's last dims axes into buf. */
static const char *ct__pool_axes_str(char *buf, size_t n, const char *name, const int64_t *v,
                                     int dims)
{
    size_t len = 0;
    buf[0] = 0;
    for (int a = 3 - dims; a < 3 && len < n; a++) {
        len += (size_t)snprintf(buf + len, n - len, "%s%s%c: %lld", len ? " " : "", name,
                                "THW"[a], (long long)v[a]);
    }
    return buf;
}

/* PyTorch's positive kernel, stride and dilation checks of pool2d/pool3d_shape_check. */
static bool ct__pool_positive(const char *fn, const int64_t *gi, int dims)
{
    static const char *const what[3] = {"kernel size", "stride", "dilation"};
    static const char *const name[3] = {"k", "d", "dilation"};
    static const int off[3] = {CT__PG_K, CT__PG_S, CT__PG_D};
    char buf[96];
    for (int q = 0; q < 3; q++) {
        for (int a = 3 - dims; a < 3; a++) {
            if (gi[off[q] + a] <= 0) {
                ct__fail(CT_ERR_VALUE, fn, "%s should be greater than zero, but got %s", what[q],
                         ct__pool_axes_str(buf, sizeof buf, name[q], gi + off[q], dims));
                return false;
            }
        }
    }
    return true;
}

/* PyTorch's output check: "Given input size: (CxHxW). Calculated output size: (CxOHxOW)". */
static bool ct__pool_out_check(const char *fn, const ct_tensor *t, const int64_t *gi)
{
    int dims = (int)gi[CT__PG_ND], nd = t->ndim;
    char in[96], out[96];
    size_t li = 0, lo = 0;
    bool ok = true;
    for (int a = -1; a < dims; a++) { /* the channels, then the spatial axes */
        int64_t o = a < 0 ? t->sizes[nd - dims - 1] : gi[CT__PG_OUT + 3 - dims + a];
        ok = ok && (a < 0 || o >= 1);
        li += (size_t)snprintf(in + li, sizeof in - li, "%s%lld", a < 0 ? "" : "x",
                               (long long)t->sizes[nd - dims + a]);
        lo += (size_t)snprintf(out + lo, sizeof out - lo, "%s%lld", a < 0 ? "" : "x",
                               (long long)o);
    }
    if (!ok) {
        ct__fail(CT_ERR_SHAPE, fn, "Given input size: (%s). Calculated output size: (%s). Output "
                 "size is too small", in, out);
    }
    return ok;
}

/* The rest of PyTorch's pool2d_shape_check of input t (3-D or 4-D). */
static bool ct__pool2d_shape_check(const char *fn, const ct_tensor *t, const int64_t *gi)
{
    const int64_t *k = gi + CT__PG_K + 1, *p = gi + CT__PG_P + 1, *sz = t->sizes;
    int nd = t->ndim;
    char buf[128];
    bool valid = sz[1] != 0 && sz[2] != 0;
    if (!((nd == 3 && sz[0] != 0 && valid) || (nd == 4 && valid && sz[3] != 0))) {
        ct__fail(CT_ERR_SHAPE, fn, "Expected 3D or 4D (batch mode) tensor with optional 0 dim "
                 "batch size for input, but got:%s", ct__shape_str(sz, nd, buf, sizeof buf));
        return false;
    }
    if (k[1] / 2 < p[1] || k[0] / 2 < p[0]) {
        ct__fail(CT_ERR_VALUE, fn, "pad should be smaller than or equal to half of kernel size, "
                 "but got padW = %lld, padH = %lld, kW = %lld, kH = %lld", (long long)p[1],
                 (long long)p[0], (long long)k[1], (long long)k[0]);
        return false;
    }
    return true;
}

/* The rest of PyTorch's pool3d_shape_check of input t (4-D or 5-D); avg: the input at least
   the kernel. */
static bool ct__pool3d_shape_check(const char *fn, const ct_tensor *t, const int64_t *gi,
                                   bool avg)
{
    const int64_t *k = gi + CT__PG_K, *p = gi + CT__PG_P, *sz = t->sizes + t->ndim - 3;
    char buf[128];
    for (int d = t->ndim == 5; d < t->ndim; d++) {
        if (t->sizes[d] == 0) {
            ct__fail(CT_ERR_SHAPE, fn, "%s: Expected input to have non-zero size for non-batch "
                     "dimensions, but input has sizes %s with dimension %d being empty",
                     avg ? "avg_pool3d()" : "max_pool3d_with_indices_out_cpu_template()",
                     ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), d);
            return false;
        }
    }
    if (avg && (sz[0] < k[0] || sz[1] < k[1] || sz[2] < k[2])) {
        ct__fail(CT_ERR_VALUE, fn, "input image (T: %lld H: %lld W: %lld) smaller than kernel "
                 "size (kT: %lld kH: %lld kW: %lld)", (long long)sz[0], (long long)sz[1],
                 (long long)sz[2], (long long)k[0], (long long)k[1], (long long)k[2]);
        return false;
    }
    if (k[0] / 2 < p[0] || k[2] / 2 < p[2] || k[1] / 2 < p[1]) {
        ct__fail(CT_ERR_VALUE, fn, "pad should be smaller than or equal to half of kernel size, "
                 "but got kT: %lld kW: %lld kH: %lld padT: %lld padW: %lld padH: %lld",
                 (long long)k[0], (long long)k[2], (long long)k[1], (long long)p[0],
                 (long long)p[2], (long long)p[1]);
        return false;
    }
    return true;
}

/* The outputs: t's leading dims, then the output size; values in t's dtype, and the int64
   indices when indices. */
static bool ct__pool_outputs(ct_op_call *c, const ct_tensor *t, const int64_t *gi, bool indices)
{
    int64_t s[CT_MAX_DIMS];
    int dims = (int)gi[CT__PG_ND];
    memcpy(s, t->sizes, sizeof s);
    for (int a = 0; a < dims; a++) {
        s[t->ndim - dims + a] = gi[CT__PG_OUT + 3 - dims + a];
    }
    c->dtype = t->dtype;
    return ct__op_output(c, s, t->ndim, t->dtype) &&
           (!indices || ct__op_output(c, s, t->ndim, CT_INT64));
}

/* max_pool{2,3}d_with_indices and avg_pool{2,3}d (PyTorch's meta: output sizes, then the
   checks). */
static bool ct__pool_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t *gi = (int64_t *)c->state;
    int dims = c->op->variant >> 2;
    bool max = (c->op->variant & 3) == CT__POOL_MAX;
    ct__pool_read_attrs(c, gi);
    if ((max || dims == 3) && t->ndim != dims + 1 && t->ndim != dims + 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "non-empty %dD or %dD (batch mode) tensor expected for "
                 "input", dims + 1, dims + 2);
        return false;
    }
    if (t->ndim < 3) {
        return ct__wrap_dim(c->fn, -3, t->ndim) >= 0;
    }
    return ct__pool_out_sizes(c->fn, t, gi) && ct__pool_positive(c->fn, gi, dims) &&
           (dims == 2 ? ct__pool2d_shape_check(c->fn, t, gi)
                      : ct__pool3d_shape_check(c->fn, t, gi, !max)) &&
           ct__pool_out_check(c->fn, t, gi) && ct__pool_outputs(c, t, gi, max);
}

/* PyTorch's adaptive check that t's dims from first on are not empty. */
static bool ct__adaptive_nonempty(const char *fn, const char *name, const ct_tensor *t,
                                  int first)
{
    char buf[128];
    for (int d = first; d < t->ndim; d++) {
        if (t->sizes[d] == 0) {
            ct__fail(CT_ERR_SHAPE, fn, "%s(): Expected input to have non-zero size for "
                     "non-batch dimensions, but input has sizes %s with dimension %d being empty",
                     name, ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), d);
            return false;
        }
    }
    return true;
}

/* _adaptive_avg_pool{2,3}d and adaptive_max_pool{2,3}d. */
static bool ct__adaptive_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t *gi = (int64_t *)c->state;
    int dims = c->op->variant >> 2;
    bool max = (c->op->variant & 3) == CT__POOL_ADAPTIVE_MAX, early = !max && dims == 3;
    int first = max || dims == 3 ? 1 : t->ndim - 2;
    char name[32], buf[128];
    snprintf(name, sizeof name, "adaptive_%s_pool%dd", max ? "max" : "avg", dims);
    ct__pool_read_attrs(c, gi);
    if (early && !ct__adaptive_nonempty(c->fn, name, t, first)) {
        return false;
    }
    if (t->ndim != dims + 1 && t->ndim != dims + 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s(): Expected %dD or %dD tensor, but got%s %s", name,
                 dims + 1, dims + 2, max ? ":" : "",
                 ct__shape_str(t->sizes, t->ndim, buf, sizeof buf));
        return false;
    }
    if (!early && !ct__adaptive_nonempty(c->fn, name, t, first)) {
        return false;
    }
    int64_t s[CT_MAX_DIMS];
    memcpy(s, t->sizes, sizeof s);
    for (int a = 0; a < dims; a++) {
        s[t->ndim - dims + a] = gi[CT__PG_OUT + 3 - dims + a];
    }
    for (int d = t->ndim - dims; d < t->ndim; d++) {
        if (s[d] < 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "Trying to create tensor with negative dimension %lld: "
                     "%s", (long long)s[d], ct__shape_str(s, t->ndim, buf, sizeof buf));
            return false;
        }
    }
    return ct__pool_outputs(c, t, gi, max);
}

/* The backward ops: grad_output (the forward's output shape), self -> self's shape. */
static bool ct__pool_bw_meta(ct_op_call *c)
{
    const ct_tensor *go = c->inputs[0], *self = c->inputs[1];
    int64_t *gi = (int64_t *)c->state;
    int kind = c->op->variant & 3, dims = c->op->variant >> 2, nd = self->ndim;
    ct__pool_read_attrs(c, gi);
    bool ok = go->ndim == nd && nd >= dims;
    if (ok && (kind == CT__POOL_MAX || kind == CT__POOL_AVG)) {
        ok = ct__pool_out_sizes(c->fn, self, gi);
    }
    for (int d = 0; ok && d < nd; d++) {
        int a = d - nd + 3; /* the axis of dim d (none below 3 - dims) */
        if (a >= 3 - dims && kind != CT__POOL_MAX && kind != CT__POOL_AVG) {
            gi[CT__PG_OUT + a] = go->sizes[d];
        }
        ok = go->sizes[d] == (a < 3 - dims ? self->sizes[d] : gi[CT__PG_OUT + a]);
    }
    if (!ok) {
        char b1[128], b2[128];
        ct__fail(CT_ERR_SHAPE, c->fn, "grad_output of shape %s does not match the pooling of "
                 "input %s", ct__shape_str(go->sizes, go->ndim, b1, sizeof b1),
                 ct__shape_str(self->sizes, nd, b2, sizeof b2));
        return false;
    }
    c->dtype = go->dtype;
    return ct__op_output(c, self->sizes, nd, go->dtype) != NULL;
}

/* ---- autograd ---------------------------------------------------------------------------- */
static ct_tensor *ct__pool_call(int kind, const char *fn, const ct_tensor *x, const int64_t *gi,
                                ct_tensor **indices);
static ct_tensor *ct__pool_bw_call(int kind, const ct_tensor *g, const ct_tensor *self,
                                   const ct_tensor *indices, const int64_t *gi);

/* Saves self, the indices (max) and the geometry ints. */
static void ct__pool_record(ct_node *n, const ct_op_call *c)
{
    memcpy(n->i, c->state, sizeof(int64_t) * CT__PG_N);
    ct__save(n, c->inputs[0]);
    ct__save(n, c->n_outputs > 1 ? c->outputs[1] : NULL); /* no history */
}

/* The backward ops' own derivative: linear in grad_output (PyTorch's formulas): the forward
   pooling of the gradient's gradient for averages, its values at the indices for maxima. */
static void ct__pool_bw_record(ct_node *n, const ct_op_call *c)
{
    memcpy(n->i, c->state, sizeof(int64_t) * CT__PG_N);
    ct__save(n, c->n_inputs > 2 ? c->inputs[2] : NULL);
}

static void ct__max_bw_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    int64_t dims = n->i[CT__PG_ND];
    if (ct__needs_grad(n, 0) && ix) {
        ct_tensor *v = ct_gather(ct_flatten(gg, -dims, -1), -1, ct_flatten(ix, -dims, -1));
        gi[0] = ct_view_as(v, ix);
    }
}

static void ct__avg_bw_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__pool_call(CT__POOL_AVG, "ct_avg_pool_backward", gg, n->i, NULL);
    }
}

static void ct__adaptive_avg_bw_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__pool_call(CT__POOL_ADAPTIVE_AVG, "ct_adaptive_avg_pool_backward", gg, n->i,
                              NULL);
    }
}

#define CT__POOL_OP(NAME, OP, SCHEMA, API, VARIANT, META, KERNEL, NODE, BW, RECORD)            \
    static const ct_op NAME = {OP, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VARIANT, 0u,   \
                               NULL, META, CT__K_FLOAT(KERNEL), NULL, NODE, CT__BACKWARD(BW),      \
                               0u, RECORD, NULL};
/* The backward ops of dims D (2 or 3, DD the digit as text). */
#define CT__POOL_BW_OPS(D, DD)                                                                 \
    CT__POOL_OP(ct__op_max_pool##D##d_bw, "aten::max_pool" DD "d_with_indices_backward",       \
                "max_pool" DD "d_with_indices_backward(Tensor grad_output, Tensor self, int[" DD \
                "] kernel_size, int[" DD "] stride, int[" DD "] padding, int[" DD "] dilation, " \
                "bool ceil_mode, Tensor indices) -> Tensor", "ct_backward (max_pool" DD "d)",    \
                CT__POOL_VARIANT(CT__POOL_MAX, D), ct__pool_bw_meta, ct__pool_bw_kernel,        \
                "MaxPool" DD "DWithIndicesBackwardBackward0", ct__max_bw_backward,              \
                ct__pool_bw_record)                                                             \
    CT__POOL_OP(ct__op_avg_pool##D##d_bw, "aten::avg_pool" DD "d_backward", "avg_pool" DD      \
                "d_backward(Tensor grad_output, Tensor self, int[" DD "] kernel_size, int[" DD   \
                "] stride, int[" DD "] padding, bool ceil_mode, bool count_include_pad, int? "  \
                "divisor_override) -> Tensor", "ct_backward (avg_pool" DD "d)",                 \
                CT__POOL_VARIANT(CT__POOL_AVG, D), ct__pool_bw_meta, ct__pool_bw_kernel,        \
                "AvgPool" DD "DBackwardBackward0", ct__avg_bw_backward, ct__pool_bw_record)     \
    CT__POOL_OP(ct__op_adaptive_avg_pool##D##d_bw, "aten::_adaptive_avg_pool" DD "d_backward", \
                "_adaptive_avg_pool" DD "d_backward(Tensor grad_output, Tensor self) -> Tensor", \
                "ct_backward (adaptive_avg_pool" DD "d)",                                       \
                CT__POOL_VARIANT(CT__POOL_ADAPTIVE_AVG, D), ct__pool_bw_meta,                   \
                ct__pool_bw_kernel, "AdaptiveAvgPool" DD "DBackwardBackward0",                  \
                ct__adaptive_avg_bw_backward, ct__pool_bw_record)                               \
    CT__POOL_OP(ct__op_adaptive_max_pool##D##d_bw, "aten::adaptive_max_pool" DD "d_backward",  \
                "adaptive_max_pool" DD "d_backward(Tensor grad_output, Tensor self, Tensor "     \
                "indices) -> Tensor", "ct_backward (adaptive_max_pool" DD "d)",                 \
                CT__POOL_VARIANT(CT__POOL_ADAPTIVE_MAX, D), ct__pool_bw_meta,                   \
                ct__pool_bw_kernel, "AdaptiveMaxPool" DD "DBackwardBackward0",                  \
                ct__max_bw_backward, ct__pool_bw_record)
CT__POOL_BW_OPS(2, "2")
CT__POOL_BW_OPS(3, "3")
#undef CT__POOL_BW_OPS

#define CT__POOL_BACKWARD(FN, KIND)                                                             \
    static void FN(ct_node *n, const ct_tensor *g, ct_tensor **gi)                             \
    {                                                                                          \
        gi[0] = ct__pool_bw_call(KIND, g, ct__saved(n, 0), ct__saved(n, 1), n->i);             \
    }
CT__POOL_BACKWARD(ct__max_pool_backward, CT__POOL_MAX)
CT__POOL_BACKWARD(ct__avg_pool_backward, CT__POOL_AVG)
CT__POOL_BACKWARD(ct__adaptive_avg_pool_backward, CT__POOL_ADAPTIVE_AVG)
CT__POOL_BACKWARD(ct__adaptive_max_pool_backward, CT__POOL_ADAPTIVE_MAX)
#undef CT__POOL_BACKWARD

/* The forward ops of dims D; API_*: the other public functions reaching them. */
#define CT__POOL_FWD_OPS(D, DD, API_MAX, API_AVG, API_AAVG)                                    \
    CT__POOL_OP(ct__op_max_pool##D##d, "aten::max_pool" DD "d_with_indices", "max_pool" DD    \
                "d_with_indices(Tensor self, int[" DD "] kernel_size, int[" DD "] stride=[], "  \
                "int[" DD "] padding=0, int[" DD "] dilation=1, bool ceil_mode=False) -> "       \
                "(Tensor, Tensor)", "ct_max_pool" DD "d ct_max_pool" DD "d_with_indices"        \
                API_MAX, CT__POOL_VARIANT(CT__POOL_MAX, D), ct__pool_meta, ct__pool_kernel,     \
                "MaxPool" DD "DWithIndicesBackward0", ct__max_pool_backward, ct__pool_record)   \
    CT__POOL_OP(ct__op_avg_pool##D##d, "aten::avg_pool" DD "d", "avg_pool" DD "d(Tensor self, " \
                "int[" DD "] kernel_size, int[" DD "] stride=[], int[" DD "] padding=0, bool "   \
                "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> "  \
                "Tensor", "ct_avg_pool" DD "d" API_AVG, CT__POOL_VARIANT(CT__POOL_AVG, D),       \
                ct__pool_meta, ct__pool_kernel, "AvgPool" DD "DBackward0",                      \
                ct__avg_pool_backward, ct__pool_record)                                         \
    CT__POOL_OP(ct__op_adaptive_avg_pool##D##d_impl, "aten::_adaptive_avg_pool" DD "d",        \
                "_adaptive_avg_pool" DD "d(Tensor self, SymInt[" DD "] output_size) -> Tensor",  \
                "ct_adaptive_avg_pool" DD "d" API_AAVG,                                         \
                CT__POOL_VARIANT(CT__POOL_ADAPTIVE_AVG, D), ct__adaptive_meta, ct__pool_kernel, \
                "AdaptiveAvgPool" DD "DBackward0", ct__adaptive_avg_pool_backward,              \
                ct__pool_record)                                                                \
    CT__POOL_OP(ct__op_adaptive_max_pool##D##d, "aten::adaptive_max_pool" DD "d",              \
                "adaptive_max_pool" DD "d(Tensor self, int[" DD "] output_size) -> (Tensor, "    \
                "Tensor)", "ct_adaptive_max_pool" DD "d",                                       \
                CT__POOL_VARIANT(CT__POOL_ADAPTIVE_MAX, D), ct__adaptive_meta, ct__pool_kernel, \
                "AdaptiveMaxPool" DD "DBackward0", ct__adaptive_max_pool_backward,              \
                ct__pool_record)
CT__POOL_FWD_OPS(2, "2", " ct_max_pool1d", " ct_avg_pool1d ct_lp_pool2d",
                 " ct_adaptive_avg_pool1d")
CT__POOL_FWD_OPS(3, "3", "", " ct_lp_pool3d", "")
#undef CT__POOL_FWD_OPS
#undef CT__POOL_OP

static const ct_op *const ct__pool_fwd_ops[2][4] = {
    {&ct__op_max_pool2d, &ct__op_avg_pool2d, &ct__op_adaptive_avg_pool2d_impl,
     &ct__op_adaptive_max_pool2d},
    {&ct__op_max_pool3d, &ct__op_avg_pool3d, &ct__op_adaptive_avg_pool3d_impl,
     &ct__op_adaptive_max_pool3d}};
static const ct_op *const ct__pool_bw_ops[2][4] = {
    {&ct__op_max_pool2d_bw, &ct__op_avg_pool2d_bw, &ct__op_adaptive_avg_pool2d_bw,
     &ct__op_adaptive_max_pool2d_bw},
    {&ct__op_max_pool3d_bw, &ct__op_avg_pool3d_bw, &ct__op_adaptive_avg_pool3d_bw,
     &ct__op_adaptive_max_pool3d_bw}};

/* Appends the schema's attributes of a kind from the geometry ints gi. */
static void ct__pool_attrs(ct_op_call *c, int kind, const int64_t *gi, bool backward)
{
    int dims = (int)gi[CT__PG_ND], a0 = 3 - dims;
    if (kind == CT__POOL_MAX || kind == CT__POOL_AVG) {
        ct__call_ints(c, gi + CT__PG_K + a0, dims);
        ct__call_ints(c, gi + CT__PG_S + a0, dims);
        ct__call_ints(c, gi + CT__PG_P + a0, dims);
        if (kind == CT__POOL_MAX) {
            ct__call_ints(c, gi + CT__PG_D + a0, dims);
            ct__call_i(c, gi[CT__PG_CEIL]);
        } else {
            ct__call_i(c, gi[CT__PG_CEIL]);
            ct__call_i(c, gi[CT__PG_CIP]);
            ct__call_i(c, gi[CT__PG_DIV]);
        }
    } else if (!backward) {
        ct__call_ints(c, gi + CT__PG_OUT + a0, dims);
    }
}

/* The forward op of kind on x; *indices (if indices) receives max's indices. */
static ct_tensor *ct__pool_call(int kind, const char *fn, const ct_tensor *x, const int64_t *gi,
                                ct_tensor **indices)
{
    const ct_tensor *in[1] = {x};
    int64_t geom[CT__PG_N];
    ct_op_call c;
    ct__call_init(&c, ct__pool_fwd_ops[gi[CT__PG_ND] - 2][kind], fn, in, 1);
    c.state = geom;
    ct__pool_attrs(&c, kind, gi, false);
    ct_tensor *y = ct__dispatch(&c);
    if (indices) {
        *indices = y ? c.outputs[1] : NULL;
    } else if (y && c.n_outputs > 1) {
        ct_free(c.outputs[1]);
    }
    return y;
}

/* The backward op of kind: the gradient of self from the output's gradient g. */
static ct_tensor *ct__pool_bw_call(int kind, const ct_tensor *g, const ct_tensor *self,
                                   const ct_tensor *indices, const int64_t *gi)
{
    bool max = kind == CT__POOL_MAX || kind == CT__POOL_ADAPTIVE_MAX;
    if (!self || (max && !indices)) {
        return NULL; /* ct__saved recorded the error */
    }
    const ct_tensor *in[3] = {g, self, indices};
    int64_t geom[CT__PG_N];
    ct_op_call c;
    ct__call_init(&c, ct__pool_bw_ops[gi[CT__PG_ND] - 2][kind], "ct_backward", in, max ? 3 : 2);
    c.state = geom;
    ct__pool_attrs(&c, kind, gi, true);
    return ct__dispatch(&c);
}

/* ---- max_unpool: each input element placed at its index in a zero output ------------------ */
/* max_unpool{2,3}d's checks (PyTorch's); the output: input's leading dims, then output_size. */
static bool ct__unpool_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0], *ix = c->inputs[1];
    int dims = c->op->variant >> 2, nd = t->ndim;
    char b1[128], b2[128];
    if (ix->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, c->fn, "elements in indices should be type int64 but got: %s",
                 ct__dtype_title(ix->dtype));
        return false;
    }
    if (nd != dims + 1 && nd != dims + 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Input to max_unpooling%dd should be a %dd or %dd Tensor, "
                 "but got a tensor with %d dimensions.", dims, dims + 1, dims + 2, nd);
        return false;
    }
    if (ix->ndim != nd || memcmp(ix->sizes, t->sizes, sizeof(int64_t) * (size_t)nd)) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Expected shape of indices to be same as that of the input "
                 "tensor (%s) but got indices tensor with shape: %s",
                 ct__shape_str(t->sizes, nd, b1, sizeof b1),
                 ct__shape_str(ix->sizes, ix->ndim, b2, sizeof b2));
        return false;
    }
    for (int d = 1; d < nd; d++) {
        if (t->sizes[d] == 0) {
            ct__fail(CT_ERR_SHAPE, c->fn, "max_unpooling%dd_forward_out_cpu(): Expected input to "
                     "have non-zero size for non-batch dimensions, but input has sizes %s with "
                     "dimension %d being empty", dims, ct__shape_str(t->sizes, nd, b1, sizeof b1),
                     d);
            return false;
        }
    }
    const int64_t *st = dims == 3 ? c->attrs[1].ints : NULL;
    if (st && (st[0] <= 0 || st[1] <= 0 || st[2] <= 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "strides should be greater than zero, but got stride: %s",
                 ct__shape_str(st, 3, b1, sizeof b1));
        return false;
    }
    int64_t s[CT_MAX_DIMS], *gi = (int64_t *)c->state;
    memcpy(s, t->sizes, sizeof s);
    memcpy(s + nd - dims, c->attrs[0].ints, sizeof(int64_t) * (size_t)dims);
    ct__pool_geom_unit(gi, dims);
    memcpy(gi + CT__PG_OUT + 3 - dims, c->attrs[0].ints, sizeof(int64_t) * (size_t)dims);
    c->dtype = t->dtype;
    return ct__op_output(c, s, nd, t->dtype) != NULL;
}

/* Places each input plane at its indices in the zeroed output plane (o elements), in order
   (a repeated index keeps the last), after checking every index (PyTorch's message). */
static ct_status ct__unpool_kernel(ct_op_call *c)
{
    const int64_t *gi = (const int64_t *)c->state;
    int dims = (int)gi[CT__PG_ND];
    ct_tensor *x = ct__pool_contig(c->fn, c->inputs[0]);
    ct_tensor *ix = x ? ct__pool_contig(c->fn, c->inputs[1]) : NULL;
    ct__pool_job j;
    memset(&j, 0, sizeof j);
    int64_t o = 1, bad = -1, total = ix ? ct_numel(ix) : 0;
    for (int a = 0; a < 3; a++) {
        j.in[a] = gi[CT__PG_OUT + a];
        j.out[a] = a < 3 - dims ? 1 : c->inputs[0]->sizes[c->inputs[0]->ndim - 3 + a];
        o *= j.in[a];
    }
    const int64_t *iv = ix ? (const int64_t *)(const void *)ct__data(ix) : NULL;
    for (int64_t i = 0; i < total && bad < 0; i++) {
        bad = iv[i] < 0 || iv[i] >= o ? i : -1;
    }
    if (bad >= 0) {
        char sz[64];
        snprintf(sz, sizeof sz, dims == 3 ? "%lldx%lldx%lld" : "%lldx%lld",
                 (long long)j.in[3 - dims], (long long)j.in[4 - dims], (long long)j.in[2]);
        ct__fail(CT_ERR_INDEX, c->fn, "Found an invalid max index: %lld (output volumes are of "
                 "size %s)", (long long)iv[bad], sz);
    } else if (ix) {
        j.walk = CT__WALK_PLACE;
        j.g = ct__data(x);
        j.gx = ct__data(c->outputs[0]);
        j.idx = (int64_t *)(uintptr_t)iv;
        ct__pool_run(c->outputs[0], &j, c->dtype == CT_FLOAT32);
    }
    ct__release(x);
    ct__release(ix);
    return ix && bad < 0 ? CT_OK : ct_error_code();
}

/* Saves the indices and the dims: the derivative gathers the gradient at them. */
static void ct__unpool_record(ct_node *n, const ct_op_call *c)
{
    memcpy(n->i, c->state, sizeof(int64_t) * CT__PG_N);
    ct__save(n, c->inputs[1]);
}

static const ct_op ct__op_max_unpool2d = {
    "aten::max_unpool2d", "max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> "
    "Tensor", "ct_max_unpool2d ct_max_unpool1d", CT_OP_OTHER, CT_AUTOCAST_NONE,
    CT__POOL_VARIANT(CT__POOL_MAX, 2), 0u, NULL, ct__unpool_meta,
    CT__K_FLOAT(ct__unpool_kernel), NULL, "MaxUnpool2DBackward0", ct__max_bw_backward, 0u,
    ct__unpool_record, NULL};
static const ct_op ct__op_max_unpool3d = {
    "aten::max_unpool3d", "max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, "
    "int[3] stride, int[3] padding) -> Tensor", "ct_max_unpool3d", CT_OP_OTHER,
    CT_AUTOCAST_NONE, CT__POOL_VARIANT(CT__POOL_MAX, 3), 0u, NULL, ct__unpool_meta,
    CT__K_FLOAT(ct__unpool_kernel), NULL, "MaxUnpool3DBackward0", ct__max_bw_backward, 0u,
    ct__unpool_record, NULL};

/* F.max_unpool{1,2,3}d's output size (Python's _unpool_output_size): want (NULL: the default
   (in - 1) * stride + kernel - 2 * padding) within a stride of the default. */
static bool ct__unpool_size(const char *fn, const ct_tensor *x, int dims, const int64_t *k,
                            const int64_t *s, const int64_t *p, const int64_t *want,
                            int64_t *out)
{
    char got[96];
    size_t len = 0;
    for (int d = 0; d < dims && want; d++) {
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%lld%s", d ? " " : "(",
                                (long long)want[d], d + 1 < dims ? "," : dims == 1 ? ",)" : ")");
    }
    for (int d = 0; d < dims; d++) {
        int64_t n = x->ndim >= dims ? x->sizes[x->ndim - dims + d] : 1;
        int64_t def = (n - 1) * s[d] + k[d] - 2 * p[d];
        out[d] = want ? want[d] : def;
        if (want && !(def - s[d] < want[d] && want[d] < def + s[d])) {
            ct__fail(CT_ERR_VALUE, fn, "invalid output_size \"%s\" (dim %d must be between %lld "
                     "and %lld)", got, d, (long long)(def - s[d]), (long long)(def + s[d]));
            return false;
        }
        if (out[d] < 0) {
            ct__fail(CT_ERR_VALUE, fn, "max_unpooling: output_size must contain non-negative "
                     "spatial dimensions, but got output_size[%d]=%lld", d, (long long)out[d]);
            return false;
        }
    }
    return true;
}

/* The max_unpool{2,3}d op (dims) of x at ix to the output size out; 3-D: stride s, padding p. */
static ct_tensor *ct__unpool_call(const char *fn, int dims, const ct_tensor *x,
                                  const ct_tensor *ix, const int64_t *out, const int64_t *s,
                                  const int64_t *p)
{
    const ct_tensor *in[2] = {x, ix};
    int64_t geom[CT__PG_N];
    ct_op_call c;
    ct__call_init(&c, dims == 3 ? &ct__op_max_unpool3d : &ct__op_max_unpool2d, fn, in, 2);
    c.state = geom;
    ct__call_ints(&c, out, dims);
    if (dims == 3) {
        ct__call_ints(&c, s, 3);
        ct__call_ints(&c, p, 3);
    }
    return ct__dispatch(&c);
}

/* F.max_unpool{1,2,3}d (dims) of x at ix: kernel k, stride s (NULL: k), padding p (NULL: 0),
   output size want (NULL: the default); 1-D: the 2-D op on a unit width, as PyTorch. */
static ct_tensor *ct__max_unpool(const char *fn, int dims, const ct_tensor *x,
                                 const ct_tensor *ix, const int64_t *k, const int64_t *s,
                                 const int64_t *p, const int64_t *want)
{
    const int64_t zero[3] = {0, 0, 0};
    int64_t out[3];
    s = s ? s : k;
    p = p ? p : zero;
    if (ct__null(fn, x) || ct__null(fn, ix) || ct__null(fn, k) ||
        !ct__unpool_size(fn, x, dims, k, s, p, want, out)) {
        return NULL;
    }
    if (dims > 1) {
        return ct__unpool_call(fn, dims, x, ix, out, s, p);
    }
    ct_scope_begin();
    const int64_t o2[2] = {out[0], 1};
    ct_tensor *r = ct__unpool_call(fn, 2, ct_unsqueeze(x, -1), ct_unsqueeze(ix, -1), o2, NULL,
                                   NULL);
    r = ct_keep(ct_squeeze_dim(r, -1));
    ct_scope_end();
    return r;
}

ct_tensor *ct_max_unpool1d(const ct_tensor *input, const ct_tensor *indices, int64_t kernel_size,
                           int64_t stride, int64_t padding, int64_t output_size)
{
    return ct__max_unpool("ct_max_unpool1d", 1, input, indices, &kernel_size,
                          stride ? &stride : NULL, &padding, output_size ? &output_size : NULL);
}

ct_tensor *ct_max_unpool2d(const ct_tensor *input, const ct_tensor *indices,
                           const int64_t *kernel_size, const int64_t *stride,
                           const int64_t *padding, const int64_t *output_size)
{
    return ct__max_unpool("ct_max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                          output_size);
}

ct_tensor *ct_max_unpool3d(const ct_tensor *input, const ct_tensor *indices,
                           const int64_t *kernel_size, const int64_t *stride,
                           const int64_t *padding, const int64_t *output_size)
{
    return ct__max_unpool("ct_max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                          output_size);
}

/* ---- the 1-D ops and adaptive_avg_pool2d: composites ------------------------------------ */
/* max_pool1d's checks (PyTorch's check_max_pool1d); attributes as its schema. */
static bool ct__max_pool1d_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const char *fn = c->fn;
    int64_t k = c->attrs[0].ints[0], s = c->attrs[1].ints[0], p = c->attrs[2].ints[0];
    int64_t d = c->attrs[3].ints[0];
    char buf[128];
    if (!((t->ndim == 2 && t->sizes[0] && t->sizes[1]) ||
          (t->ndim == 3 && t->sizes[1] && t->sizes[2]))) {
        ct__fail(CT_ERR_SHAPE, fn, "max_pool1d: Expected 2D or 3D (batch mode) tensor with "
                 "optional 0 dim batch size for input, but got:%s",
                 ct__shape_str(t->sizes, t->ndim, buf, sizeof buf));
        return false;
    }
    const char *what = k <= 0 ? "kernel_size must be greater than zero"
                       : s <= 0 ? "stride must be greater than zero"
                       : p < 0 ? "padding must be non-negative" : NULL;
    if (what) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() %s, but got %lld", what,
                 (long long)(k <= 0 ? k : s <= 0 ? s : p));
        return false;
    }
    if (p > k / 2) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() padding should be at most half of kernel size, "
                 "but got padding=%lld and kernel_size=%lld", (long long)p, (long long)k);
        return false;
    }
    if (d <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() dilation must be greater than zero, but got %lld",
                 (long long)d);
        return false;
    }
    int64_t gi[CT__PG_N] = {0};
    gi[CT__PG_K] = k;
    gi[CT__PG_S] = s;
    gi[CT__PG_P] = p;
    gi[CT__PG_D] = d;
    gi[CT__PG_CEIL] = c->attrs[4].i;
    int64_t ow = 0;
    if (!ct__pool_out_size(fn, t->sizes[t->ndim - 1], gi, 0, &ow)) {
        return false;
    }
    if (ow <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() Invalid computed output size: %lld",
                 (long long)ow);
        return false;
    }
    return true;
}

/* avg_pool1d / adaptive_avg_pool1d: PyTorch's checkDimRange(2, 4). */
static bool ct__pool1d_meta(ct_op_call *c)
{
    if (c->inputs[0]->ndim < 2 || c->inputs[0]->ndim > 3) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Expected 2 to 3 dimensions, but got %d-dimensional tensor "
                 "for argument #1 'self' (while checking arguments for %s)", c->inputs[0]->ndim,
                 (c->op->variant & 3) == CT__POOL_AVG ? "avg_pool1d" : "adaptive_avg_pool1d");
        return false;
    }
    return true;
}

/* adaptive_avg_pool{2,3}d: PyTorch's output-size check. */
static bool ct__adaptive_avg_meta(ct_op_call *c)
{
    const int64_t *o = c->attrs[0].ints;
    int dims = c->op->variant >> 2;
    if (o[0] < 0 || o[1] < 0 || (dims == 3 && o[2] < 0)) {
        char got[64];
        snprintf(got, sizeof got, dims == 3 ? "%lld, %lld,%lld" : "%lld, %lld", (long long)o[0],
                 (long long)o[1], (long long)(dims == 3 ? o[2] : 0));
        ct__fail(CT_ERR_VALUE, c->fn, "adaptive_avg_pool%dd: elements of output_size must be "
                 "greater than or equal to 0 but received {%s}", dims, got);
        return false;
    }
    return true;
}

/* Output all ones: the mean over the spatial dims, as PyTorch; else _adaptive_avg_pool{2,3}d. */
static ct_tensor *ct__adaptive_avg(const char *fn, const ct_tensor *x, const int64_t *out,
                                   int dims)
{
    int64_t gi[CT__PG_N];
    bool ones = true;
    ct__pool_geom_unit(gi, dims);
    for (int a = 0; a < dims; a++) {
        gi[CT__PG_OUT + 3 - dims + a] = out[a];
        ones = ones && out[a] == 1;
    }
    if (!ones) {
        return ct__pool_call(CT__POOL_ADAPTIVE_AVG, fn, x, gi, NULL);
    }
    ct_tensor *m = ct_mean_dim(ct_flatten(x, -dims, -1), -1, true);
    for (int a = 1; a < dims; a++) {
        m = ct_unsqueeze(m, -1);
    }
    return m;
}

static ct_status ct__adaptive_avg_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct__adaptive_avg(c->fn, c->inputs[0], c->attrs[0].ints,
                                                 c->op->variant >> 2));
}

#define CT__POOL_COMPOSITE(NAME, OP, SCHEMA, API, VARIANT, META, FN)                            \
    static const ct_op NAME = {OP, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VARIANT, 0u,   \
                               NULL, META, CT__K_NONE, FN, NULL, NULL, 0u, NULL, NULL};
CT__POOL_COMPOSITE(ct__op_adaptive_avg_pool2d, "aten::adaptive_avg_pool2d",
                   "adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                   "ct_adaptive_avg_pool2d ct_adaptive_avg_pool1d",
                   CT__POOL_VARIANT(CT__POOL_ADAPTIVE_AVG, 2), ct__adaptive_avg_meta,
                   ct__adaptive_avg_composite)
CT__POOL_COMPOSITE(ct__op_adaptive_avg_pool3d, "aten::adaptive_avg_pool3d",
                   "adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
                   "ct_adaptive_avg_pool3d", CT__POOL_VARIANT(CT__POOL_ADAPTIVE_AVG, 3),
                   ct__adaptive_avg_meta, ct__adaptive_avg_composite)

/* adaptive_avg_pool{2,3}d (dims) of x to out (the public functions, and the 1-D one's). */
static ct_tensor *ct__adaptive_avg_call(const char *fn, const ct_tensor *x, const int64_t *out,
                                        int dims)
{
    const ct_tensor *in[1] = {x};
    ct_op_call c;
    ct__call_init(&c, dims == 3 ? &ct__op_adaptive_avg_pool3d : &ct__op_adaptive_avg_pool2d, fn,
                  in, 1);
    ct__call_ints(&c, out, dims);
    return ct__dispatch(&c);
}

/* The 1-D ops on input unsqueezed at -2, as 2-D ops with a unit height. */
static ct_status ct__pool1d_composite(ct_op_call *c)
{
    int kind = c->op->variant & 3;
    ct_scope_begin();
    ct_tensor *x = ct_unsqueeze(c->inputs[0], -2), *y;
    if (kind == CT__POOL_ADAPTIVE_AVG) {
        int64_t out[2] = {1, c->attrs[0].ints[0]};
        y = ct__adaptive_avg_call(c->fn, x, out, 2);
    } else {
        int64_t gi[CT__PG_N];
        ct__pool_geom_unit(gi, 2);
        gi[CT__PG_K + 2] = c->attrs[0].ints[0];
        gi[CT__PG_S + 2] = c->attrs[1].ints[0];
        gi[CT__PG_P + 2] = c->attrs[2].ints[0];
        if (kind == CT__POOL_MAX) {
            gi[CT__PG_D + 2] = c->attrs[3].ints[0];
            gi[CT__PG_CEIL] = c->attrs[4].i;
        } else {
            gi[CT__PG_CEIL] = c->attrs[3].i;
            gi[CT__PG_CIP] = c->attrs[4].i;
        }
        y = ct__pool_call(kind, c->fn, x, gi, NULL);
    }
    return ct__composite_end(c, ct_squeeze_dim(y, -2));
}

CT__POOL_COMPOSITE(ct__op_max_pool1d, "aten::max_pool1d", "max_pool1d(Tensor self, int[1] "
                   "kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool "
                   "ceil_mode=False) -> Tensor", "ct_max_pool1d",
                   CT__POOL_VARIANT(CT__POOL_MAX, 1), ct__max_pool1d_meta, ct__pool1d_composite)
CT__POOL_COMPOSITE(ct__op_avg_pool1d, "aten::avg_pool1d", "avg_pool1d(Tensor self, int[1] "
                   "kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool "
                   "count_include_pad=True) -> Tensor", "ct_avg_pool1d ct_lp_pool1d",
                   CT__POOL_VARIANT(CT__POOL_AVG, 1), ct__pool1d_meta, ct__pool1d_composite)
CT__POOL_COMPOSITE(ct__op_adaptive_avg_pool1d, "aten::adaptive_avg_pool1d",
                   "adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
                   "ct_adaptive_avg_pool1d", CT__POOL_VARIANT(CT__POOL_ADAPTIVE_AVG, 1),
                   ct__pool1d_meta, ct__pool1d_composite)
#undef CT__POOL_COMPOSITE

/* ---- public functions --------------------------------------------------------------------- */
ct_max_pool2d_opts ct_max_pool2d_defaults(void)
{
    ct_max_pool2d_opts o;
    memset(&o, 0, sizeof o);
    o.dilation[0] = o.dilation[1] = 1;
    return o;
}

ct_avg_pool2d_opts ct_avg_pool2d_defaults(void)
{
    ct_avg_pool2d_opts o;
    memset(&o, 0, sizeof o);
    o.count_include_pad = true;
    return o;
}

ct_max_pool3d_opts ct_max_pool3d_defaults(void)
{
    ct_max_pool3d_opts o = {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, false};
    return o;
}

ct_avg_pool3d_opts ct_avg_pool3d_defaults(void)
{
    ct_avg_pool3d_opts o = {{0, 0, 0}, {0, 0, 0}, false, true, 0};
    return o;
}

/* The geometry ints of a dims-D pooling (fn's; false when k is NULL): kernel k, stride s (all
   0: the kernel), padding p, dilation d (NULL: 1), ceil_mode, count_include_pad, divisor. */
static bool ct__pool_geom(const char *fn, int dims, const int64_t *k, const int64_t *s,
                          const int64_t *p, const int64_t *d, bool ceil, bool cip, int64_t div,
                          int64_t *gi)
{
    if (ct__null(fn, k)) {
        return false;
    }
    bool none = true;
    for (int a = 0; a < dims; a++) {
        none = none && s[a] == 0;
    }
    ct__pool_geom_unit(gi, dims);
    for (int a = 0, t = 3 - dims; a < dims; a++, t++) {
        gi[CT__PG_K + t] = k[a];
        gi[CT__PG_S + t] = none ? k[a] : s[a];
        gi[CT__PG_P + t] = p[a];
        gi[CT__PG_D + t] = d ? d[a] : 1;
    }
    gi[CT__PG_CEIL] = ceil;
    gi[CT__PG_CIP] = cip;
    gi[CT__PG_DIV] = div;
    return true;
}
/* ct__pool_geom's arguments from max (average) pooling options o */
#define CT__MAX_FIELDS(o) (o).stride, (o).padding, (o).dilation, (o).ceil_mode, false, 0
#define CT__AVG_FIELDS(o)                                                                      \
    (o).stride, (o).padding, NULL, (o).ceil_mode, (o).count_include_pad, (o).divisor_override

/* A max pooling's output and indices through the out pointers (gi NULL: the error made). */
static ct_status ct__max_pool_out(const char *fn, const ct_tensor *input, const int64_t *gi,
                                  ct_tensor **output, ct_tensor **indices)
{
    ct_tensor *ix = NULL, *y = gi ? ct__pool_call(CT__POOL_MAX, fn, input, gi, &ix) : NULL;
    if (output) {
        *output = y;
    } else {
        ct_free(y);
    }
    if (indices) {
        *indices = ix;
    } else {
        ct_free(ix);
    }
    return y ? CT_OK : ct_error_code();
}

/* ct_max_pool{2,3}d, ct_avg_pool{2,3}d (NAME, D dims, options ct_T_opts read by FIELDS) and
   ct_max_pool{2,3}d_with_indices. */
#define CT__POOL_PUBLIC(KIND, NAME, D, T, FIELDS)                                              \
    ct_tensor *ct_##NAME(const ct_tensor *input, const int64_t *kernel_size,                   \
                         const ct_##T##_opts *opts)                                            \
    {                                                                                          \
        int64_t gi[CT__PG_N];                                                                  \
        ct_##T##_opts o = opts ? *opts : ct_##T##_defaults();                                  \
        return ct__pool_geom("ct_" #NAME, D, kernel_size, FIELDS(o), gi)                       \
                   ? ct__pool_call(KIND, "ct_" #NAME, input, gi, NULL)                         \
                   : NULL;                                                                     \
    }
#define CT__MAX_POOL_WITH_INDICES(D)                                                           \
    ct_status ct_max_pool##D##d_with_indices(const ct_tensor *input, const int64_t *kernel_size, \
                                             const ct_max_pool##D##d_opts *opts,               \
                                             ct_tensor **output, ct_tensor **indices)          \
    {                                                                                          \
        const char *fn = "ct_max_pool" #D "d_with_indices";                                    \
        int64_t gi[CT__PG_N];                                                                  \
        ct_max_pool##D##d_opts o = opts ? *opts : ct_max_pool##D##d_defaults();                \
        bool ok = ct__pool_geom(fn, D, kernel_size, CT__MAX_FIELDS(o), gi);                    \
        return ct__max_pool_out(fn, input, ok ? gi : NULL, output, indices);                   \
    }
CT__POOL_PUBLIC(CT__POOL_MAX, max_pool2d, 2, max_pool2d, CT__MAX_FIELDS)
CT__POOL_PUBLIC(CT__POOL_MAX, max_pool3d, 3, max_pool3d, CT__MAX_FIELDS)
CT__POOL_PUBLIC(CT__POOL_AVG, avg_pool2d, 2, avg_pool2d, CT__AVG_FIELDS)
CT__POOL_PUBLIC(CT__POOL_AVG, avg_pool3d, 3, avg_pool3d, CT__AVG_FIELDS)
CT__MAX_POOL_WITH_INDICES(2)
CT__MAX_POOL_WITH_INDICES(3)
#undef CT__POOL_PUBLIC
#undef CT__MAX_POOL_WITH_INDICES
#undef CT__MAX_FIELDS
#undef CT__AVG_FIELDS

ct_tensor *ct_adaptive_avg_pool2d(const ct_tensor *input, const int64_t *output_size)
{
    const char *fn = "ct_adaptive_avg_pool2d";
    return ct__null(fn, output_size) ? NULL : ct__adaptive_avg_call(fn, input, output_size, 2);
}

ct_tensor *ct_adaptive_avg_pool3d(const ct_tensor *input, const int64_t *output_size)
{
    const char *fn = "ct_adaptive_avg_pool3d";
    return ct__null(fn, output_size) ? NULL : ct__adaptive_avg_call(fn, input, output_size, 3);
}

/* adaptive_max_pool{2,3}d (dims) of input to output_size; *indices as the public functions. */
static ct_tensor *ct__adaptive_max(const char *fn, const ct_tensor *input,
                                   const int64_t *output_size, int dims, ct_tensor **indices)
{
    if (indices) {
        *indices = NULL;
    }
    if (ct__null(fn, output_size)) {
        return NULL;
    }
    int64_t gi[CT__PG_N];
    ct__pool_geom_unit(gi, dims);
    memcpy(gi + CT__PG_OUT + 3 - dims, output_size, sizeof(int64_t) * (size_t)dims);
    return ct__pool_call(CT__POOL_ADAPTIVE_MAX, fn, input, gi, indices);
}

ct_tensor *ct_adaptive_max_pool2d(const ct_tensor *input, const int64_t *output_size,
                                  ct_tensor **indices)
{
    return ct__adaptive_max("ct_adaptive_max_pool2d", input, output_size, 2, indices);
}

ct_tensor *ct_adaptive_max_pool3d(const ct_tensor *input, const int64_t *output_size,
                                  ct_tensor **indices)
{
    return ct__adaptive_max("ct_adaptive_max_pool3d", input, output_size, 3, indices);
}

/* A 1-D op's call: kernel (or output size), then stride, padding, dilation, flags as its
   schema (stride 0: the kernel). */
static ct_tensor *ct__pool1d_call(const ct_op *op, const char *fn, const ct_tensor *input,
                                  const int64_t *v, int n_ints, const int64_t *flags, int n_flags)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    for (int k = 0; k < n_ints; k++) {
        ct__call_ints(&c, v + k, 1);
    }
    for (int k = 0; k < n_flags; k++) {
        ct__call_i(&c, flags[k]);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_max_pool1d(const ct_tensor *input, int64_t kernel_size,
                         const ct_max_pool2d_opts *opts)
{
    ct_max_pool2d_opts o = opts ? *opts : ct_max_pool2d_defaults();
    int64_t v[4] = {kernel_size, o.stride[0] ? o.stride[0] : kernel_size, o.padding[0],
                    o.dilation[0]};
    int64_t flags[1] = {o.ceil_mode};
    return ct__pool1d_call(&ct__op_max_pool1d, "ct_max_pool1d", input, v, 4, flags, 1);
}

ct_tensor *ct_avg_pool1d(const ct_tensor *input, int64_t kernel_size,
                         const ct_avg_pool2d_opts *opts)
{
    ct_avg_pool2d_opts o = opts ? *opts : ct_avg_pool2d_defaults();
    int64_t v[3] = {kernel_size, o.stride[0] ? o.stride[0] : kernel_size, o.padding[0]};
    int64_t flags[2] = {o.ceil_mode, o.count_include_pad};
    return ct__pool1d_call(&ct__op_avg_pool1d, "ct_avg_pool1d", input, v, 3, flags, 2);
}

ct_tensor *ct_adaptive_avg_pool1d(const ct_tensor *input, int64_t output_size)
{
    return ct__pool1d_call(&ct__op_adaptive_avg_pool1d, "ct_adaptive_avg_pool1d", input,
                           &output_size, 1, NULL, 0);
}

/* Average (max: max) pooling of x without padding for the power-average pooling: kernel k,
   stride s (NULL or all 0: the kernel), ceil_mode; the 1-D ops' checks for dims 1. */
static ct_tensor *ct__lp_window(const char *fn, int dims, const ct_tensor *x, const int64_t *k,
                                const int64_t *s, bool ceil, bool max)
{
    const int64_t zero[3] = {0, 0, 0}, *st = s ? s : zero;
    if (dims == 1) {
        int64_t v[4] = {k[0], st[0] ? st[0] : k[0], 0, 1}, flags[2] = {ceil, 1};
        return ct__pool1d_call(max ? &ct__op_max_pool1d : &ct__op_avg_pool1d, fn, x, v,
                               max ? 4 : 3, flags, max ? 1 : 2);
    }
    int64_t gi[CT__PG_N];
    ct__pool_geom(fn, dims, k, st, zero, NULL, ceil, true, 0, gi);
    return ct__pool_call(max ? CT__POOL_MAX : CT__POOL_AVG, fn, x, gi, NULL);
}

/* F.lp_pool{1,2,3}d's composite: (sign(a) * relu(|a|) * kernel elements)^(1/p) for a the
   average of x^p; p = +-inf: the (negated) max pooling of (-)|x|. */
static ct_tensor *ct__lp_pool(const char *fn, int dims, const ct_tensor *x, double p,
                              const int64_t *k, const int64_t *s, bool ceil)
{
    if (ct__null(fn, k)) {
        return NULL;
    }
    if (p == 0) {
        ct__fail(CT_ERR_VALUE, fn, "norm_type must be a non-zero value, but got %g", p);
        return NULL;
    }
    int64_t n = 1;
    for (int a = 0; a < dims; a++) {
        n *= k[a];
    }
    ct_scope_begin();
    ct_tensor *r;
    if (isinf(p)) {
        ct_tensor *a = p > 0 ? ct_abs(x) : ct_neg(ct_abs(x));
        r = ct__lp_window(fn, dims, a, k, s, ceil, true);
        r = p > 0 ? r : ct_neg(r);
    } else {
        ct_tensor *a = ct__lp_window(fn, dims, ct_pow_scalar(x, p), k, s, ceil, false);
        r = ct_pow_scalar(ct_mul_scalar(ct_mul(ct_sign(a), ct_relu(ct_abs(a))), (double)n),
                          1.0 / p);
    }
    ct_keep(r);
    ct_scope_end();
    return r;
}

ct_tensor *ct_lp_pool1d(const ct_tensor *input, double norm_type, int64_t kernel_size,
                        int64_t stride, bool ceil_mode)
{
    return ct__lp_pool("ct_lp_pool1d", 1, input, norm_type, &kernel_size, &stride, ceil_mode);
}

ct_tensor *ct_lp_pool2d(const ct_tensor *input, double norm_type, const int64_t *kernel_size,
                        const int64_t *stride, bool ceil_mode)
{
    return ct__lp_pool("ct_lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode);
}

ct_tensor *ct_lp_pool3d(const ct_tensor *input, double norm_type, const int64_t *kernel_size,
                        const int64_t *stride, bool ceil_mode)
{
    return ct__lp_pool("ct_lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode);
}

/* ---- modules ------------------------------------------------------------------------------ */
typedef struct ct__pool_module {
    int64_t size[2]; /* kernel_size, or the adaptive output size */
    ct_max_pool2d_opts max;
    ct_avg_pool2d_opts avg;
} ct__pool_module;

static ct_tensor *ct__max_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_max_pool2d(x, p->size, &p->max);
}

static ct_tensor *ct__avg_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_avg_pool2d(x, p->size, &p->avg);
}

static ct_tensor *ct__adaptive_avg_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    return ct_adaptive_avg_pool2d(x, ((const ct__pool_module *)ct_module_user(m))->size);
}

static ct_tensor *ct__max_pool1d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_max_pool1d(x, p->size[0], &p->max);
}

static ct_tensor *ct__avg_pool1d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_avg_pool1d(x, p->size[0], &p->avg);
}

static ct_tensor *ct__adaptive_max_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    return ct_adaptive_max_pool2d(x, ((const ct__pool_module *)ct_module_user(m))->size, NULL);
}

/* A pooling module named name: sizes (n of them; NULL: CT_ERR_NULL_ARG) and options. */
static ct_module *ct__pool_module_new(const char *name, ct_module_forward_fn forward,
                                      const int64_t *size, int n, const ct_max_pool2d_opts *mo,
                                      const ct_avg_pool2d_opts *ao)
{
    if (ct__null(name, size)) {
        return NULL;
    }
    ct__pool_module *p = (ct__pool_module *)ct__calloc(sizeof *p);
    if (!p) {
        ct__fail(CT_ERR_OOM, name, "out of memory");
        return NULL;
    }
    p->size[0] = size[0];
    p->size[1] = size[n - 1];
    p->max = mo ? *mo : ct_max_pool2d_defaults();
    p->avg = ao ? *ao : ct_avg_pool2d_defaults();
    ct_module *m = ct_module_new(name, forward, p, ct__free);
    if (!m) {
        ct__free(p);
    }
    return m;
}

ct_module *ct_max_pool2d_new(const int64_t *kernel_size, const ct_max_pool2d_opts *opts)
{
    return ct__pool_module_new("MaxPool2d", ct__max_pool2d_forward, kernel_size, 2, opts, NULL);
}

ct_module *ct_avg_pool2d_new(const int64_t *kernel_size, const ct_avg_pool2d_opts *opts)
{
    return ct__pool_module_new("AvgPool2d", ct__avg_pool2d_forward, kernel_size, 2, NULL, opts);
}

ct_module *ct_adaptive_avg_pool2d_new(const int64_t *output_size)
{
    return ct__pool_module_new("AdaptiveAvgPool2d", ct__adaptive_avg_pool2d_forward,
                               output_size, 2, NULL, NULL);
}

ct_module *ct_max_pool1d_new(int64_t kernel_size, const ct_max_pool2d_opts *opts)
{
    return ct__pool_module_new("MaxPool1d", ct__max_pool1d_forward, &kernel_size, 1, opts, NULL);
}

ct_module *ct_avg_pool1d_new(int64_t kernel_size, const ct_avg_pool2d_opts *opts)
{
    return ct__pool_module_new("AvgPool1d", ct__avg_pool1d_forward, &kernel_size, 1, NULL, opts);
}

ct_module *ct_adaptive_max_pool2d_new(const int64_t *output_size)
{
    return ct__pool_module_new("AdaptiveMaxPool2d", ct__adaptive_max_pool2d_forward,
                               output_size, 2, NULL, NULL);
}
CT__GLUE_END
