#!/usr/bin/env python3
"""Writes tests/golden/linalg2_golden.h: PyTorch's numbers for tests/test_linalg2.c.

baddbmm, addbmm, addmv, addr, outer, inner, vdot, einsum, tensordot, kron, trace, cross
(torch.cross and torch.linalg.cross), linalg.multi_dot, linalg.matrix_power and
linalg.matrix_exp on contiguous, transposed and step-sliced inputs, broadcast inputs,
float32/float64 (and integer or bool where the op takes them), with the output and, for
float cases, the gradients of sum(out * w) for w[k] = k % 7 - 3 (w in out's contiguous
order). Run with PyTorch installed: python3 tools/gen_golden_linalg2.py
"""
import math
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "linalg2_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "i32": (torch.int32, "CT_INT32"), "i64": (torch.int64, "CT_INT64"),
          "b8": (torch.bool, "CT_BOOL")}
CT_DTYPE = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.int32: "CT_INT32",
            torch.int64: "CT_INT64", torch.bool: "CT_BOOL"}
CONTIG, TRANSPOSED, STEP = 0, 1, 2
MAX_IN = 5


def base_values(shape, seed):
    """Deterministic values, multiples of 1/8 in [-2, 2] (short and exact in every dtype); the
    C side reads them from the array written and multiplies them by the case's scale."""
    n = math.prod(shape)
    v = torch.sin(torch.arange(n, dtype=torch.float64) * 1.7 + 0.3 + seed)
    return (torch.round(v * 16) / 8).reshape(shape)


def values(base, dtype, scale):
    """The input in dtype: base * scale (a power of two), 2 base truncated for integers, > 0
    for bool."""
    if dtype == torch.bool:
        return base > 0
    if not dtype.is_floating_point:
        return (base * 2).to(dtype)
    return (base * scale).to(dtype)


def layout(t, how):
    """TRANSPOSED: t is the base of its last two dims' transpose; STEP: the base's last dim
    is twice as long, every other element is taken."""
    if how == TRANSPOSED:
        return t.transpose(-2, -1)
    if how == STEP:
        return t[..., ::2]
    return t


def num(v, f32=False):
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return ("%.9g" if f32 else "%.17g") % v


def arr(name, items, f32=False):
    """float32 results need 9 significant digits, float64 ones 17."""
    return "static const double %s[] = {\n%s\n};\n" % (
        name, c_wrap([num(x, f32) for x in items] or ["0"], "    ", ""))


def run(op, ins, p):
    """PyTorch's result of case op on the input list ins with parameters p."""
    beta, alpha = p.get("beta", 1.0), p.get("alpha", 1.0)
    if op == "baddbmm":
        return torch.baddbmm(*ins, beta=beta, alpha=alpha)
    if op == "addbmm":
        return torch.addbmm(*ins, beta=beta, alpha=alpha)
    if op == "addmv":
        return torch.addmv(*ins, beta=beta, alpha=alpha)
    if op == "addr":
        return torch.addr(*ins, beta=p.get("beta", 1), alpha=p.get("alpha", 1))
    if op == "outer":
        return torch.outer(*ins)
    if op == "inner":
        return torch.inner(*ins)
    if op == "vdot":
        return torch.vdot(*ins)
    if op == "einsum":
        return torch.einsum(p["eq"], *ins)
    if op == "tensordot":
        return torch.tensordot(*ins, dims=(p["da"], p["db"]))
    if op == "kron":
        return torch.kron(*ins)
    if op == "trace":
        return torch.trace(*ins)
    if op == "cross":
        return torch.cross(*ins, dim=p["dim"]) if "dim" in p else torch.cross(*ins)
    if op == "multi_dot":
        return torch.linalg.multi_dot(ins)
    if op == "matrix_power":
        return torch.linalg.matrix_power(ins[0], p["n"])
    assert op == "matrix_exp"
    return torch.linalg.matrix_exp(ins[0])


def case(idx, op, dt, inputs, **p):
    """inputs: (base shape, layout[, scale]) per input. Returns the arrays and the entry."""
    dtype, ctype = DTYPES[dt]
    grad = dtype.is_floating_point
    bases, views = [], []
    for k, spec in enumerate(inputs):
        shape, how = spec[0], spec[1]
        b = values(base_values(shape, k), dtype, spec[2] if len(spec) > 2 else 1.0)
        if "nan_input" in p and k == 0:
            b = b.clone()
            b.view(-1)[0] = float("nan")
        v = layout(b, how).detach()
        if grad:
            v.requires_grad_(True)
        bases.append(b)
        views.append(v)
    out = run(op, views, p)
    grads = [None] * len(views)
    if grad:
        w = (torch.arange(out.numel()) % 7 - 3).to(out.dtype).reshape(out.shape)
        (out * w).sum().backward()
        grads = [v.grad for v in views]
    name = "lg%d" % idx
    f32 = dtype == torch.float32
    text = [arr("%s_out" % name, out.detach().double().flatten().tolist(), f32)]
    fields_in = []
    for k, (b, v, spec) in enumerate(zip(bases, views, inputs)):
        text.append(arr("%s_in%d" % (name, k), base_values(spec[0], k).flatten().tolist()))
        gname = "NULL"
        if grads[k] is not None:
            gname = "%s_g%d" % (name, k)
            text.append(arr(gname, grads[k].double().flatten().tolist(), f32))
        fields_in.append("{%d, %d, %s, {%s}, %s_in%d, %s}" % (
            len(spec[0]), spec[1], num(spec[2] if len(spec) > 2 else 1.0),
            ", ".join(map(str, spec[0])) or "0", name, k, gname))
    ints = p.get("da", []) + p.get("db", [])
    if "dim" in p:
        ints = [p["dim"]]
    if "n" in p:
        ints = [p["n"]]
    entry = ("    {\"%s\", %s, %s, %s, %s, %s, %d, {%s}, %d,\n     {%s},\n"
             "     %d, {%s}, %s, %s_out},\n") % (
        op, '"%s"' % p["eq"] if "eq" in p else "NULL", ctype, num(p.get("beta", 1.0)),
        num(p.get("alpha", 1.0)), "1" if grad else "0", len(ints),
        ", ".join(map(str, ints)) or "0", len(inputs), ",\n      ".join(fields_in),
        out.dim(), ", ".join(map(str, out.shape)) or "0", CT_DTYPE[out.dtype], name)
    return "".join(text), entry


T, S, C = TRANSPOSED, STEP, CONTIG
CASES = [
    # baddbmm: broadcast input, transposed batch1, stepped batch2; beta 0 ignores NaN
    ("baddbmm", "f32", [([2, 3, 5], C), ([2, 4, 3], T), ([2, 4, 10], S)], dict(beta=0.5, alpha=2)),
    ("baddbmm", "f64", [([5], C), ([2, 3, 4], C), ([2, 5, 4], T)], dict()),
    ("baddbmm", "f64", [([3, 1], C), ([2, 3, 4], C), ([2, 4, 5], C)],
     dict(beta=0.0, alpha=-1.5, nan_input=True)),
    ("addbmm", "f32", [([3, 5], C), ([2, 3, 4], C), ([2, 4, 5], C)], dict()),
    ("addbmm", "f64", [([1, 5], C), ([3, 4, 3], T), ([3, 4, 10], S)], dict(beta=2, alpha=0.25)),
    ("addbmm", "f64", [([3, 5], C), ([2, 3, 4], C), ([2, 4, 5], C)],
     dict(beta=0.0, nan_input=True)),
    ("addmv", "f32", [([3], C), ([4, 3], T), ([8], S)], dict(beta=-1, alpha=0.5)),
    ("addmv", "f64", [([1], C), ([3, 4], C), ([4], C)], dict()),
    ("addmv", "f64", [([], C), ([3, 8], S), ([4], C)], dict(beta=0.0, nan_input=True)),
    ("addr", "f32", [([3, 4], C), ([3], C), ([8], S)], dict(beta=2, alpha=-0.5)),
    ("addr", "f64", [([4], C), ([3], C), ([4], C)], dict(beta=0.0, nan_input=True)),
    ("addr", "i32", [([4, 3], T), ([3], C), ([4], C)], dict(beta=2, alpha=3)),
    ("addr", "b8", [([3, 4], C), ([3], C), ([4], C)], dict()),
    ("outer", "f32", [([3], C), ([8], S)], dict()),
    ("outer", "i64", [([3], C), ([2], C)], dict()),
    ("inner", "f64", [([2, 3, 4], C), ([4, 5], T)], dict()),
    ("inner", "f32", [([], C), ([2, 3], C)], dict()),
    ("vdot", "f32", [([5], C), ([10], S)], dict()),
    ("vdot", "f64", [([4], C), ([4], C)], dict()),
    # einsum: matmul forms, batches, diagonals, sums, ellipsis broadcast, three operands
    ("einsum", "f32", [([4, 3], T), ([4, 5], C)], dict(eq="ij,jk->ik")),
    ("einsum", "f64", [([2, 3, 4], C), ([2, 4, 5], C)], dict(eq="bij,bjk->bik")),
    ("einsum", "f64", [([3, 3], C)], dict(eq="ii->i")),
    ("einsum", "f64", [([3, 3], T)], dict(eq="ii")),
    ("einsum", "f32", [([4], C), ([8], S)], dict(eq="i,i")),
    ("einsum", "f64", [([3], C), ([4], C)], dict(eq="i,j")),
    ("einsum", "f64", [([2, 1, 3, 4], C), ([5, 4, 2], C)], dict(eq="...ij,...jk")),
    ("einsum", "f32", [([3, 4], C)], dict(eq="ij->ji")),
    ("einsum", "f64", [([2, 3], C), ([4, 3, 5], C), ([2, 5], C)], dict(eq="bn,anm,bm->ba")),
    ("einsum", "f64", [([2, 2, 3], C), ([3, 4], C)], dict(eq="iij,jk->k")),
    ("einsum", "f64", [([3, 4], C), ([4, 2], C)], dict(eq="Ab, bC -> CA")),
    ("einsum", "f64", [([3, 1], C), ([4, 5], C)], dict(eq="ij,jk->ik")),
    ("einsum", "f64", [([2, 3, 4], C)], dict(eq="i...->...")),
    ("einsum", "f32", [([2, 3], C), ([3, 4], C), ([4, 2], C)], dict(eq="ij,jk,kl->il")),
    ("tensordot", "f32", [([3, 4], C), ([4, 5], C)], dict(da=[1], db=[0])),
    ("tensordot", "f64", [([2, 3, 4], C), ([5, 4, 3], C)], dict(da=[1, 2], db=[2, 1])),
    ("tensordot", "f64", [([4, 3], T), ([3, 6], S)], dict(da=[0], db=[0])),
    ("tensordot", "f64", [([3, 1], C), ([4, 5], C)], dict(da=[-1], db=[0])),
    ("tensordot", "f64", [([2, 3], C), ([4], C)], dict(da=[], db=[])),
    ("kron", "f32", [([2, 3], C), ([3, 2], C)], dict()),
    # (PyTorch's kron fails on a transposed operand: it views)
    ("kron", "f64", [([2, 3, 2], C), ([2, 8], S)], dict()),
    ("kron", "i32", [([2, 2], C), ([3], C)], dict()),
    ("trace", "f32", [([4, 3], T)], dict()),
    ("trace", "f64", [([3, 8], S)], dict()),
    ("trace", "i32", [([3, 3], C)], dict()),
    ("cross", "f32", [([3, 4], C), ([3, 4], C)], dict()),
    ("cross", "f64", [([2, 4, 3], C), ([1, 4, 3], C)], dict(dim=-1)),
    ("cross", "f64", [([4, 3], T), ([3, 8], S)], dict(dim=0)),
    ("cross", "i64", [([2, 3], C), ([2, 3], C)], dict(dim=1)),
    ("multi_dot", "f32", [([3, 4], C), ([4, 5], C)], dict()),
    ("multi_dot", "f64", [([4], C), ([5, 4], T), ([5, 2], C)], dict()),
    ("multi_dot", "f64", [([2, 3], C), ([3, 8], C), ([8, 2], C), ([2], C)], dict()),
    ("multi_dot", "f64", [([5, 2], C), ([2, 6], C), ([6, 3], C), ([3, 4], C), ([4, 7], C)],
     dict()),
    ("matrix_power", "f64", [([3, 3], C, 0.5)], dict(n=0)),
    ("matrix_power", "f32", [([3, 3], T, 0.5)], dict(n=1)),
    ("matrix_power", "f64", [([2, 3, 3], C, 0.5)], dict(n=2)),
    ("matrix_power", "f64", [([3, 3], C, 0.5)], dict(n=3)),
    ("matrix_power", "f32", [([2, 3, 6], S, 0.5)], dict(n=5)),
    ("matrix_power", "f64", [([3, 3], C, 0.5)], dict(n=6)),
    ("matrix_power", "i64", [([3, 3], C)], dict(n=0)),
]
# matrix_exp: one matrix whose 1-norm selects each degree (1, 2, 4, 8, 12, 18, then 18 with
# squaring), float64 and float32: a power-of-two scale puts the norm mid-interval
THETAS = {"f64": [2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                  4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00],
          "f32": [1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                  5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00]}
for dt, how in (("f64", C), ("f32", T)):
    th = THETAS[dt]
    norm = layout(base_values([3, 3], 0), how).abs().sum(-2).max().item()
    for lo, hi in zip([th[0] / 64] + th[:5], th[:5] + [th[5] * 8]):
        scale = 2.0 ** round(math.log2(math.sqrt(lo * hi) / norm))
        assert lo < norm * scale <= hi
        CASES.append(("matrix_exp", dt, [([3, 3], how, scale)], dict()))
CASES += [
    ("matrix_exp", "f64", [([3, 4, 4], C, 0.5)], dict()),
    ("matrix_exp", "f32", [([2, 3, 6], S, 0.25)], dict()),
    ("matrix_exp", "f64", [([2, 1, 1], C)], dict()),
    ("matrix_exp", "f64", [([2, 0, 0], C)], dict()),
]


def main():
    arrays, entries = [], []
    for k, (op, dt, inputs, p) in enumerate(CASES):
        a, e = case(k, op, dt, inputs, **p)
        arrays.append(a)
        entries.append(e)
    with open(OUT, "w") as f:
        f.write("/* GENERATED by tools/gen_golden_linalg2.py with torch %s - do not edit. */\n"
                % torch.__version__)
        f.write("".join(arrays))
        f.write("static const linalg2_golden linalg2_golden_cases[] = {\n")
        f.write("".join(entries))
        f.write("};\n")


if __name__ == "__main__":
    main()
