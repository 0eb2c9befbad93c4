/* ops/softmax.h - softmax and log_softmax along a dim.
 *
 * Shapes: output has input's shape. Dtypes: float32/float64 (integer input is an error).
 * Computed stably (the max along dim is subtracted first); the sum along dim of softmax is
 * 1. Returns a new tensor owned by the current scope. Errors: CT_ERR_INDEX for a bad dim.
 * Determinism: each line along dim is computed by one thread in a fixed order, so results
 * are bit-exact across thread counts; the float32 AVX-512 path equals the portable one bit
 * for bit.
 */

/* exp(x - max) / sum(exp(x - max)) along dim. Mirrors: torch.softmax(input, dim). */
CTORCH_API ct_tensor *ct_softmax(const ct_tensor *input, int64_t dim);
/* x - max - log(sum(exp(x - max))) along dim. Mirrors: torch.log_softmax(input, dim). */
CTORCH_API ct_tensor *ct_log_softmax(const ct_tensor *input, int64_t dim);
