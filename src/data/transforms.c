/* data/transforms.c - torchvision's tensor transforms, Compose, the transformed dataset and
 * standardization.
 *
 * A built-in transform works in two steps so that one code path serves a single image and a
 * dataset's batch: draw (one sample's random parameters, in PyTorch's order, from its shape)
 * and run (the whole tensor, whose P planes (H, W) are S samples of P / S planes each, each
 * sample with its own parameters). Applied to an image, S is 1; a transformed dataset draws
 * every step for sample 0, then for sample 1, ... (a Dataset's __getitem__ order) and then
 * runs each step once over the batch.
 * Legend: S samples, P planes, (H, W) a plane, (th, tw) the crop, C channels.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "../core/scope.h"
#include "../ops/view.h"
#include "../ops/reduce.h"
#include "../ops/index.h"
#include "dataset.h"
#include "transforms.h"

#include <float.h>
#include <math.h>

CT__GLUE_BEGIN

enum { CT__TF_NORMALIZE, CT__TF_CROP, CT__TF_FLIP, CT__TF_ERASING, CT__TF_COMPOSE };

typedef struct ct__tf {
    ct_transform base;
    int kind;
    double *mean, *std; /* Normalize: n values each */
    int n;
    bool inplace;               /* Normalize */
    ct_random_crop_opts crop;   /* RandomCrop */
    double p;                   /* RandomHorizontalFlip */
    ct_random_erasing_opts era; /* RandomErasing */
    ct_transform **steps;       /* Compose: n borrowed steps */
} ct__tf;

/* One sample's draws. */
typedef struct ct__tf_params {
    bool hit;        /* flip / erase: it applies */
    int64_t i, j;    /* crop: the corner in the padded image; erasing: the box's corner */
    int64_t h, w;    /* erasing: the box */
    int64_t pad[4];  /* crop: the padding (left, top, right, bottom) */
    int64_t need[2]; /* crop: pad_if_needed's second padding of (height, width), both sides */
    ct_tensor *v;    /* erasing: the values (float32), of the current scope */
} ct__tf_params;

static ct_tensor *ct__tf_apply(const ct_transform *self, ct_tensor *input, ct_generator *g);

static const ct__tf *ct__tf_builtin(const ct_transform *t)
{
    return t->apply == ct__tf_apply ? (const ct__tf *)t->user : NULL;
}

/* ---- draws, as PyTorch's (one-element tensors) ----------------------------------------- */
/* torch.randint(0, high, (1,)).item(). */
static bool ct__tf_randint(int64_t high, ct_generator *g, int64_t *out)
{
    int64_t one = 1;
    ct_tensor *t = ct_randint(0, high, &one, 1, CT_INT64, g);
    *out = t ? ct_item_int64(t) : 0;
    ct_free(t);
    return t != NULL;
}

/* torch.empty(1).uniform_(from, to).item() (float32); from 0, to 1: torch.rand(1). */
static bool ct__tf_uniform(double from, double to, ct_generator *g, double *out)
{
    int64_t one = 1;
    ct_tensor *t = ct_empty(&one, 1, CT_FLOAT32);
    bool ok = t && ct_uniform_(t, from, to, g);
    *out = ok ? ct_item(t) : 0;
    ct_free(t);
    return ok;
}

/* torch.rand(1) < p, compared in float32. */
static bool ct__tf_coin(double p, ct_generator *g, bool *hit)
{
    double u;
    bool ok = ct__tf_uniform(0, 1, g, &u);
    *hit = ok && (float)u < (float)p;
    return ok;
}

/* ---- shapes and errors ----------------------------------------------------------------- */
static ct_status ct__tf_need_dims(const char *op, const int64_t *s, int nd, int min)
{
    char buf[160];
    if (nd >= min) {
        return CT_OK;
    }
    if (min == 2) {
        return ct__fail(CT_ERR_SHAPE, op, "Tensor is not a torch image.");
    }
    return ct__fail(CT_ERR_SHAPE, op, "Expected tensor to be a tensor image of size (..., C, H, "
                    "W). Got tensor.size() = %s", ct__shape_str(s, nd, buf, sizeof buf));
}

/* The source index of coordinate c along a dim of length n padded by `before` (c counts
   from the padded start); -1 for the constant mode's fill. */
static int64_t ct__tf_unpad(int64_t c, int64_t before, int64_t n, ct_padding_mode mode)
{
    c -= before;
    if (c >= 0 && c < n) {
        return c;
    }
    switch (mode) {
    case CT_PADDING_EDGE:
        return c < 0 ? 0 : n - 1;
    case CT_PADDING_REFLECT:
        return c < 0 ? -c : 2 * (n - 1) - c;
    case CT_PADDING_SYMMETRIC:
        return c < 0 ? -c - 1 : 2 * n - 1 - c;
    default:
        return -1;
    }
}

/* Checks a padding (before, after) of dim d (length n) of shape s for the mode. */
static ct_status ct__tf_check_pad(const int64_t *s, int nd, int d, int64_t before, int64_t after,
                                  ct_padding_mode mode)
{
    int64_t n = s[d], most = mode == CT_PADDING_REFLECT ? n - 1 : n;
    char buf[160];
    if ((mode != CT_PADDING_REFLECT && mode != CT_PADDING_SYMMETRIC) ||
        (before <= most && after <= most)) {
        return CT_OK;
    }
    return ct__fail(CT_ERR_VALUE, "ct_random_crop", "Padding size should be %s the corresponding "
                    "input dimension, but got: padding (%lld, %lld) at dimension %d of input %s",
                    mode == CT_PADDING_REFLECT ? "less than" : "at most", (long long)before,
                    (long long)after, d, ct__shape_str(s, nd, buf, sizeof buf));
}

/* ---- RandomCrop ------------------------------------------------------------------------- */
static ct_status ct__crop_draw(const ct__tf *t, int64_t *s, int nd, ct_generator *g,
                               ct__tf_params *q)
{
    const char *op = "ct_random_crop";
    const ct_random_crop_opts *o = &t->crop;
    ct_status st = ct__tf_need_dims(op, s, nd, 2);
    memcpy(q->pad, o->padding, sizeof q->pad);
    st = st ? st : ct__tf_check_pad(s, nd, nd - 1, q->pad[0], q->pad[2], o->padding_mode);
    st = st ? st : ct__tf_check_pad(s, nd, nd - 2, q->pad[1], q->pad[3], o->padding_mode);
    if (st) {
        return st;
    }
    int64_t hw[2] = {s[nd - 2] + q->pad[1] + q->pad[3], s[nd - 1] + q->pad[0] + q->pad[2]};
    for (int k = 0; k < 2; k++) {
        q->need[k] = o->pad_if_needed && hw[k] < o->size[k] ? o->size[k] - hw[k] : 0;
        int64_t padded[CT_MAX_DIMS];
        memcpy(padded, s, sizeof(int64_t) * (size_t)nd);
        padded[nd - 2] = hw[0];
        padded[nd - 1] = hw[1];
        st = st ? st : ct__tf_check_pad(padded, nd, nd - 2 + k, q->need[k], q->need[k],
                                        o->padding_mode);
    }
    if (st) {
        return st;
    }
    int64_t h = hw[0] + 2 * q->need[0], w = hw[1] + 2 * q->need[1];
    if (h < o->size[0] || w < o->size[1]) {
        return ct__fail(CT_ERR_VALUE, op, "Required crop size (%lld, %lld) is larger than input "
                        "image size (%lld, %lld)", (long long)o->size[0], (long long)o->size[1],
                        (long long)h, (long long)w);
    }
    q->i = q->j = 0;
    bool ok = (h == o->size[0] && w == o->size[1]) ||
              (ct__tf_randint(h - o->size[0] + 1, g, &q->i) &&
               ct__tf_randint(w - o->size[1] + 1, g, &q->j));
    s[nd - 2] = o->size[0];
    s[nd - 1] = o->size[1];
    return ok ? CT_OK : ct_error_code();
}

/* Source rows (rows[0..th)) and columns (cols[0..tw)) of one sample's crop of an (h, w) plane;
   -1 marks the fill. */
static void ct__crop_maps(const ct__tf *t, const ct__tf_params *q, int64_t h, int64_t w,
                          int64_t *rows, int64_t *cols)
{
    ct_padding_mode m = t->crop.padding_mode;
    int64_t h1 = h + q->pad[1] + q->pad[3], w1 = w + q->pad[0] + q->pad[2];
    for (int64_t y = 0; y < t->crop.size[0]; y++) {
        int64_t c = ct__tf_unpad(q->i + y, q->need[0], h1, m);
        rows[y] = c < 0 ? -1 : ct__tf_unpad(c, q->pad[1], h, m);
    }
    for (int64_t x = 0; x < t->crop.size[1]; x++) {
        int64_t c = ct__tf_unpad(q->j + x, q->need[1], w1, m);
        cols[x] = c < 0 ? -1 : ct__tf_unpad(c, q->pad[0], w, m);
    }
}

CT__GLUE_END

/* Copies planes [p0, p1) of src (planes of h x w) into dst (planes of th x tw) through the
   row and column maps; fill where a map is -1. One loop per element size. */
#define CT__TF_CROP_COPY(T)                                                                    \
    do {                                                                                       \
        const T *src_ = (const T *)src;                                                        \
        T *dst_ = (T *)dst, fill_;                                                             \
        memcpy(&fill_, fill, sizeof fill_);                                                    \
        for (int64_t p = p0; p < p1; p++) {                                                    \
            for (int64_t y = 0; y < th; y++) {                                                 \
                T *o_ = dst_ + (p * th + y) * tw;                                              \
                const T *r_ = src_ + (p * h + rows[y]) * w;                                    \
                for (int64_t x = 0; x < tw; x++) {                                             \
                    o_[x] = rows[y] < 0 || cols[x] < 0 ? fill_ : r_[cols[x]];                  \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static void ct__crop_planes(const void *src, void *dst, size_t esz, int64_t p0, int64_t p1,
                            int64_t h, int64_t w, int64_t th, int64_t tw, const int64_t *rows,
                            const int64_t *cols, const void *fill)
{
    switch (esz) {
    case 1:
        CT__TF_CROP_COPY(uint8_t);
        break;
    case 2:
        CT__TF_CROP_COPY(uint16_t);
        break;
    case 4:
        CT__TF_CROP_COPY(uint32_t);
        break;
    default:
        CT__TF_CROP_COPY(uint64_t);
        break;
    }
}
#undef CT__TF_CROP_COPY

/* Reverses each row of planes [p0, p1) (planes of h x w) in place. */
#define CT__TF_FLIP_ROWS(T)                                                                    \
    do {                                                                                       \
        T *d_ = (T *)data;                                                                     \
        for (int64_t r = p0 * h; r < p1 * h; r++) {                                            \
            T *row_ = d_ + r * w;                                                              \
            for (int64_t a = 0, b = w - 1; a < b; a++, b--) {                                  \
                T tmp_ = row_[a];                                                              \
                row_[a] = row_[b];                                                             \
                row_[b] = tmp_;                                                                \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static void ct__flip_planes(void *data, size_t esz, int64_t p0, int64_t p1, int64_t h, int64_t w)
{
    switch (esz) {
    case 1:
        CT__TF_FLIP_ROWS(uint8_t);
        break;
    case 2:
        CT__TF_FLIP_ROWS(uint16_t);
        break;
    case 4:
        CT__TF_FLIP_ROWS(uint32_t);
        break;
    default:
        CT__TF_FLIP_ROWS(uint64_t);
        break;
    }
}
#undef CT__TF_FLIP_ROWS

CT__GLUE_BEGIN

/* x as a contiguous tensor of the current scope that the caller may change: x itself (an
   alias) when own and contiguous, else a copy. */
static ct_tensor *ct__tf_private(ct_tensor *x, bool own)
{
    if (own && ct_is_contiguous(x)) {
        return ct_alias(x);
    }
    ct_tensor *y = ct_empty(ct_sizes(x), ct_dim(x), ct_tensor_dtype(x));
    if (y && !ct_copy_(y, x)) {
        ct_free(y);
        return NULL;
    }
    return y;
}

static ct_tensor *ct__crop_run(const ct__tf *t, ct_tensor *x, int64_t n_samples,
                               const ct__tf_params *q, bool own)
{
    (void)own;
    ct_tensor *in = ct_contiguous(x);
    int nd = ct_dim(x);
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, ct_sizes(x), sizeof(int64_t) * (size_t)nd);
    int64_t h = sizes[nd - 2], w = sizes[nd - 1], th = t->crop.size[0], tw = t->crop.size[1];
    sizes[nd - 2] = th;
    sizes[nd - 1] = tw;
    ct_tensor *out = in ? ct_empty(sizes, nd, ct_tensor_dtype(x)) : NULL;
    int64_t *maps = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(th + tw));
    if (!out || !maps) {
        if (in && out && !maps) {
            ct__fail(CT_ERR_OOM, "ct_random_crop", "out of memory");
        }
        ct_free(in);
        ct_free(out);
        ct__free(maps);
        return NULL;
    }
    int64_t fill = 0, planes = h * w > 0 ? ct_numel(x) / (h * w) : 0;
    size_t esz = ct_element_size(x);
    ct__store_f64(&fill, ct_tensor_dtype(x), t->crop.fill);
    for (int64_t k = 0; k < n_samples; k++) {
        int64_t per = planes / n_samples;
        ct__crop_maps(t, &q[k], h, w, maps, maps + th);
        ct__crop_planes(ct_data_ptr(in), ct_data_ptr(out), esz, k * per, (k + 1) * per, h, w,
                        th, tw, maps, maps + th, &fill);
    }
    ct__free(maps);
    ct_free(in);
    return out;
}

/* ---- RandomHorizontalFlip --------------------------------------------------------------- */
static ct_status ct__flip_draw(const ct__tf *t, int64_t *s, int nd, ct_generator *g,
                               ct__tf_params *q)
{
    ct_status st = ct__tf_need_dims("ct_random_horizontal_flip", s, nd, 2);
    return st ? st : ct__tf_coin(t->p, g, &q->hit) ? CT_OK : ct_error_code();
}

static ct_tensor *ct__flip_run(const ct__tf *t, ct_tensor *x, int64_t n_samples,
                               const ct__tf_params *q, bool own)
{
    (void)t;
    bool any = false;
    for (int64_t k = 0; k < n_samples; k++) {
        any = any || q[k].hit;
    }
    ct_tensor *y = any ? ct__tf_private(x, own) : ct_alias(x);
    if (!y || !any) {
        return y;
    }
    int nd = ct_dim(y);
    int64_t h = ct_size(y, nd - 2), w = ct_size(y, nd - 1);
    int64_t per = h * w > 0 ? ct_numel(y) / (h * w) / n_samples : 0;
    for (int64_t k = 0; k < n_samples; k++) {
        if (q[k].hit) {
            ct__flip_planes(ct_data_ptr(y), ct_element_size(y), k * per, (k + 1) * per, h, w);
        }
    }
    return y;
}

/* ---- RandomErasing ---------------------------------------------------------------------- */
/* Float32 rounding of a correctly rounded function of a float32 value. */
static double ct__tf_f32(double v)
{
    return (double)(float)v;
}

/* get_params' box and values for an image of C channels and (H, W); hit false when no try
   fits. */
static ct_status ct__erasing_box(const ct__tf *t, int64_t c, int64_t hh, int64_t ww,
                                 ct_generator *g, ct__tf_params *q)
{
    const ct_random_erasing_opts *o = &t->era;
    double area = (double)(hh * ww);
    double lr0 = ct__tf_f32(log(ct__tf_f32(o->ratio[0])));
    double lr1 = ct__tf_f32(log(ct__tf_f32(o->ratio[1])));
    for (int attempt = 0; attempt < 10; attempt++) {
        double u, r;
        if (!ct__tf_uniform(o->scale[0], o->scale[1], g, &u) ||
            !ct__tf_uniform(lr0, lr1, g, &r)) {
            return ct_error_code();
        }
        double erase_area = area * u, aspect = ct__tf_f32(exp(r));
        int64_t h = (int64_t)nearbyint(sqrt(erase_area * aspect));
        int64_t w = (int64_t)nearbyint(sqrt(erase_area / aspect));
        if (!(h < hh && w < ww)) {
            continue;
        }
        int64_t vs[3] = {o->random_value ? c : o->n_value, o->random_value ? h : 1,
                         o->random_value ? w : 1};
        float vals[CT_RANDOM_ERASING_MAX_VALUES];
        for (int k = 0; k < o->n_value; k++) {
            vals[k] = (float)o->value[k];
        }
        q->v = o->random_value ? ct_empty(vs, 3, CT_FLOAT32)
                               : ct_tensor_from_data(vals, CT_FLOAT32, vs, 3);
        if (!q->v || (o->random_value && !ct_normal_(q->v, 0, 1, g)) ||
            !ct__tf_randint(hh - h + 1, g, &q->i) || !ct__tf_randint(ww - w + 1, g, &q->j)) {
            return ct_error_code();
        }
        q->h = h;
        q->w = w;
        q->hit = true;
        return CT_OK;
    }
    q->hit = false;
    return CT_OK;
}

static ct_status ct__erasing_draw(const ct__tf *t, int64_t *s, int nd, ct_generator *g,
                                  ct__tf_params *q)
{
    const char *op = "ct_random_erasing";
    ct_status st = ct__tf_need_dims(op, s, nd, 3);
    if (st) {
        return st;
    }
    int64_t c = s[nd - 3];
    q->v = NULL;
    if (!ct__tf_coin(t->era.p, g, &q->hit)) {
        return ct_error_code();
    }
    if (q->hit && !t->era.random_value && t->era.n_value != 1 && t->era.n_value != c) {
        return ct__fail(CT_ERR_SHAPE, op, "If value is a sequence, it should have either a "
                        "single value or %lld (number of input channels)", (long long)c);
    }
    return q->hit ? ct__erasing_box(t, c, s[nd - 2], s[nd - 1], g, q) : CT_OK;
}

static ct_tensor *ct__erasing_run(const ct__tf *t, ct_tensor *x, int64_t n_samples,
                                  const ct__tf_params *q, bool own)
{
    bool any = false;
    for (int64_t k = 0; k < n_samples; k++) {
        any = any || q[k].hit;
    }
    if (!any) {
        return ct_alias(x);
    }
    ct_tensor *y = t->era.inplace ? ct_alias(x) : ct__tf_private(x, own);
    bool ok = y != NULL;
    int batched = n_samples > 1, nd = y ? ct_dim(y) - batched : 0;
    for (int64_t k = 0; k < n_samples && ok; k++) {
        if (!q[k].hit) {
            continue;
        }
        ct_tensor *img = batched ? ct_select(y, 0, k) : ct_alias(y);
        ct_tensor *rows = ct_narrow(img, nd - 2, q[k].i, q[k].h);
        ct_tensor *box = ct_narrow(rows, nd - 1, q[k].j, q[k].w);
        ok = ct_copy_(box, q[k].v) != NULL;
        ct_free(box);
        ct_free(rows);
        ct_free(img);
    }
    if (!ok) {
        ct_free(y);
        return NULL;
    }
    return y;
}

/* ---- Normalize -------------------------------------------------------------------------- */
static ct_status ct__normalize_check(const ct_tensor *input, int n)
{
    const char *op = "ct_transforms_normalize";
    if (!ct_is_floating_point(input)) {
        return ct__fail(CT_ERR_DTYPE, op, "Input tensor should be a float tensor. Got torch.%s.",
                        ct_dtype_name(ct_tensor_dtype(input)));
    }
    ct_status st = ct__tf_need_dims(op, ct_sizes(input), ct_dim(input), 3);
    if (st == CT_OK && n < 1) {
        st = ct__fail(CT_ERR_VALUE, op, "mean and std need at least one value, got n=%d", n);
    }
    return st;
}

/* values[0..n) as a (n, 1, 1) tensor of dtype; with zero_error, an error when one becomes 0. */
static ct_tensor *ct__normalize_param(const double *values, int n, ct_dtype dtype,
                                      bool zero_error)
{
    int64_t sizes[3] = {n, 1, 1};
    ct_tensor *t = ct_to_dtype(ct_tensor_from_data(values, CT_FLOAT64, sizes, 3), dtype);
    for (int k = 0; t && zero_error && k < n; k++) {
        if (ct__load_f64(ct__data(t) + (size_t)k * ct_dtype_size(dtype), dtype) == 0) {
            ct__fail(CT_ERR_VALUE, "ct_transforms_normalize", "std evaluated to zero after "
                     "conversion to torch.%s, leading to division by zero.", ct_dtype_name(dtype));
            ct_free(t);
            return NULL;
        }
    }
    return t;
}

/* input.sub_(mean).div_(std) on input itself (in_place) or on a copy. */
static ct_tensor *ct__normalize(ct_tensor *input, const double *mean, const double *std, int n,
                                bool in_place)
{
    if (ct__normalize_check(input, n) != CT_OK) {
        return NULL;
    }
    ct_dtype dt = ct_tensor_dtype(input);
    if (ct_scope_begin() != CT_OK) {
        return NULL;
    }
    ct_tensor *s = ct__normalize_param(std, n, dt, true);
    ct_tensor *m = s ? ct__normalize_param(mean, n, dt, false) : NULL;
    ct_tensor *y = !m ? NULL : in_place ? ct_alias(input) : ct_sub(input, m);
    bool ok = y && (!in_place || ct_sub_(y, m, 1.0)) && ct_div_(y, s);
    ct_keep(ok ? y : NULL);
    ct_scope_end();
    return ok ? y : NULL;
}

ct_tensor *ct_transforms_normalize(ct_tensor *input, const double *mean, const double *std,
                                   int n, bool inplace)
{
    const char *op = "ct_transforms_normalize";
    if (ct__null(op, input) || ct__null(op, mean) || ct__null(op, std)) {
        return NULL;
    }
    return ct__normalize(input, mean, std, n, inplace);
}

static ct_status ct__normalize_draw(const ct__tf *t, int64_t *s, int nd, ct_generator *g,
                                    ct__tf_params *q)
{
    (void)t;
    (void)g;
    (void)q;
    return ct__tf_need_dims("ct_transforms_normalize", s, nd, 3);
}

static ct_tensor *ct__normalize_run(const ct__tf *t, ct_tensor *x, int64_t n_samples,
                                    const ct__tf_params *q, bool own)
{
    (void)n_samples;
    (void)q;
    return ct__normalize(x, t->mean, t->std, t->n, own || t->inplace);
}

/* ---- the built-in transforms' table ----------------------------------------------------- */
typedef struct ct__tf_kind {
    /* One sample's draws for a sample of shape s[0..nd); writes the output shape into s. */
    ct_status (*draw)(const ct__tf *t, int64_t *s, int nd, ct_generator *g, ct__tf_params *q);
    /* x's n_samples samples, sample k with q[k]; own: x is private to the caller (it may be
       changed in place). A new tensor of the current scope (maybe an alias of x). */
    ct_tensor *(*run)(const ct__tf *t, ct_tensor *x, int64_t n_samples, const ct__tf_params *q,
                      bool own);
} ct__tf_kind;

static const ct__tf_kind ct__tf_kinds[4] = {
    {ct__normalize_draw, ct__normalize_run},
    {ct__crop_draw, ct__crop_run},
    {ct__flip_draw, ct__flip_run},
    {ct__erasing_draw, ct__erasing_run},
};

/* Applies the steps steps[0..n) (built-in, not Compose) to x, whose dim 0 holds n_samples
   samples when batched (else x is one image: n_samples 1): draws every step for sample 0,
   then sample 1, ..., then runs each step over x. Returns a new tensor of the current
   scope; NULL on error. */
static ct_tensor *ct__tf_pipeline(const ct__tf *const *steps, int n, ct_tensor *x,
                                  int64_t n_samples, bool batched, ct_generator *g)
{
    if (ct_tensor_device(x).type != CT_CPU) {
        ct__fail(CT_ERR_DEVICE, "ct_transform_apply", "the built-in transforms take CPU tensors");
        return NULL;
    }
    ct__tf_params *q = (ct__tf_params *)ct__calloc(sizeof(ct__tf_params) * (size_t)n *
                                                   (size_t)n_samples);
    if (!q) {
        ct__fail(CT_ERR_OOM, "ct_transform_apply", "out of memory");
        return NULL;
    }
    if (ct_scope_begin() != CT_OK) {
        ct__free(q);
        return NULL;
    }
    ct_status st = CT_OK;
    for (int64_t k = 0; k < n_samples && st == CT_OK; k++) {
        int nd = ct_dim(x) - batched;
        int64_t s[CT_MAX_DIMS];
        memcpy(s, ct_sizes(x) + batched, sizeof(int64_t) * (size_t)nd);
        for (int i = 0; i < n && st == CT_OK; i++) {
            st = ct__tf_kinds[steps[i]->kind].draw(steps[i], s, nd, g, &q[i * n_samples + k]);
        }
    }
    ct_tensor *y = st == CT_OK ? ct_alias(x) : NULL;
    bool own = false;
    for (int i = 0; i < n && y; i++) {
        ct_tensor *next = ct__tf_kinds[steps[i]->kind].run(steps[i], y, n_samples,
                                                           &q[i * n_samples], own);
        own = own || (next && ct_untyped_storage(next) != ct_untyped_storage(x));
        ct_free(y);
        y = next;
    }
    ct_keep(y);
    ct_scope_end();
    ct__free(q);
    return y;
}

/* The built-in steps of t, Compose flattened, into out (room for max); -1 when a step is the
   user's or there are more than max. */
static int ct__tf_flatten(const ct_transform *t, const ct__tf **out, int max)
{
    const ct__tf *b = ct__tf_builtin(t);
    if (!b) {
        return -1;
    }
    if (b->kind != CT__TF_COMPOSE) {
        if (max < 1) {
            return -1;
        }
        out[0] = b;
        return 1;
    }
    int n = 0;
    for (int i = 0; i < b->n; i++) {
        int got = ct__tf_flatten(b->steps[i], out + n, max - n);
        if (got < 0) {
            return -1;
        }
        n += got;
    }
    return n;
}

static ct_tensor *ct__tf_apply(const ct_transform *self, ct_tensor *input, ct_generator *g)
{
    const ct__tf *t = (const ct__tf *)self->user;
    if (t->kind != CT__TF_COMPOSE) {
        return ct__tf_pipeline(&t, 1, input, 1, false, g);
    }
    ct_tensor *x = ct_alias(input);
    for (int i = 0; i < t->n && x; i++) {
        ct_tensor *y = ct_transform_apply(t->steps[i], x, g);
        ct_free(x);
        x = y;
    }
    return x;
}

ct_tensor *ct_transform_apply(const ct_transform *t, ct_tensor *input, ct_generator *g)
{
    const char *op = "ct_transform_apply";
    if (ct__null(op, t) || ct__null(op, input)) {
        return NULL;
    }
    if (!t->apply) {
        ct__fail(CT_ERR_VALUE, op, "the transform's apply callback must not be NULL");
        return NULL;
    }
    ct_tensor *y = t->apply(t, input, g);
    if (!y && ct_error_code() == CT_OK) {
        ct__fail(CT_ERR_VALUE, op, "the transform returned NULL without an error");
    }
    return y;
}

void ct_transform_free(ct_transform *t)
{
    if (t && t->destroy) {
        t->destroy(t);
    }
}

/* ---- constructors ----------------------------------------------------------------------- */
static void ct__tf_destroy(ct_transform *self)
{
    ct__tf *t = (ct__tf *)self->user;
    ct__free(t->mean);
    ct__free(t->steps);
    ct__free(t);
}

static ct__tf *ct__tf_new(const char *op, int kind)
{
    ct__tf *t = (ct__tf *)ct__calloc(sizeof(ct__tf));
    if (!t) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    t->base.apply = ct__tf_apply;
    t->base.destroy = ct__tf_destroy;
    t->base.user = t;
    t->kind = kind;
    return t;
}

ct_transform *ct_transforms_normalize_new(const double *mean, const double *std, int n,
                                          bool inplace)
{
    const char *op = "ct_transforms_normalize_new";
    if (ct__null(op, mean) || ct__null(op, std)) {
        return NULL;
    }
    if (n < 1 || n > INT32_MAX / 2) {
        ct__fail(CT_ERR_VALUE, op, "mean and std need at least one value, got n=%d", n);
        return NULL;
    }
    ct__tf *t = ct__tf_new(op, CT__TF_NORMALIZE);
    double *values = t ? (double *)ct__malloc(sizeof(double) * 2 * (size_t)n) : NULL;
    if (!values) {
        ct__free(t);
        if (ct_error_code() == CT_OK) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
        }
        return NULL;
    }
    memcpy(values, mean, sizeof(double) * (size_t)n);
    memcpy(values + n, std, sizeof(double) * (size_t)n);
    t->mean = values;
    t->std = values + n;
    t->n = n;
    t->inplace = inplace;
    return &t->base;
}

ct_transform *ct_random_crop_new(const ct_random_crop_opts *opts)
{
    const char *op = "ct_random_crop_new";
    if (ct__null(op, opts)) {
        return NULL;
    }
    if (opts->size[0] < 1 || opts->size[1] < 1) {
        ct__fail(CT_ERR_VALUE, op, "size must be positive, got (%lld, %lld)",
                 (long long)opts->size[0], (long long)opts->size[1]);
        return NULL;
    }
    for (int k = 0; k < 4; k++) {
        if (opts->padding[k] < 0 || opts->padding[k] > INT32_MAX) {
            ct__fail(CT_ERR_VALUE, op, "padding must be between 0 and %d, got %lld at index %d",
                     INT32_MAX, (long long)opts->padding[k], k);
            return NULL;
        }
    }
    if ((unsigned)opts->padding_mode > CT_PADDING_SYMMETRIC) {
        ct__fail(CT_ERR_VALUE, op, "Padding mode should be either constant, edge, reflect or "
                 "symmetric");
        return NULL;
    }
    ct__tf *t = ct__tf_new(op, CT__TF_CROP);
    if (t) {
        t->crop = *opts;
    }
    return t ? &t->base : NULL;
}

static bool ct__tf_check_p(const char *op, double p)
{
    if (!(p >= 0 && p <= 1)) {
        ct__fail(CT_ERR_VALUE, op, "p should be a probability between 0 and 1, got %g", p);
        return false;
    }
    return true;
}

ct_transform *ct_random_horizontal_flip_new(double p)
{
    const char *op = "ct_random_horizontal_flip_new";
    ct__tf *t = ct__tf_check_p(op, p) ? ct__tf_new(op, CT__TF_FLIP) : NULL;
    if (t) {
        t->p = p;
    }
    return t ? &t->base : NULL;
}

ct_random_erasing_opts ct_random_erasing_defaults(void)
{
    ct_random_erasing_opts o;
    memset(&o, 0, sizeof o);
    o.p = 0.5;
    o.scale[0] = 0.02;
    o.scale[1] = 0.33;
    o.ratio[0] = 0.3;
    o.ratio[1] = 3.3;
    o.n_value = 1;
    return o;
}

ct_transform *ct_random_erasing_new(const ct_random_erasing_opts *opts)
{
    const char *op = "ct_random_erasing_new";
    if (ct__null(op, opts) || !ct__tf_check_p(op, opts->p)) {
        return NULL;
    }
    if (!(opts->scale[0] >= 0 && opts->scale[1] <= 1)) {
        ct__fail(CT_ERR_VALUE, op, "Scale should be between 0 and 1");
        return NULL;
    }
    if (opts->n_value < 1 || opts->n_value > CT_RANDOM_ERASING_MAX_VALUES) {
        ct__fail(CT_ERR_VALUE, op, "n_value must be between 1 and %d, got %d",
                 CT_RANDOM_ERASING_MAX_VALUES, opts->n_value);
        return NULL;
    }
    ct__tf *t = ct__tf_new(op, CT__TF_ERASING);
    if (t) {
        t->era = *opts;
    }
    return t ? &t->base : NULL;
}

ct_transform *ct_compose_new(ct_transform *const *transforms, int n)
{
    const char *op = "ct_compose_new";
    if (ct__null(op, transforms)) {
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, op, "Compose needs at least one transform, got n=%d", n);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (ct__null(op, transforms[i])) {
            return NULL;
        }
    }
    ct__tf *t = ct__tf_new(op, CT__TF_COMPOSE);
    ct_transform **steps = t ? (ct_transform **)ct__malloc(sizeof(ct_transform *) * (size_t)n)
                             : NULL;
    if (!steps) {
        ct__free(t);
        if (ct_error_code() == CT_OK) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
        }
        return NULL;
    }
    memcpy(steps, transforms, sizeof(ct_transform *) * (size_t)n);
    t->steps = steps;
    t->n = n;
    return &t->base;
}

/* ---- the transformed dataset ------------------------------------------------------------ */
/* Most built-in steps the batched path runs (longer pipelines go sample by sample). */
#define CT__TF_MAX_STEPS 32

typedef struct ct__tf_dataset {
    ct_dataset base;
    ct_dataset *parent;           /* borrowed */
    const ct_transform *pipeline; /* borrowed */
    int field;
} ct__tf_dataset;

static int64_t ct__tfds_len(const ct_dataset *ds)
{
    return ct_dataset_len(((const ct__tf_dataset *)ds->user)->parent);
}

/* Replaces fields[d->field] by out (NULL: clears every field and returns the error). */
static ct_status ct__tfds_set(const ct__tf_dataset *d, ct_tensor **fields, ct_tensor *out)
{
    ct_free(fields[d->field]);
    fields[d->field] = out;
    if (out) {
        return CT_OK;
    }
    for (int f = 0; f < d->base.n_fields; f++) {
        ct_free(fields[f]);
        fields[f] = NULL;
    }
    return ct_error_code() != CT_OK ? ct_error_code() : CT_ERR_VALUE;
}

static ct_status ct__tfds_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const ct__tf_dataset *d = (const ct__tf_dataset *)ds->user;
    ct_status st = ct_dataset_get(d->parent, index, fields);
    if (st != CT_OK) {
        return st;
    }
    return ct__tfds_set(d, fields, ct_transform_apply(d->pipeline, fields[d->field], NULL));
}

/* The pipeline on each row of x (n rows) on its own, stacked. */
static ct_tensor *ct__tfds_rows(const ct__tf_dataset *d, const ct_tensor *x, int64_t n)
{
    ct_tensor **rows = (ct_tensor **)ct__calloc(sizeof(ct_tensor *) * (size_t)n);
    if (!rows) {
        ct__fail(CT_ERR_OOM, "ct_dataset_get_batch", "out of memory");
        return NULL;
    }
    bool ok = true;
    for (int64_t k = 0; k < n && ok; k++) {
        ct_tensor *row = ct_select(x, 0, k);
        rows[k] = row ? ct_transform_apply(d->pipeline, row, NULL) : NULL;
        ok = rows[k] != NULL;
        ct_free(row);
    }
    ct_tensor *out = ok && n <= INT32_MAX ? ct_stack((const ct_tensor *const *)rows, (int)n, 0)
                                          : NULL;
    for (int64_t k = 0; k < n; k++) {
        ct_free(rows[k]);
    }
    ct__free(rows);
    return out;
}

static ct_status ct__tfds_get_batch(const ct_dataset *ds, const int64_t *idx, int64_t n,
                                    ct_tensor **fields)
{
    const ct__tf_dataset *d = (const ct__tf_dataset *)ds->user;
    ct_status st = ct_dataset_get_batch(d->parent, idx, n, fields);
    if (st != CT_OK) {
        return st;
    }
    const ct__tf *steps[CT__TF_MAX_STEPS];
    int n_steps = ct__tf_flatten(d->pipeline, steps, CT__TF_MAX_STEPS);
    ct_tensor *x = fields[d->field];
    ct_tensor *out = n_steps < 0 ? ct__tfds_rows(d, x, n)
                                 : ct__tf_pipeline(steps, n_steps, x, n, true, NULL);
    return ct__tfds_set(d, fields, out);
}

static void ct__tfds_destroy(ct_dataset *ds)
{
    ct__free(ds->user);
}

ct_dataset *ct_transformed_dataset_new(ct_dataset *ds, int field, const ct_transform *transform)
{
    const char *op = "ct_transformed_dataset_new";
    if (ct__null(op, ds) || ct__null(op, transform) || ct_dataset_len(ds) < 0) {
        return NULL;
    }
    if (field < 0 || field >= ds->n_fields) {
        ct__fail(CT_ERR_VALUE, op, "field %d is out of range for a dataset of %d fields", field,
                 ds->n_fields);
        return NULL;
    }
    ct__tf_dataset *d = (ct__tf_dataset *)ct__calloc(sizeof(ct__tf_dataset));
    if (!d) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    d->base.len = ct__tfds_len;
    d->base.get = ct__tfds_get;
    d->base.get_batch = ct__tfds_get_batch;
    d->base.destroy = ct__tfds_destroy;
    d->base.n_fields = ds->n_fields;
    d->base.user = d;
    d->parent = ds;
    d->pipeline = transform;
    d->field = field;
    return &d->base;
}
#undef CT__TF_MAX_STEPS

/* ---- standardization -------------------------------------------------------------------- */
static bool ct__standardize_check(const char *op, const ct_tensor *x)
{
    char buf[160];
    if (ct_dim(x) != 2 || ct_size(x, 0) < 1) {
        ct__fail(CT_ERR_SHAPE, op, "expected x of shape (N, F) with N >= 1, got %s",
                 ct__shape_str(ct_sizes(x), ct_dim(x), buf, sizeof buf));
        return false;
    }
    if (!ct_is_floating_point(x)) {
        ct__fail(CT_ERR_DTYPE, op, "expected a floating point x, got %s",
                 ct_dtype_name(ct_tensor_dtype(x)));
        return false;
    }
    return true;
}

ct_status ct_standardize_fit(const ct_tensor *x, ct_tensor **mean, ct_tensor **scale)
{
    const char *op = "ct_standardize_fit";
    if (ct__null(op, mean) || ct__null(op, scale)) {
        return CT_ERR_NULL_ARG;
    }
    *mean = *scale = NULL;
    if (ct__null(op, x) || !ct__standardize_check(op, x)) {
        return ct_error_code();
    }
    double n = (double)ct_size(x, 0), eps = DBL_EPSILON;
    if (ct_scope_begin() != CT_OK) {
        return ct_error_code();
    }
    int64_t dim0 = 0;
    ct_tensor *var = NULL, *m = NULL;
    ct_status st = ct_var_mean(ct_to_dtype(x, CT_FLOAT64), &dim0, 1, 0.0, false, &var, &m);
    /* sklearn's _is_constant_feature: var <= n * eps * var + (n * mean * eps)^2 */
    ct_tensor *bound = st ? NULL
                          : ct_add(ct_mul_scalar(var, n * eps),
                                   ct_square(ct_mul_scalar(ct_mul_scalar(m, n), eps)));
    ct_tensor *s = ct_masked_fill(ct_sqrt(var), ct_le(var, bound), 1.0);
    if (s) {
        *mean = ct_keep(m);
        *scale = ct_keep(s);
    }
    ct_scope_end();
    return s ? CT_OK : ct_error_code();
}

ct_tensor *ct_standardize(const ct_tensor *x, const ct_tensor *mean, const ct_tensor *scale)
{
    const char *op = "ct_standardize";
    if (ct__null(op, x) || ct__null(op, mean) || ct__null(op, scale) ||
        !ct__standardize_check(op, x)) {
        return NULL;
    }
    int64_t f = ct_size(x, 1);
    if (ct_dim(mean) != 1 || ct_dim(scale) != 1 || ct_size(mean, 0) != f ||
        ct_size(scale, 0) != f) {
        ct__fail(CT_ERR_SHAPE, op, "mean and scale must have shape (%lld,) for x with %lld "
                 "features", (long long)f, (long long)f);
        return NULL;
    }
    ct_dtype dt = ct_tensor_dtype(x);
    if (ct_scope_begin() != CT_OK) {
        return NULL;
    }
    ct_tensor *y = ct_div(ct_sub(x, ct_to_dtype(mean, dt)), ct_to_dtype(scale, dt));
    ct_keep(y);
    ct_scope_end();
    return y;
}

CT__GLUE_END
