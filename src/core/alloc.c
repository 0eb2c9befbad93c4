/* core/alloc.c - aligned, size-class cached allocation through the user's hooks.
 *
 * Block layout: [header (64 bytes): raw pointer, class, requested size][payload...]; the
 * payload is 64-byte aligned. Size classes are 4 per power of two (at most 25% waste), from
 * 16 bytes; blocks above 1.25 GiB are never cached. The cache is bounded by CT__CACHE_LIMIT bytes.
 *
 * Under CTORCH_DEBUG nothing is cached: a freed block is poisoned (every bit set: NaN in
 * float32 and float64, -1 in integers) and waits in a FIFO quarantine of at most
 * CT__QUARANTINE_LIMIT bytes before going back to CTORCH_FREE, so stale pointers read
 * poison and freed tensor handles stay recognizable (core/debug.c) until then.
 */
#include "internal.h"

#include <string.h>

/* Under AddressSanitizer freed blocks go straight back, so use-after-free is reported. */
#if defined(__SANITIZE_ADDRESS__)
#define CT__NO_CACHE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT__NO_CACHE 1
#endif
#endif

#ifdef CTORCH_DEBUG
#define CT__NO_CACHE 1
#define CT__QUARANTINE_LIMIT ((size_t)256 << 20)
#endif

#define CT__ALIGN 64
#define CT__NCLASS 160
#define CT__CACHE_LIMIT ((size_t)2 << 30)

typedef struct ct__block {
    void *raw;              /* what CTORCH_MALLOC returned */
    size_t bytes;           /* payload capacity of the class */
    int cls;                /* size class, or -1 when not cacheable */
    struct ct__block *next; /* free-list link while cached */
} ct__block;

static struct {
    void *ctx;
    ct__block *free_list[CT__NCLASS];
    size_t allocated, peak, cached;
#ifdef CTORCH_DEBUG
    ct__block *quarantine_head, *quarantine_tail; /* oldest first */
    size_t quarantined;
#endif
    ct__mutex lock;
} ct__alloc_state;

void ct_set_alloc_context(void *ctx) { ct__alloc_state.ctx = ctx; }

void *ct__alloc_context(void) { return ct__alloc_state.ctx; }

/* floor(log2(x)) for x >= 1. */
static int ct__alloc_log2(size_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll((unsigned long long)x);
#else
    int p = 0;
    while (x >>= 1) {
        p++;
    }
    return p;
#endif
}

/* Class k covers sizes up to (4 + k%4) << (k/4 + 2) bytes: 16, 20, 24, 28, 32, 40, ...,
   the last one 1.25 GiB; larger requests are not cached (-1, capacity = bytes). For bytes
   in (2^p, 2^(p+1)] the class is 4 (p - 4) + ceil(bytes / 2^(p-2)) - 4. */
static int ct__alloc_class(size_t bytes, size_t *cap)
{
    if (bytes <= 16) {
        *cap = 16;
        return 0;
    }
    if (bytes > ((size_t)5 << 28)) {
        *cap = bytes;
        return -1;
    }
    int p = ct__alloc_log2(bytes - 1);
    size_t q = (size_t)1 << (p - 2);
    int k = 4 * (p - 4) + (int)((bytes + q - 1) / q) - 4;
    *cap = (size_t)(4 + k % 4) << (k / 4 + 2);
    return k;
}

static ct__block *ct__alloc_header(void *payload)
{
    return (ct__block *)((char *)payload - CT__ALIGN);
}

/* Counts b as allocated (the lock held). */
static void ct__alloc_count(const ct__block *b)
{
    ct__alloc_state.allocated += b->bytes;
    if (ct__alloc_state.allocated > ct__alloc_state.peak) {
        ct__alloc_state.peak = ct__alloc_state.allocated;
    }
}

void *ct__malloc(size_t bytes)
{
    size_t cap = 0;
    int cls = ct__alloc_class(bytes ? bytes : 1, &cap);
    ct__block *b = NULL;
    ct__mutex_lock(&ct__alloc_state.lock);
    if (cls >= 0 && ct__alloc_state.free_list[cls]) { /* a cached block: one lock */
        b = ct__alloc_state.free_list[cls];
        ct__alloc_state.free_list[cls] = b->next;
        ct__alloc_state.cached -= b->bytes;
        ct__alloc_count(b);
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
    if (b) {
        b->next = NULL;
        return (char *)b + CT__ALIGN;
    }
    if (cap > SIZE_MAX - 2 * CT__ALIGN) {
        return NULL;
    }
    void *raw = CT__MALLOC_HOOK(ct__alloc_state.ctx, cap + 2 * CT__ALIGN);
    if (!raw) {
        return NULL;
    }
    uintptr_t p = ((uintptr_t)raw + 2 * CT__ALIGN - 1) & ~(uintptr_t)(CT__ALIGN - 1);
    b = (ct__block *)(p - CT__ALIGN);
    b->raw = raw;
    b->bytes = cap;
    b->cls = cls;
    b->next = NULL;
    ct__mutex_lock(&ct__alloc_state.lock);
    ct__alloc_count(b);
    ct__mutex_unlock(&ct__alloc_state.lock);
    return (char *)b + CT__ALIGN;
}

void *ct__calloc(size_t bytes)
{
    void *p = ct__malloc(bytes);
    if (p) {
        memset(p, 0, bytes);
    }
    return p;
}

#ifdef CTORCH_DEBUG
/* Poisons b and appends it to the quarantine; blocks pushed past the limit go back to
   CTORCH_FREE, oldest first, and the debug registry forgets them. */
static void ct__alloc_release(ct__block *b)
{
    memset((char *)b + CT__ALIGN, 0xFF, b->bytes);
    ct__mutex_lock(&ct__alloc_state.lock);
    b->next = NULL;
    if (ct__alloc_state.quarantine_tail) {
        ct__alloc_state.quarantine_tail->next = b;
    } else {
        ct__alloc_state.quarantine_head = b;
    }
    ct__alloc_state.quarantine_tail = b;
    ct__alloc_state.quarantined += b->bytes;
    while (ct__alloc_state.quarantined > CT__QUARANTINE_LIMIT) {
        ct__block *old = ct__alloc_state.quarantine_head;
        ct__alloc_state.quarantine_head = old->next;
        if (!old->next) {
            ct__alloc_state.quarantine_tail = NULL;
        }
        ct__alloc_state.quarantined -= old->bytes;
        ct__debug_forget((char *)old + CT__ALIGN);
        CT__FREE_HOOK(ct__alloc_state.ctx, old->raw);
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
}
#else
static void ct__alloc_release(ct__block *b)
{
    CT__FREE_HOOK(ct__alloc_state.ctx, b->raw);
}
#endif

void ct__free(void *p)
{
    if (!p) {
        return;
    }
    ct__block *b = ct__alloc_header(p);
    bool keep = false;
    ct__mutex_lock(&ct__alloc_state.lock);
    ct__alloc_state.allocated -= b->bytes;
#ifdef CT__NO_CACHE
    bool cacheable = false;
#else
    bool cacheable = b->cls >= 0 && ct__alloc_state.cached + b->bytes <= CT__CACHE_LIMIT;
#endif
    if (cacheable) {
        b->next = ct__alloc_state.free_list[b->cls];
        ct__alloc_state.free_list[b->cls] = b;
        ct__alloc_state.cached += b->bytes;
        keep = true;
    }
    ct__mutex_unlock(&ct__alloc_state.lock);
    if (!keep) {
        ct__alloc_release(b);
    }
}

void *ct__realloc(void *p, size_t bytes)
{
    if (!p) {
        return ct__malloc(bytes);
    }
    ct__block *b = ct__alloc_header(p);
    if (bytes <= b->bytes) {
        return p;
    }
    void *q = ct__malloc(bytes);
    if (!q) {
        return NULL;
    }
    memcpy(q, p, b->bytes);
    ct__free(p);
    return q;
}

size_t ct_memory_allocated(void) { return ct__alloc_state.allocated; }

size_t ct_memory_cached(void) { return ct__alloc_state.cached; }

size_t ct_max_memory_allocated(void) { return ct__alloc_state.peak; }

void ct_reset_peak_memory_stats(void) { ct__alloc_state.peak = ct__alloc_state.allocated; }

void ct_empty_cache(void)
{
    ct__mutex_lock(&ct__alloc_state.lock);
    for (int k = 0; k < CT__NCLASS; k++) {
        ct__block *b = ct__alloc_state.free_list[k];
        while (b) {
            ct__block *next = b->next;
            CT__FREE_HOOK(ct__alloc_state.ctx, b->raw);
            b = next;
        }
        ct__alloc_state.free_list[k] = NULL;
    }
    ct__alloc_state.cached = 0;
    ct__mutex_unlock(&ct__alloc_state.lock);
}

#undef CT__ALIGN
#undef CT__NCLASS
#undef CT__CACHE_LIMIT
#undef CT__NO_CACHE
#undef CT__QUARANTINE_LIMIT
