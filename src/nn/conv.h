/* nn/conv.h - convolutions (torch.nn.functional.conv1d / conv2d / conv3d /
 * conv_transpose1d / conv_transpose2d / conv_transpose3d), F.unfold / F.fold, and the modules
 * nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose2d.
 *
 * Layout NC(D)(H)W, PyTorch's: input (N, C_in, L) / (N, C_in, H, W) / (N, C_in, D, H, W), or
 * unbatched without N; weight (C_out, C_in / groups, k...) for convolutions, (C_in, C_out /
 * groups, k...) for transposed ones. float32 and float64 (float16/bfloat16 computed in float32);
 * input, weight and bias share one dtype. Results are new tensors owned by the current scope.
 * Determinism: bit-identical for any thread count (each output and each gradient element
 * sums its products in an order fixed by the shapes only). Gradients of every order
 * (create_graph: double backward) as PyTorch.
 */

/* How padding is given: the padding ints (EXPLICIT, the default), or PyTorch's strings
   padding='valid' (no padding) and padding='same' (the output as large as the input;
   stride 1 only; an odd total padding puts the extra zero on the right, as PyTorch). */
typedef enum ct_conv_padding {
    CT_CONV_PADDING_EXPLICIT = 0,
    CT_CONV_PADDING_VALID,
    CT_CONV_PADDING_SAME
} ct_conv_padding;

/* The modules' padding_mode: how the input is padded (nn.ConvNd's padding_mode): implicit
   zeros, or F.pad's 'reflect' / 'replicate' / 'circular' before a convolution without
   padding (transposed modules: zeros only). */
typedef enum ct_conv_padding_mode {
    CT_CONV_PADDING_MODE_ZEROS = 0,
    CT_CONV_PADDING_MODE_REFLECT,
    CT_CONV_PADDING_MODE_REPLICATE,
    CT_CONV_PADDING_MODE_CIRCULAR
} ct_conv_padding_mode;

/* Options of every convolution (functional and module). Arrays are per spatial dim in order
   ((L), (H, W) or (D, H, W)): 1-D ops read element [0], 2-D ops [0..1], 3-D ops [0..2]; the
   transposed ops alone read output_padding; the modules alone read bias and padding_mode.
   field           default     meaning
   stride          {1, 1, 1}   step of the kernel (> 0)
   padding         {0, 0, 0}   implicit padding on both sides (>= 0), when padding_type is
                               CT_CONV_PADDING_EXPLICIT
   padding_type    EXPLICIT    EXPLICIT, VALID or SAME (F.conv2d's padding='valid'/'same')
   dilation        {1, 1, 1}   spacing between kernel elements (> 0)
   output_padding  {0, 0, 0}   transposed: extra size on one side of the output (below
                               stride or dilation)
   groups          1           blocked connections: C_in and C_out divisible by it
   bias            true        modules: learn an additive bias
   padding_mode    ZEROS       modules: zeros, reflect, replicate or circular */
typedef struct ct_conv_opts {
    int64_t stride[3];
    int64_t padding[3];
    ct_conv_padding padding_type;
    int64_t dilation[3];
    int64_t output_padding[3];
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
/* 3-D convolution. Shapes: input (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_out,
   C_in / groups, kD, kH, kW); bias (C_out) or NULL; output (N, C_out, D_out, H_out, W_out)
   (each as ct_conv2d's H_out). Options, returns and errors as ct_conv2d ("Expected 4D
   (unbatched) or 5D (batched) input to conv3d, ...", sizes "(2 x 2 x 2)").
   Mirrors: torch.nn.functional.conv3d. */
CTORCH_API ct_tensor *ct_conv3d(const ct_tensor *input, const ct_tensor *weight,
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
/* 3-D transposed convolution: input (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_in,
   C_out / groups, kD, kH, kW); bias (C_out) or NULL; output (N, C_out, D_out, H_out, W_out),
   each as ct_conv_transpose2d's H_out. As ct_conv_transpose2d ("output padding must be
   smaller than either stride or dilation, but got output_padding_depth: 2 ...").
   Mirrors: torch.nn.functional.conv_transpose3d. */
CTORCH_API ct_tensor *ct_conv_transpose3d(const ct_tensor *input, const ct_tensor *weight,
                                          const ct_tensor *bias, const ct_conv_opts *opts);

/* Options of F.unfold / F.fold, per spatial dim (H, W) (NULL: these defaults).
   field     default  meaning
   dilation  {1, 1}   spacing between kernel elements (> 0)
   padding   {0, 0}   implicit zeros on both sides (>= 0)
   stride    {1, 1}   step of the sliding blocks (> 0) */
typedef struct ct_fold_opts {
    int64_t dilation[2];
    int64_t padding[2];
    int64_t stride[2];
} ct_fold_opts;

/* PyTorch's defaults (see ct_fold_opts). */
CTORCH_API ct_fold_opts ct_fold_defaults(void);

/* Extracts sliding local blocks (im2col): input (N, C, H, W) or unbatched (C, H, W) ->
   (N, C kH kW, L) (unbatched: (C kH kW, L)) with L the number of blocks, the product over
   (H, W) of floor((size + 2 padding - dilation (k - 1) - 1) / stride) + 1; row c kH kW +
   i kW + j holds input channel c at kernel tap (i, j) (0 in the padding). kernel_size: 2
   values. float32 / float64. Returns: a new tensor. Errors (PyTorch's words): CT_ERR_VALUE
   "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 2",
   "dilation should be greater than zero, ...", "padding should be non-negative, ...",
   "stride should be greater than zero, ..."; CT_ERR_SHAPE "Expected 3D or 4D (batch mode)
   tensor with possibly 0 batch size and other non-zero dimensions for input, but got:
   [2, 3, 4]", "Given input with spatial size (4, 7), kernel_size=(5, 5), dilation=(1, 1),
   padding=(0, 0), calculated shape of the array of sliding blocks as (0, 3), but its
   components must be at least one."; CT_ERR_NULL_ARG NULL kernel_size.
   Mirrors: torch.nn.functional.unfold. */
CTORCH_API ct_tensor *ct_unfold(const ct_tensor *input, const int64_t *kernel_size,
                                const ct_fold_opts *opts);
/* Combines sliding local blocks into a tensor, summing overlaps (col2im, the adjoint of
   ct_unfold): input (N, C kH kW, L) or (C kH kW, L) -> (N, C, output_size[0],
   output_size[1]) (unbatched: no N). Errors: as ct_unfold's argument checks (kernel, stride,
   dilation, padding in that order); CT_ERR_SHAPE "Expected 2D or 3D (batch mode) tensor for
   input with possibly 0 batch size and non-zero dimensions for input, but got: [...]",
   "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but
   got input.size(1)=13 and kernel_size=(2, 2).", "Given output_size=(4, 4), kernel_size=(2,
   2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size of input's dimension 2
   to match the calculated number of sliding blocks 3 * 3 = 9, but got input.size(2)=8.".
   Mirrors: torch.nn.functional.fold. */
CTORCH_API ct_tensor *ct_fold(const ct_tensor *input, const int64_t *output_size,
                              const int64_t *kernel_size, const ct_fold_opts *opts);

/* ---- modules ------------------------------------------------------------------------ */
/* nn.Conv2d: parameters "weight" (out_channels, in_channels / groups, kernel_h, kernel_w) and
   "bias" (out_channels, when opts->bias), float32, drawn as PyTorch's reset_parameters:
   kaiming_uniform_(a = sqrt(5)) then U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in =
   in_channels / groups * kernel_h * kernel_w. opts NULL: defaults (ct_conv_defaults; the
   padding_type SAME/VALID is the module's padding='same'/'valid'). Forward: ct_conv2d.
   padding_mode other than zeros: the forward pads with ct_pad first (PyTorch's
   _conv_forward). Errors: CT_ERR_VALUE "in_channels must be divisible by groups",
   "out_channels must be divisible by groups", "groups must be a positive integer",
   non-positive channel or kernel sizes, "padding='same' is not supported for strided
   convolutions", "9 is not a valid value for padding_mode". Mirrors: torch.nn.Conv2d. */
CTORCH_API ct_module *ct_conv2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                                    int64_t kernel_w, const ct_conv_opts *opts);
/* nn.Conv1d: weight (out_channels, in_channels / groups, kernel_size); as ct_conv2d_new.
   Mirrors: torch.nn.Conv1d. */
CTORCH_API ct_module *ct_conv1d_new(int64_t in_channels, int64_t out_channels,
                                    int64_t kernel_size, const ct_conv_opts *opts);
/* nn.Conv3d: weight (out_channels, in_channels / groups, kernel_d, kernel_h, kernel_w); as
   ct_conv2d_new (fan_in = in_channels / groups * kernel_d * kernel_h * kernel_w).
   Mirrors: torch.nn.Conv3d. */
CTORCH_API ct_module *ct_conv3d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_d,
                                    int64_t kernel_h, int64_t kernel_w, const ct_conv_opts *opts);
/* nn.ConvTranspose2d: weight (in_channels, out_channels / groups, kernel_h, kernel_w), bias
   (out_channels); the same init with fan_in = out_channels / groups * kernel_h * kernel_w
   (PyTorch computes it from weight.size(1)). Forward: ct_conv_transpose2d. Errors as
   ct_conv2d_new; padding_type must be EXPLICIT and padding_mode ZEROS ("Only "zeros" padding
   mode is supported for ConvTranspose2d"). Mirrors: torch.nn.ConvTranspose2d. */
CTORCH_API ct_module *ct_conv_transpose2d_new(int64_t in_channels, int64_t out_channels,
                                              int64_t kernel_h, int64_t kernel_w,
                                              const ct_conv_opts *opts);
/* The module's forward: ct_conv1d / ct_conv2d / ct_conv3d / ct_conv_transpose2d with its
   parameters and options (padding_mode applied). Errors: as those; CT_ERR_VALUE when m is
   not a module of that type. Mirrors: Conv1d.forward / Conv2d.forward / Conv3d.forward /
   ConvTranspose2d.forward. */
CTORCH_API ct_tensor *ct_conv1d_forward(ct_module *m, const ct_tensor *input);
CTORCH_API ct_tensor *ct_conv2d_forward(ct_module *m, const ct_tensor *input);
CTORCH_API ct_tensor *ct_conv3d_forward(ct_module *m, const ct_tensor *input);
CTORCH_API ct_tensor *ct_conv_transpose2d_forward(ct_module *m, const ct_tensor *input);
