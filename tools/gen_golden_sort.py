#!/usr/bin/env python3
"""Writes tests/golden/sort_golden.h: PyTorch's numbers for tests/test_sort.c.

sort/argsort/msort, topk, kthvalue, median, nanmedian, mode, quantile, nanquantile, unique,
unique_consecutive, isin, searchsorted, bucketize, bincount and histc on contiguous,
transposed and step-sliced inputs, float32/float64/int64/bool, with ties, NaN and -0.0 where
PyTorch's choice among ties is defined, and for float inputs of the differentiable ops the
gradient of sum(out * w) for w[k] = k % 7 - 3 (w in out's contiguous order). Inputs are short
decimals the header spells exactly. Run with PyTorch installed: python3 tools/gen_golden_sort.py
"""
import math
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "sort_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "i64": (torch.int64, "CT_INT64"), "b8": (torch.bool, "CT_BOOL")}
CONTIG, TRANSPOSED, STEP = 0, 1, 2
INTERP = ["linear", "lower", "higher", "midpoint", "nearest"]
NAN = float("nan")


def base_values(shape, kind, dtype):
    """kind "ties": few distinct quarters; "distinct": all different; "nan": ties, NaN, -0.0."""
    n = math.prod(shape)
    if kind == "distinct":
        v = [((k * 37) % 101 - 50) / 4 for k in range(n)]
    elif kind == "small":
        v = [float((k * 5) % 7 % 3) for k in range(n)]
    else:
        v = [((k * 7) % 11 - 5) / 2 for k in range(n)]
    if kind == "nan":
        for k in range(n):
            if k % 5 == 2:
                v[k] = NAN
            elif k % 9 == 4:
                v[k] = -0.0
    t = torch.tensor(v, dtype=torch.float64)
    if dtype == torch.bool:
        return (t > 0).reshape(shape)
    return t.to(dtype).reshape(shape)


def layout(t, how):
    """TRANSPOSED: t is the transpose's base; STEP: the base's last dim is twice as long."""
    if how == TRANSPOSED:
        return t.t()
    if how == STEP:
        return t.reshape(*t.shape[:-1], t.shape[-1] // 2, 2)[..., 0]
    return t


def num(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    if v == 0 and math.copysign(1, v) < 0:
        return "-0.0"
    s = "%.9g" % v
    return s if float(s) == v else "%.17g" % v


def arr(items):
    items = list(items) or [0]
    return "{" + c_wrap([num(x) for x in items], "      ", "}").lstrip()


def iarr(items):
    items = list(items) or [0]
    return "{" + c_wrap([str(int(x)) for x in items], "      ", "}").lstrip()


def shape(t):
    return "{%s}" % ", ".join(map(str, list(t.shape) or [0]))


def run(op, x, second, a):
    """PyTorch's op: (out, indices or inverse, counts) (None where the op has none)."""
    dim, k, flag, keepdim = a["dim"], a["k"], a["flag"], a["keepdim"]
    if op == "sort":
        return tuple(torch.sort(x, dim=dim, descending=bool(flag), stable=True)) + (None,)
    if op == "argsort":
        return torch.argsort(x, dim=dim, descending=bool(flag), stable=True), None, None
    if op == "msort":
        return torch.msort(x), None, None
    if op == "topk":
        return tuple(torch.topk(x, k, dim=dim, largest=bool(flag))) + (None,)
    if op == "kthvalue":
        return tuple(torch.kthvalue(x, k, dim, keepdim)) + (None,)
    if op in ("median_dim", "nanmedian_dim", "mode"):
        f = {"median_dim": torch.median, "nanmedian_dim": torch.nanmedian,
             "mode": torch.mode}[op]
        return tuple(f(x, dim, keepdim)) + (None,)
    if op in ("median", "nanmedian"):
        return getattr(torch, op)(x), None, None
    if op in ("quantile", "nanquantile"):
        return getattr(torch, op)(x, second, dim=None if a["all"] else dim, keepdim=keepdim,
                                  interpolation=INTERP[flag]), None, None
    if op == "unique":
        return torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
    if op == "unique_consecutive":
        return torch.unique_consecutive(x, return_inverse=True, return_counts=True)
    if op == "isin":
        return torch.isin(x, second, invert=bool(flag)), None, None
    if op == "searchsorted":
        return torch.searchsorted(second, x, right=bool(flag)), None, None
    if op == "bucketize":
        return torch.bucketize(x, second, right=bool(flag)), None, None
    if op == "bincount":
        return torch.bincount(x, weights=second, minlength=k), None, None
    return torch.histc(x, bins=k, min=a["lo"], max=a["hi"]), None, None


GRAD_OPS = ("sort", "msort", "topk", "kthvalue", "median_dim", "nanmedian_dim", "mode", "median",
            "nanmedian", "quantile", "nanquantile")


def case(op, dt, base_shape, how=CONTIG, kind="ties", dim=-1, k=0, flag=0, keepdim=False,
         second=None, second_dt=None, all_=False, lo=0.0, hi=0.0):
    dtype, ctype = DTYPES[dt]
    base = base_values(base_shape, kind, dtype)
    x = layout(base, how)
    grad = dtype.is_floating_point and op in GRAD_OPS
    if grad:
        x.requires_grad_(True)
    sec = None
    if second is not None:
        sdt = DTYPES[second_dt or dt][0]
        sec = torch.tensor(second, dtype=sdt)
    a = dict(dim=dim, k=k, flag=flag, keepdim=keepdim, all=all_, lo=lo, hi=hi)
    out, ix, cnt = run(op, x, sec, a)
    gx = None
    if grad:
        w = (torch.arange(out.numel()) % 7 - 3).to(out.dtype).reshape(out.shape)
        (out * w).sum().backward()
        gx = x.grad
    fields = [
        '"%s"' % op, ctype, str(how), str(dim), str(k), str(flag), "1" if keepdim else "0",
        "1" if all_ else "0", num(lo), num(hi),
        str(len(base_shape)), "{%s}" % ", ".join(map(str, base_shape)),
        arr(base.double().flatten().tolist()),
        str(sec.dim() if sec is not None else -1), shape(sec) if sec is not None else "{0}",
        DTYPES[second_dt or dt][1], arr(sec.double().flatten().tolist() if sec is not None
                                        else []),
        str(out.dim()), shape(out), arr(out.detach().double().flatten().tolist()),
        str(ix.dim() if ix is not None else -1),
        iarr(ix.flatten().tolist() if ix is not None else []),
        str(cnt.numel() if cnt is not None else -1),
        iarr(cnt.flatten().tolist() if cnt is not None else []),
        "1" if grad else "0", arr(gx.double().flatten().tolist() if gx is not None else []),
    ]
    head = ", ".join(fields[:12])
    return "    {" + head + ",\n     " + ",\n     ".join(fields[12:]) + "},\n"


Q4 = [0.0, 0.3, 0.5, 1.0]
CASES = [
    ("sort", "f32", [3, 8], dict()),
    ("sort", "f64", [8, 5], dict(how=TRANSPOSED, dim=0, flag=1, kind="nan")),
    ("sort", "f32", [2, 80], dict(how=STEP, kind="ties")),
    ("sort", "f64", [2, 70], dict(flag=1, kind="nan")),
    ("sort", "i64", [3, 6], dict(dim=1, flag=1)),
    ("sort", "b8", [2, 40], dict(dim=1)),
    ("argsort", "f32", [4, 6], dict(dim=0, flag=1)),
    ("msort", "f64", [5, 3], dict(kind="nan")),
    ("topk", "f32", [3, 10], dict(kind="distinct", k=3, flag=1)),
    ("topk", "f64", [6, 4], dict(how=TRANSPOSED, kind="distinct", k=2, dim=0, flag=0)),
    ("topk", "f32", [2, 100], dict(how=STEP, kind="distinct", k=40, flag=1)),
    ("topk", "i64", [3, 7], dict(kind="distinct", k=7, dim=1, flag=1)),
    ("kthvalue", "f32", [3, 9], dict(k=4)),
    ("kthvalue", "f64", [7, 4], dict(how=TRANSPOSED, k=2, dim=0, keepdim=True)),
    ("kthvalue", "i64", [2, 40], dict(k=23, dim=1)),
    ("kthvalue", "f64", [3, 10], dict(kind="nan", k=9)),
    ("median_dim", "f32", [3, 8], dict(dim=1, keepdim=True)),
    ("median_dim", "f64", [6, 5], dict(how=TRANSPOSED, dim=0, kind="nan")),
    ("median_dim", "i64", [2, 12], dict(how=STEP, dim=-1)),
    ("nanmedian_dim", "f64", [4, 10], dict(dim=1, kind="nan")),
    ("nanmedian_dim", "f32", [5, 3], dict(how=TRANSPOSED, dim=0, keepdim=True)),
    ("mode", "f32", [3, 10], dict(kind="small")),
    ("mode", "i64", [6, 4], dict(how=TRANSPOSED, dim=0, kind="small", keepdim=True)),
    ("mode", "b8", [2, 7], dict(dim=1)),
    ("median", "f32", [3, 5], dict()),
    ("median", "f64", [4, 8], dict(how=STEP)),
    ("median", "f64", [3, 4], dict(kind="nan")),
    ("nanmedian", "f64", [3, 4], dict(kind="nan")),
    ("nanmedian", "i64", [2, 5], dict()),
    ("quantile", "f32", [3, 8], dict(dim=1, second=Q4, kind="distinct")),
    ("quantile", "f64", [6, 4], dict(how=TRANSPOSED, dim=0, second=0.4, flag=3, keepdim=True,
                                         kind="distinct")),
    ("quantile", "f64", [3, 5], dict(all_=True, second=[0.1, 0.62, 0.9], flag=1,
                                     kind="distinct")),
    ("quantile", "f32", [3, 5], dict(all_=True, second=[0.1, 0.625, 0.9], flag=2,
                                     keepdim=True, kind="distinct")),
    ("quantile", "f64", [2, 12], dict(how=STEP, dim=1, second=[0.125, 0.5, 0.875], flag=4,
                                          kind="distinct")),
    ("quantile", "f64", [3, 5], dict(dim=1, kind="nan", second=[0.5])),
    ("nanquantile", "f64", [4, 10], dict(dim=1, kind="nan", second=Q4)),
    ("nanquantile", "f32", [3, 5], dict(all_=True, kind="nan", second=0.7)),
    ("unique", "f64", [3, 7], dict()),
    ("unique", "i64", [4, 5], dict(how=TRANSPOSED)),
    ("unique", "b8", [2, 5], dict()),
    ("unique_consecutive", "f32", [20], dict(kind="small")),
    ("unique_consecutive", "i64", [4, 6], dict(how=STEP, kind="small")),
    ("isin", "f32", [3, 6], dict(second=[0.5, -2.5, 7, NAN, 2])),
    ("isin", "i64", [5, 3], dict(how=TRANSPOSED, second=[1, 2, 3, -3], flag=1)),
    ("isin", "f64", [3, 5], dict(kind="nan", second=[1, 0, -2], second_dt="i64")),
    ("searchsorted", "f32", [3, 6], dict(second=[-2, -0.5, 0.5, 0.5, 2.5])),
    ("searchsorted", "f64", [3, 6], dict(how=STEP, second=[[-3, 0, 1], [-1, 0.5, 2], [0, 0, 0]],
                                         flag=1)),
    ("searchsorted", "i64", [2, 5], dict(second=[-4, -1, 0, 3], flag=1)),
    ("bucketize", "f64", [4, 3], dict(how=TRANSPOSED, kind="nan", second=[-1, 0, 1.5])),
    ("bucketize", "i64", [2, 6], dict(second=[-2, 0, 2], flag=1)),
    ("histc", "f32", [3, 7], dict(k=5)),
    ("histc", "f64", [4, 6], dict(how=TRANSPOSED, k=4, lo=-1, hi=2)),
    ("histc", "f32", [2, 5], dict(k=3, kind="small", lo=1, hi=1)),
]

BINCOUNT = [
    ([2, 0, 1, 1, 5, 0, 2], None, 0),
    ([3, 0, 3, 1], [0.5, 1.5, -2, 4], 7),
    ([1, 2, 2], None, 2),
]


def bincount_case(vals, weights, minlength):
    x = torch.tensor(vals)
    w = torch.tensor(weights, dtype=torch.float64) if weights is not None else None
    out = torch.bincount(x, weights=w, minlength=minlength)
    return "    {%s, %d, %d, %s, %d, %s, %d, %s},\n" % (
        iarr(vals), len(vals), 1 if w is not None else 0, arr(weights or []), minlength,
        "CT_FLOAT64" if w is not None else "CT_INT64", out.numel(),
        arr(out.double().tolist()))


def main():
    lines = ["/* GENERATED by tools/gen_golden_sort.py with torch %s - do not edit. */\n"
             % torch.__version__,
             "static const sort_golden sort_golden_cases[] = {\n"]
    for op, dt, shp, kw in CASES:
        lines.append(case(op, dt, shp, **kw))
    lines.append("};\n")
    lines.append("static const bincount_golden bincount_golden_cases[] = {\n")
    for c in BINCOUNT:
        lines.append(bincount_case(*c))
    lines.append("};\n")
    with open(OUT, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
