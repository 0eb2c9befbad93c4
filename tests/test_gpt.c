/* tests/test_gpt.c - the in-suite version of tools/cross_check_gpt.py: a tiny version of
 * examples/gpt.c's model (token + position embeddings, pre-LayerNorm blocks with causal
 * self-attention through scaled_dot_product_attention and a GELU MLP, weight tying) built from
 * the library's modules, trained with AdamW in two parameter groups, LambdaLR (warmup +
 * cosine) and gradient clipping step by step against PyTorch (tools/gen_golden_gpt.py,
 * tests/golden/gpt_golden.h): nanoGPT's initialization from the default generator, every
 * step's loss in float64, float32 and float32 with dropout (the same masks), and the tokens
 * sampled with a KV cache per layer (topk, softmax, multinomial) after training, the cache
 * restarting when full.
 */
#include "test.h"

#include "golden/gpt_golden.h"

#include <stdlib.h>

#define GPT_PARAMS ((int64_t)(sizeof gpt_init / sizeof gpt_init[0] / 2))

typedef struct gpt_run {
    ct_module *model;
    ct_optimizer *opt;
    ct_lr_scheduler *sched;
    ct_tensor *params[GPT_PARAMS];
    double dropout;
} gpt_run;

static ct_module *gpt_sub(const ct_module *m, const char *path)
{
    return ct_module_get_submodule(m, path);
}

static ct_tensor *gpt_drop(const ct_module *m, const ct_tensor *x)
{
    double p = *(const double *)ct_module_user(m);
    return p > 0 ? ct_dropout(x, p, ct_module_is_training(m)) : (ct_tensor *)x;
}

/* x (B, T, C): c_proj(sdpa(q, k, v)) with the keys and values through cache when given. */
static ct_tensor *gpt_attention(ct_module *attn, const ct_tensor *x, ct_kv_cache *cache)
{
    int64_t b = ct_size(x, 0), t = ct_size(x, 1), hs[4] = {b, t, GPT_HEADS,
                                                          GPT_WIDTH / GPT_HEADS};
    int64_t merged[3] = {b, t, GPT_WIDTH};
    ct_tensor *qkv[3], *k, *v;
    CHECK(ct_split(ct_linear_forward(gpt_sub(attn, "c_attn"), x), GPT_WIDTH, 2, qkv, 3) == 3);
    for (int i = 0; i < 3; i++) {
        qkv[i] = ct_transpose(ct_reshape(qkv[i], hs, 4), 1, 2);
    }
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    o.is_causal = !cache || ct_kv_cache_size(cache) == 0;
    o.dropout_p = ct_module_is_training(attn) ? *(const double *)ct_module_user(attn) : 0.0;
    k = qkv[1];
    v = qkv[2];
    if (cache) {
        CHECK(ct_kv_cache_update(cache, qkv[1], qkv[2], &k, &v) == CT_OK);
    }
    ct_tensor *y = ct_scaled_dot_product_attention(qkv[0], k, v, NULL, &o);
    y = ct_reshape(ct_transpose(y, 1, 2), merged, 3);
    return gpt_drop(attn, ct_linear_forward(gpt_sub(attn, "c_proj"), y));
}

static ct_tensor *gpt_attention_single(ct_module *m, const ct_tensor *x)
{
    return gpt_attention(m, x, NULL);
}

static ct_tensor *gpt_mlp(ct_module *m, const ct_tensor *x)
{
    ct_tensor *h = ct_gelu(ct_linear_forward(gpt_sub(m, "c_fc"), x), CT_GELU_NONE);
    return gpt_drop(m, ct_linear_forward(gpt_sub(m, "c_proj"), h));
}

static ct_tensor *gpt_block(ct_module *blk, const ct_tensor *x, ct_kv_cache *cache)
{
    x = ct_add(x, gpt_attention(gpt_sub(blk, "attn"),
                                ct_layer_norm_forward(gpt_sub(blk, "ln_1"), x), cache));
    return ct_add(x, gpt_mlp(gpt_sub(blk, "mlp"), ct_layer_norm_forward(gpt_sub(blk, "ln_2"), x)));
}

static ct_tensor *gpt_block_single(ct_module *m, const ct_tensor *x)
{
    return gpt_block(m, x, NULL);
}

/* Logits (B, T, V) of idx (B, T) at positions pos0 ..; caches: one per layer or NULL. */
static ct_tensor *gpt_logits(ct_module *m, const ct_tensor *idx, int64_t pos0,
                             ct_kv_cache *const *caches)
{
    ct_tensor *pos = ct_arange((double)pos0, (double)(pos0 + ct_size(idx, 1)), 1, CT_INT64);
    ct_tensor *x = ct_add(ct_embedding_forward(gpt_sub(m, "transformer.wte"), idx),
                          ct_embedding_forward(gpt_sub(m, "transformer.wpe"), pos));
    x = gpt_drop(m, x);
    for (int64_t l = 0; l < GPT_LAYERS; l++) {
        x = gpt_block(ct_module_child(gpt_sub(m, "transformer.h"), l), x,
                      caches ? caches[l] : NULL);
    }
    x = ct_layer_norm_forward(gpt_sub(m, "transformer.ln_f"), x);
    return ct_linear(x, ct_module_get_parameter(m, "transformer.wte.weight"), NULL);
}

static ct_tensor *gpt_single(ct_module *m, const ct_tensor *idx)
{
    return gpt_logits(m, idx, 0, NULL);
}

static ct_module *gpt_layer_norm(void)
{
    int64_t w = GPT_WIDTH;
    return ct_layer_norm_new(&w, 1, 1e-5, true, true);
}

/* nn.Module construction order as tools/cross_check_gpt.py's GPT, so the default
   initializations draw the same stream; user data: the dropout probability. */
static ct_module *gpt_model(double *dropout)
{
    ct_module *m = ct_module_new("GPT", gpt_single, dropout, NULL);
    ct_module *tr = ct_module_dict_new(), *h = ct_module_list_new();
    ct_module_dict_set(tr, "wte", ct_embedding_new(GPT_VOCAB, GPT_WIDTH, NULL));
    ct_module_dict_set(tr, "wpe", ct_embedding_new(GPT_BLOCK, GPT_WIDTH, NULL));
    for (int l = 0; l < GPT_LAYERS; l++) {
        ct_module *blk = ct_module_new("Block", gpt_block_single, dropout, NULL);
        ct_module *attn = ct_module_new("CausalSelfAttention", gpt_attention_single, dropout,
                                        NULL);
        ct_module *mlp = ct_module_new("MLP", gpt_mlp, dropout, NULL);
        ct_module_register_module(blk, "ln_1", gpt_layer_norm());
        ct_module_register_module(attn, "c_attn", ct_linear_new(GPT_WIDTH, 3 * GPT_WIDTH, true));
        ct_module_register_module(attn, "c_proj", ct_linear_new(GPT_WIDTH, GPT_WIDTH, true));
        ct_module_register_module(blk, "attn", attn);
        ct_module_register_module(blk, "ln_2", gpt_layer_norm());
        ct_module_register_module(mlp, "c_fc", ct_linear_new(GPT_WIDTH, 4 * GPT_WIDTH, true));
        ct_module_register_module(mlp, "c_proj", ct_linear_new(4 * GPT_WIDTH, GPT_WIDTH, true));
        ct_module_register_module(blk, "mlp", mlp);
        ct_module_list_append(h, blk);
    }
    ct_module_dict_set(tr, "h", h);
    ct_module_dict_set(tr, "ln_f", gpt_layer_norm());
    ct_module_register_module(m, "transformer", tr);
    return m;
}

/* nanoGPT's initialization in named_parameters order (as the example's gpt_init). */
static void gpt_init_weights(ct_module *m)
{
    char store[GPT_PARAMS][96], *names[GPT_PARAMS];
    ct_tensor *p[GPT_PARAMS];
    for (int i = 0; i < GPT_PARAMS; i++) {
        names[i] = store[i];
    }
    CHECK(ct_module_named_parameters(m, names, 96, p, GPT_PARAMS) == GPT_PARAMS);
    ct_no_grad_begin();
    for (int i = 0; i < GPT_PARAMS; i++) {
        size_t n = strlen(names[i]);
        if (strstr(names[i], "ln_")) {
            continue;
        }
        if (!strcmp(names[i] + n - 5, ".bias")) {
            ct_init_zeros_(p[i]);
        } else if (n >= 13 && !strcmp(names[i] + n - 13, "c_proj.weight")) {
            ct_init_normal_(p[i], 0.0, 0.02 / sqrt(2.0 * GPT_LAYERS), NULL);
        } else {
            ct_init_normal_(p[i], 0.0, 0.02, NULL);
        }
    }
    ct_no_grad_end();
}

/* LambdaLR's factor: warmup, then cosine from 1 to 0.1 (the example's lr_factor). */
static double gpt_lr_factor(int64_t e, int64_t group, void *user)
{
    (void)group;
    (void)user;
    if (e < GPT_WARMUP) {
        return (double)(e + 1) / (double)(GPT_WARMUP + 1);
    }
    double ratio = (double)(e - GPT_WARMUP) / (double)(GPT_STEPS - GPT_WARMUP);
    double coeff = 0.5 * (1.0 + cos(3.141592653589793 * (ratio < 1 ? ratio : 1.0)));
    return 0.1 + coeff * (1.0 - 0.1);
}

static void gpt_setup(gpt_run *r, ct_dtype dtype, double dropout)
{
    double sums[2 * GPT_PARAMS];
    ct_tensor *decay[GPT_PARAMS], *no_decay[GPT_PARAMS];
    int64_t nd = 0, nn = 0;
    r->dropout = dropout;
    ct_manual_seed(GPT_SEED);
    r->model = gpt_model(&r->dropout);
    gpt_init_weights(r->model);
    CHECK(ct_module_parameters(r->model, r->params, GPT_PARAMS) == GPT_PARAMS);
    ct_scope_begin();
    for (int i = 0; i < GPT_PARAMS; i++) {
        ct_tensor *d = ct_to_dtype(r->params[i], CT_FLOAT64);
        sums[2 * i] = ct_item(ct_sum(d));
        sums[2 * i + 1] = ct_item(ct_sum(ct_abs(d)));
        if (ct_dim(r->params[i]) >= 2) {
            decay[nd++] = r->params[i];
        } else {
            no_decay[nn++] = r->params[i];
        }
    }
    ct_scope_end();
    CHECK_CLOSE(sums, gpt_init, 2 * GPT_PARAMS, 1e-12, 1e-12);
    ct_module_to(r->model, dtype);
    ct_adam_opts a = ct_adamw_defaults();
    a.lr = 1e-2;
    a.betas[1] = 0.99;
    a.weight_decay = 0.1;
    r->opt = ct_adamw_new(decay, nd, &a);
    a.weight_decay = 0.0;
    CHECK(ct_optimizer_add_param_group(r->opt, no_decay, nn, &a) == CT_OK);
    r->sched = ct_lambda_lr_new(r->opt, gpt_lr_factor, NULL);
    ct_manual_seed(GPT_SEED);
    CHECK(r->model && r->opt && r->sched && !ct_error());
}

static void gpt_free(gpt_run *r)
{
    ct_lr_scheduler_free(r->sched);
    ct_optimizer_free(r->opt);
    ct_module_free(r->model);
}

/* One step on windows at offsets torch.randint(LEN - T, (B,)) of the token sequence
   (i * 7 + (i / 5)^2) mod V; returns the loss. */
static double gpt_step(gpt_run *r)
{
    int64_t b = GPT_BATCH, buf[2][GPT_BATCH * GPT_BLOCK], s[2] = {GPT_BATCH, GPT_BLOCK}, n = -1;
    ct_scope_begin();
    ct_tensor *off = ct_randint(0, GPT_LEN - GPT_BLOCK, &b, 1, CT_INT64, NULL);
    const int64_t *o = (const int64_t *)ct_data_ptr(off);
    for (int i = 0; i < GPT_BATCH; i++) {
        for (int j = 0; j < GPT_BLOCK; j++) {
            for (int k = 0; k < 2; k++) {
                int64_t at = o[i] + j + k;
                buf[k][i * GPT_BLOCK + j] = (at * 7 + (at / 5) * (at / 5)) % GPT_VOCAB;
            }
        }
    }
    ct_tensor *x = ct_tensor_from_data(buf[0], CT_INT64, s, 2);
    ct_tensor *y = ct_tensor_from_data(buf[1], CT_INT64, s, 2);
    ct_tensor *logits = gpt_logits(r->model, x, 0, NULL);
    int64_t flat[2] = {-1, GPT_VOCAB};
    ct_tensor *loss = ct_cross_entropy(ct_view(logits, flat, 2), ct_view(y, &n, 1), NULL);
    ct_optimizer_zero_grad(r->opt, true);
    ct_backward(loss, NULL, false);
    ct_clip_grad_norm_(r->params, GPT_PARAMS, 1.0, 2.0, false);
    ct_optimizer_step(r->opt);
    ct_lr_scheduler_step(r->sched);
    double l = ct_item(loss);
    ct_scope_end();
    return l;
}

static void gpt_train(ct_dtype dtype, double dropout, const double *want, double tol)
{
    gpt_run r;
    double losses[GPT_STEPS];
    gpt_setup(&r, dtype, dropout);
    ct_module_train(r.model, true);
    for (int s = 0; s < GPT_STEPS; s++) {
        losses[s] = gpt_step(&r);
    }
    CHECK_CLOSE(losses, want, GPT_STEPS, tol, 0);
    gpt_free(&r);
}

static void gpt_trains_as_pytorch_float64(void)
{
    gpt_train(CT_FLOAT64, 0.0, gpt_losses64, 1e-10);
}

static void gpt_trains_as_pytorch_float32(void)
{
    gpt_train(CT_FLOAT32, 0.0, gpt_losses32, 1e-5);
}

static void gpt_trains_as_pytorch_dropout(void)
{
    gpt_train(CT_FLOAT32, 0.1, gpt_losses_dropout, 1e-5);
}

/* A token from logits (V): / temperature, top-k, softmax, multinomial (the example's). */
static int64_t gpt_sample(const ct_tensor *logits)
{
    ct_tensor *values, *indices;
    CHECK(ct_topk(ct_div_scalar(logits, GPT_TEMPERATURE), GPT_TOP_K, -1, true, true, &values,
                  &indices) == CT_OK);
    int64_t j = ct_item_int64(ct_multinomial(ct_softmax(values, -1), 1, false, NULL));
    return ct_item_int64(ct_select(indices, 0, j));
}

/* After the float32 training: GEN tokens after token 0, a KV cache per layer, restarted from
   the last T/2 tokens when full (the example's generate), as PyTorch's. */
static void gpt_kv_cache_sample_as_pytorch(void)
{
    gpt_run r;
    int64_t seq[GPT_GEN + 1] = {0}, len = 1, start = 0, pos0 = 0;
    ct_kv_cache *caches[GPT_LAYERS];
    gpt_setup(&r, CT_FLOAT32, 0.0);
    ct_module_train(r.model, true);
    for (int s = 0; s < GPT_STEPS; s++) {
        gpt_step(&r);
    }
    for (int l = 0; l < GPT_LAYERS; l++) {
        caches[l] = ct_kv_cache_new(1, GPT_BLOCK, GPT_HEADS, GPT_WIDTH / GPT_HEADS, CT_FLOAT32);
    }
    ct_module_eval(r.model);
    ct_no_grad_begin();
    ct_manual_seed(GPT_SAMPLE_SEED);
    for (int i = 0; i < GPT_GEN; i++) {
        ct_scope_begin();
        int64_t s[2] = {1, len - start};
        ct_tensor *logits = gpt_logits(r.model, ct_tensor_from_data(seq + start, CT_INT64, s, 2),
                                       pos0, caches);
        seq[len++] = gpt_sample(ct_select(ct_select(logits, 0, 0), 0, s[1] - 1));
        if (ct_kv_cache_size(caches[0]) == GPT_BLOCK) {
            for (int l = 0; l < GPT_LAYERS; l++) {
                ct_kv_cache_reset(caches[l]);
            }
            start = len - GPT_BLOCK / 2;
            pos0 = 0;
        } else {
            start = len - 1;
            pos0 = ct_kv_cache_size(caches[0]);
        }
        ct_scope_end();
    }
    ct_no_grad_end();
    CHECK(!memcmp(seq + 1, gpt_tokens, sizeof gpt_tokens));
    for (int l = 0; l < GPT_LAYERS; l++) {
        ct_kv_cache_free(caches[l]);
    }
    gpt_free(&r);
}

void test_gpt(void)
{
    RUN(gpt_trains_as_pytorch_float64);
    RUN(gpt_trains_as_pytorch_float32);
    RUN(gpt_trains_as_pytorch_dropout);
    RUN(gpt_kv_cache_sample_as_pytorch);
}
