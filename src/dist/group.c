/* dist/group.c - the default process group, new groups, errors, and works (wait, timeout). */
#include "internal.h"

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
