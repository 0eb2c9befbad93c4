/* core/scope.c - per-thread stack of scopes, each an array of owned tensors. */
#include "internal.h"

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
