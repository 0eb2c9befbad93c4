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
#include "../../ctorch.h" /* the generated ctorch_dist.h includes "ctorch.h" beside it */

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
