/* ops/view.h - views (sharing storage, as PyTorch's "Tensor Views") and shape ops.
 *
 * Views return a new tensor object over the same storage: writes through a view change
 * the base, and the version counter is shared. All results are owned by the current scope.
 * Each function is an op of the dispatcher under PyTorch's name (aten::view, aten::reshape,
 * ...; narrow, split and chunk run aten::slice, broadcast_tensors aten::expand, stack runs
 * aten::unsqueeze and aten::cat), so hooks and the profiler see it; views touch no data and
 * work on any device, cat, tril and triu need the device's kernel.
 * Dims may be negative (counted from the end). Errors: CT_ERR_INDEX for a dim out of range
 * ("Dimension out of range (expected to be in range of [-2, 1], but got 2)"), CT_ERR_SHAPE
 * for incompatible sizes.
 */

/* Same data with a new shape (one size may be -1); needs stride-compatible input: "view
   size is not compatible with input tensor's size and stride (at least one dimension spans
   across two contiguous subspaces). Use .reshape(...) instead." Mirrors: Tensor.view. */
CTORCH_API ct_tensor *ct_view(const ct_tensor *input, const int64_t *sizes, int ndim);
/* A view when possible, else a contiguous copy. Mirrors: torch.reshape. */
CTORCH_API ct_tensor *ct_reshape(const ct_tensor *input, const int64_t *sizes, int ndim);
/* Flattens dims start_dim..end_dim into one (view when possible). Mirrors: torch.flatten. */
CTORCH_API ct_tensor *ct_flatten(const ct_tensor *input, int64_t start_dim, int64_t end_dim);
/* dims: a permutation of 0..ndim-1. Mirrors: torch.permute. */
CTORCH_API ct_tensor *ct_permute(const ct_tensor *input, const int64_t *dims, int ndim);
/* Swaps dim0 and dim1. Mirrors: torch.transpose. */
CTORCH_API ct_tensor *ct_transpose(const ct_tensor *input, int64_t dim0, int64_t dim1);
/* Transpose of a <= 2-D tensor (0-D and 1-D returned as views). Mirrors: torch.t. */
CTORCH_API ct_tensor *ct_t(const ct_tensor *input);
/* Inserts a size-1 dim at dim (in [-ndim-1, ndim]). Mirrors: torch.unsqueeze. */
CTORCH_API ct_tensor *ct_unsqueeze(const ct_tensor *input, int64_t dim);
/* Removes every size-1 dim. Mirrors: torch.squeeze. */
CTORCH_API ct_tensor *ct_squeeze(const ct_tensor *input);
/* Removes dim if its size is 1 (else returns a view unchanged). Mirrors: torch.squeeze(dim). */
CTORCH_API ct_tensor *ct_squeeze_dim(const ct_tensor *input, int64_t dim);
/* Broadcasts size-1 dims to sizes (stride 0; -1 keeps a size; new leading dims allowed).
   Error: "The expanded size of the tensor (4) must match the existing size (3) at
   non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]".
   Mirrors: Tensor.expand. */
CTORCH_API ct_tensor *ct_expand(const ct_tensor *input, const int64_t *sizes, int ndim);
/* Elements start..start+length-1 of dim. Mirrors: torch.narrow. */
CTORCH_API ct_tensor *ct_narrow(const ct_tensor *input, int64_t dim, int64_t start, int64_t length);
/* The slice at index of dim, removing dim. Mirrors: torch.select. */
CTORCH_API ct_tensor *ct_select(const ct_tensor *input, int64_t dim, int64_t index);
/* input itself (a new view) when contiguous, else a contiguous copy.
   Mirrors: Tensor.contiguous. */
CTORCH_API ct_tensor *ct_contiguous(const ct_tensor *input);
/* A view of input with the same shape: a new tensor object sharing storage and history.
   Mirrors: Tensor.view_as(self) / torch.alias. */
CTORCH_API ct_tensor *ct_alias(const ct_tensor *input);
/* Concatenates n tensors along dim; all other sizes must match ("Sizes of tensors must match
   except in dimension 1. Expected size 2 but got size 3 for tensor number 1 in the list.");
   dtype is the promotion of all. Mirrors: torch.cat. */
CTORCH_API ct_tensor *ct_cat(const ct_tensor *const *tensors, int n, int64_t dim);
/* Stacks n same-shape tensors along a new dim ("stack expects each tensor to be equal size,
   but got [2] at entry 0 and [3] at entry 1"). Mirrors: torch.stack. */
CTORCH_API ct_tensor *ct_stack(const ct_tensor *const *tensors, int n, int64_t dim);

/* ---- issue 7: more views and shape ops -------------------------------------------------- */
/* input viewed with other's shape (other's data and device are not read). Errors: as ct_view.
   Returns: a view owned by the current scope. Mirrors: Tensor.view_as. */
CTORCH_API ct_tensor *ct_view_as(const ct_tensor *input, const ct_tensor *other);
/* input reshaped to other's shape (a view when possible, else a copy). Errors: as ct_reshape.
   Mirrors: Tensor.reshape_as. */
CTORCH_API ct_tensor *ct_reshape_as(const ct_tensor *input, const ct_tensor *other);
/* input expanded to other's shape (stride 0 on broadcast dims). Errors: as ct_expand.
   Mirrors: Tensor.expand_as. */
CTORCH_API ct_tensor *ct_expand_as(const ct_tensor *input, const ct_tensor *other);
/* Splits dim of input (..., S, ...) into sizes[0..n-1] (..., s0, s1, ..., ...), a view; one
   size may be -1 (inferred). Errors: CT_ERR_INDEX for dim; CT_ERR_SHAPE "unflatten: sizes must
   be non-empty", "unflatten: Provided sizes [4, -1] don't multiply up to the size of dim 1 (6)
   in the input tensor". Mirrors: torch.unflatten. */
CTORCH_API ct_tensor *ct_unflatten(const ct_tensor *input, int64_t dim, const int64_t *sizes,
                                   int n);
/* input (..., m, n) as (..., n, m): the transpose of the last two dims, a view. Errors:
   CT_ERR_SHAPE "tensor.mT is only supported on matrices or batches of matrices. Got 1-D
   tensor." Mirrors: Tensor.mT. */
CTORCH_API ct_tensor *ct_mt(const ct_tensor *input);
/* input broadcast to sizes[0..ndim-1] (Tensor.expand's rules: -1 keeps a size, new leading
   dims allowed), a view. Errors: as ct_expand. Mirrors: torch.broadcast_to. */
CTORCH_API ct_tensor *ct_broadcast_to(const ct_tensor *input, const int64_t *sizes, int ndim);
/* The broadcast of n shapes (shapes[k] has ndims[k] <= CT_MAX_DIMS sizes) into out (room for
   CT_MAX_DIMS sizes) and *out_ndim; n == 0 gives the 0-dim shape. Returns: CT_OK, or
   CT_ERR_SHAPE "Attempting to broadcast a dimension of length 4 at -2! Mismatching argument at
   index 1 had (4, 3); but expected shape should be broadcastable to [2, 3]", CT_ERR_VALUE
   "Attempting to broadcast a dimension with negative length!", CT_ERR_NULL_ARG.
   Mirrors: torch.broadcast_shapes. */
CTORCH_API ct_status ct_broadcast_shapes(const int64_t *const *shapes, const int *ndims, int n,
                                         int64_t *out, int *out_ndim);
/* out[k] = tensors[k] broadcast to the common shape of all n tensors: an expanded view, or
   tensors[k] itself (one more reference) when it has that shape already, as PyTorch. Every
   out[k] is owned by the current scope. Returns: CT_OK, or CT_ERR_SHAPE "The size of tensor a
   (2) must match the size of tensor b (4) at non-singleton dimension 0" (out untouched).
   Mirrors: torch.broadcast_tensors. */
CTORCH_API ct_status ct_broadcast_tensors(const ct_tensor *const *tensors, int n,
                                          ct_tensor **out);
/* input[..., start:end:step, ...] along dim: Python slicing (negative start/end count from the
   end, both clamped to [0, size]; end before start gives size 0; INT64_MAX as end means "to the
   end"), a view. Gradient: zeros with the gradient in the slice (SliceBackward0).
   Errors: CT_ERR_VALUE "slice step must be positive" (step < 1); CT_ERR_INDEX for dim and
   "slice() cannot be applied to a 0-dim tensor.". Mirrors: Tensor.__getitem__ with a slice
   (aten::slice). */
CTORCH_API ct_tensor *ct_slice(const ct_tensor *input, int64_t dim, int64_t start, int64_t end,
                               int64_t step);
/* The three functions below write their pieces, views of input along dim, to out[0..count-1]
   (owned by the current scope) and return count; out == NULL only returns count; -1 on error.
   Each piece is a slice view (grad_fn SliceBackward0; PyTorch records one multi-output
   SplitBackward0 node with the same gradients). Errors: CT_ERR_INDEX for dim; CT_ERR_SHAPE
   "split expects at least a 1-dimensional tensor"; CT_ERR_VALUE when capacity < count.
   ct_split: pieces of split_size along dim, the last one smaller (at least one piece).
   Errors: "split expects split_size be non-negative, but got split_size=-1", "split_size can
   only be 0 if dimension size is 0, but got dimension size of 2". Mirrors: torch.split. */
CTORCH_API int ct_split(const ct_tensor *input, int64_t split_size, int64_t dim, ct_tensor **out,
                        int capacity);
/* Pieces of split_sizes[0..n-1] along dim. Errors: "split_with_sizes expects split_sizes to sum
   exactly to 6 (input tensor's size at dimension 1), but got split_sizes=[2, 2]",
   "split_with_sizes expects split_sizes have only non-negative entries, but got
   split_sizes=[7, -1]". Mirrors: torch.split with a list of sizes (split_with_sizes). */
CTORCH_API int ct_split_with_sizes(const ct_tensor *input, const int64_t *split_sizes, int n,
                                   int64_t dim, ct_tensor **out, int capacity);
/* Up to chunks pieces of ceil(size / chunks) along dim (the last smaller; fewer pieces when
   they run out, as PyTorch; a size-0 dim gives chunks empty pieces). Errors: "chunk expects
   `chunks` to be greater than 0, got: 0", "chunk expects at least a 1-dimensional tensor".
   Mirrors: torch.chunk. */
CTORCH_API int ct_chunk(const ct_tensor *input, int64_t chunks, int64_t dim, ct_tensor **out,
                        int capacity);
/* Lower triangle of input (*, m, n): elements with col - row <= diagonal kept, the rest 0;
   a new contiguous tensor of input's dtype (every dtype). Gradient: tril(grad, diagonal)
   (TrilBackward0). Errors: CT_ERR_SHAPE "tril: input tensor must have at least 2 dimensions".
   Mirrors: torch.tril. */
CTORCH_API ct_tensor *ct_tril(const ct_tensor *input, int64_t diagonal);
/* Upper triangle: elements with col - row >= diagonal kept, the rest 0. Gradient:
   triu(grad, diagonal) (TriuBackward0). Errors: "triu: input tensor must have at least 2
   dimensions". Mirrors: torch.triu. */
CTORCH_API ct_tensor *ct_triu(const ct_tensor *input, int64_t diagonal);

/* ---- issue 7, second slice: more views, shape ops and copies -------------------------------- */
/* input (s0, .., s(k-1)) tiled repeats[0..n-1] times per dim (n >= ndim; leading dims of size 1
   are added when n > ndim): shape (repeats[0] * s0', ...), a new tensor of input's dtype.
   Gradient: the gradient summed over the copies (through expand/reshape). Errors: CT_ERR_SHAPE
   "Number of dimensions of repeat dims can not be smaller than number of dimensions of
   tensor", CT_ERR_VALUE "Trying to create tensor with negative dimension -1: [-1, 3]".
   Mirrors: Tensor.repeat(*repeats). */
CTORCH_API ct_tensor *ct_repeat(const ct_tensor *input, const int64_t *repeats, int n);
/* ct_repeat with dims padded by leading 1s when n < ndim. Errors: as ct_repeat.
   Mirrors: torch.tile(input, dims). */
CTORCH_API ct_tensor *ct_tile(const ct_tensor *input, const int64_t *dims, int n);
/* Each slice of dim repeated repeats times in place ([a, b] -> [a, a, b, b]); a 0-dim input
   counts as 1-D. PyTorch's dim=None (flattened) is ct_repeat_interleave(ct_flatten(input, 0,
   -1), repeats, 0). Errors: CT_ERR_VALUE "repeats can not be negative"; CT_ERR_INDEX bad dim.
   Mirrors: torch.repeat_interleave(input, repeats, dim). */
CTORCH_API ct_tensor *ct_repeat_interleave(const ct_tensor *input, int64_t repeats, int64_t dim);
/* A copy of input with the order of dims[0..n-1] reversed. Gradient: flip(grad, dims)
   (FlipBackward0). Errors: CT_ERR_VALUE "dim 0 appears multiple times in the list of dims";
   CT_ERR_INDEX bad dim. Mirrors: torch.flip(input, dims). */
CTORCH_API ct_tensor *ct_flip(const ct_tensor *input, const int64_t *dims, int n);
/* flip along dim 1. Errors: CT_ERR_SHAPE "Input must be >= 2-d.". Mirrors: torch.fliplr. */
CTORCH_API ct_tensor *ct_fliplr(const ct_tensor *input);
/* flip along dim 0. Errors: CT_ERR_SHAPE "Input must be >= 1-d.". Mirrors: torch.flipud. */
CTORCH_API ct_tensor *ct_flipud(const ct_tensor *input);
/* input rolled by shifts[k] along dims[k] (elements leaving the end come back at the start);
   n_dims == 0 rolls the flattened tensor by shifts[0] and restores the shape. A new tensor.
   Errors: CT_ERR_VALUE "shifts and dimensions must align. shifts: 2, dims:1"; CT_ERR_INDEX bad
   dim. Mirrors: torch.roll(input, shifts, dims). */
CTORCH_API ct_tensor *ct_roll(const ct_tensor *input, const int64_t *shifts, int n_shifts,
                              const int64_t *dims, int n_dims);
/* input rotated k times by 90 degrees in the plane of dims[0], dims[1] (n == 2), from the
   first towards the second. A new tensor. Errors: CT_ERR_VALUE "expected total rotation dims ==
   2, but got dims = 3", "expected total dims >= 2, but got total dims = 1", "expected rotation
   dims to be different, but got dim0 = 1 and dim1 = 1". Mirrors: torch.rot90(input, k, dims). */
CTORCH_API ct_tensor *ct_rot90(const ct_tensor *input, int64_t k, const int64_t *dims, int n);
/* The dims source[0..n-1] of input moved to positions destination[0..n-1], the others kept in
   order: a view (aten::permute). Errors: CT_ERR_INDEX bad dim; CT_ERR_VALUE "movedim: repeated
   dim in `source` ([0, 0])" (or `destination`). Mirrors: torch.movedim / torch.moveaxis. */
CTORCH_API ct_tensor *ct_movedim(const ct_tensor *input, const int64_t *source,
                                 const int64_t *destination, int n);
/* The slices input.select(dim, k) for k < input.size(dim), views, written to out[0..count-1]
   (owned by the current scope); returns count, or -1 on error; out == NULL only returns count.
   Errors: CT_ERR_INDEX "Dimension specified as 0 but tensor has no dimensions", bad dim;
   CT_ERR_VALUE when capacity < count. Mirrors: torch.unbind(input, dim). */
CTORCH_API int ct_unbind(const ct_tensor *input, int64_t dim, ct_tensor **out, int capacity);
/* sections pieces of dim (slice views; the first size % sections one element longer), as
   ct_split's out/capacity/return. Errors: CT_ERR_SHAPE "tensor_split expected at least a
   1-dimensional tensor, but got a tensor with 0 dims"; CT_ERR_VALUE "number of sections must be
   larger than 0, got 0"; CT_ERR_INDEX bad dim. Mirrors: torch.tensor_split(input, sections,
   dim). */
CTORCH_API int ct_tensor_split(const ct_tensor *input, int64_t sections, int64_t dim,
                               ct_tensor **out, int capacity);
/* n + 1 pieces of dim cut before indices[0..n-1] (Python slices input[i_(k-1):i_k], negative
   indices count from the end). Errors: as ct_tensor_split. Mirrors: torch.tensor_split(input,
   indices, dim). */
CTORCH_API int ct_tensor_split_indices(const ct_tensor *input, const int64_t *indices, int n,
                                       int64_t dim, ct_tensor **out, int capacity);
/* ct_tensor_split into sections equal pieces along dim 1 (dim 0 for a 1-D input). Errors:
   CT_ERR_SHAPE "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with
   0 dimensions!", "torch.hsplit attempted to split along dimension 1, but the size of the
   dimension 5 is not divisible by the split_size 2!". Mirrors: torch.hsplit(input, sections). */
CTORCH_API int ct_hsplit(const ct_tensor *input, int64_t sections, ct_tensor **out, int capacity);
/* As ct_hsplit along dim 0 of an input with at least 2 dims. Mirrors: torch.vsplit. */
CTORCH_API int ct_vsplit(const ct_tensor *input, int64_t sections, ct_tensor **out, int capacity);
/* As ct_hsplit along dim 2 of an input with at least 3 dims. Mirrors: torch.dsplit. */
CTORCH_API int ct_dsplit(const ct_tensor *input, int64_t sections, ct_tensor **out, int capacity);
/* The n tensors (0-dim ones as 1-D) concatenated along dim 1, or dim 0 when the first is 1-D.
   Errors: CT_ERR_VALUE "hstack expects a non-empty TensorList"; as ct_cat.
   Mirrors: torch.hstack. */
CTORCH_API ct_tensor *ct_hstack(const ct_tensor *const *tensors, int n);
/* The n tensors made at least 2-D ((n) -> (1, n)) concatenated along dim 0.
   Mirrors: torch.vstack / torch.row_stack. */
CTORCH_API ct_tensor *ct_vstack(const ct_tensor *const *tensors, int n);
/* The n tensors made at least 3-D ((n) -> (1, n, 1), (m, n) -> (m, n, 1)) concatenated along
   dim 2. Mirrors: torch.dstack. */
CTORCH_API ct_tensor *ct_dstack(const ct_tensor *const *tensors, int n);
/* The n tensors as columns ((n) and 0-dim -> (n, 1)) concatenated along dim 1.
   Mirrors: torch.column_stack. */
CTORCH_API ct_tensor *ct_column_stack(const ct_tensor *const *tensors, int n);
/* The diagonal offset of the planes (dim1, dim2) (offset > 0 above the main diagonal): a view
   with dim1 and dim2 removed and the diagonal appended last. Gradient: zeros with the gradient
   on the diagonal (DiagonalBackward0). Errors: CT_ERR_VALUE "diagonal dimensions cannot be
   identical 1, 1"; CT_ERR_INDEX bad dim. Mirrors: torch.diagonal(input, offset, dim1, dim2). */
CTORCH_API ct_tensor *ct_diagonal(const ct_tensor *input, int64_t offset, int64_t dim1,
                                  int64_t dim2);
/* 1-D input (n): the (n + |diagonal|) square matrix with input on that diagonal; 2-D input: a
   copy of its diagonal. Errors: CT_ERR_SHAPE "diag(): Supports 1D or 2D tensors. Got 3D".
   Mirrors: torch.diag(input, diagonal). */
CTORCH_API ct_tensor *ct_diag(const ct_tensor *input, int64_t diagonal);
/* input (..., n) placed on the offset diagonal of new dims dim1, dim2 (of size n + |offset|,
   counted in the output's ndim + 1 ... ndim), zeros elsewhere. Gradient: the gradient's
   diagonal (DiagEmbedBackward0). Errors: as ct_diagonal. Mirrors: torch.diag_embed(input,
   offset, dim1, dim2). */
CTORCH_API ct_tensor *ct_diag_embed(const ct_tensor *input, int64_t offset, int64_t dim1,
                                    int64_t dim2);
/* The flattened input on the offset diagonal of a square matrix. Mirrors: torch.diagflat. */
CTORCH_API ct_tensor *ct_diagflat(const ct_tensor *input, int64_t offset);
/* A view of input's storage with sizes, strides (elements, >= 0) and storage_offset (elements
   from the storage's start), ndim each. Gradient: the gradient summed into each storage
   element the view reads, then read back with input's geometry (AsStridedBackward0; input
   must not overlap itself). Errors: CT_ERR_VALUE "as_strided: Negative strides are not
   supported at the moment, got strides: [-1]", "Trying to create tensor with negative
   dimension -1: [-1]"; CT_ERR_SHAPE "setStorage: sizes [4], strides [2], storage offset 0, and
   itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24".
   Mirrors: torch.as_strided(input, size, stride, storage_offset). */
CTORCH_API ct_tensor *ct_as_strided(const ct_tensor *input, const int64_t *sizes,
                                    const int64_t *strides, int ndim, int64_t storage_offset);
/* All windows of size elements, step apart, along dimension: a view (..., (s - size) / step +
   1, ..., size) with the window dim appended. Gradient: the windows' gradients summed back
   (UnfoldBackward0). Errors: CT_ERR_SHAPE "maximum size for tensor at dimension 1 is 4 but size
   is 5"; CT_ERR_VALUE "step is 0 but must be > 0"; CT_ERR_INDEX bad dim.
   Mirrors: Tensor.unfold(dimension, size, step). */
CTORCH_API ct_tensor *ct_unfold_view(const ct_tensor *input, int64_t dimension, int64_t size,
                                     int64_t step);
