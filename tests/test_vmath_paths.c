/* tests/test_vmath_paths.c - float32 exp, log, tanh, sigmoid, erf and GELU (forward and
 * backward) give bit-identical results on their vector path (the compiler's vectorized loop,
 * or on 32-bit ARM vmath.h's NEON functions with their scalar fix-up of zero, subnormal and
 * NaN lanes) and their scalar path, over a sweep of every exponent of both signs and the
 * special values (zeros, subnormals, infinities, NaNs with payloads and signs, the functions'
 * range limits and branch points). The scalar path: a strided view (the pointwise ops'
 * out-of-line per-element function), or for GELU (whose loop gathers strided operands into
 * contiguous blocks) each value alone, a one-element tensor (the loops' scalar tail).
 */
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define PATHS_N 4099 /* not a multiple of any vector width: the tail runs too */

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* the inputs: the special values, then bit patterns stepping through both signs' range */
static void paths_inputs(float *x)
{
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,
        0x00800000u, 0x80800000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
        0x7fc12345u, 0xffa00001u, 0x7f7fffffu, 0xff7fffffu, 0x00400000u, 0x80012345u};
    static const float edges[] = {-104.0f, -103.9f, -87.3365f, -87.34f, -87.33f, -88.0f,
                                  88.72f,  88.73f,  89.0f,     89.5f,   0.625f,  -0.625f,
                                  0.6249f, 1.0f,    -1.0f,     0.999f,  3.92f,   -3.92f,
                                  3.91f,   4.0f,    -9.3f,     13.5f,   1e-20f,  -1e-13f,
                                  0.7071f, 1.4142f, 0.5f,      2.0f,    1e-38f,  -45.0f};
    int k = 0;
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        x[k++] = from_bits(special[i]);
    }
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        x[k++] = edges[i];
    }
    for (uint32_t u = 0x00001234u; k < PATHS_N; u += 0x000fe3a1u) {
        x[k] = from_bits((k & 1) ? (u | 0x80000000u) : (u & 0x7fffffffu));
        k++;
    }
}

typedef ct_tensor *(*paths_fn)(const ct_tensor *x);
typedef ct_tensor *(*paths_fn_)(ct_tensor *x);

/* fn on the contiguous x, on a strided view of the same values and in place (fn_, which may
   be NULL: no in-place form): equal bits */
static void paths_check(const char *name, paths_fn fn, paths_fn_ fn_)
{
    float x[PATHS_N], x2[2 * PATHS_N];
    paths_inputs(x);
    for (int i = 0; i < PATHS_N; i++) {
        x2[2 * i] = x[i];
        x2[2 * i + 1] = 0.0f;
    }
    ct_scope_begin();
    int64_t n1[1] = {PATHS_N}, n2[2] = {PATHS_N, 2};
    ct_tensor *xc = ct_tensor_from_data(x, CT_FLOAT32, n1, 1);
    ct_tensor *xs = ct_select(ct_tensor_from_data(x2, CT_FLOAT32, n2, 2), 1, 0);
    CHECK(xs && !ct_is_contiguous(xs));
    ct_tensor *yc = fn(xc), *ys = fn(xs), *yi = fn_ ? fn_(ct_clone(xc)) : yc;
    CHECK(yc && ys && yi);
    if (yc && ys && yi) {
        const float *c = (const float *)ct_data_ptr(yc), *s = (const float *)ct_data_ptr(ys);
        const float *in = (const float *)ct_data_ptr(yi);
        int bad = 0;
        for (int i = 0; i < PATHS_N && bad < 3; i++) {
            if (to_bits(c[i]) != to_bits(s[i]) || to_bits(in[i]) != to_bits(s[i])) {
                CHECK_MSG(0, "%s(%a = 0x%08x): vector 0x%08x, in place 0x%08x, scalar 0x%08x",
                          name, (double)x[i], (unsigned)to_bits(x[i]), (unsigned)to_bits(c[i]),
                          (unsigned)to_bits(in[i]), (unsigned)to_bits(s[i]));
                bad++;
            }
        }
    }
    ct_scope_end();
}

/* equal bits, or both NaN: x86's vectorized GELU backward may give a NaN the other sign (the
   operands of its NaN-propagating product in the other order) */
static bool same_bits_or_nans(float a, float b)
{
    return to_bits(a) == to_bits(b) || (a != a && b != b);
}

/* GELU forward and backward (gradient gs[i]) of all inputs at once and of each alone */
static void test_vmath_paths_gelu(void)
{
    float x[PATHS_N], gs[PATHS_N];
    paths_inputs(x);
    for (int i = 0; i < PATHS_N; i++) {
        gs[i] = (i % 3) ? 0.75f : -1.5f;
    }
    ct_scope_begin();
    int64_t n1[1] = {PATHS_N}, one[1] = {1};
    ct_tensor *xv = ct_requires_grad_(ct_tensor_from_data(x, CT_FLOAT32, n1, 1), true);
    ct_tensor *yv = ct_gelu(xv, CT_GELU_NONE);
    CHECK(ct_backward(yv, ct_tensor_from_data(gs, CT_FLOAT32, n1, 1), false) == CT_OK);
    const float *y = (const float *)ct_data_ptr(yv), *dx = (const float *)ct_data_ptr(ct_grad(xv));
    int bad = 0;
    for (int i = 0; i < PATHS_N && bad < 3 && y && dx; i++) {
        ct_tensor *x1 = ct_requires_grad_(ct_tensor_from_data(x + i, CT_FLOAT32, one, 1), true);
        ct_tensor *y1 = ct_gelu(x1, CT_GELU_NONE);
        CHECK(ct_backward(y1, ct_tensor_from_data(gs + i, CT_FLOAT32, one, 1), false) == CT_OK);
        float ys = *(const float *)ct_data_ptr(y1), ds = *(const float *)ct_data_ptr(ct_grad(x1));
        if (!same_bits_or_nans(y[i], ys) || !same_bits_or_nans(dx[i], ds)) {
            CHECK_MSG(0, "gelu(%a = 0x%08x): vector 0x%08x, grad 0x%08x; alone 0x%08x, 0x%08x",
                      (double)x[i], (unsigned)to_bits(x[i]), (unsigned)to_bits(y[i]),
                      (unsigned)to_bits(dx[i]), (unsigned)to_bits(ys), (unsigned)to_bits(ds));
            bad++;
        }
    }
    ct_scope_end();
}

static void test_vmath_paths_agree(void)
{
    paths_check("exp", ct_exp, ct_exp_);
    paths_check("log", ct_log, ct_log_);
    paths_check("tanh", ct_tanh, ct_tanh_);
    paths_check("sigmoid", ct_sigmoid, ct_sigmoid_);
    paths_check("erf", ct_erf, NULL);
}

void test_vmath_paths(void)
{
    RUN(test_vmath_paths_agree);
    RUN(test_vmath_paths_gelu);
}
