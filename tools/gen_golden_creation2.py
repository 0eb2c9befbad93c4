#!/usr/bin/env python3
"""Writes tests/golden/creation2_golden.h: PyTorch's numbers for tests/test_creation2.c.

logspace (float32/float64/int64/uint8/int32, bases 10, 2, 0.5, -2, one step and steps
that split in halves), tril_indices / triu_indices (square, tall, wide, offsets inside and
outside, empty), meshgrid ("ij"/"xy", 0-D and 1-D inputs: values, shapes and strides of the
expanded views), new_empty/new_zeros/new_ones/new_full (the dtype inherited or given) and
empty_strided (strides and storage bytes).
Run with PyTorch installed: python3 tools/gen_golden_creation2.py
"""
import math
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "creation2_golden.h")
CT = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.int64: "CT_INT64",
      torch.int32: "CT_INT32", torch.uint8: "CT_UINT8", torch.int16: "CT_INT16",
      torch.bool: "CT_BOOL", None: "CT_DTYPE_DEFAULT"}


def num(v):
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return "%.17g" % v


def arr(items, fmt=num):
    """A braced initializer on lines of its own, indented 5."""
    body = c_wrap([fmt(x) for x in items] or ["0"], "      ", "}")
    return "\n" + body.replace("      ", "     {", 1)


def ints(items):
    return "{" + ", ".join(str(int(x)) for x in items) + "}" if items else "{0}"


def int_arr(items):
    return arr(items, lambda x: str(int(x)))


def logspace_cases():
    cases = [(0, 2, 5, 10.0, torch.float32), (0, 2, 5, 10.0, torch.float64),
             (-2, 2, 6, 10.0, torch.float32), (-1.5, 3.25, 7, 10.0, torch.float64),
             (0.1, 0.7, 4, 10.0, torch.float32), (0, 1, 5, -2.0, torch.float32),
             (1, -1, 5, 0.5, torch.float64), (0, 10, 11, 2.0, torch.float32),
             (0.5, 2.5, 4, 10.0, torch.int64), (0, 2, 3, 10.0, torch.uint8),
             (0, 3, 9, 2.0, torch.int32), (-1, 2, 1, 10.0, torch.float32),
             (3, 3, 0, 10.0, torch.float64), (2, 2, 3, 10.0, torch.float64),
             (-3, 3, 1001, 10.0, torch.float32)]
    rows = []
    for start, end, steps, base, dt in cases:
        out = torch.logspace(start, end, steps, base=base, dtype=dt)
        rows.append("    {%s, %s, %d, %s, %s,%s}," % (num(start), num(end), steps, num(base),
                                                      CT[dt], arr(out.double().tolist())))
    return rows


def tri_cases():
    rows = []
    for row, col, off in [(3, 3, 0), (4, 3, 1), (3, 4, -1), (3, 3, 10), (3, 3, -10),
                          (0, 3, 0), (5, 2, -2), (2, 5, 3), (1, 1, 0), (4, 6, 2)]:
        for upper in (0, 1):
            f = torch.triu_indices if upper else torch.tril_indices
            out = f(row, col, off)
            rows.append("    {%d, %d, %d, %d, %d,%s}," % (upper, row, col, off, out.shape[1],
                                                        int_arr(out.flatten().tolist())))
    return rows


def meshgrid_cases():
    a = torch.tensor([1.0, 2.0, 3.0])
    b = torch.tensor([4.0, 5.0])
    c = torch.tensor(7.0)
    d = torch.tensor([8.0, 9.0, 10.0, 11.0])
    rows = []
    for inputs, names, indexing in [((a, b), "ab", "ij"), ((a, b), "ab", "xy"),
                                    ((a, b, d), "abd", "ij"), ((a, b, d), "abd", "xy"),
                                    ((c, b), "cb", "ij"), ((a,), "a", "xy"),
                                    ((b, c, a), "bca", "xy")]:
        outs = torch.meshgrid(*inputs, indexing=indexing)
        for k, o in enumerate(outs):
            rows.append('    {"%s", "%s", %d, %d, %s, %s,%s},'
                        % (names, indexing, k, o.dim(), ints(o.shape), ints(o.stride()),
                           arr(o.flatten().tolist())))
    return rows


def new_cases():
    rows = []
    base = {"f64": torch.ones(2, dtype=torch.float64), "i32": torch.ones(2, dtype=torch.int32)}
    for self_name, kind, dt, fill in [("f64", "zeros", None, 0), ("f64", "ones", torch.int32, 1),
                                      ("i32", "full", None, 7), ("i32", "full", torch.float32,
                                                                 2.5),
                                      ("f64", "full", torch.bool, 1), ("i32", "ones", None, 1)]:
        s = base[self_name]
        kw = {} if dt is None else {"dtype": dt}
        make = getattr(s, "new_" + kind)
        out = make((2, 3), fill, **kw) if kind == "full" else make((2, 3), **kw)
        rows.append('    {"%s", "%s", %s, %s, %s,%s},' % (self_name, kind, CT[dt], num(fill),
                                                         CT[out.dtype],
                                                         arr(out.double().flatten().tolist())))
    return rows


def strided_cases():
    rows = []
    for sizes, strides in [((2, 3), (1, 2)), ((2, 3), (0, 1)), ((2, 0), (1, 2)), ((), ()),
                           ((4,), (3,)), ((2, 3, 4), (1, 2, 6))]:
        t = torch.empty_strided(sizes, strides, dtype=torch.float32)
        rows.append("    {%d, %s, %s, %d}," % (len(sizes), ints(sizes), ints(strides),
                                              t.untyped_storage().nbytes()))
    return rows


def main():
    version = torch.__version__
    text = f"""/* GENERATED by tools/gen_golden_creation2.py from PyTorch {version} - do not edit.
   PyTorch's outputs for tests/test_creation2.c. */
#ifndef CT_CREATION2_GOLDEN_H
#define CT_CREATION2_GOLDEN_H

typedef struct ct_logspace_case {{
    double start, end;
    int64_t steps;
    double base;
    ct_dtype dtype;
    double out[1001];
}} ct_logspace_case;
static const ct_logspace_case ct_logspace_cases[] = {{
{chr(10).join(logspace_cases())}
}};

typedef struct ct_tri_case {{
    int upper; /* 0 tril_indices, 1 triu_indices */
    int64_t row, col, offset, n;
    int64_t out[64]; /* (2, n) */
}} ct_tri_case;
static const ct_tri_case ct_tri_cases[] = {{
{chr(10).join(tri_cases())}
}};

/* meshgrid of the named inputs (a = [1, 2, 3], b = [4, 5], c = 7 (0-D), d = [8, 9, 10, 11]):
   output k's shape, strides and values */
typedef struct ct_meshgrid_case {{
    const char *inputs, *indexing;
    int k, ndim;
    int64_t shape[3], strides[3];
    double out[24];
}} ct_meshgrid_case;
static const ct_meshgrid_case ct_meshgrid_cases[] = {{
{chr(10).join(meshgrid_cases())}
}};

/* self.new_<kind>((2, 3)[, fill], dtype=dtype) for self = ones(2) of f64 or i32 */
typedef struct ct_new_case {{
    const char *self, *kind;
    ct_dtype dtype;
    double fill;
    ct_dtype out_dtype;
    double out[6];
}} ct_new_case;
static const ct_new_case ct_new_cases[] = {{
{chr(10).join(new_cases())}
}};

/* empty_strided(sizes, strides, dtype=float32): the storage's bytes */
typedef struct ct_strided_case {{
    int ndim;
    int64_t sizes[3], strides[3];
    int64_t nbytes;
}} ct_strided_case;
static const ct_strided_case ct_strided_cases[] = {{
{chr(10).join(strided_cases())}
}};

#endif
"""
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote", OUT, len(text), "bytes")


if __name__ == "__main__":
    main()
