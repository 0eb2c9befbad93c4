/* data/dataloader.c - DataLoader: a batch sampler (the user's, or BatchSampler over the
 * user's sampler, a RandomSampler with shuffle, or a SequentialSampler), batched fetches, and
 * worker threads.
 *
 * RNG stream (as PyTorch's iterators): each new iterator (every epoch, or once with
 * persistent workers) draws a 64-bit base seed from the loader's generator; the samplers
 * then draw as they do on their own (sampler.c).
 * Workers (as _MultiProcessingDataLoaderIter): a ring of cap = prefetch_factor * W tasks;
 * task k (the epoch's k-th batch) is worker k % W's, each worker runs its tasks in order
 * on its own thread (own default generator, own scopes), keeps the batch out of its scope
 * (an unscoped reference), and the caller takes the tasks in order, handing each batch to
 * its current scope, then queues the next batch: at most cap batches are in flight, the
 * sampler runs on the caller's thread only. One mutex guards the ring's states and
 * counters; a task's indices and outputs belong to whoever holds its state (QUEUED: the
 * caller wrote them before publishing; RUNNING: the worker; DONE: the caller).
 * Iterable datasets with workers: worker w iterates its own replica and puts its j-th batch
 * of the epoch in slot (w + j * W) % cap (the slots of its tasks above) whenever that slot is
 * FREE, up to prefetch_factor batches ahead, with n = 0 marking the end of its stream; the
 * caller takes the workers' batches round robin, skipping a worker once it took that end
 * (PyTorch's _workers_status), and frees each slot it took.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "../core/scope.h"
#include "dataset.h"
#include "sampler.h"
#include "dataloader.h"

#include <stdio.h> /* snprintf */

/* CT__DL_THREADS: worker threads exist (pthreads). */
#if !defined(CTORCH_NO_THREADS) && (defined(__unix__) || defined(__APPLE__))
#define CT__DL_THREADS 1
#include <pthread.h>
#include <time.h> /* timespec_get */
#endif

CT__GLUE_BEGIN

enum { CT__TASK_FREE, CT__TASK_QUEUED, CT__TASK_RUNNING, CT__TASK_DONE };

typedef struct ct__dl_task {
    int64_t *idx; /* room for the batch sampler's batch_size */
    int64_t n;
    int state;
    ct_status status;
    int64_t failed; /* the sample index whose fetch failed, -1 unknown */
    char msg[400];  /* the worker's error message */
    ct_tensor *out[CT_DATASET_MAX_FIELDS]; /* unscoped until delivered */
} ct__dl_task;

typedef struct ct__dl_worker {
    ct_dataloader *dl;
    ct_worker_info info;
    ct_generator *gen;            /* the thread's default generator */
    ct_iterable_dataset *replica; /* iterable: this worker's clone of the dataset, else NULL */
    int64_t taken;                /* iterable, caller: this worker's batches taken this epoch */
    bool finished;                /* iterable, caller: it took this worker's end */
#ifdef CT__DL_THREADS
    pthread_t thread;
#endif
} ct__dl_worker;

struct ct_dataloader {
    ct_dataset *ds;           /* borrowed; NULL for an iterable dataset */
    ct_iterable_dataset *ids; /* borrowed, or NULL */
    int n_fields;
    ct_dataloader_opts opts;
    ct_sampler *own_sampler; /* Random or Sequential when opts.sampler is NULL */
    ct_sampler *own_batch;   /* BatchSampler when opts.batch_sampler is NULL */
    ct_sampler *batches;     /* the batch sampler in use */
    bool started;            /* an epoch is under way */
    bool exhausted;          /* the batch sampler ended this epoch */
    int64_t *idx;            /* the batch being fetched without workers */
    /* workers */
    int nworkers; /* running threads: 0 or opts.num_workers */
    ct__dl_worker *workers;
    ct__dl_task *tasks;
    int64_t cap;        /* tasks in the ring */
    int64_t send, rcvd; /* tasks queued / delivered this epoch */
    uint64_t gen;       /* bumped at each epoch start: workers restart their count */
    bool quit;
    bool streaming; /* iterable: an epoch is under way, workers may fill FREE slots */
    int turn;       /* iterable, caller: the worker whose batch comes next */
    int active;     /* iterable, caller: workers whose end it has not taken */
#ifdef CT__DL_THREADS
    pthread_mutex_t lock;
    pthread_cond_t work_cv; /* a task was queued, an epoch started, or quit */
    pthread_cond_t done_cv; /* a task finished */
#endif
};

static CT__THREAD_LOCAL const ct_worker_info *ct__worker_info_tl = NULL;

const ct_worker_info *ct_get_worker_info(void)
{
    return ct__worker_info_tl;
}

void ct_seed_worker(int worker_id, void *user)
{
    if (worker_id < 0) {
        ct__fail(CT_ERR_VALUE, "ct_seed_worker", "worker_id must be non-negative, got %d",
                 worker_id);
        return;
    }
    ct_generator *g = user ? ((ct_generator *const *)user)[worker_id] : NULL;
    if (g) {
        ct_generator_manual_seed(g, ct_initial_seed() % ((uint64_t)1 << 32));
    }
}

ct_dataloader_opts ct_dataloader_defaults(void)
{
    ct_dataloader_opts o;
    memset(&o, 0, sizeof o);
    o.batch_size = 1;
    o.prefetch_factor = 2;
    return o;
}

/* The fetch of one batch: the dataset's batched path without a collate callback, else
   per-sample gets and the collate. *failed: the failing sample index, -1 unknown. */
static ct_status ct__dl_fetch(const ct_dataloader *dl, const int64_t *idx, int64_t n,
                              ct_tensor **out, int64_t *failed)
{
    *failed = -1;
    if (!dl->opts.collate_fn && dl->ds->get_batch) {
        return ct_dataset_get_batch(dl->ds, idx, n, out);
    }
    return ct__dataset_collect(dl->ds, idx, n, dl->opts.collate_fn, dl->opts.collate_user, out,
                               failed);
}

/* With pin_memory and a backend that has pinned memory, replaces each of the batch's nf
   fields (scoped) by its pinned copy, as PyTorch's pin_memory thread does; without such a
   backend the batch stays as it is (PyTorch warns "no accelerator is found"). */
static ct_status ct__dl_pin(const ct_dataloader *dl, ct_tensor **out, int nf)
{
    if (!dl->opts.pin_memory || !ct__pin_backend()) {
        return CT_OK;
    }
    for (int f = 0; f < nf && out[f]; f++) {
        ct_tensor *p = ct_pin_memory(out[f]);
        if (!p) {
            return ct_error_code();
        }
        ct_free(out[f]);
        out[f] = p;
    }
    return CT_OK;
}

/* The iterator's base seed, as torch.empty((), dtype=torch.int64).random_(generator). */
static uint64_t ct__dl_base_seed(const ct_dataloader *dl)
{
    ct_tensor *t = ct_empty(NULL, 0, CT_INT64);
    uint64_t v = t && ct_random_(t, dl->opts.generator) ? (uint64_t)ct_item_int64(t) : 0;
    ct_free(t);
    return v;
}

/* ---- worker threads ------------------------------------------------------------------- */
#ifdef CT__DL_THREADS
/* Runs task t on worker w: the batch of t's indices, or for an iterable dataset the next
   batch of w's replica (after starting a pass when start; t->n = 0 at its end). The batch
   leaves the worker's scope unscoped. */
static void ct__dl_run_task(const ct_dataloader *dl, ct__dl_worker *w, ct__dl_task *t,
                            bool start)
{
    int nf = dl->n_fields;
    bool scoped = ct_scope_begin() == CT_OK;
    if (dl->ids) {
        t->failed = -1;
        t->n = 0;
        t->status = start ? ct_iterable_dataset_iter(w->replica) : CT_OK;
        if (t->status == CT_OK) {
            t->status = ct__iterable_collect(w->replica, dl->opts.batch_size, dl->opts.drop_last,
                                             dl->opts.collate_fn, dl->opts.collate_user, t->out,
                                             &t->n);
        }
    } else {
        t->status = ct__dl_fetch(dl, t->idx, t->n, t->out, &t->failed);
    }
    if (t->status == CT_OK) {
        t->status = ct__dl_pin(dl, t->out, nf);
    }
    if (t->status == CT_OK && scoped) {
        for (int f = 0; f < nf && t->out[f]; f++) {
            t->out[f] = ct_keep(t->out[f]);
        }
    }
    if (t->status != CT_OK) {
        snprintf(t->msg, sizeof t->msg, "%s", ct_error() ? ct_error() : "no message");
        ct_error_clear();
    }
    if (scoped) {
        ct_scope_end();
    }
}

static void *ct__dl_worker_main(void *arg)
{
    ct__dl_worker *w = (ct__dl_worker *)arg;
    ct_dataloader *dl = w->dl;
    ct__worker_info_tl = &w->info;
    ct__rng_set_thread_default(w->gen);
    if (dl->opts.worker_init_fn) {
        dl->opts.worker_init_fn(w->info.id, dl->opts.worker_init_user);
        ct_error_clear();
    }
    pthread_mutex_lock(&dl->lock);
    uint64_t gen = dl->gen + 1; /* differs: the first pass sets next */
    int64_t next = 0;           /* the task (the slot next % cap) this worker runs next */
    bool ended = false;         /* iterable: the replica's stream ended or failed */
    while (!dl->quit) {
        if (gen != dl->gen) {
            gen = dl->gen;
            next = w->info.id;
            ended = false;
        }
        ct__dl_task *t = &dl->tasks[next % dl->cap];
        bool ready = dl->ids ? dl->streaming && !ended && t->state == CT__TASK_FREE
                             : next < dl->send;
        if (ready) {
            t->state = CT__TASK_RUNNING;
            pthread_mutex_unlock(&dl->lock);
            ct__dl_run_task(dl, w, t, next == w->info.id);
            pthread_mutex_lock(&dl->lock);
            t->state = CT__TASK_DONE;
            ended = t->status != CT_OK || t->n == 0;
            next += w->info.num_workers;
            pthread_cond_broadcast(&dl->done_cv);
        } else {
            pthread_cond_wait(&dl->work_cv, &dl->lock);
        }
    }
    pthread_mutex_unlock(&dl->lock);
    ct__rng_set_thread_default(NULL);
    ct__worker_info_tl = NULL;
    return NULL;
}

/* Frees the batches in the ring that were never delivered; every task becomes FREE. The
   caller holds the lock and no task is RUNNING. */
static void ct__dl_clear_tasks(ct_dataloader *dl)
{
    for (int64_t k = 0; k < dl->cap; k++) {
        for (int f = 0; f < CT_DATASET_MAX_FIELDS; f++) {
            ct_free(dl->tasks[k].out[f]);
            dl->tasks[k].out[f] = NULL;
        }
        dl->tasks[k].state = CT__TASK_FREE;
    }
}

/* Whether a task is running; the caller holds the lock. */
static bool ct__dl_any_running(const ct_dataloader *dl)
{
    for (int64_t k = 0; k < dl->cap; k++) {
        if (dl->tasks[k].state == CT__TASK_RUNNING) {
            return true;
        }
    }
    return false;
}

/* Stops the workers (joining them) and frees the ring and the generators. */
static void ct__dl_join(ct_dataloader *dl)
{
    pthread_mutex_lock(&dl->lock);
    dl->quit = true;
    dl->streaming = false;
    pthread_cond_broadcast(&dl->work_cv);
    pthread_mutex_unlock(&dl->lock);
    for (int w = 0; w < dl->nworkers; w++) {
        pthread_join(dl->workers[w].thread, NULL);
    }
    for (int w = 0; w < dl->nworkers; w++) {
        ct_generator_free(dl->workers[w].gen);
        ct_iterable_dataset_free(dl->workers[w].replica);
    }
    if (dl->tasks) {
        ct__dl_clear_tasks(dl);
        for (int64_t k = 0; k < dl->cap; k++) {
            ct__free(dl->tasks[k].idx);
        }
    }
    ct__free(dl->tasks);
    ct__free(dl->workers);
    dl->tasks = NULL;
    dl->workers = NULL;
    dl->nworkers = 0;
    dl->cap = 0;
    dl->send = dl->rcvd = 0;
    dl->quit = false;
}

/* Ends the epoch's work: persistent workers stay (idle, their batches dropped), others are
   joined. */
static void ct__dl_stop(ct_dataloader *dl, bool keep_persistent)
{
    if (dl->nworkers == 0) {
        return;
    }
    if (!keep_persistent || !dl->opts.persistent_workers) {
        ct__dl_join(dl);
        return;
    }
    pthread_mutex_lock(&dl->lock);
    dl->send = dl->rcvd; /* nothing new starts */
    dl->streaming = false;
    while (ct__dl_any_running(dl)) {
        pthread_cond_wait(&dl->done_cv, &dl->lock);
    }
    ct__dl_clear_tasks(dl);
    pthread_mutex_unlock(&dl->lock);
}

/* A worker's replica of the loader's iterable dataset; NULL + error. */
static ct_iterable_dataset *ct__dl_replica(ct_iterable_dataset *ds)
{
    const char *op = "ct_dataloader_next";
    ct_iterable_dataset *r = ds->clone(ds);
    if (r && (!r->next || r->n_fields != ds->n_fields)) {
        ct__fail(CT_ERR_VALUE, op, "the iterable dataset's clone must have a next callback and "
                 "its %d fields (got %d)", ds->n_fields, r->n_fields);
        ct_iterable_dataset_free(r);
        return NULL;
    }
    if (!r && ct_error_code() == CT_OK) {
        ct__fail(CT_ERR_VALUE, op, "the iterable dataset's clone callback returned NULL");
    }
    return r;
}

/* Allocates the ring and starts W workers seeded base_seed + id (with their replicas of an
   iterable dataset). */
static bool ct__dl_spawn(ct_dataloader *dl, uint64_t base_seed)
{
    const char *op = "ct_dataloader_next";
    int nw = dl->opts.num_workers;
    dl->cap = (int64_t)dl->opts.prefetch_factor * nw;
    dl->tasks = (ct__dl_task *)ct__calloc(sizeof(ct__dl_task) * (size_t)dl->cap);
    dl->workers = (ct__dl_worker *)ct__calloc(sizeof(ct__dl_worker) * (size_t)nw);
    bool ok = dl->tasks && dl->workers;
    for (int64_t k = 0; ok && !dl->ids && k < dl->cap; k++) {
        size_t idx_bytes = sizeof(int64_t) * (size_t)dl->batches->batch_size;
        ok = (dl->tasks[k].idx = (int64_t *)ct__malloc(idx_bytes)) != NULL;
    }
    for (int w = 0; ok && w < nw; w++) {
        ct__dl_worker *wk = &dl->workers[w];
        wk->dl = dl;
        wk->info.id = w;
        wk->info.num_workers = nw;
        wk->info.seed = base_seed + (uint64_t)w;
        wk->info.dataset = dl->ds;
        wk->gen = ct_generator_new();
        wk->replica = wk->gen && dl->ids ? ct__dl_replica(dl->ids) : NULL;
        wk->info.iterable_dataset = wk->replica;
        ok = wk->gen != NULL && (!dl->ids || wk->replica);
        if (ok) {
            ct_generator_manual_seed(wk->gen, wk->info.seed);
            ok = pthread_create(&wk->thread, NULL, ct__dl_worker_main, wk) == 0;
        }
        if (!ok) {
            ct_generator_free(wk->gen);
            ct_iterable_dataset_free(wk->replica);
        }
        dl->nworkers += ok ? 1 : 0;
    }
    if (!ok) {
        if (!dl->tasks) {
            dl->cap = 0;
        }
        ct__dl_join(dl);
        ct__fail(CT_ERR_OOM, op, "could not start %d DataLoader worker threads", nw);
    }
    return ok;
}

/* Queues the next batch of the sampler when fewer than cap are in flight. */
static bool ct__dl_put(ct_dataloader *dl)
{
    if (dl->exhausted || dl->send - dl->rcvd >= dl->cap) {
        return true;
    }
    ct__dl_task *t = &dl->tasks[dl->send % dl->cap];
    int64_t n = ct_sampler_next(dl->batches, t->idx);
    if (n <= 0) {
        dl->exhausted = true;
        return n == 0;
    }
    pthread_mutex_lock(&dl->lock);
    t->n = n;
    t->state = CT__TASK_QUEUED;
    dl->send++;
    pthread_cond_broadcast(&dl->work_cv);
    pthread_mutex_unlock(&dl->lock);
    return true;
}

/* Waits for task t; false + error after opts.timeout seconds. */
static bool ct__dl_wait(ct_dataloader *dl, const ct__dl_task *t)
{
    struct timespec until;
    if (dl->opts.timeout > 0) {
        timespec_get(&until, TIME_UTC);
        double s = (double)until.tv_sec + until.tv_nsec * 1e-9 + dl->opts.timeout;
        until.tv_sec = (time_t)s;
        until.tv_nsec = (long)((s - (double)until.tv_sec) * 1e9);
    }
    bool timed_out = false;
    pthread_mutex_lock(&dl->lock);
    while (t->state != CT__TASK_DONE && !timed_out) {
        if (dl->opts.timeout > 0) {
            timed_out = pthread_cond_timedwait(&dl->done_cv, &dl->lock, &until) != 0 &&
                        t->state != CT__TASK_DONE;
        } else {
            pthread_cond_wait(&dl->done_cv, &dl->lock);
        }
    }
    pthread_mutex_unlock(&dl->lock);
    if (timed_out) {
        ct__fail(CT_ERR_STATE, "ct_dataloader_next", "DataLoader timed out after %g seconds",
                 dl->opts.timeout);
    }
    return !timed_out;
}

static bool ct__dl_start_workers(ct_dataloader *dl)
{
    if (dl->nworkers == 0 && !ct__dl_spawn(dl, ct__dl_base_seed(dl))) {
        return false;
    }
    if (!dl->ids && ct_sampler_iter(dl->batches) != CT_OK) {
        return false;
    }
    pthread_mutex_lock(&dl->lock);
    dl->send = dl->rcvd = 0;
    dl->gen++;
    dl->streaming = dl->ids != NULL;
    pthread_cond_broadcast(&dl->work_cv);
    pthread_mutex_unlock(&dl->lock);
    dl->exhausted = false;
    dl->started = true;
    dl->turn = 0;
    dl->active = dl->nworkers;
    for (int w = 0; w < dl->nworkers; w++) {
        dl->workers[w].taken = 0;
        dl->workers[w].finished = false;
    }
    for (int64_t k = 0; !dl->ids && k < dl->cap; k++) {
        if (!ct__dl_put(dl)) {
            return false;
        }
    }
    return true;
}

/* Takes the delivered task's batch into the caller's scope, or turns its failure into the
   caller's error (nth: the worker's batch number, for an iterable dataset). */
static bool ct__dl_deliver(ct_dataloader *dl, ct__dl_task *t, int worker, int64_t nth,
                           ct_tensor **batch)
{
    int nf = dl->n_fields;
    if (t->status != CT_OK) {
        if (dl->ids) {
            ct__fail(t->status, "ct_dataloader_next", "Caught a %s error in DataLoader worker %d "
                     "while fetching its batch %lld of the iterable dataset: %s",
                     ct_status_str(t->status), worker, (long long)nth, t->msg);
        } else if (t->failed >= 0) {
            ct__fail(t->status, "ct_dataloader_next", "Caught a %s error in DataLoader worker %d "
                     "while fetching sample index %lld: %s", ct_status_str(t->status), worker,
                     (long long)t->failed, t->msg);
        } else {
            ct__fail(t->status, "ct_dataloader_next", "Caught a %s error in DataLoader worker %d "
                     "while fetching the batch of sample indices %lld..: %s",
                     ct_status_str(t->status), worker, (long long)t->idx[0], t->msg);
        }
        return false;
    }
    for (int f = 0; f < nf; f++) {
        batch[f] = ct__scoped(t->out[f]);
        t->out[f] = NULL;
    }
    return true;
}

static bool ct__dl_next_workers(ct_dataloader *dl, ct_tensor **batch)
{
    if (!dl->started && !ct__dl_start_workers(dl)) {
        ct__dl_stop(dl, true);
        dl->started = false;
        return false;
    }
    if (dl->rcvd == dl->send) {
        ct__dl_stop(dl, true);
        dl->started = false;
        return false;
    }
    ct__dl_task *t = &dl->tasks[dl->rcvd % dl->cap];
    int worker = (int)(dl->rcvd % dl->nworkers);
    bool ok = ct__dl_wait(dl, t);
    if (ok) { /* deliver before queueing: the next task may take t's slot */
        dl->rcvd++;
        ok = ct__dl_deliver(dl, t, worker, -1, batch);
        t->state = CT__TASK_FREE;
        ok = ok && ct__dl_put(dl);
    }
    if (!ok) {
        for (int f = 0; f < dl->n_fields; f++) {
            ct_free(batch[f]);
            batch[f] = NULL;
        }
        ct__dl_stop(dl, true);
        dl->started = false;
    }
    return ok;
}

/* The next batch of an iterable dataset's workers: round robin over the workers whose stream
   has not ended; false at the end of the epoch (every stream ended) or on an error. */
static bool ct__dl_next_iterable_workers(ct_dataloader *dl, ct_tensor **batch)
{
    if (!dl->started && !ct__dl_start_workers(dl)) {
        ct__dl_stop(dl, true);
        dl->started = false;
        return false;
    }
    bool ok = true, got = false;
    while (ok && !got && dl->active > 0) {
        ct__dl_worker *w = &dl->workers[dl->turn];
        dl->turn = (dl->turn + 1) % dl->nworkers;
        if (w->finished) {
            continue;
        }
        ct__dl_task *t = &dl->tasks[(w->info.id + w->taken * dl->nworkers) % dl->cap];
        ok = ct__dl_wait(dl, t);
        if (ok) {
            w->taken++;
            if (t->status == CT_OK && t->n == 0) {
                w->finished = true;
                dl->active--;
            } else {
                ok = got = ct__dl_deliver(dl, t, w->info.id, w->taken - 1, batch);
            }
            pthread_mutex_lock(&dl->lock);
            t->state = CT__TASK_FREE;
            pthread_cond_broadcast(&dl->work_cv);
            pthread_mutex_unlock(&dl->lock);
        }
    }
    if (!got) {
        ct__dl_stop(dl, true);
        dl->started = false;
    }
    return got;
}
#endif

/* ---- the loader ---------------------------------------------------------------------- */
static bool ct__dl_check_opts(const char *op, const ct_dataloader_opts *o,
                              const ct_iterable_dataset *ids)
{
    bool iterable = ids != NULL;
    const char *bad = NULL;
    if (iterable && (o->sampler || o->batch_sampler || o->shuffle)) {
        bad = "DataLoader with IterableDataset: expected unspecified sampler, batch_sampler and "
              "shuffle options";
    } else if (o->batch_sampler && (o->batch_size != 1 || o->shuffle || o->sampler || o->drop_last)) {
        bad = "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
              "and drop_last";
    } else if (o->sampler && o->shuffle) {
        bad = "sampler option is mutually exclusive with shuffle";
    } else if (o->num_workers < 0) {
        bad = "num_workers option should be non-negative; use num_workers=0 to disable "
              "multiprocessing.";
    } else if (o->num_workers > 0 && o->prefetch_factor < 1) {
        bad = "prefetch_factor option must be a positive integer";
    } else if (o->persistent_workers && o->num_workers == 0) {
        bad = "persistent_workers option needs num_workers > 0";
    } else if (!(o->timeout >= 0)) {
        bad = "timeout option should be non-negative";
    } else if (o->sampler && o->sampler->batch_size != 0) {
        bad = "the sampler must yield single indices (pass a batch sampler as batch_sampler)";
    } else if (o->batch_sampler && o->batch_sampler->batch_size < 1) {
        bad = "the batch_sampler must yield batches (its batch_size field must be >= 1)";
    }
    if (bad) {
        ct__fail(CT_ERR_VALUE, op, "%s", bad);
        return false;
    }
    if (o->batch_size < 1) {
        ct__fail(CT_ERR_VALUE, op, "batch_size should be a positive integer value, but got "
                 "batch_size=%lld", (long long)o->batch_size);
        return false;
    }
    if (iterable && o->num_workers > 0 && !ids->clone) {
        ct__fail(CT_ERR_VALUE, op, "num_workers=%d over an iterable dataset needs its clone "
                 "callback: each worker iterates its own replica", o->num_workers);
        return false;
    }
#ifndef CT__DL_THREADS
    if (o->num_workers > 0) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "num_workers=%d needs worker threads, which this build "
                 "lacks (CTORCH_NO_THREADS or no pthreads): use num_workers=0", o->num_workers);
        return false;
    }
#endif
    return true;
}

/* Builds the samplers the options leave to the loader. */
static bool ct__dl_samplers(ct_dataloader *dl)
{
    const ct_dataloader_opts *o = &dl->opts;
    if (o->batch_sampler) {
        dl->batches = o->batch_sampler;
    } else {
        ct_sampler *s = o->sampler;
        if (!s) {
            s = dl->own_sampler = o->shuffle ? ct_random_sampler_new(dl->ds, false, 0,
                                                                      o->generator)
                                             : ct_sequential_sampler_new(dl->ds);
        }
        dl->batches = dl->own_batch = s ? ct_batch_sampler_new(s, o->batch_size, o->drop_last)
                                        : NULL;
    }
    if (!dl->batches) {
        return false;
    }
    dl->idx = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)dl->batches->batch_size);
    if (!dl->idx) {
        ct__fail(CT_ERR_OOM, "ct_dataloader_new", "out of memory");
    }
    return dl->idx != NULL;
}

/* A loader over ds or ids (one of them) with checked options; NULL + error. */
static ct_dataloader *ct__dl_new(const char *op, ct_dataset *ds, ct_iterable_dataset *ids,
                                 const ct_dataloader_opts *opts)
{
    ct_dataloader_opts o = opts ? *opts : ct_dataloader_defaults();
    if (!ct__dl_check_opts(op, &o, ids)) {
        return NULL;
    }
    ct_dataloader *dl = (ct_dataloader *)ct__calloc(sizeof(ct_dataloader));
    if (!dl) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    dl->ds = ds;
    dl->ids = ids;
    dl->n_fields = ds ? ds->n_fields : ids->n_fields;
    dl->opts = o;
#ifdef CT__DL_THREADS
    pthread_mutex_init(&dl->lock, NULL);
    pthread_cond_init(&dl->work_cv, NULL);
    pthread_cond_init(&dl->done_cv, NULL);
#endif
    if (ds && !ct__dl_samplers(dl)) {
        ct_dataloader_free(dl);
        return NULL;
    }
    return dl;
}

ct_dataloader *ct_dataloader_new(ct_dataset *ds, const ct_dataloader_opts *opts)
{
    const char *op = "ct_dataloader_new";
    if (ct__null(op, ds) || ct_dataset_len(ds) < 0) {
        return NULL;
    }
    return ct__dl_new(op, ds, NULL, opts);
}

ct_dataloader *ct_dataloader_new_iterable(ct_iterable_dataset *ds, const ct_dataloader_opts *opts)
{
    const char *op = "ct_dataloader_new_iterable";
    if (ct__null(op, ds)) {
        return NULL;
    }
    if (!ds->next || ds->n_fields < 1 || ds->n_fields > CT_DATASET_MAX_FIELDS) {
        ct__fail(CT_ERR_VALUE, op, "the iterable dataset's next callback must not be NULL and "
                 "its n_fields must be 1 to %d (got %d)", CT_DATASET_MAX_FIELDS, ds->n_fields);
        return NULL;
    }
    return ct__dl_new(op, NULL, ds, opts);
}

/* The next batch of an iterable dataset: batch_size samples of its stream (fewer at its end
   unless drop_last); false at the end of the stream. */
static bool ct__dl_next_iterable(ct_dataloader *dl, ct_tensor **batch)
{
    if (!dl->started) {
        (void)ct__dl_base_seed(dl);
        if (ct_iterable_dataset_iter(dl->ids) != CT_OK) {
            return false;
        }
        dl->started = true;
    }
    int64_t got;
    ct_status st = ct__iterable_collect(dl->ids, dl->opts.batch_size, dl->opts.drop_last,
                                        dl->opts.collate_fn, dl->opts.collate_user, batch, &got);
    dl->started = st == CT_OK && got > 0;
    return dl->started;
}

static bool ct__dl_next_main(ct_dataloader *dl, ct_tensor **batch)
{
    if (dl->ids) {
        return ct__dl_next_iterable(dl, batch);
    }
    if (!dl->started) {
        (void)ct__dl_base_seed(dl); /* the iterator's base seed (PyTorch's workers use it) */
        if (ct_sampler_iter(dl->batches) != CT_OK) {
            return false;
        }
        dl->started = true;
    }
    int64_t n = ct_sampler_next(dl->batches, dl->idx);
    if (n <= 0) {
        dl->started = false;
        return false;
    }
    int64_t failed;
    return ct__dl_fetch(dl, dl->idx, n, batch, &failed) == CT_OK;
}

bool ct_dataloader_next(ct_dataloader *dl, ct_tensor **batch)
{
    const char *op = "ct_dataloader_next";
    if (ct__null(op, dl) || ct__null(op, batch)) {
        return false;
    }
    for (int f = 0; f < dl->n_fields; f++) {
        batch[f] = NULL;
    }
    bool ok;
#ifdef CT__DL_THREADS
    if (dl->opts.num_workers > 0) {
        ct__profiler_range_begin(false,
                                 "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
        ok = dl->ids ? ct__dl_next_iterable_workers(dl, batch) : ct__dl_next_workers(dl, batch);
        ct__profiler_range_end();
        return ok;
    }
#endif
    ct__profiler_range_begin(false, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    ok = ct__dl_next_main(dl, batch) && ct__dl_pin(dl, batch, dl->n_fields) == CT_OK;
    ct__profiler_range_end();
    return ok;
}

void ct_dataloader_reset(ct_dataloader *dl)
{
    if (ct__null("ct_dataloader_reset", dl)) {
        return;
    }
#ifdef CT__DL_THREADS
    ct__dl_stop(dl, true);
#endif
    dl->started = false;
}

int64_t ct_dataloader_len(const ct_dataloader *dl)
{
    if (ct__null("ct_dataloader_len", dl)) {
        return -1;
    }
    return dl->ids ? -1 : ct_sampler_len(dl->batches);
}

/* Ends the current epoch and stops the workers, persistent ones too (an option changes). */
static void ct__dl_abandon(ct_dataloader *dl)
{
#ifdef CT__DL_THREADS
    ct__dl_stop(dl, false);
#endif
    dl->started = false;
}

ct_status ct_dataloader_set_num_workers(ct_dataloader *dl, int num_workers)
{
    const char *op = "ct_dataloader_set_num_workers";
    if (ct__null(op, dl)) {
        return CT_ERR_NULL_ARG;
    }
    ct_dataloader_opts o = dl->opts;
    o.num_workers = num_workers;
    if (!ct__dl_check_opts(op, &o, dl->ids)) {
        return ct_error_code();
    }
    ct__dl_abandon(dl);
    dl->opts.num_workers = num_workers;
    return CT_OK;
}

ct_status ct_dataloader_set_pin_memory(ct_dataloader *dl, bool pin_memory)
{
    if (ct__null("ct_dataloader_set_pin_memory", dl)) {
        return CT_ERR_NULL_ARG;
    }
    ct__dl_abandon(dl);
    dl->opts.pin_memory = pin_memory;
    return CT_OK;
}

void ct_dataloader_free(ct_dataloader *dl)
{
    if (!dl) {
        return;
    }
#ifdef CT__DL_THREADS
    ct__dl_stop(dl, false);
    pthread_mutex_destroy(&dl->lock);
    pthread_cond_destroy(&dl->work_cv);
    pthread_cond_destroy(&dl->done_cv);
#endif
    ct_sampler_free(dl->own_batch);
    ct_sampler_free(dl->own_sampler);
    ct__free(dl->idx);
    ct__free(dl);
}
CT__GLUE_END
