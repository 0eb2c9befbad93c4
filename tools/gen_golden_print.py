#!/usr/bin/env python3
"""Writes tests/golden/print_golden.h: PyTorch's repr of tensors for tests/test_print.c.

Each case: a dtype, a shape, the values (listed, or the pattern ((k * mul) % mod - sub) *
scale for k = 0, 1, ... with a power-of-two scale, exact in every dtype the case uses),
the layout (contiguous, transposed, or every second column), the autograd state (leaf
requiring grad, or x * x), the print options, the default dtype, and repr(t).
Run with PyTorch installed: python3 tools/gen_golden_print.py
"""
import json
import math
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "print_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "i64": (torch.int64, "CT_INT64"), "i32": (torch.int32, "CT_INT32"),
          "i16": (torch.int16, "CT_INT16"), "i8": (torch.int8, "CT_INT8"),
          "u8": (torch.uint8, "CT_UINT8"), "b8": (torch.bool, "CT_BOOL"),
          "f16": (torch.float16, "CT_FLOAT16"), "bf16": (torch.bfloat16, "CT_BFLOAT16")}
CONTIG, TRANSPOSED, STEP = 0, 1, 2          # STEP: the base's last dim holds every 2nd column
PLAIN, LEAF, SQUARE = 0, 1, 2               # SQUARE: x * x of a leaf requiring grad
SCI = {None: "CT_SCI_MODE_AUTO", False: "CT_SCI_MODE_OFF", True: "CT_SCI_MODE_ON"}
DEFAULT_OPTS = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


def pattern(n, mul, mod, sub, scale):
    return [((k * mul) % mod - sub) * scale for k in range(n)]


def build(c):
    dtype = DTYPES[c["dt"]][0]
    shape = c["shape"]
    n = math.prod(shape)
    vals = c["values"] if "values" in c else pattern(n, *c["pattern"])
    base = torch.tensor(vals, dtype=torch.float64 if dtype.is_floating_point or
                        dtype == torch.bool else torch.int64).to(dtype).reshape(shape)
    if c.get("layout") == TRANSPOSED:
        t = base.transpose(-2, -1)
    elif c.get("layout") == STEP:
        t = base[..., ::2]
    else:
        t = base
    if c.get("grad") == LEAF:
        t = t.detach().requires_grad_(True)
    elif c.get("grad") == SQUARE:
        x = t.detach().requires_grad_(True)
        t = x * x
    return t


def repr_of(c):
    torch.set_printoptions(profile="default")
    if c.get("profile"):
        torch.set_printoptions(profile=c["profile"])
    else:
        torch.set_printoptions(**{**DEFAULT_OPTS, **c.get("opts", {})})
    torch.set_default_dtype(torch.float64 if c.get("default_f64") else torch.float32)
    s = repr(build(c))
    torch.set_default_dtype(torch.float32)
    torch.set_printoptions(profile="default")
    return s


def num(v):
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return "-0.0" if v == 0 and math.copysign(1, v) < 0 else "%.17g" % v


def c_string(s):
    lines = s.split("\n")
    parts = [json.dumps(line)[1:-1] + ("\\n" if k + 1 < len(lines) else "")
             for k, line in enumerate(lines)]
    return "\n".join('         "%s"' % p for p in parts).lstrip()


def case_c(c):
    o = {**DEFAULT_OPTS, **c.get("opts", {})}
    shape = c["shape"]
    vals = c.get("values")
    values = "ct_print_v_" + c["name"] if vals else "NULL"
    pat = c.get("pattern", (0, 1, 0, 1.0))
    thr = "INFINITY" if o["threshold"] == math.inf else num(o["threshold"])
    head = ['"%s"' % c["name"], DTYPES[c["dt"]][1], str(len(shape)),
            "{%s}" % ", ".join(str(s) for s in shape) if shape else "{0}",
            str(len(vals) if vals else 0)]
    rest = ["{%d, %d, %d, %s}" % (pat[0], pat[1], pat[2], num(pat[3])),
            str(c.get("layout", CONTIG)), str(c.get("grad", PLAIN)),
            '"%s"' % c["profile"] if c.get("profile") else "NULL",
            "{%d, %s, %d, %d, %s}" % (o["precision"], thr, o["edgeitems"], o["linewidth"],
                                      SCI[o["sci_mode"]]),
            "true" if c.get("default_f64") else "false"]
    array = ("static const double %s[] = {\n%s\n};\n"
             % (values, c_wrap([num(v) for v in vals], "    ")) if vals else "")
    return array, ("    {%s, %s,\n     %s,\n     %s},"
                   % (", ".join(head), values, ", ".join(rest), c_string(repr_of(c))))


def cases():
    nan, inf = math.nan, math.inf
    C = []

    def add(name, dt, shape, **kw):
        C.append(dict(name=name, dt=dt, shape=list(shape), **kw))

    add("basic_f32", "f32", (2, 2), values=[0.1, -2, 3, 4])
    add("ints_as_float", "f32", (3,), values=[1, 2, 3])
    add("neg_ints_as_float", "f64", (2, 3), values=[-1, 20, 3, 0, -0.0, 7])
    add("mixed_f64", "f64", (3,), values=[1.5, -2.25, 0.001])
    add("rounding_f32", "f32", (4,), values=[0.12345, 2.00005, -0.00015, 9.99995])
    add("sci_range", "f32", (3,), values=[1e-5, 1.0, 1e5])
    add("sci_big_ints", "f32", (2,), values=[1e9, 2e9])
    add("sci_small", "f64", (2,), values=[1e-5, 2.5e-5])
    add("sci_ratio", "f64", (2, 2), values=[1.0, -123.456, 0.5, 1000.5])
    add("no_sci_1e8", "f64", (2,), values=[1e8, 99999999.5])
    add("nonfinite", "f32", (4,), values=[nan, inf, -inf, 1.5])
    add("nonfinite_ints", "f64", (3,), values=[nan, 1, -inf])
    add("nonfinite_sci", "f64", (3,), values=[nan, 1e-9, inf])
    add("zeros", "f32", (2, 2), values=[0, 0, 0, 0])
    add("only_nan", "f32", (2,), values=[nan, nan])
    add("neg_zero", "f32", (3,), values=[0.5, -0.0, 0.25])
    add("i64", "i64", (3,), values=[1, -20, 300])
    add("i32", "i32", (2, 2), values=[5, -6, 70, 8])
    add("i16", "i16", (2,), values=[-32768, 32767])
    add("i8", "i8", (3,), values=[-128, 0, 127])
    add("u8", "u8", (3,), values=[0, 128, 255])
    add("bool", "b8", (2, 2), values=[1, 0, 0, 1])
    add("bool_true", "b8", (3,), values=[1, 1, 1])
    add("scalar_f32", "f32", (), values=[3.0])
    add("scalar_frac", "f64", (), values=[0.123456])
    add("scalar_i64", "i64", (), values=[5])
    add("scalar_bool", "b8", (), values=[1])
    add("scalar_nan", "f32", (), values=[nan])
    add("scalar_sci", "f32", (), values=[1.5e-7])
    add("empty_1d", "f32", (0,), values=[])
    add("empty_2d", "f32", (0, 3), values=[])
    add("empty_i64", "i64", (0,), values=[])
    add("empty_3d_f64", "f64", (2, 0, 3), values=[])
    add("empty_bool_2d", "b8", (3, 0), values=[])
    add("cube", "f32", (2, 2, 3), pattern=(7, 11, 5, 0.25))
    add("four_d", "i64", (2, 1, 2, 2), pattern=(3, 13, 6, 1))
    add("wrap_f32", "f32", (30,), pattern=(7, 19, 9, 0.125))
    add("wrap_i64", "i64", (50,), pattern=(37, 1000, 400, 1))
    add("wrap_rows", "f64", (3, 20), pattern=(5, 23, 11, 0.0625))
    add("transposed", "f32", (3, 4), pattern=(5, 17, 8, 0.5), layout=TRANSPOSED)
    add("step", "f64", (3, 8), pattern=(3, 10, 4, 0.75), layout=STEP)
    add("sum_1d", "f32", (2000,), pattern=(7919, 1000, 500, 0.125))
    add("sum_2d", "f64", (40, 50), pattern=(7919, 1000, 500, 0.03125))
    add("sum_3d", "f32", (20, 10, 10), pattern=(31, 97, 40, 1.0))
    add("sum_i64", "i64", (1001,), pattern=(7919, 100000, 50000, 1))
    add("sum_bool", "b8", (1500,), pattern=(3, 2, 0, 1))
    add("sum_rows_only", "f32", (1001, 1), pattern=(13, 29, 14, 0.5))
    add("sum_cols_only", "i32", (2, 600), pattern=(13, 29, 14, 1))
    add("sum_sci", "f32", (1200,), pattern=(7919, 1000, 500, 1048576.0))
    add("leaf_grad", "f32", (2,), values=[1.5, 2], grad=LEAF)
    add("mul_grad", "f32", (2, 2), values=[1.5, 2, -1, 0.5], grad=SQUARE)
    add("mul_grad_f64", "f64", (2,), values=[1.5, 2], grad=SQUARE)
    add("suffix_wraps", "f64", (7,), values=[1.25, -2.5, 3.125, 4, 5, 6, 7.5], grad=LEAF)
    add("suffix_wraps_2d", "i32", (2, 12), pattern=(7, 13, 6, 1000))
    add("scalar_grad", "f64", (), values=[2.5], grad=SQUARE)
    add("opt_precision2", "f32", (3,), values=[0.12345, 1.5, -2.25], opts=dict(precision=2))
    add("opt_precision0", "f64", (3,), values=[0.5, 1.5, -2.25], opts=dict(precision=0))
    add("opt_precision8", "f64", (2,), values=[1 / 3, 2 / 3], opts=dict(precision=8))
    add("opt_threshold", "i64", (10,), pattern=(1, 100, 0, 1), opts=dict(threshold=5))
    add("opt_threshold_2d", "f32", (4, 4), pattern=(3, 7, 3, 0.5), opts=dict(threshold=5))
    add("opt_edgeitems1", "f32", (5, 6), pattern=(5, 11, 5, 0.25),
        opts=dict(threshold=10, edgeitems=1))
    add("opt_edgeitems0", "f32", (5, 6), pattern=(5, 11, 5, 0.25),
        opts=dict(threshold=10, edgeitems=0))
    add("opt_edgeitems0_1d", "i64", (20,), pattern=(1, 100, 0, 1),
        opts=dict(threshold=10, edgeitems=0))
    add("opt_edgeitems0_small", "f32", (2,), values=[1.5, 2], opts=dict(edgeitems=0))
    add("opt_edgeitems0_scalar", "f32", (), values=[1.5],
        opts=dict(edgeitems=0, threshold=0))
    add("opt_linewidth40", "f32", (20,), pattern=(5, 21, 10, 0.5), opts=dict(linewidth=40))
    add("opt_linewidth10", "f64", (2, 3), pattern=(5, 21, 10, 0.5), grad=LEAF,
        opts=dict(linewidth=10))
    add("opt_sci_on", "f32", (3,), values=[1, 2.5, -3], opts=dict(sci_mode=True))
    add("opt_sci_on_ints", "f32", (2,), values=[0, 3], opts=dict(sci_mode=True))
    add("opt_sci_off", "f64", (3,), values=[1e-6, 1e10, 5], opts=dict(sci_mode=False))
    add("opt_sci_off_big_ints", "f64", (2,), values=[1e20, -3], opts=dict(sci_mode=False))
    add("profile_short", "f32", (10, 10), pattern=(7, 23, 11, 0.3125), profile="short")
    add("profile_short_big", "f32", (1200,), pattern=(7919, 1000, 500, 0.125),
        profile="short")
    add("profile_full", "u8", (1001,), pattern=(7, 10, 0, 1), profile="full")
    add("default_f64_float32", "f32", (2,), values=[0.5, 1], default_f64=True)
    add("default_f64_float64", "f64", (2,), values=[0.5, 1], default_f64=True)
    add("default_f64_empty_f32", "f32", (0,), values=[], default_f64=True)
    for dt in ("f16", "bf16"):  # values the half dtypes hold (as doubles)
        add(f"basic_{dt}", dt, (2, 2), values=[0.099975586 if dt == "f16" else 0.10009766, -2,
                                               3, 4])
        add(f"ints_{dt}", dt, (3,), values=[1, 2, 3])
        add(f"rounding_{dt}", dt, (4,), values=[0.123046875, 2.0, -0.000150203704833984375,
                                                9.9921875])
        add(f"sci_{dt}", dt, (3,), values=[0.0001, 1.0, 60000] if dt == "f16"
            else [1e-5, 1.0, 1e30])
        add(f"nonfinite_{dt}", dt, (4,), values=[nan, inf, -inf, 1.5])
        add(f"neg_zero_{dt}", dt, (3,), values=[0.5, -0.0, 0.25])
        add(f"scalar_{dt}", dt, (), values=[0.333251953125])
        add(f"empty_{dt}", dt, (0, 2), values=[])
        add(f"transposed_{dt}", dt, (3, 4), pattern=(5, 17, 8, 0.5), layout=TRANSPOSED)
        add(f"step_{dt}", dt, (3, 8), pattern=(3, 10, 4, 0.75), layout=STEP)
        add(f"sum_{dt}", dt, (1200,), pattern=(7919, 1000, 500, 0.125))
        add(f"leaf_grad_{dt}", dt, (2,), values=[1.5, 2], grad=LEAF)
        add(f"mul_grad_{dt}", dt, (2, 2), values=[1.5, 2, -1, 0.5], grad=SQUARE)
        add(f"precision2_{dt}", dt, (3,), values=[0.12345, 1.5, -2.25], opts=dict(precision=2))
        add(f"default_f64_{dt}", dt, (2,), values=[0.5, 1], default_f64=True)
    return C


def main():
    parts = [case_c(c) for c in cases()]
    arrays = "".join(a for a, _ in parts)
    body = "\n".join(e for _, e in parts)
    version = torch.__version__
    text = f"""/* GENERATED by tools/gen_golden_print.py from PyTorch {version} - do not edit.
   PyTorch's repr of each case's tensor; tests/test_print.c rebuilds the tensors. */
#ifndef CT_PRINT_GOLDEN_H
#define CT_PRINT_GOLDEN_H

typedef struct ct_print_case {{
    const char *name;
    ct_dtype dtype;
    int ndim;
    int64_t sizes[4]; /* the base's: before the transpose or the step */
    int64_t n_values; /* 0: values from pattern */
    const double *values;
    double pattern[4]; /* ((k * mul) % mod - sub) * scale */
    int layout;        /* 0 contiguous, 1 transposed (last two dims), 2 every second column */
    int grad;          /* 0 none, 1 leaf requiring grad, 2 x * x */
    const char *profile; /* NULL: opts */
    ct_printoptions opts;
    bool default_f64;
    const char *repr;
}} ct_print_case;

{arrays}
static const ct_print_case ct_print_cases[] = {{
{body}
}};

#endif
"""
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote", OUT, len(text), "bytes,", len(cases()), "cases")


if __name__ == "__main__":
    main()
