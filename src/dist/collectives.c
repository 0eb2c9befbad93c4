/* dist/collectives.c - the collectives and point-to-point ops on MPI (CPU) and NCCL (CUDA).
 *
 * Each op checks its group and tensors, stages the tensors into contiguous buffers of the
 * engine's dtype (ct__dist_stage; half types are reduced in float32 on MPI), starts the
 * engine's nonblocking call and hands the work to ct__dist_finish (wait now, or async).
 */
#include "internal.h"

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
