/* tests/test_gemm.c - the packed GEMM (src/ops/gemm.c) against a naive float64 triple loop:
 * odd shapes (edge tiles in every direction), transposed and strided operands, alpha and
 * beta, K == 0, beta == 0 over NaN, and shapes big enough to use several cache blocks and
 * threads.
 */
#include "test.h"

#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Internal (src/core/internal.h), not in the generated header's interface. */
void ct__gemm_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa,
                  int64_t csa, const float *B, int64_t rsb, int64_t csb, float beta, float *C,
                  int64_t rsc, int64_t csc);
void ct__gemm_f64(int64_t M, int64_t N, int64_t K, double alpha, const double *A, int64_t rsa,
                  int64_t csa, const double *B, int64_t rsb, int64_t csb, double beta,
                  double *C, int64_t rsc, int64_t csc);
#ifdef __cplusplus
}
#endif

/* Operand layouts: row-major, transposed (column-major), and row-major with padded rows
   (row stride > columns) or every other column (column stride 2). */
enum { GEMM_ROW, GEMM_COL, GEMM_PAD, GEMM_STEP2, GEMM_LAYOUTS };

/* Strides in elements and the element count to allocate for a (rows, cols) operand. */
static int64_t gemm_layout(int layout, int64_t rows, int64_t cols, int64_t *rs, int64_t *cs)
{
    switch (layout) {
    case GEMM_COL:
        *rs = 1;
        *cs = rows;
        return rows * cols;
    case GEMM_PAD:
        *rs = cols + 3;
        *cs = 1;
        return rows * (cols + 3);
    case GEMM_STEP2:
        *rs = 2 * cols + 1;
        *cs = 2;
        return rows * (2 * cols + 1);
    default:
        *rs = cols;
        *cs = 1;
        return rows * cols;
    }
}

/* Deterministic values in [-1, 1). */
static double gemm_value(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

/* Runs ct__gemm_<dtype> on one case and compares all of C (including the elements the
   strides skip, which must stay untouched) with the float64 reference. */
static void gemm_case(int dtype64, int64_t M, int64_t N, int64_t K, double alpha, double beta,
                      int la, int lb, int lc)
{
    int64_t rsa, csa, rsb, csb, rsc, csc;
    int64_t na = gemm_layout(la, M, K, &rsa, &csa);
    int64_t nb = gemm_layout(lb, K, N, &rsb, &csb);
    int64_t nc = gemm_layout(lc, M, N, &rsc, &csc);
    double *a = (double *)calloc((size_t)(na + 1), sizeof(double));
    double *b = (double *)calloc((size_t)(nb + 1), sizeof(double));
    double *c0 = (double *)malloc(sizeof(double) * (size_t)(nc + 1));
    double *want = (double *)malloc(sizeof(double) * (size_t)(nc + 1));
    double *got = (double *)malloc(sizeof(double) * (size_t)(nc + 1));
    uint32_t state = (uint32_t)(M * 7919 + N * 104729 + K * 31 + la * 5 + lb * 3 + lc);
    for (int64_t i = 0; i < na; i++) {
        a[i] = gemm_value(&state);
    }
    for (int64_t i = 0; i < nb; i++) {
        b[i] = gemm_value(&state);
    }
    for (int64_t i = 0; i < nc; i++) {
        c0[i] = beta == 0.0 ? NAN : gemm_value(&state);
    }
    if (!dtype64) {
        /* round the inputs to float32 so the reference sees what the kernel sees */
        for (int64_t i = 0; i < na; i++) {
            a[i] = (double)(float)a[i];
        }
        for (int64_t i = 0; i < nb; i++) {
            b[i] = (double)(float)b[i];
        }
        for (int64_t i = 0; i < nc; i++) {
            c0[i] = (double)(float)c0[i];
        }
    }
    // reference: C (M, N) = alpha * A (M, K) @ B (K, N) + beta * C, in float64
    memcpy(want, c0, sizeof(double) * (size_t)nc);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            double acc = 0.0;
            for (int64_t p = 0; p < K; p++) {
                acc += a[i * rsa + p * csa] * b[p * rsb + j * csb];
            }
            double *w = want + i * rsc + j * csc;
            *w = beta == 0.0 ? alpha * acc : alpha * acc + beta * *w;
        }
    }
    if (dtype64) {
        memcpy(got, c0, sizeof(double) * (size_t)nc);
        ct__gemm_f64(M, N, K, alpha, a, rsa, csa, b, rsb, csb, beta, got, rsc, csc);
    } else {
        float *af = (float *)malloc(sizeof(float) * (size_t)(na + 1));
        float *bf = (float *)malloc(sizeof(float) * (size_t)(nb + 1));
        float *cf = (float *)malloc(sizeof(float) * (size_t)(nc + 1));
        for (int64_t i = 0; i < na; i++) {
            af[i] = (float)a[i];
        }
        for (int64_t i = 0; i < nb; i++) {
            bf[i] = (float)b[i];
        }
        for (int64_t i = 0; i < nc; i++) {
            cf[i] = (float)c0[i];
        }
        ct__gemm_f32(M, N, K, (float)alpha, af, rsa, csa, bf, rsb, csb, (float)beta, cf, rsc,
                     csc);
        for (int64_t i = 0; i < nc; i++) {
            got[i] = (double)cf[i];
        }
        free(af);
        free(bf);
        free(cf);
    }
    /* skipped elements of a beta == 0 C stay NaN in both; compare them by identity */
    for (int64_t i = 0; i < nc; i++) {
        if (isnan(want[i]) && isnan(got[i])) {
            want[i] = got[i] = 0.0;
        }
    }
    double scale = fabs(alpha) + 1.0;
    int ok = dtype64 ? CHECK_CLOSE(got, want, nc, 1e-10, 1e-12 * (double)(K + 1) * scale)
                     : CHECK_CLOSE(got, want, nc, 1e-4, 1e-5 * (double)(K + 1) * scale);
    if (!ok) {
        printf("    case: %s M=%lld N=%lld K=%lld alpha=%g beta=%g layouts a=%d b=%d c=%d\n",
               dtype64 ? "float64" : "float32", (long long)M, (long long)N, (long long)K, alpha,
               beta, la, lb, lc);
    }
    free(a);
    free(b);
    free(c0);
    free(want);
    free(got);
}

/* Every combination of the odd sizes, row-major operands, alpha 1, beta 0. */
static void test_gemm_odd_shapes(void)
{
    static const int64_t sizes[] = {1, 2, 7, 17, 33, 65};
    int n = (int)(sizeof(sizes) / sizeof(sizes[0]));
    for (int dt = 0; dt < 2; dt++) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < n; k++) {
                    gemm_case(dt, sizes[i], sizes[j], sizes[k], 1.0, 0.0, GEMM_ROW, GEMM_ROW,
                              GEMM_ROW);
                }
            }
        }
    }
}

/* M == 1, N == 1, K == 1 and 1x1x1 against larger other dimensions. */
static void test_gemm_vectors(void)
{
    for (int dt = 0; dt < 2; dt++) {
        gemm_case(dt, 1, 1, 1, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 1, 257, 300, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 257, 1, 300, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 257, 130, 1, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 1, 1, 1000, 1.0, 0.5, GEMM_COL, GEMM_COL, GEMM_ROW);
        gemm_case(dt, 64, 10, 512, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 64, 10, 512, 1.0, 0.0, GEMM_ROW, GEMM_COL, GEMM_ROW);
    }
}

/* Every layout of A, B and C, with alpha and beta. */
static void test_gemm_layouts(void)
{
    for (int dt = 0; dt < 2; dt++) {
        for (int la = 0; la < GEMM_LAYOUTS; la++) {
            for (int lb = 0; lb < GEMM_LAYOUTS; lb++) {
                for (int lc = 0; lc < GEMM_LAYOUTS; lc++) {
                    gemm_case(dt, 33, 37, 29, 1.0, 0.0, la, lb, lc);
                    gemm_case(dt, 19, 70, 41, -0.5, 0.75, la, lb, lc);
                    gemm_case(dt, 70, 5, 23, 2.0, 1.0, la, lb, lc);
                }
            }
        }
    }
}

/* alpha and beta values, including beta == 0 over NaN and alpha == 0. */
static void test_gemm_alpha_beta(void)
{
    static const double alphas[] = {1.0, -1.0, 0.25, 0.0};
    static const double betas[] = {0.0, 1.0, -2.0, 0.5};
    for (int dt = 0; dt < 2; dt++) {
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++) {
                gemm_case(dt, 45, 50, 31, alphas[i], betas[j], GEMM_ROW, GEMM_COL, GEMM_ROW);
            }
        }
    }
}

/* K == 0 leaves C = beta * C (zero over NaN when beta == 0); M or N == 0 touches nothing. */
static void test_gemm_empty(void)
{
    for (int dt = 0; dt < 2; dt++) {
        gemm_case(dt, 7, 9, 0, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 7, 9, 0, 1.0, 0.5, GEMM_ROW, GEMM_ROW, GEMM_PAD);
        gemm_case(dt, 0, 9, 5, 1.0, 0.5, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 7, 0, 5, 1.0, 0.5, GEMM_ROW, GEMM_ROW, GEMM_ROW);
    }
    float c = 3.0f;
    ct__gemm_f32(1, 1, 0, 1.0f, NULL, 1, 1, NULL, 1, 1, 2.0f, &c, 1, 1);
    CHECK(c == 6.0f);
}

/* Shapes spanning several MC/KC/NC blocks and threads, and the MLP's products:
   x (64, 784) @ W1^T, dW = dy^T (512, 64) @ x (64, 784), dx = dy @ W. */
static void test_gemm_large(void)
{
    for (int dt = 0; dt < 2; dt++) {
        gemm_case(dt, 257, 263, 531, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 300, 3100, 40, 1.0, 1.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 64, 512, 784, 1.0, 0.0, GEMM_ROW, GEMM_COL, GEMM_ROW);
        gemm_case(dt, 512, 784, 64, 1.0, 1.0, GEMM_COL, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 64, 784, 512, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_COL);
    }
}

/* Thin products (the unpacked kernels): the MLP's logits layer x (64, 512) @ W^T, its
   gradients g^T (10, 64) @ x and g (64, 10) @ W, a small square, every N from 1 to 17 with K
   tails that are not multiples of 16, alpha != 1 and beta in {0 over NaN, 0.5}, in every
   layout. */
static void test_gemm_thin(void)
{
    static const double alphas[] = {1.0, -0.75};
    static const double betas[] = {0.0, 0.5};
    for (int dt = 0; dt < 2; dt++) {
        for (int ab = 0; ab < 4; ab++) {
            double alpha = alphas[ab / 2], beta = betas[ab % 2];
            gemm_case(dt, 64, 10, 512, alpha, beta, GEMM_ROW, GEMM_COL, GEMM_ROW);
            gemm_case(dt, 10, 512, 64, alpha, beta, GEMM_COL, GEMM_ROW, GEMM_ROW);
            gemm_case(dt, 64, 512, 10, alpha, beta, GEMM_ROW, GEMM_ROW, GEMM_ROW);
            gemm_case(dt, 64, 64, 64, alpha, beta, GEMM_ROW, GEMM_ROW, GEMM_ROW);
            for (int64_t n = 1; n <= 17; n++) {
                gemm_case(dt, 13, n, 45, alpha, beta, GEMM_ROW, GEMM_COL, GEMM_ROW);
                gemm_case(dt, n, 70, 37, alpha, beta, GEMM_ROW, GEMM_COL, GEMM_ROW);
                gemm_case(dt, 9, n, 100, alpha, beta, GEMM_ROW, GEMM_COL, GEMM_COL);
                gemm_case(dt, 23, n, 33, alpha, beta, GEMM_ROW, GEMM_ROW, GEMM_ROW);
                gemm_case(dt, n, 67, 7, alpha, beta, GEMM_COL, GEMM_ROW, GEMM_ROW);
                gemm_case(dt, 150, 11, n, alpha, beta, GEMM_ROW, GEMM_ROW, GEMM_ROW);
                gemm_case(dt, 7, 131, n, alpha, beta, GEMM_COL, GEMM_COL, GEMM_COL);
            }
        }
        for (int la = 0; la < GEMM_LAYOUTS; la++) {
            for (int lb = 0; lb < GEMM_LAYOUTS; lb++) {
                for (int lc = 0; lc < GEMM_LAYOUTS; lc++) {
                    gemm_case(dt, 21, 10, 77, 1.0, 0.0, la, lb, lc);
                    gemm_case(dt, 10, 130, 20, -2.0, 0.5, la, lb, lc);
                    gemm_case(dt, 30, 47, 5, 0.5, 0.0, la, lb, lc);
                    gemm_case(dt, 3, 5, 300, 1.0, 0.5, la, lb, lc);
                }
            }
        }
        gemm_case(dt, 100, 1, 1000, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 1, 1000, 100, 1.0, 0.5, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 48, 48, 48, 1.0, 0.0, GEMM_ROW, GEMM_ROW, GEMM_ROW);
        gemm_case(dt, 15, 800, 64, 1.0, 0.0, GEMM_ROW, GEMM_COL, GEMM_ROW);
        gemm_case(dt, 12, 12, 5000, 1.0, 0.0, GEMM_ROW, GEMM_COL, GEMM_ROW);
    }
}

/* Few rows (the dot and axpy forms beyond the thin products' size, threaded over columns):
   every M from 1 to one past their row limits (48 and 64) with enough columns to pass the
   thin limit and a K tail that is not a multiple of 16; the dot form with A row-major or
   padded and B transposed (a Linear weight W^T), C in every layout; the axpy form with B and C
   rows contiguous, A row-major, padded or transposed; both for few columns too (C^T = B^T @
   A^T); then both sides of the dot form's K-dependent limit (16 and 17 rows of K = 1536);
   float32 and float64, against the float64 reference. */
static void test_gemm_small_m(void)
{
    for (int dt = 0; dt < 2; dt++) {
        for (int64_t m = 1; m <= 65; m++) {
            int64_t n = 884736 / (m * 389) + 7;
            int la = m % 2 ? GEMM_ROW : GEMM_PAD, lc = (int)(m % GEMM_LAYOUTS);
            int lr = m % 2 ? GEMM_PAD : GEMM_ROW;
            double alpha = m % 3 ? 1.0 : -0.5, beta = m % 4 ? 0.0 : 0.5;
            gemm_case(dt, m, n, 389, alpha, beta, la, GEMM_COL, lc);
            gemm_case(dt, n, m, 389, alpha, 1.0 - beta, la, GEMM_COL, lc);
            gemm_case(dt, m, n, 389, alpha, beta, m % 3 ? la : GEMM_COL, lr, la);
            gemm_case(dt, n, m, 389, alpha, beta, GEMM_COL, lc, GEMM_COL);
        }
        gemm_case(dt, 16, 384, 1536, 1.0, 1.0, GEMM_ROW, GEMM_COL, GEMM_ROW);
        gemm_case(dt, 17, 384, 1536, 1.0, 0.0, GEMM_ROW, GEMM_COL, GEMM_ROW);
        gemm_case(dt, 20, 1536, 384, 1.0, 1.0, GEMM_PAD, GEMM_COL, GEMM_COL);
    }
}

/* x (m, 384) @ W^T, W (1536, 384), for m = 20 and 3: a MiniLM's intermediate Linear on a few
   tokens (the dot form), then its transpose W @ x^T (few columns), then the axpy form: x @ W^T
   with W^T contiguous, for m = 20 and 7, float32. */
static void gemm_small_m_compute(ct_tensor **out)
{
    int64_t sw[2] = {1536, 384}, sx[2] = {20, 384};
    ct_manual_seed(9);
    ct_tensor *w = ct_randn(sw, 2, CT_FLOAT32, NULL), *x = ct_randn(sx, 2, CT_FLOAT32, NULL);
    out[0] = ct_keep(ct_linear(x, w, NULL));
    out[1] = ct_keep(ct_mm(w, ct_t(x)));
    out[2] = ct_keep(ct_linear(ct_narrow(x, 0, 0, 3), w, NULL));
    ct_tensor *wt = ct_contiguous(ct_t(w));
    out[3] = ct_keep(ct_mm(x, wt));
    out[4] = ct_keep(ct_mm(ct_narrow(x, 0, 0, 7), wt));
}

static void test_gemm_small_m_threads(void)
{
    CHECK_THREAD_INVARIANT(gemm_small_m_compute, 5);
}

void test_gemm(void)
{
    RUN(test_gemm_odd_shapes);
    RUN(test_gemm_vectors);
    RUN(test_gemm_layouts);
    RUN(test_gemm_alpha_beta);
    RUN(test_gemm_empty);
    RUN(test_gemm_large);
    RUN(test_gemm_thin);
    RUN(test_gemm_small_m);
    RUN(test_gemm_small_m_threads);
}
