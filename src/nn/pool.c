/* nn/pool.c - max, average and adaptive pooling: kernels, descriptors, public functions and
 * modules.
 *
 * Legend: P = N * C planes of the contiguous input, each (H, W); output planes (OH, OW);
 * x / y the input / output plane, g / gx the output's / input's gradient. Output position
 * (oh, ow) reads the window rows hs[oh], hs[oh] + dh, ... below he[oh] and the columns
 * ws[ow] .. we[ow] step dw (tables per axis, ct__pool_axis); hc / wc are the axes' factors of
 * an average's divisor. Each plane is computed by one thread in a fixed order.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "state_dict.h"
#include "module.h"
#include "pool.h"
#include "../ops/index.h"
#include "../ops/reduce.h"
#include "../ops/view.h"
#include "../autograd/autograd.h"

#include <math.h>
#include <string.h>


/* The pooling kinds (a descriptor's variant). */
enum { CT__POOL_MAX, CT__POOL_AVG, CT__POOL_ADAPTIVE_AVG, CT__POOL_ADAPTIVE_MAX };

/* The geometry of a call as ints, the layout of the node's i[] too: kernel (2), stride (2),
   padding (2), dilation (2), ceil_mode, count_include_pad, divisor_override, output (2). */
enum { CT__PG_K = 0, CT__PG_S = 2, CT__PG_P = 4, CT__PG_D = 6, CT__PG_CEIL = 8, CT__PG_CIP = 9,
       CT__PG_DIV = 10, CT__PG_OUT = 11, CT__PG_N = 13 };

typedef struct ct__pool_job {
    const char *x, *g;
    char *y, *gx;
    int64_t *idx;
    int64_t H, W, OH, OW, dh, dw, divisor;
    const int64_t *hs, *he, *hc, *ws, *we, *wc;
    bool seq_div; /* adaptive average: sum / kh / kw, as PyTorch */
    bool fast2x2; /* max, 2x2 windows at stride 2, no padding or dilation, all inside */
} ct__pool_job;

/* ---- kernels ------------------------------------------------------------------------- */
CT__VECTORIZE_BEGIN
#define CT__POOL_KERNELS(T, S)                                                                  \
    /* one output row of 2x2 windows: rows r0, r0 + W from column 0, index base of r0 */      \
    static void ct__pool_max2x2_##S(const T *r0, int64_t W, T *y, int64_t *ix, int64_t OW,     \
                                    int64_t base)                                              \
    {                                                                                          \
        const T *r1 = r0 + W;                                                                  \
        for (int64_t ow = 0; ow < OW; ow++) {                                                  \
            T m = r0[2 * ow], v = r0[2 * ow + 1];                                              \
            int64_t k = 0;                                                                     \
            if (v > m || v != v) {                                                             \
                m = v;                                                                         \
                k = 1;                                                                         \
            }                                                                                  \
            v = r1[2 * ow];                                                                    \
            if (v > m || v != v) {                                                             \
                m = v;                                                                         \
                k = W;                                                                         \
            }                                                                                  \
            v = r1[2 * ow + 1];                                                                \
            if (v > m || v != v) {                                                             \
                m = v;                                                                         \
                k = W + 1;                                                                     \
            }                                                                                  \
            y[ow] = m;                                                                         \
            ix[ow] = base + 2 * ow + k;                                                        \
        }                                                                                      \
    }                                                                                          \
    /* planes [b, e): y = the window's maximum (NaN wins), idx its h * W + w */              \
    static void ct__pool_max_##S(int64_t b, int64_t e, void *ctx)                              \
    {                                                                                          \
        const ct__pool_job *j = (const ct__pool_job *)ctx;                                     \
        int64_t W = j->W, OH = j->OH, OW = j->OW;                                              \
        for (int64_t p = b; p < e; p++) {                                                      \
            const T *x = (const T *)j->x + p * j->H * W;                                       \
            T *y = (T *)j->y + p * OH * OW;                                                    \
            int64_t *ix = j->idx + p * OH * OW;                                                \
            for (int64_t oh = 0; oh < OH; oh++, y += OW, ix += OW) {                           \
                if (j->fast2x2) {                                                              \
                    ct__pool_max2x2_##S(x + 2 * oh * W, W, y, ix, OW, 2 * oh * W);             \
                    continue;                                                                  \
                }                                                                              \
                for (int64_t ow = 0; ow < OW; ow++) {                                          \
                    int64_t mi = j->hs[oh] * W + j->ws[ow];                                    \
                    T mv = -(T)INFINITY;                                                       \
                    for (int64_t h = j->hs[oh]; h < j->he[oh]; h += j->dh) {                   \
                        for (int64_t w = j->ws[ow]; w < j->we[ow]; w += j->dw) {               \
                            T v = x[h * W + w];                                                \
                            if (v > mv || v != v) {                                            \
                                mv = v;                                                        \
                                mi = h * W + w;                                                \
                            }                                                                  \
                        }                                                                      \
                    }                                                                          \
                    y[ow] = mv;                                                                \
                    ix[ow] = mi;                                                               \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    /* v over the divisor of output (oh, ow) */                                              \
    static inline T ct__pool_div_##S(const ct__pool_job *j, T v, int64_t oh, int64_t ow)       \
    {                                                                                          \
        if (j->seq_div) {                                                                      \
            return v / (T)j->hc[oh] / (T)j->wc[ow];                                            \
        }                                                                                      \
        return v / (T)(j->divisor ? j->divisor : j->hc[oh] * j->wc[ow]);                       \
    }                                                                                          \
    /* planes [b, e): y = the window's sum over its divisor (0 for an empty window) */        \
    static void ct__pool_avg_##S(int64_t b, int64_t e, void *ctx)                              \
    {                                                                                          \
        const ct__pool_job *j = (const ct__pool_job *)ctx;                                     \
        int64_t W = j->W, OH = j->OH, OW = j->OW;                                              \
        for (int64_t p = b; p < e; p++) {                                                      \
            const T *x = (const T *)j->x + p * j->H * W;                                       \
            T *y = (T *)j->y + p * OH * OW;                                                    \
            for (int64_t oh = 0; oh < OH; oh++) {                                              \
                for (int64_t ow = 0; ow < OW; ow++) {                                          \
                    T sum = 0;                                                                 \
                    for (int64_t h = j->hs[oh]; h < j->he[oh]; h++) {                          \
                        for (int64_t w = j->ws[ow]; w < j->we[ow]; w++) {                      \
                            sum += x[h * W + w];                                               \
                        }                                                                      \
                    }                                                                          \
                    bool empty = j->he[oh] <= j->hs[oh] || j->we[ow] <= j->ws[ow];             \
                    y[oh * OW + ow] = empty ? (T)0 : ct__pool_div_##S(j, sum, oh, ow);         \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    /* planes [b, e): gx = each output's gradient over its divisor, spread over its window */ \
    static void ct__pool_avg_bw_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                          \
        const ct__pool_job *j = (const ct__pool_job *)ctx;                                     \
        int64_t W = j->W, OH = j->OH, OW = j->OW;                                              \
        for (int64_t p = b; p < e; p++) {                                                      \
            const T *g = (const T *)j->g + p * OH * OW;                                        \
            T *gx = (T *)j->gx + p * j->H * W;                                                 \
            memset(gx, 0, sizeof(T) * (size_t)(j->H * W));                                    \
            for (int64_t oh = 0; oh < OH; oh++) {                                              \
                for (int64_t ow = 0; ow < OW; ow++) {                                          \
                    T delta = ct__pool_div_##S(j, g[oh * OW + ow], oh, ow);                    \
                    for (int64_t h = j->hs[oh]; h < j->he[oh]; h++) {                          \
                        for (int64_t w = j->ws[ow]; w < j->we[ow]; w++) {                      \
                            gx[h * W + w] += delta;                                            \
                        }                                                                      \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    /* planes [b, e): gx[idx] += g, in output order */                                        \
    static void ct__pool_max_bw_##S(int64_t b, int64_t e, void *ctx)                           \
    {                                                                                          \
        const ct__pool_job *j = (const ct__pool_job *)ctx;                                     \
        int64_t HW = j->H * j->W, O = j->OH * j->OW;                                           \
        for (int64_t p = b; p < e; p++) {                                                      \
            const T *g = (const T *)j->g + p * O;                                              \
            const int64_t *ix = j->idx + p * O;                                                \
            T *gx = (T *)j->gx + p * HW;                                                       \
            memset(gx, 0, sizeof(T) * (size_t)HW);                                             \
            for (int64_t o = 0; o < O; o++) {                                                  \
                gx[ix[o]] += g[o];                                                             \
            }                                                                                  \
        }                                                                                      \
    }
CT__POOL_KERNELS(float, f32)
CT__POOL_KERNELS(double, f64)
#undef CT__POOL_KERNELS
CT__VECTORIZE_END

/* The windows of axis a (input size n) into st, en, cnt for each output position. */
static void ct__pool_axis(int kind, const int64_t *gi, int a, int64_t n, int64_t *st,
                          int64_t *en, int64_t *cnt)
{
    int64_t out = gi[CT__PG_OUT + a], k = gi[CT__PG_K + a], s = gi[CT__PG_S + a];
    int64_t p = gi[CT__PG_P + a], d = gi[CT__PG_D + a];
    for (int64_t o = 0; o < out; o++) {
        if (kind == CT__POOL_ADAPTIVE_AVG || kind == CT__POOL_ADAPTIVE_MAX) {
            st[o] = o * n / out; /* [floor(o * n / out), ceil((o + 1) * n / out)) */
            en[o] = ((o + 1) * n + out - 1) / out;
            cnt[o] = en[o] - st[o];
        } else if (kind == CT__POOL_MAX) {
            int64_t s0 = o * s - p;
            en[o] = s0 + (k - 1) * d + 1 < n ? s0 + (k - 1) * d + 1 : n;
            while (s0 < 0) {
                s0 += d;
            }
            st[o] = s0;
            cnt[o] = 1;
        } else {
            int64_t s0 = o * s - p, e0 = s0 + k < n + p ? s0 + k : n + p;
            st[o] = s0 > 0 ? s0 : 0;
            en[o] = e0 < n ? e0 : n;
            cnt[o] = gi[CT__PG_CIP] ? e0 - s0 : en[o] - st[o];
        }
    }
}

/* The job over self's planes for the geometry gi (c->state); *tables must be freed. */
static bool ct__pool_job_init(ct_op_call *c, const ct_tensor *self, ct__pool_job *j,
                              int64_t **tables)
{
    const int64_t *gi = (const int64_t *)c->state;
    int kind = c->op->variant, nd = self->ndim;
    memset(j, 0, sizeof *j);
    j->H = self->sizes[nd - 2];
    j->W = self->sizes[nd - 1];
    j->OH = gi[CT__PG_OUT];
    j->OW = gi[CT__PG_OUT + 1];
    int64_t *t = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(3 * (j->OH + j->OW) + 1));
    if (!t) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        return false;
    }
    ct__pool_axis(kind, gi, 0, j->H, t, t + j->OH, t + 2 * j->OH);
    int64_t *tw = t + 3 * j->OH;
    ct__pool_axis(kind, gi, 1, j->W, tw, tw + j->OW, tw + 2 * j->OW);
    j->hs = t;
    j->he = t + j->OH;
    j->hc = t + 2 * j->OH;
    j->ws = tw;
    j->we = tw + j->OW;
    j->wc = tw + 2 * j->OW;
    bool max = kind == CT__POOL_MAX;
    j->dh = max ? gi[CT__PG_D] : 1;
    j->dw = max ? gi[CT__PG_D + 1] : 1;
    j->divisor = kind == CT__POOL_AVG ? gi[CT__PG_DIV] : 0;
    j->seq_div = kind == CT__POOL_ADAPTIVE_AVG;
    j->fast2x2 = max && gi[CT__PG_K] == 2 && gi[CT__PG_K + 1] == 2 && gi[CT__PG_S] == 2 &&
                 gi[CT__PG_S + 1] == 2 && !gi[CT__PG_P] && !gi[CT__PG_P + 1] &&
                 j->dh == 1 && j->dw == 1 && 2 * j->OH <= j->H && 2 * j->OW <= j->W;
    *tables = t;
    return true;
}

/* t itself when contiguous, else a contiguous copy (a reference either way). */
static ct_tensor *ct__pool_contig(const char *fn, const ct_tensor *t)
{
    if (ct_is_contiguous(t)) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *x = ct__tensor_new(fn, t->sizes, t->ndim, t->dtype);
    if (x) {
        ct__copy_kernel(x, t);
    }
    return x;
}

/* Runs fn over the planes of self (P = numel / (H * W)) in chunks of about CT__GRAIN. */
static void ct__pool_planes(const ct_tensor *self, ct__pool_job *j,
                            void (*fn)(int64_t, int64_t, void *))
{
    int64_t per = j->H * j->W + j->OH * j->OW + 1;
    int64_t hw = j->H * j->W, planes = hw > 0 ? ct_numel(self) / hw : 0;
    ct__parallel_for(planes, CT__GRAIN / per + 1, fn, j);
}

/* Forward: input self -> outputs (values, and indices for max). */
static ct_status ct__pool_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[0];
    ct__pool_job j;
    int64_t *tables;
    if (!ct__pool_job_init(c, self, &j, &tables)) {
        return ct_error_code();
    }
    ct_tensor *x = ct__pool_contig(c->fn, self);
    if (!x) {
        ct__free(tables);
        return ct_error_code();
    }
    bool f32 = c->dtype == CT_FLOAT32, max = c->n_outputs > 1;
    j.x = ct__data(x);
    j.y = ct__data(c->outputs[0]);
    j.idx = max ? (int64_t *)(void *)ct__data(c->outputs[1]) : NULL;
    ct__pool_planes(self, &j, max ? (f32 ? ct__pool_max_f32 : ct__pool_max_f64)
                                  : (f32 ? ct__pool_avg_f32 : ct__pool_avg_f64));
    ct__release(x);
    ct__free(tables);
    return CT_OK;
}

/* Backward: inputs grad_output, self (and indices for max) -> the gradient of self. */
static ct_status ct__pool_bw_kernel(ct_op_call *c)
{
    const ct_tensor *self = c->inputs[1];
    ct__pool_job j;
    int64_t *tables;
    if (!ct__pool_job_init(c, self, &j, &tables)) {
        return ct_error_code();
    }
    bool f32 = c->dtype == CT_FLOAT32, max = c->n_inputs > 2;
    ct_tensor *g = ct__pool_contig(c->fn, c->inputs[0]);
    ct_tensor *ix = max && g ? ct__pool_contig(c->fn, c->inputs[2]) : NULL;
    if (g && (ix || !max)) {
        j.g = ct__data(g);
        j.gx = ct__data(c->outputs[0]);
        j.idx = ix ? (int64_t *)(void *)ct__data(ix) : NULL;
        ct__pool_planes(self, &j, max ? (f32 ? ct__pool_max_bw_f32 : ct__pool_max_bw_f64)
                                      : (f32 ? ct__pool_avg_bw_f32 : ct__pool_avg_bw_f64));
    }
    ct__release(g);
    ct__release(ix);
    ct__free(tables);
    return g && (ix || !max) ? CT_OK : ct_error_code();
}

/* ---- meta ------------------------------------------------------------------------------ */
/* Reads the schema's attributes into the geometry ints gi (c->state). */
static void ct__pool_read_attrs(const ct_op_call *c, int64_t *gi)
{
    int kind = c->op->variant;
    memset(gi, 0, sizeof(int64_t) * CT__PG_N);
    gi[CT__PG_D] = gi[CT__PG_D + 1] = 1;
    if (kind == CT__POOL_MAX || kind == CT__POOL_AVG) {
        for (int a = 0; a < 2; a++) {
            gi[CT__PG_K + a] = c->attrs[0].ints[a];
            gi[CT__PG_S + a] = c->attrs[1].ints[a];
            gi[CT__PG_P + a] = c->attrs[2].ints[a];
        }
    }
    if (kind == CT__POOL_MAX) {
        gi[CT__PG_D] = c->attrs[3].ints[0];
        gi[CT__PG_D + 1] = c->attrs[3].ints[1];
        gi[CT__PG_CEIL] = c->attrs[4].i;
    } else if (kind == CT__POOL_AVG) {
        gi[CT__PG_CEIL] = c->attrs[3].i;
        gi[CT__PG_CIP] = c->attrs[4].i;
        gi[CT__PG_DIV] = c->attrs[5].i;
    } else if (c->n_attrs) {
        gi[CT__PG_OUT] = c->attrs[0].ints[0];
        gi[CT__PG_OUT + 1] = c->attrs[0].ints[1];
    }
}

/* PyTorch's pooling_output_shape with its checks: the output size of one axis. */
static bool ct__pool_out_size(const char *fn, int64_t n, const int64_t *gi, int a, int64_t *out)
{
    int64_t k = gi[CT__PG_K + a], s = gi[CT__PG_S + a], p = gi[CT__PG_P + a];
    int64_t d = gi[CT__PG_D + a];
    if (s == 0) {
        ct__fail(CT_ERR_VALUE, fn, "stride should not be zero");
        return false;
    }
    if (p < 0) {
        ct__fail(CT_ERR_VALUE, fn, "pad must be non-negative, but got pad: %lld", (long long)p);
        return false;
    }
    if (p > ((k - 1) * d + 1) / 2) {
        ct__fail(CT_ERR_VALUE, fn, "pad should be at most half of effective kernel size, but got "
                 "pad=%lld, kernel_size=%lld and dilation=%lld", (long long)p, (long long)k,
                 (long long)d);
        return false;
    }
    int64_t num = n + 2 * p - d * (k - 1) - 1 + (gi[CT__PG_CEIL] ? s - 1 : 0);
    int64_t q = num / s - ((num % s != 0) && ((num < 0) != (s < 0)));
    *out = q + 1;
    if (gi[CT__PG_CEIL] && q * s >= n + p) {
        --*out;
    }
    return true;
}

/* PyTorch's pool2d_shape_check of input t (3-D or 4-D... or more for avg_pool2d). */
static bool ct__pool_shape_check(const char *fn, const ct_tensor *t, const int64_t *gi)
{
    const int64_t *k = gi + CT__PG_K, *s = gi + CT__PG_S, *p = gi + CT__PG_P, *d = gi + CT__PG_D;
    const int64_t *o = gi + CT__PG_OUT, *sz = t->sizes;
    int nd = t->ndim;
    char buf[128];
    if (k[0] <= 0 || k[1] <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "kernel size should be greater than zero, but got kH: %lld "
                 "kW: %lld", (long long)k[0], (long long)k[1]);
        return false;
    }
    if (s[0] <= 0 || s[1] <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "stride should be greater than zero, but got dH: %lld dW: "
                 "%lld", (long long)s[0], (long long)s[1]);
        return false;
    }
    if (d[0] <= 0 || d[1] <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "dilation should be greater than zero, but got dilationH: "
                 "%lld dilationW: %lld", (long long)d[0], (long long)d[1]);
        return false;
    }
    bool valid = sz[1] != 0 && sz[2] != 0;
    if (!((nd == 3 && sz[0] != 0 && valid) || (nd == 4 && valid && sz[3] != 0))) {
        ct__fail(CT_ERR_SHAPE, fn, "Expected 3D or 4D (batch mode) tensor with optional 0 dim "
                 "batch size for input, but got:%s", ct__shape_str(sz, nd, buf, sizeof buf));
        return false;
    }
    if (k[1] / 2 < p[1] || k[0] / 2 < p[0]) {
        ct__fail(CT_ERR_VALUE, fn, "pad should be smaller than or equal to half of kernel size, "
                 "but got padW = %lld, padH = %lld, kW = %lld, kH = %lld", (long long)p[1],
                 (long long)p[0], (long long)k[1], (long long)k[0]);
        return false;
    }
    if (o[0] < 1 || o[1] < 1) {
        ct__fail(CT_ERR_SHAPE, fn, "Given input size: (%lldx%lldx%lld). Calculated output size: "
                 "(%lldx%lldx%lld). Output size is too small", (long long)sz[nd - 3],
                 (long long)sz[nd - 2], (long long)sz[nd - 1], (long long)sz[nd - 3],
                 (long long)o[0], (long long)o[1]);
        return false;
    }
    return true;
}

/* The outputs: t's leading dims, then the output size; values in t's dtype, and the int64
   indices when indices. */
static bool ct__pool_outputs(ct_op_call *c, const ct_tensor *t, const int64_t *gi, bool indices)
{
    int64_t s[CT_MAX_DIMS];
    memcpy(s, t->sizes, sizeof s);
    s[t->ndim - 2] = gi[CT__PG_OUT];
    s[t->ndim - 1] = gi[CT__PG_OUT + 1];
    c->dtype = t->dtype;
    return ct__op_output(c, s, t->ndim, t->dtype) &&
           (!indices || ct__op_output(c, s, t->ndim, CT_INT64));
}

/* max_pool2d_with_indices and avg_pool2d (PyTorch's meta: output sizes, then the checks). */
static bool ct__pool_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t *gi = (int64_t *)c->state;
    bool max = c->op->variant == CT__POOL_MAX;
    ct__pool_read_attrs(c, gi);
    if (max && t->ndim != 3 && t->ndim != 4) {
        ct__fail(CT_ERR_SHAPE, c->fn, "non-empty 3D or 4D (batch mode) tensor expected for input");
        return false;
    }
    if (t->ndim < 3) {
        return ct__wrap_dim(c->fn, -3, t->ndim) >= 0;
    }
    return ct__pool_out_size(c->fn, t->sizes[t->ndim - 2], gi, 0, &gi[CT__PG_OUT]) &&
           ct__pool_out_size(c->fn, t->sizes[t->ndim - 1], gi, 1, &gi[CT__PG_OUT + 1]) &&
           ct__pool_shape_check(c->fn, t, gi) && ct__pool_outputs(c, t, gi, max);
}

/* _adaptive_avg_pool2d and adaptive_max_pool2d. */
static bool ct__adaptive_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t *gi = (int64_t *)c->state;
    bool max = c->op->variant == CT__POOL_ADAPTIVE_MAX;
    const char *name = max ? "adaptive_max_pool2d" : "adaptive_avg_pool2d";
    char buf[128];
    ct__pool_read_attrs(c, gi);
    if (t->ndim != 3 && t->ndim != 4) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s(): Expected 3D or 4D tensor, but got%s %s", name,
                 max ? ":" : "", ct__shape_str(t->sizes, t->ndim, buf, sizeof buf));
        return false;
    }
    for (int d = max ? 1 : t->ndim - 2; d < t->ndim; d++) {
        if (t->sizes[d] == 0) {
            ct__fail(CT_ERR_SHAPE, c->fn, "%s(): Expected input to have non-zero size for "
                     "non-batch dimensions, but input has sizes %s with dimension %d being empty",
                     name, ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), d);
            return false;
        }
    }
    if (gi[CT__PG_OUT] < 0 || gi[CT__PG_OUT + 1] < 0) {
        int64_t s[CT_MAX_DIMS];
        memcpy(s, t->sizes, sizeof s);
        s[t->ndim - 2] = gi[CT__PG_OUT];
        s[t->ndim - 1] = gi[CT__PG_OUT + 1];
        ct__fail(CT_ERR_VALUE, c->fn, "Trying to create tensor with negative dimension %lld: %s",
                 (long long)(s[t->ndim - 2] < 0 ? s[t->ndim - 2] : s[t->ndim - 1]),
                 ct__shape_str(s, t->ndim, buf, sizeof buf));
        return false;
    }
    return ct__pool_outputs(c, t, gi, max);
}

/* The backward ops: grad_output (the forward's output shape), self -> self's shape. */
static bool ct__pool_bw_meta(ct_op_call *c)
{
    const ct_tensor *go = c->inputs[0], *self = c->inputs[1];
    int64_t *gi = (int64_t *)c->state;
    int kind = c->op->variant, nd = self->ndim;
    ct__pool_read_attrs(c, gi);
    bool ok = go->ndim == nd && nd >= 2;
    if (ok && (kind == CT__POOL_MAX || kind == CT__POOL_AVG)) {
        ok = ct__pool_out_size(c->fn, self->sizes[nd - 2], gi, 0, &gi[CT__PG_OUT]) &&
             ct__pool_out_size(c->fn, self->sizes[nd - 1], gi, 1, &gi[CT__PG_OUT + 1]);
    } else if (ok) {
        gi[CT__PG_OUT] = go->sizes[nd - 2];
        gi[CT__PG_OUT + 1] = go->sizes[nd - 1];
    }
    for (int d = 0; ok && d < nd; d++) {
        ok = go->sizes[d] == (d < nd - 2 ? self->sizes[d] : gi[CT__PG_OUT + d - (nd - 2)]);
    }
    if (!ok) {
        char b1[128], b2[128];
        ct__fail(CT_ERR_SHAPE, c->fn, "grad_output of shape %s does not match the pooling of "
                 "input %s", ct__shape_str(go->sizes, go->ndim, b1, sizeof b1),
                 ct__shape_str(self->sizes, nd, b2, sizeof b2));
        return false;
    }
    c->dtype = go->dtype;
    return ct__op_output(c, self->sizes, nd, go->dtype) != NULL;
}

/* ---- autograd ---------------------------------------------------------------------------- */
static ct_tensor *ct__pool_call(int kind, const char *fn, const ct_tensor *x, const int64_t *gi,
                                ct_tensor **indices);
static ct_tensor *ct__pool_bw_call(int kind, const ct_tensor *g, const ct_tensor *self,
                                   const ct_tensor *indices, const int64_t *gi);

/* Saves self, the indices (max) and the geometry ints. */
static void ct__pool_record(ct_node *n, const ct_op_call *c)
{
    memcpy(n->i, c->state, sizeof(int64_t) * CT__PG_N);
    ct__save(n, c->inputs[0]);
    ct__save(n, c->n_outputs > 1 ? c->outputs[1] : NULL); /* no history */
}

/* The backward ops' own derivative: linear in grad_output (PyTorch's formulas): the forward
   pooling of the gradient's gradient for averages, its values at the indices for maxima. */
static void ct__pool_bw_record(ct_node *n, const ct_op_call *c)
{
    memcpy(n->i, c->state, sizeof(int64_t) * CT__PG_N);
    ct__save(n, c->n_inputs > 2 ? c->inputs[2] : NULL);
}

static void ct__max_bw_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    if (ct__needs_grad(n, 0) && ix) {
        ct_tensor *v = ct_gather(ct_flatten(gg, -2, -1), -1, ct_flatten(ix, -2, -1));
        gi[0] = ct_view_as(v, ix);
    }
}

static void ct__avg_bw_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__pool_call(CT__POOL_AVG, "ct_avg_pool2d_backward", gg, n->i, NULL);
    }
}

static void ct__adaptive_avg_bw_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__pool_call(CT__POOL_ADAPTIVE_AVG, "ct_adaptive_avg_pool2d_backward", gg,
                              n->i, NULL);
    }
}

#define CT__POOL_OP(NAME, OP, SCHEMA, API, VARIANT, META, KERNEL, NODE, BW, RECORD)            \
    static const ct_op NAME = {OP, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VARIANT, 0u,   \
                               NULL, META, CT__K_FLOAT(KERNEL), NULL, NODE, BW, 0u, RECORD,    \
                               NULL};
CT__POOL_OP(ct__op_max_pool2d_bw, "aten::max_pool2d_with_indices_backward",
            "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] "
            "kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor "
            "indices) -> Tensor", "ct_backward (max_pool2d)", CT__POOL_MAX,
            ct__pool_bw_meta, ct__pool_bw_kernel, "MaxPool2DWithIndicesBackwardBackward0",
            ct__max_bw_backward, ct__pool_bw_record)
CT__POOL_OP(ct__op_avg_pool2d_bw, "aten::avg_pool2d_backward", "avg_pool2d_backward(Tensor "
            "grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool "
            "ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor", "ct_backward (avg_pool2d)", CT__POOL_AVG,
            ct__pool_bw_meta, ct__pool_bw_kernel, "AvgPool2DBackwardBackward0",
            ct__avg_bw_backward, ct__pool_bw_record)
CT__POOL_OP(ct__op_adaptive_avg_pool2d_bw, "aten::_adaptive_avg_pool2d_backward",
            "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor", "ct_backward (adaptive_avg_pool2d)",
            CT__POOL_ADAPTIVE_AVG, ct__pool_bw_meta, ct__pool_bw_kernel,
            "AdaptiveAvgPool2DBackwardBackward0", ct__adaptive_avg_bw_backward,
            ct__pool_bw_record)
CT__POOL_OP(ct__op_adaptive_max_pool2d_bw, "aten::adaptive_max_pool2d_backward",
            "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> "
            "Tensor", "ct_backward (adaptive_max_pool2d)",
            CT__POOL_ADAPTIVE_MAX, ct__pool_bw_meta, ct__pool_bw_kernel,
            "AdaptiveMaxPool2DBackwardBackward0", ct__max_bw_backward, ct__pool_bw_record)

#define CT__POOL_BACKWARD(FN, KIND)                                                             \
    static void FN(ct_node *n, const ct_tensor *g, ct_tensor **gi)                             \
    {                                                                                          \
        gi[0] = ct__pool_bw_call(KIND, g, ct__saved(n, 0), ct__saved(n, 1), n->i);             \
    }
CT__POOL_BACKWARD(ct__max_pool2d_backward, CT__POOL_MAX)
CT__POOL_BACKWARD(ct__avg_pool2d_backward, CT__POOL_AVG)
CT__POOL_BACKWARD(ct__adaptive_avg_pool2d_backward, CT__POOL_ADAPTIVE_AVG)
CT__POOL_BACKWARD(ct__adaptive_max_pool2d_backward, CT__POOL_ADAPTIVE_MAX)
#undef CT__POOL_BACKWARD

CT__POOL_OP(ct__op_max_pool2d, "aten::max_pool2d_with_indices", "max_pool2d_with_indices("
            "Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] "
            "dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)", "ct_max_pool2d ct_max_pool2d_with_indices "
            "ct_max_pool1d", CT__POOL_MAX, ct__pool_meta, ct__pool_kernel,
            "MaxPool2DWithIndicesBackward0", ct__max_pool2d_backward, ct__pool_record)
CT__POOL_OP(ct__op_avg_pool2d, "aten::avg_pool2d", "avg_pool2d(Tensor self, int[2] "
            "kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool "
            "count_include_pad=True, int? divisor_override=None) -> Tensor", "ct_avg_pool2d ct_avg_pool1d", CT__POOL_AVG,
            ct__pool_meta, ct__pool_kernel, "AvgPool2DBackward0", ct__avg_pool2d_backward,
            ct__pool_record)
CT__POOL_OP(ct__op_adaptive_avg_pool2d_impl, "aten::_adaptive_avg_pool2d",
            "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", "ct_adaptive_avg_pool2d "
            "ct_adaptive_avg_pool1d", CT__POOL_ADAPTIVE_AVG, ct__adaptive_meta, ct__pool_kernel,
            "AdaptiveAvgPool2DBackward0", ct__adaptive_avg_pool2d_backward, ct__pool_record)
CT__POOL_OP(ct__op_adaptive_max_pool2d, "aten::adaptive_max_pool2d",
            "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", "ct_adaptive_max_pool2d",
            CT__POOL_ADAPTIVE_MAX, ct__adaptive_meta, ct__pool_kernel,
            "AdaptiveMaxPool2DBackward0", ct__adaptive_max_pool2d_backward, ct__pool_record)
#undef CT__POOL_OP

static const ct_op *const ct__pool_fwd_ops[4] = {&ct__op_max_pool2d, &ct__op_avg_pool2d,
                                                  &ct__op_adaptive_avg_pool2d_impl,
                                                  &ct__op_adaptive_max_pool2d};
static const ct_op *const ct__pool_bw_ops[4] = {&ct__op_max_pool2d_bw, &ct__op_avg_pool2d_bw,
                                                 &ct__op_adaptive_avg_pool2d_bw,
                                                 &ct__op_adaptive_max_pool2d_bw};

/* Appends the schema's attributes of a kind from the geometry ints gi. */
static void ct__pool_attrs(ct_op_call *c, int kind, const int64_t *gi, bool backward)
{
    if (kind == CT__POOL_MAX || kind == CT__POOL_AVG) {
        ct__call_ints(c, gi + CT__PG_K, 2);
        ct__call_ints(c, gi + CT__PG_S, 2);
        ct__call_ints(c, gi + CT__PG_P, 2);
        if (kind == CT__POOL_MAX) {
            ct__call_ints(c, gi + CT__PG_D, 2);
            ct__call_i(c, gi[CT__PG_CEIL]);
        } else {
            ct__call_i(c, gi[CT__PG_CEIL]);
            ct__call_i(c, gi[CT__PG_CIP]);
            ct__call_i(c, gi[CT__PG_DIV]);
        }
    } else if (!backward) {
        ct__call_ints(c, gi + CT__PG_OUT, 2);
    }
}

/* The forward op of kind on x; *indices (if indices) receives max's indices. */
static ct_tensor *ct__pool_call(int kind, const char *fn, const ct_tensor *x, const int64_t *gi,
                                ct_tensor **indices)
{
    const ct_tensor *in[1] = {x};
    int64_t geom[CT__PG_N];
    ct_op_call c;
    ct__call_init(&c, ct__pool_fwd_ops[kind], fn, in, 1);
    c.state = geom;
    ct__pool_attrs(&c, kind, gi, false);
    ct_tensor *y = ct__dispatch(&c);
    if (indices) {
        *indices = y ? c.outputs[1] : NULL;
    } else if (y && c.n_outputs > 1) {
        ct_free(c.outputs[1]);
    }
    return y;
}

/* The backward op of kind: the gradient of self from the output's gradient g. */
static ct_tensor *ct__pool_bw_call(int kind, const ct_tensor *g, const ct_tensor *self,
                                   const ct_tensor *indices, const int64_t *gi)
{
    bool max = kind == CT__POOL_MAX || kind == CT__POOL_ADAPTIVE_MAX;
    if (!self || (max && !indices)) {
        return NULL; /* ct__saved recorded the error */
    }
    const ct_tensor *in[3] = {g, self, indices};
    int64_t geom[CT__PG_N];
    ct_op_call c;
    ct__call_init(&c, ct__pool_bw_ops[kind], "ct_backward", in, max ? 3 : 2);
    c.state = geom;
    ct__pool_attrs(&c, kind, gi, true);
    return ct__dispatch(&c);
}

/* ---- the 1-D ops and adaptive_avg_pool2d: composites ------------------------------------ */
/* max_pool1d's checks (PyTorch's check_max_pool1d); attributes as its schema. */
static bool ct__max_pool1d_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const char *fn = c->fn;
    int64_t k = c->attrs[0].ints[0], s = c->attrs[1].ints[0], p = c->attrs[2].ints[0];
    int64_t d = c->attrs[3].ints[0];
    char buf[128];
    if (!((t->ndim == 2 && t->sizes[0] && t->sizes[1]) ||
          (t->ndim == 3 && t->sizes[1] && t->sizes[2]))) {
        ct__fail(CT_ERR_SHAPE, fn, "max_pool1d: Expected 2D or 3D (batch mode) tensor with "
                 "optional 0 dim batch size for input, but got:%s",
                 ct__shape_str(t->sizes, t->ndim, buf, sizeof buf));
        return false;
    }
    const char *what = k <= 0 ? "kernel_size must be greater than zero"
                       : s <= 0 ? "stride must be greater than zero"
                       : p < 0 ? "padding must be non-negative" : NULL;
    if (what) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() %s, but got %lld", what,
                 (long long)(k <= 0 ? k : s <= 0 ? s : p));
        return false;
    }
    if (p > k / 2) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() padding should be at most half of kernel size, "
                 "but got padding=%lld and kernel_size=%lld", (long long)p, (long long)k);
        return false;
    }
    if (d <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() dilation must be greater than zero, but got %lld",
                 (long long)d);
        return false;
    }
    int64_t gi[CT__PG_N] = {0};
    gi[CT__PG_K] = k;
    gi[CT__PG_S] = s;
    gi[CT__PG_P] = p;
    gi[CT__PG_D] = d;
    gi[CT__PG_CEIL] = c->attrs[4].i;
    int64_t ow = 0;
    if (!ct__pool_out_size(fn, t->sizes[t->ndim - 1], gi, 0, &ow)) {
        return false;
    }
    if (ow <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "max_pool1d() Invalid computed output size: %lld",
                 (long long)ow);
        return false;
    }
    return true;
}

/* avg_pool1d / adaptive_avg_pool1d: PyTorch's checkDimRange(2, 4). */
static bool ct__pool1d_meta(ct_op_call *c)
{
    if (c->inputs[0]->ndim < 2 || c->inputs[0]->ndim > 3) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Expected 2 to 3 dimensions, but got %d-dimensional tensor "
                 "for argument #1 'self' (while checking arguments for %s)", c->inputs[0]->ndim,
                 c->op->variant == CT__POOL_AVG ? "avg_pool1d" : "adaptive_avg_pool1d");
        return false;
    }
    return true;
}

/* adaptive_avg_pool2d: PyTorch's output-size check. */
static bool ct__adaptive_avg_meta(ct_op_call *c)
{
    const int64_t *o = c->attrs[0].ints;
    if (o[0] < 0 || o[1] < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "adaptive_avg_pool2d: elements of output_size must be "
                 "greater than or equal to 0 but received {%lld, %lld}", (long long)o[0],
                 (long long)o[1]);
        return false;
    }
    return true;
}

/* Output (1, 1): the mean over H and W, as PyTorch; else _adaptive_avg_pool2d. */
static ct_tensor *ct__adaptive_avg(const char *fn, const ct_tensor *x, const int64_t *out)
{
    if (out[0] == 1 && out[1] == 1) {
        return ct_unsqueeze(ct_mean_dim(ct_flatten(x, -2, -1), -1, true), -1);
    }
    int64_t gi[CT__PG_N] = {0};
    gi[CT__PG_OUT] = out[0];
    gi[CT__PG_OUT + 1] = out[1];
    return ct__pool_call(CT__POOL_ADAPTIVE_AVG, fn, x, gi, NULL);
}

static ct_status ct__adaptive_avg_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct__adaptive_avg(c->fn, c->inputs[0], c->attrs[0].ints));
}

#define CT__POOL_COMPOSITE(NAME, OP, SCHEMA, API, VARIANT, META, FN)                            \
    static const ct_op NAME = {OP, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VARIANT, 0u,   \
                               NULL, META, CT__K_NONE, FN, NULL, NULL, 0u, NULL, NULL};
CT__POOL_COMPOSITE(ct__op_adaptive_avg_pool2d, "aten::adaptive_avg_pool2d",
                   "adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                   "ct_adaptive_avg_pool2d ct_adaptive_avg_pool1d", CT__POOL_ADAPTIVE_AVG,
                   ct__adaptive_avg_meta, ct__adaptive_avg_composite)

/* adaptive_avg_pool2d of x to out (the public function, and the 1-D one's). */
static ct_tensor *ct__adaptive_avg_call(const char *fn, const ct_tensor *x, const int64_t *out)
{
    const ct_tensor *in[1] = {x};
    ct_op_call c;
    ct__call_init(&c, &ct__op_adaptive_avg_pool2d, fn, in, 1);
    ct__call_ints(&c, out, 2);
    return ct__dispatch(&c);
}

/* The 1-D ops on input unsqueezed at -2, as 2-D ops with a unit height. */
static ct_status ct__pool1d_composite(ct_op_call *c)
{
    int kind = c->op->variant;
    ct_scope_begin();
    ct_tensor *x = ct_unsqueeze(c->inputs[0], -2), *y;
    if (kind == CT__POOL_ADAPTIVE_AVG) {
        int64_t out[2] = {1, c->attrs[0].ints[0]};
        y = ct__adaptive_avg_call(c->fn, x, out);
    } else {
        int64_t gi[CT__PG_N] = {0};
        gi[CT__PG_K] = gi[CT__PG_S] = gi[CT__PG_D] = gi[CT__PG_D + 1] = 1;
        gi[CT__PG_K + 1] = c->attrs[0].ints[0];
        gi[CT__PG_S + 1] = c->attrs[1].ints[0];
        gi[CT__PG_P + 1] = c->attrs[2].ints[0];
        if (kind == CT__POOL_MAX) {
            gi[CT__PG_D + 1] = c->attrs[3].ints[0];
            gi[CT__PG_CEIL] = c->attrs[4].i;
        } else {
            gi[CT__PG_CEIL] = c->attrs[3].i;
            gi[CT__PG_CIP] = c->attrs[4].i;
        }
        y = ct__pool_call(kind, c->fn, x, gi, NULL);
    }
    return ct__composite_end(c, ct_squeeze_dim(y, -2));
}

CT__POOL_COMPOSITE(ct__op_max_pool1d, "aten::max_pool1d", "max_pool1d(Tensor self, int[1] "
                   "kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool "
                   "ceil_mode=False) -> Tensor", "ct_max_pool1d", CT__POOL_MAX,
                   ct__max_pool1d_meta, ct__pool1d_composite)
CT__POOL_COMPOSITE(ct__op_avg_pool1d, "aten::avg_pool1d", "avg_pool1d(Tensor self, int[1] "
                   "kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool "
                   "count_include_pad=True) -> Tensor", "ct_avg_pool1d", CT__POOL_AVG,
                   ct__pool1d_meta, ct__pool1d_composite)
CT__POOL_COMPOSITE(ct__op_adaptive_avg_pool1d, "aten::adaptive_avg_pool1d",
                   "adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
                   "ct_adaptive_avg_pool1d", CT__POOL_ADAPTIVE_AVG, ct__pool1d_meta,
                   ct__pool1d_composite)
#undef CT__POOL_COMPOSITE

CT__GLUE_BEGIN
/* ---- public functions --------------------------------------------------------------------- */
ct_max_pool2d_opts ct_max_pool2d_defaults(void)
{
    ct_max_pool2d_opts o;
    memset(&o, 0, sizeof o);
    o.dilation[0] = o.dilation[1] = 1;
    return o;
}

ct_avg_pool2d_opts ct_avg_pool2d_defaults(void)
{
    ct_avg_pool2d_opts o;
    memset(&o, 0, sizeof o);
    o.count_include_pad = true;
    return o;
}

/* The geometry ints of a 2-D max (mo) or average (ao) pooling; stride {0, 0}: the kernel. */
static void ct__pool_geom(const int64_t *k, const ct_max_pool2d_opts *mo,
                          const ct_avg_pool2d_opts *ao, int64_t *gi)
{
    const int64_t *s = mo ? mo->stride : ao->stride, *p = mo ? mo->padding : ao->padding;
    bool none = s[0] == 0 && s[1] == 0;
    memset(gi, 0, sizeof(int64_t) * CT__PG_N);
    for (int a = 0; a < 2; a++) {
        gi[CT__PG_K + a] = k[a];
        gi[CT__PG_S + a] = none ? k[a] : s[a];
        gi[CT__PG_P + a] = p[a];
        gi[CT__PG_D + a] = mo ? mo->dilation[a] : 1;
    }
    gi[CT__PG_CEIL] = mo ? mo->ceil_mode : ao->ceil_mode;
    gi[CT__PG_CIP] = ao && ao->count_include_pad;
    gi[CT__PG_DIV] = ao ? ao->divisor_override : 0;
}

ct_status ct_max_pool2d_with_indices(const ct_tensor *input, const int64_t *kernel_size,
                                     const ct_max_pool2d_opts *opts, ct_tensor **output,
                                     ct_tensor **indices)
{
    const char *fn = "ct_max_pool2d_with_indices";
    ct_tensor *ix = NULL, *y = NULL;
    if (!ct__null(fn, kernel_size)) {
        ct_max_pool2d_opts o = opts ? *opts : ct_max_pool2d_defaults();
        int64_t gi[CT__PG_N];
        ct__pool_geom(kernel_size, &o, NULL, gi);
        y = ct__pool_call(CT__POOL_MAX, fn, input, gi, &ix);
    }
    if (output) {
        *output = y;
    } else {
        ct_free(y);
    }
    if (indices) {
        *indices = ix;
    } else {
        ct_free(ix);
    }
    return y ? CT_OK : ct_error_code();
}

ct_tensor *ct_max_pool2d(const ct_tensor *input, const int64_t *kernel_size,
                         const ct_max_pool2d_opts *opts)
{
    if (ct__null("ct_max_pool2d", kernel_size)) {
        return NULL;
    }
    ct_max_pool2d_opts o = opts ? *opts : ct_max_pool2d_defaults();
    int64_t gi[CT__PG_N];
    ct__pool_geom(kernel_size, &o, NULL, gi);
    return ct__pool_call(CT__POOL_MAX, "ct_max_pool2d", input, gi, NULL);
}

ct_tensor *ct_avg_pool2d(const ct_tensor *input, const int64_t *kernel_size,
                         const ct_avg_pool2d_opts *opts)
{
    if (ct__null("ct_avg_pool2d", kernel_size)) {
        return NULL;
    }
    ct_avg_pool2d_opts o = opts ? *opts : ct_avg_pool2d_defaults();
    int64_t gi[CT__PG_N];
    ct__pool_geom(kernel_size, NULL, &o, gi);
    return ct__pool_call(CT__POOL_AVG, "ct_avg_pool2d", input, gi, NULL);
}

ct_tensor *ct_adaptive_avg_pool2d(const ct_tensor *input, const int64_t *output_size)
{
    const char *fn = "ct_adaptive_avg_pool2d";
    return ct__null(fn, output_size) ? NULL : ct__adaptive_avg_call(fn, input, output_size);
}

ct_tensor *ct_adaptive_max_pool2d(const ct_tensor *input, const int64_t *output_size,
                                  ct_tensor **indices)
{
    const char *fn = "ct_adaptive_max_pool2d";
    if (indices) {
        *indices = NULL;
    }
    if (ct__null(fn, output_size)) {
        return NULL;
    }
    int64_t gi[CT__PG_N] = {0};
    gi[CT__PG_OUT] = output_size[0];
    gi[CT__PG_OUT + 1] = output_size[1];
    return ct__pool_call(CT__POOL_ADAPTIVE_MAX, fn, input, gi, indices);
}

/* A 1-D op's call: kernel (or output size), then stride, padding, dilation, flags as its
   schema (stride 0: the kernel). */
static ct_tensor *ct__pool1d_call(const ct_op *op, const char *fn, const ct_tensor *input,
                                  const int64_t *v, int n_ints, const int64_t *flags, int n_flags)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    for (int k = 0; k < n_ints; k++) {
        ct__call_ints(&c, v + k, 1);
    }
    for (int k = 0; k < n_flags; k++) {
        ct__call_i(&c, flags[k]);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_max_pool1d(const ct_tensor *input, int64_t kernel_size,
                         const ct_max_pool2d_opts *opts)
{
    ct_max_pool2d_opts o = opts ? *opts : ct_max_pool2d_defaults();
    int64_t v[4] = {kernel_size, o.stride[0] ? o.stride[0] : kernel_size, o.padding[0],
                    o.dilation[0]};
    int64_t flags[1] = {o.ceil_mode};
    return ct__pool1d_call(&ct__op_max_pool1d, "ct_max_pool1d", input, v, 4, flags, 1);
}

ct_tensor *ct_avg_pool1d(const ct_tensor *input, int64_t kernel_size,
                         const ct_avg_pool2d_opts *opts)
{
    ct_avg_pool2d_opts o = opts ? *opts : ct_avg_pool2d_defaults();
    int64_t v[3] = {kernel_size, o.stride[0] ? o.stride[0] : kernel_size, o.padding[0]};
    int64_t flags[2] = {o.ceil_mode, o.count_include_pad};
    return ct__pool1d_call(&ct__op_avg_pool1d, "ct_avg_pool1d", input, v, 3, flags, 2);
}

ct_tensor *ct_adaptive_avg_pool1d(const ct_tensor *input, int64_t output_size)
{
    return ct__pool1d_call(&ct__op_adaptive_avg_pool1d, "ct_adaptive_avg_pool1d", input,
                           &output_size, 1, NULL, 0);
}

/* ---- modules ------------------------------------------------------------------------------ */
typedef struct ct__pool_module {
    int64_t size[2]; /* kernel_size, or the adaptive output size */
    ct_max_pool2d_opts max;
    ct_avg_pool2d_opts avg;
} ct__pool_module;

static ct_tensor *ct__max_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_max_pool2d(x, p->size, &p->max);
}

static ct_tensor *ct__avg_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_avg_pool2d(x, p->size, &p->avg);
}

static ct_tensor *ct__adaptive_avg_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    return ct_adaptive_avg_pool2d(x, ((const ct__pool_module *)ct_module_user(m))->size);
}

static ct_tensor *ct__max_pool1d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_max_pool1d(x, p->size[0], &p->max);
}

static ct_tensor *ct__avg_pool1d_forward(ct_module *m, const ct_tensor *x)
{
    const ct__pool_module *p = (const ct__pool_module *)ct_module_user(m);
    return ct_avg_pool1d(x, p->size[0], &p->avg);
}

static ct_tensor *ct__adaptive_max_pool2d_forward(ct_module *m, const ct_tensor *x)
{
    return ct_adaptive_max_pool2d(x, ((const ct__pool_module *)ct_module_user(m))->size, NULL);
}

/* A pooling module named name: sizes (n of them; NULL: CT_ERR_NULL_ARG) and options. */
static ct_module *ct__pool_module_new(const char *name, ct_module_forward_fn forward,
                                      const int64_t *size, int n, const ct_max_pool2d_opts *mo,
                                      const ct_avg_pool2d_opts *ao)
{
    if (ct__null(name, size)) {
        return NULL;
    }
    ct__pool_module *p = (ct__pool_module *)ct__calloc(sizeof *p);
    if (!p) {
        ct__fail(CT_ERR_OOM, name, "out of memory");
        return NULL;
    }
    p->size[0] = size[0];
    p->size[1] = size[n - 1];
    p->max = mo ? *mo : ct_max_pool2d_defaults();
    p->avg = ao ? *ao : ct_avg_pool2d_defaults();
    ct_module *m = ct_module_new(name, forward, p, ct__free);
    if (!m) {
        ct__free(p);
    }
    return m;
}

ct_module *ct_max_pool2d_new(const int64_t *kernel_size, const ct_max_pool2d_opts *opts)
{
    return ct__pool_module_new("MaxPool2d", ct__max_pool2d_forward, kernel_size, 2, opts, NULL);
}

ct_module *ct_avg_pool2d_new(const int64_t *kernel_size, const ct_avg_pool2d_opts *opts)
{
    return ct__pool_module_new("AvgPool2d", ct__avg_pool2d_forward, kernel_size, 2, NULL, opts);
}

ct_module *ct_adaptive_avg_pool2d_new(const int64_t *output_size)
{
    return ct__pool_module_new("AdaptiveAvgPool2d", ct__adaptive_avg_pool2d_forward,
                               output_size, 2, NULL, NULL);
}

ct_module *ct_max_pool1d_new(int64_t kernel_size, const ct_max_pool2d_opts *opts)
{
    return ct__pool_module_new("MaxPool1d", ct__max_pool1d_forward, &kernel_size, 1, opts, NULL);
}

ct_module *ct_avg_pool1d_new(int64_t kernel_size, const ct_avg_pool2d_opts *opts)
{
    return ct__pool_module_new("AvgPool1d", ct__avg_pool1d_forward, &kernel_size, 1, NULL, opts);
}

ct_module *ct_adaptive_max_pool2d_new(const int64_t *output_size)
{
    return ct__pool_module_new("AdaptiveMaxPool2d", ct__adaptive_max_pool2d_forward,
                               output_size, 2, NULL, NULL);
}
CT__GLUE_END
