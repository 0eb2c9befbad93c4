#!/usr/bin/env python3
"""Writes tests/golden/pointwise2_golden.h: PyTorch's numbers for tests/test_pointwise2.c.

Each case applies one op of issue 7's second slice to a (3, 4) input `a` laid out
contiguously ("c"), as the transpose of a (4, 3) tensor ("t") or as the step-2 slice
[:, ::2] of a (3, 8) tensor ("s") - float64 cases use "t", float32 "s", other dtypes "c" -
and, for binary ops, to a second operand `b` of shape (3, 4) ("f"), (4,) ("r") or (3, 1)
("k"), broadcast against it. It records the output and, for floating outputs of
differentiable ops, the gradients of sum(out * w) with w[i] = 0.5 + 0.125 * i (row-major over
the (3, 4) output). In-place ops (names ending in _) run on a clone of a. Inputs are stored
once per value kind and layout (pw2_in_<kind>_<layout>, the stored tensor's values in
order). Run with PyTorch installed: python3 tools/gen_golden_pointwise2.py
"""
import math
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "pointwise2_golden.h")

DTYPES = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.int64: "CT_INT64",
          torch.int32: "CT_INT32", torch.int8: "CT_INT8", torch.uint8: "CT_UINT8",
          torch.bool: "CT_BOOL"}
STORE = {"c": (3, 4), "t": (4, 3), "s": (3, 8)}
BSHAPE = {"f": (3, 4), "r": (4,), "k": (3, 1)}
F32, F64, I64, I32, I8, U8, B8 = (torch.float32, torch.float64, torch.int64, torch.int32,
                                  torch.int8, torch.uint8, torch.bool)
FLOATS = [F32, F64]


def values(kind, n, salt=0):
    """n stored values of a kind (the domain each op needs), 6 significant digits."""
    return [float("%.6g" % v) for v in raw_values(kind, n, salt)]


def raw_values(kind, n, salt):
    g = torch.Generator().manual_seed(11 + n + 97 * salt)
    u = torch.rand(n, generator=g, dtype=torch.float64)
    if kind == "pos":
        return (u * 3 + 0.05).tolist()
    if kind == "unit":
        return (u * 1.8 - 0.9).tolist()
    if kind == "gt1":
        return (u * 3 + 1.1).tolist()
    if kind == "prob":
        return (u * 0.96 + 0.02).tolist()
    if kind == "wide":  # logit with eps: some outside [eps, 1 - eps]
        return (u * 1.0 + 0.0).tolist()
    if kind == "int":
        return torch.randint(-9, 10, (n,), generator=g).double().tolist()
    if kind == "bits":
        return torch.randint(0, 100, (n,), generator=g).double().tolist()
    if kind == "shift":
        return torch.randint(-2, 10, (n,), generator=g).double().tolist()
    if kind == "nz":  # divisors away from zero, both signs
        return [(0.5 + 1.5 * x) * (1 if k % 3 else -1) for k, x in enumerate(u.tolist())]
    if kind == "nzint":
        return [float(int(1 + 4 * x) * (1 if k % 3 else -1)) for k, x in enumerate(u.tolist())]
    v = (torch.randn(n, generator=g, dtype=torch.float64) * 1.5).tolist()
    if kind == "half":  # halves for round's ties to even
        for k in range(0, n, 2):
            v[k] = (k % 9 - 4) + 0.5
    if kind == "zeros":  # xlogy's x
        for k in range(0, n, 3):
            v[k] = 0.0
    if kind in ("special", "nan"):
        specials = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e30]
        for k, s in enumerate(specials if kind == "special" else [math.nan]):
            v[(k * 5 + salt) % n] = s
    return v


def layout(stored, dtype, lay):
    base = torch.tensor(stored, dtype=torch.float64).reshape(STORE[lay]).to(dtype)
    return base.t() if lay == "t" else (base[:, ::2] if lay == "s" else base)


def inplace(name):
    return lambda x, *r: getattr(x.clone(), name)(*r)


# op, fn(a) or fn(a, b), kind of a, kind of b (None: unary), dtype cases, differentiable.
# A dtype case is the dtype of a, or (dtype of a, dtype of b, shape of b).
NUM = [F32, F64, I64]
UNARY = [
    ("expm1", torch.expm1, "normal", FLOATS + [I64]),
    ("exp2", torch.exp2, "normal", FLOATS + [I64]),
    ("log2", torch.log2, "pos", FLOATS),
    ("log10", torch.log10, "pos", FLOATS),
    ("tan", torch.tan, "unit", FLOATS),
    ("asin", torch.asin, "unit", FLOATS),
    ("acos", torch.acos, "unit", FLOATS),
    ("atan", torch.atan, "normal", FLOATS + [I32]),
    ("sinh", torch.sinh, "normal", FLOATS),
    ("cosh", torch.cosh, "normal", FLOATS),
    ("asinh", torch.asinh, "normal", FLOATS),
    ("acosh", torch.acosh, "gt1", FLOATS),
    ("atanh", torch.atanh, "unit", FLOATS),
    ("erfc", torch.erfc, "normal", FLOATS),
    ("erfinv", torch.erfinv, "unit", FLOATS + [B8]),
    ("floor", torch.floor, "half", FLOATS + [I64, I8]),
    ("ceil", torch.ceil, "half", FLOATS + [I32]),
    ("round", torch.round, "half", FLOATS + [I64]),
    ("trunc", torch.trunc, "half", FLOATS + [U8]),
    ("frac", torch.frac, "half", FLOATS),
    ("floor_", inplace("floor_"), "half", [F64]),
    ("ceil_", inplace("ceil_"), "half", [F32]),
    ("round_", inplace("round_"), "half", [F64]),
    ("trunc_", inplace("trunc_"), "half", [F64]),
    ("frac_", inplace("frac_"), "half", [F32]),
    ("sign", torch.sign, "special", FLOATS + [I64, B8]),
    ("sgn", torch.sgn, "special", FLOATS + [I32, B8]),
    ("signbit", torch.signbit, "special", FLOATS + [I64, U8, B8]),
    ("isposinf", torch.isposinf, "special", FLOATS + [I64]),
    ("isneginf", torch.isneginf, "special", FLOATS + [B8]),
    ("isreal", torch.isreal, "special", FLOATS + [I64]),
    ("nan_to_num", torch.nan_to_num, "special", FLOATS + [I64, B8]),
    ("nan_to_num_args", lambda x: torch.nan_to_num(x, nan=1.5, posinf=2.0, neginf=-3.0),
     "special", FLOATS),
    ("nan_to_num_", lambda x: x.clone().nan_to_num_(nan=-1.0, neginf=-7.0), "special", [F64]),
    ("logit", torch.logit, "prob", FLOATS + [I64]),
    ("logit_eps", lambda x: torch.logit(x, eps=0.2), "wide", FLOATS),
    ("bitwise_not", torch.bitwise_not, "int", [I64, I32, U8, B8]),
]
BINARY = [
    ("atan2", torch.atan2, "normal", "normal", [F32, F64, (I64, I64, "f")]),
    ("hypot", torch.hypot, "normal", "normal", [F32, F64]),
    ("logaddexp", torch.logaddexp, "normal", "normal", [F32, F64]),
    ("logaddexp2", torch.logaddexp2, "normal", "normal", [F32, F64]),
    ("xlogy", torch.xlogy, "zeros", "pos", [F32, F64, (I64, F32, "r")]),
    ("fmod", torch.fmod, "normal", "nz", [F32, F64, (I64, I64, "k")]),
    ("remainder", torch.remainder, "normal", "nz", [F32, F64, (I32, I32, "r")]),
    ("floor_divide", torch.floor_divide, "normal", "nz", [F32, F64, (I64, I64, "f")]),
    ("fmod_", inplace("fmod_"), "normal", "nz", [F64, (I64, I64, "r")]),
    ("remainder_", inplace("remainder_"), "normal", "nz", [F32, (I64, I64, "k")]),
    ("fmax", torch.fmax, "nan", "nan", [F32, F64, (I64, I64, "r"), (B8, B8, "f")]),
    ("fmin", torch.fmin, "nan", "nan", [F32, F64, (I32, F64, "k")]),
    ("bitwise_and", torch.bitwise_and, "bits", "bits", [(I64, I64, "r"), (U8, U8, "f"),
                                                        (B8, B8, "k")]),
    ("bitwise_or", torch.bitwise_or, "bits", "bits", [(I32, I64, "f"), (B8, B8, "r")]),
    ("bitwise_xor", torch.bitwise_xor, "bits", "bits", [(I64, I64, "k"), (B8, B8, "f")]),
    ("bitwise_left_shift", torch.bitwise_left_shift, "int", "shift", [(I64, I64, "f"),
                                                                      (I8, I8, "r"),
                                                                      (U8, U8, "k")]),
    ("bitwise_right_shift", torch.bitwise_right_shift, "int", "shift", [(I64, I64, "f"),
                                                                        (I8, I8, "r"),
                                                                        (U8, U8, "k")]),
    ("logical_xor", torch.logical_xor, "int", "special", [(I64, F32, "f"), (B8, F64, "r")]),
    ("isclose", torch.isclose, "special", "near", [F32, F64, I64]),
    ("isclose_nan", lambda a, b: torch.isclose(a, b, rtol=1e-3, atol=0.1, equal_nan=True),
     "special", "near", [F64]),
    ("isclose_zero", lambda a, b: torch.isclose(a, b, rtol=0, atol=0), "special", "near",
     [F32]),
]
NONDIFF = ("floor", "ceil", "round", "trunc", "sign", "sgn", "floor_divide")


def num(v, digits):
    """v in C; digits None: the shortest text that reads back as v."""
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v) if digits is None else "%.*g" % (digits, v)


def arr(name, vals, digits=None):
    return "static const double %s[%d] = {\n%s\n};\n" % (
        name, len(vals), c_wrap([num(v, digits) for v in vals], "    "))


def near(vals, is_float):
    """isclose's b: a's values nudged by 5e-6 relative or by 0.3 (1 for integers) in places."""
    out = list(vals)
    for k in range(len(out)):
        if k % 4 == 1 and is_float:
            out[k] *= 1 + 5e-6
        elif k % 4 == 2:
            out[k] += 0.3 if is_float else 1
    return out


def kind_for(kind, dtype):
    """Integer and bool operands take integer values (no NaN or fractions to convert)."""
    if dtype.is_floating_point or kind in ("int", "bits", "shift"):
        return kind
    return "nzint" if kind == "nz" else "int"


class Writer:
    def __init__(self):
        self.lines = []
        self.inputs = set()
        self.rows = []

    def stored(self, kind, lay_or_shape, n, salt=0):
        name = "pw2_in_%s_%s" % (kind, lay_or_shape)
        if name not in self.inputs:
            self.inputs.add(name)
            self.lines.append(arr(name, values(kind, n, salt)))
        return name

    def case(self, op, fn, ka, kb, spec, w):
        da, db, bs = spec if isinstance(spec, tuple) else (spec, spec, "f")
        lay = "t" if da == F64 else ("s" if da == F32 else "c")
        ka = kind_for(ka, da)
        stored = values(ka, STORE[lay][0] * STORE[lay][1])
        src_a = self.stored(ka, lay, STORE[lay][0] * STORE[lay][1])
        a = layout(stored, da, lay)
        b = None
        src_b = "NULL"
        if kb == "near":
            bvals = near(a.double().flatten().tolist(), da.is_floating_point)
            src_b = "pw2_b_%s_%s" % (op, str(da).split(".")[1])
            self.lines.append(arr(src_b, bvals))
            b = torch.tensor(bvals, dtype=torch.float64).reshape(3, 4).to(db)
        elif kb:
            kb = kind_for(kb, db)
            n = 1
            for s in BSHAPE[bs]:
                n *= s
            src_b = self.stored(kb, bs, n, salt=1)
            b = torch.tensor(values(kb, n, salt=1), dtype=torch.float64).reshape(
                BSHAPE[bs]).to(db)
        ins = [a] + ([b] if b is not None else [])
        diff = op not in NONDIFF and not op.startswith(("is", "bitwise", "logical", "signbit"))
        grad = diff and all(t.is_floating_point() for t in ins)
        if grad:
            ins = [t.detach().requires_grad_(True) for t in ins]
        out = fn(*ins)
        digits = 9 if out.dtype == F32 else 14
        fields = ['"%s"' % op, DTYPES[da], DTYPES[db], DTYPES[out.dtype], "'%s'" % lay,
                  "'%s'" % (bs if kb else "-"), src_a, src_b, "1" if grad else "0"]
        vecs = [out.detach().double().flatten().tolist()]
        if grad:
            (out * w.to(out.dtype)).sum().backward()
            vecs += [t.grad.double().flatten().tolist() for t in ins]
        vecs += [[0]] * (3 - len(vecs))
        body = ",\n".join("{" + c_wrap([num(v, digits) for v in vec], "      ", "}").lstrip()
                           for vec in vecs)
        head = c_wrap(fields, "     ", ",").lstrip()
        self.rows.append("    {%s\n     %s}," % (head, body))


def main():
    w = torch.tensor([0.5 + 0.125 * i for i in range(12)], dtype=torch.float64).reshape(3, 4)
    wr = Writer()
    for op, fn, kind, dtypes in UNARY:
        for dt in dtypes:
            wr.case(op, fn, kind, None, dt, w)
    for op, fn, ka, kb, specs in BINARY:
        for spec in specs:
            wr.case(op, fn, ka, kb, spec, w)
    head = "/* GENERATED by tools/gen_golden_pointwise2.py with torch %s - do not edit. */\n" % (
        torch.__version__)
    body = "".join(wr.lines)
    table = "static const pw2_case pw2_cases[] = {\n%s\n};\n" % "\n".join(wr.rows)
    with open(OUT, "w") as f:
        f.write(head + body + table)


if __name__ == "__main__":
    main()
