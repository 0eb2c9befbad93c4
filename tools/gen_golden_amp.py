#!/usr/bin/env python3
"""Writes tests/golden/amp_golden.h: PyTorch's autocast output dtypes and GradScaler sequence
for tests/test_amp.c.

Output dtypes: every case (an op that ctorch has, from the CPU and CUDA lists, plus unlisted
ops that must be left alone) runs in two variants (0: all floating inputs float32; 1: the
first floating input in the autocast dtype, the others float32) and three modes:
  0 CPU bfloat16, 1 CPU float16: torch.autocast("cpu", dtype) runs the op here;
  2 CUDA float16: no GPU here, so the expected dtype follows PyTorch's own CUDA test lists
    (torch.testing._internal.autocast_test_lists.AutocastTestLists, the lists its CUDA autocast
    tests check), completed with the documented CUDA entries they lack (cross_entropy):
    float16 list -> float16, float32 list -> float32, promote list -> torch.promote_types of
    float16 and the floating inputs, unlisted -> the dtype the op gives without autocast.
Input values only need to be valid (the C side rebuilds them from the kinds written).

GradScaler: init_scale 2**10, growth_interval 3, 40 iterations of SGD on one parameter whose
gradient is scripted finite / inf / NaN; records get_scale() after update and whether the
step ran. Run with PyTorch installed: python3 tools/gen_golden_amp.py
"""
import math
import os
import sys
import types
import warnings

import torch
import torch.nn.functional as F

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "amp_golden.h")
CT = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.float16: "CT_FLOAT16",
      torch.bfloat16: "CT_BFLOAT16", torch.int64: "CT_INT64", torch.bool: "CT_BOOL"}
MODES = [("cpu", torch.bfloat16), ("cpu", torch.float16), ("cuda", torch.float16)]

# Input kinds: f floating, s floating +-1, u floating in (0, 1), p floating > 0, d floating
# symmetric positive definite (last two dims square), iN int64 in [0, N).
S = lambda *shape: shape  # noqa: E731

# name, the name PyTorch's lists use, inputs (kind, shape), the call.
CASES = [
    ("mm", "mm", [("f", S(3, 4)), ("f", S(4, 2))], torch.mm),
    ("bmm", "bmm", [("f", S(2, 3, 4)), ("f", S(2, 4, 2))], torch.bmm),
    ("addmm", "addmm", [("f", S(3, 2)), ("f", S(3, 4)), ("f", S(4, 2))], torch.addmm),
    ("addbmm", "addbmm", [("f", S(3, 2)), ("f", S(2, 3, 4)), ("f", S(2, 4, 2))], torch.addbmm),
    ("baddbmm", "baddbmm", [("f", S(2, 3, 2)), ("f", S(2, 3, 4)), ("f", S(2, 4, 2))],
     torch.baddbmm),
    ("linear", "linear", [("f", S(3, 4)), ("f", S(2, 4)), ("f", S(2,))], F.linear),
    ("matmul", "matmul", [("f", S(2, 3, 4)), ("f", S(4, 2))], torch.matmul),
    ("conv1d", "conv1d", [("f", S(1, 2, 6)), ("f", S(3, 2, 3)), ("f", S(3,))], F.conv1d),
    ("conv2d", "conv2d", [("f", S(1, 2, 5, 5)), ("f", S(3, 2, 3, 3)), ("f", S(3,))], F.conv2d),
    ("conv_transpose2d", "conv_transpose2d",
     [("f", S(1, 2, 4, 4)), ("f", S(2, 3, 3, 3)), ("f", S(3,))], F.conv_transpose2d),
    ("prelu", "prelu", [("f", S(2, 3, 4)), ("f", S(3,))], F.prelu),
    ("scaled_dot_product_attention", "scaled_dot_product_attention",
     [("f", S(1, 2, 3, 4)), ("f", S(1, 2, 3, 4)), ("f", S(1, 2, 3, 4))],
     F.scaled_dot_product_attention),
    ("addmv", "addmv", [("f", S(3,)), ("f", S(3, 4)), ("f", S(4,))], torch.addmv),
    ("addr", "addr", [("f", S(3, 4)), ("f", S(3,)), ("f", S(4,))], torch.addr),
    ("mv", "mv", [("f", S(3, 4)), ("f", S(4,))], torch.mv),
    ("prod", "prod", [("f", S(3, 4))], torch.prod),
    ("cdist", "cdist", [("f", S(3, 4)), ("f", S(2, 4))], torch.cdist),
    ("trace", "trace", [("f", S(3, 3))], torch.trace),
    ("mse_loss", "mse_loss", [("f", S(3, 4)), ("f", S(3, 4))], F.mse_loss),
    ("l1_loss", "l1_loss", [("f", S(3, 4)), ("f", S(3, 4))], F.l1_loss),
    ("huber_loss", "huber_loss", [("f", S(3, 4)), ("f", S(3, 4))], F.huber_loss),
    ("smooth_l1_loss", "smooth_l1_loss", [("f", S(3, 4)), ("f", S(3, 4))], F.smooth_l1_loss),
    ("nll_loss", "nll_loss", [("f", S(3, 5)), ("i5", S(3,))], F.nll_loss),
    ("cross_entropy", "cross_entropy", [("f", S(3, 5)), ("i5", S(3,))], F.cross_entropy),
    ("kl_div", "kl_div", [("f", S(3, 4)), ("u", S(3, 4))], F.kl_div),
    ("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits",
     [("f", S(3, 4)), ("u", S(3, 4))], F.binary_cross_entropy_with_logits),
    ("binary_cross_entropy", "binary_cross_entropy", [("u", S(3, 4)), ("u", S(3, 4))],
     F.binary_cross_entropy),
    ("margin_ranking_loss", "margin_ranking_loss", [("f", S(4,)), ("f", S(4,)), ("s", S(4,))],
     F.margin_ranking_loss),
    ("soft_margin_loss", "soft_margin_loss", [("f", S(4,)), ("s", S(4,))], F.soft_margin_loss),
    ("hinge_embedding_loss", "hinge_embedding_loss", [("f", S(4,)), ("s", S(4,))],
     F.hinge_embedding_loss),
    ("cosine_embedding_loss", "cosine_embedding_loss",
     [("f", S(3, 4)), ("f", S(3, 4)), ("s", S(3,))], F.cosine_embedding_loss),
    ("poisson_nll_loss", "poisson_nll_loss", [("f", S(3, 4)), ("p", S(3, 4))],
     F.poisson_nll_loss),
    ("linalg_inv", "linalg_inv", [("d", S(3, 3))], torch.linalg.inv),
    ("linalg_solve", "linalg_solve", [("d", S(3, 3)), ("f", S(3, 2))], torch.linalg.solve),
    ("linalg_cholesky", "linalg_cholesky", [("d", S(3, 3))], torch.linalg.cholesky),
    ("linalg_svdvals", "linalg_svdvals", [("f", S(3, 4))], torch.linalg.svdvals),
    ("avg_pool3d", "avg_pool3d", [("f", S(1, 1, 4, 4, 4))], lambda x: F.avg_pool3d(x, 2)),
    ("max_pool3d", "max_pool3d", [("f", S(1, 1, 4, 4, 4))], lambda x: F.max_pool3d(x, 2)),
    ("adaptive_avg_pool3d", "adaptive_avg_pool3d", [("f", S(1, 1, 4, 4, 4))],
     lambda x: F.adaptive_avg_pool3d(x, 2)),
    ("cat", "cat", [("f", S(2, 3)), ("f", S(2, 3))], lambda a, b: torch.cat([a, b])),
    ("stack", "stack", [("f", S(2, 3)), ("f", S(2, 3))], lambda a, b: torch.stack([a, b])),
    ("add", "add", [("f", S(2, 3)), ("f", S(2, 3))], torch.add),
    ("relu", "relu", [("f", S(2, 3))], torch.relu),
    ("gelu", "gelu", [("f", S(2, 3))], F.gelu),
    ("layer_norm", "layer_norm", [("f", S(2, 4)), ("f", S(4,)), ("f", S(4,))],
     lambda x, w, b: F.layer_norm(x, (4,), w, b)),
    ("group_norm", "group_norm", [("f", S(2, 4, 3)), ("f", S(4,)), ("f", S(4,))],
     lambda x, w, b: F.group_norm(x, 2, w, b)),
    ("rms_norm", "rms_norm", [("f", S(2, 4)), ("f", S(4,))],
     lambda x, w: F.rms_norm(x, (4,), w)),
    ("softmax", "softmax", [("f", S(2, 3))], lambda x: torch.softmax(x, 1)),
    ("log_softmax", "log_softmax", [("f", S(2, 3))], lambda x: torch.log_softmax(x, 1)),
    ("softmin", "softmin", [("f", S(2, 3))], lambda x: F.softmin(x, 1)),
    ("sum", "sum", [("f", S(2, 3))], torch.sum),
    ("cumsum", "cumsum", [("f", S(2, 3))], lambda x: torch.cumsum(x, 1)),
    ("cumsum_dtype", "cumsum", [("f", S(2, 3))],
     lambda x: torch.cumsum(x, 1, dtype=torch.float16)),
    ("logsumexp", "logsumexp", [("f", S(2, 3))], lambda x: torch.logsumexp(x, 1)),
    ("exp", "exp", [("f", S(2, 3))], torch.exp),
    ("log", "log", [("p", S(2, 3))], torch.log),
    ("rsqrt", "rsqrt", [("p", S(2, 3))], torch.rsqrt),
    ("tan", "tan", [("f", S(2, 3))], torch.tan),
    ("pow", "pow", [("p", S(2, 3)), ("f", S(2, 3))], torch.pow),
    ("softplus", "softplus", [("f", S(2, 3))], F.softplus),
    ("normalize", "normalize", [("f", S(2, 3))], F.normalize),
    ("cosine_similarity", "cosine_similarity", [("f", S(2, 3)), ("f", S(2, 3))],
     F.cosine_similarity),
    ("dist", "dist", [("f", S(2, 3)), ("f", S(2, 3))], torch.dist),
    ("pdist", "pdist", [("f", S(3, 4))], F.pdist),
    ("addcmul", "addcmul", [("f", S(2, 3)), ("f", S(2, 3)), ("f", S(2, 3))], torch.addcmul),
    ("addcdiv", "addcdiv", [("f", S(2, 3)), ("f", S(2, 3)), ("p", S(2, 3))], torch.addcdiv),
    ("atan2", "atan2", [("f", S(2, 3)), ("f", S(2, 3))], torch.atan2),
    ("dot", "dot", [("f", S(4,)), ("f", S(4,))], torch.dot),
    ("vdot", "vdot", [("f", S(4,)), ("f", S(4,))], torch.vdot),
    ("cross", "cross", [("f", S(2, 3)), ("f", S(2, 3))], lambda a, b: torch.cross(a, b, dim=1)),
    ("tensordot", "tensordot", [("f", S(2, 3)), ("f", S(3, 2))],
     lambda a, b: torch.tensordot(a, b, dims=([1], [0]))),
    ("bilinear", "bilinear", [("f", S(2, 3)), ("f", S(2, 4)), ("f", S(5, 3, 4)), ("f", S(5,))],
     F.bilinear),
    ("scatter_add", "scatter_add", [("f", S(2, 3)), ("i2", S(2, 3)), ("f", S(2, 3))],
     lambda x, i, s: torch.scatter_add(x, 0, i, s)),
    ("index_put", "index_put", [("f", S(4, 3)), ("i4", S(2,)), ("f", S(2, 3))],
     lambda x, i, v: torch.index_put(x, (i,), v)),
]


def cuda_lists():
    """PyTorch's CUDA autocast test lists: name -> 'fp16' / 'fp32' / 'promote'."""
    sys.modules.setdefault("expecttest", types.SimpleNamespace(TestCase=object))
    from torch.testing._internal.autocast_test_lists import AutocastTestLists
    lists = AutocastTestLists(torch.device("cpu"))
    cat = {}
    for attr, c in [("torch_fp16", "fp16"), ("nn_fp16", "fp16"), ("linalg_fp16", "fp16"),
                    ("torch_fp32", "fp32"), ("nn_fp32", "fp32"),
                    ("torch_need_autocast_promote", "promote")]:
        for entry in getattr(lists, attr):
            cat[entry[0]] = c
    for name in ["cross_entropy", "normalize", "softmin"]:  # documented, absent from the tests
        cat.setdefault(name, "fp32")
    for entry in lists.banned:
        cat[entry[0]] = "banned"
    return cat


def make_input(kind, shape, dtype):
    n = math.prod(shape)
    w = torch.sin(torch.arange(n, dtype=torch.float64) * 1.3 + 0.7).reshape(shape)
    if kind[0] == "i":
        return (torch.arange(n) % int(kind[1:])).reshape(shape)
    if kind == "s":
        w = torch.where(w >= 0, 1.0, -1.0)
    elif kind == "u":
        w = torch.sigmoid(w)
    elif kind == "p":
        w = w.abs() + 0.5
    elif kind == "d":
        w = w @ w.transpose(-1, -2) + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)
    return w.to(dtype)


def inputs(case, variant, low):
    out, first = [], True
    for kind, shape in case[2]:
        floating = kind[0] != "i"
        dtype = low if (floating and first and variant == 1) else torch.float32
        first = first and not floating
        out.append(make_input(kind, shape, dtype))
    return out


def first_out(r):
    return r[0] if isinstance(r, (tuple, list)) else r


def cpu_dtype(case, variant, low):
    with torch.autocast("cpu", dtype=low):
        return first_out(case[3](*inputs(case, variant, low))).dtype


def cuda_dtype(case, variant, cats):
    ins = inputs(case, variant, torch.float16)
    c = None if case[0].endswith("_dtype") else cats.get(case[1])  # explicit dtype: as is
    if c == "banned":
        raise RuntimeError("unsafe to autocast")
    if c == "fp16":
        return torch.float16
    if c == "fp32":
        return torch.float32
    if c == "promote":
        d = torch.float16
        for t in ins:
            if t.is_floating_point():
                d = torch.promote_types(d, t.dtype)
        return d
    if variant == 1:
        return None  # a float16 input to an unlisted op: CUDA's kernels, not autocast, decide
    return first_out(case[3](*ins)).dtype


def outcome(fn, *args):
    """The output dtype's C name, CT_DTYPE_DEFAULT where PyTorch raises, CT_DTYPE_COUNT where
    nothing is recorded."""
    try:
        return CT.get(fn(*args), "CT_DTYPE_COUNT")
    except RuntimeError:
        return "CT_DTYPE_DEFAULT"


def kinds_c(case):
    items = []
    for kind, shape in case[2]:
        dims = list(shape) + [0] * (5 - len(shape))
        bound = int(kind[1:]) if kind[0] == "i" else 0
        items.append("{'%s', %d, %d, {%s}}" % (kind[0], bound, len(shape),
                                                ", ".join(str(d) for d in dims)))
    return items


def scaler_sequence():
    """GradScaler on a scripted schedule: (kind of the gradient, scale after update, ran)."""
    torch.manual_seed(0)
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = torch.optim.SGD([p], lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    rows = []
    for it in range(40):
        kind = 1 if it % 7 == 3 else 2 if it % 11 == 5 else 0  # 0 finite, 1 inf, 2 nan
        opt.zero_grad()
        loss = (p * p).sum() * (1.0 + it / 10)
        scaler.scale(loss).backward()
        if kind:
            p.grad[it % 2] = math.inf if kind == 1 else math.nan
        before = p.detach().clone()
        scaler.step(opt)
        ran = not torch.equal(before, p.detach())
        scaler.update()
        rows.append((kind, scaler.get_scale(), ran, p[0].item(), p[1].item()))
    return rows


def main():
    warnings.simplefilter("ignore")
    cats = cuda_lists()
    lines = ["/* Generated by tools/gen_golden_amp.py from PyTorch %s: do not edit. */"
             % torch.__version__,
             "typedef struct amp_golden_input {",
             "    char kind; /* f floating, s +-1, u (0, 1), p > 0, d SPD, i int64 */",
             "    int bound; /* i: values in [0, bound) */",
             "    int ndim;",
             "    int64_t sizes[5];",
             "} amp_golden_input;",
             "typedef struct amp_golden_case {",
             "    const char *name;",
             "    int n_inputs;",
             "    amp_golden_input inputs[4];",
             "    /* [variant][mode: CPU bf16, CPU fp16, CUDA fp16]; CT_DTYPE_DEFAULT: an error;",
             "       CT_DTYPE_COUNT: not recorded */",
             "    ct_dtype out[2][3];",
             "} amp_golden_case;",
             "static const amp_golden_case amp_golden_cases[] = {"]
    for case in CASES:
        out = []
        for variant in range(2):
            row = [outcome(cpu_dtype, case, variant, low) for _, low in MODES[:2]]
            row.append(outcome(cuda_dtype, case, variant, cats))
            out.append("{" + ", ".join(row) + "}")
        lines.append("    {\"%s\", %d, {%s}," % (case[0], len(case[2]),
                                                 ", ".join(kinds_c(case))))
        lines.append("     {%s}}," % ", ".join(out))
    lines.append("};")
    lines.append("/* kind (0 finite, 1 inf, 2 NaN), scale after update, step ran, p after */")
    lines.append("static const double amp_golden_scaler[][5] = {")
    for r in scaler_sequence():
        lines.append("    {%d, %s, %d, %s, %s}," % (r[0], num(r[1]), int(r[2]), num(r[3], 9),
                                                    num(r[4], 9)))
    lines.append("};")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
