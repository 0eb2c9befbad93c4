/* dist/ddp.h - DistributedDataParallel (torch.nn.parallel.DistributedDataParallel) and its
 * communication hooks (torch.distributed.algorithms.ddp_comm_hooks).
 *
 * ct_ddp_new broadcasts rank 0's parameters and buffers, then groups the parameters that
 * require grad into buckets: in reverse registration order (about the order backward produces
 * their gradients), one dtype per bucket, the first closed at 1 MiB (PyTorch's
 * _DEFAULT_FIRST_BUCKET_BYTES) and the others at bucket_cap_mb. A post-accumulate-grad hook
 * copies each gradient into its bucket as backward produces it; a full bucket (and every full
 * one after it, in bucket order) starts its all-reduce at once, so communication overlaps the
 * rest of the backward; the end of the backward waits for them and writes the averaged
 * gradients back into .grad. PyTorch rebuilds its buckets after the first iteration in the
 * order gradients arrived; ctorch keeps the reverse registration order.
 */
#include "dist.h"

/* A wrapped module: opaque. */
typedef struct ct_ddp ct_ddp;
/* One bucket of gradients handed to a communication hook (torch.distributed.GradBucket). */
typedef struct ct_grad_bucket ct_grad_bucket;

/* Options of ct_ddp_new; start from ct_ddp_defaults().
     field                    default  meaning
     bucket_cap_mb            25       a bucket's size in MiB (the first: at most 1 MiB)
     broadcast_buffers        true     ct_ddp_forward broadcasts rank 0's buffers first
     find_unused_parameters   false    parameters without a gradient at the end of a backward
                                       count as ready with zeros (and keep .grad untouched
                                       when no rank used them); false: such a parameter fails
                                       the backward
     gradient_as_bucket_view  false    .grad becomes a view of its bucket after the first
                                       synced backward (no copy back and forth afterwards)
   Mirrors: DistributedDataParallel(module, process_group=..., bucket_cap_mb=25,
   broadcast_buffers=True, find_unused_parameters=False, gradient_as_bucket_view=False). */
typedef struct ct_ddp_opts {
    double bucket_cap_mb;
    bool broadcast_buffers;
    bool find_unused_parameters;
    bool gradient_as_bucket_view;
} ct_ddp_opts;
/* PyTorch's defaults (table above). */
CTORCH_DIST_API ct_ddp_opts ct_ddp_defaults(void);

/* Wraps module (borrowed: it must outlive the ct_ddp) for data-parallel training on group
   (NULL: the default group); every member calls it. Broadcasts group rank 0's parameters and
   buffers into every rank's (in place) and builds the buckets (see the top of this part).
   Returns: a new ct_ddp owned by the caller (ct_ddp_free), or NULL. Errors: CT_ERR_NULL_ARG;
   CT_ERR_STATE before ct_dist_init_process_group; CT_ERR_VALUE for bucket_cap_mb <= 0, a
   module without a parameter requiring grad ("DistributedDataParallel is not needed when a
   module doesn't have any parameter that requires a gradient.") or a process that is not in
   group; CT_ERR_DIST from the broadcasts. Mirrors: DistributedDataParallel(module, ...). */
CTORCH_DIST_API ct_ddp *ct_ddp_new(ct_module *module, ct_process_group *group,
                                   const ct_ddp_opts *opts);
/* Runs the module (ct_module_forward: with its hooks) on input after broadcasting rank 0's
   buffers (broadcast_buffers and a world larger than 1), and, with grad mode on outside
   no_sync, arms the next backward to reduce the gradients. Returns: a new tensor owned by the
   current scope, or NULL. Errors: as the module's forward and ct_dist_broadcast; CT_ERR_STATE
   when the previous synced backward did not finish its reduction ("Expected to have finished
   reduction in the prior iteration before starting a new one."). Mirrors: DDP.forward. */
CTORCH_DIST_API ct_tensor *ct_ddp_forward(ct_ddp *ddp, const ct_tensor *input);
/* The wrapped module (borrowed). Mirrors: DistributedDataParallel.module. */
CTORCH_DIST_API ct_module *ct_ddp_module(const ct_ddp *ddp);
/* Between begin and end (nestable), forwards do not arm their backward: gradients accumulate
   in .grad locally, and the first synced forward + backward after end reduces the
   accumulated sums. Mirrors: with ddp.no_sync(). */
CTORCH_DIST_API void ct_ddp_no_sync_begin(ct_ddp *ddp);
CTORCH_DIST_API void ct_ddp_no_sync_end(ct_ddp *ddp);
/* Seconds the ends of the synced backwards have spent waiting for their reductions since
   ct_ddp_new: the communication the backward passes did not hide. 0 for NULL.
   Mirrors: the backward communication times of DistributedDataParallel's logging data. */
CTORCH_DIST_API double ct_ddp_comm_wait_seconds(const ct_ddp *ddp);
/* Removes the parameter hooks, waits for reductions in flight and frees ddp (not the
   module); NULL is a no-op. */
CTORCH_DIST_API void ct_ddp_free(ct_ddp *ddp);

/* A communication hook: starts the reduction of bucket's buffer (ct_grad_bucket_buffer,
   borrowed during the call and until the work completes) and returns its work; once the
   work completes the buffer must hold the averaged gradients. state is the pointer given to
   ct_ddp_register_comm_hook. Returns NULL after recording an error (the backward fails). */
typedef ct_work *(*ct_ddp_comm_hook)(void *state, ct_grad_bucket *bucket);
/* Replaces the default reduction (ct_ddp_allreduce_hook with the ddp's group) by hook, called
   with state once per bucket per synced backward, in bucket order. Call it once, before the
   first backward. Errors: CT_ERR_NULL_ARG; CT_ERR_STATE for a second registration
   ("register_comm_hook or register_builtin_comm_hook can only be called once.").
   Mirrors: DistributedDataParallel.register_comm_hook(state, hook). */
CTORCH_DIST_API ct_status ct_ddp_register_comm_hook(ct_ddp *ddp, void *state,
                                                    ct_ddp_comm_hook hook);
/* The bucket's gradients, flattened into one contiguous 1-D tensor (borrowed).
   Mirrors: GradBucket.buffer(). */
CTORCH_DIST_API ct_tensor *ct_grad_bucket_buffer(const ct_grad_bucket *bucket);
/* The bucket's index: 0 is reduced first. Mirrors: GradBucket.index(). */
CTORCH_DIST_API int ct_grad_bucket_index(const ct_grad_bucket *bucket);
/* True for the last bucket reduced in a backward. Mirrors: GradBucket.is_last(). */
CTORCH_DIST_API bool ct_grad_bucket_is_last(const ct_grad_bucket *bucket);
/* The default hook: all-reduces the buffer in place with SUM, then divides by the group's
   size. state: the process group (NULL: the default one).
   Mirrors: torch.distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook. */
CTORCH_DIST_API ct_work *ct_ddp_allreduce_hook(void *state, ct_grad_bucket *bucket);
/* Compresses the buffer to float16 divided by the group's size, all-reduces that (SUM) and
   writes the result back into the buffer: half the bytes on the wire, float16's rounding.
   state: the process group (NULL: the default one).
   Mirrors: default_hooks.fp16_compress_hook. */
CTORCH_DIST_API ct_work *ct_ddp_fp16_compress_hook(void *state, ct_grad_bucket *bucket);
/* As ct_ddp_fp16_compress_hook with bfloat16. Mirrors: default_hooks.bf16_compress_hook. */
CTORCH_DIST_API ct_work *ct_ddp_bf16_compress_hook(void *state, ct_grad_bucket *bucket);
/* Communicates nothing: a completed work leaving each rank's local gradients (to measure
   the cost of communication). state: the process group (NULL: the default one).
   Mirrors: debugging_hooks.noop_hook. */
CTORCH_DIST_API ct_work *ct_ddp_noop_hook(void *state, ct_grad_bucket *bucket);
