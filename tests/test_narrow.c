/* tests/test_narrow.c - uint8, int8, int16 and int32 arithmetic at the edges of their ranges
 * against PyTorch (tools/gen_golden_narrow.py -> tests/golden/narrow_golden.h). ctorch computes
 * these dtypes in int64 and narrows the result: overflow, x / -1, abs and neg of the minimum,
 * shifts past the width and powers must wrap as PyTorch's kernels do in the narrow type itself,
 * and a scalar operand wraps to the dtype before a comparison.
 */
#include "test.h"
#include "golden/narrow_golden.h"

/* The case's operand k (0: a, 1: b) in its dtype. */
static ct_tensor *narrow_operand(const narrow_case *c, int k)
{
    return ct_to_dtype(ct_tensor_from_data(c->values + k * c->n, CT_INT64, &c->n, 1), c->dtype);
}

static ct_tensor *narrow_run(const narrow_case *c, const ct_tensor *a, const ct_tensor *b)
{
    switch (c->op) {
    case NARROW_ADD: return ct_add_alpha(a, b, 3);
    case NARROW_SUB: return ct_sub(a, b);
    case NARROW_MUL: return ct_mul(a, b);
    case NARROW_POW: return ct_pow(a, ct_remainder(ct_abs(b), ct_scalar_tensor(9, c->dtype)));
    case NARROW_MAXIMUM: return ct_maximum(a, b);
    case NARROW_FLOOR_DIVIDE: return ct_floor_divide(a, b);
    case NARROW_REMAINDER: return ct_remainder(a, b);
    case NARROW_FMOD: return ct_fmod(a, b);
    case NARROW_LSHIFT: return ct_bitwise_left_shift(a, b);
    case NARROW_RSHIFT: return ct_bitwise_right_shift(a, b);
    case NARROW_XOR: return ct_bitwise_xor(a, b);
    case NARROW_ADDCMUL: return ct_addcmul(a, a, b, 5);
    case NARROW_NEG: return ct_neg(a);
    case NARROW_ABS: return ct_abs(a);
    case NARROW_SQUARE: return ct_square(a);
    case NARROW_SIGN: return ct_sign(a);
    case NARROW_BITNOT: return ct_bitwise_not(a);
    case NARROW_CLAMP: return ct_clamp(a, -100, 100);
    case NARROW_FLOOR: return ct_floor(a);
    case NARROW_EQ_SCALAR: return ct_eq_scalar(a, 1000);
    case NARROW_LT_SCALAR: return ct_lt_scalar(a, 1000);
    case NARROW_GT: return ct_gt(a, b);
    }
    return NULL;
}

/* Every op on every narrow dtype: PyTorch's dtype and values, element for element. */
static void test_narrow_edges_match_pytorch(void)
{
    int n = (int)(sizeof narrow_cases / sizeof narrow_cases[0]);
    for (int k = 0; k < n; k++) {
        const narrow_case *c = &narrow_cases[k];
        ct_scope_begin();
        ct_tensor *r = narrow_run(c, narrow_operand(c, 0), narrow_operand(c, 1));
        CHECK_MSG(r && ct_tensor_dtype(r) == c->out_dtype, "case %d (%s): %s", k,
                  ct_dtype_name(c->dtype), ct_error() ? ct_error() : "wrong dtype");
        const int64_t *got = r ? (const int64_t *)ct_data_ptr(ct_to_dtype(r, CT_INT64)) : NULL;
        for (int64_t i = 0; got && i < c->n; i++) {
            int64_t want = c->values[2 * c->n + i];
            CHECK_MSG(got[i] == want, "case %d (op %d, %s): element %lld is %lld, PyTorch's %lld",
                      k, (int)c->op, ct_dtype_name(c->dtype), (long long)i, (long long)got[i],
                      (long long)want);
        }
        ct_error_clear();
        ct_scope_end();
    }
}

void test_narrow(void)
{
    RUN(test_narrow_edges_match_pytorch);
}
