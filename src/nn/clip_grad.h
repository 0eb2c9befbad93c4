/* nn/clip_grad.h - gradient clipping and parameter/vector conversion (torch.nn.utils).
 *
 * Parameters come as an array of n tensors (n >= 0; NULL only when n is 0); parameters
 * without a .grad are skipped, as in PyTorch. The clipping functions change the .grad
 * tensors in place, without recording autograd history (PyTorch's torch.no_grad()).
 */

/* The norm of the per-tensor norms: vector_norm(stack([vector_norm(t, norm_type) for t in
   tensors]), norm_type); norm_type may be INFINITY (the largest absolute value) or any other
   p. Shapes: any. Dtypes: floating; the result has the dtype of the stacked norms (the
   promotion of the tensors' dtypes). Returns: a new 0-dim tensor owned by the current scope
   (0.0, float32, when n is 0), or NULL. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE when
   error_if_nonfinite and the norm is NaN or infinite ("The total norm of order 2.0 for
   gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error
   and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`").
   Mirrors: torch.nn.utils.get_total_norm(tensors, norm_type, error_if_nonfinite). */
CTORCH_API ct_tensor *ct_get_total_norm(const ct_tensor *const *tensors, int64_t n,
                                        double norm_type, bool error_if_nonfinite);
/* Scales every .grad of params in place by clamp(max_norm / (total_norm + 1e-6), max=1.0)
   (computed as PyTorch does: reciprocal(total_norm + 1e-6) * max_norm, in total_norm's
   dtype). total_norm: a 0-dim (or one-element) tensor, e.g. from ct_get_total_norm.
   Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG. Mirrors:
   torch.nn.utils.clip_grads_with_norm_(parameters, max_norm, total_norm). */
CTORCH_API ct_status ct_clip_grads_with_norm_(ct_tensor *const *params, int64_t n,
                                              double max_norm, const ct_tensor *total_norm);
/* Clips the gradients of params so that their total norm (ct_get_total_norm of the .grads)
   is at most max_norm: the .grads are scaled in place by clamp(max_norm / (total + 1e-6),
   max=1.0). Returns: the total norm before clipping, a new 0-dim tensor owned by the current
   scope, or NULL. Errors: as ct_get_total_norm (nothing is changed after an error).
   Mirrors: torch.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type=2.0,
   error_if_nonfinite=False). */
CTORCH_API ct_tensor *ct_clip_grad_norm_(ct_tensor *const *params, int64_t n, double max_norm,
                                         double norm_type, bool error_if_nonfinite);
/* Clamps every .grad of params in place to [-clip_value, clip_value]. Returns: CT_OK or the
   error code. Errors: CT_ERR_NULL_ARG. Mirrors: torch.nn.utils.clip_grad_value_(parameters,
   clip_value). */
CTORCH_API ct_status ct_clip_grad_value_(ct_tensor *const *params, int64_t n, double clip_value);
/* The parameters flattened and concatenated in order. Shapes: (sum of numels). Dtypes: the
   promotion of the parameters' (as torch.cat). Returns: a new tensor owned by the current
   scope (differentiable, as torch.cat of views), or NULL. Errors: CT_ERR_NULL_ARG;
   CT_ERR_VALUE for n < 1 (torch.cat of an empty list: "torch.cat(): expected a non-empty
   list of Tensors"). Mirrors: torch.nn.utils.parameters_to_vector(parameters). */
CTORCH_API ct_tensor *ct_parameters_to_vector(ct_tensor *const *params, int64_t n);
/* Copies consecutive slices of vec into the parameters (in order, each reshaped to its
   parameter), in place and without autograd history. PyTorch instead rebinds each
   param.data to a view of vec (sharing its memory); ctorch copies the values. Shapes: vec
   (N) with N >= the parameters' total numel. Errors: CT_ERR_NULL_ARG; CT_ERR_SHAPE when vec
   is not 1-D ("vector_to_parameters: expected a 1-D vec, got 2 dims") or is too short
   ("vector_to_parameters: vec has 5 elements, the parameters need 7"). Mirrors: torch.nn.utils.vector_to_parameters(vec, parameters). */
CTORCH_API ct_status ct_vector_to_parameters(const ct_tensor *vec, ct_tensor *const *params,
                                             int64_t n);
