/* autograd/autograd.h - reverse-mode automatic differentiation (DESIGN §6).
 *
 * A dynamic tape as in PyTorch's "Autograd mechanics": an op whose input requires grad
 * (and grad mode is on) records a node (grad_fn) with edges to its inputs' nodes; the
 * engine runs nodes in dependency order and accumulates into leaves' .grad. Saved tensors
 * are checked against version counters, so an in-place change of a saved tensor fails.
 * Grad mode is per thread.
 */
typedef struct ct_node ct_node;

/* Whether t records history: a leaf marked with ct_requires_grad_, or any op output with a
   grad_fn. Mirrors: Tensor.requires_grad. */
CTORCH_API bool ct_requires_grad(const ct_tensor *t);
/* Marks a leaf as requiring grad (or not). Errors: CT_ERR_DTYPE "only Tensors of floating
   point dtype can require gradients"; CT_ERR_AUTOGRAD for a non-leaf ("you can only change
   requires_grad flags of leaf variables."). Returns t. Mirrors: Tensor.requires_grad_. */
CTORCH_API ct_tensor *ct_requires_grad_(ct_tensor *t, bool requires_grad);
/* The accumulated gradient of a leaf (or of a non-leaf after ct_retain_grad), NULL before
   the first backward or after zero_grad. Borrowed: owned by t, invalid after
   zero_grad(set_to_none), ct_set_grad or t's end. Mirrors: Tensor.grad. */
CTORCH_API ct_tensor *ct_grad(const ct_tensor *t);
/* Replaces t's .grad (the tensor is retained; NULL clears). grad must have t's dtype, device
   and shape. Invalidates: the old .grad pointer (ct_grad) unless retained.
   Errors: CT_ERR_DTYPE "attempting to assign a gradient with dtype 'Double' to a tensor with
   grad_dtype 'Float'..."; CT_ERR_DEVICE; CT_ERR_SHAPE "attempting to assign a gradient of
   size '[4]' to a tensor of size '[3]'..."; CT_ERR_VALUE "can't assign Variable as its own
   grad". Mirrors: assigning Tensor.grad. */
CTORCH_API ct_status ct_set_grad(ct_tensor *t, ct_tensor *grad);
/* True for tensors without a grad_fn. Mirrors: Tensor.is_leaf. */
CTORCH_API bool ct_is_leaf(const ct_tensor *t);
/* The node that created t, or NULL for leaves (borrowed). Mirrors: Tensor.grad_fn. */
CTORCH_API const ct_node *ct_grad_fn(const ct_tensor *t);
/* PyTorch's name of a node, e.g. "MulBackward0"; NULL for NULL (a leaf's grad_fn), with no
   error, so ct_node_name(ct_grad_fn(t)) is safe. Mirrors: type(grad_fn).__name__. */
CTORCH_API const char *ct_node_name(const ct_node *n);
/* Keeps the gradient of a non-leaf in its .grad during backward. Mirrors:
   Tensor.retain_grad. */
CTORCH_API ct_status ct_retain_grad(ct_tensor *t);
/* A new tensor sharing t's storage with no history (requires_grad false); new tensor,
   owned by the current scope. Mirrors: Tensor.detach. */
CTORCH_API ct_tensor *ct_detach(const ct_tensor *t);
/* Detaches t in place: it becomes a leaf that does not require grad. Mirrors:
   Tensor.detach_. */
CTORCH_API ct_tensor *ct_detach_(ct_tensor *t);

/* Computes the gradient of t with respect to graph leaves and accumulates it into their
   .grad. grad_output has t's shape, or is NULL for a one-element t (gradient 1).
   retain_graph keeps saved tensors for a second backward. Errors: CT_ERR_AUTOGRAD when t
   does not require grad, when grad_output is NULL for a non-scalar ("grad can be implicitly
   created only for scalar outputs"), on a second backward through a freed graph, or when a
   saved tensor was modified in place; CT_ERR_SHAPE for a grad_output of another shape.
   Mirrors: Tensor.backward(gradient, retain_graph). */
CTORCH_API ct_status ct_backward(ct_tensor *t, const ct_tensor *grad_output, bool retain_graph);
/* Computes the gradients of n_tensors roots at once (the sum of tensors[r] weighted by
   grad_tensors[r]; grad_tensors NULL, or an entry NULL, for a one-element root: gradient 1)
   and accumulates them into the .grad of the graph's leaves, or, when inputs is not NULL,
   only into those of inputs[n_inputs] (a non-leaf input is retained with ct_retain_grad, so
   later backwards also fill its .grad, as PyTorch). create_graph records the backward so
   .grad can be differentiated again (.grad becomes .grad + new, out of place) and implies
   retain_graph. n_tensors 0 does nothing. Errors: as ct_backward ("element 1 of tensors
   does not require grad and does not have a grad_fn", "grad can be implicitly created only
   for scalar outputs", CT_ERR_SHAPE "Mismatch in shape: grad_output[0] has a shape of [2]
   and output[0] has a shape of [3]."); CT_ERR_NULL_ARG for NULL tensors; CT_ERR_VALUE
   "`inputs` argument to `backward()` cannot be empty." (inputs with n_inputs 0);
   CT_ERR_AUTOGRAD "can't retain_grad on Tensor that has requires_grad=False" for an input
   that does not require grad. Mirrors: torch.autograd.backward(tensors, grad_tensors,
   retain_graph, create_graph, inputs=inputs). */
CTORCH_API ct_status ct_autograd_backward(ct_tensor *const *tensors, int n_tensors,
                                          const ct_tensor *const *grad_tensors, bool retain_graph,
                                          bool create_graph, ct_tensor *const *inputs,
                                          int n_inputs);
/* Gradients of the sum of outputs (weighted by grad_outputs, which may be NULL for scalar
   outputs) with respect to inputs, written to grads[n_inputs] (new tensors owned by the
   current scope; NULL for an unused input when allow_unused) without touching .grad.
   create_graph records the backward itself so the result can be differentiated again
   (and implies retain_graph). Errors: as ct_backward; CT_ERR_AUTOGRAD "One of the
   differentiated Tensors appears to not have been used in the graph" when !allow_unused.
   Mirrors: torch.autograd.grad. */
CTORCH_API ct_status ct_autograd_grad(ct_tensor *const *outputs, int n_outputs,
                                      ct_tensor *const *inputs, int n_inputs,
                                      const ct_tensor *const *grad_outputs, bool retain_graph,
                                      bool create_graph, bool allow_unused, ct_tensor **grads);

/* A hook called with the gradient of t when it is computed; it may return a replacement
   gradient (a new tensor) or NULL to keep it. */
typedef ct_tensor *(*ct_tensor_hook)(const ct_tensor *grad, void *user);
/* Registers a gradient hook on t (which must require grad). Hooks run in registration
   order. Mirrors: Tensor.register_hook. */
CTORCH_API ct_status ct_register_hook(ct_tensor *t, ct_tensor_hook fn, void *user);
/* A hook called with a leaf t once a backward has accumulated into its .grad (ct_grad(t)). */
typedef void (*ct_post_accumulate_grad_hook)(ct_tensor *t, void *user);
/* Registers a post-accumulate hook on the leaf t, run in registration order after each
   accumulation into t's .grad (not by ct_autograd_grad, which leaves .grad alone).
   Returns: CT_OK. Errors: CT_ERR_AUTOGRAD "cannot register a hook on a tensor that doesn't
   require gradient", "post accumulate grad hooks cannot be registered on non-leaf tensors".
   Mirrors: Tensor.register_post_accumulate_grad_hook. */
CTORCH_API ct_status ct_register_post_accumulate_grad_hook(ct_tensor *t,
                                                           ct_post_accumulate_grad_hook fn,
                                                           void *user);
/* Removes t's gradient hooks (ct_register_hook) and post-accumulate hooks registered with
   user (not from inside one of t's hooks). Returns: how many were removed (0 for none, or -1
   after CT_ERR_NULL_ARG). Mirrors: the RemovableHandle.remove() of those registrations. */
CTORCH_API int ct_remove_hook(ct_tensor *t, const void *user);
/* A function ct_autograd_queue_callback runs at the end of a backward pass. */
typedef void (*ct_autograd_callback_fn)(void *user);
/* Queues fn(user) to run once when the backward pass running now ends, after every gradient
   was computed and accumulated, in queue order (a callback may queue more); an error a
   callback records becomes the backward's. Returns: CT_OK. Errors: CT_ERR_AUTOGRAD "Final
   callbacks can only be installed during backward pass." outside a backward (call it from a
   hook). Mirrors: torch.autograd.Variable._execution_engine.queue_callback. */
CTORCH_API ct_status ct_autograd_queue_callback(ct_autograd_callback_fn fn, void *user);

/* Grad mode (per thread; on by default). ct_no_grad_begin/end nest, up to 64 deep.
   Mirrors: torch.no_grad, torch.set_grad_enabled, torch.is_grad_enabled. */
CTORCH_API void ct_no_grad_begin(void);
CTORCH_API void ct_no_grad_end(void);
CTORCH_API void ct_set_grad_enabled(bool enabled);
CTORCH_API bool ct_is_grad_enabled(void);

/* Inference mode (per thread, nestable): like no-grad (it implies it, and no op records
   history inside even after ct_set_grad_enabled(true)), and tensors made inside (new storage:
   op results, factories, ct_from_blob) are inference tensors, whose views are too; views of
   normal tensors made inside stay normal, and in-place ops inside bump normal tensors'
   versions as usual. Inference tensors skip view tracking. Outside inference mode an
   inference tensor can be read by any op (the result is normal) but: an op recording history
   that saves it for backward fails (CT_ERR_AUTOGRAD "Inference tensors cannot be saved for
   backward. ..."), as does an in-place op on it ("Inplace update to inference tensor outside
   InferenceMode is not allowed. ..."), ct_requires_grad_(t, true) ("Setting requires_grad=True
   on inference tensor outside InferenceMode is not allowed.") and ct_version ("Inference
   tensors do not track version counter."); an in-place op recording history on a view made
   inside inference mode of a tensor that requires grad fails ("A view was created in
   inference mode and is being modified inplace in normal mode. ..."). ct_inference_mode_end
   without a begin does nothing. Mirrors: torch.inference_mode(),
   torch.is_inference_mode_enabled. */
CTORCH_API void ct_inference_mode_begin(void);
CTORCH_API void ct_inference_mode_end(void);
CTORCH_API bool ct_is_inference_mode_enabled(void);
