/* ops/index.h - indexing along a dim with index tensors, and masked fill.
 *
 * Index tensors are int32 or int64 (any other dtype: CT_ERR_DTYPE, PyTorch's wording);
 * indices are not wrapped: one outside [0, size) is CT_ERR_INDEX, reported before anything
 * is written. A 0-dim tensor counts as one element of a 1-dim tensor, as in PyTorch. The
 * out-of-place forms return a new tensor owned by the current scope; the in-place forms
 * (trailing _) write self and return it. Gradients flow to self and src/source (never to
 * the index or mask). Determinism: duplicates accumulate (scatter_add, index_add) or
 * overwrite (scatter) in index order, and work is split between threads only where no two
 * threads write the same element, so results are the same for any thread count.
 */

/* out[i][j] = input[index[i][j]][j] for dim 0 (and likewise for any dim): index has input's
   ndim, index.size(d) <= input.size(d) for d != dim; the output has index's shape and
   input's dtype. Gradient: zeros scatter_add-ed with the gradient at index. Errors:
   CT_ERR_DTYPE "gather(): Expected dtype int32/int64 for index"; CT_ERR_SHAPE "Index tensor
   must have the same number of dimensions as input tensor", "Size does not match at
   dimension d expected index [..] to be no larger than self [..] apart from dimension d";
   CT_ERR_INDEX bad dim, "index i is out of bounds for dimension d with size n".
   Mirrors: torch.gather(input, dim, index). */
CTORCH_API ct_tensor *ct_gather(const ct_tensor *input, int64_t dim, const ct_tensor *index);
/* The entries of input at the positions of the 1-D (or 0-dim) index along dim: the output
   has input's shape with size index.numel() at dim. Gradient: zeros index_add-ed with the
   gradient. Errors: CT_ERR_DTYPE "index_select(): Expected dtype int32 or int64 for index";
   CT_ERR_INDEX "index_select(): Index is supposed to be a vector", bad dim, "index out of
   range in self". Mirrors: torch.index_select(input, dim, index). */
CTORCH_API ct_tensor *ct_index_select(const ct_tensor *input, int64_t dim, const ct_tensor *index);
/* A copy of input with src[i][j] written at [index[i][j]][j] for dim 0 (likewise for any dim;
   the last write wins among duplicates, in index order). index, input and src have the same
   ndim, index.size(d) <= src.size(d) and <= input.size(d) for d != dim; src has input's
   dtype. Gradient: input's is the gradient with the written positions zeroed; src's is the
   gradient gathered at index. Errors: CT_ERR_DTYPE "scatter(): Expected dtype int32/int64
   for index", "scatter(): Expected self.dtype to be equal to src.dtype"; CT_ERR_SHAPE "Index
   tensor must have the same number of dimensions as self tensor" (src tensor), "Expected
   index [..] to be no larger than self [..] apart from dimension d and to be no larger size
   than src [..]"; CT_ERR_INDEX bad dim, out-of-bounds index. Mirrors: torch.scatter. */
CTORCH_API ct_tensor *ct_scatter(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                                 const ct_tensor *src);
/* ct_scatter into self in place. Mirrors: Tensor.scatter_(dim, index, src). */
CTORCH_API ct_tensor *ct_scatter_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                  const ct_tensor *src);
/* As ct_scatter, but src is added at the indexed positions (duplicates accumulate in index
   order). Gradient: input's is the gradient; src's is the gradient gathered at index. Same
   errors as ct_scatter. Mirrors: torch.scatter_add(input, dim, index, src). */
CTORCH_API ct_tensor *ct_scatter_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                                     const ct_tensor *src);
/* ct_scatter_add into self in place. Mirrors: Tensor.scatter_add_(dim, index, src). */
CTORCH_API ct_tensor *ct_scatter_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                      const ct_tensor *src);
/* A copy of input with alpha * source[.., k, ..] added at input[.., index[k], ..] along dim
   (in index order; alpha 1 is PyTorch's default). index is 1-D (or 0-dim) with
   source.size(dim) entries; source has input's shape except at dim and input's dtype.
   Gradient: input's is the gradient; source's is alpha * the gradient index_select-ed.
   Errors: CT_ERR_DTYPE "index_add_(): Expected dtype int32/int64 for index but got: Float",
   "index_add_(): self (Float) and source (Double) must have the same scalar type";
   CT_ERR_INDEX "index_add_(): Index is supposed to be a vector, but got dim: ..", bad dim,
   out-of-bounds index; CT_ERR_SHAPE "index_add_(): Number of indices (n) should be equal to
   source.size(dim): (m), for dim: d", "source tensor shape must match self tensor shape,
   excluding the specified dimension. ..". Mirrors: torch.index_add(input, dim, index,
   source, alpha=alpha). */
CTORCH_API ct_tensor *ct_index_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                                   const ct_tensor *source, double alpha);
/* ct_index_add into self in place. Mirrors: Tensor.index_add_(dim, index, source, alpha). */
CTORCH_API ct_tensor *ct_index_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                    const ct_tensor *source, double alpha);
/* input with value (converted to input's dtype) where the bool mask is true; the output has
   the broadcast shape of input and mask. Gradient: the gradient with masked positions
   zeroed. Errors: CT_ERR_DTYPE "masked_fill_ only supports boolean masks, but got mask with
   dtype long int"; CT_ERR_SHAPE when the shapes do not broadcast.
   Mirrors: torch.masked_fill(input, mask, value). */
CTORCH_API ct_tensor *ct_masked_fill(const ct_tensor *input, const ct_tensor *mask, double value);
/* ct_masked_fill into self in place; mask must broadcast to self's shape (CT_ERR_SHAPE
   "output with shape [..] doesn't match the broadcast shape [..]").
   Mirrors: Tensor.masked_fill_(mask, value). */
CTORCH_API ct_tensor *ct_masked_fill_(ct_tensor *self, const ct_tensor *mask, double value);

/* ---- issue 7, second slice: advanced indexing, masks, take, scatter_reduce ------------------ */
/* The indices (n rows, input.ndim columns, int64) of input's nonzero elements in row-major
   order (NaN counts as nonzero). Mirrors: torch.nonzero(input). */
CTORCH_API ct_tensor *ct_nonzero(const ct_tensor *input);
/* As ct_nonzero. Mirrors: torch.argwhere(input). */
CTORCH_API ct_tensor *ct_argwhere(const ct_tensor *input);
/* input[indices[0], .., indices[n-1]]: PyTorch's advanced indexing. indices[k] NULL is a full
   slice ':'; an int64/int32 tensor indexes one dim (negative entries count from the end); a
   bool/uint8 mask indexes as many dims as it has (its sizes must equal theirs: its nonzero
   positions). The index tensors broadcast together to a shape B; when the indexed dims are
   adjacent the result is input's dims before them, B, then the dims after; otherwise B comes
   first, then the unindexed dims in order. A new tensor of input's dtype. Gradient: zeros with
   the gradient index_put-accumulated (IndexBackward0). Errors: CT_ERR_DTYPE "tensors used as
   indices must be long, int, byte or bool tensors"; CT_ERR_INDEX "too many indices for tensor
   of dimension 2", "index 5 is out of bounds for dimension 0 with size 3", "The shape of the
   mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0";
   CT_ERR_SHAPE when the index tensors do not broadcast. Mirrors: Tensor.__getitem__ with
   tensors (aten::index). */
CTORCH_API ct_tensor *ct_index(const ct_tensor *input, const ct_tensor *const *indices, int n);
/* A copy of input with values (broadcast to the indexing result's shape, input's dtype)
   written at input[indices] (ct_index's rules); accumulate adds them instead (duplicates
   accumulate in index order), else the last duplicate wins. Gradient: input's is the gradient
   with the written positions zeroed (all of it when accumulating); values' the gradient at
   the positions, summed to values' shape. Errors: as ct_index; CT_ERR_DTYPE "Index put
   requires the source and destination dtypes match, got Float for the destination and Double
   for the source."; CT_ERR_SHAPE "shape mismatch: value tensor of shape [2] cannot be
   broadcast to indexing result of shape [3]". Mirrors: torch.index_put(input, indices,
   values, accumulate). */
CTORCH_API ct_tensor *ct_index_put(const ct_tensor *input, const ct_tensor *const *indices, int n,
                                   const ct_tensor *values, bool accumulate);
/* ct_index_put into self in place (self[indices] = values, or += with accumulate).
   Mirrors: Tensor.index_put_(indices, values, accumulate). */
CTORCH_API ct_tensor *ct_index_put_(ct_tensor *self, const ct_tensor *const *indices, int n,
                                    const ct_tensor *values, bool accumulate);
/* The elements of input where the bool mask is true (input and mask broadcast together), in
   row-major order: a new 1-D tensor. Gradient: zeros with the gradient at the mask's
   positions. Errors: CT_ERR_DTYPE "masked_select: expected BoolTensor for mask"; CT_ERR_SHAPE
   when the shapes do not broadcast. Mirrors: torch.masked_select(input, mask). */
CTORCH_API ct_tensor *ct_masked_select(const ct_tensor *input, const ct_tensor *mask);
/* Writes source's elements (row-major order, source has self's dtype) one by one into the
   positions of self where the bool mask (broadcast to self's shape) is true; returns self.
   Gradient: self's is the gradient with the mask's positions zeroed; source's the gradient at
   those positions, in order, then zeros (MaskedScatterBackward0). Errors: CT_ERR_DTYPE
   "masked_scatter_ only supports boolean masks, but got mask with dtype long int",
   "masked_scatter_: expected self and source to have same dtypes but got Float and Double";
   CT_ERR_SHAPE "Number of elements of source < number of ones in mask", a mask that does not
   broadcast to self. Mirrors: Tensor.masked_scatter_(mask, source). */
CTORCH_API ct_tensor *ct_masked_scatter_(ct_tensor *self, const ct_tensor *mask,
                                         const ct_tensor *source);
/* ct_masked_scatter_ on a copy of input (input and mask broadcast together).
   Mirrors: torch.masked_scatter(input, mask, source). */
CTORCH_API ct_tensor *ct_masked_scatter(const ct_tensor *input, const ct_tensor *mask,
                                        const ct_tensor *source);
/* Fills self[.., index[k], ..] along dim with value (converted to self's dtype) in place;
   index is 1-D or 0-dim int64. Returns self. Gradient: self's is the gradient with the filled
   slices zeroed. Errors: CT_ERR_DTYPE "index_fill_(): Expected dtype int64 for index.";
   CT_ERR_INDEX "Index has to be a vector/scalar", bad dim, out-of-bounds index.
   Mirrors: Tensor.index_fill_(dim, index, value). */
CTORCH_API ct_tensor *ct_index_fill_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                     double value);
/* Copies source's slices k along dim to self's slices index[k] in place (index 1-D or 0-dim
   int64 with source.size(dim) entries; source has self's shape elsewhere and self's dtype).
   Returns self. Gradient: self's is the gradient with the copied slices zeroed; source's the
   gradient's slices at index. Errors: CT_ERR_DTYPE "index_copy_(): Expected a long tensor for
   index, but got Int", "index_copy_(): self and source expected to have the same dtype, but
   got (self) Float and (source) Double"; CT_ERR_INDEX "index_copy_(): Index should have
   dimension 1 or 0 (got 2)", bad dim, out-of-bounds index; CT_ERR_SHAPE "index_copy_(): Number
   of indices (3) should be equal to source.size(dim) (2)". Mirrors: Tensor.index_copy_(dim,
   index, source). */
CTORCH_API ct_tensor *ct_index_copy_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                     const ct_tensor *source);
/* input treated as 1-D (row-major) read at the int64 positions of index (negative entries
   count from the end): a new tensor of index's shape. Gradient: through ct_index. Errors: as
   ct_index. Mirrors: torch.take(input, index). */
CTORCH_API ct_tensor *ct_take(const ct_tensor *input, const ct_tensor *index);
/* gather along dim after broadcasting input and indices (int64, same ndim) except at dim.
   PyTorch's dim=None is ct_take_along_dim(ct_flatten(input, 0, -1), ct_flatten(indices, 0,
   -1), 0). Errors: CT_ERR_DTYPE "torch.take_along_dim(): dtype of indices should be Long but
   got Int"; CT_ERR_SHAPE "torch.take_along_dim(): input and indices should have the same
   number of dimensions, but got 2 dimensions for input, and 1 dimensions for indices"; as
   ct_gather. Mirrors: torch.take_along_dim(input, indices, dim). */
CTORCH_API ct_tensor *ct_take_along_dim(const ct_tensor *input, const ct_tensor *indices,
                                        int64_t dim);
/* A copy of input with src reduced into it at index along dim (scatter's addressing): reduce
   "sum", "prod", "mean", "amax" or "amin"; include_self false leaves input's values out of the
   reduction at the scattered positions. Duplicates combine in index order (mean of integers
   rounds down). Gradient: PyTorch's scatter_reduce_backward (amax/amin share the gradient
   among ties). Errors: as ct_scatter; CT_ERR_VALUE "reduce argument must be either sum, prod,
   mean, amax or amin, got max". Mirrors: torch.scatter_reduce(input, dim, index, src, reduce,
   include_self=include_self). */
CTORCH_API ct_tensor *ct_scatter_reduce(const ct_tensor *input, int64_t dim,
                                        const ct_tensor *index, const ct_tensor *src,
                                        const char *reduce, bool include_self);
/* ct_scatter_reduce into self in place. Mirrors: Tensor.scatter_reduce_(dim, index, src,
   reduce, include_self=include_self). */
CTORCH_API ct_tensor *ct_scatter_reduce_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                         const ct_tensor *src, const char *reduce,
                                         bool include_self);
