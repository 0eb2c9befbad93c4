#!/usr/bin/env python3
"""Writes tests/golden/index2_golden.h: PyTorch's numbers for tests/test_index2.c.

The views, copies and indexing ops of issue 7's second slice (repeat ... scatter_reduce) on
contiguous, transposed and step-sliced inputs, broadcast index tensors and masks, float32,
float64, int64 and bool, with the output and, for float cases, the gradients of sum(out * w)
for w[k] = k % 7 - 3 (w in out's contiguous order). List results (unbind, the splits) are
compared as their flattened pieces concatenated. In-place ops run on a clone of the input.
Inputs are rebuilt on the C side from the formulas of values0/values1.
Run with PyTorch installed: python3 tools/gen_golden_index2.py
"""
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "index2_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "i64": (torch.int64, "CT_INT64"), "b8": (torch.bool, "CT_BOOL")}
CONTIG, TRANSPOSED, STEP = 0, 1, 2
REDUCE = ["sum", "prod", "mean", "amax", "amin"]
MAX = {"idx": 24, "idx2": 8, "out": 96, "g0": 48, "g1": 48, "p": 10}


def values(n, first, dtype):
    """values0 (first) or values1: exact in every dtype, a few zeros."""
    k = torch.arange(n, dtype=torch.float64)
    v = (k * 7 % 19 - 9) * 0.25 if first else (k * 5 % 13 - 6) * 0.5
    if dtype == torch.bool:
        return v > 0
    if not dtype.is_floating_point:
        v = (k * 7 % 19 - 9) if first else (k * 5 % 13 - 6)
    return v.to(dtype)


def make_input(shape, dtype, how, first=True):
    """TRANSPOSED: the transpose of a contiguous base; STEP: every other element of a base
    whose last dim is twice as long."""
    if how == TRANSPOSED:
        base = list(reversed(shape))
    elif how == STEP:
        base = list(shape[:-1]) + [shape[-1] * 2]
    else:
        base = list(shape)
    n = 1
    for s in base:
        n *= s
    t = values(n, first, dtype).reshape(base)
    if how == TRANSPOSED:
        return t.t()
    if how == STEP:
        return t[..., ::2]
    return t


def num(v):
    return "%.17g" % v


def arr(items):
    return "{" + c_wrap([num(x) for x in items], "      ", "}").lstrip()


def ints(items):
    return "{" + ", ".join(str(int(x)) for x in items) + "}" if items else "{0}"


def run(op, x, y, idx, idx2, p, scalar):
    """PyTorch's result for the case (a tensor or a list of tensors)."""
    if op == "repeat":
        return x.repeat(*p)
    if op == "tile":
        return torch.tile(x, p)
    if op == "repeat_interleave":
        return torch.repeat_interleave(x, p[0], dim=p[1])
    if op == "flip":
        return torch.flip(x, p)
    if op == "fliplr":
        return torch.fliplr(x)
    if op == "flipud":
        return torch.flipud(x)
    if op == "roll":
        ns = p[0]
        dims = p[1 + ns:]
        return torch.roll(x, p[1:1 + ns], dims if dims else None)
    if op == "rot90":
        return torch.rot90(x, p[0], p[1:3])
    if op == "movedim":
        n = p[0]
        return torch.movedim(x, p[1:1 + n], p[1 + n:1 + 2 * n])
    if op == "diagonal":
        return torch.diagonal(x, p[0], p[1], p[2])
    if op == "diag":
        return torch.diag(x, p[0])
    if op == "diag_embed":
        return torch.diag_embed(x, p[0], p[1], p[2])
    if op == "diagflat":
        return torch.diagflat(x, p[0])
    if op == "as_strided":
        nd = p[0]
        return torch.as_strided(x, p[1:1 + nd], p[1 + nd:1 + 2 * nd], p[1 + 2 * nd])
    if op == "unfold":
        return x.unfold(p[0], p[1], p[2])
    if op in ("hstack", "vstack", "dstack", "column_stack"):
        return getattr(torch, op)([x, y])
    if op == "unbind":
        return list(torch.unbind(x, p[0]))
    if op == "tensor_split":
        return list(torch.tensor_split(x, p[0], p[1]))
    if op == "tensor_split_indices":
        return list(torch.tensor_split(x, p[1:], p[0]))
    if op in ("hsplit", "vsplit", "dsplit"):
        return list(getattr(torch, op)(x, p[0]))
    if op in ("nonzero", "argwhere"):
        return getattr(torch, op)(x)
    if op in ("index", "index_put"):
        n = p[0]
        lst = [slice(None) if c == 0 else idx if c == 1 else idx.bool() if c == 2 else
               idx.int() if c == 3 else idx2 for c in p[1:1 + n]]
        if op == "index":
            return x[tuple(lst)]
        lst = [None if isinstance(t, slice) else t for t in lst]
        return torch.ops.aten.index_put(x, lst, y, bool(p[1 + n]))
    if op == "masked_select":
        return torch.masked_select(x, idx.bool())
    if op == "masked_scatter":
        return x.clone().masked_scatter_(idx.bool(), y)
    if op == "index_fill":
        return x.clone().index_fill_(p[0], idx, scalar)
    if op == "index_copy":
        return x.clone().index_copy_(p[0], idx, y)
    if op == "take":
        return torch.take(x, idx)
    if op == "take_along_dim":
        return torch.take_along_dim(x, idx, p[0])
    if op == "scatter_reduce":
        return x.clone().scatter_reduce_(p[0], idx, y, REDUCE[p[1]], include_self=bool(p[2]))
    raise ValueError(op)


def case(op, dt, shape, how=CONTIG, p=(), idx=None, idx2=None, second=None, scalar=0.0):
    dtype, ctype = DTYPES[dt]
    x = make_input(shape, dtype, how)
    y = make_input(second, dtype, CONTIG, first=False) if second is not None else None
    grad = dtype.is_floating_point and op not in ("nonzero", "argwhere")
    if grad:
        x.requires_grad_(True)
        if y is not None:
            y.requires_grad_(True)
    it = torch.tensor(idx, dtype=torch.int64) if idx is not None else None
    it2 = torch.tensor(idx2, dtype=torch.int64) if idx2 is not None else None
    res = run(op, x, y, it, it2, list(p), scalar)
    pieces = len(res) if isinstance(res, list) else 0
    out = torch.cat([r.flatten() for r in res]) if pieces else res
    g0 = g1 = None
    if grad:
        w = (torch.arange(out.numel()) % 7 - 3).to(dtype).reshape(out.shape)
        (out * w).sum().backward()
        g0 = x.grad if x.grad is not None else torch.zeros_like(x)
        g1 = y.grad if y is not None and y.grad is not None else None
    fields = {
        "idx": it.flatten().tolist() if it is not None else [],
        "idx2": it2.flatten().tolist() if it2 is not None else [],
        "out": out.detach().double().flatten().tolist(),
        "g0": g0.double().flatten().tolist() if g0 is not None else [],
        "g1": g1.double().flatten().tolist() if g1 is not None else [],
        "p": list(p),
    }
    for k, v in fields.items():
        assert len(v) <= MAX[k], (op, k, len(v))
    text = [
        '"%s", %s, %d, %d, %s, %d, %s, %s' % (op, ctype, how, len(shape), ints(shape), len(p),
                                                ints(p), num(scalar)),
        "%d, %s, %s" % (it.dim() if it is not None else -1,
                        ints(it.shape if it is not None else []), ints(fields["idx"])),
        "%d, %s, %s" % (it2.dim() if it2 is not None else -1,
                        ints(it2.shape if it2 is not None else []), ints(fields["idx2"])),
        "%d, %s" % (len(second) if second is not None else -1, ints(second or [])),
        "%d, %d, %s" % (out.dim(), pieces, ints(out.shape)),
        arr(fields["out"]),
        "%d" % (1 if grad else 0),
        arr(fields["g0"] or [0]),
        arr(fields["g1"] or [0]),
    ]
    return "    {" + ",\n     ".join(text) + "},\n"


F = CONTIG
CASES = [
    ("repeat", "f32", [2, 3], F, dict(p=(2, 1, 2))),
    ("repeat", "f64", [3, 2], TRANSPOSED, dict(p=(2, 3))),
    ("repeat", "i64", [3], F, dict(p=(2, 2))),
    ("tile", "f64", [2, 4], STEP, dict(p=(2,))),
    ("tile", "f32", [3], F, dict(p=(2, 2))),
    ("repeat_interleave", "f32", [2, 3], F, dict(p=(2, 1))),
    ("repeat_interleave", "f64", [3, 2], TRANSPOSED, dict(p=(3, 0))),
    ("repeat_interleave", "b8", [4], F, dict(p=(2, 0))),
    ("flip", "f32", [2, 3, 2], F, dict(p=(0, 2))),
    ("flip", "f64", [3, 4], TRANSPOSED, dict(p=(-1,))),
    ("flip", "i64", [2, 4], STEP, dict(p=(0, 1))),
    ("fliplr", "f64", [3, 4], STEP, {}),
    ("flipud", "f32", [3, 2], TRANSPOSED, {}),
    ("roll", "f32", [3, 4], F, dict(p=(1, 5, 1))),
    ("roll", "f64", [3, 4], TRANSPOSED, dict(p=(2, -1, 2, 0, 1))),
    ("roll", "f64", [2, 3], F, dict(p=(1, 4))),
    ("roll", "i64", [2, 4], STEP, dict(p=(1, 1, 0))),
    ("rot90", "f32", [2, 3], F, dict(p=(1, 0, 1))),
    ("rot90", "f64", [3, 4], TRANSPOSED, dict(p=(2, 0, 1))),
    ("rot90", "f64", [2, 3, 2], F, dict(p=(-1, 2, 0))),
    ("rot90", "f32", [2, 2], F, dict(p=(4, 0, 1))),
    ("movedim", "f32", [2, 3, 4], F, dict(p=(1, 0, 2))),
    ("movedim", "f64", [2, 3, 2], F, dict(p=(2, 0, -1, 2, 0))),
    ("diagonal", "f32", [3, 4], F, dict(p=(1, 0, 1))),
    ("diagonal", "f64", [4, 3], TRANSPOSED, dict(p=(-1, 0, 1))),
    ("diagonal", "f64", [2, 3, 4], F, dict(p=(0, 2, 0))),
    ("diagonal", "i64", [3, 8], STEP, dict(p=(0, -1, -2))),
    ("diag", "f32", [3], F, dict(p=(1,))),
    ("diag", "f64", [3, 4], TRANSPOSED, dict(p=(-1,))),
    ("diag_embed", "f32", [2, 3], F, dict(p=(0, -2, -1))),
    ("diag_embed", "f64", [2, 2], TRANSPOSED, dict(p=(-1, 0, 2))),
    ("diagflat", "f64", [2, 2], F, dict(p=(1,))),
    ("as_strided", "f32", [3, 4], F, dict(p=(2, 2, 3, 4, 1, 1))),
    ("as_strided", "f64", [3, 4], F, dict(p=(2, 3, 3, 1, 2, 0))),
    ("as_strided", "f64", [4, 3], TRANSPOSED, dict(p=(1, 4, 3, 2))),
    ("unfold", "f32", [2, 5], F, dict(p=(1, 2, 1))),
    ("unfold", "f64", [5, 2], TRANSPOSED, dict(p=(0, 3, 2))),
    ("unfold", "f64", [3, 8], STEP, dict(p=(-1, 4, 4))),
    ("hstack", "f32", [2, 3], F, dict(second=[2, 2])),
    ("hstack", "f64", [3], F, dict(second=[2])),
    ("vstack", "f64", [3], F, dict(second=[2, 3])),
    ("dstack", "f32", [2, 3], TRANSPOSED, dict(second=[2, 3])),
    ("column_stack", "f64", [3], F, dict(second=[3, 2])),
    ("unbind", "f32", [2, 3], F, dict(p=(1,))),
    ("unbind", "f64", [3, 4], TRANSPOSED, dict(p=(0,))),
    ("tensor_split", "f32", [7, 2], F, dict(p=(3, 0))),
    ("tensor_split", "f64", [3, 8], STEP, dict(p=(3, -1))),
    ("tensor_split_indices", "f64", [2, 6], F, dict(p=(1, 1, 4, -1))),
    ("hsplit", "f32", [2, 4], F, dict(p=(2,))),
    ("vsplit", "f64", [4, 3], TRANSPOSED, dict(p=(2,))),
    ("dsplit", "f64", [1, 2, 4], F, dict(p=(4,))),
    ("nonzero", "f32", [4, 5], F, {}),
    ("nonzero", "i64", [5, 4], TRANSPOSED, {}),
    ("argwhere", "b8", [3, 4], F, {}),
    ("index", "f32", [4, 3], F, dict(p=(1, 1), idx=[3, 0, -1, 3])),
    ("index", "f64", [3, 4], TRANSPOSED, dict(p=(2, 0, 1), idx=[[1, 0], [2, 3]])),
    ("index", "f64", [3, 4, 2], F, dict(p=(2, 1, 4), idx=[[2], [0]], idx2=[1, 3, 0])),
    ("index", "f64", [3, 4, 2], F, dict(p=(3, 1, 0, 4), idx=[[2], [0]], idx2=[1, 0, 1])),
    ("index", "f32", [3, 4], F, dict(p=(1, 2), idx=[[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 0, 0]])),
    ("index", "f64", [3, 4], STEP, dict(p=(2, 0, 2), idx=[0, 1, 1, 0])),
    ("index", "f64", [3, 4], F, dict(p=(2, 3, 4), idx=[0, 2], idx2=[0])),
    ("index", "i64", [3, 4], F, dict(p=(2, 1, 4), idx=[2, 0], idx2=[3, 1])),
    ("index_put", "f32", [4, 3], F, dict(p=(1, 1, 0), idx=[3, 0, 1], second=[3])),
    ("index_put", "f64", [3, 4], TRANSPOSED, dict(p=(2, 0, 1, 1), idx=[1, 1, 3], second=[3, 3])),
    ("index_put", "f64", [3, 4], F, dict(p=(2, 1, 4, 1), idx=[0, 2, 0], idx2=[1, 3, 1],
                                         second=[1])),
    ("index_put", "f64", [3, 4], F, dict(p=(1, 2, 0), idx=[[1, 0, 1, 1], [0, 0, 1, 0],
                                                            [1, 1, 0, 0]], second=[6])),
    ("index_put", "i64", [3, 4], F, dict(p=(2, 1, 4, 1), idx=[2, 2], idx2=[0, 0], second=[1])),
    ("masked_select", "f32", [3, 4], F, dict(idx=[1, 0, 0, 1])),
    ("masked_select", "f64", [4, 3], TRANSPOSED, dict(idx=[[0, 1, 1], [1, 0, 0], [0, 0, 1],
                                                         [1, 1, 1]])),
    ("masked_select", "i64", [3, 8], STEP, dict(idx=[[1], [0], [1]])),
    ("masked_scatter", "f32", [3, 4], F, dict(idx=[1, 0, 1, 1], second=[3, 4])),
    ("masked_scatter", "f64", [4, 3], TRANSPOSED, dict(idx=[[0, 1, 1], [1, 0, 0], [0, 0, 1],
                                                          [1, 1, 0]], second=[8])),
    ("index_fill", "f32", [3, 4], F, dict(p=(1,), idx=[0, 3], scalar=-2.5)),
    ("index_fill", "f64", [3, 4], TRANSPOSED, dict(p=(0,), idx=[2], scalar=7.0)),
    ("index_fill", "i64", [3, 4], F, dict(p=(-1,), idx=[1, 1], scalar=5.0)),
    ("index_copy", "f32", [4, 3], F, dict(p=(0,), idx=[3, 1], second=[2, 3])),
    ("index_copy", "f64", [3, 8], STEP, dict(p=(1,), idx=[0, 2, 1], second=[3, 3])),
    ("take", "f32", [3, 4], F, dict(idx=[[0, 11], [-1, 5]])),
    ("take", "f64", [3, 4], TRANSPOSED, dict(idx=[1, 4, 4, 7])),
    ("take_along_dim", "f32", [3, 4], F, dict(p=(1,), idx=[[0, 3], [1, 1], [2, 0]])),
    ("take_along_dim", "f64", [3, 4], TRANSPOSED, dict(p=(0,), idx=[[2, 0, 1, 1]])),
    ("take_along_dim", "f64", [3, 4], F, dict(p=(1,), idx=[[3], [0], [1]])),
]
for r, name in enumerate(REDUCE):
    CASES.append(("scatter_reduce", "f64", [3, 4], F,
                  dict(p=(1, r, 1), idx=[[0, 0, 3], [1, 2, 1], [3, 3, 3]], second=[3, 3])))
    CASES.append(("scatter_reduce", "f32", [4, 3], TRANSPOSED,
                  dict(p=(0, r, 0), idx=[[2, 0, 2], [2, 1, 2]], second=[2, 3])))
CASES += [
    ("scatter_reduce", "i64", [3, 4], F, dict(p=(1, 2, 1), idx=[[0, 0, 3], [1, 2, 1], [3, 3, 3]],
                                              second=[3, 3])),
    ("scatter_reduce", "i64", [3, 4], F, dict(p=(0, 3, 0), idx=[[2, 0, 2, 2]], second=[1, 4])),
]


def main():
    lines = ["/* GENERATED by tools/gen_golden_index2.py with torch %s - do not edit. */\n"
             % torch.__version__,
             "static const index2_golden index2_golden_cases[] = {\n"]
    for op, dt, shape, how, kw in CASES:
        lines.append(case(op, dt, shape, how, **kw))
    lines.append("};\n")
    with open(OUT, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
