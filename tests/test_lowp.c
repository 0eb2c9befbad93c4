/* tests/test_lowp.c - the bfloat16 / float16 GEMM (src/ops/gemm_lowp.c) and the CPU feature
 * detection (src/core/cpu.c): each kernel path (portable, AVX512-BF16, AMX: forced through
 * the test hook ct__cpu_limit, skipped where the CPU lacks it) against a float64 reference
 * of the rounded inputs on every shape class (1, tile - 1, tile, tile + 1, K blocks),
 * transposed and strided operands, alpha and beta, narrow and float32 C; thread invariance
 * per path; PyTorch's bfloat16 mm / addmm / linear / bmm and a float16 mm (golden).
 */
#include "test.h"
#include "golden/lowp_golden.h"

#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Internal (src/core/cpu.h, src/core/internal.h), not in the generated header's interface. */
unsigned ct__cpu_features(void);
unsigned ct__cpu_limit(unsigned mask);
bool ct__gemm_lowp(const char *op, ct_dtype d, int64_t M, int64_t N, int64_t K, float alpha,
                   const void *A, int64_t rsa, int64_t csa, const void *B, int64_t rsb,
                   int64_t csb, float beta, void *C, ct_dtype dc, int64_t rsc, int64_t csc);
#ifdef __cplusplus
}
#endif

/* The paths as feature masks of ct__cpu_limit (CT__CPU_AVX512_BF16 = 1, CT__CPU_AMX_BF16 = 2). */
static const unsigned lowp_masks[3] = {0u, 1u, 3u};
static const char *const lowp_names[3] = {"portable", "AVX512-BF16", "AMX"};

/* Whether path k can run here. */
static bool lowp_has(int k)
{
    unsigned f = ct__cpu_features();
    return (f & lowp_masks[k]) == lowp_masks[k];
}

/* Deterministic values in [-1, 1), rounded to d (their bits). */
static uint16_t lowp_value(ct_dtype d, uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    float v = (float)(*state >> 8) / (float)(1u << 23) - 1.0f;
    return d == CT_BFLOAT16 ? ct_float_to_bfloat16(v) : ct_float_to_half(v);
}

static double lowp_float(ct_dtype d, uint16_t b)
{
    return d == CT_BFLOAT16 ? ct_bfloat16_to_float(b) : ct_half_to_float(b);
}

/* Operand layouts: row-major, transposed, every other column with padded rows. */
static int64_t lowp_layout(int layout, int64_t rows, int64_t cols, int64_t *rs, int64_t *cs)
{
    *rs = layout == 1 ? 1 : layout == 2 ? 2 * cols + 1 : cols;
    *cs = layout == 1 ? rows : layout == 2 ? 2 : 1;
    return layout == 2 ? rows * (2 * cols + 1) : rows * cols;
}

/* One product on the current path against the float64 reference of the rounded inputs:
   error at most 2^-8 |ref| (the rounding of a narrow C) + 2^-22 K sum |a b| (float32
   accumulation), and the elements the strides skip untouched. */
static void lowp_case(ct_dtype d, ct_dtype dc, int64_t M, int64_t N, int64_t K, int la, int lb,
                      int lc, float alpha, float beta)
{
    int64_t rsa, csa, rsb, csb, rsc, csc;
    int64_t na = lowp_layout(la, M, K, &rsa, &csa), nb = lowp_layout(lb, K, N, &rsb, &csb);
    int64_t nc = lowp_layout(lc, M, N, &rsc, &csc);
    uint16_t *a = (uint16_t *)malloc(2 * (size_t)na), *b = (uint16_t *)malloc(2 * (size_t)nb);
    size_t ce = dc == CT_FLOAT32 ? 4 : 2;
    unsigned char *c = (unsigned char *)malloc(ce * (size_t)nc);
    unsigned char *c0 = (unsigned char *)malloc(ce * (size_t)nc);
    uint32_t st = (uint32_t)(M * 131 + N * 17 + K);
    for (int64_t i = 0; i < na; i++) {
        a[i] = lowp_value(d, &st);
    }
    for (int64_t i = 0; i < nb; i++) {
        b[i] = lowp_value(d, &st);
    }
    for (int64_t i = 0; i < nc; i++) {
        uint16_t h = lowp_value(dc == CT_FLOAT32 ? d : dc, &st);
        float f = (float)lowp_float(dc == CT_FLOAT32 ? d : dc, h);
        memcpy(c + ce * (size_t)i, dc == CT_FLOAT32 ? (const void *)&f : (const void *)&h, ce);
    }
    memcpy(c0, c, ce * (size_t)nc);
    CHECK(ct__gemm_lowp("test", d, M, N, K, alpha, a, rsa, csa, b, rsb, csb, beta, c, dc, rsc,
                        csc));
    int bad = 0;
    for (int64_t i = 0; i < M && !bad; i++) {
        for (int64_t j = 0; j < N && !bad; j++) {
            double acc = 0, mag = 0;
            for (int64_t p = 0; p < K; p++) {
                double x = lowp_float(d, a[i * rsa + p * csa]) *
                           lowp_float(d, b[p * rsb + j * csb]);
                acc += x;
                mag += fabs(x);
            }
            size_t at = ce * (size_t)(i * rsc + j * csc);
            double old, got;
            if (dc == CT_FLOAT32) {
                float f, g;
                memcpy(&f, c0 + at, 4);
                memcpy(&g, c + at, 4);
                old = f;
                got = g;
            } else {
                uint16_t f, g;
                memcpy(&f, c0 + at, 2);
                memcpy(&g, c + at, 2);
                old = lowp_float(dc, f);
                got = lowp_float(dc, g);
            }
            double want = alpha * acc + (beta != 0.0f ? beta * old : 0.0);
            double tol = (dc == CT_FLOAT32 ? 0.0 : ldexp(fabs(want), -8)) +
                         ldexp(K * fabs(alpha) * mag + fabs(beta * old), -22) + 1e-30;
            if (!(fabs(got - want) <= tol)) {
                CHECK_MSG(0, "M %lld N %lld K %lld layouts %d %d %d: C[%lld, %lld] = %.9g, "
                          "want %.9g", (long long)M, (long long)N, (long long)K, la, lb, lc,
                          (long long)i, (long long)j, got, want);
                bad = 1;
            }
        }
    }
    /* the elements between C's rows and columns (layout 2) keep their values */
    for (int64_t i = 0; i < nc && lc == 2 && !bad; i++) {
        if (i % rsc % 2 != 0 || i % rsc >= 2 * N) {
            CHECK(memcmp(c + ce * (size_t)i, c0 + ce * (size_t)i, ce) == 0);
        }
    }
    free(a);
    free(b);
    free(c);
    free(c0);
}

/* Every shape class on every path this CPU has. */
static void test_lowp_gemm_paths(void)
{
    /* 1, below / at / above the tiles (8 and 32 rows, 32 columns, K units 2 and 32), and K
       over two KC blocks */
    static const int64_t shapes[][3] = {{1, 1, 1},   {1, 33, 7},   {7, 1, 31},  {8, 32, 32},
                                        {9, 31, 33}, {15, 17, 3},  {16, 32, 64}, {17, 33, 65},
                                        {31, 64, 2}, {33, 65, 40}, {40, 40, 1030}};
    for (int k = 0; k < 3; k++) {
        if (!lowp_has(k)) {
            printf("    (lowp: no %s path on this CPU)\n", lowp_names[k]);
            continue;
        }
        unsigned old = ct__cpu_limit(lowp_masks[k]);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            lowp_case(CT_BFLOAT16, CT_BFLOAT16, M, N, K, 0, 0, 0, 1.0f, 0.0f);
            lowp_case(CT_BFLOAT16, CT_FLOAT32, M, N, K, (int)(s % 3), (int)((s + 1) % 3),
                      (int)((s + 2) % 3), 0.5f, 0.0f);
            lowp_case(CT_BFLOAT16, CT_BFLOAT16, M, N, K, (int)((s + 1) % 3), (int)(s % 3), 2,
                      2.0f, -0.75f);
        }
        /* C = A @ B + C: AMX tiles accumulate onto C's own values */
        lowp_case(CT_BFLOAT16, CT_FLOAT32, 64, 64, 40, 0, 0, 0, 1.0f, 1.0f);
        lowp_case(CT_BFLOAT16, CT_BFLOAT16, 64, 96, 1100, 1, 0, 0, 1.0f, 1.0f);
        lowp_case(CT_FLOAT16, CT_FLOAT16, 17, 33, 40, 1, 2, 0, 1.0f, 1.0f);
        lowp_case(CT_BFLOAT16, CT_FLOAT32, 20, 20, 0, 0, 0, 0, 1.0f, 0.5f);
        lowp_case(CT_BFLOAT16, CT_BFLOAT16, 20, 20, 10, 0, 0, 0, 0.0f, 2.0f);
        ct__cpu_limit(old);
    }
}

/* The mask the thread-invariance computation runs under. */
static unsigned lowp_mask;

static void lowp_products(ct_tensor **out)
{
    unsigned old = ct__cpu_limit(lowp_mask);
    int64_t sa[2] = {130, 200}, sb[2] = {200, 150}, sw[2] = {150, 200};
    ct_manual_seed(5);
    ct_tensor *a = ct_to_dtype(ct_randn(sa, 2, CT_FLOAT32, NULL), CT_BFLOAT16);
    ct_tensor *b = ct_to_dtype(ct_randn(sb, 2, CT_FLOAT32, NULL), CT_BFLOAT16);
    ct_tensor *w = ct_to_dtype(ct_randn(sw, 2, CT_FLOAT32, NULL), CT_BFLOAT16);
    out[0] = ct_keep(ct_mm(a, b));
    out[1] = ct_keep(ct_linear(a, w, NULL));
    ct__cpu_limit(old);
}

/* Each path gives the same bits for 1 and 4 threads. */
static void test_lowp_thread_invariant(void)
{
    for (int k = 0; k < 3; k++) {
        if (lowp_has(k)) {
            lowp_mask = lowp_masks[k];
            CHECK_THREAD_INVARIANT(lowp_products, 2);
        }
    }
}

/* A tensor over golden bits (copied). */
static ct_tensor *lowp_tensor(const lowp_golden *g, int k)
{
    return ct_tensor_from_data(g->in[k], g->dtype, g->shape[k].sizes, g->shape[k].ndim);
}

/* PyTorch's outputs, within one unit in the last place of the narrow dtype (the
   accumulation order differs), on every path. */
static void test_lowp_golden(void)
{
    for (int k = 0; k < 3; k++) {
        if (!lowp_has(k)) {
            continue;
        }
        unsigned old = ct__cpu_limit(lowp_masks[k]);
        for (size_t i = 0; i < sizeof lowp_golden_cases / sizeof lowp_golden_cases[0]; i++) {
            const lowp_golden *g = &lowp_golden_cases[i];
            ct_scope_begin();
            ct_tensor *x = lowp_tensor(g, 0), *y = lowp_tensor(g, 1);
            ct_tensor *z = g->in[2] ? lowp_tensor(g, 2) : NULL, *r = NULL;
            if (!strcmp(g->op, "mm")) {
                r = ct_mm(g->transpose_a ? ct_t(x) : x, y);
            } else if (!strcmp(g->op, "addmm")) {
                r = ct_addmm(x, y, z, g->beta, g->alpha);
            } else if (!strcmp(g->op, "linear")) {
                r = ct_linear(x, y, z);
            } else {
                r = ct_bmm(x, y);
            }
            CHECK_MSG(r && ct_tensor_dtype(r) == g->dtype, "%s (%s)", g->name, lowp_names[k]);
            double *want = (double *)malloc(sizeof(double) * (size_t)g->out_numel);
            double scale = 0;
            for (int64_t e = 0; e < g->out_numel; e++) {
                want[e] = lowp_float(g->dtype, g->out[e]);
                scale = fabs(want[e]) > scale ? fabs(want[e]) : scale;
            }
            double ulp = g->dtype == CT_BFLOAT16 ? ldexp(1.0, -7) : ldexp(1.0, -10);
            CHECK_TENSOR(r, want, g->out_numel, ulp, 1e-3 * scale);
            free(want);
            ct_scope_end();
        }
        ct__cpu_limit(old);
    }
}

/* The detected features agree with what Linux reports, and the hook masks them. */
static void test_lowp_cpu_features(void)
{
    unsigned f = ct__cpu_features();
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[4096];
        bool bf16 = false, amx = false, seen = false;
        while (!seen && fgets(line, sizeof line, fp)) {
            if (!strncmp(line, "flags", 5)) {
                seen = true;
                bf16 = strstr(line, " avx512_bf16") != NULL;
                amx = strstr(line, " amx_bf16") != NULL && strstr(line, " amx_tile") != NULL;
            }
        }
        fclose(fp);
#if defined(__x86_64__) && !defined(CTORCH_NO_SIMD)
        CHECK_MSG(!seen || bf16 == ((f & 1u) != 0), "avx512_bf16 in cpuinfo %d, found %u", bf16,
                  f);
        /* the OS may refuse the AMX permission, never grant AMX the CPU lacks */
        CHECK(amx || !(f & 2u));
#else
        (void)bf16;
        (void)amx;
#endif
    }
    unsigned old = ct__cpu_limit(1u);
    CHECK(old == ~0u);
    CHECK(ct__cpu_features() == (f & 1u));
    CHECK(ct__cpu_limit(old) == 1u);
    CHECK(ct__cpu_features() == f);
}

/* op(x) for the half kernels of the activations and relu (threshold_backward in backward) */
static ct_tensor *lowp_act(int op, const ct_tensor *x)
{
    switch (op) {
    case 0:
        return ct_relu(x);
    case 1:
        return ct_gelu(x, CT_GELU_NONE);
    case 2:
        return ct_gelu(x, CT_GELU_TANH);
    default:
        return ct_silu(x);
    }
}

/* The float16/bfloat16 kernels of relu and the activations (forward and backward, a
   transposed input) give the bits of the float32 computation rounded once, as the
   dispatcher's float32 path and PyTorch's CPU kernels. */
static void test_lowp_pointwise_kernels(void)
{
    const int64_t s[2] = {37, 19}, st[2] = {19, 37};
    for (int h = 0; h < 2; h++) {
        ct_dtype d = h ? CT_FLOAT16 : CT_BFLOAT16;
        for (int op = 0; op < 4; op++) {
            ct_scope_begin();
            ct_manual_seed(11);
            ct_tensor *base = ct_mul_scalar(ct_randn(s, 2, CT_FLOAT32, NULL), 3.0);
            ct_tensor *x = ct_requires_grad_(ct_to_dtype(base, d), true);
            ct_tensor *xt = ct_transpose(x, 0, 1);
            ct_tensor *g = ct_to_dtype(ct_randn(st, 2, CT_FLOAT32, NULL), d);
            ct_tensor *y = lowp_act(op, xt);
            CHECK(ct_backward(ct_sum(ct_mul(y, g)), NULL, false) == CT_OK);
            ct_tensor *xf = ct_requires_grad_(ct_to_dtype(ct_detach(x), CT_FLOAT32), true);
            ct_tensor *yf = lowp_act(op, ct_transpose(xf, 0, 1));
            CHECK(ct_backward(ct_sum(ct_mul(yf, ct_to_dtype(g, CT_FLOAT32))), NULL, false) ==
                  CT_OK);
            CHECK_MSG(y && ct_tensor_dtype(y) == d && ct_equal(y, ct_to_dtype(yf, d)),
                      "op %d dtype %s: forward", op, ct_dtype_name(d));
            /* the gradient: dx = g * f'(x) rounded once (mul's gradient of sum is g itself) */
            ct_tensor *gx = ct_grad(x), *want = ct_to_dtype(ct_grad(xf), d);
            CHECK_MSG(gx && ct_tensor_dtype(gx) == d && ct_equal(gx, want),
                      "op %d dtype %s: backward", op, ct_dtype_name(d));
            ct_scope_end();
        }
    }
    CHECK(!ct_error());
}

void test_lowp(void)
{
    RUN(test_lowp_cpu_features);
    RUN(test_lowp_gemm_paths);
    RUN(test_lowp_thread_invariant);
    RUN(test_lowp_golden);
    RUN(test_lowp_pointwise_kernels);
}
