/* nn/loss.h - loss functions (torch.nn.functional losses).
 *
 * Reductions: CT_REDUCTION_MEAN (the default, also for 0), CT_REDUCTION_SUM,
 * CT_REDUCTION_NONE (per-element losses), CT_REDUCTION_BATCHMEAN (ct_kl_div only); any other
 * value is CT_ERR_VALUE ("ct_mse_loss: 17 is not a valid value for reduction"; batchmean
 * elsewhere: "4 is not ...", PyTorch's "batchmean is not ...").
 * Losses of two same-shaped tensors broadcast them as PyTorch does (CT_ERR_SHAPE "The size of
 * tensor a (4) must match the size of tensor b (2) at non-singleton dimension 1"); they run on
 * float32 and float64 (float16/bfloat16 through float32) and are differentiable w.r.t. input
 * and target. Results are new tensors owned by the current scope; reduced losses are 0-dim.
 * An empty batch gives PyTorch's results: mean NaN (0 / 0), sum 0, none an empty tensor.
 */
typedef enum ct_reduction {
    CT_REDUCTION_DEFAULT = 0, /* = mean */
    CT_REDUCTION_MEAN,
    CT_REDUCTION_SUM,
    CT_REDUCTION_NONE,
    CT_REDUCTION_BATCHMEAN /* ct_kl_div only: the sum divided by input.size(0) */
} ct_reduction;

/* Options of ct_nll_loss and ct_cross_entropy.
   field         default   meaning
   weight        NULL      (C) float rescaling weight per class
   ignore_index  -100      targets equal to it contribute neither loss nor gradient
   reduction     mean      'mean' divides by the summed weights of the counted targets
   label_smoothing 0       ct_cross_entropy only (ct_nll_loss ignores it): in [0, 1], the
                           target becomes (1 - ls) * target + ls / C */
typedef struct ct_nll_loss_opts {
    const ct_tensor *weight;
    int64_t ignore_index;
    ct_reduction reduction;
    double label_smoothing;
} ct_nll_loss_opts;

/* PyTorch's defaults: weight NULL, ignore_index -100, reduction mean, label_smoothing 0. */
CTORCH_API ct_nll_loss_opts ct_nll_loss_defaults(void);

/* Negative log likelihood of log-probabilities. Shapes: input (N, C), (C) or (N, C, d1, ...);
   target (N), () or (N, d1, ...) int64 class indices in [0, C); 'none' gives the target's
   shape. opts NULL means defaults.
   Errors: CT_ERR_DTYPE "expected scalar type Long but found Int" for a non-int64 target;
   CT_ERR_SHAPE "Expected input batch_size (3) to match target batch_size (4).", "Expected
   target size [2, 4], got [2, 5]" (4-D input: "size mismatch (got input: [2, 3, 4, 5] ,
   target: [2, 4, 4]"); CT_ERR_INDEX "Target 10 is out of bounds."
   Mirrors: torch.nn.functional.nll_loss. */
CTORCH_API ct_tensor *ct_nll_loss(const ct_tensor *input, const ct_tensor *target,
                                  const ct_nll_loss_opts *opts);
/* log_softmax over dim 1 (dim 0 for 1-D input) followed by nll_loss: the cross entropy
   between logits and class indices (shapes, options and errors as ct_nll_loss; (N, C) and
   (N, C, d1, ...) run one fused pass), or, for a floating target of input's shape, class
   probabilities: -sum(w_c * target * log_softmax(input)) over the class dim ('mean' divides
   by numel / C). label_smoothing as PyTorch (weighted, ignore_index masked).
   Errors (besides ct_nll_loss's): CT_ERR_VALUE "label_smoothing must be between 0.0 and 1.0.
   Got: 1.5", "ignore_index is not supported for floating point target"; CT_ERR_DTYPE
   "Expected floating point type for target with class probabilities, got Long"; CT_ERR_SHAPE
   "cross_entropy: weight tensor should be defined either for all 3 classes or no classes but
   got weight tensor of shape: [4]". Mirrors: torch.nn.functional.cross_entropy. */
CTORCH_API ct_tensor *ct_cross_entropy(const ct_tensor *input, const ct_tensor *target,
                                       const ct_nll_loss_opts *opts);
/* Mean squared error (input - target)^2, input and target broadcastable.
   Mirrors: torch.nn.functional.mse_loss. */
CTORCH_API ct_tensor *ct_mse_loss(const ct_tensor *input, const ct_tensor *target,
                                  ct_reduction reduction);
/* Mean absolute error |input - target|. Mirrors: torch.nn.functional.l1_loss. */
CTORCH_API ct_tensor *ct_l1_loss(const ct_tensor *input, const ct_tensor *target,
                                 ct_reduction reduction);
/* z = |input - target|: 0.5 z^2 / beta where z < beta, else z - 0.5 beta (beta 0: l1_loss).
   PyTorch's default beta is 1. Errors: CT_ERR_VALUE "smooth_l1_loss does not support negative
   values for beta.". Mirrors: torch.nn.functional.smooth_l1_loss. */
CTORCH_API ct_tensor *ct_smooth_l1_loss(const ct_tensor *input, const ct_tensor *target,
                                        ct_reduction reduction, double beta);
/* z = |input - target|: 0.5 z^2 where z < delta, else delta (z - 0.5 delta). PyTorch's
   default delta is 1. Errors: CT_ERR_VALUE "huber_loss does not support non-positive values
   for delta.". Mirrors: torch.nn.functional.huber_loss. */
CTORCH_API ct_tensor *ct_huber_loss(const ct_tensor *input, const ct_tensor *target,
                                    ct_reduction reduction, double delta);
/* -w (t log(x) + (1 - t) log(1 - x)), each log clamped to >= -100, between probabilities x
   and targets t of the same shape; weight (NULL: none) broadcasts to it. Gradient w.r.t. x:
   w (x - t) / max((1 - x) x, 1e-12), as PyTorch. Errors: CT_ERR_VALUE "Using a target size
   ([3, 2]) that is different to the input size ([3, 4]) is deprecated. Please ensure they
   have the same size." and "all elements of input should be between 0 and 1"; CT_ERR_DTYPE
   "Found dtype Double but expected Float" for a target of another dtype.
   Mirrors: torch.nn.functional.binary_cross_entropy. */
CTORCH_API ct_tensor *ct_binary_cross_entropy(const ct_tensor *input, const ct_tensor *target,
                                              const ct_tensor *weight, ct_reduction reduction);
/* BCE of sigmoid(input), computed stably as (1 - t) x - lw log_sigmoid(x) with
   lw = (pos_weight - 1) t + 1 (1 without pos_weight), times weight. pos_weight and weight
   (NULL: none) broadcast to input's shape (pos_weight along the last dim, one per class).
   Errors: CT_ERR_VALUE "Target size ([3, 2]) must be the same as input size ([3, 4])".
   Mirrors: torch.nn.functional.binary_cross_entropy_with_logits. */
CTORCH_API ct_tensor *ct_binary_cross_entropy_with_logits(const ct_tensor *input,
                                                          const ct_tensor *target,
                                                          const ct_tensor *weight,
                                                          const ct_tensor *pos_weight,
                                                          ct_reduction reduction);
/* Kullback-Leibler divergence of log-probabilities input from target: target (log target -
   input), or exp(target) (target - input) when log_target. CT_REDUCTION_BATCHMEAN divides
   the sum by input.size(0) (the true KL divergence); PyTorch's default is 'mean'.
   Mirrors: torch.nn.functional.kl_div. */
CTORCH_API ct_tensor *ct_kl_div(const ct_tensor *input, const ct_tensor *target,
                                ct_reduction reduction, bool log_target);

/* ---- margin and likelihood losses (composites of ops) ------------------------------------ */
/* max(0, -target (input1 - input2) + margin), the three broadcast together. PyTorch's default
   margin is 0. Errors: CT_ERR_SHAPE "margin_ranking_loss : All input tensors should have same
   dimension but got sizes: input1: torch.Size([3]), input2: torch.Size([3]), target:
   torch.Size([3, 1]) ". Mirrors: torch.nn.functional.margin_ranking_loss. */
CTORCH_API ct_tensor *ct_margin_ranking_loss(const ct_tensor *input1, const ct_tensor *input2,
                                             const ct_tensor *target, double margin,
                                             ct_reduction reduction);
/* input where target != -1 plus max(0, margin - input) where target != 1 (targets are 1 or
   -1). PyTorch's default margin is 1. Mirrors: torch.nn.functional.hinge_embedding_loss. */
CTORCH_API ct_tensor *ct_hinge_embedding_loss(const ct_tensor *input, const ct_tensor *target,
                                              double margin, ct_reduction reduction);
/* log(1 + exp(-target input)). Mirrors: torch.nn.functional.soft_margin_loss. */
CTORCH_API ct_tensor *ct_soft_margin_loss(const ct_tensor *input, const ct_tensor *target,
                                          ct_reduction reduction);
/* With cos the cosine similarity of input1 and input2 (N, D) (or (D) with a 0-dim target)
   along D (squared norms + 1e-12): 1 - cos where target == 1, max(0, cos - margin) where
   target == -1; one loss per row. PyTorch's default margin is 0. Errors: CT_ERR_SHAPE "0D or
   1D target tensor expected, multi-target not supported", "1D target tensor expects 2D input
   tensors, but found inputs with sizes [4] and [4].".
   Mirrors: torch.nn.functional.cosine_embedding_loss. */
CTORCH_API ct_tensor *ct_cosine_embedding_loss(const ct_tensor *input1, const ct_tensor *input2,
                                               const ct_tensor *target, double margin,
                                               ct_reduction reduction);
/* Multi-class hinge loss of input (N, C) or (C) and int64 target (N) or (): per row
   sum over j != y of w[y] max(0, margin - x[y] + x[j])^p / C. p 1 or 2 (PyTorch's defaults:
   p 1, margin 1, weight NULL). Errors: CT_ERR_VALUE "only p == 1 and p == 2 supported",
   "weight must be one-dimensional"; CT_ERR_SHAPE "inconsistent weight size, expected 4 but got
   [3]", "multi_margin_loss: target tensor should be 1-D with size equal to the number of input
   samples (batch size). Expected target size [3], but got [4]. Input has shape [3, 4].",
   "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]";
   CT_ERR_INDEX "target out of range". Mirrors: torch.nn.functional.multi_margin_loss. */
CTORCH_API ct_tensor *ct_multi_margin_loss(const ct_tensor *input, const ct_tensor *target,
                                           int64_t p, double margin, const ct_tensor *weight,
                                           ct_reduction reduction);
/* max(0, margin + d(anchor, positive) - d(anchor, negative)) with d the p-norm of a - b + eps
   over the last dim (swap: d(anchor, negative) replaced by d(positive, negative) where that
   is smaller). PyTorch's defaults: margin 1, p 2, eps 1e-6, swap false. Errors: CT_ERR_VALUE
   "margin must be greater than 0, got 0.0"; CT_ERR_SHAPE "The anchor, positive, and negative
   tensors are expected to have the same number of dimensions, but got: anchor 2D, positive 2D,
   and negative 1D inputs". Mirrors: torch.nn.functional.triplet_margin_loss. */
CTORCH_API ct_tensor *ct_triplet_margin_loss(const ct_tensor *anchor, const ct_tensor *positive,
                                             const ct_tensor *negative, double margin, double p,
                                             double eps, bool swap, ct_reduction reduction);
/* Poisson negative log likelihood: exp(input) - target input when log_input, else input -
   target log(input + eps); full adds Stirling's target log(target) - target + 0.5 log(2 pi
   target) where target > 1. PyTorch's defaults: log_input true, full false, eps 1e-8.
   Mirrors: torch.nn.functional.poisson_nll_loss. */
CTORCH_API ct_tensor *ct_poisson_nll_loss(const ct_tensor *input, const ct_tensor *target,
                                          bool log_input, bool full, double eps,
                                          ct_reduction reduction);
/* Gaussian negative log likelihood 0.5 (log(v) + (input - target)^2 / v) (+ 0.5 log(2 pi) when
   full), v = var clamped to >= eps (the clamp passes the gradient through, as PyTorch's
   no_grad clamp_). var has input's shape, or one dim fewer, or one mismatched dim of size 1.
   PyTorch's defaults: full false, eps 1e-6. Errors: CT_ERR_VALUE "var has negative
   entry/entries", "var is of incorrect size". Mirrors: torch.nn.functional.gaussian_nll_loss. */
CTORCH_API ct_tensor *ct_gaussian_nll_loss(const ct_tensor *input, const ct_tensor *target,
                                           const ct_tensor *var, bool full, double eps,
                                           ct_reduction reduction);

/* ---- loss modules ----------------------------------------------------------------------
 * Modules holding a loss's options (weight and pos_weight as buffers "weight" and
 * "pos_weight", as PyTorch registers them); run them with ct_loss_forward (ct_module_forward
 * on a loss module fails with CT_ERR_VALUE). Option pointers NULL mean PyTorch's defaults;
 * tensors are retained. Mirrors: torch.nn.CrossEntropyLoss, NLLLoss, MSELoss, L1Loss,
 * BCELoss, BCEWithLogitsLoss, HuberLoss, SmoothL1Loss, KLDivLoss. */
CTORCH_API ct_module *ct_cross_entropy_loss_new(const ct_nll_loss_opts *opts);
CTORCH_API ct_module *ct_nll_loss_new(const ct_nll_loss_opts *opts);
CTORCH_API ct_module *ct_mse_loss_new(ct_reduction reduction);
CTORCH_API ct_module *ct_l1_loss_new(ct_reduction reduction);
CTORCH_API ct_module *ct_bce_loss_new(ct_tensor *weight, ct_reduction reduction);
CTORCH_API ct_module *ct_bce_with_logits_loss_new(ct_tensor *weight, ct_reduction reduction,
                                                  ct_tensor *pos_weight);
CTORCH_API ct_module *ct_huber_loss_new(ct_reduction reduction, double delta);
CTORCH_API ct_module *ct_smooth_l1_loss_new(ct_reduction reduction, double beta);
CTORCH_API ct_module *ct_kl_div_loss_new(ct_reduction reduction, bool log_target);
/* The loss of module m (a loss module) for input and target. Errors: CT_ERR_VALUE for a
   module that is not a loss module; as the loss function. Mirrors: Loss.__call__(input,
   target). */
CTORCH_API ct_tensor *ct_loss_forward(ct_module *m, const ct_tensor *input,
                                      const ct_tensor *target);
