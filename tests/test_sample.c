/* tests/test_sample.c - sampling as language models do it, against PyTorch (tools/
 * gen_golden_sample.py, tests/golden/sample_golden.h): ct_multinomial's draws bit for bit for the
 * same seed (1-D and 2-D, unnormalized weights with zeros, transposed and step-sliced, float32,
 * float64 and float16, with and without replacement, one sample to all categories, ties among zero
 * weights in PyTorch's topk order), its errors in PyTorch's words, and top-k sampling composed of
 * public ops (temperature, topk, mask or gather, softmax, multinomial) giving PyTorch's 200
 * tokens; thread invariance.
 */
#include "test.h"

#include <stdint.h>

#include "golden/sample_golden.h"

static ct_dtype sample_dtype(int bits)
{
    return bits == 64 ? CT_FLOAT64 : bits == 16 ? CT_FLOAT16 : CT_FLOAT32;
}

/* The case's weights: (rows, cats) or (cats,); layout 1: the transpose of a (cats, rows)
   base, 2: every second column of a (rows, 2 * cats) base. */
static ct_tensor *mn_input(const mn_golden *c)
{
    int64_t rows = c->rows ? c->rows : 1, nd = c->rows ? 2 : 1;
    int64_t s[2] = {c->layout == 1 ? c->cats : rows,
                    c->layout == 1 ? rows : c->cats * (c->layout == 2 ? 2 : 1)};
    ct_tensor *base = ct_tensor_from_data(c->base, CT_FLOAT64, c->rows ? s : s + 1, (int)nd);
    base = ct_to_dtype(base, sample_dtype(c->bits));
    if (c->layout == 2) {
        return ct_slice(base, -1, 0, 2 * c->cats, 2);
    }
    return c->layout == 1 ? ct_t(base) : base;
}

static void test_sample_multinomial_golden(void)
{
    int n = (int)(sizeof mn_cases / sizeof mn_cases[0]);
    for (int i = 0; i < n; i++) {
        const mn_golden *c = &mn_cases[i];
        ct_scope_begin();
        ct_tensor *p = mn_input(c);
        ct_manual_seed(c->seed);
        ct_tensor *r = ct_multinomial(p, c->samples, c->repl != 0, NULL);
        int64_t rows = c->rows ? c->rows : 1, s[2] = {rows, c->samples};
        CHECK_MSG(r && ct_tensor_dtype(r) == CT_INT64 &&
                      ct_test_has_shape(r, c->rows ? s : s + 1, c->rows ? 2 : 1),
                  "multinomial case %d: %s", i, ct_error() ? ct_error() : "shape");
        if (r) {
            const int64_t *got = (const int64_t *)ct_data_ptr(ct_contiguous(r));
            for (int64_t k = 0; k < rows * c->samples; k++) {
                CHECK_MSG(got[k] == c->out[k], "multinomial case %d (seed %lld): index %lld is "
                          "%lld, PyTorch draws %lld", i, (long long)c->seed, (long long)k,
                          (long long)got[k], (long long)c->out[k]);
            }
        }
        ct_scope_end();
    }
}

/* PyTorch's checks: the fast path (without replacement or one sample) checks min/max and the
   row sums first; the kernel with replacement checks each entry (NaN fails "< 0" first). */
static void test_sample_multinomial_errors(void)
{
    ct_scope_begin();
    double inf[2] = {1, INFINITY}, nan[2] = {1, NAN}, neg[2] = {1, -1};
    double rows[4] = {1, 1, 0, 0};
    int64_t two = 2, s22[2] = {2, 2}, s03[2] = {0, 3}, s20[2] = {2, 0};
    ct_tensor *pinf = ct_to_dtype(ct_tensor_from_data(inf, CT_FLOAT64, &two, 1), CT_FLOAT32);
    ct_tensor *pnan = ct_tensor_from_data(nan, CT_FLOAT64, &two, 1);
    ct_tensor *pneg = ct_to_dtype(ct_tensor_from_data(neg, CT_FLOAT64, &two, 1), CT_FLOAT32);
    ct_tensor *pzero_row = ct_to_dtype(ct_tensor_from_data(rows, CT_FLOAT64, s22, 2),
                                       CT_FLOAT32);
    const char *fast = "probability tensor contains either `inf`, `nan` or element < 0";
    const char *sum = "invalid multinomial distribution (sum of probabilities <= 0)";
    CHECK(ct_multinomial(pinf, 1, false, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, fast);
    CHECK(ct_multinomial(pnan, 1, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, fast);
    CHECK(ct_multinomial(pinf, 2, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid multinomial distribution (encountering probability entry "
                              "= infinity or NaN)");
    CHECK(ct_multinomial(pnan, 2, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid multinomial distribution (encountering probability entry "
                              "< 0)");
    CHECK(ct_multinomial(pneg, 2, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid multinomial distribution (encountering probability entry "
                              "< 0)");
    CHECK(ct_multinomial(pneg, 2, false, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, fast);
    CHECK(ct_multinomial(pzero_row, 2, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, sum);
    CHECK(ct_multinomial(pzero_row, 1, false, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, sum);
    CHECK(ct_multinomial(ct_zeros(s20, 2, CT_FLOAT32), 2, true, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, sum);
    CHECK(ct_multinomial(pzero_row, 3, false, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "cannot sample n_sample > prob_dist.size(-1) samples without "
                              "replacement");
    /* no rows: an empty (0, n) result, as PyTorch */
    ct_tensor *e = ct_multinomial(ct_zeros(s03, 2, CT_FLOAT32), 2, true, NULL);
    int64_t s02[2] = {0, 2};
    CHECK(e && ct_test_has_shape(e, s02, 2) && ct_tensor_dtype(e) == CT_INT64);
    ct_scope_end();
}

/* One step of nanoGPT's top-k sampling over logits (batch, V): logits / temperature, the
   top_k largest kept (mask: the rest set to -inf before the softmax over V; gather: the
   softmax over the k values, then the drawn position's vocabulary index). (batch, 1) int64. */
static ct_tensor *sample_top_k(const ct_tensor *logits, double temperature, int64_t top_k,
                               bool gather)
{
    ct_tensor *scaled = ct_div_scalar(logits, temperature), *v = NULL, *ix = NULL;
    if (ct_topk(scaled, top_k, -1, true, true, &v, &ix) != CT_OK) {
        return NULL;
    }
    if (gather) {
        ct_tensor *j = ct_multinomial(ct_softmax(v, -1), 1, false, NULL);
        return ct_gather(ix, -1, j);
    }
    ct_tensor *kth = ct_narrow(v, -1, top_k - 1, 1);
    ct_tensor *masked = ct_masked_fill(scaled, ct_lt(scaled, kth), -INFINITY);
    return ct_multinomial(ct_softmax(masked, -1), 1, false, NULL);
}

/* SAMPLE_STEPS tokens for each of c's sequences (row b starts at token b; each step reads the
   bigram table's row of the previous token), (batch, steps) int64, kept. */
static ct_tensor *sample_sequence(const sample_golden *c)
{
    int64_t vs[2] = {SAMPLE_V, SAMPLE_V}, os[2] = {c->batch, SAMPLE_STEPS};
    ct_tensor *out = ct_empty(os, 2, CT_INT64);
    int64_t *o = (int64_t *)ct_data_ptr(out);
    ct_scope_begin();
    ct_tensor *table = ct_tensor_from_data(sample_table, CT_FLOAT32, vs, 2);
    ct_tensor *tok = ct_unsqueeze(ct_arange(0, (double)c->batch, 1, CT_INT64), 1);
    ct_manual_seed(c->seed);
    for (int64_t step = 0; step < SAMPLE_STEPS && tok; step++) {
        ct_scope_begin();
        ct_tensor *logits = ct_index_select(table, 0, ct_select(tok, 1, 0));
        ct_tensor *next = ct_keep(sample_top_k(logits, c->temperature, c->top_k, c->gather));
        ct_scope_end();
        tok = next;
        for (int64_t b = 0; tok && b < c->batch; b++) {
            o[b * SAMPLE_STEPS + step] = ((const int64_t *)ct_data_ptr(tok))[b];
        }
    }
    ct_scope_end();
    return tok ? out : NULL;
}

static void test_sample_top_k_golden(void)
{
    for (size_t i = 0; i < sizeof sample_cases / sizeof sample_cases[0]; i++) {
        const sample_golden *c = &sample_cases[i];
        ct_scope_begin();
        ct_tensor *out = sample_sequence(c);
        CHECK_MSG(out, "top-k %s: %s", c->name, ct_error() ? ct_error() : "");
        const int64_t *got = out ? (const int64_t *)ct_data_ptr(out) : NULL;
        int64_t n = c->batch * SAMPLE_STEPS, first = -1;
        for (int64_t k = 0; got && k < n && first < 0; k++) {
            first = got[k] != c->tokens[k] ? k : -1;
        }
        CHECK_MSG(first < 0, "top-k %s: token %lld is %lld, PyTorch draws %lld", c->name,
                  (long long)first, first >= 0 ? (long long)got[first] : 0LL,
                  first >= 0 ? (long long)c->tokens[first] : 0LL);
        ct_scope_end();
    }
}

static void sample_compute(ct_tensor **out)
{
    out[0] = ct_keep(sample_sequence(&sample_cases[1]));
    ct_manual_seed(5);
    int64_t s[2] = {64, 300};
    ct_tensor *p = ct_rand(s, 2, CT_FLOAT64, NULL);
    out[1] = ct_keep(ct_multinomial(p, 40, true, NULL));
    out[2] = ct_keep(ct_multinomial(p, 40, false, NULL));
}

static void test_sample_thread_invariant(void)
{
    CHECK_THREAD_INVARIANT(sample_compute, 3);
}

void test_sample(void)
{
    RUN(test_sample_multinomial_golden);
    RUN(test_sample_multinomial_errors);
    RUN(test_sample_top_k_golden);
    RUN(test_sample_thread_invariant);
}
