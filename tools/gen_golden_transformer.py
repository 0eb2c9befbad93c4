"""tools/gen_golden_transformer.py - golden values of nn.MultiheadAttention and the Transformer
layers from PyTorch for tests/test_transformer.c. Writes tests/golden/transformer_golden.h.

- Initial weights: torch.manual_seed(seed) + the constructor; per parameter (named_parameters
  order) its name, numel, and two sequential float64 sums (sum p_i and sum p_i * (i % 7 + 1)).
- MultiheadAttention forwards: every mask kind (attn_mask 2-D / 3-D, bool / float,
  key_padding_mask bool / float, is_causal), batch_first, unbatched, kdim/vdim, bias off,
  add_bias_kv, add_zero_attn, need_weights averaged / per head, query/key/value shared or
  distinct, dropout in training mode with a seed; the output, the weights, the gradients of the
  inputs and of the parameters (concatenated in named_parameters order) of
  loss = sum(out * values(5)) + sum(weights * values(6)).
- Layers: TransformerEncoderLayer (post/pre-norm, relu/gelu), TransformerEncoder of 2 layers with
  a final norm, TransformerDecoderLayer, TransformerDecoder, Transformer; same results.

Inputs are values(n, k) = 0.5 * (sin(1.3 i + 0.7 + k) * 2 + cos(0.37 i) + 0.5 k), reshaped;
a bool mask is values(n, 4) > 0.3 with column 0 False (no fully masked row), a float mask
values(n, 4) * 0.5; a causal mask is generate_square_subsequent_mask. Parameters come from
torch.manual_seed(seed) + the constructor (converted with .double() for float64 cases).
"""
import os
import warnings

import numpy as np
import torch
import torch.nn as nn

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "transformer_golden.h")


def values(n, k):
    i = np.arange(n, dtype=np.float64)
    return 0.5 * (np.sin(i * 1.3 + 0.7 + k) * 2 + np.cos(i * 0.37) + 0.5 * k)


def tensor(shape, k, dt):
    return torch.tensor(values(int(np.prod(shape)), k)).reshape(shape).to(dt)


def mask(kind, shape, dt):
    """kind 1 bool (True = masked), 2 float, 3 causal (float -inf above the diagonal)."""
    n = int(np.prod(shape))
    if kind == 1:
        m = torch.tensor(values(n, 4) > 0.3).reshape(shape)
        m[..., 0] = False
        return m
    if kind == 2:
        return tensor(shape, 4, dt) * 0.5
    if kind == 3:
        return nn.Transformer.generate_square_subsequent_mask(shape[-1], dtype=dt)
    return None


def seq_sums(t):
    s = w = 0.0
    for i, x in enumerate(t.detach().double().flatten().tolist()):
        s += x
        w += x * (i % 7 + 1)
    return s, w


def arr(name, t, f32):
    vals = [num(float(x), 9 if f32 else 17) for x in t.detach().double().flatten().tolist()]
    if not vals:
        vals = ["0"]
    return "static const double %s[%d] = {\n%s\n};\n" % (name, len(vals),
                                                          c_wrap(vals, "    ", "", 100))


def step_of(n):
    return 1 if n <= 40 else 3 if n <= 120 else 11


# ---- initial weights --------------------------------------------------------------------------
INITS = [
    ("mha", 1, lambda: nn.MultiheadAttention(8, 2)),
    ("mha_kv", 2, lambda: nn.MultiheadAttention(8, 4, kdim=5, vdim=6, add_bias_kv=True)),
    ("mha_nobias", 3, lambda: nn.MultiheadAttention(6, 3, bias=False, add_bias_kv=True)),
    ("enc_layer", 4, lambda: nn.TransformerEncoderLayer(8, 2, 16)),
    ("dec_layer", 5, lambda: nn.TransformerDecoderLayer(8, 2, 16, bias=False)),
    ("encoder", 6, lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2,
                                                 nn.LayerNorm(8), enable_nested_tensor=False)),
    ("transformer", 7, lambda: nn.Transformer(8, 2, 2, 1, 16)),
]


def init_rows(out):
    rows = []
    for name, seed, ctor in INITS:
        torch.manual_seed(seed)
        m = ctor()
        ents = []
        for pn, p in m.named_parameters():
            s, w = seq_sums(p)
            ents.append("    {\"%s\", %d, %s, %s}," % (pn, p.numel(), num(s), num(w)))
        out.append("static const transformer_param_sum tfm_init_%s[] = {\n%s\n};\n"
                   % (name, "\n".join(ents)))
        rows.append("    {\"%s\", %d, %d, tfm_init_%s}," % (name, seed, len(ents), name))
    out.append("static const transformer_init_golden tfm_inits[] = {\n%s\n};\n"
               % "\n".join(rows))


# ---- MultiheadAttention ------------------------------------------------------------------------
# name, f64, E, H, kdim, vdim, bias, bias_kv, zero_attn, batch_first, L, S, N (0: unbatched),
# qkv (0 same, 1 k is v, 2 distinct), need_weights, average, is_causal, mask kind, mask nd,
# kpm kind, dropout (training mode when > 0), seed
MHA = [
    ("self32", 0, 8, 2, 0, 0, 1, 0, 0, 0, 5, 5, 2, 0, 1, 1, 0, 0, 2, 0, 0.0, 1),
    ("self64_fused", 1, 8, 2, 0, 0, 1, 0, 0, 0, 5, 5, 2, 0, 0, 1, 0, 0, 2, 0, 0.0, 1),
    ("bf_cross_bool2d", 0, 8, 2, 0, 0, 1, 0, 0, 1, 3, 4, 2, 1, 0, 1, 0, 1, 2, 0, 0.0, 2),
    ("kvdim_float3d_heads", 1, 8, 2, 5, 6, 1, 0, 0, 0, 3, 4, 2, 2, 1, 0, 0, 2, 3, 0, 0.0, 3),
    ("kpm_bool_weights", 1, 8, 4, 0, 0, 1, 0, 0, 1, 3, 4, 2, 1, 1, 1, 0, 0, 2, 1, 0.0, 4),
    ("kpm_float_mask_float", 1, 8, 2, 0, 0, 1, 0, 0, 0, 3, 4, 2, 2, 0, 1, 0, 2, 2, 2, 0.0, 5),
    ("biaskv_zeroattn", 1, 8, 2, 0, 0, 1, 1, 1, 0, 3, 4, 2, 1, 0, 1, 0, 1, 3, 1, 0.0, 6),
    ("biaskv_zeroattn_w", 1, 6, 3, 0, 0, 0, 1, 1, 1, 3, 4, 2, 2, 1, 0, 0, 2, 2, 1, 0.0, 7),
    ("causal_fused", 0, 8, 2, 0, 0, 1, 0, 0, 1, 6, 6, 2, 0, 0, 1, 1, 3, 2, 0, 0.0, 8),
    ("causal_weights", 1, 8, 2, 0, 0, 1, 0, 0, 0, 6, 6, 2, 0, 1, 1, 1, 3, 2, 0, 0.0, 8),
    ("causal_kpm", 1, 8, 2, 0, 0, 1, 0, 0, 0, 6, 6, 2, 0, 0, 1, 1, 3, 2, 1, 0.0, 8),
    ("unbatched", 1, 8, 2, 0, 0, 1, 0, 0, 1, 3, 4, 0, 2, 1, 0, 0, 1, 3, 1, 0.0, 9),
    ("unbatched_fused", 0, 8, 2, 3, 0, 1, 0, 0, 0, 3, 4, 0, 2, 0, 1, 0, 2, 2, 2, 0.0, 9),
    ("dropout_weights", 0, 8, 2, 0, 0, 1, 0, 0, 0, 4, 5, 2, 1, 1, 1, 0, 0, 2, 0, 0.3, 10),
    ("dropout_fused", 1, 8, 2, 0, 0, 1, 0, 0, 1, 4, 5, 2, 1, 0, 1, 0, 1, 2, 0, 0.4, 11),
]


def mha_run(c):
    (name, f64, E, H, kd, vd, bias, bkv, za, bf, L, S, N, qkv, nw, avg, causal, mk, mnd, kk,
     p, seed) = c
    dt = torch.float64 if f64 else torch.float32
    torch.manual_seed(seed)
    m = nn.MultiheadAttention(E, H, dropout=p, bias=bool(bias), add_bias_kv=bool(bkv),
                              add_zero_attn=bool(za), kdim=kd or None, vdim=vd or None,
                              batch_first=bool(bf)).to(dt)
    m.train(p > 0)

    def shp(T, D):
        if N == 0:
            return (T, D)
        return (N, T, D) if bf else (T, N, D)
    q = tensor(shp(L, E), 0, dt).requires_grad_()
    k = q if qkv == 0 else tensor(shp(S, kd or E), 1, dt).requires_grad_()
    v = k if qkv <= 1 else tensor(shp(S, vd or E), 2, dt).requires_grad_()
    am = None
    if mk:
        am = mask(mk, (L, S) if mnd == 2 else ((N or 1) * H, L, S), dt)
    kpm = mask(kk, (N, S) if N else (S,), dt) if kk else None
    torch.manual_seed(seed + 100)
    o, w = m(q, k, v, key_padding_mask=kpm, need_weights=bool(nw), attn_mask=am,
             average_attn_weights=bool(avg), is_causal=bool(causal))
    loss = (o * tensor(o.shape, 5, dt)).sum()
    if w is not None:
        loss = loss + (w * tensor(w.shape, 6, dt)).sum()
    loss.backward()
    grads = [q.grad] + ([k.grad] if qkv >= 1 else []) + ([v.grad] if qkv >= 2 else [])
    dparams = torch.cat([pp.grad.flatten() for _, pp in m.named_parameters()])
    return o, w, grads, dparams


def mha_rows(out):
    rows = []
    for c in MHA:
        name, f64 = c[0], c[1]
        o, w, grads, dp = mha_run(c)
        f32 = not f64
        w = w if w is not None else torch.zeros(0)
        din = torch.cat([g.flatten() for g in grads])
        res = [o.flatten(), w.flatten(), din, dp]
        steps = [step_of(t.numel()) for t in res]
        res = [t[::st] for t, st in zip(res, steps)]
        for tag, t in zip(("out", "w", "din", "dparams"), res):
            out.append(arr("tfm_mha_%s_%s" % (name, tag), t, f32))
        cfg = ", ".join(repr(x) for x in c[1:])
        steps = ", ".join(str(x) for x in steps)
        rows.append("    {\"%s\", %s,\n     %d, tfm_mha_%s_out, %d, tfm_mha_%s_w, %d, "
                    "tfm_mha_%s_din, %d, tfm_mha_%s_dparams, {%s}},"
                    % (name, cfg, res[0].numel(), name, res[1].numel(), name, res[2].numel(),
                       name, res[3].numel(), name, steps))
    out.append("static const transformer_mha_golden tfm_mha_cases[] = {\n%s\n};\n"
               % "\n".join(rows))


# ---- layers ----------------------------------------------------------------------------------
# name, kind (0 encoder layer, 1 encoder of 2 layers + norm, 2 decoder layer, 3 decoder of 2
# layers + norm, 4 Transformer 2 + 1 layers), f64, d, nhead, ff, gelu, norm_first, batch_first,
# bias, S (src / memory length), T (tgt length), N, self mask kind (1 bool, 2 float, 3 causal),
# is_causal hint, kpm kind (src / memory key padding), dropout (training when > 0), seed
LAYERS = [
    ("enc_post_relu", 0, 0, 8, 2, 16, 0, 0, 0, 1, 5, 0, 2, 1, 0, 1, 0.0, 21),
    ("enc_pre_gelu", 0, 1, 8, 2, 16, 1, 1, 1, 1, 5, 0, 2, 3, 1, 0, 0.0, 22),
    ("enc_nobias_float", 0, 1, 8, 4, 12, 0, 0, 1, 0, 4, 0, 3, 2, 0, 2, 0.0, 23),
    ("encoder2", 1, 1, 8, 2, 16, 0, 0, 0, 1, 5, 0, 2, 3, 0, 0, 0.0, 24),
    ("encoder2_kpm", 1, 0, 8, 2, 16, 1, 1, 1, 1, 5, 0, 2, 0, 0, 1, 0.0, 25),
    ("dec_post", 2, 1, 8, 2, 16, 0, 0, 0, 1, 5, 4, 2, 3, 1, 1, 0.0, 26),
    ("dec_pre_bf", 2, 0, 8, 2, 16, 1, 1, 1, 1, 5, 4, 2, 1, 0, 2, 0.0, 27),
    ("decoder2", 3, 1, 8, 2, 16, 0, 1, 1, 1, 5, 4, 2, 3, 0, 1, 0.0, 28),
    ("transformer", 4, 1, 8, 2, 16, 0, 0, 0, 1, 5, 4, 2, 3, 0, 1, 0.0, 29),
    ("enc_dropout", 0, 0, 8, 2, 16, 0, 0, 1, 1, 5, 0, 2, 0, 0, 0, 0.2, 30),
]


def layer_module(c):
    (name, kind, f64, d, h, ff, gelu, nf, bf, bias, S, T, N, mk, hint, kk, p, seed) = c
    kw = dict(dim_feedforward=ff, dropout=p, activation="gelu" if gelu else "relu",
              batch_first=bool(bf), norm_first=bool(nf), bias=bool(bias))
    if kind == 0:
        return nn.TransformerEncoderLayer(d, h, **kw)
    if kind == 1:
        return nn.TransformerEncoder(nn.TransformerEncoderLayer(d, h, **kw), 2,
                                     nn.LayerNorm(d, bias=bool(bias)),
                                     enable_nested_tensor=False)
    if kind == 2:
        return nn.TransformerDecoderLayer(d, h, **kw)
    if kind == 3:
        return nn.TransformerDecoder(nn.TransformerDecoderLayer(d, h, **kw), 2,
                                     nn.LayerNorm(d, bias=bool(bias)))
    return nn.Transformer(d, h, 2, 1, **kw)


def layer_run(c):
    (name, kind, f64, d, h, ff, gelu, nf, bf, bias, S, T, N, mk, hint, kk, p, seed) = c
    dt = torch.float64 if f64 else torch.float32
    torch.manual_seed(seed)
    m = layer_module(c).to(dt)
    m.train(p > 0)

    def shp(L):
        return (N, L, d) if bf else (L, N, d)
    src = tensor(shp(S), 0, dt).requires_grad_()
    tgt = tensor(shp(T), 1, dt).requires_grad_() if kind >= 2 else None
    L = T if kind >= 2 else S
    sm = mask(mk, (L, L), dt) if mk else None
    kpm = mask(kk, (N, S), dt) if kk else None
    torch.manual_seed(seed + 100)
    if kind == 0:
        o = m(src, src_mask=sm, src_key_padding_mask=kpm, is_causal=bool(hint))
    elif kind == 1:
        o = m(src, mask=sm, src_key_padding_mask=kpm, is_causal=True if hint else None)
    elif kind == 2:
        o = m(tgt, src, tgt_mask=sm, memory_key_padding_mask=kpm, tgt_is_causal=bool(hint))
    elif kind == 3:
        o = m(tgt, src, tgt_mask=sm, memory_key_padding_mask=kpm,
              tgt_is_causal=True if hint else None)
    else:
        o = m(src, tgt, tgt_mask=sm, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)
    (o * tensor(o.shape, 5, dt)).sum().backward()
    din = src.grad.flatten() if tgt is None else torch.cat([tgt.grad.flatten(),
                                                            src.grad.flatten()])
    dparams = torch.cat([pp.grad.flatten() for _, pp in m.named_parameters()])
    return o, din, dparams


def layer_rows(out):
    rows = []
    for c in LAYERS:
        name, f64 = c[0], c[2]
        o, din, dp = layer_run(c)
        f32 = not f64
        so, sd, sp = step_of(o.numel()), step_of(din.numel()), step_of(dp.numel())
        out.append(arr("tfm_layer_%s_out" % name, o.flatten()[::so], f32))
        out.append(arr("tfm_layer_%s_din" % name, din[::sd], f32))
        out.append(arr("tfm_layer_%s_dparams" % name, dp[::sp], f32))
        rows.append("    {\"%s\", %s,\n     %d, tfm_layer_%s_out, %d, tfm_layer_%s_din, %d, "
                    "tfm_layer_%s_dparams, %d, %d, %d}," % (name, ", ".join(repr(x) for x in c[1:]),
                                                          o.flatten()[::so].numel(), name,
                                                          din[::sd].numel(), name,
                                                          dp[::sp].numel(), name, so, sd, sp))
    out.append("static const transformer_layer_golden tfm_layer_cases[] = {\n%s\n};\n"
               % "\n".join(rows))


HEADER = """typedef struct transformer_param_sum {
    const char *name;
    int64_t numel;
    double sum, wsum; /* sum p_i and sum p_i (i % 7 + 1), sequential in float64 */
} transformer_param_sum;

typedef struct transformer_init_golden {
    const char *name;
    int seed, n;
    const transformer_param_sum *params;
} transformer_init_golden;

typedef struct transformer_mha_golden {
    const char *name;
    int f64, E, H, kdim, vdim, bias, bias_kv, zero_attn, batch_first, L, S, N;
    int qkv; /* 0 query = key = value, 1 key = value, 2 distinct */
    int need_weights, average, is_causal, mask_kind, mask_nd, kpm_kind;
    double dropout;
    int seed;
    int n_out;
    const double *out;
    int n_w;
    const double *w;
    int n_din; /* the distinct inputs' gradients, concatenated */
    const double *din;
    int n_dparams; /* the parameters' gradients, concatenated */
    const double *dparams;
    int step[4]; /* of out, w, din, dparams: every step-th element of each */
} transformer_mha_golden;

typedef struct transformer_layer_golden {
    const char *name;
    int kind, f64, d, nhead, ff, gelu, norm_first, batch_first, bias, S, T, N;
    int mask_kind, hint, kpm_kind;
    double dropout;
    int seed;
    int n_out;
    const double *out;
    int n_din; /* (tgt, then) src gradients */
    const double *din;
    int n_dparams;
    const double *dparams;
    int step_out, step_din, step_dparams;
} transformer_layer_golden;
"""


def main():
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    out = ["/* Generated by tools/gen_golden_transformer.py from PyTorch %s. Do not edit. */"
           % torch.__version__, "#ifndef TRANSFORMER_GOLDEN_H", "#define TRANSFORMER_GOLDEN_H",
           "", HEADER]
    init_rows(out)
    mha_rows(out)
    layer_rows(out)
    out.append("#endif")
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
