#!/usr/bin/env python3
"""Writes tests/golden/reduce7_golden.h: PyTorch's numbers for tests/test_reduce7.c.

amax/amin, logsumexp, var/std, all/any and linalg.vector_norm over contiguous, transposed,
step-sliced and broadcast inputs in several dtypes (forward, and the gradient of
sum(out * gout) for float inputs), and allclose/equal on pairs. Run with PyTorch installed:
python3 tools/gen_golden_reduce7.py
"""
import math
import os
import warnings

import torch

from golden_c import c_wrap, layout, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "reduce7_golden.h")

DTYPES = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.int64: "CT_INT64",
          torch.int32: "CT_INT32", torch.uint8: "CT_UINT8", torch.bool: "CT_BOOL"}
OPS = ["amax", "amin", "logsumexp", "var", "std", "var_dim", "std_dim", "all", "any",
       "all_dim", "any_dim", "vector_norm"]
# layouts: golden_c.layout's


def run(op, x, dims, keepdim, p):
    d = tuple(dims)
    if op in ("amax", "amin"):
        return getattr(torch, op)(x, d, keepdim)
    if op == "logsumexp":
        return torch.logsumexp(x, d, keepdim)
    if op in ("var", "std"):
        return getattr(torch, op)(x, correction=p)
    if op in ("var_dim", "std_dim"):
        return getattr(torch, op[:3])(x, d if d else None, correction=p, keepdim=keepdim)
    if op in ("all", "any"):
        return getattr(torch, op)(x)
    if op in ("all_dim", "any_dim"):
        return getattr(torch, op[:3])(x, d[0], keepdim)
    return torch.linalg.vector_norm(x, p, d if d else None, keepdim)


class Cases:
    def __init__(self):
        self.rows, self.data, self.k, self.seen = [], [], 0, {}

    def arr(self, t):
        digits = 9 if t.dtype == torch.float32 else 17
        key = tuple(num(v, digits) for v in t.double().flatten().tolist())
        if key in self.seen:
            return self.seen[key]
        name = "r7_d%d" % self.k
        self.seen[key] = name
        self.k += 1
        self.data.append("static const double %s[%d] = {\n%s};\n"
                         % (name, max(len(key), 1), c_wrap(list(key) or ["0"], "    ")))
        return name

    def add(self, op, base, lay=0, dims=(), keepdim=False, p=0.0):
        grad = base.dtype.is_floating_point
        b = base.clone().requires_grad_(grad)
        out = run(op, layout(b, lay), dims, keepdim, p)
        gname, has_grad = "NULL", False
        if grad and out.requires_grad:
            gout = torch.linspace(-1, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
            (out * gout).sum().backward()
            has_grad = b.grad is not None  # None: ord 0's norm (no gradient)
        if has_grad:
            gname = self.arr(b.grad)
        shape = list(base.shape) + [0] * (3 - base.dim())
        dl = list(dims) + [0] * (3 - len(dims))
        row = "    {%s, %s, %d, %d, {%s}, %s, %d, {%s}, %d, %s, %s, %d, %s, %s, %s},\n"
        self.rows.append(row % (
            "R7_" + op.upper(), DTYPES[base.dtype], lay, base.dim(),
            ", ".join(str(s) for s in shape), self.arr(base),
            len(dims), ", ".join(str(v) for v in dl), int(keepdim), num(p), DTYPES[out.dtype],
            out.dim(), self.arr(out.detach()), gname,
            "true" if has_grad else "false"))


def pairs():
    """allclose / equal cases: a, b, rtol, atol, equal_nan, allclose, equal."""
    nan, inf = float("nan"), float("inf")
    rows = []
    for a, b, rtol, atol, en in [
            ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 1e-5, 1e-8, False),
            ([1.0, 2.0, 3.0], [1.0, 2.0, 3.00001], 1e-5, 1e-8, False),
            ([1.0, 2.0, 3.0], [1.0, 2.0, 3.001], 1e-5, 1e-8, False),
            ([1.0, 2.0, 3.0], [1.0, 2.0, 3.001], 1e-3, 1e-8, False),
            ([0.0, 1e-9], [1e-9, 0.0], 0.0, 1e-8, False),
            ([inf, -inf], [inf, -inf], 1e-5, 1e-8, False),
            ([inf, 1.0], [-inf, 1.0], 1e-5, 1e-8, False),
            ([inf], [1e300], 1e-5, 1e-8, False),
            ([nan, 1.0], [nan, 1.0], 1e-5, 1e-8, False),
            ([nan, 1.0], [nan, 1.0], 1e-5, 1e-8, True),
            ([nan, 1.0], [1.0, 1.0], 1e-5, 1e-8, True)]:
        ta, tb = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
        rows.append("    {{%s}, {%s}, %d, %s, %s, %s, %s, %s},\n" % (
            ", ".join(num(v) for v in a + [0] * (3 - len(a))),
            ", ".join(num(v) for v in b + [0] * (3 - len(b))), len(a), num(rtol), num(atol),
            "true" if en else "false",
            "true" if torch.allclose(ta, tb, rtol, atol, en) else "false",
            "true" if torch.equal(ta, tb) else "false"))
    return rows


def main():
    warnings.filterwarnings("ignore", "var\\(\\): degrees of freedom")  # var of one element
    torch.manual_seed(7)
    c = Cases()
    ties = torch.randint(-2, 3, (3, 4)).double()
    ties32 = ties.float()
    nrm = (torch.randn(3, 4, dtype=torch.float64) * 16).round() / 16  # short exact literals
    nrm32 = nrm.float()
    ints = torch.randint(-5, 6, (3, 4))
    for op in ("amax", "amin"):
        c.add(op, ties, 0, (1,), False)
        c.add(op, ties32, 0, (0, 1), True)
        c.add(op, ties, 1, (0,), True)
        c.add(op, ties32, 2, (1,), False)
        c.add(op, ties[:1].clone(), 3, (0,), False)
        c.add(op, ties, 0, (), False)
        c.add(op, ints, 0, (-1,), False)
        c.add(op, ints.to(torch.int32), 1, (1,), True)
        c.add(op, ints > 0, 0, (0,), False)
        c.add(op, ints.to(torch.uint8), 0, (1,), False)
    c.add("amax", torch.tensor([[1.0, float("nan"), 3.0], [0.0, 2.0, 2.0]]), 0, (1,), False)
    c.add("amax", torch.tensor(2.5, dtype=torch.float64), 0, (), False)
    for x in (nrm, nrm32):
        c.add("logsumexp", x, 0, (1,), False)
        c.add("logsumexp", x, 1, (0,), True)
        c.add("logsumexp", x, 2, (0, 1), False)
        c.add("logsumexp", x[:1].clone(), 3, (0,), False)
    c.add("logsumexp", nrm * 400, 0, (1,), False)
    c.add("logsumexp", torch.tensor([[-math.inf, -math.inf], [math.inf, 1.0]],
                                    dtype=torch.float64), 0, (1,), False)
    c.add("logsumexp", ints, 0, (1,), False)
    c.add("logsumexp", torch.zeros(2, 0, dtype=torch.float64), 0, (1,), False)
    for x in (nrm, nrm32):
        c.add("var", x, 0, p=1.0)
        c.add("std", x, 1, p=0.0)
        c.add("var_dim", x, 1, (0,), True, 1.0)
        c.add("std_dim", x, 2, (1,), False, 1.0)
        c.add("var_dim", x, 0, (-1, 0), False, 2.0)
        c.add("std_dim", x[:1].clone(), 3, (0,), True, 1.0)
    c.add("var", torch.tensor([3.0], dtype=torch.float64), 0, p=1.0)
    sparse = ints * (ints.abs() > 2)
    for x in (sparse, sparse.double(), sparse > 0, sparse.to(torch.uint8), nrm32):
        for op in ("all", "any"):
            c.add(op, x)
            c.add(op + "_dim", x, 1, (1,), True)
            c.add(op + "_dim", x, 0, (-2,), False)
    c.add("all", torch.tensor([float("nan"), 1.0]))
    c.add("any", torch.zeros(0))
    c.add("all", torch.zeros(0))
    for x in (nrm, nrm32):
        for ordv in (2.0, 1.0, math.inf, -math.inf, 3.0, 0.5):
            c.add("vector_norm", x, 0, (), False, ordv)
        c.add("vector_norm", x, 1, (1,), True, 2.0)
        c.add("vector_norm", x, 2, (0,), False, math.inf)
        c.add("vector_norm", x[:1].clone(), 3, (1,), False, 1.0)
        c.add("vector_norm", sparse.to(x.dtype), 0, (0,), False, 0.0)
        zrow = torch.tensor([[0.0, 0.0, 0.0], [1.0, -2.0, 3.0]], dtype=x.dtype)
        c.add("vector_norm", zrow, 0, (1,), False, 2.0)
        c.add("vector_norm", zrow, 0, (1,), True, 3.0)
    lines = ["/* GENERATED by tools/gen_golden_reduce7.py with torch %s - do not edit. */\n"
             % torch.__version__,
             "typedef enum r7_op {%s} r7_op;\n" % ", ".join("R7_" + o.upper() for o in OPS),
             "/* op, base dtype, layout (0 contiguous, 1 transposed, 2 every second column, "
             "3 broadcast\n   to 3 rows), base ndim, sizes, values; dims; keepdim; correction or "
             "ord; the output's\n   dtype, ndim and values; the base's gradient of "
             "sum(out * linspace(-1, 1.5)) or NULL;\n   whether there is a gradient */\n",
             "typedef struct r7_case {\n    r7_op op;\n    ct_dtype dtype;\n    int layout, ndim;"
             "\n    int64_t sizes[3];\n    const double *x;\n    int n_dims;\n"
             "    int64_t dims[3];\n    int keepdim;\n    double p;\n    ct_dtype out_dtype;\n"
             "    int out_ndim;\n    const double *out, *grad;\n    bool out_grad;\n"
             "} r7_case;\n"]
    lines += c.data
    lines.append("static const r7_case r7_cases[] = {\n")
    lines += c.rows
    lines.append("};\n")
    lines.append("/* a, b (n values), rtol, atol, equal_nan; allclose's and equal's answers */\n"
                 "typedef struct r7_pair {\n    double a[3], b[3];\n    int n;\n"
                 "    double rtol, atol;\n    bool equal_nan, allclose, equal;\n} r7_pair;\n")
    lines.append("static const r7_pair r7_pairs[] = {\n")
    lines += pairs()
    lines.append("};\n")
    with open(OUT, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
