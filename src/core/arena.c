/* core/arena.c - the fixed arena: first-fit over one caller-owned buffer.
 *
 * Layout: [struct ct_arena, rounded to 16][blocks ... | top | unused]. A block is a 16-byte
 * header (its size, header included) and its payload. Space below top is live blocks and free
 * ones; free blocks form a list in address order, each joined with free neighbours, and a
 * free block that ends at top gives its space back to top. A request takes the first free
 * block that fits (split when the rest can hold a block), else space at top.
 */
#include "internal.h"

#include <string.h>

CT__GLUE_BEGIN

#define CT__ARENA_ALIGN ((size_t)16)

typedef struct ct__arena_block {
    size_t size;                  /* bytes, header included; a multiple of 16 */
    struct ct__arena_block *next; /* the next free block (free blocks only) */
} ct__arena_block;

struct ct_arena {
    unsigned char *base;   /* the first block, 16-byte aligned */
    size_t head;           /* bytes of the buffer before base (bookkeeping, alignment) */
    size_t capacity;       /* bytes from base to the end of the buffer */
    size_t top;            /* bytes from base in blocks, live or free */
    size_t peak;           /* the highest top */
    ct__arena_block *free; /* free blocks below top, in address order */
    ct__mutex lock;
};

/* The header must keep payloads 16-byte aligned. */
typedef char ct__arena_header_fits[sizeof(ct__arena_block) <= CT__ARENA_ALIGN ? 1 : -1];

static size_t ct__arena_round(size_t n)
{
    return (n + CT__ARENA_ALIGN - 1) & ~(CT__ARENA_ALIGN - 1);
}

ct_arena *ct_arena_new(void *buffer, size_t bytes)
{
    if (ct__null_any("ct_arena_new", buffer)) {
        return NULL;
    }
    uintptr_t start = (uintptr_t)buffer;
    uintptr_t aligned = (start + CT__ARENA_ALIGN - 1) & ~(uintptr_t)(CT__ARENA_ALIGN - 1);
    size_t head = (size_t)(aligned - start) + ct__arena_round(sizeof(ct_arena));
    if (bytes < head) {
        ct__fail(CT_ERR_VALUE, "ct_arena_new",
                 "a buffer of %zu bytes cannot hold the arena's %zu bytes of bookkeeping", bytes,
                 head);
        return NULL;
    }
    ct_arena *a = (ct_arena *)aligned;
    memset(a, 0, sizeof *a);
    a->base = (unsigned char *)buffer + head;
    a->head = head;
    a->capacity = bytes - head;
    return a;
}

/* Takes size bytes (a multiple of 16) from the first free block that fits, or from top;
   NULL when neither has room. The lock is held. */
static ct__arena_block *ct__arena_take(ct_arena *a, size_t size)
{
    for (ct__arena_block **link = &a->free; *link; link = &(*link)->next) {
        ct__arena_block *b = *link;
        if (b->size < size) {
            continue;
        }
        if (b->size - size >= 2 * CT__ARENA_ALIGN) { /* split: the rest stays free */
            ct__arena_block *rest = (ct__arena_block *)((unsigned char *)b + size);
            rest->size = b->size - size;
            rest->next = b->next;
            *link = rest;
            b->size = size;
        } else {
            *link = b->next;
        }
        return b;
    }
    if (a->capacity - a->top < size) {
        return NULL;
    }
    ct__arena_block *b = (ct__arena_block *)(a->base + a->top);
    b->size = size;
    a->top += size;
    if (a->top > a->peak) {
        a->peak = a->top;
    }
    return b;
}

/* Puts b on the free list in address order, joined with free neighbours; a free block at
   the end goes back to top. The lock is held. */
static void ct__arena_give(ct_arena *a, ct__arena_block *b)
{
    ct__arena_block *prev = NULL, *next = a->free;
    while (next && next < b) {
        prev = next;
        next = next->next;
    }
    if (next && (unsigned char *)b + b->size == (unsigned char *)next) {
        b->size += next->size;
        next = next->next;
    }
    b->next = next;
    if (prev && (unsigned char *)prev + prev->size == (unsigned char *)b) {
        prev->size += b->size;
        prev->next = next;
        b = prev;
    } else if (prev) {
        prev->next = b;
    } else {
        a->free = b;
    }
    if ((unsigned char *)b + b->size == a->base + a->top) { /* the last block: back to top */
        a->top -= b->size;
        if (prev == b) {
            prev = NULL; /* b was joined into prev: find the block before it */
            for (ct__arena_block *f = a->free; f != b; f = f->next) {
                prev = f;
            }
        }
        if (prev) {
            prev->next = NULL;
        } else {
            a->free = NULL;
        }
    }
}

void *ct_arena_malloc(void *ctx, size_t n)
{
    ct_arena *a = (ct_arena *)ctx;
    if (!a || n > SIZE_MAX - 2 * CT__ARENA_ALIGN) {
        return NULL;
    }
    size_t size = ct__arena_round(n ? n : 1) + CT__ARENA_ALIGN;
    ct__mutex_lock(&a->lock);
    ct__arena_block *b = ct__arena_take(a, size);
    ct__mutex_unlock(&a->lock);
    return b ? (unsigned char *)b + CT__ARENA_ALIGN : NULL;
}

void ct_arena_free(void *ctx, void *p)
{
    ct_arena *a = (ct_arena *)ctx;
    if (!a || !p) {
        return;
    }
    ct__mutex_lock(&a->lock);
    ct__arena_give(a, (ct__arena_block *)((unsigned char *)p - CT__ARENA_ALIGN));
    ct__mutex_unlock(&a->lock);
}

void *ct_arena_realloc(void *ctx, void *p, size_t n)
{
    if (!p) {
        return ct_arena_malloc(ctx, n);
    }
    size_t have = ((ct__arena_block *)((unsigned char *)p - CT__ARENA_ALIGN))->size;
    if (n <= have - CT__ARENA_ALIGN) {
        return p;
    }
    void *q = ct_arena_malloc(ctx, n);
    if (q) {
        memcpy(q, p, have - CT__ARENA_ALIGN);
        ct_arena_free(ctx, p);
    }
    return q;
}

size_t ct_arena_used(const ct_arena *arena)
{
    return ct__null_any("ct_arena_used", (const void *)arena) ? 0 : arena->head + arena->top;
}

size_t ct_arena_peak(const ct_arena *arena)
{
    return ct__null_any("ct_arena_peak", (const void *)arena) ? 0 : arena->head + arena->peak;
}

size_t ct_arena_plan(ct_arena *arena, void (*step)(void *user), void *user)
{
    if (ct__null_any("ct_arena_plan", (const void *)arena)) {
        return 0;
    }
    if (!step) {
        ct__fail(CT_ERR_NULL_ARG, "ct_arena_plan", "step is NULL");
        return 0;
    }
    step(user);
    size_t peak = arena->peak;
    step(user);
    if (ct_error()) {
        return 0;
    }
    if (arena->peak != peak) {
        ct__fail(CT_ERR_STATE, "ct_arena_plan", "the step needed more arena on its second run "
                                                "(%zu bytes at most, then %zu)",
                 peak + arena->head, arena->peak + arena->head);
        return 0;
    }
    return ct_arena_peak(arena);
}

#undef CT__ARENA_ALIGN

CT__GLUE_END
