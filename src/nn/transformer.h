/* nn/transformer.h - MultiheadAttention and the Transformer layers (torch.nn modules).
 *
 * Composites of linear, scaled_dot_product_attention, bmm/softmax, layer_norm, dropout and the
 * activations, written as PyTorch's Python modules are (torch/nn/functional.py
 * multi_head_attention_forward, torch/nn/modules/transformer.py), so gradients come from those
 * ops' autograd. Parameters are float32 with PyTorch's state_dict names and initialization drawn
 * from the default generator in PyTorch's order (ct_manual_seed(s) + a constructor gives
 * torch.manual_seed(s) + the same nn module's initial weights, bit for bit). Results are new
 * tensors owned by the current scope (intermediates are released before returning), the same
 * for any thread count. Dropout uses the default generator as PyTorch's CPU dropout does.
 * Typed forwards are Module.forward (no hooks). PyTorch's inference fast paths
 * (_native_multi_head_attention, _transformer_encoder_layer_fwd, nested tensors) are not
 * taken: results are those of the slow path, which PyTorch runs whenever grad is enabled.
 */

/* Options of ct_multihead_attention_new.
   field          default  meaning
   dropout        0        dropout probability on the attention weights (training mode)
   bias           true     in_proj_bias and out_proj.bias
   add_bias_kv    false    bias_k, bias_v (1, 1, embed_dim) appended to the keys and values
   add_zero_attn  false    a zero key and value appended after the projection
   kdim, vdim     0        the key / value feature sizes; 0 means None (embed_dim)
   batch_first    false    batched inputs are (N, L, E) instead of (L, N, E) */
typedef struct ct_multihead_attention_opts {
    double dropout;
    bool bias;
    bool add_bias_kv;
    bool add_zero_attn;
    int64_t kdim, vdim;
    bool batch_first;
} ct_multihead_attention_opts;

/* PyTorch's defaults: dropout 0, bias true, add_bias_kv and add_zero_attn false, kdim and vdim
   None (0), batch_first false. */
CTORCH_API ct_multihead_attention_opts ct_multihead_attention_defaults(void);

/* nn.MultiheadAttention(embed_dim, num_heads, ...). Parameters (float32, state_dict order):
   in_proj_weight (3E, E), or q_proj_weight (E, E), k_proj_weight (E, kdim), v_proj_weight
   (E, vdim) when kdim or vdim differs from E; in_proj_bias (3E) when bias; bias_k, bias_v
   (1, 1, E) when add_bias_kv; out_proj.weight (E, E), out_proj.bias (E). Initialization in
   PyTorch's order: out_proj as nn.Linear (kaiming_uniform_ weight, uniform bias), xavier_uniform_
   of in_proj_weight (or q, k, v), in_proj_bias and out_proj.bias zeroed, xavier_normal_ of
   bias_k then bias_v. ct_module_forward(m, x) is self-attention without weights
   (ct_multihead_attention_forward(m, x, x, x, need_weights false)). opts NULL: defaults.
   Errors: CT_ERR_VALUE "embed_dim and num_heads must be greater than 0, got embed_dim=0 and
   num_heads=2 instead", "embed_dim must be divisible by num_heads", "kdim and vdim must be
   >= 0 (0: None), got -1". Mirrors: torch.nn.MultiheadAttention. */
CTORCH_API ct_module *ct_multihead_attention_new(int64_t embed_dim, int64_t num_heads,
                                                 const ct_multihead_attention_opts *opts);

/* Options of ct_multihead_attention_forward.
   field                 default  meaning
   key_padding_mask      NULL     (N, S) (unbatched (S)): bool (true = ignore that key) or
                                  floating point (added to the scores)
   need_weights          true     return the attention weights (computed as softmax of the
                                  scores, PyTorch's math path); false runs the fused
                                  ct_scaled_dot_product_attention
   attn_mask             NULL     (L, S) or (N * num_heads, L, S): bool (true = not allowed to
                                  attend) or floating point (added to the scores)
   average_attn_weights  true     weights averaged over the heads, else per head
   is_causal             false    a hint that attn_mask is the causal mask (attn_mask is then
                                  required); with no key_padding_mask and need_weights false the
                                  fused kernel's causal masking replaces attn_mask */
typedef struct ct_multihead_attention_forward_opts {
    const ct_tensor *key_padding_mask;
    bool need_weights;
    const ct_tensor *attn_mask;
    bool average_attn_weights;
    bool is_causal;
} ct_multihead_attention_forward_opts;

/* PyTorch's defaults: no masks, need_weights true, average_attn_weights true, is_causal false. */
CTORCH_API ct_multihead_attention_forward_opts ct_multihead_attention_forward_defaults(void);

/* The typed forward of a ct_multihead_attention_new module: the attention output, and the
   attention weights in *attn_weights (when attn_weights is not NULL: NULL unless need_weights).
   Shapes: query (L, N, E) ((N, L, E) with batch_first; unbatched (L, E)), key (S, N, kdim),
   value (S, N, vdim) -> output as query; weights (N, L, S') averaged or (N, num_heads, L, S')
   per head (unbatched: no N), S' = S + add_bias_kv + add_zero_attn. dtypes: floating point, as
   the parameters (ct_module_to). Dropout (the module's dropout, training mode) applies to the
   weights. The projections are one linear per row block of in_proj_weight (PyTorch's
   _in_projection_packed computes the same products in one linear when query, key and value
   are the same tensor). opts NULL: defaults.
   Returns: new tensors owned by the current scope.
   Errors (PyTorch's wording): CT_ERR_SHAPE "query should be unbatched 2D or batched 3D tensor
   but received 4-D query tensor", "For batched (3-D) `query`, expected `key` and `value` to be
   3-D but found 2-D and 3-D tensors respectively", "For batched (3-D) `query`, expected
   `key_padding_mask` to be `None` or 2-D but found 1-D tensor instead", "... expected
   `attn_mask` to be `None`, 2-D or 3-D ...", "Expected `attn_mask` shape to be (2, 3, 4) but
   got torch.Size([2, 3, 5])", "was expecting embedding dimension of 8, but got 6", "key shape
   torch.Size([5, 2, 8]) does not match value shape torch.Size([6, 2, 8])", "key's sequence and
   batch dims torch.Size([5, 2]) do not match value's torch.Size([6, 2])", "expecting key
   weights shape of (8, 3), but got torch.Size([8, 5])", "The shape of the 2D attn_mask is
   torch.Size([4, 5]), but should be (4, 6).", "The shape of the 3D attn_mask is ...",
   "Expected key_padded_mask.shape[1] to be 6, but got 5"; CT_ERR_DTYPE "only bool and
   floating types of attn_mask are supported"; CT_ERR_VALUE "Need attn_mask if specifying the
   is_causal hint. ...", "expected a MultiheadAttention module, got Linear".
   Mirrors: torch.nn.MultiheadAttention.forward. */
CTORCH_API ct_tensor *ct_multihead_attention_forward(ct_module *m, const ct_tensor *query,
                                                     const ct_tensor *key, const ct_tensor *value,
                                                     const ct_multihead_attention_forward_opts
                                                         *opts,
                                                     ct_tensor **attn_weights);

/* The activation of the feedforward block: relu (the default) or gelu (exact). */
typedef enum ct_transformer_activation {
    CT_TRANSFORMER_RELU = 0,
    CT_TRANSFORMER_GELU
} ct_transformer_activation;

/* Options of the Transformer layers (and of ct_transformer_new).
   field            default  meaning
   dim_feedforward  2048     the feedforward block's hidden size
   dropout          0.1      dropout probability (attention weights and the residual branches)
   activation       relu     CT_TRANSFORMER_RELU or CT_TRANSFORMER_GELU
   layer_norm_eps   1e-5     the LayerNorms' eps
   batch_first      false    batched inputs are (N, L, E) instead of (L, N, E)
   norm_first       false    pre-norm (x + f(norm(x))) instead of post-norm (norm(x + f(x)))
   bias             true     biases of the linear layers, attention and LayerNorms */
typedef struct ct_transformer_layer_opts {
    int64_t dim_feedforward;
    double dropout;
    ct_transformer_activation activation;
    double layer_norm_eps;
    bool batch_first, norm_first, bias;
} ct_transformer_layer_opts;

/* PyTorch's defaults (above). */
CTORCH_API ct_transformer_layer_opts ct_transformer_layer_defaults(void);

/* nn.TransformerEncoderLayer(d_model, nhead, ...): submodules self_attn (MultiheadAttention),
   linear1 (d_model -> dim_feedforward), dropout, linear2, norm1, norm2 (LayerNorm), dropout1,
   dropout2, created (and initialized) in that order. ct_module_forward(m, src) runs the typed
   forward without masks. opts NULL: defaults. Errors: CT_ERR_VALUE as
   ct_multihead_attention_new; "invalid activation 7". Mirrors: torch.nn.TransformerEncoderLayer. */
CTORCH_API ct_module *ct_transformer_encoder_layer_new(int64_t d_model, int64_t nhead,
                                                       const ct_transformer_layer_opts *opts);
/* The encoder layer: x + sa(norm1(x)) then x + ff(norm2(x)) with norm_first, else
   norm1(x + sa(x)) then norm2(x + ff(x)), sa self-attention with src_mask (attn_mask) and
   src_key_padding_mask (NULL: none; bool or float), is_causal its hint (PyTorch's layer
   default false), ff linear2(dropout(activation(linear1(x)))).
   Shapes: src (S, N, E) ((N, S, E) with batch_first; unbatched (S, E)) -> as src.
   Errors: as ct_multihead_attention_forward; CT_ERR_VALUE "expected a TransformerEncoderLayer
   module, got Linear". Mirrors: torch.nn.TransformerEncoderLayer.forward. */
CTORCH_API ct_tensor *ct_transformer_encoder_layer_forward(ct_module *m, const ct_tensor *src,
                                                           const ct_tensor *src_mask,
                                                           const ct_tensor *src_key_padding_mask,
                                                           bool is_causal);

/* nn.TransformerEncoder(encoder_layer, num_layers, norm): submodules layers (a ModuleList of
   num_layers copies of layer, each with layer's parameter values, as PyTorch's deepcopy: no
   draws from the generator) and norm (when not NULL). Takes ownership of layer (freed: the
   copies replace it) and of norm, also on error. Errors: CT_ERR_VALUE "expected a
   TransformerEncoderLayer module, got Linear", "num_layers must be positive, got 0".
   Mirrors: torch.nn.TransformerEncoder. */
CTORCH_API ct_module *ct_transformer_encoder_new(ct_module *layer, int64_t num_layers,
                                                 ct_module *norm);
/* Runs src through the layers, then norm. The masks as ct_transformer_encoder_layer_forward;
   is_causal false means PyTorch's default None: the hint is set when mask equals the causal
   mask (-inf above the diagonal, or bool true there) of the sequence length.
   Errors: as the layers'; CT_ERR_VALUE "expected a TransformerEncoder module, got Linear".
   Mirrors: torch.nn.TransformerEncoder.forward. */
CTORCH_API ct_tensor *ct_transformer_encoder_forward(ct_module *m, const ct_tensor *src,
                                                     const ct_tensor *mask,
                                                     const ct_tensor *src_key_padding_mask,
                                                     bool is_causal);

/* The masks and hints of the decoder and Transformer forwards (all NULL / false by default,
   PyTorch's defaults: a false src_is_causal or tgt_is_causal means None, detected as in
   ct_transformer_encoder_forward by the encoder and decoder stacks). Masks as
   ct_multihead_attention_forward's (bool or float): *_mask (L, S) or (N * nhead, L, S),
   *_key_padding_mask (N, S). */
typedef struct ct_transformer_forward_opts {
    const ct_tensor *src_mask, *tgt_mask, *memory_mask;
    const ct_tensor *src_key_padding_mask, *tgt_key_padding_mask, *memory_key_padding_mask;
    bool src_is_causal, tgt_is_causal, memory_is_causal;
} ct_transformer_forward_opts;

/* nn.TransformerDecoderLayer(d_model, nhead, ...): submodules self_attn, multihead_attn
   (MultiheadAttention), linear1, dropout, linear2, norm1, norm2, norm3, dropout1, dropout2,
   dropout3, in that order. opts NULL: defaults. Errors: as ct_transformer_encoder_layer_new.
   Mirrors: torch.nn.TransformerDecoderLayer. */
CTORCH_API ct_module *ct_transformer_decoder_layer_new(int64_t d_model, int64_t nhead,
                                                       const ct_transformer_layer_opts *opts);
/* The decoder layer: self-attention of tgt (tgt_mask, tgt_key_padding_mask, tgt_is_causal),
   attention to memory (memory_mask, memory_key_padding_mask, memory_is_causal) and the
   feedforward block, each residual, pre- or post-norm. Shapes: tgt (T, N, E), memory
   (S, N, E) ((N, T, E), (N, S, E) with batch_first) -> as tgt. opts NULL: no masks.
   Errors: as ct_multihead_attention_forward; CT_ERR_VALUE "expected a TransformerDecoderLayer
   module, got Linear". Mirrors: torch.nn.TransformerDecoderLayer.forward. */
CTORCH_API ct_tensor *ct_transformer_decoder_layer_forward(ct_module *m, const ct_tensor *tgt,
                                                           const ct_tensor *memory,
                                                           const ct_transformer_forward_opts
                                                               *opts);
/* nn.TransformerDecoder(decoder_layer, num_layers, norm), as ct_transformer_encoder_new.
   Mirrors: torch.nn.TransformerDecoder. */
CTORCH_API ct_module *ct_transformer_decoder_new(ct_module *layer, int64_t num_layers,
                                                 ct_module *norm);
/* Runs tgt (and memory) through the layers, then norm; tgt_is_causal detected as in
   ct_transformer_encoder_forward. Mirrors: torch.nn.TransformerDecoder.forward. */
CTORCH_API ct_tensor *ct_transformer_decoder_forward(ct_module *m, const ct_tensor *tgt,
                                                     const ct_tensor *memory,
                                                     const ct_transformer_forward_opts *opts);

/* nn.Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers, ...): encoder
   (TransformerEncoder with a final LayerNorm) and decoder (TransformerDecoder with a final
   LayerNorm), then xavier_uniform_ of every parameter with more than one dim, in parameter
   order (PyTorch's defaults: 512, 8, 6, 6). opts NULL: defaults. Errors: as the layers'.
   Mirrors: torch.nn.Transformer. */
CTORCH_API ct_module *ct_transformer_new(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                                         int64_t num_decoder_layers,
                                         const ct_transformer_layer_opts *opts);
/* memory = encoder(src, src_mask, src_key_padding_mask, src_is_causal), then
   decoder(tgt, memory, ...). Shapes: src (S, N, E), tgt (T, N, E) ((N, S, E), (N, T, E) with
   batch_first; unbatched without N) -> (T, N, E). Errors: CT_ERR_SHAPE "the batch number of
   src and tgt must be equal", "the feature number of src and tgt must be equal to d_model";
   as the layers'. Mirrors: torch.nn.Transformer.forward. */
CTORCH_API ct_tensor *ct_transformer_forward(ct_module *m, const ct_tensor *src,
                                             const ct_tensor *tgt,
                                             const ct_transformer_forward_opts *opts);
