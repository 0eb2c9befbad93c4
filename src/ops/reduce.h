/* ops/reduce.h - reductions over all elements or along dims.
 *
 * Shapes: a reduction over dim of input (d0, ..., dn) removes dim, or keeps it with size 1
 * when keepdim. Dtypes: sum of bool/integers accumulates to int64; mean needs a float
 * input; max/min/argmax keep the input dtype (indices are int64). NaN propagates through
 * max/min and argmax/argmin point at the first NaN. Ties: argmax/argmin and max_dim/min_dim
 * return the first occurrence.
 * Empty inputs cost O(output), whatever their other sizes: sums are 0, means NaN (0 / 0).
 * Returns: new tensors owned by the current scope. Errors: CT_ERR_INDEX for a dim out of
 * range; CT_ERR_VALUE for a max/min/argmax/argmin over an empty dim ("max(): Expected
 * reduction dim 0 to have non-zero size.") or over all elements of an empty input
 * ("argmax(): Expected reduction dim to be specified for input.numel() == 0.").
 * Determinism: float sums add fixed blocks of elements and then the block sums in order, so
 * results are bit-exact across thread counts.
 */

/* Sum of all elements (0-dim). Mirrors: torch.sum(input). */
CTORCH_API ct_tensor *ct_sum(const ct_tensor *input);
/* Sum over one dim. Mirrors: torch.sum(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_sum_dim(const ct_tensor *input, int64_t dim, bool keepdim);
/* Sum over n dims (n == 0 sums all). Mirrors: torch.sum(input, dims, keepdim). */
CTORCH_API ct_tensor *ct_sum_dims(const ct_tensor *input, const int64_t *dims, int n, bool keepdim);
/* Sums input down to sizes (which input must broadcast to). Mirrors: Tensor.sum_to_size. */
CTORCH_API ct_tensor *ct_sum_to_size(const ct_tensor *input, const int64_t *sizes, int ndim);
/* Mirrors: torch.mean(input) / torch.mean(input, dim, keepdim). Error: CT_ERR_DTYPE for
   integer input ("mean(): could not infer output dtype. Input dtype must be either a
   floating point or complex dtype. Got: Long"). */
CTORCH_API ct_tensor *ct_mean(const ct_tensor *input);
CTORCH_API ct_tensor *ct_mean_dim(const ct_tensor *input, int64_t dim, bool keepdim);
/* Largest / smallest element (0-dim); the gradient is split evenly among ties.
   Mirrors: torch.max(input) / torch.min(input). */
CTORCH_API ct_tensor *ct_max(const ct_tensor *input);
CTORCH_API ct_tensor *ct_min(const ct_tensor *input);
/* Values and int64 indices along dim (either out pointer may be NULL); the gradient goes
   to the selected index. Returns CT_OK or the error code.
   Mirrors: torch.max(input, dim, keepdim) / torch.min(input, dim, keepdim). */
CTORCH_API ct_status ct_max_dim(const ct_tensor *input, int64_t dim, bool keepdim,
                                ct_tensor **values, ct_tensor **indices);
CTORCH_API ct_status ct_min_dim(const ct_tensor *input, int64_t dim, bool keepdim,
                                ct_tensor **values, ct_tensor **indices);
/* Index of the largest / smallest element of the flattened input (0-dim int64).
   Mirrors: torch.argmax(input) / torch.argmin(input). */
CTORCH_API ct_tensor *ct_argmax(const ct_tensor *input);
CTORCH_API ct_tensor *ct_argmin(const ct_tensor *input);
/* Indices along dim (int64). Mirrors: torch.argmax(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_argmax_dim(const ct_tensor *input, int64_t dim, bool keepdim);
CTORCH_API ct_tensor *ct_argmin_dim(const ct_tensor *input, int64_t dim, bool keepdim);
