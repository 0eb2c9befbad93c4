/* ops/gemm_lowp.c - bfloat16 and float16 GEMM: float32 accumulation, the result rounded once
 * to the narrow dtype (round to nearest even) or kept float32, as PyTorch's CPU mm/addmm for
 * those dtypes.
 *
 * C = alpha * (A @ B) + beta * C, each operand given by a pointer and its row and column
 * strides in elements (as ops/gemm.c), A and B of one narrow dtype, C narrow or float32.
 *
 * Dimension legend (the BLIS/GotoBLAS scheme of ops/gemm.c):
 *   M, N, K     C is (M, N), A is (M, K), B is (K, N)
 *   MC, KC, NC  cache blocks: an A block (MC, KC), a B panel (KC, NC)
 *   MR, NR      the register (or tile) block of the micro-kernel
 *   kp          kc rounded up to the kernel's K unit (zero padding)
 *
 * Paths (bfloat16), chosen per call from the CPU features found at run time (core/cpu.h),
 * so a binary built for -march=x86-64-v3 still takes them where the CPU and OS allow:
 *   AMX           MR x NR = 32 x 32: four 16 x 16 float32 accumulator tiles, tdpbf16ps on
 *                 A tiles (16 rows of 32 bf16) and B tiles (16 pairs of rows, VNNI layout);
 *                 K unit 32. Taken when the OS grants the tile data and M >= 16. Whole tiles
 *                 of C = A @ B (+ C) with contiguous rows load and store C in the tiles
 *                 themselves; other tiles go through a local tile and the alpha/beta update.
 *   AVX512-BF16   MR x NR = 8 x 32: 16 zmm accumulators, vdpbf16ps of a broadcast A pair
 *                 with 16 B pairs; K unit 2. Not on Intel, whose vdpbf16ps runs at a quarter
 *                 of vfmadd231ps's rate (half per product): the portable path is faster.
 *   portable      A and B converted to float32 (F16C / AVX-512 conversions where present)
 *                 and the float32 GEMM (ops/gemm.c). float16 always takes it.
 * The kernels carry __attribute__((target(...))) (CT__CPU_TARGET), so they compile whatever
 * -march says; off x86-64 (or under CTORCH_NO_SIMD) only the portable path exists.
 *
 * Packed layouts (zero-padded to whole tiles and to kp):
 *   B panel, both paths: per NR-column micro-panel, kp / 2 rows of NR pairs:
 *                 b[(q * NR + j) * 2 + t] = B[2q + t, j] (the VNNI layout AMX reads)
 *   A, AVX512-BF16: per MR-row micro-panel, kp / 2 rows of MR pairs: a[(q * MR + i) * 2 + t]
 *   A, AMX:       per MR-row micro-panel, kp / 32 blocks of MR rows of 32 values:
 *                 a[(kb * MR + i) * 32 + u] = A[i, 32 kb + u]
 *
 * Threads: C is split into blocks of whole micro-tiles along its longer side (in MR or NR
 * units), one task each; every element of C sums its products over the same KC blocks (KC
 * depends on K only) in the same order whatever the thread count, so results are bit-exact
 * across thread counts. Between paths they differ in the last bits (summation order;
 * vdpbf16ps and tdpbf16ps flush denormals), as PyTorch's bfloat16 matmul differs between
 * CPUs with AMX, AVX512-BF16 or neither.
 */
#include "../core/internal.h"
#include "../core/cpu.h"

#include <math.h>
#include <string.h>

#if defined(CT__CPU_X86)
#include <immintrin.h>
#endif

/* Cache blocks in elements (measured on a Sapphire Rapids class Xeon, 2 MB L2 per core): an
   A block (96, 1024) of 192 KB and a B panel (1024, 512) of 1 MB stay in L2. MC and NC are
   multiples of both kernels' MR and NR, KC of the K units. */
#define CT__LOWP_NR 32
#define CT__LOWP_MC 96
#define CT__LOWP_KC 1024
#define CT__LOWP_NC 512
/* Products with fewer multiply-adds than this (M * N * K) run on one thread. */
#define CT__LOWP_PAR_MIN_MACS ((int64_t)96 * 96 * 96)
#define CT__LOWP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CT__LOWP_CEIL(a, b) (((a) + (b)-1) / (b))
#define CT__LOWP_ROUND_UP(a, b) (CT__LOWP_CEIL(a, b) * (b))

/* The kernel paths. */
enum { CT__LOWP_PORTABLE, CT__LOWP_AVX512, CT__LOWP_AMX };

#if defined(CT__CPU_X86)

/* C (mr, nr) float32 at (rsc, csc) = alpha * t + beta * C, t (.., NR) row-major; beta == 0
   does not read C. */
CT__VECTORIZE_BEGIN
static void ct__lowp_update(int64_t mr, int64_t nr, float alpha, const float *t, float beta,
                            float *c, int64_t rsc, int64_t csc)
{
    for (int64_t i = 0; i < mr; i++) {
        float *ci = c + i * rsc;
        const float *ti = t + i * CT__LOWP_NR;
        if (beta == 0.0f && csc == 1) {
            for (int64_t j = 0; j < nr; j++) {
                ci[j] = alpha * ti[j];
            }
        } else if (csc == 1) {
            for (int64_t j = 0; j < nr; j++) {
                ci[j] = fmaf(beta, ci[j], alpha * ti[j]);
            }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                float x = alpha * ti[j];
                ci[j * csc] = beta == 0.0f ? x : fmaf(beta, ci[j * csc], x);
            }
        }
    }
}
CT__VECTORIZE_END

/* ---------------------------------------------------------------------------------------
 * Micro-kernels: t (MR, NR) row-major = a @ b over kp values of K (packed as above).
 * ------------------------------------------------------------------------------------- */
#define CT__LOWP_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define CT__LOWP_DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
#define CT__LOWP_DP(i)                                                                     \
    {                                                                                      \
        int32_t pair;                                                                      \
        memcpy(&pair, a + 2 * (i), sizeof pair);                                           \
        __m512bh ai = (__m512bh)_mm512_set1_epi32(pair);                                   \
        c##i##0 = _mm512_dpbf16_ps(c##i##0, ai, b0);                                       \
        c##i##1 = _mm512_dpbf16_ps(c##i##1, ai, b1);                                       \
    }
#define CT__LOWP_STORE(i)                                                                  \
    _mm512_storeu_ps(t + (i)*32, c##i##0);                                                 \
    _mm512_storeu_ps(t + (i)*32 + 16, c##i##1);

/* AVX512-BF16, MR = 8, NR = 32: a (kp / 2, 8, 2), b (kp / 2, 32, 2), t (8, 32). */
CT__CPU_TARGET("avx512f,avx512bf16")
static void ct__lowp_ukr_avx512(int64_t kp, const uint16_t *a, const uint16_t *b, float *t)
{
    CT__LOWP_ROWS8(CT__LOWP_DECL)
    for (int64_t q = 0; q < kp / 2; q++) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
        __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 32);
        CT__LOWP_ROWS8(CT__LOWP_DP)
        a += 16;
        b += 64;
    }
    CT__LOWP_ROWS8(CT__LOWP_STORE)
}

#undef CT__LOWP_ROWS8
#undef CT__LOWP_DECL
#undef CT__LOWP_DP
#undef CT__LOWP_STORE

/* The AMX tile configuration: palette 1, tiles 0-7 of 16 rows of 64 bytes (0-3 the float32
   accumulators, 4-5 A, 6-7 B). */
typedef struct ct__lowp_tilecfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} ct__lowp_tilecfg;

/* Loads the tile configuration in this thread (begin) or releases the tiles (end). The
   configuration is constant data: gcc 12's _tile_loadconfig tells the compiler it reads 8
   bytes only, so stores into a local one could be dropped. */
CT__CPU_TARGET("amx-tile")
static void ct__lowp_amx_config(bool begin)
{
    static const ct__lowp_tilecfg cfg = {1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64},
                                         {16, 16, 16, 16, 16, 16, 16, 16}};
    if (begin) {
        _tile_loadconfig(&cfg);
    } else {
        _tile_release();
    }
}

/* AMX, MR = 32, NR = 32: a (kp / 32, 32, 32), b (kp / 2, 32, 2); c (32, 32) float32 at rows
   ldc bytes apart = a @ b, plus c itself when accumulate. */
CT__CPU_TARGET("amx-tile,amx-bf16")
static void ct__lowp_ukr_amx(int64_t kp, const uint16_t *a, const uint16_t *b, float *c,
                             int64_t ldc, bool accumulate)
{
    float *c1 = c + 16, *c2 = (float *)((char *)c + 16 * ldc), *c3 = c2 + 16;
    if (accumulate) {
        _tile_loadd(0, c, ldc);
        _tile_loadd(1, c1, ldc);
        _tile_loadd(2, c2, ldc);
        _tile_loadd(3, c3, ldc);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (int64_t kb = 0; kb < kp / 32; kb++) {
        const uint16_t *ak = a + kb * 32 * 32, *bk = b + kb * 16 * 64;
        _tile_loadd(4, ak, 64);           /* rows 0-15 of A, 32 values of K */
        _tile_loadd(5, ak + 16 * 32, 64); /* rows 16-31 */
        _tile_loadd(6, bk, 128);          /* 16 pairs of rows of B, columns 0-15 */
        _tile_loadd(7, bk + 32, 128);     /* columns 16-31 */
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, c, ldc);
    _tile_stored(1, c1, ldc);
    _tile_stored(2, c2, ldc);
    _tile_stored(3, c3, ldc);
}

/* ---------------------------------------------------------------------------------------
 * Packing (bfloat16 bits, copied as they are).
 * ------------------------------------------------------------------------------------- */

/* The full micro-panels of B (kc, 32 * panels) with contiguous rows rsb apart: rows 2q and
   2q + 1 interleaved into the 32 pairs of row q of each panel (an odd last row paired with
   zeros), panels kp * 32 apart. Row pairs outermost, so B is read row by row (with rows a
   power of two apart, reading down a panel's columns missed the cache and TLB each row). */
CT__CPU_TARGET("avx512f,avx512bw")
static void ct__lowp_pack_b_rows(int64_t kc, int64_t kp, int64_t panels, const uint16_t *b,
                                 int64_t rsb, uint16_t *bp)
{
    uint16_t idx[64]; /* lane 2j + t takes column j (j < 16, then 16 + j) of row 2q + t */
    for (int l = 0; l < 32; l++) {
        idx[l] = (uint16_t)((l % 2) * 32 + l / 2);
        idx[32 + l] = (uint16_t)((l % 2) * 32 + 16 + l / 2);
    }
    __m512i lo = _mm512_loadu_si512(idx), hi = _mm512_loadu_si512(idx + 32);
    for (int64_t q = 0; 2 * q < kc; q++) {
        const uint16_t *b0 = b + 2 * q * rsb, *b1 = b0 + rsb;
        for (int64_t p = 0; p < panels; p++) {
            __m512i r0 = _mm512_loadu_si512(b0 + 32 * p);
            __m512i r1 = 2 * q + 1 < kc ? _mm512_loadu_si512(b1 + 32 * p)
                                        : _mm512_setzero_si512();
            uint16_t *d = bp + p * 32 * kp + q * 64;
            _mm512_storeu_si512(d, _mm512_permutex2var_epi16(r0, lo, r1));
            _mm512_storeu_si512(d + 32, _mm512_permutex2var_epi16(r0, hi, r1));
        }
    }
}

/* Packs B (kc, nc) at (rsb, csb) into NR-column micro-panels of kp / 2 rows of NR pairs. */
static void ct__lowp_pack_b(int64_t kc, int64_t kp, int64_t nc, const uint16_t *B, int64_t rsb,
                            int64_t csb, uint16_t *bp)
{
    const int64_t NR = CT__LOWP_NR;
    int64_t jr = 0;
    if (csb == 1 && nc >= NR) {
        /* rows of B contiguous: the full panels at once */
        ct__lowp_pack_b_rows(kc, kp, nc / NR, B, rsb, bp);
        if (kc < kp) { /* the pairs past kc */
            for (jr = 0; jr + NR <= nc; jr += NR) {
                memset(bp + jr * kp + (kc + 1) / 2 * 2 * NR, 0,
                       sizeof(uint16_t) * (size_t)((kp - (kc + 1) / 2 * 2) * NR));
            }
        }
        jr = nc / NR * NR;
    }
    for (bp += jr * kp; jr < nc; jr += NR, bp += NR * kp) {
        int64_t nr = CT__LOWP_MIN(NR, nc - jr);
        const uint16_t *b = B + jr * csb;
        if (nr < NR || kc < kp) {
            memset(bp, 0, sizeof(uint16_t) * (size_t)(NR * kp));
        }
        int64_t q = 0;
        if (rsb == 1) {
            /* columns of B contiguous (B transposed): each pair is one 32-bit copy */
            for (; 2 * q + 1 < kc; q++) {
                for (int64_t j = 0; j < nr; j++) {
                    memcpy(bp + (q * NR + j) * 2, b + j * csb + 2 * q, 2 * sizeof(uint16_t));
                }
            }
        }
        /* any strides: row 2q + t of B, nr values */
        for (int64_t p = 2 * q; p < kc; p++) {
            uint16_t *d = bp + (p / 2 * NR) * 2 + p % 2;
            for (int64_t j = 0; j < nr; j++) {
                d[2 * j] = b[p * rsb + j * csb];
            }
        }
    }
}

/* Packs A (mc, kc) at (rsa, csa) into MR-row micro-panels: the layout of the AMX kernel
   (amx) or of the AVX512-BF16 kernel (MR pairs per row of the panel). */
static void ct__lowp_pack_a(int64_t mc, int64_t kc, int64_t kp, int64_t MR, bool amx,
                            const uint16_t *A, int64_t rsa, int64_t csa, uint16_t *ap)
{
    const int64_t unit = amx ? 32 : 2; /* values of one row of A together in the panel */
    for (int64_t ir = 0; ir < mc; ir += MR, ap += MR * kp) {
        int64_t mr = CT__LOWP_MIN(MR, mc - ir);
        const uint16_t *a = A + ir * rsa;
        if (mr < MR || kc < kp) {
            memset(ap, 0, sizeof(uint16_t) * (size_t)(MR * kp));
        }
        if (amx && csa == 1) {
            /* rows of A contiguous: 32 values of row i per K block (a constant size, one
               vector move) */
            for (int64_t i = 0; i < mr; i++) {
                const uint16_t *ai = a + i * rsa;
                int64_t p = 0;
                for (; p + 32 <= kc; p += 32) {
                    memcpy(ap + (p / 32 * MR + i) * 32, ai + p, 32 * sizeof(uint16_t));
                }
                if (p < kc) {
                    memcpy(ap + (p / 32 * MR + i) * 32, ai + p, 2 * (size_t)(kc - p));
                }
            }
            continue;
        }
        /* any strides, column by column of A (contiguous when A is transposed, as g^T in a
           weight gradient): the values of column p land unit apart */
        for (int64_t kb = 0; kb < kc; kb += unit) {
            uint16_t *d = ap + kb * MR;
            for (int64_t u = 0; u < CT__LOWP_MIN(unit, kc - kb); u++) {
                const uint16_t *col = a + (kb + u) * csa;
                for (int64_t i = 0; i < mr; i++) {
                    d[i * unit + u] = col[i * rsa];
                }
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * The blocked loop nest and the threads (bfloat16 with a float32 C).
 * ------------------------------------------------------------------------------------- */

/* A product: C (M, N) float32 = alpha * A @ B + beta * C on `path`, split into ntasks blocks
   of C along M (split_m) or N; buffers of per_thread elements per slot, B's at b_off. */
typedef struct ct__lowp_job {
    int64_t M, N, K, rsa, csa, rsb, csb, rsc, csc;
    float alpha, beta;
    const uint16_t *A, *B;
    float *C;
    uint16_t *buf;
    size_t per_thread, b_off;
    int path, ntasks;
    bool split_m;
} ct__lowp_job;

/* Splits n into ceil(n / cap) nearly equal blocks rounded up to a multiple of unit. */
static int64_t ct__lowp_block(int64_t n, int64_t cap, int64_t unit)
{
    int64_t nb = CT__LOWP_CEIL(n, cap);
    return CT__LOWP_ROUND_UP(CT__LOWP_CEIL(n, nb), unit);
}

/* One block of C: rows [m0, m0 + M), columns [n0, n0 + N) of the job's C. */
static void ct__lowp_blocked(const ct__lowp_job *j, int64_t m0, int64_t M, int64_t n0, int64_t N,
                             uint16_t *ap, uint16_t *bp)
{
    bool amx = j->path == CT__LOWP_AMX;
    const int64_t MR = amx ? 32 : 8, NR = CT__LOWP_NR, unit = amx ? 32 : 2;
    int64_t MC = ct__lowp_block(M, CT__LOWP_MC, MR), NC = ct__lowp_block(N, CT__LOWP_NC, NR);
    int64_t KC = ct__lowp_block(j->K, CT__LOWP_KC, 32);
    float t[32 * CT__LOWP_NR];
    /* C = A @ B + beta * C with C's rows contiguous: AMX tiles load and store C itself */
    bool direct = j->alpha == 1.0f && j->csc == 1;
    for (int64_t jc = 0; jc < N; jc += NC) {
        int64_t nc = CT__LOWP_MIN(NC, N - jc);
        /* pc: KC rows of B; the first block applies beta */
        for (int64_t pc = 0; pc < j->K; pc += KC) {
            int64_t kc = CT__LOWP_MIN(KC, j->K - pc), kp = CT__LOWP_ROUND_UP(kc, unit);
            float beta = pc == 0 ? j->beta : 1.0f;
            ct__lowp_pack_b(kc, kp, nc, j->B + pc * j->rsb + (n0 + jc) * j->csb, j->rsb, j->csb,
                            bp);
            for (int64_t ic = 0; ic < M; ic += MC) {
                int64_t mc = CT__LOWP_MIN(MC, M - ic);
                ct__lowp_pack_a(mc, kc, kp, MR, amx, j->A + (m0 + ic) * j->rsa + pc * j->csa,
                                j->rsa, j->csa, ap);
                /* jr, ir: (MR, NR) tiles of C (mc, nc) */
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        float *c = j->C + (m0 + ic + ir) * j->rsc + (n0 + jc + jr) * j->csc;
                        int64_t mr = CT__LOWP_MIN(MR, mc - ir), nr = CT__LOWP_MIN(NR, nc - jr);
                        bool whole = amx && direct && mr == MR && nr == NR;
                        if (whole && (beta == 0.0f || beta == 1.0f)) {
                            /* a whole tile accumulating straight into C */
                            ct__lowp_ukr_amx(kp, ap + ir * kp, bp + jr * kp, c, 4 * j->rsc,
                                             beta == 1.0f);
                            continue;
                        }
                        if (amx) {
                            ct__lowp_ukr_amx(kp, ap + ir * kp, bp + jr * kp, t, 4 * NR, false);
                        } else {
                            ct__lowp_ukr_avx512(kp, ap + ir * kp, bp + jr * kp, t);
                        }
                        ct__lowp_update(mr, nr, j->alpha, t, beta, c, j->rsc, j->csc);
                    }
                }
            }
        }
    }
}

/* Per call, not per element: the split, the tasks, the path (see CT__GLUE_BEGIN). */
CT__GLUE_BEGIN
/* Start of part t of n split into nt parts in whole units. */
static int64_t ct__lowp_split(int64_t n, int64_t unit, int64_t t, int64_t nt)
{
    int64_t at = CT__LOWP_CEIL(n, unit) * t / nt * unit;
    return CT__LOWP_MIN(at, n);
}

static void ct__lowp_task(int64_t task, int slot, void *ctx)
{
    const ct__lowp_job *j = (const ct__lowp_job *)ctx;
    int64_t unit = j->split_m ? (j->path == CT__LOWP_AMX ? 32 : 8) : CT__LOWP_NR;
    int64_t n = j->split_m ? j->M : j->N;
    int64_t s0 = ct__lowp_split(n, unit, task, j->ntasks);
    int64_t s1 = ct__lowp_split(n, unit, task + 1, j->ntasks);
    uint16_t *ap = j->buf + j->per_thread * (size_t)slot;
    if (s1 <= s0) {
        return;
    }
    if (j->path == CT__LOWP_AMX) {
        ct__lowp_amx_config(true);
    }
    if (j->split_m) {
        ct__lowp_blocked(j, s0, s1 - s0, 0, j->N, ap, ap + j->b_off);
    } else {
        ct__lowp_blocked(j, 0, j->M, s0, s1 - s0, ap, ap + j->b_off);
    }
    if (j->path == CT__LOWP_AMX) {
        ct__lowp_amx_config(false);
    }
}

/* C (M, N) float32 = alpha * A @ B + beta * C, A and B bfloat16 bits, on an x86 path.
   false: out of memory (nothing recorded). */
static bool ct__lowp_run(ct__lowp_job *j)
{
    bool amx = j->path == CT__LOWP_AMX;
    const int64_t MR = amx ? 32 : 8, NR = CT__LOWP_NR;
    int nt = j->M * j->N * j->K >= CT__LOWP_PAR_MIN_MACS ? ct__parallel_threads() : 1;
    int64_t kp = CT__LOWP_ROUND_UP(CT__LOWP_MIN(j->K, (int64_t)CT__LOWP_KC), 32);
    size_t a_len = (size_t)(CT__LOWP_ROUND_UP(CT__LOWP_MIN(j->M, (int64_t)CT__LOWP_MC), MR) * kp);
    size_t b_len = (size_t)(CT__LOWP_ROUND_UP(CT__LOWP_MIN(j->N, (int64_t)CT__LOWP_NC), NR) * kp);
    j->b_off = CT__LOWP_ROUND_UP(a_len, (size_t)32);
    j->per_thread = j->b_off + CT__LOWP_ROUND_UP(b_len, (size_t)32);
    j->buf = (uint16_t *)ct__malloc(sizeof(uint16_t) * j->per_thread * (size_t)nt);
    if (!j->buf) {
        return false;
    }
    /* one block per thread along the side with more micro-tiles */
    j->split_m = CT__LOWP_CEIL(j->M, MR) >= CT__LOWP_CEIL(j->N, NR);
    j->ntasks = nt;
    ct__parallel_tasks(nt, nt, ct__lowp_task, j);
    ct__free(j->buf);
    return true;
}

/* C (M, N) float32 at (rsc, csc) = alpha * A @ B + beta * C, A and B bfloat16 bits, on
   path; false: out of memory (nothing recorded). */
static bool ct__lowp_fast(int path, int64_t M, int64_t N, int64_t K, float alpha,
                          const uint16_t *A, int64_t rsa, int64_t csa, const uint16_t *B,
                          int64_t rsb, int64_t csb, float beta, float *C, int64_t rsc,
                          int64_t csc)
{
    ct__lowp_job j;
    memset(&j, 0, sizeof j);
    j.M = M;
    j.N = N;
    j.K = K;
    j.rsa = rsa;
    j.csa = csa;
    j.rsb = rsb;
    j.csb = csb;
    j.rsc = rsc;
    j.csc = csc;
    j.alpha = alpha;
    j.beta = beta;
    j.A = A;
    j.B = B;
    j.C = C;
    j.path = path;
    return ct__lowp_run(&j);
}

/* The path for a bfloat16 product of M rows under the CPU features (and the test hook's
   mask): AMX from 16 rows up, else AVX512-BF16 where vdpbf16ps is fast, else portable. */
static int ct__lowp_path(int64_t M)
{
    unsigned f = ct__cpu_features();
    if ((f & CT__CPU_AMX_BF16) && M >= 16) {
        return CT__LOWP_AMX;
    }
    bool dp = (f & CT__CPU_AVX512_BF16) && !(f & CT__CPU_DPBF16_SLOW);
    return dp ? CT__LOWP_AVX512 : CT__LOWP_PORTABLE;
}

CT__GLUE_END

#endif /* CT__CPU_X86 */

CT__GLUE_BEGIN
/* ---------------------------------------------------------------------------------------
 * The entry: path choice, the portable path, a narrow C through a float32 copy.
 * ------------------------------------------------------------------------------------- */

/* dst (rows, cols) float32 with rows ld apart = the narrow src at (rs, cs). */
static void ct__lowp_widen(ct_dtype d, int64_t rows, int64_t cols, const uint16_t *src,
                           int64_t rs, int64_t cs, float *dst, int64_t ld)
{
    for (int64_t i = 0; i < rows; i++) {
        ct__half_to_float_n(d, (const char *)(src + i * rs), 2 * cs, dst + i * ld, cols);
    }
}

/* The portable path: C (M, N) float32 = alpha * A @ B + beta * C through float32 copies of
   A and B in w (M * K + K * N floats). */
static void ct__lowp_portable(ct_dtype d, int64_t M, int64_t N, int64_t K, float alpha,
                              const uint16_t *A, int64_t rsa, int64_t csa, const uint16_t *B,
                              int64_t rsb, int64_t csb, float beta, float *C, int64_t rsc,
                              int64_t csc, float *w)
{
    float *fb = K > 0 ? w + M * K : w;
    if (K > 0) {
        ct__lowp_widen(d, M, K, A, rsa, csa, w, K);
        ct__lowp_widen(d, K, N, B, rsb, csb, fb, N);
    }
    ct__gemm_f32(M, N, K, alpha, w, K, 1, fb, N, 1, beta, C, rsc, csc);
}

const char *ct__gemm_lowp_kernel(ct_dtype d, int64_t M)
{
    static const char *const names[3] = {"portable", "AVX512-BF16", "AMX"};
    int path = CT__LOWP_PORTABLE;
#if defined(CT__CPU_X86)
    path = d == CT_BFLOAT16 ? ct__lowp_path(M) : path;
#else
    (void)d;
    (void)M;
#endif
    return names[path];
}

bool ct__gemm_lowp(const char *op, ct_dtype d, int64_t M, int64_t N, int64_t K, float alpha,
                   const void *A, int64_t rsa, int64_t csa, const void *B, int64_t rsb,
                   int64_t csb, float beta, void *C, ct_dtype dc, int64_t rsc, int64_t csc)
{
    if (M <= 0 || N <= 0) {
        return true;
    }
    const uint16_t *a = (const uint16_t *)A, *b = (const uint16_t *)B;
    int path = CT__LOWP_PORTABLE;
#if defined(CT__CPU_X86)
    path = d == CT_BFLOAT16 && K > 0 && alpha != 0.0f ? ct__lowp_path(M) : path;
#endif
    bool narrow = dc != CT_FLOAT32;
    /* float32 scratch: C (M, N) when narrow, its rows ldc apart (padded off multiples of
       1 KiB, whose rows would share the AMX tiles' cache sets), then A and B on the portable
       path */
    int64_t ldc = (N + 15) / 16 * 16 + 16;
    size_t c_len = narrow ? (size_t)(M * ldc) : 0;
    size_t len = c_len + (path == CT__LOWP_PORTABLE ? (size_t)(M * K + K * N) : 0);
    float *w = len ? (float *)ct__malloc(sizeof(float) * len) : NULL;
    if (len && !w) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return false;
    }
    float *c = narrow ? w : (float *)C;
    int64_t rc = narrow ? ldc : rsc, cc = narrow ? 1 : csc;
    if (narrow && beta != 0.0f) {
        ct__lowp_widen(dc, M, N, (const uint16_t *)C, rsc, csc, c, ldc);
    }
    bool ok = true;
    if (path == CT__LOWP_PORTABLE) {
        ct__lowp_portable(d, M, N, K, alpha, a, rsa, csa, b, rsb, csb, beta, c, rc, cc,
                          w ? w + c_len : NULL);
    }
#if defined(CT__CPU_X86)
    else if (!ct__lowp_fast(path, M, N, K, alpha, a, rsa, csa, b, rsb, csb, beta, c, rc, cc)) {
        ok = false;
        ct__fail(CT_ERR_OOM, op, "out of memory");
    }
#endif
    for (int64_t i = 0; ok && narrow && i < M; i++) {
        ct__float_to_half_n(dc, c + i * ldc, (char *)C + 2 * i * rsc, 2 * csc, N);
    }
    ct__free(w);
    return ok;
}

CT__GLUE_END

#undef CT__LOWP_NR
#undef CT__LOWP_MC
#undef CT__LOWP_KC
#undef CT__LOWP_NC
#undef CT__LOWP_PAR_MIN_MACS
#undef CT__LOWP_MIN
#undef CT__LOWP_CEIL
#undef CT__LOWP_ROUND_UP
