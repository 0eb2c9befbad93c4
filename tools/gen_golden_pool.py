#!/usr/bin/env python3
"""Writes tests/golden/pool_golden.h: PyTorch's numbers for tests/test_pool.c.

Pooling (max/avg/adaptive, 1-D, 2-D and 3-D, every option), padding (constant with cropping,
reflect, replicate, circular), interpolate (nearest, nearest-exact, linear, bilinear with and
without align_corners, size or scale_factor) and pixel_shuffle / pixel_unshuffle, on
contiguous, transposed (the base's last two dims swapped) and step-sliced (every other element
of the base's last dim) inputs in float32 / float64 and one float16 / bfloat16 case each: the
output, max's indices and the gradient of sum(out * w) for w[k] = k % 7 - 3 (w in out's
contiguous order). Run with PyTorch installed: python3 tools/gen_golden_pool.py
"""
import math
import os

import torch
import torch.nn.functional as F

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "pool_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "f16": (torch.float16, "CT_FLOAT16"), "bf16": (torch.bfloat16, "CT_BFLOAT16")}
CONTIG, TRANSPOSED, STEP = 0, 1, 2
F32, F64 = "f32", "f64"
PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}
INTERP_MODES = {"nearest": 0, "nearest-exact": 1, "linear": 2, "bilinear": 3}


def base_shape(shape, how):
    s = list(shape)
    if how == TRANSPOSED:
        s[-1], s[-2] = s[-2], s[-1]
    elif how == STEP:
        s[-1] *= 2
    return s


def base_values(shape, ties):
    """Deterministic values in 1/64 steps; ties: in halves, so max windows hold equal values."""
    n = math.prod(shape)
    v = torch.sin(torch.arange(n, dtype=torch.float64) * 1.7 + 0.3) * 4
    v = torch.round(v * 2) / 2 if ties else torch.round(v * 64) / 64  # short exact literals
    return v.reshape(shape)


def layout(b, how):
    if how == TRANSPOSED:
        return b.transpose(-1, -2)
    if how == STEP:
        return b[..., ::2]
    return b


def run(op, x, p, f):
    """The op with parameter ints p and floats f; returns (out, indices or None)."""
    if op[:8] in ("max_pool", "avg_pool"):  # k, s, p (n each), then max: d, ceil; avg: ceil,
        n = int(op[8])                       # count_include_pad, divisor_override (not 1-D)
        k, s, pd = p[0:n], p[n:2 * n], p[2 * n:3 * n]
        if op[0] == "m":
            y = getattr(F, op)(x, k, s, pd, p[3 * n:4 * n], bool(p[4 * n]), return_indices=n > 1)
            return y if n > 1 else (y, None)
        div = {"divisor_override": p[3 * n + 2] or None} if n > 1 else {}
        return getattr(F, op)(x, k, s, pd, bool(p[3 * n]), bool(p[3 * n + 1]), **div), None
    if op.startswith("max_unpool"):  # k, s, pad (n each), output size (0: None) of max_pool's
        n = int(op[10])               # output and indices
        k, s, pd, o = p[0:n], p[n:2 * n], p[2 * n:3 * n], p[3 * n:4 * n]
        y, i = getattr(F, "max_pool%dd" % n)(x, k, s, pd, return_indices=True)
        return getattr(F, op)(y, i, k, s, pd, o if o[0] else None), None
    if op.startswith("lp_pool"):  # k, s (n each; 0: None), ceil; f[0] the norm
        n = int(op[7])
        k, s = p[0:n], p[n:2 * n] if p[n] else None
        return getattr(F, op)(x, f[0], k if n > 1 else k[0], s if n > 1 or s is None else s[0],
                              bool(p[2 * n])), None
    if op.startswith("adaptive_"):
        n = int(op[-2])
        if "max" in op:
            return getattr(F, op)(x, p[0:n], return_indices=True)
        return getattr(F, op)(x, p[0] if n == 1 else p[0:n]), None
    if op == "pad":
        mode = [k for k, v in PAD_MODES.items() if v == p[0]][0]
        return F.pad(x, p[2:2 + p[1]], mode=mode, value=f[0] if mode == "constant" else None), None
    if op == "interpolate":
        mode = [k for k, v in INTERP_MODES.items() if v == p[0]][0]
        dims = x.dim() - 2
        size = [s for s in p[1:1 + dims]] if p[1] else None
        scale = [s for s in f[:dims]] if not p[1] else None
        ac = bool(p[3]) if mode in ("linear", "bilinear") else None
        return F.interpolate(x, size=size, scale_factor=scale, mode=mode, align_corners=ac), None
    if op == "pixel_shuffle":
        return F.pixel_shuffle(x, p[0]), None
    return F.pixel_unshuffle(x, p[0]), None


def arr(name, values, digits):
    return "static const double %s[] = {\n%s\n};\n" % (
        name, c_wrap([num(v, digits) for v in values], "    ", ""))


def case(k, op, dt, shape, how, p, f=(0.0, 0.0), ties=False, nan=False):
    dtype, ctype = DTYPES[dt]
    bs = base_shape(shape, how)
    b = base_values(bs, ties)
    if nan:
        b.view(-1)[[1, 5]] = float("nan")
    x = layout(b.to(dtype), how).detach().requires_grad_(True)
    out, ind = run(op, x, list(p), list(f))
    w = (torch.arange(out.numel()) % 7 - 3).to(dtype).reshape(out.shape)
    (out * w).sum().backward()
    pre = "pg%d" % k
    dg = 17 if dt == F64 else 9
    text = arr(pre + "_x", b.to(dtype).double().flatten().tolist(), dg)
    text += arr(pre + "_out", out.detach().double().flatten().tolist(), dg)
    text += arr(pre + "_grad", x.grad.double().flatten().tolist(), dg)
    if ind is not None:
        text += arr(pre + "_idx", ind.double().flatten().tolist(), 9)
    pp = list(p) + [0] * (16 - len(p))
    row = ('    {"%s", %s, %d, {%s},\n     {%s, %s}, %d, {%s}, %d, {%s}, %s_x, %s_out, %s_grad, %s},\n'
           % (op, ctype, how, ", ".join(map(str, pp)), num(f[0]), num(f[1]), len(bs),
              ", ".join(map(str, bs)), out.dim(), ", ".join(map(str, out.shape)), pre, pre, pre,
              pre + "_idx" if ind is not None else "NULL"))
    return text, row


CASES = [
    # max_pool2d: k, s, p, d, ceil
    ("max_pool2d", F32, [2, 2, 6, 6], CONTIG, [2, 2, 2, 2, 0, 0, 1, 1, 0], dict(ties=True)),
    ("max_pool2d", F64, [1, 2, 7, 9], CONTIG, [3, 2, 2, 1, 1, 1, 1, 1, 1], dict(ties=True)),
    ("max_pool2d", F64, [2, 6, 7], TRANSPOSED, [2, 3, 1, 2, 1, 1, 2, 1, 0], {}),
    ("max_pool2d", F32, [1, 2, 5, 6], STEP, [3, 3, 2, 2, 1, 0, 1, 2, 1], dict(nan=True)),
    ("max_pool2d", "f16", [1, 2, 4, 4], CONTIG, [2, 2, 2, 2, 0, 0, 1, 1, 0], dict(ties=True)),
    # avg_pool2d: k, s, p, ceil, count_include_pad, divisor_override
    ("avg_pool2d", F32, [1, 2, 6, 7], CONTIG, [2, 2, 2, 2, 0, 0, 0, 1, 0], {}),
    ("avg_pool2d", F64, [1, 2, 7, 6], TRANSPOSED, [3, 3, 2, 2, 1, 1, 1, 0, 0], {}),
    ("avg_pool2d", F64, [2, 5, 6], STEP, [3, 2, 2, 1, 1, 1, 0, 1, 0], {}),
    ("avg_pool2d", F32, [1, 2, 5, 5], CONTIG, [2, 3, 1, 2, 1, 1, 1, 1, 5], {}),
    ("avg_pool2d", "bf16", [1, 1, 5, 5], CONTIG, [3, 3, 2, 2, 1, 1, 0, 1, 0], {}),
    # adaptive: output size
    ("adaptive_avg_pool2d", F32, [1, 2, 7, 9], CONTIG, [3, 4], {}),
    ("adaptive_avg_pool2d", F64, [2, 8, 5], TRANSPOSED, [5, 3], {}),
    ("adaptive_avg_pool2d", F64, [2, 2, 3, 4], STEP, [1, 1], {}),
    ("adaptive_avg_pool2d", F32, [1, 1, 4, 4], CONTIG, [6, 7], {}),
    ("adaptive_max_pool2d", F32, [1, 2, 7, 9], CONTIG, [3, 4], dict(ties=True)),
    ("adaptive_max_pool2d", F64, [2, 5, 6], TRANSPOSED, [4, 5], {}),
    ("adaptive_max_pool2d", F64, [1, 2, 4, 5], STEP, [2, 2], dict(nan=True)),
    # 1-D: max k, s, p, d, ceil; avg k, s, p, ceil, count_include_pad; adaptive out
    ("max_pool1d", F32, [2, 2, 11], CONTIG, [3, 2, 1, 2, 1], dict(ties=True)),
    ("max_pool1d", F64, [3, 8], STEP, [2, 2, 0, 1, 0], {}),
    ("avg_pool1d", F64, [2, 2, 9], CONTIG, [3, 2, 1, 1, 0], {}),
    ("avg_pool1d", F32, [3, 7], TRANSPOSED, [2, 1, 1, 0, 1], {}),
    ("adaptive_avg_pool1d", F64, [2, 2, 10], CONTIG, [4], {}),
    ("adaptive_avg_pool1d", F32, [3, 6], STEP, [1], {}),
    # 3-D: max k, s, p, d (3 each), ceil; avg k, s, p, ceil, count_include_pad, divisor
    ("max_pool3d", F32, [1, 2, 2, 4, 4], CONTIG, [2] * 6 + [0] * 3 + [1] * 3 + [0],
     dict(ties=True)),
    ("max_pool3d", F64, [2, 3, 4, 5], TRANSPOSED, [3, 2, 3, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1], {}),
    ("max_pool3d", F64, [1, 1, 4, 4, 4], STEP, [2, 2, 2, 1, 2, 1, 1, 0, 1, 2, 1, 2, 0],
     dict(nan=True)),
    ("max_pool3d", F32, [1, 1, 4, 5, 5], CONTIG, [3] * 3 + [2] * 3 + [1] * 3 + [1, 2, 1, 1], {}),
    ("max_pool3d", "f16", [1, 1, 2, 4, 4], CONTIG, [2] * 6 + [0] * 3 + [1] * 3 + [0],
     dict(ties=True)),
    ("avg_pool3d", F32, [1, 2, 2, 4, 4], CONTIG, [2] * 6 + [0] * 3 + [0, 1, 0], {}),
    ("avg_pool3d", F64, [2, 3, 4, 5], TRANSPOSED, [3, 2, 3, 2, 1, 2, 1, 1, 1, 1, 0, 0], {}),
    ("avg_pool3d", F64, [1, 1, 4, 4, 4], STEP, [3, 3, 2, 2, 2, 1, 1, 1, 0, 1, 1, 0], {}),
    ("avg_pool3d", F32, [1, 1, 3, 4, 4], CONTIG, [2, 3, 2, 1, 2, 2, 1, 1, 1, 0, 1, 5], {}),
    ("adaptive_avg_pool3d", F32, [1, 2, 3, 5, 4], CONTIG, [2, 3, 3], {}),
    ("adaptive_avg_pool3d", F64, [2, 3, 4, 3], TRANSPOSED, [2, 3, 2], {}),
    ("adaptive_avg_pool3d", F64, [1, 2, 2, 3, 3], STEP, [1, 1, 1], {}),
    ("adaptive_avg_pool3d", F32, [1, 1, 2, 3, 3], CONTIG, [4, 5, 2], {}),
    ("adaptive_avg_pool3d", "bf16", [1, 1, 3, 4, 4], CONTIG, [3, 2, 3], {}),
    ("adaptive_max_pool3d", F32, [1, 2, 3, 5, 4], CONTIG, [2, 3, 3], dict(ties=True)),
    ("adaptive_max_pool3d", F64, [2, 3, 4, 3], TRANSPOSED, [2, 3, 2], {}),
    ("adaptive_max_pool3d", F64, [1, 1, 4, 3, 4], STEP, [2, 2, 3], dict(nan=True)),
    # lp_pool: k, s, ceil (n each; stride 0: the kernel); f[0] the norm (positive inputs where
    # the norm is fractional)
    ("lp_pool2d", F32, [1, 2, 5, 6], CONTIG, [2, 3, 1, 2, 1], dict(f=(2.0, 0.0))),
    ("lp_pool2d", F64, [2, 6, 5], TRANSPOSED, [3, 2, 0, 0, 0], dict(f=(3.0, 0.0))),
    ("lp_pool2d", F64, [1, 2, 4, 4], STEP, [2, 2, 1, 1, 0], dict(f=(math.inf, 0.0))),
    ("lp_pool1d", F64, [2, 2, 7], CONTIG, [3, 2, 1], dict(f=(2.0, 0.0))),
    ("lp_pool1d", F32, [3, 8], STEP, [2, 0, 0], dict(f=(-math.inf, 0.0))),
    ("lp_pool3d", F64, [1, 2, 3, 4, 4], CONTIG, [2, 2, 2, 1, 2, 2, 1], dict(f=(2.0, 0.0))),
    ("lp_pool3d", F32, [2, 3, 4, 3], TRANSPOSED, [2, 3, 2, 0, 0, 0, 0], dict(f=(1.0, 0.0))),
    # max_unpool of max_pool (k, s, padding, output size or 0)
    ("max_unpool2d", F32, [1, 2, 4, 5], CONTIG, [2, 2, 2, 2, 0, 0, 4, 5], {}),
    ("max_unpool2d", F64, [2, 5, 6], TRANSPOSED, [3, 2, 2, 2, 1, 1, 6, 5], {}),
    ("max_unpool2d", F64, [1, 2, 5, 6], STEP, [3, 3, 2, 2, 1, 0, 5, 6], {}),
    ("max_unpool3d", F32, [1, 2, 4, 4, 4], CONTIG, [2] * 6 + [0] * 6, {}),
    ("max_unpool3d", F64, [2, 3, 4, 5], TRANSPOSED, [2, 2, 3, 1, 2, 2, 1, 1, 1, 3, 4, 5], {}),
    # pad: mode, n, pads...; f[0] the constant
    ("pad", F32, [2, 3, 4], CONTIG, [0, 4, 1, 2, -1, 1], dict(f=(1.5, 0.0))),
    ("pad", F64, [2, 4, 3], TRANSPOSED, [0, 6, -1, -1, 2, 0, 1, 1], dict(f=(-2.0, 0.0))),
    ("pad", F64, [1, 2, 4, 5], CONTIG, [1, 4, 3, 2, 1, 3], {}),
    ("pad", F32, [2, 5], STEP, [1, 2, 4, -1], {}),
    ("pad", F64, [2, 3, 4], TRANSPOSED, [2, 4, 2, 3, 1, 0], {}),
    ("pad", F32, [1, 2, 3, 4], CONTIG, [2, 4, -1, 5, 0, 2], {}),
    ("pad", F64, [2, 3, 4], STEP, [3, 4, 2, -1, 3, 1], {}),
    ("pad", F32, [1, 2, 3, 3], CONTIG, [3, 4, 3, 3, 1, 2], {}),
    ("pad", "bf16", [1, 2, 3, 3], CONTIG, [1, 4, 2, 1, 1, 2], {}),
    # interpolate: mode, size (0: scale_factor f), align_corners
    ("interpolate", F32, [1, 2, 3, 4], CONTIG, [0, 0, 0, 0], dict(f=(2.0, 1.5))),
    ("interpolate", F64, [1, 2, 5, 3], TRANSPOSED, [0, 3, 7, 0], {}),
    ("interpolate", F32, [1, 2, 6], STEP, [0, 4, 0, 0], {}),
    ("interpolate", F64, [1, 2, 4, 5], CONTIG, [1, 7, 3, 0], {}),
    ("interpolate", F32, [2, 1, 5], CONTIG, [1, 0, 0, 0], dict(f=(1.7, 0.0))),
    ("interpolate", F32, [1, 2, 3, 4], CONTIG, [3, 0, 0, 0], dict(f=(2.0, 2.0))),
    ("interpolate", F64, [1, 2, 4, 3], TRANSPOSED, [3, 7, 5, 1], {}),
    ("interpolate", F64, [1, 2, 5, 4], STEP, [3, 3, 2, 0], {}),
    ("interpolate", F32, [1, 1, 3, 3], CONTIG, [3, 3, 5, 1], {}),
    ("interpolate", F64, [2, 2, 5], CONTIG, [2, 8, 0, 0], {}),
    ("interpolate", F32, [2, 2, 6], TRANSPOSED, [2, 0, 0, 1], dict(f=(0.6, 0.0))),
    ("interpolate", "f16", [1, 1, 3, 3], CONTIG, [3, 0, 0, 0], dict(f=(1.5, 1.5))),
    # pixel_shuffle / pixel_unshuffle: factor
    ("pixel_shuffle", F32, [1, 8, 2, 3], CONTIG, [2], {}),
    ("pixel_shuffle", F64, [9, 2, 2], TRANSPOSED, [3], {}),
    ("pixel_unshuffle", F64, [2, 1, 4, 6], CONTIG, [2], {}),
    ("pixel_unshuffle", F32, [1, 2, 4, 2], STEP, [2], {}),
]


def main():
    decls, rows = [], []
    for k, (op, dt, shape, how, p, kw) in enumerate(CASES):
        text, row = case(k, op, dt, shape, how, p, **kw)
        decls.append(text)
        rows.append(row)
    with open(OUT, "w") as f:
        f.write("/* GENERATED by tools/gen_golden_pool.py with torch %s - do not edit. */\n"
                % torch.__version__)
        f.write("".join(decls))
        f.write("static const pool_golden pool_golden_cases[] = {\n")
        f.write("".join(rows))
        f.write("};\n")


if __name__ == "__main__":
    main()
