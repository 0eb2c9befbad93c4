/* ops/pointwise.h - elementwise ops with broadcasting and type promotion.
 *
 * Shapes: inputs broadcast to a common shape (PyTorch's "Broadcasting semantics").
 * Dtypes: the result dtype follows torch.result_type: tensors of higher category win, a
 * 0-dim tensor counts only when its category is higher, C scalars (`_scalar` forms) count
 * as int64 or the default float dtype and never widen the tensor's dtype within a
 * category (an integral scalar outside an integer tensor's range wraps modulo 2^bits, as in
 * PyTorch). Comparisons return bool. Ops marked "float" compute in floating point (integer
 * inputs give the default float dtype).
 * Returns: a new tensor owned by the current scope; in-place forms (trailing _) return
 * their first argument, bump its version and require the result to be castable to it.
 * Errors: CT_ERR_SHAPE "The size of tensor a (2) must match the size of tensor b (3) at
 * non-singleton dimension 1"; CT_ERR_DTYPE "result type Float can't be cast to the desired
 * output type Long"; NULL inputs return NULL.
 * Determinism: bit-exact across thread counts.
 */

/* input + alpha * other. Errors (also ct_sub_): CT_ERR_VALUE when the result is integral or
   bool and alpha is not an integer ("For integral input tensors, argument alpha must not be
   a floating point number.") or alpha does not fit the result dtype ("value cannot be
   converted to type int without overflow"). Mirrors: torch.add(input, other, alpha=alpha). */
CTORCH_API ct_tensor *ct_add(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_add_alpha(const ct_tensor *input, const ct_tensor *other, double alpha);
CTORCH_API ct_tensor *ct_add_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_add_(ct_tensor *self, const ct_tensor *other, double alpha);
/* input - alpha * other. Mirrors: torch.sub. */
CTORCH_API ct_tensor *ct_sub(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_sub_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_sub_(ct_tensor *self, const ct_tensor *other, double alpha);
/* Mirrors: torch.mul. */
CTORCH_API ct_tensor *ct_mul(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_mul_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_mul_(ct_tensor *self, const ct_tensor *other);
/* True division (float). Mirrors: torch.div (rounding_mode=None). */
CTORCH_API ct_tensor *ct_div(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_div_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_div_(ct_tensor *self, const ct_tensor *other);
/* div's rounding_mode: None (true division), 'trunc' (toward zero), 'floor' (toward -inf). */
typedef enum ct_rounding_mode {
    CT_ROUNDING_NONE = 0,
    CT_ROUNDING_TRUNC,
    CT_ROUNDING_FLOOR
} ct_rounding_mode;
/* input / other rounded as rounding_mode says: CT_ROUNDING_NONE is ct_div (float; gradients
   as ct_div); 'trunc' and 'floor' keep the promoted dtype, integers included (floor division
   as Python's //; float floor division as PyTorch's div_floor_floating), with zero
   gradients. Errors: CT_ERR_VALUE "ZeroDivisionError" when an integer divisor has a zero;
   CT_ERR_DTYPE "\"div\" not implemented for 'Bool'" for two bool operands and a rounding
   mode; CT_ERR_VALUE for a mode outside ct_rounding_mode ("div expected rounding_mode to be
   one of None, 'trunc', or 'floor' but found 7"). Mirrors: torch.div(input, other,
   rounding_mode=...). */
CTORCH_API ct_tensor *ct_div_mode(const ct_tensor *input, const ct_tensor *other,
                                  ct_rounding_mode rounding_mode);
/* input ** exponent. Mirrors: torch.pow. */
CTORCH_API ct_tensor *ct_pow(const ct_tensor *input, const ct_tensor *exponent);
CTORCH_API ct_tensor *ct_pow_scalar(const ct_tensor *input, double exponent);
/* Elementwise max/min, propagating NaN. Mirrors: torch.maximum / torch.minimum. */
CTORCH_API ct_tensor *ct_maximum(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_minimum(const ct_tensor *input, const ct_tensor *other);

/* Comparisons (bool result). Mirrors: torch.eq, ne, lt, le, gt, ge. */
CTORCH_API ct_tensor *ct_eq(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_ne(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_lt(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_le(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_gt(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_ge(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_eq_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_gt_scalar(const ct_tensor *input, double other);
CTORCH_API ct_tensor *ct_lt_scalar(const ct_tensor *input, double other);
/* Logical ops on truthiness (bool result). Mirrors: torch.logical_and/or/not. */
CTORCH_API ct_tensor *ct_logical_and(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_logical_or(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_logical_not(const ct_tensor *input);
/* condition ? input : other, all three broadcast; condition must be bool.
   Mirrors: torch.where. */
CTORCH_API ct_tensor *ct_where(const ct_tensor *condition, const ct_tensor *input,
                               const ct_tensor *other);

/* Unary ops. Gradient rules as PyTorch (abs and relu have gradient 0 at 0).
   Mirrors: torch.neg, abs, exp (float), log (float), sqrt (float), rsqrt (float), sin
   (float), cos (float), sigmoid (float), tanh (float), relu, square, reciprocal (float),
   log1p (float). */
CTORCH_API ct_tensor *ct_neg(const ct_tensor *input);
CTORCH_API ct_tensor *ct_abs(const ct_tensor *input);
CTORCH_API ct_tensor *ct_exp(const ct_tensor *input);
CTORCH_API ct_tensor *ct_log(const ct_tensor *input);
CTORCH_API ct_tensor *ct_log1p(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sqrt(const ct_tensor *input);
CTORCH_API ct_tensor *ct_rsqrt(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sin(const ct_tensor *input);
CTORCH_API ct_tensor *ct_cos(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sigmoid(const ct_tensor *input);
CTORCH_API ct_tensor *ct_tanh(const ct_tensor *input);
CTORCH_API ct_tensor *ct_relu(const ct_tensor *input);
CTORCH_API ct_tensor *ct_square(const ct_tensor *input);
CTORCH_API ct_tensor *ct_reciprocal(const ct_tensor *input);
/* Gauss error function (float; integer inputs give the default float dtype). Gradient:
   grad * 2/sqrt(pi) * exp(-input^2). Mirrors: torch.erf. */
CTORCH_API ct_tensor *ct_erf(const ct_tensor *input);
/* Bool masks of NaN, +-infinity and finite elements, for every dtype (integers and bool:
   false, false, true). Not differentiable. Mirrors: torch.isnan, torch.isinf,
   torch.isfinite. */
CTORCH_API ct_tensor *ct_isnan(const ct_tensor *input);
CTORCH_API ct_tensor *ct_isinf(const ct_tensor *input);
CTORCH_API ct_tensor *ct_isfinite(const ct_tensor *input);
/* In-place unary ops: self's values replaced by the op's, self returned. The gradient is the
   out-of-place op's (the old self is kept for those that read it). self must hold the
   result: ct_exp_ on an int64 tensor fails with CT_ERR_DTYPE "result type Float can't be cast
   to the desired output type Long"; a leaf that requires grad fails with CT_ERR_AUTOGRAD.
   Mirrors: Tensor.relu_, neg_, abs_, exp_, log_, sqrt_, sigmoid_, tanh_. */
CTORCH_API ct_tensor *ct_relu_(ct_tensor *self);
CTORCH_API ct_tensor *ct_neg_(ct_tensor *self);
CTORCH_API ct_tensor *ct_abs_(ct_tensor *self);
CTORCH_API ct_tensor *ct_exp_(ct_tensor *self);
CTORCH_API ct_tensor *ct_log_(ct_tensor *self);
CTORCH_API ct_tensor *ct_sqrt_(ct_tensor *self);
CTORCH_API ct_tensor *ct_sigmoid_(ct_tensor *self);
CTORCH_API ct_tensor *ct_tanh_(ct_tensor *self);
/* self ** exponent in place: integer self keeps integer arithmetic for an integral exponent
   (errors: CT_ERR_VALUE "Integers to negative integer powers are not allowed."), a
   fractional exponent needs a float self (else CT_ERR_DTYPE, as ct_exp_). Gradient as
   ct_pow_scalar. Mirrors: Tensor.pow_(exponent) with a Scalar exponent. */
CTORCH_API ct_tensor *ct_pow_(ct_tensor *self, double exponent);
/* Clamps into [min, max]; pass -INFINITY / INFINITY to leave a side open. NaN stays NaN;
   the gradient flows where min <= x <= max. Errors: CT_ERR_VALUE when min > max or a bound
   of an integer tensor leaves nothing representable. ct_clamp_ clamps self in place (an
   integer self takes integral bounds only). Mirrors: torch.clamp, Tensor.clamp_. */
CTORCH_API ct_tensor *ct_clamp(const ct_tensor *input, double min, double max);
CTORCH_API ct_tensor *ct_clamp_(ct_tensor *self, double min, double max);

/* input + value * tensor1 * tensor2 (addcmul) and input + value * tensor1 / tensor2
   (addcdiv), the three broadcast and promoted together; value is PyTorch's keyword (its
   default is 1), truncated toward zero for an integral result. Gradients: grad,
   grad * value * tensor2, grad * value * tensor1 (addcmul); grad, grad * value / tensor2,
   -grad * value * tensor1 / tensor2^2 (addcdiv). The _ forms write into self (its shape,
   a dtype the result casts to). Errors: CT_ERR_DTYPE for addcdiv of two integral tensors
   ("Integer division with addcdiv is no longer supported, ..."), "\"addcmul\" not
   implemented for 'Bool'"; CT_ERR_VALUE when value does not fit an integral result.
   Mirrors: torch.addcmul, torch.addcdiv, Tensor.addcmul_, Tensor.addcdiv_. */
CTORCH_API ct_tensor *ct_addcmul(const ct_tensor *input, const ct_tensor *tensor1,
                                 const ct_tensor *tensor2, double value);
CTORCH_API ct_tensor *ct_addcmul_(ct_tensor *self, const ct_tensor *tensor1,
                                  const ct_tensor *tensor2, double value);
CTORCH_API ct_tensor *ct_addcdiv(const ct_tensor *input, const ct_tensor *tensor1,
                                 const ct_tensor *tensor2, double value);
CTORCH_API ct_tensor *ct_addcdiv_(ct_tensor *self, const ct_tensor *tensor1,
                                  const ct_tensor *tensor2, double value);

/* input + weight * (end - input), computed as PyTorch's vectorized kernel does (from the
   nearer end: fma(weight, end - input, input) for |weight| < 0.5, else fma(weight - 1,
   end - input, end)); weight a tensor (ct_lerp, ct_lerp_) or a scalar (ct_lerp_scalar,
   ct_lerp_scalar_). Float only; input, end and weight broadcast and must share a dtype
   (PyTorch does not promote). Gradients: grad * (1 - weight), grad * weight, grad * (end -
   input). The _ forms write into self. Errors: CT_ERR_DTYPE "expected dtype float for `end`
   but got dtype double", "\"lerp\" not implemented for 'Long'"; CT_ERR_SHAPE as other
   broadcasting ops. Mirrors: torch.lerp (lerp.Tensor, lerp.Scalar), Tensor.lerp_. */
CTORCH_API ct_tensor *ct_lerp(const ct_tensor *input, const ct_tensor *end,
                              const ct_tensor *weight);
CTORCH_API ct_tensor *ct_lerp_scalar(const ct_tensor *input, const ct_tensor *end, double weight);
CTORCH_API ct_tensor *ct_lerp_(ct_tensor *self, const ct_tensor *end, const ct_tensor *weight);
CTORCH_API ct_tensor *ct_lerp_scalar_(ct_tensor *self, const ct_tensor *end, double weight);

/* Fills self with value. Errors: CT_ERR_VALUE when value does not fit self's dtype, as
   ct_full. Mirrors: Tensor.fill_. */
CTORCH_API ct_tensor *ct_fill_(ct_tensor *self, double value);
/* Mirrors: Tensor.zero_. */
CTORCH_API ct_tensor *ct_zero_(ct_tensor *self);
/* Copies src (broadcast to self's shape, cast to self's dtype) into self; src may be on
   another device (it is brought over first as ct_to_device, and its gradient goes back).
   Errors: CT_ERR_DEVICE when a device has no backend. Mirrors: Tensor.copy_. */
CTORCH_API ct_tensor *ct_copy_(ct_tensor *self, const ct_tensor *src);
/* A copy of input with its own storage (contiguous), recorded by autograd.
   Mirrors: torch.clone. */
CTORCH_API ct_tensor *ct_clone(const ct_tensor *input);
/* input converted to dtype (returns input itself, as a new reference in the scope, when
   the dtype already matches); differentiable between float dtypes. Float to integer
   truncates toward zero and is defined for every value, giving PyTorch's x86-64 results:
   NaN, infinities and values outside int32's range become INT32_MIN for int32 (INT64_MIN
   and int64's range for int64); int8/int16/uint8 take the low bits of that int32 (uint8
   from float64: of the int64); to bool, NaN is true. Integers narrow modulo 2^bits.
   Errors: CT_ERR_VALUE for a dtype outside ct_dtype. Mirrors: Tensor.to(dtype). */
CTORCH_API ct_tensor *ct_to_dtype(const ct_tensor *input, ct_dtype dtype);
/* input on device: input itself (a new reference in the scope, as ct_alias) when it is
   already there, else a copy (contiguous, same shape and dtype) made through the backends'
   copy; recorded by autograd (ToCopyBackward0: the gradient goes back to input's device).
   Returns: a new tensor owned by the current scope. Errors: CT_ERR_VALUE for a device type
   outside ct_device_type; CT_ERR_DEVICE when no backend is registered for the device.
   Mirrors: Tensor.to(device). */
CTORCH_API ct_tensor *ct_to_device(const ct_tensor *input, ct_device device);
/* ct_to_device(input, ct_device_cpu()). Mirrors: Tensor.cpu(). */
CTORCH_API ct_tensor *ct_cpu(const ct_tensor *input);
/* The dtype of an op over a and b. Mirrors: torch.result_type. */
CTORCH_API ct_dtype ct_result_type(const ct_tensor *a, const ct_tensor *b);
