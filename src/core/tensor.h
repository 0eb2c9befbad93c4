/* core/tensor.h - the tensor object: a strided view of a refcounted storage.
 *
 * Definitions: sizes are outermost first (PyTorch order); strides count elements; a tensor
 * is contiguous when its strides are row-major (size-1 dims' strides ignored); a view
 * shares its base's storage; every tensor an op returns belongs to the innermost open
 * scope (core/scope.h), or to the caller (ct_free) when no scope is open.
 */
typedef struct ct_tensor ct_tensor;
typedef struct ct_storage ct_storage;

/* ---- lifetime ----------------------------------------------------------------------- */
/* Releases the caller's reference: removes t from its scope if it is in one, and frees it
   when nothing else (a view's autograd graph, a module, a .grad field) refers to it.
   Invalidates: t, and pointers borrowed from it (ct_sizes, ct_data_ptr, ct_grad), when it
   was the last reference. Only for tensors the caller owns (an op's result): never for a
   borrowed one (a parameter, a .grad); CTORCH_DEBUG reports that and double frees.
   NULL is a no-op. Mirrors: dropping the last Python reference. */
CTORCH_API void ct_free(ct_tensor *t);
/* Adds a reference (to keep t beyond the end of its scope, e.g. in your own structures);
   drop it with ct_release. Returns t; NULL is a no-op. */
CTORCH_API ct_tensor *ct_retain(ct_tensor *t);
/* Drops a reference taken with ct_retain, without touching t's scope; frees t when it was
   the last (invalidating t and pointers borrowed from it). NULL is a no-op. */
CTORCH_API void ct_release(ct_tensor *t);

/* Aliases of ct_free and ct_retain under ../shared/API.md's names (ct_free and ct_retain
   are the main names). */
#define ct_tensor_free ct_free
#define ct_tensor_retain ct_retain

/* ---- attributes ---------------------------------------------------------------------
 * Given NULL, each returns its "for NULL" value (-1, 0, NULL, false, CT_DTYPE_DEFAULT)
 * and records CT_ERR_NULL_ARG unless an error is pending. */
/* Number of dimensions (0 for a scalar); -1 for NULL. Mirrors: Tensor.dim. */
CTORCH_API int ct_dim(const ct_tensor *t);
/* Size of dimension dim (negative counts from the end); -1 + CT_ERR_INDEX when out of
   range. Mirrors: Tensor.size(dim). */
CTORCH_API int64_t ct_size(const ct_tensor *t, int64_t dim);
/* Pointer to the ndim sizes (borrowed, valid while t lives). Mirrors: Tensor.shape. */
CTORCH_API const int64_t *ct_sizes(const ct_tensor *t);
/* Stride of dim in elements; -1 + CT_ERR_INDEX when out of range. Mirrors: Tensor.stride. */
CTORCH_API int64_t ct_stride(const ct_tensor *t, int64_t dim);
/* Pointer to the ndim strides in elements (borrowed). */
CTORCH_API const int64_t *ct_strides(const ct_tensor *t);
/* Offset of element 0 in the storage, in elements. Mirrors: Tensor.storage_offset. */
CTORCH_API int64_t ct_storage_offset(const ct_tensor *t);
/* Number of elements (1 for a scalar); 0 for NULL. Mirrors: Tensor.numel. */
CTORCH_API int64_t ct_numel(const ct_tensor *t);
/* The element type. Mirrors: Tensor.dtype. */
CTORCH_API ct_dtype ct_tensor_dtype(const ct_tensor *t);
/* The device. Mirrors: Tensor.device. */
CTORCH_API ct_device ct_tensor_device(const ct_tensor *t);
/* Whether t's memory is page-locked host memory (ct_pin_memory, a DataLoader with
   pin_memory); false for device tensors and NULL (CT_ERR_NULL_ARG).
   Mirrors: Tensor.is_pinned. */
CTORCH_API bool ct_is_pinned(const ct_tensor *t);
/* Bytes per element. Mirrors: Tensor.element_size. */
CTORCH_API size_t ct_element_size(const ct_tensor *t);
/* numel * element_size. Mirrors: Tensor.nbytes. */
CTORCH_API size_t ct_nbytes(const ct_tensor *t);
/* Address of element 0 (CPU tensors); write through it only to contiguous tensors you
   own. Mirrors: Tensor.data_ptr. */
CTORCH_API void *ct_data_ptr(const ct_tensor *t);
/* Whether strides are row-major for the sizes (size-1 dims ignored).
   Mirrors: Tensor.is_contiguous. */
CTORCH_API bool ct_is_contiguous(const ct_tensor *t);
/* Mirrors: Tensor.is_floating_point. */
CTORCH_API bool ct_is_floating_point(const ct_tensor *t);
/* True for signed dtypes (int8..int64, floats); false for bool and uint8 (and NULL).
   Mirrors: Tensor.is_signed. */
CTORCH_API bool ct_is_signed(const ct_tensor *t);
/* The version counter, incremented by each in-place op on t or a view of it. Errors:
   CT_ERR_AUTOGRAD "Inference tensors do not track version counter." for a tensor made in
   inference mode (returns 0). Mirrors: Tensor._version. */
CTORCH_API uint32_t ct_version(const ct_tensor *t);
/* The value of a one-element tensor as a double (int64 values above 2^53 round).
   Errors: CT_ERR_VALUE (returns NAN) when numel != 1: "a Tensor with N elements cannot be
   converted to Scalar". A tensor on another device is read through its backend's copy.
   Mirrors: Tensor.item. */
CTORCH_API double ct_item(const ct_tensor *t);
/* ct_item for integer tensors, exact. Returns 0 on error. */
CTORCH_API int64_t ct_item_int64(const ct_tensor *t);

/* Memory formats: the order of a tensor's strides. Mirrors: torch.memory_format. */
typedef enum ct_memory_format {
    CT_CONTIGUOUS_FORMAT = 0, /* row-major: torch.contiguous_format */
    CT_CHANNELS_LAST,         /* 4-D (N, C, H, W) with strides ordered N > H > W > C == 1 */
    CT_CHANNELS_LAST_3D,      /* 5-D (N, C, D, H, W) with strides ordered N > D > H > W > C */
    CT_PRESERVE_FORMAT        /* keep the input's layout (contiguity checks read it as row-major) */
} ct_memory_format;
/* Whether t's strides are those of format for its sizes (size-1 dims ignored); false for
   channels_last on a tensor that is not 4-D (5-D for channels_last_3d). PRESERVE checks
   row-major, as PyTorch. Errors: CT_ERR_VALUE for a value outside ct_memory_format.
   Mirrors: Tensor.is_contiguous(memory_format=...). */
CTORCH_API bool ct_is_contiguous_memory_format(const ct_tensor *t, ct_memory_format format);

/* The storage t views (borrowed: valid while t or another tensor over it lives); NULL for
   NULL. Mirrors: Tensor.untyped_storage. */
CTORCH_API ct_storage *ct_untyped_storage(const ct_tensor *t);
/* The storage's size in bytes; 0 for NULL. Mirrors: UntypedStorage.nbytes. */
CTORCH_API size_t ct_storage_nbytes(const ct_storage *s);
/* The storage's first byte (device memory for a storage on another device); NULL for NULL.
   Mirrors: UntypedStorage.data_ptr. */
CTORCH_API void *ct_storage_data_ptr(const ct_storage *s);
/* Makes self view source (retained) from storage_offset (elements of self's dtype) with the
   given sizes and strides, keeping its dtype; other tensors over self's old storage keep it.
   t.set_(other) is ct_set_(t, ct_untyped_storage(other), ct_storage_offset(other),
   ct_sizes(other), ct_strides(other), ct_dim(other)). Returns self, or NULL after an error.
   Errors: CT_ERR_VALUE "Tensor: invalid storage offset -1", "setStorage: sizes [2, 3],
   strides [1, 2], storage offset 1, and itemsize 4 requiring a storage size of 28 are out of
   bounds for storage of size 24" (PyTorch grows resizable storages instead), negative
   strides; CT_ERR_SHAPE for sizes; CT_ERR_DEVICE for a storage on another device;
   CT_ERR_AUTOGRAD for a leaf requiring grad ("a leaf Variable that requires grad is being used
   in an in-place operation."). Mirrors: Tensor.set_(source, storage_offset, size, stride). */
CTORCH_API ct_tensor *ct_set_(ct_tensor *self, ct_storage *source, int64_t storage_offset,
                              const int64_t *sizes, const int64_t *strides, int ndim);
/* Whether t and other view the same storage with the same offset, sizes and strides.
   Mirrors: Tensor.is_set_to. */
CTORCH_API bool ct_is_set_to(const ct_tensor *t, const ct_tensor *other);

/* Whether a one-element tensor is nonzero (NaN is). Errors (return false): CT_ERR_VALUE
   "Boolean value of Tensor with no values is ambiguous", "Boolean value of Tensor with more
   than one value is ambiguous". Mirrors: torch.is_nonzero. */
CTORCH_API bool ct_is_nonzero(const ct_tensor *t);
/* Element callbacks (CPU tensors, any strides; slow, as PyTorch's: one call per element, in
   row-major order, on the calling thread). Each element is read as a double and the result
   written back in t's dtype (as ct_full converts: integers truncate; int64 beyond 2^53 rounds).
   ct_apply_: t[i] = fn(t[i], user). ct_map_: t[i] = fn(t[i], other[i], user) with other (of
   t's dtype) broadcast to t's shape. Returns t (the version counter counts the write), NULL
   after an error. Errors: CT_ERR_AUTOGRAD "Can't call apply_() on Variable that requires grad.
   Use var.detach().apply_() instead." (map_: when either requires grad); CT_ERR_DEVICE
   "apply_ is only implemented on CPU tensors"; CT_ERR_DTYPE "map_: expected torch.FloatTensor
   for 'other' (got torch.DoubleTensor)"; CT_ERR_SHAPE from broadcasting (as ct_expand).
   Mirrors: Tensor.apply_ / Tensor.map_. */
CTORCH_API ct_tensor *ct_apply_(ct_tensor *t, double (*fn)(double x, void *user), void *user);
CTORCH_API ct_tensor *ct_map_(ct_tensor *t, const ct_tensor *other,
                              double (*fn)(double x, double y, void *user), void *user);

/* The device that creation functions without tensor inputs (ct_zeros, ct_arange, ct_rand...)
   put their results on; CPU until set. Per thread, as PyTorch's. Errors: CT_ERR_VALUE for a
   type outside ct_device_type or a negative index; CT_ERR_DEVICE "no backend is registered
   for device privateuseone:0" (nothing changed). Mirrors: torch.set_default_device. */
CTORCH_API ct_status ct_set_default_device(ct_device device);
/* Mirrors: torch.get_default_device. */
CTORCH_API ct_device ct_get_default_device(void);

/* ---- creation (new tensor, owned by the current scope) -------------------------------
 * sizes: ndim (0..CT_MAX_DIMS) non-negative sizes; sizes may be NULL when ndim is 0. A
 * tensor with a zero size allocates nothing, however large its other sizes.
 * dtype: CT_DTYPE_DEFAULT means the default float dtype.
 * Errors: CT_ERR_SHAPE for negative sizes or ndim out of range; CT_ERR_OOM; CT_ERR_VALUE for
 * a dtype outside ct_dtype ("99 is not a valid value for dtype").
 * Each is a factory op through the dispatcher (aten::empty, aten::zeros, ... aten::tensor for
 * ct_tensor_from_data): hooks and the profiler see it; ct_from_blob runs no kernel. */

/* Uninitialized memory. Mirrors: torch.empty. */
CTORCH_API ct_tensor *ct_empty(const int64_t *sizes, int ndim, ct_dtype dtype);
/* Mirrors: torch.zeros. */
CTORCH_API ct_tensor *ct_zeros(const int64_t *sizes, int ndim, ct_dtype dtype);
/* Mirrors: torch.ones. */
CTORCH_API ct_tensor *ct_ones(const int64_t *sizes, int ndim, ct_dtype dtype);
/* Every element value. Errors: CT_ERR_VALUE when value does not fit dtype, in PyTorch's
   words ("value cannot be converted to type int without overflow"): integers take
   [min, max + 1) (fractions truncate) and no NaN or infinity, float32 takes NaN, infinities
   and magnitudes up to FLT_MAX. Mirrors: torch.full. */
CTORCH_API ct_tensor *ct_full(const int64_t *sizes, int ndim, double value, ct_dtype dtype);
/* A 0-dim tensor holding value. Mirrors: torch.scalar_tensor. */
CTORCH_API ct_tensor *ct_scalar_tensor(double value, ct_dtype dtype);
/* Same shape, dtype and device as t (an op of t's device). Mirrors: torch.empty_like /
   zeros_like / ones_like / full_like. */
CTORCH_API ct_tensor *ct_empty_like(const ct_tensor *t);
CTORCH_API ct_tensor *ct_zeros_like(const ct_tensor *t);
CTORCH_API ct_tensor *ct_ones_like(const ct_tensor *t);
CTORCH_API ct_tensor *ct_full_like(const ct_tensor *t, double value);
/* Copies numel(sizes) elements of dtype from data (row-major). A leaf with no history.
   Errors: CT_ERR_NULL_ARG when data is NULL and the tensor is not empty.
   Mirrors: torch.tensor. */
CTORCH_API ct_tensor *ct_tensor_from_data(const void *data, ct_dtype dtype,
                                          const int64_t *sizes, int ndim);
/* Wraps caller memory without copying (borrows data, which must stay valid until
   deleter(data, ctx) is called when the last view dies; deleter may be NULL).
   Mirrors: torch.from_numpy / torch.frombuffer. */
CTORCH_API ct_tensor *ct_from_blob(void *data, ct_dtype dtype, const int64_t *sizes, int ndim,
                                   void (*deleter)(void *data, void *ctx), void *ctx);
/* Values start, start+step, ... < end: ceil((end-start)/step) elements.
   dtype DEFAULT gives the default float dtype (pass CT_INT64 for PyTorch's integer form).
   Integer dtypes count in int64 from the truncated start and step (which must fit int64)
   and wrap into dtype, as PyTorch. Errors: CT_ERR_VALUE "step must be finite but got nan",
   "step must be nonzero", "unsupported range: 0 -> nan" (start or end not finite), "upper
   bound and lower bound inconsistent with step sign", "invalid size, possible overflow?";
   CT_ERR_DTYPE for bool. Mirrors: torch.arange. */
CTORCH_API ct_tensor *ct_arange(double start, double end, double step, ct_dtype dtype);
/* steps values from start to end inclusive. Errors: CT_ERR_VALUE for steps < 0 and when
   start or end does not fit dtype (as ct_full); CT_ERR_DTYPE for bool.
   Mirrors: torch.linspace. */
CTORCH_API ct_tensor *ct_linspace(double start, double end, int64_t steps, ct_dtype dtype);
/* (n, m) with ones on the diagonal; m < 0 means m = n. Mirrors: torch.eye. */
CTORCH_API ct_tensor *ct_eye(int64_t n, int64_t m, ct_dtype dtype);
/* steps values base^x for x from start to end inclusive, computed as PyTorch's CPU kernel
   (start and end in dtype, the exponent in double, the power cast to dtype: integer dtypes
   truncate). PyTorch's default base is 10. Errors: as ct_linspace.
   Mirrors: torch.logspace. */
CTORCH_API ct_tensor *ct_logspace(double start, double end, int64_t steps, double base,
                                  ct_dtype dtype);
/* Uninitialized memory with the given strides (elements; 0 repeats an element): the storage
   holds 1 + sum((sizes[i] - 1) * strides[i]) elements (none when a size is 0).
   Errors: as ct_empty; CT_ERR_VALUE "Storage size calculation overflowed with sizes=[2, 3]
   and strides=[-1, 1]" for negative strides or a storage beyond int64.
   Mirrors: torch.empty_strided. */
CTORCH_API ct_tensor *ct_empty_strided(const int64_t *sizes, const int64_t *strides, int ndim,
                                       ct_dtype dtype);
/* Tensors of the given sizes on self's device, of dtype (CT_DTYPE_DEFAULT: self's dtype, not
   the default float dtype); self's values and autograd state play no part. Errors: as
   ct_empty and ct_full. Mirrors: Tensor.new_empty / new_zeros / new_ones / new_full. */
CTORCH_API ct_tensor *ct_new_empty(const ct_tensor *self, const int64_t *sizes, int ndim,
                                   ct_dtype dtype);
CTORCH_API ct_tensor *ct_new_zeros(const ct_tensor *self, const int64_t *sizes, int ndim,
                                   ct_dtype dtype);
CTORCH_API ct_tensor *ct_new_ones(const ct_tensor *self, const int64_t *sizes, int ndim,
                                  ct_dtype dtype);
CTORCH_API ct_tensor *ct_new_full(const ct_tensor *self, const int64_t *sizes, int ndim,
                                  double value, ct_dtype dtype);
/* The (2, N) row and column indices of the N elements of the lower (tril: column - row <=
   offset) or upper (triu: column - row >= offset) triangle of a row x col matrix, in row-major
   order. dtype: CT_DTYPE_DEFAULT (int64) or int32/int64. Errors: CT_ERR_VALUE "row must be
   non-negative, got-1" (PyTorch's spacing), same for col; CT_ERR_DTYPE "\"tril_indices\" not
   implemented for 'Float'". Mirrors: torch.tril_indices / torch.triu_indices. */
CTORCH_API ct_tensor *ct_tril_indices(int64_t row, int64_t col, int64_t offset, ct_dtype dtype);
CTORCH_API ct_tensor *ct_triu_indices(int64_t row, int64_t col, int64_t offset, ct_dtype dtype);
