/* autograd/autograd.c - graph nodes, the engine, grad mode. */
#include "../core/internal.h"
#include "autograd.h"
#include "../ops/reduce.h"
#include "../ops/pointwise.h"

static CT__THREAD_LOCAL bool ct__grad_off = false;
static CT__THREAD_LOCAL bool ct__grad_stack[64];
static CT__THREAD_LOCAL int ct__grad_depth = 0;
static CT__THREAD_LOCAL uint64_t ct__node_seq = 0;
static CT__THREAD_LOCAL uint64_t ct__engine_epoch = 0;
static CT__THREAD_LOCAL int ct__inference_depth = 0;
/* set when recording failed (ct__node_new, ct__save), read by set_history (ct__record_failed) */
static CT__THREAD_LOCAL bool ct__node_failed = false;

CT__GLUE_BEGIN
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

/* ---- inference mode ------------------------------------------------------------------ */
void ct_inference_mode_begin(void)
{
    ct_no_grad_begin();
    ct__inference_depth++;
}

void ct_inference_mode_end(void)
{
    if (ct__inference_depth == 0) {
        return;
    }
    ct__inference_depth--;
    ct_no_grad_end();
}

bool ct_is_inference_mode_enabled(void)
{
    return ct__inference_depth > 0;
}

/* ---- tensor autograd attributes ------------------------------------------------------ */
bool ct_requires_grad(const ct_tensor *t)
{
    if (ct__null_tensor("ct_requires_grad", t)) {
        return false;
    }
    ct__view_refresh(t);
    return t->requires_grad || t->grad_fn;
}

bool ct_is_leaf(const ct_tensor *t)
{
    return !ct__null_tensor("ct_is_leaf", t) && !t->grad_fn;
}

const ct_node *ct_grad_fn(const ct_tensor *t)
{
    if (ct__null_tensor("ct_grad_fn", t)) {
        return NULL;
    }
    ct__view_refresh(t);
    return t->grad_fn;
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
    if (requires_grad && !CT__AUTOGRAD) {
        ct__fail(CT_ERR_UNSUPPORTED, op, CT__NO_AUTOGRAD_MSG);
        return NULL;
    }
    if (requires_grad && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op,
                 "only Tensors of floating point dtype can require "
                 "gradients");
        return NULL;
    }
    if (requires_grad && t->storage->inference && !ct__inference_depth) {
        ct__fail(CT_ERR_AUTOGRAD, op, "Setting requires_grad=True on inference tensor outside "
                 "InferenceMode is not allowed.");
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

/* Appends a hook to *list after checking t requires grad. */
static ct_status ct__tensor_hook_add(ct_tensor *t, ct__hook h, const char *op)
{
    if (!ct_requires_grad(t)) {
        return ct__fail(CT_ERR_AUTOGRAD, op,
                        "cannot register a hook on a tensor that doesn't "
                        "require gradient");
    }
    ct__hook *n = (ct__hook *)ct__malloc(sizeof(ct__hook));
    if (!n) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    *n = h;
    n->next = NULL;
    ct__hook **list = t->grad_fn ? &t->grad_fn->pre_hooks : &t->hooks;
    while (*list) {
        list = &(*list)->next;
    }
    *list = n;
    return CT_OK;
}

ct_status ct_register_hook(ct_tensor *t, ct_tensor_hook fn, void *user)
{
    const char *op = "ct_register_hook";
    if (ct__null(op, t) || (!fn && ct__null(op, NULL))) {
        return ct_error_code();
    }
    ct__hook h = {fn, NULL, user, 0, NULL, NULL};
    return ct__tensor_hook_add(t, h, op);
}

ct_status ct_register_post_accumulate_grad_hook(ct_tensor *t, ct_post_accumulate_grad_hook fn,
                                                void *user)
{
    const char *op = "ct_register_post_accumulate_grad_hook";
    if (ct__null(op, t) || (!fn && ct__null(op, NULL))) {
        return ct_error_code();
    }
    if (t->grad_fn) {
        return ct__fail(CT_ERR_AUTOGRAD, op,
                        "post accumulate grad hooks cannot be registered on non-leaf tensors");
    }
    ct__hook h = {NULL, fn, user, 0, NULL, NULL};
    return ct__tensor_hook_add(t, h, op);
}

int ct_remove_hook(ct_tensor *t, const void *user)
{
    if (ct__null("ct_remove_hook", t)) {
        return -1;
    }
    int removed = 0;
    ct__hook **list = t->grad_fn ? &t->grad_fn->pre_hooks : &t->hooks;
    while (*list) {
        ct__hook *h = *list;
        if (h->user == user) {
            *list = h->next;
            ct__release(h->sum);
            ct__free(h);
            removed++;
        } else {
            list = &h->next;
        }
    }
    return removed;
}
CT__GLUE_END

/* ---- nodes -------------------------------------------------------------------------- */
void ct__identity_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = (ct_tensor *)(uintptr_t)g;
}

bool ct__any_requires_grad(const ct_tensor *const *inputs, int n)
{
    if (ct__grad_off || ct__inference_depth) {
        return false;
    }
    for (int k = 0; k < n; k++) { /* inference tensors never start recording (no autograd key) */
        if (inputs[k] && !inputs[k]->storage->inference && ct_requires_grad(inputs[k])) {
            return true;
        }
    }
    return false;
}

void ct__edge_to(ct__edge *e, const ct_tensor *t)
{
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

ct_node *ct__node_alloc(const char *name, ct__backward_fn fn, int n)
{
    ct_node *node = (ct_node *)ct__calloc(sizeof(ct_node));
    ct__edge *next = (ct__edge *)ct__calloc(sizeof(ct__edge) * (size_t)(n ? n : 1));
    if (!node || !next) {
        ct__free(node);
        ct__free(next);
        ct__node_failed = true;
        ct__fail(CT_ERR_OOM, name, "out of memory recording the graph");
        return NULL;
    }
    node->name = name;
    node->refcount = 1;
    node->seq = ++ct__node_seq;
    node->backward = fn;
    node->n_next = n;
    node->next = next;
    return node;
}

ct_node *ct__node_new(const char *name, ct__backward_fn fn, const ct_tensor *const *inputs, int n)
{
    ct__node_failed = false;
    if (!ct__any_requires_grad(inputs, n)) {
        return NULL;
    }
    ct_node *node = ct__node_alloc(name, fn, n);
    for (int k = 0; node && k < n; k++) {
        if (inputs[k]) {
            ct__view_refresh(inputs[k]);
            ct__edge_to(&node->next[k], inputs[k]);
        }
    }
    return node;
}

void ct__save(ct_node *n, const ct_tensor *t)
{
    CT_ASSERT(n->n_saved < CT__NODE_SAVED);
    if (t && t->storage->inference) { /* nodes are only recorded outside inference mode */
        ct__node_failed = true;
        ct__fail(CT_ERR_AUTOGRAD, n->name, "Inference tensors cannot be saved for backward. "
                 "Please do not use Tensors created in inference mode in computation tracked by "
                 "autograd. To work around this, you can make a clone to get a normal tensor and "
                 "use it in autograd, or use `torch.no_grad()` instead of "
                 "`torch.inference_mode()`.");
        t = NULL;
    }
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

bool ct__record_failed(void)
{
    bool failed = ct__node_failed;
    ct__node_failed = false;
    return failed;
}

ct_tensor *ct__set_history(ct_tensor *out, ct_node *n)
{
    if (ct__record_failed()) { /* ct__node_new or ct__save refused: the op fails */
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

/* ---- engine ------------------------------------------------------------------------- */
typedef struct ct__callback {
    ct_autograd_callback_fn fn;
    void *user;
} ct__callback;

typedef struct ct__engine {
    ct_node **nodes; /* every node reachable from the roots */
    int64_t n_nodes, cap;
    ct_node **ready; /* max-heap on seq */
    int64_t n_ready;
    bool retain_graph, create_graph;
    /* ct_autograd_grad: capture instead of accumulating into .grad; ct_autograd_backward
       (captured NULL): accumulate only into these leaves (and retained non-leaves) */
    ct_tensor *const *inputs;
    int n_inputs;
    ct_tensor **captured;
    ct__callback *callbacks; /* ct_autograd_queue_callback's, run once the graph is done */
    int n_callbacks, callbacks_cap;
} ct__engine;

/* The backward running on this thread (innermost), for ct_autograd_queue_callback. */
static CT__THREAD_LOCAL ct__engine *ct__engine_current = NULL;

ct_status ct_autograd_queue_callback(ct_autograd_callback_fn fn, void *user)
{
    const char *op = "ct_autograd_queue_callback";
    if (!fn && ct__null(op, NULL)) {
        return ct_error_code();
    }
    ct__engine *e = ct__engine_current;
    if (!e) {
        return ct__fail(CT_ERR_AUTOGRAD, op,
                        "Final callbacks can only be installed during backward pass.");
    }
    if (e->n_callbacks == e->callbacks_cap) {
        int cap = e->callbacks_cap ? 2 * e->callbacks_cap : 8;
        ct__callback *c = (ct__callback *)ct__realloc(e->callbacks, sizeof *c * (size_t)cap);
        if (!c) {
            return ct__fail(CT_ERR_OOM, op, "out of memory");
        }
        e->callbacks = c;
        e->callbacks_cap = cap;
    }
    e->callbacks[e->n_callbacks].fn = fn;
    e->callbacks[e->n_callbacks].user = user;
    e->n_callbacks++;
    return CT_OK;
}

/* Runs the queued callbacks (those they queue too) while no error is recorded. */
static bool ct__engine_callbacks(ct__engine *e)
{
    for (int i = 0; i < e->n_callbacks && !ct_error(); i++) {
        e->callbacks[i].fn(e->callbacks[i].user);
    }
    return !ct_error();
}

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
        ct_tensor *r = h->fn ? h->fn(g, h->user) : NULL;
        if (r) {
            g = r;
        }
    }
    return g;
}

/* Sums g to the edge's shape and casts it to the edge's dtype. */
ct_tensor *ct__grad_fit(const ct__edge *e, ct_tensor *g)
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

/* Whether the engine alone holds the gradient t in a slot (the slot's reference and its
   scope's, no other view of its storage) and records no graph: g (not t) may be added into t
   in place. */
static bool ct__engine_owns(const ct_tensor *t, const ct_tensor *g)
{
    return !ct_is_grad_enabled() && t != g && t->refcount == 2 && t->storage->refcount == 1 &&
           !t->grad_fn && t->scope_depth == ct_scope_depth() - 1 && t->dtype == g->dtype &&
           t->storage->device.type == g->storage->device.type &&
           t->storage->device.index == g->storage->device.index;
}

ct_tensor *ct__grad_buffer(const ct__edge *e, const ct_tensor *g)
{
    ct_tensor *b = e->node ? e->node->buffer : NULL;
    return b && ct__engine_owns(b, g) ? b : NULL;
}

/* Adds g into *slot (a retained reference): in place when the engine owns it, else out of
   place so shared tensors stay intact. */
static void ct__engine_accumulate(ct_tensor **slot, ct_tensor *g)
{
    if (!*slot) {
        *slot = ct_retain(g);
        return;
    }
    if (ct__engine_owns(*slot, g)) {
        ct_add_(*slot, g, 1.0);
        return;
    }
    ct_tensor *sum = ct_add(*slot, g);
    ct__release(*slot);
    *slot = ct_retain(sum);
}

/* A leaf with hooks gathers a backward's gradients in its first hook (the edges still to
   arrive, their sum), so its hooks see the sum once, as PyTorch's AccumulateGrad. Pass 0
   resets every such leaf (dropping a sum an error left), pass 1 counts the edges. */
static void ct__engine_leaves(ct__engine *e, int pass)
{
    for (int64_t i = 0; i < e->n_nodes; i++) {
        ct_node *n = e->nodes[i];
        for (int k = 0; k < n->n_next; k++) {
            ct__hook *h = n->next[k].leaf ? n->next[k].leaf->hooks : NULL;
            if (h && pass == 0) {
                h->pending = 0;
                ct__release(h->sum);
                h->sum = NULL;
            } else if (h) {
                h->pending++;
            }
        }
    }
}

static bool ct__engine_to_leaf(ct__engine *e, ct_tensor *leaf, ct_tensor *g);

/* An edge into leaf has delivered g (NULL: no gradient). A leaf with hooks waits for its
   last edge, then its gradient hooks and accumulation see the sum, and its post-accumulate
   hooks run when .grad was accumulated. */
static void ct__engine_leaf_arrived(ct__engine *e, ct_tensor *leaf, ct_tensor *g)
{
    ct__hook *first = leaf->hooks;
    if (!first) {
        if (g) {
            ct__engine_to_leaf(e, leaf, g);
        }
        return;
    }
    if (g) {
        ct__engine_accumulate(&first->sum, g);
    }
    if (--first->pending > 0) {
        return;
    }
    ct_tensor *sum = first->sum;
    first->sum = NULL;
    bool accumulated = sum && ct__engine_to_leaf(e, leaf, sum);
    ct__release(sum);
    for (ct__hook *h = leaf->hooks; accumulated && h && !ct_error(); h = h->next) {
        if (h->post) {
            h->post(leaf, h->user);
        }
    }
}

/* Accumulates g into leaf's .grad after its gradient hooks (or captures it); returns whether
   .grad was accumulated. */
static bool ct__engine_to_leaf(ct__engine *e, ct_tensor *leaf, ct_tensor *g)
{
    int i = e->inputs ? ct__engine_input_index(e, leaf, NULL) : -1;
    if (e->captured) {
        if (i >= 0) {
            ct__engine_accumulate(&e->captured[i], g);
        }
        return false;
    }
    if (e->inputs && i < 0) { /* ct_autograd_backward with inputs: only theirs */
        return false;
    }
    g = ct__run_hooks(leaf->hooks, g);
    if (!g) {
        return false;
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
    return leaf->grad != NULL && !ct_error();
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
        ct_tensor *gk = gin[k] ? ct__grad_fit(edge, gin[k]) : NULL;
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
        } else if (edge->leaf) {
            ct__engine_leaf_arrived(e, edge->leaf, gk);
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
    ct__engine_leaves(e, 0);
    ct__engine_leaves(e, 1);
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
    if (!CT__AUTOGRAD) {
        return ct__fail(CT_ERR_UNSUPPORTED, op, CT__NO_AUTOGRAD_MSG);
    }
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
    ct__engine *prev_engine = ct__engine_current;
    ct__engine_current = e;
    ct_scope_begin();
    bool ok = ct__engine_discover(e, roots, n_roots);
    for (int r = 0; ok && r < n_roots; r++) {
        const ct_tensor *t = roots[r];
        ct_tensor *go =
            grad_roots && grad_roots[r] ? (ct_tensor *)(uintptr_t)grad_roots[r] : ct_ones_like(t);
        if (t->grad_fn) {
            ct__engine_accumulate(&t->grad_fn->buffer, go);
        } else {
            ct__engine_leaf_arrived(e, (ct_tensor *)(uintptr_t)t, go);
        }
    }
    ok = ok && ct__engine_execute(e) && ct__engine_callbacks(e);
    ct__engine_leaves(e, 0);
    for (int64_t i = 0; i < e->n_nodes; i++) { /* after an error: drop pending buffers */
        ct__release(e->nodes[i]->buffer);
        e->nodes[i]->buffer = NULL;
    }
    ct__free(e->nodes);
    ct__free(e->callbacks);
    ct_scope_end();
    ct__engine_current = prev_engine;
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

ct_status ct_autograd_backward(ct_tensor *const *tensors, int n_tensors,
                               const ct_tensor *const *grad_tensors, bool retain_graph,
                               bool create_graph, ct_tensor *const *inputs, int n_inputs)
{
    const char *op = "ct_autograd_backward";
    if (ct__null(op, tensors)) {
        return ct_error_code();
    }
    if (inputs && n_inputs <= 0) {
        return ct__fail(CT_ERR_VALUE, op, "`inputs` argument to `backward()` cannot be empty.");
    }
    for (int i = 0; inputs && i < n_inputs; i++) { /* non-leaf inputs keep their .grad */
        if (ct__null(op, inputs[i]) || ct_retain_grad(inputs[i]) != CT_OK) {
            return ct_error_code();
        }
    }
    for (int r = 0; grad_tensors && r < n_tensors; r++) {
        if (grad_tensors[r] && ct__null_tensor(op, grad_tensors[r])) {
            return ct_error_code();
        }
    }
    ct__engine e;
    memset(&e, 0, sizeof e);
    e.retain_graph = retain_graph || create_graph;
    e.create_graph = create_graph;
    e.inputs = inputs;
    e.n_inputs = inputs ? n_inputs : 0;
    return ct__engine_backward(&e, op, tensors, grad_tensors, n_tensors);
}

ct_status ct_autograd_grad(ct_tensor *const *outputs, int n_outputs, ct_tensor *const *inputs,
                           int n_inputs, const ct_tensor *const *grad_outputs, bool retain_graph,
                           bool create_graph, bool allow_unused, ct_tensor **grads)
{
    const char *op = "ct_autograd_grad";
    if (ct__null(op, outputs) || ct__null(op, inputs) || ct__null(op, grads)) {
        return ct_error_code();
    }
    if (!CT__AUTOGRAD) {
        return ct__fail(CT_ERR_UNSUPPORTED, op, CT__NO_AUTOGRAD_MSG);
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
