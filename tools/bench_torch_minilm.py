#!/usr/bin/env python3
"""PyTorch side of `make bench`'s MiniLM part: examples/minilm_embed.c's --bench.

usage: tools/bench_torch_minilm.py [--model DIR] --threads N --batch B [--repeat R] [FILE]
The same work as `minilm_embed --batch B --bench R FILE`: every line of FILE (default
tools/minilm_sentences.txt) tokenized (BertTokenizerFast, truncation at 256 tokens, padding to
the batch's longest) and encoded by transformers' BertModel with the same weights, then mean
pooling over the attention mask and L2 normalization (sentence-transformers' Pooling and
Normalize), B sentences at a time in input order (the example's batches), each batch padded to
its longest, under torch.inference_mode. --sort batches them longest first, as
SentenceTransformer.encode does to reduce padding (slower on tools/minilm_sentences.txt: its
three 256-token sentences then pad a full batch; the example packs its batches, so it computes
no padding either way). One untimed pass first, then R
timed passes: prints "torch_sentences_per_s <rate>". PyTorch is configured as
tools/bench_torch.py is (../shared/BENCH.md): torch.set_num_threads, flush-to-zero.
"""
import argparse
import os
import time

import torch

from cross_check_minilm import ROOT, default_model, read_lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sort", action="store_true")
    ap.add_argument("file", nargs="?", default=os.path.join(ROOT, "tools", "minilm_sentences.txt"))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)
    from transformers import AutoModel, AutoTokenizer
    model_dir = a.model or default_model()
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    lines = read_lines(a.file)
    print("torch", torch.__version__, "threads", torch.get_num_threads(),
          "attention", model.config._attn_implementation)

    def one_pass():
        order = list(range(len(lines)))
        if a.sort:
            n = [len(ids) for ids in tok(lines, truncation=True, max_length=256)["input_ids"]]
            order.sort(key=lambda i: -n[i])
        for s in range(0, len(lines), a.batch):
            enc = tok([lines[i] for i in order[s:s + a.batch]], truncation=True, max_length=256,
                      padding=True, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
            torch.nn.functional.normalize(pooled, p=2, dim=1)

    with torch.inference_mode():
        one_pass()
        t0 = time.perf_counter()
        for _ in range(a.repeat):
            one_pass()
        dt = time.perf_counter() - t0
    print("torch_sentences_per_s %.2f" % (len(lines) * a.repeat / dt), flush=True)


if __name__ == "__main__":
    main()
