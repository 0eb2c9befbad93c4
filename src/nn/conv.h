/* nn/conv.h - convolutions (torch.nn.functional.conv1d / conv2d / conv_transpose1d /
 * conv_transpose2d) and their modules (nn.Conv1d, nn.Conv2d, nn.ConvTranspose2d).
 *
 * Layout NC(H)W, PyTorch's: input (N, C_in, L) / (N, C_in, H, W), or unbatched (C_in, L) /
 * (C_in, H, W); weight (C_out, C_in / groups, k...) for convolutions, (C_in, C_out / groups,
 * k...) for transposed ones. float32 and float64 (float16/bfloat16 computed in float32);
 * input, weight and bias share one dtype. Results are new tensors owned by the current scope.
 * Determinism: bit-identical for any thread count (each output and each gradient element
 * sums its products in an order fixed by the shapes only).
 */

/* How padding is given: the padding ints (EXPLICIT, the default), or PyTorch's strings
   padding='valid' (no padding) and padding='same' (the output as large as the input;
   stride 1 only; an odd total padding puts the extra zero on the right, as PyTorch). */
typedef enum ct_conv_padding {
    CT_CONV_PADDING_EXPLICIT = 0,
    CT_CONV_PADDING_VALID,
    CT_CONV_PADDING_SAME
} ct_conv_padding;

/* The modules' padding_mode: how the input is padded. Only ZEROS is implemented; the others
   fail with CT_ERR_VALUE "padding_mode='reflect' is not supported yet". */
typedef enum ct_conv_padding_mode {
    CT_CONV_PADDING_MODE_ZEROS = 0,
    CT_CONV_PADDING_MODE_REFLECT,
    CT_CONV_PADDING_MODE_REPLICATE,
    CT_CONV_PADDING_MODE_CIRCULAR
} ct_conv_padding_mode;

/* Options of every convolution (functional and module). 1-D ops read element [0] of each
   array; the transposed ops alone read output_padding; the modules alone read bias and
   padding_mode.
   field           default     meaning
   stride          {1, 1}      step of the kernel over (H, W) (> 0)
   padding         {0, 0}      implicit zeros on both sides of (H, W) (>= 0), when
                               padding_type is CT_CONV_PADDING_EXPLICIT
   padding_type    EXPLICIT    EXPLICIT, VALID or SAME (F.conv2d's padding='valid'/'same')
   dilation        {1, 1}      spacing between kernel elements (> 0)
   output_padding  {0, 0}      transposed: extra size on one side of the output (below
                               stride or dilation)
   groups          1           blocked connections: C_in and C_out divisible by it
   bias            true        modules: learn an additive bias
   padding_mode    ZEROS       modules: how to pad (only zeros) */
typedef struct ct_conv_opts {
    int64_t stride[2];
    int64_t padding[2];
    ct_conv_padding padding_type;
    int64_t dilation[2];
    int64_t output_padding[2];
    int64_t groups;
    bool bias;
    ct_conv_padding_mode padding_mode;
} ct_conv_opts;

/* PyTorch's defaults (see ct_conv_opts). */
CTORCH_API ct_conv_opts ct_conv_defaults(void);

/* 2-D convolution (cross-correlation) of input with weight, plus bias.
   Shapes: input (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in / groups, kH, kW);
   bias (C_out) or NULL; output (N, C_out, H_out, W_out) (unbatched: no N) with
   H_out = floor((H + 2 padding - dilation (kH - 1) - 1) / stride + 1). opts NULL: defaults.
   Returns: a new tensor. Errors (PyTorch's words): CT_ERR_SHAPE "Expected 3D (unbatched) or
   4D (batched) input to conv2d, but got input of size: [5, 5]", "Given groups=1, weight of
   size [8, 3, 3, 3], expected input[2, 4, 5, 5] to have 3 channels, but got 4 channels
   instead", "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3).
   Kernel size can't be greater than actual input size", bias "expected bias to be
   1-dimensional with 8 elements"; CT_ERR_VALUE "non-positive stride is not supported",
   "negative padding is not supported", "non-positive dilation is not supported",
   "non-positive groups is not supported", "padding='same' is not supported for strided
   convolutions"; CT_ERR_DTYPE "expected scalar type Double but found Float".
   Mirrors: torch.nn.functional.conv2d. */
CTORCH_API ct_tensor *ct_conv2d(const ct_tensor *input, const ct_tensor *weight,
                                const ct_tensor *bias, const ct_conv_opts *opts);
/* 1-D convolution. Shapes: input (N, C_in, L) or (C_in, L); weight (C_out, C_in / groups, k);
   bias (C_out) or NULL; output (N, C_out, L_out). Options, returns and errors as ct_conv2d.
   Mirrors: torch.nn.functional.conv1d. */
CTORCH_API ct_tensor *ct_conv1d(const ct_tensor *input, const ct_tensor *weight,
                                const ct_tensor *bias, const ct_conv_opts *opts);
/* 2-D transposed convolution (the gradient of conv2d with respect to its input).
   Shapes: input (N, C_in, H, W) or (C_in, H, W); weight (C_in, C_out / groups, kH, kW);
   bias (C_out) or NULL; output (N, C_out, H_out, W_out) with H_out = (H - 1) stride -
   2 padding + dilation (kH - 1) + output_padding + 1. padding_type must be EXPLICIT.
   Returns: a new tensor. Errors: as ct_conv2d, and CT_ERR_VALUE "output padding must be
   smaller than either stride or dilation, ...". Mirrors: torch.nn.functional.conv_transpose2d. */
CTORCH_API ct_tensor *ct_conv_transpose2d(const ct_tensor *input, const ct_tensor *weight,
                                          const ct_tensor *bias, const ct_conv_opts *opts);
/* 1-D transposed convolution: input (N, C_in, L) or (C_in, L); weight (C_in, C_out / groups,
   k); output (N, C_out, L_out). As ct_conv_transpose2d.
   Mirrors: torch.nn.functional.conv_transpose1d. */
CTORCH_API ct_tensor *ct_conv_transpose1d(const ct_tensor *input, const ct_tensor *weight,
                                          const ct_tensor *bias, const ct_conv_opts *opts);

/* ---- modules ------------------------------------------------------------------------ */
/* nn.Conv2d: parameters "weight" (out_channels, in_channels / groups, kernel_h, kernel_w) and
   "bias" (out_channels, when opts->bias), float32, drawn as PyTorch's reset_parameters:
   kaiming_uniform_(a = sqrt(5)) then U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in =
   in_channels / groups * kernel_h * kernel_w. opts NULL: defaults (ct_conv_defaults; the
   padding_type SAME/VALID is the module's padding='same'/'valid'). Forward: ct_conv2d.
   Errors: CT_ERR_VALUE "in_channels must be divisible by groups", "out_channels must be
   divisible by groups", "non-positive groups is not supported", non-positive channel or
   kernel sizes, "padding='same' is not supported for strided convolutions", a padding_mode
   other than zeros. Mirrors: torch.nn.Conv2d. */
CTORCH_API ct_module *ct_conv2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                                    int64_t kernel_w, const ct_conv_opts *opts);
/* nn.Conv1d: weight (out_channels, in_channels / groups, kernel_size); as ct_conv2d_new.
   Mirrors: torch.nn.Conv1d. */
CTORCH_API ct_module *ct_conv1d_new(int64_t in_channels, int64_t out_channels,
                                    int64_t kernel_size, const ct_conv_opts *opts);
/* nn.ConvTranspose2d: weight (in_channels, out_channels / groups, kernel_h, kernel_w), bias
   (out_channels); the same init with fan_in = out_channels / groups * kernel_h * kernel_w
   (PyTorch computes it from weight.size(1)). Forward: ct_conv_transpose2d. Errors as
   ct_conv2d_new; padding_type must be EXPLICIT. Mirrors: torch.nn.ConvTranspose2d. */
CTORCH_API ct_module *ct_conv_transpose2d_new(int64_t in_channels, int64_t out_channels,
                                              int64_t kernel_h, int64_t kernel_w,
                                              const ct_conv_opts *opts);
/* The module's forward: ct_conv1d / ct_conv2d / ct_conv_transpose2d with its parameters and
   options. Errors: as those; CT_ERR_VALUE when m is not a module of that type.
   Mirrors: Conv1d.forward / Conv2d.forward / ConvTranspose2d.forward. */
CTORCH_API ct_tensor *ct_conv1d_forward(ct_module *m, const ct_tensor *input);
CTORCH_API ct_tensor *ct_conv2d_forward(ct_module *m, const ct_tensor *input);
CTORCH_API ct_tensor *ct_conv_transpose2d_forward(ct_module *m, const ct_tensor *input);
