/* tests/test_transforms.c - the image transforms, Compose, the transformed dataset under a
 * DataLoader (0 and 2 workers) and standardization against torchvision's tensor code and
 * sklearn's StandardScaler (tests/golden/transforms_golden.h from
 * tools/gen_golden_transforms.py), bit for bit in float32; argument and shape errors.
 */
#include "test.h"
#include "golden/transforms_golden.h"

#define LEN(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static const int64_t tf_img[3] = {3, 6, 7};
static const int64_t tf_batch[4] = {2, 3, 6, 7};
static const double tf_mean[3] = {0.1, 0.2, 0.3}, tf_std[3] = {0.5, 0.25, 2.0};

/* The default generator's next float32, as bits. */
static uint32_t tf_rand_bits(void)
{
    float f = (float)ct_item(ct_rand(NULL, 0, CT_FLOAT32, NULL));
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Whether the float32 values of ts[0..n) (flattened, in order) equal want[0..n_want). */
static bool tf_same(ct_tensor *const *ts, int n, const float *want, int64_t n_want)
{
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        ct_tensor *c = ts[k] ? ct_contiguous(ts[k]) : NULL;
        if (!c || ct_tensor_dtype(c) != CT_FLOAT32 || at + ct_numel(c) > n_want ||
            memcmp(ct_data_ptr(c), want + at, sizeof(float) * (size_t)ct_numel(c)) != 0) {
            return false;
        }
        at += ct_numel(c);
    }
    return at == n_want;
}

/* n applications of t to x after ct_manual_seed(seed) equal PyTorch's, and so does the
   default generator's next draw. */
static void tf_check_runs(const char *name, uint64_t seed, const ct_transform *t, ct_tensor *x,
                          int n, const float *want, int64_t n_want, uint32_t after)
{
    ct_tensor *out[8] = {NULL};
    ct_manual_seed(seed);
    for (int k = 0; k < n; k++) {
        out[k] = ct_transform_apply(t, x, NULL);
    }
    CHECK_MSG(tf_same(out, n, want, n_want), "%s: values differ from torchvision's (%s)", name,
              ct_error() ? ct_error() : "no error");
    CHECK_MSG(tf_rand_bits() == after, "%s: the generator's stream differs after the draws",
              name);
    ct_error_clear();
}
#define TF_RUNS(name, seed, t, x, n)                                                          \
    tf_check_runs(#name, seed, t, x, n, tf_golden_##name, LEN(tf_golden_##name),              \
                  tf_golden_##name##_after)

static ct_transform *tf_crop(int64_t h, int64_t w, int64_t l, int64_t t, int64_t r, int64_t b,
                             bool pad_if_needed, double fill, ct_padding_mode mode)
{
    ct_random_crop_opts o = {{h, w}, {l, t, r, b}, pad_if_needed, fill, mode};
    return ct_random_crop_new(&o);
}

static void test_transforms_random_crop(void)
{
    ct_scope_begin();
    ct_tensor *img = ct_test_wave_tensor(tf_img, 3, 0, 1.0, CT_FLOAT32);
    ct_tensor *batch = ct_test_wave_tensor(tf_batch, 4, 1, 1.0, CT_FLOAT32);
    ct_transform *t[8];
    t[0] = tf_crop(5, 5, 2, 2, 2, 2, false, 0, CT_PADDING_CONSTANT);
    TF_RUNS(crop_pad, 1, t[0], img, 3);
    t[1] = tf_crop(4, 6, 1, 2, 1, 2, false, -2, CT_PADDING_CONSTANT);
    TF_RUNS(crop_fill, 2, t[1], img, 3);
    t[2] = tf_crop(9, 10, 3, 1, 2, 2, true, 0, CT_PADDING_CONSTANT);
    TF_RUNS(crop_constant, 3, t[2], img, 2);
    t[3] = tf_crop(9, 10, 3, 1, 2, 2, true, 0, CT_PADDING_EDGE);
    TF_RUNS(crop_edge, 3, t[3], img, 2);
    t[4] = tf_crop(9, 10, 3, 1, 2, 2, true, 0, CT_PADDING_REFLECT);
    TF_RUNS(crop_reflect, 3, t[4], img, 2);
    t[5] = tf_crop(9, 10, 3, 1, 2, 2, true, 0, CT_PADDING_SYMMETRIC);
    TF_RUNS(crop_symmetric, 3, t[5], img, 2);
    t[6] = tf_crop(4, 4, 1, 1, 1, 1, false, 0, CT_PADDING_EDGE);
    TF_RUNS(crop_batch, 4, t[6], batch, 2);
    t[7] = tf_crop(6, 7, 0, 0, 0, 0, false, 0, CT_PADDING_CONSTANT);
    TF_RUNS(crop_exact, 5, t[7], img, 1);
    /* uint8 images: the same crop of the same bytes; the fill converted */
    ct_tensor *u8 = ct_to_dtype(ct_mul_scalar(ct_abs(img), 40), CT_UINT8);
    ct_manual_seed(1);
    ct_tensor *a = ct_transform_apply(t[0], u8, NULL);
    ct_manual_seed(1);
    ct_tensor *b = ct_to_dtype(ct_transform_apply(t[0], ct_to_dtype(u8, CT_FLOAT32), NULL),
                               CT_UINT8);
    CHECK(a && ct_tensor_dtype(a) == CT_UINT8 && ct_test_same_bytes(a, b));
    for (int k = 0; k < 8; k++) {
        ct_transform_free(t[k]);
    }
    ct_scope_end();
}

static void test_transforms_flip_erasing(void)
{
    ct_scope_begin();
    ct_tensor *img = ct_test_wave_tensor(tf_img, 3, 0, 1.0, CT_FLOAT32);
    ct_tensor *batch = ct_test_wave_tensor(tf_batch, 4, 1, 1.0, CT_FLOAT32);
    ct_transform *flip = ct_random_horizontal_flip_new(0.5);
    TF_RUNS(flip, 6, flip, img, 6);
    ct_transform *flip3 = ct_random_horizontal_flip_new(0.3);
    TF_RUNS(flip_batch, 7, flip3, batch, 4);
    ct_random_erasing_opts o = ct_random_erasing_defaults();
    o.p = 1.0;
    ct_transform *zero = ct_random_erasing_new(&o);
    TF_RUNS(erase_zero, 8, zero, img, 3);
    o.random_value = true;
    ct_transform *rnd = ct_random_erasing_new(&o);
    TF_RUNS(erase_random, 9, rnd, img, 3);
    o = ct_random_erasing_defaults();
    o.p = 0.7;
    o.n_value = 3;
    o.value[0] = 0.1;
    o.value[1] = 0.2;
    o.value[2] = 0.3;
    ct_transform *rgb = ct_random_erasing_new(&o);
    TF_RUNS(erase_rgb, 10, rgb, batch, 4);
    o = ct_random_erasing_defaults();
    o.p = 1.0;
    o.scale[0] = 0.8;
    o.scale[1] = 1.0;
    ct_transform *large = ct_random_erasing_new(&o);
    TF_RUNS(erase_large, 11, large, img, 2);
    /* no flip, no erase: an alias of the input, as torchvision returns the same tensor */
    ct_transform *never = ct_random_horizontal_flip_new(0.0);
    ct_tensor *same = ct_transform_apply(never, img, NULL);
    CHECK(same && ct_data_ptr(same) == ct_data_ptr(img));
    /* inplace erasing changes the input */
    o = ct_random_erasing_defaults();
    o.p = 1.0;
    o.inplace = true;
    ct_transform *inpl = ct_random_erasing_new(&o);
    ct_tensor *copy = ct_clone(img);
    ct_manual_seed(8);
    ct_tensor *erased = ct_transform_apply(inpl, copy, NULL);
    CHECK(erased && ct_data_ptr(erased) == ct_data_ptr(copy));
    CHECK(tf_same(&copy, 1, tf_golden_erase_zero, LEN(tf_golden_erase_zero) / 3));
    ct_transform *all[7] = {flip, flip3, zero, rnd, rgb, large, never};
    for (int k = 0; k < 7; k++) {
        ct_transform_free(all[k]);
    }
    ct_transform_free(inpl);
    ct_scope_end();
}

static void test_transforms_normalize(void)
{
    ct_scope_begin();
    ct_tensor *batch = ct_test_wave_tensor(tf_batch, 4, 1, 1.0, CT_FLOAT32);
    ct_transform *norm = ct_transforms_normalize_new(tf_mean, tf_std, 3, false);
    TF_RUNS(normalize, 12, norm, batch, 1);
    ct_tensor *copy = ct_clone(batch);
    ct_tensor *y = ct_transforms_normalize(copy, tf_mean, tf_std, 3, true);
    CHECK(y && ct_data_ptr(y) == ct_data_ptr(copy));
    CHECK(tf_same(&copy, 1, tf_golden_normalize, LEN(tf_golden_normalize)));
    double one = 1.0, zero = 0.0, tiny = 1e-300;
    CHECK(!ct_transforms_normalize(batch, &one, &zero, 1, false));
    CHECK_ERROR(CT_ERR_VALUE, "std evaluated to zero after conversion to torch.float32, leading "
                              "to division by zero.");
    CHECK(!ct_transforms_normalize(batch, &one, &tiny, 1, false));
    CHECK_ERROR(CT_ERR_VALUE, "std evaluated to zero");
    CHECK(!ct_transforms_normalize(ct_ones(tf_batch, 4, CT_INT64), &one, &one, 1, false));
    CHECK_ERROR(CT_ERR_DTYPE, "Input tensor should be a float tensor. Got torch.int64.");
    CHECK(!ct_transforms_normalize(ct_ones(tf_img + 1, 2, CT_FLOAT32), &one, &one, 1, false));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected tensor to be a tensor image of size (..., C, H, W). Got "
                              "tensor.size() = [6, 7]");
    CHECK(!ct_transforms_normalize(batch, tf_mean, tf_std, 2, false));
    CHECK_ERROR(CT_ERR_SHAPE, "must match");
    CHECK(!ct_transforms_normalize_new(tf_mean, tf_std, 0, false));
    CHECK_ERROR(CT_ERR_VALUE, "at least one value");
    ct_transform_free(norm);
    ct_scope_end();
}

/* The pipeline of the Compose and dataset cases: reflect-padded crop, flip, normalize,
   random erasing (p 0.8); steps[4] is the Compose. */
static void tf_pipeline(ct_transform **steps)
{
    steps[0] = tf_crop(6, 6, 2, 2, 2, 2, false, 0, CT_PADDING_REFLECT);
    steps[1] = ct_random_horizontal_flip_new(0.5);
    steps[2] = ct_transforms_normalize_new(tf_mean, tf_std, 3, false);
    ct_random_erasing_opts o = ct_random_erasing_defaults();
    o.p = 0.8;
    o.random_value = true;
    steps[3] = ct_random_erasing_new(&o);
    steps[4] = ct_compose_new(steps, 4);
}

static void tf_pipeline_free(ct_transform **steps)
{
    for (int k = 4; k >= 0; k--) {
        ct_transform_free(steps[k]);
    }
}

static void test_transforms_compose(void)
{
    ct_scope_begin();
    ct_tensor *img = ct_test_wave_tensor(tf_img, 3, 0, 1.0, CT_FLOAT32);
    ct_transform *steps[5];
    tf_pipeline(steps);
    TF_RUNS(compose, 13, steps[4], img, 3);
    tf_pipeline_free(steps);
    ct_scope_end();
}

/* A user transform (not built in): the transformed dataset runs it sample by sample. */
static ct_tensor *tf_user_apply(const ct_transform *self, ct_tensor *input, ct_generator *g)
{
    return ct_transform_apply((const ct_transform *)self->user, input, g);
}

/* The batches of a DataLoader (batch 3, generator seeded 7) over the transformed images and
   their indices, flattened, against PyTorch's with `workers` worker processes. */
static void tf_check_loader(const ct_transform *pipeline, int workers, const float *want,
                            int64_t n_want)
{
    static const int64_t shape[4] = {8, 3, 6, 7};
    ct_scope_begin();
    ct_tensor *fields[2] = {ct_test_wave_tensor(shape, 4, 3, 1.0, CT_FLOAT32),
                            ct_arange(0, 8, 1, CT_INT64)};
    ct_dataset *base = ct_tensor_dataset_new(fields, 2);
    ct_dataset *ds = ct_transformed_dataset_new(base, 0, pipeline);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 7);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 3;
    o.num_workers = workers;
    o.generator = g;
    ct_manual_seed(21);
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    ct_tensor *got[3] = {NULL}, *batch[2];
    int n = 0;
    while (n < 3 && ct_dataloader_next(dl, batch)) {
        got[n++] = batch[0];
    }
    CHECK_MSG(n == 3 && tf_same(got, 3, want, n_want), "%d workers: batches differ from "
              "PyTorch's (%s)", workers, ct_error() ? ct_error() : "no error");
    ct_error_clear();
    ct_dataloader_free(dl);
    ct_generator_free(g);
    ct_dataset_free(ds);
    ct_dataset_free(base);
    ct_scope_end();
}

static void test_transforms_dataset(void)
{
    ct_transform *steps[5];
    tf_pipeline(steps);
    ct_transform user = {tf_user_apply, NULL, steps[4]};
    tf_check_loader(steps[4], 0, tf_golden_loader, LEN(tf_golden_loader));
    tf_check_loader(&user, 0, tf_golden_loader, LEN(tf_golden_loader));
    tf_check_loader(steps[4], 2, tf_golden_loader_workers2, LEN(tf_golden_loader_workers2));
    tf_check_loader(&user, 2, tf_golden_loader_workers2, LEN(tf_golden_loader_workers2));
    /* one sample through get equals the batch path's first row */
    ct_scope_begin();
    static const int64_t shape[4] = {8, 3, 6, 7};
    ct_tensor *x = ct_test_wave_tensor(shape, 4, 3, 1.0, CT_FLOAT32);
    ct_dataset *base = ct_tensor_dataset_new(&x, 1);
    ct_dataset *ds = ct_transformed_dataset_new(base, 0, steps[4]);
    ct_tensor *one, *rows;
    int64_t idx[2] = {0, 1};
    ct_manual_seed(5);
    CHECK(ct_dataset_get(ds, 0, &one) == CT_OK);
    ct_manual_seed(5);
    CHECK(ct_dataset_get_batch(ds, idx, 2, &rows) == CT_OK);
    CHECK(one && rows && ct_test_same_bytes(one, ct_select(rows, 0, 0)));
    CHECK(!ct_transformed_dataset_new(base, 1, steps[4]));
    CHECK_ERROR(CT_ERR_VALUE, "field 1 is out of range");
    ct_dataset_free(ds);
    ct_dataset_free(base);
    ct_scope_end();
    tf_pipeline_free(steps);
}

static void test_transforms_errors(void)
{
    ct_scope_begin();
    ct_tensor *img = ct_test_wave_tensor(tf_img, 3, 0, 1.0, CT_FLOAT32);
    ct_transform *big = tf_crop(8, 8, 0, 0, 0, 0, false, 0, CT_PADDING_CONSTANT);
    CHECK(!ct_transform_apply(big, img, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Required crop size (8, 8) is larger than input image size (6, 7)");
    ct_transform *refl = tf_crop(4, 4, 7, 0, 0, 0, false, 0, CT_PADDING_REFLECT);
    CHECK(!ct_transform_apply(refl, img, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Padding size should be less than the corresponding input "
                              "dimension, but got: padding (7, 0) at dimension 2 of input "
                              "[3, 6, 7]");
    ct_transform *sym = tf_crop(4, 4, 0, 7, 0, 0, false, 0, CT_PADDING_SYMMETRIC);
    CHECK(!ct_transform_apply(sym, img, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "Padding size should be at most the corresponding input dimension");
    int64_t n7 = 7;
    CHECK(!ct_transform_apply(big, ct_zeros(&n7, 1, CT_FLOAT32), NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "Tensor is not a torch image.");
    CHECK(!tf_crop(0, 4, 0, 0, 0, 0, false, 0, CT_PADDING_CONSTANT));
    CHECK_ERROR(CT_ERR_VALUE, "size must be positive");
    CHECK(!tf_crop(4, 4, -1, 0, 0, 0, false, 0, CT_PADDING_CONSTANT));
    CHECK_ERROR(CT_ERR_VALUE, "padding must be between 0");
    CHECK(!tf_crop(4, 4, 0, 0, 0, 0, false, 0, (ct_padding_mode)9));
    CHECK_ERROR(CT_ERR_VALUE, "Padding mode should be either constant, edge, reflect or symmetric");
    CHECK(!ct_random_horizontal_flip_new(1.5));
    CHECK_ERROR(CT_ERR_VALUE, "p should be a probability");
    ct_random_erasing_opts o = ct_random_erasing_defaults();
    o.scale[1] = 1.5;
    CHECK(!ct_random_erasing_new(&o));
    CHECK_ERROR(CT_ERR_VALUE, "Scale should be between 0 and 1");
    o = ct_random_erasing_defaults();
    o.p = 1.0;
    o.n_value = 2;
    ct_transform *two = ct_random_erasing_new(&o);
    CHECK(!ct_transform_apply(two, img, NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "If value is a sequence, it should have either a single value or 3 "
                              "(number of input channels)");
    CHECK(!ct_compose_new(&two, 0));
    CHECK_ERROR(CT_ERR_VALUE, "Compose needs at least one transform");
    ct_transform none = {NULL, NULL, NULL};
    CHECK(!ct_transform_apply(&none, img, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "apply callback must not be NULL");
    CHECK(!ct_transform_apply(NULL, img, NULL));
    CHECK_ERROR(CT_ERR_NULL_ARG, "");
    ct_transform_free(NULL);
    ct_transform *all[4] = {big, refl, sym, two};
    for (int k = 0; k < 4; k++) {
        ct_transform_free(all[k]);
    }
    ct_scope_end();
}

static void test_transforms_standardize(void)
{
    ct_scope_begin();
    static const int64_t shape[2] = {10, 4};
    ct_tensor *x = ct_test_wave_tensor(shape, 2, 4, 1.0, CT_FLOAT32);
    int64_t col = 2;
    ct_tensor *c2 = ct_select(x, 1, col);
    ct_fill_(c2, 0.7);
    ct_tensor *mean, *scale;
    CHECK(ct_standardize_fit(x, &mean, &scale) == CT_OK);
    CHECK(mean && ct_tensor_dtype(mean) == CT_FLOAT64 && ct_numel(mean) == 4);
    CHECK_TENSOR(mean, tf_golden_std_mean, 4, 1e-14, 1e-15);
    CHECK_TENSOR(scale, tf_golden_std_scale, 4, 1e-14, 1e-15);
    ct_tensor *y = ct_standardize(x, mean, scale);
    CHECK(tf_same(&y, 1, tf_golden_std_out, LEN(tf_golden_std_out)));
    CHECK(ct_standardize_fit(ct_ones(shape, 1, CT_FLOAT32), &mean, &scale) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "expected x of shape (N, F) with N >= 1, got [10]");
    CHECK(ct_standardize_fit(ct_ones(shape, 2, CT_INT64), &mean, &scale) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "expected a floating point x");
    CHECK(!ct_standardize(x, ct_zeros(&col, 1, CT_FLOAT64), ct_ones(&col, 1, CT_FLOAT64)));
    CHECK_ERROR(CT_ERR_SHAPE, "mean and scale must have shape (4,)");
    ct_scope_end();
}

void test_transforms(void)
{
    RUN(test_transforms_random_crop);
    RUN(test_transforms_flip_erasing);
    RUN(test_transforms_normalize);
    RUN(test_transforms_compose);
    RUN(test_transforms_dataset);
    RUN(test_transforms_errors);
    RUN(test_transforms_standardize);
}
