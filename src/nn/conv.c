/* nn/conv.c - convolutions by im2col + the packed GEMM (ops/gemm.c), and their modules.
 *
 * Dimension legend (the "conv view": a transposed convolution is the adjoint of the
 * convolution whose input is its output, so one set of kernels serves both):
 *   N          batch (1 for unbatched input)
 *   C, IH, IW  the conv input: channels and spatial size (1-D: IH = 1)
 *   D, OH, OW  the conv output: channels and spatial size
 *   G          groups; Cg = C / G, Dg = D / G; Kg = Cg kh kw, one group's rows of col
 *   col        (C kh kw, OH OW): col[(c kh + i) kw + j][oy OW + ox] =
 *              x[c][oy sh - ph + i dh][ox sw - pw + j dw] (0 outside: the zero padding)
 *   weight     (D, Cg, kh, kw), dense: group g is the (Dg, Kg) matrix at g Dg Kg
 * Kernels, per image n (each a GEMM per group):
 *   forward      y_n (D, OH OW) = W_g (Dg, Kg) @ col_g (Kg, OH OW)          [+ bias]
 *   grad input   col_g = W_g^T @ dy_n_g, then col2im adds col into dx_n
 *   grad weight  dW_g += dy_n_g (Dg, OH OW) @ col_g^T
 * 1x1 kernels with stride 1 and no padding skip im2col/col2im: col is the image itself.
 * conv_transpose's forward is the conv view's grad input, its grad input the conv view's
 * forward, its grad weight the conv view's grad weight with the roles of x and dy swapped.
 * Threads: images are tasks of the intra-op pool (each with its own col buffer, its GEMMs
 * serial); a single image runs on the caller, whose GEMM then uses the threads. The weight
 * gradient sums images in chunks fixed by N only, then the chunks in order, so every result
 * is bit-identical for any thread count.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/view.h"
#include "../autograd/autograd.h"
#include "state_dict.h"
#include "module.h"
#include "conv.h"
#include "init.h"

#include <math.h>
#include <string.h>

/* ---- geometry ------------------------------------------------------------------------ */
/* The arguments of aten::convolution, as parsed from a call or a node. */
typedef struct ct__conv_args {
    int dims; /* spatial dims: 1 or 2 */
    int64_t stride[2], padding[2], dilation[2], output_padding[2], groups;
    bool transposed;
} ct__conv_args;

/* A tensor of the conv as (N, C, H, W) sizes and element strides: unbatched inputs get
   N = 1 and 1-D ones H = 1 (stride 0). */
typedef struct ct__conv_view {
    int64_t size[4], stride[4];
} ct__conv_view;

typedef struct ct__conv_geom {
    int64_t n, c, d, g, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} ct__conv_geom;

static ct__conv_view ct__conv_view_of(const ct_tensor *t, int dims)
{
    ct__conv_view v;
    int lead = t->ndim - dims; /* 1 (unbatched) or 2 */
    for (int k = 0; k < 4; k++) {
        v.size[k] = 1;
        v.stride[k] = 0;
    }
    for (int k = 0; k < t->ndim; k++) {
        int to = k < lead ? k + (2 - lead) : 2 + (2 - dims) + (k - lead);
        v.size[to] = t->sizes[k];
        v.stride[to] = t->strides[k];
    }
    return v;
}

/* The conv view's geometry from the op's input x and weight w (args). */
static ct__conv_geom ct__conv_geom_of(const ct_tensor *x, const ct_tensor *w,
                                      const ct__conv_args *a)
{
    ct__conv_view xv = ct__conv_view_of(x, a->dims), wv = ct__conv_view_of(w, a->dims);
    ct__conv_geom g;
    int o = 2 - a->dims; /* args index of H (2-D) or the unused H slot (1-D) */
    g.n = xv.size[0];
    g.g = a->groups;
    g.kh = wv.size[2];
    g.kw = wv.size[3];
    g.sh = o ? 1 : a->stride[0];
    g.sw = a->stride[a->dims - 1];
    g.ph = o ? 0 : a->padding[0];
    g.pw = a->padding[a->dims - 1];
    g.dh = o ? 1 : a->dilation[0];
    g.dw = a->dilation[a->dims - 1];
    int64_t h = xv.size[2], wd = xv.size[3];
    if (!a->transposed) {
        g.c = xv.size[1];
        g.d = wv.size[0];
        g.ih = h;
        g.iw = wd;
        g.oh = (h + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
        g.ow = (wd + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
    } else { /* x is the conv view's output */
        g.d = xv.size[1];
        g.c = wv.size[1] * a->groups;
        g.oh = h;
        g.ow = wd;
        g.ih = (h - 1) * g.sh - 2 * g.ph + g.dh * (g.kh - 1) + (o ? 0 : a->output_padding[0]) + 1;
        g.iw = (wd - 1) * g.sw - 2 * g.pw + g.dw * (g.kw - 1) +
               a->output_padding[a->dims - 1] + 1;
    }
    return g;
}

/* Attributes k.. of a call: stride, padding, dilation, transposed, output_padding, groups. */
static ct__conv_args ct__conv_args_of(const ct_op_call *c, int k)
{
    ct__conv_args a;
    a.dims = (int)c->attrs[k].i;
    for (int d = 0; d < 2; d++) {
        int s = d < a.dims ? d : 0;
        a.stride[d] = c->attrs[k].ints[s];
        a.padding[d] = c->attrs[k + 1].ints[s];
        a.dilation[d] = c->attrs[k + 2].ints[s];
        a.output_padding[d] = c->attrs[k + 4].ints[s];
    }
    a.transposed = c->attrs[k + 3].i != 0;
    a.groups = c->attrs[k + 5].i;
    return a;
}

/* Appends args to a call as aten::convolution's attributes (they must outlive the call). */
static void ct__conv_call_args(ct_op_call *c, const ct__conv_args *a)
{
    ct__call_ints(c, a->stride, a->dims);
    ct__call_ints(c, a->padding, a->dims);
    ct__call_ints(c, a->dilation, a->dims);
    ct__call_i(c, a->transposed);
    ct__call_ints(c, a->output_padding, a->dims);
    ct__call_i(c, a->groups);
}

/* ---- kernels ------------------------------------------------------------------------- */
/* The valid output range [*o0, *o1) of one kernel tap: o s - p + t in [0, in). */
static void ct__conv_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t t,
                           int64_t *o0, int64_t *o1)
{
    int64_t lo = p - t, hi = in + p - t; /* o s in [lo, hi) */
    int64_t a = lo <= 0 ? 0 : (lo + s - 1) / s;
    int64_t b = hi <= 0 ? 0 : (hi - 1) / s + 1;
    *o0 = a < out ? a : out;
    *o1 = b < out ? (b > *o0 ? b : *o0) : out;
}

/* Whether the conv view skips im2col: 1x1, stride 1, no padding (then OH OW = IH IW). */
static bool ct__conv_is_1x1(const ct__conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
}

/* Whether the conv view is depthwise with one filter per channel (groups == C == D > 1), with
   unit column steps (stride 1 and input columns xs3 == 1 apart): direct loops instead of
   im2col and a GEMM per channel. */
static bool ct__conv_is_depthwise(const ct__conv_geom *g, int64_t xs3)
{
    return g->g > 1 && g->g == g->c && g->g == g->d && g->sw == 1 && xs3 == 1;
}

enum { CT__DW_FWD, CT__DW_DATA, CT__DW_WEIGHT };
#define CT__CONV_FMA_f32 fmaf
#define CT__CONV_FMA_f64 fma

/* A job over images: the geometry, the operands (raw pointers of the kernel's dtype) and
   one col buffer of `col_len` elements per thread slot. */
typedef struct ct__conv_job {
    ct__conv_geom g;
    ct__conv_view xv;       /* the strided conv input (forward, grad weight) */
    const void *x, *w, *dy; /* conv input (strided), weight and conv output grad (dense) */
    const void *bias;       /* forward: added to output channels; transposed: to input ones */
    void *y, *dx, *dw;      /* conv output, conv input grad (dense), dW chunk partials */
    void *col;
    size_t col_len;
    int64_t nchunks;
    bool trans; /* backward: dx is the transposed op's, i.e. the conv view's forward of x */
} ct__conv_job;

#define CT__CONV_DEPTHWISE_DEFINE(T, S)                                                      \
    /* Depthwise (one filter per channel), direct, per channel c and tap (i, j) over the     \
       valid outputs: CT__DW_FWD y (C, OH OW) += w x; CT__DW_DATA x (C, IH, IW), dense, +=    \
       w y; CT__DW_WEIGHT row (OW) += x y over the rows, then w (+)= the row's sum in order  \
       (beta 0: =). Multiply-adds are explicit fma. */                                       \
    static void ct__conv_depthwise_##S(const ct__conv_geom *g, T *x, const int64_t *xs, T *y, \
                                       T *w, int mode, T beta, T *row)                       \
    {                                                                                        \
        for (int64_t c = 0; c < g->c; c++) {                                                 \
            for (int64_t i = 0; i < g->kh; i++) {                                            \
                int64_t y0, y1, x0, x1;                                                      \
                ct__conv_range(g->ih, g->oh, g->sh, g->ph, i * g->dh, &y0, &y1);             \
                for (int64_t j = 0; j < g->kw; j++) {                                        \
                    T *wv = w + (c * g->kh + i) * g->kw + j, wc = *wv;                       \
                    ct__conv_range(g->iw, g->ow, g->sw, g->pw, j * g->dw, &x0, &x1);         \
                    int64_t off = j * g->dw - g->pw;                                         \
                    memset(row, 0, sizeof(T) * (size_t)g->ow);                               \
                    for (int64_t oy = y0; oy < y1; oy++) {                                   \
                        T *a = x + c * xs[1] + (oy * g->sh - g->ph + i * g->dh) * xs[2];     \
                        T *b = y + (c * g->oh + oy) * g->ow;                                 \
                        if (mode == CT__DW_FWD) {                                            \
                            for (int64_t ox = x0; ox < x1; ox++) {                           \
                                b[ox] = CT__CONV_FMA_##S(wc, a[off + ox], b[ox]);            \
                            }                                                                \
                        } else if (mode == CT__DW_DATA) {                                    \
                            for (int64_t ox = x0; ox < x1; ox++) {                           \
                                a[off + ox] = CT__CONV_FMA_##S(wc, b[ox], a[off + ox]);      \
                            }                                                                \
                        } else {                                                             \
                            for (int64_t ox = x0; ox < x1; ox++) {                           \
                                row[ox] = CT__CONV_FMA_##S(a[off + ox], b[ox], row[ox]);     \
                            }                                                                \
                        }                                                                    \
                    }                                                                        \
                    T acc = beta == (T)0 ? (T)0 : *wv;                                       \
                    for (int64_t ox = 0; mode == CT__DW_WEIGHT && ox < g->ow; ox++) {        \
                        acc += row[ox];                                                      \
                    }                                                                        \
                    *wv = mode == CT__DW_WEIGHT ? acc : *wv;                                 \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }

#define CT__CONV_DEFINE(T, S)                                                                \
    /* col (C kh kw, OH OW) from one image x (C, IH, IW) at strides xs[1..3] */              \
    static void ct__conv_im2col_##S(const ct__conv_geom *g, const T *x, const int64_t *xs,   \
                                    T *col)                                                  \
    {                                                                                        \
        int64_t ohw = g->oh * g->ow;                                                         \
        for (int64_t c = 0; c < g->c; c++) {                                                 \
            for (int64_t i = 0; i < g->kh; i++) {                                            \
                int64_t y0, y1, x0, x1;                                                      \
                ct__conv_range(g->ih, g->oh, g->sh, g->ph, i * g->dh, &y0, &y1);             \
                for (int64_t j = 0; j < g->kw; j++) {                                        \
                    T *dst = col + ((c * g->kh + i) * g->kw + j) * ohw;                      \
                    ct__conv_range(g->iw, g->ow, g->sw, g->pw, j * g->dw, &x0, &x1);         \
                    memset(dst, 0, sizeof(T) * (size_t)(y0 * g->ow));                        \
                    for (int64_t oy = y0; oy < y1; oy++) {                                   \
                        T *d = dst + oy * g->ow;                                             \
                        const T *src = x + c * xs[1] + (oy * g->sh - g->ph + i * g->dh) * xs[2]; \
                        int64_t off = j * g->dw - g->pw, step = g->sw * xs[3];               \
                        memset(d, 0, sizeof(T) * (size_t)x0);                                \
                        if (step == 1) {                                                     \
                            memcpy(d + x0, src + off + x0, sizeof(T) * (size_t)(x1 - x0));   \
                        } else {                                                             \
                            for (int64_t ox = x0; ox < x1; ox++) {                           \
                                d[ox] = src[off * xs[3] + ox * step];                        \
                            }                                                                \
                        }                                                                    \
                        memset(d + x1, 0, sizeof(T) * (size_t)(g->ow - x1));                 \
                    }                                                                        \
                    memset(dst + y1 * g->ow, 0, sizeof(T) * (size_t)((g->oh - y1) * g->ow)); \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* dx (C, IH, IW), dense and zeroed, += col (C kh kw, OH OW) placed back */              \
    static void ct__conv_col2im_##S(const ct__conv_geom *g, const T *col, T *dx)             \
    {                                                                                        \
        int64_t ohw = g->oh * g->ow;                                                         \
        for (int64_t c = 0; c < g->c; c++) {                                                 \
            for (int64_t i = 0; i < g->kh; i++) {                                            \
                int64_t y0, y1, x0, x1;                                                      \
                ct__conv_range(g->ih, g->oh, g->sh, g->ph, i * g->dh, &y0, &y1);             \
                for (int64_t j = 0; j < g->kw; j++) {                                        \
                    const T *src = col + ((c * g->kh + i) * g->kw + j) * ohw;                \
                    ct__conv_range(g->iw, g->ow, g->sw, g->pw, j * g->dw, &x0, &x1);         \
                    for (int64_t oy = y0; oy < y1; oy++) {                                   \
                        T *d = dx + (c * g->ih + oy * g->sh - g->ph + i * g->dh) * g->iw;    \
                        const T *s = src + oy * g->ow;                                       \
                        int64_t off = j * g->dw - g->pw;                                     \
                        if (g->sw == 1) {                                                    \
                            for (int64_t ox = x0; ox < x1; ox++) {                           \
                                d[off + ox] += s[ox];                                        \
                            }                                                                \
                        } else {                                                             \
                            for (int64_t ox = x0; ox < x1; ox++) {                           \
                                d[off + ox * g->sw] += s[ox];                                \
                            }                                                                \
                        }                                                                    \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* The GEMM operand B of image x: col (Kg rows per group, OH OW columns), or x itself */ \
    static const T *ct__conv_cols_##S(const ct__conv_geom *g, const T *x, const int64_t *xs, \
                                      T *col, int64_t *rs)                                   \
    {                                                                                        \
        if (ct__conv_is_1x1(g) && xs[3] == 1 && (g->ih == 1 || xs[2] == g->iw)) {            \
            *rs = xs[1];                                                                     \
            return x;                                                                        \
        }                                                                                    \
        ct__conv_im2col_##S(g, x, xs, col);                                                  \
        *rs = g->oh * g->ow;                                                                 \
        return col;                                                                          \
    }                                                                                        \
                                                                                             \
    /* y (D, OH OW) = W @ cols(x) (+ bias per channel), one GEMM per group */                \
    static void ct__conv_fwd_image_##S(const ct__conv_geom *g, const T *x, const int64_t *xs, \
                                       const T *w, const T *bias, T *y, T *col)              \
    {                                                                                        \
        int64_t ohw = g->oh * g->ow, dg = g->d / g->g, kg = g->c / g->g * g->kh * g->kw;     \
        bool dw = ct__conv_is_depthwise(g, xs[3]);                                           \
        for (int64_t k = 0; k < g->d && (bias || dw); k++) {           \
            for (int64_t p = 0; p < ohw; p++) {                                              \
                y[k * ohw + p] = bias ? bias[k] : (T)0;                                      \
            }                                                                                \
        }                                                                                    \
        if (dw) {                                                                            \
            ct__conv_depthwise_##S(g, (T *)(uintptr_t)x, xs, y, (T *)(uintptr_t)w, CT__DW_FWD, \
                                   (T)0, col);                                               \
            return;                                                                          \
        }                                                                                    \
        int64_t rs = 0;                                                                      \
        const T *b = ct__conv_cols_##S(g, x, xs, col, &rs);                                  \
        for (int64_t gi = 0; gi < g->g; gi++) {                                              \
            ct__gemm_##S(dg, ohw, kg, (T)1, w + gi * dg * kg, kg, 1,                         \
                         b + gi * (g->c / g->g) * (rs == ohw ? g->kh * g->kw * ohw : rs), rs, 1, \
                         bias ? (T)1 : (T)0, y + gi * dg * ohw, ohw, 1);                     \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* dx (C, IH, IW), dense, = col2im(W^T @ dy) (+ bias per channel: the transposed op) */  \
    static void ct__conv_bwd_data_image_##S(const ct__conv_geom *g, const T *dy, const T *w, \
                                            const T *bias, T *dx, T *col)                    \
    {                                                                                        \
        int64_t ohw = g->oh * g->ow, ihw = g->ih * g->iw, dg = g->d / g->g;                  \
        int64_t kg = g->c / g->g * g->kh * g->kw;                                            \
        bool direct = ct__conv_is_1x1(g), dw = ct__conv_is_depthwise(g, 1);                  \
        T *c = direct ? dx : col;                                                            \
        if (dw) {                                                      \
            int64_t dxs[4] = {0, ihw, g->iw, 1};                                             \
            memset(dx, 0, sizeof(T) * (size_t)(g->c * ihw));                                 \
            ct__conv_depthwise_##S(g, dx, dxs, (T *)(uintptr_t)dy, (T *)(uintptr_t)w,        \
                                   CT__DW_DATA, (T)0, col);                                  \
        }                                                                                    \
        for (int64_t gi = 0; !dw && gi < g->g; gi++) {                                       \
            ct__gemm_##S(kg, ohw, dg, (T)1, w + gi * dg * kg, 1, kg, dy + gi * dg * ohw, ohw, 1, \
                         (T)0, c + gi * kg * ohw, ohw, 1);                                   \
        }                                                                                    \
        if (!direct && !dw) {                                                                \
            memset(dx, 0, sizeof(T) * (size_t)(g->c * ihw));                                 \
            ct__conv_col2im_##S(g, col, dx);                                                 \
        }                                                                                    \
        for (int64_t k = 0; bias && k < g->c; k++) {                                         \
            for (int64_t p = 0; p < ihw; p++) {                                              \
                dx[k * ihw + p] += bias[k];                                                  \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* dw (D, Kg) (+)= dy (D, OH OW) @ cols(x)^T per group; beta 0 for the chunk's first */  \
    static void ct__conv_bwd_weight_image_##S(const ct__conv_geom *g, const T *x,            \
                                              const int64_t *xs, const T *dy, T *dw, T beta, \
                                              T *col)                                        \
    {                                                                                        \
        int64_t ohw = g->oh * g->ow, dg = g->d / g->g, kg = g->c / g->g * g->kh * g->kw;     \
        if (ct__conv_is_depthwise(g, xs[3])) {                                               \
            ct__conv_depthwise_##S(g, (T *)(uintptr_t)x, xs, (T *)(uintptr_t)dy, dw,         \
                                   CT__DW_WEIGHT, beta, col);                                \
            return;                                                                          \
        }                                                                                    \
        int64_t rs = 0;                                                                      \
        const T *b = ct__conv_cols_##S(g, x, xs, col, &rs);                                  \
        for (int64_t gi = 0; gi < g->g; gi++) {                                              \
            ct__gemm_##S(dg, kg, ohw, (T)1, dy + gi * dg * ohw, ohw, 1,                      \
                         b + gi * (g->c / g->g) * (rs == ohw ? g->kh * g->kw * ohw : rs), 1, rs, \
                         beta, dw + gi * dg * kg, kg, 1);                                    \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* forward task: image n (conv view's forward, or the transposed op's forward) */       \
    static void ct__conv_fwd_task_##S(int64_t n, int slot, void *ctx)                        \
    {                                                                                        \
        const ct__conv_job *j = (const ct__conv_job *)ctx;                                   \
        const ct__conv_geom *g = &j->g;                                                      \
        T *col = (T *)j->col + j->col_len * (size_t)slot;                                    \
        if (j->trans) {                                                                      \
            ct__conv_bwd_data_image_##S(g, (const T *)j->dy + n * g->d * g->oh * g->ow,      \
                                        (const T *)j->w, (const T *)j->bias,                 \
                                        (T *)j->dx + n * g->c * g->ih * g->iw, col);         \
        } else {                                                                             \
            ct__conv_fwd_image_##S(g, (const T *)j->x + n * j->xv.stride[0], j->xv.stride,   \
                                   (const T *)j->w, (const T *)j->bias,                      \
                                   (T *)j->y + n * g->d * g->oh * g->ow, col);               \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* backward task: the images of chunk k; grad weight into chunk k's partial */          \
    static void ct__conv_bwd_task_##S(int64_t k, int slot, void *ctx)                        \
    {                                                                                        \
        const ct__conv_job *j = (const ct__conv_job *)ctx;                                   \
        const ct__conv_geom *g = &j->g;                                                      \
        T *col = (T *)j->col + j->col_len * (size_t)slot;                                    \
        int64_t ohw = g->oh * g->ow, wlen = g->d * (g->c / g->g) * g->kh * g->kw;            \
        int64_t n0 = g->n * k / j->nchunks, n1 = g->n * (k + 1) / j->nchunks;                \
        for (int64_t n = n0; n < n1; n++) {                                                  \
            const T *x = (const T *)j->x + n * j->xv.stride[0];                              \
            const T *dy = (const T *)j->dy + n * g->d * ohw;                                 \
            if (j->dw) {                                                                     \
                ct__conv_bwd_weight_image_##S(g, x, j->xv.stride, dy, (T *)j->dw + k * wlen, \
                                              n == n0 ? (T)0 : (T)1, col);                   \
            }                                                                                \
            if (j->dx && j->trans) { /* dx of the transposed op: conv forward of x */       \
                ct__conv_fwd_image_##S(g, x, j->xv.stride, (const T *)j->w, NULL,            \
                                       (T *)j->dx + n * g->d * ohw, col);                    \
            } else if (j->dx) {                                                              \
                ct__conv_bwd_data_image_##S(g, dy, (const T *)j->w, NULL,                    \
                                            (T *)j->dx + n * g->c * g->ih * g->iw, col);     \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* A dense copy of a strided (N, C, H, W) view into out */                              \
    static void ct__conv_densify_##S(const T *src, const ct__conv_view *v, T *out)           \
    {                                                                                        \
        for (int64_t a = 0; a < v->size[0]; a++) {                                           \
            for (int64_t b = 0; b < v->size[1]; b++) {                                       \
                for (int64_t h = 0; h < v->size[2]; h++) {                                   \
                    const T *s = src + a * v->stride[0] + b * v->stride[1] + h * v->stride[2]; \
                    for (int64_t w = 0; w < v->size[3]; w++) {                               \
                        *out++ = s[w * v->stride[3]];                                        \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* db (C) = the sum of t (N, C, H, W view) over N, H, W, in float64, in that order */     \
    static void ct__conv_bias_grad_##S(const T *t, const ct__conv_view *v, T *db)            \
    {                                                                                        \
        for (int64_t c = 0; c < v->size[1]; c++) {                                           \
            double acc = 0.0;                                                                \
            for (int64_t a = 0; a < v->size[0]; a++) {                                       \
                for (int64_t h = 0; h < v->size[2]; h++) {                                   \
                    const T *s = t + a * v->stride[0] + c * v->stride[1] + h * v->stride[2]; \
                    for (int64_t w = 0; w < v->size[3]; w++) {                               \
                        acc += (double)s[w * v->stride[3]];                                  \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
            db[c] = (T)acc;                                                                  \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* dw = the chunk partials summed in order */                                           \
    static void ct__conv_sum_chunks_##S(const T *part, int64_t nchunks, int64_t len, T *dw)  \
    {                                                                                        \
        memcpy(dw, part, sizeof(T) * (size_t)len);                                           \
        for (int64_t k = 1; k < nchunks; k++) {                                              \
            for (int64_t i = 0; i < len; i++) {                                              \
                dw[i] += part[k * len + i];                                                  \
            }                                                                                \
        }                                                                                    \
    }

/* the depthwise loops need the vectorizer's runtime alias checks (cheap cost model) */
CT__VECTORIZE_BEGIN
CT__CONV_DEPTHWISE_DEFINE(float, f32)
CT__CONV_DEPTHWISE_DEFINE(double, f64)
CT__VECTORIZE_END
CT__CONV_DEFINE(float, f32)
CT__CONV_DEFINE(double, f64)
#undef CT__CONV_DEPTHWISE_DEFINE
#undef CT__CONV_DEFINE
#undef CT__CONV_FMA_f32
#undef CT__CONV_FMA_f64

/* ---- running jobs ---------------------------------------------------------------------- */
/* Runs task over ntasks with a col buffer per thread slot (a single task on the caller, so
   its GEMMs use the threads). false: CT_ERR_OOM recorded for op. */
static bool ct__conv_run(const char *op, ct__conv_job *j, int64_t ntasks, size_t es,
                         void (*task)(int64_t, int, void *))
{
    int nt = ntasks > 1 ? ct__parallel_threads() : 1;
    if (nt > ntasks) {
        nt = (int)ntasks;
    }
    j->col_len = (size_t)((j->g.c * j->g.kh * j->g.kw) * (j->g.oh * j->g.ow));
    j->col_len = (j->col_len + 15) / 16 * 16;
    j->col = ct__malloc(es * j->col_len * (size_t)nt);
    if (!j->col && j->col_len > 0) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return false;
    }
    if (ntasks == 1) {
        task(0, 0, j);
    } else if (ntasks > 1) {
        ct__parallel_tasks(ntasks, nt, task, j);
    }
    ct__free(j->col);
    j->col = NULL;
    return true;
}

/* t's data as a dense (N, C, H, W) array: t's own when contiguous, else a copy in *owned
   (freed by the caller). NULL: CT_ERR_OOM recorded. */
static const void *ct__conv_dense(const char *op, const ct_tensor *t, int dims, void **owned)
{
    *owned = NULL;
    if (ct_is_contiguous(t)) {
        return ct__data(t);
    }
    ct__conv_view v = ct__conv_view_of(t, dims);
    size_t es = ct_dtype_size(t->dtype);
    *owned = ct__malloc(es * (size_t)ct_numel(t));
    if (!*owned) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (t->dtype == CT_FLOAT32) {
        ct__conv_densify_f32((const float *)(const void *)ct__data(t), &v, (float *)*owned);
    } else {
        ct__conv_densify_f64((const double *)(const void *)ct__data(t), &v, (double *)*owned);
    }
    return *owned;
}

/* ---- aten::convolution ------------------------------------------------------------------ */
static void ct__conv_shape_str(const int64_t *v, int n, char *buf, size_t cap)
{
    if (n == 1) {
        snprintf(buf, cap, "%lld", (long long)v[0]);
    } else {
        snprintf(buf, cap, "%lld x %lld", (long long)v[0], (long long)v[1]);
    }
}

/* PyTorch's checks of the arguments (check_shape_forward / _convolution). */
static bool ct__conv_check_args(const char *op, const ct__conv_args *a)
{
    for (int d = 0; d < a->dims; d++) {
        if (a->stride[d] <= 0) {
            ct__fail(CT_ERR_VALUE, op, "non-positive stride is not supported");
            return false;
        }
    }
    for (int d = 0; d < a->dims; d++) {
        if (a->padding[d] < 0) {
            ct__fail(CT_ERR_VALUE, op, "negative padding is not supported");
            return false;
        }
    }
    for (int d = 0; d < a->dims; d++) {
        if (a->dilation[d] <= 0) {
            ct__fail(CT_ERR_VALUE, op, "non-positive dilation is not supported");
            return false;
        }
    }
    if (a->groups <= 0) {
        ct__fail(CT_ERR_VALUE, op, "non-positive groups is not supported");
        return false;
    }
    for (int d = 0; a->transposed && d < a->dims; d++) {
        if (a->output_padding[d] < 0 ||
            (a->output_padding[d] >= a->stride[d] && a->output_padding[d] >= a->dilation[d])) {
            char s[200];
            if (a->dims == 2) {
                snprintf(s, sizeof s, "output_padding_height: %lld output_padding_width: %lld "
                         "stride_height: %lld stride_width: %lld dilation_height: %lld "
                         "dilation_width: %lld", (long long)a->output_padding[0],
                         (long long)a->output_padding[1], (long long)a->stride[0],
                         (long long)a->stride[1], (long long)a->dilation[0],
                         (long long)a->dilation[1]);
            } else {
                snprintf(s, sizeof s, "output_padding: %lld stride: %lld dilation: %lld",
                         (long long)a->output_padding[0], (long long)a->stride[0],
                         (long long)a->dilation[0]);
            }
            ct__fail(CT_ERR_VALUE, op,
                     "output padding must be smaller than either stride or dilation, but got %s",
                     s);
            return false;
        }
    }
    return true;
}

/* The shapes of input, weight and bias against each other (PyTorch's words). */
static bool ct__conv_check_shapes(const char *op, const ct_tensor *x, const ct_tensor *w,
                                  const ct_tensor *bias, const ct__conv_args *a)
{
    char ws[96], xs[96], bs[96];
    ct__shape_str(w->sizes, w->ndim, ws, sizeof ws);
    ct__shape_str(x->sizes, x->ndim, xs, sizeof xs);
    int64_t cin = x->sizes[x->ndim - a->dims - 1];
    if (w->sizes[0] < a->groups) {
        ct__fail(CT_ERR_SHAPE, op, "Given groups=%lld, expected weight to be at least %lld at "
                 "dimension 0, but got weight of size %s instead", (long long)a->groups,
                 (long long)a->groups, ws);
        return false;
    }
    if (w->sizes[0] % a->groups != 0) {
        ct__fail(CT_ERR_SHAPE, op, "Given groups=%lld, expected weight to be divisible by %lld at "
                 "dimension 0, but got weight of size [%s] instead", (long long)a->groups,
                 (long long)a->groups, ws);
        return false;
    }
    int64_t want = a->transposed ? w->sizes[0] : w->sizes[1] * a->groups;
    if (cin != want) {
        if (a->transposed) {
            ct__fail(CT_ERR_SHAPE, op, "Given transposed=1, weight of size %s, expected input%s "
                     "to have %lld channels, but got %lld channels instead", ws, xs,
                     (long long)want, (long long)cin);
        } else {
            ct__fail(CT_ERR_SHAPE, op, "Given groups=%lld, weight of size %s, expected input%s to "
                     "have %lld channels, but got %lld channels instead", (long long)a->groups, ws,
                     xs, (long long)want, (long long)cin);
        }
        return false;
    }
    int64_t nb = a->transposed ? w->sizes[1] * a->groups : w->sizes[0];
    if (bias && (bias->ndim != 1 || bias->sizes[0] != nb)) {
        ct__shape_str(bias->sizes, bias->ndim, bs, sizeof bs);
        ct__fail(CT_ERR_SHAPE, op, "Given %sweight of size %s, expected bias to be 1-dimensional "
                 "with %lld elements, but got bias of size %s instead",
                 a->transposed ? "transposed=1, " : "", ws, (long long)nb, bs);
        return false;
    }
    return true;
}

/* The output's spatial sizes are positive (and, for a convolution, the dilated kernel fits
   the padded input). */
static bool ct__conv_check_sizes(const char *op, const ct_tensor *x, const ct_tensor *w,
                                 const ct__conv_args *a, const int64_t *out)
{
    int64_t in[2] = {0, 0}, ker[2] = {0, 0}, o[2] = {0, 0};
    char si[64], sk[64], so[64];
    bool bad_kernel = false, bad_out = false;
    for (int d = 0; d < a->dims; d++) {
        int64_t k = w->sizes[2 + d], h = x->sizes[x->ndim - a->dims + d];
        in[d] = a->transposed ? h : h + 2 * a->padding[d];
        ker[d] = a->dilation[d] * (k - 1) + 1;
        o[d] = out[d];
        bad_kernel = bad_kernel || (!a->transposed && in[d] < ker[d]);
        bad_out = bad_out || out[d] <= 0;
    }
    ct__conv_shape_str(in, a->dims, si, sizeof si);
    if (bad_kernel) {
        ct__conv_shape_str(ker, a->dims, sk, sizeof sk);
        ct__fail(CT_ERR_SHAPE, op, "Calculated padded input size per channel: (%s). Kernel size: "
                 "(%s). Kernel size can't be greater than actual input size", si, sk);
        return false;
    }
    if (bad_out) {
        ct__conv_shape_str(o, a->dims, so, sizeof so);
        ct__fail(CT_ERR_SHAPE, op, "Given input size per channel: (%s). Calculated output size "
                 "per channel: (%s). Output size is too small", si, so);
        return false;
    }
    return true;
}

/* Inputs: input, weight, bias (optional); attrs as ct__conv_call_args. */
static bool ct__conv_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1], *bias = c->inputs[2];
    ct__conv_args a = ct__conv_args_of(c, 0);
    if (x->dtype != w->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "expected scalar type %s but found %s",
                 ct__dtype_title(x->dtype), ct__dtype_title(w->dtype));
        return false;
    }
    if (bias && bias->dtype != x->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "Input type (%s) and bias type (%s) should be the same",
                 ct_dtype_name(x->dtype), ct_dtype_name(bias->dtype));
        return false;
    }
    if (!ct__conv_check_args(c->fn, &a) || !ct__conv_check_shapes(c->fn, x, w, bias, &a)) {
        return false;
    }
    ct__conv_geom g = ct__conv_geom_of(x, w, &a);
    int64_t sp[2] = {a.transposed ? g.ih : g.oh, a.transposed ? g.iw : g.ow};
    const int64_t *spd = a.dims == 2 ? sp : sp + 1;
    if (!ct__conv_check_sizes(c->fn, x, w, &a, spd)) {
        return false;
    }
    int64_t sizes[4];
    int nd = 0;
    if (x->ndim == a.dims + 2) {
        sizes[nd++] = x->sizes[0];
    }
    sizes[nd++] = a.transposed ? g.c : g.d;
    for (int d = 0; d < a.dims; d++) {
        sizes[nd++] = spd[d];
    }
    c->dtype = x->dtype;
    return ct__op_output(c, sizes, nd, x->dtype) != NULL;
}

static ct_status ct__conv_kernel(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1], *bias = c->inputs[2];
    ct__conv_args a = ct__conv_args_of(c, 0);
    ct__conv_job j;
    memset(&j, 0, sizeof j);
    j.g = ct__conv_geom_of(x, w, &a);
    j.trans = a.transposed;
    void *own_w = NULL, *own_x = NULL;
    j.w = ct__conv_dense(c->fn, w, a.dims, &own_w);
    j.bias = bias ? ct__data(bias) : NULL;
    if (a.transposed) { /* x is the conv view's output: read densely as dy */
        j.dy = ct__conv_dense(c->fn, x, a.dims, &own_x);
        j.dx = ct__data(c->outputs[0]);
    } else {
        j.x = ct__data(x);
        j.xv = ct__conv_view_of(x, a.dims);
        j.y = ct__data(c->outputs[0]);
    }
    bool ok = j.w && (a.transposed ? j.dy != NULL : true) &&
              ct__conv_run(c->fn, &j, j.g.n, ct_dtype_size(c->dtype),
                           c->dtype == CT_FLOAT32 ? ct__conv_fwd_task_f32 : ct__conv_fwd_task_f64);
    ct__free(own_w);
    ct__free(own_x);
    return ok ? CT_OK : ct_error_code();
}

/* ---- aten::convolution_backward ---------------------------------------------------------- */
/* Inputs: grad_output, input, weight; attrs: bias_sizes, the convolution's six, output_mask.
   Outputs: grad_input, grad_weight, grad_bias, each of shape (0) where the mask is false. */
static bool ct__conv_bw_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[1], *w = c->inputs[2];
    const int64_t *mask = c->attrs[7].ints;
    int64_t none = 0, nb = c->attrs[0].i > 0 ? c->attrs[0].ints[0] : 0;
    c->dtype = x->dtype;
    return ct__op_output(c, mask[0] ? x->sizes : &none, mask[0] ? x->ndim : 1, x->dtype) &&
           ct__op_output(c, mask[1] ? w->sizes : &none, mask[1] ? w->ndim : 1, x->dtype) &&
           ct__op_output(c, mask[2] ? &nb : &none, 1, x->dtype);
}

/* The number of weight-gradient chunks: at most 16, fewer for large weights (shapes only). */
static int64_t ct__conv_chunks(int64_t n, int64_t wlen)
{
    int64_t k = n < 16 ? n : 16;
    int64_t cap = wlen > 0 ? ((int64_t)1 << 22) / wlen : k;
    k = k < cap ? k : cap;
    return k < 1 ? 1 : k;
}

static ct_status ct__conv_bw_kernel(ct_op_call *c)
{
    const ct_tensor *go = c->inputs[0], *x = c->inputs[1], *w = c->inputs[2];
    ct__conv_args a = ct__conv_args_of(c, 1);
    const int64_t *mask = c->attrs[7].ints;
    size_t es = ct_dtype_size(c->dtype);
    bool f32 = c->dtype == CT_FLOAT32;
    ct__conv_job j;
    memset(&j, 0, sizeof j);
    j.g = ct__conv_geom_of(x, w, &a);
    j.trans = a.transposed;
    const ct_tensor *cx = a.transposed ? go : x;  /* the conv view's input (strided) */
    const ct_tensor *cdy = a.transposed ? x : go; /* the conv view's output grad (dense) */
    void *own_w = NULL, *own_dy = NULL, *part = NULL;
    int64_t wlen = ct_numel(w);
    j.nchunks = ct__conv_chunks(j.g.n, wlen);
    j.w = ct__conv_dense(c->fn, w, a.dims, &own_w);
    j.dy = ct__conv_dense(c->fn, cdy, a.dims, &own_dy);
    j.x = ct__data(cx);
    j.xv = ct__conv_view_of(cx, a.dims);
    j.dx = mask[0] ? ct__data(c->outputs[0]) : NULL;
    if (mask[1]) {
        part = ct__malloc(es * (size_t)(wlen * j.nchunks));
        j.dw = part;
    }
    bool ok = j.w && j.dy && (!mask[1] || part || wlen == 0);
    if (!ok && ct_error_code() == CT_OK) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    if (ok && (mask[0] || mask[1]) && j.g.n > 0) {
        ok = ct__conv_run(c->fn, &j, j.nchunks, es,
                          f32 ? ct__conv_bwd_task_f32 : ct__conv_bwd_task_f64);
    }
    if (ok && mask[1]) {
        if (j.g.n == 0) {
            memset(ct__data(c->outputs[1]), 0, es * (size_t)wlen);
        } else if (f32) {
            ct__conv_sum_chunks_f32((const float *)part, j.nchunks, wlen,
                                    (float *)(void *)ct__data(c->outputs[1]));
        } else {
            ct__conv_sum_chunks_f64((const double *)part, j.nchunks, wlen,
                                    (double *)(void *)ct__data(c->outputs[1]));
        }
    }
    if (ok && mask[2]) { /* the sum of the op's output gradient per channel */
        ct__conv_view v = ct__conv_view_of(go, a.dims);
        if (f32) {
            ct__conv_bias_grad_f32((const float *)(const void *)ct__data(go), &v,
                                   (float *)(void *)ct__data(c->outputs[2]));
        } else {
            ct__conv_bias_grad_f64((const double *)(const void *)ct__data(go), &v,
                                   (double *)(void *)ct__data(c->outputs[2]));
        }
    }
    ct__free(own_w);
    ct__free(own_dy);
    ct__free(part);
    return ok ? CT_OK : ct_error_code();
}

/* 2 x (multiply-adds) of the conv view: its output's size times Cg kh kw. */
static double ct__conv_flops(const ct_op_call *c)
{
    const ct_tensor *w = c->inputs[1];
    const ct_tensor *conv_out = c->attrs[3].i ? c->inputs[0] : c->outputs[0];
    double per = w->sizes[0] > 0 ? (double)ct_numel(w) / (double)w->sizes[0] : 0.0;
    return 2.0 * (double)ct_numel(conv_out) * per;
}

static const ct_op ct__op_convolution_backward = {
    "aten::convolution_backward",
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] "
    "output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "ct_backward (ConvolutionBackward0)", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL,
    ct__conv_bw_meta, CT__K_FLOAT(ct__conv_bw_kernel), NULL, NULL, NULL, 0u, NULL, NULL};

/* The node's integers: dims, stride[2], padding[2], dilation[2], transposed,
   output_padding[2], groups. */
static void ct__conv_record(ct_node *n, const ct_op_call *c)
{
    ct__conv_args a = ct__conv_args_of(c, 0);
    int64_t v[12] = {a.dims,       a.stride[0],         a.stride[1],
                     a.padding[0], a.padding[1],        a.dilation[0],
                     a.dilation[1], a.transposed,       a.output_padding[0],
                     a.output_padding[1], a.groups,     c->inputs[2] ? c->inputs[2]->sizes[0] : -1};
    memcpy(n->i, v, sizeof v);
    ct__save(n, c->inputs[0]);
    ct__save(n, c->inputs[1]);
}

/* Gradients of input, weight and bias by aten::convolution_backward. Its kernel records no
   history, so a backward with create_graph (double backward) fails instead of returning
   gradients that would differentiate as constants. */
static void ct__conv_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *w = ct__saved(n, 1);
    if (!x || !w) {
        return;
    }
    if (ct_is_grad_enabled()) {
        ct__fail(CT_ERR_UNSUPPORTED, "ct_backward", "double backward (create_graph) through "
                 "ConvolutionBackward0 is not supported yet");
        return;
    }
    ct__conv_args a;
    a.dims = (int)n->i[0];
    for (int d = 0; d < 2; d++) {
        a.stride[d] = n->i[1 + d];
        a.padding[d] = n->i[3 + d];
        a.dilation[d] = n->i[5 + d];
        a.output_padding[d] = n->i[8 + d];
    }
    a.transposed = n->i[7] != 0;
    a.groups = n->i[10];
    int64_t bias_sizes = n->i[11];
    int64_t mask[3] = {ct__needs_grad(n, 0), ct__needs_grad(n, 1),
                       n->n_next > 2 && ct__needs_grad(n, 2)};
    const ct_tensor *in[3] = {g, x, w};
    ct_op_call c;
    ct__call_init(&c, &ct__op_convolution_backward, "ct_convolution_backward", in, 3);
    ct__call_ints(&c, &bias_sizes, bias_sizes >= 0 ? 1 : 0);
    ct__conv_call_args(&c, &a);
    ct__call_ints(&c, mask, 3);
    if (!ct__dispatch(&c)) {
        return;
    }
    for (int k = 0; k < 3; k++) {
        gi[k] = mask[k] ? c.outputs[k] : NULL;
    }
}

static const ct_op ct__op_convolution = {
    "aten::convolution",
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    "ct_conv1d ct_conv2d ct_conv_transpose1d ct_conv_transpose2d", CT_OP_OTHER,
    CT_AUTOCAST_NONE, 0, 1u << 2, NULL, ct__conv_meta, CT__K_FLOAT(ct__conv_kernel), NULL,
    "ConvolutionBackward0", ct__conv_backward, 0u, ct__conv_record, ct__conv_flops};

CT__GLUE_BEGIN
/* ---- public functions ------------------------------------------------------------------ */
ct_conv_opts ct_conv_defaults(void)
{
    ct_conv_opts o;
    memset(&o, 0, sizeof o);
    for (int d = 0; d < 2; d++) {
        o.stride[d] = 1;
        o.dilation[d] = 1;
    }
    o.groups = 1;
    o.bias = true;
    return o;
}

/* The convolution's args from opts; SAME resolved to its left padding, with in *extra the
   padding PyTorch adds on the right of each dim for an odd total. */
static bool ct__conv_resolve(const char *fn, const char *name, const ct_tensor *w,
                             const ct_conv_opts *o, int dims, bool transposed,
                             ct__conv_args *a, int64_t *extra)
{
    if (!ct__check_enum(fn, "padding", (int)o->padding_type, 3)) {
        return false;
    }
    if (transposed && o->padding_type != CT_CONV_PADDING_EXPLICIT) {
        ct__fail(CT_ERR_VALUE, fn, "%s(): argument 'padding' must be tuple of ints, not str",
                 name);
        return false;
    }
    a->dims = dims;
    a->transposed = transposed;
    a->groups = o->groups;
    for (int d = 0; d < 2; d++) {
        a->stride[d] = o->stride[d];
        a->dilation[d] = o->dilation[d];
        a->output_padding[d] = transposed ? o->output_padding[d] : 0;
        a->padding[d] = o->padding_type == CT_CONV_PADDING_EXPLICIT ? o->padding[d] : 0;
        extra[d] = 0;
    }
    if (o->padding_type != CT_CONV_PADDING_SAME) {
        return true;
    }
    for (int d = 0; d < dims; d++) {
        if (o->stride[d] != 1) {
            ct__fail(CT_ERR_VALUE, fn, "padding='same' is not supported for strided convolutions");
            return false;
        }
    }
    for (int d = 0; d < dims && w->ndim == dims + 2; d++) {
        int64_t total = o->dilation[d] * (w->sizes[2 + d] - 1);
        a->padding[d] = total / 2;
        extra[d] = total - 2 * (total / 2);
    }
    return true;
}

/* input with extra[d] zeros appended on spatial dim d (padding='same', odd total). */
static ct_tensor *ct__conv_pad_right(const ct_tensor *x, int dims, const int64_t *extra)
{
    ct_tensor *r = (ct_tensor *)(uintptr_t)x;
    for (int d = 0; d < dims && r; d++) {
        if (extra[d] == 0) {
            continue;
        }
        int64_t sizes[CT_MAX_DIMS];
        memcpy(sizes, r->sizes, sizeof(int64_t) * (size_t)r->ndim);
        int64_t dim = r->ndim - dims + d;
        sizes[dim] = extra[d];
        ct_tensor *z = ct_zeros(sizes, r->ndim, r->dtype);
        const ct_tensor *parts[2] = {r, z};
        r = z ? ct_cat(parts, 2, dim) : NULL;
    }
    return r;
}

static ct_tensor *ct__conv(const char *fn, const char *name, int dims, bool transposed,
                           const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias,
                           const ct_conv_opts *opts)
{
    if (ct__null(fn, x) || ct__null(fn, w) || (bias && ct__null(fn, bias))) {
        return NULL;
    }
    char xs[96];
    if (x->ndim != dims + 1 && x->ndim != dims + 2) {
        ct__shape_str(x->sizes, x->ndim, xs, sizeof xs);
        ct__fail(CT_ERR_SHAPE, fn, "Expected %dD (unbatched) or %dD (batched) input to %s, but "
                 "got input of size: %s", dims + 1, dims + 2, name, xs);
        return NULL;
    }
    ct_conv_opts o = opts ? *opts : ct_conv_defaults();
    ct__conv_args a;
    int64_t extra[2];
    if (!ct__conv_resolve(fn, name, w, &o, dims, transposed, &a, extra)) {
        return NULL;
    }
    if (w->ndim != dims + 2) {
        ct__fail(CT_ERR_SHAPE, fn, "Expected %d-dimensional weight for %s, but got weight of "
                 "%d dimensions", dims + 2, name, w->ndim);
        return NULL;
    }
    const ct_tensor *in[3] = {x, w, bias};
    ct_op_call c;
    bool pad = extra[0] != 0 || extra[1] != 0;
    if (pad) {
        ct_scope_begin();
        in[0] = ct__conv_pad_right(x, dims, extra);
    }
    ct__call_init(&c, &ct__op_convolution, fn, in, 3);
    ct__conv_call_args(&c, &a);
    ct_tensor *r = in[0] ? ct__dispatch(&c) : NULL;
    if (pad) {
        r = ct_keep(r);
        ct_scope_end();
    }
    return r;
}

ct_tensor *ct_conv2d(const ct_tensor *input, const ct_tensor *weight, const ct_tensor *bias,
                     const ct_conv_opts *opts)
{
    return ct__conv("ct_conv2d", "conv2d", 2, false, input, weight, bias, opts);
}

ct_tensor *ct_conv1d(const ct_tensor *input, const ct_tensor *weight, const ct_tensor *bias,
                     const ct_conv_opts *opts)
{
    return ct__conv("ct_conv1d", "conv1d", 1, false, input, weight, bias, opts);
}

ct_tensor *ct_conv_transpose2d(const ct_tensor *input, const ct_tensor *weight,
                               const ct_tensor *bias, const ct_conv_opts *opts)
{
    return ct__conv("ct_conv_transpose2d", "conv_transpose2d", 2, true, input, weight, bias,
                    opts);
}

ct_tensor *ct_conv_transpose1d(const ct_tensor *input, const ct_tensor *weight,
                               const ct_tensor *bias, const ct_conv_opts *opts)
{
    return ct__conv("ct_conv_transpose1d", "conv_transpose1d", 1, true, input, weight, bias,
                    opts);
}

/* ---- modules ----------------------------------------------------------------------------- */
/* A conv module's settings (its user data). */
typedef struct ct__conv_module {
    ct_conv_opts o;
    int dims;
    bool transposed;
} ct__conv_module;

static const char *ct__conv_module_name(int dims, bool transposed)
{
    return transposed ? "ConvTranspose2d" : dims == 1 ? "Conv1d" : "Conv2d";
}

static ct_tensor *ct__conv_module_forward(ct_module *m, const ct_tensor *x)
{
    const ct__conv_module *s = (const ct__conv_module *)ct_module_user(m);
    const char *fn = s->transposed ? "ct_conv_transpose2d"
                                   : s->dims == 1 ? "ct_conv1d" : "ct_conv2d";
    return ct__conv(fn, s->transposed ? "conv_transpose2d" : s->dims == 1 ? "conv1d" : "conv2d",
                    s->dims, s->transposed, x, ct_module_get_parameter(m, "weight"),
                    ct_module_get_parameter(m, "bias"), &s->o);
}

/* A float32 parameter registered on m, or NULL (the module holds the only reference). */
static ct_tensor *ct__conv_param(ct_module *m, const char *fn, const char *name,
                                 const int64_t *sizes, int ndim)
{
    ct_tensor *p = ct__tensor_new(fn, sizes, ndim, CT_FLOAT32);
    if (!p) {
        return NULL;
    }
    ct_status st = ct_module_register_parameter(m, name, p);
    ct__release(p);
    return st == CT_OK ? p : NULL;
}

static bool ct__conv_module_check(const char *fn, int64_t cin, int64_t cout, const int64_t *k,
                                  int dims, bool transposed, const ct_conv_opts *o)
{
    static const char *modes[4] = {"zeros", "reflect", "replicate", "circular"};
    if (o->groups <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "groups must be a positive integer");
        return false;
    }
    if (cin <= 0 || cout <= 0 || k[0] <= 0 || k[dims - 1] <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "in_channels (%lld), out_channels (%lld) and kernel_size must "
                 "be positive", (long long)cin, (long long)cout);
        return false;
    }
    if (cin % o->groups != 0 || cout % o->groups != 0) {
        ct__fail(CT_ERR_VALUE, fn, "%s_channels must be divisible by groups",
                 cin % o->groups != 0 ? "in" : "out");
        return false;
    }
    if (!ct__check_enum(fn, "padding_mode", (int)o->padding_mode, 4)) {
        return false;
    }
    if (o->padding_mode != CT_CONV_PADDING_MODE_ZEROS && transposed) {
        ct__fail(CT_ERR_VALUE, fn, "Only \"zeros\" padding mode is supported for ConvTranspose2d");
        return false;
    }
    if (o->padding_mode != CT_CONV_PADDING_MODE_ZEROS) {
        ct__fail(CT_ERR_VALUE, fn, "padding_mode='%s' is not supported yet",
                 modes[o->padding_mode]);
        return false;
    }
    if (!ct__check_enum(fn, "padding", (int)o->padding_type, 3)) {
        return false;
    }
    if (transposed && o->padding_type != CT_CONV_PADDING_EXPLICIT) {
        ct__fail(CT_ERR_VALUE, fn, "conv_transpose2d(): argument 'padding' must be tuple of ints, "
                 "not str");
        return false;
    }
    for (int d = 0; d < dims && o->padding_type == CT_CONV_PADDING_SAME; d++) {
        if (o->stride[d] != 1) {
            ct__fail(CT_ERR_VALUE, fn, "padding='same' is not supported for strided convolutions");
            return false;
        }
    }
    return true;
}

/* The module, its weight (kaiming_uniform_(a = sqrt(5))) and bias, as reset_parameters. */
static ct_module *ct__conv_module_new(const char *fn, int dims, bool transposed, int64_t cin,
                                      int64_t cout, const int64_t *k, const ct_conv_opts *opts)
{
    ct_conv_opts o = opts ? *opts : ct_conv_defaults();
    if (!ct__conv_module_check(fn, cin, cout, k, dims, transposed, &o)) {
        return NULL;
    }
    ct__conv_module *s = (ct__conv_module *)ct__malloc(sizeof *s);
    if (!s) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return NULL;
    }
    s->o = o;
    s->dims = dims;
    s->transposed = transposed;
    ct_module *m = ct_module_new(ct__conv_module_name(dims, transposed), ct__conv_module_forward,
                                 s, ct__free);
    if (!m) {
        ct__free(s);
        return NULL;
    }
    int64_t ws[4] = {transposed ? cin : cout, (transposed ? cout : cin) / o.groups, k[0], k[1]};
    ct_tensor *w = ct__conv_param(m, fn, "weight", ws, dims + 2);
    bool ok =
        w && ct_init_kaiming_uniform_(w, sqrt(5.0), CT_FAN_IN, CT_NONLINEARITY_LEAKY_RELU, NULL);
    if (ok && o.bias) {
        int64_t fan_in = 0, fan_out = 0;
        ct_tensor *b = ct__conv_param(m, fn, "bias", &cout, 1);
        ok = b && ct_init_calculate_fan_in_and_fan_out(w, &fan_in, &fan_out) == CT_OK;
        double bound = fan_in > 0 ? 1.0 / sqrt((double)fan_in) : 0.0;
        ok = ok && ct_init_uniform_(b, -bound, bound, NULL);
    }
    if (!ok) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

ct_module *ct_conv2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                         int64_t kernel_w, const ct_conv_opts *opts)
{
    int64_t k[2] = {kernel_h, kernel_w};
    return ct__conv_module_new("ct_conv2d_new", 2, false, in_channels, out_channels, k, opts);
}

ct_module *ct_conv1d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                         const ct_conv_opts *opts)
{
    int64_t k[2] = {kernel_size, 1};
    return ct__conv_module_new("ct_conv1d_new", 1, false, in_channels, out_channels, k, opts);
}

ct_module *ct_conv_transpose2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                                   int64_t kernel_w, const ct_conv_opts *opts)
{
    int64_t k[2] = {kernel_h, kernel_w};
    return ct__conv_module_new("ct_conv_transpose2d_new", 2, true, in_channels, out_channels, k,
                               opts);
}

/* m's forward when m is a conv module of that kind. */
static ct_tensor *ct__conv_typed_forward(const char *fn, int dims, bool transposed, ct_module *m,
                                         const ct_tensor *x)
{
    if (ct__null(fn, m) || ct__null(fn, x)) {
        return NULL;
    }
    const char *want = ct__conv_module_name(dims, transposed);
    if (strcmp(ct_module_name(m), want) != 0) {
        ct__fail(CT_ERR_VALUE, fn, "expected a %s module, got %s", want, ct_module_name(m));
        return NULL;
    }
    return ct_module_forward(m, x);
}

ct_tensor *ct_conv1d_forward(ct_module *m, const ct_tensor *input)
{
    return ct__conv_typed_forward("ct_conv1d_forward", 1, false, m, input);
}

ct_tensor *ct_conv2d_forward(ct_module *m, const ct_tensor *input)
{
    return ct__conv_typed_forward("ct_conv2d_forward", 2, false, m, input);
}

ct_tensor *ct_conv_transpose2d_forward(ct_module *m, const ct_tensor *input)
{
    return ct__conv_typed_forward("ct_conv_transpose2d_forward", 2, true, m, input);
}
CT__GLUE_END
