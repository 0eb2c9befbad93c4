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
   places either of which may be the host (CT_CPU). host_alloc and host_free (optional, both
   or neither) provide page-locked host memory, which ct_pin_memory and the DataLoader's
   pin_memory use (cudaHostAlloc / cudaFreeHost, cached as PyTorch's CachingHostAllocator
   does, are the CUDA backend's); host_alloc returns NULL when out of memory. */
typedef struct ct_backend {
    ct_device_type type;
    const char *name; /* PyTorch's dispatch key, used in messages: "CUDA", "PrivateUse1" */
    void *(*malloc)(void *user, ct_device device, size_t nbytes);
    void (*free)(void *user, ct_device device, void *data);
    ct_status (*copy)(void *user, void *dst, ct_device dst_device, const void *src,
                      ct_device src_device, size_t nbytes);
    void *user;
    void *(*host_alloc)(void *user, size_t nbytes);
    void (*host_free)(void *user, void *data);
} ct_backend;
/* Registers (copies) a backend for backend->type, replacing any earlier one. Errors:
   CT_ERR_VALUE for CT_CPU (built in), a type out of range, or only one of host_alloc and
   host_free; CT_ERR_NULL_ARG for a missing function. Mirrors: torch.utils.rename_privateuse1_backend + the device guard registration. */
CTORCH_API ct_status ct_backend_register(const ct_backend *backend);
/* Removes the backend of type (and its kernels); tensors on it, and pinned host tensors from
   its host_alloc, must be freed first. */
CTORCH_API ct_status ct_backend_unregister(ct_device_type type);
/* Registers kernel as op's kernel for dtype on the backend of type (registered first).
   Errors: CT_ERR_VALUE for CT_CPU, an unregistered type or an invalid dtype; CT_ERR_NULL_ARG.
   Mirrors: TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl(op, kernel); }. */
CTORCH_API ct_status ct_backend_register_kernel(ct_device_type type, const ct_op *op,
                                                ct_dtype dtype, ct_kernel_fn kernel);
/* The kernel for (op, device type, dtype), or NULL (also for a NULL op, with no error). */
CTORCH_API ct_kernel_fn ct_dispatch_kernel(const ct_op *op, ct_device_type type, ct_dtype dtype);
