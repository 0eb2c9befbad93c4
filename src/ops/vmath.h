/* ops/vmath.h - branch-free float32 exp, log, tanh, sigmoid and erf that compilers vectorize
 * (libm calls block vectorization), exp on AVX-512 vectors, and the float32 functions behind
 * expm1, log1p, exp2, log2, log10, atan, atan2, asin, acos, atanh and erfinv (the end of the
 * file). Private: static inline, included by the kernels.
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

/* gcc's default -ftrapping-math keeps a select between two computed floats (the special cases
   below) as a branch, which blocks vectorization; no-trapping-math (clang's default) lets it
   if-convert them. It changes no result: it only allows evaluating operations whose
   floating-point exceptions (which ctorch never reads) are not observed. CT__FP_SPECULATE
   turns it on (with the vectorizer) until the enclosing CT__VECTORIZE_END or the end of this
   file; it must be the same in a function and the functions inlined into it. */
#if defined(__GNUC__) && !defined(__clang__)
#define CT__FP_SPECULATE                                                                    \
    _Pragma("GCC optimize(\"tree-vectorize\", \"vect-cost-model=cheap\", \"no-trapping-math\")")
#pragma GCC push_options
CT__FP_SPECULATE
#else
#define CT__FP_SPECULATE
#endif

/* A static inline function the compiler must inline (gcc's -O2 inliner leaves larger ones as
   calls, which block vectorization): every function here, and the kernels' per-element
   wrappers. */
/* CT__NOINLINE: kept out of line (a strided loop calls the per-element math rather than
   compiling another inlined copy of it). */
#if defined(__GNUC__) || defined(__clang__)
#define CT__FORCE_INLINE __attribute__((always_inline)) static inline
#define CT__NOINLINE __attribute__((noinline))
#else
#define CT__FORCE_INLINE static inline
#define CT__NOINLINE
#endif

/* 2^n p for the n whose 1.5 2^23 + n is t, n read from t's low bits (no float-to-int
   conversion, undefined for NaN; no branch), by two scalings so that n in [-151, 129] stays
   normal at each: the first is exact, the second (a multiply the compiler cannot contract
   with the caller's sum) rounds once. */
CT__FORCE_INLINE float ct__scale_by_t(float p, float t)
{
    int32_t ni = (int32_t)(ct__f32_bits(t) & 0x7fffffffu) - 0x4b400000, na = ni / 2, nb = ni - na;
    p = p * ct__f32_from_bits((uint32_t)(na + 127) << 23); /* exact */
    return fmaf(p, ct__f32_from_bits((uint32_t)(nb + 127) << 23), 0.0f);
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
    return ct__scale_by_t(p, t);
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

/* The Cephes logf polynomial P(m), ln(1 + m) = m - m^2 / 2 + m^3 P(m) for m in
   [sqrt(1/2) - 1, sqrt(2) - 1), by Horner's rule with fused multiply-adds. */
CT__FORCE_INLINE float ct__logf_poly(float m)
{
    float p = 7.0376836292e-2f;
    p = fmaf(p, m, -1.1514610310e-1f);
    p = fmaf(p, m, 1.1676998740e-1f);
    p = fmaf(p, m, -1.2420140846e-1f);
    p = fmaf(p, m, 1.4249322787e-1f);
    p = fmaf(p, m, -1.6668057665e-1f);
    p = fmaf(p, m, 2.0000714765e-1f);
    p = fmaf(p, m, -2.4999993993e-1f);
    return fmaf(p, m, 3.3333331174e-1f);
}

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
    float p = ct__logf_poly(m);
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

/* erf z given e = e^(-z^2): PyTorch's vectorized float32 erf (Vectorized<float>::erf,
   Abramowitz and Stegun 7.1.26: 1 - t (a1 + a2 t + ... + a5 t^4) e^(-z^2), t = 1 / (1 + p |z|),
   absolute error <= 1.5e-7, the sign of z), which its float32 GELU and GELU backward run:
   cheaper than ct__erff (one short polynomial, one exp that a caller may share). */
CT__FORCE_INLINE float ct__erff_as(float z, float e)
{
    float t = 1.0f / fmaf(0.3275911f, fabsf(z), 1.0f); /* fabsf, copysignf: bit operations */
    float r = fmaf(1.061405429f, t, -1.453152027f);
    r = fmaf(r, t, 1.421413741f);
    r = fmaf(r, t, -0.284496736f);
    r = fmaf(r, t, 0.254829592f);
    return copysignf(fmaf(-e * t, r, 1.0f), z);
}

/* ---- more float32 functions for the pointwise ops (vectorizable: every branch is computed
   and one selected). Accuracy against the correctly rounded result, asserted <= 2 ulp by
   tests/test_pointwise2.c (test_pw2_vmath_ulp) over their whole float ranges. ---- */

/* e^x - 1: x = n ln2 + r (n = 0 for |x| < ln2, else |r| <= ln2/2), e^r - 1 = r + r^2 q(r)
   (Taylor to r^10 / 10!), then 2^n (e^r - 1) + (2^n - 1) in one fmaf (no cancellation: n
   and r have one sign near 0; n <= 127, so |r| up to 0.72 above 88.03, where 2^n (e^r - 1) +
   2^n overflows as e^x does); -1 below -17.5 (where it rounds to -1). */
CT__FORCE_INLINE float ct__expm1f(float x)
{
    float xc = x < -17.5f ? -17.5f : x; /* NaN passes */
    float xn = xc > 88.0f ? 88.0f : xc; /* n <= 127: r grows beyond, the result overflows */
    float t = fmaf(xn, 1.44269504088896341f, 12582912.0f);
    t = (x < 0 ? -x : x) < 0.693f ? 12582912.0f : t; /* n = 0 */
    float n = t - 12582912.0f;
    float r = fmaf(n, -0.693359375f, xc);
    r = fmaf(n, 2.12194440e-4f, r);
    float q = 2.7557319224e-7f; /* 1/10! */
    q = fmaf(q, r, 2.7557319224e-6f);
    q = fmaf(q, r, 2.4801587302e-5f);
    q = fmaf(q, r, 1.9841269841e-4f);
    q = fmaf(q, r, 1.3888888889e-3f);
    q = fmaf(q, r, 8.3333333333e-3f);
    q = fmaf(q, r, 4.1666666667e-2f);
    q = fmaf(q, r, 1.6666666667e-1f);
    q = fmaf(q, r, 0.5f);
    float em1 = fmaf(r * r, q, r);
    int32_t ni = (int32_t)(ct__f32_bits(t) & 0x7fffffffu) - 0x4b400000;
    float s = ct__f32_from_bits((uint32_t)(ni + 127) << 23); /* 2^n, n in [-26, 127] */
    float y = fmaf(s, em1, s - 1.0f);
    return x == 0.0f ? x : y; /* -0 */
}

/* 2^x: x = n + f, |f| <= 1/2, 2^f by its Taylor series in f (to f^9), times 2^n. */
CT__FORCE_INLINE float ct__exp2f(float x)
{
    float xc = x < -151.0f ? -151.0f : x; /* NaN passes */
    xc = xc > 129.0f ? 129.0f : xc;
    float t = xc + 12582912.0f; /* 1.5 2^23 + n, rounded */
    float f = xc - (t - 12582912.0f);
    float p = 1.0178086e-7f; /* ln2^8 / 8! */
    p = fmaf(p, f, 1.3215487e-6f);
    p = fmaf(p, f, 1.5252734e-5f);
    p = fmaf(p, f, 1.5403530e-4f);
    p = fmaf(p, f, 1.3333558e-3f);
    p = fmaf(p, f, 9.6181291e-3f);
    p = fmaf(p, f, 5.5504109e-2f);
    p = fmaf(p, f, 2.4022651e-1f);
    p = fmaf(p, f, 6.9314718e-1f);
    p = fmaf(p, f, 1.0f);
    return ct__scale_by_t(p, t);
}

/* log_b x = e log_b 2 + ln(m) log_b e for x = m' 2^e, m = m' - 1 (ct__logf's reduction and
   polynomial), ln(m + 1) = m + y with the products by the constants split hi + lo so the
   only large rounding is the last one. Special values as ct__logf. */
CT__FORCE_INLINE float ct__logbf(float x, float c_hi, float c_lo, float e_hi, float e_lo)
{
    bool tiny = x < 1.17549435e-38f;
    float xs = x * (tiny ? 33554432.0f : 1.0f);
    uint32_t u = ct__f32_bits(xs);
    int32_t e = (int32_t)((u >> 23) & 0xff) - 126;
    float m = ct__f32_from_bits((u & 0x007fffffu) | 0x3f000000u);
    bool small = m < 0.707106781186547524f;
    e -= small ? 1 : 0;
    m = fmaf(m, small ? 2.0f : 1.0f, -1.0f);
    float z = m * m;
    float p = ct__logf_poly(m);
    float y = fmaf(-0.5f, z, p * m * z);
    float fe = (float)(e - (tiny ? 25 : 0));
    float l = fmaf(y, c_hi, fmaf(m, c_lo, fe * e_lo));
    l = fmaf(m, c_hi, l);
    float r = fmaf(fe, e_hi, l);
    r = x == 0.0f ? -(float)INFINITY : r;
    r = x < 0.0f ? (float)NAN : r;
    r = x == (float)INFINITY ? x : r;
    return x != x ? x : r;
}

CT__FORCE_INLINE float ct__log2f(float x)
{ /* log2 e = 1.44269504 = hi + lo */
    return ct__logbf(x, 1.44269502162933349609375f, 1.925963033500011079e-8f, 1.0f, 0.0f);
}

CT__FORCE_INLINE float ct__log10f(float x)
{ /* log10 e = 0.434294482 = hi + lo, log10 2 = 0.301029996 = hi + lo */
    return ct__logbf(x, 0.4342944920063018798828125f, -1.010305e-8f,
                     0.3010300099849700927734375f, -1.4320989e-8f);
}

/* ln(1 + x) = ln u + (x - (u - 1)) / u with u = 1 + x rounded (the correction restores what
   the rounding of u lost); x itself near 0 (u == 1), inf at inf. */
CT__FORCE_INLINE float ct__log1pf(float x)
{
    float u = 1.0f + x;
    float c = x - (u - 1.0f);
    float y = ct__logf(u) + c / u;
    y = x == (float)INFINITY ? x : y;
    y = x == -1.0f ? -(float)INFINITY : y;
    return u == 1.0f ? x : y;
}

/* atan(num / den) for num, den >= 0 (not both 0 nor both inf; NaN passes): Cephes atanf's
   reduction on t = num / den without forming t (t > tan 3pi/8: pi/2 + atan(-den / num),
   t > tan pi/8: pi/4 + atan((num - den) / (num + den)): one division, one rounding), its
   polynomial, the multiples of pi/4 as hi + lo. */
CT__FORCE_INLINE float ct__atanf_pos(float num, float den)
{
    bool big = num > 2.414213562373095f * den, mid = num > 0.4142135623730950f * den;
    float n2 = big ? -den : (mid ? num - den : num);
    float d2 = big ? num : (mid ? num + den : den);
    float w = n2 / d2;
    float k = big ? 2.0f : (mid ? 1.0f : 0.0f); /* y0 = k pi/4 */
    float z = w * w;
    float p = 8.05374449538e-2f;
    p = fmaf(p, z, -1.38776856032e-1f);
    p = fmaf(p, z, 1.99777106478e-1f);
    p = fmaf(p, z, -3.33329491539e-1f);
    float r = fmaf(w * z, p, fmaf(k, -2.1855695e-8f, w)); /* pi/4 = 0.785398185 - 2.19e-8 */
    return fmaf(k, 0.785398185253143310546875f, r);
}

CT__FORCE_INLINE float ct__atanf(float x)
{
    float r = ct__atanf_pos(x < 0 ? -x : x, 1.0f);
    return x < 0 ? -r : (x == 0.0f ? x : r);
}

/* atan2(y, x): atan(min/max) of |y|, |x| by quadrant (both 0: ratio 0, both infinite: 1),
   pi and pi/2 as hi + lo; the sign of y. */
CT__FORCE_INLINE float ct__atan2f(float y, float x)
{
    float ay = y < 0 ? -y : y, ax = x < 0 ? -x : x;
    bool swap = ay > ax, same = ay == ax;
    float num = swap ? ax : ay, den = swap ? ay : ax;
    num = same ? (ax == 0.0f ? 0.0f : 1.0f) : num; /* otherwise den > num >= 0 */
    den = same ? 1.0f : den;
    float r = ct__atanf_pos(num, den);
    r = swap ? fmaf(2.0f, 0.785398185253143310546875f, fmaf(2.0f, -2.1855695e-8f, -r)) : r;
    bool neg_x = ct__f32_bits(x) >> 31;
    r = neg_x ? fmaf(4.0f, 0.785398185253143310546875f, fmaf(4.0f, -2.1855695e-8f, -r)) : r;
    r = ct__f32_bits(y) >> 31 ? -r : r;
    return (x != x || y != y) ? x + y : r;
}

/* sqrt z for z >= 0 normal or 0, to within an ulp or so (1/sqrt by the bit-pattern guess and
   three Newton steps, then one Newton step of sqrt): gcc keeps sqrtf a call (errno) that blocks
   vectorization; the callers correct its error or need no correct rounding. */
CT__FORCE_INLINE float ct__sqrt_approxf(float z)
{
    float y = ct__f32_from_bits(0x5f375a86u - (ct__f32_bits(z) >> 1));
    float h = 0.5f * z;
    y = y * fmaf(-h * y, y, 1.5f);
    y = y * fmaf(-h * y, y, 1.5f);
    y = y * fmaf(-h * y, y, 1.5f);
    float s = z * y;
    return fmaf(fmaf(-s, s, z), 0.5f * y, s);
}

/* asin |a| (Cephes asinf) as k pi/2 + m + l: |a| <= 1/2: m = a + a z P(z), z = a^2, l = 0;
   else pi/2 - 2 asin(s) with s ~ sqrt(z), z = (1 - a)/2: m = -2 s (so that pi/2 + m
   is exact where the result is small) and l = -2 (s_lo + s z P(z)), s_lo = (z - s^2) / 2s
   the error of s. */
CT__FORCE_INLINE float ct__asinf_parts(float a, float *k, float *l)
{
    bool big = a > 0.5f;
    float z = big ? 0.5f * (1.0f - a) : a * a;
    float s = big ? ct__sqrt_approxf(z) : a;
    float p = 4.2163199048e-2f;
    p = fmaf(p, z, 2.4181311049e-2f);
    p = fmaf(p, z, 4.5470025998e-2f);
    p = fmaf(p, z, 7.4953002686e-2f);
    p = fmaf(p, z, 1.6666752422e-1f);
    float s_lo = s > 0 ? fmaf(-s, s, z) / (s + s) : 0.0f;
    float t = fmaf(s * z, p, s_lo);
    *k = big ? 1.0f : 0.0f;
    *l = big ? -2.0f * t : 0.0f;
    return big ? -2.0f * s : fmaf(s * z, p, s);
}

/* K pi/2 + m + l, pi/2 = 1.57079637 - 4.37e-8 */
CT__FORCE_INLINE float ct__add_half_pis(float k, float m, float l)
{
    return fmaf(k, 1.57079637050628662109375f, m) + fmaf(k, -4.3711390e-8f, l);
}

CT__FORCE_INLINE float ct__asinf(float x)
{
    float a = x < 0 ? -x : x, k, l;
    float m = ct__asinf_parts(a, &k, &l);
    float r = ct__add_half_pis(k, m, l);
    r = a > 1.0f ? (float)NAN : r;
    return x < 0 ? -r : (x == 0.0f ? x : r);
}

/* acos x = pi/2 - asin x = (1 - sk) pi/2 - s (m + l), s the sign of x. */
CT__FORCE_INLINE float ct__acosf(float x)
{
    float a = x < 0 ? -x : x, k, l;
    float m = ct__asinf_parts(a, &k, &l);
    bool neg = x < 0;
    float r = ct__add_half_pis(neg ? 1.0f + k : 1.0f - k, neg ? m : -m, neg ? l : -l);
    return a > 1.0f ? (float)NAN : r;
}

/* atanh x = (log1p |x| - log1p(-|x|)) / 2, the sign of x. */
CT__FORCE_INLINE float ct__atanhf(float x)
{
    float a = x < 0 ? -x : x;
    float r = 0.5f * (ct__log1pf(a) - ct__log1pf(-a));
    return x < 0 ? -r : (x == 0.0f ? x : r);
}

/* x - (erf x - y) / erf'(x), erf'(x) = 2 / sqrt(pi) e^(-x^2) */
CT__FORCE_INLINE float ct__erfinv_newtonf(float x, float y)
{
    return x - (ct__erff(x) - y) / (1.1283791670955126f * ct__expf(-x * x));
}

/* erf^-1 y, PyTorch's calc_erfinv (pointwise.c's float64 ct__erfinv) with both first guesses
   computed and one selected, and ct__erff / ct__expf in the two Newton steps (written out:
   gcc vectorizes no loop nest). */
CT__FORCE_INLINE float ct__erfinvf(float y)
{
    float a = y < 0 ? -y : y;
    float z = y * y;
    float num = fmaf(fmaf(fmaf(-0.140543331f, z, 0.914624893f), z, -1.645349621f), z,
                     0.886226899f);
    float dem = fmaf(fmaf(fmaf(fmaf(0.012229801f, z, -0.329097515f), z, 1.442710462f), z,
                          -2.118377725f), z, 1.0f);
    float central = y * num / dem;
    float w = ct__sqrt_approxf(-ct__logf((1.0f - (a > 0.7f ? a : 0.7f)) / 2.0f));
    num = fmaf(fmaf(fmaf(1.641345311f, w, 3.429567803f), w, -1.624906493f), w, -1.970840454f);
    dem = fmaf(fmaf(1.637067800f, w, 3.543889200f), w, 1.0f);
    float tail = (y < 0 ? -num : num) / dem;
    float x = a <= 0.7f ? central : tail;
    x = ct__erfinv_newtonf(x, y);
    x = ct__erfinv_newtonf(x, y);
    x = a == 1.0f ? (y < 0 ? -(float)INFINITY : (float)INFINITY) : x;
    return a > 1.0f || y != y ? (float)NAN : x;
}

/* ---- 32-bit ARM NEON (armhf): exp, log, tanh, sigmoid and erf on 4 lanes. gcc vectorizes
   no float32 arithmetic for ARMv7 NEON (it flushes subnormals to zero and makes every NaN
   the default NaN), so these are written out: each does its scalar function's operations lane
   by lane (vfmaq_f32 is fused as fmaf is; the divisions are the lanes' VFP divisions, which
   NEON lacks), so a lane whose input and result are normal or infinite matches it bit for
   bit (a subnormal intermediate there only ever meets a much larger addend). The other lanes
   (zero, subnormal or NaN input or result) are recomputed by the scalar function:
   ct__vpart_<fn>_f32 stores the whole 4-lane chunks of a contiguous loop and returns how
   many elements it did. (aarch64 NEON is IEEE: gcc vectorizes the scalar functions there.) */
#if defined(CT__HAS_NEON32)
#include <arm_neon.h>

/* Float comparisons by integer ones (gcc expands ARMv7's vcgt.f32 and kin lane by lane in
   scalar code unless -ffast-math): the bits as signed integers ordered as the floats are,
   except that -0 < +0 and NaNs compare as numbers (lanes the callers recompute anyway). */
static inline int32x4_t ct__ord_v4(float32x4_t v)
{
    int32x4_t b = vreinterpretq_s32_f32(v);
    return veorq_s32(b, vandq_s32(vshrq_n_s32(b, 31), vdupq_n_s32(0x7fffffff)));
}

/* a < b, and b < a (a > b) */
static inline uint32x4_t ct__lt_v4(float32x4_t a, float32x4_t b)
{
    return vcltq_s32(ct__ord_v4(a), ct__ord_v4(b));
}

static inline uint32x4_t ct__lt_v4_rev(float32x4_t a, float32x4_t b) { return ct__lt_v4(b, a); }

/* a == b as bits (a == inf) */
static inline uint32x4_t ct__eq_v4(float32x4_t a, float32x4_t b)
{
    return vceqq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b));
}

/* |v| normal or infinite (not zero, subnormal or NaN) */
static inline uint32x4_t ct__normal_v4(float32x4_t v)
{
    uint32x4_t m = vandq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x7fffffffu));
    return vcltq_u32(vsubq_u32(m, vdupq_n_u32(0x00800000u)), vdupq_n_u32(0x7f000001u));
}

/* n / d lane by lane (VFP divisions, correctly rounded as the scalar code's) */
static inline float32x4_t ct__div_v4(float32x4_t n, float32x4_t d)
{
    float32x4_t q = vdupq_n_f32(0.0f);
    q = vsetq_lane_f32(vgetq_lane_f32(n, 0) / vgetq_lane_f32(d, 0), q, 0);
    q = vsetq_lane_f32(vgetq_lane_f32(n, 1) / vgetq_lane_f32(d, 1), q, 1);
    q = vsetq_lane_f32(vgetq_lane_f32(n, 2) / vgetq_lane_f32(d, 2), q, 2);
    return vsetq_lane_f32(vgetq_lane_f32(n, 3) / vgetq_lane_f32(d, 3), q, 3);
}

/* c ? a : b with c a float comparison (false for NaN, as in the scalar selects) */
#define CT__SEL4(c, a, b) vbslq_f32(c, a, b)
#define CT__K4(v) vdupq_n_f32(v)

/* ct__scale_by_t on 4 lanes (ni / 2 truncates toward zero, as C's division) */
static inline float32x4_t ct__scale_by_t_v4(float32x4_t p, float32x4_t t)
{
    int32x4_t ni = vsubq_s32(vreinterpretq_s32_u32(vandq_u32(vreinterpretq_u32_f32(t),
                                                             vdupq_n_u32(0x7fffffffu))),
                             vdupq_n_s32(0x4b400000));
    int32x4_t na = vshrq_n_s32(
        vaddq_s32(ni, vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(ni), 31))), 1);
    int32x4_t nb = vsubq_s32(ni, na);
    float32x4_t sa = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(na, vdupq_n_s32(127)), 23));
    float32x4_t sb = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(nb, vdupq_n_s32(127)), 23));
    return vfmaq_f32(CT__K4(0.0f), vmulq_f32(p, sa), sb);
}

static inline float32x4_t ct__expf_v4(float32x4_t x)
{
    float32x4_t xc = CT__SEL4(ct__lt_v4(x, CT__K4(-104.0f)), CT__K4(-104.0f), x);
    xc = CT__SEL4(ct__lt_v4_rev(xc, CT__K4(89.0f)), CT__K4(89.0f), xc);
    float32x4_t t = vfmaq_f32(CT__K4(12582912.0f), xc, CT__K4(1.44269504088896341f));
    float32x4_t n = vsubq_f32(t, CT__K4(12582912.0f));
    float32x4_t r = vfmaq_f32(xc, n, CT__K4(-0.693359375f));
    r = vfmaq_f32(r, n, CT__K4(2.12194440e-4f));
    float32x4_t p = CT__K4(1.9875691500e-4f);
    p = vfmaq_f32(CT__K4(1.3981999507e-3f), p, r);
    p = vfmaq_f32(CT__K4(8.3334519073e-3f), p, r);
    p = vfmaq_f32(CT__K4(4.1665795894e-2f), p, r);
    p = vfmaq_f32(CT__K4(1.6666665459e-1f), p, r);
    p = vfmaq_f32(CT__K4(5.0000001201e-1f), p, r);
    p = vfmaq_f32(CT__K4(1.0f), p, r);
    p = vfmaq_f32(CT__K4(1.0f), p, r);
    return ct__scale_by_t_v4(p, t);
}

/* ct__logf without its subnormal-input scaling (those lanes are recomputed) */
static inline float32x4_t ct__logf_v4(float32x4_t x)
{
    uint32x4_t u = vreinterpretq_u32_f32(x);
    int32x4_t e = vsubq_s32(vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(u, 23),
                                                            vdupq_n_u32(0xff))),
                            vdupq_n_s32(126));
    float32x4_t m = vreinterpretq_f32_u32(
        vorrq_u32(vandq_u32(u, vdupq_n_u32(0x007fffffu)), vdupq_n_u32(0x3f000000u)));
    uint32x4_t small = ct__lt_v4(m, CT__K4(0.707106781186547524f));
    e = vaddq_s32(e, vreinterpretq_s32_u32(small)); /* true is -1 */
    m = CT__SEL4(small, vsubq_f32(vaddq_f32(m, m), CT__K4(1.0f)), vsubq_f32(m, CT__K4(1.0f)));
    float32x4_t z = vmulq_f32(m, m);
    float32x4_t p = CT__K4(7.0376836292e-2f);
    p = vfmaq_f32(CT__K4(-1.1514610310e-1f), p, m);
    p = vfmaq_f32(CT__K4(1.1676998740e-1f), p, m);
    p = vfmaq_f32(CT__K4(-1.2420140846e-1f), p, m);
    p = vfmaq_f32(CT__K4(1.4249322787e-1f), p, m);
    p = vfmaq_f32(CT__K4(-1.6668057665e-1f), p, m);
    p = vfmaq_f32(CT__K4(2.0000714765e-1f), p, m);
    p = vfmaq_f32(CT__K4(-2.4999993993e-1f), p, m);
    p = vfmaq_f32(CT__K4(3.3333331174e-1f), p, m);
    float32x4_t fe = vcvtq_f32_s32(e);
    float32x4_t y = vmulq_f32(vmulq_f32(p, m), z);
    y = vfmaq_f32(y, fe, CT__K4(-2.12194440e-4f));
    y = vfmaq_f32(y, CT__K4(-0.5f), z);
    y = vfmaq_f32(vaddq_f32(m, y), fe, CT__K4(0.693359375f));
    y = CT__SEL4(ct__lt_v4(x, CT__K4(0.0f)), CT__K4((float)NAN), y);
    return CT__SEL4(ct__eq_v4(x, CT__K4((float)INFINITY)), x, y);
}

static inline float32x4_t ct__tanhf_v4(float32x4_t x)
{
    float32x4_t a = vabsq_f32(x), z = vmulq_f32(x, x);
    float32x4_t p = CT__K4(-5.70498872745e-3f);
    p = vfmaq_f32(CT__K4(2.06390887954e-2f), p, z);
    p = vfmaq_f32(CT__K4(-5.37397155531e-2f), p, z);
    p = vfmaq_f32(CT__K4(1.33314422036e-1f), p, z);
    p = vfmaq_f32(CT__K4(-3.33332819422e-1f), p, z);
    float32x4_t small = vfmaq_f32(x, vmulq_f32(x, z), p);
    float32x4_t big = vsubq_f32(
        CT__K4(1.0f),
        ct__div_v4(CT__K4(2.0f), vaddq_f32(ct__expf_v4(vaddq_f32(a, a)), CT__K4(1.0f))));
    big = CT__SEL4(ct__lt_v4(x, CT__K4(0.0f)), vnegq_f32(big), big);
    return CT__SEL4(ct__lt_v4(a, CT__K4(0.625f)), small, big);
}

static inline float32x4_t ct__sigmoidf_v4(float32x4_t x)
{
    return ct__div_v4(CT__K4(1.0f), vaddq_f32(CT__K4(1.0f), ct__expf_v4(vnegq_f32(x))));
}

static inline float32x4_t ct__erff_v4(float32x4_t x)
{
    float32x4_t a = vabsq_f32(x), z = vmulq_f32(x, x);
    float32x4_t q = CT__K4(7.847259258e-05f);
    q = vfmaq_f32(CT__K4(-8.008189034e-04f), q, z);
    q = vfmaq_f32(CT__K4(5.188099109e-03f), q, z);
    q = vfmaq_f32(CT__K4(-2.685369179e-02f), q, z);
    q = vfmaq_f32(CT__K4(1.128358245e-01f), q, z);
    q = vfmaq_f32(CT__K4(-3.761262596e-01f), q, z);
    q = vfmaq_f32(CT__K4(0.1283791671f), q, z);
    float32x4_t small = vfmaq_f32(x, x, q);
    float32x4_t ac = CT__SEL4(ct__lt_v4_rev(a, CT__K4(3.92f)), CT__K4(3.92f), a);
    ac = CT__SEL4(ct__lt_v4(a, CT__K4(1.0f)), CT__K4(1.0f), ac);
    float32x4_t t = ct__div_v4(CT__K4(1.0f), ac);
    float32x4_t r = CT__K4(-3.538664058e-02f);
    r = vfmaq_f32(CT__K4(2.470666170e-01f), r, t);
    r = vfmaq_f32(CT__K4(-7.623633742e-01f), r, t);
    r = vfmaq_f32(CT__K4(1.347271681e+00f), r, t);
    r = vfmaq_f32(CT__K4(-1.445720792e+00f), r, t);
    r = vfmaq_f32(CT__K4(8.459172845e-01f), r, t);
    r = vfmaq_f32(CT__K4(-4.444015026e-02f), r, t);
    r = vfmaq_f32(CT__K4(-2.928811610e-01f), r, t);
    r = vfmaq_f32(CT__K4(4.540627822e-03f), r, t);
    r = vfmaq_f32(CT__K4(5.635447502e-01f), r, t);
    r = vfmaq_f32(CT__K4(3.471292803e-05f), r, t);
    float32x4_t hi = vmulq_f32(ac, ac), lo = vfmaq_f32(vnegq_f32(hi), ac, ac);
    float32x4_t e = ct__expf_v4(vnegq_f32(hi));
    e = vfmaq_f32(e, e, vnegq_f32(lo));
    float32x4_t big = CT__SEL4(vmvnq_u32(ct__lt_v4(a, CT__K4(3.92f))), CT__K4(1.0f),
                               vfmaq_f32(CT__K4(1.0f), vnegq_f32(e), r));
    big = CT__SEL4(ct__lt_v4(x, CT__K4(0.0f)), vnegq_f32(big), big);
    return CT__SEL4(ct__lt_v4(a, CT__K4(1.0f)), small, big);
}

/* PyTorch's erf on 4 lanes given e = e^(-z^2) (ct__erff_as; fabsf and copysignf as bit
   operations) */
static inline float32x4_t ct__erff_as_v4(float32x4_t z, float32x4_t e)
{
    float32x4_t t = ct__div_v4(CT__K4(1.0f),
                               vfmaq_f32(CT__K4(1.0f), CT__K4(0.3275911f), vabsq_f32(z)));
    float32x4_t r = vfmaq_f32(CT__K4(-1.453152027f), CT__K4(1.061405429f), t);
    r = vfmaq_f32(CT__K4(1.421413741f), r, t);
    r = vfmaq_f32(CT__K4(-0.284496736f), r, t);
    r = vfmaq_f32(CT__K4(0.254829592f), r, t);
    float32x4_t y = vfmaq_f32(CT__K4(1.0f), vmulq_f32(vnegq_f32(e), t), r);
    return vbslq_f32(vdupq_n_u32(0x80000000u), z, y);
}

/* Whether every lane of x and of r = f(x) is normal or infinite: then r is f's scalar
   result; ct__neon32_lane_exact says it for one lane. */
static inline bool ct__neon32_exact(float32x4_t x, float32x4_t r)
{
    uint32x4_t ok = vandq_u32(ct__normal_v4(x), ct__normal_v4(r));
    uint32x2_t ok2 = vand_u32(vget_low_u32(ok), vget_high_u32(ok));
    return vget_lane_u32(vpmin_u32(ok2, ok2), 0) != 0;
}

static inline bool ct__neon32_lane_exact(float x, float r)
{
    return fabsf(x) >= 1.17549435e-38f && fabsf(r) >= 1.17549435e-38f;
}

/* ct__vpart_<FN>_f32(x, y, n): y = FN(x) on the whole 4-lane chunks of n elements (y may be
   x), the lanes ct__neon32_lane_exact rejects by the scalar SF; returns the number done. */
#define CT__VPART_NEON32(FN, VF, SF)                                                        \
    static int64_t ct__vpart_##FN##_f32(const float *x, float *y, int64_t n)                \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 4 <= n; i += 4) {                                                        \
            float32x4_t v = vld1q_f32(x + i), r = VF(v);                                    \
            vst1q_f32(y + i, r);                                                            \
            if (!ct__neon32_exact(v, r)) {                                                  \
                float xs[4];                                                                \
                vst1q_f32(xs, v);                                                           \
                for (int k = 0; k < 4; k++) {                                               \
                    if (!ct__neon32_lane_exact(xs[k], y[i + k])) {                          \
                        y[i + k] = SF(xs[k]);                                               \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        return i;                                                                           \
    }
CT__VPART_NEON32(exp, ct__expf_v4, ct__expf)
CT__VPART_NEON32(log, ct__logf_v4, ct__logf)
CT__VPART_NEON32(tanh, ct__tanhf_v4, ct__tanhf)
CT__VPART_NEON32(sigmoid, ct__sigmoidf_v4, ct__sigmoidf)
CT__VPART_NEON32(erf, ct__erff_v4, ct__erff)
#undef CT__VPART_NEON32
#undef CT__SEL4
#undef CT__K4
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
