/* ops/vmath.h - branch-free float32 exp, log, tanh, sigmoid and erf that compilers vectorize
 * (libm calls block vectorization), and exp on AVX-512 vectors. Private: static inline,
 * included by the kernels.
 *
 * Every multiply-add is an explicit fmaf, no other product feeds an addition, and exp ends
 * in an fmaf with a zero addend (a multiply the compiler cannot contract with the caller's
 * sum), so results do not depend on -ffp-contract, -std or -O. fmaf is one instruction where
 * the target has FMA (-march=native on x86-64 since Haswell), a slower library call elsewhere.
 * ct__expf_v16 (AVX-512) does exp's operations lane by lane and is bit-identical to
 * ct__expf for every float32 input, with or without flush-to-zero (checked over all 2^32
 * inputs once; tests/test_ops.c compares them on a sample).
 *
 * Accuracy against libm in double, over one float32 block of 16 in 7 (a one-off sweep): exp
 * 0.89 ulp on [-87.3, 88.7], log 0.82 ulp on normal inputs, tanh 1.37 ulp, sigmoid 2.40 ulp;
 * tests/test_core.c (test_vmath_ulp) asserts exp, log <= 2 ulp and tanh, sigmoid <= 3 ulp on
 * 4M normal floats spread over the range. erf: 1.27 ulp over every float in [0, 5] in steps of
 * 7 ulp (glibc's erff: 0.90), asserted <= 2 ulp by tests/test_pointwise2.c (test_pw2_erff_ulp);
 * it is forced inline (CT__FORCE_INLINE).
 * Special values: exp(-inf) = 0,
 * exp(+inf) = inf, exp(x > 88.72) = inf, log(0) = -inf, log(x < 0) = NaN, NaN -> NaN.
 * exp's subnormal results (x < -87.34) are correctly rounded, or 0 under flush-to-zero.
 */

#if defined(CT__HAS_AVX512)
#include <immintrin.h>
#endif

/* A static inline function the compiler must inline (gcc's -O2 inliner leaves larger ones as
   calls, which block vectorization): every function here, and the kernels' per-element
   wrappers. */
#if defined(__GNUC__) || defined(__clang__)
#define CT__FORCE_INLINE __attribute__((always_inline)) static inline
#else
#define CT__FORCE_INLINE static inline
#endif

CT__FORCE_INLINE float ct__f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

CT__FORCE_INLINE uint32_t ct__f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* e^x: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite), e^r by a degree-7 polynomial in
   Horner form (Cephes expf coefficients), times 2^n as 2^(n/2) 2^(n - n/2), both normal; x
   is clamped to [-104, 89] first, where e^x rounds to 0 below and to inf above. */
CT__FORCE_INLINE float ct__expf(float x)
{
    float xc = x < -104.0f ? -104.0f : x; /* NaN passes */
    xc = xc > 89.0f ? 89.0f : xc;
    float t = fmaf(xc, 1.44269504088896341f, 12582912.0f); /* 1.5 2^23 + n, rounded */
    float n = t - 12582912.0f;
    float r = fmaf(n, -0.693359375f, xc);
    r = fmaf(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    /* n from t's low bits: no float-to-int conversion (undefined for NaN), no branch */
    int32_t ni = (int32_t)(ct__f32_bits(t) & 0x7fffffffu) - 0x4b400000, na = ni / 2, nb = ni - na;
    p = p * ct__f32_from_bits((uint32_t)(na + 127) << 23); /* exact */
    return fmaf(p, ct__f32_from_bits((uint32_t)(nb + 127) << 23), 0.0f); /* rounds once */
}

#if defined(CT__HAS_AVX512)
/* max(a, b) (a > b ? a : b, so b where either is NaN), min(a, b) likewise, and a 2^floor(b),
   by the masked intrinsics with every lane set: the plain ones read an undefined vector that
   g++ 12 -O2 reports as maybe-uninitialized. */
static inline __m512 ct__max_v16(__m512 a, __m512 b)
{
    return _mm512_mask_max_ps(a, (__mmask16)0xffff, a, b);
}

static inline __m512 ct__min_v16(__m512 a, __m512 b)
{
    return _mm512_mask_min_ps(a, (__mmask16)0xffff, a, b);
}

static inline __m512 ct__scalef_v16(__m512 a, __m512 b)
{
    return _mm512_mask_scalef_ps(a, (__mmask16)0xffff, a, b);
}

/* ct__expf on 16 lanes, the same operations (p 2^n by one scalef, which rounds as the
   multiplies do): bit-identical to it. */
static inline __m512 ct__expf_v16(__m512 x)
{
    __m512 xc = ct__max_v16(_mm512_set1_ps(-104.0f), x); /* NaN passes */
    xc = ct__min_v16(_mm512_set1_ps(89.0f), xc);
    const __m512 shift = _mm512_set1_ps(12582912.0f);
    __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), shift),
                             shift);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), xc);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return ct__scalef_v16(p, n);
}
#endif

/* ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m by the Cephes logf polynomial. */
CT__FORCE_INLINE float ct__logf(float x)
{
    bool tiny = x < 1.17549435e-38f; /* subnormal inputs: scale up by 2^25 first */
    float xs = tiny ? x * 33554432.0f : x;
    uint32_t u = ct__f32_bits(xs);
    int32_t e = (int32_t)((u >> 23) & 0xff) - 126;
    float m = ct__f32_from_bits((u & 0x007fffffu) | 0x3f000000u); /* in [0.5, 1) */
    bool small = m < 0.707106781186547524f;
    e = small ? e - 1 : e;
    m = small ? m + m - 1.0f : m - 1.0f;
    float z = m * m;
    float p = 7.0376836292e-2f;
    p = fmaf(p, m, -1.1514610310e-1f);
    p = fmaf(p, m, 1.1676998740e-1f);
    p = fmaf(p, m, -1.2420140846e-1f);
    p = fmaf(p, m, 1.4249322787e-1f);
    p = fmaf(p, m, -1.6668057665e-1f);
    p = fmaf(p, m, 2.0000714765e-1f);
    p = fmaf(p, m, -2.4999993993e-1f);
    p = fmaf(p, m, 3.3333331174e-1f);
    float fe = (float)(tiny ? e - 25 : e);
    float y = p * m * z;
    y = fmaf(fe, -2.12194440e-4f, y);
    y = fmaf(-0.5f, z, y);
    y = fmaf(fe, 0.693359375f, m + y);
    y = x == 0.0f ? -(float)INFINITY : y;
    y = x < 0.0f ? (float)NAN : y;
    y = x == (float)INFINITY ? x : y;
    return x != x ? x : y;
}

/* tanh x: Cephes odd polynomial for |x| < 0.625, else 1 - 2/(e^(2|x|) + 1), sign restored. */
CT__FORCE_INLINE float ct__tanhf(float x)
{
    float a = x < 0 ? -x : x;
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = fmaf(p, z, 2.06390887954e-2f);
    p = fmaf(p, z, -5.37397155531e-2f);
    p = fmaf(p, z, 1.33314422036e-1f);
    p = fmaf(p, z, -3.33332819422e-1f);
    float small = fmaf(x * z, p, x);
    float big = 1.0f - 2.0f / (ct__expf(a + a) + 1.0f);
    big = x < 0 ? -big : big;
    float y = a < 0.625f ? small : big;
    return x != x ? x : y;
}

/* 1 / (1 + e^-x) */
CT__FORCE_INLINE float ct__sigmoidf(float x) { return 1.0f / (1.0f + ct__expf(-x)); }

/* erf x: x + x Q(x^2) for |x| < 1 (Q = erf(x)/x - 1, degree 6, 1.2e-9 relative); for
   1 <= |x| < 3.92, 1 - e^(-x^2) R(1/|x|) with R = erfc(x) e^(x^2) (degree 10, 2.1e-9
   relative) and e^(-x^2) from x^2 = hi + lo split exactly by an fmaf; +-1 beyond (erf rounds
   to 1 there). Both branches are computed and one selected (no branch: it vectorizes). */
CT__FORCE_INLINE float ct__erff(float x)
{
    float a = x < 0 ? -x : x;
    float z = x * x;
    float q = 7.847259258e-05f;
    q = fmaf(q, z, -8.008189034e-04f);
    q = fmaf(q, z, 5.188099109e-03f);
    q = fmaf(q, z, -2.685369179e-02f);
    q = fmaf(q, z, 1.128358245e-01f);
    q = fmaf(q, z, -3.761262596e-01f);
    q = fmaf(q, z, 0.1283791671f);
    float small = fmaf(x, q, x);
    float ac = a < 1.0f ? 1.0f : (a > 3.92f ? 3.92f : a); /* NaN: 3.92, replaced below */
    float t = 1.0f / ac;
    float r = -3.538664058e-02f;
    r = fmaf(r, t, 2.470666170e-01f);
    r = fmaf(r, t, -7.623633742e-01f);
    r = fmaf(r, t, 1.347271681e+00f);
    r = fmaf(r, t, -1.445720792e+00f);
    r = fmaf(r, t, 8.459172845e-01f);
    r = fmaf(r, t, -4.444015026e-02f);
    r = fmaf(r, t, -2.928811610e-01f);
    r = fmaf(r, t, 4.540627822e-03f);
    r = fmaf(r, t, 5.635447502e-01f);
    r = fmaf(r, t, 3.471292803e-05f);
    float hi = ac * ac, lo = fmaf(ac, ac, -hi);
    float e = ct__expf(-hi);
    e = fmaf(e, -lo, e); /* e^(-hi - lo) = e^-hi (1 - lo) to within lo^2 */
    float big = a >= 3.92f ? 1.0f : fmaf(-e, r, 1.0f);
    big = x < 0 ? -big : big;
    float y = a < 1.0f ? small : big;
    return x != x ? x : y;
}
