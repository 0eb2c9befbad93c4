/* tests/test_half.c - float16/bfloat16 and int8/int16 against PyTorch (tools/gen_golden_half.py):
 * conversions bit for bit (special values, 2^16 random floats, every 16-bit pattern; the
 * bulk F16C/AVX-512 paths equal to the scalar ones), the promotion table for every dtype
 * pair, ops in those dtypes on contiguous, transposed, step-sliced and broadcast inputs (the
 * dispatcher's float32 fallback and the native kernels), a gradient through half tensors,
 * torch.finfo / torch.iinfo and the messages naming 'Half' / 'BFloat16'.
 */
#include "test.h"

#include <stdlib.h>

typedef struct half_case {
    const char *op;
    ct_dtype a_dtype, b_dtype, out_dtype;
    int tol;        /* in units in the last place of the output dtype */
    int a[4], b[4]; /* base rows, cols, layout, seed; b rows 0: a unary op */
    int out_ndim;
    int64_t out_shape[2];
    int64_t out[256]; /* bits of floating outputs, values of integer ones */
} half_case;
typedef struct half_finfo_row {
    ct_dtype dtype;
    int bits;
    double eps, max, min, tiny, smallest_normal, resolution;
} half_finfo_row;
typedef struct half_iinfo_row {
    ct_dtype dtype;
    int bits;
    int64_t min, max;
} half_iinfo_row;
#include "golden/half_golden.h"

enum { CONTIG, TRANSPOSED, STEP };

static uint64_t fnv(uint64_t h, uint64_t w) { return (h ^ w) * 0x100000001b3ull; }
#define FNV_OFFSET 0xcbf29ce484222325ull

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static bool is_nan16(ct_dtype d, uint32_t b)
{
    return (b & 0x7fffu) > (d == CT_FLOAT16 ? 0x7c00u : 0x7f80u);
}

/* The float32 patterns gen_golden_half.py draws (lcg_floats). */
static void lcg_floats(uint32_t *out, int64_t n)
{
    uint64_t s = 12345;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t b = (uint32_t)(s >> 32);
        if (i & 1) {
            b = (b & 0x807fffffu) | (uint32_t)(103 + (i / 2) % 40) << 23;
        }
        out[i] = b;
    }
}

static void test_half_special_values(void)
{
    for (size_t i = 0; i < sizeof half_special / sizeof half_special[0]; i++) {
        float f = f32_from_bits(half_special[i][0]);
        uint16_t h = ct_float_to_half(f), b = ct_float_to_bfloat16(f);
        if (isnan(f)) { /* PyTorch's own paths disagree on NaN payloads: only NaN-ness */
            CHECK(is_nan16(CT_FLOAT16, h) && (h & 0x8000u) == (half_special[i][1] & 0x8000u));
            CHECK(b == 0x7fc0u);
            continue;
        }
        CHECK_MSG(h == half_special[i][1], "half(%08x) = %04x, want %04x", half_special[i][0],
                  h, half_special[i][1]);
        CHECK_MSG(b == half_special[i][2], "bfloat16(%08x) = %04x, want %04x",
                  half_special[i][0], b, half_special[i][2]);
    }
    CHECK(f32_bits(ct_half_to_float(0x7c01u)) == 0x7fc02000u); /* NaN quieted, as F16C */
    CHECK(f32_bits(ct_half_to_float(0x8001u)) == 0xb3800000u); /* -2^-24 */
    CHECK(f32_bits(ct_bfloat16_to_float(0x7f81u)) == 0x7f810000u);
    CHECK(ct_half_to_float(0x7bffu) == 65504.0f && ct_bfloat16_to_float(0x3f80u) == 1.0f);
}

/* The hashes of the random floats converted to float16 / bfloat16 (NaN canonical), and the
   bulk conversion of the same floats (a tensor copy, F16C / AVX512-BF16 where compiled in,
   in parallel chunks under the flush-to-zero mode) equal to the scalar one bit for bit. */
static void test_half_random_floats(void)
{
    static uint32_t bits[HALF_LCG_N];
    lcg_floats(bits, HALF_LCG_N);
    int64_t n = HALF_LCG_N;
    ct_tensor *f = ct_tensor_from_data(bits, CT_FLOAT32, &n, 1);
    const ct_dtype dts[2] = {CT_FLOAT16, CT_BFLOAT16};
    const uint64_t want[2] = {half_hash_to_f16, half_hash_to_bf16};
    for (int k = 0; k < 2; k++) {
        ct_tensor *h = ct_to_dtype(f, dts[k]);
        const uint16_t *hb = (const uint16_t *)ct_data_ptr(h);
        uint64_t hash = FNV_OFFSET;
        int64_t bad = -1;
        for (int64_t i = 0; i < n; i++) {
            float v = f32_from_bits(bits[i]);
            uint16_t s = k == 0 ? ct_float_to_half(v) : ct_float_to_bfloat16(v);
            hash = fnv(hash, is_nan16(dts[k], s) ? (k == 0 ? 0x7e00u : 0x7fc0u) : s);
            bad = bad < 0 && hb[i] != s ? i : bad;
        }
        CHECK_MSG(hash == want[k], "%s hash %016llx, want %016llx", ct_dtype_name(dts[k]),
                  (unsigned long long)hash, (unsigned long long)want[k]);
        CHECK_MSG(bad < 0, "bulk %s of %08x differs", ct_dtype_name(dts[k]),
                  bad < 0 ? 0u : bits[bad]);
        ct_free(h);
    }
    ct_free(f);
}

/* Every float16 / bfloat16 pattern to float32 (hash vs PyTorch; the bulk conversion equal to
   the scalar one, contiguous and strided), and back to the same bits. */
static void test_half_all_patterns(void)
{
    static uint16_t all[65536];
    for (int i = 0; i < 65536; i++) {
        all[i] = (uint16_t)i;
    }
    int64_t n = 65536, two[2] = {256, 256};
    const ct_dtype dts[2] = {CT_FLOAT16, CT_BFLOAT16};
    const uint64_t want[2] = {half_hash_from_f16, half_hash_from_bf16};
    for (int k = 0; k < 2; k++) {
        ct_scope_begin();
        ct_tensor *h = ct_tensor_from_data(all, dts[k], &n, 1);
        ct_tensor *wide = ct_to_dtype(h, CT_FLOAT32);
        ct_tensor *wide_t = ct_contiguous(ct_to_dtype(
            ct_transpose(ct_tensor_from_data(all, dts[k], two, 2), 0, 1), CT_FLOAT32));
        ct_tensor *back = ct_to_dtype(wide, dts[k]);
        const uint32_t *w = (const uint32_t *)ct_data_ptr(wide);
        const uint32_t *wt = (const uint32_t *)ct_data_ptr(wide_t);
        const uint16_t *bk = (const uint16_t *)ct_data_ptr(back);
        uint64_t hash = FNV_OFFSET;
        int bad = -1;
        for (int i = 0; i < 65536; i++) {
            float s = k == 0 ? ct_half_to_float((uint16_t)i) : ct_bfloat16_to_float((uint16_t)i);
            hash = fnv(hash, isnan(s) ? 0x7fc00000u : f32_bits(s));
            int tr = (i % 256) * 256 + i / 256; /* element i of the transposed copy */
            bool same = w[i] == f32_bits(s) && wt[tr] == f32_bits(s) &&
                        (isnan(s) || bk[i] == (uint16_t)i);
            bad = bad < 0 && !same ? i : bad;
        }
        CHECK_MSG(hash == want[k], "%s hash %016llx", ct_dtype_name(dts[k]),
                  (unsigned long long)hash);
        CHECK_MSG(bad < 0, "%s pattern %04x converts differently", ct_dtype_name(dts[k]), bad);
        ct_scope_end();
    }
}

/* float16 <-> bfloat16 through float32, float64 and integers through float32, as c10. */
static void test_half_cross_conversions(void)
{
    ct_scope_begin();
    double v[6] = {1.0 + 1.0 / 2048 + 1e-12, 65519.0, -3.7, 300.0, 1e-8, 70000.0};
    int64_t n = 6;
    ct_tensor *d = ct_tensor_from_data(v, CT_FLOAT64, &n, 1);
    ct_tensor *h = ct_to_dtype(d, CT_FLOAT16), *b = ct_to_dtype(h, CT_BFLOAT16);
    for (int i = 0; i < 6; i++) {
        float f = (float)v[i];
        CHECK(((const uint16_t *)ct_data_ptr(h))[i] == ct_float_to_half(f));
        CHECK(((const uint16_t *)ct_data_ptr(b))[i] ==
              ct_float_to_bfloat16(ct_half_to_float(ct_float_to_half(f))));
    }
    ct_tensor *i8 = ct_to_dtype(h, CT_INT8), *i64 = ct_to_dtype(b, CT_INT64);
    CHECK(ct_item(ct_select(i8, 0, 2)) == -3 && ct_item(ct_select(i8, 0, 3)) == 44);
    CHECK(ct_item_int64(ct_select(i64, 0, 3)) == 300);
    CHECK(ct_item(ct_select(h, 0, 5)) == INFINITY && ct_item(ct_select(h, 0, 1)) == 65504.0);
    int64_t one = 1;
    int16_t raw16 = 12345;
    ct_tensor *fi = ct_to_dtype(ct_tensor_from_data(&raw16, CT_INT16, &one, 1), CT_FLOAT16);
    CHECK(ct_item(fi) == 12344.0); /* 12345 rounds to even at a step of 8 */
    ct_scope_end();
}

static void test_half_promotion(void)
{
    for (int a = 1; a < CT_DTYPE_COUNT; a++) {
        for (int b = 1; b < CT_DTYPE_COUNT; b++) {
            ct_dtype da = (ct_dtype)a, db = (ct_dtype)b;
            CHECK_MSG(ct_promote_types(da, db) == half_promote[a - 1][b - 1],
                      "promote_types(%s, %s) = %s", ct_dtype_name(da), ct_dtype_name(db),
                      ct_dtype_name(ct_promote_types(da, db)));
            ct_scope_begin();
            int64_t two = 2;
            ct_tensor *t = ct_zeros(&two, 1, da), *z = ct_zeros(NULL, 0, db);
            CHECK_MSG(ct_result_type(t, z) == half_result_zero_dim[a - 1][b - 1],
                      "result_type(%s tensor, %s 0-dim)", ct_dtype_name(da), ct_dtype_name(db));
            if (b == 1) {
                CHECK(ct_tensor_dtype(ct_add_scalar(t, 2.0)) == half_result_scalar[a - 1][0]);
                CHECK(ct_tensor_dtype(ct_add_scalar(t, 2.5)) == half_result_scalar[a - 1][1]);
            }
            ct_scope_end();
        }
    }
    CHECK(ct_can_cast(CT_INT64, CT_FLOAT16) && ct_can_cast(CT_FLOAT64, CT_BFLOAT16));
    CHECK(!ct_can_cast(CT_BFLOAT16, CT_INT8));
    CHECK(ct_dtype_is_floating_point(CT_FLOAT16) && ct_dtype_is_signed(CT_BFLOAT16));
    CHECK(ct_dtype_size(CT_FLOAT16) == 2 && ct_dtype_size(CT_BFLOAT16) == 2);
    CHECK(strcmp(ct_dtype_name(CT_FLOAT16), "float16") == 0);
    CHECK(strcmp(ct_dtype_name(CT_BFLOAT16), "bfloat16") == 0);
}

/* ((i * 7 + seed * 3) % 19 - 9) / 4 (floating) or * 13 (integers), (rows, cols), as dtype. */
static ct_tensor *base_tensor(const int *spec, ct_dtype dtype)
{
    double v[256];
    int64_t sizes[2] = {spec[0], spec[1]};
    bool fl = ct_dtype_is_floating_point(dtype);
    for (int i = 0; i < spec[0] * spec[1]; i++) {
        double x = (double)((i * 7 + spec[3] * 3) % 19 - 9);
        v[i] = fl ? x / 4 : x * 13;
    }
    ct_tensor *t = ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, sizes, 2), dtype);
    return spec[2] == TRANSPOSED ? ct_transpose(t, 0, 1)
           : spec[2] == STEP     ? ct_slice(t, 1, 0, spec[1], 2)
                                 : t;
}

typedef ct_tensor *(*unary_fn)(const ct_tensor *);
typedef ct_tensor *(*binary_fn)(const ct_tensor *, const ct_tensor *);

static ct_tensor *sum1(const ct_tensor *a) { return ct_sum_dim(a, 1, false); }
static ct_tensor *amax1(const ct_tensor *a)
{
    int64_t d = 1;
    return ct_amax(a, &d, 1, false);
}
static ct_tensor *softmax1(const ct_tensor *a) { return ct_softmax(a, 1); }
static ct_tensor *clamp(const ct_tensor *a) { return ct_clamp(a, -50, 60); }
static ct_tensor *add_s(const ct_tensor *a) { return ct_add_scalar(a, 0.1); }
static ct_tensor *mul_s(const ct_tensor *a) { return ct_mul_scalar(a, 0.3); }
static ct_tensor *to_f32(const ct_tensor *a) { return ct_to_dtype(a, CT_FLOAT32); }
static ct_tensor *to_i8(const ct_tensor *a) { return ct_to_dtype(ct_mul_scalar(a, 1.5), CT_INT8); }
static ct_tensor *to_i16(const ct_tensor *a)
{
    return ct_to_dtype(ct_mul_scalar(a, 300), CT_INT16);
}
static ct_tensor *index_select(const ct_tensor *a)
{
    int64_t idx[3] = {2, 0, 2}, n = 3;
    return ct_index_select(a, 1, ct_tensor_from_data(idx, CT_INT64, &n, 1));
}
static ct_tensor *gather(const ct_tensor *a)
{
    int64_t idx[6] = {1, 0, 2, 2, 0, 1}, s[2] = {3, 2};
    return ct_gather(a, 1, ct_tensor_from_data(idx, CT_INT64, s, 2));
}
static ct_tensor *masked_fill(const ct_tensor *a)
{
    return ct_masked_fill(a, ct_gt_scalar(a, 0), 5);
}
static ct_tensor *add_alpha2_(const ct_tensor *a, const ct_tensor *b)
{
    return ct_add_((ct_tensor *)(uintptr_t)a, b, 2.0);
}
static ct_tensor *mul_(const ct_tensor *a, const ct_tensor *b)
{
    return ct_mul_((ct_tensor *)(uintptr_t)a, b);
}

static ct_tensor *run_op(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    static const struct {
        const char *name;
        binary_fn fn;
    } bin[] = {{"add", ct_add},        {"sub", ct_sub},     {"mul", ct_mul},
               {"div", ct_div},        {"maximum", ct_maximum}, {"eq", ct_eq},
               {"lt", ct_lt},          {"matmul", ct_matmul}, {"add_alpha2_", add_alpha2_},
               {"mul_", mul_}};
    static const struct {
        const char *name;
        unary_fn fn;
    } un[] = {{"exp", ct_exp},       {"tanh", ct_tanh},         {"sigmoid", ct_sigmoid},
              {"sqrt", ct_sqrt},     {"neg", ct_neg},           {"abs", ct_abs},
              {"relu", ct_relu},     {"sum", ct_sum},           {"mean", ct_mean},
              {"argmax", ct_argmax}, {"sum1", sum1},            {"amax1", amax1},
              {"softmax1", softmax1}, {"clamp", clamp},         {"to_float32", to_f32},
              {"to_int8", to_i8},    {"to_int16", to_i16},      {"index_select", index_select},
              {"gather", gather},    {"masked_fill", masked_fill}, {"add_s", add_s},
              {"mul_s", mul_s}};
    for (size_t k = 0; b && k < sizeof bin / sizeof bin[0]; k++) {
        if (strcmp(op, bin[k].name) == 0) {
            return bin[k].fn(a, b);
        }
    }
    for (size_t k = 0; !b && k < sizeof un / sizeof un[0]; k++) {
        if (strcmp(op, un[k].name) == 0) {
            return un[k].fn(a);
        }
    }
    return NULL;
}

/* A floating value's bits as an integer that orders like the value (ulps apart = distance). */
static int64_t ordered(ct_dtype d, int64_t bits)
{
    int64_t sign = d == CT_FLOAT32 ? 0x80000000ll : 0x8000ll;
    return bits & sign ? -(bits & (sign - 1)) : bits;
}

static bool raw_nan(ct_dtype d, int64_t bits)
{
    return d == CT_FLOAT32 ? (bits & 0x7fffffff) > 0x7f800000 : is_nan16(d, (uint32_t)bits);
}

/* Element i of the contiguous t: bits of a floating dtype, the value of an integer one. */
static int64_t raw_at(const ct_tensor *t, int64_t i)
{
    const void *p = ct_data_ptr(t);
    switch (ct_tensor_dtype(t)) {
    case CT_FLOAT16:
    case CT_BFLOAT16: return ((const uint16_t *)p)[i];
    case CT_FLOAT32: return ((const uint32_t *)p)[i];
    default: return ct_item_int64(ct_select(ct_flatten(t, 0, -1), 0, i));
    }
}

static void check_case(const half_case *hc)
{
    ct_scope_begin();
    ct_tensor *a = base_tensor(hc->a, hc->a_dtype);
    ct_tensor *b = hc->b[0] ? base_tensor(hc->b, hc->b_dtype) : NULL;
    ct_tensor *out = ct_contiguous(run_op(hc->op, a, b));
    CHECK_MSG(out && ct_tensor_dtype(out) == hc->out_dtype, "%s %s: %s", hc->op,
              ct_dtype_name(hc->a_dtype), ct_error() ? ct_error() : "wrong dtype");
    if (out && ct_test_has_shape(out, hc->out_shape, hc->out_ndim)) {
        bool fl = ct_dtype_is_floating_point(hc->out_dtype);
        for (int64_t i = 0; i < ct_numel(out); i++) {
            int64_t got = raw_at(out, i), want = hc->out[i];
            bool ok = fl ? (raw_nan(hc->out_dtype, got) && raw_nan(hc->out_dtype, want)) ||
                               llabs(ordered(hc->out_dtype, got) -
                                     ordered(hc->out_dtype, want)) <= hc->tol
                         : got == want;
            CHECK_MSG(ok, "%s %s (a %d/%d, b %d/%d) [%lld] = %llx, want %llx", hc->op,
                      ct_dtype_name(hc->a_dtype), hc->a[2], hc->a[3], hc->b[2], hc->b[3],
                      (long long)i, (long long)got, (long long)want);
            if (!ok) {
                break;
            }
        }
    } else {
        CHECK_MSG(false, "%s %s: wrong shape", hc->op, ct_dtype_name(hc->a_dtype));
    }
    ct_error_clear();
    ct_scope_end();
}

static void test_half_ops_golden(void)
{
    int n = (int)(sizeof half_cases / sizeof half_cases[0]);
    CHECK(n >= 120);
    for (int k = 0; k < n; k++) {
        check_case(&half_cases[k]);
    }
}

/* Every dtype pair: float64 values -> source -> destination, as PyTorch converts. */
static void test_half_convert_pairs(void)
{
    int64_t n = 8;
    for (int s = 1; s < CT_DTYPE_COUNT; s++) {
        for (int d = 1; d < CT_DTYPE_COUNT; d++) {
            ct_scope_begin();
            ct_tensor *src = ct_to_dtype(ct_tensor_from_data(half_convert_values, CT_FLOAT64,
                                                             &n, 1), (ct_dtype)s);
            ct_tensor *dst = ct_to_dtype(src, (ct_dtype)d);
            const int64_t *want = half_convert[(s - 1) * (CT_DTYPE_COUNT - 1) + d - 1];
            for (int64_t i = 0; dst && i < n; i++) {
                int64_t got = d == CT_FLOAT64 ? ((const int64_t *)ct_data_ptr(dst))[i]
                                              : raw_at(dst, i);
                CHECK_MSG(got == want[i], "%s -> %s [%lld]: %llx, want %llx",
                          ct_dtype_name((ct_dtype)s), ct_dtype_name((ct_dtype)d), (long long)i,
                          (long long)got, (long long)want[i]);
            }
            ct_scope_end();
        }
    }
}

static void check_grad(const ct_tensor *x, ct_dtype dt, const int64_t *want, const char *what)
{
    const ct_tensor *g = ct_grad(x);
    CHECK_MSG(g && ct_tensor_dtype(g) == dt, "%s %s: no grad in the dtype", what,
              ct_dtype_name(dt));
    for (int64_t i = 0; g && i < 24; i++) {
        int64_t got = raw_at(g, i);
        CHECK_MSG(llabs(ordered(dt, got) - ordered(dt, want[i])) <= 1,
                  "%s %s grad[%lld] = %llx, want %llx", what, ct_dtype_name(dt), (long long)i,
                  (long long)got, (long long)want[i]);
    }
}

/* The gradients of sum(x * w + exp(x)) and of sum(x @ w^T) in the tensor's dtype, as PyTorch
   computes them. */
static void test_half_gradient(void)
{
    static const int xs[4] = {3, 8, CONTIG, 1}, ws[4] = {3, 8, CONTIG, 2};
    const ct_dtype dts[2] = {CT_FLOAT16, CT_BFLOAT16};
    for (int k = 0; k < 2; k++) {
        ct_scope_begin();
        ct_tensor *x = ct_requires_grad_(base_tensor(xs, dts[k]), true);
        ct_tensor *w = base_tensor(ws, dts[k]);
        ct_tensor *y = ct_sum(ct_add(ct_mul(x, w), ct_exp(x)));
        CHECK(ct_tensor_dtype(y) == dts[k]);
        CHECK(ct_backward(y, NULL, false) == CT_OK);
        check_grad(x, dts[k], half_grad[2 * k], "x * w + exp(x)");
        ct_set_grad(x, NULL);
        y = ct_sum(ct_matmul(x, ct_transpose(w, 0, 1)));
        CHECK(ct_backward(y, NULL, false) == CT_OK);
        check_grad(x, dts[k], half_grad[2 * k + 1], "x @ w^T");
        ct_scope_end();
    }
}

/* The dispatcher's float32 path: in-place ops on half views write back into the view only,
   the kernel runs once per call, and autograd saves the half tensors (no float32 leaks
   into the graph). */
static void test_half_fallback_inplace(void)
{
    ct_scope_begin();
    int64_t s[2] = {4, 6};
    ct_tensor *t = ct_zeros(s, 2, CT_BFLOAT16);
    ct_tensor *col = ct_select(t, 1, 2);
    CHECK(ct_exp_(col) == col && ct_tensor_dtype(col) == CT_BFLOAT16);
    CHECK(ct_item(ct_sum(t)) == 4.0); /* exp(0) = 1 in column 2 only */
    CHECK(ct_item(ct_select(ct_select(t, 0, 3), 0, 2)) == 1.0);
    CHECK(ct_version(t) == 1);
    ct_tensor *x = ct_requires_grad_(ct_full(s, 2, 0.5, CT_FLOAT16), true);
    ct_tensor *y = ct_tanh(x);
    CHECK(ct_tensor_dtype(y) == CT_FLOAT16 && ct_grad_fn(y));
    CHECK(ct_backward(ct_sum(y), NULL, false) == CT_OK);
    /* tanh's backward g * (1 - y * y) on the float16 y, computed in float32, rounded once */
    float th = ct_half_to_float(ct_float_to_half(tanhf(0.5f))), sq = th * th;
    CHECK(ct_item(ct_select(ct_flatten(ct_grad(x), 0, -1), 0, 7)) ==
          ct_half_to_float(ct_float_to_half(1.0f - sq)));
    ct_scope_end();
}

/* Results in float16/bfloat16 do not depend on the thread count (native add, the float32
   path of sum and softmax, conversions). */
static void test_half_threads(void)
{
    int saved = ct_get_num_threads();
    int64_t s[2] = {300, 1000};
    const ct_dtype dts[2] = {CT_FLOAT16, CT_BFLOAT16};
    for (int k = 0; k < 2; k++) {
        ct_scope_begin();
        ct_manual_seed(3);
        ct_tensor *x = ct_to_dtype(ct_randn(s, 2, CT_FLOAT32, NULL), dts[k]);
        ct_tensor *r[2][3];
        for (int t = 0; t < 2; t++) {
            ct_set_num_threads(t ? 4 : 1);
            r[t][0] = ct_add(x, ct_transpose(ct_transpose(x, 0, 1), 0, 1));
            r[t][1] = ct_sum(x);
            r[t][2] = ct_softmax(x, 0);
        }
        for (int j = 0; j < 3; j++) {
            CHECK(memcmp(ct_data_ptr(r[0][j]), ct_data_ptr(r[1][j]), ct_nbytes(r[0][j])) == 0);
        }
        ct_scope_end();
    }
    ct_set_num_threads(saved);
}

static void test_half_errors(void)
{
    ct_scope_begin();
    int64_t two = 2;
    ct_tensor *l = ct_zeros(&two, 1, CT_INT64);
    CHECK(ct_add_(l, ct_zeros(&two, 1, CT_FLOAT16), 1.0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type Half can't be cast to the desired output type Long");
    CHECK(ct_add_(l, ct_zeros(&two, 1, CT_BFLOAT16), 1.0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "result type BFloat16 can't be cast");
    CHECK(ct_full(&two, 1, 70000.0, CT_FLOAT16) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "value cannot be converted to type c10::Half without overflow");
    CHECK(ct_full(&two, 1, 1e39, CT_BFLOAT16) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "c10::BFloat16 without overflow");
    CHECK(ct_full(&two, 1, 65504.0, CT_FLOAT16) != NULL && ct_full(&two, 1, INFINITY, CT_FLOAT16));
    CHECK(ct_full(&two, 1, 200.0, CT_INT8) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "value cannot be converted to type int8_t without overflow");
    CHECK(ct_finfo(CT_INT32).bits == 0);
    CHECK_ERROR(CT_ERR_DTYPE, "torch.finfo() requires a floating point input type");
    CHECK(ct_iinfo(CT_FLOAT16).bits == 0);
    CHECK_ERROR(CT_ERR_DTYPE, "torch.iinfo() requires an integer input type");
    CHECK(ct_iinfo(CT_BOOL).bits == 0);
    CHECK_ERROR(CT_ERR_DTYPE, "torch.bool is not supported by torch.iinfo");
    CHECK(ct_finfo((ct_dtype)99).bits == 0);
    CHECK_ERROR(CT_ERR_VALUE, "99 is not a valid value for dtype");
    ct_scope_end();
}

static void test_half_type_info(void)
{
    for (size_t k = 0; k < sizeof half_finfo / sizeof half_finfo[0]; k++) {
        const half_finfo_row *r = &half_finfo[k];
        ct_float_info f = ct_finfo(r->dtype);
        CHECK(f.dtype == r->dtype && f.bits == r->bits && f.eps == r->eps && f.max == r->max &&
              f.min == r->min && f.tiny == r->tiny && f.smallest_normal == r->smallest_normal &&
              f.resolution == r->resolution);
    }
    CHECK(ct_finfo(CT_DTYPE_DEFAULT).dtype == CT_FLOAT32);
    for (size_t k = 0; k < sizeof half_iinfo / sizeof half_iinfo[0]; k++) {
        const half_iinfo_row *r = &half_iinfo[k];
        ct_int_info i = ct_iinfo(r->dtype);
        CHECK(i.dtype == r->dtype && i.bits == r->bits && i.min == r->min && i.max == r->max);
    }
}

/* float16 as the default dtype (torch.set_default_dtype accepts it), float16 in NPY files
   ('<f2'; numpy has no bfloat16). */
static void test_half_default_dtype_npy(void)
{
    ct_scope_begin();
    int64_t two = 2;
    CHECK(ct_set_default_dtype(CT_FLOAT16) == CT_OK);
    CHECK(ct_tensor_dtype(ct_zeros(&two, 1, CT_DTYPE_DEFAULT)) == CT_FLOAT16);
    CHECK(ct_tensor_dtype(ct_add_scalar(ct_zeros(&two, 1, CT_INT32), 2.5)) == CT_FLOAT16);
    CHECK(ct_set_default_dtype(CT_FLOAT32) == CT_OK);
    ct_tensor *h = ct_full(&two, 1, 0.1, CT_FLOAT16);
    char buf[256];
    size_t nb = ct_npy_save_buffer(h, buf, sizeof buf);
    CHECK(nb > 0 && nb <= sizeof buf && memcmp(buf + 10, "{'descr': '<f2'", 15) == 0);
    ct_tensor *r = ct_npy_load_buffer(buf, nb);
    CHECK(r && ct_tensor_dtype(r) == CT_FLOAT16 &&
          ((const uint16_t *)ct_data_ptr(r))[1] == ct_float_to_half(0.1f));
    CHECK(ct_npy_save_buffer(ct_zeros(&two, 1, CT_BFLOAT16), buf, sizeof buf) == 0);
    CHECK_ERROR(CT_ERR_DTYPE, "numpy has no dtype for bfloat16");
    ct_scope_end();
}

/* int8 / int16 factories and item access (the ops are in the golden cases). */
static void test_half_small_ints(void)
{
    ct_scope_begin();
    int64_t three = 3;
    const ct_dtype dts[2] = {CT_INT8, CT_INT16};
    for (int k = 0; k < 2; k++) {
        ct_tensor *f = ct_full(&three, 1, -100.0, dts[k]);
        ct_tensor *r = ct_arange(-2, 7, 3, dts[k]);
        CHECK(ct_tensor_dtype(f) == dts[k] && ct_item_int64(ct_sum(f)) == -300);
        CHECK(ct_tensor_dtype(ct_sum(f)) == CT_INT64);
        CHECK(ct_tensor_dtype(r) == dts[k] && ct_numel(r) == 3);
        CHECK(ct_item(ct_select(r, 0, 2)) == 4.0);
        CHECK(ct_item_int64(ct_amax(ct_ones_like(f), NULL, 0, false)) == 1);
        CHECK(ct_item(ct_select(ct_zeros(&three, 1, dts[k]), 0, 1)) == 0.0);
    }
    ct_scope_end();
}

void test_half(void)
{
    RUN(test_half_special_values);
    RUN(test_half_random_floats);
    RUN(test_half_all_patterns);
    RUN(test_half_cross_conversions);
    RUN(test_half_promotion);
    RUN(test_half_convert_pairs);
    RUN(test_half_ops_golden);
    RUN(test_half_gradient);
    RUN(test_half_fallback_inplace);
    RUN(test_half_threads);
    RUN(test_half_errors);
    RUN(test_half_type_info);
    RUN(test_half_default_dtype_npy);
    RUN(test_half_small_ints);
}
