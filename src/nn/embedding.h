/* nn/embedding.h - lookup tables: embedding, embedding_bag and their modules.
 *
 * Results are new tensors owned by the current scope. Indices are int64 or int32. The lookup
 * copies rows (any weight dtype); the gradient of the weight (float32, float64; half through
 * float32) adds the gradient rows in index order, each weight row written by one thread:
 * bit-identical for any thread count.
 */

/* Options of ct_embedding.
   field               default    meaning
   padding_idx         INT64_MIN  INT64_MIN: None; else the row (negative: from the end) that
                                  gets no gradient
   max_norm            NAN        NAN: None; else looked-up rows with a larger norm are scaled
                                  in place to max_norm / (norm + 1e-7)
   norm_type           2          the p of max_norm's norm
   scale_grad_by_freq  false      scale each row's gradient by 1 / (its count in input)
   sparse              false      true: CT_ERR_UNSUPPORTED (sparse gradients) */
typedef struct ct_embedding_opts {
    int64_t padding_idx;
    double max_norm, norm_type;
    bool scale_grad_by_freq, sparse;
} ct_embedding_opts;

/* PyTorch's defaults: padding_idx None, max_norm None, norm_type 2, the flags false. */
CTORCH_API ct_embedding_opts ct_embedding_defaults(void);

/* Looks up rows of weight: out[i..., :] = weight[input[i...], :]. With max_norm, the rows of
   weight that input names are first renormalized IN PLACE (no gradient recorded), as
   torch.embedding_renorm_. Shapes: input (*) int64 or int32; weight (num_embeddings,
   embedding_dim) of any dtype. Returns (*, embedding_dim) of weight's dtype. Gradient
   (weight): aten::embedding_dense_backward, padding_idx's row zero. opts NULL means defaults.
   Errors: CT_ERR_INDEX "index out of range in self"; CT_ERR_DTYPE "Expected tensor for argument
   #1 'indices' to have one of the following scalar types: Long, Int; but got
   torch.FloatTensor instead (while checking arguments for embedding)"; CT_ERR_SHAPE "'weight'
   must be 2-D"; CT_ERR_VALUE "Padding_idx must be within num_embeddings"; CT_ERR_UNSUPPORTED
   for sparse. Mirrors: torch.nn.functional.embedding. */
CTORCH_API ct_tensor *ct_embedding(const ct_tensor *input, ct_tensor *weight,
                                   const ct_embedding_opts *opts);

/* How embedding_bag reduces a bag (aten's numbering). */
typedef enum ct_embedding_bag_mode {
    CT_EMBEDDING_BAG_SUM = 0,
    CT_EMBEDDING_BAG_MEAN = 1,
    CT_EMBEDDING_BAG_MAX = 2
} ct_embedding_bag_mode;

/* Options of ct_embedding_bag (and of nn.EmbeddingBag).
   field                default    meaning
   max_norm, norm_type  NAN, 2     as ct_embedding_opts
   scale_grad_by_freq   false      as ct_embedding_opts (not with max)
   mode                 MEAN       sum, mean or max of each bag
   sparse               false      true: CT_ERR_UNSUPPORTED
   include_last_offset  false      offsets has one more entry: the end of the last bag
                                   (entries past it are left out; PyTorch documents it as
                                   the input's length, and beyond that its modes disagree)
   padding_idx          INT64_MIN  INT64_MIN: None; else entries equal to it are left out of
                                   their bags (negative: from the end) */
typedef struct ct_embedding_bag_opts {
    double max_norm, norm_type;
    bool scale_grad_by_freq;
    ct_embedding_bag_mode mode;
    bool sparse, include_last_offset;
    int64_t padding_idx;
} ct_embedding_bag_opts;

/* PyTorch's defaults: mode mean, padding_idx and max_norm None, norm_type 2, flags false. */
CTORCH_API ct_embedding_bag_opts ct_embedding_bag_defaults(void);

/* Sums, means or maxes bags of embeddings without materializing them per bag. Bags: the rows
   of a 2-D input (B, L) (offsets NULL), or the runs of a 1-D input (N) starting at offsets (B)
   ((B + 1) with include_last_offset). per_sample_weights (same shape as input, mode sum only)
   scales each entry. Empty bags (and bags of padding only) give zeros. Shapes: weight
   (num_embeddings, embedding_dim); returns (B, embedding_dim) of weight's float dtype.
   Gradients: weight, per_sample_weights (max: to the entries holding the maximum).
   Errors: CT_ERR_VALUE "offsets has to be a 1D Tensor but got None", "input has to be 1D or 2D
   Tensor, but got Tensor of dimension 3", "offsets[0] has to be 0, i.e., the first sequence in
   the mini-batch has to start from position 0. However, got 1", "max mode does not support
   scaling the gradient by the frequency", "padding_idx must be within the number of
   embeddings, -5 through 4, but got 7"; CT_ERR_INDEX "offsets[-1] can not be greater than
   input's length 2 but got offsets[-1] of 3", "index out of range in self"; CT_ERR_SHAPE
   "embedding_bag: If per_sample_weights (torch.Size([3])) is not None, then it must have the
   same shape as the input (torch.Size([2]))"; CT_ERR_UNSUPPORTED per_sample_weights with mean
   or max, sparse; CT_ERR_DTYPE as ct_embedding. Mirrors: torch.nn.functional.embedding_bag. */
CTORCH_API ct_tensor *ct_embedding_bag(const ct_tensor *input, ct_tensor *weight,
                                       const ct_tensor *offsets,
                                       const ct_tensor *per_sample_weights,
                                       const ct_embedding_bag_opts *opts);

/* ---- modules ------------------------------------------------------------------------------ */
/* nn.Embedding(num_embeddings, embedding_dim): parameter weight (num_embeddings,
   embedding_dim) float32 drawn N(0, 1) from the default generator, padding_idx's row zeroed.
   opts NULL means defaults. Errors: CT_ERR_VALUE "Padding_idx must be within num_embeddings";
   CT_ERR_UNSUPPORTED for sparse. Mirrors: torch.nn.Embedding. */
CTORCH_API ct_module *ct_embedding_new(int64_t num_embeddings, int64_t embedding_dim,
                                       const ct_embedding_opts *opts);
/* The Embedding module's forward: ct_embedding with its weight and options.
   Errors: CT_ERR_VALUE "expected a Embedding module, got ReLU"; those of ct_embedding.
   Mirrors: torch.nn.Embedding.forward. */
CTORCH_API ct_tensor *ct_embedding_forward(ct_module *m, const ct_tensor *input);

/* nn.EmbeddingBag(num_embeddings, embedding_dim): parameter weight as nn.Embedding's (N(0, 1),
   padding_idx's row zeroed); opts NULL means defaults (mode mean). Called through
   ct_module_forward, input is 2-D (no offsets). Errors: as ct_embedding_new.
   Mirrors: torch.nn.EmbeddingBag. */
CTORCH_API ct_module *ct_embedding_bag_new(int64_t num_embeddings, int64_t embedding_dim,
                                           const ct_embedding_bag_opts *opts);
/* The EmbeddingBag module's forward: ct_embedding_bag with its weight and options.
   Errors: CT_ERR_VALUE "expected a EmbeddingBag module, got ReLU"; those of ct_embedding_bag.
   Mirrors: torch.nn.EmbeddingBag.forward(input, offsets, per_sample_weights). */
CTORCH_API ct_tensor *ct_embedding_bag_forward(ct_module *m, const ct_tensor *input,
                                               const ct_tensor *offsets,
                                               const ct_tensor *per_sample_weights);
