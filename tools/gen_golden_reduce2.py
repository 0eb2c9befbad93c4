#!/usr/bin/env python3
"""Writes tests/golden/reduce2_golden.h: PyTorch's numbers for tests/test_reduce2.c.

prod, cumsum/cumprod/cummax/cummin/logcumsumexp, nansum/nanmean, var_mean/std_mean, aminmax,
count_nonzero, dist and cdist over contiguous, transposed, step-sliced and broadcast inputs in
several dtypes: both outputs where there are two, and the gradient of
sum(out * linspace(-1, 1.5)) (+ the same for a second float output) for float inputs.
Run with PyTorch installed: python3 tools/gen_golden_reduce2.py
"""
import math
import os

import torch

from golden_c import c_wrap, layout, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "reduce2_golden.h")

DTYPES = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.int64: "CT_INT64",
          torch.int32: "CT_INT32", torch.uint8: "CT_UINT8", torch.bool: "CT_BOOL"}
OPS = ["prod", "prod_dim", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "nansum",
       "nanmean", "var_mean", "std_mean", "aminmax", "count_nonzero", "dist", "cdist"]
MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
         "donot_use_mm_for_euclid_dist"]
# layouts: golden_c.layout's


def run(op, x, y, dims, keepdim, p, arg):
    """The op's outputs as a tuple (one or two tensors)."""
    d = tuple(dims)
    if op == "prod":
        return (torch.prod(x),)
    if op == "prod_dim":
        return (torch.prod(x, d[0], keepdim),)
    if op in ("cumsum", "cumprod"):
        return (getattr(torch, op)(x, d[0], dtype=arg or None),)
    if op in ("cummax", "cummin"):
        return tuple(getattr(torch, op)(x, d[0]))
    if op == "logcumsumexp":
        return (torch.logcumsumexp(x, d[0]),)
    if op in ("nansum", "nanmean"):
        return (getattr(torch, op)(x, d if d else None, keepdim),)
    if op in ("var_mean", "std_mean"):
        return tuple(getattr(torch, op)(x, d if d else None, correction=p, keepdim=keepdim))
    if op == "aminmax":
        return tuple(torch.aminmax(x, dim=d[0] if d else None, keepdim=keepdim))
    if op == "count_nonzero":
        return (torch.count_nonzero(x, d if d else None),)
    if op == "dist":
        return (torch.dist(x, y, p),)
    return (torch.cdist(x, y, p, compute_mode=MODES[arg]),)


class Cases:
    def __init__(self):
        self.rows, self.data, self.k, self.seen = [], [], 0, {}

    def arr(self, t):
        if t is None:
            return "NULL"
        digits = 9 if t.dtype == torch.float32 else 17
        key = tuple(num(v, digits) for v in t.double().flatten().tolist())
        if key in self.seen:
            return self.seen[key]
        name = "r2_d%d" % self.k
        self.seen[key] = name
        self.k += 1
        self.data.append("static const double %s[%d] = {\n%s};\n"
                         % (name, max(len(key), 1), c_wrap(list(key) or ["0"], "    ")))
        return name

    def add(self, op, base, lay=0, dims=(), keepdim=False, p=0.0, arg=0, other=None, grad=True):
        grad = grad and base.dtype.is_floating_point
        b = base.clone().requires_grad_(grad)
        o = other.clone().requires_grad_(grad) if other is not None else None
        outs = run(op, layout(b, lay), o, dims, keepdim, p, arg)
        loss = 0
        for out in outs:
            if out.requires_grad:
                gout = torch.linspace(-1, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
                loss = loss + (out * gout).sum()
        gx = gy = None
        if grad and torch.is_tensor(loss):
            loss.backward()
            gx = b.grad
            gy = o.grad if o is not None else None
        shape = list(base.shape) + [0] * (3 - base.dim())
        oshape = list(other.shape) if other is not None else []
        oshape += [0] * (3 - len(oshape))
        dl = list(dims) + [0] * (3 - len(dims))
        out2 = outs[1] if len(outs) > 1 else None
        row = ("    {%s, %s, %d, %d, {%s}, %s, %d, {%s}, %s, %d, {%s}, %d, %s, %s, %s, %d, %s, "
               "%s, %s, %s, %s},\n")
        self.rows.append(row % (
            "R2_" + op.upper(), DTYPES[base.dtype], lay, base.dim(),
            ", ".join(str(s) for s in shape), self.arr(base),
            other.dim() if other is not None else 0, ", ".join(str(s) for s in oshape),
            self.arr(other), len(dims), ", ".join(str(v) for v in dl), int(keepdim), num(p),
            DTYPES[arg] if isinstance(arg, torch.dtype) else str(arg), DTYPES[outs[0].dtype],
            outs[0].dim(), self.arr(outs[0].detach()),
            DTYPES[out2.dtype] if out2 is not None else "CT_DTYPE_DEFAULT",
            self.arr(out2.detach() if out2 is not None else None), self.arr(gx), self.arr(gy)))


def main():
    torch.manual_seed(11)
    c = Cases()
    ints = torch.randint(-3, 4, (3, 4))
    zf = ints.double()                            # small integers with zeros
    nz = (torch.rand(3, 4, dtype=torch.float64) * 1.5 + 0.25).round(decimals=2)  # no zeros
    nz32 = nz.float()
    two = torch.tensor([[1.5, 0.0, 2.0, 0.0], [0.5, -2.0, 3.0, 1.25], [0.0, 1.0, 2.0, 4.0]],
                       dtype=torch.float64)      # one line with two zeros, one with one
    # prod
    for x in (nz32, zf, two):
        c.add("prod", x)
    c.add("prod", nz, 1)
    c.add("prod", torch.tensor([[2.0, 0.0], [0.0, 3.0]], dtype=torch.float64))
    c.add("prod", torch.tensor(1.5, dtype=torch.float64))
    for x in (nz32, two):
        c.add("prod_dim", x, 0, (1,), False)
        c.add("prod_dim", x, 1, (0,), True)
        c.add("prod_dim", x, 2, (0,), False)
    c.add("prod_dim", nz[:1].clone(), 3, (0,), False)
    c.add("prod_dim", ints, 0, (1,), False)
    c.add("prod_dim", ints.to(torch.int32), 0, (-1,), True)
    c.add("prod_dim", ints != 0, 0, (1,), False)
    c.add("prod", ints.to(torch.uint8))
    c.add("prod_dim", torch.zeros(2, 0, dtype=torch.float64), 0, (1,), False)
    # cumulative
    r32 = torch.randn(3, 4) * 100
    long32 = (torch.randn(2, 24) * torch.logspace(0, 7, 24)).round()  # double accumulation matters
    for op in ("cumsum", "cumprod"):
        c.add(op, nz, 0, (1,))
        c.add(op, nz, 1, (0,))
        c.add(op, nz32, 2, (-1,))
        c.add(op, nz32[:1].clone(), 3, (0,))
        c.add(op, two, 0, (1,))
        c.add(op, two.float(), 1, (1,))
        c.add(op, ints, 0, (1,))
        c.add(op, ints.to(torch.int32), 1, (0,))
        c.add(op, ints > 0, 0, (1,))
        c.add(op, ints.to(torch.uint8), 0, (0,))
        c.add(op, ints, 0, (1,), arg=torch.float32)
        c.add(op, nz32, 0, (0,), arg=torch.float64)
        c.add(op, torch.tensor(2.5, dtype=torch.float64), 0, (0,))
    c.add("cumsum", r32, 0, (1,))
    c.add("cumsum", long32, 0, (1,))
    c.add("cumsum", long32, 1, (0,))
    c.add("cumprod", torch.randn(2, 30, dtype=torch.float32) + 1.0, 0, (1,))
    c.add("cumsum", torch.tensor([[1.0, math.nan, 2.0], [math.inf, -math.inf, 1.0]]), 0, (1,))
    ties = torch.randint(-2, 3, (3, 4)).double()
    nan = torch.tensor([[1.0, math.nan, 3.0, 0.0], [2.0, 2.0, math.nan, math.nan],
                        [0.0, -1.0, -1.0, 5.0]], dtype=torch.float64)
    for op in ("cummax", "cummin"):
        c.add(op, ties, 0, (1,))
        c.add(op, ties.float(), 1, (0,))
        c.add(op, ties, 2, (1,))
        c.add(op, ties[:1].clone(), 3, (0,))
        c.add(op, nan, 0, (1,))
        c.add(op, nan.float(), 0, (0,))
        c.add(op, ints, 0, (1,))
        c.add(op, ints.to(torch.int32), 1, (1,))
        c.add(op, ints > 0, 0, (1,))
        c.add(op, ints.to(torch.uint8), 0, (0,))
        c.add(op, torch.tensor(2.5, dtype=torch.float64), 0, (-1,))
    lse = torch.tensor([[-math.inf, -math.inf, 1.0, 2.0], [math.inf, 1.0, math.inf, -1.0],
                        [0.5, math.nan, 1.0, 3.0]], dtype=torch.float64)
    c.add("logcumsumexp", nz * 4 - 3, 0, (1,))
    c.add("logcumsumexp", nz * 4 - 3, 1, (0,))
    c.add("logcumsumexp", nz32 * 4 - 3, 2, (1,))
    c.add("logcumsumexp", nz32[:1].clone() * 4 - 3, 3, (0,))
    c.add("logcumsumexp", lse, 0, (1,), grad=False)
    c.add("logcumsumexp", lse.float(), 0, (1,), grad=False)
    c.add("logcumsumexp", (nz * 400).float(), 0, (0,))
    # nansum / nanmean
    withnan = nz.clone()
    withnan[0, 1] = withnan[2, 2] = withnan[2, 3] = math.nan
    allnan = torch.full((2, 2), math.nan, dtype=torch.float64)
    for op in ("nansum", "nanmean"):
        c.add(op, withnan)
        c.add(op, withnan.float(), 0, (1,), True)
        c.add(op, withnan, 1, (0,), False)
        c.add(op, withnan.float(), 2, (0, 1), False)
        c.add(op, withnan[:1].clone(), 3, (0,))
        c.add(op, allnan, 0, (1,))
    c.add("nansum", ints, 0, (1,))
    c.add("nansum", ints > 0, 0, ())
    # var_mean / std_mean
    for op in ("var_mean", "std_mean"):
        c.add(op, nz, 0, (), False, 1.0)
        c.add(op, nz, 1, (0,), True, 1.0)
        c.add(op, nz, 2, (1,), False, 0.0)
        c.add(op, nz, 0, (-1, 0), True, 2.0)
        c.add(op, nz[:1].clone(), 3, (0,), False, 1.0)
        c.add(op, nz32, 1, (1,), False, 1.0)
    # aminmax
    c.add("aminmax", ties)
    c.add("aminmax", ties.float(), 0, (), True)
    c.add("aminmax", ties, 0, (1,), False)
    c.add("aminmax", ties.float(), 1, (0,), True)
    c.add("aminmax", ties, 2, (-1,), False)
    c.add("aminmax", ties[:1].clone(), 3, (0,), False)
    c.add("aminmax", nan, 0, (1,), grad=False)
    c.add("aminmax", ints, 0, (1,))
    c.add("aminmax", ints.to(torch.int32), 0, ())
    c.add("aminmax", ints > 0, 0, (0,))
    c.add("aminmax", ints.to(torch.uint8), 0, (1,))
    c.add("aminmax", torch.tensor(2.5, dtype=torch.float64), 0, (0,))
    # count_nonzero
    sparse = ints * (ints.abs() > 1)
    for x in (sparse, sparse.double(), sparse > 0, sparse.to(torch.uint8), nan):
        c.add("count_nonzero", x)
        c.add("count_nonzero", x, 1, (0,))
        c.add("count_nonzero", x, 0, (-1,))
        c.add("count_nonzero", x, 0, (0, 1))
    # dist
    other = (torch.randn(3, 4, dtype=torch.float64) * 8).round() / 8
    row = other[1].clone()
    for x, y in ((zf, other), (zf.float(), other.float())):
        for p in (2.0, 1.0, math.inf, 3.0, 0.5) if x.dtype == torch.float64 else (2.0, math.inf):
            c.add("dist", x, 0, p=p, other=y)
        c.add("dist", x, 0, p=0.0, other=y, grad=False)
        c.add("dist", x, 1, p=2.0, other=y.t().contiguous())
        c.add("dist", x, 2, p=1.5, other=y[:, :2].contiguous())
    c.add("dist", zf, 0, p=2.0, other=row)
    c.add("dist", zf, 0, p=-math.inf, other=row)
    # cdist
    a = (torch.randn(3, 4, dtype=torch.float64) * 8).round() / 8
    bt = (torch.randn(2, 2, 4, dtype=torch.float64) * 8).round() / 8
    for x, y in ((a, bt), (a.float(), bt.float())):
        for p in (2.0, 1.0, math.inf, 3.0, 0.5) if x.dtype == torch.float64 else (2.0, 1.0):
            c.add("cdist", x, 0, p=p, other=y, arg=2)
        c.add("cdist", x, 0, p=0.0, other=y, arg=2, grad=False)
        c.add("cdist", x, 0, p=2.0, other=y, arg=0)
        c.add("cdist", x, 0, p=2.0, other=y, arg=1)
        c.add("cdist", x, 1, p=2.0, other=y[..., :3].contiguous(), arg=2)
    big = (torch.randn(26, 2, dtype=torch.float64) * 8).round() / 8
    c.add("cdist", big, 0, p=2.0, other=bt[0, :, :2].contiguous(), arg=0)
    c.add("cdist", big, 0, p=2.0, other=bt[0, :, :2].contiguous(), arg=2)
    lines = ["/* GENERATED by tools/gen_golden_reduce2.py with torch %s - do not edit. */\n"
             % torch.__version__,
             "typedef enum r2_op {%s} r2_op;\n" % ", ".join("R2_" + o.upper() for o in OPS),
             "/* op, base dtype, layout (0 contiguous, 1 transposed, 2 every second column, "
             "3 broadcast\n   to 3 rows), base ndim, sizes, values; the other input (dist, "
             "cdist: contiguous) or\n   NULL; dims; keepdim; correction or p; arg (cumsum/"
             "cumprod: dtype, cdist: compute mode);\n   the first output's dtype, ndim and "
             "values; the second output's dtype and values\n   (indices, mean, max) or NULL; the "
             "gradients of sum(out * linspace(-1, 1.5)) over the\n   float outputs for the base "
             "and the other input, or NULL */\n",
             "typedef struct r2_case {\n    r2_op op;\n    ct_dtype dtype;\n    int layout, ndim;"
             "\n    int64_t sizes[3];\n    const double *x;\n    int other_ndim;\n"
             "    int64_t other_sizes[3];\n    const double *other;\n    int n_dims;\n"
             "    int64_t dims[3];\n    int keepdim;\n    double p;\n    int arg;\n"
             "    ct_dtype out_dtype;\n    int out_ndim;\n    const double *out;\n"
             "    ct_dtype out2_dtype;\n    const double *out2, *grad, *grad_other;\n"
             "} r2_case;\n"]
    lines += c.data
    lines.append("static const r2_case r2_cases[] = {\n")
    lines += c.rows
    lines.append("};\n")
    with open(OUT, "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
