/* tests/test_minilm.c - the in-suite version of tools/cross_check_minilm.py, without the
 * 90 MB model: examples/minilm_embed.c's tokenizer and encoder (this file includes the example
 * with MINILM_EMBED_NO_MAIN, which leaves out its command line) against HuggingFace's, from
 * the fixtures of tools/gen_golden_minilm.py: a small vocabulary (tests/golden/minilm/
 * vocab.txt) and a tiny randomly initialized BertModel (2 layers, hidden 32, 4 heads, 40
 * positions: config.json and model.safetensors there). Checked: the token ids of 32 sentences
 * (accents, CJK, Hangul, kana, Greek, Cyrillic, Unicode punctuation, control characters, an
 * invalid UTF-8 byte, words over 100 characters, truncation at 40 tokens) against
 * BertTokenizerFast's; the mean-pooled, normalized embeddings against PyTorch's within 1e-5,
 * padded with an attention mask at batch 8 (the golden run's layout) and packed at batch 8, 5
 * and 1; the same bytes at 1 and 4 threads; a model directory that cannot be read.
 */
#include "test.h"

#define MINILM_EMBED_NO_MAIN
#include "../examples/minilm_embed.c"

#include "golden/minilm_golden.h"

#define MINILM_DIR "golden/minilm"

/* The first index where a[0..na) and b[0..nb) differ (min(na, nb) when one is a prefix). */
static int64_t first_difference(const int64_t *a, int64_t na, const int64_t *b, int64_t nb)
{
    int64_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) {
        i++;
    }
    return i;
}

static void test_minilm_tokenizer(void)
{
    minilm_model m;
    char why[256];
    int64_t ids[64];
    CHECK_MSG(minilm_model_load(&m, MINILM_DIR, why), "%s", why);
    CHECK(m.max_tokens == 40); /* min(256, max_position_embeddings) */
    for (int s = 0; m.layer && s < MINILM_N; s++) {
        const int64_t *want = minilm_golden_ids + minilm_golden_offset[s];
        int64_t n = minilm_golden_offset[s + 1] - minilm_golden_offset[s];
        const char *text = minilm_golden_sentences[s];
        int64_t got = minilm_tokenize(&m.vocab, text, strlen(text), ids, m.max_tokens);
        int64_t at = first_difference(ids, got, want, n);
        CHECK_MSG(got == n && at == n, "sentence %d: %lld ids, HuggingFace's %lld, first "
                  "difference at %lld", s, (long long)got, (long long)n, (long long)at);
    }
    minilm_model_free(&m);
}

/* The embeddings of every sentence: padded with a mask at batch 8 (the golden run's layout)
   and packed at batch 8, 5 and 1. */
static void test_minilm_embeddings(void)
{
    minilm_model m;
    char why[256];
    double want[MINILM_N * MINILM_DIM];
    int64_t ntok[MINILM_N];
    CHECK_MSG(minilm_model_load(&m, MINILM_DIR, why), "%s", why);
    for (int i = 0; i < MINILM_N * MINILM_DIM; i++) {
        want[i] = minilm_golden_embeddings[i];
    }
    const int64_t batches[4] = {8, 8, 5, 1};
    for (int k = 0; m.layer && k < 4; k++) {
        ct_tensor *e = minilm_embed(&m, minilm_golden_sentences, MINILM_N, batches[k], k == 0,
                                    ntok);
        CHECK_MSG(e && ct_size(e, 0) == MINILM_N && ct_size(e, 1) == MINILM_DIM, "batch %lld",
                  (long long)batches[k]);
        CHECK_TENSOR(e, want, MINILM_N * MINILM_DIM, 0, 1e-5);
        ct_free(e);
    }
    CHECK(ntok[0] == minilm_golden_offset[1]);
    minilm_model_free(&m);
}

static void minilm_threads(ct_tensor **out)
{
    minilm_model m;
    char why[256];
    out[0] = minilm_model_load(&m, MINILM_DIR, why) ?
             minilm_embed(&m, minilm_golden_sentences, MINILM_N, 8, false, NULL) : NULL;
    out[0] = out[0] ? ct_keep(out[0]) : NULL;
    minilm_model_free(&m);
}

static void test_minilm_errors(void)
{
    minilm_model m;
    char why[256];
    CHECK(!minilm_model_load(&m, "golden/no-such-model", why));
    CHECK_MSG(strstr(why, "cannot read golden/no-such-model/config.json"), "%s", why);
    CHECK(m.layer == NULL && m.sd == NULL);
    CHECK_THREAD_INVARIANT(minilm_threads, 1);
}

void test_minilm(void)
{
    RUN(test_minilm_tokenizer);
    RUN(test_minilm_embeddings);
    RUN(test_minilm_errors);
}
