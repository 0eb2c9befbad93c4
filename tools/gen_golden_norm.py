#!/usr/bin/env python3
"""Writes tests/golden/norm_golden.h: PyTorch's numbers for tests/test_norm.c.

batch_norm (training with running statistics over 3 steps, eval, no statistics, no affine;
(N, C), (N, C, L) and (N, C, H, W); contiguous float32 and transposed float64), layer_norm,
group_norm, instance_norm and rms_norm (every option), with outputs, the gradients of
sum(out * g) for input, weight and bias, and the running statistics after the steps; the
BatchNorm2d module with momentum None; dropout and dropout2d: the count of zeros and FNV-1a
hashes of the output's and the gradient's bytes at seeds 0, 1, 42.
Run with PyTorch installed: python3 tools/gen_golden_norm.py
"""
import math
import os

import torch
import torch.nn.functional as F

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "norm_golden.h")
MAXV = 120


def values(n, k=0):
    v = torch.arange(n, dtype=torch.float64)
    return torch.sin(v * 1.3 + 0.7 + k) * 2 + torch.cos(v * 0.37) + 0.5 * k


def make_input(shape, dtype, transposed, k=0):
    """transposed: a base with the last two dims swapped, transposed back (a strided view)."""
    n = math.prod(shape)
    v = values(n, k)
    if transposed:
        s = list(shape)
        s[-1], s[-2] = s[-2], s[-1]
        return v.reshape(s).to(dtype).transpose(-1, -2)
    return v.reshape(shape).to(dtype)


def arr(vals, digits):
    vals = list(vals) + [0] * 0
    return "{" + c_wrap([num(v, digits) for v in (vals or [0])], "      ", "}").lstrip()


def case(kind, shape, f64, transposed, params, steps=1):
    """kind: bn, ln, gn, in, rms. params: dict. Returns the C initializer."""
    dtype = torch.float64 if f64 else torch.float32
    digits = 17 if f64 else 9
    C = shape[1] if kind in ("bn", "gn", "in") else None
    pshape = params.get("pshape", [C] if C else None)
    n_p = math.prod(pshape) if pshape else 0
    w = (values(n_p, 3) * 0.5 + 1).reshape(pshape).to(dtype).requires_grad_(True) \
        if params.get("weight") else None
    b = (values(n_p, 5) * 0.3).reshape(pshape).to(dtype).requires_grad_(True) \
        if params.get("bias") else None
    rm = rv = None
    if params.get("running"):
        rm = (values(C, 7) * 0.1).to(dtype)
        rv = (values(C, 8).abs() * 0.5 + 0.5).to(dtype)
    rm0 = rm.tolist() if rm is not None else [0]
    rv0 = rv.tolist() if rv is not None else [0]
    training = params.get("training", True)
    eps = params.get("eps", 1e-5)
    mom = params.get("momentum", 0.1)
    for step in range(steps):
        x = make_input(shape, dtype, transposed, step).requires_grad_(True)
        if w is not None:
            w.grad = None
        if b is not None:
            b.grad = None
        if kind == "bn":
            y = F.batch_norm(x, rm, rv, w, b, training, mom, eps)
        elif kind == "ln":
            y = F.layer_norm(x, pshape, w, b, eps)
        elif kind == "gn":
            y = F.group_norm(x, params["groups"], w, b, eps)
        elif kind == "in":
            y = F.instance_norm(x, rm, rv, w, b, training, mom, eps)
        else:
            y = F.rms_norm(x, pshape, w, params.get("eps"))
        g = values(y.numel(), 11).reshape(y.shape).to(dtype)
        (y * g).sum().backward()
    assert x.numel() <= MAXV
    fields = [
        '"%s"' % kind, str(int(f64)), str(int(transposed)), str(len(shape)),
        "{%s}" % ", ".join(map(str, shape)), str(len(pshape) if pshape else 0),
        "{%s}" % ", ".join(map(str, pshape or [0])),
        str(int(w is not None)), str(int(b is not None)), str(int(rm is not None)),
        str(int(training)), num(mom), num(eps if eps is not None else float("nan")),
        str(params.get("groups", 0)), str(steps),
        arr(rm0, 17), arr(rv0, 17),
        arr(rm.tolist() if rm is not None else [0], digits),
        arr(rv.tolist() if rv is not None else [0], digits),
        arr(y.detach().flatten().tolist(), digits),
        arr(x.grad.flatten().tolist(), digits),
        arr(w.grad.flatten().tolist() if w is not None else [0], digits),
        arr(b.grad.flatten().tolist() if b is not None else [0], digits),
    ]
    return "    {" + ", ".join(fields[:15]) + ",\n     " + ",\n     ".join(fields[15:]) + "},\n"


CASES = [
    ("bn", [4, 3, 5], False, False, dict(weight=1, bias=1, running=1), 3),
    ("bn", [4, 3, 5], True, True, dict(weight=1, bias=1, running=1, momentum=0.3), 3),
    ("bn", [6, 3], True, False, dict(running=1, momentum=0.5, eps=1e-3), 2),
    ("bn", [2, 3, 4, 5], False, True, dict(weight=1, bias=1, running=1, training=False), 1),
    ("bn", [2, 3, 4, 5], True, False, dict(weight=1, running=1, training=False), 1),
    ("bn", [5, 2, 3], True, False, dict(bias=1), 1),
    ("bn", [6, 4], False, True, dict(), 1),
    ("ln", [3, 4, 5], False, False, dict(pshape=[5], weight=1, bias=1), 1),
    ("ln", [3, 4, 5], True, True, dict(pshape=[4, 5], weight=1, bias=1, eps=1e-3), 1),
    ("ln", [6, 7], True, False, dict(pshape=[7]), 1),
    ("ln", [2, 3, 6], False, True, dict(pshape=[6], weight=1), 1),
    ("ln", [4, 5], True, False, dict(pshape=[5], bias=1), 1),
    ("gn", [2, 6, 3], True, False, dict(groups=3, weight=1, bias=1), 1),
    ("gn", [2, 4, 2, 3], False, True, dict(groups=2), 1),
    ("gn", [3, 4, 5], True, True, dict(groups=4, weight=1, bias=1, eps=1e-2), 1),
    ("in", [2, 3, 5], True, False, dict(weight=1, bias=1), 1),
    ("in", [2, 3, 2, 4], False, True, dict(running=1), 2),
    ("in", [2, 3, 5], True, True, dict(running=1, training=False, weight=1), 1),
    ("rms", [3, 4], False, False, dict(pshape=[4], weight=1, eps=None), 1),
    ("rms", [2, 3, 4], True, True, dict(pshape=[3, 4], eps=1e-3), 1),
    ("rms", [5, 6], True, False, dict(pshape=[6], weight=1, eps=None), 1),
]


def fnv(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


DROP_SHAPES = [[1], [15], [16], [17], [1000], [8, 16, 12, 12]]


def dropout_case(seed, shape, p, dtype, feature, transposed):
    n = math.prod(shape)
    v = ((torch.arange(n, dtype=torch.float64) * 37) % 101 - 50) / 8  # exact in C too
    if transposed:
        x = v.reshape(shape[1], shape[0]).to(dtype).t()
    else:
        x = v.reshape(shape).to(dtype)
    x.requires_grad_(True)
    torch.manual_seed(seed)
    y = F.dropout2d(x, p) if feature else F.dropout(x, p)
    y.sum().backward()
    yb = y.detach().contiguous().numpy().tobytes()
    gb = x.grad.contiguous().numpy().tobytes()
    zeros = int((y == 0).sum())
    return "    {%d, %d, {%s}, %s, %s, %d, %d, %d, 0x%016xull, 0x%016xull},\n" % (
        seed, len(shape), ", ".join(map(str, shape)), num(p), "CT_FLOAT64" if dtype ==
        torch.float64 else "CT_FLOAT32", int(feature), int(transposed), zeros, fnv(yb), fnv(gb))


def bn_module():
    """BatchNorm2d(3, momentum=None): 3 training forwards, then eval."""
    m = torch.nn.BatchNorm2d(3, momentum=None)
    for step in range(3):
        m(make_input([2, 3, 2, 2], torch.float32, False, step))
    m.eval()
    y = m(make_input([2, 3, 2, 2], torch.float32, False, 5))
    return (m.running_mean.tolist(), m.running_var.tolist(), int(m.num_batches_tracked),
            y.detach().flatten().tolist())


def main():
    rows = [case(*c) for c in CASES]
    drops = []
    for seed in (0, 1, 42):
        for shape in DROP_SHAPES:
            drops.append(dropout_case(seed, shape, 0.5, torch.float32, False, False))
    drops.append(dropout_case(0, [17], 0.2, torch.float64, False, False))
    drops.append(dropout_case(1, [16, 17], 0.3, torch.float32, False, True))
    drops.append(dropout_case(0, [4, 6, 3, 3], 0.5, torch.float32, True, False))
    drops.append(dropout_case(42, [3, 5, 7], 0.25, torch.float64, True, False))
    rm, rv, nbt, y = bn_module()
    with open(OUT, "w") as out:
        out.write("/* Generated by tools/gen_golden_norm.py (PyTorch %s) - do not edit. */\n"
                  % torch.__version__.split("+")[0])
        out.write("#define NORM_GOLDEN_MAXV %d\n" % MAXV)
        out.write("typedef struct norm_golden {\n"
                  "    const char *kind; /* bn, ln, gn, in, rms */\n"
                  "    int f64, transposed, nd;\n    int64_t shape[4];\n"
                  "    int pnd;\n    int64_t pshape[2];\n"
                  "    int weight, bias, running, training;\n"
                  "    double momentum, eps; /* eps NAN: None */\n"
                  "    int groups, steps;\n"
                  "    double rm0[6], rv0[6], rm[6], rv[6];\n"
                  "    double y[NORM_GOLDEN_MAXV], dx[NORM_GOLDEN_MAXV], dw[20], db[20];\n"
                  "} norm_golden;\n")
        out.write("static const norm_golden norm_golden_cases[] = {\n%s};\n" % "".join(rows))
        out.write("typedef struct dropout_golden {\n    int seed, nd;\n    int64_t shape[4];\n"
                  "    double p;\n    ct_dtype dtype;\n    int feature, transposed;\n"
                  "    int64_t zeros;\n    uint64_t out_hash, grad_hash;\n} dropout_golden;\n")
        out.write("static const dropout_golden dropout_golden_cases[] = {\n%s};\n"
                  % "".join(drops))
        out.write("/* BatchNorm2d(3, momentum=None) after 3 training forwards, then eval */\n")
        out.write("static const double bn_module_rm[3] = %s;\n" % arr(rm, 9))
        out.write("static const double bn_module_rv[3] = %s;\n" % arr(rv, 9))
        out.write("static const int64_t bn_module_nbt = %d;\n" % nbt)
        out.write("static const double bn_module_y[24] = %s;\n" % arr(y, 9))


if __name__ == "__main__":
    main()
