/* bench/profiler.c - the op profiler (torch.profiler): events recorded by the dispatcher,
 * the autograd engine, the optimizers, the DataLoader and the user's ranges; key averages,
 * PyTorch's table (torch/autograd/profiler_util.py's _build_table, _format_time,
 * _format_memory) and the Chrome trace.
 *
 * Storage: events live in chunks of CT__PROF_CHUNK_BYTES that never move, so an event's
 * index is its handle (with the profile's generation in the high bits, so a late handle of
 * an older profile is ignored); names and shapes live in a string arena of chunks of the
 * same size. Every block the profiler allocates has a power-of-two size, which the caching
 * allocator counts exactly, so the bytes it holds (own_bytes) are taken out of
 * ct_memory_allocated() when profile_memory measures the ops.
 * Nesting: each thread keeps the stack of its open events; an event's parent is the top of
 * its thread's stack when it opens, and closing it adds its duration (and memory) to the
 * parent's children's sums, from which the self values follow.
 * Determinism: the results depend on the clock only; times are integer nanoseconds until
 * they are printed.
 */
#include "../core/internal.h"

#include <stdarg.h>
#include <stdio.h> /* vsnprintf; FILE only without CTORCH_NO_STDIO */

CT__GLUE_BEGIN

#define CT__PROF_CHUNK_BYTES 65536 /* a power of two: the allocator counts it exactly */
#define CT__PROF_MAX_DEPTH 256     /* open events per thread */
#define CT__PROF_MAX_NAME 1023     /* bytes of a range name kept */
#define CT__PROF_MAX_SHAPES 4095   /* bytes of an op's shapes kept (cut after an entry) */
#define CT__PROF_GEN_SHIFT 40      /* a handle: (generation mod 2^23) << 40 | event index */
#define CT__PROF_GEN_MASK 0x7fffffu
#define CT__PROF_NAME_COL 55       /* PyTorch's max_name_column_width */
#define CT__PROF_SHAPES_COL 80     /* max_shapes_column_width */
#define CT__PROF_COL 12            /* DEFAULT_COLUMN_WIDTH */

#if !defined(CTORCH_NO_THREADS) && (defined(__GNUC__) || defined(__clang__))
#define CT__PROF_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define CT__PROF_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#define CT__PROF_LOAD(p) (*(p))
#define CT__PROF_STORE(p, v) (*(p) = (v))
#endif

typedef struct ct__prof_event {
    const char *name;          /* an op's static name, or a copy in the arena */
    const char *shapes;        /* "[[2, 3], []]" in the arena; NULL: "[]" */
    int64_t parent;            /* the enclosing open event of the same thread, or -1 */
    uint64_t begin_ns, end_ns; /* since the profile's begin */
    uint64_t child_ns;         /* the direct children's durations */
    int64_t mem, child_mem;    /* open: the live bytes at begin; closed: the change */
    double flops;
    int32_t tid;
    uint8_t kind; /* CT__PROF_OP, CT__PROF_FUNCTION or CT__PROF_USER */
    uint8_t open;
} ct__prof_event;

/* An event's kind: an op; a range PyTorch records with C++'s RECORD_FUNCTION (both trace
   category "cpu_op"); a range of Python's record_function ("user_annotation"). */
enum { CT__PROF_OP, CT__PROF_FUNCTION, CT__PROF_USER };

#define CT__PROF_PER_CHUNK ((int64_t)(CT__PROF_CHUNK_BYTES / sizeof(ct__prof_event)))

static struct {
    ct__mutex lock;
    int running; /* read by every op without the lock */
    bool recorded;
    uint64_t gen;
    ct_profiler_opts opts;
    uint64_t t0;
    ct__prof_event **chunks;
    int64_t n_chunks, chunk_cap, n_events, dropped;
    char *strings; /* the newest arena chunk; its first bytes point at the older one */
    size_t str_used;
    size_t own_bytes;
    int32_t n_threads;
} ct__prof;

/* This thread's open events, valid for the profile of generation gen; and the depths at
   which ranges could not be opened (their ends must not close another event). */
typedef struct ct__prof_thread {
    uint64_t gen;
    int32_t tid;
    int depth, n_lost;
    int64_t stack[CT__PROF_MAX_DEPTH];
    int lost_at[CT__PROF_MAX_DEPTH];
} ct__prof_thread;
static CT__THREAD_LOCAL ct__prof_thread ct__prof_tls;

ct_profiler_opts ct_profiler_defaults(void)
{
    ct_profiler_opts o;
    memset(&o, 0, sizeof o);
    return o;
}

/* ---- storage (the lock held) ------------------------------------------------------------ */
static void *ct__prof_alloc(size_t bytes)
{
    void *p = ct__malloc(bytes);
    if (p) {
        ct__prof.own_bytes += bytes;
    }
    return p;
}

static void ct__prof_release(void *p, size_t bytes)
{
    if (p) {
        ct__free(p);
        ct__prof.own_bytes -= bytes;
    }
}

static void ct__prof_free_all(void)
{
    for (int64_t c = 0; c < ct__prof.n_chunks; c++) {
        ct__prof_release(ct__prof.chunks[c], CT__PROF_CHUNK_BYTES);
    }
    ct__prof_release(ct__prof.chunks, sizeof(ct__prof_event *) * (size_t)ct__prof.chunk_cap);
    while (ct__prof.strings) {
        char *older;
        memcpy(&older, ct__prof.strings, sizeof older);
        ct__prof_release(ct__prof.strings, CT__PROF_CHUNK_BYTES);
        ct__prof.strings = older;
    }
    ct__prof.chunks = NULL;
    ct__prof.n_chunks = ct__prof.chunk_cap = ct__prof.n_events = 0;
    ct__prof.str_used = 0;
    ct__prof.recorded = false;
}

static ct__prof_event *ct__prof_at(int64_t i)
{
    return &ct__prof.chunks[i / CT__PROF_PER_CHUNK][i % CT__PROF_PER_CHUNK];
}

/* A new event slot's index; -1 (counted as dropped) when out of memory. */
static int64_t ct__prof_new_event(void)
{
    if (ct__prof.n_events == ct__prof.n_chunks * CT__PROF_PER_CHUNK) {
        if (ct__prof.n_chunks == ct__prof.chunk_cap) {
            int64_t cap = ct__prof.chunk_cap ? 2 * ct__prof.chunk_cap : 64;
            ct__prof_event **dir =
                (ct__prof_event **)ct__prof_alloc(sizeof(ct__prof_event *) * (size_t)cap);
            if (!dir) {
                ct__prof.dropped++;
                return -1;
            }
            if (ct__prof.n_chunks) {
                memcpy(dir, ct__prof.chunks, sizeof(ct__prof_event *) * (size_t)ct__prof.n_chunks);
            }
            ct__prof_release(ct__prof.chunks,
                             sizeof(ct__prof_event *) * (size_t)ct__prof.chunk_cap);
            ct__prof.chunks = dir;
            ct__prof.chunk_cap = cap;
        }
        ct__prof_event *chunk = (ct__prof_event *)ct__prof_alloc(CT__PROF_CHUNK_BYTES);
        if (!chunk) {
            ct__prof.dropped++;
            return -1;
        }
        ct__prof.chunks[ct__prof.n_chunks++] = chunk;
    }
    return ct__prof.n_events++;
}

/* A copy of s[0, len) in the arena (len < CT__PROF_CHUNK_BYTES - 16); NULL when out of
   memory. */
static const char *ct__prof_store(const char *s, size_t len)
{
    if (!ct__prof.strings || ct__prof.str_used + len + 1 > CT__PROF_CHUNK_BYTES) {
        char *chunk = (char *)ct__prof_alloc(CT__PROF_CHUNK_BYTES);
        if (!chunk) {
            return NULL;
        }
        memcpy(chunk, &ct__prof.strings, sizeof ct__prof.strings);
        ct__prof.strings = chunk;
        ct__prof.str_used = sizeof(char *);
    }
    char *p = ct__prof.strings + ct__prof.str_used;
    memcpy(p, s, len);
    p[len] = '\0';
    ct__prof.str_used += len + 1;
    return p;
}

/* ---- recording (the lock held) ---------------------------------------------------------- */
static uint64_t ct__prof_now(void)
{
    uint64_t t = ct__prof.opts.clock_ns(ct__prof.opts.clock_user);
    return t > ct__prof.t0 ? t - ct__prof.t0 : 0;
}

/* Live bytes, the profiler's own excluded. */
static int64_t ct__prof_mem(void)
{
    return (int64_t)ct_memory_allocated() - (int64_t)ct__prof.own_bytes;
}

/* This thread's stack, emptied (and given the next tid) on its first event of a profile. */
static ct__prof_thread *ct__prof_thread_state(void)
{
    ct__prof_thread *th = &ct__prof_tls;
    if (th->gen != ct__prof.gen) {
        th->gen = ct__prof.gen;
        th->depth = 0;
        th->n_lost = 0;
        th->tid = ++ct__prof.n_threads;
    }
    return th;
}

/* "[[2, 3], [3], []]": the tensor inputs' sizes ([] for an absent optional one), then a []
   per scalar attribute; stored in the arena (NULL when out of memory). */
static const char *ct__prof_shapes(const ct_op_call *c)
{
    char buf[CT__PROF_MAX_SHAPES + 1];
    size_t len = 1;
    buf[0] = '[';
    for (int k = 0; k < c->n_inputs + c->n_attrs; k++) {
        char one[8 * 24 + 8];
        size_t m = 0;
        const ct_tensor *t = k < c->n_inputs ? c->inputs[k] : NULL;
        m += (size_t)snprintf(one + m, sizeof one - m, "%s[", k ? ", " : "");
        for (int d = 0; t && d < t->ndim; d++) {
            m += (size_t)snprintf(one + m, sizeof one - m, "%s%lld", d ? ", " : "",
                                  (long long)t->sizes[d]);
        }
        one[m++] = ']';
        if (len + m + 1 > CT__PROF_MAX_SHAPES) {
            break;
        }
        memcpy(buf + len, one, m);
        len += m;
    }
    buf[len++] = ']';
    return ct__prof_store(buf, len);
}

/* Opens an event of kind on this thread (c: an op's call); its index, or -1 when the stack
   is full or out of memory. The clock is read last, so the bookkeeping is not part of the
   event. */
static int64_t ct__prof_open(const char *name, int kind, const ct_op_call *c)
{
    ct__prof_thread *th = ct__prof_thread_state();
    if (!name || th->depth == CT__PROF_MAX_DEPTH) {
        return -1;
    }
    int64_t i = ct__prof_new_event();
    if (i < 0) {
        return -1;
    }
    ct__prof_event *e = ct__prof_at(i);
    e->name = name;
    e->shapes = c && ct__prof.opts.record_shapes ? ct__prof_shapes(c) : NULL;
    e->flops = c && ct__prof.opts.with_flops && c->op->flops ? c->op->flops(c) : 0;
    e->parent = th->depth ? th->stack[th->depth - 1] : -1;
    e->child_ns = 0;
    e->child_mem = 0;
    e->tid = th->tid;
    e->kind = (uint8_t)kind;
    e->open = 1;
    th->stack[th->depth++] = i;
    e->mem = ct__prof.opts.profile_memory ? ct__prof_mem() : 0;
    e->begin_ns = e->end_ns = ct__prof_now();
    return i;
}

/* Closes event i at now and adds it to its parent's children. */
static void ct__prof_finish(int64_t i, uint64_t now)
{
    ct__prof_event *e = ct__prof_at(i);
    e->end_ns = now > e->begin_ns ? now : e->begin_ns;
    e->mem = ct__prof.opts.profile_memory ? ct__prof_mem() - e->mem : 0;
    e->open = 0;
    if (e->parent >= 0) {
        ct__prof_event *p = ct__prof_at(e->parent);
        p->child_ns += e->end_ns - e->begin_ns;
        p->child_mem += e->mem;
    }
}

/* Closes this thread's open event i and the events opened in it that are still open. */
static void ct__prof_close(ct__prof_thread *th, int64_t i)
{
    ct__prof_event *e = ct__prof_at(i);
    if (!e->open || e->tid != th->tid) {
        return;
    }
    uint64_t now = ct__prof_now();
    while (th->depth > 0) {
        int64_t top = th->stack[--th->depth];
        ct__prof_finish(top, now);
        if (top == i) {
            break;
        }
    }
}

int64_t ct__profiler_op_begin(const ct_op_call *c)
{
    if (!CT__PROF_LOAD(&ct__prof.running)) {
        return -1;
    }
    int64_t handle = -1;
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        int64_t i = ct__prof_open(c->op->name, CT__PROF_OP, c);
        handle = i < 0 ? -1
                       : (int64_t)((ct__prof.gen & CT__PROF_GEN_MASK) << CT__PROF_GEN_SHIFT) | i;
    }
    ct__mutex_unlock(&ct__prof.lock);
    return handle;
}

void ct__profiler_op_end(int64_t event, const ct_op_call *c)
{
    (void)c;
    if (event < 0) {
        return;
    }
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running &&
        (uint64_t)event >> CT__PROF_GEN_SHIFT == (ct__prof.gen & CT__PROF_GEN_MASK)) {
        ct__prof_close(ct__prof_thread_state(),
                       event & (((int64_t)1 << CT__PROF_GEN_SHIFT) - 1));
    }
    ct__mutex_unlock(&ct__prof.lock);
}

/* Opens a range of kind named name[0, len) (copied). CT_ERR_STATE when this thread's stack
   is full, CT_ERR_OOM when out of memory: the range is remembered as lost, so its end closes
   nothing. */
static ct_status ct__prof_range_open(const char *name, size_t len, int kind)
{
    ct_status st = CT_OK;
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        ct__prof_thread *th = ct__prof_thread_state();
        if (th->depth == CT__PROF_MAX_DEPTH) {
            st = CT_ERR_STATE;
        } else if (ct__prof_open(ct__prof_store(name, len), kind, NULL) < 0) {
            ct__prof.dropped++;
            st = CT_ERR_OOM;
        }
        if (st != CT_OK && th->n_lost < CT__PROF_MAX_DEPTH) {
            th->lost_at[th->n_lost++] = th->depth;
        }
    }
    ct__mutex_unlock(&ct__prof.lock);
    return st;
}

/* Ends this thread's innermost range: a lost one, or the innermost event when it is a range;
   false when it is an op or nothing is open. */
static bool ct__prof_range_close(void)
{
    bool ok = true;
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        ct__prof_thread *th = ct__prof_thread_state();
        if (th->n_lost > 0 && th->lost_at[th->n_lost - 1] == th->depth) {
            th->n_lost--;
        } else {
            ok = th->depth > 0 && ct__prof_at(th->stack[th->depth - 1])->kind != CT__PROF_OP;
            if (ok) {
                ct__prof_close(th, th->stack[th->depth - 1]);
            }
        }
    }
    ct__mutex_unlock(&ct__prof.lock);
    return ok;
}

void ct__profiler_range_begin(bool function, const char *fmt, ...)
{
    if (!CT__PROF_LOAD(&ct__prof.running)) {
        return;
    }
    char name[CT__PROF_MAX_NAME + 1];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    len = len < 0 ? 0 : len > CT__PROF_MAX_NAME ? CT__PROF_MAX_NAME : len;
    (void)ct__prof_range_open(name, (size_t)len, function ? CT__PROF_FUNCTION : CT__PROF_USER);
}

void ct__profiler_range_end(void)
{
    if (CT__PROF_LOAD(&ct__prof.running)) {
        (void)ct__prof_range_close();
    }
}

ct_status ct_record_function_begin(const char *name)
{
    const char *op = "ct_record_function_begin";
    if (ct__null(op, name)) {
        return CT_ERR_NULL_ARG;
    }
    if (!CT__PROF_LOAD(&ct__prof.running)) {
        return CT_OK;
    }
    size_t len = strlen(name);
    ct_status st = ct__prof_range_open(name, len < CT__PROF_MAX_NAME ? len : CT__PROF_MAX_NAME,
                                       CT__PROF_USER);
    if (st == CT_ERR_STATE) {
        return ct__fail(st, op, "more than %d ranges and ops open on this thread",
                        CT__PROF_MAX_DEPTH);
    }
    return st == CT_OK ? CT_OK : ct__fail(st, op, "out of memory");
}

ct_status ct_record_function_end(void)
{
    if (CT__PROF_LOAD(&ct__prof.running) && !ct__prof_range_close()) {
        return ct__fail(CT_ERR_STATE, "ct_record_function_end", "no range of "
                        "ct_record_function_begin is the innermost open event of this thread");
    }
    return CT_OK;
}

/* ---- begin, end, reset ------------------------------------------------------------------ */
ct_status ct_profiler_begin(const ct_profiler_opts *opts)
{
    const char *op = "ct_profiler_begin";
    ct_profiler_opts o = opts ? *opts : ct_profiler_defaults();
    if (!o.clock_ns) {
#ifdef CT__CLOCK
        o.clock_ns = ct__clock_ns;
#else
        return ct__fail(CT_ERR_UNSUPPORTED, op, "no default clock in this build "
                        "(CTORCH_NO_STDIO): set opts->clock_ns");
#endif
    }
    ct__mutex_lock(&ct__prof.lock);
    if (ct__prof.running) {
        ct__mutex_unlock(&ct__prof.lock);
        return ct__fail(CT_ERR_STATE, op, "the profiler is already running");
    }
    ct__prof_free_all();
    ct__prof.gen++;
    ct__prof.opts = o;
    ct__prof.n_threads = 0;
    ct__prof.dropped = 0;
    (void)ct__prof_thread_state(); /* this thread is tid 1 */
    ct__prof.t0 = o.clock_ns(o.clock_user);
    CT__PROF_STORE(&ct__prof.running, 1);
    ct__mutex_unlock(&ct__prof.lock);
    ct__dispatch_slow_add(1);
    return CT_OK;
}

ct_status ct_profiler_end(void)
{
    const char *op = "ct_profiler_end";
    ct__mutex_lock(&ct__prof.lock);
    if (!ct__prof.running) {
        ct__mutex_unlock(&ct__prof.lock);
        return ct__fail(CT_ERR_STATE, op, "the profiler is not running");
    }
    uint64_t now = ct__prof_now();
    for (int64_t i = ct__prof.n_events - 1; i >= 0; i--) { /* children before parents */
        if (ct__prof_at(i)->open) {
            ct__prof_finish(i, now);
        }
    }
    CT__PROF_STORE(&ct__prof.running, 0);
    ct__prof.recorded = true;
    int64_t dropped = ct__prof.dropped;
    ct__mutex_unlock(&ct__prof.lock);
    ct__dispatch_slow_add(-1);
    if (dropped) {
        return ct__fail(CT_ERR_OOM, op, "out of memory: %lld events were not recorded",
                        (long long)dropped);
    }
    return CT_OK;
}

ct_status ct_profiler_reset(void)
{
    ct__mutex_lock(&ct__prof.lock);
    bool running = ct__prof.running != 0;
    if (!running) {
        ct__prof_free_all();
    }
    ct__mutex_unlock(&ct__prof.lock);
    if (running) {
        return ct__fail(CT_ERR_STATE, "ct_profiler_reset", "the profiler is running: call "
                        "ct_profiler_end first");
    }
    return CT_OK;
}

/* ---- key averages (the lock held) ------------------------------------------------------- */
typedef struct ct__prof_row {
    const char *key, *shapes;
    uint64_t hash;
    int64_t count, total_ns, self_ns, mem, self_mem;
    double flops;
} ct__prof_row;

typedef struct ct__prof_avgs {
    ct__prof_row *rows;
    int64_t n, cap;
    int64_t *slots; /* open addressing: row index + 1, 0 for empty; cap * 2 of them */
} ct__prof_avgs;

static uint64_t ct__prof_hash(const char *s, uint64_t h)
{
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull; /* FNV-1a */
    }
    return h;
}

static int64_t *ct__prof_slot(const ct__prof_avgs *a, uint64_t hash, const char *key,
                              const char *shapes)
{
    uint64_t mask = (uint64_t)(2 * a->cap - 1);
    for (uint64_t s = hash & mask;; s = (s + 1) & mask) {
        const ct__prof_row *r = a->slots[s] ? &a->rows[a->slots[s] - 1] : NULL;
        if (!r || (r->hash == hash && !strcmp(r->key, key) && !strcmp(r->shapes, shapes))) {
            return &a->slots[s];
        }
    }
}

static bool ct__prof_avgs_grow(ct__prof_avgs *a)
{
    int64_t cap = a->cap ? 2 * a->cap : 64;
    ct__prof_row *rows = (ct__prof_row *)ct__realloc(a->rows, sizeof(ct__prof_row) * (size_t)cap);
    int64_t *slots = (int64_t *)ct__calloc(sizeof(int64_t) * (size_t)(2 * cap));
    if (rows) {
        a->rows = rows;
    }
    if (!rows || !slots) {
        ct__free(slots);
        return false;
    }
    ct__free(a->slots);
    a->slots = slots;
    a->cap = cap;
    for (int64_t r = 0; r < a->n; r++) {
        *ct__prof_slot(a, a->rows[r].hash, a->rows[r].key, a->rows[r].shapes) = r + 1;
    }
    return true;
}

/* Groups the events by (name, shapes) in the order each key first started (events are
   numbered in start order). False when out of memory. */
static bool ct__prof_average(ct__prof_avgs *a)
{
    memset(a, 0, sizeof *a);
    for (int64_t i = 0; i < ct__prof.n_events; i++) {
        const ct__prof_event *e = ct__prof_at(i);
        const char *shapes = e->shapes ? e->shapes : "[]";
        uint64_t hash = ct__prof_hash(shapes, ct__prof_hash(e->name, 0xcbf29ce484222325ull));
        if (2 * (a->n + 1) > a->cap && !ct__prof_avgs_grow(a)) {
            return false;
        }
        int64_t *slot = ct__prof_slot(a, hash, e->name, shapes);
        if (!*slot) {
            ct__prof_row *r = &a->rows[a->n++];
            memset(r, 0, sizeof *r);
            r->key = e->name;
            r->shapes = shapes;
            r->hash = hash;
            *slot = a->n;
        }
        ct__prof_row *r = &a->rows[*slot - 1];
        int64_t dur = (int64_t)(e->end_ns - e->begin_ns);
        r->count++;
        r->total_ns += dur;
        r->self_ns += dur - (int64_t)e->child_ns;
        r->mem += e->mem;
        r->self_mem += e->mem - e->child_mem;
        r->flops += e->flops;
    }
    return true;
}

static void ct__prof_avgs_free(ct__prof_avgs *a)
{
    ct__free(a->rows);
    ct__free(a->slots);
}

/* NULL when a finished profile can be read (the lock held), else why not. */
static const char *ct__prof_unreadable(void)
{
    return ct__prof.running    ? "the profiler is running: call ct_profiler_end first"
           : ct__prof.recorded ? NULL
                               : "no profile was recorded (ct_profiler_begin, then "
                                 "ct_profiler_end)";
}

/* Reports why a read failed (after the lock is released): why, else out of memory. */
static ct_status ct__prof_read_fail(const char *op, const char *why)
{
    return why ? ct__fail(CT_ERR_STATE, op, "%s", why) : ct__fail(CT_ERR_OOM, op, "out of memory");
}

int64_t ct_profiler_key_averages(ct_profiler_event_avg *rows, int64_t cap)
{
    const char *op = "ct_profiler_key_averages";
    if (cap < 0 || (rows == NULL && cap > 0)) {
        ct__fail(cap < 0 ? CT_ERR_VALUE : CT_ERR_NULL_ARG, op, "rows is NULL with cap %lld "
                 "(cap must be >= 0, and 0 when rows is NULL)", (long long)cap);
        return 0;
    }
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    ct__prof_avgs a;
    bool ok = !why && ct__prof_average(&a);
    if (!why && !ok) {
        ct__prof_avgs_free(&a);
    }
    int64_t n = 0;
    if (ok) {
        n = a.n;
        for (int64_t r = 0; r < n && r < cap; r++) {
            const ct__prof_row *s = &a.rows[r];
            ct_profiler_event_avg *d = &rows[r];
            d->key = s->key;
            d->input_shapes = s->shapes;
            d->count = s->count;
            d->cpu_time_total_us = (double)s->total_ns / 1000.0;
            d->self_cpu_time_total_us = (double)s->self_ns / 1000.0;
            d->cpu_memory_usage = s->mem;
            d->self_cpu_memory_usage = s->self_mem;
            d->flops = s->flops;
        }
        ct__prof_avgs_free(&a);
    }
    ct__mutex_unlock(&ct__prof.lock);
    if (!ok) {
        ct__prof_read_fail(op, why);
    }
    return n;
}

/* ---- text output --------------------------------------------------------------------------- */
/* Where text goes: a caller's buffer (snprintf-style: len counts all of it) or a file. */
typedef struct ct__prof_out {
    char *buf;
    size_t n, len;
#ifndef CTORCH_NO_STDIO
    FILE *f;
#endif
} ct__prof_out;

static void ct__prof_put(ct__prof_out *o, const char *s, size_t len)
{
#ifndef CTORCH_NO_STDIO
    if (o->f) {
        fwrite(s, 1, len, o->f);
        o->len += len;
        return;
    }
#endif
    if (o->buf && o->len + 1 < o->n) {
        size_t room = o->n - 1 - o->len;
        memcpy(o->buf + o->len, s, len < room ? len : room);
    }
    o->len += len;
}

static void ct__prof_puts(ct__prof_out *o, const char *s)
{
    ct__prof_put(o, s, strlen(s));
}

/* Formatted text of at most 255 bytes (numbers; strings go through ct__prof_put). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void ct__prof_putf(ct__prof_out *o, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    ct__prof_put(o, tmp, len < 0 ? 0 : (size_t)len < sizeof tmp ? (size_t)len : sizeof tmp - 1);
}

static size_t ct__prof_finish_out(ct__prof_out *o)
{
    if (o->buf && o->n) {
        o->buf[o->len < o->n ? o->len : o->n - 1] = '\0';
    }
    return o->len;
}

/* ---- the table ------------------------------------------------------------------------------ */
/* _format_time: microseconds as "1.234us", "1.234ms" or "1.234s". */
static void ct__prof_fmt_time(char *s, size_t n, double us)
{
    if (us >= 1e6) {
        snprintf(s, n, "%.3fs", us / 1e6);
    } else if (us >= 1e3) {
        snprintf(s, n, "%.3fms", us / 1e3);
    } else {
        snprintf(s, n, "%.3fus", us);
    }
}

/* _format_time_share: "12.34%" of total ("NaN" for a zero total). */
static void ct__prof_fmt_share(char *s, size_t n, int64_t part, int64_t total)
{
    if (total == 0) {
        snprintf(s, n, "NaN");
    } else {
        snprintf(s, n, "%.2f%%", (double)part * 100.0 / (double)total);
    }
}

/* _format_memory: "1.50 KB", "2.00 MB", "1.00 GB" or "12 B". */
static void ct__prof_fmt_memory(char *s, size_t n, int64_t bytes)
{
    const double kb = 1024.0, mb = 1024.0 * kb, gb = 1024.0 * mb;
    double b = (double)bytes, mag = fabs(b);
    if (mag >= gb) {
        snprintf(s, n, "%.2f GB", b / gb);
    } else if (mag >= mb) {
        snprintf(s, n, "%.2f MB", b / mb);
    } else if (mag >= kb) {
        snprintf(s, n, "%.2f KB", b / kb);
    } else {
        snprintf(s, n, "%lld B", (long long)bytes);
    }
}

/* A row's value for sort_by; false for an unknown sort_by. */
static bool ct__prof_sort_value(const char *sort_by, const ct__prof_row *r, double *v)
{
    if (!strcmp(sort_by, "self_cpu_time_total")) {
        *v = (double)r->self_ns;
    } else if (!strcmp(sort_by, "cpu_time_total")) {
        *v = (double)r->total_ns;
    } else if (!strcmp(sort_by, "count")) {
        *v = (double)r->count;
    } else if (!strcmp(sort_by, "self_cpu_memory_usage")) {
        *v = (double)r->self_mem;
    } else if (!strcmp(sort_by, "cpu_memory_usage")) {
        *v = (double)r->mem;
    } else if (!strcmp(sort_by, "flops")) {
        *v = r->flops;
    } else {
        return false;
    }
    return true;
}

typedef struct ct__prof_order {
    double value;
    int64_t row;
} ct__prof_order;

/* Largest value first, ties in row order: Python's stable sorted(reverse=True). */
static int ct__prof_order_cmp(const void *pa, const void *pb)
{
    const ct__prof_order *a = (const ct__prof_order *)pa, *b = (const ct__prof_order *)pb;
    if (a->value != b->value) {
        return a->value > b->value ? -1 : 1;
    }
    return a->row < b->row ? -1 : a->row > b->row;
}

/* The table's columns: widths, headers and the cells of one row. */
typedef struct ct__prof_table {
    int n_cols;
    int width[12];
    bool memory, shapes, flops;
    double flops_scale;
    const char *flops_header;
    int64_t self_total_ns;
} ct__prof_table;

static void ct__prof_cells(ct__prof_out *o, const ct__prof_table *t, const char *const *cells)
{
    for (int c = 0; c < t->n_cols; c++) {
        size_t len = strlen(cells[c]);
        for (size_t k = len; k < (size_t)t->width[c]; k++) {
            ct__prof_put(o, " ", 1);
        }
        ct__prof_put(o, cells[c], len);
        ct__prof_put(o, "  ", 2);
    }
    ct__prof_put(o, "\n", 1);
}

static void ct__prof_sep(ct__prof_out *o, const ct__prof_table *t)
{
    for (int c = 0; c < t->n_cols; c++) {
        for (int k = 0; k < t->width[c]; k++) {
            ct__prof_put(o, "-", 1);
        }
        ct__prof_put(o, "  ", 2);
    }
    ct__prof_put(o, "\n", 1);
}

/* Widths and optional columns from every row, as _build_table. */
static void ct__prof_layout(ct__prof_table *t, const ct__prof_avgs *a)
{
    static const char *const units[6] = {"FLOPs", "KFLOPs", "MFLOPs",
                                         "GFLOPs", "TFLOPs", "PFLOPs"};
    size_t name_w = 0, shapes_w = 0;
    double min_flops = 0;
    memset(t, 0, sizeof *t);
    for (int64_t r = 0; r < a->n; r++) {
        const ct__prof_row *row = &a->rows[r];
        size_t kl = strlen(row->key), sl = strlen(row->shapes);
        name_w = kl > name_w ? kl : name_w;
        shapes_w = sl > shapes_w ? sl : shapes_w;
        t->shapes = t->shapes || sl > 2;
        if (row->flops > 0 && (min_flops == 0 || row->flops < min_flops)) {
            min_flops = row->flops;
        }
        t->self_total_ns += row->self_ns;
    }
    t->memory = ct__prof.opts.profile_memory;
    t->flops = ct__prof.opts.with_flops && min_flops > 0;
    t->width[t->n_cols++] = (int)(name_w + 4 < CT__PROF_NAME_COL ? name_w + 4 : CT__PROF_NAME_COL);
    int fixed = 6 + (t->memory ? 2 : 0); /* five time columns, # of Calls, the memory ones */
    for (int c = 0; c < fixed; c++) {
        t->width[t->n_cols++] = CT__PROF_COL;
    }
    if (t->shapes) {
        t->width[t->n_cols++] =
            (int)(shapes_w + 4 < CT__PROF_SHAPES_COL ? shapes_w + 4 : CT__PROF_SHAPES_COL);
    }
    if (t->flops) {
        double lg = log10(min_flops) / 3;
        lg = lg < 0 ? 0 : lg > 5 ? 5 : lg;
        t->flops_scale = pow(10.0, floor(lg) * -3.0);
        t->flops_header = units[(int)lg];
        t->width[t->n_cols++] = CT__PROF_COL;
    }
}

/* One row's cells (in s, 12 strings of 96 bytes) as _build_table's row_values. */
static void ct__prof_row_cells(const ct__prof_table *t, const ct__prof_row *r,
                               char (*s)[96], const char **cells)
{
    int c = 0;
    size_t kl = strlen(r->key);
    if (kl >= CT__PROF_NAME_COL - 3) {
        snprintf(s[c], 96, "%.*s...", CT__PROF_NAME_COL - 3, r->key);
    } else {
        snprintf(s[c], 96, "%s", r->key);
    }
    c++;
    ct__prof_fmt_share(s[c++], 96, r->self_ns, t->self_total_ns);
    ct__prof_fmt_time(s[c++], 96, (double)r->self_ns / 1000.0);
    ct__prof_fmt_share(s[c++], 96, r->total_ns, t->self_total_ns);
    ct__prof_fmt_time(s[c++], 96, (double)r->total_ns / 1000.0);
    ct__prof_fmt_time(s[c++], 96, (double)r->total_ns / 1000.0 / (double)r->count);
    if (t->memory) {
        ct__prof_fmt_memory(s[c++], 96, r->mem);
        ct__prof_fmt_memory(s[c++], 96, r->self_mem);
    }
    snprintf(s[c++], 96, "%lld", (long long)r->count);
    for (int k = 0; k < c; k++) {
        cells[k] = s[k];
    }
    if (t->shapes) {
        cells[c++] = r->shapes; /* cut to the column's width by the caller */
    }
    if (t->flops) {
        if (r->flops > 0) {
            snprintf(s[c], 96, "%8.3f", r->flops * t->flops_scale);
        } else {
            snprintf(s[c], 96, "--");
        }
        cells[c] = s[c];
        c++;
    }
}

static void ct__prof_header(ct__prof_out *o, const ct__prof_table *t)
{
    const char *cells[12];
    char flops[32];
    int c = 0;
    static const char *const time_cols[5] = {"Self CPU %", "Self CPU", "CPU total %",
                                             "CPU total", "CPU time avg"};
    cells[c++] = "Name";
    for (int k = 0; k < 5; k++) {
        cells[c++] = time_cols[k];
    }
    if (t->memory) {
        cells[c++] = "CPU Mem";
        cells[c++] = "Self CPU Mem";
    }
    cells[c++] = "# of Calls";
    if (t->shapes) {
        cells[c++] = "Input Shapes";
    }
    if (t->flops) {
        snprintf(flops, sizeof flops, "Total %s", t->flops_header);
        cells[c++] = flops;
    }
    ct__prof_sep(o, t);
    ct__prof_cells(o, t, cells);
    ct__prof_sep(o, t);
}

/* The rows in print order: sorted by sort_by (NULL: first-start order). */
static ct__prof_order *ct__prof_sorted(const ct__prof_avgs *a, const char *sort_by)
{
    ct__prof_order *ord =
        (ct__prof_order *)ct__malloc(sizeof(ct__prof_order) * (size_t)(a->n ? a->n : 1));
    if (!ord) {
        return NULL;
    }
    for (int64_t r = 0; r < a->n; r++) {
        ord[r].row = r;
        ord[r].value = 0;
        if (sort_by) {
            (void)ct__prof_sort_value(sort_by, &a->rows[r], &ord[r].value);
        }
    }
    if (sort_by) {
        qsort(ord, (size_t)a->n, sizeof *ord, ct__prof_order_cmp);
    }
    return ord;
}

/* Writes the table (the lock held); false when out of memory. */
static bool ct__prof_write_table(ct__prof_out *o, const char *sort_by, int row_limit)
{
    ct__prof_avgs a;
    if (!ct__prof_average(&a)) {
        ct__prof_avgs_free(&a);
        return false;
    }
    ct__prof_order *ord = a.n ? ct__prof_sorted(&a, sort_by) : NULL;
    if (a.n && !ord) {
        ct__prof_avgs_free(&a);
        return false;
    }
    if (a.n) { /* _build_table returns "" for no events */
        ct__prof_table t;
        ct__prof_layout(&t, &a);
        ct__prof_header(o, &t);
        char s[12][96];
        char shapes[CT__PROF_SHAPES_COL + 1];
        const char *cells[12];
        for (int64_t k = 0; k < a.n && (row_limit < 0 || k < row_limit); k++) {
            const ct__prof_row *r = &a.rows[ord[k].row];
            ct__prof_row_cells(&t, r, s, cells);
            if (t.shapes) {
                int w = t.width[t.memory ? 9 : 7];
                snprintf(shapes, sizeof shapes, "%.*s", w, r->shapes);
                cells[t.memory ? 9 : 7] = shapes;
            }
            ct__prof_cells(o, &t, cells);
        }
        ct__prof_sep(o, &t);
        char total[64];
        ct__prof_fmt_time(total, sizeof total, (double)t.self_total_ns / 1000.0);
        ct__prof_puts(o, "Self CPU time total: ");
        ct__prof_puts(o, total);
        ct__prof_puts(o, "\n");
    }
    ct__free(ord);
    ct__prof_avgs_free(&a);
    return true;
}

/* The table into o, checked and locked. */
static ct_status ct__prof_table_to(const char *op, ct__prof_out *o, const char *sort_by,
                                   int row_limit)
{
    double v;
    ct__prof_row probe;
    memset(&probe, 0, sizeof probe);
    if (sort_by && !ct__prof_sort_value(sort_by, &probe, &v)) {
        return ct__fail(CT_ERR_VALUE, op, "sort_by must be self_cpu_time_total, "
                        "cpu_time_total, count, self_cpu_memory_usage, cpu_memory_usage or "
                        "flops, got '%s'", sort_by);
    }
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    bool ok = !why && ct__prof_write_table(o, sort_by, row_limit);
    ct__mutex_unlock(&ct__prof.lock);
    ct__prof_finish_out(o);
    return ok ? CT_OK : ct__prof_read_fail(op, why);
}

size_t ct_profiler_table(char *buf, size_t n, const char *sort_by, int row_limit)
{
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.buf = buf;
    o.n = buf ? n : 0;
    return ct__prof_table_to("ct_profiler_table", &o, sort_by, row_limit) == CT_OK ? o.len : 0;
}

/* ---- the Chrome trace ---------------------------------------------------------------------- */
/* s as the inside of a JSON string. */
static void ct__prof_json_str(ct__prof_out *o, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            ct__prof_put(o, esc, 2);
        } else if (ch < 0x20) {
            ct__prof_putf(o, "\\u%04x", ch);
        } else {
            ct__prof_put(o, s, 1);
        }
    }
}

/* Nanoseconds as microseconds with 3 decimals, exactly. */
static void ct__prof_json_us(ct__prof_out *o, uint64_t ns)
{
    ct__prof_putf(o, "%llu.%03llu", (unsigned long long)(ns / 1000),
                  (unsigned long long)(ns % 1000));
}

static void ct__prof_json_event(ct__prof_out *o, int64_t i, const ct__prof_event *e)
{
    ct__prof_putf(o, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"",
                  e->kind == CT__PROF_USER ? "user_annotation" : "cpu_op");
    ct__prof_json_str(o, e->name);
    ct__prof_putf(o, "\", \"pid\": 1, \"tid\": %d, \"ts\": ", (int)e->tid);
    ct__prof_json_us(o, e->begin_ns);
    ct__prof_puts(o, ", \"dur\": ");
    ct__prof_json_us(o, e->end_ns - e->begin_ns);
    ct__prof_putf(o, ", \"args\": {\"External id\": %lld", (long long)i + 1);
    if (e->shapes) {
        ct__prof_puts(o, ", \"Input Dims\": ");
        ct__prof_puts(o, e->shapes);
    }
    if (e->flops > 0 && isfinite(e->flops)) {
        ct__prof_putf(o, ", \"flops\": %.17g", e->flops);
    }
    ct__prof_puts(o, "}}");
}

/* Writes the trace (the lock held). */
static void ct__prof_write_trace(ct__prof_out *o)
{
    ct__prof_puts(o, "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
                     "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, "
                     "\"args\": {\"name\": \"ctorch\"}}");
    for (int32_t t = 1; t <= ct__prof.n_threads; t++) {
        ct__prof_putf(o, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": %d, "
                      "\"args\": {\"name\": \"thread %d%s\"}}", (int)t, (int)t,
                      t == 1 ? " (ct_profiler_begin)" : "");
        ct__prof_putf(o, ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 1, "
                      "\"tid\": %d, \"args\": {\"sort_index\": %d}}", (int)t, (int)t);
    }
    for (int64_t i = 0; i < ct__prof.n_events; i++) {
        ct__prof_json_event(o, i, ct__prof_at(i));
    }
    ct__prof_puts(o, "\n]}\n");
}

/* The trace into o, checked and locked. */
static ct_status ct__prof_trace_to(const char *op, ct__prof_out *o)
{
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    if (!why) {
        ct__prof_write_trace(o);
    }
    ct__mutex_unlock(&ct__prof.lock);
    ct__prof_finish_out(o);
    return why ? ct__prof_read_fail(op, why) : CT_OK;
}

size_t ct_profiler_chrome_trace(char *buf, size_t n)
{
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.buf = buf;
    o.n = buf ? n : 0;
    return ct__prof_trace_to("ct_profiler_chrome_trace", &o) == CT_OK ? o.len : 0;
}

#ifndef CTORCH_NO_STDIO
ct_status ct_profiler_print_table(FILE *f, const char *sort_by, int row_limit)
{
    const char *op = "ct_profiler_print_table";
    if (ct__null(op, f)) {
        return CT_ERR_NULL_ARG;
    }
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.f = f;
    return ct__prof_table_to(op, &o, sort_by, row_limit);
}

ct_status ct_profiler_export_chrome_trace(const char *path)
{
    const char *op = "ct_profiler_export_chrome_trace";
    if (ct__null(op, path)) {
        return CT_ERR_NULL_ARG;
    }
    ct__mutex_lock(&ct__prof.lock);
    const char *why = ct__prof_unreadable();
    ct__mutex_unlock(&ct__prof.lock);
    if (why) {
        return ct__prof_read_fail(op, why);
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        return ct__fail(CT_ERR_IO, op, "cannot open '%s' for writing", path);
    }
    ct__prof_out o;
    memset(&o, 0, sizeof o);
    o.f = f;
    ct_status st = ct__prof_trace_to(op, &o);
    bool written = !ferror(f);
    written = fclose(f) == 0 && written;
    if (st == CT_OK && !written) {
        return ct__fail(CT_ERR_IO, op, "cannot write '%s'", path);
    }
    return st;
}
#endif

#undef CT__PROF_CHUNK_BYTES
#undef CT__PROF_MAX_DEPTH
#undef CT__PROF_MAX_NAME
#undef CT__PROF_MAX_SHAPES
#undef CT__PROF_GEN_SHIFT
#undef CT__PROF_GEN_MASK
#undef CT__PROF_NAME_COL
#undef CT__PROF_SHAPES_COL
#undef CT__PROF_COL
#undef CT__PROF_LOAD
#undef CT__PROF_STORE
#undef CT__PROF_PER_CHUNK
CT__GLUE_END
