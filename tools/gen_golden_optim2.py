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


SCHED_STEPS = 100
LS = torch.optim.lr_scheduler


def sched_cases():
    """name, optimizer ("SGD" with momentum 0.9 or "Adam"), group lrs, builder(opt) -> the
    scheduler; the C test builds the same by name."""
    return [
        ("step", "SGD", [0.1], lambda o: LS.StepLR(o, 7, 0.5)),
        ("multi_step", "SGD", [0.1], lambda o: LS.MultiStepLR(o, [10, 30, 30, 60], 0.3)),
        ("exponential", "SGD", [0.1], lambda o: LS.ExponentialLR(o, 0.97)),
        ("cosine", "SGD", [0.1, 0.05], lambda o: LS.CosineAnnealingLR(o, 30, 0.001)),
        ("cosine_100", "SGD", [0.1], lambda o: LS.CosineAnnealingLR(o, 100)),
        ("warm_restarts", "SGD", [0.1, 0.05],
         lambda o: LS.CosineAnnealingWarmRestarts(o, 10, 2, 1e-4)),
        ("warm_restarts_1", "SGD", [0.1], lambda o: LS.CosineAnnealingWarmRestarts(o, 7)),
        ("linear", "SGD", [0.1], lambda o: LS.LinearLR(o, 0.25, 1.0, 20)),
        ("linear_default", "SGD", [0.1], lambda o: LS.LinearLR(o)),
        ("constant", "SGD", [0.1], lambda o: LS.ConstantLR(o, 0.5, 10)),
        ("polynomial", "SGD", [0.1], lambda o: LS.PolynomialLR(o, 50, 2.0)),
        ("lambda", "SGD", [0.1, 0.05],
         lambda o: LS.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1.0 / (1 + e)])),
        ("multiplicative", "SGD", [0.1, 0.05],
         lambda o: LS.MultiplicativeLR(o, [lambda e: 0.99, lambda e: 0.98])),
        ("one_cycle", "SGD", [0.1, 0.05], lambda o: LS.OneCycleLR(o, 0.5, total_steps=100)),
        ("one_cycle_linear3", "Adam", [0.1],
         lambda o: LS.OneCycleLR(o, 1.0, total_steps=100, anneal_strategy="linear",
                                 three_phase=True, pct_start=0.25)),
        ("one_cycle_epochs", "SGD", [0.1],
         lambda o: LS.OneCycleLR(o, 0.3, epochs=10, steps_per_epoch=10, cycle_momentum=False,
                                 div_factor=10.0, final_div_factor=100.0)),
        ("cyclic", "SGD", [0.1, 0.05], lambda o: LS.CyclicLR(o, 0.01, 0.1, step_size_up=10)),
        ("cyclic_triangular2", "Adam", [0.1],
         lambda o: LS.CyclicLR(o, 0.01, 0.1, step_size_up=5, step_size_down=15,
                               mode="triangular2")),
        ("cyclic_exp_range", "SGD", [0.1],
         lambda o: LS.CyclicLR(o, 0.02, 0.2, step_size_up=8, mode="exp_range", gamma=0.99,
                               cycle_momentum=False)),
        ("sequential", "SGD", [0.1, 0.05],
         lambda o: LS.SequentialLR(o, [LS.LinearLR(o, 0.1, 1.0, 5), LS.CosineAnnealingLR(o, 50)],
                                   [5])),
        ("sequential3", "SGD", [0.1],
         lambda o: LS.SequentialLR(o, [LS.ConstantLR(o, 0.5, 3), LS.ExponentialLR(o, 0.9),
                                       LS.StepLR(o, 10, 0.5)], [10, 40])),
        ("chained", "SGD", [0.1],
         lambda o: LS.ChainedScheduler([LS.ExponentialLR(o, 0.98), LS.StepLR(o, 5, 0.5)])),
    ]


# ReduceLROnPlateau: name, kwargs; metric sequence below
PLATEAU = [
    ("plateau_min_rel", dict(patience=5, cooldown=2, min_lr=1e-3)),
    ("plateau_max_abs", dict(mode="max", threshold=0.05, threshold_mode="abs", patience=3,
                             factor=0.5)),
    ("plateau_min_abs_eps", dict(threshold=0.01, threshold_mode="abs", patience=2,
                                 factor=0.7, eps=1e-3, min_lr=0.02)),
]


def make_opt(cls, lrs):
    params = [torch.zeros(1, requires_grad=True) for _ in lrs]
    groups = [dict(params=[p], lr=lr) for p, lr in zip(params, lrs)]
    if cls == "SGD":
        return torch.optim.SGD(groups, lr=lrs[0], momentum=0.9)
    return torch.optim.Adam(groups, lr=lrs[0])


def momenta(opt):
    return [g["momentum"] if "momentum" in g else g["betas"][0] for g in opt.param_groups]


def plateau_metrics():
    g = torch.Generator().manual_seed(7)
    base = torch.linspace(1.0, 0.2, SCHED_STEPS, dtype=torch.float64)
    noise = torch.rand(SCHED_STEPS, generator=g, dtype=torch.float64) * 0.1
    m = base + noise
    m[40:70] = 0.5  # a plateau
    return m.tolist()


def sched_header():
    import warnings
    warnings.filterwarnings("ignore")
    o = ["/* tests/golden/lr_scheduler_golden.h - GENERATED by tools/gen_golden_optim2.py",
         " * (PyTorch %s); do not edit." % torch.__version__.split("+")[0],
         " * lr[k * ngroups + g]: the lr of group g after construction (k = 0) and after step k",
         " * of SCHED_STEPS (optimizer.step() then scheduler.step()); momentum likewise (SGD's",
         " * momentum or Adam's betas[0]) where the scheduler cycles it. */",
         "#define CT_GOLDEN_SCHED_STEPS %d" % SCHED_STEPS,
         "typedef struct ct_golden_sched_case {",
         "    const char *name;",
         "    int adam; /* the optimizer: 0 SGD(momentum=0.9), 1 Adam */",
         "    int ngroups;",
         "    double group_lr[2];",
         "    const double *lr;",
         "    const double *momentum;",
         "} ct_golden_sched_case;", ""]
    table = []
    for name, cls, lrs, build in sched_cases():
        opt = make_opt(cls, lrs)
        sch = build(opt)
        lr_rows, m_rows = [list(sch.get_last_lr())], [momenta(opt)]
        for _ in range(SCHED_STEPS):
            opt.step()
            sch.step()
            lr_rows.append(list(sch.get_last_lr()))
            m_rows.append(momenta(opt))
        cyc = name.startswith("one_cycle") or name.startswith("cyclic")
        cyc = cyc and len(set(v for r in m_rows for v in r)) > 1
        o.append("static const double ct_golden_sched_%s_lr[] = {" % name)
        o.append(c_wrap([num(v) for r in lr_rows for v in r], "    "))
        o.append("};")
        if cyc:
            o.append("static const double ct_golden_sched_%s_m[] = {" % name)
            o.append(c_wrap([num(v) for r in m_rows for v in r], "    "))
            o.append("};")
        table.append("    {\"%s\", %d, %d, {%s}, ct_golden_sched_%s_lr, %s},"
                     % (name, int(cls == "Adam"), len(lrs),
                        ", ".join(num(v) for v in (lrs + [0.0])[:2]), name,
                        "ct_golden_sched_%s_m" % name if cyc else "NULL"))
    o.append("static const ct_golden_sched_case ct_golden_sched_cases[] = {")
    o += table
    o += ["};",
          "#define CT_GOLDEN_SCHED_NCASES ((int)(sizeof ct_golden_sched_cases / "
          "sizeof ct_golden_sched_cases[0]))", ""]
    metrics = plateau_metrics()
    o.append("static const double ct_golden_plateau_metrics[CT_GOLDEN_SCHED_STEPS] = {")
    o.append(c_wrap([num(v) for v in metrics], "    "))
    o.append("};")
    ptable = []
    for name, kw in PLATEAU:
        opt = make_opt("SGD", [0.1, 0.05])
        sch = LS.ReduceLROnPlateau(opt, **kw)
        rows = [list(sch.get_last_lr())]
        for mtr in metrics:
            sch.step(mtr)
            rows.append(list(sch.get_last_lr()))
        d = dict(mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0.0, eps=1e-8)
        d.update(kw)
        o.append("static const double ct_golden_%s_lr[] = {" % name)
        o.append(c_wrap([num(v) for r in rows for v in r], "    "))
        o.append("};")
        ptable.append("    {\"%s\", \"%s\", %s, %d, %s, \"%s\", %d, %s, %s, ct_golden_%s_lr},"
                      % (name, d["mode"], num(d["factor"]), d["patience"], num(d["threshold"]),
                         d["threshold_mode"], d["cooldown"], num(d["min_lr"]), num(d["eps"]),
                         name))
    o += ["/* ReduceLROnPlateau on groups lr 0.1 and 0.05, stepped with the metrics above */",
          "typedef struct ct_golden_plateau_case {",
          "    const char *name, *mode;",
          "    double factor;",
          "    int patience;",
          "    double threshold;",
          "    const char *threshold_mode;",
          "    int cooldown;",
          "    double min_lr, eps;",
          "    const double *lr;",
          "} ct_golden_plateau_case;",
          "static const ct_golden_plateau_case ct_golden_plateau_cases[] = {"]
    o += ptable
    o += ["};", ""]
    return o


# clip_grad_norm_: name, max_norm, norm_type, parameter without grad (-1: none), dtype
CLIP = [
    ("l2", 1.0, 2.0, -1, torch.float64),
    ("l2_f32", 1.0, 2.0, -1, torch.float32),
    ("inf", 0.5, math.inf, 1, torch.float64),
    ("inf_f32", 0.5, math.inf, -1, torch.float32),
    ("l1_no_clip", 100.0, 1.0, -1, torch.float64),
    ("l3", 0.25, 3.0, 0, torch.float32),
    ("l0_5", 2.0, 0.5, -1, torch.float64),
]


def clip_section(init, grads):
    o = ["", "/* clip_grad_norm_ on parameters of the shapes above whose grads are grads[0] (the",
         " * parameter `skip` has none): the total norm and the grads after (want, flattened,",
         " * 0 where there is no grad); clip_grad_value_(0.3) likewise on grads[1]. */",
         "typedef struct ct_golden_clip_case {",
         "    const char *name;",
         "    double max_norm, norm_type;",
         "    int skip;",
         "    ct_dtype dtype;",
         "    double total;",
         "    double want[CT_GOLDEN_OPTIM2_NUMEL];",
         "} ct_golden_clip_case;",
         "static const ct_golden_clip_case ct_golden_clip_cases[] = {"]

    def params_with(dtype, gsrc, skip):
        ps, off = [], 0
        for k, sh in enumerate(SHAPES):
            n = int(torch.Size(sh).numel())
            p = init[off:off + n].reshape(sh).to(dtype).clone().requires_grad_(True)
            if k != skip:
                p.grad = gsrc[off:off + n].reshape(sh).to(dtype).clone()
            ps.append(p)
            off += n
        return ps

    def flat(ps):
        return [v for p in ps for v in (p.grad.reshape(-1).double().tolist() if p.grad is not None
                                        else [0.0] * p.numel())]
    for name, max_norm, norm_type, skip, dtype in CLIP:
        ps = params_with(dtype, grads[0] * 3.0, skip)
        total = torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
        digits = 17 if dtype == torch.float64 else 9
        o.append("    {\"%s\", %s, %s, %d, %s, %s, {" % (name, num(max_norm), num(norm_type), skip,
                                                     DTYPES[dtype], num(float(total), digits)))
        o.append(c_wrap([num(v, digits) for v in flat(ps)], "        "))
        o.append("    }},")
    o.append("};")
    ps = params_with(torch.float64, grads[1] * 30.0, 2)
    torch.nn.utils.clip_grad_value_(ps, 0.3)
    o.append("static const double ct_golden_clip_value_want[CT_GOLDEN_OPTIM2_NUMEL] = {")
    o.append(c_wrap([num(v) for v in flat(ps)], "    "))
    o.append("};")
    return o


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--outdir", default=os.path.join(here, "..", "tests", "golden"))
    args = ap.parse_args()
    torch.set_default_dtype(torch.float32)
    init, grads = fixed_data()
    o = optim_header(init, grads) + clip_section(init, grads)
    with open(os.path.join(args.outdir, "optim2_golden.h"), "w") as f:
        f.write("\n".join(o))
    with open(os.path.join(args.outdir, "lr_scheduler_golden.h"), "w") as f:
        f.write("\n".join(sched_header()))


if __name__ == "__main__":
    main()
