/* dist/ddp.c - DistributedDataParallel: buckets, the reducer's autograd hooks, comm hooks. */
#include "internal.h"

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
