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
    for (int b = 0; b < d->n_buckets; b++) {
        if (d->buckets[b].work) {
            if (!ct_error()) {
                ct_work_wait(d->buckets[b].work);
            }
            ct_work_free(d->buckets[b].work);
            d->buckets[b].work = NULL;
        }
    }
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

/* A parameter's post-accumulate-grad hook. */
static void ct__ddp_param_ready(ct_tensor *param, void *user)
{
    ct__ddp_slot *s = (ct__ddp_slot *)user;
    ct_ddp *d = s->ddp;
    if (!d->armed || d->no_sync > 0) {
        return;
    }
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
