/* ops/decomp.c - torch.linalg's decompositions and the ops built on them.
 *
 * Legend: A (*, m, n), the batch * flattened to b in [0, B); k = min(m, n). Each matrix is
 * copied into work memory in LAPACK's layout, column-major: w[i + j * ld] is row i, column j
 * (a transposed operand is copied transposed, so the factorizations never see strides). The
 * work dtype is float64 on the portable path (float32 inputs are computed in float64 and
 * rounded once) and the input's dtype on the LAPACK path (CTORCH_OPENBLAS or CTORCH_LAPACK).
 * One matrix is one task of ct__parallel_for over the batch, with its own work memory; a
 * matrix that cannot be factored reports LAPACK's info, the first such matrix (in batch
 * order) is the error.
 * Every multiply-add of the portable kernels is an explicit fma, so no compiler flag changes
 * their bits.
 */
#include "../core/internal.h"
#include "decomp.h"
#include "linalg.h"
#include "pointwise.h"
#include "reduce.h"
#include "view.h"
#include "../autograd/autograd.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- LAPACK (OpenBLAS's): CTORCH_OPENBLAS, or CTORCH_LAPACK alone (GEMM stays ctorch's) -- */
#if defined(CTORCH_OPENBLAS) || defined(CTORCH_LAPACK)
#ifdef __cplusplus
extern "C" {
#endif
/* Fortran LAPACK/BLAS as OpenBLAS exports them: every argument by pointer, column-major,
   a hidden length per character argument at the end (gfortran's ABI). */
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info, size_t);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t);
void strsm_(const char *side, const char *uplo, const char *transa, const char *diag,
            const int *m, const int *n, const float *alpha, const float *a, const int *lda,
            float *b, const int *ldb, size_t, size_t, size_t, size_t);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag,
            const int *m, const int *n, const double *alpha, const double *a, const int *lda,
            double *b, const int *ldb, size_t, size_t, size_t, size_t);
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work,
             const int *lwork, int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda,
             const float *tau, float *work, const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
             const double *tau, double *work, const int *lwork, int *info);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda,
             float *w, float *work, const int *lwork, int *iwork, const int *liwork, int *info,
             size_t, size_t);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
             double *w, double *work, const int *lwork, int *iwork, const int *liwork,
             int *info, size_t, size_t);
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s,
             float *u, const int *ldu, float *vt, const int *ldvt, float *work,
             const int *lwork, int *iwork, int *info, size_t);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda,
             double *s, double *u, const int *ldu, double *vt, const int *ldvt, double *work,
             const int *lwork, int *iwork, int *info, size_t);
void sgebrd_(const int *m, const int *n, float *a, const int *lda, float *d, float *e,
             float *tauq, float *taup, float *work, const int *lwork, int *info);
void dgebrd_(const int *m, const int *n, double *a, const int *lda, double *d, double *e,
             double *tauq, double *taup, double *work, const int *lwork, int *info);
void sbdsdc_(const char *uplo, const char *compq, const int *n, float *d, float *e, float *u,
             const int *ldu, float *vt, const int *ldvt, float *q, int *iq, float *work,
             int *iwork, int *info, size_t, size_t);
void dbdsdc_(const char *uplo, const char *compq, const int *n, double *d, double *e, double *u,
             const int *ldu, double *vt, const int *ldvt, double *q, int *iq, double *work,
             int *iwork, int *info, size_t, size_t);
void slasd0_(const int *n, const int *sqre, float *d, float *e, float *u, const int *ldu,
             float *vt, const int *ldvt, const int *smlsiz, int *iwork, float *work, int *info);
void dlasd0_(const int *n, const int *sqre, double *d, double *e, double *u, const int *ldu,
             double *vt, const int *ldvt, const int *smlsiz, int *iwork, double *work,
             int *info);
void slasd1_(const int *nl, const int *nr, const int *sqre, float *d, float *alpha, float *beta,
             float *u, const int *ldu, float *vt, const int *ldvt, int *idxq, int *iwork,
             float *work, int *info);
void dlasd1_(const int *nl, const int *nr, const int *sqre, double *d, double *alpha,
             double *beta, double *u, const int *ldu, double *vt, const int *ldvt, int *idxq,
             int *iwork, double *work, int *info);
void slarft_(const char *direct, const char *storev, const int *n, const int *k, const float *v,
             const int *ldv, const float *tau, float *t, const int *ldt, size_t, size_t);
void dlarft_(const char *direct, const char *storev, const int *n, const int *k, const double *v,
             const int *ldv, const double *tau, double *t, const int *ldt, size_t, size_t);
float slamch_(const char *cmach, size_t);
double dlamch_(const char *cmach, size_t);
void slascl_(const char *type, const int *kl, const int *ku, const float *cfrom,
             const float *cto, const int *m, const int *n, float *a, const int *lda, int *info,
             size_t);
void dlascl_(const char *type, const int *kl, const int *ku, const double *cfrom,
             const double *cto, const int *m, const int *n, double *a, const int *lda,
             int *info, size_t);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int num_threads);
#ifdef __cplusplus
}
#endif
#define CT__LAPACK 1
/* The largest order OpenBLAS runs on one thread (ct__dc_run): its threaded getrf, gesdd and
   syevd are slower up to there (measured at 256 and 512 on 2 cores). */
#define CT__DC_BLAS1_MAX 512
#else
#define CT__LAPACK 0
#endif

/* ---- work memory ---------------------------------------------------------------------- */
/* The dtype the factorizations compute in for inputs of dtype d. */
static ct_dtype ct__dc_wd(ct_dtype d)
{
    return CT__LAPACK ? d : CT_FLOAT64;
}

static double ct__dc_ld(const void *p, ct_dtype d, int64_t k)
{
    return d == CT_FLOAT32 ? (double)((const float *)p)[k] : ((const double *)p)[k];
}

static void ct__dc_st(void *p, ct_dtype d, int64_t k, double v)
{
    if (d == CT_FLOAT32) {
        ((float *)p)[k] = (float)v;
    } else {
        ((double *)p)[k] = v;
    }
}

/* n elements of dtype wd (at least one), uninitialized; NULL when out of memory. */
static void *ct__dc_alloc(ct_dtype wd, int64_t n)
{
    return ct__malloc((size_t)(n > 0 ? n : 1) * ct_dtype_size(wd));
}

/* The address of matrix b of t (*, r, c), whose batch dims broadcast to batch (nb dims). */
static const char *ct__dc_at(const ct_tensor *t, const int64_t *batch, int nb, int64_t b)
{
    int tb = t->ndim - 2;
    int64_t off = 0;
    for (int d = nb - 1; d >= 0; d--) {
        int64_t i = b % batch[d];
        int td = d - (nb - tb);
        b /= batch[d];
        if (td >= 0 && t->sizes[td] != 1) {
            off += i * t->strides[td];
        }
    }
    return ct__data(t) + off * (int64_t)ct_dtype_size(t->dtype);
}

/* w (wd, column-major, leading dimension ld) = matrix b of t (*, r, c), or its transpose. */
static void ct__dc_get(void *w, ct_dtype wd, int64_t ld, const ct_tensor *t,
                       const int64_t *batch, int nb, int64_t b, bool trans)
{
    const char *p = ct__dc_at(t, batch, nb, b);
    int64_t r = t->sizes[t->ndim - 2], c = t->sizes[t->ndim - 1];
    int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
    if (trans) {
        int64_t x = r;
        r = c;
        c = x;
        x = rs;
        rs = cs;
        cs = x;
    }
    size_t es = ct_dtype_size(wd);
    for (int64_t j = 0; j < c; j++) {
        if (rs == 1 && t->dtype == wd) { /* a column of t is contiguous: a plain copy */
            memcpy((char *)w + (size_t)(j * ld) * es, p + (size_t)(j * cs) * es, (size_t)r * es);
            continue;
        }
        for (int64_t i = 0; i < r; i++) {
            ct__dc_st(w, wd, i + j * ld, ct__dc_ld(p, t->dtype, i * rs + j * cs));
        }
    }
}

/* Matrix b of the contiguous output t (*, r, c) = w (r x c, or c x r transposed when trans). */
static void ct__dc_put(ct_tensor *t, int64_t b, bool trans, const void *w, ct_dtype wd,
                       int64_t ld)
{
    int64_t r = t->sizes[t->ndim - 2], c = t->sizes[t->ndim - 1];
    char *p = ct__data(t) + b * r * c * (int64_t)ct_dtype_size(t->dtype);
    size_t es = ct_dtype_size(wd);
    for (int64_t i = 0; i < r; i++) {
        if (trans && t->dtype == wd) { /* a row of t is a column of w: a plain copy */
            memcpy(p + (size_t)(i * c) * es, (const char *)w + (size_t)(i * ld) * es,
                   (size_t)c * es);
            continue;
        }
        for (int64_t j = 0; j < c; j++) {
            ct__dc_st(p, t->dtype, i * c + j, ct__dc_ld(w, wd, trans ? j + i * ld : i + j * ld));
        }
    }
}

/* Whether any of the n elements of w (dtype wd) is NaN. */
static bool ct__dc_has_nan(const void *w, ct_dtype wd, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (isnan(ct__dc_ld(w, wd, i))) {
            return true;
        }
    }
    return false;
}

/* The batch's size: the product of all but the last two dims. */
static int64_t ct__dc_batch(const ct_tensor *t)
{
    return ct__numel(t->sizes, t->ndim - 2);
}

/* ---- portable kernels (float64, column-major) ------------------------------------------ */
CT__VECTORIZE_BEGIN

/* The 2-norm of x (n, stride 1) without undue overflow (scaled sum of squares, as nrm2). */
static double ct__dc_nrm2(const double *x, int64_t n)
{
    double scale = 0, ssq = 1;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (a == 0) {
            continue;
        }
        if (scale < a) {
            double r = scale / a;
            ssq = fma(ssq * r, r, 1.0);
            scale = a;
        } else {
            double r = a / scale;
            ssq = fma(r, r, ssq);
        }
    }
    return scale * sqrt(ssq);
}

/* Solves T X = B in place of b (n x k, ldb), T the upper or lower triangle of a (lda); unit:
   ones on T's diagonal (not read). Column by column, each an axpy sweep down a's columns. */
static CT__UNUSED void ct__dc_trsm_c(bool upper, bool unit, int64_t n, int64_t k,
                                     const double *a, int64_t lda, double *b, int64_t ldb)
{
    for (int64_t j = 0; j < k; j++) {
        double *x = b + j * ldb;
        for (int64_t s = 0; s < n; s++) {
            int64_t c = upper ? n - 1 - s : s;
            if (!unit) {
                x[c] /= a[c + c * lda];
            }
            double xc = x[c];
            int64_t lo = upper ? 0 : c + 1, hi = upper ? c : n;
            for (int64_t i = lo; i < hi; i++) {
                x[i] = fma(-a[i + c * lda], xc, x[i]);
            }
        }
    }
}

#define CT__DC_TB 32 /* the LU's panels, the triangular solves' column blocks */
#define CT__DC_LANES 16 /* the pivot search's partial maxima */
#define CT__DC_TINV(n) (((n) + CT__DC_TB - 1) / CT__DC_TB * CT__DC_TB * CT__DC_TB)
#define CT__DC_LEAF 8 /* the LU's narrowest recursion: columns factored one at a time */
#define CT__DC_SWAPS 16 /* columns a row swap runs across at once (independent moves) */
#define CT__DC_COLS 32 /* the LU's column blocks (tasks on the pool) */

/* The inverses of the diagonal blocks of an LU's U and L (n x n, at a; see trinv_blocks). */
typedef struct ct__dc_trinv_ctx {
    int64_t n;
    const void *a;
    void *inv;
} ct__dc_trinv_ctx;

/* The update right of a panel of the recursive LU (n1 columns of a (m rows, ld) factored). */
typedef struct ct__dc_lu_upd {
    int64_t m, n1, n, ld;
    void *a;
    const void *inv;
    const int *piv;
} ct__dc_lu_upd;

/* LU with partial pivoting and the solves on it, on the GEMM, in the work dtype T.
   getrf: P A = L U of a (n x n, ld n): U on and above the diagonal, L (unit) below; piv[k]
   (1-based, as LAPACK) the row swapped with row k. Returns 0, or k + 1 for the first exactly
   zero pivot U[k][k] (the factorization goes on, as getrf). inv: scratch of CT__DC_TINV(n).
   rlu: the recursive LU (Toledo's; LAPACK's getrf2) of a (m x n, ld, m >= n): the left n1
   columns factored recursively (n1 a multiple of CT__DC_TB above it, of CT__DC_LEAF below),
   their swaps applied to the right columns, A12 := L11^-1 A12, A22 -= L21 A12, A22 factored
   recursively, its swaps applied to the left columns; so nearly all the flops run on the
   GEMM. The right columns' update and the left columns' swaps run in column blocks of
   CT__DC_COLS on the pool (each block computed alike for any thread count, so the bits are).
   Each finished diagonal block of L (CT__DC_TB wide, TB-aligned: later swaps only touch the
   rows below it) gets its inverse at inv + (j0 / CT__DC_TB) * CT__DC_TB^2, for the
   L11^-1 A12 above it (trsm_llu: A12's block rows updated by the ones above, then times
   the inverse, all on the GEMM; by substitution below CT__DC_TB).
   getf2: the same unblocked, one column at a time (the pivot: the first largest |a[i][k]|,
   found as the largest in CT__DC_LANES lanes then the first equal to it; a NaN in a[k][k]
   keeps row k), for n <= CT__DC_LEAF.
   laswp: the swaps of rows k0 .. k1 - 1 (piv, relative to a) in columns [c0, c1) of a (ld),
   across CT__DC_SWAPS columns at once.
   The triangular solves of the LU solve, y := y U^-1 L^-1 P^T for y (r x n), in column blocks
   of CT__DC_TB, all on the GEMM: the columns solved before a block update it, then it is
   multiplied by the inverse of its diagonal block (as OpenBLAS's trsm). Block s's columns:
   [j0, j0 + jb) from the front (upper) or the back (lower), as ct__dc_tblock says. Row p of the
   result depends on row p of y only.
   trinv: inv (CT__DC_TB x CT__DC_TB, row-major) := T^-1, T the upper or lower (unit: ones on
   its diagonal, not read) triangle of a (jb x jb, lda), zeros elsewhere: row j of the inverse
   from the rows below (upper) or above it, each step an axpy over a whole row.
   trinv_blocks: the inverses of the diagonal blocks of U (x->inv, tasks [0, nb)) and of L
   (x->inv + CT__DC_TINV(n), tasks [nb, 2 nb)) of an LU (n x n), block s's at
   inv + s * CT__DC_TB, a task per block on the pool.
   trsm_rows: x (r x n, ld) := y T^-1 for y (r x n, ld; destroyed), T (upper or lower) and inv
   its blocks' inverses as in trinv_blocks.
   getrs_rows: y (r x n, ldy) := y U^-1 L^-1 P^T, a = P L U from getrf (piv 1-based), inv its
   blocks' inverses (U's, then L's at inv + CT__DC_TINV(n)); computed in p and q (r x n each,
   ld r): a task's rows contiguous, apart from the other tasks' (rows of y interleaved
   between threads ran about 1.7 times slower). */
#define CT__DC_LU_DEFINE(T, S, FMA, ABS)                                                      \
    static void ct__dc_trinv_##S(bool upper, bool unit, int64_t jb, const T *a, int64_t lda,  \
                                 T *inv)                                                   \
    {                                                                                      \
        memset(inv, 0, sizeof(T) * CT__DC_TB * CT__DC_TB);                                 \
        for (int64_t s = 0; s < jb; s++) {                                                 \
            int64_t j = upper ? jb - 1 - s : s, l1 = upper ? jb : j;                       \
            T *rj = inv + j * CT__DC_TB;                                                   \
            rj[j] = (T)1;                                                                  \
            for (int64_t l = upper ? j + 1 : 0; l < l1; l++) {                             \
                T t = -a[j + l * lda];                                                     \
                const T *rl = inv + l * CT__DC_TB;                                         \
                for (int64_t c = 0; c < CT__DC_TB; c++) {                                  \
                    rj[c] = FMA(t, rl[c], rj[c]);                                          \
                }                                                                          \
            }                                                                              \
            for (int64_t c = 0; !unit && c < CT__DC_TB; c++) {                             \
                rj[c] /= a[j + j * lda];                                                   \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static void ct__dc_trinv_blocks_##S(int64_t begin, int64_t end, void *ctx)              \
    {                                                                                      \
        const ct__dc_trinv_ctx *x = (const ct__dc_trinv_ctx *)ctx;                         \
        int64_t nb = x->n / CT__DC_TB + (x->n % CT__DC_TB != 0);                           \
        for (int64_t b = begin; b < end; b++) {                                            \
            bool upper = b < nb;                                                           \
            int64_t jb, s = (upper ? b : b - nb) * CT__DC_TB;                              \
            int64_t j0 = ct__dc_tblock(upper, x->n, s, &jb);                               \
            T *inv = (T *)x->inv + (upper ? 0 : CT__DC_TINV(x->n)) + s * CT__DC_TB;        \
            ct__dc_trinv_##S(upper, !upper, jb, (const T *)x->a + j0 + j0 * x->n, x->n, inv); \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static void ct__dc_trsm_rows_##S(bool upper, int64_t n, int64_t r, const T *a,          \
                                     const T *inv, T *y, T *x, int64_t ld)                 \
    {                                                                                      \
        for (int64_t s = 0; s < n; s += CT__DC_TB) {                                       \
            int64_t jb, j0 = ct__dc_tblock(upper, n, s, &jb), lo = upper ? 0 : j0 + jb;    \
            if (s > 0) {                                                                   \
                ct__gemm_##S(r, jb, s, (T)-1, x + lo * ld, 1, ld, a + lo + j0 * n, 1, n,    \
                             (T)1, y + j0 * ld, 1, ld);                                    \
            }                                                                              \
            ct__gemm_##S(r, jb, jb, (T)1, y + j0 * ld, 1, ld, inv + s * CT__DC_TB, CT__DC_TB, \
                         1, (T)0, x + j0 * ld, 1, ld);                                     \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static void ct__dc_getrs_rows_##S(int64_t n, int64_t r, const T *a, const int *piv,     \
                                      const T *inv, T *y, int64_t ldy, T *p, T *q)         \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
            memcpy(p + j * r, y + j * ldy, sizeof(T) * (size_t)r);                         \
        }                                                                                  \
        ct__dc_trsm_rows_##S(true, n, r, a, inv, p, q, r);                                 \
        ct__dc_trsm_rows_##S(false, n, r, a, inv + CT__DC_TINV(n), q, p, r);               \
        for (int64_t i = n - 1; i >= 0; i--) { /* p P^T: swap columns i and piv[i] */      \
            T *pi = p + i * r, *pp = p + (piv[i] - 1) * r;                                 \
            for (int64_t l = 0; pp != pi && l < r; l++) {                                  \
                T t = pi[l];                                                               \
                pi[l] = pp[l];                                                             \
                pp[l] = t;                                                                 \
            }                                                                              \
        }                                                                                  \
        for (int64_t j = 0; j < n; j++) {                                                  \
            memcpy(y + j * ldy, p + j * r, sizeof(T) * (size_t)r);                         \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static void ct__dc_laswp_##S(T *a, int64_t ld, int64_t c0, int64_t c1, int64_t k0,     \
                                 int64_t k1, const int *piv)                               \
    {                                                                                      \
        for (int64_t j0 = c0; j0 < c1; j0 += CT__DC_SWAPS) {                               \
            int64_t nj = c1 - j0 < CT__DC_SWAPS ? c1 - j0 : CT__DC_SWAPS;                  \
            T *col = a + j0 * ld;                                                          \
            for (int64_t k = k0; k < k1; k++) {                                            \
                int64_t p = piv[k] - 1;                                                    \
                for (int64_t j = 0; p != k && j < nj; j++) {                               \
                    T t = col[k + j * ld];                                                 \
                    col[k + j * ld] = col[p + j * ld];                                     \
                    col[p + j * ld] = t;                                                   \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static int64_t ct__dc_iamax_##S(int64_t m, const T *x)                                 \
    {                                                                                      \
        int64_t p = 0, i = 1;                                                              \
        T mx = ABS(x[0]), lane[CT__DC_LANES];                                              \
        for (int64_t l = 0; l < CT__DC_LANES; l++) {                                       \
            lane[l] = mx;                                                                  \
        }                                                                                  \
        for (; i + CT__DC_LANES <= m; i += CT__DC_LANES) {                                 \
            for (int64_t l = 0; l < CT__DC_LANES; l++) {                                   \
                T v = ABS(x[i + l]);                                                       \
                lane[l] = v > lane[l] ? v : lane[l];                                       \
            }                                                                              \
        }                                                                                  \
        for (int64_t l = 0; l < CT__DC_LANES; l++) {                                       \
            mx = lane[l] > mx ? lane[l] : mx;                                              \
        }                                                                                  \
        for (; i < m; i++) {                                                               \
            mx = ABS(x[i]) > mx ? ABS(x[i]) : mx;                                          \
        }                                                                                  \
        for (bool hit = false; !hit && p + CT__DC_LANES <= m; p += hit ? 0 : CT__DC_LANES) { \
            for (int64_t l = 0; l < CT__DC_LANES; l++) {                                   \
                hit |= ABS(x[p + l]) == mx;                                                \
            }                                                                              \
        }                                                                                  \
        while (p < m && ABS(x[p]) != mx) {                                                 \
            p++;                                                                           \
        }                                                                                  \
        return p < m ? p : 0;                                                              \
    }                                                                                      \
                                                                                           \
    static int ct__dc_getf2_##S(int64_t m, int64_t n, T *a, int64_t ld, int *piv)          \
    {                                                                                      \
        int info = 0;                                                                      \
        for (int64_t k = 0; k < n; k++) {                                                  \
            T *ak = a + k * ld;                                                            \
            piv[k] = (int)(k + ct__dc_iamax_##S(m - k, ak + k)) + 1;                       \
            ct__dc_laswp_##S(a, ld, 0, n, k, k + 1, piv);                                  \
            T d = ak[k];                                                                   \
            if (d == 0) {                                                                  \
                info = info ? info : (int)k + 1;                                           \
                continue;                                                                  \
            }                                                                              \
            T r = (T)1 / d;                                                                \
            for (int64_t i = k + 1; i < m; i++) {                                          \
                ak[i] *= r;                                                                \
            }                                                                              \
            for (int64_t j = k + 1; j < n; j++) { /* rank-1 update */                      \
                T u = -a[k + j * ld];                                                      \
                for (int64_t i = k + 1; i < m; i++) {                                      \
                    a[i + j * ld] = FMA(ak[i], u, a[i + j * ld]);                          \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        return info;                                                                       \
    }                                                                                      \
                                                                                           \
    static void ct__dc_trsm_llu_##S(int64_t n, int64_t k, const T *a, int64_t lda,          \
                                    const T *inv, T *b, int64_t ldb)                       \
    {                                                                                      \
        T t[CT__DC_TB * CT__DC_COLS];                                                      \
        if (!inv) { /* n < CT__DC_TB: substitution, column by column */                   \
            for (int64_t j = 0; j < k; j++) {                                              \
                T *x = b + j * ldb;                                                        \
                for (int64_t c = 0; c < n; c++) {                                          \
                    for (int64_t i = c + 1; i < n; i++) {                                  \
                        x[i] = FMA(-a[i + c * lda], x[c], x[i]);                           \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        for (int64_t c = 0; c < k; c += CT__DC_COLS) {                                     \
            int64_t kc = k - c < CT__DC_COLS ? k - c : CT__DC_COLS;                        \
            T *bc = b + c * ldb;                                                           \
            for (int64_t s = 0; s < n; s += CT__DC_TB) {                                   \
                if (s > 0) {                                                               \
                    ct__gemm_##S(CT__DC_TB, kc, s, (T)-1, a + s, 1, lda, bc, 1, ldb, (T)1,  \
                                 bc + s, 1, ldb);                                          \
                }                                                                          \
                ct__gemm_##S(CT__DC_TB, kc, CT__DC_TB, (T)1, inv + s * CT__DC_TB,           \
                             CT__DC_TB, 1, bc + s, 1, ldb, (T)0, t, 1, CT__DC_TB);         \
                for (int64_t j = 0; j < kc; j++) {                                         \
                    memcpy(bc + s + j * ldb, t + j * CT__DC_TB, sizeof(T) * CT__DC_TB);    \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static void ct__dc_lu_update_##S(int64_t begin, int64_t end, void *ctx)                 \
    {                                                                                      \
        const ct__dc_lu_upd *u = (const ct__dc_lu_upd *)ctx;                               \
        T *a = (T *)u->a, *b = a + (u->n1 + begin) * u->ld;                                \
        int64_t k = end - begin;                                                           \
        ct__dc_laswp_##S(b, u->ld, 0, k, 0, u->n1, u->piv);                                \
        ct__dc_trsm_llu_##S(u->n1, k, a, u->ld, (const T *)u->inv, b, u->ld);              \
        ct__gemm_##S(u->m - u->n1, k, u->n1, (T)-1, a + u->n1, 1, u->ld, b, 1, u->ld, (T)1, \
                     b + u->n1, 1, u->ld);                                                 \
    }                                                                                      \
                                                                                           \
    static void ct__dc_lu_swap_left_##S(int64_t begin, int64_t end, void *ctx)             \
    {                                                                                      \
        const ct__dc_lu_upd *u = (const ct__dc_lu_upd *)ctx;                               \
        ct__dc_laswp_##S((T *)u->a, u->ld, begin, end, u->n1, u->n, u->piv);               \
    }                                                                                      \
                                                                                           \
    static int ct__dc_rlu_##S(int64_t m, int64_t n, T *a, int64_t ld, int *piv, T *inv)     \
    {                                                                                      \
        if (n <= CT__DC_LEAF) {                                                            \
            int info = ct__dc_getf2_##S(m, n, a, ld, piv);                                 \
            if (n == CT__DC_TB) {                                                          \
                ct__dc_trinv_##S(false, true, CT__DC_TB, a, ld, inv);                      \
            }                                                                              \
            return info;                                                                   \
        }                                                                                  \
        int64_t h = n > CT__DC_TB ? n / 2 / CT__DC_TB * CT__DC_TB : n / 2 / CT__DC_LEAF *  \
                                                                  CT__DC_LEAF;             \
        int64_t n1 = h > 0 ? h : n > CT__DC_TB ? CT__DC_TB : CT__DC_LEAF;                  \
        int info = ct__dc_rlu_##S(m, n1, a, ld, piv, inv);                                 \
        ct__dc_lu_upd u = {m, n1, n, ld, a, n1 % CT__DC_TB ? NULL : inv, piv};             \
        ct__parallel_for(n - n1, CT__DC_COLS, ct__dc_lu_update_##S, &u);                   \
        T *a22 = a + n1 + n1 * ld;                                                         \
        int i2 = ct__dc_rlu_##S(m - n1, n - n1, a22, ld, piv + n1,                         \
                                inv + n1 / CT__DC_TB * CT__DC_TB * CT__DC_TB);             \
        for (int64_t k = n1; k < n; k++) {                                                 \
            piv[k] += (int)n1;                                                             \
        }                                                                                  \
        ct__parallel_for(n1, CT__DC_COLS, ct__dc_lu_swap_left_##S, &u);                    \
        info = info ? info : i2 ? i2 + (int)n1 : 0;                                        \
        if (n == CT__DC_TB) { /* a finished diagonal block of L: its inverse */            \
            ct__dc_trinv_##S(false, true, CT__DC_TB, a, ld, inv);                          \
        }                                                                                  \
        return info;                                                                       \
    }                                                                                      \
                                                                                           \
    static int ct__dc_getrf_##S(int64_t n, T *a, int *piv, T *w)                            \
    {                                                                                      \
        return ct__dc_rlu_##S(n, n, a, n, piv, w);                                         \
    }

/* Block s (a multiple of CT__DC_TB) of a triangular solve of order n: returns its first
   column j0 and sets *jb, its width; the blocks run from the front for upper, else from the
   back. */
static int64_t ct__dc_tblock(bool upper, int64_t n, int64_t s, int64_t *jb)
{
    *jb = n - s < CT__DC_TB ? n - s : CT__DC_TB;
    return upper ? s : n - s - *jb;
}

CT__DC_LU_DEFINE(double, f64, fma, fabs)
#if CT__LAPACK
CT__DC_LU_DEFINE(float, f32, fmaf, fabsf)
#endif

/* Cholesky A = L L^T of the lower triangle of a (n x n, lda), right-looking by columns; the
   strict upper triangle is zeroed. Returns 0, or j + 1 when the leading minor of order j + 1
   is not positive-definite. */
static CT__UNUSED int ct__dc_potrf_c(int64_t n, double *a, int64_t lda)
{
    for (int64_t j = 0; j < n; j++) {
        double d = a[j + j * lda];
        if (!(d > 0)) {
            return (int)j + 1;
        }
        d = sqrt(d);
        a[j + j * lda] = d;
        for (int64_t i = j + 1; i < n; i++) {
            a[i + j * lda] /= d;
        }
        for (int64_t c = j + 1; c < n; c++) {
            double l = a[c + j * lda];
            for (int64_t i = c; i < n; i++) {
                a[i + c * lda] = fma(-a[i + j * lda], l, a[i + c * lda]);
            }
        }
    }
    for (int64_t j = 1; j < n; j++) {
        memset(a + j * lda, 0, sizeof(double) * (size_t)j);
    }
    return 0;
}

/* Householder QR of a (m x n, lda) in geqrf's layout and with dlarfg's signs: R on and above
   the diagonal, reflector k's vector v (v[k] = 1 implied) below it, H_k = I - tau[k] v v^T,
   R[k][k] = -sign(alpha) * norm (tau 0, H_k = I, when the column below is already zero). */
static void ct__dc_geqrf_c(int64_t m, int64_t n, double *a, int64_t lda, double *tau)
{
    int64_t k = m < n ? m : n;
    for (int64_t c = 0; c < k; c++) {
        double *x = a + c + c * lda;
        int64_t len = m - c;
        double alpha = x[0], xnorm = ct__dc_nrm2(x + 1, len - 1);
        if (xnorm == 0) {
            tau[c] = 0;
            continue;
        }
        double beta = -copysign(hypot(alpha, xnorm), alpha);
        tau[c] = (beta - alpha) / beta;
        double s = 1.0 / (alpha - beta);
        for (int64_t i = 1; i < len; i++) {
            x[i] *= s;
        }
        x[0] = beta;
        for (int64_t j = c + 1; j < n; j++) { /* a_j -= tau v (v^T a_j) */
            double *y = a + c + j * lda, dot = y[0];
            for (int64_t i = 1; i < len; i++) {
                dot = fma(x[i], y[i], dot);
            }
            dot *= tau[c];
            y[0] -= dot;
            for (int64_t i = 1; i < len; i++) {
                y[i] = fma(-dot, x[i], y[i]);
            }
        }
    }
}

/* x (m x nc, ldx) = Q x, Q = H_0 ... H_{k-1} from geqrf's a and tau. */
static void ct__dc_apply_q_c(int64_t m, int64_t nc, int64_t k, const double *a, int64_t lda,
                             const double *tau, double *x, int64_t ldx)
{
    for (int64_t c = k - 1; c >= 0; c--) {
        const double *v = a + c + c * lda;
        int64_t len = m - c;
        for (int64_t j = 0; tau[c] != 0 && j < nc; j++) {
            double *y = x + c + j * ldx, dot = y[0];
            for (int64_t i = 1; i < len; i++) {
                dot = fma(v[i], y[i], dot);
            }
            dot *= tau[c];
            y[0] -= dot;
            for (int64_t i = 1; i < len; i++) {
                y[i] = fma(-dot, v[i], y[i]);
            }
        }
    }
}

/* q (m x nc, ldq) = the first nc columns of Q from geqrf's a and tau (k reflectors). */
static CT__UNUSED void ct__dc_orgqr_c(int64_t m, int64_t nc, int64_t k, const double *a,
                                      int64_t lda, const double *tau, double *q, int64_t ldq)
{
    for (int64_t j = 0; j < nc; j++) {
        for (int64_t i = 0; i < m; i++) {
            q[i + j * ldq] = i == j ? 1.0 : 0.0;
        }
    }
    ct__dc_apply_q_c(m, nc, k, a, lda, tau, q, ldq);
}

/* Householder reduction of the symmetric v (n x n, column-major) to tridiagonal form: d the
   diagonal, e the subdiagonal (e[0] = 0), v the accumulated orthogonal transformation (EISPACK's
   tred2, as in JAMA). */
static void ct__dc_tred2(int64_t n, double *v, double *d, double *e)
{
#define V(i, j) v[(i) + (j) * n]
    for (int64_t j = 0; j < n; j++) {
        d[j] = V(n - 1, j);
    }
    for (int64_t i = n - 1; i > 0; i--) {
        double scale = 0, h = 0;
        for (int64_t k = 0; k < i; k++) {
            scale += fabs(d[k]);
        }
        if (scale == 0) {
            e[i] = d[i - 1];
            for (int64_t j = 0; j < i; j++) {
                d[j] = V(i - 1, j);
                V(i, j) = 0;
                V(j, i) = 0;
            }
        } else {
            for (int64_t k = 0; k < i; k++) {
                d[k] /= scale;
                h = fma(d[k], d[k], h);
            }
            double f = d[i - 1], g = sqrt(h);
            g = f > 0 ? -g : g;
            e[i] = scale * g;
            h = fma(-f, g, h);
            d[i - 1] = f - g;
            for (int64_t j = 0; j < i; j++) {
                e[j] = 0;
            }
            for (int64_t j = 0; j < i; j++) {
                f = d[j];
                V(j, i) = f;
                g = fma(V(j, j), f, e[j]);
                for (int64_t k = j + 1; k <= i - 1; k++) {
                    g = fma(V(k, j), d[k], g);
                    e[k] = fma(V(k, j), f, e[k]);
                }
                e[j] = g;
            }
            f = 0;
            for (int64_t j = 0; j < i; j++) {
                e[j] /= h;
                f = fma(e[j], d[j], f);
            }
            double hh = f / (h + h);
            for (int64_t j = 0; j < i; j++) {
                e[j] = fma(-hh, d[j], e[j]);
            }
            for (int64_t j = 0; j < i; j++) {
                f = d[j];
                g = e[j];
                for (int64_t k = j; k <= i - 1; k++) {
                    V(k, j) -= fma(f, e[k], g * d[k]);
                }
                d[j] = V(i - 1, j);
                V(i, j) = 0;
            }
        }
        d[i] = h;
    }
    for (int64_t i = 0; i < n - 1; i++) { /* accumulate the transformations */
        V(n - 1, i) = V(i, i);
        V(i, i) = 1;
        double h = d[i + 1];
        if (h != 0) {
            for (int64_t k = 0; k <= i; k++) {
                d[k] = V(k, i + 1) / h;
            }
            for (int64_t j = 0; j <= i; j++) {
                double g = 0;
                for (int64_t k = 0; k <= i; k++) {
                    g = fma(V(k, i + 1), V(k, j), g);
                }
                for (int64_t k = 0; k <= i; k++) {
                    V(k, j) = fma(-g, d[k], V(k, j));
                }
            }
        }
        for (int64_t k = 0; k <= i; k++) {
            V(k, i + 1) = 0;
        }
    }
    for (int64_t j = 0; j < n; j++) {
        d[j] = V(n - 1, j);
        V(n - 1, j) = 0;
    }
    V(n - 1, n - 1) = 1;
    e[0] = 0;
}

/* Eigenvalues (d, ascending) and eigenvectors (columns of v) of the tridiagonal matrix from
   ct__dc_tred2, by the implicit QL method (EISPACK's tql2, as in JAMA). Returns 0, or l + 1
   when eigenvalue l did not converge in 60 iterations. */
static int ct__dc_tql2(int64_t n, double *v, double *d, double *e)
{
    for (int64_t i = 1; i < n; i++) {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0;
    double f = 0, tst1 = 0, eps = DBL_EPSILON;
    for (int64_t l = 0; l < n; l++) {
        tst1 = fmax(tst1, fabs(d[l]) + fabs(e[l]));
        int64_t m = l;
        while (m < n - 1 && !(fabs(e[m]) <= eps * tst1)) {
            m++;
        }
        for (int iter = 0; m > l; iter++) {
            if (iter == 60) {
                return (int)l + 1;
            }
            double g = d[l], p = (d[l + 1] - g) / (2.0 * e[l]), r = hypot(p, 1.0);
            r = p < 0 ? -r : r;
            d[l] = e[l] / (p + r);
            d[l + 1] = e[l] * (p + r);
            double dl1 = d[l + 1], h = g - d[l];
            for (int64_t i = l + 2; i < n; i++) {
                d[i] -= h;
            }
            f += h;
            p = d[m];
            double c = 1, c2 = 1, c3 = 1, el1 = e[l + 1], s = 0, s2 = 0;
            for (int64_t i = m - 1; i >= l; i--) {
                c3 = c2;
                c2 = c;
                s2 = s;
                g = c * e[i];
                h = c * p;
                r = hypot(p, e[i]);
                e[i + 1] = s * r;
                s = e[i] / r;
                c = p / r;
                p = fma(c, d[i], -s * g);
                d[i + 1] = fma(s, fma(c, g, s * d[i]), h);
                for (int64_t k = 0; k < n; k++) {
                    double vk = V(k, i + 1);
                    V(k, i + 1) = fma(s, V(k, i), c * vk);
                    V(k, i) = fma(c, V(k, i), -s * vk);
                }
            }
            p = -s * s2 * c3 * el1 * e[l] / dl1;
            e[l] = s * p;
            d[l] = c * p;
            if (!(fabs(e[l]) > eps * tst1)) {
                break;
            }
        }
        d[l] += f;
        e[l] = 0;
    }
    for (int64_t i = 0; i < n - 1; i++) { /* sort ascending, vectors along */
        int64_t k = i;
        for (int64_t j = i + 1; j < n; j++) {
            k = d[j] < d[k] ? j : k;
        }
        if (k != i) {
            double p = d[k];
            d[k] = d[i];
            d[i] = p;
            for (int64_t j = 0; j < n; j++) {
                p = V(j, i);
                V(j, i) = V(j, k);
                V(j, k) = p;
            }
        }
    }
    return 0;
#undef V
}

/* Symmetric eigendecomposition of v (n x n, both triangles set): eigenvalues w ascending,
   v overwritten by the eigenvectors. e: n doubles of scratch. Non-finite input: NaN out. */
static CT__UNUSED int ct__dc_syev_c(int64_t n, double *v, double *w, double *e)
{
    for (int64_t i = 0; i < n * n; i++) {
        if (!isfinite(v[i])) {
            for (int64_t j = 0; j < n * n; j++) {
                v[j] = NAN;
            }
            for (int64_t j = 0; j < n; j++) {
                w[j] = NAN;
            }
            return 0;
        }
    }
    if (n == 0) {
        return 0;
    }
    ct__dc_tred2(n, v, w, e);
    return ct__dc_tql2(n, v, w, e);
}

/* x . y over n elements in four interleaved fma chains (vectorizable; a fixed order). */
static double ct__dc_dot4(const double *x, const double *y, int64_t n)
{
    double acc[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        for (int l = 0; l < 4; l++) {
            acc[l] = fma(x[i + l], y[i + l], acc[l]);
        }
    }
    for (; i < n; i++) {
        acc[0] = fma(x[i], y[i], acc[0]);
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* One-sided Jacobi (Hestenes): rotates pairs of columns of g (n x n) until they are mutually
   orthogonal to working precision, applying the same rotations to v. The columns' squared
   norms (nrm, n doubles of scratch) are computed at each sweep's start and updated by each
   rotation (alpha - t gamma, beta + t gamma), so a pair costs one dot product. */
static void ct__dc_jacobi(int64_t n, double *g, double *v, double *nrm)
{
    double tol = DBL_EPSILON * (double)(n > 1 ? n : 1);
    for (int sweep = 0; sweep < 80; sweep++) {
        bool rotated = false;
        for (int64_t j = 0; j < n; j++) {
            nrm[j] = ct__dc_dot4(g + j * n, g + j * n, n);
        }
        for (int64_t p = 0; p + 1 < n; p++) {
            for (int64_t q = p + 1; q < n; q++) {
                double *gp = g + p * n, *gq = g + q * n, al = nrm[p], be = nrm[q];
                double ga = ct__dc_dot4(gp, gq, n);
                if (ga == 0 || !(fabs(ga) > tol * sqrt(al) * sqrt(be))) {
                    continue;
                }
                rotated = true;
                double zeta = (be - al) / (2 * ga);
                double t = copysign(1.0, zeta) / (fabs(zeta) + hypot(1.0, zeta));
                double cs = 1 / hypot(1.0, t), sn = cs * t;
                double *vp = v + p * n, *vq = v + q * n;
                nrm[p] = fma(-t, ga, al);
                nrm[q] = fma(t, ga, be);
                for (int64_t i = 0; i < n; i++) {
                    double x = gp[i], y = gq[i];
                    gp[i] = fma(cs, x, -sn * y);
                    gq[i] = fma(sn, x, cs * y);
                }
                for (int64_t i = 0; i < n; i++) {
                    double x = vp[i], y = vq[i];
                    vp[i] = fma(cs, x, -sn * y);
                    vq[i] = fma(sn, x, cs * y);
                }
            }
        }
        if (!rotated) {
            return;
        }
    }
}

/* Makes columns j0.. of u (n x nc) unit vectors orthogonal to all columns before them: the
   unit vector e_i with the largest component outside their span, orthogonalized twice. */
static void ct__dc_complete(int64_t n, int64_t nc, int64_t j0, double *u, double *r)
{
    for (int64_t j = j0; j < nc; j++) {
        double best = -1;
        for (int64_t cand = 0; cand < n; cand++) {
            for (int64_t i = 0; i < n; i++) {
                r[i] = i == cand ? 1.0 : 0.0;
            }
            for (int pass = 0; pass < 2; pass++) {
                for (int64_t l = 0; l < j; l++) {
                    double dot = 0;
                    for (int64_t i = 0; i < n; i++) {
                        dot = fma(u[i + l * n], r[i], dot);
                    }
                    for (int64_t i = 0; i < n; i++) {
                        r[i] = fma(-dot, u[i + l * n], r[i]);
                    }
                }
            }
            double nr = ct__dc_nrm2(r, n);
            if (nr > best) {
                best = nr;
                for (int64_t i = 0; i < n; i++) {
                    u[i + j * n] = r[i] / nr;
                }
            }
        }
    }
}

/* SVD of w (m x n, m >= n, column-major, ld m; destroyed): s (n) descending, u (m x uc, uc = m
   when full else n), vt (n x n). QR first (w = Q R), one-sided Jacobi on R (R V = U_r S), then
   U = Q [U_r 0; 0 I]. Scratch: tau (n), g (n x n), v (n x n), r (n). */
static CT__UNUSED int ct__dc_gesvd_c(int64_t m, int64_t n, double *w, double *s, double *u,
                                     int64_t uc, double *vt, double *tau, double *g, double *v,
                                     double *r)
{
    ct__dc_geqrf_c(m, n, w, m, tau);
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < n; i++) {
            g[i + j * n] = i <= j ? w[i + j * m] : 0.0;
            v[i + j * n] = i == j ? 1.0 : 0.0;
        }
    }
    ct__dc_jacobi(n, g, v, r);
    for (int64_t j = 0; j < n; j++) {
        s[j] = ct__dc_nrm2(g + j * n, n);
    }
    for (int64_t i = 0; i + 1 < n; i++) { /* sort descending, columns along */
        int64_t k = i;
        for (int64_t j = i + 1; j < n; j++) {
            k = s[j] > s[k] ? j : k;
        }
        if (k != i) {
            double t = s[k];
            s[k] = s[i];
            s[i] = t;
            for (int64_t l = 0; l < n; l++) {
                t = g[l + i * n];
                g[l + i * n] = g[l + k * n];
                g[l + k * n] = t;
                t = v[l + i * n];
                v[l + i * n] = v[l + k * n];
                v[l + k * n] = t;
            }
        }
    }
    int64_t rank = 0;
    for (int64_t j = 0; j < n && s[j] > 0; j++, rank++) {
        for (int64_t i = 0; i < n; i++) {
            g[i + j * n] /= s[j];
        }
    }
    ct__dc_complete(n, n, rank, g, r);
    for (int64_t j = 0; j < uc; j++) { /* u = [U_r 0; 0 I], then Q u */
        for (int64_t i = 0; i < m; i++) {
            u[i + j * m] = j < n ? (i < n ? g[i + j * n] : 0.0) : (i == j ? 1.0 : 0.0);
        }
    }
    ct__dc_apply_q_c(m, uc, n, w, m, tau, u, m);
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < n; i++) {
            vt[i + j * n] = v[j + i * n];
        }
    }
    return 0;
}

CT__VECTORIZE_END

/* ---- the factorizations on either backend (work dtype wd, column-major) ----------------- */
/* getrf of a (n x n, ld n) in the work dtype: 0, its info, or -1 when out of memory. With
   LAPACK, OpenBLAS's above CT__DC_BLAS1_MAX (faster there: at 1024, 8.8 ms vs 10.1 on one
   thread, 7.7 vs 10.1 on two). */
static int ct__dc_getrf(ct_dtype wd, int64_t n, void *a, int *piv)
{
#if CT__LAPACK
    if (n > CT__DC_BLAS1_MAX) {
        int nn = (int)n, info = 0;
        if (wd == CT_FLOAT32) {
            sgetrf_(&nn, &nn, (float *)a, &nn, piv, &info);
        } else {
            dgetrf_(&nn, &nn, (double *)a, &nn, piv, &info);
        }
        return info;
    }
#endif
    void *inv = ct__dc_alloc(wd, CT__DC_TINV(n));
    int info = -1;
    if (!inv) {
        return info;
    }
#if CT__LAPACK
    if (wd == CT_FLOAT32) {
        info = ct__dc_getrf_f32(n, (float *)a, piv, (float *)inv);
    }
#endif
    if (wd == CT_FLOAT64) {
        info = ct__dc_getrf_f64(n, (double *)a, piv, (double *)inv);
    }
    ct__free(inv);
    return info;
}

/* Rows of the right-hand sides per task of the LU solve. */
#define CT__DC_ROWS 64

/* ct__dc_gesv_t's solve: x holds 2 k n elements of scratch, task [begin, end)'s at
   x + begin * n and x + (k + begin) * n. */
typedef struct ct__dc_getrs_ctx {
    ct_dtype wd;
    int64_t n, k;
    const void *a, *inv;
    const int *piv;
    void *y, *x;
} ct__dc_getrs_ctx;

/* Rows [begin, end) of ct__dc_gesv_t's y. */
static void ct__dc_getrs_chunk(int64_t begin, int64_t end, void *ctx)
{
    const ct__dc_getrs_ctx *c = (const ct__dc_getrs_ctx *)ctx;
    int64_t r = end - begin, nk = c->n * c->k;
#if CT__LAPACK
    if (c->wd == CT_FLOAT32) {
        float *p = (float *)c->x + begin * c->n;
        ct__dc_getrs_rows_f32(c->n, r, (const float *)c->a, c->piv, (const float *)c->inv,
                              (float *)c->y + begin, c->k, p, p + nk);
        return;
    }
#endif
    double *p = (double *)c->x + begin * c->n;
    ct__dc_getrs_rows_f64(c->n, r, (const double *)c->a, c->piv, (const double *)c->inv,
                          (double *)c->y + begin, c->k, p, p + nk);
}

/* Solves M Z = R through the LU of w = M^T (n x n, overwritten): y (k x n, ld k) holds R^T and
   becomes Z^T = R^T U^-1 L^-1 P^T (M^T = P L U). In this form a row-major M, R and Z are plain
   copies of column-major buffers. The solve runs on ctorch's GEMM and pool in blocks of
   CT__DC_ROWS rows of y (the same blocks for any thread count). Returns getrf's info (y not
   solved then), or -1 when out of memory. */
static int ct__dc_gesv_t(ct_dtype wd, int64_t n, int64_t k, void *w, int *piv, void *y)
{
    int info = ct__dc_getrf(wd, n, w, piv);
    void *x = info == 0 ? ct__dc_alloc(wd, 2 * k * n + 2 * CT__DC_TINV(n)) : NULL;
    if (info != 0 || !x) {
        return info != 0 ? info : -1;
    }
    void *inv = (char *)x + (size_t)(2 * k * n) * ct_dtype_size(wd);
    ct__dc_trinv_ctx t = {n, w, inv};
    int64_t nb = n / CT__DC_TB + (n % CT__DC_TB != 0);
#if CT__LAPACK
    if (wd == CT_FLOAT32) {
        ct__parallel_for(2 * nb, 1, ct__dc_trinv_blocks_f32, &t);
    }
#endif
    if (wd == CT_FLOAT64) {
        ct__parallel_for(2 * nb, 1, ct__dc_trinv_blocks_f64, &t);
    }
    ct__dc_getrs_ctx c = {wd, n, k, w, inv, piv, y, x};
    ct__parallel_for(k, CT__DC_ROWS, ct__dc_getrs_chunk, &c);
    ct__free(x);
    return 0;
}

/* b (n x k, ld n) = T^-1 b, T the upper or lower (unit) triangle of a (n x n). */
static void ct__dc_trsm(ct_dtype wd, bool upper, bool unit, int64_t n, int64_t k, const void *a,
                        void *b)
{
#if CT__LAPACK
    int nn = (int)n, kk = (int)k, ld = n > 1 ? (int)n : 1;
    const char *ul = upper ? "U" : "L", *dg = unit ? "U" : "N";
    if (n == 0 || k == 0) {
        return;
    }
    if (wd == CT_FLOAT32) {
        float one = 1;
        strsm_("L", ul, "N", dg, &nn, &kk, &one, (const float *)a, &ld, (float *)b, &ld, 1, 1, 1,
               1);
    } else {
        double one = 1;
        dtrsm_("L", ul, "N", dg, &nn, &kk, &one, (const double *)a, &ld, (double *)b, &ld, 1, 1,
               1, 1);
    }
#else
    (void)wd;
    ct__dc_trsm_c(upper, unit, n, k, (const double *)a, n, (double *)b, n);
#endif
}

static int ct__dc_potrf(ct_dtype wd, int64_t n, void *a)
{
#if CT__LAPACK
    int nn = (int)n, ld = n > 1 ? (int)n : 1, info = 0;
    if (wd == CT_FLOAT32) {
        spotrf_("L", &nn, (float *)a, &ld, &info, 1);
    } else {
        dpotrf_("L", &nn, (double *)a, &ld, &info, 1);
    }
    for (int64_t j = 1; j < n; j++) { /* potrf leaves the strict upper triangle as it was */
        for (int64_t i = 0; i < j; i++) {
            ct__dc_st(a, wd, i + j * n, 0.0);
        }
    }
    return info;
#else
    (void)wd;
    return ct__dc_potrf_c(n, (double *)a, n);
#endif
}

#if CT__LAPACK
/* The workspace size LAPACK asked for in a query (work[0]), at least 1. */
static int ct__dc_lwork(const void *work, ct_dtype wd)
{
    double w = ct__dc_ld(work, wd, 0);
    return w > 1 ? (int)w : 1;
}
#endif

/* QR of a (m x n, ld m, overwritten): r (rr x n, ld rr) = the first rr rows of R (zeros below
   the diagonal); q (m x qc, ld m) = Q's first qc columns, or nothing when q is NULL. Returns
   0, or -1 when out of memory. */
static int ct__dc_qr(ct_dtype wd, int64_t m, int64_t n, void *a, void *r, int64_t rr, void *q,
                     int64_t qc)
{
    int64_t k = m < n ? m : n;
    void *tau = ct__dc_alloc(wd, k);
    if (!tau) {
        return -1;
    }
#if CT__LAPACK
    int mm = (int)m, nn = (int)n, kk = (int)k, lda = m > 1 ? (int)m : 1, qq = (int)qc, info = 0;
    int query = -1, lwork;
    double wq[2];
    if (wd == CT_FLOAT32) {
        sgeqrf_(&mm, &nn, (float *)a, &lda, (float *)tau, (float *)wq, &query, &info);
    } else {
        dgeqrf_(&mm, &nn, (double *)a, &lda, (double *)tau, wq, &query, &info);
    }
    lwork = ct__dc_lwork(wq, wd);
    void *work = ct__dc_alloc(wd, lwork);
    if (!work) {
        ct__free(tau);
        return -1;
    }
    if (wd == CT_FLOAT32) {
        sgeqrf_(&mm, &nn, (float *)a, &lda, (float *)tau, (float *)work, &lwork, &info);
    } else {
        dgeqrf_(&mm, &nn, (double *)a, &lda, (double *)tau, (double *)work, &lwork, &info);
    }
    ct__free(work);
#else
    ct__dc_geqrf_c(m, n, (double *)a, m, (double *)tau);
#endif
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < rr; i++) {
            ct__dc_st(r, wd, i + j * rr, i <= j && i < m ? ct__dc_ld(a, wd, i + j * m) : 0.0);
        }
    }
    if (q) {
#if CT__LAPACK
        for (int64_t j = 0; j < qc; j++) { /* the reflectors, then orgqr in place */
            for (int64_t i = 0; i < m; i++) {
                ct__dc_st(q, wd, i + j * m, j < n ? ct__dc_ld(a, wd, i + j * m) : 0.0);
            }
        }
        if (wd == CT_FLOAT32) {
            sorgqr_(&mm, &qq, &kk, (float *)q, &lda, (float *)tau, (float *)wq, &query, &info);
        } else {
            dorgqr_(&mm, &qq, &kk, (double *)q, &lda, (double *)tau, wq, &query, &info);
        }
        lwork = ct__dc_lwork(wq, wd);
        work = ct__dc_alloc(wd, lwork);
        if (!work) {
            ct__free(tau);
            return -1;
        }
        if (m > 0 && qc > 0 && wd == CT_FLOAT32) {
            sorgqr_(&mm, &qq, &kk, (float *)q, &lda, (float *)tau, (float *)work, &lwork, &info);
        } else if (m > 0 && qc > 0) {
            dorgqr_(&mm, &qq, &kk, (double *)q, &lda, (double *)tau, (double *)work, &lwork,
                    &info);
        }
        ct__free(work);
#else
        ct__dc_orgqr_c(m, qc, k, (const double *)a, m, (const double *)tau, (double *)q, m);
#endif
    }
    ct__free(tau);
    return 0;
}

/* Eigenvalues w (n) ascending and eigenvectors (a's columns) of the symmetric a (n x n, both
   triangles set). Returns 0, LAPACK's info (no convergence), or -1 when out of memory. */
static int ct__dc_syev(ct_dtype wd, int64_t n, void *a, void *w)
{
#if CT__LAPACK
    int nn = (int)n, ld = n > 1 ? (int)n : 1, info = 0, query = -1, liwork = 0, lwork;
    double wq[2];
    if (wd == CT_FLOAT32) {
        ssyevd_("V", "L", &nn, (float *)a, &ld, (float *)w, (float *)wq, &query, &liwork, &query,
                &info, 1, 1);
    } else {
        dsyevd_("V", "L", &nn, (double *)a, &ld, (double *)w, wq, &query, &liwork, &query, &info,
                1, 1);
    }
    lwork = ct__dc_lwork(wq, wd);
    liwork = liwork > 1 ? liwork : 1;
    void *work = ct__dc_alloc(wd, lwork);
    int *iwork = (int *)ct__malloc(sizeof(int) * (size_t)liwork);
    if (work && iwork && wd == CT_FLOAT32) {
        ssyevd_("V", "L", &nn, (float *)a, &ld, (float *)w, (float *)work, &lwork, iwork,
                &liwork, &info, 1, 1);
    } else if (work && iwork) {
        dsyevd_("V", "L", &nn, (double *)a, &ld, (double *)w, (double *)work, &lwork, iwork,
                &liwork, &info, 1, 1);
    }
    info = work && iwork ? info : -1;
    ct__free(work);
    ct__free(iwork);
    return info;
#else
    (void)wd;
    double *e = (double *)ct__dc_alloc(CT_FLOAT64, n);
    if (!e) {
        return -1;
    }
    int info = ct__dc_syev_c(n, (double *)a, (double *)w, e);
    ct__free(e);
    return info;
#endif
}

#if CT__LAPACK
/* C = alpha A B + beta C in the work dtype on ctorch's GEMM (strides as ct__gemm_f32's). */
static void ct__dc_gemm(ct_dtype wd, int64_t M, int64_t N, int64_t K, double alpha,
                        const void *A, int64_t rsa, int64_t csa, const void *B, int64_t rsb,
                        int64_t csb, double beta, void *C, int64_t rsc, int64_t csc)
{
    if (wd == CT_FLOAT32) {
        ct__gemm_f32(M, N, K, (float)alpha, (const float *)A, rsa, csa, (const float *)B, rsb,
                     csb, (float)beta, (float *)C, rsc, csc);
    } else {
        ct__gemm_f64(M, N, K, alpha, (const double *)A, rsa, csa, (const double *)B, rsb, csb,
                     beta, (double *)C, rsc, csc);
    }
}

/* Reflectors per block of ct__dc_orm. */
#define CT__DC_ORM_NB 32

/* ormbr's product on ctorch's GEMM: with H(i) = I - tau[i] v_i v_i^T (v_i of length q: zero
   before i, one at i, v_i[p] = a[p * sp + i * si] after), left: c (q x nc, ld ldc) :=
   H(0) ... H(k-1) c (Q c); right: c (nc x q) := c H(k-1) ... H(0) (c P^T). In blocks of
   CT__DC_ORM_NB reflectors from the last, each V T V^T with V the block copied dense and T
   from larft. work: CT__DC_ORM_NB (q + CT__DC_ORM_NB + 2 nc) elements. */
static void ct__dc_orm(ct_dtype wd, bool left, int q, int nc, int k, const void *a, int64_t sp,
                       int64_t si, const void *tau, void *c, int ldc, void *work)
{
    size_t es = ct_dtype_size(wd);
    int nb = CT__DC_ORM_NB;
    char *v = (char *)work, *t = v + (size_t)q * (size_t)nb * es;
    char *w = t + (size_t)(nb * nb) * es, *w2 = w + (size_t)nb * (size_t)nc * es;
    for (int j0 = k > 0 ? (k - 1) / nb * nb : -1; j0 >= 0; j0 -= nb) {
        int jb = k - j0 < nb ? k - j0 : nb, r = q - j0;
        for (int j = 0; j < jb; j++) {
            for (int i = 0; i < r; i++) {
                int64_t at = (j0 + i) * sp + (j0 + j) * si;
                ct__dc_st(v, wd, i + (int64_t)j * r, i > j ? ct__dc_ld(a, wd, at) : i == j);
            }
        }
        memset(t, 0, (size_t)(nb * nb) * es);
        const char *tj = (const char *)tau + (size_t)j0 * es;
        if (wd == CT_FLOAT32) {
            slarft_("F", "C", &r, &jb, (float *)v, &r, (const float *)tj, (float *)t, &nb, 1, 1);
        } else {
            dlarft_("F", "C", &r, &jb, (double *)v, &r, (const double *)tj, (double *)t, &nb, 1,
                    1);
        }
        if (left) { /* W^T = C^T V, T W, C -= V T W (c's rows from j0) */
            char *cj = (char *)c + (size_t)j0 * es;
            ct__dc_gemm(wd, nc, jb, r, 1, cj, ldc, 1, v, 1, r, 0, w, jb, 1);
            ct__dc_gemm(wd, jb, nc, jb, 1, t, 1, nb, w, 1, jb, 0, w2, 1, jb);
            ct__dc_gemm(wd, r, nc, jb, -1, v, 1, r, w2, 1, jb, 1, cj, 1, ldc);
        } else { /* W = C V, W T^T, C -= W T^T V^T (c's columns from j0) */
            char *cj = (char *)c + (size_t)j0 * (size_t)ldc * es;
            ct__dc_gemm(wd, nc, jb, r, 1, cj, 1, ldc, v, 1, r, 0, w, 1, nc);
            ct__dc_gemm(wd, nc, jb, jb, 1, w, 1, nc, t, nb, 1, 0, w2, 1, nc);
            ct__dc_gemm(wd, nc, r, jb, -1, w2, 1, nc, v, r, 1, 1, cj, 1, ldc);
        }
    }
}

/* One half of gesdd's last step (ct__dc_orm): Q applied to U (part 0, workspace at work) or
   P^T to Vh's columns 1.. (part 1, workspace at work + qwork; gebrd's P has n - 1 reflectors,
   in a's rows right of the superdiagonal). */
typedef struct ct__dc_ormbr_ctx {
    ct_dtype wd;
    int m, n, uc;
    int64_t qwork;
    const void *a, *tauq, *taup;
    void *u, *vt, *work;
} ct__dc_ormbr_ctx;

static void ct__dc_ormbr_part(int64_t begin, int64_t end, void *ctx)
{
    const ct__dc_ormbr_ctx *x = (const ct__dc_ormbr_ctx *)ctx;
    size_t es = ct_dtype_size(x->wd);
    for (int64_t t = begin; t < end; t++) {
        if (t == 0) {
            ct__dc_orm(x->wd, true, x->m, x->uc, x->n, x->a, 1, x->m, x->tauq, x->u, x->m,
                       x->work);
        } else {
            ct__dc_orm(x->wd, false, x->n - 1, x->n, x->n - 1, (const char *)x->a + x->m * es,
                       x->m, 1, x->taup, (char *)x->vt + x->n * es, x->n,
                       (char *)x->work + (size_t)x->qwork * es);
        }
    }
}

/* a := a * to / from as lascl (no overflow on the way); a (m x n, ld m). */
static void ct__dc_lascl(ct_dtype wd, double from, double to, int m, int n, void *a)
{
    int zero = 0, ld = m > 1 ? m : 1, info = 0;
    if (wd == CT_FLOAT32) {
        float f = (float)from, t = (float)to;
        slascl_("G", &zero, &zero, &f, &t, &m, &n, (float *)a, &ld, &info, 1);
    } else {
        dlascl_("G", &zero, &zero, &from, &to, &m, &n, (double *)a, &ld, &info, 1);
    }
}

/* bdsdc's smallest subproblem, ILAENV(9, 'xBDSDC'): lasd0 solves orders up to it with lasdq. */
#define CT__DC_SMLSIZ 25

/* ct__dc_bdsdc's two halves of lasd0's root, part 0 the upper n[0] rows (n[0] x (n[0] + 1)),
   part 1 the lower n[1] rows (square), each in its own diagonal block of u and vt with its own
   workspace: work 3 m^2 + 2 m elements (m: the part's columns), iwork 8 n[part]. */
typedef struct ct__dc_lasd0_ctx {
    ct_dtype wd;
    int n[2], ldu, ldvt, info[2];
    char *d, *e, *u, *vt, *work;
    int *iwork;
} ct__dc_lasd0_ctx;

static void ct__dc_lasd0_part(int64_t begin, int64_t end, void *ctx)
{
    ct__dc_lasd0_ctx *x = (ct__dc_lasd0_ctx *)ctx;
    size_t es = ct_dtype_size(x->wd);
    int m0 = x->n[0] + 1, smlsiz = CT__DC_SMLSIZ;
    for (int64_t t = begin; t < end; t++) {
        int n = x->n[t], sqre = t == 0, *iwork = x->iwork + (t == 0 ? 0 : 8 * x->n[0]);
        size_t r = t == 0 ? 0 : (size_t)m0; /* the part's first row and column */
        char *d = x->d + r * es, *e = x->e + r * es;
        char *u = x->u + (r + r * (size_t)x->ldu) * es, *vt = x->vt + (r + r * (size_t)x->ldvt) * es;
        char *work = x->work + (t == 0 ? 0 : (size_t)(3 * m0 * m0 + 2 * m0)) * es;
        if (x->wd == CT_FLOAT32) {
            slasd0_(&n, &sqre, (float *)d, (float *)e, (float *)u, &x->ldu, (float *)vt,
                    &x->ldvt, &smlsiz, iwork, (float *)work, &x->info[t]);
        } else {
            dlasd0_(&n, &sqre, (double *)d, (double *)e, (double *)u, &x->ldu, (double *)vt,
                    &x->ldvt, &smlsiz, iwork, (double *)work, &x->info[t]);
        }
    }
}

/* a's n x n block (ld lda) := the identity. */
static void ct__dc_eye(ct_dtype wd, int n, void *a, int lda)
{
    size_t es = ct_dtype_size(wd);
    for (int j = 0; j < n; j++) {
        memset((char *)a + (size_t)j * (size_t)lda * es, 0, (size_t)n * es);
        ct__dc_st(a, wd, j + (int64_t)j * lda, 1.0);
    }
}

/* Swaps the n elements at a (stride sa) and b (stride sb), each es bytes. */
static void ct__dc_swap(size_t es, int n, char *a, size_t sa, char *b, size_t sb)
{
    char t[sizeof(double)];
    for (int i = 0; i < n; i++, a += sa * es, b += sb * es) {
        memcpy(t, a, es);
        memcpy(a, b, es);
        memcpy(b, t, es);
    }
}

/* lasd1's merge of ct__dc_bdsdc's halves (n[0] + 1 + n[1] = n; d[n[0]], e[n[0]] join them),
   their permutations to descending order read where lasd0 leaves them (iwork[3 n], after its
   tree; the identity below CT__DC_SMLSIZ, lasdq's sorted result); iwork 9 n. */
static int ct__dc_lasd1(ct_dtype wd, const ct__dc_lasd0_ctx *x, int *iwork)
{
    int nl = x->n[0], nr = x->n[1], n = nl + 1 + nr, sqre = 0, info = 0;
    int *idxq = iwork + 8 * n, *side[2] = {iwork, iwork + 8 * nl};
    for (int t = 0; t < 2; t++) {
        for (int j = 0; j < x->n[t]; j++) {
            idxq[t * (nl + 1) + j] = x->n[t] > CT__DC_SMLSIZ ? side[t][3 * x->n[t] + j] : j + 1;
        }
    }
    idxq[nl] = 0; /* the joining row's: lasd1 never reads it */
    double ab[2];
    ct__dc_st(ab, wd, 0, ct__dc_ld(x->d, wd, nl));
    ct__dc_st(ab, wd, 1, ct__dc_ld(x->e, wd, nl));
    if (wd == CT_FLOAT32) {
        float *f = (float *)ab;
        slasd1_(&nl, &nr, &sqre, (float *)x->d, f, f + 1, (float *)x->u, &x->ldu,
                (float *)x->vt, &x->ldvt, idxq, iwork, (float *)x->work, &info);
    } else {
        dlasd1_(&nl, &nr, &sqre, (double *)x->d, ab, ab + 1, (double *)x->u, &x->ldu,
                (double *)x->vt, &x->ldvt, idxq, iwork, (double *)x->work, &info);
    }
    return info;
}

/* bdsdc's last step: d (n) into descending order by selection sort, swapping u's columns and
   vt's rows (n elements each) alike. */
static void ct__dc_bdsdc_sort(ct_dtype wd, int n, char *d, char *u, int ldu, char *vt, int ldvt)
{
    size_t es = ct_dtype_size(wd);
    for (int i = 0; i < n - 1; i++) {
        int kk = i;
        double p = ct__dc_ld(d, wd, i);
        for (int j = i + 1; j < n; j++) {
            double v = ct__dc_ld(d, wd, j);
            kk = v > p ? j : kk;
            p = v > p ? v : p;
        }
        if (kk != i) {
            ct__dc_swap(es, 1, d + (size_t)i * es, 1, d + (size_t)kk * es, 1);
            ct__dc_swap(es, n, u + (size_t)i * (size_t)ldu * es, 1,
                        u + (size_t)kk * (size_t)ldu * es, 1);
            ct__dc_swap(es, n, vt + (size_t)i * es, (size_t)ldvt, vt + (size_t)kk * es,
                        (size_t)ldvt);
        }
    }
}

/* The levels of lasd0's tree of order n (lasdt's count, in the work dtype's log; 0: lasdq). */
static int ct__dc_lasd0_levels(ct_dtype wd, int n)
{
    if (n <= CT__DC_SMLSIZ) {
        return 0;
    }
    if (wd == CT_FLOAT32) {
        return (int)(logf((float)n / (float)(CT__DC_SMLSIZ + 1)) / logf(2.0f)) + 1;
    }
    return (int)(log((double)n / (double)(CT__DC_SMLSIZ + 1)) / log(2.0)) + 1;
}

/* bdsdc("U", "I") of the upper bidiagonal (d, e) of order n: the singular values in d
   (descending), the vectors in u's and vt's n x n blocks (ld ldu, ldvt); work 3 n^2 + 4 n
   elements, iwork 9 n. Returns bdsdc's info. When e has no negligible entry (one subproblem)
   and both halves of lasd0's root have one level less than its tree, bdsdc's steps are
   repeated here (scaled to norm 1, tiny d raised to eps, lasd0, unscaled, selection-sorted)
   with lasd0's root split in two: lasd0 of each half as two tasks on ctorch's pool, then lasd1
   merges them, which is lasd0's own computation of the whole (bdsdc's bits, at any thread
   count). */
static int ct__dc_bdsdc(ct_dtype wd, int n, void *d, void *e, void *u, int ldu, void *vt,
                        int ldvt, void *work, int *iwork)
{
    size_t es = ct_dtype_size(wd);
    double nrm = 0, eps = wd == CT_FLOAT32 ? (double)slamch_("E", 1) : dlamch_("E", 1);
    for (int i = 0; i < 2 * n - 1; i++) {
        nrm = fmax(nrm, fabs(i < n ? ct__dc_ld(d, wd, i) : ct__dc_ld(e, wd, i - n)));
    }
    int lvl = ct__dc_lasd0_levels(wd, n) - 1;
    bool split = nrm > 0 && lvl > 0 && ct__dc_lasd0_levels(wd, n / 2) == lvl &&
                 ct__dc_lasd0_levels(wd, n - n / 2 - 1) == lvl;
    if (split) { /* scaled, keeping the input in work in case e has a negligible entry */
        memcpy(work, d, (size_t)n * es);
        memcpy((char *)work + (size_t)n * es, e, (size_t)(n - 1) * es);
        ct__dc_lascl(wd, nrm, 1, n, 1, d);
        ct__dc_lascl(wd, nrm, 1, n - 1, 1, e);
    }
    int info = 0;
    bool scaled = split;
    for (int i = 0; split && i < n - 1; i++) {
        split = fabs(ct__dc_ld(e, wd, i)) >= eps;
    }
    if (!split) {
        if (scaled) {
            memcpy(d, work, (size_t)n * es);
            memcpy(e, (char *)work + (size_t)n * es, (size_t)(n - 1) * es);
        }
        if (wd == CT_FLOAT32) {
            sbdsdc_("U", "I", &n, (float *)d, (float *)e, (float *)u, &ldu, (float *)vt, &ldvt,
                    NULL, NULL, (float *)work, iwork, &info, 1, 1);
        } else {
            dbdsdc_("U", "I", &n, (double *)d, (double *)e, (double *)u, &ldu, (double *)vt,
                    &ldvt, NULL, NULL, (double *)work, iwork, &info, 1, 1);
        }
        return info;
    }
    for (int i = 0; i < n; i++) {
        double v = ct__dc_ld(d, wd, i);
        if (fabs(v) < eps) {
            ct__dc_st(d, wd, i, copysign(eps, v));
        }
    }
    ct__dc_eye(wd, n, u, ldu);
    ct__dc_eye(wd, n, vt, ldvt);
    ct__dc_lasd0_ctx x = {wd, {n / 2, n - n / 2 - 1}, ldu, ldvt, {0, 0}, (char *)d, (char *)e,
                          (char *)u, (char *)vt, (char *)work, iwork};
    ct__parallel_for(2, 1, ct__dc_lasd0_part, &x);
    info = x.info[0] ? x.info[0] : x.info[1] ? x.info[1] : ct__dc_lasd1(wd, &x, iwork);
    if (info != 0) {
        return info;
    }
    ct__dc_lascl(wd, 1, nrm, n, 1, d);
    ct__dc_bdsdc_sort(wd, n, (char *)d, (char *)u, ldu, (char *)vt, ldvt);
    return 0;
}

/* gesdd's own path for m >= n not much above n ("path 5": gebrd, bdsdc, ormbr; A scaled into
   [smlnum, bignum] first, as gesdd), bdsdc's halves and its last step, the two ormbr (on
   ctorch's GEMM, ct__dc_orm: 0.46 and 0.40 ms against OpenBLAS's 0.70 and 0.48 at 256), as
   two tasks each on ctorch's pool (each the same computation at any thread count; in halves of
   U's columns and Vh's rows ormbr took 1.18 times as long on one thread). Arguments and
   returns as gesvd's. */
static int ct__dc_gesdd5(ct_dtype wd, int m, int n, void *a, void *s, void *u, void *vt,
                         bool full)
{
    size_t es = ct_dtype_size(wd);
    int uc = full ? m : n, info = 0, query = -1, lwork = 1;
    double anrm = 0, eps = wd == CT_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    double smlnum = sqrt(wd == CT_FLOAT32 ? FLT_MIN : DBL_MIN) / eps, bignum = 1 / smlnum;
    for (int64_t i = 0; i < (int64_t)m * n; i++) {
        double v = fabs(ct__dc_ld(a, wd, i));
        anrm = v > anrm ? v : anrm;
    }
    double scl = anrm > 0 && anrm < smlnum ? smlnum : anrm > bignum ? bignum : 0;
    if (scl != 0) {
        ct__dc_lascl(wd, anrm, scl, m, n, a);
    }
    double wq[2];
    if (wd == CT_FLOAT32) { /* workspace query: gebrd */
        sgebrd_(&m, &n, (float *)a, &m, NULL, NULL, NULL, NULL, (float *)wq, &query, &info);
    } else {
        dgebrd_(&m, &n, (double *)a, &m, NULL, NULL, NULL, NULL, wq, &query, &info);
    }
    int64_t nb = CT__DC_ORM_NB, qwork = nb * (m + nb + 2 * uc), pwork = nb * (3 * n + nb);
    lwork = ct__dc_lwork(wq, wd);
    lwork = lwork > 3 * n * n + 4 * n ? lwork : 3 * n * n + 4 * n; /* bdsdc's */
    lwork = lwork > qwork + pwork ? lwork : (int)(qwork + pwork);
    void *work = ct__dc_alloc(wd, lwork + 4 * (int64_t)n);
    int *iwork = (int *)ct__malloc(sizeof(int) * (size_t)(9 * n));
    if (!work || !iwork) {
        ct__free(work);
        ct__free(iwork);
        return -1;
    }
    char *e = (char *)work + (size_t)lwork * es, *tauq = e + (size_t)n * es;
    char *taup = tauq + (size_t)n * es;
    memset(u, 0, (size_t)m * (size_t)uc * es);
    for (int i = n; i < uc; i++) { /* full U: the identity below the bidiagonal's block */
        ct__dc_st(u, wd, i + (int64_t)i * m, 1.0);
    }
    if (wd == CT_FLOAT32) {
        sgebrd_(&m, &n, (float *)a, &m, (float *)s, (float *)e, (float *)tauq, (float *)taup,
                (float *)work, &lwork, &info);
    } else {
        dgebrd_(&m, &n, (double *)a, &m, (double *)s, (double *)e, (double *)tauq,
                (double *)taup, (double *)work, &lwork, &info);
    }
    info = ct__dc_bdsdc(wd, n, s, e, u, m, vt, n, work, iwork);
    if (info == 0) {
        ct__dc_ormbr_ctx x = {wd, m, n, uc, qwork, a, tauq, taup, u, vt, work};
        ct__parallel_for(2, 1, ct__dc_ormbr_part, &x);
        if (scl != 0) {
            ct__dc_lascl(wd, scl, anrm, n, 1, s);
        }
    }
    ct__free(work);
    ct__free(iwork);
    return info;
}
#endif

/* SVD of a (m x n, ld m; destroyed; m >= n on the portable path): s (k = min(m, n))
   descending, u (m x uc, ld m), vt (vr x n, ld vr), uc = m and vr = n when full, else k.
   Returns 0, LAPACK's info, or -1 when out of memory. */
static int ct__dc_gesvd(ct_dtype wd, int64_t m, int64_t n, void *a, void *s, void *u, void *vt,
                        bool full)
{
    int64_t k = m < n ? m : n, uc = full ? m : k, vr = full ? n : k;
    if (k == 0) { /* no singular values; full U and Vh are identities (gesdd returns at once) */
        for (int64_t i = 0; i < m * uc; i++) {
            ct__dc_st(u, wd, i, i % (m + 1) == 0 ? 1.0 : 0.0);
        }
        for (int64_t i = 0; i < vr * n; i++) {
            ct__dc_st(vt, wd, i, i % (vr + 1) == 0 ? 1.0 : 0.0);
        }
        return 0;
    }
#if CT__LAPACK
    if (m >= n && m < n * 11 / 6 && m <= CT__DC_BLAS1_MAX) {
        return ct__dc_gesdd5(wd, (int)m, (int)n, a, s, u, vt, full);
    }
    int mm = (int)m, nn = (int)n, lda = m > 1 ? (int)m : 1, ldv = vr > 1 ? (int)vr : 1;
    int info = 0, query = -1, lwork;
    const char *job = full ? "A" : "S";
    double wq[2];
    int *iwork = (int *)ct__malloc(sizeof(int) * (size_t)(8 * k));
    if (!iwork) {
        return -1;
    }
    if (wd == CT_FLOAT32) {
        sgesdd_(job, &mm, &nn, (float *)a, &lda, (float *)s, (float *)u, &lda, (float *)vt, &ldv,
                (float *)wq, &query, iwork, &info, 1);
    } else {
        dgesdd_(job, &mm, &nn, (double *)a, &lda, (double *)s, (double *)u, &lda, (double *)vt,
                &ldv, wq, &query, iwork, &info, 1);
    }
    lwork = ct__dc_lwork(wq, wd);
    void *work = ct__dc_alloc(wd, lwork);
    if (work && wd == CT_FLOAT32) {
        sgesdd_(job, &mm, &nn, (float *)a, &lda, (float *)s, (float *)u, &lda, (float *)vt, &ldv,
                (float *)work, &lwork, iwork, &info, 1);
    } else if (work) {
        dgesdd_(job, &mm, &nn, (double *)a, &lda, (double *)s, (double *)u, &lda, (double *)vt,
                &ldv, (double *)work, &lwork, iwork, &info, 1);
    }
    info = work ? info : -1;
    ct__free(work);
    ct__free(iwork);
    return info;
#else
    (void)wd;
    (void)vr;
    double *scratch = (double *)ct__dc_alloc(CT_FLOAT64, n + 2 * n * n + n);
    if (!scratch) {
        return -1;
    }
    int info = ct__dc_gesvd_c(m, n, (double *)a, (double *)s, (double *)u, uc, (double *)vt,
                              scratch, scratch + n, scratch + n + n * n, scratch + n + 2 * n * n);
    ct__free(scratch);
    return info;
#endif
}

/* ---- checks and the batch runner ------------------------------------------------------- */
typedef enum ct__dc_id {
    CT__DC_DET,
    CT__DC_SLOGDET,
    CT__DC_LOGDET,
    CT__DC_INV,
    CT__DC_SOLVE,
    CT__DC_SOLVE_TRI,
    CT__DC_CHOLESKY,
    CT__DC_QR,
    CT__DC_EIGH,
    CT__DC_EIGVALSH,
    CT__DC_SVD,
    CT__DC_SVDVALS,
    CT__DC_MATRIX_NORM,
    CT__DC_NORM
} ct__dc_id;

/* PyTorch's names of the ops in messages, by ct__dc_id (the descriptors' variant). */
static const char *const ct__dc_names[] = {
    "linalg.det",      "linalg.slogdet", "logdet",      "linalg.inv",         "linalg.solve",
    "linalg.solve_triangular", "linalg.cholesky", "linalg.qr", "linalg.eigh", "linalg.eigvalsh",
    "linalg.svd",      "linalg.svdvals", "linalg.matrix_norm", "linalg.norm"};

static const char *ct__dc_name(const ct_op_call *c)
{
    return ct__dc_names[c->op->variant];
}

/* PyTorch's refusal of float16/bfloat16 input, by ct__dc_id: its CPU kernel's name ("lu_cpu")
   or, with a leading '.', the op's own low-precision check; NULL: the op takes them. */
static const char *const ct__dc_half_refusal[] = {
    "lu_cpu",         ".linalg.slogdet", ".logdet", ".linalg.inv", "lu_cpu",
    "triangular_solve_cpu", "cholesky_cpu", "geqrf_cpu", "linalg_eigh_cpu", "linalg_eigh_cpu",
    "linalg_svd_cpu", "linalg_svd_cpu", ".linalg.matrix_norm", NULL};

/* false + PyTorch's error when A is float16/bfloat16 and the op refuses them. */
static bool ct__dc_check_half(const ct_op_call *c, const ct_tensor *A)
{
    const char *r = ct__dc_half_refusal[c->op->variant];
    if (!r || (A->dtype != CT_FLOAT16 && A->dtype != CT_BFLOAT16)) {
        return true;
    }
    if (r[0] == '.') {
        ct__fail(CT_ERR_DTYPE, c->fn, "%s: Low precision dtypes not supported. Got %s", r + 1,
                 ct__dtype_title(A->dtype));
    } else {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"%s\" not implemented for '%s'", r,
                 ct__dtype_title(A->dtype));
    }
    return false;
}

/* A is a float tensor with at least 2 dims (square ones when square). */
static bool ct__dc_check(const ct_op_call *c, const ct_tensor *A, bool square)
{
    const char *name = ct__dc_name(c);
    if (A->ndim < 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: The input tensor A must have at least 2 dimensions.",
                 name);
        return false;
    }
    if (!ct_dtype_is_floating_point(A->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "%s: Expected a floating point or complex tensor as "
                 "input. Got %s", name, ct__dtype_title(A->dtype));
        return false;
    }
    if (c->op->variant != CT__DC_MATRIX_NORM && !ct__dc_check_half(c, A)) {
        return false;
    }
    if (square && A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2]) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: A must be batches of square matrices, but they are "
                 "%lld by %lld matrices", name, (long long)A->sizes[A->ndim - 2],
                 (long long)A->sizes[A->ndim - 1]);
        return false;
    }
    return true;
}

/* Makes output k of c: A's batch dims followed by the n_tail sizes tail. */
static bool ct__dc_output(ct_op_call *c, const ct_tensor *A, const int64_t *tail, int n_tail)
{
    int64_t s[CT_MAX_DIMS + 2];
    int nb = A->ndim - 2;
    memcpy(s, A->sizes, sizeof(int64_t) * (size_t)nb);
    if (n_tail > 0) {
        memcpy(s + nb, tail, sizeof(int64_t) * (size_t)n_tail);
    }
    return ct__op_output(c, s, nb + n_tail, A->dtype) != NULL;
}

/* One matrix of a batch: 0, a positive info (the op's failure), -1 when out of memory, or
   CT__DC_NONFINITE (an SVD of a matrix holding a NaN: gesdd's info). */
typedef int (*ct__dc_one_fn)(ct_op_call *c, int64_t b);
#define CT__DC_NONFINITE (-4)

typedef struct ct__dc_batch_ctx {
    ct_op_call *c;
    ct__dc_one_fn fn;
    int *info;
} ct__dc_batch_ctx;

static void ct__dc_chunk(int64_t begin, int64_t end, void *ctx)
{
    ct__dc_batch_ctx *x = (ct__dc_batch_ctx *)ctx;
    for (int64_t b = begin; b < end; b++) {
        x->info[b] = x->fn(x->c, b);
    }
}

/* Runs fn on the batch's matrices in parallel, then reports the first failure (in batch
   order) in PyTorch's words. Returns CT_OK or the error's status. */
static ct_status ct__dc_run(ct_op_call *c, int64_t batch, ct__dc_one_fn fn)
{
    int one = 0;
    int *info = batch > 1 ? (int *)ct__calloc(sizeof(int) * (size_t)batch) : &one;
    if (!info) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    ct__dc_batch_ctx x = {c, fn, info};
#if CT__LAPACK
    /* OpenBLAS on one thread while ctorch's pool runs a batch, and for matrices up to
       CT__DC_BLAS1_MAX; its setting is restored after. */
    const ct_tensor *A = c->inputs[0];
    int64_t big = A->sizes[A->ndim - 1] > A->sizes[A->ndim - 2] ? A->sizes[A->ndim - 1]
                                                                 : A->sizes[A->ndim - 2];
    int blas_threads = openblas_get_num_threads();
    bool single = blas_threads > 1 && (batch > 1 || big <= CT__DC_BLAS1_MAX);
    if (single) {
        openblas_set_num_threads(1);
    }
    ct__parallel_for(batch, 1, ct__dc_chunk, &x);
    if (single) {
        openblas_set_num_threads(blas_threads);
    }
#else
    ct__parallel_for(batch, 1, ct__dc_chunk, &x);
#endif
    int64_t bad = 0;
    while (bad < batch && info[bad] == 0) {
        bad++;
    }
    int code = bad < batch ? info[bad] : 0;
    if (info != &one) {
        ct__free(info);
    }
    if (code == 0) {
        return CT_OK;
    }
    if (code < 0 && code != CT__DC_NONFINITE) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    char where[64] = "";
    if (c->inputs[0]->ndim > 2) {
        snprintf(where, sizeof where, "(Batch element %lld): ", (long long)bad);
    }
    if (code == CT__DC_NONFINITE) { /* PyTorch's words for gesdd's info -4 */
        return ct__fail(CT_ERR_VALUE, c->fn, "linalg.svd: %sThe algorithm failed to converge "
                        "because the input matrix contained non-finite values.", where);
    }
    const char *name = ct__dc_name(c);
    switch ((ct__dc_id)c->op->variant) {
    case CT__DC_INV:
        return ct__fail(CT_ERR_VALUE, c->fn, "%s: %sThe diagonal element %d is zero, the "
                        "inversion could not be completed because the input matrix is singular.",
                        name, where, code);
    case CT__DC_SOLVE:
        return ct__fail(CT_ERR_VALUE, c->fn, "torch.%s: %sThe solver failed because the input "
                        "matrix is singular.", name, where);
    case CT__DC_CHOLESKY:
        return ct__fail(CT_ERR_VALUE, c->fn, "%s: %sThe factorization could not be completed "
                        "because the input is not positive-definite (the leading minor of order "
                        "%d is not positive-definite).", name, where, code);
    default:
        return ct__fail(CT_ERR_VALUE, c->fn, "%s: %sThe algorithm failed to converge because "
                        "the input matrix is ill-conditioned or has too many repeated %s (error "
                        "code: %d).", name, where,
                        c->op->variant == CT__DC_EIGH ? "eigenvalues" : "singular values", code);
    }
}

/* ---- det, slogdet ---------------------------------------------------------------------- */
/* Square A -> det (*), or sign and logabsdet (*). */
static bool ct__det_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    if (!ct__dc_check(c, A, true)) {
        return false;
    }
    c->dtype = A->dtype;
    return ct__dc_output(c, A, NULL, 0) &&
           (c->op->variant != CT__DC_SLOGDET || ct__dc_output(c, A, NULL, 0));
}

/* det = (-1)^swaps prod(U's diagonal), from the LU of matrix b. */
static int ct__det_one(ct_op_call *c, int64_t b)
{
    const ct_tensor *A = c->inputs[0];
    int64_t n = A->sizes[A->ndim - 1];
    ct_dtype wd = ct__dc_wd(A->dtype);
    void *a = ct__dc_alloc(wd, n * n);
    int *piv = (int *)ct__malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!a || !piv) {
        ct__free(a);
        ct__free(piv);
        return -1;
    }
    ct__dc_get(a, wd, n, A, A->sizes, A->ndim - 2, b, true); /* det(A^T) = det(A) */
    if (ct__dc_getrf(wd, n, a, piv) < 0) {
        ct__free(a);
        ct__free(piv);
        return -1;
    }
    double sign = 1, prod = 1, logabs = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = ct__dc_ld(a, wd, i + i * n);
        sign = (piv[i] != i + 1) != (d < 0) ? -sign : sign;
        sign = d == 0 ? 0 : sign;
        prod *= fabs(d);
        logabs += log(fabs(d));
    }
    if (c->op->variant == CT__DC_DET) {
        ct__dc_st(ct__data(c->outputs[0]), A->dtype, b, sign == 0 ? 0.0 : sign * prod);
    } else {
        ct__dc_st(ct__data(c->outputs[0]), A->dtype, b, sign);
        ct__dc_st(ct__data(c->outputs[1]), A->dtype, b, logabs);
    }
    ct__free(a);
    ct__free(piv);
    return 0;
}

static ct_status ct__det_kernel(ct_op_call *c)
{
    return ct__dc_run(c, ct__dc_batch(c->inputs[0]), ct__det_one);
}

/* ---- inv, solve, solve_triangular ------------------------------------------------------ */
static bool ct__inv_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    if (!ct__dc_check(c, A, true)) {
        return false;
    }
    c->dtype = A->dtype;
    return ct__dc_output(c, A, A->sizes + A->ndim - 2, 2);
}

static int ct__inv_one(ct_op_call *c, int64_t b)
{
    const ct_tensor *A = c->inputs[0];
    int64_t n = A->sizes[A->ndim - 1];
    ct_dtype wd = ct__dc_wd(A->dtype);
    void *a = ct__dc_alloc(wd, n * n), *x = ct__dc_alloc(wd, n * n);
    int *piv = (int *)ct__malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int info = -1;
    if (a && x && piv) { /* X^T = I A^-T */
        ct__dc_get(a, wd, n, A, A->sizes, A->ndim - 2, b, true);
        for (int64_t k = 0; k < n * n; k++) {
            ct__dc_st(x, wd, k, k % (n + 1) == 0 ? 1.0 : 0.0);
        }
        info = ct__dc_gesv_t(wd, n, n, a, piv, x);
    }
    if (info == 0) {
        ct__dc_put(c->outputs[0], b, true, x, wd, n);
    }
    ct__free(a);
    ct__free(x);
    ct__free(piv);
    return info;
}

static ct_status ct__inv_kernel(ct_op_call *c)
{
    return ct__dc_run(c, ct__dc_batch(c->inputs[0]), ct__inv_one);
}

/* solve's and solve_triangular's geometry, made by meta for the kernel. */
typedef struct ct__solve_state {
    int64_t batch[CT_MAX_DIMS]; /* the broadcast batch shape */
    int nb;
    bool vector;                  /* solve: B is a vector, seen as (*, n, 1) */
    const ct_tensor *bm;          /* B as a matrix */
    ct_tensor *xm;                /* the output as a matrix */
} ct__solve_state;

/* linalg.solve's vector case: B (n), or B (*, n) with A's batch shape. */
static bool ct__solve_is_vector(const ct_tensor *A, const ct_tensor *B)
{
    if (B->ndim == 1) {
        return true;
    }
    if (B->ndim != A->ndim - 1) {
        return false;
    }
    return memcmp(B->sizes, A->sizes, sizeof(int64_t) * (size_t)B->ndim) == 0;
}

/* Inputs A (*, n, n), B; attrs: solve left; solve_triangular upper, left, unitriangular. */
static bool ct__solve_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0], *B = c->inputs[1];
    ct__solve_state *s = (ct__solve_state *)c->state;
    bool tri = c->op->variant == CT__DC_SOLVE_TRI, left = tri ? c->attrs[1].i : c->attrs[0].i;
    const char *name = ct__dc_name(c);
    if (!ct__dc_check(c, A, true)) {
        return false;
    }
    if (A->dtype != B->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "%s: Expected A and B to have the same dtype, but found A "
                 "of type %s and B of type %s instead", name, ct__dtype_title(A->dtype),
                 ct__dtype_title(B->dtype));
        return false;
    }
    s->vector = !tri && ct__solve_is_vector(A, B);
    if (s->vector && !left) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: Vector broadcasting of the left hand side is not "
                 "supported for left=False. In this case linalg.solve is equivalent to B / "
                 "A.squeeze(-1)", name);
        return false;
    }
    if (!s->vector && B->ndim < 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: The input tensor B must have at least 2 dimensions.",
                 name);
        return false;
    }
    int64_t n = A->sizes[A->ndim - 1];
    int bnd = s->vector ? B->ndim - 1 : B->ndim - 2;
    int64_t br = s->vector ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2];
    int64_t bc = s->vector ? 1 : B->sizes[B->ndim - 1];
    if ((left ? br : bc) != n) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: Incompatible shapes of A and B for the equation %s "
                 "(%lldx%lld and %lldx%lld)", name, left ? "AX = B" : "XA = B", (long long)n,
                 (long long)n, (long long)br, (long long)bc);
        return false;
    }
    if (!ct__broadcast_shapes(c->fn, A->sizes, A->ndim - 2, B->sizes, bnd, s->batch, &s->nb)) {
        return false;
    }
    int64_t out[CT_MAX_DIMS + 2];
    memcpy(out, s->batch, sizeof(int64_t) * (size_t)s->nb);
    out[s->nb] = br;
    out[s->nb + 1] = bc;
    c->dtype = A->dtype;
    return ct__op_output(c, out, s->nb + (s->vector ? 1 : 2), A->dtype) != NULL;
}

/* One system. solve: left A X = B as X^T = B^T A^-T (A^T and B^T loaded, X^T stored: plain
   copies for row-major operands), right X A = B as X = B A^-1. solve_triangular: T X = B, or
   T^T X^T = B^T for the right side (T^T is lower for an upper T). */
static int ct__solve_one(ct_op_call *c, int64_t b)
{
    const ct_tensor *A = c->inputs[0];
    ct__solve_state *s = (ct__solve_state *)c->state;
    bool tri = c->op->variant == CT__DC_SOLVE_TRI, left = tri ? c->attrs[1].i : c->attrs[0].i;
    int64_t n = A->sizes[A->ndim - 1];
    int64_t k = s->xm->sizes[s->xm->ndim - (left ? 1 : 2)];
    bool trans = tri ? !left : left;
    ct_dtype wd = ct__dc_wd(A->dtype);
    void *a = ct__dc_alloc(wd, n * n), *x = ct__dc_alloc(wd, n * k);
    int *piv = (int *)ct__malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int info = -1;
    if (a && x && piv) {
        ct__dc_get(a, wd, n, A, s->batch, s->nb, b, trans);
        ct__dc_get(x, wd, tri ? n : k, s->bm, s->batch, s->nb, b, trans);
        if (tri) {
            bool upper = c->attrs[0].i;
            ct__dc_trsm(wd, left ? upper : !upper, c->attrs[2].i != 0, n, k, a, x);
            info = 0;
        } else {
            info = ct__dc_gesv_t(wd, n, k, a, piv, x);
        }
    }
    if (info == 0) {
        ct__dc_put(s->xm, b, trans, x, wd, tri ? n : k);
    }
    ct__free(a);
    ct__free(x);
    ct__free(piv);
    return info;
}

/* A (*, n) tensor seen as (*, n, 1) (a private view, released by the caller). */
static ct_tensor *ct__dc_as_column(const ct_tensor *t)
{
    int64_t sizes[CT_MAX_DIMS + 1], strides[CT_MAX_DIMS + 1];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    sizes[t->ndim] = 1;
    strides[t->ndim] = 1;
    return ct__tensor_over(t->storage, t->dtype, sizes, strides, t->ndim + 1, t->offset);
}

static ct_status ct__solve_kernel(ct_op_call *c)
{
    ct__solve_state *s = (ct__solve_state *)c->state;
    ct_tensor *bcol = s->vector ? ct__dc_as_column(c->inputs[1]) : NULL;
    ct_tensor *xcol = s->vector ? ct__dc_as_column(c->outputs[0]) : NULL;
    if (s->vector && (!bcol || !xcol)) {
        ct__release(bcol);
        ct__release(xcol);
        return ct_error_code();
    }
    s->bm = s->vector ? bcol : c->inputs[1];
    s->xm = s->vector ? xcol : c->outputs[0];
    ct_status st = ct__dc_run(c, ct__numel(s->batch, s->nb), ct__solve_one);
    ct__release(bcol);
    ct__release(xcol);
    return st;
}

/* ---- cholesky -------------------------------------------------------------------------- */
static int ct__cholesky_one(ct_op_call *c, int64_t b)
{
    const ct_tensor *A = c->inputs[0];
    bool upper = c->attrs[0].i != 0;
    int64_t n = A->sizes[A->ndim - 1];
    ct_dtype wd = ct__dc_wd(A->dtype);
    void *a = ct__dc_alloc(wd, n * n);
    if (!a) {
        return -1;
    }
    ct__dc_get(a, wd, n, A, A->sizes, A->ndim - 2, b, upper); /* U = L^T of A^T's lower */
    int info = ct__dc_potrf(wd, n, a);
    if (info == 0) {
        ct__dc_put(c->outputs[0], b, upper, a, wd, n);
    }
    ct__free(a);
    return info;
}

static ct_status ct__cholesky_kernel(ct_op_call *c)
{
    return ct__dc_run(c, ct__dc_batch(c->inputs[0]), ct__cholesky_one);
}

/* ---- qr -------------------------------------------------------------------------------- */
/* Q (*, m, qc) and R (*, rr, n) by mode; mode 'r': Q is an empty (0) tensor. */
static bool ct__qr_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    int64_t mode = c->attrs[0].i;
    if (!ct__dc_check(c, A, false)) {
        return false;
    }
    if (mode < CT_QR_REDUCED || mode > CT_QR_R) {
        ct__fail(CT_ERR_VALUE, c->fn, "qr received unrecognized mode %lld but expected one of "
                 "'reduced' (default), 'r', or 'complete'", (long long)mode);
        return false;
    }
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    int64_t qs[2] = {m, mode == CT_QR_COMPLETE ? m : k}, rs[2] = {qs[1], n}, zero = 0;
    c->dtype = A->dtype;
    bool q = mode == CT_QR_R ? ct__op_output(c, &zero, 1, A->dtype) != NULL
                             : ct__dc_output(c, A, qs, 2);
    return q && ct__dc_output(c, A, rs, 2);
}

static int ct__qr_one(ct_op_call *c, int64_t b)
{
    const ct_tensor *A = c->inputs[0];
    bool want_q = c->attrs[0].i != CT_QR_R;
    ct_tensor *R = c->outputs[1];
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    int64_t rr = R->sizes[R->ndim - 2], qc = want_q ? c->outputs[0]->sizes[R->ndim - 1] : 0;
    ct_dtype wd = ct__dc_wd(A->dtype);
    void *a = ct__dc_alloc(wd, m * n), *r = ct__dc_alloc(wd, rr * n);
    void *q = want_q ? ct__dc_alloc(wd, m * qc) : NULL;
    int info = -1;
    if (a && r && (q || !want_q)) {
        ct__dc_get(a, wd, m, A, A->sizes, A->ndim - 2, b, false);
        info = ct__dc_qr(wd, m, n, a, r, rr, q, qc);
    }
    if (info == 0) {
        ct__dc_put(R, b, false, r, wd, rr);
        if (want_q) {
            ct__dc_put(c->outputs[0], b, false, q, wd, m);
        }
    }
    ct__free(a);
    ct__free(r);
    ct__free(q);
    return info;
}

static ct_status ct__qr_kernel(ct_op_call *c)
{
    return ct__dc_run(c, ct__dc_batch(c->inputs[0]), ct__qr_one);
}

/* ---- eigh ------------------------------------------------------------------------------ */
static bool ct__eigh_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    int64_t uplo = c->attrs[0].i;
    if (!ct__dc_check(c, A, true)) {
        return false;
    }
    if (uplo != 'L' && uplo != 'U') {
        ct__fail(CT_ERR_VALUE, c->fn, "%s: Expected UPLO argument to be 'L' or 'U', but got %c",
                 ct__dc_name(c), (char)uplo);
        return false;
    }
    c->dtype = A->dtype;
    return ct__dc_output(c, A, A->sizes + A->ndim - 1, 1) &&
           ct__dc_output(c, A, A->sizes + A->ndim - 2, 2);
}

static int ct__eigh_one(ct_op_call *c, int64_t b)
{
    const ct_tensor *A = c->inputs[0];
    bool lower = c->attrs[0].i == 'L';
    int64_t n = A->sizes[A->ndim - 1];
    ct_dtype wd = ct__dc_wd(A->dtype);
    void *a = ct__dc_alloc(wd, n * n), *w = ct__dc_alloc(wd, n);
    int info = -1;
    if (a && w) {
        ct__dc_get(a, wd, n, A, A->sizes, A->ndim - 2, b, false);
        for (int64_t j = 0; j < n; j++) { /* the other triangle from the one read */
            for (int64_t i = 0; i < j; i++) {
                if (lower) {
                    ct__dc_st(a, wd, i + j * n, ct__dc_ld(a, wd, j + i * n));
                } else {
                    ct__dc_st(a, wd, j + i * n, ct__dc_ld(a, wd, i + j * n));
                }
            }
        }
        info = ct__dc_syev(wd, n, a, w);
    }
    if (info == 0) {
        char *p = ct__data(c->outputs[0]);
        for (int64_t i = 0; i < n; i++) {
            ct__dc_st(p, A->dtype, b * n + i, ct__dc_ld(w, wd, i));
        }
        ct__dc_put(c->outputs[1], b, false, a, wd, n);
    }
    ct__free(a);
    ct__free(w);
    return info;
}

static ct_status ct__eigh_kernel(ct_op_call *c)
{
    return ct__dc_run(c, ct__dc_batch(c->inputs[0]), ct__eigh_one);
}

/* ---- svd ------------------------------------------------------------------------------- */
static bool ct__svd_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    bool full = c->attrs[0].i != 0;
    if (!ct__dc_check(c, A, false)) {
        return false;
    }
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    int64_t us[2] = {m, full ? m : k}, vs[2] = {full ? n : k, n};
    c->dtype = A->dtype;
    return ct__dc_output(c, A, us, 2) && ct__dc_output(c, A, &k, 1) &&
           ct__dc_output(c, A, vs, 2);
}

/* W = A or A^T: A^T on the LAPACK path (for a row-major A a plain copy, and so are U and Vh
   from its factors) and for a wide A on the portable one (which wants W tall). W = U_w S V_w^T;
   A = W^T gives U = V_w, Vh = U_w^T. */
static int ct__svd_one(ct_op_call *c, int64_t b)
{
    const ct_tensor *A = c->inputs[0];
    bool full = c->attrs[0].i != 0;
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    bool tr = CT__LAPACK || m < n;
    int64_t M = tr ? n : m, N = tr ? m : n, k = M < N ? M : N;
    int64_t uc = full ? M : k, vr = full ? N : k;
    ct_dtype wd = ct__dc_wd(A->dtype);
    void *w = ct__dc_alloc(wd, M * N), *s = ct__dc_alloc(wd, k);
    void *u = ct__dc_alloc(wd, M * uc), *vt = ct__dc_alloc(wd, vr * N);
    int info = -1;
    if (w && s && u && vt) {
        ct__dc_get(w, wd, M, A, A->sizes, A->ndim - 2, b, tr);
        info = ct__dc_has_nan(w, wd, M * N) ? CT__DC_NONFINITE
                                            : ct__dc_gesvd(wd, M, N, w, s, u, vt, full);
    }
    if (info == 0) {
        char *ps = ct__data(c->outputs[1]);
        for (int64_t i = 0; i < k; i++) {
            ct__dc_st(ps, A->dtype, b * k + i, ct__dc_ld(s, wd, i));
        }
        ct__dc_put(c->outputs[0], b, tr, tr ? vt : u, wd, tr ? vr : M);
        ct__dc_put(c->outputs[2], b, tr, tr ? u : vt, wd, tr ? M : vr);
    }
    ct__free(w);
    ct__free(s);
    ct__free(u);
    ct__free(vt);
    return info;
}

static ct_status ct__svd_kernel(ct_op_call *c)
{
    return ct__dc_run(c, ct__dc_batch(c->inputs[0]), ct__svd_one);
}

/* ---- derivatives (FunctionsManual.cpp's formulas, real case, with ctorch ops) ------------- */
/* The backward of an op with several differentiable outputs runs once per output, each with
   only that output's gradient (n->i[0] says which): the formulas are linear in the outputs'
   gradients, so the engine's sum of the parts is the whole. n->i[1..] hold the op's int
   attributes (solve: then whether B was a vector, in n->i[2]); the saved slots are the op's
   save mask, inputs then outputs, in order. */
static void ct__dc_save(ct_node *n, const ct_op_call *c, int which)
{
    n->i[0] = which;
    for (int k = 0; k < c->n_attrs && k + 1 < (int)(sizeof n->i / sizeof n->i[0]); k++) {
        n->i[k + 1] = c->attrs[k].i;
    }
    if (c->op->variant == CT__DC_SOLVE) { /* after the attribute left */
        n->i[2] = ((const ct__solve_state *)c->state)->vector;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        if (c->op->save & (1u << k)) {
            ct__save(n, c->inputs[k]);
        }
    }
    for (int k = 0; k < c->n_outputs; k++) {
        if (c->op->save & (1u << (8 + k))) {
            ct__save_output(n, c->outputs[k]);
        }
    }
}

/* Output 0's node from the dispatcher, a node of its own for each other output (set here as
   the dispatcher sets output 0's: the call's outputs are this op's to finish). */
static void ct__dc_record(ct_node *n, const ct_op_call *c)
{
    ct_op_call *mc = (ct_op_call *)(uintptr_t)c;
    ct__dc_save(n, c, 0);
    for (int k = 1; k < c->n_outputs; k++) {
        ct_node *m = ct__node_new(c->op->node, c->op->backward, c->inputs, c->n_inputs);
        if (m) {
            ct__dc_save(m, c, k);
            mc->outputs[k] = ct__set_history(c->outputs[k], m);
        }
    }
}

/* x[..., None, None] */
static ct_tensor *ct__dc_unsq2(const ct_tensor *x)
{
    return ct_unsqueeze(ct_unsqueeze(x, -1), -1);
}

/* x with its diagonal (of the last two dims) set to 1 (E's diagonal in eigh's and svd's). */
static ct_tensor *ct__dc_unit_diag(const ct_tensor *x)
{
    int64_t k = x->sizes[x->ndim - 1];
    ct_tensor *eye = ct_eye(k, k, x->dtype);
    return ct_add(ct_mul(x, ct_sub(ct_ones_like(eye), eye)), eye);
}

/* det: grad * det * A^-T. */
static void ct__det_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *A = ct__saved(n, 0), *det = ct__saved(n, 1);
    if (A && det) {
        gi[0] = ct_mul(ct__dc_unsq2(ct_mul(g, det)), ct_mt(ct_linalg_inv(A)));
    }
}

/* slogdet: logabsdet's gradient grad * A^-T; sign has none. */
static void ct__slogdet_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *A = ct__saved(n, 0);
    if (n->i[0] == 1 && A) {
        gi[0] = ct_mul(ct__dc_unsq2(g), ct_mt(ct_linalg_inv(A)));
    }
}

/* inv: -X^T grad X^T, X = A^-1. */
static void ct__inv_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *X = ct__saved(n, 0);
    if (X) {
        gi[0] = ct_neg(ct_matmul(ct_matmul(ct_mt(X), g), ct_mt(X)));
    }
}

/* solve: gB = solve(A^T, g), gA = -gB X^T (left) or -X^T gB (right); vectors as columns. */
static void ct__solve_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *A = ct__saved(n, 0), *X = ct__saved(n, 1);
    bool left = n->i[1] != 0;
    if (!A || !X) {
        return;
    }
    bool vector = n->i[2] != 0;
    const ct_tensor *gm = vector ? ct_unsqueeze(g, -1) : g, *Xm = vector ? ct_unsqueeze(X, -1) : X;
    ct_tensor *gB = ct_linalg_solve(ct_mt(A), gm, left);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_neg(left ? ct_matmul(gB, ct_mt(Xm)) : ct_matmul(ct_mt(Xm), gB));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = vector ? ct_squeeze_dim(gB, -1) : gB;
    }
}

/* solve_triangular: gB = solve_triangular(A^T, g, !upper), gA = -gB X^T (left) or -X^T gB,
   restricted to the triangle read. */
static void ct__solve_tri_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *A = ct__saved(n, 0), *X = ct__saved(n, 1);
    bool upper = n->i[1] != 0, left = n->i[2] != 0, unit = n->i[3] != 0;
    if (!A || !X) {
        return;
    }
    ct_tensor *gB = ct_linalg_solve_triangular(ct_mt(A), g, !upper, left, unit);
    if (ct__needs_grad(n, 0)) {
        ct_tensor *gA = ct_neg(left ? ct_matmul(gB, ct_mt(X)) : ct_matmul(ct_mt(X), gB));
        gi[0] = upper ? ct_triu(gA, unit ? 1 : 0) : ct_tril(gA, unit ? -1 : 0);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = gB;
    }
}

/* cholesky (Murray 2016, symmetrized as PyTorch): gA = L^-T sym(phi(L^T gL)) L^-1, phi = the
   lower triangle with the diagonal halved; upper: L = U^T, gL = gU^T. */
static void ct__cholesky_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *L = ct__saved(n, 0);
    if (!L) {
        return;
    }
    if (n->i[1]) {
        L = ct_mt(L);
        g = ct_mt(g);
    }
    int64_t k = L->sizes[L->ndim - 1];
    ct_tensor *P = ct_matmul(ct_mt(L), g);
    ct_tensor *phi = ct_sub(ct_tril(P, 0), ct_mul_scalar(ct_mul(P, ct_eye(k, k, L->dtype)), 0.5));
    ct_tensor *S = ct_mul_scalar(ct_add(phi, ct_mt(phi)), 0.5);
    gi[0] = ct_linalg_solve_triangular(ct_mt(L), ct_linalg_solve_triangular(L, S, false, false,
                                                                            false),
                                       true, true, false);
}

/* copyltu(M) = tril(M) + tril(M, -1)^T */
static ct_tensor *ct__dc_copyltu(const ct_tensor *M)
{
    return ct_add(ct_tril(M, 0), ct_mt(ct_tril(M, -1)));
}

/* QR of a square-or-tall A: gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T (gQ or gR NULL: 0). */
static ct_tensor *ct__qr_tall_backward(const ct_tensor *gQ, const ct_tensor *gR,
                                       const ct_tensor *Q, const ct_tensor *R)
{
    ct_tensor *M = gR ? ct_matmul(R, ct_mt(gR)) : NULL;
    if (gQ) {
        ct_tensor *t = ct_matmul(ct_mt(gQ), Q);
        M = M ? ct_sub(M, t) : ct_neg(t);
    }
    ct_tensor *Y = ct_matmul(Q, ct__dc_copyltu(M));
    Y = gQ ? ct_add(Y, gQ) : Y;
    return ct_linalg_solve_triangular(ct_mt(R), Y, false, false, false);
}

/* QR: tall or square A directly; wide A = [X | Y], R = [U | V]: gY = Q gV, and X's part is
   the square case with gQ + Y gV^T (Y = Q V). */
static void ct__qr_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *Q = ct__saved(n, 0), *R = ct__saved(n, 1);
    int64_t mode = n->i[1];
    if (mode == CT_QR_R) {
        ct__fail(CT_ERR_AUTOGRAD, "ct_linalg_qr", "The derivative of linalg.qr depends on Q, "
                 "which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') "
                 "if you are going to differentiate through linalg.qr.");
        return;
    }
    if (!Q || !R) {
        return;
    }
    int64_t m = Q->sizes[Q->ndim - 2], nc = R->sizes[R->ndim - 1];
    if (mode == CT_QR_COMPLETE && m > nc) {
        ct__fail(CT_ERR_AUTOGRAD, "ct_linalg_qr", "The QR decomposition is not differentiable "
                 "when mode='complete' and nrows > ncols.");
        return;
    }
    const ct_tensor *gQ = n->i[0] == 0 ? g : NULL, *gR = n->i[0] == 1 ? g : NULL;
    if (m >= nc) {
        gi[0] = ct__qr_tall_backward(gQ, gR, Q, R);
        return;
    }
    const ct_tensor *U = ct_narrow(R, -1, 0, m);
    const ct_tensor *gU = gR ? ct_narrow(gR, -1, 0, m) : NULL;
    if (!gR) {
        int64_t zs[CT_MAX_DIMS];
        memcpy(zs, Q->sizes, sizeof(int64_t) * (size_t)Q->ndim);
        zs[Q->ndim - 1] = nc - m;
        const ct_tensor *parts[2] = {ct__qr_tall_backward(gQ, NULL, Q, U),
                                     ct_zeros(zs, Q->ndim, Q->dtype)};
        gi[0] = ct_cat(parts, 2, -1);
        return;
    }
    ct_tensor *gV = ct_narrow(gR, -1, m, nc - m), *V = ct_narrow(R, -1, m, nc - m);
    const ct_tensor *parts[2] = {
        ct__qr_tall_backward(ct_matmul(ct_matmul(Q, V), ct_mt(gV)), gU, Q, U), ct_matmul(Q, gV)};
    gi[0] = ct_cat(parts, 2, -1);
}

/* eigh: eigenvalues' part V diag(gL) V^T; eigenvectors' part V (skew(V^T gV) / E) V^T with
   E[i][j] = L[j] - L[i] (1 on the diagonal), skew(X) = (X - X^T) / 2. */
static void ct__eigh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *L = ct__saved(n, 0), *V = ct__saved(n, 1);
    if (!L || !V) {
        return;
    }
    if (n->i[0] == 0) {
        gi[0] = ct_matmul(ct_mul(V, ct_unsqueeze(g, -2)), ct_mt(V));
        return;
    }
    ct_tensor *X = ct_matmul(ct_mt(V), g);
    ct_tensor *skew = ct_mul_scalar(ct_sub(X, ct_mt(X)), 0.5);
    ct_tensor *E = ct__dc_unit_diag(ct_sub(ct_unsqueeze(L, -2), ct_unsqueeze(L, -1)));
    gi[0] = ct_matmul(ct_matmul(V, ct_div(skew, E)), ct_mt(V));
}

/* svd (PyTorch's svd_backward on U, Vh narrowed to k columns/rows when full_matrices). */
static void ct__svd_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *U = ct__saved(n, 0), *S = ct__saved(n, 1), *Vh = ct__saved(n, 2);
    if (!U || !S || !Vh) {
        return;
    }
    int64_t m = U->sizes[U->ndim - 2], nn = Vh->sizes[Vh->ndim - 1], k = S->sizes[S->ndim - 1];
    int which = (int)n->i[0];
    if (n->i[1]) { /* full_matrices */
        U = ct_narrow(U, -1, 0, k);
        Vh = ct_narrow(Vh, -2, 0, k);
        g = which == 0 ? ct_narrow(g, -1, 0, k) : which == 2 ? ct_narrow(g, -2, 0, k) : g;
    }
    if (which == 1) {
        gi[0] = m >= nn ? ct_matmul(U, ct_mul(ct_unsqueeze(g, -1), Vh))
                        : ct_matmul(ct_mul(U, ct_unsqueeze(g, -2)), Vh);
        return;
    }
    ct_tensor *S2 = ct_mul(S, S);
    ct_tensor *E = ct__dc_unit_diag(ct_sub(ct_unsqueeze(S2, -2), ct_unsqueeze(S2, -1)));
    if (which == 0) {
        ct_tensor *X = ct_matmul(ct_mt(U), g);
        ct_tensor *inner = ct_mul(ct_sub(X, ct_mt(X)), ct_div(ct_unsqueeze(S, -2), E));
        if (m > nn) { /* + (I - U U^T) gU S^-1 */
            ct_tensor *gUS = ct_div(g, ct_unsqueeze(S, -2));
            ct_tensor *t = ct_sub(ct_add(ct_matmul(U, inner), gUS),
                                  ct_matmul(U, ct_matmul(ct_mt(U), gUS)));
            gi[0] = ct_matmul(t, Vh);
        } else {
            gi[0] = ct_matmul(ct_matmul(U, inner), Vh);
        }
        return;
    }
    ct_tensor *X = ct_matmul(Vh, ct_mt(g));
    ct_tensor *inner = ct_mul(ct_unsqueeze(S, -1), ct_div(ct_sub(X, ct_mt(X)), E));
    if (m < nn) { /* + S^-1 gVh (I - V V^T) */
        ct_tensor *SgV = ct_div(g, ct_unsqueeze(S, -1));
        ct_tensor *t = ct_sub(ct_add(ct_matmul(inner, Vh), SgV),
                              ct_matmul(ct_matmul(SgV, ct_mt(Vh)), Vh));
        gi[0] = ct_matmul(U, t);
    } else {
        gi[0] = ct_matmul(ct_matmul(U, inner), Vh);
    }
}

/* ---- composites: logdet, eigvalsh, svdvals, norms ---------------------------------------- */
/* logdet = logabsdet where sign >= 0, NaN where sign < 0 (PyTorch's real case). */
static ct_status ct__logdet_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *logabs = NULL, *sign = ct_linalg_slogdet(c->inputs[0], &logabs);
    ct_tensor *r = sign ? ct_where(ct_lt_scalar(sign, 0.0), ct_full_like(logabs, NAN), logabs)
                        : NULL;
    return ct__composite_end(c, r);
}

static bool ct__square_meta(ct_op_call *c)
{
    if (!ct__dc_check(c, c->inputs[0], true)) {
        return false;
    }
    c->dtype = c->inputs[0]->dtype;
    return true;
}

static bool ct__matrix_meta(ct_op_call *c)
{
    if (!ct__dc_check(c, c->inputs[0], false)) {
        return false;
    }
    c->dtype = c->inputs[0]->dtype;
    return true;
}

static ct_status ct__eigvalsh_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct_linalg_eigh(c->inputs[0], (char)c->attrs[0].i, NULL));
}

static ct_status ct__svdvals_composite(ct_op_call *c)
{
    ct_scope_begin();
    ct_tensor *S = NULL;
    ct_linalg_svd(c->inputs[0], false, &S, NULL);
    return ct__composite_end(c, S);
}

/* An ord of linalg.norm / matrix_norm: none, fro, nuc or a number. */
enum { CT__ORD_NONE, CT__ORD_FRO, CT__ORD_NUC, CT__ORD_NUM };

typedef struct ct__norm_state {
    const char *ord;
    int kind;
    double p;
    int64_t dims[2];
} ct__norm_state;

/* Parses ord (NULL: none) into s; false + error for anything else than "fro", "nuc" or a
   number ("inf", "-inf", "2", "0.5"). */
static bool ct__norm_parse(const ct_op_call *c, ct__norm_state *s)
{
    char *end = NULL;
    s->kind = !s->ord ? CT__ORD_NONE : !strcmp(s->ord, "fro") ? CT__ORD_FRO
              : !strcmp(s->ord, "nuc")                         ? CT__ORD_NUC
                                                                : CT__ORD_NUM;
    if (s->kind != CT__ORD_NUM) {
        return true;
    }
    s->p = strtod(s->ord, &end);
    if (end == s->ord || *end != '\0' || isnan(s->p)) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s: Order %s not supported.", ct__dc_name(c), s->ord);
        return false;
    }
    return true;
}

/* matrix_norm: ord and the two dims (attrs: dims, keepdim; state: the parsed ord). */
static bool ct__matrix_norm_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    ct__norm_state *s = (ct__norm_state *)c->state;
    if (!ct__dc_check(c, A, false) || !ct__norm_parse(c, s)) {
        return false;
    }
    double p = fabs(s->p);
    if (s->kind == CT__ORD_NONE) {
        s->kind = CT__ORD_FRO;
    } else if (s->kind == CT__ORD_NUM && p != 1 && p != 2 && !isinf(p)) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s: Order %s not supported.", ct__dc_name(c), s->ord);
        return false;
    }
    if ((s->kind == CT__ORD_NUC || (s->kind == CT__ORD_NUM && p == 2)) &&
        !ct__dc_check_half(c, A)) { /* the orders computed from singular values */
        return false;
    }
    for (int k = 0; k < 2; k++) {
        int d = ct__wrap_dim(c->fn, c->attrs[0].ints[k], A->ndim);
        if (d < 0) {
            return false;
        }
        s->dims[k] = d;
    }
    if (s->dims[0] == s->dims[1]) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: dims must be different. Got (%lld, %lld)",
                 ct__dc_name(c), (long long)c->attrs[0].ints[0], (long long)c->attrs[0].ints[1]);
        return false;
    }
    c->dtype = A->dtype;
    return true;
}

/* The singular values' max / min / sum over the two dims (moved last), dims kept as 1 when
   keepdim. */
static ct_tensor *ct__norm_svd(const ct_tensor *A, const ct__norm_state *s, bool keepdim)
{
    int64_t perm[CT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < A->ndim; d++) {
        if (d != s->dims[0] && d != s->dims[1]) {
            perm[k++] = d;
        }
    }
    perm[k++] = s->dims[0];
    perm[k++] = s->dims[1];
    ct_tensor *S = ct_linalg_svdvals(ct_permute(A, perm, A->ndim));
    int64_t last = -1;
    ct_tensor *r = s->kind == CT__ORD_NUC ? ct_sum_dim(S, -1, false)
                   : s->p > 0            ? ct_amax(S, &last, 1, false)
                                         : ct_amin(S, &last, 1, false);
    if (keepdim) {
        int64_t lo = s->dims[0] < s->dims[1] ? s->dims[0] : s->dims[1];
        r = ct_unsqueeze(ct_unsqueeze(r, lo), lo == s->dims[0] ? s->dims[1] : s->dims[0]);
    }
    return r;
}

static ct_status ct__matrix_norm_composite(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    const ct__norm_state *s = (const ct__norm_state *)c->state;
    bool keepdim = c->attrs[1].i != 0;
    ct_scope_begin();
    ct_tensor *r;
    if (s->kind == CT__ORD_FRO) {
        r = ct_linalg_vector_norm(A, 2.0, s->dims, 2, keepdim);
    } else if (s->kind == CT__ORD_NUC || fabs(s->p) == 2) {
        r = ct__norm_svd(A, s, keepdim);
    } else { /* 1: max over dims[1] of the sums over dims[0]; inf: the transpose's */
        int64_t d0 = isinf(s->p) ? s->dims[1] : s->dims[0];
        int64_t d1 = isinf(s->p) ? s->dims[0] : s->dims[1];
        d1 = !keepdim && d0 < d1 ? d1 - 1 : d1;
        ct_tensor *sums = ct_linalg_vector_norm(A, 1.0, &d0, 1, keepdim);
        r = s->p > 0 ? ct_amax(sums, &d1, 1, keepdim) : ct_amin(sums, &d1, 1, keepdim);
    }
    return ct__composite_end(c, r);
}

/* linalg.norm: attrs dims (n of them), keepdim; state: the parsed ord. */
static bool ct__norm_meta(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    ct__norm_state *s = (ct__norm_state *)c->state;
    int n = (int)c->attrs[0].i;
    if (!ct_dtype_is_floating_point(A->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "linalg.norm: Expected a floating point or complex tensor "
                 "as input. Got %s", ct__dtype_title(A->dtype));
        return false;
    }
    if (!ct__norm_parse(c, s)) {
        return false;
    }
    if (n > 2) {
        char buf[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "linalg.norm: If dim is specified, it must be of length 1 "
                 "or 2. Got %s", ct__shape_str(c->attrs[0].ints, n, buf, sizeof buf));
        return false;
    }
    if (n == 1 && (s->kind == CT__ORD_FRO || s->kind == CT__ORD_NUC)) {
        ct__fail(CT_ERR_SHAPE, c->fn, "linalg.matrix_norm: dim must be a 2-tuple. Got %lld",
                 (long long)c->attrs[0].ints[0]);
        return false;
    }
    if (n == 0 && s->kind != CT__ORD_NONE && A->ndim != 1 && A->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "linalg.norm: If dim is not specified but ord is, the input "
                 "must be 1D or 2D. Got %dD.", A->ndim);
        return false;
    }
    c->dtype = A->dtype;
    return true;
}

static ct_status ct__norm_composite(ct_op_call *c)
{
    const ct_tensor *A = c->inputs[0];
    const ct__norm_state *s = (const ct__norm_state *)c->state;
    int n = (int)c->attrs[0].i;
    bool keepdim = c->attrs[1].i != 0;
    static const int64_t last2[2] = {0, 1};
    bool matrix = s->kind == CT__ORD_FRO || s->kind == CT__ORD_NUC ||
                  (s->kind == CT__ORD_NUM && (n == 2 || (n == 0 && A->ndim == 2)));
    ct_scope_begin();
    ct_tensor *r;
    if (matrix) {
        r = ct_linalg_matrix_norm(A, s->ord, n == 2 ? c->attrs[0].ints : last2, keepdim);
    } else {
        r = ct_linalg_vector_norm(A, s->kind == CT__ORD_NUM ? s->p : 2.0, c->attrs[0].ints, n,
                                  keepdim);
    }
    return ct__composite_end(c, r);
}

CT__GLUE_BEGIN
/* ---- descriptors ------------------------------------------------------------------------- */
/* One per op; names, schemas and node names as PyTorch's (linalg.inv runs linalg_inv_ex and
   linalg.solve linalg_solve_ex in PyTorch, hence their nodes' names). Kernels: float32 and
   float64. Ops with several outputs record a node per differentiable output
   (ct__dc_record). */
#define CT__DC_OP(SYM, NAME, SCHEMA, API, ID, OPT, META, K, COMP, NODE, BW, SAVE, RECORD)        \
    static const ct_op ct__op_##SYM = {NAME,  SCHEMA, API,  CT_OP_OTHER, CT_AUTOCAST_NONE,      \
                                       ID,    OPT,    NULL, META,        K,                     \
                                       COMP,  NODE,   CT__BACKWARD(BW), SAVE, RECORD,           \
                                       NULL};
#define CT__DC_IN(k) (1u << (k))
#define CT__DC_OUT(k) (1u << (8 + (k)))
CT__DC_OP(linalg_det, "aten::linalg_det", "linalg_det(Tensor A) -> Tensor", "ct_linalg_det",
          CT__DC_DET, 0u, ct__det_meta, CT__K_FLOAT(ct__det_kernel), NULL, "LinalgDetBackward0",
          ct__det_backward, CT__DC_IN(0) | CT__DC_OUT(0), ct__dc_record)
CT__DC_OP(linalg_slogdet, "aten::linalg_slogdet", "linalg_slogdet(Tensor A) -> (Tensor sign, "
          "Tensor logabsdet)", "ct_linalg_slogdet", CT__DC_SLOGDET, 0u, ct__det_meta,
          CT__K_FLOAT(ct__det_kernel), NULL, "LinalgSlogdetBackward0", ct__slogdet_backward,
          CT__DC_IN(0), ct__dc_record)
CT__DC_OP(logdet, "aten::logdet", "logdet(Tensor self) -> Tensor", "ct_logdet", CT__DC_LOGDET,
          0u, ct__square_meta, CT__K_NONE, ct__logdet_composite, NULL, NULL, 0u, NULL)
CT__DC_OP(linalg_inv, "aten::linalg_inv", "linalg_inv(Tensor A) -> Tensor", "ct_linalg_inv",
          CT__DC_INV, 0u, ct__inv_meta, CT__K_FLOAT(ct__inv_kernel), NULL,
          "LinalgInvExBackward0", ct__inv_backward, CT__DC_OUT(0), ct__dc_record)
CT__DC_OP(linalg_solve, "aten::linalg_solve", "linalg_solve(Tensor A, Tensor B, *, bool left="
          "True) -> Tensor", "ct_linalg_solve", CT__DC_SOLVE, 0u, ct__solve_meta,
          CT__K_FLOAT(ct__solve_kernel), NULL, "LinalgSolveExBackward0", ct__solve_backward,
          CT__DC_IN(0) | CT__DC_OUT(0), ct__dc_record)
CT__DC_OP(linalg_solve_triangular, "aten::linalg_solve_triangular", "linalg_solve_triangular("
          "Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) -> "
          "Tensor", "ct_linalg_solve_triangular", CT__DC_SOLVE_TRI, 0u, ct__solve_meta,
          CT__K_FLOAT(ct__solve_kernel), NULL, "LinalgSolveTriangularBackward0",
          ct__solve_tri_backward, CT__DC_IN(0) | CT__DC_OUT(0), ct__dc_record)
CT__DC_OP(linalg_cholesky, "aten::linalg_cholesky", "linalg_cholesky(Tensor self, *, bool upper="
          "False) -> Tensor", "ct_linalg_cholesky", CT__DC_CHOLESKY, 0u, ct__inv_meta,
          CT__K_FLOAT(ct__cholesky_kernel), NULL, "LinalgCholeskyExBackward0",
          ct__cholesky_backward, CT__DC_OUT(0), ct__dc_record)
CT__DC_OP(linalg_qr, "aten::linalg_qr", "linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, "
          "Tensor R)", "ct_linalg_qr", CT__DC_QR, 0u, ct__qr_meta, CT__K_FLOAT(ct__qr_kernel),
          NULL, "LinalgQrBackward0", ct__qr_backward, CT__DC_OUT(0) | CT__DC_OUT(1),
          ct__dc_record)
CT__DC_OP(linalg_eigh, "aten::linalg_eigh", "linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor "
          "eigenvalues, Tensor eigenvectors)", "ct_linalg_eigh", CT__DC_EIGH, 0u, ct__eigh_meta,
          CT__K_FLOAT(ct__eigh_kernel), NULL, "LinalgEighBackward0", ct__eigh_backward,
          CT__DC_OUT(0) | CT__DC_OUT(1), ct__dc_record)
CT__DC_OP(linalg_eigvalsh, "aten::linalg_eigvalsh", "linalg_eigvalsh(Tensor self, str UPLO=\"L\") "
          "-> Tensor", "ct_linalg_eigvalsh", CT__DC_EIGVALSH, 0u, ct__square_meta, CT__K_NONE,
          ct__eigvalsh_composite, NULL, NULL, 0u, NULL)
CT__DC_OP(linalg_svd, "aten::linalg_svd", "linalg_svd(Tensor A, bool full_matrices=True, *, str? "
          "driver=None) -> (Tensor U, Tensor S, Tensor Vh)", "ct_linalg_svd", CT__DC_SVD, 0u,
          ct__svd_meta, CT__K_FLOAT(ct__svd_kernel), NULL, "LinalgSvdBackward0",
          ct__svd_backward, CT__DC_OUT(0) | CT__DC_OUT(1) | CT__DC_OUT(2), ct__dc_record)
CT__DC_OP(linalg_svdvals, "aten::linalg_svdvals", "linalg_svdvals(Tensor A, *, str? driver=None) "
          "-> Tensor", "ct_linalg_svdvals", CT__DC_SVDVALS, 0u, ct__matrix_meta, CT__K_NONE,
          ct__svdvals_composite, NULL, NULL, 0u, NULL)
CT__DC_OP(linalg_matrix_norm, "aten::linalg_matrix_norm", "linalg_matrix_norm.str_ord(Tensor A, "
          "str ord='fro', int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None) -> "
          "Tensor", "ct_linalg_matrix_norm", CT__DC_MATRIX_NORM, 0u, ct__matrix_norm_meta,
          CT__K_NONE, ct__matrix_norm_composite, NULL, NULL, 0u, NULL)
CT__DC_OP(linalg_norm, "aten::linalg_norm", "linalg_norm.ord_str(Tensor input, str ord, int[1]? "
          "dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", "ct_linalg_norm",
          CT__DC_NORM, 0u, ct__norm_meta, CT__K_NONE, ct__norm_composite, NULL, NULL, 0u, NULL)
#undef CT__DC_OP
#undef CT__DC_IN
#undef CT__DC_OUT

/* ---- public functions ------------------------------------------------------------------------ */
/* Dispatches c; hands outputs 1.. to the out-pointers (NULL pointer: the output is freed).
   Returns output 0. */
static ct_tensor *ct__dc_call(ct_op_call *c, ct_tensor **out1, ct_tensor **out2)
{
    ct_tensor **outs[2] = {out1, out2};
    for (int k = 0; k < 2; k++) {
        if (outs[k]) {
            *outs[k] = NULL;
        }
    }
    ct_tensor *r = ct__dispatch(c);
    for (int k = 1; r && k < c->n_outputs; k++) {
        if (k <= 2 && outs[k - 1]) {
            *outs[k - 1] = c->outputs[k];
        } else {
            ct_free(c->outputs[k]);
        }
    }
    return r;
}

static ct_tensor *ct__dc_call1(const ct_op *op, const char *fn, const ct_tensor *A)
{
    const ct_tensor *in[1] = {A};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_det(const ct_tensor *A)
{
    return ct__dc_call1(&ct__op_linalg_det, "ct_linalg_det", A);
}

ct_tensor *ct_linalg_slogdet(const ct_tensor *A, ct_tensor **logabsdet)
{
    const ct_tensor *in[1] = {A};
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_slogdet, "ct_linalg_slogdet", in, 1);
    return ct__dc_call(&c, logabsdet, NULL);
}

ct_tensor *ct_logdet(const ct_tensor *A)
{
    return ct__dc_call1(&ct__op_logdet, "ct_logdet", A);
}

ct_tensor *ct_linalg_inv(const ct_tensor *A)
{
    return ct__dc_call1(&ct__op_linalg_inv, "ct_linalg_inv", A);
}

ct_tensor *ct_linalg_solve(const ct_tensor *A, const ct_tensor *B, bool left)
{
    const ct_tensor *in[2] = {A, B};
    ct__solve_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_solve, "ct_linalg_solve", in, 2);
    ct__call_i(&c, left);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_solve_triangular(const ct_tensor *A, const ct_tensor *B, bool upper,
                                      bool left, bool unitriangular)
{
    const ct_tensor *in[2] = {A, B};
    ct__solve_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_solve_triangular, "ct_linalg_solve_triangular", in, 2);
    ct__call_i(&c, upper);
    ct__call_i(&c, left);
    ct__call_i(&c, unitriangular);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_cholesky(const ct_tensor *A, bool upper)
{
    const ct_tensor *in[1] = {A};
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_cholesky, "ct_linalg_cholesky", in, 1);
    ct__call_i(&c, upper);
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_qr(const ct_tensor *A, ct_qr_mode mode, ct_tensor **R)
{
    const ct_tensor *in[1] = {A};
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_qr, "ct_linalg_qr", in, 1);
    ct__call_i(&c, (int64_t)mode);
    return ct__dc_call(&c, R, NULL);
}

ct_tensor *ct_linalg_eigh(const ct_tensor *A, char uplo, ct_tensor **eigenvectors)
{
    const ct_tensor *in[1] = {A};
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_eigh, "ct_linalg_eigh", in, 1);
    ct__call_i(&c, uplo);
    return ct__dc_call(&c, eigenvectors, NULL);
}

ct_tensor *ct_linalg_eigvalsh(const ct_tensor *A, char uplo)
{
    const ct_tensor *in[1] = {A};
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_eigvalsh, "ct_linalg_eigvalsh", in, 1);
    ct__call_i(&c, uplo);
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_svd(const ct_tensor *A, bool full_matrices, ct_tensor **S, ct_tensor **Vh)
{
    const ct_tensor *in[1] = {A};
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_svd, "ct_linalg_svd", in, 1);
    ct__call_i(&c, full_matrices);
    return ct__dc_call(&c, S, Vh);
}

ct_tensor *ct_linalg_svdvals(const ct_tensor *A)
{
    return ct__dc_call1(&ct__op_linalg_svdvals, "ct_linalg_svdvals", A);
}

ct_tensor *ct_linalg_matrix_norm(const ct_tensor *A, const char *ord, const int64_t *dim,
                                 bool keepdim)
{
    static const int64_t last2[2] = {-2, -1};
    const ct_tensor *in[1] = {A};
    ct__norm_state s;
    ct_op_call c;
    s.ord = ord;
    ct__call_init(&c, &ct__op_linalg_matrix_norm, "ct_linalg_matrix_norm", in, 1);
    ct__call_ints(&c, dim ? dim : last2, 2);
    ct__call_i(&c, keepdim);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_norm(const ct_tensor *A, const char *ord, const int64_t *dims, int n,
                          bool keepdim)
{
    const ct_tensor *in[1] = {A};
    ct__norm_state s;
    ct_op_call c;
    s.ord = ord;
    ct__call_init(&c, &ct__op_linalg_norm, "ct_linalg_norm", in, 1);
    ct__call_ints(&c, dims, dims ? n : 0);
    ct__call_i(&c, keepdim);
    c.state = &s;
    return ct__dispatch(&c);
}

#undef CT__DC_TB
#undef CT__DC_LANES
#undef CT__DC_TINV
#undef CT__DC_LU_DEFINE
#undef CT__DC_ROWS
#undef CT__DC_LEAF
#undef CT__DC_SWAPS
#undef CT__DC_COLS
#undef CT__DC_NONFINITE
#undef CT__DC_BLAS1_MAX
#undef CT__LAPACK
CT__GLUE_END
