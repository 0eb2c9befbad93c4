/* nn/pad.c - pad, interpolate and pixel shuffle, as composites of index_select, cat, full and
 * views (their gradients come from those ops), and the padding / Upsample / PixelShuffle
 * modules.
 *
 * Legend: a padded or resized axis has input size n and output size o; output position i of
 * the axis reads input position src[i] (reflect / replicate / circular / nearest), or
 * i0[i] * l0[i] + i1[i] * l1[i] (linear).
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "state_dict.h"
#include "module.h"
#include "pad.h"
#include "../ops/index.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"

#include <math.h>
#include <string.h>

CT__GLUE_BEGIN

/* An int64 tensor of v[0..n) (copied). */
static ct_tensor *ct__pad_index(const int64_t *v, int64_t n)
{
    return ct_tensor_from_data(v, CT_INT64, &n, 1);
}

/* ---- pad ------------------------------------------------------------------------------ */
static const char *const ct__pad_names[4] = {"constant", "reflect", "replicate", "circular"};

/* reflect / replicate: PyTorch's checks of the k padded dims (k = n_pad / 2). */
static bool ct__pad_check_mode(const char *fn, const ct_tensor *t, const int64_t *pad, int k,
                               int mode)
{
    static const char dims[3] = {'W', 'H', 'D'};
    char buf[128];
    int nd = t->ndim;
    for (int d = nd == k + 2; d < nd; d++) {
        if (t->sizes[d] == 0) {
            ct__fail(CT_ERR_SHAPE, fn, "Expected %dD or %dD (batch mode) tensor with possibly 0 "
                     "batch size and other non-zero dimensions for input, but got: %s", k + 1,
                     k + 2, ct__shape_str(t->sizes, nd, buf, sizeof buf));
            return false;
        }
    }
    for (int a = 0; a < k && mode == CT_PAD_REFLECT; a++) {
        int64_t n = t->sizes[nd - 1 - a], l = pad[2 * a], r = pad[2 * a + 1];
        if (l >= n || r >= n) {
            ct__fail(CT_ERR_VALUE, fn, "Argument #%d: Padding size should be less than the "
                     "corresponding input dimension, but got: padding (%lld, %lld) at dimension "
                     "%d of input %s", 4 + 2 * a, (long long)l, (long long)r, nd - 1 - a,
                     ct__shape_str(t->sizes, nd, buf, sizeof buf));
            return false;
        }
    }
    int64_t in[3], out[3];
    bool small = false;
    for (int a = 0; a < k; a++) { /* in[0] the outermost padded dim */
        in[k - 1 - a] = t->sizes[nd - 1 - a];
        out[k - 1 - a] = in[k - 1 - a] + pad[2 * a] + pad[2 * a + 1];
        small = small || out[k - 1 - a] < 1;
    }
    if (!small) {
        return true;
    }
    if (k == 1) {
        ct__fail(CT_ERR_VALUE, fn, "input (W: %lld) is too small. Calculated output W: %lld",
                 (long long)in[0], (long long)out[0]);
        return false;
    }
    char o[96], i[96];
    int po = 0, pi = 0;
    for (int a = 0; a < k; a++) {
        po += snprintf(o + po, sizeof o - (size_t)po, "%s%c: %lld", a ? " " : "",
                       dims[k - 1 - a], (long long)out[a]);
        pi += snprintf(i + pi, sizeof i - (size_t)pi, "%s%c: %lld", a ? ", " : "",
                       dims[k - 1 - a], (long long)in[a]);
    }
    ct__fail(CT_ERR_VALUE, fn, "Calculated output %s must be >= 1 in every dimension (input %s)",
             o, i);
    return false;
}

/* circular: no wrapping around more than once, no negative size. */
static bool ct__pad_check_circular(const char *fn, const ct_tensor *t, const int64_t *pad, int k)
{
    for (int a = 0; a < k; a++) {
        int64_t n = t->sizes[t->ndim - 1 - a], l = pad[2 * a], r = pad[2 * a + 1];
        if (l > n || r > n) {
            ct__fail(CT_ERR_VALUE, fn, "Padding value causes wrapping around more than once.");
            return false;
        }
        if (n + l + r < 0) {
            ct__fail(CT_ERR_VALUE, fn, "Negative padding value is resulting in an empty "
                     "dimension");
            return false;
        }
    }
    return true;
}

/* Attributes: pad (int[]), mode, value. PyTorch's _pad_enum checks, then the mode's. */
static bool ct__pad_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *pad = c->attrs[0].ints;
    int n = (int)c->attrs[0].i, mode = (int)c->attrs[1].i, nd = t->ndim, k = n / 2;
    if (n % 2) {
        ct__fail(CT_ERR_VALUE, c->fn, "Padding length must be divisible by 2");
        return false;
    }
    if (n > 2 * nd) {
        ct__fail(CT_ERR_VALUE, c->fn, "Padding length should be less than or equal to two times "
                 "the input dimension but got padding length %d and input of dimension %d", n, nd);
        return false;
    }
    if (!ct__check_enum(c->fn, "mode", mode, CT_PAD_CIRCULAR + 1)) {
        return false;
    }
    if (mode == CT_PAD_CONSTANT) {
        for (int a = 0; a < k; a++) {
            int64_t s = t->sizes[nd - 1 - a];
            if ((pad[2 * a] < 0 && s + pad[2 * a] < 0) || s + pad[2 * a] + pad[2 * a + 1] < 0) {
                ct__fail(CT_ERR_INDEX, c->fn, "narrow(): length must be non-negative.");
                return false;
            }
        }
        return true;
    }
    if (c->attrs[2].f != 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "Padding mode \"%s\" doesn't take in value argument",
                 ct__pad_names[mode]);
        return false;
    }
    if (k < 1 || k > 3 || (nd != k + 1 && nd != k + 2)) {
        ct__fail(CT_ERR_VALUE, c->fn, "Padding size %d is not supported for %dD input tensor.", n,
                 nd);
        return false;
    }
    return mode == CT_PAD_CIRCULAR ? ct__pad_check_circular(c->fn, t, pad, k)
                                   : ct__pad_check_mode(c->fn, t, pad, k, mode);
}

/* Constant mode along dim: cropped by negative pads, then value blocks cat on each side. */
static ct_tensor *ct__pad_constant_dim(ct_tensor *x, int dim, int64_t l, int64_t r, double value)
{
    if (l < 0) {
        x = ct_narrow(x, dim, -l, ct_size(x, dim) + l);
    }
    if (r < 0) {
        x = ct_narrow(x, dim, 0, ct_size(x, dim) + r);
    }
    if (!x || (l <= 0 && r <= 0)) {
        return x;
    }
    const ct_tensor *parts[3];
    int np = 0;
    int64_t s[CT_MAX_DIMS];
    memcpy(s, ct_sizes(x), sizeof(int64_t) * (size_t)ct_dim(x));
    if (l > 0) {
        s[dim] = l;
        parts[np++] = ct_full(s, ct_dim(x), value, ct_tensor_dtype(x));
    }
    parts[np++] = x;
    if (r > 0) {
        s[dim] = r;
        parts[np++] = ct_full(s, ct_dim(x), value, ct_tensor_dtype(x));
    }
    return ct_cat(parts, np, dim);
}

/* The source position of output i along an axis of size n with left pad l. */
static int64_t ct__pad_source(int mode, int64_t i, int64_t n, int64_t l, int64_t r)
{
    int64_t s = i - l;
    if (mode == CT_PAD_REFLECT) {
        s = s < 0 ? -s : s;
        return s >= n ? 2 * (n - 1) - s : s;
    }
    if (mode == CT_PAD_REPLICATE) {
        return s < 0 ? 0 : s >= n ? n - 1 : s;
    }
    /* circular: PyTorch crops by the negative pads first, then wraps within what is left */
    int64_t crop = l < 0 ? -l : 0, m = n - crop - (r < 0 ? -r : 0);
    s = i - (l > 0 ? l : 0);
    return crop + (s < 0 ? s + m : s >= m ? s - m : s);
}

/* reflect / replicate / circular along dim: index_select of the source positions. */
static ct_tensor *ct__pad_index_dim(ct_tensor *x, int mode, int dim, int64_t l, int64_t r)
{
    int64_t n = ct_size(x, dim), o = n + l + r;
    int64_t *src = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(o + 1));
    if (!src) {
        ct__fail(CT_ERR_OOM, "ct_pad", "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < o; i++) {
        src[i] = ct__pad_source(mode, i, n, l, r);
    }
    ct_tensor *y = ct_index_select(x, dim, ct__pad_index(src, o));
    ct__free(src);
    return y;
}

static ct_status ct__pad_composite(ct_op_call *c)
{
    const int64_t *pad = c->attrs[0].ints;
    int k = (int)c->attrs[0].i / 2, mode = (int)c->attrs[1].i, nd = c->inputs[0]->ndim;
    ct_scope_begin();
    ct_tensor *x = ct_alias(c->inputs[0]);
    bool fresh = false; /* x is a new tensor, not a view of the input */
    for (int a = 0; a < k && x; a++) {
        int64_t l = pad[2 * a], r = pad[2 * a + 1];
        if (mode == CT_PAD_CONSTANT) {
            x = ct__pad_constant_dim(x, nd - 1 - a, l, r, c->attrs[2].f);
            fresh = fresh || l > 0 || r > 0;
        } else {
            x = ct__pad_index_dim(x, mode, nd - 1 - a, l, r);
            fresh = true;
        }
    }
    return ct__composite_end(c, fresh ? x : ct_clone(x));
}

static const ct_op ct__op_pad = {
    "aten::pad", "pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> "
    "Tensor", "ct_pad", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__pad_meta, CT__K_NONE,
    ct__pad_composite, NULL, NULL, 0u, NULL, NULL};

ct_tensor *ct_pad(const ct_tensor *input, const int64_t *pad, int n_pad, ct_pad_mode mode,
                  double value)
{
    if (ct__null("ct_pad", pad)) {
        return NULL;
    }
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_pad, "ct_pad", in, 1);
    ct__call_ints(&c, pad, n_pad);
    ct__call_i(&c, mode);
    ct__call_f(&c, value);
    return ct__dispatch(&c);
}

/* ---- interpolate ---------------------------------------------------------------------- */
/* Attributes: output_size (int[dims]), align_corners, scale per dim (0: none). The sizes must
   be positive (PyTorch's upsample_*_common_check). */
static bool ct__upsample_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *o = c->attrs[0].ints, *s = t->sizes + 2;
    if (c->attrs[0].i == 1 && (s[0] <= 0 || o[0] <= 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "Input and output sizes should be greater than 0, but got "
                 "input (W: %lld) and output (W: %lld)", (long long)s[0], (long long)o[0]);
        return false;
    }
    if (c->attrs[0].i == 2 && (s[0] <= 0 || s[1] <= 0 || o[0] <= 0 || o[1] <= 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "Input and output sizes should be greater than 0, but got "
                 "input (H: %lld, W: %lld) output (H: %lld, W: %lld)", (long long)s[0],
                 (long long)s[1], (long long)o[0], (long long)o[1]);
        return false;
    }
    return true;
}

/* PyTorch's area_pixel_compute_scale in the op math type (float, or double for float64). */
static double ct__upsample_ratio(bool f64, int64_t n, int64_t o, bool align, double scale)
{
    if (align) {
        return o > 1 ? (f64 ? (double)(n - 1) / (double)(o - 1)
                            : (double)((float)(n - 1) / (float)(o - 1)))
                     : 0.0;
    }
    if (scale > 0) {
        return f64 ? 1.0 / scale : (double)(float)(1.0 / scale);
    }
    return f64 ? (double)n / (double)o : (double)((float)n / (float)o);
}

/* The source of output i, as PyTorch's area_pixel_compute_source_index (align: ratio * i,
   else ratio * (i + 0.5) - 0.5 clamped at 0), in the op math type. */
static double ct__upsample_src(bool f64, double ratio, int64_t i, bool align)
{
    if (f64) { /* fma(x, y, 0): the rounded product, never contracted with the - 0.5 */
        double s = align ? ratio * (double)i : fma(ratio, (double)i + 0.5, 0.0) - 0.5;
        return s < 0 ? 0 : s;
    }
    float r = (float)ratio, s = align ? r * (float)i : fmaf(r, (float)i + 0.5f, 0.0f) - 0.5f;
    return s < 0 ? 0 : (double)s;
}

/* One axis (dim, input size n, output size o) of the resize of x. */
static ct_tensor *ct__upsample_axis(ct_tensor *x, int variant, int dim, int64_t o, bool align,
                                    double scale)
{
    bool f64 = ct_tensor_dtype(x) == CT_FLOAT64, linear = variant >= 2;
    int64_t n = ct_size(x, dim);
    double ratio = ct__upsample_ratio(f64, n, o, linear && align, scale);
    int64_t *ix = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(2 * o + 1));
    double *w = (double *)ct__malloc(sizeof(double) * (size_t)(2 * o + 1));
    if (!ix || !w) {
        ct__free(ix);
        ct__free(w);
        ct__fail(CT_ERR_OOM, "ct_interpolate", "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < o; i++) {
        int64_t s;
        if (variant == CT_INTERPOLATE_NEAREST) { /* floorf(ratio * i) */
            s = (int64_t)floorf((float)ct__upsample_src(f64, ratio, i, true));
        } else if (variant == CT_INTERPOLATE_NEAREST_EXACT) { /* floorf(src + 0.5) */
            s = (int64_t)floorf((float)(ct__upsample_src(f64, ratio, i, false) + 0.5));
        } else if (o == n) {
            s = i;
        } else {
            double src = ct__upsample_src(f64, ratio, i, align);
            s = (int64_t)floorf((float)src);
            s = s < n - 1 ? s : n - 1;
            double l1 = src - (double)s;
            l1 = f64 ? l1 : (double)(float)l1;
            w[o + i] = l1 < 0 ? 0 : l1 > 1 ? 1 : l1;
        }
        ix[i] = s < n - 1 ? s : n - 1;
        if (linear) { /* o == n: a copy (i1 = i0, l1 = 0), as PyTorch */
            w[o + i] = o == n ? 0 : w[o + i];
            ix[o + i] = ix[i] + (o != n && ix[i] < n - 1);
            w[i] = 1 - w[o + i];
        }
    }
    ct_tensor *y;
    if (!linear) {
        y = ct_index_select(x, dim, ct__pad_index(ix, o));
    } else {
        int64_t ws[CT_MAX_DIMS];
        for (int d = 0; d < ct_dim(x); d++) {
            ws[d] = d == dim ? o : 1;
        }
        ct_dtype dt = ct_tensor_dtype(x);
        ct_tensor *w0 = ct_to_dtype(ct_tensor_from_data(w, CT_FLOAT64, ws, ct_dim(x)), dt);
        ct_tensor *w1 = ct_to_dtype(ct_tensor_from_data(w + o, CT_FLOAT64, ws, ct_dim(x)), dt);
        y = ct_add(ct_mul(ct_index_select(x, dim, ct__pad_index(ix, o)), w0),
                   ct_mul(ct_index_select(x, dim, ct__pad_index(ix + o, o)), w1));
    }
    ct__free(ix);
    ct__free(w);
    return y;
}

/* The last axis first (PyTorch's order of the linear arithmetic); float16 / bfloat16 in
   float32, rounded once at the end, as PyTorch's kernels. */
static ct_status ct__upsample_composite(ct_op_call *c)
{
    int dims = (int)c->attrs[0].i, nd = c->inputs[0]->ndim;
    ct_dtype dt = c->inputs[0]->dtype;
    bool half = ct__is_half(dt) && c->op->variant >= CT_INTERPOLATE_LINEAR;
    ct_scope_begin();
    ct_tensor *x = half ? ct_to_dtype(c->inputs[0], CT_FLOAT32) : ct_alias(c->inputs[0]);
    for (int a = dims - 1; a >= 0 && x; a--) {
        x = ct__upsample_axis(x, c->op->variant, nd - dims + a, c->attrs[0].ints[a],
                              c->attrs[1].i != 0, c->attrs[2 + a].f);
    }
    return ct__composite_end(c, half ? ct_to_dtype(x, dt) : x);
}

#define CT__UPSAMPLE_OP(NAME, OP, SCHEMA, VARIANT)                                              \
    static const ct_op NAME = {OP, SCHEMA, "ct_interpolate", CT_OP_OTHER, CT_AUTOCAST_NONE,   \
                               VARIANT, 0u, NULL, ct__upsample_meta, CT__K_NONE,              \
                               ct__upsample_composite, NULL, NULL, 0u, NULL, NULL};
#define CT__UPSAMPLE_SCHEMA(OP) OP ".vec(Tensor input, SymInt[]? output_size, float[]? " \
    "scale_factors) -> Tensor"
CT__UPSAMPLE_OP(ct__op_upsample_nearest1d, "aten::upsample_nearest1d",
                CT__UPSAMPLE_SCHEMA("upsample_nearest1d"), CT_INTERPOLATE_NEAREST)
CT__UPSAMPLE_OP(ct__op_upsample_nearest2d, "aten::upsample_nearest2d",
                CT__UPSAMPLE_SCHEMA("upsample_nearest2d"), CT_INTERPOLATE_NEAREST)
CT__UPSAMPLE_OP(ct__op_upsample_nearest_exact1d, "aten::_upsample_nearest_exact1d",
                CT__UPSAMPLE_SCHEMA("_upsample_nearest_exact1d"), CT_INTERPOLATE_NEAREST_EXACT)
CT__UPSAMPLE_OP(ct__op_upsample_nearest_exact2d, "aten::_upsample_nearest_exact2d",
                CT__UPSAMPLE_SCHEMA("_upsample_nearest_exact2d"), CT_INTERPOLATE_NEAREST_EXACT)
CT__UPSAMPLE_OP(ct__op_upsample_linear1d, "aten::upsample_linear1d", "upsample_linear1d.vec("
                "Tensor input, SymInt[]? output_size, bool align_corners, float[]? "
                "scale_factors) -> Tensor", CT_INTERPOLATE_LINEAR)
CT__UPSAMPLE_OP(ct__op_upsample_bilinear2d, "aten::upsample_bilinear2d", "upsample_bilinear2d"
                ".vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? "
                "scale_factors) -> Tensor", CT_INTERPOLATE_BILINEAR)
#undef CT__UPSAMPLE_OP
#undef CT__UPSAMPLE_SCHEMA

static const ct_op *const ct__upsample_ops[2][4] = {
    {&ct__op_upsample_nearest1d, &ct__op_upsample_nearest_exact1d, &ct__op_upsample_linear1d,
     NULL},
    {&ct__op_upsample_nearest2d, &ct__op_upsample_nearest_exact2d, NULL,
     &ct__op_upsample_bilinear2d}};

/* F.interpolate's own checks (Python in PyTorch): false + error. */
static bool ct__interpolate_check(const char *fn, const ct_tensor *t, const ct_interpolate_opts *o)
{
    static const char *const names[4] = {"nearest", "nearest-exact", "linear", "bilinear"};
    int dims = t->ndim - 2;
    bool has_size = o->size[0] || o->size[1], has_scale = o->scale_factor[0] || o->scale_factor[1];
    char buf[64];
    if (!ct__check_enum(fn, "mode", (int)o->mode, CT_INTERPOLATE_BILINEAR + 1)) {
        return false;
    }
    const char *err = o->align_corners && o->mode <= CT_INTERPOLATE_NEAREST_EXACT
                          ? "align_corners option can only be set with the interpolating modes: "
                            "linear | bilinear | bicubic | trilinear"
                      : has_size && has_scale ? "only one of size or scale_factor should be defined"
                      : !has_size && !has_scale ? "either size or scale_factor should be defined"
                      : NULL;
    if (err) {
        ct__fail(CT_ERR_VALUE, fn, "%s", err);
        return false;
    }
    if (dims == 1 && has_size && o->size[1]) {
        ct__fail(CT_ERR_VALUE, fn, "Input and output must have the same number of spatial "
                 "dimensions, but got input with spatial dimensions of %s and output size of "
                 "(%lld, %lld). Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                 "output size in (o1, o2, ...,oK) format.", ct__shape_str(t->sizes + 2, 1, buf,
                 sizeof buf), (long long)o->size[0], (long long)o->size[1]);
        return false;
    }
    if (dims == 1 && has_scale && o->scale_factor[1]) {
        ct__fail(CT_ERR_VALUE, fn, "Input and scale_factor must have the same number of spatial "
                 "dimensions, but got input with spatial dimensions of %s and scale_factor of "
                 "shape (%g, %g). Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                 "and scale_factor in (s1, s2, ...,sK) format.", ct__shape_str(t->sizes + 2, 1,
                 buf, sizeof buf), o->scale_factor[0], o->scale_factor[1]);
        return false;
    }
    if (o->recompute_scale_factor && has_size) {
        ct__fail(CT_ERR_VALUE, fn, "recompute_scale_factor is not meaningful with an explicit "
                 "size.");
        return false;
    }
    if (t->ndim == 3 && o->mode == CT_INTERPOLATE_BILINEAR) {
        ct__fail(CT_ERR_SHAPE, fn, "Got 3D input, but bilinear mode needs 4D input");
        return false;
    }
    if (t->ndim == 4 && o->mode == CT_INTERPOLATE_LINEAR) {
        ct__fail(CT_ERR_SHAPE, fn, "Got 4D input, but linear mode needs 3D input");
        return false;
    }
    if (t->ndim != 3 && t->ndim != 4) {
        ct__fail(t->ndim == 5 ? CT_ERR_UNSUPPORTED : CT_ERR_SHAPE, fn, "Input Error: Only 3D, 4D "
                 "and 5D input Tensors supported (got %dD) for the modes: nearest | linear | "
                 "bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got %s)%s",
                 t->ndim, names[o->mode], t->ndim == 5 ? "; ctorch has no 3-D resizing" : "");
        return false;
    }
    return true;
}

ct_tensor *ct_interpolate(const ct_tensor *input, const ct_interpolate_opts *opts)
{
    const char *fn = "ct_interpolate";
    ct_interpolate_opts o;
    memset(&o, 0, sizeof o);
    if (opts) {
        o = *opts;
    }
    if (ct__null(fn, input) || !ct__interpolate_check(fn, input, &o)) {
        return NULL;
    }
    int dims = input->ndim - 2;
    int64_t out[2];
    double scale[2] = {0, 0};
    for (int a = 0; a < dims; a++) {
        int64_t n = input->sizes[2 + a];
        int64_t sz = a && !o.size[1] ? o.size[0] : o.size[a];
        double sf = a && !o.scale_factor[1] ? o.scale_factor[0] : o.scale_factor[a];
        out[a] = sz ? sz : o.recompute_scale_factor ? (int64_t)floor((double)n * sf)
                                                    : (int64_t)((double)n * sf);
        scale[a] = sz || o.recompute_scale_factor ? 0 : sf;
    }
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, ct__upsample_ops[dims - 1][o.mode], fn, in, 1);
    ct__call_ints(&c, out, dims);
    ct__call_i(&c, o.align_corners);
    ct__call_f(&c, scale[0]);
    ct__call_f(&c, scale[1]);
    return ct__dispatch(&c);
}

/* ---- pixel shuffle -------------------------------------------------------------------- */
/* Attribute: the factor r. variant 0: pixel_shuffle, 1: pixel_unshuffle. */
static bool ct__pixel_shuffle_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const char *name = c->op->variant ? "pixel_unshuffle" : "pixel_shuffle";
    const char *factor = c->op->variant ? "downscale_factor" : "upscale_factor";
    int64_t r = c->attrs[0].i;
    if (t->ndim < 3) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s expects input to have at least 3 dimensions, but got "
                 "input with %d dimension(s)", name, t->ndim);
        return false;
    }
    if (r <= 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s expects a positive %s, but got %lld", name, factor,
                 (long long)r);
        return false;
    }
    const int64_t *s = t->sizes + t->ndim - 3;
    if (!c->op->variant && s[0] % (r * r)) {
        ct__fail(CT_ERR_SHAPE, c->fn, "pixel_shuffle expects its input's 'channel' dimension to "
                 "be divisible by the square of upscale_factor, but input.size(-3)=%lld is not "
                 "divisible by %lld", (long long)s[0], (long long)(r * r));
        return false;
    }
    for (int a = 1; c->op->variant && a < 3; a++) {
        if (s[a] % r) {
            ct__fail(CT_ERR_SHAPE, c->fn, "pixel_unshuffle expects %s to be divisible by "
                     "downscale_factor, but input.size(%d)=%lld is not divisible by %lld",
                     a == 1 ? "height" : "width", a - 3, (long long)s[a], (long long)r);
            return false;
        }
    }
    return true;
}

/* shuffle: (*, C r r, H, W) -> (*, C, r, r, H, W) -> (*, C, H, r, W, r) -> (*, C, H r, W r);
   unshuffle: (*, C, H r, W r) -> (*, C, H, r, W, r) -> (*, C, r, r, H, W) -> (*, C r r, H, W). */
static ct_status ct__pixel_shuffle_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t r = c->attrs[0].i, s[CT_MAX_DIMS + 3], perm[CT_MAX_DIMS + 3];
    int lead = t->ndim - 3;
    bool un = c->op->variant != 0;
    const int64_t *in = t->sizes + lead;
    memcpy(s, t->sizes, sizeof(int64_t) * (size_t)lead);
    for (int d = 0; d < lead + 6; d++) {
        perm[d] = d;
    }
    int64_t cc = un ? in[0] : in[0] / (r * r), h = un ? in[1] / r : in[1];
    int64_t w = un ? in[2] / r : in[2];
    int64_t split[6] = {cc, r, r, h, w, 0}, split_un[6] = {cc, h, r, w, r, 0};
    memcpy(s + lead, un ? split_un : split, sizeof(int64_t) * 5);
    static const int64_t p_sh[5] = {0, 3, 1, 4, 2}, p_un[5] = {0, 2, 4, 1, 3};
    for (int d = 0; d < 5; d++) {
        perm[lead + d] = lead + (un ? p_un : p_sh)[d];
    }
    int64_t fin[CT_MAX_DIMS];
    memcpy(fin, t->sizes, sizeof(int64_t) * (size_t)lead);
    fin[lead] = un ? cc * r * r : cc;
    fin[lead + 1] = un ? h : h * r;
    fin[lead + 2] = un ? w : w * r;
    ct_scope_begin();
    ct_tensor *y = ct_permute(ct_reshape(t, s, lead + 5), perm, lead + 5);
    return ct__composite_end(c, ct_reshape(y, fin, lead + 3));
}

static const ct_op ct__op_pixel_shuffle = {
    "aten::pixel_shuffle", "pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
    "ct_pixel_shuffle", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__pixel_shuffle_meta,
    CT__K_NONE, ct__pixel_shuffle_composite, NULL, NULL, 0u, NULL, NULL};
static const ct_op ct__op_pixel_unshuffle = {
    "aten::pixel_unshuffle", "pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
    "ct_pixel_unshuffle", CT_OP_OTHER, CT_AUTOCAST_NONE, 1, 0u, NULL, ct__pixel_shuffle_meta,
    CT__K_NONE, ct__pixel_shuffle_composite, NULL, NULL, 0u, NULL, NULL};

static ct_tensor *ct__pixel_call(const ct_op *op, const char *fn, const ct_tensor *t, int64_t r)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_i(&c, r);
    return ct__dispatch(&c);
}

ct_tensor *ct_pixel_shuffle(const ct_tensor *input, int64_t upscale_factor)
{
    return ct__pixel_call(&ct__op_pixel_shuffle, "ct_pixel_shuffle", input, upscale_factor);
}

ct_tensor *ct_pixel_unshuffle(const ct_tensor *input, int64_t downscale_factor)
{
    return ct__pixel_call(&ct__op_pixel_unshuffle, "ct_pixel_unshuffle", input,
                          downscale_factor);
}

/* ---- modules ------------------------------------------------------------------------------ */
typedef struct ct__pad_module {
    int64_t padding[4];
    ct_pad_mode mode;
    double value;
    ct_interpolate_opts up;
    int64_t factor;
} ct__pad_module;

static ct_tensor *ct__pad_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pad_module *p = (const ct__pad_module *)ct_module_user(m);
    if (p->mode == CT_PAD_CIRCULAR && !ct__null("CircularPad2d", x) && x->ndim != 3 &&
        x->ndim != 4) {
        ct__fail(CT_ERR_SHAPE, "CircularPad2d", "expected 3D or 4D input (got %dD input)",
                 x->ndim);
        return NULL;
    }
    return ct_pad(x, p->padding, 4, p->mode, p->value);
}

static ct_tensor *ct__upsample_forward(ct_module *m, const ct_tensor *x)
{
    return ct_interpolate(x, &((const ct__pad_module *)ct_module_user(m))->up);
}

static ct_tensor *ct__pixel_shuffle_forward(ct_module *m, const ct_tensor *x)
{
    return ct_pixel_shuffle(x, ((const ct__pad_module *)ct_module_user(m))->factor);
}

/* A module named name with the settings in *p (copied). */
static ct_module *ct__pad_module_new(const char *name, ct_module_forward_fn forward,
                                     const ct__pad_module *p)
{
    ct__pad_module *u = (ct__pad_module *)ct__malloc(sizeof *u);
    if (!u) {
        ct__fail(CT_ERR_OOM, name, "out of memory");
        return NULL;
    }
    *u = *p;
    ct_module *m = ct_module_new(name, forward, u, ct__free);
    if (!m) {
        ct__free(u);
    }
    return m;
}

static ct_module *ct__padding_new(const char *name, const int64_t *padding, ct_pad_mode mode,
                                  double value)
{
    if (ct__null(name, padding)) {
        return NULL;
    }
    ct__pad_module p;
    memset(&p, 0, sizeof p);
    memcpy(p.padding, padding, sizeof p.padding);
    p.mode = mode;
    p.value = value;
    return ct__pad_module_new(name, ct__pad_forward, &p);
}

ct_module *ct_zero_pad2d_new(const int64_t *padding)
{
    return ct__padding_new("ZeroPad2d", padding, CT_PAD_CONSTANT, 0.0);
}

ct_module *ct_constant_pad2d_new(const int64_t *padding, double value)
{
    return ct__padding_new("ConstantPad2d", padding, CT_PAD_CONSTANT, value);
}

ct_module *ct_reflection_pad2d_new(const int64_t *padding)
{
    return ct__padding_new("ReflectionPad2d", padding, CT_PAD_REFLECT, 0.0);
}

ct_module *ct_replication_pad2d_new(const int64_t *padding)
{
    return ct__padding_new("ReplicationPad2d", padding, CT_PAD_REPLICATE, 0.0);
}

ct_module *ct_circular_pad2d_new(const int64_t *padding)
{
    return ct__padding_new("CircularPad2d", padding, CT_PAD_CIRCULAR, 0.0);
}

ct_module *ct_upsample_new(const ct_interpolate_opts *opts)
{
    ct__pad_module p;
    memset(&p, 0, sizeof p);
    if (opts) {
        p.up = *opts;
    }
    return ct__pad_module_new("Upsample", ct__upsample_forward, &p);
}

ct_module *ct_pixel_shuffle_new(int64_t upscale_factor)
{
    ct__pad_module p;
    memset(&p, 0, sizeof p);
    p.factor = upscale_factor;
    return ct__pad_module_new("PixelShuffle", ct__pixel_shuffle_forward, &p);
}
CT__GLUE_END
