/* tests/test_arena.c - the fixed arena (core/arena.c): alignment, first-fit reuse and joining
 * of free blocks, exhaustion, realloc, and the planning call's exact byte count. Its use as
 * ctorch's allocator (hooks, no call after start-up) is tested by make test-embedded. */
#include "test.h"

#include <stdint.h>

/* 16-byte aligned storage for the arenas. */
typedef struct arena_buf {
    _Alignas(16) unsigned char bytes[4096];
} arena_buf;

static bool arena_aligned(const void *p) { return ((uintptr_t)p & 15) == 0; }

static void test_arena_new_checks_size(void)
{
    static arena_buf buf;
    CHECK(ct_arena_new(buf.bytes, 8) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "cannot hold the arena's");
    ct_arena *a = ct_arena_new(buf.bytes, sizeof buf.bytes);
    CHECK(a != NULL);
    size_t head = ct_arena_used(a);
    CHECK(head > 0 && head % 16 == 0 && ct_arena_peak(a) == head);
    /* a buffer of exactly the bookkeeping holds no block */
    ct_arena *b = ct_arena_new(buf.bytes, head);
    CHECK(b != NULL && ct_arena_malloc(b, 1) == NULL && !ct_error());
}

static void test_arena_blocks_aligned_and_exhaust(void)
{
    static arena_buf buf;
    ct_arena *a = ct_arena_new(buf.bytes, sizeof buf.bytes);
    size_t head = ct_arena_used(a);
    unsigned char *p = (unsigned char *)ct_arena_malloc(a, 1);
    unsigned char *q = (unsigned char *)ct_arena_malloc(a, 17);
    CHECK(p && q && arena_aligned(p) && arena_aligned(q));
    CHECK(q == p + 32); /* 16 bytes of payload and a 16-byte header */
    CHECK(ct_arena_used(a) == head + 32 + 48);
    CHECK(q + 32 <= buf.bytes + sizeof buf.bytes);
    size_t left = sizeof buf.bytes - ct_arena_used(a);
    CHECK(ct_arena_malloc(a, left - 15) == NULL);          /* the header does not fit */
    unsigned char *r = (unsigned char *)ct_arena_malloc(a, left - 16); /* exactly full */
    CHECK(r != NULL && ct_arena_used(a) == sizeof buf.bytes);
    CHECK(ct_arena_malloc(a, 0) == NULL && !ct_error());
}

static void test_arena_reuses_and_joins_free_blocks(void)
{
    static arena_buf buf;
    ct_arena *a = ct_arena_new(buf.bytes, sizeof buf.bytes);
    size_t head = ct_arena_used(a);
    unsigned char *x = (unsigned char *)ct_arena_malloc(a, 64); /* blocks of 80 bytes */
    unsigned char *y = (unsigned char *)ct_arena_malloc(a, 64);
    unsigned char *z = (unsigned char *)ct_arena_malloc(a, 64);
    CHECK(y == x + 80 && z == y + 80 && ct_arena_used(a) == head + 240);
    ct_arena_free(a, y); /* a hole: top stays */
    CHECK(ct_arena_used(a) == head + 240);
    CHECK(ct_arena_malloc(a, 32) == y); /* first fit, split: 32 bytes stay free after it */
    CHECK(ct_arena_malloc(a, 16) == y + 48);
    ct_arena_free(a, y + 48);
    ct_arena_free(a, y); /* joined with the rest: y's 80 bytes again */
    ct_arena_free(a, x); /* joined with y: 160 bytes */
    CHECK(ct_arena_malloc(a, 145) != x); /* needs 176: from top */
    CHECK(ct_arena_used(a) == head + 240 + 176);
    CHECK(ct_arena_malloc(a, 144) == x);
    ct_arena_free(a, x);
    ct_arena_free(a, z + 80); /* the last block: back to top */
    CHECK(ct_arena_used(a) == head + 240);
    ct_arena_free(a, z); /* joined with x's 160 at the end: everything back to top */
    CHECK(ct_arena_used(a) == head);
    CHECK(ct_arena_peak(a) == head + 240 + 176);
    CHECK(ct_arena_malloc(a, 1) == x);
}

static void test_arena_realloc_keeps_data(void)
{
    static arena_buf buf;
    ct_arena *a = ct_arena_new(buf.bytes, sizeof buf.bytes);
    unsigned char *p = (unsigned char *)ct_arena_realloc(a, NULL, 10);
    CHECK(p != NULL);
    memcpy(p, "0123456789", 10);
    CHECK(ct_arena_realloc(a, p, 16) == p); /* fits its block */
    unsigned char *q = (unsigned char *)ct_arena_realloc(a, p, 100);
    CHECK(q != NULL && q != p && memcmp(q, "0123456789", 10) == 0);
    CHECK(ct_arena_realloc(a, q, sizeof buf.bytes) == NULL && memcmp(q, "0123", 4) == 0);
}

/* A step that allocates and frees like a forward: a few blocks, some kept across the step. */
typedef struct arena_step {
    ct_arena *arena;
    void *kept;   /* allocated on the first run only (start-up state) */
    int leak;     /* 1: every run keeps one more block */
    bool failed;  /* an allocation failed */
} arena_step;

static void arena_step_run(void *user)
{
    arena_step *s = (arena_step *)user;
    if (!s->kept) {
        s->kept = ct_arena_malloc(s->arena, 200);
    }
    void *a = ct_arena_malloc(s->arena, 300), *b = ct_arena_malloc(s->arena, 40);
    void *c = ct_arena_malloc(s->arena, 500);
    s->failed |= !a || !b || !c || !s->kept;
    ct_arena_free(s->arena, b);
    ct_arena_free(s->arena, a);
    void *d = ct_arena_malloc(s->arena, 320);
    s->failed |= !d;
    ct_arena_free(s->arena, c);
    if (!s->leak) {
        ct_arena_free(s->arena, d);
    }
}

static void test_arena_plan_is_exact(void)
{
    static arena_buf big, small;
    arena_step s = {ct_arena_new(big.bytes, sizeof big.bytes), NULL, 0, false};
    size_t need = ct_arena_plan(s.arena, arena_step_run, &s);
    CHECK(need > 0 && need < sizeof big.bytes && !s.failed && !ct_error());
    /* the same start-up and steps in exactly that many bytes: every allocation fits */
    arena_step t = {ct_arena_new(small.bytes, need), NULL, 0, false};
    for (int k = 0; k < 5; k++) {
        arena_step_run(&t);
    }
    CHECK(!t.failed && ct_arena_peak(t.arena) == need);
    /* 16 bytes fewer: an allocation fails */
    arena_step u = {ct_arena_new(small.bytes, need - 16), NULL, 0, false};
    arena_step_run(&u);
    CHECK(u.failed);
}

static void test_arena_plan_rejects_growing_step(void)
{
    static arena_buf big;
    arena_step s = {ct_arena_new(big.bytes, sizeof big.bytes), NULL, 1, false};
    CHECK(ct_arena_plan(s.arena, arena_step_run, &s) == 0);
    CHECK_ERROR(CT_ERR_STATE, "the step needed more arena on its second run");
}

void test_arena(void)
{
    RUN(test_arena_new_checks_size);
    RUN(test_arena_blocks_aligned_and_exhaust);
    RUN(test_arena_reuses_and_joins_free_blocks);
    RUN(test_arena_realloc_keeps_data);
    RUN(test_arena_plan_is_exact);
    RUN(test_arena_plan_rejects_growing_step);
}
