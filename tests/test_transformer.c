/* tests/test_transformer.c - MultiheadAttention and the Transformer layers against PyTorch
 * (tools/gen_golden_transformer.py, tests/golden/transformer_golden.h): initial weights for a
 * seed (names, order and checksums of every parameter), forwards with every mask kind, layout
 * and option, the gradients of the inputs and parameters, dropout masks in training mode;
 * gradcheck, thread invariance, state_dict names and PyTorch's errors.
 */
#include "test.h"

#include <stdlib.h>

#include "golden/transformer_golden.h"

/* The generator's values(n, k), halved (as tools/gen_golden_*.py make them). */
static ct_tensor *tfm_values(const int64_t *s, int nd, int k, ct_dtype dt)
{
    return ct_test_wave_tensor(s, nd, k, 0.5, dt);
}

/* An input leaf requiring grad. */
static ct_tensor *tfm_input(const int64_t *s, int nd, int k, ct_dtype dt)
{
    return ct_requires_grad_(ct_detach(tfm_values(s, nd, k, dt)), true);
}

/* The generator's masks: 1 bool (values(4) > 0.3, column 0 false), 2 float (values(4) / 2),
   3 causal (-inf above the diagonal); NULL for 0. */
static ct_tensor *tfm_mask(int kind, const int64_t *s, int nd, ct_dtype dt)
{
    if (kind == 1) {
        ct_tensor *m = ct_gt_scalar(tfm_values(s, nd, 4, CT_FLOAT64), 0.3);
        ct_fill_(ct_select(m, -1, 0), 0);
        return m;
    }
    if (kind == 2) {
        return ct_mul_scalar(tfm_values(s, nd, 4, dt), 0.5);
    }
    if (kind == 3) {
        return ct_triu(ct_full(s + nd - 2, 2, -INFINITY, dt), 1);
    }
    return NULL;
}

/* Compares every step-th element of t (flattened) with want[0..n). */
static void tfm_check(const ct_tensor *t, const double *want, int n, int step, bool f64,
                      const char *what, const char *name)
{
    CHECK_MSG(t != NULL, "%s %s: no result (%s)", name, what, ct_error() ? ct_error() : "");
    if (!t) {
        return;
    }
    ct_tensor *f = ct_contiguous(ct_flatten(ct_to_dtype(t, CT_FLOAT64), 0, -1));
    const double *d = (const double *)ct_data_ptr(f);
    CHECK_MSG((ct_numel(f) + step - 1) / step == n, "%s %s: %lld elements, want %d (step %d)",
              name, what, (long long)ct_numel(f), n, step);
    double tol = f64 ? 1e-10 : 3e-5;
    for (int i = 0; i < n && i * step < ct_numel(f); i++) {
        double g = d[i * step], w = want[i];
        if (!(fabs(g - w) <= tol * (1 + fabs(w)))) {
            ct_test_fail(__FILE__, __LINE__, "%s %s[%d]: %.10g, want %.10g", name, what,
                         i * step, g, w);
            return;
        }
    }
}

/* The gradients of m's parameters, flattened and concatenated in named_parameters order. */
static ct_tensor *tfm_param_grads(const ct_module *m)
{
    ct_tensor *p[64];
    const ct_tensor *g[64];
    int64_t n = ct_module_parameters(m, p, 64);
    for (int64_t i = 0; i < n; i++) {
        g[i] = ct_flatten(ct_grad(p[i]), 0, -1);
    }
    return ct_cat(g, (int)n, 0);
}

/* ---- initial weights -------------------------------------------------------------------- */
static ct_module *tfm_init_module(int i)
{
    ct_multihead_attention_opts mo = ct_multihead_attention_defaults();
    ct_transformer_layer_opts lo = ct_transformer_layer_defaults();
    lo.dim_feedforward = 16;
    int64_t d = 8;
    switch (i) {
    case 0:
        return ct_multihead_attention_new(8, 2, NULL);
    case 1:
        mo.kdim = 5;
        mo.vdim = 6;
        mo.add_bias_kv = true;
        return ct_multihead_attention_new(8, 4, &mo);
    case 2:
        mo.bias = false;
        mo.add_bias_kv = true;
        return ct_multihead_attention_new(6, 3, &mo);
    case 3:
        return ct_transformer_encoder_layer_new(8, 2, &lo);
    case 4:
        lo.bias = false;
        return ct_transformer_decoder_layer_new(8, 2, &lo);
    case 5:
        return ct_transformer_encoder_new(ct_transformer_encoder_layer_new(8, 2, &lo), 2,
                                          ct_layer_norm_new(&d, 1, 1e-5, true, true));
    default:
        return ct_transformer_new(8, 2, 2, 1, &lo);
    }
}

static void test_transformer_init(void)
{
    int n_cases = (int)(sizeof tfm_inits / sizeof tfm_inits[0]);
    for (int c = 0; c < n_cases; c++) {
        const transformer_init_golden *g = &tfm_inits[c];
        ct_manual_seed((uint64_t)g->seed);
        ct_module *m = tfm_init_module(c);
        char buf[64][128];
        char *names[64];
        ct_tensor *p[64];
        for (int i = 0; i < 64; i++) {
            names[i] = buf[i];
        }
        int64_t n = ct_module_named_parameters(m, names, sizeof buf[0], p, 64);
        CHECK_MSG(n == g->n, "%s: %lld parameters, want %d", g->name, (long long)n, g->n);
        for (int i = 0; i < g->n && i < n; i++) {
            const transformer_param_sum *w = &g->params[i];
            CHECK_MSG(!strcmp(names[i], w->name), "%s: parameter %d is %s, want %s", g->name, i,
                      names[i], w->name);
            CHECK_MSG(ct_numel(p[i]) == w->numel, "%s: %s numel", g->name, w->name);
            const float *d = (const float *)ct_data_ptr(p[i]);
            double s = 0, ws = 0;
            for (int64_t j = 0; j < ct_numel(p[i]); j++) {
                s += (double)d[j];
                ws += (double)d[j] * (double)(j % 7 + 1);
            }
            CHECK_MSG(s == w->sum && ws == w->wsum, "%s: %s sums %.17g %.17g, want %.17g %.17g",
                      g->name, w->name, s, ws, w->sum, w->wsum);
        }
        ct_module_free(m);
    }
}

/* ---- MultiheadAttention ------------------------------------------------------------------ */
/* The golden case's module (seed, dtype, training mode). */
static ct_module *tfm_mha_module(const transformer_mha_golden *c)
{
    ct_multihead_attention_opts o = ct_multihead_attention_defaults();
    o.dropout = c->dropout;
    o.bias = c->bias != 0;
    o.add_bias_kv = c->bias_kv != 0;
    o.add_zero_attn = c->zero_attn != 0;
    o.kdim = c->kdim;
    o.vdim = c->vdim;
    o.batch_first = c->batch_first != 0;
    ct_manual_seed((uint64_t)c->seed);
    ct_module *m = ct_multihead_attention_new(c->E, c->H, &o);
    ct_module_to(m, c->f64 ? CT_FLOAT64 : CT_FLOAT32);
    ct_module_train(m, c->dropout > 0);
    return m;
}

/* An input (T, D) unbatched, (N, T, D) batch_first, else (T, N, D). */
static int tfm_shape(int64_t *s, int64_t N, int64_t T, int64_t D, bool batch_first)
{
    if (N == 0) {
        s[0] = T;
        s[1] = D;
        return 2;
    }
    s[0] = batch_first ? N : T;
    s[1] = batch_first ? T : N;
    s[2] = D;
    return 3;
}

static void tfm_mha_case(const transformer_mha_golden *c)
{
    ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
    ct_module *m = tfm_mha_module(c);
    bool bf = c->batch_first != 0;
    int64_t sq[3], sk[3], sv[3];
    int nd = tfm_shape(sq, c->N, c->L, c->E, bf);
    tfm_shape(sk, c->N, c->S, c->kdim ? c->kdim : c->E, bf);
    tfm_shape(sv, c->N, c->S, c->vdim ? c->vdim : c->E, bf);
    ct_tensor *q = tfm_input(sq, nd, 0, dt);
    ct_tensor *k = c->qkv == 0 ? q : tfm_input(sk, nd, 1, dt);
    ct_tensor *v = c->qkv <= 1 ? k : tfm_input(sv, nd, 2, dt);
    int64_t ms[3] = {(c->N ? c->N : 1) * c->H, c->L, c->S}, ks[2] = {c->N, c->S};
    ct_multihead_attention_forward_opts o = ct_multihead_attention_forward_defaults();
    o.attn_mask = tfm_mask(c->mask_kind, ms + 3 - c->mask_nd, c->mask_nd, dt);
    o.key_padding_mask = tfm_mask(c->kpm_kind, c->N ? ks : ks + 1, c->N ? 2 : 1, dt);
    o.need_weights = c->need_weights != 0;
    o.average_attn_weights = c->average != 0;
    o.is_causal = c->is_causal != 0;
    ct_manual_seed((uint64_t)c->seed + 100);
    ct_tensor *w = NULL;
    ct_tensor *out = ct_multihead_attention_forward(m, q, k, v, &o, &w);
    CHECK_MSG(out && (w != NULL) == (c->need_weights != 0), "%s: %s", c->name,
              ct_error() ? ct_error() : "weights");
    if (out) {
        ct_tensor *loss = ct_sum(ct_mul(out, tfm_values(ct_sizes(out), ct_dim(out), 5, dt)));
        if (w) {
            loss = ct_add(loss, ct_sum(ct_mul(w, tfm_values(ct_sizes(w), ct_dim(w), 6, dt))));
        }
        CHECK(ct_backward(loss, NULL, false) == CT_OK);
        const ct_tensor *gi[3] = {ct_flatten(ct_grad(q), 0, -1), ct_flatten(ct_grad(k), 0, -1),
                                  ct_flatten(ct_grad(v), 0, -1)};
        tfm_check(out, c->out, c->n_out, c->step[0], c->f64, "out", c->name);
        if (w) {
            tfm_check(w, c->w, c->n_w, c->step[1], c->f64, "weights", c->name);
        }
        tfm_check(ct_cat(gi, c->qkv + 1, 0), c->din, c->n_din, c->step[2], c->f64, "din",
                  c->name);
        tfm_check(tfm_param_grads(m), c->dparams, c->n_dparams, c->step[3], c->f64, "dparams",
                  c->name);
    }
    ct_error_clear();
    ct_module_free(m);
}

static void test_transformer_mha_golden(void)
{
    int n = (int)(sizeof tfm_mha_cases / sizeof tfm_mha_cases[0]);
    for (int i = 0; i < n; i++) {
        ct_scope_begin();
        tfm_mha_case(&tfm_mha_cases[i]);
        ct_scope_end();
    }
}

/* ---- layers ------------------------------------------------------------------------------ */
static ct_module *tfm_layer_module(const transformer_layer_golden *c)
{
    ct_transformer_layer_opts o = ct_transformer_layer_defaults();
    o.dim_feedforward = c->ff;
    o.dropout = c->dropout;
    o.activation = c->gelu ? CT_TRANSFORMER_GELU : CT_TRANSFORMER_RELU;
    o.batch_first = c->batch_first != 0;
    o.norm_first = c->norm_first != 0;
    o.bias = c->bias != 0;
    int64_t d = c->d;
    ct_manual_seed((uint64_t)c->seed);
    ct_module *m;
    switch (c->kind) {
    case 0:
        m = ct_transformer_encoder_layer_new(c->d, c->nhead, &o);
        break;
    case 1:
        m = ct_transformer_encoder_new(ct_transformer_encoder_layer_new(c->d, c->nhead, &o), 2,
                                       ct_layer_norm_new(&d, 1, 1e-5, true, o.bias));
        break;
    case 2:
        m = ct_transformer_decoder_layer_new(c->d, c->nhead, &o);
        break;
    case 3:
        m = ct_transformer_decoder_new(ct_transformer_decoder_layer_new(c->d, c->nhead, &o), 2,
                                       ct_layer_norm_new(&d, 1, 1e-5, true, o.bias));
        break;
    default:
        m = ct_transformer_new(c->d, c->nhead, 2, 1, &o);
        break;
    }
    ct_module_to(m, c->f64 ? CT_FLOAT64 : CT_FLOAT32);
    ct_module_train(m, c->dropout > 0);
    return m;
}

static ct_tensor *tfm_layer_forward(const transformer_layer_golden *c, ct_module *m,
                                    const ct_tensor *src, const ct_tensor *tgt,
                                    const ct_tensor *mask, const ct_tensor *kpm)
{
    ct_transformer_forward_opts o;
    memset(&o, 0, sizeof o);
    o.tgt_mask = mask;
    o.tgt_is_causal = c->hint != 0;
    o.memory_key_padding_mask = kpm;
    switch (c->kind) {
    case 0:
        return ct_transformer_encoder_layer_forward(m, src, mask, kpm, c->hint != 0);
    case 1:
        return ct_transformer_encoder_forward(m, src, mask, kpm, c->hint != 0);
    case 2:
        return ct_transformer_decoder_layer_forward(m, tgt, src, &o);
    case 3:
        return ct_transformer_decoder_forward(m, tgt, src, &o);
    default:
        o.src_key_padding_mask = kpm;
        return ct_transformer_forward(m, src, tgt, &o);
    }
}

static void tfm_layer_case(const transformer_layer_golden *c)
{
    ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
    ct_module *m = tfm_layer_module(c);
    bool bf = c->batch_first != 0;
    int64_t ss[3], st[3];
    tfm_shape(ss, c->N, c->S, c->d, bf);
    tfm_shape(st, c->N, c->T, c->d, bf);
    ct_tensor *src = tfm_input(ss, 3, 0, dt);
    ct_tensor *tgt = c->kind >= 2 ? tfm_input(st, 3, 1, dt) : NULL;
    int64_t L = c->kind >= 2 ? c->T : c->S;
    int64_t ms[2] = {L, L}, ks[2] = {c->N, c->S};
    ct_tensor *mask = tfm_mask(c->mask_kind, ms, 2, dt);
    ct_tensor *kpm = tfm_mask(c->kpm_kind, ks, 2, dt);
    ct_manual_seed((uint64_t)c->seed + 100);
    ct_tensor *out = tfm_layer_forward(c, m, src, tgt, mask, kpm);
    CHECK_MSG(out != NULL, "%s: %s", c->name, ct_error() ? ct_error() : "");
    if (out) {
        ct_tensor *loss = ct_sum(ct_mul(out, tfm_values(ct_sizes(out), ct_dim(out), 5, dt)));
        CHECK(ct_backward(loss, NULL, false) == CT_OK);
        ct_tensor *din = ct_flatten(ct_grad(src), 0, -1);
        if (tgt) {
            const ct_tensor *parts[2] = {ct_flatten(ct_grad(tgt), 0, -1), din};
            din = ct_cat(parts, 2, 0);
        }
        tfm_check(out, c->out, c->n_out, c->step_out, c->f64, "out", c->name);
        tfm_check(din, c->din, c->n_din, c->step_din, c->f64, "din", c->name);
        tfm_check(tfm_param_grads(m), c->dparams, c->n_dparams, c->step_dparams, c->f64,
                  "dparams", c->name);
    }
    ct_error_clear();
    ct_module_free(m);
}

static void test_transformer_layers_golden(void)
{
    int n = (int)(sizeof tfm_layer_cases / sizeof tfm_layer_cases[0]);
    for (int i = 0; i < n; i++) {
        ct_scope_begin();
        tfm_layer_case(&tfm_layer_cases[i]);
        ct_scope_end();
    }
}

/* ---- gradcheck, threads, state_dict --------------------------------------------------------- */
/* MultiheadAttention (E 4, 2 heads, kdim 3, bias_kv, a bool mask, key padding) on q, k, v: the
   output and the per-head weights, concatenated. */
static ct_tensor *tfm_gc_mha(ct_tensor *const *in, int n, void *user)
{
    ct_module *m = (ct_module *)user;
    int64_t ms[2] = {3, 4}, ks[2] = {2, 4};
    ct_multihead_attention_forward_opts o = ct_multihead_attention_forward_defaults();
    o.attn_mask = tfm_mask(1, ms, 2, CT_FLOAT64);
    o.key_padding_mask = tfm_mask(1, ks, 2, CT_FLOAT64);
    o.average_attn_weights = false;
    ct_tensor *w = NULL;
    ct_tensor *out = ct_multihead_attention_forward(m, in[0], in[1], in[n - 1], &o, &w);
    const ct_tensor *parts[2] = {ct_flatten(out, 0, -1), ct_flatten(w, 0, -1)};
    return ct_cat(parts, 2, 0);
}

static ct_tensor *tfm_gc_layer(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    int64_t ms[2] = {3, 3};
    return ct_transformer_encoder_layer_forward((ct_module *)user, in[0],
                                                tfm_mask(2, ms, 2, CT_FLOAT64), NULL, false);
}

static void test_transformer_gradcheck(void)
{
    ct_scope_begin();
    ct_multihead_attention_opts mo = ct_multihead_attention_defaults();
    mo.kdim = 3;
    mo.add_bias_kv = true;
    mo.add_zero_attn = true;
    ct_manual_seed(3);
    ct_module *m = ct_module_to(ct_multihead_attention_new(4, 2, &mo), CT_FLOAT64);
    int64_t sq[3] = {3, 2, 4}, sk[3] = {4, 2, 3}, sv[3] = {4, 2, 4};
    ct_tensor *in[3] = {tfm_input(sq, 3, 0, CT_FLOAT64), tfm_input(sk, 3, 1, CT_FLOAT64),
                        tfm_input(sv, 3, 2, CT_FLOAT64)};
    CHECK_MSG(ct_gradcheck(tfm_gc_mha, in, 3, m, NULL), "mha: %s", ct_error() ? ct_error() : "");
    ct_error_clear();
    ct_module_free(m);
    ct_transformer_layer_opts lo = ct_transformer_layer_defaults();
    lo.dim_feedforward = 6;
    lo.activation = CT_TRANSFORMER_GELU;
    lo.norm_first = true;
    ct_module *layer = ct_module_to(ct_transformer_encoder_layer_new(4, 2, &lo), CT_FLOAT64);
    ct_module_eval(layer);
    int64_t ss[3] = {3, 2, 4};
    ct_tensor *src = tfm_input(ss, 3, 0, CT_FLOAT64);
    CHECK_MSG(ct_gradcheck(tfm_gc_layer, &src, 1, layer, NULL), "layer: %s",
              ct_error() ? ct_error() : "");
    ct_error_clear();
    ct_module_free(layer);
    ct_scope_end();
}

static ct_module *tfm_thread_model;

static void tfm_threads(ct_tensor **out)
{
    int64_t s[3] = {4, 40, 32}, ms[2] = {40, 40};
    ct_tensor *x = tfm_input(s, 3, 0, CT_FLOAT32);
    ct_module_zero_grad(tfm_thread_model, true);
    ct_tensor *y = ct_transformer_encoder_forward(tfm_thread_model, x,
                                                  tfm_mask(3, ms, 2, CT_FLOAT32), NULL, false);
    ct_backward(ct_sum(ct_mul(y, y)), NULL, false);
    out[0] = ct_keep(y);
    out[1] = ct_keep(ct_clone(ct_grad(x)));
    out[2] = ct_keep(tfm_param_grads(tfm_thread_model));
}

static void test_transformer_threads(void)
{
    ct_transformer_layer_opts lo = ct_transformer_layer_defaults();
    lo.dim_feedforward = 64;
    lo.batch_first = true;
    ct_manual_seed(5);
    tfm_thread_model = ct_transformer_encoder_new(ct_transformer_encoder_layer_new(32, 4, &lo), 2,
                                                  NULL);
    ct_module_eval(tfm_thread_model);
    CHECK_THREAD_INVARIANT(tfm_threads, 3);
    ct_module_free(tfm_thread_model);
}

/* The layer's copies share the original's values, and a state_dict round trip through
   safetensors restores a model. */
static void test_transformer_state_dict(void)
{
    ct_transformer_layer_opts lo = ct_transformer_layer_defaults();
    lo.dim_feedforward = 8;
    ct_manual_seed(9);
    ct_module *a = ct_transformer_encoder_new(ct_transformer_encoder_layer_new(4, 2, &lo), 2,
                                              NULL);
    ct_module *b = ct_transformer_encoder_new(ct_transformer_encoder_layer_new(4, 2, &lo), 2,
                                              NULL);
    ct_tensor *w0 = ct_module_get_parameter(a, "layers.0.linear1.weight");
    ct_tensor *w1 = ct_module_get_parameter(a, "layers.1.linear1.weight");
    CHECK(w0 && w1 && w0 != w1 && ct_test_same_bytes(w0, w1));
    ct_tensor *wb = ct_module_get_parameter(b, "layers.0.linear1.weight");
    CHECK(wb && !ct_test_same_bytes(w0, wb)); /* b drew after a */
    ct_state_dict *sd = ct_module_state_dict(a);
    size_t n = ct_save_buffer(sd, NULL, 0);
    void *buf = malloc(n);
    CHECK(n > 0 && buf && ct_save_buffer(sd, buf, n) == n);
    ct_state_dict_free(sd);
    sd = ct_load_buffer(buf, n);
    free(buf);
    CHECK(sd && ct_module_load_state_dict(b, sd, true, NULL) == CT_OK);
    CHECK(wb && ct_test_same_bytes(w0, wb));
    ct_state_dict_free(sd);
    ct_module_free(a);
    ct_module_free(b);
}

static void test_transformer_errors(void)
{
    ct_scope_begin();
    CHECK(ct_multihead_attention_new(6, 4, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "embed_dim must be divisible by num_heads");
    CHECK(ct_multihead_attention_new(0, 2, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "embed_dim and num_heads must be greater than 0, got embed_dim=0 "
                "and num_heads=2 instead");
    ct_module *m = ct_multihead_attention_new(8, 2, NULL);
    int64_t s3[3] = {4, 2, 8}, s5[3] = {5, 2, 8}, s6[3] = {4, 2, 6}, s2[2] = {4, 8};
    ct_tensor *x = tfm_values(s3, 3, 0, CT_FLOAT32), *y = tfm_values(s5, 3, 1, CT_FLOAT32);
    ct_multihead_attention_forward_opts o = ct_multihead_attention_forward_defaults();
    CHECK(ct_multihead_attention_forward(m, x, tfm_values(s2, 2, 0, CT_FLOAT32), x, &o, NULL) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "For batched (3-D) `query`, expected `key` and `value` to be 3-D "
                "but found 2-D and 3-D tensors respectively");
    CHECK(ct_multihead_attention_forward(m, tfm_values(s6, 3, 0, CT_FLOAT32), x, x, &o, NULL) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "was expecting embedding dimension of 8, but got 6");
    CHECK(ct_multihead_attention_forward(m, x, x, y, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "key shape torch.Size([4, 2, 8]) does not match value shape "
                "torch.Size([5, 2, 8])");
    int64_t m45[2] = {4, 5}, k3[2] = {3, 5}, m3[3] = {3, 4, 5};
    o.attn_mask = tfm_mask(1, m45, 2, CT_FLOAT32);
    CHECK(ct_multihead_attention_forward(m, x, x, x, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The shape of the 2D attn_mask is torch.Size([4, 5]), but should "
                "be (4, 4).");
    o.attn_mask = tfm_mask(1, m3, 3, CT_FLOAT32);
    CHECK(ct_multihead_attention_forward(m, x, y, y, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The shape of the 3D attn_mask is torch.Size([3, 4, 5]), but "
                "should be (4, 4, 5).");
    o.attn_mask = ct_zeros(m45, 2, CT_INT64);
    CHECK(ct_multihead_attention_forward(m, x, y, y, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "only bool and floating types of attn_mask are supported");
    o.attn_mask = NULL;
    o.key_padding_mask = tfm_mask(1, k3, 2, CT_FLOAT32);
    CHECK(ct_multihead_attention_forward(m, x, y, y, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected key_padded_mask.shape[0] to be 2, but got 3");
    o.key_padding_mask = tfm_mask(1, k3 + 1, 1, CT_FLOAT32);
    CHECK(ct_multihead_attention_forward(m, x, y, y, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "For batched (3-D) `query`, expected `key_padding_mask` to be "
                "`None` or 2-D but found 1-D tensor instead");
    o.key_padding_mask = NULL;
    o.is_causal = true;
    CHECK(ct_multihead_attention_forward(m, x, x, x, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Need attn_mask if specifying the is_causal hint.");
    ct_module_free(m);
    ct_multihead_attention_opts mo = ct_multihead_attention_defaults();
    mo.kdim = 3;
    m = ct_multihead_attention_new(8, 2, &mo);
    o.is_causal = false;
    CHECK(ct_multihead_attention_forward(m, x, y, y, &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "expecting key weights shape of (8, 8), but got "
                "torch.Size([8, 3])");
    CHECK(ct_multihead_attention_forward(m, x, tfm_values(s6, 3, 1, CT_FLOAT32), y, &o, NULL) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "key's sequence and batch dims torch.Size([4, 2]) do not match "
                "value's torch.Size([5, 2])");
    int64_t uq[2] = {4, 8}, uk[2] = {5, 3}, uv[2] = {5, 8}, um[3] = {2, 4, 6};
    o.attn_mask = tfm_mask(2, um, 3, CT_FLOAT32);
    CHECK(ct_multihead_attention_forward(m, tfm_values(uq, 2, 0, CT_FLOAT32),
                                         tfm_values(uk, 2, 1, CT_FLOAT32),
                                         tfm_values(uv, 2, 2, CT_FLOAT32), &o, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected `attn_mask` shape to be (2, 4, 5) but got "
                "torch.Size([2, 4, 6])");
    o.attn_mask = NULL;
    CHECK(ct_transformer_encoder_layer_forward(m, x, NULL, NULL, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected a TransformerEncoderLayer module, got MultiheadAttention");
    CHECK(ct_transformer_encoder_new(m, 2, NULL) == NULL); /* takes m */
    CHECK_ERROR(CT_ERR_VALUE, "expected a TransformerEncoderLayer module, got MultiheadAttention");
    ct_module *dec = ct_transformer_decoder_layer_new(8, 2, NULL);
    CHECK(ct_module_forward(dec, x) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "TransformerDecoderLayer.forward() missing 1 required positional "
                "argument: 'memory'");
    ct_module_free(dec);
    ct_module *t = ct_transformer_new(8, 2, 1, 1, NULL);
    CHECK(ct_transformer_forward(t, x, tfm_values(s6, 3, 0, CT_FLOAT32), NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "the feature number of src and tgt must be equal to d_model");
    ct_module_free(t);
    ct_scope_end();
}

void test_transformer(void)
{
    RUN(test_transformer_init);
    RUN(test_transformer_mha_golden);
    RUN(test_transformer_layers_golden);
    RUN(test_transformer_gradcheck);
    RUN(test_transformer_threads);
    RUN(test_transformer_state_dict);
    RUN(test_transformer_errors);
}
