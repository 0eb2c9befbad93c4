/* tests/test_imm.c - integer matrix products: PyTorch's results (tools/gen_golden_imm.py,
 * tests/golden/imm_golden.h) of mm, bmm, mv, dot, vdot, matmul, addmm, baddbmm, addbmm, addmv,
 * inner, tensordot, einsum, multi_dot, matrix_power and linear on uint8 ... int64 (contiguous,
 * transposed, step-sliced and broadcast operands, wrapping sums and products), products larger
 * than the GEMM's blocks against a direct sum, thread-count independence, PyTorch's checks of
 * beta and alpha, and its errors for bool and mixed dtypes.
 */
#include "test.h"

#include <math.h>
#include <string.h>

typedef struct imm_operand {
    int nd;
    int how; /* 0 contiguous, 1 the transpose of its base, 2 every other element of the base */
    int64_t shape[4];
    int64_t at; /* the base's values: imm_golden_values + at */
} imm_operand;

typedef struct imm_golden {
    const char *op, *eq;
    ct_dtype dtype;
    double beta, alpha;
    int64_t n; /* matrix_power's exponent */
    int n_in;
    imm_operand in[3];
    int ond;
    int64_t out_shape[4];
    int64_t out; /* imm_golden_values + out */
} imm_golden;
#include "golden/imm_golden.h"

#define N_CASES ((int)(sizeof imm_golden_cases / sizeof imm_golden_cases[0]))

/* Operand k of a case: its base in the case's dtype, then transposed or stepped. */
static ct_tensor *imm_operand_of(const imm_golden *g, int k)
{
    const imm_operand *o = &g->in[k];
    int64_t base[4];
    memcpy(base, o->shape, sizeof base);
    if (o->how == 1) {
        base[o->nd - 2] = o->shape[o->nd - 1];
        base[o->nd - 1] = o->shape[o->nd - 2];
    } else if (o->how == 2) {
        base[o->nd - 1] *= 2;
    }
    ct_tensor *b = ct_to_dtype(
        ct_tensor_from_data(imm_golden_values + o->at, CT_INT64, base, o->nd), g->dtype);
    if (o->how == 1) {
        return ct_transpose(b, o->nd - 2, o->nd - 1);
    }
    return o->how == 2 ? ct_slice(b, o->nd - 1, 0, base[o->nd - 1], 2) : b;
}

typedef ct_tensor *(*imm_fn2)(const ct_tensor *, const ct_tensor *);
typedef ct_tensor *(*imm_fn3)(const ct_tensor *, const ct_tensor *, const ct_tensor *, double,
                              double);

/* The case's op on its operands x. */
static ct_tensor *imm_run(const imm_golden *g, ct_tensor *const *x)
{
    static const struct {
        const char *name;
        imm_fn2 fn;
    } two[] = {{"mm", ct_mm},         {"bmm", ct_bmm},       {"mv", ct_mv},
               {"dot", ct_dot},       {"vdot", ct_vdot},     {"matmul", ct_matmul},
               {"inner", ct_inner}};
    static const struct {
        const char *name;
        imm_fn3 fn;
    } three[] = {{"addmm", ct_addmm}, {"baddbmm", ct_baddbmm}, {"addbmm", ct_addbmm},
                 {"addmv", ct_addmv}};
    const ct_tensor *cx[3] = {x[0], x[1], x[2]};
    for (size_t k = 0; k < sizeof two / sizeof two[0]; k++) {
        if (!strcmp(g->op, two[k].name)) {
            return two[k].fn(x[0], x[1]);
        }
    }
    for (size_t k = 0; k < sizeof three / sizeof three[0]; k++) {
        if (!strcmp(g->op, three[k].name)) {
            return three[k].fn(x[0], x[1], x[2], g->beta, g->alpha);
        }
    }
    const int64_t last = -1, first = 0;
    if (!strcmp(g->op, "tensordot")) {
        return ct_tensordot(x[0], x[1], &last, 1, &first, 1);
    }
    if (!strcmp(g->op, "einsum")) {
        return ct_einsum(g->eq, cx, g->n_in);
    }
    if (!strcmp(g->op, "multi_dot")) {
        return ct_linalg_multi_dot(cx, g->n_in);
    }
    if (!strcmp(g->op, "linear")) {
        return ct_linear(x[0], x[1], x[2]);
    }
    return ct_linalg_matrix_power(x[0], g->n);
}

/* t's values as int64 (numel of them) equal want. */
static bool imm_equal(const ct_tensor *t, const int64_t *want, int64_t numel)
{
    ct_tensor *c = ct_contiguous(ct_to_dtype(t, CT_INT64));
    const int64_t *v = c ? (const int64_t *)ct_data_ptr(c) : NULL;
    return v && !memcmp(v, want, sizeof(int64_t) * (size_t)numel);
}

static void test_imm_golden(void)
{
    CHECK(N_CASES == 27 * 5); /* every case of the generator */
    for (int i = 0; i < N_CASES; i++) {
        const imm_golden *g = &imm_golden_cases[i];
        ct_scope_begin();
        ct_tensor *x[3] = {NULL, NULL, NULL};
        for (int k = 0; k < g->n_in; k++) {
            x[k] = imm_operand_of(g, k);
        }
        ct_tensor *r = imm_run(g, x);
        bool ok = r && ct_tensor_dtype(r) == g->dtype &&
                  ct_test_has_shape(r, g->out_shape, g->ond) &&
                  imm_equal(r, imm_golden_values + g->out, ct_test_numel(g->out_shape, g->ond));
        CHECK_MSG(ok, "case %d: %s %s %s", i, g->op, ct_dtype_name(g->dtype),
                  r ? "" : ct_error());
        ct_scope_end();
    }
}

/* v modulo 2^bits of d, read as d's type (sign-extended for signed types). */
static int64_t imm_wrap(uint64_t v, ct_dtype d)
{
    int bits = (int)ct_dtype_size(d) * 8;
    if (bits == 64) {
        return (int64_t)v;
    }
    uint64_t m = v & ((UINT64_C(1) << bits) - 1), sign = UINT64_C(1) << (bits - 1);
    return d == CT_UINT8 ? (int64_t)m : (int64_t)(m ^ sign) - (int64_t)sign;
}

/* alpha * a (M, K) @ b (K, N) + beta * c by a direct sum in wrapping 64-bit arithmetic. */
static ct_tensor *imm_reference(const ct_tensor *a, const ct_tensor *b, const ct_tensor *c,
                                int64_t beta, int64_t alpha)
{
    ct_tensor *a64 = ct_contiguous(ct_to_dtype(a, CT_INT64));
    ct_tensor *b64 = ct_contiguous(ct_to_dtype(b, CT_INT64));
    ct_tensor *r = ct_contiguous(ct_to_dtype(c, CT_INT64));
    int64_t M = ct_size(a, 0), K = ct_size(a, 1), N = ct_size(b, 1);
    const int64_t *pa = (const int64_t *)ct_data_ptr(a64), *pb = (const int64_t *)ct_data_ptr(b64);
    int64_t *pr = (int64_t *)ct_data_ptr(r);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            uint64_t acc = 0;
            for (int64_t p = 0; p < K; p++) {
                acc += (uint64_t)pa[i * K + p] * (uint64_t)pb[p * N + j];
            }
            uint64_t v = (uint64_t)alpha * acc + (uint64_t)beta * (uint64_t)pr[i * N + j];
            pr[i * N + j] = imm_wrap(v, ct_tensor_dtype(a));
        }
    }
    return r;
}

/* Products over several K and N blocks of the integer GEMM, with transposed operands and the
   N == 1 (mv) path, equal a direct sum, and the same bits on 1 and 4 threads. */
static void test_imm_large(void)
{
    static const ct_dtype dts[5] = {CT_UINT8, CT_INT8, CT_INT16, CT_INT32, CT_INT64};
    static const int64_t shapes[3][3] = {{37, 300, 700}, {300, 1000, 1}, {1, 257, 1030}};
    int threads = ct_get_num_threads();
    ct_manual_seed(3);
    for (int d = 0; d < 5; d++) {
        for (int s = 0; s < 3; s++) {
            ct_scope_begin();
            int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
            int64_t sa[2] = {K, M}, sb[2] = {K, N}, sc[2] = {M, N};
            int64_t lo = dts[d] == CT_UINT8 ? 0 : -100, hi = 100;
            ct_tensor *a = ct_t(ct_randint(lo, hi, sa, 2, dts[d], NULL));
            ct_tensor *b = ct_randint(lo, hi, sb, 2, dts[d], NULL);
            if (s == 0) { /* B transposed: its rows are copied first */
                b = ct_t(ct_contiguous(ct_t(b)));
            }
            ct_tensor *c = ct_randint(lo, hi, sc, 2, dts[d], NULL);
            ct_set_num_threads(1);
            ct_tensor *r1 = ct_addmm(c, a, b, 3, -7);
            ct_set_num_threads(4);
            ct_tensor *r4 = ct_addmm(c, a, b, 3, -7);
            ct_tensor *want = imm_reference(a, b, c, 3, -7);
            CHECK_MSG(r1 && r4 && ct_equal(r1, r4), "%s %lld", ct_dtype_name(dts[d]),
                      (long long)M);
            CHECK_MSG(r4 && imm_equal(r4, (const int64_t *)ct_data_ptr(want), M * N), "%s %lld",
                      ct_dtype_name(dts[d]), (long long)M);
            ct_scope_end();
        }
    }
    ct_set_num_threads(threads);
}

/* beta and alpha as PyTorch's Scalar::to<T>: truncated toward zero, in T's range (an integral
   value down to -255 for uint8, wrapping). */
static void test_imm_scalars(void)
{
    ct_scope_begin();
    const int64_t s22[2] = {2, 2};
    ct_tensor *one[5];
    static const ct_dtype dts[5] = {CT_UINT8, CT_INT8, CT_INT16, CT_INT32, CT_INT64};
    for (int d = 0; d < 5; d++) {
        one[d] = ct_ones(s22, 2, dts[d]);
    }
    /* 1 + alpha * 2 for alpha = -1 (uint8: 255), 1.5 -> 1, -1.5 -> -1, 255.5 -> 255 */
    const int64_t m1[4] = {255, 255, 255, 255}, p3[4] = {3, 3, 3, 3};
    const int64_t m1s[4] = {-1, -1, -1, -1}, big[4] = {511, 511, 511, 511};
    const int64_t p2[4] = {2, 2, 2, 2};
    CHECK(imm_equal(ct_addmm(one[0], one[0], one[0], 1, -1), m1, 4));
    CHECK(imm_equal(ct_addmm(one[0], one[0], one[0], 1, 255), m1, 4));
    CHECK(imm_equal(ct_addmm(one[1], one[1], one[1], 1, 1.5), p3, 4));
    CHECK(imm_equal(ct_addmm(one[1], one[1], one[1], 1, -1.5), m1s, 4));
    CHECK(imm_equal(ct_addmm(one[2], one[2], one[2], 1, 255.5), big, 4));
    CHECK(imm_equal(ct_baddbmm(one[4], ct_unsqueeze(one[4], 0), ct_unsqueeze(one[4], 0), 0.5, 1),
                    p2, 4)); /* beta 0.5 -> 0 */
    static const struct {
        int d;
        double v;
        const char *msg;
    } bad[] = {
        {0, -1.5, "uint8_t"}, {0, -256, "uint8_t"},  {0, 256, "uint8_t"}, {1, 128, "int8_t"},
        {1, -129, "int8_t"},  {2, 32768, "int16_t"}, {3, 2147483648.0, "int"},
        {4, 9223372036854775808.0, "int64_t"},       {4, NAN, "int64_t"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ct_tensor *o = one[bad[k].d];
        char want[96];
        snprintf(want, sizeof want, "value cannot be converted to type %s without overflow",
                 bad[k].msg);
        CHECK_MSG(ct_addmm(o, o, o, 1, bad[k].v) == NULL, "alpha %g", bad[k].v);
        CHECK_ERROR(CT_ERR_VALUE, want);
        CHECK(ct_addmv(ct_select(o, 1, 0), o, ct_select(o, 1, 0), bad[k].v, 1) == NULL);
        CHECK_ERROR(CT_ERR_VALUE, want);
    }
    CHECK(ct_addbmm(one[1], ct_unsqueeze(one[1], 0), ct_unsqueeze(one[1], 0), 1, 300) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "value cannot be converted to type int8_t without overflow");
    CHECK(ct_baddbmm(one[1], ct_unsqueeze(one[1], 0), ct_unsqueeze(one[1], 0), -300, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "value cannot be converted to type int8_t without overflow");
    ct_scope_end();
}

/* r is NULL with PyTorch's error for a bool operand of the kernel it names. */
static void imm_check_bool(const ct_tensor *r, const char *kernel)
{
    char msg[96];
    snprintf(msg, sizeof msg, "\"%s\" not implemented for 'Bool'", kernel);
    CHECK_MSG(r == NULL, "%s", kernel);
    CHECK_ERROR(CT_ERR_DTYPE, msg);
}

/* Bool products: PyTorch's kernels' errors; matrix_power with n < 2 takes bool. Mixed
   dtypes: PyTorch's C++ type names. */
static void test_imm_errors(void)
{
    ct_scope_begin();
    const int64_t s22[2] = {2, 2}, s122[3] = {1, 2, 2};
    ct_tensor *b = ct_ones(s22, 2, CT_BOOL), *b3 = ct_ones(s122, 3, CT_BOOL);
    ct_tensor *v = ct_select(b, 0, 0);
    const ct_tensor *bs[3] = {b, b, b};
    const int64_t last = -1, first = 0;
    imm_check_bool(ct_mm(b, b), "addmm_impl_cpu_");
    imm_check_bool(ct_bmm(b3, b3), "bmm");
    imm_check_bool(ct_mv(b, v), "addmv_impl_cpu");
    imm_check_bool(ct_dot(v, v), "dot");
    imm_check_bool(ct_vdot(v, v), "dot");
    imm_check_bool(ct_matmul(b, b), "addmm_impl_cpu_");
    imm_check_bool(ct_matmul(v, v), "dot");
    imm_check_bool(ct_addmm(b, b, b, 1, 1), "addmm_impl_cpu_");
    imm_check_bool(ct_baddbmm(b3, b3, b3, 1, 1), "baddbmm");
    imm_check_bool(ct_addbmm(b, b3, b3, 1, 1), "addmm_impl_cpu_");
    imm_check_bool(ct_addmv(v, b, v, 1, 1), "addmv_impl_cpu");
    imm_check_bool(ct_inner(b, b), "addmm_impl_cpu_");
    imm_check_bool(ct_tensordot(b, b, &last, 1, &first, 1), "addmm_impl_cpu_");
    imm_check_bool(ct_einsum("ij,jk->ik", bs, 2), "bmm");
    imm_check_bool(ct_linalg_multi_dot(bs, 3), "addmm_impl_cpu_");
    imm_check_bool(ct_linalg_matrix_power(b, 2), "addmm_impl_cpu_");
    imm_check_bool(ct_linear(b, b, NULL), "addmm_impl_cpu_");
    const ct_tensor *vv[2] = {v, ct_logical_not(v)};
    ct_tensor *e2 = ct_einsum("i,j->ij", vv, 2), *e1 = ct_einsum("ij->j", bs, 1);
    CHECK(e2 && ct_tensor_dtype(e2) == CT_BOOL && ct_equal(e2, ct_zeros(s22, 2, CT_BOOL)));
    CHECK(e1 && ct_tensor_dtype(e1) == CT_INT64 && ct_equal(e1, ct_full(s22 + 1, 1, 2, CT_INT64)));
    ct_tensor *p1 = ct_linalg_matrix_power(b, 1), *p0 = ct_linalg_matrix_power(b, 0);
    CHECK(p1 && ct_tensor_dtype(p1) == CT_BOOL && ct_equal(p1, b));
    CHECK(p0 && ct_tensor_dtype(p0) == CT_BOOL && ct_equal(p0, ct_eye(2, 2, CT_BOOL)));
    ct_tensor *l = ct_ones(s22, 2, CT_INT64), *f = ct_ones(s22, 2, CT_FLOAT32);
    CHECK(ct_mm(l, f) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected m1 and m2 to have the same dtype, but got: long int != "
                              "float");
    CHECK(ct_matmul(f, ct_to_dtype(l, CT_UINT8)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected m1 and m2 to have the same dtype, but got: float != "
                              "unsigned char");
    CHECK(ct_mm(ct_to_dtype(l, CT_INT32), l) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected m1 and m2 to have the same dtype, but got: int != long "
                              "int");
    CHECK(ct_linear(ct_to_dtype(l, CT_INT16), ct_to_dtype(l, CT_INT8), NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected m1 and m2 to have the same dtype, but got: short int != "
                              "signed char");
    ct_scope_end();
}

void test_imm(void)
{
    RUN(test_imm_golden);
    RUN(test_imm_large);
    RUN(test_imm_scalars);
    RUN(test_imm_errors);
}
