/* nn/attention.h - scaled dot product attention (a fused, memory-saving kernel).
 *
 * Results are new tensors owned by the current scope. Kernels exist for float32 and float64
 * (float16/bfloat16 compute in float32). Without dropout the forward and backward run fused
 * over blocks of keys (flash attention: O(L) extra memory, never the (L, S) matrix); results
 * are bit-identical for any thread count.
 */

/* Options of ct_scaled_dot_product_attention.
   field       default  meaning
   dropout_p   0        dropout probability on the attention weights (always applied when > 0)
   is_causal   false    a top-left aligned causal mask (query l attends keys s <= l)
   scale       NAN      the factor of q k^T; NAN means None: 1 / sqrt(E)
   enable_gqa  false    grouped-query attention: Hq a multiple of the key/value heads H */
typedef struct ct_scaled_dot_product_attention_opts {
    double dropout_p;
    bool is_causal;
    double scale;
    bool enable_gqa;
} ct_scaled_dot_product_attention_opts;

/* PyTorch's defaults: dropout_p 0, is_causal false, scale None (NAN), enable_gqa false. */
CTORCH_API ct_scaled_dot_product_attention_opts ct_scaled_dot_product_attention_defaults(void);

/* softmax(q k^T * scale + mask) @ v over the last two dims.
   Shapes: query (N..., Hq, L, E), key (N..., H, S, E), value (N..., H, S, Ev) -> (N..., Hq, L,
   Ev); at least 2-D (a 2-D input has no head dim); the batch dims N... broadcast; H == Hq,
   or H == 1, or (enable_gqa) Hq a multiple of H. attn_mask (NULL: none) broadcastable to
   (N..., Hq, L, S): bool (True = attend) or floating point (added to the scores; float32 or
   the query's dtype). dtypes: floating point, the same for query, key and value. A query row
   that may attend no key (a fully masked row) gives 0 output and 0 gradients, as PyTorch's
   CPU kernels. dropout_p > 0 computes softmax, dropout (the default generator, PyTorch's
   masks) and matmul as PyTorch's math path, as does an attn_mask that requires grad; otherwise
   the fused kernel runs, whose autograd node ScaledDotProductFlashAttentionForCpuBackward0
   has a fused backward (double backward through differentiable ops). opts NULL: defaults.
   Errors (PyTorch's wording): CT_ERR_SHAPE "Expected query, key, and value to all be  at least
   2 dimensional, ...", "Number of heads in key and value must divide the number of heads in
   query", "The size of tensor a (5) must match the size of tensor b (7) at non-singleton
   dimension 3" (heads, batch dims, mask shape), "Expected size for first two dimensions of
   batch2 tensor to be: [6, 4] but got: [6, 5]." (E or S of key/value); CT_ERR_DTYPE "Expected
   query, key, and value to have the same dtype, ...", "Expected attn_mask dtype to be bool or
   float or to match query dtype, ...", "expected scalar type Float but found Long";
   CT_ERR_VALUE "_scaled_dot_product_attention: Explicit attn_mask should not be set when
   is_causal=True", "dropout probability has to be between 0 and 1, but got -0.5".
   Mirrors: torch.nn.functional.scaled_dot_product_attention. */
CTORCH_API ct_tensor *ct_scaled_dot_product_attention(
    const ct_tensor *query, const ct_tensor *key, const ct_tensor *value,
    const ct_tensor *attn_mask, const ct_scaled_dot_product_attention_opts *opts);
