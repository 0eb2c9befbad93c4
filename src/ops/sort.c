/* ops/sort.c - sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, quantile,
 * nanquantile, unique, unique_consecutive, isin, searchsorted, bucketize, bincount, histc.
 *
 * Legend: n is the length of a line (input's size at dim), the grid is input's other dims
 * (row-major, rows = numel / n lines). Each element becomes an unsigned key whose ascending
 * order is the requested order (NaN above +inf, -0.0 equal to 0.0, complemented for
 * descending), so one stable LSD radix sort of (key, index) pairs over the key's bytes (a byte
 * every key shares is skipped) serves every dtype; short lines use an insertion sort. Lines
 * are split between threads (each with its own scratch), never one line, so results are the
 * same for any thread count.
 */
#include "../core/internal.h"
#include "sort.h"
#include "index.h"
#include "pointwise.h"
#include "reduce.h"
#include "view.h"

/* ---- keys ---------------------------------------------------------------------------------- */
CT__VECTORIZE_BEGIN
/* Branch-free (random signs would mispredict): + 0.0 turns -0.0 into 0.0; a set sign bit flips
   every bit, else only the sign bit; any NaN becomes the largest key. */
static uint64_t ct__srt_key_f32(float v)
{
    uint32_t u;
    v += 0.0f;
    memcpy(&u, &v, sizeof u);
    uint32_t k = u ^ ((0u - (u >> 31)) | 0x80000000u);
    return v != v ? 0xFFFFFFFFu : k;
}

static uint64_t ct__srt_key_f64(double v)
{
    uint64_t u;
    v += 0.0;
    memcpy(&u, &v, sizeof u);
    uint64_t k = u ^ ((0u - (u >> 63)) | 0x8000000000000000u);
    return v != v ? UINT64_MAX : k;
}

/* The key of a NaN in dtype dt (no integer key is ever equal to it: only floats have one). */
static uint64_t ct__srt_nan_key(ct_dtype dt)
{
    return dt == CT_FLOAT32 ? 0xFFFFFFFFu : UINT64_MAX;
}

static bool ct__srt_has_nan(ct_dtype dt)
{
    return dt == CT_FLOAT32 || dt == CT_FLOAT64;
}

/* (a contiguous line gets its own loop, which the compiler vectorizes) */
#define CT__SRT_KEYS(T, EXPR)                                                                      \
    do {                                                                                           \
        const T *q = (const T *)(const void *)p;                                                   \
        if (stride == 1) {                                                                         \
            for (int64_t j = 0; j < n; j++) {                                                      \
                T v = q[j];                                                                        \
                key[j] = (uint64_t)(EXPR) ^ flip;                                                  \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t j = 0; j < n; j++) {                                                      \
                T v = q[j * stride];                                                               \
                key[j] = (uint64_t)(EXPR) ^ flip;                                                  \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* keys of the n elements at p (stride in elements) of dtype dt, complemented when desc. */
static void ct__srt_keys(const char *p, int64_t stride, int64_t n, ct_dtype dt, bool desc,
                         uint64_t *key)
{
    size_t bytes = ct_dtype_size(dt);
    uint64_t flip = !desc ? 0 : bytes == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * bytes)) - 1;
    switch (dt) {
    case CT_BOOL: CT__SRT_KEYS(bool, v ? 1u : 0u); break;
    case CT_UINT8: CT__SRT_KEYS(uint8_t, v); break;
    case CT_INT8: CT__SRT_KEYS(int8_t, (uint8_t)((uint8_t)v ^ 0x80u)); break;
    case CT_INT16: CT__SRT_KEYS(int16_t, (uint16_t)((uint16_t)v ^ 0x8000u)); break;
    case CT_INT32: CT__SRT_KEYS(int32_t, (uint32_t)v ^ 0x80000000u); break;
    case CT_INT64: CT__SRT_KEYS(int64_t, (uint64_t)v ^ 0x8000000000000000u); break;
    case CT_FLOAT32: CT__SRT_KEYS(float, ct__srt_key_f32(v)); break;
    default: CT__SRT_KEYS(double, ct__srt_key_f64(v)); break;
    }
}
#undef CT__SRT_KEYS

/* ---- the stable sort of (key, index) pairs --------------------------------------------------- */
/* Sorts key[0..n) with idx (0..n-1 on entry) stably, using k2/i2 (n each) as scratch; width is
   the key's size in bytes. */
static void ct__srt_sort(uint64_t *key, int64_t *idx, uint64_t *k2, int64_t *i2, int64_t n,
                         int width)
{
    if (n <= 32) {
        for (int64_t j = 1; j < n; j++) {
            uint64_t kk = key[j];
            int64_t ii = idx[j], m = j;
            for (; m > 0 && key[m - 1] > kk; m--) {
                key[m] = key[m - 1];
                idx[m] = idx[m - 1];
            }
            key[m] = kk;
            idx[m] = ii;
        }
        return;
    }
    int64_t count[8][256];
    memset(count, 0, sizeof(int64_t) * 256 * (size_t)width);
    for (int64_t j = 0; j < n; j++) {
        for (int b = 0; b < width; b++) {
            count[b][(key[j] >> (8 * b)) & 0xFF]++;
        }
    }
    uint64_t *ks = key, *kd = k2;
    int64_t *is = idx, *id = i2;
    for (int b = 0; b < width; b++) {
        int shift = 8 * b;
        if (count[b][(key[0] >> shift) & 0xFF] == n) {
            continue;
        }
        int64_t pos[256], sum = 0;
        for (int v = 0; v < 256; v++) {
            pos[v] = sum;
            sum += count[b][v];
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t at = pos[(ks[j] >> shift) & 0xFF]++;
            kd[at] = ks[j];
            id[at] = is[j];
        }
        uint64_t *kt = ks;
        int64_t *it = is;
        ks = kd, kd = kt, is = id, id = it;
    }
    if (ks != key) {
        memcpy(key, ks, sizeof(uint64_t) * (size_t)n);
        memcpy(idx, is, sizeof(int64_t) * (size_t)n);
    }
}

/* The first k pairs of the stable order of key[0..n) into bk/bi (k each), for small k: one
   pass keeping the best k seen, in order. */
static void ct__srt_select_small(const uint64_t *key, int64_t n, int64_t k, uint64_t *bk,
                                 int64_t *bi)
{
    int64_t m = 0;
    uint64_t worst = UINT64_MAX; /* a key must beat it (once k are kept) to get in */
    for (int64_t j0 = 0; j0 < n; j0 += 16) {
        int64_t j1 = n - j0 < 16 ? n : j0 + 16;
        int any = m < k;
        for (int64_t j = j0; j < j1; j++) { /* most blocks hold no candidate */
            any |= key[j] < worst;
        }
        for (int64_t j = j0; any && j < j1; j++) {
            uint64_t kk = key[j];
            if (m == k && kk >= worst) {
                continue;
            }
            int64_t pos = m == k ? k - 1 : m++;
            for (; pos > 0 && bk[pos - 1] > kk; pos--) {
                bk[pos] = bk[pos - 1];
                bi[pos] = bi[pos - 1];
            }
            bk[pos] = kk;
            bi[pos] = j;
            worst = m == k ? bk[k - 1] : UINT64_MAX;
        }
    }
}
CT__VECTORIZE_END

/* PyTorch's quickselect (kthvalue's quick_select_template, Sedgewick's partition with a median
   of three) on (key, idx), so that the k-th pair and its index are PyTorch's. */
static void ct__srt_swap(uint64_t *key, int64_t *idx, int64_t a, int64_t b)
{
    uint64_t kt = key[a];
    int64_t it = idx[a];
    key[a] = key[b];
    idx[a] = idx[b];
    key[b] = kt;
    idx[b] = it;
}

static void ct__srt_quickselect(uint64_t *key, int64_t *idx, int64_t n, int64_t k)
{
    int64_t L = 0, R = n - 1;
    for (;;) {
        if (R <= L) {
            return;
        }
        if (R == L + 1) {
            if (key[L] > key[R]) {
                ct__srt_swap(key, idx, L, R);
            }
            return;
        }
        ct__srt_swap(key, idx, (L + R) >> 1, L + 1);
        if (key[L + 1] > key[R]) {
            ct__srt_swap(key, idx, L + 1, R);
        }
        if (key[L] > key[R]) {
            ct__srt_swap(key, idx, L, R);
        }
        if (key[L + 1] > key[L]) {
            ct__srt_swap(key, idx, L + 1, L);
        }
        int64_t i = L + 1, j = R;
        uint64_t piv = key[L];
        for (;;) {
            do {
                i++;
            } while (piv > key[i]);
            do {
                j--;
            } while (key[j] > piv);
            if (j < i) {
                break;
            }
            ct__srt_swap(key, idx, i, j);
        }
        ct__srt_swap(key, idx, L, j);
        if (j <= k) {
            L = i;
        }
        if (j >= k) {
            R = j - 1;
        }
    }
}

/* ---- the line kernel ------------------------------------------------------------------------- */
typedef enum ct__srt_mode {
    CT__SRT_SORT,
    CT__SRT_TOPK,
    CT__SRT_KTH,
    CT__SRT_MEDIAN,
    CT__SRT_NANMEDIAN,
    CT__SRT_MODE,
    CT__SRT_QUANTILE,
    CT__SRT_NANQUANTILE
} ct__srt_mode;

/* What meta computes (c->state, in the public function's frame). */
typedef struct ct__srt_state {
    bool all;      /* over all elements as one line (median(), quantile with dim None) */
    int dim;       /* the dim argument, wrapped by meta (-1 there when all) */
    int64_t k;     /* topk's k, kthvalue's k */
    bool flag;     /* sort: descending; topk: largest */
    bool keepdim;  /* reductions */
    bool squeezed; /* the reduced dim was removed (backward unsqueezes) */
    int64_t nq;    /* quantile: the number of q values */
    int interp;    /* quantile: the interpolation */
} ct__srt_state;

/* One call's lines. x is read at ox + j * lx (line j) for the line at grid offset ox; outputs
   likewise. Quantile: v (nq, rows) at qi * lv + row; lo/hi/w (input's shape with nq at dim)
   at oq + qi * lq. */
typedef struct ct__srt_job {
    int mode;
    ct_dtype dt;
    size_t esz;
    bool desc;
    int64_t n, k, rows, per_task;
    int nd;
    int64_t gsz[CT_MAX_DIMS], gx[CT_MAX_DIMS], gv[CT_MAX_DIMS], gq[CT_MAX_DIMS];
    int64_t lx, lv, lq;
    const char *x;
    char *v, *w;
    int64_t *ix, *lo, *hi;
    const double *q;
    int64_t nq;
    int interp;
    char *scratch; /* per slot: 2 n keys and 2 n indices */
} ct__srt_job;

/* Writes the m pairs idx[0..m) of a line: values (x's elements) at v + ov + j * lv, indices at
   ix + ov + j * lv (values and indices share the layout). */
#define CT__SRT_PUT(T)                                                                             \
    do {                                                                                           \
        for (int64_t j = 0; j < m; j++) {                                                          \
            ((T *)(void *)v)[j * lv] = ((const T *)(const void *)x)[idx[j] * lx];                  \
            ix[j * lv] = idx[j];                                                                   \
        }                                                                                          \
    } while (0)
static void ct__srt_put(const ct__srt_job *jb, int64_t ox, int64_t ov, const int64_t *idx,
                        int64_t m)
{
    const char *x = jb->x + (size_t)ox * jb->esz;
    char *v = jb->v + (size_t)ov * jb->esz;
    int64_t *ix = jb->ix + ov, lx = jb->lx, lv = jb->lv;
    switch (jb->esz) {
    case 1: CT__SRT_PUT(uint8_t); break;
    case 2: CT__SRT_PUT(uint16_t); break;
    case 4: CT__SRT_PUT(uint32_t); break;
    default: CT__SRT_PUT(uint64_t); break;
    }
}
#undef CT__SRT_PUT

/* The first index in line order whose key is NaN's, or -1. */
static int64_t ct__srt_first_nan(const uint64_t *key, int64_t n, uint64_t nan_key)
{
    for (int64_t j = 0; j < n; j++) {
        if (key[j] == nan_key) {
            return j;
        }
    }
    return -1;
}

/* mode: over the stably sorted pairs, the smallest of the most frequent keys (NaNs count
   apart) and the last index of its run. */
static int64_t ct__srt_mode_pick(const uint64_t *key, const int64_t *idx, int64_t n,
                                 uint64_t nan_key, bool has_nan)
{
    int64_t best = 0, best_at = 0, run = 0;
    for (int64_t j = 0; j < n; j++) {
        run++;
        bool same = j + 1 < n && key[j + 1] == key[j] && !(has_nan && key[j] == nan_key);
        if (!same) {
            if (run > best) {
                best = run;
                best_at = j;
            }
            run = 0;
        }
    }
    return idx[best_at];
}

/* PyTorch's lerp (its vectorized form: from the nearer end, one fused multiply-add), in the
   line's dtype. */
static double ct__srt_lerp(ct_dtype dt, double a, double b, double w)
{
    if (dt == CT_FLOAT32) {
        float fa = (float)a, fb = (float)b, fw = (float)w;
        return fabsf(fw) < 0.5f ? fmaf(fw, fb - fa, fa) : fmaf(fw - 1.0f, fb - fa, fb);
    }
    return fabs(w) < 0.5 ? fma(w, b - a, a) : fma(w - 1.0, b - a, b);
}

/* A value of x's line at index i, as a double (quantile's float dtypes). */
static double ct__srt_at(const ct__srt_job *jb, int64_t ox, int64_t i)
{
    const char *p = jb->x + (size_t)(ox + i * jb->lx) * jb->esz;
    return jb->dt == CT_FLOAT32 ? (double)*(const float *)(const void *)p
                                : *(const double *)(const void *)p;
}

/* quantile over a stably sorted line (idx): PyTorch's ranks in the input's dtype, then the
   value and what backward needs (the two indices and the weight). */
static void ct__srt_quantile_line(const ct__srt_job *jb, int64_t row, int64_t ox, int64_t oq,
                                  const uint64_t *key, const int64_t *idx)
{
    int64_t n = jb->n, nnan = 0;
    uint64_t nan_key = ct__srt_nan_key(jb->dt);
    for (int64_t j = n - 1; j >= 0 && key[j] == nan_key; j--) {
        nnan++;
    }
    bool f32 = jb->dt == CT_FLOAT32;
    for (int64_t qi = 0; qi < jb->nq; qi++) {
        double rank;
        if (jb->mode == CT__SRT_NANQUANTILE) {
            rank = jb->q[qi] * (double)(n - nnan - 1);
            rank = rank < 0 ? 0 : rank;
        } else {
            rank = nnan ? (double)(n - 1) : jb->q[qi] * (double)(n - 1);
        }
        rank = f32 ? (double)(float)rank : rank;
        switch (jb->interp) {
        case CT_QUANTILE_LOWER: rank = floor(rank); break;
        case CT_QUANTILE_HIGHER: rank = ceil(rank); break;
        case CT_QUANTILE_NEAREST: rank = nearbyint(rank); break;
        default: break;
        }
        int64_t below = (int64_t)rank, above = (int64_t)ceil(rank);
        double w = jb->interp == CT_QUANTILE_MIDPOINT ? 0.5 : rank - (double)below;
        double a = ct__srt_at(jb, ox, idx[below]), b = ct__srt_at(jb, ox, idx[above]);
        double out = (jb->interp == CT_QUANTILE_LINEAR || jb->interp == CT_QUANTILE_MIDPOINT)
                         ? ct__srt_lerp(jb->dt, a, b, w)
                         : a;
        if (!(jb->interp == CT_QUANTILE_LINEAR || jb->interp == CT_QUANTILE_MIDPOINT)) {
            w = 0;
            above = below;
        }
        int64_t at = oq + qi * jb->lq;
        jb->lo[at] = idx[below];
        jb->hi[at] = idx[above];
        if (f32) {
            ((float *)(void *)jb->v)[qi * jb->lv + row] = (float)out;
            ((float *)(void *)jb->w)[at] = (float)w;
        } else {
            ((double *)(void *)jb->v)[qi * jb->lv + row] = out;
            ((double *)(void *)jb->w)[at] = w;
        }
    }
}

/* One line: keys, then the mode's selection and its outputs. */
static void ct__srt_line(const ct__srt_job *jb, int64_t row, uint64_t *key, int64_t *idx,
                         uint64_t *k2, int64_t *i2)
{
    int64_t ox = 0, ov = 0, oq = 0, r = row, n = jb->n;
    for (int d = jb->nd - 1; d >= 0; d--) {
        int64_t p = r % jb->gsz[d];
        r /= jb->gsz[d];
        ox += p * jb->gx[d];
        ov += p * jb->gv[d];
        oq += p * jb->gq[d];
    }
    int width = (int)ct_dtype_size(jb->dt);
    uint64_t nan_key = ct__srt_nan_key(jb->dt);
    bool has_nan = ct__srt_has_nan(jb->dt);
    ct__srt_keys(jb->x + (size_t)ox * jb->esz, jb->lx, n, jb->dt, jb->desc, key);
    if (jb->mode == CT__SRT_TOPK && jb->k <= 32) {
        ct__srt_select_small(key, n, jb->k, k2, i2);
        ct__srt_put(jb, ox, ov, i2, jb->k);
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        idx[j] = j;
    }
    int64_t pick;
    switch (jb->mode) {
    case CT__SRT_TOPK:
        ct__srt_sort(key, idx, k2, i2, n, width);
        ct__srt_put(jb, ox, ov, idx, jb->k);
        return;
    case CT__SRT_KTH:
        ct__srt_quickselect(key, idx, n, jb->k - 1);
        ct__srt_put(jb, ox, ov, idx + jb->k - 1, 1);
        return;
    case CT__SRT_MEDIAN:
    case CT__SRT_NANMEDIAN: {
        int64_t first = has_nan ? ct__srt_first_nan(key, n, nan_key) : -1, nnan = 0;
        for (int64_t j = 0; first >= 0 && j < n; j++) {
            nnan += key[j] == nan_key;
        }
        if (first >= 0 && (jb->mode == CT__SRT_MEDIAN || nnan == n)) {
            pick = first;
        } else {
            ct__srt_sort(key, idx, k2, i2, n, width);
            pick = idx[(n - nnan - 1) / 2];
        }
        ct__srt_put(jb, ox, ov, &pick, 1);
        return;
    }
    case CT__SRT_MODE:
        ct__srt_sort(key, idx, k2, i2, n, width);
        pick = ct__srt_mode_pick(key, idx, n, nan_key, has_nan);
        ct__srt_put(jb, ox, ov, &pick, 1);
        return;
    case CT__SRT_QUANTILE:
    case CT__SRT_NANQUANTILE:
        ct__srt_sort(key, idx, k2, i2, n, width);
        ct__srt_quantile_line(jb, row, ox, oq, key, idx);
        return;
    default:
        ct__srt_sort(key, idx, k2, i2, n, width);
        ct__srt_put(jb, ox, ov, idx, n);
        return;
    }
}

static void ct__srt_task(int64_t task, int slot, void *ctx)
{
    const ct__srt_job *jb = (const ct__srt_job *)ctx;
    size_t n = (size_t)jb->n;
    uint64_t *key = (uint64_t *)(void *)(jb->scratch + (size_t)slot * 32 * n);
    int64_t *idx = (int64_t *)(void *)(key + n);
    uint64_t *k2 = (uint64_t *)(void *)(idx + n);
    int64_t *i2 = (int64_t *)(void *)(k2 + n);
    int64_t end = (task + 1) * jb->per_task < jb->rows ? (task + 1) * jb->per_task : jb->rows;
    for (int64_t row = task * jb->per_task; row < end; row++) {
        ct__srt_line(jb, row, key, idx, k2, i2);
    }
}

/* Runs every line of the job, in parallel over groups of lines. */
static ct_status ct__srt_run(const char *fn, ct__srt_job *jb)
{
    if (jb->rows == 0 || jb->n == 0) {
        return CT_OK;
    }
    jb->per_task = jb->n >= CT__GRAIN ? 1 : CT__GRAIN / jb->n;
    int64_t ntasks = (jb->rows + jb->per_task - 1) / jb->per_task;
    int nt = ntasks < 2 ? 1 : ct__parallel_threads();
    nt = ntasks < nt ? (int)ntasks : nt;
    jb->scratch = (char *)ct__malloc((size_t)jb->n * 32 * (size_t)nt);
    if (!jb->scratch) {
        return ct__fail(CT_ERR_OOM, fn, "out of memory for the scratch of %lld lines",
                        (long long)nt);
    }
    ct__parallel_tasks(ntasks, nt, ct__srt_task, jb);
    ct__free(jb->scratch);
    return CT_OK;
}

CT__GLUE_BEGIN
/* Fills the job's grid from x (its dims but dim; all of x's elements as one line when x is
   contiguous and dim is -1) and the strides of the outputs laid out as the shape `osizes`
   (x's with size m at dim), contiguous. */
static void ct__srt_grid(ct__srt_job *jb, const ct_tensor *x, int dim, int64_t m)
{
    int64_t os[CT_MAX_DIMS], ostr[CT_MAX_DIMS];
    jb->x = ct__data(x);
    jb->dt = x->dtype;
    jb->esz = ct_dtype_size(x->dtype);
    jb->nd = 0;
    if (dim < 0 || x->ndim == 0) {
        jb->n = ct_numel(x);
        jb->lx = 1;
        jb->lv = 1;
        jb->lq = 1;
        jb->rows = 1;
        return;
    }
    memcpy(os, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    os[dim] = m;
    ct__contiguous_strides(os, x->ndim, ostr);
    for (int d = 0; d < x->ndim; d++) {
        if (d == dim) {
            continue;
        }
        jb->gsz[jb->nd] = x->sizes[d];
        jb->gx[jb->nd] = x->strides[d];
        jb->gv[jb->nd] = ostr[d];
        jb->gq[jb->nd] = ostr[d];
        jb->nd++;
    }
    jb->n = x->sizes[dim];
    jb->lx = x->strides[dim];
    jb->lv = ostr[dim];
    jb->lq = ostr[dim];
    jb->rows = jb->n ? ct_numel(x) / jb->n : ct__numel(jb->gsz, jb->nd);
}

/* ---- derivative formulas --------------------------------------------------------------------- */
/* sort, topk, kthvalue, median/nanmedian/mode over a dim: zeros of input's shape with the
   gradient scattered to the saved indices (PyTorch's value_selecting_reduction_backward). */
static void ct__srt_select_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *ix = ct__saved(n, 0);
    const ct__edge *e = &n->next[0];
    int dim = (int)n->i[0];
    if (n->i[1]) {
        g = ct_unsqueeze(g, dim);
        ix = ct_unsqueeze(ix, dim);
    }
    gi[0] = ct_scatter(ct_zeros(e->sizes, e->ndim, g->dtype), dim, ix, g);
}

/* The node keeps the indices (output 1), the dim and whether it was squeezed. */
static void ct__srt_select_record(ct_node *n, const ct_op_call *c)
{
    const ct__srt_state *s = (const ct__srt_state *)c->state;
    n->i[0] = s->dim < 0 ? 0 : s->dim;
    n->i[1] = s->squeezed;
    ct__save(n, c->outputs[1]);
}

/* median()/nanmedian() over all elements: the gradient split evenly among the elements equal
   to the result (NaN counting as equal to a NaN result), as PyTorch's
   evenly_distribute_backward. */
static void ct__srt_median_all_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *y = ct__saved(n, 1);
    ct_tensor *mask = ct_logical_or(ct_eq(x, y), ct_logical_and(ct_isnan(x), ct_isnan(y)));
    ct_tensor *m = ct_to_dtype(mask, g->dtype);
    gi[0] = ct_mul(m, ct_div(g, ct_sum(m)));
}

/* quantile: each value is lerp(sorted[lo], sorted[hi], w), so the gradient adds g * (1 - w) at
   lo and g * w at hi (saved in input's shape with nq at dim, or (nq) over all elements). */
static void ct__srt_quantile_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *lo = ct__saved(n, 0), *hi = ct__saved(n, 1), *w = ct__saved(n, 2);
    const ct__edge *e = &n->next[0];
    int dim = (int)n->i[0];
    int64_t sizes[CT_MAX_DIMS], perm[CT_MAX_DIMS];
    int nd = 1;
    sizes[0] = lo->sizes[dim < 0 ? 0 : dim];
    for (int d = 0; dim >= 0 && d < e->ndim; d++) {
        if (d != dim) {
            sizes[nd++] = e->sizes[d];
        }
    }
    const ct_tensor *gq = ct_reshape(g, sizes, nd);
    if (dim > 0) {
        for (int d = 0; d < e->ndim; d++) {
            perm[d] = d < dim ? d + 1 : d == dim ? 0 : d;
        }
        gq = ct_permute(gq, perm, e->ndim);
    }
    int64_t numel = ct__numel(e->sizes, e->ndim);
    ct_tensor *gw = ct_mul(gq, w), *gl = ct_mul(gq, ct_add_scalar(ct_neg(w), 1.0));
    ct_tensor *zeros =
        dim < 0 ? ct_zeros(&numel, 1, g->dtype) : ct_zeros(e->sizes, e->ndim, g->dtype);
    ct_tensor *r =
        ct_scatter_add(ct_scatter_add(zeros, dim < 0 ? 0 : dim, lo, gl), dim < 0 ? 0 : dim, hi, gw);
    gi[0] = dim < 0 ? ct_reshape(r, e->sizes, e->ndim) : r;
}

static void ct__srt_quantile_record(ct_node *n, const ct_op_call *c)
{
    const ct__srt_state *s = (const ct__srt_state *)c->state;
    n->i[0] = s->dim;
    ct__save(n, c->outputs[1]);
    ct__save(n, c->outputs[2]);
    ct__save(n, c->outputs[3]);
}

/* ---- meta ------------------------------------------------------------------------------------ */
static bool ct__srt_is_reduction(int mode)
{
    return mode == CT__SRT_KTH || mode == CT__SRT_MEDIAN || mode == CT__SRT_NANMEDIAN ||
           mode == CT__SRT_MODE;
}

/* PyTorch's name of a reduction in its messages. */
static const char *ct__srt_name(int mode)
{
    return mode == CT__SRT_KTH ? "kthvalue" : mode == CT__SRT_MODE ? "mode" : "median";
}

/* The argument checks of the line family over a dim (PyTorch's order). */
static bool ct__srt_check(const ct_op_call *c, const ct_tensor *x, int mode, int dim, int64_t k)
{
    int64_t n = x->ndim ? x->sizes[dim] : 1;
    if (mode == CT__SRT_TOPK && x->dtype == CT_BOOL) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "topk does not support bool dtypes on CPU");
    }
    if (mode == CT__SRT_TOPK && (k < 0 || k > n)) {
        return !ct__fail(CT_ERR_VALUE, c->fn, "selected index k out of range");
    }
    if (ct__srt_is_reduction(mode) && n == 0) {
        return !ct__fail(CT_ERR_INDEX, c->fn,
                         "%s(): Expected reduction dim %d to have non-zero size.",
                         ct__srt_name(mode), dim);
    }
    if (mode == CT__SRT_KTH && (k < 1 || k > n)) {
        return !ct__fail(CT_ERR_VALUE, c->fn,
                         "kthvalue(): selected number k out of range for dimension %d", dim);
    }
    return true;
}

/* sort, topk, kthvalue, median, nanmedian, mode (input self; c->state a ct__srt_state): values
   in input's dtype and int64 indices (none over all elements). */
static bool ct__srt_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    ct__srt_state *s = (ct__srt_state *)c->state;
    int mode = c->op->variant;
    c->dtype = x->dtype;
    s->squeezed = false;
    if (s->all) {
        s->dim = -1;
        return ct__op_output(c, NULL, 0, x->dtype) != NULL;
    }
    int dim = ct__wrap_dim(c->fn, s->dim, x->ndim);
    if (dim < 0 || !ct__srt_check(c, x, mode, dim, s->k)) {
        return false;
    }
    s->dim = dim;
    int64_t sizes[CT_MAX_DIMS];
    int nd = x->ndim;
    memcpy(sizes, x->sizes, sizeof(int64_t) * (size_t)nd);
    if (nd > 0 && mode != CT__SRT_SORT) {
        sizes[dim] = mode == CT__SRT_TOPK ? s->k : 1;
    }
    if (nd > 0 && ct__srt_is_reduction(mode) && !s->keepdim) {
        memmove(sizes + dim, sizes + dim + 1, sizeof(int64_t) * (size_t)(nd - dim - 1));
        nd--;
        s->squeezed = true;
    }
    return ct__op_output(c, sizes, nd, x->dtype) && ct__op_output(c, sizes, nd, CT_INT64);
}

/* quantile and nanquantile (inputs self, q; c->state): the values, then what backward needs:
   the lower and upper int64 indices and the weights, in input's shape with nq at dim (or
   (nq) over all elements). */
static bool ct__quantile_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *q = c->inputs[1];
    ct__srt_state *s = (ct__srt_state *)c->state;
    int dim = -1;
    if (s->interp < 0 || s->interp >= CT_QUANTILE_INTERPOLATION_COUNT) {
        return !ct__fail(CT_ERR_VALUE, c->fn,
                         "quantile() interpolation must be one of linear, lower, higher, midpoint "
                         "or nearest, but got %d",
                         s->interp);
    }
    if (!s->all && (dim = ct__wrap_dim(c->fn, s->dim, x->ndim)) < 0) {
        return false;
    }
    const char *bad = ct_numel(x) == 0 ? "quantile() input tensor must be non-empty"
                      : q->ndim > 1    ? "quantile() q must be a scalar or 1D tensor"
                      : !(x->dtype == CT_FLOAT32 || x->dtype == CT_FLOAT64)
                          ? "quantile() input tensor must be either float or double dtype"
                      : q->dtype != x->dtype
                          ? "quantile() q tensor must be same dtype as the input tensor"
                          : NULL;
    if (bad) {
        ct_status code = ct_numel(x) == 0 ? CT_ERR_VALUE
                         : q->ndim > 1    ? CT_ERR_SHAPE
                                          : CT_ERR_DTYPE;
        return !ct__fail(code, c->fn, "%s", bad);
    }
    s->nq = ct_numel(q);
    s->dim = s->all || x->ndim == 0 ? -1 : dim;
    if ((s->dim < 0 ? ct_numel(x) : x->sizes[s->dim]) > ((int64_t)1 << 24)) {
        /* PyTorch's limit: ranks are exact in float32 */
        return !ct__fail(CT_ERR_VALUE, c->fn, "quantile() input tensor is too large");
    }
    int64_t out[CT_MAX_DIMS + 1], aux[CT_MAX_DIMS];
    int no = 0, na = 1;
    if (q->ndim > 0) {
        out[no++] = s->nq;
    }
    for (int d = 0; d < x->ndim; d++) {
        if (s->dim < 0 || d != s->dim) {
            out[no] = s->dim < 0 ? 1 : x->sizes[d];
            no += s->keepdim || s->dim >= 0;
        } else if (s->keepdim) {
            out[no++] = 1;
        }
    }
    aux[0] = s->nq;
    if (s->dim >= 0) {
        memcpy(aux, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
        aux[s->dim] = s->nq;
        na = x->ndim;
    }
    c->dtype = x->dtype;
    return ct__op_output(c, out, no, x->dtype) && ct__op_output(c, aux, na, CT_INT64) &&
           ct__op_output(c, aux, na, CT_INT64) && ct__op_output(c, aux, na, x->dtype);
}

/* ---- kernels --------------------------------------------------------------------------------- */
/* x itself (a new reference) when contiguous with dtype dt, else a contiguous copy in dt;
   NULL after an error. Dropped with ct__release. */
static ct_tensor *ct__srt_contig(const char *fn, const ct_tensor *x, ct_dtype dt)
{
    if (x->dtype == dt && ct_is_contiguous(x)) {
        return ct_retain((ct_tensor *)(uintptr_t)x);
    }
    ct_tensor *t = ct__tensor_new(fn, x->sizes, x->ndim, dt);
    if (t) {
        ct__copy_kernel(t, x);
    }
    return t;
}
CT__GLUE_END

/* The line family on the CPU. */
static ct_status ct__srt_kernel(ct_op_call *c)
{
    const ct__srt_state *s = (const ct__srt_state *)c->state;
    int mode = c->op->variant;
    ct__srt_job jb;
    int64_t pick = 0;
    memset(&jb, 0, sizeof jb);
    jb.mode = mode;
    jb.desc = s->flag;
    jb.k = s->k;
    ct_tensor *x = s->all ? ct__srt_contig(c->fn, c->inputs[0], c->inputs[0]->dtype)
                          : ct_retain((ct_tensor *)(uintptr_t)c->inputs[0]);
    if (!x) {
        return ct_error_code();
    }
    int64_t n = x->ndim && s->dim >= 0 ? x->sizes[s->dim] : 1;
    ct__srt_grid(&jb, x, s->dim, mode == CT__SRT_SORT ? n : mode == CT__SRT_TOPK ? s->k : 1);
    jb.v = ct__data(c->outputs[0]);
    jb.ix = s->all ? &pick : (int64_t *)(void *)ct__data(c->outputs[1]);
    if (s->all && jb.n == 0) {
        ct__fill_contig(c->outputs[0], NAN);
    }
    ct_status st = ct_numel(c->outputs[0]) ? ct__srt_run(c->fn, &jb) : CT_OK;
    ct_release(x);
    return st;
}

/* quantile and nanquantile on the CPU: q checked, then the lines. */
static ct_status ct__quantile_kernel(ct_op_call *c)
{
    const ct__srt_state *s = (const ct__srt_state *)c->state;
    const ct_tensor *q = c->inputs[1];
    double *qv = (double *)ct__malloc(sizeof(double) * (size_t)(s->nq + 1));
    if (!qv) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    for (int64_t k = 0; k < s->nq; k++) {
        qv[k] = ct__load_f64(ct__data(q) + (size_t)(k * (q->ndim ? q->strides[0] : 0)) *
                                               ct_dtype_size(q->dtype),
                             q->dtype);
        if (!(qv[k] >= 0 && qv[k] <= 1)) {
            ct__free(qv);
            return ct__fail(CT_ERR_VALUE, c->fn, "quantile() q values must be in the range [0, 1]");
        }
    }
    ct_tensor *x = s->dim < 0 ? ct__srt_contig(c->fn, c->inputs[0], c->inputs[0]->dtype)
                              : ct_retain((ct_tensor *)(uintptr_t)c->inputs[0]);
    ct_status st = x ? CT_OK : ct_error_code();
    if (x) {
        ct__srt_job jb;
        memset(&jb, 0, sizeof jb);
        jb.mode = c->op->variant;
        jb.q = qv;
        jb.nq = s->nq;
        jb.interp = s->interp;
        ct__srt_grid(&jb, x, s->dim, s->nq);
        jb.lv = jb.rows;
        jb.v = ct__data(c->outputs[0]);
        jb.lo = (int64_t *)(void *)ct__data(c->outputs[1]);
        jb.hi = (int64_t *)(void *)ct__data(c->outputs[2]);
        jb.w = ct__data(c->outputs[3]);
        st = ct__srt_run(c->fn, &jb);
        ct_release(x);
    }
    ct__free(qv);
    return st;
}

/* Scratch of n keys and n indices, twice; NULL after an error. */
static uint64_t *ct__srt_scratch(const char *fn, int64_t n)
{
    uint64_t *p = (uint64_t *)ct__malloc(32 * (size_t)(n + 1));
    if (!p) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
    }
    return p;
}

/* Whether sorted pair j starts a new group of unique: a new key, or a NaN (NaNs stay apart). */
static bool ct__srt_new_group(const uint64_t *key, int64_t j, uint64_t nan_key, bool has_nan)
{
    return j == 0 || key[j] != key[j - 1] || (has_nan && key[j] == nan_key);
}

/* unique (variant 0: sorted) and unique_consecutive (variant 1) on the CPU: the flattened
   input's keys (sorted for unique), then the groups; outputs made here (their size depends on
   the data): the values, the inverse (input's shape) and the counts. */
static ct_status ct__unique_kernel(ct_op_call *c)
{
    const ct_tensor *in = c->inputs[0];
    int64_t n = ct_numel(in), ng = 0;
    ct_tensor *x = ct__srt_contig(c->fn, in, in->dtype);
    uint64_t *key = x ? ct__srt_scratch(c->fn, n) : NULL;
    if (!key) {
        ct_release(x);
        return ct_error_code();
    }
    int64_t *idx = (int64_t *)(void *)(key + n + 1);
    size_t esz = ct_dtype_size(in->dtype);
    uint64_t nan_key = ct__srt_nan_key(in->dtype);
    bool has_nan = ct__srt_has_nan(in->dtype);
    ct__srt_keys(ct__data(x), 1, n, in->dtype, false, key);
    for (int64_t j = 0; j < n; j++) {
        idx[j] = j;
    }
    if (c->op->variant == 0) {
        ct__srt_sort(key, idx, (uint64_t *)(idx + n + 1), idx + 2 * (n + 1), n,
                     (int)ct_dtype_size(in->dtype));
    }
    for (int64_t j = 0; j < n; j++) {
        ng += ct__srt_new_group(key, j, nan_key, has_nan);
    }
    ct_tensor *out = ct__op_output(c, &ng, 1, in->dtype);
    ct_tensor *inv = out ? ct__op_output(c, in->sizes, in->ndim, CT_INT64) : NULL;
    ct_tensor *cnt = inv ? ct__op_output(c, &ng, 1, CT_INT64) : NULL;
    if (cnt) {
        int64_t *pi = (int64_t *)(void *)ct__data(inv), *pc = (int64_t *)(void *)ct__data(cnt);
        for (int64_t j = 0, g = -1; j < n; j++) {
            if (ct__srt_new_group(key, j, nan_key, has_nan)) {
                memcpy(ct__data(out) + (size_t)++g * esz, ct__data(x) + (size_t)idx[j] * esz, esz);
                pc[g] = 0;
            }
            pi[idx[j]] = g;
            pc[g]++;
        }
    }
    ct__free(key);
    ct_release(x);
    return cnt ? CT_OK : ct_error_code();
}

/* Whether key k is among the n sorted keys. */
static bool ct__srt_contains(const uint64_t *keys, int64_t n, uint64_t k)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + ((hi - lo) >> 1);
        if (keys[mid] < k) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < n && keys[lo] == k;
}

/* isin on the CPU (inputs elements, test_elements; attributes assume_unique, invert): both
   in the promoted dtype (c->dtype), test_elements' keys sorted, a binary search per element;
   NaN never matches. */
static ct_status ct__isin_kernel(ct_op_call *c)
{
    ct_dtype dt = c->dtype;
    ct_tensor *e = ct__srt_contig(c->fn, c->inputs[0], dt);
    ct_tensor *t = e ? ct__srt_contig(c->fn, c->inputs[1], dt) : NULL;
    int64_t ne = e ? ct_numel(e) : 0, nt = t ? ct_numel(t) : 0;
    uint64_t *key = t ? ct__srt_scratch(c->fn, nt > ne ? nt : ne) : NULL;
    if (key) {
        int64_t m = nt > ne ? nt : ne;
        int64_t *idx = (int64_t *)(void *)(key + m + 1);
        bool invert = c->attrs[1].i != 0, has_nan = ct__srt_has_nan(dt);
        uint64_t nan_key = ct__srt_nan_key(dt);
        bool *out = (bool *)(void *)ct__data(c->outputs[0]);
        ct__srt_keys(ct__data(t), 1, nt, dt, false, key);
        for (int64_t j = 0; j < nt; j++) {
            idx[j] = j;
        }
        ct__srt_sort(key, idx, (uint64_t *)(idx + m + 1), idx + 2 * (m + 1), nt,
                     (int)ct_dtype_size(dt));
        uint64_t *ek = (uint64_t *)(idx + m + 1);
        ct__srt_keys(ct__data(e), 1, ne, dt, false, ek);
        for (int64_t j = 0; j < ne; j++) {
            bool found = !(has_nan && ek[j] == nan_key) && ct__srt_contains(key, nt, ek[j]);
            out[j] = found != invert;
        }
    }
    ct_status st = key ? CT_OK : ct_error_code();
    ct__free(key);
    ct_release(t);
    ct_release(e);
    return st;
}

/* searchsorted and bucketize (variant 1; inputs swapped) on the CPU: PyTorch's lower/upper
   bound loops with its comparisons (!(b >= v) / !(b > v), so NaNs go last), in float64 for
   float dtypes and int64 otherwise, through sorter when given. */
typedef struct ct__search {
    const char *b;
    const int64_t *sorter;
    ct_dtype dt;
    size_t esz;
    bool right, is_float;
} ct__search;

static bool ct__search_before(const ct__search *s, int64_t at, const char *v)
{
    const char *b = s->b + (size_t)at * s->esz;
    if (s->is_float) {
        double bv = ct__load_f64(b, s->dt), vv = ct__load_f64(v, s->dt);
        return s->right ? !(bv > vv) : !(bv >= vv);
    }
    int64_t bv = ct__load_i64(b, s->dt), vv = ct__load_i64(v, s->dt);
    return s->right ? !(bv > vv) : !(bv >= vv);
}

static int64_t ct__search_line(const ct__search *s, int64_t row, int64_t m, const char *v)
{
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        int64_t mid = lo + ((hi - lo) >> 1);
        int64_t at = row * m + (s->sorter ? s->sorter[row * m + mid] : mid);
        if (ct__search_before(s, at, v)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static ct_status ct__search_kernel(ct_op_call *c)
{
    bool bucketize = c->op->variant == 1;
    const ct_tensor *seq = c->inputs[bucketize ? 1 : 0], *val = c->inputs[bucketize ? 0 : 1];
    const ct_tensor *sorter = bucketize ? NULL : c->inputs[2];
    ct__search s;
    ct_tensor *b = ct__srt_contig(c->fn, seq, c->dtype);
    ct_tensor *v = b ? ct__srt_contig(c->fn, val, c->dtype) : NULL;
    ct_tensor *so = v && sorter ? ct__srt_contig(c->fn, sorter, CT_INT64) : NULL;
    ct_status st = v && (!sorter || so) ? CT_OK : ct_error_code();
    int64_t m = seq->ndim ? seq->sizes[seq->ndim - 1] : 1, nv = v ? ct_numel(v) : 0;
    int64_t inner = val->ndim ? val->sizes[val->ndim - 1] : 1;
    s.b = b ? ct__data(b) : NULL;
    s.sorter = so ? (const int64_t *)(const void *)ct__data(so) : NULL;
    s.dt = c->dtype;
    s.esz = ct_dtype_size(c->dtype);
    s.right = c->attrs[1].i != 0;
    s.is_float = ct_dtype_is_floating_point(c->dtype);
    for (int64_t k = 0; st == CT_OK && s.sorter && k < ct_numel(so); k++) {
        if (s.sorter[k] < 0 || s.sorter[k] >= m) {
            st = ct__fail(CT_ERR_INDEX, c->fn, "torch.searchsorted(): sorter index out of range");
        }
    }
    ct_tensor *out = c->outputs[0];
    for (int64_t j = 0; st == CT_OK && j < nv; j++) {
        int64_t row = seq->ndim > 1 ? j / inner : 0;
        int64_t r = ct__search_line(&s, row, m, ct__data(v) + (size_t)j * s.esz);
        ct__store_f64(ct__data(out) + (size_t)j * ct_dtype_size(out->dtype), out->dtype, (double)r);
    }
    ct_release(so);
    ct_release(v);
    ct_release(b);
    return st;
}

/* bincount on the CPU (inputs self, weights or NULL; attribute minlength): the output made
   here (its size depends on the data), weights summed in input order. */
static ct_status ct__bincount_kernel(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    int64_t n = ct_numel(x), nb = c->attrs[0].i, lo = 0;
    size_t esz = ct_dtype_size(x->dtype);
    const char *p = ct__data(x);
    for (int64_t j = 0; j < n; j++) {
        int64_t v = ct__load_i64(p + (size_t)(j * x->strides[0]) * esz, x->dtype);
        nb = v + 1 > nb ? v + 1 : nb;
        lo = v < lo ? v : lo;
    }
    if (lo < 0) {
        return ct__fail(CT_ERR_VALUE, c->fn,
                        "bincount only supports 1-d non-negative integral inputs.");
    }
    ct_dtype od = !w ? CT_INT64 : w->dtype == CT_FLOAT32 ? CT_FLOAT32 : CT_FLOAT64;
    ct_tensor *out = ct__op_output(c, &nb, 1, od);
    if (!out) {
        return ct_error_code();
    }
    ct__fill_contig(out, 0.0);
    for (int64_t j = 0; j < n; j++) {
        int64_t v = ct__load_i64(p + (size_t)(j * x->strides[0]) * esz, x->dtype);
        if (!w) {
            ((int64_t *)(void *)ct__data(out))[v]++;
            continue;
        }
        double wv = ct__load_f64(
            ct__data(w) + (size_t)(j * w->strides[0]) * ct_dtype_size(w->dtype), w->dtype);
        if (od == CT_FLOAT32) {
            ((float *)(void *)ct__data(out))[v] += (float)wv;
        } else {
            ((double *)(void *)ct__data(out))[v] += wv;
        }
    }
    return CT_OK;
}

/* histc on the CPU (attributes bins, min, max): the range (the data's when min == max, widened
   by 1 each way when still empty), then PyTorch's bin of each element in the input's dtype:
   (x - min) * bins / (max - min), the last edge in the last bin, elements outside skipped. */
static ct_status ct__histc_kernel(ct_op_call *c)
{
    int64_t bins = c->attrs[0].i;
    double lo = c->attrs[1].f, hi = c->attrs[2].f;
    bool f32 = c->dtype == CT_FLOAT32;
    ct_tensor *x = ct__srt_contig(c->fn, c->inputs[0], c->dtype);
    if (!x) {
        return ct_error_code();
    }
    int64_t n = ct_numel(x);
    const float *xf = (const float *)(const void *)ct__data(x);
    const double *xd = (const double *)(const void *)ct__data(x);
    if (lo == hi && n > 0) {
        lo = hi = f32 ? xf[0] : xd[0];
        for (int64_t j = 0; j < n; j++) {
            double v = f32 ? xf[j] : xd[j];
            lo = v < lo || v != v ? v : lo;
            hi = v > hi || v != v ? v : hi;
            if (v != v) {
                break;
            }
        }
    }
    if (lo == hi) {
        lo -= 1;
        hi += 1;
    }
    ct_status st = CT_OK;
    if (isinf(lo) || isinf(hi) || isnan(lo) || isnan(hi)) {
        st = ct__fail(CT_ERR_VALUE, c->fn, "torch.histc: range of [%g, %g] is not finite", lo, hi);
    } else if (!(lo < hi)) {
        st = ct__fail(CT_ERR_VALUE, c->fn, "torch.histc: max must be larger than min");
    }
    ct_tensor *out = c->outputs[0];
    ct__fill_contig(out, 0.0);
    float lf = (float)lo, hf = (float)hi;
    for (int64_t j = 0; st == CT_OK && j < n; j++) {
        int64_t pos;
        if (f32) {
            float v = xf[j];
            if (!(v >= lf && v <= hf)) {
                continue;
            }
            pos = (int64_t)((v - lf) * (float)bins / (hf - lf));
        } else {
            double v = xd[j];
            if (!(v >= lo && v <= hi)) {
                continue;
            }
            pos = (int64_t)((v - lo) * (double)bins / (hi - lo));
        }
        pos = pos == bins ? bins - 1 : pos;
        if (f32) {
            ((float *)(void *)ct__data(out))[pos] += 1.0f;
        } else {
            ((double *)(void *)ct__data(out))[pos] += 1.0;
        }
    }
    ct_release(x);
    return st;
}

CT__GLUE_BEGIN
/* unique family meta: nothing to check; the kernel makes the outputs. */
static bool ct__unique_meta(ct_op_call *c)
{
    c->dtype = c->inputs[0]->dtype;
    return true;
}

/* isin meta: a bool output of elements' shape; the kernel's dtype is the promoted one. */
static bool ct__isin_meta(ct_op_call *c)
{
    const ct_tensor *e = c->inputs[0];
    c->dtype = ct_promote_types(e->dtype, c->inputs[1]->dtype);
    return ct__op_output(c, e->sizes, e->ndim, CT_BOOL) != NULL;
}

/* searchsorted / bucketize meta (PyTorch's searchsorted_pre_check). */
static bool ct__search_meta(ct_op_call *c)
{
    bool bucketize = c->op->variant == 1;
    const ct_tensor *seq = c->inputs[bucketize ? 1 : 0], *val = c->inputs[bucketize ? 0 : 1];
    const ct_tensor *sorter = bucketize ? NULL : c->inputs[2];
    char a[96], b[96];
    if (bucketize && seq->ndim != 1) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "boundaries tensor must be 1 dimension, but got dim(%d)", seq->ndim);
    }
    if (sorter && sorter->dtype != CT_INT64) {
        return !ct__fail(CT_ERR_DTYPE, c->fn,
                         "torch.searchsorted(): sorter must be a tensor of long dtype but got %s",
                         ct__dtype_title(sorter->dtype));
    }
    if (sorter && (sorter->ndim != seq->ndim ||
                   memcmp(sorter->sizes, seq->sizes, sizeof(int64_t) * (size_t)seq->ndim))) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "torch.searchsorted(): boundary and sorter must have the same size, but "
                         "got boundary tensor %s and got sorter tensor %s",
                         ct__shape_str(seq->sizes, seq->ndim, a, sizeof a),
                         ct__shape_str(sorter->sizes, sorter->ndim, b, sizeof b));
    }
    bool lead = seq->ndim == val->ndim && seq->ndim > 0 &&
                !memcmp(seq->sizes, val->sizes, sizeof(int64_t) * (size_t)(seq->ndim - 1));
    if (seq->ndim != 1 && !lead) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                         "first N-1 dimensions of boundaries tensor and input value tensor must "
                         "match, but we got boundaries tensor %s and input value tensor %s",
                         ct__shape_str(seq->sizes, seq->ndim, a, sizeof a),
                         ct__shape_str(val->sizes, val->ndim, b, sizeof b));
    }
    c->dtype = ct_promote_types(seq->dtype, val->dtype);
    return ct__op_output(c, val->sizes, val->ndim, c->attrs[0].i ? CT_INT32 : CT_INT64) != NULL;
}

/* bincount meta (PyTorch's checks but the data's). */
static bool ct__bincount_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    c->dtype = x->dtype;
    if (ct_dtype_is_floating_point(x->dtype)) {
        return !ct__fail(CT_ERR_DTYPE, c->fn, "\"bincount_cpu\" not implemented for '%s'",
                         ct__dtype_title(x->dtype));
    }
    if (c->attrs[0].i < 0) {
        return !ct__fail(CT_ERR_VALUE, c->fn, "minlength should be >= 0");
    }
    if (x->ndim != 1) {
        return !ct__fail(CT_ERR_VALUE, c->fn,
                         "bincount only supports 1-d non-negative integral inputs.");
    }
    if (w && (w->ndim != 1 || w->sizes[0] != x->sizes[0])) {
        return !ct__fail(CT_ERR_SHAPE, c->fn,
                         "weights should be 1-d and have the same length as input");
    }
    return true;
}

/* histc meta: bins checked (the range needs the data: the kernel checks it). */
static bool ct__histc_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    int64_t bins = c->attrs[0].i;
    c->dtype = x->dtype;
    if (bins <= 0) {
        return !ct__fail(CT_ERR_VALUE, c->fn,
                         "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                         (long long)bins);
    }
    if (c->attrs[1].f > c->attrs[2].f) {
        return !ct__fail(CT_ERR_VALUE, c->fn, "torch.histc: max must be larger than min");
    }
    return ct__op_output(c, &bins, 1, x->dtype) != NULL;
}

/* ---- descriptors ----------------------------------------------------------------------------- */
/* TABLE: a CT__K_* macro, applied to KERNEL. */
#define CT__SRT_OP(SYM, NAME, SCHEMA, API, KIND, VAR, OPT, META, TABLE, KERNEL, NODE, BW, SAVE,    \
                   RECORD)                                                                         \
    static const ct_op ct__op_##SYM = {                                                            \
        "aten::" NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, VAR, OPT, NULL, META, TABLE(KERNEL),   \
        NULL,          NODE,   CT__BACKWARD(BW),  SAVE, RECORD, NULL};
#define CT__SRT_SELECT(SYM, NAME, SCHEMA, API, VAR, TABLE, NODE)                                   \
    CT__SRT_OP(SYM, NAME, SCHEMA, API, CT_OP_OTHER, VAR, 0u, ct__srt_meta, TABLE, ct__srt_kernel,  \
               NODE, ct__srt_select_backward, 0u, ct__srt_select_record)

CT__SRT_SELECT(sort, "sort",
               "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
               "(Tensor values, Tensor indices)",
               "ct_sort ct_argsort ct_msort", CT__SRT_SORT, CT__K_ALL, "SortBackward0")
CT__SRT_SELECT(topk, "topk",
               "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
               "(Tensor values, Tensor indices)",
               "ct_topk", CT__SRT_TOPK, CT__K_ALL, "TopkBackward0")
CT__SRT_SELECT(kthvalue, "kthvalue",
               "kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, "
               "Tensor indices)",
               "ct_kthvalue", CT__SRT_KTH, CT__K_NUMERIC, "KthvalueBackward0")
CT__SRT_SELECT(median_dim, "median",
               "median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
               "indices)",
               "ct_median_dim", CT__SRT_MEDIAN, CT__K_NUMERIC, "MedianBackward1")
CT__SRT_SELECT(nanmedian_dim, "nanmedian",
               "nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
               "indices)",
               "ct_nanmedian_dim", CT__SRT_NANMEDIAN, CT__K_NUMERIC, "NanmedianBackward1")
CT__SRT_SELECT(mode, "mode",
               "mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor "
               "indices)",
               "ct_mode", CT__SRT_MODE, CT__K_ALL, "ModeBackward0")
CT__SRT_OP(median, "median", "median(Tensor self) -> Tensor", "ct_median", CT_OP_REDUCTION,
           CT__SRT_MEDIAN, 0u, ct__srt_meta, CT__K_NUMERIC, ct__srt_kernel, "MedianBackward0",
           ct__srt_median_all_backward, (1u << 0) | (1u << 8), NULL)
CT__SRT_OP(nanmedian, "nanmedian", "nanmedian(Tensor self) -> Tensor", "ct_nanmedian",
           CT_OP_REDUCTION, CT__SRT_NANMEDIAN, 0u, ct__srt_meta, CT__K_NUMERIC, ct__srt_kernel,
           "NanmedianBackward0", ct__srt_median_all_backward, (1u << 0) | (1u << 8), NULL)
CT__SRT_OP(quantile, "quantile",
           "quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str "
           "interpolation='linear') -> Tensor",
           "ct_quantile", CT_OP_REDUCTION, CT__SRT_QUANTILE, 0u, ct__quantile_meta, CT__K_FLOAT,
           ct__quantile_kernel, "QuantileBackward0", ct__srt_quantile_backward, 0u,
           ct__srt_quantile_record)
CT__SRT_OP(nanquantile, "nanquantile",
           "nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str "
           "interpolation='linear') -> Tensor",
           "ct_nanquantile", CT_OP_REDUCTION, CT__SRT_NANQUANTILE, 0u, ct__quantile_meta,
           CT__K_FLOAT, ct__quantile_kernel, "NanquantileBackward0", ct__srt_quantile_backward, 0u,
           ct__srt_quantile_record)
CT__SRT_OP(unique, "_unique2",
           "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool "
           "return_counts=False) -> (Tensor, Tensor, Tensor)",
           "ct_unique", CT_OP_OTHER, 0, 0u, ct__unique_meta, CT__K_ALL, ct__unique_kernel, NULL,
           NULL, 0u, NULL)
CT__SRT_OP(unique_consecutive, "unique_consecutive",
           "unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, "
           "int? dim=None) -> (Tensor, Tensor, Tensor)",
           "ct_unique_consecutive", CT_OP_OTHER, 1, 0u, ct__unique_meta, CT__K_ALL,
           ct__unique_kernel, NULL, NULL, 0u, NULL)
CT__SRT_OP(isin, "isin",
           "isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool "
           "assume_unique=False, bool invert=False) -> Tensor",
           "ct_isin", CT_OP_OTHER, 0, 0u, ct__isin_meta, CT__K_ALL, ct__isin_kernel, NULL, NULL, 0u,
           NULL)
CT__SRT_OP(searchsorted, "searchsorted",
           "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
           "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
           "ct_searchsorted", CT_OP_OTHER, 0, 1u << 2, ct__search_meta, CT__K_ALL,
           ct__search_kernel, NULL, NULL, 0u, NULL)
CT__SRT_OP(bucketize, "bucketize",
           "bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool "
           "right=False) -> Tensor",
           "ct_bucketize", CT_OP_OTHER, 1, 0u, ct__search_meta, CT__K_ALL, ct__search_kernel, NULL,
           NULL, 0u, NULL)
CT__SRT_OP(bincount, "bincount",
           "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
           "ct_bincount", CT_OP_OTHER, 0, 1u << 1, ct__bincount_meta, CT__K_NUMERIC,
           ct__bincount_kernel, NULL, NULL, 0u, NULL)
CT__SRT_OP(histc, "histc", "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
           "ct_histc", CT_OP_OTHER, 0, 0u, ct__histc_meta, CT__K_FLOAT, ct__histc_kernel, NULL,
           NULL, 0u, NULL)
#undef CT__SRT_SELECT
#undef CT__SRT_OP

/* ---- public functions ------------------------------------------------------------------------ */
/* Hands out a call's values and indices (both scoped) to the caller's out pointers, freeing
   one not wanted; returns CT_OK or the error code. */
static ct_status ct__srt_outputs(ct_op_call *c, ct_tensor *v, ct_tensor **values,
                                 ct_tensor **indices)
{
    if (!v) {
        return ct_error_code();
    }
    if (values) {
        *values = v;
    } else {
        ct_free(v);
    }
    if (indices) {
        *indices = c->outputs[1];
    } else {
        ct_free(c->outputs[1]);
    }
    return CT_OK;
}

/* A call of the line family: attributes in schema order (up to four), the state for meta. */
static ct_status ct__srt_call(const ct_op *op, const char *fn, const ct_tensor *x, ct__srt_state *s,
                              const int64_t *attrs, int n_attrs, ct_tensor **values,
                              ct_tensor **indices)
{
    const ct_tensor *in[1] = {x};
    ct_op_call c;
    if (values) {
        *values = NULL;
    }
    if (indices) {
        *indices = NULL;
    }
    ct__call_init(&c, op, fn, in, 1);
    for (int k = 0; k < n_attrs; k++) {
        ct__call_i(&c, attrs[k]);
    }
    c.state = s;
    return ct__srt_outputs(&c, ct__dispatch(&c), values, indices);
}

static ct__srt_state ct__srt_state_of(bool all, int64_t dim, int64_t k, bool flag, bool keepdim)
{
    ct__srt_state s;
    memset(&s, 0, sizeof s);
    s.all = all;
    s.dim = (int)(dim < INT32_MIN ? INT32_MIN : dim > INT32_MAX ? INT32_MAX : dim);
    s.k = k;
    s.flag = flag;
    s.keepdim = keepdim;
    return s;
}

ct_status ct_sort(const ct_tensor *input, int64_t dim, bool descending, bool stable,
                  ct_tensor **values, ct_tensor **indices)
{
    ct__srt_state s = ct__srt_state_of(false, dim, 0, descending, false);
    int64_t a[3] = {stable, dim, descending};
    return ct__srt_call(&ct__op_sort, "ct_sort", input, &s, a, 3, values, indices);
}

ct_tensor *ct_argsort(const ct_tensor *input, int64_t dim, bool descending, bool stable)
{
    ct__srt_state s = ct__srt_state_of(false, dim, 0, descending, false);
    int64_t a[3] = {stable, dim, descending};
    ct_tensor *ix = NULL;
    ct__srt_call(&ct__op_sort, "ct_argsort", input, &s, a, 3, NULL, &ix);
    return ix;
}

ct_tensor *ct_msort(const ct_tensor *input)
{
    ct__srt_state s = ct__srt_state_of(false, 0, 0, false, false);
    int64_t a[3] = {0, 0, 0};
    ct_tensor *v = NULL;
    ct__srt_call(&ct__op_sort, "ct_msort", input, &s, a, 3, &v, NULL);
    return v;
}

ct_status ct_topk(const ct_tensor *input, int64_t k, int64_t dim, bool largest, bool sorted,
                  ct_tensor **values, ct_tensor **indices)
{
    ct__srt_state s = ct__srt_state_of(false, dim, k, largest, false);
    int64_t a[4] = {k, dim, largest, sorted};
    return ct__srt_call(&ct__op_topk, "ct_topk", input, &s, a, 4, values, indices);
}

ct_status ct_kthvalue(const ct_tensor *input, int64_t k, int64_t dim, bool keepdim,
                      ct_tensor **values, ct_tensor **indices)
{
    ct__srt_state s = ct__srt_state_of(false, dim, k, false, keepdim);
    int64_t a[3] = {k, dim, keepdim};
    return ct__srt_call(&ct__op_kthvalue, "ct_kthvalue", input, &s, a, 3, values, indices);
}

/* median()/nanmedian() over all elements. */
static ct_tensor *ct__median_all(const ct_op *op, const char *fn, const ct_tensor *input)
{
    const ct_tensor *in[1] = {input};
    ct__srt_state s = ct__srt_state_of(true, 0, 0, false, false);
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_median(const ct_tensor *input)
{
    return ct__median_all(&ct__op_median, "ct_median", input);
}

ct_tensor *ct_nanmedian(const ct_tensor *input)
{
    return ct__median_all(&ct__op_nanmedian, "ct_nanmedian", input);
}

ct_status ct_median_dim(const ct_tensor *input, int64_t dim, bool keepdim, ct_tensor **values,
                        ct_tensor **indices)
{
    ct__srt_state s = ct__srt_state_of(false, dim, 0, false, keepdim);
    int64_t a[2] = {dim, keepdim};
    return ct__srt_call(&ct__op_median_dim, "ct_median_dim", input, &s, a, 2, values, indices);
}

ct_status ct_nanmedian_dim(const ct_tensor *input, int64_t dim, bool keepdim, ct_tensor **values,
                           ct_tensor **indices)
{
    ct__srt_state s = ct__srt_state_of(false, dim, 0, false, keepdim);
    int64_t a[2] = {dim, keepdim};
    return ct__srt_call(&ct__op_nanmedian_dim, "ct_nanmedian_dim", input, &s, a, 2, values,
                        indices);
}

ct_status ct_mode(const ct_tensor *input, int64_t dim, bool keepdim, ct_tensor **values,
                  ct_tensor **indices)
{
    ct__srt_state s = ct__srt_state_of(false, dim, 0, false, keepdim);
    int64_t a[2] = {dim, keepdim};
    return ct__srt_call(&ct__op_mode, "ct_mode", input, &s, a, 2, values, indices);
}

/* quantile / nanquantile: the values (returned) and the tensors backward keeps (outputs
   1..3, handed to the node, released here). */
static ct_tensor *ct__quantile_call(const ct_op *op, const char *fn, const ct_tensor *input,
                                    const ct_tensor *q, const int64_t *dim, bool keepdim,
                                    ct_quantile_interpolation interpolation)
{
    const ct_tensor *in[2] = {input, q};
    ct__srt_state s = ct__srt_state_of(dim == NULL, dim ? *dim : 0, 0, false, keepdim);
    ct_op_call c;
    s.interp = (int)interpolation;
    ct__call_init(&c, op, fn, in, 2);
    ct__call_i(&c, dim ? *dim : INT64_MIN);
    ct__call_i(&c, keepdim);
    ct__call_i(&c, (int64_t)interpolation);
    c.state = &s;
    ct_tensor *r = ct__dispatch(&c);
    for (int k = 1; r && k < c.n_outputs; k++) {
        ct_free(c.outputs[k]);
    }
    return r;
}

ct_tensor *ct_quantile(const ct_tensor *input, const ct_tensor *q, const int64_t *dim, bool keepdim,
                       ct_quantile_interpolation interpolation)
{
    return ct__quantile_call(&ct__op_quantile, "ct_quantile", input, q, dim, keepdim,
                             interpolation);
}

ct_tensor *ct_nanquantile(const ct_tensor *input, const ct_tensor *q, const int64_t *dim,
                          bool keepdim, ct_quantile_interpolation interpolation)
{
    return ct__quantile_call(&ct__op_nanquantile, "ct_nanquantile", input, q, dim, keepdim,
                             interpolation);
}

/* unique / unique_consecutive: the values, and inverse and counts when wanted. */
static ct_tensor *ct__unique_call(const ct_op *op, const char *fn, const ct_tensor *input,
                                  const int64_t *attrs, int n_attrs, ct_tensor **inverse,
                                  ct_tensor **counts)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    if (inverse) {
        *inverse = NULL;
    }
    if (counts) {
        *counts = NULL;
    }
    ct__call_init(&c, op, fn, in, 1);
    for (int k = 0; k < n_attrs; k++) {
        ct__call_i(&c, attrs[k]);
    }
    ct_tensor *r = ct__dispatch(&c);
    if (!r) {
        return NULL;
    }
    ct_tensor **want[3] = {NULL, inverse, counts};
    for (int k = 1; k < 3; k++) {
        if (want[k]) {
            *want[k] = c.outputs[k];
        } else {
            ct_free(c.outputs[k]);
        }
    }
    return r;
}

ct_tensor *ct_unique(const ct_tensor *input, bool sorted, ct_tensor **inverse, ct_tensor **counts)
{
    int64_t a[3] = {sorted, inverse != NULL, counts != NULL};
    return ct__unique_call(&ct__op_unique, "ct_unique", input, a, 3, inverse, counts);
}

ct_tensor *ct_unique_consecutive(const ct_tensor *input, ct_tensor **inverse, ct_tensor **counts)
{
    int64_t a[2] = {inverse != NULL, counts != NULL};
    return ct__unique_call(&ct__op_unique_consecutive, "ct_unique_consecutive", input, a, 2,
                           inverse, counts);
}

ct_tensor *ct_isin(const ct_tensor *elements, const ct_tensor *test_elements, bool assume_unique,
                   bool invert)
{
    const ct_tensor *in[2] = {elements, test_elements};
    ct_op_call c;
    ct__call_init(&c, &ct__op_isin, "ct_isin", in, 2);
    ct__call_i(&c, assume_unique);
    ct__call_i(&c, invert);
    return ct__dispatch(&c);
}

ct_tensor *ct_searchsorted(const ct_tensor *sorted_sequence, const ct_tensor *input, bool out_int32,
                           bool right, const ct_tensor *sorter)
{
    const ct_tensor *in[3] = {sorted_sequence, input, sorter};
    ct_op_call c;
    ct__call_init(&c, &ct__op_searchsorted, "ct_searchsorted", in, 3);
    ct__call_i(&c, out_int32);
    ct__call_i(&c, right);
    return ct__dispatch(&c);
}

ct_tensor *ct_bucketize(const ct_tensor *input, const ct_tensor *boundaries, bool out_int32,
                        bool right)
{
    const ct_tensor *in[2] = {input, boundaries};
    ct_op_call c;
    ct__call_init(&c, &ct__op_bucketize, "ct_bucketize", in, 2);
    ct__call_i(&c, out_int32);
    ct__call_i(&c, right);
    return ct__dispatch(&c);
}

ct_tensor *ct_bincount(const ct_tensor *input, const ct_tensor *weights, int64_t minlength)
{
    const ct_tensor *in[2] = {input, weights};
    ct_op_call c;
    ct__call_init(&c, &ct__op_bincount, "ct_bincount", in, 2);
    ct__call_i(&c, minlength);
    return ct__dispatch(&c);
}

ct_tensor *ct_histc(const ct_tensor *input, int64_t bins, double min, double max)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_histc, "ct_histc", in, 1);
    ct__call_i(&c, bins);
    ct__call_f(&c, min);
    ct__call_f(&c, max);
    return ct__dispatch(&c);
}
CT__GLUE_END
