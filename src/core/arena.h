/* core/arena.h - a fixed arena: every allocation from one buffer the caller owns.
 *
 * An embedded build allocates its memory once at start-up: it lays an arena over a static
 * buffer and routes ctorch's allocator hooks to it, in the implementation TU:
 *     #define CTORCH_MALLOC(ctx, n) ct_arena_malloc(ctx, n)
 *     #define CTORCH_REALLOC(ctx, p, n) ct_arena_realloc(ctx, p, n)
 *     #define CTORCH_FREE(ctx, p) ct_arena_free(ctx, p)
 *     ...
 *     ct_set_alloc_context(ct_arena_new(buffer, sizeof buffer));
 * ctorch's allocator caches freed blocks by size class, so once a forward (or a training
 * step) has run, running it again takes every block from the cache and calls no hook:
 * ct_arena_plan runs a step twice and reports the exact bytes of buffer it needs. The cache
 * is off under CTORCH_DEBUG and AddressSanitizer (every block goes back to the hooks); the
 * arena then reuses freed space first-fit and the plan may not hold.
 *
 * Blocks are 16-byte aligned, each with a 16-byte header; freed blocks join their free
 * neighbours. Thread safety: one arena may serve every thread (a lock). There is no
 * PyTorch counterpart (PyTorch's CPU allocator is malloc); the statistics mirror
 * torch.cuda.max_memory_reserved.
 */

typedef struct ct_arena ct_arena;

/* Lays an arena over buffer[0, bytes): its bookkeeping lives at the start of buffer, nothing
   is allocated. buffer should be 16-byte aligned (otherwise up to 15 bytes are lost).
   Returns the arena (inside buffer; dropping it needs no call), or NULL: CT_ERR_NULL_ARG for
   a NULL buffer, CT_ERR_VALUE when bytes cannot hold the bookkeeping. */
CTORCH_API ct_arena *ct_arena_new(void *buffer, size_t bytes);
/* n bytes, 16-byte aligned, from the arena given as ctx (a ct_arena *, the form of the
   CTORCH_MALLOC hook); NULL when no free space fits, or for a NULL ctx (no error recorded:
   ctorch's caller records CT_ERR_OOM). Mirrors: malloc. */
CTORCH_API void *ct_arena_malloc(void *ctx, size_t n);
/* Resizes p (from ct_arena_malloc of the same arena, or NULL) to n bytes, in place when it
   fits, else by moving it; NULL (p untouched) when nothing fits. Mirrors: realloc. */
CTORCH_API void *ct_arena_realloc(void *ctx, void *p, size_t n);
/* Returns p (from ct_arena_malloc of the same arena, or NULL: a no-op) to the arena.
   Mirrors: free. */
CTORCH_API void ct_arena_free(void *ctx, void *p);
/* Bytes of the buffer in use now (bookkeeping, live blocks and free holes below the top). */
CTORCH_API size_t ct_arena_used(const ct_arena *arena);
/* The most bytes of the buffer ever in use: the size an arena needs for the same sequence of
   allocations (with a 16-byte aligned buffer). Mirrors: torch.cuda.max_memory_reserved. */
CTORCH_API size_t ct_arena_peak(const ct_arena *arena);
/* The planning call: runs step(user) twice with arena serving ctorch's allocations (the
   arena must be the allocator context, ct_set_alloc_context) and returns ct_arena_peak: the
   exact buffer bytes a program that sets up what it has set up so far and then runs step
   any number of times needs. Returns 0 with CT_ERR_NULL_ARG for a NULL arena or step,
   0 with the step's own error when it failed, and 0 with CT_ERR_STATE ("the step needed
   more arena on its second run") when the second run did not take all its memory from
   ctorch's cache (CTORCH_DEBUG, AddressSanitizer, or a step whose allocations grow). */
CTORCH_API size_t ct_arena_plan(ct_arena *arena, void (*step)(void *user), void *user);
