#!/usr/bin/env python3
"""The dispatcher's cost (issue 17, point 4): ctorch before and after, run interleaved.

Builds, from the generated ctorch.h of a git commit (default: the commit before the dispatcher,
e70cc9d~1) and from the working tree's ctorch.h:
  - a small C benchmark (written below): a 64-element float32 add and a (64, 10) softmax, each
    ns per call (the minimum over blocks of calls, each call in its own scope); the "after" build
    also times the add with a no-op dispatch hook pushed (the entry's slow path) to show that
    with hooks and the profiler off the entry costs one predictable branch;
  - examples/fashion_mnist.c of each side (that side's own file), run with --steps N at 1 and 2
    threads: ms per training step, from the samples/s the example prints for its epoch.
It runs the two sides alternately (A B A B ...) for --rounds rounds and prints per case the
minimum (or --stat median) per side and the ratio after/before.

Usage: tools/bench_dispatch.py [--before COMMIT] [--rounds N] [--steps N] [--stat min|median]
The numbers are only meaningful on a quiet machine.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/datasets/fashion-mnist"

MICRO = r"""
#define _POSIX_C_SOURCE 200809L
#define CTORCH_IMPLEMENTATION
#include "ctorch.h"
#include <stdio.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef ct_tensor *(*case_fn)(const ct_tensor *x);
static ct_tensor *add(const ct_tensor *x) { return ct_add(x, x); }
static ct_tensor *softmax(const ct_tensor *x) { return ct_softmax(x, 1); }

/* ns per call: the minimum over blocks of n calls */
static double per_call(case_fn f, const ct_tensor *x, int n, int blocks)
{
    double best = 1e30;
    for (int b = 0; b < blocks; b++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++) {
            ct_scope_begin();
            f(x);
            ct_scope_end();
        }
        double t = (now_ns() - t0) / n;
        best = t < best ? t : best;
    }
    return best;
}

#ifdef BENCH_HOOKS
static void noop_after(void *user, ct_op_call *c)
{
    (void)user;
    (void)c;
}
#endif

int main(void)
{
    ct_set_num_threads(1);
    ct_manual_seed(0);
    const int64_t s64[1] = {64}, s6410[2] = {64, 10};
    ct_tensor *a = ct_rand(s64, 1, CT_FLOAT32, NULL), *x = ct_rand(s6410, 2, CT_FLOAT32, NULL);
    per_call(add, a, 20000, 2); /* warm up */
    printf("add64 %.2f\n", per_call(add, a, 20000, 15));
    printf("softmax64x10 %.2f\n", per_call(softmax, x, 20000, 15));
#ifdef BENCH_HOOKS
    ct_dispatch_hook h = {NULL, noop_after, NULL};
    ct_dispatch_hook_push(&h);
    printf("add64_noop_hook %.2f\n", per_call(add, a, 20000, 15));
    ct_dispatch_hook_pop();
#endif
    ct_free(a);
    ct_free(x);
    return ct_error() ? 1 : 0;
}
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def build_side(name, commit, build, cc):
    """Writes the side's ctorch.h and example, builds the micro benchmark and the example."""
    d = os.path.join(build, name)
    os.makedirs(d, exist_ok=True)
    for path in ("ctorch.h", "examples/fashion_mnist.c"):
        text = (sh(["git", "-C", ROOT, "show", "%s:%s" % (commit, path)]) if commit
                else open(os.path.join(ROOT, path), encoding="utf-8").read())
        out = os.path.join(d, os.path.basename(path))
        with open(out, "w", encoding="utf-8") as f:
            f.write(text.replace('#include "../ctorch.h"', '#include "ctorch.h"'))
    with open(os.path.join(d, "micro.c"), "w", encoding="utf-8") as f:
        f.write(MICRO)
    hooks = "ct_dispatch_hook_push" in open(os.path.join(d, "ctorch.h"), encoding="utf-8").read()
    flags = ["-std=c11", "-O2", "-march=native", "-pthread", "-I", d]
    zlib = ["-DCTORCH_ZLIB"], ["-lz"]
    sh([cc] + flags + (["-DBENCH_HOOKS"] if hooks else []) +
       ["-o", os.path.join(d, "micro"), os.path.join(d, "micro.c"), "-lm"])
    sh([cc] + flags + zlib[0] + ["-o", os.path.join(d, "fashion_mnist"),
                                 os.path.join(d, "fashion_mnist.c"), "-lm"] + zlib[1])
    return d


def run_micro(d):
    return {k: float(v) for k, v in re.findall(r"(\S+) ([\d.]+)", sh([os.path.join(d, "micro")]))}


def run_example(d, threads, steps, timeout_s):
    """ms per step, or None (reported) when the run did not finish within timeout_s."""
    cmd = [os.path.join(d, "fashion_mnist"), "--data", DATA, "--epochs", "1", "--steps",
           str(steps), "--threads", str(threads), "--optimizer", "sgd"]
    try:
        out = sh(cmd, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        print("bench_dispatch: %s did not finish in %d s (hung?): run left out"
              % (" ".join(cmd), timeout_s), file=sys.stderr)
        return None
    m = re.search(r"\(([\d.]+) samples/s\)", out)
    if not m:
        sys.exit("bench_dispatch: no samples/s in the example's output:\n" + out)
    return 64.0 / float(m.group(1)) * 1e3  # ms per step of 64 samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default=None,
                    help="commit of the 'before' ctorch.h (default: e70cc9d~1)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=100, help="training steps per example run")
    ap.add_argument("--stat", choices=("min", "median"), default="min")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per example run")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "bench_dispatch"))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = ap.parse_args()
    before = args.before or sh(["git", "-C", ROOT, "log", "--format=%H", "-1",
                                "e70cc9d~1"]).strip()
    if not os.path.isdir(DATA):
        sys.exit("bench_dispatch: %s is missing (apt-get install dataset-fashion-mnist)" % DATA)
    sides = {"before": build_side("before", before, args.build, args.cc),
             "after": build_side("after", None, args.build, args.cc)}
    times = {}  # (case, side) -> [values]
    for r in range(args.rounds):
        for side, d in sides.items():
            for case, v in run_micro(d).items():
                times.setdefault((case, side), []).append(v)
            for threads in (1, 2):
                case = "quickstart step, %d thread%s" % (threads, "s" if threads > 1 else "")
                ms = run_example(d, threads, args.steps, args.timeout)
                times.setdefault((case, side), []).extend([ms] if ms is not None else [])
        print("round %d/%d done" % (r + 1, args.rounds), file=sys.stderr)
    stat = min if args.stat == "min" else statistics.median
    units = {"add64": "ns", "softmax64x10": "ns", "add64_noop_hook": "ns"}
    print("before: %s  after: working tree  (%s of %d rounds, interleaved)"
          % (before[:10], args.stat, args.rounds))
    print("%-28s %12s %12s %8s" % ("case", "before", "after", "ratio"))
    cases = []
    for case, _ in times:
        if case not in cases:
            cases.append(case)
    for case in cases:
        b, a = times.get((case, "before")), times.get((case, "after"))
        unit = units.get(case, "ms")
        fb = "%.2f %s" % (stat(b), unit) if b else "-"
        fa = "%.2f %s" % (stat(a), unit) if a else "-"
        ratio = "%.3f" % (stat(a) / stat(b)) if a and b else "-"
        print("%-28s %12s %12s %8s" % (case, fb, fa, ratio))
    hook = times.get(("add64_noop_hook", "after"))
    if hook:
        print("a no-op hook pushed costs %.2f ns per op over the entry's fast path"
              % (stat(hook) - stat(times[("add64", "after")])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
