/* core/debug.c - CTORCH_DEBUG: the registry of tensor handles and the leak report.
 *
 * The registry is an open-addressing hash set (linear probing, backward-shift deletion)
 * keyed by the tensor struct's address: live tensors with the op that made them and
 * whether the caller owns them, and freed ones while their block sits in the allocator's
 * quarantine (core/alloc.c calls ct__debug_forget when a block leaves it). Its table comes
 * straight from the allocator hooks, so ct_memory_allocated() is the same in both builds.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

CT__GLUE_BEGIN

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
CT__GLUE_END
