#!/usr/bin/env python3
"""Writes tests/golden/loss_golden.h: PyTorch's numbers for tests/test_loss.c.

Every loss of torch.nn.functional that ctorch has (l1, mse, smooth_l1, huber,
binary_cross_entropy(_with_logits), kl_div, nll_loss, cross_entropy) with each reduction and
option (weights, pos_weight, ignore_index, label_smoothing, probability targets,
(N, C, d1, d2) inputs), on contiguous and transposed inputs, float32/float64 and one
float16/bfloat16 case: the loss and the gradients of sum(loss * G) w.r.t. input (and target
where PyTorch differentiates it), G[k] = (k % 5 - 2) * 0.5 + 1.5 over the loss's elements.
Run with PyTorch installed: python3 tools/gen_golden_loss.py
"""
import math
import os
import warnings

import torch
import torch.nn.functional as F

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "loss_golden.h")
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "f16": (torch.float16, "CT_FLOAT16"), "bf16": (torch.bfloat16, "CT_BFLOAT16")}
RED = {"mean": "CT_REDUCTION_MEAN", "sum": "CT_REDUCTION_SUM", "none": "CT_REDUCTION_NONE",
       "batchmean": "CT_REDUCTION_BATCHMEAN"}
MAXN = 48


def vals(n, seed, lo=-2.0, hi=2.0):
    """Deterministic values in [lo, hi] (rebuilt from the array written)."""
    v = torch.sin(torch.arange(n, dtype=torch.float64) * 1.37 + seed) * 0.5 + 0.5
    return lo + (hi - lo) * v


def upstream(n):
    return torch.tensor([(k % 5 - 2) * 0.5 + 1.5 for k in range(n)], dtype=torch.float64)


DIGITS = [17]


def arr(items):
    items = [float(x) for x in items] or [0.0]
    return "{" + c_wrap([num(x, DIGITS[0]) for x in items], "      ", "}").lstrip()


def shape_c(s):
    s = list(s) or [0]
    return "{" + ", ".join(str(int(d)) for d in s) + "}"


def run(op, x, t, w, pw, red, p, ii):
    if op == "l1":
        return F.l1_loss(x, t, reduction=red)
    if op == "mse":
        return F.mse_loss(x, t, reduction=red)
    if op == "smooth_l1":
        return F.smooth_l1_loss(x, t, reduction=red, beta=p)
    if op == "huber":
        return F.huber_loss(x, t, reduction=red, delta=p)
    if op == "bce":
        return F.binary_cross_entropy(x, t, weight=w, reduction=red)
    if op == "bce_logits":
        return F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction=red)
    if op == "kl_div":
        return F.kl_div(x, t, reduction=red, log_target=p != 0)
    if op == "nll":
        return F.nll_loss(x, t, weight=w, reduction=red, ignore_index=ii)
    return F.cross_entropy(x, t, weight=w, reduction=red, ignore_index=ii, label_smoothing=p)


def case(op, dt, shape, red="mean", how=0, p=0.0, ii=-100, tkind="same", w=None, pw=None,
         xr=(-2.0, 2.0), tr=(-2.0, 2.0), seed=0, xvals=None):
    """xvals: the input's values (bce at 0 and 1, whose target gradient is infinite: not
    written)."""
    """how 1: x is the transpose of a contiguous (shape[1], shape[0]) base. tkind: "same"
    (float target of x's shape), "class" (int64 indices over dim 1, or dim 0 of 1-D x)."""
    dtype, ctype = DTYPES[dt]
    n = math.prod(shape)
    base_shape = (shape[1], shape[0]) if how == 1 else shape
    xb = vals(n, seed, *xr) if xvals is None else torch.tensor(xvals, dtype=torch.float64)
    DIGITS[0] = 17 if dt == "f64" else 9
    x64 = xb.reshape(base_shape)
    if op in ("nll", "kl_div"):  # log-probabilities
        x64 = torch.log_softmax(x64, dim=-1)
    x = x64.to(dtype)
    x = x.t() if how == 1 else x
    x.requires_grad_(True)
    cdim = 0 if len(shape) == 1 else 1
    if tkind == "class":
        C = shape[cdim]
        tshape = shape[:cdim] + shape[cdim + 1:]
        tn = math.prod(tshape)
        tv = torch.tensor([(k * 7 + seed) % C for k in range(tn)], dtype=torch.int64)
        if ii != -100 and tn > 1:
            tv[1] = ii
        t = tv.reshape(tshape)
        tvals, tint, tgrad = tv.double(), 1, False
    else:
        tv = vals(n, seed + 11, *tr)
        if op == "kl_div" and p == 0:
            tv = torch.softmax(tv.reshape(shape), dim=-1).reshape(-1)
            tv[0] = 0.0  # xlogy(0, 0) = 0
        if op == "kl_div" and p != 0:
            tv = torch.log_softmax(tv.reshape(shape), dim=-1).reshape(-1)
        if op == "ce":
            tv = torch.softmax(tv.reshape(shape), dim=cdim).reshape(-1)
        t = tv.reshape(shape).to(dtype).requires_grad_(True)
        tvals, tint, tgrad = t.detach().double().reshape(-1), 0, True
    wt = torch.tensor(w, dtype=torch.float64).to(dtype) if w is not None else None
    pwt = torch.tensor(pw, dtype=torch.float64).to(dtype) if pw is not None else None
    out = run(op, x, t, wt, pwt, red, p, ii)
    g = upstream(out.numel()).reshape(out.shape).to(dtype)
    grads = torch.autograd.grad((out * g).sum(), [x, t] if tgrad else [x], allow_unused=True)
    gx = grads[0]
    gt = grads[1] if tgrad and xvals is None else None
    assert n <= MAXN
    return ("    {\"%s\", %s, %s, %d, %s, %d,\n     %d, %s, %s,\n     %d, %s, %d, %s,\n"
            "     %d, %s, %d, %s,\n     %d, %s, %s,\n     %s,\n     %d, %s,\n"
            "     0, {0}, {0.0}, {0.0}}") % (
        op, ctype, RED[red], how, num(p), ii,
        len(shape), shape_c(shape), arr(x64.reshape(-1).tolist()),
        t.dim(), shape_c(t.shape), tint, arr(tvals.tolist()),
        len(w or []), arr(w or []), len(pw or []), arr(pw or []),
        out.dim(), shape_c(out.shape), arr(out.detach().double().reshape(-1).tolist()),
        arr(gx.double().reshape(-1).tolist()),
        1 if gt is not None else 0,
        arr(gt.double().reshape(-1).tolist() if gt is not None else []))


def run3(op, x, y, t, w, red, p, q):
    """The losses of three tensors (and multi_margin_loss): y is the second input."""
    if op == "margin_ranking":
        return F.margin_ranking_loss(x, y, t, margin=p, reduction=red)
    if op == "cosine_embedding":
        return F.cosine_embedding_loss(x, y, t, margin=p, reduction=red)
    if op == "triplet_margin":
        return F.triplet_margin_loss(x, y, t, margin=p, p=q, swap=bool(w), reduction=red)
    if op == "gaussian_nll":
        return F.gaussian_nll_loss(x, t, y, full=bool(q), reduction=red)
    if op == "hinge_embedding":
        return F.hinge_embedding_loss(x, t, margin=p, reduction=red)
    if op == "soft_margin":
        return F.soft_margin_loss(x, t, reduction=red)
    if op == "poisson_nll":
        return F.poisson_nll_loss(x, t, log_input=bool(p), full=bool(q), reduction=red)
    return F.multi_margin_loss(x, t, p=int(q), margin=p, weight=w, reduction=red)


def case3(op, dt, shape, red, x, t, y=None, p=0.0, q=0.0, w=None, tgrad=True):
    """x, t, y: float64 values (t int64 for multi_margin); q: triplet's p, gaussian's and
    poisson's full, multi_margin's p (written in the weight slot's count when no weight);
    w: multi_margin's weight, triplet's swap (a non-empty list)."""
    dtype, ctype = DTYPES[dt]
    DIGITS[0] = 17 if dt == "f64" else 9
    xt = x.to(dtype).requires_grad_(True)
    tint = op == "multi_margin"
    tt = t if tint else t.to(dtype).requires_grad_(tgrad)
    yt = y.to(dtype).requires_grad_(True) if y is not None else None
    wt = torch.tensor(w, dtype=dtype) if (w and op == "multi_margin") else w
    out = run3(op, xt, yt, tt, wt, red, p, q)
    g = upstream(out.numel()).reshape(out.shape).to(dtype)
    wrt = [xt] + ([tt] if tgrad and not tint else []) + ([yt] if yt is not None else [])
    grads = list(torch.autograd.grad((out * g).sum(), wrt))
    gx = grads.pop(0)
    gt = grads.pop(0) if tgrad and not tint else None
    gy = grads.pop(0) if yt is not None else None
    ww = list(w or [])
    return ("    {\"%s\", %s, %s, 0, %s, %s,\n     %d, %s, %s,\n     %d, %s, %d, %s,\n"
            "     %d, %s, 0, {0.0},\n     %d, %s, %s,\n     %s,\n     %d, %s,\n"
            "     %d, %s, %s, %s}") % (
        op, ctype, RED[red], num(p), int(q),
        x.dim(), shape_c(x.shape), arr(x.reshape(-1).tolist()),
        t.dim(), shape_c(t.shape), 1 if tint else 0, arr(t.double().reshape(-1).tolist()),
        len(ww), arr(ww),
        out.dim(), shape_c(out.shape), arr(out.detach().double().reshape(-1).tolist()),
        arr(gx.double().reshape(-1).tolist()),
        1 if gt is not None else 0, arr(gt.double().reshape(-1).tolist() if gt is not None
                                        else []),
        y.dim() if y is not None else 0, shape_c(y.shape if y is not None else []),
        arr(y.reshape(-1).tolist() if y is not None else []),
        arr(gy.double().reshape(-1).tolist() if gy is not None else []))


def cases3():
    out = []
    x, y, z = (vals(6, k).reshape(2, 3) for k in (1, 2, 4))
    sgn = torch.tensor([1.0, -1.0])
    s12 = torch.where(vals(6, 3) > 0, 1.0, -1.0).reshape(2, 3)
    cls = torch.tensor([0, 2])
    for dt, reds in (("f32", ("mean", "none")), ("f64", ("sum",))):
        for red in reds:
            out.append(case3("margin_ranking", dt, 0, red, x, s12, y, p=0.3))
            out.append(case3("hinge_embedding", dt, 0, red, x, s12, p=0.8, tgrad=False))
            out.append(case3("soft_margin", dt, 0, red, x, s12, tgrad=False))
            out.append(case3("cosine_embedding", dt, 0, red, x, sgn, y, p=0.2, tgrad=False))
            out.append(case3("multi_margin", dt, 0, red, x, cls, p=0.9, q=1))
            out.append(case3("multi_margin", dt, 0, red, x, cls, p=1.2, q=2,
                             w=[0.5, 2.0, 1.5]))
            out.append(case3("triplet_margin", dt, 0, red, x, y, z, p=1.0, q=2.0))
            out.append(case3("triplet_margin", dt, 0, red, x, y, z, p=0.5, q=1.0, w=[1.0]))
            out.append(case3("poisson_nll", dt, 0, red, x, vals(6, 5, 0, 3).reshape(2, 3), p=1.0))
            out.append(case3("poisson_nll", dt, 0, red, vals(6, 6, 0.1, 2).reshape(2, 3),
                             vals(6, 5, 0.5, 3).reshape(2, 3), p=0.0, q=1))
            out.append(case3("gaussian_nll", dt, 0, red, x, y, vals(6, 7, 0, 2).reshape(2, 3)))
            out.append(case3("gaussian_nll", dt, 0, red, x, y, vals(2, 7, 0.2, 2), q=1))
        out.append(case3("cosine_embedding", dt, 0, "sum", x[0], torch.tensor(-1.0), y[0],
                         tgrad=False))
        out.append(case3("multi_margin", dt, 0, "none", x[0], torch.tensor(2), p=1.0, q=1))
    return out


def cases():
    out = []
    for dt in ("f32", "f64"):
        for red in (("mean", "sum", "none") if dt == "f32" else ("none",)):
            out.append(case("l1", dt, (2, 3), red))
            out.append(case("mse", dt, (2, 3), red, how=1))
            out.append(case("smooth_l1", dt, (2, 3), red, p=0.7))
            out.append(case("huber", dt, (2, 3), red, p=0.6, how=1))
            out.append(case("bce", dt, (2, 3), red, xr=(0.02, 0.98), tr=(0.0, 1.0)))
            out.append(case("bce_logits", dt, (2, 3), red, tr=(0.0, 1.0), xr=(-6, 6)))
            out.append(case("kl_div", dt, (2, 3), red))
            out.append(case("nll", dt, (4, 3), red, tkind="class"))
            out.append(case("ce", dt, (3, 4), red, tkind="class", how=1))
            out.append(case("ce", dt, (2, 3), red, tkind="same"))
        out.append(case("smooth_l1", dt, (2, 3), "mean", p=0.0))
        out.append(case("l1", dt, (2, 3), "none", how=1))
        out.append(case("bce", dt, (2, 3), "mean", xr=(0.02, 0.98), tr=(0.0, 1.0),
                        w=[0.5, 2.0, 1.5], how=1))
        out.append(case("bce", dt, (2, 3), "sum", tr=(0.0, 1.0),
                        xvals=[0.0, 1.0, 0.5, 1e-30, 0.999, 0.25]))
        out.append(case("bce_logits", dt, (2, 3), "mean", tr=(0.0, 1.0), xr=(-40, 40),
                        w=[0.5, 2.0, 1.5], pw=[3.0, 0.5, 2.0]))
        out.append(case("bce_logits", dt, (2, 3), "none", tr=(0.0, 1.0), pw=[3.0, 0.5, 2.0],
                        how=1))
        for red in (("batchmean", "sum", "none") if dt == "f32" else ("batchmean",)):
            out.append(case("kl_div", dt, (2, 3), red, p=1.0))
        out.append(case("kl_div", dt, (2, 3), "batchmean"))
        for red in (("mean", "sum", "none") if dt == "f32" else ("mean",)):
            out.append(case("nll", dt, (4, 3), red, tkind="class", w=[0.5, 2.0, 1.5], ii=1))
            out.append(case("ce", dt, (4, 3), red, tkind="class", w=[0.5, 2.0, 1.5], ii=2))
            out.append(case("ce", dt, (4, 3), red, tkind="class", p=0.2))
            out.append(case("ce", dt, (4, 3), red, tkind="class", p=0.3, w=[0.5, 2.0, 1.5],
                            ii=0))
            out.append(case("ce", dt, (2, 3, 2, 2), red, tkind="class"))
            out.append(case("ce", dt, (2, 3, 4), red, tkind="class", w=[0.5, 2.0, 1.5], ii=1))
            out.append(case("nll", dt, (2, 3, 2, 2), red, tkind="class", w=[0.5, 2.0, 1.5]))
            out.append(case("ce", dt, (2, 3, 2), red, tkind="same", w=[0.5, 2.0, 1.5],
                            p=0.1))
        out.append(case("ce", dt, (4,), "mean", tkind="class"))
        out.append(case("ce", dt, (4,), "sum", tkind="same"))
        out.append(case("ce", dt, (4, 3), "mean", tkind="class", p=1.0))
    out.append(case("ce", "f16", (4, 5), "mean", tkind="class"))
    out.append(case("bce_logits", "bf16", (3, 4), "mean", tr=(0.0, 1.0)))
    out.append(case("huber", "f16", (3, 4), "sum", p=0.5))
    return out


def main():
    warnings.simplefilter("ignore")  # kl_div's 'mean' warning
    body = ",\n".join(cases() + cases3())
    with open(OUT, "w") as f:
        f.write("/* tests/golden/loss_golden.h - generated by tools/gen_golden_loss.py with "
                "PyTorch " + torch.__version__.split("+")[0] + ". Do not edit. */\n")
        f.write("static const loss_golden loss_golden_cases[] = {\n" + body + "\n};\n")


if __name__ == "__main__":
    main()
