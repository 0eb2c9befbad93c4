#!/usr/bin/env python3
"""PyTorch's side of bench/bench_loader.c: DataLoader throughput with the same transforms.

Fashion-MNIST's training images (float32 in [0, 1], (N, 1, 28, 28)) and labels; a Dataset whose
__getitem__ applies Compose(RandomCrop(28, padding=4), RandomHorizontalFlip(),
Normalize((0.2860,), (0.3530,))) to the image, as torchvision datasets do; DataLoader(batch_size
64, shuffle, num_workers --workers). The transforms are torchvision's when it is installed, else
its tensor code paths written with torch ops (tools/gen_golden_transforms.py's Tv* classes,
the same draws and ops); the first output line says which. Prints the batches per second of
the best of --repeat windows of --batches batches after 20 warm-up batches (which start the
worker processes), as "torch_loader_batches_per_s X".

usage: tools/bench_torch_loader.py [--data DIR] [--workers N] [--batches N] [--repeat N]
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

try:
    from torchvision import transforms as T
    SOURCE = "torchvision %s" % __import__("torchvision").__version__
except ImportError:
    import gen_golden_transforms as G
    T = None
    SOURCE = "torch ops (torchvision not installed: tools/gen_golden_transforms.py's Tv*)"


def load_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * k:8 + 4 * k], "big") for k in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(data, name):
    path = os.path.join(data, name + ".gz")
    return path if os.path.exists(path) else os.path.join(data, name)


def pipeline():
    if T is not None:
        return T.Compose([T.RandomCrop(28, padding=4), T.RandomHorizontalFlip(),
                          T.Normalize((0.2860,), (0.3530,))])
    return G.TvCompose([G.TvRandomCrop(28, padding=4), G.TvRandomHorizontalFlip(),
                        G.TvNormalize((0.2860,), (0.3530,))])


class Images(Dataset):
    def __init__(self, x, y, transform):
        self.x, self.y, self.transform = x, y, transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.transform(self.x[i]), self.y[i]


def rate(it, batches):
    t0 = time.perf_counter()
    for _ in range(batches):
        next(it)
    return batches / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batches", type=int, default=250)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(1)
    x = torch.from_numpy(load_idx(find(a.data, "train-images-idx3-ubyte")).copy())
    x = (x.float() / 255).reshape(-1, 1, 28, 28)
    y = torch.from_numpy(load_idx(find(a.data, "train-labels-idx1-ubyte")).astype(np.int64))
    dl = DataLoader(Images(x, y, pipeline()), batch_size=64, shuffle=True,
                    num_workers=a.workers, generator=torch.Generator().manual_seed(0))
    print("transforms: %s" % SOURCE)
    it = iter(dl)
    rate(it, 20)
    best = max(rate(it, a.batches) for _ in range(a.repeat))
    print("torch_loader_batches_per_s %.1f" % best)


if __name__ == "__main__":
    main()
