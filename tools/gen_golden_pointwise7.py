#!/usr/bin/env python3
"""Writes tests/golden/pointwise7_golden.h: PyTorch's numbers for tests/test_pointwise7.c.

Each case applies one op to a (3, 4) input laid out contiguously ("c"), as the transpose of
a (4, 3) tensor ("t") or as the step-2 slice [:, ::2] of a (3, 8) tensor ("s"), in one dtype
(float64: every layout; float32: the slice; other dtypes: contiguous),
and records the output and, for floating inputs of differentiable ops, the gradient of
sum(out * w) with w[i] = 0.5 + 0.125 * i (row-major over the (3, 4) output). In-place ops
run on a clone of the input (x.clone().exp_()). addcmul/addcdiv take that input as self and
broadcast tensor1 (4,) and tensor2 (3, 1) against it (lerp: end and weight; div: the
divisor is tensor2) (pw7_t1/pw7_t2: float values, integer
values); their cases record all three gradients. Run with PyTorch installed:
python3 tools/gen_golden_pointwise7.py
"""
import math
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "pointwise7_golden.h")

DTYPES = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.int64: "CT_INT64",
          torch.int32: "CT_INT32", torch.uint8: "CT_UINT8", torch.bool: "CT_BOOL"}
STORE = {"c": (3, 4), "t": (4, 3), "s": (3, 8)}
FLOATS = [torch.float32, torch.float64]
INTS = [torch.int64, torch.int32]


def values(kind, n):
    """n stored values: normal-ish floats, positives, special values or small integers."""
    g = torch.Generator().manual_seed(7 + n)
    if kind == "pos":
        return (torch.rand(n, generator=g, dtype=torch.float64) * 3 + 0.05).tolist()
    if kind == "int":
        return torch.randint(-5, 6, (n,), generator=g).double().tolist()
    v = (torch.randn(n, generator=g, dtype=torch.float64) * 1.5).tolist()
    if kind == "special":
        for k, s in enumerate([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e30]):
            v[(k * 5) % n] = s
    return v


def layout(stored, dtype, lay):
    base = torch.tensor(stored, dtype=torch.float64).reshape(STORE[lay]).to(dtype)
    return base.t() if lay == "t" else (base[:, ::2] if lay == "s" else base)


CASES = [  # op, fn on x, value kind, dtypes, differentiable
    ("isnan", torch.isnan, "special", FLOATS + INTS + [torch.uint8, torch.bool], False),
    ("isinf", torch.isinf, "special", FLOATS + INTS + [torch.uint8, torch.bool], False),
    ("isfinite", torch.isfinite, "special", FLOATS + INTS + [torch.uint8, torch.bool], False),
    ("erf", torch.erf, "normal", FLOATS + [torch.int64], True),
    ("neg_", lambda x: x.clone().neg_(), "normal", FLOATS + INTS, True),
    ("abs_", lambda x: x.clone().abs_(), "normal", FLOATS + INTS, True),
    ("exp_", lambda x: x.clone().exp_(), "normal", FLOATS, True),
    ("log_", lambda x: x.clone().log_(), "pos", FLOATS, True),
    ("sqrt_", lambda x: x.clone().sqrt_(), "pos", FLOATS, True),
    ("sigmoid_", lambda x: x.clone().sigmoid_(), "normal", FLOATS, True),
    ("tanh_", lambda x: x.clone().tanh_(), "normal", FLOATS, True),
    ("pow_", lambda x: x.clone().pow_(2.5), "pos", FLOATS, True),
    ("pow_int", lambda x: x.clone().pow_(3), "int", INTS + FLOATS, True),
    ("clamp_", lambda x: x.clone().clamp_(-0.5, 0.75), "normal", FLOATS, True),
    ("clamp_int", lambda x: x.clone().clamp_(-2, 3), "int", INTS, False),
]


def num(v, digits):
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return "%.*g" % (digits, v)


def arr(name, vals, digits=17):
    return "static const double %s[%d] = {\n%s\n};\n" % (
        name, len(vals), c_wrap([num(v, digits) for v in vals], "    "))


def layouts(dt):
    return "cts" if dt == torch.float64 else ("s" if dt == torch.float32 else "c")


TERNARY = [  # op, fn(x, a, b, value), dtypes, value
    ("addcmul", torch.addcmul, FLOATS + INTS, 0.5),
    ("addcdiv", torch.addcdiv, FLOATS, -1.5),
    ("addcmul_", lambda x, a, b, value: x.clone().addcmul_(a, b, value=value), FLOATS, 0.5),
    ("addcdiv_", lambda x, a, b, value: x.clone().addcdiv_(a, b, value=value), FLOATS, 2.0),
    ("lerp", lambda x, a, b, value: torch.lerp(x, a, b), FLOATS, 0),
    ("lerp_scalar", lambda x, a, b, value: torch.lerp(x, a, value), FLOATS, 0.3),
    ("lerp_scalar_hi", lambda x, a, b, value: torch.lerp(x, a, value), [torch.float64], 0.7),
    ("lerp_", lambda x, a, b, value: x.clone().lerp_(a, b), FLOATS, 0),
    ("lerp_scalar_", lambda x, a, b, value: x.clone().lerp_(a, value), FLOATS, -0.25),
    ("div_none", lambda x, a, b, value: torch.div(x, b, rounding_mode=None), FLOATS + INTS, 0),
    ("div_trunc", lambda x, a, b, value: torch.div(x, b, rounding_mode="trunc"), FLOATS + INTS,
     0),
    ("div_floor", lambda x, a, b, value: torch.div(x, b, rounding_mode="floor"), FLOATS + INTS,
     0),
]


def ternary(lines, rows, w):
    """self (3, 4) in a layout, tensor1 (4,) and tensor2 (3, 1) broadcast against it."""
    for op, fn, dtypes, value in TERNARY:
        for dt in dtypes:
            kind = "normal" if dt.is_floating_point else "int"
            value = value if dt.is_floating_point else 2
            for lay in layouts(dt) if not op.endswith(("_", "hi")) else "t":
                name = "pw7_%s_%s_%s" % (op, str(dt).split(".")[1], lay)
                src = "pw7_in_%s_%s" % (kind, lay)
                ins = [layout(values(kind, STORE[lay][0] * STORE[lay][1]), dt, lay),
                       torch.tensor(values(kind, 4), dtype=torch.float64).to(dt),
                       torch.tensor(values("pos" if dt.is_floating_point else "int", 3),
                                    dtype=torch.float64).reshape(3, 1).to(dt)]
                if dt.is_floating_point:
                    ins = [t.detach().requires_grad_(True) for t in ins]
                out = fn(ins[0], ins[1], ins[2], value=value)
                digits = 9 if out.dtype == torch.float32 else 14
                lines.append(arr(name + "_out", out.detach().double().flatten().tolist(), digits))
                grads = ["NULL"] * 3
                if dt.is_floating_point:
                    (out * w.to(out.dtype)).sum().backward()
                    for k, t in enumerate(ins):
                        if t.grad is None:
                            continue
                        grads[k] = "%s_grad%d" % (name, k)
                        lines.append(arr(grads[k], t.grad.double().flatten().tolist(), digits))
                rows.append('    {"%s", %s, %s, \'%s\', %s, %s, %s_out, {%s}},' % (
                    op, DTYPES[dt], DTYPES[out.dtype], lay, src, num(value, 17), name,
                    ", ".join(grads)))


def fnv1a(bits):
    """FNV-1a 64 of a sequence of 0/1 bytes (the C test hashes the same way)."""
    h = 0xcbf29ce484222325
    for b in bits:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def bern_p(n, dtype):
    return (torch.arange(n, dtype=torch.int64) * 37 % 101).to(dtype) / 100


def bernoulli(lines):
    """torch.bernoulli(p) at seeds 0, 1, 42 and sizes 1 to 10^6 (p[i] = (37 i mod 101) / 100),
    and for a transposed p: the hash and count of the draws, then two torch.rand doubles drawn
    after (the generator's position)."""
    rows = []
    for seed in (0, 1, 42):
        for n in (1, 15, 16, 17, 1000, 10**6):
            for dt in FLOATS:
                for transposed in ((False, True) if n == 15 else (False,)):
                    p = bern_p(n, dt)
                    if transposed:
                        p = p.reshape(3, 5).t()
                    torch.manual_seed(seed)
                    y = torch.bernoulli(p).flatten().to(torch.uint8).tolist()
                    after = torch.rand(2, dtype=torch.float64).tolist()
                    rows.append("    {%d, %d, %s, %d, 0x%016xull, %d, {%s}}," % (
                        seed, n, DTYPES[dt], transposed, fnv1a(y), sum(y),
                        ", ".join("%.17g" % v for v in after)))
    lines.append("static const pw7_bern pw7_berns[] = {\n%s\n};\n" % "\n".join(rows))


def main():
    lines = ["/* GENERATED by tools/gen_golden_pointwise7.py with torch %s - do not edit. */\n"
             % torch.__version__]
    rows = []
    w = torch.tensor([0.5 + 0.125 * i for i in range(12)], dtype=torch.float64).reshape(3, 4)
    inputs = set()
    for op, fn, kind, dtypes, diff in CASES:
        for dt in dtypes:
            for lay in layouts(dt):
                stored = values(kind, STORE[lay][0] * STORE[lay][1])
                name = "pw7_%s_%s_%s" % (op, str(dt).split(".")[1], lay)
                src = "pw7_in_%s_%s" % (kind, lay)
                if src not in inputs:
                    inputs.add(src)
                    lines.append(arr(src, stored))
                x = layout(stored, dt, lay)
                grad = diff and dt.is_floating_point
                if grad:
                    x = x.detach().requires_grad_(True)
                out = fn(x)
                digits = 9 if out.dtype == torch.float32 else 14
                lines.append(arr(name + "_out", out.detach().double().flatten().tolist(), digits))
                g = "NULL"
                if grad:
                    (out * w.to(out.dtype)).sum().backward()
                    lines.append(arr(name + "_grad", x.grad.double().flatten().tolist(), digits))
                    g = name + "_grad"
                rows.append('    {"%s", %s, %s, \'%s\', %s, %s_out, %s},' % (
                    op, DTYPES[dt], DTYPES[out.dtype], lay, src, name, g))
    lines.append("static const pw7_case pw7_cases[] = {\n%s\n};\n" % "\n".join(rows))
    rows = []
    ternary(lines, rows, w)
    lines.append("static const double pw7_t1[2][4] = {{%s}, {%s}};\n" % tuple(
        ", ".join(num(v, 17) for v in values(k, 4)) for k in ("normal", "int")))
    lines.append("static const double pw7_t2[2][3] = {{%s}, {%s}};\n" % tuple(
        ", ".join(num(v, 17) for v in values(k, 3)) for k in ("pos", "int")))
    lines.append("static const pw7_tcase pw7_tcases[] = {\n%s\n};\n" % "\n".join(rows))
    bernoulli(lines)
    with open(OUT, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
