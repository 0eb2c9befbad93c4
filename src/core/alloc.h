/* core/alloc.h - the CPU allocator: 64-byte aligned blocks, cached by size class.
 *
 * Every allocation goes through CTORCH_MALLOC/REALLOC/FREE (see the configuration table).
 * Freed tensor memory is kept in a cache by size class so a training loop reuses blocks
 * instead of faulting in fresh pages each step; ct_empty_cache() returns them.
 */

/* Bytes currently allocated by ctorch and not yet freed (tensors, storages, modules,
   optimizer state, graph nodes); cached free blocks are not counted.
   Mirrors: torch.cuda.memory_allocated, for the CPU. */
CTORCH_API size_t ct_memory_allocated(void);
/* Bytes held in the cache of freed blocks. Mirrors: torch.cuda.memory_reserved minus
   memory_allocated. */
CTORCH_API size_t ct_memory_cached(void);
/* The highest ct_memory_allocated() value since start or the last reset. */
CTORCH_API size_t ct_max_memory_allocated(void);
/* Resets the peak to the current value. Mirrors: torch.cuda.reset_peak_memory_stats. */
CTORCH_API void ct_reset_peak_memory_stats(void);
/* Returns every cached block to CTORCH_FREE. Thread safety: safe from any thread.
   Mirrors: torch.cuda.empty_cache. */
CTORCH_API void ct_empty_cache(void);
/* Sets the context pointer passed to the CTORCH_MALLOC/REALLOC/FREE hooks (default NULL).
   Call before the first allocation. */
CTORCH_API void ct_set_alloc_context(void *ctx);
