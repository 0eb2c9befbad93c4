#!/usr/bin/env python3
"""PyTorch side of `make bench`'s CNN part: examples/fashion_mnist_cnn.c's training epoch and
single-image latency.

usage: tools/bench_torch_cnn.py --data DIR --threads N [--steps N] [--latency N] [--lr 0.01]
                                [--amp bf16]
The same network (tools/cross_check_cnn.py's cnn()), data, batch size 64 with shuffling, Adam
and OneCycleLR stepped per batch as the example; --steps N ends the epoch after N batches (as
the example's --steps). Prints "torch_epoch_s <seconds> <test accuracy>", then with --latency N
"torch_latency_us <median>" over N single-image forwards in eval mode under no_grad (as the
example's --latency). --amp bf16 runs the forward passes and the loss under
torch.autocast("cpu", torch.bfloat16), as the example's --amp bf16. PyTorch is configured as tools/bench_torch.py is (../shared/BENCH.md).
"""
import argparse
import time

import torch
from torch import nn

from bench_torch import load
from cross_check_cnn import cnn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--latency", type=int, default=0)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--amp", choices=("bf16",), default=None)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(a.seed)
    print("torch", torch.__version__, "threads", torch.get_num_threads())
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    xtr, xte = xtr.unsqueeze(1), xte.unsqueeze(1)
    train = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xtr, ytr), batch_size=64,
                                        shuffle=True)
    model = cnn()
    opt = torch.optim.Adam(model.parameters())
    batches = min(a.steps, len(train)) if a.steps else len(train)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=batches)
    model.train()
    amp = torch.autocast("cpu", torch.bfloat16, enabled=a.amp is not None)
    t0 = time.perf_counter()
    for step, (x, y) in enumerate(train):
        if step == batches:
            break
        with amp:
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    dt = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        with amp:
            correct = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                          for i in range(0, len(xte), 1000))
        print("torch_epoch_s %.4f %.4f" % (dt, correct / len(xte)), flush=True)
        times = []
        for i in range(a.latency):
            x = xte[i % len(xte):i % len(xte) + 1]
            t0 = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t0)
    if times:
        print("torch_latency_us %.1f" % (sorted(times)[len(times) // 2] * 1e6), flush=True)


if __name__ == "__main__":
    main()
