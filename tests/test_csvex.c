/* tests/test_csvex.c - iterable datasets with DataLoader workers (replicas sharded by worker
 * info, batches round robin over the workers) and ct_seed_worker, against PyTorch's DataLoader
 * (tests/golden/csvex_golden.h from tools/gen_golden_csvex.py); worker failures, clone errors.
 */
#include "test.h"
#include "golden/csvex_golden.h"

#define LEN(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))
#define CAP 256

/* The sharded range of tools/gen_golden_csvex.py: samples (i int64, rand float32). */
typedef struct shard {
    ct_iterable_dataset base;
    int64_t n, cur, hi;
    bool uneven;
    int fail_worker;   /* this worker's replica fails at sample fail_at; -1 never */
    int64_t fail_at;
    bool clone_fails;  /* clone returns NULL after recording an error */
    int clone_fields;  /* the n_fields a clone gets */
    int passes;        /* iter calls on this replica */
    bool chained;      /* a part of a chain (whose replica the worker info names) */
} shard;

static ct_status shard_iter(ct_iterable_dataset *ds)
{
    shard *s = (shard *)ds->user;
    const ct_worker_info *info = ct_get_worker_info();
    s->cur = 0;
    s->hi = s->n;
    s->passes++;
    if (info && s->uneven) {
        s->cur = 0;
        for (int w = 0; w < info->id; w++) {
            s->cur += csvex_golden_uneven[w];
        }
        s->hi = s->cur + csvex_golden_uneven[info->id];
    } else if (info) {
        int64_t per = (s->n + info->num_workers - 1) / info->num_workers;
        s->cur = info->id * per;
        s->hi = s->cur + per < s->n ? s->cur + per : s->n;
    }
    if (info && ((!s->chained && info->iterable_dataset != ds) || info->dataset != NULL)) {
        return CT_ERR_STATE; /* a worker must iterate its own replica */
    }
    return CT_OK;
}

static int shard_next(ct_iterable_dataset *ds, ct_tensor **fields)
{
    shard *s = (shard *)ds->user;
    const ct_worker_info *info = ct_get_worker_info();
    if (s->cur >= s->hi) {
        return 0;
    }
    if (info && info->id == s->fail_worker && s->cur == s->fail_at) {
        (void)ct_select(ct_zeros((const int64_t[]){3}, 1, CT_FLOAT32), 0, 3 + s->cur);
        return -1;
    }
    fields[0] = ct_full(NULL, 0, (double)s->cur++, CT_INT64);
    fields[1] = ct_rand(NULL, 0, CT_FLOAT32, NULL);
    return 1;
}

static void shard_destroy(ct_iterable_dataset *ds)
{
    free(ds->user);
}

static ct_iterable_dataset *shard_clone(const ct_iterable_dataset *ds)
{
    const shard *s = (const shard *)ds->user;
    if (s->clone_fails) {
        return NULL;
    }
    shard *r = (shard *)malloc(sizeof *r);
    *r = *s;
    r->base.user = r;
    r->base.destroy = shard_destroy;
    r->base.n_fields = s->clone_fields;
    return &r->base;
}

static shard shard_make(int64_t n, bool uneven)
{
    shard s;
    memset(&s, 0, sizeof s);
    s.base.iter = shard_iter;
    s.base.next = shard_next;
    s.base.clone = shard_clone;
    s.base.n_fields = 2;
    s.n = n;
    s.uneven = uneven;
    s.fail_worker = -1;
    s.clone_fields = 2;
    return s;
}

static uint32_t float_bits(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* `epochs` epochs of dl: ids, batch sizes and the rand field's bits, flattened; the number of
   samples (*nb batches), -1 on error. */
static int64_t drain(ct_dataloader *dl, int epochs, int64_t *ids, int64_t *lens, uint32_t *rand,
                     int64_t *nb)
{
    int64_t n = 0;
    *nb = 0;
    for (int e = 0; e < epochs; e++) {
        ct_tensor *b[2];
        ct_scope_begin();
        while (ct_dataloader_next(dl, b)) {
            int64_t k = ct_size(b[0], 0);
            for (int64_t i = 0; i < k && n < CAP; i++, n++) {
                ids[n] = ct_item_int64(ct_select(b[0], 0, i));
                rand[n] = float_bits(ct_item(ct_select(b[1], 0, i)));
            }
            lens[(*nb)++] = k;
        }
        ct_scope_end();
    }
    return ct_error_code() == CT_OK ? n : -1;
}

typedef struct shard_case {
    const char *name;
    int workers, epochs;
    uint64_t seed;
    bool drop_last, persistent, uneven;
    const int64_t *ids, *lens;
    const uint32_t *rand, *after;
    int64_t n_ids, n_lens;
} shard_case;

#define SHARD_CASE(name, w, e, seed, drop, persist, uneven)                                 \
    {#name, w, e, seed, drop, persist, uneven, csvex_golden_shard_##name##_ids,              \
     csvex_golden_shard_##name##_lens, csvex_golden_shard_##name##_rand,                     \
     csvex_golden_shard_##name##_after, LEN(csvex_golden_shard_##name##_ids),              \
     LEN(csvex_golden_shard_##name##_lens)}

/* Batches equal PyTorch's DataLoader over a sharded IterableDataset with 0 to 4 workers: the
   samples, the batch sizes (each worker's last batch partial, or dropped), the values drawn
   from each worker's generator, the default generator after the epochs, persistent workers
   (the replicas iterated again). */
static void test_csvex_iterable_workers(void)
{
    static const shard_case cases[] = {
        SHARD_CASE(w0, 0, 2, 21, false, false, false),
        SHARD_CASE(w1, 1, 2, 21, false, false, false),
        SHARD_CASE(w2, 2, 2, 21, false, false, false),
        SHARD_CASE(w3, 3, 2, 21, false, false, false),
        SHARD_CASE(w3_drop, 3, 1, 22, true, false, false),
        SHARD_CASE(w2_persist, 2, 2, 23, false, true, false),
        SHARD_CASE(w3_uneven, 3, 1, 24, false, false, true),
        SHARD_CASE(w4_uneven, 4, 2, 25, false, false, true),
    };
    ct_scope_begin();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const shard_case *k = &cases[c];
        shard s = shard_make(CSVEX_SHARD_N, k->uneven);
        s.base.user = &s;
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = CSVEX_SHARD_BATCH;
        o.num_workers = k->workers;
        o.drop_last = k->drop_last;
        o.persistent_workers = k->persistent;
        ct_manual_seed(k->seed);
        ct_dataloader *dl = ct_dataloader_new_iterable(&s.base, &o);
        int64_t ids[CAP], lens[CAP], nb;
        uint32_t rand[CAP];
        int64_t n = drain(dl, k->epochs, ids, lens, rand, &nb);
        CHECK_MSG(n == k->n_ids && nb == k->n_lens &&
                      !memcmp(ids, k->ids, sizeof(int64_t) * (size_t)n) &&
                      !memcmp(lens, k->lens, sizeof(int64_t) * (size_t)nb),
                  "%s: %lld samples in %lld batches differ from PyTorch's", k->name,
                  (long long)n, (long long)nb);
        CHECK_MSG(n == k->n_ids && !memcmp(rand, k->rand, sizeof(uint32_t) * (size_t)n),
                  "%s: the workers' random values differ from PyTorch's", k->name);
        CHECK_MSG(float_bits(ct_item(ct_rand(NULL, 0, CT_FLOAT32, NULL))) == k->after[0],
                  "%s: the default generator's state differs from PyTorch's", k->name);
        CHECK(s.passes == (k->workers ? 0 : k->epochs)); /* workers iterate replicas */
        ct_dataloader_free(dl);
    }
    ct_scope_end();
}

/* A worker's failure names the worker and its batch, ends the epoch (the next call starts a
   new one), nothing leaks; clone failures and malformed clones; no clone callback. */
static void test_csvex_iterable_errors(void)
{
    ct_scope_begin();
    shard s = shard_make(12, false);
    s.base.user = &s;
    s.fail_worker = 1;
    s.fail_at = 10; /* worker 1 of 2 reads 6..11: its batch 1 (9..11) fails */
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 3;
    o.num_workers = 2;
    ct_dataloader *dl = ct_dataloader_new_iterable(&s.base, &o);
    ct_tensor *b[2];
    int got = 0;
    while (ct_dataloader_next(dl, b)) {
        got++;
    }
    CHECK(got == 3 && !b[0] && !b[1]); /* 0..2, 6..8, 3..5, then worker 1's batch 1 */
    CHECK_ERROR(CT_ERR_INDEX, "Caught a index error in DataLoader worker 1 while fetching its "
                "batch 1 of the iterable dataset: ct_select: select(): index 13 out of range");
    s.fail_worker = -1; /* the next epoch's replicas are sound */
    int64_t ids[CAP], lens[CAP], nb;
    uint32_t rand[CAP];
    CHECK(drain(dl, 1, ids, lens, rand, &nb) == 12 && nb == 4 && ids[3] == 6 && ids[6] == 3);
    s.fail_worker = 0;
    s.fail_at = 0;
    CHECK(ct_dataloader_next(dl, b) == false);
    CHECK_ERROR(CT_ERR_INDEX, "DataLoader worker 0 while fetching its batch 0");
    s.fail_worker = -1;
    s.clone_fails = true;
    CHECK(ct_dataloader_next(dl, b) == false);
    CHECK_ERROR(CT_ERR_VALUE, "the iterable dataset's clone callback returned NULL");
    s.clone_fails = false;
    s.clone_fields = 1;
    CHECK(ct_dataloader_next(dl, b) == false);
    CHECK_ERROR(CT_ERR_VALUE, "clone must have a next callback and its 2 fields (got 1)");
    s.clone_fields = 2;
    CHECK(ct_dataloader_next(dl, b) && ct_dataloader_next(dl, b)); /* sound again */
    ct_dataloader_reset(dl); /* mid-epoch, workers busy */
    CHECK(ct_dataloader_next(dl, b) && ct_item_int64(ct_select(b[0], 0, 0)) == 0);
    ct_dataloader_free(dl); /* mid-epoch */
    s.base.clone = NULL;
    CHECK(ct_dataloader_new_iterable(&s.base, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "num_workers=2 over an iterable dataset needs its clone callback");
    o.num_workers = 0;
    dl = ct_dataloader_new_iterable(&s.base, &o);
    CHECK(ct_dataloader_set_num_workers(dl, 1) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "needs its clone callback");
    ct_dataloader_free(dl);
    ct_scope_end();
}

/* Each worker iterates its own replica (the original is untouched), which sees itself in
   ct_get_worker_info(); persistent workers keep theirs across epochs; a chain of clonable
   datasets is clonable (its replica owns clones of the parts). */
static void test_csvex_iterable_replicas(void)
{
    ct_scope_begin();
    shard a = shard_make(6, false), c = shard_make(4, false);
    a.base.user = &a;
    c.base.user = &c;
    a.chained = c.chained = true;
    ct_iterable_dataset *parts[2] = {&a.base, &c.base};
    ct_iterable_dataset *chain = ct_chain_dataset_new(parts, 2);
    CHECK(chain && chain->clone);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 2;
    o.num_workers = 2;
    o.persistent_workers = true;
    ct_dataloader *dl = ct_dataloader_new_iterable(chain, &o);
    int64_t ids[CAP], lens[CAP], nb;
    uint32_t rand[CAP];
    /* worker 0: a's 0..2, c's 0..1; worker 1: a's 3..5, c's 2..3; batches of 2 (the last one
       of each worker partial), round robin */
    static const int64_t want[10] = {0, 1, 3, 4, 2, 0, 5, 2, 1, 3};
    for (int e = 0; e < 2; e++) {
        int64_t n = drain(dl, 1, ids, lens, rand, &nb);
        CHECK_MSG(n == 10 && nb == 6 && !memcmp(ids, want, sizeof want), "epoch %d", e);
    }
    CHECK(a.passes == 0 && c.passes == 0);
    const ct_worker_info *none = ct_get_worker_info();
    CHECK(none == NULL);
    ct_dataloader_free(dl);
    ct_iterable_dataset_free(chain);
    c.base.clone = NULL;
    chain = ct_chain_dataset_new(parts, 2);
    CHECK(chain && !chain->clone);
    ct_iterable_dataset_free(chain);
    ct_scope_end();
}

/* worker_init_fn: whether worker w saw its own fresh replica in ct_get_worker_info(). */
static void note_replica(int worker_id, void *user)
{
    const ct_worker_info *info = ct_get_worker_info();
    ((bool *)user)[worker_id] = info && info->id == worker_id && info->num_workers == 3 &&
                                info->iterable_dataset && info->dataset == NULL &&
                                ((shard *)info->iterable_dataset->user)->passes == 0;
}

/* A worker's info names its replica (before iter: worker_init_fn; in iter: shard_iter fails
   otherwise). */
static void test_csvex_worker_info(void)
{
    ct_scope_begin();
    shard s = shard_make(9, false);
    s.base.user = &s;
    bool seen[3] = {false, false, false};
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.num_workers = 3;
    o.worker_init_fn = note_replica;
    o.worker_init_user = seen;
    ct_dataloader *dl = ct_dataloader_new_iterable(&s.base, &o);
    int64_t ids[CAP], lens[CAP], nb;
    uint32_t rand[CAP];
    CHECK(drain(dl, 1, ids, lens, rand, &nb) == 9 && nb == 9); /* workers joined */
    CHECK(seen[0] && seen[1] && seen[2]);
    ct_dataloader_free(dl);
    ct_scope_end();
}

/* Sample i of the seed dataset: (i, the initial seed of the fetching worker's generator in
   the ct_seed_worker array). */
static int64_t seeds_len(const ct_dataset *ds)
{
    (void)ds;
    return CSVEX_SEED_N;
}

static ct_status seeds_get(const ct_dataset *ds, int64_t i, ct_tensor **fields)
{
    ct_generator *const *gens = (ct_generator *const *)ds->user;
    const ct_worker_info *info = ct_get_worker_info();
    fields[0] = ct_full(NULL, 0, (double)i, CT_INT64);
    fields[1] = ct_full(NULL, 0, (double)ct_generator_initial_seed(gens[info ? info->id : 0]),
                        CT_INT64);
    return CT_OK;
}

/* ct_seed_worker as worker_init_fn seeds each worker's generator with PyTorch's
   seed_worker value, torch.initial_seed() % 2**32 in that worker, for 1, 2 and 4 workers. */
static void test_csvex_seed_worker(void)
{
    static const int workers[3] = {1, 2, 4};
    static const int64_t *want_ids[3] = {csvex_golden_seed_w1_ids, csvex_golden_seed_w2_ids,
                                         csvex_golden_seed_w4_ids};
    static const int64_t *want_seeds[3] = {csvex_golden_seed_w1_seeds,
                                           csvex_golden_seed_w2_seeds,
                                           csvex_golden_seed_w4_seeds};
    ct_scope_begin();
    ct_generator *gens[4];
    for (int k = 0; k < 4; k++) {
        gens[k] = ct_generator_new();
    }
    ct_dataset ds = {seeds_len, seeds_get, NULL, NULL, 2, gens};
    ct_generator *g = ct_generator_new();
    for (int w = 0; w < 3; w++) {
        ct_generator_manual_seed(g, 0);
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = 2;
        o.shuffle = true;
        o.generator = g;
        o.num_workers = workers[w];
        o.worker_init_fn = ct_seed_worker;
        o.worker_init_user = gens;
        ct_dataloader *dl = ct_dataloader_new(&ds, &o);
        ct_tensor *b[2];
        int64_t ids[CSVEX_SEED_N], seeds[CSVEX_SEED_N], n = 0;
        while (ct_dataloader_next(dl, b)) {
            for (int64_t i = 0; i < ct_size(b[0], 0) && n < CSVEX_SEED_N; i++, n++) {
                ids[n] = ct_item_int64(ct_select(b[0], 0, i));
                seeds[n] = ct_item_int64(ct_select(b[1], 0, i));
            }
        }
        CHECK_MSG(n == CSVEX_SEED_N && !memcmp(ids, want_ids[w], sizeof ids) &&
                      !memcmp(seeds, want_seeds[w], sizeof seeds),
                  "%d workers: the seeds differ from PyTorch's seed_worker", workers[w]);
        ct_dataloader_free(dl);
    }
    ct_manual_seed(((uint64_t)7 << 32) + 5); /* outside a worker: the caller's seed */
    ct_seed_worker(2, gens);
    CHECK(ct_generator_initial_seed(gens[2]) == 5);
    ct_seed_worker(0, NULL); /* nothing to seed */
    CHECK(ct_error_code() == CT_OK);
    ct_seed_worker(-1, gens);
    CHECK_ERROR(CT_ERR_VALUE, "worker_id must be non-negative, got -1");
    for (int k = 0; k < 4; k++) {
        ct_generator_free(gens[k]);
    }
    ct_generator_free(g);
    ct_scope_end();
}

/* ct_poisson equals torch.poisson draw for draw: float64 on the default generator, float32 on
   an explicit one, the default generator's state after; a negative rate fails after spending
   the draws before it, as PyTorch; integer input is refused; the gradient is zero. */
static void test_csvex_rng_poisson(void)
{
    ct_scope_begin();
    int64_t n = LEN(csvex_golden_poisson_rates);
    ct_tensor *rates = ct_tensor_from_data(csvex_golden_poisson_rates, CT_FLOAT64, &n, 1);
    ct_manual_seed(31);
    CHECK_TENSOR(ct_poisson(rates, NULL), csvex_golden_poisson_f64, n, 0, 0);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 32);
    ct_tensor *p32 = ct_poisson(ct_to_dtype(rates, CT_FLOAT32), g);
    CHECK(ct_tensor_dtype(p32) == CT_FLOAT32);
    CHECK_TENSOR(p32, csvex_golden_poisson_f32, n, 0, 0);
    CHECK(float_bits(ct_item(ct_rand(NULL, 0, CT_FLOAT32, NULL))) == csvex_golden_poisson_after[0]);
    ct_generator_free(g);
    ct_manual_seed(33);
    const float bad[4] = {2.0f, 30.0f, -1.0f, 4.0f};
    int64_t four = 4;
    CHECK(ct_poisson(ct_tensor_from_data(bad, CT_FLOAT32, &four, 1), NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid Poisson rate, expected rate to be non-negative");
    CHECK(float_bits(ct_item(ct_rand(NULL, 0, CT_FLOAT32, NULL))) ==
          csvex_golden_poisson_error_after[0]);
    CHECK(ct_poisson(ct_arange(0, 3, 1, CT_INT64), NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "not implemented for 'Long'");
    ct_tensor *r = ct_full((const int64_t[]){3}, 1, 4.0, CT_FLOAT32);
    ct_requires_grad_(r, true);
    ct_backward(ct_sum(ct_poisson(r, NULL)), NULL, false);
    CHECK(ct_grad(r) && ct_item(ct_sum(ct_abs(ct_grad(r)))) == 0);
    ct_scope_end();
}

void test_csvex(void)
{
    RUN(test_csvex_rng_poisson);
    RUN(test_csvex_iterable_workers);
    RUN(test_csvex_iterable_errors);
    RUN(test_csvex_iterable_replicas);
    RUN(test_csvex_worker_info);
    RUN(test_csvex_seed_worker);
}
