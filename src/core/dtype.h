/* core/dtype.h - element types, devices and PyTorch's type promotion. */

/* Element types (torch.dtype). CT_DTYPE_DEFAULT (0) means "the default dtype" wherever a
   dtype argument is accepted: float32 unless ct_set_default_dtype changed it. */
typedef enum ct_dtype {
    CT_DTYPE_DEFAULT = 0,
    CT_BOOL,    /* torch.bool, 1 byte, 0 or 1 */
    CT_UINT8,   /* torch.uint8 (byte) */
    CT_INT8,    /* torch.int8 (char) */
    CT_INT16,   /* torch.int16 (short) */
    CT_INT32,   /* torch.int32 (int) */
    CT_INT64,   /* torch.int64 (long) */
    CT_FLOAT32, /* torch.float32 (float) */
    CT_FLOAT64, /* torch.float64 (double) */
    CT_DTYPE_COUNT
} ct_dtype;

/* Device kinds (torch.device). Only CT_CPU is built into ctorch.h; ctorch_cuda.h registers
   the CUDA backend, and CT_PRIVATEUSE1 takes a backend of the application's own
   (ct_backend_register), as PyTorch's "privateuseone". */
typedef enum ct_device_type {
    CT_CPU = 0,
    CT_CUDA = 1,
    CT_PRIVATEUSE1 = 2,
    CT_DEVICE_TYPE_COUNT
} ct_device_type;
typedef struct ct_device {
    ct_device_type type;
    int index; /* ordinal for CT_CUDA and CT_PRIVATEUSE1; 0 for CT_CPU */
} ct_device;

/* The CPU device. Mirrors: torch.device("cpu"). */
CTORCH_API ct_device ct_device_cpu(void);
/* The device of a type and ordinal (index < 0 means 0). Mirrors: torch.device(type, index). */
CTORCH_API ct_device ct_make_device(ct_device_type type, int index);

/* PyTorch's name of a dtype, e.g. "float32"; "invalid" for other values. */
CTORCH_API const char *ct_dtype_name(ct_dtype dtype);
/* Bytes per element (1, 2, 4 or 8); 0 for an invalid dtype. Mirrors: dtype.itemsize. */
CTORCH_API size_t ct_dtype_size(ct_dtype dtype);
/* True for float32 and float64. Mirrors: dtype.is_floating_point. */
CTORCH_API bool ct_dtype_is_floating_point(ct_dtype dtype);
/* True for signed types (int8..int64, floats). Mirrors: dtype.is_signed. */
CTORCH_API bool ct_dtype_is_signed(ct_dtype dtype);
/* The dtype with the smallest size and kind not smaller nor of lower kind than either
   (bool < integers < floats; uint8 + int8 -> int16). Errors: CT_ERR_VALUE (returns
   CT_DTYPE_DEFAULT) for a value outside ct_dtype. Mirrors: torch.promote_types. */
CTORCH_API ct_dtype ct_promote_types(ct_dtype a, ct_dtype b);
/* Whether a result of dtype `from` may be written into an output of dtype `to` (no float
   into integer, no non-bool into bool). Errors: CT_ERR_VALUE (returns false) for a value
   outside ct_dtype. Mirrors: torch.can_cast. */
CTORCH_API bool ct_can_cast(ct_dtype from, ct_dtype to);
/* Sets the dtype that float creation functions and float scalars use; float32 or float64.
   Returns CT_ERR_DTYPE for other dtypes, CT_ERR_VALUE for values outside ct_dtype.
   Mirrors: torch.set_default_dtype. */
CTORCH_API ct_status ct_set_default_dtype(ct_dtype dtype);
/* Mirrors: torch.get_default_dtype. */
CTORCH_API ct_dtype ct_get_default_dtype(void);
