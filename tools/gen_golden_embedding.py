#!/usr/bin/env python3
"""Writes tests/golden/embedding_golden.h: PyTorch's numbers for tests/test_embedding.c.

embedding: outputs and the weight gradient of sum(out * g) (float32 and float64; int64 and int32
indices of 1, 2 and 3 dims; a transposed weight and transposed indices; repeated indices;
padding_idx, negative too; max_norm with norm_type 2, 1 and inf (the weight after the call);
scale_grad_by_freq). embedding_bag: every mode with 2-D input and with 1-D input + offsets,
include_last_offset, per_sample_weights (and their gradient), padding_idx, empty bags,
scale_grad_by_freq, max_norm. The initial weights of nn.Embedding(10, 4, padding_idx=2) at seed
0 and nn.EmbeddingBag(7, 3) at seed 1.
Run with PyTorch installed: python3 tools/gen_golden_embedding.py
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "embedding_golden.h")
NONE = "INT64_MIN"


def values(n, k=0):
    v = torch.arange(n, dtype=torch.float64)
    return torch.sin(v * 1.3 + 0.7 + k) * 2 + torch.cos(v * 0.37) + 0.5 * k


def dbl(vals):
    return "{" + c_wrap([repr(float(v)) for v in (list(vals) or [0.0])], "      ", "}").lstrip()


def ints(vals):
    return "{" + c_wrap([str(int(v)) for v in (list(vals) or [0])], "      ", "}").lstrip()


def weight(V, D, dtype, transposed, k=0):
    """values(V * D) as (V, D); transposed: a (D, V) base transposed (base in row-major order)."""
    if transposed:
        base = values(V * D, k).reshape(D, V).to(dtype)
        return base.t(), base.flatten()
    w = values(V * D, k).reshape(V, D).to(dtype)
    return w, w.flatten()


def index(vals, shape, i32, transposed):
    """vals (row-major of shape, or of the reversed 2-D base when transposed)."""
    dt = torch.int32 if i32 else torch.int64
    if transposed:
        base = torch.tensor(vals, dtype=dt).reshape(shape[1], shape[0])
        return base.t(), base.flatten()
    t = torch.tensor(vals, dtype=dt).reshape(shape)
    return t, t.flatten()


def emb_case(V, D, f64, wt, ivals, ishape, i32=False, it=False, pad=None, max_norm=None,
             norm_type=2.0, scale=False):
    dtype = torch.float64 if f64 else torch.float32
    w, wbase = weight(V, D, dtype, wt)
    leaf = (w.t() if wt else w).detach().clone().requires_grad_(True)
    w = leaf.t() if wt else leaf
    ix, ibase = index(ivals, ishape, i32, it)
    out = F.embedding(ix, w, padding_idx=pad, max_norm=max_norm, norm_type=norm_type,
                      scale_grad_by_freq=scale)
    g = values(out.numel(), 3).reshape(out.shape).to(dtype)
    (out * g).sum().backward()
    dw = leaf.grad.t() if wt else leaf.grad
    after = w.detach()
    fields = [str(V), str(D), str(int(f64)), str(int(wt)), str(len(ishape)),
              ints(list(ishape) + [0] * (3 - len(ishape))), str(int(i32)), str(int(it)),
              ints(ibase.tolist()), NONE if pad is None else str(pad),
              "NAN" if max_norm is None else repr(max_norm),
              "INFINITY" if math.isinf(norm_type) else repr(norm_type), str(int(scale)),
              dbl(wbase.tolist()), dbl(out.detach().flatten().tolist()),
              dbl(dw.contiguous().flatten().tolist()),
              dbl(after.contiguous().flatten().tolist())]
    return "    {" + ",\n     ".join(fields) + "},"


def bag_case(V, D, f64, ivals, ishape, offsets=None, mode="mean", psw=False, last=False,
             pad=None, scale=False, max_norm=None):
    dtype = torch.float64 if f64 else torch.float32
    w = values(V * D, 1).reshape(V, D).to(dtype).requires_grad_(True)
    ix = torch.tensor(ivals, dtype=torch.int64).reshape(ishape)
    off = torch.tensor(offsets, dtype=torch.int64) if offsets is not None else None
    p = (values(ix.numel(), 2) * 0.5).reshape(ishape).to(dtype).requires_grad_(True) \
        if psw else None
    w_arg = w.detach().clone().requires_grad_(True) if max_norm is not None else w
    out = F.embedding_bag(ix, w_arg, off, max_norm=max_norm, scale_grad_by_freq=scale,
                          mode=mode, per_sample_weights=p, include_last_offset=last,
                          padding_idx=pad)
    g = values(out.numel(), 4).reshape(out.shape).to(dtype)
    (out * g).sum().backward()
    fields = [str(V), str(D), str(int(f64)), str(len(ishape)), ints(list(ishape) + [0] * (2 - len(ishape))),
              ints(ivals), str(len(offsets) if offsets is not None else -1),
              ints(offsets or []), '"%s"' % mode, str(int(psw)), str(int(last)),
              NONE if pad is None else str(pad), str(int(scale)),
              "NAN" if max_norm is None else repr(max_norm), str(out.shape[0]),
              dbl(out.detach().flatten().tolist()), dbl(w_arg.grad.flatten().tolist()),
              dbl(p.grad.flatten().tolist() if psw else [])]
    return "    {" + ",\n     ".join(fields) + "},"


def main():
    r = [0, 3, 3, 7, 1, 0, 5, 3, 9, 2, 7, 7]  # repeated indices
    emb = [
        emb_case(10, 4, False, False, r[:6], [6]),
        emb_case(10, 4, True, False, r, [3, 4]),
        emb_case(10, 5, False, True, r, [2, 3, 2], i32=True),
        emb_case(10, 4, True, True, r, [3, 4], it=True),
        emb_case(10, 3, False, False, r, [4, 3], i32=True, it=True, pad=3),
        emb_case(10, 4, True, False, r, [12], pad=-3),
        emb_case(10, 4, False, False, r, [3, 4], scale=True),
        emb_case(10, 4, True, False, r, [3, 4], scale=True, pad=7),
        emb_case(10, 4, False, False, r[:8], [8], max_norm=1.5),
        emb_case(10, 4, True, True, r, [3, 4], max_norm=2.0, norm_type=1.0),
        emb_case(10, 4, False, False, r, [12], max_norm=1.0, norm_type=float("inf")),
        emb_case(10, 6, True, False, r[:5], [5], max_norm=0.5, norm_type=3.0),
    ]
    iv = [1, 4, 4, 2, 0, 6, 3, 3, 5, 1, 2, 6]
    bag = []
    for mode in ("sum", "mean", "max"):
        for f64 in (False, True):
            bag.append(bag_case(7, 3, f64, iv, [3, 4], mode=mode))
            bag.append(bag_case(7, 3, f64, iv, [12], [0, 3, 3, 8, 12], mode=mode))
        bag.append(bag_case(7, 3, False, iv, [12], [0, 5, 5, 12], mode=mode, last=True))
        bag.append(bag_case(7, 3, True, iv, [12], [0, 2, 7], mode=mode, pad=3))
        bag.append(bag_case(7, 3, False, iv, [3, 4], mode=mode, pad=-1))
        bag.append(bag_case(7, 3, True, [3, 3, 1, 3], [4], [0, 2, 2], mode=mode, pad=3))
    bag.append(bag_case(7, 3, False, iv, [12], [0, 4, 4, 10], mode="sum", psw=True))
    bag.append(bag_case(7, 3, True, iv, [3, 4], mode="sum", psw=True, pad=2))
    bag.append(bag_case(7, 3, True, iv, [12], [0, 4, 12], mode="sum", psw=True, last=True))
    bag.append(bag_case(7, 3, False, iv, [12], [0, 3, 9], mode="mean", scale=True))
    bag.append(bag_case(7, 3, True, iv, [3, 4], mode="sum", scale=True))
    bag.append(bag_case(7, 3, True, iv, [12], [0, 6], mode="max", max_norm=1.2))
    torch.manual_seed(0)
    e = nn.Embedding(10, 4, padding_idx=2).weight.detach().flatten().tolist()
    torch.manual_seed(1)
    b = nn.EmbeddingBag(7, 3).weight.detach().flatten().tolist()
    with open(OUT, "w") as f:
        f.write("/* GENERATED by tools/gen_golden_embedding.py (PyTorch %s) - do not edit. */\n"
                % torch.__version__)
        f.write("""#include <stdint.h>

typedef struct emb_golden {
    int64_t V, D;
    int f64, wt; /* wt: weight is the transpose of a (D, V) base */
    int nd;
    int64_t shape[3];
    int i32, it; /* it: indices are the transpose of a 2-D base of the reversed shape */
    int64_t idx[12]; /* the indices' base, row-major */
    int64_t padding_idx;
    double max_norm, norm_type;
    int scale;
    double w[60], out[72], dw[60], after[60]; /* w: the base; dw, after: (V, D) */
} emb_golden;

typedef struct bag_golden {
    int64_t V, D;
    int f64, nd;
    int64_t shape[2];
    int64_t idx[12];
    int n_off; /* -1: no offsets */
    int64_t off[5];
    const char *mode;
    int psw, last;
    int64_t padding_idx;
    int scale;
    double max_norm;
    int64_t B;
    double out[15], dw[21], dpsw[12];
} bag_golden;

""")
        f.write("static const emb_golden emb_cases[] = {\n" + "\n".join(emb) + "\n};\n\n")
        f.write("static const bag_golden bag_cases[] = {\n" + "\n".join(bag) + "\n};\n\n")
        f.write("/* torch.manual_seed(0); nn.Embedding(10, 4, padding_idx=2).weight */\n")
        f.write("static const double emb_init_golden[40] = " + dbl(e) + ";\n")
        f.write("/* torch.manual_seed(1); nn.EmbeddingBag(7, 3).weight */\n")
        f.write("static const double bag_init_golden[21] = " + dbl(b) + ";\n")


if __name__ == "__main__":
    main()
