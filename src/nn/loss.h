/* nn/loss.h - loss functions (torch.nn.functional losses).
 *
 * Reductions: CT_REDUCTION_MEAN (the default, also for 0), CT_REDUCTION_SUM,
 * CT_REDUCTION_NONE (per-element losses); any other value is CT_ERR_VALUE ("ct_mse_loss:
 * 17 is not a valid value for reduction"). Results are new tensors owned by the current
 * scope; reduced losses are 0-dim. An empty batch gives PyTorch's results: mean NaN (0 / 0),
 * sum 0, none an empty tensor.
 */
typedef enum ct_reduction {
    CT_REDUCTION_DEFAULT = 0, /* = mean */
    CT_REDUCTION_MEAN,
    CT_REDUCTION_SUM,
    CT_REDUCTION_NONE
} ct_reduction;

/* Options of ct_nll_loss and ct_cross_entropy.
   field         default   meaning
   weight        NULL      (C) float rescaling weight per class
   ignore_index  -100      targets equal to it contribute neither loss nor gradient
   reduction     mean      'mean' divides by the summed weights of the counted targets */
typedef struct ct_nll_loss_opts {
    const ct_tensor *weight;
    int64_t ignore_index;
    ct_reduction reduction;
} ct_nll_loss_opts;

/* PyTorch's defaults: weight NULL, ignore_index -100, reduction mean. */
CTORCH_API ct_nll_loss_opts ct_nll_loss_defaults(void);

/* Negative log likelihood of log-probabilities. Shapes: input (N, C) or (C); target (N) or
   () int64 class indices in [0, C). opts NULL means defaults.
   Errors: CT_ERR_DTYPE "expected scalar type Long but found Int" for a non-int64 target;
   CT_ERR_SHAPE "Expected input batch_size (3) to match target batch_size (4)."; CT_ERR_INDEX
   "Target 10 is out of bounds." Mirrors: torch.nn.functional.nll_loss. */
CTORCH_API ct_tensor *ct_nll_loss(const ct_tensor *input, const ct_tensor *target,
                                  const ct_nll_loss_opts *opts);
/* log_softmax over dim 1 (dim 0 for 1-D input) followed by nll_loss: the cross entropy
   between logits and class indices. Shapes, options and errors as ct_nll_loss.
   Mirrors: torch.nn.functional.cross_entropy. */
CTORCH_API ct_tensor *ct_cross_entropy(const ct_tensor *input, const ct_tensor *target,
                                       const ct_nll_loss_opts *opts);
/* Mean squared error (input - target)^2, input and target broadcastable.
   Mirrors: torch.nn.functional.mse_loss. */
CTORCH_API ct_tensor *ct_mse_loss(const ct_tensor *input, const ct_tensor *target,
                                  ct_reduction reduction);
