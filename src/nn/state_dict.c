/* nn/state_dict.c - the ordered name -> value map of state_dicts and checkpoints. */
#include "../core/internal.h"
#include "state_dict.h"

#include <errno.h>
#include <stdio.h>

CT__GLUE_BEGIN

typedef struct ct__state_entry {
    char *key;
    ct_state_kind kind;
    ct_tensor *tensor; /* CT_STATE_TENSOR: a reference */
    int64_t i;         /* CT_STATE_INT */
    double d;          /* CT_STATE_DOUBLE */
    char *s;           /* CT_STATE_STRING: owned */
} ct__state_entry;

struct ct_state_dict {
    ct__state_entry *items;
    int64_t len, cap;
};

/* A heap copy of s, or NULL + CT_ERR_OOM. */
static CT__UNUSED char *ct__state_strdup(const char *op, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = (char *)ct__malloc(n);
    if (!p) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    memcpy(p, s, n);
    return p;
}

ct_state_dict *ct_state_dict_new(void)
{
    ct_state_dict *sd = (ct_state_dict *)ct__calloc(sizeof(ct_state_dict));
    if (!sd) {
        ct__fail(CT_ERR_OOM, "ct_state_dict_new", "out of memory");
    }
    return sd;
}

static CT__UNUSED void ct__state_clear_value(ct__state_entry *e)
{
    ct__release(e->tensor);
    ct__free(e->s);
    e->tensor = NULL;
    e->s = NULL;
}

void ct_state_dict_free(ct_state_dict *sd)
{
    if (!sd) {
        return;
    }
    for (int64_t i = 0; i < sd->len; i++) {
        ct__state_clear_value(&sd->items[i]);
        ct__free(sd->items[i].key);
    }
    ct__free(sd->items);
    ct__free(sd);
}

static CT__UNUSED int64_t ct__state_find(const ct_state_dict *sd, const char *key)
{
    for (int64_t i = 0; i < sd->len; i++) {
        if (strcmp(sd->items[i].key, key) == 0) {
            return i;
        }
    }
    return -1;
}

/* The entry for key (existing, its old value released, or appended); NULL on error. */
static CT__UNUSED ct__state_entry *ct__state_slot(const char *op, ct_state_dict *sd,
                                                  const char *key)
{
    if (ct__null(op, sd) || ct__null(op, key)) {
        return NULL;
    }
    if (!key[0]) {
        ct__fail(CT_ERR_VALUE, op, "keys must not be empty");
        return NULL;
    }
    int64_t k = ct__state_find(sd, key);
    if (k >= 0) {
        ct__state_clear_value(&sd->items[k]);
        return &sd->items[k];
    }
    if (sd->len == sd->cap) {
        int64_t cap = sd->cap ? sd->cap * 2 : 16;
        ct__state_entry *items =
            (ct__state_entry *)ct__realloc(sd->items, sizeof(ct__state_entry) * (size_t)cap);
        if (!items) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return NULL;
        }
        sd->items = items;
        sd->cap = cap;
    }
    char *copy = ct__state_strdup(op, key);
    if (!copy) {
        return NULL;
    }
    ct__state_entry *e = &sd->items[sd->len++];
    memset(e, 0, sizeof *e);
    e->key = copy;
    return e;
}

ct_status ct_state_dict_set(ct_state_dict *sd, const char *key, ct_tensor *tensor)
{
    const char *op = "ct_state_dict_set";
    if (ct__null(op, tensor)) {
        return ct_error_code();
    }
    ct_tensor *ref = ct_retain(tensor); /* first: tensor may be the value it replaces */
    ct__state_entry *e = ct__state_slot(op, sd, key);
    if (!e) {
        ct__release(ref);
        return ct_error_code();
    }
    e->kind = CT_STATE_TENSOR;
    e->tensor = ref;
    return CT_OK;
}

ct_status ct_state_dict_set_int(ct_state_dict *sd, const char *key, int64_t value)
{
    ct__state_entry *e = ct__state_slot("ct_state_dict_set_int", sd, key);
    if (!e) {
        return ct_error_code();
    }
    e->kind = CT_STATE_INT;
    e->i = value;
    return CT_OK;
}

ct_status ct_state_dict_set_double(ct_state_dict *sd, const char *key, double value)
{
    ct__state_entry *e = ct__state_slot("ct_state_dict_set_double", sd, key);
    if (!e) {
        return ct_error_code();
    }
    e->kind = CT_STATE_DOUBLE;
    e->d = value;
    return CT_OK;
}

ct_status ct_state_dict_set_string(ct_state_dict *sd, const char *key, const char *value)
{
    const char *op = "ct_state_dict_set_string";
    if (ct__null(op, value)) {
        return ct_error_code();
    }
    char *copy = ct__state_strdup(op, value);
    ct__state_entry *e = copy ? ct__state_slot(op, sd, key) : NULL;
    if (!e) {
        ct__free(copy);
        return ct_error_code();
    }
    e->kind = CT_STATE_STRING;
    e->s = copy;
    return CT_OK;
}

/* The entry for key, or NULL (no error) when absent; NULL + error for NULL arguments. */
static CT__UNUSED const ct__state_entry *ct__state_lookup(const char *op, const ct_state_dict *sd,
                                                          const char *key)
{
    if (ct__null(op, sd) || ct__null(op, key)) {
        return NULL;
    }
    int64_t k = ct__state_find(sd, key);
    return k >= 0 ? &sd->items[k] : NULL;
}

ct_tensor *ct_state_dict_get(const ct_state_dict *sd, const char *key)
{
    const ct__state_entry *e = ct__state_lookup("ct_state_dict_get", sd, key);
    return e ? e->tensor : NULL;
}

bool ct_state_dict_get_int(const ct_state_dict *sd, const char *key, int64_t *value)
{
    const char *op = "ct_state_dict_get_int";
    if (ct__null(op, value)) {
        return false;
    }
    const ct__state_entry *e = ct__state_lookup(op, sd, key);
    if (e && e->kind == CT_STATE_INT) {
        *value = e->i;
        return true;
    }
    if (!e || e->kind != CT_STATE_STRING || !e->s[0]) {
        return false;
    }
    char *end;
    errno = 0;
    long long v = strtoll(e->s, &end, 10);
    if (*end || errno) {
        return false;
    }
    *value = (int64_t)v;
    return true;
}

bool ct_state_dict_get_double(const ct_state_dict *sd, const char *key, double *value)
{
    const char *op = "ct_state_dict_get_double";
    if (ct__null(op, value)) {
        return false;
    }
    const ct__state_entry *e = ct__state_lookup(op, sd, key);
    if (e && (e->kind == CT_STATE_DOUBLE || e->kind == CT_STATE_INT)) {
        *value = e->kind == CT_STATE_DOUBLE ? e->d : (double)e->i;
        return true;
    }
    if (!e || e->kind != CT_STATE_STRING || !e->s[0]) {
        return false;
    }
    char *end;
    double v = strtod(e->s, &end);
    if (*end) {
        return false;
    }
    *value = v;
    return true;
}

const char *ct_state_dict_get_string(const ct_state_dict *sd, const char *key)
{
    const ct__state_entry *e = ct__state_lookup("ct_state_dict_get_string", sd, key);
    return e ? e->s : NULL;
}

bool ct_state_dict_contains(const ct_state_dict *sd, const char *key)
{
    return ct__state_lookup("ct_state_dict_contains", sd, key) != NULL;
}

ct_state_kind ct_state_dict_kind(const ct_state_dict *sd, const char *key)
{
    const ct__state_entry *e = ct__state_lookup("ct_state_dict_kind", sd, key);
    return e ? e->kind : CT_STATE_NONE;
}

ct_status ct_state_dict_remove(ct_state_dict *sd, const char *key)
{
    const char *op = "ct_state_dict_remove";
    if (ct__null(op, sd) || ct__null(op, key)) {
        return ct_error_code();
    }
    int64_t k = ct__state_find(sd, key);
    if (k < 0) {
        return ct__fail(CT_ERR_INDEX, op, "KeyError: '%s'", key);
    }
    ct__state_clear_value(&sd->items[k]);
    ct__free(sd->items[k].key);
    memmove(&sd->items[k], &sd->items[k + 1], sizeof(ct__state_entry) * (size_t)(sd->len - k - 1));
    sd->len--;
    return CT_OK;
}

int64_t ct_state_dict_len(const ct_state_dict *sd)
{
    return ct__null("ct_state_dict_len", sd) ? 0 : sd->len;
}

const char *ct_state_dict_key(const ct_state_dict *sd, int64_t i)
{
    if (ct__null("ct_state_dict_key", sd)) {
        return NULL;
    }
    return i >= 0 && i < sd->len ? sd->items[i].key : NULL;
}

/* Sets sd[prefix + key] to a copy of e's value. */
static CT__UNUSED ct_status ct__state_copy(ct_state_dict *sd, const char *prefix, const char *key,
                                           const ct__state_entry *e)
{
    size_t np = strlen(prefix), nk = strlen(key);
    char *full = (char *)ct__malloc(np + nk + 1);
    if (!full) {
        return ct__fail(CT_ERR_OOM, "ct_state_dict_update", "out of memory");
    }
    memcpy(full, prefix, np);
    memcpy(full + np, key, nk + 1);
    ct_status st = e->kind == CT_STATE_TENSOR ? ct_state_dict_set(sd, full, e->tensor)
                 : e->kind == CT_STATE_INT    ? ct_state_dict_set_int(sd, full, e->i)
                 : e->kind == CT_STATE_DOUBLE ? ct_state_dict_set_double(sd, full, e->d)
                                              : ct_state_dict_set_string(sd, full, e->s);
    ct__free(full);
    return st;
}

ct_status ct_state_dict_update(ct_state_dict *sd, const ct_state_dict *other, const char *prefix)
{
    const char *op = "ct_state_dict_update";
    if (ct__null(op, sd) || ct__null(op, other)) {
        return ct_error_code();
    }
    int64_t n = other->len; /* other may be sd itself: only its entries so far */
    for (int64_t i = 0; i < n; i++) {
        ct__state_entry e = other->items[i]; /* a copy: sd's array may move */
        ct_status st = ct__state_copy(sd, prefix ? prefix : "", e.key, &e);
        if (st != CT_OK) {
            return st;
        }
    }
    return CT_OK;
}

ct_state_dict *ct_state_dict_select(const ct_state_dict *sd, const char *prefix)
{
    const char *op = "ct_state_dict_select";
    if (ct__null(op, sd) || ct__null(op, prefix)) {
        return NULL;
    }
    ct_state_dict *out = ct_state_dict_new();
    size_t np = strlen(prefix);
    for (int64_t i = 0; out && i < sd->len; i++) {
        const ct__state_entry *e = &sd->items[i];
        if (strncmp(e->key, prefix, np) == 0 && e->key[np] &&
            ct__state_copy(out, "", e->key + np, e) != CT_OK) {
            ct_state_dict_free(out);
            out = NULL;
        }
    }
    return out;
}
CT__GLUE_END
