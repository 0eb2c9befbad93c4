/* data/dataloader.h - batches over a dataset (torch.utils.data.DataLoader).
 *
 *     ct_dataloader_opts o = ct_dataloader_defaults();
 *     o.batch_size = 64;
 *     o.shuffle = true;
 *     ct_dataloader *dl = ct_dataloader_new(ds, &o);
 *     for (int epoch = 0; epoch < 10; epoch++) {
 *         ct_tensor *batch[2];
 *         ct_scope_begin();
 *         while (ct_dataloader_next(dl, batch)) { ... train on batch[0], batch[1] ...; }
 *         ct_scope_end();
 *     }
 *     ct_dataloader_free(dl);
 * Each epoch visits the indices of a sampler (sequential, a new permutation with shuffle, or
 * the user's) grouped by a batch sampler. Without a collate callback the fields of a batch
 * come from ct_dataset_get_batch, which gathers rows straight from the tensors of a tensor
 * dataset (no per-sample tensors); with one, from ct_dataset_get per sample and the callback.
 * Workers: with num_workers > 0, worker threads fetch and collate batches ahead
 * (prefetch_factor batches each); batch k goes to worker k % num_workers and batches are
 * delivered in order, so the batches are the same for any number of workers. Each worker's
 * default generator (ct_default_generator() on that thread) is seeded base_seed + worker_id,
 * base_seed being drawn from the loader's generator once per epoch (once per loader with
 * persistent_workers), as PyTorch's worker processes are; ct_get_worker_info tells a
 * dataset which worker runs it. The dataset's callbacks must then be thread-safe.
 * Determinism: the batches equal PyTorch's DataLoader(..., shuffle=True) epoch after epoch for
 * the same seed, with an explicit generator (seeded as torch.Generator().manual_seed(s)) or
 * with generator NULL (the default generator after torch.manual_seed(s)), and the generator
 * advances as PyTorch's: each epoch draws a 64-bit base seed, then with an explicit generator
 * two randperm calls; with the default one a second 64-bit draw seeds a private generator for
 * the permutation, as RandomSampler does.
 * A worker's batch tensors are handed to the caller's current scope by ct_dataloader_next.
 * An error in a worker stops the epoch's workers and reaches the caller as "Caught a value
 * error in DataLoader worker 1 while fetching sample index 13: <the worker's message>".
 * Thread safety: one thread drives a loader.
 */
typedef struct ct_dataloader ct_dataloader;

/* Options (ct_dataloader_defaults() returns PyTorch's defaults):
   | field               | default | meaning                                                |
   |---------------------|---------|--------------------------------------------------------|
   | batch_size          | 1       | samples per batch, >= 1                                |
   | shuffle             | false   | a new random order every epoch (RandomSampler)         |
   | drop_last           | false   | drop the last batch when it is smaller than batch_size |
   | generator           | NULL    | shuffling and base_seed generator (borrowed); NULL: the default one |
   | sampler             | NULL    | the index sampler (borrowed; excludes shuffle)         |
   | batch_sampler       | NULL    | the batch sampler (borrowed; excludes batch_size != 1, shuffle, sampler, drop_last) |
   | collate_fn          | NULL    | the collate callback; NULL: ct_default_collate         |
   | collate_user        | NULL    | passed to collate_fn                                   |
   | num_workers         | 0       | worker threads; 0 fetches in the calling thread        |
   | prefetch_factor     | 2       | batches each worker works ahead (num_workers > 0)      |
   | persistent_workers  | false   | keep the workers (and their generators) across epochs  |
   | worker_init_fn      | NULL    | called on each worker thread after seeding: (worker_id, user) |
   | worker_init_user    | NULL    | passed to worker_init_fn                               |
   | timeout             | 0       | seconds to wait for a worker's batch; 0: forever       |
   | pin_memory          | false   | batches in pinned host memory (ct_pin_memory) when a backend has it |
   Fields may be added; start from ct_dataloader_defaults(). */
typedef struct ct_dataloader_opts {
    int64_t batch_size;
    bool shuffle;
    bool drop_last;
    ct_generator *generator;
    ct_sampler *sampler;
    ct_sampler *batch_sampler;
    ct_collate_fn collate_fn;
    void *collate_user;
    int num_workers;
    int prefetch_factor;
    bool persistent_workers;
    void (*worker_init_fn)(int worker_id, void *user);
    void *worker_init_user;
    double timeout;
    bool pin_memory;
} ct_dataloader_opts;

/* PyTorch's defaults: batch_size 1, shuffle false, drop_last false, prefetch_factor 2 (used
   with workers), everything else 0 / NULL. Mirrors: DataLoader's keyword defaults. */
CTORCH_API ct_dataloader_opts ct_dataloader_defaults(void);

/* A loader over ds (borrowed: it must outlive the loader, as must the samplers and the
   generator). opts NULL means the defaults; the options are copied.
   Returns: a new loader, freed with ct_dataloader_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "batch_size should be a positive integer value, but
   got batch_size=0", "sampler option is mutually exclusive with shuffle", "batch_sampler
   option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
   "num_workers option should be non-negative; use num_workers=0 to disable
   multiprocessing.", "prefetch_factor option must be a positive integer", a negative
   timeout, a sampler that yields batches (or a batch_sampler that does not), a malformed
   dataset vtable; CT_ERR_UNSUPPORTED for num_workers > 0 in a build without threads
   (CTORCH_NO_THREADS). Mirrors: torch.utils.data.DataLoader. */
CTORCH_API ct_dataloader *ct_dataloader_new(ct_dataset *ds, const ct_dataloader_opts *opts);
/* A loader over an iterable dataset (borrowed): each batch is the next batch_size samples of
   a stream (the last one smaller, or dropped with drop_last), collated; each epoch starts a
   new pass (the iter callback). Without workers the calling thread reads ds's stream. With
   num_workers W > 0, worker w iterates its own replica (ds->clone(ds), made when the workers
   start, freed when they stop; ct_get_worker_info()->iterable_dataset on its thread), calling
   iter on its thread after seeding and worker_init_fn, so the replica shards itself by
   ct_get_worker_info()->id as PyTorch's workers do; batches are delivered round robin over
   the workers (worker 0's first batch, worker 1's first, ..., worker 0's second, ...), a
   worker whose stream ended being skipped, and the epoch ends when every stream has: the
   batches of PyTorch's DataLoader with W workers, in its order.
   Returns: a new loader, freed with ct_dataloader_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "DataLoader with IterableDataset: expected
   unspecified sampler, batch_sampler and shuffle options", a malformed vtable, num_workers >
   0 without a clone callback, the option errors of ct_dataloader_new. ct_dataloader_next
   reports a worker's failure as "Caught a value error in DataLoader worker 1 while fetching
   its batch 2 of the iterable dataset: <the worker's message>".
   Mirrors: torch.utils.data.DataLoader(iterable_dataset, batch_size, drop_last,
   num_workers). */
CTORCH_API ct_dataloader *ct_dataloader_new_iterable(ct_iterable_dataset *ds,
                                                     const ct_dataloader_opts *opts);
/* Writes the next batch into batch[0..n_fields) (n_fields = ds->n_fields) and returns true;
   returns false, with every entry NULL, at the end of the epoch. The call after that starts
   a new epoch (reshuffling), like iterating the DataLoader again.
   Shapes: batch[f] (B, *sample_shape_f), B = batch_size except a smaller last batch when
   drop_last is false (or what the batch sampler yields). dtypes: each field's own (uint8
   images stay uint8, int64 labels stay int64).
   Returns: new contiguous tensors owned by the current scope (end a scope per step or
   epoch), with no autograd history; false + an error (ct_error) when the dataset, the
   sampler or a worker fails (the epoch then ends and its workers stop), or CT_ERR_STATE
   "DataLoader timed out after 0.5 seconds". Mirrors: next(iter(dataloader)). */
CTORCH_API bool ct_dataloader_next(ct_dataloader *dl, ct_tensor **batch);
/* Abandons the current epoch (stopping its workers unless persistent): the next
   ct_dataloader_next starts a new one. Mirrors: calling iter(dataloader) again. */
CTORCH_API void ct_dataloader_reset(ct_dataloader *dl);
/* Batches per epoch: len(batch_sampler) (ceil(N / batch_size), or floor(N / batch_size) with
   drop_last, for the built-in one); -1 for NULL, a sampler without a length or an iterable
   dataset.
   Mirrors: len(dataloader). */
CTORCH_API int64_t ct_dataloader_len(const ct_dataloader *dl);
/* Changes the number of worker threads (0: the calling thread fetches); the current epoch
   is abandoned and the workers stop. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for a negative
   count; CT_ERR_UNSUPPORTED for num_workers > 0 without threads. Mirrors: DataLoader's
   num_workers (set before iterating). */
CTORCH_API ct_status ct_dataloader_set_num_workers(ct_dataloader *dl, int num_workers);
/* Turns pinning on or off: with pin_memory, each batch's tensors are copied into pinned host
   memory (ct_pin_memory, in the worker thread that made the batch, or the calling thread
   without workers) when a registered backend provides it (the CUDA backend), so that
   ct_to_device(batch[f], cuda, non_blocking) can overlap; without such a backend the batches
   are unchanged (PyTorch warns "'pin_memory' argument is set as true but no accelerator is
   found"). The current epoch is abandoned. Errors: CT_ERR_NULL_ARG.
   Mirrors: DataLoader(pin_memory=True) (pin_memory_device: the backend that has it). */
CTORCH_API ct_status ct_dataloader_set_pin_memory(ct_dataloader *dl, bool pin_memory);
/* Frees the loader (not its dataset, samplers or generator), stopping and joining its
   workers first, even mid-epoch. NULL is a no-op. */
CTORCH_API void ct_dataloader_free(ct_dataloader *dl);

/* What a worker thread knows about itself. */
typedef struct ct_worker_info {
    int id;              /* 0 .. num_workers - 1 */
    int num_workers;
    uint64_t seed;       /* base_seed + id: the seed of this thread's default generator */
    ct_dataset *dataset; /* the loader's map-style dataset, or NULL */
    ct_iterable_dataset *iterable_dataset; /* this worker's replica of the loader's iterable
                                              dataset, or NULL */
} ct_worker_info;
/* On a DataLoader worker thread, its info (valid while the worker runs); NULL elsewhere.
   Mirrors: torch.utils.data.get_worker_info(). */
CTORCH_API const ct_worker_info *ct_get_worker_info(void);
/* The reproducibility recipe's worker_init_fn: seeds the worker's own generators with
   ct_initial_seed() % 2^32 on the calling thread (on a worker thread: its seed, base_seed +
   worker_id, reduced to 32 bits), as seed_worker seeds numpy's and Python's generators.
   user: NULL (nothing to seed), or an array of at least num_workers generators indexed by
   worker_id (NULL entries are skipped): ct_dataloader_opts.worker_init_fn = ct_seed_worker,
   worker_init_user = the array. Errors: CT_ERR_VALUE for worker_id < 0.
   Thread safety: each worker seeds its own entry. Mirrors: seed_worker(worker_id) in
   PyTorch's reproducibility notes (worker_seed = torch.initial_seed() % 2**32). */
CTORCH_API void ct_seed_worker(int worker_id, void *user);
