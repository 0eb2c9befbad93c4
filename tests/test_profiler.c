/* tests/test_profiler.c - the profiler (torch.profiler): PyTorch's tables of a replayed
 * profile (tests/golden/profiler_golden.h, from tools/gen_golden_profiler.py), a training
 * step's ops and ranges (counted against a dispatch hook), self times, memory, threads,
 * the Chrome trace (parsed by a small JSON validator) and the errors.
 */
#include "test.h"

#include <stdlib.h>

#include "golden/profiler_golden.h"

#define TRACE_PATH "test_profiler_trace.json"
#define EVALUATE "autograd::engine::evaluate_function: "

/* ---- a synthetic clock ------------------------------------------------------------------ */
static uint64_t fake_now = 0;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

/* A clock advancing by profiler_ops_steps_ns (cyclically) at each read. */
static int fake_reads = 0;
static uint64_t stepping_clock(void *user)
{
    (void)user;
    size_t n = sizeof profiler_ops_steps_ns / sizeof profiler_ops_steps_ns[0];
    fake_now += profiler_ops_steps_ns[(size_t)fake_reads++ % n];
    return fake_now;
}

static ct_profiler_opts fake_opts(void)
{
    ct_profiler_opts o = ct_profiler_defaults();
    o.clock_ns = fake_clock;
    return o;
}

/* Replays the golden profile: ranges begun and ended at the script's clock values. */
static void replay_golden(void)
{
    ct_profiler_opts o = fake_opts();
    fake_now = PROFILER_T_BEGIN;
    CHECK(ct_profiler_begin(&o) == CT_OK);
    for (size_t k = 0; k < sizeof profiler_steps / sizeof profiler_steps[0]; k++) {
        fake_now = profiler_steps[k].clock_ns;
        if (profiler_steps[k].begin) {
            CHECK(ct_record_function_begin(profiler_steps[k].name) == CT_OK);
        } else {
            CHECK(ct_record_function_end() == CT_OK);
        }
    }
    fake_now = PROFILER_T_END;
    CHECK(ct_profiler_end() == CT_OK);
}

/* The key-average row named key (the first one), or NULL. */
static const ct_profiler_event_avg *find_row(const ct_profiler_event_avg *rows, int64_t n,
                                             const char *key)
{
    for (int64_t r = 0; r < n; r++) {
        if (!strcmp(rows[r].key, key)) {
            return &rows[r];
        }
    }
    return NULL;
}

/* The profile's key averages (malloc'd, *n rows); NULL on error. */
static ct_profiler_event_avg *key_averages(int64_t *n)
{
    *n = ct_profiler_key_averages(NULL, 0);
    ct_profiler_event_avg *rows =
        (ct_profiler_event_avg *)malloc(sizeof(ct_profiler_event_avg) * (size_t)(*n + 1));
    CHECK(rows && ct_profiler_key_averages(rows, *n) == *n);
    return rows;
}

static void test_profiler_defaults(void)
{
    ct_profiler_opts o = ct_profiler_defaults(); /* torch.profiler.profile's defaults */
    CHECK(!o.record_shapes && !o.profile_memory && !o.with_flops);
    CHECK(o.clock_ns == NULL && o.clock_user == NULL);
}

/* Checks the profile's tables against the golden ones. */
static void check_tables(const profiler_table *tables, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const profiler_table *g = &tables[k];
        size_t need = ct_profiler_table(NULL, 0, g->sort_by, g->row_limit);
        char *text = (char *)malloc(need + 1);
        CHECK(need == strlen(g->text) && text);
        if (text) {
            CHECK(ct_profiler_table(text, need + 1, g->sort_by, g->row_limit) == need);
            CHECK_MSG(!strcmp(text, g->text), "sort_by %s, row_limit %d:\n%s\nwant:\n%s",
                      g->sort_by ? g->sort_by : "NULL", g->row_limit, text, g->text);
        }
        free(text);
    }
}

/* The replayed profile prints as PyTorch's key_averages().table(), byte for byte. */
static void test_profiler_table_golden(void)
{
    replay_golden();
    check_tables(profiler_tables, sizeof profiler_tables / sizeof profiler_tables[0]);
    for (size_t k = 0; k < sizeof profiler_tables / sizeof profiler_tables[0]; k++) {
        const profiler_table *g = &profiler_tables[k];
        char small[16]; /* a short buffer gets a NUL-terminated prefix */
        CHECK(ct_profiler_table(small, sizeof small, g->sort_by, g->row_limit) ==
              strlen(g->text));
        CHECK(strlen(small) == sizeof small - 1 && !strncmp(small, g->text, sizeof small - 1));
    }
    FILE *f = tmpfile();
    CHECK(f && ct_profiler_print_table(f, "self_cpu_time_total", 10) == CT_OK);
    if (f) {
        char got[4096];
        rewind(f);
        size_t len = fread(got, 1, sizeof got - 1, f);
        got[len] = '\0';
        CHECK(!strcmp(got, profiler_tables[0].text));
        fclose(f);
    }
    CHECK(ct_profiler_reset() == CT_OK);
}

/* Ops with record_shapes and with_flops: the Input Shapes and Total KFLOPs columns (the
   ops of tools/gen_golden_profiler.py's OPS, each one event: mm and add run no nested op). */
static void test_profiler_table_golden_ops(void)
{
    int64_t sa[2] = {8, 16}, sb[2] = {16, 32}, sc[2] = {16, 32}, sd[2] = {32, 64};
    ct_scope_begin();
    ct_tensor *a = ct_ones(sa, 2, CT_FLOAT32), *b = ct_ones(sb, 2, CT_FLOAT32);
    ct_tensor *c = ct_ones(sc, 2, CT_FLOAT32), *d = ct_ones(sd, 2, CT_FLOAT32);
    ct_profiler_opts o = ct_profiler_defaults();
    o.record_shapes = true;
    o.with_flops = true;
    o.clock_ns = stepping_clock;
    fake_now = 0;
    fake_reads = 0;
    CHECK(ct_profiler_begin(&o) == CT_OK);
    ct_record_function_begin("ops");
    ct_tensor *ab = ct_mm(a, b);
    ct_mm(a, b);
    ct_mm(c, d);
    ct_add(ab, ab);
    ct_record_function_end();
    CHECK(ct_profiler_end() == CT_OK);
    ct_scope_end();
    check_tables(profiler_ops_tables, sizeof profiler_ops_tables / sizeof profiler_ops_tables[0]);
    CHECK(ct_profiler_reset() == CT_OK);
}

/* Self time = duration - direct children's durations, in exact nanoseconds. */
static void test_profiler_nested_self_times(void)
{
    replay_golden();
    int64_t n;
    ct_profiler_event_avg *rows = key_averages(&n);
    const ct_profiler_event_avg *fwd = find_row(rows, n, "forward");
    const ct_profiler_event_avg *lin = find_row(rows, n, "linear");
    const ct_profiler_event_avg *bwd = find_row(rows, n, "backward");
    CHECK(n == 7 && fwd && lin && bwd);
    if (fwd && lin && bwd) {
        CHECK(fwd->count == 1 && lin->count == 3 && bwd->count == 1);
        CHECK_NEAR(fwd->cpu_time_total_us, 2998.0, 1e-9);
        CHECK_NEAR(fwd->self_cpu_time_total_us, 2998.0 - 1500.0 - 50.5 - 0.999, 1e-9);
        CHECK_NEAR(lin->cpu_time_total_us, 1500.0 + 50.5 + 1000.0, 1e-9);
        CHECK_NEAR(lin->self_cpu_time_total_us, lin->cpu_time_total_us, 1e-9);
        CHECK_NEAR(bwd->self_cpu_time_total_us, 2000000.0 - 1000.0, 1e-9);
        CHECK(!strcmp(fwd->input_shapes, "[]") && fwd->flops == 0 && fwd->cpu_memory_usage == 0);
    }
    double self = 0;
    for (int64_t r = 0; r < n; r++) {
        self += rows[r].self_cpu_time_total_us;
    }
    /* the top-level ranges: forward, the long name, tie_b, tie_a, backward */
    CHECK_NEAR(self, 2998.0 + 0.1 + 0.1 + 0.1 + 2000000.0, 1e-6);
    free(rows);
    CHECK(ct_profiler_reset() == CT_OK);
}

/* ---- a training step: ops counted by a dispatch hook and by the profiler --------------- */
typedef struct op_counts {
    const char *name[64];
    int64_t count[64];
    int n;
} op_counts;

static bool count_op(void *user, ct_op_call *call)
{
    op_counts *c = (op_counts *)user;
    int k = 0;
    while (k < c->n && strcmp(c->name[k], call->op->name)) {
        k++;
    }
    if (k == c->n && c->n < 64) {
        c->name[c->n] = call->op->name;
        c->count[c->n++] = 0;
    }
    if (k < 64) {
        c->count[k]++;
    }
    return false;
}

/* One step of the quickstart's recipe on a (4, 8) batch from a DataLoader: linear, relu,
   linear, cross_entropy, backward, SGD step, zero_grad, inside the range "train_step". */
static void training_step(const ct_profiler_opts *po, op_counts *counts)
{
    ct_manual_seed(0);
    int64_t sx[2] = {16, 8}, sy[1] = {16};
    ct_tensor *x = ct_randn(sx, 2, CT_FLOAT32, NULL);
    ct_tensor *y = ct_randint(0, 3, sy, 1, CT_INT64, NULL);
    ct_tensor *fields[2] = {x, y};
    ct_dataset *ds = ct_tensor_dataset_new(fields, 2);
    ct_dataloader_opts lo = ct_dataloader_defaults();
    lo.batch_size = 4;
    ct_dataloader *dl = ct_dataloader_new(ds, &lo);
    ct_module *l1 = ct_linear_new(8, 6, true), *l2 = ct_linear_new(6, 3, true);
    ct_tensor *params[4];
    ct_module_parameters(l1, params, 2);
    ct_module_parameters(l2, params + 2, 2);
    ct_sgd_opts so = ct_sgd_defaults();
    so.lr = 0.1;
    ct_optimizer *opt = ct_sgd_new(params, 4, &so);
    ct_optimizer_zero_grad(opt, false); /* grads exist: zero_grad runs fill_ below */
    ct_dispatch_hook hook = {count_op, NULL, counts};
    CHECK(ct_profiler_begin(po) == CT_OK);
    CHECK(ct_dispatch_hook_push(&hook) == CT_OK);
    ct_record_function_begin("train_step");
    ct_scope_begin();
    ct_tensor *batch[2];
    CHECK(ct_dataloader_next(dl, batch));
    ct_tensor *h = ct_relu(ct_module_forward(l1, batch[0]));
    ct_tensor *loss = ct_cross_entropy(ct_module_forward(l2, h), batch[1], NULL);
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    CHECK(ct_optimizer_step(opt) == CT_OK);
    ct_optimizer_zero_grad(opt, false);
    ct_scope_end();
    CHECK(ct_record_function_end() == CT_OK);
    CHECK(ct_dispatch_hook_pop() == CT_OK);
    CHECK(ct_profiler_end() == CT_OK);
    CHECK_MSG(!ct_error(), "%s", ct_error());
    ct_optimizer_free(opt);
    ct_module_free(l1);
    ct_module_free(l2);
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    ct_free(x);
    ct_free(y);
}

/* Every op the dispatcher ran appears with its exact call count, the ranges of the engine,
   the optimizer and the DataLoader with theirs; self times add up to the step's time. */
static void test_profiler_training_step(void)
{
    op_counts counts;
    memset(&counts, 0, sizeof counts);
    training_step(NULL, &counts);
    int64_t n;
    ct_profiler_event_avg *rows = key_averages(&n);
    for (int k = 0; k < counts.n; k++) { /* every op the hook saw, with its count */
        const ct_profiler_event_avg *r = find_row(rows, n, counts.name[k]);
        CHECK_MSG(r && r->count == counts.count[k], "%s: %lld calls, want %lld", counts.name[k],
                  r ? (long long)r->count : -1LL, (long long)counts.count[k]);
    }
    int64_t ops = 0, evaluate = 0;
    double self = 0;
    for (int64_t r = 0; r < n; r++) {
        CHECK_MSG(rows[r].self_cpu_time_total_us >= 0 &&
                  rows[r].self_cpu_time_total_us <= rows[r].cpu_time_total_us,
                  "%s: self %.3f us, total %.3f us", rows[r].key, rows[r].self_cpu_time_total_us,
                  rows[r].cpu_time_total_us);
        self += rows[r].self_cpu_time_total_us;
        ops += ct_op_find(rows[r].key) != NULL;
        evaluate += !strncmp(rows[r].key, EVALUATE, strlen(EVALUATE)) ? rows[r].count : 0;
    }
    CHECK(ops == counts.n); /* and no op the hook did not see */
    static const char *const ranges[4] = {
        "train_step", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"};
    for (int k = 0; k < 4; k++) {
        const ct_profiler_event_avg *r = find_row(rows, n, ranges[k]);
        CHECK_MSG(r && r->count == 1, "%s: %lld calls", ranges[k], r ? (long long)r->count : -1LL);
    }
    /* the forward ops, relu's backward formula, and the zero_grad of 4 parameters */
    const ct_profiler_event_avg *linear = find_row(rows, n, "aten::linear");
    const ct_profiler_event_avg *loss = find_row(rows, n, "aten::cross_entropy_loss");
    CHECK(linear && linear->count == 2 && loss && loss->count == 1);
    const ct_profiler_event_avg *relu = find_row(rows, n, "aten::relu");
    const ct_profiler_event_avg *thr = find_row(rows, n, "aten::threshold_backward");
    const ct_profiler_event_avg *fill = find_row(rows, n, "aten::fill_");
    const ct_profiler_event_avg *relu_node = find_row(rows, n, EVALUATE "ReluBackward0");
    CHECK(relu && relu->count == 1 && thr && thr->count == 1 && fill && fill->count == 4);
    CHECK(relu_node && relu_node->count == 1 && evaluate >= 4); /* 2 linear, relu, loss */
    const ct_profiler_event_avg *step = find_row(rows, n, "train_step");
    if (step) { /* one thread, every event inside the step: the self times add up to it */
        CHECK_NEAR(self, step->cpu_time_total_us, 1e-6 * step->cpu_time_total_us + 1e-6);
    }
    free(rows);
    CHECK(ct_profiler_reset() == CT_OK);
}

/* Every sort_by of the table, record_shapes ("Input Shapes"), with_flops and memory. */
static void test_profiler_table_columns(void)
{
    op_counts counts;
    memset(&counts, 0, sizeof counts);
    ct_profiler_opts po = ct_profiler_defaults();
    po.record_shapes = true;
    po.profile_memory = true;
    po.with_flops = true;
    training_step(&po, &counts);
    static const char *const sorts[6] = {"self_cpu_time_total", "cpu_time_total", "count",
                                         "self_cpu_memory_usage", "cpu_memory_usage", "flops"};
    int64_t n;
    ct_profiler_event_avg *rows = key_averages(&n);
    for (int k = 0; k < 12; k++) { /* each sort_by, all rows then 15 */
        int limit = k < 6 ? -1 : 15;
        size_t need = ct_profiler_table(NULL, 0, sorts[k % 6], limit);
        char *text = (char *)malloc(need + 1);
        CHECK(need > 0 && text && ct_profiler_table(text, need + 1, sorts[k % 6], limit) == need);
        if (text) {
            CHECK(strstr(text, "  Name    Self CPU %      Self CPU   CPU total %     CPU total  "
                               "CPU time avg       CPU Mem  Self CPU Mem    # of Calls  "));
            CHECK(strstr(text, "Input Shapes") && strstr(text, "Self CPU time total: "));
            CHECK(limit == 15 || (strstr(text, "aten::relu") && strstr(text, "[[4, 6]]")));
            int lines = 0;
            for (const char *p = text; *p; p++) {
                lines += *p == '\n';
            }
            /* 3 dashed lines, the header, the footer */
            CHECK(lines == (limit < 0 || n < limit ? n : limit) + 5);
        }
        free(text);
    }
    const ct_profiler_event_avg *relu = find_row(rows, n, "aten::relu");
    CHECK(relu && !strcmp(relu->input_shapes, "[[4, 6]]"));
    /* with_flops: 2 N out in of x (4, 8) @ W1^T (8, 6), and of x (4, 6) @ W2^T (6, 3) */
    const ct_profiler_event_avg *l1 = find_row(rows, n, "aten::linear");
    CHECK(l1 && !strcmp(l1->input_shapes, "[[4, 8], [6, 8], [6]]") && l1->flops == 384);
    char text[8192];
    CHECK(ct_profiler_table(text, sizeof text, "flops", 2) < sizeof text);
    CHECK(strstr(text, "  Input Shapes   Total FLOPs  \n") && strstr(text, "   384.000  \n"));
    if (relu) { /* the output: a (4, 6) float32 tensor lives on after relu */
        CHECK(relu->cpu_memory_usage >= 4 * 6 * 4 && relu->self_cpu_memory_usage > 0);
    }
    const ct_profiler_event_avg *add = NULL;
    for (int64_t r = 0; r < n; r++) {
        add = !add && !strcmp(rows[r].key, "aten::add") ? &rows[r] : add;
    }
    if (add) { /* add(Tensor, Tensor, *, Scalar alpha): two shapes and a [] */
        CHECK_MSG(strstr(add->input_shapes, "], []]") != NULL, "%s", add->input_shapes);
    }
    free(rows);
    CHECK(ct_profiler_reset() == CT_OK);
}

/* profile_memory: a range's memory is ct_memory_allocated()'s change over it, the
   profiler's own storage (thousands of events here) excluded; self memory sums to it. */
static void test_profiler_memory(void)
{
    int64_t s[1] = {1000};
    size_t before = ct_memory_allocated();
    ct_tensor *probe = ct_zeros(s, 1, CT_FLOAT32);
    int64_t bytes = (int64_t)(ct_memory_allocated() - before);
    ct_free(probe);
    ct_profiler_opts po = ct_profiler_defaults();
    po.profile_memory = true;
    CHECK(ct_profiler_begin(&po) == CT_OK);
    ct_record_function_begin("outer");
    ct_tensor *t = ct_zeros(s, 1, CT_FLOAT32);
    for (int k = 0; k < 3000; k++) {
        ct_record_function_begin("empty");
        ct_record_function_end();
    }
    ct_record_function_end();
    CHECK(ct_profiler_end() == CT_OK);
    ct_free(t);
    int64_t n;
    ct_profiler_event_avg *rows = key_averages(&n);
    const ct_profiler_event_avg *outer = find_row(rows, n, "outer");
    const ct_profiler_event_avg *empty = find_row(rows, n, "empty");
    CHECK(outer && outer->cpu_memory_usage == bytes && bytes >= 4000);
    CHECK(empty && empty->count == 3000 && empty->cpu_memory_usage == 0);
    int64_t self = 0;
    for (int64_t r = 0; r < n; r++) {
        self += rows[r].self_cpu_memory_usage;
    }
    CHECK(self == bytes);
    free(rows);
    char text[2048];
    CHECK(ct_profiler_table(text, sizeof text, "cpu_memory_usage", 1) < sizeof text);
    char want[64]; /* _format_memory: KB with 2 decimals */
    snprintf(want, sizeof want, "%.2f KB  ", (double)bytes / 1024.0);
    CHECK_MSG(strstr(text, want) != NULL, "%s lacks %s", text, want);
    CHECK(ct_profiler_reset() == CT_OK);
}

/* ---- threads ------------------------------------------------------------------------------ */
/* Set by the task once it runs on a pool thread (ct_wait would run it inline otherwise). */
static int worker_started = 0;

static void *worker_ranges(void *arg)
{
    (void)arg;
    __atomic_store_n(&worker_started, 1, __ATOMIC_RELEASE);
    ct_record_function_begin("worker");
    int64_t s[1] = {3};
    ct_scope_begin();
    ct_relu(ct_zeros(s, 1, CT_FLOAT32));
    ct_scope_end();
    ct_record_function_end();
    return NULL;
}

/* ---- a small JSON validator ---------------------------------------------------------------- */
typedef struct json_event {
    char ph[4], cat[24], name[128];
    double ts, dur;
    long tid;
    int has_pid, has_tid, has_ts, has_dur, has_args;
} json_event;

typedef struct json {
    const char *p;
    bool ok;
    json_event *events;
    int n_events, cap_events;
} json;

static void json_ws(json *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t') {
        j->p++;
    }
}

/* A string (into out, cut to cap); false on a malformed one. */
static bool json_string(json *j, char *out, size_t cap)
{
    size_t len = 0;
    if (*j->p != '"') {
        return false;
    }
    for (j->p++; *j->p != '"'; j->p++) {
        char ch = *j->p;
        if ((unsigned char)ch < 0x20) {
            return false;
        }
        if (ch == '\\') {
            j->p++;
            if (*j->p == 'u') {
                for (int k = 1; k <= 4; k++) {
                    if (!strchr("0123456789abcdefABCDEF", j->p[k]) || !j->p[k]) {
                        return false;
                    }
                }
                j->p += 4;
                ch = '?';
            } else if (*j->p && strchr("\"\\/bfnrt", *j->p)) {
                ch = *j->p;
            } else {
                return false;
            }
        }
        if (out && len + 1 < cap) {
            out[len++] = ch;
        }
    }
    j->p++;
    if (out) {
        out[len] = '\0';
    }
    return true;
}

static bool json_number(json *j, double *v)
{
    const char *s = j->p;
    if (*j->p == '-') {
        j->p++;
    }
    if (*j->p < '0' || *j->p > '9' || (*j->p == '0' && j->p[1] >= '0' && j->p[1] <= '9')) {
        return false;
    }
    while (*j->p >= '0' && *j->p <= '9') {
        j->p++;
    }
    if (*j->p == '.') {
        j->p++;
        if (*j->p < '0' || *j->p > '9') {
            return false;
        }
        while (*j->p >= '0' && *j->p <= '9') {
            j->p++;
        }
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        j->p += *j->p == '+' || *j->p == '-';
        if (*j->p < '0' || *j->p > '9') {
            return false;
        }
        while (*j->p >= '0' && *j->p <= '9') {
            j->p++;
        }
    }
    if (v) {
        *v = strtod(s, NULL);
    }
    return true;
}

static bool json_value(json *j, int depth, json_event *ev);

/* An object; ev (NULL: none) collects a trace event's fields. */
static bool json_object(json *j, int depth, json_event *ev)
{
    j->p++;
    json_ws(j);
    if (*j->p == '}') {
        j->p++;
        return true;
    }
    for (;;) {
        char key[64];
        json_ws(j);
        if (!json_string(j, key, sizeof key)) {
            return false;
        }
        json_ws(j);
        if (*j->p++ != ':') {
            return false;
        }
        json_ws(j);
        bool ok;
        if (ev && (!strcmp(key, "ph") || !strcmp(key, "cat") || !strcmp(key, "name"))) {
            char *dst = key[0] == 'p' ? ev->ph : key[0] == 'c' ? ev->cat : ev->name;
            size_t cap = key[0] == 'p' ? sizeof ev->ph : key[0] == 'c' ? sizeof ev->cat
                                                                        : sizeof ev->name;
            ok = json_string(j, dst, cap);
        } else if (ev && (!strcmp(key, "ts") || !strcmp(key, "dur") || !strcmp(key, "tid"))) {
            double v = 0;
            ok = json_number(j, &v);
            if (key[0] == 't' && key[1] == 's') {
                ev->ts = v;
                ev->has_ts = 1;
            } else if (key[0] == 'd') {
                ev->dur = v;
                ev->has_dur = 1;
            } else {
                ev->tid = (long)v;
                ev->has_tid = 1;
            }
        } else {
            if (ev) {
                ev->has_pid |= !strcmp(key, "pid");
                ev->has_args |= !strcmp(key, "args") && *j->p == '{';
            }
            if (depth == 0 && !strcmp(key, "traceEvents") && *j->p == '[') {
                ok = json_value(j, -1, NULL); /* -1: the array of events */
            } else {
                ok = json_value(j, depth + 1, NULL);
            }
        }
        if (!ok) {
            return false;
        }
        json_ws(j);
        if (*j->p == '}') {
            j->p++;
            return true;
        }
        if (*j->p++ != ',') {
            return false;
        }
    }
}

static bool json_array(json *j, int depth)
{
    j->p++;
    json_ws(j);
    if (*j->p == ']') {
        j->p++;
        return true;
    }
    for (;;) {
        json_ws(j);
        json_event *ev = NULL;
        if (depth == -1 && *j->p == '{') {
            if (j->n_events == j->cap_events) {
                j->cap_events = j->cap_events ? 2 * j->cap_events : 256;
                json_event *grown = (json_event *)realloc(
                    j->events, sizeof(json_event) * (size_t)j->cap_events);
                if (!grown) {
                    return false;
                }
                j->events = grown;
            }
            ev = &j->events[j->n_events++];
            memset(ev, 0, sizeof *ev);
        }
        if (!json_value(j, depth < 0 ? 1 : depth + 1, ev)) {
            return false;
        }
        json_ws(j);
        if (*j->p == ']') {
            j->p++;
            return true;
        }
        if (*j->p++ != ',') {
            return false;
        }
    }
}

static bool json_value(json *j, int depth, json_event *ev)
{
    json_ws(j);
    if (depth > 64) {
        return false;
    }
    switch (*j->p) {
    case '{':
        return json_object(j, depth < 0 ? 0 : depth, ev);
    case '[':
        return json_array(j, depth);
    case '"':
        return json_string(j, NULL, 0);
    case 't':
        return !strncmp(j->p, "true", 4) && (j->p += 4);
    case 'f':
        return !strncmp(j->p, "false", 5) && (j->p += 5);
    case 'n':
        return !strncmp(j->p, "null", 4) && (j->p += 4);
    default:
        return json_number(j, NULL);
    }
}

/* Parses text as one JSON document; its traceEvents' objects land in j->events. */
static bool json_parse(json *j, const char *text)
{
    memset(j, 0, sizeof *j);
    j->p = text;
    bool ok = json_value(j, 0, NULL);
    json_ws(j);
    return ok && *j->p == '\0';
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *text = (char *)malloc((size_t)len + 1);
    size_t got = text ? fread(text, 1, (size_t)len, f) : 0;
    fclose(f);
    if (text) {
        text[got] = '\0';
    }
    return text;
}

/* Checks a trace: valid JSON, complete events with the required keys, metadata naming each
   thread, and on each thread events that nest (each fully inside or after the others).
   Returns the number of complete events (-1 when invalid). */
static int check_trace(const char *text, int threads)
{
    json j;
    bool ok = json_parse(&j, text);
    CHECK_MSG(ok, "invalid JSON near offset %ld", (long)(j.p - text));
    int complete = 0, named = 0;
    for (int a = 0; ok && a < j.n_events; a++) {
        const json_event *e = &j.events[a];
        if (!strcmp(e->ph, "M")) {
            named += !strcmp(e->name, "thread_name");
            continue;
        }
        complete++;
        CHECK(!strcmp(e->ph, "X") && e->name[0] && e->has_pid && e->has_tid && e->has_ts &&
              e->has_dur && e->has_args && e->dur >= 0);
        CHECK(!strcmp(e->cat, "cpu_op") || !strcmp(e->cat, "user_annotation"));
        for (int b = 0; b < a; b++) { /* b started first (events are in start order) */
            const json_event *p = &j.events[b];
            if (strcmp(p->ph, "X") || p->tid != e->tid || e->ts >= p->ts + p->dur) {
                continue;
            }
            CHECK_MSG(e->ts >= p->ts && e->ts + e->dur <= p->ts + p->dur + 1e-9,
                      "%s [%.3f, +%.3f] overlaps %s [%.3f, +%.3f] without nesting", e->name,
                      e->ts, e->dur, p->name, p->ts, p->dur);
        }
    }
    CHECK(named == threads);
    free(j.events);
    return ok ? complete : -1;
}

static void test_profiler_chrome_trace(void)
{
    replay_golden();
    CHECK(ct_profiler_export_chrome_trace(TRACE_PATH) == CT_OK);
    char *text = read_file(TRACE_PATH);
    CHECK(text && check_trace(text, 1) == 9);
    if (text) { /* ts and dur: microseconds from the begin, 3 decimals */
        CHECK(strstr(text, "\"name\": \"forward\", \"pid\": 1, \"tid\": 1, \"ts\": 1.000, "
                           "\"dur\": 2998.000, ") != NULL);
        size_t need = ct_profiler_chrome_trace(NULL, 0);
        CHECK(need == strlen(text));
        char *again = (char *)malloc(need + 1);
        CHECK(again && ct_profiler_chrome_trace(again, need + 1) == need && !strcmp(again, text));
        free(again);
    }
    free(text);
    /* a training step with shapes and flops, and names that need escaping */
    op_counts counts;
    memset(&counts, 0, sizeof counts);
    ct_profiler_opts po = ct_profiler_defaults();
    po.record_shapes = true;
    po.with_flops = true;
    training_step(&po, &counts);
    CHECK(ct_profiler_export_chrome_trace(TRACE_PATH) == CT_OK);
    text = read_file(TRACE_PATH);
    int64_t n, calls = 0;
    ct_profiler_event_avg *rows = key_averages(&n);
    for (int64_t r = 0; r < n; r++) {
        calls += rows[r].count;
    }
    free(rows);
    CHECK(text && check_trace(text, 1) == calls && strstr(text, "\"Input Dims\": [[4, 6]]"));
    if (text) { /* PyTorch's categories */
        CHECK(strstr(text, "\"cat\": \"cpu_op\", \"name\": \"" EVALUATE "ReluBackward0\""));
        CHECK(strstr(text, "\"cat\": \"cpu_op\", \"name\": \"aten::relu\""));
        CHECK(strstr(text, "\"cat\": \"user_annotation\", \"name\": \"Optimizer.step#SGD.step\""));
        CHECK(strstr(text, "\"cat\": \"user_annotation\", \"name\": \"train_step\""));
    }
    free(text);
    CHECK(ct_profiler_begin(NULL) == CT_OK);
    ct_record_function_begin("quote \" backslash \\ tab \t newline \n end");
    ct_record_function_end();
    CHECK(ct_profiler_end() == CT_OK);
    CHECK(ct_profiler_export_chrome_trace(TRACE_PATH) == CT_OK);
    text = read_file(TRACE_PATH);
    CHECK(text && check_trace(text, 1) == 1);
    free(text);
    remove(TRACE_PATH);
    CHECK(ct_profiler_reset() == CT_OK);
}

/* Events of another thread go to their own track (tid 2), nested there. */
static void test_profiler_threads(void)
{
    CHECK(ct_profiler_begin(NULL) == CT_OK);
    ct_record_function_begin("main");
    __atomic_store_n(&worker_started, 0, __ATOMIC_RELEASE);
    ct_future *f = ct_fork(worker_ranges, NULL);
    for (long spin = 0; spin < 2000000000L && !__atomic_load_n(&worker_started, __ATOMIC_ACQUIRE);
         spin++) {
    }
    ct_wait(f);
    ct_record_function_end();
    CHECK(ct_profiler_end() == CT_OK);
    size_t need = ct_profiler_chrome_trace(NULL, 0);
    char *text = (char *)malloc(need + 1);
    CHECK(text && ct_profiler_chrome_trace(text, need + 1) == need);
    if (text) {
        CHECK(check_trace(text, 2) >= 3); /* main; worker, relu (and the ops of zeros) */
        CHECK(strstr(text, "\"name\": \"worker\", \"pid\": 1, \"tid\": 2,") != NULL);
        CHECK(strstr(text, "\"name\": \"aten::relu\", \"pid\": 1, \"tid\": 2,") != NULL);
    }
    free(text);
    int64_t n;
    ct_profiler_event_avg *rows = key_averages(&n);
    const ct_profiler_event_avg *main_row = find_row(rows, n, "main");
    const ct_profiler_event_avg *worker = find_row(rows, n, "worker");
    CHECK(main_row && worker && main_row->self_cpu_time_total_us == main_row->cpu_time_total_us);
    free(rows);
    CHECK(ct_profiler_reset() == CT_OK);
    CHECK(ct_parallel_shutdown() == CT_OK); /* the pool's threads (their memory) */
}

/* ---- errors --------------------------------------------------------------------------------- */
static void test_profiler_errors(void)
{
    char buf[64];
    CHECK(ct_profiler_end() == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "ct_profiler_end: the profiler is not running");
    CHECK(ct_profiler_table(buf, sizeof buf, NULL, 10) == 0);
    CHECK_ERROR(CT_ERR_STATE, "no profile was recorded");
    CHECK(ct_profiler_key_averages(NULL, 0) == 0);
    CHECK_ERROR(CT_ERR_STATE, "no profile was recorded");
    CHECK(ct_profiler_export_chrome_trace(TRACE_PATH) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "ct_profiler_export_chrome_trace: no profile was recorded");
    CHECK(ct_profiler_chrome_trace(buf, sizeof buf) == 0);
    CHECK_ERROR(CT_ERR_STATE, "no profile was recorded");
    /* the profiler off: ranges are no-ops, as PyTorch's record_function */
    CHECK(ct_record_function_begin("off") == CT_OK && ct_record_function_end() == CT_OK);
    CHECK(ct_record_function_begin(NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_record_function_begin");

    CHECK(ct_profiler_begin(NULL) == CT_OK);
    CHECK(ct_profiler_begin(NULL) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "ct_profiler_begin: the profiler is already running");
    CHECK(ct_record_function_end() == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "ct_record_function_end: no range");
    CHECK(ct_profiler_table(buf, sizeof buf, "self_cpu_time_total", 10) == 0);
    CHECK_ERROR(CT_ERR_STATE, "ct_profiler_table: the profiler is running");
    CHECK(ct_profiler_reset() == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "ct_profiler_reset: the profiler is running");
    for (int k = 0; k < 256; k++) { /* 256 open ranges, not 257 */
        CHECK(ct_record_function_begin("deep") == CT_OK);
    }
    CHECK(ct_record_function_begin("too deep") == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "more than 256");
    CHECK(ct_record_function_begin("too deep") == CT_ERR_STATE);
    ct_error_clear();
    for (int k = 0; k < 2 + 256; k++) { /* the two lost ranges first: they close nothing */
        CHECK(ct_record_function_end() == CT_OK);
    }
    CHECK(ct_record_function_end() == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "no range");
    for (int k = 0; k < 3; k++) {
        CHECK(ct_record_function_begin("deep") == CT_OK);
    }
    CHECK(ct_profiler_end() == CT_OK); /* closes the 3 still open */

    int64_t n;
    ct_profiler_event_avg *rows = key_averages(&n);
    CHECK(n == 1 && rows[0].count == 259 && !strcmp(rows[0].key, "deep"));
    free(rows);
    CHECK(ct_profiler_table(buf, sizeof buf, "cpu_time", 10) == 0);
    CHECK_ERROR(CT_ERR_VALUE, "sort_by must be");
    CHECK(ct_profiler_key_averages(NULL, 3) == 0);
    CHECK_ERROR(CT_ERR_NULL_ARG, "rows is NULL with cap 3");
    CHECK(ct_profiler_key_averages(NULL, -1) == 0);
    CHECK_ERROR(CT_ERR_VALUE, "cap must be >= 0");
    CHECK(ct_profiler_print_table(NULL, NULL, 10) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_profiler_print_table");
    CHECK(ct_profiler_export_chrome_trace(NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_profiler_export_chrome_trace");
    CHECK(ct_profiler_export_chrome_trace("/nonexistent-ctorch-dir/trace.json") == CT_ERR_IO);
    CHECK_ERROR(CT_ERR_IO, "cannot open '/nonexistent-ctorch-dir/trace.json'");
    CHECK(ct_profiler_reset() == CT_OK);
    CHECK(ct_profiler_reset() == CT_OK); /* nothing recorded: a no-op */
    CHECK(ct_profiler_table(buf, sizeof buf, NULL, 10) == 0);
    CHECK_ERROR(CT_ERR_STATE, "no profile was recorded");

    /* an empty profile: PyTorch's empty table, a trace with the thread's name only */
    CHECK(ct_profiler_begin(NULL) == CT_OK && ct_profiler_end() == CT_OK);
    CHECK(ct_profiler_table(buf, sizeof buf, NULL, 10) == 0 && !ct_error() && buf[0] == '\0');
    size_t need = ct_profiler_chrome_trace(NULL, 0);
    char *text = (char *)malloc(need + 1);
    CHECK(text && ct_profiler_chrome_trace(text, need + 1) == need);
    CHECK(text && check_trace(text, 1) == 0);
    free(text);
    CHECK(ct_profiler_reset() == CT_OK);
}

void test_profiler(void)
{
    RUN(test_profiler_defaults);
    RUN(test_profiler_table_golden);
    RUN(test_profiler_table_golden_ops);
    RUN(test_profiler_nested_self_times);
    RUN(test_profiler_training_step);
    RUN(test_profiler_table_columns);
    RUN(test_profiler_memory);
    RUN(test_profiler_chrome_trace);
    RUN(test_profiler_threads);
    RUN(test_profiler_errors);
}
