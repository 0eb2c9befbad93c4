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
 *       cc -O2 -march=native -pthread app.c -o app -lm
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
 *   CTORCH_DEBUG            undefined    check tensor handles, poison freed memory,  impl
 *                                          report double frees and leaks (slow)
 *   CTORCH_ZLIB             undefined    read .gz files through zlib (link -lz)      impl
 *   CTORCH_OPENBLAS         undefined    GEMM through cblas (link -lopenblas)        impl
 *   -pthread                off          intra-op and inter-op threads (see THREADS) impl
 *
 * DEFINITIONS
 *   shape       sizes outermost first, as PyTorch (a batch of images is (N, C, H, W))
 *   stride      elements (not bytes) to step to the next index of a dimension
 *   contiguous  row-major strides; size-1 dimensions' strides are ignored
 *   view        a tensor sharing another's storage (view, permute, narrow, expand, ...)
 *   scope       ct_scope_begin/ct_scope_end: owns every tensor ops return in between
 *   dtype       bool, uint8, int8, int16, int32, int64, float32, float64; casts from float to
 *               integer are defined for NaN, infinities and out-of-range values (ct_to_dtype);
 *               a scalar that does not fit the dtype it fills, or an enum argument outside its
 *               enum, is CT_ERR_VALUE
 *   device      CT_CPU here; CT_CUDA through ctorch_cuda.h
 *
 * ERRORS
 *   Failing calls return NULL (or a nonzero ct_status) and record a sticky, thread-local
 *   first error; a call given a NULL tensor returns NULL without a new message. Check once
 *   after a block with ct_error(); ct_error_clear() forgets it. Messages read
 *   "ct_<op>: <facts>" in PyTorch's words. No input makes ctorch abort or crash.
 *   Until an error handler is installed (ct_set_error_handler), each thread's first error
 *   is printed to stderr when it is recorded, like an uncaught exception:
 *       ctorch error: ct_cross_entropy: expected scalar type Long but found Int
 *   Any handler, even one that does nothing, turns the print off; CTORCH_NO_STDIO has none.
 *   NULL arguments: a tensor op given NULL returns NULL (or -1, 0, false, NAN, as its
 *   declaration says) and records CT_ERR_NULL_ARG unless an error is already pending;
 *   a function filling a caller's buffer takes buf NULL and returns the size needed;
 *   _free(NULL) is a no-op; a NULL FILE* is CT_ERR_NULL_ARG.
 *
 * MEMORY
 *   Tensors belong to the innermost open scope, else to the caller (ct_free). Modules own
 *   their parameters, optimizers their state, leaves their .grad. Freed blocks are cached
 *   by size class; ct_empty_cache() returns them; ct_memory_allocated() counts live bytes.
 *   Borrowed pointers (ct_grad, ct_module_get_parameter, ct_module_parameters, ct_sizes,
 *   ct_data_ptr, ...) stay valid only while their owner keeps the tensor. These calls end
 *   that (a borrowed pointer used afterwards reads freed memory):
 *     ct_scope_end             every tensor created in the scope and not kept (ct_keep)
 *     ct_free / ct_release     the tensor, when that was the last reference
 *     ct_optimizer_zero_grad, ct_module_zero_grad with set_to_none   every old .grad
 *     ct_set_grad              the old .grad of that tensor
 *     ct_module_free           its parameters, buffers and their .grad (unless retained)
 *     ct_optimizer_free        its state; parameters it alone still held
 *     ct_dataset_free          tensors a tensor dataset alone still held
 *   Keep a tensor beyond its owner with ct_retain (then ct_release). Only the caller's own
 *   reference may be dropped with ct_free: never a borrowed tensor. Build with
 *   -DCTORCH_DEBUG to have every such mistake reported (core/debug.h).
 *
 * THREADS
 *   Error state, scopes and grad mode are per thread. Ops may run on several threads at
 *   once on different tensors. Intra-op threads (ctorch's own pthread pool; no OpenMP,
 *   -fopenmp is optional and unused): ct_set_num_threads, which wins over
 *   CTORCH_NUM_THREADS, then OMP_NUM_THREADS, then the number of cores. The caller works
 *   too and chunks go to whichever thread is free, so a busy machine slows an op rather
 *   than stalling it; idle workers spin briefly (shorter while the machine looks busy),
 *   then sleep. Random generators, the default one included, are locked per call, as
 *   PyTorch's are. Inter-op tasks: ct_fork /
 *   ct_wait on a second pthread pool. Link with -pthread (glibc 2.34+ links without). Ops
 *   run inside a task or inside an intra-op chunk use one thread, so the pools never
 *   oversubscribe the cores. ct_parallel_shutdown joins both pools' threads.
 *   Kernels flush subnormal floats to zero (as torch.set_flush_denormal(True)); turn it off
 *   with ct_set_flush_denormal(false).
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
 * Until an error handler is installed, each first error is also printed to stderr
 * ("ctorch error: ct_<op>: ..."), so a mistake is never silent.
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
/* Installs a process-wide handler; the examples abort from it. With no handler (the start,
   or after ct_set_error_handler(NULL, NULL)) each thread's first error is printed to stderr
   when it is recorded, as an uncaught exception would be:
       ctorch error: ct_cross_entropy: expected scalar type Long but found Int
   once per error (again only after ct_error_clear). Installing any handler, even one that
   does nothing, turns the print off. Under CTORCH_NO_STDIO nothing is printed.
   Thread safety: call before starting threads that use ctorch. */
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

// >>part core/debug.h
/* core/debug.h - the CTORCH_DEBUG build: lifetime mistakes caught with a clear message.
 *
 * Build the implementation TU with -DCTORCH_DEBUG to catch what the release build cannot
 * see (slower; for development):
 *   - every tensor handle given to a public function is checked: a freed tensor (after
 *     ct_free, after the end of its scope, after ct_optimizer_zero_grad(set_to_none) for
 *     a .grad, after its module or optimizer was freed) or a pointer that is not a tensor
 *     ctorch made is rejected with CT_ERR_STATE and a message naming the op that created
 *     the tensor, e.g. "ct_item: tensor argument was freed (created by ct_nll_loss) ...";
 *   - freed memory is poisoned (all bits set: NaN in float32/float64, -1 in integers) and
 *     held in a bounded quarantine (256 MiB) instead of the cache, so a stale pointer reads
 *     NaN rather than plausible old values and its handle stays recognizable;
 *   - a double ct_free, or ct_free on a tensor the caller does not own (a module's
 *     parameter, a .grad, optimizer state, a tensor whose scope ended), is reported and
 *     ignored instead of corrupting the owner;
 *   - at exit, the tensors never freed are listed with the op that made them
 *     (ct_debug_report).
 */

#ifndef CTORCH_NO_STDIO
/* Writes the leak report of CTORCH_DEBUG builds to f: the number of live tensors and, per
   creating op, how many of them it made. Runs at exit on stderr when tensors are still live.
   Returns: the number of live tensors, or -1 when f is NULL (CT_ERR_NULL_ARG) or the build
   lacks CTORCH_DEBUG (CT_ERR_UNSUPPORTED). Thread safety: safe from any thread. */
CTORCH_API int64_t ct_debug_report(FILE *f);
#endif

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
/* The version counter, incremented by each in-place op on t or a view of it.
   Mirrors: Tensor._version. */
CTORCH_API uint32_t ct_version(const ct_tensor *t);
/* The value of a one-element tensor as a double (int64 values above 2^53 round).
   Errors: CT_ERR_VALUE (returns NAN) when numel != 1: "a Tensor with N elements cannot be
   converted to Scalar". A tensor on another device is read through its backend's copy.
   Mirrors: Tensor.item. */
CTORCH_API double ct_item(const ct_tensor *t);
/* ct_item for integer tensors, exact. Returns 0 on error. */
CTORCH_API int64_t ct_item_int64(const ct_tensor *t);

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

// >>part core/print.h
/* core/print.h - tensors as text, in PyTorch's repr format (torch/_tensor_str.py).
 *
 * "tensor([[ 0.1000, -2.0000],\n        [ 3.0000,  4.0000]])": floats with `precision`
 * decimals, or "3." when every shown value is integral, or scientific notation ("1.0000e-05")
 * when the shown nonzero finite values span more than 1000x, exceed 1e8 or go below 1e-4
 * (PyTorch's _Formatter); columns aligned to the widest value; rows wrapped at `linewidth`;
 * past `threshold` elements only `edgeitems` items at each end of every dimension, with
 * "..."; suffixes ", dtype=torch.float64" (dtypes other than the default float dtype, int64
 * and bool), ", device='privateuseone:0'" (devices other than the default), ",
 * size=(0, 3)" (empty tensors that are not 1-D), ", grad_fn=<MulBackward0>" or ",
 * requires_grad=True".
 */

/* sci_mode of ct_printoptions. */
typedef enum ct_sci_mode {
    CT_SCI_MODE_AUTO = 0, /* PyTorch's None: chosen per tensor from its values */
    CT_SCI_MODE_OFF,      /* False: fixed-point always */
    CT_SCI_MODE_ON        /* True: scientific notation always */
} ct_sci_mode;

/* The print options (global, as PyTorch's). Read them with ct_get_printoptions, change
   fields, write them back with ct_set_printoptions.
   | field     | default | meaning                                                       |
   | precision | 4       | digits after the decimal point (0..64)                        |
   | threshold | 1000    | more elements than this are summarized (INFINITY: never)      |
   | edgeitems | 3       | items kept at each end of a summarized dimension (>= 0)       |
   | linewidth | 80      | characters per line before wrapping (>= 0)                    |
   | sci_mode  | AUTO    | scientific notation: chosen per tensor, off or on             | */
typedef struct ct_printoptions {
    int precision;
    double threshold;
    int edgeitems;
    int linewidth;
    ct_sci_mode sci_mode;
} ct_printoptions;

/* Sets the print options: first the profile, if not NULL ("default": precision 4,
   threshold 1000, edgeitems 3, linewidth 80; "short": precision 2, edgeitems 2; "full":
   threshold INFINITY), then every field of opts, if not NULL. As in PyTorch, sci_mode goes
   back to AUTO when opts is NULL. Returns CT_OK. Errors (nothing changed): CT_ERR_VALUE for
   an unknown profile (PyTorch ignores it), a field out of the ranges above or a NaN
   threshold. Thread safety: set options before printing from other threads.
   Mirrors: torch.set_printoptions. */
CTORCH_API ct_status ct_set_printoptions(const char *profile, const ct_printoptions *opts);
/* The current print options. Mirrors: torch._tensor_str.get_printoptions. */
CTORCH_API ct_printoptions ct_get_printoptions(void);

#ifndef CTORCH_NO_STDIO
/* Writes t's repr and a newline to f (print(t) in Python). A tensor on another device is
   copied to the CPU first. Errors: CT_ERR_NULL_ARG for a NULL t or f (nothing printed);
   CT_ERR_OOM. Mirrors: print(tensor). */
CTORCH_API void ct_print(const ct_tensor *t, FILE *f);
#endif
/* Writes t's repr into buf (at most n bytes, NUL-terminated, as snprintf) and returns its
   full length (excluding the NUL), so ct_to_string(t, NULL, 0) sizes the buffer (buf NULL:
   n is ignored, nothing written). A tensor on another device is copied to the CPU first.
   Errors: CT_ERR_NULL_ARG for a NULL t (returns 0, buf ""); the copy's errors.
   Mirrors: repr(tensor). */
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
   graph, module or .grad still refers to it). Invalidates: pointers to those tensors (keep
   one with ct_keep or ct_retain first). Returns CT_ERR_STATE when no scope is open. */
CTORCH_API ct_status ct_scope_end(void);
/* Moves t from its scope to the enclosing one (or to the caller, who then calls ct_free,
   when t's scope is the outermost). Returns t; NULL for NULL (CT_ERR_NULL_ARG unless an
   error is pending, so ct_keep(op(...)) passes a failed op's NULL through). */
CTORCH_API ct_tensor *ct_keep(ct_tensor *t);
/* Number of open scopes on this thread. */
CTORCH_API int ct_scope_depth(void);

// >>part core/parallel.h
/* core/parallel.h - CPU threading: intra-op threads, the inter-op pool, flush-to-zero
 * (DESIGN §7; PyTorch's "CPU threading and TorchScript inference" note).
 *
 * Two levels, as in PyTorch:
 *   intra-op  one op split over ctorch's own pool of persistent pthreads (large pointwise
 *             ops, reductions, softmax, cross-entropy, optimizer steps, GEMM) in chunks
 *             of at least CT__GRAIN (32768) elements. The calling thread works too;
 *             chunks go to whichever thread is free, so a thread the OS deschedules (a
 *             busy machine) delays one chunk, not the op; idle workers spin for some
 *             microseconds, then sleep. OpenMP is not used (-fopenmp changes nothing).
 *             Link with -pthread. Under CTORCH_NO_THREADS, or without pthreads and
 *             GCC/clang atomics (e.g. MSVC), every op runs on the calling thread and
 *             ct_get_num_threads() is 1. At most 256 threads per op.
 *   inter-op  ct_fork / ct_wait: tasks on one process-wide pthread pool of
 *             ct_get_num_interop_threads() threads, started by the first ct_fork. Compile
 *             and link with -pthread (glibc 2.34+ has the symbols in libc, so it links
 *             without, but -pthread is the portable spelling). Under CTORCH_NO_THREADS, or
 *             on platforms without pthreads (e.g. MSVC), ct_fork runs the task at once on
 *             the calling thread.
 *
 * Oversubscription rule: intra-op work launched from inside an inter-op task runs on one
 * thread (ct_get_num_threads() returns 1 there), so a full pool plus its tasks' ops never
 * use more than ct_get_num_interop_threads() threads. Intra-op work inside an intra-op
 * chunk also runs serially, and so does an op started while another thread's op holds
 * the intra-op pool (one op at a time uses it).
 *
 * Flush-to-zero: ctorch's kernels run with subnormal floats flushed to zero (x86 MXCSR
 * FTZ|DAZ, aarch64 FPCR.FZ) by default, like torch.set_flush_denormal(True), which fast
 * CPU training (e.g. Adam's tiny second moments) relies on. The mode is set, and the
 * caller's mode restored, around every intra-op loop (serial or parallel, so results do
 * not depend on the thread count) and around every inter-op task; pool workers set it
 * for each op. The caller's own code keeps its thread's mode, which ct_set_flush_denormal
 * also sets for the calling thread. ct_set_flush_denormal(false) restores IEEE subnormals
 * everywhere.
 *
 * Determinism: how an op is cut into chunks depends on its sizes only, never on the thread
 * count or on which thread runs a chunk, and every output element is computed within
 * one chunk; results are bit-identical for any thread count (tests/test_parallel.c checks
 * reductions, softmax, cross-entropy, GEMM and a training step at 1-4 threads).
 */

/* Sets the number of intra-op threads. Takes precedence over the environment variables
   CTORCH_NUM_THREADS and OMP_NUM_THREADS. Without pthreads or under CTORCH_NO_THREADS
   the value is recorded but ct_get_num_threads() stays 1.
   Errors: CT_ERR_VALUE for n < 1 ("Expected positive number of threads, got 0").
   Thread safety: any thread; takes effect for ops started afterwards.
   Mirrors: torch.set_num_threads. */
CTORCH_API ct_status ct_set_num_threads(int n);
/* The intra-op thread count for ops launched from the calling thread, first found of:
   ct_set_num_threads's value, CTORCH_NUM_THREADS, OMP_NUM_THREADS (positive integers;
   others are ignored), the number of physical cores (logical CPUs available to the
   process divided by SMT threads per core, read once from Linux sysfs; else the logical
   CPUs). The environment is read once, on first use (see ct_reset_num_threads).
   Returns 1 without pthreads, under CTORCH_NO_THREADS, and inside an inter-op task (the
   oversubscription rule). Thread safety: any thread. Mirrors: torch.get_num_threads. */
CTORCH_API int ct_get_num_threads(void);
/* Forgets ct_set_num_threads's value and the cached environment, so the next
   ct_get_num_threads() re-reads CTORCH_NUM_THREADS and OMP_NUM_THREADS (for tests and
   programs that change the environment). Thread safety: any thread. Mirrors: nothing
   (PyTorch cannot un-set the count). */
CTORCH_API void ct_reset_num_threads(void);

/* Sets the size of the inter-op pool. Allowed once, before the pool starts (the first
   ct_fork), like PyTorch. Under CTORCH_NO_THREADS the count is checked and recorded, but
   tasks still run synchronously.
   Errors: CT_ERR_VALUE for n < 1 ("Expected positive number of threads"); CT_ERR_STATE
   when the pool has started or the count was already set ("Error: cannot set number of
   interop threads after parallel work has started or set_num_interop_threads called").
   Thread safety: any thread. Mirrors: torch.set_num_interop_threads. */
CTORCH_API ct_status ct_set_num_interop_threads(int n);
/* The inter-op pool size: ct_set_num_interop_threads's value, else the number of physical
   cores (as ct_get_num_threads). 1 under CTORCH_NO_THREADS or without pthreads.
   Thread safety: any thread. Mirrors: torch.get_num_interop_threads. */
CTORCH_API int ct_get_num_interop_threads(void);

/* An inter-op task's handle: created by ct_fork, consumed (freed) by ct_wait. */
typedef struct ct_future ct_future;
/* Runs fn(arg) asynchronously on the inter-op pool (started on first use) and returns its
   future. Tasks may fork and wait on further tasks: a waited task that has not started
   yet runs on the waiting thread, so nested fork/wait never deadlocks. Inside the task,
   ct_get_num_threads() is 1, scopes, grad mode and the error state are the pool
   thread's own (open a scope in fn for the tensors it makes) and subnormals are flushed
   per ct_set_flush_denormal. Under CTORCH_NO_THREADS or without pthreads fn runs at once.
   Returns: a new future, owned by the caller, which must pass it to ct_wait exactly once;
   NULL + CT_ERR_NULL_ARG for a NULL fn, CT_ERR_OOM when out of memory.
   Thread safety: any thread, including inside tasks. Mirrors: torch.jit.fork. */
CTORCH_API ct_future *ct_fork(void *(*fn)(void *arg), void *arg);
/* Blocks until the task of f has finished, frees f and returns fn's result. Runs the task
   on the calling thread when no pool thread has picked it up yet. NULL f: returns NULL.
   Thread safety: any one thread per future. Mirrors: torch.jit.wait. */
CTORCH_API void *ct_wait(ct_future *f);
/* Drains the queue, joins the inter-op pool's threads and frees the pool, returning the
   inter-op settings to their initial state (ct_set_num_interop_threads may be called
   again; the next ct_fork starts a fresh pool); also joins the intra-op pool's workers
   (after the op running on them, if any; the next parallel op starts them again). Not
   called at exit: idle pool threads simply end with the process; call it before
   unloading the library or checking leaks.
   Errors: CT_ERR_STATE when called from inside an inter-op task or an intra-op chunk.
   Thread safety: no other thread may use ct_fork/ct_wait meanwhile. Mirrors: nothing. */
CTORCH_API ct_status ct_parallel_shutdown(void);

/* Turns flushing of subnormal floats to zero on or off for the calling thread and for
   ctorch's kernels and worker threads (the default is on for those; see the part's head).
   Returns: whether the CPU supports it (x86 SSE: MXCSR FTZ and DAZ; aarch64: FPCR.FZ);
   false and nothing changes elsewhere.
   Thread safety: any thread; other threads pick up the setting at their next kernel or
   task. Mirrors: torch.set_flush_denormal. */
CTORCH_API bool ct_set_flush_denormal(bool on);

/* Writes the threading settings into buf (at most n bytes, NUL-terminated) in the layout
   of torch.__config__.parallel_info(): thread counts, "OpenMP not used", intra-op settings
   (backend, grain, flush-to-zero, compile-time ISA), core counts and the environment
   variables. Returns the length needed (excluding the NUL), so (NULL, 0) sizes it.
   Thread safety: any thread. Mirrors: torch.__config__.parallel_info. */
CTORCH_API size_t ct_parallel_info_string(char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Prints ct_parallel_info_string's text to f. Mirrors: torch.__config__.parallel_info. */
CTORCH_API void ct_parallel_info(FILE *f);
#endif

// >>part core/rng.h
/* core/rng.h - random number generation (torch.Generator, torch.random).
 *
 * The CPU engine is mt19937 seeded as PyTorch's CPU generator, and every sampler follows
 * PyTorch's CPU kernel draw for draw, so a seed gives bit-identical values to
 * torch.manual_seed(seed) followed by the same calls: rand/uniform_, randn/normal_ (any mean
 * and std), randint (any range, up to 2^64 - 1 wide), randperm (any n), bernoulli_ and
 * random_. Non-contiguous tensors are filled in memory order, as PyTorch's TensorIterator
 * does. The float32 normal_ of 16 or more contiguous elements reproduces the AVX2 kernel that
 * x86-64 builds of PyTorch run (on AVX2 and AVX-512 CPUs alike); PyTorch builds without it
 * (ARM, or ATEN_CPU_CAPABILITY=default) compute those values with libm and differ in the last
 * bits. float64 normal_ uses the C library's log, sin and cos as PyTorch does, so it matches a
 * PyTorch running on the same C library. Results do not depend on compiler flags.
 * A generator argument may be NULL: the default generator is used.
 * Thread safety: each call holds its generator's lock while it draws (PyTorch's
 * CPUGeneratorImpl::mutex_), so generators, the default one included, may be shared between
 * threads: every call's draws stay consecutive in the stream, and threads that share a
 * generator get an interleaving of whole calls that depends on scheduling. Seed a generator
 * per thread for reproducible multi-threaded streams.
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
/* Integers uniform in [low, high) (dtype DEFAULT means int64; any dtype). Errors: CT_ERR_VALUE
   "random_ expects 'from' to be less than 'to', but got from=5 >= to=5", or "from is out
   of bounds for signed char" when an integer dtype cannot hold low or high - 1. For float
   dtypes, bounds beyond 2^24 (float32) or 2^53 (float64) move inward to representable values
   as PyTorch's do. Mirrors: torch.randint. */
CTORCH_API ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim,
                                 ct_dtype dtype, ct_generator *g);
/* A random permutation of 0..n-1 (int64). Mirrors: torch.randperm. */
CTORCH_API ct_tensor *ct_randperm(int64_t n, ct_generator *g);
/* Same shape, dtype and device as t. Mirrors: torch.rand_like / torch.randn_like. */
CTORCH_API ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g);
CTORCH_API ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g);
/* Fills self in place from U(from, to). Errors: CT_ERR_VALUE when from > to. Mirrors:
   Tensor.uniform_. */
CTORCH_API ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g);
/* Fills self in place from N(mean, std^2). Mirrors: Tensor.normal_. */
CTORCH_API ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g);
/* Draws 0/1 with probability p into self's dtype. Mirrors: Tensor.bernoulli_(p). */
CTORCH_API ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g);
/* A tensor of input's shape and dtype (contiguous) of 0/1 draws, 1 with probability input[i],
   bit-identical to torch.bernoulli(input, generator=g) on the CPU generator: one draw per
   element in row-major order, of 24 random bits for float32 and 53 for float64 (g NULL: the
   default generator). Gradient: zeros. Errors: CT_ERR_VALUE "Expected p_in >= 0 && p_in <= 1
   to be true, but got false." for a probability outside [0, 1] or NaN (the draws before it
   are spent, as in PyTorch); CT_ERR_DTYPE "\"bernoulli\" not implemented for 'Long'" for
   integer input. Mirrors: torch.bernoulli(input). */
CTORCH_API ct_tensor *ct_bernoulli(const ct_tensor *input, ct_generator *g);
/* Fills self in place with integers uniform on [0, 2^63 - 1] (int64), [0, max] (narrower
   integers), {0, 1} (bool), [0, 2^24] (float32) or [0, 2^53] (float64), any dtype.
   Returns self; NULL + error for a NULL, non-CPU or grad-requiring leaf tensor.
   Mirrors: Tensor.random_() without from/to. */
CTORCH_API ct_tensor *ct_random_(ct_tensor *self, ct_generator *g);

// >>part core/dispatch.h
/* core/dispatch.h - the op dispatcher: every op is described once (a ct_op descriptor) and
 * called through one entry, which runs, in order: the handle checks, the capture hooks, the
 * profiler, the op's meta function, the kernel looked up by device and dtype, and the autograd
 * node. Device backends register here (the CPU backend is built in). PyTorch's dispatcher
 * (operators registered with a schema; dispatch keys for autograd, tracing, profiling and
 * backends) in plain C.
 */

typedef struct ct_node ct_node;           /* autograd.h */
typedef struct ct_generator ct_generator; /* rng.h */

/* What an op does, as the fuser and the capture see it. */
typedef enum ct_op_kind {
    CT_OP_POINTWISE, /* elementwise over broadcast operands: `loops` holds its math */
    CT_OP_REDUCTION, /* reduces dimensions */
    CT_OP_VIEW,      /* returns a view sharing the input's storage, runs no kernel */
    CT_OP_INPLACE,   /* writes its first input and returns it */
    CT_OP_RANDOM,    /* draws from a generator */
    CT_OP_FACTORY,   /* creates a tensor from scalar arguments only */
    CT_OP_OTHER,
    CT_OP_KIND_COUNT
} ct_op_kind;

/* The op's autocast category (torch.amp's op lists): run in the lower precision dtype, in
   float32, or in the widest input dtype; NONE: autocast leaves the op alone. */
typedef enum ct_autocast_category {
    CT_AUTOCAST_NONE,
    CT_AUTOCAST_LOWER_PRECISION,
    CT_AUTOCAST_FP32,
    CT_AUTOCAST_PROMOTE
} ct_autocast_category;

#define CT_OP_MAX_ATTRS 8   /* scalar attributes of one call */
#define CT_OP_MAX_OUTPUTS 4 /* tensor outputs of one call */

/* A scalar attribute of a call, in the order of the op's schema: Scalar and float values in
   f; int, bool, ScalarType and enum values in i; an int[] as ints with its length in i. */
typedef struct ct_attr {
    double f;
    int64_t i;
    const int64_t *ints;
} ct_attr;

typedef struct ct_op ct_op;
typedef struct ct_op_call ct_op_call;

/* One call of an op, as the dispatcher, the kernels and the hooks see it. The public function
   fills op, fn, inputs and attrs; meta fills device, dtype and creates the outputs; the kernel
   writes them. */
struct ct_op_call {
    const ct_op *op;
    const char *fn;                 /* the public function called ("ct_add"), for messages */
    const ct_tensor *const *inputs; /* the tensor arguments in schema order (optional: NULL) */
    int n_inputs;
    int n_attrs;
    ct_attr attrs[CT_OP_MAX_ATTRS];
    ct_generator *generator; /* random ops: the generator argument (NULL: the default) */
    ct_device device;        /* where the op runs: its inputs' device (meta) */
    ct_dtype dtype;          /* the kernel's dtype, its column in the kernel table (meta) */
    int n_outputs;
    ct_tensor *outputs[CT_OP_MAX_OUTPUTS];
    void *state; /* the op's own data between meta and kernel (points into the caller's frame) */
};

/* A kernel: writes call->outputs from call->inputs and attrs. A backend's kernel may get
   0-dim CPU tensors (wrapped scalars, as ct_mul_scalar makes) among its inputs: they join a
   call on any device, as in PyTorch. Returns CT_OK, or the status of
   the error it recorded (ct_error). */
typedef ct_status (*ct_kernel_fn)(ct_op_call *call);
/* Checks a call's arguments, sets call->device and call->dtype and creates its outputs
   (shapes, dtypes; views and in-place ops may leave that to the kernel). Returns false after
   recording an error. */
typedef bool (*ct_meta_fn)(ct_op_call *call);
/* An inner loop over n elements: data[0] is the output, data[1..] the inputs, each advancing
   strides[k] bytes per element; params points at the op's scalar parameters (doubles). */
typedef void (*ct_loop_fn)(char **data, const int64_t *strides, int64_t n, const void *params);
/* A derivative formula: the gradients of a node's inputs from the gradient of its output,
   written with ctorch ops (so it runs on every backend and can be differentiated again). */
typedef void (*ct_backward_fn)(ct_node *node, const ct_tensor *grad, ct_tensor **grad_inputs);

/* An op descriptor. Read-only: ct_op_registry lists every one. */
struct ct_op {
    const char *name;   /* PyTorch's operator name, e.g. "aten::add" (the profiler's rows) */
    const char *schema; /* its schema, e.g. "add.Tensor(Tensor self, Tensor other, *, Scalar
                           alpha=1) -> Tensor": argument names, types and defaults */
    const char *api;    /* the public function(s) that call it, e.g. "ct_add ct_add_scalar" */
    ct_op_kind kind;
    ct_autocast_category autocast;
    int variant;            /* which member of its family (private to the family's code) */
    uint32_t optional;      /* bit k: input k may be NULL; CT_OP_ANY_DEVICE(k): input k may be
                               on another device than the call's (see below) */
    const ct_loop_fn *loops; /* pointwise: the per-element math per dtype (NULL elsewhere) */
    ct_meta_fn meta;
    ct_kernel_fn cpu[CT_DTYPE_COUNT]; /* the CPU backend's kernels by dtype (NULL: none) */
    ct_kernel_fn composite;           /* instead of kernels: runs on any device, built on ops */
    const char *node;        /* the autograd node's name ("AddBackward0"); NULL: none */
    ct_backward_fn backward; /* its derivative formula */
    uint32_t save;           /* bit k: save input k; bit 8 + k: save output k (for backward) */
    void (*record)(ct_node *node, const ct_op_call *call); /* stores the attrs backward needs */
    double (*flops)(const ct_op_call *call); /* floating point operations (GEMM, conv); or NULL */
};

/* A bit of ct_op.optional: input k (k >= 1) may be on another device than the call's device
   (the first input's), which the entry otherwise rejects ("Expected all tensors to be on the
   same device"); the op's meta then brings it over (copy_'s src, as Tensor.copy_). */
#define CT_OP_ANY_DEVICE(k) (1u << (16 + (k)))

/* Every op descriptor, in a fixed order; *n receives the count (n may be NULL).
   Mirrors: torch's operator registry (torch._C._dispatch_get_all_op_names). */
CTORCH_API const ct_op *const *ct_op_registry(int *n);
/* The descriptor named name ("aten::add"), or NULL. */
CTORCH_API const ct_op *ct_op_find(const char *name);

/* ---- hooks ---------------------------------------------------------------------------- */
/* A dispatch hook sees every op called on this thread (nested ones, and those of backward
   formulas, included). before runs after the handle checks, before meta: returning true says
   the hook produced call->outputs itself (each a reference the dispatcher takes over) and the
   op's meta, kernel and autograd are skipped. after runs once the outputs exist and may
   replace any of them: put a new reference in call->outputs[k]; the dispatcher releases the
   one replaced. Either may be NULL. Hooks run innermost (last pushed) first. */
typedef struct ct_dispatch_hook {
    bool (*before)(void *user, ct_op_call *call);
    void (*after)(void *user, ct_op_call *call);
    void *user;
} ct_dispatch_hook;
#define CT_DISPATCH_MAX_HOOKS 8
/* Pushes a hook (copied) on this thread's stack. Errors: CT_ERR_STATE when 8 are pushed.
   Mirrors: torch's TorchDispatchMode.__enter__ (python dispatch modes). */
CTORCH_API ct_status ct_dispatch_hook_push(const ct_dispatch_hook *hook);
/* Pops the innermost hook of this thread. Errors: CT_ERR_STATE when none is pushed. */
CTORCH_API ct_status ct_dispatch_hook_pop(void);

/* ---- backends ------------------------------------------------------------------------- */
/* A device backend: its memory and copies; its kernels come with ct_backend_register_kernel.
   malloc returns device memory (NULL when out of memory); copy moves nbytes between two
   places either of which may be the host (CT_CPU). */
typedef struct ct_backend {
    ct_device_type type;
    const char *name; /* PyTorch's dispatch key, used in messages: "CUDA", "PrivateUse1" */
    void *(*malloc)(void *user, ct_device device, size_t nbytes);
    void (*free)(void *user, ct_device device, void *data);
    ct_status (*copy)(void *user, void *dst, ct_device dst_device, const void *src,
                      ct_device src_device, size_t nbytes);
    void *user;
} ct_backend;
/* Registers (copies) a backend for backend->type, replacing any earlier one. Errors:
   CT_ERR_VALUE for CT_CPU (built in) or a type out of range, CT_ERR_NULL_ARG for a missing
   function. Mirrors: torch.utils.rename_privateuse1_backend + the device guard registration. */
CTORCH_API ct_status ct_backend_register(const ct_backend *backend);
/* Removes the backend of type (and its kernels); tensors on it must be freed first. */
CTORCH_API ct_status ct_backend_unregister(ct_device_type type);
/* Registers kernel as op's kernel for dtype on the backend of type (registered first).
   Errors: CT_ERR_VALUE for CT_CPU, an unregistered type or an invalid dtype; CT_ERR_NULL_ARG.
   Mirrors: TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl(op, kernel); }. */
CTORCH_API ct_status ct_backend_register_kernel(ct_device_type type, const ct_op *op,
                                                ct_dtype dtype, ct_kernel_fn kernel);
/* The kernel for (op, device type, dtype), or NULL (also for a NULL op, with no error). */
CTORCH_API ct_kernel_fn ct_dispatch_kernel(const ct_op *op, ct_device_type type, ct_dtype dtype);

// >>part ops/pointwise.h
/* ops/pointwise.h - elementwise ops with broadcasting and type promotion.
 *
 * Shapes: inputs broadcast to a common shape (PyTorch's "Broadcasting semantics").
 * Dtypes: the result dtype follows torch.result_type: tensors of higher category win, a
 * 0-dim tensor counts only when its category is higher, C scalars (`_scalar` forms) count
 * as int64 or the default float dtype and never widen the tensor's dtype within a
 * category (an integral scalar outside an integer tensor's range wraps modulo 2^bits, as in
 * PyTorch). Comparisons return bool. Ops marked "float" compute in floating point (integer
 * inputs give the default float dtype).
 * Returns: a new tensor owned by the current scope; in-place forms (trailing _) return
 * their first argument, bump its version and require the result to be castable to it.
 * Errors: CT_ERR_SHAPE "The size of tensor a (2) must match the size of tensor b (3) at
 * non-singleton dimension 1"; CT_ERR_DTYPE "result type Float can't be cast to the desired
 * output type Long"; NULL inputs return NULL.
 * Determinism: bit-exact across thread counts.
 */

/* input + alpha * other. Errors (also ct_sub_): CT_ERR_VALUE when the result is integral or
   bool and alpha is not an integer ("For integral input tensors, argument alpha must not be
   a floating point number.") or alpha does not fit the result dtype ("value cannot be
   converted to type int without overflow"). Mirrors: torch.add(input, other, alpha=alpha). */
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
/* div's rounding_mode: None (true division), 'trunc' (toward zero), 'floor' (toward -inf). */
typedef enum ct_rounding_mode {
    CT_ROUNDING_NONE = 0,
    CT_ROUNDING_TRUNC,
    CT_ROUNDING_FLOOR
} ct_rounding_mode;
/* input / other rounded as rounding_mode says: CT_ROUNDING_NONE is ct_div (float; gradients
   as ct_div); 'trunc' and 'floor' keep the promoted dtype, integers included (floor division
   as Python's //; float floor division as PyTorch's div_floor_floating), with zero
   gradients. Errors: CT_ERR_VALUE "ZeroDivisionError" when an integer divisor has a zero;
   CT_ERR_DTYPE "\"div\" not implemented for 'Bool'" for two bool operands and a rounding
   mode; CT_ERR_VALUE for a mode outside ct_rounding_mode ("div expected rounding_mode to be
   one of None, 'trunc', or 'floor' but found 7"). Mirrors: torch.div(input, other,
   rounding_mode=...). */
CTORCH_API ct_tensor *ct_div_mode(const ct_tensor *input, const ct_tensor *other,
                                  ct_rounding_mode rounding_mode);
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
/* Gauss error function (float; integer inputs give the default float dtype). Gradient:
   grad * 2/sqrt(pi) * exp(-input^2). Mirrors: torch.erf. */
CTORCH_API ct_tensor *ct_erf(const ct_tensor *input);
/* Bool masks of NaN, +-infinity and finite elements, for every dtype (integers and bool:
   false, false, true). Not differentiable. Mirrors: torch.isnan, torch.isinf,
   torch.isfinite. */
CTORCH_API ct_tensor *ct_isnan(const ct_tensor *input);
CTORCH_API ct_tensor *ct_isinf(const ct_tensor *input);
CTORCH_API ct_tensor *ct_isfinite(const ct_tensor *input);
/* In-place unary ops: self's values replaced by the op's, self returned. The gradient is the
   out-of-place op's (the old self is kept for those that read it). self must hold the
   result: ct_exp_ on an int64 tensor fails with CT_ERR_DTYPE "result type Float can't be cast
   to the desired output type Long"; a leaf that requires grad fails with CT_ERR_AUTOGRAD.
   Mirrors: Tensor.relu_, neg_, abs_, exp_, log_, sqrt_, sigmoid_, tanh_. */
CTORCH_API ct_tensor *ct_relu_(ct_tensor *self);
CTORCH_API ct_tensor *ct_neg_(ct_tensor *self);
CTORCH_API ct_tensor *ct_abs_(ct_tensor *self);
CTORCH_API ct_tensor *ct_exp_(ct_tensor *self);
CTORCH_API ct_tensor *ct_log_(ct_tensor *self);
CTORCH_API ct_tensor *ct_sqrt_(ct_tensor *self);
CTORCH_API ct_tensor *ct_sigmoid_(ct_tensor *self);
CTORCH_API ct_tensor *ct_tanh_(ct_tensor *self);
/* self ** exponent in place: integer self keeps integer arithmetic for an integral exponent
   (errors: CT_ERR_VALUE "Integers to negative integer powers are not allowed."), a
   fractional exponent needs a float self (else CT_ERR_DTYPE, as ct_exp_). Gradient as
   ct_pow_scalar. Mirrors: Tensor.pow_(exponent) with a Scalar exponent. */
CTORCH_API ct_tensor *ct_pow_(ct_tensor *self, double exponent);
/* Clamps into [min, max]; pass -INFINITY / INFINITY to leave a side open. NaN stays NaN;
   the gradient flows where min <= x <= max. Errors: CT_ERR_VALUE when min > max or a bound
   of an integer tensor leaves nothing representable. ct_clamp_ clamps self in place (an
   integer self takes integral bounds only). Mirrors: torch.clamp, Tensor.clamp_. */
CTORCH_API ct_tensor *ct_clamp(const ct_tensor *input, double min, double max);
CTORCH_API ct_tensor *ct_clamp_(ct_tensor *self, double min, double max);

/* input + value * tensor1 * tensor2 (addcmul) and input + value * tensor1 / tensor2
   (addcdiv), the three broadcast and promoted together; value is PyTorch's keyword (its
   default is 1), truncated toward zero for an integral result. Gradients: grad,
   grad * value * tensor2, grad * value * tensor1 (addcmul); grad, grad * value / tensor2,
   -grad * value * tensor1 / tensor2^2 (addcdiv). The _ forms write into self (its shape,
   a dtype the result casts to). Errors: CT_ERR_DTYPE for addcdiv of two integral tensors
   ("Integer division with addcdiv is no longer supported, ..."), "\"addcmul\" not
   implemented for 'Bool'"; CT_ERR_VALUE when value does not fit an integral result.
   Mirrors: torch.addcmul, torch.addcdiv, Tensor.addcmul_, Tensor.addcdiv_. */
CTORCH_API ct_tensor *ct_addcmul(const ct_tensor *input, const ct_tensor *tensor1,
                                 const ct_tensor *tensor2, double value);
CTORCH_API ct_tensor *ct_addcmul_(ct_tensor *self, const ct_tensor *tensor1,
                                  const ct_tensor *tensor2, double value);
CTORCH_API ct_tensor *ct_addcdiv(const ct_tensor *input, const ct_tensor *tensor1,
                                 const ct_tensor *tensor2, double value);
CTORCH_API ct_tensor *ct_addcdiv_(ct_tensor *self, const ct_tensor *tensor1,
                                  const ct_tensor *tensor2, double value);

/* input + weight * (end - input), computed as PyTorch's vectorized kernel does (from the
   nearer end: fma(weight, end - input, input) for |weight| < 0.5, else fma(weight - 1,
   end - input, end)); weight a tensor (ct_lerp, ct_lerp_) or a scalar (ct_lerp_scalar,
   ct_lerp_scalar_). Float only; input, end and weight broadcast and must share a dtype
   (PyTorch does not promote). Gradients: grad * (1 - weight), grad * weight, grad * (end -
   input). The _ forms write into self. Errors: CT_ERR_DTYPE "expected dtype float for `end`
   but got dtype double", "\"lerp\" not implemented for 'Long'"; CT_ERR_SHAPE as other
   broadcasting ops. Mirrors: torch.lerp (lerp.Tensor, lerp.Scalar), Tensor.lerp_. */
CTORCH_API ct_tensor *ct_lerp(const ct_tensor *input, const ct_tensor *end,
                              const ct_tensor *weight);
CTORCH_API ct_tensor *ct_lerp_scalar(const ct_tensor *input, const ct_tensor *end, double weight);
CTORCH_API ct_tensor *ct_lerp_(ct_tensor *self, const ct_tensor *end, const ct_tensor *weight);
CTORCH_API ct_tensor *ct_lerp_scalar_(ct_tensor *self, const ct_tensor *end, double weight);

/* Fills self with value. Errors: CT_ERR_VALUE when value does not fit self's dtype, as
   ct_full. Mirrors: Tensor.fill_. */
CTORCH_API ct_tensor *ct_fill_(ct_tensor *self, double value);
/* Mirrors: Tensor.zero_. */
CTORCH_API ct_tensor *ct_zero_(ct_tensor *self);
/* Copies src (broadcast to self's shape, cast to self's dtype) into self; src may be on
   another device (it is brought over first as ct_to_device, and its gradient goes back).
   Errors: CT_ERR_DEVICE when a device has no backend. Mirrors: Tensor.copy_. */
CTORCH_API ct_tensor *ct_copy_(ct_tensor *self, const ct_tensor *src);
/* A copy of input with its own storage (contiguous), recorded by autograd.
   Mirrors: torch.clone. */
CTORCH_API ct_tensor *ct_clone(const ct_tensor *input);
/* input converted to dtype (returns input itself, as a new reference in the scope, when
   the dtype already matches); differentiable between float dtypes. Float to integer
   truncates toward zero and is defined for every value, giving PyTorch's x86-64 results:
   NaN, infinities and values outside int32's range become INT32_MIN for int32 (INT64_MIN
   and int64's range for int64); int8/int16/uint8 take the low bits of that int32 (uint8
   from float64: of the int64); to bool, NaN is true. Integers narrow modulo 2^bits.
   Errors: CT_ERR_VALUE for a dtype outside ct_dtype. Mirrors: Tensor.to(dtype). */
CTORCH_API ct_tensor *ct_to_dtype(const ct_tensor *input, ct_dtype dtype);
/* input on device: input itself (a new reference in the scope, as ct_alias) when it is
   already there, else a copy (contiguous, same shape and dtype) made through the backends'
   copy; recorded by autograd (ToCopyBackward0: the gradient goes back to input's device).
   Returns: a new tensor owned by the current scope. Errors: CT_ERR_VALUE for a device type
   outside ct_device_type; CT_ERR_DEVICE when no backend is registered for the device.
   Mirrors: Tensor.to(device). */
CTORCH_API ct_tensor *ct_to_device(const ct_tensor *input, ct_device device);
/* ct_to_device(input, ct_device_cpu()). Mirrors: Tensor.cpu(). */
CTORCH_API ct_tensor *ct_cpu(const ct_tensor *input);
/* The dtype of an op over a and b. Mirrors: torch.result_type. */
CTORCH_API ct_dtype ct_result_type(const ct_tensor *a, const ct_tensor *b);

// >>part ops/view.h
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

// >>part ops/index.h
/* ops/index.h - indexing along a dim with index tensors, and masked fill.
 *
 * Index tensors are int32 or int64 (any other dtype: CT_ERR_DTYPE, PyTorch's wording);
 * indices are not wrapped: one outside [0, size) is CT_ERR_INDEX, reported before anything
 * is written. A 0-dim tensor counts as one element of a 1-dim tensor, as in PyTorch. The
 * out-of-place forms return a new tensor owned by the current scope; the in-place forms
 * (trailing _) write self and return it. Gradients flow to self and src/source (never to
 * the index or mask). Determinism: duplicates accumulate (scatter_add, index_add) or
 * overwrite (scatter) in index order, and work is split between threads only where no two
 * threads write the same element, so results are the same for any thread count.
 */

/* out[i][j] = input[index[i][j]][j] for dim 0 (and likewise for any dim): index has input's
   ndim, index.size(d) <= input.size(d) for d != dim; the output has index's shape and
   input's dtype. Gradient: zeros scatter_add-ed with the gradient at index. Errors:
   CT_ERR_DTYPE "gather(): Expected dtype int32/int64 for index"; CT_ERR_SHAPE "Index tensor
   must have the same number of dimensions as input tensor", "Size does not match at
   dimension d expected index [..] to be no larger than self [..] apart from dimension d";
   CT_ERR_INDEX bad dim, "index i is out of bounds for dimension d with size n".
   Mirrors: torch.gather(input, dim, index). */
CTORCH_API ct_tensor *ct_gather(const ct_tensor *input, int64_t dim, const ct_tensor *index);
/* The entries of input at the positions of the 1-D (or 0-dim) index along dim: the output
   has input's shape with size index.numel() at dim. Gradient: zeros index_add-ed with the
   gradient. Errors: CT_ERR_DTYPE "index_select(): Expected dtype int32 or int64 for index";
   CT_ERR_INDEX "index_select(): Index is supposed to be a vector", bad dim, "index out of
   range in self". Mirrors: torch.index_select(input, dim, index). */
CTORCH_API ct_tensor *ct_index_select(const ct_tensor *input, int64_t dim, const ct_tensor *index);
/* A copy of input with src[i][j] written at [index[i][j]][j] for dim 0 (likewise for any dim;
   the last write wins among duplicates, in index order). index, input and src have the same
   ndim, index.size(d) <= src.size(d) and <= input.size(d) for d != dim; src has input's
   dtype. Gradient: input's is the gradient with the written positions zeroed; src's is the
   gradient gathered at index. Errors: CT_ERR_DTYPE "scatter(): Expected dtype int32/int64
   for index", "scatter(): Expected self.dtype to be equal to src.dtype"; CT_ERR_SHAPE "Index
   tensor must have the same number of dimensions as self tensor" (src tensor), "Expected
   index [..] to be no larger than self [..] apart from dimension d and to be no larger size
   than src [..]"; CT_ERR_INDEX bad dim, out-of-bounds index. Mirrors: torch.scatter. */
CTORCH_API ct_tensor *ct_scatter(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                                 const ct_tensor *src);
/* ct_scatter into self in place. Mirrors: Tensor.scatter_(dim, index, src). */
CTORCH_API ct_tensor *ct_scatter_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                  const ct_tensor *src);
/* As ct_scatter, but src is added at the indexed positions (duplicates accumulate in index
   order). Gradient: input's is the gradient; src's is the gradient gathered at index. Same
   errors as ct_scatter. Mirrors: torch.scatter_add(input, dim, index, src). */
CTORCH_API ct_tensor *ct_scatter_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                                     const ct_tensor *src);
/* ct_scatter_add into self in place. Mirrors: Tensor.scatter_add_(dim, index, src). */
CTORCH_API ct_tensor *ct_scatter_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                      const ct_tensor *src);
/* A copy of input with alpha * source[.., k, ..] added at input[.., index[k], ..] along dim
   (in index order; alpha 1 is PyTorch's default). index is 1-D (or 0-dim) with
   source.size(dim) entries; source has input's shape except at dim and input's dtype.
   Gradient: input's is the gradient; source's is alpha * the gradient index_select-ed.
   Errors: CT_ERR_DTYPE "index_add_(): Expected dtype int32/int64 for index but got: Float",
   "index_add_(): self (Float) and source (Double) must have the same scalar type";
   CT_ERR_INDEX "index_add_(): Index is supposed to be a vector, but got dim: ..", bad dim,
   out-of-bounds index; CT_ERR_SHAPE "index_add_(): Number of indices (n) should be equal to
   source.size(dim): (m), for dim: d", "source tensor shape must match self tensor shape,
   excluding the specified dimension. ..". Mirrors: torch.index_add(input, dim, index,
   source, alpha=alpha). */
CTORCH_API ct_tensor *ct_index_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                                   const ct_tensor *source, double alpha);
/* ct_index_add into self in place. Mirrors: Tensor.index_add_(dim, index, source, alpha). */
CTORCH_API ct_tensor *ct_index_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                                    const ct_tensor *source, double alpha);
/* input with value (converted to input's dtype) where the bool mask is true; the output has
   the broadcast shape of input and mask. Gradient: the gradient with masked positions
   zeroed. Errors: CT_ERR_DTYPE "masked_fill_ only supports boolean masks, but got mask with
   dtype long int"; CT_ERR_SHAPE when the shapes do not broadcast.
   Mirrors: torch.masked_fill(input, mask, value). */
CTORCH_API ct_tensor *ct_masked_fill(const ct_tensor *input, const ct_tensor *mask, double value);
/* ct_masked_fill into self in place; mask must broadcast to self's shape (CT_ERR_SHAPE
   "output with shape [..] doesn't match the broadcast shape [..]").
   Mirrors: Tensor.masked_fill_(mask, value). */
CTORCH_API ct_tensor *ct_masked_fill_(ct_tensor *self, const ct_tensor *mask, double value);

// >>part ops/reduce.h
/* ops/reduce.h - reductions over all elements or along dims.
 *
 * Shapes: a reduction over dim of input (d0, ..., dn) removes dim, or keeps it with size 1
 * when keepdim. Dtypes: sum of bool/integers accumulates to int64; mean needs a float
 * input; max/min/argmax keep the input dtype (indices are int64). NaN propagates through
 * max/min and argmax/argmin point at the first NaN. Ties: argmax/argmin and max_dim/min_dim
 * return the first occurrence.
 * Empty inputs cost O(output), whatever their other sizes: sums are 0, means NaN (0 / 0).
 * Returns: new tensors owned by the current scope. Errors: CT_ERR_INDEX for a dim out of
 * range; CT_ERR_VALUE for a max/min/argmax/argmin over an empty dim ("max(): Expected
 * reduction dim 0 to have non-zero size.") or over all elements of an empty input
 * ("argmax(): Expected reduction dim to be specified for input.numel() == 0.").
 * Determinism: float sums add fixed blocks of elements and then the block sums in order, so
 * results are bit-exact across thread counts; logsumexp, var/std, all/any and vector_norm are
 * built from these sums and max/min, so they are too.
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
/* Largest / smallest element over n dims (n == 0: all), kept as 1 when keepdim; the input's
   dtype. The gradient is split evenly among ties. Errors: CT_ERR_INDEX for an invalid dim or
   a reduced dim of size 0 ("amax(): Expected reduction dim 1 to have non-zero size.");
   CT_ERR_VALUE over all elements of an empty input, or for a repeated dim.
   Mirrors: torch.amax(input, dim, keepdim) / torch.amin(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_amax(const ct_tensor *input, const int64_t *dims, int n, bool keepdim);
CTORCH_API ct_tensor *ct_amin(const ct_tensor *input, const int64_t *dims, int n, bool keepdim);
/* log(sum(exp(input))) over n dims (n == 0: all), computed as log(sum(exp(x - m))) + m with m
   the amax (0 where infinite). Float input keeps its dtype, integers give the default dtype;
   -inf over an empty dim. Errors: CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.logsumexp(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_logsumexp(const ct_tensor *input, const int64_t *dims, int n,
                                   bool keepdim);
/* Variance / standard deviation of all elements: sum((x - mean)^2) / max(0, N - correction)
   (PyTorch's default correction is 1; NaN or inf when N <= correction). Float input only.
   Error: CT_ERR_DTYPE for other dtypes ("std and var only support floating point and complex
   dtypes"). Mirrors: torch.var(input, correction=c) / torch.std(input, correction=c). */
CTORCH_API ct_tensor *ct_var(const ct_tensor *input, double correction);
CTORCH_API ct_tensor *ct_std(const ct_tensor *input, double correction);
/* The same over n dims (n == 0: all), kept as 1 when keepdim. Errors: as ct_var, and
   CT_ERR_INDEX for an invalid dim. Mirrors: torch.var(input, dim, correction=c, keepdim). */
CTORCH_API ct_tensor *ct_var_dim(const ct_tensor *input, const int64_t *dims, int n,
                                 double correction, bool keepdim);
CTORCH_API ct_tensor *ct_std_dim(const ct_tensor *input, const int64_t *dims, int n,
                                 double correction, bool keepdim);
/* Whether all / any element is nonzero (NaN counts as nonzero), 0-dim; any dtype. The result
   is bool (uint8 for a uint8 input, as PyTorch). all of an empty input is true, any false.
   Mirrors: torch.all(input) / torch.any(input). */
CTORCH_API ct_tensor *ct_all(const ct_tensor *input);
CTORCH_API ct_tensor *ct_any(const ct_tensor *input);
/* The same along dim, kept as 1 when keepdim. Error: CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.all(input, dim, keepdim) / torch.any(input, dim, keepdim). */
CTORCH_API ct_tensor *ct_all_dim(const ct_tensor *input, int64_t dim, bool keepdim);
CTORCH_API ct_tensor *ct_any_dim(const ct_tensor *input, int64_t dim, bool keepdim);
/* Vector ord-norm over n dims (n == 0: all elements): sum(|x|^ord)^(1/ord); ord INFINITY
   max |x|, -INFINITY min |x|, 0 the count of nonzeros (PyTorch's default ord is 2). Float
   input only. Errors: CT_ERR_DTYPE for other dtypes ("linalg.vector_norm: Expected a floating
   point or complex tensor as input. Got Long"); CT_ERR_VALUE for an inf or negative ord over
   an empty reduction; CT_ERR_INDEX for an invalid dim.
   Mirrors: torch.linalg.vector_norm(input, ord, dim, keepdim). */
CTORCH_API ct_tensor *ct_linalg_vector_norm(const ct_tensor *input, double ord,
                                            const int64_t *dims, int n, bool keepdim);
/* Whether |input - other| <= atol + rtol * |other| everywhere (inputs broadcast; infinities
   must be equal; NaNs equal only when equal_nan). PyTorch's defaults: rtol 1e-05, atol
   1e-08, equal_nan false. Returns false after an error: CT_ERR_DTYPE for different dtypes
   ("Float did not match Double"), CT_ERR_SHAPE when the shapes do not broadcast.
   Mirrors: torch.allclose(input, other, rtol, atol, equal_nan). */
CTORCH_API bool ct_allclose(const ct_tensor *input, const ct_tensor *other, double rtol,
                            double atol, bool equal_nan);
/* Whether input and other have the same sizes and equal elements (after promotion; NaN is
   never equal). Mirrors: torch.equal(input, other). */
CTORCH_API bool ct_equal(const ct_tensor *input, const ct_tensor *other);

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
 * Determinism: each line along dim is computed by one thread in a fixed order, so results
 * are bit-exact across thread counts; the float32 AVX-512 path equals the portable one bit
 * for bit.
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
 * CT_REDUCTION_NONE (per-element losses); any other value is CT_ERR_VALUE ("ct_mse_loss:
 * 17 is not a valid value for reduction"). Results are new tensors owned by the current
 * scope; reduced losses are 0-dim. An empty batch gives PyTorch's results: mean NaN (0 / 0),
 * sum 0, none an empty tensor.
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
/* nn/init.h - parameter initialization (torch.nn.init).
 *
 * Every function fills its tensor in place without recording autograd history (as PyTorch
 * runs them under no_grad), bumps its version and returns it. A NULL generator means the
 * default one. Errors: CT_ERR_DTYPE for non-float tensors; CT_ERR_SHAPE for fan
 * computations on tensors with fewer than 2 dims ("Fan in and fan out can not be computed
 * for tensor with fewer than 2 dimensions").
 */
typedef enum ct_nonlinearity {
    CT_NONLINEARITY_LINEAR = 0, CT_NONLINEARITY_SIGMOID, CT_NONLINEARITY_TANH,
    CT_NONLINEARITY_RELU, CT_NONLINEARITY_LEAKY_RELU, CT_NONLINEARITY_SELU
} ct_nonlinearity;
typedef enum ct_fan_mode { CT_FAN_IN = 0, CT_FAN_OUT } ct_fan_mode;

/* The recommended gain: linear/sigmoid 1, tanh 5/3, relu sqrt(2), leaky_relu
   sqrt(2 / (1 + param^2)), selu 3/4. Errors: CT_ERR_VALUE (returns NAN) for another value
   ("Unsupported nonlinearity 17"); the kaiming initializers fail the same way, and with
   "Mode 17 not supported" for a bad mode. Mirrors: torch.nn.init.calculate_gain. */
CTORCH_API double ct_init_calculate_gain(ct_nonlinearity nonlinearity, double param);
/* fan_in = size(1) * receptive field, fan_out = size(0) * receptive field, for a weight of
   shape (out, in, k...); either output may be NULL (not written).
   Mirrors: torch.nn.init._calculate_fan_in_and_fan_out. */
CTORCH_API ct_status ct_init_calculate_fan_in_and_fan_out(const ct_tensor *t, int64_t *fan_in,
                                                          int64_t *fan_out);
/* U(a, b). Mirrors: torch.nn.init.uniform_. */
CTORCH_API ct_tensor *ct_init_uniform_(ct_tensor *t, double a, double b, ct_generator *g);
/* N(mean, std^2). Mirrors: torch.nn.init.normal_. */
CTORCH_API ct_tensor *ct_init_normal_(ct_tensor *t, double mean, double std, ct_generator *g);
/* Mirrors: torch.nn.init.constant_ / zeros_ / ones_. */
CTORCH_API ct_tensor *ct_init_constant_(ct_tensor *t, double value);
CTORCH_API ct_tensor *ct_init_zeros_(ct_tensor *t);
CTORCH_API ct_tensor *ct_init_ones_(ct_tensor *t);
/* U(-bound, bound) with bound = gain * sqrt(3 / fan), gain from (nonlinearity, a).
   Mirrors: torch.nn.init.kaiming_uniform_(t, a, mode, nonlinearity). */
CTORCH_API ct_tensor *ct_init_kaiming_uniform_(ct_tensor *t, double a, ct_fan_mode mode,
                                               ct_nonlinearity nonlinearity, ct_generator *g);
/* N(0, std^2) with std = gain / sqrt(fan). Mirrors: torch.nn.init.kaiming_normal_. */
CTORCH_API ct_tensor *ct_init_kaiming_normal_(ct_tensor *t, double a, ct_fan_mode mode,
                                              ct_nonlinearity nonlinearity, ct_generator *g);
/* U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)). Mirrors: torch.nn.init.xavier_uniform_. */
CTORCH_API ct_tensor *ct_init_xavier_uniform_(ct_tensor *t, double gain, ct_generator *g);
/* N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)). Mirrors: xavier_normal_. */
CTORCH_API ct_tensor *ct_init_xavier_normal_(ct_tensor *t, double gain, ct_generator *g);

// >>part nn/module.h
/* nn/module.h - modules (torch.nn.Module): parameters, buffers, submodules, train/eval.
 *
 * All modules share the ct_module type. A module owns its parameters (leaf tensors that
 * require grad), its buffers and its submodules; ct_module_free releases them all.
 * Parameters are created as float32 on the CPU with PyTorch's default initialization,
 * drawn from the default generator (so ct_manual_seed(s) followed by the same constructors
 * gives PyTorch's initial weights for torch.manual_seed(s)).
 * Names are dotted paths in registration order ("0.weight", "2.bias").
 */
typedef struct ct_module ct_module;

/* The forward function of a module type; returns a new tensor owned by the current scope. */
typedef ct_tensor *(*ct_module_forward_fn)(ct_module *m, const ct_tensor *input);

/* A new empty module of type name (at most 31 characters) for user-defined modules: the
   forward callback, and user data freed with user_free (may be NULL) by ct_module_free.
   Register parameters and submodules with the ct_module_register_* calls.
   Mirrors: subclassing torch.nn.Module. */
CTORCH_API ct_module *ct_module_new(const char *name, ct_module_forward_fn forward, void *user,
                                    void (*user_free)(void *user));
/* Frees m, its submodules, parameters (unless something else still holds them) and buffers.
   Invalidates: pointers from ct_module_get_parameter / ct_module_parameters / ct_module_child
   and the parameters' .grad, unless retained. NULL is a no-op. */
CTORCH_API void ct_module_free(ct_module *m);
/* Runs the module's forward on input. Errors: as the module's ops; CT_ERR_NULL_ARG.
   Mirrors: Module.__call__. */
CTORCH_API ct_tensor *ct_module_forward(ct_module *m, const ct_tensor *input);
/* The module's type name ("Linear", "Sequential", ...). */
CTORCH_API const char *ct_module_name(const ct_module *m);
/* The user data given to ct_module_new. */
CTORCH_API void *ct_module_user(const ct_module *m);

/* Registers a parameter (the module takes a reference; it is marked requires_grad). Names
   must be unique within m and contain no '.'. Mirrors: Module.register_parameter. */
CTORCH_API ct_status ct_module_register_parameter(ct_module *m, const char *name, ct_tensor *param);
/* Registers a buffer (state that is not a parameter, e.g. running_mean). Mirrors:
   Module.register_buffer. */
CTORCH_API ct_status ct_module_register_buffer(ct_module *m, const char *name, ct_tensor *buffer);
/* Registers child as a submodule named name; m takes ownership of child. Mirrors:
   Module.add_module. */
CTORCH_API ct_status ct_module_register_module(ct_module *m, const char *name, ct_module *child);

/* The parameters of m and its submodules, recursively, in registration order: writes up to
   cap tensor pointers (borrowed, owned by the module) into params (which may be NULL) and
   returns the total count. Mirrors: Module.parameters. */
CTORCH_API int64_t ct_module_parameters(const ct_module *m, ct_tensor **params, int64_t cap);
/* As ct_module_parameters, also writing dotted names (into caller buffers names[i] of
   name_cap bytes each; either array may be NULL). Mirrors: Module.named_parameters. */
CTORCH_API int64_t ct_module_named_parameters(const ct_module *m, char **names, size_t name_cap,
                                              ct_tensor **params, int64_t cap);
/* The parameter or buffer with the dotted name, or NULL (borrowed). Mirrors:
   Module.get_parameter. */
CTORCH_API ct_tensor *ct_module_get_parameter(const ct_module *m, const char *name);
/* The i-th direct submodule, or NULL (borrowed). Mirrors: Sequential[i]. */
CTORCH_API ct_module *ct_module_child(const ct_module *m, int64_t i);
/* Number of direct submodules. Mirrors: len(Sequential). */
CTORCH_API int64_t ct_module_num_children(const ct_module *m);
/* Sets training mode recursively (true: train, false: eval). Mirrors: Module.train(mode). */
CTORCH_API void ct_module_train(ct_module *m, bool mode);
/* Mirrors: Module.eval. */
CTORCH_API void ct_module_eval(ct_module *m);
/* Mirrors: Module.training. */
CTORCH_API bool ct_module_is_training(const ct_module *m);
/* Resets the gradients of all parameters: to NULL when set_to_none (PyTorch 2's default),
   else to zero in place. Invalidates (set_to_none): every .grad pointer taken with ct_grad.
   Mirrors: Module.zero_grad(set_to_none). */
CTORCH_API void ct_module_zero_grad(ct_module *m, bool set_to_none);

/* ---- layers ------------------------------------------------------------------------- */
/* y = x @ weight^T + bias. weight (out_features, in_features) and bias (out_features) from
   U(-1/sqrt(in_features), 1/sqrt(in_features)) (kaiming_uniform_ with a = sqrt(5)).
   Shapes: input (*, in_features) -> (*, out_features). Errors: CT_ERR_VALUE for sizes < 0.
   Mirrors: torch.nn.Linear(in_features, out_features, bias). */
CTORCH_API ct_module *ct_linear_new(int64_t in_features, int64_t out_features, bool bias);
/* Chains its children's forwards in order. Mirrors: torch.nn.Sequential. */
CTORCH_API ct_module *ct_sequential_new(void);
/* Appends child (ownership moves to seq); named "0", "1", ... Returns seq. Mirrors:
   Sequential.append. */
CTORCH_API ct_module *ct_sequential_append(ct_module *seq, ct_module *child);
/* Flattens dims start_dim..end_dim (nn.Flatten's defaults are 1 and -1).
   Mirrors: torch.nn.Flatten. */
CTORCH_API ct_module *ct_flatten_new(int64_t start_dim, int64_t end_dim);
/* Mirrors: torch.nn.ReLU. */
CTORCH_API ct_module *ct_relu_new(void);
/* Mirrors: torch.nn.Identity. */
CTORCH_API ct_module *ct_identity_new(void);
/* Mirrors: torch.nn.Sigmoid / torch.nn.Tanh. */
CTORCH_API ct_module *ct_sigmoid_new(void);
CTORCH_API ct_module *ct_tanh_new(void);

// >>part optim/optim.h
/* optim/optim.h - optimizers (torch.optim): SGD, Adam and AdamW.
 *
 * An optimizer holds ordered parameter groups. Each group is a list of parameters (leaf
 * tensors that require grad, float32 or float64, on the CPU) with its own hyperparameters;
 * the first group is built by the constructor, more come from ct_optimizer_add_param_group.
 * ct_optimizer_step updates every parameter whose .grad is set, in place, with
 * torch.optim's single-tensor math (the CPU default), and skips those whose .grad is NULL.
 * State (momentum_buffer; exp_avg, exp_avg_sq, max_exp_avg_sq and the per-parameter step)
 * is allocated on a parameter's first update and owned by the optimizer.
 *
 * Dtypes: the update runs in the parameter's dtype (float32 math for float32 parameters,
 * hyperparameters rounded to it as PyTorch's scalar arguments are); a gradient of another
 * dtype or layout is converted to a contiguous copy first.
 * Determinism: bit-exact across thread counts (every element is updated independently).
 * Subnormals: computed as IEEE prescribes, like PyTorch with torch.set_flush_denormal(False)
 * (its default). A gradient that stays zero for hundreds of steps decays exp_avg into the
 * subnormal range, where some CPUs run the update more slowly; enable flush-to-zero in
 * the calling thread (MXCSR FTZ/DAZ) to trade exactness for speed, as
 * torch.set_flush_denormal(True) does.
 * Thread safety: an optimizer may be used by one thread at a time; a step must not run
 * while another thread reads or writes its parameters or their gradients.
 */
typedef struct ct_optimizer ct_optimizer;

/* ---- options ----------------------------------------------------------------------------
 * Start from the defaults function and edit fields; a NULL opts means the defaults.
 *
 * ct_sgd_opts    field         default  meaning
 *                lr            1e-3     learning rate (step size per unit of gradient)
 *                momentum      0        momentum factor; 0 disables the momentum buffer
 *                dampening     0        dampening for momentum: buf = m*buf + (1-d)*g
 *                weight_decay  0        L2 penalty: g += weight_decay * p
 *                nesterov      false    Nesterov momentum (needs momentum > 0, dampening 0)
 *                maximize      false    maximize the objective (g = -grad)
 *
 * ct_adam_opts   field         Adam     AdamW    meaning
 *                lr            1e-3     1e-3     learning rate
 *                betas[0]      0.9      0.9      decay rate of exp_avg (first moment)
 *                betas[1]      0.999    0.999    decay rate of exp_avg_sq (second moment)
 *                eps           1e-8     1e-8     added to the denominator, in the units of
 *                                                the gradient
 *                weight_decay  0        1e-2     Adam: L2 penalty g += wd * p (coupled);
 *                                                AdamW: p *= 1 - lr * wd (decoupled)
 *                amsgrad       false    false    use max(max_exp_avg_sq, exp_avg_sq)
 *                maximize      false    false    maximize the objective (g = -grad)
 */
typedef struct ct_sgd_opts {
    double lr;
    double momentum;
    double dampening;
    double weight_decay;
    bool nesterov;
    bool maximize;
} ct_sgd_opts;

typedef struct ct_adam_opts {
    double lr;
    double betas[2];
    double eps;
    double weight_decay;
    bool amsgrad;
    bool maximize;
} ct_adam_opts;

/* PyTorch's SGD defaults (table above). Mirrors: torch.optim.SGD(params).defaults. */
CTORCH_API ct_sgd_opts ct_sgd_defaults(void);
/* PyTorch's Adam defaults (weight_decay 0). Mirrors: torch.optim.Adam(params).defaults. */
CTORCH_API ct_adam_opts ct_adam_defaults(void);
/* PyTorch's AdamW defaults (weight_decay 1e-2). Mirrors: torch.optim.AdamW(params).defaults. */
CTORCH_API ct_adam_opts ct_adamw_defaults(void);

/* ---- constructors -----------------------------------------------------------------------
 * params: n (>= 1) distinct leaf tensors that require grad, float32 or float64, CPU; the
 * optimizer retains each (ct_retain) until ct_optimizer_free, so the caller may free its
 * own references. opts: NULL for the defaults; copied.
 * Returns: a new optimizer owned by the caller (free with ct_optimizer_free), or NULL.
 * Errors: CT_ERR_NULL_ARG for a NULL params array or element; CT_ERR_VALUE for n < 1
 * ("optimizer got an empty parameter list"), a parameter that does not require grad
 * ("optimizer can only optimize Tensors that require grad"), a non-leaf ("can't optimize
 * a non-leaf Tensor"), a repeated parameter ("optimizer contains a parameter group with
 * duplicate parameters"; PyTorch only warns) and the invalid options named below;
 * CT_ERR_DTYPE for a non-float parameter; CT_ERR_DEVICE for a parameter off the CPU;
 * CT_ERR_OOM. Note: PyTorch accepts parameters that do not require grad (and never updates
 * them); ctorch rejects them so a forgotten ct_requires_grad_ shows up at once. */

/* Stochastic gradient descent, optionally with momentum, Nesterov momentum and weight
   decay: g = grad (negated when maximize); g += wd*p; buf = g on a parameter's first
   update, else buf = momentum*buf + (1-dampening)*g; g = nesterov ? g + momentum*buf : buf;
   p -= lr*g. Errors: "Invalid learning rate: -1.0", "Invalid momentum value: ...",
   "Invalid weight_decay value: ..." (each for values < 0), "Nesterov momentum requires a
   momentum and zero dampening". Mirrors: torch.optim.SGD(params, **opts). */
CTORCH_API ct_optimizer *ct_sgd_new(ct_tensor *const *params, int64_t n,
                                    const ct_sgd_opts *opts);
/* Adam with L2 weight decay added to the gradient: per parameter, t += 1; g = grad
   (negated when maximize) + wd*p; m = lerp(m, g, 1-b1); v = b2*v + (1-b2)*g*g;
   (amsgrad: vmax = max(vmax, v), used for v); p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t)
   + eps). Errors: "Invalid learning rate: ...", "Invalid epsilon value: ...", "Invalid beta
   parameter at index 0: 1.0" (each beta must be in [0, 1)), "Invalid weight_decay value:
   ..." (negative values and NaN). Mirrors: torch.optim.Adam(params, **opts). */
CTORCH_API ct_optimizer *ct_adam_new(ct_tensor *const *params, int64_t n,
                                     const ct_adam_opts *opts);
/* Adam with decoupled weight decay: p *= 1 - lr*wd before the Adam update (which then
   adds no L2 term). NULL opts means ct_adamw_defaults(). Errors: as ct_adam_new.
   Mirrors: torch.optim.AdamW(params, **opts). */
CTORCH_API ct_optimizer *ct_adamw_new(ct_tensor *const *params, int64_t n,
                                      const ct_adam_opts *opts);

/* ---- use -------------------------------------------------------------------------------- */
/* Frees the optimizer and its state and releases its references to the parameters.
   Invalidates: parameters no one else holds (their pointers from ct_optimizer_params).
   NULL is a no-op. */
CTORCH_API void ct_optimizer_free(ct_optimizer *opt);
/* Performs one update of every parameter that has a .grad (others are skipped and keep
   their state), in place and without recording autograd history; bumps the version of
   each updated parameter. Large parameters are updated in parallel over elements.
   Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG; CT_ERR_SHAPE when a .grad's
   shape differs from its parameter's; CT_ERR_OOM (no parameter is changed when state
   allocation fails). Mirrors: Optimizer.step() (without closure). */
CTORCH_API ct_status ct_optimizer_step(ct_optimizer *opt);
/* Resets the .grad of every parameter: to NULL when set_to_none (PyTorch 2's default),
   else detached and filled with zeros in place. Invalidates (set_to_none): every .grad
   pointer taken with ct_grad. Mirrors: Optimizer.zero_grad(set_to_none). */
CTORCH_API void ct_optimizer_zero_grad(ct_optimizer *opt, bool set_to_none);
/* Adds a parameter group with its own hyperparameters. opts points to the optimizer's own
   options type (ct_sgd_opts for SGD; ct_adam_opts for Adam and AdamW), or is NULL for the
   options the optimizer was constructed with. Errors: as the constructor; CT_ERR_VALUE
   "some parameters appear in more than one parameter group". Mirrors:
   Optimizer.add_param_group({'params': params, **opts}). */
CTORCH_API ct_status ct_optimizer_add_param_group(ct_optimizer *opt, ct_tensor *const *params,
                                                  int64_t n, const void *opts);
/* Number of parameter groups (>= 1); 0 for NULL. Mirrors: len(Optimizer.param_groups). */
CTORCH_API int64_t ct_optimizer_num_param_groups(const ct_optimizer *opt);
/* The parameters of group (in order): writes up to cap borrowed pointers into params (may
   be NULL) and returns the group's count; -1 + CT_ERR_INDEX for a bad group.
   Mirrors: Optimizer.param_groups[group]['params']. */
CTORCH_API int64_t ct_optimizer_params(const ct_optimizer *opt, int64_t group,
                                       ct_tensor **params, int64_t cap);
/* The learning rate of a parameter group; NAN + CT_ERR_INDEX for a bad group.
   Mirrors: Optimizer.param_groups[group]['lr']. */
CTORCH_API double ct_optimizer_get_lr(const ct_optimizer *opt, int64_t group);
/* Sets the learning rate of a group (group -1: every group), as LR schedulers do; it
   applies from the next step. Errors: CT_ERR_INDEX for a bad group; CT_ERR_VALUE
   "Invalid learning rate: ..." for lr < 0 or NaN. Mirrors: param_group['lr'] = lr. */
CTORCH_API ct_status ct_optimizer_set_lr(ct_optimizer *opt, int64_t group, double lr);
/* Number of successful ct_optimizer_step calls; 0 for NULL. (Each parameter also counts
   its own updates, as state['step'] does, for Adam's bias correction.) */
CTORCH_API int64_t ct_optimizer_step_count(const ct_optimizer *opt);
/* The optimizer's PyTorch class name: "SGD", "Adam" or "AdamW". Mirrors: type(opt).__name__. */
CTORCH_API const char *ct_optimizer_name(const ct_optimizer *opt);

// >>part data/npy.h
/* data/npy.h - NumPy's .npy format: one array per file (numpy.load / numpy.save).
 *
 * Format versions 1.0, 2.0 and 3.0; C order only; 0 to CT_MAX_DIMS dims (0-d arrays and
 * empty arrays included). Dtypes (numpy descr -> ctorch): '<f4' float32, '<f8' float64,
 * '<i8' int64, '<i4' int32, '<i2' int16, '|i1' int8, '|u1' uint8, '|b1' bool ('<' and '|'
 * are both accepted for one-byte types). The loader validates every length and offset
 * before use, so a corrupt or hostile file gives an error, never a crash.
 */

/* Parses a whole .npy file held in memory (copies the data; data may be unaligned).
   Shapes: the array's shape, outermost first. Dtypes: as the table above; bool bytes other
   than 0 are read as true.
   Returns: a new contiguous tensor (a leaf), owned by the current scope; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL data with nbytes > 0; CT_ERR_FORMAT for a bad magic
   string, a truncated file, a header length beyond the file, a malformed header dict
   (missing, repeated or unknown keys, bad values), a bad shape or a data size that differs
   from the shape's ("ct_npy_load: data has 40 bytes but shape [3, 4] of <f4 needs 48
   (truncated file)");
   CT_ERR_DTYPE for a descr not in the table (big-endian, complex, unsigned > 1 byte ...);
   CT_ERR_UNSUPPORTED for fortran_order True, format versions other than 1.0-3.0 and more
   than CT_MAX_DIMS dims.
   Mirrors: numpy.load(io.BytesIO(data)). */
CTORCH_API ct_tensor *ct_npy_load_buffer(const void *data, size_t nbytes);

/* Writes t (any strides, CPU) as a .npy file into buf, byte for byte what numpy.save
   writes (format 1.0, header padded to 64 bytes). buf may be NULL: the size needed is
   returned and nothing is written.
   Returns: the size of the file in bytes (also when n is too small, in which case nothing
   is written); 0 on error.
   Errors: CT_ERR_NULL_ARG for a NULL t; CT_ERR_DEVICE for a non-CPU tensor.
   Mirrors: numpy.save(io.BytesIO(), t.numpy()). */
CTORCH_API size_t ct_npy_save_buffer(const ct_tensor *t, void *buf, size_t n);

#ifndef CTORCH_NO_STDIO
/* Reads the .npy file at path. Shapes, dtypes and Errors as ct_npy_load_buffer, plus
   CT_ERR_IO when the file cannot be opened or read ("ct_npy_load: No such file or
   directory: 'x.npy'") and CT_ERR_OOM.
   Returns: a new tensor, owned by the current scope; NULL on error.
   Mirrors: numpy.load(path). */
CTORCH_API ct_tensor *ct_npy_load(const char *path);
/* Writes t (any strides, CPU) to path as numpy.save does (format 1.0); the file is
   replaced. Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG; CT_ERR_DEVICE;
   CT_ERR_IO when the file cannot be opened or written. Mirrors: numpy.save(path, a). */
CTORCH_API ct_status ct_npy_save(const char *path, const ct_tensor *t);
#endif

// >>part data/idx.h
/* data/idx.h - the IDX format of MNIST, Fashion-MNIST, KMNIST and EMNIST.
 *
 * An IDX file is: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
 * 0x0D float32, 0x0E float64), the number of dimensions (1..8), one big-endian uint32 size per
 * dimension (outermost first), then the elements in row-major order, big-endian. Readers
 * validate every field and length before use: hostile input gives an error, never a crash,
 * and never an allocation larger than the data actually present.
 */

#ifndef CTORCH_NO_STDIO
/* Reads an IDX file into a contiguous tensor of the file's shape and dtype. A path ending in
   ".gz" is decompressed with zlib when the implementation is built with CTORCH_ZLIB (link
   -lz); the other paths are read as they are.
   Shapes: the header's, e.g. images (N, 28, 28) and labels (N) for MNIST.
   dtypes: uint8 -> CT_UINT8, int8 -> CT_INT8, int16 -> CT_INT16, int32 -> CT_INT32,
   float32 -> CT_FLOAT32, float64 -> CT_FLOAT64 (converted to host byte order).
   Returns: a new tensor, owned by the current scope; NULL on error.
   Errors: CT_ERR_IO (cannot open or read, with the path and the system's reason);
   CT_ERR_FORMAT (short header, magic bytes not 0 0, unknown type code, 0 or more than 8
   dimensions, sizes that overflow, data shorter or longer than the header declares, e.g.
   "ct_idx_load: truncated file: header declares 60000x28x28 uint8 (47040000 bytes) but 1000
   bytes follow in 'x'"); CT_ERR_UNSUPPORTED for ".gz" without CTORCH_ZLIB; CT_ERR_OOM.
   Mirrors: torchvision.datasets.mnist.read_sn3_pascalvincent_tensor. */
CTORCH_API ct_tensor *ct_idx_load(const char *path);
#endif

/* Parses an uncompressed IDX image held in memory (copies the elements; data may be freed
   afterwards). Shapes, dtypes and errors as ct_idx_load, with "ct_idx_load_buffer" in the
   messages; data may be NULL only when nbytes is 0.
   Returns: a new tensor, owned by the current scope; NULL on error.
   Mirrors: torchvision.datasets.mnist.read_sn3_pascalvincent_tensor. */
CTORCH_API ct_tensor *ct_idx_load_buffer(const void *data, size_t nbytes);

// >>part data/dataset.h
/* data/dataset.h - map-style datasets (torch.utils.data.Dataset, TensorDataset, Subset,
 * random_split) and default_collate.
 *
 * A sample is a fixed number of fields (n_fields tensors: e.g. image and label). A dataset
 * is a small vtable that users fill to write their own:
 *     static int64_t my_len(const ct_dataset *ds) { return 100; }
 *     static ct_status my_get(const ct_dataset *ds, int64_t i, ct_tensor **fields)
 *     {
 *         fields[0] = ct_full(NULL, 0, (double)i, CT_FLOAT32);
 *         return fields[0] ? CT_OK : ct_error_code();
 *     }
 *     ct_dataset ds = {my_len, my_get, NULL, NULL, 1, NULL};
 * The tensors get and get_batch return are new tensors owned by the current scope (views of
 * the dataset's storage are allowed); they carry no autograd history the caller relies on.
 * Thread safety: ct_dataset_get may run on several threads at once only when the dataset's
 * callbacks allow it (the built-in datasets do).
 */

/* Most fields a sample may have. */
#define CT_DATASET_MAX_FIELDS 16

typedef struct ct_dataset ct_dataset;
struct ct_dataset {
    /* Number of samples (>= 0). Required. Mirrors: Dataset.__len__. */
    int64_t (*len)(const ct_dataset *self);
    /* Writes the n_fields tensors of sample index (0 <= index < len, already checked) into
       fields, as new tensors owned by the current scope. Returns CT_OK, or the status of an
       error it recorded (ct_error). Required. Mirrors: Dataset.__getitem__. */
    ct_status (*get)(const ct_dataset *self, int64_t index, ct_tensor **fields);
    /* Optional batched fetch: writes n_fields tensors whose dim 0 has n rows, row k being
       sample indices[k] (indices already checked; n >= 1). NULL: ct_dataset_get_batch calls
       get per sample and stacks (ct_default_collate). Mirrors: Dataset.__getitems__ followed
       by default_collate. */
    ct_status (*get_batch)(const ct_dataset *self, const int64_t *indices, int64_t n,
                           ct_tensor **fields);
    /* Optional: called by ct_dataset_free to release what the dataset holds (including the
       struct itself when it was allocated). NULL: ct_dataset_free does nothing. */
    void (*destroy)(ct_dataset *self);
    /* Fields per sample, 1..CT_DATASET_MAX_FIELDS. */
    int n_fields;
    /* The implementation's data. */
    void *user;
};

/* Number of samples; -1 + CT_ERR_NULL_ARG for NULL. Mirrors: len(dataset). */
CTORCH_API int64_t ct_dataset_len(const ct_dataset *ds);
/* Fetches sample index (negative counts from the end) into fields[0..n_fields).
   Returns: CT_OK and new tensors owned by the current scope (for a tensor dataset: views of
   row index, sharing storage); on error a nonzero status and every field NULL.
   Errors: CT_ERR_INDEX "index 7 is out of bounds for dimension 0 with size 5";
   CT_ERR_VALUE for a malformed vtable; the dataset's own errors.
   Mirrors: dataset[index]. */
CTORCH_API ct_status ct_dataset_get(const ct_dataset *ds, int64_t index, ct_tensor **fields);
/* Fetches the samples indices[0..n) as batched fields: field f has shape (n, *sample_shape_f)
   and the sample's dtype, row k holding sample indices[k] (indices may repeat; negative
   counts from the end). Uses the dataset's get_batch when it has one (a tensor dataset
   gathers rows directly), else get per sample and ct_default_collate.
   Returns: CT_OK and new contiguous tensors owned by the current scope, with no autograd
   history; on error a nonzero status and every field NULL.
   Errors: CT_ERR_VALUE for n < 1; CT_ERR_INDEX as ct_dataset_get; CT_ERR_SHAPE when the
   samples' shapes differ ("stack expects each tensor to be equal size").
   Mirrors: default_collate([dataset[i] for i in indices]). */
CTORCH_API ct_status ct_dataset_get_batch(const ct_dataset *ds, const int64_t *indices,
                                          int64_t n, ct_tensor **fields);
/* Releases a dataset through its destroy callback. NULL is a no-op. Datasets built on ds
   (subsets, loaders) must be freed first. Invalidates: tensors only the dataset held. */
CTORCH_API void ct_dataset_free(ct_dataset *ds);

/* Stacks n samples of n_fields fields each along a new dim 0: samples[k * n_fields + f] is
   field f of sample k; batch[f] gets shape (n, *shape_f).
   dtypes: each field keeps its dtype (the samples of a field must agree).
   Returns: CT_OK and new tensors owned by the current scope in batch[0..n_fields); on error
   a nonzero status and every batch entry NULL.
   Errors: CT_ERR_VALUE for n < 1 or n_fields out of 1..CT_DATASET_MAX_FIELDS;
   CT_ERR_SHAPE / CT_ERR_DTYPE from ct_stack. Mirrors: torch.utils.data.default_collate. */
CTORCH_API ct_status ct_default_collate(ct_tensor *const *samples, int64_t n, int n_fields,
                                        ct_tensor **batch);

/* A dataset whose sample i is (tensors[0][i], ..., tensors[n-1][i]).
   Shapes: tensors[k] (N, *) with the same N for all.
   Returns: a new dataset (n_fields = n) that retains the tensors (they stay alive, and
   in-place changes to them show); free with ct_dataset_free. NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n out of 1..CT_DATASET_MAX_FIELDS;
   CT_ERR_SHAPE for a 0-dim tensor or "Size mismatch between tensors"; CT_ERR_DEVICE for
   non-CPU tensors. Mirrors: torch.utils.data.TensorDataset(*tensors). */
CTORCH_API ct_dataset *ct_tensor_dataset_new(ct_tensor *const *tensors, int n);
/* Whether ds was made by ct_tensor_dataset_new. */
CTORCH_API bool ct_dataset_is_tensor_dataset(const ct_dataset *ds);

/* The samples indices[0..n) of ds, in that order (indices are copied, may repeat).
   Returns: a new dataset that borrows ds (which must outlive it); free with
   ct_dataset_free. NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 0; CT_ERR_INDEX for an index outside
   [0, len(ds)). Mirrors: torch.utils.data.Subset(dataset, indices). */
CTORCH_API ct_dataset *ct_subset_new(ct_dataset *ds, const int64_t *indices, int64_t n);
/* Splits ds into n non-overlapping subsets of the given lengths, from one permutation
   ct_randperm(len(ds), g) (g NULL: the default generator): out[k] holds the next lengths[k]
   permuted indices. With the same generator state the subsets equal PyTorch's.
   Returns: CT_OK and n new subsets in out (each borrows ds; free each with ct_dataset_free);
   on error a nonzero status and every out[k] NULL.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 1, a negative length, or "Sum of input
   lengths does not equal the length of the input dataset!".
   Mirrors: torch.utils.data.random_split(dataset, lengths, generator) (integer lengths). */
CTORCH_API ct_status ct_random_split(ct_dataset *ds, const int64_t *lengths, int n,
                                     ct_generator *g, ct_dataset **out);

// >>part data/dataloader.h
/* data/dataloader.h - batches over a dataset (torch.utils.data.DataLoader).
 *
 *     ct_dataloader_opts o = ct_dataloader_defaults();
 *     o.batch_size = 64;
 *     o.shuffle = true;
 *     ct_dataloader *dl = ct_dataloader_new(ds, &o);
 *     for (int epoch = 0; epoch < 10; epoch++) {
 *         ct_tensor *batch[2];
 *         ct_scope_begin();
 *         while (ct_dataloader_next(dl, batch)) { ... train on batch[0], batch[1] ...; }
 *         ct_scope_end();
 *     }
 *     ct_dataloader_free(dl);
 * Each epoch visits every sample once: in order, or (shuffle) in a new permutation drawn at
 * the epoch's start. Batches run in the calling thread (num_workers = 0); the fields of a
 * batch are collated by ct_dataset_get_batch, which gathers rows straight from the tensors
 * of a tensor dataset (no per-sample tensors).
 * Determinism: the batches equal PyTorch's DataLoader(..., shuffle=True) epoch after epoch for
 * the same seed, with an explicit generator (seeded as torch.Generator().manual_seed(s)) or
 * with generator NULL (the default generator after torch.manual_seed(s)), and the generator
 * advances as PyTorch's: each epoch draws a 64-bit base seed, then with an explicit generator
 * two randperm calls; with the default one a second 64-bit draw seeds a private generator for
 * the permutation, as RandomSampler does.
 * Thread safety: one loader per thread.
 */
typedef struct ct_dataloader ct_dataloader;

/* Options (ct_dataloader_defaults() returns PyTorch's defaults):
   | field      | default | meaning                                                      |
   |------------|---------|--------------------------------------------------------------|
   | batch_size | 1       | samples per batch, >= 1                                      |
   | shuffle    | false   | a new random order every epoch (RandomSampler)               |
   | drop_last  | false   | drop the last batch when it has fewer than batch_size samples |
   | generator  | NULL    | the generator for shuffling (borrowed); NULL: the default one |
   Fields may be added (num_workers, samplers); start from ct_dataloader_defaults(). */
typedef struct ct_dataloader_opts {
    int64_t batch_size;
    bool shuffle;
    bool drop_last;
    ct_generator *generator;
} ct_dataloader_opts;

/* PyTorch's defaults: batch_size 1, shuffle false, drop_last false, generator NULL.
   Mirrors: DataLoader's keyword defaults. */
CTORCH_API ct_dataloader_opts ct_dataloader_defaults(void);

/* A loader over ds (borrowed: it must outlive the loader). opts NULL means the defaults;
   the options are copied (the generator is borrowed).
   Returns: a new loader, freed with ct_dataloader_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "batch_size should be a positive integer value, but
   got batch_size=0", or a malformed dataset vtable. Mirrors: torch.utils.data.DataLoader. */
CTORCH_API ct_dataloader *ct_dataloader_new(ct_dataset *ds, const ct_dataloader_opts *opts);
/* Writes the next batch into batch[0..n_fields) (n_fields = ds->n_fields) and returns true;
   returns false, with every entry NULL, at the end of the epoch. The call after that starts
   a new epoch (reshuffling), like iterating the DataLoader again.
   Shapes: batch[f] (B, *sample_shape_f), B = batch_size except a smaller last batch when
   drop_last is false. dtypes: each field's own (uint8 images stay uint8, int64 labels stay
   int64).
   Returns: new contiguous tensors owned by the current scope (end a scope per step or
   epoch), with no autograd history; false + an error (ct_error) when the dataset fails.
   Mirrors: next(iter(dataloader)). */
CTORCH_API bool ct_dataloader_next(ct_dataloader *dl, ct_tensor **batch);
/* Abandons the current epoch: the next ct_dataloader_next starts a new one.
   Mirrors: calling iter(dataloader) again. */
CTORCH_API void ct_dataloader_reset(ct_dataloader *dl);
/* Batches per epoch: ceil(N / batch_size), or floor(N / batch_size) with drop_last; -1 for
   NULL. Mirrors: len(dataloader). */
CTORCH_API int64_t ct_dataloader_len(const ct_dataloader *dl);
/* Frees the loader (not its dataset or generator). NULL is a no-op. */
CTORCH_API void ct_dataloader_free(ct_dataloader *dl);

// >>part bench/timer.h
/* bench/timer.h - benchmark timers (DESIGN §10): Timer, Measurement and Compare, as in
 * torch.utils.benchmark.
 *
 * A ct_timer runs a statement callback many times and returns a ct_measurement: the time of
 * each run of `number_per_run` calls, with the median, IQR and mean per call. ct_compare
 * prints many measurements as one table per label. Times are in seconds everywhere.
 *     static void stmt(void *user) { ct_free(ct_matmul((ct_tensor *)user, (ct_tensor *)user)); }
 *     ct_timer_opts o = {0};
 *     o.stmt = stmt; o.user = x; o.label = "matmul"; o.sub_label = "[64, 64]";
 *     ct_timer *t = ct_timer_new(&o);
 *     ct_measurement *m = ct_timer_blocked_autorange(t, 0.2);
 *     ct_measurement_print(m, stdout);
 *     ct_measurement_free(m);
 *     ct_timer_free(t);
 * Statistics match PyTorch's: the median and quartiles use linear interpolation between
 * the sorted per-call times (numpy.percentile's default, torch.quantile's 'linear').
 * Thread safety: a timer and the measurements are not locked; use each from one thread at
 * a time. A timer changes the global intra-op thread count while it measures.
 */

typedef struct ct_timer ct_timer;
typedef struct ct_measurement ct_measurement;
typedef struct ct_compare ct_compare;

/* How a ct_timer runs and labels a statement. Zero means default for every field, so
   `ct_timer_opts o = {0};` (C) or `ct_timer_opts o = {};` (C++) then setting stmt is
   enough. Strings are copied by ct_timer_new; NULL means "not given" (Python's None).
     field        default              meaning
     stmt         (required)           the statement, called stmt(user) `number` times a run
     setup        NULL (none)          called setup(user) once before each run, not timed
     user         NULL                 passed to stmt and setup
     stmt_name    NULL ("")            the statement's text, PyTorch's `stmt` string: shown
                                       when label is NULL, row name when sub_label is NULL
     label        NULL                 Compare groups tables by label; the title line
     sub_label    NULL                 Compare's row name, after "label: " in the title
     description  NULL                 Compare's column; its own line in the print
     env          NULL                 Compare: tells apart otherwise identical rows
     num_threads  0 (1 thread)         intra-op threads while measuring (>= 0); PyTorch's
                                       default is also 1
     clock_ns     NULL (monotonic)     a clock in nanoseconds: clock_gettime(
                                       CLOCK_MONOTONIC) on POSIX, else C11 timespec_get;
                                       required under CTORCH_NO_STDIO
     clock_user   NULL                 passed to clock_ns
   Mirrors: torch.utils.benchmark.Timer(stmt, setup, timer, label, sub_label, description,
   env, num_threads); stmt/setup are callbacks instead of source strings. */
typedef struct ct_timer_opts {
    void (*stmt)(void *user);
    void (*setup)(void *user);
    void *user;
    const char *stmt_name;
    const char *label;
    const char *sub_label;
    const char *description;
    const char *env;
    int num_threads;
    uint64_t (*clock_ns)(void *clock_user);
    void *clock_user;
} ct_timer_opts;

/* A new timer for opts->stmt (opts is read, its strings copied).
   Returns: a new timer, freed with ct_timer_free; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL opts or opts->stmt; CT_ERR_VALUE for num_threads < 0;
   CT_ERR_UNSUPPORTED when clock_ns is NULL and the build has no default clock
   (CTORCH_NO_STDIO); CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.__init__. */
CTORCH_API ct_timer *ct_timer_new(const ct_timer_opts *opts);
/* Frees a timer; NULL is a no-op. Measurements it returned stay valid. */
CTORCH_API void ct_timer_free(ct_timer *t);

/* Runs stmt max(number / 100, 2) times as a warmup, then once more `number` times in one
   timed run (setup, then the clock, the calls, the clock), with the intra-op thread count
   set to the timer's num_threads and restored afterwards.
   Units: a run takes at least 1 ns (PyTorch's floor).
   Returns: a new measurement of 1 run with number_per_run = number, freed with
   ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for number < 1; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.timeit. */
CTORCH_API ct_measurement *ct_timer_timeit(ct_timer *t, int64_t number);
/* Chooses a block size, then times blocks of that many calls until their total time
   reaches min_run_time_s. The block size: with `overhead` the median of 5 empty runs,
   number = 1, 10, 100 ... until a run of `number` calls takes >= min_run_time_s / 1000
   with overhead / time <= 1e-4, or takes > min_run_time_s, or number * 10 would pass
   2^31 - 1. Those runs are the warmup; the measurement holds only the blocks.
   Units: seconds (PyTorch's default min_run_time is 0.2).
   Returns: a new measurement (number_per_run = the block size), freed with
   ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE unless min_run_time_s > 0; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.blocked_autorange. */
CTORCH_API ct_measurement *ct_timer_blocked_autorange(ct_timer *t, double min_run_time_s);
/* Like blocked_autorange with the block size chosen for 0.05 s, but keeps timing blocks
   until, after more than 3 blocks and at least min_run_time_s in total, IQR / median of the
   times is below threshold; or stops once the total passes max_run_time_s.
   Units: seconds (PyTorch's defaults: threshold 0.1, min_run_time 0.01, max_run_time 10).
   Returns: a new measurement, freed with ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for a NaN threshold, min_run_time_s < 0 or
   max_run_time_s <= 0 (PyTorch reads 0 as "no limit"; ctorch always needs one); CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Timer.adaptive_autorange. */
CTORCH_API ct_measurement *ct_timer_adaptive_autorange(ct_timer *t, double threshold,
                                                       double min_run_time_s,
                                                       double max_run_time_s);

/* A measurement from times taken elsewhere: n runs of number_per_run calls each.
   spec gives the labels and num_threads (its callbacks are ignored; NULL: no labels, 1
   thread). Copies raw_times_s and the strings.
   Units: raw_times_s in seconds per run (all runs of number_per_run calls).
   Returns: a new measurement, freed with ct_measurement_free; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL raw_times_s; CT_ERR_VALUE for number_per_run < 1,
   n < 1, a time that is not finite and > 0, or spec->num_threads < 0; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Measurement(number_per_run, raw_times, task_spec). */
CTORCH_API ct_measurement *ct_measurement_new(int64_t number_per_run, const double *raw_times_s,
                                              int64_t n, const ct_timer_opts *spec);
/* Frees a measurement; NULL is a no-op. */
CTORCH_API void ct_measurement_free(ct_measurement *m);

/* Calls per run (the block size). 0 (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.number_per_run. */
CTORCH_API int64_t ct_measurement_number_per_run(const ct_measurement *m);
/* Number of runs (replicates) measured. 0 (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: len(Measurement.times). */
CTORCH_API int64_t ct_measurement_number_of_runs(const ct_measurement *m);
/* The intra-op thread count the measurement was taken with. 0 (and CT_ERR_NULL_ARG) for
   NULL. Mirrors: Measurement.num_threads. */
CTORCH_API int ct_measurement_num_threads(const ct_measurement *m);
/* Seconds per call of each run, in run order (raw time / number_per_run); the array has
   ct_measurement_number_of_runs entries and lives as long as m. NULL (and CT_ERR_NULL_ARG)
   for NULL. Mirrors: Measurement.times. */
CTORCH_API const double *ct_measurement_times(const ct_measurement *m);
/* Seconds per run, in run order. Mirrors: Measurement.raw_times. */
CTORCH_API const double *ct_measurement_raw_times(const ct_measurement *m);
/* Mean of the per-call times, in seconds. NaN (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.mean. */
CTORCH_API double ct_measurement_mean(const ct_measurement *m);
/* Median of the per-call times, in seconds (the mean of the middle two for an even count).
   NaN (and CT_ERR_NULL_ARG) for NULL. Mirrors: Measurement.median. */
CTORCH_API double ct_measurement_median(const ct_measurement *m);
/* Interquartile range of the per-call times, p75 - p25, in seconds, each percentile
   interpolated linearly (numpy.percentile(times, 75) - numpy.percentile(times, 25)).
   NaN (and CT_ERR_NULL_ARG) for NULL. Mirrors: Measurement.iqr. */
CTORCH_API double ct_measurement_iqr(const ct_measurement *m);
/* Estimated significant figures of the median, 1..4: with the sorted times' middle half
   (indices n/4 up to ceil(3n/4)), ci = max(1.645 * std / sqrt(count), 25 ns) and the
   result floor(log10(median / ci)) clamped to [1, 4]; the std, sqrt and log10 in float32,
   as PyTorch's. 0 (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.significant_figures. */
CTORCH_API int ct_measurement_significant_figures(const ct_measurement *m);
/* Whether IQR / median < threshold. false (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: Measurement.meets_confidence. */
CTORCH_API bool ct_measurement_meets_confidence(const ct_measurement *m, double threshold);
/* Whether IQR / median >= 0.1, which adds a WARNING to the print.
   Mirrors: Measurement.has_warnings. */
CTORCH_API bool ct_measurement_has_warnings(const ct_measurement *m);

/* Writes the text PyTorch's repr(Measurement) shows, without its first line (the object
   address), ending in a newline as print(m) does:
       matmul: [64, 64]
       Median: 2.43 ms
       IQR:    0.01 ms (2.42 to 2.43)
       4 measurements, 100 runs per measurement, 1 thread
   (each line after the title indented by 2). The unit (ns, us, ms, s) follows the median;
   the IQR line appears from 4 runs on; WARNING lines when IQR / median >= 0.1.
   buf may be NULL (n 0) to ask for the size; a short buf gets a truncated text.
   Returns: the length of the whole text without the final NUL (like snprintf); 0 on error.
   Errors: CT_ERR_NULL_ARG for a NULL m; CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Measurement.__repr__. */
CTORCH_API size_t ct_measurement_str(const ct_measurement *m, char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Writes ct_measurement_str's text to f. Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_IO when the write fails; CT_ERR_OOM.
   Mirrors: print(measurement). */
CTORCH_API ct_status ct_measurement_print(const ct_measurement *m, FILE *f);
#endif

/* A table of measurements. Copies the n measurements (they may be freed afterwards).
   Measurements with identical labels, env and num_threads are merged (their per-call times
   pooled) when printed, as PyTorch's Measurement.merge.
   Returns: a new compare, freed with ct_compare_free; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL ms with n > 0 or a NULL entry; CT_ERR_VALUE for n < 0;
   CT_ERR_OOM.
   Mirrors: torch.utils.benchmark.Compare(results). */
CTORCH_API ct_compare *ct_compare_new(ct_measurement *const *ms, int n);
/* Appends copies of n more measurements. Returns: CT_OK or the error code.
   Errors: as ct_compare_new, and CT_ERR_NULL_ARG for a NULL c.
   Mirrors: Compare.extend_results. */
CTORCH_API ct_status ct_compare_extend_results(ct_compare *c, ct_measurement *const *ms, int n);
/* Prints each value with the significant figures its measurement supports (see
   ct_measurement_significant_figures) instead of one decimal. Mirrors:
   Compare.trim_significant_figures. */
CTORCH_API void ct_compare_trim_significant_figures(ct_compare *c);
/* Colors cells with ANSI escapes against the best (lowest) median of their column within
   each thread-count group, or of their row when rowwise: green bold within 1% (or 100 ns),
   blue bold within 10%, dim red from 2x, red bold from 5x. Mirrors: Compare.colorize. */
CTORCH_API void ct_compare_colorize(ct_compare *c, bool rowwise);
/* Appends " (! XX%)" (IQR / median in percent) to cells of measurements with warnings, and
   a footnote. Mirrors: Compare.highlight_warnings. */
CTORCH_API void ct_compare_highlight_warnings(ct_compare *c);
/* Writes the tables as str(Compare) then a newline, as Compare.print() does: one table per
   label, in order of first appearance, separated by an empty line:
       [--------------- add ----------------]
                       |  float32  |  float64
       1 threads: ---------------------------
             [64, 64]  |   110.0   |   130.0
       4 threads: ---------------------------
             [64, 64]  |   160.0   |   170.0

       Times are in nanoseconds (ns).
   Columns are descriptions, rows sub_labels (else stmt_name, else "[Unknown]"), grouped by
   num_threads; one unit per table, chosen from its smallest median. buf may be NULL (n 0)
   to ask for the size; a short buf gets a truncated text.
   Returns: the length of the whole text without the final NUL; 0 on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_OOM.
   Mirrors: str(torch.utils.benchmark.Compare). */
CTORCH_API size_t ct_compare_str(const ct_compare *c, char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Writes ct_compare_str's text to f. Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_IO when the write fails; CT_ERR_OOM.
   Mirrors: Compare.print. */
CTORCH_API ct_status ct_compare_print(const ct_compare *c, FILE *f);
#endif
/* Frees a compare (and its copies); NULL is a no-op. */
CTORCH_API void ct_compare_free(ct_compare *c);

// >>part bench/profiler.h
/* bench/profiler.h - the op profiler (torch.profiler), built on the dispatcher.
 *
 * Between ct_profiler_begin and ct_profiler_end every op that goes through the dispatcher,
 * on every thread, is recorded as an event (its name, e.g. "aten::addmm", start and
 * duration), nested inside the op or range that called it: ops of composite ops, of
 * autograd formulas ("autograd::engine::evaluate_function: AddmmBackward0" ranges), of
 * optimizer steps ("Optimizer.step#SGD.step") and of DataLoader batches
 * ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), and inside the user's
 * own ranges (ct_record_function_begin/end). After ct_profiler_end the profile can be read
 * as key averages, printed as PyTorch's table or written as a Chrome trace:
 *     ct_profiler_opts po = ct_profiler_defaults();
 *     po.record_shapes = true;
 *     ct_profiler_begin(&po);
 *     ct_record_function_begin("model_inference");
 *     ct_module_forward(model, x);
 *     ct_record_function_end();
 *     ct_profiler_end();
 *     ct_profiler_print_table(stdout, "self_cpu_time_total", 10);
 *     ct_profiler_export_chrome_trace("trace.json");
 *     ct_profiler_reset();
 * Definitions (PyTorch's): an event's CPU total is its duration; its self CPU time is the
 * duration minus its direct children's durations (events of the same thread that ran inside
 * it), so the self times of a thread add up to the time covered by its outermost events.
 * Memory (profile_memory) is ct_memory_allocated()'s change over the event (allocations
 * minus frees, all threads; the profiler's own storage excluded); self memory again minus
 * the children's. Times are microseconds in the results, as PyTorch's.
 * Thread safety: one profile at a time for the whole process; events are recorded from any
 * thread (under a lock, only while the profiler runs); each thread has its own stack of open
 * ranges. Read the results (key averages, table, trace) after ct_profiler_end.
 * Cost: with the profiler off, the dispatcher pays one predictable branch; while on, each
 * op takes a lock twice and reads the clock twice (60 to 150 ns a call on x86-64).
 */

/* How the profiler records. Zero means default for every field, so `{0}` or
   ct_profiler_defaults() (the same values) work; NULL opts means the defaults.
     field           default           meaning
     record_shapes   false             record each op's input shapes; the key averages
                                       and the table group by (name, input shapes), as
                                       key_averages(group_by_input_shape=True); the trace
                                       gets "Input Dims"
     profile_memory  false             record the change in ct_memory_allocated() over each
                                       event ("CPU Mem", "Self CPU Mem")
     with_flops      false             record the floating point operations of ops that
                                       count them (matrix multiplies; "Total MFLOPs", the
                                       unit scaled to the smallest count)
     clock_ns        NULL (monotonic)  a clock in nanoseconds: clock_gettime(
                                       CLOCK_MONOTONIC) on POSIX, else C11 timespec_get;
                                       required under CTORCH_NO_STDIO; called under the
                                       profiler's lock from every recording thread
     clock_user      NULL              passed to clock_ns
   Mirrors: torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes,
   profile_memory, with_flops). */
typedef struct ct_profiler_opts {
    bool record_shapes;
    bool profile_memory;
    bool with_flops;
    uint64_t (*clock_ns)(void *clock_user);
    void *clock_user;
} ct_profiler_opts;

/* PyTorch's defaults: nothing but the times recorded, the monotonic clock. */
CTORCH_API ct_profiler_opts ct_profiler_defaults(void);

/* Starts profiling every thread (opts copied; NULL: the defaults). Frees the previous
   profile's results.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_STATE while the profiler runs; CT_ERR_UNSUPPORTED when clock_ns is NULL
   and the build has no default clock (CTORCH_NO_STDIO).
   Mirrors: torch.profiler.profile.__enter__ (start). */
CTORCH_API ct_status ct_profiler_begin(const ct_profiler_opts *opts);
/* Stops profiling. Events still open (ranges not ended, ops running on other threads)
   are closed at this time; ops that finish later are not recorded.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_STATE when the profiler does not run; CT_ERR_OOM when events were dropped
   because their storage could not be allocated (the profile keeps the others).
   Mirrors: torch.profiler.profile.__exit__ (stop). */
CTORCH_API ct_status ct_profiler_end(void);
/* Frees the recorded profile (the key averages' strings with it); nothing recorded is a
   no-op. Returns: CT_OK. Errors: CT_ERR_STATE while the profiler runs. */
CTORCH_API ct_status ct_profiler_reset(void);

/* Opens a user range named name (copied; at most 1023 bytes kept) on this thread: the ops
   and ranges that follow on this thread nest in it until ct_record_function_end. Does
   nothing (CT_OK) while the profiler is off, as PyTorch.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_STATE beyond 256 open ranges and ops on one thread;
   CT_ERR_OOM. After CT_ERR_STATE or CT_ERR_OOM the range is not recorded but still takes
   its ct_record_function_end (which then closes nothing).
   Mirrors: torch.profiler.record_function(name).__enter__. */
CTORCH_API ct_status ct_record_function_begin(const char *name);
/* Closes this thread's innermost range opened by ct_record_function_begin. Does nothing
   (CT_OK) while the profiler is off, as ct_record_function_begin.
   Returns: CT_OK or the error code.
   Errors: CT_ERR_STATE while the profiler runs and this thread's innermost open event is
   not a range of ct_record_function_begin (none is open, or an op is running).
   Mirrors: torch.profiler.record_function.__exit__. */
CTORCH_API ct_status ct_record_function_end(void);

/* One row of the key averages: the events of one name (and, under record_shapes, one
   list of input shapes), summed. Strings live until the next ct_profiler_begin or
   ct_profiler_reset. Mirrors: torch.autograd.profiler_util.FunctionEventAvg. */
typedef struct ct_profiler_event_avg {
    const char *key;               /* the op or range name: "aten::add", "Optimizer.step#..." */
    const char *input_shapes;      /* "[[64, 784], [512, 784], [512]]" (one entry per tensor
                                      input, then a [] per scalar argument); "[]" for ranges
                                      and without record_shapes */
    int64_t count;                 /* # of Calls */
    double cpu_time_total_us;      /* sum of the durations */
    double self_cpu_time_total_us; /* sum of the self times */
    int64_t cpu_memory_usage;      /* bytes; profile_memory, else 0 */
    int64_t self_cpu_memory_usage; /* bytes; profile_memory, else 0 */
    double flops;                  /* with_flops, else 0 */
} ct_profiler_event_avg;

/* The recorded profile's key averages, in the order each key first started, into rows
   (the first cap of them).
   Returns: the number of rows of the profile (so (NULL, 0) counts them).
   Errors: CT_ERR_STATE while the profiler runs or when no profile was recorded; CT_ERR_VALUE
   for cap < 0; CT_ERR_NULL_ARG for NULL rows with cap > 0 (each returns 0).
   Mirrors: torch.profiler.profile.key_averages(group_by_input_shape=record_shapes). */
CTORCH_API int64_t ct_profiler_key_averages(ct_profiler_event_avg *rows, int64_t cap);

/* Writes the key averages as PyTorch's table into buf (at most n bytes, NUL-terminated):
   dashed lines, the columns Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
   avg, then CPU Mem and Self CPU Mem (profile_memory), # of Calls, Input Shapes
   (record_shapes) and Total <unit>FLOPs (with_flops, scaled by the smallest count), right
   aligned; then "Self CPU time total: ...". Times print as PyTorch's ("12.345us", "1.234ms",
   "1.234s"), percentages of the self CPU time total.
   sort_by: "self_cpu_time_total", "cpu_time_total", "count", "self_cpu_memory_usage",
   "cpu_memory_usage" or "flops", largest first (ties keep the order of first start);
   NULL: that order. row_limit: the rows printed (< 0: all).
   Returns: the length of the table (excluding the NUL), so (NULL, 0) sizes it; 0 on error.
   Errors: CT_ERR_STATE while the profiler runs or when no profile was recorded;
   CT_ERR_VALUE for another sort_by; CT_ERR_OOM.
   Mirrors: prof.key_averages().table(sort_by=..., row_limit=...). */
CTORCH_API size_t ct_profiler_table(char *buf, size_t n, const char *sort_by, int row_limit);
/* Writes the recorded profile in the Trace Event format that chrome://tracing and Perfetto
   open into buf (at most n bytes, NUL-terminated): {"traceEvents": [...]} with a
   "thread_name" metadata event per thread (tid 1 is the thread that began the profile,
   then in order of first event) and one complete event ("ph": "X") per event, "cat" as
   PyTorch's: "cpu_op" for ops and the autograd engine's ranges, "user_annotation" for
   user, optimizer and DataLoader ranges; "ts" and "dur" in microseconds from the begin,
   "args" with "Input Dims" (record_shapes) and "flops" (with_flops).
   Returns: the length (excluding the NUL); 0 on error.
   Errors: as ct_profiler_table (no sort_by). Mirrors: prof.export_chrome_trace. */
CTORCH_API size_t ct_profiler_chrome_trace(char *buf, size_t n);
#ifndef CTORCH_NO_STDIO
/* Prints ct_profiler_table's text to f.
   Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG, then as ct_profiler_table.
   Mirrors: print(prof.key_averages().table(sort_by=..., row_limit=...)). */
CTORCH_API ct_status ct_profiler_print_table(FILE *f, const char *sort_by, int row_limit);
/* Writes ct_profiler_chrome_trace's text to the file at path (replaced).
   Returns: CT_OK or the error code.
   Errors: CT_ERR_NULL_ARG; CT_ERR_IO when the file cannot be written; then as
   ct_profiler_chrome_trace. Mirrors: torch.profiler.profile.export_chrome_trace(path). */
CTORCH_API ct_status ct_profiler_export_chrome_trace(const char *path);
#endif

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

/* Kernel parts open with CT__VECTORIZE_BEGIN and close with CT__VECTORIZE_END: gcc's -O2
   cost model leaves loops with a remainder scalar; this region vectorizes them anyway. */
#if defined(__GNUC__) && !defined(__clang__)
#define CT__VECTORIZE_BEGIN                                                                        \
    _Pragma("GCC push_options")                                                                    \
        _Pragma("GCC optimize(\"tree-vectorize\", \"vect-cost-model=cheap\")")
#define CT__VECTORIZE_END _Pragma("GCC pop_options")
#else
#define CT__VECTORIZE_BEGIN
#define CT__VECTORIZE_END
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
/* The context ct_set_alloc_context set, for direct calls of the allocator hooks. */
CT__INTERNAL void *ct__alloc_context(void);

/* Records the first error of this thread; returns `code`. */
CT__INTERNAL ct_status ct__fail(ct_status code, const char *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

CT__INTERNAL bool ct__dtype_valid(ct_dtype d);
CT__INTERNAL ct_dtype ct__dtype_resolve(ct_dtype d);
CT__INTERNAL int ct__dtype_category(ct_dtype d);
/* PyTorch's scalar type name used in messages: "Float", "Long", "Bool" ... */
CT__INTERNAL const char *ct__dtype_title(ct_dtype d);

/* ---- CTORCH_DEBUG: the registry of tensor handles (core/debug.c) ---------------------- */
#ifdef CTORCH_DEBUG
/* Records t as a live tensor made by op (NULL: the op last seen by ct__null); on a live
   tensor, renames its creating op (a public op built on another). */
CT__INTERNAL void ct__debug_track(const ct_tensor *t, const char *op);
/* Marks t freed: its handle stays recognizable while its block is in quarantine. */
CT__INTERNAL void ct__debug_untrack(const ct_tensor *t);
/* Forgets a block leaving the allocator's quarantine (it may be reused). */
CT__INTERNAL void ct__debug_forget(const void *p);
/* Whether the caller (or an open scope) holds the reference ct_free drops. */
CT__INTERNAL void ct__debug_set_owned(const ct_tensor *t, bool owned);
/* Remembers op as the public function running on this thread (names views it creates). */
CT__INTERNAL void ct__debug_enter(const char *op);
/* False + CT_ERR_STATE when p is a freed tensor or, if is_tensor, not a live tensor. */
CT__INTERNAL bool ct__debug_check(const char *op, const void *p, bool is_tensor);
/* False + CT_ERR_STATE when ct_free(t) is a double free or t is not the caller's to free. */
CT__INTERNAL bool ct__debug_check_free(const char *op, const ct_tensor *t);
#else
static inline void ct__debug_track(const ct_tensor *t, const char *op)
{
    (void)t;
    (void)op;
}
static inline void ct__debug_untrack(const ct_tensor *t) { (void)t; }
static inline void ct__debug_set_owned(const ct_tensor *t, bool owned)
{
    (void)t;
    (void)owned;
}
static inline void ct__debug_enter(const char *op) { (void)op; }
static inline bool ct__debug_check(const char *op, const void *p, bool is_tensor)
{
    (void)op;
    (void)p;
    (void)is_tensor;
    return true;
}
static inline bool ct__debug_check_free(const char *op, const ct_tensor *t)
{
    (void)op;
    (void)t;
    return true;
}
#endif

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
    ct__hook *hooks;       /* leaves: run before accumulation */
    int view_of;           /* CT__VIEW_OF_*: what in-place ops on this view would bypass */
    uint32_t view_version; /* the storage version when the view's history was recorded */
};
enum { CT__VIEW_OF_NONE = 0, CT__VIEW_OF_LEAF = 1, CT__VIEW_OF_GRAPH = 2 };

/* A new tensor struct over `storage` (retained), not registered in any scope. */
CT__INTERNAL ct_tensor *ct__tensor_over(ct_storage *storage, ct_dtype dtype, const int64_t *sizes,
                                        const int64_t *strides, int ndim, int64_t offset);
/* A new contiguous tensor with fresh storage, not registered in any scope; NULL + error
   on bad shape or out of memory. */
CT__INTERNAL ct_tensor *ct__tensor_new(const char *op, const int64_t *sizes, int ndim,
                                       ct_dtype dtype);
/* ct__tensor_new on device (through its backend's allocator for a device other than the
   CPU); CT_ERR_DEVICE when no backend is registered for it. */
CT__INTERNAL ct_tensor *ct__tensor_new_on(const char *op, const int64_t *sizes, int ndim,
                                          ct_dtype dtype, ct_device device);
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
/* Fills the contiguous CPU tensor t with value (converted as ct__store_f64). */
CT__INTERNAL void ct__fill_contig(ct_tensor *t, double value);
/* Writes "[2, 3]" into buf. */
CT__INTERNAL const char *ct__shape_str(const int64_t *sizes, int ndim, char *buf, size_t n);
/* Fails with CT_ERR_NULL_ARG unless an error is already pending (NULL propagation); true
   when p is NULL (or, under CTORCH_DEBUG, a freed tensor). */
CT__INTERNAL bool ct__null_any(const char *op, const void *p);
/* ct__null_any for a tensor argument: also true when t is not a live tensor (CTORCH_DEBUG). */
CT__INTERNAL bool ct__null_tensor(const char *op, const ct_tensor *t);
/* ct__null(op, p): ct__null_tensor for a tensor pointer, ct__null_any for any other, so the
   NULL check every public entry makes is also its handle check (DESIGN §5, step 1). A
   function in C++ (overloads), a type-generic macro in C. */
#ifdef __cplusplus
static inline bool ct__null_typed(const char *op, const ct_tensor *t)
{
    return ct__null_tensor(op, t);
}
static inline bool ct__null_typed(const char *op, const void *p) { return ct__null_any(op, p); }
template <class T> static inline bool ct__null(const char *op, T *p)
{
    return ct__null_typed(op, p);
}
static inline bool ct__null(const char *op, const void *p) { return ct__null_any(op, p); }
#else
#define ct__null(op, p)                                                                            \
    _Generic((p), const ct_tensor *: ct__null_tensor, ct_tensor *: ct__null_tensor,                \
             default: ct__null_any)((op), (p))
#endif
/* Writes "cpu", "cuda:0" or "privateuseone:1" into buf. */
CT__INTERNAL const char *ct__device_str(ct_device d, char *buf, size_t n);
/* Checks the tensor is on the CPU (for CPU-only ops). */
CT__INTERNAL bool ct__check_cpu(const char *op, const ct_tensor *t);
/* Bumps the version counter after an in-place write. */
static inline void ct__bump_version(ct_tensor *t)
{
    t->storage->version++;
}

/* ---- scalar conversion -------------------------------------------------------------- */
/* Floating point to integer, defined for every input (C leaves NaN, infinities and values
   out of range undefined): what PyTorch gives on x86-64, whose cvtt instructions truncate
   toward zero and return the "integer indefinite" INT32_MIN / INT64_MIN for NaN, +-inf and
   values outside [-2^31, 2^31) / [-2^63, 2^63). Narrower integers take the low bits of the
   int32 result (uint8 from float64: of the int64 result), as PyTorch's casts do. The
   select happens on the float (-2^31 itself also takes the INT32_MIN branch), so the
   conversion never sees an out-of-range value and the loops using these stay vectorizable. */
static inline int32_t ct__f64_to_i32(double v)
{
    return (int32_t)(fabs(v) < 2147483648.0 ? v : -2147483648.0);
}
static inline int64_t ct__f64_to_i64(double v)
{
    return (int64_t)(fabs(v) < 9223372036854775808.0 ? v : -9223372036854775808.0);
}
static inline int32_t ct__f32_to_i32(float v)
{
    return (int32_t)(fabsf(v) < 2147483648.0f ? v : -2147483648.0f);
}
static inline int64_t ct__f32_to_i64(float v)
{
    return (int64_t)(fabsf(v) < 9223372036854775808.0f ? v : -9223372036854775808.0f);
}
CT__INTERNAL double ct__load_f64(const void *p, ct_dtype d);
/* Stores v converted to d as ct_to_dtype converts float64 (defined for every v). */
CT__INTERNAL void ct__store_f64(void *p, ct_dtype d, double v);
CT__INTERNAL int64_t ct__load_i64(const void *p, ct_dtype d);
/* Whether v converts to d without overflow (PyTorch's checked scalar conversion): any value
   for bool and float64; NaN, infinities and finite values up to FLT_MAX in magnitude for
   float32; integers take [lowest, max + 1) and never NaN or infinities. */
CT__INTERNAL bool ct__scalar_fits(double v, ct_dtype d);
/* ct__scalar_fits or fails with CT_ERR_VALUE naming op, in PyTorch's words: "value cannot
   be converted to type int without overflow". */
CT__INTERNAL bool ct__check_scalar(const char *op, double v, ct_dtype d);
/* Fails with CT_ERR_VALUE naming op unless 0 <= value < count: "17 is not a valid value
   for reduction" (what = "reduction"); the check of every enum argument. */
CT__INTERNAL bool ct__check_enum(const char *op, const char *what, int value, int count);
/* A valid dtype argument (CT_DTYPE_DEFAULT included) or CT_ERR_VALUE naming op. */
CT__INTERNAL bool ct__check_dtype_arg(const char *op, ct_dtype d);

/* ---- parallel ----------------------------------------------------------------------- */
/* Intra-op threads an op started here may use: ct_get_num_threads(), at most
   CT__PAR_MAX_THREADS, and 1 inside an intra-op task (or an inter-op task). */
CT__INTERNAL int ct__parallel_threads(void);
#define CT__PAR_MAX_THREADS 256
/* Runs fn(task, slot, ctx) once for each task in [0, ntasks) (< 2^31) on up to nthreads
   threads of the intra-op pool, the caller included, handing tasks out one at a time
   (whichever thread is free takes the next); returns when all have finished. slot, in
   [0, nthreads), tells which thread runs the task (for per-thread scratch); the caller is
   slot 0. Serial (slot 0, tasks in order) for nthreads 1, inside a task, or while another
   thread's job holds the pool. Tasks run with the flush mode set and must not fail. */
CT__INTERNAL void ct__parallel_tasks(int64_t ntasks, int nthreads,
                                     void (*fn)(int64_t task, int slot, void *ctx), void *ctx);
/* Runs fn over [0, n): in one call when n is below two grains, else in contiguous chunks
   of at least `grain` (at most 64 chunks) through ct__parallel_tasks. The chunks depend
   on n and grain only, never on the thread count, so a kernel whose result depends on
   where a range starts or ends still gives the same bits for any thread count. */
CT__INTERNAL void ct__parallel_for(int64_t n, int64_t grain,
                                   void (*fn)(int64_t begin, int64_t end, void *ctx), void *ctx);
#define CT__GRAIN 32768

/* ---- GEMM (ops/gemm.c) -------------------------------------------------------------- */
/* C = alpha * (A @ B) + beta * C with A (M, K), B (K, N), C (M, N), each given by a
   pointer and row/column strides in elements; beta == 0 does not read C. */
CT__INTERNAL void ct__gemm_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                               int64_t rsa, int64_t csa, const float *B, int64_t rsb, int64_t csb,
                               float beta, float *C, int64_t rsc, int64_t csc);
CT__INTERNAL void ct__gemm_f64(int64_t M, int64_t N, int64_t K, double alpha, const double *A,
                               int64_t rsa, int64_t csa, const double *B, int64_t rsb, int64_t csb,
                               double beta, double *C, int64_t rsc, int64_t csc);

/* ---- softmax rows (ops/softmax.c), shared with cross-entropy (nn/loss.c) ------------- */
/* One contiguous row x[0..R): CT__SOFTMAX_EXP writes its softmax into y, CT__SOFTMAX_LOG its
   log_softmax, CT__SOFTMAX_LSE nothing (y unused). Returns lse = max + log(sum(exp(x - max)))
   (0 for CT__SOFTMAX_EXP).
   ct__exp_row_S: y = scale * exp(x - shift). prefetch: the next row (x + R, y + R) is
   computed next, load it meanwhile. scalar: take the portable path, the reference the float32
   AVX-512 path equals bit for bit (tests); float64 has only that path. */
typedef enum { CT__SOFTMAX_EXP, CT__SOFTMAX_LOG, CT__SOFTMAX_LSE } ct__softmax_mode;
CT__INTERNAL float ct__softmax_row_f32(const float *x, float *y, int64_t R, ct__softmax_mode mode,
                                       bool prefetch, bool scalar);
CT__INTERNAL double ct__softmax_row_f64(const double *x, double *y, int64_t R,
                                        ct__softmax_mode mode, bool prefetch, bool scalar);
CT__INTERNAL void ct__exp_row_f32(const float *x, float *y, int64_t R, float shift, float scale,
                                  bool prefetch, bool scalar);
CT__INTERNAL void ct__exp_row_f64(const double *x, double *y, int64_t R, double shift,
                                  double scale, bool prefetch, bool scalar);

/* ---- strided iteration (ops/iter.c) ------------------------------------------------- */
/* X(dtype enum, C type, suffix) for every dtype. */
#define CT__FOR_ALL_DTYPES(X) X(CT_BOOL, bool, b8) CT__FOR_NUMERIC_DTYPES(X)
#define CT__FOR_NUMERIC_DTYPES(X)                                                                  \
    X(CT_UINT8, uint8_t, u8)                                                                       \
    X(CT_INT8, int8_t, i8)                                                                         \
    X(CT_INT16, int16_t, i16)                                                                      \
    X(CT_INT32, int32_t, i32)                                                                      \
    X(CT_INT64, int64_t, i64)                                                                      \
    CT__FOR_FLOAT_DTYPES(X)
#define CT__FOR_FLOAT_DTYPES(X)                                                                    \
    X(CT_FLOAT32, float, f32)                                                                      \
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
CT__INTERNAL void ct__iter_build(ct__iter *it, ct_tensor *out, const ct_tensor *const *inputs,
                                 int n_inputs);
/* Runs loop over every element, in parallel chunks when large. */
CT__INTERNAL void ct__iter_run(const ct__iter *it, ct__loop_fn loop, const void *params);
/* Broadcasts shapes a and b into out (PyTorch's rule); false + CT_ERR_SHAPE error naming
   op otherwise. */
CT__INTERNAL bool ct__broadcast_shapes(const char *op, const int64_t *a, int na, const int64_t *b,
                                       int nb, int64_t *out, int *nout);
/* Copies src into dst elementwise with dtype conversion (same shape or broadcastable). */
CT__INTERNAL void ct__copy_kernel(ct_tensor *dst, const ct_tensor *src);

/* ---- fused ops shared between parts ------------------------------------------------ */
/* g * (y > 0): ReLU's backward (differentiable in g and y). New scoped tensor. */
CT__INTERNAL ct_tensor *ct__threshold_backward(const ct_tensor *g, const ct_tensor *y);
/* max(t, 0) in place, no autograd, no version bump (for a fresh numeric tensor). */
CT__INTERNAL void ct__relu_inplace_kernel(ct_tensor *t);
/* relu(x @ w^T + b) in one pass over the output (2-D x), as ct_relu(ct_linear(...)). */
CT__INTERNAL ct_tensor *ct__linear_relu(const ct_tensor *x, const ct_tensor *w,
                                        const ct_tensor *bias);

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
    bool saved_output[CT__NODE_SAVED]; /* saved without history to avoid a cycle */
    double f[4];                       /* op scalars (alpha, exponent, bounds ...) */
    int64_t i[2 * CT_MAX_DIMS + 4];    /* op integers (dims, sizes ...) */
    void *ctx;                         /* op data owned by the node, freed with ctx_free */
    void (*ctx_free)(void *ctx);
    bool released; /* saved tensors freed after a backward without retain_graph */
    ct__hook *pre_hooks;
    ct_tensor *retain_target; /* weak: the non-leaf output whose .grad is retained */
    /* engine scratch */
    uint64_t epoch;
    int deps;
    ct_tensor *buffer;
};

/* The gradient passes unchanged (the engine sums it to the input's shape and casts it to
   its dtype): the derivative of clone, expand, dtype conversions. */
CT__INTERNAL void ct__identity_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi);
/* True when grad mode is on and any of the n inputs requires grad. */
CT__INTERNAL bool ct__any_requires_grad(const ct_tensor *const *inputs, int n);
/* A node for an op over n inputs, or NULL (no error) when no input requires grad or grad
   mode is off. The caller saves what the backward needs and calls ct__set_history. */
CT__INTERNAL ct_node *ct__node_new(const char *name, ct__backward_fn fn,
                                   const ct_tensor *const *inputs, int n);
/* Saves an input for backward with its version: a leaf itself, else an alias sharing storage
   and history (so a backward recorded with create_graph differentiates through it). */
CT__INTERNAL void ct__save(ct_node *n, const ct_tensor *t);
/* Saves the op's own output (an alias without history, which would be a cycle); under
   create_graph ct__saved hands out an alias whose grad_fn is n. */
CT__INTERNAL void ct__save_output(ct_node *n, const ct_tensor *out);
/* The k-th saved tensor, or NULL + CT_ERR_AUTOGRAD when it was modified in place since it
   was saved or the graph was already freed. */
CT__INTERNAL const ct_tensor *ct__saved(ct_node *n, int k);
/* Makes n the grad_fn of out (takes over the caller's reference to n; NULL n: no history).
   Returns out, or NULL (out released) when ct__node_new failed with an error for this op. */
CT__INTERNAL ct_tensor *ct__set_history(ct_tensor *out, ct_node *n);
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

/* ---- dispatch (core/dispatch.c) ------------------------------------------------------ */
/* Starts a call of op from public function fn over n tensor inputs (kept by pointer: they
   must outlive the call); attributes are appended with ct__call_f/_i/_ints. */
static inline void ct__call_init(ct_op_call *c, const ct_op *op, const char *fn,
                                 const ct_tensor *const *inputs, int n_inputs)
{
    c->op = op;
    c->fn = fn;
    c->inputs = inputs;
    c->n_inputs = n_inputs;
    c->n_attrs = 0;
    c->generator = NULL;
    c->device.type = CT_CPU;
    c->device.index = 0;
    c->dtype = CT_DTYPE_DEFAULT;
    c->n_outputs = 0;
    c->state = NULL;
}
static inline void ct__call_f(ct_op_call *c, double f)
{
    ct_attr *a = &c->attrs[c->n_attrs++];
    a->f = f;
    a->i = 0;
    a->ints = NULL;
}
static inline void ct__call_i(ct_op_call *c, int64_t i)
{
    ct_attr *a = &c->attrs[c->n_attrs++];
    a->f = (double)i;
    a->i = i;
    a->ints = NULL;
}
static inline void ct__call_ints(ct_op_call *c, const int64_t *ints, int n)
{
    ct_attr *a = &c->attrs[c->n_attrs++];
    a->f = 0;
    a->i = n;
    a->ints = ints;
}
/* The entry (DESIGN section 5): checks, hooks, profiler, meta, kernel, autograd. Returns
   output 0, scoped (the others are scoped too and stay in c->outputs); an in-place op's
   output is its first input. NULL after an error. */
CT__INTERNAL ct_tensor *ct__dispatch(ct_op_call *c);
/* Meta's output allocator: a new tensor of sizes and dtype on the call's device, appended
   to c->outputs; NULL + error when it cannot be made. */
CT__INTERNAL ct_tensor *ct__op_output(ct_op_call *c, const int64_t *sizes, int ndim,
                                      ct_dtype dtype);
/* The end of a composite implementation, which runs public ops inside a scope of its own
   (ct_scope_begin): r (scoped there, or NULL after an error) becomes an unscoped reference in
   c->outputs, and the scope closes. Returns CT_OK or the pending error's status. */
CT__INTERNAL ct_status ct__composite_end(ct_op_call *c, ct_tensor *r);
/* Adds delta to the count of reasons for the entry's slow path (hooks, the profiler). */
CT__INTERNAL void ct__dispatch_slow_add(int delta);
/* The registered backend of a device type other than the CPU, or NULL. */
CT__INTERNAL const ct_backend *ct__backend(ct_device_type type);
/* The dispatch key of a device type for messages: "CPU", "CUDA", a backend's name. */
CT__INTERNAL const char *ct__device_key(ct_device_type type);
/* Positional kernel tables (C++ has no array designators): the same kernel for a dtype set. */
#define CT__K_FLOAT(K) {NULL, NULL, NULL, NULL, NULL, NULL, NULL, K, K}
#define CT__K_NUMERIC(K) {NULL, NULL, K, K, K, K, K, K, K}
#define CT__K_ALL(K) {NULL, K, K, K, K, K, K, K, K}
#define CT__K_BOOL(K) {NULL, K, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
#define CT__K_NONE {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}

/* ---- profiler (bench/profiler.c), called by the dispatcher and the engine --------------- */
/* Opens the event of an op call when the profiler runs (returns its handle, else -1). */
CT__INTERNAL int64_t ct__profiler_op_begin(const ct_op_call *c);
/* Closes the event ct__profiler_op_begin opened (nothing for -1). */
CT__INTERNAL void ct__profiler_op_end(int64_t event, const ct_op_call *c);
/* Opens a range named by printf-style fmt on this thread while the profiler runs (else
   nothing; the text is formatted only then): "Optimizer.step#%s.step". function: what
   PyTorch records with C++'s RECORD_FUNCTION (trace category "cpu_op"), else with Python's
   record_function ("user_annotation"). */
CT__INTERNAL void ct__profiler_range_begin(bool function, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Closes this thread's innermost range (nothing while the profiler is off). */
CT__INTERNAL void ct__profiler_range_end(void);

/* ---- the default clock (bench/timer.c, bench/profiler.c) -------------------------------- */
#ifndef CTORCH_NO_STDIO
#include <time.h>
#if defined(CLOCK_MONOTONIC)
#define CT__CLOCK 1
#elif defined(__linux__) && !defined(__cplusplus)
/* Strict ISO C (-std=c11) hides clock_gettime in glibc and musl; the symbol is always there
   and clockid_t is int on Linux, where CLOCK_MONOTONIC is 1. */
extern int clock_gettime(int clock_id, struct timespec *tp);
#define CT__CLOCK 2
#elif defined(TIME_UTC)
#define CT__CLOCK 3
#endif
#endif
#ifdef CT__CLOCK
/* Monotonic nanoseconds (wall-clock with C11 timespec_get only); user is ignored (the
   signature of the clock_ns options). */
static inline uint64_t ct__clock_ns(void *user)
{
    (void)user;
    struct timespec ts;
#if CT__CLOCK == 1
    clock_gettime(CLOCK_MONOTONIC, &ts);
#elif CT__CLOCK == 2
    clock_gettime(1, &ts);
#else
    timespec_get(&ts, TIME_UTC);
#endif
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

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

/* With no handler installed, each recorded first error goes to stderr, as an uncaught
   exception would (nothing under CTORCH_NO_STDIO). */
static void ct__error_print_default(const char *message)
{
#ifdef CTORCH_NO_STDIO
    (void)message;
#else
    fprintf(stderr, "ctorch error: %s\n", message);
#endif
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
    } else {
        ct__error_print_default(ct__error_msg_tl);
    }
    return code;
}

// >>part core/alloc.c
/* core/alloc.c - aligned, size-class cached allocation through the user's hooks.
 *
 * Block layout: [header (64 bytes): raw pointer, class, requested size][payload...]; the
 * payload is 64-byte aligned. Size classes are 4 per power of two (at most 25% waste), from
 * 16 bytes; blocks above 1.25 GiB are never cached. The cache is bounded by CT__CACHE_LIMIT bytes.
 *
 * Under CTORCH_DEBUG nothing is cached: a freed block is poisoned (every bit set: NaN in
 * float32 and float64, -1 in integers) and waits in a FIFO quarantine of at most
 * CT__QUARANTINE_LIMIT bytes before going back to CTORCH_FREE, so stale pointers read
 * poison and freed tensor handles stay recognizable (core/debug.c) until then.
 */


/* Under AddressSanitizer freed blocks go straight back, so use-after-free is reported. */
#if defined(__SANITIZE_ADDRESS__)
#define CT__NO_CACHE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT__NO_CACHE 1
#endif
#endif

#ifdef CTORCH_DEBUG
#define CT__NO_CACHE 1
#define CT__QUARANTINE_LIMIT ((size_t)256 << 20)
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
#ifdef CTORCH_DEBUG
    ct__block *quarantine_head, *quarantine_tail; /* oldest first */
    size_t quarantined;
#endif
    ct__mutex lock;
} ct__alloc_state;

void ct_set_alloc_context(void *ctx) { ct__alloc_state.ctx = ctx; }

void *ct__alloc_context(void) { return ct__alloc_state.ctx; }

/* floor(log2(x)) for x >= 1. */
static int ct__alloc_log2(size_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll((unsigned long long)x);
#else
    int p = 0;
    while (x >>= 1) {
        p++;
    }
    return p;
#endif
}

/* Class k covers sizes up to (4 + k%4) << (k/4 + 2) bytes: 16, 20, 24, 28, 32, 40, ...,
   the last one 1.25 GiB; larger requests are not cached (-1, capacity = bytes). For bytes
   in (2^p, 2^(p+1)] the class is 4 (p - 4) + ceil(bytes / 2^(p-2)) - 4. */
static int ct__alloc_class(size_t bytes, size_t *cap)
{
    if (bytes <= 16) {
        *cap = 16;
        return 0;
    }
    if (bytes > ((size_t)5 << 28)) {
        *cap = bytes;
        return -1;
    }
    int p = ct__alloc_log2(bytes - 1);
    size_t q = (size_t)1 << (p - 2);
    int k = 4 * (p - 4) + (int)((bytes + q - 1) / q) - 4;
    *cap = (size_t)(4 + k % 4) << (k / 4 + 2);
    return k;
}

static ct__block *ct__alloc_header(void *payload)
{
    return (ct__block *)((char *)payload - CT__ALIGN);
}

/* Counts b as allocated (the lock held). */
static void ct__alloc_count(const ct__block *b)
{
    ct__alloc_state.allocated += b->bytes;
    if (ct__alloc_state.allocated > ct__alloc_state.peak) {
        ct__alloc_state.peak = ct__alloc_state.allocated;
    }
}

void *ct__malloc(size_t bytes)
{
    size_t cap = 0;
    int cls = ct__alloc_class(bytes ? bytes : 1, &cap);
    ct__block *b = NULL;
    ct__mutex_lock(&ct__alloc_state.lock);
    if (cls >= 0 && ct__alloc_state.free_list[cls]) { /* a cached block: one lock */
        b = ct__alloc_state.free_list[cls];
        ct__alloc_state.free_list[cls] = b->next;
        ct__alloc_state.cached -= b->bytes;
        ct__alloc_count(b);
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
    if (b) {
        b->next = NULL;
        return (char *)b + CT__ALIGN;
    }
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
    b->next = NULL;
    ct__mutex_lock(&ct__alloc_state.lock);
    ct__alloc_count(b);
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

#ifdef CTORCH_DEBUG
/* Poisons b and appends it to the quarantine; blocks pushed past the limit go back to
   CTORCH_FREE, oldest first, and the debug registry forgets them. */
static void ct__alloc_release(ct__block *b)
{
    memset((char *)b + CT__ALIGN, 0xFF, b->bytes);
    ct__mutex_lock(&ct__alloc_state.lock);
    b->next = NULL;
    if (ct__alloc_state.quarantine_tail) {
        ct__alloc_state.quarantine_tail->next = b;
    } else {
        ct__alloc_state.quarantine_head = b;
    }
    ct__alloc_state.quarantine_tail = b;
    ct__alloc_state.quarantined += b->bytes;
    while (ct__alloc_state.quarantined > CT__QUARANTINE_LIMIT) {
        ct__block *old = ct__alloc_state.quarantine_head;
        ct__alloc_state.quarantine_head = old->next;
        if (!old->next) {
            ct__alloc_state.quarantine_tail = NULL;
        }
        ct__alloc_state.quarantined -= old->bytes;
        ct__debug_forget((char *)old + CT__ALIGN);
        CT__FREE_HOOK(ct__alloc_state.ctx, old->raw);
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
}
#else
static void ct__alloc_release(ct__block *b)
{
    CT__FREE_HOOK(ct__alloc_state.ctx, b->raw);
}
#endif

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
        ct__alloc_release(b);
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
#undef CT__QUARANTINE_LIMIT

// >>part core/debug.c
/* core/debug.c - CTORCH_DEBUG: the registry of tensor handles and the leak report.
 *
 * The registry is an open-addressing hash set (linear probing, backward-shift deletion)
 * keyed by the tensor struct's address: live tensors with the op that made them and
 * whether the caller owns them, and freed ones while their block sits in the allocator's
 * quarantine (core/alloc.c calls ct__debug_forget when a block leaves it). Its table comes
 * straight from the allocator hooks, so ct_memory_allocated() is the same in both builds.
 */


#ifdef CTORCH_DEBUG

enum { CT__DEBUG_EMPTY = 0, CT__DEBUG_LIVE = 1, CT__DEBUG_FREED = 2 };

typedef struct ct__debug_entry {
    const void *key;
    const char *op; /* the public function that made the tensor */
    int state;
    bool owned; /* the caller or an open scope holds the reference ct_free drops */
} ct__debug_entry;

static struct {
    ct__debug_entry *slots;
    size_t cap, used;
    bool broken; /* the table could not grow: checks are off */
    bool report_at_exit;
    ct__mutex lock;
} ct__debug_state;

static CT__THREAD_LOCAL const char *ct__debug_op_tl;

static size_t ct__debug_home(const void *p, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (cap - 1);
}

/* The entry of p, or NULL. Lock held. */
static ct__debug_entry *ct__debug_find(const void *p)
{
    size_t cap = ct__debug_state.cap;
    if (cap == 0) {
        return NULL;
    }
    for (size_t i = ct__debug_home(p, cap);; i = (i + 1) & (cap - 1)) {
        ct__debug_entry *e = &ct__debug_state.slots[i];
        if (e->state == CT__DEBUG_EMPTY) {
            return NULL;
        }
        if (e->key == p) {
            return e;
        }
    }
}

/* Places e in a table known to have room. */
static void ct__debug_place(ct__debug_entry *slots, size_t cap, const ct__debug_entry *e)
{
    size_t i = ct__debug_home(e->key, cap);
    while (slots[i].state != CT__DEBUG_EMPTY) {
        i = (i + 1) & (cap - 1);
    }
    slots[i] = *e;
}

/* Doubles the table (at most half full afterwards); false when out of memory. Lock held. */
static bool ct__debug_grow(void)
{
    size_t cap = ct__debug_state.cap ? ct__debug_state.cap * 2 : 4096;
    ct__debug_entry *slots =
        (ct__debug_entry *)CT__MALLOC_HOOK(ct__alloc_context(), cap * sizeof(ct__debug_entry));
    if (!slots) {
        return false;
    }
    memset(slots, 0, cap * sizeof(ct__debug_entry));
    for (size_t i = 0; i < ct__debug_state.cap; i++) {
        if (ct__debug_state.slots[i].state != CT__DEBUG_EMPTY) {
            ct__debug_place(slots, cap, &ct__debug_state.slots[i]);
        }
    }
    if (ct__debug_state.slots) {
        CT__FREE_HOOK(ct__alloc_context(), ct__debug_state.slots);
    }
    ct__debug_state.slots = slots;
    ct__debug_state.cap = cap;
    return true;
}

/* Removes e, shifting later entries of its probe run back into the hole. Lock held. */
static void ct__debug_remove(ct__debug_entry *e)
{
    size_t mask = ct__debug_state.cap - 1;
    ct__debug_entry *slots = ct__debug_state.slots;
    size_t hole = (size_t)(e - slots);
    slots[hole].state = CT__DEBUG_EMPTY;
    for (size_t j = (hole + 1) & mask; slots[j].state != CT__DEBUG_EMPTY; j = (j + 1) & mask) {
        size_t home = ct__debug_home(slots[j].key, ct__debug_state.cap);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            slots[hole] = slots[j];
            slots[j].state = CT__DEBUG_EMPTY;
            hole = j;
        }
    }
    ct__debug_state.used--;
}

#ifndef CTORCH_NO_STDIO
static void ct__debug_report_at_exit(void)
{
    ct_debug_report(stderr);
}
#endif

void ct__debug_enter(const char *op) { ct__debug_op_tl = op; }

void ct__debug_track(const ct_tensor *t, const char *op)
{
    ct__mutex_lock(&ct__debug_state.lock);
    ct__debug_entry *e = ct__debug_find(t);
    if (!e && !ct__debug_state.broken) {
        if (2 * (ct__debug_state.used + 1) > ct__debug_state.cap && !ct__debug_grow()) {
            ct__debug_state.broken = true;
        } else {
            ct__debug_entry fresh = {t, NULL, CT__DEBUG_LIVE, false};
            ct__debug_place(ct__debug_state.slots, ct__debug_state.cap, &fresh);
            ct__debug_state.used++;
            e = ct__debug_find(t);
        }
    }
    if (e) {
        e->owned = e->state == CT__DEBUG_LIVE && e->owned; /* renaming keeps the owner */
        e->state = CT__DEBUG_LIVE;
        e->op = op ? op : ct__debug_op_tl ? ct__debug_op_tl : "an internal op";
    }
#ifndef CTORCH_NO_STDIO
    bool first = !ct__debug_state.report_at_exit;
    ct__debug_state.report_at_exit = true;
#endif
    ct__mutex_unlock(&ct__debug_state.lock);
#ifndef CTORCH_NO_STDIO
    if (first) {
        atexit(ct__debug_report_at_exit);
    }
#endif
}

void ct__debug_untrack(const ct_tensor *t)
{
    ct__mutex_lock(&ct__debug_state.lock);
    ct__debug_entry *e = ct__debug_find(t);
    if (e) {
        e->state = CT__DEBUG_FREED;
        e->owned = false;
    }
    ct__mutex_unlock(&ct__debug_state.lock);
}

void ct__debug_forget(const void *p)
{
    ct__mutex_lock(&ct__debug_state.lock);
    ct__debug_entry *e = ct__debug_find(p);
    if (e) {
        ct__debug_remove(e);
    }
    ct__mutex_unlock(&ct__debug_state.lock);
}

void ct__debug_set_owned(const ct_tensor *t, bool owned)
{
    ct__mutex_lock(&ct__debug_state.lock);
    ct__debug_entry *e = ct__debug_find(t);
    if (e && e->state == CT__DEBUG_LIVE) {
        e->owned = owned;
    }
    ct__mutex_unlock(&ct__debug_state.lock);
}

/* p's state and creating op, under the lock; EMPTY when unknown (or checks are off). */
static int ct__debug_lookup(const void *p, const char **op, bool *owned)
{
    ct__mutex_lock(&ct__debug_state.lock);
    const ct__debug_entry *e = ct__debug_find(p);
    int state = e ? e->state : CT__DEBUG_EMPTY;
    *op = e ? e->op : NULL;
    *owned = e && e->owned;
    bool broken = ct__debug_state.broken;
    ct__mutex_unlock(&ct__debug_state.lock);
    return broken ? CT__DEBUG_LIVE : state;
}

bool ct__debug_check(const char *op, const void *p, bool is_tensor)
{
    const char *made_by = NULL;
    bool owned = false;
    int state = ct__debug_lookup(p, &made_by, &owned);
    if (state == CT__DEBUG_FREED) {
        ct__fail(CT_ERR_STATE, op,
                 "tensor argument was freed (created by %s): it was used after ct_free, after "
                 "the end of its scope, or after its owner dropped it (module or optimizer "
                 "free, zero_grad with set_to_none, ct_set_grad)",
                 made_by);
        return false;
    }
    if (state == CT__DEBUG_EMPTY && is_tensor) {
        ct__fail(CT_ERR_STATE, op,
                 "tensor argument %p is not a live tensor made by ctorch (a stray, "
                 "uninitialized or corrupted pointer)",
                 p);
        return false;
    }
    return true;
}

bool ct__debug_check_free(const char *op, const ct_tensor *t)
{
    const char *made_by = NULL;
    bool owned = false;
    int state = ct__debug_lookup(t, &made_by, &owned);
    if (state == CT__DEBUG_FREED) {
        ct__fail(CT_ERR_STATE, op, "double free: the tensor (created by %s) was already freed",
                 made_by);
        return false;
    }
    if (state == CT__DEBUG_LIVE && !owned && t->scope_depth < 0) {
        ct__fail(CT_ERR_STATE, op,
                 "the tensor (created by %s) is borrowed, not the caller's to free: it belongs "
                 "to a module, an optimizer, a .grad field, an autograd graph or a scope that "
                 "ended (drop references taken with ct_retain through ct_release)",
                 made_by);
        return false;
    }
    return ct__debug_check(op, t, true);
}

#ifndef CTORCH_NO_STDIO
#define CT__DEBUG_OPS 64
/* Prints how many live tensors each creating op made (the first 64 ops). Lock held. */
static int64_t ct__debug_print_live(FILE *f)
{
    const char *ops[CT__DEBUG_OPS];
    int64_t counts[CT__DEBUG_OPS], live = 0;
    int nops = 0;
    for (size_t i = 0; i < ct__debug_state.cap; i++) {
        const ct__debug_entry *e = &ct__debug_state.slots[i];
        if (e->state != CT__DEBUG_LIVE) {
            continue;
        }
        live++;
        int k = 0;
        while (k < nops && strcmp(ops[k], e->op) != 0) {
            k++;
        }
        if (k == nops && nops < CT__DEBUG_OPS) {
            ops[nops] = e->op;
            counts[nops++] = 0;
        }
        if (k < nops) {
            counts[k]++;
        }
    }
    if (live > 0) {
        fprintf(f, "ctorch debug: %lld tensor(s) never freed:\n", (long long)live);
    }
    for (int k = 0; k < nops; k++) {
        fprintf(f, "  %lld made by %s\n", (long long)counts[k], ops[k]);
    }
    return live;
}
#undef CT__DEBUG_OPS
#endif

#endif /* CTORCH_DEBUG */

#ifndef CTORCH_NO_STDIO
int64_t ct_debug_report(FILE *f)
{
    if (ct__null("ct_debug_report", f)) {
        return -1;
    }
#ifdef CTORCH_DEBUG
    ct__mutex_lock(&ct__debug_state.lock);
    int64_t live = ct__debug_print_live(f);
    ct__mutex_unlock(&ct__debug_state.lock);
    return live;
#else
    ct__fail(CT_ERR_UNSUPPORTED, "ct_debug_report", "build with -DCTORCH_DEBUG for the report");
    return -1;
#endif
}
#endif

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

ct_device ct_make_device(ct_device_type type, int index)
{
    ct_device d;
    d.type = type;
    d.index = type == CT_CPU || index < 0 ? 0 : index;
    return d;
}

const char *ct__device_str(ct_device d, char *buf, size_t n)
{
    static const char *const names[CT_DEVICE_TYPE_COUNT] = {"cpu", "cuda", "privateuseone"};
    const char *name = (int)d.type >= 0 && d.type < CT_DEVICE_TYPE_COUNT ? names[d.type] : "?";
    if (d.type == CT_CPU) {
        snprintf(buf, n, "%s", name);
    } else {
        snprintf(buf, n, "%s:%d", name, d.index);
    }
    return buf;
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
    if (!ct__check_dtype_arg("ct_promote_types", a) ||
        !ct__check_dtype_arg("ct_promote_types", b)) {
        return CT_DTYPE_DEFAULT;
    }
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
    if (!ct__check_dtype_arg("ct_can_cast", from) || !ct__check_dtype_arg("ct_can_cast", to)) {
        return false;
    }
    from = ct__dtype_resolve(from);
    to = ct__dtype_resolve(to);
    return ct__dtype_category(from) <= ct__dtype_category(to);
}

ct_status ct_set_default_dtype(ct_dtype d)
{
    if (!ct__check_dtype_arg("ct_set_default_dtype", d)) {
        return CT_ERR_VALUE;
    }
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

const char *ct__dtype_title(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "Undefined", "Bool", "Byte", "Char", "Short", "Int", "Long", "Float", "Double",
    };
    return ct__dtype_valid(d) ? names[d] : "Undefined";
}

bool ct__check_enum(const char *op, const char *what, int value, int count)
{
    if (value >= 0 && value < count) {
        return true;
    }
    ct__fail(CT_ERR_VALUE, op, "%d is not a valid value for %s", value, what);
    return false;
}

bool ct__check_dtype_arg(const char *op, ct_dtype d)
{
    return ct__check_enum(op, "dtype", (int)d, CT_DTYPE_COUNT);
}

bool ct__scalar_fits(double v, ct_dtype d)
{
    /* [lowest, max + 1) of each integer type; max + 1 is a power of two, exact in double */
    static const double lo[CT_DTYPE_COUNT] = {0, 0, 0, -128.0, -32768.0, -2147483648.0,
                                              -9223372036854775808.0, 0, 0};
    static const double hi[CT_DTYPE_COUNT] = {0, 0, 256.0, 128.0, 32768.0, 2147483648.0,
                                              9223372036854775808.0, 0, 0};
    d = ct__dtype_resolve(d);
    switch (d) {
    case CT_BOOL:
    case CT_FLOAT64: return true;
    case CT_FLOAT32: return !(fabs(v) > 3.4028234663852886e38) || isinf(v);
    case CT_UINT8:
    case CT_INT8:
    case CT_INT16:
    case CT_INT32:
    case CT_INT64: return v >= lo[d] && v < hi[d];
    default: return false;
    }
}

bool ct__check_scalar(const char *op, double v, ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "", "bool", "uint8_t", "int8_t", "int16_t", "int", "int64_t", "float", "double",
    };
    if (ct__scalar_fits(v, d)) {
        return true;
    }
    d = ct__dtype_resolve(d);
    ct__fail(CT_ERR_VALUE, op, "value cannot be converted to type %s without overflow",
             ct__dtype_valid(d) ? names[d] : "invalid");
    return false;
}

// >>part core/tensor.c
/* core/tensor.c - tensor and storage objects, attributes, creation. */


/* ---- storage ------------------------------------------------------------------------ */
/* nbytes of memory on device (its backend's, for a device other than the CPU). */
static ct_storage *ct__storage_new(size_t nbytes, ct_device device)
{
    ct_storage *s = (ct_storage *)ct__calloc(sizeof(ct_storage));
    if (!s) {
        return NULL;
    }
    const ct_backend *b = device.type == CT_CPU ? NULL : ct__backend(device.type);
    s->data = b ? b->malloc(b->user, device, nbytes ? nbytes : 1) : ct__malloc(nbytes ? nbytes : 1);
    if (!s->data) {
        ct__free(s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->refcount = 1;
    s->device = device;
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
    } else if (s->device.type != CT_CPU) {
        const ct_backend *b = ct__backend(s->device.type);
        b->free(b->user, s->device, s->data);
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
    ct__debug_track(t, NULL);
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
            ct__fail(CT_ERR_SHAPE, op,
                     "Trying to create tensor with negative dimension "
                     "%lld: %s",
                     (long long)sizes[i], ct__shape_str(sizes, ndim, buf, sizeof buf));
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
    return ct__tensor_new_on(op, sizes, ndim, dtype, ct_device_cpu());
}

ct_tensor *ct__tensor_new_on(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype,
                             ct_device device)
{
    if (!ct__check_dtype_arg(op, dtype)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    if (!ct__check_shape(op, sizes, ndim)) {
        return NULL;
    }
    int64_t strides[CT_MAX_DIMS];
    ct__contiguous_strides(sizes, ndim, strides);
    size_t nbytes = (size_t)ct__numel(sizes, ndim) * ct_dtype_size(dtype);
    if (device.type != CT_CPU && !ct__backend(device.type)) {
        char d[32];
        ct__fail(CT_ERR_DEVICE, op, "no backend is registered for device %s",
                 ct__device_str(device, d, sizeof d));
        return NULL;
    }
    ct_storage *s = ct__storage_new(nbytes, device);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "%sAllocator: not enough memory: you tried to allocate %zu "
                 "bytes", device.type == CT_CPU ? "DefaultCPU" : ct__device_key(device.type),
                 nbytes);
        return NULL;
    }
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    if (t) {
        ct__debug_track(t, op);
    }
    return t;
}

void ct__release(ct_tensor *t)
{
    if (!t || CT__ATOMIC_ADD(&t->refcount, -1) > 0) {
        return;
    }
    if (t->retains_grad && t->grad_fn && t->grad_fn->retain_target == t) {
        t->grad_fn->retain_target = NULL; /* the weak reference of ct_retain_grad */
    }
    ct__storage_release(t->storage);
    ct__release(t->grad);
    ct__node_release(t->grad_fn);
    for (ct__hook *h = t->hooks; h;) {
        ct__hook *next = h->next;
        ct__free(h);
        h = next;
    }
    ct__debug_untrack(t);
    ct__free(t);
}

void ct_release(ct_tensor *t)
{
    if (t && ct__debug_check("ct_release", t, true)) {
        ct__release(t);
    }
}

ct_tensor *ct_retain(ct_tensor *t)
{
    if (!t || !ct__debug_check("ct_retain", t, true)) {
        return NULL;
    }
    CT__ATOMIC_ADD(&t->refcount, 1);
    return t;
}

/* ---- attributes --------------------------------------------------------------------- */
bool ct__null_any(const char *op, const void *p)
{
    if (p) {
        ct__debug_enter(op);
        return !ct__debug_check(op, p, false);
    }
    if (!ct_error()) {
        ct__fail(CT_ERR_NULL_ARG, op, "argument is NULL");
    }
    return true;
}

bool ct__null_tensor(const char *op, const ct_tensor *t)
{
    return ct__null_any(op, t) || !ct__debug_check(op, t, true);
}

bool ct__check_cpu(const char *op, const ct_tensor *t)
{
    if (!ct__debug_check(op, t, true)) {
        return false;
    }
    if (t->storage->device.type == CT_CPU) {
        return true;
    }
    char d[32];
    ct__fail(CT_ERR_DEVICE, op, "expected a CPU tensor, got a tensor on device %s",
             ct__device_str(t->storage->device, d, sizeof d));
    return false;
}

int ct__wrap_dim(const char *op, int64_t dim, int ndim)
{
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        ct__fail(CT_ERR_INDEX, op,
                 "Dimension out of range (expected to be in range of "
                 "[%lld, %lld], but got %lld)",
                 (long long)-n, (long long)(n - 1), (long long)dim);
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

int ct_dim(const ct_tensor *t)
{
    return ct__null_tensor("ct_dim", t) ? -1 : t->ndim;
}

int64_t ct_size(const ct_tensor *t, int64_t dim)
{
    if (ct__null_tensor("ct_size", t)) {
        return -1;
    }
    int d = ct__wrap_dim("ct_size", dim, t->ndim);
    return (d < 0 || t->ndim == 0) ? -1 : t->sizes[d];
}

const int64_t *ct_sizes(const ct_tensor *t)
{
    return ct__null_tensor("ct_sizes", t) ? NULL : t->sizes;
}

int64_t ct_stride(const ct_tensor *t, int64_t dim)
{
    if (ct__null_tensor("ct_stride", t)) {
        return -1;
    }
    int d = ct__wrap_dim("ct_stride", dim, t->ndim);
    return (d < 0 || t->ndim == 0) ? -1 : t->strides[d];
}

const int64_t *ct_strides(const ct_tensor *t)
{
    return ct__null_tensor("ct_strides", t) ? NULL : t->strides;
}

int64_t ct_storage_offset(const ct_tensor *t)
{
    return ct__null_tensor("ct_storage_offset", t) ? 0 : t->offset;
}

int64_t ct_numel(const ct_tensor *t)
{
    return ct__null_tensor("ct_numel", t) ? 0 : ct__numel(t->sizes, t->ndim);
}

ct_dtype ct_tensor_dtype(const ct_tensor *t)
{
    return ct__null_tensor("ct_tensor_dtype", t) ? CT_DTYPE_DEFAULT : t->dtype;
}

ct_device ct_tensor_device(const ct_tensor *t)
{
    return ct__null_tensor("ct_tensor_device", t) ? ct_device_cpu() : t->storage->device;
}

size_t ct_element_size(const ct_tensor *t)
{
    return ct__null_tensor("ct_element_size", t) ? 0 : ct_dtype_size(t->dtype);
}

size_t ct_nbytes(const ct_tensor *t)
{
    return ct__null_tensor("ct_nbytes", t)
               ? 0
               : (size_t)ct__numel(t->sizes, t->ndim) * ct_dtype_size(t->dtype);
}

void *ct_data_ptr(const ct_tensor *t)
{
    return ct__null_tensor("ct_data_ptr", t) ? NULL : ct__data(t);
}

bool ct_is_contiguous(const ct_tensor *t)
{
    if (ct__null_tensor("ct_is_contiguous", t)) {
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

bool ct_is_floating_point(const ct_tensor *t)
{
    return !ct__null_tensor("ct_is_floating_point", t) && ct_dtype_is_floating_point(t->dtype);
}

bool ct_is_signed(const ct_tensor *t)
{
    return !ct__null_tensor("ct_is_signed", t) && ct_dtype_is_signed(t->dtype);
}

uint32_t ct_version(const ct_tensor *t)
{
    return ct__null_tensor("ct_version", t) ? 0 : t->storage->version;
}

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
    case CT_FLOAT32: return ct__f32_to_i64(*(const float *)p);
    case CT_FLOAT64: return ct__f64_to_i64(*(const double *)p);
    default: return (int64_t)ct__load_f64(p, d);
    }
}

void ct__store_f64(void *p, ct_dtype d, double v)
{
    switch (d) {
    case CT_BOOL: *(bool *)p = v != 0; break;
    case CT_UINT8: *(uint8_t *)p = (uint8_t)ct__f64_to_i64(v); break;
    case CT_INT8: *(int8_t *)p = (int8_t)ct__f64_to_i32(v); break;
    case CT_INT16: *(int16_t *)p = (int16_t)ct__f64_to_i32(v); break;
    case CT_INT32: *(int32_t *)p = ct__f64_to_i32(v); break;
    case CT_INT64: *(int64_t *)p = ct__f64_to_i64(v); break;
    case CT_FLOAT32: *(float *)p = (float)v; break;
    case CT_FLOAT64: *(double *)p = v; break;
    default: break;
    }
}

/* The address of t's one element: in t's memory on the CPU, else in buf, copied from the
   device through its backend (as .item() on CUDA); NULL after an error. */
static const void *ct__item_ptr(const char *op, const ct_tensor *t, uint64_t *buf)
{
    if (ct__null_tensor(op, t)) {
        return NULL;
    }
    if (ct_numel(t) != 1) {
        ct__fail(CT_ERR_VALUE, op, "a Tensor with %lld elements cannot be converted to Scalar",
                 (long long)ct_numel(t));
        return NULL;
    }
    ct_device d = t->storage->device;
    if (d.type == CT_CPU) {
        return ct__data(t);
    }
    const ct_backend *b = ct__backend(d.type);
    ct_status st = b->copy(b->user, buf, ct_device_cpu(), ct__data(t), d, ct_dtype_size(t->dtype));
    if (st != CT_OK) {
        ct__fail(st, op, "the %s backend failed to copy the element to the host", b->name);
        return NULL;
    }
    return buf;
}

double ct_item(const ct_tensor *t)
{
    uint64_t buf = 0;
    const void *p = ct__item_ptr("ct_item", t, &buf);
    return p ? ct__load_f64(p, t->dtype) : NAN;
}

int64_t ct_item_int64(const ct_tensor *t)
{
    uint64_t buf = 0;
    const void *p = ct__item_ptr("ct_item_int64", t, &buf);
    return p ? ct__load_i64(p, t->dtype) : 0;
}

/* ---- creation: factory ops ------------------------------------------------------------------
 * Every creation function is a factory op (no tensor inputs: it runs on the CPU; the _like
 * ops run on their input's device). Attributes in schema order: the sizes (int[]), then the
 * Scalars, then the dtype. meta checks the arguments and allocates the output; the kernel
 * writes it. */

/* Where a fill op's value comes from: op->variant is the index of its Scalar attribute, or
   one of these. */
enum { CT__FILL_EMPTY = -3, CT__FILL_ZERO = -2, CT__FILL_ONE = -1 };

static double ct__fill_value(const ct_op_call *c)
{
    int v = c->op->variant;
    return v == CT__FILL_ZERO ? 0.0 : v == CT__FILL_ONE ? 1.0 : c->attrs[v].f;
}

/* Checks dtype (and that the fill value fits it) and allocates the output of sizes; the
   kernel's dtype is the output's. */
static bool ct__factory_output(ct_op_call *c, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    bool fill = c->op->variant != CT__FILL_EMPTY; /* (the allocation checks dtype for empty) */
    if (fill && (!ct__check_dtype_arg(c->fn, dtype) ||
                 !ct__check_scalar(c->fn, ct__fill_value(c), dtype))) {
        return false;
    }
    ct_tensor *t = ct__op_output(c, sizes, ndim, dtype);
    if (t) {
        c->dtype = t->dtype;
    }
    return t != NULL;
}

/* empty, zeros, ones, full: (int[] size, [Scalar fill_value,] ScalarType dtype). */
static bool ct__factory_sizes_meta(ct_op_call *c)
{
    return ct__factory_output(c, c->attrs[0].ints, (int)c->attrs[0].i,
                              (ct_dtype)c->attrs[c->n_attrs - 1].i);
}

/* scalar_tensor: (Scalar s, ScalarType dtype), 0-dim. */
static bool ct__scalar_tensor_meta(ct_op_call *c)
{
    return ct__factory_output(c, NULL, 0, (ct_dtype)c->attrs[1].i);
}

/* The _like ops: self's shape and dtype. */
static bool ct__factory_like_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    return ct__factory_output(c, t->sizes, t->ndim, t->dtype);
}

/* Fills a fresh contiguous tensor with value (also: reductions of empty inputs). */
void ct__fill_contig(ct_tensor *t, double value)
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

static ct_status ct__empty_kernel(ct_op_call *c)
{
    (void)c; /* meta allocated the output; empty leaves it uninitialized */
    return CT_OK;
}

static ct_status ct__fill_new_kernel(ct_op_call *c)
{
    ct__fill_contig(c->outputs[0], ct__fill_value(c));
    return CT_OK;
}

/* tensor: (data, ScalarType dtype) with the sizes as attribute 0 and c->state pointing at
   the caller's data. */
static bool ct__from_data_meta(ct_op_call *c)
{
    if (!ct__factory_sizes_meta(c)) {
        return false;
    }
    if (ct_nbytes(c->outputs[0]) && !c->state) {
        ct__null(c->fn, c->state);
        return false;
    }
    return true;
}

static ct_status ct__from_data_kernel(ct_op_call *c)
{
    size_t nbytes = ct_nbytes(c->outputs[0]);
    if (nbytes) {
        memcpy(ct__data(c->outputs[0]), c->state, nbytes);
    }
    return CT_OK;
}

/* arange's length ceil((end - start) / step), or -1 + CT_ERR_VALUE in PyTorch's words. */
static int64_t ct__arange_size(const char *op, double start, double end, double step)
{
    if (!isfinite(step)) {
        ct__fail(CT_ERR_VALUE, op, "step must be finite but got %g", step);
        return -1;
    }
    if (step == 0) {
        ct__fail(CT_ERR_VALUE, op, "step must be nonzero");
        return -1;
    }
    if (!isfinite(start) || !isfinite(end)) {
        ct__fail(CT_ERR_VALUE, op, "unsupported range: %g -> %g", start, end);
        return -1;
    }
    if ((step > 0 && end < start) || (step < 0 && end > start)) {
        ct__fail(CT_ERR_VALUE, op, "upper bound and lower bound inconsistent with step sign");
        return -1;
    }
    double n = ceil((end - start) / step); /* >= 0; inf when end - start overflows */
    if (!(n < 9223372036854775808.0)) {
        ct__fail(CT_ERR_VALUE, op, "invalid size, possible overflow?");
        return -1;
    }
    return (int64_t)n;
}

/* arange: (Scalar start, Scalar end, Scalar step, ScalarType dtype). */
static bool ct__arange_meta(ct_op_call *c)
{
    double start = c->attrs[0].f, end = c->attrs[1].f, step = c->attrs[2].f;
    ct_dtype dtype = (ct_dtype)c->attrs[3].i;
    if (!ct__check_dtype_arg(c->fn, dtype)) {
        return false;
    }
    dtype = ct__dtype_resolve(dtype);
    if (dtype == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"arange_cpu\" not implemented for 'Bool'");
        return false;
    }
    int64_t n = ct__arange_size(c->fn, start, end, step);
    /* integer types count in int64 from the truncated start and step, wrapping into dtype */
    if (n < 0 || (!ct_dtype_is_floating_point(dtype) &&
                  (!ct__check_scalar(c->fn, start, CT_INT64) ||
                   !ct__check_scalar(c->fn, step, CT_INT64)))) {
        return false;
    }
    c->dtype = dtype;
    return ct__op_output(c, &n, 1, dtype) != NULL;
}

static ct_status ct__arange_kernel(ct_op_call *c)
{
    double start = c->attrs[0].f, step = c->attrs[2].f;
    ct_tensor *out = c->outputs[0];
    int64_t n = out->sizes[0];
    if (ct_dtype_is_floating_point(out->dtype)) {
        for (int64_t i = 0; i < n; i++) {
            ct__store_f64(ct__data(out) + (size_t)i * ct_dtype_size(out->dtype), out->dtype,
                          start + (double)i * step);
        }
        return CT_OK;
    }
    ct_tensor *t = out->dtype == CT_INT64 ? out : ct__tensor_new(c->fn, &n, 1, CT_INT64);
    if (!t) {
        return ct_error_code();
    }
    uint64_t first = (uint64_t)(int64_t)start, stride = (uint64_t)(int64_t)step;
    for (int64_t i = 0; i < n; i++) { /* unsigned arithmetic wraps as PyTorch's int64 does */
        ((int64_t *)ct__data(t))[i] = (int64_t)(first + (uint64_t)i * stride);
    }
    if (t != out) {
        ct__copy_kernel(out, t);
        ct__release(t);
    }
    return CT_OK;
}

/* linspace: (Scalar start, Scalar end, int steps, ScalarType dtype). */
static bool ct__linspace_meta(ct_op_call *c)
{
    double start = c->attrs[0].f, end = c->attrs[1].f;
    int64_t steps = c->attrs[2].i;
    ct_dtype dtype = (ct_dtype)c->attrs[3].i;
    if (!ct__check_dtype_arg(c->fn, dtype)) {
        return false;
    }
    if (steps < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "number of steps must be non-negative");
        return false;
    }
    if (ct__dtype_resolve(dtype) == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"linspace_cpu\" not implemented for 'Bool'");
        return false;
    }
    if (!ct__check_scalar(c->fn, start, dtype) || !ct__check_scalar(c->fn, end, dtype)) {
        return false;
    }
    ct_tensor *t = ct__op_output(c, &steps, 1, dtype);
    if (t) {
        c->dtype = t->dtype;
    }
    return t != NULL;
}

static ct_status ct__linspace_kernel(ct_op_call *c)
{
    double start = c->attrs[0].f, end = c->attrs[1].f;
    int64_t steps = c->attrs[2].i;
    ct_tensor *t = c->outputs[0];
    size_t es = ct_dtype_size(t->dtype);
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; i++) {
        /* PyTorch fills the second half backwards from end for symmetry */
        double v = (i < half || steps == 1) ? start + step * (double)i
                                            : end - step * (double)(steps - 1 - i);
        ct__store_f64(ct__data(t) + (size_t)i * es, t->dtype, v);
    }
    return CT_OK;
}

/* eye: (int n, int m, ScalarType dtype). */
static bool ct__eye_meta(ct_op_call *c)
{
    int64_t sizes[2] = {c->attrs[0].i, c->attrs[1].i};
    return ct__factory_output(c, sizes, 2, (ct_dtype)c->attrs[2].i);
}

static ct_status ct__eye_kernel(ct_op_call *c)
{
    ct_tensor *t = c->outputs[0];
    ct__fill_contig(t, 0);
    size_t es = ct_dtype_size(t->dtype);
    for (int64_t i = 0; i < t->sizes[0] && i < t->sizes[1]; i++) {
        ct__store_f64(ct__data(t) + (size_t)(i * t->sizes[1] + i) * es, t->dtype, 1.0);
    }
    return CT_OK;
}

/* A factory op: name, schema, public functions, fill variant, meta, kernels. */
#define CT__FACTORY(SYM, NAME, SCHEMA, API, VAR, META, KERNELS)                                \
    static const ct_op ct__op_##SYM = {"aten::" NAME, SCHEMA, API, CT_OP_FACTORY,             \
                                       CT_AUTOCAST_NONE, VAR, 0u, NULL, META, KERNELS, NULL,  \
                                       NULL, NULL, 0u, NULL, NULL};
#define CT__FACTORY_OPTS "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
                         "bool? pin_memory=None"
#define CT__LIKE_OPTS CT__FACTORY_OPTS ", MemoryFormat? memory_format=None) -> Tensor"

CT__FACTORY(empty, "empty", "empty.memory_format(SymInt[] size, *, " CT__FACTORY_OPTS
            ", MemoryFormat? memory_format=None) -> Tensor", "ct_empty", CT__FILL_EMPTY,
            ct__factory_sizes_meta, CT__K_ALL(ct__empty_kernel))
CT__FACTORY(zeros, "zeros", "zeros(SymInt[] size, *, " CT__FACTORY_OPTS ") -> Tensor",
            "ct_zeros", CT__FILL_ZERO, ct__factory_sizes_meta, CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(ones, "ones", "ones(SymInt[] size, *, " CT__FACTORY_OPTS ") -> Tensor", "ct_ones",
            CT__FILL_ONE, ct__factory_sizes_meta, CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(full, "full", "full(SymInt[] size, Scalar fill_value, *, " CT__FACTORY_OPTS
            ") -> Tensor", "ct_full", 1, ct__factory_sizes_meta, CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(scalar_tensor, "scalar_tensor", "scalar_tensor(Scalar s, *, " CT__FACTORY_OPTS
            ") -> Tensor", "ct_scalar_tensor", 0, ct__scalar_tensor_meta,
            CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(empty_like, "empty_like", "empty_like(Tensor self, *, " CT__LIKE_OPTS,
            "ct_empty_like", CT__FILL_EMPTY, ct__factory_like_meta, CT__K_ALL(ct__empty_kernel))
CT__FACTORY(zeros_like, "zeros_like", "zeros_like(Tensor self, *, " CT__LIKE_OPTS,
            "ct_zeros_like", CT__FILL_ZERO, ct__factory_like_meta,
            CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(ones_like, "ones_like", "ones_like(Tensor self, *, " CT__LIKE_OPTS, "ct_ones_like",
            CT__FILL_ONE, ct__factory_like_meta, CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(full_like, "full_like", "full_like(Tensor self, Scalar fill_value, *, "
            CT__LIKE_OPTS, "ct_full_like", 0, ct__factory_like_meta,
            CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(tensor, "tensor", "tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, "
            "bool requires_grad=False) -> Tensor", "ct_tensor_from_data", CT__FILL_EMPTY,
            ct__from_data_meta, CT__K_ALL(ct__from_data_kernel))
CT__FACTORY(arange, "arange", "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, "
            CT__FACTORY_OPTS ") -> Tensor", "ct_arange", CT__FILL_EMPTY, ct__arange_meta,
            CT__K_NUMERIC(ct__arange_kernel))
CT__FACTORY(linspace, "linspace", "linspace(Scalar start, Scalar end, int steps, *, "
            CT__FACTORY_OPTS ") -> Tensor", "ct_linspace", CT__FILL_EMPTY, ct__linspace_meta,
            CT__K_NUMERIC(ct__linspace_kernel))
CT__FACTORY(eye, "eye", "eye.m(SymInt n, SymInt m, *, " CT__FACTORY_OPTS ") -> Tensor",
            "ct_eye", CT__FILL_EMPTY, ct__eye_meta, CT__K_ALL(ct__eye_kernel))
#undef CT__FACTORY
#undef CT__FACTORY_OPTS
#undef CT__LIKE_OPTS

/* A call of a factory op over sizes, with the fill value when it takes one (full_value). */
static ct_tensor *ct__factory_call(const ct_op *op, const char *fn, const int64_t *sizes,
                                   int ndim, double value, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, NULL, 0);
    ct__call_ints(&c, sizes, ndim);
    if (op->variant >= 0) {
        ct__call_f(&c, value);
    }
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

/* A call of a _like op over t, with its fill value when it takes one. */
static ct_tensor *ct__like_call(const ct_op *op, const char *fn, const ct_tensor *t,
                                double value)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (op->variant >= 0) {
        ct__call_f(&c, value);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_empty(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_empty, "ct_empty", sizes, ndim, 0.0, dtype);
}

ct_tensor *ct_full(const int64_t *sizes, int ndim, double value, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_full, "ct_full", sizes, ndim, value, dtype);
}

ct_tensor *ct_zeros(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_zeros, "ct_zeros", sizes, ndim, 0.0, dtype);
}

ct_tensor *ct_ones(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_ones, "ct_ones", sizes, ndim, 1.0, dtype);
}

ct_tensor *ct_scalar_tensor(double value, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_scalar_tensor, "ct_scalar_tensor", NULL, 0);
    ct__call_f(&c, value);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_empty_like(const ct_tensor *t)
{
    return ct__like_call(&ct__op_empty_like, "ct_empty_like", t, 0.0);
}

ct_tensor *ct_full_like(const ct_tensor *t, double value)
{
    return ct__like_call(&ct__op_full_like, "ct_full_like", t, value);
}

ct_tensor *ct_zeros_like(const ct_tensor *t)
{
    return ct__like_call(&ct__op_zeros_like, "ct_zeros_like", t, 0.0);
}

ct_tensor *ct_ones_like(const ct_tensor *t)
{
    return ct__like_call(&ct__op_ones_like, "ct_ones_like", t, 1.0);
}

ct_tensor *ct_tensor_from_data(const void *data, ct_dtype dtype, const int64_t *sizes, int ndim)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_tensor, "ct_tensor_from_data", NULL, 0);
    ct__call_ints(&c, sizes, ndim);
    ct__call_i(&c, dtype);
    c.state = (void *)(uintptr_t)data;
    return ct__dispatch(&c);
}

ct_tensor *ct_arange(double start, double end, double step, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_arange, "ct_arange", NULL, 0);
    ct__call_f(&c, start);
    ct__call_f(&c, end);
    ct__call_f(&c, step);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_linspace(double start, double end, int64_t steps, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_linspace, "ct_linspace", NULL, 0);
    ct__call_f(&c, start);
    ct__call_f(&c, end);
    ct__call_i(&c, steps);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_eye(int64_t n, int64_t m, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_eye, "ct_eye", NULL, 0);
    ct__call_i(&c, n);
    ct__call_i(&c, m < 0 ? n : m);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_from_blob(void *data, ct_dtype dtype, const int64_t *sizes, int ndim,
                        void (*deleter)(void *data, void *ctx), void *ctx)
{
    const char *op = "ct_from_blob";
    if (ct__null(op, data) || !ct__check_shape(op, sizes, ndim) ||
        !ct__check_dtype_arg(op, dtype)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
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

// >>part core/print.c
/* core/print.c - PyTorch's repr of a tensor (torch/_tensor_str.py), step for step.
 *
 * Two passes over the elements that will be shown (all of them, or with summarization the
 * edgeitems at each end of every dimension): the first finds the format as PyTorch's
 * _Formatter does (int_mode, sci_mode, the column width), the second writes the text as
 * _tensor_str_with_formatter / _vector_str do, then _add_suffixes appends the suffixes.
 * Values are read through ct__load_f64 / ct__load_i64, so every dtype prints.
 */


#define CT__PRINT_MAX_PRECISION 64
#define CT__PRINT_ELEM_BYTES 400 /* "%.64f" of DBL_MAX: 309 digits, the point and 64 decimals */

static ct_printoptions ct__print_opts = {4, 1000, 3, 80, CT_SCI_MODE_AUTO};

ct_printoptions ct_get_printoptions(void) { return ct__print_opts; }

ct_status ct_set_printoptions(const char *profile, const ct_printoptions *opts)
{
    const char *op = "ct_set_printoptions";
    ct_printoptions o = ct__print_opts;
    if (profile && strcmp(profile, "default") == 0) {
        o.precision = 4, o.threshold = 1000, o.edgeitems = 3, o.linewidth = 80;
    } else if (profile && strcmp(profile, "short") == 0) {
        o.precision = 2, o.threshold = 1000, o.edgeitems = 2, o.linewidth = 80;
    } else if (profile && strcmp(profile, "full") == 0) {
        o.precision = 4, o.threshold = INFINITY, o.edgeitems = 3, o.linewidth = 80;
    } else if (profile) {
        return ct__fail(CT_ERR_VALUE, op,
                        "profile must be \"default\", \"short\" or \"full\" but got \"%s\"",
                        profile);
    }
    o.sci_mode = CT_SCI_MODE_AUTO;
    if (opts) {
        o = *opts;
    }
    if (o.precision < 0 || o.precision > CT__PRINT_MAX_PRECISION) {
        return ct__fail(CT_ERR_VALUE, op, "precision must be in [0, %d] but got %d",
                        CT__PRINT_MAX_PRECISION, o.precision);
    }
    if (isnan(o.threshold) || o.edgeitems < 0 || o.linewidth < 0) {
        return ct__fail(CT_ERR_VALUE, op,
                        "expected a threshold that is not NaN and non-negative edgeitems and "
                        "linewidth, but got threshold=%g, edgeitems=%d, linewidth=%d",
                        o.threshold, o.edgeitems, o.linewidth);
    }
    if (o.sci_mode < CT_SCI_MODE_AUTO || o.sci_mode > CT_SCI_MODE_ON) {
        return ct__fail(CT_ERR_VALUE, op, "%d is not a valid value for sci_mode",
                        (int)o.sci_mode);
    }
    ct__print_opts = o;
    return CT_OK;
}

/* ---- the output buffer: snprintf semantics, counting what did not fit -------------- */
typedef struct ct__sbuf {
    char *buf;
    size_t cap, len;
    size_t line_start; /* where the last line begins: after the last newline, or 0 */
} ct__sbuf;

/* Appends printf's text (at most CT__PRINT_ELEM_BYTES + 127 characters at once). */
static void ct__sbuf_put(ct__sbuf *b, const char *fmt, ...)
{
    char s[CT__PRINT_ELEM_BYTES + 128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    for (int i = 0; i < n && s[i]; i++) {
        if (b->len + 1 < b->cap) {
            b->buf[b->len] = s[i];
            b->buf[b->len + 1] = '\0';
        }
        b->len++;
        b->line_start = s[i] == '\n' ? b->len : b->line_start;
    }
}

static void ct__sbuf_spaces(ct__sbuf *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        ct__sbuf_put(b, " ");
    }
}

/* ---- the printer: options, the tensor and its formatter (PyTorch's _Formatter) ----- */
typedef struct ct__printer {
    ct__sbuf out;
    ct_printoptions o;
    const ct_tensor *t;
    bool summarize;
    bool floating, int_mode, sci;
    int width;
    double min_abs, max_abs; /* of the shown nonzero finite values */
    int64_t n_finite;        /* how many shown values are nonzero and finite */
} ct__printer;

typedef void (*ct__print_visit_fn)(ct__printer *p, const char *elem);

/* Calls fn for each element shown, in order, from dimension dim of the block at ptr. With
   summarization a dimension longer than 2 * edgeitems shows its first and last edgeitems
   entries, and nothing when edgeitems is 0 (PyTorch's get_summarized_data). */
static void ct__print_visit(ct__printer *p, int dim, const char *ptr, ct__print_visit_fn fn)
{
    const ct_tensor *t = p->t;
    if (dim == t->ndim) {
        fn(p, ptr);
        return;
    }
    int64_t size = t->sizes[dim], edge = p->o.edgeitems;
    size_t step = (size_t)t->strides[dim] * ct_dtype_size(t->dtype);
    bool cut = p->summarize && size > 2 * edge;
    if (p->summarize && edge == 0) {
        return;
    }
    for (int64_t i = 0; i < size; i++) {
        if (cut && i == edge) {
            i = size - edge;
        }
        ct__print_visit(p, dim + 1, ptr + (ptrdiff_t)i * (ptrdiff_t)step, fn);
    }
}

static double ct__print_value(const ct__printer *p, const char *elem)
{
    return ct__load_f64(elem, p->t->dtype);
}

/* The text of a value without padding, as _Formatter.format writes it. */
static int ct__print_format(const ct__printer *p, const char *elem, char *s)
{
    ct_dtype d = p->t->dtype;
    if (d == CT_BOOL) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%s", *elem ? "True" : "False");
    }
    if (!p->floating) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%lld", (long long)ct__load_i64(elem, d));
    }
    double v = ct__print_value(p, elem);
    if (isnan(v) || isinf(v)) { /* Python: "nan", "inf", "-inf" whatever the format */
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    }
    if (p->sci) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%.*e", p->o.precision, v);
    }
    if (p->int_mode) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%.0f.", v);
    }
    return snprintf(s, CT__PRINT_ELEM_BYTES, "%.*f", p->o.precision, v);
}

/* First pass over floats: the range of the nonzero finite values and whether all are
   integral. */
static void ct__print_scan(ct__printer *p, const char *elem)
{
    double v = ct__print_value(p, elem);
    if (v == 0 || isnan(v) || isinf(v)) {
        return;
    }
    double a = fabs(v);
    p->min_abs = p->n_finite == 0 || a < p->min_abs ? a : p->min_abs;
    p->max_abs = p->n_finite == 0 || a > p->max_abs ? a : p->max_abs;
    p->int_mode = p->int_mode && v == ceil(v);
    p->n_finite++;
}

/* Second pass: the widest text (floats: of the nonzero finite values only). */
static void ct__print_measure(ct__printer *p, const char *elem)
{
    if (p->floating) {
        double v = ct__print_value(p, elem);
        if (v == 0 || isnan(v) || isinf(v)) {
            return;
        }
    }
    char s[CT__PRINT_ELEM_BYTES];
    int w = ct__print_format(p, elem, s);
    p->width = w > p->width ? w : p->width;
}

/* PyTorch's _Formatter.__init__. */
static void ct__print_formatter(ct__printer *p)
{
    p->floating = ct_dtype_is_floating_point(p->t->dtype);
    p->int_mode = true;
    p->sci = false;
    p->width = 1;
    if (p->floating) {
        p->n_finite = 0;
        ct__print_visit(p, 0, ct__data(p->t), ct__print_scan);
        if (p->n_finite == 0) {
            return;
        }
        p->sci = p->o.sci_mode == CT_SCI_MODE_AUTO
                     ? p->max_abs / p->min_abs > 1000.0 || p->max_abs > 1.0e8 ||
                           p->min_abs < 1.0e-4
                     : p->o.sci_mode == CT_SCI_MODE_ON;
    }
    ct__print_visit(p, 0, ct__data(p->t), ct__print_measure);
}

/* Emits one value right-aligned to the column width. */
static void ct__print_elem(ct__printer *p, const char *elem)
{
    char s[CT__PRINT_ELEM_BYTES];
    int w = ct__print_format(p, elem, s);
    ct__sbuf_spaces(&p->out, p->width - w);
    ct__sbuf_put(&p->out, "%s", s);
}

/* PyTorch's _vector_str: items of width + 2 characters, as many per line as fit in
   linewidth - indent (at least one), lines joined by ",\n" and indent + 1 spaces. */
static void ct__print_vector(ct__printer *p, const char *ptr, int64_t indent)
{
    const ct_tensor *t = p->t;
    int64_t size = t->sizes[t->ndim - 1], edge = p->o.edgeitems;
    size_t step = (size_t)t->strides[t->ndim - 1] * ct_dtype_size(t->dtype);
    int64_t per_line = (p->o.linewidth - indent) / (p->width + 2);
    per_line = per_line > 1 ? per_line : 1;
    ct__sbuf_put(&p->out, "[");
    if (p->summarize && edge == 0) {
        ct__sbuf_put(&p->out, "...]");
        return;
    }
    bool cut = p->summarize && size > 2 * edge;
    int64_t n_items = cut ? 2 * edge + 1 : size;
    for (int64_t k = 0; k < n_items; k++) {
        if (k > 0 && k % per_line == 0) {
            ct__sbuf_put(&p->out, ",\n");
            ct__sbuf_spaces(&p->out, indent + 1);
        } else if (k > 0) {
            ct__sbuf_put(&p->out, ", ");
        }
        if (cut && k == edge) {
            ct__sbuf_put(&p->out, " ...");
            continue;
        }
        int64_t i = cut && k > edge ? size - (n_items - k) : k;
        ct__print_elem(p, ptr + (ptrdiff_t)i * (ptrdiff_t)step);
    }
    ct__sbuf_put(&p->out, "]");
}

/* PyTorch's _tensor_str_with_formatter from dimension dim: slices joined by ",", one
   newline per remaining dimension beyond the first and indent + 1 spaces. */
static void ct__print_block(ct__printer *p, int dim, const char *ptr, int64_t indent)
{
    const ct_tensor *t = p->t;
    if (dim == t->ndim) {
        ct__print_elem(p, ptr);
        return;
    }
    if (dim == t->ndim - 1) {
        ct__print_vector(p, ptr, indent);
        return;
    }
    int64_t size = t->sizes[dim], edge = p->o.edgeitems;
    size_t step = (size_t)t->strides[dim] * ct_dtype_size(t->dtype);
    bool cut = p->summarize && size > 2 * edge;
    ct__sbuf_put(&p->out, "[");
    for (int64_t i = 0; i < size; i++) {
        if (i > 0) {
            ct__sbuf_put(&p->out, ",");
            for (int k = dim; k < t->ndim - 1; k++) {
                ct__sbuf_put(&p->out, "\n");
            }
            ct__sbuf_spaces(&p->out, indent + 1);
        }
        if (cut && i == edge) {
            ct__sbuf_put(&p->out, "...");
            i = size - edge - 1;
            continue;
        }
        ct__print_block(p, dim + 1, ptr + (ptrdiff_t)i * (ptrdiff_t)step, indent + 1);
    }
    ct__sbuf_put(&p->out, "]");
}

/* ---- suffixes (PyTorch's _add_suffixes) -------------------------------------------- */
typedef struct ct__suffixes {
    char text[4][96];
    int n;
} ct__suffixes;

static char *ct__suffix_new(ct__suffixes *s) { return s->text[s->n++]; }

/* "size=(2, 0)", "size=(5,)" or "size=()", as str(tuple(shape)). */
static void ct__suffix_size(ct__suffixes *s, const ct_tensor *t)
{
    char *d = ct__suffix_new(s);
    size_t used = (size_t)snprintf(d, sizeof s->text[0], "size=(");
    for (int i = 0; i < t->ndim && used < sizeof s->text[0]; i++) {
        used += (size_t)snprintf(d + used, sizeof s->text[0] - used, i ? ", %lld" : "%lld",
                                 (long long)t->sizes[i]);
    }
    if (used < sizeof s->text[0]) {
        snprintf(d + used, sizeof s->text[0] - used, t->ndim == 1 ? ",)" : ")");
    }
}

static void ct__suffix_dtype(ct__suffixes *s, ct_dtype d)
{
    snprintf(ct__suffix_new(s), sizeof s->text[0], "dtype=torch.%s", ct_dtype_name(d));
}

/* The suffixes of t (the original tensor: its device and autograd state) whose values are
   in c (t, or its copy on the CPU). */
static void ct__print_suffixes(const ct__printer *p, const ct_tensor *t, ct__suffixes *s)
{
    ct_device dev = t->storage->device;
    if (dev.type != CT_CPU) {
        char name[32];
        snprintf(ct__suffix_new(s), sizeof s->text[0], "device='%s'",
                 ct__device_str(dev, name, sizeof name));
    }
    ct_dtype dflt = ct_get_default_dtype();
    if (ct__numel(t->sizes, t->ndim) == 0) {
        if (t->ndim != 1) {
            ct__suffix_size(s, t);
        }
        if (t->dtype != dflt) {
            ct__suffix_dtype(s, t->dtype);
        }
    } else {
        if (p->o.edgeitems == 0) {
            ct__suffix_size(s, t);
        }
        if (t->dtype != dflt && t->dtype != CT_INT64 && t->dtype != CT_BOOL) {
            ct__suffix_dtype(s, t->dtype);
        }
    }
    if (t->grad_fn) {
        snprintf(ct__suffix_new(s), sizeof s->text[0], "grad_fn=<%s>",
                 ct__node_name(t->grad_fn));
    } else if (t->requires_grad) {
        snprintf(ct__suffix_new(s), sizeof s->text[0], "requires_grad=True");
    }
}

/* Appends the suffixes: ", suffix" while the last line (counted as its length + 2, as
   PyTorch does) stays within linewidth, else ",\n" and 7 spaces (len("tensor(")). */
static void ct__print_add_suffixes(ct__printer *p, const ct__suffixes *s)
{
    int64_t line = (int64_t)(p->out.len - p->out.line_start) + 2;
    for (int k = 0; k < s->n; k++) {
        int64_t n = (int64_t)strlen(s->text[k]);
        if (line + n + 2 > p->o.linewidth) {
            ct__sbuf_put(&p->out, ",\n       %s", s->text[k]);
            line = 7 + n;
        } else {
            ct__sbuf_put(&p->out, ", %s", s->text[k]);
            line += n + 2;
        }
    }
    ct__sbuf_put(&p->out, ")");
}

/* ---- entry points ------------------------------------------------------------------ */
/* PyTorch's _tensor_str: the values of c (a CPU tensor) at indent len("tensor("). */
static void ct__print_values(ct__printer *p, const ct_tensor *c)
{
    p->t = c;
    if (ct__numel(c->sizes, c->ndim) == 0) {
        ct__sbuf_put(&p->out, "[]");
        return;
    }
    p->summarize = (double)ct__numel(c->sizes, c->ndim) > p->o.threshold;
    ct__print_formatter(p);
    ct__print_block(p, 0, ct__data(c), 7);
}

size_t ct_to_string(const ct_tensor *t, char *buf, size_t n)
{
    const char *op = "ct_to_string";
    if (buf && n > 0) {
        buf[0] = '\0';
    }
    if (ct__null(op, t)) {
        return 0;
    }
    ct__printer p;
    memset(&p, 0, sizeof p);
    p.out.buf = buf;
    p.out.cap = buf ? n : 0;
    p.o = ct__print_opts;
    ct_scope_begin();
    ct_no_grad_begin();
    const ct_tensor *c = t->storage->device.type == CT_CPU ? t : ct_cpu(t);
    ct_no_grad_end();
    if (c) {
        ct__sbuf_put(&p.out, "tensor(");
        ct__print_values(&p, c);
        ct__suffixes s;
        s.n = 0;
        ct__print_suffixes(&p, t, &s);
        ct__print_add_suffixes(&p, &s);
    }
    ct_scope_end();
    return p.out.len;
}

#ifndef CTORCH_NO_STDIO
void ct_print(const ct_tensor *t, FILE *f)
{
    const char *op = "ct_print";
    if (ct__null(op, t) || ct__null(op, f)) {
        return;
    }
    size_t n = ct_to_string(t, NULL, 0) + 1;
    char *s = (char *)ct__malloc(n);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory formatting a tensor of %lld elements",
                 (long long)ct__numel(t->sizes, t->ndim));
        return;
    }
    ct_to_string(t, s, n);
    fprintf(f, "%s\n", s);
    ct__free(s);
}
#endif

#undef CT__PRINT_MAX_PRECISION
#undef CT__PRINT_ELEM_BYTES

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
    if (!t) {
        return NULL;
    }
    ct__debug_set_owned(t, true);
    if (ct__scope_top == 0) {
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
            ct__debug_set_owned(t, false);
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
    if (ct__null_tensor("ct_keep", t)) {
        return NULL;
    }
    int parent = t->scope_depth - 1;
    if (!ct__scope_detach(t)) {
        return t;
    }
    if (parent >= 0 && !ct__scope_push(parent, t)) {
        ct__fail(CT_ERR_OOM, "ct_keep", "out of memory growing the scope");
    }
    return t;
}

void ct_free(ct_tensor *t)
{
    if (!t || !ct__debug_check_free("ct_free", t)) {
        return;
    }
    ct__scope_detach(t);
    ct__debug_set_owned(t, false);
    ct__release(t);
}

#undef CT__MAX_SCOPES

// >>part core/parallel.c
/* core/parallel.c - intra-op thread count, the intra-op pool (ct__parallel_tasks and
 * ct__parallel_for on top), the inter-op pool (ct_fork / ct_wait), flush-to-zero and
 * parallel_info.
 *
 * State: the intra-op count and the flush setting are process-wide atomics; each pool is
 * one struct (ct__ipool for intra-op jobs, ct__pool for inter-op futures); whether the
 * calling thread runs an inter-op task or an intra-op job is thread-local.
 *
 * The intra-op pool runs one job at a time: tasks [0, ntasks) handed out one by one through
 * an atomic claim word (job generation << 32 | next task), so a descheduled thread delays
 * at most the task it holds; the caller claims tasks too, and returns as soon as every task
 * has finished, without waiting for workers that never woke. Idle workers spin briefly on
 * the job sequence number, then sleep on a condition variable.
 */


/* CT__PAR_PTHREADS: both pools exist (the intra-op one also needs GCC/clang atomics). */
#if !defined(CTORCH_NO_THREADS) && (defined(__unix__) || defined(__APPLE__)) &&              \
    (defined(__GNUC__) || defined(__clang__))
#define CT__PAR_PTHREADS 1
#include <pthread.h>
#include <time.h> /* timespec_get */
#include <unistd.h>
#endif

#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
#define CT__PAR_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define CT__PAR_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#define CT__PAR_LOAD(p) (*(p))
#define CT__PAR_STORE(p, v) (*(p) = (v))
#endif

/* Flush-to-zero hardware. CT__PAR_FTZ_BITS: the mode bits set when flushing. */
#if (defined(__SSE__) || defined(_M_X64)) && (defined(__x86_64__) || defined(_M_X64))
#include <xmmintrin.h>
#define CT__PAR_FTZ_X86 1
#define CT__PAR_FTZ_BITS 0x8040u /* MXCSR FTZ (bit 15) | DAZ (bit 6) */
#elif defined(__SSE__)
#include <xmmintrin.h>
#define CT__PAR_FTZ_X86 1
#define CT__PAR_FTZ_BITS 0x8000u /* 32-bit x86: FTZ only (early CPUs lack DAZ) */
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define CT__PAR_FTZ_ARM 1
#define CT__PAR_FTZ_BITS (1u << 24) /* FPCR.FZ */
#endif

/* ---- cores ------------------------------------------------------------------------- */
static CT__UNUSED int ct__par_logical_cpus(void)
{
#if defined(CT__PAR_PTHREADS) && defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

/* SMT threads per core from cpu0's sibling list ("0,64", "0-1" or "0"); 1 when unknown. */
static CT__UNUSED int ct__par_smt_per_core(void)
{
#if defined(__linux__) && !defined(CTORCH_NO_STDIO)
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "r");
    if (!f) {
        return 1;
    }
    char line[128];
    int count = 0;
    if (fgets(line, (int)sizeof line, f)) {
        const char *p = line;
        while (*p >= '0' && *p <= '9') {
            long a = strtol(p, NULL, 10), b = a;
            while (*p >= '0' && *p <= '9') {
                p++;
            }
            if (*p == '-') {
                p++;
                b = strtol(p, NULL, 10);
                while (*p >= '0' && *p <= '9') {
                    p++;
                }
            }
            count += b >= a ? (int)(b - a + 1) : 1;
            if (*p == ',') {
                p++;
            }
        }
    }
    fclose(f);
    return count > 0 ? count : 1;
#else
    return 1;
#endif
}

static int ct__par_cores_cache = 0;

/* Physical cores available to the process: logical CPUs / SMT threads per core. */
static CT__UNUSED int ct__par_cores(void)
{
    int n = CT__PAR_LOAD(&ct__par_cores_cache);
    if (n == 0) {
        int logical = ct__par_logical_cpus(), smt = ct__par_smt_per_core();
        n = logical / smt > 0 ? logical / smt : 1;
        CT__PAR_STORE(&ct__par_cores_cache, n);
    }
    return n;
}

/* ---- intra-op thread count ---------------------------------------------------------- */
static int ct__num_threads = 0;          /* ct_set_num_threads's value; 0: not set */
static int ct__num_threads_default = 0;  /* from the environment or cores; 0: not read */
static CT__THREAD_LOCAL int ct__par_in_task = 0; /* inside an inter-op task */

ct_status ct_set_num_threads(int n)
{
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, "ct_set_num_threads",
                        "Expected positive number of threads, got %d", n);
    }
    CT__PAR_STORE(&ct__num_threads, n);
    return CT_OK;
}

void ct_reset_num_threads(void)
{
    CT__PAR_STORE(&ct__num_threads, 0);
    CT__PAR_STORE(&ct__num_threads_default, 0);
}

/* A positive integer environment variable, else 0. */
static CT__UNUSED int ct__env_threads(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        return 0;
    }
    char *end = NULL;
    long n = strtol(v, &end, 10);
    while (end && (*end == ' ' || *end == '\n')) {
        end++;
    }
    return (end && *end == '\0' && n > 0 && n <= 1 << 20) ? (int)n : 0;
}

int ct_get_num_threads(void)
{
#ifdef CT__PAR_PTHREADS
    if (ct__par_in_task) {
        return 1; /* the oversubscription rule */
    }
    int n = CT__PAR_LOAD(&ct__num_threads);
    if (n > 0) {
        return n;
    }
    n = CT__PAR_LOAD(&ct__num_threads_default);
    if (n == 0) {
        n = ct__env_threads("CTORCH_NUM_THREADS");
        if (!n) {
            n = ct__env_threads("OMP_NUM_THREADS");
        }
        if (!n) {
            n = ct__par_cores();
        }
        CT__PAR_STORE(&ct__num_threads_default, n);
    }
    return n;
#else
    return 1;
#endif
}

/* ---- flush-to-zero ------------------------------------------------------------------ */
static int ct__par_ftz = 1; /* the setting for ctorch's kernels and workers (default on) */

#ifdef CT__PAR_FTZ_BITS
static CT__UNUSED unsigned ct__par_fpmode_get(void)
{
#ifdef CT__PAR_FTZ_X86
    return _mm_getcsr();
#else
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return (unsigned)fpcr;
#endif
}

static CT__UNUSED void ct__par_fpmode_set(unsigned mode)
{
#ifdef CT__PAR_FTZ_X86
    _mm_setcsr(mode);
#else
    uint64_t fpcr = mode;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
#endif
}
#endif

/* Puts the calling thread in the ctorch flush mode; returns true (and the old mode in
   *saved) when it had to change it, so ct__par_ftz_leave restores it. */
static CT__UNUSED bool ct__par_ftz_enter(unsigned *saved)
{
#ifdef CT__PAR_FTZ_BITS
    unsigned old = ct__par_fpmode_get();
    unsigned want = CT__PAR_LOAD(&ct__par_ftz) ? (old | CT__PAR_FTZ_BITS)
                                              : (old & ~(unsigned)CT__PAR_FTZ_BITS);
    if (want == old) {
        return false;
    }
    *saved = old;
    ct__par_fpmode_set(want);
    return true;
#else
    (void)saved;
    return false;
#endif
}

static CT__UNUSED void ct__par_ftz_leave(bool changed, unsigned saved)
{
#ifdef CT__PAR_FTZ_BITS
    if (changed) {
        ct__par_fpmode_set(saved);
    }
#else
    (void)changed;
    (void)saved;
#endif
}

bool ct_set_flush_denormal(bool on)
{
#ifdef CT__PAR_FTZ_BITS
    CT__PAR_STORE(&ct__par_ftz, on ? 1 : 0);
    unsigned saved = 0;
    (void)ct__par_ftz_enter(&saved); /* the calling thread keeps the new mode */
    return true;
#else
    (void)on;
    return false;
#endif
}

/* ---- the intra-op pool ------------------------------------------------------------- */
static CT__THREAD_LOCAL int ct__par_in_job = 0; /* running (part of) an intra-op job */

int ct__parallel_threads(void)
{
    int n = ct__par_in_job ? 1 : ct_get_num_threads();
    return n < CT__PAR_MAX_THREADS ? n : CT__PAR_MAX_THREADS;
}

#ifdef CT__PAR_PTHREADS
/* How long an idle worker spins before it sleeps: enough to bridge short serial code
   between ops, short enough to leave a busy machine's cores to the caller and others. The
   quickstart at 2 threads, 2 cores: with one competing process, 100 us made it 1.1x slower
   than 1 thread and 20 us 0.85x; on a quiet machine 100 us was 1.3x faster than 20 us
   (yield-spinning, or sleeping when preempted mid-spin, got neither). So the spin adapts:
   a spinning thread that finds it was descheduled (over CT__PAR_PREEMPTED_NS between two
   clock reads), or a worker that starts a job over CT__PAR_PREEMPTED_NS after it was
   published, marks the machine busy for CT__PAR_BUSY_NS, and meanwhile workers spin
   CT__PAR_SPIN_BUSY_NS. */
#define CT__PAR_SPIN_NS 100000
#define CT__PAR_SPIN_BUSY_NS 20000
#define CT__PAR_PREEMPTED_NS 500000
#define CT__PAR_BUSY_NS 1000000000
/* How long the caller spins for the last tasks before it sleeps: short, because on a busy
   machine the thread holding a task may be waiting for the very core the caller spins on. */
#define CT__PAR_DONE_SPIN_NS 5000
#if defined(__x86_64__) || defined(__i386__)
#define CT__PAR_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CT__PAR_PAUSE() __asm__ __volatile__("yield")
#else
#define CT__PAR_PAUSE() ((void)0)
#endif
#define CT__PAR_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define CT__PAR_SET(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

static struct {
    pthread_mutex_t owner;       /* held by the caller running a job */
    pthread_mutex_t lock;        /* guards the sleeps and wake-ups only */
    pthread_cond_t work;         /* seq changed */
    pthread_cond_t done_cv;      /* the job's last task finished */
    pthread_t threads[CT__PAR_MAX_THREADS - 1]; /* workers; slot of threads[i] is i + 1 */
    int nworkers;                /* written by the owner only */
    int stop;                    /* workers exit at the next seq */
    uint32_t seq;                /* bumped for each job and for stop; workers wait on it */
    uint64_t claim;              /* job generation << 32 | next unclaimed task */
    void (*fn)(int64_t task, int slot, void *ctx);
    void *ctx;
    uint32_t ntasks;             /* the job: tasks [0, ntasks) on slots [0, nslots) */
    int nslots;
    uint32_t done;               /* tasks of the job finished */
    int sleepers;                /* workers asleep on work */
    int caller_asleep;           /* the owner sleeps on done_cv */
    int64_t busy_until_ns;       /* a thread was found descheduled: spin short until then */
    int64_t job_start_ns;        /* when the owner published the job */
} ct__ipool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
               PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0, 0};

/* Claims and runs tasks of job generation gen as slot until none is left; returns at once
   for another generation or a slot the job does not use. Job fields are read before the
   claim and are valid when the claim (a CAS on the unchanged word) succeeds. */
static CT__UNUSED void ct__ipool_run_tasks(uint32_t gen, int slot)
{
    for (;;) {
        uint64_t w = __atomic_load_n(&ct__ipool.claim, __ATOMIC_ACQUIRE);
        /* acquire: when a field of the next job is read, the CAS below sees the claim word
           closed for it (ct__ipool_run) and fails */
        void (*fn)(int64_t, int, void *) = __atomic_load_n(&ct__ipool.fn, __ATOMIC_ACQUIRE);
        void *ctx = __atomic_load_n(&ct__ipool.ctx, __ATOMIC_ACQUIRE);
        uint32_t ntasks = __atomic_load_n(&ct__ipool.ntasks, __ATOMIC_ACQUIRE);
        if ((uint32_t)(w >> 32) != gen || (uint32_t)w >= ntasks ||
            slot >= __atomic_load_n(&ct__ipool.nslots, __ATOMIC_ACQUIRE)) {
            return;
        }
        if (!__atomic_compare_exchange_n(&ct__ipool.claim, &w, w + 1, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED)) {
            continue;
        }
        fn((int64_t)(uint32_t)w, slot, ctx);
        if (__atomic_add_fetch(&ct__ipool.done, 1, __ATOMIC_SEQ_CST) == ntasks &&
            __atomic_load_n(&ct__ipool.caller_asleep, __ATOMIC_SEQ_CST)) {
            pthread_mutex_lock(&ct__ipool.lock);
            pthread_cond_signal(&ct__ipool.done_cv);
            pthread_mutex_unlock(&ct__ipool.lock);
        }
    }
}

/* Whether *word == v (equal) or != v (!equal). */
static CT__UNUSED bool ct__ipool_ready(const uint32_t *word, uint32_t v, bool equal)
{
    uint32_t now = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    return equal ? now == v : now != v;
}

/* Wall-clock nanoseconds (C11 timespec_get: a clock jump only lengthens or cuts one spin). */
static CT__UNUSED int64_t ct__ipool_now_ns(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

/* Waits until ct__ipool_ready(word, v, equal): spins about spin_ns (busy_spin_ns while the
   machine is marked busy), then sleeps on cv, counted in *asleep meanwhile so the waker
   knows to signal. */
static CT__UNUSED void ct__ipool_wait(const uint32_t *word, uint32_t v, bool equal,
                                      int64_t spin_ns, int64_t busy_spin_ns, pthread_cond_t *cv,
                                      int *asleep)
{
    int64_t until = 0, last = 0;
    for (int i = 0;; i++) {
        if (ct__ipool_ready(word, v, equal)) {
            return;
        }
        CT__PAR_PAUSE();
        if ((i & 63) == 0) {
            int64_t now = ct__ipool_now_ns();
            if (last && now - last > CT__PAR_PREEMPTED_NS) { /* descheduled mid-spin */
                CT__PAR_SET(&ct__ipool.busy_until_ns, now + CT__PAR_BUSY_NS);
            }
            last = now;
            if (!until) {
                bool busy = now < CT__PAR_RELAXED(&ct__ipool.busy_until_ns);
                until = now + (busy ? busy_spin_ns : spin_ns);
            }
            if (now > until) {
                break;
            }
        }
    }
    pthread_mutex_lock(&ct__ipool.lock);
    __atomic_add_fetch(asleep, 1, __ATOMIC_SEQ_CST);
    while (!ct__ipool_ready(word, v, equal)) {
        pthread_cond_wait(cv, &ct__ipool.lock);
    }
    __atomic_sub_fetch(asleep, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&ct__ipool.lock);
}

static CT__UNUSED void *ct__ipool_main(void *arg)
{
    int slot = (int)(intptr_t)arg;
    ct__par_in_job = 1; /* ops inside a task run serially */
    uint32_t seen = __atomic_load_n(&ct__ipool.seq, __ATOMIC_ACQUIRE);
    for (;;) {
        ct__ipool_wait(&ct__ipool.seq, seen, false, CT__PAR_SPIN_NS, CT__PAR_SPIN_BUSY_NS,
                       &ct__ipool.work, &ct__ipool.sleepers);
        seen = __atomic_load_n(&ct__ipool.seq, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&ct__ipool.stop, __ATOMIC_ACQUIRE)) {
            return NULL;
        }
        int64_t now = ct__ipool_now_ns();
        if (now - CT__PAR_RELAXED(&ct__ipool.job_start_ns) > CT__PAR_PREEMPTED_NS) {
            CT__PAR_SET(&ct__ipool.busy_until_ns, now + CT__PAR_BUSY_NS); /* woke late */
        }
        unsigned saved = 0;
        (void)ct__par_ftz_enter(&saved); /* a ctorch thread: keeps the mode */
        uint64_t claim = __atomic_load_n(&ct__ipool.claim, __ATOMIC_ACQUIRE);
        ct__ipool_run_tasks((uint32_t)(claim >> 32), slot);
    }
}

/* Bumps seq and wakes the sleeping workers. */
static CT__UNUSED void ct__ipool_bump(void)
{
    __atomic_add_fetch(&ct__ipool.seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ct__ipool.sleepers, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&ct__ipool.lock);
        pthread_cond_broadcast(&ct__ipool.work);
        pthread_mutex_unlock(&ct__ipool.lock);
    }
}

/* Runs a job on nslots slots (the caller is slot 0); the caller holds the owner lock. */
static CT__UNUSED void ct__ipool_run(int64_t ntasks, int nslots,
                                     void (*fn)(int64_t task, int slot, void *ctx), void *ctx)
{
    while (ct__ipool.nworkers < nslots - 1 &&
           pthread_create(&ct__ipool.threads[ct__ipool.nworkers], NULL, ct__ipool_main,
                          (void *)(intptr_t)(ct__ipool.nworkers + 1)) == 0) {
        ct__ipool.nworkers++;
    }
    nslots = ct__ipool.nworkers + 1 < nslots ? ct__ipool.nworkers + 1 : nslots;
    uint32_t gen = (uint32_t)(CT__PAR_RELAXED(&ct__ipool.claim) >> 32) + 1;
    /* Close the claim word first (no task index is ever >= 2^31), then write the fields with
       release: a worker late for the last job that reads a new field can no longer claim a
       task of that job with it (it ran a task of this job twice and counted it in done, which
       then went past ntasks: the caller waited forever). */
    __atomic_store_n(&ct__ipool.claim, (uint64_t)gen << 32 | 0xffffffffu, __ATOMIC_RELAXED);
    __atomic_store_n(&ct__ipool.fn, fn, __ATOMIC_RELEASE);
    __atomic_store_n(&ct__ipool.ctx, ctx, __ATOMIC_RELEASE);
    __atomic_store_n(&ct__ipool.ntasks, (uint32_t)ntasks, __ATOMIC_RELEASE);
    __atomic_store_n(&ct__ipool.nslots, nslots, __ATOMIC_RELEASE);
    CT__PAR_SET(&ct__ipool.done, 0u);
    CT__PAR_SET(&ct__ipool.job_start_ns, ct__ipool_now_ns());
    __atomic_store_n(&ct__ipool.claim, (uint64_t)gen << 32, __ATOMIC_RELEASE);
    ct__ipool_bump();
    ct__ipool_run_tasks(gen, 0);
    ct__ipool_wait(&ct__ipool.done, (uint32_t)ntasks, true, CT__PAR_DONE_SPIN_NS,
                   CT__PAR_DONE_SPIN_NS, &ct__ipool.done_cv, &ct__ipool.caller_asleep);
}

/* Stops and joins the workers (ct_parallel_shutdown); waits for a running job first. */
static CT__UNUSED void ct__ipool_shutdown(void)
{
    pthread_mutex_lock(&ct__ipool.owner);
    __atomic_store_n(&ct__ipool.stop, 1, __ATOMIC_RELEASE);
    ct__ipool_bump();
    for (int i = 0; i < ct__ipool.nworkers; i++) {
        pthread_join(ct__ipool.threads[i], NULL);
    }
    ct__ipool.nworkers = 0;
    __atomic_store_n(&ct__ipool.stop, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ct__ipool.owner);
}
#endif

void ct__parallel_tasks(int64_t ntasks, int nthreads,
                        void (*fn)(int64_t task, int slot, void *ctx), void *ctx)
{
    CT_ASSERT(ntasks < ((int64_t)1 << 31));
    unsigned saved = 0;
    bool changed = ct__par_ftz_enter(&saved);
    int was = ct__par_in_job;
    ct__par_in_job = 1;
    bool pooled = false;
#ifdef CT__PAR_PTHREADS
    if (nthreads > 1 && ntasks > 1 && !was && pthread_mutex_trylock(&ct__ipool.owner) == 0) {
        ct__ipool_run(ntasks, nthreads < ntasks ? nthreads : (int)ntasks, fn, ctx);
        pthread_mutex_unlock(&ct__ipool.owner);
        pooled = true;
    }
#else
    (void)nthreads;
#endif
    for (int64_t t = 0; !pooled && t < ntasks; t++) { /* one thread, or the pool is busy */
        fn(t, 0, ctx);
    }
    ct__par_in_job = was;
    ct__par_ftz_leave(changed, saved);
}

/* ---- parallel for ------------------------------------------------------------------- */
/* ct__parallel_for's chunks: at least a grain, at most CT__PAR_CHUNKS of them. */
#define CT__PAR_CHUNKS 64

typedef struct {
    void (*fn)(int64_t begin, int64_t end, void *ctx);
    void *ctx;
    int64_t n, chunk;
} ct__par_for_job;

static CT__UNUSED void ct__par_for_task(int64_t task, int slot, void *ctx)
{
    const ct__par_for_job *j = (const ct__par_for_job *)ctx;
    int64_t b = task * j->chunk, e = b + j->chunk < j->n ? b + j->chunk : j->n;
    (void)slot;
    j->fn(b, e, j->ctx);
}

void ct__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void *ctx),
                      void *ctx)
{
    if (n <= 0) {
        return;
    }
    grain = grain > 0 ? grain : 1;
    if (n / grain < 2) {
        unsigned saved = 0;
        bool changed = ct__par_ftz_enter(&saved);
        fn(0, n, ctx);
        ct__par_ftz_leave(changed, saved);
        return;
    }
    int64_t per = (n + CT__PAR_CHUNKS - 1) / CT__PAR_CHUNKS;
    ct__par_for_job j = {fn, ctx, n, per > grain ? per : grain};
    ct__parallel_tasks((n + j.chunk - 1) / j.chunk, ct__parallel_threads(), ct__par_for_task, &j);
}

/* ---- the inter-op pool -------------------------------------------------------------- */
enum { CT__FUT_QUEUED, CT__FUT_RUNNING, CT__FUT_DONE };

struct ct_future {
    void *(*fn)(void *arg);
    void *arg;
    void *result;
    int state;              /* CT__FUT_*, guarded by the pool lock */
    ct_future *prev, *next; /* queue links while queued */
};

static int ct__interop_threads = 0; /* ct_set_num_interop_threads's value; 0: not set */
static int ct__interop_locked = 0;  /* set called or pool started: no more sets */

/* Runs one task on the calling thread as an inter-op task (serial intra-op, flush mode). */
static CT__UNUSED void ct__par_run_task(ct_future *f)
{
    int was = ct__par_in_task;
    ct__par_in_task = 1;
    unsigned saved = 0;
    bool changed = ct__par_ftz_enter(&saved);
    f->result = f->fn(f->arg);
    ct__par_ftz_leave(changed, saved);
    ct__par_in_task = was;
}

#ifdef CT__PAR_PTHREADS
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a task was queued, or stop */
    pthread_cond_t done;     /* a task finished */
    ct_future *head, *tail;  /* FIFO of queued tasks */
    pthread_t *threads;
    int nthreads;
    int started, stop;
} ct__pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
              NULL, NULL, NULL, 0, 0, 0};

/* Unlinks f from the queue; the lock is held. */
static CT__UNUSED void ct__pool_unlink(ct_future *f)
{
    if (f->prev) {
        f->prev->next = f->next;
    } else {
        ct__pool.head = f->next;
    }
    if (f->next) {
        f->next->prev = f->prev;
    } else {
        ct__pool.tail = f->prev;
    }
    f->prev = f->next = NULL;
}

/* Takes queued f off the queue and runs it outside the lock, which is held on entry and
   exit; wakes the waiters. */
static CT__UNUSED void ct__pool_run_locked(ct_future *f)
{
    ct__pool_unlink(f);
    f->state = CT__FUT_RUNNING;
    pthread_mutex_unlock(&ct__pool.lock);
    ct__par_run_task(f);
    pthread_mutex_lock(&ct__pool.lock);
    f->state = CT__FUT_DONE;
    pthread_cond_broadcast(&ct__pool.done);
}

static CT__UNUSED void *ct__pool_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&ct__pool.lock);
    for (;;) {
        while (!ct__pool.head && !ct__pool.stop) {
            pthread_cond_wait(&ct__pool.work, &ct__pool.lock);
        }
        ct_future *f = ct__pool.head;
        if (!f) {
            break; /* stop, and the queue is drained */
        }
        ct__pool_run_locked(f);
    }
    pthread_mutex_unlock(&ct__pool.lock);
    return NULL;
}

/* Starts the threads; the lock is held. Leaves nthreads 0 when none could start. */
static CT__UNUSED void ct__pool_start(void)
{
    int n = ct_get_num_interop_threads();
    ct__pool.started = 1;
    CT__PAR_STORE(&ct__interop_locked, 1);
    ct__pool.threads = (pthread_t *)ct__malloc(sizeof(pthread_t) * (size_t)n);
    if (!ct__pool.threads) {
        return;
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&ct__pool.threads[ct__pool.nthreads], NULL, ct__pool_main, NULL)
            == 0) {
            ct__pool.nthreads++;
        }
    }
}
#endif

ct_status ct_set_num_interop_threads(int n)
{
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, "ct_set_num_interop_threads",
                        "Expected positive number of threads");
    }
#ifdef CT__PAR_PTHREADS
    pthread_mutex_lock(&ct__pool.lock);
#endif
    ct_status st = CT_OK;
    if (CT__PAR_LOAD(&ct__interop_locked)) {
        st = ct__fail(CT_ERR_STATE, "ct_set_num_interop_threads",
                      "Error: cannot set number of interop threads after parallel work has "
                      "started or set_num_interop_threads called");
    } else {
        CT__PAR_STORE(&ct__interop_threads, n);
        CT__PAR_STORE(&ct__interop_locked, 1);
    }
#ifdef CT__PAR_PTHREADS
    pthread_mutex_unlock(&ct__pool.lock);
#endif
    return st;
}

int ct_get_num_interop_threads(void)
{
#ifdef CT__PAR_PTHREADS
    int n = CT__PAR_LOAD(&ct__interop_threads);
    return n > 0 ? n : ct__par_cores();
#else
    return 1;
#endif
}

ct_future *ct_fork(void *(*fn)(void *arg), void *arg)
{
    if (!fn) {
        ct__fail(CT_ERR_NULL_ARG, "ct_fork", "fn must not be NULL");
        return NULL;
    }
    ct_future *f = (ct_future *)ct__malloc(sizeof(ct_future));
    if (!f) {
        ct__fail(CT_ERR_OOM, "ct_fork", "out of memory allocating a future");
        return NULL;
    }
    f->fn = fn;
    f->arg = arg;
    f->result = NULL;
    f->prev = f->next = NULL;
    f->state = CT__FUT_QUEUED;
#ifdef CT__PAR_PTHREADS
    pthread_mutex_lock(&ct__pool.lock);
    if (!ct__pool.started) {
        ct__pool_start();
    }
    if (ct__pool.nthreads > 0) {
        f->prev = ct__pool.tail;
        if (ct__pool.tail) {
            ct__pool.tail->next = f;
        } else {
            ct__pool.head = f;
        }
        ct__pool.tail = f;
        pthread_cond_signal(&ct__pool.work);
        pthread_mutex_unlock(&ct__pool.lock);
        return f;
    }
    pthread_mutex_unlock(&ct__pool.lock);
#else
    CT__PAR_STORE(&ct__interop_locked, 1);
#endif
    ct__par_run_task(f); /* no pool: synchronous */
    f->state = CT__FUT_DONE;
    return f;
}

void *ct_wait(ct_future *f)
{
    if (!f) {
        return NULL;
    }
#ifdef CT__PAR_PTHREADS
    pthread_mutex_lock(&ct__pool.lock);
    if (f->state == CT__FUT_QUEUED) {
        /* Not picked up yet: run it here, so nested fork/wait cannot deadlock. */
        ct__pool_run_locked(f);
    }
    while (f->state != CT__FUT_DONE) {
        pthread_cond_wait(&ct__pool.done, &ct__pool.lock);
    }
    pthread_mutex_unlock(&ct__pool.lock);
#endif
    void *result = f->result;
    ct__free(f);
    return result;
}

ct_status ct_parallel_shutdown(void)
{
    if (ct__par_in_task || ct__par_in_job) {
        return ct__fail(CT_ERR_STATE, "ct_parallel_shutdown",
                        "cannot shut the thread pools down from inside a task");
    }
#ifdef CT__PAR_PTHREADS
    ct__ipool_shutdown();
    pthread_mutex_lock(&ct__pool.lock);
    ct__pool.stop = 1;
    pthread_cond_broadcast(&ct__pool.work);
    pthread_mutex_unlock(&ct__pool.lock);
    for (int i = 0; i < ct__pool.nthreads; i++) {
        pthread_join(ct__pool.threads[i], NULL);
    }
    pthread_mutex_lock(&ct__pool.lock);
    ct__free(ct__pool.threads);
    ct__pool.threads = NULL;
    ct__pool.nthreads = 0;
    ct__pool.started = 0;
    ct__pool.stop = 0;
    pthread_mutex_unlock(&ct__pool.lock);
#endif
    CT__PAR_STORE(&ct__interop_threads, 0);
    CT__PAR_STORE(&ct__interop_locked, 0);
    return CT_OK;
}

/* ---- parallel_info ------------------------------------------------------------------ */
/* Appends printf-style text at *len into buf (capacity n), counting what would be needed. */
static CT__UNUSED void ct__par_appendf(char *buf, size_t n, size_t *len, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static CT__UNUSED void ct__par_appendf(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = buf && *len < n ? buf + *len : NULL;
    int k = vsnprintf(dst, dst ? n - *len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) {
        *len += (size_t)k;
    }
}

size_t ct_parallel_info_string(char *buf, size_t n)
{
    size_t len = 0;
    if (buf && n) {
        buf[0] = '\0';
    }
    ct__par_appendf(buf, n, &len, "ctorch/Parallel:\n\tct_get_num_threads() : %d\n"
                    "\tct_get_num_interop_threads() : %d\n", ct_get_num_threads(),
                    ct_get_num_interop_threads());
    ct__par_appendf(buf, n, &len, "OpenMP not used\n");
#if defined(CT__HAS_AVX512)
    const char *isa = "AVX-512";
#elif defined(CT__HAS_AVX2)
    const char *isa = "AVX2+FMA";
#elif defined(CT__HAS_NEON)
    const char *isa = "NEON";
#else
    const char *isa = "portable C";
#endif
#if defined(CT__PAR_FTZ_X86) && defined(__x86_64__)
    const char *ftz_hw = "x86 MXCSR FTZ|DAZ";
#elif defined(CT__PAR_FTZ_X86)
    const char *ftz_hw = "x86 MXCSR FTZ";
#elif defined(CT__PAR_FTZ_ARM)
    const char *ftz_hw = "aarch64 FPCR.FZ";
#else
    const char *ftz_hw = NULL;
#endif
#ifdef CT__PAR_PTHREADS
    const char *backend = "ctorch pool (pthreads; dynamic chunks, spin then sleep)";
#else
    const char *backend = "none (serial)";
#endif
    ct__par_appendf(buf, n, &len, "Intra-op parallelism settings:\n\tbackend : %s\n"
                    "\tgrain size : %d elements\n\tflush denormal : %s%s%s%s\n"
                    "\tISA (compile time) : %s\n", backend, (int)CT__GRAIN,
                    ftz_hw ? (CT__PAR_LOAD(&ct__par_ftz) ? "on" : "off") : "not supported",
                    ftz_hw ? " (" : "", ftz_hw ? ftz_hw : "", ftz_hw ? ")" : "", isa);
#ifdef CT__PAR_PTHREADS
    const char *interop = "pthreads";
#else
    const char *interop = "none (ct_fork runs synchronously)";
#endif
    ct__par_appendf(buf, n, &len, "Inter-op parallelism settings:\n\tbackend : %s\n"
                    "number of cores : %d physical, %d logical\n", interop, ct__par_cores(),
                    ct__par_logical_cpus());
    ct__par_appendf(buf, n, &len, "Environment variables:\n");
    const char *names[2] = {"OMP_NUM_THREADS", "CTORCH_NUM_THREADS"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        ct__par_appendf(buf, n, &len, "\t%s : %s\n", names[i], v ? v : "[not set]");
    }
    ct__par_appendf(buf, n, &len, "ctorch parallel backend: %s\n", backend);
    return len;
}

#ifndef CTORCH_NO_STDIO
void ct_parallel_info(FILE *f)
{
    if (ct__null("ct_parallel_info", f)) {
        return;
    }
    size_t need = ct_parallel_info_string(NULL, 0);
    char *text = (char *)ct__malloc(need + 1);
    if (!text) {
        return;
    }
    ct_parallel_info_string(text, need + 1);
    fputs(text, f);
    ct__free(text);
}
#endif

/* ---- spin lock ---------------------------------------------------------------------- */
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

#undef CT__PAR_SPIN_NS
#undef CT__PAR_SPIN_BUSY_NS
#undef CT__PAR_PREEMPTED_NS
#undef CT__PAR_BUSY_NS
#undef CT__PAR_DONE_SPIN_NS
#undef CT__PAR_PAUSE
#undef CT__PAR_RELAXED
#undef CT__PAR_SET
#undef CT__PAR_CHUNKS
#undef CT__PAR_PTHREADS
#undef CT__PAR_LOAD
#undef CT__PAR_STORE
#undef CT__PAR_FTZ_X86
#undef CT__PAR_FTZ_ARM
#undef CT__PAR_FTZ_BITS

// >>part core/rng.c
/* core/rng.c - mt19937 and PyTorch's CPU sampling kernels, draw for draw and bit for bit.
 *
 * The sampling functions are ops (uniform_, normal_, bernoulli_, random_ in place; rand, randn,
 * randint, randperm and the _like forms as random factories) through the one entry, the
 * generator in call.generator. Every kernel resolves the generator (NULL: the default one) and
 * holds its lock for the whole call, as PyTorch's kernels hold CPUGeneratorImpl::mutex_, so
 * one call's draws are consecutive in the stream. Elements are visited in the order of
 * PyTorch's TensorIterator for a nullary op: linearly when contiguous, else the smallest
 * stride innermost.
 * Floating point: each multiply-add that PyTorch's compiled kernels fuse is an explicit
 * fma/fmaf, and no other product feeds an addition, so no compiler flag (-ffp-contract,
 * -std=c11 or gnu11, -O level) changes a bit.
 */

#if defined(CT__HAS_AVX2)
#include <immintrin.h>
#endif

#define CT__MT_N 624
#define CT__MT_M 397
#define CT__DEFAULT_SEED 67280421310721ull

struct ct_generator {
    ct__mutex lock; /* held during every draw (PyTorch's CPUGeneratorImpl::mutex_) */
    uint32_t state[CT__MT_N];
    int index;
    uint64_t seed;
    bool has_next_normal; /* cached second Box-Muller sample of normal_distribution<double> */
    double next_normal;
};

static ct_generator ct__default_gen; /* its lock also guards ct__default_gen_ready */
static bool ct__default_gen_ready = false;

/* ---- the engine (the caller holds g->lock) ------------------------------------------- */

static void ct__rng_seed(ct_generator *g, uint64_t seed)
{
    g->seed = seed;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int j = 1; j < CT__MT_N; j++) {
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + (uint32_t)j;
    }
    g->index = CT__MT_N;
    g->has_next_normal = false;
}

/* state[k] from its successor and the word M ahead (mt19937's twist). */
static uint32_t ct__rng_twist(uint32_t cur, uint32_t next, uint32_t ahead)
{
    uint32_t y = (cur & 0x80000000u) | (next & 0x7fffffffu);
    return ahead ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
}

/* CPUGeneratorImpl::random(). */
static uint32_t ct__rng_u32(ct_generator *g)
{
    if (g->index >= CT__MT_N) { /* the next 624 words, in three runs without wrap-around */
        uint32_t *s = g->state;
        int k = 0;
        for (; k < CT__MT_N - CT__MT_M; k++) {
            s[k] = ct__rng_twist(s[k], s[k + 1], s[k + CT__MT_M]);
        }
        for (; k < CT__MT_N - 1; k++) {
            s[k] = ct__rng_twist(s[k], s[k + 1], s[k + CT__MT_M - CT__MT_N]);
        }
        s[k] = ct__rng_twist(s[k], s[0], s[CT__MT_M - 1]);
        g->index = 0;
    }
    uint32_t y = g->state[g->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* CPUGeneratorImpl::random64(): the first draw is the high half. */
static uint64_t ct__rng_u64(ct_generator *g)
{
    uint64_t hi = ct__rng_u32(g), lo = ct__rng_u32(g);
    return (hi << 32) | lo;
}

/* uniform_real_distribution<float>(from, to): 24 random bits, fused x * (to - from) + from. */
static float ct__rng_uniform_f32(ct_generator *g, float from, float to)
{
    float x = (float)(ct__rng_u32(g) & 0xffffffu) * (1.0f / 16777216.0f);
    return fmaf(x, to - from, from);
}

/* uniform_real_distribution<double>(from, to): 53 random bits of random64(). */
static double ct__rng_uniform_f64(ct_generator *g, double from, double to)
{
    double x = (double)(ct__rng_u64(g) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
    return fma(x, to - from, from);
}

/* normal_distribution<double>: Box-Muller on two uniforms, the sine half cached. */
static double ct__rng_normal_f64(ct_generator *g, double mean, double std)
{
    if (g->has_next_normal) {
        g->has_next_normal = false;
        return fma(g->next_normal, std, mean);
    }
    double u1 = ct__rng_uniform_f64(g, 0, 1), u2 = ct__rng_uniform_f64(g, 0, 1);
    double r = sqrt(-2.0 * log1p(-u2)), theta = 2.0 * 3.14159265358979323846 * u1;
    g->has_next_normal = true;
    g->next_normal = r * sin(theta);
    return fma(r * cos(theta), std, mean);
}

/* Resolves g and takes its lock; every public entry pairs it with ct__rng_unlock. */
static ct_generator *ct__rng_lock(ct_generator *g)
{
    g = g ? g : ct_default_generator();
    ct__mutex_lock(&g->lock);
    return g;
}

static void ct__rng_unlock(ct_generator *g)
{
    ct__mutex_unlock(&g->lock);
}

/* ---- generators ---------------------------------------------------------------------- */

void ct_generator_manual_seed(ct_generator *g, uint64_t seed)
{
    g = ct__rng_lock(g);
    ct__rng_seed(g, seed);
    ct__rng_unlock(g);
}

ct_generator *ct_generator_new(void)
{
    ct_generator *g = (ct_generator *)ct__calloc(sizeof(ct_generator));
    if (!g) {
        ct__fail(CT_ERR_OOM, "ct_generator_new", "out of memory");
        return NULL;
    }
    ct__rng_seed(g, CT__DEFAULT_SEED);
    return g;
}

void ct_generator_free(ct_generator *g)
{
    ct__free(g);
}

ct_generator *ct_default_generator(void)
{
    ct__mutex_lock(&ct__default_gen.lock);
    if (!ct__default_gen_ready) {
        ct__default_gen_ready = true;
        ct__rng_seed(&ct__default_gen, CT__DEFAULT_SEED);
    }
    ct__mutex_unlock(&ct__default_gen.lock);
    return &ct__default_gen;
}

void ct_manual_seed(uint64_t seed)
{
    ct_generator_manual_seed(NULL, seed);
}

uint64_t ct_generator_initial_seed(const ct_generator *g)
{
    ct_generator *locked = ct__rng_lock((ct_generator *)g); /* the lock is mutable state */
    uint64_t seed = locked->seed;
    ct__rng_unlock(locked);
    return seed;
}

/* ---- element order and stores -------------------------------------------------------- */

/* A draw into one element of dtype dt; params is the sampler's own. */
typedef void (*ct__rng_draw_fn)(ct_generator *g, char *dst, ct_dtype dt, const void *params);

/* Dims of t innermost first, as TensorIterator::reorder_dimensions sorts one output: by
   stride, the smaller inner; on equal strides the smaller size inner. */
static void ct__rng_dim_order(const ct_tensor *t, int *perm)
{
    for (int k = 0; k < t->ndim; k++) {
        perm[k] = t->ndim - 1 - k;
    }
    for (int i = 1; i < t->ndim; i++) {
        for (int d1 = i, d0 = i - 1; d0 >= 0; d0--) {
            int64_t s0 = t->strides[perm[d0]], s1 = t->strides[perm[d1]];
            bool swap = s0 != 0 && s1 != 0 &&
                        (s0 > s1 || (s0 == s1 && t->sizes[perm[d0]] > t->sizes[perm[d1]]));
            if (swap) {
                int tmp = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = tmp;
                d1 = d0;
            } else if (s0 != 0 && s1 != 0 && s0 < s1) {
                break;
            }
        }
    }
}

/* Calls draw for each element of t in PyTorch's order. */
static void ct__rng_fill(ct_tensor *t, ct_generator *g, ct__rng_draw_fn draw, const void *params)
{
    size_t es = ct_dtype_size(t->dtype);
    char *base = ct__data(t);
    int64_t n = ct_numel(t);
    if (ct_is_contiguous(t)) {
        for (int64_t i = 0; i < n; i++) {
            draw(g, base + (size_t)i * es, t->dtype, params);
        }
        return;
    }
    int perm[CT_MAX_DIMS];
    int64_t idx[CT_MAX_DIMS] = {0};
    ct__rng_dim_order(t, perm);
    int64_t off = 0; /* elements */
    for (int64_t i = 0; i < n; i++) {
        draw(g, base + off * (int64_t)es, t->dtype, params);
        for (int k = 0; k < t->ndim; k++) { /* odometer, innermost dim first */
            int d = perm[k];
            off += t->strides[d];
            if (++idx[d] < t->sizes[d]) {
                break;
            }
            off -= t->strides[d] * t->sizes[d];
            idx[d] = 0;
        }
    }
}

/* static_cast<scalar_t>(v) of an int64 into any dtype (int64 -> float rounds once). */
static void ct__rng_store_i64(char *p, ct_dtype dt, int64_t v)
{
    switch (dt) {
    case CT_BOOL: *(bool *)p = v != 0; break;
    case CT_UINT8: *(uint8_t *)p = (uint8_t)(uint64_t)v; break;
    case CT_INT8: *(int8_t *)p = (int8_t)v; break;
    case CT_INT16: *(int16_t *)p = (int16_t)v; break;
    case CT_INT32: *(int32_t *)p = (int32_t)v; break;
    case CT_INT64: *(int64_t *)p = v; break;
    case CT_FLOAT32: *(float *)p = (float)v; break;
    case CT_FLOAT64: *(double *)p = (double)v; break;
    default: break;
    }
}

/* static_cast<scalar_t>(v) of a double into a float dtype. */
static void ct__rng_store_f64(char *p, ct_dtype dt, double v)
{
    if (dt == CT_FLOAT32) {
        *(float *)p = (float)v;
    } else {
        *(double *)p = v;
    }
}

/* The in-place random ops' meta: self is the output and gives the kernel's dtype. */
static bool ct__rng_self_meta(ct_op_call *c)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    c->dtype = self->dtype;
    c->outputs[c->n_outputs++] = self;
    return true;
}

/* uniform_ and normal_ (and the factories over them) draw floating point values only. */
static bool ct__rng_check_float(const ct_op_call *c, ct_dtype dtype)
{
    if (!ct_dtype_is_floating_point(dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"%s\" not implemented for '%s'", c->fn,
                 ct_dtype_name(dtype));
        return false;
    }
    return true;
}

/* ---- uniform_ and bernoulli_ --------------------------------------------------------- */

typedef struct ct__rng_range {
    double from, to;
} ct__rng_range;

static void ct__rng_draw_uniform(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    const ct__rng_range *r = (const ct__rng_range *)params;
    if (dt == CT_FLOAT32) {
        *(float *)dst = ct__rng_uniform_f32(g, (float)r->from, (float)r->to);
    } else {
        *(double *)dst = ct__rng_uniform_f64(g, r->from, r->to);
    }
}

/* Fills t with U(from, to) from g (NULL: the default generator). */
static void ct__rng_uniform(ct_tensor *t, ct_generator *g, double from, double to)
{
    ct__rng_range r = {from, to};
    g = ct__rng_lock(g);
    ct__rng_fill(t, g, ct__rng_draw_uniform, &r);
    ct__rng_unlock(g);
}

/* uniform_: (self, float from, float to). */
static bool ct__uniform_meta(ct_op_call *c)
{
    double from = c->attrs[0].f, to = c->attrs[1].f;
    if (!ct__rng_check_float(c, c->inputs[0]->dtype)) {
        return false;
    }
    if (!(from <= to)) {
        ct__fail(CT_ERR_VALUE, c->fn, "uniform_ expects to return a [from, to) range, but found "
                 "from=%g > to=%g", from, to);
        return false;
    }
    return ct__rng_self_meta(c);
}

static ct_status ct__uniform_kernel(ct_op_call *c)
{
    ct__rng_uniform(c->outputs[0], c->generator, c->attrs[0].f, c->attrs[1].f);
    return CT_OK;
}

/* bernoulli_distribution<double>: uniform_real_distribution<double>(0, 1) < p. */
static void ct__rng_draw_bernoulli(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    double p = *(const double *)params;
    ct__rng_store_i64(dst, dt, ct__rng_uniform_f64(g, 0, 1) < p);
}

/* bernoulli_: (self, float p). */
static bool ct__bernoulli_meta(ct_op_call *c)
{
    double p = c->attrs[0].f;
    if (!(p >= 0 && p <= 1)) {
        ct__fail(CT_ERR_VALUE, c->fn, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
        return false;
    }
    return ct__rng_self_meta(c);
}

static ct_status ct__bernoulli_kernel(ct_op_call *c)
{
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_fill(c->outputs[0], g, ct__rng_draw_bernoulli, &c->attrs[0].f);
    ct__rng_unlock(g);
    return CT_OK;
}

/* ---- normal_ ------------------------------------------------------------------------- */

/* The float32 Box-Muller block: the instructions of PyTorch's AVX2 kernel under CT__HAS_AVX2,
   else the same operations one lane at a time (the reference; both give the same bits). */
#if defined(CT__HAS_AVX2)
#define CT__RNG_SPLAT(v) _mm256_set1_ps(v)
/* Natural log of x in (0, 1] per lane as avx_mathfun.h's log256_ps (cephes logf), with the
   fusions gcc makes of it in PyTorch's AVX2 kernel. */
static __m256 ct__rng_logf8(__m256 x)
{
    const __m256 one = CT__RNG_SPLAT(1.0f);
    __m256i bits = _mm256_castps_si256(x);
    __m256i expo = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0x7f));
    __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(expo), one);
    bits = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(~0x7f800000)),
                           _mm256_set1_epi32(0x3f000000));
    x = _mm256_castsi256_ps(bits);
    __m256 small = _mm256_cmp_ps(x, CT__RNG_SPLAT(0.707106781186547524f), _CMP_LT_OS);
    __m256 tmp = _mm256_and_ps(x, small);
    x = _mm256_sub_ps(x, one);
    e = _mm256_sub_ps(e, _mm256_and_ps(one, small));
    x = _mm256_add_ps(x, tmp);
    __m256 z = _mm256_mul_ps(x, x);
    static const float p[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                               -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                               2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
    __m256 y = CT__RNG_SPLAT(p[0]);
    for (int k = 1; k < 9; k++) {
        y = _mm256_fmadd_ps(y, x, CT__RNG_SPLAT(p[k]));
    }
    y = _mm256_mul_ps(y, x);
    y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, CT__RNG_SPLAT(-2.12194440e-4f)));
    y = _mm256_fnmadd_ps(z, CT__RNG_SPLAT(0.5f), y);
    x = _mm256_add_ps(x, y);
    return _mm256_fmadd_ps(e, CT__RNG_SPLAT(0.693359375f), x);
}

/* Sine and cosine of x >= 0 per lane as avx_mathfun.h's sincos256_ps (cephes sinf/cosf over
   octants), with gcc's fusions in PyTorch's AVX2 kernel. */
static void ct__rng_sincosf8(__m256 x, __m256 *s, __m256 *c)
{
    __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, CT__RNG_SPLAT(1.27323954473516f)));
    j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
    __m256 y = _mm256_cvtepi32_ps(j);
    __m256i four = _mm256_set1_epi32(4);
    __m256 sign_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, four), 29));
    __m256i j2 = _mm256_sub_epi32(j, _mm256_set1_epi32(2));
    __m256 sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_andnot_si256(j2, four), 29));
    __m256i two = _mm256_set1_epi32(2);
    __m256 sin_poly = _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_and_si256(j, two), _mm256_setzero_si256()));
    x = _mm256_fmadd_ps(y, CT__RNG_SPLAT(-0.78515625f), x);
    x = _mm256_fmadd_ps(y, CT__RNG_SPLAT(-2.4187564849853515625e-4f), x);
    x = _mm256_fmadd_ps(y, CT__RNG_SPLAT(-3.77489497744594108e-8f), x);
    __m256 z = _mm256_mul_ps(x, x);
    __m256 yc = _mm256_fmadd_ps(CT__RNG_SPLAT(2.443315711809948E-005f), z,
                                CT__RNG_SPLAT(-1.388731625493765E-003f));
    yc = _mm256_fmadd_ps(yc, z, CT__RNG_SPLAT(4.166664568298827E-002f));
    yc = _mm256_mul_ps(yc, z);
    yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, CT__RNG_SPLAT(0.5f)));
    yc = _mm256_add_ps(yc, CT__RNG_SPLAT(1.0f));
    __m256 ys = _mm256_fmadd_ps(CT__RNG_SPLAT(-1.9515295891E-4f), z,
                                CT__RNG_SPLAT(8.3321608736E-3f));
    ys = _mm256_fmadd_ps(ys, z, CT__RNG_SPLAT(-1.6666654611E-1f));
    ys = _mm256_mul_ps(ys, z);
    ys = _mm256_fmadd_ps(ys, x, x);
    __m256 sin_part = _mm256_and_ps(sin_poly, ys), cos_part = _mm256_andnot_ps(sin_poly, yc);
    *s = _mm256_xor_ps(_mm256_add_ps(cos_part, sin_part), sign_sin);
    *c = _mm256_xor_ps(_mm256_add_ps(_mm256_sub_ps(yc, cos_part), _mm256_sub_ps(ys, sin_part)),
                       sign_cos);
}

/* normal_fill_16_AVX2: Box-Muller over the 8 pairs (d[j], d[j + 8]) of uniforms in [0, 1). */
static void ct__rng_box_muller16_f32(float *d, float mean, float std)
{
    __m256 lg = ct__rng_logf8(_mm256_sub_ps(CT__RNG_SPLAT(1.0f), _mm256_loadu_ps(d)));
    __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(CT__RNG_SPLAT(-2.0f), lg));
    __m256 theta = _mm256_mul_ps(CT__RNG_SPLAT((float)(2.0 * 3.14159265358979323846)),
                                 _mm256_loadu_ps(d + 8));
    __m256 s, c;
    ct__rng_sincosf8(theta, &s, &c);
    __m256 vmean = CT__RNG_SPLAT(mean), vstd = CT__RNG_SPLAT(std);
    _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, c), vstd, vmean));
    _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, s), vstd, vmean));
}
#undef CT__RNG_SPLAT
#else
/* Natural log of x in (0, 1] as avx_mathfun.h's log256_ps computes each lane (cephes logf),
   with the fusions gcc makes of it in PyTorch's AVX2 kernel. */
static float ct__rng_logf(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    float e = (float)((int32_t)(bits >> 23) - 0x7f) + 1.0f;
    bits = (bits & ~0x7f800000u) | 0x3f000000u; /* mantissa in [0.5, 1) */
    memcpy(&x, &bits, sizeof x);
    bool small = x < 0.707106781186547524f;
    float tmp = small ? x : 0.0f;
    x = x - 1.0f;
    e = e - (small ? 1.0f : 0.0f);
    x = x + tmp;
    float z = x * x;
    static const float p[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                               -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                               2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
    float y = p[0];
    for (int k = 1; k < 9; k++) {
        y = fmaf(y, x, p[k]);
    }
    y = y * x;
    y = fmaf(y, z, e * -2.12194440e-4f);
    y = fmaf(-z, 0.5f, y);
    x = x + y;
    return fmaf(e, 0.693359375f, x);
}

static float ct__rng_flip_sign(float v, uint32_t sign)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits ^= sign;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Sine and cosine of x >= 0 as avx_mathfun.h's sincos256_ps computes each lane (cephes
   sinf/cosf over octants), with gcc's fusions in PyTorch's AVX2 kernel. */
static void ct__rng_sincosf(float x, float *s, float *c)
{
    int32_t j = ((int32_t)(x * 1.27323954473516f) + 1) & ~1; /* x * 4/pi, rounded up to even */
    float y = (float)j;
    uint32_t sign_sin = (uint32_t)(j & 4) << 29;
    uint32_t sign_cos = (uint32_t)(~(j - 2) & 4) << 29;
    bool sin_poly = (j & 2) == 0;
    x = fmaf(y, -0.78515625f, x); /* x - y * pi/4 in three parts */
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    float z = x * x;
    float yc = fmaf(2.443315711809948E-005f, z, -1.388731625493765E-003f);
    yc = fmaf(yc, z, 4.166664568298827E-002f);
    yc = yc * z;
    yc = fmaf(yc, z, -(z * 0.5f)) + 1.0f;
    float ys = fmaf(-1.9515295891E-4f, z, 8.3321608736E-3f);
    ys = fmaf(ys, z, -1.6666654611E-1f);
    ys = ys * z;
    ys = fmaf(ys, x, x);
    float sin_part = sin_poly ? ys : 0.0f, cos_part = sin_poly ? 0.0f : yc;
    *s = ct__rng_flip_sign(cos_part + sin_part, sign_sin);
    *c = ct__rng_flip_sign((yc - cos_part) + (ys - sin_part), sign_cos);
}

/* normal_fill_16_AVX2: Box-Muller over the 8 pairs (d[j], d[j + 8]) of uniforms in [0, 1). */
static void ct__rng_box_muller16_f32(float *d, float mean, float std)
{
    const float two_pi = (float)(2.0 * 3.14159265358979323846);
    for (int j = 0; j < 8; j++) {
        float radius = sqrtf(-2.0f * ct__rng_logf(1.0f - d[j]));
        float s, c;
        ct__rng_sincosf(two_pi * d[j + 8], &s, &c);
        d[j] = fmaf(radius * c, std, mean);
        d[j + 8] = fmaf(radius * s, std, mean);
    }
}
#endif

/* normal_fill_16<double>: the same with libm's log, cos and sin. */
static void ct__rng_box_muller16_f64(double *d, double mean, double std)
{
    for (int j = 0; j < 8; j++) {
        double radius = sqrt(-2.0 * log(1.0 - d[j]));
        double theta = 2.0 * 3.14159265358979323846 * d[j + 8];
        d[j] = fma(radius * cos(theta), std, mean);
        d[j + 8] = fma(radius * sin(theta), std, mean);
    }
}

/* normal_fill / normal_fill_AVX2 over n >= 16 contiguous values: n uniforms, Box-Muller on
   each block of 16, and when n % 16 != 0 the last 16 redrawn and transformed again. */
#define CT__RNG_NORMAL_FILL(T, S)                                                              \
    static void ct__rng_normal_fill_##S(ct_generator *g, T *d, int64_t n, T mean, T std)       \
    {                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                      \
            d[i] = ct__rng_uniform_##S(g, 0, 1);                                               \
        }                                                                                      \
        for (int64_t i = 0; i + 16 <= n; i += 16) {                                            \
            ct__rng_box_muller16_##S(d + i, mean, std);                                        \
        }                                                                                      \
        if (n % 16 != 0) {                                                                     \
            for (int64_t i = n - 16; i < n; i++) {                                             \
                d[i] = ct__rng_uniform_##S(g, 0, 1);                                           \
            }                                                                                  \
            ct__rng_box_muller16_##S(d + n - 16, mean, std);                                   \
        }                                                                                      \
    }
CT__RNG_NORMAL_FILL(float, f32)
CT__RNG_NORMAL_FILL(double, f64)
#undef CT__RNG_NORMAL_FILL

typedef struct ct__rng_moments {
    double mean, std;
} ct__rng_moments;

static void ct__rng_draw_normal(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    const ct__rng_moments *m = (const ct__rng_moments *)params;
    ct__rng_store_f64(dst, dt, ct__rng_normal_f64(g, m->mean, m->std));
}

/* Fills t with N(mean, std^2) from g (NULL: the default generator). */
static void ct__rng_normal(ct_tensor *t, ct_generator *g, double mean, double std)
{
    int64_t n = ct_numel(t);
    g = ct__rng_lock(g);
    if (n >= 16 && ct_is_contiguous(t) && t->dtype == CT_FLOAT32) {
        ct__rng_normal_fill_f32(g, (float *)ct__data(t), n, (float)mean, (float)std);
    } else if (n >= 16 && ct_is_contiguous(t)) {
        ct__rng_normal_fill_f64(g, (double *)ct__data(t), n, mean, std);
    } else {
        ct__rng_moments m = {mean, std};
        ct__rng_fill(t, g, ct__rng_draw_normal, &m);
    }
    ct__rng_unlock(g);
}

/* normal_: (self, float mean, float std). */
static bool ct__normal_meta(ct_op_call *c)
{
    double std = c->attrs[1].f;
    if (!ct__rng_check_float(c, c->inputs[0]->dtype)) {
        return false;
    }
    if (std < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "normal expects std >= 0.0, but found std %g", std);
        return false;
    }
    return ct__rng_self_meta(c);
}

static ct_status ct__normal_kernel(ct_op_call *c)
{
    ct__rng_normal(c->outputs[0], c->generator, c->attrs[0].f, c->attrs[1].f);
    return CT_OK;
}

/* ---- integers ------------------------------------------------------------------------ */

typedef struct ct__rng_int_range {
    uint64_t range;
    int64_t base;
} ct__rng_int_range;

/* uniform_int_from_to_distribution: random64() for a range of 2^28 or more (any dtype), else
   random() (PyTorch keeps the modulo's skew below about 5% this way). */
static void ct__rng_draw_int(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    const ct__rng_int_range *r = (const ct__rng_int_range *)params;
    uint64_t bits = r->range >= (1ull << 28) ? ct__rng_u64(g) : ct__rng_u32(g);
    ct__rng_store_i64(dst, dt, (int64_t)(bits % r->range + (uint64_t)r->base));
}

/* uniform_int_distribution: random() % (max + 1) for narrow integers, random64() % 2^63 for
   int64, random() & 1 for bool, random() % (2^24 + 1) for float32 and random64() %
   (2^53 + 1) for float64. */
static void ct__rng_draw_full(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    (void)params;
    switch (dt) {
    case CT_BOOL: ct__rng_store_i64(dst, dt, ct__rng_u32(g) & 1u); break;
    case CT_UINT8: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 256u); break;
    case CT_INT8: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 128u); break;
    case CT_INT16: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 32768u); break;
    case CT_INT32: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 2147483648u); break;
    case CT_INT64: ct__rng_store_i64(dst, dt, (int64_t)(ct__rng_u64(g) & INT64_MAX)); break;
    case CT_FLOAT32: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % ((1u << 24) + 1)); break;
    default: ct__rng_store_i64(dst, dt, (int64_t)(ct__rng_u64(g) % ((1ull << 53) + 1))); break;
    }
}

static ct_status ct__random_kernel(ct_op_call *c)
{
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_fill(c->outputs[0], g, ct__rng_draw_full, NULL);
    ct__rng_unlock(g);
    return CT_OK;
}

/* check_from_to_in_range: an integer dtype must hold `from` and `to - 1` (floats hold every
   int64, rounded). The message names the type as PyTorch's does. */
static bool ct__rng_check_int_range(const char *op, int64_t from, int64_t to_inc, ct_dtype dt)
{
    static const struct {
        ct_dtype dtype;
        int64_t min, max;
        const char *name;
    } lim[] = {{CT_BOOL, 0, 1, "bool"},
               {CT_UINT8, 0, 255, "unsigned char"},
               {CT_INT8, -128, 127, "signed char"},
               {CT_INT16, -32768, 32767, "short int"},
               {CT_INT32, INT32_MIN, INT32_MAX, "int"}};
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
        if (lim[k].dtype != dt) {
            continue;
        }
        const char *name = from < lim[k].min || from > lim[k].max       ? "from"
                           : to_inc < lim[k].min || to_inc > lim[k].max ? "to - 1"
                                                                        : NULL;
        if (name) {
            ct__fail(CT_ERR_VALUE, op, "%s is out of bounds for %s", name, lim[k].name);
            return false;
        }
    }
    return true;
}

/* v rounded to float dt and back to int64 (saturated at INT64_MAX, where C would overflow). */
static int64_t ct__rng_round_int(int64_t v, ct_dtype dt)
{
    double r = dt == CT_FLOAT32 ? (double)(float)v : (double)v;
    return r >= 9223372036854775808.0 ? INT64_MAX : (int64_t)r;
}

/* floor(log2(|v|)) for v != 0. */
static int ct__rng_log2(int64_t v)
{
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int n = 0;
    while (a >>= 1) {
        n++;
    }
    return n;
}

/* update_from / update_to: for a float dtype, a bound whose rounding would leave [from, to)
   moves inward by one step of the dtype's spacing there. */
static void ct__rng_float_bounds(int64_t *from, int64_t *to, ct_dtype dt)
{
    int digits = dt == CT_FLOAT32 ? 24 : 53;
    int64_t from1 = ct__rng_round_int(*from + 1, dt), to1 = ct__rng_round_int(*to - 1, dt);
    if (from1 < *from) {
        *from = from1 + ((int64_t)1 << (ct__rng_log2(*from + 1) - digits + 1));
    }
    if (to1 >= *to) {
        *to = to1 - ((int64_t)1 << (ct__rng_log2(*to - 1) - digits + 1));
    }
}

/* randint's bounds [low, high) as drawn: attributes 0 and 1, moved inward for a float dtype
   (the caller checked low < high). */
static void ct__randint_bounds(const ct_op_call *c, ct_dtype dtype, int64_t *low, int64_t *high)
{
    *low = c->attrs[0].i;
    *high = c->attrs[1].i;
    if (dtype == CT_FLOAT32 || dtype == CT_FLOAT64) {
        ct__rng_float_bounds(low, high, dtype);
    }
}

/* randint: (int low, int high, int[] size, ScalarType dtype). */
static bool ct__randint_meta(ct_op_call *c)
{
    ct_dtype dtype = (ct_dtype)c->attrs[3].i;
    int64_t low = c->attrs[0].i, high = c->attrs[1].i;
    if (low >= high) {
        ct__fail(CT_ERR_VALUE, c->fn,
                 "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                 (long long)low, (long long)high);
        return false;
    }
    ct__randint_bounds(c, dtype, &low, &high);
    if (low >= high) {
        ct__fail(CT_ERR_VALUE, c->fn, "random_ expects 'from' casted to dtype to be less than "
                 "'to' casted to dtype, but got from=%lld >= to=%lld", (long long)low,
                 (long long)high);
        return false;
    }
    if (!ct__rng_check_int_range(c->fn, low, high - 1, dtype)) {
        return false;
    }
    ct_tensor *t = ct__op_output(c, c->attrs[2].ints, (int)c->attrs[2].i, dtype);
    if (t) {
        c->dtype = t->dtype;
    }
    return t != NULL;
}

static ct_status ct__randint_kernel(ct_op_call *c)
{
    int64_t low = 0, high = 0;
    ct__randint_bounds(c, c->dtype, &low, &high);
    ct__rng_int_range r = {(uint64_t)high - (uint64_t)low, low};
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_fill(c->outputs[0], g, ct__rng_draw_int, &r);
    ct__rng_unlock(g);
    return CT_OK;
}

/* randperm_cpu: below n = UINT32_MAX / 20, Fisher-Yates swapping i with i + random() % (n - i);
   from there the inside-out variant with random64() % (i + 1). */
static void ct__rng_permute(ct_generator *g, int64_t *r, int64_t n)
{
    if (n < (int64_t)(UINT32_MAX / 20)) {
        for (int64_t i = 0; i < n; i++) {
            r[i] = i;
        }
        for (int64_t i = 0; i < n - 1; i++) {
            int64_t z = (int64_t)(ct__rng_u32(g) % (uint64_t)(n - i));
            int64_t tmp = r[i];
            r[i] = r[z + i];
            r[z + i] = tmp;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t z = (int64_t)(ct__rng_u64(g) % (uint64_t)(i + 1));
        r[i] = r[z]; /* r[i] is i when z == i */
        r[z] = i;
    }
}

/* randperm: (int n, ScalarType dtype), int64 only. */
static bool ct__randperm_meta(ct_op_call *c)
{
    int64_t n = c->attrs[0].i;
    if (n < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "n must be non-negative, got%lld", (long long)n);
        return false;
    }
    c->dtype = CT_INT64;
    return ct__op_output(c, &n, 1, CT_INT64) != NULL;
}

static ct_status ct__randperm_kernel(ct_op_call *c)
{
    ct_tensor *t = c->outputs[0];
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_permute(g, (int64_t *)ct__data(t), t->sizes[0]);
    ct__rng_unlock(g);
    return CT_OK;
}

/* ---- factories over uniform_ and normal_ ------------------------------------------------ */
/* A float output of sizes and dtype (the kernel's dtype is its own). */
static bool ct__rng_float_output(ct_op_call *c, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    ct_tensor *t = ct__op_output(c, sizes, ndim, dtype);
    if (!t || !ct__rng_check_float(c, t->dtype)) {
        return false;
    }
    c->dtype = t->dtype;
    return true;
}

/* rand, randn: (int[] size, ScalarType dtype). */
static bool ct__rng_new_meta(ct_op_call *c)
{
    return ct__rng_float_output(c, c->attrs[0].ints, (int)c->attrs[0].i,
                                (ct_dtype)c->attrs[1].i);
}

/* rand_like, randn_like: self's shape and dtype. */
static bool ct__rng_like_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    return ct__rng_float_output(c, t->sizes, t->ndim, t->dtype);
}

static ct_status ct__rand_kernel(ct_op_call *c)
{
    ct__rng_uniform(c->outputs[0], c->generator, 0, 1);
    return CT_OK;
}

static ct_status ct__randn_kernel(ct_op_call *c)
{
    ct__rng_normal(c->outputs[0], c->generator, 0, 1);
    return CT_OK;
}

/* ---- bernoulli(Tensor p) (issue 7) ----------------------------------------------------- */
/* The output: p's shape and dtype, contiguous (empty_like). */
static bool ct__bernoulli_p_meta(ct_op_call *c)
{
    const ct_tensor *p = c->inputs[0];
    c->dtype = p->dtype;
    return ct__op_output(c, p->sizes, p->ndim, p->dtype) != NULL;
}

/* Reads element i of the contiguous p (float32 or float64) into *v and draws one
   bernoulli_distribution of p's own type into out; false (nothing drawn) for p outside
   [0, 1] or NaN. */
static bool ct__bernoulli_p_draw(ct_generator *g, const ct_tensor *p, ct_tensor *out, int64_t i)
{
    if (p->dtype == CT_FLOAT32) {
        float v = ((const float *)ct__data(p))[i];
        if (!(v >= 0 && v <= 1)) {
            return false;
        }
        ((float *)ct__data(out))[i] = (float)(ct__rng_uniform_f32(g, 0, 1) < v);
        return true;
    }
    double v = ((const double *)ct__data(p))[i];
    if (!(v >= 0 && v <= 1)) {
        return false;
    }
    ((double *)ct__data(out))[i] = (double)(ct__rng_uniform_f64(g, 0, 1) < v);
    return true;
}

/* bernoulli_tensor_cpu: one draw per element in row-major order (24 random bits of random()
   for a float32 p, 53 of random64() for float64); an invalid p stops the draws there with
   PyTorch's error, the draws before it spent as in PyTorch. */
static ct_status ct__bernoulli_p_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    ct_tensor *p = ct__tensor_new(c->fn, out->sizes, out->ndim, out->dtype);
    if (!p) {
        return CT_ERR_OOM;
    }
    ct__copy_kernel(p, c->inputs[0]);
    int64_t n = ct_numel(out), i = 0;
    ct_generator *g = ct__rng_lock(c->generator);
    while (i < n && ct__bernoulli_p_draw(g, p, out, i)) {
        i++;
    }
    ct__rng_unlock(g);
    ct__release(p);
    if (i < n) { /* reported outside the lock: a handler may draw */
        return ct__fail(CT_ERR_VALUE, c->fn, "Expected p_in >= 0 && p_in <= 1 to be true, but "
                        "got false.");
    }
    return CT_OK;
}

static void ct__bernoulli_p_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_zeros_like(g); /* PyTorch: zeros_like(grad) */
}

static const ct_op ct__op_bernoulli = {"aten::bernoulli", "bernoulli(Tensor self, *, Generator? "
                                       "generator=None) -> Tensor", "ct_bernoulli",
                                       CT_OP_RANDOM, CT_AUTOCAST_NONE, 0, 0u, NULL,
                                       ct__bernoulli_p_meta, CT__K_FLOAT(ct__bernoulli_p_kernel),
                                       NULL, "BernoulliBackward0", ct__bernoulli_p_backward, 0u,
                                       NULL, NULL};

ct_tensor *ct_bernoulli(const ct_tensor *input, ct_generator *g)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_bernoulli, "ct_bernoulli", in, 1);
    c.generator = g;
    return ct__dispatch(&c);
}

/* ---- descriptors and public functions --------------------------------------------------- */
/* A random op: name, schema, public functions, kind, meta, kernels. */
#define CT__RANDOM(SYM, NAME, SCHEMA, API, KIND, META, KERNELS)                                \
    static const ct_op ct__op_##SYM = {"aten::" NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, 0, \
                                       0u, NULL, META, KERNELS, NULL, NULL, NULL, 0u, NULL,   \
                                       NULL};
#define CT__RANDOM_OPTS "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
                        "bool? pin_memory=None"
#define CT__K_INT64(K) {NULL, NULL, NULL, NULL, NULL, NULL, K, NULL, NULL}

CT__RANDOM(uniform_, "uniform_", "uniform_(Tensor(a!) self, float from=0., float to=1., *, "
           "Generator? generator=None) -> Tensor(a!)", "ct_uniform_", CT_OP_INPLACE,
           ct__uniform_meta, CT__K_FLOAT(ct__uniform_kernel))
CT__RANDOM(normal_, "normal_", "normal_(Tensor(a!) self, float mean=0., float std=1., *, "
           "Generator? generator=None) -> Tensor(a!)", "ct_normal_", CT_OP_INPLACE,
           ct__normal_meta, CT__K_FLOAT(ct__normal_kernel))
CT__RANDOM(bernoulli_, "bernoulli_", "bernoulli_.float(Tensor(a!) self, float p=0.5, *, "
           "Generator? generator=None) -> Tensor(a!)", "ct_bernoulli_", CT_OP_INPLACE,
           ct__bernoulli_meta, CT__K_ALL(ct__bernoulli_kernel))
CT__RANDOM(random_, "random_", "random_(Tensor(a!) self, *, Generator? generator=None) -> "
           "Tensor(a!)", "ct_random_", CT_OP_INPLACE, ct__rng_self_meta,
           CT__K_ALL(ct__random_kernel))
CT__RANDOM(rand, "rand", "rand.generator(SymInt[] size, *, Generator? generator, "
           CT__RANDOM_OPTS ") -> Tensor", "ct_rand", CT_OP_RANDOM, ct__rng_new_meta,
           CT__K_FLOAT(ct__rand_kernel))
CT__RANDOM(randn, "randn", "randn.generator(SymInt[] size, *, Generator? generator, "
           CT__RANDOM_OPTS ") -> Tensor", "ct_randn", CT_OP_RANDOM, ct__rng_new_meta,
           CT__K_FLOAT(ct__randn_kernel))
CT__RANDOM(rand_like, "rand_like", "rand_like.generator(Tensor self, *, Generator? generator, "
           CT__RANDOM_OPTS ", MemoryFormat? memory_format=None) -> Tensor", "ct_rand_like",
           CT_OP_RANDOM, ct__rng_like_meta, CT__K_FLOAT(ct__rand_kernel))
CT__RANDOM(randn_like, "randn_like", "randn_like.generator(Tensor self, *, Generator? "
           "generator, " CT__RANDOM_OPTS ", MemoryFormat? memory_format=None) -> Tensor",
           "ct_randn_like", CT_OP_RANDOM, ct__rng_like_meta, CT__K_FLOAT(ct__randn_kernel))
CT__RANDOM(randint, "randint", "randint.low_generator(SymInt low, SymInt high, SymInt[] size, "
           "*, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? "
           "device=None, bool? pin_memory=None) -> Tensor", "ct_randint", CT_OP_RANDOM,
           ct__randint_meta, CT__K_ALL(ct__randint_kernel))
CT__RANDOM(randperm, "randperm", "randperm.generator(SymInt n, *, Generator? generator, "
           "ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? "
           "pin_memory=None) -> Tensor", "ct_randperm", CT_OP_RANDOM, ct__randperm_meta,
           CT__K_INT64(ct__randperm_kernel))
#undef CT__RANDOM
#undef CT__RANDOM_OPTS
#undef CT__K_INT64

/* A call of an in-place random op on self with n float attributes a0, a1. */
static ct_tensor *ct__rng_inplace_call(const ct_op *op, const char *fn, ct_tensor *self, int n,
                                       double a0, double a1, ct_generator *g)
{
    const ct_tensor *in[1] = {self};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (n > 0) {
        ct__call_f(&c, a0);
    }
    if (n > 1) {
        ct__call_f(&c, a1);
    }
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_uniform_, "ct_uniform_", self, 2, from, to, g);
}

ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_normal_, "ct_normal_", self, 2, mean, std, g);
}

ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_bernoulli_, "ct_bernoulli_", self, 1, p, 0, g);
}

ct_tensor *ct_random_(ct_tensor *self, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_random_, "ct_random_", self, 0, 0, 0, g);
}

/* A call of rand or randn over sizes. */
static ct_tensor *ct__rng_new_call(const ct_op *op, const char *fn, const int64_t *sizes,
                                   int ndim, ct_dtype dtype, ct_generator *g)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, NULL, 0);
    ct__call_ints(&c, sizes, ndim);
    ct__call_i(&c, dtype);
    c.generator = g;
    return ct__dispatch(&c);
}

/* A call of rand_like or randn_like over t. */
static ct_tensor *ct__rng_like_call(const ct_op *op, const char *fn, const ct_tensor *t,
                                    ct_generator *g)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_rand(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    return ct__rng_new_call(&ct__op_rand, "ct_rand", sizes, ndim, dtype, g);
}

ct_tensor *ct_randn(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    return ct__rng_new_call(&ct__op_randn, "ct_randn", sizes, ndim, dtype, g);
}

ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g)
{
    return ct__rng_like_call(&ct__op_rand_like, "ct_rand_like", t, g);
}

ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g)
{
    return ct__rng_like_call(&ct__op_randn_like, "ct_randn_like", t, g);
}

ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim, ct_dtype dtype,
                      ct_generator *g)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_randint, "ct_randint", NULL, 0);
    ct__call_i(&c, low);
    ct__call_i(&c, high);
    ct__call_ints(&c, sizes, ndim);
    ct__call_i(&c, dtype == CT_DTYPE_DEFAULT ? CT_INT64 : dtype);
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_randperm(int64_t n, ct_generator *g)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_randperm, "ct_randperm", NULL, 0);
    ct__call_i(&c, n);
    ct__call_i(&c, CT_INT64);
    c.generator = g;
    return ct__dispatch(&c);
}

#undef CT__MT_N
#undef CT__MT_M
#undef CT__DEFAULT_SEED

// >>part core/dispatch.c
/* core/dispatch.c - the one entry every op goes through, the hook stack and the backends.
 *
 * ct__dispatch(call): handle checks and device of the inputs, then (only while a hook is
 * pushed or the profiler runs, one predictable branch otherwise) the hooks and the profiler,
 * then meta, the kernel of (op, device, dtype), the autograd node, and the outputs' scope.
 */

/* Nonzero while any thread has a hook pushed or the profiler runs: the entry's slow path. */
static int ct__dispatch_slow = 0;

static CT__THREAD_LOCAL ct_dispatch_hook ct__hooks[CT_DISPATCH_MAX_HOOKS];
static CT__THREAD_LOCAL int ct__n_hooks = 0;

void ct__dispatch_slow_add(int delta)
{
    CT__ATOMIC_ADD(&ct__dispatch_slow, delta);
}

ct_status ct_dispatch_hook_push(const ct_dispatch_hook *hook)
{
    if (ct__null("ct_dispatch_hook_push", hook)) {
        return CT_ERR_NULL_ARG;
    }
    if (ct__n_hooks == CT_DISPATCH_MAX_HOOKS) {
        return ct__fail(CT_ERR_STATE, "ct_dispatch_hook_push", "more than %d hooks pushed",
                        CT_DISPATCH_MAX_HOOKS);
    }
    ct__hooks[ct__n_hooks++] = *hook;
    ct__dispatch_slow_add(1);
    return CT_OK;
}

ct_status ct_dispatch_hook_pop(void)
{
    if (ct__n_hooks == 0) {
        return ct__fail(CT_ERR_STATE, "ct_dispatch_hook_pop", "no hook is pushed");
    }
    ct__n_hooks--;
    ct__dispatch_slow_add(-1);
    return CT_OK;
}

/* ---- backends -------------------------------------------------------------------------- */
typedef struct ct__kernel_slot {
    const ct_op *op;
    ct_kernel_fn fn[CT_DTYPE_COUNT];
} ct__kernel_slot;

typedef struct ct__backend_entry {
    bool registered;
    ct_backend b;
    ct__kernel_slot *slots; /* open addressing on the op's address */
    int64_t cap, used;
} ct__backend_entry;

static ct__backend_entry ct__backends[CT_DEVICE_TYPE_COUNT];
static ct__mutex ct__backends_lock;

static uint64_t ct__op_hash(const ct_op *op)
{
    return ((uint64_t)(uintptr_t)op >> 4) * 0x9E3779B97F4A7C15ull;
}

/* The slot of op in e's table (an empty one when op has none); cap is a power of two. */
static ct__kernel_slot *ct__slot(ct__backend_entry *e, const ct_op *op)
{
    uint64_t i = ct__op_hash(op) & (uint64_t)(e->cap - 1);
    while (e->slots[i].op && e->slots[i].op != op) {
        i = (i + 1) & (uint64_t)(e->cap - 1);
    }
    return &e->slots[i];
}

static bool ct__backend_grow(ct__backend_entry *e)
{
    int64_t cap = e->cap ? e->cap * 2 : 64;
    ct__kernel_slot *old = e->slots;
    int64_t old_cap = e->cap;
    e->slots = (ct__kernel_slot *)ct__calloc((size_t)cap * sizeof(ct__kernel_slot));
    if (!e->slots) {
        e->slots = old;
        return false;
    }
    e->cap = cap;
    for (int64_t i = 0; i < old_cap; i++) {
        if (old[i].op) {
            *ct__slot(e, old[i].op) = old[i];
        }
    }
    ct__free(old);
    return true;
}

static bool ct__check_backend_type(const char *fn, ct_device_type type)
{
    if ((int)type <= (int)CT_CPU || (int)type >= (int)CT_DEVICE_TYPE_COUNT) {
        ct__fail(CT_ERR_VALUE, fn, "device type %d cannot take a backend (CPU is built in)",
                 (int)type);
        return false;
    }
    return true;
}

ct_status ct_backend_register(const ct_backend *backend)
{
    const char *fn = "ct_backend_register";
    if (ct__null(fn, backend) || !ct__check_backend_type(fn, backend->type) ||
        ct__null(fn, (const void *)backend->name) ||
        ct__null(fn, (const void *)(uintptr_t)backend->malloc) ||
        ct__null(fn, (const void *)(uintptr_t)backend->free) ||
        ct__null(fn, (const void *)(uintptr_t)backend->copy)) {
        return ct_error_code();
    }
    ct__mutex_lock(&ct__backends_lock);
    ct__backend_entry *e = &ct__backends[backend->type];
    e->b = *backend;
    e->registered = true;
    ct__mutex_unlock(&ct__backends_lock);
    return CT_OK;
}

ct_status ct_backend_unregister(ct_device_type type)
{
    if (!ct__check_backend_type("ct_backend_unregister", type)) {
        return CT_ERR_VALUE;
    }
    ct__mutex_lock(&ct__backends_lock);
    ct__backend_entry *e = &ct__backends[type];
    ct__free(e->slots);
    memset(e, 0, sizeof *e);
    ct__mutex_unlock(&ct__backends_lock);
    return CT_OK;
}

ct_status ct_backend_register_kernel(ct_device_type type, const ct_op *op, ct_dtype dtype,
                                     ct_kernel_fn kernel)
{
    const char *fn = "ct_backend_register_kernel";
    if (ct__null(fn, op) || ct__null(fn, (const void *)(uintptr_t)kernel) ||
        !ct__check_backend_type(fn, type) || !ct__check_dtype_arg(fn, dtype)) {
        return ct_error_code();
    }
    ct__mutex_lock(&ct__backends_lock);
    ct__backend_entry *e = &ct__backends[type];
    ct_status st = CT_OK;
    if (!e->registered) {
        st = ct__fail(CT_ERR_VALUE, fn, "no backend is registered for device type %d",
                      (int)type);
    } else if (2 * (e->used + 1) > e->cap && !ct__backend_grow(e)) {
        st = ct__fail(CT_ERR_OOM, fn, "out of memory");
    } else {
        ct__kernel_slot *s = ct__slot(e, op);
        e->used += s->op == NULL;
        s->op = op;
        s->fn[ct__dtype_resolve(dtype)] = kernel;
    }
    ct__mutex_unlock(&ct__backends_lock);
    return st;
}

ct_kernel_fn ct_dispatch_kernel(const ct_op *op, ct_device_type type, ct_dtype dtype)
{
    if (!op || (int)dtype < 0 || (int)dtype >= (int)CT_DTYPE_COUNT || (int)type < 0 ||
        (int)type >= (int)CT_DEVICE_TYPE_COUNT) {
        return NULL;
    }
    if (op->composite) {
        return op->composite;
    }
    if (type == CT_CPU) {
        return op->cpu[dtype];
    }
    ct__backend_entry *e = &ct__backends[type];
    if (!e->registered || !e->cap) {
        return NULL;
    }
    return ct__slot(e, op)->fn[dtype];
}

const ct_backend *ct__backend(ct_device_type type)
{
    return (int)type > 0 && (int)type < (int)CT_DEVICE_TYPE_COUNT && ct__backends[type].registered
               ? &ct__backends[type].b
               : NULL;
}

const char *ct__device_key(ct_device_type type)
{
    const ct_backend *b = ct__backend(type);
    return type == CT_CPU ? "CPU" : b ? b->name : type == CT_CUDA ? "CUDA" : "PrivateUse1";
}

/* ---- the entry ---------------------------------------------------------------------------- */
static bool ct__is_cpu_scalar(const ct_tensor *t)
{
    return t->ndim == 0 && t->storage->device.type == CT_CPU;
}

/* Whether input k of a call may be on another device than c->device (set from the inputs
   before it): inputs marked CT_OP_ANY_DEVICE, and 0-dim CPU tensors (wrapped scalars), which
   join any device as in PyTorch; when every input before k was such a scalar, k's device
   becomes the call's. */
static bool ct__device_allowed(ct_op_call *c, int k)
{
    const ct_tensor *t = c->inputs[k];
    if ((c->op->optional & CT_OP_ANY_DEVICE(k)) || ct__is_cpu_scalar(t)) {
        return true;
    }
    for (int j = 0; j < k; j++) {
        if (c->inputs[j] && !ct__is_cpu_scalar(c->inputs[j])) {
            return false;
        }
    }
    c->device = t->storage->device;
    return true;
}

/* Handle checks of the inputs (NULL propagation; under CTORCH_DEBUG, live handles) and the
   device they share, which becomes the call's device (ct__device_allowed says which inputs
   may be elsewhere). */
static bool ct__dispatch_inputs(ct_op_call *c)
{
    const ct_tensor *first = NULL;
    for (int k = 0; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        if (!t && (c->op->optional >> k & 1u)) {
            continue;
        }
        if (ct__null(c->fn, t)) {
            return false;
        }
        if (!first) {
            first = t;
            c->device = t->storage->device;
        } else if ((t->storage->device.type != c->device.type ||
                    t->storage->device.index != c->device.index) &&
                   !ct__device_allowed(c, k)) {
            char a[32], b[32];
            ct__fail(CT_ERR_DEVICE, c->fn, "Expected all tensors to be on the same device, but "
                     "found at least two devices, %s and %s!", ct__device_str(c->device, a, 32),
                     ct__device_str(t->storage->device, b, 32));
            return false;
        }
    }
    return true;
}

static void ct__release_outputs(ct_op_call *c)
{
    if (c->op->kind != CT_OP_INPLACE) {
        for (int k = 0; k < c->n_outputs; k++) {
            ct__release(c->outputs[k]);
        }
    }
    c->n_outputs = 0;
}

/* The autograd node of the call, made before the kernel (an in-place op's edges are its
   input's old history); NULL when none is needed or on error (ct__set_history tells). */
static ct_node *ct__dispatch_node(const ct_op_call *c)
{
    const ct_op *op = c->op;
    if (!op->backward) {
        return NULL;
    }
    ct_dtype out = c->n_outputs ? c->outputs[0]->dtype : c->inputs[0]->dtype;
    if (!ct_dtype_is_floating_point(out)) {
        return NULL;
    }
    return ct__node_new(op->node, op->backward, c->inputs, c->n_inputs);
}

/* Saves what the node's backward reads: the masked inputs, then the masked outputs (slots in
   that order, NULL where not saved), and the call's float attributes in f[]. */
static void ct__dispatch_record(ct_node *n, const ct_op_call *c)
{
    const ct_op *op = c->op;
    if (op->record) {
        op->record(n, c);
        return;
    }
    for (int k = 0; k < c->n_attrs && k < 4; k++) {
        n->f[k] = c->attrs[k].f;
    }
    uint32_t in = op->save & 0xffu, out = op->save >> 8;
    if (!out) {
        for (int k = 0; in >> k; k++) {
            ct__save(n, (in >> k & 1u) ? c->inputs[k] : NULL);
        }
        return;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        ct__save(n, (in >> k & 1u) ? c->inputs[k] : NULL);
    }
    for (int k = 0; out >> k; k++) {
        ct__save_output(n, (out >> k & 1u) ? c->outputs[k] : NULL);
    }
}

/* Meta, kernel, autograd. False (outputs released) after an error. */
static bool ct__dispatch_run(ct_op_call *c)
{
    const ct_op *op = c->op;
    c->n_outputs = 0;
    if (op->meta && !op->meta(c)) {
        ct__release_outputs(c);
        return false;
    }
    ct_kernel_fn kernel = op->composite ? op->composite
                          : c->device.type == CT_CPU ? op->cpu[c->dtype]
                                                     : ct_dispatch_kernel(op, c->device.type,
                                                                          c->dtype);
    if (!kernel) {
        const char *name = strncmp(op->name, "aten::", 6) == 0 ? op->name + 6 : op->name;
        bool cpu = c->device.type == CT_CPU; /* on a backend: name the device */
        ct__fail(cpu ? CT_ERR_DTYPE : CT_ERR_DEVICE, c->fn, "\"%s\" not implemented for '%s'",
                 name, cpu ? ct__dtype_title(c->dtype) : ct__device_key(c->device.type));
        ct__release_outputs(c);
        return false;
    }
    bool inplace = op->kind == CT_OP_INPLACE;
    if (inplace && !ct__check_inplace(c->fn, c->inputs[0])) {
        return false;
    }
    ct_node *n = ct__dispatch_node(c);
    if (kernel(c) != CT_OK) {
        ct__node_release(n);
        ct__release_outputs(c);
        return false;
    }
    if (inplace) {
        ct_tensor *self = c->outputs[0];
        ct__bump_version(self);
        if (n) {
            ct__dispatch_record(n, c);
        }
        ct__rebase_history(self, n);
        return true;
    }
    if (n) {
        ct__dispatch_record(n, c);
    }
    c->outputs[0] = ct__set_history(c->outputs[0], n);
    if (!c->outputs[0]) {
        c->outputs[0] = NULL;
        ct__release_outputs(c);
        return false;
    }
    return true;
}

/* The outputs go to the innermost scope (an in-place op's output is its input). */
static ct_tensor *ct__dispatch_finish(ct_op_call *c)
{
    if (c->op->kind == CT_OP_INPLACE) {
        return c->outputs[0];
    }
    for (int k = 1; k < c->n_outputs; k++) {
        ct__scoped(c->outputs[k]);
    }
    return ct__scoped(c->outputs[0]);
}

/* The entry with the hooks and the profiler around the op. */
static ct_tensor *ct__dispatch_hooked(ct_op_call *c)
{
    int top = ct__n_hooks;
    for (int h = top - 1; h >= 0; h--) {
        if (ct__hooks[h].before && ct__hooks[h].before(ct__hooks[h].user, c)) {
            return ct__dispatch_finish(c);
        }
    }
    int64_t ev = ct__profiler_op_begin(c);
    bool ok = ct__dispatch_run(c);
    ct__profiler_op_end(ev, c);
    if (!ok) {
        return NULL;
    }
    for (int h = top - 1; h >= 0; h--) {
        if (!ct__hooks[h].after) {
            continue;
        }
        ct_tensor *was[CT_OP_MAX_OUTPUTS];
        memcpy(was, c->outputs, sizeof was);
        ct__hooks[h].after(ct__hooks[h].user, c);
        for (int k = 0; k < c->n_outputs; k++) {
            if (c->outputs[k] != was[k] && !(c->op->kind == CT_OP_INPLACE && k == 0)) {
                ct__release(was[k]);
            }
        }
    }
    return ct__dispatch_finish(c);
}

ct_tensor *ct__dispatch(ct_op_call *c)
{
    if (!ct__dispatch_inputs(c)) {
        return NULL;
    }
    /* Autocast's place (DESIGN 8, the AMP issue): while autocast is on for this thread,
       cast the inputs as c->op->autocast says, here, before the hooks see the call. */
    if (ct__dispatch_slow) {
        return ct__dispatch_hooked(c);
    }
    return ct__dispatch_run(c) ? ct__dispatch_finish(c) : NULL;
}

ct_status ct__composite_end(ct_op_call *c, ct_tensor *r)
{
    ct_retain(r);
    ct_scope_end();
    if (!r) {
        return ct_error_code();
    }
    c->outputs[c->n_outputs++] = r;
    return CT_OK;
}

ct_tensor *ct__op_output(ct_op_call *c, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    ct_tensor *t = ct__tensor_new_on(c->fn, sizes, ndim, dtype, c->device);
    if (t) {
        c->outputs[c->n_outputs++] = t;
    }
    return t;
}

// >>part ops/vmath.h
/* ops/vmath.h - branch-free float32 exp, log, tanh and sigmoid that compilers vectorize
 * (libm calls block vectorization), and exp on AVX-512 vectors. Private: static inline,
 * included by the kernels.
 *
 * Every multiply-add is an explicit fmaf, no other product feeds an addition, and exp ends
 * in an fmaf with a zero addend (a multiply the compiler cannot contract with the caller's
 * sum), so results do not depend on -ffp-contract, -std or -O. fmaf is one instruction where
 * the target has FMA (-march=native on x86-64 since Haswell), a slower library call elsewhere.
 * ct__expf_v16 (AVX-512) does exp's operations lane by lane and is bit-identical to
 * ct__expf for every float32 input, with or without flush-to-zero (checked over all 2^32
 * inputs once; tests/test_ops.c compares them on a sample).
 *
 * Accuracy against libm in double, over one float32 block of 16 in 7 (a one-off sweep): exp
 * 0.89 ulp on [-87.3, 88.7], log 0.82 ulp on normal inputs, tanh 1.37 ulp, sigmoid 2.40 ulp;
 * tests/test_core.c (test_vmath_ulp) asserts exp, log <= 2 ulp and tanh, sigmoid <= 3 ulp on
 * 4M normal floats spread over the range. Special values: exp(-inf) = 0,
 * exp(+inf) = inf, exp(x > 88.72) = inf, log(0) = -inf, log(x < 0) = NaN, NaN -> NaN.
 * exp's subnormal results (x < -87.34) are correctly rounded, or 0 under flush-to-zero.
 */

#if defined(CT__HAS_AVX512)
#include <immintrin.h>
#endif

static inline float ct__f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t ct__f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* e^x: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite), e^r by a degree-7 polynomial in
   Horner form (Cephes expf coefficients), times 2^n as 2^(n/2) 2^(n - n/2), both normal; x
   is clamped to [-104, 89] first, where e^x rounds to 0 below and to inf above. */
static inline float ct__expf(float x)
{
    float xc = x < -104.0f ? -104.0f : x; /* NaN passes */
    xc = xc > 89.0f ? 89.0f : xc;
    float t = fmaf(xc, 1.44269504088896341f, 12582912.0f); /* 1.5 2^23 + n, rounded */
    float n = t - 12582912.0f;
    float r = fmaf(n, -0.693359375f, xc);
    r = fmaf(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    /* n from t's low bits: no float-to-int conversion (undefined for NaN), no branch */
    int32_t ni = (int32_t)(ct__f32_bits(t) & 0x7fffffffu) - 0x4b400000, na = ni / 2, nb = ni - na;
    p = p * ct__f32_from_bits((uint32_t)(na + 127) << 23); /* exact */
    return fmaf(p, ct__f32_from_bits((uint32_t)(nb + 127) << 23), 0.0f); /* rounds once */
}

#if defined(CT__HAS_AVX512)
/* max(a, b) (a > b ? a : b, so b where either is NaN), min(a, b) likewise, and a 2^floor(b),
   by the masked intrinsics with every lane set: the plain ones read an undefined vector that
   g++ 12 -O2 reports as maybe-uninitialized. */
static inline __m512 ct__max_v16(__m512 a, __m512 b)
{
    return _mm512_mask_max_ps(a, (__mmask16)0xffff, a, b);
}

static inline __m512 ct__min_v16(__m512 a, __m512 b)
{
    return _mm512_mask_min_ps(a, (__mmask16)0xffff, a, b);
}

static inline __m512 ct__scalef_v16(__m512 a, __m512 b)
{
    return _mm512_mask_scalef_ps(a, (__mmask16)0xffff, a, b);
}

/* ct__expf on 16 lanes, the same operations (p 2^n by one scalef, which rounds as the
   multiplies do): bit-identical to it. */
static inline __m512 ct__expf_v16(__m512 x)
{
    __m512 xc = ct__max_v16(_mm512_set1_ps(-104.0f), x); /* NaN passes */
    xc = ct__min_v16(_mm512_set1_ps(89.0f), xc);
    const __m512 shift = _mm512_set1_ps(12582912.0f);
    __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), shift),
                             shift);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), xc);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return ct__scalef_v16(p, n);
}
#endif

/* ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m by the Cephes logf polynomial. */
static inline float ct__logf(float x)
{
    bool tiny = x < 1.17549435e-38f; /* subnormal inputs: scale up by 2^25 first */
    float xs = tiny ? x * 33554432.0f : x;
    uint32_t u = ct__f32_bits(xs);
    int32_t e = (int32_t)((u >> 23) & 0xff) - 126;
    float m = ct__f32_from_bits((u & 0x007fffffu) | 0x3f000000u); /* in [0.5, 1) */
    bool small = m < 0.707106781186547524f;
    e = small ? e - 1 : e;
    m = small ? m + m - 1.0f : m - 1.0f;
    float z = m * m;
    float p = 7.0376836292e-2f;
    p = fmaf(p, m, -1.1514610310e-1f);
    p = fmaf(p, m, 1.1676998740e-1f);
    p = fmaf(p, m, -1.2420140846e-1f);
    p = fmaf(p, m, 1.4249322787e-1f);
    p = fmaf(p, m, -1.6668057665e-1f);
    p = fmaf(p, m, 2.0000714765e-1f);
    p = fmaf(p, m, -2.4999993993e-1f);
    p = fmaf(p, m, 3.3333331174e-1f);
    float fe = (float)(tiny ? e - 25 : e);
    float y = p * m * z;
    y = fmaf(fe, -2.12194440e-4f, y);
    y = fmaf(-0.5f, z, y);
    y = fmaf(fe, 0.693359375f, m + y);
    y = x == 0.0f ? -(float)INFINITY : y;
    y = x < 0.0f ? (float)NAN : y;
    y = x == (float)INFINITY ? x : y;
    return x != x ? x : y;
}

/* tanh x: Cephes odd polynomial for |x| < 0.625, else 1 - 2/(e^(2|x|) + 1), sign restored. */
static inline float ct__tanhf(float x)
{
    float a = x < 0 ? -x : x;
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = fmaf(p, z, 2.06390887954e-2f);
    p = fmaf(p, z, -5.37397155531e-2f);
    p = fmaf(p, z, 1.33314422036e-1f);
    p = fmaf(p, z, -3.33332819422e-1f);
    float small = fmaf(x * z, p, x);
    float big = 1.0f - 2.0f / (ct__expf(a + a) + 1.0f);
    big = x < 0 ? -big : big;
    float y = a < 0.625f ? small : big;
    return x != x ? x : y;
}

/* 1 / (1 + e^-x) */
static inline float ct__sigmoidf(float x) { return 1.0f / (1.0f + ct__expf(-x)); }

// >>part ops/iter.c
/* ops/iter.c - the shared strided iterator (PyTorch's TensorIterator idea) and the
 * dtype-converting copy kernel.
 *
 * Legend: nops operands (0 = output), ndim collapsed dims, strides in bytes.
 * Determinism: elementwise results do not depend on the thread count or the chunking.
 */

CT__VECTORIZE_BEGIN

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
/* ct__cvt_<dst>_<src>(x): one element converted. Integer and bool sources and float
   destinations convert as C does (integers narrow modulo 2^bits, as in PyTorch); float
   sources into integer types go through ct__f32/f64_to_i32/i64 (internal.h), so NaN,
   infinities and out-of-range values give PyTorch's x86-64 results instead of undefined
   behaviour; into bool they test != 0 (NaN is true). */
#define CT__CVT_PLAIN(DT, DS, ST, SS)                                                      \
    static inline DT ct__cvt_##DS##_##SS(ST x) { return (DT)x; }
#define CT__CVT_FROM_INT(ST, SS)                                                           \
    CT__CVT_PLAIN(bool, b8, ST, SS)                                                         \
    CT__CVT_PLAIN(uint8_t, u8, ST, SS)                                                      \
    CT__CVT_PLAIN(int8_t, i8, ST, SS)                                                       \
    CT__CVT_PLAIN(int16_t, i16, ST, SS)                                                     \
    CT__CVT_PLAIN(int32_t, i32, ST, SS)                                                     \
    CT__CVT_PLAIN(int64_t, i64, ST, SS)                                                     \
    CT__CVT_PLAIN(float, f32, ST, SS)                                                       \
    CT__CVT_PLAIN(double, f64, ST, SS)
CT__CVT_FROM_INT(bool, b8)
CT__CVT_FROM_INT(uint8_t, u8)
CT__CVT_FROM_INT(int8_t, i8)
CT__CVT_FROM_INT(int16_t, i16)
CT__CVT_FROM_INT(int32_t, i32)
CT__CVT_FROM_INT(int64_t, i64)
/* WIDE: the integer type uint8 goes through (int32 from float32, int64 from float64) */
#define CT__CVT_FROM_FLOAT(ST, SS, WIDE)                                                   \
    static inline bool ct__cvt_b8_##SS(ST x) { return x != 0; }                            \
    static inline uint8_t ct__cvt_u8_##SS(ST x) { return (uint8_t)ct__##SS##_to_##WIDE(x); } \
    static inline int8_t ct__cvt_i8_##SS(ST x) { return (int8_t)ct__##SS##_to_i32(x); }    \
    static inline int16_t ct__cvt_i16_##SS(ST x) { return (int16_t)ct__##SS##_to_i32(x); } \
    static inline int32_t ct__cvt_i32_##SS(ST x) { return ct__##SS##_to_i32(x); }          \
    static inline int64_t ct__cvt_i64_##SS(ST x) { return ct__##SS##_to_i64(x); }          \
    CT__CVT_PLAIN(float, f32, ST, SS)                                                       \
    CT__CVT_PLAIN(double, f64, ST, SS)
CT__CVT_FROM_FLOAT(float, f32, i32)
CT__CVT_FROM_FLOAT(double, f64, i64)

#define CT__COPY_LOOP(DE, DT, DS, SE, ST, SS)                                              \
    static void ct__copy_##DS##_##SS(char **d, const int64_t *s, int64_t n, const void *p)  \
    {                                                                                       \
        (void)p;                                                                            \
        if (s[0] == sizeof(DT) && s[1] == sizeof(ST)) {                                     \
            DT *o = (DT *)d[0];                                                             \
            const ST *a = (const ST *)d[1];                                                 \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__cvt_##DS##_##SS(a[i]);                                           \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(DT *)(d[0] + i * s[0]) = ct__cvt_##DS##_##SS(*(const ST *)(d[1] + i * s[1])); \
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
#undef CT__CVT_PLAIN
#undef CT__CVT_FROM_INT
#undef CT__CVT_FROM_FLOAT

CT__VECTORIZE_END

// >>part ops/pointwise.c
/* ops/pointwise.c - elementwise kernels, their meta layer and derivative formulas.
 *
 * Legend: out (broadcast shape), a/b (operands broadcast to out), g (gradient of out).
 * Each kernel is an inner loop over n elements with byte strides s[0] (out), s[1] (a),
 * s[2] (b); the contiguous case is a separate flat loop the compiler vectorizes.
 * The per-element math is in small inline functions, one per op and dtype.
 */

CT__VECTORIZE_BEGIN

typedef enum ct__binop {
    CT__ADD, CT__SUB, CT__MUL, CT__DIV, CT__POW, CT__MAXIMUM, CT__MINIMUM, CT__DIV_TRUNC,
    CT__DIV_FLOOR,
    CT__EQ, CT__NE, CT__LT, CT__LE, CT__GT, CT__GE, CT__AND, CT__OR,
    CT__RELU_BW, CT__SIGMOID_BW, CT__TANH_BW, CT__BINOP_COUNT
} ct__binop;

typedef enum ct__terop { CT__ADDCMUL, CT__ADDCDIV, CT__LERP } ct__terop;

typedef enum ct__unop {
    CT__NEG, CT__ABS, CT__RELU, CT__SQUARE, CT__SIGN, /* every numeric dtype */
    CT__EXP, CT__LOG, CT__LOG1P, CT__SQRT, CT__RSQRT, CT__SIN, CT__COS, CT__SIGMOID,
    CT__TANH, CT__RECIPROCAL, CT__CLAMP, CT__POWS, CT__NOT, CT__ERF, CT__ISNAN, CT__ISINF,
    CT__ISFINITE, CT__UNOP_COUNT
} ct__unop;

/* ---- per-element math ---------------------------------------------------------------- */
/* v < 0 for any integer type (a call, so unsigned types raise no always-false warning) */
static inline bool ct__is_neg(double v) { return v < 0; }

/* ct__w_<S>: the type integer arithmetic of dtype S runs in, unsigned so that overflow wraps
   modulo 2^bits as in PyTorch instead of being undefined; the float types themselves. */
typedef uint32_t ct__w_u8;
typedef uint32_t ct__w_i8;
typedef uint32_t ct__w_i16;
typedef uint32_t ct__w_i32;
typedef uint64_t ct__w_i64;
typedef float ct__w_f32;
typedef double ct__w_f64;

#define CT__INT_MATH(E, T, S)                                                              \
    static inline T ct__maximum_##S(T x, T y, T alpha) { (void)alpha; return x > y ? x : y; } \
    static inline T ct__minimum_##S(T x, T y, T alpha) { (void)alpha; return x < y ? x : y; } \
    static inline T ct__pow_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        (void)alpha;                                                                        \
        T r = 1;                                                                            \
        if (ct__is_neg(y)) {                                                               \
            return (T)(x == 1 ? 1 : (x == (T)-1 ? ((y & 1) ? -1 : 1) : 0));                 \
        }                                                                                   \
        for (; y > 0; y = (T)(y >> 1), x = (T)((ct__w_##S)x * (ct__w_##S)x)) {              \
            if (y & 1) {                                                                    \
                r = (T)((ct__w_##S)r * (ct__w_##S)x);                                       \
            }                                                                               \
        }                                                                                   \
        return r;                                                                           \
    }                                                                                       \
    static inline T ct__pows_##S(T x, const double *p) { return ct__pow_##S(x, (T)p[0], 0); } \
    /* integer division rounding toward zero and toward -inf; the kernel rejected y == 0 (0 is  \
       returned), x / -1 wraps instead of trapping */                                         \
    static inline T ct__div_trunc_##S(T x, T y, T alpha)                                    \
    {                                                                                       \
        (void)alpha;                                                                        \
        if (ct__is_neg(y) && y == (T)-1) {                                                  \
            return (T)-(ct__w_##S)x;                                                        \
        }                                                                                   \
        return y == 0 ? (T)0 : (T)(x / y);                                                  \
    }                                                                                       \
    static inline T ct__div_floor_##S(T x, T y, T alpha)                                    \
    {                                                                                       \
        T q = ct__div_trunc_##S(x, y, alpha);                                               \
        T r = (T)(x - (T)((ct__w_##S)q * (ct__w_##S)y));                                    \
        return (r != 0 && ct__is_neg(r) != ct__is_neg(y)) ? (T)(q - 1) : q;                \
    }
#define CT__INT_CLAMP(E, T, S)                                                              \
    static inline T ct__clamp_##S(T x, const double *p)                                     \
    { /* bounds saturated by meta: an open side is infinite */                              \
        T lo = p[0] == -INFINITY ? x : (T)p[0], hi = p[1] == INFINITY ? x : (T)p[1];        \
        return x < lo ? lo : (x > hi ? hi : x);                                             \
    }
#define CT__FLOAT_MATH(E, T, S, F, EXP, LOG, TANH, SIGMOID)                                 \
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
    static inline T ct__exp_##S(T x, const double *p) { (void)p; return EXP(x); }        \
    static inline T ct__log_##S(T x, const double *p) { (void)p; return LOG(x); }        \
    static inline T ct__log1p_##S(T x, const double *p) { (void)p; return log1p##F(x); }    \
    static inline T ct__sqrt_##S(T x, const double *p) { (void)p; return sqrt##F(x); }      \
    static inline T ct__erf_##S(T x, const double *p) { (void)p; return erf##F(x); }        \
    static inline T ct__rsqrt_##S(T x, const double *p) { (void)p; return (T)1 / sqrt##F(x); } \
    static inline T ct__sin_##S(T x, const double *p) { (void)p; return sin##F(x); }        \
    static inline T ct__cos_##S(T x, const double *p) { (void)p; return cos##F(x); }        \
    static inline T ct__sigmoid_##S(T x, const double *p) { (void)p; return SIGMOID(x); }   \
    static inline T ct__tanh_##S(T x, const double *p) { (void)p; return TANH(x); }      \
    static inline T ct__reciprocal_##S(T x, const double *p) { (void)p; return (T)1 / x; }  \
    static inline T ct__clamp_##S(T x, const double *p)                                     \
    {                                                                                       \
        T lo = (T)p[0], hi = (T)p[1];                                                       \
        return x != x ? x : (x < lo ? lo : (x > hi ? hi : x));                              \
    }                                                                                       \
    static inline T ct__pows_##S(T x, const double *p) { return pow##F(x, (T)p[0]); }     \
    static inline T ct__div_trunc_##S(T x, T y, T alpha) { (void)alpha; return trunc##F(x / y); } \
    static inline T ct__div_floor_##S(T x, T y, T alpha)                                    \
    { /* PyTorch's div_floor_floating */                                                    \
        (void)alpha;                                                                        \
        if (y == 0) {                                                                       \
            return x / y;                                                                   \
        }                                                                                   \
        T mod = fmod##F(x, y), div = (x - mod) / y;                                         \
        if (mod != 0 && (y < 0) != (mod < 0)) {                                             \
            div -= (T)1;                                                                    \
        }                                                                                   \
        if (div == 0) {                                                                     \
            return copysign##F((T)0, x / y);                                                \
        }                                                                                   \
        T fl = floor##F(div);                                                               \
        return div - fl > (T)0.5 ? fl + (T)1 : fl;                                          \
    }                                                                                       \
    static inline T ct__addcdiv_##S(T x, T a, T b, T v) { return x + v * a / b; }         \
    static inline T ct__lerp_w_##S(T x, T e, T w)                                           \
    { /* PyTorch's vectorized lerp: from the nearer end, one fused multiply-add */           \
        bool small = w < (T)0.5 && w > (T)-0.5;                                             \
        return fma##F(small ? w : w - (T)1, e - x, small ? x : e);                          \
    }                                                                                       \
    static inline T ct__lerp_##S(T x, T e, T w, T v) { (void)v; return ct__lerp_w_##S(x, e, w); } \
    static inline T ct__lerps_##S(T x, T e, T w) { return ct__lerp_w_##S(x, e, w); }
/* ops defined for every numeric dtype */
#define CT__ANY_MATH(E, T, S)                                                              \
    static inline T ct__add_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        return (T)((ct__w_##S)x + (ct__w_##S)alpha * (ct__w_##S)y);                         \
    }                                                                                       \
    static inline T ct__sub_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        return (T)((ct__w_##S)x - (ct__w_##S)alpha * (ct__w_##S)y);                         \
    }                                                                                       \
    static inline T ct__mul_##S(T x, T y, T alpha)                                          \
    {                                                                                       \
        (void)alpha;                                                                        \
        return (T)((ct__w_##S)x * (ct__w_##S)y);                                            \
    }                                                                                       \
    static inline T ct__neg_##S(T x, const double *p) { (void)p; return (T)-(ct__w_##S)x; } \
    static inline T ct__abs_##S(T x, const double *p)                                      \
    {                                                                                      \
        (void)p;                                                                           \
        return ct__is_neg(x) ? (T)-(ct__w_##S)x : x;                                       \
    }                                                                                      \
    static inline T ct__relu_##S(T x, const double *p) { (void)p; return x > 0 ? x : (T)0; } \
    static inline T ct__square_##S(T x, const double *p)                                    \
    {                                                                                       \
        (void)p;                                                                            \
        return (T)((ct__w_##S)x * (ct__w_##S)x);                                            \
    }                                                                                       \
    static inline T ct__sign_##S(T x, const double *p)                                      \
    {                                                                                       \
        (void)p;                                                                            \
        return (T)((x > 0) - (ct__is_neg(x)));                                                     \
    }                                                                                       \
    static inline T ct__addcmul_##S(T x, T a, T b, T v)                                     \
    {                                                                                       \
        return (T)((ct__w_##S)x + (ct__w_##S)v * (ct__w_##S)a * (ct__w_##S)b);              \
    }
CT__INT_MATH(CT_UINT8, uint8_t, u8)
CT__INT_MATH(CT_INT8, int8_t, i8)
CT__INT_MATH(CT_INT16, int16_t, i16)
CT__INT_MATH(CT_INT32, int32_t, i32)
CT__INT_MATH(CT_INT64, int64_t, i64)
CT__INT_CLAMP(CT_UINT8, uint8_t, u8)
CT__INT_CLAMP(CT_INT8, int8_t, i8)
CT__INT_CLAMP(CT_INT16, int16_t, i16)
CT__INT_CLAMP(CT_INT32, int32_t, i32)
CT__INT_CLAMP(CT_INT64, int64_t, i64)
/* float64 sigmoid through libm */
static inline double ct__sigmoid_libm(double x) { return 1.0 / (1.0 + exp(-x)); }
CT__FLOAT_MATH(CT_FLOAT32, float, f32, f, ct__expf, ct__logf, ct__tanhf, ct__sigmoidf)
CT__FLOAT_MATH(CT_FLOAT64, double, f64, , exp, log, tanh, ct__sigmoid_libm)
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
/* out[i] = FN(x[i], a[i], b[i], value): the contiguous and the strided loop. */
#define CT__TER_LOOP(FN, T, S)                                                             \
    static void ct__loop_##FN##_##S(char **d, const int64_t *s, int64_t n, const void *pp)  \
    {                                                                                       \
        const T v = (T)((const double *)pp)[0];                                             \
        const int64_t e = (int64_t)sizeof(T);                                               \
        if (s[0] == e && s[1] == e && s[2] == e && s[3] == e) {                             \
            T *o = (T *)d[0];                                                               \
            const T *x = (const T *)d[1], *a = (const T *)d[2], *b = (const T *)d[3];       \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = ct__##FN##_##S(x[i], a[i], b[i], v);                                 \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(T *)(d[0] + i * s[0]) = ct__##FN##_##S(                                        \
                *(const T *)(d[1] + i * s[1]), *(const T *)(d[2] + i * s[2]),               \
                *(const T *)(d[3] + i * s[3]), v);                                          \
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
    CT__UN_LOOP(sign, T, S)                                                                 \
    CT__UN_LOOP(clamp, T, S)                                                                \
    CT__UN_LOOP(pows, T, S)                                                                 \
    CT__TER_LOOP(addcmul, T, S)                                                             \
    CT__BIN_LOOP(div_trunc, T, S)                                                           \
    CT__BIN_LOOP(div_floor, T, S)
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
    CT__UN_LOOP(erf, T, S)                                                                  \
    CT__TER_LOOP(addcdiv, T, S)                                                             \
    CT__TER_LOOP(lerp, T, S)                                                                \
    CT__BIN_LOOP(lerps, T, S)
/* out[i] = TEST(a[i]) as bool, TEST a classification macro of math.h (isnan ...) on the value
   as a double: exact for every dtype, and integers are never NaN nor infinite. */
#define CT__TEST_LOOP(NAME, TEST, T, S)                                                    \
    static void ct__loop_##NAME##_##S(char **d, const int64_t *s, int64_t n, const void *pp) \
    {                                                                                       \
        (void)pp;                                                                           \
        if (s[0] == 1 && s[1] == (int64_t)sizeof(T)) {                                      \
            bool *o = (bool *)d[0];                                                         \
            const T *a = (const T *)d[1];                                                   \
            for (int64_t i = 0; i < n; i++) {                                               \
                o[i] = TEST((double)a[i]);                                                  \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            *(bool *)(d[0] + i * s[0]) = TEST((double)*(const T *)(d[1] + i * s[1]));      \
        }                                                                                   \
    }
#define CT__TEST_LOOPS(E, T, S)                                                            \
    CT__TEST_LOOP(isnan, isnan, T, S)                                                       \
    CT__TEST_LOOP(isinf, isinf, T, S)                                                       \
    CT__TEST_LOOP(isfinite, isfinite, T, S)                                                 \
    CT__TEST_LOOP(iszero, CT__ISZERO, T, S)
#define CT__ISZERO(v) ((v) == 0)
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
CT__FOR_ALL_DTYPES(CT__TEST_LOOPS)

static void ct__loop_and(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) =
            *(const bool *)(d[1] + i * s[1]) && *(const bool *)(d[2] + i * s[2]);
    }
}

static void ct__loop_or(char **d, const int64_t *s, int64_t n, const void *pp)
{
    (void)pp;
    for (int64_t i = 0; i < n; i++) {
        *(bool *)(d[0] + i * s[0]) =
            *(const bool *)(d[1] + i * s[1]) || *(const bool *)(d[2] + i * s[2]);
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

/* ---- loop tables: the per-element math of each op by dtype ------------------------------ */
#define CT__L_NUM(FN)                                                                          \
    {NULL, NULL, ct__loop_##FN##_u8, ct__loop_##FN##_i8, ct__loop_##FN##_i16,                 \
     ct__loop_##FN##_i32, ct__loop_##FN##_i64, ct__loop_##FN##_f32, ct__loop_##FN##_f64}
#define CT__L_FLT(FN) {NULL, NULL, NULL, NULL, NULL, NULL, NULL, ct__loop_##FN##_f32, ct__loop_##FN##_f64}
#define CT__L_ALL(FN)                                                                          \
    {NULL, ct__loop_##FN##_b8, ct__loop_##FN##_u8, ct__loop_##FN##_i8, ct__loop_##FN##_i16,   \
     ct__loop_##FN##_i32, ct__loop_##FN##_i64, ct__loop_##FN##_f32, ct__loop_##FN##_f64}
#define CT__L_BOOL(F) {NULL, F, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
static const ct_loop_fn ct__loops_iszero[CT_DTYPE_COUNT] = CT__L_ALL(iszero);

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
   when the dtype matches). CPU tensors only: the kernels' own conversion. */
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

static bool ct__is_cmp(ct__binop op) { return op >= CT__EQ && op <= CT__GE; }

/* Result and compute dtypes of a binary op. */
static bool ct__binary_dtypes(const char *op, ct__binop bop, const ct_tensor *a,
                              const ct_tensor *b, ct_dtype *result, ct_dtype *compute)
{
    const ct_tensor *ops[2] = {a, b};
    ct_dtype rt = ct__result_type(ops, 2);
    if (bop == CT__SUB && a->dtype == CT_BOOL && b->dtype == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "Subtraction, the `-` operator, with two bool tensors is not "
                 "supported. Use the `^` or `logical_xor()` operator instead.");
        return false;
    }
    if (bop == CT__SUB && (a->dtype == CT_BOOL || b->dtype == CT_BOOL)) {
        ct__fail(CT_ERR_DTYPE, op, "Subtraction, the `-` operator, with a bool tensor is not "
                 "supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
                 "operator instead.");
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
    } else { /* bool arithmetic runs in uint8; rounding divisions have no bool kernel */
        *compute = rt == CT_BOOL && bop != CT__DIV_TRUNC && bop != CT__DIV_FLOOR ? CT_UINT8 : rt;
        *result = rt;
    }
    return true;
}

/* PyTorch's checks of add/sub's alpha (attribute 0) for result dtype rt: an integral (or
   bool) result takes only an integral alpha, and alpha must convert to rt without overflow.
   Replaces a bool result's alpha by alpha != 0 (bool arithmetic runs in uint8). */
static bool ct__check_alpha(ct_op_call *c, ct_dtype rt)
{
    if (c->n_attrs == 0 || c->op->variant > CT__SUB) {
        return true;
    }
    double *alpha = &c->attrs[0].f;
    if (!ct_dtype_is_floating_point(rt) && *alpha != floor(*alpha)) {
        ct__fail(CT_ERR_VALUE, c->fn, "For integral input tensors, argument alpha must not be a "
                 "floating point number.");
        return false;
    }
    if (!ct__check_scalar(c->fn, *alpha, rt)) {
        return false;
    }
    *alpha = rt == CT_BOOL ? (double)(*alpha != 0) : *alpha;
    return true;
}

/* Fails unless shape is self's: an in-place op cannot grow its output. */
static bool ct__check_inplace_shape(const char *op, const ct_tensor *self, const int64_t *shape,
                                    int nd)
{
    if (nd == self->ndim && memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd) == 0) {
        return true;
    }
    char a[160], b[160];
    ct__fail(CT_ERR_SHAPE, op, "output with shape %s doesn't match the broadcast shape %s",
             ct__shape_str(self->sizes, self->ndim, a, sizeof a),
             ct__shape_str(shape, nd, b, sizeof b));
    return false;
}

/* An in-place op writing a result of dtype rt into self (c->inputs[0]), the first of n
   inputs: self must hold rt; self becomes the output; when the derivative reads the old self
   (save bit 0) and autograd will record, a copy of it goes to c->state (the public function
   releases it). */
static bool ct__inplace_output(ct_op_call *c, ct_dtype rt, int n)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    if (!ct_can_cast(rt, self->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "result type %s can't be cast to the desired output type %s",
                 ct__dtype_title(rt), ct__dtype_title(self->dtype));
        return false;
    }
    c->outputs[c->n_outputs++] = self;
    if ((c->op->save & 1u) && ct_dtype_is_floating_point(self->dtype) &&
        ct__any_requires_grad(c->inputs, n)) {
        c->state = ct__tensor_new(c->fn, self->sizes, self->ndim, self->dtype);
        if (!c->state) {
            return false;
        }
        ct__copy_kernel((ct_tensor *)c->state, self);
    }
    return true;
}

/* Meta of a binary op (inputs self, other; attribute 0: alpha): broadcast shape, PyTorch's
   promotion; an in-place op checks that self can hold the result and saves the old self
   for a backward that reads it (c->state: the clone). */
static bool ct__binary_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct__binop bop = (ct__binop)c->op->variant;
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    ct_dtype rt, ct;
    if (!ct__broadcast_shapes(c->fn, a->sizes, a->ndim, b->sizes, b->ndim, shape, &nd) ||
        !ct__binary_dtypes(c->fn, bop, a, b, &rt, &ct) || !ct__check_alpha(c, rt)) {
        return false;
    }
    c->dtype = ct;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, shape, nd, rt) != NULL;
    }
    return ct__check_inplace_shape(c->fn, a, shape, nd) && ct__inplace_output(c, rt, 2);
}

/* Runs c's loop over the inputs (cast to the compute dtype c->dtype) into out. */
static bool ct__run_loop(const ct_op_call *c, ct_tensor *out)
{
    double params[2] = {c->n_attrs > 0 ? c->attrs[0].f : 0, c->n_attrs > 1 ? c->attrs[1].f : 0};
    ct_tensor *cast[CT__ITER_MAX_OPS];
    bool ok = true;
    for (int k = 0; k < c->n_inputs; k++) {
        cast[k] = ok ? ct__cast(c->inputs[k], c->dtype) : NULL;
        ok = ok && cast[k];
    }
    if (ok) {
        ct__iter it;
        ct__iter_build(&it, out, (const ct_tensor *const *)cast, c->n_inputs);
        ct__iter_run(&it, c->op->loops[c->dtype], params);
    }
    for (int k = 0; k < c->n_inputs; k++) {
        ct__release(cast[k]);
    }
    return ok;
}

/* The CPU kernel of unary and binary pointwise ops. The loop writes the compute dtype
   (comparisons: bool) into the output, or into a temporary the output converts from (bool
   arithmetic runs in uint8; an in-place op on a narrower self). */
static ct_status ct__pointwise_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    bool cmp = c->n_inputs == 2 && ct__is_cmp((ct__binop)c->op->variant);
    if (out->dtype == c->dtype || cmp) {
        return ct__run_loop(c, out) ? CT_OK : CT_ERR_OOM;
    }
    ct_tensor *tmp = ct__tensor_new(c->fn, out->sizes, out->ndim, c->dtype);
    bool ok = tmp && ct__run_loop(c, tmp);
    if (ok) {
        ct__copy_kernel(out, tmp);
    }
    ct__release(tmp);
    return ok ? CT_OK : CT_ERR_OOM;
}

/* The CPU kernel of ops whose loop writes bool from the input's dtype (isnan ...). */
static ct_status ct__bool_out_kernel(ct_op_call *c)
{
    return ct__run_loop(c, c->outputs[0]) ? CT_OK : CT_ERR_OOM;
}

/* The CPU kernel of div with a rounding mode: integer division by zero is PyTorch's error
   (checked on the divisor in the compute dtype, as a wrapped scalar converts). */
static ct_status ct__div_mode_kernel(ct_op_call *c)
{
    if (!ct_dtype_is_floating_point(c->dtype)) {
        ct_tensor *b = ct__cast(c->inputs[1], c->dtype);
        ct_tensor *zero = b ? ct__tensor_new(c->fn, b->sizes, b->ndim, CT_BOOL) : NULL;
        bool any = true;
        if (zero) {
            const ct_tensor *in = b;
            ct__iter it;
            ct__iter_build(&it, zero, &in, 1);
            ct__iter_run(&it, ct__loops_iszero[b->dtype], NULL);
            any = memchr(ct__data(zero), 1, (size_t)ct_numel(zero)) != NULL;
        }
        ct__release(zero);
        ct__release(b);
        if (!zero) {
            return CT_ERR_OOM;
        }
        if (any) {
            return ct__fail(CT_ERR_VALUE, c->fn, "ZeroDivisionError");
        }
    }
    return ct__pointwise_kernel(c);
}

/* In-place unary ops whose derivative reads the input save the old self (the copy meta
   made) and their scalar attributes (clamp_'s bounds, pow_'s exponent). */
static void ct__unary_inplace_record(ct_node *n, const ct_op_call *c)
{
    for (int k = 0; k < c->n_attrs && k < 4; k++) {
        n->f[k] = c->attrs[k].f;
    }
    ct__save(n, (const ct_tensor *)c->state);
}

/* In-place binary ops save the old self (the clone meta made), then other. */
static void ct__binary_inplace_record(ct_node *n, const ct_op_call *c)
{
    n->f[0] = c->n_attrs ? c->attrs[0].f : 1.0;
    ct__save(n, (const ct_tensor *)c->state);
    ct__save(n, (c->op->save & 2u) ? c->inputs[1] : NULL);
    ct__save(n, NULL);
}

/* ---- derivative formulas ------------------------------------------------------------- */
static ct_tensor *ct__threshold_bw(const ct_tensor *g, const ct_tensor *y);
static ct_tensor *ct__sigmoid_bw(const ct_tensor *g, const ct_tensor *y);
static ct_tensor *ct__tanh_bw(const ct_tensor *g, const ct_tensor *y);
static ct_tensor *ct__sign(const ct_tensor *x);
static ct_tensor *ct__transfer(const ct_tensor *src, ct_device device);
static ct_tensor *ct__ge_scalar(const ct_tensor *x, double v);
static ct_tensor *ct__le_scalar(const ct_tensor *x, double v);

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
        ct_tensor *zero =
            ct_logical_and(ct_eq_scalar(a, 0.0), ct_logical_not(ct_lt_scalar(b, 0.0)));
        gi[1] = ct_mul(g, ct_where(zero, ct_zeros_like(d), d));
    }
}

/* The gradient goes to the selected input; ties split it evenly, as PyTorch. */
static void ct__minmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi, bool is_max)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
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

static void ct__div_mode_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* rounded quotients are piecewise constant: PyTorch's zero gradients */
    for (int k = 0; k < 2; k++) {
        if (ct__needs_grad(n, k)) {
            gi[k] = ct_zeros_like(g);
        }
    }
}

static void ct__maximum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__minmax_backward(n, g, gi, true);
}

static void ct__minimum_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__minmax_backward(n, g, gi, false);
}

static void ct__relu_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__threshold_bw(g, ct__saved(n, 1));
    }
}

static void ct__sigmoid_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__sigmoid_bw(g, y);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*y*(1-y)] = go*(1-2y) */
        gi[1] = ct_mul(ct_mul(g, go), ct_add_scalar(ct_mul_scalar(y, -2.0), 1.0));
    }
}

static void ct__tanh_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *go = ct__saved(n, 0), *y = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__tanh_bw(g, y);
    }
    if (ct__needs_grad(n, 1)) { /* d/dy [go*(1-y^2)] = -2*go*y */
        gi[1] = ct_mul(ct_mul(g, go), ct_mul_scalar(y, -2.0));
    }
}

static void ct__neg_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_neg(g);
}

static void ct__abs_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_mul(g, ct__sign(ct__saved(n, 0)));
}

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
    gi[0] = ct__sigmoid_bw(g, ct__saved(n, 1));
}

static void ct__tanh_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__tanh_bw(g, ct__saved(n, 1));
}

static void ct__relu_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__threshold_bw(g, ct__saved(n, 1));
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
    ct_tensor *lo = ct__ge_scalar(x, n->f[0]), *hi = ct__le_scalar(x, n->f[1]);
    gi[0] = ct_where(ct_logical_and(lo, hi), g, ct_zeros_like(g));
}

static void ct__erf_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * 2/sqrt(pi) * exp(-x^2) */
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = ct_mul(g, ct_mul_scalar(ct_exp(ct_neg(ct_square(x))), 1.1283791670955126));
}

static void ct__pows_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{ /* g * p * x^(p-1); 0 when p == 0 */
    double p = n->f[0];
    const ct_tensor *x = ct__saved(n, 0);
    gi[0] = p == 0 ? ct_zeros_like(g) : ct_mul(g, ct_mul_scalar(ct_pow_scalar(x, p - 1), p));
}

/* ---- unary meta ---------------------------------------------------------------------------- */
/* The compute dtype of a unary op over dt. Ops whose loops are float-only compute integer
   (and bool) inputs in the default float dtype; the others keep the input's dtype (bool: no
   kernel, PyTorch's "not implemented"). logical_not converts its input to bool. clamp on
   integers with integral bounds (c->state set) keeps the dtype, its bounds saturated to the
   dtype's range; a scalar power of an integer keeps it for an integral exponent (bool: int64). */
static ct_dtype ct__unary_dtype(ct_op_call *c, ct_dtype dt)
{
    ct__unop op = (ct__unop)c->op->variant;
    if (op == CT__NOT) {
        return CT_BOOL;
    }
    if (ct_dtype_is_floating_point(dt)) {
        return dt;
    }
    if (op == CT__CLAMP && dt != CT_BOOL && c->state) {
        c->attrs[0].f = ct__scalar_fits(c->attrs[0].f, dt) ? c->attrs[0].f : -INFINITY;
        c->attrs[1].f = ct__scalar_fits(c->attrs[1].f, dt) ? c->attrs[1].f : INFINITY;
        return dt;
    }
    if (op == CT__POWS && c->attrs[0].f == floor(c->attrs[0].f) && fabs(c->attrs[0].f) < 9.2e18) {
        return dt == CT_BOOL ? CT_INT64 : dt;
    }
    const ct_loop_fn *loops = c->op->loops;
    return op == CT__CLAMP || op == CT__POWS || (!loops[CT_INT64] && loops[CT_FLOAT32])
               ? ct_get_default_dtype() : dt;
}

/* Meta of unary ops: the input's shape, ct__unary_dtype; in-place forms write into self. */
static bool ct__unary_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    ct_dtype dt = ct__unary_dtype(c, a->dtype);
    c->dtype = dt;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, a->sizes, a->ndim, dt) != NULL;
    }
    return ct__inplace_output(c, dt, 1);
}

/* Meta of isnan/isinf/isfinite: a bool tensor of the input's shape; the loop reads the
   input's own dtype. */
static bool ct__test_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    c->dtype = a->dtype;
    return ct__op_output(c, a->sizes, a->ndim, CT_BOOL) != NULL;
}

/* ---- addcmul, addcdiv ---------------------------------------------------------------------- */
/* input + value * tensor1 * tensor2 (addcmul), input + value * tensor1 / tensor2 (addcdiv) */
static void ct__addcmul_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 1), *b = ct__saved(n, 2);
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul(g, ct_mul_scalar(b, n->f[0]));
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_mul(g, ct_mul_scalar(a, n->f[0]));
    }
}

static void ct__addcdiv_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 1), *b = ct__saved(n, 2);
    gi[0] = ct__needs_grad(n, 0) ? (ct_tensor *)(uintptr_t)g : NULL;
    if (ct__needs_grad(n, 1)) { /* g * value / b */
        gi[1] = ct_mul(g, ct_div(ct_full_like(b, n->f[0]), b));
    }
    if (ct__needs_grad(n, 2)) { /* -g * value * a / b^2 */
        gi[2] = ct_mul(ct_mul_scalar(g, -n->f[0]), ct_div(a, ct_mul(b, b)));
    }
}

/* Meta of addcmul/addcdiv (inputs self, tensor1, tensor2; attribute 0: value): the three
   broadcast, promoted as one op; value must fit an integral result (it is truncated to it,
   as PyTorch). addcdiv of two integral tensors is PyTorch's error. */
static bool ct__addc_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *a = c->inputs[1], *b = c->inputs[2];
    int64_t s1[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int n1 = 0, nd = 0;
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, a->sizes, a->ndim, s1, &n1) ||
        !ct__broadcast_shapes(c->fn, s1, n1, b->sizes, b->ndim, shape, &nd)) {
        return false;
    }
    if (c->op->variant == CT__ADDCDIV && !ct_dtype_is_floating_point(a->dtype) &&
        !ct_dtype_is_floating_point(b->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "Integer division with addcdiv is no longer supported, and "
                 "in a future  release addcdiv will perform a true division of tensor1 and "
                 "tensor2. The historic addcdiv behavior can be implemented as (input + value * "
                 "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                 "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                 "behavior is just the latter implementation: (input + value * tensor1 / "
                 "tensor2), for all dtypes.");
        return false;
    }
    ct_dtype rt = ct__result_type(c->inputs, 3);
    if (!ct_dtype_is_floating_point(rt) && !ct__check_scalar(c->fn, c->attrs[0].f, rt)) {
        return false;
    }
    c->dtype = rt;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, shape, nd, rt) != NULL;
    }
    return ct__check_inplace_shape(c->fn, self, shape, nd) && ct__inplace_output(c, rt, 3);
}

/* ---- lerp ----------------------------------------------------------------------------------- */
static void ct__lerp_scalar_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_mul_scalar(g, 1.0 - n->f[0]);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul_scalar(g, n->f[0]);
    }
}

static void ct__lerp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *e = ct__saved(n, 1), *w = ct__saved(n, 2);
    if (ct__needs_grad(n, 0)) { /* g * (1 - weight) */
        gi[0] = ct_mul(g, ct_add_scalar(ct_neg(w), 1.0));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mul(g, w);
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_mul(g, ct_sub(e, x));
    }
}

/* lerp_ with a tensor weight saves the old self (meta's copy), end and weight. */
static void ct__lerp_inplace_record(ct_node *n, const ct_op_call *c)
{
    ct__save(n, (const ct_tensor *)c->state);
    ct__save(n, c->inputs[1]);
    ct__save(n, c->inputs[2]);
}

/* The name PyTorch's lerp gives a dtype in its messages (C++'s type name). */
static const char *ct__type_name(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "default", "bool", "unsigned char", "signed char", "short int", "int", "long int",
        "float", "double"};
    return names[d];
}

/* Meta of lerp (inputs self, end and, for lerp.Tensor, weight; lerp.Scalar: attribute 0):
   all broadcast, end and weight of self's dtype (PyTorch does not promote here). */
static bool ct__lerp_meta(ct_op_call *c)
{
    static const char *const names[3] = {"self", "end", "weight"};
    const ct_tensor *self = c->inputs[0];
    int64_t shape[CT_MAX_DIMS];
    int nd = self->ndim;
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)nd);
    for (int k = 1; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        int64_t s[CT_MAX_DIMS];
        int ns = 0;
        if (t->dtype != self->dtype) {
            ct__fail(CT_ERR_DTYPE, c->fn, "expected dtype %s for `%s` but got dtype %s",
                     ct__type_name(self->dtype), names[k], ct__type_name(t->dtype));
            return false;
        }
        if (!ct__broadcast_shapes(c->fn, shape, nd, t->sizes, t->ndim, s, &ns)) {
            return false;
        }
        memcpy(shape, s, sizeof(int64_t) * (size_t)ns);
        nd = ns;
    }
    c->dtype = self->dtype;
    if (c->op->kind != CT_OP_INPLACE) {
        return ct__op_output(c, shape, nd, self->dtype) != NULL;
    }
    return ct__check_inplace_shape(c->fn, self, shape, nd) &&
           ct__inplace_output(c, self->dtype, c->n_inputs);
}

/* ---- where ------------------------------------------------------------------------------- */
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

static bool ct__where_meta(ct_op_call *c)
{
    const ct_tensor *cond = c->inputs[0], *a = c->inputs[1], *b = c->inputs[2];
    if (cond->dtype != CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "where expected condition to be a boolean tensor, but got "
                 "a tensor with dtype %s", ct__dtype_title(cond->dtype));
        return false;
    }
    int64_t s1[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int n1 = 0, nd = 0;
    if (!ct__broadcast_shapes(c->fn, cond->sizes, cond->ndim, a->sizes, a->ndim, s1, &n1) ||
        !ct__broadcast_shapes(c->fn, s1, n1, b->sizes, b->ndim, shape, &nd)) {
        return false;
    }
    c->dtype = ct__result_type(c->inputs + 1, 2);
    return ct__op_output(c, shape, nd, c->dtype) != NULL;
}

static ct_status ct__where_kernel(ct_op_call *c)
{
    ct_tensor *ca = ct__cast(c->inputs[1], c->dtype), *cb = ct__cast(c->inputs[2], c->dtype);
    if (ca && cb) {
        const ct_tensor *ins[3] = {c->inputs[0], ca, cb};
        ct__iter it;
        ct__iter_build(&it, c->outputs[0], ins, 3);
        ct__iter_run(&it, c->op->loops[c->dtype], NULL);
    }
    ct_status st = ca && cb ? CT_OK : CT_ERR_OOM;
    ct__release(ca);
    ct__release(cb);
    return st;
}

/* ---- fill, copy, clone, conversions --------------------------------------------------------- */
static bool ct__fill_meta(ct_op_call *c)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    if (!ct__check_scalar(c->fn, c->attrs[0].f, self->dtype)) {
        return false;
    }
    c->dtype = self->dtype;
    c->outputs[c->n_outputs++] = self;
    return true;
}

static ct_status ct__fill_kernel(ct_op_call *c)
{
    ct_tensor *self = c->outputs[0];
    ct_tensor *s = ct__tensor_new(c->fn, NULL, 0, self->dtype);
    if (!s) {
        return CT_ERR_OOM;
    }
    ct__store_f64(ct__data(s), s->dtype, c->attrs[0].f);
    ct__copy_kernel(self, s);
    ct__release(s);
    return CT_OK;
}

static void ct__fill_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    (void)g;
    gi[0] = NULL; /* the old value gets no gradient */
}

/* copy_'s call: its inputs, where src is replaced by its copy on self's device when it is on
   another one (c->state points here). */
typedef struct ct__copy_state {
    const ct_tensor *in[2];
    ct_tensor *moved; /* src on self's device (an unscoped reference), or NULL */
} ct__copy_state;

static bool ct__same_device(ct_device a, ct_device b)
{
    return a.type == b.type && a.index == b.index;
}

static bool ct__copy_meta(ct_op_call *c)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    const ct_tensor *src = c->inputs[1];
    if (!ct__same_device(src->storage->device, self->storage->device)) {
        ct__copy_state *s = (ct__copy_state *)c->state; /* src comes over first, recorded */
        s->moved = ct__transfer(src, self->storage->device);
        if (!s->moved) {
            return false;
        }
        src = s->in[1] = s->moved;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, src->sizes, src->ndim, shape,
                              &nd) ||
        !ct__check_inplace_shape(c->fn, self, shape, nd)) {
        return false;
    }
    c->dtype = self->dtype;
    c->outputs[c->n_outputs++] = self;
    return true;
}

static ct_status ct__copy_cpu_kernel(ct_op_call *c)
{
    ct__copy_kernel(c->outputs[0], c->inputs[1]);
    return CT_OK;
}

static void ct__copy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 1)) {
        gi[1] = (ct_tensor *)(uintptr_t)g; /* the engine sums to src's shape and casts */
    }
}

/* Output of a copy: the input's shape and dtype (clone), or the dtype attribute (to). */
static bool ct__same_shape_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    c->dtype = a->dtype;
    ct_dtype out = c->n_attrs ? (ct_dtype)c->attrs[0].i : a->dtype;
    return ct__op_output(c, a->sizes, a->ndim, out) != NULL;
}

static ct_status ct__copy_to_output_kernel(ct_op_call *c)
{
    ct__copy_kernel(c->outputs[0], c->inputs[0]);
    return CT_OK;
}

/* ---- devices ------------------------------------------------------------------------------ */
/* _to_copy to a device: attrs (device type, device index); the input's shape and dtype. */
static bool ct__to_device_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    c->dtype = a->dtype;
    c->device = ct_make_device((ct_device_type)c->attrs[0].i, (int)c->attrs[1].i);
    return ct__op_output(c, a->sizes, a->ndim, a->dtype) != NULL;
}

/* Moves the bytes of the input, made contiguous on its device, into the output through the
   backends' copy (the target's, or the source's when the target is the CPU); between two
   backends, through the host. Runs on any device pair: the descriptor's composite. */
static ct_status ct__to_device_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    size_t nbytes = ct_nbytes(out);
    if (nbytes == 0) {
        return CT_OK;
    }
    ct_no_grad_begin();
    ct_scope_begin();
    const ct_tensor *src = ct_contiguous(c->inputs[0]);
    ct_device from = c->inputs[0]->storage->device, to = out->storage->device;
    if (src && from.type != CT_CPU && to.type != CT_CPU && from.type != to.type) {
        src = ct_to_device(src, ct_device_cpu());
        from = ct_device_cpu();
    }
    ct_status st = src ? CT_OK : ct_error_code();
    if (src) {
        const ct_backend *b = ct__backend(to.type != CT_CPU ? to.type : from.type);
        st = b->copy(b->user, ct__data(out), to, ct__data(src), from, nbytes);
        if (st != CT_OK) {
            char a[32], d[32];
            ct__fail(st, c->fn, "the %s backend failed to copy %zu bytes from %s to %s",
                     b->name, nbytes, ct__device_str(from, a, sizeof a),
                     ct__device_str(to, d, sizeof d));
        }
    }
    ct_scope_end();
    ct_no_grad_end();
    return st;
}

/* The source's device, for the backward. */
static void ct__to_device_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->inputs[0]->storage->device.type;
    n->i[1] = c->inputs[0]->storage->device.index;
}

/* The gradient goes back to the source's device. */
static void ct__to_device_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__transfer(g, ct_make_device((ct_device_type)n->i[0], (int)n->i[1]));
    if (gi[0]) {
        gi[0] = ct__scoped(gi[0]); /* ct__transfer returned an unscoped reference */
    }
}


/* ---- descriptors ----------------------------------------------------------------------------- */
#define CT__SAVE_IN(k) (1u << (k))
#define CT__SAVE_OUT(k) (1u << (8 + (k)))
#define CT__BINARY_SCHEMA(N, EXTRA) N ".Tensor(Tensor self, Tensor other" EXTRA ") -> Tensor"

static const ct_loop_fn ct__loops_add[CT_DTYPE_COUNT] = CT__L_NUM(add);
static const ct_loop_fn ct__loops_sub[CT_DTYPE_COUNT] = CT__L_NUM(sub);
static const ct_loop_fn ct__loops_mul[CT_DTYPE_COUNT] = CT__L_NUM(mul);
static const ct_loop_fn ct__loops_div[CT_DTYPE_COUNT] = CT__L_FLT(div);
static const ct_loop_fn ct__loops_pow[CT_DTYPE_COUNT] = CT__L_NUM(pow);
static const ct_loop_fn ct__loops_maximum[CT_DTYPE_COUNT] = CT__L_NUM(maximum);
static const ct_loop_fn ct__loops_minimum[CT_DTYPE_COUNT] = CT__L_NUM(minimum);
static const ct_loop_fn ct__loops_eq[CT_DTYPE_COUNT] = CT__L_ALL(eq);
static const ct_loop_fn ct__loops_ne[CT_DTYPE_COUNT] = CT__L_ALL(ne);
static const ct_loop_fn ct__loops_lt[CT_DTYPE_COUNT] = CT__L_ALL(lt);
static const ct_loop_fn ct__loops_le[CT_DTYPE_COUNT] = CT__L_ALL(le);
static const ct_loop_fn ct__loops_gt[CT_DTYPE_COUNT] = CT__L_ALL(gt);
static const ct_loop_fn ct__loops_ge[CT_DTYPE_COUNT] = CT__L_ALL(ge);
static const ct_loop_fn ct__loops_and[CT_DTYPE_COUNT] = CT__L_BOOL(ct__loop_and);
static const ct_loop_fn ct__loops_or[CT_DTYPE_COUNT] = CT__L_BOOL(ct__loop_or);
static const ct_loop_fn ct__loops_relu_bw[CT_DTYPE_COUNT] = CT__L_FLT(relu_bw);
static const ct_loop_fn ct__loops_sigmoid_bw[CT_DTYPE_COUNT] = CT__L_FLT(sigmoid_bw);
static const ct_loop_fn ct__loops_tanh_bw[CT_DTYPE_COUNT] = CT__L_FLT(tanh_bw);
static const ct_loop_fn ct__loops_neg[CT_DTYPE_COUNT] = CT__L_NUM(neg);
static const ct_loop_fn ct__loops_abs[CT_DTYPE_COUNT] = CT__L_NUM(abs);
static const ct_loop_fn ct__loops_relu[CT_DTYPE_COUNT] = CT__L_NUM(relu);
static const ct_loop_fn ct__loops_square[CT_DTYPE_COUNT] = CT__L_NUM(square);
static const ct_loop_fn ct__loops_sign[CT_DTYPE_COUNT] = CT__L_NUM(sign);
static const ct_loop_fn ct__loops_exp[CT_DTYPE_COUNT] = CT__L_FLT(exp);
static const ct_loop_fn ct__loops_log[CT_DTYPE_COUNT] = CT__L_FLT(log);
static const ct_loop_fn ct__loops_log1p[CT_DTYPE_COUNT] = CT__L_FLT(log1p);
static const ct_loop_fn ct__loops_sqrt[CT_DTYPE_COUNT] = CT__L_FLT(sqrt);
static const ct_loop_fn ct__loops_rsqrt[CT_DTYPE_COUNT] = CT__L_FLT(rsqrt);
static const ct_loop_fn ct__loops_sin[CT_DTYPE_COUNT] = CT__L_FLT(sin);
static const ct_loop_fn ct__loops_cos[CT_DTYPE_COUNT] = CT__L_FLT(cos);
static const ct_loop_fn ct__loops_sigmoid[CT_DTYPE_COUNT] = CT__L_FLT(sigmoid);
static const ct_loop_fn ct__loops_tanh[CT_DTYPE_COUNT] = CT__L_FLT(tanh);
static const ct_loop_fn ct__loops_reciprocal[CT_DTYPE_COUNT] = CT__L_FLT(reciprocal);
static const ct_loop_fn ct__loops_clamp[CT_DTYPE_COUNT] = CT__L_NUM(clamp);
static const ct_loop_fn ct__loops_pows[CT_DTYPE_COUNT] = CT__L_NUM(pows);
static const ct_loop_fn ct__loops_erf[CT_DTYPE_COUNT] = CT__L_FLT(erf);
static const ct_loop_fn ct__loops_addcmul[CT_DTYPE_COUNT] = CT__L_NUM(addcmul);
static const ct_loop_fn ct__loops_addcdiv[CT_DTYPE_COUNT] = CT__L_FLT(addcdiv);
static const ct_loop_fn ct__loops_lerp[CT_DTYPE_COUNT] = CT__L_FLT(lerp);
static const ct_loop_fn ct__loops_div_trunc[CT_DTYPE_COUNT] = CT__L_NUM(div_trunc);
static const ct_loop_fn ct__loops_div_floor[CT_DTYPE_COUNT] = CT__L_NUM(div_floor);
static const ct_loop_fn ct__loops_lerps[CT_DTYPE_COUNT] = CT__L_FLT(lerps);
static const ct_loop_fn ct__loops_isnan[CT_DTYPE_COUNT] = CT__L_ALL(isnan);
static const ct_loop_fn ct__loops_isinf[CT_DTYPE_COUNT] = CT__L_ALL(isinf);
static const ct_loop_fn ct__loops_isfinite[CT_DTYPE_COUNT] = CT__L_ALL(isfinite);
static const ct_loop_fn ct__loops_not[CT_DTYPE_COUNT] = CT__L_BOOL(ct__loop_not);
static const ct_loop_fn ct__loops_where[CT_DTYPE_COUNT] = CT__L_ALL(where);

/* A pointwise op: name, schema, public functions, kind, variant, loops, meta, kernels, node,
   backward, saved tensors. */
#define CT__POINTWISE(SYM, NAME, SCHEMA, API, KIND, VAR, LOOPS, META, KERNELS, NODE, BW, SAVE,  \
                      RECORD)                                                                  \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, VAR, 0u,     \
                                       LOOPS, META, KERNELS, NULL, NODE, BW, SAVE, RECORD, NULL};
#define CT__BINARY(SYM, NAME, API, VAR, LOOPS, K, NODE, BW, SAVE)                               \
    CT__POINTWISE(SYM, "aten::" NAME, NAME ".Tensor(Tensor self, Tensor other) -> Tensor", API, \
                  CT_OP_POINTWISE, VAR, ct__loops_##LOOPS, ct__binary_meta,                     \
                  K(ct__pointwise_kernel), NODE, BW, SAVE, NULL)
#define CT__UNARY(SYM, NAME, API, VAR, LOOPS, K, NODE, BW, SAVE)                                \
    CT__POINTWISE(SYM, "aten::" NAME, NAME "(Tensor self) -> Tensor", API, CT_OP_POINTWISE, VAR, \
                  ct__loops_##LOOPS, ct__unary_meta, K(ct__pointwise_kernel), NODE, BW, SAVE,    \
                  NULL)

CT__POINTWISE(add, "aten::add", "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
              "Tensor", "ct_add ct_add_alpha ct_add_scalar", CT_OP_POINTWISE, CT__ADD,
              ct__loops_add, ct__binary_meta, CT__K_NUMERIC(ct__pointwise_kernel), "AddBackward0",
              ct__add_backward, 0u, NULL)
CT__POINTWISE(sub, "aten::sub", "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
              "Tensor", "ct_sub ct_sub_scalar", CT_OP_POINTWISE, CT__SUB, ct__loops_sub,
              ct__binary_meta, CT__K_NUMERIC(ct__pointwise_kernel), "SubBackward0",
              ct__sub_backward, 0u, NULL)
CT__BINARY(mul, "mul", "ct_mul ct_mul_scalar", CT__MUL, mul, CT__K_NUMERIC, "MulBackward0",
           ct__mul_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY(div, "div", "ct_div ct_div_scalar", CT__DIV, div, CT__K_FLOAT, "DivBackward0",
           ct__div_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__POINTWISE(pow, "aten::pow", "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
              "ct_pow ct_pow_scalar", CT_OP_POINTWISE, CT__POW, ct__loops_pow, ct__binary_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "PowBackward1", ct__pow_backward,
              CT__SAVE_IN(0) | CT__SAVE_IN(1) | CT__SAVE_OUT(0), NULL)
#define CT__DIV_MODE(SYM, VAR, LOOPS, K, KERNEL, BW, SAVE)                                     \
    CT__POINTWISE(SYM, "aten::div", "div.Tensor_mode(Tensor self, Tensor other, *, str? "       \
                  "rounding_mode) -> Tensor", "ct_div_mode", CT_OP_POINTWISE, VAR,              \
                  ct__loops_##LOOPS, ct__binary_meta, K(KERNEL), "DivBackward2", BW, SAVE, NULL)
CT__DIV_MODE(div_true, CT__DIV, div, CT__K_FLOAT, ct__pointwise_kernel, ct__div_backward,
             CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__DIV_MODE(div_trunc, CT__DIV_TRUNC, div_trunc, CT__K_NUMERIC, ct__div_mode_kernel,
             ct__div_mode_backward, 0u)
CT__DIV_MODE(div_floor, CT__DIV_FLOOR, div_floor, CT__K_NUMERIC, ct__div_mode_kernel,
             ct__div_mode_backward, 0u)
CT__BINARY(maximum, "maximum", "ct_maximum", CT__MAXIMUM, maximum, CT__K_NUMERIC,
           "MaximumBackward0", ct__maximum_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY(minimum, "minimum", "ct_minimum", CT__MINIMUM, minimum, CT__K_NUMERIC,
           "MinimumBackward0", ct__minimum_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY(eq, "eq", "ct_eq ct_eq_scalar", CT__EQ, eq, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(ne, "ne", "ct_ne", CT__NE, ne, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(lt, "lt", "ct_lt ct_lt_scalar", CT__LT, lt, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(le, "le", "ct_le", CT__LE, le, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(gt, "gt", "ct_gt ct_gt_scalar", CT__GT, gt, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(ge, "ge", "ct_ge", CT__GE, ge, CT__K_ALL, NULL, NULL, 0u)
CT__BINARY(logical_and, "logical_and", "ct_logical_and", CT__AND, and, CT__K_BOOL, NULL, NULL, 0u)
CT__BINARY(logical_or, "logical_or", "ct_logical_or", CT__OR, or, CT__K_BOOL, NULL, NULL, 0u)
CT__POINTWISE(threshold_backward, "aten::threshold_backward", "threshold_backward(Tensor "
              "grad_output, Tensor self, Scalar threshold) -> Tensor", "ct_backward (ReLU)",
              CT_OP_POINTWISE, CT__RELU_BW, ct__loops_relu_bw, ct__binary_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "ThresholdBackwardBackward0",
              ct__relu_bw_backward, CT__SAVE_IN(1), NULL)
CT__POINTWISE(sigmoid_backward, "aten::sigmoid_backward", "sigmoid_backward(Tensor "
              "grad_output, Tensor output) -> Tensor", "ct_backward (sigmoid)", CT_OP_POINTWISE,
              CT__SIGMOID_BW, ct__loops_sigmoid_bw, ct__binary_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "SigmoidBackwardBackward0",
              ct__sigmoid_bw_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1), NULL)
CT__POINTWISE(tanh_backward, "aten::tanh_backward", "tanh_backward(Tensor grad_output, Tensor "
              "output) -> Tensor", "ct_backward (tanh)", CT_OP_POINTWISE, CT__TANH_BW,
              ct__loops_tanh_bw, ct__binary_meta, CT__K_FLOAT(ct__pointwise_kernel),
              "TanhBackwardBackward0", ct__tanh_bw_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1),
              NULL)
#define CT__BINARY_INPLACE(SYM, NAME, API, VAR, LOOPS, K, NODE, BW, SAVE)                     \
    CT__POINTWISE(SYM, "aten::" NAME, NAME ".Tensor(Tensor(a!) self, Tensor other, *, Scalar " \
                  "alpha=1) -> Tensor(a!)", API, CT_OP_INPLACE, VAR, ct__loops_##LOOPS,         \
                  ct__binary_meta, K(ct__pointwise_kernel), NODE, BW, SAVE,                     \
                  ct__binary_inplace_record)
CT__BINARY_INPLACE(add_, "add_", "ct_add_", CT__ADD, add, CT__K_NUMERIC, "AddBackward0",
                   ct__add_backward, 0u)
CT__BINARY_INPLACE(sub_, "sub_", "ct_sub_", CT__SUB, sub, CT__K_NUMERIC, "SubBackward0",
                   ct__sub_backward, 0u)
CT__BINARY_INPLACE(mul_, "mul_", "ct_mul_", CT__MUL, mul, CT__K_NUMERIC, "MulBackward0",
                   ct__mul_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))
CT__BINARY_INPLACE(div_, "div_", "ct_div_", CT__DIV, div, CT__K_FLOAT, "DivBackward0",
                   ct__div_backward, CT__SAVE_IN(0) | CT__SAVE_IN(1))

CT__UNARY(neg, "neg", "ct_neg", CT__NEG, neg, CT__K_NUMERIC, "NegBackward0", ct__neg_backward, 0u)
CT__UNARY(abs, "abs", "ct_abs", CT__ABS, abs, CT__K_NUMERIC, "AbsBackward0", ct__abs_backward,
          CT__SAVE_IN(0))
CT__UNARY(relu, "relu", "ct_relu", CT__RELU, relu, CT__K_NUMERIC, "ReluBackward0",
          ct__relu_backward, CT__SAVE_OUT(0))
CT__UNARY(square, "square", "ct_square", CT__SQUARE, square, CT__K_NUMERIC, "PowBackward0",
          ct__square_backward, CT__SAVE_IN(0))
CT__UNARY(sign, "sign", "ct_abs (backward)", CT__SIGN, sign, CT__K_NUMERIC, NULL, NULL, 0u)
CT__UNARY(exp, "exp", "ct_exp", CT__EXP, exp, CT__K_FLOAT, "ExpBackward0", ct__exp_backward,
          CT__SAVE_OUT(0))
CT__UNARY(log, "log", "ct_log", CT__LOG, log, CT__K_FLOAT, "LogBackward0", ct__log_backward,
          CT__SAVE_IN(0))
CT__UNARY(log1p, "log1p", "ct_log1p", CT__LOG1P, log1p, CT__K_FLOAT, "Log1PBackward0",
          ct__log1p_backward, CT__SAVE_IN(0))
CT__UNARY(sqrt, "sqrt", "ct_sqrt", CT__SQRT, sqrt, CT__K_FLOAT, "SqrtBackward0",
          ct__sqrt_backward, CT__SAVE_OUT(0))
CT__UNARY(rsqrt, "rsqrt", "ct_rsqrt", CT__RSQRT, rsqrt, CT__K_FLOAT, "RsqrtBackward0",
          ct__rsqrt_backward, CT__SAVE_OUT(0))
CT__UNARY(sin, "sin", "ct_sin", CT__SIN, sin, CT__K_FLOAT, "SinBackward0", ct__sin_backward,
          CT__SAVE_IN(0))
CT__UNARY(cos, "cos", "ct_cos", CT__COS, cos, CT__K_FLOAT, "CosBackward0", ct__cos_backward,
          CT__SAVE_IN(0))
CT__UNARY(sigmoid, "sigmoid", "ct_sigmoid", CT__SIGMOID, sigmoid, CT__K_FLOAT,
          "SigmoidBackward0", ct__sigmoid_backward, CT__SAVE_OUT(0))
CT__UNARY(tanh, "tanh", "ct_tanh", CT__TANH, tanh, CT__K_FLOAT, "TanhBackward0",
          ct__tanh_backward, CT__SAVE_OUT(0))
CT__UNARY(reciprocal, "reciprocal", "ct_reciprocal", CT__RECIPROCAL, reciprocal, CT__K_FLOAT,
          "ReciprocalBackward0", ct__reciprocal_backward, CT__SAVE_OUT(0))
CT__UNARY(erf, "erf", "ct_erf", CT__ERF, erf, CT__K_FLOAT, "ErfBackward0", ct__erf_backward,
          CT__SAVE_IN(0))
#define CT__TEST(SYM, VAR)                                                                      \
    CT__POINTWISE(SYM, "aten::" #SYM, #SYM "(Tensor self) -> Tensor", "ct_" #SYM,              \
                  CT_OP_POINTWISE, VAR, ct__loops_##SYM, ct__test_meta,                         \
                  CT__K_ALL(ct__bool_out_kernel), NULL, NULL, 0u, NULL)
CT__TEST(isnan, CT__ISNAN)
CT__TEST(isinf, CT__ISINF)
CT__TEST(isfinite, CT__ISFINITE)
CT__UNARY(logical_not, "logical_not", "ct_logical_not", CT__NOT, not, CT__K_ALL, NULL, NULL, 0u)
CT__POINTWISE(clamp, "aten::clamp", "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> "
              "Tensor", "ct_clamp", CT_OP_POINTWISE, CT__CLAMP, ct__loops_clamp, ct__unary_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "ClampBackward1", ct__clamp_backward,
              CT__SAVE_IN(0), NULL)
CT__POINTWISE(pow_scalar, "aten::pow", "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> "
              "Tensor", "ct_pow_scalar", CT_OP_POINTWISE, CT__POWS, ct__loops_pows,
              ct__unary_meta, CT__K_FLOAT(ct__pointwise_kernel), "PowBackward0",
              ct__pows_backward, CT__SAVE_IN(0), NULL)
CT__POINTWISE(relu_, "aten::relu_", "relu_(Tensor(a!) self) -> Tensor(a!)", "ct_relu_",
              CT_OP_INPLACE, CT__RELU, ct__loops_relu, ct__unary_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "ReluBackward0", ct__relu_backward,
              CT__SAVE_OUT(0), NULL)
/* In-place unary ops: the loops of their out-of-place forms, written into self. Those whose
   derivative reads the input record a copy of the old self (ct__unary_inplace_record). */
#define CT__UNARY_INPLACE(SYM, SCHEMA, VAR, LOOPS, K, NODE, BW, SAVE, RECORD)                   \
    CT__POINTWISE(SYM##_, "aten::" #SYM "_", SCHEMA, "ct_" #SYM "_", CT_OP_INPLACE, VAR,         \
                  ct__loops_##LOOPS, ct__unary_meta, K(ct__pointwise_kernel), NODE, BW, SAVE,   \
                  RECORD)
#define CT__INPLACE_SCHEMA(N) N "_(Tensor(a!) self) -> Tensor(a!)"
CT__UNARY_INPLACE(neg, CT__INPLACE_SCHEMA("neg"), CT__NEG, neg, CT__K_NUMERIC, "NegBackward0",
                  ct__neg_backward, 0u, NULL)
CT__UNARY_INPLACE(abs, CT__INPLACE_SCHEMA("abs"), CT__ABS, abs, CT__K_NUMERIC, "AbsBackward0",
                  ct__abs_backward, CT__SAVE_IN(0), ct__unary_inplace_record)
CT__UNARY_INPLACE(exp, CT__INPLACE_SCHEMA("exp"), CT__EXP, exp, CT__K_FLOAT, "ExpBackward0",
                  ct__exp_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(log, CT__INPLACE_SCHEMA("log"), CT__LOG, log, CT__K_FLOAT, "LogBackward0",
                  ct__log_backward, CT__SAVE_IN(0), ct__unary_inplace_record)
CT__UNARY_INPLACE(sqrt, CT__INPLACE_SCHEMA("sqrt"), CT__SQRT, sqrt, CT__K_FLOAT, "SqrtBackward0",
                  ct__sqrt_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(sigmoid, CT__INPLACE_SCHEMA("sigmoid"), CT__SIGMOID, sigmoid, CT__K_FLOAT,
                  "SigmoidBackward0", ct__sigmoid_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(tanh, CT__INPLACE_SCHEMA("tanh"), CT__TANH, tanh, CT__K_FLOAT, "TanhBackward0",
                  ct__tanh_backward, CT__SAVE_OUT(0), NULL)
CT__UNARY_INPLACE(pow, "pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", CT__POWS,
                  pows, CT__K_NUMERIC, "PowBackward0", ct__pows_backward, CT__SAVE_IN(0),
                  ct__unary_inplace_record)
CT__UNARY_INPLACE(clamp, "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> "
                  "Tensor(a!)", CT__CLAMP, clamp, CT__K_NUMERIC, "ClampBackward1",
                  ct__clamp_backward, CT__SAVE_IN(0), ct__unary_inplace_record)
#define CT__ADDC_SCHEMA(N, SELF, RET)                                                         \
    N "(Tensor" SELF " self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor" RET
#define CT__ADDC_SAVE (CT__SAVE_IN(1) | CT__SAVE_IN(2))
CT__POINTWISE(addcmul, "aten::addcmul", CT__ADDC_SCHEMA("addcmul", "", ""), "ct_addcmul",
              CT_OP_POINTWISE, CT__ADDCMUL, ct__loops_addcmul, ct__addc_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "AddcmulBackward0", ct__addcmul_backward,
              CT__ADDC_SAVE, NULL)
CT__POINTWISE(addcmul_, "aten::addcmul_", CT__ADDC_SCHEMA("addcmul_", "(a!)", "(a!)"),
              "ct_addcmul_", CT_OP_INPLACE, CT__ADDCMUL, ct__loops_addcmul, ct__addc_meta,
              CT__K_NUMERIC(ct__pointwise_kernel), "AddcmulBackward0", ct__addcmul_backward,
              CT__ADDC_SAVE, NULL)
CT__POINTWISE(addcdiv, "aten::addcdiv", CT__ADDC_SCHEMA("addcdiv", "", ""), "ct_addcdiv",
              CT_OP_POINTWISE, CT__ADDCDIV, ct__loops_addcdiv, ct__addc_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "AddcdivBackward0", ct__addcdiv_backward,
              CT__ADDC_SAVE, NULL)
CT__POINTWISE(addcdiv_, "aten::addcdiv_", CT__ADDC_SCHEMA("addcdiv_", "(a!)", "(a!)"),
              "ct_addcdiv_", CT_OP_INPLACE, CT__ADDCDIV, ct__loops_addcdiv, ct__addc_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "AddcdivBackward0", ct__addcdiv_backward,
              CT__ADDC_SAVE, NULL)
#define CT__LERP_SCHEMA(N, OVL, SELF, W, RET)                                                 \
    N "." OVL "(Tensor" SELF " self, Tensor end, " W " weight) -> Tensor" RET
CT__POINTWISE(lerp, "aten::lerp", CT__LERP_SCHEMA("lerp", "Tensor", "", "Tensor", ""), "ct_lerp",
              CT_OP_POINTWISE, CT__LERP, ct__loops_lerp, ct__lerp_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward1", ct__lerp_backward,
              CT__SAVE_IN(0) | CT__SAVE_IN(1) | CT__SAVE_IN(2), NULL)
CT__POINTWISE(lerp_scalar, "aten::lerp", CT__LERP_SCHEMA("lerp", "Scalar", "", "Scalar", ""),
              "ct_lerp_scalar", CT_OP_POINTWISE, CT__LERP, ct__loops_lerps, ct__lerp_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward0", ct__lerp_scalar_backward, 0u,
              NULL)
CT__POINTWISE(lerp_, "aten::lerp_", CT__LERP_SCHEMA("lerp_", "Tensor", "(a!)", "Tensor", "(a!)"),
              "ct_lerp_", CT_OP_INPLACE, CT__LERP, ct__loops_lerp, ct__lerp_meta,
              CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward1", ct__lerp_backward,
              CT__SAVE_IN(0) | CT__SAVE_IN(1) | CT__SAVE_IN(2), ct__lerp_inplace_record)
CT__POINTWISE(lerp_scalar_, "aten::lerp_", CT__LERP_SCHEMA("lerp_", "Scalar", "(a!)", "Scalar",
              "(a!)"), "ct_lerp_scalar_", CT_OP_INPLACE, CT__LERP, ct__loops_lerps,
              ct__lerp_meta, CT__K_FLOAT(ct__pointwise_kernel), "LerpBackward0",
              ct__lerp_scalar_backward, 0u, NULL)
CT__POINTWISE(where, "aten::where", "where.self(Tensor condition, Tensor self, Tensor other) -> "
              "Tensor", "ct_where", CT_OP_POINTWISE, 0, ct__loops_where, ct__where_meta,
              CT__K_ALL(ct__where_kernel), "WhereBackward0", ct__where_backward, CT__SAVE_IN(0),
              NULL)
CT__POINTWISE(fill_, "aten::fill_", "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
              "ct_fill_ ct_zero_", CT_OP_INPLACE, 0, NULL, ct__fill_meta,
              CT__K_ALL(ct__fill_kernel), "FillBackward0", ct__fill_backward, 0u, NULL)
/* src may be on another device: meta brings it over through _to_copy (recorded by autograd). */
static const ct_op ct__op_copy_ = {"aten::copy_", "copy_(Tensor(a!) self, Tensor src, bool "
                                   "non_blocking=False) -> Tensor(a!)", "ct_copy_",
                                   CT_OP_INPLACE, CT_AUTOCAST_NONE, 0, CT_OP_ANY_DEVICE(1), NULL,
                                   ct__copy_meta, CT__K_ALL(ct__copy_cpu_kernel), NULL,
                                   "CopyBackwards", ct__copy_backward, 0u, NULL, NULL};
CT__POINTWISE(clone, "aten::clone", "clone(Tensor self, *, MemoryFormat? memory_format=None) -> "
              "Tensor", "ct_clone", CT_OP_OTHER, 0, NULL, ct__same_shape_meta,
              CT__K_ALL(ct__copy_to_output_kernel), "CloneBackward0", ct__identity_backward, 0u,
              NULL)
CT__POINTWISE(to_dtype, "aten::_to_copy", "_to_copy(Tensor self, *, ScalarType? dtype=None) -> "
              "Tensor", "ct_to_dtype", CT_OP_OTHER, 0, NULL, ct__same_shape_meta,
              CT__K_ALL(ct__copy_to_output_kernel), "ToCopyBackward0", ct__identity_backward, 0u,
              NULL)
/* The same operator to another device: one kernel for every pair of devices (the composite),
   built on the backends' copy. Attributes: the device's type and index. */
static const ct_op ct__op_to_device = {"aten::_to_copy", "_to_copy(Tensor self, *, Device? "
                                       "device=None) -> Tensor", "ct_to_device ct_cpu ct_copy_",
                                       CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL,
                                       ct__to_device_meta, CT__K_NONE, ct__to_device_kernel,
                                       "ToCopyBackward0", ct__to_device_backward, 0u,
                                       ct__to_device_record, NULL};

/* ---- public functions ---------------------------------------------------------------------- */
static ct_tensor *ct__call1(const ct_op *op, const char *fn, const ct_tensor *a, int n_attrs,
                            double p0, double p1)
{
    const ct_tensor *in[1] = {a};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (n_attrs > 0) {
        ct__call_f(&c, p0);
    }
    if (n_attrs > 1) {
        ct__call_f(&c, p1);
    }
    ct_tensor *out = ct__dispatch(&c);
    if (c.state) { /* an in-place op's saved old self */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

/* A call over tensors a and b; alpha is attribute 0 of ops whose schema has one (add, sub
   and their in-place forms). */
static ct_tensor *ct__call2(const ct_op *op, const char *fn, const ct_tensor *a,
                            const ct_tensor *b, double alpha)
{
    const ct_tensor *in[2] = {a, b};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    if (op->variant <= CT__SUB && op->meta == ct__binary_meta) {
        ct__call_f(&c, alpha);
    }
    ct_tensor *out = ct__dispatch(&c);
    if (c.state) { /* an in-place op's saved old self */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

/* binary op with a C scalar as the second operand (a wrapped number) */
static ct_tensor *ct__call2_scalar(const ct_op *op, const char *fn, const ct_tensor *a, double v)
{
    if (ct__null(fn, a)) {
        return NULL;
    }
    ct_tensor *s = ct__wrap_scalar(v);
    ct_tensor *out = s ? ct__call2(op, fn, a, s, 1.0) : NULL;
    ct__release(s);
    return out;
}

static ct_tensor *ct__threshold_bw(const ct_tensor *g, const ct_tensor *y)
{
    return ct__call2(&ct__op_threshold_backward, "ct_threshold_backward", g, y, 0.0);
}

static ct_tensor *ct__sigmoid_bw(const ct_tensor *g, const ct_tensor *y)
{
    return ct__call2(&ct__op_sigmoid_backward, "ct_sigmoid_backward", g, y, 1.0);
}

static ct_tensor *ct__tanh_bw(const ct_tensor *g, const ct_tensor *y)
{
    return ct__call2(&ct__op_tanh_backward, "ct_tanh_backward", g, y, 1.0);
}

static ct_tensor *ct__sign(const ct_tensor *x)
{
    return ct__call1(&ct__op_sign, "ct_sign", x, 0, 0, 0);
}

static ct_tensor *ct__ge_scalar(const ct_tensor *x, double v)
{
    return ct__call2_scalar(&ct__op_ge, "ct_clamp", x, v);
}

static ct_tensor *ct__le_scalar(const ct_tensor *x, double v)
{
    return ct__call2_scalar(&ct__op_le, "ct_clamp", x, v);
}

ct_tensor *ct__threshold_backward(const ct_tensor *g, const ct_tensor *y)
{
    return ct__threshold_bw(g, y);
}

/* The public binary ops: ct_<name>(a, b) and ct_<name>_scalar(a, v). */
#define CT__BINARY_OP(NAME)                                                                    \
    ct_tensor *ct_##NAME(const ct_tensor *a, const ct_tensor *b)                               \
    {                                                                                          \
        return ct__call2(&ct__op_##NAME, "ct_" #NAME, a, b, 1.0);                              \
    }
#define CT__SCALAR_OP(NAME)                                                                    \
    ct_tensor *ct_##NAME##_scalar(const ct_tensor *a, double v)                                \
    {                                                                                          \
        return ct__call2_scalar(&ct__op_##NAME, "ct_" #NAME, a, v);                            \
    }
CT__BINARY_OP(add)
CT__BINARY_OP(sub)
CT__BINARY_OP(mul)
CT__BINARY_OP(div)
CT__BINARY_OP(pow)
CT__BINARY_OP(maximum)
CT__BINARY_OP(minimum)
CT__BINARY_OP(eq)
CT__BINARY_OP(ne)
CT__BINARY_OP(lt)
CT__BINARY_OP(le)
CT__BINARY_OP(gt)
CT__BINARY_OP(ge)
CT__BINARY_OP(logical_and)
CT__BINARY_OP(logical_or)
CT__SCALAR_OP(add)
CT__SCALAR_OP(sub)
CT__SCALAR_OP(mul)
CT__SCALAR_OP(div)
CT__SCALAR_OP(eq)
CT__SCALAR_OP(gt)
CT__SCALAR_OP(lt)
#undef CT__BINARY_OP
#undef CT__SCALAR_OP

ct_tensor *ct_div_mode(const ct_tensor *input, const ct_tensor *other,
                       ct_rounding_mode rounding_mode)
{
    static const ct_op *const ops[3] = {&ct__op_div_true, &ct__op_div_trunc, &ct__op_div_floor};
    if ((int)rounding_mode < 0 || (int)rounding_mode > (int)CT_ROUNDING_FLOOR) {
        ct__fail(CT_ERR_VALUE, "ct_div_mode", "div expected rounding_mode to be one of None, "
                 "'trunc', or 'floor' but found %d", (int)rounding_mode);
        return NULL;
    }
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, ops[rounding_mode], "ct_div_mode", in, 2);
    ct__call_i(&c, rounding_mode);
    return ct__dispatch(&c);
}

ct_tensor *ct_add_alpha(const ct_tensor *a, const ct_tensor *b, double alpha)
{
    return ct__call2(&ct__op_add, "ct_add", a, b, alpha);
}

ct_tensor *ct_add_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__call2(&ct__op_add_, "ct_add_", self, other, alpha);
}

ct_tensor *ct_sub_(ct_tensor *self, const ct_tensor *other, double alpha)
{
    return ct__call2(&ct__op_sub_, "ct_sub_", self, other, alpha);
}

ct_tensor *ct_mul_(ct_tensor *self, const ct_tensor *other)
{
    return ct__call2(&ct__op_mul_, "ct_mul_", self, other, 1.0);
}

ct_tensor *ct_div_(ct_tensor *self, const ct_tensor *other)
{
    return ct__call2(&ct__op_div_, "ct_div_", self, other, 1.0);
}

#define CT__UNARY_OP(NAME)                                                                     \
    ct_tensor *ct_##NAME(const ct_tensor *a)                                                   \
    {                                                                                          \
        return ct__call1(&ct__op_##NAME, "ct_" #NAME, a, 0, 0, 0);                             \
    }
CT__UNARY_OP(neg)
CT__UNARY_OP(abs)
CT__UNARY_OP(exp)
CT__UNARY_OP(log)
CT__UNARY_OP(log1p)
CT__UNARY_OP(sqrt)
CT__UNARY_OP(rsqrt)
CT__UNARY_OP(sin)
CT__UNARY_OP(cos)
CT__UNARY_OP(sigmoid)
CT__UNARY_OP(tanh)
CT__UNARY_OP(relu)
CT__UNARY_OP(square)
CT__UNARY_OP(reciprocal)
CT__UNARY_OP(logical_not)
CT__UNARY_OP(erf)
CT__UNARY_OP(isnan)
CT__UNARY_OP(isinf)
CT__UNARY_OP(isfinite)
#undef CT__UNARY_OP
#define CT__INPLACE_OP(NAME)                                                                   \
    ct_tensor *ct_##NAME##_(ct_tensor *self)                                                   \
    {                                                                                          \
        return ct__call1(&ct__op_##NAME##_, "ct_" #NAME "_", self, 0, 0, 0);                   \
    }
CT__INPLACE_OP(neg)
CT__INPLACE_OP(abs)
CT__INPLACE_OP(exp)
CT__INPLACE_OP(log)
CT__INPLACE_OP(sqrt)
CT__INPLACE_OP(sigmoid)
CT__INPLACE_OP(tanh)
CT__INPLACE_OP(relu)
#undef CT__INPLACE_OP

/* clamp and clamp_: PyTorch's checks of the bounds; integral bounds on an integer tensor keep
   its dtype (the call's state says so to meta), other bounds compute in the default float
   dtype. */
static ct_tensor *ct__clamp(const ct_op *op, const char *fn, const ct_tensor *a, double min,
                            double max)
{
    if (ct__null(fn, a)) {
        return NULL;
    }
    if (min > max) {
        ct__fail(CT_ERR_VALUE, fn, "min (%g) must be less than or equal to max (%g)", min, max);
        return NULL;
    }
    bool int_path = !ct_dtype_is_floating_point(a->dtype) && a->dtype != CT_BOOL &&
                    (isinf(min) || min == floor(min)) && (isinf(max) || max == floor(max));
    if (int_path) { /* bounds beyond the dtype's range clamp nothing, unless nothing is left */
        bool lo = ct__scalar_fits(min, a->dtype), hi = ct__scalar_fits(max, a->dtype);
        if ((!lo && min > 0) || (!hi && max < 0)) {
            ct__fail(CT_ERR_VALUE, fn, "Clamp %s value %g is outside the representable range "
                     "of %s", !lo && min > 0 ? "min" : "max", !lo && min > 0 ? min : max,
                     ct__dtype_title(a->dtype));
            return NULL;
        }
    }
    const ct_tensor *in[1] = {a};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_f(&c, min);
    ct__call_f(&c, max);
    c.state = int_path ? &c : NULL;
    ct_tensor *out = ct__dispatch(&c);
    if (c.state && c.state != &c) { /* clamp_'s saved old self (float only: no int path) */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

ct_tensor *ct_clamp(const ct_tensor *a, double min, double max)
{
    return ct__clamp(&ct__op_clamp, "ct_clamp", a, min, max);
}

ct_tensor *ct_clamp_(ct_tensor *self, double min, double max)
{
    return ct__clamp(&ct__op_clamp_, "ct_clamp_", self, min, max);
}

/* An integral exponent of an integer power: PyTorch's checks (an int64 scalar, as
   ct__wrap_scalar decides). */
static bool ct__check_int_pow(const char *fn, const ct_tensor *a, double exponent)
{
    if (ct_dtype_is_floating_point(a->dtype) || exponent != floor(exponent) ||
        fabs(exponent) >= 9.2e18) {
        return true;
    }
    if (exponent < 0) {
        ct__fail(CT_ERR_VALUE, fn, "Integers to negative integer powers are not allowed.");
        return false;
    }
    return ct__check_scalar(fn, exponent, a->dtype == CT_BOOL ? CT_INT64 : a->dtype);
}

ct_tensor *ct_pow_scalar(const ct_tensor *a, double exponent)
{
    if (ct__null("ct_pow", a) || !ct__check_int_pow("ct_pow", a, exponent)) {
        return NULL;
    }
    if (!ct_dtype_is_floating_point(a->dtype) && exponent == floor(exponent) &&
        fabs(exponent) < 9.2e18) { /* the integer power of two tensors */
        return ct__call2_scalar(&ct__op_pow, "ct_pow", a, exponent);
    }
    return ct__call1(&ct__op_pow_scalar, "ct_pow", a, 1, exponent, 0);
}

ct_tensor *ct_pow_(ct_tensor *self, double exponent)
{
    if (ct__null("ct_pow_", self) || !ct__check_int_pow("ct_pow_", self, exponent)) {
        return NULL;
    }
    return ct__call1(&ct__op_pow_, "ct_pow_", self, 1, exponent, 0);
}

/* A call over the tensors x, a and (n == 3) b, with the scalar attribute *value when value is
   not NULL. */
static ct_tensor *ct__call3(const ct_op *op, const char *fn, int n, const ct_tensor *x,
                            const ct_tensor *a, const ct_tensor *b, const double *value)
{
    const ct_tensor *in[3] = {x, a, b};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n);
    if (value) {
        ct__call_f(&c, *value);
    }
    ct_tensor *out = ct__dispatch(&c);
    if (c.state) { /* an in-place op's saved old self */
        ct__release((ct_tensor *)c.state);
    }
    return out;
}

ct_tensor *ct_addcmul(const ct_tensor *input, const ct_tensor *tensor1, const ct_tensor *tensor2,
                      double value)
{
    return ct__call3(&ct__op_addcmul, "ct_addcmul", 3, input, tensor1, tensor2, &value);
}

ct_tensor *ct_addcmul_(ct_tensor *self, const ct_tensor *tensor1, const ct_tensor *tensor2,
                       double value)
{
    return ct__call3(&ct__op_addcmul_, "ct_addcmul_", 3, self, tensor1, tensor2, &value);
}

ct_tensor *ct_addcdiv(const ct_tensor *input, const ct_tensor *tensor1, const ct_tensor *tensor2,
                      double value)
{
    return ct__call3(&ct__op_addcdiv, "ct_addcdiv", 3, input, tensor1, tensor2, &value);
}

ct_tensor *ct_addcdiv_(ct_tensor *self, const ct_tensor *tensor1, const ct_tensor *tensor2,
                       double value)
{
    return ct__call3(&ct__op_addcdiv_, "ct_addcdiv_", 3, self, tensor1, tensor2, &value);
}

ct_tensor *ct_lerp(const ct_tensor *input, const ct_tensor *end, const ct_tensor *weight)
{
    return ct__call3(&ct__op_lerp, "ct_lerp", 3, input, end, weight, NULL);
}

ct_tensor *ct_lerp_scalar(const ct_tensor *input, const ct_tensor *end, double weight)
{
    return ct__call3(&ct__op_lerp_scalar, "ct_lerp_scalar", 2, input, end, NULL, &weight);
}

ct_tensor *ct_lerp_(ct_tensor *self, const ct_tensor *end, const ct_tensor *weight)
{
    return ct__call3(&ct__op_lerp_, "ct_lerp_", 3, self, end, weight, NULL);
}

ct_tensor *ct_lerp_scalar_(ct_tensor *self, const ct_tensor *end, double weight)
{
    return ct__call3(&ct__op_lerp_scalar_, "ct_lerp_scalar_", 2, self, end, NULL, &weight);
}

void ct__relu_inplace_kernel(ct_tensor *t)
{
    double params[2] = {0, 0};
    const ct_tensor *in = t;
    ct__iter it;
    ct__iter_build(&it, t, &in, 1);
    ct__iter_run(&it, ct__loops_relu[t->dtype], params);
}

ct_tensor *ct_where(const ct_tensor *cond, const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[3] = {cond, a, b};
    ct_op_call c;
    ct__call_init(&c, &ct__op_where, "ct_where", in, 3);
    return ct__dispatch(&c);
}

ct_tensor *ct_fill_(ct_tensor *self, double value)
{
    return ct__call1(&ct__op_fill_, "ct_fill_", self, 1, value, 0);
}

ct_tensor *ct_zero_(ct_tensor *self)
{
    return ct__call1(&ct__op_fill_, "ct_zero_", self, 1, 0.0, 0);
}

ct_tensor *ct_copy_(ct_tensor *self, const ct_tensor *src)
{
    ct__copy_state s = {{self, src}, NULL};
    ct_op_call c;
    ct__call_init(&c, &ct__op_copy_, "ct_copy_", s.in, 2);
    c.state = &s;
    ct_tensor *out = ct__dispatch(&c);
    ct__release(s.moved);
    return out;
}

ct_tensor *ct_clone(const ct_tensor *a)
{
    return ct__call1(&ct__op_clone, "ct_clone", a, 0, 0, 0);
}

ct_tensor *ct_to_dtype(const ct_tensor *a, ct_dtype dtype)
{
    const char *fn = "ct_to_dtype";
    if (ct__null(fn, a) || !ct__check_dtype_arg(fn, dtype)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    if (a->dtype == dtype) {
        return ct_alias(a);
    }
    const ct_tensor *in[1] = {a};
    ct_op_call c;
    ct__call_init(&c, &ct__op_to_dtype, fn, in, 1);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

/* input on device (the caller checked both), as an unscoped reference. */
static ct_tensor *ct__transfer(const ct_tensor *input, ct_device device)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_to_device, "ct_to_device", in, 1);
    ct__call_i(&c, device.type);
    ct__call_i(&c, device.index);
    ct_scope_begin();
    ct_tensor *r = ct_retain(ct__dispatch(&c));
    ct_scope_end();
    return r;
}

static ct_tensor *ct__to_device(const char *fn, const ct_tensor *input, ct_device device)
{
    if (ct__null(fn, input)) {
        return NULL;
    }
    if ((int)device.type < 0 || (int)device.type >= (int)CT_DEVICE_TYPE_COUNT) {
        ct__fail(CT_ERR_VALUE, fn, "invalid device type %d", (int)device.type);
        return NULL;
    }
    device = ct_make_device(device.type, device.index);
    if (ct__same_device(input->storage->device, device)) {
        return ct_alias(input);
    }
    return ct__scoped(ct__transfer(input, device));
}

ct_tensor *ct_to_device(const ct_tensor *input, ct_device device)
{
    return ct__to_device("ct_to_device", input, device);
}

ct_tensor *ct_cpu(const ct_tensor *input)
{
    return ct__to_device("ct_cpu", input, ct_device_cpu());
}

CT__VECTORIZE_END

// >>part ops/view.c
/* ops/view.c - views over shared storage and shape ops (cat, stack), as op descriptors.
 *
 * A view op's meta checks its arguments and computes the view's geometry (sizes, strides,
 * offset) into the call's state; its composite makes a new tensor struct over the input's
 * storage (no data touched, so it runs on any device). reshape, flatten, narrow (through
 * slice), contiguous, stack, view_as, reshape_as, expand_as, unflatten, mT and broadcast_to
 * are built on other ops, which record their autograd; split, split_with_sizes and chunk
 * (aten::slice per piece) and broadcast_tensors (aten::expand per tensor) are public functions
 * over ops, as their outputs are lists; cat, tril/triu and the slice/select backward ops copy
 * data with CPU kernels. A view's backward maps its gradient back to the input's shape.
 */

#include <limits.h>

/* What a view op's meta computes for its kernel (c->state, in the public function's frame):
   the view's geometry, and the integers its autograd node keeps (ct__view_record). Slices
   and selects keep {dim, start, end, step, is_select}; cat and stack keep {dim}. */
typedef struct ct__view_geom {
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], offset;
    int ndim;
    int n_ints;
    int64_t ints[CT_MAX_DIMS];
} ct__view_geom;

/* Private dispatched ops defined after the descriptors (backward formulas and composites
   call them). */
static ct_tensor *ct__slice(const char *fn, const ct_tensor *t, int64_t dim, int64_t start,
                            int64_t end, int64_t step);
static ct_tensor *ct__slice_scatter(const ct_tensor *g, const ct__edge *in, const int64_t *ints);

/* ---- derivative formulas ------------------------------------------------------------- */
static void ct__view_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_reshape(g, n->next[0].sizes, n->next[0].ndim);
}

static void ct__permute_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    int64_t inv[CT_MAX_DIMS];
    for (int d = 0; d < g->ndim; d++) {
        inv[n->i[d]] = d;
    }
    gi[0] = ct_permute(g, inv, g->ndim);
}

static void ct__transpose_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_transpose(g, n->i[0], n->i[1]);
}

static void ct__t_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_t(g);
}

static void ct__unsqueeze_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_squeeze_dim(g, n->i[0]);
}

/* slice and select: zeros of the input's shape with g in the slice (select_backward,
   slice_backward). */
static void ct__slice_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__slice_scatter(g, &n->next[0], n->i);
}

/* select_backward and slice_backward are linear in g: their own backward takes the same
   slice of gg. */
static void ct__slice_scatter_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    gi[0] = n->i[4] ? ct_select(gg, n->i[0], n->i[1])
                    : ct__slice("ct_slice", gg, n->i[0], n->i[1], n->i[2], n->i[3]);
}

static void ct__cat_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    int d = (int)n->i[0];
    int64_t start = 0;
    for (int k = 0; k < n->n_next; k++) {
        int64_t length = n->next[k].sizes[d];
        if (ct__needs_grad(n, k)) {
            gi[k] = ct_narrow(g, d, start, length);
        }
        start += length;
    }
}

static void ct__tril_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_tril(g, n->i[0]);
}

static void ct__triu_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_triu(g, n->i[0]);
}

/* ---- geometry helpers ------------------------------------------------------------------ */
/* Resolves one -1 in sizes against numel; false + error when impossible. */
static bool ct__infer_size(const char *op, const int64_t *sizes, int ndim, int64_t numel,
                           int64_t *out)
{
    int infer = -1;
    int64_t prod = 1;
    char buf[160];
    if (ndim > 0 && ct__null(op, sizes)) {
        return false;
    }
    if (ndim < 0 || ndim > CT_MAX_DIMS) {
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

/* ---- meta: checks and geometry ----------------------------------------------------------- */
/* Starts a view op's meta: the call's dtype column (views run no kernel of a dtype) and its
   geometry, initialised to the input's own. */
static ct__view_geom *ct__geom(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = (ct__view_geom *)c->state;
    c->dtype = t->dtype;
    g->ndim = t->ndim;
    g->offset = t->offset;
    g->n_ints = 0;
    memcpy(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(g->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    return g;
}

/* alias, contiguous: the input's geometry, no checks. */
static bool ct__alias_meta(ct_op_call *c)
{
    ct__geom(c);
    return true;
}

/* The view's sizes from attribute 0 (one may be -1) and, when the input's strides allow a
   view, its strides (*viewable). */
static bool ct__shape_geom(ct_op_call *c, bool *viewable)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    g->ndim = (int)c->attrs[0].i;
    if (!ct__infer_size(c->fn, c->attrs[0].ints, g->ndim, ct_numel(t), g->sizes)) {
        return false;
    }
    *viewable = ct__view_strides(t, g->sizes, g->ndim, g->strides);
    return true;
}

static bool ct__view_meta(ct_op_call *c)
{
    bool viewable = false;
    if (!ct__shape_geom(c, &viewable)) {
        return false;
    }
    if (!viewable) {
        ct__fail(CT_ERR_SHAPE, c->fn, "view size is not compatible with input tensor's size and "
                 "stride (at least one dimension spans across two contiguous subspaces). Use "
                 ".reshape(...) instead.");
    }
    return viewable;
}

/* reshape: ints[0] says whether a view is possible (else the composite copies first). */
static bool ct__reshape_meta(ct_op_call *c)
{
    bool viewable = false;
    if (!ct__shape_geom(c, &viewable)) {
        return false;
    }
    ct__view_geom *g = (ct__view_geom *)c->state;
    g->ints[0] = viewable;
    return true;
}

/* flatten (attributes start_dim, end_dim): the flattened sizes, which the composite reshapes
   to; a 0-dim input becomes 1-D. */
static bool ct__flatten_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    if (t->ndim == 0) {
        g->ndim = 1;
        g->sizes[0] = 1;
        return true;
    }
    int s = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    int e = s < 0 ? -1 : ct__wrap_dim(c->fn, c->attrs[1].i, t->ndim);
    if (e < 0) {
        return false;
    }
    if (s > e) {
        ct__fail(CT_ERR_VALUE, c->fn, "flatten() has invalid args: start_dim cannot come after "
                 "end_dim");
        return false;
    }
    g->ndim = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d <= s || d > e) {
            g->sizes[g->ndim++] = t->sizes[d];
        } else {
            g->sizes[g->ndim - 1] *= t->sizes[d];
        }
    }
    return true;
}

/* permute (attribute 0: dims); the node keeps the permutation. */
static bool ct__permute_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *dims = c->attrs[0].ints;
    int ndim = (int)c->attrs[0].i;
    if (ndim > 0 && ct__null(c->fn, dims)) {
        return false;
    }
    if (ndim != t->ndim) {
        ct__fail(CT_ERR_SHAPE, c->fn, "number of dims don't match in permute");
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    bool seen[CT_MAX_DIMS] = {false};
    for (int d = 0; d < ndim; d++) {
        int k = ct__wrap_dim(c->fn, dims[d], ndim);
        if (k < 0) {
            return false;
        }
        if (seen[k]) {
            ct__fail(CT_ERR_VALUE, c->fn, "repeated dim in permute");
            return false;
        }
        seen[k] = true;
        g->ints[d] = k;
        g->sizes[d] = t->sizes[k];
        g->strides[d] = t->strides[k];
    }
    g->n_ints = ndim;
    return true;
}

/* Swaps dims a and b of g (a == b: nothing). */
static void ct__swap_dims(ct__view_geom *g, int a, int b)
{
    int64_t size = g->sizes[a], stride = g->strides[a];
    g->sizes[a] = g->sizes[b];
    g->strides[a] = g->strides[b];
    g->sizes[b] = size;
    g->strides[b] = stride;
}

/* transpose (attributes dim0, dim1; a 0-dim input takes dims -1 and 0); the node keeps the
   two dims. */
static bool ct__transpose_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    int a = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    int b = a < 0 ? -1 : ct__wrap_dim(c->fn, c->attrs[1].i, t->ndim);
    if (b < 0) {
        return false;
    }
    if (t->ndim > 0) {
        ct__swap_dims(g, a, b);
    }
    g->ints[0] = a;
    g->ints[1] = b;
    g->n_ints = 2;
    return true;
}

static bool ct__t_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim > 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "t() expects a tensor with <= 2 dimensions, but self is "
                 "%dD", t->ndim);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    if (t->ndim == 2) {
        ct__swap_dims(g, 0, 1);
    }
    return true;
}

/* unsqueeze (attribute 0: dim in [-ndim-1, ndim]); the node keeps the dim. */
static bool ct__unsqueeze_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, "tensors have at most %d dimensions", CT_MAX_DIMS);
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim + 1);
    if (d < 0) {
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    for (int k = 0, j = 0; k <= t->ndim; k++) {
        if (k == d) {
            g->sizes[k] = 1;
            g->strides[k] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        } else {
            g->sizes[k] = t->sizes[j];
            g->strides[k] = t->strides[j];
            j++;
        }
    }
    g->ndim = t->ndim + 1;
    g->ints[0] = d;
    g->n_ints = 1;
    return true;
}

/* Drops the size-1 dims of the input (only: that dim alone; -1: every one). */
static void ct__squeeze_geom(ct_op_call *c, int only)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    g->ndim = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1 && (only < 0 || only == d)) {
            continue;
        }
        g->sizes[g->ndim] = t->sizes[d];
        g->strides[g->ndim++] = t->strides[d];
    }
}

static bool ct__squeeze_meta(ct_op_call *c)
{
    ct__squeeze_geom(c, -1);
    return true;
}

/* squeeze.dim (attribute 0: dim; a 0-dim input takes -1 and 0 and stays as it is). */
static bool ct__squeeze_dim_meta(ct_op_call *c)
{
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, c->inputs[0]->ndim);
    if (d < 0) {
        return false;
    }
    ct__squeeze_geom(c, d);
    return true;
}

/* expand (attribute 0: size; -1 keeps a size, new leading dims allowed): stride 0 along the
   expanded dims. */
static bool ct__expand_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *sizes = c->attrs[0].ints;
    int ndim = (int)c->attrs[0].i;
    if (ndim > 0 && ct__null(c->fn, sizes)) {
        return false;
    }
    if (ndim < t->ndim || ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, "the number of sizes provided (%d) must be greater or equal "
                 "to the number of dimensions in the tensor (%d)", ndim, t->ndim);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    for (int d = ndim - 1; d >= 0; d--) {
        int td = d - (ndim - t->ndim);
        int64_t want = sizes[d];
        if (td < 0) {
            if (want < 0) {
                ct__fail(CT_ERR_SHAPE, c->fn, "The expanded size of the tensor (%lld) isn't "
                         "allowed in a leading, non-existing dimension %d", (long long)want, d);
                return false;
            }
            g->sizes[d] = want;
            g->strides[d] = 0;
            continue;
        }
        int64_t have = t->sizes[td];
        if (want == -1) {
            want = have;
        }
        if (have != want && have != 1) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, c->fn, "The expanded size of the tensor (%lld) must match the "
                     "existing size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                     "Tensor sizes: %s", (long long)want, (long long)have, d,
                     ct__shape_str(sizes, ndim, a, sizeof a),
                     ct__shape_str(t->sizes, t->ndim, b, sizeof b));
            return false;
        }
        g->sizes[d] = want;
        g->strides[d] = have == want ? t->strides[td] : 0;
    }
    g->ndim = ndim;
    return true;
}

/* narrow (attributes dim, start, length; start may count from the end): ints {dim, start,
   end} of the slice the composite takes. */
static bool ct__narrow_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, c->fn, "narrow() cannot be applied to a 0-dim tensor.");
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    int64_t size = t->sizes[d], start = c->attrs[1].i, length = c->attrs[2].i;
    if (start < 0) {
        start += size;
    }
    if (start < 0 || start > size || length < 0 || start + length > size) {
        ct__fail(CT_ERR_INDEX, c->fn, "start (%lld) + length (%lld) exceeds dimension size "
                 "(%lld).", (long long)start, (long long)length, (long long)size);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    g->ints[0] = d;
    g->ints[1] = start;
    g->ints[2] = start + length;
    return true;
}

/* Python's clamp of a slice bound into [0, size] (negative counts from the end). */
static int64_t ct__slice_bound(int64_t v, int64_t size)
{
    if (v < 0) {
        v += size;
    }
    return v < 0 ? 0 : v > size ? size : v;
}

/* slice (attributes dim, start, end, step >= 1): PyTorch's checks, start and end clamped as
   Python slicing, end at least start; ints {dim, start, end, step, 0}. */
static bool ct__slice_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, c->fn, "slice() cannot be applied to a 0-dim tensor.");
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    int64_t step = c->attrs[3].i;
    if (step < 1) {
        ct__fail(CT_ERR_VALUE, c->fn, "slice step must be positive");
        return false;
    }
    int64_t start = ct__slice_bound(c->attrs[1].i, t->sizes[d]);
    int64_t end = ct__slice_bound(c->attrs[2].i, t->sizes[d]);
    if (end < start) {
        end = start;
    }
    ct__view_geom *g = ct__geom(c);
    g->sizes[d] = (end - start + step - 1) / step;
    g->strides[d] *= step;
    g->offset += start * c->inputs[0]->strides[d];
    int64_t ints[5] = {d, start, end, step, 0};
    memcpy(g->ints, ints, sizeof ints);
    g->n_ints = 5;
    return true;
}

/* select (attributes dim, index; index may count from the end). */
static bool ct__select_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, c->fn, "select() cannot be applied to a 0-dim tensor.");
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    int64_t size = t->sizes[d], index = c->attrs[1].i;
    if (index < -size || index >= size) {
        char buf[160];
        ct__fail(CT_ERR_INDEX, c->fn, "select(): index %lld out of range for tensor of size %s "
                 "at dimension %d", (long long)index,
                 ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), d);
        return false;
    }
    if (index < 0) {
        index += size;
    }
    ct__view_geom *g = ct__geom(c);
    for (int k = d; k < t->ndim - 1; k++) {
        g->sizes[k] = t->sizes[k + 1];
        g->strides[k] = t->strides[k + 1];
    }
    g->ndim = t->ndim - 1;
    g->offset += index * t->strides[d];
    int64_t ints[5] = {d, index, index + 1, 1, 1};
    memcpy(g->ints, ints, sizeof ints);
    g->n_ints = 5;
    return true;
}

/* select_backward (attributes input_sizes, dim, index) and slice_backward (input_sizes, dim,
   start, end, step): zeros of input_sizes in grad's dtype; ints as select's and slice's. */
static bool ct__slice_scatter_meta(ct_op_call *c)
{
    const ct_tensor *g = c->inputs[0];
    ct__view_geom *geom = (ct__view_geom *)c->state;
    bool select = c->op->variant == 1;
    int64_t start = c->attrs[2].i;
    int64_t ints[5] = {c->attrs[1].i, start, select ? start + 1 : c->attrs[3].i,
                       select ? 1 : c->attrs[4].i, select};
    memcpy(geom->ints, ints, sizeof ints);
    geom->n_ints = 5;
    c->dtype = g->dtype;
    return ct__op_output(c, c->attrs[0].ints, (int)c->attrs[0].i, g->dtype) != NULL;
}

/* cat (inputs: the list; attribute 0: dim): PyTorch's checks, the promoted dtype, the
   concatenated shape; ints {dim}. */
static bool ct__cat_meta(ct_op_call *c)
{
    const ct_tensor *ref = c->inputs[0];
    for (int k = 0; k < c->n_inputs; k++) {
        if (c->inputs[k]->ndim == 0) {
            ct__fail(CT_ERR_SHAPE, c->fn, "zero-dimensional tensor (at position %d) cannot be "
                     "concatenated", k);
            return false;
        }
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, ref->ndim);
    if (d < 0) {
        return false;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim);
    sizes[d] = 0;
    ct_dtype dt = ref->dtype;
    for (int k = 0; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        if (t->ndim != ref->ndim) {
            ct__fail(CT_ERR_SHAPE, c->fn, "Tensors must have same number of dimensions: got %d "
                     "and %d", ref->ndim, t->ndim);
            return false;
        }
        for (int j = 0; j < ref->ndim; j++) {
            if (j != d && t->sizes[j] != ref->sizes[j]) {
                ct__fail(CT_ERR_SHAPE, c->fn, "Sizes of tensors must match except in dimension "
                         "%d. Expected size %lld but got size %lld for tensor number %d in the "
                         "list.", d, (long long)ref->sizes[j], (long long)t->sizes[j], k);
                return false;
            }
        }
        dt = ct_promote_types(dt, t->dtype);
        sizes[d] += t->sizes[d];
    }
    ct__view_geom *g = (ct__view_geom *)c->state;
    g->ints[0] = d;
    g->n_ints = 1;
    c->dtype = dt;
    return ct__op_output(c, sizes, ref->ndim, dt) != NULL;
}

/* stack (inputs: the list; attribute 0: dim in [-ndim-1, ndim]): equal shapes; ints {dim}. */
static bool ct__stack_meta(ct_op_call *c)
{
    const ct_tensor *ref = c->inputs[0];
    for (int k = 0; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        if (t->ndim != ref->ndim ||
            memcmp(t->sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim) != 0) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, c->fn, "stack expects each tensor to be equal size, but got "
                     "%s at entry 0 and %s at entry %d",
                     ct__shape_str(ref->sizes, ref->ndim, a, sizeof a),
                     ct__shape_str(t->sizes, t->ndim, b, sizeof b), k);
            return false;
        }
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, ref->ndim + 1);
    if (d < 0) {
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    g->ints[0] = d;
    return true;
}

/* unflatten (attributes dim, sizes; one size may be -1): the input's sizes with dim replaced
   by sizes, which the composite views the input as. */
static bool ct__unflatten_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *sizes = c->attrs[1].ints;
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, c->fn, "Dimension specified as %lld but tensor has no dimensions",
                 (long long)c->attrs[0].i);
        return false;
    }
    int n = (int)c->attrs[1].i, d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0 || (n > 0 && ct__null(c->fn, sizes))) {
        return false;
    }
    if (n <= 0 || t->ndim - 1 + n > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, n <= 0 ? "unflatten: sizes must be non-empty"
                 : "unflatten: more than %d dimensions", CT_MAX_DIMS);
        return false;
    }
    int64_t prod = 1, size = t->sizes[d];
    int infer = 0, negative = 0, huge = 0; /* huge: the running product passed INT64_MAX */
    for (int k = 0; k < n; k++) {
        int64_t s = sizes[k] < 0 ? 1 : sizes[k];
        infer += sizes[k] == -1;
        negative += sizes[k] < -1;
        huge += !huge && s != 0 && prod > INT64_MAX / s;
        prod = huge ? prod : prod * s;
    }
    bool fits = !huge && (infer ? prod != 0 && size % prod == 0 : prod == size);
    if (!fits && (huge || (infer <= 1 && !negative))) {
        char buf[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "unflatten: Provided sizes %s don't multiply up to the size "
                 "of dim %d (%lld) in the input tensor", ct__shape_str(sizes, n, buf, sizeof buf),
                 d, (long long)size);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    if (!ct__infer_size(c->fn, sizes, n, size, g->sizes + d)) {
        return false;
    }
    memcpy(g->sizes + d + n, t->sizes + d + 1, sizeof(int64_t) * (size_t)(t->ndim - d - 1));
    g->ndim = t->ndim - 1 + n;
    return true;
}

static bool ct__mt_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim < 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "tensor.mT is only supported on matrices or batches of "
                 "matrices. Got %d-D tensor.", t->ndim);
        return false;
    }
    ct__geom(c);
    return true;
}

/* tril and triu (variant 1; attribute 0: diagonal): input (*, m, n) with ndim >= 2, a new
   tensor of its shape and dtype; ints {diagonal}. */
static bool ct__tril_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim < 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: input tensor must have at least 2 dimensions",
                 c->op->variant ? "triu" : "tril");
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    g->ints[0] = c->attrs[0].i;
    g->n_ints = 1;
    return ct__op_output(c, t->sizes, t->ndim, t->dtype) != NULL;
}

/* ---- kernels --------------------------------------------------------------------------- */
/* Every view op's composite: a tensor struct over the input's storage with the geometry meta
   computed. It remembers what an in-place op on it would bypass (view_of) and the storage
   version its history was recorded at (view_version). */
static ct_status ct__view_kernel(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    ct_tensor *v =
        ct__tensor_over(t->storage, t->dtype, g->sizes, g->strides, g->ndim, g->offset);
    if (!v) {
        return CT_ERR_OOM;
    }
    v->view_of = t->view_of         ? t->view_of
                 : t->grad_fn       ? CT__VIEW_OF_GRAPH
                 : t->requires_grad ? CT__VIEW_OF_LEAF
                                    : CT__VIEW_OF_NONE;
    v->view_version = t->view_of ? t->view_version : t->storage->version;
    c->outputs[c->n_outputs++] = v;
    return CT_OK;
}

/* reshape: a view (aten::view) when possible, else a view of a contiguous copy (clone). */
static ct_status ct__reshape_composite(ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    const ct_tensor *src = g->ints[0] ? c->inputs[0] : ct_clone(c->inputs[0]);
    return ct__composite_end(c, ct_view(src, g->sizes, g->ndim));
}

static ct_status ct__flatten_composite(ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_reshape(c->inputs[0], g->sizes, g->ndim));
}

static ct_status ct__narrow_composite(ct_op_call *c)
{
    const int64_t *ints = ((const ct__view_geom *)c->state)->ints;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct__slice(c->fn, c->inputs[0], ints[0], ints[1], ints[2], 1));
}

/* contiguous: an alias when the input is contiguous, else a contiguous copy (clone). */
static ct_status ct__contiguous_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_is_contiguous(t) ? ct_alias(t) : ct_clone(t));
}

/* stack: each input unsqueezed at dim, concatenated along it. */
static ct_status ct__stack_composite(ct_op_call *c)
{
    int64_t d = ((const ct__view_geom *)c->state)->ints[0];
    const ct_tensor **views =
        (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)c->n_inputs);
    if (!views) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    if (ct_scope_begin() != CT_OK) {
        ct__free(views);
        return CT_ERR_STATE;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        views[k] = ct_unsqueeze(c->inputs[k], d);
    }
    ct_tensor *r = ct_cat(views, c->n_inputs, d);
    ct__free(views);
    return ct__composite_end(c, r);
}

/* cat on the CPU: each input copied (converting) into its slice of the output along dim. */
static ct_status ct__cat_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    int d = (int)((const ct__view_geom *)c->state)->ints[0];
    int64_t part[CT_MAX_DIMS], start = 0;
    memcpy(part, out->sizes, sizeof(int64_t) * (size_t)out->ndim);
    for (int k = 0; k < c->n_inputs; k++) {
        part[d] = c->inputs[k]->sizes[d];
        ct_tensor *slot = ct__tensor_over(out->storage, out->dtype, part, out->strides,
                                          out->ndim, start * out->strides[d]);
        if (!slot) {
            return CT_ERR_OOM;
        }
        ct__copy_kernel(slot, c->inputs[k]);
        ct__release(slot);
        start += part[d];
    }
    return CT_OK;
}

/* select_backward and slice_backward on the CPU: zeros, then grad copied into the slice
   (ints {dim, start, end, step, is_select}). */
static ct_status ct__slice_scatter_kernel(ct_op_call *c)
{
    ct_tensor *z = c->outputs[0];
    const ct_tensor *g = c->inputs[0];
    const int64_t *ints = ((const ct__view_geom *)c->state)->ints;
    int d = (int)ints[0];
    memset(ct__data(z), 0, ct_nbytes(z));
    int64_t strides[CT_MAX_DIMS];
    for (int k = 0, j = 0; k < z->ndim; k++) {
        if (k != d || !ints[4]) {
            strides[j++] = k == d ? z->strides[k] * ints[3] : z->strides[k];
        }
    }
    ct_tensor *slot =
        ct__tensor_over(z->storage, z->dtype, g->sizes, strides, g->ndim, ints[1] * z->strides[d]);
    if (!slot) {
        return CT_ERR_OOM;
    }
    ct__copy_kernel(slot, g);
    ct__release(slot);
    return CT_OK;
}

/* view_as, reshape_as, expand_as (variants 0, 1, 2): the op with other's sizes. */
static ct_status ct__as_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0], *o = c->inputs[1];
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    ct_tensor *r = c->op->variant == 0   ? ct_view(t, o->sizes, o->ndim)
                   : c->op->variant == 1 ? ct_reshape(t, o->sizes, o->ndim)
                                         : ct_expand(t, o->sizes, o->ndim);
    return ct__composite_end(c, r);
}

/* unflatten: a view with the sizes meta computed. */
static ct_status ct__unflatten_composite(ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_view(c->inputs[0], g->sizes, g->ndim));
}

static ct_status ct__mt_composite(ct_op_call *c)
{
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_transpose(c->inputs[0], -2, -1));
}

static ct_status ct__broadcast_to_composite(ct_op_call *c)
{
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_expand(c->inputs[0], c->attrs[0].ints, (int)c->attrs[0].i));
}

/* tril and triu on the CPU: the input copied into the contiguous output, then each row's
   dropped columns zeroed (tril: col > row + diagonal; triu: col < row + diagonal).
   Shapes: out (B, m, n), B the product of the leading dims. */
static ct_status ct__tril_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    bool upper = c->op->variant == 1;
    int64_t m = out->sizes[out->ndim - 2], n = out->sizes[out->ndim - 1];
    int64_t k = c->attrs[0].i < -m ? -m : c->attrs[0].i > n ? n : c->attrs[0].i;
    int64_t rows = m * n == 0 ? 0 : ct_numel(out) / n;
    size_t es = ct_dtype_size(out->dtype);
    char *p = ct__data(out);
    ct__copy_kernel(out, c->inputs[0]);
    for (int64_t r = 0; r < rows; r++) {
        int64_t i = r % m, edge = upper ? i + k : i + k + 1;
        int64_t lo = upper ? 0 : edge < 0 ? 0 : edge, hi = !upper ? n : edge > n ? n : edge;
        if (hi > lo) {
            memset(p + (size_t)(r * n + lo) * es, 0, (size_t)(hi - lo) * es);
        }
    }
    return CT_OK;
}

/* Keeps the integers meta computed (dims, the slice) in the node. */
static void ct__view_record(ct_node *n, const ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    memcpy(n->i, g->ints, sizeof(int64_t) * (size_t)g->n_ints);
}

/* ---- descriptors ------------------------------------------------------------------------ */
/* An op of this file: name, schema, public functions, kind, meta, CPU kernels, composite,
   node, backward, record. */
#define CT__SHAPE_OP(SYM, NAME, SCHEMA, API, KIND, VAR, META, KERNELS, COMPOSITE, NODE, BW,      \
                     RECORD)                                                                   \
    static const ct_op ct__op_##SYM = {"aten::" NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, VAR, \
                                       0u, NULL, META, KERNELS, COMPOSITE, NODE, BW, 0u,       \
                                       RECORD, NULL};
/* A view: the view struct made by ct__view_kernel, or built on other ops (node NULL). */
#define CT__VIEW(SYM, NAME, SCHEMA, API, META, COMPOSITE, NODE, BW, RECORD)                     \
    CT__SHAPE_OP(SYM, NAME, SCHEMA, API, CT_OP_VIEW, 0, META, CT__K_NONE, COMPOSITE, NODE, BW,  \
                 RECORD)

CT__VIEW(view, "view", "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", "ct_view",
         ct__view_meta, ct__view_kernel, "ViewBackward0", ct__view_backward, NULL)
CT__VIEW(reshape, "reshape", "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
         "ct_reshape", ct__reshape_meta, ct__reshape_composite, NULL, NULL, NULL)
CT__VIEW(flatten, "flatten", "flatten.using_ints(Tensor(a) self, int start_dim=0, int "
         "end_dim=-1) -> Tensor(a)", "ct_flatten", ct__flatten_meta, ct__flatten_composite, NULL,
         NULL, NULL)
CT__VIEW(permute, "permute", "permute(Tensor(a) self, int[] dims) -> Tensor(a)", "ct_permute",
         ct__permute_meta, ct__view_kernel, "PermuteBackward0", ct__permute_backward,
         ct__view_record)
CT__VIEW(transpose, "transpose", "transpose.int(Tensor(a) self, int dim0, int dim1) -> "
         "Tensor(a)", "ct_transpose", ct__transpose_meta, ct__view_kernel, "TransposeBackward0",
         ct__transpose_backward, ct__view_record)
CT__VIEW(t, "t", "t(Tensor(a) self) -> Tensor(a)", "ct_t", ct__t_meta, ct__view_kernel,
         "TBackward0", ct__t_backward, NULL)
CT__VIEW(unsqueeze, "unsqueeze", "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
         "ct_unsqueeze", ct__unsqueeze_meta, ct__view_kernel, "UnsqueezeBackward0",
         ct__unsqueeze_backward, ct__view_record)
CT__VIEW(squeeze, "squeeze", "squeeze(Tensor(a) self) -> Tensor(a)", "ct_squeeze",
         ct__squeeze_meta, ct__view_kernel, "SqueezeBackward0", ct__view_backward, NULL)
CT__VIEW(squeeze_dim, "squeeze", "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
         "ct_squeeze_dim", ct__squeeze_dim_meta, ct__view_kernel, "SqueezeBackward1",
         ct__view_backward, NULL)
CT__VIEW(expand, "expand", "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> "
         "Tensor(a)", "ct_expand ct_broadcast_tensors", ct__expand_meta, ct__view_kernel,
         "ExpandBackward0", ct__identity_backward, NULL)
CT__VIEW(narrow, "narrow", "narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> "
         "Tensor(a)", "ct_narrow", ct__narrow_meta, ct__narrow_composite, NULL, NULL, NULL)
CT__VIEW(slice, "slice", "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? "
         "end=None, SymInt step=1) -> Tensor(a)", "ct_slice ct_narrow ct_split ct_split_with_sizes "
         "ct_chunk", ct__slice_meta, ct__view_kernel, "SliceBackward0", ct__slice_backward,
         ct__view_record)
CT__VIEW(select, "select", "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
         "ct_select", ct__select_meta, ct__view_kernel, "SelectBackward0", ct__slice_backward,
         ct__view_record)
CT__VIEW(contiguous, "contiguous", "contiguous(Tensor(a) self, *, MemoryFormat "
         "memory_format=contiguous_format) -> Tensor(a)", "ct_contiguous", ct__alias_meta,
         ct__contiguous_composite, NULL, NULL, NULL)
CT__VIEW(alias, "alias", "alias(Tensor(a) self) -> Tensor(a)", "ct_alias", ct__alias_meta,
         ct__view_kernel, "AliasBackward0", ct__identity_backward, NULL)
CT__SHAPE_OP(select_backward, "select_backward", "select_backward(Tensor grad_output, SymInt[] "
             "input_sizes, int dim, SymInt index) -> Tensor", "ct_backward (select)",
             CT_OP_OTHER, 1, ct__slice_scatter_meta, CT__K_ALL(ct__slice_scatter_kernel), NULL,
             "SelectBackwardBackward0", ct__slice_scatter_backward, ct__view_record)
CT__SHAPE_OP(slice_backward, "slice_backward", "slice_backward(Tensor grad_output, SymInt[] "
             "input_sizes, int dim, SymInt start, SymInt end, SymInt step) -> Tensor",
             "ct_backward (narrow)", CT_OP_OTHER, 0, ct__slice_scatter_meta,
             CT__K_ALL(ct__slice_scatter_kernel), NULL, "SliceBackwardBackward0",
             ct__slice_scatter_backward, ct__view_record)
CT__SHAPE_OP(cat, "cat", "cat(Tensor[] tensors, int dim=0) -> Tensor", "ct_cat", CT_OP_OTHER, 0,
             ct__cat_meta, CT__K_ALL(ct__cat_kernel), NULL, "CatBackward0", ct__cat_backward,
             ct__view_record)
CT__SHAPE_OP(stack, "stack", "stack(Tensor[] tensors, int dim=0) -> Tensor", "ct_stack",
             CT_OP_OTHER, 0, ct__stack_meta, CT__K_NONE, ct__stack_composite, NULL, NULL, NULL)
/* view_as, reshape_as, expand_as: other's sizes only (it may be on any device). */
#define CT__AS_OP(SYM, VAR)                                                                     \
    static const ct_op ct__op_##SYM = {"aten::" #SYM, #SYM "(Tensor(a) self, Tensor other) -> " \
                                       "Tensor(a)", "ct_" #SYM, CT_OP_VIEW, CT_AUTOCAST_NONE,   \
                                       VAR, CT_OP_ANY_DEVICE(1), NULL, ct__alias_meta,          \
                                       CT__K_NONE, ct__as_composite, NULL, NULL, 0u, NULL, NULL};
CT__AS_OP(view_as, 0)
CT__AS_OP(reshape_as, 1)
CT__AS_OP(expand_as, 2)
#undef CT__AS_OP
CT__VIEW(unflatten, "unflatten", "unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> "
         "Tensor(a)", "ct_unflatten", ct__unflatten_meta, ct__unflatten_composite, NULL, NULL,
         NULL)
CT__VIEW(mt, "mT", "mT(Tensor(a) self) -> Tensor(a)", "ct_mt", ct__mt_meta, ct__mt_composite,
         NULL, NULL, NULL)
CT__VIEW(broadcast_to, "broadcast_to", "broadcast_to(Tensor(a) self, SymInt[] size) -> "
         "Tensor(a)", "ct_broadcast_to", ct__alias_meta, ct__broadcast_to_composite, NULL, NULL,
         NULL)
CT__SHAPE_OP(tril, "tril", "tril(Tensor self, SymInt diagonal=0) -> Tensor", "ct_tril",
             CT_OP_OTHER, 0, ct__tril_meta, CT__K_ALL(ct__tril_kernel), NULL, "TrilBackward0",
             ct__tril_backward, ct__view_record)
CT__SHAPE_OP(triu, "triu", "triu(Tensor self, SymInt diagonal=0) -> Tensor", "ct_triu",
             CT_OP_OTHER, 1, ct__tril_meta, CT__K_ALL(ct__tril_kernel), NULL, "TriuBackward0",
             ct__triu_backward, ct__view_record)

/* ---- public functions -------------------------------------------------------------------- */
/* Dispatches c with its meta's geometry in this frame. */
static ct_tensor *ct__view_dispatch(ct_op_call *c)
{
    ct__view_geom g;
    c->state = &g;
    return ct__dispatch(c);
}

/* A call of op over t with n int attributes v. */
static ct_tensor *ct__view_op(const ct_op *op, const char *fn, const ct_tensor *t, int n,
                              const int64_t *v)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    for (int k = 0; k < n; k++) {
        ct__call_i(&c, v[k]);
    }
    return ct__view_dispatch(&c);
}

/* A call of op over t with one int[] attribute. */
static ct_tensor *ct__view_op_ints(const ct_op *op, const char *fn, const ct_tensor *t,
                                   const int64_t *ints, int n)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_ints(&c, ints, n);
    return ct__view_dispatch(&c);
}

/* A call of op over the list ts[n] with attribute dim; a missing list, or an empty one (the
   message empty), fails first. */
static ct_tensor *ct__list_op(const ct_op *op, const char *fn, const ct_tensor *const *ts, int n,
                              int64_t dim, const char *empty)
{
    if (ct__null(fn, ts)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "%s", empty);
        return NULL;
    }
    ct_op_call c;
    ct__call_init(&c, op, fn, ts, n);
    ct__call_i(&c, dim);
    return ct__view_dispatch(&c);
}

/* Elements start, start + step, ... before end of dim of t (Python's clamps): aten::slice,
   errors reported as fn's. */
static ct_tensor *ct__slice(const char *fn, const ct_tensor *t, int64_t dim, int64_t start,
                            int64_t end, int64_t step)
{
    int64_t v[4] = {dim, start, end, step};
    return ct__view_op(&ct__op_slice, fn, t, 4, v);
}

/* select_backward (ints[4]) or slice_backward of g into zeros of the input in's shape. */
static ct_tensor *ct__slice_scatter(const ct_tensor *g, const ct__edge *in, const int64_t *ints)
{
    const ct_tensor *inputs[1] = {g};
    ct_op_call c;
    bool select = ints[4] != 0;
    ct__call_init(&c, select ? &ct__op_select_backward : &ct__op_slice_backward,
                  select ? "ct_select_backward" : "ct_slice_backward", inputs, 1);
    ct__call_ints(&c, in->sizes, in->ndim);
    ct__call_i(&c, ints[0]);
    ct__call_i(&c, ints[1]);
    if (!select) {
        ct__call_i(&c, ints[2]);
        ct__call_i(&c, ints[3]);
    }
    return ct__view_dispatch(&c);
}

ct_tensor *ct_alias(const ct_tensor *t)
{
    return ct__view_op(&ct__op_alias, "ct_alias", t, 0, NULL);
}

ct_tensor *ct_view(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_view, "ct_view", t, sizes, ndim);
}

ct_tensor *ct_reshape(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_reshape, "ct_reshape", t, sizes, ndim);
}

ct_tensor *ct_flatten(const ct_tensor *t, int64_t start_dim, int64_t end_dim)
{
    int64_t v[2] = {start_dim, end_dim};
    return ct__view_op(&ct__op_flatten, "ct_flatten", t, 2, v);
}

ct_tensor *ct_permute(const ct_tensor *t, const int64_t *dims, int ndim)
{
    return ct__view_op_ints(&ct__op_permute, "ct_permute", t, dims, ndim);
}

ct_tensor *ct_transpose(const ct_tensor *t, int64_t dim0, int64_t dim1)
{
    int64_t v[2] = {dim0, dim1};
    return ct__view_op(&ct__op_transpose, "ct_transpose", t, 2, v);
}

ct_tensor *ct_t(const ct_tensor *t)
{
    return ct__view_op(&ct__op_t, "ct_t", t, 0, NULL);
}

ct_tensor *ct_unsqueeze(const ct_tensor *t, int64_t dim)
{
    return ct__view_op(&ct__op_unsqueeze, "ct_unsqueeze", t, 1, &dim);
}

ct_tensor *ct_squeeze(const ct_tensor *t)
{
    return ct__view_op(&ct__op_squeeze, "ct_squeeze", t, 0, NULL);
}

ct_tensor *ct_squeeze_dim(const ct_tensor *t, int64_t dim)
{
    return ct__view_op(&ct__op_squeeze_dim, "ct_squeeze_dim", t, 1, &dim);
}

ct_tensor *ct_expand(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_expand, "ct_expand", t, sizes, ndim);
}

ct_tensor *ct_narrow(const ct_tensor *t, int64_t dim, int64_t start, int64_t length)
{
    int64_t v[3] = {dim, start, length};
    return ct__view_op(&ct__op_narrow, "ct_narrow", t, 3, v);
}

ct_tensor *ct_select(const ct_tensor *t, int64_t dim, int64_t index)
{
    int64_t v[2] = {dim, index};
    return ct__view_op(&ct__op_select, "ct_select", t, 2, v);
}

ct_tensor *ct_contiguous(const ct_tensor *t)
{
    return ct__view_op(&ct__op_contiguous, "ct_contiguous", t, 0, NULL);
}

ct_tensor *ct_cat(const ct_tensor *const *ts, int n, int64_t dim)
{
    return ct__list_op(&ct__op_cat, "ct_cat", ts, n, dim, "expected a non-empty list of Tensors");
}

ct_tensor *ct_stack(const ct_tensor *const *ts, int n, int64_t dim)
{
    return ct__list_op(&ct__op_stack, "ct_stack", ts, n, dim,
                       "stack expects a non-empty TensorList");
}

/* A call of op over t and other (view_as, reshape_as, expand_as). */
static ct_tensor *ct__as_op(const ct_op *op, const char *fn, const ct_tensor *t,
                            const ct_tensor *other)
{
    const ct_tensor *in[2] = {t, other};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_view_as(const ct_tensor *t, const ct_tensor *other)
{
    return ct__as_op(&ct__op_view_as, "ct_view_as", t, other);
}

ct_tensor *ct_reshape_as(const ct_tensor *t, const ct_tensor *other)
{
    return ct__as_op(&ct__op_reshape_as, "ct_reshape_as", t, other);
}

ct_tensor *ct_expand_as(const ct_tensor *t, const ct_tensor *other)
{
    return ct__as_op(&ct__op_expand_as, "ct_expand_as", t, other);
}

ct_tensor *ct_unflatten(const ct_tensor *t, int64_t dim, const int64_t *sizes, int n)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, &ct__op_unflatten, "ct_unflatten", in, 1);
    ct__call_i(&c, dim);
    ct__call_ints(&c, sizes, n);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_mt(const ct_tensor *t)
{
    return ct__view_op(&ct__op_mt, "ct_mt", t, 0, NULL);
}

ct_tensor *ct_broadcast_to(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_broadcast_to, "ct_broadcast_to", t, sizes, ndim);
}

ct_tensor *ct_slice(const ct_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step)
{
    return ct__slice("ct_slice", t, dim, start, end, step);
}

ct_tensor *ct_tril(const ct_tensor *t, int64_t diagonal)
{
    return ct__view_op(&ct__op_tril, "ct_tril", t, 1, &diagonal);
}

ct_tensor *ct_triu(const ct_tensor *t, int64_t diagonal)
{
    return ct__view_op(&ct__op_triu, "ct_triu", t, 1, &diagonal);
}

/* Writes "(4, 3)" (Python's tuple: "(4,)", "()") into buf. */
static const char *ct__tuple_str(const int64_t *sizes, int ndim, char *buf, size_t n)
{
    size_t len = strlen(ct__shape_str(sizes, ndim, buf, n - 1));
    buf[0] = '(';
    buf[len - 1] = ndim == 1 ? ',' : ')';
    strcpy(buf + len, ndim == 1 ? ")" : "");
    return buf;
}

ct_status ct_broadcast_shapes(const int64_t *const *shapes, const int *ndims, int n,
                              int64_t *out, int *out_ndim)
{
    const char *fn = "ct_broadcast_shapes";
    if ((n > 0 && (ct__null(fn, shapes) || ct__null(fn, ndims))) || ct__null(fn, out) ||
        ct__null(fn, out_ndim)) {
        return CT_ERR_NULL_ARG;
    }
    int nd = 0;
    for (int k = 0; k < n; k++) {
        if (ndims[k] < 0 || ndims[k] > CT_MAX_DIMS) {
            return ct__fail(CT_ERR_SHAPE, fn, "invalid number of dimensions %d", ndims[k]);
        }
        if (ndims[k] > 0 && ct__null(fn, shapes[k])) {
            return CT_ERR_NULL_ARG;
        }
        nd = ndims[k] > nd ? ndims[k] : nd;
    }
    int64_t common[CT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        common[d] = 1;
    }
    for (int k = 0; k < n; k++) { /* PyTorch's _broadcast_shapes, trailing dims first */
        for (int i = 1; i <= ndims[k]; i++) {
            int64_t want = shapes[k][ndims[k] - i], *have = &common[nd - i];
            if (*have == 1 && want < 0) {
                return ct__fail(CT_ERR_VALUE, fn, "Attempting to broadcast a dimension with "
                                "negative length!");
            }
            if (*have == 1) {
                *have = want;
            } else if (want != 1 && want != *have) {
                char a[200], b[200];
                return ct__fail(CT_ERR_SHAPE, fn, "Attempting to broadcast a dimension of length "
                                "%lld at -%d! Mismatching argument at index %d had %s; but "
                                "expected shape should be broadcastable to %s", (long long)want,
                                i, k, ct__tuple_str(shapes[k], ndims[k], a, sizeof a),
                                ct__shape_str(common, nd, b, sizeof b));
            }
        }
    }
    memcpy(out, common, sizeof(int64_t) * (size_t)nd);
    *out_ndim = nd;
    return CT_OK;
}

ct_status ct_broadcast_tensors(const ct_tensor *const *ts, int n, ct_tensor **out)
{
    const char *fn = "ct_broadcast_tensors";
    if ((n > 0 && ct__null(fn, ts)) || ct__null(fn, out)) {
        return CT_ERR_NULL_ARG;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k < n; k++) {
        if (ct__null(fn, ts[k])) {
            return CT_ERR_NULL_ARG;
        }
        if (!ct__broadcast_shapes(fn, shape, nd, ts[k]->sizes, ts[k]->ndim, shape, &nd)) {
            return ct_error_code();
        }
    }
    for (int k = 0; k < n; k++) {
        bool same = ts[k]->ndim == nd &&
                    !memcmp(ts[k]->sizes, shape, sizeof(int64_t) * (size_t)nd);
        out[k] = same ? ct__scoped(ct_retain((ct_tensor *)ts[k])) : ct_expand(ts[k], shape, nd);
        if (!out[k]) {
            return ct_error_code();
        }
    }
    return CT_OK;
}

/* The count pieces of t along dim d (validated): sizes[k], or size (the last one clipped to
   the dim) when sizes is NULL; written to out unless it is NULL. Returns count or -1. */
static int ct__pieces(const char *fn, const ct_tensor *t, int d, int64_t count, int64_t size,
                      const int64_t *sizes, ct_tensor **out, int capacity)
{
    if (count > INT_MAX) {
        ct__fail(CT_ERR_VALUE, fn, "%lld pieces exceed INT_MAX", (long long)count);
        return -1;
    }
    if (out && capacity < count) {
        ct__fail(CT_ERR_VALUE, fn, "the output array holds %d tensors but the split makes %lld",
                 capacity, (long long)count);
        return -1;
    }
    for (int64_t k = 0, start = 0; out && k < count; k++) {
        int64_t len = sizes ? sizes[k] : size < t->sizes[d] - start ? size : t->sizes[d] - start;
        out[k] = ct__slice(fn, t, d, start, start + len, 1);
        if (!out[k]) {
            return -1;
        }
        start += len;
    }
    return (int)count;
}

/* The wrapped dim of a split of t (at least 1-D: what names the op in the message), or -1. */
static int ct__split_dim(const char *fn, const char *what, const ct_tensor *t, int64_t dim)
{
    if (ct__null(fn, t)) {
        return -1;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, fn, "%s expects at least a 1-dimensional tensor", what);
        return -1;
    }
    return ct__wrap_dim(fn, dim, t->ndim);
}

int ct_split(const ct_tensor *t, int64_t split_size, int64_t dim, ct_tensor **out, int capacity)
{
    const char *fn = "ct_split";
    int d = ct__split_dim(fn, "split", t, dim);
    if (d < 0) {
        return -1;
    }
    int64_t size = t->sizes[d];
    if (split_size < 0) {
        ct__fail(CT_ERR_VALUE, fn, "split expects split_size be non-negative, but got "
                 "split_size=%lld", (long long)split_size);
        return -1;
    }
    if (split_size == 0 && size != 0) {
        ct__fail(CT_ERR_VALUE, fn, "split_size can only be 0 if dimension size is 0, but got "
                 "dimension size of %lld", (long long)size);
        return -1;
    }
    int64_t count = split_size == 0 || size == 0 ? 1 : (size - 1) / split_size + 1;
    return ct__pieces(fn, t, d, count, split_size, NULL, out, capacity);
}

int ct_split_with_sizes(const ct_tensor *t, const int64_t *split_sizes, int n, int64_t dim,
                        ct_tensor **out, int capacity)
{
    const char *fn = "ct_split_with_sizes";
    int d = ct__split_dim(fn, "split", t, dim);
    if (d < 0 || (n > 0 && ct__null(fn, split_sizes))) {
        return -1;
    }
    int64_t sum = 0;
    bool negative = false;
    for (int k = 0; k < n; k++) {
        negative = negative || split_sizes[k] < 0;
        sum += split_sizes[k] < 0 ? 0 : split_sizes[k];
    }
    if (negative || sum != t->sizes[d]) {
        char buf[200];
        ct__shape_str(split_sizes, n < 0 ? 0 : n, buf, sizeof buf);
        if (negative) {
            ct__fail(CT_ERR_VALUE, fn, "split_with_sizes expects split_sizes have only "
                     "non-negative entries, but got split_sizes=%s", buf);
        } else {
            ct__fail(CT_ERR_SHAPE, fn, "split_with_sizes expects split_sizes to sum exactly to "
                     "%lld (input tensor's size at dimension %d), but got split_sizes=%s",
                     (long long)t->sizes[d], d, buf);
        }
        return -1;
    }
    return ct__pieces(fn, t, d, n, 0, split_sizes, out, capacity);
}

int ct_chunk(const ct_tensor *t, int64_t chunks, int64_t dim, ct_tensor **out, int capacity)
{
    const char *fn = "ct_chunk";
    int d = ct__split_dim(fn, "chunk", t, dim);
    if (d < 0) {
        return -1;
    }
    if (chunks <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "chunk expects `chunks` to be greater than 0, got: %lld",
                 (long long)chunks);
        return -1;
    }
    int64_t size = t->sizes[d], split_size = size / chunks + (size % chunks != 0);
    int64_t count = size == 0 ? chunks : (size - 1) / split_size + 1;
    return ct__pieces(fn, t, d, count, split_size, NULL, out, capacity);
}

#undef CT__SHAPE_OP
#undef CT__VIEW

// >>part ops/index.c
/* ops/index.c - gather, index_select, scatter, scatter_add, index_add and masked_fill, as
 * op descriptors.
 *
 * Legend: the five index ops are one family walking a loop shape L (index's shape for
 * gather/scatter, the output's for index_select, source's for index_add). At each position
 * p of L the index tensor gives k; tensor A (read by gather/index_select, written by the
 * others) is addressed at p with p[dim] replaced by k, tensor B (the output, or src/source)
 * at p. Every index is checked before anything is written, so an in-place op that fails
 * leaves self unchanged. The walk goes a row of L's last dim at a time (typed loops by element
 * size, or by dtype for the adds) in row-major order of L, so duplicates accumulate (and the
 * last write wins) in index order. Threads split rows where no two rows write the same element
 * (gather and index_select; the writing ops when dim is L's last dim), else columns of L's
 * last dim (each walked through every row in order), so results are the same for any thread
 * count.
 */

typedef enum ct__ix_mode {
    CT__IX_GATHER,
    CT__IX_SELECT,
    CT__IX_SCATTER,
    CT__IX_SCATTER_ADD,
    CT__IX_INDEX_ADD
} ct__ix_mode;
#define CT__IX_INPLACE 8 /* variant bit: writes self */

/* ---- derivative formulas ------------------------------------------------------------------- */
static const ct_tensor *ct__ix_zeros_like_input(const ct_node *n, const ct_tensor *g)
{
    return ct_zeros(n->next[0].sizes, n->next[0].ndim, g->dtype);
}

/* gather: zeros of input's shape, scatter_add-ed with grad at index. */
static void ct__gather_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_scatter_add(ct__ix_zeros_like_input(n, g), (int64_t)n->f[0], ct__saved(n, 1), g);
}

/* index_select: zeros of input's shape, index_add-ed with grad. */
static void ct__index_select_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_index_add(ct__ix_zeros_like_input(n, g), (int64_t)n->f[0], ct__saved(n, 1), g, 1.0);
}

/* scatter: grad with the written positions zeroed; src: grad gathered at index. */
static void ct__scatter_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *index = ct__saved(n, 1);
    int64_t dim = (int64_t)n->f[0];
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_scatter(g, dim, index, ct_zeros(index->sizes, index->ndim, g->dtype));
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_gather(g, dim, index);
    }
}

/* scatter_add: grad passes to input; src: grad gathered at index. */
static void ct__scatter_add_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = (ct_tensor *)(uintptr_t)g;
    }
    if (ct__needs_grad(n, 2)) {
        gi[2] = ct_gather(g, (int64_t)n->f[0], ct__saved(n, 1));
    }
}

/* index_add: grad passes to input; source: alpha * grad index_select-ed. */
static void ct__index_add_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = (ct_tensor *)(uintptr_t)g;
    }
    if (ct__needs_grad(n, 2)) {
        ct_tensor *s = ct_index_select(g, (int64_t)n->f[0], ct__saved(n, 1));
        gi[2] = n->f[1] == 1.0 ? s : ct_mul_scalar(s, n->f[1]);
    }
}

/* masked_fill: grad with the masked positions zeroed. */
static void ct__masked_fill_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_masked_fill(g, ct__saved(n, 1), 0.0);
}

/* ---- meta -------------------------------------------------------------------------------- */
/* PyTorch's ensure_nonempty_dim / ensure_nonempty_size: a 0-dim tensor counts as [1]. */
static int ct__ix_ndim(const ct_tensor *t)
{
    return t->ndim > 0 ? t->ndim : 1;
}
static int64_t ct__ix_size(const ct_tensor *t, int d)
{
    return t->ndim > 0 ? t->sizes[d] : 1;
}

static bool ct__ix_index_dtype_ok(const ct_tensor *index)
{
    return index->dtype == CT_INT32 || index->dtype == CT_INT64;
}

/* gather's checks (PyTorch's gather_shape_check). */
static bool ct__gather_check(const ct_op_call *c, const ct_tensor *self, const ct_tensor *index,
                             int dim)
{
    char a[96], b[96];
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "gather(): Expected dtype int32/int64 for index");
    }
    if (ct__ix_ndim(index) != ct__ix_ndim(self)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "Index tensor must have the same number of dimensions as input tensor");
    }
    for (int d = 0; d < ct__ix_ndim(self); d++) {
        if (d != dim && ct__ix_size(index, d) > ct__ix_size(self, d)) {
            return !ct__fail(CT_ERR_SHAPE, c->fn,
                             "Size does not match at dimension %d expected index %s to be no "
                             "larger than self %s apart from dimension %d",
                             d, ct__shape_str(index->sizes, index->ndim, a, sizeof a),
                             ct__shape_str(self->sizes, self->ndim, b, sizeof b), dim);
        }
    }
    return true;
}

/* scatter's and scatter_add's checks (PyTorch's scatter_gather_dtype_check and
   scatter_shape_check; an empty index skips the shape checks, as there). */
static bool ct__scatter_check(const ct_op_call *c, const ct_tensor *self, const ct_tensor *index,
                              const ct_tensor *src, int dim)
{
    char a[96], b[96], s[96];
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "scatter(): Expected dtype int32/int64 for index");
    }
    if (self->dtype != src->dtype) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "scatter(): Expected self.dtype to be equal to src.dtype");
    }
    if (ct_numel(index) == 0) {
        return true;
    }
    if (ct__ix_ndim(index) != ct__ix_ndim(self) || ct__ix_ndim(index) != ct__ix_ndim(src)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "Index tensor must have the same number of dimensions as %s tensor",
                         ct__ix_ndim(index) != ct__ix_ndim(self) ? "self" : "src");
    }
    for (int d = 0; d < ct__ix_ndim(self); d++) {
        int64_t k = ct__ix_size(index, d);
        if (k > ct__ix_size(src, d) || (d != dim && k > ct__ix_size(self, d))) {
            return !ct__fail(CT_ERR_SHAPE, c->fn,
                             "Expected index %s to be no larger than self %s apart from "
                             "dimension %d and to be no larger size than src %s",
                             ct__shape_str(index->sizes, index->ndim, a, sizeof a),
                             ct__shape_str(self->sizes, self->ndim, b, sizeof b), dim,
                             ct__shape_str(src->sizes, src->ndim, s, sizeof s));
        }
    }
    return true;
}

/* index_select's checks. */
static bool ct__select_check(const ct_op_call *c, const ct_tensor *index)
{
    if (index->ndim > 1) {
        return !ct__fail(CT_ERR_INDEX, c->fn, "index_select(): Index is supposed to be a vector");
    }
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "index_select(): Expected dtype int32 or int64 for index");
    }
    return true;
}

/* index_add's checks (PyTorch's index_func_meta_impl). */
static bool ct__index_add_check(const ct_op_call *c, const ct_tensor *self, const ct_tensor *index,
                                const ct_tensor *src, int dim)
{
    char a[96], b[96];
    if (index->ndim > 1) {
        return !ct__fail(CT_ERR_INDEX, c->fn,
                         "index_add_(): Index is supposed to be a vector, but got dim: %d with "
                         "type: %s and size: %s",
                         index->ndim, ct__dtype_title(index->dtype),
                         ct__shape_str(index->sizes, index->ndim, a, sizeof a));
    }
    if (!ct__ix_index_dtype_ok(index)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "index_add_(): Expected dtype int32/int64 for index but got: %s",
                         ct__dtype_title(index->dtype));
    }
    if (self->dtype != src->dtype) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "index_add_(): self (%s) and source (%s) must have the same scalar type",
                         ct__dtype_title(self->dtype), ct__dtype_title(src->dtype));
    }
    if (dim != 0 && dim >= src->ndim) {
        return !ct__fail(CT_ERR_INDEX, c->fn,
                         "index_add_(): Indexing dim %d is out of bounds of the source tensor "
                         "with dim %d",
                         dim, src->ndim);
    }
    if (ct_numel(index) != ct__ix_size(src, dim)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "index_add_(): Number of indices (%lld) should be equal to "
                         "source.size(dim): (%lld), for dim: %d",
                         (long long)ct_numel(index), (long long)ct__ix_size(src, dim), dim);
    }
    bool same = ct__ix_ndim(self) == ct__ix_ndim(src);
    for (int d = 0; same && d < ct__ix_ndim(self); d++) {
        same = d == dim || ct__ix_size(self, d) == ct__ix_size(src, d);
    }
    if (!same) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "source tensor shape must match self tensor shape, excluding the "
                         "specified dimension. Got self.shape = %s source.shape = %s",
                         ct__shape_str(self->sizes, self->ndim, a, sizeof a),
                         ct__shape_str(src->sizes, src->ndim, b, sizeof b));
    }
    return true;
}

/* The index family (inputs self, index[, src]; attributes dim[, alpha]): checks, the wrapped
   dim written back into attribute 0, and the output (self for the in-place forms). */
static bool ct__ix_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *index = c->inputs[1];
    const ct_tensor *src = c->n_inputs > 2 ? c->inputs[2] : NULL;
    int mode = c->op->variant & 7;
    int dim = ct__wrap_dim(c->fn, c->attrs[0].i, self->ndim);
    if (dim < 0) {
        return false;
    }
    c->attrs[0].i = dim;
    c->attrs[0].f = dim;
    bool ok = mode == CT__IX_GATHER      ? ct__gather_check(c, self, index, dim)
              : mode == CT__IX_SELECT    ? ct__select_check(c, index)
              : mode == CT__IX_INDEX_ADD ? ct__index_add_check(c, self, index, src, dim)
                                         : ct__scatter_check(c, self, index, src, dim);
    if (!ok) {
        return false;
    }
    c->dtype = self->dtype;
    if (c->op->variant & CT__IX_INPLACE) {
        c->outputs[c->n_outputs++] = (ct_tensor *)(uintptr_t)self;
        return true;
    }
    if (mode == CT__IX_GATHER) {
        return ct__op_output(c, index->sizes, index->ndim, self->dtype) != NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (mode == CT__IX_SELECT && self->ndim > 0) {
        sizes[dim] = ct_numel(index);
    }
    return ct__op_output(c, sizes, self->ndim, self->dtype) != NULL;
}

/* masked_fill's C++ element type names, as PyTorch's message prints them. */
static const char *ct__ix_ctype(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "",    "bool",     "unsigned char", "signed char", "short int",
        "int", "long int", "float",         "double"};
    return names[d];
}

/* masked_fill (inputs self, mask; attribute value): a bool mask broadcast with self (to
   self's shape for the in-place form). */
static bool ct__masked_fill_meta(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *mask = c->inputs[1];
    int64_t sizes[CT_MAX_DIMS];
    int nd;
    char a[96], b[96];
    if (mask->dtype != CT_BOOL) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                         ct__ix_ctype(mask->dtype));
    }
    if (!ct__broadcast_shapes(c->fn, self->sizes, self->ndim, mask->sizes, mask->ndim, sizes,
                              &nd)) {
        return false;
    }
    c->dtype = self->dtype;
    if (!(c->op->variant & CT__IX_INPLACE)) {
        return ct__op_output(c, sizes, nd, self->dtype) != NULL;
    }
    if (nd != self->ndim || memcmp(sizes, self->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "output with shape %s doesn't match the broadcast shape %s",
                         ct__shape_str(self->sizes, self->ndim, a, sizeof a),
                         ct__shape_str(sizes, nd, b, sizeof b));
    }
    c->outputs[c->n_outputs++] = (ct_tensor *)(uintptr_t)self;
    return true;
}

/* ---- kernels ----------------------------------------------------------------------------- */
/* One walk of the family (see the legend), a row of L's last dim at a time. */
typedef struct ct__ix_walk ct__ix_walk;
typedef void (*ct__ix_row_fn)(const ct__ix_walk *w, char *a, char *b, const char *ix, int64_t n);
struct ct__ix_walk {
    int nd, dim;
    int64_t sizes[CT_MAX_DIMS]; /* the loop shape L */
    char *a, *b, *ix;
    int64_t sa[CT_MAX_DIMS], sb[CT_MAX_DIMS], si[CT_MAX_DIMS]; /* element strides over L */
    int64_t sk; /* A's stride along dim (sa[dim] is 0: the index gives that coordinate) */
    size_t esz, isz;
    double alpha;
    ct__ix_row_fn row;
};

/* A row of n elements: pa = A at the index, pb = B; PRE runs once, BODY per element. */
#define CT__IX_ROW(NAME, T, IX, PRE, BODY)                                                         \
    static void NAME(const ct__ix_walk *w, char *a0, char *b0, const char *i0, int64_t n)          \
    {                                                                                              \
        T *a = (T *)(void *)a0, *b = (T *)(void *)b0;                                              \
        const IX *ix = (const IX *)(const void *)i0;                                               \
        int64_t sa = w->sa[w->nd - 1], sb = w->sb[w->nd - 1], si = w->si[w->nd - 1];               \
        int64_t sk = w->sk;                                                                        \
        PRE;                                                                                       \
        for (int64_t j = 0; j < n; j++) {                                                          \
            T *pa = a + j * sa + (int64_t)ix[j * si] * sk, *pb = b + j * sb;                       \
            BODY;                                                                                  \
        }                                                                                          \
    }
/* Copies by element size (gather/index_select read A, scatter writes it). */
#define CT__IX_COPY_ROWS(T, S)                                                                     \
    CT__IX_ROW(ct__ix_get_##S##_i32, T, int32_t, (void)0, *pb = *pa)                               \
    CT__IX_ROW(ct__ix_get_##S##_i64, T, int64_t, (void)0, *pb = *pa)                               \
    CT__IX_ROW(ct__ix_put_##S##_i32, T, int32_t, (void)0, *pa = *pb)                               \
    CT__IX_ROW(ct__ix_put_##S##_i64, T, int64_t, (void)0, *pa = *pb)
CT__IX_COPY_ROWS(uint8_t, 1)
CT__IX_COPY_ROWS(uint16_t, 2)
CT__IX_COPY_ROWS(uint32_t, 4)
CT__IX_COPY_ROWS(uint64_t, 8)
/* A += alpha * B per dtype (bool: logical or; integers wrap; floats: one fma). */
#define CT__IX_ADD_ROWS(T, S, PRE, BODY)                                                           \
    CT__IX_ROW(ct__ix_add_##S##_i32, T, int32_t, PRE, BODY)                                        \
    CT__IX_ROW(ct__ix_add_##S##_i64, T, int64_t, PRE, BODY)
#define CT__IX_ADD_INT(T, S)                                                                       \
    CT__IX_ADD_ROWS(T, S, uint64_t al = (uint64_t)(int64_t)w->alpha,                               \
                    *pa = (T)((uint64_t)(int64_t)*pa + al * (uint64_t)(int64_t)*pb))
CT__IX_ADD_ROWS(bool, b8, bool al = w->alpha != 0.0, *pa = *pa || (*pb && al))
CT__IX_ADD_INT(uint8_t, u8)
CT__IX_ADD_INT(int8_t, i8)
CT__IX_ADD_INT(int16_t, i16)
CT__IX_ADD_INT(int32_t, i32)
CT__IX_ADD_INT(int64_t, i64)
CT__IX_ADD_ROWS(float, f32, float al = (float)w->alpha, *pa = fmaf(al, *pb, *pa))
CT__IX_ADD_ROWS(double, f64, double al = w->alpha, *pa = fma(al, *pb, *pa))

/* Row functions by [int64 index][log2 element size] and [int64 index][dtype]. */
static const ct__ix_row_fn ct__ix_gets[2][4] = {
    {ct__ix_get_1_i32, ct__ix_get_2_i32, ct__ix_get_4_i32, ct__ix_get_8_i32},
    {ct__ix_get_1_i64, ct__ix_get_2_i64, ct__ix_get_4_i64, ct__ix_get_8_i64}};
static const ct__ix_row_fn ct__ix_puts[2][4] = {
    {ct__ix_put_1_i32, ct__ix_put_2_i32, ct__ix_put_4_i32, ct__ix_put_8_i32},
    {ct__ix_put_1_i64, ct__ix_put_2_i64, ct__ix_put_4_i64, ct__ix_put_8_i64}};
static const ct__ix_row_fn ct__ix_adds[2][CT_DTYPE_COUNT] = {
    {NULL, ct__ix_add_b8_i32, ct__ix_add_u8_i32, ct__ix_add_i8_i32, ct__ix_add_i16_i32,
     ct__ix_add_i32_i32, ct__ix_add_i64_i32, ct__ix_add_f32_i32, ct__ix_add_f64_i32},
    {NULL, ct__ix_add_b8_i64, ct__ix_add_u8_i64, ct__ix_add_i8_i64, ct__ix_add_i16_i64,
     ct__ix_add_i32_i64, ct__ix_add_i64_i64, ct__ix_add_f32_i64, ct__ix_add_f64_i64}};

/* Advances the row-major position pos over sizes; false after the last one. */
static bool ct__ix_step(int64_t *pos, const int64_t *sizes, int nd)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++pos[d] < sizes[d]) {
            return true;
        }
        pos[d] = 0;
    }
    return false;
}

/* Sizes and element strides of t over nd >= 1 dims (a 0-dim tensor as [1]). */
static void ct__ix_geom(const ct_tensor *t, int64_t *sizes, int64_t *strides)
{
    sizes[0] = 1;
    strides[0] = 0;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
}

/* Checks every entry of index lies in [0, bound), in index order. */
static ct_status ct__ix_check_bounds(const ct_op_call *c, const ct_tensor *index, int dim,
                                     int64_t bound)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], pos[CT_MAX_DIMS] = {0};
    int nd = ct__ix_ndim(index);
    if (ct_numel(index) == 0) {
        return CT_OK;
    }
    ct__ix_geom(index, sizes, strides);
    do {
        int64_t off = 0;
        for (int d = 0; d < nd - 1; d++) {
            off += pos[d] * strides[d];
        }
        for (int64_t j = 0; j < sizes[nd - 1]; j++) {
            int64_t o = off + j * strides[nd - 1];
            int64_t k = index->dtype == CT_INT64 ? ((const int64_t *)(void *)ct__data(index))[o]
                                                 : ((const int32_t *)(void *)ct__data(index))[o];
            if (k >= 0 && k < bound) {
                continue;
            }
            if ((c->op->variant & 7) == CT__IX_SELECT) {
                return ct__fail(CT_ERR_INDEX, c->fn, "index out of range in self");
            }
            return ct__fail(CT_ERR_INDEX, c->fn,
                            "index %lld is out of bounds for dimension %d with size %lld",
                            (long long)k, dim, (long long)bound);
        }
    } while (ct__ix_step(pos, sizes, nd - 1));
    return CT_OK;
}

/* Rows [begin, end) of the walk (a row: one position of L's dims but the last). */
static void ct__ix_rows(int64_t begin, int64_t end, void *ctx)
{
    const ct__ix_walk *w = (const ct__ix_walk *)ctx;
    int64_t pos[CT_MAX_DIMS], r = begin;
    for (int d = w->nd - 2; d >= 0; d--) {
        pos[d] = r % w->sizes[d];
        r /= w->sizes[d];
    }
    for (int64_t row = begin; row < end; row++) {
        int64_t oa = 0, ob = 0, oi = 0;
        for (int d = 0; d < w->nd - 1; d++) {
            oa += pos[d] * w->sa[d];
            ob += pos[d] * w->sb[d];
            oi += pos[d] * w->si[d];
        }
        w->row(w, w->a + oa * (int64_t)w->esz, w->b + ob * (int64_t)w->esz,
               w->ix + oi * (int64_t)w->isz, w->sizes[w->nd - 1]);
        ct__ix_step(pos, w->sizes, w->nd - 1);
    }
}

/* Columns [begin, end) of L's last dim, through every row in order (for a writing op along
   another dim: a column's elements are written only by that column, in index order). */
static void ct__ix_cols(int64_t begin, int64_t end, void *ctx)
{
    ct__ix_walk w = *(const ct__ix_walk *)ctx;
    int last = w.nd - 1;
    w.a += begin * w.sa[last] * (int64_t)w.esz;
    w.b += begin * w.sb[last] * (int64_t)w.esz;
    w.ix += begin * w.si[last] * (int64_t)w.isz;
    w.sizes[last] = end - begin;
    ct__ix_rows(0, ct__numel(w.sizes, last), &w);
}

/* log2 of an element size of 1, 2, 4 or 8 bytes. */
static int ct__ix_log2(size_t esz)
{
    return esz == 1 ? 0 : esz == 2 ? 1 : esz == 4 ? 2 : 3;
}

/* The index family on the CPU: bounds first, then self copied into a new output, then the
   walk: in parallel over rows where no two rows write the same element (gather and
   index_select, or the writing ops along L's last dim), else over columns of the last dim. */
static ct_status ct__ix_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0], *index = c->inputs[1];
    const ct_tensor *src = c->n_inputs > 2 ? c->inputs[2] : NULL;
    ct_tensor *out = c->outputs[0];
    int mode = c->op->variant & 7, dim = (int)c->attrs[0].i;
    int64_t dummy[CT_MAX_DIMS];
    ct_status st = ct__ix_check_bounds(c, index, dim, ct__ix_size(self, dim));
    if (st != CT_OK) {
        return st;
    }
    bool a_reads = mode == CT__IX_GATHER || mode == CT__IX_SELECT;
    if (!a_reads && out != self) {
        ct__copy_kernel(out, self);
    }
    const ct_tensor *loop = mode == CT__IX_SELECT ? out : mode == CT__IX_INDEX_ADD ? src : index;
    if (ct_numel(loop) == 0) {
        return CT_OK;
    }
    ct__ix_walk w;
    w.nd = ct__ix_ndim(self);
    w.dim = dim;
    w.esz = ct_dtype_size(self->dtype);
    w.isz = ct_dtype_size(index->dtype);
    w.alpha = mode == CT__IX_INDEX_ADD ? c->attrs[1].f : 1.0;
    ct__ix_geom(loop, w.sizes, dummy);
    ct__ix_geom(a_reads ? self : out, dummy, w.sa);
    ct__ix_geom(a_reads ? out : src, dummy, w.sb);
    w.sk = w.sa[dim];
    w.sa[dim] = 0;
    w.a = ct__data(a_reads ? self : out);
    w.b = ct__data(a_reads ? out : src);
    w.ix = ct__data(index);
    if (loop == index) {
        ct__ix_geom(index, dummy, w.si);
    } else {
        memset(w.si, 0, sizeof w.si);
        w.si[dim] = index->ndim > 0 ? index->strides[0] : 0;
    }
    int i64 = index->dtype == CT_INT64;
    w.row = mode == CT__IX_SCATTER_ADD || mode == CT__IX_INDEX_ADD ? ct__ix_adds[i64][self->dtype]
            : a_reads ? ct__ix_gets[i64][ct__ix_log2(w.esz)]
                      : ct__ix_puts[i64][ct__ix_log2(w.esz)];
    int64_t n = w.sizes[w.nd - 1], rows = ct_numel(loop) / n;
    if (a_reads || dim == w.nd - 1) {
        ct__parallel_for(rows, n >= CT__GRAIN ? 1 : CT__GRAIN / n, ct__ix_rows, &w);
    } else {
        ct__parallel_for(n, rows >= CT__GRAIN ? 1 : CT__GRAIN / rows, ct__ix_cols, &w);
    }
    return CT_OK;
}

/* masked_fill's inner loop: data[0] the output, data[1] the mask; params the value's bytes
   (first) and size. */
typedef struct ct__mfill_value {
    union {
        double f64;
        int64_t i64;
        char bytes[8];
    } v;
    size_t esz;
} ct__mfill_value;
static void ct__masked_fill_loop(char **data, const int64_t *strides, int64_t n, const void *params)
{
    const ct__mfill_value *p = (const ct__mfill_value *)params;
    for (int64_t k = 0; k < n; k++) {
        if (*(const bool *)(data[1] + k * strides[1])) {
            memcpy(data[0] + k * strides[0], p->v.bytes, p->esz);
        }
    }
}

/* masked_fill on the CPU: self copied (broadcast) into a new output, then the fill. */
static ct_status ct__masked_fill_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    const ct_tensor *mask = c->inputs[1];
    ct__mfill_value p;
    ct__iter it;
    if (out != c->inputs[0]) {
        ct__copy_kernel(out, c->inputs[0]);
    }
    p.esz = ct_dtype_size(out->dtype);
    ct__store_f64(p.v.bytes, out->dtype, c->attrs[0].f);
    ct__iter_build(&it, out, &mask, 1);
    ct__iter_run(&it, ct__masked_fill_loop, &p);
    return CT_OK;
}

/* ---- descriptors ------------------------------------------------------------------------ */
#define CT__IX_OP(SYM, NAME, SCHEMA, API, KIND, VAR, META, KERNEL, NODE, BW)                       \
    static const ct_op ct__op_##SYM = {                                                            \
        "aten::" NAME,     SCHEMA, API,  KIND, CT_AUTOCAST_NONE, VAR,  0u,  NULL, META,            \
        CT__K_ALL(KERNEL), NULL,   NODE, BW,   1u << 1,          NULL, NULL};

CT__IX_OP(gather, "gather",
          "gather(Tensor self, int dim, Tensor index, *, bool "
          "sparse_grad=False) -> Tensor",
          "ct_gather", CT_OP_OTHER, CT__IX_GATHER, ct__ix_meta, ct__ix_kernel, "GatherBackward0",
          ct__gather_backward)
CT__IX_OP(index_select, "index_select",
          "index_select(Tensor self, int dim, Tensor index) -> "
          "Tensor",
          "ct_index_select", CT_OP_OTHER, CT__IX_SELECT, ct__ix_meta, ct__ix_kernel,
          "IndexSelectBackward0", ct__index_select_backward)
CT__IX_OP(scatter, "scatter",
          "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> "
          "Tensor",
          "ct_scatter", CT_OP_OTHER, CT__IX_SCATTER, ct__ix_meta, ct__ix_kernel, "ScatterBackward0",
          ct__scatter_backward)
CT__IX_OP(scatter_, "scatter_",
          "scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor "
          "src) -> Tensor(a!)",
          "ct_scatter_", CT_OP_INPLACE, CT__IX_SCATTER | CT__IX_INPLACE, ct__ix_meta, ct__ix_kernel,
          "ScatterBackward0", ct__scatter_backward)
CT__IX_OP(scatter_add, "scatter_add",
          "scatter_add(Tensor self, int dim, Tensor index, Tensor "
          "src) -> Tensor",
          "ct_scatter_add", CT_OP_OTHER, CT__IX_SCATTER_ADD, ct__ix_meta, ct__ix_kernel,
          "ScatterAddBackward0", ct__scatter_add_backward)
CT__IX_OP(scatter_add_, "scatter_add_",
          "scatter_add_(Tensor(a!) self, int dim, Tensor index, "
          "Tensor src) -> Tensor(a!)",
          "ct_scatter_add_", CT_OP_INPLACE, CT__IX_SCATTER_ADD | CT__IX_INPLACE, ct__ix_meta,
          ct__ix_kernel, "ScatterAddBackward0", ct__scatter_add_backward)
CT__IX_OP(index_add, "index_add",
          "index_add(Tensor self, int dim, Tensor index, Tensor source, "
          "*, Scalar alpha=1) -> Tensor",
          "ct_index_add", CT_OP_OTHER, CT__IX_INDEX_ADD, ct__ix_meta, ct__ix_kernel,
          "IndexAddBackward0", ct__index_add_backward)
CT__IX_OP(index_add_, "index_add_",
          "index_add_(Tensor(a!) self, int dim, Tensor index, Tensor "
          "source, *, Scalar alpha=1) -> Tensor(a!)",
          "ct_index_add_", CT_OP_INPLACE, CT__IX_INDEX_ADD | CT__IX_INPLACE, ct__ix_meta,
          ct__ix_kernel, "IndexAddBackward0", ct__index_add_backward)
CT__IX_OP(masked_fill, "masked_fill",
          "masked_fill.Scalar(Tensor self, Tensor mask, Scalar "
          "value) -> Tensor",
          "ct_masked_fill", CT_OP_OTHER, 0, ct__masked_fill_meta, ct__masked_fill_kernel,
          "MaskedFillBackward0", ct__masked_fill_backward)
CT__IX_OP(masked_fill_, "masked_fill_",
          "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, "
          "Scalar value) -> Tensor(a!)",
          "ct_masked_fill_", CT_OP_INPLACE, CT__IX_INPLACE, ct__masked_fill_meta,
          ct__masked_fill_kernel, "MaskedFillBackward0", ct__masked_fill_backward)

/* ---- public functions -------------------------------------------------------------------- */
/* A call of op over self, index and src (n_inputs 3) or not (2), with attributes dim and, for
   index_add, alpha. */
static ct_tensor *ct__ix_call(const ct_op *op, const char *fn, const ct_tensor *self, int64_t dim,
                              const ct_tensor *index, const ct_tensor *src, int n_inputs,
                              double alpha)
{
    const ct_tensor *in[3] = {self, index, src};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n_inputs);
    ct__call_i(&c, dim);
    if (op->variant % CT__IX_INPLACE == CT__IX_INDEX_ADD) {
        ct__call_f(&c, alpha);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_gather(const ct_tensor *input, int64_t dim, const ct_tensor *index)
{
    return ct__ix_call(&ct__op_gather, "ct_gather", input, dim, index, NULL, 2, 1.0);
}

ct_tensor *ct_index_select(const ct_tensor *input, int64_t dim, const ct_tensor *index)
{
    return ct__ix_call(&ct__op_index_select, "ct_index_select", input, dim, index, NULL, 2, 1.0);
}

ct_tensor *ct_scatter(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                      const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter, "ct_scatter", input, dim, index, src, 3, 1.0);
}

ct_tensor *ct_scatter_(ct_tensor *self, int64_t dim, const ct_tensor *index, const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter_, "ct_scatter_", self, dim, index, src, 3, 1.0);
}

ct_tensor *ct_scatter_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                          const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter_add, "ct_scatter_add", input, dim, index, src, 3, 1.0);
}

ct_tensor *ct_scatter_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                           const ct_tensor *src)
{
    return ct__ix_call(&ct__op_scatter_add_, "ct_scatter_add_", self, dim, index, src, 3, 1.0);
}

ct_tensor *ct_index_add(const ct_tensor *input, int64_t dim, const ct_tensor *index,
                        const ct_tensor *source, double alpha)
{
    return ct__ix_call(&ct__op_index_add, "ct_index_add", input, dim, index, source, 3, alpha);
}

ct_tensor *ct_index_add_(ct_tensor *self, int64_t dim, const ct_tensor *index,
                         const ct_tensor *source, double alpha)
{
    return ct__ix_call(&ct__op_index_add_, "ct_index_add_", self, dim, index, source, 3, alpha);
}

/* A call of masked_fill (op: the out-of-place or in-place descriptor). */
static ct_tensor *ct__masked_fill_call(const ct_op *op, const char *fn, const ct_tensor *self,
                                       const ct_tensor *mask, double value)
{
    const ct_tensor *in[2] = {self, mask};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    ct__call_f(&c, value);
    return ct__dispatch(&c);
}

ct_tensor *ct_masked_fill(const ct_tensor *input, const ct_tensor *mask, double value)
{
    return ct__masked_fill_call(&ct__op_masked_fill, "ct_masked_fill", input, mask, value);
}

ct_tensor *ct_masked_fill_(ct_tensor *self, const ct_tensor *mask, double value)
{
    return ct__masked_fill_call(&ct__op_masked_fill_, "ct_masked_fill_", self, mask, value);
}

// >>part ops/reduce.c
/* ops/reduce.c - sum, mean, max, min, argmax, argmin, amax, amin, logsumexp, var, std, all,
 * any, linalg.vector_norm, allclose, equal.
 *
 * Legend: the input (made contiguous) is viewed as (outer, R, inner) around the reduced
 * dim; the result is (outer, inner). Kernels exist for float32, float64 and int64; other
 * integer types and bool reduce through int64.
 */

CT__VECTORIZE_BEGIN

typedef enum ct__redop { CT__RSUM, CT__RMAX, CT__RMIN } ct__redop;

typedef struct ct__red_job {
    ct__redop op;
    const char *x;    /* (outer, R, inner) contiguous */
    char *v;          /* values (outer, inner) or NULL */
    int64_t *ix;      /* indices (outer, inner) or NULL */
    int64_t outer, R, inner, chunk;
} ct__red_job;

#define CT__RED_BLOCK 4096

/* Sum of n contiguous values: fixed blocks of CT__RED_BLOCK in 16 lanes of type LANE, block
   sums in ACC (int64 sums run in uint64, so that overflow wraps as in PyTorch). */
#define CT__SUM_FN(T, S, ACC, LANE)                                                        \
    static ACC ct__sum_##S(const T *p, int64_t n)                                           \
    {                                                                                       \
        ACC total = 0;                                                                      \
        for (int64_t b = 0; b < n; b += CT__RED_BLOCK) {                                    \
            int64_t m = n - b < CT__RED_BLOCK ? n - b : CT__RED_BLOCK;                      \
            const T *q = p + b;                                                             \
            LANE acc[16] = {0};                                                             \
            int64_t i = 0;                                                                  \
            for (; i + 16 <= m; i += 16) {                                                  \
                for (int k = 0; k < 16; k++) {                                              \
                    acc[k] += (LANE)q[i + k];                                               \
                }                                                                           \
            }                                                                               \
            LANE s = 0;                                                                     \
            for (int k = 0; k < 16; k++) {                                                  \
                s += acc[k];                                                                \
            }                                                                               \
            for (; i < m; i++) {                                                            \
                s += (LANE)q[i];                                                            \
            }                                                                               \
            total += (ACC)s;                                                                \
        }                                                                                   \
        return total;                                                                       \
    }

/* is v a better max (sign +1) / min (sign -1) than best? NaN wins and stays. */
#define CT__BETTER(v, best, sign)                                                          \
    ((best) == (best) && ((v) != (v) || ((sign) > 0 ? (v) > (best) : (v) < (best))))

/* lane[k] = the better of lane[k] and q[k] for 16 lanes (OP: > for max, < for min) */
#define CT__BEST_LANES(lane, q, OP)                                                        \
    for (int k = 0; k < 16; k++) {                                                          \
        bool take = lane[k] == lane[k] && (q[k] != q[k] || q[k] OP lane[k]);                \
        lane[k] = take ? q[k] : lane[k];                                                    \
    }

/* The max (sign +1) / min (sign -1) of n > 0 contiguous values in 16 lanes, the lanes then
   the tail combined in order; NaN wins (the value only: no index is tracked). */
#define CT__BEST_FN(T, S)                                                                  \
    static T ct__best_##S(const T *p, int64_t n, int sign)                                  \
    {                                                                                       \
        T lane[16];                                                                         \
        for (int k = 0; k < 16; k++) {                                                      \
            lane[k] = p[k < n ? k : 0];                                                     \
        }                                                                                   \
        int64_t i = n < 16 ? n : 16;                                                        \
        for (; i + 16 <= n; i += 16) {                                                      \
            if (sign > 0) {                                                                 \
                CT__BEST_LANES(lane, (p + i), >)                                            \
            } else {                                                                        \
                CT__BEST_LANES(lane, (p + i), <)                                            \
            }                                                                               \
        }                                                                                   \
        T best = lane[0];                                                                   \
        for (int k = 1; k < 16; k++) {                                                      \
            best = CT__BETTER(lane[k], best, sign) ? lane[k] : best;                        \
        }                                                                                   \
        for (; i < n; i++) {                                                                \
            best = CT__BETTER(p[i], best, sign) ? p[i] : best;                              \
        }                                                                                   \
        return best;                                                                        \
    }

#define CT__RED_KERNELS(T, S, ACC, LANE)                                                   \
    CT__SUM_FN(T, S, ACC, LANE)                                                             \
    CT__BEST_FN(T, S)                                                                       \
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
            if (!j->ix) {                                                                   \
                ((T *)j->v)[o] = ct__best_##S(p, j->R, sign);                               \
                continue;                                                                   \
            }                                                                               \
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
CT__RED_KERNELS(float, f32, double, float)
CT__RED_KERNELS(double, f64, double, double)
CT__RED_KERNELS(int64_t, i64, uint64_t, uint64_t)
CT__RED_KERNELS(uint8_t, u8, uint64_t, uint64_t)

/* Whether dtypes a and b hold the same bytes for max/min: equal, or bool and uint8. */
static bool ct__red_same_bytes(ct_dtype a, ct_dtype b)
{
    bool ba = a == CT_BOOL || a == CT_UINT8, bb = b == CT_BOOL || b == CT_UINT8;
    return a == b || (ba && bb);
}

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
    bool u8 = ct__red_same_bytes(x->dtype, CT_UINT8);
    void (*rows)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_rows_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_rows_f64
                                             : u8                     ? ct__red_rows_u8
                                                                      : ct__red_rows_i64;
    void (*cols)(int64_t, int64_t, void *) = x->dtype == CT_FLOAT32   ? ct__red_cols_f32
                                             : x->dtype == CT_FLOAT64 ? ct__red_cols_f64
                                             : u8                     ? ct__red_cols_u8
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

/* The dtype reduction rop computes in: max/min of bool/uint8 in uint8 (a byte per element,
   exact), else ct__red_compute_dtype. */
static ct_dtype ct__red_op_dtype(ct__redop rop, ct_dtype d)
{
    return rop != CT__RSUM && ct__red_same_bytes(d, CT_UINT8) ? CT_UINT8
                                                              : ct__red_compute_dtype(d);
}

/* Sizes around dim d of t: outer (before), R (d itself; 1 for a 0-dim t), inner (after). */
static void ct__red_geometry(const ct_tensor *t, int d, int64_t *outer, int64_t *R,
                             int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    *R = t->ndim ? t->sizes[d] : 1;
    for (int k = 0; k < t->ndim; k++) {
        if (k < d) {
            *outer *= t->sizes[k];
        } else if (k > d) {
            *inner *= t->sizes[k];
        }
    }
}

/* Reduces t viewed as (outer, R, inner) (R > 0) into the contiguous v (values in t's dtype or
   the compute dtype, or NULL) and ix (int64 indices, or NULL). The values are computed in
   the compute dtype (through a temporary when v's dtype differs); t is copied first unless
   it is contiguous in the compute dtype. False (reported) when out of memory. */
static bool ct__reduce_into(const char *fn, ct__redop rop, const ct_tensor *t, int64_t outer,
                            int64_t R, int64_t inner, ct_tensor *v, ct_tensor *ix)
{
    ct_dtype cd = ct__red_op_dtype(rop, t->dtype);
    bool reuse = ct__red_same_bytes(t->dtype, cd) && ct_is_contiguous(t);
    bool cast = v && !ct__red_same_bytes(v->dtype, cd);
    ct_tensor *x = reuse ? NULL : ct__tensor_new(fn, t->sizes, t->ndim, cd);
    ct_tensor *vc = cast ? ct__tensor_new(fn, v->sizes, v->ndim, cd) : v;
    bool ok = (reuse || x) && (!cast || vc);
    if (ok) {
        if (!reuse) {
            ct__copy_kernel(x, t);
        }
        ct__reduce_run(rop, reuse ? t : x, outer, R, inner, vc, ix);
        if (cast) {
            ct__copy_kernel(v, vc);
        }
    }
    ct__release(x);
    if (cast) {
        ct__release(vc);
    }
    return ok;
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

/* The number of elements of t reduced into each output over the masked dims. */
static int64_t ct__red_count(const ct_tensor *t, unsigned mask)
{
    int64_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        count *= (mask & (1u << d)) ? t->sizes[d] : 1;
    }
    return count;
}

/* ---- sum / mean ------------------------------------------------------------------------ */
/* What meta computes for the kernel and the node of a sum or mean (c->state). */
typedef struct ct__sum_state {
    unsigned mask; /* the reduced dims */
    int64_t count; /* the number of elements reduced into each output */
} ct__sum_state;

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

static void ct__sum_record(ct_node *n, const ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    n->i[0] = s->mask;
    n->f[0] = (double)s->count;
}

/* Attributes: dims (int[]; none or empty: all) and keepdim. Mean needs a float input. The
   output is in the compute dtype, with the reduced shape. */
static bool ct__sum_meta(ct_op_call *c)
{
    ct__sum_state *s = (ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    bool keepdim = c->n_attrs > 1 && c->attrs[1].i;
    if (!ct__dims_mask(c->fn, t, c->n_attrs ? c->attrs[0].ints : NULL,
                       c->n_attrs ? (int)c->attrs[0].i : 0, &s->mask)) {
        return false;
    }
    if (c->op->variant && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "mean(): could not infer output dtype. Input dtype must "
                 "be either a floating point or complex dtype. Got: %s",
                 ct__dtype_title(t->dtype));
        return false;
    }
    s->count = ct__red_count(t, s->mask);
    int64_t shape[CT_MAX_DIMS];
    int nd = ct__reduced_shape(t, s->mask, keepdim, shape);
    c->dtype = t->dtype;
    return ct__op_output(c, shape, nd, ct__red_compute_dtype(t->dtype)) != NULL;
}

/* Reduces (rop) the masked dims of a non-empty t into out, innermost first: each step reduces
   one dim (kept as 1) into a temporary, the last one into out (contiguous, the same
   elements). */
static bool ct__reduce_dims_into(const char *fn, ct__redop rop, const ct_tensor *t,
                                 unsigned mask, ct_tensor *out)
{
    if (mask == 0) { /* nothing reduced (a 0-dim input): a conversion */
        ct__copy_kernel(out, t);
        return true;
    }
    int first = 0;
    while (!(mask & (1u << first))) {
        first++;
    }
    ct_tensor *cur = ct_retain((ct_tensor *)(uintptr_t)t);
    for (int d = t->ndim - 1; d >= first && cur; d--) {
        if (!(mask & (1u << d))) {
            continue;
        }
        int64_t outer, R, inner, sizes[CT_MAX_DIMS];
        ct__red_geometry(cur, d, &outer, &R, &inner);
        memcpy(sizes, cur->sizes, sizeof(int64_t) * (size_t)cur->ndim);
        sizes[d] = 1;
        ct_tensor *next = d == first ? ct_retain(out) : ct__tensor_new(fn, sizes, cur->ndim,
                                                                       out->dtype);
        if (next && !ct__reduce_into(fn, rop, cur, outer, R, inner, next, NULL)) {
            ct__release(next);
            next = NULL;
        }
        ct__release(cur);
        cur = next;
    }
    bool ok = cur != NULL;
    ct__release(cur);
    return ok;
}

static ct_status ct__sum_kernel(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    ct_tensor *out = c->outputs[0];
    bool mean = c->op->variant != 0;
    if (ct_numel(t) == 0) {
        ct__fill_contig(out, mean ? NAN : 0.0); /* an empty input: O(output) */
        return CT_OK;
    }
    if (!ct__reduce_dims_into(c->fn, CT__RSUM, t, s->mask, out)) {
        return ct_error_code();
    }
    if (mean) {
        double inv = 1.0 / (double)s->count;
        int64_t m = ct_numel(out);
        for (int64_t i = 0; i < m; i++) {
            char *p = ct__data(out) + (size_t)i * ct_dtype_size(out->dtype);
            ct__store_f64(p, out->dtype, ct__load_f64(p, out->dtype) * inv);
        }
    }
    return CT_OK;
}

/* sum_to_size (composite): the dims to sum, kept as 1, from meta (c->state) */
typedef struct ct__sum_to_state {
    int64_t dims[CT_MAX_DIMS];
    int n;
} ct__sum_to_state;

/* Attribute: the target sizes (int[]), which input must broadcast to. */
static bool ct__sum_to_size_meta(ct_op_call *c)
{
    ct__sum_to_state *s = (ct__sum_to_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    const int64_t *sizes = c->attrs[0].ints;
    int ndim = (int)c->attrs[0].i, lead = t->ndim - ndim;
    bool ok = lead >= 0;
    s->n = 0;
    for (int d = 0; ok && d < t->ndim; d++) {
        if (d < lead) {
            s->dims[s->n++] = d;
        } else if (sizes[d - lead] == 1 && t->sizes[d] != 1) {
            s->dims[s->n++] = d;
        } else if (sizes[d - lead] != t->sizes[d]) {
            ok = false;
        }
    }
    if (!ok) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "size {%s} is not expandable to size {%s}.",
                 ndim ? ct__shape_str(sizes, ndim, a, sizeof a) : "[]",
                 ct__shape_str(t->sizes, t->ndim, b, sizeof b));
    }
    c->dtype = t->dtype;
    return ok;
}

/* sum over the dims meta found, reshaped to the sizes; an alias when there are none */
static ct_status ct__sum_to_size_composite(ct_op_call *c)
{
    const ct__sum_to_state *s = (const ct__sum_to_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    ct_scope_begin();
    ct_tensor *r = s->n == 0 ? ct_alias(t)
                             : ct_reshape(ct_sum_dims(t, s->dims, s->n, true), c->attrs[0].ints,
                                          (int)c->attrs[0].i);
    return ct__composite_end(c, r);
}

/* ---- max / min / argmax / argmin ----------------------------------------------------- */
/* What meta computes for the kernel and the node of max/min/argmax/argmin (c->state). */
typedef struct ct__minmax_state {
    int d;                      /* the wrapped dim (0 for a 0-dim input or all elements) */
    int64_t outer, R, inner;    /* the input around it (all: 1, numel, 1) */
} ct__minmax_state;

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

/* max.dim / min.dim save the indices and the dim */
static void ct__minmax_dim_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = ((const ct__minmax_state *)c->state)->d;
    ct__save(n, c->outputs[1]);
}

/* full max/min: the gradient is split evenly among the elements equal to the result */
static void ct__minmax_all_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    ct_tensor *mask = ct_to_dtype(ct_eq(x, y), g->dtype);
    gi[0] = ct_mul(mask, ct_div(g, ct_sum(mask)));
}

/* The family's variant: bit 0 min (else max), bit 1 indices only (argmax/argmin). A call
   over a dim has the attributes dim and keepdim, one over all elements none. Outputs: the
   values in the input's dtype unless indices only, then the int64 indices over a dim (or
   argmax's over all elements). */
#define CT__MM_MIN 1
#define CT__MM_ARG 2
static bool ct__minmax_meta(ct_op_call *c)
{
    ct__minmax_state *s = (ct__minmax_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    int var = c->op->variant;
    bool dim_form = c->n_attrs > 0;
    const char *name = (var & CT__MM_ARG) ? ((var & CT__MM_MIN) ? "argmin" : "argmax")
                                          : ((var & CT__MM_MIN) ? "min" : "max");
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    c->dtype = t->dtype;
    if (!dim_form) {
        if (ct_numel(t) == 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "%s(): Expected reduction dim to be specified for "
                     "input.numel() == 0.%s", name, (var & CT__MM_ARG) ? "" : " Specify the "
                     "reduction dim with the 'dim' argument.");
            return false;
        }
        s->d = 0;
        s->outer = 1;
        s->R = ct_numel(t);
        s->inner = 1;
    } else {
        s->d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
        if (s->d < 0) {
            return false;
        }
        ct__red_geometry(t, s->d, &s->outer, &s->R, &s->inner);
        if (s->R == 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "%s(): Expected reduction dim %d to have non-zero "
                     "size.", name, s->d);
            return false;
        }
        nd = ct__reduced_shape(t, t->ndim ? 1u << s->d : 0u, c->attrs[1].i != 0, shape);
    }
    if (!(var & CT__MM_ARG) && !ct__op_output(c, shape, nd, t->dtype)) {
        return false;
    }
    return (!dim_form && !(var & CT__MM_ARG)) || ct__op_output(c, shape, nd, CT_INT64);
}

static ct_status ct__minmax_kernel(ct_op_call *c)
{
    const ct__minmax_state *s = (const ct__minmax_state *)c->state;
    int var = c->op->variant;
    bool arg = (var & CT__MM_ARG) != 0;
    ct_tensor *v = arg ? NULL : c->outputs[0];
    ct_tensor *ix = arg ? c->outputs[0] : c->n_outputs > 1 ? c->outputs[1] : NULL;
    ct__redop rop = (var & CT__MM_MIN) ? CT__RMIN : CT__RMAX;
    return ct__reduce_into(c->fn, rop, c->inputs[0], s->outer, s->R, s->inner, v, ix)
               ? CT_OK
               : ct_error_code();
}

/* ---- amax / amin --------------------------------------------------------------------- */
/* amax / amin save the reduced dims (i[0]), the input and the result. */
static void ct__amax_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = ((const ct__sum_state *)c->state)->mask;
    ct__save(n, c->inputs[0]);
    ct__save_output(n, c->outputs[0]);
}

/* The dims of a mask over ndim dims as a list; returns how many. */
static int ct__mask_dims(unsigned mask, int ndim, int64_t *dims)
{
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (mask & (1u << d)) {
            dims[nd++] = d;
        }
    }
    return nd;
}

/* The reduced dims of a node's input (mask i[0]) as a list; returns how many. */
static int ct__node_dims(const ct_node *n, int64_t *dims)
{
    return ct__mask_dims((unsigned)n->i[0], n->next[0].ndim, dims);
}

/* t minus its mean over the masked dims (count elements each), the mean taken as x0 +
   mean(t - x0) with x0 the first element of each reduced slice: exact for constant data, so
   that var / std of equal elements is 0 (as PyTorch's Welford). */
static ct_tensor *ct__centered(const ct_tensor *t, unsigned mask, int64_t count)
{
    int64_t dims[CT_MAX_DIMS];
    int nd = ct__mask_dims(mask, t->ndim, dims);
    const ct_tensor *x0 = t;
    for (int k = 0; k < nd && count > 0; k++) {
        x0 = ct_narrow(x0, dims[k], 0, 1);
    }
    ct_tensor *shift = ct_div_scalar(ct_sum_dims(ct_sub(t, x0), dims, nd, true), (double)count);
    return ct_sub(t, ct_add(x0, shift));
}

/* The gradient split evenly among the elements equal to the result along the reduced dims. */
static void ct__amax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    int64_t dims[CT_MAX_DIMS];
    int nd = ct__node_dims(n, dims);
    ct_tensor *hit = ct_to_dtype(ct_eq(x, ct__unreduce(n, y)), g->dtype);
    gi[0] = ct_mul(hit, ct_div(ct__unreduce(n, g), ct_sum_dims(hit, dims, nd, true)));
}

/* Attributes: dims (int[]; empty: all) and keepdim; variant 1 for amin. The output has the
   input's dtype and the reduced shape. */
static bool ct__amax_meta(ct_op_call *c)
{
    ct__sum_state *s = (ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    const char *name = c->op->variant ? "amin" : "amax";
    int n = (int)c->attrs[0].i;
    if (!ct__dims_mask(c->fn, t, c->attrs[0].ints, n, &s->mask)) {
        return false;
    }
    if (n == 0 && ct_numel(t) == 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s(): Expected reduction dim to be specified for "
                 "input.numel() == 0. Specify the reduction dim with the 'dim' argument.", name);
        return false;
    }
    for (int d = 0; d < t->ndim; d++) {
        if ((s->mask & (1u << d)) && t->sizes[d] == 0) {
            ct__fail(CT_ERR_INDEX, c->fn, "%s(): Expected reduction dim %d to have non-zero "
                     "size.", name, d);
            return false;
        }
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = ct__reduced_shape(t, s->mask, c->attrs[1].i != 0, shape);
    c->dtype = t->dtype;
    return ct__op_output(c, shape, nd, t->dtype) != NULL;
}

static ct_status ct__amax_kernel(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    ct__redop rop = c->op->variant ? CT__RMIN : CT__RMAX;
    return ct__reduce_dims_into(c->fn, rop, c->inputs[0], s->mask, c->outputs[0])
               ? CT_OK
               : ct_error_code();
}

/* ---- composite reductions ------------------------------------------------------------ */
/* What the composites' input must be (their variant). */
#define CT__RC_VAR 1  /* floating point, worded as var/std */
#define CT__RC_STD 2  /* std (with CT__RC_VAR) */
#define CT__RC_NORM 4 /* floating point, worded as linalg.vector_norm; attrs: ord, dims */
#define CT__RC_ANY 8  /* any (else all) */

/* A norm of negative or infinite order (attrs[0]) has no identity: it cannot reduce an empty
   dim (dims in attrs[1]; none: all elements). */
static bool ct__norm_identity_check(ct_op_call *c, unsigned mask)
{
    const ct_tensor *t = c->inputs[0];
    double ord = c->attrs[0].f;
    if (!(ord < 0 || isinf(ord))) {
        return true;
    }
    if (c->attrs[1].i == 0 && ct_numel(t) == 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "linalg.vector_norm cannot compute the %g norm on an empty "
                 "tensor because the operation does not have an identity", ord);
        return false;
    }
    for (int d = 0; d < t->ndim; d++) {
        if ((mask & (1u << d)) && t->sizes[d] == 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "linalg.vector_norm cannot compute the %g norm on the "
                     "dimension %dbecause this dimension is empty and the operation does not "
                     "have an identity", ord, d);
            return false;
        }
    }
    return true;
}

/* Meta of the composite reductions: checks the dims (attrs[0], or attrs[1] after a norm's
   ord; none or empty: all) and the dtype, and counts the reduced elements (c->state). */
static bool ct__red_composite_meta(ct_op_call *c)
{
    ct__sum_state *s = (ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    int var = c->op->variant, ia = var & CT__RC_NORM ? 1 : 0;
    bool has = c->n_attrs > ia;
    if (!ct__dims_mask(c->fn, t, has ? c->attrs[ia].ints : NULL, has ? (int)c->attrs[ia].i : 0,
                       &s->mask)) {
        return false;
    }
    s->count = ct__red_count(t, s->mask);
    c->dtype = t->dtype;
    if ((var & (CT__RC_VAR | CT__RC_NORM)) && !ct_dtype_is_floating_point(t->dtype)) {
        if (var & CT__RC_NORM) {
            ct__fail(CT_ERR_DTYPE, c->fn, "linalg.vector_norm: Expected a floating point or "
                     "complex tensor as input. Got %s", ct__dtype_title(t->dtype));
        } else {
            ct__fail(CT_ERR_DTYPE, c->fn, "std and var only support floating point and "
                     "complex dtypes");
        }
        return false;
    }
    return !(var & CT__RC_NORM) || ct__norm_identity_check(c, s->mask);
}

/* The dims (attrs[k]; none: all) of a composite reduction. */
static const int64_t *ct__attr_dims(const ct_op_call *c, int k, int *n)
{
    *n = c->n_attrs > k ? (int)c->attrs[k].i : 0;
    return c->n_attrs > k ? c->attrs[k].ints : NULL;
}

/* log(sum(exp(x - m))) + m with m the detached amax (0 where infinite); float for integers */
static ct_status ct__logsumexp_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    bool keepdim = c->attrs[1].i != 0;
    ct_scope_begin();
    const ct_tensor *x = ct_dtype_is_floating_point(t->dtype)
                             ? t
                             : ct_to_dtype(t, ct_get_default_dtype());
    ct_tensor *r;
    if (ct_numel(t) == 0) {
        r = ct_log(ct_sum_dims(ct_exp(x), dims, n, keepdim));
    } else {
        ct_tensor *m = ct_detach(ct_amax(x, dims, n, true));
        m = ct_where(ct_eq_scalar(ct_abs(m), INFINITY), ct_zeros_like(m), m);
        r = ct_add(ct_log(ct_sum_dims(ct_exp(ct_sub(x, m)), dims, n, keepdim)),
                   ct_sum_dims(m, dims, n, keepdim));
    }
    return ct__composite_end(c, r);
}

/* The divisor of var / std: max(0, N - correction). */
static double ct__var_divisor(const ct_op_call *c)
{
    double den = (double)((const ct__sum_state *)c->state)->count - c->attrs[1].f;
    return den > 0 ? den : 0.0;
}

/* sum((x - mean)^2) / max(0, N - correction), its square root for std. Attributes: dims,
   correction, keepdim. var's autograd comes from its ops; std has its own node (its
   gradient is 0 where the result is 0, as PyTorch's), so it computes without grad. */
static ct_status ct__var_composite(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    bool std = (c->op->variant & CT__RC_STD) != 0;
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    if (std) {
        ct_no_grad_begin();
    }
    ct_scope_begin();
    ct_tensor *d = ct__centered(t, s->mask, s->count);
    ct_tensor *r = ct_div_scalar(ct_sum_dims(ct_mul(d, d), dims, n, c->attrs[2].i != 0),
                                 ct__var_divisor(c));
    ct_status st = ct__composite_end(c, std ? ct_sqrt(r) : r);
    if (std) {
        ct_no_grad_end();
    }
    return st;
}

/* std saves the reduced dims (i[0]), N (f[0]), the divisor (f[1]), the input and result. */
static void ct__std_record(ct_node *n, const ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    n->i[0] = s->mask;
    n->f[0] = (double)s->count;
    n->f[1] = ct__var_divisor(c);
    ct__save(n, c->inputs[0]);
    ct__save_output(n, c->outputs[0]);
}

/* g * (x - mean) / (divisor * std), 0 where std is 0 */
static void ct__std_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0);
    ct_tensor *y = ct__unreduce(n, ct__saved(n, 1));
    ct_tensor *d = x ? ct__centered(x, (unsigned)n->i[0], (int64_t)n->f[0]) : NULL;
    ct_tensor *v = ct_div(ct_mul(ct__unreduce(n, g), d), ct_mul_scalar(y, n->f[1]));
    gi[0] = ct_where(ct_eq_scalar(y, 0.0), ct_zeros_like(v), v);
}

/* all: the amin of the input as bool (true for an empty reduction); any (CT__RC_ANY): the
   amax (false when empty). Attributes: dims (none: all), keepdim. Bool, uint8 for a uint8
   input (as PyTorch). */
static ct_status ct__all_composite(ct_op_call *c)
{
    const ct__sum_state *s = (const ct__sum_state *)c->state;
    const ct_tensor *t = c->inputs[0];
    bool any = (c->op->variant & CT__RC_ANY) != 0;
    int n;
    const int64_t *dims = ct__attr_dims(c, 0, &n);
    bool keepdim = n > 0 && c->attrs[1].i;
    ct_scope_begin();
    ct_tensor *r;
    if (s->count == 0) {
        int64_t shape[CT_MAX_DIMS];
        int nd = ct__reduced_shape(t, s->mask, keepdim, shape);
        r = ct_full(shape, nd, any ? 0.0 : 1.0, CT_BOOL);
    } else {
        ct_tensor *b = ct_to_dtype(t, CT_BOOL);
        r = any ? ct_amax(b, dims, n, keepdim) : ct_amin(b, dims, n, keepdim);
    }
    return ct__composite_end(c, t->dtype == CT_UINT8 ? ct_to_dtype(r, CT_UINT8) : r);
}

/* s^(1/ord) (sqrt for 2) with a 0 gradient where s is 0 (PyTorch's norm_backward) */
static ct_tensor *ct__norm_root(ct_tensor *s, double ord)
{
    ct_tensor *zero = ct_eq_scalar(s, 0.0), *z = ct_zeros_like(s);
    ct_tensor *safe = ct_where(zero, ct_add_scalar(z, 1.0), s);
    return ct_where(zero, z, ord == 2 ? ct_sqrt(safe) : ct_pow_scalar(safe, 1.0 / ord));
}

/* vector norm of order attrs[0] over dims attrs[1], keepdim attrs[2] */
static ct_status ct__vector_norm_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    double ord = c->attrs[0].f;
    int n;
    const int64_t *dims = ct__attr_dims(c, 1, &n);
    bool keepdim = c->attrs[2].i != 0;
    ct_scope_begin();
    ct_tensor *a = ct_abs(t), *r;
    if (isinf(ord)) {
        r = ord > 0 ? ct_amax(a, dims, n, keepdim) : ct_amin(a, dims, n, keepdim);
    } else if (ord == 0) {
        r = ct_sum_dims(ct_to_dtype(ct_logical_not(ct_logical_not(t)), t->dtype), dims, n,
                        keepdim);
    } else if (ord == 1) {
        r = ct_sum_dims(a, dims, n, keepdim);
    } else {
        r = ct__norm_root(ord == 2 ? ct_sum_dims(ct_mul(t, t), dims, n, keepdim)
                                   : ct_sum_dims(ct_pow_scalar(a, ord), dims, n, keepdim),
                          ord);
    }
    return ct__composite_end(c, r);
}

/* isclose over the broadcast inputs, then all (0-dim bool). Attributes: rtol, atol,
   equal_nan. Error: CT_ERR_DTYPE when the dtypes differ ("Float did not match Double"). */
static bool ct__allclose_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    c->dtype = a->dtype;
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "%s did not match %s", ct__dtype_title(a->dtype),
                 ct__dtype_title(b->dtype));
        return false;
    }
    return true;
}

static ct_status ct__allclose_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    double rtol = c->attrs[0].f, atol = c->attrs[1].f;
    ct_scope_begin();
    ct_tensor *err = ct_abs(ct_sub(a, b));
    ct_tensor *near = ct_logical_and(ct_lt_scalar(err, INFINITY),
                                     ct_le(err, ct_add_scalar(ct_mul_scalar(ct_abs(b), rtol),
                                                              atol)));
    ct_tensor *close = ct_logical_or(ct_eq(a, b), near);
    if (c->attrs[2].i) {
        close = ct_logical_or(close, ct_logical_and(ct_ne(a, a), ct_ne(b, b)));
    }
    return ct__composite_end(c, ct_all(close));
}

/* same sizes and equal elements (0-dim bool) */
static ct_status ct__equal_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    bool same = a->ndim == b->ndim &&
                !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim);
    ct_scope_begin();
    return ct__composite_end(c, same ? ct_all(ct_eq(a, b)) : ct_zeros(NULL, 0, CT_BOOL));
}

/* ---- descriptors ------------------------------------------------------------------------ */
#define CT__REDUCTION(SYM, NAME, SCHEMA, API, VAR, META, K, NODE, BW, SAVE, RECORD)            \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_REDUCTION, CT_AUTOCAST_NONE,    \
                                       VAR, 0u, NULL, META, K, NULL, NODE, BW, SAVE, RECORD,    \
                                       NULL};
CT__REDUCTION(sum, "aten::sum", "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
              "ct_sum", 0, ct__sum_meta, CT__K_ALL(ct__sum_kernel), "SumBackward0",
              ct__sum_backward, 0u, ct__sum_record)
CT__REDUCTION(sum_dim, "aten::sum", "sum.dim_IntList(Tensor self, int[1]? dim, bool "
              "keepdim=False, *, ScalarType? dtype=None) -> Tensor", "ct_sum_dim ct_sum_dims",
              0, ct__sum_meta, CT__K_ALL(ct__sum_kernel), "SumBackward1", ct__sum_backward, 0u,
              ct__sum_record)
CT__REDUCTION(mean, "aten::mean", "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
              "ct_mean", 1, ct__sum_meta, CT__K_FLOAT(ct__sum_kernel), "MeanBackward0",
              ct__mean_backward, 0u, ct__sum_record)
CT__REDUCTION(mean_dim, "aten::mean", "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, "
              "*, ScalarType? dtype=None) -> Tensor", "ct_mean_dim", 1, ct__sum_meta,
              CT__K_FLOAT(ct__sum_kernel), "MeanBackward1", ct__mean_backward, 0u,
              ct__sum_record)
CT__REDUCTION(max, "aten::max", "max(Tensor self) -> Tensor", "ct_max", 0, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), "MaxBackward1", ct__minmax_all_backward,
              (1u << 0) | (1u << 8), NULL)
CT__REDUCTION(min, "aten::min", "min(Tensor self) -> Tensor", "ct_min", CT__MM_MIN,
              ct__minmax_meta, CT__K_ALL(ct__minmax_kernel), "MinBackward1",
              ct__minmax_all_backward, (1u << 0) | (1u << 8), NULL)
CT__REDUCTION(max_dim, "aten::max", "max.dim(Tensor self, int dim, bool keepdim=False) -> "
              "(Tensor values, Tensor indices)", "ct_max_dim", 0, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), "MaxBackward0", ct__select_index_backward, 0u,
              ct__minmax_dim_record)
CT__REDUCTION(min_dim, "aten::min", "min.dim(Tensor self, int dim, bool keepdim=False) -> "
              "(Tensor values, Tensor indices)", "ct_min_dim", CT__MM_MIN,
              ct__minmax_meta, CT__K_ALL(ct__minmax_kernel), "MinBackward0",
              ct__select_index_backward, 0u, ct__minmax_dim_record)
CT__REDUCTION(argmax, "aten::argmax", "argmax(Tensor self, int? dim=None, bool keepdim=False) "
              "-> Tensor", "ct_argmax ct_argmax_dim", CT__MM_ARG, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), NULL, NULL, 0u, NULL)
CT__REDUCTION(argmin, "aten::argmin", "argmin(Tensor self, int? dim=None, bool keepdim=False) "
              "-> Tensor", "ct_argmin ct_argmin_dim", CT__MM_ARG | CT__MM_MIN, ct__minmax_meta,
              CT__K_ALL(ct__minmax_kernel), NULL, NULL, 0u, NULL)
CT__REDUCTION(amax, "aten::amax", "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> "
              "Tensor", "ct_amax", 0, ct__amax_meta, CT__K_ALL(ct__amax_kernel), "AmaxBackward0",
              ct__amax_backward, 0u, ct__amax_record)
CT__REDUCTION(amin, "aten::amin", "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> "
              "Tensor", "ct_amin", 1, ct__amax_meta, CT__K_ALL(ct__amax_kernel), "AminBackward0",
              ct__amax_backward, 0u, ct__amax_record)
#undef CT__REDUCTION
/* composites: autograd comes from the ops they are built from */
#define CT__RED_COMPOSITE(SYM, NAME, SCHEMA, API, VAR, META, COMPOSITE)                        \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_REDUCTION, CT_AUTOCAST_NONE,    \
                                       VAR, 0u, NULL, META, CT__K_NONE, COMPOSITE, NULL, NULL,  \
                                       0u, NULL, NULL};
CT__RED_COMPOSITE(logsumexp, "aten::logsumexp", "logsumexp(Tensor self, int[1] dim, bool "
                  "keepdim=False) -> Tensor", "ct_logsumexp", 0, ct__red_composite_meta,
                  ct__logsumexp_composite)
CT__RED_COMPOSITE(var, "aten::var", "var.correction(Tensor self, int[1]? dim=None, *, Scalar? "
                  "correction=None, bool keepdim=False) -> Tensor", "ct_var ct_var_dim",
                  CT__RC_VAR, ct__red_composite_meta, ct__var_composite)
static const ct_op ct__op_std = {"aten::std", "std.correction(Tensor self, int[1]? dim=None, *, "
                                 "Scalar? correction=None, bool keepdim=False) -> Tensor",
                                 "ct_std ct_std_dim", CT_OP_REDUCTION, CT_AUTOCAST_NONE,
                                 CT__RC_VAR | CT__RC_STD, 0u, NULL, ct__red_composite_meta,
                                 CT__K_NONE, ct__var_composite, "StdBackward0",
                                 ct__std_backward, 0u, ct__std_record, NULL};
CT__RED_COMPOSITE(all, "aten::all", "all(Tensor self) -> Tensor", "ct_all", 0,
                  ct__red_composite_meta, ct__all_composite)
CT__RED_COMPOSITE(all_dim, "aten::all", "all.dim(Tensor self, int dim, bool keepdim=False) -> "
                  "Tensor", "ct_all_dim", 0, ct__red_composite_meta, ct__all_composite)
CT__RED_COMPOSITE(any, "aten::any", "any(Tensor self) -> Tensor", "ct_any", CT__RC_ANY,
                  ct__red_composite_meta, ct__all_composite)
CT__RED_COMPOSITE(any_dim, "aten::any", "any.dim(Tensor self, int dim, bool keepdim=False) -> "
                  "Tensor", "ct_any_dim", CT__RC_ANY, ct__red_composite_meta,
                  ct__all_composite)
CT__RED_COMPOSITE(linalg_vector_norm, "aten::linalg_vector_norm", "linalg_vector_norm(Tensor "
                  "self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
                  "dtype=None) -> Tensor", "ct_linalg_vector_norm", CT__RC_NORM,
                  ct__red_composite_meta, ct__vector_norm_composite)
CT__RED_COMPOSITE(allclose, "aten::allclose", "allclose(Tensor self, Tensor other, float "
                  "rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool", "ct_allclose",
                  0, ct__allclose_meta, ct__allclose_composite)
CT__RED_COMPOSITE(equal, "aten::equal", "equal(Tensor self, Tensor other) -> bool", "ct_equal",
                  0, NULL, ct__equal_composite)
#undef CT__RED_COMPOSITE
static const ct_op ct__op_sum_to_size = {"aten::sum_to_size", "sum_to_size(Tensor self, SymInt[] "
                                         "size) -> Tensor", "ct_sum_to_size", CT_OP_REDUCTION,
                                         CT_AUTOCAST_NONE, 0, 0u, NULL, ct__sum_to_size_meta,
                                         CT__K_NONE, ct__sum_to_size_composite, NULL, NULL, 0u,
                                         NULL, NULL};

/* ---- public functions ---------------------------------------------------------------------- */
/* A sum or mean over n dims (NULL: none, all reduced). */
static ct_tensor *ct__call_sum(const ct_op *op, const char *fn, const ct_tensor *t,
                               bool dim_form, const int64_t *dims, int n, bool keepdim)
{
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (dim_form) {
        ct__call_ints(&c, dims, n);
        ct__call_i(&c, keepdim);
    }
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_sum(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_sum, "ct_sum", t, false, NULL, 0, false);
}

ct_tensor *ct_sum_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_sum_dim, "ct_sum", t, true, &dim, 1, keepdim);
}

ct_tensor *ct_sum_dims(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    if (n > 0 && ct__null("ct_sum", dims)) {
        return NULL;
    }
    return ct__call_sum(&ct__op_sum_dim, "ct_sum", t, true, dims, n, keepdim);
}

ct_tensor *ct_mean(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_mean, "ct_mean", t, false, NULL, 0, false);
}

ct_tensor *ct_mean_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_mean_dim, "ct_mean", t, true, &dim, 1, keepdim);
}

ct_tensor *ct_sum_to_size(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *fn = "ct_sum_to_size";
    if (ndim > 0 && ct__null(fn, sizes)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__sum_to_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_sum_to_size, fn, in, 1);
    ct__call_ints(&c, sizes, ndim);
    c.state = &s;
    return ct__dispatch(&c);
}

/* A max/min/argmax/argmin over dim (all elements when the op has no dim form). */
static ct_op_call *ct__call_minmax(ct_op_call *c, ct__minmax_state *s, const ct_tensor **in,
                                   const ct_op *op, const char *fn, bool dim_form, int64_t dim,
                                   bool keepdim)
{
    ct__call_init(c, op, fn, in, 1);
    if (dim_form) {
        ct__call_i(c, dim);
        ct__call_i(c, keepdim);
    }
    c->state = s;
    return c;
}

static ct_tensor *ct__minmax(const ct_op *op, const char *fn, const ct_tensor *t, bool dim_form,
                             int64_t dim, bool keepdim)
{
    const ct_tensor *in[1] = {t};
    ct__minmax_state s;
    ct_op_call c;
    return ct__dispatch(ct__call_minmax(&c, &s, in, op, fn, dim_form, dim, keepdim));
}

/* max.dim / min.dim: values (returned by the entry) and indices (outputs[1]), both scoped;
   an output the caller does not want is freed. */
static ct_status ct__minmax_dim(const ct_op *op, const char *fn, const ct_tensor *t,
                                int64_t dim, bool keepdim, ct_tensor **values,
                                ct_tensor **indices)
{
    if (values) {
        *values = NULL;
    }
    if (indices) {
        *indices = NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__minmax_state s;
    ct_op_call c;
    ct_tensor *v = ct__dispatch(ct__call_minmax(&c, &s, in, op, fn, true, dim, keepdim));
    if (!v) {
        return ct_error_code();
    }
    if (values) {
        *values = v;
    } else {
        ct_free(v);
    }
    if (indices) {
        *indices = c.outputs[1];
    } else {
        ct_free(c.outputs[1]);
    }
    return CT_OK;
}

ct_status ct_max_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim(&ct__op_max_dim, "ct_max", t, dim, keepdim, values, indices);
}

ct_status ct_min_dim(const ct_tensor *t, int64_t dim, bool keepdim, ct_tensor **values,
                     ct_tensor **indices)
{
    return ct__minmax_dim(&ct__op_min_dim, "ct_min", t, dim, keepdim, values, indices);
}

ct_tensor *ct_argmax_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__minmax(&ct__op_argmax, "ct_argmax", t, true, dim, keepdim);
}

ct_tensor *ct_argmin_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__minmax(&ct__op_argmin, "ct_argmin", t, true, dim, keepdim);
}

ct_tensor *ct_argmax(const ct_tensor *t)
{
    return ct__minmax(&ct__op_argmax, "ct_argmax", t, false, 0, false);
}

ct_tensor *ct_argmin(const ct_tensor *t)
{
    return ct__minmax(&ct__op_argmin, "ct_argmin", t, false, 0, false);
}

ct_tensor *ct_max(const ct_tensor *t)
{
    return ct__minmax(&ct__op_max, "ct_max", t, false, 0, false);
}

ct_tensor *ct_min(const ct_tensor *t)
{
    return ct__minmax(&ct__op_min, "ct_min", t, false, 0, false);
}

/* A reduction over n dims (dims checked first) with keepdim; state: a ct__sum_state. */
static ct_tensor *ct__call_dims(const ct_op *op, const char *fn, const ct_tensor *t,
                                const int64_t *dims, int n, bool keepdim)
{
    if (n > 0 && ct__null(fn, dims)) {
        return NULL;
    }
    return ct__call_sum(op, fn, t, true, dims, n, keepdim);
}

ct_tensor *ct_amax(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_amax, "ct_amax", t, dims, n, keepdim);
}

ct_tensor *ct_amin(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_amin, "ct_amin", t, dims, n, keepdim);
}

ct_tensor *ct_logsumexp(const ct_tensor *t, const int64_t *dims, int n, bool keepdim)
{
    return ct__call_dims(&ct__op_logsumexp, "ct_logsumexp", t, dims, n, keepdim);
}

ct_tensor *ct_all(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_all, "ct_all", t, false, NULL, 0, false);
}

ct_tensor *ct_any(const ct_tensor *t)
{
    return ct__call_sum(&ct__op_any, "ct_any", t, false, NULL, 0, false);
}

ct_tensor *ct_all_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_all_dim, "ct_all", t, true, &dim, 1, keepdim);
}

ct_tensor *ct_any_dim(const ct_tensor *t, int64_t dim, bool keepdim)
{
    return ct__call_sum(&ct__op_any_dim, "ct_any", t, true, &dim, 1, keepdim);
}

/* var / std over n dims (attributes in schema order: dims, correction, keepdim) */
static ct_tensor *ct__call_var(const ct_op *op, const char *fn, const ct_tensor *t,
                               const int64_t *dims, int n, double correction, bool keepdim)
{
    if (n > 0 && ct__null(fn, dims)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_ints(&c, dims, n);
    ct__call_f(&c, correction);
    ct__call_i(&c, keepdim);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_var(const ct_tensor *t, double correction)
{
    return ct__call_var(&ct__op_var, "ct_var", t, NULL, 0, correction, false);
}

ct_tensor *ct_std(const ct_tensor *t, double correction)
{
    return ct__call_var(&ct__op_std, "ct_std", t, NULL, 0, correction, false);
}

ct_tensor *ct_var_dim(const ct_tensor *t, const int64_t *dims, int n, double correction,
                      bool keepdim)
{
    return ct__call_var(&ct__op_var, "ct_var", t, dims, n, correction, keepdim);
}

ct_tensor *ct_std_dim(const ct_tensor *t, const int64_t *dims, int n, double correction,
                      bool keepdim)
{
    return ct__call_var(&ct__op_std, "ct_std", t, dims, n, correction, keepdim);
}

ct_tensor *ct_linalg_vector_norm(const ct_tensor *t, double ord, const int64_t *dims, int n,
                                 bool keepdim)
{
    const char *fn = "ct_linalg_vector_norm";
    if (n > 0 && ct__null(fn, dims)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct__sum_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_vector_norm, fn, in, 1);
    ct__call_f(&c, ord);
    ct__call_ints(&c, dims, n);
    ct__call_i(&c, keepdim);
    c.state = &s;
    return ct__dispatch(&c);
}

/* allclose / equal: the op's 0-dim bool read back; false after an error */
static bool ct__call_bool(ct_op_call *c)
{
    ct_tensor *r = ct__dispatch(c);
    bool v = r && ct_item(r) != 0.0;
    ct_free(r);
    return v;
}

bool ct_allclose(const ct_tensor *input, const ct_tensor *other, double rtol, double atol,
                 bool equal_nan)
{
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, &ct__op_allclose, "ct_allclose", in, 2);
    ct__call_f(&c, rtol);
    ct__call_f(&c, atol);
    ct__call_i(&c, equal_nan);
    return ct__call_bool(&c);
}

bool ct_equal(const ct_tensor *input, const ct_tensor *other)
{
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, &ct__op_equal, "ct_equal", in, 2);
    return ct__call_bool(&c);
}

#undef CT__RED_BLOCK
#undef CT__SUM_FN
#undef CT__BETTER
#undef CT__BEST_LANES
#undef CT__BEST_FN
#undef CT__RED_KERNELS
#undef CT__MM_MIN
#undef CT__MM_ARG
#undef CT__RC_VAR
#undef CT__RC_STD
#undef CT__RC_NORM
#undef CT__RC_ANY

CT__VECTORIZE_END

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
 * Threads: C is split into a grid of ntm x ntn blocks (MR/NR-aligned), one per thread,
 * handed out by the intra-op pool to whichever thread is free: when a thread has not started
 * (descheduled on a busy machine), the caller computes its block too instead of waiting.
 * Each task packs its own A and B into its thread's buffers, so no barriers. (Two blocks per
 * thread packed A and B more often and measured up to 2x slower on the MLP's products.)
 * Tiny products stay serial.
 * Determinism: each element of C sums its K products in the same order (kc blocks in turn,
 * p ascending within a block) whatever the thread count, so results are bit-exact across
 * thread counts; they differ in rounding between SIMD paths (FMA) and the portable path.
 */


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
 * Thin products without packing (float32, AVX-512 only).
 *
 * For products too small to thread and thin in one dimension (e.g. an MLP's 10-class
 * logits layer: (64, 512) @ (512, 10), its gradients (10, 64) @ (64, 512) and
 * (64, 10) @ (10, 512)), or tiny altogether, packing and padding to whole MR x NR tiles cost
 * as much as the arithmetic. Two kernels read the operands in place instead:
 *   axpy form  B and C rows contiguous (csb == csc == 1): an R x 16Z tile of C (R <= 6
 *              rows, Z <= 4 zmm, masked at the right edge) accumulates A[i, p] (broadcast)
 *              times row p of B over all K, then C = alpha * acc + beta * C is stored once.
 *              C^T = B^T @ A^T takes it when A and C are column-major instead.
 *   dot form   A rows and B columns contiguous along K (csa == rsb == 1): a 4 x 4 tile of
 *              C keeps 16 zmm partial dot products over K (masked K tail), reduced by a
 *              transpose-and-add tree; any C strides.
 * Edge tiles recompute clamped rows (and, in the dot form, columns) and store only the
 * valid part. Each element sums its K products in one pass (no KC blocks), so results
 * differ from the packed path only in rounding.
 * ------------------------------------------------------------------------------------- */
#if defined(CT__GEMM_AVX512)

/* Largest product (M * N * K) taken by the thin kernels: the ones not threaded. */
#define CT__GEMM_THIN_MAX_MACS CT__GEMM_PAR_MIN_MACS

/* Keeps a loaded chunk of B in a register: gcc otherwise folds the load into each FMA
   that uses it, reloading it up to 6 times. */
#if defined(__GNUC__)
#define CT__GEMM_KEEP(v) __asm__("" : "+v"(v))
#else
#define CT__GEMM_KEEP(v) (void)0
#endif

/* Lists over the zmm columns z and rows r of an axpy tile: F(r, z), G(r, Z). */
#define CT__GEMM_AXZ1(F, r) F(r, 0)
#define CT__GEMM_AXZ2(F, r) F(r, 0) F(r, 1)
#define CT__GEMM_AXZ3(F, r) F(r, 0) F(r, 1) F(r, 2)
#define CT__GEMM_AXZ4(F, r) F(r, 0) F(r, 1) F(r, 2) F(r, 3)
#define CT__GEMM_AXR1(G, Z) G(0, Z)
#define CT__GEMM_AXR2(G, Z) G(0, Z) G(1, Z)
#define CT__GEMM_AXR4(G, Z) G(0, Z) G(1, Z) G(2, Z) G(3, Z)
#define CT__GEMM_AXR6(G, Z) G(0, Z) G(1, Z) G(2, Z) G(3, Z) G(4, Z) G(5, Z)

#define CT__GEMM_AX_ROWPTR(r, Z) const float *a##r = a + ((r) < mr ? (r) : mr - 1) * rsa;
#define CT__GEMM_AX_DECL(r, z) __m512 c##r##_##z = _mm512_setzero_ps();
#define CT__GEMM_AX_DECL_R(r, Z) CT__GEMM_AXZ##Z(CT__GEMM_AX_DECL, r)
#define CT__GEMM_AX_LD_m(k, p) _mm512_maskz_loadu_ps(k, p)
#define CT__GEMM_AX_LD_f(k, p) _mm512_loadu_ps(p)
#define CT__GEMM_AX_ST_m(p, k, v) _mm512_mask_storeu_ps(p, k, v)
#define CT__GEMM_AX_ST_f(p, k, v) _mm512_storeu_ps(p, v)
#define CT__GEMM_AX_LOADB(r, z)                                                            \
    __m512 b##z = CT__GEMM_AX_LD(k##z, bp + 16 * (z));                                     \
    CT__GEMM_KEEP(b##z);
#define CT__GEMM_AX_FMA(r, z) c##r##_##z = _mm512_fmadd_ps(av, b##z, c##r##_##z);
#define CT__GEMM_AX_FMA_R(r, Z)                                                            \
    {                                                                                      \
        __m512 av = _mm512_set1_ps(a##r[p * csa]);                                         \
        CT__GEMM_AXZ##Z(CT__GEMM_AX_FMA, r)                                                \
    }
/* stores of an accumulator x: alpha * x or x (alpha == 1), plus beta * C when beta != 0 */
#define CT__GEMM_AX_STORE0(r, z, X) CT__GEMM_AX_ST(cr + 16 * (z), k##z, X(c##r##_##z));
#define CT__GEMM_AX_STOREB(r, z, X)                                                        \
    CT__GEMM_AX_ST(cr + 16 * (z), k##z,                                                    \
                   _mm512_fmadd_ps(vb, CT__GEMM_AX_LD(k##z, cr + 16 * (z)), X(c##r##_##z)));
#define CT__GEMM_AX_ALPHA(x) _mm512_mul_ps(va, x)
#define CT__GEMM_AX_ONE(x) (x)
#define CT__GEMM_AX_ST0A(r, z) CT__GEMM_AX_STORE0(r, z, CT__GEMM_AX_ALPHA)
#define CT__GEMM_AX_ST01(r, z) CT__GEMM_AX_STORE0(r, z, CT__GEMM_AX_ONE)
#define CT__GEMM_AX_STBA(r, z) CT__GEMM_AX_STOREB(r, z, CT__GEMM_AX_ALPHA)
#define CT__GEMM_AX_STB1(r, z) CT__GEMM_AX_STOREB(r, z, CT__GEMM_AX_ONE)
#define CT__GEMM_AX_STORE_R(r, Z)                                                          \
    if ((r) < mr) {                                                                        \
        float *cr = c + (r)*rsc;                                                           \
        if (beta == 0.0f) {                                                                \
            if (alpha == 1.0f) {                                                           \
                CT__GEMM_AXZ##Z(CT__GEMM_AX_ST01, r)                                       \
            } else {                                                                       \
                CT__GEMM_AXZ##Z(CT__GEMM_AX_ST0A, r)                                       \
            }                                                                              \
        } else if (alpha == 1.0f) {                                                        \
            CT__GEMM_AXZ##Z(CT__GEMM_AX_STB1, r)                                           \
        } else {                                                                           \
            CT__GEMM_AXZ##Z(CT__GEMM_AX_STBA, r)                                           \
        }                                                                                  \
    }

/* C (mr, <= 16Z) at row stride rsc = alpha * A (mr, K) @ B (K, <= 16Z) + beta * C, for
   mr <= R; B rows rsb apart and contiguous, masked by k (one mask per zmm) in the m
   flavor, all 16Z columns valid in the f flavor (CT__GEMM_AX_LD / ST name the flavor). */
#define CT__GEMM_AX_KERNEL(R, Z, F)                                                        \
    static void ct__gemm_ax_##R##_##Z##F(int64_t mr, int64_t K, float alpha, const float *a,  \
                                      int64_t rsa, int64_t csa, const float *b,            \
                                      int64_t rsb, float beta, float *c, int64_t rsc,      \
                                      const __mmask16 *k)                                  \
    {                                                                                      \
        __mmask16 k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3];                              \
        (void)k0;                                                                          \
        (void)k1;                                                                          \
        (void)k2;                                                                          \
        (void)k3;                                                                          \
        CT__GEMM_AXR##R(CT__GEMM_AX_ROWPTR, Z)                                             \
        CT__GEMM_AXR##R(CT__GEMM_AX_DECL_R, Z)                                             \
        for (int64_t p = 0; p < K; p++) {                                                  \
            const float *bp = b + p * rsb;                                                 \
            CT__GEMM_AXZ##Z(CT__GEMM_AX_LOADB, 0)                                          \
            CT__GEMM_AXR##R(CT__GEMM_AX_FMA_R, Z)                                          \
        }                                                                                  \
        __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);                      \
        CT__GEMM_AXR##R(CT__GEMM_AX_STORE_R, Z)                                            \
    }

#define CT__GEMM_AX_LD CT__GEMM_AX_LD_m
#define CT__GEMM_AX_ST CT__GEMM_AX_ST_m
CT__GEMM_AX_KERNEL(6, 4, m)
CT__GEMM_AX_KERNEL(6, 3, m)
CT__GEMM_AX_KERNEL(6, 2, m)
CT__GEMM_AX_KERNEL(6, 1, m)
CT__GEMM_AX_KERNEL(4, 4, m)
CT__GEMM_AX_KERNEL(4, 3, m)
CT__GEMM_AX_KERNEL(4, 2, m)
CT__GEMM_AX_KERNEL(4, 1, m)
CT__GEMM_AX_KERNEL(2, 4, m)
CT__GEMM_AX_KERNEL(2, 3, m)
CT__GEMM_AX_KERNEL(2, 2, m)
CT__GEMM_AX_KERNEL(2, 1, m)
CT__GEMM_AX_KERNEL(1, 4, m)
CT__GEMM_AX_KERNEL(1, 3, m)
CT__GEMM_AX_KERNEL(1, 2, m)
CT__GEMM_AX_KERNEL(1, 1, m)
#undef CT__GEMM_AX_LD
#undef CT__GEMM_AX_ST
#define CT__GEMM_AX_LD CT__GEMM_AX_LD_f
#define CT__GEMM_AX_ST CT__GEMM_AX_ST_f
CT__GEMM_AX_KERNEL(6, 4, f)
CT__GEMM_AX_KERNEL(6, 3, f)
CT__GEMM_AX_KERNEL(4, 4, f)
CT__GEMM_AX_KERNEL(4, 3, f)
CT__GEMM_AX_KERNEL(2, 4, f)
CT__GEMM_AX_KERNEL(2, 3, f)
CT__GEMM_AX_KERNEL(1, 4, f)
CT__GEMM_AX_KERNEL(1, 3, f)
#undef CT__GEMM_AX_LD
#undef CT__GEMM_AX_ST

typedef void (*ct__gemm_ax_fn)(int64_t, int64_t, float, const float *, int64_t, int64_t,
                               const float *, int64_t, float, float *, int64_t,
                               const __mmask16 *);

/* Axpy form: C (M, N) = alpha * A (M, K) @ B (K, N) + beta * C, B and C rows contiguous. */
static void ct__gemm_thin_axpy_f32(int64_t M, int64_t N, int64_t K, float alpha,
                                   const float *A, int64_t rsa, int64_t csa, const float *B,
                                   int64_t rsb, float beta, float *C, int64_t rsc)
{
    /* [rows 6, 4, 2, 1][full 4 or 3 zmm, masked 4, 3, 2, 1 zmm] */
    static const ct__gemm_ax_fn fns[4][6] = {
        {ct__gemm_ax_6_4f, ct__gemm_ax_6_3f, ct__gemm_ax_6_4m, ct__gemm_ax_6_3m, ct__gemm_ax_6_2m, ct__gemm_ax_6_1m},
        {ct__gemm_ax_4_4f, ct__gemm_ax_4_3f, ct__gemm_ax_4_4m, ct__gemm_ax_4_3m, ct__gemm_ax_4_2m, ct__gemm_ax_4_1m},
        {ct__gemm_ax_2_4f, ct__gemm_ax_2_3f, ct__gemm_ax_2_4m, ct__gemm_ax_2_3m, ct__gemm_ax_2_2m, ct__gemm_ax_2_1m},
        {ct__gemm_ax_1_4f, ct__gemm_ax_1_3f, ct__gemm_ax_1_4m, ct__gemm_ax_1_3m, ct__gemm_ax_1_2m, ct__gemm_ax_1_1m},
    };
    /* column blocks of 64 outermost, so each (K, 64) block of B is reused from L1/L2 */
    for (int64_t j = 0; j < N; j += 64) {
        int64_t nc = CT__GEMM_MIN(64, N - j);
        __mmask16 k[4];
        for (int z = 0; z < 4; z++) {
            int64_t rem = nc - 16 * z;
            k[z] = rem >= 16 ? (__mmask16)0xFFFF
                             : rem > 0 ? (__mmask16)((1u << rem) - 1u) : (__mmask16)0;
        }
        int zi = nc == 64 ? 0 : nc == 48 ? 1 : nc > 48 ? 2 : nc > 32 ? 3 : nc > 16 ? 4 : 5;
        for (int64_t i = 0; i < M;) {
            int64_t mr = CT__GEMM_MIN(6, M - i);
            int ri = mr >= 5 ? 0 : mr >= 3 ? 1 : mr == 2 ? 2 : 3;
            fns[ri][zi](mr, K, alpha, A + i * rsa, rsa, csa, B + j, rsb, beta,
                        C + i * rsc + j, rsc, k);
            i += mr;
        }
    }
}

/* Dot form: C (M, N) at (rsc, csc) = alpha * A (M, K) @ B (K, N) + beta * C, A rows and
   B columns contiguous (csa == rsb == 1); 4 x 5 tiles (20 accumulators c<r><s>). */
#define CT__GEMM_DOT5(F, r) F(r, 0) F(r, 1) F(r, 2) F(r, 3) F(r, 4)
#define CT__GEMM_DOT_TILE(F) CT__GEMM_DOT5(F, 0) CT__GEMM_DOT5(F, 1) CT__GEMM_DOT5(F, 2) CT__GEMM_DOT5(F, 3)
#define CT__GEMM_DOT_DECL(r, s) __m512 c##r##s = _mm512_setzero_ps();
#define CT__GEMM_DOT_FMA(r, s) c##r##s = _mm512_fmadd_ps(va##r, vb##s, c##r##s);
/* The reduction shuffles are the zero-masking forms with all lanes set: the plain ones
   trip g++ 12's -Wmaybe-uninitialized inside its own headers (_mm512_undefined_ps). */
#define CT__GEMM_DOT_ALL ((__mmask16)0xFFFF)
/* (u, v) -> per 128-bit lane [u0 + u2, v0 + v2, u1 + u3, v1 + v3] */
#define CT__GEMM_DOT_PAIR(u, v)                                                            \
    _mm512_add_ps(_mm512_maskz_unpacklo_ps(CT__GEMM_DOT_ALL, u, v),                        \
                  _mm512_maskz_unpackhi_ps(CT__GEMM_DOT_ALL, u, v))
/* two pairs -> per 128-bit lane the partial sums of the 4 vectors, in order */
#define CT__GEMM_DOT_QUAD(s, t)                                                            \
    _mm512_add_ps(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd((__mmask8)0xFF,                 \
                                                            _mm512_castps_pd(s),           \
                                                            _mm512_castps_pd(t))),         \
                  _mm512_castpd_ps(_mm512_maskz_unpackhi_pd((__mmask8)0xFF,                 \
                                                            _mm512_castps_pd(s),           \
                                                            _mm512_castps_pd(t))))
/* two quads -> [lanes 0+1 of x, lanes 2+3 of x, lanes 0+1 of y, lanes 2+3 of y] */
#define CT__GEMM_DOT_LANES(x, y)                                                           \
    _mm512_add_ps(_mm512_maskz_shuffle_f32x4(CT__GEMM_DOT_ALL, x, y, 0x88),                \
                  _mm512_maskz_shuffle_f32x4(CT__GEMM_DOT_ALL, x, y, 0xDD))
#define CT__GEMM_DOT_ROWQ(r)                                                               \
    CT__GEMM_DOT_QUAD(CT__GEMM_DOT_PAIR(c##r##0, c##r##1), CT__GEMM_DOT_PAIR(c##r##2, c##r##3))
#define CT__GEMM_DOT_PTR(x, base, i, n, s, ld)                                             \
    const float *x##s = base + ((i) + CT__GEMM_MIN(s, (n)-1)) * (ld);
#define CT__GEMM_DOT_LOADS(LOAD)                                                           \
    __m512 va0 = LOAD(a0), va1 = LOAD(a1), va2 = LOAD(a2), va3 = LOAD(a3);                 \
    __m512 vb0 = LOAD(b0), vb1 = LOAD(b1), vb2 = LOAD(b2), vb3 = LOAD(b3), vb4 = LOAD(b4); \
    CT__GEMM_KEEP(vb0);                                                                \
    CT__GEMM_KEEP(vb1);                                                                \
    CT__GEMM_KEEP(vb2);                                                                \
    CT__GEMM_KEEP(vb3);                                                                \
    CT__GEMM_KEEP(vb4);
#define CT__GEMM_DOT_LOAD(x) _mm512_loadu_ps(x + p)
#define CT__GEMM_DOT_LOADT(x) _mm512_maskz_loadu_ps(kt, x + kfull)

static void ct__gemm_thin_dot_f32(int64_t M, int64_t N, int64_t K, float alpha,
                                  const float *A, int64_t rsa, const float *B, int64_t csb,
                                  float beta, float *C, int64_t rsc, int64_t csc)
{
    int64_t kfull = K & ~(int64_t)15;
    __mmask16 kt = (__mmask16)((1u << (K - kfull)) - 1u);
    __m512 valpha = _mm512_set1_ps(alpha), vbeta = _mm512_set1_ps(beta);
    const __m512i idx[4] = {
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 3, 2, 1, 0),
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 17, 7, 6, 5, 4),
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 18, 11, 10, 9, 8),
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 19, 15, 14, 13, 12),
    };
    for (int64_t i = 0; i < M; i += 4) {
        int64_t mr = CT__GEMM_MIN(4, M - i);
        CT__GEMM_DOT_PTR(a, A, i, mr, 0, rsa)
        CT__GEMM_DOT_PTR(a, A, i, mr, 1, rsa)
        CT__GEMM_DOT_PTR(a, A, i, mr, 2, rsa)
        CT__GEMM_DOT_PTR(a, A, i, mr, 3, rsa)
        for (int64_t j = 0; j < N; j += 5) {
            int64_t nr = CT__GEMM_MIN(5, N - j);
            CT__GEMM_DOT_PTR(b, B, j, nr, 0, csb)
            CT__GEMM_DOT_PTR(b, B, j, nr, 1, csb)
            CT__GEMM_DOT_PTR(b, B, j, nr, 2, csb)
            CT__GEMM_DOT_PTR(b, B, j, nr, 3, csb)
            CT__GEMM_DOT_PTR(b, B, j, nr, 4, csb)
            CT__GEMM_DOT_TILE(CT__GEMM_DOT_DECL)
            for (int64_t p = 0; p < kfull; p += 16) {
                CT__GEMM_DOT_LOADS(CT__GEMM_DOT_LOAD)
                CT__GEMM_DOT_TILE(CT__GEMM_DOT_FMA)
            }
            if (kfull < K) {
                CT__GEMM_DOT_LOADS(CT__GEMM_DOT_LOADT)
                CT__GEMM_DOT_TILE(CT__GEMM_DOT_FMA)
            }
            /* r1 lane 4r + s = alpha * sum of c<r><s> for s < 4, r2 lane r for s = 4 */
            __m512 h0 = CT__GEMM_DOT_LANES(CT__GEMM_DOT_ROWQ(0), CT__GEMM_DOT_ROWQ(1));
            __m512 h1 = CT__GEMM_DOT_LANES(CT__GEMM_DOT_ROWQ(2), CT__GEMM_DOT_ROWQ(3));
            __m512 r1 = _mm512_mul_ps(valpha, CT__GEMM_DOT_LANES(h0, h1));
            __m512 r2 = CT__GEMM_DOT_QUAD(CT__GEMM_DOT_PAIR(c04, c14), CT__GEMM_DOT_PAIR(c24, c34));
            r2 = CT__GEMM_DOT_LANES(r2, r2);
            r2 = _mm512_mul_ps(valpha, CT__GEMM_DOT_LANES(r2, r2));
            if (csc == 1) {
                /* row r: lanes 4r .. 4r + 3 of r1 and lane r of r2, nr of them */
                __mmask16 kn = (__mmask16)((1u << nr) - 1u);
                for (int64_t r = 0; r < mr; r++) {
                    float *cr = C + (i + r) * rsc + j;
                    __m512 v = _mm512_permutex2var_ps(r1, idx[r], r2);
                    if (beta != 0.0f) {
                        v = _mm512_fmadd_ps(vbeta, _mm512_maskz_loadu_ps(kn, cr), v);
                    }
                    _mm512_mask_storeu_ps(cr, kn, v);
                }
                continue;
            }
            float out[32];
            _mm512_storeu_ps(out, r1);
            _mm512_storeu_ps(out + 16, r2);
            for (int64_t r = 0; r < mr; r++) {
                float *cr = C + (i + r) * rsc + j * csc;
                for (int64_t s = 0; s < nr; s++) {
                    float v = s < 4 ? out[4 * r + s] : out[16 + r];
                    cr[s * csc] = beta == 0.0f ? v : v + beta * cr[s * csc];
                }
            }
        }
    }
}

/* Takes C = alpha * A @ B + beta * C when a thin kernel fits the shape and strides:
   products too small to thread, the axpy form when its strides fit (it beats packing up
   to there), else the dot form when M or N is below 16 (where packing pads most). */
static int ct__gemm_thin_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                             int64_t rsa, int64_t csa, const float *B, int64_t rsb,
                             int64_t csb, float beta, float *C, int64_t rsc, int64_t csc)
{
    if (M * N * K >= CT__GEMM_THIN_MAX_MACS) {
        return 0;
    }
    int dot = csa == 1 && rsb == 1 && K >= 32;
    if (dot && N < 16) {
        /* the axpy form would fill under N / 16 of each zmm */
        ct__gemm_thin_dot_f32(M, N, K, alpha, A, rsa, B, csb, beta, C, rsc, csc);
        return 1;
    }
    if (csb == 1 && csc == 1) {
        ct__gemm_thin_axpy_f32(M, N, K, alpha, A, rsa, csa, B, rsb, beta, C, rsc);
        return 1;
    }
    if (rsa == 1 && rsc == 1) {
        /* C^T (N, M) = B^T (N, K) @ A^T (K, M) */
        ct__gemm_thin_axpy_f32(N, M, K, alpha, B, csb, rsb, A, csa, beta, C, csc);
        return 1;
    }
    if (dot && M < 16) {
        ct__gemm_thin_dot_f32(M, N, K, alpha, A, rsa, B, csb, beta, C, rsc, csc);
        return 1;
    }
    return 0;
}

#define CT__GEMM_THIN_f32                                                                  \
    if (ct__gemm_thin_f32(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc)) {  \
        return;                                                                            \
    }
#else
#define CT__GEMM_THIN_f32
#endif
#define CT__GEMM_THIN_f64

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

/* Picks the block grid ntm x ntn == nt that minimizes the padded work of the largest block
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

/* Start of part t of n split into nt parts in whole units. */
static int64_t ct__gemm_split(int64_t n, int64_t unit, int t, int nt)
{
    int64_t units = CT__GEMM_CEIL(n, unit);
    int64_t at = units * t / nt * unit;
    return CT__GEMM_MIN(at, n);
}

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
    /* A threaded product: C (M, N) in an ntm x ntn grid of blocks; buffers of             \
       per_thread elements per slot, the A block first, the B panel at b_off. */           \
    typedef struct {                                                                       \
        int64_t M, N, K, rsa, csa, rsb, csb, rsc, csc;                                     \
        T alpha, beta;                                                                     \
        const T *A, *B;                                                                    \
        T *C, *buf;                                                                        \
        size_t per_thread, b_off;                                                          \
        int ntm, ntn;                                                                      \
    } ct__gemm_job_##S;                                                                    \
                                                                                           \
    /* Task `task` of the grid (row-major): its block of C, with slot's buffers. */        \
    static void ct__gemm_task_##S(int64_t task, int slot, void *ctx)                       \
    {                                                                                      \
        const ct__gemm_job_##S *j = (const ct__gemm_job_##S *)ctx;                         \
        const int64_t MR = CT__GEMM_MR_##S, NR = CT__GEMM_NR_##S;                          \
        int tm = (int)(task / j->ntn), tn = (int)(task % j->ntn);                          \
        int64_t m0 = ct__gemm_split(j->M, MR, tm, j->ntm);                                 \
        int64_t m1 = ct__gemm_split(j->M, MR, tm + 1, j->ntm);                             \
        int64_t n0 = ct__gemm_split(j->N, NR, tn, j->ntn);                                 \
        int64_t n1 = ct__gemm_split(j->N, NR, tn + 1, j->ntn);                             \
        T *ap = j->buf + j->per_thread * (size_t)slot;                                     \
        if (m1 > m0 && n1 > n0) {                                                          \
            ct__gemm_blocked_##S(m1 - m0, n1 - n0, j->K, j->alpha, j->A + m0 * j->rsa,     \
                                 j->rsa, j->csa, j->B + n0 * j->csb, j->rsb, j->csb,       \
                                 j->beta, j->C + m0 * j->rsc + n0 * j->csc, j->rsc,        \
                                 j->csc, ap, ap + j->b_off);                               \
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
        CT__GEMM_THIN_##S                                                                  \
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
        int nt = M * N * K >= CT__GEMM_PAR_MIN_MACS ? ct__parallel_threads() : 1;          \
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
        ct__gemm_job_##S j = {M, N, K, rsa, csa, rsb, csb, rsc, csc, alpha, beta, A, B, C, \
                              buf, per_thread, CT__GEMM_ROUND_UP(a_len, (size_t)16), 1, 1}; \
        ct__gemm_grid(M, N, nt, MR, NR, &j.ntm, &j.ntn);                                   \
        ct__parallel_tasks((int64_t)j.ntm * j.ntn, nt, ct__gemm_task_##S, &j);             \
        ct__free(buf);                                                                     \
    }

CT__GEMM_DEFINE(float, f32)
CT__GEMM_DEFINE(double, f64)

#undef CT__GEMM_DEFINE
#undef CT__GEMM_THIN_f32
#undef CT__GEMM_THIN_f64
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
        ct__gemm_f32(M, N, K, (float)alpha, (const float *)ct__data(a), a->strides[0],
                     a->strides[1], (const float *)ct__data(b), b->strides[0], b->strides[1],
                     (float)beta, (float *)ct__data(c), c->strides[0], c->strides[1]);
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

/* Both operands of one float dtype. */
static bool ct__check_mat(const char *op, const ct_tensor *a, const ct_tensor *b)
{
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

/* The number of elements of the broadcast batch dims (all but the last two) of a and b. */
static double ct__batch_numel(const ct_tensor *a, const ct_tensor *b)
{
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0;
    double n = 1;
    for (int k = 0; k < (na > nb ? na : nb); k++) {
        int64_t sa = k < na ? a->sizes[na - 1 - k] : 1, sb = k < nb ? b->sizes[nb - 1 - k] : 1;
        n *= (double)(sa > sb ? sa : sb);
    }
    return n;
}

/* 2 M N K for a (.., M, K) @ b (.., K, N), times the broadcast batch; a 1-D a is (1, K), a
   1-D b (K, 1). The GEMM ops' floating point operations (the profiler's with_flops). */
static double ct__gemm_flops(const ct_tensor *a, const ct_tensor *b)
{
    double M = a->ndim >= 2 ? (double)a->sizes[a->ndim - 2] : 1;
    double K = a->ndim >= 1 ? (double)a->sizes[a->ndim - 1] : 1;
    double N = b->ndim >= 2 ? (double)b->sizes[b->ndim - 1] : 1;
    return 2 * M * N * K * ct__batch_numel(a, b);
}

static double ct__flops_01(const ct_op_call *c)
{
    return ct__gemm_flops(c->inputs[0], c->inputs[1]);
}

static double ct__flops_12(const ct_op_call *c)
{
    return ct__gemm_flops(c->inputs[1], c->inputs[2]);
}

/* x (*, in) @ W^T: 2 N out in, N the rows of x */
static double ct__linear_flops(const ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    double rows = 1;
    for (int k = 0; k + 1 < x->ndim; k++) {
        rows *= (double)x->sizes[k];
    }
    return 2 * rows * (double)w->sizes[0] * (double)w->sizes[1];
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

/* Saves A where dB is needed and B where dA is (inputs k and k + 1 of the call). */
static void ct__save_operands(ct_node *n, const ct_op_call *c, int k)
{
    ct__save(n, ct__needs_grad(n, k + 1) ? c->inputs[k] : NULL);
    ct__save(n, ct__needs_grad(n, k) ? c->inputs[k + 1] : NULL);
}

static void ct__mm_record(ct_node *n, const ct_op_call *c)
{
    ct__save_operands(n, c, 0);
}

static bool ct__check_mm_shapes(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (a->ndim != 2 || b->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, op, "%s must be a matrix", a->ndim != 2 ? "self" : "mat2");
        return false;
    }
    if (a->sizes[1] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)",
                 (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0],
                 (long long)b->sizes[1]);
        return false;
    }
    return true;
}

static bool ct__mm_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b) || !ct__check_mm_shapes(c->fn, a, b)) {
        return false;
    }
    int64_t shape[2] = {a->sizes[0], b->sizes[1]};
    c->dtype = a->dtype;
    return ct__op_output(c, shape, 2, a->dtype) != NULL;
}

static ct_status ct__mm_kernel(ct_op_call *c)
{
    ct__gemm(c->inputs[0], c->inputs[1], c->outputs[0], 1.0, 0.0);
    return CT_OK;
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

static void ct__addmm_record(ct_node *n, const ct_op_call *c)
{
    n->f[0] = c->attrs[0].f;
    n->f[1] = c->attrs[1].f;
    ct__save_operands(n, c, 1);
}

/* Inputs: input, mat1, mat2; attributes: beta, alpha. input broadcasts to (n, p). */
static bool ct__addmm_meta(ct_op_call *c)
{
    const ct_tensor *input = c->inputs[0], *a = c->inputs[1], *b = c->inputs[2];
    if (!ct__check_mat(c->fn, a, b) || !ct__check_mm_shapes(c->fn, a, b) ||
        !ct__check_mat(c->fn, input, a)) {
        return false;
    }
    int64_t shape[2] = {a->sizes[0], b->sizes[1]}, bs[CT_MAX_DIMS];
    int bn = 0;
    if (input->ndim > 2 ||
        !ct__broadcast_shapes(c->fn, input->sizes, input->ndim, shape, 2, bs, &bn) ||
        bs[0] != shape[0] || bs[1] != shape[1]) {
        char x[160];
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "The expanded size of the tensor must match: input %s cannot "
                 "broadcast to [%lld, %lld]",
                 ct__shape_str(input->sizes, input->ndim, x, sizeof x), (long long)shape[0],
                 (long long)shape[1]);
        return false;
    }
    c->dtype = a->dtype;
    return ct__op_output(c, shape, 2, a->dtype) != NULL;
}

static ct_status ct__addmm_kernel(ct_op_call *c)
{
    double beta = c->attrs[0].f, alpha = c->attrs[1].f;
    ct_tensor *out = c->outputs[0];
    if (beta != 0) { /* C = input (broadcast), then C = alpha*A@B + beta*C */
        ct__copy_kernel(out, c->inputs[0]);
    }
    ct__gemm(c->inputs[1], c->inputs[2], out, alpha, beta);
    return CT_OK;
}

/* Linear on x (*, in) seen as x2 (N, in), g as g2 (N, out): dX = g2 @ W, dW = g2^T @ x2
   (contiguous like W), db = sum(g2, 0). */
static void ct__linear_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *w = ct__saved(n, 1);
    const ct__edge *e = &n->next[0];
    if (n->i[0]) { /* fused ReLU: mask g by the saved output first */
        g = ct__threshold_backward(g, ct__saved(n, 2));
        if (!g) {
            return;
        }
    }
    if (e->ndim != 2) { /* (*, in) as rows */
        int64_t rows[2] = {ct__numel(e->sizes, e->ndim - 1), g->sizes[g->ndim - 1]};
        g = ct_reshape(g, rows, 2);
        rows[1] = e->sizes[e->ndim - 1];
        x = x ? ct_reshape(x, rows, 2) : NULL;
    }
    if (ct__needs_grad(n, 0)) {
        ct_tensor *dx = ct_mm(g, w);
        gi[0] = e->ndim != 2 ? ct_reshape(dx, e->sizes, e->ndim) : dx;
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mm(ct_t(g), x);
    }
    if (n->n_next > 2 && ct__needs_grad(n, 2)) {
        gi[2] = ct_sum_dim(g, 0, false);
    }
}

/* Saves x where dW is needed, W where dX is, and the output of the fused ReLU. */
static void ct__linear_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->op->variant;
    ct__save_operands(n, c, 0);
    if (c->op->variant) {
        ct__save_output(n, c->outputs[0]);
    }
}

/* Inputs: input (*, in), weight (out, in), bias (out) or absent; output (*, out). */
static bool ct__linear_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    const ct_tensor *bias = c->n_inputs > 2 ? c->inputs[2] : NULL;
    if (!ct__check_mat(c->fn, x, w) || (bias && !ct__check_mat(c->fn, x, bias))) {
        return false;
    }
    if (w->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "weight must be 2-D (out_features, in_features), got "
                 "%d-D", w->ndim);
        return false;
    }
    if (x->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, c->fn, "both arguments to linear need to be at least 1D, but "
                 "they are 0D and 2D");
        return false;
    }
    if (x->sizes[x->ndim - 1] != w->sizes[1]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)",
                 (long long)ct__numel(x->sizes, x->ndim - 1), (long long)x->sizes[x->ndim - 1],
                 (long long)w->sizes[1], (long long)w->sizes[0]);
        return false;
    }
    if (bias && (bias->ndim > 1 || (bias->ndim == 1 && bias->sizes[0] != w->sizes[0]))) {
        char buf[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "bias must have shape [%lld], got %s",
                 (long long)w->sizes[0], ct__shape_str(bias->sizes, bias->ndim, buf, sizeof buf));
        return false;
    }
    int64_t out[CT_MAX_DIMS];
    memcpy(out, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    out[x->ndim - 1] = w->sizes[0];
    c->dtype = x->dtype;
    return ct__op_output(c, out, x->ndim, x->dtype) != NULL;
}

/* y (N, out) = x (N, in) @ W^T + b: one GEMM reading W transposed through its strides; the
   fused ReLU runs while the output is still in cache. */
static bool ct__linear_2d(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias,
                          ct_tensor *y, bool relu)
{
    ct_tensor *wt = ct__tensor_over(w->storage, w->dtype, w->sizes, w->strides, 2, w->offset);
    if (!wt) {
        return false;
    }
    wt->sizes[0] = w->sizes[1]; /* W^T as a (in, out) view */
    wt->sizes[1] = w->sizes[0];
    wt->strides[0] = w->strides[1];
    wt->strides[1] = w->strides[0];
    if (bias) {
        ct__copy_kernel(y, bias);
    }
    ct__gemm(x, wt, y, 1.0, bias ? 1.0 : 0.0);
    ct__release(wt);
    if (relu) {
        ct__relu_inplace_kernel(y);
    }
    return true;
}

/* x (*, in) runs as rows (N, in): a reshape of x (a view where its strides allow, as
   ct_reshape), and the output (contiguous) as (N, out). */
static ct_status ct__linear_kernel(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    const ct_tensor *bias = c->n_inputs > 2 ? c->inputs[2] : NULL;
    ct_tensor *y = c->outputs[0];
    bool relu = c->op->variant != 0;
    if (x->ndim == 2) {
        return ct__linear_2d(x, w, bias, y, relu) ? CT_OK : ct_error_code();
    }
    int64_t rows[2] = {ct__numel(x->sizes, x->ndim - 1), x->sizes[x->ndim - 1]};
    int64_t ys[2] = {rows[0], w->sizes[0]}, yst[2] = {w->sizes[0], 1};
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *x2 = ct_reshape(x, rows, 2);
    ct_no_grad_end();
    ct_tensor *y2 = x2 ? ct__tensor_over(y->storage, y->dtype, ys, yst, 2, y->offset) : NULL;
    bool ok = y2 && ct__linear_2d(x2, w, bias, y2, relu);
    ct__release(y2);
    ct_scope_end();
    return ok ? CT_OK : ct_error_code();
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

static bool ct__bmm_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b)) {
        return false;
    }
    if (a->ndim != 3 || b->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, c->fn, "batch%d must be a 3D tensor", a->ndim != 3 ? 1 : 2);
        return false;
    }
    if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "Expected size for first two dimensions of batch2 tensor to "
                 "be: [%lld, %lld] but got: [%lld, %lld].",
                 (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0],
                 (long long)b->sizes[1]);
        return false;
    }
    int64_t shape[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    c->dtype = a->dtype;
    return ct__op_output(c, shape, 3, a->dtype) != NULL;
}

static ct_status ct__bmm_kernel(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct_tensor *out = c->outputs[0];
    for (int64_t i = 0; i < out->sizes[0]; i++) {
        ct_tensor *ai = ct__mat_at(a, i), *bi = ct__mat_at(b, i), *ci = ct__mat_at(out, i);
        if (ai && bi && ci) {
            ct__gemm(ai, bi, ci, 1.0, 0.0);
        }
        ct__release(ai);
        ct__release(bi);
        ct__release(ci);
    }
    return CT_OK;
}

/* ---- dot, mv, matmul (composite: built on mm and bmm) ----------------------------------- */
static bool ct__dot_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b)) {
        return false;
    }
    if (a->ndim != 1 || b->ndim != 1) {
        ct__fail(CT_ERR_SHAPE, c->fn, "1D tensors expected, but got %dD and %dD tensors",
                 a->ndim, b->ndim);
        return false;
    }
    if (a->sizes[0] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "inconsistent tensor size, expected tensor [%lld] and src "
                 "[%lld] to have the same number of elements, but got %lld and %lld elements "
                 "respectively",
                 (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0],
                 (long long)b->sizes[0]);
        return false;
    }
    c->dtype = a->dtype;
    return true;
}

static ct_status ct__dot_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(
        c, ct_reshape(ct_mm(ct_unsqueeze(c->inputs[0], 0), ct_unsqueeze(c->inputs[1], 1)), NULL,
                      0));
}

static bool ct__mv_meta(ct_op_call *c)
{
    const ct_tensor *m = c->inputs[0], *v = c->inputs[1];
    if (!ct__check_mat(c->fn, m, v)) {
        return false;
    }
    if (m->ndim != 2 || v->ndim != 1 || m->sizes[1] != v->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                 (long long)(m->ndim ? m->sizes[0] : 0), (long long)(m->ndim ? m->sizes[0] : 0),
                 (long long)(m->ndim > 1 ? m->sizes[1] : 0),
                 (long long)(v->ndim ? v->sizes[0] : 0));
        return false;
    }
    c->dtype = m->dtype;
    return true;
}

static ct_status ct__mv_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(
        c, ct_squeeze_dim(ct_mm(c->inputs[0], ct_unsqueeze(c->inputs[1], 1)), 1));
}

/* batched matmul with broadcast batch dims: a (..., n, m) @ b (..., m, p), in the current
   scope */
static ct_tensor *ct__matmul_batched(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    int64_t batch[CT_MAX_DIMS];
    int nb = 0;
    if (!ct__broadcast_shapes(op, a->sizes, a->ndim - 2, b->sizes, b->ndim - 2, batch, &nb)) {
        return NULL;
    }
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 2]) {
        char x[160], y[160];
        ct__fail(CT_ERR_SHAPE, op,
                 "Expected size for first two dimensions of batch2 tensor to "
                 "be: [%s, %lld] but got: [%s, %lld].",
                 ct__shape_str(batch, nb, x, sizeof x), (long long)a->sizes[a->ndim - 1],
                 ct__shape_str(batch, nb, y, sizeof y), (long long)b->sizes[b->ndim - 2]);
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
    ct_tensor *r = ct_bmm(ct_reshape(ct_expand(a, ea, nb + 2), sa, 3),
                          ct_reshape(ct_expand(b, eb, nb + 2), sb, 3));
    return ct_reshape(r, out, nb + 2);
}

static bool ct__matmul_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b)) {
        return false;
    }
    if (a->ndim == 0 || b->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "both arguments to matmul need to be at least 1D, but they are "
                 "%dD and %dD",
                 a->ndim, b->ndim);
        return false;
    }
    c->dtype = a->dtype;
    return true;
}

/* (*, m) @ (m, p) with a of 1 or 3+ dims: the batch folded into rows, one mm (in the current
   scope); a 1-D a's row is dropped again */
static ct_tensor *ct__matmul_rows(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (a->sizes[a->ndim - 1] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)",
                 (long long)ct__numel(a->sizes, a->ndim - 1),
                 (long long)a->sizes[a->ndim - 1], (long long)b->sizes[0],
                 (long long)b->sizes[1]);
        return NULL;
    }
    if (a->ndim == 1) {
        return ct_squeeze_dim(ct_mm(ct_unsqueeze(a, 0), b), 0);
    }
    int64_t rows[2] = {-1, a->sizes[a->ndim - 1]}, out[CT_MAX_DIMS];
    memcpy(out, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
    out[a->ndim - 1] = b->sizes[1];
    return ct_reshape(ct_mm(ct_reshape(a, rows, 2), b), out, a->ndim);
}

static ct_status ct__matmul_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct_scope_begin();
    ct_tensor *r = NULL;
    if (a->ndim == 1 && b->ndim == 1) {
        r = ct_dot(a, b);
    } else if (a->ndim >= 2 && b->ndim == 1) { /* fold the batch into rows: one mv */
        int64_t rows[2] = {-1, a->sizes[a->ndim - 1]};
        r = ct_mv(ct_reshape(a, rows, 2), b);
        r = r ? ct_reshape(r, a->sizes, a->ndim - 1) : NULL;
    } else if (a->ndim == 2 && b->ndim == 2) {
        r = ct_mm(a, b);
    } else if (b->ndim == 2) { /* fold the batch into rows: one big GEMM */
        r = ct__matmul_rows(c->fn, a, b);
    } else { /* promote 1-D operands to matrices, multiply batched, drop the added dims */
        const ct_tensor *a2 = a->ndim == 1 ? ct_unsqueeze(a, 0) : a;
        const ct_tensor *b2 = b->ndim == 1 ? ct_unsqueeze(b, 1) : b;
        r = ct__matmul_batched(c->fn, a2, b2);
        if (r && b->ndim == 1) {
            r = ct_squeeze_dim(r, -1);
        }
        if (r && a->ndim == 1) {
            r = ct_squeeze_dim(r, -2);
        }
    }
    return ct__composite_end(c, r);
}

/* ---- descriptors ------------------------------------------------------------------------ */
/* The GEMM kernels (mm, addmm, linear, bmm) and the composites built on them (dot, mv,
   matmul, as PyTorch's CompositeImplicit ops call mm/bmm). Every one reports its floating
   point operations, 2 M N K (times the batch), to the profiler; a composite's nested mm
   reports its own too, as in torch.profiler. linear on (*, in) is one op with one node
   (PyTorch's name for it, AddmmBackward0); ctorch::linear_relu is ctorch's own fused
   Linear+ReLU (nn.Sequential runs it for a Linear followed by a ReLU). */
#define CT__GEMM_OP(SYM, NAME, SCHEMA, API, VAR, OPT, META, K, COMP, NODE, BW, SAVE, RECORD,    \
                    FLOPS)                                                                      \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VAR,  \
                                       OPT, NULL, META, K, COMP, NODE, BW, SAVE, RECORD, FLOPS};
CT__GEMM_OP(mm, "aten::mm", "mm(Tensor self, Tensor mat2) -> Tensor", "ct_mm", 0, 0u,
            ct__mm_meta, CT__K_FLOAT(ct__mm_kernel), NULL, "MmBackward0", ct__mm_backward, 0u,
            ct__mm_record, ct__flops_01)
CT__GEMM_OP(addmm, "aten::addmm", "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar "
            "beta=1, Scalar alpha=1) -> Tensor", "ct_addmm", 0, 0u, ct__addmm_meta,
            CT__K_FLOAT(ct__addmm_kernel), NULL, "AddmmBackward0", ct__addmm_backward, 0u,
            ct__addmm_record, ct__flops_12)
CT__GEMM_OP(linear, "aten::linear", "linear(Tensor input, Tensor weight, Tensor? bias=None) -> "
            "Tensor", "ct_linear", 0, 1u << 2, ct__linear_meta, CT__K_FLOAT(ct__linear_kernel),
            NULL, "AddmmBackward0", ct__linear_backward, 0u, ct__linear_record,
            ct__linear_flops)
CT__GEMM_OP(linear_relu, "ctorch::linear_relu", "linear_relu(Tensor input, Tensor weight, Tensor? "
            "bias=None) -> Tensor", "ct_module_forward (Sequential: Linear, ReLU)", 1, 1u << 2,
            ct__linear_meta, CT__K_FLOAT(ct__linear_kernel), NULL, "LinearReluBackward",
            ct__linear_backward, 0u, ct__linear_record, ct__linear_flops)
CT__GEMM_OP(bmm, "aten::bmm", "bmm(Tensor self, Tensor mat2) -> Tensor", "ct_bmm", 0, 0u,
            ct__bmm_meta, CT__K_FLOAT(ct__bmm_kernel), NULL, "BmmBackward0", ct__bmm_backward,
            (1u << 0) | (1u << 1), NULL, ct__flops_01)
CT__GEMM_OP(dot, "aten::dot", "dot(Tensor self, Tensor tensor) -> Tensor", "ct_dot", 0, 0u,
            ct__dot_meta, CT__K_NONE, ct__dot_composite, NULL, NULL, 0u, NULL, ct__flops_01)
CT__GEMM_OP(mv, "aten::mv", "mv(Tensor self, Tensor vec) -> Tensor", "ct_mv", 0, 0u,
            ct__mv_meta, CT__K_NONE, ct__mv_composite, NULL, NULL, 0u, NULL, ct__flops_01)
CT__GEMM_OP(matmul, "aten::matmul", "matmul(Tensor self, Tensor other) -> Tensor", "ct_matmul",
            0, 0u, ct__matmul_meta, CT__K_NONE, ct__matmul_composite, NULL, NULL, 0u, NULL,
            ct__flops_01)
#undef CT__GEMM_OP

/* ---- public functions ---------------------------------------------------------------------- */
static ct_tensor *ct__call_gemm(const ct_op *op, const char *fn, const ct_tensor *const *in,
                                int n)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n);
    return ct__dispatch(&c);
}

ct_tensor *ct_mm(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_mm, "ct_mm", in, 2);
}

ct_tensor *ct_addmm(const ct_tensor *input, const ct_tensor *a, const ct_tensor *b, double beta,
                    double alpha)
{
    const ct_tensor *in[3] = {input, a, b};
    ct_op_call c;
    ct__call_init(&c, &ct__op_addmm, "ct_addmm", in, 3);
    ct__call_f(&c, beta);
    ct__call_f(&c, alpha);
    return ct__dispatch(&c);
}

ct_tensor *ct_linear(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias)
{
    const ct_tensor *in[3] = {x, w, bias};
    return ct__call_gemm(&ct__op_linear, "ct_linear", in, bias ? 3 : 2);
}

ct_tensor *ct__linear_relu(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias)
{
    const char *op = "ct_linear";
    if (!x || !w || x->ndim != 2 || w->ndim != 2 || !ct__check_mat(op, x, w) ||
        (bias && !ct__check_mat(op, x, bias))) {
        ct_scope_begin(); /* the general path (and its errors) */
        ct_tensor *r = ct_keep(ct_relu(ct_linear(x, w, bias)));
        ct_scope_end();
        return r;
    }
    const ct_tensor *in[3] = {x, w, bias};
    return ct__call_gemm(&ct__op_linear_relu, op, in, bias ? 3 : 2);
}

ct_tensor *ct_bmm(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_bmm, "ct_bmm", in, 2);
}

ct_tensor *ct_dot(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_dot, "ct_dot", in, 2);
}

ct_tensor *ct_mv(const ct_tensor *m, const ct_tensor *v)
{
    const ct_tensor *in[2] = {m, v};
    return ct__call_gemm(&ct__op_mv, "ct_mv", in, 2);
}

ct_tensor *ct_matmul(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_matmul, "ct_matmul", in, 2);
}

// >>part ops/softmax.c
/* ops/softmax.c - fused, numerically stable softmax and log_softmax, and the row kernels
 * cross-entropy shares (nn/loss.c).
 *
 * Legend: the input (made contiguous) is (outer, R, inner) around dim; each (o, c) line of R
 * elements at stride inner is normalized independently, in parallel over lines.
 * Contiguous rows (inner == 1) take three passes over a row, which stays in L1: the max m;
 * e = exp(x - m) summed and stored into y (which brings y's lines in during the arithmetic,
 * for log_softmax too); y = e / sum, or y = x - lse with lse = m + log(sum). The next row is
 * prefetched during the exp pass, so its trip from memory overlaps the arithmetic. (A one-pass
 * online softmax, with a running max and a rescaled sum, would compute every exp twice: with
 * the row in L1, re-reading it is cheaper. Streaming stores measured no faster: the output
 * stays in this machine's large L3.) Sums run in 16 lanes: lane k adds elements 16 j + k,
 * lane 0 then the tail, and the lanes are summed pairwise. The float32 AVX-512 path does the
 * same IEEE operations in the same order (vmath.h's exp is bit-identical to ct__expf), so it
 * matches the scalar path bit for bit; tests/test_ops.c checks it.
 * Determinism: each line is computed by one thread in a fixed order: bit-exact across
 * thread counts.
 */

CT__VECTORIZE_BEGIN

/* prefetch for reading (rw 0) or writing (rw 1) into all cache levels */
#if defined(__GNUC__) || defined(__clang__)
#define CT__PREFETCH(p, rw) __builtin_prefetch((p), (rw), 3)
#else
#define CT__PREFETCH(p, rw) ((void)(p))
#endif

/* ---- row kernels: the scalar reference, float32 and float64 --------------------------- */
/* Each continues from element r with its 16 lanes (m or acc) holding elements [0, r), so a
   vector part can do the first elements.
   ct__row_max_S: the max of x[0..R) ignoring NaN; 0 when none is above -inf (an all -inf
   row then ends NaN, as in PyTorch).
   ct__row_expsum_S: the sum of exp(x - shift) over x[0..R), the terms stored into y unless
   NULL: lane k adds the terms 16 j + k, lane 0 then the tail's in order, and the lanes are
   summed pairwise (k + 8 into k, then k + 4, k + 2, k + 1).
   ct__row_exp_S: y = scale * exp(x - shift).
   prefetch: the next row (x + R, and y + R where y is written) comes next: each chunk
   prefetches its 16 elements there. */
#define CT__ROW_PREFETCH(T, p, r, rw)                                                      \
    for (size_t b_ = 0; b_ < 16 * sizeof(T); b_ += 64) {                                   \
        CT__PREFETCH((const char *)((p) + (r)) + b_, rw);                                  \
    }
#define CT__ROW_KERNELS(T, S, EXP)                                                         \
    static T ct__row_max_##S(const T *x, int64_t r, int64_t R, T *m)                       \
    {                                                                                      \
        for (; r + 16 <= R; r += 16) {                                                     \
            for (int k = 0; k < 16; k++) {                                                 \
                m[k] = x[r + k] > m[k] ? x[r + k] : m[k];                                  \
            }                                                                              \
        }                                                                                  \
        for (; r < R; r++) {                                                               \
            m[0] = x[r] > m[0] ? x[r] : m[0];                                              \
        }                                                                                  \
        T mx = m[0];                                                                       \
        for (int k = 1; k < 16; k++) {                                                     \
            mx = m[k] > mx ? m[k] : mx;                                                    \
        }                                                                                  \
        return mx == -(T)INFINITY ? 0 : mx;                                                \
    }                                                                                      \
    static T ct__row_expsum_##S(const T *x, T *y, int64_t r, int64_t R, T shift, T *acc,   \
                                bool prefetch)                                             \
    {                                                                                      \
        for (; r + 16 <= R; r += 16) {                                                     \
            if (prefetch) {                                                                \
                CT__ROW_PREFETCH(T, x + R, r, 0)                                           \
            }                                                                              \
            if (y) {                                                                       \
                for (int k = 0; k < 16; k++) {                                             \
                    y[r + k] = EXP(x[r + k] - shift);                                      \
                    acc[k] += y[r + k];                                                    \
                }                                                                          \
            } else {                                                                       \
                for (int k = 0; k < 16; k++) {                                             \
                    acc[k] += EXP(x[r + k] - shift);                                       \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        T e[16];                                                                           \
        int64_t n = R - r;                                                                 \
        for (int64_t k = 0; k < n; k++) {                                                  \
            e[k] = EXP(x[r + k] - shift);                                                  \
        }                                                                                  \
        for (int64_t k = 0; k < n; k++) {                                                  \
            acc[0] += e[k];                                                                \
            if (y) {                                                                       \
                y[r + k] = e[k];                                                           \
            }                                                                              \
        }                                                                                  \
        for (int w = 8; w > 0; w /= 2) {                                                   \
            for (int k = 0; k < w; k++) {                                                  \
                acc[k] += acc[k + w];                                                      \
            }                                                                              \
        }                                                                                  \
        return acc[0];                                                                     \
    }                                                                                      \
    static void ct__row_exp_##S(const T *x, T *y, int64_t r, int64_t R, T shift, T scale,  \
                                bool prefetch)                                             \
    {                                                                                      \
        for (; r + 16 <= R; r += 16) {                                                     \
            if (prefetch) {                                                                \
                CT__ROW_PREFETCH(T, x + R, r, 0)                                           \
                CT__ROW_PREFETCH(T, y + R, r, 1)                                           \
            }                                                                              \
            for (int k = 0; k < 16; k++) {                                                 \
                y[r + k] = scale * EXP(x[r + k] - shift);                                  \
            }                                                                              \
        }                                                                                  \
        for (; r < R; r++) {                                                               \
            y[r] = scale * EXP(x[r] - shift);                                              \
        }                                                                                  \
    }
CT__ROW_KERNELS(float, f32, ct__expf)
CT__ROW_KERNELS(double, f64, exp)
#undef CT__ROW_KERNELS
#undef CT__ROW_PREFETCH

/* ---- vector parts (float32 AVX-512): the full chunks, one vector of 16 lanes each ----- */
/* Each does the scalar kernel's operations on whole 16-element chunks (lane k of the vector
   is lane k of the scalar kernel), then the tail of 0..15 elements by masked loads and
   stores (expsum adds its terms into lane 0 in order), and returns R. */
#define CT__NO_VECTOR_PART(...) 0
#if defined(CT__HAS_AVX512)
static int64_t ct__vec_max_f32(const float *x, int64_t R, float *m)
{ /* four vectors in flight (max is exact: any grouping gives the same lanes) */
    __m512 v0 = _mm512_loadu_ps(m), v1 = v0, v2 = v0, v3 = v0;
    int64_t r = 0;
    for (; r + 64 <= R; r += 64) { /* x > m ? x : m: NaN skipped */
        v0 = ct__max_v16(_mm512_loadu_ps(x + r), v0);
        v1 = ct__max_v16(_mm512_loadu_ps(x + r + 16), v1);
        v2 = ct__max_v16(_mm512_loadu_ps(x + r + 32), v2);
        v3 = ct__max_v16(_mm512_loadu_ps(x + r + 48), v3);
    }
    for (; r + 16 <= R; r += 16) {
        v0 = ct__max_v16(_mm512_loadu_ps(x + r), v0);
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    v0 = ct__max_v16(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + r), v0);
    _mm512_storeu_ps(m, ct__max_v16(ct__max_v16(v0, v1), ct__max_v16(v2, v3)));
    return r;
}

static int64_t ct__vec_expsum_f32(const float *x, float *y, int64_t R, float shift,
                                  float *acc, bool prefetch)
{
    __m512 a = _mm512_loadu_ps(acc), s = _mm512_set1_ps(shift);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        if (prefetch) {
            CT__PREFETCH(x + R + r, 0);
        }
        __m512 e = ct__expf_v16(_mm512_sub_ps(_mm512_loadu_ps(x + r), s));
        a = _mm512_add_ps(a, e);
        if (y) {
            _mm512_storeu_ps(y + r, e);
        }
    }
    _mm512_storeu_ps(acc, a);
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    float e[16];
    _mm512_storeu_ps(e, ct__expf_v16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + r), s)));
    for (int64_t i = 0; i < R - r; i++) {
        acc[0] += e[i];
    }
    if (y) {
        _mm512_mask_storeu_ps(y + r, k, _mm512_loadu_ps(e));
    }
    return R;
}

static int64_t ct__vec_exp_f32(const float *x, float *y, int64_t R, float shift, float scale,
                               bool prefetch)
{
    __m512 s = _mm512_set1_ps(shift), c = _mm512_set1_ps(scale);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        if (prefetch) {
            CT__PREFETCH(x + R + r, 0);
            CT__PREFETCH(y + R + r, 1);
        }
        __m512 e = ct__expf_v16(_mm512_sub_ps(_mm512_loadu_ps(x + r), s));
        _mm512_storeu_ps(y + r, _mm512_mul_ps(c, e));
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    __m512 e = ct__expf_v16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + r), s));
    _mm512_mask_storeu_ps(y + r, k, _mm512_mul_ps(c, e));
    return R;
}
/* y *= scale */
static int64_t ct__vec_scale_f32(float *y, int64_t R, float scale)
{
    __m512 c = _mm512_set1_ps(scale);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        _mm512_storeu_ps(y + r, _mm512_mul_ps(_mm512_loadu_ps(y + r), c));
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    _mm512_mask_storeu_ps(y + r, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + r), c));
    return R;
}

/* y = x - shift */
static int64_t ct__vec_shift_f32(const float *x, float *y, int64_t R, float shift)
{
    __m512 s = _mm512_set1_ps(shift);
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) {
        _mm512_storeu_ps(y + r, _mm512_sub_ps(_mm512_loadu_ps(x + r), s));
    }
    __mmask16 k = (__mmask16)((1u << (R - r)) - 1u);
    _mm512_mask_storeu_ps(y + r, k, _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + r), s));
    return R;
}
#define CT__VEC_MAX_F32 ct__vec_max_f32
#define CT__VEC_SCALE_F32 ct__vec_scale_f32
#define CT__VEC_SHIFT_F32 ct__vec_shift_f32
#define CT__VEC_EXPSUM_F32 ct__vec_expsum_f32
#define CT__VEC_EXP_F32 ct__vec_exp_f32
#else
#define CT__VEC_MAX_F32 CT__NO_VECTOR_PART
#define CT__VEC_EXPSUM_F32 CT__NO_VECTOR_PART
#define CT__VEC_EXP_F32 CT__NO_VECTOR_PART
#define CT__VEC_SCALE_F32 CT__NO_VECTOR_PART
#define CT__VEC_SHIFT_F32 CT__NO_VECTOR_PART
#endif

/* ---- whole rows ------------------------------------------------------------------------ */
/* The vector part first unless scalar, then the scalar kernel on the rest. The last pass is
   elementwise (y = e * (1 / sum), or y = x - lse), the same in both paths. */
#define CT__ROWS(T, S, LOG, VMAX, VEXPSUM, VEXP, VSCALE, VSHIFT)                           \
    T ct__softmax_row_##S(const T *x, T *y, int64_t R, ct__softmax_mode mode, bool prefetch, \
                          bool scalar)                                                     \
    {                                                                                      \
        T lanes[16];                                                                       \
        for (int k = 0; k < 16; k++) {                                                     \
            lanes[k] = -(T)INFINITY;                                                       \
        }                                                                                  \
        int64_t r = scalar ? 0 : VMAX(x, R, lanes);                                        \
        T mx = ct__row_max_##S(x, r, R, lanes);                                            \
        T *e = mode == CT__SOFTMAX_LSE ? NULL : y;                                         \
        for (int k = 0; k < 16; k++) {                                                     \
            lanes[k] = 0;                                                                  \
        }                                                                                  \
        r = scalar ? 0 : VEXPSUM(x, e, R, mx, lanes, prefetch);                            \
        T sum = ct__row_expsum_##S(x, e, r, R, mx, lanes, prefetch);                       \
        T lse = mode == CT__SOFTMAX_EXP ? 0 : mx + LOG(sum);                               \
        if (mode == CT__SOFTMAX_EXP) {                                                     \
            T inv = (T)1 / sum;                                                            \
            for (r = scalar ? 0 : VSCALE(y, R, inv); r < R; r++) {                         \
                y[r] *= inv;                                                               \
            }                                                                              \
        } else if (mode == CT__SOFTMAX_LOG) {                                              \
            for (r = scalar ? 0 : VSHIFT(x, y, R, lse); r < R; r++) {                      \
                y[r] = x[r] - lse;                                                         \
            }                                                                              \
        }                                                                                  \
        return lse;                                                                        \
    }                                                                                      \
    void ct__exp_row_##S(const T *x, T *y, int64_t R, T shift, T scale, bool prefetch,     \
                         bool scalar)                                                      \
    {                                                                                      \
        int64_t r = scalar ? 0 : VEXP(x, y, R, shift, scale, prefetch);                    \
        ct__row_exp_##S(x, y, r, R, shift, scale, prefetch);                               \
    }
CT__ROWS(float, f32, ct__logf, CT__VEC_MAX_F32, CT__VEC_EXPSUM_F32, CT__VEC_EXP_F32,
         CT__VEC_SCALE_F32, CT__VEC_SHIFT_F32)
CT__ROWS(double, f64, log, CT__NO_VECTOR_PART, CT__NO_VECTOR_PART, CT__NO_VECTOR_PART,
         CT__NO_VECTOR_PART, CT__NO_VECTOR_PART)
#undef CT__ROWS
#undef CT__VEC_MAX_F32
#undef CT__VEC_EXPSUM_F32
#undef CT__VEC_EXP_F32
#undef CT__VEC_SCALE_F32
#undef CT__VEC_SHIFT_F32
#undef CT__NO_VECTOR_PART

/* ---- softmax / log_softmax along a dim ------------------------------------------------ */
typedef struct ct__softmax_job {
    const char *x;
    char *y;
    int64_t R, inner;
    bool log;
} ct__softmax_job;

/* lines [b, e) of R elements at stride inner; contiguous rows (inner == 1) prefetch the
   next row of the chunk while computing one */
#define CT__SOFTMAX_LINES(T, S, EXP, LOG)                                                  \
    static void ct__softmax_lines_##S(int64_t b, int64_t e, void *ctx)                     \
    {                                                                                      \
        const ct__softmax_job *j = (const ct__softmax_job *)ctx;                           \
        int64_t R = j->R, in = j->inner;                                                   \
        ct__softmax_mode mode = j->log ? CT__SOFTMAX_LOG : CT__SOFTMAX_EXP;                \
        for (int64_t line = b; line < e; line++) {                                         \
            int64_t o = line / in, c = line % in;                                          \
            const T *x = (const T *)j->x + o * R * in + c;                                 \
            T *y = (T *)j->y + o * R * in + c;                                             \
            if (in == 1) {                                                                 \
                ct__softmax_row_##S(x, y, R, mode, line + 1 < e, false);                   \
                continue;                                                                  \
            }                                                                              \
            T mx = -(T)INFINITY;                                                           \
            for (int64_t r = 0; r < R; r++) {                                              \
                mx = x[r * in] > mx || x[r * in] != x[r * in] ? x[r * in] : mx;            \
            }                                                                              \
            T sum = 0;                                                                     \
            for (int64_t r = 0; r < R; r++) {                                              \
                y[r * in] = EXP(x[r * in] - mx);                                           \
                sum += y[r * in];                                                          \
            }                                                                              \
            T lse = mx + LOG(sum), inv = (T)1 / sum;                                       \
            for (int64_t r = 0; r < R; r++) {                                              \
                y[r * in] = j->log ? x[r * in] - lse : y[r * in] * inv;                    \
            }                                                                              \
        }                                                                                  \
    }
CT__SOFTMAX_LINES(float, f32, ct__expf, ct__logf)
CT__SOFTMAX_LINES(double, f64, exp, log)
#undef CT__SOFTMAX_LINES

/* ---- descriptors ------------------------------------------------------------------------ */
static ct_tensor *ct__softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim);
static ct_tensor *ct__log_softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim);

static void ct__softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__softmax_bw(g, ct__saved(n, 0), n->i[0]);
}

static void ct__log_softmax_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__log_softmax_bw(g, ct__saved(n, 0), n->i[0]);
}

/* Saves the output and the (wrapped) dim. */
static void ct__softmax_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->attrs[0].i;
    ct__save_output(n, c->outputs[0]);
}

/* Attribute: dim, wrapped here for the kernel and the node. Float inputs only; the output has
   the input's shape and dtype. */
static bool ct__softmax_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"%s_lastdim_kernel_impl\" not implemented for '%s'",
                 c->op->variant ? "log_softmax" : "softmax", ct_dtype_name(t->dtype));
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    c->attrs[0].i = d;
    c->attrs[0].f = d;
    c->dtype = t->dtype;
    return ct__op_output(c, t->sizes, t->ndim, t->dtype) != NULL;
}

static ct_status ct__softmax_kernel(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int d = (int)c->attrs[0].i;
    ct_tensor *x = ct_is_contiguous(t) ? ct_retain((ct_tensor *)(uintptr_t)t)
                                       : ct__tensor_new(c->fn, t->sizes, t->ndim, t->dtype);
    if (!x) {
        return ct_error_code();
    }
    if (x != t) {
        ct__copy_kernel(x, t);
    }
    ct__softmax_job j;
    j.x = ct__data(x);
    j.y = ct__data(c->outputs[0]);
    j.R = t->ndim ? t->sizes[d] : 1;
    j.inner = 1;
    j.log = c->op->variant != 0;
    for (int k = d + 1; k < t->ndim; k++) {
        j.inner *= t->sizes[k];
    }
    int64_t lines = j.R ? ct_numel(t) / j.R : 0;
    int64_t grain = CT__GRAIN / (j.R ? j.R : 1) + 1;
    ct__parallel_for(lines, grain, t->dtype == CT_FLOAT32 ? ct__softmax_lines_f32
                                                          : ct__softmax_lines_f64, &j);
    ct__release(x);
    return CT_OK;
}

/* The backward ops (composite: built on ops, so they run on any device and differentiate
   again). An empty input's gradient is empty: skip the sums, whose outputs (every line of
   dim) can be far larger than the input. Attributes: dim, the input's dtype. */
static ct_status ct__softmax_bw_composite(ct_op_call *c)
{
    const ct_tensor *g = c->inputs[0], *y = c->inputs[1];
    int64_t dim = c->attrs[0].i;
    ct_scope_begin();
    ct_tensor *r = NULL;
    if (ct_numel(g) == 0) {
        r = ct_zeros_like(g);
    } else if (c->op->variant) { /* g - exp(y) * sum(g) */
        r = ct_sub(g, ct_mul(ct_exp(y), ct_sum_dim(g, dim, true)));
    } else { /* y * (g - sum(g * y)) */
        r = ct_mul(y, ct_sub(g, ct_sum_dim(ct_mul(g, y), dim, true)));
    }
    return ct__composite_end(c, r);
}

static const ct_op ct__op_softmax = {
    "aten::softmax", "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "ct_softmax", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__softmax_meta,
    CT__K_FLOAT(ct__softmax_kernel), NULL, "SoftmaxBackward0", ct__softmax_backward, 0u,
    ct__softmax_record, NULL};
static const ct_op ct__op_log_softmax = {
    "aten::log_softmax", "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> "
    "Tensor", "ct_log_softmax", CT_OP_OTHER, CT_AUTOCAST_NONE, 1, 0u, NULL, ct__softmax_meta,
    CT__K_FLOAT(ct__softmax_kernel), NULL, "LogSoftmaxBackward0", ct__log_softmax_backward, 0u,
    ct__softmax_record, NULL};
static const ct_op ct__op_softmax_backward = {
    "aten::_softmax_backward_data", "_softmax_backward_data(Tensor grad_output, Tensor output, "
    "int dim, ScalarType input_dtype) -> Tensor", "ct_backward (softmax)", CT_OP_OTHER,
    CT_AUTOCAST_NONE, 0, 0u, NULL, NULL, CT__K_NONE, ct__softmax_bw_composite, NULL, NULL, 0u,
    NULL, NULL};
static const ct_op ct__op_log_softmax_backward = {
    "aten::_log_softmax_backward_data", "_log_softmax_backward_data(Tensor grad_output, Tensor "
    "output, int dim, ScalarType input_dtype) -> Tensor", "ct_backward (log_softmax)",
    CT_OP_OTHER, CT_AUTOCAST_NONE, 1, 0u, NULL, NULL, CT__K_NONE, ct__softmax_bw_composite,
    NULL, NULL, 0u, NULL, NULL};

/* ---- public functions ---------------------------------------------------------------------- */
static ct_tensor *ct__call_softmax(const ct_op *op, const char *fn, const ct_tensor *t,
                                   int64_t dim)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_i(&c, dim);
    return ct__dispatch(&c);
}

/* A backward op over the gradient g and the forward's output y (y's dtype: the input's). */
static ct_tensor *ct__call_softmax_bw(const ct_op *op, const char *fn, const ct_tensor *g,
                                      const ct_tensor *y, int64_t dim)
{
    if (ct__null(fn, y)) {
        return NULL;
    }
    const ct_tensor *in[2] = {g, y};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    ct__call_i(&c, dim);
    ct__call_i(&c, y->dtype);
    return ct__dispatch(&c);
}

static ct_tensor *ct__softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim)
{
    return ct__call_softmax_bw(&ct__op_softmax_backward, "ct_softmax_backward", g, y, dim);
}

static ct_tensor *ct__log_softmax_bw(const ct_tensor *g, const ct_tensor *y, int64_t dim)
{
    return ct__call_softmax_bw(&ct__op_log_softmax_backward, "ct_log_softmax_backward", g, y,
                               dim);
}

ct_tensor *ct_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__call_softmax(&ct__op_softmax, "ct_softmax", t, dim);
}

ct_tensor *ct_log_softmax(const ct_tensor *t, int64_t dim)
{
    return ct__call_softmax(&ct__op_log_softmax, "ct_log_softmax", t, dim);
}

#undef CT__PREFETCH

CT__VECTORIZE_END

// >>part autograd/autograd.c
/* autograd/autograd.c - graph nodes, the engine, grad mode. */

static CT__THREAD_LOCAL bool ct__grad_off = false;
static CT__THREAD_LOCAL bool ct__grad_stack[64];
static CT__THREAD_LOCAL int ct__grad_depth = 0;
static CT__THREAD_LOCAL uint64_t ct__node_seq = 0;
static CT__THREAD_LOCAL uint64_t ct__engine_epoch = 0;
static CT__THREAD_LOCAL bool ct__node_failed = false; /* set by ct__node_new, read by set_history */

/* ---- grad mode ---------------------------------------------------------------------- */
bool ct_is_grad_enabled(void)
{
    return !ct__grad_off;
}

void ct_set_grad_enabled(bool enabled)
{
    ct__grad_off = !enabled;
}

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
bool ct_requires_grad(const ct_tensor *t)
{
    return !ct__null_tensor("ct_requires_grad", t) && (t->requires_grad || t->grad_fn);
}

bool ct_is_leaf(const ct_tensor *t)
{
    return !ct__null_tensor("ct_is_leaf", t) && !t->grad_fn;
}

const ct_node *ct_grad_fn(const ct_tensor *t)
{
    return ct__null_tensor("ct_grad_fn", t) ? NULL : t->grad_fn;
}

const char *ct_node_name(const ct_node *n)
{
    return n ? n->name : NULL; /* NULL: no grad_fn (a leaf's), not an error */
}

const char *ct__node_name(const ct_node *n)
{
    return n->name;
}

ct_tensor *ct_grad(const ct_tensor *t)
{
    return ct__null_tensor("ct_grad", t) ? NULL : t->grad;
}

ct_tensor *ct_requires_grad_(ct_tensor *t, bool requires_grad)
{
    const char *op = "ct_requires_grad_";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (t->grad_fn) {
        ct__fail(CT_ERR_AUTOGRAD, op,
                 "you can only change requires_grad flags of leaf "
                 "variables.");
        return NULL;
    }
    if (requires_grad && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op,
                 "only Tensors of floating point dtype can require "
                 "gradients");
        return NULL;
    }
    t->requires_grad = requires_grad;
    return t;
}

/* PyTorch's checks of an assigned .grad, in its order: not t itself, same dtype, same
   device, same size. */
static bool ct__check_grad(const char *op, const ct_tensor *t, const ct_tensor *grad)
{
    char a[160], b[160];
    ct_device dt = t->storage->device, dg = grad->storage->device;
    if (grad == t) {
        ct__fail(CT_ERR_VALUE, op, "can't assign Variable as its own grad");
    } else if (grad->dtype != t->dtype) {
        ct__fail(CT_ERR_DTYPE, op, "attempting to assign a gradient with dtype '%s' to a tensor "
                 "with grad_dtype '%s'. The gradient must match the tensor's grad_dtype "
                 "(defaults to the tensor's dtype).", ct__dtype_title(grad->dtype),
                 ct__dtype_title(t->dtype));
    } else if (dg.type != dt.type) {
        ct__fail(CT_ERR_DEVICE, op, "attempting to assign a gradient with device type '%s' to a "
                 "tensor with device type '%s'. Please ensure that the gradient and the tensor "
                 "are on the same device", dg.type == CT_CPU ? "cpu" : "cuda",
                 dt.type == CT_CPU ? "cpu" : "cuda");
    } else if (dg.index != dt.index) {
        ct__fail(CT_ERR_DEVICE, op, "attempting to assign a gradient located on device with "
                 "index '%d' to a tensor located on device with index '%d'. Please ensure that "
                 "the gradient and the tensor are on the same device", dg.index, dt.index);
    } else if (grad->ndim != t->ndim ||
               memcmp(grad->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim) != 0) {
        ct__fail(CT_ERR_SHAPE, op, "attempting to assign a gradient of size '%s' to a tensor of "
                 "size '%s'. Please ensure that the gradient and the tensor are the same size",
                 ct__shape_str(grad->sizes, grad->ndim, a, sizeof a),
                 ct__shape_str(t->sizes, t->ndim, b, sizeof b));
    } else {
        return true;
    }
    return false;
}

ct_status ct_set_grad(ct_tensor *t, ct_tensor *grad)
{
    const char *op = "ct_set_grad";
    if (ct__null_tensor(op, t) || (grad && ct__null_tensor(op, grad))) {
        return ct_error_code();
    }
    if (grad && !ct__check_grad(op, t, grad)) {
        return ct_error_code();
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
        return ct__fail(CT_ERR_AUTOGRAD, "ct_retain_grad",
                        "can't retain_grad on Tensor that "
                        "has requires_grad=False");
    }
    if (t->grad_fn) { /* weak: cleared when t is freed (ct__release) */
        t->retains_grad = true;
        t->grad_fn->retain_target = t;
    }
    return CT_OK;
}

ct_tensor *ct__alias(const ct_tensor *t)
{
    return ct__tensor_over(t->storage, t->dtype, t->sizes, t->strides, t->ndim, t->offset);
}

/* detach: a view of the input's storage with no history (runs on any device). */
static ct_status ct__detach_composite(ct_op_call *c)
{
    ct_tensor *r = ct__alias(c->inputs[0]);
    if (!r) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    c->outputs[c->n_outputs++] = r;
    return CT_OK;
}

static const ct_op ct__op_detach = {"aten::detach", "detach(Tensor(a) self) -> Tensor(a)",
                                    "ct_detach", CT_OP_VIEW, CT_AUTOCAST_NONE, 0, 0u, NULL, NULL,
                                    CT__K_NONE, ct__detach_composite, NULL, NULL, 0u, NULL,
                                    NULL};

ct_tensor *ct_detach(const ct_tensor *t)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, &ct__op_detach, "ct_detach", in, 1);
    return ct__dispatch(&c);
}

ct_tensor *ct_detach_(ct_tensor *t)
{
    if (ct__null("ct_detach_", t)) {
        return NULL;
    }
    if (t->grad_fn && t->grad_fn->retain_target == t) {
        t->grad_fn->retain_target = NULL;
    }
    t->retains_grad = false;
    ct__node_release(t->grad_fn);
    t->grad_fn = NULL;
    t->requires_grad = false;
    return t;
}

ct_status ct_register_hook(ct_tensor *t, ct_tensor_hook fn, void *user)
{
    const char *op = "ct_register_hook";
    if (ct__null(op, t) || (!fn && ct__null(op, NULL))) {
        return ct_error_code();
    }
    if (!ct_requires_grad(t)) {
        return ct__fail(CT_ERR_AUTOGRAD, op,
                        "cannot register a hook on a tensor that doesn't "
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
void ct__identity_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = (ct_tensor *)(uintptr_t)g;
}

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
    ct__node_failed = false;
    if (!ct__any_requires_grad(inputs, n)) {
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        const ct_tensor *t = inputs[k];
        if (t && t->view_of == CT__VIEW_OF_GRAPH && t->grad_fn &&
            t->view_version != t->storage->version) {
            ct__node_failed = true;
            ct__fail(CT_ERR_UNSUPPORTED, name,
                     "the base of a view was modified by an in-place "
                     "operation after the view was taken, so the view's history is stale "
                     "(ctorch does not regenerate it): take the view again");
            return NULL;
        }
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
    ct_tensor *saved = NULL;
    if (t && t->requires_grad && !t->grad_fn) {
        saved = ct_retain((ct_tensor *)(uintptr_t)t);
    } else if (t) {
        saved = ct__alias(t);
        if (saved && t->grad_fn) {
            saved->grad_fn = t->grad_fn;
            CT__ATOMIC_ADD(&t->grad_fn->refcount, 1);
        }
    }
    n->saved[n->n_saved] = saved;
    n->saved_version[n->n_saved] = t ? t->storage->version : 0;
    n->saved_output[n->n_saved] = false;
    n->n_saved++;
}

void ct__save_output(ct_node *n, const ct_tensor *out)
{
    CT_ASSERT(n->n_saved < CT__NODE_SAVED);
    n->saved[n->n_saved] = out ? ct__alias(out) : NULL;
    n->saved_version[n->n_saved] = out ? out->storage->version : 0;
    n->saved_output[n->n_saved] = out != NULL;
    n->n_saved++;
}

const ct_tensor *ct__saved(ct_node *n, int k)
{
    const ct_tensor *t = n->saved[k];
    if (n->released) {
        ct__fail(CT_ERR_AUTOGRAD, n->name,
                 "Trying to backward through the graph a second "
                 "time (or directly access saved tensors after they have already been freed). "
                 "Specify retain_graph=True if you need to backward through the graph a second "
                 "time.");
        return NULL;
    }
    if (t && t->storage->version != n->saved_version[k]) {
        char buf[160];
        ct__fail(CT_ERR_AUTOGRAD, n->name,
                 "one of the variables needed for gradient "
                 "computation has been modified by an inplace operation: [%s %s] is at version "
                 "%u; expected version %u instead.",
                 ct_dtype_name(t->dtype), ct__shape_str(t->sizes, t->ndim, buf, sizeof buf),
                 t->storage->version, n->saved_version[k]);
        return NULL;
    }
    if (t && n->saved_output[k] && !ct__grad_off) { /* create_graph: the output's history */
        ct_tensor *a = ct__alias(t);
        if (a) {
            a->grad_fn = n;
            CT__ATOMIC_ADD(&n->refcount, 1);
        }
        return ct__scoped(a);
    }
    return t;
}

ct_tensor *ct__set_history(ct_tensor *out, ct_node *n)
{
    if (ct__node_failed) { /* ct__node_new refused: the op fails */
        ct__node_failed = false;
        ct__node_release(n);
        ct__release(out); /* not yet in a scope */
        return NULL;
    }
    if (out && n) {
        out->grad_fn = n;
    } else {
        ct__node_release(n);
    }
    return out;
}

static void ct__node_free_saved(ct_node *n)
{
    for (int k = 0; k < n->n_saved; k++) {
        ct__release(n->saved[k]);
        n->saved[k] = NULL;
    }
}

/* Nodes whose last reference was dropped, freed by the outermost ct__node_release in a loop
   so that releasing a long chain (or a saved tensor's history) never recurses deeply. */
static CT__THREAD_LOCAL ct_node **ct__dead_nodes = NULL;
static CT__THREAD_LOCAL int64_t ct__dead_len = 0, ct__dead_cap = 0;
static CT__THREAD_LOCAL bool ct__releasing = false;

static void ct__node_destroy(ct_node *n)
{
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
    if (n->retain_target) {
        n->retain_target->retains_grad = false;
    }
    ct__release(n->buffer);
    ct__free(n->next);
    ct__free(n);
}

void ct__node_release(ct_node *n)
{
    if (!n || CT__ATOMIC_ADD(&n->refcount, -1) > 0) {
        return;
    }
    if (ct__dead_len == ct__dead_cap) {
        int64_t cap = ct__dead_cap ? ct__dead_cap * 2 : 64;
        ct_node **dead = (ct_node **)ct__realloc(ct__dead_nodes, sizeof(ct_node *) * (size_t)cap);
        if (!dead) { /* out of memory: free it right away (recursively) instead */
            ct__node_destroy(n);
            return;
        }
        ct__dead_nodes = dead;
        ct__dead_cap = cap;
    }
    ct__dead_nodes[ct__dead_len++] = n;
    if (ct__releasing) {
        return; /* the outer call's loop frees it */
    }
    ct__releasing = true;
    while (ct__dead_len > 0) {
        ct__node_destroy(ct__dead_nodes[--ct__dead_len]);
    }
    ct__releasing = false;
    ct__free(ct__dead_nodes);
    ct__dead_nodes = NULL;
    ct__dead_cap = 0;
}

bool ct__check_inplace(const char *op, const ct_tensor *t)
{
    if (ct__grad_off) {
        return true;
    }
    if (t->requires_grad && !t->grad_fn) {
        ct__fail(CT_ERR_AUTOGRAD, op,
                 "a leaf Variable that requires grad is being used in an "
                 "in-place operation.");
        return false;
    }
    if (t->view_of == CT__VIEW_OF_LEAF) {
        ct__fail(CT_ERR_AUTOGRAD, op,
                 "a view of a leaf Variable that requires grad is being "
                 "used in an in-place operation.");
        return false;
    }
    if (t->view_of == CT__VIEW_OF_GRAPH) {
        ct__fail(CT_ERR_UNSUPPORTED, op,
                 "in-place operation on a view of a tensor that requires "
                 "grad: ctorch does not rebase the base's history (PyTorch's CopySlices); use the "
                 "out-of-place op, or modify the base");
        return false;
    }
    return true;
}

void ct__rebase_history(ct_tensor *t, ct_node *n)
{
    if (!n) {
        return;
    }
    if (t->grad_fn && t->grad_fn->retain_target == t) { /* retain_grad moves to the new node */
        t->grad_fn->retain_target = NULL;
        n->retain_target = t;
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
        /* keep g itself when nothing else can see it: made by this backward, unshared */
        bool own = g->refcount == 1 && g->storage->refcount == 1 && ct_is_contiguous(g) &&
                   !g->grad_fn && g->scope_depth == ct_scope_depth() - 1;
        leaf->grad = ct_retain(own || e->create_graph ? g : ct_contiguous(ct_clone(g)));
        if (leaf->grad && !e->create_graph) { /* made here: name it for CTORCH_DEBUG */
            ct__debug_track(leaf->grad, "ct_backward (a leaf's .grad)");
        }
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
    ct_tensor *buffer = n->buffer, *g = buffer; /* the buffer's reference is dropped below */
    n->buffer = NULL;
    if (g) {
        g = ct__run_hooks(n->pre_hooks, g);
        if (n->retain_target && !e->captured) {
            ct_tensor **slot = &n->retain_target->grad;
            if (*slot) {
                ct_add_(*slot, g, 1.0);
            } else {
                *slot = ct_retain(ct_clone(g));
            }
        }
        if (e->captured) {
            int i = ct__engine_input_index(e, NULL, n);
            if (i >= 0) {
                ct__engine_accumulate(&e->captured[i], g);
            }
        }
    }
    ct_tensor *gin_small[4] = {NULL, NULL, NULL, NULL};
    ct_tensor **gin = n->n_next <= 4
                          ? gin_small
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
    ct__release(buffer);
    if (gin != gin_small) {
        ct__free(gin);
    }
    if (!e->retain_graph) {
        for (int k = 0; k < n->n_saved; k++) {
            n->released = n->released || n->saved[k] != NULL;
        }
        ct__node_free_saved(n);
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
        ct_node *n = ct__heap_pop(e);
        ct__profiler_range_begin(true, "autograd::engine::evaluate_function: %s",
                                 ct__node_name(n));
        ok = ct__engine_run_node(e, n);
        ct__profiler_range_end();
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
            return ct__fail(CT_ERR_AUTOGRAD, op,
                            "element %d of tensors does not require grad "
                            "and does not have a grad_fn",
                            r);
        }
        const ct_tensor *go = grad_roots ? grad_roots[r] : NULL;
        if (!go && ct_numel(t) != 1) {
            return ct__fail(CT_ERR_AUTOGRAD, op,
                            "grad can be implicitly created only for "
                            "scalar outputs");
        }
        if (go && (go->ndim != t->ndim ||
                   memcmp(go->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim))) {
            char a[160], b[160];
            return ct__fail(CT_ERR_SHAPE, op,
                            "Mismatch in shape: grad_output[%d] has a shape "
                            "of %s and output[%d] has a shape of %s.",
                            r, ct__shape_str(go->sizes, go->ndim, a, sizeof a), r,
                            ct__shape_str(t->sizes, t->ndim, b, sizeof b));
        }
    }
    bool prev_off = ct__grad_off;
    ct__grad_off = !e->create_graph;
    ct_scope_begin();
    bool ok = ct__engine_discover(e, roots, n_roots);
    for (int r = 0; ok && r < n_roots; r++) {
        const ct_tensor *t = roots[r];
        ct_tensor *go =
            grad_roots && grad_roots[r] ? (ct_tensor *)(uintptr_t)grad_roots[r] : ct_ones_like(t);
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
    if (grad_output && ct__null_tensor("ct_backward", grad_output)) {
        return ct_error_code();
    }
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
            return ct__fail(CT_ERR_AUTOGRAD, op,
                            "One of the differentiated Tensors does not "
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
            return ct__fail(CT_ERR_AUTOGRAD, op,
                            "One of the differentiated Tensors appears to "
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
    if ((!fn && ct__null(op, NULL)) || ct__null(op, inputs)) {
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

CT__VECTORIZE_BEGIN

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

/* Fails with CT_ERR_VALUE unless r is one of the ct_reduction values. */
static bool ct__check_reduction(const char *op, ct_reduction r)
{
    return ct__check_enum(op, "reduction", (int)r, (int)CT_REDUCTION_NONE + 1);
}

/* the weight of class c (1 without weights) */
static double ct__class_weight(const ct_tensor *w, int64_t c)
{
    return w ? ct__load_f64(ct__data(w) + (size_t)(c * w->strides[0]) * ct_dtype_size(w->dtype),
                            w->dtype)
             : 1.0;
}

/* The constants of the nll/cross-entropy gradients, as (N, C) and (N) tensors of dtype:
   onehot[i, c] = [c == t_i] and wv[i] = w[t_i] (/ total_weight for mean), both 0 on ignored
   rows. With them the gradients are ctorch ops, so create_graph can differentiate them. */
static bool ct__nll_factors(const ct_node *n, const ct_tensor *target, const ct_tensor *w,
                            int64_t N, int64_t C, ct_dtype dtype, ct_tensor **onehot,
                            ct_tensor **wv)
{
    int64_t shape[2] = {N, C};
    *onehot = ct_zeros(shape, 2, dtype);
    *wv = ct_zeros(shape, 1, dtype);
    if (!*onehot || !*wv) {
        return false;
    }
    size_t es = ct_dtype_size(dtype);
    int64_t ts = target->ndim ? target->strides[0] : 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t c = ((const int64_t *)ct__data(target))[i * ts];
        if (c == n->i[1]) {
            continue;
        }
        double v = ct__class_weight(w, c);
        v /= n->i[0] == CT_REDUCTION_MEAN ? n->f[0] : 1.0;
        ct__store_f64(ct__data(*onehot) + (size_t)(i * C + c) * es, dtype, 1.0);
        ct__store_f64(ct__data(*wv) + (size_t)i * es, dtype, v);
    }
    return true;
}

/* (N, 1) column of per-row gradient scales: wv * g (g is 0-dim, or (N) for 'none') */
static ct_tensor *ct__nll_scale(const ct_tensor *wv, const ct_tensor *g, int64_t N)
{
    int64_t col[2] = {N, 1};
    return ct_reshape(ct_mul(wv, ct_reshape(g, col, g->ndim ? 1 : 0)), col, 2);
}

/* d nll / d input = -onehot * scale */
static void ct__nll_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *target = ct__saved(n, 0), *w = ct__saved(n, 1);
    const ct__edge *e = &n->next[0];
    int64_t N = e->ndim == 2 ? e->sizes[0] : 1, C = e->sizes[e->ndim - 1];
    ct_tensor *onehot = NULL, *wv = NULL;
    if (!target || !ct__nll_factors(n, target, w, N, C, g->dtype, &onehot, &wv)) {
        return;
    }
    gi[0] = ct_reshape(ct_neg(ct_mul(onehot, ct__nll_scale(wv, g, N))), e->sizes, e->ndim);
}

static bool ct__nll_check(const char *op, const ct_tensor *x, const ct_tensor *target,
                          const ct_tensor *w)
{
    if (!ct_dtype_is_floating_point(x->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"nll_loss\" not implemented for '%s'",
                 ct_dtype_name(x->dtype));
        return false;
    }
    if (target->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, op, "expected scalar type Long but found %s",
                 ct__dtype_title(target->dtype));
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
        ct__fail(CT_ERR_SHAPE, op,
                 "Expected input batch_size (%lld) to match target batch_size "
                 "(%lld).",
                 (long long)x->sizes[0], (long long)target->sizes[0]);
        return false;
    }
    int64_t C = x->sizes[x->ndim - 1];
    if (w && (w->ndim != 1 || w->sizes[0] != C || !ct_dtype_is_floating_point(w->dtype))) {
        ct__fail(CT_ERR_SHAPE, op,
                 "weight tensor should be defined either for all %lld classes "
                 "or no classes but got weight tensor of shape: [%lld]",
                 (long long)C, (long long)(w->ndim ? w->sizes[0] : 0));
        return false;
    }
    return true;
}

/* The nll forward: per-row losses l_i = -w[t_i] v_i (0 on ignored rows) into out ((N) for
   'none', else their sum or mean over w[t_i]), with v_i = x[i, t_i], or x[i, t_i] - lse[i]
   computed in x's dtype when lse (N) is given (cross-entropy's log-probability); total: the
   sum of w[t_i] over rows not ignored. False (reported) on a target out of bounds. */
static bool ct__nll_forward(const char *op, const ct_tensor *x, const ct_tensor *lse,
                            const ct_tensor *target, const ct_nll_loss_opts *o, ct_tensor *out,
                            double *total)
{
    ct_reduction red = ct__reduction(o->reduction);
    int64_t N = x->ndim == 2 ? x->sizes[0] : 1, C = x->sizes[x->ndim - 1];
    int64_t tstride = target->ndim ? target->strides[0] : 0;
    const int64_t *t = (const int64_t *)ct__data(target);
    size_t es = ct_dtype_size(x->dtype);
    int64_t xs0 = x->ndim == 2 ? x->strides[0] : 0, xs1 = x->strides[x->ndim - 1];
    double sum = 0;
    *total = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t c = t[i * tstride];
        double li = 0;
        if (c != o->ignore_index) {
            if (c < 0 || c >= C) {
                ct__fail(CT_ERR_INDEX, op, "Target %lld is out of bounds.", (long long)c);
                return false;
            }
            const char *xi = ct__data(x) + (size_t)(i * xs0 + c * xs1) * es;
            double v = ct__load_f64(xi, x->dtype);
            if (lse && x->dtype == CT_FLOAT32) {
                v = (double)(*(const float *)xi - ((const float *)ct__data(lse))[i]);
            } else if (lse) {
                v -= ((const double *)ct__data(lse))[i];
            }
            double wc = ct__class_weight(o->weight, c);
            li = fma(-wc, v, -0.0); /* -wc * v, a product never contracted into sum */
            *total += wc;
        }
        sum += li;
        if (red == CT_REDUCTION_NONE) {
            ct__store_f64(ct__data(out) + (size_t)i * es, x->dtype, li);
        }
    }
    if (red != CT_REDUCTION_NONE) {
        ct__store_f64(ct__data(out), x->dtype, red == CT_REDUCTION_MEAN ? sum / *total : sum);
    }
    return true;
}

/* What the nll and cross-entropy kernels hand to their nodes (c->state). */
typedef struct ct__nll_state {
    double total;     /* the summed weights of the counted targets */
    ct_tensor *lse;   /* cross-entropy: the rows' log-sum-exp (N), released by the caller */
} ct__nll_state;

/* The call's options: inputs self, target, weight (or NULL); attributes reduction,
   ignore_index. */
static ct_nll_loss_opts ct__nll_opts(const ct_op_call *c)
{
    ct_nll_loss_opts o;
    o.weight = c->inputs[2];
    o.reduction = (ct_reduction)c->attrs[0].i;
    o.ignore_index = c->attrs[1].i;
    return o;
}

/* Checks; the output is (N) for 'none', else 0-dim, in the input's dtype. */
static bool ct__nll_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *target = c->inputs[1];
    if (!ct__nll_check(c->fn, x, target, c->inputs[2])) {
        return false;
    }
    c->dtype = x->dtype;
    bool none = c->attrs[0].i == CT_REDUCTION_NONE;
    return ct__op_output(c, target->sizes, none ? target->ndim : 0, x->dtype) != NULL;
}

static ct_status ct__nll_kernel(ct_op_call *c)
{
    ct_nll_loss_opts o = ct__nll_opts(c);
    ct__nll_state *s = (ct__nll_state *)c->state;
    return ct__nll_forward(c->fn, c->inputs[0], NULL, c->inputs[1], &o, c->outputs[0], &s->total)
               ? CT_OK
               : ct_error_code();
}

/* Saves target and weight (and cross-entropy's lse and input first), the reduction, the
   ignored index and the total weight. */
static void ct__nll_record(ct_node *n, const ct_op_call *c)
{
    const ct__nll_state *s = (const ct__nll_state *)c->state;
    n->i[0] = c->attrs[0].i;
    n->i[1] = c->attrs[1].i;
    n->f[0] = s->total;
    if (s->lse) {
        ct__save(n, s->lse);
    }
    ct__save(n, c->inputs[1]);
    ct__save(n, c->inputs[2]);
    if (s->lse) {
        ct__save(n, c->inputs[0]);
    }
}

/* ---- fused cross-entropy on (N, C) logits ----------------------------------------------
 * Forward: lse_i = log(sum_c exp(x[i, c])) per row (ops/softmax.c's row kernel, one read of
 * x), then nll on x[i, t_i] - lse_i: no (N, C) intermediate. Backward: dx[i, c] =
 * s_i * (exp(x[i, c] - lse_i) - [c == t_i]) in one pass (one read of x, one write of dx),
 * with s_i = w[t_i] * g_i (/ total weight for mean), 0 on ignored rows. Rows are split over
 * the intra-op threads, each row computed by one thread: bit-exact across thread counts. */
typedef struct ct__xent_job {
    const ct_tensor *x, *target, *w;
    const double *g;
    const ct_tensor *lse;
    ct_tensor *dx;
    ct_reduction reduction;
    int64_t ignore_index;
    double total;
} ct__xent_job;

/* lse of rows [b, e), prefetching each next row */
#define CT__XENT_ROWS(T, S)                                                                \
    static void ct__xent_lse_##S(int64_t b, int64_t e, void *ctx)                          \
    {                                                                                      \
        const ct__xent_job *j = (const ct__xent_job *)ctx;                                 \
        int64_t C = j->x->sizes[1];                                                        \
        const T *x = (const T *)ct__data(j->x);                                            \
        T *lse = (T *)ct__data(j->lse);                                                    \
        for (int64_t i = b; i < e; i++) {                                                  \
            const T *xi = x + i * C;                                                       \
            lse[i] = ct__softmax_row_##S(xi, NULL, C, CT__SOFTMAX_LSE, i + 1 < e, false);  \
        }                                                                                  \
    }                                                                                      \
    static void ct__xent_grad_##S(int64_t b, int64_t e, void *ctx)                         \
    {                                                                                      \
        const ct__xent_job *j = (const ct__xent_job *)ctx;                                 \
        int64_t C = j->x->sizes[1], ignore = j->ignore_index;                              \
        ct_reduction red = j->reduction;                                                   \
        const int64_t *t = (const int64_t *)ct__data(j->target);                           \
        const T *x = (const T *)ct__data(j->x), *lse = (const T *)ct__data(j->lse);        \
        for (int64_t i = b; i < e; i++) {                                                  \
            int64_t c = t[i * j->target->strides[0]];                                      \
            double s = 0;                                                                  \
            if (c != ignore) {                                                             \
                s = ct__class_weight(j->w, c) * (red == CT_REDUCTION_NONE ? j->g[i] : j->g[0]); \
                s /= red == CT_REDUCTION_MEAN ? j->total : 1.0;                            \
            }                                                                              \
            T *d = (T *)ct__data(j->dx) + i * C;                                           \
            ct__exp_row_##S(x + i * C, d, C, lse[i], (T)s, i + 1 < e, false);              \
            if (c != ignore) {                                                             \
                d[c] -= (T)s;                                                              \
            }                                                                              \
        }                                                                                  \
    }
CT__XENT_ROWS(float, f32)
CT__XENT_ROWS(double, f64)
#undef CT__XENT_ROWS

/* A job over x (N, C) contiguous, target (N), weight w (or NULL) and the options. */
static ct__xent_job ct__xent_job_of(const ct_tensor *x, const ct_tensor *target,
                                    const ct_tensor *w, ct_reduction reduction,
                                    int64_t ignore_index)
{
    ct__xent_job j;
    j.x = x;
    j.target = target;
    j.w = w;
    j.g = NULL;
    j.lse = NULL;
    j.dx = NULL;
    j.reduction = ct__reduction(reduction);
    j.ignore_index = ignore_index;
    j.total = 0;
    return j;
}

/* t itself when it is contiguous in dtype, else a contiguous copy (a new reference either
   way; NULL when out of memory). */
static ct_tensor *ct__contiguous_as(const char *fn, const ct_tensor *t, ct_dtype dtype)
{
    if (t->dtype == dtype && ct_is_contiguous(t)) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *r = ct__tensor_new(fn, t->sizes, t->ndim, dtype);
    if (r) {
        ct__copy_kernel(r, t);
    }
    return r;
}

/* Forward: lse (N) per row, then nll on x[i, t_i] - lse_i. The lse goes to the node through
   c->state. */
static ct_status ct__cross_entropy_kernel(ct_op_call *c)
{
    ct__nll_state *s = (ct__nll_state *)c->state;
    const ct_tensor *x = c->inputs[0];
    ct_tensor *xc = ct__contiguous_as(c->fn, x, x->dtype);
    s->lse = xc ? ct__tensor_new(c->fn, xc->sizes, 1, xc->dtype) : NULL;
    bool ok = s->lse != NULL;
    if (ok) {
        ct_nll_loss_opts o = ct__nll_opts(c);
        ct__xent_job j = ct__xent_job_of(xc, c->inputs[1], o.weight, o.reduction,
                                         o.ignore_index);
        j.lse = s->lse;
        int64_t C = x->sizes[1];
        ct__parallel_for(x->sizes[0], CT__GRAIN / (C ? C : 1) + 1,
                         x->dtype == CT_FLOAT32 ? ct__xent_lse_f32 : ct__xent_lse_f64, &j);
        ok = ct__nll_forward(c->fn, xc, s->lse, c->inputs[1], &o, c->outputs[0], &s->total);
    }
    ct__release(xc);
    return ok ? CT_OK : ct_error_code();
}

/* The fused backward op: inputs grad (the loss's shape), self (N, C) contiguous, lse (N),
   target, weight (or NULL); attributes reduction, ignore_index, total_weight. dx (N, C). */
static bool ct__cross_entropy_bw_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[1];
    c->dtype = x->dtype;
    return ct__op_output(c, x->sizes, 2, x->dtype) != NULL;
}

static ct_status ct__cross_entropy_bw_kernel(ct_op_call *c)
{
    ct_tensor *gc = ct__contiguous_as(c->fn, c->inputs[0], CT_FLOAT64);
    if (!gc) {
        return ct_error_code();
    }
    ct__xent_job j = ct__xent_job_of(c->inputs[1], c->inputs[3], c->inputs[4],
                                     (ct_reduction)c->attrs[0].i, c->attrs[1].i);
    j.g = (const double *)ct__data(gc);
    j.lse = c->inputs[2];
    j.dx = c->outputs[0];
    j.total = c->attrs[2].f;
    const ct_tensor *x = c->inputs[1];
    int64_t C = x->sizes[1];
    ct__parallel_for(x->sizes[0], CT__GRAIN / (C ? C : 1) + 1,
                     x->dtype == CT_FLOAT32 ? ct__xent_grad_f32 : ct__xent_grad_f64, &j);
    ct__release(gc);
    return CT_OK;
}

static ct_tensor *ct__cross_entropy_grad(const ct_node *n, const ct_tensor *x,
                                         const ct_tensor *lse, const ct_tensor *target,
                                         const ct_tensor *w, const ct_tensor *g);

/* dx = (softmax(x) - onehot) * scale: the fused op, or, under create_graph, ops on
   softmax(x) so the gradient has history. Saved: lse, target, weight, x. */
static void ct__cross_entropy_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *lse = ct__saved(n, 0), *target = ct__saved(n, 1), *w = ct__saved(n, 2);
    const ct_tensor *x = ct__saved(n, 3);
    ct_tensor *onehot = NULL, *wv = NULL;
    if (!lse || !target || !x) {
        return;
    }
    int64_t N = x->sizes[0], C = x->sizes[1];
    if (!ct_is_grad_enabled()) { /* the usual backward: one fused pass */
        gi[0] = ct__cross_entropy_grad(n, ct_contiguous(x), lse, target, w, g);
        return;
    }
    if (!ct__nll_factors(n, target, w, N, C, x->dtype, &onehot, &wv)) {
        return;
    }
    gi[0] = ct_mul(ct_sub(ct_softmax(x, 1), onehot), ct__nll_scale(wv, g, N));
}

/* mse_loss (composite): (input - target)^2, reduced; attribute: reduction */
static ct_status ct__mse_loss_composite(ct_op_call *c)
{
    ct_reduction red = ct__reduction((ct_reduction)c->attrs[0].i);
    ct_scope_begin();
    ct_tensor *d = ct_square(ct_sub(c->inputs[0], c->inputs[1]));
    ct_tensor *r = red == CT_REDUCTION_NONE ? d : red == CT_REDUCTION_SUM ? ct_sum(d) : ct_mean(d);
    return ct__composite_end(c, r);
}

/* ---- descriptors ------------------------------------------------------------------------ */
/* The reduction attribute holds a ct_reduction (PyTorch's int enum differs: None 0, Mean 1,
   Sum 2). cross_entropy_loss is fused on (N, C) logits (one op, one node, PyTorch's name
   NllLossBackward0); other shapes run log_softmax and nll_loss. ctorch's fused backward of
   it, ctorch::cross_entropy_loss_backward, runs when the gradient needs no graph. nll_loss's
   own backward is written with ops (ct__nll_backward). */
#define CT__LOSS_OP(SYM, NAME, SCHEMA, API, OPT, META, K, COMP, NODE, BW, RECORD)               \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, 0,    \
                                       OPT, NULL, META, K, COMP, NODE, BW, 0u, RECORD, NULL};
CT__LOSS_OP(nll_loss, "aten::nll_loss", "nll_loss(Tensor self, Tensor target, Tensor? "
            "weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor", "ct_nll_loss",
            1u << 2, ct__nll_meta, CT__K_FLOAT(ct__nll_kernel), NULL, "NllLossBackward0",
            ct__nll_backward, ct__nll_record)
CT__LOSS_OP(cross_entropy, "aten::cross_entropy_loss", "cross_entropy_loss(Tensor self, Tensor "
            "target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100, float "
            "label_smoothing=0.0) -> Tensor", "ct_cross_entropy", 1u << 2, ct__nll_meta,
            CT__K_FLOAT(ct__cross_entropy_kernel), NULL, "NllLossBackward0",
            ct__cross_entropy_backward, ct__nll_record)
CT__LOSS_OP(cross_entropy_backward, "ctorch::cross_entropy_loss_backward",
            "cross_entropy_loss_backward(Tensor grad_output, Tensor self, Tensor lse, Tensor "
            "target, Tensor? weight, int reduction, SymInt ignore_index, float total_weight) -> "
            "Tensor", "ct_backward (cross_entropy)", 1u << 4, ct__cross_entropy_bw_meta,
            CT__K_FLOAT(ct__cross_entropy_bw_kernel), NULL, NULL, NULL, NULL)
CT__LOSS_OP(mse_loss, "aten::mse_loss", "mse_loss(Tensor self, Tensor target, int "
            "reduction=Mean) -> Tensor", "ct_mse_loss", 0u, NULL, CT__K_NONE,
            ct__mse_loss_composite, NULL, NULL, NULL)
#undef CT__LOSS_OP

/* ---- public functions ---------------------------------------------------------------------- */
/* nll_loss or the fused cross-entropy: the call, its state, the lse released after */
static ct_tensor *ct__call_nll(const ct_op *op, const char *fn, const ct_tensor *x,
                               const ct_tensor *target, const ct_nll_loss_opts *o)
{
    const ct_tensor *in[3] = {x, target, o->weight};
    ct__nll_state s = {0, NULL};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 3);
    ct__call_i(&c, ct__reduction(o->reduction));
    ct__call_i(&c, o->ignore_index);
    c.state = &s;
    ct_tensor *r = ct__dispatch(&c);
    ct__release(s.lse);
    return r;
}

/* the fused backward: dx (N, C) from the contiguous logits x and their lse */
static ct_tensor *ct__cross_entropy_grad(const ct_node *n, const ct_tensor *x,
                                         const ct_tensor *lse, const ct_tensor *target,
                                         const ct_tensor *w, const ct_tensor *g)
{
    const ct_tensor *in[5] = {g, x, lse, target, w};
    ct_op_call c;
    ct__call_init(&c, &ct__op_cross_entropy_backward, "ct_cross_entropy_backward", in, 5);
    ct__call_i(&c, n->i[0]);
    ct__call_i(&c, n->i[1]);
    ct__call_f(&c, n->f[0]);
    return ct__dispatch(&c);
}

ct_tensor *ct_nll_loss(const ct_tensor *x, const ct_tensor *target, const ct_nll_loss_opts *opts)
{
    const char *fn = "ct_nll_loss";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    if (!ct__check_reduction(fn, o.reduction)) {
        return NULL;
    }
    return ct__call_nll(&ct__op_nll_loss, fn, x, target, &o);
}

ct_tensor *ct_cross_entropy(const ct_tensor *x, const ct_tensor *target,
                            const ct_nll_loss_opts *opts)
{
    const char *fn = "ct_cross_entropy";
    ct_nll_loss_opts o = opts ? *opts : ct_nll_loss_defaults();
    if (ct__null(fn, x) || ct__null(fn, target) || !ct__check_reduction(fn, o.reduction)) {
        return NULL;
    }
    if (x->ndim == 2) {
        return ct__call_nll(&ct__op_cross_entropy, fn, x, target, &o);
    }
    ct_scope_begin(); /* not (N, C): log_softmax (over dim 0 of 1-D logits), then nll_loss */
    ct_tensor *r = ct_keep(ct_nll_loss(ct_log_softmax(x, x->ndim == 1 ? 0 : 1), target, opts));
    ct_scope_end();
    return r;
}

ct_tensor *ct_mse_loss(const ct_tensor *x, const ct_tensor *target, ct_reduction reduction)
{
    if (!ct__check_reduction("ct_mse_loss", reduction)) {
        return NULL;
    }
    const ct_tensor *in[2] = {x, target};
    ct_op_call c;
    ct__call_init(&c, &ct__op_mse_loss, "ct_mse_loss", in, 2);
    ct__call_i(&c, reduction);
    return ct__dispatch(&c);
}

CT__VECTORIZE_END

// >>part nn/init.c
/* nn/init.c - torch.nn.init as torch/nn/init.py writes it: the dispatched ops uniform_, normal_
 * and fill_ under no_grad (so each initializer shows as those ops to hooks and the profiler).
 *
 * The bounds are computed as torch/nn/init.py computes them in Python doubles, one rounding
 * per operation: the one product that feeds a sum (1 + slope^2) is rounded on its own by
 * ct__init_square, so -ffp-contract cannot fuse it and change the bound's last bit.
 */

/* x * x rounded to double by itself: an fma with a +0 addend is that product (a zero's
   sign aside), and being a call it is never fused into the caller's following add. */
static double ct__init_square(double x)
{
    return fma(x, x, 0.0);
}

double ct_init_calculate_gain(ct_nonlinearity nl, double param)
{
    switch (nl) {
    case CT_NONLINEARITY_TANH: return 5.0 / 3.0;
    case CT_NONLINEARITY_RELU: return sqrt(2.0);
    case CT_NONLINEARITY_LEAKY_RELU: return sqrt(2.0 / (1.0 + ct__init_square(param)));
    case CT_NONLINEARITY_SELU: return 3.0 / 4.0;
    case CT_NONLINEARITY_LINEAR:
    case CT_NONLINEARITY_SIGMOID: return 1.0;
    default:
        ct__fail(CT_ERR_VALUE, "ct_init_calculate_gain", "Unsupported nonlinearity %d", (int)nl);
        return NAN;
    }
}

ct_status ct_init_calculate_fan_in_and_fan_out(const ct_tensor *t, int64_t *fan_in,
                                               int64_t *fan_out)
{
    const char *op = "ct_init_calculate_fan_in_and_fan_out";
    if (ct__null(op, t)) {
        return ct_error_code();
    }
    if (t->ndim < 2) {
        return ct__fail(CT_ERR_SHAPE, op, "Fan in and fan out can not be computed for tensor "
                        "with fewer than 2 dimensions");
    }
    int64_t receptive = 1;
    for (int d = 2; d < t->ndim; d++) {
        receptive *= t->sizes[d];
    }
    if (fan_in) {
        *fan_in = t->sizes[1] * receptive;
    }
    if (fan_out) {
        *fan_out = t->sizes[0] * receptive;
    }
    return CT_OK;
}

/* Runs fill on t without recording history (the parameter is a leaf requiring grad). */
static ct_tensor *ct__init_fill(ct_tensor *t, double a, double b, bool normal, ct_generator *g)
{
    ct_no_grad_begin();
    ct_tensor *r = normal ? ct_normal_(t, a, b, g) : ct_uniform_(t, a, b, g);
    ct_no_grad_end();
    return r;
}

ct_tensor *ct_init_uniform_(ct_tensor *t, double a, double b, ct_generator *g)
{
    return ct__init_fill(t, a, b, false, g);
}

ct_tensor *ct_init_normal_(ct_tensor *t, double mean, double std, ct_generator *g)
{
    return ct__init_fill(t, mean, std, true, g);
}

ct_tensor *ct_init_constant_(ct_tensor *t, double value)
{
    ct_no_grad_begin();
    ct_tensor *r = ct_fill_(t, value);
    ct_no_grad_end();
    return r;
}

ct_tensor *ct_init_zeros_(ct_tensor *t) { return ct_init_constant_(t, 0.0); }

ct_tensor *ct_init_ones_(ct_tensor *t) { return ct_init_constant_(t, 1.0); }

/* gain / sqrt(fan) for the kaiming initializers; NAN on error */
static double ct__kaiming_std(const char *op, const ct_tensor *t, double a, ct_fan_mode mode,
                              ct_nonlinearity nl)
{
    int64_t fan_in = 0, fan_out = 0;
    if (mode != CT_FAN_IN && mode != CT_FAN_OUT) {
        ct__fail(CT_ERR_VALUE, op, "Mode %d not supported, please use one of "
                 "CT_FAN_IN, CT_FAN_OUT", (int)mode);
        return NAN;
    }
    if (ct_init_calculate_fan_in_and_fan_out(t, &fan_in, &fan_out) != CT_OK) {
        return NAN;
    }
    int64_t fan = mode == CT_FAN_OUT ? fan_out : fan_in;
    if (fan == 0) {
        return 0.0; /* PyTorch warns "Initializing zero-element tensors is a no-op" */
    }
    return ct_init_calculate_gain(nl, a) / sqrt((double)fan);
}

ct_tensor *ct_init_kaiming_uniform_(ct_tensor *t, double a, ct_fan_mode mode,
                                    ct_nonlinearity nl, ct_generator *g)
{
    double bound = sqrt(3.0) * ct__kaiming_std("ct_init_kaiming_uniform_", t, a, mode, nl);
    return isnan(bound) ? NULL : ct__init_fill(t, -bound, bound, false, g);
}

ct_tensor *ct_init_kaiming_normal_(ct_tensor *t, double a, ct_fan_mode mode, ct_nonlinearity nl,
                                   ct_generator *g)
{
    double std = ct__kaiming_std("ct_init_kaiming_normal_", t, a, mode, nl);
    return isnan(std) ? NULL : ct__init_fill(t, 0.0, std, true, g);
}

/* gain * sqrt(2 / (fan_in + fan_out)); NAN on error */
static double ct__xavier_std(const ct_tensor *t, double gain)
{
    int64_t fan_in = 0, fan_out = 0;
    if (ct_init_calculate_fan_in_and_fan_out(t, &fan_in, &fan_out) != CT_OK) {
        return NAN;
    }
    return gain * sqrt(2.0 / (double)(fan_in + fan_out));
}

ct_tensor *ct_init_xavier_uniform_(ct_tensor *t, double gain, ct_generator *g)
{
    double bound = sqrt(3.0) * ct__xavier_std(t, gain);
    return isnan(bound) ? NULL : ct__init_fill(t, -bound, bound, false, g);
}

ct_tensor *ct_init_xavier_normal_(ct_tensor *t, double gain, ct_generator *g)
{
    double std = ct__xavier_std(t, gain);
    return isnan(std) ? NULL : ct__init_fill(t, 0.0, std, true, g);
}

// >>part nn/module.c
/* nn/module.c - the module object and the built-in layers. */


typedef struct ct__named {
    char name[32];
    ct_tensor *tensor; /* parameters and buffers */
    ct_module *module; /* submodules */
} ct__named;

typedef struct ct__named_list {
    ct__named *items;
    int64_t len, cap;
} ct__named_list;

struct ct_module {
    char name[32];
    ct_module_forward_fn forward;
    void *user;
    void (*user_free)(void *user);
    bool training;
    ct__named_list params, buffers, children;
    int64_t cfg[2]; /* layer settings (Flatten's dims) */
};

ct_module *ct_module_new(const char *name, ct_module_forward_fn forward, void *user,
                         void (*user_free)(void *user))
{
    const char *op = "ct_module_new";
    if (ct__null(op, name) || (!forward && ct__null(op, NULL))) {
        return NULL;
    }
    ct_module *m = (ct_module *)ct__calloc(sizeof(ct_module));
    if (!m) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    m->forward = forward;
    m->user = user;
    m->user_free = user_free;
    m->training = true;
    return m;
}

static void ct__named_list_free(ct__named_list *l)
{
    for (int64_t i = 0; i < l->len; i++) {
        ct__release(l->items[i].tensor);
        ct_module_free(l->items[i].module);
    }
    ct__free(l->items);
}

void ct_module_free(ct_module *m)
{
    if (!m) {
        return;
    }
    ct__named_list_free(&m->params);
    ct__named_list_free(&m->buffers);
    ct__named_list_free(&m->children);
    if (m->user_free) {
        m->user_free(m->user);
    }
    ct__free(m);
}

ct_tensor *ct_module_forward(ct_module *m, const ct_tensor *input)
{
    if (ct__null("ct_module_forward", m) || ct__null("ct_module_forward", input)) {
        return NULL;
    }
    return m->forward(m, input);
}

const char *ct_module_name(const ct_module *m)
{
    return ct__null("ct_module_name", m) ? NULL : m->name;
}

void *ct_module_user(const ct_module *m)
{
    return ct__null("ct_module_user", m) ? NULL : m->user;
}

static bool ct__named_add(const char *op, ct_module *m, ct__named_list *l, const char *name,
                          ct_tensor *t, ct_module *child)
{
    if (ct__null(op, m) || ct__null(op, name) || (!t && !child && ct__null(op, NULL))) {
        return false;
    }
    if (strlen(name) >= sizeof l->items[0].name || strchr(name, '.') || !name[0]) {
        ct__fail(CT_ERR_VALUE, op, "name \"%s\" must be 1 to 31 characters without \".\"", name);
        return false;
    }
    ct__named_list *all[3] = {&m->params, &m->buffers, &m->children};
    for (int k = 0; k < 3; k++) {
        for (int64_t i = 0; i < all[k]->len; i++) {
            if (strcmp(all[k]->items[i].name, name) == 0) {
                ct__fail(CT_ERR_VALUE, op, "attribute '%s' already exists", name);
                return false;
            }
        }
    }
    if (l->len == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 4;
        ct__named *items = (ct__named *)ct__realloc(l->items, sizeof(ct__named) * (size_t)cap);
        if (!items) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return false;
        }
        l->items = items;
        l->cap = cap;
    }
    ct__named *e = &l->items[l->len++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->tensor = t ? ct_retain(t) : NULL;
    e->module = child;
    return true;
}

ct_status ct_module_register_parameter(ct_module *m, const char *name, ct_tensor *p)
{
    const char *op = "ct_module_register_parameter";
    if (ct__null(op, p) || !ct_requires_grad_(p, true)) {
        return ct_error_code();
    }
    return ct__named_add(op, m, m ? &m->params : NULL, name, p, NULL) ? CT_OK : ct_error_code();
}

ct_status ct_module_register_buffer(ct_module *m, const char *name, ct_tensor *b)
{
    const char *op = "ct_module_register_buffer";
    if (ct__null(op, b)) {
        return ct_error_code();
    }
    return ct__named_add(op, m, m ? &m->buffers : NULL, name, b, NULL) ? CT_OK : ct_error_code();
}

ct_status ct_module_register_module(ct_module *m, const char *name, ct_module *child)
{
    const char *op = "ct_module_register_module";
    if (ct__null(op, child)) {
        return ct_error_code();
    }
    return ct__named_add(op, m, m ? &m->children : NULL, name, NULL, child) ? CT_OK
                                                                            : ct_error_code();
}

/* Visits the parameters of m recursively with their dotted names. */
static int64_t ct__collect(const ct_module *m, const char *prefix, char **names, size_t name_cap,
                           ct_tensor **params, int64_t cap, int64_t count)
{
    for (int64_t i = 0; i < m->params.len; i++, count++) {
        if (count < cap && params) {
            params[count] = m->params.items[i].tensor;
        }
        if (count < cap && names && name_cap) {
            snprintf(names[count], name_cap, "%s%s", prefix, m->params.items[i].name);
        }
    }
    for (int64_t i = 0; i < m->children.len; i++) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s.", prefix, m->children.items[i].name);
        count = ct__collect(m->children.items[i].module, sub, names, name_cap, params, cap, count);
    }
    return count;
}

int64_t ct_module_parameters(const ct_module *m, ct_tensor **params, int64_t cap)
{
    return ct__null("ct_module_parameters", m) ? 0 : ct__collect(m, "", NULL, 0, params, cap, 0);
}

int64_t ct_module_named_parameters(const ct_module *m, char **names, size_t name_cap,
                                   ct_tensor **params, int64_t cap)
{
    return ct__null("ct_module_named_parameters", m)
               ? 0
               : ct__collect(m, "", names, name_cap, params, cap, 0);
}

ct_tensor *ct_module_get_parameter(const ct_module *m, const char *name)
{
    if (ct__null("ct_module_get_parameter", m) || ct__null("ct_module_get_parameter", name)) {
        return NULL;
    }
    const char *dot = strchr(name, '.');
    if (dot) {
        for (int64_t i = 0; i < m->children.len; i++) {
            const ct__named *c = &m->children.items[i];
            if (strlen(c->name) == (size_t)(dot - name) &&
                strncmp(c->name, name, (size_t)(dot - name)) == 0) {
                return ct_module_get_parameter(c->module, dot + 1);
            }
        }
        return NULL;
    }
    const ct__named_list *lists[2] = {&m->params, &m->buffers};
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; i < lists[k]->len; i++) {
            if (strcmp(lists[k]->items[i].name, name) == 0) {
                return lists[k]->items[i].tensor;
            }
        }
    }
    return NULL;
}

ct_module *ct_module_child(const ct_module *m, int64_t i)
{
    if (ct__null("ct_module_child", m)) {
        return NULL;
    }
    return i >= 0 && i < m->children.len ? m->children.items[i].module : NULL;
}

int64_t ct_module_num_children(const ct_module *m)
{
    return ct__null("ct_module_num_children", m) ? 0 : m->children.len;
}

void ct_module_train(ct_module *m, bool mode)
{
    if (ct__null("ct_module_train", m)) {
        return;
    }
    m->training = mode;
    for (int64_t i = 0; i < m->children.len; i++) {
        ct_module_train(m->children.items[i].module, mode);
    }
}

void ct_module_eval(ct_module *m)
{
    ct_module_train(m, false);
}

bool ct_module_is_training(const ct_module *m)
{
    return !ct__null("ct_module_is_training", m) && m->training;
}

void ct_module_zero_grad(ct_module *m, bool set_to_none)
{
    if (ct__null("ct_module_zero_grad", m)) {
        return;
    }
    for (int64_t i = 0; i < m->params.len; i++) {
        ct_tensor *p = m->params.items[i].tensor;
        if (set_to_none) {
            ct_set_grad(p, NULL);
        } else if (ct_grad(p)) {
            ct_no_grad_begin();
            ct_zero_(ct_grad(p));
            ct_no_grad_end();
        }
    }
    for (int64_t i = 0; i < m->children.len; i++) {
        ct_module_zero_grad(m->children.items[i].module, set_to_none);
    }
}

/* ---- layers ------------------------------------------------------------------------- */
static ct_tensor *ct__linear_forward(ct_module *m, const ct_tensor *x)
{
    return ct_linear(x, ct_module_get_parameter(m, "weight"), ct_module_get_parameter(m, "bias"));
}

/* A new float32 parameter registered on m; false on error. */
static ct_tensor *ct__new_param(ct_module *m, const char *name, const int64_t *sizes, int ndim)
{
    ct_tensor *p = ct__tensor_new("ct_linear_new", sizes, ndim, CT_FLOAT32);
    if (!p) {
        return NULL;
    }
    ct_status st = ct_module_register_parameter(m, name, p);
    ct__release(p); /* the module holds it */
    return st == CT_OK ? p : NULL;
}

ct_module *ct_linear_new(int64_t in_features, int64_t out_features, bool bias)
{
    if (in_features < 0 || out_features < 0) {
        ct__fail(CT_ERR_VALUE, "ct_linear_new",
                 "in_features (%lld) and out_features (%lld) must "
                 "be non-negative",
                 (long long)in_features, (long long)out_features);
        return NULL;
    }
    ct_module *m = ct_module_new("Linear", ct__linear_forward, NULL, NULL);
    int64_t wshape[2] = {out_features, in_features};
    ct_tensor *w = m ? ct__new_param(m, "weight", wshape, 2) : NULL;
    bool ok =
        w && ct_init_kaiming_uniform_(w, sqrt(5.0), CT_FAN_IN, CT_NONLINEARITY_LEAKY_RELU, NULL);
    if (ok && bias) {
        ct_tensor *b = ct__new_param(m, "bias", &out_features, 1);
        double bound = in_features > 0 ? 1.0 / sqrt((double)in_features) : 0.0;
        ok = b && ct_init_uniform_(b, -bound, bound, NULL);
    }
    if (!ok) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

static ct_tensor *ct__relu_forward(ct_module *m, const ct_tensor *x);

static ct_tensor *ct__sequential_forward(ct_module *m, const ct_tensor *x)
{
    if (m->children.len == 0) {
        return ct_alias(x);
    }
    ct_scope_begin();
    const ct_tensor *h = x;
    for (int64_t i = 0; i < m->children.len && h; i++) {
        ct_module *c = m->children.items[i].module;
        ct_module *next = i + 1 < m->children.len ? m->children.items[i + 1].module : NULL;
        if (next && c->forward == ct__linear_forward && next->forward == ct__relu_forward) {
            /* Linear then ReLU: one fused op, the same numbers */
            h = ct__linear_relu(h, ct_module_get_parameter(c, "weight"),
                                ct_module_get_parameter(c, "bias"));
            i++;
            continue;
        }
        h = ct_module_forward(c, h);
    }
    ct_tensor *out = ct_keep((ct_tensor *)(uintptr_t)h);
    ct_scope_end();
    return out;
}

ct_module *ct_sequential_new(void)
{
    return ct_module_new("Sequential", ct__sequential_forward, NULL, NULL);
}

ct_module *ct_sequential_append(ct_module *seq, ct_module *child)
{
    if (ct__null("ct_sequential_append", seq) || ct__null("ct_sequential_append", child)) {
        ct_module_free(child);
        return NULL;
    }
    char name[32];
    snprintf(name, sizeof name, "%lld", (long long)seq->children.len);
    if (ct_module_register_module(seq, name, child) != CT_OK) {
        ct_module_free(child);
        return NULL;
    }
    return seq;
}

static ct_tensor *ct__flatten_forward(ct_module *m, const ct_tensor *x)
{
    return ct_flatten(x, m->cfg[0], m->cfg[1]);
}

ct_module *ct_flatten_new(int64_t start_dim, int64_t end_dim)
{
    ct_module *m = ct_module_new("Flatten", ct__flatten_forward, NULL, NULL);
    if (m) {
        m->cfg[0] = start_dim;
        m->cfg[1] = end_dim;
    }
    return m;
}

static ct_tensor *ct__relu_forward(ct_module *m, const ct_tensor *x)
{
    (void)m;
    return ct_relu(x);
}

static ct_tensor *ct__identity_forward(ct_module *m, const ct_tensor *x)
{
    (void)m;
    return ct_alias(x);
}

static ct_tensor *ct__sigmoid_forward(ct_module *m, const ct_tensor *x)
{
    (void)m;
    return ct_sigmoid(x);
}

static ct_tensor *ct__tanh_forward(ct_module *m, const ct_tensor *x)
{
    (void)m;
    return ct_tanh(x);
}

ct_module *ct_relu_new(void)
{
    return ct_module_new("ReLU", ct__relu_forward, NULL, NULL);
}

ct_module *ct_identity_new(void)
{
    return ct_module_new("Identity", ct__identity_forward, NULL, NULL);
}

ct_module *ct_sigmoid_new(void)
{
    return ct_module_new("Sigmoid", ct__sigmoid_forward, NULL, NULL);
}

ct_module *ct_tanh_new(void)
{
    return ct_module_new("Tanh", ct__tanh_forward, NULL, NULL);
}

// >>part optim/optim.c
/* optim/optim.c - SGD, Adam and AdamW as fused per-parameter loops, each parameter's update
 * one call of the in-place op PyTorch's fused optimizers call (aten::_fused_sgd_,
 * aten::_fused_adam_, aten::_fused_adamw_) through the one entry.
 *
 * Legend: n = numel of one parameter; P (n) the parameter's data, G (n) its gradient, both
 * contiguous in the parameter's dtype (a copy is made otherwise); SGD state B (n) =
 * momentum_buffer; Adam state M (n) = exp_avg, V (n) = exp_avg_sq, VM (n) = max_exp_avg_sq
 * (state tensors owned by the optimizer).
 * Each step reads every array once and writes P and the state once, with no temporary
 * tensors; elements are independent, so a large parameter is split across the intra-op
 * threads in contiguous chunks (ct__parallel_for).
 * The arithmetic follows torch.optim's single-tensor path op by op (same operand order,
 * hyperparameters rounded to the parameter's dtype, as PyTorch's scalar arguments are),
 * without fused multiply-adds. Adam has an AVX-512 / AVX2 path doing the same IEEE
 * operations lane by lane (sqrt and division are correctly rounded), so it matches the
 * scalar path bit for bit and results do not depend on the thread count.
 */

CT__VECTORIZE_BEGIN


#if !defined(CTORCH_NO_SIMD) && (defined(CT__HAS_AVX512) || defined(CT__HAS_AVX2))
#include <immintrin.h>
#endif

enum { CT__OPTIM_SGD = 1, CT__OPTIM_ADAM = 2, CT__OPTIM_ADAMW = 3 };

/* The hyperparameters of one parameter group (the union of SGD's and Adam's). */
typedef struct ct__optim_group {
    double lr, momentum, dampening, weight_decay, beta1, beta2, eps;
    bool nesterov, amsgrad, maximize;
    int64_t first, count; /* its parameters: params[first, first + count) */
} ct__optim_group;

typedef struct ct__optim_param {
    ct_tensor *p;     /* retained */
    int64_t step;     /* updates so far (Adam's state['step']) */
    bool has_state;   /* state allocated (SGD: the momentum buffer holds a value) */
    ct_tensor *state[3]; /* SGD: momentum_buffer; Adam: exp_avg, exp_avg_sq, max_exp_avg_sq
                            (contiguous, the parameter's shape and dtype; NULL when unused) */
} ct__optim_param;

struct ct_optimizer {
    int kind;
    ct__optim_group defaults; /* the constructor's options, for add_param_group(NULL) */
    ct__optim_group *groups;
    int64_t n_groups;
    ct__optim_param *params;
    int64_t n_params;
    int64_t steps;
};

/* ---- defaults and validation --------------------------------------------------------- */
ct_sgd_opts ct_sgd_defaults(void)
{
    ct_sgd_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1e-3;
    o.momentum = 0.0;
    o.dampening = 0.0;
    o.weight_decay = 0.0;
    o.nesterov = false;
    o.maximize = false;
    return o;
}

ct_adam_opts ct_adam_defaults(void)
{
    ct_adam_opts o;
    memset(&o, 0, sizeof o);
    o.lr = 1e-3;
    o.betas[0] = 0.9;
    o.betas[1] = 0.999;
    o.eps = 1e-8;
    o.weight_decay = 0.0;
    o.amsgrad = false;
    o.maximize = false;
    return o;
}

ct_adam_opts ct_adamw_defaults(void)
{
    ct_adam_opts o = ct_adam_defaults();
    o.weight_decay = 1e-2;
    return o;
}

/* Formats v as Python's repr(float) does ("-1.0", "1e-05", "0.001", "nan") into buf. */
static const char *ct__optim_repr(double v, char *buf, size_t n)
{
    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, n, v < 0 ? "-inf" : "inf");
        return buf;
    }
    char sci[40];
    for (int prec = 0; prec < 17; prec++) { /* the shortest digits that round-trip */
        snprintf(sci, sizeof sci, "%.*e", prec, v);
        if (strtod(sci, NULL) == v) {
            break;
        }
    }
    char digits[24];
    int nd = 0;
    const char *s = sci;
    bool neg = *s == '-';
    s += neg;
    for (; *s && *s != 'e'; s++) {
        if (*s >= '0' && *s <= '9' && nd < 23) {
            digits[nd++] = *s;
        }
    }
    digits[nd] = '\0';
    int exp = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') { /* %.*e may keep trailing zeros */
        digits[--nd] = '\0';
    }
    char out[64];
    int k = 0;
    if (neg) {
        out[k++] = '-';
    }
    if (exp < -4 || exp >= 16) { /* 1e-05, 1.5e+16 */
        out[k++] = digits[0];
        if (nd > 1) {
            out[k++] = '.';
            for (int i = 1; i < nd; i++) {
                out[k++] = digits[i];
            }
        }
        k += snprintf(out + k, sizeof out - (size_t)k, "e%c%02d", exp < 0 ? '-' : '+',
                      exp < 0 ? -exp : exp);
    } else if (exp < 0) { /* 0.001 */
        out[k++] = '0';
        out[k++] = '.';
        for (int i = 0; i < -exp - 1; i++) {
            out[k++] = '0';
        }
        for (int i = 0; i < nd; i++) {
            out[k++] = digits[i];
        }
    } else { /* 100.0, 2.5 */
        for (int i = 0; i <= exp; i++) {
            out[k++] = i < nd ? digits[i] : '0';
        }
        out[k++] = '.';
        if (nd > exp + 1) {
            for (int i = exp + 1; i < nd; i++) {
                out[k++] = digits[i];
            }
        } else {
            out[k++] = '0';
        }
    }
    out[k] = '\0';
    snprintf(buf, n, "%s", out);
    return buf;
}

/* Fails with CT_ERR_VALUE "<what>: <repr(v)>". */
static bool ct__optim_bad(const char *op, const char *what, double v)
{
    char num[64];
    ct__fail(CT_ERR_VALUE, op, "%s: %s", what, ct__optim_repr(v, num, sizeof num));
    return false;
}

static bool ct__optim_sgd_group(const char *op, const ct_sgd_opts *o, ct__optim_group *g)
{
    /* PyTorch compares with `x < 0.0`, so NaN passes as it does there */
    if (o->lr < 0.0) {
        return ct__optim_bad(op, "Invalid learning rate", o->lr);
    }
    if (o->momentum < 0.0) {
        return ct__optim_bad(op, "Invalid momentum value", o->momentum);
    }
    if (o->weight_decay < 0.0) {
        return ct__optim_bad(op, "Invalid weight_decay value", o->weight_decay);
    }
    if (o->nesterov && (o->momentum <= 0 || o->dampening != 0)) {
        ct__fail(CT_ERR_VALUE, op, "Nesterov momentum requires a momentum and zero dampening");
        return false;
    }
    memset(g, 0, sizeof *g);
    g->lr = o->lr;
    g->momentum = o->momentum;
    g->dampening = o->dampening;
    g->weight_decay = o->weight_decay;
    g->nesterov = o->nesterov;
    g->maximize = o->maximize;
    return true;
}

static bool ct__optim_adam_group(const char *op, const ct_adam_opts *o, ct__optim_group *g)
{
    /* PyTorch writes `not 0.0 <= x`, which also rejects NaN */
    if (!(0.0 <= o->lr)) {
        return ct__optim_bad(op, "Invalid learning rate", o->lr);
    }
    if (!(0.0 <= o->eps)) {
        return ct__optim_bad(op, "Invalid epsilon value", o->eps);
    }
    if (!(0.0 <= o->betas[0] && o->betas[0] < 1.0)) {
        return ct__optim_bad(op, "Invalid beta parameter at index 0", o->betas[0]);
    }
    if (!(0.0 <= o->betas[1] && o->betas[1] < 1.0)) {
        return ct__optim_bad(op, "Invalid beta parameter at index 1", o->betas[1]);
    }
    if (!(0.0 <= o->weight_decay)) {
        return ct__optim_bad(op, "Invalid weight_decay value", o->weight_decay);
    }
    memset(g, 0, sizeof *g);
    g->lr = o->lr;
    g->beta1 = o->betas[0];
    g->beta2 = o->betas[1];
    g->eps = o->eps;
    g->weight_decay = o->weight_decay;
    g->amsgrad = o->amsgrad;
    g->maximize = o->maximize;
    return true;
}

/* ---- construction --------------------------------------------------------------------- */
static bool ct__optim_check_param(const char *op, const ct_optimizer *opt,
                                  ct_tensor *const *params, int64_t i)
{
    const ct_tensor *p = params[i];
    if (ct__null(op, p)) {
        return false;
    }
    if (!ct_is_leaf(p)) {
        ct__fail(CT_ERR_VALUE, op, "can't optimize a non-leaf Tensor");
        return false;
    }
    if (!ct_requires_grad(p)) {
        ct__fail(CT_ERR_VALUE, op, "optimizer can only optimize Tensors that require grad "
                 "(parameter %lld does not)", (long long)i);
        return false;
    }
    if (p->dtype != CT_FLOAT32 && p->dtype != CT_FLOAT64) {
        ct__fail(CT_ERR_DTYPE, op, "optimizer can only optimize float32 and float64 Tensors, "
                 "got %s", ct_dtype_name(p->dtype));
        return false;
    }
    if (!ct__check_cpu(op, p)) {
        return false;
    }
    for (int64_t j = 0; j < i; j++) {
        if (params[j] == p) {
            ct__fail(CT_ERR_VALUE, op, "optimizer contains a parameter group with duplicate "
                     "parameters (parameters %lld and %lld)", (long long)j, (long long)i);
            return false;
        }
    }
    for (int64_t j = 0; opt && j < opt->n_params; j++) {
        if (opt->params[j].p == p) {
            ct__fail(CT_ERR_VALUE, op, "some parameters appear in more than one parameter "
                     "group");
            return false;
        }
    }
    return true;
}

/* Appends a group of n parameters with hyperparameters g (its range is filled in here). */
static ct_status ct__optim_append(const char *op, ct_optimizer *opt, ct_tensor *const *params,
                                  int64_t n, const ct__optim_group *g)
{
    if (ct__null(op, params)) {
        return ct_error_code();
    }
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, op, "optimizer got an empty parameter list");
    }
    for (int64_t i = 0; i < n; i++) {
        if (!ct__optim_check_param(op, opt, params, i)) {
            return ct_error_code();
        }
    }
    ct__optim_group *groups = (ct__optim_group *)ct__malloc(
        sizeof(ct__optim_group) * (size_t)(opt->n_groups + 1));
    ct__optim_param *ps = (ct__optim_param *)ct__malloc(
        sizeof(ct__optim_param) * (size_t)(opt->n_params + n));
    if (!groups || !ps) {
        ct__free(groups);
        ct__free(ps);
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    if (opt->n_groups) {
        memcpy(groups, opt->groups, sizeof(ct__optim_group) * (size_t)opt->n_groups);
    }
    if (opt->n_params) {
        memcpy(ps, opt->params, sizeof(ct__optim_param) * (size_t)opt->n_params);
    }
    groups[opt->n_groups] = *g;
    groups[opt->n_groups].first = opt->n_params;
    groups[opt->n_groups].count = n;
    for (int64_t i = 0; i < n; i++) {
        ct__optim_param *q = &ps[opt->n_params + i];
        memset(q, 0, sizeof *q);
        q->p = ct_retain(params[i]);
    }
    ct__free(opt->groups);
    ct__free(opt->params);
    opt->groups = groups;
    opt->params = ps;
    opt->n_groups++;
    opt->n_params += n;
    return CT_OK;
}

static ct_optimizer *ct__optim_new(const char *op, int kind, ct_tensor *const *params,
                                   int64_t n, const ct__optim_group *g)
{
    ct_optimizer *opt = (ct_optimizer *)ct__calloc(sizeof(ct_optimizer));
    if (!opt) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    opt->kind = kind;
    opt->defaults = *g;
    if (ct__optim_append(op, opt, params, n, g) != CT_OK) {
        ct_optimizer_free(opt);
        return NULL;
    }
    return opt;
}

ct_optimizer *ct_sgd_new(ct_tensor *const *params, int64_t n, const ct_sgd_opts *opts)
{
    const char *op = "ct_sgd_new";
    ct_sgd_opts o = opts ? *opts : ct_sgd_defaults();
    ct__optim_group g;
    if (!ct__optim_sgd_group(op, &o, &g)) {
        return NULL;
    }
    return ct__optim_new(op, CT__OPTIM_SGD, params, n, &g);
}

ct_optimizer *ct_adam_new(ct_tensor *const *params, int64_t n, const ct_adam_opts *opts)
{
    const char *op = "ct_adam_new";
    ct_adam_opts o = opts ? *opts : ct_adam_defaults();
    ct__optim_group g;
    if (!ct__optim_adam_group(op, &o, &g)) {
        return NULL;
    }
    return ct__optim_new(op, CT__OPTIM_ADAM, params, n, &g);
}

ct_optimizer *ct_adamw_new(ct_tensor *const *params, int64_t n, const ct_adam_opts *opts)
{
    const char *op = "ct_adamw_new";
    ct_adam_opts o = opts ? *opts : ct_adamw_defaults();
    ct__optim_group g;
    if (!ct__optim_adam_group(op, &o, &g)) {
        return NULL;
    }
    return ct__optim_new(op, CT__OPTIM_ADAMW, params, n, &g);
}

ct_status ct_optimizer_add_param_group(ct_optimizer *opt, ct_tensor *const *params, int64_t n,
                                       const void *opts)
{
    const char *op = "ct_optimizer_add_param_group";
    if (ct__null(op, opt)) {
        return ct_error_code();
    }
    ct__optim_group g = opt->defaults;
    if (opts && opt->kind == CT__OPTIM_SGD &&
        !ct__optim_sgd_group(op, (const ct_sgd_opts *)opts, &g)) {
        return ct_error_code();
    }
    if (opts && opt->kind != CT__OPTIM_SGD &&
        !ct__optim_adam_group(op, (const ct_adam_opts *)opts, &g)) {
        return ct_error_code();
    }
    return ct__optim_append(op, opt, params, n, &g);
}

void ct_optimizer_free(ct_optimizer *opt)
{
    if (!opt) {
        return;
    }
    for (int64_t i = 0; i < opt->n_params; i++) {
        for (int k = 0; k < 3; k++) {
            ct__release(opt->params[i].state[k]);
        }
        ct__release(opt->params[i].p);
    }
    ct__free(opt->params);
    ct__free(opt->groups);
    ct__free(opt);
}

/* ---- attributes ------------------------------------------------------------------------ */
int64_t ct_optimizer_num_param_groups(const ct_optimizer *opt)
{
    return ct__null("ct_optimizer_num_param_groups", opt) ? 0 : opt->n_groups;
}

static bool ct__optim_group_ok(const char *op, const ct_optimizer *opt, int64_t group)
{
    if (ct__null(op, opt)) {
        return false;
    }
    if (group < 0 || group >= opt->n_groups) {
        ct__fail(CT_ERR_INDEX, op, "param group %lld out of range (the optimizer has %lld)",
                 (long long)group, (long long)opt->n_groups);
        return false;
    }
    return true;
}

int64_t ct_optimizer_params(const ct_optimizer *opt, int64_t group, ct_tensor **params,
                            int64_t cap)
{
    if (!ct__optim_group_ok("ct_optimizer_params", opt, group)) {
        return -1;
    }
    const ct__optim_group *g = &opt->groups[group];
    for (int64_t i = 0; params && i < g->count && i < cap; i++) {
        params[i] = opt->params[g->first + i].p;
    }
    return g->count;
}

double ct_optimizer_get_lr(const ct_optimizer *opt, int64_t group)
{
    if (!ct__optim_group_ok("ct_optimizer_get_lr", opt, group)) {
        return NAN;
    }
    return opt->groups[group].lr;
}

ct_status ct_optimizer_set_lr(ct_optimizer *opt, int64_t group, double lr)
{
    const char *op = "ct_optimizer_set_lr";
    if (group != -1 && !ct__optim_group_ok(op, opt, group)) {
        return ct_error_code();
    }
    if (ct__null(op, opt)) {
        return ct_error_code();
    }
    if (!(lr >= 0.0)) {
        ct__optim_bad(op, "Invalid learning rate", lr);
        return ct_error_code();
    }
    for (int64_t i = 0; i < opt->n_groups; i++) {
        if (group == -1 || group == i) {
            opt->groups[i].lr = lr;
        }
    }
    return CT_OK;
}

int64_t ct_optimizer_step_count(const ct_optimizer *opt)
{
    return ct__null("ct_optimizer_step_count", opt) ? 0 : opt->steps;
}

const char *ct_optimizer_name(const ct_optimizer *opt)
{
    if (ct__null("ct_optimizer_name", opt)) {
        return NULL;
    }
    return opt->kind == CT__OPTIM_SGD ? "SGD" : opt->kind == CT__OPTIM_ADAM ? "Adam" : "AdamW";
}

void ct_optimizer_zero_grad(ct_optimizer *opt, bool set_to_none)
{
    if (ct__null("ct_optimizer_zero_grad", opt)) {
        return;
    }
    ct__profiler_range_begin(false, "Optimizer.zero_grad#%s.zero_grad", ct_optimizer_name(opt));
    for (int64_t i = 0; i < opt->n_params; i++) {
        ct_tensor *p = opt->params[i].p;
        ct_tensor *g = p->grad;
        if (!g) {
            continue;
        }
        if (set_to_none) {
            ct_set_grad(p, NULL);
            continue;
        }
        ct_detach_(g); /* PyTorch: grad.detach_() or grad.requires_grad_(False) */
        ct_no_grad_begin();
        ct_zero_(g);
        ct_no_grad_end();
    }
    ct__profiler_range_end();
}

/* ---- kernels ----------------------------------------------------------------------------
 * SGD, per element i of [begin, end) (P, G, B as in the legend):
 *   g = sign*G[i]; if wd: g = g + wd*P[i];
 *   if momentum: b = first ? g : B[i]*momentum + (1-dampening)*g; B[i] = b;
 *                g = nesterov ? g + momentum*b : b;
 *   P[i] = P[i] + (-lr)*g                                                           */
typedef struct ct__optim_sgd_ctx {
    char *p, *buf;
    const char *g;
    double sign, wd, momentum, damp1, nlr;
    bool use_wd, use_momentum, first, nesterov;
} ct__optim_sgd_ctx;

#define CT__OPTIM_SGD_KERNEL(T, S)                                                         \
    static void ct__optim_sgd_##S(int64_t begin, int64_t end, void *vctx)                  \
    {                                                                                      \
        const ct__optim_sgd_ctx *c = (const ct__optim_sgd_ctx *)vctx;                      \
        T *P = (T *)(void *)c->p, *B = (T *)(void *)c->buf;                                \
        const T *G = (const T *)(const void *)c->g;                                        \
        const T sign = (T)c->sign, wd = (T)c->wd, mom = (T)c->momentum;                    \
        const T damp1 = (T)c->damp1, nlr = (T)c->nlr;                                      \
        const bool use_wd = c->use_wd, use_mom = c->use_momentum, first = c->first;        \
        const bool nesterov = c->nesterov;                                                 \
        if (!use_wd && !use_mom) { /* plain SGD: one flat loop the compiler vectorizes */  \
            for (int64_t i = begin; i < end; i++) {                                        \
                P[i] = P[i] + nlr * (sign * G[i]);                                         \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = begin; i < end; i++) {                                            \
            T g = sign * G[i];                                                             \
            if (use_wd) {                                                                  \
                g = g + wd * P[i];                                                         \
            }                                                                              \
            if (use_mom) {                                                                 \
                T b = first ? g : B[i] * mom + damp1 * g;                                  \
                B[i] = b;                                                                  \
                g = nesterov ? g + mom * b : b;                                            \
            }                                                                              \
            P[i] = P[i] + nlr * g;                                                         \
        }                                                                                  \
    }
CT__OPTIM_SGD_KERNEL(float, f32)
CT__OPTIM_SGD_KERNEL(double, f64)
#undef CT__OPTIM_SGD_KERNEL

/* Adam / AdamW, per element i (P, G, M, V, VM as in the legend; t = the parameter's step):
 *   p = P[i]*decay                      (AdamW: decay = 1 - lr*wd; Adam: 1, exact)
 *   g = sign*G[i]; if coupled wd: g = g + wd*p
 *   m = M[i] + (1-b1)*(g - M[i])        (Tensor.lerp_ with weight < 0.5)
 *   v = V[i]*b2 + ((1-b2)*g)*g          (mul_ then addcmul_)
 *   if amsgrad: VM[i] = v = maximum(VM[i], v)   (NaN propagates)
 *   P[i] = p + (-lr/(1-b1^t)) * (m / (sqrt(v)/sqrt(1-b2^t) + eps))               */
typedef struct ct__optim_adam_ctx {
    char *p, *m, *v, *vmax;
    const char *g;
    double decay, sign, wd, w1, b2, c2, bc2_sqrt, eps, nstep;
    bool use_wd, amsgrad;
} ct__optim_adam_ctx;

#if !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX512)
#define CT__OPTIM_VEC 1
typedef __m512 ct__optim_vf32;
typedef __m512d ct__optim_vf64;
#define CT__OPTIM_N_f32 16
#define CT__OPTIM_N_f64 8
#define CT__OPTIM_LD_f32 _mm512_loadu_ps
#define CT__OPTIM_LD_f64 _mm512_loadu_pd
#define CT__OPTIM_ST_f32 _mm512_storeu_ps
#define CT__OPTIM_ST_f64 _mm512_storeu_pd
#define CT__OPTIM_SET_f32 _mm512_set1_ps
#define CT__OPTIM_SET_f64 _mm512_set1_pd
#define CT__OPTIM_ADD_f32 _mm512_add_ps
#define CT__OPTIM_ADD_f64 _mm512_add_pd
#define CT__OPTIM_SUB_f32 _mm512_sub_ps
#define CT__OPTIM_SUB_f64 _mm512_sub_pd
#define CT__OPTIM_MUL_f32 _mm512_mul_ps
#define CT__OPTIM_MUL_f64 _mm512_mul_pd
#define CT__OPTIM_DIV_f32 _mm512_div_ps
#define CT__OPTIM_DIV_f64 _mm512_div_pd
/* zero-masking sqrt: _mm512_sqrt_* trips g++ 12's -Wmaybe-uninitialized (see below) */
#define CT__OPTIM_SQRT_f32(x) _mm512_maskz_sqrt_ps((__mmask16)0xFFFF, (x))
#define CT__OPTIM_SQRT_f64(x) _mm512_maskz_sqrt_pd((__mmask8)0xFF, (x))
/* maximum(a, b) with NaN propagation: (a > b || a is NaN) ? a : b. (No _mm512_max_*: in C++
   g++ 12 warns about its _mm512_undefined passthrough under -Wmaybe-uninitialized.) */
static inline __m512 ct__optim_max_f32(__m512 a, __m512 b)
{
    __mmask16 k = _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(k, b, a);
}
static inline __m512d ct__optim_max_f64(__m512d a, __m512d b)
{
    __mmask8 k = _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ) | _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q);
    return _mm512_mask_blend_pd(k, b, a);
}
#elif !defined(CTORCH_NO_SIMD) && defined(CT__HAS_AVX2)
#define CT__OPTIM_VEC 1
typedef __m256 ct__optim_vf32;
typedef __m256d ct__optim_vf64;
#define CT__OPTIM_N_f32 8
#define CT__OPTIM_N_f64 4
#define CT__OPTIM_LD_f32 _mm256_loadu_ps
#define CT__OPTIM_LD_f64 _mm256_loadu_pd
#define CT__OPTIM_ST_f32 _mm256_storeu_ps
#define CT__OPTIM_ST_f64 _mm256_storeu_pd
#define CT__OPTIM_SET_f32 _mm256_set1_ps
#define CT__OPTIM_SET_f64 _mm256_set1_pd
#define CT__OPTIM_ADD_f32 _mm256_add_ps
#define CT__OPTIM_ADD_f64 _mm256_add_pd
#define CT__OPTIM_SUB_f32 _mm256_sub_ps
#define CT__OPTIM_SUB_f64 _mm256_sub_pd
#define CT__OPTIM_MUL_f32 _mm256_mul_ps
#define CT__OPTIM_MUL_f64 _mm256_mul_pd
#define CT__OPTIM_DIV_f32 _mm256_div_ps
#define CT__OPTIM_DIV_f64 _mm256_div_pd
#define CT__OPTIM_SQRT_f32 _mm256_sqrt_ps
#define CT__OPTIM_SQRT_f64 _mm256_sqrt_pd
/* maximum(a, b) with NaN propagation: max_ps(a, b) gives b when either is NaN. */
static inline __m256 ct__optim_max_f32(__m256 a, __m256 b)
{
    return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
static inline __m256d ct__optim_max_f64(__m256d a, __m256d b)
{
    return _mm256_blendv_pd(_mm256_max_pd(a, b), a, _mm256_cmp_pd(a, a, _CMP_UNORD_Q));
}
#endif

#ifdef CT__OPTIM_VEC
/* The vector loop: the scalar formula above, CT__OPTIM_N_<S> lanes at a time; returns the
   index where the scalar tail starts. */
#define CT__OPTIM_ADAM_VEC(T, S)                                                           \
    static int64_t ct__optim_adam_vec_##S(const ct__optim_adam_ctx *c, int64_t i,        \
                                          int64_t end)                                   \
    {                                                                                      \
        T *P = (T *)(void *)c->p, *M = (T *)(void *)c->m, *V = (T *)(void *)c->v;          \
        T *VM = (T *)(void *)c->vmax;                                                      \
        const T *G = (const T *)(const void *)c->g;                                        \
        const ct__optim_v##S decay = CT__OPTIM_SET_##S((T)c->decay);                       \
        const ct__optim_v##S sign = CT__OPTIM_SET_##S((T)c->sign);                         \
        const ct__optim_v##S wd = CT__OPTIM_SET_##S((T)c->wd);                             \
        const ct__optim_v##S w1 = CT__OPTIM_SET_##S((T)c->w1);                             \
        const ct__optim_v##S b2 = CT__OPTIM_SET_##S((T)c->b2);                             \
        const ct__optim_v##S c2 = CT__OPTIM_SET_##S((T)c->c2);                             \
        const ct__optim_v##S bc2 = CT__OPTIM_SET_##S((T)c->bc2_sqrt);                      \
        const ct__optim_v##S eps = CT__OPTIM_SET_##S((T)c->eps);                           \
        const ct__optim_v##S nstep = CT__OPTIM_SET_##S((T)c->nstep);                       \
        const bool use_wd = c->use_wd, amsgrad = c->amsgrad;                               \
        for (; i + CT__OPTIM_N_##S <= end; i += CT__OPTIM_N_##S) {                         \
            ct__optim_v##S p = CT__OPTIM_MUL_##S(CT__OPTIM_LD_##S(P + i), decay);          \
            ct__optim_v##S g = CT__OPTIM_MUL_##S(sign, CT__OPTIM_LD_##S(G + i));           \
            if (use_wd) {                                                                  \
                g = CT__OPTIM_ADD_##S(g, CT__OPTIM_MUL_##S(wd, p));                        \
            }                                                                              \
            ct__optim_v##S m = CT__OPTIM_LD_##S(M + i);                                    \
            m = CT__OPTIM_ADD_##S(m, CT__OPTIM_MUL_##S(w1, CT__OPTIM_SUB_##S(g, m)));      \
            ct__optim_v##S v = CT__OPTIM_MUL_##S(CT__OPTIM_LD_##S(V + i), b2);             \
            v = CT__OPTIM_ADD_##S(v, CT__OPTIM_MUL_##S(CT__OPTIM_MUL_##S(c2, g), g));      \
            CT__OPTIM_ST_##S(M + i, m);                                                    \
            CT__OPTIM_ST_##S(V + i, v);                                                    \
            if (amsgrad) {                                                                 \
                v = ct__optim_max_##S(CT__OPTIM_LD_##S(VM + i), v);                        \
                CT__OPTIM_ST_##S(VM + i, v);                                               \
            }                                                                              \
            ct__optim_v##S d = CT__OPTIM_DIV_##S(CT__OPTIM_SQRT_##S(v), bc2);              \
            d = CT__OPTIM_ADD_##S(d, eps);                                                 \
            p = CT__OPTIM_ADD_##S(p, CT__OPTIM_MUL_##S(nstep, CT__OPTIM_DIV_##S(m, d)));   \
            CT__OPTIM_ST_##S(P + i, p);                                                    \
        }                                                                                  \
        return i;                                                                          \
    }
CT__OPTIM_ADAM_VEC(float, f32)
CT__OPTIM_ADAM_VEC(double, f64)
#undef CT__OPTIM_ADAM_VEC
#define CT__OPTIM_ADAM_VEC_CALL(S) begin = ct__optim_adam_vec_##S(c, begin, end);
#else
#define CT__OPTIM_ADAM_VEC_CALL(S)
#endif

#define CT__OPTIM_ADAM_KERNEL(T, S, SQRT)                                                  \
    static void ct__optim_adam_##S(int64_t begin, int64_t end, void *vctx)                 \
    {                                                                                      \
        const ct__optim_adam_ctx *c = (const ct__optim_adam_ctx *)vctx;                    \
        CT__OPTIM_ADAM_VEC_CALL(S)                                                         \
        T *P = (T *)(void *)c->p, *M = (T *)(void *)c->m, *V = (T *)(void *)c->v;          \
        T *VM = (T *)(void *)c->vmax;                                                      \
        const T *G = (const T *)(const void *)c->g;                                        \
        const T decay = (T)c->decay, sign = (T)c->sign, wd = (T)c->wd, w1 = (T)c->w1;      \
        const T b2 = (T)c->b2, c2 = (T)c->c2, bc2 = (T)c->bc2_sqrt, eps = (T)c->eps;       \
        const T nstep = (T)c->nstep;                                                       \
        const bool use_wd = c->use_wd, amsgrad = c->amsgrad;                               \
        for (int64_t i = begin; i < end; i++) {                                            \
            T p = P[i] * decay;                                                            \
            T g = sign * G[i];                                                             \
            if (use_wd) {                                                                  \
                g = g + wd * p;                                                            \
            }                                                                              \
            T m = M[i];                                                                    \
            m = m + w1 * (g - m);                                                          \
            T v = V[i] * b2 + c2 * g * g;                                                  \
            M[i] = m;                                                                      \
            V[i] = v;                                                                      \
            if (amsgrad) {                                                                 \
                T mx = VM[i];                                                              \
                v = (mx > v || mx != mx) ? mx : v;                                         \
                VM[i] = v;                                                                 \
            }                                                                              \
            T d = SQRT(v) / bc2 + eps;                                                     \
            P[i] = p + nstep * (m / d);                                                    \
        }                                                                                  \
    }
CT__OPTIM_ADAM_KERNEL(float, f32, sqrtf)
CT__OPTIM_ADAM_KERNEL(double, f64, sqrt)
#undef CT__OPTIM_ADAM_KERNEL
#undef CT__OPTIM_ADAM_VEC_CALL

/* ---- the fused ops ------------------------------------------------------------------------
 * One call updates one parameter: inputs self (the parameter), its grad and its state
 * tensors (PyTorch's lists, of one tensor each here), the hyperparameters as attributes.
 * The kernels need contiguous data of the parameter's dtype: a copy is made otherwise and
 * written back. */
/* Inputs after self must have self's numel; state inputs (2 on) are contiguous of its dtype;
   input `needed` (when >= 0) must be present. */
static bool ct__fused_check(ct_op_call *c, int needed)
{
    ct_tensor *p = (ct_tensor *)(uintptr_t)c->inputs[0];
    if (needed >= 0 && !c->inputs[needed]) {
        ct__null(c->fn, c->inputs[needed]);
        return false;
    }
    for (int k = 1; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        if (t && (ct_numel(t) != ct_numel(p) ||
                  (k >= 2 && (t->dtype != p->dtype || !ct_is_contiguous(t))))) {
            ct__fail(CT_ERR_SHAPE, c->fn, "%s: tensor %d of the call does not match the "
                     "parameter (%lld elements of %s)", c->op->name, k, (long long)ct_numel(p),
                     ct_dtype_name(p->dtype));
            return false;
        }
    }
    c->dtype = p->dtype;
    c->outputs[c->n_outputs++] = p;
    return true;
}

/* _fused_sgd_: the momentum buffer (input 2) is needed when momentum (attribute 1) is set. */
static bool ct__fused_sgd_meta(ct_op_call *c)
{
    return ct__fused_check(c, c->attrs[1].f != 0.0 ? 2 : -1);
}

/* _fused_adam(w)_: max_exp_avg_sq (input 4) is needed under amsgrad (attribute 5). */
static bool ct__fused_adam_meta(ct_op_call *c)
{
    return ct__fused_check(c, c->attrs[5].i ? 4 : -1);
}

/* A contiguous tensor (new, unscoped) holding src converted to dtype; NULL on OOM. */
static ct_tensor *ct__optim_contiguous(const char *op, const ct_tensor *src, ct_dtype dtype)
{
    ct_tensor *t = ct__tensor_new(op, src->sizes, src->ndim, dtype);
    if (t) {
        ct__copy_kernel(t, src);
    }
    return t;
}

/* Runs loop f32 or f64 over the parameter with ctx, after pointing *p and *g at contiguous
   data of the parameter and its grad. */
static ct_status ct__fused_run(ct_op_call *c, void *ctx, char **p, const char **g,
                               void (*f32)(int64_t, int64_t, void *),
                               void (*f64)(int64_t, int64_t, void *))
{
    ct_tensor *param = c->outputs[0];
    const ct_tensor *grad = c->inputs[1];
    ct_tensor *pc = ct_is_contiguous(param) ? param
                                            : ct__optim_contiguous(c->fn, param, param->dtype);
    const ct_tensor *gc = ct_is_contiguous(grad) && grad->dtype == param->dtype
                              ? grad
                              : ct__optim_contiguous(c->fn, grad, param->dtype);
    if (pc && gc) {
        *p = ct__data(pc);
        *g = ct__data(gc);
        ct__parallel_for(ct_numel(param), CT__GRAIN, param->dtype == CT_FLOAT32 ? f32 : f64,
                         ctx);
        if (pc != param) {
            ct__copy_kernel(param, pc);
        }
    }
    ct_status st = pc && gc ? CT_OK : ct_error_code();
    if (pc != param) {
        ct__release(pc);
    }
    if (gc != grad) {
        ct__release((ct_tensor *)(uintptr_t)gc);
    }
    return st;
}

/* _fused_sgd_: attributes weight_decay, momentum, lr, dampening, nesterov, maximize,
   is_first_step. */
static ct_status ct__fused_sgd_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    ct__optim_sgd_ctx x;
    memset(&x, 0, sizeof x);
    x.buf = c->inputs[2] ? ct__data(c->inputs[2]) : NULL;
    x.sign = a[5].i ? -1.0 : 1.0;
    x.wd = a[0].f;
    x.momentum = a[1].f;
    x.damp1 = 1.0 - a[3].f;
    x.nlr = -a[2].f;
    x.use_wd = a[0].f != 0.0;
    x.use_momentum = a[1].f != 0.0;
    x.first = a[6].i != 0;
    x.nesterov = a[4].i != 0;
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_sgd_f32, ct__optim_sgd_f64);
}

/* _fused_adam_ and _fused_adamw_ (variant CT__OPTIM_ADAMW: decoupled weight decay):
   attributes lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, then the parameter's
   step count (PyTorch's state_steps tensor, already incremented). */
static ct_status ct__fused_adam_kernel(ct_op_call *c)
{
    const ct_attr *a = c->attrs;
    double lr = a[0].f, beta1 = a[1].f, beta2 = a[2].f, wd = a[3].f, t = (double)a[7].i;
    double bc1 = 1.0 - pow(beta1, t), bc2 = 1.0 - pow(beta2, t);
    bool decoupled = c->op->variant == CT__OPTIM_ADAMW;
    ct__optim_adam_ctx x;
    memset(&x, 0, sizeof x);
    x.m = ct__data(c->inputs[2]);
    x.v = ct__data(c->inputs[3]);
    x.vmax = c->inputs[4] ? ct__data(c->inputs[4]) : NULL;
    x.decay = decoupled && wd != 0.0 ? 1.0 - lr * wd : 1.0;
    x.sign = a[6].i ? -1.0 : 1.0;
    x.wd = wd;
    x.use_wd = !decoupled && wd != 0.0;
    x.w1 = 1.0 - beta1;
    x.b2 = beta2;
    x.c2 = 1.0 - beta2;
    x.bc2_sqrt = sqrt(bc2);
    x.eps = a[4].f;
    x.nstep = -(lr / bc1);
    x.amsgrad = a[5].i != 0;
    return ct__fused_run(c, &x, &x.p, &x.g, ct__optim_adam_f32, ct__optim_adam_f64);
}

#define CT__FUSED(SYM, NAME, SCHEMA, VAR, OPTIONAL, META, KERNEL)                              \
    static const ct_op ct__op_##SYM = {"aten::" NAME, SCHEMA, "ct_optimizer_step",             \
                                       CT_OP_INPLACE, CT_AUTOCAST_NONE, VAR, OPTIONAL, NULL,   \
                                       META, CT__K_FLOAT(KERNEL), NULL, NULL, NULL, 0u, NULL,  \
                                       NULL};
#define CT__FUSED_ADAM_SCHEMA(N)                                                               \
    N "(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] "           \
      "exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float "   \
      "beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, "       \
      "Tensor? grad_scale=None, Tensor? found_inf=None) -> ()"
CT__FUSED(fused_sgd_, "_fused_sgd_", "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, "
          "Tensor(c!)[] momentum_buffer_list, *, float weight_decay, float momentum, float lr, "
          "float dampening, bool nesterov, bool maximize, bool is_first_step, Tensor? "
          "grad_scale=None, Tensor? found_inf=None) -> ()", CT__OPTIM_SGD, 1u << 2,
          ct__fused_sgd_meta, ct__fused_sgd_kernel)
CT__FUSED(fused_adam_, "_fused_adam_", CT__FUSED_ADAM_SCHEMA("_fused_adam_"), CT__OPTIM_ADAM,
          1u << 4, ct__fused_adam_meta, ct__fused_adam_kernel)
CT__FUSED(fused_adamw_, "_fused_adamw_", CT__FUSED_ADAM_SCHEMA("_fused_adamw_"),
          CT__OPTIM_ADAMW, 1u << 4, ct__fused_adam_meta, ct__fused_adam_kernel)
#undef CT__FUSED
#undef CT__FUSED_ADAM_SCHEMA

/* ---- step ------------------------------------------------------------------------------- */
/* Allocates a parameter's missing state tensors (SGD: B, uninitialized; Adam: M, V and VM,
   zeroed); false after an error (tensors already allocated are kept for the next step). */
static bool ct__optim_alloc_state(const char *op, const ct_optimizer *opt,
                                  const ct__optim_group *g, ct__optim_param *q)
{
    int n = 0;
    if (opt->kind == CT__OPTIM_SGD) {
        n = g->momentum != 0.0 ? 1 : 0;
    } else {
        n = g->amsgrad ? 3 : 2;
    }
    for (int k = 0; k < n; k++) {
        if (q->state[k]) {
            continue;
        }
        q->state[k] = ct__tensor_new(op, q->p->sizes, q->p->ndim, q->p->dtype);
        if (!q->state[k]) {
            return false;
        }
        if (opt->kind != CT__OPTIM_SGD) {
            memset(ct__data(q->state[k]), 0, ct_nbytes(q->state[k]));
        }
    }
    return true;
}

/* One parameter's update through its fused op; false after an error. */
static bool ct__optim_update(const char *op, const ct_optimizer *opt, const ct__optim_group *g,
                             ct__optim_param *q)
{
    const ct_tensor *in[5] = {q->p, q->p->grad, q->state[0], q->state[1], q->state[2]};
    ct_op_call c;
    if (opt->kind == CT__OPTIM_SGD) {
        ct__call_init(&c, &ct__op_fused_sgd_, op, in, 3);
        ct__call_f(&c, g->weight_decay);
        ct__call_f(&c, g->momentum);
        ct__call_f(&c, g->lr);
        ct__call_f(&c, g->dampening);
        ct__call_i(&c, g->nesterov);
        ct__call_i(&c, g->maximize);
        ct__call_i(&c, !q->has_state);
    } else {
        ct__call_init(&c, opt->kind == CT__OPTIM_ADAM ? &ct__op_fused_adam_ : &ct__op_fused_adamw_,
                      op, in, 5);
        ct__call_f(&c, g->lr);
        ct__call_f(&c, g->beta1);
        ct__call_f(&c, g->beta2);
        ct__call_f(&c, g->weight_decay);
        ct__call_f(&c, g->eps);
        ct__call_i(&c, g->amsgrad);
        ct__call_i(&c, g->maximize);
        ct__call_i(&c, q->step + 1);
    }
    if (!ct__dispatch(&c)) {
        return false;
    }
    q->step++;
    q->has_state = true;
    return true;
}

static ct_status ct__optim_step(ct_optimizer *opt)
{
    const char *op = "ct_optimizer_step";
    /* validate every gradient and allocate every state first: a failure changes nothing */
    for (int64_t gi = 0; gi < opt->n_groups; gi++) {
        const ct__optim_group *g = &opt->groups[gi];
        for (int64_t i = g->first; i < g->first + g->count; i++) {
            ct__optim_param *q = &opt->params[i];
            const ct_tensor *p = q->p, *grad = p->grad;
            if (!grad) {
                continue;
            }
            if (grad->ndim != p->ndim ||
                memcmp(grad->sizes, p->sizes, sizeof(int64_t) * (size_t)p->ndim) != 0) {
                char a[128], b[128];
                return ct__fail(CT_ERR_SHAPE, op, "the grad of parameter %lld has shape %s, "
                                "expected %s", (long long)i,
                                ct__shape_str(grad->sizes, grad->ndim, a, sizeof a),
                                ct__shape_str(p->sizes, p->ndim, b, sizeof b));
            }
            if (!ct__check_cpu(op, grad)) {
                return ct_error_code();
            }
            if (!ct__optim_alloc_state(op, opt, g, q)) {
                return ct_error_code();
            }
        }
    }
    /* in place on leaves that require grad, as torch.optim's step under no_grad */
    ct_no_grad_begin();
    bool ok = true;
    for (int64_t gi = 0; ok && gi < opt->n_groups; gi++) {
        const ct__optim_group *g = &opt->groups[gi];
        for (int64_t i = g->first; ok && i < g->first + g->count; i++) {
            ct__optim_param *q = &opt->params[i];
            ok = !q->p->grad || ct__optim_update(op, opt, g, q);
        }
    }
    ct_no_grad_end();
    if (!ok) {
        return ct_error_code();
    }
    opt->steps++;
    return CT_OK;
}

ct_status ct_optimizer_step(ct_optimizer *opt)
{
    if (ct__null("ct_optimizer_step", opt)) {
        return ct_error_code();
    }
    ct__profiler_range_begin(false, "Optimizer.step#%s.step", ct_optimizer_name(opt));
    ct_status st = ct__optim_step(opt);
    ct__profiler_range_end();
    return st;
}

#ifdef CT__OPTIM_VEC
#undef CT__OPTIM_VEC
#undef CT__OPTIM_N_f32
#undef CT__OPTIM_N_f64
#undef CT__OPTIM_LD_f32
#undef CT__OPTIM_LD_f64
#undef CT__OPTIM_ST_f32
#undef CT__OPTIM_ST_f64
#undef CT__OPTIM_SET_f32
#undef CT__OPTIM_SET_f64
#undef CT__OPTIM_ADD_f32
#undef CT__OPTIM_ADD_f64
#undef CT__OPTIM_SUB_f32
#undef CT__OPTIM_SUB_f64
#undef CT__OPTIM_MUL_f32
#undef CT__OPTIM_MUL_f64
#undef CT__OPTIM_DIV_f32
#undef CT__OPTIM_DIV_f64
#undef CT__OPTIM_SQRT_f32
#undef CT__OPTIM_SQRT_f64
#endif

CT__VECTORIZE_END

// >>part data/npy.c
/* data/npy.c - the .npy reader and writer (numpy.lib.format).
 *
 * File layout: magic "\x93NUMPY" (6 bytes), major, minor (1 byte each), header length
 * (uint16 LE for 1.0, uint32 LE for 2.0/3.0), the header (a Python dict literal with the
 * keys 'descr', 'fortran_order' and 'shape', padded with spaces and ended by '\n'), then
 * the raw C-ordered elements. Every length and offset is checked against nbytes before it
 * is used; the header parser reads through a bounded cursor and never past `end`.
 */

#ifndef CTORCH_NO_STDIO
#include <errno.h>
#endif

#define CT__NPY_MAGIC_LEN 6
#define CT__NPY_ALIGN 64
#define CT__NPY_GROWTH_DIGITS 21 /* numpy's GROWTH_AXIS_MAX_DIGITS */
#define CT__NPY_HEADER_MAX 512   /* the largest header ct_npy_save writes (8 dims) */

static const char ct__npy_magic[CT__NPY_MAGIC_LEN] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* numpy descr of each ctorch dtype, in enum order (index 0 unused). */
static const char *const ct__npy_descr[CT_DTYPE_COUNT] = {
    NULL, "|b1", "|u1", "|i1", "<i2", "<i4", "<i8", "<f4", "<f8",
};

static CT__UNUSED bool ct__npy_little_endian(void)
{
    uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Reverses the bytes of n elements of es bytes each (big-endian hosts only). */
static CT__UNUSED void ct__npy_swap(char *p, int64_t n, size_t es)
{
    if (es == 1 || ct__npy_little_endian()) {
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        char *e = p + (size_t)k * es;
        for (size_t i = 0; i < es / 2; i++) {
            char c = e[i];
            e[i] = e[es - 1 - i];
            e[es - 1 - i] = c;
        }
    }
}

/* ---- header parsing ----------------------------------------------------------------- */
typedef struct ct__npy_cursor {
    const char *p, *begin, *end;
    const char *op;
} ct__npy_cursor;

static CT__UNUSED void ct__npy_skip_ws(ct__npy_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) {
        c->p++;
    }
}

/* Fails with a CT_ERR_FORMAT naming the header offset of the cursor. */
static CT__UNUSED bool ct__npy_bad(ct__npy_cursor *c, const char *what)
{
    ct__fail(CT_ERR_FORMAT, c->op, "malformed header: %s at header byte %ld", what,
             (long)(c->p - c->begin));
    return false;
}

static CT__UNUSED bool ct__npy_expect(ct__npy_cursor *c, char ch, const char *what)
{
    ct__npy_skip_ws(c);
    if (c->p >= c->end || *c->p != ch) {
        return ct__npy_bad(c, what);
    }
    c->p++;
    return true;
}

/* A quoted string without escapes, copied into out (cap bytes, NUL-terminated). */
static CT__UNUSED bool ct__npy_string(ct__npy_cursor *c, char *out, size_t cap)
{
    ct__npy_skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) {
        return ct__npy_bad(c, "expected a quoted string");
    }
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n' || n + 1 >= cap) {
            return ct__npy_bad(c, "unsupported or overlong string");
        }
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) {
        return ct__npy_bad(c, "unterminated string");
    }
    c->p++;
    out[n] = '\0';
    return true;
}

/* True or False. */
static CT__UNUSED bool ct__npy_bool(ct__npy_cursor *c, bool *out)
{
    ct__npy_skip_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4;
        *out = true;
        return true;
    }
    if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5;
        *out = false;
        return true;
    }
    return ct__npy_bad(c, "expected True or False for 'fortran_order'");
}

/* A tuple of non-negative decimal integers: (), (3,), (3, 4) or (3, 4,); Python 2's 'L'
   suffix is accepted. More than CT_MAX_DIMS entries is CT_ERR_UNSUPPORTED. */
static CT__UNUSED bool ct__npy_shape(ct__npy_cursor *c, int64_t *sizes, int *ndim)
{
    if (!ct__npy_expect(c, '(', "expected '(' to open 'shape'")) {
        return false;
    }
    int n = 0;
    bool need_sep = false;
    for (;;) {
        ct__npy_skip_ws(c);
        if (c->p >= c->end) {
            return ct__npy_bad(c, "unterminated 'shape' tuple");
        }
        if (*c->p == ')') {
            if (n == 1 && need_sep) {
                return ct__npy_bad(c, "a one-element 'shape' needs a trailing comma");
            }
            c->p++;
            break;
        }
        if (need_sep) {
            if (*c->p != ',') {
                return ct__npy_bad(c, "expected ',' or ')' in 'shape'");
            }
            c->p++;
            need_sep = false;
            continue;
        }
        if (*c->p < '0' || *c->p > '9') {
            return ct__npy_bad(c, "'shape' entries must be non-negative integers");
        }
        int64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (INT64_MAX / 16) / 10) {
                return ct__npy_bad(c, "'shape' entry is too large");
            }
            v = v * 10 + (*c->p++ - '0');
        }
        if (c->p < c->end && *c->p == 'L') {
            c->p++;
        }
        if (n == CT_MAX_DIMS) {
            ct__fail(CT_ERR_UNSUPPORTED, c->op, "arrays with more than %d dimensions are not "
                     "supported", CT_MAX_DIMS);
            return false;
        }
        sizes[n++] = v;
        need_sep = true;
    }
    *ndim = n;
    return true;
}

typedef struct ct__npy_header {
    char descr[32];
    bool fortran_order;
    int64_t sizes[CT_MAX_DIMS];
    int ndim;
} ct__npy_header;

/* Parses "{'descr': ..., 'fortran_order': ..., 'shape': (...), }" followed by whitespace;
   each key exactly once, no other keys. */
static CT__UNUSED bool ct__npy_parse_header(ct__npy_cursor *c, ct__npy_header *h)
{
    bool seen[3] = {false, false, false};
    if (!ct__npy_expect(c, '{', "expected '{'")) {
        return false;
    }
    for (;;) {
        ct__npy_skip_ws(c);
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            break;
        }
        char key[32];
        if (!ct__npy_string(c, key, sizeof key) || !ct__npy_expect(c, ':', "expected ':'")) {
            return false;
        }
        int k = strcmp(key, "descr") == 0 ? 0 : strcmp(key, "fortran_order") == 0 ? 1
              : strcmp(key, "shape") == 0 ? 2 : -1;
        if (k < 0) {
            ct__fail(CT_ERR_FORMAT, c->op, "Header does not contain the correct keys: "
                     "unexpected key '%s'", key);
            return false;
        }
        if (seen[k]) {
            ct__fail(CT_ERR_FORMAT, c->op, "malformed header: key '%s' appears twice", key);
            return false;
        }
        seen[k] = true;
        bool ok;
        if (k == 0) {
            ct__npy_skip_ws(c);
            if (c->p < c->end && (*c->p == '[' || *c->p == '{')) {
                ct__fail(CT_ERR_DTYPE, c->op, "structured dtypes are not supported");
                return false;
            }
            ok = ct__npy_string(c, h->descr, sizeof h->descr);
        } else if (k == 1) {
            ok = ct__npy_bool(c, &h->fortran_order);
        } else {
            ok = ct__npy_shape(c, h->sizes, &h->ndim);
        }
        if (!ok) {
            return false;
        }
        ct__npy_skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
        } else if (!(c->p < c->end && *c->p == '}')) {
            return ct__npy_bad(c, "expected ',' or '}'");
        }
    }
    ct__npy_skip_ws(c);
    if (c->p != c->end) {
        return ct__npy_bad(c, "unexpected characters after '}'");
    }
    if (!seen[0] || !seen[1] || !seen[2]) {
        ct__fail(CT_ERR_FORMAT, c->op, "Header does not contain the correct keys: missing "
                 "'%s'", !seen[0] ? "descr" : !seen[1] ? "fortran_order" : "shape");
        return false;
    }
    return true;
}

/* The dtype of a descr; '<' and '|' (and '=' on little-endian hosts) for one-byte types. */
static CT__UNUSED ct_dtype ct__npy_dtype_of(const char *descr)
{
    for (int d = 1; d < CT_DTYPE_COUNT; d++) {
        const char *want = ct__npy_descr[d];
        if (strcmp(descr, want) == 0) {
            return (ct_dtype)d;
        }
        if (want[0] == '|' && descr[0] == '<' && strcmp(descr + 1, want + 1) == 0) {
            return (ct_dtype)d;
        }
    }
    return CT_DTYPE_DEFAULT;
}

static CT__UNUSED uint32_t ct__npy_le(const unsigned char *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static CT__UNUSED ct_tensor *ct__npy_parse(const char *op, const void *data, size_t nbytes)
{
    const unsigned char *b = (const unsigned char *)data;
    if (nbytes < CT__NPY_MAGIC_LEN + 2) {
        ct__fail(CT_ERR_FORMAT, op, "truncated file: %zu bytes is shorter than the .npy "
                 "preamble", nbytes);
        return NULL;
    }
    if (memcmp(b, ct__npy_magic, CT__NPY_MAGIC_LEN) != 0) {
        ct__fail(CT_ERR_FORMAT, op, "the magic string is not correct; expected "
                 "'\\x93NUMPY', got '\\x%02x%c%c%c%c%c'", b[0],
                 b[1] >= 32 && b[1] < 127 ? b[1] : '?', b[2] >= 32 && b[2] < 127 ? b[2] : '?',
                 b[3] >= 32 && b[3] < 127 ? b[3] : '?', b[4] >= 32 && b[4] < 127 ? b[4] : '?',
                 b[5] >= 32 && b[5] < 127 ? b[5] : '?');
        return NULL;
    }
    int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "we only support format version (1,0), (2,0), and "
                 "(3,0), not (%d, %d)", major, minor);
        return NULL;
    }
    size_t len_bytes = major == 1 ? 2 : 4;
    size_t prefix = CT__NPY_MAGIC_LEN + 2 + len_bytes;
    if (nbytes < prefix) {
        ct__fail(CT_ERR_FORMAT, op, "truncated file: %zu bytes is shorter than the %zu-byte "
                 "preamble of format %d.0", nbytes, prefix, major);
        return NULL;
    }
    size_t hlen = ct__npy_le(b + CT__NPY_MAGIC_LEN + 2, (int)len_bytes);
    if (hlen > nbytes - prefix) {
        ct__fail(CT_ERR_FORMAT, op, "header length %zu exceeds the %zu bytes left in the file "
                 "(truncated or corrupt)", hlen, nbytes - prefix);
        return NULL;
    }
    ct__npy_cursor c;
    c.begin = c.p = (const char *)b + prefix;
    c.end = c.begin + hlen;
    c.op = op;
    ct__npy_header h;
    memset(&h, 0, sizeof h);
    if (!ct__npy_parse_header(&c, &h)) {
        return NULL;
    }
    ct_dtype dtype = ct__npy_dtype_of(h.descr);
    if (dtype == CT_DTYPE_DEFAULT) {
        ct__fail(CT_ERR_DTYPE, op, "unsupported dtype descr '%s' (supported: <f4 <f8 <i8 <i4 "
                 "<i2 |i1 |u1 |b1)", h.descr);
        return NULL;
    }
    if (h.fortran_order) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "fortran_order True is not supported; save a "
                 "C-ordered array (numpy.ascontiguousarray)");
        return NULL;
    }
    /* each size < 2^59 (parser); bound the product of the nonzero sizes so that strides
       and byte counts cannot overflow */
    size_t es = ct_dtype_size(dtype);
    uint64_t span = 1;
    bool empty = false;
    for (int i = 0; i < h.ndim; i++) {
        uint64_t s = (uint64_t)h.sizes[i];
        if (s == 0) {
            empty = true;
            continue;
        }
        if (span > (uint64_t)(INT64_MAX / 16) / s) {
            char buf[200];
            ct__fail(CT_ERR_FORMAT, op, "shape %s is too large",
                     ct__shape_str(h.sizes, h.ndim, buf, sizeof buf));
            return NULL;
        }
        span *= s;
    }
    uint64_t need = empty ? 0 : span * (uint64_t)es;
    uint64_t have = (uint64_t)(nbytes - prefix - hlen);
    if (need != have) {
        char buf[200];
        ct__fail(CT_ERR_FORMAT, op, "data has %llu bytes but shape %s of %s needs %llu%s",
                 (unsigned long long)have, ct__shape_str(h.sizes, h.ndim, buf, sizeof buf),
                 ct__npy_descr[dtype], (unsigned long long)need,
                 have < need ? " (truncated file)" : "");
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(op, h.sizes, h.ndim, dtype);
    if (!t) {
        return NULL;
    }
    if (need > 0) {
        char *dst = ct__data(t);
        memcpy(dst, b + prefix + hlen, (size_t)need);
        if (dtype == CT_BOOL) {
            for (size_t i = 0; i < (size_t)need; i++) {
                dst[i] = dst[i] != 0; /* only 0 and 1 are valid bool bytes */
            }
        }
        ct__npy_swap(dst, (int64_t)span, es);
    }
    return ct__scoped(t);
}

ct_tensor *ct_npy_load_buffer(const void *data, size_t nbytes)
{
    if (nbytes > 0 && ct__null("ct_npy_load_buffer", data)) {
        return NULL;
    }
    return ct__npy_parse("ct_npy_load_buffer", nbytes ? data : "", nbytes);
}

/* ---- writing ------------------------------------------------------------------------ */
/* Writes numpy.save's preamble and padded header for t into out; returns its length. */
static CT__UNUSED size_t ct__npy_header_bytes(const ct_tensor *t, char *out)
{
    char *h = out + CT__NPY_MAGIC_LEN + 4;
    size_t cap = CT__NPY_HEADER_MAX - CT__NPY_MAGIC_LEN - 4;
    int n = snprintf(h, cap, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     ct__npy_descr[t->dtype]);
    for (int i = 0; i < t->ndim; i++) {
        n += snprintf(h + n, cap - (size_t)n, i ? ", %lld" : "%lld", (long long)t->sizes[i]);
    }
    n += snprintf(h + n, cap - (size_t)n, "%s), }", t->ndim == 1 ? "," : "");
    if (t->ndim > 0) {
        int digits = snprintf(NULL, 0, "%lld", (long long)t->sizes[0]);
        for (int i = digits; i < CT__NPY_GROWTH_DIGITS; i++) {
            h[n++] = ' ';
        }
    }
    size_t hlen = (size_t)n + 1;
    size_t pad = CT__NPY_ALIGN - ((CT__NPY_MAGIC_LEN + 4 + hlen) % CT__NPY_ALIGN);
    memset(h + n, ' ', pad);
    h[(size_t)n + pad] = '\n';
    hlen += pad;
    memcpy(out, ct__npy_magic, CT__NPY_MAGIC_LEN);
    out[6] = 1;
    out[7] = 0;
    out[8] = (char)(hlen & 0xff);
    out[9] = (char)(hlen >> 8);
    return CT__NPY_MAGIC_LEN + 4 + hlen;
}

/* Copies elements [begin, begin + count) of t in C order into dst (little-endian). */
static CT__UNUSED void ct__npy_gather(const ct_tensor *t, int64_t begin, int64_t count, char *dst)
{
    size_t es = ct_dtype_size(t->dtype);
    const char *base = ct__data(t);
    if (ct_is_contiguous(t)) {
        memcpy(dst, base + (size_t)begin * es, (size_t)count * es);
    } else {
        int64_t idx[CT_MAX_DIMS];
        int64_t rest = begin;
        for (int d = t->ndim - 1; d >= 0; d--) {
            idx[d] = rest % t->sizes[d];
            rest /= t->sizes[d];
        }
        for (int64_t k = 0; k < count; k++) {
            int64_t off = 0;
            for (int d = 0; d < t->ndim; d++) {
                off += idx[d] * t->strides[d];
            }
            memcpy(dst + (size_t)k * es, base + off * (int64_t)es, es);
            for (int d = t->ndim - 1; d >= 0; d--) {
                if (++idx[d] < t->sizes[d]) {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
    ct__npy_swap(dst, count, es);
}

static CT__UNUSED bool ct__npy_check_saveable(const char *op, const ct_tensor *t)
{
    return !ct__null(op, t) && ct__check_cpu(op, t);
}

size_t ct_npy_save_buffer(const ct_tensor *t, void *buf, size_t n)
{
    if (!ct__npy_check_saveable("ct_npy_save_buffer", t)) {
        return 0;
    }
    char header[CT__NPY_HEADER_MAX];
    size_t hbytes = ct__npy_header_bytes(t, header);
    int64_t numel = ct__numel(t->sizes, t->ndim);
    size_t total = hbytes + (size_t)numel * ct_dtype_size(t->dtype);
    if (buf && n >= total) {
        char *out = (char *)buf;
        memcpy(out, header, hbytes);
        if (numel > 0) {
            ct__npy_gather(t, 0, numel, out + hbytes);
        }
    }
    return total;
}

#ifndef CTORCH_NO_STDIO
ct_tensor *ct_npy_load(const char *path)
{
    const char *op = "ct_npy_load";
    if (ct__null(op, path)) {
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno), path);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *data = (char *)ct__malloc(cap);
    for (;;) {
        if (!data) {
            fclose(f);
            ct__fail(CT_ERR_OOM, op, "not enough memory to read '%s'", path);
            return NULL;
        }
        len += fread(data + len, 1, cap - len, f);
        if (len < cap) {
            break;
        }
        cap *= 2;
        char *grown = (char *)ct__realloc(data, cap);
        if (!grown) {
            ct__free(data);
        }
        data = grown;
    }
    bool failed = ferror(f) != 0;
    int err = errno;
    fclose(f);
    ct_tensor *t = NULL;
    if (failed) {
        ct__fail(CT_ERR_IO, op, "could not read '%s': %s", path, strerror(err));
    } else {
        t = ct__npy_parse(op, data, len);
    }
    ct__free(data);
    return t;
}

ct_status ct_npy_save(const char *path, const ct_tensor *t)
{
    const char *op = "ct_npy_save";
    if (ct__null(op, path) || ct__null(op, t)) {
        return CT_ERR_NULL_ARG;
    }
    if (!ct__check_cpu(op, t)) {
        return CT_ERR_DEVICE;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        return ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno), path);
    }
    char header[CT__NPY_HEADER_MAX];
    size_t hbytes = ct__npy_header_bytes(t, header);
    bool ok = fwrite(header, 1, hbytes, f) == hbytes;
    int64_t numel = ct__numel(t->sizes, t->ndim);
    size_t es = ct_dtype_size(t->dtype);
    int64_t chunk = (int64_t)((size_t)1 << 20) / (int64_t)es;
    char *buf = numel > 0 ? (char *)ct__malloc((size_t)(numel < chunk ? numel : chunk) * es) : NULL;
    if (numel > 0 && !buf) {
        fclose(f);
        return ct__fail(CT_ERR_OOM, op, "not enough memory to write '%s'", path);
    }
    for (int64_t k = 0; ok && k < numel; k += chunk) {
        int64_t count = numel - k < chunk ? numel - k : chunk;
        ct__npy_gather(t, k, count, buf);
        ok = fwrite(buf, es, (size_t)count, f) == (size_t)count;
    }
    ct__free(buf);
    if (fclose(f) != 0) {
        ok = false;
    }
    if (!ok) {
        return ct__fail(CT_ERR_IO, op, "could not write '%s'", path);
    }
    return CT_OK;
}
#endif

#undef CT__NPY_MAGIC_LEN
#undef CT__NPY_ALIGN
#undef CT__NPY_GROWTH_DIGITS
#undef CT__NPY_HEADER_MAX

// >>part data/idx.c
/* data/idx.c - the IDX reader (MNIST family): validate the header, then a big-endian copy.
 *
 * Layout: magic [0, 0, type, ndim], ndim big-endian uint32 sizes, then numel * item bytes of
 * big-endian elements. Every length is checked before it is used: the data must be exactly
 * as long as the header declares (no truncation, no trailing bytes), and no buffer is sized
 * from the header beyond what the input has shown to hold.
 */

#ifndef CTORCH_NO_STDIO
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#endif
#ifdef CTORCH_ZLIB
#include <zlib.h>
#endif

#define CT__IDX_MAX_HEADER (4 + 4 * CT_MAX_DIMS)
/* The streaming reader grows its buffer from this size as data arrives. */
#define CT__IDX_CHUNK ((size_t)1 << 20)
/* " in 'path'" appended to messages about files ("%s%s%s"). */
#define CT__IDX_IN(path) (path) ? " in '" : "", (path) ? (path) : "", (path) ? "'" : ""

typedef struct ct__idx_header {
    ct_dtype dtype;
    size_t item_bytes;
    int ndim;
    size_t header_bytes; /* 4 + 4 * ndim */
    int64_t sizes[CT_MAX_DIMS];
    uint64_t data_bytes;
    char desc[160]; /* "60000x28x28 uint8" */
} ct__idx_header;

static void ct__idx_append(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(buf);
    while (*s && n + 1 < cap) {
        buf[n++] = *s++;
    }
    buf[n] = '\0';
}

static void ct__idx_append_u64(char *buf, size_t cap, uint64_t v)
{
    char tmp[24];
    int i = (int)sizeof tmp - 1;
    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    ct__idx_append(buf, cap, tmp + i);
}

/* Checks the 4 magic bytes; sets dtype, item_bytes, ndim and header_bytes. */
static bool ct__idx_magic(const char *op, const char *path, const unsigned char *b, size_t avail,
                          ct__idx_header *h)
{
    if (avail < 4) {
        ct__fail(CT_ERR_FORMAT, op, "truncated file: %zu bytes, shorter than the 4-byte IDX "
                 "header%s%s%s", avail, CT__IDX_IN(path));
        return false;
    }
    if (b[0] != 0 || b[1] != 0) {
        if (b[0] == 0x1f && b[1] == 0x8b) {
            ct__fail(CT_ERR_FORMAT, op, "not an IDX file: the data is gzip-compressed (magic "
                     "0x1f 0x8b); gunzip it, or load a path ending in .gz with CTORCH_ZLIB%s%s%s",
                     CT__IDX_IN(path));
        } else {
            ct__fail(CT_ERR_FORMAT, op, "not an IDX file: magic bytes 0x%02x 0x%02x, expected "
                     "0x00 0x00%s%s%s", b[0], b[1], CT__IDX_IN(path));
        }
        return false;
    }
    switch (b[2]) {
    case 0x08: h->dtype = CT_UINT8; break;
    case 0x09: h->dtype = CT_INT8; break;
    case 0x0B: h->dtype = CT_INT16; break;
    case 0x0C: h->dtype = CT_INT32; break;
    case 0x0D: h->dtype = CT_FLOAT32; break;
    case 0x0E: h->dtype = CT_FLOAT64; break;
    default:
        ct__fail(CT_ERR_FORMAT, op, "unknown IDX type code 0x%02x (expected 0x08 uint8, 0x09 "
                 "int8, 0x0B int16, 0x0C int32, 0x0D float32 or 0x0E float64)%s%s%s", b[2],
                 CT__IDX_IN(path));
        return false;
    }
    h->item_bytes = ct_dtype_size(h->dtype);
    h->ndim = b[3];
    if (h->ndim == 0 || h->ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_FORMAT, op, "IDX header declares %d dimensions, expected 1 to %d%s%s%s",
                 h->ndim, CT_MAX_DIMS, CT__IDX_IN(path));
        return false;
    }
    h->header_bytes = 4 + 4 * (size_t)h->ndim;
    return true;
}

/* Reads the sizes (b holds avail bytes from the start of the file); sets sizes, data_bytes
   and desc. */
static bool ct__idx_sizes(const char *op, const char *path, const unsigned char *b, size_t avail,
                          ct__idx_header *h)
{
    if (avail < h->header_bytes) {
        ct__fail(CT_ERR_FORMAT, op, "truncated header: %d dimensions need a %zu-byte header but "
                 "the file has %zu bytes%s%s%s", h->ndim, h->header_bytes, avail,
                 CT__IDX_IN(path));
        return false;
    }
    /* at most INT64_MAX / 16 elements (as ct_empty) and SIZE_MAX bytes */
    uint64_t limit = (uint64_t)INT64_MAX / 16;
    if ((uint64_t)SIZE_MAX / h->item_bytes < limit) {
        limit = (uint64_t)SIZE_MAX / h->item_bytes;
    }
    /* the product of the non-zero sizes must fit too: strides are computed from it */
    uint64_t numel = 1;
    bool zero = false, overflow = false;
    h->desc[0] = '\0';
    for (int d = 0; d < h->ndim; d++) {
        const unsigned char *p = b + 4 + 4 * d;
        uint64_t v = ((uint64_t)p[0] << 24) | ((uint64_t)p[1] << 16) | ((uint64_t)p[2] << 8) |
                     (uint64_t)p[3];
        h->sizes[d] = (int64_t)v;
        zero = zero || v == 0;
        if (v != 0 && numel > limit / v) {
            overflow = true;
        } else if (v != 0) {
            numel *= v;
        }
        if (d > 0) {
            ct__idx_append(h->desc, sizeof h->desc, "x");
        }
        ct__idx_append_u64(h->desc, sizeof h->desc, v);
    }
    ct__idx_append(h->desc, sizeof h->desc, " ");
    ct__idx_append(h->desc, sizeof h->desc, ct_dtype_name(h->dtype));
    if (overflow) {
        ct__fail(CT_ERR_FORMAT, op, "header declares %s, more elements than a tensor can "
                 "hold%s%s%s", h->desc, CT__IDX_IN(path));
        return false;
    }
    h->data_bytes = zero ? 0 : numel * h->item_bytes;
    return true;
}

/* Fails unless exactly data_bytes follow the header. `more`: at least that many follow. */
static bool ct__idx_length(const char *op, const char *path, const ct__idx_header *h,
                           uint64_t follow, bool more)
{
    if (follow == h->data_bytes && !more) {
        return true;
    }
    ct__fail(CT_ERR_FORMAT, op, "%s: header declares %s (%llu bytes) but %s%llu bytes "
             "follow%s%s%s", follow < h->data_bytes ? "truncated file" : "trailing data",
             h->desc, (unsigned long long)h->data_bytes, more ? "at least " : "",
             (unsigned long long)follow, CT__IDX_IN(path));
    return false;
}

/* Converts n bytes of big-endian items to host order from src into dst (may be equal). */
static void ct__idx_decode(char *dst, const unsigned char *src, uint64_t n, size_t item)
{
    const uint16_t one = 1;
    bool little = *(const unsigned char *)&one == 1;
    if (item == 1 || !little) {
        if (dst != (const char *)src && n) {
            memcpy(dst, src, (size_t)n);
        }
        return;
    }
    for (uint64_t i = 0; i < n; i += item) {
        unsigned char tmp[8];
        for (size_t k = 0; k < item; k++) {
            tmp[k] = src[i + item - 1 - k];
        }
        memcpy(dst + i, tmp, item);
    }
}

ct_tensor *ct_idx_load_buffer(const void *data, size_t nbytes)
{
    const char *op = "ct_idx_load_buffer";
    if (nbytes && ct__null(op, data)) {
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)data;
    ct__idx_header h;
    if (!ct__idx_magic(op, NULL, b, nbytes, &h) || !ct__idx_sizes(op, NULL, b, nbytes, &h) ||
        !ct__idx_length(op, NULL, &h, (uint64_t)(nbytes - h.header_bytes), false)) {
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(op, h.sizes, h.ndim, h.dtype);
    if (!t) {
        return NULL;
    }
    ct__idx_decode(ct__data(t), b + h.header_bytes, h.data_bytes, h.item_bytes);
    return ct__scoped(t);
}

#ifndef CTORCH_NO_STDIO
/* A byte source: fread or gzread. read returns the bytes read (0 at the end) and sets *err
   (after recording the error) on failure. */
typedef struct ct__idx_source {
    const char *op, *path;
    FILE *f;
#ifdef CTORCH_ZLIB
    gzFile gz;
#endif
} ct__idx_source;

static size_t ct__idx_read(ct__idx_source *s, void *buf, size_t n, bool *err)
{
#ifdef CTORCH_ZLIB
    if (s->gz) {
        size_t total = 0;
        while (total < n) {
            size_t want = n - total < (size_t)INT_MAX ? n - total : (size_t)INT_MAX;
            int got = gzread(s->gz, (char *)buf + total, (unsigned)want);
            if (got < 0) {
                int zerr = Z_OK;
                const char *msg = gzerror(s->gz, &zerr);
                ct__fail(zerr == Z_ERRNO ? CT_ERR_IO : CT_ERR_FORMAT, s->op,
                         "cannot decompress '%s': %s", s->path,
                         zerr == Z_ERRNO ? strerror(errno) : msg);
                *err = true;
                return total;
            }
            if (got == 0) {
                break;
            }
            total += (size_t)got;
        }
        return total;
    }
#endif
    size_t got = fread(buf, 1, n, s->f);
    if (got < n && ferror(s->f)) {
        ct__fail(CT_ERR_IO, s->op, "cannot read '%s': %s", s->path, strerror(errno));
        *err = true;
    }
    return got;
}

/* The bytes left in a seekable plain file, or -1 when unknown. */
static int64_t ct__idx_remaining(ct__idx_source *s)
{
#ifdef CTORCH_ZLIB
    if (s->gz) {
        return -1;
    }
#endif
    long here = ftell(s->f);
    if (here < 0 || fseek(s->f, 0, SEEK_END) != 0) {
        return -1;
    }
    long end = ftell(s->f);
    if (fseek(s->f, here, SEEK_SET) != 0) {
        return -1;
    }
    return end >= here ? (int64_t)(end - here) : -1;
}

/* Reads the data of unknown length into a buffer grown as bytes arrive (never beyond
   data_bytes), then checks that nothing follows. */
static ct_tensor *ct__idx_read_stream(ct__idx_source *s, const ct__idx_header *h)
{
    size_t want = (size_t)h->data_bytes, cap = want < CT__IDX_CHUNK ? want : CT__IDX_CHUNK;
    unsigned char *buf = (unsigned char *)ct__malloc(cap ? cap : 1);
    size_t len = 0;
    bool err = false;
    if (!buf) {
        ct__fail(CT_ERR_OOM, s->op, "out of memory reading '%s'", s->path);
        return NULL;
    }
    while (len < want) {
        if (len == cap) {
            size_t next = cap > want / 2 ? want : cap * 2;
            unsigned char *grown = (unsigned char *)ct__realloc(buf, next);
            if (!grown) {
                ct__free(buf);
                ct__fail(CT_ERR_OOM, s->op, "out of memory reading '%s' (%zu bytes)", s->path,
                         next);
                return NULL;
            }
            buf = grown;
            cap = next;
        }
        size_t got = ct__idx_read(s, buf + len, cap - len, &err);
        len += got;
        if (err || got == 0) {
            break;
        }
    }
    uint64_t extra = 0;
    unsigned char scratch[4096];
    while (!err && len == want && extra < CT__IDX_CHUNK) { /* count trailing bytes */
        size_t got = ct__idx_read(s, scratch, sizeof scratch, &err);
        if (got == 0) {
            break;
        }
        extra += got;
    }
    ct_tensor *t = NULL;
    if (!err && ct__idx_length(s->op, s->path, h, len + extra, extra >= CT__IDX_CHUNK)) {
        t = ct__tensor_new(s->op, h->sizes, h->ndim, h->dtype);
        if (t) {
            ct__idx_decode(ct__data(t), buf, h->data_bytes, h->item_bytes);
        }
    }
    ct__free(buf);
    return t;
}

static ct_tensor *ct__idx_read_source(ct__idx_source *s)
{
    unsigned char hb[CT__IDX_MAX_HEADER];
    ct__idx_header h;
    bool err = false;
    size_t got = ct__idx_read(s, hb, 4, &err);
    if (err || !ct__idx_magic(s->op, s->path, hb, got, &h)) {
        return NULL;
    }
    got += ct__idx_read(s, hb + 4, h.header_bytes - 4, &err);
    if (err || !ct__idx_sizes(s->op, s->path, hb, got, &h)) {
        return NULL;
    }
    int64_t remaining = ct__idx_remaining(s);
    if (remaining < 0) {
        return ct__idx_read_stream(s, &h);
    }
    if (!ct__idx_length(s->op, s->path, &h, (uint64_t)remaining, false)) {
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(s->op, h.sizes, h.ndim, h.dtype);
    if (!t) {
        return NULL;
    }
    got = ct__idx_read(s, ct__data(t), (size_t)h.data_bytes, &err);
    if (!err && got != h.data_bytes) { /* the file shrank since it was measured */
        ct__idx_length(s->op, s->path, &h, got, false);
        err = true;
    }
    if (err) {
        ct__release(t);
        return NULL;
    }
    ct__idx_decode(ct__data(t), (const unsigned char *)ct__data(t), h.data_bytes, h.item_bytes);
    return t;
}

ct_tensor *ct_idx_load(const char *path)
{
    const char *op = "ct_idx_load";
    if (ct__null(op, path)) {
        return NULL;
    }
    size_t n = strlen(path);
    bool gz = n >= 3 && strcmp(path + n - 3, ".gz") == 0;
#ifndef CTORCH_ZLIB
    if (gz) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "reading gzip files needs zlib: define CTORCH_ZLIB and "
                 "link -lz (or gunzip the file) ('%s')", path);
        return NULL;
    }
#endif
    ct__idx_source s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.path = path;
    s.f = fopen(path, "rb"); /* also for .gz: a clear message when the file is missing */
    if (!s.f) {
        ct__fail(CT_ERR_IO, op, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    ct_tensor *t = NULL;
    if (gz) {
        fclose(s.f);
        s.f = NULL;
#ifdef CTORCH_ZLIB
        s.gz = gzopen(path, "rb");
        if (!s.gz) {
            ct__fail(CT_ERR_IO, op, "cannot open '%s': %s", path,
                     errno ? strerror(errno) : "zlib could not allocate its state");
            return NULL;
        }
        t = ct__idx_read_source(&s);
        gzclose(s.gz);
#endif
        return ct__scoped(t);
    }
    t = ct__idx_read_source(&s);
    fclose(s.f);
    return ct__scoped(t);
}
#endif /* CTORCH_NO_STDIO */

#undef CT__IDX_MAX_HEADER
#undef CT__IDX_CHUNK
#undef CT__IDX_IN

// >>part data/dataset.c
/* data/dataset.c - the dataset vtable, TensorDataset (with a direct row gather for batches),
 * Subset, random_split and default_collate.
 *
 * Legend: N samples, n rows in a batch, F fields per sample, row = one sample's field
 * (numel of dims 1.. of a tensor dataset's tensor).
 */


/* ---- the vtable ------------------------------------------------------------------------ */
static bool ct__dataset_check(const char *op, const ct_dataset *ds)
{
    if (ct__null(op, ds)) {
        return false;
    }
    if (!ds->len || !ds->get) {
        ct__fail(CT_ERR_VALUE, op, "the dataset's len and get callbacks must not be NULL");
        return false;
    }
    if (ds->n_fields < 1 || ds->n_fields > CT_DATASET_MAX_FIELDS) {
        ct__fail(CT_ERR_VALUE, op, "the dataset's n_fields is %d, expected 1 to %d",
                 ds->n_fields, CT_DATASET_MAX_FIELDS);
        return false;
    }
    return true;
}

/* Sets the output fields[0..n) to NULL (they may hold garbage on entry). */
static void ct__dataset_null(ct_tensor **fields, int n)
{
    for (int f = 0; f < n; f++) {
        fields[f] = NULL;
    }
}

/* Releases fields[0..n) and sets them NULL. */
static void ct__dataset_clear(ct_tensor **fields, int n)
{
    for (int f = 0; f < n; f++) {
        ct_free(fields[f]);
        fields[f] = NULL;
    }
}

/* The status after a callback returned st and filled fields: an error when st is nonzero or a
   field is NULL; the fields are cleared on error. */
static ct_status ct__dataset_finish(const char *op, ct_status st, ct_tensor **fields, int n)
{
    for (int f = 0; f < n && st == CT_OK; f++) {
        if (!fields[f]) {
            st = ct_error_code() != CT_OK
                     ? ct_error_code()
                     : ct__fail(CT_ERR_VALUE, op, "the dataset returned CT_OK but left field "
                                "%d NULL", f);
        }
    }
    if (st != CT_OK) {
        if (ct_error_code() == CT_OK) {
            ct__fail(st, op, "the dataset failed with status %s", ct_status_str(st));
        }
        ct__dataset_clear(fields, n);
    }
    return st;
}

/* Wraps index into [0, len); -1 + CT_ERR_INDEX when out of range. */
static int64_t ct__dataset_index(const char *op, int64_t index, int64_t len)
{
    int64_t i = index < 0 ? index + len : index;
    if (i < 0 || i >= len) {
        ct__fail(CT_ERR_INDEX, op, "index %lld is out of bounds for dimension 0 with size %lld",
                 (long long)index, (long long)len);
        return -1;
    }
    return i;
}

int64_t ct_dataset_len(const ct_dataset *ds)
{
    if (!ct__dataset_check("ct_dataset_len", ds)) {
        return -1;
    }
    return ds->len(ds);
}

ct_status ct_dataset_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const char *op = "ct_dataset_get";
    if (ct__null(op, fields)) {
        return CT_ERR_NULL_ARG;
    }
    if (!ct__dataset_check(op, ds)) {
        return ct_error_code();
    }
    ct__dataset_null(fields, ds->n_fields);
    int64_t i = ct__dataset_index(op, index, ds->len(ds));
    if (i < 0) {
        return CT_ERR_INDEX;
    }
    return ct__dataset_finish(op, ds->get(ds, i, fields), fields, ds->n_fields);
}

ct_status ct_default_collate(ct_tensor *const *samples, int64_t n, int n_fields,
                             ct_tensor **batch)
{
    const char *op = "ct_default_collate";
    if (ct__null(op, batch) || ct__null(op, samples)) {
        return ct_error_code();
    }
    if (n_fields < 1 || n_fields > CT_DATASET_MAX_FIELDS) {
        return ct__fail(CT_ERR_VALUE, op, "n_fields is %d, expected 1 to %d", n_fields,
                        CT_DATASET_MAX_FIELDS);
    }
    ct__dataset_null(batch, n_fields);
    if (n < 1 || n > INT_MAX) {
        return ct__fail(CT_ERR_VALUE, op, "expected 1 to %d samples, got %lld", INT_MAX,
                        (long long)n);
    }
    const ct_tensor **column = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n);
    if (!column) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_status st = CT_OK;
    for (int f = 0; f < n_fields && st == CT_OK; f++) {
        for (int64_t k = 0; k < n; k++) {
            column[k] = samples[k * n_fields + f];
        }
        batch[f] = ct_stack(column, (int)n, 0);
        if (!batch[f]) {
            st = ct_error_code() != CT_OK ? ct_error_code() : CT_ERR_VALUE;
        }
    }
    ct__free(column);
    if (st != CT_OK) {
        ct__dataset_clear(batch, n_fields);
    }
    return st;
}

/* get per sample, then default_collate; temporaries die in a private scope. */
static ct_status ct__dataset_stack(const ct_dataset *ds, const int64_t *idx, int64_t n,
                                   ct_tensor **fields)
{
    const char *op = "ct_dataset_get_batch";
    int nf = ds->n_fields;
    if ((uint64_t)n > SIZE_MAX / sizeof(ct_tensor *) / (size_t)nf) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_tensor **samples = (ct_tensor **)ct__calloc(sizeof(ct_tensor *) * (size_t)n * (size_t)nf);
    if (!samples) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    bool scoped = ct_scope_begin() == CT_OK;
    ct_status st = CT_OK;
    for (int64_t k = 0; k < n && st == CT_OK; k++) {
        st = ct__dataset_finish(op, ds->get(ds, idx[k], samples + k * nf), samples + k * nf, nf);
    }
    if (st == CT_OK) {
        st = ct_default_collate(samples, n, nf, fields);
    }
    if (scoped) {
        for (int f = 0; f < nf; f++) {
            ct_keep(fields[f]);
        }
        ct_scope_end();
    } else {
        for (int64_t k = 0; k < n * nf; k++) {
            ct_free(samples[k]);
        }
    }
    ct__free(samples);
    return st;
}

ct_status ct_dataset_get_batch(const ct_dataset *ds, const int64_t *indices, int64_t n,
                               ct_tensor **fields)
{
    const char *op = "ct_dataset_get_batch";
    if (ct__null(op, fields)) {
        return CT_ERR_NULL_ARG;
    }
    if (!ct__dataset_check(op, ds)) {
        return ct_error_code();
    }
    ct__dataset_null(fields, ds->n_fields);
    if (ct__null(op, indices)) {
        return CT_ERR_NULL_ARG;
    }
    if (n < 1 || (uint64_t)n > SIZE_MAX / sizeof(int64_t)) {
        return ct__fail(CT_ERR_VALUE, op, "expected at least one index, got n=%lld",
                        (long long)n);
    }
    int64_t len = ds->len(ds);
    int64_t *idx = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!idx) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_status st = CT_OK;
    for (int64_t k = 0; k < n && st == CT_OK; k++) {
        idx[k] = ct__dataset_index(op, indices[k], len);
        st = idx[k] < 0 ? CT_ERR_INDEX : CT_OK;
    }
    if (st == CT_OK) {
        ct_no_grad_begin();
        if (ds->get_batch) {
            st = ct__dataset_finish(op, ds->get_batch(ds, idx, n, fields), fields, ds->n_fields);
        } else {
            st = ct__dataset_stack(ds, idx, n, fields);
        }
        ct_no_grad_end();
    }
    ct__free(idx);
    return st;
}

void ct_dataset_free(ct_dataset *ds)
{
    if (ds && ds->destroy) {
        ds->destroy(ds);
    }
}

/* ---- TensorDataset ---------------------------------------------------------------------- */
typedef struct ct__tensor_dataset {
    ct_dataset base;
    int64_t n; /* N, the shared size(0) */
    ct_tensor *tensors[CT_DATASET_MAX_FIELDS];
} ct__tensor_dataset;

static int64_t ct__tds_len(const ct_dataset *ds)
{
    return ((const ct__tensor_dataset *)ds->user)->n;
}

static ct_status ct__tds_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const ct__tensor_dataset *d = (const ct__tensor_dataset *)ds->user;
    for (int f = 0; f < ds->n_fields; f++) {
        fields[f] = ct_select(d->tensors[f], 0, index);
        if (!fields[f]) {
            return ct_error_code();
        }
    }
    return CT_OK;
}

typedef struct ct__gather_ctx {
    char *dst;
    const char *src;
    const int64_t *idx;
    int64_t src_row_stride_bytes;
    size_t row_bytes;
} ct__gather_ctx;

#define CT__GATHER_AHEAD 4
/* dst (n, row) contiguous <- src rows idx[k] (row contiguous), one memcpy per row */
static void ct__gather_rows(int64_t begin, int64_t end, void *ctx)
{
    const ct__gather_ctx *c = (const ct__gather_ctx *)ctx;
    for (int64_t k = begin; k < end; k++) {
#if defined(__GNUC__) || defined(__clang__)
        if (k + CT__GATHER_AHEAD < end && c->row_bytes <= 4096) { /* random rows: fetch ahead */
            const char *next = c->src + c->idx[k + CT__GATHER_AHEAD] * c->src_row_stride_bytes;
            for (size_t b = 0; b < c->row_bytes; b += 64) {
                __builtin_prefetch(next + b);
            }
        }
#endif
        memcpy(c->dst + (size_t)k * c->row_bytes, c->src + c->idx[k] * c->src_row_stride_bytes,
               c->row_bytes);
    }
}

/* Whether dims 1.. of t are row-major (a row is one contiguous block). */
static bool ct__rows_contiguous(const ct_tensor *t)
{
    int64_t expected = 1;
    for (int d = t->ndim - 1; d >= 1; d--) {
        if (t->sizes[d] != 1 && t->strides[d] != expected) {
            return false;
        }
        expected *= t->sizes[d];
    }
    return true;
}

/* The batch fast path: one gather per field straight from the source storage. */
static ct_status ct__tds_get_batch(const ct_dataset *ds, const int64_t *idx, int64_t n,
                                   ct_tensor **fields)
{
    const char *op = "ct_dataset_get_batch";
    const ct__tensor_dataset *d = (const ct__tensor_dataset *)ds->user;
    for (int f = 0; f < ds->n_fields; f++) {
        const ct_tensor *src = d->tensors[f];
        int64_t sizes[CT_MAX_DIMS];
        sizes[0] = n;
        for (int k = 1; k < src->ndim; k++) {
            sizes[k] = src->sizes[k];
        }
        ct_tensor *out = ct__tensor_new(op, sizes, src->ndim, src->dtype);
        if (!out) {
            return ct_error_code();
        }
        size_t es = ct_dtype_size(src->dtype);
        if (ct__rows_contiguous(src)) {
            ct__gather_ctx c;
            c.dst = ct__data(out);
            c.src = ct__data(src);
            c.idx = idx;
            c.src_row_stride_bytes = src->strides[0] * (int64_t)es;
            c.row_bytes = (size_t)ct__numel(src->sizes + 1, src->ndim - 1) * es;
            int64_t grain = c.row_bytes ? (int64_t)(((size_t)1 << 18) / c.row_bytes) + 1 : n + 1;
            ct__parallel_for(n, grain, ct__gather_rows, &c);
        } else { /* strided rows: copy each through views */
            for (int64_t k = 0; k < n; k++) {
                ct_tensor *to = ct_select(out, 0, k), *from = ct_select(src, 0, idx[k]);
                if (to && from) {
                    ct__copy_kernel(to, from);
                }
                ct_free(to);
                ct_free(from);
            }
        }
        fields[f] = ct__scoped(out);
    }
    return CT_OK;
}

static void ct__tds_destroy(ct_dataset *ds)
{
    ct__tensor_dataset *d = (ct__tensor_dataset *)ds->user;
    for (int f = 0; f < ds->n_fields; f++) {
        ct__release(d->tensors[f]); /* the reference ct_retain took, outside any scope */
    }
    ct__free(d);
}

ct_dataset *ct_tensor_dataset_new(ct_tensor *const *tensors, int n)
{
    const char *op = "ct_tensor_dataset_new";
    if (ct__null(op, tensors)) {
        return NULL;
    }
    if (n < 1 || n > CT_DATASET_MAX_FIELDS) {
        ct__fail(CT_ERR_VALUE, op, "expected 1 to %d tensors, got %d", CT_DATASET_MAX_FIELDS, n);
        return NULL;
    }
    for (int f = 0; f < n; f++) {
        if (ct__null(op, tensors[f]) || !ct__check_cpu(op, tensors[f])) {
            return NULL;
        }
        if (tensors[f]->ndim == 0) {
            ct__fail(CT_ERR_SHAPE, op, "tensor %d is 0-dimensional: every tensor needs a first "
                     "dimension to index samples along", f);
            return NULL;
        }
        if (tensors[f]->sizes[0] != tensors[0]->sizes[0]) {
            ct__fail(CT_ERR_SHAPE, op, "Size mismatch between tensors: tensor 0 has %lld "
                     "samples but tensor %d has %lld", (long long)tensors[0]->sizes[0], f,
                     (long long)tensors[f]->sizes[0]);
            return NULL;
        }
    }
    ct__tensor_dataset *d = (ct__tensor_dataset *)ct__calloc(sizeof(ct__tensor_dataset));
    if (!d) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    d->base.len = ct__tds_len;
    d->base.get = ct__tds_get;
    d->base.get_batch = ct__tds_get_batch;
    d->base.destroy = ct__tds_destroy;
    d->base.n_fields = n;
    d->base.user = d;
    d->n = tensors[0]->sizes[0];
    for (int f = 0; f < n; f++) {
        d->tensors[f] = ct_retain(tensors[f]);
    }
    return &d->base;
}

bool ct_dataset_is_tensor_dataset(const ct_dataset *ds)
{
    return !ct__null("ct_dataset_is_tensor_dataset", ds) && ds->get == ct__tds_get;
}

/* ---- Subset and random_split ------------------------------------------------------------ */
typedef struct ct__subset {
    ct_dataset base;
    ct_dataset *parent; /* borrowed */
    int64_t n;
    int64_t *indices; /* n entries in [0, len(parent)) */
} ct__subset;

static int64_t ct__subset_len(const ct_dataset *ds)
{
    return ((const ct__subset *)ds->user)->n;
}

static ct_status ct__subset_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const ct__subset *s = (const ct__subset *)ds->user;
    return ct_dataset_get(s->parent, s->indices[index], fields);
}

static ct_status ct__subset_get_batch(const ct_dataset *ds, const int64_t *idx, int64_t n,
                                      ct_tensor **fields)
{
    const ct__subset *s = (const ct__subset *)ds->user;
    int64_t *mapped = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!mapped) {
        return ct__fail(CT_ERR_OOM, "ct_dataset_get_batch", "out of memory");
    }
    for (int64_t k = 0; k < n; k++) {
        mapped[k] = s->indices[idx[k]];
    }
    ct_status st = ct_dataset_get_batch(s->parent, mapped, n, fields);
    ct__free(mapped);
    return st;
}

static void ct__subset_destroy(ct_dataset *ds)
{
    ct__subset *s = (ct__subset *)ds->user;
    ct__free(s->indices);
    ct__free(s);
}

ct_dataset *ct_subset_new(ct_dataset *ds, const int64_t *indices, int64_t n)
{
    const char *op = "ct_subset_new";
    if (!ct__dataset_check(op, ds) || (n > 0 && ct__null(op, indices))) {
        return NULL;
    }
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(int64_t) - 1) {
        ct__fail(CT_ERR_VALUE, op, "the number of indices must be non-negative, got %lld",
                 (long long)n);
        return NULL;
    }
    int64_t len = ds->len(ds);
    for (int64_t k = 0; k < n; k++) {
        if (indices[k] < 0 || indices[k] >= len) {
            ct__fail(CT_ERR_INDEX, op, "index %lld is out of bounds for dimension 0 with size "
                     "%lld", (long long)indices[k], (long long)len);
            return NULL;
        }
    }
    ct__subset *s = (ct__subset *)ct__calloc(sizeof(ct__subset));
    int64_t *copy = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!s || !copy) {
        ct__free(s);
        ct__free(copy);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (n > 0) {
        memcpy(copy, indices, sizeof(int64_t) * (size_t)n);
    }
    s->base.len = ct__subset_len;
    s->base.get = ct__subset_get;
    s->base.get_batch = ct__subset_get_batch;
    s->base.destroy = ct__subset_destroy;
    s->base.n_fields = ds->n_fields;
    s->base.user = s;
    s->parent = ds;
    s->n = n;
    s->indices = copy;
    return &s->base;
}

ct_status ct_random_split(ct_dataset *ds, const int64_t *lengths, int n, ct_generator *g,
                          ct_dataset **out)
{
    const char *op = "ct_random_split";
    if (ct__null(op, out)) {
        return CT_ERR_NULL_ARG;
    }
    for (int k = 0; k < n; k++) {
        out[k] = NULL;
    }
    if (!ct__dataset_check(op, ds) || ct__null(op, lengths)) {
        return ct_error_code();
    }
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, op, "expected at least one length, got %d", n);
    }
    int64_t len = ds->len(ds), total = 0;
    for (int k = 0; k < n; k++) {
        if (lengths[k] < 0 || lengths[k] > len) {
            return ct__fail(CT_ERR_VALUE, op, "length %d is %lld, expected 0 to %lld", k,
                            (long long)lengths[k], (long long)len);
        }
        total += lengths[k];
        if (total > len) {
            break;
        }
    }
    if (total != len) {
        return ct__fail(CT_ERR_VALUE, op, "Sum of input lengths does not equal the length of the "
                        "input dataset!");
    }
    ct_tensor *perm = ct_randperm(len, g);
    if (!perm) {
        return ct_error_code();
    }
    const int64_t *p = (const int64_t *)ct__data(perm);
    int64_t offset = 0;
    ct_status st = CT_OK;
    for (int k = 0; k < n && st == CT_OK; k++) {
        out[k] = ct_subset_new(ds, p + offset, lengths[k]);
        offset += lengths[k];
        st = out[k] ? CT_OK : ct_error_code();
    }
    ct_free(perm);
    if (st != CT_OK) {
        for (int k = 0; k < n; k++) {
            ct_dataset_free(out[k]);
            out[k] = NULL;
        }
    }
    return st;
}

#undef CT__GATHER_AHEAD

// >>part data/dataloader.c
/* data/dataloader.c - DataLoader: a sampler (sequential or a permutation per epoch), a batch
 * sampler (batch_size, drop_last) and batched fetches through ct_dataset_get_batch.
 *
 * Legend: N samples in the epoch, B batch size, pos the next position in the epoch's order.
 * RNG stream (as PyTorch's single-process iterator): at each epoch start one 64-bit base
 * seed from the generator; with shuffle, randperm(N) gives the order and a second
 * randperm(N) is drawn when the sampler is exhausted (RandomSampler's trailing
 * randperm(n)[:0]). Without an explicit generator, RandomSampler seeds a private generator
 * with a second draw of random64() % 2^63 from the default one, exactly as PyTorch's does.
 */

struct ct_dataloader {
    ct_dataset *ds; /* borrowed */
    ct_dataloader_opts opts;
    ct_generator *own_gen; /* shuffle without a generator: reseeded every epoch */
    bool started;          /* an epoch is under way */
    int64_t n;             /* N of the current epoch */
    int64_t pos;
    int64_t *order; /* the epoch's permutation (shuffle), capacity order_cap */
    int64_t order_cap;
    int64_t *seq; /* scratch for sequential batch indices, capacity seq_cap */
    int64_t seq_cap;
};

ct_dataloader_opts ct_dataloader_defaults(void)
{
    ct_dataloader_opts o;
    o.batch_size = 1;
    o.shuffle = false;
    o.drop_last = false;
    o.generator = NULL;
    return o;
}

ct_dataloader *ct_dataloader_new(ct_dataset *ds, const ct_dataloader_opts *opts)
{
    const char *op = "ct_dataloader_new";
    if (ct__null(op, ds) || ct_dataset_len(ds) < 0) {
        return NULL;
    }
    ct_dataloader_opts o = opts ? *opts : ct_dataloader_defaults();
    if (o.batch_size < 1) {
        ct__fail(CT_ERR_VALUE, op, "batch_size should be a positive integer value, but got "
                 "batch_size=%lld", (long long)o.batch_size);
        return NULL;
    }
    ct_dataloader *dl = (ct_dataloader *)ct__calloc(sizeof(ct_dataloader));
    if (!dl) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    dl->ds = ds;
    dl->opts = o;
    return dl;
}

/* Grows *buf to hold n int64 values; false + error when out of memory. */
static bool ct__dl_reserve(int64_t **buf, int64_t *cap, int64_t n)
{
    if (n <= *cap) {
        return true;
    }
    if ((uint64_t)n > SIZE_MAX / sizeof(int64_t)) {
        ct__fail(CT_ERR_OOM, "ct_dataloader_next", "out of memory for %lld indices",
                 (long long)n);
        return false;
    }
    int64_t *p = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!p) {
        ct__fail(CT_ERR_OOM, "ct_dataloader_next", "out of memory for %lld indices",
                 (long long)n);
        return false;
    }
    ct__free(*buf);
    *buf = p;
    *cap = n;
    return true;
}

/* A seed drawn from g as PyTorch's torch.empty((), dtype=torch.int64).random_(g): random64()
   modulo 2^63. */
static int64_t ct__dl_seed(ct_generator *g)
{
    ct_tensor *t = ct_empty(NULL, 0, CT_INT64);
    int64_t v = t && ct_random_(t, g) ? ct_item_int64(t) : 0;
    ct_free(t);
    return v;
}

/* The generator the epoch's permutation comes from. */
static ct_generator *ct__dl_perm_gen(const ct_dataloader *dl)
{
    return dl->opts.generator ? dl->opts.generator : dl->own_gen;
}

static bool ct__dl_start(ct_dataloader *dl)
{
    int64_t n = ct_dataset_len(dl->ds);
    if (n < 0) {
        return false;
    }
    ct_generator *g = dl->opts.generator ? dl->opts.generator : ct_default_generator();
    (void)ct__dl_seed(g); /* the iterator's base seed (used by workers in PyTorch) */
    int64_t b = dl->opts.batch_size < n ? dl->opts.batch_size : n;
    if (!ct__dl_reserve(&dl->seq, &dl->seq_cap, b)) {
        return false;
    }
    if (dl->opts.shuffle) {
        if (!dl->opts.generator) {
            if (!dl->own_gen) {
                dl->own_gen = ct_generator_new();
                if (!dl->own_gen) {
                    ct__fail(CT_ERR_OOM, "ct_dataloader_next", "out of memory");
                    return false;
                }
            }
            ct_generator_manual_seed(dl->own_gen, (uint64_t)ct__dl_seed(g));
        }
        if (!ct__dl_reserve(&dl->order, &dl->order_cap, n)) {
            return false;
        }
        ct_tensor *perm = ct_randperm(n, ct__dl_perm_gen(dl));
        if (!perm) {
            return false;
        }
        if (n > 0) {
            memcpy(dl->order, ct__data(perm), sizeof(int64_t) * (size_t)n);
        }
        ct_free(perm);
    }
    dl->n = n;
    dl->pos = 0;
    dl->started = true;
    return true;
}

/* Ends the epoch: the sampler is exhausted. */
static void ct__dl_finish(ct_dataloader *dl)
{
    if (dl->opts.shuffle && dl->opts.generator) {
        ct_free(ct_randperm(dl->n, dl->opts.generator)); /* RandomSampler's randperm(n)[:0] */
    }
    dl->started = false;
}

static bool ct__dl_next(ct_dataloader *dl, ct_tensor **batch)
{
    for (int f = 0; f < dl->ds->n_fields && f < CT_DATASET_MAX_FIELDS; f++) {
        batch[f] = NULL;
    }
    if (!dl->started && !ct__dl_start(dl)) {
        return false;
    }
    int64_t left = dl->n - dl->pos, bs = dl->opts.batch_size;
    if (left <= 0 || (dl->opts.drop_last && left < bs)) {
        ct__dl_finish(dl);
        return false;
    }
    int64_t count = left < bs ? left : bs;
    const int64_t *idx = dl->seq;
    if (dl->opts.shuffle) {
        idx = dl->order + dl->pos;
    } else {
        for (int64_t k = 0; k < count; k++) {
            dl->seq[k] = dl->pos + k;
        }
    }
    dl->pos += count;
    return ct_dataset_get_batch(dl->ds, idx, count, batch) == CT_OK;
}

bool ct_dataloader_next(ct_dataloader *dl, ct_tensor **batch)
{
    const char *op = "ct_dataloader_next";
    if (ct__null(op, dl) || ct__null(op, batch)) {
        return false;
    }
    ct__profiler_range_begin(false, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    bool ok = ct__dl_next(dl, batch);
    ct__profiler_range_end();
    return ok;
}

void ct_dataloader_reset(ct_dataloader *dl)
{
    if (!ct__null("ct_dataloader_reset", dl)) {
        dl->started = false;
    }
}

int64_t ct_dataloader_len(const ct_dataloader *dl)
{
    if (ct__null("ct_dataloader_len", dl)) {
        return -1;
    }
    int64_t n = ct_dataset_len(dl->ds), bs = dl->opts.batch_size;
    if (n < 0) {
        return -1;
    }
    return n / bs + (!dl->opts.drop_last && n % bs != 0 ? 1 : 0);
}

void ct_dataloader_free(ct_dataloader *dl)
{
    if (!dl) {
        return;
    }
    ct_generator_free(dl->own_gen);
    ct__free(dl->order);
    ct__free(dl->seq);
    ct__free(dl);
}

// >>part bench/timer.c
/* bench/timer.c - Timer, Measurement and Compare (torch.utils.benchmark).
 *
 * Everything mirrors torch/utils/benchmark/utils/{timer,common,compare}.py: the block-size
 * search and measurement loops of Timer, Measurement's statistics and repr, and Compare's
 * table layout (Python's str.center/ljust padding included), so the printed text is the
 * same byte for byte. Determinism: statistics are computed in float64 from the sorted
 * times, and in float32 where PyTorch makes float32 tensors of them (significant figures,
 * time units, trimmed figures, column digits), so the same times always give the same
 * numbers and text, PyTorch's.
 */

#include <float.h>

/* The measured task: PyTorch's TaskSpec without the setup strings. Strings are owned
   copies, NULL when not given. */
typedef struct ct__bench_spec {
    char *stmt, *label, *sub_label, *description, *env;
    int num_threads;
} ct__bench_spec;

struct ct_timer {
    void (*stmt)(void *user);
    void (*setup)(void *user);
    void *user;
    uint64_t (*clock_ns)(void *clock_user);
    void *clock_user;
    ct__bench_spec spec;
};

struct ct_measurement {
    ct__bench_spec spec;
    int64_t number_per_run;
    int64_t n;
    double *raw;    /* seconds per run, run order */
    double *times;  /* seconds per call, run order */
    double *sorted; /* times, ascending */
    double median, mean, p25, p75;
};

struct ct_compare {
    ct_measurement **ms;
    int64_t n, cap;
    bool trim, highlight;
    int colorize; /* 0 none, 1 columnwise, 2 rowwise */
};

/* ---- strings ------------------------------------------------------------------------ */
static CT__UNUSED char *ct__bench_strdup(const char *s, bool *oom)
{
    if (!s) {
        return NULL;
    }
    size_t len = strlen(s);
    char *p = (char *)ct__malloc(len + 1);
    if (!p) {
        *oom = true;
        return NULL;
    }
    memcpy(p, s, len + 1);
    return p;
}

static CT__UNUSED void ct__bench_spec_free(ct__bench_spec *s)
{
    ct__free(s->stmt);
    ct__free(s->label);
    ct__free(s->sub_label);
    ct__free(s->description);
    ct__free(s->env);
}

/* Copies the strings of src into dst; false on out of memory (dst then holds nothing). */
static CT__UNUSED bool ct__bench_spec_copy(ct__bench_spec *dst, const char *stmt,
                                           const char *label, const char *sub_label,
                                           const char *description, const char *env,
                                           int num_threads)
{
    bool oom = false;
    dst->stmt = ct__bench_strdup(stmt, &oom);
    dst->label = ct__bench_strdup(label, &oom);
    dst->sub_label = ct__bench_strdup(sub_label, &oom);
    dst->description = ct__bench_strdup(description, &oom);
    dst->env = ct__bench_strdup(env, &oom);
    dst->num_threads = num_threads;
    if (oom) {
        ct__bench_spec_free(dst);
        memset(dst, 0, sizeof *dst);
    }
    return !oom;
}

static CT__UNUSED bool ct__bench_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static CT__UNUSED bool ct__bench_spec_eq(const ct__bench_spec *a, const ct__bench_spec *b)
{
    return a->num_threads == b->num_threads && ct__bench_str_eq(a->stmt, b->stmt) &&
           ct__bench_str_eq(a->label, b->label) && ct__bench_str_eq(a->sub_label, b->sub_label) &&
           ct__bench_str_eq(a->description, b->description) && ct__bench_str_eq(a->env, b->env);
}

/* A growing text buffer; `oom` is sticky. */
typedef struct ct__bench_buf {
    char *p;
    size_t len, cap;
    bool oom;
} ct__bench_buf;

static CT__UNUSED void ct__bench_putn(ct__bench_buf *b, const char *s, size_t n)
{
    if (b->oom) {
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *q = (char *)ct__realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static CT__UNUSED void ct__bench_puts(ct__bench_buf *b, const char *s)
{
    ct__bench_putn(b, s, strlen(s));
}

static CT__UNUSED void ct__bench_fill(ct__bench_buf *b, char c, int64_t count)
{
    char chunk[64];
    memset(chunk, c, sizeof chunk);
    while (count > 0) {
        size_t k = count > 64 ? 64 : (size_t)count;
        ct__bench_putn(b, chunk, k);
        count -= (int64_t)k;
    }
}

static CT__UNUSED
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    void ct__bench_printf(ct__bench_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0) {
        return;
    }
    if ((size_t)k < sizeof small) {
        ct__bench_putn(b, small, (size_t)k);
        return;
    }
    char *big = (char *)ct__malloc((size_t)k + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)k + 1, fmt, ap);
    va_end(ap);
    ct__bench_putn(b, big, (size_t)k);
    ct__free(big);
}

/* Display width of UTF-8 text in code points (Python's len of the str). */
static CT__UNUSED int64_t ct__bench_width(const char *s)
{
    int64_t w = 0;
    for (; *s; s++) {
        w += ((unsigned char)*s & 0xC0) != 0x80;
    }
    return w;
}

/* Python's s.center(width, fill). */
static CT__UNUSED void ct__bench_center(ct__bench_buf *b, const char *s, int64_t width, char fill)
{
    int64_t marg = width - ct__bench_width(s);
    if (marg <= 0) {
        ct__bench_puts(b, s);
        return;
    }
    int64_t left = marg / 2 + (marg & width & 1);
    ct__bench_fill(b, fill, left);
    ct__bench_puts(b, s);
    ct__bench_fill(b, fill, marg - left);
}

/* Python's s.ljust(width, fill). */
static CT__UNUSED void ct__bench_ljust(ct__bench_buf *b, const char *s, int64_t width, char fill)
{
    ct__bench_puts(b, s);
    ct__bench_fill(b, fill, width - ct__bench_width(s));
}

/* Hands the text to the caller as snprintf does; frees the buffer. */
static CT__UNUSED size_t ct__bench_finish(ct__bench_buf *b, const char *op, char *buf, size_t n)
{
    if (b->oom) {
        ct__free(b->p);
        ct__fail(CT_ERR_OOM, op, "out of memory while formatting");
        return 0;
    }
    size_t len = b->len;
    if (buf && n > 0) {
        size_t k = len < n - 1 ? len : n - 1;
        if (k) {
            memcpy(buf, b->p, k);
        }
        buf[k] = '\0';
    }
    ct__free(b->p);
    return len;
}

/* ---- statistics --------------------------------------------------------------------- */
static CT__UNUSED int ct__bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted values with linear interpolation; the lerp is torch.quantile's and
   numpy's (a + w (b - a) below w = 0.5, b - (1 - w)(b - a) from it). */
static CT__UNUSED double ct__bench_quantile(const double *s, int64_t n, double q)
{
    double rank = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(rank);
    int64_t hi = lo + 1 < n ? lo + 1 : n - 1;
    double w = rank - (double)lo;
    double a = s[lo], d = s[hi] - s[lo];
    return w < 0.5 ? a + w * d : s[hi] - d * (1.0 - w);
}

/* A measurement taking over spec's strings on success (spec is cleared either way is not
   assumed: on failure the caller still owns them). raw: n seconds per run. */
static CT__UNUSED ct_measurement *ct__bench_measurement(const char *op, ct__bench_spec *spec,
                                                        int64_t number_per_run,
                                                        const double *raw, int64_t n)
{
    ct_measurement *m = (ct_measurement *)ct__calloc(sizeof *m);
    double *mem = (double *)ct__malloc(sizeof(double) * 3 * (size_t)n);
    if (!m || !mem) {
        ct__free(m);
        ct__free(mem);
        ct__fail(CT_ERR_OOM, op, "out of memory for %lld times", (long long)n);
        return NULL;
    }
    m->spec = *spec;
    memset(spec, 0, sizeof *spec);
    m->number_per_run = number_per_run;
    m->n = n;
    m->raw = mem;
    m->times = mem + n;
    m->sorted = mem + 2 * n;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        m->raw[i] = raw[i];
        m->times[i] = raw[i] / (double)number_per_run;
        m->sorted[i] = m->times[i];
        sum += m->times[i];
    }
    qsort(m->sorted, (size_t)n, sizeof(double), ct__bench_cmp);
    m->mean = sum / (double)n;
    m->median = ct__bench_quantile(m->sorted, n, 0.5);
    m->p25 = ct__bench_quantile(m->sorted, n, 0.25);
    m->p75 = ct__bench_quantile(m->sorted, n, 0.75);
    return m;
}

static CT__UNUSED bool ct__bench_meets(const ct_measurement *m, double threshold)
{
    return (m->p75 - m->p25) / m->median < threshold;
}

/* ---- timer -------------------------------------------------------------------------- */
ct_timer *ct_timer_new(const ct_timer_opts *opts)
{
    const char *op = "ct_timer_new";
    if (ct__null(op, opts)) {
        return NULL;
    }
    if (!opts->stmt) {
        ct__fail(CT_ERR_NULL_ARG, op, "opts->stmt is NULL");
        return NULL;
    }
    if (opts->num_threads < 0) {
        ct__fail(CT_ERR_VALUE, op, "num_threads must be >= 0 (0: 1 thread), got %d",
                 opts->num_threads);
        return NULL;
    }
    uint64_t (*clock_ns)(void *) = opts->clock_ns;
    if (!clock_ns) {
#ifdef CT__CLOCK
        clock_ns = ct__clock_ns;
#else
        ct__fail(CT_ERR_UNSUPPORTED, op, "no default clock in this build (CTORCH_NO_STDIO): "
                 "set opts->clock_ns");
        return NULL;
#endif
    }
    ct_timer *t = (ct_timer *)ct__calloc(sizeof *t);
    if (!t || !ct__bench_spec_copy(&t->spec, opts->stmt_name, opts->label, opts->sub_label,
                                   opts->description, opts->env,
                                   opts->num_threads ? opts->num_threads : 1)) {
        ct__free(t);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    t->stmt = opts->stmt;
    t->setup = opts->setup;
    t->user = opts->user;
    t->clock_ns = clock_ns;
    t->clock_user = opts->clock_user;
    return t;
}

void ct_timer_free(ct_timer *t)
{
    if (!t) {
        return;
    }
    ct__bench_spec_free(&t->spec);
    ct__free(t);
}

/* One run: setup, clock, `number` calls, clock. Seconds, at least 1 ns (Timer._timeit).
   timeit's time.perf_counter() reads the clock in seconds as CPython makes them from ns,
   (double)ns / 1e9, and subtracts: the same clock reads give PyTorch's times to the bit. */
static CT__UNUSED double ct__bench_run(const ct_timer *t, int64_t number)
{
    if (t->setup) {
        t->setup(t->user);
    }
    uint64_t t0 = t->clock_ns(t->clock_user);
    for (int64_t i = 0; i < number; i++) {
        t->stmt(t->user);
    }
    uint64_t t1 = t->clock_ns(t->clock_user);
    double s = (double)t1 / 1e9 - (double)t0 / 1e9;
    return s > 1e-9 ? s : 1e-9;
}

/* Timer._estimate_block_size. */
static CT__UNUSED int64_t ct__bench_block_size(const ct_timer *t, double min_run_time)
{
    double empty[5];
    for (int i = 0; i < 5; i++) {
        empty[i] = ct__bench_run(t, 0);
    }
    qsort(empty, 5, sizeof(double), ct__bench_cmp);
    double overhead = (double)(float)empty[2]; /* torch.tensor([...]).median(): float32 */
    int64_t number = 1;
    for (;;) {
        double taken = ct__bench_run(t, number);
        if (overhead / taken <= 1e-4 && taken >= min_run_time / 1000) {
            break;
        }
        if (taken > min_run_time) {
            break;
        }
        if (number * 10 > 2147483647) {
            break;
        }
        number *= 10;
    }
    return number;
}

/* A growing list of run times. */
typedef struct ct__bench_times {
    double *v;
    int64_t n, cap;
} ct__bench_times;

static CT__UNUSED bool ct__bench_times_push(ct__bench_times *ts, double x)
{
    if (ts->n == ts->cap) {
        int64_t cap = ts->cap ? 2 * ts->cap : 64;
        double *v = (double *)ct__realloc(ts->v, sizeof(double) * (size_t)cap);
        if (!v) {
            return false;
        }
        ts->v = v;
        ts->cap = cap;
    }
    ts->v[ts->n++] = x;
    return true;
}

/* A measurement of the timer's task from raw run times. */
static CT__UNUSED ct_measurement *ct__bench_from_timer(const char *op, const ct_timer *t,
                                                       int64_t number, const double *raw,
                                                       int64_t n)
{
    ct__bench_spec spec;
    const ct__bench_spec *s = &t->spec;
    if (!ct__bench_spec_copy(&spec, s->stmt, s->label, s->sub_label, s->description, s->env,
                             s->num_threads)) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_measurement *m = ct__bench_measurement(op, &spec, number, raw, n);
    ct__bench_spec_free(&spec); /* cleared when m took the strings */
    return m;
}

/* Timer._threaded_measurement_loop, with the adaptive stop rule when threshold is given. */
static CT__UNUSED ct_measurement *ct__bench_loop(const char *op, ct_timer *t, int64_t number,
                                                 double min_run_time, bool adaptive,
                                                 double threshold, double max_run_time)
{
    ct__bench_times ts = {NULL, 0, 0};
    double total = 0;
    bool can_stop = false;
    bool oom = false;
    while (total < min_run_time || !can_stop) {
        double spent = ct__bench_run(t, number);
        if (!ct__bench_times_push(&ts, spent)) {
            oom = true;
            break;
        }
        total += spent;
        if (!adaptive) {
            can_stop = true;
        } else if (ts.n > 3) {
            /* Measurement(number, times).meets_confidence(threshold) */
            double *s = (double *)ct__malloc(sizeof(double) * (size_t)ts.n);
            if (!s) {
                oom = true;
                break;
            }
            for (int64_t i = 0; i < ts.n; i++) {
                s[i] = ts.v[i] / (double)number;
            }
            qsort(s, (size_t)ts.n, sizeof(double), ct__bench_cmp);
            double iqr = ct__bench_quantile(s, ts.n, 0.75) - ct__bench_quantile(s, ts.n, 0.25);
            can_stop = iqr / ct__bench_quantile(s, ts.n, 0.5) < threshold;
            ct__free(s);
        }
        if (adaptive && total > max_run_time) {
            break;
        }
    }
    ct_measurement *m = NULL;
    if (oom) {
        ct__fail(CT_ERR_OOM, op, "out of memory after %lld runs", (long long)ts.n);
    } else {
        m = ct__bench_from_timer(op, t, number, ts.v, ts.n);
    }
    ct__free(ts.v);
    return m;
}

ct_measurement *ct_timer_timeit(ct_timer *t, int64_t number)
{
    const char *op = "ct_timer_timeit";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (number < 1) {
        ct__fail(CT_ERR_VALUE, op, "number must be positive, got %lld", (long long)number);
        return NULL;
    }
    int prior = ct_get_num_threads();
    ct_set_num_threads(t->spec.num_threads);
    ct__bench_run(t, number / 100 > 2 ? number / 100 : 2); /* warmup */
    double raw = ct__bench_run(t, number);
    ct_set_num_threads(prior);
    return ct__bench_from_timer(op, t, number, &raw, 1);
}

ct_measurement *ct_timer_blocked_autorange(ct_timer *t, double min_run_time_s)
{
    const char *op = "ct_timer_blocked_autorange";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (!(min_run_time_s > 0)) {
        ct__fail(CT_ERR_VALUE, op, "min_run_time must be positive, got %g", min_run_time_s);
        return NULL;
    }
    int prior = ct_get_num_threads();
    ct_set_num_threads(t->spec.num_threads);
    int64_t number = ct__bench_block_size(t, min_run_time_s);
    ct_measurement *m = ct__bench_loop(op, t, number, min_run_time_s, false, 0, 0);
    ct_set_num_threads(prior);
    return m;
}

ct_measurement *ct_timer_adaptive_autorange(ct_timer *t, double threshold,
                                            double min_run_time_s, double max_run_time_s)
{
    const char *op = "ct_timer_adaptive_autorange";
    if (ct__null(op, t)) {
        return NULL;
    }
    if (isnan(threshold) || !(min_run_time_s >= 0) || !(max_run_time_s > 0)) {
        ct__fail(CT_ERR_VALUE, op, "expected threshold not NaN, min_run_time >= 0 and "
                 "max_run_time > 0, got %g, %g and %g", threshold, min_run_time_s,
                 max_run_time_s);
        return NULL;
    }
    int prior = ct_get_num_threads();
    ct_set_num_threads(t->spec.num_threads);
    int64_t number = ct__bench_block_size(t, 0.05);
    ct_measurement *m = ct__bench_loop(op, t, number, min_run_time_s, true, threshold,
                                       max_run_time_s);
    ct_set_num_threads(prior);
    return m;
}

/* ---- measurement -------------------------------------------------------------------- */
ct_measurement *ct_measurement_new(int64_t number_per_run, const double *raw_times_s, int64_t n,
                                   const ct_timer_opts *spec)
{
    const char *op = "ct_measurement_new";
    if (ct__null(op, raw_times_s)) {
        return NULL;
    }
    if (number_per_run < 1 || n < 1) {
        ct__fail(CT_ERR_VALUE, op, "expected number_per_run >= 1 and n >= 1, got %lld and %lld",
                 (long long)number_per_run, (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (!(raw_times_s[i] > 0) || isinf(raw_times_s[i])) {
            ct__fail(CT_ERR_VALUE, op, "times must be finite and positive, got %g at index %lld",
                     raw_times_s[i], (long long)i);
            return NULL;
        }
    }
    ct__bench_spec s;
    memset(&s, 0, sizeof s);
    s.num_threads = 1;
    if (spec) {
        if (spec->num_threads < 0) {
            ct__fail(CT_ERR_VALUE, op, "num_threads must be >= 0 (0: 1 thread), got %d",
                     spec->num_threads);
            return NULL;
        }
        if (!ct__bench_spec_copy(&s, spec->stmt_name, spec->label, spec->sub_label,
                                 spec->description, spec->env,
                                 spec->num_threads ? spec->num_threads : 1)) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return NULL;
        }
    }
    ct_measurement *m = ct__bench_measurement(op, &s, number_per_run, raw_times_s, n);
    ct__bench_spec_free(&s);
    return m;
}

void ct_measurement_free(ct_measurement *m)
{
    if (!m) {
        return;
    }
    ct__bench_spec_free(&m->spec);
    ct__free(m->raw);
    ct__free(m);
}

int64_t ct_measurement_number_per_run(const ct_measurement *m)
{
    return ct__null("ct_measurement_number_per_run", m) ? 0 : m->number_per_run;
}

int64_t ct_measurement_number_of_runs(const ct_measurement *m)
{
    return ct__null("ct_measurement_number_of_runs", m) ? 0 : m->n;
}

int ct_measurement_num_threads(const ct_measurement *m)
{
    return ct__null("ct_measurement_num_threads", m) ? 0 : m->spec.num_threads;
}

const double *ct_measurement_times(const ct_measurement *m)
{
    return ct__null("ct_measurement_times", m) ? NULL : m->times;
}

const double *ct_measurement_raw_times(const ct_measurement *m)
{
    return ct__null("ct_measurement_raw_times", m) ? NULL : m->raw;
}

double ct_measurement_mean(const ct_measurement *m)
{
    return ct__null("ct_measurement_mean", m) ? NAN : m->mean;
}

double ct_measurement_median(const ct_measurement *m)
{
    return ct__null("ct_measurement_median", m) ? NAN : m->median;
}

double ct_measurement_iqr(const ct_measurement *m)
{
    return ct__null("ct_measurement_iqr", m) ? NAN : m->p75 - m->p25;
}

/* log10 of torch.tensor(x): PyTorch's benchmark utilities make float32 tensors of Python
   floats and take their log10 (then floor, ceil or round) in float32. x > 0 is clamped to
   float's range, where PyTorch's inf or 0 would raise OverflowError. */
static CT__UNUSED double ct__bench_log10_f32(double x)
{
    float f = x > FLT_MAX ? FLT_MAX : x < FLT_TRUE_MIN ? FLT_TRUE_MIN : (float)x;
    return (double)log10f(f);
}

/* Measurement.significant_figures, in float32 where PyTorch makes tensors: the std of the
   middle half as torch.std of float32 values (their float32 mean, the squared deviations
   summed in double, the root rounded to float32), sqrt(k), and log10(median / ci). */
static CT__UNUSED int ct__bench_sigfigs(const ct_measurement *m)
{
    int64_t lo = m->n / 4, hi = (int64_t)ceilf((float)(3.0 * (double)m->n / 4.0));
    int64_t k = hi - lo;
    float sum = 0;
    for (int64_t i = lo; i < hi; i++) {
        sum += (float)m->sorted[i];
    }
    double mean = (double)(sum / (float)k), var = 0;
    for (int64_t i = lo; i < hi; i++) {
        double d = (double)(float)m->sorted[i] - mean;
        var += fma(d, d, 0.0); /* the square rounded on its own: no contraction with += */
    }
    double std = (double)(float)sqrt(var / (double)k);
    double ci = 1.645 * std / (double)sqrtf((float)k);
    if (ci < 25e-9) {
        ci = 25e-9;
    }
    double f = floor(ct__bench_log10_f32(m->median / ci));
    return !(f >= 1) ? 1 : f > 4 ? 4 : (int)f; /* 1 for NaN: times beyond float32 */
}

int ct_measurement_significant_figures(const ct_measurement *m)
{
    return ct__null("ct_measurement_significant_figures", m) ? 0 : ct__bench_sigfigs(m);
}

bool ct_measurement_meets_confidence(const ct_measurement *m, double threshold)
{
    return ct__null("ct_measurement_meets_confidence", m) ? false : ct__bench_meets(m, threshold);
}

bool ct_measurement_has_warnings(const ct_measurement *m)
{
    return ct__null("ct_measurement_has_warnings", m) ? false : !ct__bench_meets(m, 0.1);
}

/* common.select_unit: the unit for the magnitude of t seconds (log10 in float32). */
static CT__UNUSED const char *ct__bench_unit(double t, double *scale)
{
    double e = floor(ct__bench_log10_f32(t) / 3);
    if (e == -3) {
        *scale = 1e-9;
        return "ns";
    }
    if (e == -2) {
        *scale = 1e-6;
        return "us";
    }
    if (e == -1) {
        *scale = 1e-3;
        return "ms";
    }
    *scale = 1;
    return "s";
}

static CT__UNUSED const char *ct__bench_unit_english(const char *unit)
{
    return unit[0] == 'n' ? "nanosecond" : unit[0] == 'u' ? "microsecond"
                                         : unit[0] == 'm' ? "millisecond" : "second";
}

/* Writes s indented by two spaces per non-blank line (textwrap.indent(s, '  ')). */
static CT__UNUSED void ct__bench_indent(ct__bench_buf *b, const char *s)
{
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) + 1 : strlen(s);
        bool blank = true;
        for (size_t i = 0; i < len; i++) {
            blank = blank && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r');
        }
        if (!blank) {
            ct__bench_puts(b, "  ");
        }
        ct__bench_putn(b, s, len);
        s += len;
    }
}

/* TaskSpec.summarize: the title, the description, each followed by a newline when it has
   several lines, joined by newlines. */
static CT__UNUSED void ct__bench_summarize(ct__bench_buf *b, const ct__bench_spec *s)
{
    ct__bench_buf title = {NULL, 0, 0, false};
    bool has_sub = s->sub_label && s->sub_label[0];
    const char *stmt = s->stmt ? s->stmt : "";
    if (s->label || !strchr(stmt, '\n')) {
        ct__bench_puts(&title, s->label ? s->label : stmt);
        if (has_sub) {
            ct__bench_puts(&title, ": ");
            ct__bench_puts(&title, s->sub_label);
        }
    } else {
        ct__bench_puts(&title, "stmt:");
        if (has_sub) {
            ct__bench_printf(&title, " (%s)", s->sub_label);
        }
        ct__bench_puts(&title, "\n");
        ct__bench_indent(&title, stmt);
    }
    const char *sections[2];
    sections[0] = title.p ? title.p : "";
    sections[1] = s->description ? s->description : "";
    bool first = true;
    for (int i = 0; i < 2; i++) {
        if (!sections[i][0]) {
            continue;
        }
        if (!first) {
            ct__bench_puts(b, "\n");
        }
        first = false;
        ct__bench_puts(b, sections[i]);
        if (strchr(sections[i], '\n')) {
            ct__bench_puts(b, "\n");
        }
    }
    b->oom = b->oom || title.oom;
    ct__free(title.p);
}

/* Measurement.__repr__ without its first line, plus the newline print() adds. */
static CT__UNUSED void ct__bench_repr(ct__bench_buf *b, const ct_measurement *m)
{
    ct__bench_buf body = {NULL, 0, 0, false};
    double scale = 1;
    const char *unit = ct__bench_unit(m->median, &scale);
    int64_t n = m->n;
    int nt = m->spec.num_threads;
    ct__bench_summarize(&body, &m->spec);
    ct__bench_printf(&body, "\n  %s%.2f %s", n > 1 ? "Median: " : "", m->median / scale, unit);
    if (n >= 4) {
        ct__bench_printf(&body, "\n  IQR:    %.2f %s (%.2f to %.2f)", (m->p75 - m->p25) / scale,
                         unit, m->p25 / scale, m->p75 / scale);
    }
    ct__bench_printf(&body, "\n  %lld measurement%s, %lld runs %s %d thread%s", (long long)n,
                     n > 1 ? "s" : "", (long long)m->number_per_run,
                     n > 1 ? "per measurement," : ",", nt, nt > 1 ? "s" : "");
    double rel = (m->p75 - m->p25) / m->median;
    if (!(rel < 0.1)) {
        ct__bench_printf(&body, "\n  WARNING: Interquartile range is %.1f%% of the median "
                         "measurement.\n           %s", rel * 100,
                         !(rel < 0.25) ? "This suggests significant environmental influence."
                                       : "This could indicate system fluctuation.");
    }
    /* .strip(): only trailing whitespace can remain here */
    size_t len = body.p ? body.len : 0;
    while (len > 0 && (body.p[len - 1] == ' ' || body.p[len - 1] == '\n')) {
        len--;
    }
    if (body.p) {
        ct__bench_putn(b, body.p, len);
    }
    ct__bench_puts(b, "\n");
    b->oom = b->oom || body.oom;
    ct__free(body.p);
}

size_t ct_measurement_str(const ct_measurement *m, char *buf, size_t n)
{
    if (ct__null("ct_measurement_str", m)) {
        return 0;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_repr(&b, m);
    return ct__bench_finish(&b, "ct_measurement_str", buf, n);
}

#ifndef CTORCH_NO_STDIO
static CT__UNUSED ct_status ct__bench_write(const char *op, ct__bench_buf *b, FILE *f)
{
    if (b->oom) {
        ct__free(b->p);
        return ct__fail(CT_ERR_OOM, op, "out of memory while formatting");
    }
    bool ok = b->len == 0 || fwrite(b->p, 1, b->len, f) == b->len;
    ct__free(b->p);
    return ok ? CT_OK : ct__fail(CT_ERR_IO, op, "write failed");
}

ct_status ct_measurement_print(const ct_measurement *m, FILE *f)
{
    const char *op = "ct_measurement_print";
    if (ct__null(op, m) || ct__null(op, f)) {
        return ct_error_code() ? ct_error_code() : CT_ERR_NULL_ARG;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_repr(&b, m);
    return ct__bench_write(op, &b, f);
}
#endif

/* ---- compare ------------------------------------------------------------------------ */
static CT__UNUSED ct_status ct__bench_extend(const char *op, ct_compare *c,
                                             ct_measurement *const *ms, int n)
{
    if (n < 0) {
        return ct__fail(CT_ERR_VALUE, op, "n must be >= 0, got %d", n);
    }
    if (n > 0 && ct__null(op, ms)) {
        return CT_ERR_NULL_ARG;
    }
    for (int i = 0; i < n; i++) {
        if (!ms[i]) {
            return ct__fail(CT_ERR_NULL_ARG, op, "measurement %d is NULL", i);
        }
    }
    if (c->n + n > c->cap) {
        int64_t cap = c->cap ? c->cap : 8;
        while (cap < c->n + n) {
            cap *= 2;
        }
        ct_measurement **p = (ct_measurement **)ct__realloc(c->ms, sizeof(*p) * (size_t)cap);
        if (!p) {
            return ct__fail(CT_ERR_OOM, op, "out of memory");
        }
        c->ms = p;
        c->cap = cap;
    }
    for (int i = 0; i < n; i++) {
        const ct_measurement *m = ms[i];
        ct__bench_spec s;
        const ct__bench_spec *o = &m->spec;
        ct_measurement *copy = NULL;
        if (ct__bench_spec_copy(&s, o->stmt, o->label, o->sub_label, o->description, o->env,
                                o->num_threads)) {
            copy = ct__bench_measurement(op, &s, m->number_per_run, m->raw, m->n);
            ct__bench_spec_free(&s);
        } else {
            ct__fail(CT_ERR_OOM, op, "out of memory");
        }
        if (!copy) {
            return ct_error_code();
        }
        c->ms[c->n++] = copy;
    }
    return CT_OK;
}

ct_compare *ct_compare_new(ct_measurement *const *ms, int n)
{
    const char *op = "ct_compare_new";
    ct_compare *c = (ct_compare *)ct__calloc(sizeof *c);
    if (!c) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (ct__bench_extend(op, c, ms, n) != CT_OK) {
        ct_compare_free(c);
        return NULL;
    }
    return c;
}

ct_status ct_compare_extend_results(ct_compare *c, ct_measurement *const *ms, int n)
{
    const char *op = "ct_compare_extend_results";
    if (ct__null(op, c)) {
        return CT_ERR_NULL_ARG;
    }
    return ct__bench_extend(op, c, ms, n);
}

void ct_compare_trim_significant_figures(ct_compare *c)
{
    if (!ct__null("ct_compare_trim_significant_figures", c)) {
        c->trim = true;
    }
}

void ct_compare_colorize(ct_compare *c, bool rowwise)
{
    if (!ct__null("ct_compare_colorize", c)) {
        c->colorize = rowwise ? 2 : 1;
    }
}

void ct_compare_highlight_warnings(ct_compare *c)
{
    if (!ct__null("ct_compare_highlight_warnings", c)) {
        c->highlight = true;
    }
}

void ct_compare_free(ct_compare *c)
{
    if (!c) {
        return;
    }
    for (int64_t i = 0; i < c->n; i++) {
        ct_measurement_free(c->ms[i]);
    }
    ct__free(c->ms);
    ct__free(c);
}

/* Measurement.as_row_name. */
static CT__UNUSED const char *ct__bench_row_name(const ct_measurement *m)
{
    if (m->spec.sub_label && m->spec.sub_label[0]) {
        return m->spec.sub_label;
    }
    if (m->spec.stmt && m->spec.stmt[0]) {
        return m->spec.stmt;
    }
    return "[Unknown]";
}

/* Orders envs as Python sorts them, NULL (None) first. */
static CT__UNUSED int ct__bench_env_cmp(const char *a, const char *b)
{
    if (!a || !b) {
        return (a != NULL) - (b != NULL);
    }
    return strcmp(a, b);
}

/* common.trim_sigfig: log10, the rounding (half to even) and the product in float32. */
static CT__UNUSED double ct__bench_trim_sigfig(double x, int n)
{
    int magnitude = (int)ceil(ct__bench_log10_f32(fabs(x)));
    double scale = pow(10.0, magnitude - n);
    return (double)(nearbyintf((float)(x / scale)) * (float)scale);
}

/* A rendered table column (compare._Column). */
typedef struct ct__bench_col {
    int length, decimals;
    bool highlight;
} ct__bench_col;

/* _Column.num_to_str; m NULL gives the blank of the same width. */
static CT__UNUSED void ct__bench_cell(ct__bench_buf *b, const ct__bench_col *col,
                                      const ct_measurement *m, double scale, bool trim)
{
    double value = 1;
    int sigfigs = 1;
    if (m) {
        value = m->median / scale;
        sigfigs = ct__bench_sigfigs(m);
    }
    if (trim) {
        value = ct__bench_trim_sigfig(value, sigfigs);
    }
    ct__bench_buf cell = {NULL, 0, 0, false};
    ct__bench_printf(&cell, "%*.*f", col->length, col->decimals, value);
    if (col->highlight) {
        char spread[48] = "";
        if (m && !ct__bench_meets(m, 0.1)) {
            snprintf(spread, sizeof spread, " (! %.0f%%)", (m->p75 - m->p25) / m->median * 100);
        }
        ct__bench_printf(&cell, "%7s", spread);
    }
    if (m) {
        ct__bench_putn(b, cell.p ? cell.p : "", cell.len);
    } else {
        ct__bench_fill(b, ' ', (int64_t)cell.len);
    }
    b->oom = b->oom || cell.oom;
    ct__free(cell.p);
}

/* _Row.color_segment. */
static CT__UNUSED void ct__bench_color(ct__bench_buf *b, const char *seg, double value,
                                       double best)
{
    const char *pre = NULL;
    if (value <= best * 1.01 || value <= best + 100e-9) {
        pre = "\033[92m\033[1m";
    } else if (value <= best * 1.1) {
        pre = "\033[34m\033[1m";
    } else if (value >= best * 5) {
        pre = "\033[31m\033[1m";
    } else if (value >= best * 2) {
        pre = "\033[2m\033[91m";
    }
    if (pre) {
        ct__bench_puts(b, pre);
    }
    ct__bench_puts(b, seg);
    if (pre) {
        ct__bench_puts(b, "\033[0m\033[0m");
    }
}

/* Scratch of one table: k measurements, so at most k rows and k columns. */
typedef struct ct__bench_grid {
    int64_t *row_of, *rows; /* 2k each: row/column of each result, row/column representative */
    ct_measurement **cells; /* k x k */
    char **strs;            /* (k + 1) x (k + 1) strings: header row, then the rows */
    int64_t *widths;        /* k + 1 */
    ct__bench_col *cols;    /* k */
} ct__bench_grid;

/* compare.Table.render for the k measurements r (one label). */
static CT__UNUSED void ct__bench_table_body(ct__bench_buf *out, const ct_compare *c,
                                            ct_measurement *const *r, int64_t k,
                                            const ct__bench_grid *g)
{
    int64_t *row_of = g->row_of, *rows = g->rows, *widths = g->widths;
    ct_measurement **cells = g->cells;
    char **strs = g->strs;
    ct__bench_col *cols = g->cols;
    /* one unit from the smallest median */
    double min_median = r[0]->median;
    for (int64_t i = 1; i < k; i++) {
        min_median = r[i]->median < min_median ? r[i]->median : min_median;
    }
    double scale = 1;
    const char *unit = ct__bench_unit(min_median, &scale);

    /* rows keyed (num_threads, env, row name), columns by description; first appearance */
    int64_t nrows = 0, ncols = 0;
    int64_t *col_of = row_of + k, *col_rep = rows + k;
    for (int64_t i = 0; i < k; i++) {
        const ct_measurement *m = r[i];
        int64_t j = 0;
        for (; j < nrows; j++) {
            const ct_measurement *o = r[rows[j]];
            if (o->spec.num_threads == m->spec.num_threads &&
                ct__bench_str_eq(o->spec.env, m->spec.env) &&
                strcmp(ct__bench_row_name(o), ct__bench_row_name(m)) == 0) {
                break;
            }
        }
        if (j == nrows) {
            rows[nrows++] = i;
        }
        for (j = 0; j < ncols; j++) {
            if (ct__bench_str_eq(r[col_rep[j]]->spec.description, m->spec.description)) {
                break;
            }
        }
        if (j == ncols) {
            col_rep[ncols++] = i;
        }
        col_of[i] = j;
    }
    /* stable sort of the rows by (num_threads, env): insertion sort */
    for (int64_t i = 1; i < nrows; i++) {
        int64_t v = rows[i], j = i;
        for (; j > 0; j--) {
            const ct_measurement *a = r[rows[j - 1]], *b = r[v];
            int cmp = a->spec.num_threads != b->spec.num_threads
                          ? (a->spec.num_threads > b->spec.num_threads ? 1 : -1)
                          : ct__bench_env_cmp(a->spec.env, b->spec.env);
            if (cmp <= 0) {
                break;
            }
            rows[j] = rows[j - 1];
        }
        rows[j] = v;
    }
    for (int64_t i = 0; i < k; i++) {
        const ct_measurement *m = r[i];
        for (int64_t j = 0; j < nrows; j++) {
            const ct_measurement *o = r[rows[j]];
            if (o->spec.num_threads == m->spec.num_threads &&
                ct__bench_str_eq(o->spec.env, m->spec.env) &&
                strcmp(ct__bench_row_name(o), ct__bench_row_name(m)) == 0) {
                row_of[i] = j;
                cells[j * k + col_of[i]] = r[i];
                break;
            }
        }
    }
    /* env column: shown when envs differ (None prints as "None") */
    bool render_env = false;
    int64_t env_len = 0;
    for (int64_t i = 0; i < k; i++) {
        render_env = render_env || !ct__bench_str_eq(r[i]->spec.env, r[0]->spec.env);
        const char *e = r[i]->spec.env ? r[i]->spec.env : "None";
        env_len = ct__bench_width(e) > env_len ? ct__bench_width(e) : env_len;
    }
    if (!render_env) {
        env_len = 0;
    }
    /* columns (_Column): widths from leading digits and significant figures */
    for (int64_t j = 0; j < ncols; j++) {
        int unit_digits = INT32_MIN, decimals = INT32_MAX;
        bool warn = false;
        for (int64_t i = 0; i < nrows; i++) {
            const ct_measurement *m = cells[i * k + j];
            if (!m) {
                continue;
            }
            int digits = (int)ceil(ct__bench_log10_f32(m->median / scale));
            unit_digits = digits > unit_digits ? digits : unit_digits;
            int d = ct__bench_sigfigs(m) - digits;
            d = d > 0 ? d : 0;
            decimals = d < decimals ? d : decimals;
            warn = warn || !ct__bench_meets(m, 0.1);
        }
        cols[j].decimals = c->trim ? decimals : 1;
        cols[j].length = unit_digits + cols[j].decimals + (cols[j].decimals ? 1 : 0);
        cols[j].highlight = c->highlight && warn;
    }
    /* the string grid: header row, then one row per key */
    int64_t w = ncols + 1;
    for (int64_t j = 0; j < ncols; j++) {
        const char *d = r[col_rep[j]]->spec.description;
        bool oom = false;
        strs[j + 1] = ct__bench_strdup(d ? d : "", &oom);
        out->oom = out->oom || oom;
    }
    bool prior_env_set = false;
    const char *prior_env = NULL;
    int prior_threads = -1;
    for (int64_t i = 0; i < nrows; i++) {
        const ct_measurement *first = r[rows[i]];
        if (first->spec.num_threads != prior_threads) {
            prior_threads = first->spec.num_threads;
            prior_env_set = false;
        }
        bool show_env = render_env && !(prior_env_set && ct__bench_str_eq(prior_env,
                                                                           first->spec.env));
        ct__bench_buf b = {NULL, 0, 0, false};
        ct__bench_puts(&b, "  ");
        ct__bench_buf e = {NULL, 0, 0, false};
        if (show_env) {
            ct__bench_printf(&e, "(%s)", first->spec.env ? first->spec.env : "None");
        }
        ct__bench_ljust(&b, e.p ? e.p : "", env_len + 4, ' ');
        ct__free(e.p);
        b.oom = b.oom || e.oom;
        ct__bench_puts(&b, ct__bench_row_name(first));
        strs[(i + 1) * w] = b.p;
        out->oom = out->oom || b.oom;
        for (int64_t j = 0; j < ncols; j++) {
            ct__bench_buf cb = {NULL, 0, 0, false};
            ct__bench_cell(&cb, &cols[j], cells[i * k + j], scale, c->trim);
            ct__bench_puts(&cb, ""); /* a non-NULL string even when empty */
            strs[(i + 1) * w + j + 1] = cb.p;
            out->oom = out->oom || cb.oom;
        }
        prior_env_set = true;
        prior_env = first->spec.env;
    }
    if (out->oom) {
        return;
    }
    for (int64_t i = 0; i <= nrows; i++) {
        for (int64_t j = 0; j < w; j++) {
            int64_t len = strs[i * w + j] ? ct__bench_width(strs[i * w + j]) : 0;
            widths[j] = len > widths[j] ? len : widths[j];
        }
    }
    ct__bench_buf body = {NULL, 0, 0, false};
    for (int64_t j = 0; j < w; j++) {
        if (j) {
            ct__bench_puts(&body, "  |  ");
        }
        ct__bench_center(&body, strs[j] ? strs[j] : "", widths[j], ' ');
    }
    int64_t overall = body.p ? ct__bench_width(body.p) : 0;
    prior_threads = -1;
    int64_t group_start = 0;
    for (int64_t i = 0; i < nrows; i++) {
        const ct_measurement *first = r[rows[i]];
        ct__bench_puts(&body, "\n");
        if (first->spec.num_threads != prior_threads) {
            prior_threads = first->spec.num_threads;
            group_start = i;
            char sep[32];
            snprintf(sep, sizeof sep, "%d threads: ", prior_threads);
            ct__bench_ljust(&body, sep, overall, '-');
            ct__bench_puts(&body, "\n");
        }
        int64_t group_end = i;
        while (group_end < nrows && r[rows[group_end]]->spec.num_threads == prior_threads) {
            group_end++;
        }
        double row_best = INFINITY;
        for (int64_t j = 0; j < ncols; j++) {
            const ct_measurement *m = cells[i * k + j];
            row_best = m && m->median < row_best ? m->median : row_best;
        }
        ct__bench_ljust(&body, strs[(i + 1) * w], widths[0], ' ');
        for (int64_t j = 0; j < ncols; j++) {
            const ct_measurement *m = cells[i * k + j];
            ct__bench_puts(&body, "  |  ");
            ct__bench_buf seg = {NULL, 0, 0, false};
            ct__bench_center(&seg, strs[(i + 1) * w + j + 1], widths[j + 1], ' ');
            double best = row_best;
            if (c->colorize == 1) {
                best = INFINITY;
                for (int64_t g = group_start; g < group_end; g++) {
                    const ct_measurement *o = cells[g * k + j];
                    best = o && o->median < best ? o->median : best;
                }
            }
            if (c->colorize && m) {
                ct__bench_color(&body, seg.p ? seg.p : "", m->median, best);
            } else {
                ct__bench_puts(&body, seg.p ? seg.p : "");
            }
            body.oom = body.oom || seg.oom;
            ct__free(seg.p);
        }
    }
    const char *label = r[0]->spec.label ? r[0]->spec.label : "";
    ct__bench_buf title = {NULL, 0, 0, false};
    ct__bench_printf(&title, " %s ", label);
    ct__bench_puts(out, "[");
    ct__bench_center(out, title.p ? title.p : "", overall - 2, '-');
    ct__bench_puts(out, "]\n");
    ct__bench_puts(out, body.p ? body.p : "");
    ct__bench_printf(out, "\n\nTimes are in %ss (%s).\n", ct__bench_unit_english(unit), unit);
    bool warnings = false;
    for (int64_t i = 0; i < k; i++) {
        warnings = warnings || (c->highlight && !ct__bench_meets(r[i], 0.1));
    }
    if (warnings) {
        ct__bench_puts(out, "(! XX%) Measurement has high variance, where XX is the IQR / median "
                            "* 100.\n");
    }
    out->oom = out->oom || title.oom || body.oom;
    ct__free(title.p);
    ct__free(body.p);
}

static CT__UNUSED void ct__bench_table(ct__bench_buf *out, const ct_compare *c,
                                       ct_measurement *const *r, int64_t k)
{
    ct__bench_grid g;
    g.row_of = (int64_t *)ct__malloc(sizeof(int64_t) * 2 * (size_t)k);
    g.rows = (int64_t *)ct__malloc(sizeof(int64_t) * 2 * (size_t)k);
    g.cells = (ct_measurement **)ct__calloc(sizeof(ct_measurement *) * (size_t)(k * k));
    g.strs = (char **)ct__calloc(sizeof(char *) * (size_t)((k + 1) * (k + 1)));
    g.widths = (int64_t *)ct__calloc(sizeof(int64_t) * (size_t)(k + 1));
    g.cols = (ct__bench_col *)ct__calloc(sizeof(ct__bench_col) * (size_t)k);
    if (g.row_of && g.rows && g.cells && g.strs && g.widths && g.cols) {
        ct__bench_table_body(out, c, r, k, &g);
    } else {
        out->oom = true;
    }
    if (g.strs) {
        for (int64_t i = 0; i < (k + 1) * (k + 1); i++) {
            ct__free(g.strs[i]);
        }
    }
    ct__free(g.row_of);
    ct__free(g.rows);
    ct__free(g.cells);
    ct__free(g.strs);
    ct__free(g.widths);
    ct__free(g.cols);
}

/* str(Compare) + "\n": merge equal tasks, group by label, one table each. */
static CT__UNUSED void ct__bench_compare(ct__bench_buf *out, const ct_compare *c)
{
    const char *op = "ct_compare_str";
    int64_t n = c->n;
    ct_measurement **merged = (ct_measurement **)ct__calloc(sizeof(ct_measurement *) *
                                                            (size_t)(n ? n : 1));
    ct_measurement **group = (ct_measurement **)ct__malloc(sizeof(ct_measurement *) *
                                                           (size_t)(n ? n : 1));
    double *pool = NULL;
    int64_t nm = 0, total = 0;
    if (!merged || !group) {
        out->oom = true;
        goto done;
    }
    /* Measurement.merge: pool the per-call times of equal task specs, number_per_run 1 */
    for (int64_t i = 0; i < n; i++) {
        total += c->ms[i]->n;
    }
    pool = (double *)ct__malloc(sizeof(double) * (size_t)(total ? total : 1));
    if (!pool) {
        out->oom = true;
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++) {
            seen = ct__bench_spec_eq(&c->ms[i]->spec, &c->ms[j]->spec);
        }
        if (seen) {
            continue;
        }
        int64_t np = 0;
        for (int64_t j = i; j < n; j++) {
            if (ct__bench_spec_eq(&c->ms[i]->spec, &c->ms[j]->spec)) {
                memcpy(pool + np, c->ms[j]->times, sizeof(double) * (size_t)c->ms[j]->n);
                np += c->ms[j]->n;
            }
        }
        ct__bench_spec s;
        const ct__bench_spec *o = &c->ms[i]->spec;
        if (!ct__bench_spec_copy(&s, o->stmt, o->label, o->sub_label, o->description, o->env,
                                 o->num_threads)) {
            out->oom = true;
            goto done;
        }
        merged[nm] = ct__bench_measurement(op, &s, 1, pool, np);
        ct__bench_spec_free(&s);
        if (!merged[nm]) {
            ct_error_clear(); /* reported once as out of memory by the caller */
            out->oom = true;
            goto done;
        }
        nm++;
    }
    /* group by label in order of first appearance */
    for (int64_t i = 0; i < nm; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++) {
            seen = ct__bench_str_eq(merged[i]->spec.label, merged[j]->spec.label);
        }
        if (seen) {
            continue;
        }
        int64_t k = 0;
        for (int64_t j = i; j < nm; j++) {
            if (ct__bench_str_eq(merged[i]->spec.label, merged[j]->spec.label)) {
                group[k++] = merged[j];
            }
        }
        if (i) {
            ct__bench_puts(out, "\n");
        }
        ct__bench_table(out, c, group, k);
    }
    ct__bench_puts(out, "\n");
done:
    for (int64_t i = 0; i < nm; i++) {
        ct_measurement_free(merged[i]);
    }
    ct__free(merged);
    ct__free(group);
    ct__free(pool);
}

size_t ct_compare_str(const ct_compare *c, char *buf, size_t n)
{
    if (ct__null("ct_compare_str", c)) {
        return 0;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_compare(&b, c);
    return ct__bench_finish(&b, "ct_compare_str", buf, n);
}

#ifndef CTORCH_NO_STDIO
ct_status ct_compare_print(const ct_compare *c, FILE *f)
{
    const char *op = "ct_compare_print";
    if (ct__null(op, c) || ct__null(op, f)) {
        return ct_error_code() ? ct_error_code() : CT_ERR_NULL_ARG;
    }
    ct__bench_buf b = {NULL, 0, 0, false};
    ct__bench_compare(&b, c);
    return ct__bench_write(op, &b, f);
}
#endif


// >>part bench/profiler.c
/* bench/profiler.c - the op profiler (torch.profiler): events recorded by the dispatcher,
 * the autograd engine, the optimizers, the DataLoader and the user's ranges; key averages,
 * PyTorch's table (torch/autograd/profiler_util.py's _build_table, _format_time,
 * _format_memory) and the Chrome trace.
 *
 * Storage: events live in chunks of CT__PROF_CHUNK_BYTES that never move, so an event's
 * index is its handle (with the profile's generation in the high bits, so a late handle of
 * an older profile is ignored); names and shapes live in a string arena of chunks of the
 * same size. Every block the profiler allocates has a power-of-two size, which the caching
 * allocator counts exactly, so the bytes it holds (own_bytes) are taken out of
 * ct_memory_allocated() when profile_memory measures the ops.
 * Nesting: each thread keeps the stack of its open events; an event's parent is the top of
 * its thread's stack when it opens, and closing it adds its duration (and memory) to the
 * parent's children's sums, from which the self values follow.
 * Determinism: the results depend on the clock only; times are integer nanoseconds until
 * they are printed.
 */


#define CT__PROF_CHUNK_BYTES 65536 /* a power of two: the allocator counts it exactly */
#define CT__PROF_MAX_DEPTH 256     /* open events per thread */
#define CT__PROF_MAX_NAME 1023     /* bytes of a range name kept */
#define CT__PROF_MAX_SHAPES 4095   /* bytes of an op's shapes kept (cut after an entry) */
#define CT__PROF_GEN_SHIFT 40      /* a handle: (generation mod 2^23) << 40 | event index */
#define CT__PROF_GEN_MASK 0x7fffffu
#define CT__PROF_NAME_COL 55       /* PyTorch's max_name_column_width */
#define CT__PROF_SHAPES_COL 80     /* max_shapes_column_width */
#define CT__PROF_COL 12            /* DEFAULT_COLUMN_WIDTH */

#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
#define CT__PROF_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define CT__PROF_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#define CT__PROF_LOAD(p) (*(p))
#define CT__PROF_STORE(p, v) (*(p) = (v))
#endif

typedef struct ct__prof_event {
    const char *name;          /* an op's static name, or a copy in the arena */
    const char *shapes;        /* "[[2, 3], []]" in the arena; NULL: "[]" */
    int64_t parent;            /* the enclosing open event of the same thread, or -1 */
    uint64_t begin_ns, end_ns; /* since the profile's begin */
    uint64_t child_ns;         /* the direct children's durations */
    int64_t mem, child_mem;    /* open: the live bytes at begin; closed: the change */
    double flops;
    int32_t tid;
    uint8_t kind; /* CT__PROF_OP, CT__PROF_FUNCTION or CT__PROF_USER */
    uint8_t open;
} ct__prof_event;

/* An event's kind: an op; a range PyTorch records with C++'s RECORD_FUNCTION (both trace
   category "cpu_op"); a range of Python's record_function ("user_annotation"). */
enum { CT__PROF_OP, CT__PROF_FUNCTION, CT__PROF_USER };

#define CT__PROF_PER_CHUNK ((int64_t)(CT__PROF_CHUNK_BYTES / sizeof(ct__prof_event)))

static struct {
    ct__mutex lock;
    int running; /* read by every op without the lock */
    bool recorded;
    uint64_t gen;
    ct_profiler_opts opts;
    uint64_t t0;
    ct__prof_event **chunks;
    int64_t n_chunks, chunk_cap, n_events, dropped;
    char *strings; /* the newest arena chunk; its first bytes point at the older one */
    size_t str_used;
    size_t own_bytes;
    int32_t n_threads;
} ct__prof;

/* This thread's open events, valid for the profile of generation gen; and the depths at
   which ranges could not be opened (their ends must not close another event). */
typedef struct ct__prof_thread {
    uint64_t gen;
    int32_t tid;
    int depth, n_lost;
    int64_t stack[CT__PROF_MAX_DEPTH];
    int lost_at[CT__PROF_MAX_DEPTH];
} ct__prof_thread;
static CT__THREAD_LOCAL ct__prof_thread ct__prof_tls;

ct_profiler_opts ct_profiler_defaults(void)
{
    ct_profiler_opts o;
    memset(&o, 0, sizeof o);
    return o;
}

/* ---- storage (the lock held) ------------------------------------------------------------ */
static void *ct__prof_alloc(size_t bytes)
{
    void *p = ct__malloc(bytes);
    if (p) {
        ct__prof.own_bytes += bytes;
    }
    return p;
}

static void ct__prof_release(void *p, size_t bytes)
{
    if (p) {
        ct__free(p);
        ct__prof.own_bytes -= bytes;
    }
}

static void ct__prof_free_all(void)
{
    for (int64_t c = 0; c < ct__prof.n_chunks; c++) {
        ct__prof_release(ct__prof.chunks[c], CT__PROF_CHUNK_BYTES);
    }
    ct__prof_release(ct__prof.chunks, sizeof(ct__prof_event *) * (size_t)ct__prof.chunk_cap);
    while (ct__prof.strings) {
        char *older;
        memcpy(&older, ct__prof.strings, sizeof older);
        ct__prof_release(ct__prof.strings, CT__PROF_CHUNK_BYTES);
        ct__prof.strings = older;
    }
    ct__prof.chunks = NULL;
    ct__prof.n_chunks = ct__prof.chunk_cap = ct__prof.n_events = 0;
    ct__prof.str_used = 0;
    ct__prof.recorded = false;
}

static ct__prof_event *ct__prof_at(int64_t i)
{
    return &ct__prof.chunks[i / CT__PROF_PER_CHUNK][i % CT__PROF_PER_CHUNK];
}

/* A new event slot's index; -1 (counted as dropped) when out of memory. */
static int64_t ct__prof_new_event(void)
{
    if (ct__prof.n_events == ct__prof.n_chunks * CT__PROF_PER_CHUNK) {
        if (ct__prof.n_chunks == ct__prof.chunk_cap) {
            int64_t cap = ct__prof.chunk_cap ? 2 * ct__prof.chunk_cap : 64;
            ct__prof_event **dir =
                (ct__prof_event **)ct__prof_alloc(sizeof(ct__prof_event *) * (size_t)cap);
            if (!dir) {
                ct__prof.dropped++;
                return -1;
            }
            if (ct__prof.n_chunks) {
                memcpy(dir, ct__prof.chunks, sizeof(ct__prof_event *) * (size_t)ct__prof.n_chunks);
            }
            ct__prof_release(ct__prof.chunks,
                             sizeof(ct__prof_event *) * (size_t)ct__prof.chunk_cap);
            ct__prof.chunks = dir;
            ct__prof.chunk_cap = cap;
        }
        ct__prof_event *chunk = (ct__prof_event *)ct__prof_alloc(CT__PROF_CHUNK_BYTES);
        if (!chunk) {
            ct__prof.dropped++;
            return -1;
        }
        ct__prof.chunks[ct__prof.n_chunks++] = chunk;
    }
    return ct__prof.n_events++;
}

/* A copy of s[0, len) in the arena (len < CT__PROF_CHUNK_BYTES - 16); NULL when out of
   memory. */
static const char *ct__prof_store(const char *s, size_t len)
{
    if (!ct__prof.strings || ct__prof.str_used + len + 1 > CT__PROF_CHUNK_BYTES) {
        char *chunk = (char *)ct__prof_alloc(CT__PROF_CHUNK_BYTES);
        if (!chunk) {
            return NULL;
        }
        memcpy(chunk, &ct__prof.strings, sizeof ct__prof.strings);
        ct__prof.strings = chunk;
        ct__prof.str_used = sizeof(char *);
    }
    char *p = ct__prof.strings + ct__prof.str_used;
    memcpy(p, s, len);
    p[len] = '\0';
    ct__prof.str_used += len + 1;
    return p;
}

/* ---- recording (the lock held) ---------------------------------------------------------- */
static uint64_t ct__prof_now(void)
{
    uint64_t t = ct__prof.opts.clock_ns(ct__prof.opts.clock_user);
    return t > ct__prof.t0 ? t - ct__prof.t0 : 0;
}

/* Live bytes, the profiler's own excluded. */
static int64_t ct__prof_mem(void)
{
    return (int64_t)ct_memory_allocated() - (int64_t)ct__prof.own_bytes;
}

/* This thread's stack, emptied (and given the next tid) on its first event of a profile. */
static ct__prof_thread *ct__prof_thread_state(void)
{
    ct__prof_thread *th = &ct__prof_tls;
    if (th->gen != ct__prof.gen) {
        th->gen = ct__prof.gen;
        th->depth = 0;
        th->n_lost = 0;
        th->tid = ++ct__prof.n_threads;
    }
    return th;
}

/* "[[2, 3], [3], []]": the tensor inputs' sizes ([] for an absent optional one), then a []
   per scalar attribute; stored in the arena (NULL when out of memory). */
static const char *ct__prof_shapes(const ct_op_call *c)
{
    char buf[CT__PROF_MAX_SHAPES + 1];
    size_t len = 1;
    buf[0] = '[';
    for (int k = 0; k < c->n_inputs + c->n_attrs; k++) {
        char one[8 * 24 + 8];
        size_t m = 0;
        const ct_tensor *t = k < c->n_inputs ? c->inputs[k] : NULL;
        m += (size_t)snprintf(one + m, sizeof one - m, "%s[", k ? ", " : "");
        for (int d = 0; t && d < t->ndim; d++) {
            m += (size_t)snprintf(one + m, sizeof one - m, "%s%lld", d ? ", " : "",
                                  (long long)t->sizes[d]);
        }
        one[m++] = ']';
        if (len + m + 1 > CT__PROF_MAX_SHAPES) {
            break;
        }
        memcpy(buf + len, one, m);
        len += m;
    }
    buf[len++] = ']';
    return ct__prof_store(buf, len);
}

/* Opens an event of kind on this thread (c: an op's call); its index, or -1 when the stack
   is full or out of memory. The clock is read last, so the bookkeeping is not part of the
   event. */
static int64_t ct__prof_open(const char *name, int kind, const ct_op_call *c)
{
    ct__prof_thread *th = ct__prof_thread_state();
    if (!name || th->depth == CT__PROF_MAX_DEPTH) {
        return -1;
    }
    int64_t i = ct__prof_new_event();
    if (i < 0) {
        return -1;
    }
    ct__prof_event *e = ct__prof_at(i);
    e->name = name;
    e->shapes = c && ct__prof.opts.record_shapes ? ct__prof_shapes(c) : NULL;
    e->flops = c && ct__prof.opts.with_flops && c->op->flops ? c->op->flops(c) : 0;
    e->parent = th->depth ? th->stack[th->depth - 1] : -1;
    e->child_ns = 0;
    e->child_mem = 0;
    e->tid = th->tid;
    e->kind = (uint8_t)kind;
    e->open = 1;
    th->stack[th->depth++] = i;
    e->mem = ct__prof.opts.profile_memory ? ct__prof_mem() : 0;
    e->begin_ns = e->end_ns = ct__prof_now();
    return i;
}

/* Closes event i at now and adds it to its parent's children. */
static void ct__prof_finish(int64_t i, uint64_t now)
{
    ct__prof_event *e = ct__prof_at(i);
    e->end_ns = now > e->begin_ns ? now : e->begin_ns;
    e->mem = ct__prof.opts.profile_memory ? ct__prof_mem() - e->mem : 0;
    e->open = 0;
    if (e->parent >= 0) {
        ct__prof_event *p = ct__prof_at(e->parent);
        p->child_ns += e->end_ns - e->begin_ns;
        p->child_mem += e->mem;
    }
}

/* Closes this thread's open event i and the events opened in it that are still open. */
static void ct__prof_close(ct__prof_thread *th, int64_t i)
{
    ct__prof_event *e = ct__prof_at(i);
    if (!e->open || e->tid != th->tid) {
        return;
    }
    uint64_t now = ct__prof_now();
    while (th->depth > 0) {
        int64_t top = th->stack[--th->depth];
        ct__prof_finish(top, now);
        if (top == i) {
            break;
        }
    }
}

int64_t ct__profiler_op_begin(const ct_op_call *c)
{
    if (!CT__PROF_LOAD(&ct__prof.running)) {
        return -1;
    }
    int64_t handle = -1;
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        int64_t i = ct__prof_open(c->op->name, CT__PROF_OP, c);
        handle = i < 0 ? -1
                       : (int64_t)((ct__prof.gen & CT__PROF_GEN_MASK) << CT__PROF_GEN_SHIFT) | i;
    }
    ct__mutex_unlock(&ct__prof.lock);
    return handle;
}

void ct__profiler_op_end(int64_t event, const ct_op_call *c)
{
    (void)c;
    if (event < 0) {
        return;
    }
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running &&
        (uint64_t)event >> CT__PROF_GEN_SHIFT == (ct__prof.gen & CT__PROF_GEN_MASK)) {
        ct__prof_close(ct__prof_thread_state(),
                       event & (((int64_t)1 << CT__PROF_GEN_SHIFT) - 1));
    }
    ct__mutex_unlock(&ct__prof.lock);
}

/* Opens a range of kind named name[0, len) (copied). CT_ERR_STATE when this thread's stack
   is full, CT_ERR_OOM when out of memory: the range is remembered as lost, so its end closes
   nothing. */
static ct_status ct__prof_range_open(const char *name, size_t len, int kind)
{
    ct_status st = CT_OK;
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        ct__prof_thread *th = ct__prof_thread_state();
        if (th->depth == CT__PROF_MAX_DEPTH) {
            st = CT_ERR_STATE;
        } else if (ct__prof_open(ct__prof_store(name, len), kind, NULL) < 0) {
            ct__prof.dropped++;
            st = CT_ERR_OOM;
        }
        if (st != CT_OK && th->n_lost < CT__PROF_MAX_DEPTH) {
            th->lost_at[th->n_lost++] = th->depth;
        }
    }
    ct__mutex_unlock(&ct__prof.lock);
    return st;
}

/* Ends this thread's innermost range: a lost one, or the innermost event when it is a range;
   false when it is an op or nothing is open. */
static bool ct__prof_range_close(void)
{
    bool ok = true;
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        ct__prof_thread *th = ct__prof_thread_state();
        if (th->n_lost > 0 && th->lost_at[th->n_lost - 1] == th->depth) {
            th->n_lost--;
        } else {
            ok = th->depth > 0 && ct__prof_at(th->stack[th->depth - 1])->kind != CT__PROF_OP;
            if (ok) {
                ct__prof_close(th, th->stack[th->depth - 1]);
            }
        }
    }
    ct__mutex_unlock(&ct__prof.lock);
    return ok;
}

void ct__profiler_range_begin(bool function, const char *fmt, ...)
{
    if (!CT__PROF_LOAD(&ct__prof.running)) {
        return;
    }
    char name[CT__PROF_MAX_NAME + 1];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    len = len < 0 ? 0 : len > CT__PROF_MAX_NAME ? CT__PROF_MAX_NAME : len;
    (void)ct__prof_range_open(name, (size_t)len, function ? CT__PROF_FUNCTION : CT__PROF_USER);
}

void ct__profiler_range_end(void)
{
    if (CT__PROF_LOAD(&ct__prof.running)) {
        (void)ct__prof_range_close();
    }
}

ct_status ct_record_function_begin(const char *name)
{
    const char *op = "ct_record_function_begin";
    if (ct__null(op, name)) {
        return CT_ERR_NULL_ARG;
    }
    if (!CT__PROF_LOAD(&ct__prof.running)) {
        return CT_OK;
    }
    size_t len = strlen(name);
    ct_status st = ct__prof_range_open(name, len < CT__PROF_MAX_NAME ? len : CT__PROF_MAX_NAME,
                                       CT__PROF_USER);
    if (st == CT_ERR_STATE) {
        return ct__fail(st, op, "more than %d ranges and ops open on this thread",
                        CT__PROF_MAX_DEPTH);
    }
    return st == CT_OK ? CT_OK : ct__fail(st, op, "out of memory");
}

ct_status ct_record_function_end(void)
{
    if (CT__PROF_LOAD(&ct__prof.running) && !ct__prof_range_close()) {
        return ct__fail(CT_ERR_STATE, "ct_record_function_end", "no range of "
                        "ct_record_function_begin is the innermost open event of this thread");
    }
    return CT_OK;
}

/* ---- begin, end, reset ------------------------------------------------------------------ */
ct_status ct_profiler_begin(const ct_profiler_opts *opts)
{
    const char *op = "ct_profiler_begin";
    ct_profiler_opts o = opts ? *opts : ct_profiler_defaults();
    if (!o.clock_ns) {
#ifdef CT__CLOCK
        o.clock_ns = ct__clock_ns;
#else
        return ct__fail(CT_ERR_UNSUPPORTED, op, "no default clock in this build "
                        "(CTORCH_NO_STDIO): set opts->clock_ns");
#endif
    }
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        ct__mutex_unlock(&ct__prof.lock);
        return ct__fail(CT_ERR_STATE, op, "the profiler is already running");
    }
    ct__prof_free_all();
    ct__prof.gen++;
    ct__prof.opts = o;
    ct__prof.n_threads = 0;
    ct__prof.dropped = 0;
    (void)ct__prof_thread_state(); /* this thread is tid 1 */
    ct__prof.t0 = o.clock_ns(o.clock_user);
    CT__PROF_STORE(&ct__prof.running, 1);
    ct__mutex_unlock(&ct__prof.lock);
    ct__dispatch_slow_add(1);
    return CT_OK;
}

ct_status ct_profiler_end(void)
{
    const char *op = "ct_profiler_end";
    ct__mutex_lock(&ct__prof.lock);
    if (!ct__prof.running) {
        ct__mutex_unlock(&ct__prof.lock);
        return ct__fail(CT_ERR_STATE, op, "the profiler is not running");
    }
    uint64_t now = ct__prof_now();
    for (int64_t i = ct__prof.n_events - 1; i >= 0; i--) { /* children before parents */
        if (ct__prof_at(i)->open) {
            ct__prof_finish(i, now);
        }
    }
    CT__PROF_STORE(&ct__prof.running, 0);
    ct__prof.recorded = true;
    int64_t dropped = ct__prof.dropped;
    ct__mutex_unlock(&ct__prof.lock);
    ct__dispatch_slow_add(-1);
    if (dropped) {
        return ct__fail(CT_ERR_OOM, op, "out of memory: %lld events were not recorded",
                        (long long)dropped);
    }
    return CT_OK;
}

ct_status ct_profiler_reset(void)
{
    ct__mutex_lock(&ct__prof.lock);
    bool running = ct__prof.running != 0;
    if (!running) {
        ct__prof_free_all();
    }
    ct__mutex_unlock(&ct__prof.lock);
    if (running) {
        return ct__fail(CT_ERR_STATE, "ct_profiler_reset", "the profiler is running: call "
                        "ct_profiler_end first");
    }
    return CT_OK;
}

/* ---- key averages (the lock held) ------------------------------------------------------- */
typedef struct ct__prof_row {
    const char *key, *shapes;
    uint64_t hash;
    int64_t count, total_ns, self_ns, mem, self_mem;
    double flops;
} ct__prof_row;

typedef struct ct__prof_avgs {
    ct__prof_row *rows;
    int64_t n, cap;
    int64_t *slots; /* open addressing: row index + 1, 0 for empty; cap * 2 of them */
} ct__prof_avgs;

static uint64_t ct__prof_hash(const char *s, uint64_t h)
{
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull; /* FNV-1a */
    }
    return h;
}

static int64_t *ct__prof_slot(const ct__prof_avgs *a, uint64_t hash, const char *key,
                              const char *shapes)
{
    uint64_t mask = (uint64_t)(2 * a->cap - 1);
    for (uint64_t s = hash & mask;; s = (s + 1) & mask) {
        const ct__prof_row *r = a->slots[s] ? &a->rows[a->slots[s] - 1] : NULL;
        if (!r || (r->hash == hash && !strcmp(r->key, key) && !strcmp(r->shapes, shapes))) {
            return &a->slots[s];
        }
    }
}

static bool ct__prof_avgs_grow(ct__prof_avgs *a)
{
    int64_t cap = a->cap ? 2 * a->cap : 64;
    ct__prof_row *rows = (ct__prof_row *)ct__realloc(a->rows, sizeof(ct__prof_row) * (size_t)cap);
    int64_t *slots = (int64_t *)ct__calloc(sizeof(int64_t) * (size_t)(2 * cap));
    if (rows) {
        a->rows = rows;
    }
    if (!rows || !slots) {
        ct__free(slots);
        return false;
    }
    ct__free(a->slots);
    a->slots = slots;
    a->cap = cap;
    for (int64_t r = 0; r < a->n; r++) {
        *ct__prof_slot(a, a->rows[r].hash, a->rows[r].key, a->rows[r].shapes) = r + 1;
    }
    return true;
}

/* Groups the events by (name, shapes) in the order each key first started (events are
   numbered in start order). False when out of memory. */
static bool ct__prof_average(ct__prof_avgs *a)
{
    memset(a, 0, sizeof *a);
    for (int64_t i = 0; i < ct__prof.n_events; i++) {
        const ct__prof_event *e = ct__prof_at(i);
        const char *shapes = e->shapes ? e->shapes : "[]";
        uint64_t hash = ct__prof_hash(shapes, ct__prof_hash(e->name, 0xcbf29ce484222325ull));
        if (2 * (a->n + 1) > a->cap && !ct__prof_avgs_grow(a)) {
            return false;
        }
        int64_t *slot = ct__prof_slot(a, hash, e->name, shapes);
        if (!*slot) {
            ct__prof_row *r = &a->rows[a->n++];
            memset(r, 0, sizeof *r);
            r->key = e->name;
            r->shapes = shapes;
            r->hash = hash;
            *slot = a->n;
        }
        ct__prof_row *r = &a->rows[*slot - 1];
        int64_t dur = (int64_t)(e->end_ns - e->begin_ns);
        r->count++;
        r->total_ns += dur;
        r->self_ns += dur - (int64_t)e->child_ns;
        r->mem += e->mem;
        r->self_mem += e->mem - e->child_mem;
        r->flops += e->flops;
    }
    return true;
}

static void ct__prof_avgs_free(ct__prof_avgs *a)
{
    ct__free(a->rows);
    ct__free(a->slots);
}

/* NULL when a finished profile can be read (the lock held), else why not. */
static const char *ct__prof_unreadable(void)
{
    return ct__prof.running    ? "the profiler is running: call ct_profiler_end first"
           : ct__prof.recorded ? NULL
                               : "no profile was recorded (ct_profiler_begin, then "
                                 "ct_profiler_end)";
}

/* Reports why a read failed (after the lock is released): why, else out of memory. */
static ct_status ct__prof_read_fail(const char *op, const char *why)
{
    return why ? ct__fail(CT_ERR_STATE, op, "%s", why) : ct__fail(CT_ERR_OOM, op, "out of memory");
}

int64_t ct_profiler_key_averages(ct_profiler_event_avg *rows, int64_t cap)
{
    const char *op = "ct_profiler_key_averages";
    if (cap < 0 || (rows == NULL && cap > 0)) {
        ct__fail(cap < 0 ? CT_ERR_VALUE : CT_ERR_NULL_ARG, op, "rows is NULL with cap %lld "
                 "(cap must be >= 0, and 0 when rows is NULL)", (long long)cap);
        return 0;
    }
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    ct__prof_avgs a;
    bool ok = !why && ct__prof_average(&a);
    if (!why && !ok) {
        ct__prof_avgs_free(&a);
    }
    int64_t n = 0;
    if (ok) {
        n = a.n;
        for (int64_t r = 0; r < n && r < cap; r++) {
            const ct__prof_row *s = &a.rows[r];
            ct_profiler_event_avg *d = &rows[r];
            d->key = s->key;
            d->input_shapes = s->shapes;
            d->count = s->count;
            d->cpu_time_total_us = (double)s->total_ns / 1000.0;
            d->self_cpu_time_total_us = (double)s->self_ns / 1000.0;
            d->cpu_memory_usage = s->mem;
            d->self_cpu_memory_usage = s->self_mem;
            d->flops = s->flops;
        }
        ct__prof_avgs_free(&a);
    }
    ct__mutex_unlock(&ct__prof.lock);
    if (!ok) {
        ct__prof_read_fail(op, why);
    }
    return n;
}

/* ---- text output --------------------------------------------------------------------------- */
/* Where text goes: a caller's buffer (snprintf-style: len counts all of it) or a file. */
typedef struct ct__prof_out {
    char *buf;
    size_t n, len;
#ifndef CTORCH_NO_STDIO
    FILE *f;
#endif
} ct__prof_out;

static void ct__prof_put(ct__prof_out *o, const char *s, size_t len)
{
#ifndef CTORCH_NO_STDIO
    if (o->f) {
        fwrite(s, 1, len, o->f);
        o->len += len;
        return;
    }
#endif
    if (o->buf && o->len + 1 < o->n) {
        size_t room = o->n - 1 - o->len;
        memcpy(o->buf + o->len, s, len < room ? len : room);
    }
    o->len += len;
}

static void ct__prof_puts(ct__prof_out *o, const char *s)
{
    ct__prof_put(o, s, strlen(s));
}

/* Formatted text of at most 255 bytes (numbers; strings go through ct__prof_put). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void ct__prof_putf(ct__prof_out *o, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    ct__prof_put(o, tmp, len < 0 ? 0 : (size_t)len < sizeof tmp ? (size_t)len : sizeof tmp - 1);
}

static size_t ct__prof_finish_out(ct__prof_out *o)
{
    if (o->buf && o->n) {
        o->buf[o->len < o->n ? o->len : o->n - 1] = '\0';
    }
    return o->len;
}

/* ---- the table ------------------------------------------------------------------------------ */
/* _format_time: microseconds as "1.234us", "1.234ms" or "1.234s". */
static void ct__prof_fmt_time(char *s, size_t n, double us)
{
    if (us >= 1e6) {
        snprintf(s, n, "%.3fs", us / 1e6);
    } else if (us >= 1e3) {
        snprintf(s, n, "%.3fms", us / 1e3);
    } else {
        snprintf(s, n, "%.3fus", us);
    }
}

/* _format_time_share: "12.34%" of total ("NaN" for a zero total). */
static void ct__prof_fmt_share(char *s, size_t n, int64_t part, int64_t total)
{
    if (total == 0) {
        snprintf(s, n, "NaN");
    } else {
        snprintf(s, n, "%.2f%%", (double)part * 100.0 / (double)total);
    }
}

/* _format_memory: "1.50 KB", "2.00 MB", "1.00 GB" or "12 B". */
static void ct__prof_fmt_memory(char *s, size_t n, int64_t bytes)
{
    const double kb = 1024.0, mb = 1024.0 * kb, gb = 1024.0 * mb;
    double b = (double)bytes, mag = fabs(b);
    if (mag >= gb) {
        snprintf(s, n, "%.2f GB", b / gb);
    } else if (mag >= mb) {
        snprintf(s, n, "%.2f MB", b / mb);
    } else if (mag >= kb) {
        snprintf(s, n, "%.2f KB", b / kb);
    } else {
        snprintf(s, n, "%lld B", (long long)bytes);
    }
}

/* A row's value for sort_by; false for an unknown sort_by. */
static bool ct__prof_sort_value(const char *sort_by, const ct__prof_row *r, double *v)
{
    if (!strcmp(sort_by, "self_cpu_time_total")) {
        *v = (double)r->self_ns;
    } else if (!strcmp(sort_by, "cpu_time_total")) {
        *v = (double)r->total_ns;
    } else if (!strcmp(sort_by, "count")) {
        *v = (double)r->count;
    } else if (!strcmp(sort_by, "self_cpu_memory_usage")) {
        *v = (double)r->self_mem;
    } else if (!strcmp(sort_by, "cpu_memory_usage")) {
        *v = (double)r->mem;
    } else if (!strcmp(sort_by, "flops")) {
        *v = r->flops;
    } else {
        return false;
    }
    return true;
}

typedef struct ct__prof_order {
    double value;
    int64_t row;
} ct__prof_order;

/* Largest value first, ties in row order: Python's stable sorted(reverse=True). */
static int ct__prof_order_cmp(const void *pa, const void *pb)
{
    const ct__prof_order *a = (const ct__prof_order *)pa, *b = (const ct__prof_order *)pb;
    if (a->value != b->value) {
        return a->value > b->value ? -1 : 1;
    }
    return a->row < b->row ? -1 : a->row > b->row;
}

/* The table's columns: widths, headers and the cells of one row. */
typedef struct ct__prof_table {
    int n_cols;
    int width[12];
    bool memory, shapes, flops;
    double flops_scale;
    const char *flops_header;
    int64_t self_total_ns;
} ct__prof_table;

static void ct__prof_cells(ct__prof_out *o, const ct__prof_table *t, const char *const *cells)
{
    for (int c = 0; c < t->n_cols; c++) {
        size_t len = strlen(cells[c]);
        for (size_t k = len; k < (size_t)t->width[c]; k++) {
            ct__prof_put(o, " ", 1);
        }
        ct__prof_put(o, cells[c], len);
        ct__prof_put(o, "  ", 2);
    }
    ct__prof_put(o, "\n", 1);
}

static void ct__prof_sep(ct__prof_out *o, const ct__prof_table *t)
{
    for (int c = 0; c < t->n_cols; c++) {
        for (int k = 0; k < t->width[c]; k++) {
            ct__prof_put(o, "-", 1);
        }
        ct__prof_put(o, "  ", 2);
    }
    ct__prof_put(o, "\n", 1);
}

/* Widths and optional columns from every row, as _build_table. */
static void ct__prof_layout(ct__prof_table *t, const ct__prof_avgs *a)
{
    static const char *const units[6] = {"FLOPs", "KFLOPs", "MFLOPs",
                                         "GFLOPs", "TFLOPs", "PFLOPs"};
    size_t name_w = 0, shapes_w = 0;
    double min_flops = 0;
    memset(t, 0, sizeof *t);
    for (int64_t r = 0; r < a->n; r++) {
        const ct__prof_row *row = &a->rows[r];
        size_t kl = strlen(row->key), sl = strlen(row->shapes);
        name_w = kl > name_w ? kl : name_w;
        shapes_w = sl > shapes_w ? sl : shapes_w;
        t->shapes = t->shapes || sl > 2;
        if (row->flops > 0 && (min_flops == 0 || row->flops < min_flops)) {
            min_flops = row->flops;
        }
        t->self_total_ns += row->self_ns;
    }
    t->memory = ct__prof.opts.profile_memory;
    t->flops = ct__prof.opts.with_flops && min_flops > 0;
    t->width[t->n_cols++] = (int)(name_w + 4 < CT__PROF_NAME_COL ? name_w + 4 : CT__PROF_NAME_COL);
    int fixed = 6 + (t->memory ? 2 : 0); /* five time columns, # of Calls, the memory ones */
    for (int c = 0; c < fixed; c++) {
        t->width[t->n_cols++] = CT__PROF_COL;
    }
    if (t->shapes) {
        t->width[t->n_cols++] =
            (int)(shapes_w + 4 < CT__PROF_SHAPES_COL ? shapes_w + 4 : CT__PROF_SHAPES_COL);
    }
    if (t->flops) {
        double lg = log10(min_flops) / 3;
        lg = lg < 0 ? 0 : lg > 5 ? 5 : lg;
        t->flops_scale = pow(10.0, floor(lg) * -3.0);
        t->flops_header = units[(int)lg];
        t->width[t->n_cols++] = CT__PROF_COL;
    }
}

/* One row's cells (in s, 12 strings of 96 bytes) as _build_table's row_values. */
static void ct__prof_row_cells(const ct__prof_table *t, const ct__prof_row *r,
                               char (*s)[96], const char **cells)
{
    int c = 0;
    size_t kl = strlen(r->key);
    if (kl >= CT__PROF_NAME_COL - 3) {
        snprintf(s[c], 96, "%.*s...", CT__PROF_NAME_COL - 3, r->key);
    } else {
        snprintf(s[c], 96, "%s", r->key);
    }
    c++;
    ct__prof_fmt_share(s[c++], 96, r->self_ns, t->self_total_ns);
    ct__prof_fmt_time(s[c++], 96, (double)r->self_ns / 1000.0);
    ct__prof_fmt_share(s[c++], 96, r->total_ns, t->self_total_ns);
    ct__prof_fmt_time(s[c++], 96, (double)r->total_ns / 1000.0);
    ct__prof_fmt_time(s[c++], 96, (double)r->total_ns / 1000.0 / (double)r->count);
    if (t->memory) {
        ct__prof_fmt_memory(s[c++], 96, r->mem);
        ct__prof_fmt_memory(s[c++], 96, r->self_mem);
    }
    snprintf(s[c++], 96, "%lld", (long long)r->count);
    for (int k = 0; k < c; k++) {
        cells[k] = s[k];
    }
    if (t->shapes) {
        cells[c++] = r->shapes; /* cut to the column's width by the caller */
    }
    if (t->flops) {
        if (r->flops > 0) {
            snprintf(s[c], 96, "%8.3f", r->flops * t->flops_scale);
        } else {
            snprintf(s[c], 96, "--");
        }
        cells[c] = s[c];
        c++;
    }
}

static void ct__prof_header(ct__prof_out *o, const ct__prof_table *t)
{
    const char *cells[12];
    char flops[32];
    int c = 0;
    static const char *const time_cols[5] = {"Self CPU %", "Self CPU", "CPU total %",
                                             "CPU total", "CPU time avg"};
    cells[c++] = "Name";
    for (int k = 0; k < 5; k++) {
        cells[c++] = time_cols[k];
    }
    if (t->memory) {
        cells[c++] = "CPU Mem";
        cells[c++] = "Self CPU Mem";
    }
    cells[c++] = "# of Calls";
    if (t->shapes) {
        cells[c++] = "Input Shapes";
    }
    if (t->flops) {
        snprintf(flops, sizeof flops, "Total %s", t->flops_header);
        cells[c++] = flops;
    }
    ct__prof_sep(o, t);
    ct__prof_cells(o, t, cells);
    ct__prof_sep(o, t);
}

/* The rows in print order: sorted by sort_by (NULL: first-start order). */
static ct__prof_order *ct__prof_sorted(const ct__prof_avgs *a, const char *sort_by)
{
    ct__prof_order *ord =
        (ct__prof_order *)ct__malloc(sizeof(ct__prof_order) * (size_t)(a->n ? a->n : 1));
    if (!ord) {
        return NULL;
    }
    for (int64_t r = 0; r < a->n; r++) {
        ord[r].row = r;
        ord[r].value = 0;
        if (sort_by) {
            (void)ct__prof_sort_value(sort_by, &a->rows[r], &ord[r].value);
        }
    }
    if (sort_by) {
        qsort(ord, (size_t)a->n, sizeof *ord, ct__prof_order_cmp);
    }
    return ord;
}

/* Writes the table (the lock held); false when out of memory. */
static bool ct__prof_write_table(ct__prof_out *o, const char *sort_by, int row_limit)
{
    ct__prof_avgs a;
    if (!ct__prof_average(&a)) {
        ct__prof_avgs_free(&a);
        return false;
    }
    ct__prof_order *ord = a.n ? ct__prof_sorted(&a, sort_by) : NULL;
    if (a.n && !ord) {
        ct__prof_avgs_free(&a);
        return false;
    }
    if (a.n) { /* _build_table returns "" for no events */
        ct__prof_table t;
        ct__prof_layout(&t, &a);
        ct__prof_header(o, &t);
        char s[12][96];
        char shapes[CT__PROF_SHAPES_COL + 1];
        const char *cells[12];
        for (int64_t k = 0; k < a.n && (row_limit < 0 || k < row_limit); k++) {
            const ct__prof_row *r = &a.rows[ord[k].row];
            ct__prof_row_cells(&t, r, s, cells);
            if (t.shapes) {
                int w = t.width[t.memory ? 9 : 7];
                snprintf(shapes, sizeof shapes, "%.*s", w, r->shapes);
                cells[t.memory ? 9 : 7] = shapes;
            }
            ct__prof_cells(o, &t, cells);
        }
        ct__prof_sep(o, &t);
        char total[64];
        ct__prof_fmt_time(total, sizeof total, (double)t.self_total_ns / 1000.0);
        ct__prof_puts(o, "Self CPU time total: ");
        ct__prof_puts(o, total);
        ct__prof_puts(o, "\n");
    }
    ct__free(ord);
    ct__prof_avgs_free(&a);
    return true;
}

/* The table into o, checked and locked. */
static ct_status ct__prof_table_to(const char *op, ct__prof_out *o, const char *sort_by,
                                   int row_limit)
{
    double v;
    ct__prof_row probe;
    memset(&probe, 0, sizeof probe);
    if (sort_by && !ct__prof_sort_value(sort_by, &probe, &v)) {
        return ct__fail(CT_ERR_VALUE, op, "sort_by must be self_cpu_time_total, "
                        "cpu_time_total, count, self_cpu_memory_usage, cpu_memory_usage or "
                        "flops, got '%s'", sort_by);
    }
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    bool ok = !why && ct__prof_write_table(o, sort_by, row_limit);
    ct__mutex_unlock(&ct__prof.lock);
    ct__prof_finish_out(o);
    return ok ? CT_OK : ct__prof_read_fail(op, why);
}

size_t ct_profiler_table(char *buf, size_t n, const char *sort_by, int row_limit)
{
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.buf = buf;
    o.n = buf ? n : 0;
    return ct__prof_table_to("ct_profiler_table", &o, sort_by, row_limit) == CT_OK ? o.len : 0;
}

/* ---- the Chrome trace ---------------------------------------------------------------------- */
/* s as the inside of a JSON string. */
static void ct__prof_json_str(ct__prof_out *o, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            ct__prof_put(o, esc, 2);
        } else if (ch < 0x20) {
            ct__prof_putf(o, "\\u%04x", ch);
        } else {
            ct__prof_put(o, s, 1);
        }
    }
}

/* Nanoseconds as microseconds with 3 decimals, exactly. */
static void ct__prof_json_us(ct__prof_out *o, uint64_t ns)
{
    ct__prof_putf(o, "%llu.%03llu", (unsigned long long)(ns / 1000),
                  (unsigned long long)(ns % 1000));
}

static void ct__prof_json_event(ct__prof_out *o, int64_t i, const ct__prof_event *e)
{
    ct__prof_putf(o, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"",
                  e->kind == CT__PROF_USER ? "user_annotation" : "cpu_op");
    ct__prof_json_str(o, e->name);
    ct__prof_putf(o, "\", \"pid\": 1, \"tid\": %d, \"ts\": ", (int)e->tid);
    ct__prof_json_us(o, e->begin_ns);
    ct__prof_puts(o, ", \"dur\": ");
    ct__prof_json_us(o, e->end_ns - e->begin_ns);
    ct__prof_putf(o, ", \"args\": {\"External id\": %lld", (long long)i + 1);
    if (e->shapes) {
        ct__prof_puts(o, ", \"Input Dims\": ");
        ct__prof_puts(o, e->shapes);
    }
    if (e->flops > 0 && isfinite(e->flops)) {
        ct__prof_putf(o, ", \"flops\": %.17g", e->flops);
    }
    ct__prof_puts(o, "}}");
}

/* Writes the trace (the lock held). */
static void ct__prof_write_trace(ct__prof_out *o)
{
    ct__prof_puts(o, "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
                     "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, "
                     "\"args\": {\"name\": \"ctorch\"}}");
    for (int32_t t = 1; t <= ct__prof.n_threads; t++) {
        ct__prof_putf(o, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": %d, "
                      "\"args\": {\"name\": \"thread %d%s\"}}", (int)t, (int)t,
                      t == 1 ? " (ct_profiler_begin)" : "");
        ct__prof_putf(o, ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 1, "
                      "\"tid\": %d, \"args\": {\"sort_index\": %d}}", (int)t, (int)t);
    }
    for (int64_t i = 0; i < ct__prof.n_events; i++) {
        ct__prof_json_event(o, i, ct__prof_at(i));
    }
    ct__prof_puts(o, "\n]}\n");
}

/* The trace into o, checked and locked. */
static ct_status ct__prof_trace_to(const char *op, ct__prof_out *o)
{
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    if (!why) {
        ct__prof_write_trace(o);
    }
    ct__mutex_unlock(&ct__prof.lock);
    ct__prof_finish_out(o);
    return why ? ct__prof_read_fail(op, why) : CT_OK;
}

size_t ct_profiler_chrome_trace(char *buf, size_t n)
{
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.buf = buf;
    o.n = buf ? n : 0;
    return ct__prof_trace_to("ct_profiler_chrome_trace", &o) == CT_OK ? o.len : 0;
}

#ifndef CTORCH_NO_STDIO
ct_status ct_profiler_print_table(FILE *f, const char *sort_by, int row_limit)
{
    const char *op = "ct_profiler_print_table";
    if (ct__null(op, f)) {
        return CT_ERR_NULL_ARG;
    }
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.f = f;
    return ct__prof_table_to(op, &o, sort_by, row_limit);
}

ct_status ct_profiler_export_chrome_trace(const char *path)
{
    const char *op = "ct_profiler_export_chrome_trace";
    if (ct__null(op, path)) {
        return CT_ERR_NULL_ARG;
    }
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    ct__mutex_unlock(&ct__prof.lock);
    if (why) {
        return ct__prof_read_fail(op, why);
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        return ct__fail(CT_ERR_IO, op, "cannot open '%s' for writing", path);
    }
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.f = f;
    ct_status st = ct__prof_trace_to(op, &o);
    bool written = !ferror(f);
    written = fclose(f) == 0 && written;
    if (st == CT_OK && !written) {
        return ct__fail(CT_ERR_IO, op, "cannot write '%s'", path);
    }
    return st;
}
#endif

#undef CT__PROF_CHUNK_BYTES
#undef CT__PROF_MAX_DEPTH
#undef CT__PROF_MAX_NAME
#undef CT__PROF_MAX_SHAPES
#undef CT__PROF_GEN_SHIFT
#undef CT__PROF_GEN_MASK
#undef CT__PROF_NAME_COL
#undef CT__PROF_SHAPES_COL
#undef CT__PROF_COL
#undef CT__PROF_LOAD
#undef CT__PROF_STORE
#undef CT__PROF_PER_CHUNK

// >>part ops/registry.c
/* ops/registry.c - the table of every op descriptor (ct_op_registry). An op is added to the
 * list of its part below; the registry test checks that each one is reached by its public
 * function (tests/test_dispatch.c). */

static const ct_op *const ct__registry[] = {
    /* core/tensor.c */
    &ct__op_empty,
    &ct__op_zeros,
    &ct__op_ones,
    &ct__op_full,
    &ct__op_scalar_tensor,
    &ct__op_empty_like,
    &ct__op_zeros_like,
    &ct__op_ones_like,
    &ct__op_full_like,
    &ct__op_tensor,
    &ct__op_arange,
    &ct__op_linspace,
    &ct__op_eye,
    /* core/rng.c */
    &ct__op_uniform_,
    &ct__op_normal_,
    &ct__op_bernoulli_,
    &ct__op_random_,
    &ct__op_rand,
    &ct__op_randn,
    &ct__op_rand_like,
    &ct__op_randn_like,
    &ct__op_randint,
    &ct__op_randperm,
    /* ops/pointwise.c */
    &ct__op_add,
    &ct__op_sub,
    &ct__op_mul,
    &ct__op_div,
    &ct__op_pow,
    &ct__op_maximum,
    &ct__op_minimum,
    &ct__op_eq,
    &ct__op_ne,
    &ct__op_lt,
    &ct__op_le,
    &ct__op_gt,
    &ct__op_ge,
    &ct__op_logical_and,
    &ct__op_logical_or,
    &ct__op_threshold_backward,
    &ct__op_sigmoid_backward,
    &ct__op_tanh_backward,
    &ct__op_add_,
    &ct__op_sub_,
    &ct__op_mul_,
    &ct__op_div_,
    &ct__op_neg,
    &ct__op_abs,
    &ct__op_relu,
    &ct__op_square,
    &ct__op_sign,
    &ct__op_exp,
    &ct__op_log,
    &ct__op_log1p,
    &ct__op_sqrt,
    &ct__op_rsqrt,
    &ct__op_sin,
    &ct__op_cos,
    &ct__op_sigmoid,
    &ct__op_tanh,
    &ct__op_reciprocal,
    &ct__op_logical_not,
    &ct__op_clamp,
    &ct__op_pow_scalar,
    &ct__op_relu_,
    &ct__op_where,
    &ct__op_fill_,
    &ct__op_copy_,
    &ct__op_clone,
    &ct__op_to_dtype,
    &ct__op_to_device,
    /* ops/pointwise.c (issue 7: pointwise7) */
    &ct__op_erf,
    &ct__op_isnan,
    &ct__op_isinf,
    &ct__op_isfinite,
    &ct__op_neg_,
    &ct__op_abs_,
    &ct__op_exp_,
    &ct__op_log_,
    &ct__op_sqrt_,
    &ct__op_sigmoid_,
    &ct__op_tanh_,
    &ct__op_pow_,
    &ct__op_clamp_,
    &ct__op_addcmul,
    &ct__op_addcmul_,
    &ct__op_addcdiv,
    &ct__op_addcdiv_,
    &ct__op_lerp,
    &ct__op_lerp_scalar,
    &ct__op_lerp_,
    &ct__op_lerp_scalar_,
    &ct__op_div_true,
    &ct__op_div_trunc,
    &ct__op_div_floor,
    &ct__op_bernoulli, /* core/rng.c */
    /* ops/view.c */
    &ct__op_view,
    &ct__op_reshape,
    &ct__op_flatten,
    &ct__op_permute,
    &ct__op_transpose,
    &ct__op_t,
    &ct__op_unsqueeze,
    &ct__op_squeeze,
    &ct__op_squeeze_dim,
    &ct__op_expand,
    &ct__op_narrow,
    &ct__op_slice,
    &ct__op_select,
    &ct__op_contiguous,
    &ct__op_alias,
    &ct__op_select_backward,
    &ct__op_slice_backward,
    &ct__op_cat,
    &ct__op_stack,
    /* ops/view.c (issue 7: view7) */
    &ct__op_view_as,
    &ct__op_reshape_as,
    &ct__op_expand_as,
    &ct__op_unflatten,
    &ct__op_mt,
    &ct__op_broadcast_to,
    &ct__op_tril,
    &ct__op_triu,
    /* ops/index.c */
    &ct__op_gather,
    &ct__op_index_select,
    &ct__op_scatter,
    &ct__op_scatter_,
    &ct__op_scatter_add,
    &ct__op_scatter_add_,
    &ct__op_index_add,
    &ct__op_index_add_,
    &ct__op_masked_fill,
    &ct__op_masked_fill_,
    /* ops/reduce.c */
    &ct__op_sum,
    &ct__op_sum_dim,
    &ct__op_sum_to_size,
    &ct__op_mean,
    &ct__op_mean_dim,
    &ct__op_max,
    &ct__op_min,
    &ct__op_max_dim,
    &ct__op_min_dim,
    &ct__op_argmax,
    &ct__op_argmin,
    /* ops/reduce.c: reduce7 */
    &ct__op_amax,
    &ct__op_amin,
    &ct__op_logsumexp,
    &ct__op_var,
    &ct__op_std,
    &ct__op_all,
    &ct__op_all_dim,
    &ct__op_any,
    &ct__op_any_dim,
    &ct__op_linalg_vector_norm,
    &ct__op_allclose,
    &ct__op_equal,
    /* ops/linalg.c */
    &ct__op_mm,
    &ct__op_addmm,
    &ct__op_linear,
    &ct__op_linear_relu,
    &ct__op_bmm,
    &ct__op_dot,
    &ct__op_mv,
    &ct__op_matmul,
    /* ops/softmax.c */
    &ct__op_softmax,
    &ct__op_log_softmax,
    &ct__op_softmax_backward,
    &ct__op_log_softmax_backward,
    /* nn/loss.c */
    &ct__op_nll_loss,
    &ct__op_cross_entropy,
    &ct__op_cross_entropy_backward,
    &ct__op_mse_loss,
    /* optim/optim.c */
    &ct__op_fused_sgd_,
    &ct__op_fused_adam_,
    &ct__op_fused_adamw_,
    /* autograd/autograd.c */
    &ct__op_detach,
};

const ct_op *const *ct_op_registry(int *n)
{
    if (n) {
        *n = (int)(sizeof ct__registry / sizeof ct__registry[0]);
    }
    return ct__registry;
}

/* Whether s is name, or name followed by "." and the schema's overload name. */
static bool ct__op_matches(const ct_op *op, const char *s)
{
    size_t n = strlen(op->name);
    if (strncmp(op->name, s, n) != 0) {
        return false;
    }
    if (s[n] == '\0') {
        return true;
    }
    const char *dot = strchr(op->schema, '.'), *paren = strchr(op->schema, '(');
    if (s[n] != '.' || !dot || !paren || dot > paren) {
        return false;
    }
    size_t m = (size_t)(paren - dot - 1);
    return strncmp(s + n + 1, dot + 1, m) == 0 && s[n + 1 + m] == '\0';
}

const ct_op *ct_op_find(const char *name)
{
    if (ct__null("ct_op_find", (const void *)name)) {
        return NULL;
    }
    int n = 0;
    const ct_op *const *ops = ct_op_registry(&n);
    for (int k = 0; k < n; k++) {
        if (ct__op_matches(ops[k], name)) {
            return ops[k];
        }
    }
    return NULL;
}

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
