#!/usr/bin/env python3
"""Writes tests/golden/decomp_golden.h: PyTorch's numbers for tests/test_decomp.c.

det, slogdet, logdet, inv, solve, solve_triangular, cholesky, qr, eigh, eigvalsh, svd,
svdvals, matrix_norm, norm and matrix_power on contiguous, transposed and step-sliced inputs,
batched and broadcast ones, float32 and float64: the inputs (their bases: the C side applies
the same layout), the outputs and the gradients of the loss sum_k sum(f_k(out_k) * w_k), with
w_k[i] = ((i + 3k) % 7 - 3) / 4 over out_k's contiguous order and f_k the identity, or the
square for eigenvectors and singular vectors (defined up to sign: the square makes the loss
gauge-invariant). Eigenvectors and singular vectors are compared after normalizing signs in
both (each column of V / U made to have its largest-magnitude entry positive, Vh's rows
flipped with U's columns); with full_matrices only U's first k columns and Vh's first k rows
(the rest is not unique) are compared. Run with PyTorch installed:
python3 tools/gen_golden_decomp.py
"""
import os

import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "decomp_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64")}
CONTIG, TRANSPOSED, STEP = 0, 1, 2


def values(shape, seed):
    """Standard normal values from a seeded generator (the C side reads them from the
    header, so they need not be reproducible elsewhere)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64)


def spd(shape, seed):
    """Symmetric positive-definite matrices: X X^T + n I."""
    x = values(shape, seed)
    return x @ x.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)


def sym(shape, seed):
    x = values(shape, seed)
    return x + x.mT


def base_of(t, how):
    """The base the C side builds the input from: t itself, t^T, or t with every other
    column (a step slice of a base twice as wide)."""
    if how == TRANSPOSED:
        return t.mT.contiguous()
    if how == STEP:
        b = torch.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
        b[..., ::2] = t
        b[..., 1::2] = 9.0
        return b
    return t


def weights(k, shape, dtype):
    n = 1
    for s in shape:
        n *= s
    return (((torch.arange(n) + 3 * k) % 7 - 3).to(dtype) / 4).reshape(shape)


def normalize_cols(u, others=()):
    """Flips each column of u (and the matching rows of each in others) so its
    largest-magnitude entry is positive."""
    idx = u.abs().argmax(dim=-2, keepdim=True)
    sign = torch.sign(torch.gather(u, -2, idx))
    sign[sign == 0] = 1
    return [u * sign] + [o * sign.mT for o in others]


def run(op, arg, flags, ins):
    """(outputs to compare, [(output, square?)] for the loss) of one case."""
    a = ins[0]
    if op == "det":
        r = torch.linalg.det(a)
        return [r], [(r, False)]
    if op == "slogdet":
        s, l = torch.linalg.slogdet(a)
        return [s, l], [(l, False)]
    if op == "logdet":
        r = torch.logdet(a)
        return [r], [(r, False)]
    if op == "inv":
        r = torch.linalg.inv(a)
        return [r], [(r, False)]
    if op == "solve":
        r = torch.linalg.solve(a, ins[1], left=bool(flags & 1))
        return [r], [(r, False)]
    if op == "solve_tri":
        r = torch.linalg.solve_triangular(a, ins[1], upper=bool(flags & 1), left=bool(flags & 2),
                                          unitriangular=bool(flags & 4))
        return [r], [(r, False)]
    if op == "cholesky":
        r = torch.linalg.cholesky(a, upper=bool(flags & 1))
        return [r], [(r, False)]
    if op == "qr":
        q, r = torch.linalg.qr(a, mode=arg)
        return [q, r], [(q, False), (r, False)]
    if op == "eigh":
        l, v = torch.linalg.eigh(a, UPLO=arg)
        return [l] + normalize_cols(v), [(l, False), (v, True)]
    if op == "eigvalsh":
        r = torch.linalg.eigvalsh(a, UPLO=arg)
        return [r], [(r, False)]
    if op == "svd":
        u, s, vh = torch.linalg.svd(a, full_matrices=bool(flags & 1))
        k = s.shape[-1]
        uk, vk = u[..., :k], vh[..., :k, :]
        un, vn = normalize_cols(uk, [vk])
        return [un, s, vn], [(uk, True), (s, False), (vk, True)]
    if op == "svdvals":
        r = torch.linalg.svdvals(a)
        return [r], [(r, False)]
    if op == "matrix_norm":
        dim = (-2, -1) if flags & 2 == 0 else (0, 2)
        o = arg if arg in ("fro", "nuc") else float(arg)
        r = torch.linalg.matrix_norm(a, o, dim=dim, keepdim=bool(flags & 1))
        return [r], [(r, False)]
    if op == "norm":
        o = None if arg == "" else arg if arg in ("fro", "nuc") else float(arg)
        dim = {0: None, 2: (1,), 4: (0, 2)}[flags & 6]
        r = torch.linalg.norm(a, o, dim=dim, keepdim=bool(flags & 1))
        return [r], [(r, False)]
    if op == "matrix_power":
        r = torch.linalg.matrix_power(a, flags)
        return [r], [(r, False)]
    raise ValueError(op)


def num(v):
    return "%.17g" % v if v == v and abs(v) != float("inf") else \
        ("NAN" if v != v else ("INFINITY" if v > 0 else "-INFINITY"))


def arr(name, items):
    return "static const double %s[] = {\n%s\n};\n" % (
        name, c_wrap([num(x) for x in items] or ["0"], "    "))


def case(k, op, arg, flags, dt, how, a, b=None, grad=True):
    dtype, ctype = DTYPES[dt]
    ins = [a.to(dtype)] + ([b.to(dtype)] if b is not None else [])
    layouts = [base_of(t, how) for t in ins]
    leaves = [t.clone().requires_grad_(grad) for t in layouts]
    inputs = []
    for t in leaves:
        if how == TRANSPOSED:
            inputs.append(t.mT)
        elif how == STEP:
            inputs.append(t[..., ::2])
        else:
            inputs.append(t)
    outs, loss_terms = run(op, arg, flags, inputs)
    grads = [None, None]
    if grad:
        loss = sum(((o * o if sq else o) * weights(i, o.shape, dtype)).sum()
                   for i, (o, sq) in enumerate(loss_terms))
        loss.backward()
        grads = [t.grad for t in leaves] + [None]
    pre = "dg%d_" % k
    text = ""
    text += arr(pre + "a", layouts[0].double().flatten().tolist())
    text += arr(pre + "b", layouts[1].double().flatten().tolist() if b is not None else [])
    flat = torch.cat([o.detach().double().flatten() for o in outs]) if outs else torch.zeros(0)
    text += arr(pre + "out", flat.tolist())
    text += arr(pre + "ga", grads[0].double().flatten().tolist() if grads[0] is not None else [])
    text += arr(pre + "gb", grads[1].double().flatten().tolist() if grads[1] is not None else [])

    def shape(t):
        return "%d, {%s}" % (t.dim(), ", ".join(map(str, t.shape)) or "0")

    row = '    {"%s", "%s", %d, %s, %d, %s, %s,\n     %d, %s%sa, %sb, %sout, %sga, %sgb},\n' % (
        op, arg, flags, ctype, how, shape(layouts[0]),
        shape(layouts[1]) if b is not None else "0, {0}", flat.numel(), "1, " if grad else "0, ",
        pre, pre, pre, pre, pre)
    return text, row


def cases():
    v, f64 = values, torch.float64
    eye = torch.eye
    yield "det", "", 0, "f64", CONTIG, v([3, 3], 1), None
    yield "det", "", 0, "f32", TRANSPOSED, v([4, 4], 2), None
    yield "det", "", 0, "f64", STEP, v([2, 3, 3], 3), None
    yield "slogdet", "", 0, "f64", CONTIG, v([3, 3], 4), None
    yield "slogdet", "", 0, "f32", STEP, v([2, 3, 3], 5), None
    yield "logdet", "", 0, "f64", TRANSPOSED, spd([3, 3], 6), None
    yield "inv", "", 0, "f64", CONTIG, v([4, 4], 7), None
    yield "inv", "", 0, "f32", TRANSPOSED, v([2, 3, 3], 8), None
    yield "inv", "", 0, "f64", STEP, v([3, 3], 9), None
    yield "solve", "", 1, "f64", CONTIG, v([3, 3], 10), v([3, 2], 11)
    yield "solve", "", 1, "f64", TRANSPOSED, v([2, 3, 3], 12), v([3, 4], 13)
    yield "solve", "", 1, "f32", CONTIG, v([3, 3], 14), v([3], 15)
    yield "solve", "", 1, "f64", CONTIG, v([2, 3, 3], 16), v([2, 3], 17)
    yield "solve", "", 0, "f64", STEP, v([3, 3], 18), v([2, 3], 19)
    yield "solve_tri", "", 3, "f64", CONTIG, v([3, 3], 20) + 3 * eye(3, dtype=f64), v([3, 2], 21)
    yield "solve_tri", "", 4, "f64", TRANSPOSED, v([3, 3], 22), v([2, 3], 23)
    yield "solve_tri", "", 2, "f32", STEP, v([2, 3, 3], 24) + 3 * eye(3, dtype=f64), \
        v([3, 2], 25)
    yield "cholesky", "", 0, "f64", CONTIG, spd([4, 4], 26), None
    yield "cholesky", "", 1, "f64", TRANSPOSED, spd([3, 3], 27), None
    yield "cholesky", "", 0, "f32", STEP, spd([2, 3, 3], 28), None
    yield "qr", "reduced", 0, "f64", CONTIG, v([4, 3], 29), None
    yield "qr", "reduced", 0, "f64", TRANSPOSED, v([3, 5], 30), None
    yield "qr", "complete", 0, "f64", STEP, v([3, 3], 31), None
    yield "qr", "reduced", 0, "f32", CONTIG, v([2, 3, 3], 32), None
    yield "eigh", "L", 0, "f64", CONTIG, sym([4, 4], 33), None
    yield "eigh", "U", 0, "f64", TRANSPOSED, v([3, 3], 34), None
    yield "eigh", "L", 0, "f32", STEP, sym([2, 3, 3], 35), None
    yield "eigvalsh", "L", 0, "f64", CONTIG, v([3, 3], 36), None
    yield "svd", "", 1, "f64", CONTIG, v([4, 3], 37), None
    yield "svd", "", 0, "f64", TRANSPOSED, v([3, 5], 38), None
    yield "svd", "", 1, "f64", STEP, v([2, 5], 39), None
    yield "svd", "", 0, "f32", CONTIG, v([2, 3, 3], 40), None
    yield "svdvals", "", 0, "f64", TRANSPOSED, v([4, 3], 41), None
    for o in ("fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2"):
        yield "matrix_norm", o, 0, "f64", CONTIG, v([3, 4], 42), None
    yield "matrix_norm", "1", 3, "f64", STEP, v([2, 3, 4], 43), None
    yield "matrix_norm", "nuc", 1, "f32", TRANSPOSED, v([2, 3, 3], 44), None
    yield "matrix_norm", "inf", 2, "f64", CONTIG, v([3, 2, 4], 45), None
    yield "norm", "", 0, "f64", CONTIG, v([2, 3, 2], 46), None
    yield "norm", "3", 2, "f64", TRANSPOSED, v([3, 4], 47), None
    yield "norm", "fro", 0, "f32", STEP, v([3, 3], 48), None
    yield "norm", "2", 5, "f64", CONTIG, v([2, 3, 4], 49), None
    yield "norm", "inf", 0, "f64", CONTIG, v([5], 50), None
    yield "matrix_power", "", 3, "f64", CONTIG, v([3, 3], 51), None
    yield "matrix_power", "", 0, "f64", TRANSPOSED, v([3, 3], 52), None
    yield "matrix_power", "", -2, "f64", STEP, v([3, 3], 53) + 2 * eye(3, dtype=f64), None
    yield "matrix_power", "", 2, "f32", CONTIG, v([2, 3, 3], 54), None
    yield "matrix_power", "", 1, "f64", CONTIG, v([3, 3], 55), None


def main():
    data, rows = [], []
    for k, (op, arg, flags, dt, how, a, b) in enumerate(cases()):
        if op == "norm" and a.dim() == 1:
            how = CONTIG
        grad = not (op == "qr" and arg == "complete" and a.shape[-2] > a.shape[-1])
        text, row = case(k, op, arg, flags, dt, how, a, b, grad)
        data.append(text)
        rows.append(row)
    with open(OUT, "w") as f:
        f.write("/* GENERATED by tools/gen_golden_decomp.py with torch %s - do not edit. */\n"
                % torch.__version__)
        f.write("".join(data))
        f.write("static const decomp_golden decomp_golden_cases[] = {\n")
        f.write("".join(rows))
        f.write("};\n")


if __name__ == "__main__":
    main()
