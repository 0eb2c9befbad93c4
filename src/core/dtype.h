/* core/dtype.h - element types, devices, PyTorch's type promotion, float16/bfloat16 storage
 * conversions and torch.finfo/iinfo. */

/* Element types (torch.dtype). CT_DTYPE_DEFAULT (0) means "the default dtype" wherever a
   dtype argument is accepted: float32 unless ct_set_default_dtype changed it. float16 and
   bfloat16 are storage types (uint16_t bit patterns, converted with ct_float_to_half ...):
   CPU kernels compute them in float32 and round once per output element, as PyTorch's. */
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
    CT_FLOAT16, /* torch.float16 (half): IEEE binary16, 1 sign, 5 exponent, 10 mantissa bits */
    CT_BFLOAT16, /* torch.bfloat16: the upper 16 bits of a float32 (8 exponent bits) */
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

/* PyTorch's name of a dtype, e.g. "float32", "bfloat16"; "invalid" for other values. */
CTORCH_API const char *ct_dtype_name(ct_dtype dtype);
/* Bytes per element (1, 2, 4 or 8); 0 for an invalid dtype. Mirrors: dtype.itemsize. */
CTORCH_API size_t ct_dtype_size(ct_dtype dtype);
/* True for float16, bfloat16, float32 and float64. Mirrors: dtype.is_floating_point. */
CTORCH_API bool ct_dtype_is_floating_point(ct_dtype dtype);
/* True for signed types (int8..int64, floats). Mirrors: dtype.is_signed. */
CTORCH_API bool ct_dtype_is_signed(ct_dtype dtype);
/* The dtype with the smallest size and kind not smaller nor of lower kind than either
   (bool < integers < floats; uint8 + int8 -> int16; float16 + bfloat16 -> float32). Errors:
   CT_ERR_VALUE (returns CT_DTYPE_DEFAULT) for a value outside ct_dtype.
   Mirrors: torch.promote_types. */
CTORCH_API ct_dtype ct_promote_types(ct_dtype a, ct_dtype b);
/* Whether a result of dtype `from` may be written into an output of dtype `to` (no float
   into integer, no non-bool into bool). Errors: CT_ERR_VALUE (returns false) for a value
   outside ct_dtype. Mirrors: torch.can_cast. */
CTORCH_API bool ct_can_cast(ct_dtype from, ct_dtype to);
/* Sets the dtype that float creation functions and float scalars use (a floating dtype).
   Returns CT_ERR_DTYPE for other dtypes, CT_ERR_VALUE for values outside ct_dtype.
   Mirrors: torch.set_default_dtype. */
CTORCH_API ct_status ct_set_default_dtype(ct_dtype dtype);
/* Mirrors: torch.get_default_dtype. */
CTORCH_API ct_dtype ct_get_default_dtype(void);

/* float32 -> float16 bits, rounding to nearest even: overflow gives +-inf, values below the
   smallest subnormal (2^-24) round to +-0 or it, NaN gives a quiet NaN of the same sign
   (0x7e00 | sign: the payload is not kept). Independent of the flush-to-zero mode.
   Mirrors: c10::Half(float), torch.tensor(x).half(). */
CTORCH_API uint16_t ct_float_to_half(float value);
/* float16 bits -> float32, exact (subnormals included; a NaN stays NaN, quieted, with its
   payload shifted into the upper mantissa bits). Mirrors: float(c10::Half). */
CTORCH_API float ct_half_to_float(uint16_t bits);
/* float32 -> bfloat16 bits, rounding to nearest even (float32 subnormals are kept, as
   PyTorch's; overflow gives +-inf; NaN gives 0x7fc0). Mirrors: c10::BFloat16(float). */
CTORCH_API uint16_t ct_float_to_bfloat16(float value);
/* bfloat16 bits -> float32, exact (the bits are the upper half of the float32).
   Mirrors: float(c10::BFloat16). */
CTORCH_API float ct_bfloat16_to_float(uint16_t bits);

/* The numerical properties of a floating dtype (torch.finfo). */
typedef struct ct_float_info {
    ct_dtype dtype;
    int bits;          /* storage bits: 16, 32 or 64 */
    double eps;        /* the difference between 1.0 and the next representable number */
    double max;        /* the largest finite value */
    double min;        /* the most negative finite value (-max) */
    double tiny;       /* the smallest positive normal number (= smallest_normal) */
    double smallest_normal;
    double resolution; /* 10^-digits, digits = the decimal digits of precision */
} ct_float_info;
/* torch.finfo(dtype) for float16, bfloat16, float32 or float64 (CT_DTYPE_DEFAULT: the
   default dtype). Errors: CT_ERR_DTYPE for another dtype ("torch.finfo() requires a floating
   point input type. Use torch.iinfo to handle 'torch.finfo'"), CT_ERR_VALUE for a value
   outside ct_dtype; both return a zeroed struct (bits 0). Mirrors: torch.finfo. */
CTORCH_API ct_float_info ct_finfo(ct_dtype dtype);
/* The range of an integer dtype (torch.iinfo). */
typedef struct ct_int_info {
    ct_dtype dtype;
    int bits;    /* 8, 16, 32 or 64 */
    int64_t min; /* the smallest value */
    int64_t max; /* the largest value */
} ct_int_info;
/* torch.iinfo(dtype) for uint8, int8, int16, int32 or int64. Errors: CT_ERR_DTYPE for bool
   ("torch.bool is not supported by torch.iinfo") and floating dtypes ("torch.iinfo() requires
   an integer input type. Use torch.finfo to handle 'torch.iinfo'"), CT_ERR_VALUE for a value
   outside ct_dtype; both return a zeroed struct (bits 0). Mirrors: torch.iinfo. */
CTORCH_API ct_int_info ct_iinfo(ct_dtype dtype);
