#!/usr/bin/env python3
"""Writes tests/golden/index_golden.h: PyTorch's numbers for tests/test_index.c.

gather, index_select, scatter, scatter_add, index_add and masked_fill on contiguous,
transposed and step-sliced inputs, broadcast masks, float32/float64/int64/bool, int64 and
int32 indices, with the output and, for float cases, the gradients of sum(out * w) for
w[k] = k % 7 - 3 (w in out's contiguous order). Run with PyTorch installed:
python3 tools/gen_golden_index.py
"""
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "index_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "i64": (torch.int64, "CT_INT64"), "b8": (torch.bool, "CT_BOOL")}
CONTIG, TRANSPOSED, STEP = 0, 1, 2


def base_values(shape, dtype):
    """Deterministic values the C side rebuilds from the array written."""
    n = 1
    for s in shape:
        n *= s
    v = torch.arange(n, dtype=torch.float64)
    v = torch.sin(v * 1.7 + 0.3) * 4
    if dtype == torch.bool:
        return (v > 0).reshape(shape)
    return v.to(dtype).reshape(shape)


def layout(t, how):
    """TRANSPOSED: t is the transpose's base; STEP: the base's last dim is twice as long."""
    if how == TRANSPOSED:
        return t.t()
    if how == STEP:
        return t.reshape(*t.shape[:-1], t.shape[-1] // 2, 2)[..., 0]
    return t


def num(v):
    return "%.17g" % v


def arr(items):
    return "{" + c_wrap([num(x) for x in items], "      ", "}").lstrip()


def case(op, dt, self_base, how, dim=0, index=None, src=None, mask=None, scalar=1.0,
         idx32=False):
    dtype, ctype = DTYPES[dt]
    base = base_values(self_base, dtype)
    self = layout(base, how)
    grad = dtype.is_floating_point
    if grad:
        self.requires_grad_(True)
    idx = torch.tensor(index, dtype=torch.int32 if idx32 else torch.int64) \
        if index is not None else None
    srct = None
    if src is not None:
        srct = base_values(src, dtype) * (1 if dtype == torch.bool else -0.5)
        srct = srct.to(dtype)
        if grad:
            srct.requires_grad_(True)
    mt = torch.tensor(mask, dtype=torch.bool) if mask is not None else None
    if op == "gather":
        out = torch.gather(self, dim, idx)
    elif op == "index_select":
        out = torch.index_select(self, dim, idx)
    elif op == "scatter":
        out = torch.scatter(self, dim, idx, srct)
    elif op == "scatter_add":
        out = torch.scatter_add(self, dim, idx, srct)
    elif op == "index_add":
        out = torch.index_add(self, dim, idx, srct, alpha=scalar)
    else:
        out = torch.masked_fill(self, mt, scalar)
    gs = gsrc = None
    if grad:
        w = (torch.arange(out.numel()) % 7 - 3).to(dtype).reshape(out.shape)
        (out * w).sum().backward()
        gs = self.grad
        gsrc = srct.grad if srct is not None else None
    second = mt if mt is not None else srct
    fields = [
        '"%s"' % op, ctype, str(dim), str(how), num(scalar), "1" if idx32 else "0",
        str(len(self_base)), "{%s}" % ", ".join(map(str, self_base)),
        arr(base.double().flatten().tolist()),
        str(idx.dim() if idx is not None else 0),
        "{%s}" % ", ".join(map(str, idx.shape if idx is not None else [0])),
        "{%s}" % ", ".join(map(str, idx.flatten().tolist() if idx is not None else [0])),
        str(second.dim() if second is not None else 0),
        "{%s}" % ", ".join(map(str, second.shape if second is not None else [0])),
        arr(second.double().flatten().tolist() if second is not None else [0]),
        str(out.dim()), "{%s}" % ", ".join(map(str, out.shape)),
        arr(out.detach().double().flatten().tolist()),
        "1" if grad else "0",
        arr(gs.double().flatten().tolist() if gs is not None else [0]),
        arr(gsrc.double().flatten().tolist() if gsrc is not None else [0]),
    ]
    head = ", ".join(fields[:8])
    return "    {" + head + ",\n     " + ",\n     ".join(fields[8:]) + "},\n"


CASES = [
    ("gather", "f32", [3, 4], CONTIG, dict(dim=1, index=[[0, 3], [2, 2], [1, 0]])),
    ("gather", "f64", [4, 3], TRANSPOSED, dict(dim=0, index=[[2, 0, 1, 2], [0, 0, 2, 1]])),
    ("gather", "f64", [3, 8], STEP, dict(dim=-1, index=[[3, 1, 1], [0, 2, 3]], idx32=True)),
    ("gather", "i64", [3, 4], CONTIG, dict(dim=0, index=[[2, 1, 0, 0]])),
    ("index_select", "f32", [3, 4], CONTIG, dict(dim=0, index=[2, 0, 2])),
    ("index_select", "f64", [4, 3], TRANSPOSED, dict(dim=1, index=[3, 1, 1, 0, 2])),
    ("index_select", "f64", [2, 3, 6], STEP, dict(dim=-1, index=[1], idx32=True)),
    ("index_select", "i64", [3, 4], CONTIG, dict(dim=1, index=[0, 3])),
    ("scatter", "f64", [3, 4], CONTIG, dict(dim=1, index=[[3, 0], [1, 2], [0, 1]],
                                          src=[3, 2])),
    ("scatter", "f32", [4, 3], TRANSPOSED, dict(dim=0, index=[[2, 0, 1, 1], [0, 1, 2, 0]],
                                             src=[2, 4])),
    ("scatter", "i64", [3, 8], STEP, dict(dim=0, index=[[1, 2, 0, 1]], src=[1, 4],
                                        idx32=True)),
    ("scatter_add", "f64", [3, 4], CONTIG, dict(dim=1, index=[[3, 3, 3], [1, 2, 1], [0, 0, 2]],
                                              src=[3, 3])),
    ("scatter_add", "f32", [4, 3], TRANSPOSED, dict(dim=0, index=[[2, 2, 1, 1], [0, 2, 2, 2]],
                                                 src=[2, 4])),
    ("scatter_add", "f64", [3, 8], STEP, dict(dim=-1, index=[[1, 1], [0, 3]], src=[2, 2],
                                            idx32=True)),
    ("scatter_add", "i64", [3, 4], CONTIG, dict(dim=0, index=[[1, 1, 1, 0]], src=[1, 4])),
    ("index_add", "f64", [3, 4], CONTIG, dict(dim=0, index=[2, 0, 2, 2], src=[4, 4])),
    ("index_add", "f32", [4, 3], TRANSPOSED, dict(dim=1, index=[3, 3, 0], src=[3, 3],
                                               scalar=2.5)),
    ("index_add", "f64", [3, 8], STEP, dict(dim=-1, index=[1, 1], src=[3, 2], scalar=-0.75,
                                          idx32=True)),
    ("index_add", "i64", [3, 4], CONTIG, dict(dim=1, index=[0, 0, 3], src=[3, 3], scalar=2)),
    ("masked_fill", "f32", [3, 4], CONTIG, dict(mask=[True, False, False, True], scalar=-1.5)),
    ("masked_fill", "f64", [4, 3], TRANSPOSED, dict(mask=[[True], [False], [True]],
                                                  scalar=7.25)),
    ("masked_fill", "f64", [3, 8], STEP, dict(mask=[[[True] * 4] * 3, [[False, True] * 2] * 3],
                                            scalar=0.5)),
    ("masked_fill", "i64", [3, 4], CONTIG, dict(mask=[[True, False, True, False]] * 3,
                                              scalar=2.75)),
    ("masked_fill", "b8", [3, 4], CONTIG, dict(mask=[False, True, True, False], scalar=1.0)),
]


def main():
    lines = ["/* GENERATED by tools/gen_golden_index.py with torch %s - do not edit. */\n"
             % torch.__version__,
             "static const index_golden index_golden_cases[] = {\n"]
    for op, dt, shape, how, kw in CASES:
        lines.append(case(op, dt, shape, how, **kw))
    lines.append("};\n")
    with open(OUT, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
