/* nn/activation.h - activation functions (torch.nn.functional) and their modules.
 *
 * Each function takes a floating-point input of any shape and strides and returns a new
 * tensor of its shape and dtype, owned by the current scope (float16/bfloat16 compute in
 * float32). Gradients follow PyTorch's derivatives.yaml (the backward is its own op: a
 * second derivative is not recorded). Errors: CT_ERR_DTYPE "\"gelu\" not implemented for
 * 'Long'" for integer input. Results are elementwise: the same for any thread count.
 */

/* The approximation of ct_gelu: none (the default, exact erf) or tanh. */
typedef enum ct_gelu_approximate { CT_GELU_NONE = 0, CT_GELU_TANH } ct_gelu_approximate;

/* x * Phi(x) (Phi: the standard normal CDF), or with approximate CT_GELU_TANH
   0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Errors: CT_ERR_VALUE "approximate
   argument must be either none or tanh." Mirrors: torch.nn.functional.gelu. */
CTORCH_API ct_tensor *ct_gelu(const ct_tensor *input, ct_gelu_approximate approximate);
/* x * sigmoid(x). Mirrors: torch.nn.functional.silu. */
CTORCH_API ct_tensor *ct_silu(const ct_tensor *input);
/* max(0, x) + negative_slope * min(0, x) (PyTorch's default slope 0.01).
   Mirrors: torch.nn.functional.leaky_relu. */
CTORCH_API ct_tensor *ct_leaky_relu(const ct_tensor *input, double negative_slope);
/* x for x > 0, else alpha (exp(x) - 1) (default alpha 1). Mirrors: torch.nn.functional.elu. */
CTORCH_API ct_tensor *ct_elu(const ct_tensor *input, double alpha);
/* scale * elu(x, alpha) with PyTorch's constants alpha = 1.6732632423543772848170429916717,
   scale = 1.0507009873554804934193349852946. Mirrors: torch.nn.functional.selu. */
CTORCH_API ct_tensor *ct_selu(const ct_tensor *input);
/* max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (default alpha 1). Errors: CT_ERR_VALUE
   "ZeroDivisionError" for alpha 0. Mirrors: torch.nn.functional.celu. */
CTORCH_API ct_tensor *ct_celu(const ct_tensor *input, double alpha);
/* log(1 + exp(beta x)) / beta, x itself where beta x > threshold (defaults beta 1,
   threshold 20). Mirrors: torch.nn.functional.softplus. */
CTORCH_API ct_tensor *ct_softplus(const ct_tensor *input, double beta, double threshold);
/* x * relu6(x + 3) / 6. Mirrors: torch.nn.functional.hardswish. */
CTORCH_API ct_tensor *ct_hardswish(const ct_tensor *input);
/* relu6(x + 3) / 6. Mirrors: torch.nn.functional.hardsigmoid. */
CTORCH_API ct_tensor *ct_hardsigmoid(const ct_tensor *input);
/* x clamped to [min_val, max_val] (defaults -1, 1); gradient 0 at and beyond the bounds.
   Errors: CT_ERR_VALUE "min_val cannot be greater than max_val".
   Mirrors: torch.nn.functional.hardtanh. */
CTORCH_API ct_tensor *ct_hardtanh(const ct_tensor *input, double min_val, double max_val);
/* min(max(0, x), 6) (hardtanh(x, 0, 6)). Mirrors: torch.nn.functional.relu6. */
CTORCH_API ct_tensor *ct_relu6(const ct_tensor *input);
/* x * tanh(softplus(x)). Mirrors: torch.nn.functional.mish. */
CTORCH_API ct_tensor *ct_mish(const ct_tensor *input);
/* log(sigmoid(x)) = min(0, x) - log1p(exp(-|x|)). Mirrors: torch.nn.functional.logsigmoid. */
CTORCH_API ct_tensor *ct_logsigmoid(const ct_tensor *input);
/* x / (1 + |x|). Mirrors: torch.nn.functional.softsign. */
CTORCH_API ct_tensor *ct_softsign(const ct_tensor *input);
/* x - tanh(x). Mirrors: torch.nn.functional.tanhshrink. */
CTORCH_API ct_tensor *ct_tanhshrink(const ct_tensor *input);
/* x - lambd for x > lambd, x + lambd for x < -lambd, else 0 (default lambd 0.5). Errors:
   CT_ERR_VALUE "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -1".
   Mirrors: torch.nn.functional.softshrink. */
CTORCH_API ct_tensor *ct_softshrink(const ct_tensor *input, double lambd);
/* 0 for -lambd <= x <= lambd, else x (default lambd 0.5).
   Mirrors: torch.nn.functional.hardshrink. */
CTORCH_API ct_tensor *ct_hardshrink(const ct_tensor *input, double lambd);
/* value where x <= threshold, else x. Mirrors: torch.nn.functional.threshold. */
CTORCH_API ct_tensor *ct_threshold(const ct_tensor *input, double threshold, double value);
/* max(0, x) + weight * min(0, x), weight (1) shared or (C) per channel (dim 1 of input).
   Errors: CT_ERR_SHAPE "Mismatch of parameter numbers and input channel size. Found parameter
   numbers = 3 and channel size = 4." Mirrors: torch.nn.functional.prelu. */
CTORCH_API ct_tensor *ct_prelu(const ct_tensor *input, const ct_tensor *weight);
/* Randomized leaky ReLU: in training each x <= 0 is multiplied by a slope drawn uniformly
   from [lower, upper) (one draw per such element in row-major order from the default
   generator, as PyTorch's CPU kernel); in eval by (lower + upper) / 2 (defaults 1/8, 1/3,
   training false). Errors: CT_ERR_VALUE "Lower bound should be less than or equal to the
   upper bound". Mirrors: torch.nn.functional.rrelu. */
CTORCH_API ct_tensor *ct_rrelu(const ct_tensor *input, double lower, double upper, bool training);
/* a * sigmoid(b), a and b the two halves of input along dim (default -1). Errors:
   CT_ERR_SHAPE "Halving dimension must be even, but dimension 1 is size 5".
   Mirrors: torch.nn.functional.glu. */
CTORCH_API ct_tensor *ct_glu(const ct_tensor *input, int64_t dim);
/* softmax(-x) along dim. Mirrors: torch.nn.functional.softmin. */
CTORCH_API ct_tensor *ct_softmin(const ct_tensor *input, int64_t dim);

/* ---- modules (stateless unless noted; forward with ct_module_forward) --------------------- */
/* nn.GELU(approximate). */
CTORCH_API ct_module *ct_gelu_new(ct_gelu_approximate approximate);
/* nn.SiLU(). */
CTORCH_API ct_module *ct_silu_new(void);
/* nn.LeakyReLU(negative_slope) (PyTorch's default 0.01). */
CTORCH_API ct_module *ct_leaky_relu_new(double negative_slope);
/* nn.ELU(alpha) (default 1). */
CTORCH_API ct_module *ct_elu_new(double alpha);
/* nn.SELU(). */
CTORCH_API ct_module *ct_selu_new(void);
/* nn.Softplus(beta, threshold) (defaults 1, 20). */
CTORCH_API ct_module *ct_softplus_new(double beta, double threshold);
/* nn.Hardtanh(min_val, max_val) (defaults -1, 1). Errors: as ct_hardtanh. */
CTORCH_API ct_module *ct_hardtanh_new(double min_val, double max_val);
/* nn.ReLU6(). */
CTORCH_API ct_module *ct_relu6_new(void);
/* nn.Mish(). */
CTORCH_API ct_module *ct_mish_new(void);
/* nn.PReLU(num_parameters, init): parameter weight (num_parameters) float32 filled with init
   (PyTorch's defaults 1, 0.25). Errors: CT_ERR_VALUE for num_parameters < 1. */
CTORCH_API ct_module *ct_prelu_new(int64_t num_parameters, double init);
/* nn.GLU(dim) (default -1). */
CTORCH_API ct_module *ct_glu_new(int64_t dim);
/* nn.Softmax(dim): pass dim (PyTorch's implicit dim=None is deprecated). */
CTORCH_API ct_module *ct_softmax_new(int64_t dim);
/* nn.LogSoftmax(dim). */
CTORCH_API ct_module *ct_log_softmax_new(int64_t dim);
/* nn.Unflatten(dim, unflattened_size): dim of the input as the n sizes (one may be -1).
   Errors: CT_ERR_VALUE for n outside [1, 8]. */
CTORCH_API ct_module *ct_unflatten_new(int64_t dim, const int64_t *sizes, int n);
