/* dist/internal.h - private declarations shared by the parts of ctorch_dist.h. */
#include "dist.h"

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
