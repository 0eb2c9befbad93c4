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
 * results are bit-exact across thread counts; logsumexp, var/std, all/any and vector_norm are
 * built from these sums and max/min, so they are too, as are prod (each output's product in
 * order, float32 in double) and the ops built from these (nansum ... cdist).
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
/* Largest / smallest element over n dims (n == 0: all), kept as 1 when keepdim; the input's
   dtype. The gradient is split evenly among ties. Errors: CT_ERR_INDEX for an invalid dim or
   a reduced dim of size 0 ("amax(): Expected reduction dim 1 to have non-zero size.");
   CT_ERR_VALUE over all elements of an empty input, or for a repeated dim.
   Mirrors: torch.amax(input, dim, keepdim) / torch.amin(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_amax(const ct_tensor *input, const int64_t *dims, int n, bool keepdim);
CTORCH_API ct_tensor *ct_amin(const ct_tensor *input, const int64_t *dims, int n, bool keepdim);
/* log(sum(exp(input))) over n dims (n == 0: all), computed as log(sum(exp(x - m))) + m with m
   the amax (0 where infinite). Float input keeps its dtype, integers give the default dtype;
   -inf over an empty dim. Errors: CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.logsumexp(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_logsumexp(const ct_tensor *input, const int64_t *dims, int n,
                                   bool keepdim);
/* Variance / standard deviation of all elements: sum((x - mean)^2) / max(0, N - correction)
   (PyTorch's default correction is 1; NaN or inf when N <= correction). Float input only.
   Error: CT_ERR_DTYPE for other dtypes ("std and var only support floating point and complex
   dtypes"). Mirrors: torch.var(input, correction=c) / torch.std(input, correction=c). */
CTORCH_API ct_tensor *ct_var(const ct_tensor *input, double correction);
CTORCH_API ct_tensor *ct_std(const ct_tensor *input, double correction);
/* The same over n dims (n == 0: all), kept as 1 when keepdim. Errors: as ct_var, and
   CT_ERR_INDEX for an invalid dim. Mirrors: torch.var(input, dim, correction=c, keepdim). */
CTORCH_API ct_tensor *ct_var_dim(const ct_tensor *input, const int64_t *dims, int n,
                                 double correction, bool keepdim);
CTORCH_API ct_tensor *ct_std_dim(const ct_tensor *input, const int64_t *dims, int n,
                                 double correction, bool keepdim);
/* Whether all / any element is nonzero (NaN counts as nonzero), 0-dim; any dtype. The result
   is bool (uint8 for a uint8 input, as PyTorch). all of an empty input is true, any false.
   Mirrors: torch.all(input) / torch.any(input). */
CTORCH_API ct_tensor *ct_all(const ct_tensor *input);
CTORCH_API ct_tensor *ct_any(const ct_tensor *input);
/* The same along dim, kept as 1 when keepdim. Error: CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.all(input, dim, keepdim) / torch.any(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_all_dim(const ct_tensor *input, int64_t dim, bool keepdim);
CTORCH_API ct_tensor *ct_any_dim(const ct_tensor *input, int64_t dim, bool keepdim);
/* Vector ord-norm over n dims (n == 0: all elements): sum(|x|^ord)^(1/ord); ord INFINITY
   max |x|, -INFINITY min |x|, 0 the count of nonzeros (PyTorch's default ord is 2). Float
   input only. Errors: CT_ERR_DTYPE for other dtypes ("linalg.vector_norm: Expected a floating
   point or complex tensor as input. Got Long"); CT_ERR_VALUE for an inf or negative ord over
   an empty reduction; CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.linalg.vector_norm(input, ord, dim, keepdim). */
CTORCH_API ct_tensor *ct_linalg_vector_norm(const ct_tensor *input, double ord,
                                            const int64_t *dims, int n, bool keepdim);
/* Whether |input - other| <= atol + rtol * |other| everywhere (inputs broadcast; infinities
   must be equal; NaNs equal only when equal_nan). PyTorch's defaults: rtol 1e-05, atol
   1e-08, equal_nan false. Returns false after an error: CT_ERR_DTYPE for different dtypes
   ("Float did not match Double"), CT_ERR_SHAPE when the shapes do not broadcast.
   Mirrors: torch.allclose(input, other, rtol, atol, equal_nan). */
CTORCH_API bool ct_allclose(const ct_tensor *input, const ct_tensor *other, double rtol,
                            double atol, bool equal_nan);
/* Whether input and other have the same sizes and equal elements (after promotion; NaN is
   never equal). Mirrors: torch.equal(input, other). */
CTORCH_API bool ct_equal(const ct_tensor *input, const ct_tensor *other);
/* Product of all elements (0-dim) / along dim (kept as 1 when keepdim). Bool and integers give
   int64 (wrapping on overflow), floats keep their dtype; 1 for an empty input. The gradient is
   exact with zeros in the input (PyTorch's prod_backward). Error: CT_ERR_INDEX for an invalid
   dim. Mirrors: torch.prod(input) / torch.prod(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_prod(const ct_tensor *input);
CTORCH_API ct_tensor *ct_prod_dim(const ct_tensor *input, int64_t dim, bool keepdim);
/* Sum over n dims (n == 0: all) with NaN counted as 0; dtypes as ct_sum; the gradient is 0 at
   NaNs. Error: CT_ERR_INDEX for an invalid dim. Mirrors: torch.nansum(input, dims, keepdim). */
CTORCH_API ct_tensor *ct_nansum(const ct_tensor *input, const int64_t *dims, int n,
                                bool keepdim);
/* Mean of the non-NaN elements over n dims (n == 0: all); NaN where all are NaN. Float input
   only. Errors: CT_ERR_DTYPE for other dtypes ("nanmean(): expected input to have floating
   point or complex dtype but got Long"); CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.nanmean(input, dims, keepdim). */
CTORCH_API ct_tensor *ct_nanmean(const ct_tensor *input, const int64_t *dims, int n,
                                 bool keepdim);
/* The variance (standard deviation) and the mean over n dims (n == 0: all), each as ct_var_dim
   / ct_mean, through the out pointers (either may be NULL). Returns CT_OK or the error code:
   CT_ERR_DTYPE for a non-float input ("var_mean only support floating point and complex
   dtypes"), CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.var_mean(input, dims, correction=c, keepdim) / torch.std_mean. */
CTORCH_API ct_status ct_var_mean(const ct_tensor *input, const int64_t *dims, int n,
                                 double correction, bool keepdim, ct_tensor **var,
                                 ct_tensor **mean);
CTORCH_API ct_status ct_std_mean(const ct_tensor *input, const int64_t *dims, int n,
                                 double correction, bool keepdim, ct_tensor **std,
                                 ct_tensor **mean);
/* The smallest and largest element over *dim (dim NULL: all elements; keepdim then keeps
   every dim as 1), in the input's dtype, through the out pointers (either may be NULL); the
   gradients are split evenly among ties, as ct_amin / ct_amax. Returns CT_OK or the error
   code: CT_ERR_VALUE over all elements of an empty input ("aminmax(): cannot compute aminmax
   over an empty dimension as the operation has no identity."), CT_ERR_INDEX for an invalid
   or empty dim. Mirrors: torch.aminmax(input, dim=dim, keepdim=keepdim). */
CTORCH_API ct_status ct_aminmax(const ct_tensor *input, const int64_t *dim, bool keepdim,
                                ct_tensor **min, ct_tensor **max);
/* The number of nonzero elements (NaN counts) over n dims (n == 0: all), int64, the dims
   removed. Errors: CT_ERR_INDEX for an invalid dim, CT_ERR_VALUE for a repeated one.
   Mirrors: torch.count_nonzero(input, dims). */
CTORCH_API ct_tensor *ct_count_nonzero(const ct_tensor *input, const int64_t *dims, int n);
/* The p-norm of input - other (broadcast) over all elements, 0-dim, as ct_linalg_vector_norm
   (p 0: nonzero count; INFINITY: max |d|; PyTorch's default p is 2). Errors: CT_ERR_DTYPE for
   non-float inputs ("norm(): input dtype should be either floating point or complex. Got Long
   instead."); CT_ERR_SHAPE when the shapes do not broadcast.
   Mirrors: torch.dist(input, other, p). */
CTORCH_API ct_tensor *ct_dist(const ct_tensor *input, const ct_tensor *other, double p);
/* When cdist computes Euclidean distances (p == 2) as |a|^2 - 2 a.b + |b|^2 through one matrix
   product (faster, less exact): PyTorch's compute_mode strings. */
typedef enum ct_cdist_compute_mode {
    CT_CDIST_USE_MM_IF_NECESSARY = 0, /* "use_mm_for_euclid_dist_if_necessary" (the default):
                                         when either input has more than 25 rows */
    CT_CDIST_USE_MM = 1,              /* "use_mm_for_euclid_dist" */
    CT_CDIST_DONOT_USE_MM = 2         /* "donot_use_mm_for_euclid_dist" */
} ct_cdist_compute_mode;
/* The p-norm distance (p >= 0, INFINITY allowed; PyTorch's default 2) between every row of x1
   (B.., P, M) and every row of x2 (B.., R, M): (B.., P, R), batch dims broadcast. Both of one
   float dtype. Errors: CT_ERR_SHAPE for inputs under 2-D ("cdist only supports at least 2D
   tensors, X1 got: 1D") or a column mismatch ("X1 and X2 must have the same number of
   columns. X1: 3 X2: 4"); CT_ERR_DTYPE for integer inputs ("cdist only supports
   floating-point dtypes, X1 got: Long") or two dtypes ("expected scalar type Float but found
   Double"); CT_ERR_VALUE for p < 0 ("cdist only supports non-negative p values") or another
   mode. Mirrors: torch.cdist(x1, x2, p, compute_mode). */
CTORCH_API ct_tensor *ct_cdist(const ct_tensor *x1, const ct_tensor *x2, double p,
                               ct_cdist_compute_mode compute_mode);
