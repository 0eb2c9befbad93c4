#!/usr/bin/env python3
"""Float32 pointwise ops, ctorch beside PyTorch (make bench-pointwise).

Runs build/bench_pointwise (bench/bench_pointwise.c: every float32 unary and binary pointwise op
on 2^20 contiguous elements, uniform in the op's domain, the minimum over --reps calls) at 1 and
2 threads, times PyTorch on the same ops, sizes and domains in the same run, and prints ms per
call and the ratio ctorch / PyTorch (below 1: ctorch is faster).

Usage: tools/bench_pointwise.py [--build DIR] [--reps N] [--threads 1,2] [--filter SUBSTRING]
Timings are only meaningful on a quiet machine.
"""
import argparse
import os
import subprocess
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALIASES = {"logit": lambda x: torch.logit(x), "nan_to_num": lambda x: torch.nan_to_num(x)}


def torch_fn(name):
    return ALIASES.get(name) or getattr(torch, name)


def torch_ms(name, arity, lo, hi, reps):
    n = 1 << 20
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(n, generator=gen) * (hi - lo) + lo
    b = torch.rand(n, generator=gen) * (hi - lo) + lo
    fn = torch_fn(name)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(a) if arity == 1 else fn(a, b)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    exe = os.path.join(args.build, "bench_pointwise")
    print(f"{'op':<14}{'thr':>4}{'ctorch ms':>11}{'torch ms':>10}{'ratio':>8}")
    ratios = []
    for thr in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(thr)
        out = subprocess.run([exe, str(thr), str(args.reps), args.filter], check=True,
                             capture_output=True, text=True).stdout
        for line in out.split("\n"):
            if not line:
                continue
            name, arity, lo, hi, ms = line.split()
            tms = torch_ms(name, int(arity), float(lo), float(hi), args.reps)
            ratio = float(ms) / tms
            ratios.append(ratio)
            flag = "  <-- slower than 1.5x" if ratio > 1.5 else ""
            print(f"{name:<14}{thr:>4}{float(ms):>11.3f}{tms:>10.3f}{ratio:>8.2f}{flag}")
    print(f"{len(ratios)} rows: {sum(r <= 1 for r in ratios)} at most PyTorch's time, "
          f"{sum(r > 1.5 for r in ratios)} over 1.5x")


if __name__ == "__main__":
    main()
