/* tests/dist/test_dist.c - ctorch_dist.h's tests, run by `make dist-test` under mpirun at world
 * sizes 1, 2 and 3 (every collective and ReduceOp, every dtype, uneven sizes, non-contiguous
 * tensors, async works, groups, errors, a rank that comes late to a collective), and with
 * --dead-rank or --never-joins under `mpirun --enable-recovery` (the last rank exits after init,
 * or without calling it: the others must get an error, not hang). Rank 0 prints
 * "N passed, N failed"; the exit status is 1 on a failure.
 */
#define CTORCH_IMPLEMENTATION
#define CTORCH_DIST_IMPLEMENTATION
#include "../../ctorch.h"
#include "../../ctorch_dist.h"

#include <math.h>
#include <time.h>

#include "dist_test.h"

static void sleep_ms(int ms)
{
    double end = MPI_Wtime() + ms / 1e3;
    while (MPI_Wtime() < end) {
    }
}

static const ct_dtype DTYPES[] = {CT_BOOL,    CT_UINT8,   CT_INT8,    CT_INT16,   CT_INT32,
                                  CT_INT64,   CT_FLOAT32, CT_FLOAT64, CT_FLOAT16, CT_BFLOAT16};
#define N_DTYPES ((int)(sizeof DTYPES / sizeof DTYPES[0]))

static bool is_float(ct_dtype dt)
{
    return dt == CT_FLOAT32 || dt == CT_FLOAT64 || dt == CT_FLOAT16 || dt == CT_BFLOAT16;
}

/* The value element i has on rank r in the tests (small, so products stay exact). */
static double value(ct_dtype dt, int r, int64_t i)
{
    if (dt == CT_BOOL) {
        return (double)((i + r) % 2 == 0 || i % 3 == 0);
    }
    double v = (double)((i * 7 + r * 3) % 5 + 1);
    return is_float(dt) && i % 2 ? v + 0.5 : v;
}

/* A tensor of n elements with rank r's values; non-contiguous (a transposed view) when
   strided and n is even. One reference owned by the caller's scope. */
static ct_tensor *make(ct_dtype dt, int r, int64_t n, bool strided)
{
    double *v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    bool nc = strided && n % 2 == 0;
    for (int64_t i = 0; i < n; i++) { /* nc: v holds the transpose of the (n/2, 2) values */
        v[nc ? (i % 2) * (n / 2) + i / 2 : i] = value(dt, r, i);
    }
    int64_t s[2] = {2, n / 2};
    ct_tensor *t = nc ? ct_transpose(ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, s, 2), dt),
                                     0, 1)
                      : ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, &n, 1), dt);
    free(v);
    return t;
}

/* t's values in float64, in logical (row-major) order. */
static double get(const ct_tensor *t, int64_t i)
{
    const ct_tensor *c = ct_contiguous(ct_to_dtype(t, CT_FLOAT64));
    return ((const double *)ct_data_ptr(c))[i];
}

static double combine(ct_reduce_op op, ct_dtype dt, double a, double b)
{
    int64_t x = (int64_t)a, y = (int64_t)b;
    switch (op) {
    case CT_REDUCE_PRODUCT: return dt == CT_BOOL ? fmin(a, b) : a * b;
    case CT_REDUCE_MIN: return fmin(a, b);
    case CT_REDUCE_MAX: return fmax(a, b);
    case CT_REDUCE_BAND: return (double)(x & y);
    case CT_REDUCE_BOR: return (double)(x | y);
    case CT_REDUCE_BXOR: return (double)(x ^ y);
    default: return dt == CT_BOOL ? fmax(a, b) : a + b; /* SUM, AVG */
    }
}

/* What reducing element i over ranks 0..n-1 gives (AVG: truncated for integers). */
static double expect(ct_reduce_op op, ct_dtype dt, int n, int64_t i)
{
    double acc = value(dt, 0, i);
    for (int r = 1; r < n; r++) {
        acc = combine(op, dt, acc, value(dt, r, i));
    }
    if (op == CT_REDUCE_AVG) {
        acc = is_float(dt) ? acc / n : trunc(acc / n);
    }
    if (dt == CT_UINT8 || dt == CT_INT8) { /* wraps like the engine's integers */
        acc = dt == CT_UINT8 ? (double)(uint8_t)(int64_t)acc : (double)(int8_t)(int64_t)acc;
    } else if (dt == CT_INT16) {
        acc = (double)(int16_t)(int64_t)acc;
    }
    return acc;
}

/* Checks t (n elements) against f(i) within the dtype's tolerance. */
#define CHECK_VALUES(t, n, dt, want_expr)                                                   \
    do {                                                                                    \
        double tol_ = (dt) == CT_BFLOAT16 ? 0.02 : (dt) == CT_FLOAT16 ? 2e-3 : 1e-6;        \
        int bad_ = 0;                                                                       \
        for (int64_t i = 0; i < (n); i++) {                                                 \
            double w_ = (want_expr), g_ = get((t), i);                                      \
            if (!(fabs(g_ - w_) <= tol_ * fmax(1.0, fabs(w_))) && bad_++ == 0) {            \
                fprintf(stderr, "  rank %d: %s:%d: dtype %d element %lld: %g, want %g\n", R, \
                        __FILE__, __LINE__, (int)(dt), (long long)i, g_, w_);               \
            }                                                                               \
        }                                                                                   \
        checks_failed += bad_ > 0;                                                          \
    } while (0)

static void test_before_init(void)
{
    ct_scope_begin();
    ct_tensor *t = make(CT_FLOAT32, R, 4, false);
    CHECK(!ct_dist_is_initialized());
    CHECK(ct_dist_all_reduce(t, CT_REDUCE_SUM, NULL, NULL) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "Default process group has not been initialized, please make sure "
                              "to call init_process_group.");
    CHECK(ct_dist_get_rank(NULL) == -1);
    CHECK_ERROR(CT_ERR_STATE, "ct_dist_get_rank: Default process group");
    CHECK(ct_dist_init_process_group("gloo", NULL) == CT_ERR_UNSUPPORTED);
    CHECK_ERROR(CT_ERR_UNSUPPORTED, "Gloo");
    CHECK(ct_dist_init_process_group("tcp", NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Invalid backend: 'tcp'");
    ct_dist_init_opts o = ct_dist_init_defaults();
    o.world_size = W + 1;
    CHECK(ct_dist_init_process_group("mpi", &o) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "world_size");
    CHECK(ct_dist_is_available());
    /* the hook ctorch_dist.h records its errors with */
    CHECK(ct_error_set(CT_ERR_DIST, "ct_x", "facts") == CT_ERR_DIST);
    CHECK_ERROR(CT_ERR_DIST, "ct_x: facts");
    CHECK(ct_error_set(CT_OK, "ct_x", "facts") == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "ct_error_set: code 0 is not an error code");
    ct_scope_end();
}

static void test_init(void)
{
    CHECK(ct_dist_init_process_group("mpi", NULL) == CT_OK);
    CHECK(ct_dist_is_initialized());
    CHECK(ct_dist_get_world_size(NULL) == W);
    CHECK(ct_dist_get_rank(NULL) == R);
    ct_dist_backend b = ct_dist_get_backend(NULL);
    CHECK(b == CT_BACKEND_MPI && b != CT_BACKEND_GLOO && b != CT_BACKEND_NCCL);
    CHECK(!ct_dist_is_nccl_available()); /* this build has no CTORCH_DIST_NCCL */
    CHECK(ct_dist_init_process_group("mpi", NULL) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "trying to initialize the default process group twice!");
}

/* Every ReduceOp on every dtype it takes, contiguous (7 elements) and strided (12). */
static void test_all_reduce(void)
{
    for (int d = 0; d < N_DTYPES; d++) {
        ct_dtype dt = DTYPES[d];
        for (int op = 0; op < CT_REDUCE_OP_COUNT; op++) {
            bool bitwise = op >= CT_REDUCE_BAND;
            if ((bitwise && is_float(dt)) || (dt == CT_BOOL && op == CT_REDUCE_AVG)) {
                continue; /* rejected: test_errors */
            }
            for (int strided = 0; strided < 2; strided++) {
                ct_scope_begin();
                int64_t n = strided ? 12 : 7;
                ct_tensor *t = make(dt, R, n, strided);
                CHECK(strided == !ct_is_contiguous(t));
                CHECK(ct_dist_all_reduce(t, (ct_reduce_op)op, NULL, NULL) == CT_OK);
                CHECK(ct_tensor_dtype(t) == dt);
                CHECK_VALUES(t, n, dt, expect((ct_reduce_op)op, dt, W, i));
                ct_scope_end();
            }
        }
    }
}

static void test_all_reduce_async(void)
{
    ct_scope_begin();
    ct_tensor *a = make(CT_FLOAT32, R, 1000, false), *b = make(CT_INT64, R, 6, true);
    ct_work *wa = NULL, *wb = NULL;
    CHECK(ct_dist_all_reduce(a, CT_REDUCE_SUM, NULL, &wa) == CT_OK && wa);
    CHECK(ct_dist_all_reduce(b, CT_REDUCE_MAX, NULL, &wb) == CT_OK && wb);
    CHECK(ct_work_wait(wb) == CT_OK);
    CHECK(ct_work_wait(wa) == CT_OK);
    CHECK(ct_work_is_completed(wa) && ct_work_is_completed(wb));
    CHECK(ct_work_wait(wa) == CT_OK); /* again: still fine */
    CHECK_VALUES(a, 1000, CT_FLOAT32, expect(CT_REDUCE_SUM, CT_FLOAT32, W, i));
    CHECK_VALUES(b, 6, CT_INT64, expect(CT_REDUCE_MAX, CT_INT64, W, i));
    ct_work_free(wa);
    ct_work_free(wb);
    ct_work_free(NULL);
    ct_scope_end();
}

static void test_broadcast(void)
{
    for (int src = 0; src < W; src++) {
        for (int d = 0; d < N_DTYPES; d++) {
            ct_scope_begin();
            ct_dtype dt = DTYPES[d];
            ct_tensor *t = make(dt, R, 10, d % 2 == 0);
            CHECK(ct_dist_broadcast(t, src, NULL, NULL) == CT_OK);
            CHECK_VALUES(t, 10, dt, value(dt, src, i));
            ct_scope_end();
        }
    }
}

static void test_reduce(void)
{
    const ct_reduce_op ops[] = {CT_REDUCE_SUM, CT_REDUCE_AVG, CT_REDUCE_MAX, CT_REDUCE_PRODUCT};
    for (int dst = 0; dst < W; dst++) {
        for (int k = 0; k < 4; k++) {
            ct_scope_begin();
            ct_dtype dt = k % 2 ? CT_FLOAT64 : CT_INT32;
            ct_tensor *t = make(dt, R, 9, false);
            ct_work *w = NULL;
            CHECK(ct_dist_reduce(t, dst, ops[k], NULL, k == 3 ? &w : NULL) == CT_OK);
            CHECK(ct_work_wait(w ? w : NULL) == (w ? CT_OK : CT_ERR_NULL_ARG));
            ct_error_clear();
            ct_work_free(w);
            if (R == dst) {
                CHECK_VALUES(t, 9, dt, expect(ops[k], dt, W, i));
            } else {
                CHECK_VALUES(t, 9, dt, value(dt, R, i));
            }
            ct_scope_end();
        }
    }
}

/* Rank k contributes k + 2 elements (uneven), into strided tensors where even. */
static void test_all_gather(void)
{
    for (int d = 0; d < N_DTYPES; d++) {
        ct_scope_begin();
        ct_dtype dt = DTYPES[d];
        ct_tensor *in = make(dt, R, R + 2, true);
        ct_tensor *list[3];
        for (int k = 0; k < W; k++) {
            list[k] = make(dt, 7, k + 2, k % 2 == 0);
        }
        CHECK(ct_dist_all_gather(list, W, in, NULL, NULL) == CT_OK);
        for (int k = 0; k < W; k++) {
            CHECK_VALUES(list[k], k + 2, dt, value(dt, k, i));
        }
        ct_scope_end();
    }
}

static void test_all_gather_into_tensor(void)
{
    ct_scope_begin();
    ct_tensor *in = make(CT_FLOAT16, R, 6, true);
    int64_t s[2] = {3, 2 * W};
    ct_tensor *out = ct_transpose(ct_zeros(s, 2, CT_FLOAT16), 0, 1); /* (2W, 3), strided */
    ct_work *w = NULL;
    CHECK(ct_dist_all_gather_into_tensor(out, in, NULL, &w) == CT_OK);
    CHECK(ct_work_wait(w) == CT_OK);
    ct_work_free(w);
    CHECK_VALUES(out, 6 * W, CT_FLOAT16, value(CT_FLOAT16, (int)(i / 6), i % 6));
    ct_scope_end();
}

static void test_reduce_scatter_tensor(void)
{
    const ct_reduce_op ops[] = {CT_REDUCE_SUM, CT_REDUCE_AVG, CT_REDUCE_MIN, CT_REDUCE_BXOR};
    for (int k = 0; k < 4; k++) {
        ct_scope_begin();
        ct_dtype dt = k == 3 ? CT_INT16 : k == 1 ? CT_BFLOAT16 : CT_FLOAT32;
        ct_tensor *in = make(dt, R, 5 * W, false);
        ct_tensor *out = make(dt, 0, 5, false);
        CHECK(ct_dist_reduce_scatter_tensor(out, in, ops[k], NULL, NULL) == CT_OK);
        CHECK_VALUES(out, 5, dt, expect(ops[k], dt, W, 5 * R + i));
        ct_scope_end();
    }
}

static void test_gather_scatter(void)
{
    int root = W - 1;
    ct_scope_begin();
    ct_tensor *in = make(CT_INT64, R, 2 * R + 1, false); /* uneven: 1, 3, 5 elements */
    ct_tensor *list[3];
    for (int k = 0; k < W; k++) {
        list[k] = make(CT_INT64, 9, 2 * k + 1, false);
    }
    bool is_root = R == root;
    CHECK(ct_dist_gather(in, is_root ? list : NULL, is_root ? W : 0, root, NULL, NULL) == CT_OK);
    for (int k = 0; k < W && is_root; k++) {
        CHECK_VALUES(list[k], 2 * k + 1, CT_INT64, value(CT_INT64, k, i));
    }
    /* scatter back from rank 0: rank k receives 2k + 2 elements into a strided tensor */
    const ct_tensor *send[3];
    for (int k = 0; k < W; k++) {
        send[k] = make(CT_FLOAT32, 10 + k, 2 * k + 2, true);
    }
    ct_tensor *out = make(CT_FLOAT32, 0, 2 * R + 2, true);
    CHECK(ct_dist_scatter(out, R == 0 ? send : NULL, R == 0 ? W : 0, 0, NULL, NULL) == CT_OK);
    CHECK_VALUES(out, 2 * R + 2, CT_FLOAT32, value(CT_FLOAT32, 10 + R, i));
    ct_scope_end();
}

static void test_barrier(void)
{
    ct_work *w = NULL;
    CHECK(ct_dist_barrier(NULL, NULL) == CT_OK);
    CHECK(ct_dist_barrier(NULL, &w) == CT_OK);
    CHECK(ct_work_wait(w) == CT_OK && ct_work_is_completed(w));
    ct_work_free(w);
}

/* A ring: rank r sends to r + 1 and receives from r - 1 (blocking and async, any source). */
static void test_send_recv(void)
{
    ct_scope_begin();
    ct_tensor *t = make(CT_FLOAT64, R, 8, true), *r = make(CT_FLOAT64, 0, 8, true);
    if (W == 1) {
        CHECK(ct_dist_send(t, 0, NULL, 0) == CT_ERR_VALUE);
        CHECK_ERROR(CT_ERR_VALUE, "Invalid destination rank: should not be the same as rank of "
                                  "the current process.");
        ct_scope_end();
        return;
    }
    int next = (R + 1) % W, prev = (R + W - 1) % W;
    if (R % 2 == 0) {
        CHECK(ct_dist_send(t, next, NULL, 3) == CT_OK);
        CHECK(ct_dist_recv(r, prev, NULL, 3) == prev);
    } else {
        CHECK(ct_dist_recv(r, -1, NULL, 3) == prev);
        CHECK(ct_dist_send(t, next, NULL, 3) == CT_OK);
    }
    CHECK_VALUES(r, 8, CT_FLOAT64, value(CT_FLOAT64, prev, i));
    ct_tensor *u = make(CT_BFLOAT16, R, 5, false), *v = make(CT_BFLOAT16, 0, 5, false);
    ct_work *ws = NULL, *wr = NULL;
    CHECK(ct_dist_irecv(v, -1, NULL, 9, &wr) == CT_OK);
    CHECK(ct_dist_isend(u, next, NULL, 9, &ws) == CT_OK);
    CHECK(ct_work_wait(wr) == CT_OK && ct_work_wait(ws) == CT_OK);
    CHECK(ct_work_source(wr) == prev);
    CHECK_VALUES(v, 5, CT_BFLOAT16, value(CT_BFLOAT16, prev, i));
    ct_work_free(ws);
    ct_work_free(wr);
    /* MPI's own error (the message does not fit) on a group of its own, which it aborts */
    ct_process_group *g = ct_dist_new_group(NULL, 0, 0);
    ct_tensor *small = make(CT_FLOAT64, 0, 4, false);
    if (R == 0) {
        CHECK(ct_dist_send(t, 1, g, 11) == CT_OK);
    } else if (R == 1) {
        CHECK(ct_dist_recv(small, 0, g, 11) == -1);
        CHECK_ERROR(CT_ERR_DIST, "ct_dist_recv: MPI error: MPI_ERR_TRUNCATE");
        CHECK(ct_dist_barrier(g, NULL) == CT_ERR_DIST);
        CHECK_ERROR(CT_ERR_DIST, "aborted");
    }
    CHECK(ct_dist_destroy_process_group(g) == CT_OK);
    CHECK(ct_dist_recv(r, prev, NULL, -1) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "tag must be >= 0");
    ct_scope_end();
}

static void test_new_group(void)
{
    int rev[3], first[1] = {0};
    for (int k = 0; k < W; k++) {
        rev[k] = W - 1 - k;
    }
    ct_process_group *g = ct_dist_new_group(rev, W, 0);
    ct_process_group *solo = ct_dist_new_group(first, 1, 0);
    CHECK(g && solo);
    CHECK(ct_dist_get_rank(g) == W - 1 - R && ct_dist_get_world_size(g) == W);
    CHECK(ct_dist_get_rank(solo) == (R == 0 ? 0 : -1));
    ct_scope_begin();
    ct_tensor *t = make(CT_FLOAT32, R, 6, false);
    CHECK(ct_dist_all_reduce(t, CT_REDUCE_SUM, g, NULL) == CT_OK);
    CHECK_VALUES(t, 6, CT_FLOAT32, expect(CT_REDUCE_SUM, CT_FLOAT32, W, i));
    ct_tensor *u = make(CT_FLOAT32, R, 6, false);
    CHECK(ct_dist_all_reduce(u, CT_REDUCE_SUM, solo, NULL) == CT_OK);
    CHECK_VALUES(u, 6, CT_FLOAT32, value(CT_FLOAT32, R, i)); /* alone, or not a member */
    ct_tensor *b = make(CT_INT32, R, 4, false);
    CHECK(ct_dist_broadcast(b, W - 1, g, NULL) == CT_OK); /* global rank W - 1: group rank 0 */
    CHECK_VALUES(b, 4, CT_INT32, value(CT_INT32, W - 1, i));
    ct_scope_end();
    int bad[2] = {0, 0};
    CHECK(!ct_dist_new_group(bad, 2, 0));
    CHECK_ERROR(CT_ERR_VALUE, "appears twice");
    bad[0] = W;
    CHECK(!ct_dist_new_group(bad, 1, 0));
    CHECK_ERROR(CT_ERR_VALUE, "out of range");
    CHECK(ct_dist_destroy_process_group(solo) == CT_OK);
    CHECK(ct_dist_destroy_process_group(g) == CT_OK);
}

static void test_errors(void)
{
    ct_scope_begin();
    ct_tensor *f = make(CT_FLOAT32, R, 4, false), *b = make(CT_BOOL, R, 4, false);
    CHECK(ct_dist_all_reduce(f, CT_REDUCE_BAND, NULL, NULL) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "Cannot use ReduceOp.BAND with non-integral dtype");
    CHECK(ct_dist_all_reduce(b, CT_REDUCE_AVG, NULL, NULL) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "Cannot use ReduceOp.AVG with boolean inputs");
    CHECK(ct_dist_all_reduce(f, (ct_reduce_op)99, NULL, NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "invalid ReduceOp");
    CHECK(ct_dist_all_reduce(NULL, CT_REDUCE_SUM, NULL, NULL) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_dist_broadcast(f, W, NULL, NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "global rank");
    ct_tensor *out = make(CT_FLOAT32, R, 4 * W + 1, false);
    CHECK(ct_dist_all_gather_into_tensor(out, f, NULL, NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "world_size times input tensor size");
    ct_tensor *list[4] = {f, f, f, f};
    CHECK(ct_dist_all_gather(list, W + 1, f, NULL, NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "tensors (the group's size)");
    list[R] = b;
    CHECK(ct_dist_all_gather(list, W, f, NULL, NULL) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "dtypes must match");
    CHECK(ct_dist_gather(f, R == 0 ? NULL : list, R == 0 ? 0 : W, 0, NULL, NULL) ==
          CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, R == 0 ? "must be specified on the root" : "must NOT be specified");
    CHECK(ct_dist_isend(f, 0, NULL, 0, NULL) == CT_ERR_NULL_ARG);
    ct_error_clear();
    ct_scope_end();
}

/* The last rank comes 1.5 s late to an all_reduce of a group with a 300 ms timeout: the
   others get the watchdog's error quickly and the group is aborted; then it catches up. */
static void test_timeout(void)
{
    ct_process_group *g = ct_dist_new_group(NULL, 0, 300);
    ct_scope_begin();
    ct_tensor *t = make(CT_FLOAT32, R, 3, false);
    if (R == W - 1) {
        sleep_ms(1500);
        CHECK(ct_dist_all_reduce(t, CT_REDUCE_SUM, g, NULL) == CT_OK);
    } else {
        double start = MPI_Wtime();
        ct_work *w = NULL;
        CHECK(ct_dist_all_reduce(t, CT_REDUCE_SUM, g, &w) == CT_OK);
        CHECK(!ct_work_is_completed(w));
        CHECK(ct_work_wait(w) == CT_ERR_DIST);
        CHECK(MPI_Wtime() - start < 1.2);
        CHECK(ct_work_is_completed(w)); /* failed counts as completed */
        CHECK_ERROR(CT_ERR_DIST, "Watchdog caught collective operation timeout: "
                                 "Work(SeqNum=1, OpType=ALLREDUCE, NumelIn=3, NumelOut=3, "
                                 "Timeout(ms)=300) ran for");
        CHECK(ct_work_wait(w) == CT_ERR_DIST); /* again, with the same message */
        CHECK_ERROR(CT_ERR_DIST, "ct_dist_all_reduce: [Rank ");
        ct_work_free(w);
        CHECK(ct_dist_barrier(g, NULL) == CT_ERR_DIST);
        CHECK_ERROR(CT_ERR_DIST, "aborted");
    }
    ct_scope_end();
    CHECK(ct_dist_barrier(NULL, NULL) == CT_OK);
    CHECK(ct_dist_destroy_process_group(g) == CT_OK);
    CHECK(ct_dist_destroy_process_group(g) == CT_ERR_STATE);
    ct_error_clear();
}

/* --never-joins: the last rank never calls init (it exits after 1.5 s); the others' init
   fails after its 300 ms timeout. */
static void test_never_joins(void)
{
    if (R == W - 1) {
        sleep_ms(1500);
        fflush(stderr);
        _Exit(0);
    }
    ct_dist_init_opts o = ct_dist_init_defaults();
    o.timeout_ms = 300;
    double start = MPI_Wtime();
    CHECK(ct_dist_init_process_group("mpi", &o) == CT_ERR_DIST);
    CHECK_ERROR(CT_ERR_DIST, "timed out after");
    CHECK(MPI_Wtime() - start < 1.2);
    CHECK(!ct_dist_is_initialized());
}

/* --dead-rank: the last rank exits after init; an all_reduce on the others fails in time. */
static void test_dead_rank(void)
{
    ct_dist_init_opts o = ct_dist_init_defaults();
    o.timeout_ms = 500;
    CHECK(ct_dist_init_process_group("mpi", &o) == CT_OK);
    if (R == W - 1) {
        fflush(stderr);
        _Exit(0);
    }
    ct_scope_begin();
    ct_tensor *t = make(CT_FLOAT32, R, 3, false);
    double start = MPI_Wtime();
    CHECK(ct_dist_all_reduce(t, CT_REDUCE_SUM, NULL, NULL) == CT_ERR_DIST);
    CHECK_ERROR(CT_ERR_DIST, "Watchdog caught collective operation timeout");
    CHECK(MPI_Wtime() - start < 5);
    ct_scope_end();
}

typedef struct {
    const char *name;
    void (*fn)(void);
    int min_world; /* run only at world sizes >= this */
} test_case;

static const test_case TESTS[] = {
    {"before_init", test_before_init, 1},
    {"init", test_init, 1},
    {"all_reduce", test_all_reduce, 1},
    {"all_reduce_async", test_all_reduce_async, 1},
    {"broadcast", test_broadcast, 1},
    {"reduce", test_reduce, 1},
    {"all_gather", test_all_gather, 1},
    {"all_gather_into_tensor", test_all_gather_into_tensor, 1},
    {"reduce_scatter_tensor", test_reduce_scatter_tensor, 1},
    {"gather_scatter", test_gather_scatter, 1},
    {"barrier", test_barrier, 1},
    {"send_recv", test_send_recv, 1},
    {"new_group", test_new_group, 1},
    {"errors", test_errors, 1},
    {"timeout", test_timeout, 2},
};

/* Runs one test; a test fails on any rank's failed check, an error left pending or a leak.
   collective: every rank runs it (false: --dead-rank, --never-joins, where a rank is gone). */
static bool run(const test_case *t, bool collective)
{
    size_t before = ct_memory_allocated();
    checks_failed = 0;
    t->fn();
    if (ct_error()) {
        fprintf(stderr, "  rank %d: error left pending: %s\n", R, ct_error());
        ct_error_clear();
        checks_failed++;
    }
    /* (not collective: a request is left pending, and its buffers stay allocated) */
    if (collective && ct_memory_allocated() != before) {
        fprintf(stderr, "  rank %d: %zu bytes leaked\n", R, ct_memory_allocated() - before);
        checks_failed++;
    }
    int failed = checks_failed > 0, any = failed;
    if (collective) {
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (any && (R == 0 || !collective)) {
        fprintf(stderr, "FAIL %s (world size %d)\n", t->name, W);
    }
    return !any;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv); /* the tests need W and R before ct_dist_init_process_group */
    MPI_Comm_size(MPI_COMM_WORLD, &W);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    ct_set_error_handler(silent, NULL);
    int passed = 0, failed = 0;
    bool dead = argc > 1 && strcmp(argv[1], "--dead-rank") == 0;
    if (dead || (argc > 1 && strcmp(argv[1], "--never-joins") == 0)) {
        test_case t = {argv[1] + 2, dead ? test_dead_rank : test_never_joins, 2};
        run(&t, false) ? passed++ : failed++;
        printf("%s, world size %d, rank %d: %d passed, %d failed\n", t.name, W, R, passed,
               failed);
        return failed ? 1 : 0; /* a request is left pending: MPI_Finalize would hang */
    }
    for (size_t k = 0; k < sizeof TESTS / sizeof TESTS[0]; k++) {
        if (W >= TESTS[k].min_world && (argc < 2 || strstr(TESTS[k].name, argv[1]))) {
            run(&TESTS[k], true) ? passed++ : failed++;
        }
    }
    ct_dist_destroy_process_group(NULL);
    if (R == 0) {
        printf("world size %d: %d passed, %d failed\n", W, passed, failed);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
