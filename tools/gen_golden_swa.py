#!/usr/bin/env python3
"""Writes tests/golden/swa_golden.h: PyTorch's numbers for tests/test_swa.c.

AveragedModel over Sequential(Linear(3, 2), BatchNorm1d(2), Linear(2, 1)) for 10 update steps
(the model's parameters and buffers set to new values before each step): SWA's running mean,
the EMA (get_ema_multi_avg_fn) with and without use_buffers, float32 and float64; the averaged
parameters and buffers after every step. SWALR for 100 steps (cos and linear annealing, one or
per-group swa_lr, anneal_epochs 0, after another scheduler): every group's lr after
construction and after each step. update_bn over a 10-sample TensorDataset in batches of 4.
Run with PyTorch installed: python3 tools/gen_golden_swa.py
"""
import math
import os

import torch
from torch.optim import swa_utils

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "swa_golden.h")
STEPS = 10
SWALR_STEPS = 100


def values(n, k=0):
    v = torch.arange(n, dtype=torch.float64)
    return torch.sin(v * 1.3 + 0.7 + k) * 2 + torch.cos(v * 0.37) + 0.5 * k


def arr(name, vals, digits=17):
    body = c_wrap([num(float(v), digits) for v in (vals or [0.0])], "    ", "};")
    return "static const double %s[] = {\n%s\n" % (name, body)


def model_new(dtype):
    m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2),
                            torch.nn.Linear(2, 1))
    return m.to(dtype)


def tensors(m):
    return list(m.parameters()) + list(m.buffers())


def set_step(m, step):
    """The model's values at a step: floats from values(), num_batches_tracked = 3 step + 1."""
    with torch.no_grad():
        for k, t in enumerate(tensors(m)):
            if t.dtype == torch.int64:
                t.fill_(3 * step + 1)
            else:
                v = values(t.numel(), step * 7 + k).reshape(t.shape)
                t.copy_(v.abs() + 0.1 if k == 7 else v)  # running_var stays positive


def flat(m):
    return [float(x) for t in tensors(m) for x in t.detach().flatten().tolist()]


# (name, dtype code 0 float32 / 1 float64, ema, decay, use_buffers)
AVG_CASES = [("swa", 0, 0, 0.999, 0), ("swa_buffers", 0, 0, 0.999, 1),
             ("ema_buffers", 0, 1, 0.9, 1), ("ema", 1, 1, 0.999, 0), ("swa_f64", 1, 0, 0.999, 0)]


def avg_case(name, f64, ema, decay, use_buffers, decls):
    dtype = torch.float64 if f64 else torch.float32
    torch.manual_seed(0)
    model = model_new(dtype)
    fn = swa_utils.get_ema_multi_avg_fn(decay) if ema else None
    avg = swa_utils.AveragedModel(model, multi_avg_fn=fn, use_buffers=bool(use_buffers))
    model_vals, avg_vals = [], []
    for step in range(STEPS):
        set_step(model, step)
        model_vals += flat(model)
        avg.update_parameters(model)
        avg_vals += flat(avg.module)
    assert int(avg.n_averaged) == STEPS
    decls.append(arr("swa_%s_model" % name, model_vals, 17 if f64 else 9))
    decls.append(arr("swa_%s_avg" % name, avg_vals))
    return '    {"%s", %d, %d, %s, %d, swa_%s_model, swa_%s_avg},\n' % (
        name, f64, ema, num(decay), use_buffers, name, name)


def opt_new(lrs):
    ps = [torch.zeros(1, requires_grad=True) for _ in lrs]
    opt = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(ps, lrs)], lr=lrs[0],
                          momentum=0.9)
    return opt


# (name, group lrs, swa_lrs, anneal_epochs, strategy, cosine steps before)
SWALR_CASES = [("cos", [0.1, 0.05], [0.01, 0.02], 10, "cos", 0),
               ("linear", [0.1, 0.05], [0.03], 7, "linear", 0),
               ("zero_epochs", [0.2], [0.05], 0, "cos", 0),
               ("after_cosine", [0.1, 0.3], [0.02, 0.04], 20, "cos", 5),
               ("default_one", [0.5], [0.5], 10, "cos", 0)]


def swalr_case(name, lrs, swa_lrs, epochs, strategy, before, decls):
    opt = opt_new(lrs)
    if before:
        cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 10)
        for _ in range(before):
            opt.step()
            cos.step()
    swa_lr = swa_lrs if len(swa_lrs) > 1 else swa_lrs[0]
    sched = swa_utils.SWALR(opt, swa_lr, anneal_epochs=epochs, anneal_strategy=strategy)
    out = [g["lr"] for g in opt.param_groups]
    for _ in range(SWALR_STEPS):
        opt.step()
        sched.step()
        out += [g["lr"] for g in opt.param_groups]
    decls.append(arr("swalr_%s_lrs" % name, out))
    g = len(lrs)
    return '    {"%s", %d, {%s}, %d, {%s}, %d, "%s", %d, swalr_%s_lrs},\n' % (
        name, g, ", ".join(num(v) for v in lrs), len(swa_lrs),
        ", ".join(num(v) for v in swa_lrs), epochs, strategy, before, name)


def update_bn(decls):
    """Sequential(Linear(3, 4), BatchNorm1d(4, momentum=0.3)) after torch.manual_seed(1), in
    eval mode, updated over TensorDataset(x, y) in batches of 4."""
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4, momentum=0.3))
    model.eval()
    x = values(30, 3).reshape(10, 3).float()
    y = torch.arange(10)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)
    with torch.no_grad():
        model[1].running_mean.fill_(5)
        model[1].num_batches_tracked.fill_(9)
    swa_utils.update_bn(loader, model)
    assert not model.training and model[1].momentum == 0.3
    bn = model[1]
    decls.append(arr("ct_golden_update_bn_x", x.flatten().tolist()))
    decls.append(arr("ct_golden_update_bn_stats", bn.running_mean.tolist() +
                     bn.running_var.tolist() + [float(bn.num_batches_tracked)], 9))


def main():
    decls, avg_rows, lr_rows = [], [], []
    for c in AVG_CASES:
        avg_rows.append(avg_case(*c, decls))
    for c in SWALR_CASES:
        lr_rows.append(swalr_case(*c, decls))
    update_bn(decls)
    n_vals = len(flat(model_new(torch.float32)))
    with open(OUT, "w") as f:
        f.write("/* tests/golden/swa_golden.h - GENERATED by tools/gen_golden_swa.py\n"
                " * from PyTorch %s; do not edit. */\n" % torch.__version__)
        f.write("#ifndef CT_GOLDEN_SWA_H\n#define CT_GOLDEN_SWA_H\n\n")
        f.write("#define CT_GOLDEN_SWA_STEPS %d\n" % STEPS)
        f.write("#define CT_GOLDEN_SWA_VALUES %d /* parameters, then buffers */\n" % n_vals)
        f.write("#define CT_GOLDEN_SWALR_STEPS %d\n\n" % SWALR_STEPS)
        f.write("".join(decls))
        f.write("""
/* AveragedModel over Sequential(Linear(3, 2), BatchNorm1d(2), Linear(2, 1)) (float64 with
   f64): per step the model's values (set before update_parameters) and the averaged model's
   after it, CT_GOLDEN_SWA_VALUES each (parameters then buffers, in module order). */
typedef struct ct_golden_swa_case {
    const char *name;
    int f64, ema;
    double decay;
    int use_buffers;
    const double *model, *avg;
} ct_golden_swa_case;

static const ct_golden_swa_case ct_golden_swa_cases[] = {
""")
        f.write("".join(avg_rows))
        f.write("""};

/* SWALR on SGD (momentum 0.9, one scalar parameter per group, lrs), after `before` steps of
   CosineAnnealingLR(T_max 10): the groups' lrs after construction, then after each step. */
typedef struct ct_golden_swalr_case {
    const char *name;
    int n_groups;
    double lrs[2];
    int n_swa;
    double swa_lrs[2];
    int anneal_epochs;
    const char *strategy;
    int before;
    const double *lrs_out;
} ct_golden_swalr_case;

static const ct_golden_swalr_case ct_golden_swalr_cases[] = {
""")
        f.write("".join(lr_rows))
        f.write("};\n\n#endif\n")


if __name__ == "__main__":
    main()
