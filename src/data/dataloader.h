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
 * Each epoch visits every sample once: in order, or (shuffle) in a new permutation drawn at
 * the epoch's start. Batches run in the calling thread (num_workers = 0); the fields of a
 * batch are collated by ct_dataset_get_batch, which gathers rows straight from the tensors
 * of a tensor dataset (no per-sample tensors).
 * Determinism: the batches equal PyTorch's DataLoader(..., shuffle=True) epoch after epoch for
 * the same seed, with an explicit generator (seeded as torch.Generator().manual_seed(s)) or
 * with generator NULL (the default generator after torch.manual_seed(s)), and the generator
 * advances as PyTorch's: each epoch draws a 64-bit base seed, then with an explicit generator
 * two randperm calls; with the default one a second 64-bit draw seeds a private generator for
 * the permutation, as RandomSampler does.
 * Thread safety: one loader per thread.
 */
typedef struct ct_dataloader ct_dataloader;

/* Options (ct_dataloader_defaults() returns PyTorch's defaults):
   | field      | default | meaning                                                      |
   |------------|---------|--------------------------------------------------------------|
   | batch_size | 1       | samples per batch, >= 1                                      |
   | shuffle    | false   | a new random order every epoch (RandomSampler)               |
   | drop_last  | false   | drop the last batch when it has fewer than batch_size samples |
   | generator  | NULL    | the generator for shuffling (borrowed); NULL: the default one |
   Fields may be added (num_workers, samplers); start from ct_dataloader_defaults(). */
typedef struct ct_dataloader_opts {
    int64_t batch_size;
    bool shuffle;
    bool drop_last;
    ct_generator *generator;
} ct_dataloader_opts;

/* PyTorch's defaults: batch_size 1, shuffle false, drop_last false, generator NULL.
   Mirrors: DataLoader's keyword defaults. */
CTORCH_API ct_dataloader_opts ct_dataloader_defaults(void);

/* A loader over ds (borrowed: it must outlive the loader). opts NULL means the defaults;
   the options are copied (the generator is borrowed).
   Returns: a new loader, freed with ct_dataloader_free; NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "batch_size should be a positive integer value, but
   got batch_size=0", or a malformed dataset vtable. Mirrors: torch.utils.data.DataLoader. */
CTORCH_API ct_dataloader *ct_dataloader_new(ct_dataset *ds, const ct_dataloader_opts *opts);
/* Writes the next batch into batch[0..n_fields) (n_fields = ds->n_fields) and returns true;
   returns false, with every entry NULL, at the end of the epoch. The call after that starts
   a new epoch (reshuffling), like iterating the DataLoader again.
   Shapes: batch[f] (B, *sample_shape_f), B = batch_size except a smaller last batch when
   drop_last is false. dtypes: each field's own (uint8 images stay uint8, int64 labels stay
   int64).
   Returns: new contiguous tensors owned by the current scope (end a scope per step or
   epoch), with no autograd history; false + an error (ct_error) when the dataset fails.
   Mirrors: next(iter(dataloader)). */
CTORCH_API bool ct_dataloader_next(ct_dataloader *dl, ct_tensor **batch);
/* Abandons the current epoch: the next ct_dataloader_next starts a new one.
   Mirrors: calling iter(dataloader) again. */
CTORCH_API void ct_dataloader_reset(ct_dataloader *dl);
/* Batches per epoch: ceil(N / batch_size), or floor(N / batch_size) with drop_last; -1 for
   NULL. Mirrors: len(dataloader). */
CTORCH_API int64_t ct_dataloader_len(const ct_dataloader *dl);
/* Frees the loader (not its dataset or generator). NULL is a no-op. */
CTORCH_API void ct_dataloader_free(ct_dataloader *dl);
