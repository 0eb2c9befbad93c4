/* tests/test_kv_cache.c - the key/value cache of incremental decoding: a prompt then one
 * position at a time through the cache gives the outputs of causal attention over the whole
 * sequence (ct_scaled_dot_product_attention with is_causal), in float32 and float64; the
 * returned views hold exactly what was appended; reset; and the errors (overflow past
 * max_seq_len, shape and dtype mismatches, bad sizes), after which nothing was written.
 */
#include "test.h"

enum { KV_B = 2, KV_H = 3, KV_T = 9, KV_D = 8, KV_PROMPT = 4 };

/* (B, H, T, D) values 0.5 sin(0.37 i + 1.1 k) + 0.25 cos(0.11 i), float64 converted to dt. */
static ct_tensor *kv_values(int k, ct_dtype dt)
{
    int64_t s[4] = {KV_B, KV_H, KV_T, KV_D}, n = KV_B * KV_H * KV_T * KV_D;
    double v[KV_B * KV_H * KV_T * KV_D];
    for (int64_t i = 0; i < n; i++) {
        v[i] = 0.5 * sin(0.37 * (double)i + 1.1 * k) + 0.25 * cos(0.11 * (double)i);
    }
    return ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, s, 4), dt);
}

/* Causal attention over all T positions at once, and through the cache: the prompt (is_causal:
   its queries and keys are the same positions), then each later position alone (no mask: it
   attends every cached key). The outputs agree within tol; the cache's views equal the
   appended keys and values exactly. */
static void kv_incremental_equals_full(ct_dtype dt, double tol)
{
    ct_scope_begin();
    ct_tensor *q = kv_values(0, dt), *k = kv_values(1, dt), *v = kv_values(2, dt);
    ct_scaled_dot_product_attention_opts causal = ct_scaled_dot_product_attention_defaults();
    causal.is_causal = true;
    ct_tensor *full = ct_scaled_dot_product_attention(q, k, v, NULL, &causal);
    ct_kv_cache *c = ct_kv_cache_new(KV_B, KV_T, KV_H, KV_D, dt);
    ct_tensor *parts[KV_T], *ko = NULL, *vo = NULL;
    int n = 0;
    for (int64_t pos = 0; pos < KV_T; pos += pos ? 1 : KV_PROMPT) {
        int64_t len = pos ? 1 : KV_PROMPT;
        CHECK(ct_kv_cache_update(c, ct_narrow(k, 2, pos, len), ct_narrow(v, 2, pos, len), &ko,
                                 &vo) == CT_OK);
        CHECK(ct_kv_cache_size(c) == pos + len && ct_size(ko, 2) == pos + len);
        parts[n++] = ct_scaled_dot_product_attention(ct_narrow(q, 2, pos, len), ko, vo, NULL,
                                                     pos ? NULL : &causal);
    }
    ct_tensor *inc = ct_cat((const ct_tensor *const *)parts, n, 2);
    CHECK(ct_item(ct_max(ct_abs(ct_sub(inc, full)))) <= tol);
    CHECK(ct_equal(ko, k) && ct_equal(vo, v));
    ct_kv_cache_reset(c);
    CHECK(ct_kv_cache_size(c) == 0);
    CHECK(ct_kv_cache_update(c, ct_narrow(k, 2, 0, 2), ct_narrow(v, 2, 0, 2), &ko, &vo) == CT_OK);
    CHECK(ct_equal(ko, ct_narrow(k, 2, 0, 2)) && ct_size(vo, 2) == 2);
    CHECK(!ct_error());
    ct_kv_cache_free(c);
    ct_scope_end();
}

static void kv_cache_incremental_float32(void)
{
    kv_incremental_equals_full(CT_FLOAT32, 1e-6);
}

static void kv_cache_incremental_float64(void)
{
    kv_incremental_equals_full(CT_FLOAT64, 1e-14);
}

/* Errors leave the cache as it was. */
static void kv_cache_errors(void)
{
    ct_scope_begin();
    ct_kv_cache *c = ct_kv_cache_new(KV_B, 4, KV_H, KV_D, CT_FLOAT32);
    ct_tensor *k = ct_narrow(kv_values(1, CT_FLOAT32), 2, 0, 3), *ko = NULL, *vo = NULL;
    CHECK(ct_kv_cache_update(c, k, k, &ko, &vo) == CT_OK);
    CHECK(ct_kv_cache_update(c, k, k, &ko, &vo) == CT_ERR_VALUE && !ko && !vo);
    CHECK_ERROR(CT_ERR_VALUE, "ct_kv_cache_update: cannot add 3 positions to a cache holding 3 "
                              "of max_seq_len 4");
    int64_t bad[4] = {KV_B, KV_H - 1, 1, KV_D};
    CHECK(ct_kv_cache_update(c, ct_zeros(bad, 4, CT_FLOAT32), k, &ko, &vo) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "expected k_val of shape [2, 3, S, 8], got [2, 2, 1, 8]");
    CHECK(ct_kv_cache_update(c, ct_narrow(k, 2, 0, 1), k, &ko, &vo) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "expected v_val of shape [2, 3, S of k_val, 8], got [2, 3, 3, 8]");
    CHECK(ct_kv_cache_update(c, ct_flatten(k, 0, -1), k, &ko, &vo) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "got [144]");
    CHECK(ct_kv_cache_update(c, ct_narrow(k, 2, 0, 0), k, &ko, &vo) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "got [2, 3, 0, 8]");
    ct_tensor *k1 = ct_narrow(k, 2, 0, 1);
    CHECK(ct_kv_cache_update(c, k1, ct_to_dtype(k1, CT_FLOAT64), &ko, &vo) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "expected v_val of dtype float32, got float64");
    CHECK(ct_kv_cache_size(c) == 3);
    CHECK(ct_kv_cache_update(c, k1, k1, &ko, &vo) == CT_OK && ct_size(ko, 2) == 4);
    CHECK(ct_kv_cache_update(c, NULL, k1, &ko, &vo) == CT_ERR_NULL_ARG);
    ct_error_clear();
    CHECK(ct_kv_cache_size(NULL) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_kv_cache_size");
    ct_kv_cache_free(c);
    CHECK(!ct_kv_cache_new(1, 0, 1, 1, CT_FLOAT32));
    CHECK_ERROR(CT_ERR_VALUE, "sizes must be positive, got batch_size=1, max_seq_len=0");
    CHECK(!ct_kv_cache_new(1, 1, 1, 1, CT_INT64));
    CHECK_ERROR(CT_ERR_DTYPE, "expected a floating point dtype, got int64");
    ct_kv_cache_free(NULL);
    ct_scope_end();
}

void test_kv_cache(void)
{
    RUN(kv_cache_incremental_float32);
    RUN(kv_cache_incremental_float64);
    RUN(kv_cache_errors);
}
