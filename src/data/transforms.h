/* data/transforms.h - image transforms on tensors (torchvision.transforms v1: Normalize,
 * RandomCrop, RandomHorizontalFlip, RandomErasing, Compose), a dataset that applies a
 * pipeline to one field of its samples, and standardization fitted on a training split
 * (sklearn's StandardScaler).
 *
 *     ct_random_crop_opts co = {{28, 28}, {4, 4, 4, 4}, false, 0, CT_PADDING_CONSTANT};
 *     ct_transform *steps[3] = {ct_random_crop_new(&co), ct_random_horizontal_flip_new(0.5),
 *                               ct_transforms_normalize_new(&mean, &std, 1, false)};
 *     ct_transform *pipeline = ct_compose_new(steps, 3);
 *     ct_dataset *train = ct_transformed_dataset_new(images_and_labels, 0, pipeline);
 *     ... a DataLoader over train: its workers run the pipeline ...
 *     ct_dataset_free(train); ct_transform_free(pipeline); free each step.
 * Images are tensors (..., C, H, W) (RandomCrop and RandomHorizontalFlip also take (H, W));
 * a transform applied to a batch (N, C, H, W) draws once and treats every image alike, as
 * torchvision's do. ct_transformed_dataset_new draws per sample instead (each sample is
 * transformed on its own, as a Dataset's __getitem__ does).
 * Randomness: every draw is PyTorch's for the same generator state: RandomCrop
 * torch.randint(0, h - th + 1, (1,)) then the same for the width; RandomHorizontalFlip
 * torch.rand(1) < p; RandomErasing torch.rand(1) < p then get_params (uniform_ of the scale and
 * of the log ratios, exp, 10 attempts, normal_ for a random value, randint for the corner).
 * A NULL generator means the calling thread's default one: in a DataLoader worker that is the
 * worker's own, seeded base_seed + worker_id, so with ct_manual_seed(s) the crops and flips
 * equal torchvision's under torch.manual_seed(s) with the same workers. (RandomErasing's log
 * and exp of the ratios are correctly rounded float32; PyTorch's MKL ones may differ in the
 * last bit, which changes a box only when its side lands within about 1e-6 of a .5.)
 * Determinism: results are bit-exact for any thread count; float32 values equal PyTorch's.
 * Thread safety: the built-in transforms are immutable, so one pipeline may run on several
 * threads at once (each with its own generator).
 */

/* A transform: a callback and its data. Users fill one to write their own, e.g.
       static ct_tensor *twice(const ct_transform *t, ct_tensor *x, ct_generator *g)
       { (void)t; (void)g; return ct_mul_scalar(x, 2.0); }
       ct_transform tw = {twice, NULL, NULL};
   apply returns a new tensor owned by the current scope (NULL after recording an error); it
   may modify input only when the transform says it works in place. */
typedef struct ct_transform ct_transform;
struct ct_transform {
    /* Required. Mirrors: the transform's __call__ / forward. */
    ct_tensor *(*apply)(const ct_transform *self, ct_tensor *input, ct_generator *g);
    /* Optional: called by ct_transform_free (releases what the transform holds, including the
       struct when it was allocated). */
    void (*destroy)(ct_transform *self);
    void *user;
};

/* Applies t to input, drawing from g (NULL: the calling thread's default generator).
   Returns: a new tensor owned by the current scope (for a transform that leaves the image as
   it is, an alias of input sharing its storage, as torchvision returns the same tensor);
   NULL on error. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for a transform without apply; the
   transform's own (the built-in ones: CT_ERR_DEVICE for a non-CPU input).
   Mirrors: transform(img). */
CTORCH_API ct_tensor *ct_transform_apply(const ct_transform *t, ct_tensor *input,
                                         ct_generator *g);
/* Releases t through its destroy callback; NULL is a no-op. Pipelines and datasets built on
   t must be freed first. */
CTORCH_API void ct_transform_free(ct_transform *t);

/* (input - mean[c]) / std[c] per channel c: mean and std (n values each, n = C or 1) are
   converted to input's dtype first, then subtracted and divided as PyTorch's sub_ and div_.
   Shapes: input (..., C, H, W), at least 3 dims. dtypes: floating point.
   Returns: with inplace false a new tensor owned by the current scope; with inplace true
   input itself changed in place (an alias of it is returned). NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_DTYPE "Input tensor should be a float tensor. Got torch.int64.";
   CT_ERR_SHAPE "Expected tensor to be a tensor image of size (..., C, H, W). Got
   tensor.size() = [28, 28]", n not 1 or C; CT_ERR_VALUE "std evaluated to zero after
   conversion to torch.float32, leading to division by zero.", n < 1.
   Mirrors: torchvision.transforms.functional.normalize(tensor, mean, std, inplace). */
CTORCH_API ct_tensor *ct_transforms_normalize(ct_tensor *input, const double *mean,
                                              const double *std, int n, bool inplace);
/* A Normalize transform (copies mean and std, n values each) applying
   ct_transforms_normalize. Returns: a new transform (ct_transform_free); NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 1.
   Mirrors: torchvision.transforms.Normalize(mean, std, inplace). */
CTORCH_API ct_transform *ct_transforms_normalize_new(const double *mean, const double *std,
                                                     int n, bool inplace);

/* torchvision's padding modes (F.pad on tensors). */
typedef enum ct_padding_mode {
    CT_PADDING_CONSTANT = 0, /* 'constant' (default): fill */
    CT_PADDING_EDGE,         /* 'edge': the last pixel repeated */
    CT_PADDING_REFLECT,      /* 'reflect': mirrored without repeating the edge (pad < size) */
    CT_PADDING_SYMMETRIC     /* 'symmetric': mirrored with the edge (pad <= size) */
} ct_padding_mode;

/* RandomCrop's options (zero means default, except size, which must be set):
   | field         | default  | meaning                                                   |
   |---------------|----------|-----------------------------------------------------------|
   | size          | required | output (height, width), each >= 1                         |
   | padding       | 0        | pixels added (left, top, right, bottom) before cropping, >= 0 |
   | pad_if_needed | false    | pad both sides of a dim by (size - dim) when it is smaller |
   | fill          | 0        | the constant mode's value, converted to the image's dtype  |
   | padding_mode  | constant | ct_padding_mode                                           |
   torchvision's padding=p is {p, p, p, p}; (a, b) is {a, b, a, b}. */
typedef struct ct_random_crop_opts {
    int64_t size[2];
    int64_t padding[4];
    bool pad_if_needed;
    double fill;
    ct_padding_mode padding_mode;
} ct_random_crop_opts;
/* A RandomCrop transform: pads, then crops size at i = randint(0, H - th + 1), j =
   randint(0, W - tw + 1) (no draw when the padded image is exactly size).
   Shapes: input (..., H, W), at least 2 dims -> (..., th, tw). dtypes: any.
   Returns: a new transform (ct_transform_free); NULL on error. Applying it gives a new
   contiguous tensor. Errors (new): CT_ERR_NULL_ARG; CT_ERR_VALUE for a size < 1, a negative
   padding or an unknown mode. Errors (apply): CT_ERR_SHAPE "Tensor is not a torch image.";
   CT_ERR_VALUE "Required crop size (32, 32) is larger than input image size (28, 28)",
   "Padding size should be less than the corresponding input dimension, but got: padding
   (4, 4) at dimension 3 of input [1, 1, 3, 3]" (reflect; symmetric: at most the dimension).
   Mirrors: torchvision.transforms.RandomCrop(size, padding, pad_if_needed, fill,
   padding_mode). */
CTORCH_API ct_transform *ct_random_crop_new(const ct_random_crop_opts *opts);
/* A RandomHorizontalFlip transform: flips the last dim when torch.rand(1) < p (float32).
   Shapes: input (..., H, W), at least 2 dims. dtypes: any.
   Returns: a new transform; NULL on error. Applying it gives a new flipped tensor, or an
   alias of the input when it does not flip. Errors: CT_ERR_VALUE for p outside [0, 1];
   (apply) CT_ERR_SHAPE "Tensor is not a torch image.".
   Mirrors: torchvision.transforms.RandomHorizontalFlip(p). */
CTORCH_API ct_transform *ct_random_horizontal_flip_new(double p);

/* Most values RandomErasing takes (one per channel). */
#define CT_RANDOM_ERASING_MAX_VALUES 16
/* RandomErasing's options; ct_random_erasing_defaults() returns torchvision's:
   | field        | default      | meaning                                                 |
   |--------------|--------------|---------------------------------------------------------|
   | p            | 0.5          | probability of erasing                                  |
   | scale        | (0.02, 0.33) | range of the erased area's proportion of the image      |
   | ratio        | (0.3, 3.3)   | range of the erased area's aspect ratio                 |
   | n_value      | 1            | values in value: 1 (all channels) or C                  |
   | value        | {0}          | erasing values (to float32, then the image's dtype)     |
   | random_value | false        | value 'random': standard normal float32 per pixel (normal_) |
   | inplace      | false        | erase in the input tensor                               | */
typedef struct ct_random_erasing_opts {
    double p;
    double scale[2];
    double ratio[2];
    int n_value;
    double value[CT_RANDOM_ERASING_MAX_VALUES];
    bool random_value;
    bool inplace;
} ct_random_erasing_opts;
/* torchvision's defaults (see the table). */
CTORCH_API ct_random_erasing_opts ct_random_erasing_defaults(void);
/* A RandomErasing transform: with probability p (torch.rand(1) < p) erases a box of area
   H * W * U(scale) and aspect ratio exp(U(log ratio)), tried up to 10 times until it fits,
   at i = randint(0, H - h + 1), j = randint(0, W - w + 1), with value (or normal_ draws of
   (C, h, w) drawn before i and j); the image is kept when no try fits.
   Shapes: input (..., C, H, W), at least 3 dims. dtypes: any (values are cast).
   Returns: a new transform (ct_transform_free); NULL on error. Applying it gives a new tensor
   (inplace: the input erased in place, an alias returned). Errors (new): CT_ERR_NULL_ARG;
   CT_ERR_VALUE "Scale should be between 0 and 1", p outside [0, 1], n_value outside 1 ..
   CT_RANDOM_ERASING_MAX_VALUES. Errors (apply): CT_ERR_SHAPE "If value is a sequence, it
   should have either a single value or 3 (number of input channels)", fewer than 3 dims.
   Mirrors: torchvision.transforms.RandomErasing(p, scale, ratio, value, inplace). */
CTORCH_API ct_transform *ct_random_erasing_new(const ct_random_erasing_opts *opts);

/* A pipeline: applies transforms[0], then transforms[1], ... (n >= 1; borrowed: they must
   outlive it). Returns: a new transform (ct_transform_free frees the pipeline, not its
   steps); NULL on error. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 1.
   Mirrors: torchvision.transforms.Compose(transforms). */
CTORCH_API ct_transform *ct_compose_new(ct_transform *const *transforms, int n);

/* A dataset whose samples are ds's with transform applied to field `field` of each sample,
   drawing from the calling thread's default generator (a DataLoader worker's own), sample
   after sample in index order, as a Dataset whose __getitem__ applies a transform (torchvision
   datasets' transform=). Batches: ds's batch is fetched at once and, when the pipeline is
   built from the transforms above, transformed in place over the whole batch (the draws
   still per sample, in order); otherwise sample by sample and stacked.
   Returns: a new dataset borrowing ds and transform (both must outlive it); free with
   ct_dataset_free. NULL on error. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for a malformed
   dataset or field outside [0, n_fields). */
CTORCH_API ct_dataset *ct_transformed_dataset_new(ct_dataset *ds, int field,
                                                  const ct_transform *transform);

/* Fits standardization on training rows: mean and scale per feature, the variance with
   correction 0 (ddof 0), computed in float64; a feature that is constant (var <= n * eps *
   var + (n * mean * eps)^2, eps = DBL_EPSILON = 2^-52) gets scale 1.
   Shapes: x (N, F), N >= 1 -> mean (F,), scale (F,). dtypes: x floating point; mean and
   scale float64. Returns: CT_OK and new tensors owned by the current scope in *mean and
   *scale (NULL on error). Errors: CT_ERR_NULL_ARG; CT_ERR_SHAPE for x not 2-D or N == 0;
   CT_ERR_DTYPE for an integer x. Mirrors: sklearn.preprocessing.StandardScaler().fit(x)
   (mean_, scale_). */
CTORCH_API ct_status ct_standardize_fit(const ct_tensor *x, ct_tensor **mean,
                                        ct_tensor **scale);
/* (x - mean) / scale per feature, with mean and scale converted to x's dtype first (as
   StandardScaler.transform does).
   Shapes: x (N, F), mean (F,), scale (F,). dtypes: x floating point. Returns: a new tensor
   of x's dtype owned by the current scope; NULL on error. Errors: CT_ERR_NULL_ARG;
   CT_ERR_SHAPE for sizes that differ; CT_ERR_DTYPE for an integer x.
   Mirrors: StandardScaler.transform(x). */
CTORCH_API ct_tensor *ct_standardize(const ct_tensor *x, const ct_tensor *mean,
                                     const ct_tensor *scale);
