/* core/internal.h - private declarations shared by the parts. Never part of the public
 * interface: everything here is ct__ / CT__ prefixed.
 */
#include "config.h"
#include "error.h"
#include "alloc.h"
#include "dtype.h"
#include "tensor.h"
#include "parallel.h"
#include "dispatch.h"

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

/* A float32's bits and back (memcpy: no aliasing rules broken, one move once inlined).
   Always inlined: gcc does not inline a plain static inline function into the kernels
   compiled under CT__VECTORIZE_BEGIN/CT__FP_SPECULATE (other optimize options), and the
   call left in vmath.h's exp/log/erf then blocks vectorization. */
#if defined(__GNUC__) || defined(__clang__)
#define CT__BITS_INLINE __attribute__((always_inline)) static inline
#else
#define CT__BITS_INLINE static inline
#endif
CT__BITS_INLINE uint32_t ct__f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

CT__BITS_INLINE float ct__f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

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

/* CT__GLUE_BEGIN / CT__GLUE_END enclose code that runs once per call rather than per element
   (argument checks, descriptors, public wrappers, derivative formulas, modules, file formats,
   schedulers, timers): gcc compiles it at -Og when the user's level is above it, which keeps
   one translation unit with CTORCH_IMPLEMENTATION within its compile-time budget (the kernels
   keep the user's level; results do not change: every multiply-add we mean is an fma). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) &&                     \
    !defined(__OPTIMIZE_SIZE__) && !defined(CTORCH_NO_GLUE_OG)
#define CT__GLUE_BEGIN _Pragma("GCC push_options") _Pragma("GCC optimize(\"Og\")")
#define CT__GLUE_END _Pragma("GCC pop_options")
#else
#define CT__GLUE_BEGIN
#define CT__GLUE_END
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

/* CT__VEC_BLOCK: the block of elements a contiguous kernel loop runs whole (16, a multiple of
   every vector width). A loop over CT__WHOLE_BLOCKS(n) elements vectorizes without the scalar
   and narrower-vector remainder copies of its body that gcc adds otherwise (compile time);
   the kernel's strided loop or a gathered block does the rest. */
#define CT__VEC_BLOCK 16
#define CT__WHOLE_BLOCKS(n) ((n) & ~(int64_t)(CT__VEC_BLOCK - 1))

#if defined(CTORCH_NO_SIMD)
#elif defined(__AVX512F__)
#define CT__HAS_AVX512 1
#define CT__HAS_AVX2 1
#elif defined(__AVX2__) && defined(__FMA__)
#define CT__HAS_AVX2 1
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define CT__HAS_NEON 1
#elif defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)
#define CT__HAS_NEON32 1 /* 32-bit ARM with NEON and VFPv4 (vfma.f32) */
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

/* CTORCH_NO_AUTOGRAD, an inference-only build: no tensor requires grad, the dispatcher records
   no node, and the entries of backward fail with CT_ERR_UNSUPPORTED. CT__BACKWARD(f) is how a
   descriptor names its derivative formula: NULL there (f named but not referenced, so it
   draws no unused-function warning and neither it nor what it calls is linked). */
#ifdef CTORCH_NO_AUTOGRAD
#define CT__AUTOGRAD 0
#define CT__BACKWARD(f) (0 ? (f) : (ct_backward_fn)0)
#else
#define CT__AUTOGRAD 1
#define CT__BACKWARD(f) f
#endif
/* The error of an autograd entry under CTORCH_NO_AUTOGRAD. */
#define CT__NO_AUTOGRAD_MSG "autograd is not compiled in (CTORCH_NO_AUTOGRAD)"

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
/* float16 and bfloat16: 2-byte storage types computed in float32. */
static inline bool ct__is_half(ct_dtype d) { return d == CT_FLOAT16 || d == CT_BFLOAT16; }
/* n float16 (d == CT_FLOAT16) or bfloat16 values, `stride` bytes apart (2: contiguous, the
   vectorized case), -> contiguous float32, and back with rounding to nearest even: the bits
   of ct_half_to_float / ct_float_to_half (bfloat16 alike) on every path (F16C, AVX-512,
   AVX512-BF16 or portable). */
CT__INTERNAL void ct__half_to_float_n(ct_dtype d, const char *src, int64_t stride, float *dst,
                                      int64_t n);
CT__INTERNAL void ct__float_to_half_n(ct_dtype d, const float *src, char *dst, int64_t stride,
                                      int64_t n);
/* Elements per float32 block of the loops that compute float16/bfloat16 in float32. */
#define CT__HALF_BLOCK 256

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
    bool inference; /* allocated in inference mode: its tensors are inference tensors */
    bool pinned;    /* page-locked host memory from a backend's host_alloc */
};

typedef struct ct__hook {
    ct_tensor *(*fn)(const ct_tensor *grad, void *user); /* NULL for a post-accumulate hook */
    void (*post)(ct_tensor *t, void *user);              /* leaves: after .grad accumulated */
    void *user;
    int pending;    /* a leaf's first hook: its edges still to arrive in this backward */
    ct_tensor *sum; /* ... and the sum of the gradients they brought */
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
    ct_tensor *base;       /* views: the tensor they view (never itself a view), retained */
    uint32_t view_version; /* views: the storage version when their history was recorded */
    bool inference_view;   /* views of a normal tensor made in inference mode */
};

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
/* ct__tensor_new on the CPU in page-locked memory from backend pin's host_alloc. */
CT__INTERNAL ct_tensor *ct__tensor_new_pinned(const char *op, const int64_t *sizes, int ndim,
                                              ct_dtype dtype, const ct_backend *pin);
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
/* double -> float with out-of-range magnitudes as +-inf (a C cast would be undefined). */
static inline float ct__f64_to_f32(double v)
{
    return fabs(v) > 3.4028234663852886e38 ? (v < 0 ? -INFINITY : INFINITY) : (float)v;
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

/* Makes g this thread's default generator (NULL: the process-wide one again); a DataLoader
   worker's generator, seeded base_seed + worker_id (core/rng.c). */
CT__INTERNAL void ct__rng_set_thread_default(ct_generator *g);

/* ---- data (data/dataset.c, used by data/dataloader.c) ------------------------------- */
struct ct_dataset;
/* Fetches the samples idx[0..n) one by one (negative indices count from the end) and stacks
   them with collate(samples, n, n_fields, fields, user) (NULL: ct_default_collate), without
   autograd history; the fields are new tensors of the current scope. On error every field
   is NULL and *failed is the index whose fetch failed (-1: the collate failed). */
CT__INTERNAL ct_status ct__dataset_collect(const struct ct_dataset *ds, const int64_t *idx,
                                           int64_t n,
                                           ct_status (*collate)(ct_tensor *const *, int64_t,
                                                                int, ct_tensor **, void *),
                                           void *user, ct_tensor **fields, int64_t *failed);
/* The next batch of an iterable dataset: up to max samples through its next callback,
   collated as ct__dataset_collect; *got is the batch's size, 0 (fields NULL) at the end of
   the stream or, with drop_last, when fewer than max samples were left. */
struct ct_iterable_dataset;
CT__INTERNAL ct_status ct__iterable_collect(struct ct_iterable_dataset *ds, int64_t max,
                                            bool drop_last,
                                            ct_status (*collate)(ct_tensor *const *, int64_t,
                                                                 int, ct_tensor **, void *),
                                            void *user, ct_tensor **fields, int64_t *got);

/* ---- GEMM (ops/gemm.c) -------------------------------------------------------------- */
/* C = alpha * (A @ B) + beta * C with A (M, K), B (K, N), C (M, N), each given by a
   pointer and row/column strides in elements; beta == 0 does not read C. */
CT__INTERNAL void ct__gemm_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                               int64_t rsa, int64_t csa, const float *B, int64_t rsb, int64_t csb,
                               float beta, float *C, int64_t rsc, int64_t csc);
CT__INTERNAL void ct__gemm_f64(int64_t M, int64_t N, int64_t K, double alpha, const double *A,
                               int64_t rsa, int64_t csa, const double *B, int64_t rsb, int64_t csb,
                               double beta, double *C, int64_t rsc, int64_t csc);
/* The same for int64 (dtype; the narrower integer dtypes compute through int64 copies,
   ct__gemm_integer in ops/linalg.c) with C's columns contiguous (element (i, j) at
   C + i * rsc + j): PyTorch's integer gemm, wrapping modulo 2^64. Threads over rows (the same result for any thread count).
   false: CT_ERR_OOM recorded for op (copying a B whose rows are not contiguous). */
CT__INTERNAL bool ct__gemm_int(const char *op, ct_dtype dtype, int64_t M, int64_t N, int64_t K,
                               int64_t alpha, const void *A, int64_t rsa, int64_t csa,
                               const void *B, int64_t rsb, int64_t csb, int64_t beta, void *C,
                               int64_t rsc);

/* bfloat16 / float16 GEMM (ops/gemm_lowp.c): C = alpha * (A @ B) + beta * C with A and B of
   dtype d (CT_BFLOAT16 or CT_FLOAT16), C of dtype dc (d, rounded once to nearest even, or
   CT_FLOAT32), strides in elements, float32 accumulation; beta == 0 does not read C.
   false: CT_ERR_OOM recorded for op. */
CT__INTERNAL bool ct__gemm_lowp(const char *op, ct_dtype d, int64_t M, int64_t N, int64_t K,
                                float alpha, const void *A, int64_t rsa, int64_t csa,
                                const void *B, int64_t rsb, int64_t csb, float beta, void *C,
                                ct_dtype dc, int64_t rsc, int64_t csc);
/* The kernel path ct__gemm_lowp takes for dtype d and M rows here: "AMX", "AVX512-BF16" or
   "portable" (for benchmarks' reports). */
CT__INTERNAL const char *ct__gemm_lowp_kernel(ct_dtype d, int64_t M);

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
/* X(dtype enum, C type, suffix) for every dtype with a C arithmetic type (float16 and
   bfloat16 are not: their loops convert blocks to float32). */
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

/* ---- batch norm modules (nn/norm.c), for update_bn (optim/swa_utils.c) -------------- */
struct ct_module;
/* Whether m is a BatchNorm1d/2d/3d module (PyTorch's _BatchNorm). */
CT__INTERNAL bool ct__batch_norm_is(const struct ct_module *m);
/* Sets the momentum of a batch norm module m (ct__batch_norm_is; NAN is None) and returns
   the previous one. */
CT__INTERNAL double ct__batch_norm_momentum(struct ct_module *m, double momentum);

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
/* A node named name with n empty edges (ct__node_new fills them from its inputs), or NULL +
   CT_ERR_OOM, after which the op fails (ct__set_history). */
CT__INTERNAL ct_node *ct__node_alloc(const char *name, ct__backward_fn fn, int n);
/* Points e at t's history: its grad_fn, or t itself when it is a leaf that requires grad
   (both retained), and records t's shape and dtype. */
CT__INTERNAL void ct__edge_to(ct__edge *e, const ct_tensor *t);
/* g made to fit edge e: summed to its shape (broadcast gradients), cast to its dtype. */
CT__INTERNAL ct_tensor *ct__grad_fit(const ct__edge *e, ct_tensor *g);
/* The gradient the engine has gathered so far for edge e's node when only the engine holds
   it, it has g's dtype and no graph is being recorded (no create_graph): a backward may add
   its gradient (or a part, e.g. into a slice) into it in place and return none; else NULL. */
CT__INTERNAL ct_tensor *ct__grad_buffer(const ct__edge *e, const ct_tensor *g);
/* Saves an input for backward with its version: a leaf itself, else an alias sharing storage
   and history (so a backward recorded with create_graph differentiates through it). */
CT__INTERNAL void ct__save(ct_node *n, const ct_tensor *t);
/* Saves the op's own output (an alias without history, which would be a cycle); under
   create_graph ct__saved hands out an alias whose grad_fn is n. */
CT__INTERNAL void ct__save_output(ct_node *n, const ct_tensor *out);
/* The k-th saved tensor, or NULL + CT_ERR_AUTOGRAD when it was modified in place since it
   was saved or the graph was already freed. */
CT__INTERNAL const ct_tensor *ct__saved(ct_node *n, int k);
/* Whether recording the current op failed (ct__node_new out of memory, ct__save given an
   inference tensor), clearing the flag; the op then fails. */
CT__INTERNAL bool ct__record_failed(void);
/* Makes n the grad_fn of out (takes over the caller's reference to n; NULL n: no history).
   Returns out, or NULL (out released) when recording failed (ct__record_failed). */
CT__INTERNAL ct_tensor *ct__set_history(ct_tensor *out, ct_node *n);
/* Whether input k of n needs a gradient. */
static inline bool ct__needs_grad(const ct_node *n, int k)
{
    return n->next[k].node || n->next[k].leaf;
}
CT__INTERNAL void ct__node_release(ct_node *n);
CT__INTERNAL const char *ct__node_name(const ct_node *n);
/* ---- views and in-place ops (autograd/views.c) ------------------------------------------ */
/* Checks an in-place op on t is allowed by autograd while grad mode is on: fails
   (CT_ERR_AUTOGRAD) for a leaf that requires grad and for a view of one. */
CT__INTERNAL bool ct__check_inplace(const char *op, const ct_tensor *t);
/* After an in-place op wrote t, records n (the op's node, whose input 0 is t's old history)
   as t's new history. On a view, the base's history becomes CopySlices(n) and the view's an
   AsStridedBackward0 of it, as PyTorch's rebase_history. */
CT__INTERNAL void ct__rebase_history(ct_tensor *t, ct_node *n);
/* A view whose storage was written by an in-place op since its history was recorded gets a
   new history from its base's (AsStridedBackward0), as PyTorch regenerates a view's grad_fn;
   nothing for other tensors. Called before a tensor's history is read. */
CT__INTERNAL void ct__view_refresh(const ct_tensor *t);
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
/* Adds delta to the count of reasons for the entry's slow path (hooks, the profiler,
   autocast). */
CT__INTERNAL void ct__dispatch_slow_add(int delta);
/* The entry's slow path after autocast: the hooks and the profiler around the op. */
CT__INTERNAL ct_tensor *ct__dispatch_hooked(ct_op_call *c);
/* The entry's slow path (amp/autocast.c): casts the call's inputs as its category says
   while autocast is on for its device type, then ct__dispatch_hooked. */
CT__INTERNAL ct_tensor *ct__autocast_dispatch(ct_op_call *c);
/* Tests: CPU tensors take the autocast state and op lists of device_type on this thread
   (CT_CUDA: the CUDA lists checked on CPU tensors); CT_CPU restores. */
CT__INTERNAL void ct__autocast_cpu_lists(ct_device_type device_type);
/* The registered backend of a device type other than the CPU, or NULL. */
CT__INTERNAL const ct_backend *ct__backend(ct_device_type type);
/* The registered backend with pinned host memory (the first by device type), or NULL. */
CT__INTERNAL const ct_backend *ct__pin_backend(void);
/* The dispatch key of a device type for messages: "CPU", "CUDA", a backend's name. */
CT__INTERNAL const char *ct__device_key(ct_device_type type);
/* Positional kernel tables (C++ has no array designators): the same kernel for a dtype set.
   The float16/bfloat16 columns (the last two) stay NULL: the entry computes those dtypes
   through the float32 kernel (dispatch.c); CT__K_ANY fills them too, for kernels that move
   elements without arithmetic (copies, fills, factories). */
#define CT__K_FLOAT(K) {NULL, NULL, NULL, NULL, NULL, NULL, NULL, K, K, NULL, NULL}
#define CT__K_NUMERIC(K) {NULL, NULL, K, K, K, K, K, K, K, NULL, NULL}
#define CT__K_ALL(K) {NULL, K, K, K, K, K, K, K, K, NULL, NULL}
#define CT__K_ANY(K) {NULL, K, K, K, K, K, K, K, K, K, K}
#define CT__K_BOOL(K) {NULL, K, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
#define CT__K_NONE {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}

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
