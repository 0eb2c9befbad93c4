#!/usr/bin/env python3
"""Trains examples/fashion_mnist_cnn.c's network in ctorch and in PyTorch from the same initial
weights on the same batches and prints both loss curves, step by step.

usage: tools/cross_check_cnn.py [--build DIR] [--data DIR] [--steps 50] [--seed 0] [--lr 0.01]
                                [--optimizer adam|sgd] [--dtype float64|float32] [--tol 1e-4]
The example runs for one epoch of --steps batches (one thread) with --save-init and
--log-steps; PyTorch then seeds its default generator as the example does, builds the same
nn.Sequential (which draws the same initial weights), loads the example's initial weights from
the safetensors file, and trains with the same optimizer, OneCycleLR(max_lr=lr,
total_steps=steps) stepped per batch, and DataLoader(batch_size=64, shuffle=True): the
shuffling and the dropout masks come from the same generator stream as ctorch's, so the batches
and masks are the same. Exit status 1 when a step's losses differ by more than --tol relative.

Why float64 by default: training amplifies rounding differences step by step. In float32, two
PyTorch runs that differ only in their convolution algorithm (oneDNN's or the native one,
torch.backends.mkldnn.enabled) drift apart by 1e-3 to 1e-2 relative within 50 steps at
max_lr 0.01 (ctorch and PyTorch drift by as much); in float64 the same network agrees to ~1e-12.
--dtype float32 prints that PyTorch-vs-PyTorch column beside ctorch's difference (no
tolerance is applied to it).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import torch
from safetensors.torch import load_file
from torch import nn

from bench_torch import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cnn():
    """examples/fashion_mnist_cnn.c's model."""
    def block(c_in, c_out):
        return [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(),
                nn.MaxPool2d(2)]
    return nn.Sequential(*block(1, 32), *block(32, 64), nn.Flatten(), nn.Dropout(0.25),
                         nn.Linear(64 * 7 * 7, 10))


def optimizer(net, name):
    if name == "adam":
        return torch.optim.Adam(net.parameters())
    return torch.optim.SGD(net.parameters(), momentum=0.9)


def ctorch_losses(a, init_path):
    exe = os.path.join(a.build, "fashion_mnist_cnn")
    cmd = [exe, "--data", a.data, "--epochs", "1", "--steps", str(a.steps), "--threads", "1",
           "--seed", str(a.seed), "--lr", repr(a.lr), "--optimizer", a.optimizer,
           "--save-init", init_path, "--log-steps", str(a.steps), "--dtype", a.dtype]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", out, re.M)]


def torch_losses(a, init_path, mkldnn=True):
    torch.set_num_threads(1)
    torch.backends.mkldnn.enabled = mkldnn
    torch.manual_seed(a.seed)
    dtype = getattr(torch, a.dtype)
    net = cnn().to(dtype)
    init = load_file(init_path)
    same = all(torch.equal(init[k], v) for k, v in net.state_dict().items())
    if mkldnn:
        print("initial weights: ctorch's %s PyTorch's for seed %d"
              % ("equal" if same else "differ from", a.seed))
    net.load_state_dict(init)
    x, y = load(a.data, "train")
    data = torch.utils.data.TensorDataset(x.unsqueeze(1).to(dtype), y)
    loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
    opt = optimizer(net, a.optimizer)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=a.steps)
    net.train()
    losses = []
    for xb, yb in loader:
        if len(losses) == a.steps:
            break
        loss = nn.functional.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        init_path = os.path.join(tmp, "init.safetensors")
        ours = ctorch_losses(a, init_path)
        theirs = torch_losses(a, init_path)
        native = torch_losses(a, init_path, False) if a.dtype == "float32" else None
    worst = 0.0
    print("%s, %s, max_lr %g, seed %d" % (a.dtype, a.optimizer, a.lr, a.seed))
    print("step  ctorch loss   PyTorch loss  rel. difference%s"
          % ("  PyTorch mkldnn off vs on" if native else ""))
    for k, (c, t) in enumerate(zip(ours, theirs)):
        rel = abs(c - t) / max(abs(t), 1e-30)
        worst = max(worst, rel)
        ref = "  %.2e" % (abs(native[k] - t) / max(abs(t), 1e-30)) if native else ""
        print("%4d  %.9f  %.9f  %.2e%s" % (k + 1, c, t, rel, ref))
    ok = len(ours) == len(theirs) == a.steps and (native or worst <= a.tol)
    print("%d steps, largest relative difference %.2e (tolerance %s): %s"
          % (min(len(ours), len(theirs)), worst, "none in float32" if native else "%.0e" % a.tol,
             "ok" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
