#!/usr/bin/env python3
"""Writes tests/golden/view7_golden.h: PyTorch's numbers for tests/test_view7.c.

tril/triu (contiguous, transposed, sliced with a step; several diagonals; float and integer
values) with their gradients, Python slicing (clamped bounds, steps) with gradients, the piece
sizes of split/split_with_sizes/chunk, unflatten, mT, broadcast_tensors and the results and
error messages of broadcast_shapes. Run with PyTorch installed: python3 tools/gen_golden_view7.py
"""
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "view7_golden.h")
INT64_MAX = 2**63 - 1


def arr(name, t, ctype="double"):
    fmt = "%.17g" if ctype == "double" else "%d"
    vals = [fmt % v for v in t.detach().double().flatten().tolist()]
    if ctype != "double":
        vals = ["%d" % int(v) for v in t.flatten().tolist()]
    head = "static const %s %s[%d] = {" % (ctype, name, max(len(vals), 1))
    return head + "\n" + c_wrap(vals or ["0"], "    ", "};") + "\n"


def tri_cases(lines):
    """tril/triu of x (2, 3, 4) and two non-contiguous views, diagonals -1, 0, 2; grads (exact
    values: the ops only select)."""
    x = (torch.arange(24, dtype=torch.float64).reshape(2, 3, 4) - 11.5) / 4
    gout = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4).flip(0) * 0.5 - 3
    lines.append(arr("v7_tri_x", x))
    lines.append(arr("v7_tri_gout", gout))
    # layouts: 0 contiguous (2,3,4), 1 transposed (2,4,3), 2 x[:, :, ::2] (2,3,2)
    views = [lambda t: t, lambda t: t.transpose(1, 2), lambda t: t[:, :, ::2]]
    for name, fn in (("tril", torch.tril), ("triu", torch.triu)):
        for lay, view in enumerate(views):
            for k, diag in enumerate((-1, 0, 2)):
                xi = x.clone().requires_grad_()
                out = fn(view(xi), diag)
                out.backward(view(gout))
                lines.append(arr("v7_%s_l%d_d%d" % (name, lay, k), out))
                lines.append(arr("v7_%s_l%d_d%d_grad" % (name, lay, k), xi.grad))
    ints = torch.arange(12).reshape(3, 4) - 5
    lines.append(arr("v7_tril_int", torch.tril(ints, 1), "int64_t"))
    lines.append(arr("v7_triu_int", torch.triu(ints, -1), "int64_t"))
    mask = torch.ones(3, 4, dtype=torch.bool)
    lines.append(arr("v7_tril_bool", torch.tril(mask).to(torch.int64), "int64_t"))


SLICES = [(1, 1, 5, 2), (1, -4, 100, 3), (0, -100, 2, 1), (1, 4, 2, 1), (1, 0, INT64_MAX, 4),
          (-1, -1, INT64_MAX, 1), (0, 3, -1, 1)]


def slice_cases(lines):
    """x (4, 6) sliced by (dim, start, end, step); gradient of sum(out * arange)."""
    x = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    rows = []
    for k, (dim, start, end, step) in enumerate(SLICES):
        xi = x.clone().requires_grad_()
        out = torch.ops.aten.slice(xi, dim, start, end, step)
        out.backward(torch.arange(out.numel(), dtype=torch.float64).reshape(out.shape))
        lines.append(arr("v7_slice%d" % k, out))
        lines.append(arr("v7_slice%d_grad" % k, xi.grad))
        rows.append("{%d, %d, %s, %d, %d, %d}" % (dim, start, "INT64_MAX" if end == INT64_MAX
                                                  else str(end), step, out.shape[0],
                                                  out.shape[1]))
    lines.append("/* {dim, start, end, step, rows, cols} */\n")
    lines.append("static const int64_t v7_slices[%d][6] = {\n%s};\n"
                 % (len(rows), c_wrap(rows, "    ")))


def piece_cases(lines):
    """Piece lengths of split/chunk/split_with_sizes along dim 0 of (size,) tensors."""
    rows = []
    cases = [("split", 5, 2), ("split", 6, 3), ("split", 2, 5), ("split", 0, 0), ("split", 0, 3),
             ("chunk", 5, 4), ("chunk", 6, 4), ("chunk", 2, 3), ("chunk", 0, 3), ("chunk", 7, 7),
             ("chunk", 10, 4)]
    for kind, size, arg in cases:
        t = torch.zeros(size)
        pieces = t.split(arg) if kind == "split" else t.chunk(arg)
        lens = [p.shape[0] for p in pieces]
        rows.append("{%d, %d, %d, %d, {%s}}" % (kind == "chunk", size, arg, len(lens),
                                                ", ".join(str(v) for v in lens)))
    lines.append("/* {is_chunk, size, split_size or chunks, count, lengths} */\n")
    lines.append("typedef struct v7_piece_case {\n    int is_chunk;\n    int64_t size, arg;\n"
                 "    int count;\n    int64_t lens[8];\n} v7_piece_case;\n")
    lines.append("static const v7_piece_case v7_pieces[%d] = {\n%s};\n"
                 % (len(rows), c_wrap(rows, "    ")))


def shape_cases(lines):
    """unflatten and mT values; broadcast_tensors of (3,1), (1,4), (4,); broadcast_shapes."""
    x = torch.arange(24, dtype=torch.float64).reshape(2, 12)
    lines.append(arr("v7_unflatten", x.unflatten(1, (3, -1, 2)).contiguous()))
    y = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4)
    lines.append(arr("v7_mt", y.mT.contiguous()))
    lines.append(arr("v7_mt_t", y.transpose(0, 2).mT.contiguous()))
    a = torch.arange(3, dtype=torch.float64).reshape(3, 1)
    b = torch.arange(4, dtype=torch.float64).reshape(1, 4) + 10
    c = torch.arange(4, dtype=torch.float64) + 20
    for k, t in enumerate(torch.broadcast_tensors(a, b, c)):
        lines.append(arr("v7_bt%d" % k, t.contiguous()))
    msgs = []
    for shapes in [((2, 3), (4, 3)), ((3,), (2, 1), (4,)), ((3,), (5, 2, 1), (1, 4, 1, 3)),
                   ((1,), (0,)), ((), (2,)), ((2,), (1, 1, 1)), ((3,), (-1,)), ((-1,),)]:
        try:
            res = "[" + ", ".join(str(v) for v in torch.broadcast_shapes(*shapes)) + "]"
        except (RuntimeError, ValueError) as e:
            res = str(e)
        msgs.append('"%s"' % res)
    lines.append("/* the results of tests/test_view7.c's broadcast_shapes cases, in order */\n")
    lines.append("static const char *const v7_bshapes[%d] = {\n%s};\n"
                 % (len(msgs), ",\n".join("    " + m for m in msgs)))


def main():
    lines = ["/* GENERATED by tools/gen_golden_view7.py with torch %s - do not edit. */\n"
             % torch.__version__]
    tri_cases(lines)
    slice_cases(lines)
    piece_cases(lines)
    shape_cases(lines)
    with open(OUT, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
