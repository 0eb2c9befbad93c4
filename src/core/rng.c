/* core/rng.c - mt19937 and PyTorch's CPU sampling kernels, draw for draw and bit for bit.
 *
 * The sampling functions are ops (uniform_, normal_, bernoulli_, random_ in place; rand, randn,
 * randint, randperm and the _like forms as random factories) through the one entry, the
 * generator in call.generator. Every kernel resolves the generator (NULL: the default one) and
 * holds its lock for the whole call, as PyTorch's kernels hold CPUGeneratorImpl::mutex_, so
 * one call's draws are consecutive in the stream. Elements are visited in the order of
 * PyTorch's TensorIterator for a nullary op: linearly when contiguous, else the smallest
 * stride innermost.
 * float16 and bfloat16 have kernels of their own (not the dispatcher's float32 fallback):
 * PyTorch draws them in float (uniform_, normal_'s blocks of 16) or double (the samplers)
 * and casts each value to c10::Half / c10::BFloat16, which convert from float only.
 * Floating point: each multiply-add that PyTorch's compiled kernels fuse is an explicit
 * fma/fmaf, and no other product feeds an addition, so no compiler flag (-ffp-contract,
 * -std=c11 or gnu11, -O level) changes a bit.
 */
#include "internal.h"
#include "rng.h"

#include <float.h>

#if defined(CT__HAS_AVX2)
#include <immintrin.h>
#endif

#define CT__MT_N 624
#define CT__MT_M 397
#define CT__DEFAULT_SEED 67280421310721ull

struct ct_generator {
    ct__mutex lock; /* held during every draw (PyTorch's CPUGeneratorImpl::mutex_) */
    uint32_t state[CT__MT_N];
    int index;     /* the next word of state; CT__MT_N: twist first */
    bool twisted;  /* state has been twisted since the seed (mt19937's next_ is then index) */
    uint64_t seed;
    bool has_next_normal; /* cached second Box-Muller sample of normal_distribution<double> */
    double next_normal;
};

static ct_generator ct__default_gen; /* its lock also guards ct__default_gen_ready */
static bool ct__default_gen_ready = false;
/* A DataLoader worker thread's own default generator (PyTorch's worker process has its own). */
static CT__THREAD_LOCAL ct_generator *ct__thread_default_gen = NULL;

/* ---- the engine (the caller holds g->lock) ------------------------------------------- */

static void ct__rng_seed(ct_generator *g, uint64_t seed)
{
    g->seed = seed;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int j = 1; j < CT__MT_N; j++) {
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + (uint32_t)j;
    }
    g->index = CT__MT_N;
    g->twisted = false;
    g->has_next_normal = false;
}

/* state[k] from its successor and the word M ahead (mt19937's twist). */
static uint32_t ct__rng_twist(uint32_t cur, uint32_t next, uint32_t ahead)
{
    uint32_t y = (cur & 0x80000000u) | (next & 0x7fffffffu);
    return ahead ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
}

/* CPUGeneratorImpl::random(). */
static uint32_t ct__rng_u32(ct_generator *g)
{
    if (g->index >= CT__MT_N) { /* the next 624 words, in three runs without wrap-around */
        uint32_t *s = g->state;
        int k = 0;
        for (; k < CT__MT_N - CT__MT_M; k++) {
            s[k] = ct__rng_twist(s[k], s[k + 1], s[k + CT__MT_M]);
        }
        for (; k < CT__MT_N - 1; k++) {
            s[k] = ct__rng_twist(s[k], s[k + 1], s[k + CT__MT_M - CT__MT_N]);
        }
        s[k] = ct__rng_twist(s[k], s[0], s[CT__MT_M - 1]);
        g->index = 0;
        g->twisted = true;
    }
    uint32_t y = g->state[g->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* CPUGeneratorImpl::random64(): the first draw is the high half. */
static uint64_t ct__rng_u64(ct_generator *g)
{
    uint64_t hi = ct__rng_u32(g), lo = ct__rng_u32(g);
    return (hi << 32) | lo;
}

/* uniform_real_distribution<float>(from, to): 24 random bits, fused x * (to - from) + from. */
static float ct__rng_uniform_f32(ct_generator *g, float from, float to)
{
    float x = (float)(ct__rng_u32(g) & 0xffffffu) * (1.0f / 16777216.0f);
    return fmaf(x, to - from, from);
}

/* uniform_real_distribution<double>(from, to): 53 random bits of random64(). */
static double ct__rng_uniform_f64(ct_generator *g, double from, double to)
{
    double x = (double)(ct__rng_u64(g) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
    return fma(x, to - from, from);
}

/* normal_distribution<double>: Box-Muller on two uniforms, the sine half cached. */
static double ct__rng_normal_f64(ct_generator *g, double mean, double std)
{
    if (g->has_next_normal) {
        g->has_next_normal = false;
        return fma(g->next_normal, std, mean);
    }
    double u1 = ct__rng_uniform_f64(g, 0, 1), u2 = ct__rng_uniform_f64(g, 0, 1);
    double r = sqrt(-2.0 * log1p(-u2)), theta = 2.0 * 3.14159265358979323846 * u1;
    g->has_next_normal = true;
    g->next_normal = r * sin(theta);
    return fma(r * cos(theta), std, mean);
}

CT__GLUE_BEGIN
/* Resolves g and takes its lock; every public entry pairs it with ct__rng_unlock. */
static ct_generator *ct__rng_lock(ct_generator *g)
{
    g = g ? g : ct_default_generator();
    ct__mutex_lock(&g->lock);
    return g;
}

static void ct__rng_unlock(ct_generator *g)
{
    ct__mutex_unlock(&g->lock);
}

/* ---- generators ---------------------------------------------------------------------- */

void ct_generator_manual_seed(ct_generator *g, uint64_t seed)
{
    g = ct__rng_lock(g);
    ct__rng_seed(g, seed);
    ct__rng_unlock(g);
}

ct_generator *ct_generator_new(void)
{
    ct_generator *g = (ct_generator *)ct__calloc(sizeof(ct_generator));
    if (!g) {
        ct__fail(CT_ERR_OOM, "ct_generator_new", "out of memory");
        return NULL;
    }
    ct__rng_seed(g, CT__DEFAULT_SEED);
    return g;
}

void ct_generator_free(ct_generator *g)
{
    ct__free(g);
}

void ct__rng_set_thread_default(ct_generator *g)
{
    ct__thread_default_gen = g;
}

ct_generator *ct_default_generator(void)
{
    if (ct__thread_default_gen) {
        return ct__thread_default_gen;
    }
    ct__mutex_lock(&ct__default_gen.lock);
    if (!ct__default_gen_ready) {
        ct__default_gen_ready = true;
        ct__rng_seed(&ct__default_gen, CT__DEFAULT_SEED);
    }
    ct__mutex_unlock(&ct__default_gen.lock);
    return &ct__default_gen;
}

void ct_manual_seed(uint64_t seed)
{
    ct_generator_manual_seed(NULL, seed);
}

uint64_t ct_generator_initial_seed(const ct_generator *g)
{
    ct_generator *locked = ct__rng_lock((ct_generator *)g); /* the lock is mutable state */
    uint64_t seed = locked->seed;
    ct__rng_unlock(locked);
    return seed;
}

uint64_t ct_initial_seed(void)
{
    return ct_generator_initial_seed(NULL);
}

/* 64 bits from the operating system's entropy (/dev/urandom), else from the clock and an
   address (PyTorch's getNonDeterministicRandom). */
static uint64_t ct__rng_entropy(void)
{
    uint64_t v = (uint64_t)(uintptr_t)&v;
#if !defined(CTORCH_NO_STDIO)
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        size_t got = fread(&v, sizeof v, 1, f);
        fclose(f);
        if (got == 1) {
            return v;
        }
    }
    v ^= ((uint64_t)time(NULL) << 20) ^ (uint64_t)clock();
#endif
    return v * 0x9e3779b97f4a7c15ull;
}

uint64_t ct_seed(void)
{
    uint64_t seed = ct__rng_entropy();
    ct_manual_seed(seed);
    return seed;
}

/* PyTorch's CPUGeneratorImplState, the bytes of torch.get_rng_state() (native byte order, the
   layout of a 64-bit machine): the legacy THGeneratorState - initial seed (offset 0),
   mt19937's left (8), seeded (12) and next (16), the 624 state words widened to 64 bits (24),
   normal_x/normal_y/normal_rho (5016, the cached normal sample in normal_y) and
   normal_is_valid (5040), 5048 bytes - then the cached float normal sample (5048) and its flag
   (5052). */
#define CT__RNG_LEGACY_SIZE 5048
enum { CT__RS_LEFT = 8, CT__RS_SEEDED = 12, CT__RS_NEXT = 16, CT__RS_STATE = 24,
       CT__RS_NORMAL_Y = 5024, CT__RS_NORMAL_VALID = 5040 };

ct_tensor *ct_get_rng_state(void)
{
    int64_t n = CT_RNG_STATE_SIZE;
    ct_tensor *t = ct_zeros(&n, 1, CT_UINT8);
    if (!t) {
        return NULL;
    }
    unsigned char *b = (unsigned char *)ct__data(t);
    ct_generator *g = ct__rng_lock(NULL);
    int32_t left = CT__MT_N + 1 - g->index, seeded = 1, valid = g->has_next_normal;
    uint64_t next = g->twisted ? (uint64_t)g->index : 0;
    double normal = g->has_next_normal ? g->next_normal : 0.0;
    memcpy(b, &g->seed, 8);
    memcpy(b + CT__RS_LEFT, &left, 4);
    memcpy(b + CT__RS_SEEDED, &seeded, 4);
    memcpy(b + CT__RS_NEXT, &next, 8);
    for (int k = 0; k < CT__MT_N; k++) {
        uint64_t w = g->state[k];
        memcpy(b + CT__RS_STATE + 8 * k, &w, 8);
    }
    memcpy(b + CT__RS_NORMAL_Y, &normal, 8);
    memcpy(b + CT__RS_NORMAL_VALID, &valid, 4);
    ct__rng_unlock(g);
    return t;
}

ct_status ct_set_rng_state(const ct_tensor *state)
{
    const char *op = "ct_set_rng_state";
    if (ct__null(op, state) || !ct__check_cpu(op, state)) {
        return ct_error_code();
    }
    int64_t n = ct_numel(state);
    if (state->dtype != CT_UINT8 || !ct_is_contiguous(state)) {
        return ct__fail(CT_ERR_DTYPE, op, "expected a contiguous torch.ByteTensor, but got %s",
                        ct_dtype_name(state->dtype));
    }
    if (n != CT__RNG_LEGACY_SIZE && n != CT_RNG_STATE_SIZE) {
        return ct__fail(CT_ERR_VALUE, op, "Expected either a CPUGeneratorImplStateLegacy of size "
                        "%d or a CPUGeneratorImplState of size %d but found the input RNG state "
                        "size to be %lld", CT__RNG_LEGACY_SIZE, CT_RNG_STATE_SIZE, (long long)n);
    }
    const unsigned char *b = (const unsigned char *)ct__data(state);
    int32_t left, valid;
    uint64_t next;
    memcpy(&left, b + CT__RS_LEFT, 4);
    memcpy(&next, b + CT__RS_NEXT, 8);
    memcpy(&valid, b + CT__RS_NORMAL_VALID, 4);
    if (left < 1 || left > CT__MT_N + 1 || next > CT__MT_N) {
        return ct__fail(CT_ERR_VALUE, op, "corrupted RNG state: left %d, next %llu", left,
                        (unsigned long long)next);
    }
    ct_generator *g = ct__rng_lock(NULL);
    memcpy(&g->seed, b, 8);
    for (int k = 0; k < CT__MT_N; k++) {
        uint64_t w;
        memcpy(&w, b + CT__RS_STATE + 8 * k, 8);
        g->state[k] = (uint32_t)w;
    }
    g->index = CT__MT_N + 1 - left;
    g->twisted = next != 0 || left != 1;
    g->has_next_normal = valid != 0;
    memcpy(&g->next_normal, b + CT__RS_NORMAL_Y, 8);
    ct__rng_unlock(g);
    return CT_OK;
}

/* fork_rng: the default generator's streams saved by ct_fork_rng_begin, innermost last. */
#define CT__FORK_DEPTH 16
static ct_generator ct__fork_saved[CT__FORK_DEPTH];
static int ct__fork_depth = 0;

/* Copies the stream (state, position, seed, cached normal sample) of src into dst, not the
   lock. */
static void ct__rng_copy_stream(ct_generator *dst, const ct_generator *src)
{
    memcpy(dst->state, src->state, sizeof dst->state);
    dst->index = src->index;
    dst->twisted = src->twisted;
    dst->seed = src->seed;
    dst->has_next_normal = src->has_next_normal;
    dst->next_normal = src->next_normal;
}

ct_status ct_fork_rng_begin(void)
{
    ct_generator *g = ct__rng_lock(NULL);
    ct_status st = CT_OK;
    if (ct__fork_depth == CT__FORK_DEPTH) {
        st = ct__fail(CT_ERR_STATE, "ct_fork_rng_begin", "fork_rng nests at most %d deep",
                      CT__FORK_DEPTH);
    } else {
        ct__rng_copy_stream(&ct__fork_saved[ct__fork_depth++], g);
    }
    ct__rng_unlock(g);
    return st;
}

ct_status ct_fork_rng_end(void)
{
    ct_generator *g = ct__rng_lock(NULL);
    ct_status st = CT_OK;
    if (ct__fork_depth == 0) {
        st = ct__fail(CT_ERR_STATE, "ct_fork_rng_end", "ct_fork_rng_end without "
                      "ct_fork_rng_begin");
    } else {
        ct__rng_copy_stream(g, &ct__fork_saved[--ct__fork_depth]);
    }
    ct__rng_unlock(g);
    return st;
}

/* ---- reproducibility --------------------------------------------------------------------- */
static bool ct__deterministic = false, ct__deterministic_warn_only = false;

void ct_use_deterministic_algorithms(bool mode, bool warn_only)
{
    ct__deterministic = mode;
    ct__deterministic_warn_only = mode && warn_only;
}

bool ct_are_deterministic_algorithms_enabled(void)
{
    return ct__deterministic;
}

bool ct_is_deterministic_algorithms_warn_only_enabled(void)
{
    return ct__deterministic_warn_only;
}
CT__GLUE_END

/* ---- element order and stores -------------------------------------------------------- */

/* A draw into one element of dtype dt; params is the sampler's own. */
typedef void (*ct__rng_draw_fn)(ct_generator *g, char *dst, ct_dtype dt, const void *params);

/* Dims of t innermost first, as TensorIterator::reorder_dimensions sorts one output: by
   stride, the smaller inner; on equal strides the smaller size inner. */
static void ct__rng_dim_order(const ct_tensor *t, int *perm)
{
    for (int k = 0; k < t->ndim; k++) {
        perm[k] = t->ndim - 1 - k;
    }
    for (int i = 1; i < t->ndim; i++) {
        for (int d1 = i, d0 = i - 1; d0 >= 0; d0--) {
            int64_t s0 = t->strides[perm[d0]], s1 = t->strides[perm[d1]];
            bool swap = s0 != 0 && s1 != 0 &&
                        (s0 > s1 || (s0 == s1 && t->sizes[perm[d0]] > t->sizes[perm[d1]]));
            if (swap) {
                int tmp = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = tmp;
                d1 = d0;
            } else if (s0 != 0 && s1 != 0 && s0 < s1) {
                break;
            }
        }
    }
}

/* Calls draw for each element of t in PyTorch's order. */
static void ct__rng_fill(ct_tensor *t, ct_generator *g, ct__rng_draw_fn draw, const void *params)
{
    size_t es = ct_dtype_size(t->dtype);
    char *base = ct__data(t);
    int64_t n = ct_numel(t);
    if (ct_is_contiguous(t)) {
        for (int64_t i = 0; i < n; i++) {
            draw(g, base + (size_t)i * es, t->dtype, params);
        }
        return;
    }
    int perm[CT_MAX_DIMS];
    int64_t idx[CT_MAX_DIMS] = {0};
    ct__rng_dim_order(t, perm);
    int64_t off = 0; /* elements */
    for (int64_t i = 0; i < n; i++) {
        draw(g, base + off * (int64_t)es, t->dtype, params);
        for (int k = 0; k < t->ndim; k++) { /* odometer, innermost dim first */
            int d = perm[k];
            off += t->strides[d];
            if (++idx[d] < t->sizes[d]) {
                break;
            }
            off -= t->strides[d] * t->sizes[d];
            idx[d] = 0;
        }
    }
}

/* The bits of c10::Half(v) / c10::BFloat16(v) for dt float16 / bfloat16. */
static uint16_t ct__rng_half_bits(ct_dtype dt, float v)
{
    return dt == CT_FLOAT16 ? ct_float_to_half(v) : ct_float_to_bfloat16(v);
}

/* static_cast<c10::Half>(v) / static_cast<c10::BFloat16>(v) of a float. */
static void ct__rng_store_half(char *p, ct_dtype dt, float v)
{
    uint16_t bits = ct__rng_half_bits(dt, v);
    memcpy(p, &bits, sizeof bits);
}

/* v rounded to float16 or bfloat16, as a float. */
static float ct__rng_round_half(ct_dtype dt, float v)
{
    return dt == CT_FLOAT16 ? ct_half_to_float(ct_float_to_half(v))
                            : ct_bfloat16_to_float(ct_float_to_bfloat16(v));
}

/* static_cast<scalar_t>(v) of an int64 into any dtype (int64 -> float rounds once; c10::Half
   and c10::BFloat16 convert through float, rounding twice). */
static void ct__rng_store_i64(char *p, ct_dtype dt, int64_t v)
{
    switch (dt) {
    case CT_BOOL: *(bool *)p = v != 0; break;
    case CT_UINT8: *(uint8_t *)p = (uint8_t)(uint64_t)v; break;
    case CT_INT8: *(int8_t *)p = (int8_t)v; break;
    case CT_INT16: *(int16_t *)p = (int16_t)v; break;
    case CT_INT32: *(int32_t *)p = (int32_t)v; break;
    case CT_INT64: *(int64_t *)p = v; break;
    case CT_FLOAT32: *(float *)p = (float)v; break;
    case CT_FLOAT64: *(double *)p = (double)v; break;
    case CT_FLOAT16:
    case CT_BFLOAT16: ct__rng_store_half(p, dt, (float)v); break;
    default: break;
    }
}

/* static_cast<scalar_t>(v) of a double into a float dtype (through float for the half types,
   as c10::Half and c10::BFloat16 construct only from float). */
static void ct__rng_store_f64(char *p, ct_dtype dt, double v)
{
    if (dt == CT_FLOAT64) {
        *(double *)p = v;
    } else if (dt == CT_FLOAT32) {
        *(float *)p = (float)v;
    } else {
        ct__rng_store_half(p, dt, (float)v);
    }
}

CT__GLUE_BEGIN
/* The in-place random ops' meta: self is the output and gives the kernel's dtype. */
static bool ct__rng_self_meta(ct_op_call *c)
{
    ct_tensor *self = (ct_tensor *)(uintptr_t)c->inputs[0];
    c->dtype = self->dtype;
    c->outputs[c->n_outputs++] = self;
    return true;
}

/* uniform_ and normal_ (and the factories over them) draw floating point values only. */
static bool ct__rng_check_float(const ct_op_call *c, ct_dtype dtype)
{
    if (!ct_dtype_is_floating_point(dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"%s\" not implemented for '%s'", c->fn,
                 ct_dtype_name(dtype));
        return false;
    }
    return true;
}
CT__GLUE_END

/* ---- uniform_ and bernoulli_ --------------------------------------------------------- */

typedef struct ct__rng_range {
    double from, to;
    uint16_t from_bits, to_bits; /* from and to in a float16/bfloat16 output's dtype */
} ct__rng_range;

/* uniform_kernel: a draw of uniform_real_distribution<opmath_t> (float for float32, float16
   and bfloat16) cast to the dtype; a value equal to `to` cast to the dtype becomes `from` cast
   to the dtype. */
static void ct__rng_draw_uniform(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    const ct__rng_range *r = (const ct__rng_range *)params;
    if (dt == CT_FLOAT64) {
        double v = ct__rng_uniform_f64(g, r->from, r->to);
        *(double *)dst = v == r->to ? r->from : v;
    } else if (dt == CT_FLOAT32) {
        float v = ct__rng_uniform_f32(g, (float)r->from, (float)r->to);
        *(float *)dst = v == (float)r->to ? (float)r->from : v;
    } else { /* (ct__rng_uniform_half for contiguous outputs) */
        uint16_t b = ct__rng_half_bits(dt, ct__rng_uniform_f32(g, (float)r->from, (float)r->to));
        bool at_to = b == r->to_bits || ((b | r->to_bits) & 0x7fffu) == 0; /* -0 == +0 */
        b = at_to ? r->from_bits : b;
        memcpy(dst, &b, sizeof b);
    }
}

/* ct__rng_draw_uniform over n contiguous float16/bfloat16 values at d, a block of float draws
   at a time converted in bulk (the same bits as one at a time). */
static void ct__rng_uniform_half(ct_generator *g, uint16_t *d, ct_dtype dt, int64_t n,
                                 const ct__rng_range *r)
{
    float buf[CT__HALF_BLOCK];
    for (int64_t i = 0; i < n; i += CT__HALF_BLOCK) {
        int64_t m = n - i < CT__HALF_BLOCK ? n - i : CT__HALF_BLOCK;
        for (int64_t j = 0; j < m; j++) {
            buf[j] = ct__rng_uniform_f32(g, (float)r->from, (float)r->to);
        }
        ct__float_to_half_n(dt, buf, (char *)(d + i), 2, m);
        for (int64_t j = i; j < i + m; j++) {
            bool at_to = d[j] == r->to_bits || ((d[j] | r->to_bits) & 0x7fffu) == 0;
            d[j] = at_to ? r->from_bits : d[j];
        }
    }
}

/* Fills t with U(from, to) from g (NULL: the default generator). */
static void ct__rng_uniform(ct_tensor *t, ct_generator *g, double from, double to)
{
    ct_dtype half = ct__is_half(t->dtype) ? t->dtype : CT_FLOAT16;
    ct__rng_range r = {from, to, ct__rng_half_bits(half, (float)from),
                       ct__rng_half_bits(half, (float)to)};
    g = ct__rng_lock(g);
    if (ct__is_half(t->dtype) && ct_is_contiguous(t)) {
        ct__rng_uniform_half(g, (uint16_t *)ct__data(t), t->dtype, ct_numel(t), &r);
    } else {
        ct__rng_fill(t, g, ct__rng_draw_uniform, &r);
    }
    ct__rng_unlock(g);
}

CT__GLUE_BEGIN
/* uniform_: (self, float from, float to); the bounds within the dtype's range
   (uniform_impl_'s checks). */
static bool ct__uniform_meta(ct_op_call *c)
{
    double from = c->attrs[0].f, to = c->attrs[1].f;
    ct_dtype dt = c->inputs[0]->dtype;
    if (!ct__rng_check_float(c, dt)) {
        return false;
    }
    double max = dt == CT_FLOAT64 ? DBL_MAX
                 : dt == CT_FLOAT32 ? FLT_MAX
                 : dt == CT_FLOAT16 ? 65504.0
                                    : (double)ct_bfloat16_to_float(0x7f7f);
    const char *type = dt == CT_FLOAT64 ? "double"
                       : dt == CT_FLOAT32 ? "float"
                       : dt == CT_FLOAT16 ? "c10::Half"
                                          : "c10::BFloat16";
    const char *bad = !(from >= -max && from <= max) ? "from" : !(to >= -max && to <= max) ? "to"
                                                                                         : NULL;
    if (bad) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s is out of bounds for %s", bad, type);
        return false;
    }
    if (from <= to && !(to - from <= max)) {
        ct__fail(CT_ERR_VALUE, c->fn, "uniform_ expects to-from <= std::numeric_limits<%s>::max(), "
                 "but found to=%g and from=%g which result in to-from to exceed the limit",
                 ct__dtype_title(dt), to, from);
        return false;
    }
    if (!(from <= to)) {
        ct__fail(CT_ERR_VALUE, c->fn, "uniform_ expects to return a [from, to) range, but found "
                 "from=%g > to=%g", from, to);
        return false;
    }
    return ct__rng_self_meta(c);
}
CT__GLUE_END

static ct_status ct__uniform_kernel(ct_op_call *c)
{
    ct__rng_uniform(c->outputs[0], c->generator, c->attrs[0].f, c->attrs[1].f);
    return CT_OK;
}

/* bernoulli_distribution<double>: uniform_real_distribution<double>(0, 1) < p. */
static void ct__rng_draw_bernoulli(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    double p = *(const double *)params;
    ct__rng_store_i64(dst, dt, ct__rng_uniform_f64(g, 0, 1) < p);
}

CT__GLUE_BEGIN
/* bernoulli_: (self, float p). */
static bool ct__bernoulli_meta(ct_op_call *c)
{
    double p = c->attrs[0].f;
    if (!(p >= 0 && p <= 1)) {
        ct__fail(CT_ERR_VALUE, c->fn, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
        return false;
    }
    return ct__rng_self_meta(c);
}
CT__GLUE_END

static ct_status ct__bernoulli_kernel(ct_op_call *c)
{
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_fill(c->outputs[0], g, ct__rng_draw_bernoulli, &c->attrs[0].f);
    ct__rng_unlock(g);
    return CT_OK;
}

/* ---- normal_ ------------------------------------------------------------------------- */

/* The float32 Box-Muller block: the instructions of PyTorch's AVX2 kernel under CT__HAS_AVX2,
   else the same operations one lane at a time (the reference; both give the same bits). */
#if defined(CT__HAS_AVX2)
#define CT__RNG_SPLAT(v) _mm256_set1_ps(v)
/* Natural log of x in (0, 1] per lane as avx_mathfun.h's log256_ps (cephes logf), with the
   fusions gcc makes of it in PyTorch's AVX2 kernel. */
static __m256 ct__rng_logf8(__m256 x)
{
    const __m256 one = CT__RNG_SPLAT(1.0f);
    __m256i bits = _mm256_castps_si256(x);
    __m256i expo = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0x7f));
    __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(expo), one);
    bits = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(~0x7f800000)),
                           _mm256_set1_epi32(0x3f000000));
    x = _mm256_castsi256_ps(bits);
    __m256 small = _mm256_cmp_ps(x, CT__RNG_SPLAT(0.707106781186547524f), _CMP_LT_OS);
    __m256 tmp = _mm256_and_ps(x, small);
    x = _mm256_sub_ps(x, one);
    e = _mm256_sub_ps(e, _mm256_and_ps(one, small));
    x = _mm256_add_ps(x, tmp);
    __m256 z = _mm256_mul_ps(x, x);
    static const float p[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                               -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                               2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
    __m256 y = CT__RNG_SPLAT(p[0]);
    for (int k = 1; k < 9; k++) {
        y = _mm256_fmadd_ps(y, x, CT__RNG_SPLAT(p[k]));
    }
    y = _mm256_mul_ps(y, x);
    y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, CT__RNG_SPLAT(-2.12194440e-4f)));
    y = _mm256_fnmadd_ps(z, CT__RNG_SPLAT(0.5f), y);
    x = _mm256_add_ps(x, y);
    return _mm256_fmadd_ps(e, CT__RNG_SPLAT(0.693359375f), x);
}

/* Sine and cosine of x >= 0 per lane as avx_mathfun.h's sincos256_ps (cephes sinf/cosf over
   octants), with gcc's fusions in PyTorch's AVX2 kernel. */
static void ct__rng_sincosf8(__m256 x, __m256 *s, __m256 *c)
{
    __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, CT__RNG_SPLAT(1.27323954473516f)));
    j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
    __m256 y = _mm256_cvtepi32_ps(j);
    __m256i four = _mm256_set1_epi32(4);
    __m256 sign_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, four), 29));
    __m256i j2 = _mm256_sub_epi32(j, _mm256_set1_epi32(2));
    __m256 sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_andnot_si256(j2, four), 29));
    __m256i two = _mm256_set1_epi32(2);
    __m256 sin_poly = _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_and_si256(j, two), _mm256_setzero_si256()));
    x = _mm256_fmadd_ps(y, CT__RNG_SPLAT(-0.78515625f), x);
    x = _mm256_fmadd_ps(y, CT__RNG_SPLAT(-2.4187564849853515625e-4f), x);
    x = _mm256_fmadd_ps(y, CT__RNG_SPLAT(-3.77489497744594108e-8f), x);
    __m256 z = _mm256_mul_ps(x, x);
    __m256 yc = _mm256_fmadd_ps(CT__RNG_SPLAT(2.443315711809948E-005f), z,
                                CT__RNG_SPLAT(-1.388731625493765E-003f));
    yc = _mm256_fmadd_ps(yc, z, CT__RNG_SPLAT(4.166664568298827E-002f));
    yc = _mm256_mul_ps(yc, z);
    yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, CT__RNG_SPLAT(0.5f)));
    yc = _mm256_add_ps(yc, CT__RNG_SPLAT(1.0f));
    __m256 ys = _mm256_fmadd_ps(CT__RNG_SPLAT(-1.9515295891E-4f), z,
                                CT__RNG_SPLAT(8.3321608736E-3f));
    ys = _mm256_fmadd_ps(ys, z, CT__RNG_SPLAT(-1.6666654611E-1f));
    ys = _mm256_mul_ps(ys, z);
    ys = _mm256_fmadd_ps(ys, x, x);
    __m256 sin_part = _mm256_and_ps(sin_poly, ys), cos_part = _mm256_andnot_ps(sin_poly, yc);
    *s = _mm256_xor_ps(_mm256_add_ps(cos_part, sin_part), sign_sin);
    *c = _mm256_xor_ps(_mm256_add_ps(_mm256_sub_ps(yc, cos_part), _mm256_sub_ps(ys, sin_part)),
                       sign_cos);
}

/* normal_fill_16_AVX2: Box-Muller over the 8 pairs (d[j], d[j + 8]) of uniforms in [0, 1). */
static void ct__rng_box_muller16_f32(float *d, float mean, float std)
{
    __m256 lg = ct__rng_logf8(_mm256_sub_ps(CT__RNG_SPLAT(1.0f), _mm256_loadu_ps(d)));
    __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(CT__RNG_SPLAT(-2.0f), lg));
    __m256 theta = _mm256_mul_ps(CT__RNG_SPLAT((float)(2.0 * 3.14159265358979323846)),
                                 _mm256_loadu_ps(d + 8));
    __m256 s, c;
    ct__rng_sincosf8(theta, &s, &c);
    __m256 vmean = CT__RNG_SPLAT(mean), vstd = CT__RNG_SPLAT(std);
    _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, c), vstd, vmean));
    _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, s), vstd, vmean));
}
#undef CT__RNG_SPLAT
#else
/* Natural log of x in (0, 1] as avx_mathfun.h's log256_ps computes each lane (cephes logf),
   with the fusions gcc makes of it in PyTorch's AVX2 kernel. */
static float ct__rng_logf(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    float e = (float)((int32_t)(bits >> 23) - 0x7f) + 1.0f;
    bits = (bits & ~0x7f800000u) | 0x3f000000u; /* mantissa in [0.5, 1) */
    memcpy(&x, &bits, sizeof x);
    bool small = x < 0.707106781186547524f;
    float tmp = small ? x : 0.0f;
    x = x - 1.0f;
    e = e - (small ? 1.0f : 0.0f);
    x = x + tmp;
    float z = x * x;
    static const float p[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                               -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                               2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
    float y = p[0];
    for (int k = 1; k < 9; k++) {
        y = fmaf(y, x, p[k]);
    }
    y = y * x;
    y = fmaf(y, z, e * -2.12194440e-4f);
    y = fmaf(-z, 0.5f, y);
    x = x + y;
    return fmaf(e, 0.693359375f, x);
}

static float ct__rng_flip_sign(float v, uint32_t sign)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits ^= sign;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Sine and cosine of x >= 0 as avx_mathfun.h's sincos256_ps computes each lane (cephes
   sinf/cosf over octants), with gcc's fusions in PyTorch's AVX2 kernel. */
static void ct__rng_sincosf(float x, float *s, float *c)
{
    int32_t j = ((int32_t)(x * 1.27323954473516f) + 1) & ~1; /* x * 4/pi, rounded up to even */
    float y = (float)j;
    uint32_t sign_sin = (uint32_t)(j & 4) << 29;
    uint32_t sign_cos = (uint32_t)(~(j - 2) & 4) << 29;
    bool sin_poly = (j & 2) == 0;
    x = fmaf(y, -0.78515625f, x); /* x - y * pi/4 in three parts */
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    float z = x * x;
    float yc = fmaf(2.443315711809948E-005f, z, -1.388731625493765E-003f);
    yc = fmaf(yc, z, 4.166664568298827E-002f);
    yc = yc * z;
    yc = fmaf(yc, z, -(z * 0.5f)) + 1.0f;
    float ys = fmaf(-1.9515295891E-4f, z, 8.3321608736E-3f);
    ys = fmaf(ys, z, -1.6666654611E-1f);
    ys = ys * z;
    ys = fmaf(ys, x, x);
    float sin_part = sin_poly ? ys : 0.0f, cos_part = sin_poly ? 0.0f : yc;
    *s = ct__rng_flip_sign(cos_part + sin_part, sign_sin);
    *c = ct__rng_flip_sign((yc - cos_part) + (ys - sin_part), sign_cos);
}

/* normal_fill_16_AVX2: Box-Muller over the 8 pairs (d[j], d[j + 8]) of uniforms in [0, 1). */
static void ct__rng_box_muller16_f32(float *d, float mean, float std)
{
    const float two_pi = (float)(2.0 * 3.14159265358979323846);
    for (int j = 0; j < 8; j++) {
        float radius = sqrtf(-2.0f * ct__rng_logf(1.0f - d[j]));
        float s, c;
        ct__rng_sincosf(two_pi * d[j + 8], &s, &c);
        d[j] = fmaf(radius * c, std, mean);
        d[j + 8] = fmaf(radius * s, std, mean);
    }
}
#endif

/* normal_fill_16<double>: the same with libm's log, cos and sin. */
static void ct__rng_box_muller16_f64(double *d, double mean, double std)
{
    for (int j = 0; j < 8; j++) {
        double radius = sqrt(-2.0 * log(1.0 - d[j]));
        double theta = 2.0 * 3.14159265358979323846 * d[j + 8];
        d[j] = fma(radius * cos(theta), std, mean);
        d[j + 8] = fma(radius * sin(theta), std, mean);
    }
}

/* normal_fill / normal_fill_AVX2 over n >= 16 contiguous values: n uniforms, Box-Muller on
   each block of 16, and when n % 16 != 0 the last 16 redrawn and transformed again. */
#define CT__RNG_NORMAL_FILL(T, S)                                                              \
    static void ct__rng_normal_fill_##S(ct_generator *g, T *d, int64_t n, T mean, T std)       \
    {                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                      \
            d[i] = ct__rng_uniform_##S(g, 0, 1);                                               \
        }                                                                                      \
        for (int64_t i = 0; i + 16 <= n; i += 16) {                                            \
            ct__rng_box_muller16_##S(d + i, mean, std);                                        \
        }                                                                                      \
        if (n % 16 != 0) {                                                                     \
            for (int64_t i = n - 16; i < n; i++) {                                             \
                d[i] = ct__rng_uniform_##S(g, 0, 1);                                           \
            }                                                                                  \
            ct__rng_box_muller16_##S(d + n - 16, mean, std);                                   \
        }                                                                                      \
    }
CT__RNG_NORMAL_FILL(float, f32)
CT__RNG_NORMAL_FILL(double, f64)
#undef CT__RNG_NORMAL_FILL

/* normal_fill for float16 and bfloat16 over n >= 16 contiguous values: each block of 16 float
   uniforms transformed in a float buffer and rounded into place, and when n % 16 != 0, 16 more
   for the last 16 values. */
static void ct__rng_normal_fill_half(ct_generator *g, char *d, ct_dtype dt, int64_t n, float mean,
                                     float std)
{
    float buf[16];
    for (int64_t i = 0; i < n; i += 16) {
        for (int j = 0; j < 16; j++) {
            buf[j] = ct__rng_uniform_f32(g, 0, 1);
        }
        ct__rng_box_muller16_f32(buf, mean, std);
        ct__float_to_half_n(dt, buf, d + 2 * (i + 16 <= n ? i : n - 16), 2, 16);
    }
}

typedef struct ct__rng_moments {
    double mean, std;
} ct__rng_moments;

static void ct__rng_draw_normal(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    const ct__rng_moments *m = (const ct__rng_moments *)params;
    ct__rng_store_f64(dst, dt, ct__rng_normal_f64(g, m->mean, m->std));
}

/* Fills t with N(mean, std^2) from g (NULL: the default generator). */
static void ct__rng_normal(ct_tensor *t, ct_generator *g, double mean, double std)
{
    int64_t n = ct_numel(t);
    g = ct__rng_lock(g);
    if (n >= 16 && ct_is_contiguous(t) && t->dtype == CT_FLOAT32) {
        ct__rng_normal_fill_f32(g, (float *)ct__data(t), n, (float)mean, (float)std);
    } else if (n >= 16 && ct_is_contiguous(t) && ct__is_half(t->dtype)) {
        ct__rng_normal_fill_half(g, ct__data(t), t->dtype, n, (float)mean, (float)std);
    } else if (n >= 16 && ct_is_contiguous(t)) {
        ct__rng_normal_fill_f64(g, (double *)ct__data(t), n, mean, std);
    } else {
        ct__rng_moments m = {mean, std};
        ct__rng_fill(t, g, ct__rng_draw_normal, &m);
    }
    ct__rng_unlock(g);
}

CT__GLUE_BEGIN
/* normal_: (self, float mean, float std). */
static bool ct__normal_meta(ct_op_call *c)
{
    double std = c->attrs[1].f;
    if (!ct__rng_check_float(c, c->inputs[0]->dtype)) {
        return false;
    }
    if (std < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "normal expects std >= 0.0, but found std %g", std);
        return false;
    }
    return ct__rng_self_meta(c);
}
CT__GLUE_END

static ct_status ct__normal_kernel(ct_op_call *c)
{
    ct__rng_normal(c->outputs[0], c->generator, c->attrs[0].f, c->attrs[1].f);
    return CT_OK;
}

/* ---- exponential_, cauchy_, log_normal_, geometric_ ------------------------------------- */
/* Each draws one double per element as PyTorch's distribution<double> does (one
   uniform_real_distribution<double> draw, or normal_distribution<double> for log_normal),
   then static_cast<scalar_t>s it. */
typedef double (*ct__rng_sample_fn)(ct_generator *g, double a, double b);

typedef struct ct__rng_sampler {
    ct__rng_sample_fn sample;
    double a, b;
} ct__rng_sampler;

/* transformation::exponential on the CPU: -1 / lambda * log1p(-u). */
static double ct__rng_exponential(ct_generator *g, double lambda, double unused)
{
    (void)unused;
    return -1.0 / lambda * log1p(-ct__rng_uniform_f64(g, 0, 1));
}

/* transformation::cauchy<double>: median + sigma * tan(pi * (u - 0.5)), the multiply-add
   fused as PyTorch's compiled kernel fuses it. */
static double ct__rng_cauchy(ct_generator *g, double median, double sigma)
{
    double u = ct__rng_uniform_f64(g, 0, 1);
    return fma(sigma, tan(3.14159265358979323846 * (u - 0.5)), median);
}

/* transformation::log_normal: exp of a normal_distribution<double> draw. */
static double ct__rng_log_normal(ct_generator *g, double mean, double std)
{
    return exp(ct__rng_normal_f64(g, mean, std));
}

/* transformation::geometric: ceil(log(u) / log1p(-p)). */
static double ct__rng_geometric(ct_generator *g, double p, double unused)
{
    (void)unused;
    return ceil(log(ct__rng_uniform_f64(g, 0, 1)) / log1p(-p));
}

static void ct__rng_draw_sample(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    const ct__rng_sampler *s = (const ct__rng_sampler *)params;
    double v = s->sample(g, s->a, s->b);
    if (ct_dtype_is_floating_point(dt)) {
        ct__rng_store_f64(dst, dt, v);
    } else {
        ct__rng_store_i64(dst, dt, (int64_t)v);
    }
}

/* The sampler of each op, by variant: exponential_ (lambd), cauchy_ (median, sigma),
   log_normal_ (mean, std), geometric_ (p). */
static const ct__rng_sample_fn ct__rng_samplers[4] = {ct__rng_exponential, ct__rng_cauchy,
                                                      ct__rng_log_normal, ct__rng_geometric};

CT__GLUE_BEGIN
/* The C++ name of an integer dtype's type, as PyTorch's cauchy_ message prints it. */
static const char *ct__rng_cpp_type(ct_dtype dt)
{
    switch (dt) {
    case CT_BOOL: return "bool";
    case CT_UINT8: return "unsigned char";
    case CT_INT8: return "signed char";
    case CT_INT16: return "short int";
    case CT_INT32: return "int";
    default: return "long int";
    }
}

/* The dtype each op takes, in PyTorch's words; true when dt is accepted. */
static bool ct__sample_check_dtype(const ct_op_call *c, ct_dtype dt)
{
    bool fp = ct_dtype_is_floating_point(dt);
    switch (c->op->variant) {
    case 0:
        return fp || ct__fail(CT_ERR_DTYPE, c->fn, "Exponential distribution is a continuous "
                              "probability distribution. dtype must be a floating point but "
                              "you specified %s", ct__dtype_title(dt)) == CT_OK;
    case 1:
        return fp || ct__fail(CT_ERR_DTYPE, c->fn, "Cauchy distribution is a continuous "
                              "probability distribution. dtype must be a floating point but "
                              "you specified %s", ct__rng_cpp_type(dt)) == CT_OK;
    case 2:
        return fp || ct__fail(CT_ERR_DTYPE, c->fn, "\"log_normal_cpu\" not implemented for '%s'",
                              ct__dtype_title(dt)) == CT_OK;
    default:
        return dt != CT_BOOL || ct__fail(CT_ERR_DTYPE, c->fn, "\"geometric_cpu\" not "
                                         "implemented for 'Bool'") == CT_OK;
    }
}

/* The four ops' checks in PyTorch's words. Attributes: the sampler's parameters. */
static bool ct__sample_meta(ct_op_call *c)
{
    double a = c->attrs[0].f, b = c->n_attrs > 1 ? c->attrs[1].f : 0;
    int v = c->op->variant;
    if (!ct__sample_check_dtype(c, c->inputs[0]->dtype)) {
        return false;
    }
    if (v == 0 && !(a > 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "exponential_ expects lambda > 0.0, but found lambda=%g",
                 a);
    } else if (v == 1 && !(b > 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "cauchy_ expects sigma > 0.0, but found sigma=%g", b);
    } else if (v == 2 && !(b > 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "log_normal_ expects std > 0.0, but found std=%g", b);
    } else if (v == 3 && !(a > 0 && a < 1)) {
        ct__fail(CT_ERR_VALUE, c->fn, "geometric_ expects p to be in (0, 1), but got p=%g", a);
    } else {
        return ct__rng_self_meta(c);
    }
    return false;
}
CT__GLUE_END

static ct_status ct__sample_kernel(ct_op_call *c)
{
    ct__rng_sampler s = {ct__rng_samplers[c->op->variant], c->attrs[0].f,
                         c->n_attrs > 1 ? c->attrs[1].f : 0};
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_fill(c->outputs[0], g, ct__rng_draw_sample, &s);
    ct__rng_unlock(g);
    return CT_OK;
}

/* ---- integers ------------------------------------------------------------------------ */

typedef struct ct__rng_int_range {
    uint64_t range;
    int64_t base;
} ct__rng_int_range;

/* uniform_int_from_to_distribution: random64() for a range of 2^28 or more (any dtype), else
   random() (PyTorch keeps the modulo's skew below about 5% this way). */
static void ct__rng_draw_int(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    const ct__rng_int_range *r = (const ct__rng_int_range *)params;
    uint64_t bits = r->range >= (1ull << 28) ? ct__rng_u64(g) : ct__rng_u32(g);
    ct__rng_store_i64(dst, dt, (int64_t)(bits % r->range + (uint64_t)r->base));
}

/* uniform_int_distribution: random() % (max + 1) for narrow integers, random64() % 2^63 for
   int64, random() & 1 for bool, random() % (2^digits + 1) for float32 (24 digits), float16
   (11) and bfloat16 (8), random64() % (2^53 + 1) for float64. */
static void ct__rng_draw_full(ct_generator *g, char *dst, ct_dtype dt, const void *params)
{
    (void)params;
    switch (dt) {
    case CT_BOOL: ct__rng_store_i64(dst, dt, ct__rng_u32(g) & 1u); break;
    case CT_UINT8: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 256u); break;
    case CT_INT8: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 128u); break;
    case CT_INT16: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 32768u); break;
    case CT_INT32: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % 2147483648u); break;
    case CT_INT64: ct__rng_store_i64(dst, dt, (int64_t)(ct__rng_u64(g) & INT64_MAX)); break;
    case CT_FLOAT32: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % ((1u << 24) + 1)); break;
    case CT_FLOAT16: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % ((1u << 11) + 1)); break;
    case CT_BFLOAT16: ct__rng_store_i64(dst, dt, ct__rng_u32(g) % ((1u << 8) + 1)); break;
    default: ct__rng_store_i64(dst, dt, (int64_t)(ct__rng_u64(g) % ((1ull << 53) + 1))); break;
    }
}

static ct_status ct__random_kernel(ct_op_call *c)
{
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_fill(c->outputs[0], g, ct__rng_draw_full, NULL);
    ct__rng_unlock(g);
    return CT_OK;
}

CT__GLUE_BEGIN
/* check_from_to_in_range: an integer dtype or float16 must hold `from` and `to - 1` (the other
   float dtypes hold every int64, rounded). The message names the type as PyTorch's does. */
static bool ct__rng_check_int_range(const char *op, int64_t from, int64_t to_inc, ct_dtype dt)
{
    static const struct {
        ct_dtype dtype;
        int64_t min, max;
        const char *name;
    } lim[] = {{CT_BOOL, 0, 1, "bool"},
               {CT_UINT8, 0, 255, "unsigned char"},
               {CT_INT8, -128, 127, "signed char"},
               {CT_INT16, -32768, 32767, "short int"},
               {CT_INT32, INT32_MIN, INT32_MAX, "int"},
               {CT_FLOAT16, -65504, 65504, "c10::Half"}};
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
        if (lim[k].dtype != dt) {
            continue;
        }
        const char *name = from < lim[k].min || from > lim[k].max       ? "from"
                           : to_inc < lim[k].min || to_inc > lim[k].max ? "to - 1"
                                                                        : NULL;
        if (name) {
            ct__fail(CT_ERR_VALUE, op, "%s is out of bounds for %s", name, lim[k].name);
            return false;
        }
    }
    return true;
}

/* v rounded to float dt and back to int64 (the half types through float; saturated where C
   would overflow). */
static int64_t ct__rng_round_int(int64_t v, ct_dtype dt)
{
    double r = dt == CT_FLOAT64 ? (double)v
               : dt == CT_FLOAT32 ? (double)(float)v
                                  : (double)ct__rng_round_half(dt, (float)v);
    return r >= 9223372036854775808.0 ? INT64_MAX : r < -9223372036854775808.0 ? INT64_MIN
                                                                               : (int64_t)r;
}

/* floor(log2(|v|)) for v != 0. */
static int ct__rng_log2(int64_t v)
{
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int n = 0;
    while (a >>= 1) {
        n++;
    }
    return n;
}

/* update_from / update_to: for a float dtype, a bound whose rounding would leave [from, to)
   moves inward by one step of the dtype's spacing there. */
static void ct__rng_float_bounds(int64_t *from, int64_t *to, ct_dtype dt)
{
    int digits = dt == CT_FLOAT64 ? 53 : dt == CT_FLOAT32 ? 24 : dt == CT_FLOAT16 ? 11 : 8;
    int64_t from1 = ct__rng_round_int(*from + 1, dt), to1 = ct__rng_round_int(*to - 1, dt);
    if (from1 < *from) {
        *from = from1 + ((int64_t)1 << (ct__rng_log2(*from + 1) - digits + 1));
    }
    if (to1 >= *to) {
        *to = to1 - ((int64_t)1 << (ct__rng_log2(*to - 1) - digits + 1));
    }
}

/* randint's bounds [low, high) as drawn: attributes 0 and 1, moved inward for a float dtype
   (the caller checked low < high). */
static void ct__randint_bounds(const ct_op_call *c, ct_dtype dtype, int64_t *low, int64_t *high)
{
    *low = c->attrs[0].i;
    *high = c->attrs[1].i;
    if (ct_dtype_is_floating_point(dtype)) {
        ct__rng_float_bounds(low, high, dtype);
    }
}

/* randint: (int low, int high, int[] size, ScalarType dtype). */
static bool ct__randint_meta(ct_op_call *c)
{
    ct_dtype dtype = (ct_dtype)c->attrs[3].i;
    int64_t low = c->attrs[0].i, high = c->attrs[1].i;
    if (low >= high) {
        ct__fail(CT_ERR_VALUE, c->fn,
                 "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                 (long long)low, (long long)high);
        return false;
    }
    ct__randint_bounds(c, dtype, &low, &high);
    if (low >= high) {
        ct__fail(CT_ERR_VALUE, c->fn, "random_ expects 'from' casted to dtype to be less than "
                 "'to' casted to dtype, but got from=%lld >= to=%lld", (long long)low,
                 (long long)high);
        return false;
    }
    if (!ct__rng_check_int_range(c->fn, low, high - 1, dtype)) {
        return false;
    }
    ct_tensor *t = ct__op_output(c, c->attrs[2].ints, (int)c->attrs[2].i, dtype);
    if (t) {
        c->dtype = t->dtype;
    }
    return t != NULL;
}
CT__GLUE_END

static ct_status ct__randint_kernel(ct_op_call *c)
{
    int64_t low = 0, high = 0;
    ct__randint_bounds(c, c->dtype, &low, &high);
    ct__rng_int_range r = {(uint64_t)high - (uint64_t)low, low};
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_fill(c->outputs[0], g, ct__rng_draw_int, &r);
    ct__rng_unlock(g);
    return CT_OK;
}

/* randperm_cpu: below n = UINT32_MAX / 20, Fisher-Yates swapping i with i + random() % (n - i);
   from there the inside-out variant with random64() % (i + 1). */
static void ct__rng_permute(ct_generator *g, int64_t *r, int64_t n)
{
    if (n < (int64_t)(UINT32_MAX / 20)) {
        for (int64_t i = 0; i < n; i++) {
            r[i] = i;
        }
        for (int64_t i = 0; i < n - 1; i++) {
            int64_t z = (int64_t)(ct__rng_u32(g) % (uint64_t)(n - i));
            int64_t tmp = r[i];
            r[i] = r[z + i];
            r[z + i] = tmp;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t z = (int64_t)(ct__rng_u64(g) % (uint64_t)(i + 1));
        r[i] = r[z]; /* r[i] is i when z == i */
        r[z] = i;
    }
}

CT__GLUE_BEGIN
/* randperm: (int n, ScalarType dtype), int64 only. */
static bool ct__randperm_meta(ct_op_call *c)
{
    int64_t n = c->attrs[0].i;
    if (n < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "n must be non-negative, got%lld", (long long)n);
        return false;
    }
    c->dtype = CT_INT64;
    return ct__op_output(c, &n, 1, CT_INT64) != NULL;
}
CT__GLUE_END

static ct_status ct__randperm_kernel(ct_op_call *c)
{
    ct_tensor *t = c->outputs[0];
    ct_generator *g = ct__rng_lock(c->generator);
    ct__rng_permute(g, (int64_t *)ct__data(t), t->sizes[0]);
    ct__rng_unlock(g);
    return CT_OK;
}

/* ---- factories over uniform_ and normal_ ------------------------------------------------ */
CT__GLUE_BEGIN
/* A float output of sizes and dtype (the kernel's dtype is its own). */
static bool ct__rng_float_output(ct_op_call *c, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    ct_tensor *t = ct__op_output(c, sizes, ndim, dtype);
    if (!t || !ct__rng_check_float(c, t->dtype)) {
        return false;
    }
    c->dtype = t->dtype;
    return true;
}

/* rand, randn: (int[] size, ScalarType dtype). */
static bool ct__rng_new_meta(ct_op_call *c)
{
    return ct__rng_float_output(c, c->attrs[0].ints, (int)c->attrs[0].i,
                                (ct_dtype)c->attrs[1].i);
}

/* rand_like, randn_like: self's shape and dtype. */
static bool ct__rng_like_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    return ct__rng_float_output(c, t->sizes, t->ndim, t->dtype);
}
CT__GLUE_END

static ct_status ct__rand_kernel(ct_op_call *c)
{
    ct__rng_uniform(c->outputs[0], c->generator, 0, 1);
    return CT_OK;
}

static ct_status ct__randn_kernel(ct_op_call *c)
{
    ct__rng_normal(c->outputs[0], c->generator, 0, 1);
    return CT_OK;
}

/* ---- bernoulli(Tensor p) (issue 7) ----------------------------------------------------- */
CT__GLUE_BEGIN
/* The output: p's shape and dtype, contiguous (empty_like). */
static bool ct__bernoulli_p_meta(ct_op_call *c)
{
    const ct_tensor *p = c->inputs[0];
    c->dtype = p->dtype;
    return ct__op_output(c, p->sizes, p->ndim, p->dtype) != NULL;
}
CT__GLUE_END

/* Reads element i of the contiguous p (float32 or float64) into *v and draws one
   bernoulli_distribution of p's own type into out; false (nothing drawn) for p outside
   [0, 1] or NaN. */
static bool ct__bernoulli_p_draw(ct_generator *g, const ct_tensor *p, ct_tensor *out, int64_t i)
{
    if (p->dtype == CT_FLOAT32) {
        float v = ((const float *)ct__data(p))[i];
        if (!(v >= 0 && v <= 1)) {
            return false;
        }
        ((float *)ct__data(out))[i] = (float)(ct__rng_uniform_f32(g, 0, 1) < v);
        return true;
    }
    double v = ((const double *)ct__data(p))[i];
    if (!(v >= 0 && v <= 1)) {
        return false;
    }
    ((double *)ct__data(out))[i] = (double)(ct__rng_uniform_f64(g, 0, 1) < v);
    return true;
}

/* bernoulli_tensor_cpu: one draw per element in row-major order (24 random bits of random()
   for a float32 p, 53 of random64() for float64); an invalid p stops the draws there with
   PyTorch's error, the draws before it spent as in PyTorch. */
static ct_status ct__bernoulli_p_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    ct_tensor *p = ct__tensor_new(c->fn, out->sizes, out->ndim, out->dtype);
    if (!p) {
        return CT_ERR_OOM;
    }
    ct__copy_kernel(p, c->inputs[0]);
    int64_t n = ct_numel(out), i = 0;
    ct_generator *g = ct__rng_lock(c->generator);
    while (i < n && ct__bernoulli_p_draw(g, p, out, i)) {
        i++;
    }
    ct__rng_unlock(g);
    ct__release(p);
    if (i < n) { /* reported outside the lock: a handler may draw */
        return ct__fail(CT_ERR_VALUE, c->fn, "Expected p_in >= 0 && p_in <= 1 to be true, but "
                        "got false.");
    }
    return CT_OK;
}

static void ct__bernoulli_p_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_zeros_like(g); /* PyTorch: zeros_like(grad) */
}

static const ct_op ct__op_bernoulli = {"aten::bernoulli", "bernoulli(Tensor self, *, Generator? "
                                       "generator=None) -> Tensor", "ct_bernoulli",
                                       CT_OP_RANDOM, CT_AUTOCAST_NONE, 0, 0u, NULL,
                                       ct__bernoulli_p_meta, CT__K_FLOAT(ct__bernoulli_p_kernel),
                                       NULL, "BernoulliBackward0", ct__bernoulli_p_backward, 0u,
                                       NULL, NULL};

ct_tensor *ct_bernoulli(const ct_tensor *input, ct_generator *g)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_bernoulli, "ct_bernoulli", in, 1);
    c.generator = g;
    return ct__dispatch(&c);
}

/* ---- poisson --------------------------------------------------------------------------- */
/* x * y rounded: a product that no compiler flag contracts with the addition it feeds. */
static double ct__rng_mul(double x, double y)
{
    return fma(x, y, 0.0);
}

/* (int64_t)floor(x), with x86's cvttsd2si result (INT64_MIN) where it does not fit. */
static int64_t ct__rng_floor_i64(double x)
{
    x = floor(x);
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (int64_t)x : INT64_MIN;
}

/* sample_poisson (ATen/native/Distributions.h) for a rate >= 0: the transformed rejection
   method (Hoermann 1993) from 10 on, else the product of uniforms. */
static double ct__rng_poisson(ct_generator *g, double lambda)
{
    if (lambda >= 10) {
        double slam = sqrt(lambda), loglam = log(lambda);
        double b = 0.931 + ct__rng_mul(2.53, slam);
        double a = -0.059 + ct__rng_mul(0.02483, b);
        double invalpha = 1.1239 + 1.1328 / (b - 3.4);
        double vr = 0.9277 - 3.6224 / (b - 2);
        for (;;) {
            double u = ct__rng_uniform_f64(g, 0, 1) - 0.5;
            double v = ct__rng_uniform_f64(g, 0, 1);
            double us = 0.5 - fabs(u);
            int64_t k = ct__rng_floor_i64(ct__rng_mul(2 * a / us + b, u) + lambda + 0.43);
            if (us >= 0.07 && v <= vr) {
                return (double)k;
            }
            if (k < 0 || (us < 0.013 && v > us)) {
                continue;
            }
            if (log(v) + log(invalpha) - log(a / ct__rng_mul(us, us) + b) <=
                -lambda + ct__rng_mul((double)k, loglam) - lgamma((double)k + 1)) {
                return (double)k;
            }
        }
    }
    if (lambda == 0) {
        return 0;
    }
    double enlam = exp(-lambda), prod = 1.0;
    int64_t x = 0;
    for (;;) {
        prod *= ct__rng_uniform_f64(g, 0, 1);
        if (!(prod > enlam)) {
            return (double)x;
        }
        x++;
    }
}

/* _s_poisson_cpu: one sample per element in row-major order; a negative or NaN rate stops the
   draws there with PyTorch's error. */
static ct_status ct__poisson_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    ct_tensor *rates = ct__tensor_new(c->fn, out->sizes, out->ndim, CT_FLOAT64);
    if (!rates) {
        return CT_ERR_OOM;
    }
    ct__copy_kernel(rates, c->inputs[0]);
    const double *r = (const double *)ct__data(rates);
    int64_t n = ct_numel(out), i = 0;
    ct_generator *g = ct__rng_lock(c->generator);
    for (; i < n && r[i] >= 0; i++) {
        double k = ct__rng_poisson(g, r[i]);
        if (out->dtype == CT_FLOAT32) {
            ((float *)ct__data(out))[i] = (float)k;
        } else {
            ((double *)ct__data(out))[i] = k;
        }
    }
    ct__rng_unlock(g);
    ct__release(rates);
    if (i < n) { /* reported outside the lock: a handler may draw */
        return ct__fail(CT_ERR_VALUE, c->fn, "invalid Poisson rate, expected rate to be "
                        "non-negative");
    }
    return CT_OK;
}

static const ct_op ct__op_poisson = {"aten::poisson", "poisson(Tensor self, Generator? "
                                     "generator=None) -> Tensor", "ct_poisson", CT_OP_RANDOM,
                                     CT_AUTOCAST_NONE, 0, 0u, NULL, ct__bernoulli_p_meta,
                                     CT__K_FLOAT(ct__poisson_kernel), NULL, "PoissonBackward0",
                                     ct__bernoulli_p_backward, 0u, NULL, NULL};

ct_tensor *ct_poisson(const ct_tensor *input, ct_generator *g)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_poisson, "ct_poisson", in, 1);
    c.generator = g;
    return ct__dispatch(&c);
}

/* ---- normal(mean, std) ----------------------------------------------------------------- */
/* normal.Tensor_Tensor as PyTorch's normal_out_impl: standard normal draws of the broadcast
   shape in mean's dtype (normal_(0, 1)), then mul_(std), then add_(mean): two roundings. */
static ct_status ct__normal_tt_composite(ct_op_call *c)
{
    const ct_tensor *mean = c->inputs[0], *std = c->inputs[1];
    const int64_t *shapes[2] = {mean->sizes, std->sizes};
    int ndims[2] = {mean->ndim, std->ndim}, ndim = 0;
    int64_t sizes[CT_MAX_DIMS];
    if (ct_broadcast_shapes(shapes, ndims, 2, sizes, &ndim) != CT_OK ||
        !ct__rng_check_float(c, mean->dtype)) {
        return ct_error_code();
    }
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    ct_no_grad_begin();
    ct_tensor *r = NULL;
    if (ct_numel(std) > 0 && ct_item(ct_amin(std, NULL, 0, false)) < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "normal expects all elements of std >= 0.0");
    } else {
        r = ct_normal_(ct_empty(sizes, ndim, mean->dtype), 0.0, 1.0, c->generator);
        r = ct_add_(ct_mul_(r, std), mean, 1.0);
    }
    ct_no_grad_end();
    return ct__composite_end(c, r);
}

/* NormalBackward3: PyTorch's derivative of torch.normal(mean, std) is zero for both. */
static void ct__normal_tt_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_zeros_like(g);
    gi[1] = ct_zeros_like(g);
}

/* ---- multinomial ------------------------------------------------------------------------ */
/* multinomial_with_replacement_apply: per row, the cumulative distribution in the input's
   dtype (float32 for reduced precision) normalized by its sum, its last entry set to 1, then
   for each sample one uniform_real_distribution<double> draw and a binary search for the
   first entry not below it. */
#define CT__MULTINOMIAL_ROWS(T)                                                                \
    static bool ct__multinomial_rows_##T(const ct_tensor *p, ct_generator *g, int64_t n,       \
                                         int64_t *out, const char *fn)                          \
    {                                                                                          \
        int64_t rows = p->ndim > 1 ? p->sizes[0] : 1, cats = p->sizes[p->ndim - 1];            \
        int64_t rs = p->ndim > 1 ? p->strides[0] : 0, cs = p->strides[p->ndim - 1];           \
        const T *data = (const T *)ct__data(p);                                                \
        T *cum = (T *)ct__malloc(sizeof(T) * (size_t)cats);                                    \
        if (!cum) {                                                                            \
            ct__fail(CT_ERR_OOM, fn, "out of memory");                                         \
            return false;                                                                      \
        }                                                                                      \
        for (int64_t i = 0; i < rows; i++) {                                                   \
            T sum = 0;                                                                         \
            for (int64_t j = 0; j < cats; j++) {                                               \
                T v = data[i * rs + j * cs];                                                   \
                if (!(v >= 0) || !isfinite(v)) {                                               \
                    ct__free(cum);                                                             \
                    ct__fail(CT_ERR_VALUE, fn, "invalid multinomial distribution "             \
                             "(encountering probability entry %s)",                            \
                             !(v >= 0) ? "< 0" : "= infinity or NaN");                             \
                    return false;                                                              \
                }                                                                              \
                sum += v;                                                                      \
                cum[j] = sum;                                                                  \
            }                                                                                  \
            if (!(sum > 0)) {                                                                  \
                ct__free(cum);                                                                 \
                ct__fail(CT_ERR_VALUE, fn, "invalid multinomial distribution (sum of "         \
                         "probabilities <= 0)");                                               \
                return false;                                                                  \
            }                                                                                  \
            for (int64_t j = 0; j < cats; j++) {                                               \
                cum[j] /= sum;                                                                 \
            }                                                                                  \
            cum[cats - 1] = 1;                                                                 \
            for (int64_t k = 0; k < n; k++) {                                                  \
                double u = ct__rng_uniform_f64(g, 0, 1);                                       \
                int64_t lo = 0, hi = cats;                                                     \
                while (hi - lo > 0) {                                                          \
                    int64_t mid = lo + (hi - lo) / 2;                                          \
                    if (cum[mid] < u) {                                                        \
                        lo = mid + 1;                                                          \
                    } else {                                                                   \
                        hi = mid;                                                              \
                    }                                                                          \
                }                                                                              \
                out[i * n + k] = lo;                                                           \
            }                                                                                  \
        }                                                                                      \
        ct__free(cum);                                                                         \
        return true;                                                                           \
    }
CT__MULTINOMIAL_ROWS(float)
CT__MULTINOMIAL_ROWS(double)
#undef CT__MULTINOMIAL_ROWS

CT__GLUE_BEGIN
/* multinomial: (self, int num_samples, bool replacement). The checks of PyTorch's
   multinomial_out. */
static bool ct__multinomial_check(const ct_op_call *c)
{
    const ct_tensor *p = c->inputs[0];
    int64_t n = c->attrs[0].i;
    if (p->ndim < 1 || p->ndim > 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "prob_dist must be 1 or 2 dim");
    } else if (!ct_dtype_is_floating_point(p->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "multinomial only supports floating-point dtypes for "
                 "input, got: %s", ct__dtype_title(p->dtype));
    } else if (n <= 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "cannot sample n_sample <= 0 samples");
    } else if (!c->attrs[1].i && n > p->sizes[p->ndim - 1]) {
        ct__fail(CT_ERR_VALUE, c->fn, "cannot sample n_sample > prob_dist.size(-1) samples "
                 "without replacement");
    } else if (p->sizes[p->ndim - 1] > (1 << 24)) {
        ct__fail(CT_ERR_VALUE, c->fn, "number of categories cannot exceed 2^24");
    } else {
        return ct__check_cpu(c->fn, p);
    }
    return false;
}
CT__GLUE_END

/* ---- PyTorch's topk order: its CPU topk runs libstdc++'s nth_element and sort (or
   partial_sort when k * 64 <= n) on (value, index) pairs, best first, NaN above all; equal
   values (zero weights drawn without replacement) come out in the order those algorithms
   leave them, which the functions below reproduce step for step. */
typedef struct ct__rank {
    double v;
    int64_t i;
} ct__rank;

static bool ct__rank_before(const ct__rank *x, const ct__rank *y)
{
    return (isnan(x->v) && !isnan(y->v)) || x->v > y->v;
}

static void ct__rank_swap(ct__rank *a, ct__rank *b)
{
    ct__rank t = *a;
    *a = *b;
    *b = t;
}

static int64_t ct__rank_lg(int64_t n)
{
    int64_t lg = 0;
    while (n >>= 1) {
        lg++;
    }
    return lg;
}

/* __insertion_sort (its unguarded variant places every element at the same position). */
static void ct__rank_insertion_sort(ct__rank *f, ct__rank *l)
{
    for (ct__rank *i = f + 1; i < l; i++) {
        ct__rank val = *i, *hole = i;
        if (ct__rank_before(&val, f)) {
            memmove(f + 1, f, sizeof *f * (size_t)(i - f));
            *f = val;
            continue;
        }
        for (; ct__rank_before(&val, hole - 1); hole--) {
            *hole = hole[-1];
        }
        *hole = val;
    }
}

/* __adjust_heap with __push_heap: the heap's root is the element ranked last. */
static void ct__rank_adjust_heap(ct__rank *f, int64_t hole, int64_t len, ct__rank val)
{
    int64_t top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        child -= ct__rank_before(&f[child], &f[child - 1]);
        f[hole] = f[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        f[hole] = f[child - 1];
        hole = child - 1;
    }
    for (int64_t parent = (hole - 1) / 2; hole > top && ct__rank_before(&f[parent], &val);
         parent = (hole - 1) / 2) {
        f[hole] = f[parent];
        hole = parent;
    }
    f[hole] = val;
}

/* __heap_select(f, m, l) then, when sort, __sort_heap(f, m): std::partial_sort. */
static void ct__rank_heap_select(ct__rank *f, ct__rank *m, ct__rank *l, bool sort)
{
    int64_t len = m - f;
    for (int64_t parent = (len - 2) / 2; len >= 2 && parent >= 0; parent--) {
        ct__rank_adjust_heap(f, parent, len, f[parent]);
    }
    for (ct__rank *i = m; i < l; i++) {
        if (ct__rank_before(i, f)) {
            ct__rank val = *i;
            *i = *f;
            ct__rank_adjust_heap(f, 0, len, val);
        }
    }
    for (ct__rank *last = m - 1; sort && last > f; last--) {
        ct__rank val = *last;
        *last = *f;
        ct__rank_adjust_heap(f, 0, last - f, val);
    }
}

/* __unguarded_partition_pivot: the median of f[1], the middle and l[-1] moved to f, then
   Hoare's partition around it; returns the cut. */
static ct__rank *ct__rank_partition(ct__rank *f, ct__rank *l)
{
    ct__rank *a = f + 1, *b = f + (l - f) / 2, *c = l - 1;
    if (ct__rank_before(a, b)) {
        ct__rank_swap(f, ct__rank_before(b, c) ? b : ct__rank_before(a, c) ? c : a);
    } else {
        ct__rank_swap(f, ct__rank_before(a, c) ? a : ct__rank_before(b, c) ? c : b);
    }
    for (ct__rank *lo = f + 1, *hi = l;; lo++) {
        while (ct__rank_before(lo, f)) {
            lo++;
        }
        for (hi--; ct__rank_before(f, hi); hi--) {
        }
        if (!(lo < hi)) {
            return lo;
        }
        ct__rank_swap(lo, hi);
    }
}

/* std::nth_element (__introselect). */
static void ct__rank_nth_element(ct__rank *f, ct__rank *nth, ct__rank *l)
{
    if (f == l || nth == l) {
        return;
    }
    for (int64_t depth = 2 * ct__rank_lg(l - f); l - f > 3; depth--) {
        if (depth == 0) {
            ct__rank_heap_select(f, nth + 1, l, false);
            ct__rank_swap(f, nth);
            return;
        }
        ct__rank *cut = ct__rank_partition(f, l);
        *(cut <= nth ? &f : &l) = cut;
    }
    ct__rank_insertion_sort(f, l);
}

/* std::sort: __introsort_loop down to runs of 16, then one insertion sort. */
static void ct__rank_introsort(ct__rank *f, ct__rank *l, int64_t depth)
{
    while (l - f > 16) {
        if (depth == 0) {
            ct__rank_heap_select(f, l, l, true);
            return;
        }
        depth--;
        ct__rank *cut = ct__rank_partition(f, l);
        ct__rank_introsort(cut, l, depth);
        l = cut;
    }
}

/* The indices of the k best of q's rows (q contiguous (rows, n)) in PyTorch's topk order,
   written to out (rows, k); false + CT_ERR_OOM. */
static bool ct__multinomial_rank(const ct_tensor *q, int64_t k, int64_t *out, const char *fn)
{
    int64_t n = q->sizes[q->ndim - 1], rows = ct_numel(q) / (n ? n : 1);
    ct__rank *r = (ct__rank *)ct__malloc(sizeof(ct__rank) * (size_t)(n ? n : 1));
    if (!r) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return false;
    }
    for (int64_t row = 0; row < rows; row++) {
        for (int64_t j = 0; j < n; j++) {
            r[j].v = ct__load_f64(ct__data(q) + (size_t)(row * n + j) * ct_dtype_size(q->dtype),
                                  q->dtype);
            r[j].i = j;
        }
        if (k * 64 <= n) {
            ct__rank_heap_select(r, r + k, r + n, true);
        } else {
            ct__rank_nth_element(r, r + k - 1, r + n);
            ct__rank_introsort(r, r + k - 1, 2 * ct__rank_lg(k - 1 > 0 ? k - 1 : 1));
            ct__rank_insertion_sort(r, r + k - 1);
        }
        for (int64_t j = 0; j < k; j++) {
            out[row * k + j] = r[j].i;
        }
    }
    ct__free(r);
    return true;
}

/* Whether p covers its elements without gaps or overlaps (PyTorch's
   is_non_overlapping_and_dense, for 1 or 2 dims): empty_like(p) then keeps p's strides. */
static bool ct__multinomial_dense(const ct_tensor *p)
{
    int inner = p->ndim == 2 && p->strides[0] < p->strides[1] ? 0 : p->ndim - 1;
    int64_t expected = 1;
    for (int k = 0; k < p->ndim; k++) {
        int d = k == 0 ? inner : 1 - inner;
        if (p->sizes[d] != 1 && p->strides[d] != expected) {
            return false;
        }
        expected *= p->sizes[d];
    }
    return true;
}

/* Without replacement, or one sample: PyTorch's fast path, the top num_samples of
   p / q for q ~ Exponential(1) drawn in p's shape and layout (the Gumbel-max trick), after
   its checks. */
static ct_tensor *ct__multinomial_topk(const ct_op_call *c)
{
    const ct_tensor *p = c->inputs[0];
    int64_t n = c->attrs[0].i;
    ct_tensor *lo = ct_amin(p, NULL, 0, false), *hi = ct_amax(p, NULL, 0, false);
    if (!lo || !hi) {
        return NULL;
    }
    if (!(ct_item(lo) >= 0) || !(ct_item(hi) < INFINITY)) {
        ct__fail(CT_ERR_VALUE, c->fn, "probability tensor contains either `inf`, `nan` or "
                 "element < 0");
        return NULL;
    }
    if (ct_item(ct_amin(ct_sum_dim(p, -1, false), NULL, 0, false)) == 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "invalid multinomial distribution (sum of probabilities "
                 "<= 0)");
        return NULL;
    }
    ct_tensor *q = ct__multinomial_dense(p)
                       ? ct_empty_strided(p->sizes, p->strides, p->ndim, p->dtype)
                       : ct_empty_like(p);
    q = ct_div(p, ct_exponential_(q, 1.0, c->generator));
    if (n == 1 || !q) {
        return q ? ct_argmax_dim(q, -1, true) : NULL;
    }
    int64_t sizes[2] = {p->sizes[0], n};
    ct_tensor *r = ct_empty(p->ndim > 1 ? sizes : sizes + 1, p->ndim, CT_INT64);
    q = ct_contiguous(q);
    return r && q && ct__multinomial_rank(q, n, (int64_t *)ct__data(r), c->fn) ? r : NULL;
}

static ct_status ct__multinomial_composite(ct_op_call *c)
{
    if (!ct__multinomial_check(c)) {
        return ct_error_code();
    }
    const ct_tensor *p = c->inputs[0];
    int64_t n = c->attrs[0].i;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    ct_no_grad_begin();
    ct_tensor *r = NULL;
    if (!c->attrs[1].i || n == 1) {
        r = ct__multinomial_topk(c);
    } else {
        int64_t sizes[2] = {p->sizes[0], n};
        const ct_tensor *pf = p->dtype == CT_FLOAT64 ? p : ct_to_dtype(p, CT_FLOAT32);
        r = ct_empty(p->ndim > 1 ? sizes : sizes + 1, p->ndim, CT_INT64);
        if (pf && r) {
            ct_generator *g = ct__rng_lock(c->generator);
            bool ok = pf->dtype == CT_FLOAT64
                          ? ct__multinomial_rows_double(pf, g, n, (int64_t *)ct__data(r), c->fn)
                          : ct__multinomial_rows_float(pf, g, n, (int64_t *)ct__data(r), c->fn);
            ct__rng_unlock(g);
            r = ok ? r : NULL;
        }
    }
    ct_no_grad_end();
    return ct__composite_end(c, r);
}

CT__GLUE_BEGIN
/* ---- descriptors and public functions --------------------------------------------------- */
/* A random op: name, schema, public functions, kind, meta, kernels. */
#define CT__RANDOM(SYM, NAME, SCHEMA, API, KIND, META, KERNELS)                                \
    static const ct_op ct__op_##SYM = {"aten::" NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, 0, \
                                       0u, NULL, META, KERNELS, NULL, NULL, NULL, 0u, NULL,   \
                                       NULL};
#define CT__RANDOM_OPTS "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
                        "bool? pin_memory=None"
#define CT__K_INT64(K) {NULL, NULL, NULL, NULL, NULL, NULL, K, NULL, NULL}
/* The random kernels draw float16 and bfloat16 themselves (PyTorch's streams for them are not
   a float32 draw rounded): CT__K_FLOAT, CT__K_NUMERIC and CT__K_ALL with the half columns. */
#define CT__K_FLOAT_H(K) {NULL, NULL, NULL, NULL, NULL, NULL, NULL, K, K, K, K}
#define CT__K_NUMERIC_H(K) {NULL, NULL, K, K, K, K, K, K, K, K, K}
#define CT__K_ALL_H(K) {NULL, K, K, K, K, K, K, K, K, K, K}

CT__RANDOM(uniform_, "uniform_", "uniform_(Tensor(a!) self, float from=0., float to=1., *, "
           "Generator? generator=None) -> Tensor(a!)", "ct_uniform_", CT_OP_INPLACE,
           ct__uniform_meta, CT__K_FLOAT_H(ct__uniform_kernel))
CT__RANDOM(normal_, "normal_", "normal_(Tensor(a!) self, float mean=0., float std=1., *, "
           "Generator? generator=None) -> Tensor(a!)", "ct_normal_", CT_OP_INPLACE,
           ct__normal_meta, CT__K_FLOAT_H(ct__normal_kernel))
CT__RANDOM(bernoulli_, "bernoulli_", "bernoulli_.float(Tensor(a!) self, float p=0.5, *, "
           "Generator? generator=None) -> Tensor(a!)", "ct_bernoulli_", CT_OP_INPLACE,
           ct__bernoulli_meta, CT__K_ALL_H(ct__bernoulli_kernel))
CT__RANDOM(random_, "random_", "random_(Tensor(a!) self, *, Generator? generator=None) -> "
           "Tensor(a!)", "ct_random_", CT_OP_INPLACE, ct__rng_self_meta,
           CT__K_ALL_H(ct__random_kernel))
CT__RANDOM(rand, "rand", "rand.generator(SymInt[] size, *, Generator? generator, "
           CT__RANDOM_OPTS ") -> Tensor", "ct_rand", CT_OP_RANDOM, ct__rng_new_meta,
           CT__K_FLOAT_H(ct__rand_kernel))
CT__RANDOM(randn, "randn", "randn.generator(SymInt[] size, *, Generator? generator, "
           CT__RANDOM_OPTS ") -> Tensor", "ct_randn", CT_OP_RANDOM, ct__rng_new_meta,
           CT__K_FLOAT_H(ct__randn_kernel))
CT__RANDOM(rand_like, "rand_like", "rand_like.generator(Tensor self, *, Generator? generator, "
           CT__RANDOM_OPTS ", MemoryFormat? memory_format=None) -> Tensor", "ct_rand_like",
           CT_OP_RANDOM, ct__rng_like_meta, CT__K_FLOAT_H(ct__rand_kernel))
CT__RANDOM(randn_like, "randn_like", "randn_like.generator(Tensor self, *, Generator? "
           "generator, " CT__RANDOM_OPTS ", MemoryFormat? memory_format=None) -> Tensor",
           "ct_randn_like", CT_OP_RANDOM, ct__rng_like_meta, CT__K_FLOAT_H(ct__randn_kernel))
CT__RANDOM(randint, "randint", "randint.low_generator(SymInt low, SymInt high, SymInt[] size, "
           "*, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? "
           "device=None, bool? pin_memory=None) -> Tensor", "ct_randint", CT_OP_RANDOM,
           ct__randint_meta, CT__K_ALL_H(ct__randint_kernel))
CT__RANDOM(randperm, "randperm", "randperm.generator(SymInt n, *, Generator? generator, "
           "ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? "
           "pin_memory=None) -> Tensor", "ct_randperm", CT_OP_RANDOM, ct__randperm_meta,
           CT__K_INT64(ct__randperm_kernel))
CT__RANDOM(randint_like, "randint_like", "randint_like.low_dtype(Tensor self, SymInt low, "
           "SymInt high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
           "ct_randint_like", CT_OP_RANDOM, ct__randint_meta, CT__K_ALL_H(ct__randint_kernel))
/* exponential_, cauchy_, log_normal_, geometric_: variant k samples with ct__rng_samplers[k]. */
#define CT__SAMPLER(SYM, SCHEMA, VARIANT, KERNELS)                                             \
    static const ct_op ct__op_##SYM = {"aten::" #SYM, #SYM SCHEMA, "ct_" #SYM, CT_OP_INPLACE,  \
                                       CT_AUTOCAST_NONE, VARIANT, 0u, NULL, ct__sample_meta,  \
                                       KERNELS, NULL, NULL, NULL, 0u, NULL, NULL};
CT__SAMPLER(exponential_, "(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> "
            "Tensor(a!)", 0, CT__K_FLOAT_H(ct__sample_kernel))
CT__SAMPLER(cauchy_, "(Tensor(a!) self, float median=0., float sigma=1., *, Generator? "
            "generator=None) -> Tensor(a!)", 1, CT__K_FLOAT_H(ct__sample_kernel))
CT__SAMPLER(log_normal_, "(Tensor(a!) self, float mean=1., float std=2., *, Generator? "
            "generator=None) -> Tensor(a!)", 2, CT__K_FLOAT_H(ct__sample_kernel))
CT__SAMPLER(geometric_, "(Tensor(a!) self, float p, *, Generator? generator=None) -> "
            "Tensor(a!)", 3, CT__K_NUMERIC_H(ct__sample_kernel))
#undef CT__SAMPLER
static const ct_op ct__op_normal = {
    "aten::normal", "normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? "
    "generator=None) -> Tensor", "ct_normal", CT_OP_RANDOM, CT_AUTOCAST_NONE, 0, 0u, NULL, NULL,
    CT__K_NONE, ct__normal_tt_composite, "NormalBackward3", ct__normal_tt_backward, 0u, NULL,
    NULL};
static const ct_op ct__op_multinomial = {
    "aten::multinomial", "multinomial(Tensor self, SymInt num_samples, bool replacement=False, "
    "*, Generator? generator=None) -> Tensor", "ct_multinomial", CT_OP_RANDOM,
    CT_AUTOCAST_NONE, 0, 0u, NULL, NULL, CT__K_NONE, ct__multinomial_composite, NULL, NULL, 0u,
    NULL, NULL};
#undef CT__RANDOM
#undef CT__RANDOM_OPTS
#undef CT__K_INT64
#undef CT__K_FLOAT_H
#undef CT__K_NUMERIC_H
#undef CT__K_ALL_H

/* A call of an in-place random op on self with n float attributes a0, a1. */
static ct_tensor *ct__rng_inplace_call(const ct_op *op, const char *fn, ct_tensor *self, int n,
                                       double a0, double a1, ct_generator *g)
{
    const ct_tensor *in[1] = {self};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (n > 0) {
        ct__call_f(&c, a0);
    }
    if (n > 1) {
        ct__call_f(&c, a1);
    }
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_uniform_, "ct_uniform_", self, 2, from, to, g);
}

ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_normal_, "ct_normal_", self, 2, mean, std, g);
}

ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_bernoulli_, "ct_bernoulli_", self, 1, p, 0, g);
}

ct_tensor *ct_random_(ct_tensor *self, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_random_, "ct_random_", self, 0, 0, 0, g);
}

ct_tensor *ct_exponential_(ct_tensor *self, double lambd, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_exponential_, "ct_exponential_", self, 1, lambd, 0, g);
}

ct_tensor *ct_cauchy_(ct_tensor *self, double median, double sigma, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_cauchy_, "ct_cauchy_", self, 2, median, sigma, g);
}

ct_tensor *ct_log_normal_(ct_tensor *self, double mean, double std, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_log_normal_, "ct_log_normal_", self, 2, mean, std, g);
}

ct_tensor *ct_geometric_(ct_tensor *self, double p, ct_generator *g)
{
    return ct__rng_inplace_call(&ct__op_geometric_, "ct_geometric_", self, 1, p, 0, g);
}

ct_tensor *ct_normal(const ct_tensor *mean, const ct_tensor *std, ct_generator *g)
{
    const ct_tensor *in[2] = {mean, std};
    ct_op_call c;
    ct__call_init(&c, &ct__op_normal, "ct_normal", in, 2);
    c.generator = g;
    return ct__dispatch(&c);
}

/* A call of rand or randn over sizes. */
static ct_tensor *ct__rng_new_call(const ct_op *op, const char *fn, const int64_t *sizes,
                                   int ndim, ct_dtype dtype, ct_generator *g)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, NULL, 0);
    ct__call_ints(&c, sizes, ndim);
    ct__call_i(&c, dtype);
    c.generator = g;
    return ct__dispatch(&c);
}

/* A call of rand_like or randn_like over t. */
static ct_tensor *ct__rng_like_call(const ct_op *op, const char *fn, const ct_tensor *t,
                                    ct_generator *g)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_rand(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    return ct__rng_new_call(&ct__op_rand, "ct_rand", sizes, ndim, dtype, g);
}

ct_tensor *ct_randn(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g)
{
    return ct__rng_new_call(&ct__op_randn, "ct_randn", sizes, ndim, dtype, g);
}

ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g)
{
    return ct__rng_like_call(&ct__op_rand_like, "ct_rand_like", t, g);
}

ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g)
{
    return ct__rng_like_call(&ct__op_randn_like, "ct_randn_like", t, g);
}

ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim, ct_dtype dtype,
                      ct_generator *g)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_randint, "ct_randint", NULL, 0);
    ct__call_i(&c, low);
    ct__call_i(&c, high);
    ct__call_ints(&c, sizes, ndim);
    ct__call_i(&c, dtype == CT_DTYPE_DEFAULT ? CT_INT64 : dtype);
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_multinomial(const ct_tensor *input, int64_t num_samples, bool replacement,
                          ct_generator *g)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_multinomial, "ct_multinomial", in, 1);
    ct__call_i(&c, num_samples);
    ct__call_i(&c, replacement);
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_randint_like(const ct_tensor *t, int64_t low, int64_t high, ct_generator *g)
{
    if (ct__null("ct_randint_like", t)) {
        return NULL;
    }
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, &ct__op_randint_like, "ct_randint_like", in, 1);
    ct__call_i(&c, low);
    ct__call_i(&c, high);
    ct__call_ints(&c, t->sizes, t->ndim);
    ct__call_i(&c, t->dtype);
    c.generator = g;
    return ct__dispatch(&c);
}

ct_tensor *ct_randperm(int64_t n, ct_generator *g)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_randperm, "ct_randperm", NULL, 0);
    ct__call_i(&c, n);
    ct__call_i(&c, CT_INT64);
    c.generator = g;
    return ct__dispatch(&c);
}

#undef CT__MT_N
#undef CT__MT_M
#undef CT__DEFAULT_SEED
CT__GLUE_END
