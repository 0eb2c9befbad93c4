/* nn/module.c - the module object, its traversals, hooks, containers, state_dicts and the
 * built-in layers. */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"
#include "../ops/linalg.h"
#include "../autograd/autograd.h"
#include "init.h"
#include "state_dict.h"
#include "module.h"

#include <stdio.h>

CT__GLUE_BEGIN

#define CT__MODULE_PATH_MAX 1024 /* dotted names of nested modules */

typedef struct ct__named {
    char name[32];
    ct_tensor *tensor; /* parameters and buffers */
    ct_module *module; /* submodules */
    bool persistent;   /* buffers: in the state_dict */
} ct__named;

typedef struct ct__named_list {
    ct__named *items;
    int64_t len, cap;
} ct__named_list;

typedef struct ct__fwd_hook {
    int64_t id;
    ct_forward_pre_hook pre; /* one of pre, post and back is set */
    ct_forward_hook post;
    ct_full_backward_hook back;
    void *user;
} ct__fwd_hook;

struct ct_module {
    char name[32];
    ct_module_forward_fn forward;
    void *user;
    void (*user_free)(void *user);
    bool training;
    ct__named_list params, buffers, children;
    int64_t cfg[2]; /* layer settings (Flatten's dims) */
    ct__fwd_hook *hooks;
    int64_t n_hooks, hooks_cap, next_hook_id;
    ct_tensor *grad_output; /* full backward hooks: the pending call's output gradient */
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
    ct__free(m->hooks);
    ct__release(m->grad_output);
    ct__free(m);
}

/* ---- full backward hooks: the output's gradient arrives first (kept in m), then the
   input's, and the hooks run with both; without an input requiring grad they run at once
   with grad_input NULL (PyTorch's BackwardHook). */
static ct_tensor *ct__run_backward_hooks(ct_module *m, const ct_tensor *grad_input)
{
    ct_tensor *g = (ct_tensor *)(uintptr_t)grad_input;
    for (int64_t i = 0; i < m->n_hooks; i++) {
        ct__fwd_hook h = m->hooks[i];
        ct_tensor *r = h.back ? h.back(m, g, m->grad_output, h.user) : NULL;
        g = r && g ? r : g;
    }
    ct__release(m->grad_output);
    m->grad_output = NULL;
    return g == grad_input ? NULL : g;
}

static ct_tensor *ct__grad_output_hook(const ct_tensor *grad, void *user)
{
    ct_module *m = (ct_module *)user;
    ct__release(m->grad_output);
    m->grad_output = ct_retain((ct_tensor *)(uintptr_t)grad);
    return NULL;
}

static ct_tensor *ct__grad_output_only_hook(const ct_tensor *grad, void *user)
{
    ct__grad_output_hook(grad, user);
    return ct__run_backward_hooks((ct_module *)user, NULL);
}

static ct_tensor *ct__grad_input_hook(const ct_tensor *grad, void *user)
{
    return ct__run_backward_hooks((ct_module *)user, grad);
}

static bool ct__has_backward_hooks(const ct_module *m)
{
    for (int64_t i = 0; i < m->n_hooks; i++) {
        if (m->hooks[i].back) {
            return true;
        }
    }
    return false;
}

/* An alias of t whose gradient runs fn(grad, m); NULL after an error. */
static ct_tensor *ct__hooked_alias(const ct_tensor *t, ct_tensor_hook fn, ct_module *m)
{
    ct_tensor *a = ct_alias(t);
    return a && ct_register_hook(a, fn, m) == CT_OK ? a : NULL;
}

/* Module.__call__ with hooks: pre-hooks, forward, hooks; a hook's error stops the call. */
static ct_tensor *ct__forward_hooked(ct_module *m, const ct_tensor *x)
{
    bool clean = ct_error_code() == CT_OK;
    bool back = ct_is_grad_enabled() && ct__has_backward_hooks(m);
    ct_scope_begin();
    const ct_tensor *in = x;
    for (int64_t i = 0; i < m->n_hooks && in; i++) {
        ct__fwd_hook h = m->hooks[i];
        ct_tensor *r = h.pre ? h.pre(m, in, h.user) : NULL;
        in = clean && ct_error_code() != CT_OK ? NULL : r ? r : in;
    }
    bool input_grad = in && ct_requires_grad(in);
    if (back && input_grad) {
        in = ct__hooked_alias(in, ct__grad_input_hook, m);
    }
    ct_tensor *out = in ? m->forward(m, in) : NULL;
    for (int64_t i = 0; i < m->n_hooks && out; i++) {
        ct__fwd_hook h = m->hooks[i];
        ct_tensor *r = h.post ? h.post(m, in, out, h.user) : NULL;
        out = clean && ct_error_code() != CT_OK ? NULL : r ? r : out;
    }
    if (back && out && ct_requires_grad(out)) {
        out = ct__hooked_alias(out, input_grad ? ct__grad_output_hook : ct__grad_output_only_hook,
                               m);
    }
    out = ct_keep(out);
    ct_scope_end();
    return out;
}

ct_tensor *ct_module_forward(ct_module *m, const ct_tensor *input)
{
    if (ct__null("ct_module_forward", m) || ct__null("ct_module_forward", input)) {
        return NULL;
    }
    return m->n_hooks ? ct__forward_hooked(m, input) : m->forward(m, input);
}

const char *ct_module_name(const ct_module *m)
{
    return ct__null("ct_module_name", m) ? NULL : m->name;
}

void *ct_module_user(const ct_module *m)
{
    return ct__null("ct_module_user", m) ? NULL : m->user;
}

/* Whether name is a valid attribute name of m: 1 to 31 characters, no '.', not yet used. */
static bool ct__name_ok(const char *op, const ct_module *m, const char *name)
{
    if (strlen(name) >= sizeof m->params.items[0].name || strchr(name, '.') || !name[0]) {
        ct__fail(CT_ERR_VALUE, op, "name \"%s\" must be 1 to 31 characters without \".\"", name);
        return false;
    }
    const ct__named_list *all[3] = {&m->params, &m->buffers, &m->children};
    for (int k = 0; k < 3; k++) {
        for (int64_t i = 0; i < all[k]->len; i++) {
            if (strcmp(all[k]->items[i].name, name) == 0) {
                ct__fail(CT_ERR_VALUE, op, "attribute '%s' already exists", name);
                return false;
            }
        }
    }
    return true;
}

static bool ct__named_add(const char *op, ct_module *m, ct__named_list *l, const char *name,
                          ct_tensor *t, ct_module *child)
{
    if (ct__null(op, m) || ct__null(op, name) || (!t && !child && ct__null(op, NULL)) ||
        !ct__name_ok(op, m, name)) {
        return false;
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
    e->persistent = true;
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

static ct_status ct__register_buffer(const char *op, ct_module *m, const char *name,
                                     ct_tensor *b, bool persistent)
{
    if (ct__null(op, b) || !ct__named_add(op, m, m ? &m->buffers : NULL, name, b, NULL)) {
        return ct_error_code();
    }
    m->buffers.items[m->buffers.len - 1].persistent = persistent;
    return CT_OK;
}

ct_status ct_module_register_buffer(ct_module *m, const char *name, ct_tensor *b)
{
    return ct__register_buffer("ct_module_register_buffer", m, name, b, true);
}

ct_status ct_module_register_buffer_persistent(ct_module *m, const char *name, ct_tensor *b,
                                               bool persistent)
{
    return ct__register_buffer("ct_module_register_buffer_persistent", m, name, b, persistent);
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

/* ---- traversals --------------------------------------------------------------------- */
/* Calls fn(module, path) on m and its submodules in pre-order; path is the dotted prefix of
   the module's entries ("" for the root, "0.fc." ...), built in path[0..len). Stops at the
   first false. */
typedef bool (*ct__visit_fn)(const ct_module *m, const char *path, void *ctx);

static bool ct__visit(const ct_module *m, char *path, size_t len, ct__visit_fn fn, void *ctx)
{
    if (!fn(m, path, ctx)) {
        return false;
    }
    for (int64_t i = 0; i < m->children.len; i++) {
        const ct__named *c = &m->children.items[i];
        size_t n = strlen(c->name);
        if (len + n + 2 > CT__MODULE_PATH_MAX) {
            ct__fail(CT_ERR_VALUE, "ct_module", "module paths longer than %d bytes",
                     CT__MODULE_PATH_MAX - 1);
            return false;
        }
        memcpy(path + len, c->name, n);
        path[len + n] = '.';
        path[len + n + 1] = '\0';
        if (!ct__visit(c->module, path, len + n + 1, fn, ctx)) {
            return false;
        }
        path[len] = '\0';
    }
    return true;
}

static bool ct__walk(const ct_module *m, ct__visit_fn fn, void *ctx)
{
    char path[CT__MODULE_PATH_MAX];
    path[0] = '\0';
    return ct__visit(m, path, 0, fn, ctx);
}

/* Collects names and tensors (or modules) into caller arrays. */
typedef struct ct__collect_ctx {
    int which; /* 0 parameters, 1 buffers, 2 modules */
    char **names;
    size_t name_cap;
    ct_tensor **tensors;
    ct_module **modules;
    int64_t cap, count;
} ct__collect_ctx;

static void ct__collect_one(ct__collect_ctx *c, const char *path, const char *name,
                            ct_tensor *t, ct_module *mod)
{
    if (c->count < c->cap) {
        if (c->tensors) {
            c->tensors[c->count] = t;
        }
        if (c->modules) {
            c->modules[c->count] = mod;
        }
        if (c->names && c->name_cap) {
            snprintf(c->names[c->count], c->name_cap, "%s%s", path, name);
        }
    }
    c->count++;
}

static bool ct__collect_visit(const ct_module *m, const char *path, void *ctx)
{
    ct__collect_ctx *c = (ct__collect_ctx *)ctx;
    if (c->which == 2) {
        char name[CT__MODULE_PATH_MAX];
        snprintf(name, sizeof name, "%s", path);
        size_t n = strlen(name);
        if (n) {
            name[n - 1] = '\0'; /* the trailing '.' */
        }
        ct__collect_one(c, "", name, NULL, (ct_module *)(uintptr_t)m);
        return true;
    }
    const ct__named_list *l = c->which == 0 ? &m->params : &m->buffers;
    for (int64_t i = 0; i < l->len; i++) {
        ct__collect_one(c, path, l->items[i].name, l->items[i].tensor, NULL);
    }
    return true;
}

static int64_t ct__collect(const char *op, const ct_module *m, int which, char **names,
                           size_t name_cap, ct_tensor **tensors, ct_module **modules,
                           int64_t cap)
{
    if (ct__null(op, m)) {
        return 0;
    }
    ct__collect_ctx c = {which, names, name_cap, tensors, modules, cap, 0};
    return ct__walk(m, ct__collect_visit, &c) ? c.count : 0;
}

int64_t ct_module_parameters(const ct_module *m, ct_tensor **params, int64_t cap)
{
    return ct__collect("ct_module_parameters", m, 0, NULL, 0, params, NULL, cap);
}

int64_t ct_module_named_parameters(const ct_module *m, char **names, size_t name_cap,
                                   ct_tensor **params, int64_t cap)
{
    return ct__collect("ct_module_named_parameters", m, 0, names, name_cap, params, NULL, cap);
}

int64_t ct_module_buffers(const ct_module *m, ct_tensor **buffers, int64_t cap)
{
    return ct__collect("ct_module_buffers", m, 1, NULL, 0, buffers, NULL, cap);
}

int64_t ct_module_named_buffers(const ct_module *m, char **names, size_t name_cap,
                                ct_tensor **buffers, int64_t cap)
{
    return ct__collect("ct_module_named_buffers", m, 1, names, name_cap, buffers, NULL, cap);
}

int64_t ct_module_named_modules(const ct_module *m, char **names, size_t name_cap,
                                ct_module **modules, int64_t cap)
{
    return ct__collect("ct_module_named_modules", m, 2, names, name_cap, NULL, modules, cap);
}

int64_t ct_module_children(const ct_module *m, ct_module **children, int64_t cap)
{
    if (ct__null("ct_module_children", m)) {
        return 0;
    }
    for (int64_t i = 0; i < m->children.len && i < cap && children; i++) {
        children[i] = m->children.items[i].module;
    }
    return m->children.len;
}

/* The entry of list l named by the first n bytes of name, or NULL. */
static ct__named *ct__named_find(const ct__named_list *l, const char *name, size_t n)
{
    for (int64_t i = 0; i < l->len; i++) {
        if (strlen(l->items[i].name) == n && strncmp(l->items[i].name, name, n) == 0) {
            return &l->items[i];
        }
    }
    return NULL;
}

ct_module *ct_module_get_submodule(const ct_module *m, const char *target)
{
    const char *op = "ct_module_get_submodule";
    if (ct__null(op, m) || ct__null(op, target)) {
        return NULL;
    }
    const ct_module *cur = m;
    const char *p = target;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const ct__named *c = ct__named_find(&cur->children, p, n);
        if (!c) {
            ct__fail(CT_ERR_VALUE, op, "%s has no attribute `%.*s`", cur->name, (int)n, p);
            return NULL;
        }
        cur = c->module;
        p = dot ? dot + 1 : p + n;
    }
    return (ct_module *)(uintptr_t)cur;
}

ct_tensor *ct_module_get_parameter(const ct_module *m, const char *name)
{
    if (ct__null("ct_module_get_parameter", m) || ct__null("ct_module_get_parameter", name)) {
        return NULL;
    }
    const char *dot = strchr(name, '.');
    if (dot) {
        const ct__named *c = ct__named_find(&m->children, name, (size_t)(dot - name));
        return c ? ct_module_get_parameter(c->module, dot + 1) : NULL;
    }
    const ct__named *e = ct__named_find(&m->params, name, strlen(name));
    e = e ? e : ct__named_find(&m->buffers, name, strlen(name));
    return e ? e->tensor : NULL;
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

ct_module *ct_module_requires_grad_(ct_module *m, bool requires_grad)
{
    if (ct__null("ct_module_requires_grad_", m)) {
        return NULL;
    }
    for (int64_t i = 0; i < m->params.len; i++) {
        if (!ct_requires_grad_(m->params.items[i].tensor, requires_grad)) {
            return NULL;
        }
    }
    for (int64_t i = 0; i < m->children.len; i++) {
        if (!ct_module_requires_grad_(m->children.items[i].module, requires_grad)) {
            return NULL;
        }
    }
    return m;
}

ct_module *ct_module_apply(ct_module *m, void (*fn)(ct_module *module, void *user), void *user)
{
    if (ct__null("ct_module_apply", m) || (!fn && ct__null("ct_module_apply", NULL))) {
        return NULL;
    }
    for (int64_t i = 0; i < m->children.len; i++) {
        ct_module_apply(m->children.items[i].module, fn, user);
    }
    fn(m, user);
    return m;
}

/* Gives t (a floating tensor) dtype in place: new contiguous storage holding its values
   converted, the same tensor object (as PyTorch's param.data = param.to(dtype)). */
static bool ct__convert_in_place(ct_tensor *t, ct_dtype dtype)
{
    if (!t || !ct_dtype_is_floating_point(t->dtype) || t->dtype == dtype) {
        return true;
    }
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *c = ct_contiguous(ct_to_dtype(t, dtype));
    ct_no_grad_end();
    bool ok = c != NULL;
    if (ok) {
        ct_storage *old = t->storage;
        t->storage = c->storage;
        CT__ATOMIC_ADD(&t->storage->refcount, 1);
        ct__storage_release(old);
        t->dtype = dtype;
        t->offset = c->offset;
        memcpy(t->strides, c->strides, sizeof t->strides);
    }
    ct_scope_end();
    return ok;
}

static bool ct__to_list(ct__named_list *l, ct_dtype dtype)
{
    for (int64_t i = 0; i < l->len; i++) {
        ct_tensor *t = l->items[i].tensor;
        if (!ct__convert_in_place(t, dtype) || !ct__convert_in_place(t->grad, dtype)) {
            return false;
        }
    }
    return true;
}

ct_module *ct_module_to(ct_module *m, ct_dtype dtype)
{
    const char *op = "ct_module_to";
    if (ct__null(op, m)) {
        return NULL;
    }
    if (!ct__dtype_valid(dtype) || !ct_dtype_is_floating_point(ct__dtype_resolve(dtype))) {
        ct__fail(CT_ERR_DTYPE, op, "nn.Module.to only accepts floating point or complex dtypes, "
                 "but got desired dtype=torch.%s", ct_dtype_name(dtype));
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    if (!ct__to_list(&m->params, dtype) || !ct__to_list(&m->buffers, dtype)) {
        return NULL;
    }
    for (int64_t i = 0; i < m->children.len; i++) {
        if (!ct_module_to(m->children.items[i].module, dtype)) {
            return NULL;
        }
    }
    return m;
}

/* ---- hooks -------------------------------------------------------------------------- */
static ct_hook_handle ct__hook_add(const char *op, ct_module *m, ct_forward_pre_hook pre,
                                   ct_forward_hook post, ct_full_backward_hook back, void *user)
{
    ct_hook_handle h = {NULL, 0};
    if (ct__null(op, m) || (!pre && !post && !back && ct__null(op, NULL))) {
        return h;
    }
    if (m->n_hooks == m->hooks_cap) {
        int64_t cap = m->hooks_cap ? m->hooks_cap * 2 : 4;
        ct__fwd_hook *hooks =
            (ct__fwd_hook *)ct__realloc(m->hooks, sizeof(ct__fwd_hook) * (size_t)cap);
        if (!hooks) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return h;
        }
        m->hooks = hooks;
        m->hooks_cap = cap;
    }
    ct__fwd_hook *e = &m->hooks[m->n_hooks++];
    e->id = ++m->next_hook_id;
    e->pre = pre;
    e->post = post;
    e->back = back;
    e->user = user;
    h.module = m;
    h.id = e->id;
    return h;
}

ct_hook_handle ct_module_register_forward_pre_hook(ct_module *m, ct_forward_pre_hook fn, void *user)
{
    return ct__hook_add("ct_module_register_forward_pre_hook", m, fn, NULL, NULL, user);
}

ct_hook_handle ct_module_register_forward_hook(ct_module *m, ct_forward_hook fn, void *user)
{
    return ct__hook_add("ct_module_register_forward_hook", m, NULL, fn, NULL, user);
}

ct_hook_handle ct_module_register_full_backward_hook(ct_module *m, ct_full_backward_hook fn,
                                                     void *user)
{
    return ct__hook_add("ct_module_register_full_backward_hook", m, NULL, NULL, fn, user);
}

void ct_hook_handle_remove(ct_hook_handle *handle)
{
    if (ct__null("ct_hook_handle_remove", handle) || !handle->module) {
        return;
    }
    ct_module *m = handle->module;
    for (int64_t i = 0; i < m->n_hooks; i++) {
        if (m->hooks[i].id == handle->id) {
            size_t after = (size_t)(m->n_hooks - i - 1);
            memmove(&m->hooks[i], &m->hooks[i + 1], sizeof(ct__fwd_hook) * after);
            m->n_hooks--;
            break;
        }
    }
    handle->id = 0;
}

/* ---- containers --------------------------------------------------------------------- */
ct_tensor *ct_parameter(const ct_tensor *data, bool requires_grad)
{
    if (ct__null("ct_parameter", data)) {
        return NULL;
    }
    ct_tensor *p = ct__alias(data);
    if (!p) {
        ct__fail(CT_ERR_OOM, "ct_parameter", "out of memory");
        return NULL;
    }
    if (!ct_requires_grad_(p, requires_grad)) {
        ct__release(p);
        return NULL;
    }
    return ct__scoped(p);
}

static ct_tensor *ct__no_forward(ct_module *m, const ct_tensor *x)
{
    (void)x;
    ct__fail(CT_ERR_UNSUPPORTED, "ct_module_forward",
             "Module [%s] is missing the required \"forward\" function", m->name);
    return NULL;
}

/* Appends child to m under the name of its position ("0", "1", ...); frees it on error. */
static ct_module *ct__append_child(const char *op, ct_module *m, ct_module *child)
{
    if (ct__null(op, m) || ct__null(op, child)) {
        ct_module_free(child);
        return NULL;
    }
    char name[32];
    snprintf(name, sizeof name, "%lld", (long long)m->children.len);
    if (ct_module_register_module(m, name, child) != CT_OK) {
        ct_module_free(child);
        return NULL;
    }
    return m;
}

ct_module *ct_module_list_new(void)
{
    return ct_module_new("ModuleList", ct__no_forward, NULL, NULL);
}

ct_module *ct_module_list_append(ct_module *list, ct_module *child)
{
    return ct__append_child("ct_module_list_append", list, child);
}

ct_module *ct_module_dict_new(void)
{
    return ct_module_new("ModuleDict", ct__no_forward, NULL, NULL);
}

ct_status ct_module_dict_set(ct_module *dict, const char *key, ct_module *child)
{
    const char *op = "ct_module_dict_set";
    if (ct__null(op, dict) || ct__null(op, key) || ct__null(op, child)) {
        ct_module_free(child);
        return ct_error_code();
    }
    ct__named *e = ct__named_find(&dict->children, key, strlen(key));
    if (e) {
        ct_module_free(e->module);
        e->module = child;
        return CT_OK;
    }
    if (ct_module_register_module(dict, key, child) != CT_OK) {
        ct_module_free(child);
        return ct_error_code();
    }
    return CT_OK;
}

ct_module *ct_module_dict_get(const ct_module *dict, const char *key)
{
    if (ct__null("ct_module_dict_get", dict) || ct__null("ct_module_dict_get", key)) {
        return NULL;
    }
    const ct__named *e = ct__named_find(&dict->children, key, strlen(key));
    return e ? e->module : NULL;
}

ct_module *ct_parameter_list_new(void)
{
    return ct_module_new("ParameterList", ct__no_forward, NULL, NULL);
}

ct_status ct_parameter_list_append(ct_module *list, ct_tensor *param)
{
    if (ct__null("ct_parameter_list_append", list)) {
        return ct_error_code();
    }
    char name[32];
    snprintf(name, sizeof name, "%lld", (long long)list->params.len);
    return ct_module_register_parameter(list, name, param);
}

/* ---- state_dict --------------------------------------------------------------------- */
static bool ct__state_visit(const ct_module *m, const char *path, void *ctx)
{
    ct_state_dict *sd = (ct_state_dict *)ctx;
    const ct__named_list *lists[2] = {&m->params, &m->buffers};
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; i < lists[k]->len; i++) {
            const ct__named *e = &lists[k]->items[i];
            if (!e->persistent) {
                continue;
            }
            char key[CT__MODULE_PATH_MAX + 32];
            snprintf(key, sizeof key, "%s%s", path, e->name);
            ct_tensor *alias = ct__alias(e->tensor);
            ct_status st = alias ? ct_state_dict_set(sd, key, alias)
                                 : ct__fail(CT_ERR_OOM, "ct_module_state_dict", "out of memory");
            ct__release(alias);
            if (st != CT_OK) {
                return false;
            }
        }
    }
    return true;
}

ct_state_dict *ct_module_state_dict(const ct_module *m)
{
    if (ct__null("ct_module_state_dict", m)) {
        return NULL;
    }
    ct_state_dict *sd = ct_state_dict_new();
    if (sd && !ct__walk(m, ct__state_visit, sd)) {
        ct_state_dict_free(sd);
        return NULL;
    }
    return sd;
}

/* A growable list of strings. */
typedef struct ct__strs {
    char **items;
    int64_t len, cap;
    bool oom;
} ct__strs;

static void ct__strs_add(ct__strs *l, const char *s)
{
    if (l->oom) {
        return;
    }
    if (l->len == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 8;
        char **items = (char **)ct__realloc(l->items, sizeof(char *) * (size_t)cap);
        if (!items) {
            l->oom = true;
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    size_t n = strlen(s) + 1;
    char *copy = (char *)ct__malloc(n);
    if (!copy) {
        l->oom = true;
        return;
    }
    memcpy(copy, s, n);
    l->items[l->len++] = copy;
}

static void ct__strs_free(ct__strs *l)
{
    for (int64_t i = 0; i < l->len; i++) {
        ct__free(l->items[i]);
    }
    ct__free(l->items);
}

typedef struct ct__load_ctx {
    const ct_state_dict *sd;
    ct__strs missing, unexpected, errors;
} ct__load_ctx;

/* "torch.Size([3, 4])" */
static const char *ct__torch_size(const ct_tensor *t, char *buf, size_t n)
{
    char shape[200];
    snprintf(buf, n, "torch.Size(%s)", ct__shape_str(t->sizes, t->ndim, shape, sizeof shape));
    return buf;
}

/* param.copy_(value) without autograd, as _load_from_state_dict; an error message otherwise. */
static void ct__load_one(ct__load_ctx *c, const char *key, ct_tensor *param)
{
    char msg[2 * CT__MODULE_PATH_MAX + 1024], a[240], b[240];
    ct_state_kind kind = ct_state_dict_kind(c->sd, key);
    if (kind != CT_STATE_TENSOR) {
        const char *type = kind == CT_STATE_INT ? "int" : kind == CT_STATE_DOUBLE ? "float" : "str";
        snprintf(msg, sizeof msg, "While copying the parameter named \"%s\", expected "
                 "torch.Tensor or Tensor-like object from checkpoint but received <class '%s'>",
                 key, type);
        ct__strs_add(&c->errors, msg);
        return;
    }
    const ct_tensor *v = ct_state_dict_get(c->sd, key);
    bool legacy = param->ndim == 0 && v->ndim == 1 && v->sizes[0] == 1; /* 0.3 checkpoints */
    if (!legacy && (v->ndim != param->ndim ||
                    memcmp(v->sizes, param->sizes, sizeof(int64_t) * (size_t)v->ndim) != 0)) {
        snprintf(msg, sizeof msg, "size mismatch for %s: copying a param with shape %s from "
                 "checkpoint, the shape in current model is %s.", key,
                 ct__torch_size(v, a, sizeof a), ct__torch_size(param, b, sizeof b));
        ct__strs_add(&c->errors, msg);
        return;
    }
    bool clean = ct_error_code() == CT_OK;
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *src = legacy ? ct_reshape(v, NULL, 0) : (ct_tensor *)(uintptr_t)v;
    ct_copy_(param, src);
    ct_no_grad_end();
    ct_scope_end();
    if (clean && ct_error_code() != CT_OK) {
        snprintf(msg, sizeof msg, "While copying the parameter named \"%s\", whose dimensions "
                 "in the model are %s and whose dimensions in the checkpoint are %s, an "
                 "exception occurred : ('%s',).", key, ct__torch_size(param, a, sizeof a),
                 ct__torch_size(v, b, sizeof b), ct_error());
        ct_error_clear();
        ct__strs_add(&c->errors, msg);
    }
}

/* Whether a state_dict key's rest (after m's prefix) belongs to m: "a.b" when a is a child,
   "a" when it is a parameter or persistent buffer of m (_load_from_state_dict's rule). */
static bool ct__load_known(const ct_module *m, const char *rest)
{
    const char *dot = strchr(rest, '.');
    if (dot) {
        return ct__named_find(&m->children, rest, (size_t)(dot - rest)) != NULL;
    }
    if (ct__named_find(&m->params, rest, strlen(rest))) {
        return true;
    }
    const ct__named *b = ct__named_find(&m->buffers, rest, strlen(rest));
    return b && b->persistent;
}

static bool ct__load_visit(const ct_module *m, const char *path, void *ctx)
{
    ct__load_ctx *c = (ct__load_ctx *)ctx;
    const ct__named_list *lists[2] = {&m->params, &m->buffers};
    char key[CT__MODULE_PATH_MAX + 32];
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; i < lists[k]->len; i++) {
            const ct__named *e = &lists[k]->items[i];
            if (!e->persistent) {
                continue;
            }
            snprintf(key, sizeof key, "%s%s", path, e->name);
            if (ct_state_dict_contains(c->sd, key)) {
                ct__load_one(c, key, e->tensor);
            } else {
                ct__strs_add(&c->missing, key);
            }
        }
    }
    size_t plen = strlen(path);
    for (int64_t i = 0; i < ct_state_dict_len(c->sd); i++) {
        const char *k = ct_state_dict_key(c->sd, i);
        if (strncmp(k, path, plen) == 0 && !ct__load_known(m, k + plen)) {
            ct__strs_add(&c->unexpected, k);
        }
    }
    return true;
}

/* Appends "label: "a", "b". " to the message. */
static void ct__load_list_msg(char *msg, size_t cap, const char *label, const ct__strs *l)
{
    size_t n = strlen(msg);
    snprintf(msg + n, cap - n, "\n\t%s: ", label);
    for (int64_t i = 0; i < l->len; i++) {
        n = strlen(msg);
        snprintf(msg + n, cap - n, "%s\"%s\"", i ? ", " : "", l->items[i]);
    }
    n = strlen(msg);
    snprintf(msg + n, cap - n, ". ");
}

void ct_incompatible_keys_free(ct_incompatible_keys *keys)
{
    if (!keys) {
        return;
    }
    ct__strs a = {keys->missing_keys, keys->n_missing, keys->n_missing, false};
    ct__strs b = {keys->unexpected_keys, keys->n_unexpected, keys->n_unexpected, false};
    ct__strs_free(&a);
    ct__strs_free(&b);
    memset(keys, 0, sizeof *keys);
}

ct_status ct_module_load_state_dict(ct_module *m, const ct_state_dict *sd, bool strict,
                                    ct_incompatible_keys *keys)
{
    const char *op = "ct_module_load_state_dict";
    if (ct__null(op, m) || ct__null(op, sd)) {
        return ct_error_code();
    }
    ct__load_ctx c;
    memset(&c, 0, sizeof c);
    c.sd = sd;
    bool walked = ct__walk(m, ct__load_visit, &c);
    ct_status st = walked ? CT_OK : ct_error_code();
    if (walked && (c.missing.oom || c.unexpected.oom || c.errors.oom)) {
        st = ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    bool listed = strict && (c.missing.len || c.unexpected.len);
    if (st == CT_OK && (listed || c.errors.len)) {
        char msg[4096];
        snprintf(msg, sizeof msg, "Error(s) in loading state_dict for %s:", m->name);
        if (strict && c.missing.len) {
            ct__load_list_msg(msg, sizeof msg, "Missing key(s) in state_dict", &c.missing);
        }
        if (strict && c.unexpected.len) {
            ct__load_list_msg(msg, sizeof msg, "Unexpected key(s) in state_dict", &c.unexpected);
        }
        for (int64_t i = 0; i < c.errors.len; i++) {
            size_t n = strlen(msg);
            snprintf(msg + n, sizeof msg - n, "\n\t%s", c.errors.items[i]);
        }
        /* "...:\n\t" + the messages joined by "\n\t", as PyTorch's */
        st = ct__fail(CT_ERR_VALUE, op, "%s", msg);
    }
    ct__strs_free(&c.errors);
    if (keys) {
        keys->missing_keys = c.missing.items;
        keys->n_missing = c.missing.len;
        keys->unexpected_keys = c.unexpected.items;
        keys->n_unexpected = c.unexpected.len;
    } else {
        ct__strs_free(&c.missing);
        ct__strs_free(&c.unexpected);
    }
    return st;
}

/* ---- layers ------------------------------------------------------------------------- */
static ct_tensor *ct__linear_forward(ct_module *m, const ct_tensor *x)
{
    return ct_linear(x, ct_module_get_parameter(m, "weight"), ct_module_get_parameter(m, "bias"));
}

ct_tensor *ct_linear_forward(ct_module *m, const ct_tensor *input)
{
    const char *op = "ct_linear_forward";
    if (ct__null(op, m) || ct__null(op, input)) {
        return NULL;
    }
    if (m->forward != ct__linear_forward) {
        ct__fail(CT_ERR_VALUE, op, "expected a Linear module, got %s", m->name);
        return NULL;
    }
    return ct__linear_forward(m, input);
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
        if (next && c->forward == ct__linear_forward && next->forward == ct__relu_forward &&
            !c->n_hooks && !next->n_hooks) {
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
    return ct__append_child("ct_sequential_append", seq, child);
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

#undef CT__MODULE_PATH_MAX
CT__GLUE_END
