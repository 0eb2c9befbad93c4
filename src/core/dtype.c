/* core/dtype.c - dtype tables, the promotion lattice, float16/bfloat16 conversions (scalar
 * and bulk) and torch.finfo/iinfo.
 *
 * The scalar conversions use integer operations only, so they do not depend on the
 * flush-to-zero mode; the bulk ones use F16C / AVX-512 / AVX512-BF16 where the compiler
 * targets them and give the same bits as the scalar ones on every path (lanes the
 * instructions treat differently, NaN and, for bfloat16, float32 subnormals, are redone by
 * the scalar functions).
 */
#include "internal.h"

#include <stdio.h>
#if !defined(CTORCH_NO_SIMD) && (defined(__F16C__) || defined(CT__HAS_AVX2))
#include <immintrin.h>
#endif

static ct_dtype ct__dtype_default = CT_FLOAT32;

ct_device ct_device_cpu(void)
{
    ct_device d;
    d.type = CT_CPU;
    d.index = 0;
    return d;
}

ct_device ct_make_device(ct_device_type type, int index)
{
    ct_device d;
    d.type = type;
    d.index = type == CT_CPU || index < 0 ? 0 : index;
    return d;
}

const char *ct__device_str(ct_device d, char *buf, size_t n)
{
    static const char *const names[CT_DEVICE_TYPE_COUNT] = {"cpu", "cuda", "privateuseone"};
    const char *name = (int)d.type >= 0 && d.type < CT_DEVICE_TYPE_COUNT ? names[d.type] : "?";
    if (d.type == CT_CPU) {
        snprintf(buf, n, "%s", name);
    } else {
        snprintf(buf, n, "%s:%d", name, d.index);
    }
    return buf;
}

bool ct__dtype_valid(ct_dtype d) { return d > CT_DTYPE_DEFAULT && d < CT_DTYPE_COUNT; }

const char *ct_dtype_name(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "default", "bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64",
        "float16", "bfloat16",
    };
    return (d >= 0 && d < CT_DTYPE_COUNT) ? names[d] : "invalid";
}

size_t ct_dtype_size(ct_dtype d)
{
    static const size_t sizes[CT_DTYPE_COUNT] = {0, 1, 1, 1, 2, 4, 8, 4, 8, 2, 2};
    return ct__dtype_valid(d) ? sizes[d] : 0;
}

bool ct_dtype_is_floating_point(ct_dtype d)
{
    return d == CT_FLOAT32 || d == CT_FLOAT64 || d == CT_FLOAT16 || d == CT_BFLOAT16;
}

bool ct_dtype_is_signed(ct_dtype d) { return ct__dtype_valid(d) && d != CT_BOOL && d != CT_UINT8; }

/* 0 bool, 1 integral, 2 floating */
int ct__dtype_category(ct_dtype d)
{
    return d == CT_BOOL ? 0 : ct_dtype_is_floating_point(d) ? 2 : 1;
}

ct_dtype ct_promote_types(ct_dtype a, ct_dtype b)
{
    if (!ct__check_dtype_arg("ct_promote_types", a) ||
        !ct__check_dtype_arg("ct_promote_types", b)) {
        return CT_DTYPE_DEFAULT;
    }
    a = ct__dtype_resolve(a);
    b = ct__dtype_resolve(b);
    if (a == b) {
        return a;
    }
    if (a == CT_BOOL) {
        return b;
    }
    if (b == CT_BOOL) {
        return a;
    }
    int ca = ct__dtype_category(a), cb = ct__dtype_category(b);
    if (ca != cb) {
        return ca > cb ? a : b;
    }
    if ((a == CT_UINT8 && b == CT_INT8) || (a == CT_INT8 && b == CT_UINT8)) {
        return CT_INT16;
    }
    if (ca == 2) { /* float16 + bfloat16 -> float32, else the wider */
        size_t sa = ct_dtype_size(a), sb = ct_dtype_size(b);
        return sa == sb ? CT_FLOAT32 : sa > sb ? a : b;
    }
    return a > b ? a : b; /* enum order is size order among the integers */
}

bool ct_can_cast(ct_dtype from, ct_dtype to)
{
    if (!ct__check_dtype_arg("ct_can_cast", from) || !ct__check_dtype_arg("ct_can_cast", to)) {
        return false;
    }
    from = ct__dtype_resolve(from);
    to = ct__dtype_resolve(to);
    return ct__dtype_category(from) <= ct__dtype_category(to);
}

ct_status ct_set_default_dtype(ct_dtype d)
{
    if (!ct__check_dtype_arg("ct_set_default_dtype", d)) {
        return CT_ERR_VALUE;
    }
    if (!ct_dtype_is_floating_point(d)) {
        return ct__fail(CT_ERR_DTYPE, "ct_set_default_dtype",
                        "only floating-point types are supported as the default type, got %s",
                        ct_dtype_name(d));
    }
    ct__dtype_default = d;
    return CT_OK;
}

ct_dtype ct_get_default_dtype(void) { return ct__dtype_default; }

ct_dtype ct__dtype_resolve(ct_dtype d) { return d == CT_DTYPE_DEFAULT ? ct__dtype_default : d; }

const char *ct__dtype_title(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "Undefined", "Bool", "Byte", "Char", "Short", "Int", "Long", "Float", "Double",
        "Half", "BFloat16",
    };
    return ct__dtype_valid(d) ? names[d] : "Undefined";
}

bool ct__check_enum(const char *op, const char *what, int value, int count)
{
    if (value >= 0 && value < count) {
        return true;
    }
    ct__fail(CT_ERR_VALUE, op, "%d is not a valid value for %s", value, what);
    return false;
}

bool ct__check_dtype_arg(const char *op, ct_dtype d)
{
    return ct__check_enum(op, "dtype", (int)d, CT_DTYPE_COUNT);
}

bool ct__scalar_fits(double v, ct_dtype d)
{
    /* [lowest, max + 1) of each integer type; max + 1 is a power of two, exact in double */
    static const double lo[CT_DTYPE_COUNT] = {0, 0, 0, -128.0, -32768.0, -2147483648.0,
                                              -9223372036854775808.0, 0, 0, 0, 0};
    static const double hi[CT_DTYPE_COUNT] = {0, 0, 256.0, 128.0, 32768.0, 2147483648.0,
                                              9223372036854775808.0, 0, 0, 0, 0};
    d = ct__dtype_resolve(d);
    switch (d) {
    case CT_BOOL:
    case CT_FLOAT64: return true;
    case CT_FLOAT32:
    case CT_FLOAT16:
    case CT_BFLOAT16: return !(fabs(v) > ct_finfo(d).max) || isinf(v);
    case CT_UINT8:
    case CT_INT8:
    case CT_INT16:
    case CT_INT32:
    case CT_INT64: return v >= lo[d] && v < hi[d];
    default: return false;
    }
}

bool ct__check_scalar(const char *op, double v, ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "", "bool", "uint8_t", "int8_t", "int16_t", "int", "int64_t", "float", "double",
        "c10::Half", "c10::BFloat16",
    };
    if (ct__scalar_fits(v, d)) {
        return true;
    }
    d = ct__dtype_resolve(d);
    ct__fail(CT_ERR_VALUE, op, "value cannot be converted to type %s without overflow",
             ct__dtype_valid(d) ? names[d] : "invalid");
    return false;
}

/* ---- float16 / bfloat16 ------------------------------------------------------------------ */

uint16_t ct_float_to_half(float value)
{
    uint32_t u = ct__f32_bits(value), a = u & 0x7fffffffu;
    uint16_t sign = (uint16_t)(u >> 16 & 0x8000u);
    if (a > 0x7f800000u) {
        return (uint16_t)(sign | 0x7e00u); /* NaN */
    }
    if (a >= 0x477ff000u) {
        return (uint16_t)(sign | 0x7c00u); /* >= 65520 (max + half an ulp): inf */
    }
    if (a >= 0x38800000u) { /* normal: round 13 mantissa bits away, rebias 127 -> 15 */
        uint32_t r = a + 0xfffu + (a >> 13 & 1u);
        return (uint16_t)(sign | (r - 0x38000000u) >> 13);
    }
    if (a <= 0x33000000u) {
        return sign; /* <= 2^-25, half the smallest subnormal: +-0 */
    }
    /* subnormal result: mantissa * 2^(e - 150) in units of 2^-24, rounded to nearest even */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    r += rem > half || (rem == half && (r & 1u));
    return (uint16_t)(sign | r);
}

float ct_half_to_float(uint16_t bits)
{
    uint32_t sign = (uint32_t)(bits & 0x8000u) << 16, e = bits >> 10 & 0x1fu, m = bits & 0x3ffu;
    if (e == 0x1fu) { /* inf, or NaN quieted as the hardware conversion does */
        return ct__f32_from_bits(sign | 0x7f800000u | m << 13 | (m ? 0x400000u : 0u));
    }
    if (e) {
        return ct__f32_from_bits(sign | (e + 112u) << 23 | m << 13);
    }
    if (!m) {
        return ct__f32_from_bits(sign);
    }
    for (e = 113u; !(m & 0x400u); e--) { /* subnormal: normalize m * 2^-24 */
        m <<= 1;
    }
    return ct__f32_from_bits(sign | e << 23 | (m & 0x3ffu) << 13);
}

uint16_t ct_float_to_bfloat16(float value)
{
    uint32_t u = ct__f32_bits(value);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return 0x7fc0u;
    }
    return (uint16_t)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
}

float ct_bfloat16_to_float(uint16_t bits) { return ct__f32_from_bits((uint32_t)bits << 16); }

/* g++ 12 at -O2 warns "may be used uninitialized" inside its own AVX-512 headers (the
   _mm512_undefined_* source of the unmasked intrinsics, GCC bug 105593) once they are inlined
   here: the warning is off for the bulk conversions. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* The bulk conversions: a vector body where the target has one, the scalar functions for the
   tail and for the lanes the instructions convert differently. */
static void ct__half_load(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
#if !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX512)
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    }
#elif !defined(CTORCH_NO_SIMD) && defined(__F16C__)
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    }
#endif
    for (; i < n; i++) {
        dst[i] = ct_half_to_float(src[i]);
    }
}

static void ct__half_store(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
#if !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX512)
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(src + i);
        if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q)) { /* NaN: without the payload */
            for (int k = 0; k < 16; k++) {
                dst[i + k] = ct_float_to_half(src[i + k]);
            }
            continue;
        }
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
#elif !defined(CTORCH_NO_SIMD) && defined(__F16C__)
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) {
            for (int k = 0; k < 8; k++) {
                dst[i + k] = ct_float_to_half(src[i + k]);
            }
            continue;
        }
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
#endif
    for (; i < n; i++) {
        dst[i] = ct_float_to_half(src[i]);
    }
}

static void ct__bf16_load(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
#if !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX512)
    for (; i + 16 <= n; i += 16) {
        __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
        _mm512_storeu_si512((void *)(dst + i), _mm512_slli_epi32(w, 16));
    }
#elif !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX2)
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_slli_epi32(w, 16));
    }
#endif
    for (; i < n; i++) {
        dst[i] = ct_bfloat16_to_float(src[i]);
    }
}

static void ct__bf16_store(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
#if !defined(CTORCH_NO_SIMD) && defined(__AVX512BF16__) && defined(CT__HAS_AVX512)
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), sub_max = _mm512_set1_epi32(0x7fffff);
    const __m512i inf = _mm512_set1_epi32(0x7f800000), one = _mm512_set1_epi32(1);
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(src + i);
        __m512i a = _mm512_and_si512(_mm512_castps_si512(x), abs_mask);
        /* the instruction flushes subnormals and keeps NaN payloads: those lanes go scalar */
        if (_mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, one), sub_max) |
            _mm512_cmpgt_epu32_mask(a, inf)) {
            for (int k = 0; k < 16; k++) {
                dst[i + k] = ct_float_to_bfloat16(src[i + k]);
            }
            continue;
        }
        __m256bh r = _mm512_cvtneps_pbh(x);
        memcpy(dst + i, &r, sizeof r);
    }
#endif
    for (; i < n; i++) {
        dst[i] = ct_float_to_bfloat16(src[i]);
    }
}

void ct__half_to_float_n(ct_dtype d, const char *src, int64_t stride, float *dst, int64_t n)
{
    if (stride != 2) {
        for (int64_t i = 0; i < n; i++) {
            uint16_t b;
            memcpy(&b, src + i * stride, sizeof b);
            dst[i] = d == CT_FLOAT16 ? ct_half_to_float(b) : ct_bfloat16_to_float(b);
        }
    } else if (d == CT_FLOAT16) {
        ct__half_load((const uint16_t *)(const void *)src, dst, n);
    } else {
        ct__bf16_load((const uint16_t *)(const void *)src, dst, n);
    }
}

void ct__float_to_half_n(ct_dtype d, const float *src, char *dst, int64_t stride, int64_t n)
{
    if (stride != 2) {
        for (int64_t i = 0; i < n; i++) {
            uint16_t b = d == CT_FLOAT16 ? ct_float_to_half(src[i]) : ct_float_to_bfloat16(src[i]);
            memcpy(dst + i * stride, &b, sizeof b);
        }
    } else if (d == CT_FLOAT16) {
        ct__half_store(src, (uint16_t *)(void *)dst, n);
    } else {
        ct__bf16_store(src, (uint16_t *)(void *)dst, n);
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* ---- finfo / iinfo ------------------------------------------------------------------------ */
ct_float_info ct_finfo(ct_dtype dtype)
{
    /* bits, eps, max, smallest normal, resolution */
    static const double t[4][5] = {
        {16, 0.0009765625, 65504.0, 6.103515625e-05, 1e-3},
        {16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 1e-2},
        {32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-6},
        {64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15},
    };
    ct_float_info r;
    memset(&r, 0, sizeof r);
    if (!ct__check_dtype_arg("ct_finfo", dtype)) {
        return r;
    }
    dtype = ct__dtype_resolve(dtype);
    if (!ct_dtype_is_floating_point(dtype)) {
        ct__fail(CT_ERR_DTYPE, "ct_finfo", "torch.finfo() requires a floating point input type. "
                 "Use torch.iinfo to handle 'torch.finfo'");
        return r;
    }
    const double *row = t[dtype == CT_FLOAT16 ? 0 : dtype == CT_BFLOAT16 ? 1
                          : dtype == CT_FLOAT32 ? 2 : 3];
    r.dtype = dtype;
    r.bits = (int)row[0];
    r.eps = row[1];
    r.max = row[2];
    r.min = -row[2];
    r.tiny = r.smallest_normal = row[3];
    r.resolution = row[4];
    return r;
}

ct_int_info ct_iinfo(ct_dtype dtype)
{
    ct_int_info r;
    memset(&r, 0, sizeof r);
    if (!ct__check_dtype_arg("ct_iinfo", dtype)) {
        return r;
    }
    dtype = ct__dtype_resolve(dtype);
    if (dtype == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, "ct_iinfo", "torch.bool is not supported by torch.iinfo");
        return r;
    }
    if (ct_dtype_is_floating_point(dtype)) {
        ct__fail(CT_ERR_DTYPE, "ct_iinfo", "torch.iinfo() requires an integer input type. Use "
                 "torch.finfo to handle 'torch.iinfo'");
        return r;
    }
    r.dtype = dtype;
    r.bits = 8 * (int)ct_dtype_size(dtype);
    r.max = dtype == CT_UINT8 ? 255 : (int64_t)(UINT64_MAX >> (65 - r.bits));
    r.min = dtype == CT_UINT8 ? 0 : -r.max - 1;
    return r;
}
