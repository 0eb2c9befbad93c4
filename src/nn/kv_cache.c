/* nn/kv_cache.c - the key/value cache of incremental decoding: two buffers (B, H, T, D) and a
 * fill count; updates are ctorch copies into narrowed views under no_grad. */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"
#include "../ops/creation.h"
#include "../autograd/autograd.h"
#include "kv_cache.h"

#include <string.h>

CT__GLUE_BEGIN

struct ct_kv_cache {
    ct_tensor *k, *v; /* (B, H, T, D), retained by the cache */
    int64_t size;     /* positions filled */
};

ct_kv_cache *ct_kv_cache_new(int64_t batch_size, int64_t max_seq_len, int64_t num_kv_heads,
                             int64_t head_dim, ct_dtype dtype)
{
    const char *op = "ct_kv_cache_new";
    int64_t sizes[4] = {batch_size, num_kv_heads, max_seq_len, head_dim};
    if (batch_size < 1 || max_seq_len < 1 || num_kv_heads < 1 || head_dim < 1) {
        ct__fail(CT_ERR_VALUE, op, "sizes must be positive, got batch_size=%lld, max_seq_len="
                 "%lld, num_kv_heads=%lld, head_dim=%lld", (long long)batch_size,
                 (long long)max_seq_len, (long long)num_kv_heads, (long long)head_dim);
        return NULL;
    }
    if (!ct_dtype_is_floating_point(dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "expected a floating point dtype, got %s",
                 ct_dtype_name(dtype));
        return NULL;
    }
    ct_kv_cache *c = (ct_kv_cache *)ct__malloc(sizeof *c);
    if (!c) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_scope_begin();
    c->k = ct_retain(ct_zeros(sizes, 4, dtype));
    c->v = ct_retain(ct_zeros(sizes, 4, dtype));
    c->size = 0;
    ct_scope_end();
    if (!c->k || !c->v) {
        ct_kv_cache_free(c);
        return NULL;
    }
    return c;
}

/* Checks that val (k_val or v_val, named name) is (B, H, S, D) of the cache's dtype with the
   same S as *s (set from the first one checked, *s < 0). */
static bool ct__kv_check(const ct_kv_cache *c, const ct_tensor *val, const char *name,
                         int64_t *s)
{
    const char *op = "ct_kv_cache_update";
    const int64_t *cs = ct_sizes(c->k);
    int64_t seq = ct_dim(val) == 4 ? ct_sizes(val)[2] : -1;
    int64_t want[4] = {cs[0], cs[1], *s < 0 ? seq : *s, cs[3]};
    char got[96], exp[96];
    if (ct_dim(val) != 4 || memcmp(ct_sizes(val), want, sizeof want) || want[2] < 1) {
        snprintf(exp, sizeof exp, "[%lld, %lld, %s, %lld]", (long long)cs[0], (long long)cs[1],
                 *s < 0 ? "S" : "S of k_val", (long long)cs[3]);
        ct__fail(CT_ERR_SHAPE, op, "expected %s of shape %s, got %s", name, exp,
                 ct__shape_str(ct_sizes(val), ct_dim(val), got, sizeof got));
        return false;
    }
    if (ct_tensor_dtype(val) != ct_tensor_dtype(c->k)) {
        ct__fail(CT_ERR_DTYPE, op, "expected %s of dtype %s, got %s", name,
                 ct_dtype_name(ct_tensor_dtype(c->k)), ct_dtype_name(ct_tensor_dtype(val)));
        return false;
    }
    *s = want[2];
    return true;
}

ct_status ct_kv_cache_update(ct_kv_cache *cache, const ct_tensor *k_val, const ct_tensor *v_val,
                             ct_tensor **k_out, ct_tensor **v_out)
{
    const char *op = "ct_kv_cache_update";
    if (k_out) {
        *k_out = NULL;
    }
    if (v_out) {
        *v_out = NULL;
    }
    if (ct__null(op, cache) || ct__null(op, k_val) || ct__null(op, v_val) ||
        ct__null(op, k_out) || ct__null(op, v_out)) {
        return ct_error_code();
    }
    int64_t s = -1, max_seq_len = ct_size(cache->k, 2);
    if (!ct__kv_check(cache, k_val, "k_val", &s) || !ct__kv_check(cache, v_val, "v_val", &s)) {
        return ct_error_code();
    }
    if (s > max_seq_len - cache->size) {
        return ct__fail(CT_ERR_VALUE, op, "cannot add %lld positions to a cache holding %lld of "
                        "max_seq_len %lld", (long long)s, (long long)cache->size,
                        (long long)max_seq_len);
    }
    ct_no_grad_begin();
    ct_scope_begin();
    ct_copy_(ct_narrow(cache->k, 2, cache->size, s), k_val);
    ct_copy_(ct_narrow(cache->v, 2, cache->size, s), v_val);
    ct_scope_end();
    ct_no_grad_end();
    if (ct_error()) {
        return ct_error_code();
    }
    cache->size += s;
    *k_out = ct_narrow(cache->k, 2, 0, cache->size);
    *v_out = ct_narrow(cache->v, 2, 0, cache->size);
    return ct_error_code();
}

void ct_kv_cache_reset(ct_kv_cache *cache)
{
    if (ct__null("ct_kv_cache_reset", cache)) {
        return;
    }
    ct_no_grad_begin();
    ct_zero_(cache->k);
    ct_zero_(cache->v);
    ct_no_grad_end();
    cache->size = 0;
}

int64_t ct_kv_cache_size(const ct_kv_cache *cache)
{
    return ct__null("ct_kv_cache_size", cache) ? -1 : cache->size;
}

void ct_kv_cache_free(ct_kv_cache *cache)
{
    if (cache) {
        ct_release(cache->k);
        ct_release(cache->v);
        ct__free(cache);
    }
}

CT__GLUE_END
