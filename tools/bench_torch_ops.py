#!/usr/bin/env python3
"""PyTorch side of `make bench`'s op benchmarks: the workloads of bench/bench_ops.c.

usage: tools/bench_torch_ops.py --threads N [--min-run-time 0.3] [--filter SUBSTRING]
Prints `RESULT <workload> <threads> <seconds per call>` (the minimum over
torch.utils.benchmark.Timer.blocked_autorange's blocks) per workload, under the names
bench/bench_ops.c uses, then the torch.utils.benchmark.Compare table.
Run one process per thread count: PyTorch is configured at its best as ../shared/BENCH.md says,
with torch.set_num_threads(N) and flush-to-zero here, and OPENBLAS_NUM_THREADS /
OMP_NUM_THREADS / MKL_NUM_THREADS = N and OMP_WAIT_POLICY=PASSIVE at N > 1 set by the caller
before Python starts (see tools/bench.py).
"""
import argparse

import torch
import torch.nn.functional as F
from torch.utils import benchmark


def workloads():
    """(name, label, sub_label, stmt, globals) in bench_ops.c's order; inputs preallocated."""
    out = []
    for n in (64, 128, 256, 512, 1024, 2048):
        a, b = torch.randn(n, n), torch.randn(n, n)
        out.append(("sgemm_%d" % n, "sgemm (N,N)@(N,N)", str(n), "torch.mm(a, b)",
                    {"a": a, "b": b}))
    for n in (1024, 2048):
        for pre, dt, lab in (("bgemm", torch.bfloat16, "bgemm (N,N)@(N,N) bfloat16"),
                             ("hgemm", torch.float16, "hgemm (N,N)@(N,N) float16")):
            a, b = torch.randn(n, n).to(dt), torch.randn(n, n).to(dt)
            out.append(("%s_%d" % (pre, n), lab, str(n), "torch.mm(a, b)", {"a": a, "b": b}))
    lin = ((64, 784, 512), (64, 512, 512), (64, 512, 10))
    for bn, i, o in lin:
        x, w = torch.randn(bn, i), torch.randn(o, i)
        out.append(("linear_%dx%d_%d" % (bn, i, o), "quickstart MLP products",
                    "fwd x(%d,%d)@W(%d,%d)^T" % (bn, i, o, i), "F.linear(x, w)",
                    {"x": x, "w": w, "F": F}))
    for bn, i, o in lin:
        g, x = torch.randn(bn, o), torch.randn(bn, i)
        out.append(("mm_gTx_%dx%d_%dx%d" % (o, bn, bn, i), "quickstart MLP products",
                    "dW g^T(%d,%d)@x(%d,%d)" % (o, bn, bn, i), "torch.mm(g.t(), x)",
                    {"g": g, "x": x}))
    for bn, o, i in ((64, 512, 784), (64, 10, 512)):
        g, w = torch.randn(bn, o), torch.randn(o, i)
        out.append(("mm_gW_%dx%d_%dx%d" % (bn, o, o, i), "quickstart MLP products",
                    "dx g(%d,%d)@W(%d,%d)" % (bn, o, o, i), "torch.mm(g, w)",
                    {"g": g, "w": w}))
    for m in (1, 8, 32):
        x, w = torch.randn(m, 384), torch.randn(1536, 384)
        out.append(("linear_m%d_k384_n1536" % m, "few-row Linear", "x(%d,384)@W(1536,384)^T" % m,
                    "F.linear(x, w)", {"x": x, "w": w, "F": F}))
    n = 16 * 1024 * 1024
    a, b = torch.randn(n), torch.randn(n)
    for name, sub, stmt in (("add_16M", "c = a + b", "c = a + b"),
                            ("mul_16M", "c = a * b", "c = a * b"),
                            ("relu_16M", "c = relu(a)", "c = torch.relu(a)")):
        out.append((name, "pointwise, 16M float32", sub, stmt, {"a": a, "b": b}))
    half = "pointwise, 16M float16/bfloat16"
    out.append(("bf16_add_16M", half, "c = a + b (bfloat16)", "c = a + b",
                {"a": a.bfloat16(), "b": b.bfloat16()}))
    out.append(("f16_to_f32_16M", half, "a.float() (float16)", "c = a.float()",
                {"a": a.half()}))
    for op in ("softmax", "log_softmax"):
        for r, c in ((4096, 1024), (64, 10), (32768, 10)):
            out.append(("%s_%dx%d" % (op, r, c), "softmax / cross-entropy",
                        "%s (%d,%d) dim -1" % (op, r, c), "torch.%s(x, -1)" % op,
                        {"x": torch.randn(r, c)}))
    for r, c in ((4096, 1000), (64, 10), (32768, 10)):
        x = torch.randn(r, c, requires_grad=True)
        y = torch.randint(0, c, (r,))
        out.append(("xent_fb_%dx%d" % (r, c), "softmax / cross-entropy",
                    "cross_entropy fwd+bwd (%d,%d)" % (r, c),
                    "x.grad = None; F.cross_entropy(x, y).backward()",
                    {"x": x, "y": y, "F": F}))
    x = torch.randn(4096, 1024)
    out.append(("sort_4096x1024", "sort / topk", "sort (4096,1024) dim -1", "torch.sort(x, -1)",
                {"x": x, "torch": torch}))
    out.append(("topk_4096x1024_k16", "sort / topk", "topk k=16 (4096,1024) dim -1",
                "torch.topk(x, 16, -1)", {"x": x, "torch": torch}))
    out.append(("cumsum_4096x1024", "scans", "cumsum (4096,1024) dim -1", "torch.cumsum(x, -1)",
                {"x": torch.randn(4096, 1024)}))
    x, z = torch.randn(4096, 4096), torch.zeros(4096, 4096)
    idx = torch.randint(0, 4096, (4096, 4096))
    lab = "gather / scatter_add, 16M float32"
    out.append(("gather_16M", lab, "gather(x (4096,4096), 1, idx int64)",
                "torch.gather(x, 1, idx)", {"x": x, "idx": idx, "torch": torch}))
    out.append(("scatter_add_16M", lab, "scatter_add(z, 1, idx, src)",
                "torch.scatter_add(z, 1, idx, x)", {"x": x, "z": z, "idx": idx,
                                                      "torch": torch}))
    lab = "conv2d 3x3 pad 1, 32->32 channels, 28x28"
    x = torch.randn(64, 32, 28, 28, requires_grad=True)
    w = torch.randn(32, 32, 3, 3, requires_grad=True)
    bias = torch.randn(32, requires_grad=True)
    conv = {"x": x, "w": w, "b": bias, "g": torch.randn(64, 32, 28, 28), "F": F}
    out.append(("conv2d_fb_64x32x28x28", lab, "conv2d fwd+bwd (64,32,28,28)",
                "x.grad = w.grad = b.grad = None; F.conv2d(x, w, b, padding=1).backward(g)",
                conv))
    out.append(("conv2d_f_1x32x28x28", lab, "conv2d fwd (1,32,28,28)",
                "F.conv2d(x1, w, b, padding=1)",
                {"x1": torch.randn(1, 32, 28, 28), "w": w, "b": bias, "F": F}))
    out.append(("mm_32x288_288x50176", lab, "sgemm (32,288)@(288,50176)", "torch.mm(a, b)",
                {"a": torch.randn(32, 288), "b": torch.randn(288, 64 * 784), "torch": torch}))
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    out.append(("solve_256", "linalg decompositions", "solve A(256,256) X = B(256,256)",
                "torch.linalg.solve(a, b)", {"a": a, "b": b, "torch": torch}))
    out.append(("svd_256", "linalg decompositions", "svd A(256,256) full_matrices",
                "torch.linalg.svd(a)", {"a": a, "torch": torch}))
    x = torch.randn(64, 32, 28, 28, requires_grad=True)
    for name, sub, stmt, go in (
            ("max_pool2d_2x2_fb_64x32x28x28", "max_pool2d 2x2", "F.max_pool2d(x, 2)", 14),
            ("adaptive_avg_pool2d_7x7_fb_64x32x28x28", "adaptive_avg_pool2d (7,7)",
             "F.adaptive_avg_pool2d(x, 7)", 7)):
        out.append((name, "pooling fwd+bwd (64,32,28,28)", sub,
                    "x.grad = None; %s.backward(g)" % stmt,
                    {"x": x, "g": torch.randn(64, 32, go, go), "F": F}))
    lab = "normalization / activations"
    for name, sub, shape, call in (
            ("batch_norm_fb_64x32x28x28", "batch_norm train fwd+bwd (64,32,28,28)",
             (64, 32, 28, 28), "F.batch_norm(x, rm, rv, w, b, True)"),
            ("layer_norm_fb_4096x1024", "layer_norm fwd+bwd (4096,1024)", (4096, 1024),
             "F.layer_norm(x, (1024,), w, b)")):
        c = shape[1] if len(shape) == 4 else shape[-1]
        glob = {"x": torch.randn(shape, requires_grad=True), "g": torch.randn(shape),
                "w": torch.ones(c, requires_grad=True), "b": torch.zeros(c, requires_grad=True),
                "rm": torch.zeros(c), "rv": torch.ones(c), "F": F}
        out.append((name, lab, sub, "x.grad = w.grad = b.grad = None; %s.backward(g)" % call,
                    glob))
    out.append(("gelu_16M", lab, "gelu 16M", "F.gelu(a)", {"a": torch.randn(16 * 1024 * 1024),
                                                          "F": F}))
    for b, t, v, d in ((64, 256, 65, 384), (16, 128, 50257, 128)):
        glob = {"w": torch.randn(v, d, requires_grad=True), "idx": torch.randint(0, v, (b, t)),
                "g": torch.randn(b, t, d), "F": F}
        out.append(("embedding_fb_%dx%d_%dx%d" % (b, t, v, d), "embedding",
                    "embedding fwd+bwd idx (%d,%d) weight (%d,%d)" % (b, t, v, d),
                    "w.grad = None; F.embedding(idx, w).backward(g)", glob))
    for shape in ((16, 4, 128, 32), (1, 4, 1024, 64)):
        dims = "x".join(str(d) for d in shape)
        call = "F.scaled_dot_product_attention(q, k, v, is_causal=True)"
        for fb in (True, False):
            glob = {"q": torch.randn(shape, requires_grad=fb),
                    "k": torch.randn(shape, requires_grad=fb),
                    "v": torch.randn(shape, requires_grad=fb), "g": torch.randn(shape), "F": F}
            stmt = "q.grad = k.grad = v.grad = None; %s.backward(g)" % call if fb else call
            out.append(("sdpa_%s_%s" % ("fb" if fb else "f", dims), "scaled dot product attention",
                        "sdpa causal %s (%s)" % ("fwd+bwd" if fb else "fwd", ",".join(
                            str(d) for d in shape)), stmt, glob))
    layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    glob = {"m": layer, "x": torch.randn(16, 128, 128, requires_grad=True),
            "g": torch.randn(16, 128, 128)}
    out.append(("encoder_layer_fb_16x128x128", "transformer",
                "TransformerEncoderLayer(128, 4, 512) fwd+bwd (16,128,128)",
                "x.grad = None; m.zero_grad(); m(x).backward(g)", glob))
    out += optim_workloads()
    return out


def optim_workloads():
    """One step over a (1024, 1024) parameter whose .grad is set once: PyTorch's default
    implementation (optim_<name>_1M) and its for-loop one, foreach=False (..._forloop)."""
    out = []
    kinds = (("sgd", torch.optim.SGD, {"lr": 1e-3, "momentum": 0.9}),
             ("adam", torch.optim.Adam, {}), ("rmsprop", torch.optim.RMSprop, {}),
             ("nadam", torch.optim.NAdam, {}))
    for name, cls, kw in kinds:
        for suffix, extra in (("", {}), ("_forloop", {"foreach": False})):
            p = torch.randn(1024, 1024, requires_grad=True)
            p.grad = torch.randn(1024, 1024)
            opt = cls([p], **kw, **extra)
            opt.step()
            out.append(("optim_%s_1M%s" % (name, suffix), "optimizer step, 1M float32 parameters",
                        name + (" foreach=False" if suffix else ""), "opt.step()", {"opt": opt}))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-run-time", type=float, default=0.3)
    ap.add_argument("--filter", default=None)
    ap.add_argument("--no-compare", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(0)
    print("torch", torch.__version__, "threads", torch.get_num_threads(), flush=True)
    results = []
    for name, label, sub, stmt, glob in workloads():
        if a.filter and a.filter not in name:
            continue
        t = benchmark.Timer(stmt=stmt, globals=glob, label=label, sub_label=sub,
                            description="torch", num_threads=a.threads)
        m = t.blocked_autorange(min_run_time=a.min_run_time)
        print("RESULT %s %d %.9e" % (name, a.threads, min(m.times)), flush=True)
        results.append(m)
    if results and not a.no_compare:
        c = benchmark.Compare(results)
        c.trim_significant_figures()
        c.print()


if __name__ == "__main__":
    main()
