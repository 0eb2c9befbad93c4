/* ctorch_dist.h 0.1.0 - GENERATED from src/ by tools/amalgamate; edit src/, not this file. */
/*
 * ctorch_dist.h - process groups and collectives (torch.distributed) for ctorch.
 *
 * Includes ctorch.h (keep the two headers side by side). In ONE .c file of the program:
 *     #define CTORCH_IMPLEMENTATION
 *     #define CTORCH_DIST_IMPLEMENTATION
 *     #include "ctorch_dist.h"
 * and build with MPI's compiler wrapper, run with mpirun (Open MPI: openmpi-bin,
 * libopenmpi-dev):
 *     mpicc -std=c11 -O2 -pthread train.c -lm -o train && mpirun -np 2 ./train
 *
 * BACKENDS
 *   "mpi"   CPU tensors, every dtype of ctorch (float16/bfloat16 reductions are computed in
 *           float32 and rounded once; their other collectives carry the 16-bit payload).
 *           Rank and world size come from MPI (RANK and WORLD_SIZE, when set, must agree).
 *   "nccl"  CUDA tensors (a CUDA backend registered with ctorch), compiled only under
 *           CTORCH_DIST_NCCL (link -lnccl -lcudart); processes are started by mpirun (the
 *           NCCL unique id is broadcast over MPI) and use the GPU LOCAL_RANK (or Open MPI's
 *           local rank). MASTER_ADDR/MASTER_PORT are not used: no TCP store is needed.
 *
 * DISTRIBUTEDDATAPARALLEL (ct_ddp_new, ct_ddp_forward)
 *   Wraps a module: rank 0's parameters and buffers broadcast, gradients bucketed in reverse
 *   registration order and all-reduced (averaged) from autograd's post-accumulate-grad hooks
 *   as buckets fill, the backward's end waiting for them (ct_autograd_queue_callback);
 *   no_sync, find_unused_parameters, gradient_as_bucket_view, comm hooks (allreduce,
 *   fp16/bf16 compression, noop, user hooks on a ct_grad_bucket). examples/ddp_fashion_mnist.c
 *   trains the Fashion-MNIST CNN with it. Open MPI advances a nonblocking all-reduce only
 *   inside MPI calls: ct_ddp tests the reductions in flight as each gradient arrives.
 *
 * STORES AND ENV INIT
 *   ct_hash_store_new (in-process), ct_file_store_new (a shared file), ct_tcp_store_new (a
 *   server in the master process): set/get/add/wait with timeouts. ct_dist_init_env meets the
 *   ranks in a TCP store at MASTER_ADDR:MASTER_PORT (torchrun's variables) before the group.
 *
 * CONFIGURATION
 *   CTORCH_DIST_IMPLEMENTATION  impl TU   the definitions (once per program)
 *   CTORCH_DIST_NCCL            impl TU   the NCCL backend (default: off)
 *
 * ERRORS
 *   As ctorch.h: a failing call returns a nonzero ct_status (or NULL) and records the first
 *   error on the thread (ct_error). MPI's errors are returned, not fatal (MPI_ERRORS_RETURN),
 *   and reach the caller as CT_ERR_DIST with MPI's text. Every wait polls its request against
 *   the group's timeout: a rank that dies or never joins gives the others CT_ERR_DIST
 *   ("Watchdog caught collective operation timeout ..."), and the group is then aborted (its
 *   later calls fail at once), as PyTorch's watchdog does.
 *
 * THREADS
 *   MPI is initialized with MPI_THREAD_SERIALIZED: one thread at a time may call into a group.
 */
#ifndef CTORCH_DIST_H
#define CTORCH_DIST_H

#include "ctorch.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>part dist/dist.h
/* dist/dist.h - process groups and collectives (torch.distributed).
 *
 * A collective runs on a process group (NULL: the default group, created by
 * ct_dist_init_process_group). Ranks passed as src/dst are global ranks, as in PyTorch.
 * Tensors keep their shapes and dtypes; non-contiguous ones are copied to a contiguous buffer
 * and the results written back. With work == NULL a call blocks until done (async_op=False);
 * with a ct_work ** it starts the operation and returns a handle (async_op=True) that
 * ct_work_wait completes; the tensors must stay alive until then.
 * A rank not in the group returns CT_OK at once from a collective on it (PyTorch warns and
 * returns).
 */

#ifndef CTORCH_DIST_API
#define CTORCH_DIST_API CTORCH_API
#endif

/* The communication engines (torch.distributed.Backend). Gloo is named for PyTorch's
   vocabulary; ctorch has no Gloo engine (init with "gloo" fails with CT_ERR_UNSUPPORTED). */
typedef enum ct_dist_backend {
    CT_BACKEND_UNDEFINED = 0,
    CT_BACKEND_GLOO,
    CT_BACKEND_NCCL,
    CT_BACKEND_MPI
} ct_dist_backend;

/* Reduction operations (torch.distributed.ReduceOp). AVG divides the sum by the group's size
   (integers: truncating); BAND/BOR/BXOR take integer and bool tensors only. On bool tensors
   SUM is MAX (logical or) and PRODUCT is MIN (logical and), as PyTorch's backends. */
typedef enum ct_reduce_op {
    CT_REDUCE_SUM = 0,
    CT_REDUCE_AVG,
    CT_REDUCE_PRODUCT,
    CT_REDUCE_MIN,
    CT_REDUCE_MAX,
    CT_REDUCE_BAND,
    CT_REDUCE_BOR,
    CT_REDUCE_BXOR,
    CT_REDUCE_OP_COUNT
} ct_reduce_op;

/* A process group (torch.distributed.ProcessGroup): opaque. */
typedef struct ct_process_group ct_process_group;
/* An asynchronous operation's handle (torch.distributed.Work): opaque. */
typedef struct ct_work ct_work;

/* Options of ct_dist_init_process_group; start from ct_dist_init_defaults().
     field        default        meaning
     world_size   -1             expected number of processes (-1: from WORLD_SIZE, else MPI)
     rank         -1             expected rank of this process (-1: from RANK, else MPI)
     timeout_ms   0              how long a wait may take before it fails; <= 0: the
                                 backend's default, 1800000 (30 min; NCCL: 600000, 10 min)
   Mirrors: init_process_group(backend, timeout, world_size, rank). */
typedef struct ct_dist_init_opts {
    int world_size;
    int rank;
    int64_t timeout_ms;
} ct_dist_init_opts;
/* PyTorch's defaults (table above). */
CTORCH_DIST_API ct_dist_init_opts ct_dist_init_defaults(void);

/* True: this build has a distributed engine (MPI always; see ct_dist_is_nccl_available).
   Mirrors: torch.distributed.is_available. */
CTORCH_DIST_API bool ct_dist_is_available(void);
/* True when compiled with CTORCH_DIST_NCCL. Mirrors: torch.distributed.is_nccl_available. */
CTORCH_DIST_API bool ct_dist_is_nccl_available(void);

/* Creates the default process group of every process of the job (all must call it): backend
   "mpi" or "nccl" (NULL: "mpi"). Initializes MPI when the program has not (and finalizes it
   at exit). Blocks until every rank has joined, at most the timeout.
   Returns: CT_OK. Errors: CT_ERR_STATE when already initialized ("trying to initialize the
   default process group twice!"); CT_ERR_UNSUPPORTED for "gloo", or "nccl" without
   CTORCH_DIST_NCCL; CT_ERR_VALUE for another name, or a rank/world size (opts or RANK,
   WORLD_SIZE) that disagrees with MPI's; CT_ERR_DIST when MPI fails or a rank does not join
   in time. Thread safety: not thread-safe (as PyTorch).
   Mirrors: torch.distributed.init_process_group(backend, timeout, world_size, rank). */
CTORCH_DIST_API ct_status ct_dist_init_process_group(const char *backend,
                                                     const ct_dist_init_opts *opts);
/* True between ct_dist_init_process_group and ct_dist_destroy_process_group(NULL).
   Mirrors: torch.distributed.is_initialized. */
CTORCH_DIST_API bool ct_dist_is_initialized(void);
/* This process's rank in group (NULL: the default group), -1 when it is not a member.
   Errors: CT_ERR_STATE before init (returns -1). Mirrors: torch.distributed.get_rank. */
CTORCH_DIST_API int ct_dist_get_rank(const ct_process_group *group);
/* The number of processes in group (NULL: the default group), -1 when this process is not a
   member. Errors: CT_ERR_STATE before init (returns -1).
   Mirrors: torch.distributed.get_world_size. */
CTORCH_DIST_API int ct_dist_get_world_size(const ct_process_group *group);
/* group's backend (NULL: the default group's); CT_BACKEND_UNDEFINED after recording
   CT_ERR_STATE before init. Mirrors: torch.distributed.get_backend. */
CTORCH_DIST_API ct_dist_backend ct_dist_get_backend(const ct_process_group *group);
/* A new group of the n global ranks in ranks (NULL: all), in that order (group rank k is
   ranks[k]), with the default group's backend and timeout_ms (<= 0: the default group's).
   Every process of the default group must call it, members or not.
   Returns: the group, owned by the library until ct_dist_destroy_process_group; a process
   not in ranks gets a group on which it is not a member (rank -1). Errors (NULL): CT_ERR_STATE
   before init; CT_ERR_VALUE for a rank out of range or repeated, or n < 1; CT_ERR_DIST.
   Mirrors: torch.distributed.new_group(ranks, timeout). */
CTORCH_DIST_API ct_process_group *ct_dist_new_group(const int *ranks, int n, int64_t timeout_ms);
/* Destroys group, or (NULL) every group and the default one, after which
   ct_dist_init_process_group may be called again. MPI stays initialized until exit.
   Errors: CT_ERR_STATE before init or for a group already destroyed.
   Mirrors: torch.distributed.destroy_process_group(group). */
CTORCH_DIST_API ct_status ct_dist_destroy_process_group(ct_process_group *group);

/* Reduces tensor over the group, in place on every rank.
   Shapes: tensor any, the same numel and dtype on every rank. dtypes: all (half types are
   reduced in float32). Returns: CT_OK, or with work the started operation in *work.
   Errors: CT_ERR_STATE before init ("Default process group has not been initialized, please
   make sure to call init_process_group."); CT_ERR_DEVICE for a tensor of another backend's
   device; CT_ERR_DTYPE for a bitwise op on floats or AVG on bool; CT_ERR_DIST from the
   engine or on timeout. Mirrors: torch.distributed.all_reduce(tensor, op, group, async_op). */
CTORCH_DIST_API ct_status ct_dist_all_reduce(ct_tensor *tensor, ct_reduce_op op,
                                             ct_process_group *group, ct_work **work);
/* Copies src's tensor to every rank's tensor (in place). Shapes: the same on every rank.
   Errors: as ct_dist_all_reduce, CT_ERR_VALUE for a src not in the group.
   Mirrors: torch.distributed.broadcast(tensor, src, group, async_op). */
CTORCH_DIST_API ct_status ct_dist_broadcast(ct_tensor *tensor, int src, ct_process_group *group,
                                            ct_work **work);
/* Reduces tensor over the group into dst's tensor (the others' are left as they were).
   Errors: as ct_dist_all_reduce, CT_ERR_VALUE for a dst not in the group.
   Mirrors: torch.distributed.reduce(tensor, dst, op, group, async_op). */
CTORCH_DIST_API ct_status ct_dist_reduce(ct_tensor *tensor, int dst, ct_reduce_op op,
                                         ct_process_group *group, ct_work **work);
/* Gathers every rank's tensor into tensor_list[k] (from group rank k) on every rank.
   Shapes: tensor_list has the group's size n; tensor_list[k] has rank k's numel (sizes may
   differ between ranks: uneven gathers), the caller's own entry its tensor's; one dtype.
   Errors: CT_ERR_VALUE for n or a numel that does not match; CT_ERR_DTYPE; as all_reduce.
   Mirrors: torch.distributed.all_gather(tensor_list, tensor, group, async_op). */
CTORCH_DIST_API ct_status ct_dist_all_gather(ct_tensor *const *tensor_list, int n,
                                             const ct_tensor *tensor, ct_process_group *group,
                                             ct_work **work);
/* Gathers every rank's input into output, rank k's in output's k-th chunk.
   Shapes: input any (numel m, the same on all ranks), output numel world_size * m
   (e.g. (world_size * m0, ...) or (world_size, m0, ...)). Errors: CT_ERR_VALUE for the numels;
   as all_gather. Mirrors: torch.distributed.all_gather_into_tensor(output, input, group). */
CTORCH_DIST_API ct_status ct_dist_all_gather_into_tensor(ct_tensor *output, const ct_tensor *input,
                                                         ct_process_group *group, ct_work **work);
/* Reduces input over the group and leaves chunk k of the result in rank k's output.
   Shapes: output numel m, input numel world_size * m. Errors: as all_reduce and
   all_gather_into_tensor. Mirrors: torch.distributed.reduce_scatter_tensor(output, input, op). */
CTORCH_DIST_API ct_status ct_dist_reduce_scatter_tensor(ct_tensor *output, const ct_tensor *input,
                                                        ct_reduce_op op, ct_process_group *group,
                                                        ct_work **work);
/* Gathers every rank's tensor into dst's gather_list[k] (from group rank k). On dst:
   gather_list of n = group size tensors, gather_list[k] with rank k's numel (uneven allowed);
   elsewhere gather_list must be NULL and n 0. Errors: CT_ERR_VALUE for a list given where it
   must not be (or missing), a size that does not match, a dst not in the group; as all_gather.
   Mirrors: torch.distributed.gather(tensor, gather_list, dst, group, async_op). */
CTORCH_DIST_API ct_status ct_dist_gather(const ct_tensor *tensor, ct_tensor *const *gather_list,
                                         int n, int dst, ct_process_group *group, ct_work **work);
/* Sends src's scatter_list[k] to group rank k's tensor. On src: n = group size tensors,
   scatter_list[k] with rank k's numel; elsewhere NULL and 0. Errors: as ct_dist_gather.
   Mirrors: torch.distributed.scatter(tensor, scatter_list, src, group, async_op). */
CTORCH_DIST_API ct_status ct_dist_scatter(ct_tensor *tensor, const ct_tensor *const *scatter_list,
                                          int n, int src, ct_process_group *group, ct_work **work);
/* Blocks until every member reached it (with work: starts it). Errors: as all_reduce.
   Mirrors: torch.distributed.barrier(group, async_op). */
CTORCH_DIST_API ct_status ct_dist_barrier(ct_process_group *group, ct_work **work);
/* Sends tensor to global rank dst, matched by a recv with the same tag. Blocks until the
   tensor may be reused. Errors: CT_ERR_VALUE for dst out of range or this rank itself ("Invalid
   destination rank: should not be the same as rank of the current process."), tag < 0; as
   all_reduce. Mirrors: torch.distributed.send(tensor, dst, group, tag). */
CTORCH_DIST_API ct_status ct_dist_send(const ct_tensor *tensor, int dst, ct_process_group *group,
                                       int tag);
/* Receives into tensor from global rank src (-1: any rank) with tag. Returns: the sender's
   global rank, or -1 after recording an error (as ct_dist_send; CT_ERR_DIST when the message
   does not fit). Mirrors: torch.distributed.recv(tensor, src, group, tag). */
CTORCH_DIST_API int ct_dist_recv(ct_tensor *tensor, int src, ct_process_group *group, int tag);
/* ct_dist_send started asynchronously: the handle in *work (required). Returns: CT_OK.
   Errors: as ct_dist_send, CT_ERR_NULL_ARG for work. Mirrors: torch.distributed.isend. */
CTORCH_DIST_API ct_status ct_dist_isend(const ct_tensor *tensor, int dst, ct_process_group *group,
                                        int tag, ct_work **work);
/* ct_dist_recv started asynchronously (src -1: any rank); ct_work_source gives the sender
   once complete. Errors: as ct_dist_recv, CT_ERR_NULL_ARG for work.
   Mirrors: torch.distributed.irecv. */
CTORCH_DIST_API ct_status ct_dist_irecv(ct_tensor *tensor, int src, ct_process_group *group,
                                        int tag, ct_work **work);

/* Waits until work completes (results written back into the tensors), at most the group's
   timeout. Returns: CT_OK, or the operation's error (again on each call). Errors: CT_ERR_DIST
   on failure or timeout (the group is then aborted). Mirrors: Work.wait(). */
CTORCH_DIST_API ct_status ct_work_wait(ct_work *work);
/* True when work has completed (its results then written back), without blocking; also true
   once it failed. Mirrors: Work.is_completed(). */
CTORCH_DIST_API bool ct_work_is_completed(ct_work *work);
/* The global rank a completed ct_dist_irecv received from; -1 otherwise.
   Mirrors: Work._source_rank(). */
CTORCH_DIST_API int ct_work_source(const ct_work *work);
/* Waits for work (as ct_work_wait, keeping the error) and frees it; NULL is a no-op. */
CTORCH_DIST_API void ct_work_free(ct_work *work);

// >>part dist/ddp.h
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

// >>part dist/store.h
/* dist/store.h - key-value stores (torch.distributed.Store) and env:// initialization.
 *
 * A store maps string keys to byte strings; every process of a job that opens the same store
 * sees the same keys: ct_hash_store_new within one process (its threads), ct_file_store_new
 * through a file on a shared file system, ct_tcp_store_new through a server that the master
 * process runs. get and wait block until the keys exist, at most the store's timeout.
 * Counters made by ct_store_add are stored as decimal text, as PyTorch's.
 * A store may be used by several threads at once.
 */

/* A store: opaque. Mirrors: torch.distributed.Store. */
typedef struct ct_store ct_store;

/* A new empty in-process store with a 300 s timeout. Returns: the store, owned by the caller
   (ct_store_free), or NULL after CT_ERR_OOM. Mirrors: torch.distributed.HashStore(). */
CTORCH_DIST_API ct_store *ct_hash_store_new(void);
/* A store kept in the file path (created when missing; an existing file's keys are kept), for
   num_workers processes (informational: the file is not deleted), with a 300 s timeout.
   Record format: ctorch's own (key and value with their lengths, appended under an fcntl
   lock), not PyTorch's. Returns: the store, or NULL. Errors: CT_ERR_NULL_ARG; CT_ERR_IO when
   the file cannot be opened. Mirrors: torch.distributed.FileStore(file_name, world_size). */
CTORCH_DIST_API ct_store *ct_file_store_new(const char *path, int num_workers);
/* A store served over TCP by the master process (is_master: it listens on port, 0: any free
   port, see ct_tcp_store_port) on host_name's address; the others connect to host_name:port,
   retrying until timeout_ms (<= 0: 300 s). world_size (> 0) with wait_for_workers: the master
   blocks until world_size - 1 clients connected. Returns: the store, or NULL. Errors:
   CT_ERR_NULL_ARG; CT_ERR_VALUE for a port outside 0..65535; CT_ERR_DIST when the address
   cannot be resolved, bound or reached in time. Mirrors: torch.distributed.TCPStore(
   host_name, port, world_size, is_master, timeout, wait_for_workers). */
CTORCH_DIST_API ct_store *ct_tcp_store_new(const char *host_name, int port, int world_size,
                                           bool is_master, int64_t timeout_ms,
                                           bool wait_for_workers);
/* The port a TCP store listens on (its master) or is connected to; -1 for other stores.
   Mirrors: TCPStore.port. */
CTORCH_DIST_API int ct_tcp_store_port(const ct_store *store);
/* Sets key to len bytes of value (replacing it). Returns: CT_OK. Errors: CT_ERR_NULL_ARG;
   CT_ERR_IO / CT_ERR_DIST from the file or the connection. Mirrors: Store.set(key, value). */
CTORCH_DIST_API ct_status ct_store_set(ct_store *store, const char *key, const void *value,
                                       size_t len);
/* Waits until key exists (at most the store's timeout) and copies up to cap bytes of its
   value into value (NULL with cap 0: only the length). Returns: the value's length, or -1
   after an error. Errors: CT_ERR_NULL_ARG; CT_ERR_DIST on timeout ("Wait timeout after
   300000 ms for key(s): [k]"), CT_ERR_IO / CT_ERR_DIST from the file or the connection.
   Mirrors: Store.get(key). */
CTORCH_DIST_API int64_t ct_store_get(ct_store *store, const char *key, void *value, size_t cap);
/* Adds amount to the integer counter key (a missing key counts as 0), atomically over every
   process of the store. Returns: the new value, or INT64_MIN after an error. Errors:
   CT_ERR_NULL_ARG; CT_ERR_VALUE when key holds something that is not an integer; as
   ct_store_set. Mirrors: Store.add(key, amount). */
CTORCH_DIST_API int64_t ct_store_add(ct_store *store, const char *key, int64_t amount);
/* Waits until every one of the n keys exists, at most timeout_ms (< 0: the store's timeout).
   Returns: CT_OK. Errors: as ct_store_get. Mirrors: Store.wait(keys, timeout). */
CTORCH_DIST_API ct_status ct_store_wait(ct_store *store, const char *const *keys, int n,
                                        int64_t timeout_ms);
/* Sets the timeout of get and wait (> 0). Mirrors: Store.set_timeout(timeout). */
CTORCH_DIST_API ct_status ct_store_set_timeout(ct_store *store, int64_t timeout_ms);
/* Closes the store (a TCP master stops serving); NULL is a no-op. */
CTORCH_DIST_API void ct_store_free(ct_store *store);

/* Initializes the default process group from the environment torchrun sets (the env://
   method): RANK, WORLD_SIZE and MASTER_ADDR, MASTER_PORT must be set; the ranks meet in a TCP
   store at MASTER_ADDR:MASTER_PORT (rank 0 serves it), then ct_dist_init_process_group(backend)
   runs with RANK and WORLD_SIZE (checked against MPI's: processes still start under mpirun,
   which carries the collectives); LOCAL_RANK picks NCCL's device. Returns: CT_OK. Errors:
   CT_ERR_VALUE "Error initializing torch.distributed using env:// rendezvous: environment
   variable RANK expected, but not set" (and the others); as ct_tcp_store_new and
   ct_dist_init_process_group. Mirrors: torch.distributed.init_process_group(backend,
   init_method="env://", timeout). */
CTORCH_DIST_API ct_status ct_dist_init_env(const char *backend, int64_t timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* CTORCH_DIST_H */

#if defined(CTORCH_DIST_IMPLEMENTATION) && !defined(CTORCH_DIST_IMPLEMENTATION_INCLUDED)
#define CTORCH_DIST_IMPLEMENTATION_INCLUDED

// >>part dist/internal.h
/* dist/internal.h - private declarations shared by the parts of ctorch_dist.h. */

/* C++ builds: MPI's C API only (Open MPI's and MPICH's deprecated C++ bindings do not compile
   warning-free) */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CTORCH_DIST_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CT__DIST_UNUSED __attribute__((unused))
#else
#define CT__DIST_UNUSED
#endif
#ifdef CTORCH_STATIC
#define CT__DIST_INTERNAL static CT__DIST_UNUSED
#else
#define CT__DIST_INTERNAL
#endif

struct ct_process_group {
    ct_dist_backend backend;
    MPI_Comm comm;       /* MPI_COMM_NULL: this process is not a member */
    int rank, size;      /* in the group; -1, -1 for a non-member */
    int *global_ranks;   /* group rank -> global rank (size entries) */
    int64_t timeout_ms;
    bool aborted;        /* an operation failed or timed out: later calls fail at once */
    uint64_t seq;        /* operations started, for messages (PyTorch's SeqNum) */
    struct ct_process_group *next;
#ifdef CTORCH_DIST_NCCL
    ncclComm_t nccl;
    cudaStream_t stream;
    void *scratch; /* one float32 on the device: the barrier's all_reduce */
#endif
};

/* An operation in flight: the engine works on buf (and reads send); once complete, out[k]
   receives buf's elements [off[k], off[k] + numel(out[k])) (cast to its dtype), after
   dividing buf by avg_div when it is > 0, then then_dst is copied from then_src (a comm
   hook's decompression). The work owns one reference to each tensor. */
struct ct_work {
    ct_process_group *group;
    const char *op;   /* the public function, for messages */
    const char *kind; /* PyTorch's OpType: "ALLREDUCE" */
    MPI_Request req;
#ifdef CTORCH_DIST_NCCL
    cudaEvent_t event; /* NCCL: recorded after the operation on the group's stream */
#endif
    double start_s;
    uint64_t seq;
    int64_t numel_in, numel_out;
    ct_tensor *buf, *send;
    ct_tensor **out;
    int64_t *off;
    int n_out;
    double avg_div;
    int *counts, *displs; /* v-collectives' arguments, alive until completion */
    int source;           /* irecv: the sender's global rank */
    ct_tensor *then_src, *then_dst; /* after the write-back: then_dst <- then_src (retained) */
    bool done, timed_out;
    ct_status result;
    char message[512]; /* the failure's message (as ct_error gives it) */
};

/* The default group, or group; records CT_ERR_STATE naming op before init. */
CT__DIST_INTERNAL ct_process_group *ct__dist_group(ct_process_group *group, const char *op);
/* Records a formatted error "op: ..." (ct_error_set); returns code. */
CT__DIST_INTERNAL ct_status ct__dist_fail(ct_status code, const char *op, const char *fmt, ...);
/* A new work on group for op (kind is PyTorch's OpType), or NULL after CT_ERR_OOM. */
CT__DIST_INTERNAL ct_work *ct__dist_work_new(ct_process_group *g, const char *op,
                                             const char *kind);
/* Checks an MPI return code: CT_OK, or CT_ERR_DIST with MPI's text (the group aborted). */
CT__DIST_INTERNAL ct_status ct__dist_check(ct_process_group *g, int rc, const char *op);
/* Hands w to the caller (*work) or waits for it and frees it; frees w on a failed start
   (status != CT_OK). Returns the operation's status. */
CT__DIST_INTERNAL ct_status ct__dist_finish(ct_work *w, ct_status status, ct_work **work);
/* One reference to a contiguous tensor with t's values in dtype (t itself when it is already
   contiguous in dtype and the caller need not copy); NULL after an error. */
CT__DIST_INTERNAL ct_tensor *ct__dist_stage(const ct_tensor *t, ct_dtype dtype, bool copy);
/* Adds t (retained) to w's write-back list at element offset off of w->buf. */
CT__DIST_INTERNAL ct_status ct__dist_add_out(ct_work *w, ct_tensor *t, int64_t off);

// >>part dist/group.c
/* dist/group.c - the default process group, new groups, errors, and works (wait, timeout). */

#include <stdarg.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sched.h>
#define CT__DIST_YIELD() sched_yield()
#else
#define CT__DIST_YIELD() ((void)0)
#endif

/* Requests abandoned by a timeout, with what they write into: freed once they complete. */
typedef struct ct__dist_orphan {
    MPI_Request req;
    ct_work *work;     /* a timed-out work (owns its buffers), or NULL */
    MPI_Comm *newcomm; /* a timed-out MPI_Comm_idup's result, or NULL */
    struct ct__dist_orphan *next;
} ct__dist_orphan;

static struct {
    ct_process_group *world;  /* the default group; NULL before init */
    ct_process_group *groups; /* every group, the default one included */
    bool mpi_owned;           /* MPI initialized by ctorch: finalized at exit */
    ct__dist_orphan *orphans;
} ct__dist_state;

#define CT__DIST_DEFAULT_TIMEOUT_MS INT64_C(1800000)
#define CT__DIST_NCCL_TIMEOUT_MS INT64_C(600000)
#define CT__DIST_NOT_INIT                                                                     \
    "Default process group has not been initialized, please make sure to call "              \
    "init_process_group."

ct_status ct__dist_fail(ct_status code, const char *op, const char *fmt, ...)
{
    char msg[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ct_error_set(code, op, msg);
}

ct_process_group *ct__dist_group(ct_process_group *group, const char *op)
{
    if (!ct__dist_state.world) {
        ct__dist_fail(CT_ERR_STATE, op, "%s", CT__DIST_NOT_INIT);
        return NULL;
    }
    return group ? group : ct__dist_state.world;
}

ct_status ct__dist_check(ct_process_group *g, int rc, const char *op)
{
    if (rc == MPI_SUCCESS) {
        return CT_OK;
    }
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) {
        snprintf(text, sizeof text, "error code %d", rc);
    }
    if (g) {
        g->aborted = true;
    }
    return ct__dist_fail(CT_ERR_DIST, op, "MPI error: %s", text);
}

/* ---- process groups ------------------------------------------------------------------- */

ct_dist_init_opts ct_dist_init_defaults(void)
{
    ct_dist_init_opts o;
    o.world_size = -1;
    o.rank = -1;
    o.timeout_ms = 0;
    return o;
}

bool ct_dist_is_available(void) { return true; }

bool ct_dist_is_nccl_available(void)
{
#ifdef CTORCH_DIST_NCCL
    return true;
#else
    return false;
#endif
}

bool ct_dist_is_initialized(void) { return ct__dist_state.world != NULL; }

/* Tests each orphaned request once; frees what completed. True when none is left. */
static bool ct__dist_reap(void)
{
    ct__dist_orphan **p = &ct__dist_state.orphans;
    while (*p) {
        ct__dist_orphan *o = *p;
        int flag = 0;
        if (MPI_Test(&o->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag) {
            if (o->newcomm && *o->newcomm != MPI_COMM_NULL) {
                MPI_Comm_free(o->newcomm);
            }
            free(o->newcomm);
            if (o->work) {
                o->work->done = true;
                ct_work_free(o->work);
            }
            *p = o->next;
            free(o);
        } else {
            p = &o->next;
        }
    }
    return ct__dist_state.orphans == NULL;
}

/* Keeps a timed-out request (and what it writes into) until it completes. */
static void ct__dist_orphan_add(MPI_Request req, ct_work *work, MPI_Comm *newcomm)
{
    ct__dist_orphan *o = (ct__dist_orphan *)malloc(sizeof *o);
    if (!o) {
        return; /* leaks what the request writes into, never frees it under MPI */
    }
    o->req = req;
    o->work = work;
    o->newcomm = newcomm;
    o->next = ct__dist_state.orphans;
    ct__dist_state.orphans = o;
}

/* At exit: MPI_Finalize, unless a timed-out request is still pending (a rank died), when
   finalizing would hang. */
static void ct__dist_atexit(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && ct__dist_reap()) {
        MPI_Finalize();
    }
}

static ct_status ct__dist_mpi_init(const char *op)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized) {
        return ct__dist_fail(CT_ERR_STATE, op, "MPI has been finalized");
    }
    if (!inited) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
            return ct__dist_fail(CT_ERR_DIST, op, "MPI_Init_thread failed");
        }
        ct__dist_state.mpi_owned = true;
        atexit(ct__dist_atexit);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return CT_OK;
}

/* Polls req until it completes or timeout_ms passes; on timeout the request becomes an
   orphan (with newcomm) and CT_ERR_DIST is recorded with what. */
static ct_status ct__dist_poll_comm(MPI_Request req, MPI_Comm *newcomm, int64_t timeout_ms,
                                    const char *op, const char *what)
{
    double start = MPI_Wtime();
    for (;;) {
        int flag = 0;
        int rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            return ct__dist_check(NULL, rc, op);
        }
        if (flag) {
            return CT_OK;
        }
        double ms = (MPI_Wtime() - start) * 1e3;
        if (ms > (double)timeout_ms) {
            ct__dist_orphan_add(req, NULL, newcomm);
            return ct__dist_fail(CT_ERR_DIST, op, "timed out after %.0f ms (timeout %lld ms) %s",
                                 ms, (long long)timeout_ms, what);
        }
        CT__DIST_YIELD();
    }
}

/* A group over comm (MPI_COMM_NULL: not a member) for the given global ranks. */
static ct_process_group *ct__dist_group_new(ct_dist_backend backend, MPI_Comm comm,
                                            const int *global_ranks, int n, int64_t timeout_ms,
                                            const char *op)
{
    ct_process_group *g = (ct_process_group *)calloc(1, sizeof *g);
    int *ranks = (int *)malloc(sizeof(int) * (size_t)n);
    if (!g || !ranks) {
        free(g);
        free(ranks);
        ct__dist_fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    memcpy(ranks, global_ranks, sizeof(int) * (size_t)n);
    g->backend = backend;
    g->comm = comm;
    g->rank = -1;
    g->size = -1;
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(comm, &g->rank);
        MPI_Comm_size(comm, &g->size);
    }
    g->global_ranks = ranks;
    g->timeout_ms = timeout_ms;
    g->next = ct__dist_state.groups;
    ct__dist_state.groups = g;
    return g;
}

static void ct__dist_group_free(ct_process_group *g)
{
#ifdef CTORCH_DIST_NCCL
    if (g->nccl) {
        ncclCommDestroy(g->nccl);
    }
    if (g->stream) {
        cudaStreamDestroy(g->stream);
    }
    cudaFree(g->scratch);
#endif
    if (g->comm != MPI_COMM_NULL) {
        MPI_Comm_free(&g->comm);
    }
    free(g->global_ranks);
    free(g);
}

/* Parses the environment variable name as a rank or size; -1 when unset. */
static int ct__dist_env_int(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : -1;
}

/* Checks that the expected rank or size (from opts, else from the environment variable env)
   agrees with MPI's value. */
static ct_status ct__dist_check_expected(int expected, const char *env, int actual,
                                         const char *what, const char *op)
{
    if (expected < 0) {
        expected = ct__dist_env_int(env);
    }
    if (expected >= 0 && expected != actual) {
        return ct__dist_fail(CT_ERR_VALUE, op, "%s %d (given or from %s) differs from MPI's %d",
                             what, expected, env, actual);
    }
    return CT_OK;
}

/* Parses the backend name; CT_BACKEND_UNDEFINED after recording an error. */
static ct_dist_backend ct__dist_backend_parse(const char *name, const char *op)
{
    if (!name || strcmp(name, "mpi") == 0) {
        return CT_BACKEND_MPI;
    }
    if (strcmp(name, "nccl") == 0) {
        if (!ct_dist_is_nccl_available()) {
            ct__dist_fail(CT_ERR_UNSUPPORTED, op, "Distributed package doesn't have NCCL built "
                          "in (define CTORCH_DIST_NCCL and link -lnccl)");
            return CT_BACKEND_UNDEFINED;
        }
        return CT_BACKEND_NCCL;
    }
    if (strcmp(name, "gloo") == 0) {
        ct__dist_fail(CT_ERR_UNSUPPORTED, op, "Distributed package doesn't have Gloo built in "
                      "(ctorch's CPU engine is \"mpi\")");
        return CT_BACKEND_UNDEFINED;
    }
    ct__dist_fail(CT_ERR_VALUE, op, "Invalid backend: '%s' (expected \"mpi\" or \"nccl\")", name);
    return CT_BACKEND_UNDEFINED;
}

#ifdef CTORCH_DIST_NCCL
/* The NCCL communicator of g: rank 0's unique id broadcast over MPI; device LOCAL_RANK (else
   Open MPI's local rank, else 0). */
static ct_status ct__dist_nccl_init(ct_process_group *g, const char *op)
{
    int local = ct__dist_env_int("LOCAL_RANK");
    if (local < 0) {
        local = ct__dist_env_int("OMPI_COMM_WORLD_LOCAL_RANK");
    }
    if (cudaSetDevice(local < 0 ? 0 : local) != cudaSuccess) {
        return ct__dist_fail(CT_ERR_DIST, op, "cudaSetDevice(%d) failed", local < 0 ? 0 : local);
    }
    ncclUniqueId id;
    if (g->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) {
        return ct__dist_fail(CT_ERR_DIST, op, "ncclGetUniqueId failed");
    }
    ct_status st = ct__dist_check(g, MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, g->comm), op);
    if (st != CT_OK) {
        return st;
    }
    if (cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(&g->scratch, sizeof(float)) != cudaSuccess) {
        return ct__dist_fail(CT_ERR_DIST, op, "cudaStreamCreate or cudaMalloc failed");
    }
    ncclResult_t r = ncclCommInitRank(&g->nccl, g->size, id, g->rank);
    if (r != ncclSuccess) {
        g->nccl = NULL;
        return ct__dist_fail(CT_ERR_DIST, op, "NCCL error: %s", ncclGetErrorString(r));
    }
    return CT_OK;
}
#endif

ct_status ct_dist_init_process_group(const char *backend, const ct_dist_init_opts *opts)
{
    const char *op = "ct_dist_init_process_group";
    if (ct__dist_state.world) {
        return ct__dist_fail(CT_ERR_STATE, op, "trying to initialize the default process "
                             "group twice!");
    }
    ct_dist_backend be = ct__dist_backend_parse(backend, op);
    if (be == CT_BACKEND_UNDEFINED) {
        return ct_error_code();
    }
    ct_dist_init_opts o = opts ? *opts : ct_dist_init_defaults();
    if (o.timeout_ms <= 0) {
        o.timeout_ms = be == CT_BACKEND_NCCL ? CT__DIST_NCCL_TIMEOUT_MS
                                             : CT__DIST_DEFAULT_TIMEOUT_MS;
    }
    ct_status st = ct__dist_mpi_init(op);
    if (st != CT_OK) {
        return st;
    }
    ct__dist_reap();
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    st = ct__dist_check_expected(o.rank, "RANK", rank, "rank", op);
    if (st == CT_OK) {
        st = ct__dist_check_expected(o.world_size, "WORLD_SIZE", size, "world_size", op);
    }
    if (st != CT_OK) {
        return st;
    }
    /* The group's communicator; its completion is the join barrier. */
    MPI_Comm *comm = (MPI_Comm *)malloc(sizeof *comm);
    int *ranks = (int *)malloc(sizeof(int) * (size_t)size);
    if (!comm || !ranks) {
        free(comm);
        free(ranks);
        return ct__dist_fail(CT_ERR_OOM, op, "out of memory");
    }
    for (int k = 0; k < size; k++) {
        ranks[k] = k;
    }
    MPI_Request req;
    st = ct__dist_check(NULL, MPI_Comm_idup(MPI_COMM_WORLD, comm, &req), op);
    if (st == CT_OK) {
        char what[96];
        snprintf(what, sizeof what, "waiting for all %d ranks to join", size);
        st = ct__dist_poll_comm(req, comm, o.timeout_ms, op, what);
        if (st != CT_OK) {
            comm = NULL; /* the orphan owns it */
        }
    }
    if (st == CT_OK) {
        ct__dist_state.world = ct__dist_group_new(be, *comm, ranks, size, o.timeout_ms, op);
        st = ct__dist_state.world ? CT_OK : ct_error_code();
    }
#ifdef CTORCH_DIST_NCCL
    if (st == CT_OK && be == CT_BACKEND_NCCL) {
        st = ct__dist_nccl_init(ct__dist_state.world, op);
        if (st != CT_OK) {
            ct_dist_destroy_process_group(NULL);
        }
    }
#endif
    free(comm);
    free(ranks);
    return st;
}

int ct_dist_get_rank(const ct_process_group *group)
{
    const ct_process_group *g = ct__dist_group((ct_process_group *)group, "ct_dist_get_rank");
    return g ? g->rank : -1;
}

int ct_dist_get_world_size(const ct_process_group *group)
{
    const ct_process_group *g = ct__dist_group((ct_process_group *)group,
                                               "ct_dist_get_world_size");
    return g ? g->size : -1;
}

ct_dist_backend ct_dist_get_backend(const ct_process_group *group)
{
    const ct_process_group *g = ct__dist_group((ct_process_group *)group, "ct_dist_get_backend");
    return g ? g->backend : CT_BACKEND_UNDEFINED;
}

/* Checks new_group's ranks: each in [0, world) and none repeated. */
static ct_status ct__dist_check_ranks(const int *ranks, int n, int world, const char *op)
{
    if (n < 1) {
        return ct__dist_fail(CT_ERR_VALUE, op, "a group needs at least one rank, got %d", n);
    }
    for (int k = 0; k < n; k++) {
        if (ranks[k] < 0 || ranks[k] >= world) {
            return ct__dist_fail(CT_ERR_VALUE, op, "rank %d is out of range for world size %d",
                                 ranks[k], world);
        }
        for (int j = 0; j < k; j++) {
            if (ranks[j] == ranks[k]) {
                return ct__dist_fail(CT_ERR_VALUE, op, "rank %d appears twice", ranks[k]);
            }
        }
    }
    return CT_OK;
}

ct_process_group *ct_dist_new_group(const int *ranks, int n, int64_t timeout_ms)
{
    const char *op = "ct_dist_new_group";
    ct_process_group *w = ct__dist_group(NULL, op);
    if (!w) {
        return NULL;
    }
    int *all = NULL;
    if (!ranks) {
        all = (int *)malloc(sizeof(int) * (size_t)w->size);
        if (!all) {
            ct__dist_fail(CT_ERR_OOM, op, "out of memory");
            return NULL;
        }
        for (int k = 0; k < w->size; k++) {
            all[k] = k;
        }
        ranks = all;
        n = w->size;
    }
    ct_process_group *g = NULL;
    if (ct__dist_check_ranks(ranks, n, w->size, op) == CT_OK) {
        /* Members get color 0 and key = their position in ranks; the others no comm. */
        int color = MPI_UNDEFINED, key = 0;
        for (int k = 0; k < n; k++) {
            if (ranks[k] == w->rank) {
                color = 0;
                key = k;
            }
        }
        MPI_Comm comm = MPI_COMM_NULL;
        if (ct__dist_check(w, MPI_Comm_split(w->comm, color, key, &comm), op) == CT_OK) {
            g = ct__dist_group_new(w->backend, comm, ranks, n,
                                   timeout_ms > 0 ? timeout_ms : w->timeout_ms, op);
        }
    }
#ifdef CTORCH_DIST_NCCL
    if (g && g->backend == CT_BACKEND_NCCL && g->comm != MPI_COMM_NULL &&
        ct__dist_nccl_init(g, op) != CT_OK) {
        ct_dist_destroy_process_group(g);
        g = NULL;
    }
#endif
    free(all);
    return g;
}

ct_status ct_dist_destroy_process_group(ct_process_group *group)
{
    const char *op = "ct_dist_destroy_process_group";
    if (!ct__dist_group(group, op)) {
        return ct_error_code();
    }
    ct__dist_reap();
    ct_process_group **p = &ct__dist_state.groups;
    while (*p) {
        ct_process_group *g = *p;
        if (!group || g == group) {
            *p = g->next;
            ct__dist_group_free(g);
            if (group) {
                return CT_OK;
            }
        } else {
            p = &g->next;
        }
    }
    if (group) {
        return ct__dist_fail(CT_ERR_STATE, op, "the group was already destroyed");
    }
    ct__dist_state.world = NULL;
    return CT_OK;
}

/* ---- works ---------------------------------------------------------------------------- */

ct_work *ct__dist_work_new(ct_process_group *g, const char *op, const char *kind)
{
    ct_work *w = (ct_work *)calloc(1, sizeof *w);
    if (!w) {
        ct__dist_fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    w->group = g;
    w->op = op;
    w->kind = kind;
    w->req = MPI_REQUEST_NULL;
    w->start_s = MPI_Wtime();
    w->seq = ++g->seq;
    w->source = -1;
    return w;
}

ct_tensor *ct__dist_stage(const ct_tensor *t, ct_dtype dtype, bool copy)
{
    ct_tensor *r = NULL;
    ct_scope_begin();
    if (!copy && ct_tensor_dtype(t) == dtype && ct_is_contiguous(t)) {
        r = ct_retain((ct_tensor *)t); /* the work's reference; the engine writes into t */
    } else {
        ct_tensor *c = ct_contiguous(ct_to_dtype(t, dtype));
        if (c && c == t) {
            c = ct_clone(t);
        }
        r = c ? ct_retain(c) : NULL;
    }
    ct_scope_end();
    return r;
}

ct_status ct__dist_add_out(ct_work *w, ct_tensor *t, int64_t off)
{
    ct_tensor **out = (ct_tensor **)realloc(w->out, sizeof *out * (size_t)(w->n_out + 1));
    if (out) {
        w->out = out;
    }
    int64_t *offs = (int64_t *)realloc(w->off, sizeof *offs * (size_t)(w->n_out + 1));
    if (offs) {
        w->off = offs;
    }
    if (!out || !offs) {
        return ct__dist_fail(CT_ERR_OOM, w->op, "out of memory");
    }
    w->out[w->n_out] = ct_retain(t);
    w->off[w->n_out] = off;
    w->n_out++;
    return CT_OK;
}

/* Records the work's failure (kept for later waits). */
static ct_status ct__dist_work_fail(ct_work *w)
{
    w->done = true;
    w->result = ct_error_code() != CT_OK ? ct_error_code() : CT_ERR_DIST;
    snprintf(w->message, sizeof w->message, "%s", ct_error() ? ct_error() : "failed");
    return w->result;
}

/* After completion: AVG's division, then out[k] <- buf[off[k] ...]. */
static ct_status ct__dist_write_back(ct_work *w)
{
    ct_scope_begin();
    ct_tensor *src = w->buf;
    if (w->avg_div > 0) {
        ct_tensor *n = ct_scalar_tensor(w->avg_div, ct_tensor_dtype(src));
        src = ct_is_floating_point(src) ? ct_div_scalar(src, w->avg_div)
                                        : ct_div_mode(src, n, CT_ROUNDING_TRUNC);
        if (w->n_out == 0) {
            ct_copy_(w->buf, src);
        }
    }
    for (int k = 0; k < w->n_out; k++) {
        const ct_tensor *o = w->out[k];
        ct_tensor *part = ct_narrow(ct_flatten(src, 0, -1), 0, w->off[k], ct_numel(o));
        ct_copy_(w->out[k], ct_reshape(part, ct_sizes(o), ct_dim(o)));
    }
    if (w->then_dst) {
        ct_copy_(w->then_dst, w->then_src);
    }
    ct_scope_end();
    return ct_error_code();
}

/* The timeout's message, in the words of PyTorch's watchdog. */
static ct_status ct__dist_timeout(ct_work *w, double ms)
{
    ct_process_group *g = w->group;
    g->aborted = true;
#ifdef CTORCH_DIST_NCCL
    if (g->nccl) { /* stops the kernels that write into the work's buffers */
        ncclCommAbort(g->nccl);
        g->nccl = NULL;
    }
#endif
    return ct__dist_fail(CT_ERR_DIST, w->op, "[Rank %d] Watchdog caught collective operation "
                         "timeout: Work(SeqNum=%llu, OpType=%s, NumelIn=%lld, NumelOut=%lld, "
                         "Timeout(ms)=%lld) ran for %.0f milliseconds before timing out.",
                         g->global_ranks[g->rank], (unsigned long long)w->seq, w->kind,
                         (long long)w->numel_in, (long long)w->numel_out,
                         (long long)g->timeout_ms, ms);
}

/* Tests w once; with block, until it completes or times out. */
static ct_status ct__dist_progress(ct_work *w, bool block)
{
    while (!w->done) {
        int flag = 0;
        MPI_Status status;
#ifdef CTORCH_DIST_NCCL
        if (w->group->backend == CT_BACKEND_NCCL) {
            cudaError_t e = cudaEventQuery(w->event);
            ncclResult_t async = ncclSuccess;
            ncclCommGetAsyncError(w->group->nccl, &async);
            if (async != ncclSuccess || (e != cudaSuccess && e != cudaErrorNotReady)) {
                w->group->aborted = true;
                ct__dist_fail(CT_ERR_DIST, w->op, "NCCL error: %s",
                              async != ncclSuccess ? ncclGetErrorString(async)
                                                   : cudaGetErrorString(e));
                return ct__dist_work_fail(w);
            }
            flag = e == cudaSuccess;
        } else
#endif
        if (ct__dist_check(w->group, MPI_Test(&w->req, &flag, &status), w->op) != CT_OK) {
            return ct__dist_work_fail(w);
        }
        if (flag) {
            w->done = true;
            if (w->source == -2) {
                w->source = w->group->global_ranks[status.MPI_SOURCE];
            }
            if (ct__dist_write_back(w) != CT_OK) {
                return ct__dist_work_fail(w);
            }
            break;
        }
        double ms = (MPI_Wtime() - w->start_s) * 1e3;
        if (ms > (double)w->group->timeout_ms) {
            w->timed_out = true;
            ct__dist_timeout(w, ms);
            return ct__dist_work_fail(w);
        }
        if (!block) {
            return CT_OK;
        }
        CT__DIST_YIELD();
    }
    return w->result;
}

ct_status ct__dist_finish(ct_work *w, ct_status status, ct_work **work)
{
    if (!w) {
        return ct_error_code() != CT_OK ? ct_error_code() : CT_ERR_OOM;
    }
    if (status != CT_OK) {
        w->done = true; /* nothing in flight */
        ct__dist_work_fail(w);
        ct_work_free(w);
        return status;
    }
    if (work) {
        *work = w;
        return CT_OK;
    }
    status = ct__dist_progress(w, true);
    ct_work_free(w);
    return status;
}

ct_status ct_work_wait(ct_work *work)
{
    if (!work) {
        return ct_error_set(CT_ERR_NULL_ARG, "ct_work_wait", "work is NULL");
    }
    ct_status st = ct__dist_progress(work, true);
    if (st != CT_OK && ct_error_code() == CT_OK) { /* failed earlier: record it again */
        const char *m = work->message;
        size_t n = strlen(work->op);
        ct_error_set(work->result, work->op,
                     strncmp(m, work->op, n) == 0 && m[n] == ':' ? m + n + 2 : m);
    }
    return st;
}

bool ct_work_is_completed(ct_work *work)
{
    if (!work) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_work_is_completed", "work is NULL");
        return false;
    }
    ct__dist_progress(work, false);
    return work->done;
}

int ct_work_source(const ct_work *work)
{
    return work && work->done && work->result == CT_OK ? work->source : -1;
}

void ct_work_free(ct_work *work)
{
    if (!work) {
        return;
    }
    if (!work->done) {
        ct__dist_progress(work, true);
    }
    if (work->timed_out && work->req != MPI_REQUEST_NULL) {
        /* timed out: MPI may still write into the buffers; free them once it completes */
        MPI_Request req = work->req;
        work->req = MPI_REQUEST_NULL;
        ct__dist_orphan_add(req, work, NULL);
        return;
    }
#ifdef CTORCH_DIST_NCCL
    if (work->event) {
        cudaEventDestroy(work->event);
    }
#endif
    ct_release(work->buf);
    ct_release(work->send);
    ct_release(work->then_src);
    ct_release(work->then_dst);
    for (int k = 0; k < work->n_out; k++) {
        ct_release(work->out[k]);
    }
    free(work->out);
    free(work->off);
    free(work->counts);
    free(work->displs);
    free(work);
}

#undef CT__DIST_YIELD
#undef CT__DIST_DEFAULT_TIMEOUT_MS
#undef CT__DIST_NCCL_TIMEOUT_MS
#undef CT__DIST_NOT_INIT

// >>part dist/collectives.c
/* dist/collectives.c - the collectives and point-to-point ops on MPI (CPU) and NCCL (CUDA).
 *
 * Each op checks its group and tensors, stages the tensors into contiguous buffers of the
 * engine's dtype (ct__dist_stage; half types are reduced in float32 on MPI), starts the
 * engine's nonblocking call and hands the work to ct__dist_finish (wait now, or async).
 */

#include <limits.h>

/* The group to run on: *g = NULL (and CT_OK) when this process is not a member. Checks that
   the group is usable and each tensor is non-NULL, on the backend's device and int-sized. */
static ct_status ct__dist_enter(ct_process_group *group, const ct_tensor *const *ts, int n,
                                const char *op, ct_process_group **g)
{
    *g = ct__dist_group(group, op);
    if (!*g) {
        return ct_error_code();
    }
    for (int k = 0; k < n; k++) {
        if (!ts[k]) {
            *g = NULL;
            return ct_error_set(CT_ERR_NULL_ARG, op, "a tensor argument is NULL");
        }
        ct_device_type want = (*g)->backend == CT_BACKEND_NCCL ? CT_CUDA : CT_CPU;
        if (ct_tensor_device(ts[k]).type != want) {
            *g = NULL;
            return ct__dist_fail(CT_ERR_DEVICE, op, "Tensors must be %s for the %s backend",
                                 want == CT_CUDA ? "CUDA" : "CPU",
                                 want == CT_CUDA ? "nccl" : "mpi");
        }
        if (ct_numel(ts[k]) > INT_MAX) {
            *g = NULL;
            return ct__dist_fail(CT_ERR_VALUE, op, "a tensor of %lld elements exceeds the "
                                 "engine's count limit (%d)", (long long)ct_numel(ts[k]), INT_MAX);
        }
    }
    if ((*g)->comm == MPI_COMM_NULL) {
        *g = NULL; /* not a member: nothing to do, as PyTorch */
        return CT_OK;
    }
    if ((*g)->aborted) {
        *g = NULL;
        return ct__dist_fail(CT_ERR_DIST, op, "the process group was aborted by an earlier "
                             "failure or timeout");
    }
    return CT_OK;
}

/* ct__dist_enter for a collective on one tensor: returns the group, or NULL with the status
   (CT_OK for a non-member) in *st. */
static ct_process_group *ct__dist_enter1(ct_process_group *group, const ct_tensor *tensor,
                                         const char *op, ct_status *st)
{
    ct_process_group *g;
    *st = ct__dist_enter(group, &tensor, 1, op, &g);
    return g;
}

/* The group rank of global rank r, or -1 after recording CT_ERR_VALUE. */
static int ct__dist_group_rank(const ct_process_group *g, int r, const char *what, const char *op)
{
    for (int k = 0; k < g->size; k++) {
        if (g->global_ranks[k] == r) {
            return k;
        }
    }
    ct__dist_fail(CT_ERR_VALUE, op, "%s: global rank %d is not part of the group", what, r);
    return -1;
}

/* The dtype the engine carries for dt; reduce: for a reduction (MPI: half types in float32). */
static ct_dtype ct__dist_wire(const ct_process_group *g, ct_dtype dt, bool reduce)
{
    bool half = dt == CT_FLOAT16 || dt == CT_BFLOAT16;
    return reduce && half && g->backend == CT_BACKEND_MPI ? CT_FLOAT32 : dt;
}

static MPI_Datatype ct__dist_mpi_type(ct_dtype dt)
{
    switch (dt) {
    case CT_INT8: return MPI_INT8_T;
    case CT_INT16: return MPI_INT16_T;
    case CT_INT32: return MPI_INT32_T;
    case CT_INT64: return MPI_INT64_T;
    case CT_FLOAT32: return MPI_FLOAT;
    case CT_FLOAT64: return MPI_DOUBLE;
    case CT_FLOAT16:
    case CT_BFLOAT16: return MPI_UINT16_T; /* the 16-bit payload */
    default: return MPI_UINT8_T;           /* bool and uint8 */
    }
}

static const char *const ct__dist_op_names[CT_REDUCE_OP_COUNT] = {
    "SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"};

/* Checks op against dt (PyTorch's rules) and maps bool's SUM/PRODUCT to MAX/MIN. Returns the
   op to run (AVG runs as SUM, divided afterwards) or CT_REDUCE_OP_COUNT after an error. */
static ct_reduce_op ct__dist_reduce_check(ct_reduce_op op, ct_dtype dt, const char *name)
{
    if ((int)op < 0 || op >= CT_REDUCE_OP_COUNT) {
        ct__dist_fail(CT_ERR_VALUE, name, "invalid ReduceOp %d", (int)op);
        return CT_REDUCE_OP_COUNT;
    }
    bool bitwise = op == CT_REDUCE_BAND || op == CT_REDUCE_BOR || op == CT_REDUCE_BXOR;
    bool floating = dt == CT_FLOAT16 || dt == CT_BFLOAT16 || dt == CT_FLOAT32 ||
                    dt == CT_FLOAT64;
    if (bitwise && floating) {
        ct__dist_fail(CT_ERR_DTYPE, name, "Cannot use ReduceOp.%s with non-integral dtype",
                      ct__dist_op_names[op]);
        return CT_REDUCE_OP_COUNT;
    }
    if (dt == CT_BOOL) {
        if (op == CT_REDUCE_AVG) {
            ct__dist_fail(CT_ERR_DTYPE, name, "Cannot use ReduceOp.AVG with boolean inputs");
            return CT_REDUCE_OP_COUNT;
        }
        op = op == CT_REDUCE_SUM ? CT_REDUCE_MAX : op == CT_REDUCE_PRODUCT ? CT_REDUCE_MIN : op;
    }
    return op;
}

static MPI_Op ct__dist_mpi_op(ct_reduce_op op)
{
    switch (op) {
    case CT_REDUCE_PRODUCT: return MPI_PROD;
    case CT_REDUCE_MIN: return MPI_MIN;
    case CT_REDUCE_MAX: return MPI_MAX;
    case CT_REDUCE_BAND: return MPI_BAND;
    case CT_REDUCE_BOR: return MPI_BOR;
    case CT_REDUCE_BXOR: return MPI_BXOR;
    default: return MPI_SUM; /* SUM, AVG */
    }
}

#ifdef CTORCH_DIST_NCCL
static ncclDataType_t ct__dist_nccl_type(ct_dtype dt)
{
    switch (dt) {
    case CT_INT8: return ncclInt8;
    case CT_INT32: return ncclInt32;
    case CT_INT64: return ncclInt64;
    case CT_FLOAT16: return ncclFloat16;
    case CT_BFLOAT16: return ncclBfloat16;
    case CT_FLOAT32: return ncclFloat32;
    case CT_FLOAT64: return ncclFloat64;
    default: return ncclUint8; /* bool, uint8; int16 is rejected before */
    }
}

static ncclRedOp_t ct__dist_nccl_op(ct_reduce_op op)
{
    switch (op) {
    case CT_REDUCE_AVG: return ncclAvg;
    case CT_REDUCE_PRODUCT: return ncclProd;
    case CT_REDUCE_MIN: return ncclMin;
    case CT_REDUCE_MAX: return ncclMax;
    default: return ncclSum;
    }
}

/* Checks what NCCL cannot carry: int16, bitwise reductions. */
static ct_status ct__dist_nccl_check(ct_dtype dt, ct_reduce_op op, const char *name)
{
    if (dt == CT_INT16) {
        return ct__dist_fail(CT_ERR_DTYPE, name, "NCCL has no int16 type");
    }
    if (op == CT_REDUCE_BAND || op == CT_REDUCE_BOR || op == CT_REDUCE_BXOR) {
        return ct__dist_fail(CT_ERR_DTYPE, name, "Cannot use ReduceOp.%s with NCCL",
                             ct__dist_op_names[op]);
    }
    return CT_OK;
}

/* Records the work's completion event after an NCCL call's result r. */
static ct_status ct__dist_nccl_done(ct_work *w, ncclResult_t r)
{
    if (r != ncclSuccess) {
        w->group->aborted = true;
        return ct__dist_fail(CT_ERR_DIST, w->op, "NCCL error: %s", ncclGetErrorString(r));
    }
    if (cudaEventCreateWithFlags(&w->event, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventRecord(w->event, w->group->stream) != cudaSuccess) {
        return ct__dist_fail(CT_ERR_DIST, w->op, "cudaEventRecord failed");
    }
    return CT_OK;
}
#endif

/* A new contiguous 1-D tensor of n elements of dtype, owned by the caller (one reference). */
static ct_tensor *ct__dist_flat(int64_t n, ct_dtype dtype, const ct_tensor *like)
{
    ct_scope_begin();
    ct_tensor *t = ct_new_empty(like, &n, 1, dtype);
    ct_tensor *r = t ? ct_retain(t) : NULL;
    ct_scope_end();
    return r;
}

/* Element counts and offsets of a tensor list of n = the group's size, in w->counts and
   w->displs; checks that the list has one dtype, dt, and that entry own has own_numel
   elements (own < 0: none). Returns the total or -1 after an error. */
static int64_t ct__dist_layout(ct_work *w, const ct_tensor *const *list, int n, ct_dtype dt,
                               int own, int64_t own_numel)
{
    const ct_process_group *g = w->group;
    if (!list || n != g->size) {
        ct__dist_fail(CT_ERR_VALUE, w->op, "the tensor list must have %d tensors (the group's "
                      "size), got %d", g->size, list ? n : 0);
        return -1;
    }
    w->counts = (int *)malloc(sizeof(int) * (size_t)n);
    w->displs = (int *)malloc(sizeof(int) * (size_t)n);
    if (!w->counts || !w->displs) {
        ct__dist_fail(CT_ERR_OOM, w->op, "out of memory");
        return -1;
    }
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        if (!list[k]) {
            ct_error_set(CT_ERR_NULL_ARG, w->op, "a tensor of the list is NULL");
            return -1;
        }
        if (ct_tensor_dtype(list[k]) != dt) {
            ct__dist_fail(CT_ERR_DTYPE, w->op, "the tensor list's dtypes must match the input's");
            return -1;
        }
        if (k == own && ct_numel(list[k]) != own_numel) {
            ct__dist_fail(CT_ERR_VALUE, w->op, "tensor %d of the list has %lld elements, this "
                          "rank's tensor %lld", k, (long long)ct_numel(list[k]),
                          (long long)own_numel);
            return -1;
        }
        w->counts[k] = (int)ct_numel(list[k]);
        w->displs[k] = (int)total;
        total += ct_numel(list[k]);
        if (total > INT_MAX) {
            ct__dist_fail(CT_ERR_VALUE, w->op, "the list's %lld elements exceed the engine's "
                          "count limit (%d)", (long long)total, INT_MAX);
            return -1;
        }
    }
    return total;
}

/* w->buf: a stage of t for the engine to write into (copy: with t's values); t is written back
   from it when it is not t itself. */
static ct_status ct__dist_inout(ct_work *w, ct_tensor *t, ct_dtype wire, bool copy)
{
    w->buf = ct__dist_stage(t, wire, copy);
    if (!w->buf) {
        return ct_error_code();
    }
    return w->buf == t ? CT_OK : ct__dist_add_out(w, t, 0);
}

/* The engine's count of t (checked to fit an int by ct__dist_enter). */
static int ct__dist_n(const ct_tensor *t) { return (int)ct_numel(t); }

ct_status ct_dist_all_reduce(ct_tensor *tensor, ct_reduce_op op, ct_process_group *group,
                             ct_work **work)
{
    const char *name = "ct_dist_all_reduce";
    ct_status st;
    ct_process_group *g = ct__dist_enter1(group, tensor, name, &st);
    if (!g) {
        return st;
    }
    ct_dtype dt = ct_tensor_dtype(tensor), wire = ct__dist_wire(g, dt, true);
    ct_reduce_op run = ct__dist_reduce_check(op, dt, name);
    if (run == CT_REDUCE_OP_COUNT) {
        return ct_error_code();
    }
    ct_work *w = ct__dist_work_new(g, name, "ALLREDUCE");
    if (!w) {
        return ct_error_code();
    }
    w->numel_in = w->numel_out = ct_numel(tensor);
    st = ct__dist_inout(w, tensor, wire, false);
#ifdef CTORCH_DIST_NCCL
    if (st == CT_OK && g->backend == CT_BACKEND_NCCL) {
        st = ct__dist_nccl_check(dt, run, name);
        if (st == CT_OK) {
            void *p = ct_data_ptr(w->buf);
            st = ct__dist_nccl_done(w, ncclAllReduce(p, p, (size_t)ct_numel(tensor),
                                                     ct__dist_nccl_type(wire),
                                                     ct__dist_nccl_op(run), g->nccl, g->stream));
        }
        return ct__dist_finish(w, st, work);
    }
#endif
    if (st == CT_OK) {
        w->avg_div = run == CT_REDUCE_AVG ? (double)g->size : 0.0;
        st = ct__dist_check(g, MPI_Iallreduce(MPI_IN_PLACE, ct_data_ptr(w->buf),
                                              ct__dist_n(tensor), ct__dist_mpi_type(wire),
                                              ct__dist_mpi_op(run), g->comm, &w->req), name);
    }
    return ct__dist_finish(w, st, work);
}

ct_status ct_dist_broadcast(ct_tensor *tensor, int src, ct_process_group *group, ct_work **work)
{
    const char *name = "ct_dist_broadcast";
    ct_status st;
    ct_process_group *g = ct__dist_enter1(group, tensor, name, &st);
    if (!g) {
        return st;
    }
    int root = ct__dist_group_rank(g, src, "src", name);
    ct_work *w = root < 0 ? NULL : ct__dist_work_new(g, name, "BROADCAST");
    if (!w) {
        return ct_error_code();
    }
    ct_dtype dt = ct_tensor_dtype(tensor);
    w->numel_in = w->numel_out = ct_numel(tensor);
    st = ct__dist_inout(w, tensor, dt, false);
#ifdef CTORCH_DIST_NCCL
    if (st == CT_OK && g->backend == CT_BACKEND_NCCL) {
        st = ct__dist_nccl_check(dt, CT_REDUCE_SUM, name);
        if (st == CT_OK) {
            void *p = ct_data_ptr(w->buf);
            st = ct__dist_nccl_done(w, ncclBroadcast(p, p, (size_t)ct_numel(tensor),
                                                     ct__dist_nccl_type(dt), root, g->nccl,
                                                     g->stream));
        }
        return ct__dist_finish(w, st, work);
    }
#endif
    if (st == CT_OK) {
        st = ct__dist_check(g, MPI_Ibcast(ct_data_ptr(w->buf), ct__dist_n(tensor),
                                          ct__dist_mpi_type(dt), root, g->comm, &w->req), name);
    }
    return ct__dist_finish(w, st, work);
}

ct_status ct_dist_reduce(ct_tensor *tensor, int dst, ct_reduce_op op, ct_process_group *group,
                         ct_work **work)
{
    const char *name = "ct_dist_reduce";
    ct_status st;
    ct_process_group *g = ct__dist_enter1(group, tensor, name, &st);
    if (!g) {
        return st;
    }
    ct_dtype dt = ct_tensor_dtype(tensor), wire = ct__dist_wire(g, dt, true);
    ct_reduce_op run = ct__dist_reduce_check(op, dt, name);
    int root = run == CT_REDUCE_OP_COUNT ? -1 : ct__dist_group_rank(g, dst, "dst", name);
    ct_work *w = root < 0 ? NULL : ct__dist_work_new(g, name, "REDUCE");
    if (!w) {
        return ct_error_code();
    }
    bool is_root = g->rank == root;
    w->numel_in = w->numel_out = ct_numel(tensor);
    if (is_root) {
        st = ct__dist_inout(w, tensor, wire, false);
        w->avg_div = run == CT_REDUCE_AVG ? (double)g->size : 0.0;
    } else {
        w->buf = ct__dist_stage(tensor, wire, g->backend == CT_BACKEND_NCCL);
        st = w->buf ? CT_OK : ct_error_code();
    }
#ifdef CTORCH_DIST_NCCL
    if (st == CT_OK && g->backend == CT_BACKEND_NCCL) {
        st = ct__dist_nccl_check(dt, run, name);
        if (st == CT_OK) {
            void *p = ct_data_ptr(w->buf);
            w->avg_div = 0.0;
            st = ct__dist_nccl_done(w, ncclReduce(p, p, (size_t)ct_numel(tensor),
                                                  ct__dist_nccl_type(wire), ct__dist_nccl_op(run),
                                                  root, g->nccl, g->stream));
        }
        return ct__dist_finish(w, st, work);
    }
#endif
    if (st == CT_OK) {
        void *p = ct_data_ptr(w->buf);
        st = ct__dist_check(g, MPI_Ireduce(is_root ? MPI_IN_PLACE : p, is_root ? p : NULL,
                                           ct__dist_n(tensor), ct__dist_mpi_type(wire),
                                           ct__dist_mpi_op(run), root, g->comm, &w->req),
                            name);
    }
    return ct__dist_finish(w, st, work);
}

ct_status ct_dist_all_gather(ct_tensor *const *tensor_list, int n, const ct_tensor *tensor,
                             ct_process_group *group, ct_work **work)
{
    const char *name = "ct_dist_all_gather";
    ct_status st;
    ct_process_group *g = ct__dist_enter1(group, tensor, name, &st);
    if (!g) {
        return st;
    }
    if (g->backend == CT_BACKEND_NCCL) {
        return ct__dist_fail(CT_ERR_UNSUPPORTED, name, "the tensor-list form is MPI-only: use "
                             "ct_dist_all_gather_into_tensor with NCCL");
    }
    ct_work *w = ct__dist_work_new(g, name, "ALLGATHER");
    if (!w) {
        return ct_error_code();
    }
    ct_dtype dt = ct_tensor_dtype(tensor);
    int64_t total = ct__dist_layout(w, (const ct_tensor *const *)tensor_list, n, dt, g->rank,
                                    ct_numel(tensor));
    w->numel_in = ct_numel(tensor);
    w->numel_out = total;
    if (total < 0) {
        return ct__dist_finish(w, ct_error_code(), work);
    }
    w->send = ct__dist_stage(tensor, dt, false);
    w->buf = ct__dist_flat(total, dt, tensor);
    for (int k = 0; k < n && ct_error_code() == CT_OK; k++) {
        ct__dist_add_out(w, tensor_list[k], w->displs[k]);
    }
    st = ct_error_code();
    if (st == CT_OK) {
        MPI_Datatype t = ct__dist_mpi_type(dt);
        st = ct__dist_check(g, MPI_Iallgatherv(ct_data_ptr(w->send), ct__dist_n(tensor), t,
                                               ct_data_ptr(w->buf), w->counts, w->displs, t,
                                               g->comm, &w->req), name);
    }
    return ct__dist_finish(w, st, work);
}

/* Checks that big has world_size times small's elements (all_gather_into_tensor,
   reduce_scatter_tensor) and one dtype. */
static ct_status ct__dist_check_chunks(const ct_process_group *g, const ct_tensor *big,
                                       const ct_tensor *small, const char *name)
{
    if (ct_tensor_dtype(big) != ct_tensor_dtype(small)) {
        return ct__dist_fail(CT_ERR_DTYPE, name, "output and input must have the same dtype");
    }
    if (ct_numel(big) != ct_numel(small) * g->size) {
        return ct__dist_fail(CT_ERR_VALUE, name, "output tensor size must be equal to "
                             "world_size times input tensor size (%lld != %d * %lld)",
                             (long long)ct_numel(big), g->size, (long long)ct_numel(small));
    }
    return CT_OK;
}

ct_status ct_dist_all_gather_into_tensor(ct_tensor *output, const ct_tensor *input,
                                         ct_process_group *group, ct_work **work)
{
    const char *name = "ct_dist_all_gather_into_tensor";
    ct_process_group *g;
    const ct_tensor *ts[2] = {output, input};
    ct_status st = ct__dist_enter(group, ts, 2, name, &g);
    if (!g) {
        return st;
    }
    if (ct__dist_check_chunks(g, output, input, name) != CT_OK) {
        return ct_error_code();
    }
    ct_work *w = ct__dist_work_new(g, name, "_ALLGATHER_BASE");
    if (!w) {
        return ct_error_code();
    }
    ct_dtype dt = ct_tensor_dtype(input);
    w->numel_in = ct_numel(input);
    w->numel_out = ct_numel(output);
    w->send = ct__dist_stage(input, dt, false);
    st = w->send ? ct__dist_inout(w, output, dt, false) : ct_error_code();
#ifdef CTORCH_DIST_NCCL
    if (st == CT_OK && g->backend == CT_BACKEND_NCCL) {
        st = ct__dist_nccl_check(dt, CT_REDUCE_SUM, name);
        if (st == CT_OK) {
            st = ct__dist_nccl_done(w, ncclAllGather(ct_data_ptr(w->send), ct_data_ptr(w->buf),
                                                     (size_t)ct_numel(input),
                                                     ct__dist_nccl_type(dt), g->nccl, g->stream));
        }
        return ct__dist_finish(w, st, work);
    }
#endif
    if (st == CT_OK) {
        MPI_Datatype t = ct__dist_mpi_type(dt);
        st = ct__dist_check(g, MPI_Iallgather(ct_data_ptr(w->send), ct__dist_n(input), t,
                                              ct_data_ptr(w->buf), ct__dist_n(input), t,
                                              g->comm, &w->req), name);
    }
    return ct__dist_finish(w, st, work);
}

ct_status ct_dist_reduce_scatter_tensor(ct_tensor *output, const ct_tensor *input,
                                        ct_reduce_op op, ct_process_group *group, ct_work **work)
{
    const char *name = "ct_dist_reduce_scatter_tensor";
    ct_process_group *g;
    const ct_tensor *ts[2] = {output, input};
    ct_status st = ct__dist_enter(group, ts, 2, name, &g);
    if (!g) {
        return st;
    }
    ct_dtype dt = ct_tensor_dtype(input), wire = ct__dist_wire(g, dt, true);
    ct_reduce_op run = ct__dist_reduce_check(op, dt, name);
    if (run == CT_REDUCE_OP_COUNT || ct__dist_check_chunks(g, input, output, name) != CT_OK) {
        return ct_error_code();
    }
    ct_work *w = ct__dist_work_new(g, name, "_REDUCE_SCATTER_BASE");
    if (!w) {
        return ct_error_code();
    }
    w->numel_in = ct_numel(input);
    w->numel_out = ct_numel(output);
    w->send = ct__dist_stage(input, wire, false);
    st = w->send ? ct__dist_inout(w, output, wire, false) : ct_error_code();
#ifdef CTORCH_DIST_NCCL
    if (st == CT_OK && g->backend == CT_BACKEND_NCCL) {
        st = ct__dist_nccl_check(dt, run, name);
        if (st == CT_OK) {
            st = ct__dist_nccl_done(w, ncclReduceScatter(ct_data_ptr(w->send),
                                                         ct_data_ptr(w->buf),
                                                         (size_t)ct_numel(output),
                                                         ct__dist_nccl_type(wire),
                                                         ct__dist_nccl_op(run), g->nccl,
                                                         g->stream));
        }
        return ct__dist_finish(w, st, work);
    }
#endif
    if (st == CT_OK) {
        w->avg_div = run == CT_REDUCE_AVG ? (double)g->size : 0.0;
        st = ct__dist_check(g, MPI_Ireduce_scatter_block(ct_data_ptr(w->send),
                                                         ct_data_ptr(w->buf),
                                                         ct__dist_n(output),
                                                         ct__dist_mpi_type(wire),
                                                         ct__dist_mpi_op(run), g->comm, &w->req),
                            name);
    }
    return ct__dist_finish(w, st, work);
}

/* The root's list of gather/scatter: required (n = group size) on the root, else NULL, 0. */
static ct_status ct__dist_root_list(const ct_process_group *g, bool is_root, const void *list,
                                    int n, const char *what, const char *name)
{
    if (!is_root && (list || n != 0)) {
        return ct__dist_fail(CT_ERR_VALUE, name, "Argument ``%s`` must NOT be specified on "
                             "non-root ranks.", what);
    }
    if (is_root && !list) {
        return ct__dist_fail(CT_ERR_VALUE, name, "Argument ``%s`` must be specified on "
                             "the root rank (a list of %d tensors).", what, g->size);
    }
    return CT_OK;
}

/* The MPI-only list collectives (gather, scatter): the group and root, or NULL. */
static ct_work *ct__dist_rooted(ct_process_group *group, const ct_tensor *tensor, int root_rank,
                                const char *root_name, const void *list, int n, const char *what,
                                const char *name, const char *kind, ct_status *st, int *root)
{
    ct_process_group *g = ct__dist_enter1(group, tensor, name, st);
    if (!g) {
        return NULL;
    }
    if (g->backend == CT_BACKEND_NCCL) {
        *st = ct__dist_fail(CT_ERR_UNSUPPORTED, name, "the tensor-list collectives are MPI-only");
        return NULL;
    }
    *root = ct__dist_group_rank(g, root_rank, root_name, name);
    if (*root < 0 || ct__dist_root_list(g, g->rank == *root, list, n, what, name) != CT_OK) {
        *st = ct_error_code();
        return NULL;
    }
    ct_work *w = ct__dist_work_new(g, name, kind);
    *st = w ? CT_OK : ct_error_code();
    return w;
}

ct_status ct_dist_gather(const ct_tensor *tensor, ct_tensor *const *gather_list, int n, int dst,
                         ct_process_group *group, ct_work **work)
{
    const char *name = "ct_dist_gather";
    ct_status st;
    int root = -1;
    ct_work *w = ct__dist_rooted(group, tensor, dst, "dst", gather_list, n, "gather_list", name,
                                 "GATHER", &st, &root);
    if (!w) {
        return st;
    }
    ct_process_group *g = w->group;
    ct_dtype dt = ct_tensor_dtype(tensor);
    w->numel_in = ct_numel(tensor);
    w->send = ct__dist_stage(tensor, dt, false);
    if (g->rank == root) {
        int64_t total = ct__dist_layout(w, (const ct_tensor *const *)gather_list, n, dt, g->rank,
                                        ct_numel(tensor));
        w->numel_out = total;
        w->buf = total < 0 ? NULL : ct__dist_flat(total, dt, tensor);
        for (int k = 0; k < n && w->buf && ct_error_code() == CT_OK; k++) {
            ct__dist_add_out(w, gather_list[k], w->displs[k]);
        }
    }
    st = ct_error_code();
    if (st == CT_OK) {
        MPI_Datatype t = ct__dist_mpi_type(dt);
        st = ct__dist_check(g, MPI_Igatherv(ct_data_ptr(w->send), ct__dist_n(tensor), t,
                                            w->buf ? ct_data_ptr(w->buf) : NULL, w->counts,
                                            w->displs, t, root, g->comm, &w->req), name);
    }
    return ct__dist_finish(w, st, work);
}

/* A contiguous 1-D copy of the list's tensors, one after the other (one reference). */
static ct_tensor *ct__dist_concat(const ct_tensor *const *list, int n, int64_t total,
                                  ct_dtype dt)
{
    ct_tensor *flat = ct__dist_flat(total, dt, list[0]);
    ct_scope_begin();
    int64_t off = 0;
    for (int k = 0; k < n && flat; k++) {
        ct_copy_(ct_narrow(flat, 0, off, ct_numel(list[k])), ct_flatten(list[k], 0, -1));
        off += ct_numel(list[k]);
    }
    ct_scope_end();
    return flat;
}

ct_status ct_dist_scatter(ct_tensor *tensor, const ct_tensor *const *scatter_list, int n, int src,
                          ct_process_group *group, ct_work **work)
{
    const char *name = "ct_dist_scatter";
    ct_status st;
    int root = -1;
    ct_work *w = ct__dist_rooted(group, tensor, src, "src", scatter_list, n, "scatter_list",
                                 name, "SCATTER", &st, &root);
    if (!w) {
        return st;
    }
    ct_process_group *g = w->group;
    ct_dtype dt = ct_tensor_dtype(tensor);
    w->numel_out = ct_numel(tensor);
    if (g->rank == root) {
        int64_t total = ct__dist_layout(w, scatter_list, n, dt, g->rank, ct_numel(tensor));
        w->numel_in = total;
        w->send = total < 0 ? NULL : ct__dist_concat(scatter_list, n, total, dt);
    }
    st = ct_error_code();
    if (st == CT_OK) {
        st = ct__dist_inout(w, tensor, dt, false);
    }
    if (st == CT_OK) {
        MPI_Datatype t = ct__dist_mpi_type(dt);
        st = ct__dist_check(g, MPI_Iscatterv(w->send ? ct_data_ptr(w->send) : NULL, w->counts,
                                             w->displs, t, ct_data_ptr(w->buf),
                                             ct__dist_n(tensor), t, root, g->comm, &w->req),
                            name);
    }
    return ct__dist_finish(w, st, work);
}

ct_status ct_dist_barrier(ct_process_group *group, ct_work **work)
{
    const char *name = "ct_dist_barrier";
    ct_process_group *g;
    ct_status st = ct__dist_enter(group, NULL, 0, name, &g);
    if (!g) {
        return st;
    }
    ct_work *w = ct__dist_work_new(g, name, "BARRIER");
    if (!w) {
        return ct_error_code();
    }
#ifdef CTORCH_DIST_NCCL
    if (g->backend == CT_BACKEND_NCCL) { /* as PyTorch: an all_reduce of one element */
        st = ct__dist_nccl_done(w, ncclAllReduce(g->scratch, g->scratch, 1, ncclFloat32, ncclSum,
                                                 g->nccl, g->stream));
        return ct__dist_finish(w, st, work);
    }
#endif
    st = ct__dist_check(g, MPI_Ibarrier(g->comm, &w->req), name);
    return ct__dist_finish(w, st, work);
}

/* The peer's group rank for send/recv (any: -1 allowed, MPI_ANY_SOURCE), or -2 after an
   error. */
static int ct__dist_peer(const ct_process_group *g, int peer, int tag, bool any, const char *name)
{
    if (tag < 0) {
        ct__dist_fail(CT_ERR_VALUE, name, "tag must be >= 0, got %d", tag);
        return -2;
    }
    if (any && peer == -1) {
        return MPI_ANY_SOURCE;
    }
    int r = ct__dist_group_rank(g, peer, any ? "src" : "dst", name);
    if (r == g->rank) {
        ct__dist_fail(CT_ERR_VALUE, name, "Invalid %s rank: should not be the same as rank of "
                      "the current process.", any ? "source" : "destination");
        return -2;
    }
    return r < 0 ? -2 : r;
}

/* Starts a send (send true) or a receive of tensor with peer; the work in *w. */
static ct_status ct__dist_p2p(ct_tensor *tensor, int peer, ct_process_group *group, int tag,
                              bool send, const char *name, ct_work **w)
{
    *w = NULL;
    ct_status st;
    ct_process_group *g = ct__dist_enter1(group, tensor, name, &st);
    if (!g) {
        return st;
    }
    int r = ct__dist_peer(g, peer, tag, !send, name);
    *w = r == -2 ? NULL : ct__dist_work_new(g, name, send ? "SEND" : "RECV");
    if (!*w) {
        return ct_error_code();
    }
    ct_dtype dt = ct_tensor_dtype(tensor);
    (*w)->numel_in = (*w)->numel_out = ct_numel(tensor);
    (*w)->source = send ? -1 : -2; /* -2: taken from the status once complete */
    if (send) {
        (*w)->buf = ct__dist_stage(tensor, dt, false);
        st = (*w)->buf ? CT_OK : ct_error_code();
    } else {
        st = ct__dist_inout(*w, tensor, dt, false);
    }
#ifdef CTORCH_DIST_NCCL
    if (st == CT_OK && g->backend == CT_BACKEND_NCCL) {
        st = ct__dist_nccl_check(dt, CT_REDUCE_SUM, name);
        if (st == CT_OK && r == MPI_ANY_SOURCE) {
            st = ct__dist_fail(CT_ERR_VALUE, name, "NCCL needs an explicit src rank");
        }
        if (st == CT_OK) {
            void *p = ct_data_ptr((*w)->buf);
            size_t count = (size_t)ct_numel(tensor);
            ncclDataType_t t = ct__dist_nccl_type(dt);
            (*w)->source = send ? -1 : g->global_ranks[r];
            st = ct__dist_nccl_done(*w, send ? ncclSend(p, count, t, r, g->nccl, g->stream)
                                             : ncclRecv(p, count, t, r, g->nccl, g->stream));
        }
        return st;
    }
#endif
    if (st == CT_OK) {
        void *p = ct_data_ptr((*w)->buf);
        MPI_Datatype t = ct__dist_mpi_type(dt);
        int count = ct__dist_n(tensor);
        st = ct__dist_check(g, send ? MPI_Isend(p, count, t, r, tag, g->comm, &(*w)->req)
                                    : MPI_Irecv(p, count, t, r, tag, g->comm, &(*w)->req),
                            name);
    }
    return st;
}

ct_status ct_dist_send(const ct_tensor *tensor, int dst, ct_process_group *group, int tag)
{
    ct_work *w;
    ct_status st = ct__dist_p2p((ct_tensor *)tensor, dst, group, tag, true, "ct_dist_send", &w);
    return w ? ct__dist_finish(w, st, NULL) : st;
}

int ct_dist_recv(ct_tensor *tensor, int src, ct_process_group *group, int tag)
{
    ct_work *w;
    ct_status st = ct__dist_p2p(tensor, src, group, tag, false, "ct_dist_recv", &w);
    if (!w) {
        return -1;
    }
    if (st == CT_OK) {
        st = ct_work_wait(w);
    } else {
        w->done = true;
    }
    int source = st == CT_OK ? ct_work_source(w) : -1;
    ct_work_free(w);
    return source;
}

ct_status ct_dist_isend(const ct_tensor *tensor, int dst, ct_process_group *group, int tag,
                        ct_work **work)
{
    if (!work) {
        return ct_error_set(CT_ERR_NULL_ARG, "ct_dist_isend", "work is NULL");
    }
    ct_work *w;
    ct_status st = ct__dist_p2p((ct_tensor *)tensor, dst, group, tag, true, "ct_dist_isend", &w);
    return w ? ct__dist_finish(w, st, work) : st;
}

ct_status ct_dist_irecv(ct_tensor *tensor, int src, ct_process_group *group, int tag,
                        ct_work **work)
{
    if (!work) {
        return ct_error_set(CT_ERR_NULL_ARG, "ct_dist_irecv", "work is NULL");
    }
    ct_work *w;
    ct_status st = ct__dist_p2p(tensor, src, group, tag, false, "ct_dist_irecv", &w);
    return w ? ct__dist_finish(w, st, work) : st;
}

// >>part dist/ddp.c
/* dist/ddp.c - DistributedDataParallel: buckets, the reducer's autograd hooks, comm hooks. */

#define CT__DDP_FIRST_BUCKET_BYTES ((int64_t)1 << 20) /* dist._DEFAULT_FIRST_BUCKET_BYTES */
#define CT__DDP_NOT_FINISHED                                                                    \
    "Expected to have finished reduction in the prior iteration before starting a new one. "  \
    "This error indicates that your module has parameters that were not used in producing "   \
    "loss. You can enable unused parameter detection by passing find_unused_parameters = "    \
    "true in ct_ddp_opts"

/* A parameter's place: its bucket and element offset there; the hook's user pointer. */
typedef struct ct__ddp_slot {
    ct_ddp *ddp;
    int index;
    int bucket;
    int64_t offset;
    bool ready; /* its gradient is in the bucket (this backward) */
    bool used;  /* ... and came from this rank's backward (not zero-filled) */
} ct__ddp_slot;

struct ct_grad_bucket {
    int index;
    bool is_last;
    ct_tensor *buffer; /* retained; 1-D, the bucket's dtype */
    int pending;       /* parameters not ready yet in this backward */
    int n_params;
    ct_work *work; /* the reduction in flight */
};

struct ct_ddp {
    ct_module *module;
    ct_process_group *group;
    ct_ddp_opts opts;
    ct_tensor **params; /* requiring grad, registration order, retained */
    ct__ddp_slot *slots;
    int n_params;
    ct_grad_bucket *buckets;
    int n_buckets;
    int next_launch; /* the first bucket whose reduction has not started */
    int no_sync;
    bool armed;     /* the next backward reduces */
    bool finishing; /* the end-of-backward callback is queued */
    ct_ddp_comm_hook hook;
    void *hook_state;
    double wait_s; /* ct_ddp_comm_wait_seconds */
};

ct_ddp_opts ct_ddp_defaults(void)
{
    ct_ddp_opts o = {25.0, true, false, false};
    return o;
}

/* Broadcasts group rank 0's tensors into every rank's (in place, under no_grad). */
static ct_status ct__ddp_broadcast(ct_ddp *d, ct_tensor *const *ts, int64_t n)
{
    ct_status st = CT_OK;
    ct_no_grad_begin();
    for (int64_t i = 0; i < n && st == CT_OK; i++) {
        st = ct_dist_broadcast(ts[i], d->group->global_ranks[0], d->group, NULL);
    }
    ct_no_grad_end();
    return st;
}

static ct_status ct__ddp_broadcast_buffers(ct_ddp *d)
{
    int64_t n = ct_module_buffers(d->module, NULL, 0);
    ct_tensor **bufs = (ct_tensor **)calloc((size_t)n + 1, sizeof *bufs);
    if (!bufs) {
        return ct__dist_fail(CT_ERR_OOM, "ct_ddp_forward", "out of memory");
    }
    ct_module_buffers(d->module, bufs, n);
    ct_status st = ct__ddp_broadcast(d, bufs, n);
    free(bufs);
    return st;
}

/* Bucket assignment (PyTorch's compute_bucket_assignment_by_size): parameters in reverse
   registration order, one open bucket per dtype, closed once it reaches its limit (1 MiB for
   the first closed, bucket_cap_mb after); buckets ordered by their first parameter. */
static ct_status ct__ddp_assign(ct_ddp *d)
{
    int64_t cap = (int64_t)(d->opts.bucket_cap_mb * 1048576.0);
    int64_t limit = cap < CT__DDP_FIRST_BUCKET_BYTES ? cap : CT__DDP_FIRST_BUCKET_BYTES;
    int open[CT_DTYPE_COUNT], n = 0;
    int64_t bytes[CT_DTYPE_COUNT];
    for (int k = 0; k < CT_DTYPE_COUNT; k++) {
        open[k] = -1;
    }
    int *first = (int *)calloc((size_t)d->n_params, sizeof *first);
    int64_t *numel = (int64_t *)calloc((size_t)d->n_params, sizeof *numel);
    if (!first || !numel) {
        free(first);
        free(numel);
        return ct__dist_fail(CT_ERR_OOM, "ct_ddp_new", "out of memory");
    }
    for (int i = d->n_params - 1; i >= 0; i--) {
        ct_dtype dt = ct_tensor_dtype(d->params[i]);
        if (open[dt] < 0) {
            open[dt] = n;
            first[n++] = i;
            bytes[dt] = 0;
        }
        ct__ddp_slot *s = &d->slots[i];
        s->bucket = open[dt];
        s->offset = numel[open[dt]];
        numel[open[dt]] += ct_numel(d->params[i]);
        bytes[dt] += ct_numel(d->params[i]) * (int64_t)ct_dtype_size(dt);
        if (bytes[dt] >= limit) {
            open[dt] = -1;
            limit = cap;
        }
    }
    /* buckets were numbered as they opened, which is their first parameter's order */
    d->buckets = (ct_grad_bucket *)calloc((size_t)n, sizeof *d->buckets);
    ct_status st = d->buckets ? CT_OK : ct__dist_fail(CT_ERR_OOM, "ct_ddp_new", "out of memory");
    d->n_buckets = d->buckets ? n : 0;
    ct_scope_begin();
    for (int b = 0; b < d->n_buckets && st == CT_OK; b++) {
        ct_grad_bucket *bk = &d->buckets[b];
        bk->index = b;
        bk->is_last = b == n - 1;
        bk->buffer = ct_retain(ct_zeros(&numel[b], 1, ct_tensor_dtype(d->params[first[b]])));
        st = bk->buffer ? CT_OK : ct_error_code();
    }
    ct_scope_end();
    for (int i = 0; i < d->n_params; i++) {
        d->buckets[d->slots[i].bucket].n_params++;
    }
    free(first);
    free(numel);
    return st;
}

/* The flat slice of slot s's bucket that holds its gradient, shaped as its parameter. */
static ct_tensor *ct__ddp_slice(const ct_ddp *d, const ct__ddp_slot *s)
{
    const ct_tensor *p = d->params[s->index];
    ct_tensor *part = ct_narrow(d->buckets[s->bucket].buffer, 0, s->offset, ct_numel(p));
    return ct_view(part, ct_sizes(p), ct_dim(p));
}

static void ct__ddp_reset(ct_ddp *d)
{
    for (int b = 0; b < d->n_buckets; b++) {
        d->buckets[b].pending = d->buckets[b].n_params;
    }
    for (int i = 0; i < d->n_params; i++) {
        d->slots[i].ready = d->slots[i].used = false;
    }
    d->next_launch = 0;
    d->finishing = false;
}

/* Starts the reductions of the consecutive full buckets from next_launch. */
static void ct__ddp_launch(ct_ddp *d)
{
    while (d->next_launch < d->n_buckets && d->buckets[d->next_launch].pending == 0 &&
           !ct_error()) {
        ct_grad_bucket *b = &d->buckets[d->next_launch++];
        b->work = d->hook ? d->hook(d->hook_state, b) : ct_ddp_allreduce_hook(d->group, b);
        if (!b->work && !ct_error()) {
            ct__dist_fail(CT_ERR_DIST, "ct_ddp", "the comm hook of bucket %d returned no work",
                          b->index);
        }
    }
}

/* Slot s's gradient (NULL: zeros) is in its bucket: the bucket may start. */
static void ct__ddp_mark_ready(ct_ddp *d, ct__ddp_slot *s, const ct_tensor *grad)
{
    ct_scope_begin();
    ct_tensor *slice = ct__ddp_slice(d, s);
    if (!grad) {
        ct_zero_(slice);
    } else if (ct_data_ptr(grad) != ct_data_ptr(slice)) { /* not already the bucket's view */
        ct_copy_(slice, grad);
    }
    ct_scope_end();
    s->ready = true;
    s->used = grad != NULL;
    d->buckets[s->bucket].pending--;
    ct__ddp_launch(d);
}

/* Whether any rank used each parameter (find_unused_parameters): all-reduces the used map
   with MAX into used (n_params bytes). */
static ct_status ct__ddp_global_used(ct_ddp *d, bool *used)
{
    ct_scope_begin();
    int64_t n = d->n_params;
    ct_tensor *map = ct_zeros(&n, 1, CT_UINT8);
    uint8_t *p = map ? (uint8_t *)ct_data_ptr(map) : NULL;
    for (int i = 0; p && i < d->n_params; i++) {
        p[i] = d->slots[i].used;
    }
    ct_status st = map ? ct_dist_all_reduce(map, CT_REDUCE_MAX, d->group, NULL) : ct_error_code();
    for (int i = 0; st == CT_OK && i < d->n_params; i++) {
        used[i] = p[i] != 0;
    }
    ct_scope_end();
    return st;
}

/* Writes slot s's averaged gradient back into its parameter's .grad. */
static void ct__ddp_write_grad(ct_ddp *d, const ct__ddp_slot *s)
{
    ct_tensor *p = d->params[s->index], *g = ct_grad(p);
    ct_scope_begin();
    ct_tensor *slice = ct__ddp_slice(d, s);
    if (d->opts.gradient_as_bucket_view) {
        if (!g || ct_data_ptr(g) != ct_data_ptr(slice)) {
            ct_set_grad(p, slice);
        }
    } else if (g) {
        ct_copy_(g, slice);
    } else {
        ct_set_grad(p, ct_clone(slice));
    }
    ct_scope_end();
}

/* The end of a synced backward (ct_autograd_queue_callback): unused parameters, the
   reductions' completion, .grad. */
static void ct__ddp_finish(void *user)
{
    ct_ddp *d = (ct_ddp *)user;
    const char *op = "ct_ddp (backward)";
    bool *used = NULL;
    if (d->opts.find_unused_parameters) {
        for (int i = 0; i < d->n_params && !ct_error(); i++) {
            if (!d->slots[i].ready) {
                ct__ddp_mark_ready(d, &d->slots[i], NULL);
            }
        }
        used = (bool *)calloc((size_t)d->n_params, sizeof *used);
        if (!used) {
            ct__dist_fail(CT_ERR_OOM, op, "out of memory");
        } else if (!ct_error()) {
            ct__ddp_global_used(d, used);
        }
    } else if (d->next_launch < d->n_buckets && !ct_error()) {
        ct__dist_fail(CT_ERR_STATE, op, CT__DDP_NOT_FINISHED);
    }
    double start = MPI_Wtime();
    for (int b = 0; b < d->n_buckets; b++) {
        if (d->buckets[b].work) {
            if (!ct_error()) {
                ct_work_wait(d->buckets[b].work);
            }
            ct_work_free(d->buckets[b].work);
            d->buckets[b].work = NULL;
        }
    }
    d->wait_s += MPI_Wtime() - start;
    for (int i = 0; i < d->n_params && !ct_error(); i++) {
        if (!used || used[i]) {
            ct__ddp_write_grad(d, &d->slots[i]);
        }
    }
    free(used);
    d->armed = ct_error() != NULL; /* after a failure: the next forward reports it */
    if (!d->armed) {
        ct__ddp_reset(d);
    }
}

/* Lets the engine advance the reductions in flight (MPI progresses a nonblocking collective
   only inside MPI calls): each gradient that arrives tests them once. */
static void ct__ddp_progress(ct_ddp *d)
{
    for (int b = 0; b < d->next_launch; b++) {
        if (d->buckets[b].work) {
            ct_work_is_completed(d->buckets[b].work);
        }
    }
}

/* A parameter's post-accumulate-grad hook. */
static void ct__ddp_param_ready(ct_tensor *param, void *user)
{
    ct__ddp_slot *s = (ct__ddp_slot *)user;
    ct_ddp *d = s->ddp;
    if (!d->armed || d->no_sync > 0) {
        return;
    }
    ct__ddp_progress(d);
    if (!d->finishing) {
        d->finishing = true;
        if (ct_autograd_queue_callback(ct__ddp_finish, d) != CT_OK) {
            return;
        }
    }
    if (s->ready) {
        ct__dist_fail(CT_ERR_STATE, "ct_ddp (backward)",
                      "Expected to mark a variable ready only once. (parameter %d)", s->index);
        return;
    }
    ct__ddp_mark_ready(d, s, ct_grad(param));
}

static ct_status ct__ddp_init(ct_ddp *d, const char *op)
{
    int64_t n = ct_module_parameters(d->module, NULL, 0);
    ct_tensor **all = (ct_tensor **)calloc((size_t)n + 1, sizeof *all);
    d->params = (ct_tensor **)calloc((size_t)n + 1, sizeof *d->params);
    d->slots = (ct__ddp_slot *)calloc((size_t)n + 1, sizeof *d->slots);
    if (!all || !d->params || !d->slots) {
        free(all);
        return ct__dist_fail(CT_ERR_OOM, op, "out of memory");
    }
    ct_module_parameters(d->module, all, n);
    ct_status st = ct__ddp_broadcast(d, all, n);
    for (int64_t i = 0; i < n && st == CT_OK; i++) {
        if (ct_requires_grad(all[i])) {
            d->params[d->n_params] = ct_retain(all[i]);
            d->slots[d->n_params].ddp = d;
            d->slots[d->n_params].index = d->n_params;
            d->n_params++;
        }
    }
    free(all);
    if (st == CT_OK && d->n_params == 0) {
        return ct__dist_fail(CT_ERR_VALUE, op, "DistributedDataParallel is not needed when a "
                             "module doesn't have any parameter that requires a gradient.");
    }
    st = st == CT_OK ? ct__ddp_broadcast_buffers(d) : st;
    st = st == CT_OK ? ct__ddp_assign(d) : st;
    for (int i = 0; i < d->n_params && st == CT_OK; i++) {
        st = ct_register_post_accumulate_grad_hook(d->params[i], ct__ddp_param_ready,
                                                   &d->slots[i]);
    }
    ct__ddp_reset(d);
    return st;
}

ct_ddp *ct_ddp_new(ct_module *module, ct_process_group *group, const ct_ddp_opts *opts)
{
    const char *op = "ct_ddp_new";
    if (!module) {
        ct_error_set(CT_ERR_NULL_ARG, op, "module is NULL");
        return NULL;
    }
    ct_process_group *g = ct__dist_group(group, op);
    if (!g) {
        return NULL;
    }
    ct_ddp_opts o = opts ? *opts : ct_ddp_defaults();
    if (!(o.bucket_cap_mb > 0)) {
        ct__dist_fail(CT_ERR_VALUE, op, "bucket_cap_mb must be positive, got %g", o.bucket_cap_mb);
        return NULL;
    }
    if (g->rank < 0) {
        ct__dist_fail(CT_ERR_VALUE, op, "this process is not a member of the process group");
        return NULL;
    }
    ct_ddp *d = (ct_ddp *)calloc(1, sizeof *d);
    if (!d) {
        ct__dist_fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    d->module = module;
    d->group = g;
    d->opts = o;
    if (ct__ddp_init(d, op) != CT_OK) {
        ct_ddp_free(d);
        return NULL;
    }
    return d;
}

ct_tensor *ct_ddp_forward(ct_ddp *ddp, const ct_tensor *input)
{
    const char *op = "ct_ddp_forward";
    if (!ddp) {
        ct_error_set(CT_ERR_NULL_ARG, op, "ddp is NULL");
        return NULL;
    }
    if (ddp->armed && (ddp->finishing || ddp->next_launch > 0)) {
        ct__dist_fail(CT_ERR_STATE, op, CT__DDP_NOT_FINISHED);
        return NULL;
    }
    if (ddp->opts.broadcast_buffers && ddp->group->size > 1 &&
        ct__ddp_broadcast_buffers(ddp) != CT_OK) {
        return NULL;
    }
    ddp->armed = ct_is_grad_enabled() && ddp->no_sync == 0;
    return ct_module_forward(ddp->module, input);
}

ct_module *ct_ddp_module(const ct_ddp *ddp)
{
    if (!ddp) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_ddp_module", "ddp is NULL");
        return NULL;
    }
    return ddp->module;
}

double ct_ddp_comm_wait_seconds(const ct_ddp *ddp) { return ddp ? ddp->wait_s : 0.0; }

void ct_ddp_no_sync_begin(ct_ddp *ddp)
{
    if (!ddp) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_ddp_no_sync_begin", "ddp is NULL");
        return;
    }
    ddp->no_sync++;
}

void ct_ddp_no_sync_end(ct_ddp *ddp)
{
    if (!ddp) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_ddp_no_sync_end", "ddp is NULL");
        return;
    }
    ddp->no_sync -= ddp->no_sync > 0;
}

void ct_ddp_free(ct_ddp *ddp)
{
    if (!ddp) {
        return;
    }
    for (int i = 0; i < ddp->n_params; i++) {
        ct_remove_hook(ddp->params[i], &ddp->slots[i]);
        ct_release(ddp->params[i]);
    }
    for (int b = 0; b < ddp->n_buckets; b++) {
        ct_work_free(ddp->buckets[b].work);
        ct_release(ddp->buckets[b].buffer);
    }
    free(ddp->buckets);
    free(ddp->params);
    free(ddp->slots);
    free(ddp);
}

ct_status ct_ddp_register_comm_hook(ct_ddp *ddp, void *state, ct_ddp_comm_hook hook)
{
    const char *op = "ct_ddp_register_comm_hook";
    if (!ddp || !hook) {
        return ct_error_set(CT_ERR_NULL_ARG, op, ddp ? "hook is NULL" : "ddp is NULL");
    }
    if (ddp->hook) {
        return ct__dist_fail(CT_ERR_STATE, op, "register_comm_hook or register_builtin_comm_hook "
                             "can only be called once.");
    }
    ddp->hook = hook;
    ddp->hook_state = state;
    return CT_OK;
}

ct_tensor *ct_grad_bucket_buffer(const ct_grad_bucket *bucket)
{
    if (!bucket) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_grad_bucket_buffer", "bucket is NULL");
        return NULL;
    }
    return bucket->buffer;
}

int ct_grad_bucket_index(const ct_grad_bucket *bucket)
{
    if (!bucket) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_grad_bucket_index", "bucket is NULL");
        return -1;
    }
    return bucket->index;
}

bool ct_grad_bucket_is_last(const ct_grad_bucket *bucket)
{
    if (!bucket) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_grad_bucket_is_last", "bucket is NULL");
        return false;
    }
    return bucket->is_last;
}

ct_work *ct_ddp_allreduce_hook(void *state, ct_grad_bucket *bucket)
{
    ct_work *w = NULL;
    if (!bucket) {
        ct_error_set(CT_ERR_NULL_ARG, "ct_ddp_allreduce_hook", "bucket is NULL");
        return NULL;
    }
    ct_dist_all_reduce(bucket->buffer, CT_REDUCE_AVG, (ct_process_group *)state, &w);
    return w;
}

/* The compression hooks: the buffer in dtype, divided by the group's size, summed over the
   group, written back into the buffer when the work completes. */
static ct_work *ct__ddp_compress_hook(void *state, ct_grad_bucket *bucket, ct_dtype dtype,
                                      const char *op)
{
    if (!bucket) {
        ct_error_set(CT_ERR_NULL_ARG, op, "bucket is NULL");
        return NULL;
    }
    ct_process_group *g = ct__dist_group((ct_process_group *)state, op);
    if (!g) {
        return NULL;
    }
    ct_work *w = NULL;
    ct_scope_begin();
    ct_tensor *c = ct_div_scalar(ct_to_dtype(bucket->buffer, dtype), (double)g->size);
    if (c && ct_dist_all_reduce(c, CT_REDUCE_SUM, g, &w) == CT_OK) {
        w->then_src = ct_retain(c);
        w->then_dst = ct_retain(bucket->buffer);
    }
    ct_scope_end();
    return w;
}

ct_work *ct_ddp_fp16_compress_hook(void *state, ct_grad_bucket *bucket)
{
    return ct__ddp_compress_hook(state, bucket, CT_FLOAT16, "ct_ddp_fp16_compress_hook");
}

ct_work *ct_ddp_bf16_compress_hook(void *state, ct_grad_bucket *bucket)
{
    return ct__ddp_compress_hook(state, bucket, CT_BFLOAT16, "ct_ddp_bf16_compress_hook");
}

ct_work *ct_ddp_noop_hook(void *state, ct_grad_bucket *bucket)
{
    const char *op = "ct_ddp_noop_hook";
    if (!bucket) {
        ct_error_set(CT_ERR_NULL_ARG, op, "bucket is NULL");
        return NULL;
    }
    ct_process_group *g = ct__dist_group((ct_process_group *)state, op);
    ct_work *w = g ? ct__dist_work_new(g, op, "NOOP") : NULL;
    if (w) {
        w->done = true;
    }
    return w;
}

#undef CT__DDP_FIRST_BUCKET_BYTES
#undef CT__DDP_NOT_FINISHED

// >>part dist/store.c
/* dist/store.c - HashStore, FileStore, TCPStore and env:// initialization. */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CT__STORE_TIMEOUT_MS INT64_C(300000)

/* ---- the key-value map every store keeps (a file store: its file's replay) ---------- */
typedef struct ct__kv {
    char *key;
    uint8_t *val;
    size_t len;
} ct__kv;

typedef struct ct__kvmap {
    ct__kv *e;
    int n, cap;
} ct__kvmap;

static ct__kv *ct__kv_find(const ct__kvmap *m, const char *key)
{
    for (int i = 0; i < m->n; i++) {
        if (strcmp(m->e[i].key, key) == 0) {
            return &m->e[i];
        }
    }
    return NULL;
}

static void ct__kv_clear(ct__kvmap *m)
{
    for (int i = 0; i < m->n; i++) {
        free(m->e[i].key);
        free(m->e[i].val);
    }
    free(m->e);
    memset(m, 0, sizeof *m);
}

/* Sets key (klen bytes, not NUL-terminated) to len bytes of val; false when out of memory. */
static bool ct__kv_set(ct__kvmap *m, const char *key, size_t klen, const void *val, size_t len)
{
    char *k = (char *)malloc(klen + 1);
    uint8_t *v = (uint8_t *)malloc(len ? len : 1);
    if (!k || !v) {
        free(k);
        free(v);
        return false;
    }
    memcpy(k, key, klen);
    k[klen] = '\0';
    memcpy(v, val, len);
    ct__kv *e = ct__kv_find(m, k);
    if (!e && m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 16;
        ct__kv *grown = (ct__kv *)realloc(m->e, sizeof *grown * (size_t)cap);
        if (!grown) {
            free(k);
            free(v);
            return false;
        }
        m->e = grown;
        m->cap = cap;
    }
    if (!e) {
        e = &m->e[m->n++];
        e->key = k;
    } else {
        free(k);
        free(e->val);
    }
    e->val = v;
    e->len = len;
    return true;
}

/* The counter key after adding amount, as decimal text in text (32 bytes); false when key
   holds something else. */
static bool ct__kv_counter(const ct__kvmap *m, const char *key, int64_t amount, char *text)
{
    long long v = 0;
    const ct__kv *e = ct__kv_find(m, key);
    if (e) {
        char buf[32];
        char *end = NULL;
        if (e->len == 0 || e->len >= sizeof buf) {
            return false;
        }
        memcpy(buf, e->val, e->len);
        buf[e->len] = '\0';
        v = strtoll(buf, &end, 10);
        if (*end) {
            return false;
        }
    }
    snprintf(text, 32, "%lld", v + (long long)amount);
    return true;
}

/* ---- the store object ----------------------------------------------------------------- */
typedef enum ct__store_kind { CT__STORE_HASH, CT__STORE_FILE, CT__STORE_TCP } ct__store_kind;

struct ct_store {
    ct__store_kind kind;
    int64_t timeout_ms;
    pthread_mutex_t mu; /* guards map, the file's lock and the client's socket */
    ct__kvmap map;      /* hash store, TCP master; a file store's last replay */
    int fd;             /* file store: the file; TCP client: the socket; else -1 */
    int port;
    /* TCP master */
    int listen_fd;
    pthread_t server;
    bool serving, stop;
    int n_clients;
};

/* TCP requests: one command byte, the key (u32 length, bytes), then for SET the value (u64
   length, bytes) and for ADD the amount (int64). Replies: SET a status byte; GET a found byte,
   then the value (u64 length, bytes); ADD a status byte and the new value (int64). */
enum { CT__TCP_SET = 1, CT__TCP_GET = 2, CT__TCP_ADD = 3 };

static void ct__store_sleep(int ms) { poll(NULL, 0, ms); }

static int64_t ct__store_now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool ct__io_all(int fd, void *p, size_t n, bool write_)
{
    uint8_t *b = (uint8_t *)p;
    while (n > 0) {
        ssize_t r = write_ ? write(fd, b, n) : read(fd, b, n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return false;
        }
        b += r;
        n -= (size_t)r;
    }
    return true;
}

static ct_store *ct__store_new(ct__store_kind kind, const char *op)
{
    ct_store *s = (ct_store *)calloc(1, sizeof *s);
    if (!s) {
        ct__dist_fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->kind = kind;
    s->timeout_ms = CT__STORE_TIMEOUT_MS;
    s->fd = s->listen_fd = s->port = -1;
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

ct_store *ct_hash_store_new(void) { return ct__store_new(CT__STORE_HASH, "ct_hash_store_new"); }

/* ---- file store: records (u64 key length, key, u64 value length, value) appended ---- */
static bool ct__file_lock(int fd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR) {
            return false;
        }
    }
    return true;
}

/* Rebuilds s->map from the file (a record cut short at the end is ignored). */
static bool ct__file_replay(ct_store *s)
{
    ct__kv_clear(&s->map);
    if (lseek(s->fd, 0, SEEK_SET) != 0) {
        return false;
    }
    for (;;) {
        uint64_t klen = 0, vlen = 0;
        if (!ct__io_all(s->fd, &klen, sizeof klen, false) || klen > (1u << 20)) {
            return true;
        }
        char *k = (char *)malloc((size_t)klen + 1);
        bool ok = k && ct__io_all(s->fd, k, (size_t)klen, false) &&
                  ct__io_all(s->fd, &vlen, sizeof vlen, false) && vlen < ((uint64_t)1 << 40);
        uint8_t *v = ok ? (uint8_t *)malloc((size_t)vlen + 1) : NULL;
        ok = ok && v && ct__io_all(s->fd, v, (size_t)vlen, false) &&
             ct__kv_set(&s->map, k, (size_t)klen, v, (size_t)vlen);
        free(k);
        free(v);
        if (!ok) {
            return true;
        }
    }
}

static bool ct__file_append(ct_store *s, const char *key, const void *val, size_t len)
{
    uint64_t klen = strlen(key), vlen = len;
    return lseek(s->fd, 0, SEEK_END) >= 0 && ct__io_all(s->fd, &klen, sizeof klen, true) &&
           ct__io_all(s->fd, (void *)(uintptr_t)key, (size_t)klen, true) &&
           ct__io_all(s->fd, &vlen, sizeof vlen, true) &&
           ct__io_all(s->fd, (void *)(uintptr_t)val, len, true);
}

ct_store *ct_file_store_new(const char *path, int num_workers)
{
    const char *op = "ct_file_store_new";
    (void)num_workers;
    if (!path) {
        ct_error_set(CT_ERR_NULL_ARG, op, "path is NULL");
        return NULL;
    }
    ct_store *s = ct__store_new(CT__STORE_FILE, op);
    if (!s) {
        return NULL;
    }
    s->fd = open(path, O_RDWR | O_CREAT, 0644);
    if (s->fd < 0) {
        ct__dist_fail(CT_ERR_IO, op, "cannot open %s: %s", path, strerror(errno));
        ct_store_free(s);
        return NULL;
    }
    return s;
}

/* ---- TCP store ------------------------------------------------------------------------ */
/* The IPv4 address of host (a numeric address, "localhost" or, where the C library declares
   getaddrinfo, any name); false when it cannot be resolved. */
static bool ct__tcp_resolve(const char *host, struct in_addr *addr)
{
    if (inet_pton(AF_INET, host, addr) == 1) {
        return true;
    }
    if (strcmp(host, "localhost") == 0) {
        return inet_pton(AF_INET, "127.0.0.1", addr) == 1;
    }
#ifdef AI_PASSIVE /* netdb.h declares getaddrinfo (POSIX 2001 visible) */
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &ai) != 0 || !ai) {
        return false;
    }
    *addr = ((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr;
    freeaddrinfo(ai);
    return true;
#else
    return false;
#endif
}

/* Serves one request of client fd on the master's map; false when the client is gone. */
static bool ct__tcp_serve(ct_store *s, int fd)
{
    uint8_t cmd = 0;
    uint32_t klen = 0;
    if (!ct__io_all(fd, &cmd, 1, false) || !ct__io_all(fd, &klen, sizeof klen, false) ||
        klen > (1u << 20)) {
        return false;
    }
    char *key = (char *)malloc((size_t)klen + 1);
    bool ok = key && ct__io_all(fd, key, klen, false);
    if (ok) {
        key[klen] = '\0';
    }
    if (ok && cmd == CT__TCP_SET) {
        uint64_t vlen = 0;
        ok = ct__io_all(fd, &vlen, sizeof vlen, false) && vlen < ((uint64_t)1 << 40);
        uint8_t *v = ok ? (uint8_t *)malloc((size_t)vlen + 1) : NULL;
        ok = v && ct__io_all(fd, v, (size_t)vlen, false);
        pthread_mutex_lock(&s->mu);
        uint8_t st = ok && ct__kv_set(&s->map, key, klen, v, (size_t)vlen);
        pthread_mutex_unlock(&s->mu);
        free(v);
        ok = ok && ct__io_all(fd, &st, 1, true);
    } else if (ok && cmd == CT__TCP_GET) {
        pthread_mutex_lock(&s->mu);
        const ct__kv *e = ct__kv_find(&s->map, key);
        uint8_t found = e != NULL;
        uint64_t vlen = e ? e->len : 0;
        ok = ct__io_all(fd, &found, 1, true) && ct__io_all(fd, &vlen, sizeof vlen, true) &&
             (!e || ct__io_all(fd, e->val, e->len, true));
        pthread_mutex_unlock(&s->mu);
    } else if (ok && cmd == CT__TCP_ADD) {
        int64_t amount = 0, value = 0;
        char text[32];
        ok = ct__io_all(fd, &amount, sizeof amount, false);
        pthread_mutex_lock(&s->mu);
        uint8_t st = ok && ct__kv_counter(&s->map, key, amount, text) &&
                     ct__kv_set(&s->map, key, klen, text, strlen(text));
        pthread_mutex_unlock(&s->mu);
        value = st ? (int64_t)strtoll(text, NULL, 10) : 0;
        ok = ok && ct__io_all(fd, &st, 1, true) && ct__io_all(fd, &value, sizeof value, true);
    } else {
        ok = false;
    }
    free(key);
    return ok;
}

/* The master's thread: accepts clients and serves their requests until stop. */
static void *ct__tcp_server(void *arg)
{
    ct_store *s = (ct_store *)arg;
    struct pollfd fds[1024];
    int n = 1;
    fds[0].fd = s->listen_fd;
    fds[0].events = POLLIN;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        bool stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop) {
            break;
        }
        if (poll(fds, (nfds_t)n, 50) <= 0) {
            continue;
        }
        for (int i = n - 1; i >= 1; i--) {
            if (fds[i].revents && !ct__tcp_serve(s, fds[i].fd)) {
                close(fds[i].fd);
                fds[i] = fds[--n];
            }
        }
        if ((fds[0].revents & POLLIN) && n < 1024) {
            int c = accept(s->listen_fd, NULL, NULL);
            if (c >= 0) {
                int one = 1;
                setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fds[n].fd = c;
                fds[n].events = POLLIN;
                fds[n++].revents = 0;
                pthread_mutex_lock(&s->mu);
                s->n_clients++;
                pthread_mutex_unlock(&s->mu);
            }
        }
    }
    for (int i = 1; i < n; i++) {
        close(fds[i].fd);
    }
    return NULL;
}

static ct_status ct__tcp_listen(ct_store *s, struct in_addr addr, int port, const char *op)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr = addr;
    int one = 1;
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->listen_fd < 0 ||
        setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(s->listen_fd, 128) != 0 ||
        getsockname(s->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
        return ct__dist_fail(CT_ERR_DIST, op, "The server socket has failed to listen on "
                             "port %d: %s", port, strerror(errno));
    }
    s->port = ntohs(sa.sin_port);
    if (pthread_create(&s->server, NULL, ct__tcp_server, s) != 0) {
        return ct__dist_fail(CT_ERR_DIST, op, "cannot start the store's server thread");
    }
    s->serving = true;
    return CT_OK;
}

static ct_status ct__tcp_connect(ct_store *s, struct in_addr addr, int port, const char *op)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr = addr;
    int64_t end = ct__store_now_ms() + s->timeout_ms;
    for (int wait = 1;; wait = wait < 256 ? 2 * wait : wait) {
        s->fd = socket(AF_INET, SOCK_STREAM, 0);
        if (s->fd >= 0 && connect(s->fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            int one = 1;
            setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            s->port = port;
            return CT_OK;
        }
        if (s->fd >= 0) {
            close(s->fd);
            s->fd = -1;
        }
        if (ct__store_now_ms() > end) {
            return ct__dist_fail(CT_ERR_DIST, op, "The client socket has timed out after %lld "
                                 "ms while trying to connect to port %d.",
                                 (long long)s->timeout_ms, port);
        }
        ct__store_sleep(wait);
    }
}

ct_store *ct_tcp_store_new(const char *host_name, int port, int world_size, bool is_master,
                           int64_t timeout_ms, bool wait_for_workers)
{
    const char *op = "ct_tcp_store_new";
    if (!host_name) {
        ct_error_set(CT_ERR_NULL_ARG, op, "host_name is NULL");
        return NULL;
    }
    if (port < 0 || port > 65535 || (!is_master && port == 0)) {
        ct__dist_fail(CT_ERR_VALUE, op, "invalid port %d", port);
        return NULL;
    }
    struct in_addr addr;
    if (!ct__tcp_resolve(host_name, &addr)) {
        ct__dist_fail(CT_ERR_DIST, op, "cannot resolve the address of '%s'", host_name);
        return NULL;
    }
    ct_store *s = ct__store_new(CT__STORE_TCP, op);
    if (!s) {
        return NULL;
    }
    s->timeout_ms = timeout_ms > 0 ? timeout_ms : CT__STORE_TIMEOUT_MS;
    ct_status st = is_master ? ct__tcp_listen(s, addr, port, op)
                             : ct__tcp_connect(s, addr, port, op);
    int64_t end = ct__store_now_ms() + s->timeout_ms;
    for (bool waiting = st == CT_OK && is_master && wait_for_workers && world_size > 1;
         waiting;) {
        pthread_mutex_lock(&s->mu);
        waiting = s->n_clients < world_size - 1;
        pthread_mutex_unlock(&s->mu);
        if (waiting && ct__store_now_ms() > end) {
            st = ct__dist_fail(CT_ERR_DIST, op, "Timed out after %lld ms waiting for "
                               "clients. %d/%d clients joined.", (long long)s->timeout_ms,
                               s->n_clients, world_size - 1);
            break;
        }
        ct__store_sleep(1);
    }
    if (st != CT_OK) {
        ct_store_free(s);
        return NULL;
    }
    return s;
}

int ct_tcp_store_port(const ct_store *store)
{
    return store && store->kind == CT__STORE_TCP ? store->port : -1;
}

/* A client's request; reply receives the status/found byte. */
static bool ct__tcp_request(ct_store *s, uint8_t cmd, const char *key, const void *val,
                            size_t len, uint8_t *reply)
{
    uint32_t klen = (uint32_t)strlen(key);
    uint64_t vlen = len;
    bool ok = ct__io_all(s->fd, &cmd, 1, true) && ct__io_all(s->fd, &klen, sizeof klen, true) &&
              ct__io_all(s->fd, (void *)(uintptr_t)key, klen, true);
    if (ok && cmd == CT__TCP_SET) {
        ok = ct__io_all(s->fd, &vlen, sizeof vlen, true) &&
             ct__io_all(s->fd, (void *)(uintptr_t)val, len, true);
    } else if (ok && cmd == CT__TCP_ADD) {
        ok = ct__io_all(s->fd, (void *)(uintptr_t)val, sizeof(int64_t), true);
    }
    return ok && ct__io_all(s->fd, reply, 1, false);
}

/* ---- the operations, per kind ------------------------------------------------------------ */
/* The store's map is current (a file store: replayed under a lock of type, kept locked). */
static ct_status ct__store_enter(ct_store *s, short type, const char *op)
{
    pthread_mutex_lock(&s->mu);
    if (s->kind == CT__STORE_FILE && (!ct__file_lock(s->fd, type) || !ct__file_replay(s))) {
        pthread_mutex_unlock(&s->mu);
        return ct__dist_fail(CT_ERR_IO, op, "cannot lock or read the store's file: %s",
                             strerror(errno));
    }
    return CT_OK;
}

static void ct__store_leave(ct_store *s)
{
    if (s->kind == CT__STORE_FILE) {
        ct__file_lock(s->fd, F_UNLCK);
    }
    pthread_mutex_unlock(&s->mu);
}

static bool ct__store_is_client(const ct_store *s)
{
    return s->kind == CT__STORE_TCP && s->listen_fd < 0;
}

static ct_status ct__store_lost(ct_store *s, const char *op)
{
    pthread_mutex_unlock(&s->mu);
    return ct__dist_fail(CT_ERR_DIST, op, "lost the connection to the store's server");
}

ct_status ct_store_set(ct_store *store, const char *key, const void *value, size_t len)
{
    const char *op = "ct_store_set";
    if (!store || !key || (!value && len > 0)) {
        return ct_error_set(CT_ERR_NULL_ARG, op, "store, key or value is NULL");
    }
    if (ct__store_is_client(store)) {
        uint8_t st = 0;
        pthread_mutex_lock(&store->mu);
        if (!ct__tcp_request(store, CT__TCP_SET, key, value, len, &st)) {
            return ct__store_lost(store, op);
        }
        pthread_mutex_unlock(&store->mu);
        return st ? CT_OK : ct__dist_fail(CT_ERR_OOM, op, "the server ran out of memory");
    }
    ct_status status = ct__store_enter(store, F_WRLCK, op);
    if (status != CT_OK) {
        return status;
    }
    bool ok = store->kind == CT__STORE_FILE ? ct__file_append(store, key, value, len)
                                            : ct__kv_set(&store->map, key, strlen(key), value,
                                                         len);
    ct__store_leave(store);
    return ok ? CT_OK : ct__dist_fail(CT_ERR_IO, op, "cannot store key '%s'", key);
}

/* One look for key: *found, and with it up to cap bytes in value and the length in *len. */
static ct_status ct__store_try_get(ct_store *s, const char *key, void *value, size_t cap,
                                   bool *found, uint64_t *len, const char *op)
{
    if (ct__store_is_client(s)) {
        uint8_t f = 0;
        pthread_mutex_lock(&s->mu);
        if (!ct__tcp_request(s, CT__TCP_GET, key, NULL, 0, &f) ||
            !ct__io_all(s->fd, len, sizeof *len, false)) {
            return ct__store_lost(s, op);
        }
        bool ok = true;
        for (uint64_t i = 0; i < *len && ok; i++) { /* the bytes beyond cap are read, dropped */
            uint8_t b;
            ok = ct__io_all(s->fd, &b, 1, false);
            if (ok && i < cap) {
                ((uint8_t *)value)[i] = b;
            }
        }
        if (!ok) {
            return ct__store_lost(s, op);
        }
        pthread_mutex_unlock(&s->mu);
        *found = f != 0;
        return CT_OK;
    }
    ct_status st = ct__store_enter(s, F_RDLCK, op);
    if (st != CT_OK) {
        return st;
    }
    const ct__kv *e = ct__kv_find(&s->map, key);
    *found = e != NULL;
    *len = e ? e->len : 0;
    if (e && value) {
        memcpy(value, e->val, e->len < cap ? e->len : cap);
    }
    ct__store_leave(s);
    return CT_OK;
}

/* Waits for key until end_ms (polled with a growing pause); the value as ct__store_try_get. */
static ct_status ct__store_await(ct_store *s, const char *key, void *value, size_t cap,
                                 uint64_t *len, int64_t timeout_ms, const char *op)
{
    int64_t end = ct__store_now_ms() + timeout_ms;
    for (int wait = 1;; wait = wait < 64 ? 2 * wait : wait) {
        bool found = false;
        ct_status st = ct__store_try_get(s, key, value, cap, &found, len, op);
        if (st != CT_OK || found) {
            return st;
        }
        if (ct__store_now_ms() > end) {
            return ct__dist_fail(CT_ERR_DIST, op, "Wait timeout after %lld ms for key(s): [%s]",
                                 (long long)timeout_ms, key);
        }
        ct__store_sleep(wait);
    }
}

int64_t ct_store_get(ct_store *store, const char *key, void *value, size_t cap)
{
    const char *op = "ct_store_get";
    if (!store || !key || (!value && cap > 0)) {
        ct_error_set(CT_ERR_NULL_ARG, op, "store, key or value is NULL");
        return -1;
    }
    uint64_t len = 0;
    ct_status st = ct__store_await(store, key, value, cap, &len, store->timeout_ms, op);
    return st == CT_OK ? (int64_t)len : -1;
}

int64_t ct_store_add(ct_store *store, const char *key, int64_t amount)
{
    const char *op = "ct_store_add";
    if (!store || !key) {
        ct_error_set(CT_ERR_NULL_ARG, op, "store or key is NULL");
        return INT64_MIN;
    }
    if (ct__store_is_client(store)) {
        uint8_t st = 0;
        int64_t v = 0;
        pthread_mutex_lock(&store->mu);
        if (!ct__tcp_request(store, CT__TCP_ADD, key, &amount, sizeof amount, &st) ||
            !ct__io_all(store->fd, &v, sizeof v, false)) {
            ct__store_lost(store, op);
            return INT64_MIN;
        }
        pthread_mutex_unlock(&store->mu);
        if (!st) {
            ct__dist_fail(CT_ERR_VALUE, op, "the value of key '%s' is not an integer", key);
            return INT64_MIN;
        }
        return v;
    }
    if (ct__store_enter(store, F_WRLCK, op) != CT_OK) {
        return INT64_MIN;
    }
    char text[32];
    bool counter = ct__kv_counter(&store->map, key, amount, text);
    size_t n = strlen(text);
    bool ok = counter && (store->kind == CT__STORE_FILE
                              ? ct__file_append(store, key, text, n)
                              : ct__kv_set(&store->map, key, strlen(key), text, n));
    ct__store_leave(store);
    if (!counter) {
        ct__dist_fail(CT_ERR_VALUE, op, "the value of key '%s' is not an integer", key);
        return INT64_MIN;
    }
    if (!ok) {
        ct__dist_fail(CT_ERR_IO, op, "cannot store key '%s'", key);
        return INT64_MIN;
    }
    return (int64_t)strtoll(text, NULL, 10);
}

ct_status ct_store_wait(ct_store *store, const char *const *keys, int n, int64_t timeout_ms)
{
    const char *op = "ct_store_wait";
    if (!store || (!keys && n > 0)) {
        return ct_error_set(CT_ERR_NULL_ARG, op, "store or keys is NULL");
    }
    int64_t end = ct__store_now_ms() + (timeout_ms < 0 ? store->timeout_ms : timeout_ms);
    for (int i = 0; i < n; i++) {
        uint64_t len = 0;
        if (!keys[i]) {
            return ct__dist_fail(CT_ERR_NULL_ARG, op, "keys[%d] is NULL", i);
        }
        int64_t left = end - ct__store_now_ms();
        ct_status st = ct__store_await(store, keys[i], NULL, 0, &len, left > 0 ? left : 0, op);
        if (st != CT_OK) {
            return st;
        }
    }
    return CT_OK;
}

ct_status ct_store_set_timeout(ct_store *store, int64_t timeout_ms)
{
    if (!store) {
        return ct_error_set(CT_ERR_NULL_ARG, "ct_store_set_timeout", "store is NULL");
    }
    if (timeout_ms <= 0) {
        return ct__dist_fail(CT_ERR_VALUE, "ct_store_set_timeout", "timeout must be positive, "
                             "got %lld ms", (long long)timeout_ms);
    }
    store->timeout_ms = timeout_ms;
    return CT_OK;
}

void ct_store_free(ct_store *store)
{
    if (!store) {
        return;
    }
    if (store->serving) {
        pthread_mutex_lock(&store->mu);
        store->stop = true;
        pthread_mutex_unlock(&store->mu);
        pthread_join(store->server, NULL);
    }
    if (store->listen_fd >= 0) {
        close(store->listen_fd);
    }
    if (store->fd >= 0) {
        close(store->fd);
    }
    ct__kv_clear(&store->map);
    pthread_mutex_destroy(&store->mu);
    free(store);
}

/* ---- env:// ---------------------------------------------------------------------------- */
/* The value of the environment variable name; NULL after recording PyTorch's error. */
static const char *ct__env_required(const char *name, const char *op)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        ct__dist_fail(CT_ERR_VALUE, op, "Error initializing torch.distributed using env:// "
                      "rendezvous: environment variable %s expected, but not set", name);
        return NULL;
    }
    return v;
}

/* Sets "ct_dist_init_env/<what>/<rank>", then waits for those of ranks 0..n-1. */
static ct_status ct__env_barrier(ct_store *s, const char *what, int rank, int n)
{
    char key[96];
    snprintf(key, sizeof key, "ct_dist_init_env/%s/%d", what, rank);
    ct_status st = ct_store_set(s, key, "", 0);
    for (int k = 0; k < n && st == CT_OK; k++) {
        const char *keys[1] = {key};
        snprintf(key, sizeof key, "ct_dist_init_env/%s/%d", what, k);
        st = ct_store_wait(s, keys, 1, -1);
    }
    return st;
}

ct_status ct_dist_init_env(const char *backend, int64_t timeout_ms)
{
    const char *op = "ct_dist_init_env";
    const char *rank_s = ct__env_required("RANK", op);
    const char *world_s = rank_s ? ct__env_required("WORLD_SIZE", op) : NULL;
    const char *addr = world_s ? ct__env_required("MASTER_ADDR", op) : NULL;
    const char *port_s = addr ? ct__env_required("MASTER_PORT", op) : NULL;
    if (!port_s) {
        return ct_error_code();
    }
    int rank = atoi(rank_s), world = atoi(world_s), port = atoi(port_s);
    if (rank < 0 || world < 1 || rank >= world) {
        return ct__dist_fail(CT_ERR_VALUE, op, "RANK %s and WORLD_SIZE %s do not make a rank of "
                             "the world", rank_s, world_s);
    }
    /* the rendezvous: every rank checks in with rank 0's store and waits for the others;
       then the master serves until every rank has seen them all */
    ct_store *s = ct_tcp_store_new(addr, port, world, rank == 0, timeout_ms, true);
    ct_status st = s ? ct__env_barrier(s, "joined", rank, world) : ct_error_code();
    if (st == CT_OK) {
        st = ct__env_barrier(s, "done", rank, rank == 0 ? world : 0);
    }
    ct_store_free(s);
    if (st != CT_OK) {
        return st;
    }
    ct_dist_init_opts o = ct_dist_init_defaults();
    o.rank = rank;
    o.world_size = world;
    o.timeout_ms = timeout_ms;
    return ct_dist_init_process_group(backend, &o);
}

#undef CT__STORE_TIMEOUT_MS

#endif /* CTORCH_DIST_IMPLEMENTATION */

/*
 ctorch is available under the MIT License.

 Copyright (c) 2026 the ctorch authors

 Permission is hereby granted, free of charge, to any person obtaining a copy of this
 software and associated documentation files (the "Software"), to deal in the Software
 without restriction, including without limitation the rights to use, copy, modify, merge,
 publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 to whom the Software is furnished to do so, subject to the following conditions:

 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.

 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 DEALINGS IN THE SOFTWARE.
*/
