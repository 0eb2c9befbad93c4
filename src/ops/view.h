/* ops/view.h - views (sharing storage, as PyTorch's "Tensor Views") and shape ops.
 *
 * Views return a new tensor object over the same storage: writes through a view change
 * the base, and the version counter is shared. All results are owned by the current scope.
 * Each function is an op of the dispatcher under PyTorch's name (aten::view, aten::reshape,
 * ...; narrow runs aten::slice, stack runs aten::unsqueeze and aten::cat), so hooks and the
 * profiler see it; views touch no data and work on any device, cat needs the device's
 * kernel.
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
