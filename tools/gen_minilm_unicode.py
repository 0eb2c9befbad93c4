#!/usr/bin/env python3
"""tools/gen_minilm_unicode.py - prints the Unicode tables of examples/minilm_embed.c's
tokenizer (BERT's BasicTokenizer as HuggingFace's BertNormalizer + BertPreTokenizer run it),
from Python's unicodedata:

  minilm_punct        ranges of the P* categories (U+0080..U+FFFF; ASCII is tested apart)
  minilm_mark         ranges of category Mn (U+0080..U+FFFF), the marks accent stripping drops
  minilm_format       ranges of category Cf (every plane), removed as control characters
  minilm_lower_runs   runs of the BMP's single-character lowercase mappings:
                      {first, last, delta, step}
  minilm_latin_base   the ASCII letter that NFD + dropping Mn leaves of U+00C0..U+024F ('.':
  minilm_latin_x_base none or not ASCII), and of U+1E00..U+1EFF (Latin Extended Additional)
  minilm_base_pairs   {code point, base} for the other BMP decompositions to one base plus
                      marks (Greek, Cyrillic, kana with voicing marks, Indic nukta forms, ...)

Hangul syllables decompose algorithmically (no table). Not covered (left as they are, where
HuggingFace's tokenizer differs): the CJK compatibility ideographs U+F900..U+FAFF (singleton
decompositions), unassigned code points (HuggingFace removes them as Cn), and everything
outside the BMP (marks, punctuation, case, decompositions); characters whose properties changed
between Python's Unicode version and the older one of the tokenizers library's
tables (e.g. punctuation added since Unicode 8, such as U+2E43).
tools/cross_check_minilm.py counts the code points whose token differs from HuggingFace's.

Usage: python3 tools/gen_minilm_unicode.py  (paste the output between the markers
"BEGIN tables" and "END tables" of examples/minilm_embed.c)
"""
import unicodedata as ud


def ranges(pred, lo, hi):
    out = []
    for c in range(lo, hi):
        if 0xD800 <= c < 0xE000 or not pred(chr(c)):
            continue
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def emit(decl, items, fmt):
    lines, line = [decl + " = {"], "   "
    for it in items:
        s = " " + fmt(it) + ","
        if len(line) + len(s) > 100:
            lines.append(line)
            line = "   "
        line += s
    lines += [line, "};"]
    print("\n".join(lines))


def base(c):
    d = ud.normalize("NFD", chr(c))
    if d == chr(c) or any(ud.category(x) != "Mn" for x in d[1:]):
        return None
    return ord(d[0])


def lower_runs():
    runs = []
    for c in range(0x80, 0x10000):
        low = chr(c).lower()
        if len(low) != 1 or low == chr(c):
            continue
        d = ord(low) - c
        if runs:
            first, last, dd, step = runs[-1]
            if dd == d and ((step == 0 and c - last in (1, 2)) or (step and c - last == step)):
                runs[-1] = [first, c, d, c - last]
                continue
        runs.append([c, c, d, 0])
    return runs


def main():
    print("/* BEGIN tables (tools/gen_minilm_unicode.py, Unicode %s) */" % ud.unidata_version)
    pair = lambda r: "0x%04X, 0x%04X" % (r[0], r[1])
    emit("static const uint32_t minilm_punct[]",
         ranges(lambda c: ud.category(c).startswith("P"), 0x80, 0x10000), pair)
    emit("static const uint32_t minilm_mark[]",
         ranges(lambda c: ud.category(c) == "Mn", 0x80, 0x10000), pair)
    emit("static const uint32_t minilm_format[]",
         ranges(lambda c: ud.category(c) == "Cf", 0x80, 0x110000), pair)
    emit("static const minilm_case_run minilm_lower_runs[]", lower_runs(),
         lambda r: "{0x%04X, 0x%04X, %d, %d}" % (r[0], r[1], r[2], max(r[3], 1)))
    for name, lo, hi in (("minilm_latin_base", 0xC0, 0x250),
                         ("minilm_latin_x_base", 0x1E00, 0x1F00)):
        s = "".join(chr(base(c)) if base(c) is not None and base(c) < 128 else "."
                    for c in range(lo, hi))
        print("static const char %s[] = /* U+%04X..U+%04X */" % (name, lo, hi - 1))
        rows = [s[i:i + 80] for i in range(0, len(s), 80)]
        print("\n".join('    "%s"' % r for r in rows[:-1]) + '\n    "%s";' % rows[-1])
    in_strings = lambda c: 0xC0 <= c < 0x250 or 0x1E00 <= c < 0x1F00
    pairs = [(c, base(c)) for c in range(0x80, 0x10000)
             if not (0xD800 <= c < 0xE000 or 0xAC00 <= c < 0xD7A4 or 0xF900 <= c < 0xFB00)
             and base(c) is not None and not (in_strings(c) and base(c) < 128)]
    emit("static const uint16_t minilm_base_pairs[]", pairs, pair)
    print("/* END tables */")


if __name__ == "__main__":
    main()
