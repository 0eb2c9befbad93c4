#!/usr/bin/env python3
"""PyTorch side of `make bench`: one training epoch of the Fashion-MNIST quickstart MLP.

usage: tools/bench_torch.py --data DIR --threads N --optimizer sgd|adam [--epochs 1] [--steps N]
Prints one line "torch_epoch_s <seconds> <test accuracy>" per epoch, after the PyTorch
version and configuration; --steps N ends each epoch after N batches (as the example's
--steps). PyTorch is configured as ../shared/BENCH.md says: torch.set_num_threads(N),
OPENBLAS_NUM_THREADS=N, flush-to-zero on; tools/bench.py runs it with its default
OMP_WAIT_POLICY and with PASSIVE (set before Python starts) and keeps the better time.
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
from torch import nn


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(data_dir, name):
    for cand in (name, name + ".gz"):
        p = os.path.join(data_dir, cand)
        if os.path.exists(p):
            return p
    sys.exit("bench_torch: %s not found in %s" % (name, data_dir))


def load(data_dir, split):
    x = read_idx(find(data_dir, "%s-images-idx3-ubyte" % split))
    y = read_idx(find(data_dir, "%s-labels-idx1-ubyte" % split))
    x = torch.from_numpy(x.astype(np.float32) / 255.0)
    return x, torch.from_numpy(y.astype(np.int64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(a.seed)
    print("torch", torch.__version__, "threads", torch.get_num_threads())
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    train = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xtr, ytr), batch_size=64,
                                        shuffle=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                          nn.ReLU(), nn.Linear(512, 10))
    loss_fn = nn.CrossEntropyLoss()
    opt = (torch.optim.Adam if a.optimizer == "adam" else torch.optim.SGD)(model.parameters(),
                                                                           lr=a.lr)
    for _ in range(a.epochs):
        model.train()
        t0 = time.perf_counter()
        for step, (x, y) in enumerate(train):
            if a.steps and step == a.steps:
                break
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
        dt = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print("torch_epoch_s %.4f %.4f" % (dt, acc), flush=True)


if __name__ == "__main__":
    main()
