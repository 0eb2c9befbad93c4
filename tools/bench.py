#!/usr/bin/env python3
"""`make bench`: ctorch against PyTorch on the same machine, in the same run, as ratios.

Runs one training epoch of the Fashion-MNIST quickstart (examples/fashion_mnist.c against
tools/bench_torch.py: same model, data, batch size and learning rate) with SGD and Adam at 1
and 2 threads, each the best of --repeat runs, then the 5-epoch SGD accuracy of both. PyTorch
is configured at its best (../shared/BENCH.md): torch.set_num_threads, OPENBLAS_NUM_THREADS,
OMP_WAIT_POLICY=PASSIVE at 2 threads, flush-to-zero. ctorch gets only --threads.

usage: tools/bench.py [--data DIR] [--repeat N] [--skip-accuracy] [--skip-torch]
"""
import argparse
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "build", "fashion_mnist")
SYSTEM_DATA = "/usr/share/datasets/fashion-mnist"


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if p.returncode != 0:
        sys.exit("bench: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def ctorch_epochs(data, opt, threads, epochs=1):
    out = run([EXAMPLE, "--data", data, "--optimizer", opt, "--threads", str(threads),
               "--epochs", str(epochs)])
    times = [float(m) for m in re.findall(r"  ([0-9.]+) s \(", out)]
    acc = float(re.search(r"test accuracy: ([0-9.]+)", out).group(1))
    return times, acc


def torch_env(threads):
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    env["MKL_NUM_THREADS"] = str(threads)
    if threads > 1:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env


def torch_epochs(data, opt, threads, epochs=1):
    out = run([sys.executable, os.path.join(ROOT, "tools", "bench_torch.py"), "--data", data,
               "--optimizer", opt, "--threads", str(threads), "--epochs", str(epochs)],
              env=torch_env(threads))
    rows = re.findall(r"torch_epoch_s ([0-9.]+) ([0-9.]+)", out)
    return [float(r[0]) for r in rows], float(rows[-1][1])


def machine_report(skip_torch):
    try:
        lscpu = run(["lscpu"])
        model = re.search(r"Model name:\s*(.*)", lscpu).group(1)
        flags = re.search(r"Flags:\s*(.*)", lscpu).group(1).split()
        isa = [f for f in ("avx512f", "avx512_bf16", "amx_tile", "avx2", "fma", "f16c") if f in flags]
    except (SystemExit, AttributeError):
        model, isa = platform.processor(), []
    print("machine: %s, %d cores, %s" % (model, os.cpu_count(), " ".join(isa)))
    print("compiler: %s" % run(["cc", "--version"]).splitlines()[0])
    print("ctorch flags: -O2 -march=native -fopenmp (make's defaults)")
    if not skip_torch:
        out = run([sys.executable, "-c", "import torch; print('torch', torch.__version__); "
                   "print(torch.__config__.show())"])
        print(out.rstrip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("FASHION_MNIST_DIR", SYSTEM_DATA))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--skip-torch", action="store_true")
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        a.data = os.path.join(ROOT, "data", "fashion-mnist")
        print("note: full dataset not installed; timing the shipped subset")
    machine_report(a.skip_torch)
    print("data: %s" % a.data)
    print()
    print("%-34s %7s %11s %11s %7s" % ("one training epoch", "threads", "ctorch (s)", "torch (s)",
                                      "ratio"))
    for opt in ("sgd", "adam"):
        for threads in (1, 2):
            ct = min(min(ctorch_epochs(a.data, opt, threads)[0]) for _ in range(a.repeat))
            if a.skip_torch:
                print("%-34s %7d %11.3f %11s %7s" % ("quickstart MLP + " + opt.upper(), threads,
                                                    ct, "-", "-"))
                continue
            th = min(min(torch_epochs(a.data, opt, threads)[0]) for _ in range(a.repeat))
            print("%-34s %7d %11.3f %11.3f %7.2f" % ("quickstart MLP + " + opt.upper(), threads,
                                                    ct, th, ct / th), flush=True)
    if a.skip_accuracy:
        return
    print()
    print("test accuracy (same data, lr 1e-3, batch 64, 2 threads):")
    _, ct_acc = ctorch_epochs(a.data, "adam", 2, 1)
    line = "  Adam, 1 epoch:  ctorch %.4f" % ct_acc
    if not a.skip_torch:
        line += "  torch %.4f" % torch_epochs(a.data, "adam", 2, 1)[1]
    print(line, flush=True)
    _, ct_acc = ctorch_epochs(a.data, "sgd", 2, 5)
    line = "  SGD, 5 epochs:  ctorch %.4f" % ct_acc
    if not a.skip_torch:
        line += "  torch %.4f" % torch_epochs(a.data, "sgd", 2, 5)[1]
    print(line)


if __name__ == "__main__":
    main()
