/* ops/sort.h - sorting and selection along a dim, order statistics, uniques and binning.
 *
 * Shapes: an op along dim of input (d0, ..., dn) works on each line of input along dim (a
 * 0-dim input is one line of one element); a reduction removes dim, or keeps it with size 1
 * when keepdim. Order: NaN sorts as the largest value (after +inf; first when descending),
 * -0.0 equals 0.0, as in PyTorch. Ties: sort, argsort, msort and topk return equal values in
 * index order (a stable sort: PyTorch's stable=True; its unstable CPU sort may order ties
 * otherwise); kthvalue returns the index PyTorch's quickselect finds; median and nanmedian
 * the index of the lower middle value in stable order (the first NaN when median sees one);
 * mode the smallest of the most frequent values and its last index. Indices are int64.
 * Returns: new tensors owned by the current scope; the functions with out pointers return
 * CT_OK or the error code, and an out pointer may be NULL when that output is not wanted.
 * Gradients: values pass the gradient back to the selected positions (median over all
 * elements splits it evenly among the elements equal to the result, as PyTorch).
 * Determinism: each line is sorted or searched by one thread in a fixed order, so results are
 * the same for any thread count.
 */

/* Sorts input along dim (PyTorch's default dim is -1), ascending unless descending. The
   order is always stable (stable only documents the intent, as PyTorch's flag). Shapes:
   values and indices have input's shape; any dtype. Errors: CT_ERR_INDEX for an invalid
   dim. Mirrors: torch.sort(input, dim, descending, stable=stable). */
CTORCH_API ct_status ct_sort(const ct_tensor *input, int64_t dim, bool descending, bool stable,
                             ct_tensor **values, ct_tensor **indices);
/* The int64 indices that sort input along dim (ct_sort's indices). Not differentiable.
   Mirrors: torch.argsort(input, dim, descending, stable=stable). */
CTORCH_API ct_tensor *ct_argsort(const ct_tensor *input, int64_t dim, bool descending, bool stable);
/* input sorted along dim 0 (values only). Mirrors: torch.msort(input). */
CTORCH_API ct_tensor *ct_msort(const ct_tensor *input);
/* The k largest (or smallest) elements along dim (PyTorch's defaults: dim -1, largest true,
   sorted true), best first; the result is sorted whatever sorted says (PyTorch leaves the
   order unspecified then). Shapes: input's with size k at dim; any dtype but bool. Errors:
   CT_ERR_VALUE "selected index k out of range" for k < 0 or k > size; CT_ERR_INDEX for an
   invalid dim; CT_ERR_DTYPE "topk does not support bool dtypes on CPU".
   Mirrors: torch.topk(input, k, dim, largest, sorted). */
CTORCH_API ct_status ct_topk(const ct_tensor *input, int64_t k, int64_t dim, bool largest,
                             bool sorted, ct_tensor **values, ct_tensor **indices);
/* The k-th smallest element (k from 1) along dim and its index (PyTorch's default dim -1);
   integers and floats. Errors: CT_ERR_VALUE "kthvalue(): selected number k out of range for
   dimension d"; CT_ERR_INDEX for an invalid dim or an empty one ("kthvalue(): Expected
   reduction dim 1 to have non-zero size."). Mirrors: torch.kthvalue(input, k, dim, keepdim). */
CTORCH_API ct_status ct_kthvalue(const ct_tensor *input, int64_t k, int64_t dim, bool keepdim,
                                 ct_tensor **values, ct_tensor **indices);
/* The median of all elements (the lower of the two middle values for an even count), 0-dim;
   NaN when any element is NaN or input is empty. Integers and floats (bool: CT_ERR_DTYPE
   "\"median\" not implemented for 'Bool'"). Mirrors: torch.median(input). */
CTORCH_API ct_tensor *ct_median(const ct_tensor *input);
/* The median along dim and its index. Errors: as ct_kthvalue ("median(): Expected reduction
   dim ..."). Mirrors: torch.median(input, dim, keepdim). */
CTORCH_API ct_status ct_median_dim(const ct_tensor *input, int64_t dim, bool keepdim,
                                   ct_tensor **values, ct_tensor **indices);
/* As ct_median, ignoring NaN (NaN only when every element is NaN).
   Mirrors: torch.nanmedian(input). */
CTORCH_API ct_tensor *ct_nanmedian(const ct_tensor *input);
/* As ct_median_dim, ignoring NaN. Mirrors: torch.nanmedian(input, dim, keepdim). */
CTORCH_API ct_status ct_nanmedian_dim(const ct_tensor *input, int64_t dim, bool keepdim,
                                      ct_tensor **values, ct_tensor **indices);
/* The most frequent value along dim (the smallest among equally frequent ones; NaNs count
   apart) and its last index (PyTorch's default dim -1); any dtype. Errors: CT_ERR_INDEX for
   an invalid or empty dim. Mirrors: torch.mode(input, dim, keepdim). */
CTORCH_API ct_status ct_mode(const ct_tensor *input, int64_t dim, bool keepdim, ct_tensor **values,
                             ct_tensor **indices);

/* How ct_quantile picks between the two sorted values around a quantile's position i + f. */
typedef enum ct_quantile_interpolation {
    CT_QUANTILE_LINEAR = 0, /* v[i] + f * (v[i+1] - v[i]) (PyTorch's default) */
    CT_QUANTILE_LOWER,      /* v[i] */
    CT_QUANTILE_HIGHER,     /* v[i+1] (v[i] when f is 0) */
    CT_QUANTILE_MIDPOINT,   /* (v[i] + v[i+1]) / 2 */
    CT_QUANTILE_NEAREST,    /* the nearer one, halves to the even position */
    CT_QUANTILE_INTERPOLATION_COUNT
} ct_quantile_interpolation;
/* The q-quantiles of input along *dim, or of all elements when dim is NULL. q is a 0-dim or
   1-D tensor of values in [0, 1] with input's dtype (float32 or float64). Shapes: the result
   is (q.numel(), reduced...) for a 1-D q, (reduced...) for a 0-dim one, where reduced is
   input's shape without dim (kept as 1 when keepdim; all ones with dim NULL). NaN where a
   line holds a NaN. Gradient: to the two sorted values around each position, weighted as
   the interpolation. Errors: CT_ERR_DTYPE "quantile() input tensor must be either float or
   double dtype", "quantile() q tensor must be same dtype as the input tensor"; CT_ERR_SHAPE
   "quantile() q must be a scalar or 1D tensor"; CT_ERR_VALUE "quantile() input tensor must be
   non-empty", "quantile() q values must be in the range [0, 1]", "quantile() input tensor is
   too large" (over 2^24 elements to reduce), an interpolation out of range; CT_ERR_INDEX for
   an invalid dim.
   Mirrors: torch.quantile(input, q, dim, keepdim, interpolation=...). */
CTORCH_API ct_tensor *ct_quantile(const ct_tensor *input, const ct_tensor *q, const int64_t *dim,
                                  bool keepdim, ct_quantile_interpolation interpolation);
/* As ct_quantile, ignoring NaN (NaN only for a line of NaNs).
   Mirrors: torch.nanquantile(input, q, dim, keepdim, interpolation=...). */
CTORCH_API ct_tensor *ct_nanquantile(const ct_tensor *input, const ct_tensor *q, const int64_t *dim,
                                     bool keepdim, ct_quantile_interpolation interpolation);

/* The unique elements of the flattened input, ascending (also when sorted is false: PyTorch's
   CPU kernel sorts either way); NaNs are all kept. inverse (may be NULL) receives each
   element's position in the result (int64, input's shape), counts (may be NULL) how often
   each unique element occurs (int64). Any dtype. Not differentiable.
   Mirrors: torch.unique(input, sorted, return_inverse, return_counts, dim=None). */
CTORCH_API ct_tensor *ct_unique(const ct_tensor *input, bool sorted, ct_tensor **inverse,
                                ct_tensor **counts);
/* The flattened input with each run of equal consecutive elements kept once; inverse and
   counts as ct_unique. Mirrors: torch.unique_consecutive(input, return_inverse,
   return_counts, dim=None). */
CTORCH_API ct_tensor *ct_unique_consecutive(const ct_tensor *input, ct_tensor **inverse,
                                            ct_tensor **counts);
/* Whether each element of elements occurs in test_elements (compared after type promotion;
   NaN never matches), negated when invert; bool, elements' shape; any dtypes. assume_unique
   only states what the caller knows. Mirrors: torch.isin(elements, test_elements,
   assume_unique=assume_unique, invert=invert). */
CTORCH_API ct_tensor *ct_isin(const ct_tensor *elements, const ct_tensor *test_elements,
                              bool assume_unique, bool invert);
/* For each value of input, the index where it would be inserted into the innermost dim of
   sorted_sequence to keep it sorted: the first such index, or the last when right (PyTorch's
   side="right"). sorted_sequence is 1-D, or has input's leading dims; sorter (may be NULL)
   holds int64 indices that sort it. The result has input's shape, int64 (int32 when
   out_int32). NaN sorts last. Errors: CT_ERR_SHAPE "torch.searchsorted(): boundaries tensor
   should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value
   tensor must match, ...", "... boundary and sorter must have the same size, ...";
   CT_ERR_INDEX "torch.searchsorted(): sorter index out of range"; CT_ERR_DTYPE "... sorter
   must be a tensor of long dtype but got Int". Mirrors: torch.searchsorted(sorted_sequence,
   input, out_int32=out_int32, right=right, sorter=sorter). */
CTORCH_API ct_tensor *ct_searchsorted(const ct_tensor *sorted_sequence, const ct_tensor *input,
                                      bool out_int32, bool right, const ct_tensor *sorter);
/* The index of the bucket of each input value in the 1-D ascending boundaries: i with
   boundaries[i-1] < x <= boundaries[i] (<= and < swapped when right). Errors: CT_ERR_SHAPE
   "boundaries tensor must be 1 dimension, but got dim(2)".
   Mirrors: torch.bucketize(input, boundaries, out_int32=out_int32, right=right). */
CTORCH_API ct_tensor *ct_bucketize(const ct_tensor *input, const ct_tensor *boundaries,
                                   bool out_int32, bool right);
/* How often each value 0..max occurs in the 1-D non-negative integer input (at least
   minlength bins); with weights (1-D, input's length; may be NULL) the sums of the weights
   (float64 unless weights are float32), else int64 counts. Errors: CT_ERR_VALUE "bincount
   only supports 1-d non-negative integral inputs.", "minlength should be >= 0"; CT_ERR_SHAPE
   "weights should be 1-d and have the same length as input"; CT_ERR_DTYPE for a float or
   bool input ("\"bincount_cpu\" not implemented for 'Float'").
   Mirrors: torch.bincount(input, weights, minlength). */
CTORCH_API ct_tensor *ct_bincount(const ct_tensor *input, const ct_tensor *weights,
                                  int64_t minlength);
/* A histogram of input with bins equal-width bins over [min, max] (both 0: the data's min
   and max; elements outside are ignored, max falls in the last bin); input's float dtype.
   PyTorch's defaults: bins 100, min 0, max 0. Errors: CT_ERR_VALUE "torch.histogram(): bins
   must be > 0, ...", "torch.histc: max must be larger than min", "torch.histc: range of
   [nan, nan] is not finite"; CT_ERR_DTYPE for integer input ("\"histc\" not implemented for
   'Long'").
   Mirrors: torch.histc(input, bins, min, max). */
CTORCH_API ct_tensor *ct_histc(const ct_tensor *input, int64_t bins, double min, double max);
