#!/usr/bin/env python3
"""tools/gen_golden_optim2.py - golden values for tests/test_optim2.c (RMSprop, Adagrad,
Adadelta, Adamax, NAdam, RAdam; clip_grad_norm_ and friends) and tests/test_lr_scheduler.c
(every torch.optim.lr_scheduler) from PyTorch.

Optimizers: torch.optim.<X>(foreach=False, the CPU default) on three parameters of shapes
(2, 3), (4) and (3) for STEPS steps with a fixed gradient sequence (some grads None), every
option, one or two parameter groups, in float64, float32 and (some cases) bfloat16; the
parameters after every step. The script also checks that foreach=True gives the same bits.
Schedulers: the lr of every group (and OneCycleLR/CyclicLR's momentum) after construction and
after each of SCHED_STEPS steps. Writes tests/golden/optim2_golden.h and
tests/golden/lr_scheduler_golden.h.

Usage: python3 tools/gen_golden_optim2.py [--outdir tests/golden]
"""
import argparse
import math
import os

import torch

from golden_c import c_wrap, num

STEPS = 10
SHAPES = [(2, 3), (4,), (3,)]
NUMEL = sum(int(torch.Size(s).numel()) for s in SHAPES)
KIND = {"RMSprop": 4, "Adagrad": 5, "Adadelta": 6, "Adamax": 7, "NAdam": 8, "RAdam": 9}
# the C options struct's fields, in order (bools as 0/1)
FIELDS = {
    "RMSprop": ["lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"],
    "Adagrad": ["lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps",
                "maximize"],
    "Adadelta": ["lr", "rho", "eps", "weight_decay", "maximize"],
    "Adamax": ["lr", "beta1", "beta2", "eps", "weight_decay", "maximize"],
    "NAdam": ["lr", "beta1", "beta2", "eps", "weight_decay", "momentum_decay",
              "decoupled_weight_decay", "maximize"],
    "RAdam": ["lr", "beta1", "beta2", "eps", "weight_decay", "decoupled_weight_decay",
              "maximize"],
}
SKIP = ((0, 1), (2, 2), (3, 0), (4, 1))

# name, class, group 0 kwargs, group 1 kwargs (None: one group), skip grads
CASES = [
    ("rmsprop_default", "RMSprop", dict(), None, ()),
    ("rmsprop_wd_momentum", "RMSprop", dict(lr=0.01, weight_decay=0.1, momentum=0.9), None,
     ()),
    ("rmsprop_centered", "RMSprop", dict(lr=0.01, alpha=0.9, centered=True, eps=1e-6), None,
     SKIP),
    ("rmsprop_centered_momentum_max", "RMSprop",
     dict(lr=0.005, centered=True, momentum=0.5, maximize=True, weight_decay=0.01), None, ()),
    ("rmsprop_groups", "RMSprop", dict(lr=0.01), dict(lr=0.02, momentum=0.8, centered=True),
     ()),
    ("adagrad_default", "Adagrad", dict(), None, ()),
    ("adagrad_decay_init", "Adagrad",
     dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1, weight_decay=0.05), None,
     SKIP),
    ("adagrad_maximize", "Adagrad", dict(lr=0.05, maximize=True, eps=1e-6), None, ()),
    ("adagrad_groups", "Adagrad", dict(lr=0.1, initial_accumulator_value=0.2),
     dict(lr=0.03, lr_decay=0.1, weight_decay=0.2), ()),
    ("adadelta_default", "Adadelta", dict(), None, ()),
    ("adadelta_rho_wd", "Adadelta", dict(lr=0.5, rho=0.5, weight_decay=0.1, eps=1e-4), None,
     SKIP),
    ("adadelta_maximize_groups", "Adadelta", dict(maximize=True),
     dict(lr=2.0, rho=0.95, maximize=False), ()),
    ("adamax_default", "Adamax", dict(), None, ()),
    ("adamax_wd_betas", "Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1), None,
     SKIP),
    ("adamax_maximize_groups", "Adamax", dict(lr=0.01, maximize=True),
     dict(lr=0.003, eps=1e-3), ()),
    ("nadam_default", "NAdam", dict(), None, ()),
    ("nadam_wd", "NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01), None, SKIP),
    ("nadam_decoupled_maximize", "NAdam",
     dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True), None, ()),
    ("nadam_groups", "NAdam", dict(lr=0.01, betas=(0.7, 0.9)),
     dict(lr=0.02, weight_decay=0.05, decoupled_weight_decay=True), ()),
    ("radam_default", "RAdam", dict(), None, ()),
    ("radam_rectified", "RAdam", dict(lr=0.01, betas=(0.9, 0.5), weight_decay=0.1), None,
     SKIP),
    ("radam_decoupled_maximize", "RAdam",
     dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1, decoupled_weight_decay=True,
          maximize=True), None, ()),
    ("radam_groups", "RAdam", dict(lr=0.01), dict(lr=0.05, betas=(0.8, 0.7), eps=1e-4), ()),
]
BF16 = ["rmsprop_wd_momentum", "rmsprop_centered", "adagrad_decay_init", "adadelta_rho_wd",
        "adamax_wd_betas", "nadam_wd", "nadam_decoupled_maximize", "radam_rectified",
        "radam_decoupled_maximize"]
DTYPES = {torch.float64: "CT_FLOAT64", torch.float32: "CT_FLOAT32",
          torch.bfloat16: "CT_BFLOAT16"}


def fixed_data():
    g = torch.Generator().manual_seed(20260611)
    init = torch.randn(NUMEL, generator=g, dtype=torch.float64)
    grads = torch.randn(STEPS, NUMEL, generator=g, dtype=torch.float64)
    grads[1] *= 0.01  # a small gradient, so the second moments differ in scale
    grads[3, :4] = 0.0  # exact zeros in some steps
    grads[6] *= 5.0
    return init, grads


def hyper(cls, kwargs):
    """The C options fields of cls's defaults updated with kwargs."""
    p = [torch.zeros(1, requires_grad=True)]
    d = dict(getattr(torch.optim, cls)(p).defaults)
    d.update(kwargs)
    if "betas" in d:
        d["beta1"], d["beta2"] = d["betas"]
    return [float(d[f]) for f in FIELDS[cls]]


def run(case, dtype, init, grads, foreach=False):
    name, cls, kw0, kw1, skip = case
    params, off = [], 0
    for s in SHAPES:
        n = int(torch.Size(s).numel())
        params.append(init[off:off + n].reshape(s).to(dtype).clone().requires_grad_(True))
        off += n
    if kw1 is None:
        groups = [dict(params=params, **kw0)]
    else:
        groups = [dict(params=params[:2], **kw0), dict(params=params[2:], **kw1)]
    ctor_kw = dict(kw0)
    opt = getattr(torch.optim, cls)(groups[:1], foreach=foreach, **ctor_kw)
    for extra in groups[1:]:
        opt.add_param_group(extra)
    out = []
    for step in range(STEPS):
        off = 0
        for k, p in enumerate(params):
            n = p.numel()
            if (step, k) in skip:
                p.grad = None
            else:
                p.grad = grads[step, off:off + n].reshape(p.shape).to(dtype).clone()
            off += n
        opt.step()
        out.append(torch.cat([p.detach().reshape(-1).double() for p in params]))
    return out


def optim_header(init, grads):
    o = ["/* tests/golden/optim2_golden.h - GENERATED by tools/gen_golden_optim2.py",
         " * (PyTorch %s); do not edit." % torch.__version__.split("+")[0],
         " * Parameters of shapes %s flattened into %d values; grads[s] is the gradient of"
         % (", ".join(str(tuple(x)) for x in SHAPES), NUMEL),
         " * step s. h[g] = the options of group g in the C opts struct's field order (bools",
         " * 0/1, betas as two fields); ngroups 2: parameters 0, 1 in group 0 (the constructor's",
         " * options), parameter 2 in group 1 (ct_optimizer_add_param_group). skip bit 3*s + k:",
         " * parameter k has no grad at step s. want[s] = the parameters after step s. */",
         "#define CT_GOLDEN_OPTIM2_STEPS %d" % STEPS,
         "#define CT_GOLDEN_OPTIM2_NUMEL %d" % NUMEL,
         "#define CT_GOLDEN_OPTIM2_NPARAMS %d" % len(SHAPES),
         "static const int ct_golden_optim2_ndim[CT_GOLDEN_OPTIM2_NPARAMS] = {%s};"
         % ", ".join(str(len(x)) for x in SHAPES),
         "static const int64_t ct_golden_optim2_sizes[CT_GOLDEN_OPTIM2_NPARAMS][2] = {%s};"
         % ", ".join("{%s}" % ", ".join(str(v) for v in (list(x) + [1])[:2]) for x in SHAPES),
         "static const double ct_golden_optim2_init[CT_GOLDEN_OPTIM2_NUMEL] = {",
         c_wrap([num(v) for v in init.tolist()], "    "), "};",
         "static const double ct_golden_optim2_grads[CT_GOLDEN_OPTIM2_STEPS]"
         "[CT_GOLDEN_OPTIM2_NUMEL] = {"]
    for s in range(STEPS):
        o += ["    {", c_wrap([num(v) for v in grads[s].tolist()], "        "), "    },"]
    o += ["};", "",
          "/* PyTorch's defaults, field order as h[] */"]
    for cls in KIND:
        o.append("static const double ct_golden_optim2_defaults_%s[8] = {%s};"
                 % (cls.lower(), ", ".join(num(v) for v in hyper(cls, {}))))
    o += ["",
          "typedef struct ct_golden_optim2_case {",
          "    const char *name;",
          "    int kind; /* 4 RMSprop, 5 Adagrad, 6 Adadelta, 7 Adamax, 8 NAdam, 9 RAdam */",
          "    ct_dtype dtype;",
          "    int ngroups;",
          "    unsigned skip;",
          "    double h[2][8];",
          "    double want[CT_GOLDEN_OPTIM2_STEPS][CT_GOLDEN_OPTIM2_NUMEL];",
          "} ct_golden_optim2_case;", "",
          "static const ct_golden_optim2_case ct_golden_optim2_cases[] = {"]
    mismatch = 0
    for case in CASES:
        name, cls, kw0, kw1, skip = case
        dtypes = [torch.float64, torch.float32] + ([torch.bfloat16] if name in BF16 else [])
        for dtype in dtypes:
            want = run(case, dtype, init, grads)
            if dtype != torch.bfloat16:
                fe = run(case, dtype, init, grads, foreach=True)
                mismatch += sum(int((a != b).sum()) for a, b in zip(want, fe))
            bits = sum(1 << (3 * s + k) for (s, k) in skip)
            h0 = hyper(cls, kw0)
            h1 = hyper(cls, {**kw0, **kw1}) if kw1 is not None else [0.0] * len(h0)
            digits = 17 if dtype == torch.float64 else 9
            o.append("    {\"%s\", %d, %s, %d, 0x%xu," % (name, KIND[cls], DTYPES[dtype],
                                                         1 if kw1 is None else 2, bits))
            o.append("     {{%s}, {%s}}," % (", ".join(num(v) for v in h0),
                                            ", ".join(num(v) for v in h1)))
            o.append("     {")
            for s in range(STEPS):
                o += ["         {", c_wrap([num(v, digits) for v in want[s].tolist()],
                                          "             "), "         },"]
            o.append("     }},")
    o += ["};",
          "#define CT_GOLDEN_OPTIM2_NCASES ((int)(sizeof ct_golden_optim2_cases / "
          "sizeof ct_golden_optim2_cases[0]))", ""]
    print("foreach vs for-loop: %d differing values" % mismatch)
    return o


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--outdir", default=os.path.join(here, "..", "tests", "golden"))
    args = ap.parse_args()
    torch.set_default_dtype(torch.float32)
    init, grads = fixed_data()
    o = optim_header(init, grads)
    with open(os.path.join(args.outdir, "optim2_golden.h"), "w") as f:
        f.write("\n".join(o))


if __name__ == "__main__":
    main()
