/* nn/transformer.c - MultiheadAttention and the Transformer layers: composites of existing ops
 * (no kernels), in the order of PyTorch's multi_head_attention_forward and transformer.py.
 *
 * Legend: L target length, S source length, N batch, E embed_dim, H heads, D = E / H head dim;
 * inside the attention everything is seq-first (L, N, E) as PyTorch's functional form.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "../core/scope.h"
#include "../ops/creation.h"
#include "../ops/linalg.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/softmax.h"
#include "../ops/view.h"
#include "../autograd/autograd.h"
#include "init.h"
#include "state_dict.h"
#include "module.h"
#include "norm.h"
#include "pad.h"
#include "activation.h"
#include "attention.h"
#include "transformer.h"

#include <math.h>
#include <string.h>

CT__GLUE_BEGIN

/* ---- shared helpers ------------------------------------------------------------------------ */
/* Whether m is a module named name (typed forwards); CT_ERR_VALUE otherwise. */
static bool ct__tfm_is(const char *fn, const ct_module *m, const char *name)
{
    const char *got = ct_module_name(m);
    bool ok = got && ct_module_user(m) && !strcmp(got, name);
    if (!ok) {
        ct__fail(CT_ERR_VALUE, fn, "expected a %s module, got %s", name, got ? got : "NULL");
    }
    return ok;
}

/* Whether an optional tensor argument (a mask) is bad: freed or foreign under CTORCH_DEBUG
   (NULL is fine). */
static bool ct__tfm_bad(const char *fn, const ct_tensor *a, const ct_tensor *b)
{
    return (a && ct__null(fn, a)) || (b && ct__null(fn, b));
}

/* ct__tfm_bad for the masks of a Transformer forward's options (NULL: none). */
static bool ct__tfm_bad_opts(const char *fn, const ct_transformer_forward_opts *o)
{
    return o && (ct__tfm_bad(fn, o->src_mask, o->tgt_mask) ||
                 ct__tfm_bad(fn, o->memory_mask, o->src_key_padding_mask) ||
                 ct__tfm_bad(fn, o->tgt_key_padding_mask, o->memory_key_padding_mask));
}

/* "torch.Size([3, 4])" of the first nd sizes. */
static const char *ct__tfm_size(const int64_t *s, int nd, char *buf, size_t n)
{
    char shape[200];
    snprintf(buf, n, "torch.Size(%s)", ct__shape_str(s, nd, shape, sizeof shape));
    return buf;
}

/* A new module of type name with a copy of the cfg_size bytes at cfg as its user data. */
static ct_module *ct__tfm_module(const char *name, ct_module_forward_fn forward, const void *cfg,
                                 size_t cfg_size)
{
    void *u = ct__malloc(cfg_size);
    ct_module *m = u ? ct_module_new(name, forward, u, ct__free) : NULL;
    if (!m) {
        if (!u) {
            ct__fail(CT_ERR_OOM, name, "out of memory");
        }
        ct__free(u);
        return NULL;
    }
    memcpy(u, cfg, cfg_size);
    return m;
}

/* Registers child as name on m; false when child is NULL or the registration failed (child
   freed). */
static bool ct__tfm_add(ct_module *m, const char *name, ct_module *child)
{
    if (child && ct_module_register_module(m, name, child) != CT_OK) {
        ct_module_free(child);
        return false;
    }
    return child != NULL;
}

/* Registers a new zero float32 parameter of shape s on m; returns it (borrowed) or NULL. */
static ct_tensor *ct__tfm_param(ct_module *m, const char *name, int64_t s0, int64_t s1, int nd)
{
    int64_t s[3] = {1, s0, s1};
    ct_tensor *t = ct__tensor_new(name, s + 3 - nd, nd, CT_FLOAT32);
    bool ok = t && ct_init_zeros_(t) && ct_module_register_parameter(m, name, t) == CT_OK;
    ct__release(t); /* the module holds it */
    return ok ? t : NULL;
}

/* PyTorch's _canonical_mask: a bool mask as 0 / -inf of dtype dt, a floating one as is.
   False (CT_ERR_DTYPE) for other dtypes. */
static bool ct__tfm_canonical(const char *fn, const char *name, const ct_tensor **mask,
                              ct_dtype dt)
{
    const ct_tensor *t = *mask;
    if (!t || ct_is_floating_point(t)) {
        return true;
    }
    if (t->dtype != CT_BOOL) {
        return ct__fail(CT_ERR_DTYPE, fn, "only bool and floating types of %s are supported",
                        name) == CT_OK;
    }
    *mask = ct_masked_fill(ct_zeros(t->sizes, t->ndim, dt), t, -INFINITY);
    return *mask != NULL;
}

/* PyTorch's _detect_is_causal_mask for a hint of None: whether mask (canonical) is (sz, sz) and
   equals the square subsequent mask (-inf above the diagonal, 0 elsewhere). */
static bool ct__tfm_detect_causal(const ct_tensor *mask, int64_t sz)
{
    if (!mask || mask->ndim != 2 || mask->sizes[0] != sz || mask->sizes[1] != sz) {
        return false;
    }
    int64_t s[2] = {sz, sz};
    return ct_equal(mask, ct_triu(ct_full(s, 2, -INFINITY, mask->dtype), 1));
}

/* ---- MultiheadAttention -------------------------------------------------------------------- */
typedef struct ct__mha_cfg {
    int64_t E, H, kdim, vdim;
    ct_multihead_attention_opts o;
} ct__mha_cfg;

/* The attention problem in seq-first layout after the shape checks. */
typedef struct ct__mha_args {
    const ct_tensor *q, *k, *v;       /* (L, N, E), (S, N, kdim), (S, N, vdim) */
    const ct_tensor *kpm, *mask;      /* canonical: (N, S); (L, S) or (N H, L, S); NULL */
    int64_t L, N, S;
    bool need_weights, average, causal;
    double p;                         /* dropout probability (0 in eval mode) */
} ct__mha_args;

ct_multihead_attention_opts ct_multihead_attention_defaults(void)
{
    ct_multihead_attention_opts o;
    memset(&o, 0, sizeof o);
    o.bias = true;
    return o;
}

ct_multihead_attention_forward_opts ct_multihead_attention_forward_defaults(void)
{
    ct_multihead_attention_forward_opts o;
    memset(&o, 0, sizeof o);
    o.need_weights = true;
    o.average_attn_weights = true;
    return o;
}

static ct_tensor *ct__mha_forward1(ct_module *m, const ct_tensor *x)
{
    ct_multihead_attention_forward_opts o = ct_multihead_attention_forward_defaults();
    o.need_weights = false;
    return ct_multihead_attention_forward(m, x, x, x, &o, NULL);
}

/* Registers the parameters and out_proj, drawing in PyTorch's order (out_proj's Linear init,
   xavier_uniform_ of the projections, xavier_normal_ of bias_k and bias_v). */
static bool ct__mha_params(ct_module *m, const ct__mha_cfg *c)
{
    int64_t E = c->E;
    bool packed = c->kdim == E && c->vdim == E;
    ct_tensor *w[3] = {NULL, NULL, NULL}, *bkv[2] = {NULL, NULL};
    if (packed) {
        w[0] = ct__tfm_param(m, "in_proj_weight", 3 * E, E, 2);
    } else {
        w[0] = ct__tfm_param(m, "q_proj_weight", E, E, 2);
        w[1] = ct__tfm_param(m, "k_proj_weight", E, c->kdim, 2);
        w[2] = ct__tfm_param(m, "v_proj_weight", E, c->vdim, 2);
    }
    bool ok = w[0] && (packed || (w[1] && w[2]));
    ok = ok && (!c->o.bias || ct__tfm_param(m, "in_proj_bias", 0, 3 * E, 1));
    if (ok && c->o.add_bias_kv) {
        bkv[0] = ct__tfm_param(m, "bias_k", 1, E, 3);
        bkv[1] = ct__tfm_param(m, "bias_v", 1, E, 3);
        ok = bkv[0] && bkv[1];
    }
    ok = ok && ct__tfm_add(m, "out_proj", ct_linear_new(E, E, c->o.bias));
    for (int i = 0; i < 3 && ok; i++) {
        ok = !w[i] || ct_init_xavier_uniform_(w[i], 1.0, NULL);
    }
    if (ok && c->o.bias) {
        ct_init_zeros_(ct_module_get_parameter(m, "out_proj.bias"));
    }
    for (int i = 0; i < 2 && ok; i++) {
        ok = !bkv[i] || ct_init_xavier_normal_(bkv[i], 1.0, NULL);
    }
    return ok;
}

ct_module *ct_multihead_attention_new(int64_t embed_dim, int64_t num_heads,
                                      const ct_multihead_attention_opts *opts)
{
    const char *fn = "MultiheadAttention";
    ct__mha_cfg c;
    c.o = opts ? *opts : ct_multihead_attention_defaults();
    c.E = embed_dim;
    c.H = num_heads;
    if (embed_dim <= 0 || num_heads <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "embed_dim and num_heads must be greater than 0, got "
                 "embed_dim=%lld and num_heads=%lld instead", (long long)embed_dim,
                 (long long)num_heads);
        return NULL;
    }
    if (embed_dim % num_heads != 0) {
        ct__fail(CT_ERR_VALUE, fn, "embed_dim must be divisible by num_heads");
        return NULL;
    }
    if (c.o.kdim < 0 || c.o.vdim < 0) {
        ct__fail(CT_ERR_VALUE, fn, "kdim and vdim must be >= 0 (0: None), got %lld",
                 (long long)(c.o.kdim < 0 ? c.o.kdim : c.o.vdim));
        return NULL;
    }
    c.kdim = c.o.kdim ? c.o.kdim : embed_dim;
    c.vdim = c.o.vdim ? c.o.vdim : embed_dim;
    ct_module *m = ct__tfm_module(fn, ct__mha_forward1, &c, sizeof c);
    if (m && !ct__mha_params(m, &c)) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

/* PyTorch's _mha_shape_check: 1 batched, 0 unbatched, -1 on error. */
static int ct__mha_shape_check(const char *fn, const ct_tensor *q, const ct_tensor *k,
                               const ct_tensor *v, const ct_tensor *kpm, const ct_tensor *mask,
                               int64_t H)
{
    char b[240];
    int nd = q->ndim;
    if (nd != 2 && nd != 3) {
        ct__fail(CT_ERR_SHAPE, fn, "query should be unbatched 2D or batched 3D tensor but "
                 "received %d-D query tensor", nd);
        return -1;
    }
    const char *kind = nd == 3 ? "batched (3-D)" : "unbatched (2-D)";
    if (k->ndim != nd || v->ndim != nd) {
        ct__fail(CT_ERR_SHAPE, fn, "For %s `query`, expected `key` and `value` to be %d-D but "
                 "found %d-D and %d-D tensors respectively", kind, nd, k->ndim, v->ndim);
        return -1;
    }
    if (kpm && kpm->ndim != nd - 1) {
        ct__fail(CT_ERR_SHAPE, fn, "For %s `query`, expected `key_padding_mask` to be `None` "
                 "or %d-D but found %d-D tensor instead", kind, nd - 1, kpm->ndim);
        return -1;
    }
    if (mask && mask->ndim != 2 && mask->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, fn, "For %s `query`, expected `attn_mask` to be `None`, 2-D or "
                 "3-D but found %d-D tensor instead", kind, mask->ndim);
        return -1;
    }
    if (nd == 2 && mask && mask->ndim == 3 &&
        (mask->sizes[0] != H || mask->sizes[1] != q->sizes[0] || mask->sizes[2] != k->sizes[0])) {
        ct__fail(CT_ERR_SHAPE, fn, "Expected `attn_mask` shape to be (%lld, %lld, %lld) but got "
                 "%s", (long long)H, (long long)q->sizes[0], (long long)k->sizes[0],
                 ct__tfm_size(mask->sizes, 3, b, sizeof b));
        return -1;
    }
    return nd == 3;
}

/* The checks of multi_head_attention_forward on the seq-first (3-D) inputs: the embedding
   dim, key against value, the separate projections' weights and the attn_mask's shape. */
static bool ct__mha_check(const char *fn, const ct_module *m, const ct__mha_cfg *c,
                          const ct__mha_args *a)
{
    char b1[240], b2[240];
    const ct_tensor *k = a->k, *v = a->v, *mask = a->mask;
    bool packed = ct_module_get_parameter(m, "in_proj_weight") != NULL;
    int64_t E = a->q->sizes[2], L = a->L, S = a->S;
    if (E != c->E) {
        return ct__fail(CT_ERR_SHAPE, fn, "was expecting embedding dimension of %lld, but got "
                        "%lld", (long long)c->E, (long long)E) == CT_OK;
    }
    if (memcmp(k->sizes, v->sizes, sizeof(int64_t) * (packed ? 3 : 2)) != 0) {
        return ct__fail(CT_ERR_SHAPE, fn, packed ? "key shape %s does not match value shape %s"
                        : "key's sequence and batch dims %s do not match value's %s",
                        ct__tfm_size(k->sizes, packed ? 3 : 2, b1, sizeof b1),
                        ct__tfm_size(v->sizes, packed ? 3 : 2, b2, sizeof b2)) == CT_OK;
    }
    const int64_t dims[2] = {c->kdim, c->vdim};
    const ct_tensor *kv[2] = {k, v};
    for (int i = 0; i < 2 && !packed; i++) {
        if (kv[i]->sizes[2] != dims[i]) {
            int64_t s[2] = {E, dims[i]};
            return ct__fail(CT_ERR_SHAPE, fn, "expecting %s weights shape of (%lld, %lld), but "
                            "got %s", i ? "value" : "key", (long long)E,
                            (long long)kv[i]->sizes[2], ct__tfm_size(s, 2, b1, sizeof b1)) ==
                   CT_OK;
        }
    }
    if (!mask) {
        return true;
    }
    int64_t want[3] = {a->N * c->H, L, S};
    int nd = mask->ndim;
    if (memcmp(mask->sizes, want + 3 - nd, sizeof(int64_t) * (size_t)nd) != 0) {
        return ct__fail(CT_ERR_SHAPE, fn, nd == 2 ? "The shape of the 2D attn_mask is %s, but "
                        "should be (%lld, %lld)." : "The shape of the 3D attn_mask is %s, but "
                        "should be (%lld, %lld, %lld).", ct__tfm_size(mask->sizes, nd, b1,
                        sizeof b1), (long long)want[3 - nd], (long long)want[4 - nd],
                        (long long)want[2]) == CT_OK;
    }
    return true;
}

/* Rows i E .. (i + n) E of a packed weight or bias (NULL stays NULL). */
static ct_tensor *ct__mha_rows(const ct_tensor *t, int64_t i, int64_t n, int64_t E)
{
    return t ? ct_narrow(t, 0, i * E, n * E) : NULL;
}

/* The projected q, k, v into qkv[0..2]: PyTorch's _in_projection (separate weights) or
   _in_projection_packed, whose shared linear of identical inputs is computed here as one
   linear per row block of in_proj_weight (the same products; the backward then avoids
   scattering three slices of a (L, N, 3E) gradient). */
static void ct__mha_in_proj(const ct_module *m, const ct__mha_args *a, int64_t E,
                            ct_tensor **qkv)
{
    static const char *const names[3] = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};
    const ct_tensor *w = ct_module_get_parameter(m, "in_proj_weight");
    const ct_tensor *b = ct_module_get_parameter(m, "in_proj_bias");
    const ct_tensor *in[3] = {a->q, a->k, a->v};
    for (int i = 0; i < 3; i++) {
        const ct_tensor *wi = w ? ct__mha_rows(w, i, 1, E) : ct_module_get_parameter(m, names[i]);
        qkv[i] = ct_linear(in[i], wi, ct__mha_rows(b, i, 1, E));
    }
}

/* Appends a zero column to the last dim of a mask (NULL stays NULL). */
static const ct_tensor *ct__mha_pad1(const ct_tensor *mask)
{
    int64_t pad[2] = {0, 1};
    return mask ? ct_pad(mask, pad, 2, CT_PAD_CONSTANT, 0) : NULL;
}

/* softmax(q k^T / sqrt(D) + mask) @ v with the weights (PyTorch's need_weights path):
   q (N H, L, D), k, v (N H, S, D) -> (N H, L, D); *w (N H, L, S). */
static ct_tensor *ct__mha_math(const ct_tensor *q, const ct_tensor *k, const ct_tensor *v,
                               const ct_tensor *mask, double p, ct_tensor **w)
{
    if (!q) { /* an op failed: its error is pending */
        return NULL;
    }
    ct_tensor *qs = ct_mul_scalar(q, sqrt(1.0 / (double)q->sizes[2]));
    ct_tensor *s = ct_bmm(qs, ct_transpose(k, -2, -1));
    s = ct_softmax(mask ? ct_add(mask, s) : s, -1);
    *w = p > 0 ? ct_dropout(s, p, true) : s;
    return ct_bmm(*w, v);
}

/* PyTorch's key_padding_mask step: checks kpm (N, S) and adds it, as (N H, 1, S), to *mask
   (or makes it the mask). */
static bool ct__mha_merge_kpm(const ct_tensor *kpm, int64_t N, int64_t H, int64_t S,
                              const ct_tensor **mask)
{
    if (kpm->sizes[0] != N || kpm->sizes[1] != S) {
        int i = kpm->sizes[0] != N ? 0 : 1;
        return ct__fail(CT_ERR_SHAPE, "ct_multihead_attention_forward", "Expected "
                        "key_padded_mask.shape[%d] to be %lld, but got %lld", i,
                        (long long)(i ? S : N), (long long)kpm->sizes[i]) == CT_OK;
    }
    int64_t s4[4] = {N, 1, 1, S}, e4[4] = {N, H, 1, S}, s3[3] = {N * H, 1, S};
    ct_tensor *kp = ct_reshape(ct_expand(ct_reshape(kpm, s4, 4), e4, 4), s3, 3);
    *mask = *mask ? ct_add(*mask, kp) : kp;
    return true;
}

/* The fused path (need_weights false): q (N H, L, D), k, v (N H, S, D), mask (1 or N H, L or 1,
   S) viewed as (N, H, L, D) ... for ct_scaled_dot_product_attention; returns (L, N, H, D). */
static ct_tensor *ct__mha_fused(const ct_tensor *q, const ct_tensor *k, const ct_tensor *v,
                                const ct_tensor *mask, const ct__mha_args *a, int64_t N,
                                int64_t H)
{
    if (!q || !k || !v) { /* an op failed: its error is pending */
        return NULL;
    }
    int64_t D = q->sizes[2], L = a->L, S = k->sizes[1];
    int64_t sq[4] = {N, H, L, D}, skv[4] = {N, H, S, D}, perm[4] = {2, 0, 1, 3};
    int64_t sm[4] = {N, H, mask ? mask->sizes[1] : 0, S};
    if (mask) {
        mask = mask->sizes[0] == 1 ? ct_unsqueeze(mask, 0) : ct_reshape(mask, sm, 4);
    }
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    o.dropout_p = a->p;
    o.is_causal = a->causal;
    return ct_permute(ct_scaled_dot_product_attention(ct_reshape(q, sq, 4), ct_reshape(k, skv, 4),
                                                      ct_reshape(v, skv, 4), mask, &o),
                      perm, 4);
}

/* The attention after the projections: heads, bias_kv, zero_attn, masks, then the math path
   (need_weights) or the fused kernel; returns (L N, E) before out_proj, *w (N, H, L, S'). */
static ct_tensor *ct__mha_attend(const ct_module *m, const ct__mha_cfg *c, ct__mha_args *a,
                                 ct_tensor **qkv, ct_tensor **w)
{
    int64_t L = a->L, N = a->N, S = a->S, H = c->H, D = c->E / c->H, NH = N * H;
    const ct_tensor *bk = ct_module_get_parameter(m, "bias_k");
    const ct_tensor *mask = a->mask && a->mask->ndim == 2 ? ct_unsqueeze(a->mask, 0) : a->mask;
    const ct_tensor *kpm = a->kpm;
    if (bk) {
        int64_t rep[3] = {1, N, 1};
        const ct_tensor *kk[2] = {qkv[1], ct_repeat(bk, rep, 3)};
        const ct_tensor *vv[2] = {qkv[2], ct_repeat(ct_module_get_parameter(m, "bias_v"), rep, 3)};
        qkv[1] = ct_cat(kk, 2, 0);
        qkv[2] = ct_cat(vv, 2, 0);
        mask = ct__mha_pad1(mask);
        kpm = ct__mha_pad1(kpm);
        S++;
    }
    int64_t sq[3] = {L, NH, D}, skv[3] = {S, NH, D};
    ct_tensor *q = ct_transpose(ct_reshape(qkv[0], sq, 3), 0, 1);
    ct_tensor *k = ct_transpose(ct_reshape(qkv[1], skv, 3), 0, 1);
    ct_tensor *v = ct_transpose(ct_reshape(qkv[2], skv, 3), 0, 1);
    if (c->o.add_zero_attn) {
        int64_t z[3] = {NH, 1, D};
        ct_tensor *zero = ct_zeros(z, 3, qkv[0] ? qkv[0]->dtype : CT_FLOAT32);
        const ct_tensor *kk[2] = {k, zero}, *vv[2] = {v, zero};
        k = ct_cat(kk, 2, 1);
        v = ct_cat(vv, 2, 1);
        mask = ct__mha_pad1(mask);
        kpm = ct__mha_pad1(kpm);
        S++;
    }
    if (kpm && !ct__mha_merge_kpm(kpm, N, H, S, &mask)) {
        return NULL;
    }
    ct_tensor *o = a->need_weights ? ct_transpose(ct__mha_math(q, k, v, mask, a->p, w), 0, 1)
                                   : ct__mha_fused(q, k, v, mask, a, N, H);
    int64_t so2[2] = {L * N, c->E}, sw[4] = {N, H, L, S};
    *w = *w ? ct_reshape(*w, sw, 4) : NULL;
    return ct_reshape(o, so2, 2);
}

/* The seq-first attention (PyTorch's multi_head_attention_forward after the shape check):
   output (L, N, E), *w (N, H, L, S') or averaged (N, L, S'). */
static ct_tensor *ct__mha_run(const char *fn, const ct_module *m, ct__mha_args *a,
                              ct_tensor **w)
{
    const ct__mha_cfg *c = (const ct__mha_cfg *)ct_module_user(m);
    ct_dtype dt = a->q->dtype;
    if (!ct__tfm_canonical(fn, "key_padding_mask", &a->kpm, dt)) {
        return NULL;
    }
    if (a->causal && !a->mask) {
        ct__fail(CT_ERR_VALUE, fn, "Need attn_mask if specifying the is_causal hint. You may use "
                 "the Transformer module method `generate_square_subsequent_mask` to create "
                 "this mask.");
        return NULL;
    }
    if (a->causal && !a->kpm && !a->need_weights) {
        a->mask = NULL;
    } else {
        if (!ct__tfm_canonical(fn, "attn_mask", &a->mask, dt)) {
            return NULL;
        }
        a->causal = a->causal && !a->kpm;
    }
    if (!ct__mha_check(fn, m, c, a)) {
        return NULL;
    }
    ct_tensor *qkv[3];
    ct__mha_in_proj(m, a, c->E, qkv);
    ct_tensor *o = ct__mha_attend(m, c, a, qkv, w);
    int64_t s3[3] = {a->L, a->N, c->E};
    o = ct_reshape(ct_linear(o, ct_module_get_parameter(m, "out_proj.weight"),
                             ct_module_get_parameter(m, "out_proj.bias")), s3, 3);
    if (*w && a->average) {
        *w = ct_mean_dim(*w, 1, false);
    }
    return o;
}

/* An input in seq-first batched layout (L, N, E): transposed (batch_first; one contiguous copy
   that the projections of a shared input share) or unsqueezed. */
static const ct_tensor *ct__mha_seq_first(const ct_tensor *t, bool batched, bool batch_first)
{
    return batch_first ? ct_contiguous(ct_transpose(t, 0, 1)) : batched ? t : ct_unsqueeze(t, 1);
}

ct_tensor *ct_multihead_attention_forward(ct_module *m, const ct_tensor *query,
                                          const ct_tensor *key, const ct_tensor *value,
                                          const ct_multihead_attention_forward_opts *opts,
                                          ct_tensor **attn_weights)
{
    const char *fn = "ct_multihead_attention_forward";
    if (attn_weights) {
        *attn_weights = NULL;
    }
    if (ct__null(fn, m) || ct__null(fn, query) || ct__null(fn, key) || ct__null(fn, value) ||
        (opts && ct__tfm_bad(fn, opts->key_padding_mask, opts->attn_mask)) ||
        !ct__tfm_is(fn, m, "MultiheadAttention")) {
        return NULL;
    }
    const ct__mha_cfg *c = (const ct__mha_cfg *)ct_module_user(m);
    ct_multihead_attention_forward_opts o = opts ? *opts
                                                 : ct_multihead_attention_forward_defaults();
    int batched = ct__mha_shape_check(fn, query, key, value, o.key_padding_mask, o.attn_mask,
                                      c->H);
    if (batched < 0) {
        return NULL;
    }
    ct_scope_begin();
    ct__mha_args a;
    bool bf = batched && c->o.batch_first;
    a.q = ct__mha_seq_first(query, batched, bf);
    a.k = key == query ? a.q : ct__mha_seq_first(key, batched, bf);
    a.v = value == key ? a.k : ct__mha_seq_first(value, batched, bf);
    a.kpm = o.key_padding_mask && !batched ? ct_unsqueeze(o.key_padding_mask, 0)
                                           : o.key_padding_mask;
    a.mask = o.attn_mask;
    a.L = query->sizes[bf ? 1 : 0];
    a.S = key->sizes[bf ? 1 : 0];
    a.N = batched ? query->sizes[c->o.batch_first ? 0 : 1] : 1;
    a.need_weights = o.need_weights;
    a.average = o.average_attn_weights;
    a.causal = o.is_causal;
    a.p = ct_module_is_training(m) ? c->o.dropout : 0.0;
    ct_tensor *w = NULL;
    ct_tensor *out = a.q && a.k && a.v ? ct__mha_run(fn, m, &a, &w) : NULL;
    if (out && !batched) {
        out = ct_squeeze_dim(out, 1);
        w = w ? ct_squeeze_dim(w, 0) : NULL;
    } else if (out && c->o.batch_first) {
        out = ct_transpose(out, 0, 1);
    }
    out = ct_keep(out);
    w = out && w && attn_weights ? ct_keep(w) : NULL;
    ct_scope_end();
    if (attn_weights) {
        *attn_weights = w;
    }
    return out;
}

/* ---- Transformer layers ---------------------------------------------------------------------- */
typedef struct ct__tfm_layer_cfg {
    int64_t d_model, nhead;
    bool decoder;
    ct_transformer_layer_opts o;
} ct__tfm_layer_cfg;

/* A TransformerEncoder / TransformerDecoder: whether a final norm is registered. */
typedef struct ct__tfm_stack_cfg {
    bool norm;
} ct__tfm_stack_cfg;

ct_transformer_layer_opts ct_transformer_layer_defaults(void)
{
    ct_transformer_layer_opts o;
    memset(&o, 0, sizeof o);
    o.dim_feedforward = 2048;
    o.dropout = 0.1;
    o.activation = CT_TRANSFORMER_RELU;
    o.layer_norm_eps = 1e-5;
    o.bias = true;
    return o;
}

static ct_tensor *ct__tfm_enc_layer_forward1(ct_module *m, const ct_tensor *src)
{
    return ct_transformer_encoder_layer_forward(m, src, NULL, NULL, false);
}

static ct_tensor *ct__tfm_enc_forward1(ct_module *m, const ct_tensor *src)
{
    return ct_transformer_encoder_forward(m, src, NULL, NULL, false);
}

/* The single-input forward of the modules that need two inputs: PyTorch's TypeError. */
static ct_tensor *ct__tfm_two_inputs(ct_module *m, const ct_tensor *input)
{
    (void)input;
    const char *name = ct_module_name(m);
    ct__fail(CT_ERR_VALUE, "ct_module_forward", "%s.forward() missing 1 required positional "
             "argument: '%s'", name, strcmp(name, "Transformer") ? "memory" : "tgt");
    return NULL;
}

/* The layers' submodules in PyTorch's order of creation (and so of initialization). */
static bool ct__tfm_layer_parts(ct_module *m, const ct__tfm_layer_cfg *c)
{
    const ct_transformer_layer_opts *o = &c->o;
    ct_multihead_attention_opts ao = ct_multihead_attention_defaults();
    ao.dropout = o->dropout;
    ao.bias = o->bias;
    ao.batch_first = o->batch_first;
    int64_t d = c->d_model, ff = o->dim_feedforward;
    bool ok = ct__tfm_add(m, "self_attn", ct_multihead_attention_new(d, c->nhead, &ao));
    ok = ok && (!c->decoder ||
                ct__tfm_add(m, "multihead_attn", ct_multihead_attention_new(d, c->nhead, &ao)));
    ok = ok && ct__tfm_add(m, "linear1", ct_linear_new(d, ff, o->bias)) &&
         ct__tfm_add(m, "dropout", ct_dropout_new(o->dropout)) &&
         ct__tfm_add(m, "linear2", ct_linear_new(ff, d, o->bias));
    static const char *const norms[3] = {"norm1", "norm2", "norm3"};
    static const char *const drops[3] = {"dropout1", "dropout2", "dropout3"};
    int n = c->decoder ? 3 : 2;
    for (int i = 0; i < n && ok; i++) {
        ok = ct__tfm_add(m, norms[i], ct_layer_norm_new(&d, 1, o->layer_norm_eps, true, o->bias));
    }
    for (int i = 0; i < n && ok; i++) {
        ok = ct__tfm_add(m, drops[i], ct_dropout_new(o->dropout));
    }
    return ok;
}

static ct_module *ct__tfm_layer_new(const char *name, int64_t d_model, int64_t nhead,
                                    const ct_transformer_layer_opts *opts, bool decoder)
{
    ct__tfm_layer_cfg c;
    c.d_model = d_model;
    c.nhead = nhead;
    c.decoder = decoder;
    c.o = opts ? *opts : ct_transformer_layer_defaults();
    if ((unsigned)c.o.activation > (unsigned)CT_TRANSFORMER_GELU) {
        ct__fail(CT_ERR_VALUE, name, "invalid activation %d", (int)c.o.activation);
        return NULL;
    }
    ct_module *m = ct__tfm_module(name, decoder ? ct__tfm_two_inputs : ct__tfm_enc_layer_forward1,
                                  &c, sizeof c);
    if (m && !ct__tfm_layer_parts(m, &c)) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

ct_module *ct_transformer_encoder_layer_new(int64_t d_model, int64_t nhead,
                                            const ct_transformer_layer_opts *opts)
{
    return ct__tfm_layer_new("TransformerEncoderLayer", d_model, nhead, opts, false);
}

ct_module *ct_transformer_decoder_layer_new(int64_t d_model, int64_t nhead,
                                            const ct_transformer_layer_opts *opts)
{
    return ct__tfm_layer_new("TransformerDecoderLayer", d_model, nhead, opts, true);
}

/* The named submodule's dropout (training mode) of x. */
static ct_tensor *ct__tfm_drop(ct_module *m, const char *name, const ct_tensor *x)
{
    return ct_dropout_forward(ct_module_get_submodule(m, name), x);
}

/* _sa_block / _mha_block: drop(attn(x, mem, mem)) without weights. */
static ct_tensor *ct__tfm_attn_block(ct_module *m, const char *attn, const char *drop,
                                     const ct_tensor *x, const ct_tensor *mem,
                                     const ct_tensor *mask, const ct_tensor *kpm, bool causal)
{
    ct_multihead_attention_forward_opts o = ct_multihead_attention_forward_defaults();
    o.key_padding_mask = kpm;
    o.need_weights = false;
    o.attn_mask = mask;
    o.is_causal = causal;
    return ct__tfm_drop(m, drop, ct_multihead_attention_forward(ct_module_get_submodule(m, attn),
                                                                x, mem, mem, &o, NULL));
}

/* _ff_block: drop(linear2(dropout(activation(linear1(x))))). */
static ct_tensor *ct__tfm_ff_block(ct_module *m, const char *drop, const ct_tensor *x)
{
    const ct__tfm_layer_cfg *c = (const ct__tfm_layer_cfg *)ct_module_user(m);
    ct_tensor *h = ct_linear_forward(ct_module_get_submodule(m, "linear1"), x);
    h = c->o.activation == CT_TRANSFORMER_GELU ? ct_gelu(h, CT_GELU_NONE) : ct_relu(h);
    h = ct_linear_forward(ct_module_get_submodule(m, "linear2"), ct__tfm_drop(m, "dropout", h));
    return ct__tfm_drop(m, drop, h);
}

/* The named LayerNorm of x. */
static ct_tensor *ct__tfm_norm(ct_module *m, const char *name, const ct_tensor *x)
{
    return ct_layer_norm_forward(ct_module_get_submodule(m, name), x);
}

/* One residual step: x + f(norm(x)) (norm_first) or norm(x + f(x)); block 0 self-attention,
   1 attention to mem, 2 feedforward. */
static ct_tensor *ct__tfm_residual(ct_module *m, int block, const char *norm, const char *drop,
                                   const ct_tensor *x, const ct_tensor *mem,
                                   const ct_tensor *mask, const ct_tensor *kpm, bool causal)
{
    const ct__tfm_layer_cfg *c = (const ct__tfm_layer_cfg *)ct_module_user(m);
    const ct_tensor *in = c->o.norm_first ? ct__tfm_norm(m, norm, x) : x;
    ct_tensor *f = block == 2 ? ct__tfm_ff_block(m, drop, in)
                   : ct__tfm_attn_block(m, block ? "multihead_attn" : "self_attn", drop, in,
                                        block ? mem : in, mask, kpm, causal);
    ct_tensor *r = ct_add(x, f);
    return c->o.norm_first ? r : ct__tfm_norm(m, norm, r);
}

ct_tensor *ct_transformer_encoder_layer_forward(ct_module *m, const ct_tensor *src,
                                                const ct_tensor *src_mask,
                                                const ct_tensor *src_key_padding_mask,
                                                bool is_causal)
{
    const char *fn = "ct_transformer_encoder_layer_forward";
    if (ct__null(fn, m) || ct__null(fn, src) ||
        ct__tfm_bad(fn, src_mask, src_key_padding_mask) ||
        !ct__tfm_is(fn, m, "TransformerEncoderLayer")) {
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *x = ct__tfm_residual(m, 0, "norm1", "dropout1", src, NULL, src_mask,
                                    src_key_padding_mask, is_causal);
    x = ct__tfm_residual(m, 2, "norm2", "dropout2", x, NULL, NULL, NULL, false);
    x = ct_keep(x);
    ct_scope_end();
    return x;
}

ct_tensor *ct_transformer_decoder_layer_forward(ct_module *m, const ct_tensor *tgt,
                                                const ct_tensor *memory,
                                                const ct_transformer_forward_opts *opts)
{
    const char *fn = "ct_transformer_decoder_layer_forward";
    if (ct__null(fn, m) || ct__null(fn, tgt) || ct__null(fn, memory) ||
        ct__tfm_bad_opts(fn, opts) || !ct__tfm_is(fn, m, "TransformerDecoderLayer")) {
        return NULL;
    }
    ct_transformer_forward_opts o;
    memset(&o, 0, sizeof o);
    o = opts ? *opts : o;
    ct_scope_begin();
    ct_tensor *x = ct__tfm_residual(m, 0, "norm1", "dropout1", tgt, NULL, o.tgt_mask,
                                    o.tgt_key_padding_mask, o.tgt_is_causal);
    x = ct__tfm_residual(m, 1, "norm2", "dropout2", x, memory, o.memory_mask,
                         o.memory_key_padding_mask, o.memory_is_causal);
    x = ct__tfm_residual(m, 2, "norm3", "dropout3", x, NULL, NULL, NULL, false);
    x = ct_keep(x);
    ct_scope_end();
    return x;
}

/* ---- TransformerEncoder / TransformerDecoder ------------------------------------------------ */
/* A copy of layer (copy.deepcopy): the same configuration, built without drawing from the
   generator, with layer's parameter values, dtype and training mode. */
static ct_module *ct__tfm_clone(const ct_module *layer)
{
    const ct__tfm_layer_cfg *c = (const ct__tfm_layer_cfg *)ct_module_user(layer);
    if (ct_fork_rng_begin() != CT_OK) {
        return NULL;
    }
    ct_module *r = ct__tfm_layer_new(ct_module_name(layer), c->d_model, c->nhead, &c->o,
                                     c->decoder);
    ct_fork_rng_end();
    ct_tensor *p = NULL;
    ct_module_parameters(layer, &p, 1);
    ct_state_dict *sd = r ? ct_module_state_dict(layer) : NULL;
    bool ok = sd && ct_module_to(r, p ? p->dtype : CT_FLOAT32) &&
              ct_module_load_state_dict(r, sd, true, NULL) == CT_OK;
    ct_state_dict_free(sd);
    if (!ok) {
        ct_module_free(r);
        return NULL;
    }
    ct_module_train(r, ct_module_is_training(layer));
    return r;
}

/* TransformerEncoder / TransformerDecoder (name) of num_layers copies of layer (of type
   layer_name) and norm; takes ownership of layer and norm. */
static ct_module *ct__tfm_stack_new(const char *name, const char *layer_name,
                                    ct_module_forward_fn forward, ct_module *layer,
                                    int64_t num_layers, ct_module *norm)
{
    ct__tfm_stack_cfg c;
    c.norm = norm != NULL;
    ct_module *m = NULL;
    if (ct__null(name, layer) || !ct__tfm_is(name, layer, layer_name)) {
        m = NULL;
    } else if (num_layers < 1) {
        ct__fail(CT_ERR_VALUE, name, "num_layers must be positive, got %lld",
                 (long long)num_layers);
    } else {
        m = ct__tfm_module(name, forward, &c, sizeof c);
    }
    ct_module *list = m ? ct_module_list_new() : NULL;
    bool ok = ct__tfm_add(m, "layers", list);
    for (int64_t i = 0; i < num_layers && ok; i++) {
        ok = ct_module_list_append(list, ct__tfm_clone(layer)) != NULL;
    }
    if (!ok) {
        ct_module_free(norm);
    } else if (norm) {
        ok = ct__tfm_add(m, "norm", norm);
    }
    if (!ok) {
        ct_module_free(m);
        m = NULL;
    }
    ct_module_free(layer);
    return m;
}

ct_module *ct_transformer_encoder_new(ct_module *layer, int64_t num_layers, ct_module *norm)
{
    return ct__tfm_stack_new("TransformerEncoder", "TransformerEncoderLayer",
                             ct__tfm_enc_forward1, layer, num_layers, norm);
}

ct_module *ct_transformer_decoder_new(ct_module *layer, int64_t num_layers, ct_module *norm)
{
    return ct__tfm_stack_new("TransformerDecoder", "TransformerDecoderLayer", ct__tfm_two_inputs,
                             layer, num_layers, norm);
}

/* The stack's layers (borrowed) and the hint for mask (canonical) over x's sequence length:
   PyTorch's _get_seq_len and _detect_is_causal_mask (is_causal false: None). */
static ct_module *ct__tfm_layers(ct_module *m, const ct_tensor *x, const ct_tensor *mask,
                                 bool *is_causal)
{
    ct_module *layers = ct_module_get_submodule(m, "layers");
    const ct__tfm_layer_cfg *c = (const ct__tfm_layer_cfg *)ct_module_user(
        ct_module_child(layers, 0));
    int64_t seq = x->sizes[x->ndim == 3 && c->o.batch_first ? 1 : 0];
    *is_causal = *is_causal || ct__tfm_detect_causal(mask, seq);
    return layers;
}

/* The final norm of a stack, if any. */
static ct_tensor *ct__tfm_final_norm(ct_module *m, ct_tensor *x)
{
    const ct__tfm_stack_cfg *c = (const ct__tfm_stack_cfg *)ct_module_user(m);
    return c->norm ? ct_module_forward(ct_module_get_submodule(m, "norm"), x) : x;
}

ct_tensor *ct_transformer_encoder_forward(ct_module *m, const ct_tensor *src,
                                          const ct_tensor *mask,
                                          const ct_tensor *src_key_padding_mask, bool is_causal)
{
    const char *fn = "ct_transformer_encoder_forward";
    if (ct__null(fn, m) || ct__null(fn, src) || ct__tfm_bad(fn, mask, src_key_padding_mask) ||
        !ct__tfm_is(fn, m, "TransformerEncoder")) {
        return NULL;
    }
    ct_scope_begin();
    const ct_tensor *kpm = src_key_padding_mask;
    ct_tensor *x = NULL;
    if (ct__tfm_canonical(fn, "src_key_padding_mask", &kpm, src->dtype) &&
        ct__tfm_canonical(fn, "mask", &mask, src->dtype)) {
        ct_module *layers = ct__tfm_layers(m, src, mask, &is_causal);
        x = (ct_tensor *)src;
        for (int64_t i = 0; i < ct_module_num_children(layers) && x; i++) {
            x = ct_transformer_encoder_layer_forward(ct_module_child(layers, i), x, mask, kpm,
                                                     is_causal);
        }
        x = x ? ct__tfm_final_norm(m, x) : NULL;
    }
    x = ct_keep(x);
    ct_scope_end();
    return x;
}

ct_tensor *ct_transformer_decoder_forward(ct_module *m, const ct_tensor *tgt,
                                          const ct_tensor *memory,
                                          const ct_transformer_forward_opts *opts)
{
    const char *fn = "ct_transformer_decoder_forward";
    if (ct__null(fn, m) || ct__null(fn, tgt) || ct__null(fn, memory) ||
        ct__tfm_bad_opts(fn, opts) || !ct__tfm_is(fn, m, "TransformerDecoder")) {
        return NULL;
    }
    ct_transformer_forward_opts o;
    memset(&o, 0, sizeof o);
    o = opts ? *opts : o;
    ct_scope_begin();
    const ct_tensor *causal_mask = o.tgt_mask;
    ct_tensor *x = NULL;
    if (ct__tfm_canonical(fn, "tgt_mask", &causal_mask, tgt->dtype)) {
        ct_module *layers = ct__tfm_layers(m, tgt, causal_mask, &o.tgt_is_causal);
        x = (ct_tensor *)tgt;
        for (int64_t i = 0; i < ct_module_num_children(layers) && x; i++) {
            x = ct_transformer_decoder_layer_forward(ct_module_child(layers, i), x, memory, &o);
        }
        x = x ? ct__tfm_final_norm(m, x) : NULL;
    }
    x = ct_keep(x);
    ct_scope_end();
    return x;
}

/* ---- Transformer ----------------------------------------------------------------------------- */
/* The encoder or decoder of nn.Transformer: num_layers layers and a final LayerNorm. */
static ct_module *ct__tfm_half(bool decoder, int64_t d_model, int64_t nhead, int64_t num_layers,
                               const ct_transformer_layer_opts *o)
{
    ct_module *layer = decoder ? ct_transformer_decoder_layer_new(d_model, nhead, o)
                               : ct_transformer_encoder_layer_new(d_model, nhead, o);
    ct_module *norm = layer ? ct_layer_norm_new(&d_model, 1, o->layer_norm_eps, true, o->bias)
                            : NULL;
    if (!norm) {
        ct_module_free(layer);
        return NULL;
    }
    return decoder ? ct_transformer_decoder_new(layer, num_layers, norm)
                   : ct_transformer_encoder_new(layer, num_layers, norm);
}

/* _reset_parameters: xavier_uniform_ of every parameter with more than one dim. */
static bool ct__tfm_xavier(ct_module *m)
{
    int64_t n = ct_module_parameters(m, NULL, 0);
    ct_tensor **p = (ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n);
    if (!p) {
        return ct__fail(CT_ERR_OOM, "Transformer", "out of memory") == CT_OK;
    }
    ct_module_parameters(m, p, n);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        ok = p[i]->ndim < 2 || ct_init_xavier_uniform_(p[i], 1.0, NULL);
    }
    ct__free(p);
    return ok;
}

ct_module *ct_transformer_new(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                              int64_t num_decoder_layers, const ct_transformer_layer_opts *opts)
{
    ct__tfm_layer_cfg c;
    c.d_model = d_model;
    c.nhead = nhead;
    c.decoder = false;
    c.o = opts ? *opts : ct_transformer_layer_defaults();
    ct_module *m = ct__tfm_module("Transformer", ct__tfm_two_inputs, &c, sizeof c);
    bool ok = m && ct__tfm_add(m, "encoder", ct__tfm_half(false, d_model, nhead,
                                                          num_encoder_layers, &c.o));
    ok = ok && ct__tfm_add(m, "decoder", ct__tfm_half(true, d_model, nhead, num_decoder_layers,
                                                      &c.o));
    if (!ok || !ct__tfm_xavier(m)) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

ct_tensor *ct_transformer_forward(ct_module *m, const ct_tensor *src, const ct_tensor *tgt,
                                  const ct_transformer_forward_opts *opts)
{
    const char *fn = "ct_transformer_forward";
    if (ct__null(fn, m) || ct__null(fn, src) || ct__null(fn, tgt) ||
        ct__tfm_bad_opts(fn, opts) || !ct__tfm_is(fn, m, "Transformer")) {
        return NULL;
    }
    const ct__tfm_layer_cfg *c = (const ct__tfm_layer_cfg *)ct_module_user(m);
    int b = c->o.batch_first ? 0 : 1;
    if (src->ndim == 3 && (tgt->ndim < 2 || src->sizes[b] != tgt->sizes[b])) {
        ct__fail(CT_ERR_SHAPE, fn, "the batch number of src and tgt must be equal");
        return NULL;
    }
    if (src->ndim < 1 || tgt->ndim < 1 || src->sizes[src->ndim - 1] != c->d_model ||
        tgt->sizes[tgt->ndim - 1] != c->d_model) {
        ct__fail(CT_ERR_SHAPE, fn, "the feature number of src and tgt must be equal to d_model");
        return NULL;
    }
    ct_transformer_forward_opts o;
    memset(&o, 0, sizeof o);
    o = opts ? *opts : o;
    ct_scope_begin();
    ct_tensor *mem = ct_transformer_encoder_forward(ct_module_get_submodule(m, "encoder"), src,
                                                    o.src_mask, o.src_key_padding_mask,
                                                    o.src_is_causal);
    ct_tensor *out = ct_keep(ct_transformer_decoder_forward(ct_module_get_submodule(m, "decoder"),
                                                            tgt, mem, &o));
    ct_scope_end();
    return out;
}

CT__GLUE_END
