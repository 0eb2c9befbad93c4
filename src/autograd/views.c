/* autograd/views.c - in-place ops on views: PyTorch's CopySlices and view history.
 *
 * A view keeps its base (ct_tensor.base). An in-place op on a view that records a node fn
 * (input 0: the view's old values) rebases the base's history to CopySlices(fn): its backward
 * takes the base's gradient, runs fn's backward on the view's part and puts the result back
 * in that part. The view's own history becomes AsStridedBackward0 of the base's. Other views
 * of the same base see their storage's version change and regenerate their history the same
 * way (ct__view_refresh) before it is next read.
 */
#include "../core/internal.h"
#include "autograd.h"
#include "../ops/pointwise.h"

CT__GLUE_BEGIN

/* A tensor's geometry over its storage, in elements. */
typedef struct ct__geometry {
    int64_t sizes[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS];
    int64_t offset;
    int ndim;
} ct__geometry;

/* What CopySlices and AsStridedBackward0 keep: the base's and the view's geometry over their
   storage (numel elements of dtype on device) and, for CopySlices, the in-place op's node. */
typedef struct ct__view_ctx {
    ct_node *fn;
    ct__geometry base, view;
    int64_t numel;
    ct_dtype dtype;
    ct_device device;
} ct__view_ctx;

static void ct__view_ctx_free(void *ctx)
{
    ct__node_release(((ct__view_ctx *)ctx)->fn);
    ct__free(ctx);
}

static void ct__geometry_of(ct__geometry *g, const ct_tensor *t)
{
    memcpy(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(g->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    g->offset = t->offset;
    g->ndim = t->ndim;
}

/* The context of a node for view v (fn: the in-place op's node, owned from here on), or
   NULL + CT_ERR_OOM. */
static ct__view_ctx *ct__view_ctx_new(const ct_tensor *v, ct_node *fn)
{
    ct__view_ctx *x = (ct__view_ctx *)ct__calloc(sizeof(ct__view_ctx));
    if (!x) {
        ct__fail(CT_ERR_OOM, "CopySlices", "out of memory recording the graph");
        return NULL;
    }
    x->fn = fn;
    ct__geometry_of(&x->base, v->base);
    ct__geometry_of(&x->view, v);
    x->dtype = v->dtype;
    x->device = v->storage->device;
    x->numel = (int64_t)(v->storage->nbytes / ct_dtype_size(v->dtype));
    return x;
}

/* A fresh storage like the one the view and its base share (zero-filled when zero), as a
   one-dimensional tensor in the current scope. */
static ct_tensor *ct__storage_like(const ct__view_ctx *x, bool zero)
{
    ct_tensor *flat =
        ct__scoped(ct__tensor_new_on("CopySlices", &x->numel, 1, x->dtype, x->device));
    return zero ? ct_zero_(flat) : flat;
}

/* The tensor of geometry g over flat's storage, a view of flat (so in-place writes into it
   are recorded when the backward itself is differentiated), in the current scope. */
static ct_tensor *ct__over(ct_tensor *flat, const ct__geometry *g)
{
    if (!flat) {
        return NULL;
    }
    ct_tensor *t = ct__tensor_over(flat->storage, flat->dtype, g->sizes, g->strides, g->ndim,
                                   g->offset);
    if (t) {
        t->base = ct_retain(flat);
        t->view_version = flat->storage->version;
    }
    return ct__scoped(t);
}

/* AsStridedBackward0: the view's gradient placed in a zero gradient of its base. */
static void ct__base_view_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct__view_ctx *x = (const ct__view_ctx *)n->ctx;
    ct_tensor *flat = ct__storage_like(x, true);
    ct_copy_(ct__over(flat, &x->view), g);
    gi[0] = ct__over(flat, &x->base);
}

/* CopySlices: the base's gradient, with the view's part replaced by the in-place op's
   gradient for its input 0; the op's other inputs get theirs. */
static void ct__copy_slices_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct__view_ctx *x = (const ct__view_ctx *)n->ctx;
    ct_node *fn = x->fn;
    ct_tensor *flat = ct__storage_like(x, false);
    ct_tensor *result = ct_copy_(ct__over(flat, &x->base), g);
    ct_tensor *part = ct__over(flat, &x->view);
    ct_tensor **gfn = (ct_tensor **)ct__calloc(sizeof(ct_tensor *) * (size_t)fn->n_next);
    if (!result || !part || !gfn) {
        ct__free(gfn);
        if (!ct_error()) {
            ct__fail(CT_ERR_OOM, "CopySlices", "out of memory");
        }
        return;
    }
    fn->backward(fn, ct_clone(part), gfn);
    if (gfn[0] && ct__needs_grad(fn, 0)) {
        ct_copy_(part, ct__grad_fit(&fn->next[0], gfn[0]));
    } else {
        ct_zero_(part);
    }
    gi[0] = result;
    for (int k = 1; k < fn->n_next; k++) {
        gi[k] = gfn[k];
    }
    ct__free(gfn);
}

/* Makes n t's history (taking over the reference), moving retain_grad to it. */
static void ct__set_grad_fn(ct_tensor *t, ct_node *n)
{
    if (t->grad_fn && t->grad_fn->retain_target == t) {
        t->grad_fn->retain_target = NULL;
        n->retain_target = t;
    }
    ct__node_release(t->grad_fn);
    t->grad_fn = n;
}

/* AsStridedBackward0 of view v's base, or NULL after an error. */
static ct_node *ct__as_strided_node(const ct_tensor *v)
{
    ct__view_ctx *x = ct__view_ctx_new(v, NULL);
    ct_node *a = x ? ct__node_alloc("AsStridedBackward0", ct__base_view_backward, 1) : NULL;
    if (!a) {
        ct__free(x);
        return NULL;
    }
    a->ctx = x;
    a->ctx_free = ct__view_ctx_free;
    ct__edge_to(&a->next[0], v->base);
    return a;
}

/* Rebases view v's base onto CopySlices(fn) (taking over fn); false after an error. */
static bool ct__copy_slices(const ct_tensor *v, ct_node *fn)
{
    ct__view_ctx *x = ct__view_ctx_new(v, fn);
    ct_node *c = x ? ct__node_alloc("CopySlices", ct__copy_slices_backward, fn->n_next) : NULL;
    if (!c) {
        if (x) {
            ct__view_ctx_free(x);
        } else {
            ct__node_release(fn);
        }
        return false;
    }
    c->ctx = x;
    c->ctx_free = ct__view_ctx_free;
    ct__edge_to(&c->next[0], v->base);
    for (int k = 1; k < fn->n_next; k++) { /* the op's other inputs: its own edges */
        c->next[k] = fn->next[k];
        if (c->next[k].node) {
            CT__ATOMIC_ADD(&c->next[k].node->refcount, 1);
        }
        ct_retain(c->next[k].leaf);
    }
    ct__set_grad_fn(v->base, c);
    return true;
}

bool ct__check_inplace(const char *op, const ct_tensor *t)
{
    if (ct_is_inference_mode_enabled()) {
        return true;
    }
    if (t->storage->inference) {
        ct__fail(CT_ERR_AUTOGRAD, op, "Inplace update to inference tensor outside InferenceMode "
                 "is not allowed.You can make a clone to get a normal tensor before doing inplace "
                 "update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
        return false;
    }
    if (!ct_is_grad_enabled()) {
        return true;
    }
    if (t->inference_view && ct_requires_grad(t->base)) {
        ct__fail(CT_ERR_AUTOGRAD, op, "A view was created in inference mode and is being "
                 "modified inplace in normal mode. Given that this use case is ambiguous and "
                 "error-prone, it is forbidden. You can clarify your code by moving both the view "
                 "and the inplace either both inside the inference_mode block (if you don't want "
                 "the inplace to be tracked) or both outside (if you want the inplace to be "
                 "tracked).");
        return false;
    }
    if (t->requires_grad && !t->grad_fn) {
        ct__fail(CT_ERR_AUTOGRAD, op,
                 "a leaf Variable that requires grad is being used in an "
                 "in-place operation.");
        return false;
    }
    if (t->base && t->base->requires_grad && !t->base->grad_fn) {
        ct__fail(CT_ERR_AUTOGRAD, op,
                 "a view of a leaf Variable that requires grad is being "
                 "used in an in-place operation.");
        return false;
    }
    return true;
}

void ct__rebase_history(ct_tensor *t, ct_node *n)
{
    if (!n) {
        return;
    }
    if (t->base) {
        if (!ct__copy_slices(t, n)) {
            return;
        }
        n = ct__as_strided_node(t);
        t->view_version = t->storage->version;
        if (!n) {
            return;
        }
    }
    ct__set_grad_fn(t, n);
}

void ct__view_refresh(const ct_tensor *view)
{
    ct_tensor *t = (ct_tensor *)(uintptr_t)view; /* the history is regenerated lazily */
    if (!t->base || t->view_version == t->storage->version) {
        return;
    }
    t->view_version = t->storage->version;
    if (!t->base->grad_fn) { /* the base's history did not change: the view's stands */
        return;
    }
    ct_node *a = ct__as_strided_node(t);
    if (a) {
        ct__set_grad_fn(t, a);
    }
}
CT__GLUE_END
