/* nn/norm.h - normalization layers (batch, layer, group, instance and RMS norm) and dropout.
 *
 * Results are new tensors owned by the current scope. Kernels exist for float32 and float64;
 * float16/bfloat16 inputs compute in float32 (statistics in float32). Determinism: batch
 * norm is parallel over channels and layer norm over rows, each channel (row) summed by one
 * thread in a fixed order: bit-identical for any thread count.
 */

/* Options of ct_batch_norm.
   field     default  meaning
   weight    NULL     (C) affine scale (gamma); NULL: 1
   bias      NULL     (C) affine shift (beta); NULL: 0
   training  false    normalize with the batch statistics (and update the running ones)
   momentum  0.1      running = (1 - momentum) * running + momentum * batch statistic
   eps       1e-5     added to the variance */
typedef struct ct_batch_norm_opts {
    const ct_tensor *weight, *bias;
    bool training;
    double momentum, eps;
} ct_batch_norm_opts;

/* PyTorch's defaults: no weight or bias, training false, momentum 0.1, eps 1e-5. */
CTORCH_API ct_batch_norm_opts ct_batch_norm_defaults(void);

/* Batch normalization over the channel dim 1: y = (x - mean) / sqrt(var + eps) * w + b.
   Shapes: input (N, C), (N, C, L) or (N, C, H, W) (any (N, C, *)); running_mean,
   running_var, weight, bias (C). dtypes: floating point. Training: mean and the biased
   variance of each channel over N and the spatial dims normalize; running_mean and
   running_var (when given) are updated in place with the unbiased variance. Eval: the
   running statistics normalize. opts NULL means defaults. Returns y, the input's shape.
   Errors: CT_ERR_VALUE "Expected more than 1 value per channel when training, got input size
   [1, 4]"; "running_mean must be defined in evaluation mode"; CT_ERR_SHAPE "running_mean
   should contain 4 elements not 5", "weight should contain 4 elements not 5".
   Mirrors: torch.nn.functional.batch_norm. */
CTORCH_API ct_tensor *ct_batch_norm(const ct_tensor *input, ct_tensor *running_mean,
                                    ct_tensor *running_var, const ct_batch_norm_opts *opts);

/* Layer normalization over the last n dims (normalized_shape), biased variance:
   y = (x - mean) / sqrt(var + eps) * weight + bias. Shapes: input (*, normalized_shape);
   weight, bias (normalized_shape) or NULL. Returns y, the input's shape.
   Errors: CT_ERR_SHAPE "Given normalized_shape=[5], expected input with shape [*, 5], but
   got input of size[3, 4]"; "Expected weight to be of same shape as normalized_shape, but
   got weight of shape [3] and normalized_shape = [4]". Mirrors: torch.nn.functional.layer_norm. */
CTORCH_API ct_tensor *ct_layer_norm(const ct_tensor *input, const int64_t *normalized_shape,
                                    int n, const ct_tensor *weight, const ct_tensor *bias,
                                    double eps);

/* Group normalization: the C channels in num_groups groups, each group of each sample
   normalized (biased variance), then per-channel weight and bias (either may be NULL).
   Shapes: input (N, C, *); weight, bias (C). Errors: CT_ERR_SHAPE "Expected number of
   channels in input to be divisible by num_groups, but got input of shape [3, 4, 2] and
   num_groups=3". Mirrors: torch.nn.functional.group_norm. */
CTORCH_API ct_tensor *ct_group_norm(const ct_tensor *input, int64_t num_groups,
                                    const ct_tensor *weight, const ct_tensor *bias, double eps);

/* Options of ct_instance_norm.
   field            default  meaning
   weight, bias     NULL     (C) affine parameters
   use_input_stats  true     normalize with each instance's statistics (else the running ones)
   momentum         0.1      of the running statistics update
   eps              1e-5     added to the variance */
typedef struct ct_instance_norm_opts {
    const ct_tensor *weight, *bias;
    bool use_input_stats;
    double momentum, eps;
} ct_instance_norm_opts;

/* PyTorch's defaults: no weight or bias, use_input_stats true, momentum 0.1, eps 1e-5. */
CTORCH_API ct_instance_norm_opts ct_instance_norm_defaults(void);

/* Instance normalization: each (sample, channel) plane normalized over its spatial dims.
   Shapes: input (N, C, *); running_mean, running_var (C) or NULL (updated in place with the
   mean over the batch of the per-instance statistics). Computed as PyTorch does: batch_norm
   of the input viewed as (1, N * C, *). Errors: CT_ERR_VALUE "Expected more than 1 spatial
   element when training, got input size [3, 4, 1]". Mirrors: torch.nn.functional.instance_norm. */
CTORCH_API ct_tensor *ct_instance_norm(const ct_tensor *input, ct_tensor *running_mean,
                                       ct_tensor *running_var, const ct_instance_norm_opts *opts);

/* RMS normalization over the last n dims: y = x / sqrt(mean(x^2) + eps) * weight (weight
   NULL: 1). eps NAN means None: the machine epsilon of the input's dtype (float32's for
   float16/bfloat16, which compute in float32). Shapes as ct_layer_norm.
   Errors: CT_ERR_SHAPE "Given normalized_shape=[5], expected input with shape [*5], but got
   input of size[3, 4]". Mirrors: torch.nn.functional.rms_norm. */
CTORCH_API ct_tensor *ct_rms_norm(const ct_tensor *input, const int64_t *normalized_shape, int n,
                                  const ct_tensor *weight, double eps);

/* Dropout: in training, each element zeroed with probability p (drawn from the default
   generator exactly as PyTorch's CPU dropout: a bernoulli_(1 - p) mask divided by 1 - p) and
   the kept ones scaled by 1 / (1 - p); p = 0, training false or an empty input: the input
   (an alias); p = 1: zeros. Shapes: any. Errors: CT_ERR_VALUE "dropout probability has to be
   between 0 and 1, but got 1.5". Mirrors: torch.nn.functional.dropout (functional default
   training=True). */
CTORCH_API ct_tensor *ct_dropout(const ct_tensor *input, double p, bool training);

/* Channel dropout: whole channels (dim 1 of (N, C, *), every dim after 1 sharing one draw)
   zeroed with probability p, the others scaled by 1 / (1 - p); 3-D input is (N, C, L) as in
   PyTorch. Errors: as ct_dropout; CT_ERR_SHAPE "Feature dropout requires at least 2
   dimensions in the input". Mirrors: torch.nn.functional.dropout2d. */
CTORCH_API ct_tensor *ct_dropout2d(const ct_tensor *input, double p, bool training);

/* ---- modules ------------------------------------------------------------------------------ */
/* Options of the batch and instance norm modules.
   field                default (batch / instance)  meaning
   eps                  1e-5                        added to the variance
   momentum             0.1; NAN means None         None: cumulative average (1 / batches)
   affine               true / false                learnable weight (1) and bias (0)
   track_running_stats  true / false                running_mean (0), running_var (1),
                                                    num_batches_tracked (int64 0) buffers */
typedef struct ct_batch_norm_module_opts {
    double eps, momentum;
    bool affine, track_running_stats;
} ct_batch_norm_module_opts;

/* nn.BatchNorm's defaults. */
CTORCH_API ct_batch_norm_module_opts ct_batch_norm_module_defaults(void);
/* nn.InstanceNorm's defaults (affine and track_running_stats false). */
CTORCH_API ct_batch_norm_module_opts ct_instance_norm_module_defaults(void);

/* nn.BatchNorm1d(num_features): parameters weight, bias (float32, when affine); buffers
   running_mean, running_var, num_batches_tracked (when track_running_stats). Training
   forwards use the batch statistics and update the buffers; eval forwards use the running
   statistics (the batch ones without track_running_stats). opts NULL means defaults.
   Errors: CT_ERR_VALUE for num_features < 1. Mirrors: torch.nn.BatchNorm1d. */
CTORCH_API ct_module *ct_batch_norm1d_new(int64_t num_features,
                                          const ct_batch_norm_module_opts *opts);
/* nn.BatchNorm2d(num_features), as ct_batch_norm1d_new. Mirrors: torch.nn.BatchNorm2d. */
CTORCH_API ct_module *ct_batch_norm2d_new(int64_t num_features,
                                          const ct_batch_norm_module_opts *opts);
/* nn.BatchNorm3d(num_features), as ct_batch_norm1d_new. Mirrors: torch.nn.BatchNorm3d. */
CTORCH_API ct_module *ct_batch_norm3d_new(int64_t num_features,
                                          const ct_batch_norm_module_opts *opts);
/* The batch norm module's forward. Shapes: BatchNorm1d (N, C) or (N, C, L); BatchNorm2d
   (N, C, H, W); BatchNorm3d (N, C, D, H, W). Errors: CT_ERR_SHAPE "expected 4D input (got 3D
   input)", "expected 2D or 3D input (got 4D input)"; CT_ERR_VALUE "expected a BatchNorm2d
   module, got ReLU"; those of ct_batch_norm. Mirrors: torch.nn.BatchNorm2d.forward. */
CTORCH_API ct_tensor *ct_batch_norm_forward(ct_module *m, const ct_tensor *input);

/* nn.InstanceNorm2d(num_features): (N, C, H, W) or unbatched (C, H, W) input; opts NULL
   means nn.InstanceNorm2d's defaults. Mirrors: torch.nn.InstanceNorm2d. */
CTORCH_API ct_module *ct_instance_norm2d_new(int64_t num_features,
                                             const ct_batch_norm_module_opts *opts);

/* nn.LayerNorm(normalized_shape, eps, elementwise_affine, bias): weight (1) and bias (0) of
   normalized_shape, float32. Mirrors: torch.nn.LayerNorm. */
CTORCH_API ct_module *ct_layer_norm_new(const int64_t *normalized_shape, int n, double eps,
                                        bool elementwise_affine, bool bias);
/* The LayerNorm module's forward (ct_layer_norm with its parameters). */
CTORCH_API ct_tensor *ct_layer_norm_forward(ct_module *m, const ct_tensor *input);

/* nn.GroupNorm(num_groups, num_channels, eps, affine): weight (1) and bias (0) of
   (num_channels). Errors: CT_ERR_VALUE "num_channels must be divisible by num_groups".
   Mirrors: torch.nn.GroupNorm. */
CTORCH_API ct_module *ct_group_norm_new(int64_t num_groups, int64_t num_channels, double eps,
                                        bool affine);

/* nn.RMSNorm(normalized_shape, eps (NAN: None), elementwise_affine): weight (1).
   Mirrors: torch.nn.RMSNorm. */
CTORCH_API ct_module *ct_rms_norm_new(const int64_t *normalized_shape, int n, double eps,
                                      bool elementwise_affine);

/* nn.Dropout(p): ct_dropout(x, p, training mode of the module). Errors: CT_ERR_VALUE
   "dropout probability has to be between 0 and 1, but got 1.5". Mirrors: torch.nn.Dropout. */
CTORCH_API ct_module *ct_dropout_new(double p);
/* The Dropout module's forward. */
CTORCH_API ct_tensor *ct_dropout_forward(ct_module *m, const ct_tensor *input);
/* nn.Dropout2d(p): ct_dropout2d in training mode, identity in eval. Mirrors: torch.nn.Dropout2d. */
CTORCH_API ct_module *ct_dropout2d_new(double p);
