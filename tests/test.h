/* tests/test.h - the tiny test registry shared by every tests/test_*.c file.
 *
 * Each area file defines `void test_<area>(void)` that calls RUN(fn) for each of its
 * tests; tests/main.c calls the areas and prints "N passed, N failed". A test fails
 * when any CHECK in it fails; the first failing check prints file, line and facts.
 */
#ifndef CT_TEST_H
#define CT_TEST_H

#include "../ctorch.h"
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

extern int ct_test_failed_checks;
void ct_test_run(const char *name, void (*fn)(void));
void ct_test_fail(const char *file, int line, const char *fmt, ...);
/* Compares n values of a and b (float64) within atol + rtol*|b|; on failure reports
   the max absolute and relative difference and the first bad index. */
int ct_test_close(const char *file, int line, const double *a, const double *b, int64_t n,
                  double rtol, double atol);
/* Compares a tensor (any float dtype, any strides) with n expected float64 values. */
int ct_test_tensor_close(const char *file, int line, const ct_tensor *t, const double *want,
                         int64_t n, double rtol, double atol);

/* Runs compute (which fills out[0..n-1] with kept tensors, ct_keep) once with 1 thread and
   once with 4, and fails unless each result has the same bytes both times; frees them. */
void ct_test_thread_invariant(const char *file, int line, void (*compute)(ct_tensor **out),
                              int n);
#define CHECK_THREAD_INVARIANT(compute, n) ct_test_thread_invariant(__FILE__, __LINE__, compute, n)

/* Installs the runner's silent error handler (tests that change the handler restore it). */
void ct_test_install_silent_handler(void);

#define RUN(fn) ct_test_run(#fn, fn)
#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            ct_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                           \
        }                                                                                   \
    } while (0)
#define CHECK_MSG(cond, ...)                                                                \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            ct_test_fail(__FILE__, __LINE__, __VA_ARGS__);                                  \
        }                                                                                   \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                               \
    do {                                                                                    \
        double ct__a = (double)(a), ct__b = (double)(b);                                    \
        if (!(fabs(ct__a - ct__b) <= (tol))) {                                              \
            ct_test_fail(__FILE__, __LINE__, "%s = %.17g, want %s = %.17g (tol %g)", #a,    \
                         ct__a, #b, ct__b, (double)(tol));                                  \
        }                                                                                   \
    } while (0)
#define CHECK_CLOSE(a, b, n, rtol, atol) ct_test_close(__FILE__, __LINE__, a, b, n, rtol, atol)
#define CHECK_TENSOR(t, want, n, rtol, atol)                                                \
    ct_test_tensor_close(__FILE__, __LINE__, t, want, n, rtol, atol)
/* Asserts that the last op failed with `code` and a message containing `substr`, then
   clears the error. */
#define CHECK_ERROR(code, substr)                                                           \
    do {                                                                                    \
        CHECK_MSG(ct_error_code() == (code), "error code %s (%s), want %s",                 \
                  ct_status_str(ct_error_code()), ct_error() ? ct_error() : "no error",     \
                  ct_status_str(code));                                                     \
        CHECK_MSG(ct_error() && strstr(ct_error(), (substr)), "message '%s' lacks '%s'",    \
                  ct_error() ? ct_error() : "(none)", (substr));                            \
        ct_error_clear();                                                                   \
    } while (0)

/* The number of elements of a shape. */
static inline int64_t ct_test_numel(const int64_t *s, int nd)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        n *= s[d];
    }
    return n;
}

/* The golden generators' deterministic inputs: element i of input k is
   sin(1.3 i + 0.7 + k) * 2 + cos(0.37 i) + 0.5 k. */
static inline double ct_test_wave(int64_t i, int k)
{
    return sin((double)i * 1.3 + 0.7 + k) * 2 + cos((double)i * 0.37) + 0.5 * k;
}

/* A tensor of shape s (nd dims) and dtype dt holding scale * ct_test_wave(i, k), computed in
   float64 then converted. */
static inline ct_tensor *ct_test_wave_tensor(const int64_t *s, int nd, int k, double scale,
                                             ct_dtype dt)
{
    int64_t n = ct_test_numel(s, nd);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        v[i] = scale * ct_test_wave(i, k);
    }
    ct_tensor *t = ct_to_dtype(ct_reshape(ct_tensor_from_data(v, CT_FLOAT64, &n, 1), s, nd), dt);
    free(v);
    return t;
}

/* Whether a and b are both non-NULL and hold the same bytes (results that must not depend on
   the thread count). */
static inline bool ct_test_same_bytes(const ct_tensor *a, const ct_tensor *b)
{
    return a && b && ct_nbytes(a) == ct_nbytes(b) &&
           !memcmp(ct_data_ptr(a), ct_data_ptr(b), ct_nbytes(a));
}

/* Whether t (non-NULL) has exactly the shape s. */
static inline bool ct_test_has_shape(const ct_tensor *t, const int64_t *s, int nd)
{
    if (!t || ct_dim(t) != nd) {
        return false;
    }
    for (int d = 0; d < nd; d++) {
        if (ct_size(t, d) != s[d]) {
            return false;
        }
    }
    return true;
}

/* A leaf that requires grad holding data (float64) converted to dtype, caller-owned (the
   optimizer tests' parameters). */
static inline ct_tensor *ct_test_param(const double *data, const int64_t *sizes, int ndim,
                                       ct_dtype dtype)
{
    ct_tensor *t = ct_tensor_from_data(data, CT_FLOAT64, sizes, ndim);
    if (dtype != CT_FLOAT64) {
        ct_tensor *c = ct_to_dtype(t, dtype);
        ct_free(t);
        t = c;
    }
    return ct_requires_grad_(t, true);
}

/* Sets p's .grad to a copy of data (converted to p's dtype); the caller keeps nothing. */
static inline void ct_test_set_grad(ct_tensor *p, const double *data)
{
    ct_scope_begin();
    ct_tensor *g = ct_tensor_from_data(data, CT_FLOAT64, ct_sizes(p), ct_dim(p));
    CHECK(ct_set_grad(p, ct_to_dtype(g, ct_tensor_dtype(p))) == CT_OK);
    ct_scope_end();
}

/* A dispatch hook logging each op call it sees, as passed (before meta): the descriptor, the
   attributes, the generator and the first input. Begin pushes it, end pops it. */
#define CT_TEST_OP_LOG_MAX 32
typedef struct ct_test_op_log {
    int n;
    ct_op_call call[CT_TEST_OP_LOG_MAX]; /* copies: inputs and int[] attributes are stale */
    const ct_tensor *input0[CT_TEST_OP_LOG_MAX];
} ct_test_op_log;
static inline bool ct_test_op_log_before(void *user, ct_op_call *c)
{
    ct_test_op_log *log = (ct_test_op_log *)user;
    if (log->n < CT_TEST_OP_LOG_MAX) {
        log->call[log->n] = *c;
        log->input0[log->n] = c->n_inputs ? c->inputs[0] : NULL;
        log->n++;
    }
    return false;
}
static inline void ct_test_op_log_begin(ct_test_op_log *log)
{
    ct_dispatch_hook h = {ct_test_op_log_before, NULL, log};
    log->n = 0;
    ct_dispatch_hook_push(&h);
}
static inline void ct_test_op_log_end(void)
{
    ct_dispatch_hook_pop();
}

#endif
