/* ops/iter.c - the shared strided iterator (PyTorch's TensorIterator idea) and the
 * dtype-converting copy kernel.
 *
 * Legend: nops operands (0 = output), ndim collapsed dims, strides in bytes.
 * Determinism: elementwise results do not depend on the thread count or the chunking.
 */
#include "../core/internal.h"

CT__VECTORIZE_BEGIN

bool ct__broadcast_shapes(const char *op, const int64_t *a, int na, const int64_t *b, int nb,
                          int64_t *out, int *nout)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            ct__fail(CT_ERR_SHAPE, op, "The size of tensor a (%lld) must match the size of "
                     "tensor b (%lld) at non-singleton dimension %d", (long long)sa,
                     (long long)sb, i);
            return false;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return true;
}

void ct__iter_build(ct__iter *it, ct_tensor *out, const ct_tensor *const *inputs, int n_inputs)
{
    const ct_tensor *ops[CT__ITER_MAX_OPS];
    ops[0] = out;
    for (int k = 0; k < n_inputs; k++) {
        ops[k + 1] = inputs[k];
    }
    it->nops = n_inputs + 1;
    /* right-align every operand to out's shape; broadcast dims get stride 0 */
    int nd = 0;
    for (int d = 0; d < out->ndim; d++) {
        if (out->sizes[d] == 1) {
            continue; /* size-1 dims never advance */
        }
        it->sizes[nd] = out->sizes[d];
        for (int k = 0; k < it->nops; k++) {
            const ct_tensor *t = ops[k];
            int td = d - (out->ndim - t->ndim);
            bool bcast = td < 0 || t->sizes[td] == 1;
            it->strides[k][nd] = bcast ? 0 : t->strides[td] * (int64_t)ct_dtype_size(t->dtype);
        }
        nd++;
    }
    for (int k = 0; k < it->nops; k++) {
        it->data[k] = ct__data(ops[k]);
    }
    /* collapse d-1 into d when every operand steps contiguously across the pair */
    int w = 0;
    for (int d = 0; d < nd; d++) {
        if (w > 0) {
            bool merge = true;
            for (int k = 0; k < it->nops && merge; k++) {
                merge = it->strides[k][w - 1] == it->strides[k][d] * it->sizes[d];
            }
            if (merge) {
                it->sizes[w - 1] *= it->sizes[d];
                for (int k = 0; k < it->nops; k++) {
                    it->strides[k][w - 1] = it->strides[k][d];
                }
                continue;
            }
        }
        it->sizes[w] = it->sizes[d];
        for (int k = 0; k < it->nops; k++) {
            it->strides[k][w] = it->strides[k][d];
        }
        w++;
    }
    if (w == 0) { /* a single element */
        it->sizes[0] = ct_numel(out) ? 1 : 0;
        for (int k = 0; k < it->nops; k++) {
            it->strides[k][0] = 0;
        }
        w = 1;
    }
    if (ct_numel(out) == 0) {
        it->sizes[0] = 0;
    }
    it->ndim = w;
}

typedef struct ct__iter_job {
    const ct__iter *it;
    ct__loop_fn loop;
    const void *params;
} ct__iter_job;

/* Runs the elements [begin, end) of the flattened iteration space. */
static void ct__iter_chunk(int64_t begin, int64_t end, void *ctx)
{
    const ct__iter_job *job = (const ct__iter_job *)ctx;
    const ct__iter *it = job->it;
    int nd = it->ndim, inner = nd - 1;
    int64_t idx[CT_MAX_DIMS];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % it->sizes[d];
        rem /= it->sizes[d];
    }
    int64_t inner_strides[CT__ITER_MAX_OPS];
    for (int k = 0; k < it->nops; k++) {
        inner_strides[k] = it->strides[k][inner];
    }
    int64_t pos = begin;
    while (pos < end) {
        char *ptrs[CT__ITER_MAX_OPS];
        for (int k = 0; k < it->nops; k++) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++) {
                off += idx[d] * it->strides[k][d];
            }
            ptrs[k] = it->data[k] + off;
        }
        int64_t n = it->sizes[inner] - idx[inner];
        if (n > end - pos) {
            n = end - pos;
        }
        job->loop(ptrs, inner_strides, n, job->params);
        pos += n;
        idx[inner] += n;
        for (int d = inner; d > 0 && idx[d] >= it->sizes[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

void ct__iter_run(const ct__iter *it, ct__loop_fn loop, const void *params)
{
    int64_t total = 1;
    for (int d = 0; d < it->ndim; d++) {
        total *= it->sizes[d];
    }
    ct__iter_job job = {it, loop, params};
    ct__parallel_for(total, CT__GRAIN, ct__iter_chunk, &job);
}

/* ---- copy with conversion: one loop per (dst, src) dtype pair ------------------------ */
/* ct__cvt_<dst>_<src>(x): one element converted. Integer and bool sources and float
   destinations convert as C does (integers narrow modulo 2^bits, as in PyTorch); float
   sources into integer types go through ct__f32/f64_to_i32/i64 (internal.h), so NaN,
   infinities and out-of-range values give PyTorch's x86-64 results instead of undefined
   behaviour; into bool they test != 0 (NaN is true). */
#define CT__CVT_PLAIN(DT, DS, ST, SS)                                                      \
    static inline DT ct__cvt_##DS##_##SS(ST x) { return (DT)x; }
#define CT__CVT_FROM_INT(ST, SS)                                                           \
    CT__CVT_PLAIN(bool, b8, ST, SS)                                                         \
    CT__CVT_PLAIN(uint8_t, u8, ST, SS)                                                      \
    CT__CVT_PLAIN(int8_t, i8, ST, SS)                                                       \
    CT__CVT_PLAIN(int16_t, i16, ST, SS)                                                     \
    CT__CVT_PLAIN(int32_t, i32, ST, SS)                                                     \
    CT__CVT_PLAIN(int64_t, i64, ST, SS)                                                     \
    CT__CVT_PLAIN(float, f32, ST, SS)                                                       \
    CT__CVT_PLAIN(double, f64, ST, SS)
CT__CVT_FROM_INT(bool, b8)
CT__CVT_FROM_INT(uint8_t, u8)
CT__CVT_FROM_INT(int8_t, i8)
CT__CVT_FROM_INT(int16_t, i16)
CT__CVT_FROM_INT(int32_t, i32)
CT__CVT_FROM_INT(int64_t, i64)
/* WIDE: the integer type uint8 goes through (int32 from float32, int64 from float64) */
#define CT__CVT_FROM_FLOAT(ST, SS, WIDE)                                                   \
    static inline bool ct__cvt_b8_##SS(ST x) { return x != 0; }                            \
    static inline uint8_t ct__cvt_u8_##SS(ST x) { return (uint8_t)ct__##SS##_to_##WIDE(x); } \
    static inline int8_t ct__cvt_i8_##SS(ST x) { return (int8_t)ct__##SS##_to_i32(x); }    \
    static inline int16_t ct__cvt_i16_##SS(ST x) { return (int16_t)ct__##SS##_to_i32(x); } \
    static inline int32_t ct__cvt_i32_##SS(ST x) { return ct__##SS##_to_i32(x); }          \
    static inline int64_t ct__cvt_i64_##SS(ST x) { return ct__##SS##_to_i64(x); }          \
    CT__CVT_PLAIN(float, f32, ST, SS)                                                       \
    CT__CVT_PLAIN(double, f64, ST, SS)
CT__CVT_FROM_FLOAT(float, f32, i32)
CT__CVT_FROM_FLOAT(double, f64, i64)

#define CT__COPY_LOOP(DE, DT, DS, SE, ST, SS)                                              \
    static void ct__copy_##DS##_##SS(char **d, const int64_t *s, int64_t n, const void *p)  \
    {                                                                                       \
        (void)p;                                                                            \
        int64_t i = 0;                                                                      \
        if (s[0] == sizeof(DT) && s[1] == sizeof(ST)) {                                     \
            DT *o = (DT *)d[0];                                                             \
            const ST *a = (const ST *)d[1];                                                 \
            for (const int64_t nb = CT__WHOLE_BLOCKS(n); i < nb; i++) {                     \
                o[i] = ct__cvt_##DS##_##SS(a[i]);                                           \
            }                                                                               \
        }                                                                                   \
        for (; i < n; i++) {                                                                \
            *(DT *)(d[0] + i * s[0]) = ct__cvt_##DS##_##SS(*(const ST *)(d[1] + i * s[1])); \
        }                                                                                   \
    }
#define CT__COPY_FROM(SE, ST, SS)                                                          \
    CT__COPY_LOOP(CT_BOOL, bool, b8, SE, ST, SS)                                            \
    CT__COPY_LOOP(CT_UINT8, uint8_t, u8, SE, ST, SS)                                        \
    CT__COPY_LOOP(CT_INT8, int8_t, i8, SE, ST, SS)                                          \
    CT__COPY_LOOP(CT_INT16, int16_t, i16, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_INT32, int32_t, i32, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_INT64, int64_t, i64, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_FLOAT32, float, f32, SE, ST, SS)                                       \
    CT__COPY_LOOP(CT_FLOAT64, double, f64, SE, ST, SS)
CT__FOR_ALL_DTYPES(CT__COPY_FROM)

static ct__loop_fn ct__copy_loop(ct_dtype dst, ct_dtype src)
{
    switch (dst) {
#define CT__CASE_DST(DE, DT, DSX)                                                          \
    case DE:                                                                                \
        switch (src) {                                                                      \
        CT__COPY_CASES_##DSX                                                                \
        default: return NULL;                                                               \
        }
#define CT__COPY_CASES(DSX)                                                                \
        case CT_BOOL: return ct__copy_##DSX##_b8;                                           \
        case CT_UINT8: return ct__copy_##DSX##_u8;                                          \
        case CT_INT8: return ct__copy_##DSX##_i8;                                           \
        case CT_INT16: return ct__copy_##DSX##_i16;                                         \
        case CT_INT32: return ct__copy_##DSX##_i32;                                         \
        case CT_INT64: return ct__copy_##DSX##_i64;                                         \
        case CT_FLOAT32: return ct__copy_##DSX##_f32;                                       \
        case CT_FLOAT64: return ct__copy_##DSX##_f64;
#define CT__COPY_CASES_b8 CT__COPY_CASES(b8)
#define CT__COPY_CASES_u8 CT__COPY_CASES(u8)
#define CT__COPY_CASES_i8 CT__COPY_CASES(i8)
#define CT__COPY_CASES_i16 CT__COPY_CASES(i16)
#define CT__COPY_CASES_i32 CT__COPY_CASES(i32)
#define CT__COPY_CASES_i64 CT__COPY_CASES(i64)
#define CT__COPY_CASES_f32 CT__COPY_CASES(f32)
#define CT__COPY_CASES_f64 CT__COPY_CASES(f64)
        CT__FOR_ALL_DTYPES(CT__CASE_DST)
    default: return NULL;
    }
#undef CT__CASE_DST
#undef CT__COPY_CASES
#undef CT__COPY_CASES_b8
#undef CT__COPY_CASES_u8
#undef CT__COPY_CASES_i8
#undef CT__COPY_CASES_i16
#undef CT__COPY_CASES_i32
#undef CT__COPY_CASES_i64
#undef CT__COPY_CASES_f32
#undef CT__COPY_CASES_f64
}

/* float16/bfloat16 copies go through float32 in blocks: the source into float32 (the bulk
   half conversion, or the float32 copy loop of the source dtype), then float32 into the
   destination; contiguous float32 ends are converted in place, without the block. As in
   PyTorch, float64 and integers reach a half dtype through float32. */
typedef struct ct__half_copy {
    ct_dtype dst, src;
    ct__loop_fn to_f32, from_f32; /* src -> float32, float32 -> dst (non-half ends) */
} ct__half_copy;

static void ct__copy_half(char **d, const int64_t *s, int64_t n, const void *params)
{
    const ct__half_copy *h = (const ct__half_copy *)params;
    float block[CT__HALF_BLOCK];
    for (int64_t i = 0; i < n; i += CT__HALF_BLOCK) {
        int64_t m = n - i < CT__HALF_BLOCK ? n - i : CT__HALF_BLOCK;
        char *dst = d[0] + i * s[0], *src = d[1] + i * s[1];
        bool direct_in = h->src == CT_FLOAT32 && s[1] == 4, direct_out = h->dst == CT_FLOAT32 &&
                                                                          s[0] == 4;
        float *f = direct_in ? (float *)(void *)src : direct_out ? (float *)(void *)dst : block;
        if (ct__is_half(h->src)) {
            ct__half_to_float_n(h->src, src, s[1], f, m);
        } else if (!direct_in) {
            char *p[2] = {(char *)f, src};
            int64_t st[2] = {4, s[1]};
            h->to_f32(p, st, m, NULL);
        }
        if (ct__is_half(h->dst)) {
            ct__float_to_half_n(h->dst, f, dst, s[0], m);
        } else if (!direct_out) {
            char *p[2] = {dst, (char *)f};
            int64_t st[2] = {s[0], 4};
            h->from_f32(p, st, m, NULL);
        }
    }
}

void ct__copy_kernel(ct_tensor *dst, const ct_tensor *src)
{
    ct__iter it;
    ct__iter_build(&it, dst, &src, 1);
    ct_dtype dt = dst->dtype, st = src->dtype;
    if (dt == st && ct__is_half(dt)) {
        ct__iter_run(&it, ct__copy_i16_i16, NULL); /* the same bits */
    } else if (ct__is_half(dt) || ct__is_half(st)) {
        ct__half_copy h = {dt, st, ct__copy_loop(CT_FLOAT32, st), ct__copy_loop(dt, CT_FLOAT32)};
        ct__iter_run(&it, ct__copy_half, &h);
    } else {
        ct__iter_run(&it, ct__copy_loop(dt, st), NULL);
    }
}

#undef CT__COPY_LOOP
#undef CT__COPY_FROM
#undef CT__CVT_PLAIN
#undef CT__CVT_FROM_INT
#undef CT__CVT_FROM_FLOAT

CT__VECTORIZE_END
