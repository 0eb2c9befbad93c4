/* nn/init.h - parameter initialization (torch.nn.init).
 *
 * Every function fills its tensor in place without recording autograd history (as PyTorch
 * runs them under no_grad), bumps its version and returns it. A NULL generator means the
 * default one. Errors: CT_ERR_DTYPE for non-float tensors; CT_ERR_SHAPE for fan
 * computations on tensors with fewer than 2 dims ("Fan in and fan out can not be computed
 * for tensor with fewer than 2 dimensions").
 */
typedef enum ct_nonlinearity {
    CT_NONLINEARITY_LINEAR = 0, CT_NONLINEARITY_SIGMOID, CT_NONLINEARITY_TANH,
    CT_NONLINEARITY_RELU, CT_NONLINEARITY_LEAKY_RELU, CT_NONLINEARITY_SELU
} ct_nonlinearity;
typedef enum ct_fan_mode { CT_FAN_IN = 0, CT_FAN_OUT } ct_fan_mode;

/* The recommended gain: linear/sigmoid 1, tanh 5/3, relu sqrt(2), leaky_relu
   sqrt(2 / (1 + param^2)), selu 3/4. Errors: CT_ERR_VALUE (returns NAN) for another value
   ("Unsupported nonlinearity 17"); the kaiming initializers fail the same way, and with
   "Mode 17 not supported" for a bad mode. Mirrors: torch.nn.init.calculate_gain. */
CTORCH_API double ct_init_calculate_gain(ct_nonlinearity nonlinearity, double param);
/* fan_in = size(1) * receptive field, fan_out = size(0) * receptive field, for a weight of
   shape (out, in, k...); either output may be NULL (not written).
   Mirrors: torch.nn.init._calculate_fan_in_and_fan_out. */
CTORCH_API ct_status ct_init_calculate_fan_in_and_fan_out(const ct_tensor *t, int64_t *fan_in,
                                                          int64_t *fan_out);
/* U(a, b). Mirrors: torch.nn.init.uniform_. */
CTORCH_API ct_tensor *ct_init_uniform_(ct_tensor *t, double a, double b, ct_generator *g);
/* N(mean, std^2). Mirrors: torch.nn.init.normal_. */
CTORCH_API ct_tensor *ct_init_normal_(ct_tensor *t, double mean, double std, ct_generator *g);
/* Mirrors: torch.nn.init.constant_ / zeros_ / ones_. */
CTORCH_API ct_tensor *ct_init_constant_(ct_tensor *t, double value);
CTORCH_API ct_tensor *ct_init_zeros_(ct_tensor *t);
CTORCH_API ct_tensor *ct_init_ones_(ct_tensor *t);
/* U(-bound, bound) with bound = gain * sqrt(3 / fan), gain from (nonlinearity, a).
   Mirrors: torch.nn.init.kaiming_uniform_(t, a, mode, nonlinearity). */
CTORCH_API ct_tensor *ct_init_kaiming_uniform_(ct_tensor *t, double a, ct_fan_mode mode,
                                               ct_nonlinearity nonlinearity, ct_generator *g);
/* N(0, std^2) with std = gain / sqrt(fan). Mirrors: torch.nn.init.kaiming_normal_. */
CTORCH_API ct_tensor *ct_init_kaiming_normal_(ct_tensor *t, double a, ct_fan_mode mode,
                                              ct_nonlinearity nonlinearity, ct_generator *g);
/* U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)). Mirrors: torch.nn.init.xavier_uniform_. */
CTORCH_API ct_tensor *ct_init_xavier_uniform_(ct_tensor *t, double gain, ct_generator *g);
/* N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)). Mirrors: xavier_normal_. */
CTORCH_API ct_tensor *ct_init_xavier_normal_(ct_tensor *t, double gain, ct_generator *g);
/* N(mean, std^2) truncated to [a, b] (absolute bounds), drawn as PyTorch 2.15 draws it (so
   bit-exact for the same generator state): when [a, b] holds more than 0.3 of the mass, normal
   draws with the ones outside [a, b] redrawn until none is; else U(a, b) candidates, each
   accepted when log U(0, 1) <= -0.5 ((c - mean) / std)^2 - that at the mode, the rejected ones
   redrawn. PyTorch's defaults: mean 0, std 1, a -2, b 2. Mirrors: torch.nn.init.trunc_normal_. */
CTORCH_API ct_tensor *ct_init_trunc_normal_(ct_tensor *t, double mean, double std, double a,
                                            double b, ct_generator *g);
/* The identity matrix (2-D t). Errors: CT_ERR_VALUE "Only tensors with 2 dimensions are
   supported". Mirrors: torch.nn.init.eye_. */
CTORCH_API ct_tensor *ct_init_eye_(ct_tensor *t);
/* The Dirac delta of a 3-, 4- or 5-D convolution weight (out, in, k...): zeros but
   t[g * out/groups + d, d, k1/2, ...] = 1 for d < min(out/groups, in), so the convolution
   keeps its input's channels (groups: PyTorch's default 1). Errors: CT_ERR_VALUE "Only tensors
   with 3, 4, or 5 dimensions are supported", "dim 0 must be divisible by groups".
   Mirrors: torch.nn.init.dirac_. */
CTORCH_API ct_tensor *ct_init_dirac_(ct_tensor *t, int64_t groups);
/* A (semi-)orthogonal matrix (t viewed as (size(0), numel / size(0))) times gain: Q of the QR
   of a N(0, 1) matrix drawn as PyTorch draws it (transposed when rows < cols), its columns'
   signs fixed by sign(diag(R)). gain: PyTorch's default 1. Errors: CT_ERR_VALUE "Only tensors
   with 2 or more dimensions are supported". Mirrors: torch.nn.init.orthogonal_. */
CTORCH_API ct_tensor *ct_init_orthogonal_(ct_tensor *t, double gain, ct_generator *g);
/* N(0, std^2) (PyTorch's default std 0.01) with ceil(sparsity * rows) entries of each column
   zeroed, their rows from randperm on the default generator (as PyTorch, whatever g is).
   Errors: CT_ERR_VALUE "Only tensors with 2 dimensions are supported".
   Mirrors: torch.nn.init.sparse_. */
CTORCH_API ct_tensor *ct_init_sparse_(ct_tensor *t, double sparsity, double std,
                                      ct_generator *g);
