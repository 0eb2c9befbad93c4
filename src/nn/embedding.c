/* nn/embedding.c - embedding (row gather) with its dense backward (aten::embedding_dense_backward)
 * and max_norm renormalization (aten::embedding_renorm_), embedding_bag (a composite of
 * embedding, index_add and scatter_reduce), and the Embedding / EmbeddingBag modules.
 *
 * Legend: weight (V, D): V rows (num_embeddings) of D values; indices flattened to n entries;
 * grad (n, D). The backward is parallel over disjoint ranges of weight rows, each range adding
 * its rows' gradients in index order (PyTorch's CPU order): bit-identical for any thread count.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/creation.h"
#include "../ops/index.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"
#include "../autograd/autograd.h"
#include "init.h"
#include "module.h"
#include "embedding.h"

#include <string.h>

#define CT__EMB_NONE INT64_MIN

/* ---- kernels ----------------------------------------------------------------------------- */
typedef struct ct__emb_job {
    const int64_t *idx; /* (n) row of each entry */
    int64_t n, D;
    const char *w; /* forward: weight (V, D) with strides s0, s1 in elements */
    int64_t s0, s1;
    size_t esz;
    char *out;             /* forward: (n, D) contiguous; backward: dweight (V, D) */
    const char *g;         /* backward: grad (n, D) contiguous */
    int64_t padding_idx;   /* backward: -1 for none */
    const int64_t *counts; /* backward with scale_grad_by_freq: (V) entries per row */
    int64_t V;             /* backward: the rows of dweight */
    bool f32;              /* backward: float32 (else float64) */
} ct__emb_job;

/* out[i, :] = weight[idx[i], :] for i in [b, e) */
static void ct__emb_gather(int64_t b, int64_t e, void *ctx)
{
    const ct__emb_job *j = (const ct__emb_job *)ctx;
    size_t row = (size_t)j->D * j->esz;
    for (int64_t i = b; i < e; i++) {
        const char *src = j->w + (size_t)(j->idx[i] * j->s0) * j->esz;
        char *dst = j->out + (size_t)i * row;
        if (j->s1 == 1) {
            memcpy(dst, src, row);
            continue;
        }
        for (int64_t c = 0; c < j->D; c++) {
            memcpy(dst + (size_t)c * j->esz, src + (size_t)(c * j->s1) * j->esz, j->esz);
        }
    }
}

CT__VECTORIZE_BEGIN
/* dweight[k, c0:c1] = sum of scale_k * grad[i, c0:c1] over the entries i (in order) whose row
   k lies in [r0, r1) and is not padding_idx, the block zeroed first; scale_k = 1 / count[k]
   with scale_grad_by_freq (an fma, as PyTorch's add with alpha), else 1 (a plain add: the
   same bits). */
#define CT__EMB_BACKWARD(T, S, F)                                                               \
    static void ct__emb_backward_##S(const ct__emb_job *j, int64_t r0, int64_t r1, int64_t c0,  \
                                     int64_t c1)                                                \
    {                                                                                           \
        const T *g = (const T *)(const void *)j->g;                                             \
        T *dw = (T *)(void *)j->out;                                                            \
        int64_t D = j->D;                                                                       \
        for (int64_t k = r0; k < r1; k++) {                                                     \
            memset(dw + k * D + c0, 0, sizeof(T) * (size_t)(c1 - c0));                          \
        }                                                                                       \
        for (int64_t i = 0; i < j->n; i++) {                                                    \
            int64_t k = j->idx[i];                                                              \
            if (k < r0 || k >= r1 || k == j->padding_idx) {                                     \
                continue;                                                                       \
            }                                                                                   \
            T *d = dw + k * D;                                                                  \
            const T *gi = g + i * D;                                                            \
            if (!j->counts || j->counts[k] == 1) {                                              \
                for (int64_t c = c0; c < c1; c++) {                                             \
                    d[c] += gi[c];                                                              \
                }                                                                               \
                continue;                                                                       \
            }                                                                                   \
            T s = (T)(1.0 / (double)j->counts[k]);                                              \
            for (int64_t c = c0; c < c1; c++) {                                                 \
                d[c] = fma##F(s, gi[c], d[c]);                                                  \
            }                                                                                   \
        }                                                                                       \
    }
CT__EMB_BACKWARD(float, f32, f)
CT__EMB_BACKWARD(double, f64, )
#undef CT__EMB_BACKWARD
CT__VECTORIZE_END

/* the backward over the weight rows [b, e) */
static void ct__emb_backward_rows(int64_t b, int64_t e, void *ctx)
{
    const ct__emb_job *j = (const ct__emb_job *)ctx;
    (j->f32 ? ct__emb_backward_f32 : ct__emb_backward_f64)(j, b, e, 0, j->D);
}

CT__GLUE_BEGIN
/* ---- helpers ----------------------------------------------------------------------------- */
/* PyTorch's check of an index tensor's dtype (argument #1 'indices' of op) */
static bool ct__emb_check_indices(const char *fn, const ct_tensor *t, const char *op)
{
    if (t->dtype == CT_INT64 || t->dtype == CT_INT32) {
        return true;
    }
    ct__fail(CT_ERR_DTYPE, fn, "Expected tensor for argument #1 'indices' to have one of the "
             "following scalar types: Long, Int; but got torch.%sTensor instead (while checking "
             "arguments for %s)", ct__dtype_title(t->dtype), op);
    return false;
}

/* t as a contiguous int64 tensor: t itself (a new reference) or a converted copy */
static ct_tensor *ct__emb_long(const char *fn, const ct_tensor *t)
{
    if (t->dtype == CT_INT64 && ct_is_contiguous(t)) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *r = ct__tensor_new(fn, t->sizes, t->ndim, CT_INT64);
    if (r) {
        ct__copy_kernel(r, t);
    }
    return r;
}

/* t itself when contiguous (a new reference), else a contiguous copy */
static ct_tensor *ct__emb_dense(const char *fn, const ct_tensor *t)
{
    if (ct_is_contiguous(t)) {
        return ct_retain((ct_tensor *)(uintptr_t)t);
    }
    ct_tensor *r = ct__tensor_new(fn, t->sizes, t->ndim, t->dtype);
    if (r) {
        ct__copy_kernel(r, t);
    }
    return r;
}

/* Whether every index lies in [0, V); CT_ERR_INDEX otherwise */
static bool ct__emb_check_range(const char *fn, const int64_t *idx, int64_t n, int64_t V)
{
    for (int64_t i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= V) {
            ct__fail(CT_ERR_INDEX, fn, "index out of range in self");
            return false;
        }
    }
    return true;
}

/* ---- embedding: meta, kernel ------------------------------------------------------------- */
static bool ct__emb_check_weight(const char *fn, const ct_tensor *w)
{
    if (w->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, fn, "'weight' must be 2-D");
        return false;
    }
    return true;
}

/* inputs weight, indices; attrs padding_idx, scale_grad_by_freq, sparse. Output (*, D). */
static bool ct__emb_meta(ct_op_call *c)
{
    const ct_tensor *w = c->inputs[0], *ix = c->inputs[1];
    if (!ct__emb_check_weight(c->fn, w) || !ct__emb_check_indices(c->fn, ix, "embedding")) {
        return false;
    }
    int64_t s[CT_MAX_DIMS + 1];
    memcpy(s, ix->sizes, sizeof(int64_t) * (size_t)ix->ndim);
    s[ix->ndim] = w->sizes[1];
    c->dtype = w->dtype;
    return ct__op_output(c, s, ix->ndim + 1, w->dtype) != NULL;
}

static ct_status ct__emb_kernel(ct_op_call *c)
{
    const ct_tensor *w = c->inputs[0];
    ct_tensor *ix = ct__emb_long(c->fn, c->inputs[1]);
    if (!ix) {
        return ct_error_code();
    }
    ct__emb_job j;
    memset(&j, 0, sizeof j);
    j.idx = (const int64_t *)(const void *)ct__data(ix);
    j.n = ct_numel(ix);
    j.D = w->sizes[1];
    bool ok = ct__emb_check_range(c->fn, j.idx, j.n, w->sizes[0]);
    if (ok && j.D > 0) {
        j.w = ct__data(w);
        j.s0 = w->strides[0];
        j.s1 = w->strides[1];
        j.esz = ct_dtype_size(w->dtype);
        j.out = ct__data(c->outputs[0]);
        ct__parallel_for(j.n, CT__GRAIN / (j.D * 4) + 1, ct__emb_gather, &j);
    }
    ct__release(ix);
    return ok ? CT_OK : ct_error_code();
}

/* The node keeps indices, i[0] num_weights, i[1] padding_idx, i[2] scale_grad_by_freq. */
static void ct__emb_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->inputs[0]->sizes[0];
    n->i[1] = c->attrs[0].i;
    n->i[2] = c->attrs[1].i;
    ct__save(n, c->inputs[1]);
}

static ct_tensor *ct__emb_dense_backward(const ct_tensor *g, const ct_tensor *indices,
                                         int64_t num_weights, int64_t padding_idx, bool scale);

static void ct__emb_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    if (ix) {
        gi[0] = ct__emb_dense_backward(g, ix, n->i[0], n->i[1], n->i[2] != 0);
    }
}

/* ---- embedding_dense_backward: meta, kernel, double backward ----------------------------- */
/* inputs grad (*, D), indices (*); attrs num_weights, padding_idx, scale_grad_by_freq.
   Output dweight (num_weights, D). */
static bool ct__emb_bw_meta(ct_op_call *c)
{
    const ct_tensor *g = c->inputs[0];
    int64_t s[2] = {c->attrs[0].i, g->ndim ? g->sizes[g->ndim - 1] : 1};
    c->dtype = g->dtype;
    return ct__op_output(c, s, 2, g->dtype) != NULL;
}

/* Parallel over ranges of at least 1000 weight rows (PyTorch's grain), each range zeroing
   its rows and adding their gradients in index order; small problems in one call. */
static void ct__emb_backward_run(ct__emb_job *j)
{
    ct__parallel_for(j->V, j->n * j->D < CT__GRAIN ? j->V + 1 : 1000, ct__emb_backward_rows, j);
}

static ct_status ct__emb_bw_kernel(ct_op_call *c)
{
    ct_tensor *g = ct__emb_dense(c->fn, c->inputs[0]);
    ct_tensor *ix = g ? ct__emb_long(c->fn, c->inputs[1]) : NULL;
    ct_tensor *dw = c->outputs[0];
    ct__emb_job j;
    memset(&j, 0, sizeof j);
    int64_t V = dw->sizes[0];
    int64_t *counts = NULL;
    bool ok = ix != NULL;
    if (ok && c->attrs[2].i) {
        counts = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(V ? V : 1));
        ok = counts != NULL;
        if (!ok) {
            ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        }
    }
    if (ok) {
        j.idx = (const int64_t *)(const void *)ct__data(ix);
        j.n = ct_numel(ix);
        j.D = dw->sizes[1];
        ok = ct__emb_check_range(c->fn, j.idx, j.n, V);
    }
    if (ok) {
        if (counts) {
            memset(counts, 0, sizeof(int64_t) * (size_t)V);
            for (int64_t i = 0; i < j.n; i++) {
                counts[j.idx[i]]++;
            }
        }
        j.counts = counts;
        j.g = ct__data(g);
        j.out = ct__data(dw);
        j.padding_idx = c->attrs[1].i;
        j.V = V;
        j.f32 = c->dtype == CT_FLOAT32;
        ct__emb_backward_run(&j);
    }
    ct__free(counts);
    ct__release(g);
    ct__release(ix);
    return ok ? CT_OK : ct_error_code();
}

/* The double backward keeps indices and i[0] padding_idx. */
static void ct__emb_bw_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->attrs[1].i;
    ct__save(n, c->inputs[1]);
}

static ct_tensor *ct__emb_double_backward(const ct_tensor *gg, const ct_tensor *indices,
                                          int64_t padding_idx);

/* PyTorch's embedding_dense_double_backward: gg gathered at indices, padding entries zero
   (scale_grad_by_freq is not applied, as in PyTorch). */
static void ct__emb_bw_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    if (ix) {
        gi[0] = ct__emb_double_backward(g, ix, n->i[0]);
    }
}

/* ---- embedding_renorm_ ------------------------------------------------------------------- */
/* The p-norm of row r (D values, stride s1 in elements), accumulated in double */
static double ct__emb_row_norm(const char *r, int64_t D, int64_t s1, ct_dtype dt, double p)
{
    size_t esz = ct_dtype_size(dt);
    double acc = 0;
    for (int64_t c = 0; c < D; c++) {
        double v = fabs(ct__load_f64(r + (size_t)(c * s1) * esz, dt));
        acc = p == INFINITY ? (v > acc ? v : acc)
              : p == 0      ? acc + (v != 0)
              : p == 1      ? acc + v
              : p == 2      ? fma(v, v, acc)
                            : acc + pow(v, p);
    }
    return p == INFINITY || p == 0 || p == 1 ? acc : (p == 2 ? sqrt(acc) : pow(acc, 1 / p));
}

/* inputs self (weight, in place), indices; attrs max_norm, norm_type */
static bool ct__emb_renorm_meta(ct_op_call *c)
{
    const ct_tensor *w = c->inputs[0];
    if (!ct__emb_check_weight(c->fn, w) ||
        !ct__emb_check_indices(c->fn, c->inputs[1], "embedding_renorm_")) {
        return false;
    }
    c->dtype = w->dtype;
    c->outputs[c->n_outputs++] = (ct_tensor *)(uintptr_t)w;
    return true;
}

static int ct__emb_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Each distinct row of indices whose norm exceeds max_norm is scaled by max_norm / (norm +
   1e-7) (the norm rounded to the weight's dtype and the scale to it, as PyTorch's
   row *= scale), in ascending row order. */
static ct_status ct__emb_renorm_kernel(ct_op_call *c)
{
    ct_tensor *w = c->outputs[0];
    ct_tensor *ix = ct__emb_long(c->fn, c->inputs[1]);
    int64_t n = ix ? ct_numel(ix) : 0;
    int64_t *s = ix ? (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(n ? n : 1)) : NULL;
    bool ok = s != NULL && ct__emb_check_range(c->fn, (const int64_t *)(const void *)ct__data(ix),
                                               n, w->sizes[0]);
    if (ok) {
        memcpy(s, ct__data(ix), sizeof(int64_t) * (size_t)n);
        qsort(s, (size_t)n, sizeof(int64_t), ct__emb_cmp);
        double max_norm = c->attrs[0].f, p = c->attrs[1].f;
        size_t esz = ct_dtype_size(w->dtype);
        for (int64_t i = 0; i < n; i++) {
            if (i > 0 && s[i] == s[i - 1]) {
                continue;
            }
            char *r = ct__data(w) + (size_t)(s[i] * w->strides[0]) * esz;
            double norm = ct__emb_row_norm(r, w->sizes[1], w->strides[1], w->dtype, p);
            norm = w->dtype == CT_FLOAT64 ? norm : (double)(float)norm;
            if (norm > max_norm) {
                double scale = max_norm / (norm + 1e-7);
                scale = w->dtype == CT_FLOAT64 ? scale : (double)(float)scale;
                for (int64_t k = 0; k < w->sizes[1]; k++) {
                    char *e = r + (size_t)(k * w->strides[1]) * esz;
                    ct__store_f64(e, w->dtype, ct__load_f64(e, w->dtype) * scale);
                }
            }
        }
    } else if (ix && !s) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    ct__free(s);
    ct__release(ix);
    return ok ? CT_OK : ct_error_code();
}

/* ---- embedding_bag: meta, composite ------------------------------------------------------ */
/* "torch.Size([2, 3])" */
static const char *ct__bag_size_str(const ct_tensor *t, char *buf, size_t cap)
{
    char s[128];
    snprintf(buf, cap, "torch.Size(%s)", ct__shape_str(t->sizes, t->ndim, s, sizeof s));
    return buf;
}

static bool ct__bag_check_psw(const char *fn, const ct_tensor *in, const ct_tensor *psw,
                              int64_t mode)
{
    static const char *const names[3] = {"sum", "mean", "max"};
    if (psw && mode != CT_EMBEDDING_BAG_SUM) {
        ct__fail(CT_ERR_UNSUPPORTED, fn, "embedding_bag: per_sample_weights was not None. "
                 "per_sample_weights is only supported for mode='sum' (got mode='%s'). Please "
                 "open a feature request on GitHub.", names[mode]);
        return false;
    }
    bool same = !psw || psw->ndim == in->ndim;
    for (int d = 0; same && psw && d < in->ndim; d++) {
        same = psw->sizes[d] == in->sizes[d];
    }
    if (!same) {
        char a[160], b[160];
        ct__fail(CT_ERR_SHAPE, fn, "embedding_bag: If per_sample_weights (%s) is not None, then "
                 "it must have the same shape as the input (%s)",
                 ct__bag_size_str(psw, a, sizeof a), ct__bag_size_str(in, b, sizeof b));
        return false;
    }
    return true;
}

/* inputs weight, indices, offsets, per_sample_weights; attrs scale_grad_by_freq, mode, sparse,
   include_last_offset, padding_idx (-1: none), max_norm (NAN: none), norm_type */
static bool ct__bag_meta(ct_op_call *c)
{
    const ct_tensor *w = c->inputs[0], *in = c->inputs[1], *off = c->inputs[2];
    int64_t mode = c->attrs[1].i;
    if (in->ndim == 2 && off) {
        return ct__fail(CT_ERR_VALUE, c->fn, "if input is 2D, then offsets has to be None, as "
                        "input is treated is a mini-batch of fixed length sequences. However, "
                        "found offsets of type Tensor") == CT_OK;
    }
    if (in->ndim == 1 && (!off || off->ndim != 1)) {
        return ct__fail(CT_ERR_VALUE, c->fn, "offsets has to be a 1D Tensor%s",
                        off ? "" : " but got None") == CT_OK;
    }
    if (in->ndim != 1 && in->ndim != 2) {
        return ct__fail(CT_ERR_VALUE, c->fn, "input has to be 1D or 2D Tensor, but got Tensor of "
                        "dimension %d", in->ndim) == CT_OK;
    }
    if (mode == CT_EMBEDDING_BAG_MAX && c->attrs[0].i) {
        return ct__fail(CT_ERR_VALUE, c->fn, "max mode does not support scaling the gradient by "
                        "the frequency") == CT_OK;
    }
    if (!ct__bag_check_psw(c->fn, in, c->inputs[3], mode) || !ct__emb_check_weight(c->fn, w) ||
        !ct__emb_check_indices(c->fn, in, "embedding_bag") ||
        (off && !ct__emb_check_indices(c->fn, off, "embedding_bag"))) {
        return false;
    }
    if (!ct_dtype_is_floating_point(w->dtype)) {
        return ct__fail(CT_ERR_DTYPE, c->fn, "\"embedding_bag\" not implemented for '%s'",
                        ct__dtype_title(w->dtype)) == CT_OK;
    }
    c->dtype = w->dtype;
    return true;
}

/* The bags of the entries: bag[i] in [0, B], B for entries left out (padding_idx, or past
   the last offset with include_last_offset); count[b] the entries of bag b. */
typedef struct ct__bag_plan {
    int64_t B, n;
    ct_tensor *bag;   /* (n) int64 */
    ct_tensor *count; /* (B, 1) of the weight's dtype: max(entries, 1) (mode mean) */
} ct__bag_plan;

/* The start of each bag (B + 1 values, the last n) from 1-D offsets; false + error */
static bool ct__bag_starts(const char *fn, const ct_tensor *off, bool last, int64_t n,
                           int64_t *B, int64_t **starts)
{
    ct_tensor *o = ct__emb_long(fn, off);
    if (!o) {
        return false;
    }
    const int64_t *v = (const int64_t *)(const void *)ct__data(o);
    int64_t m = ct_numel(o);
    *B = last && m > 0 ? m - 1 : m;
    bool ok = true;
    if (m > 0 && v[0] != 0) {
        ok = ct__fail(CT_ERR_VALUE, fn, "offsets[0] has to be 0, i.e., the first sequence in the "
                      "mini-batch has to start from position 0. However, got %lld",
                      (long long)v[0]) == CT_OK;
    } else if (m > 0 && v[m - 1] > n) {
        ok = ct__fail(CT_ERR_INDEX, fn, "offsets[-1] can not be greater than input's length %lld "
                      "but got offsets[-1] of %lld", (long long)n, (long long)v[m - 1]) == CT_OK;
    }
    for (int64_t k = 1; ok && k < m; k++) {
        if (v[k] < v[k - 1]) {
            ok = ct__fail(CT_ERR_INDEX, fn, "Expected i < index_size to be true, but got "
                          "false.") == CT_OK;
        }
    }
    *starts = ok ? (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(*B + 1)) : NULL;
    if (*starts) {
        memcpy(*starts, v, sizeof(int64_t) * (size_t)*B);
        (*starts)[*B] = last && m > 0 ? v[m - 1] : n;
    } else if (ok) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
    }
    ct__release(o);
    return *starts != NULL;
}

/* Fills p (tensors in the current scope) from the indices and the starts of the bags */
static bool ct__bag_fill(ct__bag_plan *p, const ct_tensor *ix, const int64_t *starts,
                         int64_t pad, ct_dtype dt)
{
    int64_t one = 1, cs[2] = {p->B, 1};
    p->bag = ct_empty(&p->n, 1, CT_INT64);
    p->count = ct_empty(cs, 2, dt);
    if (!p->bag || !p->count) {
        return false;
    }
    int64_t *bag = (int64_t *)(void *)ct__data(p->bag);
    const int64_t *idx = (const int64_t *)(const void *)ct__data(ix);
    for (int64_t i = 0; i < p->n; i++) {
        bag[i] = p->B;
    }
    for (int64_t b = 0; b < p->B; b++) {
        int64_t cnt = 0;
        for (int64_t i = starts[b]; i < starts[b + 1]; i++) {
            bag[i] = idx[i] == pad ? p->B : b;
            cnt += idx[i] != pad;
        }
        ct__store_f64(ct__data(p->count) + (size_t)b * ct_dtype_size(dt), dt,
                      (double)(cnt > one ? cnt : one));
    }
    return true;
}

/* The bags of a call (2-D input: rows of L entries) */
static bool ct__bag_plan_of(const ct_op_call *c, ct__bag_plan *p)
{
    const ct_tensor *in = c->inputs[1];
    ct_tensor *ix = ct__emb_long(c->fn, in);
    int64_t *starts = NULL;
    p->n = ct_numel(in);
    bool ok = ix != NULL;
    if (ok && in->ndim == 2) {
        p->B = in->sizes[0];
        starts = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(p->B + 1));
        for (int64_t b = 0; starts && b <= p->B; b++) {
            starts[b] = b * in->sizes[1];
        }
        ok = starts || ct__fail(CT_ERR_OOM, c->fn, "out of memory") == CT_OK;
    } else if (ok) {
        ok = ct__bag_starts(c->fn, c->inputs[2], c->attrs[3].i != 0, p->n, &p->B, &starts);
    }
    ok = ok && ct__bag_fill(p, ix, starts, c->attrs[4].i, c->inputs[0]->dtype);
    ct__free(starts);
    ct__release(ix);
    return ok;
}

static ct_tensor *ct__emb_renorm(ct_tensor *weight, const ct_tensor *indices, double max_norm,
                                 double norm_type);

/* embedding of all entries (scaled by per_sample_weights), reduced into B + 1 rows by bag
   (index_add; scatter_reduce amax for max), the last (left-out entries) dropped; mean divides
   by the bag sizes. */
static ct_status ct__bag_composite(ct_op_call *c)
{
    ct_tensor *w = (ct_tensor *)(uintptr_t)c->inputs[0];
    const ct_tensor *psw = c->inputs[3];
    int64_t mode = c->attrs[1].i;
    ct_scope_begin();
    ct__bag_plan p;
    memset(&p, 0, sizeof p);
    if (!isnan(c->attrs[5].f) && !ct__emb_renorm(w, c->inputs[1], c->attrs[5].f, c->attrs[6].f)) {
        return ct__composite_end(c, NULL);
    }
    if (!ct__bag_plan_of(c, &p)) {
        return ct__composite_end(c, NULL);
    }
    ct_embedding_opts eo = ct_embedding_defaults();
    eo.padding_idx = c->attrs[4].i >= 0 ? c->attrs[4].i : CT__EMB_NONE;
    eo.scale_grad_by_freq = c->attrs[0].i != 0;
    int64_t flat = -1, s[2] = {p.B + 1, w->sizes[1]}, e[2] = {p.n, w->sizes[1]};
    ct_tensor *emb = ct_embedding(ct_reshape(c->inputs[1], &flat, 1), w, &eo);
    if (psw) {
        emb = ct_mul(emb, ct_unsqueeze(ct_reshape(psw, &flat, 1), 1));
    }
    ct_tensor *z = ct_zeros(s, 2, w->dtype), *r;
    if (mode == CT_EMBEDDING_BAG_MAX) {
        r = ct_scatter_reduce(z, 0, ct_expand(ct_unsqueeze(p.bag, 1), e, 2), emb, "amax", false);
    } else {
        r = ct_index_add(z, 0, p.bag, emb, 1.0);
    }
    r = ct_narrow(r, 0, 0, p.B);
    return ct__composite_end(c, mode == CT_EMBEDDING_BAG_MEAN ? ct_div(r, p.count) : r);
}

/* ---- descriptors ------------------------------------------------------------------------- */
#define CT__EMB_OP(SYM, NAME, SCHEMA, API, KIND, OPT, META, K, COMP, NODE, BW, RECORD)         \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, 0, OPT, NULL, \
                                       META, K, COMP, NODE, BW, 0u, RECORD, NULL};
CT__EMB_OP(embedding, "aten::embedding", "embedding(Tensor weight, Tensor indices, SymInt "
           "padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
           "ct_embedding", CT_OP_OTHER, 0u, ct__emb_meta, CT__K_ANY(ct__emb_kernel), NULL,
           "EmbeddingBackward0", ct__emb_backward, ct__emb_record)
CT__EMB_OP(embedding_dense_backward, "aten::embedding_dense_backward",
           "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
           "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor", "ct_backward (embedding)",
           CT_OP_OTHER, 0u, ct__emb_bw_meta, CT__K_FLOAT(ct__emb_bw_kernel), NULL,
           "EmbeddingDenseBackward0", ct__emb_bw_backward, ct__emb_bw_record)
CT__EMB_OP(embedding_renorm_, "aten::embedding_renorm_", "embedding_renorm_(Tensor(a!) self, "
           "Tensor indices, float max_norm, float norm_type) -> Tensor(a!)",
           "ct_embedding ct_embedding_bag", CT_OP_INPLACE, 0u, ct__emb_renorm_meta,
           CT__K_FLOAT(ct__emb_renorm_kernel), NULL, NULL, NULL, NULL)
CT__EMB_OP(embedding_bag, "aten::embedding_bag", "embedding_bag.padding_idx(Tensor weight, "
           "Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, "
           "Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, "
           "Tensor, Tensor, Tensor)", "ct_embedding_bag", CT_OP_OTHER, 0xcu, ct__bag_meta,
           CT__K_NONE, ct__bag_composite, NULL, NULL, NULL)
#undef CT__EMB_OP

/* ---- public functions -------------------------------------------------------------------- */
static ct_tensor *ct__emb_dense_backward(const ct_tensor *g, const ct_tensor *indices,
                                         int64_t num_weights, int64_t padding_idx, bool scale)
{
    const ct_tensor *in[2] = {g, indices};
    ct_op_call c;
    ct__call_init(&c, &ct__op_embedding_dense_backward, "ct_embedding_backward", in, 2);
    ct__call_i(&c, num_weights);
    ct__call_i(&c, padding_idx);
    ct__call_i(&c, scale);
    return ct__dispatch(&c);
}

static ct_tensor *ct__emb_renorm(ct_tensor *weight, const ct_tensor *indices, double max_norm,
                                 double norm_type)
{
    const ct_tensor *in[2] = {weight, indices};
    ct_op_call c;
    ct__call_init(&c, &ct__op_embedding_renorm_, "ct_embedding_renorm_", in, 2);
    ct__call_f(&c, max_norm);
    ct__call_f(&c, norm_type);
    ct_no_grad_begin();
    ct_tensor *r = ct__dispatch(&c);
    ct_no_grad_end();
    return r;
}

ct_embedding_opts ct_embedding_defaults(void)
{
    ct_embedding_opts o;
    o.padding_idx = CT__EMB_NONE;
    o.max_norm = NAN;
    o.norm_type = 2;
    o.scale_grad_by_freq = false;
    o.sparse = false;
    return o;
}

/* padding_idx normalized into [0, V) (-1 for None); false + error when out of range, in the
   words of F.embedding (kind 0), F.embedding_bag (1) or nn.EmbeddingBag (2) */
static bool ct__emb_padding(const char *fn, int64_t *pad, int64_t V, int kind)
{
    if (*pad == CT__EMB_NONE) {
        *pad = -1;
        return true;
    }
    if (*pad >= V || *pad < -V) {
        if (kind == 1) {
            ct__fail(CT_ERR_VALUE, fn, "padding_idx must be within the number of embeddings, "
                     "%lld through %lld, but got %lld", (long long)-V, (long long)(V - 1),
                     (long long)*pad);
        } else {
            ct__fail(CT_ERR_VALUE, fn, "%cadding_idx must be within num_embeddings",
                     kind ? 'p' : 'P');
        }
        return false;
    }
    *pad = *pad < 0 ? *pad + V : *pad;
    return true;
}

static bool ct__emb_sparse(const char *fn, bool sparse)
{
    if (sparse) {
        ct__fail(CT_ERR_UNSUPPORTED, fn, "sparse gradients (sparse=True) are not supported");
    }
    return !sparse;
}

ct_tensor *ct_embedding(const ct_tensor *input, ct_tensor *weight, const ct_embedding_opts *opts)
{
    const char *fn = "ct_embedding";
    if (ct__null(fn, input) || ct__null(fn, weight)) {
        return NULL;
    }
    ct_embedding_opts o = opts ? *opts : ct_embedding_defaults();
    int64_t pad = o.padding_idx;
    if (!ct__emb_sparse(fn, o.sparse) || !ct__emb_check_weight(fn, weight) ||
        !ct__emb_padding(fn, &pad, weight->sizes[0], 0)) {
        return NULL;
    }
    if (!isnan(o.max_norm) && !ct__emb_renorm(weight, input, o.max_norm, o.norm_type)) {
        return NULL;
    }
    const ct_tensor *in[2] = {weight, input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_embedding, fn, in, 2);
    ct__call_i(&c, pad);
    ct__call_i(&c, o.scale_grad_by_freq);
    ct__call_i(&c, o.sparse);
    return ct__dispatch(&c);
}

/* The double backward: gg[indices] with the padding entries zero */
static ct_tensor *ct__emb_double_backward(const ct_tensor *gg, const ct_tensor *indices,
                                          int64_t padding_idx)
{
    ct_tensor *r = ct_embedding(indices, (ct_tensor *)(uintptr_t)gg, NULL);
    if (padding_idx < 0) {
        return r;
    }
    return ct_mul(r, ct_unsqueeze(ct_to_dtype(ct_ne(indices, ct_scalar_tensor(
                                      (double)padding_idx, indices->dtype)), gg->dtype), -1));
}

ct_embedding_bag_opts ct_embedding_bag_defaults(void)
{
    ct_embedding_bag_opts o;
    o.max_norm = NAN;
    o.norm_type = 2;
    o.scale_grad_by_freq = false;
    o.mode = CT_EMBEDDING_BAG_MEAN;
    o.sparse = false;
    o.include_last_offset = false;
    o.padding_idx = CT__EMB_NONE;
    return o;
}

ct_tensor *ct_embedding_bag(const ct_tensor *input, ct_tensor *weight, const ct_tensor *offsets,
                            const ct_tensor *per_sample_weights, const ct_embedding_bag_opts *opts)
{
    const char *fn = "ct_embedding_bag";
    if (ct__null(fn, input) || ct__null(fn, weight)) {
        return NULL;
    }
    ct_embedding_bag_opts o = opts ? *opts : ct_embedding_bag_defaults();
    int64_t pad = o.padding_idx;
    if (!ct__check_enum(fn, "mode", (int)o.mode, 3) || !ct__emb_sparse(fn, o.sparse) ||
        !ct__emb_check_weight(fn, weight) || !ct__emb_padding(fn, &pad, weight->sizes[0], 1)) {
        return NULL;
    }
    const ct_tensor *in[4] = {weight, input, offsets, per_sample_weights};
    ct_op_call c;
    ct__call_init(&c, &ct__op_embedding_bag, fn, in, 4);
    ct__call_i(&c, o.scale_grad_by_freq);
    ct__call_i(&c, o.mode);
    ct__call_i(&c, o.sparse);
    ct__call_i(&c, o.include_last_offset);
    ct__call_i(&c, pad);
    ct__call_f(&c, o.max_norm);
    ct__call_f(&c, o.norm_type);
    return ct__dispatch(&c);
}

/* ---- modules ----------------------------------------------------------------------------- */
/* Whether m is a module named name (typed forwards); CT_ERR_VALUE otherwise. */
static bool ct__emb_module_is(const char *fn, const ct_module *m, const char *name)
{
    const char *got = ct_module_name(m);
    bool ok = got && ct_module_user(m) && !strcmp(got, name);
    if (!ok) {
        ct__fail(CT_ERR_VALUE, fn, "expected a %s module, got %s", name, got ? got : "NULL");
    }
    return ok;
}

/* A module named name with a copy of the cfg_size bytes at cfg and parameter weight (V, D)
   float32 N(0, 1) from the default generator, row pad (>= 0) zeroed. */
static ct_module *ct__emb_module(const char *name, ct_module_forward_fn forward, const void *cfg,
                                 size_t cfg_size, int64_t V, int64_t D, int64_t pad)
{
    int64_t s[2] = {V, D};
    ct_tensor *w = ct__tensor_new(name, s, 2, CT_FLOAT32);
    void *u = w ? ct__malloc(cfg_size) : NULL;
    ct_module *m = u ? ct_module_new(name, forward, u, ct__free) : NULL;
    if (!m) {
        if (w && !u) {
            ct__fail(CT_ERR_OOM, name, "out of memory");
        }
        ct__free(u);
        ct__release(w);
        return NULL;
    }
    memcpy(u, cfg, cfg_size);
    bool ok = ct_init_normal_(w, 0, 1, NULL) != NULL;
    if (ok && pad >= 0) {
        memset(ct__data(w) + (size_t)(pad * D) * sizeof(float), 0, (size_t)D * sizeof(float));
    }
    ok = ok && ct_module_register_parameter(m, "weight", w) == CT_OK;
    ct__release(w); /* the module holds it */
    if (!ok) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

ct_module *ct_embedding_new(int64_t num_embeddings, int64_t embedding_dim,
                            const ct_embedding_opts *opts)
{
    const char *fn = "Embedding";
    ct_embedding_opts o = opts ? *opts : ct_embedding_defaults();
    int64_t pad = o.padding_idx;
    if (!ct__emb_sparse(fn, o.sparse) || !ct__emb_padding(fn, &pad, num_embeddings, 0)) {
        return NULL;
    }
    o.padding_idx = pad < 0 ? CT__EMB_NONE : pad;
    return ct__emb_module(fn, ct_embedding_forward, &o, sizeof o, num_embeddings, embedding_dim,
                          pad);
}

ct_tensor *ct_embedding_forward(ct_module *m, const ct_tensor *input)
{
    const char *fn = "ct_embedding_forward";
    if (ct__null(fn, m) || ct__null(fn, input) || !ct__emb_module_is(fn, m, "Embedding")) {
        return NULL;
    }
    return ct_embedding(input, ct_module_get_parameter(m, "weight"),
                        (const ct_embedding_opts *)ct_module_user(m));
}

static ct_tensor *ct__emb_bag_forward1(ct_module *m, const ct_tensor *input)
{
    return ct_embedding_bag_forward(m, input, NULL, NULL);
}

ct_module *ct_embedding_bag_new(int64_t num_embeddings, int64_t embedding_dim,
                                const ct_embedding_bag_opts *opts)
{
    const char *fn = "EmbeddingBag";
    ct_embedding_bag_opts o = opts ? *opts : ct_embedding_bag_defaults();
    int64_t pad = o.padding_idx;
    if (!ct__check_enum(fn, "mode", (int)o.mode, 3) || !ct__emb_sparse(fn, o.sparse) ||
        !ct__emb_padding(fn, &pad, num_embeddings, 2)) {
        return NULL;
    }
    o.padding_idx = pad < 0 ? CT__EMB_NONE : pad;
    return ct__emb_module(fn, ct__emb_bag_forward1, &o, sizeof o, num_embeddings, embedding_dim,
                          pad);
}

ct_tensor *ct_embedding_bag_forward(ct_module *m, const ct_tensor *input, const ct_tensor *offsets,
                                    const ct_tensor *per_sample_weights)
{
    const char *fn = "ct_embedding_bag_forward";
    if (ct__null(fn, m) || ct__null(fn, input) || (offsets && ct__null(fn, offsets)) ||
        (per_sample_weights && ct__null(fn, per_sample_weights)) ||
        !ct__emb_module_is(fn, m, "EmbeddingBag")) {
        return NULL;
    }
    return ct_embedding_bag(input, ct_module_get_parameter(m, "weight"), offsets,
                            per_sample_weights, (const ct_embedding_bag_opts *)ct_module_user(m));
}
CT__GLUE_END
#undef CT__EMB_NONE
