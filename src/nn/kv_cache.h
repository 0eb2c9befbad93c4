/* nn/kv_cache.h - a key/value cache for incremental (autoregressive) decoding.
 *
 * A decoder step attends to the keys and values of every earlier position; the cache keeps
 * them, so a step computes the projections of its new positions only. Per attention layer:
 * ct_kv_cache_update appends the new keys and values at positions size .. size + S - 1 and
 * returns the filled prefix, which goes to ct_scaled_dot_product_attention as key and value
 * (the first update of a prompt with is_causal; a step of one query position without a mask,
 * since it may attend every cached key). The stored values carry no autograd history: the
 * cache is for inference (under ct_no_grad_begin). Not thread-safe (one cache per sequence
 * batch being decoded).
 */
typedef struct ct_kv_cache ct_kv_cache;

/* A new empty cache for batch_size sequences of up to max_seq_len positions: key and value
   buffers (batch_size, num_kv_heads, max_seq_len, head_dim) of dtype (floating point),
   zero-filled. Returns: a new cache owned by the caller (ct_kv_cache_free), or NULL.
   Errors: CT_ERR_VALUE for a size < 1; CT_ERR_DTYPE for a non-floating dtype; CT_ERR_OOM.
   Mirrors: torchtune.modules.KVCache(batch_size, max_seq_len, num_kv_heads, head_dim, dtype). */
CTORCH_API ct_kv_cache *ct_kv_cache_new(int64_t batch_size, int64_t max_seq_len,
                                        int64_t num_kv_heads, int64_t head_dim, ct_dtype dtype);
/* Copies k_val and v_val into the cache at positions size .. size + S - 1 (no autograd) and
   sets *k_out and *v_out to the filled prefix of the keys and values.
   Shapes: k_val, v_val (batch_size, num_kv_heads, S, head_dim), S >= 1 -> k_out, v_out
   (batch_size, num_kv_heads, size + S, head_dim). dtypes: the cache's.
   Returns: CT_OK or the error code; *k_out and *v_out are views of the cache owned by the
   current scope (their values change with a later reset; NULL after an error).
   Errors: CT_ERR_NULL_ARG; CT_ERR_SHAPE "ct_kv_cache_update: expected k_val of shape
   [2, 4, S, 8], got [2, 3, 1, 8]"; CT_ERR_DTYPE "ct_kv_cache_update: expected k_val of dtype
   float32, got float64"; CT_ERR_VALUE when the cache would overflow ("ct_kv_cache_update:
   cannot add 3 positions to a cache holding 14 of max_seq_len 16"). Nothing is written
   after an error. Mirrors: torchtune.modules.KVCache.update(k_val, v_val). */
CTORCH_API ct_status ct_kv_cache_update(ct_kv_cache *cache, const ct_tensor *k_val,
                                        const ct_tensor *v_val, ct_tensor **k_out,
                                        ct_tensor **v_out);
/* Empties the cache (size 0) and zero-fills its buffers. Errors: CT_ERR_NULL_ARG.
   Mirrors: torchtune.modules.KVCache.reset(). */
CTORCH_API void ct_kv_cache_reset(ct_kv_cache *cache);
/* The number of positions filled; -1 (and CT_ERR_NULL_ARG) for NULL.
   Mirrors: torchtune.modules.KVCache.size. */
CTORCH_API int64_t ct_kv_cache_size(const ct_kv_cache *cache);
/* Frees the cache and its buffers (views returned by ct_kv_cache_update keep their storage
   alive). NULL is a no-op. */
CTORCH_API void ct_kv_cache_free(ct_kv_cache *cache);
