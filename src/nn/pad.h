/* nn/pad.h - padding, interpolation (upsampling) and pixel shuffle (torch.nn.functional),
 * and their modules.
 *
 * All are built from index_select, cat, full and views, so they run in every dtype the
 * underlying ops take (interpolation: floating point) and their gradients (and double
 * backward) come from those ops. Results are new tensors owned by the current scope;
 * bit-identical for any thread count.
 */

/* F.pad's modes. */
typedef enum ct_pad_mode {
    CT_PAD_CONSTANT = 0, /* 'constant' (default): the value; negative pads crop */
    CT_PAD_REFLECT,      /* 'reflect': mirrored without repeating the edge */
    CT_PAD_REPLICATE,    /* 'replicate': the edge repeated */
    CT_PAD_CIRCULAR      /* 'circular': wrapped around */
} ct_pad_mode;

/* Pads input by pad[0..n_pad): (left, right) of the last dim, then of the one before, ...
   Negative pads crop (constant mode: any dim; the other modes as PyTorch). Shapes: constant:
   any input with n_pad <= 2 * ndim; reflect / replicate / circular pad the last n_pad / 2
   (1 to 3) dims of an input with n_pad / 2 + 1 or n_pad / 2 + 2 dims. value: the constant
   mode's fill (must be 0 for the other modes, PyTorch's None).
   Errors: CT_ERR_VALUE "Padding length must be divisible by 2", "Padding length should be
   less than or equal to two times the input dimension but got padding length 8 and input of
   dimension 3", "Padding size 6 is not supported for 3D input tensor.", "Argument #4: Padding
   size should be less than the corresponding input dimension, but got: padding (4, 4) at
   dimension 2 of input [1, 3, 3]" (reflect), "Padding value causes wrapping around more than
   once." (circular), "input (W: 3) is too small. Calculated output W: 0"; CT_ERR_SHAPE
   "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero
   dimensions for input, but got: [2, 0, 3]". Mirrors: torch.nn.functional.pad. */
CTORCH_API ct_tensor *ct_pad(const ct_tensor *input, const int64_t *pad, int n_pad,
                             ct_pad_mode mode, double value);

/* F.interpolate's modes (bicubic, trilinear, area and antialias are not provided). */
typedef enum ct_interpolate_mode {
    CT_INTERPOLATE_NEAREST = 0,   /* 'nearest' (default): source floor(dst * scale) */
    CT_INTERPOLATE_NEAREST_EXACT, /* 'nearest-exact': source floor((dst + 0.5) * scale) */
    CT_INTERPOLATE_LINEAR,        /* 'linear': 3-D input */
    CT_INTERPOLATE_BILINEAR       /* 'bilinear': 4-D input */
} ct_interpolate_mode;

/* Options of ct_interpolate and ct_upsample_new (zero means default; set size or
   scale_factor).
   field                   default  meaning
   size                    {0, 0}   output spatial size (L) or (H, W); size[1] 0 with 2 spatial
                                    dims: size[0] for both (PyTorch's single int)
   scale_factor            {0, 0}   multiplier of the spatial size, the same way
   mode                    nearest  ct_interpolate_mode
   align_corners           false    (bi)linear: corner pixels' centers align
   recompute_scale_factor  false    compute the scale from the output size floor(in * scale) */
typedef struct ct_interpolate_opts {
    int64_t size[2];
    double scale_factor[2];
    ct_interpolate_mode mode;
    bool align_corners;
    bool recompute_scale_factor;
} ct_interpolate_opts;

/* Resizes the spatial dims of input (N, C, L) or (N, C, H, W) (float dtypes).
   Errors: CT_ERR_VALUE "either size or scale_factor should be defined", "only one of size or
   scale_factor should be defined", "align_corners option can only be set with the
   interpolating modes: linear | bilinear | bicubic | trilinear", "Input and output sizes
   should be greater than 0, but got input (H: 4, W: 4) output (H: 0, W: 0)"; CT_ERR_SHAPE
   "Got 3D input, but bilinear mode needs 4D input", "Input Error: Only 3D, 4D and 5D input
   Tensors supported (got 2D) ...". Mirrors: torch.nn.functional.interpolate. */
CTORCH_API ct_tensor *ct_interpolate(const ct_tensor *input, const ct_interpolate_opts *opts);

/* (*, C * r^2, H, W) -> (*, C, H * r, W * r), r = upscale_factor.
   Errors: CT_ERR_SHAPE "pixel_shuffle expects input to have at least 3 dimensions, but got
   input with 2 dimension(s)", "pixel_shuffle expects its input's 'channel' dimension to be
   divisible by the square of upscale_factor, but input.size(-3)=3 is not divisible by 4";
   CT_ERR_VALUE "pixel_shuffle expects a positive upscale_factor, but got 0".
   Mirrors: torch.nn.functional.pixel_shuffle. */
CTORCH_API ct_tensor *ct_pixel_shuffle(const ct_tensor *input, int64_t upscale_factor);
/* (*, C, H * r, W * r) -> (*, C * r^2, H, W), r = downscale_factor; errors as
   ct_pixel_shuffle ("pixel_unshuffle expects height to be divisible by downscale_factor,
   but input.size(-2)=3 is not divisible by 2"). Mirrors: torch.nn.functional.pixel_unshuffle. */
CTORCH_API ct_tensor *ct_pixel_unshuffle(const ct_tensor *input, int64_t downscale_factor);

/* ---- modules (no parameters) ------------------------------------------------------------ */
/* padding (left, right, top, bottom) of the last two dims.
   Mirrors: torch.nn.ZeroPad2d / ConstantPad2d(padding, value) / ReflectionPad2d /
   ReplicationPad2d / CircularPad2d (which also checks for 3-D or 4-D input: "expected 3D or
   4D input (got 2D input)"). */
CTORCH_API ct_module *ct_zero_pad2d_new(const int64_t *padding);
CTORCH_API ct_module *ct_constant_pad2d_new(const int64_t *padding, double value);
CTORCH_API ct_module *ct_reflection_pad2d_new(const int64_t *padding);
CTORCH_API ct_module *ct_replication_pad2d_new(const int64_t *padding);
CTORCH_API ct_module *ct_circular_pad2d_new(const int64_t *padding);
/* opts NULL: CT_ERR_VALUE at forward (PyTorch: "either size or scale_factor should be
   defined"). Mirrors: torch.nn.Upsample(size, scale_factor, mode, align_corners,
   recompute_scale_factor). */
CTORCH_API ct_module *ct_upsample_new(const ct_interpolate_opts *opts);
/* Mirrors: torch.nn.PixelShuffle(upscale_factor). */
CTORCH_API ct_module *ct_pixel_shuffle_new(int64_t upscale_factor);
