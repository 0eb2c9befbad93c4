/* ops/creation.h - creation built from other ops (meshgrid, contiguous in a memory format)
 * and zero-copy exchange with other libraries through DLPack.
 */

/* Coordinate grids: out[i] (owned by the current scope) is tensors[i] (0-D or 1-D, all of one
   dtype and device) viewed along dimension i and expanded to the grid of sizes (numel of
   tensors[0], ..., numel of tensors[n-1]): a view sharing tensors[i]'s storage, as PyTorch
   (grad_fn ExpandBackward0). indexing "ij" (matrix; NULL means "ij", PyTorch's default) or
   "xy" (Cartesian: the grid's first two dimensions swap). Returns CT_OK;
   errors (out untouched): CT_ERR_VALUE "meshgrid expects a non-empty TensorList" (n < 1),
   "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: foo";
   CT_ERR_SHAPE "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a 2-D
   tensor"; CT_ERR_DTYPE "meshgrid expects all tensors to have the same dtype"; CT_ERR_DEVICE
   "meshgrid expects all tensors to have the same device". Mirrors: torch.meshgrid. */
CTORCH_API ct_status ct_meshgrid(const ct_tensor *const *tensors, int n, const char *indexing,
                                 ct_tensor **out);

/* t itself (one more reference, owned by the current scope) when its strides already follow
   format, else a copy laid out in format: CT_CONTIGUOUS_FORMAT row-major, CT_CHANNELS_LAST
   strides ordered N > H > W > C (4-D), CT_CHANNELS_LAST_3D N > D > H > W > C (5-D).
   Gradient flows back (PyTorch names the node CloneBackward0; here it is the permutes' and
   the copy's). Errors: CT_ERR_SHAPE "required rank 4 tensor to use channels_last format"
   (rank 5 for channels_last_3d); CT_ERR_VALUE "preserve memory format is unsupported by the
   contiguous operator" (for a tensor that is not row-major) and values outside
   ct_memory_format. Mirrors: Tensor.contiguous(memory_format=...). */
CTORCH_API ct_tensor *ct_contiguous_memory_format(const ct_tensor *t, ct_memory_format format);

/* ---- DLPack (v0.8 ABI) ------------------------------------------------------------------
 * The four types below have exactly the layout of dlpack.h's DLDevice, DLDataType, DLTensor
 * and DLManagedTensor (DLPack 0.8; ctorch does not include dlpack.h, so its names cannot
 * clash): cast a DLManagedTensor * to ct_dlpack_managed_tensor * and back. On LP64
 * systems: device 8 bytes, dtype 4, tensor 48 (data 0, device 8, ndim 16, dtype 20, shape 24,
 * strides 32, byte_offset 40), managed tensor 64 (manager_ctx 48, deleter 56). */
enum {
    CT_DLPACK_CPU = 1,      /* kDLCPU */
    CT_DLPACK_CUDA = 2,     /* kDLCUDA */
    CT_DLPACK_CUDA_HOST = 3 /* kDLCUDAHost: pinned host memory, read as CPU memory */
};
enum {
    CT_DLPACK_INT = 0,    /* kDLInt */
    CT_DLPACK_UINT = 1,   /* kDLUInt */
    CT_DLPACK_FLOAT = 2,  /* kDLFloat */
    CT_DLPACK_BFLOAT = 4, /* kDLBfloat */
    CT_DLPACK_BOOL = 6    /* kDLBool */
};
typedef struct ct_dlpack_device {
    int32_t device_type; /* CT_DLPACK_CPU ... (DLDeviceType, an int-sized enum) */
    int32_t device_id;   /* ordinal; 0 for the CPU */
} ct_dlpack_device;
typedef struct ct_dlpack_dtype {
    uint8_t code;   /* CT_DLPACK_INT ... */
    uint8_t bits;   /* bits per lane: 8, 16, 32, 64 */
    uint16_t lanes; /* 1: no vector types */
} ct_dlpack_dtype;
typedef struct ct_dlpack_tensor {
    void *data; /* element 0 is at (char *)data + byte_offset */
    ct_dlpack_device device;
    int32_t ndim;
    ct_dlpack_dtype dtype;
    int64_t *shape;       /* ndim sizes */
    int64_t *strides;     /* ndim strides in elements; NULL means row-major */
    uint64_t byte_offset; /* bytes from data to element 0 */
} ct_dlpack_tensor;
typedef struct ct_dlpack_managed_tensor {
    ct_dlpack_tensor dl_tensor;
    void *manager_ctx; /* the producer's */
    /* Called once by the consumer when it no longer needs the memory; may be NULL. */
    void (*deleter)(struct ct_dlpack_managed_tensor *self);
} ct_dlpack_managed_tensor;

/* A tensor over m's memory, without copying (zero-copy: writes show on both sides). Takes
   ownership of m on success: m->deleter(m) runs once, when the last tensor or view over the
   memory is freed. On error m stays the caller's (nothing is called). CPU memory
   (CT_DLPACK_CPU, CT_DLPACK_CUDA_HOST) of bool, uint8, int8..int64, float16 (kDLFloat, 16
   bits), bfloat16 (kDLBfloat, 16 bits), float32 or float64 with lanes 1 and non-negative
   strides. Returns: new tensor, owned by the current scope.
   Errors: CT_ERR_DEVICE "Unsupported device_type: 2"; CT_ERR_DTYPE "Unsupported kUInt bits
   16", "Unsupported code 5", "ATen does not support lanes != 1"; CT_ERR_SHAPE for ndim or
   sizes out of range and negative strides. Mirrors: torch.from_dlpack /
   torch.utils.dlpack.from_dlpack. */
CTORCH_API ct_tensor *ct_from_dlpack(ct_dlpack_managed_tensor *m);
/* A DLPack view of t (a CPU tensor; zero-copy: data is t's element 0, byte_offset 0, shape and
   strides t's, owned by the result). The result keeps t's storage alive until the consumer
   calls its deleter (exactly once); t may be freed before that. Returns: a new managed
   tensor, or NULL after an error. Errors: CT_ERR_AUTOGRAD "Can't export tensors that require
   gradient, use tensor.detach()"; CT_ERR_DEVICE for a tensor not on the CPU; CT_ERR_OOM.
   Mirrors: torch.utils.dlpack.to_dlpack / Tensor.__dlpack__. */
CTORCH_API ct_dlpack_managed_tensor *ct_to_dlpack(const ct_tensor *t);
