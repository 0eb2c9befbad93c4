/* ctorch.h 0.1.0 - GENERATED from src/ by tools/amalgamate; edit src/, not this file. */
/*
 * ctorch - PyTorch's core as a single-header C library: tensors, CPU kernels, reverse-mode
 * autograd, nn modules, optimizers and data loading, with PyTorch's names, semantics and
 * defaults.
 *
 * USAGE
 *   In exactly one .c file:
 *       #define CTORCH_IMPLEMENTATION
 *       #include "ctorch.h"
 *   Other files include "ctorch.h" without the define. Build, e.g.:
 *       cc -O2 -march=native -fopenmp app.c -o app -lm
 *
 * CONFIGURATION (define before including; "impl" = only in the implementation TU)
 *   macro                   default      effect                                      scope
 *   CTORCH_IMPLEMENTATION   undefined    emit the implementation in this TU          impl
 *   CTORCH_STATIC           undefined    every function static (private copy)        global
 *   CTORCH_MALLOC(ctx,n)    malloc       allocator hooks; define all three or none;  impl
 *   CTORCH_REALLOC(ctx,p,n) realloc        ctx is set by ct_set_alloc_context
 *   CTORCH_FREE(ctx,p)      free
 *   CTORCH_ASSERT(c)        assert       internal invariants only, never user input  impl
 *   CTORCH_NO_STDIO         undefined    no FILE*: printing and loaders take buffers global
 *   CTORCH_NO_THREADS       undefined    no thread-local storage or locks            impl
 *   CTORCH_NO_SIMD          undefined    portable C kernels only                     impl
 *   CTORCH_ZLIB             undefined    read .gz files through zlib (link -lz)      impl
 *   CTORCH_OPENBLAS         undefined    GEMM through cblas (link -lopenblas)        impl
 *   -fopenmp                off          intra-op parallelism (_OPENMP)              impl
 *
 * DEFINITIONS
 *   shape       sizes outermost first, as PyTorch (a batch of images is (N, C, H, W))
 *   stride      elements (not bytes) to step to the next index of a dimension
 *   contiguous  row-major strides; size-1 dimensions' strides are ignored
 *   view        a tensor sharing another's storage (view, permute, narrow, expand, ...)
 *   scope       ct_scope_begin/ct_scope_end: owns every tensor ops return in between
 *   dtype       bool, uint8, int8, int16, int32, int64, float32, float64
 *   device      CT_CPU here; CT_CUDA through ctorch_cuda.h
 *
 * ERRORS
 *   Failing calls return NULL (or a nonzero ct_status) and record a sticky, thread-local
 *   first error; a call given a NULL tensor returns NULL without a new message. Check once
 *   after a block with ct_error(); ct_error_clear() forgets it. Messages read
 *   "ct_<op>: <facts>" in PyTorch's words. No input makes ctorch abort or crash.
 *
 * MEMORY
 *   Tensors belong to the innermost open scope, else to the caller (ct_free). Modules own
 *   their parameters, optimizers their state, leaves their .grad. Freed blocks are cached
 *   by size class; ct_empty_cache() returns them; ct_memory_allocated() counts live bytes.
 *
 * THREADS
 *   Error state, scopes and grad mode are per thread. Ops may run on several threads at
 *   once on different tensors. Intra-op threads: ct_set_num_threads.
 *
 * DETERMINISM
 *   Elementwise ops are bit-exact across thread counts. Reductions and GEMM split work by
 *   fixed blocks; each family states its rule at its declaration.
 */
#ifndef CTORCH_H
#define CTORCH_H

#ifdef __cplusplus
extern "C" {
#endif

// >>part core/config.h
/* core/config.h - version, linkage and the standard headers every part relies on. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef CTORCH_NO_STDIO
#include <stdio.h>
#endif

#define CTORCH_VERSION_MAJOR 0
#define CTORCH_VERSION_MINOR 1
#define CTORCH_VERSION_PATCH 0
#define CTORCH_VERSION_STRING "0.1.0"

/* CTORCH_API marks every public function: extern by default, static under CTORCH_STATIC. */
#ifndef CTORCH_API
#if defined(CTORCH_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define CTORCH_API static __attribute__((unused))
#elif defined(CTORCH_STATIC)
#define CTORCH_API static
#else
#define CTORCH_API extern
#endif
#endif

/* Largest number of dimensions a tensor may have. */
#define CT_MAX_DIMS 8

// >>part core/error.h
/* core/error.h - status codes and the sticky, thread-local first error (DESIGN §4).
 *
 * An op that fails returns NULL (or a nonzero ct_status) and records the first error; an
 * op given a NULL input returns NULL without a new message. Check once after a block:
 *     if (ct_error()) { puts(ct_error()); ct_error_clear(); }
 */

/* X(code, name, default text): the one list of status codes. */
#define CT_STATUS_LIST(X)                                                                  \
    X(CT_OK, "ok", "no error")                                                              \
    X(CT_ERR_NULL_ARG, "null_arg", "an argument was NULL")                                  \
    X(CT_ERR_SHAPE, "shape", "shapes do not match")                                         \
    X(CT_ERR_DTYPE, "dtype", "unsupported or mismatched dtype")                             \
    X(CT_ERR_DEVICE, "device", "tensors are on different or unsupported devices")           \
    X(CT_ERR_INDEX, "index", "index or dimension out of range")                             \
    X(CT_ERR_VALUE, "value", "invalid argument value")                                      \
    X(CT_ERR_OOM, "oom", "out of memory")                                                   \
    X(CT_ERR_AUTOGRAD, "autograd", "autograd error")                                        \
    X(CT_ERR_IO, "io", "file could not be opened or read")                                  \
    X(CT_ERR_FORMAT, "format", "malformed or truncated file")                               \
    X(CT_ERR_UNSUPPORTED, "unsupported", "feature not enabled in this build")               \
    X(CT_ERR_STATE, "state", "call not valid in the current state")

typedef enum ct_status {
#define CT__X(code, name, text) code,
    CT_STATUS_LIST(CT__X)
#undef CT__X
    CT_STATUS_COUNT
} ct_status;

/* The stable short name of a status code, e.g. "shape"; "unknown" for other values.
   Mirrors: the exception type of a PyTorch RuntimeError. */
CTORCH_API const char *ct_status_str(ct_status code);
/* The first error message recorded on this thread since the last ct_error_clear(), or NULL.
   Messages read "ct_<op>: <facts>". Thread safety: per thread. */
CTORCH_API const char *ct_error(void);
/* The status code of the first recorded error on this thread (CT_OK if none). */
CTORCH_API ct_status ct_error_code(void);
/* Forgets this thread's recorded error. */
CTORCH_API void ct_error_clear(void);

/* Called once per recorded error (the first one of a block) with its code and message. */
typedef void (*ct_error_handler)(ct_status code, const char *message, void *user_data);
/* Installs a process-wide handler (NULL removes it). The examples abort from it. */
CTORCH_API void ct_set_error_handler(ct_error_handler fn, void *user_data);

// >>part core/alloc.h
/* core/alloc.h - the CPU allocator: 64-byte aligned blocks, cached by size class.
 *
 * Every allocation goes through CTORCH_MALLOC/REALLOC/FREE (see the configuration table).
 * Freed tensor memory is kept in a cache by size class so a training loop reuses blocks
 * instead of faulting in fresh pages each step; ct_empty_cache() returns them.
 */

/* Bytes currently allocated by ctorch and not yet freed (tensors, storages, modules,
   optimizer state, graph nodes); cached free blocks are not counted.
   Mirrors: torch.cuda.memory_allocated, for the CPU. */
CTORCH_API size_t ct_memory_allocated(void);
/* Bytes held in the cache of freed blocks. Mirrors: torch.cuda.memory_reserved minus
   memory_allocated. */
CTORCH_API size_t ct_memory_cached(void);
/* The highest ct_memory_allocated() value since start or the last reset. */
CTORCH_API size_t ct_max_memory_allocated(void);
/* Resets the peak to the current value. Mirrors: torch.cuda.reset_peak_memory_stats. */
CTORCH_API void ct_reset_peak_memory_stats(void);
/* Returns every cached block to CTORCH_FREE. Thread safety: safe from any thread.
   Mirrors: torch.cuda.empty_cache. */
CTORCH_API void ct_empty_cache(void);
/* Sets the context pointer passed to the CTORCH_MALLOC/REALLOC/FREE hooks (default NULL).
   Call before the first allocation. */
CTORCH_API void ct_set_alloc_context(void *ctx);

// >>part core/dtype.h
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

/* Device kinds (torch.device). Only CT_CPU is built into ctorch.h. */
typedef enum ct_device_type { CT_CPU = 0, CT_CUDA = 1 } ct_device_type;
typedef struct ct_device {
    ct_device_type type;
    int index; /* ordinal for CT_CUDA; 0 for CT_CPU */
} ct_device;

/* The CPU device. Mirrors: torch.device("cpu"). */
CTORCH_API ct_device ct_device_cpu(void);

/* PyTorch's name of a dtype, e.g. "float32"; "invalid" for other values. */
CTORCH_API const char *ct_dtype_name(ct_dtype dtype);
/* Bytes per element (1, 2, 4 or 8); 0 for an invalid dtype. Mirrors: dtype.itemsize. */
CTORCH_API size_t ct_dtype_size(ct_dtype dtype);
/* True for float32 and float64. Mirrors: dtype.is_floating_point. */
CTORCH_API bool ct_dtype_is_floating_point(ct_dtype dtype);
/* True for signed types (int8..int64, floats). Mirrors: dtype.is_signed. */
CTORCH_API bool ct_dtype_is_signed(ct_dtype dtype);
/* The dtype with the smallest size and kind not smaller nor of lower kind than either
   (bool < integers < floats; uint8 + int8 -> int16). Mirrors: torch.promote_types. */
CTORCH_API ct_dtype ct_promote_types(ct_dtype a, ct_dtype b);
/* Whether a result of dtype `from` may be written into an output of dtype `to` (no float
   into integer, no non-bool into bool). Mirrors: torch.can_cast. */
CTORCH_API bool ct_can_cast(ct_dtype from, ct_dtype to);
/* Sets the dtype that float creation functions and float scalars use; float32 or float64.
   Returns CT_ERR_DTYPE for other dtypes. Mirrors: torch.set_default_dtype. */
CTORCH_API ct_status ct_set_default_dtype(ct_dtype dtype);
/* Mirrors: torch.get_default_dtype. */
CTORCH_API ct_dtype ct_get_default_dtype(void);

// >>part core/tensor.h
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
   NULL is a no-op. Mirrors: dropping the last Python reference. */
CTORCH_API void ct_free(ct_tensor *t);
/* Adds a reference the caller must drop with ct_free; the tensor leaves scope control
   for that reference. Returns t. */
CTORCH_API ct_tensor *ct_retain(ct_tensor *t);

/* ---- attributes --------------------------------------------------------------------- */
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
/* The version counter, incremented by each in-place op on t or a view of it.
   Mirrors: Tensor._version. */
CTORCH_API uint32_t ct_version(const ct_tensor *t);
/* The value of a one-element tensor as a double (int64 values above 2^53 round).
   Errors: CT_ERR_VALUE (returns NAN) when numel != 1: "a Tensor with N elements cannot be
   converted to Scalar". Mirrors: Tensor.item. */
CTORCH_API double ct_item(const ct_tensor *t);
/* ct_item for integer tensors, exact. Returns 0 on error. */
CTORCH_API int64_t ct_item_int64(const ct_tensor *t);

/* ---- creation (new tensor, owned by the current scope) -------------------------------
 * sizes: ndim (0..CT_MAX_DIMS) non-negative sizes; sizes may be NULL when ndim is 0.
 * dtype: CT_DTYPE_DEFAULT means the default float dtype.
 * Errors: CT_ERR_SHAPE for negative sizes or ndim out of range; CT_ERR_OOM. */

/* Uninitialized memory. Mirrors: torch.empty. */
CTORCH_API ct_tensor *ct_empty(const int64_t *sizes, int ndim, ct_dtype dtype);
/* Mirrors: torch.zeros. */
CTORCH_API ct_tensor *ct_zeros(const int64_t *sizes, int ndim, ct_dtype dtype);
/* Mirrors: torch.ones. */
CTORCH_API ct_tensor *ct_ones(const int64_t *sizes, int ndim, ct_dtype dtype);
/* Every element value (converted to dtype). Mirrors: torch.full. */
CTORCH_API ct_tensor *ct_full(const int64_t *sizes, int ndim, double value, ct_dtype dtype);
/* A 0-dim tensor holding value. Mirrors: torch.scalar_tensor. */
CTORCH_API ct_tensor *ct_scalar_tensor(double value, ct_dtype dtype);
/* Same shape and dtype as t. Mirrors: torch.empty_like / zeros_like / ones_like /
   full_like. */
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
   Errors: CT_ERR_VALUE when step is 0 or has the wrong sign ("upper bound and larger bound
   inconsistent with step sign"). Mirrors: torch.arange. */
CTORCH_API ct_tensor *ct_arange(double start, double end, double step, ct_dtype dtype);
/* steps values from start to end inclusive. Errors: CT_ERR_VALUE for steps < 0.
   Mirrors: torch.linspace. */
CTORCH_API ct_tensor *ct_linspace(double start, double end, int64_t steps, ct_dtype dtype);
/* (n, m) with ones on the diagonal; m < 0 means m = n. Mirrors: torch.eye. */
CTORCH_API ct_tensor *ct_eye(int64_t n, int64_t m, ct_dtype dtype);

/* ---- printing ----------------------------------------------------------------------- */
#ifndef CTORCH_NO_STDIO
/* Prints t like PyTorch's repr: "tensor([[1.0000, 2.0000]], dtype=torch.float64)". */
CTORCH_API void ct_print(const ct_tensor *t, FILE *f);
#endif
/* Writes the repr into buf (at most n bytes, NUL-terminated); returns the length needed
   (excluding the NUL), so ct_to_string(t, NULL, 0) sizes the buffer. */
CTORCH_API size_t ct_to_string(const ct_tensor *t, char *buf, size_t n);

// >>part core/scope.h
/* core/scope.h - scopes: the lifetime of the tensors ops return (DESIGN §3).
 *
 * Every tensor an op returns belongs to the innermost open scope; ct_scope_end releases
 * them all. A training step is one scope, so nested expressions never leak:
 *     ct_scope_begin();
 *     ct_tensor *loss = ct_cross_entropy(ct_module_forward(model, x), y, NULL);
 *     ct_backward(loss, NULL, false);
 *     ct_scope_end();
 * Scopes are per thread and nest up to 64 deep.
 */

/* Opens a scope. Returns CT_ERR_STATE when 64 scopes are already open. */
CTORCH_API ct_status ct_scope_begin(void);
/* Releases every tensor created since the matching ct_scope_begin (memory is freed when no
   graph, module or .grad still refers to it). Returns CT_ERR_STATE when no scope is open. */
CTORCH_API ct_status ct_scope_end(void);
/* Moves t from its scope to the enclosing one (or to the caller, who then calls ct_free,
   when t's scope is the outermost). Returns t. */
CTORCH_API ct_tensor *ct_keep(ct_tensor *t);
/* Number of open scopes on this thread. */
CTORCH_API int ct_scope_depth(void);

// >>part core/parallel.h
/* core/parallel.h - intra-op thread settings (DESIGN §7).
 *
 * Intra-op work (large pointwise ops, reductions, GEMM) splits over ct_get_num_threads()
 * OpenMP threads when built with -fopenmp; otherwise everything runs serially.
 */

/* Sets the number of intra-op threads (n >= 1); takes precedence over the environment
   variables CTORCH_NUM_THREADS and OMP_NUM_THREADS. Returns CT_ERR_VALUE for n < 1.
   Mirrors: torch.set_num_threads. */
CTORCH_API ct_status ct_set_num_threads(int n);
/* The intra-op thread count: ct_set_num_threads's value, else CTORCH_NUM_THREADS, else
   OMP_NUM_THREADS, else the number of cores; 1 without OpenMP. Mirrors:
   torch.get_num_threads. */
CTORCH_API int ct_get_num_threads(void);

// >>part core/rng.h
/* core/rng.h - random number generation (torch.Generator, torch.random).
 *
 * The CPU engine is mt19937 seeded as PyTorch's CPU generator, and the samplers follow
 * PyTorch's CPU algorithms, so a seed gives the same numbers as torch.manual_seed for
 * rand/uniform_, randint, randperm and randn/normal_ (to float rounding). A generator
 * argument may be NULL: the default generator is used.
 * Thread safety: a generator must not be used from two threads at once.
 */
typedef struct ct_generator ct_generator;

/* A new generator seeded with 67280421310721 (PyTorch's default seed); free with
   ct_generator_free. Mirrors: torch.Generator(). */
CTORCH_API ct_generator *ct_generator_new(void);
/* NULL is a no-op. */
CTORCH_API void ct_generator_free(ct_generator *g);
/* Reseeds g (NULL: the default generator). Mirrors: Generator.manual_seed. */
CTORCH_API void ct_generator_manual_seed(ct_generator *g, uint64_t seed);
/* The seed last set on g. Mirrors: Generator.initial_seed. */
CTORCH_API uint64_t ct_generator_initial_seed(const ct_generator *g);
/* The process-wide default CPU generator (borrowed). Mirrors: torch.default_generator. */
CTORCH_API ct_generator *ct_default_generator(void);
/* Seeds the default generator. Mirrors: torch.manual_seed. */
CTORCH_API void ct_manual_seed(uint64_t seed);

/* Uniform on [0, 1). Float dtypes only. Mirrors: torch.rand. */
CTORCH_API ct_tensor *ct_rand(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g);
/* Standard normal. Float dtypes only. Mirrors: torch.randn. */
CTORCH_API ct_tensor *ct_randn(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g);
/* Integers uniform in [low, high) (dtype DEFAULT means int64). Errors: CT_ERR_VALUE
   "random_ expects 'from' to be less than 'to', but got from=5 >= to=5". Mirrors:
   torch.randint. */
CTORCH_API ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim,
                                 ct_dtype dtype, ct_generator *g);
/* A random permutation of 0..n-1 (int64). Mirrors: torch.randperm. */
CTORCH_API ct_tensor *ct_randperm(int64_t n, ct_generator *g);
/* Same shape and dtype as t. Mirrors: torch.rand_like / torch.randn_like. */
CTORCH_API ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g);
CTORCH_API ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g);
/* Fills self in place from U(from, to). Mirrors: Tensor.uniform_. */
CTORCH_API ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g);
/* Fills self in place from N(mean, std^2). Mirrors: Tensor.normal_. */
CTORCH_API ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g);
/* Draws 0/1 with probability p into self's dtype. Mirrors: Tensor.bernoulli_(p). */
CTORCH_API ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g);

// >>part ops/pointwise.h
/* ops/pointwise.h - elementwise ops with broadcasting and type promotion.
 *
 * Shapes: inputs broadcast to a common shape (PyTorch's "Broadcasting semantics").
 * Dtypes: the result dtype follows torch.result_type: tensors of higher category win, a
 * 0-dim tensor counts only when its category is higher, C scalars (`_scalar` forms) count
 * as int64 or the default float dtype and never widen the tensor's dtype within a
 * category. Comparisons return bool. Ops marked "float" compute in floating point (integer
 * inputs give the default float dtype).
 * Returns: a new tensor owned by the current scope; in-place forms (trailing _) return
 * their first argument, bump its version and require the result to be castable to it.
 * Errors: CT_ERR_SHAPE "The size of tensor a (2) must match the size of tensor b (3) at
 * non-singleton dimension 1"; CT_ERR_DTYPE "result type Float can't be cast to the desired
 * output type Long"; NULL inputs return NULL.
 * Determinism: bit-exact across thread counts.
 */

/* input + alpha * other. Mirrors: torch.add(input, other, alpha=alpha). */
CTORCH_API ct_tensor *ct_add(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_add_alpha(const ct_tensor *input, const ct_tensor *other, double alpha);
CTORCH_API ct_tensor *ct_add_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_add_(ct_tensor *self, const ct_tensor *other, double alpha);
/* input - alpha * other. Mirrors: torch.sub. */
CTORCH_API ct_tensor *ct_sub(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_sub_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_sub_(ct_tensor *self, const ct_tensor *other, double alpha);
/* Mirrors: torch.mul. */
CTORCH_API ct_tensor *ct_mul(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_mul_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_mul_(ct_tensor *self, const ct_tensor *other);
/* True division (float). Mirrors: torch.div (rounding_mode=None). */
CTORCH_API ct_tensor *ct_div(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_div_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_div_(ct_tensor *self, const ct_tensor *other);
/* input ** exponent. Mirrors: torch.pow. */
CTORCH_API ct_tensor *ct_pow(const ct_tensor *input, const ct_tensor *exponent);
CTORCH_API ct_tensor *ct_pow_scalar(const ct_tensor *input, double exponent);
/* Elementwise max/min, propagating NaN. Mirrors: torch.maximum / torch.minimum. */
CTORCH_API ct_tensor *ct_maximum(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_minimum(const ct_tensor *input, const ct_tensor *other);

/* Comparisons (bool result). Mirrors: torch.eq, ne, lt, le, gt, ge. */
CTORCH_API ct_tensor *ct_eq(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_ne(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_lt(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_le(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_gt(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_ge(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_eq_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_gt_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_lt_scalar(const ct_tensor *input, double other);
/* Logical ops on truthiness (bool result). Mirrors: torch.logical_and/or/not. */
CTORCH_API ct_tensor *ct_logical_and(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_logical_or(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_logical_not(const ct_tensor *input);
/* condition ? input : other, all three broadcast; condition must be bool.
   Mirrors: torch.where. */
CTORCH_API ct_tensor *ct_where(const ct_tensor *condition, const ct_tensor *input,
                               const ct_tensor *other);

/* Unary ops. Gradient rules as PyTorch (abs and relu have gradient 0 at 0).
   Mirrors: torch.neg, abs, exp (float), log (float), sqrt (float), rsqrt (float), sin
   (float), cos (float), sigmoid (float), tanh (float), relu, square, reciprocal (float),
   log1p (float). */
CTORCH_API ct_tensor *ct_neg(const ct_tensor *input);
CTORCH_API ct_tensor *ct_abs(const ct_tensor *input);
CTORCH_API ct_tensor *ct_exp(const ct_tensor *input);
CTORCH_API ct_tensor *ct_log(const ct_tensor *input);
CTORCH_API ct_tensor *ct_log1p(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sqrt(const ct_tensor *input);
CTORCH_API ct_tensor *ct_rsqrt(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sin(const ct_tensor *input);
CTORCH_API ct_tensor *ct_cos(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sigmoid(const ct_tensor *input);
CTORCH_API ct_tensor *ct_tanh(const ct_tensor *input);
CTORCH_API ct_tensor *ct_relu(const ct_tensor *input);
CTORCH_API ct_tensor *ct_square(const ct_tensor *input);
CTORCH_API ct_tensor *ct_reciprocal(const ct_tensor *input);
/* In-place ReLU. Mirrors: torch.relu_. */
CTORCH_API ct_tensor *ct_relu_(ct_tensor *self);
/* Clamps into [min, max]; pass -INFINITY / INFINITY to leave a side open. NaN stays NaN;
   the gradient flows where min <= x <= max. Mirrors: torch.clamp. */
CTORCH_API ct_tensor *ct_clamp(const ct_tensor *input, double min, double max);

/* Fills self with value. Mirrors: Tensor.fill_. */
CTORCH_API ct_tensor *ct_fill_(ct_tensor *self, double value);
/* Mirrors: Tensor.zero_. */
CTORCH_API ct_tensor *ct_zero_(ct_tensor *self);
/* Copies src (broadcast to self's shape, cast to self's dtype) into self.
   Mirrors: Tensor.copy_. */
CTORCH_API ct_tensor *ct_copy_(ct_tensor *self, const ct_tensor *src);
/* A copy of input with its own storage (contiguous), recorded by autograd.
   Mirrors: torch.clone. */
CTORCH_API ct_tensor *ct_clone(const ct_tensor *input);
/* input converted to dtype (returns input itself, as a new reference in the scope, when
   the dtype already matches); differentiable between float dtypes. Mirrors: Tensor.to(dtype). */
CTORCH_API ct_tensor *ct_to_dtype(const ct_tensor *input, ct_dtype dtype);
/* The dtype of an op over a and b. Mirrors: torch.result_type. */
CTORCH_API ct_dtype ct_result_type(const ct_tensor *a, const ct_tensor *b);

// >>part ops/view.h
/* ops/view.h - views (sharing storage, as PyTorch's "Tensor Views") and shape ops.
 *
 * Views return a new tensor object over the same storage: writes through a view change
 * the base, and the version counter is shared. All results are owned by the current scope.
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

// >>part ops/reduce.h
/* ops/reduce.h - reductions over all elements or along dims.
 *
 * Shapes: a reduction over dim of input (d0, ..., dn) removes dim, or keeps it with size 1
 * when keepdim. Dtypes: sum of bool/integers accumulates to int64; mean needs a float
 * input; max/min/argmax keep the input dtype (indices are int64). NaN propagates through
 * max/min and argmax/argmin point at the first NaN. Ties: argmax/argmin and max_dim/min_dim
 * return the first occurrence.
 * Returns: new tensors owned by the current scope. Errors: CT_ERR_INDEX for a dim out of
 * range; CT_ERR_VALUE for a max/min/argmax over an empty dim ("max(): Expected reduction dim
 * 0 to have non-zero size.").
 * Determinism: float sums add fixed blocks of elements and then the block sums in order, so
 * results are bit-exact across thread counts.
 */

/* Sum of all elements (0-dim). Mirrors: torch.sum(input). */
CTORCH_API ct_tensor *ct_sum(const ct_tensor *input);
/* Sum over one dim. Mirrors: torch.sum(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_sum_dim(const ct_tensor *input, int64_t dim, bool keepdim);
/* Sum over n dims (n == 0 sums all). Mirrors: torch.sum(input, dims, keepdim). */
CTORCH_API ct_tensor *ct_sum_dims(const ct_tensor *input, const int64_t *dims, int n, bool keepdim);
/* Sums input down to sizes (which input must broadcast to). Mirrors: Tensor.sum_to_size. */
CTORCH_API ct_tensor *ct_sum_to_size(const ct_tensor *input, const int64_t *sizes, int ndim);
/* Mirrors: torch.mean(input) / torch.mean(input, dim, keepdim). Error: CT_ERR_DTYPE for
   integer input ("mean(): could not infer output dtype. Input dtype must be either a
   floating point or complex dtype. Got: Long"). */
CTORCH_API ct_tensor *ct_mean(const ct_tensor *input);
CTORCH_API ct_tensor *ct_mean_dim(const ct_tensor *input, int64_t dim, bool keepdim);
/* Largest / smallest element (0-dim); the gradient is split evenly among ties.
   Mirrors: torch.max(input) / torch.min(input). */
CTORCH_API ct_tensor *ct_max(const ct_tensor *input);
CTORCH_API ct_tensor *ct_min(const ct_tensor *input);
/* Values and int64 indices along dim (either out pointer may be NULL); the gradient goes
   to the selected index. Returns CT_OK or the error code.
   Mirrors: torch.max(input, dim, keepdim) / torch.min(input, dim, keepdim). */
CTORCH_API ct_status ct_max_dim(const ct_tensor *input, int64_t dim, bool keepdim,
                                ct_tensor **values, ct_tensor **indices);
CTORCH_API ct_status ct_min_dim(const ct_tensor *input, int64_t dim, bool keepdim,
                                ct_tensor **values, ct_tensor **indices);
/* Index of the largest / smallest element of the flattened input (0-dim int64).
   Mirrors: torch.argmax(input) / torch.argmin(input). */
CTORCH_API ct_tensor *ct_argmax(const ct_tensor *input);
CTORCH_API ct_tensor *ct_argmin(const ct_tensor *input);
/* Indices along dim (int64). Mirrors: torch.argmax(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_argmax_dim(const ct_tensor *input, int64_t dim, bool keepdim);
CTORCH_API ct_tensor *ct_argmin_dim(const ct_tensor *input, int64_t dim, bool keepdim);

// >>part ops/linalg.h
/* ops/linalg.h - matrix products on the packed GEMM (ops/gemm.c) or cblas.
 *
 * Dtypes: float32 and float64 (both operands the same dtype). Results are new tensors owned
 * by the current scope. Determinism: bit-exact across runs and thread counts for a given
 * build (each output tile is computed by one thread in a fixed order of K blocks).
 */

/* Product with PyTorch's rules: 1-D @ 1-D -> dot (0-D); 2-D @ 2-D -> mm; 1-D @ 2-D and
   2-D @ 1-D -> vector; N-D -> batched with broadcast batch dims.
   Errors: CT_ERR_SHAPE "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
   "size mismatch, got input (2), mat (2x3), vec (4)", "inconsistent tensor size, expected
   tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements
   respectively"; CT_ERR_DTYPE "expected m1 and m2 to have the same dtype, but got: float
   != double". Mirrors: torch.matmul. */
CTORCH_API ct_tensor *ct_matmul(const ct_tensor *input, const ct_tensor *other);
/* (n, m) @ (m, p) -> (n, p), no broadcasting. Mirrors: torch.mm. */
CTORCH_API ct_tensor *ct_mm(const ct_tensor *input, const ct_tensor *mat2);
/* (b, n, m) @ (b, m, p) -> (b, n, p). Error: "Expected size for first two dimensions of batch2
   tensor to be: [b, m] but got: [b2, m2]." Mirrors: torch.bmm. */
CTORCH_API ct_tensor *ct_bmm(const ct_tensor *input, const ct_tensor *mat2);
/* beta * input + alpha * (mat1 @ mat2); input broadcasts to (n, p). Mirrors: torch.addmm. */
CTORCH_API ct_tensor *ct_addmm(const ct_tensor *input, const ct_tensor *mat1, const ct_tensor *mat2,
                               double beta, double alpha);
/* (n, m) @ (m) -> (n). Mirrors: torch.mv. */
CTORCH_API ct_tensor *ct_mv(const ct_tensor *input, const ct_tensor *vec);
/* Dot product of two 1-D tensors (0-D). Mirrors: torch.dot. */
CTORCH_API ct_tensor *ct_dot(const ct_tensor *input, const ct_tensor *other);
/* y = x @ weight^T + bias. Shapes: input (*, in_features), weight (out_features,
   in_features), bias (out_features) or NULL; output (*, out_features).
   Mirrors: torch.nn.functional.linear. */
CTORCH_API ct_tensor *ct_linear(const ct_tensor *input, const ct_tensor *weight,
                                const ct_tensor *bias);

// >>part ops/softmax.h
/* ops/softmax.h - softmax and log_softmax along a dim.
 *
 * Shapes: output has input's shape. Dtypes: float32/float64 (integer input is an error).
 * Computed stably (the max along dim is subtracted first); the sum along dim of softmax is
 * 1. Returns a new tensor owned by the current scope. Errors: CT_ERR_INDEX for a bad dim.
 */

/* exp(x - max) / sum(exp(x - max)) along dim. Mirrors: torch.softmax(input, dim). */
CTORCH_API ct_tensor *ct_softmax(const ct_tensor *input, int64_t dim);
/* x - max - log(sum(exp(x - max))) along dim. Mirrors: torch.log_softmax(input, dim). */
CTORCH_API ct_tensor *ct_log_softmax(const ct_tensor *input, int64_t dim);

// >>part autograd/autograd.h
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
   the first backward or after zero_grad. Borrowed: owned by t. Mirrors: Tensor.grad. */
CTORCH_API ct_tensor *ct_grad(const ct_tensor *t);
/* Replaces t's .grad (the tensor is retained; NULL clears). Errors: CT_ERR_SHAPE when the
   shapes differ. Mirrors: assigning Tensor.grad. */
CTORCH_API ct_status ct_set_grad(ct_tensor *t, ct_tensor *grad);
/* True for tensors without a grad_fn. Mirrors: Tensor.is_leaf. */
CTORCH_API bool ct_is_leaf(const ct_tensor *t);
/* The node that created t, or NULL for leaves (borrowed). Mirrors: Tensor.grad_fn. */
CTORCH_API const ct_node *ct_grad_fn(const ct_tensor *t);
/* PyTorch's name of a node, e.g. "MulBackward0". Mirrors: type(grad_fn).__name__. */
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

/* Grad mode (per thread; on by default). ct_no_grad_begin/end nest, up to 64 deep.
   Mirrors: torch.no_grad, torch.set_grad_enabled, torch.is_grad_enabled. */
CTORCH_API void ct_no_grad_begin(void);
CTORCH_API void ct_no_grad_end(void);
CTORCH_API void ct_set_grad_enabled(bool enabled);
CTORCH_API bool ct_is_grad_enabled(void);

// >>part autograd/gradcheck.h
/* autograd/gradcheck.h - compares autograd's gradients with finite differences. */

/* The function under test: builds its output from the inputs with ctorch ops (new tensor,
   owned by the current scope). */
typedef ct_tensor *(*ct_gradcheck_fn)(ct_tensor *const *inputs, int n, void *user);

/* Options of ct_gradcheck (PyTorch's defaults, designed for float64 inputs):
   field  default  meaning
   eps    1e-6     finite-difference step
   atol   1e-5     absolute tolerance
   rtol   1e-3     relative tolerance (of the numerical value) */
typedef struct ct_gradcheck_opts {
    double eps, atol, rtol;
} ct_gradcheck_opts;

/* PyTorch's gradcheck defaults. */
CTORCH_API ct_gradcheck_opts ct_gradcheck_defaults(void);
/* Checks, for every input that requires grad, the analytical Jacobian (one backward per
   output element) against central differences (f(x+eps) - f(x-eps)) / 2eps, element by
   element with |a - n| <= atol + rtol * |n|. Inputs should be float64. opts NULL means
   defaults. Returns true when they match; false with a CT_ERR_AUTOGRAD error naming the
   input, the output and input element indices and both values ("Jacobian mismatch for
   output 0 with respect to input 1, numerical:3.0 analytical:2.0 at (output 4, input 2)"),
   or the error fn raised. Mirrors: torch.autograd.gradcheck. */
CTORCH_API bool ct_gradcheck(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                             const ct_gradcheck_opts *opts);

// >>part nn/loss.h
/* nn/loss.h - loss functions (torch.nn.functional losses).
 *
 * Reductions: CT_REDUCTION_MEAN (the default, also for 0), CT_REDUCTION_SUM,
 * CT_REDUCTION_NONE (per-element losses). Results are new tensors owned by the current
 * scope; reduced losses are 0-dim.
 */
typedef enum ct_reduction {
    CT_REDUCTION_DEFAULT = 0, /* = mean */
    CT_REDUCTION_MEAN,
    CT_REDUCTION_SUM,
    CT_REDUCTION_NONE
} ct_reduction;

/* Options of ct_nll_loss and ct_cross_entropy.
   field         default   meaning
   weight        NULL      (C) float rescaling weight per class
   ignore_index  -100      targets equal to it contribute neither loss nor gradient
   reduction     mean      'mean' divides by the summed weights of the counted targets */
typedef struct ct_nll_loss_opts {
    const ct_tensor *weight;
    int64_t ignore_index;
    ct_reduction reduction;
} ct_nll_loss_opts;

/* PyTorch's defaults: weight NULL, ignore_index -100, reduction mean. */
CTORCH_API ct_nll_loss_opts ct_nll_loss_defaults(void);

/* Negative log likelihood of log-probabilities. Shapes: input (N, C) or (C); target (N) or
   () int64 class indices in [0, C). opts NULL means defaults.
   Errors: CT_ERR_DTYPE "expected scalar type Long but found Int" for a non-int64 target;
   CT_ERR_SHAPE "Expected input batch_size (3) to match target batch_size (4)."; CT_ERR_INDEX
   "Target 10 is out of bounds." Mirrors: torch.nn.functional.nll_loss. */
CTORCH_API ct_tensor *ct_nll_loss(const ct_tensor *input, const ct_tensor *target,
                                  const ct_nll_loss_opts *opts);
/* log_softmax over dim 1 (dim 0 for 1-D input) followed by nll_loss: the cross entropy
   between logits and class indices. Shapes, options and errors as ct_nll_loss.
   Mirrors: torch.nn.functional.cross_entropy. */
CTORCH_API ct_tensor *ct_cross_entropy(const ct_tensor *input, const ct_tensor *target,
                                       const ct_nll_loss_opts *opts);
/* Mean squared error (input - target)^2, input and target broadcastable.
   Mirrors: torch.nn.functional.mse_loss. */
CTORCH_API ct_tensor *ct_mse_loss(const ct_tensor *input, const ct_tensor *target,
                                  ct_reduction reduction);

// >>part nn/init.h
/* nn/init.h - (being written) */

// >>part nn/module.h
/* nn/module.h - (being written) */

// >>part optim/optim.h
/* optim/optim.h - (being written) */

// >>part data/npy.h
/* data/npy.h - (being written) */

// >>part data/idx.h
/* data/idx.h - (being written) */

// >>part data/dataset.h
/* data/dataset.h - (being written) */

// >>part data/dataloader.h
/* data/dataloader.h - (being written) */

#ifdef __cplusplus
}
#endif
#endif /* CTORCH_H */

#if defined(CTORCH_IMPLEMENTATION) && !defined(CTORCH_IMPLEMENTATION_INCLUDED)
#define CTORCH_IMPLEMENTATION_INCLUDED

// >>part core/internal.h
/* core/internal.h - private declarations shared by the parts. Never part of the public
 * interface: everything here is ct__ / CT__ prefixed.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- compiler and platform ---------------------------------------------------------- */
#if defined(__cplusplus)
#define CT__THREAD_LOCAL thread_local
#elif defined(CTORCH_NO_THREADS)
#define CT__THREAD_LOCAL
#else
#define CT__THREAD_LOCAL _Thread_local
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CT__UNUSED __attribute__((unused))
#define CT__ATOMIC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#else
#define CT__UNUSED
#define CT__ATOMIC_ADD(p, v) (*(p) += (v))
#endif

/* Linkage of the private functions shared between parts: static under CTORCH_STATIC. */
#ifdef CTORCH_STATIC
#define CT__INTERNAL static CT__UNUSED
#else
#define CT__INTERNAL
#endif

#ifndef CT_ASSERT
#ifdef CTORCH_ASSERT
#define CT_ASSERT(c) CTORCH_ASSERT(c)
#else
#include <assert.h>
#define CT_ASSERT(c) assert(c)
#endif
#endif

#if defined(CTORCH_NO_SIMD)
#elif defined(__AVX512F__)
#define CT__HAS_AVX512 1
#define CT__HAS_AVX2 1
#elif defined(__AVX2__) && defined(__FMA__)
#define CT__HAS_AVX2 1
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define CT__HAS_NEON 1
#endif

/* ---- allocation hooks (all or none) ------------------------------------------------- */
#if defined(CTORCH_MALLOC) && defined(CTORCH_REALLOC) && defined(CTORCH_FREE)
#define CT__MALLOC_HOOK(ctx, sz) CTORCH_MALLOC(ctx, sz)
#define CT__FREE_HOOK(ctx, p) CTORCH_FREE(ctx, p)
#elif defined(CTORCH_MALLOC) || defined(CTORCH_REALLOC) || defined(CTORCH_FREE)
#error "ctorch: define CTORCH_MALLOC, CTORCH_REALLOC and CTORCH_FREE all together, or none"
#else
#define CT__MALLOC_HOOK(ctx, sz) ((void)(ctx), malloc(sz))
#define CT__FREE_HOOK(ctx, p) ((void)(ctx), free(p))
#endif

/* A spin lock, zero-initialized; a no-op under CTORCH_NO_THREADS. */
typedef struct ct__mutex {
    int locked;
} ct__mutex;
CT__INTERNAL void ct__mutex_lock(ct__mutex *m);
CT__INTERNAL void ct__mutex_unlock(ct__mutex *m);

/* 64-byte aligned blocks from the caching allocator; NULL on failure (no error set). */
CT__INTERNAL void *ct__malloc(size_t bytes);
CT__INTERNAL void *ct__calloc(size_t bytes);
CT__INTERNAL void *ct__realloc(void *p, size_t bytes);
CT__INTERNAL void ct__free(void *p);

/* Records the first error of this thread; returns `code`. */
CT__INTERNAL ct_status ct__fail(ct_status code, const char *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

CT__INTERNAL bool ct__dtype_valid(ct_dtype d);
CT__INTERNAL ct_dtype ct__dtype_resolve(ct_dtype d);
CT__INTERNAL int ct__dtype_category(ct_dtype d);

/* ---- tensors ------------------------------------------------------------------------ */
typedef struct ct_node ct_node;

struct ct_storage {
    void *data;
    size_t nbytes;
    int refcount;
    uint32_t version; /* autograd version counter, shared by all views */
    ct_device device;
    void (*deleter)(void *data, void *ctx); /* borrowed memory: called instead of ct__free */
    void *deleter_ctx;
    bool borrowed;
};

typedef struct ct__hook {
    ct_tensor *(*fn)(const ct_tensor *grad, void *user);
    void *user;
    struct ct__hook *next;
} ct__hook;

struct ct_tensor {
    ct_storage *storage;
    int64_t offset; /* storage offset in elements */
    int64_t sizes[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS];
    int ndim;
    ct_dtype dtype;
    int refcount;
    int scope_depth; /* index of the owning scope, -1 when caller-owned */
    int64_t scope_slot;
    bool wrapped_number; /* a C scalar wrapped as a 0-dim tensor: lowest promotion rank */
    /* autograd */
    bool requires_grad; /* leaves only; a non-leaf requires grad iff grad_fn != NULL */
    bool retains_grad;
    ct_tensor *grad;
    ct_node *grad_fn;
    ct__hook *hooks; /* leaves: run before accumulation */
};

/* A new tensor struct over `storage` (retained), not registered in any scope. */
CT__INTERNAL ct_tensor *ct__tensor_over(ct_storage *storage, ct_dtype dtype, const int64_t *sizes,
                           const int64_t *strides, int ndim, int64_t offset);
/* A new contiguous tensor with fresh storage, not registered in any scope; NULL + error
   on bad shape or out of memory. */
CT__INTERNAL ct_tensor *ct__tensor_new(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype);
/* Registers t in the innermost open scope (if any) and returns it; NULL passes through. */
CT__INTERNAL ct_tensor *ct__scoped(ct_tensor *t);
/* Drops one reference; destroys at zero. Does not touch scopes. */
CT__INTERNAL void ct__release(ct_tensor *t);
CT__INTERNAL void ct__storage_release(ct_storage *s);
/* Contiguous row-major strides for sizes. */
CT__INTERNAL void ct__contiguous_strides(const int64_t *sizes, int ndim, int64_t *strides);
CT__INTERNAL int64_t ct__numel(const int64_t *sizes, int ndim);
/* Normalizes dim into [0, ndim) (ndim 0 accepts -1 and 0 when allow_scalar); -1 + error
   "Dimension out of range (expected to be in range of [-n, n-1], but got d)". */
CT__INTERNAL int ct__wrap_dim(const char *op, int64_t dim, int ndim);
/* The address of element 0 of t's view. */
static inline char *ct__data(const ct_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)ct_dtype_size(t->dtype);
}
/* Writes "[2, 3]" into buf. */
CT__INTERNAL const char *ct__shape_str(const int64_t *sizes, int ndim, char *buf, size_t n);
/* Fails with CT_ERR_NULL_ARG unless an error is already pending (NULL propagation). */
CT__INTERNAL bool ct__null(const char *op, const void *p);
/* Checks the tensor is on the CPU (for CPU-only ops). */
CT__INTERNAL bool ct__check_cpu(const char *op, const ct_tensor *t);
/* Bumps the version counter after an in-place write. */
static inline void ct__bump_version(ct_tensor *t) { t->storage->version++; }

/* ---- scalar conversion -------------------------------------------------------------- */
CT__INTERNAL double ct__load_f64(const void *p, ct_dtype d);
CT__INTERNAL void ct__store_f64(void *p, ct_dtype d, double v);
CT__INTERNAL int64_t ct__load_i64(const void *p, ct_dtype d);

/* ---- parallel ----------------------------------------------------------------------- */
/* Runs fn over [0, n) split into contiguous chunks across the intra-op threads when n is
   at least two grains; serially otherwise (and inside another parallel region). */
CT__INTERNAL void ct__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void *ctx),
                      void *ctx);
#define CT__GRAIN 32768

/* ---- GEMM (ops/gemm.c) -------------------------------------------------------------- */
/* C = alpha * (A @ B) + beta * C with A (M, K), B (K, N), C (M, N), each given by a
   pointer and row/column strides in elements; beta == 0 does not read C. */
CT__INTERNAL void ct__gemm_f32(int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t rsa, int64_t csa,
                  const float *B, int64_t rsb, int64_t csb,
                  float beta, float *C, int64_t rsc, int64_t csc);
CT__INTERNAL void ct__gemm_f64(int64_t M, int64_t N, int64_t K, double alpha,
                  const double *A, int64_t rsa, int64_t csa,
                  const double *B, int64_t rsb, int64_t csb,
                  double beta, double *C, int64_t rsc, int64_t csc);

/* ---- strided iteration (ops/iter.c) ------------------------------------------------- */
/* X(dtype enum, C type, suffix) for every dtype. */
#define CT__FOR_ALL_DTYPES(X)                                                              \
    X(CT_BOOL, bool, b8)                                                                    \
    X(CT_UINT8, uint8_t, u8)                                                                \
    X(CT_INT8, int8_t, i8)                                                                  \
    X(CT_INT16, int16_t, i16)                                                               \
    X(CT_INT32, int32_t, i32)                                                               \
    X(CT_INT64, int64_t, i64)                                                               \
    X(CT_FLOAT32, float, f32)                                                               \
    X(CT_FLOAT64, double, f64)
#define CT__FOR_NUMERIC_DTYPES(X)                                                          \
    X(CT_UINT8, uint8_t, u8)                                                                \
    X(CT_INT8, int8_t, i8)                                                                  \
    X(CT_INT16, int16_t, i16)                                                               \
    X(CT_INT32, int32_t, i32)                                                               \
    X(CT_INT64, int64_t, i64)                                                               \
    X(CT_FLOAT32, float, f32)                                                               \
    X(CT_FLOAT64, double, f64)
#define CT__FOR_FLOAT_DTYPES(X)                                                            \
    X(CT_FLOAT32, float, f32)                                                               \
    X(CT_FLOAT64, double, f64)

#define CT__ITER_MAX_OPS 4
/* Operands broadcast to one shape with byte strides; operand 0 is the output.
   ct__iter_build collapses dimensions so contiguous data becomes one flat inner loop. */
typedef struct ct__iter {
    int ndim, nops;
    int64_t sizes[CT_MAX_DIMS];
    char *data[CT__ITER_MAX_OPS];
    int64_t strides[CT__ITER_MAX_OPS][CT_MAX_DIMS]; /* bytes; 0 on broadcast dims */
} ct__iter;
/* An inner loop over n elements: data[k] advances by strides[k] bytes per element. */
typedef void (*ct__loop_fn)(char **data, const int64_t *strides, int64_t n, const void *params);
/* Builds an iterator over out's shape; each input must be broadcastable to it. */
CT__INTERNAL void ct__iter_build(ct__iter *it, ct_tensor *out, const ct_tensor *const *inputs, int n_inputs);
/* Runs loop over every element, in parallel chunks when large. */
CT__INTERNAL void ct__iter_run(const ct__iter *it, ct__loop_fn loop, const void *params);
/* Broadcasts shapes a and b into out (PyTorch's rule); false + CT_ERR_SHAPE error naming
   op otherwise. */
CT__INTERNAL bool ct__broadcast_shapes(const char *op, const int64_t *a, int na, const int64_t *b, int nb,
                          int64_t *out, int *nout);
/* Copies src into dst elementwise with dtype conversion (same shape or broadcastable). */
CT__INTERNAL void ct__copy_kernel(ct_tensor *dst, const ct_tensor *src);

/* ---- autograd (autograd/autograd.c) ------------------------------------------------- */
#define CT__NODE_SAVED 4
/* Computes the gradients of the node's inputs from the gradient of its output, with ctorch
   ops (so the backward runs on any backend and can be differentiated again). grad_inputs
   has n_next slots, NULL-initialized; leave NULL where an input needs no gradient (check
   ct__needs_grad). Gradients may have the broadcast shape; the engine sums them to the
   input's shape and casts to its dtype. */
typedef void (*ct__backward_fn)(ct_node *n, const ct_tensor *grad, ct_tensor **grad_inputs);

typedef struct ct__edge {
    ct_node *node;   /* the input's grad_fn (retained), or NULL */
    ct_tensor *leaf; /* the input when it is a leaf that requires grad (retained), or NULL */
    int64_t sizes[CT_MAX_DIMS];
    int ndim;
    ct_dtype dtype;
} ct__edge;

struct ct_node {
    const char *name; /* PyTorch's node name, e.g. "AddBackward0" */
    int refcount;
    uint64_t seq; /* creation order; the engine runs later nodes first */
    ct__backward_fn backward;
    int n_next;
    ct__edge *next;
    int n_saved;
    ct_tensor *saved[CT__NODE_SAVED];
    uint32_t saved_version[CT__NODE_SAVED];
    double f[4];                    /* op scalars (alpha, exponent, bounds ...) */
    int64_t i[2 * CT_MAX_DIMS + 4]; /* op integers (dims, sizes ...) */
    void *ctx;                      /* op data owned by the node, freed with ctx_free */
    void (*ctx_free)(void *ctx);
    bool released; /* saved tensors freed after a backward without retain_graph */
    ct__hook *pre_hooks;
    ct_tensor *retain_target; /* weak: the non-leaf output whose .grad is retained */
    /* engine scratch */
    uint64_t epoch;
    int deps;
    ct_tensor *buffer;
};

/* True when grad mode is on and any of the n inputs requires grad. */
CT__INTERNAL bool ct__any_requires_grad(const ct_tensor *const *inputs, int n);
/* A node for an op over n inputs, or NULL (no error) when no input requires grad or grad
   mode is off. The caller saves what the backward needs and calls ct__set_history. */
CT__INTERNAL ct_node *ct__node_new(const char *name, ct__backward_fn fn, const ct_tensor *const *inputs, int n);
/* Saves a tensor for backward (an alias: same storage, no history) and its version. */
CT__INTERNAL void ct__save(ct_node *n, const ct_tensor *t);
/* The k-th saved tensor, or NULL + CT_ERR_AUTOGRAD when it was modified in place since it
   was saved or the graph was already freed. */
CT__INTERNAL const ct_tensor *ct__saved(ct_node *n, int k);
/* Makes n the grad_fn of out (takes over the caller's reference to n). NULL n: no-op. */
CT__INTERNAL void ct__set_history(ct_tensor *out, ct_node *n);
/* Whether input k of n needs a gradient. */
static inline bool ct__needs_grad(const ct_node *n, int k)
{
    return n->next[k].node || n->next[k].leaf;
}
CT__INTERNAL void ct__node_release(ct_node *n);
CT__INTERNAL const char *ct__node_name(const ct_node *n);
/* Checks an in-place op on t is allowed by autograd: fails (CT_ERR_AUTOGRAD) for a leaf that
   requires grad while grad mode is on. */
CT__INTERNAL bool ct__check_inplace(const char *op, const ct_tensor *t);
/* After an in-place op wrote t from inputs, records n as t's new history (rebase). */
CT__INTERNAL void ct__rebase_history(ct_tensor *t, ct_node *n);
/* An alias of t sharing storage and version counter, with no history (ct_detach). */
CT__INTERNAL ct_tensor *ct__alias(const ct_tensor *t);

// >>part core/error.c
/* core/error.c - the sticky thread-local first error. */

#include <stdarg.h>
#include <stdio.h>

static CT__THREAD_LOCAL ct_status ct__error_code_tl = CT_OK;
static CT__THREAD_LOCAL char ct__error_msg_tl[512];
static ct_error_handler ct__error_handler_fn = NULL;
static void *ct__error_handler_user = NULL;

const char *ct_status_str(ct_status code)
{
    switch (code) {
#define CT__X(c, name, text) case c: return name;
        CT_STATUS_LIST(CT__X)
#undef CT__X
    default: return "unknown";
    }
}

const char *ct_error(void) { return ct__error_code_tl == CT_OK ? NULL : ct__error_msg_tl; }

ct_status ct_error_code(void) { return ct__error_code_tl; }

void ct_error_clear(void)
{
    ct__error_code_tl = CT_OK;
    ct__error_msg_tl[0] = '\0';
}

void ct_set_error_handler(ct_error_handler fn, void *user_data)
{
    ct__error_handler_fn = fn;
    ct__error_handler_user = user_data;
}

ct_status ct__fail(ct_status code, const char *op, const char *fmt, ...)
{
    if (ct__error_code_tl != CT_OK) {
        return code; /* keep the first error */
    }
    int n = snprintf(ct__error_msg_tl, sizeof ct__error_msg_tl, "%s: ", op);
    if (n < 0 || n >= (int)sizeof ct__error_msg_tl) {
        n = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ct__error_msg_tl + n, sizeof ct__error_msg_tl - (size_t)n, fmt, ap);
    va_end(ap);
    ct__error_code_tl = code;
    if (ct__error_handler_fn) {
        ct__error_handler_fn(code, ct__error_msg_tl, ct__error_handler_user);
    }
    return code;
}

// >>part core/alloc.c
/* core/alloc.c - aligned, size-class cached allocation through the user's hooks.
 *
 * Block layout: [header (64 bytes): raw pointer, class, requested size][payload...]; the
 * payload is 64-byte aligned. Size classes are 4 per power of two (at most 25% waste);
 * blocks above 1 GiB are never cached. The cache is bounded by CT__CACHE_LIMIT bytes.
 */


/* Under AddressSanitizer freed blocks go straight back, so use-after-free is reported. */
#if defined(__SANITIZE_ADDRESS__)
#define CT__NO_CACHE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT__NO_CACHE 1
#endif
#endif

#define CT__ALIGN 64
#define CT__NCLASS 160
#define CT__CACHE_LIMIT ((size_t)2 << 30)

typedef struct ct__block {
    void *raw;              /* what CTORCH_MALLOC returned */
    size_t bytes;           /* payload capacity of the class */
    int cls;                /* size class, or -1 when not cacheable */
    struct ct__block *next; /* free-list link while cached */
} ct__block;

static struct {
    void *ctx;
    ct__block *free_list[CT__NCLASS];
    size_t allocated, peak, cached;
    ct__mutex lock;
} ct__alloc_state;

void ct_set_alloc_context(void *ctx) { ct__alloc_state.ctx = ctx; }

/* Class k covers sizes up to (4 + k%4) << (k/4) bytes, from 64 bytes upward. */
static int ct__alloc_class(size_t bytes, size_t *cap)
{
    size_t c = 64;
    for (int k = 0; k < CT__NCLASS; k++) {
        size_t base = (size_t)1 << (k / 4 + 4);
        c = base + (base / 4) * (size_t)(k % 4);
        if (c >= bytes) {
            *cap = c;
            return k;
        }
        if (c > ((size_t)1 << 30)) {
            break;
        }
    }
    *cap = bytes;
    return -1;
}

static ct__block *ct__alloc_header(void *payload)
{
    return (ct__block *)((char *)payload - CT__ALIGN);
}

void *ct__malloc(size_t bytes)
{
    size_t cap = 0;
    int cls = ct__alloc_class(bytes ? bytes : 1, &cap);
    ct__block *b = NULL;
    ct__mutex_lock(&ct__alloc_state.lock);
    if (cls >= 0 && ct__alloc_state.free_list[cls]) {
        b = ct__alloc_state.free_list[cls];
        ct__alloc_state.free_list[cls] = b->next;
        ct__alloc_state.cached -= b->bytes;
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
    if (!b) {
        if (cap > SIZE_MAX - 2 * CT__ALIGN) {
            return NULL;
        }
        void *raw = CT__MALLOC_HOOK(ct__alloc_state.ctx, cap + 2 * CT__ALIGN);
        if (!raw) {
            return NULL;
        }
        uintptr_t p = ((uintptr_t)raw + 2 * CT__ALIGN - 1) & ~(uintptr_t)(CT__ALIGN - 1);
        b = (ct__block *)(p - CT__ALIGN);
        b->raw = raw;
        b->bytes = cap;
        b->cls = cls;
    }
    b->next = NULL;
    ct__mutex_lock(&ct__alloc_state.lock);
    ct__alloc_state.allocated += b->bytes;
    if (ct__alloc_state.allocated > ct__alloc_state.peak) {
        ct__alloc_state.peak = ct__alloc_state.allocated;
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
    return (char *)b + CT__ALIGN;
}

void *ct__calloc(size_t bytes)
{
    void *p = ct__malloc(bytes);
    if (p) {
        memset(p, 0, bytes);
    }
    return p;
}

void ct__free(void *p)
{
    if (!p) {
        return;
    }
    ct__block *b = ct__alloc_header(p);
    bool keep = false;
    ct__mutex_lock(&ct__alloc_state.lock);
    ct__alloc_state.allocated -= b->bytes;
#ifdef CT__NO_CACHE
    bool cacheable = false;
#else
    bool cacheable = b->cls >= 0 && ct__alloc_state.cached + b->bytes <= CT__CACHE_LIMIT;
#endif
    if (cacheable) {
        b->next = ct__alloc_state.free_list[b->cls];
        ct__alloc_state.free_list[b->cls] = b;
        ct__alloc_state.cached += b->bytes;
        keep = true;
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
    if (!keep) {
        CT__FREE_HOOK(ct__alloc_state.ctx, b->raw);
    }
}

void *ct__realloc(void *p, size_t bytes)
{
    if (!p) {
        return ct__malloc(bytes);
    }
    ct__block *b = ct__alloc_header(p);
    if (bytes <= b->bytes) {
        return p;
    }
    void *q = ct__malloc(bytes);
    if (!q) {
        return NULL;
    }
    memcpy(q, p, b->bytes);
    ct__free(p);
    return q;
}

size_t ct_memory_allocated(void) { return ct__alloc_state.allocated; }

size_t ct_memory_cached(void) { return ct__alloc_state.cached; }

size_t ct_max_memory_allocated(void) { return ct__alloc_state.peak; }

void ct_reset_peak_memory_stats(void) { ct__alloc_state.peak = ct__alloc_state.allocated; }

void ct_empty_cache(void)
{
    ct__mutex_lock(&ct__alloc_state.lock);
    for (int k = 0; k < CT__NCLASS; k++) {
        ct__block *b = ct__alloc_state.free_list[k];
        while (b) {
            ct__block *next = b->next;
            CT__FREE_HOOK(ct__alloc_state.ctx, b->raw);
            b = next;
        }
        ct__alloc_state.free_list[k] = NULL;
    }
    ct__alloc_state.cached = 0;
    ct__mutex_unlock(&ct__alloc_state.lock);
}

#undef CT__ALIGN
#undef CT__NCLASS
#undef CT__CACHE_LIMIT
#undef CT__NO_CACHE

// >>part core/dtype.c
/* core/dtype.c - dtype tables and the promotion lattice. */

static ct_dtype ct__dtype_default = CT_FLOAT32;

ct_device ct_device_cpu(void)
{
    ct_device d;
    d.type = CT_CPU;
    d.index = 0;
    return d;
}

bool ct__dtype_valid(ct_dtype d) { return d > CT_DTYPE_DEFAULT && d < CT_DTYPE_COUNT; }

const char *ct_dtype_name(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "default", "bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64",
    };
    return (d >= 0 && d < CT_DTYPE_COUNT) ? names[d] : "invalid";
}

size_t ct_dtype_size(ct_dtype d)
{
    static const size_t sizes[CT_DTYPE_COUNT] = {0, 1, 1, 1, 2, 4, 8, 4, 8};
    return ct__dtype_valid(d) ? sizes[d] : 0;
}

bool ct_dtype_is_floating_point(ct_dtype d) { return d == CT_FLOAT32 || d == CT_FLOAT64; }

bool ct_dtype_is_signed(ct_dtype d) { return ct__dtype_valid(d) && d != CT_BOOL && d != CT_UINT8; }

/* 0 bool, 1 integral, 2 floating */
int ct__dtype_category(ct_dtype d)
{
    return d == CT_BOOL ? 0 : ct_dtype_is_floating_point(d) ? 2 : 1;
}

ct_dtype ct_promote_types(ct_dtype a, ct_dtype b)
{
    a = ct__dtype_resolve(a);
    b = ct__dtype_resolve(b);
    if (a == b) {
        return a;
    }
    if (a == CT_BOOL) {
        return b;
    }
    if (b == CT_BOOL) {
        return a;
    }
    int ca = ct__dtype_category(a), cb = ct__dtype_category(b);
    if (ca != cb) {
        return ca > cb ? a : b;
    }
    if ((a == CT_UINT8 && b == CT_INT8) || (a == CT_INT8 && b == CT_UINT8)) {
        return CT_INT16;
    }
    return a > b ? a : b; /* enum order is size order within a category */
}

bool ct_can_cast(ct_dtype from, ct_dtype to)
{
    from = ct__dtype_resolve(from);
    to = ct__dtype_resolve(to);
    return ct__dtype_category(from) <= ct__dtype_category(to);
}

ct_status ct_set_default_dtype(ct_dtype d)
{
    if (!ct_dtype_is_floating_point(d)) {
        return ct__fail(CT_ERR_DTYPE, "ct_set_default_dtype",
                        "only floating-point types are supported as the default type, got %s",
                        ct_dtype_name(d));
    }
    ct__dtype_default = d;
    return CT_OK;
}

ct_dtype ct_get_default_dtype(void) { return ct__dtype_default; }

ct_dtype ct__dtype_resolve(ct_dtype d) { return d == CT_DTYPE_DEFAULT ? ct__dtype_default : d; }

// >>part core/tensor.c
/* core/tensor.c - tensor and storage objects, attributes, creation, printing. */


/* ---- storage ------------------------------------------------------------------------ */
static ct_storage *ct__storage_new(size_t nbytes)
{
    ct_storage *s = (ct_storage *)ct__calloc(sizeof(ct_storage));
    if (!s) {
        return NULL;
    }
    s->data = ct__malloc(nbytes ? nbytes : 1);
    if (!s->data) {
        ct__free(s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->refcount = 1;
    s->device = ct_device_cpu();
    return s;
}

void ct__storage_release(ct_storage *s)
{
    if (!s || CT__ATOMIC_ADD(&s->refcount, -1) > 0) {
        return;
    }
    if (s->borrowed) {
        if (s->deleter) {
            s->deleter(s->data, s->deleter_ctx);
        }
    } else {
        ct__free(s->data);
    }
    ct__free(s);
}

/* ---- tensor objects ----------------------------------------------------------------- */
int64_t ct__numel(const int64_t *sizes, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        n *= sizes[i];
    }
    return n;
}

void ct__contiguous_strides(const int64_t *sizes, int ndim, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

ct_tensor *ct__tensor_over(ct_storage *storage, ct_dtype dtype, const int64_t *sizes,
                           const int64_t *strides, int ndim, int64_t offset)
{
    ct_tensor *t = (ct_tensor *)ct__calloc(sizeof(ct_tensor));
    if (!t) {
        ct__fail(CT_ERR_OOM, "ct_tensor", "out of memory allocating a tensor");
        return NULL;
    }
    CT__ATOMIC_ADD(&storage->refcount, 1);
    t->storage = storage;
    t->dtype = dtype;
    t->ndim = ndim;
    t->offset = offset;
    t->refcount = 1;
    t->scope_depth = -1;
    for (int i = 0; i < ndim; i++) {
        t->sizes[i] = sizes[i];
        t->strides[i] = strides[i];
    }
    return t;
}

static bool ct__check_shape(const char *op, const int64_t *sizes, int ndim)
{
    if (ndim < 0 || ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, op, "number of dimensions %d is out of range [0, %d]", ndim,
                 CT_MAX_DIMS);
        return false;
    }
    if (ndim > 0 && !sizes) {
        ct__null(op, sizes);
        return false;
    }
    double total = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            char buf[160];
            ct__fail(CT_ERR_SHAPE, op, "Trying to create tensor with negative dimension "
                     "%lld: %s", (long long)sizes[i], ct__shape_str(sizes, ndim, buf, sizeof buf));
            return false;
        }
        total *= (double)sizes[i];
    }
    if (total > (double)(INT64_MAX / 16)) {
        ct__fail(CT_ERR_SHAPE, op, "tensor of %.0f elements is too large", total);
        return false;
    }
    return true;
}

ct_tensor *ct__tensor_new(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    dtype = ct__dtype_resolve(dtype);
    if (!ct__dtype_valid(dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "invalid dtype %d", (int)dtype);
        return NULL;
    }
    if (!ct__check_shape(op, sizes, ndim)) {
        return NULL;
    }
    int64_t strides[CT_MAX_DIMS];
    ct__contiguous_strides(sizes, ndim, strides);
    size_t nbytes = (size_t)ct__numel(sizes, ndim) * ct_dtype_size(dtype);
    ct_storage *s = ct__storage_new(nbytes);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "DefaultCPUAllocator: not enough memory: you tried to "
                 "allocate %zu bytes", nbytes);
        return NULL;
    }
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    return t;
}


void ct__release(ct_tensor *t)
{
    if (!t || CT__ATOMIC_ADD(&t->refcount, -1) > 0) {
        return;
    }
    ct__storage_release(t->storage);
    ct__release(t->grad);
    ct__node_release(t->grad_fn);
    for (ct__hook *h = t->hooks; h;) {
        ct__hook *next = h->next;
        ct__free(h);
        h = next;
    }
    ct__free(t);
}

ct_tensor *ct_retain(ct_tensor *t)
{
    if (t) {
        CT__ATOMIC_ADD(&t->refcount, 1);
    }
    return t;
}

/* ---- attributes --------------------------------------------------------------------- */
bool ct__null(const char *op, const void *p)
{
    if (p) {
        return false;
    }
    if (!ct_error()) {
        ct__fail(CT_ERR_NULL_ARG, op, "argument is NULL");
    }
    return true;
}

bool ct__check_cpu(const char *op, const ct_tensor *t)
{
    if (t->storage->device.type == CT_CPU) {
        return true;
    }
    ct__fail(CT_ERR_DEVICE, op, "expected a CPU tensor, got a tensor on device type %d",
             (int)t->storage->device.type);
    return false;
}

int ct__wrap_dim(const char *op, int64_t dim, int ndim)
{
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        ct__fail(CT_ERR_INDEX, op, "Dimension out of range (expected to be in range of "
                 "[%lld, %lld], but got %lld)", (long long)-n, (long long)(n - 1), (long long)dim);
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}

const char *ct__shape_str(const int64_t *sizes, int ndim, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && used < n; i++) {
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)sizes[i]);
    }
    if (used < n) {
        snprintf(buf + used, n - used, "]");
    }
    return buf;
}

int ct_dim(const ct_tensor *t) { return t ? t->ndim : -1; }

int64_t ct_size(const ct_tensor *t, int64_t dim)
{
    if (ct__null("ct_size", t)) {
        return -1;
    }
    int d = ct__wrap_dim("ct_size", dim, t->ndim);
    return (d < 0 || t->ndim == 0) ? -1 : t->sizes[d];
}

const int64_t *ct_sizes(const ct_tensor *t) { return t ? t->sizes : NULL; }

int64_t ct_stride(const ct_tensor *t, int64_t dim)
{
    if (ct__null("ct_stride", t)) {
        return -1;
    }
    int d = ct__wrap_dim("ct_stride", dim, t->ndim);
    return (d < 0 || t->ndim == 0) ? -1 : t->strides[d];
}

const int64_t *ct_strides(const ct_tensor *t) { return t ? t->strides : NULL; }

int64_t ct_storage_offset(const ct_tensor *t) { return t ? t->offset : 0; }

int64_t ct_numel(const ct_tensor *t) { return t ? ct__numel(t->sizes, t->ndim) : 0; }

ct_dtype ct_tensor_dtype(const ct_tensor *t) { return t ? t->dtype : CT_DTYPE_DEFAULT; }

ct_device ct_tensor_device(const ct_tensor *t)
{
    return t ? t->storage->device : ct_device_cpu();
}

size_t ct_element_size(const ct_tensor *t) { return t ? ct_dtype_size(t->dtype) : 0; }

size_t ct_nbytes(const ct_tensor *t) { return (size_t)ct_numel(t) * ct_element_size(t); }

void *ct_data_ptr(const ct_tensor *t) { return t ? ct__data(t) : NULL; }

bool ct_is_contiguous(const ct_tensor *t)
{
    if (!t) {
        return false;
    }
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) {
            return true;
        }
        if (t->sizes[i] != 1 && t->strides[i] != expected) {
            return false;
        }
        expected *= t->sizes[i];
    }
    return true;
}

bool ct_is_floating_point(const ct_tensor *t) { return t && ct_dtype_is_floating_point(t->dtype); }

uint32_t ct_version(const ct_tensor *t) { return t ? t->storage->version : 0; }

double ct__load_f64(const void *p, ct_dtype d)
{
    switch (d) {
    case CT_BOOL: return *(const bool *)p ? 1.0 : 0.0;
    case CT_UINT8: return *(const uint8_t *)p;
    case CT_INT8: return *(const int8_t *)p;
    case CT_INT16: return *(const int16_t *)p;
    case CT_INT32: return *(const int32_t *)p;
    case CT_INT64: return (double)*(const int64_t *)p;
    case CT_FLOAT32: return *(const float *)p;
    case CT_FLOAT64: return *(const double *)p;
    default: return 0;
    }
}

int64_t ct__load_i64(const void *p, ct_dtype d)
{
    switch (d) {
    case CT_INT64: return *(const int64_t *)p;
    case CT_FLOAT32: return (int64_t)*(const float *)p;
    case CT_FLOAT64: return (int64_t)*(const double *)p;
    default: return (int64_t)ct__load_f64(p, d);
    }
}

void ct__store_f64(void *p, ct_dtype d, double v)
{
    switch (d) {
    case CT_BOOL: *(bool *)p = v != 0; break;
    case CT_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case CT_INT8: *(int8_t *)p = (int8_t)(int64_t)v; break;
    case CT_INT16: *(int16_t *)p = (int16_t)(int64_t)v; break;
    case CT_INT32: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case CT_INT64: *(int64_t *)p = (int64_t)v; break;
    case CT_FLOAT32: *(float *)p = (float)v; break;
    case CT_FLOAT64: *(double *)p = v; break;
    default: break;
    }
}

static bool ct__item_check(const char *op, const ct_tensor *t)
{
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return false;
    }
    if (ct_numel(t) != 1) {
        ct__fail(CT_ERR_VALUE, op, "a Tensor with %lld elements cannot be converted to Scalar",
                 (long long)ct_numel(t));
        return false;
    }
    return true;
}

double ct_item(const ct_tensor *t)
{
    return ct__item_check("ct_item", t) ? ct__load_f64(ct__data(t), t->dtype) : NAN;
}

int64_t ct_item_int64(const ct_tensor *t)
{
    return ct__item_check("ct_item_int64", t) ? ct__load_i64(ct__data(t), t->dtype) : 0;
}

/* ---- creation ----------------------------------------------------------------------- */
/* Fills a fresh contiguous tensor with value. */
static void ct__fill_contig(ct_tensor *t, double value)
{
    int64_t n = ct_numel(t);
    char *p = ct__data(t);
    size_t es = ct_dtype_size(t->dtype);
    if (value == 0) {
        memset(p, 0, (size_t)n * es);
        return;
    }
    if (t->dtype == CT_FLOAT32) {
        float v = (float)value, *q = (float *)p;
        for (int64_t i = 0; i < n; i++) {
            q[i] = v;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        ct__store_f64(p + (size_t)i * es, t->dtype, value);
    }
}

ct_tensor *ct_empty(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__scoped(ct__tensor_new("ct_empty", sizes, ndim, dtype));
}

ct_tensor *ct_full(const int64_t *sizes, int ndim, double value, ct_dtype dtype)
{
    ct_tensor *t = ct__tensor_new("ct_full", sizes, ndim, dtype);
    if (t) {
        ct__fill_contig(t, value);
    }
    return ct__scoped(t);
}

ct_tensor *ct_zeros(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct_full(sizes, ndim, 0.0, dtype);
}

ct_tensor *ct_ones(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct_full(sizes, ndim, 1.0, dtype);
}

ct_tensor *ct_scalar_tensor(double value, ct_dtype dtype) { return ct_full(NULL, 0, value, dtype); }

ct_tensor *ct_empty_like(const ct_tensor *t)
{
    return t ? ct_empty(t->sizes, t->ndim, t->dtype) : NULL;
}

ct_tensor *ct_full_like(const ct_tensor *t, double value)
{
    return t ? ct_full(t->sizes, t->ndim, value, t->dtype) : NULL;
}

ct_tensor *ct_zeros_like(const ct_tensor *t) { return ct_full_like(t, 0.0); }

ct_tensor *ct_ones_like(const ct_tensor *t) { return ct_full_like(t, 1.0); }

ct_tensor *ct_tensor_from_data(const void *data, ct_dtype dtype, const int64_t *sizes, int ndim)
{
    ct_tensor *t = ct__tensor_new("ct_tensor_from_data", sizes, ndim, dtype);
    if (!t) {
        return NULL;
    }
    size_t nbytes = ct_nbytes(t);
    if (nbytes && !data) {
        ct__release(t);
        ct__null("ct_tensor_from_data", data);
        return NULL;
    }
    if (nbytes) {
        memcpy(ct__data(t), data, nbytes);
    }
    return ct__scoped(t);
}

ct_tensor *ct_from_blob(void *data, ct_dtype dtype, const int64_t *sizes, int ndim,
                        void (*deleter)(void *data, void *ctx), void *ctx)
{
    const char *op = "ct_from_blob";
    dtype = ct__dtype_resolve(dtype);
    if (ct__null(op, data) || !ct__check_shape(op, sizes, ndim)) {
        return NULL;
    }
    if (!ct__dtype_valid(dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "invalid dtype %d", (int)dtype);
        return NULL;
    }
    ct_storage *s = (ct_storage *)ct__calloc(sizeof(ct_storage));
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->data = data;
    s->nbytes = (size_t)ct__numel(sizes, ndim) * ct_dtype_size(dtype);
    s->refcount = 1;
    s->device = ct_device_cpu();
    s->borrowed = true;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    int64_t strides[CT_MAX_DIMS];
    ct__contiguous_strides(sizes, ndim, strides);
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    return ct__scoped(t);
}

ct_tensor *ct_arange(double start, double end, double step, ct_dtype dtype)
{
    const char *op = "ct_arange";
    if (step == 0) {
        ct__fail(CT_ERR_VALUE, op, "step must be nonzero");
        return NULL;
    }
    if ((step > 0 && end < start) || (step < 0 && end > start)) {
        ct__fail(CT_ERR_VALUE, op, "upper bound and larger bound inconsistent with step sign");
        return NULL;
    }
    int64_t n = (int64_t)ceil((end - start) / step);
    ct_tensor *t = ct__tensor_new(op, &n, 1, dtype);
    if (!t) {
        return NULL;
    }
    size_t es = ct_dtype_size(t->dtype);
    for (int64_t i = 0; i < n; i++) {
        ct__store_f64(ct__data(t) + (size_t)i * es, t->dtype, start + (double)i * step);
    }
    return ct__scoped(t);
}

ct_tensor *ct_linspace(double start, double end, int64_t steps, ct_dtype dtype)
{
    if (steps < 0) {
        ct__fail(CT_ERR_VALUE, "ct_linspace", "number of steps must be non-negative");
        return NULL;
    }
    ct_tensor *t = ct__tensor_new("ct_linspace", &steps, 1, dtype);
    if (!t) {
        return NULL;
    }
    size_t es = ct_dtype_size(t->dtype);
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; i++) {
        /* PyTorch fills the second half backwards from end for symmetry */
        double v = i < half ? start + step * (double)i : end - step * (double)(steps - 1 - i);
        ct__store_f64(ct__data(t) + (size_t)i * es, t->dtype, v);
    }
    return ct__scoped(t);
}

ct_tensor *ct_eye(int64_t n, int64_t m, ct_dtype dtype)
{
    int64_t sizes[2] = {n, m < 0 ? n : m};
    ct_tensor *t = ct__tensor_new("ct_eye", sizes, 2, dtype);
    if (!t) {
        return NULL;
    }
    ct__fill_contig(t, 0);
    size_t es = ct_dtype_size(t->dtype);
    for (int64_t i = 0; i < sizes[0] && i < sizes[1]; i++) {
        ct__store_f64(ct__data(t) + (size_t)(i * sizes[1] + i) * es, t->dtype, 1.0);
    }
    return ct__scoped(t);
}

/* ---- printing ----------------------------------------------------------------------- */
typedef struct ct__sbuf {
    char *buf;
    size_t cap, len;
} ct__sbuf;

static void ct__sbuf_put(ct__sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->len < b->cap ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->buf + b->len : NULL, room, fmt, ap);
    va_end(ap);
    b->len += n > 0 ? (size_t)n : 0;
}

/* Formats one element: floats with 4 decimals (PyTorch's default precision), or with a
   trailing "." when every value of the tensor is integral. */
static void ct__print_elem(ct__sbuf *b, const ct_tensor *t, const char *p, bool ints, int width)
{
    if (t->dtype == CT_BOOL) {
        ct__sbuf_put(b, "%*s", width, *(const bool *)p ? "True" : "False");
    } else if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__sbuf_put(b, "%*lld", width, (long long)ct__load_i64(p, t->dtype));
    } else if (ints) {
        ct__sbuf_put(b, "%*.0f.", width - 1, ct__load_f64(p, t->dtype));
    } else {
        ct__sbuf_put(b, "%*.4f", width, ct__load_f64(p, t->dtype));
    }
}

static void ct__print_rec(ct__sbuf *b, const ct_tensor *t, int dim, const char *p, bool ints,
                          int width)
{
    if (dim == t->ndim) {
        ct__print_elem(b, t, p, ints, width);
        return;
    }
    size_t es = ct_dtype_size(t->dtype);
    ct__sbuf_put(b, "[");
    for (int64_t i = 0; i < t->sizes[dim]; i++) {
        if (i > 0) {
            ct__sbuf_put(b, dim == t->ndim - 1 ? ", " : ",\n");
            if (dim < t->ndim - 1) {
                ct__sbuf_put(b, "%*s", 8 + dim, "");
            }
        }
        ct__print_rec(b, t, dim + 1, p + (size_t)(i * t->strides[dim]) * es, ints, width);
    }
    ct__sbuf_put(b, "]");
}

static void ct__print_width(const ct_tensor *t, bool *ints, int *width)
{
    int64_t n = ct_numel(t);
    int64_t idx[CT_MAX_DIMS] = {0};
    size_t es = ct_dtype_size(t->dtype);
    *ints = true;
    *width = t->dtype == CT_BOOL ? 5 : 1;
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim; d++) {
            off += idx[d] * t->strides[d];
        }
        double v = ct__load_f64(ct__data(t) + (size_t)off * es, t->dtype);
        if (v != floor(v) || isinf(v)) {
            *ints = false;
        }
        char tmp[64];
        int w = snprintf(tmp, sizeof tmp, ct_dtype_is_floating_point(t->dtype) ? "%.4f" : "%.0f", v);
        *width = w > *width ? w : *width;
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->sizes[d]; d--) {
            idx[d] = 0;
        }
    }
    if (*ints && ct_dtype_is_floating_point(t->dtype)) {
        *width -= 4; /* "%.4f" counted ".0000"; integral floats print as "3." */
    }
}

size_t ct_to_string(const ct_tensor *t, char *buf, size_t n)
{
    ct__sbuf b = {buf, n, 0};
    if (!t) {
        ct__sbuf_put(&b, "NULL");
        return b.len;
    }
    bool ints = true;
    int width = 1;
    ct__print_width(t, &ints, &width);
    ct__sbuf_put(&b, "tensor(");
    if (ct_numel(t) == 0) {
        ct__sbuf_put(&b, "[]");
    } else {
        ct__print_rec(&b, t, 0, ct__data(t), ints, t->ndim ? width : 0);
    }
    if (t->dtype != ct_get_default_dtype() && t->dtype != CT_INT64 && t->dtype != CT_BOOL) {
        ct__sbuf_put(&b, ", dtype=torch.%s", ct_dtype_name(t->dtype));
    }
    if (t->grad_fn) {
        ct__sbuf_put(&b, ", grad_fn=<%s>", ct__node_name(t->grad_fn));
    } else if (t->requires_grad) {
        ct__sbuf_put(&b, ", requires_grad=True");
    }
    ct__sbuf_put(&b, ")");
    return b.len;
}

#ifndef CTORCH_NO_STDIO
void ct_print(const ct_tensor *t, FILE *f)
{
    size_t n = ct_to_string(t, NULL, 0) + 1;
    char *s = (char *)ct__malloc(n);
    if (!s) {
        return;
    }
    ct_to_string(t, s, n);
    fprintf(f, "%s\n", s);
    ct__free(s);
}
#endif

// >>part core/scope.c
/* core/scope.c - per-thread stack of scopes, each an array of owned tensors. */

#define CT__MAX_SCOPES 64

typedef struct ct__scope {
    ct_tensor **items;
    int64_t len, cap;
} ct__scope;

static CT__THREAD_LOCAL ct__scope ct__scopes[CT__MAX_SCOPES];
static CT__THREAD_LOCAL int ct__scope_top = 0; /* number of open scopes */

int ct_scope_depth(void) { return ct__scope_top; }

ct_status ct_scope_begin(void)
{
    if (ct__scope_top == CT__MAX_SCOPES) {
        return ct__fail(CT_ERR_STATE, "ct_scope_begin", "more than %d nested scopes",
                        CT__MAX_SCOPES);
    }
    ct__scopes[ct__scope_top].len = 0;
    ct__scope_top++;
    return CT_OK;
}

/* Appends t to scope depth; false when out of memory. */
static bool ct__scope_push(int depth, ct_tensor *t)
{
    ct__scope *s = &ct__scopes[depth];
    if (s->len == s->cap) {
        int64_t cap = s->cap ? s->cap * 2 : 256;
        ct_tensor **items = (ct_tensor **)ct__realloc(s->items, (size_t)cap * sizeof *items);
        if (!items) {
            return false;
        }
        s->items = items;
        s->cap = cap;
    }
    t->scope_depth = depth;
    t->scope_slot = s->len;
    s->items[s->len++] = t;
    return true;
}

ct_tensor *ct__scoped(ct_tensor *t)
{
    if (!t || ct__scope_top == 0) {
        return t;
    }
    if (!ct__scope_push(ct__scope_top - 1, t)) {
        ct__release(t);
        ct__fail(CT_ERR_OOM, "ct_scope", "out of memory growing the scope");
        return NULL;
    }
    return t;
}

/* Takes t out of its scope's list, if it is in one of this thread's open scopes. */
static bool ct__scope_detach(ct_tensor *t)
{
    int d = t->scope_depth;
    if (d < 0 || d >= ct__scope_top || t->scope_slot >= ct__scopes[d].len ||
        ct__scopes[d].items[t->scope_slot] != t) {
        return false;
    }
    ct__scopes[d].items[t->scope_slot] = NULL;
    t->scope_depth = -1;
    return true;
}

ct_status ct_scope_end(void)
{
    if (ct__scope_top == 0) {
        return ct__fail(CT_ERR_STATE, "ct_scope_end", "no scope is open");
    }
    ct__scope *s = &ct__scopes[ct__scope_top - 1];
    for (int64_t i = 0; i < s->len; i++) {
        ct_tensor *t = s->items[i];
        if (t) {
            t->scope_depth = -1;
            ct__release(t);
        }
    }
    s->len = 0;
    ct__scope_top--;
    if (ct__scope_top == 0) {
        for (int d = 0; d < CT__MAX_SCOPES; d++) { /* give the lists back when idle */
            ct__free(ct__scopes[d].items);
            ct__scopes[d].items = NULL;
            ct__scopes[d].cap = 0;
        }
    }
    return CT_OK;
}

ct_tensor *ct_keep(ct_tensor *t)
{
    int parent = t ? t->scope_depth - 1 : -1;
    if (!t || !ct__scope_detach(t)) {
        return t;
    }
    if (parent >= 0 && !ct__scope_push(parent, t)) {
        ct__fail(CT_ERR_OOM, "ct_keep", "out of memory growing the scope");
    }
    return t;
}

void ct_free(ct_tensor *t)
{
    if (!t) {
        return;
    }
    ct__scope_detach(t);
    ct__release(t);
}

#undef CT__MAX_SCOPES

// >>part core/parallel.c
/* core/parallel.c - intra-op thread count and the parallel-for helper. */

#ifdef _OPENMP
#include <omp.h>
#endif

static int ct__num_threads = 0; /* 0: not yet decided */

ct_status ct_set_num_threads(int n)
{
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, "ct_set_num_threads",
                        "Expected positive number of threads, got %d", n);
    }
    ct__num_threads = n;
    return CT_OK;
}

#ifdef _OPENMP
static int ct__env_threads(const char *name)
{
    const char *v = getenv(name);
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : 0;
}
#endif

int ct_get_num_threads(void)
{
#ifdef _OPENMP
    if (ct__num_threads == 0) {
        int n = ct__env_threads("CTORCH_NUM_THREADS");
        if (!n) {
            n = ct__env_threads("OMP_NUM_THREADS");
        }
        ct__num_threads = n ? n : omp_get_num_procs();
    }
    return ct__num_threads;
#else
    return 1;
#endif
}

void ct__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void *ctx),
                      void *ctx)
{
    if (n <= 0) {
        return;
    }
#ifdef _OPENMP
    int nt = ct_get_num_threads();
    int64_t chunks = grain > 0 ? n / grain : n;
    if (nt > 1 && chunks > 1 && !omp_in_parallel()) {
        if (chunks < nt) {
            nt = (int)chunks;
        }
#pragma omp parallel num_threads(nt)
        {
            int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
            int64_t per = (n + cnt - 1) / cnt;
            int64_t b = per * tid, e = b + per < n ? b + per : n;
            if (b < e) {
                fn(b, e, ctx);
            }
        }
        return;
    }
#else
    (void)grain;
#endif
    fn(0, n, ctx);
}

void ct__mutex_lock(ct__mutex *m)
{
#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
    while (__atomic_exchange_n(&m->locked, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&m->locked, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    }
#else
    m->locked = 1;
#endif
}

void ct__mutex_unlock(ct__mutex *m)
{
#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
    __atomic_store_n(&m->locked, 0, __ATOMIC_RELEASE);
#else
    m->locked = 0;
#endif
}

// >>part core/rng.c
/* core/rng.c - mt19937 and PyTorch's CPU sampling algorithms. */

#define CT__MT_N 624
#define CT__MT_M 397

struct ct_generator {
    uint32_t state[CT__MT_N];
    int index;
    uint64_t seed;
    bool has_next_normal; /* cached second Box-Muller sample (double path) */
    double next_normal;
};

static ct_generator ct__default_gen;
static bool ct__default_gen_ready = false;

void ct_generator_manual_seed(ct_generator *g, uint64_t seed)
{
    if (!g) {
        g = ct_default_generator();
    }
    g->seed = seed;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int j = 1; j < CT__MT_N; j++) {
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + (uint32_t)j;
    }
    g->index = CT__MT_N;
    g->has_next_normal = false;
}

ct_generator *ct_generator_new(void)
{
    ct_generator *g = (ct_generator *)ct__calloc(sizeof(ct_generator));
    if (!g) {
        ct__fail(CT_ERR_OOM, "ct_generator_new", "out of memory");
        return NULL;
    }
    ct_generator_manual_seed(g, 67280421310721ull);
    return g;
}

void ct_generator_free(ct_generator *g) { ct__free(g); }

ct_generator *ct_default_generator(void)
{
    if (!ct__default_gen_ready) {
        ct__default_gen_ready = true;
        ct_generator_manual_seed(&ct__default_gen, 67280421310721ull);
    }
    return &ct__default_gen;
}

void ct_manual_seed(uint64_t seed) { ct_generator_manual_seed(ct_default_generator(), seed); }

uint64_t ct_generator_initial_seed(const ct_generator *g)
{
    return g ? g->seed : ct_default_generator()->seed;
}

static uint32_t ct__mt_next(ct_generator *g)
{
    if (g->index >= CT__MT_N) {
        for (int k = 0; k < CT__MT_N; k++) {
            uint32_t y = (g->state[k] & 0x80000000u) | (g->state[(k + 1) % CT__MT_N] & 0x7fffffffu);
            g->state[k] = g->state[(k + CT__MT_M) % CT__MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->index = 0;
    }
    uint32_t y = g->state[g->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static uint64_t ct__mt_next64(ct_generator *g)
{
    uint64_t hi = ct__mt_next(g), lo = ct__mt_next(g);
    return (hi << 32) | lo;
}

/* PyTorch's uniform_real_distribution: 24 random bits for float, 53 for double. */
static double ct__uniform(ct_generator *g, ct_dtype dt, double from, double to)
{
    if (dt == CT_FLOAT64) {
        double x = (double)(ct__mt_next64(g) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
        return x * (to - from) + from;
    }
    float x = (float)(ct__mt_next(g) & ((1u << 24) - 1)) * (1.0f / 16777216.0f);
    return (double)(x * ((float)to - (float)from) + (float)from);
}

/* PyTorch's normal_distribution<double> (Box-Muller with a cached second sample). */
static double ct__normal_scalar(ct_generator *g, double mean, double std)
{
    if (g->has_next_normal) {
        g->has_next_normal = false;
        return g->next_normal * std + mean;
    }
    double u1 = ct__uniform(g, CT_FLOAT64, 0, 1), u2 = ct__uniform(g, CT_FLOAT64, 0, 1);
    double r = sqrt(-2.0 * log1p(-u2)), theta = 2.0 * 3.14159265358979323846 * u1;
    g->has_next_normal = true;
    g->next_normal = r * sin(theta);
    return r * cos(theta) * std + mean;
}

/* PyTorch's normal_fill_16: Box-Muller over 8 pairs (data[j], data[j + 8]) of uniforms. */
static void ct__normal_fill16(double *d, double mean, double std)
{
    for (int j = 0; j < 8; j++) {
        double u1 = 1 - d[j], u2 = d[j + 8];
        double radius = sqrt(-2 * log(u1)), theta = 2.0 * 3.14159265358979323846 * u2;
        d[j] = radius * cos(theta) * std + mean;
        d[j + 8] = radius * sin(theta) * std + mean;
    }
}

static bool ct__check_float_fill(const char *op, const ct_tensor *t)
{
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return false;
    }
    if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for '%s'", op, ct_dtype_name(t->dtype));
        return false;
    }
    return true;
}

/* Writes the i-th element (row-major order) of t. */
static void ct__store_nth(ct_tensor *t, int64_t i, double v)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->sizes[d]) * t->strides[d];
        i /= t->sizes[d];
    }
    ct__store_f64(ct__data(t) + (size_t)off * ct_dtype_size(t->dtype), t->dtype, v);
}

ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g)
{
    if (!ct__check_float_fill("ct_uniform_", self) || !ct__check_inplace("ct_uniform_", self)) {
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t n = ct_numel(self);
    for (int64_t i = 0; i < n; i++) {
        ct__store_nth(self, i, ct__uniform(g, self->dtype, from, to));
    }
    ct__bump_version(self);
    return self;
}

ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g)
{
    const char *op = "ct_normal_";
    if (!ct__check_float_fill(op, self) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    if (std < 0) {
        ct__fail(CT_ERR_VALUE, op, "normal expects std >= 0.0, but found std %g", std);
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t n = ct_numel(self);
    if (n >= 16 && ct_is_contiguous(self)) {
        double *d = (double *)ct__malloc(sizeof(double) * (size_t)n);
        if (!d) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return NULL;
        }
        for (int64_t i = 0; i < n; i++) {
            d[i] = ct__uniform(g, self->dtype, 0, 1);
        }
        for (int64_t i = 0; i + 16 <= n; i += 16) {
            ct__normal_fill16(d + i, mean, std);
        }
        if (n % 16 != 0) { /* recompute the last 16 from fresh uniforms */
            for (int64_t i = n - 16; i < n; i++) {
                d[i] = ct__uniform(g, self->dtype, 0, 1);
            }
            ct__normal_fill16(d + n - 16, mean, std);
        }
        for (int64_t i = 0; i < n; i++) {
            ct__store_nth(self, i, d[i]);
        }
        ct__free(d);
    } else {
        for (int64_t i = 0; i < n; i++) {
            ct__store_nth(self, i, ct__normal_scalar(g, mean, std));
        }
    }
    ct__bump_version(self);
    return self;
}

ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g)
{
    const char *op = "ct_bernoulli_";
    if (ct__null(op, self) || !ct__check_cpu(op, self) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    if (!(p >= 0 && p <= 1)) {
        ct__fail(CT_ERR_VALUE, op, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t n = ct_numel(self);
    for (int64_t i = 0; i < n; i++) {
        ct__store_nth(self, i, ct__uniform(g, CT_FLOAT64, 0, 1) < p ? 1.0 : 0.0);
    }
    ct__bump_version(self);
    return self;
}

static ct_tensor *ct__random_new(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    ct_tensor *t = ct__tensor_new(op, sizes, ndim, dtype);
    if (t && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for '%s'", op, ct_dtype_name(t->dtype));
        ct__release(t);
        return NULL;
    }
    return t;
}

ct_tensor *ct_rand(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    ct_tensor *t = ct__random_new("ct_rand", sizes, ndim, dtype);
    return t ? ct__scoped(ct_uniform_(t, 0, 1, g)) : NULL;
}

ct_tensor *ct_randn(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    ct_tensor *t = ct__random_new("ct_randn", sizes, ndim, dtype);
    return t ? ct__scoped(ct_normal_(t, 0, 1, g)) : NULL;
}

ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g)
{
    return t ? ct_rand(t->sizes, t->ndim, t->dtype, g) : NULL;
}

ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g)
{
    return t ? ct_randn(t->sizes, t->ndim, t->dtype, g) : NULL;
}

ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim, ct_dtype dtype,
                      ct_generator *g)
{
    const char *op = "ct_randint";
    if (low >= high) {
        ct__fail(CT_ERR_VALUE, op, "random_ expects 'from' to be less than 'to', but got "
                 "from=%lld >= to=%lld", (long long)low, (long long)high);
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(op, sizes, ndim, dtype == CT_DTYPE_DEFAULT ? CT_INT64 : dtype);
    if (!t) {
        return NULL;
    }
    g = g ? g : ct_default_generator();
    uint64_t range = (uint64_t)high - (uint64_t)low;
    int64_t n = ct_numel(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = range >= (1ull << 32) ? ct__mt_next64(g) : ct__mt_next(g);
        ct__store_f64(ct__data(t) + (size_t)i * ct_dtype_size(t->dtype), t->dtype,
                      (double)(int64_t)(r % range + (uint64_t)low));
    }
    return ct__scoped(t);
}

ct_tensor *ct_randperm(int64_t n, ct_generator *g)
{
    const char *op = "ct_randperm";
    if (n < 0) {
        ct__fail(CT_ERR_VALUE, op, "n must be non-negative, got%lld", (long long)n);
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(op, &n, 1, CT_INT64);
    if (!t) {
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t *r = (int64_t *)ct__data(t);
    for (int64_t i = 0; i < n; i++) {
        r[i] = i;
    }
    for (int64_t i = 0; i < n - 1; i++) { /* PyTorch's CPU Fisher-Yates */
        uint64_t bits = n < (1 << 24) ? ct__mt_next(g) : ct__mt_next64(g);
        int64_t z = (int64_t)(bits % (uint64_t)(n - i));
        int64_t tmp = r[i];
        r[i] = r[z + i];
        r[z + i] = tmp;
    }
    return ct__scoped(t);
}

#undef CT__MT_N
#undef CT__MT_M

// >>part ops/iter.c
/* ops/iter.c - the shared strided iterator (PyTorch's TensorIterator idea) and the
 * dtype-converting copy kernel.
 *
 * Legend: nops operands (0 = output), ndim collapsed dims, strides in bytes.
 * Determinism: elementwise results do not depend on the thread count or the chunking.
 */

bool ct__broadcast_shapes(const char *op, const int64_t *a, int na, const int64_t *b, int nb,
                          int64_t *out, int *nout)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            ct__fail(CT_ERR_SHAPE, op, "The size of tensor a (%lld) must match the size of "
                     "tensor b (%lld) at non-singleton dimension %d", (long long)sa,
                     (long long)sb, i);
            return false;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return true;
}

void ct__iter_build(ct__iter *it, ct_tensor *out, const ct_tensor *const *inputs, int n_inputs)
{
    const ct_tensor *ops[CT__ITER_MAX_OPS];
    ops[0] = out;
    for (int k = 0; k < n_inputs; k++) {
        ops[k + 1] = inputs[k];
    }
    it->nops = n_inputs + 1;
    /* right-align every operand to out's shape; broadcast dims get stride 0 */
    int nd = 0;
    for (int d = 0; d < out->ndim; d++) {
        if (out->sizes[d] == 1) {
            continue; /* size-1 dims never advance */
        }
        it->sizes[nd] = out->sizes[d];
        for (int k = 0; k < it->nops; k++) {
            const ct_tensor *t = ops[k];
            int td = d - (out->ndim - t->ndim);
            bool bcast = td < 0 || t->sizes[td] == 1;
            it->strides[k][nd] = bcast ? 0 : t->strides[td] * (int64_t)ct_dtype_size(t->dtype);
        }
        nd++;
    }
    for (int k = 0; k < it->nops; k++) {
        it->data[k] = ct__data(ops[k]);
    }
    /* collapse d-1 into d when every operand steps contiguously across the pair */
    int w = 0;
    for (int d = 0; d < nd; d++) {
        if (w > 0) {
            bool merge = true;
            for (int k = 0; k < it->nops && merge; k++) {
                merge = it->strides[k][w - 1] == it->strides[k][d] * it->sizes[d];
            }
            if (merge) {
                it->sizes[w - 1] *= it->sizes[d];
                for (int k = 0; k < it->nops; k++) {
                    it->strides[k][w - 1] = it->strides[k][d];
                }
                continue;
            }
        }
        it->sizes[w] = it->sizes[d];
        for (int k = 0; k < it->nops; k++) {
            it->strides[k][w] = it->strides[k][d];
        }
        w++;
    }
    if (w == 0) { /* a single element */
        it->sizes[0] = ct_numel(out) ? 1 : 0;
        for (int k = 0; k < it->nops; k++) {
            it->strides[k][0] = 0;
        }
        w = 1;
    }
    if (ct_numel(out) == 0) {
        it->sizes[0] = 0;
    }
    it->ndim = w;
}

typedef struct ct__iter_job {
    const ct__iter *it;
    ct__loop_fn loop;
    const void *params;
} ct__iter_job;

/* Runs the elements [begin, end) of the flattened iteration space. */
static void ct__iter_chunk(int64_t begin, int64_t end, void *ctx)
{
    const ct__iter_job *job = (const ct__iter_job *)ctx;
    const ct__iter *it = job->it;
    int nd = it->ndim, inner = nd - 1;
    int64_t idx[CT_MAX_DIMS];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % it->sizes[d];
        rem /= it->sizes[d];
    }
    int64_t inner_strides[CT__ITER_MAX_OPS];
    for (int k = 0; k < it->nops; k++) {
        inner_strides[k] = it->strides[k][inner];
    }
    int64_t pos = begin;
    while (pos < end) {
        char *ptrs[CT__ITER_MAX_OPS];
        for (int k = 0; k < it->nops; k++) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++) {
                off += idx[d] * it->strides[k][d];
            }
            ptrs[k] = it->data[k] + off;
        }
        int64_t n = it->sizes[inner] - idx[inner];
        if (n > end - pos) {
            n = end - pos;
        }
        job->loop(ptrs, inner_strides, n, job->params);
        pos += n;
        idx[inner] += n;
        for (int d = inner; d > 0 && idx[d] >= it->sizes[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

void ct__iter_run(const ct__iter *it, ct__loop_fn loop, const void *params)
{
    int64_t total = 1;
    for (int d = 0; d < it->ndim; d++) {
        total *= it->sizes[d];
    }
    ct__iter_job job = {it, loop, params};
    ct__parallel_for(total, CT__GRAIN, ct__iter_chunk, &job);
}

/* ---- copy with conversion: one loop per (dst, src) dtype pair ------------------------ */
#define CT__COPY_LOOP(DE, DT, DS, SE, ST, SS)                                              \
    static void ct__copy_##DS##_##SS(char **d, const int64_t *s, int64_t n, const void *p)  \
    {                                                                                       \
        (void)p;                                                                            \
        if (s[0] == sizeof(DT) && s[1] == sizeof(ST)) {                                     \
            DT *o = (DT *)d[0];                                                             \
            const ST *a = (const ST *)d[1];                                                 \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = (DT)a[i];                                                            \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(DT *)(d[0] + i * s[0]) = (DT) * (const ST *)(d[1] + i * s[1]);                \
        }                                                                                   \
    }
#define CT__COPY_FROM(SE, ST, SS)                                                          \
    CT__COPY_LOOP(CT_BOOL, bool, b8, SE, ST, SS)                                            \
    CT__COPY_LOOP(CT_UINT8, uint8_t, u8, SE, ST, SS)                                        \
    CT__COPY_LOOP(CT_INT8, int8_t, i8, SE, ST, SS)                                          \
    CT__COPY_LOOP(CT_INT16, int16_t, i16, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_INT32, int32_t, i32, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_INT64, int64_t, i64, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_FLOAT32, float, f32, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_FLOAT64, double, f64, SE, ST, SS)
CT__FOR_ALL_DTYPES(CT__COPY_FROM)

static ct__loop_fn ct__copy_loop(ct_dtype dst, ct_dtype src)
{
    switch (dst) {
#define CT__CASE_DST(DE, DT, DSX)                                                          \
    case DE:                                                                                \
        switch (src) {                                                                      \
        CT__COPY_CASES_##DSX                                                                \
        default: return NULL;                                                               \
        }
#define CT__COPY_CASES(DSX)                                                                \
        case CT_BOOL: return ct__copy_##DSX##_b8;                                           \
        case CT_UINT8: return ct__copy_##DSX##_u8;                                          \
        case CT_INT8: return ct__copy_##DSX##_i8;                                           \
        case CT_INT16: return ct__copy_##DSX##_i16;                                         \
        case CT_INT32: return ct__copy_##DSX##_i32;                                         \
        case CT_INT64: return ct__copy_##DSX##_i64;                                         \
        case CT_FLOAT32: return ct__copy_##DSX##_f32;                                       \
        case CT_FLOAT64: return ct__copy_##DSX##_f64;
#define CT__COPY_CASES_b8 CT__COPY_CASES(b8)
#define CT__COPY_CASES_u8 CT__COPY_CASES(u8)
#define CT__COPY_CASES_i8 CT__COPY_CASES(i8)
#define CT__COPY_CASES_i16 CT__COPY_CASES(i16)
#define CT__COPY_CASES_i32 CT__COPY_CASES(i32)
#define CT__COPY_CASES_i64 CT__COPY_CASES(i64)
#define CT__COPY_CASES_f32 CT__COPY_CASES(f32)
#define CT__COPY_CASES_f64 CT__COPY_CASES(f64)
        CT__FOR_ALL_DTYPES(CT__CASE_DST)
    default: return NULL;
    }
#undef CT__CASE_DST
#undef CT__COPY_CASES
#undef CT__COPY_CASES_b8
#undef CT__COPY_CASES_u8
#undef CT__COPY_CASES_i8
#undef CT__COPY_CASES_i16
#undef CT__COPY_CASES_i32
#undef CT__COPY_CASES_i64
#undef CT__COPY_CASES_f32
#undef CT__COPY_CASES_f64
}

void ct__copy_kernel(ct_tensor *dst, const ct_tensor *src)
{
    ct__iter it;
    ct__iter_build(&it, dst, &src, 1);
    ct__iter_run(&it, ct__copy_loop(dst->dtype, src->dtype), NULL);
}

#undef CT__COPY_LOOP
#undef CT__COPY_FROM

// >>part ops/pointwise.c
/* ops/pointwise.c - elementwise kernels, their meta layer and derivative formulas.
 *
 * Legend: out (broadcast shape), a/b (operands broadcast to out), g (gradient of out).
 * Each kernel is an inner loop over n elements with byte strides s[0] (out), s[1] (a),
 * s[2] (b); the contiguous case is a separate flat loop the compiler vectorizes.
 * The per-element math is in small inline functions, one per op and dtype.
 */

typedef enum ct__binop {
    CT__ADD, CT__SUB, CT__MUL, CT__DIV, CT__POW, CT__MAXIMUM, CT__MINIMUM,
    CT__EQ, CT__NE, CT__LT, CT__LE, CT__GT, CT__GE, CT__AND, CT__OR,
    CT__RELU_BW, CT__SIGMOID_BW, CT__TANH_BW, CT__BINOP_COUNT
} ct__binop;

typedef enum ct__unop {
    CT__NEG, CT__ABS, CT__RELU, CT__SQUARE, CT__SIGN, /* every numeric dtype */
    CT__EXP, CT__LOG, CT__LOG1P, CT__SQRT, CT__RSQRT, CT__SIN, CT__COS, CT__SIGMOID,
    CT__TANH, CT__RECIPROCAL, CT__CLAMP, CT__POWS, CT__NOT, CT__UNOP_COUNT
} ct__unop;

/* ---- per-element math ---------------------------------------------------------------- */
/* v < 0 for any integer type (a call, so unsigned types raise no always-false warning) */
static inline bool ct__is_neg(int64_t v) { return v < 0; }

#define CT__INT_MATH(E, T, S)                                                              \
    static inline T ct__add_##S(T x, T y, T alpha) { return (T)(x + alpha * y); }           \
    static inline T ct__sub_##S(T x, T y, T alpha) { return (T)(x - alpha * y); }           \
    static inline T ct__mul_##S(T x, T y, T alpha) { (void)alpha; return (T)(x * y); }      \
    static inline T ct__maximum_##S(T x, T y, T alpha) { (void)alpha; return x > y ? x : y; } \
    static inline T ct__minimum_##S(T x, T y, T alpha) { (void)alpha; return x < y ? x : y; } \
    static inline T ct__pow_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        (void)alpha;                                                                        \
        T r = 1;                                                                            \
        if (ct__is_neg(y)) {                                                               \
            return (T)(x == 1 ? 1 : (x == (T)-1 ? ((y & 1) ? -1 : 1) : 0));                 \
        }                                                                                   \
        for (; y > 0; y = (T)(y >> 1), x = (T)(x * x)) {                                    \
            if (y & 1) {                                                                    \
                r = (T)(r * x);                                                             \
            }                                                                               \
        }                                                                                   \
        return r;                                                                           \
    }
#define CT__FLOAT_MATH(E, T, S, F)                                                         \
    static inline T ct__add_##S(T x, T y, T alpha) { return x + alpha * y; }                \
    static inline T ct__sub_##S(T x, T y, T alpha) { return x - alpha * y; }                \
    static inline T ct__mul_##S(T x, T y, T alpha) { (void)alpha; return x * y; }           \
    static inline T ct__div_##S(T x, T y, T alpha) { (void)alpha; return x / y; }           \
    static inline T ct__pow_##S(T x, T y, T alpha) { (void)alpha; return pow##F(x, y); }    \
    static inline T ct__maximum_##S(T x, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (x != x || x > y) ? x : y;                                                   \
    }                                                                                       \
    static inline T ct__minimum_##S(T x, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (x != x || x < y) ? x : y;                                                   \
    }                                                                                       \
    static inline T ct__relu_bw_##S(T g, T x, T alpha) { (void)alpha; return x > 0 ? g : 0; } \
    static inline T ct__sigmoid_bw_##S(T g, T y, T alpha)                                   \
    {                                                                                       \
        (void)alpha;                                                                        \
        return g * y * ((T)1 - y);                                                          \
    }                                                                                       \
    static inline T ct__tanh_bw_##S(T g, T y, T alpha)                                      \
    {                                                                                       \
        (void)alpha;                                                                        \
        return g * ((T)1 - y * y);                                                          \
    }                                                                                       \
    static inline T ct__exp_##S(T x, const double *p) { (void)p; return exp##F(x); }        \
    static inline T ct__log_##S(T x, const double *p) { (void)p; return log##F(x); }        \
    static inline T ct__log1p_##S(T x, const double *p) { (void)p; return log1p##F(x); }    \
    static inline T ct__sqrt_##S(T x, const double *p) { (void)p; return sqrt##F(x); }      \
    static inline T ct__rsqrt_##S(T x, const double *p) { (void)p; return (T)1 / sqrt##F(x); } \
    static inline T ct__sin_##S(T x, const double *p) { (void)p; return sin##F(x); }        \
    static inline T ct__cos_##S(T x, const double *p) { (void)p; return cos##F(x); }        \
    static inline T ct__sigmoid_##S(T x, const double *p)                                   \
    {                                                                                       \
        (void)p;                                                                            \
        return (T)1 / ((T)1 + exp##F(-x));                                                  \
    }                                                                                       \
    static inline T ct__tanh_##S(T x, const double *p) { (void)p; return tanh##F(x); }      \
    static inline T ct__reciprocal_##S(T x, const double *p) { (void)p; return (T)1 / x; }  \
    static inline T ct__clamp_##S(T x, const double *p)                                     \
    {                                                                                       \
        T lo = (T)p[0], hi = (T)p[1];                                                       \
        return x != x ? x : (x < lo ? lo : (x > hi ? hi : x));                              \
    }                                                                                       \
    static inline T ct__pows_##S(T x, const double *p) { return pow##F(x, (T)p[0]); }
/* ops defined for every numeric dtype */
#define CT__ANY_MATH(E, T, S)                                                              \
    static inline T ct__neg_##S(T x, const double *p) { (void)p; return (T)-x; }            \
    static inline T ct__abs_##S(T x, const double *p) { (void)p; return ct__is_neg(x) ? (T)-x : x; } \
    static inline T ct__relu_##S(T x, const double *p) { (void)p; return x > 0 ? x : (T)0; } \
    static inline T ct__square_##S(T x, const double *p) { (void)p; return (T)(x * x); }    \
    static inline T ct__sign_##S(T x, const double *p)                                      \
    {                                                                                       \
        (void)p;                                                                            \
        return (T)((x > 0) - (ct__is_neg(x)));                                                      \
    }
CT__INT_MATH(CT_UINT8, uint8_t, u8)
CT__INT_MATH(CT_INT8, int8_t, i8)
CT__INT_MATH(CT_INT16, int16_t, i16)
CT__INT_MATH(CT_INT32, int32_t, i32)
CT__INT_MATH(CT_INT64, int64_t, i64)
CT__FLOAT_MATH(CT_FLOAT32, float, f32, f)
CT__FLOAT_MATH(CT_FLOAT64, double, f64, )
CT__FOR_NUMERIC_DTYPES(CT__ANY_MATH)

/* ---- loops --------------------------------------------------------------------------- */
/* out[i] = FN(a[i], b[i], alpha); contiguous, scalar-b, scalar-a and strided variants. */
#define CT__BIN_LOOP(FN, T, S)                                                             \
    static void ct__loop_##FN##_##S(char **d, const int64_t *s, int64_t n, const void *pp)  \
    {                                                                                       \
        const T alpha = (T)((const double *)pp)[0];                                         \
        T *o = (T *)d[0];                                                                   \
        const T *a = (const T *)d[1], *b = (const T *)d[2];                                 \
        const int64_t e = (int64_t)sizeof(T);                                               \
        if (s[0] == e && s[1] == e && s[2] == e) {                                          \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(a[i], b[i], alpha);                                   \
            }                                                                               \
        } else if (s[0] == e && s[1] == e && s[2] == 0) {                                   \
            const T y = b[0];                                                               \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(a[i], y, alpha);                                      \
            }                                                                               \
        } else if (s[0] == e && s[1] == 0 && s[2] == e) {                                   \
            const T x = a[0];                                                               \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(x, b[i], alpha);                                      \
            }                                                                               \
        } else {                                                                            \
            for (int64_t i = 0; i < n; i++) {                                               \
                *(T *)(d[0] + i * s[0]) = ct__##FN##_##S(*(const T *)(d[1] + i * s[1]),     \
                                                         *(const T *)(d[2] + i * s[2]), alpha); \
            }                                                                               \
        }                                                                                   \
    }
/* out[i] = (a[i] CMP b[i]) as bool */
#define CT__CMP_LOOP(NAME, CMP, T, S)                                                      \
    static void ct__loop_##NAME##_##S(char **d, const int64_t *s, int64_t n, const void *pp) \
    {                                                                                       \
        (void)pp;                                                                           \
        if (s[0] == 1 && s[1] == (int64_t)sizeof(T) && s[2] == 0) {                         \
            bool *o = (bool *)d[0];                                                         \
            const T *a = (const T *)d[1], y = *(const T *)d[2];                             \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = a[i] CMP y;                                                          \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(bool *)(d[0] + i * s[0]) =                                                    \
                *(const T *)(d[1] + i * s[1]) CMP * (const T *)(d[2] + i * s[2]);           \
        }                                                                                   \
    }
#define CT__UN_LOOP(FN, T, S)                                                              \
    static void ct__loop_##FN##_##S(char **d, const int64_t *s, int64_t n, const void *pp)  \
    {                                                                                       \
        const double *p = (const double *)pp;                                               \
        const int64_t e = (int64_t)sizeof(T);                                               \
        if (s[0] == e && s[1] == e) {                                                       \
            T *o = (T *)d[0];                                                               \
            const T *a = (const T *)d[1];                                                   \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(a[i], p);                                             \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(T *)(d[0] + i * s[0]) = ct__##FN##_##S(*(const T *)(d[1] + i * s[1]), p);     \
        }                                                                                   \
    }
#define CT__ARITH_LOOPS(E, T, S)                                                           \
    CT__BIN_LOOP(add, T, S)                                                                 \
    CT__BIN_LOOP(sub, T, S)                                                                 \
    CT__BIN_LOOP(mul, T, S)                                                                 \
    CT__BIN_LOOP(pow, T, S)                                                                 \
    CT__BIN_LOOP(maximum, T, S)                                                             \
    CT__BIN_LOOP(minimum, T, S)                                                             \
    CT__UN_LOOP(neg, T, S)                                                                  \
    CT__UN_LOOP(abs, T, S)                                                                  \
    CT__UN_LOOP(relu, T, S)                                                                 \
    CT__UN_LOOP(square, T, S)                                                               \
    CT__UN_LOOP(sign, T, S)
#define CT__FLOAT_LOOPS(E, T, S)                                                           \
    CT__BIN_LOOP(div, T, S)                                                                 \
    CT__BIN_LOOP(relu_bw, T, S)                                                             \
    CT__BIN_LOOP(sigmoid_bw, T, S)                                                          \
    CT__BIN_LOOP(tanh_bw, T, S)                                                             \
    CT__UN_LOOP(exp, T, S)                                                                  \
    CT__UN_LOOP(log, T, S)                                                                  \
    CT__UN_LOOP(log1p, T, S)                                                                \
    CT__UN_LOOP(sqrt, T, S)                                                                 \
    CT__UN_LOOP(rsqrt, T, S)                                                                \
    CT__UN_LOOP(sin, T, S)                                                                  \
    CT__UN_LOOP(cos, T, S)                                                                  \
    CT__UN_LOOP(sigmoid, T, S)                                                              \
    CT__UN_LOOP(tanh, T, S)                                                                 \
    CT__UN_LOOP(reciprocal, T, S)                                                           \
    CT__UN_LOOP(clamp, T, S)                                                                \
    CT__UN_LOOP(pows, T, S)
#define CT__CMP_LOOPS(E, T, S)                                                             \
    CT__CMP_LOOP(eq, ==, T, S)                                                              \
    CT__CMP_LOOP(ne, !=, T, S)                                                              \
    CT__CMP_LOOP(lt, <, T, S)                                                               \
    CT__CMP_LOOP(le, <=, T, S)                                                              \
    CT__CMP_LOOP(gt, >, T, S)                                                               \
    CT__CMP_LOOP(ge, >=, T, S)
CT__FOR_NUMERIC_DTYPES(CT__ARITH_LOOPS)
CT__FOR_FLOAT_DTYPES(CT__FLOAT_LOOPS)
CT__FOR_ALL_DTYPES(CT__CMP_LOOPS)

static void ct__loop_and(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) = *(const bool *)(d[1] + i * s[1]) && *(const bool *)(d[2] + i * s[2]);
    }
}

static void ct__loop_or(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) = *(const bool *)(d[1] + i * s[1]) || *(const bool *)(d[2] + i * s[2]);
    }
}

static void ct__loop_not(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) = !*(const bool *)(d[1] + i * s[1]);
    }
}

#define CT__WHERE_LOOP(E, T, S)                                                            \
    static void ct__loop_where_##S(char **d, const int64_t *s, int64_t n, const void *pp)   \
    {                                                                                       \
        (void)pp;                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(T *)(d[0] + i * s[0]) = *(const bool *)(d[1] + i * s[1])                      \
                                          ? *(const T *)(d[2] + i * s[2])                   \
                                          : *(const T *)(d[3] + i * s[3]);                  \
        }                                                                                   \
    }
CT__FOR_ALL_DTYPES(CT__WHERE_LOOP)

/* ---- kernel tables ------------------------------------------------------------------- */
#define CT__NUM_CASES(FN)                                                                  \
    case CT_UINT8: return ct__loop_##FN##_u8;                                               \
    case CT_INT8: return ct__loop_##FN##_i8;                                                \
    case CT_INT16: return ct__loop_##FN##_i16;                                              \
    case CT_INT32: return ct__loop_##FN##_i32;                                              \
    case CT_INT64: return ct__loop_##FN##_i64;                                              \
    case CT_FLOAT32: return ct__loop_##FN##_f32;                                            \
    case CT_FLOAT64: return ct__loop_##FN##_f64;
#define CT__FLT_CASES(FN)                                                                  \
    case CT_FLOAT32: return ct__loop_##FN##_f32;                                            \
    case CT_FLOAT64: return ct__loop_##FN##_f64;
#define CT__ALL_CASES(FN) CT__NUM_CASES(FN) case CT_BOOL: return ct__loop_##FN##_b8;
#define CT__OP(OP, CASES, FN)                                                              \
    case OP:                                                                                \
        switch (dt) {                                                                       \
            CASES(FN)                                                                       \
        default: return NULL;                                                               \
        }

/* The CPU loop of a binary op for compute dtype dt, or NULL when unsupported. */
static ct__loop_fn ct__cpu_binary_loop(ct__binop op, ct_dtype dt)
{
    switch (op) {
        CT__OP(CT__ADD, CT__NUM_CASES, add)
        CT__OP(CT__SUB, CT__NUM_CASES, sub)
        CT__OP(CT__MUL, CT__NUM_CASES, mul)
        CT__OP(CT__DIV, CT__FLT_CASES, div)
        CT__OP(CT__POW, CT__NUM_CASES, pow)
        CT__OP(CT__MAXIMUM, CT__NUM_CASES, maximum)
        CT__OP(CT__MINIMUM, CT__NUM_CASES, minimum)
        CT__OP(CT__EQ, CT__ALL_CASES, eq)
        CT__OP(CT__NE, CT__ALL_CASES, ne)
        CT__OP(CT__LT, CT__ALL_CASES, lt)
        CT__OP(CT__LE, CT__ALL_CASES, le)
        CT__OP(CT__GT, CT__ALL_CASES, gt)
        CT__OP(CT__GE, CT__ALL_CASES, ge)
        CT__OP(CT__RELU_BW, CT__FLT_CASES, relu_bw)
        CT__OP(CT__SIGMOID_BW, CT__FLT_CASES, sigmoid_bw)
        CT__OP(CT__TANH_BW, CT__FLT_CASES, tanh_bw)
    case CT__AND: return dt == CT_BOOL ? ct__loop_and : NULL;
    case CT__OR: return dt == CT_BOOL ? ct__loop_or : NULL;
    default: return NULL;
    }
}

static ct__loop_fn ct__cpu_unary_loop(ct__unop op, ct_dtype dt)
{
    switch (op) {
        CT__OP(CT__NEG, CT__NUM_CASES, neg)
        CT__OP(CT__ABS, CT__NUM_CASES, abs)
        CT__OP(CT__RELU, CT__NUM_CASES, relu)
        CT__OP(CT__SQUARE, CT__NUM_CASES, square)
        CT__OP(CT__SIGN, CT__NUM_CASES, sign)
        CT__OP(CT__EXP, CT__FLT_CASES, exp)
        CT__OP(CT__LOG, CT__FLT_CASES, log)
        CT__OP(CT__LOG1P, CT__FLT_CASES, log1p)
        CT__OP(CT__SQRT, CT__FLT_CASES, sqrt)
        CT__OP(CT__RSQRT, CT__FLT_CASES, rsqrt)
        CT__OP(CT__SIN, CT__FLT_CASES, sin)
        CT__OP(CT__COS, CT__FLT_CASES, cos)
        CT__OP(CT__SIGMOID, CT__FLT_CASES, sigmoid)
        CT__OP(CT__TANH, CT__FLT_CASES, tanh)
        CT__OP(CT__RECIPROCAL, CT__FLT_CASES, reciprocal)
        CT__OP(CT__CLAMP, CT__FLT_CASES, clamp)
        CT__OP(CT__POWS, CT__FLT_CASES, pows)
    case CT__NOT: return dt == CT_BOOL ? ct__loop_not : NULL;
    default: return NULL;
    }
}

static ct__loop_fn ct__cpu_where_loop(ct_dtype dt)
{
    switch (dt) {
        CT__ALL_CASES(where)
    default: return NULL;
    }
}

/* ---- meta: type promotion ------------------------------------------------------------ */
/* PyTorch's combine_categories: how a lower-priority class of operands affects the dtype. */
static ct_dtype ct__combine_categories(ct_dtype higher, ct_dtype lower)
{
    if (ct_dtype_is_floating_point(higher)) {
        return higher;
    }
    if (higher == CT_BOOL || ct_dtype_is_floating_point(lower)) {
        return higher == CT_DTYPE_DEFAULT ? lower
               : lower == CT_DTYPE_DEFAULT ? higher : ct_promote_types(higher, lower);
    }
    return higher != CT_DTYPE_DEFAULT ? higher : lower;
}

static ct_dtype ct__promote_opt(ct_dtype acc, ct_dtype d)
{
    return acc == CT_DTYPE_DEFAULT ? d : ct_promote_types(acc, d);
}

/* The dtype of an op over n operands (dimensioned > 0-dim > wrapped scalars). */
static ct_dtype ct__result_type(const ct_tensor *const *ops, int n)
{
    ct_dtype dim = CT_DTYPE_DEFAULT, zero = CT_DTYPE_DEFAULT, wrapped = CT_DTYPE_DEFAULT;
    for (int k = 0; k < n; k++) {
        const ct_tensor *t = ops[k];
        if (t->wrapped_number) {
            ct_dtype d = ct_dtype_is_floating_point(t->dtype) ? ct_get_default_dtype() : t->dtype;
            wrapped = ct__promote_opt(wrapped, d);
        } else if (t->ndim == 0) {
            zero = ct__promote_opt(zero, t->dtype);
        } else {
            dim = ct__promote_opt(dim, t->dtype);
        }
    }
    return ct__combine_categories(dim, ct__combine_categories(zero, wrapped));
}

ct_dtype ct_result_type(const ct_tensor *a, const ct_tensor *b)
{
    if (ct__null("ct_result_type", a) || ct__null("ct_result_type", b)) {
        return CT_DTYPE_DEFAULT;
    }
    const ct_tensor *ops[2] = {a, b};
    return ct__result_type(ops, 2);
}

/* A 0-dim wrapped number: int64 when v is integral, else float64 (promotes as the default
   float dtype). Not registered in a scope. */
static ct_tensor *ct__wrap_scalar(double v)
{
    bool integral = v == floor(v) && fabs(v) < 9.2e18;
    ct_tensor *t = ct__tensor_new("ct_scalar", NULL, 0, integral ? CT_INT64 : CT_FLOAT64);
    if (t) {
        ct__store_f64(ct__data(t), t->dtype, v);
        t->wrapped_number = true;
    }
    return t;
}

/* t converted to dtype without autograd (a new unscoped reference; t itself, retained,
   when the dtype matches). */
static ct_tensor *ct__cast(const ct_tensor *t, ct_dtype dtype)
{
    if (t->dtype == dtype) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *r = ct__tensor_new("ct_to", t->sizes, t->ndim, dtype);
    if (r) {
        ct__copy_kernel(r, t);
        r->wrapped_number = t->wrapped_number;
    }
    return r;
}

static const char *ct__dtype_title(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "Undefined", "Bool", "Byte", "Char", "Short", "Int", "Long", "Float", "Double",
    };
    return ct__dtype_valid(d) ? names[d] : "Undefined";
}

static bool ct__check_operands(const char *op, const ct_tensor *const *ops, int n)
{
    for (int k = 0; k < n; k++) {
        if (ct__null(op, ops[k]) || !ct__check_cpu(op, ops[k])) {
            return false;
        }
    }
    return true;
}

/* Runs the loop of op over inputs (cast to compute dtype ct) into out. */
static bool ct__run_kernel(const char *op, ct_tensor *out, const ct_tensor *const *inputs, int n,
                           ct_dtype ct, ct__loop_fn loop, const double *params)
{
    if (!loop) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for '%s'", op, ct__dtype_title(ct));
        return false;
    }
    ct_tensor *cast[CT__ITER_MAX_OPS];
    bool ok = true;
    for (int k = 0; k < n; k++) {
        cast[k] = ok ? ct__cast(inputs[k], ct) : NULL;
        ok = ok && cast[k];
    }
    if (ok) {
        ct__iter it;
        ct__iter_build(&it, out, (const ct_tensor *const *)cast, n);
        ct__iter_run(&it, loop, params);
    }
    for (int k = 0; k < n; k++) {
        ct__release(cast[k]);
    }
    return ok;
}

static bool ct__is_cmp(ct__binop op) { return op >= CT__EQ && op <= CT__GE; }

/* Result and compute dtypes of a binary op. */
static bool ct__binary_dtypes(const char *op, ct__binop bop, const ct_tensor *a,
                              const ct_tensor *b, ct_dtype *result, ct_dtype *compute)
{
    const ct_tensor *ops[2] = {a, b};
    ct_dtype rt = ct__result_type(ops, 2);
    if (bop == CT__SUB && rt == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "Subtraction, the `-` operator, with two bool tensors is not "
                 "supported. Use the `^` or `logical_xor()` operator instead.");
        return false;
    }
    if ((bop == CT__DIV || bop >= CT__RELU_BW) && !ct_dtype_is_floating_point(rt)) {
        rt = ct_get_default_dtype(); /* true division of integers */
    }
    if (bop == CT__AND || bop == CT__OR) {
        *compute = CT_BOOL;
        *result = CT_BOOL;
    } else if (ct__is_cmp(bop)) {
        *compute = rt;
        *result = CT_BOOL;
    } else {
        *compute = rt == CT_BOOL ? CT_UINT8 : rt;
        *result = rt;
    }
    return true;
}

/* The forward of a binary op: a new unscoped tensor, no autograd. */
static ct_tensor *ct__binary_forward(const char *op, ct__binop bop, const ct_tensor *a,
                                     const ct_tensor *b, double alpha)
{
    const ct_tensor *ops[2] = {a, b};
    if (!ct__check_operands(op, ops, 2)) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    ct_dtype rt, ct;
    if (!ct__broadcast_shapes(op, a->sizes, a->ndim, b->sizes, b->ndim, shape, &nd) ||
        !ct__binary_dtypes(op, bop, a, b, &rt, &ct)) {
        return NULL;
    }
    ct_tensor *out = ct__tensor_new(op, shape, nd, rt);
    if (!out) {
        return NULL;
    }
    double params[1] = {alpha};
    if (ct == rt) {
        if (!ct__run_kernel(op, out, ops, 2, ct, ct__cpu_binary_loop(bop, ct), params)) {
            ct__release(out);
            return NULL;
        }
        return out;
    }
    /* bool arithmetic runs in uint8 and converts back */
    ct_tensor *tmp = ct__tensor_new(op, shape, nd, ct);
    bool ok = tmp && ct__run_kernel(op, tmp, ops, 2, ct, ct__cpu_binary_loop(bop, ct), params);
    if (ok) {
        ct__copy_kernel(out, tmp);
    }
    ct__release(tmp);
    if (!ok) {
        ct__release(out);
        return NULL;
    }
    return out;
}

/* ---- derivative formulas ------------------------------------------------------------- */
static void ct__add_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) {
        gi[1] = n->f[0] == 1.0 ? (ct_tensor *)(uintptr_t)g : ct_mul_scalar(g, n->f[0]);
    }
}

static void ct__sub_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul_scalar(g, -n->f[0]);
    }
}

static void ct__mul_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_mul(g, ct__saved(n, 1));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul(g, ct__saved(n, 0));
    }
}

static void ct__div_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_div(g, b);
    }
    if (ct__needs_grad(n, 1)) { /* -g * a / b^2 */
        gi[1] = ct_neg(ct_div(ct_mul(g, a), ct_mul(b, b)));
    }
}

static void ct__pow_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1), *out = ct__saved(n, 2);
    if (ct__needs_grad(n, 0)) { /* g * b * a^(b-1), 0 where b == 0 */
        ct_tensor *d = ct_mul(b, ct_pow(a, ct_sub_scalar(b, 1.0)));
        gi[0] = ct_mul(g, ct_where(ct_eq_scalar(b, 0.0), ct_zeros_like(d), d));
    }
    if (ct__needs_grad(n, 1)) { /* g * out * log(a), 0 where a == 0 and b >= 0 */
        ct_tensor *d = ct_mul(out, ct_log(a));
        ct_tensor *zero = ct_logical_and(ct_eq_scalar(a, 0.0), ct_logical_not(ct_lt_scalar(b, 0.0)));
        gi[1] = ct_mul(g, ct_where(zero, ct_zeros_like(d), d));
    }
}

static void ct__minmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    /* the gradient goes to the selected input; ties split it evenly, as PyTorch */
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    bool is_max = n->f[0] > 0;
    ct_tensor *half = ct_mul_scalar(g, 0.5);
    ct_tensor *a_wins = is_max ? ct_gt(a, b) : ct_lt(a, b);
    ct_tensor *b_wins = is_max ? ct_lt(a, b) : ct_gt(a, b);
    ct_tensor *tie = ct_eq(a, b);
    ct_tensor *zero = ct_zeros_like(g);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_where(a_wins, g, ct_where(tie, half, zero));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_where(b_wins, g, ct_where(tie, half, zero));
    }
}

static void ct__relu_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);
static void ct__sigmoid_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);
static void ct__tanh_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);

typedef struct ct__binary_info {
    const char *node;
    ct__backward_fn backward;
    bool save_a, save_b, save_out;
} ct__binary_info;

static const ct__binary_info *ct__binary_meta(ct__binop op)
{
    static const ct__binary_info info[CT__BINOP_COUNT] = {
        {"AddBackward0", ct__add_backward, false, false, false},
        {"SubBackward0", ct__sub_backward, false, false, false},
        {"MulBackward0", ct__mul_backward, true, true, false},
        {"DivBackward0", ct__div_backward, true, true, false},
        {"PowBackward1", ct__pow_backward, true, true, true},
        {"MaximumBackward0", ct__minmax_backward, true, true, false},
        {"MinimumBackward0", ct__minmax_backward, true, true, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {NULL, NULL, false, false, false}, {NULL, NULL, false, false, false},
        {"ThresholdBackwardBackward0", ct__relu_bw_backward, false, true, false},
        {"SigmoidBackwardBackward0", ct__sigmoid_bw_backward, true, true, false},
        {"TanhBackwardBackward0", ct__tanh_bw_backward, true, true, false},
    };
    return &info[op];
}

/* A binary op with autograd: the forward plus, when needed, its node. Scoped result. */
static ct_tensor *ct__binary(const char *op, ct__binop bop, const ct_tensor *a,
                             const ct_tensor *b, double alpha)
{
    ct_tensor *out = ct__binary_forward(op, bop, a, b, alpha);
    const ct__binary_info *info = ct__binary_meta(bop);
    if (out && info->backward && ct_dtype_is_floating_point(out->dtype)) {
        const ct_tensor *ins[2] = {a, b};
        ct_node *n = ct__node_new(info->node, info->backward, ins, 2);
        if (n) {
            n->f[0] = bop == CT__MAXIMUM ? 1.0 : bop == CT__MINIMUM ? -1.0 : alpha;
            ct__save(n, info->save_a ? a : NULL);
            ct__save(n, info->save_b ? b : NULL);
            ct__save(n, info->save_out ? out : NULL);
        }
        ct__set_history(out, n);
    }
    return ct__scoped(out);
}

static void ct__relu_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__binary("ct_threshold_backward", CT__RELU_BW, g, ct__saved(n, 1), 1.0);
    }
}

static void ct__sigmoid_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__binary("ct_sigmoid_backward", CT__SIGMOID_BW, g, y, 1.0);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*y*(1-y)] = go*(1-2y) */
        gi[1] = ct_mul(ct_mul(g, go), ct_add_scalar(ct_mul_scalar(y, -2.0), 1.0));
    }
}

static void ct__tanh_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__binary("ct_tanh_backward", CT__TANH_BW, g, y, 1.0);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*(1-y^2)] = -2*go*y */
        gi[1] = ct_mul(ct_mul(g, go), ct_mul_scalar(y, -2.0));
    }
}

/* binary op with a C scalar as the second operand */
static ct_tensor *ct__binary_scalar(const char *op, ct__binop bop, const ct_tensor *a, double v)
{
    if (ct__null(op, a)) {
        return NULL;
    }
    ct_tensor *s = ct__wrap_scalar(v);
    ct_tensor *out = s ? ct__binary(op, bop, a, s, 1.0) : NULL;
    ct__release(s);
    return out;
}

ct_tensor *ct_add(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_add", CT__ADD, a, b, 1.0); }
ct_tensor *ct_add_alpha(const ct_tensor *a, const ct_tensor *b, double alpha)
{
    return ct__binary("ct_add", CT__ADD, a, b, alpha);
}
ct_tensor *ct_add_scalar(const ct_tensor *a, double v) { return ct__binary_scalar("ct_add", CT__ADD, a, v); }
ct_tensor *ct_sub(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_sub", CT__SUB, a, b, 1.0); }
ct_tensor *ct_sub_scalar(const ct_tensor *a, double v) { return ct__binary_scalar("ct_sub", CT__SUB, a, v); }
ct_tensor *ct_mul(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_mul", CT__MUL, a, b, 1.0); }
ct_tensor *ct_mul_scalar(const ct_tensor *a, double v) { return ct__binary_scalar("ct_mul", CT__MUL, a, v); }
ct_tensor *ct_div(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_div", CT__DIV, a, b, 1.0); }
ct_tensor *ct_div_scalar(const ct_tensor *a, double v) { return ct__binary_scalar("ct_div", CT__DIV, a, v); }
ct_tensor *ct_pow(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_pow", CT__POW, a, b, 1.0); }
ct_tensor *ct_maximum(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_maximum", CT__MAXIMUM, a, b, 1.0); }
ct_tensor *ct_minimum(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_minimum", CT__MINIMUM, a, b, 1.0); }
ct_tensor *ct_eq(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_eq", CT__EQ, a, b, 1.0); }
ct_tensor *ct_ne(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_ne", CT__NE, a, b, 1.0); }
ct_tensor *ct_lt(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_lt", CT__LT, a, b, 1.0); }
ct_tensor *ct_le(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_le", CT__LE, a, b, 1.0); }
ct_tensor *ct_gt(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_gt", CT__GT, a, b, 1.0); }
ct_tensor *ct_ge(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_ge", CT__GE, a, b, 1.0); }
ct_tensor *ct_eq_scalar(const ct_tensor *a, double v) { return ct__binary_scalar("ct_eq", CT__EQ, a, v); }
ct_tensor *ct_gt_scalar(const ct_tensor *a, double v) { return ct__binary_scalar("ct_gt", CT__GT, a, v); }
ct_tensor *ct_lt_scalar(const ct_tensor *a, double v) { return ct__binary_scalar("ct_lt", CT__LT, a, v); }
ct_tensor *ct_logical_and(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_logical_and", CT__AND, a, b, 1.0); }
ct_tensor *ct_logical_or(const ct_tensor *a, const ct_tensor *b) { return ct__binary("ct_logical_or", CT__OR, a, b, 1.0); }

ct_tensor *ct_pow_scalar(const ct_tensor *a, double exponent);

/* ---- in-place binary ops ------------------------------------------------------------- */
static ct_tensor *ct__binary_inplace(const char *op, ct__binop bop, ct_tensor *self,
                                     const ct_tensor *other, double alpha)
{
    const ct_tensor *ops[2] = {self, other};
    if (!ct__check_operands(op, ops, 2) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    ct_dtype rt, ct;
    if (!ct__broadcast_shapes(op, self->sizes, self->ndim, other->sizes, other->ndim, shape, &nd) ||
        !ct__binary_dtypes(op, bop, self, other, &rt, &ct)) {
        return NULL;
    }
    if (nd != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, op, "output with shape %s doesn't match the broadcast shape %s",
                 ct__shape_str(self->sizes, self->ndim, a, sizeof a), ct__shape_str(shape, nd, b, sizeof b));
        return NULL;
    }
    if (!ct_can_cast(rt, self->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "result type %s can't be cast to the desired output type %s",
                 ct__dtype_title(rt), ct__dtype_title(self->dtype));
        return NULL;
    }
    const ct__binary_info *info = ct__binary_meta(bop);
    ct_node *n = ct__node_new(info->node, info->backward, ops, 2);
    if (n) { /* the old value of self is needed by mul/div: save a copy */
        n->f[0] = alpha;
        ct_tensor *old = info->save_a ? ct__cast(self, self->dtype) : NULL;
        ct_tensor *old_copy = old ? ct_clone(old) : NULL;
        ct__save(n, old_copy);
        ct__save(n, info->save_b ? other : NULL);
        ct__save(n, NULL);
        ct__release(old);
    }
    double params[1] = {alpha};
    bool ok;
    if (ct == self->dtype) {
        ok = ct__run_kernel(op, self, ops, 2, ct, ct__cpu_binary_loop(bop, ct), params);
    } else {
        ct_tensor *tmp = ct__binary_forward(op, bop, self, other, alpha);
        ok = tmp != NULL;
        if (ok) {
            ct__copy_kernel(self, tmp);
        }
        ct__release(tmp);
    }
    if (!ok) {
        ct__node_release(n);
        return NULL;
    }
    ct__bump_version(self);
    ct__rebase_history(self, n);
    return self;
}

ct_tensor *ct_add_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__binary_inplace("ct_add_", CT__ADD, self, other, alpha);
}

ct_tensor *ct_sub_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__binary_inplace("ct_sub_", CT__SUB, self, other, alpha);
}

ct_tensor *ct_mul_(ct_tensor *self, const ct_tensor *other)
{
    return ct__binary_inplace("ct_mul_", CT__MUL, self, other, 1.0);
}

ct_tensor *ct_div_(ct_tensor *self, const ct_tensor *other)
{
    return ct__binary_inplace("ct_div_", CT__DIV, self, other, 1.0);
}

/* ---- unary ops ----------------------------------------------------------------------- */
static void ct__neg_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_neg(g);
}

static void ct__abs_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);
static void ct__exp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct__saved(n, 1));
}

static void ct__log_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div(g, ct__saved(n, 0));
}

static void ct__log1p_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div(g, ct_add_scalar(ct__saved(n, 0), 1.0));
}

static void ct__sqrt_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div(g, ct_mul_scalar(ct__saved(n, 1), 2.0));
}

static void ct__rsqrt_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* d/dx x^-1/2 = -1/2 * out^3 */
    const ct_tensor *y = ct__saved(n, 1);
    gi[0] = ct_mul(g, ct_mul_scalar(ct_mul(y, ct_mul(y, y)), -0.5));
}

static void ct__sin_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_cos(ct__saved(n, 0)));
}

static void ct__cos_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_neg(ct_sin(ct__saved(n, 0))));
}

static void ct__sigmoid_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__binary("ct_sigmoid_backward", CT__SIGMOID_BW, g, ct__saved(n, 1), 1.0);
}

static void ct__tanh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__binary("ct_tanh_backward", CT__TANH_BW, g, ct__saved(n, 1), 1.0);
}

static void ct__relu_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__binary("ct_threshold_backward", CT__RELU_BW, g, ct__saved(n, 1), 1.0);
}

static void ct__square_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct_mul_scalar(ct__saved(n, 0), 2.0));
}

static void ct__reciprocal_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* -g * out^2 */
    const ct_tensor *y = ct__saved(n, 1);
    gi[0] = ct_neg(ct_mul(g, ct_mul(y, y)));
}

static void ct__clamp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0);
    ct_tensor *lo = ct__binary_scalar("ct_clamp", CT__GE, x, n->f[0]);
    ct_tensor *hi = ct__binary_scalar("ct_clamp", CT__LE, x, n->f[1]);
    gi[0] = ct_where(ct_logical_and(lo, hi), g, ct_zeros_like(g));
}

static void ct__pows_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * p * x^(p-1); 0 when p == 0 */
    double p = n->f[0];
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = p == 0 ? ct_zeros_like(g) : ct_mul(g, ct_mul_scalar(ct_pow_scalar(x, p - 1), p));
}

typedef struct ct__unary_info {
    const char *node;
    ct__backward_fn backward;
    bool floating; /* integer inputs compute in the default float dtype */
    bool save_in, save_out;
} ct__unary_info;

static const ct__unary_info *ct__unary_meta(ct__unop op)
{
    static const ct__unary_info info[CT__UNOP_COUNT] = {
        {"NegBackward0", ct__neg_backward, false, false, false},
        {"AbsBackward0", ct__abs_backward, false, true, false},
        {"ReluBackward0", ct__relu_backward, false, false, true},
        {"PowBackward0", ct__square_backward, false, true, false},
        {NULL, NULL, false, false, false}, /* sign: zero gradient, not recorded */
        {"ExpBackward0", ct__exp_backward, true, false, true},
        {"LogBackward0", ct__log_backward, true, true, false},
        {"Log1PBackward0", ct__log1p_backward, true, true, false},
        {"SqrtBackward0", ct__sqrt_backward, true, false, true},
        {"RsqrtBackward0", ct__rsqrt_backward, true, false, true},
        {"SinBackward0", ct__sin_backward, true, true, false},
        {"CosBackward0", ct__cos_backward, true, true, false},
        {"SigmoidBackward0", ct__sigmoid_backward, true, false, true},
        {"TanhBackward0", ct__tanh_backward, true, false, true},
        {"ReciprocalBackward0", ct__reciprocal_backward, true, false, true},
        {"ClampBackward1", ct__clamp_backward, true, true, false},
        {"PowBackward0", ct__pows_backward, true, true, false},
        {NULL, NULL, false, false, false},
    };
    return &info[op];
}

static ct_tensor *ct__unary(const char *op, ct__unop uop, const ct_tensor *a, double p0, double p1)
{
    if (!ct__check_operands(op, &a, 1)) {
        return NULL;
    }
    const ct__unary_info *info = ct__unary_meta(uop);
    ct_dtype dt = a->dtype;
    if (uop == CT__NOT) {
        dt = CT_BOOL;
    } else if (info->floating && !ct_dtype_is_floating_point(dt)) {
        dt = ct_get_default_dtype();
    } else if (dt == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for 'Bool'", op);
        return NULL;
    }
    ct_tensor *out = ct__tensor_new(op, a->sizes, a->ndim, dt);
    double params[2] = {p0, p1};
    if (!out || !ct__run_kernel(op, out, &a, 1, dt, ct__cpu_unary_loop(uop, dt), params)) {
        ct__release(out);
        return NULL;
    }
    if (info->backward && ct_dtype_is_floating_point(dt)) {
        ct_node *n = ct__node_new(info->node, info->backward, &a, 1);
        if (n) {
            n->f[0] = p0;
            n->f[1] = p1;
            ct__save(n, info->save_in ? a : NULL);
            ct__save(n, info->save_out ? out : NULL);
        }
        ct__set_history(out, n);
    }
    return ct__scoped(out);
}

static void ct__abs_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct__unary("ct_sign", CT__SIGN, ct__saved(n, 0), 0, 0));
}

ct_tensor *ct_neg(const ct_tensor *a) { return ct__unary("ct_neg", CT__NEG, a, 0, 0); }
ct_tensor *ct_abs(const ct_tensor *a) { return ct__unary("ct_abs", CT__ABS, a, 0, 0); }
ct_tensor *ct_exp(const ct_tensor *a) { return ct__unary("ct_exp", CT__EXP, a, 0, 0); }
ct_tensor *ct_log(const ct_tensor *a) { return ct__unary("ct_log", CT__LOG, a, 0, 0); }
ct_tensor *ct_log1p(const ct_tensor *a) { return ct__unary("ct_log1p", CT__LOG1P, a, 0, 0); }
ct_tensor *ct_sqrt(const ct_tensor *a) { return ct__unary("ct_sqrt", CT__SQRT, a, 0, 0); }
ct_tensor *ct_rsqrt(const ct_tensor *a) { return ct__unary("ct_rsqrt", CT__RSQRT, a, 0, 0); }
ct_tensor *ct_sin(const ct_tensor *a) { return ct__unary("ct_sin", CT__SIN, a, 0, 0); }
ct_tensor *ct_cos(const ct_tensor *a) { return ct__unary("ct_cos", CT__COS, a, 0, 0); }
ct_tensor *ct_sigmoid(const ct_tensor *a) { return ct__unary("ct_sigmoid", CT__SIGMOID, a, 0, 0); }
ct_tensor *ct_tanh(const ct_tensor *a) { return ct__unary("ct_tanh", CT__TANH, a, 0, 0); }
ct_tensor *ct_relu(const ct_tensor *a) { return ct__unary("ct_relu", CT__RELU, a, 0, 0); }
ct_tensor *ct_square(const ct_tensor *a) { return ct__unary("ct_square", CT__SQUARE, a, 0, 0); }
ct_tensor *ct_reciprocal(const ct_tensor *a) { return ct__unary("ct_reciprocal", CT__RECIPROCAL, a, 0, 0); }
ct_tensor *ct_logical_not(const ct_tensor *a)
{
    if (ct__null("ct_logical_not", a)) {
        return NULL;
    }
    ct_tensor *b = ct__cast(a, CT_BOOL);
    ct_tensor *out = b ? ct__unary("ct_logical_not", CT__NOT, b, 0, 0) : NULL;
    ct__release(b);
    return out;
}

ct_tensor *ct_clamp(const ct_tensor *a, double min, double max)
{
    if (min > max) {
        ct__fail(CT_ERR_VALUE, "ct_clamp", "min (%g) must be less than or equal to max (%g)", min, max);
        return NULL;
    }
    return ct__unary("ct_clamp", CT__CLAMP, a, min, max);
}

ct_tensor *ct_pow_scalar(const ct_tensor *a, double exponent)
{
    if (a && !ct_dtype_is_floating_point(a->dtype) && exponent == floor(exponent)) {
        return ct__binary_scalar("ct_pow", CT__POW, a, exponent); /* integer power */
    }
    return ct__unary("ct_pow", CT__POWS, a, exponent, 0);
}

ct_tensor *ct_relu_(ct_tensor *self)
{
    const char *op = "ct_relu_";
    if (!ct__check_operands(op, (const ct_tensor *const *)&self, 1) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    const ct_tensor *in = self;
    ct_node *n = ct__node_new("ReluBackward0", ct__relu_backward, &in, 1);
    double params[2] = {0, 0};
    if (!ct__run_kernel(op, self, &in, 1, self->dtype, ct__cpu_unary_loop(CT__RELU, self->dtype), params)) {
        ct__node_release(n);
        return NULL;
    }
    ct__bump_version(self);
    if (n) {
        ct__save(n, NULL);
        ct__save(n, self);
    }
    ct__rebase_history(self, n);
    return self;
}

/* ---- where --------------------------------------------------------------------------- */
static void ct__where_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *c = ct__saved(n, 0);
    ct_tensor *zero = ct_zeros_like(g);
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_where(c, g, zero);
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_where(c, zero, g);
    }
}

ct_tensor *ct_where(const ct_tensor *cond, const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_where";
    const ct_tensor *ops[3] = {cond, a, b};
    if (!ct__check_operands(op, ops, 3)) {
        return NULL;
    }
    if (cond->dtype != CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "where expected condition to be a boolean tensor, but got a "
                 "tensor with dtype %s", ct__dtype_title(cond->dtype));
        return NULL;
    }
    int64_t s1[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int n1 = 0, nd = 0;
    if (!ct__broadcast_shapes(op, cond->sizes, cond->ndim, a->sizes, a->ndim, s1, &n1) ||
        !ct__broadcast_shapes(op, s1, n1, b->sizes, b->ndim, shape, &nd)) {
        return NULL;
    }
    ct_dtype rt = ct__result_type(ops + 1, 2);
    ct_tensor *out = ct__tensor_new(op, shape, nd, rt);
    ct_tensor *cb = ct__cast(cond, CT_BOOL);
    ct_tensor *ca = ct__cast(a, rt), *cbb = ct__cast(b, rt);
    bool ok = out && cb && ca && cbb;
    if (ok) {
        const ct_tensor *ins[3] = {cb, ca, cbb};
        ct__iter it;
        ct__iter_build(&it, out, ins, 3);
        ct__iter_run(&it, ct__cpu_where_loop(rt), NULL);
    }
    ct__release(cb);
    ct__release(ca);
    ct__release(cbb);
    if (!ok) {
        ct__release(out);
        return NULL;
    }
    if (ct_dtype_is_floating_point(rt)) {
        ct_node *n = ct__node_new("WhereBackward0", ct__where_backward, ops, 3);
        if (n) {
            ct__save(n, cond);
        }
        ct__set_history(out, n);
    }
    return ct__scoped(out);
}

/* ---- fill, copy, clone, cast --------------------------------------------------------- */
ct_tensor *ct_fill_(ct_tensor *self, double value)
{
    const char *op = "ct_fill_";
    if (ct__null(op, self) || !ct__check_cpu(op, self) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    ct_tensor *s = ct__tensor_new(op, NULL, 0, self->dtype);
    if (!s) {
        return NULL;
    }
    ct__store_f64(ct__data(s), s->dtype, value);
    ct__copy_kernel(self, s);
    ct__release(s);
    ct__bump_version(self);
    if (ct_is_grad_enabled()) { /* the new value has no history */
        ct__node_release(self->grad_fn);
        self->grad_fn = NULL;
    }
    return self;
}

ct_tensor *ct_zero_(ct_tensor *self) { return ct_fill_(self, 0.0); }

static void ct__copy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[1] = (ct_tensor *)(uintptr_t)g; /* the engine sums to src's shape and casts */
}

ct_tensor *ct_copy_(ct_tensor *self, const ct_tensor *src)
{
    const char *op = "ct_copy_";
    const ct_tensor *ops[2] = {self, src};
    if (!ct__check_operands(op, ops, 2) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    if (!ct__broadcast_shapes(op, self->sizes, self->ndim, src->sizes, src->ndim, shape, &nd)) {
        return NULL;
    }
    if (nd != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, op, "output with shape %s doesn't match the broadcast shape %s",
                 ct__shape_str(self->sizes, self->ndim, a, sizeof a), ct__shape_str(shape, nd, b, sizeof b));
        return NULL;
    }
    const ct_tensor *ins[2] = {NULL, src}; /* the old value of self gets no gradient */
    ct_node *n = ct_dtype_is_floating_point(self->dtype) && ct_dtype_is_floating_point(src->dtype)
                     ? ct__node_new("CopyBackwards", ct__copy_backward, ins, 2)
                     : NULL;
    ct__copy_kernel(self, src);
    ct__bump_version(self);
    ct__rebase_history(self, n);
    return self;
}

static void ct__clone_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = (ct_tensor *)(uintptr_t)g;
}

ct_tensor *ct_clone(const ct_tensor *a)
{
    if (ct__null("ct_clone", a) || !ct__check_cpu("ct_clone", a)) {
        return NULL;
    }
    ct_tensor *out = ct__tensor_new("ct_clone", a->sizes, a->ndim, a->dtype);
    if (!out) {
        return NULL;
    }
    ct__copy_kernel(out, a);
    ct__set_history(out, ct__node_new("CloneBackward0", ct__clone_backward, &a, 1));
    return ct__scoped(out);
}

static void ct__to_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = (ct_tensor *)(uintptr_t)g; /* the engine casts back to the input dtype */
}

ct_tensor *ct_to_dtype(const ct_tensor *a, ct_dtype dtype)
{
    const char *op = "ct_to_dtype";
    if (ct__null(op, a) || !ct__check_cpu(op, a)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    if (!ct__dtype_valid(dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "invalid dtype %d", (int)dtype);
        return NULL;
    }
    if (a->dtype == dtype) {
        return ct_alias(a);
    }
    ct_tensor *out = ct__cast(a, dtype);
    if (!out) {
        return NULL;
    }
    out->wrapped_number = false;
    if (ct_dtype_is_floating_point(dtype) && ct_dtype_is_floating_point(a->dtype)) {
        ct__set_history(out, ct__node_new("ToCopyBackward0", ct__to_backward, &a, 1));
    }
    return ct__scoped(out);
}

// >>part ops/view.c
/* ops/view.c - views over shared storage and shape ops (cat, stack).
 *
 * A view is a new tensor object with its own sizes/strides/offset over the input's storage.
 * Its backward maps the view's gradient back to the input's shape.
 */

/* ---- derivative formulas ------------------------------------------------------------- */
static void ct__view_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_reshape(g, n->next[0].sizes, n->next[0].ndim);
}

static void ct__identity_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = (ct_tensor *)(uintptr_t)g; /* expand: the engine sums to the input's shape */
}

static void ct__permute_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    int64_t inv[CT_MAX_DIMS];
    for (int d = 0; d < g->ndim; d++) {
        inv[n->i[d]] = d;
    }
    gi[0] = ct_permute(g, inv, g->ndim);
}

/* narrow and select: scatter g into zeros of the input's shape (i[0] dim, i[1] start,
   i[2] length, i[3] 1 for select) */
static void ct__slice_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct_tensor *z = ct_zeros(n->next[0].sizes, n->next[0].ndim, g->dtype);
    ct_tensor *slot = ct_narrow(z, n->i[0], n->i[1], n->i[2]);
    ct_copy_(slot, n->i[3] ? ct_unsqueeze(g, n->i[0]) : g);
    gi[0] = z;
}

/* A scoped view of t; records a node (name, fn, with integers ints[ni]) when t requires
   grad. */
static ct_tensor *ct__make_view(const ct_tensor *t, const int64_t *sizes, const int64_t *strides,
                                int ndim, int64_t offset, const char *name, ct__backward_fn fn,
                                const int64_t *ints, int ni)
{
    ct_tensor *v = ct__tensor_over(t->storage, t->dtype, sizes, strides, ndim, offset);
    if (!v) {
        return NULL;
    }
    ct_node *n = ct__node_new(name, fn, &t, 1);
    if (n) {
        for (int k = 0; k < ni; k++) {
            n->i[k] = ints[k];
        }
    }
    ct__set_history(v, n);
    return ct__scoped(v);
}

static bool ct__view_check(const char *op, const ct_tensor *t)
{
    return !ct__null(op, t);
}

ct_tensor *ct_alias(const ct_tensor *t)
{
    if (!ct__view_check("ct_alias", t)) {
        return NULL;
    }
    return ct__make_view(t, t->sizes, t->strides, t->ndim, t->offset, "AliasBackward0",
                         ct__identity_backward, NULL, 0);
}

/* Resolves one -1 in sizes against numel; false + error when impossible. */
static bool ct__infer_size(const char *op, const int64_t *sizes, int ndim, int64_t numel,
                           int64_t *out)
{
    int infer = -1;
    int64_t prod = 1;
    char buf[160];
    if (ndim < 0 || ndim > CT_MAX_DIMS || (ndim > 0 && !sizes)) {
        ct__fail(CT_ERR_SHAPE, op, "invalid number of dimensions %d", ndim);
        return false;
    }
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == -1) {
            if (infer >= 0) {
                ct__fail(CT_ERR_SHAPE, op, "only one dimension can be inferred");
                return false;
            }
            infer = d;
        } else if (sizes[d] < 0) {
            ct__fail(CT_ERR_SHAPE, op, "invalid shape dimension %lld", (long long)sizes[d]);
            return false;
        } else {
            prod *= sizes[d];
        }
        out[d] = sizes[d];
    }
    if (infer >= 0 && prod > 0 && numel % prod == 0) {
        out[infer] = numel / prod;
        prod = numel;
    }
    if (prod != numel || (infer >= 0 && prod == 0)) {
        ct__fail(CT_ERR_SHAPE, op, "shape '%s' is invalid for input of size %lld",
                 ct__shape_str(sizes, ndim, buf, sizeof buf), (long long)numel);
        return false;
    }
    return true;
}

/* Strides for viewing t as sizes without copying (PyTorch's computeStride); false when the
   view would span non-contiguous chunks. */
static bool ct__view_strides(const ct_tensor *t, const int64_t *sizes, int ndim, int64_t *strides)
{
    if (t->ndim == 0 || ct_numel(t) == 0) {
        ct__contiguous_strides(sizes, ndim, strides);
        return true;
    }
    int view_d = ndim - 1;
    int64_t chunk = t->strides[t->ndim - 1], tensor_numel = 1, view_numel = 1;
    for (int td = t->ndim - 1; td >= 0; td--) {
        tensor_numel *= t->sizes[td];
        if (td == 0 || (t->sizes[td - 1] != 1 && t->strides[td - 1] != tensor_numel * chunk)) {
            while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
                strides[view_d] = view_numel * chunk;
                view_numel *= sizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) {
                return false;
            }
            if (td > 0) {
                chunk = t->strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

ct_tensor *ct_view(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_view";
    int64_t shape[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    if (!ct__view_check(op, t) || !ct__infer_size(op, sizes, ndim, ct_numel(t), shape)) {
        return NULL;
    }
    if (!ct__view_strides(t, shape, ndim, strides)) {
        ct__fail(CT_ERR_SHAPE, op, "view size is not compatible with input tensor's size and "
                 "stride (at least one dimension spans across two contiguous subspaces). Use "
                 ".reshape(...) instead.");
        return NULL;
    }
    return ct__make_view(t, shape, strides, ndim, t->offset, "ViewBackward0", ct__view_backward,
                         NULL, 0);
}

ct_tensor *ct_reshape(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_reshape";
    int64_t shape[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    if (!ct__view_check(op, t) || !ct__infer_size(op, sizes, ndim, ct_numel(t), shape)) {
        return NULL;
    }
    if (ct__view_strides(t, shape, ndim, strides)) {
        return ct__make_view(t, shape, strides, ndim, t->offset, "ViewBackward0",
                             ct__view_backward, NULL, 0);
    }
    ct_tensor *c = ct_clone(t); /* contiguous copy, then a view of it */
    ct_tensor *r = ct_view(c, shape, ndim);
    ct_free(c);
    return r;
}

ct_tensor *ct_flatten(const ct_tensor *t, int64_t start_dim, int64_t end_dim)
{
    const char *op = "ct_flatten";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        int64_t one = 1;
        return ct_reshape(t, &one, 1);
    }
    int s = ct__wrap_dim(op, start_dim, t->ndim), e = ct__wrap_dim(op, end_dim, t->ndim);
    if (s < 0 || e < 0) {
        return NULL;
    }
    if (s > e) {
        ct__fail(CT_ERR_VALUE, op, "flatten() has invalid args: start_dim cannot come after "
                 "end_dim");
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d <= s || d > e) {
            shape[nd++] = t->sizes[d];
        } else {
            shape[nd - 1] *= t->sizes[d];
        }
    }
    return ct_reshape(t, shape, nd);
}

ct_tensor *ct_permute(const ct_tensor *t, const int64_t *dims, int ndim)
{
    const char *op = "ct_permute";
    if (!ct__view_check(op, t) || ct__null(op, ndim ? (const void *)dims : (const void *)t)) {
        return NULL;
    }
    if (ndim != t->ndim) {
        ct__fail(CT_ERR_SHAPE, op, "number of dims don't match in permute");
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], perm[CT_MAX_DIMS];
    bool seen[CT_MAX_DIMS] = {false};
    for (int d = 0; d < ndim; d++) {
        int k = ct__wrap_dim(op, dims[d], ndim);
        if (k < 0) {
            return NULL;
        }
        if (seen[k]) {
            ct__fail(CT_ERR_VALUE, op, "repeated dim in permute");
            return NULL;
        }
        seen[k] = true;
        perm[d] = k;
        sizes[d] = t->sizes[k];
        strides[d] = t->strides[k];
    }
    return ct__make_view(t, sizes, strides, ndim, t->offset, "PermuteBackward0",
                         ct__permute_backward, perm, ndim);
}

ct_tensor *ct_transpose(const ct_tensor *t, int64_t dim0, int64_t dim1)
{
    const char *op = "ct_transpose";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        return ct_alias(t);
    }
    int a = ct__wrap_dim(op, dim0, t->ndim), b = ct__wrap_dim(op, dim1, t->ndim);
    if (a < 0 || b < 0) {
        return NULL;
    }
    int64_t perm[CT_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        perm[d] = d;
    }
    perm[a] = b;
    perm[b] = a;
    return ct_permute(t, perm, t->ndim);
}

ct_tensor *ct_t(const ct_tensor *t)
{
    if (!ct__view_check("ct_t", t)) {
        return NULL;
    }
    if (t->ndim > 2) {
        ct__fail(CT_ERR_SHAPE, "ct_t", "t() expects a tensor with <= 2 dimensions, but self is "
                 "%dD", t->ndim);
        return NULL;
    }
    return t->ndim < 2 ? ct_alias(t) : ct_transpose(t, 0, 1);
}

static ct_tensor *ct__reshape_view(const char *op, const ct_tensor *t, const int64_t *sizes,
                                   const int64_t *strides, int ndim)
{
    (void)op;
    return ct__make_view(t, sizes, strides, ndim, t->offset, "ViewBackward0", ct__view_backward,
                         NULL, 0);
}

ct_tensor *ct_unsqueeze(const ct_tensor *t, int64_t dim)
{
    const char *op = "ct_unsqueeze";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, op, "tensors have at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim + 1);
    if (d < 0) {
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int k = 0, j = 0; k <= t->ndim; k++) {
        if (k == d) {
            sizes[k] = 1;
            strides[k] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        } else {
            sizes[k] = t->sizes[j];
            strides[k] = t->strides[j];
            j++;
        }
    }
    return ct__reshape_view(op, t, sizes, strides, t->ndim + 1);
}

static ct_tensor *ct__squeeze(const char *op, const ct_tensor *t, int only)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1 && (only < 0 || only == d)) {
            continue;
        }
        sizes[nd] = t->sizes[d];
        strides[nd] = t->strides[d];
        nd++;
    }
    return ct__reshape_view(op, t, sizes, strides, nd);
}

ct_tensor *ct_squeeze(const ct_tensor *t)
{
    return ct__view_check("ct_squeeze", t) ? ct__squeeze("ct_squeeze", t, -1) : NULL;
}

ct_tensor *ct_squeeze_dim(const ct_tensor *t, int64_t dim)
{
    const char *op = "ct_squeeze_dim";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    return d < 0 ? NULL : t->ndim == 0 ? ct_alias(t) : ct__squeeze(op, t, d);
}

ct_tensor *ct_expand(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_expand";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (ndim < t->ndim || ndim > CT_MAX_DIMS || (ndim && !sizes)) {
        ct__fail(CT_ERR_SHAPE, op, "the number of sizes provided (%d) must be greater or equal "
                 "to the number of dimensions in the tensor (%d)", ndim, t->ndim);
        return NULL;
    }
    int64_t out[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        int td = d - (ndim - t->ndim);
        int64_t want = sizes[d];
        if (td < 0) {
            if (want < 0) {
                ct__fail(CT_ERR_SHAPE, op, "The expanded size of the tensor (%lld) isn't allowed "
                         "in a leading, non-existing dimension %d", (long long)want, d);
                return NULL;
            }
            out[d] = want;
            strides[d] = 0;
            continue;
        }
        int64_t have = t->sizes[td];
        if (want == -1) {
            want = have;
        }
        if (have != want && have != 1) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, op, "The expanded size of the tensor (%lld) must match the "
                     "existing size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                     "Tensor sizes: %s", (long long)want, (long long)have, d,
                     ct__shape_str(sizes, ndim, a, sizeof a),
                     ct__shape_str(t->sizes, t->ndim, b, sizeof b));
            return NULL;
        }
        out[d] = want;
        strides[d] = have == want ? t->strides[td] : 0;
    }
    return ct__make_view(t, out, strides, ndim, t->offset, "ExpandBackward0",
                         ct__identity_backward, NULL, 0);
}

ct_tensor *ct_narrow(const ct_tensor *t, int64_t dim, int64_t start, int64_t length)
{
    const char *op = "ct_narrow";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    if (d < 0) {
        return NULL;
    }
    int64_t size = t->sizes[d];
    if (start < 0) {
        start += size;
    }
    if (start < 0 || start > size || length < 0 || start + length > size) {
        ct__fail(CT_ERR_INDEX, op, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                 (long long)start, (long long)length, (long long)size);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    sizes[d] = length;
    int64_t ints[4] = {d, start, length, 0};
    return ct__make_view(t, sizes, t->strides, t->ndim, t->offset + start * t->strides[d],
                         "NarrowBackward0", ct__slice_backward, ints, 4);
}

ct_tensor *ct_select(const ct_tensor *t, int64_t dim, int64_t index)
{
    const char *op = "ct_select";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, op, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    if (d < 0) {
        return NULL;
    }
    int64_t size = t->sizes[d];
    if (index < -size || index >= size) {
        char buf[160];
        ct__fail(CT_ERR_INDEX, op, "select(): index %lld out of range for tensor of size %s at "
                 "dimension %d", (long long)index, ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), d);
        return NULL;
    }
    if (index < 0) {
        index += size;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int k = 0, j = 0; k < t->ndim; k++) {
        if (k != d) {
            sizes[j] = t->sizes[k];
            strides[j] = t->strides[k];
            j++;
        }
    }
    int64_t ints[4] = {d, index, 1, 1};
    return ct__make_view(t, sizes, strides, t->ndim - 1, t->offset + index * t->strides[d],
                         "SelectBackward0", ct__slice_backward, ints, 4);
}

ct_tensor *ct_contiguous(const ct_tensor *t)
{
    if (!ct__view_check("ct_contiguous", t)) {
        return NULL;
    }
    return ct_is_contiguous(t) ? ct_alias(t) : ct_clone(t);
}

/* ---- cat and stack ------------------------------------------------------------------- */
static void ct__cat_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const int64_t *offsets = (const int64_t *)n->ctx;
    for (int k = 0; k < n->n_next; k++) {
        if (ct__needs_grad(n, k)) {
            gi[k] = ct_narrow(g, n->i[0], offsets[k], offsets[k + 1] - offsets[k]);
        }
    }
}

ct_tensor *ct_cat(const ct_tensor *const *ts, int n, int64_t dim)
{
    const char *op = "ct_cat";
    if (ct__null(op, ts)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, op, "expected a non-empty list of Tensors");
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        if (ct__null(op, ts[k]) || !ct__check_cpu(op, ts[k])) {
            return NULL;
        }
    }
    const ct_tensor *ref = ts[0];
    if (ref->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op, "zero-dimensional tensor (at position 0) cannot be "
                 "concatenated");
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, ref->ndim);
    if (d < 0) {
        return NULL;
    }
    int64_t *offsets = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!offsets) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_dtype dt = ref->dtype;
    offsets[0] = 0;
    for (int k = 0; k < n; k++) {
        const ct_tensor *t = ts[k];
        bool ok = t->ndim == ref->ndim;
        for (int j = 0; ok && j < ref->ndim; j++) {
            if (j != d && t->sizes[j] != ref->sizes[j]) {
                ct__fail(CT_ERR_SHAPE, op, "Sizes of tensors must match except in dimension %d. "
                         "Expected size %lld but got size %lld for tensor number %d in the list.",
                         d, (long long)ref->sizes[j], (long long)t->sizes[j], k);
                ok = false;
            }
        }
        if (t->ndim != ref->ndim) {
            ct__fail(CT_ERR_SHAPE, op, "Tensors must have same number of dimensions: got %d and %d",
                     ref->ndim, t->ndim);
        }
        if (!ok) {
            ct__free(offsets);
            return NULL;
        }
        dt = ct_promote_types(dt, t->dtype);
        offsets[k + 1] = offsets[k] + t->sizes[d];
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim);
    sizes[d] = offsets[n];
    ct_tensor *out = ct__tensor_new(op, sizes, ref->ndim, dt);
    if (!out) {
        ct__free(offsets);
        return NULL;
    }
    for (int k = 0; k < n; k++) { /* copy each input into its slice of out */
        int64_t part[CT_MAX_DIMS];
        memcpy(part, sizes, sizeof part);
        part[d] = ts[k]->sizes[d];
        ct_tensor *slot = ct__tensor_over(out->storage, dt, part, out->strides, out->ndim,
                                          offsets[k] * out->strides[d]);
        if (slot) {
            ct__copy_kernel(slot, ts[k]);
        }
        ct__release(slot);
    }
    ct_node *node = ct_dtype_is_floating_point(dt) ? ct__node_new("CatBackward0", ct__cat_backward, ts, n)
                                                   : NULL;
    if (node) {
        node->i[0] = d;
        node->ctx = offsets;
        node->ctx_free = ct__free;
    } else {
        ct__free(offsets);
    }
    ct__set_history(out, node);
    return ct__scoped(out);
}

ct_tensor *ct_stack(const ct_tensor *const *ts, int n, int64_t dim)
{
    const char *op = "ct_stack";
    if (ct__null(op, ts)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, op, "stack expects a non-empty TensorList");
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        if (ct__null(op, ts[k])) {
            return NULL;
        }
        if (ts[k]->ndim != ts[0]->ndim ||
            memcmp(ts[k]->sizes, ts[0]->sizes, sizeof(int64_t) * (size_t)ts[0]->ndim) != 0) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, op, "stack expects each tensor to be equal size, but got %s at "
                     "entry 0 and %s at entry %d", ct__shape_str(ts[0]->sizes, ts[0]->ndim, a, sizeof a),
                     ct__shape_str(ts[k]->sizes, ts[k]->ndim, b, sizeof b), k);
            return NULL;
        }
    }
    int d = ct__wrap_dim(op, dim, ts[0]->ndim + 1);
    if (d < 0) {
        return NULL;
    }
    const ct_tensor **views = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n);
    if (!views) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_scope_begin();
    for (int k = 0; k < n; k++) {
        views[k] = ct_unsqueeze(ts[k], d);
    }
    ct_tensor *out = ct_keep(ct_cat(views, n, d));
    ct_scope_end();
    ct__free(views);
    return out;
}

// >>part ops/reduce.c
/* ops/reduce.c - sum, mean, max, min, argmax, argmin.
 *
 * Legend: the input (made contiguous) is viewed as (outer, R, inner) around the reduced
 * dim; the result is (outer, inner). Kernels exist for float32, float64 and int64; other
 * integer types and bool reduce through int64.
 */

typedef enum ct__redop { CT__RSUM, CT__RMAX, CT__RMIN } ct__redop;

typedef struct ct__red_job {
    ct__redop op;
    const char *x;    /* (outer, R, inner) contiguous */
    char *v;          /* values (outer, inner) or NULL */
    int64_t *ix;      /* indices (outer, inner) or NULL */
    int64_t outer, R, inner, chunk;
} ct__red_job;

#define CT__RED_BLOCK 4096

/* Sum of n contiguous values: fixed blocks of CT__RED_BLOCK in 16 lanes, block sums in
   ACC. */
#define CT__SUM_FN(T, S, ACC)                                                              \
    static ACC ct__sum_##S(const T *p, int64_t n)                                           \
    {                                                                                       \
        ACC total = 0;                                                                      \
        for (int64_t b = 0; b < n; b += CT__RED_BLOCK) {                                    \
            int64_t m = n - b < CT__RED_BLOCK ? n - b : CT__RED_BLOCK;                      \
            const T *q = p + b;                                                             \
            T acc[16] = {0};                                                                \
            int64_t i = 0;                                                                  \
            for (; i + 16 <= m; i += 16) {                                                  \
                for (int k = 0; k < 16; k++) {                                              \
                    acc[k] += q[i + k];                                                     \
                }                                                                           \
            }                                                                               \
            T s = 0;                                                                        \
            for (int k = 0; k < 16; k++) {                                                  \
                s += acc[k];                                                                \
            }                                                                               \
            for (; i < m; i++) {                                                            \
                s += q[i];                                                                  \
            }                                                                               \
            total += (ACC)s;                                                                \
        }                                                                                   \
        return total;                                                                       \
    }

/* is v a better max (sign +1) / min (sign -1) than best? NaN wins and stays. */
#define CT__BETTER(v, best, sign)                                                          \
    ((best) == (best) && ((v) != (v) || ((sign) > 0 ? (v) > (best) : (v) < (best))))

#define CT__RED_KERNELS(T, S, ACC)                                                         \
    CT__SUM_FN(T, S, ACC)                                                                   \
    /* items: rows o of (outer, R), inner == 1 */                                           \
    static void ct__red_rows_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                       \
        const ct__red_job *j = (const ct__red_job *)ctx;                                    \
        for (int64_t o = b; o < e; o++) {                                                   \
            const T *p = (const T *)j->x + o * j->R;                                        \
            if (j->op == CT__RSUM) {                                                        \
                ((T *)j->v)[o] = (T)ct__sum_##S(p, j->R);                                   \
                continue;                                                                   \
            }                                                                               \
            int sign = j->op == CT__RMAX ? 1 : -1;                                          \
            T best = p[0];                                                                  \
            int64_t bi = 0;                                                                 \
            for (int64_t r = 1; r < j->R; r++) {                                            \
                if (CT__BETTER(p[r], best, sign)) {                                         \
                    best = p[r];                                                            \
                    bi = r;                                                                 \
                }                                                                           \
            }                                                                               \
            if (j->v) {                                                                     \
                ((T *)j->v)[o] = best;                                                      \
            }                                                                               \
            if (j->ix) {                                                                    \
                j->ix[o] = bi;                                                              \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    /* items: (o, column chunk) pairs; each reduces R rows of `chunk` columns */            \
    static void ct__red_cols_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                       \
        const ct__red_job *j = (const ct__red_job *)ctx;                                    \
        int64_t nchunks = (j->inner + j->chunk - 1) / j->chunk;                             \
        ACC acc[256];                                                                       \
        T best[256];                                                                        \
        int64_t bi[256];                                                                    \
        for (int64_t it = b; it < e; it++) {                                                \
            int64_t o = it / nchunks, c0 = (it % nchunks) * j->chunk;                       \
            int64_t w = j->inner - c0 < j->chunk ? j->inner - c0 : j->chunk;                \
            const T *p = (const T *)j->x + o * j->R * j->inner + c0;                        \
            T *v = j->v ? (T *)j->v + o * j->inner + c0 : NULL;                             \
            if (j->op == CT__RSUM) {                                                        \
                for (int64_t c = 0; c < w; c++) {                                           \
                    acc[c] = 0;                                                             \
                }                                                                           \
                for (int64_t r = 0; r < j->R; r++) {                                        \
                    const T *row = p + r * j->inner;                                        \
                    for (int64_t c = 0; c < w; c++) {                                       \
                        acc[c] += (ACC)row[c];                                              \
                    }                                                                       \
                }                                                                           \
                for (int64_t c = 0; c < w; c++) {                                           \
                    v[c] = (T)acc[c];                                                       \
                }                                                                           \
                continue;                                                                   \
            }                                                                               \
            int sign = j->op == CT__RMAX ? 1 : -1;                                          \
            for (int64_t c = 0; c < w; c++) {                                               \
                best[c] = p[c];                                                             \
                bi[c] = 0;                                                                  \
            }                                                                               \
            for (int64_t r = 1; r < j->R; r++) {                                            \
                const T *row = p + r * j->inner;                                            \
                for (int64_t c = 0; c < w; c++) {                                           \
                    bool take = CT__BETTER(row[c], best[c], sign);                          \
                    best[c] = take ? row[c] : best[c];                                      \
                    bi[c] = take ? r : bi[c];                                               \
                }                                                                           \
            }                                                                               \
            for (int64_t c = 0; c < w; c++) {                                               \
                if (v) {                                                                    \
                    v[c] = best[c];                                                         \
                }                                                                           \
                if (j->ix) {                                                                \
                    j->ix[o * j->inner + c0 + c] = bi[c];                                   \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
CT__RED_KERNELS(float, f32, double)
CT__RED_KERNELS(double, f64, double)
CT__RED_KERNELS(int64_t, i64, int64_t)

/* Runs a reduction of contiguous x as (outer, R, inner) into v / ix. */
static void ct__reduce_run(ct__redop op, const ct_tensor *x, int64_t outer, int64_t R,
                           int64_t inner, ct_tensor *v, ct_tensor *ix)
{
    ct__red_job j;
    j.op = op;
    j.x = ct__data(x);
    j.v = v ? ct__data(v) : NULL;
    j.ix = ix ? (int64_t *)ct__data(ix) : NULL;
    j.outer = outer;
    j.R = R;
    j.inner = inner;
    j.chunk = 256;
    void (*rows)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_rows_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_rows_f64
                                                                      : ct__red_rows_i64;
    void (*cols)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_cols_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_cols_f64
                                                                      : ct__red_cols_i64;
    if (inner == 1) {
        int64_t grain = R > 0 ? CT__GRAIN / R + 1 : CT__GRAIN;
        ct__parallel_for(outer, grain, rows, &j);
    } else {
        int64_t items = outer * ((inner + j.chunk - 1) / j.chunk);
        int64_t per_item = R * (inner < j.chunk ? inner : j.chunk);
        ct__parallel_for(items, CT__GRAIN / (per_item ? per_item : 1) + 1, cols, &j);
    }
}

/* The dtype reductions compute in: float32/float64 as is, everything else as int64. */
static ct_dtype ct__red_compute_dtype(ct_dtype d)
{
    return ct_dtype_is_floating_point(d) ? d : CT_INT64;
}

/* Reduces dim d of t (keepdim shape) into new unscoped tensors; values in compute dtype. */
static bool ct__reduce_dim_raw(const char *op, ct__redop rop, const ct_tensor *t, int d,
                               ct_tensor **values, ct_tensor **indices)
{
    ct_dtype cd = ct__red_compute_dtype(t->dtype);
    int64_t sizes[CT_MAX_DIMS];
    int nd = t->ndim;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)nd);
    int64_t outer = 1, inner = 1, R = nd ? t->sizes[d] : 1;
    for (int k = 0; k < nd; k++) {
        if (k < d) {
            outer *= sizes[k];
        } else if (k > d) {
            inner *= sizes[k];
        }
    }
    if (nd) {
        sizes[d] = 1;
    }
    if (rop != CT__RSUM && R == 0) {
        ct__fail(CT_ERR_VALUE, op, "Expected reduction dim %d to have non-zero size.", d);
        return false;
    }
    /* contiguous input in the compute dtype */
    ct_tensor *x = ct__tensor_new(op, t->sizes, nd, cd);
    ct_tensor *v = values ? ct__tensor_new(op, sizes, nd, cd) : NULL;
    ct_tensor *ix = indices ? ct__tensor_new(op, sizes, nd, CT_INT64) : NULL;
    bool ok = x && (!values || v) && (!indices || ix);
    if (ok) {
        bool reuse = t->dtype == cd && ct_is_contiguous(t);
        const ct_tensor *src = reuse ? t : x;
        if (!reuse) {
            ct__copy_kernel(x, t);
        }
        if (R == 0) {
            memset(ct__data(v), 0, ct_nbytes(v));
        } else {
            ct__reduce_run(rop, src, outer, R, inner, v, ix);
        }
    }
    ct__release(x);
    if (!ok) {
        ct__release(v);
        ct__release(ix);
        return false;
    }
    if (values) {
        *values = v;
    }
    if (indices) {
        *indices = ix;
    }
    return true;
}

/* Reduced-dims bitmask from a dims list (n == 0: all). */
static bool ct__dims_mask(const char *op, const ct_tensor *t, const int64_t *dims, int n,
                          unsigned *mask)
{
    *mask = 0;
    if (n == 0) {
        *mask = (1u << t->ndim) - 1u;
        return true;
    }
    if (ct__null(op, dims)) {
        return false;
    }
    for (int k = 0; k < n; k++) {
        int d = ct__wrap_dim(op, dims[k], t->ndim);
        if (d < 0) {
            return false;
        }
        if (t->ndim == 0) {
            continue;
        }
        if (*mask & (1u << d)) {
            ct__fail(CT_ERR_VALUE, op, "dim %d appears multiple times in the list of dims", d);
            return false;
        }
        *mask |= 1u << d;
    }
    return true;
}

/* Shape of t with the masked dims removed (or kept as 1). */
static int ct__reduced_shape(const ct_tensor *t, unsigned mask, bool keepdim, int64_t *out)
{
    int nd = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (!(mask & (1u << d))) {
            out[nd++] = t->sizes[d];
        } else if (keepdim) {
            out[nd++] = 1;
        }
    }
    return nd;
}

/* g (reduced shape) expanded back to the input's shape. */
static ct_tensor *ct__unreduce(const ct_node *n, const ct_tensor *g)
{
    const ct__edge *e = &n->next[0];
    unsigned mask = (unsigned)n->i[0];
    int64_t keep[CT_MAX_DIMS];
    for (int d = 0; d < e->ndim; d++) {
        keep[d] = (mask & (1u << d)) ? 1 : e->sizes[d];
    }
    return ct_expand(ct_reshape(g, keep, e->ndim), e->sizes, e->ndim);
}

static void ct__sum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__unreduce(n, g);
}

static void ct__mean_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_div_scalar(ct__unreduce(n, g), n->f[0]);
}

/* Sum (or mean) over the masked dims. */
static ct_tensor *ct__sum_impl(const char *op, const ct_tensor *t, const int64_t *dims, int n,
                               bool keepdim, bool mean)
{
    unsigned mask;
    if (ct__null(op, t) || !ct__check_cpu(op, t) || !ct__dims_mask(op, t, dims, n, &mask)) {
        return NULL;
    }
    if (mean && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "mean(): could not infer output dtype. Input dtype must be "
                 "either a floating point or complex dtype. Got: %s", ct_dtype_name(t->dtype));
        return NULL;
    }
    ct_tensor *cur = ct_retain((ct_tensor *)(uintptr_t)t);
    int64_t count = 1;
    for (int d = t->ndim - 1; d >= 0 && cur; d--) {
        if (!(mask & (1u << d))) {
            continue;
        }
        count *= t->sizes[d];
        ct_tensor *next = NULL;
        if (!ct__reduce_dim_raw(op, CT__RSUM, cur, d, &next, NULL)) {
            next = NULL;
        }
        ct__release(cur);
        cur = next;
    }
    if (cur && cur->dtype != ct__red_compute_dtype(t->dtype)) { /* 0-dim or no dims */
        ct_tensor *c = ct__tensor_new(op, cur->sizes, cur->ndim, ct__red_compute_dtype(t->dtype));
        if (c) {
            ct__copy_kernel(c, cur);
        }
        ct__release(cur);
        cur = c;
    }
    if (!cur) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    cur->ndim = ct__reduced_shape(t, mask, keepdim, shape);
    memcpy(cur->sizes, shape, sizeof(int64_t) * (size_t)cur->ndim);
    ct__contiguous_strides(cur->sizes, cur->ndim, cur->strides);
    if (mean) {
        double inv = count ? 1.0 / (double)count : NAN;
        int64_t m = ct_numel(cur);
        for (int64_t i = 0; i < m; i++) {
            char *p = ct__data(cur) + (size_t)i * ct_dtype_size(cur->dtype);
            ct__store_f64(p, cur->dtype, ct__load_f64(p, cur->dtype) * inv);
        }
    }
    if (ct_dtype_is_floating_point(t->dtype)) {
        ct_node *node = ct__node_new(mean ? "MeanBackward1" : "SumBackward1",
                                     mean ? ct__mean_backward : ct__sum_backward, &t, 1);
        if (node) {
            node->i[0] = mask;
            node->f[0] = (double)count;
        }
        ct__set_history(cur, node);
    }
    return ct__scoped(cur);
}

ct_tensor *ct_sum(const ct_tensor *t) { return ct__sum_impl("ct_sum", t, NULL, 0, false, false); }

ct_tensor *ct_sum_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__sum_impl("ct_sum", t, &dim, 1, keepdim, false);
}

ct_tensor *ct_sum_dims(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__sum_impl("ct_sum", t, dims, n, keepdim, false);
}

ct_tensor *ct_mean(const ct_tensor *t) { return ct__sum_impl("ct_mean", t, NULL, 0, false, true); }

ct_tensor *ct_mean_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__sum_impl("ct_mean", t, &dim, 1, keepdim, true);
}

ct_tensor *ct_sum_to_size(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_sum_to_size";
    if (ct__null(op, t)) {
        return NULL;
    }
    int64_t dims[CT_MAX_DIMS];
    int n = 0, lead = t->ndim - ndim;
    bool ok = lead >= 0 && (ndim == 0 || sizes);
    for (int d = 0; ok && d < t->ndim; d++) {
        if (d < lead) {
            dims[n++] = d;
        } else if (sizes[d - lead] == 1 && t->sizes[d] != 1) {
            dims[n++] = d;
        } else if (sizes[d - lead] != t->sizes[d]) {
            ok = false;
        }
    }
    if (!ok) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, op, "size {%s} is not expandable to size {%s}.",
                 ndim ? ct__shape_str(sizes, ndim, a, sizeof a) : "[]",
                 ct__shape_str(t->sizes, t->ndim, b, sizeof b));
        return NULL;
    }
    if (n == 0) {
        return ct_alias(t);
    }
    ct_scope_begin();
    ct_tensor *r = ct_reshape(ct_sum_dims(t, dims, n, true), sizes, ndim);
    ct_keep(r);
    ct_scope_end();
    return r;
}

/* ---- max / min / argmax / argmin ----------------------------------------------------- */
/* zeros of the input's shape with g placed at indices along dim (i[0]) */
static void ct__select_index_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    if (!ix) {
        return;
    }
    const ct__edge *e = &n->next[0];
    int d = (int)n->i[0];
    int64_t keep[CT_MAX_DIMS];
    memcpy(keep, e->sizes, sizeof keep);
    keep[d] = 1;
    ct_tensor *gc = ct_contiguous(ct_reshape(g, keep, e->ndim));
    ct_tensor *out = ct_zeros(e->sizes, e->ndim, g->dtype);
    if (!gc || !out) {
        return;
    }
    int64_t outer = 1, inner = 1, R = e->sizes[d];
    for (int k = 0; k < e->ndim; k++) {
        outer *= k < d ? e->sizes[k] : 1;
        inner *= k > d ? e->sizes[k] : 1;
    }
    const int64_t *idx = (const int64_t *)ct__data(ix);
    size_t es = ct_dtype_size(g->dtype);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t c = 0; c < inner; c++) {
            int64_t r = idx[o * inner + c];
            memcpy(ct__data(out) + (size_t)((o * R + r) * inner + c) * es,
                   ct__data(gc) + (size_t)(o * inner + c) * es, es);
        }
    }
    gi[0] = out;
}

static ct_status ct__minmax_dim(const char *op, ct__redop rop, const ct_tensor *t, int64_t dim,
                                bool keepdim, ct_tensor **values, ct_tensor **indices)
{
    if (values) {
        *values = NULL;
    }
    if (indices) {
        *indices = NULL;
    }
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return ct_error_code();
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    ct_tensor *v = NULL, *ix = NULL;
    if (d < 0 || !ct__reduce_dim_raw(op, rop, t, d, &v, &ix)) {
        return ct_error_code();
    }
    if (v->dtype != t->dtype) {
        ct_tensor *c = ct__tensor_new(op, v->sizes, v->ndim, t->dtype);
        if (c) {
            ct__copy_kernel(c, v);
        }
        ct__release(v);
        v = c;
    }
    if (!v) {
        ct__release(ix);
        return ct_error_code();
    }
    if (ct_dtype_is_floating_point(t->dtype)) {
        ct_node *n = ct__node_new(rop == CT__RMAX ? "MaxBackward0" : "MinBackward0",
                                  ct__select_index_backward, &t, 1);
        if (n) {
            n->i[0] = t->ndim ? d : 0;
            ct__save(n, ix);
        }
        ct__set_history(v, n);
    }
    if (!keepdim && t->ndim > 0) {
        int64_t shape[CT_MAX_DIMS];
        int nd = ct__reduced_shape(t, 1u << d, false, shape);
        for (int k = 0; k < 2; k++) {
            ct_tensor *r = k ? ix : v;
            r->ndim = nd;
            memcpy(r->sizes, shape, sizeof(int64_t) * (size_t)nd);
            ct__contiguous_strides(r->sizes, nd, r->strides);
        }
    }
    if (values) {
        *values = ct__scoped(v);
    } else {
        ct__release(v);
    }
    if (indices) {
        *indices = ct__scoped(ix);
    } else {
        ct__release(ix);
    }
    return CT_OK;
}

ct_status ct_max_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim("ct_max", CT__RMAX, t, dim, keepdim, values, indices);
}

ct_status ct_min_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim("ct_min", CT__RMIN, t, dim, keepdim, values, indices);
}

static ct_tensor *ct__arg_dim(const char *op, ct__redop rop, const ct_tensor *t, int64_t dim,
                              bool keepdim)
{
    ct_tensor *ix = NULL;
    ct__minmax_dim(op, rop, t, dim, keepdim, NULL, &ix);
    return ix;
}

ct_tensor *ct_argmax_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__arg_dim("ct_argmax", CT__RMAX, t, dim, keepdim);
}

ct_tensor *ct_argmin_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__arg_dim("ct_argmin", CT__RMIN, t, dim, keepdim);
}

static ct_tensor *ct__arg_all(const char *op, ct__redop rop, const ct_tensor *t)
{
    if (ct__null(op, t)) {
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = ct_keep(ct__arg_dim(op, rop, ct_flatten(t, 0, -1), 0, false));
    ct_scope_end();
    return r;
}

ct_tensor *ct_argmax(const ct_tensor *t) { return ct__arg_all("ct_argmax", CT__RMAX, t); }

ct_tensor *ct_argmin(const ct_tensor *t) { return ct__arg_all("ct_argmin", CT__RMIN, t); }

/* full max/min: the gradient is split evenly among the elements equal to the result */
static void ct__minmax_all_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    ct_tensor *mask = ct_to_dtype(ct_eq(x, y), g->dtype);
    gi[0] = ct_mul(mask, ct_div(g, ct_sum(mask)));
}

static ct_tensor *ct__minmax_all(const char *op, ct__redop rop, const ct_tensor *t)
{
    if (ct__null(op, t)) {
        return NULL;
    }
    if (ct_numel(t) == 0) {
        ct__fail(CT_ERR_VALUE, op, "%s(): Expected reduction dim to be specified for input.numel() "
                 "== 0. Specify the reduction dim with the 'dim' argument.",
                 rop == CT__RMAX ? "max" : "min");
        return NULL;
    }
    ct_tensor *v = NULL;
    ct_scope_begin();
    ct_no_grad_begin();
    ct__minmax_dim(op, rop, ct_flatten(t, 0, -1), 0, false, &v, NULL);
    ct_no_grad_end();
    ct_keep(v);
    ct_scope_end();
    if (v && ct_dtype_is_floating_point(t->dtype)) {
        ct_node *n = ct__node_new(rop == CT__RMAX ? "MaxBackward1" : "MinBackward1",
                                  ct__minmax_all_backward, &t, 1);
        if (n) {
            ct__save(n, t);
            ct__save(n, v);
        }
        ct__set_history(v, n);
    }
    return v;
}

ct_tensor *ct_max(const ct_tensor *t) { return ct__minmax_all("ct_max", CT__RMAX, t); }

ct_tensor *ct_min(const ct_tensor *t) { return ct__minmax_all("ct_min", CT__RMIN, t); }

#undef CT__RED_BLOCK
#undef CT__SUM_FN
#undef CT__BETTER
#undef CT__RED_KERNELS

// >>part ops/gemm.c
/* ops/gemm.c - packed, cache-blocked GEMM (the BLIS/GotoBLAS scheme) for float32 and float64.
 *
 * C = alpha * (A @ B) + beta * C, each operand given by a pointer and its row and column
 * strides in elements, so transposed and strided views cost nothing extra: packing copies
 * them into the layouts the micro-kernels read.
 *
 * Dimension legend:
 *   M, N, K   C is (M, N), A is (M, K), B is (K, N)
 *   MC, KC, NC  cache blocks: a packed A block (MC, KC) stays in L2 and a packed B panel
 *               (KC, NC) in L3; each B micro-panel (KC, NR) is reused from L1/L2 across
 *               the MC / MR micro-panels of A
 *   MR, NR    the register tile of the micro-kernel: MR rows of A times NR columns of B
 *   mr, nr    the valid part of an edge tile (mr <= MR, nr <= NR)
 *
 * Loop nest (outermost first): jc over NC columns, pc over KC (pack B), ic over MC rows
 * (pack A), jr over NR columns, ir over MR rows, then the micro-kernel over kc.
 *
 * Packed layouts (zero-padded to whole tiles):
 *   A block: for each MR-row micro-panel, kc steps of MR values:  a[p * MR + i]
 *   B panel: for each NR-col micro-panel, kc steps of NR values:  b[p * NR + j]
 *
 * Micro-kernels, chosen at compile time (MR x NR, float32 / float64):
 *   AVX-512F:     8 x 32 / 8 x 16   (16 zmm accumulators, A broadcast, B loaded)
 *   AVX2 + FMA:   6 x 16 / 6 x 8    (12 ymm accumulators)
 *   NEON aarch64: 8 x 12 / 8 x 6    (24 q accumulators, fma by lane of A)
 *   portable C:   4 x 8  / 4 x 8    (the only one under CTORCH_NO_SIMD)
 * The SIMD kernels run only half of their rows on edge tiles with mr <= MR / 2.
 *
 * Orientation: when C is column-major, or when N is so far below NR that the transposed
 * product pads much less (e.g. N = 10 logits), C^T = B^T @ A^T is computed instead; it is
 * the same product with the operands' strides swapped.
 *
 * Threads: C is split into a grid of ntm x ntn blocks (MR/NR-aligned), one per thread; each
 * thread packs its own A and B, so no barriers. Tiny products stay serial.
 * Determinism: each element of C sums its K products in the same order (kc blocks in turn,
 * p ascending within a block) whatever the thread count, so results are bit-exact across
 * thread counts; they differ in rounding between SIMD paths (FMA) and the portable path.
 */

#ifdef _OPENMP
#include <omp.h>
#endif

#if !defined(CTORCH_NO_SIMD) && defined(__AVX512F__)
#define CT__GEMM_AVX512 1
#include <immintrin.h>
#elif !defined(CTORCH_NO_SIMD) && defined(__AVX2__) && defined(__FMA__)
#define CT__GEMM_AVX2 1
#include <immintrin.h>
#elif !defined(CTORCH_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__)
#define CT__GEMM_NEON 1
#include <arm_neon.h>
#endif

/* Register tiles (see the legend above). */
#if defined(CT__GEMM_AVX512)
#define CT__GEMM_MR_f32 8
#define CT__GEMM_NR_f32 32
#define CT__GEMM_MR_f64 8
#define CT__GEMM_NR_f64 16
#elif defined(CT__GEMM_AVX2)
#define CT__GEMM_MR_f32 6
#define CT__GEMM_NR_f32 16
#define CT__GEMM_MR_f64 6
#define CT__GEMM_NR_f64 8
#elif defined(CT__GEMM_NEON)
#define CT__GEMM_MR_f32 8
#define CT__GEMM_NR_f32 12
#define CT__GEMM_MR_f64 8
#define CT__GEMM_NR_f64 6
#else
#define CT__GEMM_MR_f32 4
#define CT__GEMM_NR_f32 8
#define CT__GEMM_MR_f64 4
#define CT__GEMM_NR_f64 8
#endif

/* Cache blocks in elements, tuned on Zen4 (L1d 32K, L2 1M per core, 32M L3): the A block
   MC x KC is about 150K-200K, the B panel KC x NC 3-5M (performance was flat within a few
   percent for KC 256-512, MC 64-192). Each dimension is split into nearly equal blocks no
   larger than these. MC is a multiple of MR and NC of NR for every kernel above. */
#define CT__GEMM_KC_f32 384
#define CT__GEMM_MC_f32 96
#define CT__GEMM_NC_f32 3072
#define CT__GEMM_KC_f64 256
#define CT__GEMM_MC_f64 96
#define CT__GEMM_NC_f64 1536
/* Products with fewer multiply-adds than this (M * N * K) run on one thread. */
#define CT__GEMM_PAR_MIN_MACS ((int64_t)96 * 96 * 96)

#define CT__GEMM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CT__GEMM_CEIL(a, b) (((a) + (b)-1) / (b))
#define CT__GEMM_ROUND_UP(a, b) (CT__GEMM_CEIL(a, b) * (b))

/* ---------------------------------------------------------------------------------------
 * Micro-kernels.
 *
 * ct__gemm_ukr_<dt>(kc, a, b, alpha, beta, c, rsc, csc, mr, nr):
 *   a  packed A micro-panel (kc, MR), a[p * MR + i]
 *   b  packed B micro-panel (kc, NR), b[p * NR + j]
 *   c  the (mr, nr) tile of C at rows rsc, columns csc apart
 * computes C = alpha * (a @ b) + beta * C on the valid (mr, nr) part; beta == 0 does not
 * read C. Full tiles with csc == 1 are written straight from registers; edge tiles and
 * strided C go through a local (MR, NR) tile and ct__gemm_update_<dt>.
 * ------------------------------------------------------------------------------------- */

/* C (mr, nr) at (rsc, csc) = alpha * t + beta * C, t (MR, NR) row-major with row stride ldt. */
static void ct__gemm_update_f32(int64_t mr, int64_t nr, float alpha, const float *t, int64_t ldt,
                                float beta, float *c, int64_t rsc, int64_t csc)
{
    if (rsc == 1 && csc != 1) {
        // C column-major: walk down its contiguous columns
        for (int64_t j = 0; j < nr; j++) {
            float *cj = c + j * csc;
            if (beta == 0.0f) {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j];
                }
            } else {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j] + beta * cj[i];
                }
            }
        }
        return;
    }
    for (int64_t i = 0; i < mr; i++) {
        float *ci = c + i * rsc;
        const float *ti = t + i * ldt;
        if (beta == 0.0f) {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j];
            }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j] + beta * ci[j * csc];
            }
        }
    }
}

static void ct__gemm_update_f64(int64_t mr, int64_t nr, double alpha, const double *t,
                                int64_t ldt, double beta, double *c, int64_t rsc, int64_t csc)
{
    if (rsc == 1 && csc != 1) {
        // C column-major: walk down its contiguous columns
        for (int64_t j = 0; j < nr; j++) {
            double *cj = c + j * csc;
            if (beta == 0.0) {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j];
                }
            } else {
                for (int64_t i = 0; i < mr; i++) {
                    cj[i] = alpha * t[i * ldt + j] + beta * cj[i];
                }
            }
        }
        return;
    }
    for (int64_t i = 0; i < mr; i++) {
        double *ci = c + i * rsc;
        const double *ti = t + i * ldt;
        if (beta == 0.0) {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j];
            }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                ci[j * csc] = alpha * ti[j] + beta * ci[j * csc];
            }
        }
    }
}

#if defined(CT__GEMM_AVX512)

/* Row i of the tile: two zmm accumulators ci0, ci1 (16 columns each). */
#define CT__GEMM_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define CT__GEMM_ROWS4(X) X(0) X(1) X(2) X(3)
#define CT__GEMM_DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm512_set1_ps(a[i]);                                                             \
    c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);                                            \
    c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm512_mul_ps(c##i##0, va);                                                  \
    c##i##1 = _mm512_mul_ps(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm512_storeu_ps(c + i * rsc, c##i##0);                                                \
    _mm512_storeu_ps(c + i * rsc + 16, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm512_storeu_ps(c + i * rsc, _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + i * rsc), c##i##0)); \
    _mm512_storeu_ps(c + i * rsc + 16,                                                     \
                     _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + i * rsc + 16), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm512_storeu_ps(t + i * 32, c##i##0);                                                 \
    _mm512_storeu_ps(t + i * 32 + 16, c##i##1);
#define CT__GEMM_PREFETCH(i)                                                               \
    _mm_prefetch((const char *)(c + i * rsc), _MM_HINT_T0);                                \
    _mm_prefetch((const char *)(c + i * rsc + 31), _MM_HINT_T0);

/* float32, MR = 8, NR = 32. */
static void ct__gemm_ukr_f32(int64_t kc, const float *a, const float *b, float alpha, float beta,
                             float *c, int64_t rsc, int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    int full = mr == 8 && nr == 32 && csc == 1;
    if (full) {
        CT__GEMM_ROWS8(CT__GEMM_PREFETCH)
    }
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
            __m512 ai;
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += 8;
            b += 32;
        }
    } else {
        // a (kc, 8) and b (kc, 32) packed, contiguous; 16 zmm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
            __m512 ai;
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += 8;
            b += 32;
        }
    }
    __m512 va = _mm512_set1_ps(alpha);
    CT__GEMM_ROWS8(CT__GEMM_SCALE)
    if (full) {
        // c (8, 32) at rows rsc apart, contiguous columns
        if (beta == 0.0f) {
            CT__GEMM_ROWS8(CT__GEMM_STORE0)
        } else {
            __m512 vb = _mm512_set1_ps(beta);
            CT__GEMM_ROWS8(CT__GEMM_STOREB)
        }
        return;
    }
    float t[8 * 32];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f32(mr, nr, 1.0f, t, 32, beta, c, rsc, csc);
}

#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET
#undef CT__GEMM_PREFETCH

#define CT__GEMM_DECL(i) __m512d c##i##0 = _mm512_setzero_pd(), c##i##1 = _mm512_setzero_pd();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm512_set1_pd(a[i]);                                                             \
    c##i##0 = _mm512_fmadd_pd(ai, b0, c##i##0);                                            \
    c##i##1 = _mm512_fmadd_pd(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm512_mul_pd(c##i##0, va);                                                  \
    c##i##1 = _mm512_mul_pd(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm512_storeu_pd(c + i * rsc, c##i##0);                                                \
    _mm512_storeu_pd(c + i * rsc + 8, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm512_storeu_pd(c + i * rsc, _mm512_fmadd_pd(vb, _mm512_loadu_pd(c + i * rsc), c##i##0)); \
    _mm512_storeu_pd(c + i * rsc + 8,                                                      \
                     _mm512_fmadd_pd(vb, _mm512_loadu_pd(c + i * rsc + 8), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm512_storeu_pd(t + i * 16, c##i##0);                                                 \
    _mm512_storeu_pd(t + i * 16 + 8, c##i##1);
#define CT__GEMM_PREFETCH(i)                                                               \
    _mm_prefetch((const char *)(c + i * rsc), _MM_HINT_T0);                                \
    _mm_prefetch((const char *)(c + i * rsc + 15), _MM_HINT_T0);

/* float64, MR = 8, NR = 16. */
static void ct__gemm_ukr_f64(int64_t kc, const double *a, const double *b, double alpha,
                             double beta, double *c, int64_t rsc, int64_t csc, int64_t mr,
                             int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    int full = mr == 8 && nr == 16 && csc == 1;
    if (full) {
        CT__GEMM_ROWS8(CT__GEMM_PREFETCH)
    }
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
            __m512d ai;
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += 8;
            b += 16;
        }
    } else {
        // a (kc, 8) and b (kc, 16) packed, contiguous; 16 zmm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
            __m512d ai;
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += 8;
            b += 16;
        }
    }
    __m512d va = _mm512_set1_pd(alpha);
    CT__GEMM_ROWS8(CT__GEMM_SCALE)
    if (full) {
        // c (8, 16) at rows rsc apart, contiguous columns
        if (beta == 0.0) {
            CT__GEMM_ROWS8(CT__GEMM_STORE0)
        } else {
            __m512d vb = _mm512_set1_pd(beta);
            CT__GEMM_ROWS8(CT__GEMM_STOREB)
        }
        return;
    }
    double t[8 * 16];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f64(mr, nr, 1.0, t, 16, beta, c, rsc, csc);
}

#undef CT__GEMM_ROWS8
#undef CT__GEMM_ROWS4
#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET
#undef CT__GEMM_PREFETCH

#elif defined(CT__GEMM_AVX2)

/* Row i of the tile: two ymm accumulators ci0, ci1. */
#define CT__GEMM_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define CT__GEMM_ROWS3(X) X(0) X(1) X(2)
#define CT__GEMM_DECL(i) __m256 c##i##0 = _mm256_setzero_ps(), c##i##1 = _mm256_setzero_ps();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm256_broadcast_ss(a + i);                                                       \
    c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm256_mul_ps(c##i##0, va);                                                  \
    c##i##1 = _mm256_mul_ps(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm256_storeu_ps(c + i * rsc, c##i##0);                                                \
    _mm256_storeu_ps(c + i * rsc + 8, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm256_storeu_ps(c + i * rsc, _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + i * rsc), c##i##0)); \
    _mm256_storeu_ps(c + i * rsc + 8,                                                      \
                     _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + i * rsc + 8), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm256_storeu_ps(t + i * 16, c##i##0);                                                 \
    _mm256_storeu_ps(t + i * 16 + 8, c##i##1);

/* float32, MR = 6, NR = 16. */
static void ct__gemm_ukr_f32(int64_t kc, const float *a, const float *b, float alpha, float beta,
                             float *c, int64_t rsc, int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS6(CT__GEMM_DECL)
    if (mr <= 3) {
        // edge tile of at most 3 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            __m256 ai;
            CT__GEMM_ROWS3(CT__GEMM_FMA)
            a += 6;
            b += 16;
        }
    } else {
        // a (kc, 6) and b (kc, 16) packed, contiguous; 12 ymm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            __m256 ai;
            CT__GEMM_ROWS6(CT__GEMM_FMA)
            a += 6;
            b += 16;
        }
    }
    __m256 va = _mm256_set1_ps(alpha);
    CT__GEMM_ROWS6(CT__GEMM_SCALE)
    if (mr == 6 && nr == 16 && csc == 1) {
        // c (6, 16) at rows rsc apart, contiguous columns
        if (beta == 0.0f) {
            CT__GEMM_ROWS6(CT__GEMM_STORE0)
        } else {
            __m256 vb = _mm256_set1_ps(beta);
            CT__GEMM_ROWS6(CT__GEMM_STOREB)
        }
        return;
    }
    float t[6 * 16];
    CT__GEMM_ROWS6(CT__GEMM_STORET)
    ct__gemm_update_f32(mr, nr, 1.0f, t, 16, beta, c, rsc, csc);
}

#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET

#define CT__GEMM_DECL(i) __m256d c##i##0 = _mm256_setzero_pd(), c##i##1 = _mm256_setzero_pd();
#define CT__GEMM_FMA(i)                                                                    \
    ai = _mm256_broadcast_sd(a + i);                                                       \
    c##i##0 = _mm256_fmadd_pd(ai, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_pd(ai, b1, c##i##1);
#define CT__GEMM_SCALE(i)                                                                  \
    c##i##0 = _mm256_mul_pd(c##i##0, va);                                                  \
    c##i##1 = _mm256_mul_pd(c##i##1, va);
#define CT__GEMM_STORE0(i)                                                                 \
    _mm256_storeu_pd(c + i * rsc, c##i##0);                                                \
    _mm256_storeu_pd(c + i * rsc + 4, c##i##1);
#define CT__GEMM_STOREB(i)                                                                 \
    _mm256_storeu_pd(c + i * rsc, _mm256_fmadd_pd(vb, _mm256_loadu_pd(c + i * rsc), c##i##0)); \
    _mm256_storeu_pd(c + i * rsc + 4,                                                      \
                     _mm256_fmadd_pd(vb, _mm256_loadu_pd(c + i * rsc + 4), c##i##1));
#define CT__GEMM_STORET(i)                                                                 \
    _mm256_storeu_pd(t + i * 8, c##i##0);                                                  \
    _mm256_storeu_pd(t + i * 8 + 4, c##i##1);

/* float64, MR = 6, NR = 8. */
static void ct__gemm_ukr_f64(int64_t kc, const double *a, const double *b, double alpha,
                             double beta, double *c, int64_t rsc, int64_t csc, int64_t mr,
                             int64_t nr)
{
    CT__GEMM_ROWS6(CT__GEMM_DECL)
    if (mr <= 3) {
        // edge tile of at most 3 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
            __m256d ai;
            CT__GEMM_ROWS3(CT__GEMM_FMA)
            a += 6;
            b += 8;
        }
    } else {
        // a (kc, 6) and b (kc, 8) packed, contiguous; 12 ymm accumulators
        for (int64_t p = 0; p < kc; p++) {
            __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
            __m256d ai;
            CT__GEMM_ROWS6(CT__GEMM_FMA)
            a += 6;
            b += 8;
        }
    }
    __m256d va = _mm256_set1_pd(alpha);
    CT__GEMM_ROWS6(CT__GEMM_SCALE)
    if (mr == 6 && nr == 8 && csc == 1) {
        // c (6, 8) at rows rsc apart, contiguous columns
        if (beta == 0.0) {
            CT__GEMM_ROWS6(CT__GEMM_STORE0)
        } else {
            __m256d vb = _mm256_set1_pd(beta);
            CT__GEMM_ROWS6(CT__GEMM_STOREB)
        }
        return;
    }
    double t[6 * 8];
    CT__GEMM_ROWS6(CT__GEMM_STORET)
    ct__gemm_update_f64(mr, nr, 1.0, t, 8, beta, c, rsc, csc);
}

#undef CT__GEMM_ROWS6
#undef CT__GEMM_ROWS3
#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_SCALE
#undef CT__GEMM_STORE0
#undef CT__GEMM_STOREB
#undef CT__GEMM_STORET

#elif defined(CT__GEMM_NEON)

/* Row i of the tile: three q accumulators ci0..ci2; A comes as two (f32) or four (f64)
   q registers and each row multiplies by one lane of them. */
#define CT__GEMM_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define CT__GEMM_ROWS4(X) X(0) X(1) X(2) X(3)
#define CT__GEMM_DECL(i)                                                                   \
    float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define CT__GEMM_FMA(i)                                                                    \
    c##i##0 = vfmaq_laneq_f32(c##i##0, b0, (i) < 4 ? a0 : a1, (i) % 4);                   \
    c##i##1 = vfmaq_laneq_f32(c##i##1, b1, (i) < 4 ? a0 : a1, (i) % 4);                   \
    c##i##2 = vfmaq_laneq_f32(c##i##2, b2, (i) < 4 ? a0 : a1, (i) % 4);
#define CT__GEMM_STORET(i)                                                                 \
    vst1q_f32(t + i * 12, c##i##0);                                                        \
    vst1q_f32(t + i * 12 + 4, c##i##1);                                                    \
    vst1q_f32(t + i * 12 + 8, c##i##2);

/* float32, MR = 8, NR = 12. */
static void ct__gemm_ukr_f32(int64_t kc, const float *a, const float *b, float alpha, float beta,
                             float *c, int64_t rsc, int64_t csc, int64_t mr, int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
            float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += 8;
            b += 12;
        }
    } else {
        // a (kc, 8) and b (kc, 12) packed, contiguous; 24 q accumulators
        for (int64_t p = 0; p < kc; p++) {
            float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
            float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += 8;
            b += 12;
        }
    }
    float t[8 * 12];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f32(mr, nr, alpha, t, 12, beta, c, rsc, csc);
}

#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_STORET

#define CT__GEMM_DECL(i)                                                                   \
    float64x2_t c##i##0 = vdupq_n_f64(0.0), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define CT__GEMM_FMA(i)                                                                    \
    c##i##0 = vfmaq_laneq_f64(c##i##0, b0, CT__GEMM_AQ(i), (i) % 2);                      \
    c##i##1 = vfmaq_laneq_f64(c##i##1, b1, CT__GEMM_AQ(i), (i) % 2);                      \
    c##i##2 = vfmaq_laneq_f64(c##i##2, b2, CT__GEMM_AQ(i), (i) % 2);
#define CT__GEMM_AQ(i) ((i) < 2 ? a0 : (i) < 4 ? a1 : (i) < 6 ? a2 : a3)
#define CT__GEMM_STORET(i)                                                                 \
    vst1q_f64(t + i * 6, c##i##0);                                                         \
    vst1q_f64(t + i * 6 + 2, c##i##1);                                                     \
    vst1q_f64(t + i * 6 + 4, c##i##2);

/* float64, MR = 8, NR = 6. */
static void ct__gemm_ukr_f64(int64_t kc, const double *a, const double *b, double alpha,
                             double beta, double *c, int64_t rsc, int64_t csc, int64_t mr,
                             int64_t nr)
{
    CT__GEMM_ROWS8(CT__GEMM_DECL)
    if (mr <= 4) {
        // edge tile of at most 4 rows: the other rows stay zero
        for (int64_t p = 0; p < kc; p++) {
            float64x2_t a0 = vld1q_f64(a), a1 = vld1q_f64(a + 2);
            float64x2_t a2 = vld1q_f64(a + 4), a3 = vld1q_f64(a + 6);
            float64x2_t b0 = vld1q_f64(b), b1 = vld1q_f64(b + 2), b2 = vld1q_f64(b + 4);
            CT__GEMM_ROWS4(CT__GEMM_FMA)
            a += 8;
            b += 6;
        }
    } else {
        // a (kc, 8) and b (kc, 6) packed, contiguous; 24 q accumulators
        for (int64_t p = 0; p < kc; p++) {
            float64x2_t a0 = vld1q_f64(a), a1 = vld1q_f64(a + 2);
            float64x2_t a2 = vld1q_f64(a + 4), a3 = vld1q_f64(a + 6);
            float64x2_t b0 = vld1q_f64(b), b1 = vld1q_f64(b + 2), b2 = vld1q_f64(b + 4);
            CT__GEMM_ROWS8(CT__GEMM_FMA)
            a += 8;
            b += 6;
        }
    }
    double t[8 * 6];
    CT__GEMM_ROWS8(CT__GEMM_STORET)
    ct__gemm_update_f64(mr, nr, alpha, t, 6, beta, c, rsc, csc);
}

#undef CT__GEMM_ROWS8
#undef CT__GEMM_ROWS4
#undef CT__GEMM_DECL
#undef CT__GEMM_FMA
#undef CT__GEMM_AQ
#undef CT__GEMM_STORET

#else

/* Portable micro-kernel: (MR, NR) accumulators in a local array. */
#define CT__GEMM_PORTABLE_UKR(T, S)                                                        \
    static void ct__gemm_ukr_##S(int64_t kc, const T *a, const T *b, T alpha, T beta, T *c, \
                                 int64_t rsc, int64_t csc, int64_t mr, int64_t nr)         \
    {                                                                                      \
        const int MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                              \
        T t[CT__GEMM_MR_##S * CT__GEMM_NR_##S];                                            \
        for (int i = 0; i < MR * NR; i++) {                                                \
            t[i] = (T)0;                                                                   \
        }                                                                                  \
        /* a (kc, MR) and b (kc, NR) packed, contiguous; t (MR, NR) */                    \
        for (int64_t p = 0; p < kc; p++) {                                                 \
            for (int i = 0; i < MR; i++) {                                                 \
                T ai = a[p * MR + i];                                                      \
                for (int j = 0; j < NR; j++) {                                             \
                    t[i * NR + j] += ai * b[p * NR + j];                                   \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        ct__gemm_update_##S(mr, nr, alpha, t, NR, beta, c, rsc, csc);                      \
    }
CT__GEMM_PORTABLE_UKR(float, f32)
CT__GEMM_PORTABLE_UKR(double, f64)
#undef CT__GEMM_PORTABLE_UKR

#endif

/* ---------------------------------------------------------------------------------------
 * Transposing copies for packing: dst[p * R + l] = src[l * ld + p] for l < lines, p < kc.
 * They pack A when its rows are contiguous (csa == 1) and B when its columns are
 * (rsb == 1, e.g. a Linear weight used as W^T). With AVX, 8 x 8 (float32) or 4 x 4
 * (float64) blocks are transposed in registers; other lines go element by element.
 * ------------------------------------------------------------------------------------- */

static void ct__gemm_pack_t_f32(int64_t lines, int64_t kc, const float *src, int64_t ld,
                                float *dst, int64_t R)
{
    int64_t l = 0;
#if defined(CT__GEMM_AVX512) || defined(CT__GEMM_AVX2)
    // src (8, kc) at rows ld apart -> dst (kc, 8) at rows R apart, 8 x 8 blocks
    for (; l + 8 <= lines; l += 8) {
        const float *s = src + l * ld;
        float *d = dst + l;
        int64_t p = 0;
        for (; p + 8 <= kc; p += 8) {
            __m256 r0 = _mm256_loadu_ps(s + 0 * ld + p), r1 = _mm256_loadu_ps(s + 1 * ld + p);
            __m256 r2 = _mm256_loadu_ps(s + 2 * ld + p), r3 = _mm256_loadu_ps(s + 3 * ld + p);
            __m256 r4 = _mm256_loadu_ps(s + 4 * ld + p), r5 = _mm256_loadu_ps(s + 5 * ld + p);
            __m256 r6 = _mm256_loadu_ps(s + 6 * ld + p), r7 = _mm256_loadu_ps(s + 7 * ld + p);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
            float *dp = d + p * R;
            _mm256_storeu_ps(dp + 0 * R, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(dp + 1 * R, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(dp + 2 * R, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(dp + 3 * R, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(dp + 4 * R, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(dp + 5 * R, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(dp + 6 * R, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(dp + 7 * R, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
        for (; p < kc; p++) {
            for (int64_t i = 0; i < 8; i++) {
                d[p * R + i] = s[i * ld + p];
            }
        }
    }
#endif
    // src (lines - l, kc) -> dst (kc, lines - l), in chunks of 64 p that stay in L1
    for (int64_t p0 = 0; p0 < kc && l < lines; p0 += 64) {
        int64_t p1 = CT__GEMM_MIN(p0 + 64, kc);
        for (int64_t i = l; i < lines; i++) {
            for (int64_t p = p0; p < p1; p++) {
                dst[p * R + i] = src[i * ld + p];
            }
        }
    }
}

static void ct__gemm_pack_t_f64(int64_t lines, int64_t kc, const double *src, int64_t ld,
                                double *dst, int64_t R)
{
    int64_t l = 0;
#if defined(CT__GEMM_AVX512) || defined(CT__GEMM_AVX2)
    // src (4, kc) at rows ld apart -> dst (kc, 4) at rows R apart, 4 x 4 blocks
    for (; l + 4 <= lines; l += 4) {
        const double *s = src + l * ld;
        double *d = dst + l;
        int64_t p = 0;
        for (; p + 4 <= kc; p += 4) {
            __m256d r0 = _mm256_loadu_pd(s + 0 * ld + p), r1 = _mm256_loadu_pd(s + 1 * ld + p);
            __m256d r2 = _mm256_loadu_pd(s + 2 * ld + p), r3 = _mm256_loadu_pd(s + 3 * ld + p);
            __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
            __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            double *dp = d + p * R;
            _mm256_storeu_pd(dp + 0 * R, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(dp + 1 * R, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(dp + 2 * R, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(dp + 3 * R, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
        for (; p < kc; p++) {
            for (int64_t i = 0; i < 4; i++) {
                d[p * R + i] = s[i * ld + p];
            }
        }
    }
#endif
    // src (lines - l, kc) -> dst (kc, lines - l), in chunks of 64 p that stay in L1
    for (int64_t p0 = 0; p0 < kc && l < lines; p0 += 64) {
        int64_t p1 = CT__GEMM_MIN(p0 + 64, kc);
        for (int64_t i = l; i < lines; i++) {
            for (int64_t p = p0; p < p1; p++) {
                dst[p * R + i] = src[i * ld + p];
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Packing, the blocked loop nest, threading and the fallback, once per dtype.
 * ------------------------------------------------------------------------------------- */

/* Splits n into ceil(n / cap) nearly equal blocks, each rounded up to a multiple of unit
   (cap is a multiple of unit), so no tiny last block wastes a pass. */
static int64_t ct__gemm_block(int64_t n, int64_t cap, int64_t unit)
{
    int64_t nb = CT__GEMM_CEIL(n, cap);
    return CT__GEMM_ROUND_UP(CT__GEMM_CEIL(n, nb), unit);
}

#ifdef _OPENMP
/* Picks the thread grid ntm x ntn == nt that minimizes the padded work of the largest block
   plus the cost of packing its A and B. */
static void ct__gemm_grid(int64_t M, int64_t N, int nt, int64_t mr, int64_t nr, int *ntm,
                          int *ntn)
{
    double best = -1.0;
    *ntm = 1;
    *ntn = nt;
    for (int tm = 1; tm <= nt; tm++) {
        if (nt % tm != 0) {
            continue;
        }
        int tn = nt / tm;
        double m = (double)CT__GEMM_ROUND_UP(CT__GEMM_CEIL(M, tm), mr);
        double n = (double)CT__GEMM_ROUND_UP(CT__GEMM_CEIL(N, tn), nr);
        double cost = m * n + 4.0 * (m + n);
        if (best < 0.0 || cost < best) {
            best = cost;
            *ntm = tm;
            *ntn = tn;
        }
    }
}

/* Threads for a large product: ct_get_num_threads(), or 1 inside another parallel region. */
static int ct__gemm_threads(void)
{
    int nt = omp_in_parallel() ? 1 : ct_get_num_threads();
    return nt < 1 ? 1 : nt;
}

/* Start of part t of n split into nt parts in whole units. */
static int64_t ct__gemm_split(int64_t n, int64_t unit, int t, int nt)
{
    int64_t units = CT__GEMM_CEIL(n, unit);
    int64_t at = units * t / nt * unit;
    return CT__GEMM_MIN(at, n);
}
#endif

#define CT__GEMM_DEFINE(T, S)                                                              \
    /* Packs A (mc, kc) at (rsa, csa) into MR-row micro-panels: ap[p * MR + i]. */         \
    static void ct__gemm_pack_a_##S(int64_t mc, int64_t kc, const T *A, int64_t rsa,       \
                                    int64_t csa, T *ap)                                    \
    {                                                                                      \
        const int64_t MR = CT__GEMM_MR_##S;                                                \
        for (int64_t ir = 0; ir < mc; ir += MR) {                                          \
            int64_t mr = CT__GEMM_MIN(MR, mc - ir);                                        \
            const T *a = A + ir * rsa;                                                     \
            if (mr < MR) {                                                                 \
                memset(ap, 0, sizeof(T) * (size_t)(MR * kc));                              \
            }                                                                              \
            if (csa == 1 && rsa != 1) {                                                    \
                /* rows of A are contiguous: transpose (mr, kc) into (kc, MR) */           \
                ct__gemm_pack_t_##S(mr, kc, a, rsa, ap, MR);                               \
            } else if (rsa == 1 && mr == MR) {                                             \
                /* columns of A are contiguous (A transposed): MR values per p */          \
                for (int64_t p = 0; p < kc; p++) {                                         \
                    memcpy(ap + p * MR, a + p * csa, sizeof(T) * CT__GEMM_MR_##S);         \
                }                                                                          \
            } else {                                                                       \
                /* any strides: mr values per p */                                        \
                for (int64_t p = 0; p < kc; p++) {                                         \
                    for (int64_t i = 0; i < mr; i++) {                                     \
                        ap[p * MR + i] = a[p * csa + i * rsa];                             \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            ap += MR * kc;                                                                 \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* Packs B (kc, nc) at (rsb, csb) into NR-column micro-panels: bp[p * NR + j]. */      \
    static void ct__gemm_pack_b_##S(int64_t kc, int64_t nc, const T *B, int64_t rsb,       \
                                    int64_t csb, T *bp)                                    \
    {                                                                                      \
        const int64_t NR = CT__GEMM_NR_##S;                                                \
        for (int64_t jr = 0; jr < nc; jr += NR) {                                          \
            int64_t nr = CT__GEMM_MIN(NR, nc - jr);                                        \
            const T *b = B + jr * csb;                                                     \
            if (nr < NR) {                                                                 \
                memset(bp, 0, sizeof(T) * (size_t)(NR * kc));                              \
            }                                                                              \
            if (csb == 1 && nr == NR) {                                                    \
                /* rows of B are contiguous: NR values per p */                            \
                for (int64_t p = 0; p < kc; p++) {                                         \
                    memcpy(bp + p * NR, b + p * rsb, sizeof(T) * CT__GEMM_NR_##S);         \
                }                                                                          \
            } else if (rsb == 1 && csb != 1) {                                             \
                /* columns of B are contiguous (B transposed): transpose (nr, kc) */       \
                ct__gemm_pack_t_##S(nr, kc, b, csb, bp, NR);                               \
            } else {                                                                       \
                /* any strides: nr values per p */                                        \
                for (int64_t p = 0; p < kc; p++) {                                         \
                    for (int64_t j = 0; j < nr; j++) {                                     \
                        bp[p * NR + j] = b[p * rsb + j * csb];                             \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            bp += NR * kc;                                                                 \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* One thread's product on C (M, N), with packing buffers ap (MC, KC), bp (KC, NC). */ \
    static void ct__gemm_blocked_##S(int64_t M, int64_t N, int64_t K, T alpha, const T *A,  \
                                     int64_t rsa, int64_t csa, const T *B, int64_t rsb,    \
                                     int64_t csb, T beta, T *C, int64_t rsc, int64_t csc,  \
                                     T *ap, T *bp)                                         \
    {                                                                                      \
        const int64_t MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                          \
        int64_t MC = ct__gemm_block(M, CT__GEMM_MC_##S, MR);                               \
        int64_t NC = ct__gemm_block(N, CT__GEMM_NC_##S, NR);                               \
        int64_t KC = ct__gemm_block(K, CT__GEMM_KC_##S, 1);                                \
        /* jc: NC columns of B and C */                                                    \
        for (int64_t jc = 0; jc < N; jc += NC) {                                           \
            int64_t nc = CT__GEMM_MIN(NC, N - jc);                                         \
            /* pc: KC rows of B, columns of A; the first block applies beta */             \
            for (int64_t pc = 0; pc < K; pc += KC) {                                       \
                int64_t kc = CT__GEMM_MIN(KC, K - pc);                                     \
                T beta_p = pc == 0 ? beta : (T)1;                                          \
                ct__gemm_pack_b_##S(kc, nc, B + pc * rsb + jc * csb, rsb, csb, bp);        \
                /* ic: MC rows of A and C */                                               \
                for (int64_t ic = 0; ic < M; ic += MC) {                                   \
                    int64_t mc = CT__GEMM_MIN(MC, M - ic);                                 \
                    ct__gemm_pack_a_##S(mc, kc, A + ic * rsa + pc * csa, rsa, csa, ap);    \
                    /* jr, ir: (MR, NR) tiles of C (mc, nc); micro-panels kc long */       \
                    for (int64_t jr = 0; jr < nc; jr += NR) {                              \
                        for (int64_t ir = 0; ir < mc; ir += MR) {                          \
                            T *c = C + (ic + ir) * rsc + (jc + jr) * csc;                  \
                            ct__gemm_ukr_##S(kc, ap + ir * kc, bp + jr * kc, alpha, beta_p, \
                                             c, rsc, csc, CT__GEMM_MIN(MR, mc - ir),       \
                                             CT__GEMM_MIN(NR, nc - jr));                   \
                        }                                                                  \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* Unpacked fallback when no packing memory could be had: correct and slow. */         \
    static void ct__gemm_naive_##S(int64_t M, int64_t N, int64_t K, T alpha, const T *A,    \
                                   int64_t rsa, int64_t csa, const T *B, int64_t rsb,      \
                                   int64_t csb, T beta, T *C, int64_t rsc, int64_t csc)    \
    {                                                                                      \
        /* C (M, N), A (M, K), B (K, N), any strides */                                    \
        for (int64_t i = 0; i < M; i++) {                                                  \
            for (int64_t j = 0; j < N; j++) {                                              \
                T acc = (T)0;                                                              \
                for (int64_t p = 0; p < K; p++) {                                          \
                    acc += A[i * rsa + p * csa] * B[p * rsb + j * csb];                    \
                }                                                                          \
                T *c = C + i * rsc + j * csc;                                              \
                *c = beta == (T)0 ? alpha * acc : alpha * acc + beta * *c;                 \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    void ct__gemm_##S(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t rsa,    \
                      int64_t csa, const T *B, int64_t rsb, int64_t csb, T beta, T *C,     \
                      int64_t rsc, int64_t csc)                                            \
    {                                                                                      \
        const int64_t MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                          \
        if (M <= 0 || N <= 0) {                                                            \
            return;                                                                        \
        }                                                                                  \
        if (K <= 0 || alpha == (T)0) {                                                     \
            /* C (M, N) = beta * C; beta == 0 overwrites NaN */                            \
            for (int64_t i = 0; i < M; i++) {                                              \
                for (int64_t j = 0; j < N; j++) {                                          \
                    T *c = C + i * rsc + j * csc;                                          \
                    *c = beta == (T)0 ? (T)0 : beta * *c;                                  \
                }                                                                          \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        /* Compute C^T = B^T @ A^T instead when C is column-major, or when that pads much  \
           less (N far below NR). */                                                       \
        int64_t pad = CT__GEMM_ROUND_UP(M, MR) * CT__GEMM_ROUND_UP(N, NR);                 \
        int64_t pad_t = CT__GEMM_ROUND_UP(N, MR) * CT__GEMM_ROUND_UP(M, NR);               \
        int col_major = csc != 1 && rsc == 1;                                              \
        if ((col_major && pad_t <= pad + pad / 4) || (!col_major && 4 * pad_t < 3 * pad)) { \
            const T *tp = A;                                                               \
            int64_t t0 = M, t1 = rsa, t2 = csa;                                            \
            A = B;                                                                         \
            rsa = csb;                                                                     \
            csa = rsb;                                                                     \
            B = tp;                                                                        \
            rsb = t2;                                                                      \
            csb = t1;                                                                      \
            M = N;                                                                         \
            N = t0;                                                                        \
            t0 = rsc;                                                                      \
            rsc = csc;                                                                     \
            csc = t0;                                                                      \
        }                                                                                  \
        int nt = M * N * K >= CT__GEMM_PAR_MIN_MACS ? ct__gemm_threads() : 1;              \
        int64_t kc_max = CT__GEMM_MIN(K, (int64_t)CT__GEMM_KC_##S);                        \
        size_t a_len = (size_t)(CT__GEMM_ROUND_UP(CT__GEMM_MIN(M, (int64_t)CT__GEMM_MC_##S), \
                                                  MR) * kc_max);                           \
        size_t b_len = (size_t)(CT__GEMM_ROUND_UP(CT__GEMM_MIN(N, (int64_t)CT__GEMM_NC_##S), \
                                                  NR) * kc_max);                           \
        /* one buffer: per thread, an A block then a B panel, 64-byte multiples */         \
        size_t per_thread = CT__GEMM_ROUND_UP(a_len, (size_t)16) +                         \
                            CT__GEMM_ROUND_UP(b_len, (size_t)16);                          \
        T *buf = (T *)ct__malloc(sizeof(T) * per_thread * (size_t)nt);                     \
        if (buf == NULL && nt > 1) {                                                       \
            nt = 1;                                                                        \
            buf = (T *)ct__malloc(sizeof(T) * per_thread);                                 \
        }                                                                                  \
        if (buf == NULL) {                                                                 \
            ct__gemm_naive_##S(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc); \
            return;                                                                        \
        }                                                                                  \
        if (nt == 1) {                                                                     \
            ct__gemm_blocked_##S(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc,   \
                                 csc, buf, buf + CT__GEMM_ROUND_UP(a_len, (size_t)16));    \
            ct__free(buf);                                                                 \
            return;                                                                        \
        }                                                                                  \
        CT__GEMM_PARALLEL(T, S)                                                               \
        ct__free(buf);                                                                     \
    }

/* The threaded body of ct__gemm_<dt>: thread t of the ntm x ntn grid computes the C block
   (rows [m0, m1), columns [n0, n1)) with its own slice of buf. */
#ifdef _OPENMP
#define CT__GEMM_PARALLEL(T, S)                                                               \
    _Pragma("omp parallel num_threads(nt)")                                                \
    {                                                                                      \
        int t = omp_get_thread_num(), got = omp_get_num_threads();                         \
        int ntm, ntn;                                                                      \
        ct__gemm_grid(M, N, got, MR, NR, &ntm, &ntn);                                      \
        int tm = t / ntn, tn = t % ntn;                                                    \
        int64_t m0 = ct__gemm_split(M, MR, tm, ntm), m1 = ct__gemm_split(M, MR, tm + 1, ntm); \
        int64_t n0 = ct__gemm_split(N, NR, tn, ntn), n1 = ct__gemm_split(N, NR, tn + 1, ntn); \
        T *ap = buf + per_thread * (size_t)t;                                              \
        if (m1 > m0 && n1 > n0) {                                                          \
            ct__gemm_blocked_##S(m1 - m0, n1 - n0, K, alpha, A + m0 * rsa, rsa, csa,       \
                                 B + n0 * csb, rsb, csb, beta, C + m0 * rsc + n0 * csc,    \
                                 rsc, csc, ap, ap + CT__GEMM_ROUND_UP(a_len, (size_t)16)); \
        }                                                                                  \
    }
#else
static int ct__gemm_threads(void)
{
    return 1;
}
#define CT__GEMM_PARALLEL(T, S)                                                               \
    ct__gemm_blocked_##S(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc, buf, \
                         buf + CT__GEMM_ROUND_UP(a_len, (size_t)16));
#endif

CT__GEMM_DEFINE(float, f32)
CT__GEMM_DEFINE(double, f64)

#undef CT__GEMM_DEFINE
#undef CT__GEMM_PARALLEL
#undef CT__GEMM_AVX512
#undef CT__GEMM_AVX2
#undef CT__GEMM_NEON
#undef CT__GEMM_MR_f32
#undef CT__GEMM_NR_f32
#undef CT__GEMM_MR_f64
#undef CT__GEMM_NR_f64
#undef CT__GEMM_KC_f32
#undef CT__GEMM_MC_f32
#undef CT__GEMM_NC_f32
#undef CT__GEMM_KC_f64
#undef CT__GEMM_MC_f64
#undef CT__GEMM_NC_f64
#undef CT__GEMM_PAR_MIN_MACS
#undef CT__GEMM_MIN
#undef CT__GEMM_CEIL
#undef CT__GEMM_ROUND_UP

// >>part ops/linalg.c
/* ops/linalg.c - mm, bmm, addmm, matmul, mv, dot, linear and their derivatives.
 *
 * Legend: A (M, K) @ B (K, N) = C (M, N); batch b. Operands are passed to the GEMM with their
 * strides, so transposed views cost no copy (packing reads them directly).
 */

#ifdef CTORCH_OPENBLAS
#include <cblas.h>
#endif

#ifdef CTORCH_OPENBLAS
/* The leading dimension of a 2-D operand for cblas (transposed when its rows are not unit
   stride); false when neither dim has unit stride. */
static bool ct__blas_ld(const ct_tensor *t, bool trans, int64_t *ld)
{
    int64_t rows = trans ? t->sizes[1] : t->sizes[0], cols = trans ? t->sizes[0] : t->sizes[1];
    int64_t unit = trans ? t->strides[0] : t->strides[1];
    int64_t lead = trans ? t->strides[1] : t->strides[0];
    if (unit != 1 && cols > 1) {
        return false;
    }
    *ld = (rows <= 1 || lead < cols) ? (cols > 1 ? cols : 1) : lead;
    return lead >= cols || rows <= 1;
}
#endif

/* C (M, N) = alpha * A @ B + beta * C for 2-D strided views of one float dtype. */
static void ct__gemm(const ct_tensor *a, const ct_tensor *b, ct_tensor *c, double alpha,
                     double beta)
{
    int64_t M = c->sizes[0], N = c->sizes[1], K = a->sizes[1];
#ifdef CTORCH_OPENBLAS
    /* cblas (row-major) needs a unit stride in one dim of each operand */
    int64_t lda, ldb;
    bool ta = a->strides[1] != 1, tb = b->strides[1] != 1;
    bool ok = c->strides[1] == 1 && c->strides[0] >= N && M > 0 && N > 0 &&
              ct__blas_ld(a, ta, &lda) && ct__blas_ld(b, tb, &ldb);
    if (ok) {
        CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans, ob = tb ? CblasTrans : CblasNoTrans;
        if (c->dtype == CT_FLOAT32) {
            cblas_sgemm(CblasRowMajor, oa, ob, (int)M, (int)N, (int)K, (float)alpha,
                        (const float *)ct__data(a), (int)lda, (const float *)ct__data(b), (int)ldb,
                        (float)beta, (float *)ct__data(c), (int)c->strides[0]);
        } else {
            cblas_dgemm(CblasRowMajor, oa, ob, (int)M, (int)N, (int)K, alpha,
                        (const double *)ct__data(a), (int)lda, (const double *)ct__data(b),
                        (int)ldb, beta, (double *)ct__data(c), (int)c->strides[0]);
        }
        return;
    }
#endif
    if (c->dtype == CT_FLOAT32) {
        ct__gemm_f32(M, N, K, (float)alpha, (const float *)ct__data(a), a->strides[0], a->strides[1],
                     (const float *)ct__data(b), b->strides[0], b->strides[1], (float)beta,
                     (float *)ct__data(c), c->strides[0], c->strides[1]);
    } else {
        ct__gemm_f64(M, N, K, alpha, (const double *)ct__data(a), a->strides[0], a->strides[1],
                     (const double *)ct__data(b), b->strides[0], b->strides[1], beta,
                     (double *)ct__data(c), c->strides[0], c->strides[1]);
    }
}

static const char *ct__blas_dtype_name(ct_dtype d)
{
    return d == CT_FLOAT32 ? "float" : d == CT_FLOAT64 ? "double" : ct_dtype_name(d);
}

static bool ct__check_mat(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (ct__null(op, a) || ct__null(op, b) || !ct__check_cpu(op, a) || !ct__check_cpu(op, b)) {
        return false;
    }
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, op, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                 ct__blas_dtype_name(a->dtype), ct__blas_dtype_name(b->dtype));
        return false;
    }
    if (!ct_dtype_is_floating_point(a->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"addmm_impl_cpu_\" not implemented for '%s'",
                 ct_dtype_name(a->dtype));
        return false;
    }
    return true;
}

/* A 2-D view of t[b] for a 3-D t (unscoped, no autograd). */
static ct_tensor *ct__mat_at(const ct_tensor *t, int64_t b)
{
    return ct__tensor_over(t->storage, t->dtype, t->sizes + 1, t->strides + 1, 2,
                           t->offset + b * t->strides[0]);
}

/* ---- mm ------------------------------------------------------------------------------ */
static void ct__mm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) { /* dA = g @ B^T */
        gi[0] = ct_mm(g, ct_t(b));
    }
    if (ct__needs_grad(n, 1)) { /* dB = A^T @ g */
        gi[1] = ct_mm(ct_t(a), g);
    }
}

/* mm forward into a new unscoped tensor (no autograd). */
static ct_tensor *ct__mm_raw(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    int64_t shape[2] = {a->sizes[0], b->sizes[1]};
    ct_tensor *c = ct__tensor_new(op, shape, 2, a->dtype);
    if (c) {
        ct__gemm(a, b, c, 1.0, 0.0);
    }
    return c;
}

static bool ct__check_mm_shapes(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (a->ndim != 2 || b->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, op, "%s must be a matrix", a->ndim != 2 ? "self" : "mat2");
        return false;
    }
    if (a->sizes[1] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)", (long long)a->sizes[0], (long long)a->sizes[1],
                 (long long)b->sizes[0], (long long)b->sizes[1]);
        return false;
    }
    return true;
}

ct_tensor *ct_mm(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_mm";
    if (!ct__check_mat(op, a, b) || !ct__check_mm_shapes(op, a, b)) {
        return NULL;
    }
    ct_tensor *c = ct__mm_raw(op, a, b);
    if (!c) {
        return NULL;
    }
    const ct_tensor *ins[2] = {a, b};
    ct_node *n = ct__node_new("MmBackward0", ct__mm_backward, ins, 2);
    if (n) {
        ct__save(n, ct__needs_grad(n, 1) ? a : NULL);
        ct__save(n, ct__needs_grad(n, 0) ? b : NULL);
    }
    ct__set_history(c, n);
    return ct__scoped(c);
}

/* ---- addmm and linear ----------------------------------------------------------------- */
static void ct__addmm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    double beta = n->f[0], alpha = n->f[1];
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) { /* the engine sums to input's shape */
        gi[0] = beta == 1.0 ? (ct_tensor *)(uintptr_t)g : ct_mul_scalar(g, beta);
    }
    if (ct__needs_grad(n, 1)) {
        ct_tensor *d = ct_mm(g, ct_t(b));
        gi[1] = alpha == 1.0 ? d : ct_mul_scalar(d, alpha);
    }
    if (ct__needs_grad(n, 2)) {
        ct_tensor *d = ct_mm(ct_t(a), g);
        gi[2] = alpha == 1.0 ? d : ct_mul_scalar(d, alpha);
    }
}

ct_tensor *ct_addmm(const ct_tensor *input, const ct_tensor *a, const ct_tensor *b, double beta,
                    double alpha)
{
    const char *op = "ct_addmm";
    if (!ct__check_mat(op, a, b) || !ct__check_mm_shapes(op, a, b) ||
        !ct__check_mat(op, input, a)) {
        return NULL;
    }
    int64_t shape[2] = {a->sizes[0], b->sizes[1]}, bs[CT_MAX_DIMS];
    int bn = 0;
    if (input->ndim > 2 || !ct__broadcast_shapes(op, input->sizes, input->ndim, shape, 2, bs, &bn)
        || bs[0] != shape[0] || bs[1] != shape[1]) {
        char x[160];
        ct__fail(CT_ERR_SHAPE, op, "The expanded size of the tensor must match: input %s cannot "
                 "broadcast to [%lld, %lld]", ct__shape_str(input->sizes, input->ndim, x, sizeof x),
                 (long long)shape[0], (long long)shape[1]);
        return NULL;
    }
    ct_tensor *c = ct__tensor_new(op, shape, 2, a->dtype);
    if (!c) {
        return NULL;
    }
    if (beta != 0) { /* C = input (broadcast), then C = alpha*A@B + beta*C */
        ct__copy_kernel(c, input);
    }
    ct__gemm(a, b, c, alpha, beta);
    const ct_tensor *ins[3] = {input, a, b};
    ct_node *n = ct__node_new("AddmmBackward0", ct__addmm_backward, ins, 3);
    if (n) {
        n->f[0] = beta;
        n->f[1] = alpha;
        ct__save(n, ct__needs_grad(n, 2) ? a : NULL);
        ct__save(n, ct__needs_grad(n, 1) ? b : NULL);
    }
    ct__set_history(c, n);
    return ct__scoped(c);
}

ct_tensor *ct_linear(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias)
{
    const char *op = "ct_linear";
    if (ct__null(op, x) || ct__null(op, w)) {
        return NULL;
    }
    if (w->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, op, "weight must be 2-D (out_features, in_features), got %d-D",
                 w->ndim);
        return NULL;
    }
    if (x->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op, "both arguments to linear need to be at least 1D, but they are "
                 "0D and 2D");
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *out;
    if (x->ndim == 2 && bias) {
        out = ct_addmm(bias, x, ct_t(w), 1.0, 1.0);
    } else {
        out = ct_matmul(x, ct_t(w));
        if (bias) {
            out = ct_add(out, bias);
        }
    }
    ct_keep(out);
    ct_scope_end();
    return out;
}

/* ---- bmm ------------------------------------------------------------------------------ */
static void ct__bmm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_bmm(g, ct_transpose(b, 1, 2));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_bmm(ct_transpose(a, 1, 2), g);
    }
}

ct_tensor *ct_bmm(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_bmm";
    if (!ct__check_mat(op, a, b)) {
        return NULL;
    }
    if (a->ndim != 3 || b->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, op, "batch%d must be a 3D tensor", a->ndim != 3 ? 1 : 2);
        return NULL;
    }
    if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) {
        ct__fail(CT_ERR_SHAPE, op, "Expected size for first two dimensions of batch2 tensor to "
                 "be: [%lld, %lld] but got: [%lld, %lld].", (long long)a->sizes[0],
                 (long long)a->sizes[2], (long long)b->sizes[0], (long long)b->sizes[1]);
        return NULL;
    }
    int64_t shape[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    ct_tensor *c = ct__tensor_new(op, shape, 3, a->dtype);
    if (!c) {
        return NULL;
    }
    for (int64_t i = 0; i < shape[0]; i++) {
        ct_tensor *ai = ct__mat_at(a, i), *bi = ct__mat_at(b, i), *ci = ct__mat_at(c, i);
        if (ai && bi && ci) {
            ct__gemm(ai, bi, ci, 1.0, 0.0);
        }
        ct__release(ai);
        ct__release(bi);
        ct__release(ci);
    }
    const ct_tensor *ins[2] = {a, b};
    ct_node *n = ct__node_new("BmmBackward0", ct__bmm_backward, ins, 2);
    if (n) {
        ct__save(n, a);
        ct__save(n, b);
    }
    ct__set_history(c, n);
    return ct__scoped(c);
}

/* ---- dot, mv, matmul ---------------------------------------------------------------- */
ct_tensor *ct_dot(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_dot";
    if (!ct__check_mat(op, a, b)) {
        return NULL;
    }
    if (a->ndim != 1 || b->ndim != 1) {
        ct__fail(CT_ERR_SHAPE, op, "1D tensors expected, but got %dD and %dD tensors", a->ndim,
                 b->ndim);
        return NULL;
    }
    if (a->sizes[0] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op, "inconsistent tensor size, expected tensor [%lld] and src "
                 "[%lld] to have the same number of elements, but got %lld and %lld elements "
                 "respectively", (long long)a->sizes[0], (long long)b->sizes[0],
                 (long long)a->sizes[0], (long long)b->sizes[0]);
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = ct_keep(ct_reshape(ct_mm(ct_unsqueeze(a, 0), ct_unsqueeze(b, 1)), NULL, 0));
    ct_scope_end();
    return r;
}

ct_tensor *ct_mv(const ct_tensor *m, const ct_tensor *v)
{
    const char *op = "ct_mv";
    if (!ct__check_mat(op, m, v)) {
        return NULL;
    }
    if (m->ndim != 2 || v->ndim != 1 || m->sizes[1] != v->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                 (long long)(m->ndim ? m->sizes[0] : 0), (long long)(m->ndim ? m->sizes[0] : 0),
                 (long long)(m->ndim > 1 ? m->sizes[1] : 0), (long long)(v->ndim ? v->sizes[0] : 0));
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = ct_keep(ct_squeeze_dim(ct_mm(m, ct_unsqueeze(v, 1)), 1));
    ct_scope_end();
    return r;
}

/* batched matmul with broadcast batch dims: a (..., n, m) @ b (..., m, p) */
static ct_tensor *ct__matmul_batched(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    int64_t batch[CT_MAX_DIMS];
    int nb = 0;
    if (!ct__broadcast_shapes(op, a->sizes, a->ndim - 2, b->sizes, b->ndim - 2, batch, &nb)) {
        return NULL;
    }
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 2]) {
        char x[160], y[160];
        ct__fail(CT_ERR_SHAPE, op, "Expected size for first two dimensions of batch2 tensor to "
                 "be: [%s, %lld] but got: [%s, %lld].", ct__shape_str(batch, nb, x, sizeof x),
                 (long long)a->sizes[a->ndim - 1], ct__shape_str(batch, nb, y, sizeof y),
                 (long long)b->sizes[b->ndim - 2]);
        return NULL;
    }
    int64_t B = ct__numel(batch, nb);
    int64_t ea[CT_MAX_DIMS], eb[CT_MAX_DIMS], sa[3], sb[3];
    memcpy(ea, batch, sizeof(int64_t) * (size_t)nb);
    memcpy(eb, batch, sizeof(int64_t) * (size_t)nb);
    ea[nb] = a->sizes[a->ndim - 2];
    ea[nb + 1] = a->sizes[a->ndim - 1];
    eb[nb] = b->sizes[b->ndim - 2];
    eb[nb + 1] = b->sizes[b->ndim - 1];
    sa[0] = B;
    sa[1] = ea[nb];
    sa[2] = ea[nb + 1];
    sb[0] = B;
    sb[1] = eb[nb];
    sb[2] = eb[nb + 1];
    int64_t out[CT_MAX_DIMS];
    memcpy(out, batch, sizeof(int64_t) * (size_t)nb);
    out[nb] = ea[nb];
    out[nb + 1] = eb[nb + 1];
    ct_scope_begin();
    ct_tensor *r = ct_bmm(ct_reshape(ct_expand(a, ea, nb + 2), sa, 3),
                          ct_reshape(ct_expand(b, eb, nb + 2), sb, 3));
    r = ct_keep(ct_reshape(r, out, nb + 2));
    ct_scope_end();
    return r;
}

ct_tensor *ct_matmul(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_matmul";
    if (!ct__check_mat(op, a, b)) {
        return NULL;
    }
    if (a->ndim == 0 || b->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op, "both arguments to matmul need to be at least 1D, but they are "
                 "%dD and %dD", a->ndim, b->ndim);
        return NULL;
    }
    if (a->ndim == 1 && b->ndim == 1) {
        return ct_dot(a, b);
    }
    if (a->ndim == 2 && b->ndim == 1) {
        return ct_mv(a, b);
    }
    if (a->ndim == 1 && b->ndim == 2) {
        if (a->sizes[0] != b->sizes[0]) {
            ct__fail(CT_ERR_SHAPE, op, "mat1 and mat2 shapes cannot be multiplied (1x%lld and "
                     "%lldx%lld)", (long long)a->sizes[0], (long long)b->sizes[0],
                     (long long)b->sizes[1]);
            return NULL;
        }
        ct_scope_begin();
        ct_tensor *r = ct_keep(ct_squeeze_dim(ct_mm(ct_unsqueeze(a, 0), b), 0));
        ct_scope_end();
        return r;
    }
    if (a->ndim == 2 && b->ndim == 2) {
        return ct_mm(a, b);
    }
    if (b->ndim == 2 && a->ndim > 2) { /* fold the batch into rows: one big GEMM */
        if (a->sizes[a->ndim - 1] != b->sizes[0]) {
            ct__fail(CT_ERR_SHAPE, op, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                     "%lldx%lld)", (long long)(ct_numel(a) / a->sizes[a->ndim - 1]),
                     (long long)a->sizes[a->ndim - 1], (long long)b->sizes[0],
                     (long long)b->sizes[1]);
            return NULL;
        }
        int64_t rows[2] = {-1, a->sizes[a->ndim - 1]}, out[CT_MAX_DIMS];
        memcpy(out, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
        out[a->ndim - 1] = b->sizes[1];
        ct_scope_begin();
        ct_tensor *r = ct_keep(ct_reshape(ct_mm(ct_reshape(a, rows, 2), b), out, a->ndim));
        ct_scope_end();
        return r;
    }
    /* promote 1-D operands to matrices, multiply batched, drop the added dims */
    ct_scope_begin();
    const ct_tensor *a2 = a->ndim == 1 ? ct_unsqueeze(a, 0) : a;
    const ct_tensor *b2 = b->ndim == 1 ? ct_unsqueeze(b, 1) : b;
    ct_tensor *r = ct__matmul_batched(op, a2, b2);
    if (r && b->ndim == 1) {
        r = ct_squeeze_dim(r, -1);
    }
    if (r && a->ndim == 1) {
        r = ct_squeeze_dim(r, -2);
    }
    ct_keep(r);
    ct_scope_end();
    return r;
}

// >>part ops/softmax.c
/* ops/softmax.c - fused, numerically stable softmax and log_softmax.
 *
 * Legend: the input (made contiguous) is (outer, R, inner) around dim; each (o, c) line of R
 * elements at stride inner is normalized independently, in parallel over lines.
 * Determinism: each line is computed by one thread in a fixed order: bit-exact across
 * thread counts.
 */

typedef struct ct__softmax_job {
    const char *x;
    char *y;
    int64_t R, inner;
    bool log;
} ct__softmax_job;

#define CT__SOFTMAX_KERNEL(T, S, F)                                                        \
    static void ct__softmax_lines_##S(int64_t b, int64_t e, void *ctx)                      \
    {                                                                                       \
        const ct__softmax_job *j = (const ct__softmax_job *)ctx;                            \
        int64_t R = j->R, in = j->inner;                                                    \
        for (int64_t line = b; line < e; line++) {                                          \
            int64_t o = line / in, c = line % in;                                           \
            const T *x = (const T *)j->x + o * R * in + c;                                  \
            T *y = (T *)j->y + o * R * in + c;                                              \
            T mx = -(T)INFINITY;                                                            \
            for (int64_t r = 0; r < R; r++) {                                               \
                mx = x[r * in] > mx || x[r * in] != x[r * in] ? x[r * in] : mx;             \
            }                                                                               \
            T sum = 0;                                                                      \
            if (j->log) {                                                                   \
                for (int64_t r = 0; r < R; r++) {                                           \
                    sum += exp##F(x[r * in] - mx);                                          \
                }                                                                           \
                T lse = mx + log##F(sum);                                                   \
                for (int64_t r = 0; r < R; r++) {                                           \
                    y[r * in] = x[r * in] - lse;                                            \
                }                                                                           \
            } else {                                                                        \
                for (int64_t r = 0; r < R; r++) {                                           \
                    y[r * in] = exp##F(x[r * in] - mx);                                     \
                    sum += y[r * in];                                                       \
                }                                                                           \
                T inv = (T)1 / sum;                                                         \
                for (int64_t r = 0; r < R; r++) {                                           \
                    y[r * in] *= inv;                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
CT__SOFTMAX_KERNEL(float, f32, f)
CT__SOFTMAX_KERNEL(double, f64, )

static void ct__softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* y * (g - sum(g * y)) */
    const ct_tensor *y = ct__saved(n, 0);
    gi[0] = ct_mul(y, ct_sub(g, ct_sum_dim(ct_mul(g, y), n->i[0], true)));
}

static void ct__log_softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g - exp(y) * sum(g) */
    const ct_tensor *y = ct__saved(n, 0);
    gi[0] = ct_sub(g, ct_mul(ct_exp(y), ct_sum_dim(g, n->i[0], true)));
}

static ct_tensor *ct__softmax_impl(const char *op, const ct_tensor *t, int64_t dim, bool log)
{
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return NULL;
    }
    if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s_lastdim_kernel_impl\" not implemented for '%s'",
                 log ? "log_softmax" : "softmax", ct_dtype_name(t->dtype));
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    if (d < 0) {
        return NULL;
    }
    ct_tensor *x = ct_is_contiguous(t) ? ct_retain((ct_tensor *)(uintptr_t)t)
                                       : ct__tensor_new(op, t->sizes, t->ndim, t->dtype);
    ct_tensor *y = ct__tensor_new(op, t->sizes, t->ndim, t->dtype);
    if (!x || !y) {
        ct__release(x);
        ct__release(y);
        return NULL;
    }
    if (x != t) {
        ct__copy_kernel(x, t);
    }
    ct__softmax_job j;
    j.x = ct__data(x);
    j.y = ct__data(y);
    j.R = t->ndim ? t->sizes[d] : 1;
    j.inner = 1;
    j.log = log;
    for (int k = d + 1; k < t->ndim; k++) {
        j.inner *= t->sizes[k];
    }
    int64_t lines = j.R ? ct_numel(t) / j.R : 0;
    int64_t grain = CT__GRAIN / (j.R ? j.R : 1) + 1;
    ct__parallel_for(lines, grain, t->dtype == CT_FLOAT32 ? ct__softmax_lines_f32
                                                          : ct__softmax_lines_f64, &j);
    ct__release(x);
    ct_node *n = ct__node_new(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0",
                              log ? ct__log_softmax_backward : ct__softmax_backward, &t, 1);
    if (n) {
        n->i[0] = d;
        ct__save(n, y);
    }
    ct__set_history(y, n);
    return ct__scoped(y);
}

ct_tensor *ct_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__softmax_impl("ct_softmax", t, dim, false);
}

ct_tensor *ct_log_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__softmax_impl("ct_log_softmax", t, dim, true);
}

#undef CT__SOFTMAX_KERNEL

// >>part autograd/autograd.c
/* autograd/autograd.c - graph nodes, the engine, grad mode. */

static CT__THREAD_LOCAL bool ct__grad_off = false;
static CT__THREAD_LOCAL bool ct__grad_stack[64];
static CT__THREAD_LOCAL int ct__grad_depth = 0;
static CT__THREAD_LOCAL uint64_t ct__node_seq = 0;
static CT__THREAD_LOCAL uint64_t ct__engine_epoch = 0;

/* ---- grad mode ---------------------------------------------------------------------- */
bool ct_is_grad_enabled(void) { return !ct__grad_off; }

void ct_set_grad_enabled(bool enabled) { ct__grad_off = !enabled; }

void ct_no_grad_begin(void)
{
    if (ct__grad_depth < 64) {
        ct__grad_stack[ct__grad_depth] = ct__grad_off;
    }
    ct__grad_depth++;
    ct__grad_off = true;
}

void ct_no_grad_end(void)
{
    if (ct__grad_depth == 0) {
        return;
    }
    ct__grad_depth--;
    ct__grad_off = ct__grad_depth < 64 ? ct__grad_stack[ct__grad_depth] : true;
}

/* ---- tensor autograd attributes ------------------------------------------------------ */
bool ct_requires_grad(const ct_tensor *t) { return t && (t->requires_grad || t->grad_fn); }

bool ct_is_leaf(const ct_tensor *t) { return t && !t->grad_fn; }

const ct_node *ct_grad_fn(const ct_tensor *t) { return t ? t->grad_fn : NULL; }

const char *ct_node_name(const ct_node *n) { return n ? n->name : NULL; }

const char *ct__node_name(const ct_node *n) { return n->name; }

ct_tensor *ct_grad(const ct_tensor *t) { return t ? t->grad : NULL; }

ct_tensor *ct_requires_grad_(ct_tensor *t, bool requires_grad)
{
    const char *op = "ct_requires_grad_";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (t->grad_fn) {
        ct__fail(CT_ERR_AUTOGRAD, op, "you can only change requires_grad flags of leaf "
                 "variables.");
        return NULL;
    }
    if (requires_grad && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "only Tensors of floating point dtype can require "
                 "gradients");
        return NULL;
    }
    t->requires_grad = requires_grad;
    return t;
}

ct_status ct_set_grad(ct_tensor *t, ct_tensor *grad)
{
    const char *op = "ct_set_grad";
    if (ct__null(op, t)) {
        return ct_error_code();
    }
    if (grad && (grad->ndim != t->ndim ||
                 memcmp(grad->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim) != 0)) {
        return ct__fail(CT_ERR_SHAPE, op, "assigned grad has data of a different size");
    }
    ct_retain(grad);
    ct__release(t->grad);
    t->grad = grad;
    return CT_OK;
}

ct_status ct_retain_grad(ct_tensor *t)
{
    if (ct__null("ct_retain_grad", t)) {
        return ct_error_code();
    }
    if (!ct_requires_grad(t)) {
        return ct__fail(CT_ERR_AUTOGRAD, "ct_retain_grad", "can't retain_grad on Tensor that "
                        "has requires_grad=False");
    }
    if (t->grad_fn) {
        t->retains_grad = true;
        t->grad_fn->retain_target = t;
    }
    return CT_OK;
}

ct_tensor *ct__alias(const ct_tensor *t)
{
    return ct__tensor_over(t->storage, t->dtype, t->sizes, t->strides, t->ndim, t->offset);
}

ct_tensor *ct_detach(const ct_tensor *t)
{
    return ct__null("ct_detach", t) ? NULL : ct__scoped(ct__alias(t));
}

ct_tensor *ct_detach_(ct_tensor *t)
{
    if (ct__null("ct_detach_", t)) {
        return NULL;
    }
    ct__node_release(t->grad_fn);
    t->grad_fn = NULL;
    t->requires_grad = false;
    return t;
}

ct_status ct_register_hook(ct_tensor *t, ct_tensor_hook fn, void *user)
{
    const char *op = "ct_register_hook";
    if (ct__null(op, t) || ct__null(op, (const void *)(uintptr_t)(fn != NULL))) {
        return ct_error_code();
    }
    if (!ct_requires_grad(t)) {
        return ct__fail(CT_ERR_AUTOGRAD, op, "cannot register a hook on a tensor that doesn't "
                        "require gradient");
    }
    ct__hook *h = (ct__hook *)ct__calloc(sizeof(ct__hook));
    if (!h) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    h->fn = fn;
    h->user = user;
    ct__hook **list = t->grad_fn ? &t->grad_fn->pre_hooks : &t->hooks;
    while (*list) {
        list = &(*list)->next;
    }
    *list = h;
    return CT_OK;
}

/* ---- nodes -------------------------------------------------------------------------- */
bool ct__any_requires_grad(const ct_tensor *const *inputs, int n)
{
    if (ct__grad_off) {
        return false;
    }
    for (int k = 0; k < n; k++) {
        if (inputs[k] && ct_requires_grad(inputs[k])) {
            return true;
        }
    }
    return false;
}

ct_node *ct__node_new(const char *name, ct__backward_fn fn, const ct_tensor *const *inputs, int n)
{
    if (!ct__any_requires_grad(inputs, n)) {
        return NULL;
    }
    ct_node *node = (ct_node *)ct__calloc(sizeof(ct_node));
    ct__edge *next = (ct__edge *)ct__calloc(sizeof(ct__edge) * (size_t)(n ? n : 1));
    if (!node || !next) {
        ct__free(node);
        ct__free(next);
        ct__fail(CT_ERR_OOM, name, "out of memory recording the graph");
        return NULL;
    }
    node->name = name;
    node->refcount = 1;
    node->seq = ++ct__node_seq;
    node->backward = fn;
    node->n_next = n;
    node->next = next;
    for (int k = 0; k < n; k++) {
        const ct_tensor *t = inputs[k];
        if (!t) {
            continue;
        }
        ct__edge *e = &next[k];
        e->ndim = t->ndim;
        e->dtype = t->dtype;
        memcpy(e->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
        if (t->grad_fn) {
            e->node = t->grad_fn;
            CT__ATOMIC_ADD(&e->node->refcount, 1);
        } else if (t->requires_grad) {
            e->leaf = ct_retain((ct_tensor *)(uintptr_t)t);
        }
    }
    return node;
}

void ct__save(ct_node *n, const ct_tensor *t)
{
    CT_ASSERT(n->n_saved < CT__NODE_SAVED);
    n->saved[n->n_saved] = t ? ct__alias(t) : NULL;
    n->saved_version[n->n_saved] = t ? t->storage->version : 0;
    n->n_saved++;
}

const ct_tensor *ct__saved(ct_node *n, int k)
{
    const ct_tensor *t = n->saved[k];
    if (n->released) {
        ct__fail(CT_ERR_AUTOGRAD, n->name, "Trying to backward through the graph a second "
                 "time (or directly access saved tensors after they have already been freed). "
                 "Specify retain_graph=True if you need to backward through the graph a second "
                 "time.");
        return NULL;
    }
    if (t && t->storage->version != n->saved_version[k]) {
        char buf[160];
        ct__fail(CT_ERR_AUTOGRAD, n->name, "one of the variables needed for gradient "
                 "computation has been modified by an inplace operation: [%s %s] is at version "
                 "%u; expected version %u instead.", ct_dtype_name(t->dtype),
                 ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), t->storage->version,
                 n->saved_version[k]);
        return NULL;
    }
    return t;
}

void ct__set_history(ct_tensor *out, ct_node *n)
{
    if (out && n) {
        out->grad_fn = n;
    } else {
        ct__node_release(n);
    }
}

static void ct__node_free_saved(ct_node *n)
{
    for (int k = 0; k < n->n_saved; k++) {
        ct__release(n->saved[k]);
        n->saved[k] = NULL;
    }
}

void ct__node_release(ct_node *n)
{
    if (!n || CT__ATOMIC_ADD(&n->refcount, -1) > 0) {
        return;
    }
    for (int k = 0; k < n->n_next; k++) {
        ct__node_release(n->next[k].node);
        ct__release(n->next[k].leaf);
    }
    ct__node_free_saved(n);
    if (n->ctx_free) {
        n->ctx_free(n->ctx);
    }
    for (ct__hook *h = n->pre_hooks; h;) {
        ct__hook *next = h->next;
        ct__free(h);
        h = next;
    }
    ct__release(n->buffer);
    ct__free(n->next);
    ct__free(n);
}

bool ct__check_inplace(const char *op, const ct_tensor *t)
{
    if (!ct__grad_off && t->requires_grad && !t->grad_fn) {
        ct__fail(CT_ERR_AUTOGRAD, op, "a leaf Variable that requires grad is being used in an "
                 "in-place operation.");
        return false;
    }
    return true;
}

void ct__rebase_history(ct_tensor *t, ct_node *n)
{
    if (!n) {
        return;
    }
    ct__node_release(t->grad_fn);
    t->grad_fn = n;
}

/* ---- engine ------------------------------------------------------------------------- */
typedef struct ct__engine {
    ct_node **nodes; /* every node reachable from the roots */
    int64_t n_nodes, cap;
    ct_node **ready; /* max-heap on seq */
    int64_t n_ready;
    bool retain_graph, create_graph;
    /* ct_autograd_grad: capture instead of accumulating into .grad */
    ct_tensor *const *inputs;
    int n_inputs;
    ct_tensor **captured;
} ct__engine;

static bool ct__engine_push(ct__engine *e, ct_node *n)
{
    if (e->n_nodes == e->cap) {
        int64_t cap = e->cap ? e->cap * 2 : 64;
        ct_node **nodes = (ct_node **)ct__realloc(e->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) {
            ct__fail(CT_ERR_OOM, "ct_backward", "out of memory");
            return false;
        }
        e->nodes = nodes;
        e->cap = cap;
    }
    e->nodes[e->n_nodes++] = n;
    return true;
}

static ct_tensor *ct__run_hooks(ct__hook *h, ct_tensor *g)
{
    for (; h && g; h = h->next) {
        ct_tensor *r = h->fn(g, h->user);
        if (r) {
            g = r;
        }
    }
    return g;
}

/* Sums g to the edge's shape and casts it to the edge's dtype. */
static ct_tensor *ct__engine_fit(const ct__edge *e, ct_tensor *g)
{
    if (g->ndim != e->ndim || memcmp(g->sizes, e->sizes, sizeof(int64_t) * (size_t)e->ndim)) {
        g = ct_sum_to_size(g, e->sizes, e->ndim);
    }
    if (g && g->dtype != e->dtype) {
        g = ct_to_dtype(g, e->dtype);
    }
    return g;
}

static int ct__engine_input_index(const ct__engine *e, const ct_tensor *leaf, const ct_node *n)
{
    for (int i = 0; i < e->n_inputs; i++) {
        if ((leaf && e->inputs[i] == leaf) || (n && e->inputs[i]->grad_fn == n)) {
            return i;
        }
    }
    return -1;
}

/* Adds g into *slot (a retained reference), out of place so shared tensors stay intact. */
static void ct__engine_accumulate(ct_tensor **slot, ct_tensor *g)
{
    if (!*slot) {
        *slot = ct_retain(g);
        return;
    }
    ct_tensor *sum = ct_add(*slot, g);
    ct__release(*slot);
    *slot = ct_retain(sum);
}

static void ct__engine_to_leaf(ct__engine *e, ct_tensor *leaf, ct_tensor *g)
{
    if (e->captured) {
        int i = ct__engine_input_index(e, leaf, NULL);
        if (i >= 0) {
            ct__engine_accumulate(&e->captured[i], g);
        }
        return;
    }
    g = ct__run_hooks(leaf->hooks, g);
    if (!g) {
        return;
    }
    if (!leaf->grad) {
        bool own = g->refcount == 1 && g->storage->refcount == 1 && ct_is_contiguous(g) &&
                   !g->grad_fn;
        leaf->grad = ct_retain(own || e->create_graph ? g : ct_contiguous(ct_clone(g)));
    } else if (e->create_graph) {
        ct_tensor *sum = ct_add(leaf->grad, g);
        ct__release(leaf->grad);
        leaf->grad = ct_retain(sum);
    } else {
        ct_add_(leaf->grad, g, 1.0);
    }
}

static void ct__heap_push(ct__engine *e, ct_node *n);

static bool ct__engine_run_node(ct__engine *e, ct_node *n)
{
    ct_tensor *g = n->buffer;
    n->buffer = NULL;
    if (g) {
        g = ct__run_hooks(n->pre_hooks, g);
        if (n->retain_target && !e->captured) {
            ct__release(n->retain_target->grad);
            n->retain_target->grad = ct_retain(ct_clone(g));
        }
        if (e->captured) {
            int i = ct__engine_input_index(e, NULL, n);
            if (i >= 0) {
                ct__engine_accumulate(&e->captured[i], g);
            }
        }
    }
    ct_tensor *gin_small[4] = {NULL, NULL, NULL, NULL};
    ct_tensor **gin = n->n_next <= 4 ? gin_small
                                     : (ct_tensor **)ct__calloc(sizeof(ct_tensor *) * (size_t)n->n_next);
    bool ok = gin != NULL;
    if (g && ok) {
        if (n->released) {
            ct__saved(n, 0); /* reports the "second time" error */
            ok = false;
        } else {
            n->backward(n, g, gin);
            ok = !ct_error();
        }
    }
    for (int k = 0; ok && k < n->n_next; k++) {
        ct__edge *edge = &n->next[k];
        ct_tensor *gk = gin[k] ? ct__engine_fit(edge, gin[k]) : NULL;
        if (gin[k] && !gk) {
            ok = false;
            break;
        }
        if (edge->node) {
            if (gk) {
                ct__engine_accumulate(&edge->node->buffer, gk);
            }
            if (--edge->node->deps == 0) {
                ct__heap_push(e, edge->node);
            }
        } else if (edge->leaf && gk) {
            ct__engine_to_leaf(e, edge->leaf, gk);
        }
    }
    ct__release(g);
    if (gin != gin_small) {
        ct__free(gin);
    }
    if (!e->retain_graph) {
        ct__node_free_saved(n);
        n->released = true;
    }
    return ok && !ct_error();
}

/* Discovers every node reachable from the roots (marked with this run's epoch) and counts
   each node's dependents. */
static bool ct__engine_discover(ct__engine *e, ct_tensor *const *roots, int n_roots)
{
    uint64_t epoch = ++ct__engine_epoch;
    for (int r = 0; r < n_roots; r++) {
        ct_node *n = roots[r]->grad_fn;
        if (n && n->epoch != epoch) {
            n->epoch = epoch;
            if (!ct__engine_push(e, n)) {
                return false;
            }
        }
    }
    for (int64_t i = 0; i < e->n_nodes; i++) { /* breadth-first over the array itself */
        ct_node *n = e->nodes[i];
        for (int k = 0; k < n->n_next; k++) {
            ct_node *m = n->next[k].node;
            if (m && m->epoch != epoch) {
                m->epoch = epoch;
                if (!ct__engine_push(e, m)) {
                    return false;
                }
            }
        }
    }
    for (int64_t i = 0; i < e->n_nodes; i++) {
        e->nodes[i]->deps = 0;
    }
    for (int64_t i = 0; i < e->n_nodes; i++) {
        ct_node *n = e->nodes[i];
        for (int k = 0; k < n->n_next; k++) {
            if (n->next[k].node) {
                n->next[k].node->deps++;
            }
        }
    }
    return true;
}

/* The ready set is a max-heap on creation order: later nodes run first, as PyTorch. */
static void ct__heap_push(ct__engine *e, ct_node *n)
{
    int64_t i = e->n_ready++;
    e->ready[i] = n;
    while (i > 0 && e->ready[(i - 1) / 2]->seq < e->ready[i]->seq) {
        ct_node *tmp = e->ready[i];
        e->ready[i] = e->ready[(i - 1) / 2];
        e->ready[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

static ct_node *ct__heap_pop(ct__engine *e)
{
    ct_node *top = e->ready[0];
    e->ready[0] = e->ready[--e->n_ready];
    for (int64_t i = 0;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->n_ready && e->ready[l]->seq > e->ready[m]->seq) {
            m = l;
        }
        if (r < e->n_ready && e->ready[r]->seq > e->ready[m]->seq) {
            m = r;
        }
        if (m == i) {
            break;
        }
        ct_node *tmp = e->ready[i];
        e->ready[i] = e->ready[m];
        e->ready[m] = tmp;
        i = m;
    }
    return top;
}

/* Runs nodes whose dependents have all run, latest-created first. */
static bool ct__engine_execute(ct__engine *e)
{
    e->ready = (ct_node **)ct__malloc(sizeof(ct_node *) * (size_t)(e->n_nodes + 1));
    if (!e->ready) {
        ct__fail(CT_ERR_OOM, "ct_backward", "out of memory");
        return false;
    }
    for (int64_t i = 0; i < e->n_nodes; i++) {
        if (e->nodes[i]->deps == 0) {
            ct__heap_push(e, e->nodes[i]);
        }
    }
    bool ok = true;
    while (ok && e->n_ready > 0) {
        ok = ct__engine_run_node(e, ct__heap_pop(e));
    }
    ct__free(e->ready);
    return ok;
}

static ct_status ct__engine_backward(ct__engine *e, const char *op, ct_tensor *const *roots,
                                     const ct_tensor *const *grad_roots, int n_roots)
{
    for (int r = 0; r < n_roots; r++) {
        const ct_tensor *t = roots[r];
        if (ct__null(op, t)) {
            return ct_error_code();
        }
        if (!ct_requires_grad(t)) {
            return ct__fail(CT_ERR_AUTOGRAD, op, "element %d of tensors does not require grad "
                            "and does not have a grad_fn", r);
        }
        const ct_tensor *go = grad_roots ? grad_roots[r] : NULL;
        if (!go && ct_numel(t) != 1) {
            return ct__fail(CT_ERR_AUTOGRAD, op, "grad can be implicitly created only for "
                            "scalar outputs");
        }
        if (go && (go->ndim != t->ndim ||
                   memcmp(go->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim))) {
            char a[160], b[160];
            return ct__fail(CT_ERR_SHAPE, op, "Mismatch in shape: grad_output[%d] has a shape "
                            "of %s and output[%d] has a shape of %s.", r,
                            ct__shape_str(go->sizes, go->ndim, a, sizeof a), r,
                            ct__shape_str(t->sizes, t->ndim, b, sizeof b));
        }
    }
    bool prev_off = ct__grad_off;
    ct__grad_off = !e->create_graph;
    ct_scope_begin();
    bool ok = ct__engine_discover(e, roots, n_roots);
    for (int r = 0; ok && r < n_roots; r++) {
        const ct_tensor *t = roots[r];
        ct_tensor *go = grad_roots && grad_roots[r] ? (ct_tensor *)(uintptr_t)grad_roots[r]
                                                    : ct_ones_like(t);
        if (t->grad_fn) {
            ct__engine_accumulate(&t->grad_fn->buffer, go);
        } else {
            ct__engine_to_leaf(e, (ct_tensor *)(uintptr_t)t, go);
        }
    }
    ok = ok && ct__engine_execute(e);
    for (int64_t i = 0; i < e->n_nodes; i++) { /* after an error: drop pending buffers */
        ct__release(e->nodes[i]->buffer);
        e->nodes[i]->buffer = NULL;
    }
    ct__free(e->nodes);
    ct_scope_end();
    ct__grad_off = prev_off;
    return ok ? CT_OK : ct_error_code();
}

ct_status ct_backward(ct_tensor *t, const ct_tensor *grad_output, bool retain_graph)
{
    ct__engine e;
    memset(&e, 0, sizeof e);
    e.retain_graph = retain_graph;
    return ct__engine_backward(&e, "ct_backward", &t, grad_output ? &grad_output : NULL, 1);
}

ct_status ct_autograd_grad(ct_tensor *const *outputs, int n_outputs, ct_tensor *const *inputs,
                           int n_inputs, const ct_tensor *const *grad_outputs, bool retain_graph,
                           bool create_graph, bool allow_unused, ct_tensor **grads)
{
    const char *op = "ct_autograd_grad";
    if (ct__null(op, outputs) || ct__null(op, inputs) || ct__null(op, grads)) {
        return ct_error_code();
    }
    for (int i = 0; i < n_inputs; i++) {
        grads[i] = NULL;
        if (ct__null(op, inputs[i])) {
            return ct_error_code();
        }
        if (!ct_requires_grad(inputs[i])) {
            return ct__fail(CT_ERR_AUTOGRAD, op, "One of the differentiated Tensors does not "
                            "require grad");
        }
    }
    ct__engine e;
    memset(&e, 0, sizeof e);
    e.retain_graph = retain_graph || create_graph;
    e.create_graph = create_graph;
    e.inputs = inputs;
    e.n_inputs = n_inputs;
    e.captured = grads;
    ct_status st = ct__engine_backward(&e, op, outputs, grad_outputs, n_outputs);
    for (int i = 0; i < n_inputs; i++) {
        ct__scoped(grads[i]); /* the engine's scope ended; the caller's scope owns it */
    }
    if (st != CT_OK) {
        for (int i = 0; i < n_inputs; i++) {
            ct_free(grads[i]);
            grads[i] = NULL;
        }
        return st;
    }
    for (int i = 0; i < n_inputs; i++) {
        if (!grads[i] && !allow_unused) {
            return ct__fail(CT_ERR_AUTOGRAD, op, "One of the differentiated Tensors appears to "
                            "not have been used in the graph. Set allow_unused=True if this is "
                            "the desired behavior.");
        }
    }
    return CT_OK;
}

// >>part autograd/gradcheck.c
/* autograd/gradcheck.c - finite-difference checking of derivative formulas. */

ct_gradcheck_opts ct_gradcheck_defaults(void)
{
    ct_gradcheck_opts o;
    o.eps = 1e-6;
    o.atol = 1e-5;
    o.rtol = 1e-3;
    return o;
}

/* Address of the j-th element (row-major order) of t. */
static char *ct__nth_ptr(const ct_tensor *t, int64_t j)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (j % t->sizes[d]) * t->strides[d];
        j /= t->sizes[d];
    }
    return ct__data(t) + (size_t)off * ct_dtype_size(t->dtype);
}

/* f(inputs) flattened into out[m] (float64); false on error. */
static bool ct__gc_eval(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                        double *out, int64_t m)
{
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *y = fn(inputs, n, user);
    bool ok = y && ct_numel(y) == m;
    for (int64_t k = 0; ok && k < m; k++) {
        out[k] = ct__load_f64(ct__nth_ptr(y, k), y->dtype);
    }
    ct_no_grad_end();
    ct_scope_end();
    return ok;
}

/* Analytical row k of the Jacobian of input i: d y[k] / d x_i, into row[numel(x_i)]. */
static bool ct__gc_row(ct_tensor *y, ct_tensor *x, int64_t k, double *row)
{
    ct_scope_begin();
    ct_tensor *go = ct_zeros(y->sizes, y->ndim, y->dtype);
    bool ok = go != NULL;
    if (ok) {
        ct__store_f64(ct__nth_ptr(go, k), go->dtype, 1.0);
    }
    const ct_tensor *gos[1] = {go};
    ct_tensor *g = NULL;
    ok = ok && ct_autograd_grad(&y, 1, &x, 1, gos, true, false, true, &g) == CT_OK;
    int64_t nx = ct_numel(x);
    for (int64_t j = 0; ok && j < nx; j++) {
        row[j] = g ? ct__load_f64(ct__nth_ptr(g, j), g->dtype) : 0.0;
    }
    ct_scope_end();
    return ok;
}

static bool ct__gc_input(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                         int i, ct_tensor *y, const ct_gradcheck_opts *o)
{
    ct_tensor *x = inputs[i];
    int64_t m = ct_numel(y), nx = ct_numel(x);
    double *ana = (double *)ct__malloc(sizeof(double) * (size_t)(m * nx + 2 * m + 1));
    if (!ana) {
        ct__fail(CT_ERR_OOM, "ct_gradcheck", "out of memory");
        return false;
    }
    double *fp = ana + m * nx, *fm = fp + m;
    bool ok = true;
    for (int64_t k = 0; ok && k < m; k++) {
        ok = ct__gc_row(y, x, k, ana + k * nx);
    }
    for (int64_t j = 0; ok && j < nx; j++) {
        char *p = ct__nth_ptr(x, j);
        double v = ct__load_f64(p, x->dtype);
        ct__store_f64(p, x->dtype, v + o->eps);
        ok = ct__gc_eval(fn, inputs, n, user, fp, m);
        ct__store_f64(p, x->dtype, v - o->eps);
        ok = ok && ct__gc_eval(fn, inputs, n, user, fm, m);
        ct__store_f64(p, x->dtype, v);
        for (int64_t k = 0; ok && k < m; k++) {
            double num = (fp[k] - fm[k]) / (2 * o->eps), a = ana[k * nx + j];
            if (!(fabs(a - num) <= o->atol + o->rtol * fabs(num))) {
                ct__fail(CT_ERR_AUTOGRAD, "ct_gradcheck", "Jacobian mismatch for output 0 with "
                         "respect to input %d, numerical:%.10g analytical:%.10g at (output %lld, "
                         "input %lld)", i, num, a, (long long)k, (long long)j);
                ok = false;
            }
        }
    }
    ct__free(ana);
    return ok;
}

bool ct_gradcheck(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                  const ct_gradcheck_opts *opts)
{
    const char *op = "ct_gradcheck";
    if (ct__null(op, (const void *)(uintptr_t)(fn != NULL)) || ct__null(op, inputs)) {
        return false;
    }
    ct_gradcheck_opts o = opts ? *opts : ct_gradcheck_defaults();
    for (int i = 0; i < n; i++) {
        if (ct__null(op, inputs[i])) {
            return false;
        }
    }
    ct_scope_begin();
    ct_tensor *y = fn(inputs, n, user);
    bool ok = y != NULL && !ct_error();
    if (ok && !ct_requires_grad(y)) {
        ct__fail(CT_ERR_AUTOGRAD, op, "the output does not require grad: no input requires grad "
                 "or the function is not differentiable");
        ok = false;
    }
    for (int i = 0; ok && i < n; i++) {
        if (ct_requires_grad(inputs[i])) {
            ok = ct__gc_input(fn, inputs, n, user, i, y, &o);
        }
    }
    ct_scope_end();
    return ok;
}

// >>part nn/loss.c
/* nn/loss.c - nll_loss (a direct kernel), cross_entropy and mse_loss.
 *
 * Legend: input (N, C) log-probabilities, target (N) int64, w (C) class weights.
 */

ct_nll_loss_opts ct_nll_loss_defaults(void)
{
    ct_nll_loss_opts o;
    o.weight = NULL;
    o.ignore_index = -100;
    o.reduction = CT_REDUCTION_MEAN;
    return o;
}

static ct_reduction ct__reduction(ct_reduction r)
{
    return r == CT_REDUCTION_DEFAULT ? CT_REDUCTION_MEAN : r;
}

/* the weight of class c (1 without weights) */
static double ct__class_weight(const ct_tensor *w, int64_t c)
{
    return w ? ct__load_f64(ct__data(w) + (size_t)(c * w->strides[0]) * ct_dtype_size(w->dtype),
                            w->dtype)
             : 1.0;
}

/* gradient of nll_loss: dx[i, t_i] = -w[t_i] * g_i / total_weight (mean) */
static void ct__nll_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *target = ct__saved(n, 0), *w = ct__saved(n, 1);
    if (!target) {
        return;
    }
    const ct__edge *e = &n->next[0];
    ct_tensor *dx = ct_zeros(e->sizes, e->ndim, g->dtype);
    ct_tensor *gc = ct_contiguous(g);
    if (!dx || !gc) {
        return;
    }
    int64_t N = e->ndim == 2 ? e->sizes[0] : 1, C = e->sizes[e->ndim - 1];
    ct_reduction red = (ct_reduction)n->i[0];
    double total = n->f[0];
    const int64_t *t = (const int64_t *)ct__data(target);
    size_t es = ct_dtype_size(g->dtype);
    for (int64_t i = 0; i < N; i++) {
        int64_t c = t[i * target->strides[0 < target->ndim ? 0 : 0] * (target->ndim ? 1 : 0)];
        if (c == n->i[1]) {
            continue;
        }
        double gv = ct__load_f64(ct__data(gc) + (red == CT_REDUCTION_NONE ? (size_t)i * es : 0),
                                 g->dtype);
        double v = -ct__class_weight(w, c) * gv;
        if (red == CT_REDUCTION_MEAN) {
            v /= total;
        }
        ct__store_f64(ct__data(dx) + (size_t)(i * C + c) * es, g->dtype, v);
    }
    gi[0] = dx;
}

static bool ct__nll_check(const char *op, const ct_tensor *x, const ct_tensor *target,
                          const ct_tensor *w)
{
    if (ct__null(op, x) || ct__null(op, target) || !ct__check_cpu(op, x) ||
        !ct__check_cpu(op, target)) {
        return false;
    }
    if (!ct_dtype_is_floating_point(x->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"nll_loss\" not implemented for '%s'", ct_dtype_name(x->dtype));
        return false;
    }
    if (target->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, op, "expected scalar type Long but found %s",
                 ct_dtype_name(target->dtype));
        return false;
    }
    if (x->ndim < 1 || x->ndim > 2) {
        ct__fail(CT_ERR_SHAPE, op, "input tensor should be 1D or 2D, got %dD", x->ndim);
        return false;
    }
    if (target->ndim != x->ndim - 1) {
        ct__fail(CT_ERR_SHAPE, op, "0D or 1D target tensor expected, multi-target not supported");
        return false;
    }
    if (x->ndim == 2 && x->sizes[0] != target->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op, "Expected input batch_size (%lld) to match target batch_size "
                 "(%lld).", (long long)x->sizes[0], (long long)target->sizes[0]);
        return false;
    }
    int64_t C = x->sizes[x->ndim - 1];
    if (w && (w->ndim != 1 || w->sizes[0] != C || !ct_dtype_is_floating_point(w->dtype))) {
        ct__fail(CT_ERR_SHAPE, op, "weight tensor should be defined either for all %lld classes "
                 "or no classes but got weight tensor of shape: [%lld]", (long long)C,
                 (long long)(w->ndim ? w->sizes[0] : 0));
        return false;
    }
    return true;
}

ct_tensor *ct_nll_loss(const ct_tensor *x, const ct_tensor *target, const ct_nll_loss_opts *opts)
{
    const char *op = "ct_nll_loss";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    ct_reduction red = ct__reduction(o.reduction);
    if (!ct__nll_check(op, x, target, o.weight)) {
        return NULL;
    }
    int64_t N = x->ndim == 2 ? x->sizes[0] : 1, C = x->sizes[x->ndim - 1];
    int64_t tstride = target->ndim ? target->strides[0] : 0;
    const int64_t *t = (const int64_t *)ct__data(target);
    size_t es = ct_dtype_size(x->dtype);
    int64_t xs0 = x->ndim == 2 ? x->strides[0] : 0, xs1 = x->strides[x->ndim - 1];
    ct_tensor *out = red == CT_REDUCTION_NONE ? ct__tensor_new(op, target->sizes, target->ndim, x->dtype)
                                              : ct__tensor_new(op, NULL, 0, x->dtype);
    if (!out) {
        return NULL;
    }
    double sum = 0, total = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t c = t[i * tstride];
        double li = 0;
        if (c != o.ignore_index) {
            if (c < 0 || c >= C) {
                ct__release(out);
                ct__fail(CT_ERR_INDEX, op, "Target %lld is out of bounds.", (long long)c);
                return NULL;
            }
            double wc = ct__class_weight(o.weight, c);
            li = -wc * ct__load_f64(ct__data(x) + (size_t)(i * xs0 + c * xs1) * es, x->dtype);
            total += wc;
        }
        sum += li;
        if (red == CT_REDUCTION_NONE) {
            ct__store_f64(ct__data(out) + (size_t)i * es, x->dtype, li);
        }
    }
    if (red != CT_REDUCTION_NONE) {
        ct__store_f64(ct__data(out), x->dtype, red == CT_REDUCTION_MEAN ? sum / total : sum);
    }
    const ct_tensor *ins[2] = {x, NULL};
    ct_node *n = ct__node_new("NllLossBackward0", ct__nll_backward, ins, 2);
    if (n) {
        n->i[0] = red;
        n->i[1] = o.ignore_index;
        n->f[0] = total;
        ct__save(n, target);
        ct__save(n, o.weight);
    }
    ct__set_history(out, n);
    return ct__scoped(out);
}

ct_tensor *ct_cross_entropy(const ct_tensor *x, const ct_tensor *target,
                            const ct_nll_loss_opts *opts)
{
    if (ct__null("ct_cross_entropy", x) || ct__null("ct_cross_entropy", target)) {
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = ct_keep(ct_nll_loss(ct_log_softmax(x, x->ndim == 1 ? 0 : 1), target, opts));
    ct_scope_end();
    return r;
}

ct_tensor *ct_mse_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction)
{
    ct_scope_begin();
    ct_tensor *d = ct_square(ct_sub(x, target));
    ct_reduction red = ct__reduction(reduction);
    ct_tensor *r = red == CT_REDUCTION_NONE ? d : red == CT_REDUCTION_SUM ? ct_sum(d) : ct_mean(d);
    ct_keep(r);
    ct_scope_end();
    return r;
}

// >>part nn/init.c
/* nn/init.c - (being written) */

// >>part nn/module.c
/* nn/module.c - (being written) */

// >>part optim/optim.c
/* optim/optim.c - (being written) */

// >>part data/npy.c
/* data/npy.c - (being written) */

// >>part data/idx.c
/* data/idx.c - (being written) */

// >>part data/dataset.c
/* data/dataset.c - (being written) */

// >>part data/dataloader.c
/* data/dataloader.c - (being written) */

#endif /* CTORCH_IMPLEMENTATION */

/*
 ctorch is available under the MIT License.

 Copyright (c) 2026 the ctorch authors

 Permission is hereby granted, free of charge, to any person obtaining a copy of this
 software and associated documentation files (the "Software"), to deal in the Software
 without restriction, including without limitation the rights to use, copy, modify, merge,
 publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 to whom the Software is furnished to do so, subject to the following conditions:

 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.

 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 DEALINGS IN THE SOFTWARE.
*/
