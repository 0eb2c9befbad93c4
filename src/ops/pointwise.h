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
/* sqrt(input^2 + other^2) without undue overflow or underflow (float; integer inputs are
   rejected as PyTorch does). Gradient: grad * input / out and grad * other / out (NaN at
   input == other == 0, as PyTorch). Errors: CT_ERR_DTYPE "\"hypot\" not implemented for
   'Long'". Mirrors: torch.hypot. */
CTORCH_API ct_tensor *ct_hypot(const ct_tensor *input, const ct_tensor *other);

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
/* A copy of the CPU tensor input (contiguous, same shape and dtype) in page-locked host
   memory from the registered backend that provides it (ct_backend's host_alloc: the CUDA
   backend's), for fast and asynchronous copies to the device; input itself (a new reference
   in the scope, as ct_alias) when it is already pinned. Differentiable (PinMemoryBackward0:
   the gradient passes through). Returns: a tensor owned by the current scope, for which
   ct_is_pinned is true. Errors: CT_ERR_DEVICE "cannot pin a tensor on cuda:0: only dense
   CPU tensors can be pinned", and "Found no accelerator on your system..." when no
   registered backend has pinned memory (PyTorch: "Found no NVIDIA driver on your system");
   CT_ERR_OOM from the backend's allocator. Mirrors: Tensor.pin_memory. */
CTORCH_API ct_tensor *ct_pin_memory(const ct_tensor *input);
/* The dtype of an op over a and b. Mirrors: torch.result_type. */
CTORCH_API ct_dtype ct_result_type(const ct_tensor *a, const ct_tensor *b);

/* ---- issue 7, second slice ------------------------------------------------------------- */
/* Float unary ops (integer and bool inputs give the default float dtype), with PyTorch's
   gradients: expm1 grad * (out + 1); exp2 grad * out * ln 2; log2 grad / (x ln 2); log10
   grad / (x ln 10); tan grad * (1 + out^2); asin grad / sqrt(1 - x^2); acos -grad /
   sqrt(1 - x^2); atan grad / (1 + x^2); sinh grad * cosh(x); cosh grad * sinh(x); asinh
   grad / sqrt(x^2 + 1); acosh grad / sqrt(x^2 - 1); atanh grad / (1 - x^2); erfc
   -grad * 2/sqrt(pi) * exp(-x^2); erfinv grad * sqrt(pi)/2 * exp(out^2) (erfinv: PyTorch's
   rational guess and two Newton steps; +-inf at +-1, NaN beyond). Mirrors: torch.expm1,
   exp2, log2, log10, tan, asin (arcsin), acos (arccos), atan (arctan), sinh, cosh, asinh
   (arcsinh), acosh (arccosh), atanh (arctanh), erfc, erfinv. */
CTORCH_API ct_tensor *ct_expm1(const ct_tensor *input);
CTORCH_API ct_tensor *ct_exp2(const ct_tensor *input);
CTORCH_API ct_tensor *ct_log2(const ct_tensor *input);
CTORCH_API ct_tensor *ct_log10(const ct_tensor *input);
CTORCH_API ct_tensor *ct_tan(const ct_tensor *input);
CTORCH_API ct_tensor *ct_asin(const ct_tensor *input);
CTORCH_API ct_tensor *ct_acos(const ct_tensor *input);
CTORCH_API ct_tensor *ct_atan(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sinh(const ct_tensor *input);
CTORCH_API ct_tensor *ct_cosh(const ct_tensor *input);
CTORCH_API ct_tensor *ct_asinh(const ct_tensor *input);
CTORCH_API ct_tensor *ct_acosh(const ct_tensor *input);
CTORCH_API ct_tensor *ct_atanh(const ct_tensor *input);
CTORCH_API ct_tensor *ct_erfc(const ct_tensor *input);
CTORCH_API ct_tensor *ct_erfinv(const ct_tensor *input);
/* The same ops in place: self's values replaced, self returned (self must be floating point:
   CT_ERR_DTYPE "result type Float can't be cast to the desired output type Long"). Mirrors:
   Tensor.expm1_, exp2_, log2_, log10_, tan_, asin_, acos_, atan_, sinh_, cosh_, asinh_,
   acosh_, atanh_, erfc_, erfinv_. */
CTORCH_API ct_tensor *ct_expm1_(ct_tensor *self);
CTORCH_API ct_tensor *ct_exp2_(ct_tensor *self);
CTORCH_API ct_tensor *ct_log2_(ct_tensor *self);
CTORCH_API ct_tensor *ct_log10_(ct_tensor *self);
CTORCH_API ct_tensor *ct_tan_(ct_tensor *self);
CTORCH_API ct_tensor *ct_asin_(ct_tensor *self);
CTORCH_API ct_tensor *ct_acos_(ct_tensor *self);
CTORCH_API ct_tensor *ct_atan_(ct_tensor *self);
CTORCH_API ct_tensor *ct_sinh_(ct_tensor *self);
CTORCH_API ct_tensor *ct_cosh_(ct_tensor *self);
CTORCH_API ct_tensor *ct_asinh_(ct_tensor *self);
CTORCH_API ct_tensor *ct_acosh_(ct_tensor *self);
CTORCH_API ct_tensor *ct_atanh_(ct_tensor *self);
CTORCH_API ct_tensor *ct_erfc_(ct_tensor *self);
CTORCH_API ct_tensor *ct_erfinv_(ct_tensor *self);
/* Rounding: floor, ceil, round (half to even), trunc keep every numeric dtype (integers are
   copied); frac = input - trunc(input) is float only. Gradients: zeros (frac: grad). The _
   forms write into self. Errors: CT_ERR_DTYPE "\"floor\" not implemented for 'Bool'",
   "\"frac\" not implemented for 'Long'". Mirrors: torch.floor, ceil, round (decimals=0),
   trunc (fix), frac, Tensor.floor_, ceil_, round_, trunc_, frac_. */
CTORCH_API ct_tensor *ct_floor(const ct_tensor *input);
CTORCH_API ct_tensor *ct_ceil(const ct_tensor *input);
CTORCH_API ct_tensor *ct_round(const ct_tensor *input);
CTORCH_API ct_tensor *ct_trunc(const ct_tensor *input);
CTORCH_API ct_tensor *ct_frac(const ct_tensor *input);
CTORCH_API ct_tensor *ct_floor_(ct_tensor *self);
CTORCH_API ct_tensor *ct_ceil_(ct_tensor *self);
CTORCH_API ct_tensor *ct_round_(ct_tensor *self);
CTORCH_API ct_tensor *ct_trunc_(ct_tensor *self);
CTORCH_API ct_tensor *ct_frac_(ct_tensor *self);
/* -1, 0 or 1 by the sign of input (NaN: 0), in input's dtype (bool: input); sgn is sign for
   real dtypes. Gradient: zeros. signbit: whether the sign bit is set (bool; true for -0.0
   and negative integers). Mirrors: torch.sign, torch.sgn, torch.signbit. */
CTORCH_API ct_tensor *ct_sign(const ct_tensor *input);
CTORCH_API ct_tensor *ct_sgn(const ct_tensor *input);
CTORCH_API ct_tensor *ct_signbit(const ct_tensor *input);
/* sign and sgn in place. Mirrors: Tensor.sign_, Tensor.sgn_. */
CTORCH_API ct_tensor *ct_sign_(ct_tensor *self);
CTORCH_API ct_tensor *ct_sgn_(ct_tensor *self);
/* Bool masks of +inf, of -inf, and of real values (every element: no complex dtypes), for
   every dtype. Mirrors: torch.isposinf, torch.isneginf, torch.isreal. */
CTORCH_API ct_tensor *ct_isposinf(const ct_tensor *input);
CTORCH_API ct_tensor *ct_isneginf(const ct_tensor *input);
CTORCH_API ct_tensor *ct_isreal(const ct_tensor *input);
/* input with NaN, +inf and -inf replaced by nan, *posinf and *neginf; a NULL posinf or
   neginf is PyTorch's None: the largest / lowest finite value of input's dtype (pass nan = 0
   for PyTorch's default). Integer and bool inputs are copied. Gradient: grad where input is
   finite, else 0. ct_nan_to_num_ writes into self. Mirrors: torch.nan_to_num(input, nan=0.0,
   posinf=None, neginf=None), Tensor.nan_to_num_. */
CTORCH_API ct_tensor *ct_nan_to_num(const ct_tensor *input, double nan, const double *posinf,
                                    const double *neginf);
CTORCH_API ct_tensor *ct_nan_to_num_(ct_tensor *self, double nan, const double *posinf,
                                     const double *neginf);
/* log(z / (1 - z)) with z = input clamped to [eps, 1 - eps]; eps < 0 (pass -1) is PyTorch's
   eps=None: no clamping (PyTorch treats a negative eps so too). Float (integer inputs give the
   default float dtype). Gradient: grad / (x (1 - x)), 0 outside [eps, 1 - eps] (NaN outside
   [0, 1] without eps). Mirrors: torch.logit(input, eps=None). */
CTORCH_API ct_tensor *ct_logit(const ct_tensor *input, double eps);
/* ct_logit in place (float self). Mirrors: Tensor.logit_(eps=None). */
CTORCH_API ct_tensor *ct_logit_(ct_tensor *self, double eps);
/* Float binary ops. atan2(input, other) is the angle of (other, input) in (-pi, pi]; xlogy
   is input * log(other), 0 where input == 0 unless other is NaN; both take integer inputs
   (default float dtype). logaddexp = log(e^input + e^other), logaddexp2 = log2(2^input +
   2^other) take float inputs only (as ct_hypot). Gradients (PyTorch):
   atan2 grad * other / r, -grad * input / r with r = input^2 + other^2; xlogy xlogy(grad,
   other) (0 where input == 0 and other <= 0), grad * input / other; logaddexp grad / (1 +
   e^(other - input)) and symmetric; logaddexp2 with 2^. Errors: CT_ERR_DTYPE
   "\"logaddexp\" not implemented for 'Long'" (also logaddexp2). Mirrors: torch.atan2
   (arctan2), xlogy, logaddexp, logaddexp2. */
CTORCH_API ct_tensor *ct_atan2(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_xlogy(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_logaddexp(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_logaddexp2(const ct_tensor *input, const ct_tensor *other);
/* atan2 and xlogy in place (float self). Mirrors: Tensor.atan2_, Tensor.xlogy_. */
CTORCH_API ct_tensor *ct_atan2_(ct_tensor *self, const ct_tensor *other);
CTORCH_API ct_tensor *ct_xlogy_(ct_tensor *self, const ct_tensor *other);
/* Remainders and floor division, integer or float (bool: CT_ERR_DTYPE "\"fmod\" not
   implemented for 'Bool'"): fmod has the sign of input (C's fmod and %), remainder the sign of
   other (Python's %), floor_divide is div(rounding_mode='floor'). Gradients: grad and
   -grad * trunc(input / other) (fmod), -grad * floor(input / other) (remainder);
   floor_divide is not differentiable. The _ forms write into self. Errors: CT_ERR_VALUE
   "ZeroDivisionError" when an integer divisor has a zero. Mirrors: torch.fmod, remainder,
   floor_divide, Tensor.fmod_, remainder_, floor_divide_. */
CTORCH_API ct_tensor *ct_fmod(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_remainder(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_floor_divide(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_fmod_(ct_tensor *self, const ct_tensor *other);
CTORCH_API ct_tensor *ct_remainder_(ct_tensor *self, const ct_tensor *other);
CTORCH_API ct_tensor *ct_floor_divide_(ct_tensor *self, const ct_tensor *other);
/* Elementwise max/min ignoring NaN (NaN only where both are), every dtype. Gradient: to input
   where it was chosen (input >= other for fmax, <= for fmin, or other NaN), else to other.
   Mirrors: torch.fmax, torch.fmin. */
CTORCH_API ct_tensor *ct_fmax(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_fmin(const ct_tensor *input, const ct_tensor *other);
/* Bitwise ops on integer and bool tensors (shifts: integers only), not differentiable. Shifts
   as PyTorch: a count that is negative or at least the width gives 0 (left; right of an
   unsigned value) or the sign (right, signed). Errors: CT_ERR_DTYPE "\"bitwise_and\" not
   implemented for 'Float'", "\"bitwise_left_shift\" not implemented for 'Bool'".
   Mirrors: torch.bitwise_and, bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift
   (<<), bitwise_right_shift (>>). */
CTORCH_API ct_tensor *ct_bitwise_and(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_or(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_xor(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_not(const ct_tensor *input);
CTORCH_API ct_tensor *ct_bitwise_left_shift(const ct_tensor *input, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_right_shift(const ct_tensor *input, const ct_tensor *other);
/* The bitwise ops in place (self's integer or bool dtype must hold the result). Mirrors:
   Tensor.bitwise_and_, bitwise_or_, bitwise_xor_, bitwise_not_, bitwise_left_shift_,
   bitwise_right_shift_. */
CTORCH_API ct_tensor *ct_bitwise_and_(ct_tensor *self, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_or_(ct_tensor *self, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_xor_(ct_tensor *self, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_not_(ct_tensor *self);
CTORCH_API ct_tensor *ct_bitwise_left_shift_(ct_tensor *self, const ct_tensor *other);
CTORCH_API ct_tensor *ct_bitwise_right_shift_(ct_tensor *self, const ct_tensor *other);
/* Exclusive or of truthiness (bool result, any dtypes). Mirrors: torch.logical_xor. */
CTORCH_API ct_tensor *ct_logical_xor(const ct_tensor *input, const ct_tensor *other);
/* ct_logical_xor written into self (0/1 in self's dtype). Mirrors: Tensor.logical_xor_. */
CTORCH_API ct_tensor *ct_logical_xor_(ct_tensor *self, const ct_tensor *other);
/* |input - other| <= atol + rtol * |other| (or input == other; NaN == NaN when equal_nan),
   broadcast, bool result. PyTorch's defaults: rtol 1e-05, atol 1e-08, equal_nan false.
   Errors: CT_ERR_DTYPE "Float did not match Double" (dtypes must match); CT_ERR_VALUE "rtol
   must be greater than or equal to zero, but got -1" (also atol). Mirrors: torch.isclose. */
CTORCH_API ct_tensor *ct_isclose(const ct_tensor *input, const ct_tensor *other, double rtol,
                                 double atol, bool equal_nan);
/* torch._foreach_*: one op over lists of n tensors. self[k] is updated in place by the
   per-tensor op (ct_add_, ct_mul_, ct_lerp_scalar_, ct_zero_), whose autograd applies;
   ct_foreach_sqrt writes ct_sqrt(self[k]) to out[k] (owned by the current scope) and returns
   n. Returns: CT_OK (ct_foreach_sqrt: n), else the error (-1). Errors: CT_ERR_VALUE "Tensor
   list must have at least one tensor.", "Tensor lists must have the same number of tensors,
   got 2 and 1", capacity < n; the per-tensor op's errors (tensors before the failing one are
   updated). Mirrors: torch._foreach_add_(self, other, alpha=1), _foreach_mul_(self, other),
   _foreach_lerp_(self, tensors1, weight), _foreach_zero_(self), _foreach_sqrt(self). */
CTORCH_API ct_status ct_foreach_add_(ct_tensor *const *self, int n, const ct_tensor *const *other,
                                     int n_other, double alpha);
CTORCH_API ct_status ct_foreach_mul_(ct_tensor *const *self, int n, const ct_tensor *const *other,
                                     int n_other);
CTORCH_API ct_status ct_foreach_lerp_(ct_tensor *const *self, int n,
                                      const ct_tensor *const *tensors1, int n_tensors1,
                                      double weight);
CTORCH_API ct_status ct_foreach_zero_(ct_tensor *const *self, int n);
CTORCH_API int ct_foreach_sqrt(const ct_tensor *const *self, int n, ct_tensor **out,
                               int capacity);
