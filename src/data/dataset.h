/* data/dataset.h - map-style datasets (torch.utils.data.Dataset, TensorDataset, Subset,
 * random_split, ConcatDataset, StackDataset), iterable datasets (IterableDataset,
 * ChainDataset) and default_collate.
 *
 * A sample is a fixed number of fields (n_fields tensors: e.g. image and label). A dataset
 * is a small vtable that users fill to write their own:
 *     static int64_t my_len(const ct_dataset *ds) { return 100; }
 *     static ct_status my_get(const ct_dataset *ds, int64_t i, ct_tensor **fields)
 *     {
 *         fields[0] = ct_full(NULL, 0, (double)i, CT_FLOAT32);
 *         return fields[0] ? CT_OK : ct_error_code();
 *     }
 *     ct_dataset ds = {my_len, my_get, NULL, NULL, 1, NULL};
 * The tensors get and get_batch return are new tensors owned by the current scope (views of
 * the dataset's storage are allowed); they carry no autograd history the caller relies on.
 * Thread safety: ct_dataset_get may run on several threads at once only when the dataset's
 * callbacks allow it (the built-in datasets do).
 */

/* Most fields a sample may have. */
#define CT_DATASET_MAX_FIELDS 16

typedef struct ct_dataset ct_dataset;
struct ct_dataset {
    /* Number of samples (>= 0). Required. Mirrors: Dataset.__len__. */
    int64_t (*len)(const ct_dataset *self);
    /* Writes the n_fields tensors of sample index (0 <= index < len, already checked) into
       fields, as new tensors owned by the current scope. Returns CT_OK, or the status of an
       error it recorded (ct_error). Required. Mirrors: Dataset.__getitem__. */
    ct_status (*get)(const ct_dataset *self, int64_t index, ct_tensor **fields);
    /* Optional batched fetch: writes n_fields tensors whose dim 0 has n rows, row k being
       sample indices[k] (indices already checked; n >= 1). NULL: ct_dataset_get_batch calls
       get per sample and stacks (ct_default_collate). Mirrors: Dataset.__getitems__ followed
       by default_collate. */
    ct_status (*get_batch)(const ct_dataset *self, const int64_t *indices, int64_t n,
                           ct_tensor **fields);
    /* Optional: called by ct_dataset_free to release what the dataset holds (including the
       struct itself when it was allocated). NULL: ct_dataset_free does nothing. */
    void (*destroy)(ct_dataset *self);
    /* Fields per sample, 1..CT_DATASET_MAX_FIELDS. */
    int n_fields;
    /* The implementation's data. */
    void *user;
};

/* Number of samples; -1 + CT_ERR_NULL_ARG for NULL. Mirrors: len(dataset). */
CTORCH_API int64_t ct_dataset_len(const ct_dataset *ds);
/* Fetches sample index (negative counts from the end) into fields[0..n_fields).
   Returns: CT_OK and new tensors owned by the current scope (for a tensor dataset: views of
   row index, sharing storage); on error a nonzero status and every field NULL.
   Errors: CT_ERR_INDEX "index 7 is out of bounds for dimension 0 with size 5";
   CT_ERR_VALUE for a malformed vtable; the dataset's own errors.
   Mirrors: dataset[index]. */
CTORCH_API ct_status ct_dataset_get(const ct_dataset *ds, int64_t index, ct_tensor **fields);
/* Fetches the samples indices[0..n) as batched fields: field f has shape (n, *sample_shape_f)
   and the sample's dtype, row k holding sample indices[k] (indices may repeat; negative
   counts from the end). Uses the dataset's get_batch when it has one (a tensor dataset
   gathers rows directly), else get per sample and ct_default_collate.
   Returns: CT_OK and new contiguous tensors owned by the current scope, with no autograd
   history; on error a nonzero status and every field NULL.
   Errors: CT_ERR_VALUE for n < 1; CT_ERR_INDEX as ct_dataset_get; CT_ERR_SHAPE when the
   samples' shapes differ ("stack expects each tensor to be equal size").
   Mirrors: default_collate([dataset[i] for i in indices]). */
CTORCH_API ct_status ct_dataset_get_batch(const ct_dataset *ds, const int64_t *indices,
                                          int64_t n, ct_tensor **fields);
/* Releases a dataset through its destroy callback. NULL is a no-op. Datasets built on ds
   (subsets, loaders) must be freed first. Invalidates: tensors only the dataset held. */
CTORCH_API void ct_dataset_free(ct_dataset *ds);

/* A collate callback: stacks n samples (samples[k * n_fields + f] is field f of sample k)
   into batch[0..n_fields) as new tensors of the current scope; returns CT_OK or an error's
   status. ct_default_collate's form plus user data (DataLoader's collate_fn). May run on
   DataLoader worker threads. */
typedef ct_status (*ct_collate_fn)(ct_tensor *const *samples, int64_t n, int n_fields,
                                   ct_tensor **batch, void *user);

/* Stacks n samples of n_fields fields each along a new dim 0: samples[k * n_fields + f] is
   field f of sample k; batch[f] gets shape (n, *shape_f).
   dtypes: each field keeps its dtype (the samples of a field must agree).
   Returns: CT_OK and new tensors owned by the current scope in batch[0..n_fields); on error
   a nonzero status and every batch entry NULL.
   Errors: CT_ERR_VALUE for n < 1 or n_fields out of 1..CT_DATASET_MAX_FIELDS;
   CT_ERR_SHAPE / CT_ERR_DTYPE from ct_stack. Mirrors: torch.utils.data.default_collate. */
CTORCH_API ct_status ct_default_collate(ct_tensor *const *samples, int64_t n, int n_fields,
                                        ct_tensor **batch);

/* A dataset whose sample i is (tensors[0][i], ..., tensors[n-1][i]).
   Shapes: tensors[k] (N, *) with the same N for all.
   Returns: a new dataset (n_fields = n) that retains the tensors (they stay alive, and
   in-place changes to them show); free with ct_dataset_free. NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n out of 1..CT_DATASET_MAX_FIELDS;
   CT_ERR_SHAPE for a 0-dim tensor or "Size mismatch between tensors"; CT_ERR_DEVICE for
   non-CPU tensors. Mirrors: torch.utils.data.TensorDataset(*tensors). */
CTORCH_API ct_dataset *ct_tensor_dataset_new(ct_tensor *const *tensors, int n);
/* Whether ds was made by ct_tensor_dataset_new. */
CTORCH_API bool ct_dataset_is_tensor_dataset(const ct_dataset *ds);

/* The samples indices[0..n) of ds, in that order (indices are copied, may repeat).
   Returns: a new dataset that borrows ds (which must outlive it); free with
   ct_dataset_free. NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 0; CT_ERR_INDEX for an index outside
   [0, len(ds)). Mirrors: torch.utils.data.Subset(dataset, indices). */
CTORCH_API ct_dataset *ct_subset_new(ct_dataset *ds, const int64_t *indices, int64_t n);
/* Splits ds into n non-overlapping subsets of the given lengths, from one permutation
   ct_randperm(len(ds), g) (g NULL: the default generator): out[k] holds the next lengths[k]
   permuted indices. With the same generator state the subsets equal PyTorch's.
   Returns: CT_OK and n new subsets in out (each borrows ds; free each with ct_dataset_free);
   on error a nonzero status and every out[k] NULL.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 1, a negative length, or "Sum of input
   lengths does not equal the length of the input dataset!".
   Mirrors: torch.utils.data.random_split(dataset, lengths, generator) (integer lengths). */
CTORCH_API ct_status ct_random_split(ct_dataset *ds, const int64_t *lengths, int n,
                                     ct_generator *g, ct_dataset **out);
/* ct_random_split with fractions[0..n) of len(ds) summing to 1 (within 1e-9): each length is
   floor(len * fraction), and the remainder is added one at a time to lengths 0, 1, ...
   round-robin (PyTorch's rounding); then as ct_random_split.
   Errors: as ct_random_split; CT_ERR_VALUE "Fraction at index 1 is not between 0 and 1";
   fractions not summing to 1 give "Sum of input lengths does not equal the length of the
   input dataset!". Mirrors: random_split(dataset, [0.8, 0.2], generator). */
CTORCH_API ct_status ct_random_split_fractions(ct_dataset *ds, const double *fractions, int n,
                                               ct_generator *g, ct_dataset **out);

/* The samples of datasets[0], then datasets[1], ... (n datasets, borrowed; they must outlive
   it, with equal n_fields). Sample i comes from the dataset whose cumulative size passes i.
   Returns: a new dataset (free with ct_dataset_free); NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "datasets should not be an empty iterable" (n < 1),
   n_fields that differ. Mirrors: torch.utils.data.ConcatDataset(datasets). */
CTORCH_API ct_dataset *ct_concat_dataset_new(ct_dataset *const *datasets, int n);
/* Sample i is the fields of datasets[0][i], then those of datasets[1][i], ... (n datasets,
   borrowed, of one length; n_fields is the sum, at most CT_DATASET_MAX_FIELDS). Batches come
   from each dataset's ct_dataset_get_batch.
   Returns: a new dataset (free with ct_dataset_free); NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE "At least one dataset should be passed", "Size
   mismatch between datasets", too many fields in all.
   Mirrors: torch.utils.data.StackDataset(*datasets) (the tuple form). */
CTORCH_API ct_dataset *ct_stack_dataset_new(ct_dataset *const *datasets, int n);

/* An iterable-style dataset: a stream of samples of n_fields tensors. Users fill it:
       ct_iterable_dataset ds = {my_iter, my_next, NULL, 2, &state, NULL};
   The tensors next writes are new tensors of the current scope. A DataLoader with workers
   needs the clone callback: each worker thread iterates its own replica, whose iter callback
   (run on that thread) shards the stream with ct_get_worker_info(), as PyTorch's workers each
   iterate a copy of the dataset. */
typedef struct ct_iterable_dataset ct_iterable_dataset;
struct ct_iterable_dataset {
    /* Starts a new pass over the stream. Optional (NULL: nothing to do).
       Mirrors: IterableDataset.__iter__. */
    ct_status (*iter)(ct_iterable_dataset *self);
    /* Writes the next sample into fields and returns 1; 0 at the end of the stream; -1
       after recording an error. Required. Mirrors: next() on the dataset's iterator. */
    int (*next)(ct_iterable_dataset *self, ct_tensor **fields);
    /* Optional: called by ct_iterable_dataset_free. */
    void (*destroy)(ct_iterable_dataset *self);
    /* Fields per sample, 1..CT_DATASET_MAX_FIELDS. */
    int n_fields;
    void *user;
    /* Optional: a new replica of self with its own iteration state (the same n_fields),
       released with ct_iterable_dataset_free (so its destroy frees it); NULL after recording
       an error. Called on the caller's thread; replicas then run on one thread each.
       Required by ct_dataloader_new_iterable with num_workers > 0. Mirrors: the copy of the
       dataset each DataLoader worker process gets. */
    ct_iterable_dataset *(*clone)(const ct_iterable_dataset *self);
};
/* Starts a pass. Returns CT_OK or the dataset's error (CT_ERR_NULL_ARG, CT_ERR_VALUE for a
   malformed vtable). Mirrors: iter(dataset). */
CTORCH_API ct_status ct_iterable_dataset_iter(ct_iterable_dataset *ds);
/* The next sample into fields[0..n_fields): 1, or 0 at the end (fields NULL), or -1 on error
   (fields NULL). Mirrors: next(it). */
CTORCH_API int ct_iterable_dataset_next(ct_iterable_dataset *ds, ct_tensor **fields);
/* Releases an iterable dataset through its destroy callback. NULL is a no-op. */
CTORCH_API void ct_iterable_dataset_free(ct_iterable_dataset *ds);
/* The stream of datasets[0], then datasets[1], ... (borrowed, equal n_fields). It has a
   clone callback when every part has one (a replica owns clones of the parts).
   Returns: a new iterable dataset (free with ct_iterable_dataset_free); NULL on error.
   Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for n < 1 or n_fields that differ.
   Mirrors: torch.utils.data.ChainDataset(datasets). */
CTORCH_API ct_iterable_dataset *ct_chain_dataset_new(ct_iterable_dataset *const *datasets,
                                                     int n);
