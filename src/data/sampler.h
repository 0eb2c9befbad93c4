/* data/sampler.h - samplers: the index streams a DataLoader fetches (torch.utils.data.Sampler,
 * SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler, BatchSampler,
 * distributed.DistributedSampler).
 *
 * A sampler yields either single indices (batch_size 0) or batches of indices (batch_size >= 1:
 * a batch sampler). A pass starts with ct_sampler_iter (iter(sampler)) and ends when
 * ct_sampler_next returns 0:
 *     ct_sampler *s = ct_random_sampler_new(ds, false, 0, NULL);
 *     int64_t i;
 *     ct_sampler_iter(s);
 *     while (ct_sampler_next(s, &i) == 1) { ... }
 *     ct_sampler_free(s);
 * Determinism: the streams equal PyTorch's for the same generator state and seed, and draw
 * from the generators in PyTorch's order, lazily as Python's generators do (RandomSampler
 * draws its seed at the first index, each randperm / randint chunk when the previous one is
 * used up, and a trailing randperm(n)[:0] when the pass ends).
 * Thread safety: one thread per sampler.
 */
typedef struct ct_sampler ct_sampler;
struct ct_sampler {
    /* Starts a new pass. Optional (NULL: nothing to do). Mirrors: Sampler.__iter__. */
    ct_status (*iter)(ct_sampler *self);
    /* Writes the next item into out: one index (batch_size 0) or up to batch_size indices.
       Returns the number written, 0 at the end of the pass, -1 after recording an error.
       Required. Mirrors: next() on the sampler's iterator. */
    int64_t (*next)(ct_sampler *self, int64_t *out);
    /* Items per pass (indices, or batches for a batch sampler). Optional (NULL: unknown, -1).
       Mirrors: Sampler.__len__. */
    int64_t (*len)(const ct_sampler *self);
    /* Optional: releases what the sampler holds (the struct too when it was allocated). */
    void (*destroy)(ct_sampler *self);
    /* 0: yields single indices; >= 1: yields batches of at most batch_size indices. */
    int64_t batch_size;
    /* The implementation's data. */
    void *user;
};

/* A sampler with the given callbacks (a custom Sampler subclass): next required, iter and len
   optional, batch_size as the struct's field (0: indices; >= 1: batches of at most that many).
   Returns: a new sampler (free with ct_sampler_free, which does not touch user); NULL on error.
   Errors: CT_ERR_NULL_ARG for next; CT_ERR_VALUE for batch_size < 0.
   Mirrors: subclassing torch.utils.data.Sampler. */
CTORCH_API ct_sampler *ct_sampler_new(ct_status (*iter)(ct_sampler *self),
                                      int64_t (*next)(ct_sampler *self, int64_t *out),
                                      int64_t (*len)(const ct_sampler *self), int64_t batch_size,
                                      void *user);
/* Starts a pass. Returns CT_OK or the sampler's error. Mirrors: iter(sampler). */
CTORCH_API ct_status ct_sampler_iter(ct_sampler *s);
/* The next index (or batch of indices) of the pass into out (room for max(1, batch_size)
   values). Returns the number written, 0 at the end, -1 on error (ct_error).
   Mirrors: next(it). */
CTORCH_API int64_t ct_sampler_next(ct_sampler *s, int64_t *out);
/* Items per pass; -1 when the sampler cannot tell (or for NULL). Mirrors: len(sampler). */
CTORCH_API int64_t ct_sampler_len(const ct_sampler *s);
/* Frees a sampler through its destroy callback. NULL is a no-op. */
CTORCH_API void ct_sampler_free(ct_sampler *s);

/* 0, 1, ..., len(ds) - 1 (len read at each pass). ds is borrowed.
   Returns: a new sampler; NULL on error. Errors: CT_ERR_NULL_ARG, a malformed dataset.
   Mirrors: torch.utils.data.SequentialSampler(data_source). */
CTORCH_API ct_sampler *ct_sequential_sampler_new(ct_dataset *ds);
/* Random indices in [0, n), n = len(ds): a permutation per n indices without replacement (the
   last one cut to num_samples % n), uniform draws in chunks of 32 with replacement.
   num_samples 0 means len(ds). g NULL: each pass seeds a private generator with a draw from
   the default one (PyTorch's); else g is used (borrowed) directly.
   Returns: a new sampler; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "num_samples should be a positive integer value, but
   got num_samples=-1". Mirrors: torch.utils.data.RandomSampler(data_source, replacement,
   num_samples, generator). */
CTORCH_API ct_sampler *ct_random_sampler_new(ct_dataset *ds, bool replacement,
                                             int64_t num_samples, ct_generator *g);
/* indices[randperm(n)] each pass (indices copied). g NULL: the default generator.
   Returns: a new sampler; NULL on error. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 0.
   Mirrors: torch.utils.data.SubsetRandomSampler(indices, generator). */
CTORCH_API ct_sampler *ct_subset_random_sampler_new(const int64_t *indices, int64_t n,
                                                    ct_generator *g);
/* num_samples indices in [0, n) drawn with probabilities proportional to weights[0..n)
   (float64, copied) by ct_multinomial, once per pass. g NULL: the default generator.
   Returns: a new sampler; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "num_samples should be a positive integer value, but
   got num_samples=0", n < 1, and ct_multinomial's errors at the pass (negative weights,
   "cannot sample n_sample > prob_dist.size(-1) samples without replacement").
   Mirrors: torch.utils.data.WeightedRandomSampler(weights, num_samples, replacement,
   generator). */
CTORCH_API ct_sampler *ct_weighted_random_sampler_new(const double *weights, int64_t n,
                                                      int64_t num_samples, bool replacement,
                                                      ct_generator *g);
/* Groups the indices of sampler (borrowed; it must yield single indices) into batches of
   batch_size; the last one is smaller, or dropped with drop_last.
   Returns: a new batch sampler (its batch_size field is batch_size); NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "batch_size should be a positive integer value, but
   got batch_size=0", or a sampler that itself yields batches.
   Mirrors: torch.utils.data.BatchSampler(sampler, batch_size, drop_last). */
CTORCH_API ct_sampler *ct_batch_sampler_new(ct_sampler *sampler, int64_t batch_size,
                                            bool drop_last);

/* DistributedSampler's options (ct_distributed_sampler_defaults() gives PyTorch's defaults;
   num_replicas and rank, which PyTorch reads from the process group, default to 1 and 0). */
typedef struct ct_distributed_sampler_opts {
    int64_t num_replicas; /* processes taking part, >= 1 */
    int64_t rank;         /* this process, in [0, num_replicas) */
    bool shuffle;         /* true: randperm from a generator seeded seed + epoch */
    uint64_t seed;        /* 0 */
    bool drop_last;       /* false: pad by repeating indices to divide evenly */
} ct_distributed_sampler_opts;
/* num_replicas 1, rank 0, shuffle true, seed 0, drop_last false. */
CTORCH_API ct_distributed_sampler_opts ct_distributed_sampler_defaults(void);
/* The rank's share of len(ds): all indices (randperm(len) from a generator seeded seed + epoch
   with shuffle), padded to total_size by repeating from the start (or cut with drop_last),
   then every num_replicas-th from rank. ds borrowed; opts NULL: the defaults.
   Returns: a new sampler; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "Invalid rank 2, rank should be in the interval
   [0, 1]" and num_replicas < 1. Mirrors: torch.utils.data.distributed.DistributedSampler. */
CTORCH_API ct_sampler *ct_distributed_sampler_new(ct_dataset *ds,
                                                  const ct_distributed_sampler_opts *opts);
/* Sets the epoch the next pass shuffles with (seed + epoch). Errors: CT_ERR_NULL_ARG;
   CT_ERR_VALUE when s is not a distributed sampler. Mirrors: DistributedSampler.set_epoch. */
CTORCH_API ct_status ct_distributed_sampler_set_epoch(ct_sampler *s, int64_t epoch);
