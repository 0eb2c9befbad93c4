/* core/rng.c - mt19937 and PyTorch's CPU sampling algorithms. */
#include "internal.h"
#include "rng.h"

#define CT__MT_N 624
#define CT__MT_M 397

struct ct_generator {
    uint32_t state[CT__MT_N];
    int index;
    uint64_t seed;
    bool has_next_normal; /* cached second Box-Muller sample (double path) */
    double next_normal;
};

static ct_generator ct__default_gen;
static bool ct__default_gen_ready = false;

void ct_generator_manual_seed(ct_generator *g, uint64_t seed)
{
    if (!g) {
        g = ct_default_generator();
    }
    g->seed = seed;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int j = 1; j < CT__MT_N; j++) {
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + (uint32_t)j;
    }
    g->index = CT__MT_N;
    g->has_next_normal = false;
}

ct_generator *ct_generator_new(void)
{
    ct_generator *g = (ct_generator *)ct__calloc(sizeof(ct_generator));
    if (!g) {
        ct__fail(CT_ERR_OOM, "ct_generator_new", "out of memory");
        return NULL;
    }
    ct_generator_manual_seed(g, 67280421310721ull);
    return g;
}

void ct_generator_free(ct_generator *g)
{
    ct__free(g);
}

ct_generator *ct_default_generator(void)
{
    if (!ct__default_gen_ready) {
        ct__default_gen_ready = true;
        ct_generator_manual_seed(&ct__default_gen, 67280421310721ull);
    }
    return &ct__default_gen;
}

void ct_manual_seed(uint64_t seed)
{
    ct_generator_manual_seed(ct_default_generator(), seed);
}

uint64_t ct_generator_initial_seed(const ct_generator *g)
{
    return g ? g->seed : ct_default_generator()->seed;
}

static uint32_t ct__mt_next(ct_generator *g)
{
    if (g->index >= CT__MT_N) {
        for (int k = 0; k < CT__MT_N; k++) {
            uint32_t y = (g->state[k] & 0x80000000u) | (g->state[(k + 1) % CT__MT_N] & 0x7fffffffu);
            g->state[k] =
                g->state[(k + CT__MT_M) % CT__MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->index = 0;
    }
    uint32_t y = g->state[g->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static uint64_t ct__mt_next64(ct_generator *g)
{
    uint64_t hi = ct__mt_next(g), lo = ct__mt_next(g);
    return (hi << 32) | lo;
}

/* PyTorch's uniform_real_distribution: 24 random bits for float, 53 for double. */
static double ct__uniform(ct_generator *g, ct_dtype dt, double from, double to)
{
    if (dt == CT_FLOAT64) {
        double x = (double)(ct__mt_next64(g) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
        return x * (to - from) + from;
    }
    float x = (float)(ct__mt_next(g) & ((1u << 24) - 1)) * (1.0f / 16777216.0f);
    return (double)(x * ((float)to - (float)from) + (float)from);
}

/* PyTorch's normal_distribution<double> (Box-Muller with a cached second sample). */
static double ct__normal_scalar(ct_generator *g, double mean, double std)
{
    if (g->has_next_normal) {
        g->has_next_normal = false;
        return g->next_normal * std + mean;
    }
    double u1 = ct__uniform(g, CT_FLOAT64, 0, 1), u2 = ct__uniform(g, CT_FLOAT64, 0, 1);
    double r = sqrt(-2.0 * log1p(-u2)), theta = 2.0 * 3.14159265358979323846 * u1;
    g->has_next_normal = true;
    g->next_normal = r * sin(theta);
    return r * cos(theta) * std + mean;
}

/* PyTorch's normal_fill_16: Box-Muller over 8 pairs (data[j], data[j + 8]) of uniforms. */
static void ct__normal_fill16(double *d, double mean, double std)
{
    for (int j = 0; j < 8; j++) {
        double u1 = 1 - d[j], u2 = d[j + 8];
        double radius = sqrt(-2 * log(u1)), theta = 2.0 * 3.14159265358979323846 * u2;
        d[j] = radius * cos(theta) * std + mean;
        d[j + 8] = radius * sin(theta) * std + mean;
    }
}

static bool ct__check_float_fill(const char *op, const ct_tensor *t)
{
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return false;
    }
    if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for '%s'", op, ct_dtype_name(t->dtype));
        return false;
    }
    return true;
}

/* Writes the i-th element (row-major order) of t. */
static void ct__store_nth(ct_tensor *t, int64_t i, double v)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->sizes[d]) * t->strides[d];
        i /= t->sizes[d];
    }
    ct__store_f64(ct__data(t) + (size_t)off * ct_dtype_size(t->dtype), t->dtype, v);
}

ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g)
{
    if (!ct__check_float_fill("ct_uniform_", self) || !ct__check_inplace("ct_uniform_", self)) {
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t n = ct_numel(self);
    for (int64_t i = 0; i < n; i++) {
        ct__store_nth(self, i, ct__uniform(g, self->dtype, from, to));
    }
    ct__bump_version(self);
    return self;
}

ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g)
{
    const char *op = "ct_normal_";
    if (!ct__check_float_fill(op, self) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    if (std < 0) {
        ct__fail(CT_ERR_VALUE, op, "normal expects std >= 0.0, but found std %g", std);
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t n = ct_numel(self);
    if (n >= 16 && ct_is_contiguous(self)) {
        double *d = (double *)ct__malloc(sizeof(double) * (size_t)n);
        if (!d) {
            ct__fail(CT_ERR_OOM, op, "out of memory");
            return NULL;
        }
        for (int64_t i = 0; i < n; i++) {
            d[i] = ct__uniform(g, self->dtype, 0, 1);
        }
        for (int64_t i = 0; i + 16 <= n; i += 16) {
            ct__normal_fill16(d + i, mean, std);
        }
        if (n % 16 != 0) { /* recompute the last 16 from fresh uniforms */
            for (int64_t i = n - 16; i < n; i++) {
                d[i] = ct__uniform(g, self->dtype, 0, 1);
            }
            ct__normal_fill16(d + n - 16, mean, std);
        }
        for (int64_t i = 0; i < n; i++) {
            ct__store_nth(self, i, d[i]);
        }
        ct__free(d);
    } else {
        for (int64_t i = 0; i < n; i++) {
            ct__store_nth(self, i, ct__normal_scalar(g, mean, std));
        }
    }
    ct__bump_version(self);
    return self;
}

ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g)
{
    const char *op = "ct_bernoulli_";
    if (ct__null(op, self) || !ct__check_cpu(op, self) || !ct__check_inplace(op, self)) {
        return NULL;
    }
    if (!(p >= 0 && p <= 1)) {
        ct__fail(CT_ERR_VALUE, op, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t n = ct_numel(self);
    for (int64_t i = 0; i < n; i++) {
        ct__store_nth(self, i, ct__uniform(g, CT_FLOAT64, 0, 1) < p ? 1.0 : 0.0);
    }
    ct__bump_version(self);
    return self;
}

static ct_tensor *ct__random_new(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    ct_tensor *t = ct__tensor_new(op, sizes, ndim, dtype);
    if (t && !ct_dtype_is_floating_point(t->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for '%s'", op, ct_dtype_name(t->dtype));
        ct__release(t);
        return NULL;
    }
    return t;
}

ct_tensor *ct_rand(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    ct_tensor *t = ct__random_new("ct_rand", sizes, ndim, dtype);
    return t ? ct__scoped(ct_uniform_(t, 0, 1, g)) : NULL;
}

ct_tensor *ct_randn(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    ct_tensor *t = ct__random_new("ct_randn", sizes, ndim, dtype);
    return t ? ct__scoped(ct_normal_(t, 0, 1, g)) : NULL;
}

ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g)
{
    return ct__null_tensor("ct_rand_like", t) ? NULL : ct_rand(t->sizes, t->ndim, t->dtype, g);
}

ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g)
{
    return ct__null_tensor("ct_randn_like", t) ? NULL : ct_randn(t->sizes, t->ndim, t->dtype, g);
}

ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim, ct_dtype dtype,
                      ct_generator *g)
{
    const char *op = "ct_randint";
    if (low >= high) {
        ct__fail(CT_ERR_VALUE, op,
                 "random_ expects 'from' to be less than 'to', but got "
                 "from=%lld >= to=%lld",
                 (long long)low, (long long)high);
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(op, sizes, ndim, dtype == CT_DTYPE_DEFAULT ? CT_INT64 : dtype);
    if (!t) {
        return NULL;
    }
    g = g ? g : ct_default_generator();
    uint64_t range = (uint64_t)high - (uint64_t)low;
    int64_t n = ct_numel(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = range >= (1ull << 32) ? ct__mt_next64(g) : ct__mt_next(g);
        ct__store_f64(ct__data(t) + (size_t)i * ct_dtype_size(t->dtype), t->dtype,
                      (double)(int64_t)(r % range + (uint64_t)low));
    }
    return ct__scoped(t);
}

ct_tensor *ct_randperm(int64_t n, ct_generator *g)
{
    const char *op = "ct_randperm";
    if (n < 0) {
        ct__fail(CT_ERR_VALUE, op, "n must be non-negative, got%lld", (long long)n);
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(op, &n, 1, CT_INT64);
    if (!t) {
        return NULL;
    }
    g = g ? g : ct_default_generator();
    int64_t *r = (int64_t *)ct__data(t);
    for (int64_t i = 0; i < n; i++) {
        r[i] = i;
    }
    for (int64_t i = 0; i < n - 1; i++) { /* PyTorch's CPU Fisher-Yates */
        uint64_t bits = n < (1 << 24) ? ct__mt_next(g) : ct__mt_next64(g);
        int64_t z = (int64_t)(bits % (uint64_t)(n - i));
        int64_t tmp = r[i];
        r[i] = r[z + i];
        r[z + i] = tmp;
    }
    return ct__scoped(t);
}

#undef CT__MT_N
#undef CT__MT_M
