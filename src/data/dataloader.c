/* data/dataloader.c - DataLoader: a sampler (sequential or a permutation per epoch), a batch
 * sampler (batch_size, drop_last) and batched fetches through ct_dataset_get_batch.
 *
 * Legend: N samples in the epoch, B batch size, pos the next position in the epoch's order.
 * RNG stream (as PyTorch's single-process iterator): at each epoch start one 64-bit base
 * seed from the generator; with shuffle, randperm(N) gives the order and a second
 * randperm(N) is drawn when the sampler is exhausted (RandomSampler's trailing
 * randperm(n)[:0]). Without an explicit generator, RandomSampler seeds a private generator
 * with a second draw of random64() % 2^63 from the default one, exactly as PyTorch's does.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "dataset.h"
#include "dataloader.h"

CT__GLUE_BEGIN

struct ct_dataloader {
    ct_dataset *ds; /* borrowed */
    ct_dataloader_opts opts;
    ct_generator *own_gen; /* shuffle without a generator: reseeded every epoch */
    bool started;          /* an epoch is under way */
    int64_t n;             /* N of the current epoch */
    int64_t pos;
    int64_t *order; /* the epoch's permutation (shuffle), capacity order_cap */
    int64_t order_cap;
    int64_t *seq; /* scratch for sequential batch indices, capacity seq_cap */
    int64_t seq_cap;
};

ct_dataloader_opts ct_dataloader_defaults(void)
{
    ct_dataloader_opts o;
    o.batch_size = 1;
    o.shuffle = false;
    o.drop_last = false;
    o.generator = NULL;
    return o;
}

ct_dataloader *ct_dataloader_new(ct_dataset *ds, const ct_dataloader_opts *opts)
{
    const char *op = "ct_dataloader_new";
    if (ct__null(op, ds) || ct_dataset_len(ds) < 0) {
        return NULL;
    }
    ct_dataloader_opts o = opts ? *opts : ct_dataloader_defaults();
    if (o.batch_size < 1) {
        ct__fail(CT_ERR_VALUE, op, "batch_size should be a positive integer value, but got "
                 "batch_size=%lld", (long long)o.batch_size);
        return NULL;
    }
    ct_dataloader *dl = (ct_dataloader *)ct__calloc(sizeof(ct_dataloader));
    if (!dl) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    dl->ds = ds;
    dl->opts = o;
    return dl;
}

/* Grows *buf to hold n int64 values; false + error when out of memory. */
static bool ct__dl_reserve(int64_t **buf, int64_t *cap, int64_t n)
{
    if (n <= *cap) {
        return true;
    }
    if ((uint64_t)n > SIZE_MAX / sizeof(int64_t)) {
        ct__fail(CT_ERR_OOM, "ct_dataloader_next", "out of memory for %lld indices",
                 (long long)n);
        return false;
    }
    int64_t *p = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)n);
    if (!p) {
        ct__fail(CT_ERR_OOM, "ct_dataloader_next", "out of memory for %lld indices",
                 (long long)n);
        return false;
    }
    ct__free(*buf);
    *buf = p;
    *cap = n;
    return true;
}

/* A seed drawn from g as PyTorch's torch.empty((), dtype=torch.int64).random_(g): random64()
   modulo 2^63. */
static int64_t ct__dl_seed(ct_generator *g)
{
    ct_tensor *t = ct_empty(NULL, 0, CT_INT64);
    int64_t v = t && ct_random_(t, g) ? ct_item_int64(t) : 0;
    ct_free(t);
    return v;
}

/* The generator the epoch's permutation comes from. */
static ct_generator *ct__dl_perm_gen(const ct_dataloader *dl)
{
    return dl->opts.generator ? dl->opts.generator : dl->own_gen;
}

static bool ct__dl_start(ct_dataloader *dl)
{
    int64_t n = ct_dataset_len(dl->ds);
    if (n < 0) {
        return false;
    }
    ct_generator *g = dl->opts.generator ? dl->opts.generator : ct_default_generator();
    (void)ct__dl_seed(g); /* the iterator's base seed (used by workers in PyTorch) */
    int64_t b = dl->opts.batch_size < n ? dl->opts.batch_size : n;
    if (!ct__dl_reserve(&dl->seq, &dl->seq_cap, b)) {
        return false;
    }
    if (dl->opts.shuffle) {
        if (!dl->opts.generator) {
            if (!dl->own_gen) {
                dl->own_gen = ct_generator_new();
                if (!dl->own_gen) {
                    ct__fail(CT_ERR_OOM, "ct_dataloader_next", "out of memory");
                    return false;
                }
            }
            ct_generator_manual_seed(dl->own_gen, (uint64_t)ct__dl_seed(g));
        }
        if (!ct__dl_reserve(&dl->order, &dl->order_cap, n)) {
            return false;
        }
        ct_tensor *perm = ct_randperm(n, ct__dl_perm_gen(dl));
        if (!perm) {
            return false;
        }
        if (n > 0) {
            memcpy(dl->order, ct__data(perm), sizeof(int64_t) * (size_t)n);
        }
        ct_free(perm);
    }
    dl->n = n;
    dl->pos = 0;
    dl->started = true;
    return true;
}

/* Ends the epoch: the sampler is exhausted. */
static void ct__dl_finish(ct_dataloader *dl)
{
    if (dl->opts.shuffle && dl->opts.generator) {
        ct_free(ct_randperm(dl->n, dl->opts.generator)); /* RandomSampler's randperm(n)[:0] */
    }
    dl->started = false;
}

static bool ct__dl_next(ct_dataloader *dl, ct_tensor **batch)
{
    for (int f = 0; f < dl->ds->n_fields && f < CT_DATASET_MAX_FIELDS; f++) {
        batch[f] = NULL;
    }
    if (!dl->started && !ct__dl_start(dl)) {
        return false;
    }
    int64_t left = dl->n - dl->pos, bs = dl->opts.batch_size;
    if (left <= 0 || (dl->opts.drop_last && left < bs)) {
        ct__dl_finish(dl);
        return false;
    }
    int64_t count = left < bs ? left : bs;
    const int64_t *idx = dl->seq;
    if (dl->opts.shuffle) {
        idx = dl->order + dl->pos;
    } else {
        for (int64_t k = 0; k < count; k++) {
            dl->seq[k] = dl->pos + k;
        }
    }
    dl->pos += count;
    return ct_dataset_get_batch(dl->ds, idx, count, batch) == CT_OK;
}

bool ct_dataloader_next(ct_dataloader *dl, ct_tensor **batch)
{
    const char *op = "ct_dataloader_next";
    if (ct__null(op, dl) || ct__null(op, batch)) {
        return false;
    }
    ct__profiler_range_begin(false, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    bool ok = ct__dl_next(dl, batch);
    ct__profiler_range_end();
    return ok;
}

void ct_dataloader_reset(ct_dataloader *dl)
{
    if (!ct__null("ct_dataloader_reset", dl)) {
        dl->started = false;
    }
}

int64_t ct_dataloader_len(const ct_dataloader *dl)
{
    if (ct__null("ct_dataloader_len", dl)) {
        return -1;
    }
    int64_t n = ct_dataset_len(dl->ds), bs = dl->opts.batch_size;
    if (n < 0) {
        return -1;
    }
    return n / bs + (!dl->opts.drop_last && n % bs != 0 ? 1 : 0);
}

void ct_dataloader_free(ct_dataloader *dl)
{
    if (!dl) {
        return;
    }
    ct_generator_free(dl->own_gen);
    ct__free(dl->order);
    ct__free(dl->seq);
    ct__free(dl);
}
CT__GLUE_END
