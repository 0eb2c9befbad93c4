/* data/sampler.c - the sampler vtable and the built-in samplers.
 *
 * Every built-in index sampler is a buffered stream: a refill callback writes the pass's next
 * chunk (a randperm, a randint(32) block, the whole multinomial draw ...) into buf and next
 * hands the chunk out index by index, refilling only when it is used up, so the generator
 * calls happen when PyTorch's lazy generator functions make them.
 * Legend: n the population (len(ds), or the subset/weights count), num the pass's length.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "dataset.h"
#include "sampler.h"

CT__GLUE_BEGIN

/* ---- the vtable ------------------------------------------------------------------------ */
/* The destroy of a sampler that owns nothing but its struct (first in its allocation). */
static void ct__sampler_free_self(ct_sampler *s)
{
    ct__free(s);
}

ct_sampler *ct_sampler_new(ct_status (*iter)(ct_sampler *self),
                           int64_t (*next)(ct_sampler *self, int64_t *out),
                           int64_t (*len)(const ct_sampler *self), int64_t batch_size,
                           void *user)
{
    const char *op = "ct_sampler_new";
    if (!next && ct__null_any(op, NULL)) {
        return NULL;
    }
    if (batch_size < 0) {
        ct__fail(CT_ERR_VALUE, op, "batch_size must be 0 (indices) or positive, got %lld",
                 (long long)batch_size);
        return NULL;
    }
    ct_sampler *s = (ct_sampler *)ct__calloc(sizeof(ct_sampler));
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->iter = iter;
    s->next = next;
    s->len = len;
    s->destroy = ct__sampler_free_self;
    s->batch_size = batch_size;
    s->user = user;
    return s;
}

static bool ct__sampler_check(const char *op, const ct_sampler *s)
{
    if (ct__null(op, s)) {
        return false;
    }
    if (!s->next || s->batch_size < 0) {
        ct__fail(CT_ERR_VALUE, op, "the sampler's next callback must not be NULL and its "
                 "batch_size must be >= 0");
        return false;
    }
    return true;
}

ct_status ct_sampler_iter(ct_sampler *s)
{
    if (!ct__sampler_check("ct_sampler_iter", s)) {
        return ct_error_code();
    }
    return s->iter ? s->iter(s) : CT_OK;
}

int64_t ct_sampler_next(ct_sampler *s, int64_t *out)
{
    const char *op = "ct_sampler_next";
    if (!ct__sampler_check(op, s) || ct__null(op, out)) {
        return -1;
    }
    int64_t got = s->next(s, out);
    int64_t most = s->batch_size ? s->batch_size : 1;
    if (got < -1 || got > most) {
        ct__fail(CT_ERR_VALUE, op, "the sampler returned %lld items, expected -1 to %lld",
                 (long long)got, (long long)most);
        return -1;
    }
    if (got < 0 && ct_error_code() == CT_OK) {
        ct__fail(CT_ERR_VALUE, op, "the sampler failed without recording an error");
    }
    return got;
}

int64_t ct_sampler_len(const ct_sampler *s)
{
    if (!ct__sampler_check("ct_sampler_len", s)) {
        return -1;
    }
    return s->len ? s->len(s) : -1;
}

void ct_sampler_free(ct_sampler *s)
{
    if (s && s->destroy) {
        s->destroy(s);
    }
}

/* ---- buffered index samplers ------------------------------------------------------------ */
typedef struct ct__isampler ct__isampler;
struct ct__isampler {
    ct_sampler base;
    /* Writes the pass's next chunk into buf[0..buf_len) and sets last on the final one;
       false after recording an error. */
    bool (*refill)(ct__isampler *s);
    int64_t (*count)(const ct__isampler *s); /* len(sampler) */
    ct_dataset *ds;                          /* borrowed, or NULL */
    ct_generator *g;                         /* borrowed, or NULL */
    ct_generator *own;                       /* RandomSampler's private generator */
    bool replacement;
    int64_t num_samples; /* 0: len(ds) */
    int64_t *items;      /* SubsetRandomSampler's indices */
    double *weights;     /* WeightedRandomSampler's weights */
    int64_t n_items;
    ct_distributed_sampler_opts dist;
    int64_t epoch;
    int64_t n;     /* the population of the current pass */
    int64_t chunk; /* chunks written this pass */
    bool last;     /* the chunk in buf is the pass's last */
    int64_t *buf;
    int64_t buf_len, buf_pos, buf_cap;
};

static bool ct__is_reserve(ct__isampler *s, int64_t n)
{
    if (n <= s->buf_cap) {
        return true;
    }
    int64_t *p = (uint64_t)n > SIZE_MAX / sizeof(int64_t)
                     ? NULL
                     : (int64_t *)ct__realloc(s->buf, sizeof(int64_t) * (size_t)n);
    if (!p) {
        ct__fail(CT_ERR_OOM, "ct_sampler_next", "out of memory for %lld indices", (long long)n);
        return false;
    }
    s->buf = p;
    s->buf_cap = n;
    return true;
}

/* Copies the first k values of an int64 tensor t (freed here) into buf. */
static bool ct__is_take(ct__isampler *s, ct_tensor *t, int64_t k)
{
    bool ok = t && ct__is_reserve(s, k);
    if (ok && k > 0) {
        memcpy(s->buf, ct__data(t), sizeof(int64_t) * (size_t)k);
    }
    s->buf_len = ok ? k : 0;
    ct_free(t);
    return ok;
}

static ct_status ct__is_iter(ct_sampler *base)
{
    ct__isampler *s = (ct__isampler *)base->user;
    s->chunk = 0;
    s->last = false;
    s->buf_len = s->buf_pos = 0;
    return CT_OK;
}

static int64_t ct__is_next(ct_sampler *base, int64_t *out)
{
    ct__isampler *s = (ct__isampler *)base->user;
    while (s->buf_pos == s->buf_len) {
        if (s->last) {
            return 0;
        }
        s->buf_pos = 0;
        if (!s->refill(s)) {
            s->last = true;
            s->buf_len = 0;
            return -1;
        }
        s->chunk++;
    }
    out[0] = s->buf[s->buf_pos++];
    return 1;
}

static int64_t ct__is_len(const ct_sampler *base)
{
    const ct__isampler *s = (const ct__isampler *)base->user;
    return s->count(s);
}

static void ct__is_destroy(ct_sampler *base)
{
    ct__isampler *s = (ct__isampler *)base->user;
    ct_generator_free(s->own);
    ct__free(s->items);
    ct__free(s->weights);
    ct__free(s->buf);
    ct__free(s);
}

static ct__isampler *ct__is_new(const char *op, bool (*refill)(ct__isampler *),
                                int64_t (*count)(const ct__isampler *), ct_dataset *ds,
                                ct_generator *g)
{
    ct__isampler *s = (ct__isampler *)ct__calloc(sizeof(ct__isampler));
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->base.iter = ct__is_iter;
    s->base.next = ct__is_next;
    s->base.len = ct__is_len;
    s->base.destroy = ct__is_destroy;
    s->base.user = s;
    s->refill = refill;
    s->count = count;
    s->ds = ds;
    s->g = g;
    return s;
}

/* The population at the pass's first chunk: len(ds); false on error. */
static bool ct__is_population(ct__isampler *s)
{
    if (s->chunk == 0) {
        s->n = ct_dataset_len(s->ds);
    }
    return s->n >= 0;
}

/* ---- SequentialSampler ---------------------------------------------------------------- */
static bool ct__seq_refill(ct__isampler *s)
{
    if (!ct__is_population(s) || !ct__is_reserve(s, s->n)) {
        return false;
    }
    for (int64_t i = 0; i < s->n; i++) {
        s->buf[i] = i;
    }
    s->buf_len = s->n;
    s->last = true;
    return true;
}

static int64_t ct__ds_count(const ct__isampler *s)
{
    return ct_dataset_len(s->ds);
}

ct_sampler *ct_sequential_sampler_new(ct_dataset *ds)
{
    const char *op = "ct_sequential_sampler_new";
    if (ct__null(op, ds) || ct_dataset_len(ds) < 0) {
        return NULL;
    }
    ct__isampler *s = ct__is_new(op, ct__seq_refill, ct__ds_count, ds, NULL);
    return s ? &s->base : NULL;
}

/* ---- RandomSampler ------------------------------------------------------------------- */
static int64_t ct__rand_count(const ct__isampler *s)
{
    return s->num_samples ? s->num_samples : ct_dataset_len(s->ds);
}

/* A seed as torch.empty((), dtype=torch.int64).random_(generator=g).item(). */
static bool ct__draw_seed(ct_generator *g, int64_t *seed)
{
    ct_tensor *t = ct_empty(NULL, 0, CT_INT64);
    bool ok = t && ct_random_(t, g);
    *seed = ok ? ct_item_int64(t) : 0;
    ct_free(t);
    return ok;
}

/* The pass's generator: g, or a private one seeded from the default generator. */
static ct_generator *ct__rand_gen(ct__isampler *s)
{
    if (s->g) {
        return s->g;
    }
    int64_t seed;
    if (!ct__draw_seed(NULL, &seed)) {
        return NULL;
    }
    ct_generator_manual_seed(s->own, (uint64_t)seed);
    return s->own;
}

static bool ct__rand_refill(ct__isampler *s)
{
    const char *op = "ct_sampler_next";
    if (!ct__is_population(s)) {
        return false;
    }
    if (s->n == 0) {
        ct__fail(CT_ERR_VALUE, op, "RandomSampler cannot sample from an empty dataset");
        return false;
    }
    ct_generator *g = s->chunk == 0 ? ct__rand_gen(s) : (s->g ? s->g : s->own);
    if (!g) {
        return false;
    }
    int64_t num = ct__rand_count(s);
    if (s->replacement) {
        int64_t k = s->chunk < num / 32 ? 32 : num % 32;
        s->last = s->chunk >= num / 32;
        return ct__is_take(s, ct_randint(0, s->n, &k, 1, CT_INT64, g), k);
    }
    int64_t k = s->chunk < num / s->n ? s->n : num % s->n;
    s->last = s->chunk >= num / s->n;
    return ct__is_take(s, ct_randperm(s->n, g), k);
}

ct_sampler *ct_random_sampler_new(ct_dataset *ds, bool replacement, int64_t num_samples,
                                  ct_generator *g)
{
    const char *op = "ct_random_sampler_new";
    int64_t len = ct__null(op, ds) ? -1 : ct_dataset_len(ds);
    if (len < 0) {
        return NULL;
    }
    if (num_samples < 0 || (num_samples == 0 && len == 0)) {
        ct__fail(CT_ERR_VALUE, op, "num_samples should be a positive integer value, but got "
                 "num_samples=%lld", (long long)(num_samples ? num_samples : len));
        return NULL;
    }
    ct__isampler *s = ct__is_new(op, ct__rand_refill, ct__rand_count, ds, g);
    if (s && !g) {
        s->own = ct_generator_new();
        if (!s->own) {
            ct__is_destroy(&s->base);
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return NULL;
        }
    }
    if (s) {
        s->replacement = replacement;
        s->num_samples = num_samples;
    }
    return s ? &s->base : NULL;
}

/* ---- SubsetRandomSampler and WeightedRandomSampler ------------------------------------ */
static int64_t ct__items_count(const ct__isampler *s)
{
    return s->n_items;
}

static bool ct__subset_refill(ct__isampler *s)
{
    if (!ct__is_take(s, ct_randperm(s->n_items, s->g), s->n_items)) {
        return false;
    }
    for (int64_t k = 0; k < s->n_items; k++) {
        s->buf[k] = s->items[s->buf[k]];
    }
    s->last = true;
    return true;
}

/* A copy of n values of size es (at least one byte allocated); NULL + error when out of
   memory. */
static void *ct__copy_values(const char *op, const void *src, int64_t n, size_t es)
{
    void *p = (uint64_t)n > SIZE_MAX / es - 1 ? NULL : ct__malloc(es * (size_t)(n + 1));
    if (!p) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (n > 0) {
        memcpy(p, src, es * (size_t)n);
    }
    return p;
}

ct_sampler *ct_subset_random_sampler_new(const int64_t *indices, int64_t n, ct_generator *g)
{
    const char *op = "ct_subset_random_sampler_new";
    if (n > 0 && ct__null(op, indices)) {
        return NULL;
    }
    if (n < 0) {
        ct__fail(CT_ERR_VALUE, op, "the number of indices must be non-negative, got %lld",
                 (long long)n);
        return NULL;
    }
    ct__isampler *s = ct__is_new(op, ct__subset_refill, ct__items_count, NULL, g);
    if (s) {
        s->n_items = n;
        s->items = (int64_t *)ct__copy_values(op, indices, n, sizeof(int64_t));
        if (!s->items) {
            ct__is_destroy(&s->base);
            return NULL;
        }
    }
    return s ? &s->base : NULL;
}

static int64_t ct__num_count(const ct__isampler *s)
{
    return s->num_samples;
}

static bool ct__weighted_refill(ct__isampler *s)
{
    ct_tensor *w = ct_from_blob(s->weights, CT_FLOAT64, &s->n_items, 1, NULL, NULL);
    ct_tensor *r = w ? ct_multinomial(w, s->num_samples, s->replacement, s->g) : NULL;
    ct_free(w);
    s->last = true;
    return ct__is_take(s, r, s->num_samples);
}

ct_sampler *ct_weighted_random_sampler_new(const double *weights, int64_t n,
                                           int64_t num_samples, bool replacement,
                                           ct_generator *g)
{
    const char *op = "ct_weighted_random_sampler_new";
    if (ct__null(op, weights)) {
        return NULL;
    }
    if (num_samples < 1) {
        ct__fail(CT_ERR_VALUE, op, "num_samples should be a positive integer value, but got "
                 "num_samples=%lld", (long long)num_samples);
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, op, "expected at least one weight, got %lld", (long long)n);
        return NULL;
    }
    ct__isampler *s = ct__is_new(op, ct__weighted_refill, ct__num_count, NULL, g);
    if (s) {
        s->n_items = n;
        s->num_samples = num_samples;
        s->replacement = replacement;
        s->weights = (double *)ct__copy_values(op, weights, n, sizeof(double));
        if (!s->weights) {
            ct__is_destroy(&s->base);
            return NULL;
        }
    }
    return s ? &s->base : NULL;
}

/* ---- DistributedSampler -------------------------------------------------------------- */
/* num_samples of a rank for a dataset of n: ceil(n / R), or with drop_last and n % R != 0
   PyTorch's ceil((n - R) / R) = floor(n / R). */
static int64_t ct__dist_count(const ct__isampler *s)
{
    int64_t n = ct_dataset_len(s->ds), r = s->dist.num_replicas;
    if (n < 0) {
        return -1;
    }
    if (s->dist.drop_last && n % r != 0) {
        return n / r;
    }
    return (n + r - 1) / r;
}

static bool ct__dist_refill(ct__isampler *s)
{
    const char *op = "ct_sampler_next";
    int64_t n = ct_dataset_len(s->ds), num = ct__dist_count(s), r = s->dist.num_replicas;
    if (n < 0 || !ct__is_reserve(s, n + num)) {
        return false;
    }
    if (n == 0 && !s->dist.drop_last) {
        ct__fail(CT_ERR_VALUE, op, "DistributedSampler cannot pad an empty dataset");
        return false;
    }
    if (s->dist.shuffle) {
        ct_generator *g = ct_generator_new();
        if (!g) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return false;
        }
        ct_generator_manual_seed(g, s->dist.seed + (uint64_t)s->epoch);
        bool ok = ct__is_take(s, ct_randperm(n, g), n);
        ct_generator_free(g);
        if (!ok) {
            return false;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            s->buf[i] = i;
        }
    }
    /* indices padded cyclically to total_size (or cut), then positions rank, rank + R, ...:
       position p of the padded list is p % n; the share goes after the n indices first */
    for (int64_t k = 0; k < num; k++) {
        s->buf[n + k] = s->buf[(s->dist.rank + k * r) % n];
    }
    memmove(s->buf, s->buf + n, sizeof(int64_t) * (size_t)num);
    s->buf_len = num;
    s->last = true;
    return true;
}

ct_distributed_sampler_opts ct_distributed_sampler_defaults(void)
{
    ct_distributed_sampler_opts o;
    o.num_replicas = 1;
    o.rank = 0;
    o.shuffle = true;
    o.seed = 0;
    o.drop_last = false;
    return o;
}

ct_sampler *ct_distributed_sampler_new(ct_dataset *ds, const ct_distributed_sampler_opts *opts)
{
    const char *op = "ct_distributed_sampler_new";
    if (ct__null(op, ds) || ct_dataset_len(ds) < 0) {
        return NULL;
    }
    ct_distributed_sampler_opts o = opts ? *opts : ct_distributed_sampler_defaults();
    if (o.num_replicas < 1) {
        ct__fail(CT_ERR_VALUE, op, "num_replicas should be a positive integer, got %lld",
                 (long long)o.num_replicas);
        return NULL;
    }
    if (o.rank < 0 || o.rank >= o.num_replicas) {
        ct__fail(CT_ERR_VALUE, op, "Invalid rank %lld, rank should be in the interval [0, %lld]",
                 (long long)o.rank, (long long)(o.num_replicas - 1));
        return NULL;
    }
    ct__isampler *s = ct__is_new(op, ct__dist_refill, ct__dist_count, ds, NULL);
    if (s) {
        s->dist = o;
    }
    return s ? &s->base : NULL;
}

ct_status ct_distributed_sampler_set_epoch(ct_sampler *s, int64_t epoch)
{
    const char *op = "ct_distributed_sampler_set_epoch";
    if (ct__null(op, s)) {
        return CT_ERR_NULL_ARG;
    }
    if (s->next != ct__is_next || ((ct__isampler *)s->user)->refill != ct__dist_refill) {
        return ct__fail(CT_ERR_VALUE, op, "the sampler is not a DistributedSampler");
    }
    ((ct__isampler *)s->user)->epoch = epoch;
    return CT_OK;
}

/* ---- BatchSampler --------------------------------------------------------------------- */
typedef struct ct__batch_sampler {
    ct_sampler base;
    ct_sampler *inner; /* borrowed */
    bool drop_last;
    bool done;
} ct__batch_sampler;

static ct_status ct__bs_iter(ct_sampler *base)
{
    ct__batch_sampler *b = (ct__batch_sampler *)base->user;
    b->done = false;
    return ct_sampler_iter(b->inner);
}

static int64_t ct__bs_next(ct_sampler *base, int64_t *out)
{
    ct__batch_sampler *b = (ct__batch_sampler *)base->user;
    int64_t k = 0;
    while (!b->done && k < base->batch_size) {
        int64_t got = ct_sampler_next(b->inner, out + k);
        if (got < 0) {
            return -1;
        }
        b->done = got == 0;
        k += got;
    }
    return b->drop_last && k < base->batch_size ? 0 : k;
}

static int64_t ct__bs_len(const ct_sampler *base)
{
    const ct__batch_sampler *b = (const ct__batch_sampler *)base->user;
    int64_t n = ct_sampler_len(b->inner), bs = base->batch_size;
    if (n < 0) {
        return -1;
    }
    return b->drop_last ? n / bs : (n + bs - 1) / bs;
}

ct_sampler *ct_batch_sampler_new(ct_sampler *sampler, int64_t batch_size, bool drop_last)
{
    const char *op = "ct_batch_sampler_new";
    if (!ct__sampler_check(op, sampler)) {
        return NULL;
    }
    if (batch_size < 1) {
        ct__fail(CT_ERR_VALUE, op, "batch_size should be a positive integer value, but got "
                 "batch_size=%lld", (long long)batch_size);
        return NULL;
    }
    if (sampler->batch_size != 0) {
        ct__fail(CT_ERR_VALUE, op, "the sampler must yield single indices, not batches");
        return NULL;
    }
    ct__batch_sampler *b = (ct__batch_sampler *)ct__calloc(sizeof(ct__batch_sampler));
    if (!b) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    b->base.iter = ct__bs_iter;
    b->base.next = ct__bs_next;
    b->base.len = ct__bs_len;
    b->base.destroy = ct__sampler_free_self;
    b->base.batch_size = batch_size;
    b->base.user = b;
    b->inner = sampler;
    b->drop_last = drop_last;
    return &b->base;
}
CT__GLUE_END
