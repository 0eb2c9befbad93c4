#!/usr/bin/env python3
"""PyTorch side of `make bench`'s GPT part: examples/gpt.c's training step and its generation
with a KV cache.

usage: tools/bench_torch_gpt.py --threads N [--data FILE] [--steps 30] [--generate 500]
                                [--seed 1337] [--amp bf16]
The same model (tools/cross_check_gpt.py's GPT: 4 layers, 4 heads, width 128, context 128),
batch 16, AdamW + LambdaLR + clip_grad_norm_(1.0) as the example; prints "torch_step_ms
<median over --steps steps>", then "torch_tokens_per_s <rate>" for --generate characters
sampled after a newline with the example's KV-cache loop (top-k 0, temperature 1) under
no_grad. --amp bf16 trains under torch.autocast("cpu", torch.bfloat16) (the forward and
the loss), as the example's --amp bf16. PyTorch is configured as tools/bench_torch.py is (../shared/BENCH.md).
"""
import argparse
import time

import torch

from cross_check_gpt import GPT, encode, generate, make_optimizer, read_text, train_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--generate", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--amp", choices=("bf16",), default=None)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)
    vocab, data = encode(read_text(a.data))
    train = data[:len(data) * 9 // 10]
    torch.manual_seed(a.seed)
    model = GPT(len(vocab), 128, 4, 4, 128)
    model.nanogpt_init()
    opt, sched = make_optimizer(model)
    torch.manual_seed(a.seed)
    model.train()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        train_step(model, opt, sched, train, 16, 128,
                   amp=torch.bfloat16 if a.amp else None).item()
        times.append(time.perf_counter() - t0)
    print("torch_step_ms %.3f" % (1e3 * sorted(times)[len(times) // 2]), flush=True)
    if a.generate:
        t0 = time.perf_counter()
        generate(model, [vocab.index(ord("\n"))], a.generate, 1.0, 0)
        print("torch_tokens_per_s %.1f" % (a.generate / (time.perf_counter() - t0)), flush=True)


if __name__ == "__main__":
    main()
