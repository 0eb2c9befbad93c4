/* core/dispatch.c - the one entry every op goes through, the hook stack and the backends.
 *
 * ct__dispatch(call): handle checks and device of the inputs, then (only while a hook is
 * pushed or the profiler runs, one predictable branch otherwise) the hooks and the profiler,
 * then meta, the kernel of (op, device, dtype), the autograd node, and the outputs' scope.
 */
#include "internal.h"

/* Nonzero while any thread has a hook pushed, the profiler runs or autocast is on: the
   entry's slow path. */
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
    if (!backend->host_alloc != !backend->host_free) {
        return ct__fail(CT_ERR_VALUE, fn, "backend %s sets only one of host_alloc and host_free",
                        backend->name);
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

const ct_backend *ct__pin_backend(void)
{
    for (int type = 1; type < (int)CT_DEVICE_TYPE_COUNT; type++) {
        const ct_backend *b = ct__backend((ct_device_type)type);
        if (b && b->host_alloc) {
            return b;
        }
    }
    return NULL;
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
    if (!first) { /* no tensor input: a factory, made on the default device */
        c->device = ct_get_default_device();
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
    if (!CT__AUTOGRAD || !op->backward) {
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

/* ---- float16 / bfloat16 through the float32 kernel --------------------------------------- */
/* A float32 copy of a half input (contiguous, unscoped), or the input itself. */
static const ct_tensor *ct__half_widen(const ct_op_call *c, const ct_tensor *t)
{
    if (!t || !ct__is_half(t->dtype)) {
        return t;
    }
    ct_tensor *w = ct__tensor_new(c->fn, t->sizes, t->ndim, CT_FLOAT32);
    if (w) {
        ct__copy_kernel(w, t);
        w->wrapped_number = t->wrapped_number;
    }
    return w;
}

/* Runs the float32 CPU kernel for a call whose kernel dtype is float16 or bfloat16 and has no
   kernel of its own, as PyTorch's CPU kernels compute those dtypes: the half inputs are
   converted to float32, the kernel writes float32 outputs in place of the half ones, which
   are then rounded once per element into the half outputs (an in-place op's self: input 0,
   widened, is its output, copied back after the kernel). Other inputs and outputs (an
   integer index, a bool mask) pass unchanged. The caller's inputs, outputs and dtype are
   restored, so autograd saves the half tensors. */
static ct_status ct__dispatch_half(ct_op_call *c, ct_kernel_fn kernel)
{
    const ct_tensor *local[16], **in = local, *const *orig_in = c->inputs;
    ct_tensor *orig_out[CT_OP_MAX_OUTPUTS];
    ct_dtype dtype = c->dtype;
    int n = c->n_inputs;
    bool inplace = c->op->kind == CT_OP_INPLACE;
    if (n > 16 && !(in = (const ct_tensor **)ct__malloc(sizeof(*in) * (size_t)n))) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    bool ok = true;
    for (int k = 0; k < n; k++) {
        in[k] = ok ? ct__half_widen(c, orig_in[k]) : orig_in[k];
        ok = ok && (in[k] || !orig_in[k]);
    }
    memcpy(orig_out, c->outputs, sizeof orig_out);
    for (int k = 0; k < c->n_outputs && ok; k++) {
        const ct_tensor *o = orig_out[k];
        if (ct__is_half(o->dtype)) {
            c->outputs[k] = inplace && k == 0 ? (ct_tensor *)(uintptr_t)in[0]
                                              : ct__tensor_new(c->fn, o->sizes, o->ndim,
                                                               CT_FLOAT32);
            ok = c->outputs[k] != NULL;
        }
    }
    ct_status st = ok ? CT_OK : ct_error_code();
    if (ok) {
        c->inputs = in;
        c->dtype = CT_FLOAT32;
        st = kernel(c);
    }
    for (int k = 0; k < c->n_outputs; k++) {
        if (c->outputs[k] && c->outputs[k] != orig_out[k]) {
            if (st == CT_OK) {
                ct__copy_kernel(orig_out[k], c->outputs[k]);
            }
            if (!(inplace && k == 0)) {
                ct__release(c->outputs[k]);
            }
        }
    }
    memcpy(c->outputs, orig_out, sizeof orig_out);
    for (int k = 0; k < n; k++) {
        if (in[k] != orig_in[k]) {
            ct__release((ct_tensor *)(uintptr_t)in[k]);
        }
    }
    if (in != local) {
        ct__free((void *)in);
    }
    c->inputs = orig_in;
    c->dtype = dtype;
    return st;
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
    bool widen = !kernel && c->device.type == CT_CPU && ct__is_half(c->dtype) &&
                 op->cpu[CT_FLOAT32];
    if (widen) {
        kernel = op->cpu[CT_FLOAT32];
    }
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
    if ((widen ? ct__dispatch_half(c, kernel) : kernel(c)) != CT_OK) {
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
        if (ct__record_failed()) {
            ct__node_release(n);
            return false;
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
ct_tensor *ct__dispatch_hooked(ct_op_call *c)
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
    /* The slow path: autocast (amp/autocast.c casts the inputs while a region is open, before
       the hooks see the call), the hooks, the profiler. */
    if (ct__dispatch_slow) {
        return ct__autocast_dispatch(c);
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
