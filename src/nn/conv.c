/* nn/conv.c - convolutions by vol2col + the packed GEMM (ops/gemm.c), F.unfold / F.fold on the
 * same vol2col, and the conv modules.
 *
 * Dimension legend (the "conv view": a transposed convolution is the adjoint of the
 * convolution whose input is its output, so one set of kernels serves both). Every op works
 * on 3 spatial dims (Z, Y, X); 1-D and 2-D ops are 3-D ones whose leading spatial dims have
 * size 1 (kernel 1, stride 1, no padding):
 *   N          batch (1 for unbatched input)
 *   C, in[3]   the conv input: channels and spatial size (IN = their product)
 *   D, out[3]  the conv output: channels and spatial size (OUT = their product)
 *   G          groups; Cg = C / G, Dg = D / G; KK = the kernel's taps, Kg = Cg KK
 *   col        (C KK, OUT): col[c KK + t][o] = x[c][o s - p + tap(t) dl] per spatial dim
 *              (0 outside: the zero padding); F.unfold's output, F.fold's input
 *   weight     (D, Cg, k...), dense: group g is the (Dg, Kg) matrix at g Dg Kg
 * Kernels, per image n (each a GEMM per group):
 *   forward      y_n (D, OUT) = W_g (Dg, Kg) @ col_g (Kg, OUT)          [+ bias]
 *   grad input   col_g = W_g^T @ dy_n_g, then col2im adds col into dx_n
 *   grad weight  dW_g += dy_n_g (Dg, OUT) @ col_g^T
 * 1x1 kernels with stride 1 and no padding skip vol2col/col2im: col is the image itself;
 * depthwise convolutions (one filter per channel) run direct loops. im2col, col2im and the
 * depthwise loops are one walk over (channel, tap, output row) with a row operation.
 * conv_transpose's forward is the conv view's grad input, its grad input the conv view's
 * forward, its grad weight the conv view's grad weight with the roles of x and dy swapped.
 * Threads: images are tasks of the intra-op pool (each with its own col buffer, its GEMMs
 * serial); a single image runs on the caller, whose GEMM then uses the threads. The weight
 * gradient sums images in chunks fixed by N only, then the chunks in order, so every result
 * is bit-identical for any thread count.
 * Double backward: under create_graph the convolution's backward is written with
 * differentiable ops (grad input: the convolution with `transposed` flipped; grad weight:
 * the grouped product of grad output and im2col of the input; grad bias: a sum).
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/view.h"
#include "../ops/linalg.h"
#include "../ops/reduce.h"
#include "../autograd/autograd.h"
#include "state_dict.h"
#include "module.h"
#include "conv.h"
#include "init.h"
#include "pad.h"

#include <math.h>
#include <string.h>
#if defined(CT__HAS_AVX512)
#include <immintrin.h>
#endif

/* per-call code (geometry, checks, drivers, formulas, modules) is glue (-O1); the
   per-element loops between keep the user's level */
CT__GLUE_BEGIN
/* ---- geometry ------------------------------------------------------------------------ */
/* The arguments of aten::convolution, as parsed from a call or a node. */
typedef struct ct__conv_args {
    int dims; /* spatial dims: 1, 2 or 3 */
    int64_t stride[3], padding[3], dilation[3], output_padding[3], groups;
    bool transposed;
} ct__conv_args;

/* A tensor of the conv as (N, C, Z, Y, X) sizes and element strides: unbatched inputs get
   N = 1 and missing leading spatial dims size 1 (stride 0). */
typedef struct ct__conv_view {
    int64_t size[5], stride[5];
} ct__conv_view;

/* Spatial arrays are (Z, Y, X); inn, outn, kn: the products of in, out, k. */
typedef struct ct__conv_geom {
    int64_t n, c, d, g;
    int64_t in[3], out[3], k[3], s[3], p[3], dl[3];
    int64_t inn, outn, kn;
} ct__conv_geom;

static ct__conv_view ct__conv_view_of(const ct_tensor *t, int dims)
{
    ct__conv_view v;
    int lead = t->ndim - dims; /* 1 (unbatched) or 2 */
    for (int k = 0; k < 5; k++) {
        v.size[k] = 1;
        v.stride[k] = 0;
    }
    for (int k = 0; k < t->ndim; k++) {
        int to = k < lead ? k + (2 - lead) : 2 + (3 - dims) + (k - lead);
        v.size[to] = t->sizes[k];
        v.stride[to] = t->strides[k];
    }
    return v;
}

/* Fills the spatial arrays of g for dims dims (kernel sizes k, the conv view's input size
   in) from args; out = the convolution's output size. */
static void ct__conv_geom_spatial(ct__conv_geom *g, int dims, const int64_t *k, const int64_t *in,
                                  const int64_t *stride, const int64_t *padding,
                                  const int64_t *dilation)
{
    int o = 3 - dims;
    g->inn = g->outn = g->kn = 1;
    for (int sd = 0; sd < 3; sd++) {
        bool used = sd >= o;
        g->k[sd] = used ? k[sd - o] : 1;
        g->in[sd] = used ? in[sd - o] : 1;
        g->s[sd] = used ? stride[sd - o] : 1;
        g->p[sd] = used ? padding[sd - o] : 0;
        g->dl[sd] = used ? dilation[sd - o] : 1;
        g->out[sd] = (g->in[sd] + 2 * g->p[sd] - g->dl[sd] * (g->k[sd] - 1) - 1) / g->s[sd] + 1;
        g->inn *= g->in[sd];
        g->outn *= g->out[sd];
        g->kn *= g->k[sd];
    }
}

/* The transposed op's output size along spatial dim d (of dims). */
static int64_t ct__conv_transposed_size(const ct__conv_args *a, int d, int64_t in, int64_t k)
{
    return (in - 1) * a->stride[d] - 2 * a->padding[d] + a->dilation[d] * (k - 1) +
           a->output_padding[d] + 1;
}

/* The conv view's geometry from the op's input x and weight w (args). */
static ct__conv_geom ct__conv_geom_of(const ct_tensor *x, const ct_tensor *w,
                                      const ct__conv_args *a)
{
    ct__conv_geom g;
    const int64_t *sp = x->sizes + x->ndim - a->dims, *k = w->sizes + 2;
    int64_t in[3] = {1, 1, 1};
    for (int d = 0; d < a->dims; d++) {
        in[d] = a->transposed ? ct__conv_transposed_size(a, d, sp[d], k[d]) : sp[d];
    }
    ct__conv_geom_spatial(&g, a->dims, k, in, a->stride, a->padding, a->dilation);
    for (int d = 0; a->transposed && d < a->dims; d++) { /* x's size (output_padding) */
        g.out[3 - a->dims + d] = sp[d];
    }
    g.outn = g.out[0] * g.out[1] * g.out[2];
    g.n = x->ndim == a->dims + 2 ? x->sizes[0] : 1;
    g.g = a->groups;
    g.c = a->transposed ? w->sizes[1] * a->groups : x->sizes[x->ndim - a->dims - 1];
    g.d = a->transposed ? x->sizes[x->ndim - a->dims - 1] : w->sizes[0];
    return g;
}

/* Copies the int lists at attributes k + slots[e] of a call into dst[e] (e < n); returns
   their length (the spatial dims: that of attribute k). */
static int ct__conv_attr_lists(const ct_op_call *c, int k, int64_t *const *dst, const int *slots,
                               int n)
{
    int dims = (int)c->attrs[k].i;
    for (int e = 0; e < n; e++) {
        memcpy(dst[e], c->attrs[k + slots[e]].ints, sizeof(int64_t) * (size_t)dims);
    }
    return dims;
}

/* Attributes k.. of a call: stride, padding, dilation, transposed, output_padding, groups. */
static ct__conv_args ct__conv_args_of(const ct_op_call *c, int k)
{
    static const int slots[4] = {0, 1, 2, 4};
    ct__conv_args a;
    memset(&a, 0, sizeof a);
    a.transposed = c->attrs[k + 3].i != 0;
    a.groups = c->attrs[k + 5].i;
    int64_t *dst[4] = {a.stride, a.padding, a.dilation, a.output_padding};
    a.dims = ct__conv_attr_lists(c, k, dst, slots, 4);
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

CT__GLUE_END

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

/* A kernel tap: per spatial dim the outputs [lo, hi) that read inside the input, and the
   input offset tap dl - p of output 0. */
typedef struct ct__conv_tap {
    int64_t lo[3], hi[3], off[3];
} ct__conv_tap;

/* Sets spatial dim sd of r for kernel index i along it. */
static void ct__conv_tap_dim(const ct__conv_geom *g, int sd, int64_t i, ct__conv_tap *r)
{
    int64_t t = i * g->dl[sd];
    r->off[sd] = t - g->p[sd];
    ct__conv_range(g->in[sd], g->out[sd], g->s[sd], g->p[sd], t, &r->lo[sd], &r->hi[sd]);
}

/* Whether the conv view skips vol2col: 1x1, stride 1, no padding (then OUT = IN). */
static bool ct__conv_is_1x1(const ct__conv_geom *g)
{
    bool r = true;
    for (int sd = 0; sd < 3; sd++) {
        r = r && g->k[sd] == 1 && g->s[sd] == 1 && g->p[sd] == 0;
    }
    return r;
}

/* Whether the conv view is depthwise with one filter per channel (groups == C == D > 1), with
   unit steps along X (stride 1 and input elements xs4 == 1 apart): direct loops instead of
   vol2col and a GEMM per channel. */
static bool ct__conv_is_depthwise(const ct__conv_geom *g, int64_t xs4)
{
    return g->g > 1 && g->g == g->c && g->g == g->d && g->s[2] == 1 && xs4 == 1;
}

/* The walk's row operations (see ct__conv_walk_*); COL2IM_SCRATCH is COL2IM on a col buffer
   that may be overwritten. */
enum {
    CT__CONV_IM2COL,
    CT__CONV_COL2IM,
    CT__CONV_COL2IM_SCRATCH,
    CT__DW_FWD,
    CT__DW_DATA,
    CT__DW_WEIGHT
};
/* Channels per block of the walk: the taps' ranges are computed once per block. */
#define CT__CONV_WALK_CB 16
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
    double *sums; /* backward: dy's channel sums per image (N, D) for the bias grad, or NULL */
    bool trans;   /* backward: dx is the transposed op's, i.e. the conv view's forward of x */
} ct__conv_job;

/* lane[k] += s[i + k] (k < 16) in double for i = 0, 16, ... below full: float32 on AVX-512
   in two registers (the generic loop's lanes went through memory each step), the same adds */
#if defined(CT__HAS_AVX512)
static void ct__conv_lanes_f32(const float *s, int64_t full, double *lane)
{
    __m512d a = _mm512_loadu_pd(lane), b = _mm512_loadu_pd(lane + 8);
    const __mmask8 all = (__mmask8)0xFF; /* the zero-masking form: the plain one trips g++ 12 */
    for (int64_t i = 0; i < full; i += 16) {
        a = _mm512_add_pd(a, _mm512_maskz_cvtps_pd(all, _mm256_loadu_ps(s + i)));
        b = _mm512_add_pd(b, _mm512_maskz_cvtps_pd(all, _mm256_loadu_ps(s + i + 8)));
    }
    _mm512_storeu_pd(lane, a);
    _mm512_storeu_pd(lane + 8, b);
}
#define CT__CONV_LANES_f32(s, full, lane) ct__conv_lanes_f32(s, full, lane)
#else
#define CT__CONV_LANES_f32(s, full, lane) CT__CONV_LANES(s, full, lane)
#endif
#define CT__CONV_LANES_f64(s, full, lane) CT__CONV_LANES(s, full, lane)
#define CT__CONV_LANES(s, full, lane)                                                        \
    for (int64_t i = 0; i < (full); i += 16) {                                               \
        for (int k = 0; k < 16; k++) {                                                       \
            (lane)[k] += (double)(s)[i + k];                                                 \
        }                                                                                    \
    }

#define CT__CONV_LOOPS_DEFINE(T, S)                                                          \
    /* One output row: a + off is the input row at its tap offset (element o at a[off + o    \
       step]), b the col / output row (OX elements), [x0, x1) its outputs that read inside   \
       the input */                                                                          \
    CT__BITS_INLINE void ct__conv_row_##S(int mode, T *a, int64_t off, T *b, int64_t step,   \
                                          int64_t x0, int64_t x1, int64_t ox, T wc, T *row)  \
    {                                                                                        \
        if (mode == CT__CONV_IM2COL) { /* interior rows skip the memset calls */             \
            if (x0 > 0) {                                                                    \
                memset(b, 0, sizeof(T) * (size_t)x0);                                        \
            }                                                                                \
            if (step == 1) {                                                                 \
                memcpy(b + x0, a + off + x0, sizeof(T) * (size_t)(x1 - x0));                 \
            }                                                                                \
            for (int64_t o = x0; step != 1 && o < x1; o++) {                                 \
                b[o] = a[off + o * step];                                                    \
            }                                                                                \
            if (x1 < ox) {                                                                   \
                memset(b + x1, 0, sizeof(T) * (size_t)(ox - x1));                            \
            }                                                                                \
        } else if (mode <= CT__CONV_COL2IM_SCRATCH && step == 1) { /* the col2im modes */    \
            for (int64_t o = x0; o < x1; o++) {                                              \
                a[off + o] += b[o];                                                          \
            }                                                                                \
        } else if (mode <= CT__CONV_COL2IM_SCRATCH) {                                        \
            for (int64_t o = x0; o < x1; o++) {                                              \
                a[off + o * step] += b[o];                                                   \
            }                                                                                \
        } else if (mode == CT__DW_FWD) {                                                     \
            for (int64_t o = x0; o < x1; o++) {                                              \
                b[o] = CT__CONV_FMA_##S(wc, a[off + o], b[o]);                               \
            }                                                                                \
        } else if (mode == CT__DW_DATA) {                                                    \
            for (int64_t o = x0; o < x1; o++) {                                              \
                a[off + o] = CT__CONV_FMA_##S(wc, b[o], a[off + o]);                         \
            }                                                                                \
        } else {                                                                             \
            for (int64_t o = x0; o < x1; o++) {                                              \
                row[o] = CT__CONV_FMA_##S(a[off + o], b[o], row[o]);                         \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* IM2COL and COL2IM_SCRATCH on the valid rows [y0, y1) and columns [x0, x1) of one      \
       plane (x0 < x1) when the plane is flat: stride 1 along Y and X, as many output        \
       columns OX as input columns, dense input rows. Output o = oy OX + ox then reads       \
       input o + off, so the rows are one run from the first valid element to the last;      \
       b's elements in the run outside [x0, x1) are zeroed (IM2COL: they are col's padding;  \
       COL2IM_SCRATCH: they add +0 to input elements, which changes none: a sum started      \
       from +0 is never -0). */                                                              \
    CT__BITS_INLINE void ct__conv_flat_##S(int mode, T *a, int64_t off, T *b, int64_t y0,    \
                                           int64_t y1, int64_t x0, int64_t x1, int64_t ox)   \
    {                                                                                        \
        int64_t first = y0 * ox + x0, last = (y1 - 1) * ox + x1;                             \
        if (mode == CT__CONV_IM2COL) {                                                       \
            for (int64_t o = y0 * ox; o < first; o++) {                                      \
                b[o] = (T)0;                                                                 \
            }                                                                                \
            memcpy(b + first, a + off + first, sizeof(T) * (size_t)(last - first));          \
            for (int64_t o = last; o < y1 * ox; o++) {                                       \
                b[o] = (T)0;                                                                 \
            }                                                                                \
        }                                                                                    \
        for (int64_t oy = y0; oy + 1 < y1; oy++) {                                           \
            for (int64_t o = oy * ox + x1; o < (oy + 1) * ox + x0; o++) {                    \
                b[o] = (T)0;                                                                 \
            }                                                                                \
        }                                                                                    \
        for (int64_t o = first; mode != CT__CONV_IM2COL && o < last; o++) {                  \
            a[off + o] += b[o];                                                              \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* One channel's rows of tap r: x the channel's input, y its col rows (IM2COL / COL2IM)  \
       or output (depthwise), w its weight element (depthwise) */                            \
    CT__BITS_INLINE void ct__conv_tap_rows_##S(const ct__conv_geom *g, int mode,             \
                                               const ct__conv_tap *r, T *x, const int64_t *xs, \
                                               T *y, T *w, T beta, T *row)                   \
    {                                                                                        \
        int64_t ox = g->out[2], oyx = g->out[1] * ox;                                        \
        T wc = w ? *w : (T)0;                                                                \
        bool flat = (mode == CT__CONV_IM2COL || mode == CT__CONV_COL2IM_SCRATCH) &&          \
                    g->s[1] == 1 && g->s[2] == 1 && g->out[2] == g->in[2] && xs[4] == 1 &&   \
                    xs[3] == g->in[2];                                                       \
        if (mode == CT__DW_WEIGHT) {                                                         \
            memset(row, 0, sizeof(T) * (size_t)ox);                                          \
        }                                                                                    \
        for (int64_t oz = 0; oz < g->out[0]; oz++) {                                         \
            T *bz = y + oz * oyx;                                                            \
            bool in = oz >= r->lo[0] && oz < r->hi[0];                                       \
            int64_t y0 = in ? r->lo[1] : g->out[1], y1 = in ? r->hi[1] : g->out[1];          \
            if (mode == CT__CONV_IM2COL && y0 > 0) { /* interior taps skip the calls */      \
                memset(bz, 0, sizeof(T) * (size_t)(y0 * ox));                                \
            }                                                                                \
            if (mode == CT__CONV_IM2COL && y1 < g->out[1]) {                                 \
                memset(bz + y1 * ox, 0, sizeof(T) * (size_t)(oyx - y1 * ox));                \
            }                                                                                \
            int64_t az = (oz * g->s[0] + r->off[0]) * xs[2];                                 \
            if (flat && y0 < y1 && r->lo[2] < r->hi[2]) {                                    \
                ct__conv_flat_##S(mode, x + az, r->off[1] * xs[3] + r->off[2], bz, y0, y1,   \
                                  r->lo[2], r->hi[2], ox);                                   \
                continue;                                                                    \
            }                                                                                \
            for (int64_t oy = y0; oy < y1; oy++) {                                           \
                ct__conv_row_##S(mode, x + az + (oy * g->s[1] + r->off[1]) * xs[3],          \
                                 r->off[2] * xs[4], bz + oy * ox, g->s[2] * xs[4], r->lo[2], \
                                 r->hi[2], ox, wc, row);                                     \
            }                                                                                \
        }                                                                                    \
        T acc = beta == (T)0 ? (T)0 : wc;                                                    \
        for (int64_t o = 0; mode == CT__DW_WEIGHT && o < ox; o++) {                          \
            acc += row[o];                                                                   \
        }                                                                                    \
        if (mode == CT__DW_WEIGHT) {                                                         \
            *w = acc;                                                                        \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* The walk over (channel c, tap t = (tz, ty, tx), output row) of one image; mode's row  \
       operation:                                                                            \
       IM2COL    y = col (C KK, OUT) from x (C, IN) at strides xs[1..4], zeros outside;      \
       COL2IM    x (C, IN), dense, += col y placed back;                                     \
       DW_FWD    y (C, OUT) += w x (depthwise, w (C, KK));  DW_DATA  x (C, IN) += w y;       \
       DW_WEIGHT w (+)= the sum of x y over the rows (row: OX scratch; beta 0: =).            \
       The depthwise modes need unit steps along X (stride 1, xs[4] == 1). Channels go in   \
       blocks of CT__CONV_WALK_CB, each block tap by tap (every channel sees its taps in     \
       order). Inlined into one function per im2col, col2im and depthwise, so the row        \
       operation is known. */                                                                \
    CT__BITS_INLINE void ct__conv_walk_##S(const ct__conv_geom *g, int mode, T *x,           \
                                           const int64_t *xs, T *y, T *w, T beta, T *row)    \
    {                                                                                        \
        ct__conv_tap r;                                                                      \
        for (int64_t c0 = 0; c0 < g->c; c0 += CT__CONV_WALK_CB) {                            \
            int64_t c1 = c0 + CT__CONV_WALK_CB < g->c ? c0 + CT__CONV_WALK_CB : g->c, t = 0; \
            for (int64_t tz = 0; tz < g->k[0]; tz++) {                                       \
                ct__conv_tap_dim(g, 0, tz, &r);                                              \
                for (int64_t ty = 0; ty < g->k[1]; ty++) {                                   \
                    ct__conv_tap_dim(g, 1, ty, &r);                                          \
                    for (int64_t tx = 0; tx < g->k[2]; tx++, t++) {                          \
                        ct__conv_tap_dim(g, 2, tx, &r);                                      \
                        for (int64_t c = c0; c < c1; c++) {                                  \
                            int64_t ct = c * g->kn + t;                                      \
                            int64_t yr = mode <= CT__CONV_COL2IM_SCRATCH ? ct : c;           \
                            ct__conv_tap_rows_##S(g, mode, &r, x + c * xs[1], xs,            \
                                                  y + yr * g->outn, w ? w + ct : NULL, beta, \
                                                  row);                                      \
                        }                                                                    \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* col (C KK, OUT) = vol2col of image x (C, IN) at strides xs[1..4] */                   \
    static void ct__conv_im2col_##S(const ct__conv_geom *g, const T *x, const int64_t *xs,   \
                                    T *col)                                                  \
    {                                                                                        \
        ct__conv_walk_##S(g, CT__CONV_IM2COL, (T *)(uintptr_t)x, xs, col, NULL, (T)0, NULL); \
    }                                                                                        \
                                                                                             \
    /* x (C, IN), dense at strides xs, += col (C KK, OUT) placed back; scratch: col may be   \
       overwritten (its padding elements zeroed) */                                          \
    static void ct__conv_col2im_##S(const ct__conv_geom *g, const T *col, T *x,              \
                                    const int64_t *xs, bool scratch)                         \
    {                                                                                        \
        ct__conv_walk_##S(g, scratch ? CT__CONV_COL2IM_SCRATCH : CT__CONV_COL2IM, x, xs,     \
                          (T *)(uintptr_t)col, NULL, (T)0, NULL);                            \
    }                                                                                        \
                                                                                             \
    /* the depthwise modes (CT__DW_*; the mode's range spelled out so the compiler drops    \
       the im2col and col2im rows from this copy) */                                         \
    static void ct__conv_depthwise_##S(const ct__conv_geom *g, int mode, T *x,               \
                                       const int64_t *xs, T *y, T *w, T beta, T *row)        \
    {                                                                                        \
        int m = mode == CT__DW_DATA ? CT__DW_DATA : mode == CT__DW_WEIGHT ? CT__DW_WEIGHT    \
                                                                          : CT__DW_FWD;      \
        ct__conv_walk_##S(g, m, x, xs, y, w, beta, row);                                     \
    }                                                                                        \
                                                                                             \
    /* rows (R, len), dense: row r = (add ? row r : 0) + (bias ? bias[r] : 0) */             \
    static void ct__conv_bias_rows_##S(T *y, const T *bias, int64_t rows, int64_t len,       \
                                       bool add)                                             \
    {                                                                                        \
        for (int64_t r = 0; r < rows; r++) {                                                 \
            T v = bias ? bias[r] : (T)0, *yr = y + r * len;                                  \
            if (add) {                                                                       \
                for (int64_t p = 0; p < len; p++) {                                          \
                    yr[p] += v;                                                              \
                }                                                                            \
            } else {                                                                         \
                for (int64_t p = 0; p < len; p++) {                                          \
                    yr[p] = v;                                                               \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* out[c] = the sum of channel c of one image t (view v's dims 1..4) in float64: runs    \
       along X (whole planes when dense) add their first multiple of 16 elements into 16     \
       lanes (vectorized) and the rest into one more sum; the 17 sums are added in order */  \
    static void ct__conv_image_sums_##S(const T *t, const ct__conv_view *v, double *out)     \
    {                                                                                        \
        const int64_t *sz = v->size, *st = v->stride;                                        \
        bool plane = st[4] == 1 && (sz[3] == 1 || st[3] == sz[4]) &&                         \
                     (sz[2] == 1 || st[2] == sz[3] * sz[4]);                                 \
        int64_t len = plane ? sz[2] * sz[3] * sz[4] : sz[4];                                 \
        int64_t runs = plane ? 1 : sz[2] * sz[3], full = st[4] == 1 ? len / 16 * 16 : 0;     \
        for (int64_t c = 0; c < sz[1]; c++) {                                                \
            double lane[16] = {0}, acc = 0.0;                                                \
            for (int64_t r = 0; r < runs; r++) {                                             \
                const T *s = t + c * st[1] + r / sz[3] * st[2] + r % sz[3] * st[3];          \
                CT__CONV_LANES_##S(s, full, lane);                                           \
                for (int64_t i = full; i < len; i++) {                                       \
                    acc += (double)s[i * st[4]];                                             \
                }                                                                            \
            }                                                                                \
            for (int k = 0; k < 16; k++) {                                                   \
                acc += lane[k];                                                              \
            }                                                                                \
            out[c] = acc;                                                                    \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* db (C) = the images' channel sums (N, C) summed over N in order */                    \
    static void ct__conv_bias_grad_##S(const double *sums, int64_t n, int64_t c, T *db)      \
    {                                                                                        \
        for (int64_t k = 0; k < c; k++) {                                                    \
            double acc = 0.0;                                                                \
            for (int64_t i = 0; i < n; i++) {                                                \
                acc += sums[i * c + k];                                                      \
            }                                                                                \
            db[k] = (T)acc;                                                                  \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* dw = the chunk partials summed in order */                                            \
    static void ct__conv_sum_chunks_##S(const T *part, int64_t nchunks, int64_t len, T *dw)  \
    {                                                                                        \
        memcpy(dw, part, sizeof(T) * (size_t)len);                                           \
        for (int64_t k = 1; k < nchunks; k++) {                                              \
            for (int64_t i = 0; i < len; i++) {                                              \
                dw[i] += part[k * len + i];                                                  \
            }                                                                                \
        }                                                                                    \
    }

#define CT__CONV_DEFINE(T, S)                                                                \
    /* A dense copy of a strided (N, C, Z, Y, X) view into out */                           \
    static void ct__conv_densify_##S(const T *src, const ct__conv_view *v, T *out)           \
    {                                                                                        \
        int64_t rows = v->size[0] * v->size[1] * v->size[2] * v->size[3];                    \
        for (int64_t r = 0; r < rows; r++) {                                                 \
            const T *s = src + ct__conv_row_offset(v, r);                                    \
            for (int64_t x = 0; x < v->size[4]; x++) {                                       \
                *out++ = s[x * v->stride[4]];                                                \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* The GEMM operand B of image x: col (Kg rows per group, OUT columns), or x itself;     \
       *rs its row stride, *gs its group stride */                                           \
    static const T *ct__conv_cols_##S(const ct__conv_geom *g, const T *x, const int64_t *xs, \
                                      T *col, int64_t *rs, int64_t *gs)                      \
    {                                                                                        \
        int64_t cg = g->c / g->g;                                                            \
        if (ct__conv_is_1x1(g) && xs[4] == 1 && (g->in[1] == 1 || xs[3] == g->in[2]) &&      \
            (g->in[0] == 1 || xs[2] == g->in[1] * g->in[2])) {                               \
            *rs = xs[1];                                                                     \
            *gs = cg * xs[1];                                                                \
            return x;                                                                        \
        }                                                                                    \
        ct__conv_im2col_##S(g, x, xs, col);                                                  \
        *rs = g->outn;                                                                       \
        *gs = cg * g->kn * g->outn;                                                          \
        return col;                                                                          \
    }                                                                                        \
                                                                                             \
    /* y (D, OUT) = W @ cols(x) (+ bias per channel), one GEMM per group */                  \
    static void ct__conv_fwd_image_##S(const ct__conv_geom *g, const T *x, const int64_t *xs, \
                                       const T *w, const T *bias, T *y, T *col)              \
    {                                                                                        \
        int64_t on = g->outn, dg = g->d / g->g, kg = g->c / g->g * g->kn;                    \
        bool dw = ct__conv_is_depthwise(g, xs[4]);                                           \
        if (bias || dw) {                                                                    \
            ct__conv_bias_rows_##S(y, bias, g->d, on, false);                                \
        }                                                                                    \
        if (dw) {                                                                            \
            ct__conv_depthwise_##S(g, CT__DW_FWD, (T *)(uintptr_t)x, xs, y, (T *)(uintptr_t)w, \
                              (T)0, col);                                                    \
            return;                                                                          \
        }                                                                                    \
        int64_t rs = 0, gs = 0;                                                              \
        const T *b = ct__conv_cols_##S(g, x, xs, col, &rs, &gs);                             \
        for (int64_t gi = 0; gi < g->g; gi++) {                                              \
            ct__gemm_##S(dg, on, kg, (T)1, w + gi * dg * kg, kg, 1, b + gi * gs, rs, 1,      \
                         bias ? (T)1 : (T)0, y + gi * dg * on, on, 1);                       \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* dx (C, IN), dense, = col2im(W^T @ dy) (+ bias per channel: the transposed op) */      \
    static void ct__conv_bwd_data_image_##S(const ct__conv_geom *g, const T *dy, const T *w, \
                                            const T *bias, T *dx, T *col)                    \
    {                                                                                        \
        int64_t on = g->outn, inn = g->inn, dg = g->d / g->g, kg = g->c / g->g * g->kn;      \
        int64_t dxs[5] = {0, inn, g->in[1] * g->in[2], g->in[2], 1};                         \
        bool direct = ct__conv_is_1x1(g), dw = ct__conv_is_depthwise(g, 1);                  \
        T *c = direct ? dx : col;                                                            \
        for (int64_t gi = 0; !dw && gi < g->g; gi++) {                                       \
            ct__gemm_##S(kg, on, dg, (T)1, w + gi * dg * kg, 1, kg, dy + gi * dg * on, on, 1, \
                         (T)0, c + gi * kg * on, on, 1);                                     \
        }                                                                                    \
        if (!direct || dw) {                                                                 \
            memset(dx, 0, sizeof(T) * (size_t)(g->c * inn));                                 \
        }                                                                                    \
        if (dw) {                                                                            \
            ct__conv_depthwise_##S(g, CT__DW_DATA, dx, dxs, (T *)(uintptr_t)dy,              \
                                   (T *)(uintptr_t)w, (T)0, col);                            \
        } else if (!direct) {                                                                \
            ct__conv_col2im_##S(g, col, dx, dxs, true);                                      \
        }                                                                                    \
        if (bias) {                                                                          \
            ct__conv_bias_rows_##S(dx, bias, g->c, inn, true);                               \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* dw (D, Kg) (+)= dy (D, OUT) @ cols(x)^T per group; beta 0 for the chunk's first */    \
    static void ct__conv_bwd_weight_image_##S(const ct__conv_geom *g, const T *x,            \
                                              const int64_t *xs, const T *dy, T *dw, T beta, \
                                              T *col)                                        \
    {                                                                                        \
        int64_t on = g->outn, dg = g->d / g->g, kg = g->c / g->g * g->kn;                    \
        if (ct__conv_is_depthwise(g, xs[4])) {                                               \
            ct__conv_depthwise_##S(g, CT__DW_WEIGHT, (T *)(uintptr_t)x, xs, (T *)(uintptr_t)dy, \
                              dw, beta, col);                                                \
            return;                                                                          \
        }                                                                                    \
        int64_t rs = 0, gs = 0;                                                              \
        const T *b = ct__conv_cols_##S(g, x, xs, col, &rs, &gs);                             \
        for (int64_t gi = 0; gi < g->g; gi++) {                                              \
            ct__gemm_##S(dg, kg, on, (T)1, dy + gi * dg * on, on, 1, b + gi * gs, 1, rs, beta, \
                         dw + gi * dg * kg, kg, 1);                                          \
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
            ct__conv_bwd_data_image_##S(g, (const T *)j->dy + n * g->d * g->outn,            \
                                        (const T *)j->w, (const T *)j->bias,                 \
                                        (T *)j->dx + n * g->c * g->inn, col);                \
        } else {                                                                             \
            ct__conv_fwd_image_##S(g, (const T *)j->x + n * j->xv.stride[0], j->xv.stride,   \
                                   (const T *)j->w, (const T *)j->bias,                      \
                                   (T *)j->y + n * g->d * g->outn, col);                     \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* backward task: the images of chunk k; grad weight into chunk k's partial */          \
    static void ct__conv_bwd_task_##S(int64_t k, int slot, void *ctx)                        \
    {                                                                                        \
        const ct__conv_job *j = (const ct__conv_job *)ctx;                                   \
        const ct__conv_geom *g = &j->g;                                                      \
        T *col = (T *)j->col + j->col_len * (size_t)slot;                                    \
        int64_t on = g->outn, wlen = g->d * (g->c / g->g) * g->kn;                           \
        int64_t n0 = g->n * k / j->nchunks, n1 = g->n * (k + 1) / j->nchunks;                \
        for (int64_t n = n0; n < n1; n++) {                                                  \
            const T *x = (const T *)j->x + n * j->xv.stride[0];                              \
            const T *dy = (const T *)j->dy + n * g->d * on;                                  \
            if (j->sums) { /* first, so the GEMMs find dy in cache */                        \
                ct__conv_view dv = {{1, g->d, g->out[0], g->out[1], g->out[2]},              \
                                    {0, on, g->out[1] * g->out[2], g->out[2], 1}};           \
                ct__conv_image_sums_##S(dy, &dv, j->sums + n * g->d);                        \
            }                                                                                \
            if (j->dw) {                                                                     \
                ct__conv_bwd_weight_image_##S(g, x, j->xv.stride, dy, (T *)j->dw + k * wlen, \
                                              n == n0 ? (T)0 : (T)1, col);                   \
            }                                                                                \
            if (j->dx && j->trans) { /* dx of the transposed op: conv forward of x */       \
                ct__conv_fwd_image_##S(g, x, j->xv.stride, (const T *)j->w, NULL,            \
                                       (T *)j->dx + n * g->d * on, col);                     \
            } else if (j->dx) {                                                              \
                ct__conv_bwd_data_image_##S(g, dy, (const T *)j->w, NULL,                    \
                                            (T *)j->dx + n * g->c * g->inn, col);            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    /* im2col / col2im task (F.unfold / F.fold): image n between x (strided) and col */     \
    static void ct__conv_fold_task_##S(int64_t n, int slot, void *ctx)                       \
    {                                                                                        \
        const ct__conv_job *j = (const ct__conv_job *)ctx;                                   \
        const ct__conv_geom *g = &j->g;                                                      \
        (void)slot;                                                                          \
        if (j->trans) {                                                                      \
            int64_t xs[5] = {0, g->inn, g->in[1] * g->in[2], g->in[2], 1};                   \
            T *x = (T *)j->dx + n * g->c * g->inn;                                           \
            memset(x, 0, sizeof(T) * (size_t)(g->c * g->inn));                               \
            ct__conv_col2im_##S(g, (const T *)j->dy + n * g->c * g->kn * g->outn, x, xs,     \
                                false);                                                      \
        } else {                                                                             \
            ct__conv_im2col_##S(g, (const T *)j->x + n * j->xv.stride[0], j->xv.stride,      \
                                (T *)j->y + n * g->c * g->kn * g->outn);                     \
        }                                                                                    \
    }

/* The element offset of row r (over the view's first four dims, row-major) of a view. */
static int64_t ct__conv_row_offset(const ct__conv_view *v, int64_t r)
{
    int64_t off = 0;
    for (int k = 3; k >= 0; k--) {
        off += r % v->size[k] * v->stride[k];
        r /= v->size[k];
    }
    return off;
}

/* the per-element loops need the vectorizer's runtime alias checks (cheap cost model) */
CT__VECTORIZE_BEGIN
CT__CONV_LOOPS_DEFINE(float, f32)
CT__CONV_LOOPS_DEFINE(double, f64)
CT__VECTORIZE_END
/* the per-image drivers (the GEMMs and the loops above do the work) and the strided-copy
   helper (dense copies of non-contiguous operands): glue */
CT__GLUE_BEGIN
CT__CONV_DEFINE(float, f32)
CT__CONV_DEFINE(double, f64)
CT__GLUE_END
#undef CT__CONV_LOOPS_DEFINE
#undef CT__CONV_DEFINE
#undef CT__CONV_LANES_f32
#undef CT__CONV_LANES_f64
#undef CT__CONV_LANES
#undef CT__CONV_FMA_f32
#undef CT__CONV_FMA_f64

CT__GLUE_BEGIN
/* ---- running jobs ---------------------------------------------------------------------- */
/* Runs task over ntasks with a col buffer of col_len elements per thread slot (a single task
   on the caller, so its GEMMs use the threads). false: CT_ERR_OOM recorded for op. */
static bool ct__conv_run(const char *op, ct__conv_job *j, int64_t ntasks, size_t es,
                         size_t col_len, void (*task)(int64_t, int, void *))
{
    int nt = ntasks > 1 ? ct__parallel_threads() : 1;
    if (nt > ntasks) {
        nt = (int)ntasks;
    }
    j->col_len = (col_len + 15) / 16 * 16;
    j->col = j->col_len > 0 ? ct__malloc(es * j->col_len * (size_t)nt) : NULL;
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

/* The col buffer a conv job needs per image: C KK x OUT. */
static size_t ct__conv_col_len(const ct__conv_geom *g)
{
    return (size_t)(g->c * g->kn * g->outn);
}

/* t's data as a dense array: t's own when contiguous, else a copy in *owned (freed by the
   caller). NULL: CT_ERR_OOM recorded. */
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
/* v[0..n) joined by sep into buf. */
static void ct__conv_join(const int64_t *v, int n, const char *sep, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < n && used < cap; k++) {
        int w = snprintf(buf + used, cap - used, "%s%lld", k ? sep : "", (long long)v[k]);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* PyTorch's output_padding message: 1-D as 2-D (height 0 / 1 / 1), 3-D with depth. */
static void ct__conv_output_padding_fail(const char *op, const ct__conv_args *a)
{
    static const char *dim_names[3] = {"depth", "height", "width"};
    static const char *kinds[3] = {"output_padding", "stride", "dilation"};
    const int64_t *vals[3] = {a->output_padding, a->stride, a->dilation};
    int nd = a->dims == 1 ? 2 : a->dims;
    char s[400];
    size_t used = 0;
    for (int kind = 0; kind < 3; kind++) {
        for (int e = 0; e < nd; e++) {
            int d = e - (nd - a->dims);
            int64_t v = d >= 0 ? vals[kind][d] : kind == 0 ? 0 : 1;
            int w = snprintf(s + used, sizeof s - used, "%s%s_%s: %lld", used ? " " : "",
                             kinds[kind], dim_names[3 - nd + e], (long long)v);
            used += w > 0 && (size_t)w < sizeof s - used ? (size_t)w : 0;
        }
    }
    ct__fail(CT_ERR_VALUE, op,
             "output padding must be smaller than either stride or dilation, but got %s", s);
}

/* PyTorch's checks of the arguments (check_shape_forward / _convolution). */
static bool ct__conv_check_args(const char *op, const ct__conv_args *a)
{
    static const char *msgs[3] = {"non-positive stride is not supported",
                                  "negative padding is not supported",
                                  "non-positive dilation is not supported"};
    const int64_t *vals[3] = {a->stride, a->padding, a->dilation};
    for (int kind = 0; kind < 3; kind++) {
        for (int d = 0; d < a->dims; d++) {
            if (vals[kind][d] < (kind == 1 ? 0 : 1)) {
                ct__fail(CT_ERR_VALUE, op, "%s", msgs[kind]);
                return false;
            }
        }
    }
    if (a->groups <= 0) {
        ct__fail(CT_ERR_VALUE, op, "non-positive groups is not supported");
        return false;
    }
    for (int d = 0; a->transposed && d < a->dims; d++) {
        if (a->output_padding[d] < 0 ||
            (a->output_padding[d] >= a->stride[d] && a->output_padding[d] >= a->dilation[d])) {
            ct__conv_output_padding_fail(op, a);
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
    int64_t xsz[CT_MAX_DIMS + 1] = {1}; /* unbatched input as PyTorch reports it: N = 1 */
    int lead = x->ndim == a->dims + 1;
    memcpy(xsz + lead, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    ct__shape_str(w->sizes, w->ndim, ws, sizeof ws);
    ct__shape_str(xsz, x->ndim + lead, xs, sizeof xs);
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
    int64_t in[3] = {0, 0, 0}, ker[3] = {0, 0, 0};
    char si[96], sk[96], so[96];
    bool bad_kernel = false, bad_out = false;
    for (int d = 0; d < a->dims; d++) {
        int64_t k = w->sizes[2 + d], h = x->sizes[x->ndim - a->dims + d];
        in[d] = a->transposed ? h : h + 2 * a->padding[d];
        ker[d] = a->dilation[d] * (k - 1) + 1;
        bad_kernel = bad_kernel || (!a->transposed && in[d] < ker[d]);
        bad_out = bad_out || out[d] <= 0;
    }
    ct__conv_join(in, a->dims, " x ", si, sizeof si);
    if (bad_kernel) {
        ct__conv_join(ker, a->dims, " x ", sk, sizeof sk);
        ct__fail(CT_ERR_SHAPE, op, "Calculated padded input size per channel: (%s). Kernel size: "
                 "(%s). Kernel size can't be greater than actual input size", si, sk);
        return false;
    }
    if (bad_out) {
        ct__conv_join(out, a->dims, " x ", so, sizeof so);
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
    const int64_t *spd = (a.transposed ? g.in : g.out) + (3 - a.dims);
    if (!ct__conv_check_sizes(c->fn, x, w, &a, spd)) {
        return false;
    }
    int64_t sizes[5];
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
              ct__conv_run(c->fn, &j, j.g.n, ct_dtype_size(c->dtype), ct__conv_col_len(&j.g),
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

/* db (go's channels) = the sums of go (the op's output grad, dims spatial dims) per channel:
   per image in sums (N, C), filled here when fill (== sums) is given, then over images. */
static void ct__conv_bias_backward(const ct_tensor *go, int dims, double *fill,
                                   const double *sums, void *db)
{
    ct__conv_view v = ct__conv_view_of(go, dims);
    bool f32 = go->dtype == CT_FLOAT32;
    for (int64_t n = 0; fill && n < v.size[0]; n++) {
        if (f32) {
            ct__conv_image_sums_f32((const float *)(const void *)ct__data(go) + n * v.stride[0],
                                    &v, fill + n * v.size[1]);
        } else {
            ct__conv_image_sums_f64((const double *)(const void *)ct__data(go) + n * v.stride[0],
                                    &v, fill + n * v.size[1]);
        }
    }
    if (f32) {
        ct__conv_bias_grad_f32(sums, v.size[0], v.size[1], (float *)db);
    } else {
        ct__conv_bias_grad_f64(sums, v.size[0], v.size[1], (double *)db);
    }
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
    int64_t wlen = ct_numel(w), nb = a.transposed ? j.g.c : j.g.d;
    /* the bias grad: go's channel sums per image, taken by the tasks when go is their dy */
    double *sums = mask[2] ? (double *)ct__malloc(sizeof(double) * (size_t)(j.g.n * nb)) : NULL;
    j.sums = !a.transposed && (mask[0] || mask[1]) ? sums : NULL;
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
    bool ok = j.w && j.dy && (!mask[1] || part || wlen == 0) && (!mask[2] || sums);
    if (!ok && ct_error_code() == CT_OK) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    if (ok && (mask[0] || mask[1]) && j.g.n > 0) {
        ok = ct__conv_run(c->fn, &j, j.nchunks, es, ct__conv_col_len(&j.g),
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
    if (ok && mask[2]) {
        ct__conv_bias_backward(go, a.dims, j.sums ? NULL : sums, sums, ct__data(c->outputs[2]));
    }
    ct__free(own_w);
    ct__free(own_dy);
    ct__free(part);
    ct__free(sums);
    return ok ? CT_OK : ct_error_code();
}

/* 2 x (multiply-adds) of the conv view: its output's size times Cg KK. */
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

/* ---- aten::im2col / aten::col2im (F.unfold / F.fold) ------------------------------------- */
/* The sliding-block arguments: kernel_size, dilation, padding, stride (dims each) and, for
   col2im, output_size; attrs in that order after output_size. */
typedef struct ct__fold_args {
    int dims;
    int64_t k[3], dl[3], p[3], s[3], size[3];
} ct__fold_args;

static ct__fold_args ct__fold_args_of(const ct_op_call *c, int k)
{
    static const int slots[4] = {0, 1, 2, 3};
    ct__fold_args a;
    memset(&a, 0, sizeof a);
    int64_t *dst[4] = {a.k, a.dl, a.p, a.s};
    a.dims = ct__conv_attr_lists(c, k, dst, slots, 4);
    return a;
}

/* floor(a / b) for b > 0 (PyTorch's div_rtn). */
static int64_t ct__conv_div_floor(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q * b > a ? q - 1 : q;
}

/* The number of sliding blocks along each dim (may be < 1). */
static void ct__fold_blocks(const ct__fold_args *a, const int64_t *in, int64_t *blocks)
{
    for (int d = 0; d < a->dims; d++) {
        blocks[d] = ct__conv_div_floor(in[d] + 2 * a->p[d] - (a->dl[d] * (a->k[d] - 1) + 1),
                                       a->s[d]) + 1;
    }
}

/* PyTorch's im2col/col2im argument checks, in its order (kinds: 0 kernel, 1 dilation,
   2 padding, 3 stride). */
static bool ct__fold_check_args(const char *op, const ct__fold_args *a, const int *order)
{
    static const char *what[4] = {"kernel size should be greater than zero",
                                  "dilation should be greater than zero",
                                  "padding should be non-negative",
                                  "stride should be greater than zero"};
    static const char *label[4] = {"kernel", "dilation", "pad", "stride"};
    static const char *dim_names[3] = {"depth", "height", "width"};
    const int64_t *vals[4] = {a->k, a->dl, a->p, a->s};
    for (int e = 0; e < 4; e++) {
        int kind = order[e];
        bool bad = false;
        char s[200];
        size_t used = 0;
        for (int d = 0; d < a->dims; d++) {
            bad = bad || vals[kind][d] < (kind == 2 ? 0 : 1);
            int w = snprintf(s + used, sizeof s - used, "%s%s_%s: %lld", d ? " " : "", label[kind],
                             dim_names[3 - a->dims + d], (long long)vals[kind][d]);
            used += w > 0 && (size_t)w < sizeof s - used ? (size_t)w : 0;
        }
        if (bad) {
            ct__fail(CT_ERR_VALUE, op, "%s, but got %s", what[kind], s);
            return false;
        }
    }
    return true;
}

/* "kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0)" and, with stride, ", stride=(1, 1)" */
static void ct__fold_args_str(const ct__fold_args *a, bool stride, char *buf, size_t cap)
{
    char k[64], dl[64], p[64], s[64];
    ct__conv_join(a->k, a->dims, ", ", k, sizeof k);
    ct__conv_join(a->dl, a->dims, ", ", dl, sizeof dl);
    ct__conv_join(a->p, a->dims, ", ", p, sizeof p);
    ct__conv_join(a->s, a->dims, ", ", s, sizeof s);
    snprintf(buf, cap, "kernel_size=(%s), dilation=(%s), padding=(%s)%s%s%s", k, dl, p,
             stride ? ", stride=(" : "", stride ? s : "", stride ? ")" : "");
}

/* Whether t is (N, C, spatial...) or unbatched with non-zero sizes but N (PyTorch's rule). */
static bool ct__fold_check_ndim(const char *op, const ct_tensor *t, int want, const char *msg)
{
    bool ok = t->ndim == want || t->ndim == want - 1;
    for (int d = t->ndim == want ? 1 : 0; ok && d < t->ndim; d++) {
        ok = t->sizes[d] != 0;
    }
    if (!ok) {
        char s[96];
        ct__shape_str(t->sizes, t->ndim, s, sizeof s);
        ct__fail(CT_ERR_SHAPE, op, "%s, but got: %s", msg, s);
    }
    return ok;
}

/* The geometry of im2col over t (conv view input (N, C, spatial), or unbatched) and a. */
static ct__conv_geom ct__fold_geom(const ct__fold_args *a, int64_t n, int64_t c,
                                   const int64_t *in)
{
    ct__conv_geom g;
    ct__conv_geom_spatial(&g, a->dims, a->k, in, a->s, a->p, a->dl);
    g.n = n;
    g.c = c;
    g.d = c;
    g.g = 1;
    return g;
}

/* Inputs: self (N, C, spatial) or (C, spatial); attrs: kernel_size, dilation, padding,
   stride. Output (N, C KK, L). */
static bool ct__im2col_meta(ct_op_call *c)
{
    static const int order[4] = {0, 1, 2, 3};
    const ct_tensor *x = c->inputs[0];
    ct__fold_args a = ct__fold_args_of(c, 0);
    if (!ct__fold_check_args(c->fn, &a, order)) {
        return false;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size "
             "and other non-zero dimensions for input", a.dims + 1, a.dims + 2);
    if (!ct__fold_check_ndim(c->fn, x, a.dims + 2, msg)) {
        return false;
    }
    const int64_t *in = x->sizes + x->ndim - a.dims;
    int64_t blocks[3], L = 1;
    ct__fold_blocks(&a, in, blocks);
    bool bad = false;
    for (int d = 0; d < a.dims; d++) {
        bad = bad || blocks[d] < 1;
        L *= blocks[d];
    }
    if (bad) {
        char si[64], sb[64], sa[320];
        ct__conv_join(in, a.dims, ", ", si, sizeof si);
        ct__conv_join(blocks, a.dims, ", ", sb, sizeof sb);
        ct__fold_args_str(&a, false, sa, sizeof sa);
        ct__fail(CT_ERR_SHAPE, c->fn, "Given input with spatial size (%s), %s, calculated shape "
                 "of the array of sliding blocks as (%s), but its components must be at least "
                 "one.", si, sa, sb);
        return false;
    }
    int64_t kk = 1, sizes[3];
    for (int d = 0; d < a.dims; d++) {
        kk *= a.k[d];
    }
    int nd = 0;
    if (x->ndim == a.dims + 2) {
        sizes[nd++] = x->sizes[0];
    }
    sizes[nd++] = x->sizes[x->ndim - a.dims - 1] * kk;
    sizes[nd++] = L;
    c->dtype = x->dtype;
    return ct__op_output(c, sizes, nd, x->dtype) != NULL;
}

/* Inputs: self (N, C KK, L) or (C KK, L); attrs: output_size, kernel_size, dilation, padding,
   stride. Output (N, C, output_size). */
static bool ct__col2im_meta(ct_op_call *c)
{
    static const int order[4] = {0, 3, 1, 2};
    const ct_tensor *x = c->inputs[0];
    ct__fold_args a = ct__fold_args_of(c, 1);
    const int64_t *out = c->attrs[0].ints;
    if (!ct__fold_check_args(c->fn, &a, order) ||
        !ct__fold_check_ndim(c->fn, x, 3, "Expected 2D or 3D (batch mode) tensor for input with "
                             "possibly 0 batch size and non-zero dimensions for input")) {
        return false;
    }
    int64_t kk = 1, blocks[3], L = 1, planes = x->sizes[x->ndim - 2];
    char sk[64], sa[320], so[64], sb[64];
    ct__conv_join(a.k, a.dims, ", ", sk, sizeof sk);
    for (int d = 0; d < a.dims; d++) {
        kk *= a.k[d];
    }
    if (planes % kk != 0) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Expected size of input's dimension 1 to be divisible by "
                 "the product of kernel_size, but got input.size(1)=%lld and kernel_size=(%s).",
                 (long long)planes, sk);
        return false;
    }
    ct__fold_blocks(&a, out, blocks);
    bool bad = false;
    for (int d = 0; d < a.dims; d++) {
        L *= blocks[d];
        bad = bad || blocks[d] < 1;
    }
    ct__fold_args_str(&a, true, sa, sizeof sa);
    ct__conv_join(out, a.dims, ", ", so, sizeof so);
    ct__conv_join(blocks, a.dims, " * ", sb, sizeof sb);
    if (x->sizes[x->ndim - 1] != L) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Given output_size=(%s), %s, expected size of input's "
                 "dimension 2 to match the calculated number of sliding blocks %s = %lld, but got "
                 "input.size(2)=%lld.", so, sa, sb, (long long)L,
                 (long long)x->sizes[x->ndim - 1]);
        return false;
    }
    if (bad) {
        ct__conv_join(blocks, a.dims, ", ", sb, sizeof sb);
        ct__fail(CT_ERR_SHAPE, c->fn, "Given output_size=(%s), %s, calculated shape of the array "
                 "of sliding blocks as (%s), which is too small (non-positive)", so, sa, sb);
        return false;
    }
    int64_t sizes[5];
    int nd = 0;
    if (x->ndim == 3) {
        sizes[nd++] = x->sizes[0];
    }
    sizes[nd++] = planes / kk;
    for (int d = 0; d < a.dims; d++) {
        sizes[nd++] = out[d];
    }
    c->dtype = x->dtype;
    return ct__op_output(c, sizes, nd, x->dtype) != NULL;
}

/* im2col (trans false: inputs[0] is the image) or col2im (true: inputs[0] is col), per image. */
static ct_status ct__fold_run(ct_op_call *c, bool trans)
{
    const ct_tensor *x = c->inputs[0], *img = trans ? c->outputs[0] : x;
    ct__fold_args a = ct__fold_args_of(c, trans ? 1 : 0);
    bool batched = img->ndim == a.dims + 2;
    ct__conv_job j;
    memset(&j, 0, sizeof j);
    j.g = ct__fold_geom(&a, batched ? img->sizes[0] : 1, img->sizes[batched ? 1 : 0],
                        img->sizes + img->ndim - a.dims);
    j.trans = trans;
    void *own = NULL;
    if (trans) {
        j.dy = ct__conv_dense(c->fn, x, 1, &own);
        j.dx = ct__data(c->outputs[0]);
    } else {
        j.x = ct__data(x);
        j.xv = ct__conv_view_of(x, a.dims);
        j.y = ct__data(c->outputs[0]);
    }
    bool f32 = c->dtype == CT_FLOAT32;
    bool ok = (!trans || j.dy) &&
              ct__conv_run(c->fn, &j, j.g.n, ct_dtype_size(c->dtype), 0,
                           f32 ? ct__conv_fold_task_f32 : ct__conv_fold_task_f64);
    ct__free(own);
    return ok ? CT_OK : ct_error_code();
}

static ct_status ct__im2col_kernel(ct_op_call *c)
{
    return ct__fold_run(c, false);
}

static ct_status ct__col2im_kernel(ct_op_call *c)
{
    return ct__fold_run(c, true);
}

/* The node's integers: the args with the image's spatial size (im2col's input, col2im's
   output_size) in size, as bytes. */
typedef char ct__fold_args_fit[sizeof(ct__fold_args) <= sizeof(((ct_node *)0)->i) ? 1 : -1];

static void ct__fold_record(ct_node *n, const ct_op_call *c)
{
    bool col2im = c->n_attrs == 5;
    ct__fold_args a = ct__fold_args_of(c, col2im ? 1 : 0);
    const ct_tensor *img = col2im ? c->outputs[0] : c->inputs[0];
    memcpy(a.size, img->sizes + img->ndim - a.dims, sizeof(int64_t) * (size_t)a.dims);
    memcpy(n->i, &a, sizeof a);
}

static ct_tensor *ct__im2col(const char *fn, const ct_tensor *x, const ct__fold_args *a);
static ct_tensor *ct__col2im(const char *fn, const ct_tensor *x, const ct__fold_args *a);

/* im2col and col2im are each other's adjoint. */
static void ct__im2col_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__fold_args a;
    memcpy(&a, n->i, sizeof a);
    gi[0] = ct__col2im("ct_backward", g, &a);
}

static void ct__col2im_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct__fold_args a;
    memcpy(&a, n->i, sizeof a);
    gi[0] = ct__im2col("ct_backward", g, &a);
}

static const ct_op ct__op_im2col = {
    "aten::im2col", "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
    "int[2] stride) -> Tensor", "ct_unfold", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL,
    ct__im2col_meta, CT__K_FLOAT(ct__im2col_kernel), NULL, "Im2ColBackward0",
    ct__im2col_backward, 0u, ct__fold_record, NULL};

static const ct_op ct__op_col2im = {
    "aten::col2im",
    "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] "
    "padding, int[2] stride) -> Tensor",
    "ct_fold", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 0u, NULL, ct__col2im_meta,
    CT__K_FLOAT(ct__col2im_kernel), NULL, "Col2ImBackward0", ct__col2im_backward, 0u,
    ct__fold_record, NULL};

/* Appends a's kernel_size, dilation, padding, stride to a call. */
static void ct__fold_call_args(ct_op_call *c, const ct__fold_args *a)
{
    ct__call_ints(c, a->k, a->dims);
    ct__call_ints(c, a->dl, a->dims);
    ct__call_ints(c, a->p, a->dims);
    ct__call_ints(c, a->s, a->dims);
}

static ct_tensor *ct__im2col(const char *fn, const ct_tensor *x, const ct__fold_args *a)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_im2col, fn, &x, 1);
    ct__fold_call_args(&c, a);
    return ct__dispatch(&c);
}

/* col2im to the spatial size a->size. */
static ct_tensor *ct__col2im(const char *fn, const ct_tensor *x, const ct__fold_args *a)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_col2im, fn, &x, 1);
    ct__call_ints(&c, a->size, a->dims);
    ct__fold_call_args(&c, a);
    return ct__dispatch(&c);
}

/* ---- convolution's autograd ---------------------------------------------------------------- */
/* The node's integers: the args as bytes, then the bias size (-1: none) in the last. */
typedef char ct__conv_args_fit[sizeof(ct__conv_args) < sizeof(((ct_node *)0)->i) ? 1 : -1];
enum { CT__CONV_BIAS_SLOT = (int)(sizeof(((ct_node *)0)->i) / sizeof(int64_t)) - 1 };

static void ct__conv_record(ct_node *n, const ct_op_call *c)
{
    ct__conv_args a = ct__conv_args_of(c, 0);
    memcpy(n->i, &a, sizeof a);
    n->i[CT__CONV_BIAS_SLOT] = c->inputs[2] ? c->inputs[2]->sizes[0] : -1;
    ct__save(n, c->inputs[0]);
    ct__save(n, c->inputs[1]);
}

static ct_tensor *ct__conv_dispatch(const char *fn, const ct_tensor *const *in,
                                    const ct__conv_args *a);

/* grad input with differentiable ops: the convolution with `transposed` flipped, cut to x's
   size where output_padding made the transposed op's output longer than its conv's input. */
static ct_tensor *ct__conv_grad_input(const ct__conv_args *a, const ct_tensor *g,
                                      const ct_tensor *x, const ct_tensor *w)
{
    ct__conv_args b = *a;
    b.transposed = !a->transposed;
    for (int d = 0; d < a->dims; d++) { /* the transposed op's size must reach x's */
        int64_t k = w->sizes[2 + d], want = x->sizes[x->ndim - a->dims + d];
        int64_t got = ct__conv_transposed_size(&b, d, g->sizes[g->ndim - a->dims + d], k);
        b.output_padding[d] = a->transposed ? 0 : want - got;
    }
    const ct_tensor *in[3] = {g, w, NULL};
    ct_tensor *r = ct__conv_dispatch("ct_backward", in, &b);
    for (int d = 0; r && d < a->dims; d++) {
        int64_t dim = x->ndim - a->dims + d;
        r = r->sizes[dim] > x->sizes[dim] ? ct_narrow(r, dim, 0, x->sizes[dim]) : r;
    }
    return r;
}

/* grad weight with differentiable ops: per group, the sum over images of the conv view's
   output grad (Dg, OUT) times im2col of its input (Kg, OUT) transposed. */
static ct_tensor *ct__conv_grad_weight(const ct__conv_args *a, const ct_tensor *g,
                                       const ct_tensor *x, const ct_tensor *w)
{
    const ct_tensor *cx = a->transposed ? g : x, *cdy = a->transposed ? x : g;
    ct__fold_args f;
    memset(&f, 0, sizeof f);
    f.dims = a->dims;
    for (int d = 0; d < a->dims; d++) {
        f.k[d] = w->sizes[2 + d];
        f.dl[d] = a->dilation[d];
        f.p[d] = a->padding[d];
        f.s[d] = a->stride[d];
    }
    bool batched = cx->ndim == a->dims + 2;
    ct_tensor *cols = ct__im2col("ct_backward", batched ? cx : ct_unsqueeze(cx, 0), &f);
    int64_t n = batched ? cx->sizes[0] : 1, blocks[3], sh[5] = {n, 0, 0, 0, 0};
    int64_t cs[4] = {n, a->groups, -1, 1};
    const int64_t *want = cdy->sizes + cdy->ndim - a->dims;
    bool cut = false; /* output_padding >= stride: the conv view reads fewer blocks */
    ct__fold_blocks(&f, cx->sizes + cx->ndim - a->dims, blocks);
    for (int d = 0; d < a->dims; d++) {
        sh[2 + d] = blocks[d];
        cut = cut || blocks[d] != want[d];
        cs[3] *= want[d];
    }
    sh[1] = cols ? cols->sizes[1] : 0;
    cols = cut ? ct_reshape(cols, sh, 2 + a->dims) : cols;
    for (int d = 0; cut && d < a->dims; d++) {
        cols = ct_narrow(cols, 2 + d, 0, want[d]);
    }
    ct_tensor *dy = ct_reshape(cdy, cs, 4);
    ct_tensor *prod = ct_matmul(dy, ct_transpose(ct_reshape(cols, cs, 4), -1, -2));
    return ct_reshape(ct_sum_dim(prod, 0, false), w->sizes, w->ndim);
}

/* The gradients of a convolution written with differentiable ops (create_graph). */
static void ct__conv_backward_graph(const ct__conv_args *a, const ct_tensor *g,
                                    const ct_tensor *x, const ct_tensor *w, const int64_t *mask,
                                    ct_tensor **gi)
{
    gi[0] = mask[0] ? ct__conv_grad_input(a, g, x, w) : NULL;
    gi[1] = mask[1] ? ct__conv_grad_weight(a, g, x, w) : NULL;
    if (mask[2]) {
        int64_t dims[4], nd = 0;
        for (int64_t d = 0; d < g->ndim; d++) {
            if (d != g->ndim - a->dims - 1) {
                dims[nd++] = d;
            }
        }
        gi[2] = ct_sum_dims(g, dims, (int)nd, false);
    }
}

/* Gradients of input, weight and bias: aten::convolution_backward's fused kernel, or under
   create_graph (double backward) the same gradients from differentiable ops. */
static void ct__conv_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *w = ct__saved(n, 1);
    if (!x || !w) {
        return;
    }
    ct__conv_args a;
    memcpy(&a, n->i, sizeof a);
    int64_t bias_sizes = n->i[CT__CONV_BIAS_SLOT];
    int64_t mask[3] = {ct__needs_grad(n, 0), ct__needs_grad(n, 1),
                       n->n_next > 2 && ct__needs_grad(n, 2)};
    if (ct_is_grad_enabled()) {
        ct__conv_backward_graph(&a, g, x, w, mask, gi);
        return;
    }
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
    "ct_conv1d ct_conv2d ct_conv3d ct_conv_transpose1d ct_conv_transpose2d ct_conv_transpose3d",
    CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 1u << 2, NULL, ct__conv_meta, CT__K_FLOAT(ct__conv_kernel),
    NULL, "ConvolutionBackward0", ct__conv_backward, 0u, ct__conv_record, ct__conv_flops};

/* aten::convolution on in = {input, weight, bias or NULL}. */
static ct_tensor *ct__conv_dispatch(const char *fn, const ct_tensor *const *in,
                                    const ct__conv_args *a)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_convolution, fn, in, 3);
    ct__conv_call_args(&c, a);
    return ct__dispatch(&c);
}

/* ---- public functions ------------------------------------------------------------------ */
ct_conv_opts ct_conv_defaults(void)
{
    ct_conv_opts o;
    memset(&o, 0, sizeof o);
    for (int d = 0; d < 3; d++) {
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
    for (int d = 0; d < 3; d++) {
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

/* The public names of the convolutions: [transposed][dims - 1]. */
static const char *const ct__conv_fns[2][3] = {
    {"ct_conv1d", "ct_conv2d", "ct_conv3d"},
    {"ct_conv_transpose1d", "ct_conv_transpose2d", "ct_conv_transpose3d"}};

static ct_tensor *ct__conv(int dims, bool transposed, const ct_tensor *x, const ct_tensor *w,
                           const ct_tensor *bias, const ct_conv_opts *opts)
{
    const char *fn = ct__conv_fns[transposed][dims - 1], *name = fn + 3;
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
    int64_t extra[3];
    if (!ct__conv_resolve(fn, name, w, &o, dims, transposed, &a, extra)) {
        return NULL;
    }
    if (w->ndim != dims + 2) {
        ct__fail(CT_ERR_SHAPE, fn, "Expected %d-dimensional weight for %s, but got weight of "
                 "%d dimensions", dims + 2, name, w->ndim);
        return NULL;
    }
    const ct_tensor *in[3] = {x, w, bias};
    bool pad = extra[0] != 0 || extra[1] != 0 || extra[2] != 0;
    if (pad) {
        ct_scope_begin();
        in[0] = ct__conv_pad_right(x, dims, extra);
    }
    ct_tensor *r = in[0] ? ct__conv_dispatch(fn, in, &a) : NULL;
    if (pad) {
        r = ct_keep(r);
        ct_scope_end();
    }
    return r;
}

ct_tensor *ct_conv1d(const ct_tensor *input, const ct_tensor *weight, const ct_tensor *bias,
                     const ct_conv_opts *opts)
{
    return ct__conv(1, false, input, weight, bias, opts);
}

ct_tensor *ct_conv2d(const ct_tensor *input, const ct_tensor *weight, const ct_tensor *bias,
                     const ct_conv_opts *opts)
{
    return ct__conv(2, false, input, weight, bias, opts);
}

ct_tensor *ct_conv3d(const ct_tensor *input, const ct_tensor *weight, const ct_tensor *bias,
                     const ct_conv_opts *opts)
{
    return ct__conv(3, false, input, weight, bias, opts);
}

ct_tensor *ct_conv_transpose1d(const ct_tensor *input, const ct_tensor *weight,
                               const ct_tensor *bias, const ct_conv_opts *opts)
{
    return ct__conv(1, true, input, weight, bias, opts);
}

ct_tensor *ct_conv_transpose2d(const ct_tensor *input, const ct_tensor *weight,
                               const ct_tensor *bias, const ct_conv_opts *opts)
{
    return ct__conv(2, true, input, weight, bias, opts);
}

ct_tensor *ct_conv_transpose3d(const ct_tensor *input, const ct_tensor *weight,
                               const ct_tensor *bias, const ct_conv_opts *opts)
{
    return ct__conv(3, true, input, weight, bias, opts);
}

/* ---- F.unfold / F.fold ------------------------------------------------------------------- */
ct_fold_opts ct_fold_defaults(void)
{
    ct_fold_opts o;
    for (int d = 0; d < 2; d++) {
        o.dilation[d] = 1;
        o.padding[d] = 0;
        o.stride[d] = 1;
    }
    return o;
}

/* The 2-D sliding-block args from kernel_size, output_size (fold) and opts. */
static ct__fold_args ct__fold_args_from(const int64_t *kernel_size, const int64_t *output_size,
                                        const ct_fold_opts *opts)
{
    ct_fold_opts o = opts ? *opts : ct_fold_defaults();
    ct__fold_args a;
    memset(&a, 0, sizeof a);
    a.dims = 2;
    for (int d = 0; d < 2; d++) {
        a.k[d] = kernel_size[d];
        a.dl[d] = o.dilation[d];
        a.p[d] = o.padding[d];
        a.s[d] = o.stride[d];
        a.size[d] = output_size ? output_size[d] : 0;
    }
    return a;
}

ct_tensor *ct_unfold(const ct_tensor *input, const int64_t *kernel_size, const ct_fold_opts *opts)
{
    if (ct__null("ct_unfold", kernel_size)) {
        return NULL;
    }
    ct__fold_args a = ct__fold_args_from(kernel_size, NULL, opts);
    return ct__im2col("ct_unfold", input, &a);
}

ct_tensor *ct_fold(const ct_tensor *input, const int64_t *output_size, const int64_t *kernel_size,
                   const ct_fold_opts *opts)
{
    if (ct__null("ct_fold", output_size) || ct__null("ct_fold", kernel_size)) {
        return NULL;
    }
    ct__fold_args a = ct__fold_args_from(kernel_size, output_size, opts);
    return ct__col2im("ct_fold", input, &a);
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
    static const char *const names[2][3] = {{"Conv1d", "Conv2d", "Conv3d"},
                                            {"ConvTranspose1d", "ConvTranspose2d",
                                             "ConvTranspose3d"}};
    return names[transposed][dims - 1];
}

/* PyTorch's _conv_forward: a padding_mode other than zeros pads with F.pad (the padding, or
   'same''s left/right split) and convolves without padding. */
static ct_tensor *ct__conv_module_forward(ct_module *m, const ct_tensor *x)
{
    static const ct_pad_mode modes[4] = {CT_PAD_CONSTANT, CT_PAD_REFLECT, CT_PAD_REPLICATE,
                                         CT_PAD_CIRCULAR};
    const ct__conv_module *s = (const ct__conv_module *)ct_module_user(m);
    const ct_tensor *w = ct_module_get_parameter(m, "weight");
    if (s->o.padding_mode == CT_CONV_PADDING_MODE_ZEROS) {
        return ct__conv(s->dims, s->transposed, x, w, ct_module_get_parameter(m, "bias"), &s->o);
    }
    ct_conv_opts o = s->o;
    int64_t pad[6];
    for (int d = 0; d < s->dims; d++) { /* (left, right) of the last dim first */
        int64_t total = o.dilation[d] * (w->sizes[2 + d] - 1);
        int64_t left = o.padding_type == CT_CONV_PADDING_SAME ? total / 2
                       : o.padding_type == CT_CONV_PADDING_VALID ? 0 : o.padding[d];
        int64_t right = o.padding_type == CT_CONV_PADDING_SAME ? total - left : left;
        pad[2 * (s->dims - 1 - d)] = left;
        pad[2 * (s->dims - 1 - d) + 1] = right;
        o.padding[d] = 0;
    }
    o.padding_type = CT_CONV_PADDING_EXPLICIT;
    ct_scope_begin();
    ct_tensor *p = ct_pad(x, pad, 2 * s->dims, modes[s->o.padding_mode], 0.0);
    ct_tensor *r = ct_keep(ct__conv(s->dims, false, p, w, ct_module_get_parameter(m, "bias"), &o));
    ct_scope_end();
    return r;
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
    if (o->groups <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "groups must be a positive integer");
        return false;
    }
    bool bad = cin <= 0 || cout <= 0;
    for (int d = 0; d < dims; d++) {
        bad = bad || k[d] <= 0;
    }
    if (bad) {
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
        ct__fail(CT_ERR_VALUE, fn, "Only \"zeros\" padding mode is supported for %s",
                 ct__conv_module_name(dims, transposed));
        return false;
    }
    if (!ct__check_enum(fn, "padding", (int)o->padding_type, 3)) {
        return false;
    }
    if (transposed && o->padding_type != CT_CONV_PADDING_EXPLICIT) {
        ct__fail(CT_ERR_VALUE, fn, "%s(): argument 'padding' must be tuple of ints, not str",
                 ct__conv_fns[1][dims - 1] + 3);
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
    int64_t ws[5] = {transposed ? cin : cout, (transposed ? cout : cin) / o.groups, k[0], k[1],
                     k[2]};
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

ct_module *ct_conv1d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                         const ct_conv_opts *opts)
{
    int64_t k[3] = {kernel_size, 1, 1};
    return ct__conv_module_new("ct_conv1d_new", 1, false, in_channels, out_channels, k, opts);
}

ct_module *ct_conv2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                         int64_t kernel_w, const ct_conv_opts *opts)
{
    int64_t k[3] = {kernel_h, kernel_w, 1};
    return ct__conv_module_new("ct_conv2d_new", 2, false, in_channels, out_channels, k, opts);
}

ct_module *ct_conv3d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_d,
                         int64_t kernel_h, int64_t kernel_w, const ct_conv_opts *opts)
{
    int64_t k[3] = {kernel_d, kernel_h, kernel_w};
    return ct__conv_module_new("ct_conv3d_new", 3, false, in_channels, out_channels, k, opts);
}

ct_module *ct_conv_transpose2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                                   int64_t kernel_w, const ct_conv_opts *opts)
{
    int64_t k[3] = {kernel_h, kernel_w, 1};
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

ct_tensor *ct_conv3d_forward(ct_module *m, const ct_tensor *input)
{
    return ct__conv_typed_forward("ct_conv3d_forward", 3, false, m, input);
}

ct_tensor *ct_conv_transpose2d_forward(ct_module *m, const ct_tensor *input)
{
    return ct__conv_typed_forward("ct_conv_transpose2d_forward", 2, true, m, input);
}
CT__GLUE_END
