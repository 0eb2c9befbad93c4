#!/usr/bin/env python3
"""tools/gen_golden_hostile.py - writes tests/golden/hostile.h, PyTorch's answers to the hostile
scalar inputs that tests/test_hostile.c feeds ctorch.

    python3 tools/gen_golden_hostile.py [--out tests/golden/hostile.h]

Needs torch (developers only: the header is committed). Deterministic and re-runnable. It holds:
    hostile_cast_in / hostile_cast_want   float32 and float64 tensors holding NaN, infinities and
                                          out-of-range values cast to every integer dtype and bool
                                          (Tensor.to, on the x86-64 machine that ran this script)
    hostile_full                          torch.full((2,), value, dtype=...) for values at and past
                                          each dtype's limits: the value stored, or the error text
    hostile_range                         torch.arange / torch.linspace with integer dtypes (wrap,
                                          truncated start and step) and non-finite arguments
"""
import argparse
import math

import torch

NAN, INF = float("nan"), float("inf")
DTYPES = {torch.bool: "CT_BOOL", torch.uint8: "CT_UINT8", torch.int8: "CT_INT8",
          torch.int16: "CT_INT16", torch.int32: "CT_INT32", torch.int64: "CT_INT64",
          torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64"}
CAST_DST = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]
CAST_IN = [NAN, INF, -INF, 1000.0, -1000.0, 200.7, -200.7, 300.0, -1.0, 1e12, -1e12, 3e9, -3e9,
           3000000001.0, -3000000001.0, 1e19, -1e19, 2.0 ** 31, 2.0 ** 63, -2.0 ** 63, 65535.9,
           70000.0, -0.7, 4294967297.0, 0.0, -0.0, 2147483647.0, -2147483648.0]
FULL = [
    (torch.int32, [1e12, -1e12, NAN, INF, -INF, 2147483647.9, 2147483648.0, -2147483648.0,
                   -2147483648.9, 2.5, -2.5]),
    (torch.int64, [1e19, -1e19, NAN, math.nextafter(2.0 ** 63, 0), 2.0 ** 63, -2.0 ** 63,
                   math.nextafter(-2.0 ** 63, -INF), 1e12]),
    (torch.int16, [32767.5, 32768.0, -32768.0, -32769.0, INF]),
    (torch.int8, [127.9, 128.0, -128.0, -128.9, -0.5, NAN]),
    (torch.uint8, [255.99, 256.0, -0.0, -1e-9, -1.0, NAN]),
    (torch.bool, [NAN, INF, 0.0, -0.0, 1e300]),
    (torch.float32, [1e39, -1e39, 3.4028234663852886e38, 3.4028235e38, INF, NAN, 1e-50]),
    (torch.float64, [1e308, INF, NAN]),
]
# (function, start, end, step or steps, dtype)
RANGE = [
    ("arange", 0.0, NAN, 1.0, torch.float32),
    ("arange", 0.0, INF, 1.0, torch.float32),
    ("arange", NAN, 5.0, 1.0, torch.float32),
    ("arange", -INF, 5.0, 1.0, torch.float32),
    ("arange", 0.0, 5.0, NAN, torch.float32),
    ("arange", 0.0, 5.0, INF, torch.float32),
    ("arange", NAN, 5.0, 0.0, torch.float32),
    ("arange", 5.0, 0.0, 1.0, torch.float32),
    ("arange", 0.0, 1e30, 1.0, torch.float32),
    ("arange", 0.0, 1e308, 1e-308, torch.float64),
    ("arange", 0.0, 300.0, 100.0, torch.int8),
    ("arange", 300.0, 303.0, 1.0, torch.int8),
    ("arange", 0.0, 3000.0, 1000.0, torch.int8),
    ("arange", -5.0, 5.0, 3.0, torch.uint8),
    ("arange", 0.0, 2.0, 0.5, torch.int32),
    ("arange", 0.7, 5.0, 1.6, torch.int32),
    ("arange", -2.5, 1.0, 1.0, torch.int64),
    ("arange", 3e9, 3e9 + 3, 1.0, torch.int32),
    ("arange", 9e18, 1e19, 1e17, torch.int64),
    ("arange", 1e19, 1.1e19, 1e18, torch.int64),
    ("arange", 0.0, 5.0, 1e19, torch.int64),
    ("linspace", 0.0, 1e12, 3, torch.int32),
    ("linspace", 0.0, NAN, 3, torch.int32),
    ("linspace", 0.0, 300.0, 3, torch.int8),
    ("linspace", 0.0, 1e19, 3, torch.int64),
    ("linspace", -1.0, 5.0, 3, torch.uint8),
    ("linspace", 0.0, 2.5, 4, torch.int64),
    ("linspace", 0.0, 1e39, 3, torch.float32),
]


def c_double(v):
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(float(v))


def c_int(v):
    v = int(v)
    return "INT64_MIN" if v == -2 ** 63 else "INT64_C(%d)" % v


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"' if s is not None else "NULL"


def wrap(items, indent, head="", tail=","):
    """head + items joined by ", " + tail, wrapped within 100 columns."""
    lines, cur = [], " " * indent + head
    for k, item in enumerate(items):
        piece = item + (", " if k + 1 < len(items) else tail)
        if len(cur) + len(piece.rstrip()) > 100:
            lines.append(cur.rstrip())
            cur = " " * (indent + 4)
        cur += piece
    lines.append(cur.rstrip())
    return lines


def error_of(fn):
    try:
        return fn(), None
    except Exception as e:  # PyTorch's message, first line
        return None, str(e).split("\n")[0]


def casts(out):
    out.append("#define HOSTILE_CAST_N %d" % len(CAST_IN))
    out.append("static const double hostile_cast_in[HOSTILE_CAST_N] = {")
    out += wrap([c_double(v) for v in CAST_IN] , 4)
    out.append("};")
    out.append("/* [float32, float64 source][%s] */" %
               ", ".join(DTYPES[d] for d in CAST_DST))
    out.append("static const int64_t hostile_cast_want[2][%d][HOSTILE_CAST_N] = {" % len(CAST_DST))
    for src in (torch.float32, torch.float64):
        out.append("    {")
        x = torch.tensor(CAST_IN, dtype=src)
        for dst in CAST_DST:
            got = x.to(dst)
            long = x.repeat(64).to(dst)[-len(CAST_IN):]  # the vectorized path agrees
            assert got.tolist() == long.tolist(), (src, dst)
            out += wrap([c_int(v) for v in got.tolist()], 8, "{", "},")
        out.append("    },")
    out.append("};")


def fulls(out):
    out.append("typedef struct hostile_full_case {")
    out.append("    ct_dtype dtype;")
    out.append("    double value;")
    out.append("    const char *error; /* PyTorch's message, or NULL when it succeeds */")
    out.append("    double want;       /* the stored value (exact for these cases) */")
    out.append("} hostile_full_case;")
    out.append("static const hostile_full_case hostile_full[] = {")
    for dt, values in FULL:
        for v in values:
            r, err = error_of(lambda: torch.full((2,), v, dtype=dt))
            want = 0.0 if r is None else float(r[0].item())
            out += wrap([DTYPES[dt], c_double(v), c_str(err), c_double(want)], 4, "{", "},")
    out.append("};")


def ranges(out):
    out.append("typedef struct hostile_range_case {")
    out.append("    bool linspace; /* else arange */")
    out.append("    double start, end, step; /* step: linspace's steps */")
    out.append("    ct_dtype dtype;")
    out.append("    const char *error; /* PyTorch's message, or NULL */")
    out.append("    int n;")
    out.append("    int64_t want[8]; /* integer dtypes: the first min(n, 8) values */")
    out.append("} hostile_range_case;")
    out.append("static const hostile_range_case hostile_range[] = {")
    for fn, a, b, c, dt in RANGE:
        if fn == "arange":
            r, err = error_of(lambda: torch.arange(a, b, c, dtype=dt))
        else:
            r, err = error_of(lambda: torch.linspace(a, b, int(c), dtype=dt))
        n = 0 if r is None else r.numel()
        vals = [] if r is None or dt.is_floating_point else r[:8].tolist()
        items = ["true" if fn == "linspace" else "false", c_double(a), c_double(b), c_double(c),
                 DTYPES[dt], c_str(err), str(n)]
        want = [c_int(v) for v in vals] or ["0"]
        want[0] = "{" + want[0]
        want[-1] += "}"
        out += wrap(items + want, 4, "{", "},")
    out.append("};")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/golden/hostile.h")
    args = ap.parse_args()
    out = ["/* tests/golden/hostile.h - GENERATED by tools/gen_golden_hostile.py with torch %s;"
           % torch.__version__,
           " * do not edit. PyTorch's results for the hostile scalars of tests/test_hostile.c. */"]
    casts(out)
    fulls(out)
    ranges(out)
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
