#!/usr/bin/env python3
"""Writes tests/golden/distance_golden.h: PyTorch's numbers for tests/test_distance.c.

F.normalize, F.cosine_similarity, F.pairwise_distance, F.pdist and F.bilinear in float32 and
float64 with every option, broadcast inputs, transposed (strided) inputs and zero vectors: the
inputs, the output and the gradients of sum(out * gout) for every input; F.one_hot cases;
nn.Bilinear(3, 2, 4)'s initial weight and bias after torch.manual_seed(7); nn.Sigmoid and
nn.Identity modules' outputs and gradients (tests/test_module_act.c).
Run with PyTorch installed: python3 tools/gen_golden_distance.py
"""
import math
import os

import torch
import torch.nn.functional as F

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "distance_golden.h")


def values(n, k=0):
    v = torch.arange(n, dtype=torch.float64)
    return torch.sin(v * 1.3 + 0.7 + k) * 2 + torch.cos(v * 0.37) + 0.5 * k


def arr(name, vals, digits):
    body = c_wrap([num(float(v), digits) for v in (vals or [0.0])], "    ", "};")
    return "static const double %s[] = {\n%s\n" % (name, body)


def base_shape(shape, transposed):
    s = list(shape)
    if transposed:
        s[-1], s[-2] = s[-2], s[-1]
    return s


INF = float("inf")
# (op, f64, [(shape, transposed, k, zero_rows)], options): zero_rows zeroes the first rows of
# the input (zero vectors); options p, eps, dim, keepdim as the op takes them; kink: a point
# where the op is not differentiable (zero vectors, clamped norms), no gradcheck there.
CASES = [
    ("normalize", 0, [([4, 5], 0, 0, 0)], dict(p=2.0, dim=1, eps=1e-12)),
    ("normalize", 1, [([3, 4, 5], 1, 1, 0)], dict(p=1.0, dim=-1, eps=1e-12)),
    ("normalize", 1, [([3, 4], 0, 2, 1)], dict(p=2.0, dim=1, eps=1e-12, kink=1)),
    ("normalize", 1, [([3, 4], 0, 3, 0)], dict(p=3.0, dim=0, eps=0.5)),
    ("normalize", 0, [([2, 3, 4], 1, 4, 0)], dict(p=INF, dim=1, eps=1e-12)),
    ("normalize", 2, [([3, 4], 1, 5, 0)], dict(p=2.0, dim=1, eps=1e-12)),
    ("cosine_similarity", 0, [([4, 5], 0, 0, 0), ([4, 5], 0, 1, 0)], dict(dim=1, eps=1e-8)),
    ("cosine_similarity", 1, [([3, 1, 5], 0, 2, 0), ([4, 5], 0, 3, 0)], dict(dim=-1, eps=1e-8)),
    ("cosine_similarity", 1, [([3, 4], 0, 4, 1), ([3, 4], 0, 5, 0)],
     dict(dim=1, eps=1e-8, kink=1)),
    ("cosine_similarity", 1, [([4, 3], 1, 6, 0), ([4, 3], 0, 7, 0)], dict(dim=0, eps=0.9, kink=1)),
    ("cosine_similarity", 0, [([2, 3, 4], 1, 8, 0), ([3, 4], 1, 9, 0)], dict(dim=-2, eps=1e-8)),
    ("cosine_similarity", 2, [([3, 4], 0, 10, 0), ([3, 4], 0, 11, 0)], dict(dim=1, eps=1e-8)),
    ("cosine_similarity", 1, [([3, 1], 0, 12, 0), ([3, 4], 0, 13, 0)], dict(dim=1, eps=1e-8)),
    ("pairwise_distance", 0, [([4, 5], 0, 0, 0), ([4, 5], 0, 1, 0)],
     dict(p=2.0, eps=1e-6, keepdim=0)),
    ("pairwise_distance", 1, [([3, 5], 0, 2, 0), ([5], 0, 3, 0)], dict(p=2.0, eps=1e-6, keepdim=1)),
    ("pairwise_distance", 1, [([2, 3, 4], 1, 4, 0), ([3, 4], 0, 5, 0)],
     dict(p=1.0, eps=1e-6, keepdim=0)),
    ("pairwise_distance", 1, [([4, 3], 0, 6, 0), ([4, 3], 1, 7, 0)],
     dict(p=3.0, eps=0.25, keepdim=1)),
    ("pairwise_distance", 0, [([3, 4], 0, 8, 0), ([3, 4], 0, 9, 0)],
     dict(p=INF, eps=1e-6, keepdim=0)),
    ("pdist", 0, [([5, 3], 0, 0, 0)], dict(p=2.0)),
    ("pdist", 1, [([4, 3], 0, 1, 0)], dict(p=1.0)),
    ("pdist", 1, [([6, 2], 1, 2, 0)], dict(p=3.0)),
    ("pdist", 1, [([4, 5], 0, 3, 0)], dict(p=INF)),
    ("pdist", 0, [([1, 3], 0, 4, 0)], dict(p=2.0)),
    ("bilinear", 0, [([4, 3], 0, 0, 0), ([4, 2], 0, 1, 0), ([5, 3, 2], 0, 2, 0), ([5], 0, 3, 0)],
     dict()),
    ("bilinear", 1, [([2, 3, 3], 0, 4, 0), ([2, 3, 2], 1, 5, 0), ([4, 3, 2], 1, 6, 0)], dict()),
    ("bilinear", 1, [([3], 0, 7, 0), ([4], 0, 8, 0), ([2, 3, 4], 0, 9, 0), ([2], 0, 10, 0)],
     dict()),
]


def run(op, xs, o):
    if op == "normalize":
        return F.normalize(xs[0], o["p"], o["dim"], o["eps"])
    if op == "cosine_similarity":
        return F.cosine_similarity(xs[0], xs[1], o["dim"], o["eps"])
    if op == "pairwise_distance":
        return F.pairwise_distance(xs[0], xs[1], o["p"], o["eps"], bool(o["keepdim"]))
    if op == "pdist":
        return F.pdist(xs[0], o["p"])
    return F.bilinear(xs[0], xs[1], xs[2], xs[3] if len(xs) > 3 else None)


DTYPES = [torch.float32, torch.float64, torch.float16]


def case(idx, op, f64, ins, o, decls):
    dtype = DTYPES[f64]
    digits = 17 if f64 else 9
    leaves, xs = [], []
    for k, (shape, tr, seed, zero) in enumerate(ins):
        v = values(math.prod(shape), seed)
        base = v.reshape(base_shape(shape, tr)).to(dtype)
        if zero:
            base[:zero] = 0
        leaf = base.clone().requires_grad_(True)
        leaves.append(leaf)
        xs.append(leaf.transpose(-1, -2) if tr else leaf)
        decls.append(arr("dist_%d_in%d" % (idx, k), base.flatten().tolist(), 17))
    y = run(op, xs, o)
    g = values(y.numel(), 11).reshape(y.shape).to(dtype)
    (y * g).sum().backward()
    decls.append(arr("dist_%d_out" % idx, y.detach().flatten().tolist(), digits))
    decls.append(arr("dist_%d_gout" % idx, g.flatten().tolist(), 17))
    for k, (leaf, (shape, tr, _, _)) in enumerate(zip(leaves, ins)):
        gr = leaf.grad.transpose(-1, -2) if tr else leaf.grad
        decls.append(arr("dist_%d_grad%d" % (idx, k), gr.flatten().tolist(), digits))
    n = len(ins)
    shapes = ", ".join("{%s}" % ", ".join(map(str, s)) for s, _, _, _ in ins)
    fields = [
        '"%s"' % op, str(f64), num(o.get("p", 0.0)), num(o.get("eps", 0.0)),
        str(o.get("dim", 0)), str(o.get("keepdim", 0)), str(1 - o.get("kink", 0)), str(n),
        "{%s}" % ", ".join(str(len(s)) for s, _, _, _ in ins),
        "{%s}" % shapes, "{%s}" % ", ".join(str(t) for _, t, _, _ in ins),
        "{%s}" % ", ".join("dist_%d_in%d" % (idx, k) for k in range(n)),
        str(y.dim()), "{%s}" % ", ".join(map(str, list(y.shape) or [0])),
        "dist_%d_out" % idx, "dist_%d_gout" % idx,
        "{%s}" % ", ".join("dist_%d_grad%d" % (idx, k) for k in range(n)),
    ]
    return "    {" + c_wrap(fields, "     ", "},").lstrip() + "\n"


ONE_HOT = [([0, 2, 1, 3], [4], -1), ([1, 0, 2, 2], [2, 2], 4), ([2], [], -1), ([], [0, 3], 4)]


def one_hot_case(idx, vals, shape, classes, decls):
    x = torch.tensor(vals, dtype=torch.int64).reshape(shape)
    y = F.one_hot(x, classes)
    decls.append(arr("one_hot_%d_in" % idx, vals, 17))
    decls.append(arr("one_hot_%d_out" % idx, y.flatten().tolist(), 17))
    return "    {%d, {%s}, one_hot_%d_in, %d, %d, {%s}, one_hot_%d_out},\n" % (
        len(shape), ", ".join(map(str, shape or [0])), idx, classes, y.dim(),
        ", ".join(map(str, y.shape)), idx)


def bilinear_init(decls):
    """nn.Bilinear(3, 2, 4) after torch.manual_seed(7): weight and bias."""
    torch.manual_seed(7)
    m = torch.nn.Bilinear(3, 2, 4)
    decls.append(arr("ct_golden_bilinear_init_weight", m.weight.detach().flatten().tolist(), 17))
    decls.append(arr("ct_golden_bilinear_init_bias", m.bias.detach().flatten().tolist(), 17))


# nn.Sigmoid and nn.Identity (tests/test_module_act.c): (module, float64, shape, transposed)
ACT_MODULES = [("sigmoid", 0, [3, 4], 0), ("sigmoid", 1, [4, 3], 1), ("identity", 0, [2, 5], 0),
               ("identity", 1, [3, 4], 1)]


def act_module_case(idx, name, f64, shape, tr, decls):
    dtype = torch.float64 if f64 else torch.float32
    m = torch.nn.Sigmoid() if name == "sigmoid" else torch.nn.Identity()
    base = (values(math.prod(shape), idx) * 3).reshape(base_shape(shape, tr)).to(dtype)
    leaf = base.clone().requires_grad_(True)
    x = leaf.transpose(-1, -2) if tr else leaf
    y = m(x)
    g = values(y.numel(), 13).reshape(y.shape).to(dtype)
    (y * g).sum().backward()
    gr = leaf.grad.transpose(-1, -2) if tr else leaf.grad
    for what, v in (("in", base), ("out", y.detach()), ("gout", g), ("grad", gr)):
        decls.append(arr("act_%d_%s" % (idx, what), v.flatten().tolist(), 17))
    return '    {"%s", %d, {%d, %d}, %d, act_%d_in, act_%d_out, act_%d_gout, act_%d_grad},\n' % (
        name, f64, shape[0], shape[1], tr, idx, idx, idx, idx)


def main():
    decls, rows, hot, act = [], [], [], []
    bilinear_init(decls)
    for i, c in enumerate(ACT_MODULES):
        act.append(act_module_case(i, *c, decls))
    for i, (op, f64, ins, o) in enumerate(CASES):
        rows.append(case(i, op, f64, ins, o, decls))
    for i, (vals, shape, classes) in enumerate(ONE_HOT):
        hot.append(one_hot_case(i, vals, shape, classes, decls))
    with open(OUT, "w") as f:
        f.write("/* tests/golden/distance_golden.h - GENERATED by tools/gen_golden_distance.py\n"
                " * from PyTorch %s; do not edit. */\n" % torch.__version__)
        f.write("#ifndef CT_GOLDEN_DISTANCE_H\n#define CT_GOLDEN_DISTANCE_H\n")
        f.write("#include <stdint.h>\n\n")
        f.write("".join(decls))
        f.write("""
/* One case: op, dtype (0 float32, 1 float64, 2 float16), p, eps, dim, keepdim, smooth (0 at a
   point where the op is not differentiable: no gradcheck), inputs (ndim,
   shape as the op sees it, transposed: the values are the base's, shape with the last two dims
   swapped, and the op gets transpose(-1, -2)), the output and gout (row-major), the gradients
   of sum(out * gout) in the op's view of each input. */
typedef struct ct_golden_dist_case {
    const char *op;
    int dtype;
    double p, eps;
    int64_t dim;
    int keepdim, smooth, n_in;
    int nd[4];
    int64_t shape[4][3];
    int transposed[4];
    const double *in[4];
    int nd_out;
    int64_t out_shape[3];
    const double *out, *gout;
    const double *grad[4];
} ct_golden_dist_case;

static const ct_golden_dist_case ct_golden_dist_cases[] = {
""")
        f.write("".join(rows))
        f.write("""};

/* F.one_hot(input (ndim, shape), num_classes) -> out (ndim_out, shape_out), int64 values. */
typedef struct ct_golden_one_hot_case {
    int nd;
    int64_t shape[2];
    const double *in;
    int64_t num_classes;
    int nd_out;
    int64_t out_shape[3];
    const double *out;
} ct_golden_one_hot_case;

static const ct_golden_one_hot_case ct_golden_one_hot_cases[] = {
""")
        f.write("".join(hot))
        f.write("""};

/* nn.Sigmoid / nn.Identity on a 2-D input (shape as the module sees it; transposed: the values
   are the base's and the module gets transpose(0, 1)): the output and the gradient of
   sum(out * gout), row-major. */
typedef struct ct_golden_act_module_case {
    const char *module;
    int f64;
    int64_t shape[2];
    int transposed;
    const double *in, *out, *gout, *grad;
} ct_golden_act_module_case;

static const ct_golden_act_module_case ct_golden_act_module_cases[] = {
""")
        f.write("".join(act))
        f.write("};\n\n#endif\n")


if __name__ == "__main__":
    main()
