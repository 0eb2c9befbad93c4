/* nn/pool.h - max, average and adaptive pooling (torch.nn.functional) and their modules.
 *
 * Shapes: input (N, C, H, W) or unbatched (C, H, W) for the 2-D functions, (N, C, D, H, W)
 * or (C, D, H, W) for the 3-D ones, (N, C, L) or (C, L) for the 1-D ones; the output keeps
 * the leading dims. float32 / float64 (float16 /
 * bfloat16 computed in float32, rounded once); integer inputs: CT_ERR_DTYPE. Results are new
 * tensors owned by the current scope. Errors use PyTorch's wording, e.g. "ct_max_pool2d:
 * Given input size: (2x3x4). Calculated output size: (2x0x0). Output size is too small".
 * Output sizes: floor((H + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1 (ceil
 * instead of floor with ceil_mode, dropping a last window that would start in the padding).
 * Determinism: each (n, c) plane is computed by one thread in a fixed order, so results are
 * bit-identical for any thread count.
 */

/* Options of the max pooling functions and modules (NULL: these defaults).
   field      default  meaning
   stride     {0, 0}   step between windows (H, W); {0, 0}: kernel_size (PyTorch's None)
   padding    {0, 0}   implicit -inf padding on both sides, at most half the kernel
   dilation   {1, 1}   spacing between kernel elements
   ceil_mode  false    ceil instead of floor in the output size
   The 1-D functions read element 0 of each pair. */
typedef struct ct_max_pool2d_opts {
    int64_t stride[2];
    int64_t padding[2];
    int64_t dilation[2];
    bool ceil_mode;
} ct_max_pool2d_opts;

/* Options of the average pooling functions and modules (NULL: these defaults).
   field              default  meaning
   stride             {0, 0}   as ct_max_pool2d_opts
   padding            {0, 0}   implicit zero padding on both sides, at most half the kernel
   ceil_mode          false    ceil instead of floor in the output size
   count_include_pad  true     the zero padding counts in the divisor
   divisor_override   0        nonzero: the divisor of every window (PyTorch's None: 0)
   The 1-D functions read element 0 of each pair and ignore divisor_override. */
typedef struct ct_avg_pool2d_opts {
    int64_t stride[2];
    int64_t padding[2];
    bool ceil_mode;
    bool count_include_pad;
    int64_t divisor_override;
} ct_avg_pool2d_opts;

/* Options of the 3-D max pooling (NULL: these defaults): as ct_max_pool2d_opts over (D, H, W);
   stride {0, 0, 0}: kernel_size; dilation {1, 1, 1}. */
typedef struct ct_max_pool3d_opts {
    int64_t stride[3];
    int64_t padding[3];
    int64_t dilation[3];
    bool ceil_mode;
} ct_max_pool3d_opts;

/* Options of the 3-D average pooling (NULL: these defaults): as ct_avg_pool2d_opts over
   (D, H, W); count_include_pad true. */
typedef struct ct_avg_pool3d_opts {
    int64_t stride[3];
    int64_t padding[3];
    bool ceil_mode;
    bool count_include_pad;
    int64_t divisor_override;
} ct_avg_pool3d_opts;

/* PyTorch's defaults of nn.MaxPool2d / nn.AvgPool2d / nn.MaxPool3d / nn.AvgPool3d. */
CTORCH_API ct_max_pool2d_opts ct_max_pool2d_defaults(void);
CTORCH_API ct_avg_pool2d_opts ct_avg_pool2d_defaults(void);
CTORCH_API ct_max_pool3d_opts ct_max_pool3d_defaults(void);
CTORCH_API ct_avg_pool3d_opts ct_avg_pool3d_defaults(void);

/* 2-D max pooling over kernel_size[0] x kernel_size[1] windows (NaN wins, as PyTorch).
   Shapes: input (N, C, H, W) or (C, H, W) -> (N, C, OH, OW). Gradient: to each window's
   maximum (the first of equal values). opts NULL: defaults.
   Errors: CT_ERR_SHAPE "non-empty 3D or 4D (batch mode) tensor expected for input", "Given
   input size: (CxHxW). Calculated output size: (CxOHxOW). Output size is too small";
   CT_ERR_VALUE "stride should not be zero", "pad should be at most half of effective kernel
   size, but got pad=2, kernel_size=2 and dilation=1", "kernel size should be greater than
   zero, but got kH: 0 kW: 0", "dilation should be greater than zero, ...".
   Mirrors: torch.nn.functional.max_pool2d. */
CTORCH_API ct_tensor *ct_max_pool2d(const ct_tensor *input, const int64_t *kernel_size,
                                    const ct_max_pool2d_opts *opts);
/* ct_max_pool2d that also returns the int64 index of each maximum in its input plane
   (h * W + w), through the out pointers (either may be NULL). Returns CT_OK or the error.
   Mirrors: torch.nn.functional.max_pool2d(..., return_indices=True). */
CTORCH_API ct_status ct_max_pool2d_with_indices(const ct_tensor *input, const int64_t *kernel_size,
                                                const ct_max_pool2d_opts *opts,
                                                ct_tensor **output, ct_tensor **indices);
/* 1-D max pooling (element 0 of each opts pair). Shapes: (N, C, L) or (C, L) -> (N, C, OL).
   Errors: CT_ERR_SHAPE "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0
   dim batch size for input, but got:[3]"; CT_ERR_VALUE "max_pool1d() kernel_size must be
   greater than zero, but got 0", "max_pool1d() Invalid computed output size: 0", ...
   Mirrors: torch.nn.functional.max_pool1d. */
CTORCH_API ct_tensor *ct_max_pool1d(const ct_tensor *input, int64_t kernel_size,
                                    const ct_max_pool2d_opts *opts);
/* 2-D average pooling: the window's sum over its divisor (the window's size in the padded
   input, or its elements inside the input without count_include_pad, or divisor_override).
   A window entirely in the padding gives 0. Shapes and errors as ct_max_pool2d, except that
   input with fewer than 3 dims gives CT_ERR_INDEX "Dimension out of range (expected to be in
   range of [-2, 1], but got -3)". Mirrors: torch.nn.functional.avg_pool2d. */
CTORCH_API ct_tensor *ct_avg_pool2d(const ct_tensor *input, const int64_t *kernel_size,
                                    const ct_avg_pool2d_opts *opts);
/* 1-D average pooling (element 0 of each opts pair). Shapes: (N, C, L) or (C, L).
   Errors: CT_ERR_SHAPE "Expected 2 to 3 dimensions, but got 4-dimensional tensor for
   argument #1 'self' (while checking arguments for avg_pool1d)"; then as ct_avg_pool2d on
   the input with a unit height. Mirrors: torch.nn.functional.avg_pool1d. */
CTORCH_API ct_tensor *ct_avg_pool1d(const ct_tensor *input, int64_t kernel_size,
                                    const ct_avg_pool2d_opts *opts);
/* Average over output_size[0] x output_size[1] bins: bin i of an axis spans
   [floor(i * In / Out), ceil((i + 1) * In / Out)). Output (1, 1) is the mean over H and W
   (PyTorch's shortcut, any number of leading dims). Shapes: (N, C, H, W) or (C, H, W) ->
   (N, C, OH, OW). Errors: CT_ERR_VALUE "adaptive_avg_pool2d: elements of output_size must
   be greater than or equal to 0 but received {2, -1}"; CT_ERR_SHAPE "adaptive_avg_pool2d():
   Expected 3D or 4D tensor, but got [3, 4]", "... Expected input to have non-zero size for
   non-batch dimensions, ...". Mirrors: torch.nn.functional.adaptive_avg_pool2d. */
CTORCH_API ct_tensor *ct_adaptive_avg_pool2d(const ct_tensor *input, const int64_t *output_size);
/* 1-D adaptive average pooling: (N, C, L) or (C, L) -> (N, C, output_size).
   Mirrors: torch.nn.functional.adaptive_avg_pool1d. */
CTORCH_API ct_tensor *ct_adaptive_avg_pool1d(const ct_tensor *input, int64_t output_size);
/* Maximum over adaptive bins (as ct_adaptive_avg_pool2d); *indices (if indices is not NULL)
   receives the int64 index h * W + w of each maximum. Gradient: to the maximum.
   Errors: CT_ERR_SHAPE "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [3, 4]";
   CT_ERR_VALUE "Trying to create tensor with negative dimension -1: [2, 3, 2, -1]".
   Mirrors: torch.nn.functional.adaptive_max_pool2d (return_indices through indices). */
CTORCH_API ct_tensor *ct_adaptive_max_pool2d(const ct_tensor *input, const int64_t *output_size,
                                             ct_tensor **indices);

/* 3-D max pooling over kernel_size[0] x [1] x [2] windows (NaN wins, as PyTorch). Shapes:
   input (N, C, D, H, W) or (C, D, H, W) -> (N, C, OD, OH, OW), sizes as ct_max_pool2d per
   axis. Gradient: to each window's maximum. opts NULL: defaults.
   Errors: CT_ERR_SHAPE "non-empty 4D or 5D (batch mode) tensor expected for input", "Given
   input size: (CxDxHxW). Calculated output size: (CxODxOHxOW). Output size is too small",
   "max_pool3d_with_indices_out_cpu_template(): Expected input to have non-zero size for
   non-batch dimensions, but input has sizes [2, 0, 3, 4, 5] with dimension 1 being empty";
   CT_ERR_VALUE "stride should not be zero", "pad should be at most half of effective kernel
   size, ...", "stride should be greater than zero, but got dT: -1 dH: -1 dW: -1", "pad
   should be smaller than or equal to half of kernel size, but got kT: 2 kW: 2 kH: 2 padT: 2
   padW: 2 padH: 2", ... Mirrors: torch.nn.functional.max_pool3d. */
CTORCH_API ct_tensor *ct_max_pool3d(const ct_tensor *input, const int64_t *kernel_size,
                                    const ct_max_pool3d_opts *opts);
/* ct_max_pool3d that also returns the int64 index of each maximum in its input volume
   ((d * H + h) * W + w), through the out pointers (either may be NULL). Returns CT_OK or the
   error. Mirrors: torch.nn.functional.max_pool3d(..., return_indices=True). */
CTORCH_API ct_status ct_max_pool3d_with_indices(const ct_tensor *input, const int64_t *kernel_size,
                                                const ct_max_pool3d_opts *opts,
                                                ct_tensor **output, ct_tensor **indices);
/* 3-D average pooling: as ct_avg_pool2d over (D, H, W) windows. Shapes as ct_max_pool3d.
   Errors: as ct_max_pool3d ("avg_pool3d(): Expected input to have non-zero size ..."), and
   CT_ERR_VALUE "input image (T: 3 H: 4 W: 5) smaller than kernel size (kT: 4 kH: 4 kW: 4)"
   (padding does not count). float16 / bfloat16 are computed in float32 (PyTorch's CPU kernel
   has none). Mirrors: torch.nn.functional.avg_pool3d. */
CTORCH_API ct_tensor *ct_avg_pool3d(const ct_tensor *input, const int64_t *kernel_size,
                                    const ct_avg_pool3d_opts *opts);
/* Average over output_size[0] x [1] x [2] adaptive bins (as ct_adaptive_avg_pool2d per
   axis; output (1, 1, 1): the mean over D, H and W). Shapes: (N, C, D, H, W) or (C, D, H, W)
   -> (N, C, OD, OH, OW). Errors: CT_ERR_VALUE "adaptive_avg_pool3d: elements of output_size
   must be greater than or equal to 0 but received {2, -1,2}"; CT_ERR_SHAPE
   "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions,
   ...", "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [3, 4, 5]".
   Mirrors: torch.nn.functional.adaptive_avg_pool3d. */
CTORCH_API ct_tensor *ct_adaptive_avg_pool3d(const ct_tensor *input, const int64_t *output_size);
/* Maximum over adaptive bins (as ct_adaptive_avg_pool3d); *indices (if indices is not NULL)
   receives the int64 index (d * H + h) * W + w of each maximum. Gradient: to the maximum.
   Errors: CT_ERR_SHAPE "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [3, 4, 5]",
   "... Expected input to have non-zero size for non-batch dimensions, ..."; CT_ERR_VALUE
   "Trying to create tensor with negative dimension -1: [1, 2, 2, -1, 2]".
   Mirrors: torch.nn.functional.adaptive_max_pool3d (return_indices through indices). */
CTORCH_API ct_tensor *ct_adaptive_max_pool3d(const ct_tensor *input, const int64_t *output_size,
                                             ct_tensor **indices);

/* Power-average pooling: (sum of x^p over each window)^(1/p), computed as PyTorch does:
   a = avg_pool(x^p) without padding, then (sign(a) * relu(|a|) * kernel elements)^(1/p)
   (negative x with a fractional p give NaN, as there). p = +inf: max pooling of |x|; -inf:
   -max pooling of -|x|. kernel_size / stride: 1, 2 or 3 ints; stride NULL or all 0 (1-D: 0):
   the kernel. Shapes as the average pooling of the same dims. Gradient: through those ops.
   Errors: CT_ERR_VALUE "norm_type must be a non-zero value, but got 0"; then the pooling's.
   Mirrors: torch.nn.functional.lp_pool1d / lp_pool2d / lp_pool3d. */
CTORCH_API ct_tensor *ct_lp_pool1d(const ct_tensor *input, double norm_type, int64_t kernel_size,
                                   int64_t stride, bool ceil_mode);
CTORCH_API ct_tensor *ct_lp_pool2d(const ct_tensor *input, double norm_type,
                                   const int64_t *kernel_size, const int64_t *stride,
                                   bool ceil_mode);
CTORCH_API ct_tensor *ct_lp_pool3d(const ct_tensor *input, double norm_type,
                                   const int64_t *kernel_size, const int64_t *stride,
                                   bool ceil_mode);

/* Partial inverse of max pooling: each input value put at its index (a max pooling's
   indices) in a zero output, a repeated index keeping the last value. kernel_size / stride /
   padding: the max pooling's (stride NULL: the kernel; padding NULL: 0); output_size NULL:
   (in - 1) * stride + kernel - 2 * padding per axis, else within a stride of that. Shapes:
   input and indices (N, C, H, W) or (C, H, W) -> (N, C, OH, OW) (1-D: (N, C, L), 3-D:
   (N, C, D, H, W)); 1-D: stride and output_size 0: the defaults. Gradient: the output's
   gradient gathered at the indices. Errors: CT_ERR_VALUE "invalid output_size "(9, 9)" (dim 0
   must be between 2 and 6)"; CT_ERR_DTYPE "elements in indices should be type int64 but
   got: Int"; CT_ERR_SHAPE "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a
   tensor with 2 dimensions.", "Expected shape of indices to be same as that of the input
   tensor ([1, 2, 2, 2]) but got indices tensor with shape: [2, 2, 2]"; CT_ERR_INDEX "Found an
   invalid max index: 114 (output volumes are of size 4x4)".
   Mirrors: torch.nn.functional.max_unpool1d / max_unpool2d / max_unpool3d. */
CTORCH_API ct_tensor *ct_max_unpool1d(const ct_tensor *input, const ct_tensor *indices,
                                      int64_t kernel_size, int64_t stride, int64_t padding,
                                      int64_t output_size);
CTORCH_API ct_tensor *ct_max_unpool2d(const ct_tensor *input, const ct_tensor *indices,
                                      const int64_t *kernel_size, const int64_t *stride,
                                      const int64_t *padding, const int64_t *output_size);
CTORCH_API ct_tensor *ct_max_unpool3d(const ct_tensor *input, const ct_tensor *indices,
                                      const int64_t *kernel_size, const int64_t *stride,
                                      const int64_t *padding, const int64_t *output_size);

/* ---- modules (forward: the functions above; no parameters) ---------------------------- */
/* Mirrors: torch.nn.MaxPool2d(kernel_size, stride, padding, dilation, ceil_mode). */
CTORCH_API ct_module *ct_max_pool2d_new(const int64_t *kernel_size, const ct_max_pool2d_opts *opts);
/* Mirrors: torch.nn.AvgPool2d(kernel_size, stride, padding, ceil_mode, count_include_pad,
   divisor_override). */
CTORCH_API ct_module *ct_avg_pool2d_new(const int64_t *kernel_size, const ct_avg_pool2d_opts *opts);
/* Mirrors: torch.nn.AdaptiveAvgPool2d(output_size). */
CTORCH_API ct_module *ct_adaptive_avg_pool2d_new(const int64_t *output_size);
/* Mirrors: torch.nn.MaxPool1d (element 0 of each opts pair). */
CTORCH_API ct_module *ct_max_pool1d_new(int64_t kernel_size, const ct_max_pool2d_opts *opts);
/* Mirrors: torch.nn.AvgPool1d (element 0 of each opts pair). */
CTORCH_API ct_module *ct_avg_pool1d_new(int64_t kernel_size, const ct_avg_pool2d_opts *opts);
/* Mirrors: torch.nn.AdaptiveMaxPool2d(output_size) (return_indices=False). */
CTORCH_API ct_module *ct_adaptive_max_pool2d_new(const int64_t *output_size);
