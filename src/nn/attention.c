/* nn/attention.c - scaled dot product attention: a fused flash-attention kernel with its own
 * backward, and PyTorch's math composite for dropout.
 *
 * Dimension legend:
 *   N...     batch dims (broadcast over query, key and value), B their product
 *   Hq, H    query heads and key/value heads; G = Hq / H query heads share a key/value head
 *   L, S     query rows and key rows; E the q/k width, Ev the value width
 *   BQ, BK   the query rows and key rows of one block
 * Every operand is read as (N..., heads, rows, cols) through element strides (0 on broadcast
 * dims), so transposed views and broadcast masks cost no copy.
 * Forward (one task per (batch, head, query block)): over key blocks, s = scale q k^T + mask
 * (a GEMM), the online softmax (running row max m and sum l; the output block, kept in the
 * output itself, rescaled by exp(m_old - m_new)), o += p v (a GEMM); finally o /= l and the
 * row's logsumexp m + log(l) is saved. Fully masked rows: o = 0, logsumexp -inf.
 * Backward (one task per (batch, key/value head)): D = rowsum(dO * O); for each query head of
 * the group, key block, query block: p = exp(s - lse), dv += p^T dO, dp = dO v^T,
 * ds = p (dp - D), dq += scale ds k, dk += scale ds^T q (GEMMs). Each output element is written
 * by one task in a fixed order: bit-identical for any thread count. Extra memory: O(BQ BK)
 * per thread plus O(L) rows of statistics.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"
#include "../ops/creation.h"
#include "../ops/reduce.h"
#include "../ops/linalg.h"
#include "../ops/softmax.h"
#include "../autograd/autograd.h"
#include "norm.h"
#include "attention.h"

#include <math.h>
#include <string.h>

#define CT__SDPA_BQ 64
#define CT__SDPA_BK 128

/* An operand as (N..., heads, rows, cols): element strides, 0 on broadcast dims. */
typedef struct ct__sdpa_mat {
    char *data;
    int64_t bs[CT_MAX_DIMS], hs, rs, cs;
} ct__sdpa_mat;

typedef struct ct__sdpa_job {
    int nb;                     /* batch dims */
    int64_t bsz[CT_MAX_DIMS];   /* their sizes */
    int64_t B, Hq, H, L, S, E, Ev;
    bool causal, has_mask, bool_mask;
    double scale;
    ct__sdpa_mat q, k, v, mask, o, lse, go, dq, dk, dv;
    char *scratch; /* per slot: slot_len elements */
    int64_t slot_len;
} ct__sdpa_job;

/* t read as an (nb batch dims, heads, rows, cols) operand, its dims right-aligned. */
static ct__sdpa_mat ct__sdpa_mat_of(const ct_tensor *t, int nb)
{
    ct__sdpa_mat m;
    int64_t st[CT_MAX_DIMS + 3];
    int full = nb + 3;
    for (int d = 0; d < full; d++) {
        int src = d - (full - t->ndim);
        st[d] = src >= 0 && t->sizes[src] != 1 ? t->strides[src] : 0;
    }
    m.data = ct__data(t);
    memcpy(m.bs, st, sizeof(int64_t) * (size_t)nb);
    m.hs = st[nb];
    m.rs = st[nb + 1];
    m.cs = st[nb + 2];
    return m;
}

/* The element offset of batch b, head h in m. */
static int64_t ct__sdpa_off(const ct__sdpa_job *j, const ct__sdpa_mat *m, int64_t b, int64_t h)
{
    int64_t off = h * m->hs;
    for (int d = j->nb - 1; d >= 0; d--) {
        off += (b % j->bsz[d]) * m->bs[d];
        b /= j->bsz[d];
    }
    return off;
}

/* Zeroes rows of cols elements of size es, rs elements apart, from p. */
static void ct__sdpa_zero(void *p, int64_t rows, int64_t rs, int64_t cols, size_t es)
{
    if (rs == cols || rows == 1) {
        memset(p, 0, es * (size_t)(rows * cols));
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        memset((char *)p + es * (size_t)(r * rs), 0, es * (size_t)cols);
    }
}

/* ---- kernels -------------------------------------------------------------------------- */
/* The elementwise loops over one row, vectorized (each in a fixed order). */
#define CT__SDPA_LOOPS(T, SX, FMA)                                                            \
    /* The max and the sum of x[0..n) in 8 lanes. */                                          \
    static T ct__sdpa_max_##SX(const T *x, int64_t n)                                         \
    {                                                                                         \
        T m[8];                                                                               \
        int64_t c = 0;                                                                        \
        for (int u = 0; u < 8; u++) {                                                         \
            m[u] = (T)-INFINITY;                                                              \
        }                                                                                     \
        for (; c + 8 <= n; c += 8) {                                                          \
            for (int u = 0; u < 8; u++) {                                                     \
                m[u] = x[c + u] > m[u] ? x[c + u] : m[u];                                     \
            }                                                                                 \
        }                                                                                     \
        for (; c < n; c++) {                                                                  \
            m[0] = x[c] > m[0] ? x[c] : m[0];                                                 \
        }                                                                                     \
        for (int u = 1; u < 8; u++) {                                                         \
            m[0] = m[u] > m[0] ? m[u] : m[0];                                                 \
        }                                                                                     \
        return m[0];                                                                          \
    }                                                                                         \
    static T ct__sdpa_sum_##SX(const T *x, int64_t n)                                         \
    {                                                                                         \
        T a[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                    \
        int64_t c = 0;                                                                        \
        for (; c + 8 <= n; c += 8) {                                                          \
            for (int u = 0; u < 8; u++) {                                                     \
                a[u] += x[c + u];                                                             \
            }                                                                                 \
        }                                                                                     \
        for (; c < n; c++) {                                                                  \
            a[0] += x[c];                                                                     \
        }                                                                                     \
        return ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));             \
    }                                                                                         \
    /* x[0..n) *= a */                                                                        \
    static void ct__sdpa_scale_##SX(T *x, int64_t n, T a)                                     \
    {                                                                                         \
        for (int64_t c = 0; c < n; c++) {                                                     \
            x[c] *= a;                                                                        \
        }                                                                                     \
    }                                                                                         \
    /* sum of a[e * as] b[e * bs] over e < n, fused multiply-adds in order */                 \
    static T ct__sdpa_dot_##SX(const T *a, int64_t as, const T *b, int64_t bs, int64_t n)     \
    {                                                                                         \
        T acc = 0;                                                                            \
        for (int64_t e = 0; e < n; e++) {                                                     \
            acc = FMA(a[e * as], b[e * bs], acc);                                             \
        }                                                                                     \
        return acc;                                                                           \
    }                                                                                         \
    /* ds = p (dp - d), into dp */                                                            \
    static void ct__sdpa_ds_##SX(const T *p, T *dp, int64_t n, T d)                           \
    {                                                                                         \
        for (int64_t c = 0; c < n; c++) {                                                     \
            dp[c] = p[c] * (dp[c] - d);                                                       \
        }                                                                                     \
    }                                                                                         \
    /* row[c] = -inf from c = from; a bool mask's False -> -inf; a float mask added */        \
    static void ct__sdpa_mask_row_##SX(T *row, int64_t from, int64_t n, const char *mk,       \
                                       int64_t ms, int kind)                                  \
    {                                                                                         \
        for (int64_t c = from; c < n; c++) {                                                  \
            row[c] = (T)-INFINITY;                                                            \
        }                                                                                     \
        if (kind == 1) {                                                                      \
            const bool *m = (const bool *)(const void *)mk;                                   \
            for (int64_t c = 0; c < n; c++) {                                                 \
                row[c] = m[c * ms] ? row[c] : (T)-INFINITY;                                   \
            }                                                                                 \
        } else if (kind == 2) {                                                               \
            const T *m = (const T *)(const void *)mk;                                         \
            for (int64_t c = 0; c < n; c++) {                                                 \
                row[c] += m[c * ms];                                                          \
            }                                                                                 \
        }                                                                                     \
    }

/* The blocked kernels, compiled as glue (their time is in the GEMMs and the row loops
   above). */
#define CT__SDPA_DEFINE(T, SX)                                                                \
    /* s (m, nk) at row stride BK = scale q[i0..] k[k0..]^T, masked: -inf where causal or a   \
       false bool mask hides the key, the float mask added otherwise. */                     \
    static void ct__sdpa_scores_##SX(const ct__sdpa_job *j, int64_t b, int64_t h, int64_t i0, \
                                     int64_t m, int64_t k0, int64_t nk, T *s)                 \
    {                                                                                         \
        const T *q = (const T *)(const void *)j->q.data + ct__sdpa_off(j, &j->q, b, h);       \
        const T *k = (const T *)(const void *)j->k.data +                                     \
                     ct__sdpa_off(j, &j->k, b, h / (j->Hq / j->H));                           \
        ct__gemm_##SX(m, nk, j->E, (T)j->scale, q + i0 * j->q.rs, j->q.rs, j->q.cs,            \
                      k + k0 * j->k.rs, j->k.cs, j->k.rs, (T)0, s, CT__SDPA_BK, 1);            \
        int kind = !j->has_mask ? 0 : j->bool_mask ? 1 : 2;                                   \
        int64_t moff = j->has_mask ? ct__sdpa_off(j, &j->mask, b, h) : 0;                     \
        size_t es = kind == 1 ? sizeof(bool) : sizeof(T);                                     \
        for (int64_t r = 0; r < m; r++) {                                                     \
            int64_t from = j->causal && i0 + r + 1 - k0 < nk ? i0 + r + 1 - k0 : nk;          \
            const char *mk = j->mask.data + (int64_t)es * (moff + (i0 + r) * j->mask.rs +     \
                                                           k0 * j->mask.cs);                  \
            if (from < nk || kind) {                                                          \
                ct__sdpa_mask_row_##SX(s + r * CT__SDPA_BK, from < 0 ? 0 : from, nk, mk,      \
                                       j->mask.cs, kind);                                     \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
                                                                                              \
    /* One (batch, head, query block): the output rows and their logsumexp. */                \
    static void ct__sdpa_fwd_task_##SX(int64_t t, int slot, void *ctx)                        \
    {                                                                                         \
        const ct__sdpa_job *j = (const ct__sdpa_job *)ctx;                                    \
        int64_t nqb = (j->L + CT__SDPA_BQ - 1) / CT__SDPA_BQ;                                 \
        int64_t b = t / (j->Hq * nqb), h = t / nqb % j->Hq, i0 = t % nqb * CT__SDPA_BQ;       \
        int64_t m = j->L - i0 < CT__SDPA_BQ ? j->L - i0 : CT__SDPA_BQ;                        \
        T *s = (T *)(void *)j->scratch + slot * j->slot_len, *mx = s + CT__SDPA_BQ * CT__SDPA_BK; \
        T *l = mx + CT__SDPA_BQ;                                                              \
        T *o = (T *)(void *)j->o.data + ct__sdpa_off(j, &j->o, b, h) + i0 * j->o.rs;          \
        const T *v = (const T *)(const void *)j->v.data +                                     \
                     ct__sdpa_off(j, &j->v, b, h / (j->Hq / j->H));                           \
        ct__sdpa_zero(o, m, j->o.rs, j->Ev, sizeof(T));                                       \
        for (int64_t r = 0; r < m; r++) {                                                     \
            mx[r] = (T)-INFINITY;                                                             \
            l[r] = 0;                                                                         \
        }                                                                                     \
        int64_t kend = ct__sdpa_key_end(j, i0, m);                                            \
        for (int64_t k0 = 0; k0 < kend; k0 += CT__SDPA_BK) {                                  \
            int64_t nk = kend - k0 < CT__SDPA_BK ? kend - k0 : CT__SDPA_BK;                   \
            ct__sdpa_scores_##SX(j, b, h, i0, m, k0, nk, s);                                  \
            for (int64_t r = 0; r < m; r++) {                                                 \
                T *row = s + r * CT__SDPA_BK, top = ct__sdpa_max_##SX(row, nk);               \
                top = mx[r] > top ? mx[r] : top;                                              \
                if (top == (T)-INFINITY) { /* nothing attended yet: p = 0 */                  \
                    memset(row, 0, sizeof(T) * (size_t)nk);                                   \
                    continue;                                                                 \
                }                                                                             \
                ct__exp_row_##SX(row, row, nk, top, (T)1, false, false);                      \
                T alpha = (T)exp(mx[r] - top);                                                \
                l[r] = l[r] * alpha + ct__sdpa_sum_##SX(row, nk);                             \
                mx[r] = top;                                                                  \
                if (alpha != (T)1) {                                                          \
                    ct__sdpa_scale_##SX(o + r * j->o.rs, j->Ev, alpha);                       \
                }                                                                             \
            }                                                                                 \
            ct__gemm_##SX(m, j->Ev, nk, (T)1, s, CT__SDPA_BK, 1, v + k0 * j->v.rs, j->v.rs,    \
                          j->v.cs, (T)1, o, j->o.rs, 1);                                      \
        }                                                                                     \
        T *lse = (T *)(void *)j->lse.data + ct__sdpa_off(j, &j->lse, b, h) + i0;              \
        for (int64_t r = 0; r < m; r++) {                                                     \
            ct__sdpa_scale_##SX(o + r * j->o.rs, j->Ev, l[r] > 0 ? (T)1 / l[r] : (T)0);       \
            lse[r] = l[r] > 0 ? mx[r] + (T)log(l[r]) : (T)-INFINITY;                          \
        }                                                                                     \
    }                                                                                         \
                                                                                              \
    /* One query block against one key block of (b, h): accumulates dq, dk, dv; D[r] =        \
       rowsum(dO * O) of the head's rows. */                                                  \
    static void ct__sdpa_bwd_block_##SX(const ct__sdpa_job *j, int64_t b, int64_t h,          \
                                        int64_t i0, int64_t m, int64_t k0, int64_t nk,        \
                                        const T *D, T *p, T *dp)                              \
    {                                                                                         \
        int64_t hk = h / (j->Hq / j->H);                                                      \
        const T *lse = (const T *)(const void *)j->lse.data + ct__sdpa_off(j, &j->lse, b, h); \
        const T *go = (const T *)(const void *)j->go.data + ct__sdpa_off(j, &j->go, b, h) +   \
                      i0 * j->go.rs;                                                          \
        const T *q = (const T *)(const void *)j->q.data + ct__sdpa_off(j, &j->q, b, h) +      \
                     i0 * j->q.rs;                                                            \
        const T *k = (const T *)(const void *)j->k.data + ct__sdpa_off(j, &j->k, b, hk) +     \
                     k0 * j->k.rs;                                                            \
        const T *v = (const T *)(const void *)j->v.data + ct__sdpa_off(j, &j->v, b, hk) +     \
                     k0 * j->v.rs;                                                            \
        T *dq = (T *)(void *)j->dq.data + ct__sdpa_off(j, &j->dq, b, h) + i0 * j->dq.rs;      \
        T *dk = (T *)(void *)j->dk.data + ct__sdpa_off(j, &j->dk, b, hk) + k0 * j->dk.rs;     \
        T *dv = (T *)(void *)j->dv.data + ct__sdpa_off(j, &j->dv, b, hk) + k0 * j->dv.rs;     \
        ct__sdpa_scores_##SX(j, b, h, i0, m, k0, nk, p);                                      \
        for (int64_t r = 0; r < m; r++) {                                                     \
            T *row = p + r * CT__SDPA_BK, z = lse[(i0 + r) * j->lse.rs];                      \
            if (z == (T)-INFINITY) { /* a fully masked row: p = 0 */                          \
                memset(row, 0, sizeof(T) * (size_t)nk);                                       \
            } else {                                                                          \
                ct__exp_row_##SX(row, row, nk, z, (T)1, false, false);                        \
            }                                                                                 \
        }                                                                                     \
        ct__gemm_##SX(nk, j->Ev, m, (T)1, p, 1, CT__SDPA_BK, go, j->go.rs, j->go.cs, (T)1, dv, \
                      j->dv.rs, 1);                                                           \
        ct__gemm_##SX(m, nk, j->Ev, (T)1, go, j->go.rs, j->go.cs, v, j->v.cs, j->v.rs, (T)0,   \
                      dp, CT__SDPA_BK, 1);                                                    \
        for (int64_t r = 0; r < m; r++) {                                                     \
            ct__sdpa_ds_##SX(p + r * CT__SDPA_BK, dp + r * CT__SDPA_BK, nk, D[i0 + r]);       \
        }                                                                                     \
        ct__gemm_##SX(m, j->E, nk, (T)j->scale, dp, CT__SDPA_BK, 1, k, j->k.rs, j->k.cs, (T)1, \
                      dq, j->dq.rs, 1);                                                       \
        ct__gemm_##SX(nk, j->E, m, (T)j->scale, dp, 1, CT__SDPA_BK, q, j->q.rs, j->q.cs, (T)1, \
                      dk, j->dk.rs, 1);                                                       \
    }                                                                                         \
                                                                                              \
    /* One (batch, key/value head): dk, dv of the head and dq of its group's query heads. */  \
    static void ct__sdpa_bwd_task_##SX(int64_t t, int slot, void *ctx)                        \
    {                                                                                         \
        const ct__sdpa_job *j = (const ct__sdpa_job *)ctx;                                    \
        int64_t b = t / j->H, hk = t % j->H, G = j->Hq / j->H;                                \
        T *p = (T *)(void *)j->scratch + slot * j->slot_len, *dp = p + CT__SDPA_BQ * CT__SDPA_BK; \
        T *D = dp + CT__SDPA_BQ * CT__SDPA_BK;                                                \
        ct__sdpa_zero((T *)(void *)j->dk.data + ct__sdpa_off(j, &j->dk, b, hk), j->S,         \
                      j->dk.rs, j->E, sizeof(T));                                             \
        ct__sdpa_zero((T *)(void *)j->dv.data + ct__sdpa_off(j, &j->dv, b, hk), j->S,         \
                      j->dv.rs, j->Ev, sizeof(T));                                            \
        for (int64_t h = hk * G; h < (hk + 1) * G; h++) {                                     \
            ct__sdpa_zero((T *)(void *)j->dq.data + ct__sdpa_off(j, &j->dq, b, h), j->L,      \
                          j->dq.rs, j->E, sizeof(T));                                         \
            const T *go = (const T *)(const void *)j->go.data + ct__sdpa_off(j, &j->go, b, h); \
            const T *o = (const T *)(const void *)j->o.data + ct__sdpa_off(j, &j->o, b, h);   \
            for (int64_t r = 0; r < j->L; r++) {                                              \
                D[r] = ct__sdpa_dot_##SX(go + r * j->go.rs, j->go.cs, o + r * j->o.rs,        \
                                         j->o.cs, j->Ev);                                     \
            }                                                                                 \
            for (int64_t k0 = 0; k0 < j->S; k0 += CT__SDPA_BK) {                              \
                int64_t nk = j->S - k0 < CT__SDPA_BK ? j->S - k0 : CT__SDPA_BK;               \
                for (int64_t i0 = 0; i0 < j->L; i0 += CT__SDPA_BQ) {                          \
                    int64_t m = j->L - i0 < CT__SDPA_BQ ? j->L - i0 : CT__SDPA_BQ;            \
                    int64_t kend = ct__sdpa_key_end(j, i0, m);                                \
                    if (k0 < kend) {                                                          \
                        ct__sdpa_bwd_block_##SX(j, b, h, i0, m, k0,                           \
                                                kend - k0 < nk ? kend - k0 : nk, D, p, dp);   \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }
CT__VECTORIZE_BEGIN
CT__SDPA_LOOPS(float, f32, fmaf)
CT__VECTORIZE_END
CT__GLUE_BEGIN
/* float64 (tests, gradcheck) spends its time in the GEMMs: its loops compile as glue too. */
CT__SDPA_LOOPS(double, f64, fma)
/* The keys query rows [i0, i0 + m) may attend: [0, end). */
static int64_t ct__sdpa_key_end(const ct__sdpa_job *j, int64_t i0, int64_t m)
{
    return j->causal && i0 + m < j->S ? i0 + m : j->S;
}
CT__SDPA_DEFINE(float, f32)
CT__SDPA_DEFINE(double, f64)
CT__GLUE_END
#undef CT__SDPA_LOOPS
#undef CT__SDPA_DEFINE

CT__GLUE_BEGIN
/* ---- geometry and checks --------------------------------------------------------------- */
/* The dims of t: heads (1 for a 2-D t), rows, cols. */
static int64_t ct__sdpa_dim(const ct_tensor *t, int from_end)
{
    return t->ndim >= from_end ? t->sizes[t->ndim - from_end] : 1;
}

static const char *ct__sdpa_cpp_dtype(ct_dtype d)
{
    switch (d) {
    case CT_FLOAT32:
        return "float";
    case CT_FLOAT64:
        return "double";
    case CT_FLOAT16:
        return "c10::Half";
    case CT_BFLOAT16:
        return "c10::BFloat16";
    case CT_INT64:
        return "long int";
    case CT_INT32:
        return "int";
    case CT_BOOL:
        return "bool";
    default:
        return ct_dtype_name(d);
    }
}

/* Checks query, key, value and the mask (inputs 0-3); out receives the output's sizes (its
   ndim in *nd) and the batch dims' count in *nb. */
static bool ct__sdpa_check(ct_op_call *c, bool gqa, int64_t *out, int *nd, int *nb)
{
    const ct_tensor *q = c->inputs[0], *k = c->inputs[1], *v = c->inputs[2], *mask = c->inputs[3];
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2) {
        return ct__fail(CT_ERR_SHAPE, c->fn, "Expected query, key, and value to all be  at least "
                        "2 dimensional, but got query.dim: %d key.dim: %d and value.dim: %d "
                        "instead.", q->ndim, k->ndim, v->ndim) == CT_OK;
    }
    if (q->dtype != k->dtype || q->dtype != v->dtype) {
        return ct__fail(CT_ERR_DTYPE, c->fn, "Expected query, key, and value to have the same "
                        "dtype, but got query.dtype: %s key.dtype: %s and value.dtype: %s "
                        "instead.", ct__sdpa_cpp_dtype(q->dtype), ct__sdpa_cpp_dtype(k->dtype),
                        ct__sdpa_cpp_dtype(v->dtype)) == CT_OK;
    }
    if (!ct_dtype_is_floating_point(q->dtype)) {
        return ct__fail(CT_ERR_DTYPE, c->fn, "expected scalar type Float but found %s",
                        ct__dtype_title(q->dtype)) == CT_OK;
    }
    int64_t hq = ct__sdpa_dim(q, 3), h = ct__sdpa_dim(k, 3), hv = ct__sdpa_dim(v, 3);
    int od = q->ndim > k->ndim ? q->ndim : k->ndim;
    od = od > v->ndim ? od : v->ndim;
    if (h != hv || (h != hq && h != 1 && (!gqa || hq % h != 0))) {
        if (gqa && h == hv) {
            return ct__fail(CT_ERR_SHAPE, c->fn, "Number of heads in key and value must divide "
                            "the number of heads in query") == CT_OK;
        }
        return ct__fail(CT_ERR_SHAPE, c->fn, "The size of tensor a (%lld) must match the size "
                        "of tensor b (%lld) at non-singleton dimension %d", (long long)(h != hv ? h
                        : hq), (long long)(h != hv ? hv : h), od - 3) == CT_OK;
    }
    /* batch dims: broadcast */
    int n = 0, n2 = 0;
    int64_t bq[CT_MAX_DIMS], bt[CT_MAX_DIMS];
    if (!ct__broadcast_shapes(c->fn, q->sizes, q->ndim > 3 ? q->ndim - 3 : 0, k->sizes,
                              k->ndim > 3 ? k->ndim - 3 : 0, bt, &n) ||
        !ct__broadcast_shapes(c->fn, bt, n, v->sizes, v->ndim > 3 ? v->ndim - 3 : 0, bq, &n2)) {
        return false;
    }
    int64_t batch = hq;
    for (int d = 0; d < n2; d++) {
        batch *= bq[d];
    }
    int64_t L = ct__sdpa_dim(q, 2), S = ct__sdpa_dim(k, 2);
    int64_t E = ct__sdpa_dim(q, 1), Ek = ct__sdpa_dim(k, 1), Sv = ct__sdpa_dim(v, 2);
    if (E != Ek || S != Sv) {
        return ct__fail(CT_ERR_SHAPE, c->fn, "Expected size for first two dimensions of batch2 "
                        "tensor to be: [%lld, %lld] but got: [%lld, %lld].", (long long)batch,
                        (long long)(E != Ek ? E : S), (long long)batch,
                        (long long)(E != Ek ? Ek : Sv)) == CT_OK;
    }
    *nb = n2;
    memcpy(out, bq, sizeof(int64_t) * (size_t)n2);
    *nd = od;
    if (od >= 3) {
        out[od - 3] = hq;
    }
    out[od - 2] = L;
    out[od - 1] = ct__sdpa_dim(v, 1);
    if (!mask) {
        return true;
    }
    if (mask->dtype != CT_BOOL && mask->dtype != CT_FLOAT32 && mask->dtype != q->dtype) {
        return ct__fail(CT_ERR_DTYPE, c->fn, "Expected attn_mask dtype to be bool or float or to "
                        "match query dtype, but got attn_mask.dtype: %s and  query.dtype: %s "
                        "instead.", ct__sdpa_cpp_dtype(mask->dtype),
                        ct__sdpa_cpp_dtype(q->dtype)) == CT_OK;
    }
    int64_t target[CT_MAX_DIMS], got[CT_MAX_DIMS];
    memcpy(target, out, sizeof(int64_t) * (size_t)od);
    target[od - 1] = S;
    int ng = 0;
    if (!ct__broadcast_shapes(c->fn, target, od, mask->sizes, mask->ndim, got, &ng)) {
        return false;
    }
    for (int d = 0; d < ng; d++) { /* the mask may not grow the output */
        int td = d - (ng - od);
        if (td < 0 || got[d] != target[td]) {
            return ct__fail(CT_ERR_SHAPE, c->fn, "The size of tensor a (%lld) must match the size "
                            "of tensor b (%lld) at non-singleton dimension %d",
                            (long long)(td < 0 ? 1 : target[td]), (long long)got[d], d) == CT_OK;
        }
    }
    return true;
}

/* The job over the call's tensors: q, k, v, mask at inputs qi..qi+2 and mi. */
static ct__sdpa_job ct__sdpa_job_of(const ct_op_call *c, int qi, int mi, const ct_tensor *out)
{
    ct__sdpa_job j;
    memset(&j, 0, sizeof j);
    const ct_tensor *q = c->inputs[qi], *k = c->inputs[qi + 1], *v = c->inputs[qi + 2];
    const ct_tensor *mask = c->inputs[mi];
    j.nb = out->ndim > 3 ? out->ndim - 3 : 0;
    j.B = 1;
    for (int d = 0; d < j.nb; d++) {
        j.bsz[d] = out->sizes[d];
        j.B *= out->sizes[d];
    }
    j.Hq = ct__sdpa_dim(q, 3);
    j.H = ct__sdpa_dim(k, 3);
    j.L = ct__sdpa_dim(q, 2);
    j.S = ct__sdpa_dim(k, 2);
    j.E = ct__sdpa_dim(q, 1);
    j.Ev = ct__sdpa_dim(v, 1);
    j.causal = c->attrs[1].i != 0;
    j.scale = c->attrs[2].f;
    j.q = ct__sdpa_mat_of(q, j.nb);
    j.k = ct__sdpa_mat_of(k, j.nb);
    j.v = ct__sdpa_mat_of(v, j.nb);
    j.has_mask = mask != NULL;
    if (mask) {
        j.bool_mask = mask->dtype == CT_BOOL;
        j.mask = ct__sdpa_mat_of(mask, j.nb);
    }
    return j;
}

/* Runs fn over ntasks with slot_len elements of scratch per thread. */
static ct_status ct__sdpa_run(ct_op_call *c, ct__sdpa_job *j, int64_t ntasks, int64_t slot_len,
                              void (*fn)(int64_t, int, void *))
{
    if (ntasks == 0) {
        return CT_OK;
    }
    int nt = ct__parallel_threads();
    nt = ntasks < nt ? (int)ntasks : nt;
    j->slot_len = slot_len;
    j->scratch = (char *)ct__malloc(ct_dtype_size(c->dtype) * (size_t)(slot_len * nt));
    if (!j->scratch) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    ct__parallel_tasks(ntasks, nt, fn, j);
    ct__free(j->scratch);
    return CT_OK;
}

/* A new output t (N..., heads, rows, cols) laid out (N..., rows, heads, cols) when its
   operand ref has its heads inside its rows (a (B, T, H, D) projection seen as (B, H, T, D),
   as PyTorch's flash attention lays out its output): then t transposed back to (B, T, H, D)
   and merged is a view, not a copy. */
static void ct__sdpa_layout_like(ct_tensor *t, const ct_tensor *ref)
{
    int nd = t->ndim, r = ref->ndim;
    if (nd < 3 || r < 3 || ref->strides[r - 3] >= ref->strides[r - 2]) {
        return;
    }
    t->strides[nd - 3] = t->sizes[nd - 1];
    t->strides[nd - 2] = t->sizes[nd - 3] * t->sizes[nd - 1];
}

/* ---- aten::_scaled_dot_product_flash_attention_for_cpu --------------------------------- */
/* Inputs: query, key, value, attn_mask (optional: bool or the query's dtype); attrs:
   dropout_p (0), is_causal, scale (resolved). Outputs: output, logsumexp (N..., Hq, L). */
static bool ct__sdpa_flash_meta(ct_op_call *c)
{
    int64_t out[CT_MAX_DIMS];
    int nd = 0, nb = 0;
    if (!ct__sdpa_check(c, true, out, &nd, &nb)) {
        return false;
    }
    const ct_tensor *mask = c->inputs[3];
    if (mask && mask->dtype != CT_BOOL && mask->dtype != c->inputs[0]->dtype) {
        return ct__fail(CT_ERR_DTYPE, c->fn, "Expected attn_mask dtype to be bool or to match "
                        "query dtype") == CT_OK;
    }
    c->dtype = c->inputs[0]->dtype;
    int64_t lse[CT_MAX_DIMS];
    memcpy(lse, out, sizeof lse);
    lse[nd - 1] = 1;
    ct_tensor *o = ct__op_output(c, out, nd, c->dtype);
    if (o) {
        ct__sdpa_layout_like(o, c->inputs[0]);
    }
    return o && ct__op_output(c, lse, nd, c->dtype);
}

static ct_status ct__sdpa_flash_kernel(ct_op_call *c)
{
    ct__sdpa_job j = ct__sdpa_job_of(c, 0, 3, c->outputs[0]);
    j.o = ct__sdpa_mat_of(c->outputs[0], j.nb);
    j.lse = ct__sdpa_mat_of(c->outputs[1], j.nb);
    int64_t nqb = (j.L + CT__SDPA_BQ - 1) / CT__SDPA_BQ;
    return ct__sdpa_run(c, &j, j.B * j.Hq * nqb, CT__SDPA_BQ * (CT__SDPA_BK + 2),
                        c->dtype == CT_FLOAT32 ? ct__sdpa_fwd_task_f32 : ct__sdpa_fwd_task_f64);
}

/* The next gradient output (sizes s), laid out as its operand ref. */
static bool ct__sdpa_grad_output(ct_op_call *c, const int64_t *s, int nd, const ct_tensor *ref)
{
    ct_tensor *t = ct__op_output(c, s, nd, c->dtype);
    if (t) {
        ct__sdpa_layout_like(t, ref);
    }
    return t != NULL;
}

/* Inputs: grad_out, query, key, value, out, logsumexp, attn_mask (optional); attrs as the
   forward's. Outputs: grad_query, grad_key, grad_value in the broadcast batch shape. */
static bool ct__sdpa_flash_bw_meta(ct_op_call *c)
{
    const ct_tensor *go = c->inputs[0], *k = c->inputs[2], *v = c->inputs[3];
    int64_t s[CT_MAX_DIMS];
    int nd = go->ndim;
    c->dtype = go->dtype;
    memcpy(s, go->sizes, sizeof s);
    s[nd - 1] = ct__sdpa_dim(c->inputs[1], 1);
    if (!ct__sdpa_grad_output(c, s, nd, c->inputs[1])) {
        return false;
    }
    if (nd >= 3) {
        s[nd - 3] = ct__sdpa_dim(k, 3);
    }
    s[nd - 2] = ct__sdpa_dim(k, 2);
    if (!ct__sdpa_grad_output(c, s, nd, k)) {
        return false;
    }
    s[nd - 1] = ct__sdpa_dim(v, 1);
    return ct__sdpa_grad_output(c, s, nd, v);
}

static ct_status ct__sdpa_flash_bw_kernel(ct_op_call *c)
{
    ct__sdpa_job j = ct__sdpa_job_of(c, 1, 6, c->inputs[0]);
    j.go = ct__sdpa_mat_of(c->inputs[0], j.nb);
    j.o = ct__sdpa_mat_of(c->inputs[4], j.nb);
    j.lse = ct__sdpa_mat_of(c->inputs[5], j.nb);
    j.dq = ct__sdpa_mat_of(c->outputs[0], j.nb);
    j.dk = ct__sdpa_mat_of(c->outputs[1], j.nb);
    j.dv = ct__sdpa_mat_of(c->outputs[2], j.nb);
    return ct__sdpa_run(c, &j, j.B * j.H, 2 * CT__SDPA_BQ * CT__SDPA_BK + j.L,
                        c->dtype == CT_FLOAT32 ? ct__sdpa_bwd_task_f32 : ct__sdpa_bwd_task_f64);
}

/* 2 x multiply-adds of q k^T and p v. */
static double ct__sdpa_flops(const ct_op_call *c)
{
    const ct_tensor *q = c->inputs[0], *o = c->outputs[0];
    double rows = (double)ct_numel(q) / (double)ct__sdpa_dim(q, 1);
    double S = (double)ct__sdpa_dim(c->inputs[1], 2);
    return 2.0 * rows * S * (double)(ct__sdpa_dim(q, 1) + ct__sdpa_dim(o, 1));
}

static const ct_op ct__op_sdpa_flash_backward = {
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, Tensor "
    "key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, "
    "Tensor? attn_mask=None, float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor "
    "grad_value)",
    "ct_backward (ScaledDotProductFlashAttentionForCpuBackward0)", CT_OP_OTHER,
    CT_AUTOCAST_NONE, 0, 1u << 6, NULL, ct__sdpa_flash_bw_meta,
    CT__K_FLOAT(ct__sdpa_flash_bw_kernel), NULL, NULL, NULL, 0u, NULL, NULL};

/* ---- the math composite (PyTorch's _scaled_dot_product_attention_math) ------------------- */
/* The additive mask of attn (..., L, S): the causal or bool mask as 0 / -inf, or mask. */
static ct_tensor *ct__sdpa_additive(const ct_tensor *mask, bool causal, int64_t L, int64_t S,
                                    ct_dtype dt)
{
    if (causal) {
        int64_t s[2] = {L, S};
        mask = ct_tril(ct_ones(s, 2, CT_BOOL), 0);
    }
    if (!mask || mask->dtype != CT_BOOL) {
        return (ct_tensor *)mask;
    }
    return ct_masked_fill(ct_zeros(mask->sizes, mask->ndim, dt), ct_logical_not(mask), -INFINITY);
}

/* k (or v) repeated G times along the head dim (GQA and a broadcast head). */
static ct_tensor *ct__sdpa_repeat(const ct_tensor *t, int64_t G)
{
    return G > 1 ? ct_repeat_interleave(t, G, -3) : (ct_tensor *)t;
}

/* softmax over the last dim with 0 for rows that are all -inf (PyTorch's _safe_softmax); those
   rows are zeroed before the softmax too, so that no NaN reaches the gradients. */
static ct_tensor *ct__sdpa_softmax(const ct_tensor *x)
{
    int64_t last = -1;
    ct_tensor *dead = ct_isneginf(ct_amax(x, &last, 1, true));
    ct_tensor *zero = ct_scalar_tensor(0, x->dtype);
    return ct_where(dead, zero, ct_softmax(ct_where(dead, zero, x), -1));
}

/* The attention weights softmax(scale q k^T + mask), as PyTorch's math path (q and k each
   times sqrt(scale)). */
static ct_tensor *ct__sdpa_weights(const ct_tensor *q, const ct_tensor *k, const ct_tensor *mask,
                                   bool causal, double scale)
{
    double sf = sqrt(scale);
    int64_t G = ct__sdpa_dim(q, 3) / ct__sdpa_dim(k, 3);
    ct_tensor *kt = ct_transpose(ct_mul_scalar(ct__sdpa_repeat(k, G), sf), -2, -1);
    ct_tensor *attn = ct_matmul(ct_mul_scalar(q, sf), kt);
    ct_tensor *add = ct__sdpa_additive(mask, causal, ct__sdpa_dim(q, 2), ct__sdpa_dim(k, 2),
                                       q->dtype);
    return ct__sdpa_softmax(add ? ct_add(attn, add) : attn);
}

/* Sums a gradient of the repeated k (or v) over each group of G heads. */
static ct_tensor *ct__sdpa_group_sum(ct_tensor *g, int64_t G)
{
    if (G == 1) {
        return g;
    }
    int64_t s[CT_MAX_DIMS + 1];
    int nd = g->ndim;
    memcpy(s, g->sizes, sizeof(int64_t) * (size_t)(nd - 3));
    s[nd - 3] = g->sizes[nd - 3] / G;
    s[nd - 2] = G;
    s[nd - 1] = g->sizes[nd - 2];
    s[nd] = g->sizes[nd - 1];
    return ct_sum_dim(ct_reshape(g, s, nd + 1), nd - 2, false);
}

/* The gradients of q, k, v with differentiable ops (double backward): p the weights,
   dv = p^T g, ds = p (g v^T - rowsum(p g v^T)), dq = scale ds k, dk = scale ds^T q. */
static void ct__sdpa_math_grads(const ct_tensor *g, const ct_tensor *q, const ct_tensor *k,
                                const ct_tensor *v, const ct_tensor *mask, bool causal,
                                double scale, ct_tensor **gi)
{
    int64_t G = ct__sdpa_dim(q, 3) / ct__sdpa_dim(k, 3);
    ct_tensor *p = ct__sdpa_weights(q, k, mask, causal, scale);
    ct_tensor *kr = ct__sdpa_repeat(k, G), *vr = ct__sdpa_repeat(v, G);
    ct_tensor *dp = ct_matmul(g, ct_transpose(vr, -2, -1));
    ct_tensor *ds = ct_mul(p, ct_sub(dp, ct_sum_dim(ct_mul(dp, p), -1, true)));
    gi[0] = ct_mul_scalar(ct_matmul(ds, kr), scale);
    gi[1] = ct__sdpa_group_sum(ct_mul_scalar(ct_matmul(ct_transpose(ds, -2, -1), q), scale), G);
    gi[2] = ct__sdpa_group_sum(ct_matmul(ct_transpose(p, -2, -1), g), G);
}

/* ---- autograd of the fused op -------------------------------------------------------------- */
typedef struct ct__sdpa_saved {
    ct_tensor *lse, *mask;
} ct__sdpa_saved;

static void ct__sdpa_saved_free(void *ctx)
{
    ct__sdpa_saved *s = (ct__sdpa_saved *)ctx;
    ct_release(s->lse);
    ct_release(s->mask);
    ct__free(s);
}

/* Saves query, key, value, output; the logsumexp and the mask in the node's ctx; is_causal in
   i[0], scale in f[0]. */
static void ct__sdpa_record(ct_node *n, const ct_op_call *c)
{
    ct__sdpa_saved *s = (ct__sdpa_saved *)ct__malloc(sizeof *s);
    n->i[0] = c->attrs[1].i;
    n->f[0] = c->attrs[2].f;
    for (int k = 0; k < 3; k++) {
        ct__save(n, c->inputs[k]);
    }
    ct__save_output(n, c->outputs[0]);
    if (!s) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        return;
    }
    s->lse = ct_retain(c->outputs[1]);
    s->mask = ct_retain((ct_tensor *)c->inputs[3]);
    n->ctx = s;
    n->ctx_free = ct__sdpa_saved_free;
}

static void ct__sdpa_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *q = ct__saved(n, 0), *k = ct__saved(n, 1), *v = ct__saved(n, 2);
    const ct_tensor *o = ct__saved(n, 3);
    const ct__sdpa_saved *s = (const ct__sdpa_saved *)n->ctx;
    if (!q || !k || !v || !o || !s) {
        return;
    }
    ct_tensor *r[3] = {NULL, NULL, NULL};
    if (ct_is_grad_enabled()) { /* create_graph: differentiable ops */
        ct__sdpa_math_grads(g, q, k, v, s->mask, n->i[0] != 0, n->f[0], r);
    } else {
        const ct_tensor *in[7] = {g, q, k, v, o, s->lse, s->mask};
        ct_op_call c;
        ct__call_init(&c, &ct__op_sdpa_flash_backward, "ct_scaled_dot_product_attention", in, 7);
        ct__call_f(&c, 0);
        ct__call_i(&c, n->i[0]);
        ct__call_f(&c, n->f[0]);
        if (!ct__dispatch(&c)) {
            return;
        }
        memcpy(r, c.outputs, sizeof r);
    }
    for (int k = 0; k < 3; k++) {
        gi[k] = ct__needs_grad(n, k) ? r[k] : NULL;
    }
}

static const ct_op ct__op_sdpa_flash = {
    "aten::_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float "
    "dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> "
    "(Tensor output, Tensor logsumexp)",
    "ct_scaled_dot_product_attention", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 1u << 3, NULL,
    ct__sdpa_flash_meta, CT__K_FLOAT(ct__sdpa_flash_kernel), NULL,
    "ScaledDotProductFlashAttentionForCpuBackward0", ct__sdpa_backward, 0u, ct__sdpa_record,
    ct__sdpa_flops};

/* ---- aten::scaled_dot_product_attention ------------------------------------------------- */
/* Inputs: query, key, value, attn_mask (optional); attrs: dropout_p, is_causal, scale (NAN:
   None), enable_gqa. */
static bool ct__sdpa_meta(ct_op_call *c)
{
    int64_t out[CT_MAX_DIMS];
    int nd = 0, nb = 0;
    double p = c->attrs[0].f;
    if (c->attrs[1].i && c->inputs[3]) {
        return ct__fail(CT_ERR_VALUE, c->fn, "_scaled_dot_product_attention: Explicit attn_mask "
                        "should not be set when is_causal=True") == CT_OK;
    }
    if (!(p >= 0 && p <= 1)) {
        return ct__fail(CT_ERR_VALUE, c->fn, "dropout probability has to be between 0 and 1, "
                        "but got %g", p) == CT_OK;
    }
    return ct__sdpa_check(c, c->attrs[3].i != 0, out, &nd, &nb);
}

static ct_status ct__sdpa_composite(ct_op_call *c)
{
    const ct_tensor *q = c->inputs[0], *k = c->inputs[1], *v = c->inputs[2];
    const ct_tensor *mask = c->inputs[3];
    double p = c->attrs[0].f, scale = c->attrs[2].f;
    bool causal = c->attrs[1].i != 0;
    if (isnan(scale)) {
        scale = 1.0 / sqrt((double)ct__sdpa_dim(q, 1));
    }
    ct_scope_begin();
    if (p > 0 || (mask && ct_requires_grad(mask))) {
        int64_t G = ct__sdpa_dim(q, 3) / ct__sdpa_dim(k, 3);
        ct_tensor *w = ct__sdpa_weights(q, k, mask, causal, scale);
        w = p > 0 ? ct_dropout(w, p, true) : w;
        return ct__composite_end(c, ct_matmul(w, ct__sdpa_repeat(v, G)));
    }
    if (mask && mask->dtype != CT_BOOL && mask->dtype != q->dtype) {
        mask = ct_to_dtype(mask, q->dtype);
    }
    const ct_tensor *in[4] = {q, k, v, mask};
    ct_op_call f;
    ct__call_init(&f, &ct__op_sdpa_flash, c->fn, in, 4);
    ct__call_f(&f, 0);
    ct__call_i(&f, causal);
    ct__call_f(&f, scale);
    return ct__composite_end(c, ct__dispatch(&f));
}

static const ct_op ct__op_scaled_dot_product_attention = {
    "aten::scaled_dot_product_attention",
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
    "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> "
    "Tensor",
    "ct_scaled_dot_product_attention", CT_OP_OTHER, CT_AUTOCAST_NONE, 0, 1u << 3, NULL,
    ct__sdpa_meta, CT__K_NONE, ct__sdpa_composite, NULL, NULL, 0u, NULL, NULL};

/* ---- public functions ------------------------------------------------------------------ */
ct_scaled_dot_product_attention_opts ct_scaled_dot_product_attention_defaults(void)
{
    ct_scaled_dot_product_attention_opts o;
    memset(&o, 0, sizeof o);
    o.scale = NAN;
    return o;
}

ct_tensor *ct_scaled_dot_product_attention(const ct_tensor *query, const ct_tensor *key,
                                           const ct_tensor *value, const ct_tensor *attn_mask,
                                           const ct_scaled_dot_product_attention_opts *opts)
{
    ct_scaled_dot_product_attention_opts o =
        opts ? *opts : ct_scaled_dot_product_attention_defaults();
    const ct_tensor *in[4] = {query, key, value, attn_mask};
    ct_op_call c;
    ct__call_init(&c, &ct__op_scaled_dot_product_attention, "ct_scaled_dot_product_attention",
                  in, 4);
    ct__call_f(&c, o.dropout_p);
    ct__call_i(&c, o.is_causal);
    ct__call_f(&c, o.scale);
    ct__call_i(&c, o.enable_gqa);
    return ct__dispatch(&c);
}
CT__GLUE_END

#undef CT__SDPA_BQ
#undef CT__SDPA_BK
