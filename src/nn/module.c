/* nn/module.c - the module object and the built-in layers. */
#include "../core/internal.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"
#include "../ops/linalg.h"
#include "../autograd/autograd.h"
#include "init.h"
#include "module.h"

#include <stdio.h>

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
