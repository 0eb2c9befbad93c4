/* bench/bench_pointwise.c - ms per call of every float32 unary and binary pointwise op on 2^20
 * contiguous elements (inputs uniform in the op's domain), the minimum over REPS calls.
 * Usage: bench_pointwise THREADS [REPS] [NAME-SUBSTRING]
 * Prints one line per op: "name arity lo hi ms"; tools/bench_pointwise.py times PyTorch on the
 * same ops and domains and prints the ratios (make bench-pointwise).
 */
#define _POSIX_C_SOURCE 200809L
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N ((int64_t)1 << 20)

typedef ct_tensor *(*un_fn)(const ct_tensor *x);
typedef ct_tensor *(*bin_fn)(const ct_tensor *a, const ct_tensor *b);

static ct_tensor *logit(const ct_tensor *x) { return ct_logit(x, -1.0); }
static ct_tensor *nan_to_num(const ct_tensor *x) { return ct_nan_to_num(x, 0.0, NULL, NULL); }

typedef struct bench_case {
    const char *name;
    un_fn un;
    bin_fn bin;
    double lo, hi; /* inputs uniform in [lo, hi) */
} bench_case;

#define U(f, lo, hi) {#f, ct_##f, NULL, lo, hi}
#define B(f, lo, hi) {#f, NULL, ct_##f, lo, hi}
static const bench_case cases[] = {
    U(neg, -10, 10), U(abs, -10, 10), U(exp, -10, 10), U(log, 0.01, 100), U(log1p, -0.9, 100),
    U(sqrt, 0, 100), U(rsqrt, 0.01, 100), U(sin, -10, 10), U(cos, -10, 10), U(sigmoid, -10, 10),
    U(tanh, -5, 5), U(relu, -10, 10), U(square, -10, 10), U(reciprocal, 0.1, 10), U(erf, -3, 3),
    U(expm1, -5, 5), U(exp2, -10, 10), U(log2, 0.01, 100), U(log10, 0.01, 100), U(tan, -1.5, 1.5),
    U(asin, -1, 1), U(acos, -1, 1), U(atan, -10, 10), U(sinh, -5, 5), U(cosh, -5, 5),
    U(asinh, -10, 10), U(acosh, 1, 10), U(atanh, -0.99, 0.99), U(erfc, -3, 3),
    U(erfinv, -0.99, 0.99), U(floor, -10, 10), U(ceil, -10, 10), U(round, -10, 10),
    U(trunc, -10, 10), U(frac, -10, 10), U(sign, -10, 10), U(sgn, -10, 10),
    {"logit", logit, NULL, 0.01, 0.99}, {"nan_to_num", nan_to_num, NULL, -10, 10},
    B(add, -10, 10), B(sub, -10, 10), B(mul, -10, 10), B(div, 0.1, 10), B(pow, 0.1, 3),
    B(maximum, -10, 10), B(minimum, -10, 10), B(hypot, -10, 10), B(atan2, -10, 10),
    B(xlogy, 0.01, 10), B(logaddexp, -10, 10), B(logaddexp2, -10, 10), B(fmod, 0.1, 10),
    B(remainder, 0.1, 10), B(floor_divide, 0.1, 10), B(fmax, -10, 10), B(fmin, -10, 10),
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static ct_tensor *uniform(double lo, double hi, uint64_t seed)
{
    int64_t n = N;
    ct_tensor *t = ct_empty(&n, 1, CT_FLOAT32);
    float *p = (float *)ct_data_ptr(t);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (float)(lo + (hi - lo) * (double)(seed >> 40) / 16777216.0);
    }
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s THREADS [REPS] [NAME-SUBSTRING]\n", argv[0]);
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    ct_set_num_threads(atoi(argv[1]));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const bench_case *c = &cases[k];
        if (argc > 3 && !strstr(c->name, argv[3])) {
            continue;
        }
        ct_scope_begin();
        ct_tensor *a = uniform(c->lo, c->hi, 1), *b = uniform(c->lo, c->hi, 2);
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            ct_scope_begin();
            double t0 = now_ms();
            ct_tensor *y = c->un ? c->un(a) : c->bin(a, b);
            double t = now_ms() - t0;
            ct_scope_end();
            if (!y) {
                fprintf(stderr, "%s: %s\n", c->name, ct_error());
                return 1;
            }
            best = t < best ? t : best;
        }
        ct_scope_end();
        printf("%s %d %g %g %.4f\n", c->name, c->un ? 1 : 2, c->lo, c->hi, best);
        fflush(stdout);
    }
    return 0;
}
