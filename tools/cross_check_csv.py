#!/usr/bin/env python3
"""Runs examples/csv_classifier.c and the same training in PyTorch, and prints both runs' losses
per epoch and test accuracies.

usage: tools/cross_check_csv.py [--bin build/csv_classifier] [--data data/iris.csv]
                                [--label species] [--epochs 60] [--seed 0]
                                [--test-fraction 0.2] [--tol 1e-3]
PyTorch's side, as the example's steps: the CSV's features as float32 and its label column
(integers as they are, strings numbered in sorted order: numpy.unique / sklearn's
LabelEncoder), rows with a missing value dropped; torch.manual_seed(seed);
random_split(TensorDataset(x, y), [1 - f, f], generator=torch.Generator().manual_seed(seed));
sklearn's StandardScaler fitted on the training rows (float64, cast to float32 as its
transform does) standardizes both splits;
nn.Sequential(Linear(features, 16), ReLU(), Linear(16, classes)), Adam(lr=0.01),
cross-entropy, DataLoader(batch_size=16, shuffle=True) on the default generator. The same seed
gives the same split, initial weights and batches as ctorch's, so the losses agree closely.
Exit status 1 when an epoch's losses differ by more than --tol relative or the accuracies
differ.
"""
import argparse
import csv
import os
import re
import subprocess
import sys

import numpy as np
import torch
from torch import nn
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset, random_split

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NA = {"", "NA", "N/A", "NaN", "nan", "-NaN", "-nan", "NULL", "null", "None", "n/a", "<NA>",
      "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "1.#IND", "1.#QNAN"}


def load(path, label):
    """(features float32 (rows, F), labels int64 (rows,), class names or None)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if r]
    li = header.index(label)
    feats = np.array([[float("nan") if v.strip() in NA else float(v)
                       for k, v in enumerate(r) if k != li] for r in body], dtype=np.float32)
    raw = [r[li].strip() for r in body]
    if all(re.fullmatch(r"[+-]?\d+", v) for v in raw):
        labels, names = np.array([int(v) for v in raw], dtype=np.int64), None
    else:
        names, labels = np.unique(np.array(raw, dtype=object).astype(str), return_inverse=True)
    keep = ~np.isnan(feats).any(axis=1)
    return torch.from_numpy(feats[keep]), torch.from_numpy(labels[keep].astype(np.int64)), names


def torch_run(args):
    """The example's training in PyTorch: (losses per epoch, test accuracy)."""
    x, y, names = load(args.data, args.label)
    classes = len(names) if names is not None else int(y.max()) + 1
    torch.manual_seed(args.seed)
    split_gen = torch.Generator().manual_seed(args.seed)
    parts = random_split(TensorDataset(x, y), [1 - args.test_fraction, args.test_fraction],
                         generator=split_gen)
    (train_x, train_y), (test_x, test_y) = [
        (x[torch.tensor(p.indices)], y[torch.tensor(p.indices)]) for p in parts]
    scaler = StandardScaler().fit(train_x.double().numpy())
    mean = torch.from_numpy(scaler.mean_).float()
    scale = torch.from_numpy(scaler.scale_).float()
    train_x, test_x = (train_x - mean) / scale, (test_x - mean) / scale
    model = nn.Sequential(nn.Linear(x.shape[1], 16), nn.ReLU(), nn.Linear(16, classes))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=16, shuffle=True)
    losses = []
    for _ in range(args.epochs):
        total, steps = 0.0, 0
        for bx, by in loader:
            loss = nn.functional.cross_entropy(model(bx), by)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
        losses.append(total / steps)
    with torch.no_grad():
        acc = (model(test_x).argmax(1) == test_y).double().mean().item()
    return losses, acc


def ctorch_run(args):
    """The example's printed losses per epoch and test accuracy."""
    out = subprocess.run([args.bin, "--data", args.data, "--label", args.label, "--epochs",
                          str(args.epochs), "--seed", str(args.seed), "--test-fraction",
                          str(args.test_fraction)], check=True, capture_output=True,
                         text=True).stdout
    losses = [float(v) for v in re.findall(r"^epoch \d+/\d+  train loss (\S+)$", out, re.M)]
    last = out.strip().splitlines()[-1]
    return losses, float(re.fullmatch(r"test accuracy: (\S+)", last).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "csv_classifier"))
    p.add_argument("--data", default=os.path.join(ROOT, "data", "iris.csv"))
    p.add_argument("--label", default="species")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--test-fraction", type=float, default=0.2)
    p.add_argument("--tol", type=float, default=1e-3)
    args = p.parse_args()
    torch.set_num_threads(1)
    t_losses, t_acc = torch_run(args)
    c_losses, c_acc = ctorch_run(args)
    worst = 0.0
    print("epoch  ctorch loss  PyTorch loss  rel. diff")
    for e, (c, t) in enumerate(zip(c_losses, t_losses), 1):
        rel = abs(c - t) / max(abs(t), 1e-12)
        worst = max(worst, rel)
        print(f"{e:5d}  {c:11.6f}  {t:12.6f}  {rel:9.2e}")
    print(f"test accuracy: ctorch {c_acc:.4f}, PyTorch {t_acc:.4f}")
    ok = len(c_losses) == len(t_losses) and worst <= args.tol and abs(c_acc - t_acc) < 5e-5
    print(f"cross-check-csv: worst loss difference {worst:.2e} relative (tol {args.tol:g}): "
          + ("ok" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
