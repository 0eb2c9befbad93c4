/* data/dataset.c - the dataset vtable, TensorDataset (with a direct row gather for batches),
 * Subset, random_split and default_collate.
 *
 * Legend: N samples, n rows in a batch, F fields per sample, row = one sample's field
 * (numel of dims 1.. of a tensor dataset's tensor).
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../core/rng.h"
#include "../ops/view.h"
#include "../autograd/autograd.h"
#include "dataset.h"

#include <limits.h>

CT__GLUE_BEGIN

/* ---- the vtable ------------------------------------------------------------------------ */
static bool ct__dataset_check(const char *op, const ct_dataset *ds)
{
    if (ct__null(op, ds)) {
        return false;
    }
    if (!ds->len || !ds->get) {
        ct__fail(CT_ERR_VALUE, op, "the dataset's len and get callbacks must not be NULL");
        return false;
    }
    if (ds->n_fields < 1 || ds->n_fields > CT_DATASET_MAX_FIELDS) {
        ct__fail(CT_ERR_VALUE, op, "the dataset's n_fields is %d, expected 1 to %d",
                 ds->n_fields, CT_DATASET_MAX_FIELDS);
        return false;
    }
    return true;
}

/* Sets the output fields[0..n) to NULL (they may hold garbage on entry). */
static void ct__dataset_null(ct_tensor **fields, int n)
{
    for (int f = 0; f < n; f++) {
        fields[f] = NULL;
    }
}

/* Releases fields[0..n) and sets them NULL. */
static void ct__dataset_clear(ct_tensor **fields, int n)
{
    for (int f = 0; f < n; f++) {
        ct_free(fields[f]);
        fields[f] = NULL;
    }
}

/* The status after a callback returned st and filled fields: an error when st is nonzero or a
   field is NULL; the fields are cleared on error. */
static ct_status ct__dataset_finish(const char *op, ct_status st, ct_tensor **fields, int n)
{
    for (int f = 0; f < n && st == CT_OK; f++) {
        if (!fields[f]) {
            st = ct_error_code() != CT_OK
                     ? ct_error_code()
                     : ct__fail(CT_ERR_VALUE, op, "the dataset returned CT_OK but left field "
                                "%d NULL", f);
        }
    }
    if (st != CT_OK) {
        if (ct_error_code() == CT_OK) {
            ct__fail(st, op, "the dataset failed with status %s", ct_status_str(st));
        }
        ct__dataset_clear(fields, n);
    }
    return st;
}

/* Wraps index into [0, len); -1 + CT_ERR_INDEX when out of range. */
static int64_t ct__dataset_index(const char *op, int64_t index, int64_t len)
{
    int64_t i = index < 0 ? index + len : index;
    if (i < 0 || i >= len) {
        ct__fail(CT_ERR_INDEX, op, "index %lld is out of bounds for dimension 0 with size %lld",
                 (long long)index, (long long)len);
        return -1;
    }
    return i;
}

int64_t ct_dataset_len(const ct_dataset *ds)
{
    if (!ct__dataset_check("ct_dataset_len", ds)) {
        return -1;
    }
    return ds->len(ds);
}

ct_status ct_dataset_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const char *op = "ct_dataset_get";
    if (ct__null(op, fields)) {
        return CT_ERR_NULL_ARG;
    }
    if (!ct__dataset_check(op, ds)) {
        return ct_error_code();
    }
    ct__dataset_null(fields, ds->n_fields);
    int64_t i = ct__dataset_index(op, index, ds->len(ds));
    if (i < 0) {
        return CT_ERR_INDEX;
    }
    return ct__dataset_finish(op, ds->get(ds, i, fields), fields, ds->n_fields);
}

ct_status ct_default_collate(ct_tensor *const *samples, int64_t n, int n_fields,
                             ct_tensor **batch)
{
    const char *op = "ct_default_collate";
    if (ct__null(op, batch) || ct__null(op, samples)) {
        return ct_error_code();
    }
    if (n_fields < 1 || n_fields > CT_DATASET_MAX_FIELDS) {
        return ct__fail(CT_ERR_VALUE, op, "n_fields is %d, expected 1 to %d", n_fields,
                        CT_DATASET_MAX_FIELDS);
    }
    ct__dataset_null(batch, n_fields);
    if (n < 1 || n > INT_MAX) {
        return ct__fail(CT_ERR_VALUE, op, "expected 1 to %d samples, got %lld", INT_MAX,
                        (long long)n);
    }
    const ct_tensor **column = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n);
    if (!column) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_status st = CT_OK;
    for (int f = 0; f < n_fields && st == CT_OK; f++) {
        for (int64_t k = 0; k < n; k++) {
            column[k] = samples[k * n_fields + f];
        }
        batch[f] = ct_stack(column, (int)n, 0);
        if (!batch[f]) {
            st = ct_error_code() != CT_OK ? ct_error_code() : CT_ERR_VALUE;
        }
    }
    ct__free(column);
    if (st != CT_OK) {
        ct__dataset_clear(batch, n_fields);
    }
    return st;
}

/* Collates samples[0..n * nf) into fields with collate (NULL: default_collate); the end of
   the private scope the samples were made in (when scoped) keeps only the fields. */
static ct_status ct__collate_scoped(ct_tensor **samples, int64_t n, int nf, ct_collate_fn collate,
                                   void *user, bool scoped, ct_status st, ct_tensor **fields)
{
    const char *op = "ct_dataset_get_batch";
    if (st == CT_OK && collate) {
        st = ct__dataset_finish(op, collate(samples, n, nf, fields, user), fields, nf);
    } else if (st == CT_OK) {
        st = ct_default_collate(samples, n, nf, fields);
    }
    ct_no_grad_end();
    if (scoped) {
        for (int f = 0; f < nf; f++) {
            ct_keep(fields[f]);
        }
        ct_scope_end();
    } else {
        for (int64_t k = 0; k < n * nf; k++) {
            ct_free(samples[k]);
        }
    }
    ct__free(samples);
    return st;
}

/* Room for n samples of nf fields (zeroed); NULL + error when out of memory. */
static ct_tensor **ct__samples_new(int64_t n, int nf)
{
    ct_tensor **samples = (uint64_t)n > SIZE_MAX / sizeof(ct_tensor *) / (size_t)nf
                              ? NULL
                              : (ct_tensor **)ct__calloc(sizeof(ct_tensor *) * (size_t)n *
                                                         (size_t)nf);
    if (!samples) {
        ct__fail(CT_ERR_OOM, "ct_dataset_get_batch", "out of memory");
    }
    return samples;
}

ct_status ct__dataset_collect(const ct_dataset *ds, const int64_t *idx, int64_t n,
                             ct_collate_fn collate, void *user, ct_tensor **fields,
                             int64_t *failed)
{
    const char *op = "ct_dataset_get_batch";
    int nf = ds->n_fields;
    *failed = -1;
    ct__dataset_null(fields, nf);
    ct_tensor **samples = ct__samples_new(n, nf);
    if (!samples) {
        return CT_ERR_OOM;
    }
    bool scoped = ct_scope_begin() == CT_OK;
    ct_no_grad_begin();
    int64_t len = ds->len(ds);
    ct_status st = CT_OK;
    for (int64_t k = 0; k < n && st == CT_OK; k++) {
        int64_t i = ct__dataset_index(op, idx[k], len);
        st = i < 0 ? CT_ERR_INDEX
                   : ct__dataset_finish(op, ds->get(ds, i, samples + k * nf), samples + k * nf, nf);
        *failed = st == CT_OK ? -1 : idx[k];
    }
    return ct__collate_scoped(samples, n, nf, collate, user, scoped, st, fields);
}

ct_status ct__iterable_collect(ct_iterable_dataset *ds, int64_t max, bool drop_last,
                               ct_collate_fn collate, void *user, ct_tensor **fields,
                               int64_t *got)
{
    int nf = ds->n_fields;
    *got = 0;
    ct__dataset_null(fields, nf);
    ct_tensor **samples = ct__samples_new(max, nf);
    if (!samples) {
        return CT_ERR_OOM;
    }
    bool scoped = ct_scope_begin() == CT_OK;
    ct_no_grad_begin();
    int r = 1;
    while (*got < max && (r = ct_iterable_dataset_next(ds, samples + *got * nf)) == 1) {
        ++*got;
    }
    if (r == 0 && (*got == 0 || (drop_last && *got < max))) {
        *got = 0; /* the end: nothing to collate */
    }
    ct_status st = r < 0 ? ct_error_code() : CT_OK;
    if (*got == 0 && st == CT_OK) {
        ct_no_grad_end();
        if (scoped) {
            ct_scope_end();
        }
        ct__free(samples);
        return CT_OK;
    }
    return ct__collate_scoped(samples, *got, nf, collate, user, scoped, st, fields);
}

ct_status ct_dataset_get_batch(const ct_dataset *ds, const int64_t *indices, int64_t n,
                               ct_tensor **fields)
{
    const char *op = "ct_dataset_get_batch";
    if (ct__null(op, fields)) {
        return CT_ERR_NULL_ARG;
    }
    if (!ct__dataset_check(op, ds)) {
        return ct_error_code();
    }
    ct__dataset_null(fields, ds->n_fields);
    if (ct__null(op, indices)) {
        return CT_ERR_NULL_ARG;
    }
    if (n < 1 || (uint64_t)n > SIZE_MAX / sizeof(int64_t)) {
        return ct__fail(CT_ERR_VALUE, op, "expected at least one index, got n=%lld",
                        (long long)n);
    }
    int64_t len = ds->len(ds);
    int64_t *idx = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!idx) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_status st = CT_OK;
    for (int64_t k = 0; k < n && st == CT_OK; k++) {
        idx[k] = ct__dataset_index(op, indices[k], len);
        st = idx[k] < 0 ? CT_ERR_INDEX : CT_OK;
    }
    if (st == CT_OK) {
        ct_no_grad_begin();
        if (ds->get_batch) {
            st = ct__dataset_finish(op, ds->get_batch(ds, idx, n, fields), fields, ds->n_fields);
        } else {
            int64_t failed;
            st = ct__dataset_collect(ds, idx, n, NULL, NULL, fields, &failed);
        }
        ct_no_grad_end();
    }
    ct__free(idx);
    return st;
}

void ct_dataset_free(ct_dataset *ds)
{
    if (ds && ds->destroy) {
        ds->destroy(ds);
    }
}

/* ---- TensorDataset ---------------------------------------------------------------------- */
typedef struct ct__tensor_dataset {
    ct_dataset base;
    int64_t n; /* N, the shared size(0) */
    ct_tensor *tensors[CT_DATASET_MAX_FIELDS];
} ct__tensor_dataset;

static int64_t ct__tds_len(const ct_dataset *ds)
{
    return ((const ct__tensor_dataset *)ds->user)->n;
}

static ct_status ct__tds_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const ct__tensor_dataset *d = (const ct__tensor_dataset *)ds->user;
    for (int f = 0; f < ds->n_fields; f++) {
        fields[f] = ct_select(d->tensors[f], 0, index);
        if (!fields[f]) {
            return ct_error_code();
        }
    }
    return CT_OK;
}

typedef struct ct__gather_ctx {
    char *dst;
    const char *src;
    const int64_t *idx;
    int64_t src_row_stride_bytes;
    size_t row_bytes;
} ct__gather_ctx;

#define CT__GATHER_AHEAD 4
/* dst (n, row) contiguous <- src rows idx[k] (row contiguous), one memcpy per row */
static void ct__gather_rows(int64_t begin, int64_t end, void *ctx)
{
    const ct__gather_ctx *c = (const ct__gather_ctx *)ctx;
    for (int64_t k = begin; k < end; k++) {
#if defined(__GNUC__) || defined(__clang__)
        if (k + CT__GATHER_AHEAD < end && c->row_bytes <= 4096) { /* random rows: fetch ahead */
            const char *next = c->src + c->idx[k + CT__GATHER_AHEAD] * c->src_row_stride_bytes;
            for (size_t b = 0; b < c->row_bytes; b += 64) {
                __builtin_prefetch(next + b);
            }
        }
#endif
        memcpy(c->dst + (size_t)k * c->row_bytes, c->src + c->idx[k] * c->src_row_stride_bytes,
               c->row_bytes);
    }
}

/* Whether dims 1.. of t are row-major (a row is one contiguous block). */
static bool ct__rows_contiguous(const ct_tensor *t)
{
    int64_t expected = 1;
    for (int d = t->ndim - 1; d >= 1; d--) {
        if (t->sizes[d] != 1 && t->strides[d] != expected) {
            return false;
        }
        expected *= t->sizes[d];
    }
    return true;
}

/* The batch fast path: one gather per field straight from the source storage. */
static ct_status ct__tds_get_batch(const ct_dataset *ds, const int64_t *idx, int64_t n,
                                   ct_tensor **fields)
{
    const char *op = "ct_dataset_get_batch";
    const ct__tensor_dataset *d = (const ct__tensor_dataset *)ds->user;
    for (int f = 0; f < ds->n_fields; f++) {
        const ct_tensor *src = d->tensors[f];
        int64_t sizes[CT_MAX_DIMS];
        sizes[0] = n;
        for (int k = 1; k < src->ndim; k++) {
            sizes[k] = src->sizes[k];
        }
        ct_tensor *out = ct__tensor_new(op, sizes, src->ndim, src->dtype);
        if (!out) {
            return ct_error_code();
        }
        size_t es = ct_dtype_size(src->dtype);
        if (ct__rows_contiguous(src)) {
            ct__gather_ctx c;
            c.dst = ct__data(out);
            c.src = ct__data(src);
            c.idx = idx;
            c.src_row_stride_bytes = src->strides[0] * (int64_t)es;
            c.row_bytes = (size_t)ct__numel(src->sizes + 1, src->ndim - 1) * es;
            int64_t grain = c.row_bytes ? (int64_t)(((size_t)1 << 18) / c.row_bytes) + 1 : n + 1;
            ct__parallel_for(n, grain, ct__gather_rows, &c);
        } else { /* strided rows: copy each through views */
            for (int64_t k = 0; k < n; k++) {
                ct_tensor *to = ct_select(out, 0, k), *from = ct_select(src, 0, idx[k]);
                if (to && from) {
                    ct__copy_kernel(to, from);
                }
                ct_free(to);
                ct_free(from);
            }
        }
        fields[f] = ct__scoped(out);
    }
    return CT_OK;
}

static void ct__tds_destroy(ct_dataset *ds)
{
    ct__tensor_dataset *d = (ct__tensor_dataset *)ds->user;
    for (int f = 0; f < ds->n_fields; f++) {
        ct__release(d->tensors[f]); /* the reference ct_retain took, outside any scope */
    }
    ct__free(d);
}

ct_dataset *ct_tensor_dataset_new(ct_tensor *const *tensors, int n)
{
    const char *op = "ct_tensor_dataset_new";
    if (ct__null(op, tensors)) {
        return NULL;
    }
    if (n < 1 || n > CT_DATASET_MAX_FIELDS) {
        ct__fail(CT_ERR_VALUE, op, "expected 1 to %d tensors, got %d", CT_DATASET_MAX_FIELDS, n);
        return NULL;
    }
    for (int f = 0; f < n; f++) {
        if (ct__null(op, tensors[f]) || !ct__check_cpu(op, tensors[f])) {
            return NULL;
        }
        if (tensors[f]->ndim == 0) {
            ct__fail(CT_ERR_SHAPE, op, "tensor %d is 0-dimensional: every tensor needs a first "
                     "dimension to index samples along", f);
            return NULL;
        }
        if (tensors[f]->sizes[0] != tensors[0]->sizes[0]) {
            ct__fail(CT_ERR_SHAPE, op, "Size mismatch between tensors: tensor 0 has %lld "
                     "samples but tensor %d has %lld", (long long)tensors[0]->sizes[0], f,
                     (long long)tensors[f]->sizes[0]);
            return NULL;
        }
    }
    ct__tensor_dataset *d = (ct__tensor_dataset *)ct__calloc(sizeof(ct__tensor_dataset));
    if (!d) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    d->base.len = ct__tds_len;
    d->base.get = ct__tds_get;
    d->base.get_batch = ct__tds_get_batch;
    d->base.destroy = ct__tds_destroy;
    d->base.n_fields = n;
    d->base.user = d;
    d->n = tensors[0]->sizes[0];
    for (int f = 0; f < n; f++) {
        d->tensors[f] = ct_retain(tensors[f]);
    }
    return &d->base;
}

bool ct_dataset_is_tensor_dataset(const ct_dataset *ds)
{
    return !ct__null("ct_dataset_is_tensor_dataset", ds) && ds->get == ct__tds_get;
}

/* ---- Subset and random_split ------------------------------------------------------------ */
typedef struct ct__subset {
    ct_dataset base;
    ct_dataset *parent; /* borrowed */
    int64_t n;
    int64_t *indices; /* n entries in [0, len(parent)) */
} ct__subset;

static int64_t ct__subset_len(const ct_dataset *ds)
{
    return ((const ct__subset *)ds->user)->n;
}

static ct_status ct__subset_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const ct__subset *s = (const ct__subset *)ds->user;
    return ct_dataset_get(s->parent, s->indices[index], fields);
}

static ct_status ct__subset_get_batch(const ct_dataset *ds, const int64_t *idx, int64_t n,
                                      ct_tensor **fields)
{
    const ct__subset *s = (const ct__subset *)ds->user;
    int64_t *mapped = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!mapped) {
        return ct__fail(CT_ERR_OOM, "ct_dataset_get_batch", "out of memory");
    }
    for (int64_t k = 0; k < n; k++) {
        mapped[k] = s->indices[idx[k]];
    }
    ct_status st = ct_dataset_get_batch(s->parent, mapped, n, fields);
    ct__free(mapped);
    return st;
}

static void ct__subset_destroy(ct_dataset *ds)
{
    ct__subset *s = (ct__subset *)ds->user;
    ct__free(s->indices);
    ct__free(s);
}

ct_dataset *ct_subset_new(ct_dataset *ds, const int64_t *indices, int64_t n)
{
    const char *op = "ct_subset_new";
    if (!ct__dataset_check(op, ds) || (n > 0 && ct__null(op, indices))) {
        return NULL;
    }
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(int64_t) - 1) {
        ct__fail(CT_ERR_VALUE, op, "the number of indices must be non-negative, got %lld",
                 (long long)n);
        return NULL;
    }
    int64_t len = ds->len(ds);
    for (int64_t k = 0; k < n; k++) {
        if (indices[k] < 0 || indices[k] >= len) {
            ct__fail(CT_ERR_INDEX, op, "index %lld is out of bounds for dimension 0 with size "
                     "%lld", (long long)indices[k], (long long)len);
            return NULL;
        }
    }
    ct__subset *s = (ct__subset *)ct__calloc(sizeof(ct__subset));
    int64_t *copy = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!s || !copy) {
        ct__free(s);
        ct__free(copy);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (n > 0) {
        memcpy(copy, indices, sizeof(int64_t) * (size_t)n);
    }
    s->base.len = ct__subset_len;
    s->base.get = ct__subset_get;
    s->base.get_batch = ct__subset_get_batch;
    s->base.destroy = ct__subset_destroy;
    s->base.n_fields = ds->n_fields;
    s->base.user = s;
    s->parent = ds;
    s->n = n;
    s->indices = copy;
    return &s->base;
}

ct_status ct_random_split(ct_dataset *ds, const int64_t *lengths, int n, ct_generator *g,
                          ct_dataset **out)
{
    const char *op = "ct_random_split";
    if (ct__null(op, out)) {
        return CT_ERR_NULL_ARG;
    }
    for (int k = 0; k < n; k++) {
        out[k] = NULL;
    }
    if (!ct__dataset_check(op, ds) || ct__null(op, lengths)) {
        return ct_error_code();
    }
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, op, "expected at least one length, got %d", n);
    }
    int64_t len = ds->len(ds), total = 0;
    for (int k = 0; k < n; k++) {
        if (lengths[k] < 0 || lengths[k] > len) {
            return ct__fail(CT_ERR_VALUE, op, "length %d is %lld, expected 0 to %lld", k,
                            (long long)lengths[k], (long long)len);
        }
        total += lengths[k];
        if (total > len) {
            break;
        }
    }
    if (total != len) {
        return ct__fail(CT_ERR_VALUE, op, "Sum of input lengths does not equal the length of the "
                        "input dataset!");
    }
    ct_tensor *perm = ct_randperm(len, g);
    if (!perm) {
        return ct_error_code();
    }
    const int64_t *p = (const int64_t *)ct__data(perm);
    int64_t offset = 0;
    ct_status st = CT_OK;
    for (int k = 0; k < n && st == CT_OK; k++) {
        out[k] = ct_subset_new(ds, p + offset, lengths[k]);
        offset += lengths[k];
        st = out[k] ? CT_OK : ct_error_code();
    }
    ct_free(perm);
    if (st != CT_OK) {
        for (int k = 0; k < n; k++) {
            ct_dataset_free(out[k]);
            out[k] = NULL;
        }
    }
    return st;
}

/* PyTorch's lengths for fractions: floor(len * f), the remainder round-robin. */
static ct_status ct__split_lengths(const char *op, int64_t len, const double *fractions, int n,
                                  int64_t *lengths)
{
    double sum = 0;
    for (int k = 0; k < n; k++) {
        sum += fractions[k];
    }
    if (!(fabs(sum - 1.0) <= 1e-9 && sum <= 1.0)) {
        return ct__fail(CT_ERR_VALUE, op, "Sum of input lengths does not equal the length of "
                        "the input dataset!");
    }
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        if (!(fractions[k] >= 0 && fractions[k] <= 1)) {
            return ct__fail(CT_ERR_VALUE, op, "Fraction at index %d is not between 0 and 1", k);
        }
        lengths[k] = (int64_t)floor((double)len * fractions[k]);
        total += lengths[k];
    }
    for (int64_t i = 0; i < len - total; i++) {
        lengths[i % n]++;
    }
    return CT_OK;
}

ct_status ct_random_split_fractions(ct_dataset *ds, const double *fractions, int n,
                                    ct_generator *g, ct_dataset **out)
{
    const char *op = "ct_random_split_fractions";
    if (ct__null(op, out)) {
        return CT_ERR_NULL_ARG;
    }
    for (int k = 0; k < n; k++) {
        out[k] = NULL;
    }
    if (!ct__dataset_check(op, ds) || ct__null(op, fractions)) {
        return ct_error_code();
    }
    if (n < 1) {
        return ct__fail(CT_ERR_VALUE, op, "expected at least one fraction, got %d", n);
    }
    int64_t *lengths = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!lengths) {
        return ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_status st = ct__split_lengths(op, ds->len(ds), fractions, n, lengths);
    if (st == CT_OK) {
        st = ct_random_split(ds, lengths, n, g, out);
    }
    ct__free(lengths);
    return st;
}

/* ---- ConcatDataset and StackDataset ---------------------------------------------------- */
typedef struct ct__multi_dataset {
    ct_dataset base;
    int n;
    ct_dataset **parts;  /* borrowed */
    int64_t *cumulative; /* ConcatDataset: cumulative sizes */
} ct__multi_dataset;

static void ct__multi_destroy(ct_dataset *ds)
{
    ct__multi_dataset *m = (ct__multi_dataset *)ds->user;
    ct__free(m->parts);
    ct__free(m->cumulative);
    ct__free(m);
}

/* A dataset over n checked parts; NULL + error. */
static ct__multi_dataset *ct__multi_new(const char *op, ct_dataset *const *datasets, int n,
                                        const char *empty_msg)
{
    if (ct__null(op, datasets)) {
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, op, "%s", empty_msg);
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        if (!ct__dataset_check(op, datasets[k])) {
            return NULL;
        }
    }
    ct__multi_dataset *m = (ct__multi_dataset *)ct__calloc(sizeof(ct__multi_dataset));
    ct_dataset **parts = (ct_dataset **)ct__malloc(sizeof(ct_dataset *) * (size_t)n);
    int64_t *cum = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!m || !parts || !cum) {
        ct__free(m);
        ct__free(parts);
        ct__free(cum);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    memcpy(parts, datasets, sizeof(ct_dataset *) * (size_t)n);
    m->base.destroy = ct__multi_destroy;
    m->base.user = m;
    m->n = n;
    m->parts = parts;
    m->cumulative = cum;
    return m;
}

static int64_t ct__concat_len(const ct_dataset *ds)
{
    const ct__multi_dataset *m = (const ct__multi_dataset *)ds->user;
    return m->cumulative[m->n - 1];
}

static ct_status ct__concat_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const ct__multi_dataset *m = (const ct__multi_dataset *)ds->user;
    int lo = 0, hi = m->n - 1; /* the first part whose cumulative size exceeds index */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m->cumulative[mid] > index) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return ct_dataset_get(m->parts[lo], index - (lo ? m->cumulative[lo - 1] : 0), fields);
}

ct_dataset *ct_concat_dataset_new(ct_dataset *const *datasets, int n)
{
    const char *op = "ct_concat_dataset_new";
    ct__multi_dataset *m = ct__multi_new(op, datasets, n,
                                         "datasets should not be an empty iterable");
    if (!m) {
        return NULL;
    }
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        if (datasets[k]->n_fields != datasets[0]->n_fields) {
            ct__multi_destroy(&m->base);
            ct__fail(CT_ERR_VALUE, op, "dataset %d has %d fields but dataset 0 has %d", k,
                     datasets[k]->n_fields, datasets[0]->n_fields);
            return NULL;
        }
        total += datasets[k]->len(datasets[k]);
        m->cumulative[k] = total;
    }
    m->base.len = ct__concat_len;
    m->base.get = ct__concat_get;
    m->base.n_fields = datasets[0]->n_fields;
    return &m->base;
}

static int64_t ct__stack_len(const ct_dataset *ds)
{
    const ct__multi_dataset *m = (const ct__multi_dataset *)ds->user;
    return m->parts[0]->len(m->parts[0]);
}

static ct_status ct__stack_get(const ct_dataset *ds, int64_t index, ct_tensor **fields)
{
    const ct__multi_dataset *m = (const ct__multi_dataset *)ds->user;
    ct_status st = CT_OK;
    for (int k = 0, f = 0; k < m->n && st == CT_OK; f += m->parts[k]->n_fields, k++) {
        st = ct_dataset_get(m->parts[k], index, fields + f);
    }
    return st;
}

static ct_status ct__stack_get_batch(const ct_dataset *ds, const int64_t *idx, int64_t n,
                                     ct_tensor **fields)
{
    const ct__multi_dataset *m = (const ct__multi_dataset *)ds->user;
    ct_status st = CT_OK;
    for (int k = 0, f = 0; k < m->n && st == CT_OK; f += m->parts[k]->n_fields, k++) {
        st = ct_dataset_get_batch(m->parts[k], idx, n, fields + f);
    }
    return st;
}

ct_dataset *ct_stack_dataset_new(ct_dataset *const *datasets, int n)
{
    const char *op = "ct_stack_dataset_new";
    ct__multi_dataset *m = ct__multi_new(op, datasets, n, "At least one dataset should be "
                                         "passed");
    if (!m) {
        return NULL;
    }
    int fields = 0;
    const char *bad = NULL;
    for (int k = 0; k < n && !bad; k++) {
        fields += datasets[k]->n_fields;
        if (datasets[k]->len(datasets[k]) != datasets[0]->len(datasets[0])) {
            bad = "Size mismatch between datasets";
        } else if (fields > CT_DATASET_MAX_FIELDS) {
            bad = "the datasets have more fields in all than CT_DATASET_MAX_FIELDS";
        }
    }
    if (bad) {
        ct__multi_destroy(&m->base);
        ct__fail(CT_ERR_VALUE, op, "%s", bad);
        return NULL;
    }
    m->base.len = ct__stack_len;
    m->base.get = ct__stack_get;
    m->base.get_batch = ct__stack_get_batch;
    m->base.n_fields = fields;
    return &m->base;
}

/* ---- iterable datasets ----------------------------------------------------------------- */
static bool ct__iterable_check(const char *op, const ct_iterable_dataset *ds)
{
    if (ct__null(op, ds)) {
        return false;
    }
    if (!ds->next || ds->n_fields < 1 || ds->n_fields > CT_DATASET_MAX_FIELDS) {
        ct__fail(CT_ERR_VALUE, op, "the iterable dataset's next callback must not be NULL and "
                 "its n_fields must be 1 to %d (got %d)", CT_DATASET_MAX_FIELDS, ds->n_fields);
        return false;
    }
    return true;
}

ct_status ct_iterable_dataset_iter(ct_iterable_dataset *ds)
{
    const char *op = "ct_iterable_dataset_iter";
    if (!ct__iterable_check(op, ds)) {
        return ct_error_code();
    }
    ct_status st = ds->iter ? ds->iter(ds) : CT_OK;
    if (st != CT_OK && ct_error_code() == CT_OK) {
        ct__fail(st, op, "the dataset's iter callback failed with status %s", ct_status_str(st));
    }
    return st;
}

int ct_iterable_dataset_next(ct_iterable_dataset *ds, ct_tensor **fields)
{
    const char *op = "ct_iterable_dataset_next";
    if (ct__null(op, fields) || !ct__iterable_check(op, ds)) {
        return -1;
    }
    ct__dataset_null(fields, ds->n_fields);
    int r = ds->next(ds, fields);
    if (r == 1 && ct__dataset_finish(op, CT_OK, fields, ds->n_fields) == CT_OK) {
        return 1;
    }
    if (r != 0) {
        ct__dataset_finish(op, ct_error_code() ? ct_error_code() : CT_ERR_VALUE, fields,
                           ds->n_fields);
        return -1;
    }
    ct__dataset_clear(fields, ds->n_fields);
    return 0;
}

void ct_iterable_dataset_free(ct_iterable_dataset *ds)
{
    if (ds && ds->destroy) {
        ds->destroy(ds);
    }
}

typedef struct ct__chain_dataset {
    ct_iterable_dataset base;
    int n, cur; /* cur: the dataset being read; n: none left */
    ct_iterable_dataset **parts; /* borrowed, or owned by a replica */
    bool owns_parts;
} ct__chain_dataset;

static ct_status ct__chain_iter(ct_iterable_dataset *ds)
{
    ct__chain_dataset *c = (ct__chain_dataset *)ds->user;
    c->cur = 0;
    return ct_iterable_dataset_iter(c->parts[0]);
}

static int ct__chain_next(ct_iterable_dataset *ds, ct_tensor **fields)
{
    ct__chain_dataset *c = (ct__chain_dataset *)ds->user;
    while (c->cur < c->n) {
        int r = ct_iterable_dataset_next(c->parts[c->cur], fields);
        if (r != 0) {
            return r;
        }
        if (++c->cur < c->n && ct_iterable_dataset_iter(c->parts[c->cur]) != CT_OK) {
            return -1;
        }
    }
    return 0;
}

static void ct__chain_destroy(ct_iterable_dataset *ds)
{
    ct__chain_dataset *c = (ct__chain_dataset *)ds->user;
    for (int k = 0; c->owns_parts && k < c->n; k++) {
        ct_iterable_dataset_free(c->parts[k]);
    }
    ct__free(c->parts);
    ct__free(c);
}

static ct_iterable_dataset *ct__chain_clone(const ct_iterable_dataset *ds);

/* A chain over parts[0..n) (checked; copied), owning them when owns_parts; NULL + error. */
static ct_iterable_dataset *ct__chain_new(const char *op, ct_iterable_dataset *const *parts,
                                          int n, bool owns_parts)
{
    ct__chain_dataset *c = (ct__chain_dataset *)ct__calloc(sizeof(ct__chain_dataset));
    ct_iterable_dataset **copy =
        (ct_iterable_dataset **)ct__malloc(sizeof(ct_iterable_dataset *) * (size_t)n);
    if (!c || !copy) {
        ct__free(c);
        ct__free(copy);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    memcpy(copy, parts, sizeof(ct_iterable_dataset *) * (size_t)n);
    bool clonable = true;
    for (int k = 0; k < n; k++) {
        clonable = clonable && parts[k]->clone;
    }
    c->base.iter = ct__chain_iter;
    c->base.next = ct__chain_next;
    c->base.destroy = ct__chain_destroy;
    c->base.clone = clonable ? ct__chain_clone : NULL;
    c->base.n_fields = parts[0]->n_fields;
    c->base.user = c;
    c->n = n;
    c->cur = n; /* exhausted until iter */
    c->parts = copy;
    c->owns_parts = owns_parts;
    return &c->base;
}

/* A replica: a chain owning a clone of each part. */
static ct_iterable_dataset *ct__chain_clone(const ct_iterable_dataset *ds)
{
    const char *op = "ct_chain_dataset clone";
    const ct__chain_dataset *c = (const ct__chain_dataset *)ds->user;
    ct_iterable_dataset **parts =
        (ct_iterable_dataset **)ct__calloc(sizeof(ct_iterable_dataset *) * (size_t)c->n);
    bool ok = parts != NULL;
    for (int k = 0; ok && k < c->n; k++) {
        parts[k] = c->parts[k]->clone(c->parts[k]);
        ok = parts[k] && ct__iterable_check(op, parts[k]);
        if (ok && parts[k]->n_fields != c->base.n_fields) {
            ok = false;
            ct__fail(CT_ERR_VALUE, op, "the clone of dataset %d has %d fields, not %d", k,
                     parts[k]->n_fields, c->base.n_fields);
        }
    }
    ct_iterable_dataset *out = ok ? ct__chain_new(op, parts, c->n, true) : NULL;
    for (int k = 0; !out && parts && k < c->n; k++) {
        ct_iterable_dataset_free(parts[k]);
    }
    if (!parts) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ct__free(parts);
    return out;
}

ct_iterable_dataset *ct_chain_dataset_new(ct_iterable_dataset *const *datasets, int n)
{
    const char *op = "ct_chain_dataset_new";
    if (ct__null(op, datasets)) {
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, op, "expected at least one dataset, got %d", n);
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        if (!ct__iterable_check(op, datasets[k])) {
            return NULL;
        }
        if (datasets[k]->n_fields != datasets[0]->n_fields) {
            ct__fail(CT_ERR_VALUE, op, "dataset %d has %d fields but dataset 0 has %d", k,
                     datasets[k]->n_fields, datasets[0]->n_fields);
            return NULL;
        }
    }
    return ct__chain_new(op, datasets, n, false);
}

#undef CT__GATHER_AHEAD
CT__GLUE_END
