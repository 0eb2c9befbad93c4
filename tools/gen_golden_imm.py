#!/usr/bin/env python3
"""Writes tests/golden/imm_golden.h: PyTorch's integer matrix products for tests/test_imm.c.

mm, bmm, mv, dot, vdot, matmul, addmm, baddbmm, addbmm, addmv, inner, tensordot, einsum,
linalg.multi_dot, linalg.matrix_power and linear on uint8, int8, int16, int32 and int64
operands: contiguous, transposed and step-sliced inputs, broadcast inputs and batch dims,
integer and truncated (non-integral) beta/alpha, values over the whole range of the narrow
types and large int64 values, so sums and products wrap. Inputs are the base tensors the C
side rebuilds (then transposes or slices by the layout code). Run with PyTorch installed:
python3 tools/gen_golden_imm.py
"""
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "imm_golden.h")
DTYPES = [("u8", torch.uint8, "CT_UINT8"), ("i8", torch.int8, "CT_INT8"),
          ("i16", torch.int16, "CT_INT16"), ("i32", torch.int32, "CT_INT32"),
          ("i64", torch.int64, "CT_INT64")]
CONTIG, TRANSPOSED, STEP = 0, 1, 2
GEN = torch.Generator().manual_seed(7)


def values(shape, dtype, big):
    """Random values: the whole range of narrow types, +-2^40 (big) or +-100 for int64."""
    if dtype == torch.int64:
        lim = 2 ** 40 if big else 100
        return torch.randint(-lim, lim, shape, generator=GEN, dtype=torch.int64)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max + 1, shape, generator=GEN, dtype=torch.int64).to(dtype)


def build(spec, dtype, big):
    """spec (shape, layout): the base tensor (written out) and the operand PyTorch gets."""
    shape, how = spec
    if how == TRANSPOSED:
        base = values(shape[:-2] + (shape[-1], shape[-2]), dtype, big)
        return base, base.transpose(-1, -2)
    if how == STEP:
        base = values(shape[:-1] + (2 * shape[-1],), dtype, big)
        return base, base[..., ::2]
    base = values(shape, dtype, big)
    return base, base


def run(op, x, beta, alpha, n, eq):
    """PyTorch's result of op on operands x."""
    two = {"mm": torch.mm, "bmm": torch.bmm, "mv": torch.mv, "dot": torch.dot,
           "vdot": torch.vdot, "matmul": torch.matmul, "inner": torch.inner,
           "linear": torch.nn.functional.linear}
    three = {"addmm": torch.addmm, "baddbmm": torch.baddbmm, "addbmm": torch.addbmm,
             "addmv": torch.addmv}
    if op in two:
        return two[op](*x)
    if op in three:
        return three[op](*x, beta=beta, alpha=alpha)
    if op == "tensordot":
        return torch.tensordot(x[0], x[1], dims=([-1], [0]))
    if op == "einsum":
        return torch.einsum(eq, *x)
    if op == "multi_dot":
        return torch.linalg.multi_dot(x)
    return torch.linalg.matrix_power(x[0], n)


# (op, operand specs, beta, alpha, n, equation, int64 values big)
C, T, S = CONTIG, TRANSPOSED, STEP
CASES = [
    ("mm", [((3, 4), C), ((4, 5), C)], 1, 1, 0, "", False),
    ("mm", [((3, 4), T), ((4, 5), T)], 1, 1, 0, "", True),
    ("mm", [((2, 6), S), ((6, 3), C)], 1, 1, 0, "", True),
    ("bmm", [((2, 3, 4), C), ((2, 4, 2), T)], 1, 1, 0, "", True),
    ("mv", [((3, 4), T), ((4,), C)], 1, 1, 0, "", True),
    ("mv", [((3, 4), C), ((4,), S)], 1, 1, 0, "", False),
    ("dot", [((5,), C), ((5,), S)], 1, 1, 0, "", True),
    ("vdot", [((6,), C), ((6,), C)], 1, 1, 0, "", True),
    ("matmul", [((2, 1, 3, 4), C), ((3, 4, 2), C)], 1, 1, 0, "", True),
    ("matmul", [((4,), C), ((2, 4, 3), T)], 1, 1, 0, "", False),
    ("matmul", [((2, 3, 4), C), ((4,), C)], 1, 1, 0, "", True),
    ("matmul", [((5,), C), ((5,), C)], 1, 1, 0, "", True),
    ("addmm", [((5,), C), ((3, 4), C), ((4, 5), T)], 2, -3, 0, "", True),
    ("addmm", [((3, 1), C), ((3, 4), T), ((4, 2), C)], 1.5, 2.5, 0, "", False),
    ("addmm", [((3, 2), C), ((3, 4), C), ((4, 2), C)], 0, 1, 0, "", True),
    ("baddbmm", [((3, 2), C), ((2, 3, 4), T), ((2, 4, 2), C)], -1, 2, 0, "", True),
    ("addbmm", [((3, 2), C), ((2, 3, 4), C), ((2, 4, 2), T)], 1, 1, 0, "", True),
    ("addmv", [((1,), C), ((3, 4), C), ((4,), C)], 3, -2, 0, "", True),
    ("addmv", [((3,), C), ((3, 4), T), ((4,), S)], 1, 1, 0, "", False),
    ("inner", [((2, 4), C), ((3, 4), C)], 1, 1, 0, "", True),
    ("tensordot", [((3, 2, 5), C), ((5, 2), T)], 1, 1, 0, "", True),
    ("einsum", [((2, 3, 4), C), ((2, 4, 2), C)], 1, 1, 0, "bij,bjk->bik", True),
    ("einsum", [((2, 3), C), ((3, 4), T), ((4, 2), C)], 1, 1, 0, "ij,jk,kl->il", False),
    ("multi_dot", [((2, 3), C), ((3, 4), C), ((4, 2), C)], 1, 1, 0, "", False),
    ("matrix_power", [((3, 3), C)], 1, 1, 5, "", False),
    ("matrix_power", [((2, 3, 3), T)], 1, 1, 2, "", True),
    ("linear", [((2, 4), C), ((3, 4), C), ((3,), C)], 1, 1, 0, "", True),
]


def lit(v):
    """An int64 C literal (INT64_MIN has none)."""
    if v == -2 ** 63:
        return "(-9223372036854775807LL - 1)"
    return "%d" % v if abs(v) < 2 ** 31 else "%dLL" % v


def main():
    vals, rows = [], []
    for op, specs, beta, alpha, n, eq, big in CASES:
        for _, dtype, cname in DTYPES:
            built = [build(s, dtype, big) for s in specs]
            out = run(op, [b[1] for b in built], beta, alpha, n, eq)
            assert out.dtype == dtype, (op, out.dtype)
            offs, ins = [], []
            for (shape, how), (base, _) in zip(specs, built):
                offs.append(len(vals))
                vals.extend(int(v) for v in base.flatten().tolist())
                ins.append("{%d, %d, {%s}, %d}" % (len(shape), how,
                                                    ", ".join(str(s) for s in shape), offs[-1]))
            while len(ins) < 3:
                ins.append("{0, 0, {0}, 0}")
            o = len(vals)
            vals.extend(int(v) for v in out.flatten().tolist())
            osz = ", ".join(str(s) for s in out.shape) or "0"
            row = ['{"%s"' % op, '"%s"' % eq, cname, repr(float(beta)), repr(float(alpha)),
                   str(n), str(len(specs)), "{" + ins[0], ins[1], ins[2] + "}", str(out.dim()),
                   "{%s}" % osz, str(o)]
            rows.append(c_wrap(row, "    ", "},").replace("    {", "    {", 1))
    with open(OUT, "w") as f:
        f.write("/* GENERATED by tools/gen_golden_imm.py with torch %s - do not edit. */\n"
                % torch.__version__)
        f.write("static const int64_t imm_golden_values[] = {\n")
        f.write(c_wrap([lit(v) for v in vals], "    ") + "\n};\n")
        f.write("static const imm_golden imm_golden_cases[] = {\n")
        f.write("\n".join(rows) + "\n};\n")


if __name__ == "__main__":
    main()
