#!/usr/bin/env python3
"""Writes tests/golden/half2_golden.h: PyTorch's float16/bfloat16 results for tests/test_half2.c.

A sweep over ops of issue 7's families in float16 and bfloat16 (pointwise, sort/select and
reductions, linalg products, views/indexing, creation, softmax) on contiguous, transposed and
broadcast inputs, and a few optimizer steps (SGD, Adam, AdamW) on half parameters. Every
value is written as a double that the half dtype holds exactly, so the C side rebuilds the
inputs bit for bit. Ops that PyTorch computes in float32 with one rounding per output element
must match exactly; ops that accumulate (sums, products, matrix products, std) may differ by
one unit in the last place of the half dtype. Run with PyTorch installed:
python3 tools/gen_golden_half2.py
"""
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "half2_golden.h")
HALVES = {torch.float16: ("f16", "CT_FLOAT16"), torch.bfloat16: ("bf16", "CT_BFLOAT16")}
CONTIG, TRANSPOSED = 0, 1
EXACT, ULP1, GRAD = 0, 1, 2


def values(shape, dtype, scale=3.0, shift=0.0):
    """Deterministic values the half dtype holds, distinct within a small tensor."""
    n = 1
    for s in shape:
        n *= s
    v = torch.sin(torch.arange(n, dtype=torch.float64) * 1.37 + 0.4) * scale + shift
    return v.to(dtype).reshape(shape)


class Case:
    """One op call: inputs (tensor, layout) and PyTorch's output."""

    def __init__(self, name, op, dtype, inputs, out, a=0.0, b=0.0, i=0, mode=EXACT):
        self.name, self.op, self.dtype, self.inputs = name, op, dtype, inputs
        self.out, self.a, self.b, self.i, self.mode = out, a, b, i, mode


def arg(t, how):
    """The tensor PyTorch's call sees: the transpose of the stored base for TRANSPOSED."""
    return t.t() if how == TRANSPOSED else t


def cases_for(dtype):
    short = HALVES[dtype][0]
    out = []

    def add(op, inputs, fn, a=0.0, b=0.0, i=0, mode=EXACT, tag=""):
        res = fn(*[arg(t, how) for t, how in inputs])
        tag += "_grad" if mode == GRAD else ""
        out.append(Case(f"{op.lower()}{tag}_{short}", op, dtype, inputs, res, a, b, i, mode))

    x = values((4, 6), dtype)
    xt = values((6, 4), dtype)  # stored base of a transposed (4, 6) input
    pos = values((4, 6), dtype, 1.5, 2.0)
    small = values((3, 5), dtype, 0.9)
    # pointwise: float32 math, one rounding
    add("ERF", [(small, CONTIG)], torch.erf)
    add("ERF", [(xt, TRANSPOSED)], torch.erf, tag="_t")
    add("LOG1P", [(pos, CONTIG)], torch.log1p)
    add("EXPM1", [(small, CONTIG)], torch.expm1)
    add("ERFC", [(xt, TRANSPOSED)], torch.erfc, tag="_t")
    add("FLOOR", [(x, CONTIG)], torch.floor)
    add("ROUND", [(xt, TRANSPOSED)], torch.round, tag="_t")
    add("ATAN2", [(x, CONTIG), (pos, CONTIG)], torch.atan2)
    add("FMOD", [(x, CONTIG), (pos, CONTIG)], torch.fmod)
    add("REMAINDER", [(xt, TRANSPOSED), (pos, CONTIG)], torch.remainder, tag="_t")
    add("LOGADDEXP", [(x, CONTIG), (xt, TRANSPOSED)], torch.logaddexp, tag="_t")
    add("SIGMOID", [(x, CONTIG)], torch.sigmoid)
    add("SIGMOID", [(xt, TRANSPOSED)], torch.sigmoid, tag="_t")
    add("CLAMP", [(x, CONTIG)], lambda t: torch.clamp(t, -1.25, 2.5), a=-1.25, b=2.5)
    add("WHERE", [((x > 0.5), CONTIG), (x, CONTIG), (values((6,), dtype, 2.0), CONTIG)],
        torch.where, tag="_bcast")
    add("MASKED_FILL", [(x, CONTIG), ((values((6,), dtype) > 0), CONTIG)],
        lambda t, m: t.masked_fill(m, -7.5), a=-7.5, tag="_bcast")
    # sort, selection, reductions
    add("SORT", [(x, CONTIG)], lambda t: torch.sort(t, dim=1, descending=True).values, i=1)
    add("SORT", [(xt, TRANSPOSED)], lambda t: torch.sort(t, dim=0).values, i=0, tag="_t")
    add("TOPK", [(x, CONTIG)], lambda t: torch.topk(t, 3, dim=-1).values, i=3)
    add("KTHVALUE", [(x, CONTIG)], lambda t: torch.kthvalue(t, 2, dim=-1).values, i=2)
    add("MEDIAN", [(x, CONTIG)], torch.median)
    add("CUMSUM", [(x, CONTIG)], lambda t: torch.cumsum(t, 1), i=1, mode=ULP1)
    add("PROD_DIM", [(small, CONTIG)], lambda t: torch.prod(t, 1), i=1, mode=ULP1)
    add("AMAX", [(xt, TRANSPOSED)], lambda t: torch.amax(t, dim=1), i=1, tag="_t")
    add("SUM_DIM", [(x, CONTIG)], lambda t: torch.sum(t, dim=1), i=1, mode=ULP1)
    add("MEAN_DIM", [(xt, TRANSPOSED)], lambda t: torch.mean(t, dim=0), i=0, mode=ULP1,
        tag="_t")
    add("STD_DIM", [(x, CONTIG)], lambda t: torch.std(t, dim=1), i=1, mode=ULP1)
    add("SOFTMAX", [(x, CONTIG)], lambda t: torch.softmax(t, dim=1), i=1, mode=ULP1)
    add("LOG_SOFTMAX", [(xt, TRANSPOSED)], lambda t: torch.log_softmax(t, dim=1), i=1,
        mode=ULP1, tag="_t")
    # linalg products
    m1, m2 = values((2, 3, 4), dtype), values((2, 4, 5), dtype, 2.0, 0.5)
    c = values((3, 5), dtype, 1.0)
    add("BADDBMM", [(c, CONTIG), (m1, CONTIG), (m2, CONTIG)],
        lambda i, p, q: torch.baddbmm(i, p, q, beta=0.5, alpha=1.5), a=0.5, b=1.5, mode=ULP1)
    add("ADDMM", [(values((5,), dtype), CONTIG), (x, CONTIG), (values((6, 5), dtype), CONTIG)],
        lambda i, p, q: torch.addmm(i, p, q, beta=2.0, alpha=0.75), a=2.0, b=0.75,
        mode=ULP1, tag="_bcast")
    add("MATMUL", [(xt, TRANSPOSED), (values((6, 3), dtype), CONTIG)], torch.matmul, mode=ULP1,
        tag="_t")
    add("EINSUM", [(m1, CONTIG), (m2, CONTIG)], lambda p, q: torch.einsum("bij,bjk->bik", p, q),
        mode=ULP1)
    add("OUTER", [(values((4,), dtype), CONTIG), (values((5,), dtype, 2.0), CONTIG)],
        torch.outer)
    add("TRACE", [(values((5, 5), dtype), CONTIG)], torch.trace, mode=ULP1)
    add("KRON", [(values((2, 3), dtype), CONTIG), (values((2, 2), dtype, 2.0), CONTIG)],
        torch.kron)
    add("CROSS", [(values((4, 3), dtype), CONTIG), (values((4, 3), dtype, 2.0, 1.0), CONTIG)],
        lambda p, q: torch.cross(p, q, dim=1), i=1)
    # views and indexing
    idx = torch.tensor([3, 0, 3, 1], dtype=torch.int64)
    add("INDEX_SELECT", [(xt, TRANSPOSED), (idx, CONTIG)],
        lambda t, k: torch.index_select(t, 1, k), i=1, tag="_t")
    gidx = torch.tensor([[0, 2, 1], [3, 3, 0], [1, 0, 2], [2, 1, 1]], dtype=torch.int64)
    add("GATHER", [(x, CONTIG), (gidx, CONTIG)], lambda t, k: torch.gather(t, 1, k), i=1)
    add("TRIL", [(xt, TRANSPOSED)], lambda t: torch.tril(t, 1), i=1, tag="_t")
    add("MESHGRID", [(values((3,), dtype), CONTIG), (values((4,), dtype, 2.0), CONTIG)],
        lambda p, q: torch.meshgrid(p, q, indexing="ij")[1])
    # creation
    add("LOGSPACE", [], lambda: torch.logspace(-2.0, 3.0, 7, dtype=dtype), a=-2.0, b=3.0, i=7)
    add("LINSPACE", [], lambda: torch.linspace(-3.0, 5.0, 9, dtype=dtype), a=-3.0, b=5.0, i=9)
    # random ops over half tensors, after manual_seed(0) (the streams themselves: test_rng.c)
    probs = values((3, 10), dtype, 1.0, 1.5)
    for repl, k in ((1, 40), (0, 6)):
        add("MULTINOMIAL", [(probs, CONTIG)], seeded(lambda t, k=k, r=repl:
                                                     torch.multinomial(t, k, bool(r))),
            a=repl, i=k, tag=f"_{'repl' if repl else 'norepl'}")
    add("BERNOULLI_P", [(values((4, 6), dtype, 0.5, 0.5), CONTIG)], seeded(torch.bernoulli))
    add("NORMAL_TT", [(x, CONTIG), (pos, CONTIG)], seeded(torch.normal))
    more_cases(add, dtype, x, xt, pos, small)
    grad_cases(add, dtype, x, pos)
    return out


def more_cases(add, dtype, x, xt, pos, small):
    """The rest of issue 7's T2 families: scatter/index updates, scans, reductions, searches,
    norms and distances, ternary pointwise ops."""
    gidx = torch.tensor([[0, 2, 1], [3, 3, 0], [1, 0, 2], [2, 1, 1]], dtype=torch.int64)
    src = values((4, 3), dtype, 2.0, 0.5)
    add("SCATTER_ADD", [(x, CONTIG), (gidx, CONTIG), (src, CONTIG)],
        lambda t, k, v: torch.scatter_add(t, 1, k, v), i=1)
    add("SCATTER_AMAX", [(x, CONTIG), (gidx, CONTIG), (src, CONTIG)],
        lambda t, k, v: torch.scatter_reduce(t, 1, k, v, "amax"), i=1)
    idx = torch.tensor([3, 0, 3, 1], dtype=torch.int64)
    add("INDEX_ADD", [(xt, TRANSPOSED), (idx, CONTIG), (values((4, 4), dtype, 1.5), CONTIG)],
        lambda t, k, v: torch.index_add(t, 1, k, v, alpha=0.5), a=0.5, i=1, tag="_t")
    add("INDEX_PUT_ACC", [(x, CONTIG), (idx, CONTIG), (values((4, 6), dtype, 1.5), CONTIG)],
        lambda t, k, v: torch.index_put(t, (k,), v, accumulate=True))
    add("TAKE_ALONG_DIM", [(xt, TRANSPOSED), (gidx, CONTIG)],
        lambda t, k: torch.take_along_dim(t, k, 1), i=1, tag="_t")
    add("MASKED_SELECT", [(x, CONTIG), ((values((6,), dtype) > 0), CONTIG)],
        torch.masked_select, tag="_bcast")
    add("FLIP", [(xt, TRANSPOSED)], lambda t: torch.flip(t, (0, 1)), tag="_t")
    add("ROLL", [(x, CONTIG)], lambda t: torch.roll(t, 2, 1), a=2, i=1)
    add("CUMPROD", [(small, CONTIG)], lambda t: torch.cumprod(t, 1), i=1, mode=ULP1)
    add("CUMMAX", [(xt, TRANSPOSED)], lambda t: torch.cummax(t, 0).values, i=0, tag="_t")
    add("LOGCUMSUMEXP", [(x, CONTIG)], lambda t: torch.logcumsumexp(t, 1), i=1, mode=ULP1)
    add("LOGSUMEXP", [(xt, TRANSPOSED)], lambda t: torch.logsumexp(t, 1), i=1, mode=ULP1,
        tag="_t")
    add("VAR_DIM", [(x, CONTIG)], lambda t: torch.var(t, 0, correction=0), i=0, mode=ULP1)
    add("NANSUM", [(x, CONTIG)], lambda t: torch.nansum(t, 1), i=1, mode=ULP1)
    sorted_seq = torch.sort(values((8,), dtype, 3.0), 0).values
    add("SEARCHSORTED", [(sorted_seq, CONTIG), (x, CONTIG)],
        lambda q, v: torch.searchsorted(q, v, right=True), i=1)
    add("BUCKETIZE", [(xt, TRANSPOSED), (sorted_seq, CONTIG)],
        lambda t, q: torch.bucketize(t, q), tag="_t")
    add("VECTOR_NORM", [(x, CONTIG)], lambda t: torch.linalg.vector_norm(t, 3.0, dim=1),
        a=3.0, i=1, mode=ULP1)
    add("ADDCMUL", [(x, CONTIG), (xt, TRANSPOSED), (pos, CONTIG)],
        lambda t, p, q: torch.addcmul(t, p, q, value=0.75), a=0.75, tag="_t")
    add("LERP", [(x, CONTIG), (pos, CONTIG), (values((6,), dtype, 0.5, 0.5), CONTIG)],
        torch.lerp, tag="_bcast")
    add("HYPOT", [(x, CONTIG), (xt, TRANSPOSED)], torch.hypot, tag="_t")
    add("XLOGY", [(x, CONTIG), (pos, CONTIG)], torch.xlogy)
    add("DOT", [(values((7,), dtype), CONTIG), (values((7,), dtype, 2.0), CONTIG)], torch.dot,
        mode=ULP1)
    add("MV", [(xt, TRANSPOSED), (values((6,), dtype, 2.0), CONTIG)], torch.mv, mode=ULP1,
        tag="_t")


def grad_cases(add, dtype, x, pos):
    """Backward in the half dtype: the gradient of (op(x) * g).sum() with respect to x (the
    first input, a contiguous leaf; g the last input), as PyTorch computes it in that dtype."""
    def grad(fn):
        def run(t, *rest):
            t = t.clone().requires_grad_()
            y = fn(t, *rest[:-1])
            y.backward(rest[-1])
            return t.grad
        return run

    def g(shape):
        return values(shape, dtype, 1.5, 0.25)

    gidx = torch.tensor([[0, 2, 1], [3, 3, 0], [1, 0, 2], [2, 1, 1]], dtype=torch.int64)
    add("GATHER", [(x, CONTIG), (gidx, CONTIG), (g((4, 3)), CONTIG)],
        grad(lambda t, k: torch.gather(t, 1, k)), i=1, mode=GRAD)
    add("SORT", [(x, CONTIG), (g((4, 6)), CONTIG)],
        grad(lambda t: torch.sort(t, dim=1, descending=True).values), i=1, mode=GRAD)
    add("CUMSUM", [(x, CONTIG), (g((4, 6)), CONTIG)], grad(lambda t: torch.cumsum(t, 1)), i=1,
        mode=GRAD)
    add("SOFTMAX", [(x, CONTIG), (g((4, 6)), CONTIG)], grad(lambda t: torch.softmax(t, 1)),
        i=1, mode=GRAD)
    add("LOGSUMEXP", [(x, CONTIG), (g((4,)), CONTIG)], grad(lambda t: torch.logsumexp(t, 1)),
        i=1, mode=GRAD)
    add("ERF", [(x, CONTIG), (g((4, 6)), CONTIG)], grad(torch.erf), mode=GRAD)
    add("MATMUL", [(x, CONTIG), (values((6, 3), dtype), CONTIG), (g((4, 3)), CONTIG)],
        grad(torch.matmul), mode=GRAD)
    add("STD_DIM", [(x, CONTIG), (g((4,)), CONTIG)], grad(lambda t: torch.std(t, dim=1)), i=1,
        mode=GRAD)
    add("ATAN2", [(x, CONTIG), (pos, CONTIG), (g((4, 6)), CONTIG)], grad(torch.atan2),
        mode=GRAD)


def seeded(fn):
    """fn called after torch.manual_seed(0)."""
    def call(*args):
        torch.manual_seed(0)
        return fn(*args)
    return call


OPTIMIZERS = (  # name, kind, options (lr, momentum or beta1, dampening or beta2, wd, eps), flags
    ("sgd", "SGD", (0.1, 0.0, 0.0, 0.0, 0.0), ()),
    ("sgd_momentum_wd", "SGD", (0.05, 0.9, 0.1, 0.01, 0.0), ()),
    ("sgd_nesterov_max", "SGD", (0.05, 0.8, 0.0, 0.0, 0.0), ("nesterov", "maximize")),
    ("adam", "ADAM", (0.01, 0.9, 0.999, 0.0, 1e-3), ()),
    ("adam_wd_amsgrad", "ADAM", (0.02, 0.8, 0.99, 0.05, 1e-3), ("amsgrad",)),
    ("adamw", "ADAMW", (0.01, 0.9, 0.999, 0.1, 1e-3), ("maximize",)),
)
OPTIM_STEPS = 4
# 64 elements: PyTorch's vectorized loops cover them all (its scalar tail, for the last
# numel % 16 or % 32 elements, rounds alpha * b to the half dtype before adding)
OPTIM_SHAPE = (4, 16)


def optim_grad(shape, dtype, step):
    """The gradient set before step `step` (the C side builds the same)."""
    return values(shape, dtype, 1.0 + 0.25 * step, 0.1 * step)


def optim_case(name, kind, opts, flags, dtype):
    """The parameter after OPTIM_STEPS steps of torch.optim on the CPU (single-tensor path)."""
    lr, a, b, wd, eps = opts
    p = values(OPTIM_SHAPE, dtype).requires_grad_()
    if kind == "SGD":
        opt = torch.optim.SGD([p], lr=lr, momentum=a, dampening=b, weight_decay=wd,
                              nesterov="nesterov" in flags, maximize="maximize" in flags)
    else:
        cls = torch.optim.Adam if kind == "ADAM" else torch.optim.AdamW
        opt = cls([p], lr=lr, betas=(a, b), weight_decay=wd, eps=eps,
                  amsgrad="amsgrad" in flags, maximize="maximize" in flags)
    for step in range(OPTIM_STEPS):
        p.grad = optim_grad(p.shape, dtype, step)
        opt.step()
    return p.detach()


def c_double(v):
    return repr(float(v))


ARRAYS = []  # the data arrays, written before the tables


def c_array(t):
    """The name of a new static array holding t's values as doubles (row-major)."""
    name = f"half2_data{len(ARRAYS)}"
    data = [c_double(v) for v in t.double().reshape(-1).tolist()] or ["0.0"]
    ARRAYS.append(f"static const double {name}[] = {{\n{c_wrap(data, '    ', end='};')}")
    return name


def c_tensor(t, how):
    """The half2_tensor initializer of a stored tensor; t is contiguous."""
    dt = {torch.int64: "CT_INT64", torch.bool: "CT_BOOL"}.get(t.dtype)
    dt = dt or HALVES[t.dtype][1]
    sizes = list(t.shape) + [0] * (4 - t.dim())
    return (f"{{{dt}, {how}, {t.dim()}, {{{', '.join(map(str, sizes))}}}, {t.numel()}, "
            f"{c_array(t)}}}")


HEADER = """/* tests/golden/half2_golden.h - GENERATED by tools/gen_golden_half2.py
 * (torch {version}): do not edit. PyTorch's float16/bfloat16 results for tests/test_half2.c.
 *
 * Values are doubles the case's half dtype holds exactly. A TRANSPOSED input is stored as the
 * base whose transpose (ct_t) the op takes. mode EXACT: bit-identical to PyTorch; ULP1: within
 * one unit in the last place of the half dtype (ops that accumulate in another order); GRAD:
 * out is the gradient of (op(inputs[0], ...) * inputs[last]).sum() with respect to inputs[0]
 * (a contiguous leaf), within one unit in the last place.
 * MULTINOMIAL, BERNOULLI_P and NORMAL_TT run after ct_manual_seed(0).
 */
#ifndef HALF2_GOLDEN_H
#define HALF2_GOLDEN_H

#include <stdint.h>

enum {{ HALF2_CONTIG, HALF2_TRANSPOSED }};
enum {{ HALF2_EXACT, HALF2_ULP1, HALF2_GRAD }};

typedef enum half2_op {{
{ops}
}} half2_op;

typedef struct half2_tensor {{
    ct_dtype dtype;
    int layout;
    int ndim;
    int64_t sizes[4];
    int64_t numel;
    const double *data;
}} half2_tensor;

typedef struct half2_case {{
    const char *name;
    half2_op op;
    ct_dtype dtype;
    double a, b; /* float attributes (clamp bounds, beta/alpha, fill value, creation range) */
    int64_t i;   /* dim, k or steps */
    int mode;
    int n_inputs;
    half2_tensor inputs[4];
    half2_tensor out;
}} half2_case;

/* An optimizer run on a (4, 16) parameter (init), HALF2_OPTIM_STEPS steps, the gradient before
   step s grads[64 s ...]; lr, then momentum/dampening (SGD) or beta1/beta2, weight decay, eps;
   param: PyTorch's parameter after the steps. */
#define HALF2_OPTIM_STEPS {steps}
typedef struct half2_optim {{
    const char *name;
    int kind; /* 0 SGD, 1 Adam, 2 AdamW */
    ct_dtype dtype;
    double lr, a, b, weight_decay, eps;
    bool nesterov, maximize, amsgrad;
    const double *init, *grads, *param;
}} half2_optim;
"""


def main():
    all_cases = [c for dt in HALVES for c in cases_for(dt)]
    ops = []
    for c in all_cases:
        if c.op not in ops:
            ops.append(c.op)
    lines = [HEADER.format(version=torch.__version__, steps=OPTIM_STEPS,
                           ops=c_wrap([f"HALF2_{o}" for o in ops], "    "))]
    table = ["static const half2_case half2_cases[] = {"]
    for c in all_cases:
        ins = [c_tensor(t.contiguous(), how) for t, how in c.inputs]
        ins = ins or ["{CT_FLOAT32, 0, 0, {0, 0, 0, 0}, 0, NULL}"]
        outt = c_tensor(c.out.contiguous(), CONTIG)
        sep = ",\n      "
        table.append(f'    {{"{c.name}", HALF2_{c.op}, {HALVES[c.dtype][1]}, {c_double(c.a)}, '
                     f"{c_double(c.b)}, {c.i}, {c.mode}, {len(c.inputs)},\n"
                     f"     {{{sep.join(ins)}}},\n     {outt}}},")
    table.append("};\n")
    table.append("static const half2_optim half2_optims[] = {")
    kinds = {"SGD": 0, "ADAM": 1, "ADAMW": 2}
    for dtype, (short, ct) in HALVES.items():
        init = c_array(values(OPTIM_SHAPE, dtype))
        grads = c_array(torch.stack([optim_grad(OPTIM_SHAPE, dtype, s)
                                     for s in range(OPTIM_STEPS)]))
        for name, kind, opts, flags in OPTIMIZERS:
            p = optim_case(name, kind, opts, flags, dtype)
            fl = ", ".join("true" if f in flags else "false"
                           for f in ("nesterov", "maximize", "amsgrad"))
            table.append(f'    {{"{name}_{short}", {kinds[kind]}, {ct}, '
                         f"{', '.join(c_double(v) for v in opts)},\n     {fl}, {init}, {grads}, "
                         f"{c_array(p)}}},")
    table.append("};\n")
    lines += ARRAYS + [""] + table
    lines.append("#endif")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
