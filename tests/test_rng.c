/* tests/test_rng.c - random streams compared bit for bit with PyTorch's. Golden values come
 * from tools/gen_golden_rng.py (tests/golden/rng_golden.h): seeds 0, 1 and 42; sizes 1, 15,
 * 16, 17, 1000 and 10^6 (randperm also 2^24), checked through a CRC-32 of the raw bytes and
 * sampled values. `make test-rng-flags` runs them built with -std=c11 and gnu11, -O0 and -O2
 * and -ffp-contract=fast, since the results must not depend on compiler flags.
 */
#include "test.h"

#include <stdlib.h>
#include "golden/rng_golden.h"

/* CRC-32 of n bytes, as zlib's crc32. */
static uint32_t rng_crc32(const void *data, size_t n)
{
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) {
            c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        }
        table[i] = c;
    }
    const unsigned char *p = (const unsigned char *)data;
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc = table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    }
    return crc ^ 0xffffffffu;
}

/* Whether the platform's libm rounds float64 log/exp/sin/cos/tan as the x86-64 glibc that
   made the fixture (its FMA builds). 32-bit ARM glibc is built without FMA: about one value in
   10^4 of a float64 stream through those functions differs in the last bit there, so such
   streams are checked by their samples, not by their CRC. */
static bool rng_libm_as_fixture(const rng_golden *g)
{
#if defined(__arm__) && !defined(__aarch64__)
    bool libm = g->op == RNG_OP_RANDN || g->op == RNG_OP_NORMAL || g->op == RNG_OP_NORMAL_T ||
                g->op == RNG_OP_NORMAL_TT || g->op == RNG_OP_EXPONENTIAL ||
                g->op == RNG_OP_CAUCHY || g->op == RNG_OP_LOG_NORMAL || g->op == RNG_OP_SEQ ||
                g->op == RNG_OP_STATE;
    return !(libm && g->dtype == CT_FLOAT64);
#else
    (void)g;
    return true;
#endif
}

int rng_golden_check(const char *file, int line, const ct_tensor *t, const rng_golden *g)
{
    if (!t || !ct_is_contiguous(t) || ct_tensor_dtype(t) != g->dtype || ct_numel(t) != g->numel) {
        ct_test_fail(file, line, "%s: no contiguous %s tensor of %lld elements (%s)", g->name,
                     ct_dtype_name(g->dtype), (long long)g->numel,
                     ct_error() ? ct_error() : "wrong dtype or size");
        return 0;
    }
    size_t es = ct_dtype_size(g->dtype);
    const char *data = (const char *)ct_data_ptr(t);
    for (int k = 0; k < g->nsamples; k++) {
        int64_t i = rng_sample_index(k, g->numel);
        uint64_t got = 0; /* little-endian bytes, zero-extended */
        memcpy(&got, data + (size_t)i * es, es);
        if (got != g->samples[k]) {
            ct_test_fail(file, line, "%s: element %lld has bits 0x%llx, PyTorch's 0x%llx", g->name,
                         (long long)i, (unsigned long long)got,
                         (unsigned long long)g->samples[k]);
            return 0;
        }
    }
    uint32_t crc = rng_crc32(data, (size_t)g->numel * es);
    if (crc != g->crc && rng_libm_as_fixture(g)) {
        ct_test_fail(file, line, "%s: CRC-32 0x%08x, PyTorch's 0x%08x", g->name, crc, g->crc);
        return 0;
    }
    return 1;
}

/* RNG_OP_SEQ: calls that share normal_distribution's cached sample, as float64. */
static ct_tensor *rng_sequence(void)
{
    const int64_t sizes[7] = {1, 3, 2, 15, 16, 5, 5};
    ct_tensor *parts[7];
    parts[0] = ct_randn(&sizes[0], 1, CT_FLOAT64, NULL);
    parts[1] = ct_randn(&sizes[1], 1, CT_FLOAT64, NULL);
    parts[2] = ct_rand(&sizes[2], 1, CT_FLOAT64, NULL);
    parts[3] = ct_to_dtype(ct_randn(&sizes[3], 1, CT_FLOAT32, NULL), CT_FLOAT64);
    parts[4] = ct_randn(&sizes[4], 1, CT_FLOAT64, NULL);
    parts[5] = ct_randn(&sizes[5], 1, CT_FLOAT64, NULL);
    parts[6] = ct_to_dtype(ct_randint(0, 7, &sizes[6], 1, CT_INT64, NULL), CT_FLOAT64);
    return ct_cat((const ct_tensor *const *)parts, 7, 0);
}

/* A transposed (5, n / 5) view of a new (n / 5, 5) tensor filled by uniform_ or normal_;
   returns the base, whose bytes show the order of the draws. */
static ct_tensor *rng_fill_transposed(const rng_golden *c)
{
    int64_t s[2] = {c->n / 5, 5};
    ct_tensor *base = ct_empty(s, 2, c->dtype), *view = ct_t(base);
    ct_tensor *r = c->op == RNG_OP_UNIFORM_T ? ct_uniform_(view, c->a, c->b, NULL)
                                             : ct_normal_(view, c->a, c->b, NULL);
    return r ? base : NULL;
}

/* RNG_OP_NORMAL_TT: ct_normal with mean[i] = i % 7 - 3 and std[i] = 0.5 + (i % 3) / 4. */
static ct_tensor *rng_normal_tt(const rng_golden *c)
{
    double *v = (double *)malloc(sizeof(double) * (size_t)(2 * c->n + 1));
    if (!v) {
        return NULL;
    }
    for (int64_t i = 0; i < c->n; i++) {
        v[i] = (double)(i % 7) - 3;
        v[c->n + i] = 0.5 + (double)(i % 3) / 4;
    }
    ct_tensor *mean = ct_tensor_from_data(v, CT_FLOAT64, &c->n, 1);
    ct_tensor *std = ct_tensor_from_data(v + c->n, CT_FLOAT64, &c->n, 1);
    free(v);
    return ct_normal(ct_to_dtype(mean, c->dtype), ct_to_dtype(std, c->dtype), NULL);
}

/* RNG_OP_MULTINOMIAL: c->n rows (0: 1-D) of c->lo categories weighted (j % 5 + 1) * (row + 1). */
static ct_tensor *rng_multinomial(const rng_golden *c)
{
    int64_t rows = c->n ? c->n : 1, sizes[2] = {rows, c->lo};
    double *v = (double *)malloc(sizeof(double) * (size_t)(rows * c->lo));
    if (!v) {
        return NULL;
    }
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < c->lo; j++) {
            v[i * c->lo + j] = (double)(j % 5 + 1) * (double)(i + 1);
        }
    }
    ct_tensor *p = ct_tensor_from_data(v, CT_FLOAT64, c->n ? sizes : sizes + 1, c->n ? 2 : 1);
    free(v);
    return ct_multinomial(ct_to_dtype(p, c->b == 32 ? CT_FLOAT32 : CT_FLOAT64), c->hi, c->a != 0,
                          NULL);
}

/* The call of case c (the generator already seeded); its result, owned by the scope. */
static ct_tensor *rng_run(const rng_golden *c)
{
    int64_t n = c->n;
    switch (c->op) {
    case RNG_OP_RAND: return ct_rand(&n, 1, c->dtype, NULL);
    case RNG_OP_RANDN: return ct_randn(&n, 1, c->dtype, NULL);
    case RNG_OP_UNIFORM: return ct_uniform_(ct_empty(&n, 1, c->dtype), c->a, c->b, NULL);
    case RNG_OP_NORMAL: return ct_normal_(ct_empty(&n, 1, c->dtype), c->a, c->b, NULL);
    case RNG_OP_UNIFORM_T:
    case RNG_OP_NORMAL_T: return rng_fill_transposed(c);
    case RNG_OP_RANDINT: return ct_randint(c->lo, c->hi, &n, 1, c->dtype, NULL);
    case RNG_OP_RANDPERM: return ct_randperm(n, NULL);
    case RNG_OP_BERNOULLI: return ct_bernoulli_(ct_empty(&n, 1, c->dtype), c->a, NULL);
    case RNG_OP_RANDOM: return ct_random_(ct_empty(&n, 1, c->dtype), NULL);
    case RNG_OP_EXPONENTIAL: return ct_exponential_(ct_empty(&n, 1, c->dtype), c->a, NULL);
    case RNG_OP_CAUCHY: return ct_cauchy_(ct_empty(&n, 1, c->dtype), c->a, c->b, NULL);
    case RNG_OP_LOG_NORMAL: return ct_log_normal_(ct_empty(&n, 1, c->dtype), c->a, c->b, NULL);
    case RNG_OP_GEOMETRIC: return ct_geometric_(ct_empty(&n, 1, c->dtype), c->a, NULL);
    case RNG_OP_NORMAL_TT: return rng_normal_tt(c);
    case RNG_OP_RANDINT_LIKE: return ct_randint_like(ct_empty(&n, 1, c->dtype), c->lo, c->hi, NULL);
    case RNG_OP_MULTINOMIAL: return rng_multinomial(c);
    case RNG_OP_STATE:
        ct_randn(&n, 1, CT_FLOAT64, NULL);
        return ct_get_rng_state();
    case RNG_OP_SEQ: return rng_sequence();
    default: return NULL;
    }
}

/* Every case of the fixture: rand, randn, normal_ and uniform_ (float32 and float64, any
   mean/std/bounds, contiguous and transposed), randint (ranges of 2^63, 2^40 and small, several
   dtypes), randperm, bernoulli_, random_ and a call sequence. */
static void test_rng_matches_pytorch(void)
{
    int n_cases = (int)(sizeof rng_golden_cases / sizeof rng_golden_cases[0]);
    for (int k = 0; k < n_cases; k++) {
        const rng_golden *c = &rng_golden_cases[k];
        ct_scope_begin();
        ct_manual_seed(c->seed);
        RNG_GOLDEN_CHECK(rng_run(c), c);
        ct_error_clear();
        ct_scope_end();
    }
}

/* The same stream from an explicit generator, and a generator's draws leave the default one
   alone. */
static void test_rng_explicit_generator(void)
{
    ct_scope_begin();
    const rng_golden *c = NULL;
    int n_cases = (int)(sizeof rng_golden_cases / sizeof rng_golden_cases[0]);
    for (int k = 0; k < n_cases && !c; k++) {
        bool want = rng_golden_cases[k].op == RNG_OP_RANDN && rng_golden_cases[k].n == 1000 &&
                    rng_golden_cases[k].dtype == CT_FLOAT32 && rng_golden_cases[k].seed == 42;
        c = want ? &rng_golden_cases[k] : NULL;
    }
    CHECK(c != NULL);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 42);
    CHECK(ct_generator_initial_seed(g) == 42);
    ct_manual_seed(5);
    int64_t n = 1000;
    RNG_GOLDEN_CHECK(ct_randn(&n, 1, CT_FLOAT32, g), c);
    ct_tensor *a = ct_rand(&n, 1, CT_FLOAT32, NULL);
    ct_manual_seed(5);
    ct_tensor *b = ct_rand(&n, 1, CT_FLOAT32, NULL);
    CHECK(memcmp(ct_data_ptr(a), ct_data_ptr(b), sizeof(float) * 1000) == 0);
    ct_generator_free(g);
    ct_scope_end();
}

static void test_rng_errors(void)
{
    ct_scope_begin();
    int64_t n = 4;
    CHECK(ct_randint(5, 5, &n, 1, CT_INT64, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "random_ expects 'from' to be less than 'to'");
    CHECK(ct_randint(-200, 0, &n, 1, CT_INT8, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "from is out of bounds for signed char");
    CHECK(ct_randint(0, 257, &n, 1, CT_UINT8, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "to - 1 is out of bounds for unsigned char");
    CHECK(ct_randint(0, 256, &n, 1, CT_UINT8, NULL) != NULL);
    CHECK(ct_uniform_(ct_empty(&n, 1, CT_FLOAT32), 1, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "uniform_ expects to return a [from, to) range");
    CHECK(ct_normal_(ct_empty(&n, 1, CT_INT64), 0, 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "not implemented for 'int64'");
    CHECK(ct_random_(NULL, NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_random_");
    CHECK(ct_randperm(-1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "n must be non-negative");
    ct_scope_end();
}

/* The samplers' errors in PyTorch's words, and ct_normal's zero gradient. */
static void test_rng_sampler_errors(void)
{
    ct_scope_begin();
    int64_t n = 4;
    CHECK(ct_exponential_(ct_empty(&n, 1, CT_FLOAT32), 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "exponential_ expects lambda > 0.0, but found lambda=0");
    CHECK(ct_exponential_(ct_empty(&n, 1, CT_INT64), 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Exponential distribution is a continuous probability "
                              "distribution. dtype must be a floating point but you specified "
                              "Long");
    CHECK(ct_cauchy_(ct_empty(&n, 1, CT_FLOAT64), 0, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "cauchy_ expects sigma > 0.0, but found sigma=0");
    CHECK(ct_cauchy_(ct_empty(&n, 1, CT_INT64), 0, 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "but you specified long int");
    CHECK(ct_log_normal_(ct_empty(&n, 1, CT_FLOAT32), 1, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "log_normal_ expects std > 0.0, but found std=0");
    CHECK(ct_log_normal_(ct_empty(&n, 1, CT_INT64), 1, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"log_normal_cpu\" not implemented for 'Long'");
    CHECK(ct_geometric_(ct_empty(&n, 1, CT_FLOAT32), 1, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "geometric_ expects p to be in (0, 1), but got p=1");
    CHECK(ct_geometric_(ct_empty(&n, 1, CT_BOOL), 0.5, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"geometric_cpu\" not implemented for 'Bool'");
    ct_tensor *mean = ct_requires_grad_(ct_zeros(&n, 1, CT_FLOAT64), true);
    ct_tensor *std = ct_requires_grad_(ct_ones(&n, 1, CT_FLOAT64), true);
    CHECK(ct_normal(mean, ct_full(&n, 1, -1, CT_FLOAT64), NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "normal expects all elements of std >= 0.0");
    ct_tensor *r = ct_normal(mean, std, NULL);
    CHECK(r && strcmp(ct_node_name(ct_grad_fn(r)), "NormalBackward3") == 0);
    CHECK(ct_backward(ct_sum(r), NULL, false) == CT_OK);
    double zeros[4] = {0, 0, 0, 0};
    CHECK_TENSOR(ct_grad(mean), zeros, 4, 0, 0);
    CHECK_TENSOR(ct_grad(std), zeros, 4, 0, 0);
    ct_tensor *w = ct_ones(&n, 1, CT_FLOAT32);
    CHECK(ct_multinomial(w, 5, false, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "cannot sample n_sample > prob_dist.size(-1) samples without "
                              "replacement");
    CHECK(ct_multinomial(w, 0, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "cannot sample n_sample <= 0 samples");
    CHECK(ct_multinomial(ct_scalar_tensor(1, CT_FLOAT32), 1, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "prob_dist must be 1 or 2 dim");
    CHECK(ct_multinomial(ct_ones(&n, 1, CT_INT64), 1, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "multinomial only supports floating-point dtypes for input, got: "
                              "Long");
    CHECK(ct_multinomial(ct_full(&n, 1, -1, CT_FLOAT32), 2, false, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "probability tensor contains either `inf`, `nan` or element < 0");
    CHECK(ct_multinomial(ct_zeros(&n, 1, CT_FLOAT32), 2, false, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid multinomial distribution (sum of probabilities <= 0)");
    CHECK(ct_multinomial(ct_full(&n, 1, NAN, CT_FLOAT64), 2, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid multinomial distribution (encountering probability "
                              "entry < 0)");
    int64_t s3[1] = {3};
    CHECK(ct_normal(mean, ct_ones(s3, 1, CT_FLOAT64), NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "broadcast");
    ct_scope_end();
}

/* get/set_rng_state round trips (also PyTorch's 5048-byte legacy state), fork_rng,
   initial_seed and seed. The state bytes match PyTorch's: RNG_OP_STATE cases. */
static void test_rng_state(void)
{
    ct_scope_begin();
    int64_t n = 700, k = 5;
    ct_manual_seed(42);
    ct_randn(&n, 1, CT_FLOAT64, NULL);
    ct_randn(&k, 1, CT_FLOAT64, NULL); /* leaves a cached normal sample */
    ct_tensor *st = ct_get_rng_state();
    CHECK(st && ct_numel(st) == CT_RNG_STATE_SIZE);
    ct_tensor *a = ct_randn(&k, 1, CT_FLOAT64, NULL);
    CHECK(ct_set_rng_state(st) == CT_OK);
    ct_tensor *b = ct_randn(&k, 1, CT_FLOAT64, NULL);
    CHECK(a && b && memcmp(ct_data_ptr(a), ct_data_ptr(b), 5 * sizeof(double)) == 0);
    int64_t legacy = 5048;
    CHECK(ct_set_rng_state(ct_narrow(st, 0, 0, legacy)) == CT_OK);
    ct_tensor *c = ct_randn(&k, 1, CT_FLOAT64, NULL);
    CHECK(c && memcmp(ct_data_ptr(a), ct_data_ptr(c), 5 * sizeof(double)) == 0);
    CHECK(ct_set_rng_state(ct_narrow(st, 0, 0, 7)) != CT_OK);
    CHECK_ERROR(CT_ERR_VALUE, "Expected either a CPUGeneratorImplStateLegacy of size 5048 or a "
                              "CPUGeneratorImplState of size 5056 but found the input RNG state "
                              "size to be 7");
    CHECK(ct_set_rng_state(ct_to_dtype(st, CT_INT32)) != CT_OK);
    CHECK_ERROR(CT_ERR_DTYPE, "ByteTensor");
    ct_manual_seed(7);
    CHECK(ct_initial_seed() == 7);
    CHECK(ct_fork_rng_begin() == CT_OK);
    ct_randn(&n, 1, CT_FLOAT32, NULL);
    CHECK(ct_fork_rng_end() == CT_OK);
    CHECK(ct_initial_seed() == 7);
    ct_tensor *forked = ct_rand(&k, 1, CT_FLOAT64, NULL);
    ct_manual_seed(7);
    ct_tensor *plain = ct_rand(&k, 1, CT_FLOAT64, NULL);
    CHECK(memcmp(ct_data_ptr(forked), ct_data_ptr(plain), 5 * sizeof(double)) == 0);
    CHECK(ct_fork_rng_end() != CT_OK);
    CHECK_ERROR(CT_ERR_STATE, "without ct_fork_rng_begin");
    uint64_t s1 = ct_seed(), s2 = ct_seed();
    CHECK(ct_initial_seed() == s2 && s1 != s2);
    ct_scope_end();
}

/* Deterministic mode fills ct_empty's memory as PyTorch's fill_uninitialized_memory. */
static void test_rng_deterministic_mode(void)
{
    ct_scope_begin();
    CHECK(!ct_are_deterministic_algorithms_enabled());
    ct_use_deterministic_algorithms(true, true);
    CHECK(ct_are_deterministic_algorithms_enabled());
    CHECK(ct_is_deterministic_algorithms_warn_only_enabled());
    int64_t n = 5;
    ct_tensor *f = ct_empty(&n, 1, CT_FLOAT32), *i = ct_empty(&n, 1, CT_INT64);
    ct_tensor *b = ct_empty_like(ct_zeros(&n, 1, CT_BOOL));
    for (int64_t k = 0; k < n; k++) {
        CHECK(isnan(((const float *)ct_data_ptr(f))[k]));
        CHECK(((const int64_t *)ct_data_ptr(i))[k] == INT64_MAX);
        CHECK(((const bool *)ct_data_ptr(b))[k]);
    }
    ct_use_deterministic_algorithms(false, false);
    CHECK(!ct_are_deterministic_algorithms_enabled());
    ct_scope_end();
}

enum { RNG_TASKS = 8, RNG_LAYERS = 20, RNG_IN = 32, RNG_OUT = 16 };

/* Builds Linear layers from the default generator: the draws of modules built in threads. */
static void *rng_build_layers(void *arg)
{
    (void)arg;
    for (int k = 0; k < RNG_LAYERS; k++) {
        ct_module_free(ct_linear_new(RNG_IN, RNG_OUT, true));
    }
    return NULL;
}

/* The default generator is locked during each draw (PyTorch's CPUGeneratorImpl::mutex_):
   layers built concurrently consume exactly their draws, each uniform_ call a consecutive
   block, so the stream continues where a serial build leaves it. Without the lock the
   Mersenne Twister's index and state race (ThreadSanitizer reports it; draws get lost or
   repeated). */
static void test_rng_default_generator_threads(void)
{
    ct_manual_seed(3);
    ct_future *f[RNG_TASKS];
    for (int t = 0; t < RNG_TASKS; t++) {
        f[t] = ct_fork(rng_build_layers, NULL);
    }
    for (int t = 0; t < RNG_TASKS; t++) {
        ct_wait(f[t]);
    }
    ct_scope_begin();
    int64_t n = 8;
    ct_tensor *after = ct_rand(&n, 1, CT_FLOAT32, NULL);
    ct_manual_seed(3);
    for (int t = 0; t < RNG_TASKS; t++) {
        rng_build_layers(NULL);
    }
    ct_tensor *want = ct_rand(&n, 1, CT_FLOAT32, NULL);
    CHECK(after && want && memcmp(ct_data_ptr(after), ct_data_ptr(want), 8 * sizeof(float)) == 0);
    ct_scope_end();
    CHECK(ct_parallel_shutdown() == CT_OK);
}

/* The sampling functions are ops through the one entry, the generator in the call; rand
   and the other factories draw in their own kernel (one op, as PyTorch's profiler shows). */
static void test_rng_ops_dispatch(void)
{
    ct_scope_begin();
    ct_generator *g = ct_generator_new();
    int64_t n = 20;
    ct_tensor *x = ct_empty(&n, 1, CT_FLOAT32);
    ct_test_op_log log;
    ct_test_op_log_begin(&log);
    ct_uniform_(x, -2, 3, g);
    ct_normal_(x, 1, 0.5, NULL);
    ct_bernoulli_(x, 0.25, g);
    ct_random_(x, g);
    ct_tensor *outs[6] = {ct_rand(&n, 1, CT_FLOAT32, g), ct_randn(&n, 1, CT_FLOAT64, g),
                          ct_rand_like(x, g), ct_randn_like(x, g),
                          ct_randint(-3, 9, &n, 1, CT_DTYPE_DEFAULT, g), ct_randperm(n, g)};
    ct_test_op_log_end();
    static const char *names[10] = {"aten::uniform_", "aten::normal_", "aten::bernoulli_",
                                    "aten::random_", "aten::rand", "aten::randn",
                                    "aten::rand_like", "aten::randn_like", "aten::randint",
                                    "aten::randperm"};
    CHECK(log.n == 10);
    for (int k = 0; k < 10 && k < log.n; k++) {
        const ct_op *op = log.call[k].op;
        CHECK_MSG(strcmp(op->name, names[k]) == 0, "op %d is %s, want %s", k, op->name,
                  names[k]);
        CHECK(op->kind == (k < 4 ? CT_OP_INPLACE : CT_OP_RANDOM) && ct_op_find(names[k]) == op);
        CHECK(log.call[k].generator == (k == 1 ? NULL : g));
        CHECK(k < 4 ? log.input0[k] == x : outs[k - 4] != NULL);
    }
    CHECK(log.call[0].n_attrs == 2 && log.call[0].attrs[0].f == -2 &&
          log.call[0].attrs[1].f == 3);
    CHECK(log.call[2].attrs[0].f == 0.25 && log.call[3].n_attrs == 0);
    CHECK(log.call[8].attrs[0].i == -3 && log.call[8].attrs[1].i == 9 &&
          log.call[8].attrs[3].i == CT_INT64 && ct_tensor_dtype(outs[4]) == CT_INT64);
    CHECK(ct_version(x) == 4 && ct_version(outs[0]) == 0); /* torch.rand(3)._version == 0 */
    ct_generator_free(g);
    ct_scope_end();
}

void test_rng(void)
{
    RUN(test_rng_matches_pytorch);
    RUN(test_rng_explicit_generator);
    RUN(test_rng_errors);
    RUN(test_rng_sampler_errors);
    RUN(test_rng_state);
    RUN(test_rng_deterministic_mode);
    RUN(test_rng_ops_dispatch);
    RUN(test_rng_default_generator_threads);
}
