/* tests/main.c - the test runner: every area, then "N passed, N failed".
 *
 * Each test runs with the error state clear; afterwards no scope may be open, no error may
 * be pending and ctorch's live bytes must be back where they were (the leak check).
 */
#include "test.h"

#include <stdarg.h>
#include <stdlib.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define CT_TEST_FPMODE_GET() _mm_getcsr()
#define CT_TEST_FPMODE_SET(m) _mm_setcsr(m)
#else
#define CT_TEST_FPMODE_GET() 0u
#define CT_TEST_FPMODE_SET(m) ((void)(m))
#endif

int ct_test_failed_checks = 0;
static int ct_test_passed = 0, ct_test_failed = 0;
static const char *ct_test_filter = NULL;

void ct_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "  %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ct_test_failed_checks++;
}

int ct_test_close(const char *file, int line, const double *a, const double *b, int64_t n,
                  double rtol, double atol)
{
    double max_abs = 0, max_rel = 0;
    int64_t first_bad = -1;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        bool bad = !(d <= atol + rtol * fabs(b[i])) && !(isnan(a[i]) && isnan(b[i]));
        if (bad && first_bad < 0) {
            first_bad = i;
        }
        if (d > max_abs) {
            max_abs = d;
        }
        if (b[i] != 0 && d / fabs(b[i]) > max_rel) {
            max_rel = d / fabs(b[i]);
        }
    }
    if (first_bad >= 0) {
        ct_test_fail(file, line, "mismatch: max abs diff %.3g, max rel diff %.3g, first bad index "
                     "%lld (got %.10g, want %.10g)", max_abs, max_rel, (long long)first_bad,
                     a[first_bad], b[first_bad]);
        return 0;
    }
    return 1;
}

int ct_test_tensor_close(const char *file, int line, const ct_tensor *t, const double *want,
                         int64_t n, double rtol, double atol)
{
    if (!t) {
        ct_test_fail(file, line, "tensor is NULL (%s)", ct_error() ? ct_error() : "no error");
        return 0;
    }
    if (ct_numel(t) != n) {
        ct_test_fail(file, line, "tensor has %lld elements, want %lld", (long long)ct_numel(t),
                     (long long)n);
        return 0;
    }
    double *got = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    ct_scope_begin();
    ct_no_grad_begin(); /* reading values records nothing */
    ct_tensor *c = ct_contiguous(ct_to_dtype(t, CT_FLOAT64));
    ct_no_grad_end();
    if (!c) {
        ct_scope_end();
        free(got);
        ct_test_fail(file, line, "cannot read the tensor: %s", ct_error() ? ct_error() : "?");
        return 0;
    }
    memcpy(got, ct_data_ptr(c), sizeof(double) * (size_t)n);
    ct_scope_end();
    int ok = ct_test_close(file, line, got, want, n, rtol, atol);
    free(got);
    return ok;
}

void ct_test_run(const char *name, void (*fn)(void))
{
    if (ct_test_filter && !strstr(name, ct_test_filter)) {
        return;
    }
    int before = ct_test_failed_checks;
    size_t live = ct_memory_allocated();
    unsigned fpmode = CT_TEST_FPMODE_GET();
    ct_error_clear();
    fn();
    /* each test starts from the same floating-point state: ctorch's kernels flush subnormals
       (the default) and the main thread keeps its own mode (ct_set_flush_denormal sets it) */
    ct_set_flush_denormal(true);
    CT_TEST_FPMODE_SET(fpmode);
    if (ct_scope_depth() != 0) {
        ct_test_fail(__FILE__, __LINE__, "%d scope(s) left open", ct_scope_depth());
        while (ct_scope_depth() > 0) {
            ct_scope_end();
        }
    }
    if (ct_error()) {
        ct_test_fail(__FILE__, __LINE__, "unexpected pending error: %s", ct_error());
        ct_error_clear();
    }
    if (ct_memory_allocated() != live) {
        ct_test_fail(__FILE__, __LINE__, "leak: %lld bytes still allocated",
                     (long long)ct_memory_allocated() - (long long)live);
    }
    if (ct_test_failed_checks == before) {
        ct_test_passed++;
    } else {
        ct_test_failed++;
        fprintf(stderr, "FAIL %s\n", name);
    }
}

void ct_test_thread_invariant(const char *file, int line, void (*compute)(ct_tensor **out),
                              int n)
{
    ct_tensor *r[2][16] = {{NULL}};
    for (int k = 0; k < 2 && n <= 16; k++) {
        ct_set_num_threads(k ? 4 : 1);
        ct_scope_begin();
        compute(r[k]);
        ct_scope_end();
    }
    ct_reset_num_threads();
    for (int j = 0; j < n && j < 16; j++) {
        if (!ct_test_same_bytes(r[0][j], r[1][j])) {
            ct_test_fail(file, line, "result %d differs between 1 and 4 threads", j);
        }
        ct_free(r[0][j]);
        ct_free(r[1][j]);
    }
}

#define CT_TEST_AREAS(X)                                                                   \
    X(core)                                                                                 \
    X(vmath_paths)                                                                          \
    X(gemm)                                                                                 \
    X(ops)                                                                                  \
    X(autograd)                                                                             \
    X(nn)                                                                                   \
    X(optim)                                                                                \
    X(optim2)                                                                               \
    X(optim_state)                                                                          \
    X(lr_scheduler)                                                                         \
    X(data)                                                                                 \
    X(dataloader)                                                                           \
    X(csvex)                                                                                \
    X(bench)                                                                                \
    X(profiler)                                                                             \
    X(parallel)                                                                             \
    X(error)                                                                                \
    X(null)                                                                                 \
    X(debug)                                                                                \
    X(hostile)                                                                              \
    X(rng)                                                                                  \
    X(dispatch)                                                                             \
    X(view7)                                                                                \
    X(pointwise7)                                                                           \
    X(pointwise2)                                                                           \
    X(index)                                                                                \
    X(reduce7)                                                                              \
    X(views)                                                                                \
    X(print)                                                                                \
    X(creation2)                                                                            \
    X(tensor2)                                                                              \
    X(linalg2)                                                                              \
    X(imm)                                                                                  \
    X(sort)                                                                                 \
    X(half)                                                                                 \
    X(reduce2)                                                                              \
    X(index2)                                                                               \
    X(decomp)                                                                               \
    X(half2)                                                                                \
    X(lowp)                                                                                 \
    X(module)                                                                               \
    X(safetensors)                                                                          \
    X(pool)                                                                                 \
    X(narrow)                                                                               \
    X(loss)                                                                                 \
    X(init)                                                                                 \
    X(conv)                                                                                 \
    X(norm)                                                                                 \
    X(embedding)                                                                            \
    X(activation)                                                                           \
    X(attention)                                                                            \
    X(cnn)                                                                                  \
    X(distance)                                                                             \
    X(amp)                                                                                  \
    X(swa)                                                                                  \
    X(module_act)                                                                           \
    X(sample)                                                                               \
    X(autograd9)                                                                            \
    X(autograd13)                                                                           \
    X(transformer)                                                                          \
    X(kv_cache)                                                                             \
    X(gpt)                                                                                  \
    X(minilm)                                                                               \
    X(readers)                                                                              \
    X(transforms)                                                                           \
    X(arena)

#define CT_TEST_DECL(area) void test_##area(void);
CT_TEST_AREAS(CT_TEST_DECL)

/* The tests provoke errors on purpose and check them through ct_error(): a silent handler
   turns off the default print of first errors to stderr (test_error.c checks that print). */
static void ct_test_silent_handler(ct_status code, const char *message, void *user_data)
{
    (void)code;
    (void)message;
    (void)user_data;
}

void ct_test_install_silent_handler(void) { ct_set_error_handler(ct_test_silent_handler, NULL); }

int main(int argc, char **argv)
{
    ct_test_filter = argc > 1 ? argv[1] : NULL;
    ct_test_install_silent_handler();
#define CT_TEST_CALL(area) test_##area();
    CT_TEST_AREAS(CT_TEST_CALL)
    printf("%d passed, %d failed\n", ct_test_passed, ct_test_failed);
    return ct_test_failed ? 1 : 0;
}
