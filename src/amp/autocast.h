/* amp/autocast.h - automatic mixed precision: autocast regions (torch.autocast).
 *
 * Inside a region opened by ct_autocast_begin on this thread, every op the dispatcher runs
 * on tensors of the region's device type looks itself up in PyTorch's op lists for that
 * device (torch.amp's documentation; the accessors below return them) and casts its floating
 * inputs before it runs:
 *   lower precision ops (mm, linear, conv2d, matmul, ...)  to the region's dtype
 *   float32 ops (cross_entropy_loss, mse_loss, prod, ...)   to float32
 *   promote ops (cat, stack; CUDA: addcmul, dot, ...)      to the widest input dtype
 *                                                           (the region's dtype at least)
 * Other ops run in their inputs' dtypes, so bfloat16 + float32 -> float32 as usual. The
 * eligibility rules are PyTorch's: float64 inputs, non-floating inputs and wrapped C scalars
 * are never cast; in-place ops and calls with an explicit dtype argument (ct_sum's dtype,
 * ct_softmax's dtype) run as they are. The calls an op makes itself (a composite's) run
 * with autocast off, as inside PyTorch's kernels, except in the unlisted ops PyTorch
 * decomposes above autocast (tensordot, einsum, inner, kron, linalg_matrix_power). Casts are ct_to_dtype calls: differentiable, so gradients flow back to
 * each input in its own dtype (a float32 parameter gets a float32 .grad).
 * Weight cache: the cast of a float32 leaf that requires grad (a parameter) to the region's
 * dtype is made once and reused by every op of the region (cache_enabled), then dropped when
 * the outermost region ends, as PyTorch's autocast cache.
 * CUDA state is separate from the CPU's (each device type has its own enabled flag and
 * dtype); CPU autocast casts CPU tensors only.
 * Thread safety: the state is per thread (PyTorch's is thread-local too).
 * Backward: end the region before ct_backward, as PyTorch recommends; backward formulas run
 * in the dtypes the forward chose.
 */

/* Opens an autocast region on this thread: autocast on for device_type with dtype
   (CT_DTYPE_DEFAULT: ct_get_autocast_dtype(device_type), bfloat16 on the CPU and float16 on
   CUDA at the start) and the weight cache on or off; the previous state of device_type and
   the cache flag come back at the matching ct_autocast_end. Regions nest (up to 64); a
   region inside may change the dtype, or turn autocast off with ct_set_autocast_enabled
   (torch.autocast(..., enabled=False)).
   Errors (the region is still opened, disabled, so that ct_autocast_end balances it, as
   PyTorch warns and disables): CT_ERR_DTYPE "In CPU autocast, but the target dtype is not
   supported. Disabling autocast.\nCPU Autocast only supports dtypes of torch.bfloat16,
   torch.float16 currently." for another CPU dtype (float64, float32, integers); CT_ERR_DEVICE
   "CUDA is not available or torch_xla is imported. Disabling autocast." for CT_CUDA without a
   registered CUDA backend (or a CUDA dtype other than float16/bfloat16: CT_ERR_DTYPE as the
   CPU's, with CUDA). Not opened: CT_ERR_VALUE "User specified an unsupported autocast
   device_type 'privateuseone'" for other device types, CT_ERR_VALUE for an invalid dtype,
   CT_ERR_STATE past 64 nested regions.
   Mirrors: torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None).__enter__
   (and torch.cpu.amp.autocast / torch.cuda.amp.autocast). */
CTORCH_API ct_status ct_autocast_begin(ct_device_type device_type, ct_dtype dtype,
                                       bool cache_enabled);
/* Closes the innermost region: restores the state ct_autocast_begin saved; the outermost
   end drops the weight cache. Errors: CT_ERR_STATE "no autocast region is open".
   Mirrors: torch.autocast.__exit__. */
CTORCH_API ct_status ct_autocast_end(void);
/* Whether autocast is on for device_type on this thread (false for other device types).
   Mirrors: torch.is_autocast_enabled(device_type). */
CTORCH_API bool ct_is_autocast_enabled(ct_device_type device_type);
/* Turns autocast on or off for device_type on this thread until the enclosing region ends
   (outside any region: until changed again). Errors: CT_ERR_VALUE for a device type other
   than CT_CPU and CT_CUDA. Mirrors: torch.set_autocast_enabled(device_type, enabled). */
CTORCH_API ct_status ct_set_autocast_enabled(ct_device_type device_type, bool enabled);
/* The dtype autocast runs lower precision ops in for device_type on this thread: bfloat16
   for CT_CPU and float16 for CT_CUDA unless set; CT_DTYPE_DEFAULT for other device types.
   Mirrors: torch.get_autocast_dtype(device_type). */
CTORCH_API ct_dtype ct_get_autocast_dtype(ct_device_type device_type);
/* Sets that dtype (used by regions opened with CT_DTYPE_DEFAULT, and by the current one).
   Errors: CT_ERR_VALUE for another device type or an invalid dtype (CT_DTYPE_DEFAULT
   included). Mirrors: torch.set_autocast_dtype(device_type, dtype). */
CTORCH_API ct_status ct_set_autocast_dtype(ct_device_type device_type, ct_dtype dtype);
/* Whether autocast supports device_type: true for CT_CPU and CT_CUDA (with or without a CUDA
   device, as PyTorch). Mirrors: torch.amp.is_autocast_available(device_type). */
CTORCH_API bool ct_is_autocast_available(ct_device_type device_type);
/* The category of the op named op ("aten::mm", "mm" or "ctorch::linear_relu") in
   device_type's lists: CT_AUTOCAST_LOWER_PRECISION, CT_AUTOCAST_FP32, CT_AUTOCAST_PROMOTE,
   or CT_AUTOCAST_NONE (unlisted ops, NULL, other device types). ctorch ops that PyTorch
   reaches through a listed op take its category: aten::convolution (every ct_conv* and
   ct_conv_transpose*) as conv2d, ctorch::linear_relu as linear, aten::native_layer_norm as
   layer_norm, aten::cross_entropy_loss as CUDA's cross_entropy, aten::linalg_multi_dot as
   multi_dot; an op descriptor outside the lists may declare its own (ct_op.autocast).
   Mirrors: the eligibility rules and op lists of torch.amp (autocast_mode.cpp). */
CTORCH_API ct_autocast_category ct_autocast_policy(ct_device_type device_type, const char *op);
/* PyTorch's op lists as its documentation names them (static strings; *n receives the count,
   n may be NULL): CPU (bfloat16 and float16 alike) lower precision (20), float32 (90: the
   documentation's 91 without its repeated "inverse"), promote (3); CUDA lower precision (23),
   float32 (51), promote (10). Mirrors: the tables of torch.amp's "Autocast Op Reference". */
CTORCH_API const char *const *ct_autocast_cpu_lower_ops(int *n);
CTORCH_API const char *const *ct_autocast_cpu_fp32_ops(int *n);
CTORCH_API const char *const *ct_autocast_cpu_promote_ops(int *n);
CTORCH_API const char *const *ct_autocast_cuda_lower_ops(int *n);
CTORCH_API const char *const *ct_autocast_cuda_fp32_ops(int *n);
CTORCH_API const char *const *ct_autocast_cuda_promote_ops(int *n);
