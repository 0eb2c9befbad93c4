/* tests/test_attention.c - scaled dot product attention: PyTorch's outputs and gradients
 * (tools/gen_golden_attention.py, tests/golden/attention_golden.h) over masks (bool, additive,
 * float32, causal, broadcast, a fully masked row), scale, GQA, L != S, E != Ev, transposed and
 * 3-D inputs and dropout with a seed; a long context against PyTorch with its peak memory
 * (O(L), not O(L^2)); the node's name, gradcheck and gradgradcheck, thread invariance,
 * PyTorch's errors and a float16 input.
 */
#include "test.h"

#include <stdlib.h>

#include "golden/attention_golden.h"

/* The generator's values(n, k), halved (as tools/gen_golden_*.py make them). */
static ct_tensor *attn_values(const int64_t *s, int nd, int k, ct_dtype dt)
{
    return ct_test_wave_tensor(s, nd, k, 0.5, dt);
}

/* An input of shape s: values(k), or the transpose (1, 2) of an (N, L, H, E) tensor. */
static ct_tensor *attn_input(const int64_t *s, int nd, int k, ct_dtype dt, bool trans)
{
    int64_t b[4];
    memcpy(b, s, sizeof b);
    if (trans) {
        b[1] = s[2];
        b[2] = s[1];
    }
    ct_tensor *t = attn_values(b, nd, k, dt);
    t = trans ? ct_transpose(t, 1, 2) : t;
    return ct_requires_grad_(ct_detach(t), true);
}

static ct_tensor *attn_mask_of(const attention_golden *c, ct_dtype dt)
{
    if (c->mask_kind == 0) {
        return NULL;
    }
    ct_tensor *m = attn_values(c->mask, c->mask_nd, 4, CT_FLOAT64);
    if (c->mask_kind == 1) { /* > -0.3, row 1 all False */
        m = ct_gt_scalar(m, -0.3);
        ct_tensor *row = ct_select(m, -2, 1);
        ct_fill_(row, 0);
        return m;
    }
    return ct_to_dtype(ct_mul_scalar(m, 0.5), c->mask_kind == 2 ? dt : CT_FLOAT32);
}

/* Compares every step-th element of t (flattened) with want. */
static void attn_check(const ct_tensor *t, const double *want, int step, double tol,
                       const char *what, const char *name)
{
    ct_tensor *f = ct_contiguous(ct_flatten(ct_to_dtype(t, CT_FLOAT64), 0, -1));
    const double *d = (const double *)ct_data_ptr(f);
    int64_t n = (ct_numel(f) + step - 1) / step;
    for (int64_t i = 0; i < n; i++) {
        double got = d[i * step], w = want[i];
        if (!(fabs(got - w) <= tol + tol * fabs(w))) {
            CHECK_MSG(false, "%s %s[%lld]: %.17g, want %.17g", name, what,
                      (long long)(i * step), got, w);
            return;
        }
    }
}

static void test_attention_golden(void)
{
    int n = (int)(sizeof attention_cases / sizeof attention_cases[0]);
    for (int i = 0; i < n; i++) {
        const attention_golden *c = &attention_cases[i];
        ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
        double tol = c->f64 ? 1e-12 : 2e-5;
        ct_scope_begin();
        ct_tensor *q = attn_input(c->q, c->nd, 0, dt, c->trans);
        ct_tensor *k = attn_input(c->k, c->nd, 1, dt, c->trans);
        ct_tensor *v = attn_input(c->v, c->nd, 2, dt, c->trans);
        ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
        o.is_causal = c->causal != 0;
        o.scale = c->scale;
        o.enable_gqa = c->gqa != 0;
        o.dropout_p = c->dropout_p;
        ct_manual_seed((uint64_t)c->seed);
        ct_tensor *y = ct_scaled_dot_product_attention(q, k, v, attn_mask_of(c, dt), &o);
        CHECK_MSG(y != NULL, "%s: %s", c->name, ct_error() ? ct_error() : "");
        if (y) {
            ct_backward(y, attn_values(ct_sizes(y), ct_dim(y), 5, dt), false);
            attn_check(y, c->out, c->step, tol, "out", c->name);
            attn_check(ct_grad(q), c->dq, c->step, tol, "dq", c->name);
            attn_check(ct_grad(k), c->dk, c->step, tol, "dk", c->name);
            attn_check(ct_grad(v), c->dv, c->step, tol, "dv", c->name);
        }
        ct_error_clear();
        ct_scope_end();
    }
}

static void test_attention_node(void)
{
    ct_scope_begin();
    int64_t s[4] = {1, 2, 4, 3};
    ct_tensor *q = attn_input(s, 4, 0, CT_FLOAT32, false);
    ct_tensor *y = ct_scaled_dot_product_attention(q, q, q, NULL, NULL);
    CHECK(y && !strcmp(ct_node_name(ct_grad_fn(y)),
                       "ScaledDotProductFlashAttentionForCpuBackward0"));
    CHECK(ct_is_contiguous(y));
    /* heads inside rows in, heads inside rows out: y^T (1, 4, 2, 3) is contiguous, so the
       heads merge back into (1, 4, 6) as a view */
    ct_tensor *qt = attn_input(s, 4, 0, CT_FLOAT32, true);
    ct_tensor *yt = ct_scaled_dot_product_attention(qt, qt, qt, NULL, NULL);
    CHECK(yt && ct_is_contiguous(ct_transpose(yt, 1, 2)));
    ct_tensor *qc = ct_contiguous(qt);
    CHECK(ct_equal(yt, ct_scaled_dot_product_attention(qc, qc, qc, NULL, NULL)));
    ct_scope_end();
}

/* The long context: (1, 2, 1024, 16) causal float32 against PyTorch; forward + backward
   peak memory above the inputs is O(L E) (a 1024 x 1024 score matrix per head would be 8 MB). */
static void test_attention_long(void)
{
    ct_scope_begin();
    int64_t s[4] = {1, ATTENTION_LONG_H, ATTENTION_LONG_L, ATTENTION_LONG_E};
    ct_tensor *q = attn_input(s, 4, 0, CT_FLOAT32, false);
    ct_tensor *k = attn_input(s, 4, 1, CT_FLOAT32, false);
    ct_tensor *v = attn_input(s, 4, 2, CT_FLOAT32, false);
    ct_tensor *g = attn_values(s, 4, 5, CT_FLOAT32);
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    o.is_causal = true;
    size_t base = ct_memory_allocated();
    ct_reset_peak_memory_stats();
    ct_tensor *y = ct_scaled_dot_product_attention(q, k, v, NULL, &o);
    CHECK(ct_backward(y, g, false) == CT_OK);
    size_t extra = ct_max_memory_allocated() - base;
    size_t io = (size_t)ct_numel(q) * 4; /* one input's bytes */
    /* out, logsumexp, dq, dk, dv and scratch: under 8 inputs' worth; L^2 would be 64 */
    CHECK_MSG(extra < 8 * io, "peak extra %zu bytes, inputs %zu bytes", extra, io);
    const double *want[4] = {attention_long_out, attention_long_dq, attention_long_dk,
                             attention_long_dv};
    double sums[4] = {attention_long_out_sum, attention_long_dq_sum, attention_long_dk_sum,
                      attention_long_dv_sum};
    const ct_tensor *got[4] = {y, ct_grad(q), ct_grad(k), ct_grad(v)};
    for (int i = 0; i < 4; i++) {
        attn_check(got[i], want[i], ATTENTION_LONG_STEP, 2e-5, "long", "sample");
        double sum = ct_item(ct_sum(ct_to_dtype(got[i], CT_FLOAT64)));
        CHECK_NEAR(sum, sums[i], 1e-4 * (1 + fabs(sums[i])) + 1e-3);
    }
    ct_scope_end();
}

typedef struct attn_gc {
    bool causal, mask, gqa;
} attn_gc;

static ct_tensor *attn_gc_fn(ct_tensor *const *in, int n, void *user)
{
    const attn_gc *c = (const attn_gc *)user;
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    o.is_causal = c->causal;
    o.enable_gqa = c->gqa;
    ct_tensor *mask = NULL;
    if (c->mask) {
        int64_t ms[2] = {ct_sizes(in[0])[2], ct_sizes(in[1])[2]};
        mask = ct_gt_scalar(attn_values(ms, 2, 4, CT_FLOAT64), -0.3);
        ct_fill_(ct_select(mask, 0, 1), 0);
    }
    (void)n;
    return ct_scaled_dot_product_attention(in[0], in[1], in[2], mask, &o);
}

/* The gradient of sum(sdpa(q, k, v) * w) with respect to q, k, v (create_graph), flattened. */
static ct_tensor *attn_gg_fn(ct_tensor *const *in, int n, void *user)
{
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true);
    ct_tensor *y = attn_gc_fn(in, n, user);
    const ct_tensor *go[1] = {in[3]};
    ct_tensor *g[3] = {NULL, NULL, NULL};
    ct_tensor *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, 3, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[3] = {ct_flatten(g[0], 0, -1), ct_flatten(g[1], 0, -1),
                                     ct_flatten(g[2], 0, -1)};
        out = ct_cat(parts, 3, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

static void test_attention_gradcheck(void)
{
    attn_gc cases[4] = {{false, false, false}, {true, false, false}, {false, true, false},
                        {true, false, true}};
    for (int i = 0; i < 4; i++) {
        ct_scope_begin();
        int64_t qs[4] = {1, cases[i].gqa ? 4 : 2, 3, 2}, ks[4] = {1, 2, 4, 2};
        int64_t vs[4] = {1, 2, 4, 3}, os[4] = {1, qs[1], 3, 3};
        ct_tensor *in[4] = {attn_input(qs, 4, 0, CT_FLOAT64, false),
                            attn_input(ks, 4, 1, CT_FLOAT64, false),
                            attn_input(vs, 4, 2, CT_FLOAT64, false),
                            attn_input(os, 4, 5, CT_FLOAT64, false)};
        CHECK_MSG(ct_gradcheck(attn_gc_fn, in, 3, &cases[i], NULL), "case %d: %s", i,
                  ct_error() ? ct_error() : "");
        ct_error_clear();
        CHECK_MSG(ct_gradcheck(attn_gg_fn, in, 4, &cases[i], NULL), "gradgrad case %d: %s", i,
                  ct_error() ? ct_error() : "");
        ct_error_clear();
        ct_scope_end();
    }
}

static void attn_threads(ct_tensor **out)
{
    int64_t qs[4] = {2, 4, 150, 16}, ks[4] = {2, 2, 200, 16};
    ct_tensor *q = attn_input(qs, 4, 0, CT_FLOAT32, false);
    ct_tensor *k = attn_input(ks, 4, 1, CT_FLOAT32, false);
    ct_tensor *v = attn_input(ks, 4, 2, CT_FLOAT32, false);
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    o.is_causal = true;
    o.enable_gqa = true;
    ct_tensor *y = ct_scaled_dot_product_attention(q, k, v, NULL, &o);
    ct_backward(ct_sum(ct_mul(y, y)), NULL, false);
    out[0] = ct_keep(y);
    out[1] = ct_keep(ct_clone(ct_grad(q)));
    out[2] = ct_keep(ct_clone(ct_grad(k)));
    out[3] = ct_keep(ct_clone(ct_grad(v)));
}

static void test_attention_threads(void)
{
    CHECK_THREAD_INVARIANT(attn_threads, 4);
}

static void test_attention_errors(void)
{
    ct_scope_begin();
    int64_t qs[4] = {2, 3, 5, 4}, ks[4] = {2, 2, 6, 4}, k1[1] = {4}, ms[2] = {5, 7};
    ct_tensor *q = attn_values(qs, 4, 0, CT_FLOAT64), *k = attn_values(ks, 4, 1, CT_FLOAT64);
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    CHECK(!ct_scaled_dot_product_attention(q, k, k, NULL, NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (3) must match the size of tensor b (2) at "
                              "non-singleton dimension 1");
    o.enable_gqa = true;
    CHECK(!ct_scaled_dot_product_attention(q, k, k, NULL, &o));
    CHECK_ERROR(CT_ERR_SHAPE, "Number of heads in key and value must divide the number of heads "
                              "in query");
    ct_tensor *v1 = attn_values(k1, 1, 0, CT_FLOAT64);
    CHECK(!ct_scaled_dot_product_attention(v1, v1, v1, NULL, NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected query, key, and value to all be  at least 2 dimensional, "
                              "but got query.dim: 1 key.dim: 1 and value.dim: 1 instead.");
    CHECK(!ct_scaled_dot_product_attention(q, ct_to_dtype(q, CT_FLOAT32), q, NULL, NULL));
    CHECK_ERROR(CT_ERR_DTYPE, "Expected query, key, and value to have the same dtype, but got "
                              "query.dtype: double key.dtype: float and value.dtype: double");
    ct_tensor *ql = ct_to_dtype(q, CT_INT64);
    CHECK(!ct_scaled_dot_product_attention(ql, ql, ql, NULL, NULL));
    CHECK_ERROR(CT_ERR_DTYPE, "expected scalar type Float but found Long");
    CHECK(!ct_scaled_dot_product_attention(q, q, q, attn_values(ms, 2, 0, CT_FLOAT64), NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (5) must match the size of tensor b (7) at "
                              "non-singleton dimension 3");
    CHECK(!ct_scaled_dot_product_attention(q, q, q, ct_ones(ms, 1, CT_INT64), NULL));
    CHECK_ERROR(CT_ERR_DTYPE, "Expected attn_mask dtype to be bool or float or to match query "
                              "dtype, but got attn_mask.dtype: long int and  query.dtype: double");
    int64_t es[4] = {2, 3, 5, 3};
    CHECK(!ct_scaled_dot_product_attention(q, attn_values(es, 4, 0, CT_FLOAT64), q, NULL, NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: "
                              "[6, 4] but got: [6, 3].");
    o = ct_scaled_dot_product_attention_defaults();
    o.is_causal = true;
    CHECK(!ct_scaled_dot_product_attention(q, q, q, ct_ones(ms, 1, CT_BOOL), &o));
    CHECK_ERROR(CT_ERR_VALUE, "_scaled_dot_product_attention: Explicit attn_mask should not be "
                              "set when is_causal=True");
    o = ct_scaled_dot_product_attention_defaults();
    o.dropout_p = -0.5;
    CHECK(!ct_scaled_dot_product_attention(q, q, q, NULL, &o));
    CHECK_ERROR(CT_ERR_VALUE, "dropout probability has to be between 0 and 1, but got -0.5");
    ct_scope_end();
}

/* float16 computes through the float32 kernel: equal to float32's result rounded. */
static void test_attention_half(void)
{
    ct_scope_begin();
    int64_t s[4] = {1, 2, 9, 8};
    ct_tensor *q = ct_to_dtype(attn_values(s, 4, 0, CT_FLOAT32), CT_FLOAT16);
    ct_tensor *k = ct_to_dtype(attn_values(s, 4, 1, CT_FLOAT32), CT_FLOAT16);
    ct_tensor *y = ct_scaled_dot_product_attention(q, k, k, NULL, NULL);
    ct_tensor *y32 = ct_scaled_dot_product_attention(
        ct_to_dtype(q, CT_FLOAT32), ct_to_dtype(k, CT_FLOAT32), ct_to_dtype(k, CT_FLOAT32), NULL,
        NULL);
    CHECK(y && ct_tensor_dtype(y) == CT_FLOAT16);
    CHECK(ct_test_same_bytes(y, ct_to_dtype(y32, CT_FLOAT16)));
    ct_scope_end();
}

void test_attention(void)
{
    RUN(test_attention_golden);
    RUN(test_attention_node);
    RUN(test_attention_long);
    RUN(test_attention_gradcheck);
    RUN(test_attention_threads);
    RUN(test_attention_errors);
    RUN(test_attention_half);
}
