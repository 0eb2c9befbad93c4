#!/usr/bin/env python3
"""Trains examples/gpt.c's model in ctorch and in PyTorch from the same initial weights on the
same batches and prints both loss curves, then checks that both sample the same characters
from the same checkpoint and seed.

usage: tools/cross_check_gpt.py [--build DIR] [--data FILE] [--steps 20] [--seed 1337]
                                [--dtype float32|float64] [--tol 1e-4] [--generate 200]
                                [--top-k 10] [--temperature 0.8] [--dropout 0] [--threads 1]
                                [--checkpoint FILE]
Training: the example runs --steps steps (its defaults otherwise: 4 layers, 4 heads, width
128, context 128, batch 16) with --save-init and --log-steps; PyTorch builds the same modules
(tools' GPT below, nanoGPT's layout and names), loads the initial weights from the
safetensors file, seeds its default generator with --seed as the example does once its model
is built, and runs the same loop: offsets torch.randint(len - T, (B,)), cross_entropy, AdamW
(betas 0.9, 0.99; weight decay 0.1 on the 2-D weights in group 0, none in group 1), the
LambdaLR warmup + cosine factor, clip_grad_norm_(1.0). The max relative difference of the
losses over the steps is printed; exit status 1 above --tol.
Generation: the example trains --steps steps and saves a checkpoint (or --checkpoint FILE:
one saved by a longer run); `gpt --generate N
--checkpoint F --seed S` and PyTorch (the checkpoint's weights and vocabulary, the same
KV-cache loop and sampling code: logits / temperature, topk, softmax, multinomial) must give
the same characters. Exit status 1 when they differ.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import torch
from safetensors import safe_open
from safetensors.torch import load_file
from torch import nn
from torch.nn import functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORTUNES = "/usr/share/games/fortunes"


# ---- model (examples/gpt.c's) ----------------------------------------------------------------
class KVCache:
    """torchtune.modules.KVCache's update/reset/size, as ct_kv_cache."""

    def __init__(self, batch_size, max_seq_len, num_kv_heads, head_dim, dtype):
        shape = (batch_size, num_kv_heads, max_seq_len, head_dim)
        self.k = torch.zeros(shape, dtype=dtype)
        self.v = torch.zeros(shape, dtype=dtype)
        self.size = 0

    def update(self, k_val, v_val):
        s = k_val.shape[2]
        assert self.size + s <= self.k.shape[2]
        self.k[:, :, self.size:self.size + s] = k_val
        self.v[:, :, self.size:self.size + s] = v_val
        self.size += s
        return self.k[:, :, :self.size], self.v[:, :, :self.size]

    def reset(self):
        self.k.zero_()
        self.v.zero_()
        self.size = 0


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads, dropout):
        super().__init__()
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.heads, self.width, self.dropout = heads, width, dropout

    def forward(self, x, cache=None):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(self.width, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        causal = cache is None or cache.size == 0
        if cache is not None:
            k, v = cache.update(k, v)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).reshape(b, t, c)
        return F.dropout(self.c_proj(y), self.dropout, self.training) if self.dropout else \
            self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, width, dropout):
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.c_proj = nn.Linear(4 * width, width)
        self.dropout = dropout

    def forward(self, x):
        y = self.c_proj(F.gelu(self.c_fc(x)))
        return F.dropout(y, self.dropout, self.training) if self.dropout else y


class Block(nn.Module):
    def __init__(self, width, heads, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, dropout)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = MLP(width, dropout)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Token + position embeddings, pre-LayerNorm blocks, ln_f, logits through wte (tied)."""

    def __init__(self, vocab, block, layers, heads, width, dropout=0.0):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, width), wpe=nn.Embedding(block, width),
            h=nn.ModuleList([Block(width, heads, dropout) for _ in range(layers)]),
            ln_f=nn.LayerNorm(width)))
        self.block, self.layers, self.heads, self.width = block, layers, heads, width
        self.dropout = dropout

    def nanogpt_init(self):
        """examples/gpt.c's gpt_init, in named_parameters order."""
        with torch.no_grad():
            for name, p in self.named_parameters():
                if "ln_" in name:
                    continue
                if name.endswith(".bias"):
                    nn.init.zeros_(p)
                elif name.endswith("c_proj.weight"):
                    nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2.0 * self.layers))
                else:
                    nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx, pos0=0, caches=None):
        tr = self.transformer
        pos = torch.arange(pos0, pos0 + idx.shape[1], dtype=torch.int64)
        x = tr.wte(idx) + tr.wpe(pos)
        if self.dropout:
            x = F.dropout(x, self.dropout, self.training)
        for i, blk in enumerate(tr.h):
            x = blk(x, caches[i] if caches else None)
        return F.linear(tr.ln_f(x), tr.wte.weight)


# ---- training (the example's loop) -----------------------------------------------------------
def read_text(path):
    if path:
        with open(path, "rb") as f:
            return f.read()
    if os.path.isdir(FORTUNES):
        names = sorted(n for n in os.listdir(FORTUNES) if "." not in n)
        paths = [os.path.join(FORTUNES, n) for n in names]
        paths = [p for p in paths if os.path.isfile(p) and not os.path.islink(p)]
        if paths:
            return b"".join(open(p, "rb").read() for p in paths)
    with open(os.path.join(ROOT, "data", "tiny.txt"), "rb") as f:
        return f.read()


def encode(text):
    chars = sorted(set(text))
    ids = {c: i for i, c in enumerate(chars)}
    return bytes(chars), torch.tensor([ids[c] for c in text], dtype=torch.int64)


def lr_factor(warmup, steps):
    """The example's lr_factor (nanoGPT's get_lr / lr), same double arithmetic."""
    def f(e):
        if e < warmup:
            return (e + 1) / (warmup + 1)
        span = float(steps - warmup if steps - warmup > 0 else 1)
        ratio = (e - warmup) / span
        coeff = 0.5 * (1.0 + math.cos(3.141592653589793 * (ratio if ratio < 1 else 1.0)))
        return 0.1 + coeff * (1.0 - 0.1)
    return f


def make_optimizer(model, lr=1e-3, weight_decay=0.1, warmup=100, steps=2000):
    params = list(model.parameters())
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=lr,
                            betas=(0.9, 0.99))
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_factor(warmup, steps))


def batch(data, b, t):
    off = torch.randint(0, len(data) - t, (b,))
    x = torch.stack([data[i:i + t] for i in off.tolist()])
    y = torch.stack([data[i + 1:i + 1 + t] for i in off.tolist()])
    return x, y


def train_step(model, opt, sched, data, b, t, clip=1.0, amp=None):
    """One step; amp (a dtype) runs the forward and the loss under torch.autocast("cpu", amp),
    as the example's --amp."""
    x, y = batch(data, b, t)
    with torch.autocast("cpu", amp or torch.bfloat16, enabled=amp is not None):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    sched.step()
    return loss


# ---- sampling (the example's generate) -------------------------------------------------------
def sample_token(logits, temperature, top_k):
    scaled = logits / temperature
    values, indices = scaled, None
    if 0 < top_k < logits.shape[0]:
        values, indices = torch.topk(scaled, top_k)
    j = torch.multinomial(torch.softmax(values, -1), 1).item()
    return indices[j].item() if indices is not None else j


@torch.no_grad()
def generate(model, prompt_ids, n, temperature, top_k):
    """n tokens after prompt_ids with a KV cache per layer; a full cache restarts from the
    last block // 2 tokens (the example's loop)."""
    model.eval()
    dt = model.transformer.wte.weight.dtype
    caches = [KVCache(1, model.block, model.heads, model.width // model.heads, dt)
              for _ in range(model.layers)]
    seq = list(prompt_ids)
    start, pos0 = max(len(seq) - model.block, 0), 0
    for _ in range(n):
        idx = torch.tensor([seq[start:]], dtype=torch.int64)
        logits = model(idx, pos0, caches)
        seq.append(sample_token(logits[0, -1], temperature, top_k))
        if caches[0].size == model.block:
            for c in caches:
                c.reset()
            start, pos0 = len(seq) - model.block // 2, 0
        else:
            start, pos0 = len(seq) - 1, caches[0].size
    return seq[len(prompt_ids):]


def load_checkpoint(path):
    """(model, vocab bytes) from an examples/gpt.c checkpoint."""
    with safe_open(path, "pt") as f:
        meta = f.metadata()
    tensors = load_file(path)
    vocab = bytes(tensors["vocab"].tolist())
    model = GPT(len(vocab), int(meta["config.block"]), int(meta["config.layers"]),
                int(meta["config.heads"]), int(meta["config.width"]))
    model.load_state_dict({k[len("model."):]: v for k, v in tensors.items()
                           if k.startswith("model.")})
    return model.to(tensors["model.transformer.wte.weight"].dtype), vocab


# ---- the checks ------------------------------------------------------------------------------
def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def example_args(a):
    args = ["--steps", str(a.steps), "--seed", str(a.seed), "--threads", str(a.threads),
            "--eval-every", "0", "--eval-batches", "1", "--sample", "0",
            "--dropout", repr(a.dropout)]
    return args + (["--data", a.data] if a.data else [])


def check_training(a, exe, tmp):
    init = os.path.join(tmp, "init.safetensors")
    out = run([exe] + example_args(a) + ["--save-init", init, "--log-steps", str(a.steps),
                                         "--dtype", a.dtype])
    ct = [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", out, re.M)]
    _, data = encode(read_text(a.data))
    train = data[:len(data) * 9 // 10]
    vocab_size = int(data.max()) + 1
    dtype = torch.float64 if a.dtype == "float64" else torch.float32
    model = GPT(vocab_size, 128, 4, 4, 128, a.dropout)
    model.load_state_dict(load_file(init))
    model.to(dtype)
    opt, sched = make_optimizer(model, steps=a.steps)
    torch.manual_seed(a.seed)
    model.train()
    th = [train_step(model, opt, sched, train, 16, 128).item() for _ in range(a.steps)]
    worst = 0.0
    print("%5s %14s %14s %10s" % ("step", "ctorch", "torch", "rel diff"))
    for i, (c, t) in enumerate(zip(ct, th)):
        rel = abs(c - t) / abs(t)
        worst = max(worst, rel)
        print("%5d %14.9f %14.9f %10.2e" % (i + 1, c, t, rel))
    ok = len(ct) == a.steps and worst <= a.tol
    print("training (%s): max relative difference over %d steps %.2e (tolerance %g): %s" %
          (a.dtype, a.steps, worst, a.tol, "OK" if ok else "FAILED"), flush=True)
    return ok


def check_generation(a, exe, tmp):
    ckpt = a.checkpoint or os.path.join(tmp, "ckpt.safetensors")
    if not a.checkpoint:
        run([exe] + example_args(a) + ["--save", ckpt, "--dtype", a.dtype])
    gen = subprocess.run([exe, "--generate", str(a.generate), "--checkpoint", ckpt, "--seed",
                          str(a.seed), "--top-k", str(a.top_k), "--temperature",
                          repr(a.temperature), "--threads", str(a.threads)],
                         capture_output=True, check=True).stdout
    model, vocab = load_checkpoint(ckpt)
    torch.manual_seed(a.seed)
    ids = generate(model, [vocab.index(ord("\n"))], a.generate, a.temperature, a.top_k)
    th = b"\n" + bytes(vocab[i] for i in ids) + b"\n"
    same = gen == th
    print("generation (%d characters, seed %d, top-k %d, temperature %g): %s" %
          (a.generate, a.seed, a.top_k, a.temperature, "same characters" if same else "DIFFER"))
    print("ctorch: %r" % gen[:100])
    print("torch:  %r" % th[:100])
    return same


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default=None)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--generate", type=int, default=200)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint", default=None,
                    help="check generation from this checkpoint of the example (e.g. a trained "
                         "model) instead of one trained for --steps steps")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    exe = os.path.join(a.build, "gpt")
    with tempfile.TemporaryDirectory() as tmp:
        ok = check_training(a, exe, tmp)
        ok = check_generation(a, exe, tmp) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
