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
