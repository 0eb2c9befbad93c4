/* tests/test_dataloader.c - samplers and the worker DataLoader against PyTorch's index streams
 * (tests/golden/sampler_golden.h from tools/gen_golden_sampler.py), worker failures,
 * shutdown mid-epoch, timeouts, worker info and seeds, argument errors.
 */
#include "test.h"
#include "golden/sampler_golden.h"

#include <time.h>

#define LEN(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))
#define CAP 512

/* A tensor dataset of the int64 samples 0..n-1. */
static ct_dataset *range_ds(int64_t n)
{
    ct_tensor *t = ct_arange(0, (double)n, 1, CT_INT64);
    return ct_tensor_dataset_new(&t, 1);
}

/* `passes` passes of s into out (batches flattened), batch sizes into lens (may be NULL);
   the number of indices, -1 on error. */
static int64_t pull(ct_sampler *s, int passes, int64_t *out, int64_t *lens)
{
    int64_t n = 0, nb = 0, buf[64];
    for (int p = 0; p < passes; p++) {
        if (ct_sampler_iter(s) != CT_OK) {
            return -1;
        }
        int64_t got;
        while ((got = ct_sampler_next(s, buf)) > 0 && n + got <= CAP) {
            memcpy(out + n, buf, sizeof(int64_t) * (size_t)got);
            n += got;
            if (lens) {
                lens[nb++] = got;
            }
        }
        if (got != 0) {
            return -1;
        }
    }
    return n;
}

static bool same(const int64_t *got, int64_t n, const int64_t *want, int64_t n_want)
{
    return n == n_want && memcmp(got, want, sizeof(int64_t) * (size_t)n) == 0;
}

#define CHECK_STREAM(s, passes, want)                                                       \
    do {                                                                                    \
        int64_t got_[CAP];                                                                  \
        int64_t n_ = pull(s, passes, got_, NULL);                                           \
        CHECK_MSG(same(got_, n_, want, LEN(want)), "%s: %lld indices differ from PyTorch's", \
                  #want, (long long)n_);                                                    \
    } while (0)

/* The default generator's next float32, as bits. */
static uint32_t next_rand_bits(void)
{
    float f = (float)ct_item(ct_rand(NULL, 0, CT_FLOAT32, NULL));
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void test_dataloader_random_sampler(void)
{
    ct_scope_begin();
    ct_dataset *ds = range_ds(10);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 3);
    ct_sampler *s = ct_random_sampler_new(ds, false, 0, g);
    CHECK(ct_sampler_len(s) == 10 && s->batch_size == 0);
    CHECK_STREAM(s, 2, sampler_golden_random);
    ct_sampler_free(s);
    ct_generator_manual_seed(g, 3);
    s = ct_random_sampler_new(ds, false, 25, g);
    CHECK(ct_sampler_len(s) == 25);
    CHECK_STREAM(s, 1, sampler_golden_random_num25);
    ct_sampler_free(s);
    ct_generator_manual_seed(g, 4);
    s = ct_random_sampler_new(ds, true, 70, g);
    CHECK_STREAM(s, 1, sampler_golden_random_repl70);
    ct_sampler_free(s);
    /* no generator: each pass seeds a private one from the default generator */
    for (int repl = 0; repl < 2; repl++) {
        ct_manual_seed(5);
        s = ct_random_sampler_new(ds, repl, 0, NULL);
        if (repl) {
            CHECK_STREAM(s, 2, sampler_golden_random_repl_default);
        } else {
            CHECK_STREAM(s, 2, sampler_golden_random_default);
        }
        CHECK(next_rand_bits() == (repl ? sampler_golden_random_repl_default_after[0]
                                        : sampler_golden_random_default_after[0]));
        ct_sampler_free(s);
    }
    CHECK(ct_random_sampler_new(ds, false, -1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "num_samples should be a positive integer value, but got "
                "num_samples=-1");
    ct_dataset *empty = range_ds(0);
    CHECK(ct_random_sampler_new(empty, false, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "num_samples=0");
    s = ct_random_sampler_new(empty, false, 3, g);
    int64_t i;
    CHECK(ct_sampler_iter(s) == CT_OK && ct_sampler_next(s, &i) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "empty dataset");
    ct_sampler_free(s);
    ct_dataset_free(empty);
    ct_generator_free(g);
    ct_dataset_free(ds);
    ct_scope_end();
}

static void test_dataloader_subset_weighted(void)
{
    ct_scope_begin();
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 6);
    ct_sampler *s = ct_subset_random_sampler_new(sampler_golden_subset, 6, g);
    CHECK(ct_sampler_len(s) == 6);
    CHECK_STREAM(s, 2, sampler_golden_subset_stream);
    ct_sampler_free(s);
    ct_generator_manual_seed(g, 7);
    s = ct_weighted_random_sampler_new(sampler_golden_weights, 6, 12, true, g);
    CHECK(ct_sampler_len(s) == 12);
    CHECK_STREAM(s, 2, sampler_golden_weighted_repl);
    ct_sampler_free(s);
    ct_generator_manual_seed(g, 7);
    s = ct_weighted_random_sampler_new(sampler_golden_weights, 6, 5, false, g);
    CHECK_STREAM(s, 1, sampler_golden_weighted_norepl);
    ct_sampler_free(s);
    ct_manual_seed(9);
    s = ct_weighted_random_sampler_new(sampler_golden_weights, 6, 7, true, NULL);
    CHECK_STREAM(s, 1, sampler_golden_weighted_default);
    CHECK(next_rand_bits() == sampler_golden_weighted_default_after[0]);
    ct_sampler_free(s);
    /* errors: at construction, and multinomial's at the pass */
    CHECK(ct_weighted_random_sampler_new(sampler_golden_weights, 6, 0, true, g) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "num_samples should be a positive integer value");
    CHECK(ct_weighted_random_sampler_new(sampler_golden_weights, 0, 3, true, g) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "at least one weight");
    s = ct_weighted_random_sampler_new(sampler_golden_weights, 6, 7, false, g);
    int64_t i;
    CHECK(ct_sampler_iter(s) == CT_OK && ct_sampler_next(s, &i) == -1);
    CHECK(ct_error_code() == CT_ERR_VALUE);
    ct_error_clear();
    ct_sampler_free(s);
    CHECK(ct_subset_random_sampler_new(sampler_golden_subset, -1, g) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "non-negative");
    ct_generator_free(g);
    ct_scope_end();
}

static void test_dataloader_batch_sampler(void)
{
    ct_scope_begin();
    ct_dataset *ds = range_ds(10);
    ct_generator *g = ct_generator_new();
    for (int drop = 0; drop < 2; drop++) {
        ct_generator_manual_seed(g, 8);
        ct_sampler *inner = ct_random_sampler_new(ds, false, 0, g);
        ct_sampler *b = ct_batch_sampler_new(inner, 3, drop);
        CHECK(ct_sampler_len(b) == (drop ? 3 : 4) && b->batch_size == 3);
        int64_t got[CAP], lens[CAP];
        int64_t n = pull(b, 2, got, lens);
        const int64_t *want = drop ? sampler_golden_batch_drop1 : sampler_golden_batch_drop0;
        const int64_t *want_lens = drop ? sampler_golden_batch_drop1_len
                                        : sampler_golden_batch_drop0_len;
        int64_t nw = drop ? LEN(sampler_golden_batch_drop1) : LEN(sampler_golden_batch_drop0);
        int64_t nb = drop ? LEN(sampler_golden_batch_drop1_len)
                          : LEN(sampler_golden_batch_drop0_len);
        CHECK(same(got, n, want, nw) && memcmp(lens, want_lens, sizeof(int64_t) * nb) == 0);
        CHECK(ct_batch_sampler_new(b, 2, false) == NULL); /* batches of batches */
        CHECK_ERROR(CT_ERR_VALUE, "single indices");
        ct_sampler_free(b);
        ct_sampler_free(inner);
    }
    ct_sampler *seq = ct_sequential_sampler_new(ds);
    const int64_t want[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    CHECK_STREAM(seq, 1, want);
    CHECK(ct_batch_sampler_new(seq, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "batch_size should be a positive integer value, but got "
                "batch_size=0");
    ct_sampler_free(seq);
    ct_generator_free(g);
    ct_dataset_free(ds);
    ct_scope_end();
}

static void test_dataloader_distributed_sampler(void)
{
    ct_scope_begin();
    struct {
        int64_t n, reps;
        bool shuffle, drop;
        const int64_t *want;
        int64_t n_want;
    } cases[] = {
        {11, 4, true, false, sampler_golden_d11_r4, LEN(sampler_golden_d11_r4)},
        {11, 4, true, true, sampler_golden_d11_r4_drop, LEN(sampler_golden_d11_r4_drop)},
        {11, 4, false, false, sampler_golden_d11_r4_noshuf, LEN(sampler_golden_d11_r4_noshuf)},
        {2, 5, true, false, sampler_golden_d2_r5, LEN(sampler_golden_d2_r5)},
    };
    for (int c = 0; c < 4; c++) {
        ct_dataset *ds = range_ds(cases[c].n);
        int64_t got[CAP], n = 0;
        for (int64_t rank = 0; rank < cases[c].reps; rank++) {
            ct_distributed_sampler_opts o = ct_distributed_sampler_defaults();
            o.num_replicas = cases[c].reps;
            o.rank = rank;
            o.shuffle = cases[c].shuffle;
            o.seed = 17;
            o.drop_last = cases[c].drop;
            ct_sampler *s = ct_distributed_sampler_new(ds, &o);
            for (int epoch = 0; epoch < 2; epoch++) {
                CHECK(ct_distributed_sampler_set_epoch(s, epoch) == CT_OK);
                int64_t k = pull(s, 1, got + n, NULL);
                CHECK(k == ct_sampler_len(s));
                n += k;
            }
            ct_sampler_free(s);
        }
        CHECK_MSG(same(got, n, cases[c].want, cases[c].n_want), "case %d differs", c);
        ct_dataset_free(ds);
    }
    ct_dataset *ds = range_ds(4);
    ct_distributed_sampler_opts o = ct_distributed_sampler_defaults();
    o.num_replicas = 2;
    o.rank = 2;
    CHECK(ct_distributed_sampler_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid rank 2, rank should be in the interval [0, 1]");
    ct_sampler *seq = ct_sequential_sampler_new(ds);
    CHECK(ct_distributed_sampler_set_epoch(seq, 1) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "not a DistributedSampler");
    ct_sampler_free(seq);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* Sample i = (i as int64, a float32 drawn from the running thread's default generator); sample
   fail_at (if >= 0) fails. Thread-safe (a worker's generator is its own). */
typedef struct rand_data {
    int64_t n, fail_at;
    double spin_s; /* seconds each sample busy-waits (for timeouts) */
} rand_data;

static int64_t rand_len(const ct_dataset *ds)
{
    return ((const rand_data *)ds->user)->n;
}

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ct_status rand_get(const ct_dataset *ds, int64_t i, ct_tensor **fields)
{
    const rand_data *d = (const rand_data *)ds->user;
    for (double t0 = now_s(); now_s() - t0 < d->spin_s;) {
    }
    if (i == d->fail_at) {
        (void)ct_zeros(NULL, 0, CT_FLOAT32); /* a temporary that must not leak */
        return CT_ERR_VALUE;
    }
    fields[0] = ct_scalar_tensor((double)i, CT_INT64);
    fields[1] = ct_rand(NULL, 0, CT_FLOAT32, NULL);
    return CT_OK;
}

/* The ids (field 0) and float bits (field 1, when float32) of `epochs` epochs. */
static int64_t loader_ids(ct_dataloader *dl, int epochs, int64_t *ids, uint32_t *bits)
{
    int64_t n = 0;
    for (int e = 0; e < epochs; e++) {
        ct_tensor *b[2];
        ct_scope_begin();
        while (ct_dataloader_next(dl, b) && n + ct_size(b[0], 0) <= CAP) {
            for (int64_t k = 0; k < ct_size(b[0], 0); k++) {
                ids[n + k] = ((const int64_t *)ct_data_ptr(b[0]))[k];
                if (bits) {
                    memcpy(&bits[n + k], (const float *)ct_data_ptr(b[1]) + k, 4);
                }
            }
            n += ct_size(b[0], 0);
        }
        ct_scope_end();
    }
    return ct_error_code() == CT_OK ? n : -1;
}

static bool same_bits(const uint32_t *got, const uint32_t *want, int64_t n)
{
    return memcmp(got, want, sizeof(uint32_t) * (size_t)n) == 0;
}

/* Batch orders equal PyTorch's DataLoader for 0, 1, 2 and 4 workers: shuffle with the default
   generator (and its state after two epochs), a WeightedRandomSampler, DistributedSampler
   across ranks and epochs. */
static void test_dataloader_worker_orders(void)
{
    static const int workers[4] = {0, 1, 2, 4};
    ct_scope_begin();
    ct_dataset *ds = range_ds(SAMPLER_LOADER_N);
    for (int w = 0; w < 4; w++) {
        int64_t ids[CAP];
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = SAMPLER_LOADER_BATCH;
        o.num_workers = workers[w];
        o.shuffle = true;
        ct_manual_seed(11);
        ct_dataloader *dl = ct_dataloader_new(ds, &o);
        int64_t n = loader_ids(dl, 2, ids, NULL);
        CHECK_MSG(same(ids, n, sampler_golden_loader_shuffle, LEN(sampler_golden_loader_shuffle)),
                  "shuffle with %d workers", workers[w]);
        CHECK(next_rand_bits() == sampler_golden_loader_shuffle_after[0]);
        ct_dataloader_free(dl);
        o.shuffle = false;
        ct_generator *g = ct_generator_new();
        ct_generator_manual_seed(g, 12);
        double wts[SAMPLER_LOADER_N];
        for (int k = 0; k < SAMPLER_LOADER_N; k++) {
            wts[k] = sampler_golden_weights[k % 6];
        }
        o.sampler = ct_weighted_random_sampler_new(wts, SAMPLER_LOADER_N, 19, true, g);
        dl = ct_dataloader_new(ds, &o);
        n = loader_ids(dl, 2, ids, NULL);
        CHECK_MSG(same(ids, n, sampler_golden_loader_weighted,
                       LEN(sampler_golden_loader_weighted)),
                  "weighted with %d workers", workers[w]);
        ct_dataloader_free(dl);
        ct_sampler_free(o.sampler);
        ct_generator_free(g);
        n = 0;
        for (int rank = 0; rank < 3; rank++) {
            ct_distributed_sampler_opts d = ct_distributed_sampler_defaults();
            d.num_replicas = 3;
            d.rank = rank;
            d.seed = 13;
            o.sampler = ct_distributed_sampler_new(ds, &d);
            dl = ct_dataloader_new(ds, &o);
            for (int epoch = 0; epoch < 2; epoch++) {
                ct_distributed_sampler_set_epoch(o.sampler, epoch);
                n += loader_ids(dl, 1, ids + n, NULL);
            }
            ct_dataloader_free(dl);
            ct_sampler_free(o.sampler);
        }
        CHECK_MSG(same(ids, n, sampler_golden_loader_dist, LEN(sampler_golden_loader_dist)),
                  "distributed with %d workers", workers[w]);
    }
    ct_dataset_free(ds);
    ct_scope_end();
}

/* Values drawn by the dataset on the worker threads equal PyTorch's: each worker's default
   generator is seeded base_seed + worker_id, base_seed drawn once per epoch (once per loader
   with persistent workers). */
static void test_dataloader_worker_seeds(void)
{
    static const uint32_t *bits_want[5] = {
        sampler_golden_loader_rand_bits_w0, sampler_golden_loader_rand_bits_w1,
        sampler_golden_loader_rand_bits_w2, NULL, sampler_golden_loader_rand_bits_w4};
    static const uint32_t *persist_want[5] = {
        NULL, sampler_golden_loader_persist_bits_w1, sampler_golden_loader_persist_bits_w2, NULL,
        sampler_golden_loader_persist_bits_w4};
    ct_scope_begin();
    rand_data d = {SAMPLER_LOADER_N, -1, 0};
    ct_dataset ds = {rand_len, rand_get, NULL, NULL, 2, &d};
    ct_generator *g = ct_generator_new();
    for (int w = 0; w <= 4; w++) {
        if (!bits_want[w]) {
            continue;
        }
        int64_t ids[CAP];
        uint32_t bits[CAP];
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = 3;
        o.shuffle = true;
        o.num_workers = w;
        o.generator = g;
        ct_manual_seed(14);
        ct_generator_manual_seed(g, 15);
        ct_dataloader *dl = ct_dataloader_new(&ds, &o);
        int64_t n = loader_ids(dl, 1, ids, bits);
        CHECK_MSG(same(ids, n, sampler_golden_loader_rand_ids,
                       LEN(sampler_golden_loader_rand_ids)) && same_bits(bits, bits_want[w], n),
                  "%d workers", w);
        ct_dataloader_free(dl);
        if (!persist_want[w]) {
            continue;
        }
        o.generator = NULL;
        o.persistent_workers = true;
        ct_manual_seed(16);
        dl = ct_dataloader_new(&ds, &o);
        n = loader_ids(dl, 2, ids, bits);
        CHECK_MSG(same(ids, n, sampler_golden_loader_persist_ids,
                       LEN(sampler_golden_loader_persist_ids)) &&
                      same_bits(bits, persist_want[w], n),
                  "persistent, %d workers", w);
        CHECK(next_rand_bits() == sampler_golden_loader_persist_after[0]);
        ct_dataloader_free(dl);
    }
    ct_generator_free(g);
    ct_scope_end();
}

/* A worker failing mid-epoch: the caller gets the worker id and the sample index, the epoch
   ends cleanly (the next call starts a new one), nothing leaks (make sanitize). */
static void test_dataloader_worker_error(void)
{
    ct_scope_begin();
    rand_data d = {40, 13, 0};
    ct_dataset ds = {rand_len, rand_get, NULL, NULL, 2, &d};
    for (int w = 0; w <= 2; w += 2) {
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = 4;
        o.num_workers = w;
        ct_dataloader *dl = ct_dataloader_new(&ds, &o);
        ct_tensor *b[2];
        int got = 0;
        while (ct_dataloader_next(dl, b)) {
            got++;
        }
        CHECK(got == 3 && !b[0] && !b[1]); /* batch 3 (samples 12..15) holds sample 13 */
        if (w) {
            CHECK_ERROR(CT_ERR_VALUE, "Caught a value error in DataLoader worker 1 while "
                        "fetching sample index 13: ct_dataset_get_batch: the dataset failed");
        } else {
            CHECK_ERROR(CT_ERR_VALUE, "the dataset failed with status value");
        }
        CHECK(ct_dataloader_next(dl, b) && ct_size(b[0], 0) == 4); /* a new epoch (w > 0) */
        ct_dataloader_free(dl); /* mid-epoch */
    }
    ct_scope_end();
}

/* Freeing or resetting mid-epoch with every worker busy; persistent workers across resets;
   the number of workers changed between epochs. */
static void test_dataloader_shutdown(void)
{
    ct_scope_begin();
    ct_dataset *ds = range_ds(1000);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 8;
    o.num_workers = 4;
    o.prefetch_factor = 3;
    for (int persistent = 0; persistent < 2; persistent++) {
        o.persistent_workers = persistent;
        ct_dataloader *dl = ct_dataloader_new(ds, &o);
        ct_tensor *b[1];
        CHECK(ct_dataloader_next(dl, b) && ct_dataloader_next(dl, b));
        CHECK(ct_item(ct_select(b[0], 0, 0)) == 8);
        ct_dataloader_reset(dl);
        int64_t count = 0;
        while (ct_dataloader_next(dl, b)) {
            count++;
        }
        CHECK(count == 125 && ct_dataloader_len(dl) == 125);
        CHECK(ct_dataloader_next(dl, b) && ct_item(ct_select(b[0], 0, 0)) == 0);
        CHECK(ct_dataloader_set_num_workers(dl, 1) == CT_OK);
        CHECK(ct_dataloader_next(dl, b) && ct_item(ct_select(b[0], 0, 0)) == 0);
        ct_dataloader_free(dl); /* workers running ahead */
    }
    ct_dataset_free(ds);
    ct_scope_end();
}

/* A worker slower than the timeout: "DataLoader timed out after 0.02 seconds". */
static void test_dataloader_timeout(void)
{
    ct_scope_begin();
    rand_data d = {4, -1, 0.2};
    ct_dataset ds = {rand_len, rand_get, NULL, NULL, 2, &d};
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.num_workers = 1;
    o.prefetch_factor = 1;
    o.timeout = 0.02;
    ct_dataloader *dl = ct_dataloader_new(&ds, &o);
    ct_tensor *b[2];
    CHECK(!ct_dataloader_next(dl, b));
    CHECK_ERROR(CT_ERR_STATE, "DataLoader timed out after 0.02 seconds");
    ct_dataloader_free(dl);
    ct_scope_end();
}

/* worker_init_fn and ct_get_worker_info: ids, seeds base_seed + id, NULL on the caller. */
typedef struct info_seen {
    int init_calls[4];
    uint64_t seed[4];
    int num_workers[4];
} info_seen;

static void record_init(int worker_id, void *user)
{
    info_seen *s = (info_seen *)user;
    const ct_worker_info *info = ct_get_worker_info();
    s->init_calls[worker_id]++;
    s->seed[worker_id] = info ? info->seed : 0;
    s->num_workers[worker_id] = info ? info->num_workers : 0;
    CHECK(info && info->id == worker_id && ct_initial_seed() == info->seed);
}

static void test_dataloader_worker_info(void)
{
    ct_scope_begin();
    CHECK(ct_get_worker_info() == NULL);
    ct_dataset *ds = range_ds(30);
    info_seen seen;
    memset(&seen, 0, sizeof seen);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 2;
    o.num_workers = 4;
    o.worker_init_fn = record_init;
    o.worker_init_user = &seen;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    int64_t ids[CAP];
    CHECK(loader_ids(dl, 2, ids, NULL) == 60);
    for (int w = 0; w < 4; w++) {
        CHECK(seen.init_calls[w] == 2 && seen.num_workers[w] == 4);
        CHECK(seen.seed[w] == seen.seed[0] + (uint64_t)w);
    }
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* A custom index sampler (the even indices), a custom batch sampler (pairs in reverse), and a
   collate callback (sums the samples) through the loader, with and without workers. */
static int64_t even_next(ct_sampler *s, int64_t *out)
{
    int64_t *pos = (int64_t *)s->user;
    if (*pos >= 10) {
        return 0;
    }
    out[0] = *pos;
    *pos += 2;
    return 1;
}

static ct_status even_iter(ct_sampler *s)
{
    *(int64_t *)s->user = 0;
    return CT_OK;
}

static int64_t even_len(const ct_sampler *s)
{
    (void)s;
    return 5;
}

static int64_t pairs_next(ct_sampler *s, int64_t *out)
{
    int64_t *pos = (int64_t *)s->user;
    if (*pos <= 0) {
        return 0;
    }
    out[0] = *pos - 1;
    out[1] = *pos - 2;
    *pos -= 2;
    return 2;
}

static ct_status pairs_iter(ct_sampler *s)
{
    *(int64_t *)s->user = 6;
    return CT_OK;
}

static int sum_tag;

static ct_status sum_collate(ct_tensor *const *samples, int64_t n, int n_fields,
                             ct_tensor **batch, void *user)
{
    CHECK(n_fields == 1 && user == &sum_tag);
    ct_tensor *acc = ct_zeros(NULL, 0, CT_INT64);
    for (int64_t k = 0; k < n; k++) {
        acc = ct_add(acc, samples[k]);
    }
    batch[0] = ct_reshape(acc, &(int64_t){1}, 1);
    return batch[0] ? CT_OK : ct_error_code();
}

static void test_dataloader_custom_samplers(void)
{
    ct_scope_begin();
    ct_dataset *ds = range_ds(10);
    int64_t pos = 0;
    ct_sampler *even = ct_sampler_new(even_iter, even_next, even_len, 0, &pos);
    ct_sampler *pairs = ct_sampler_new(pairs_iter, pairs_next, NULL, 2, &pos);
    for (int w = 0; w <= 2; w += 2) {
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = 2;
        o.sampler = even;
        o.num_workers = w;
        ct_dataloader *dl = ct_dataloader_new(ds, &o);
        int64_t ids[CAP];
        const int64_t want_even[5] = {0, 2, 4, 6, 8};
        CHECK(ct_dataloader_len(dl) == 3);
        CHECK(same(ids, loader_ids(dl, 1, ids, NULL), want_even, 5));
        ct_dataloader_free(dl);
        o = ct_dataloader_defaults();
        o.batch_sampler = pairs;
        o.num_workers = w;
        o.collate_fn = sum_collate;
        o.collate_user = &sum_tag;
        dl = ct_dataloader_new(ds, &o);
        const int64_t want_sums[3] = {9, 5, 1};
        CHECK(ct_dataloader_len(dl) == -1);
        CHECK(same(ids, loader_ids(dl, 1, ids, NULL), want_sums, 3));
        ct_dataloader_free(dl);
    }
    ct_sampler_free(pairs);
    ct_sampler_free(even);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* Batches through 2 workers are the same bytes with 1 and 4 intra-op threads. */
static void loader_epoch(ct_tensor **out)
{
    ct_tensor *x = ct_reshape(ct_arange(0, 600, 1, CT_FLOAT32), (int64_t[]){100, 6}, 2);
    ct_dataset *ds = ct_tensor_dataset_new(&x, 1);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 21);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 7;
    o.shuffle = true;
    o.generator = g;
    o.num_workers = 2;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    const ct_tensor *parts[15];
    ct_tensor *b[1];
    int n = 0;
    while (n < 15 && ct_dataloader_next(dl, b)) {
        parts[n++] = b[0];
    }
    out[0] = ct_keep(ct_cat(parts, n, 0));
    ct_dataloader_free(dl);
    ct_generator_free(g);
    ct_dataset_free(ds);
}

static void test_dataloader_thread_invariant(void)
{
    CHECK_THREAD_INVARIANT(loader_epoch, 1);
}

static void test_dataloader_bad_args(void)
{
    ct_scope_begin();
    ct_dataset *ds = range_ds(10);
    ct_sampler *seq = ct_sequential_sampler_new(ds);
    ct_sampler *batches = ct_batch_sampler_new(seq, 3, false);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.sampler = seq;
    o.shuffle = true;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "sampler option is mutually exclusive with shuffle");
    o = ct_dataloader_defaults();
    o.batch_sampler = batches;
    o.batch_size = 4;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "batch_sampler option is mutually exclusive with batch_size, "
                "shuffle, sampler, and drop_last");
    o = ct_dataloader_defaults();
    o.sampler = batches;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "must yield single indices");
    o = ct_dataloader_defaults();
    o.batch_sampler = seq;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "must yield batches");
    o = ct_dataloader_defaults();
    o.num_workers = -1;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "num_workers option should be non-negative");
    o.num_workers = 2;
    o.prefetch_factor = 0;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "prefetch_factor option must be a positive integer");
    o = ct_dataloader_defaults();
    o.persistent_workers = true;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "persistent_workers option needs num_workers > 0");
    o = ct_dataloader_defaults();
    o.timeout = -1;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "timeout");
    ct_dataloader *dl = ct_dataloader_new(ds, NULL);
    CHECK(ct_dataloader_set_num_workers(dl, -2) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "non-negative");
    ct_dataloader_free(dl);
    CHECK(ct_sampler_new(NULL, NULL, NULL, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_sampler_new");
    CHECK(ct_sampler_new(NULL, even_next, NULL, -1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "batch_size");
    int64_t i;
    CHECK(ct_sampler_next(NULL, &i) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_sampler_next");
    CHECK(ct_sampler_len(NULL) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_sampler_len");
    CHECK(ct_sampler_iter(NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_sampler_iter");
    ct_sampler_free(NULL);
    ct_sampler_free(batches);
    ct_sampler_free(seq);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* random_split with fractions: PyTorch's lengths (floor, remainder round-robin) and indices. */
static void test_dataloader_split_fractions(void)
{
    ct_scope_begin();
    ct_dataset *ds = range_ds(17), *parts[3];
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 19);
    const double fr[3] = {0.5, 0.3, 0.2};
    CHECK(ct_random_split_fractions(ds, fr, 3, g, parts) == CT_OK);
    int64_t got[17], n = 0;
    for (int k = 0; k < 3; k++) {
        CHECK(ct_dataset_len(parts[k]) == sampler_golden_split_fractions_len[k]);
        for (int64_t i = 0; i < ct_dataset_len(parts[k]); i++) {
            ct_tensor *f[1];
            CHECK(ct_dataset_get(parts[k], i, f) == CT_OK);
            got[n++] = (int64_t)ct_item(f[0]);
        }
        ct_dataset_free(parts[k]);
    }
    CHECK(same(got, n, sampler_golden_split_fractions, LEN(sampler_golden_split_fractions)));
    const double bad_sum[2] = {0.5, 0.6}, bad_frac[2] = {1.5, -0.5};
    CHECK(ct_random_split_fractions(ds, bad_sum, 2, g, parts) == CT_ERR_VALUE && !parts[0]);
    CHECK_ERROR(CT_ERR_VALUE, "Sum of input lengths does not equal the length of the input "
                "dataset!");
    CHECK(ct_random_split_fractions(ds, bad_frac, 2, g, parts) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Fraction at index 0 is not between 0 and 1");
    ct_generator_free(g);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* ConcatDataset (indices across parts, negative indices, batches through the loader) and
   StackDataset (fields of each part, batched from each part's get_batch). */
static void test_dataloader_concat_stack(void)
{
    ct_scope_begin();
    ct_dataset *a = range_ds(3), *b = range_ds(0), *c = range_ds(4);
    ct_dataset *parts[3] = {a, b, c};
    ct_dataset *cat = ct_concat_dataset_new(parts, 3);
    CHECK(ct_dataset_len(cat) == 7 && cat->n_fields == 1);
    const int64_t want[7] = {0, 1, 2, 0, 1, 2, 3};
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 3;
    o.num_workers = 2;
    ct_dataloader *dl = ct_dataloader_new(cat, &o);
    int64_t ids[CAP];
    CHECK(same(ids, loader_ids(dl, 1, ids, NULL), want, 7));
    ct_dataloader_free(dl);
    ct_tensor *f[2];
    CHECK(ct_dataset_get(cat, -4, f) == CT_OK && ct_item(f[0]) == 0);
    CHECK(ct_dataset_get(cat, 7, f) == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "index 7 is out of bounds for dimension 0 with size 7");
    ct_tensor *x = ct_mul_scalar(ct_arange(0, 3, 1, CT_FLOAT32), 10);
    ct_dataset *xs = ct_tensor_dataset_new(&x, 1);
    ct_dataset *pair[2] = {xs, a};
    ct_dataset *st = ct_stack_dataset_new(pair, 2);
    CHECK(ct_dataset_len(st) == 3 && st->n_fields == 2);
    CHECK(ct_dataset_get(st, 2, f) == CT_OK && ct_item(f[0]) == 20 && ct_item(f[1]) == 2);
    const int64_t idx[2] = {1, 0};
    const double w0[2] = {10, 0}, w1[2] = {1, 0};
    CHECK(ct_dataset_get_batch(st, idx, 2, f) == CT_OK);
    CHECK_TENSOR(f[0], w0, 2, 0, 0);
    CHECK_TENSOR(f[1], w1, 2, 0, 0);
    ct_tensor *samples[4] = {ct_scalar_tensor(1, CT_FLOAT32), ct_scalar_tensor(2, CT_INT64),
                             ct_scalar_tensor(3, CT_FLOAT32), ct_scalar_tensor(4, CT_INT64)};
    const double c0[2] = {1, 3}, c1[2] = {2, 4};
    CHECK(ct_default_collate(samples, 2, 2, f) == CT_OK && ct_tensor_dtype(f[1]) == CT_INT64);
    CHECK_TENSOR(f[0], c0, 2, 0, 0);
    CHECK_TENSOR(f[1], c1, 2, 0, 0);
    CHECK(ct_default_collate(samples, 0, 2, f) == CT_ERR_VALUE && !f[0]);
    CHECK_ERROR(CT_ERR_VALUE, "expected 1 to");
    ct_dataset *mismatch[2] = {a, c};
    CHECK(ct_stack_dataset_new(mismatch, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Size mismatch between datasets");
    CHECK(ct_concat_dataset_new(parts, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "datasets should not be an empty iterable");
    ct_dataset *mixed[2] = {a, st};
    CHECK(ct_concat_dataset_new(mixed, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "dataset 1 has 2 fields but dataset 0 has 1");
    ct_dataset_free(st);
    ct_dataset_free(xs);
    ct_dataset_free(cat);
    ct_dataset_free(a);
    ct_dataset_free(b);
    ct_dataset_free(c);
    ct_scope_end();
}

/* An iterable dataset counting from start to stop (exclusive); stop < 0 fails at -stop. */
typedef struct counter {
    int64_t start, stop, pos;
} counter;

static ct_status counter_iter(ct_iterable_dataset *ds)
{
    counter *c = (counter *)ds->user;
    c->pos = c->start;
    return CT_OK;
}

static int counter_next(ct_iterable_dataset *ds, ct_tensor **fields)
{
    counter *c = (counter *)ds->user;
    int64_t stop = c->stop < 0 ? -c->stop : c->stop;
    if (c->pos >= stop) {
        return c->stop < 0 ? -1 : 0;
    }
    fields[0] = ct_scalar_tensor((double)c->pos++, CT_INT64);
    return 1;
}

static void test_dataloader_chain_dataset(void)
{
    ct_scope_begin();
    counter c1 = {0, 3, 0}, c2 = {10, 12, 0}, c3 = {5, -6, 0};
    ct_iterable_dataset d1 = {counter_iter, counter_next, NULL, 1, &c1, NULL};
    ct_iterable_dataset d2 = {counter_iter, counter_next, NULL, 1, &c2, NULL};
    ct_iterable_dataset d3 = {counter_iter, counter_next, NULL, 1, &c3, NULL};
    ct_iterable_dataset *parts[3] = {&d1, &d2, &d3};
    ct_iterable_dataset *chain = ct_chain_dataset_new(parts, 2);
    const int64_t want[5] = {0, 1, 2, 10, 11};
    for (int pass = 0; pass < 2; pass++) {
        int64_t got[8], n = 0;
        ct_tensor *f[1];
        CHECK(ct_iterable_dataset_iter(chain) == CT_OK);
        while (n < 8 && ct_iterable_dataset_next(chain, f) == 1) {
            got[n++] = (int64_t)ct_item(f[0]);
        }
        CHECK(same(got, n, want, 5) && f[0] == NULL);
    }
    for (int drop = 0; drop < 2; drop++) { /* batches of the stream through a loader */
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = 2;
        o.drop_last = drop;
        ct_dataloader *dl = ct_dataloader_new_iterable(chain, &o);
        int64_t ids[CAP];
        CHECK(ct_dataloader_len(dl) == -1);
        CHECK(same(ids, loader_ids(dl, 2, ids, NULL), drop ? (const int64_t[]){0, 1, 2, 10,
                                                                                0, 1, 2, 10}
                                                           : (const int64_t[]){0, 1, 2, 10, 11,
                                                                                0, 1, 2, 10, 11},
                   drop ? 8 : 10));
        ct_dataloader_free(dl);
        o.shuffle = true;
        CHECK(ct_dataloader_new_iterable(chain, &o) == NULL);
        CHECK_ERROR(CT_ERR_VALUE, "expected unspecified sampler, batch_sampler and shuffle");
        o.shuffle = false;
        o.num_workers = 2;
        CHECK(ct_dataloader_new_iterable(chain, &o) == NULL);
        CHECK_ERROR(CT_ERR_VALUE, "needs its clone callback");
    }
    ct_iterable_dataset_free(chain);
    chain = ct_chain_dataset_new(parts, 3); /* the third stream fails after one sample */
    ct_dataloader *dl = ct_dataloader_new_iterable(chain, NULL);
    ct_tensor *one[1];
    int batches = 0;
    while (ct_dataloader_next(dl, one)) {
        batches++;
    }
    CHECK(batches == 6 && one[0] == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_iterable_dataset_next");
    ct_dataloader_free(dl);
    ct_tensor *f[1];
    int r, n = 0;
    CHECK(ct_iterable_dataset_iter(chain) == CT_OK);
    while ((r = ct_iterable_dataset_next(chain, f)) == 1) {
        n++;
    }
    CHECK(r == -1 && n == 6 && f[0] == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_iterable_dataset_next");
    ct_iterable_dataset_free(chain);
    CHECK(ct_chain_dataset_new(parts, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "at least one dataset");
    ct_iterable_dataset bad = {NULL, NULL, NULL, 1, NULL, NULL};
    CHECK(ct_iterable_dataset_iter(&bad) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "next callback must not be NULL");
    ct_iterable_dataset_free(NULL);
    ct_scope_end();
}

void test_dataloader(void)
{
    RUN(test_dataloader_split_fractions);
    RUN(test_dataloader_concat_stack);
    RUN(test_dataloader_chain_dataset);
    RUN(test_dataloader_random_sampler);
    RUN(test_dataloader_subset_weighted);
    RUN(test_dataloader_batch_sampler);
    RUN(test_dataloader_distributed_sampler);
    RUN(test_dataloader_worker_orders);
    RUN(test_dataloader_worker_seeds);
    RUN(test_dataloader_worker_error);
    RUN(test_dataloader_shutdown);
    RUN(test_dataloader_timeout);
    RUN(test_dataloader_worker_info);
    RUN(test_dataloader_custom_samplers);
    RUN(test_dataloader_thread_invariant);
    RUN(test_dataloader_bad_args);
}
