#!/usr/bin/env python3
"""Writes tests/golden/rng_golden.h: PyTorch's random streams, to compare bit for bit.

Each case seeds the default generator (torch.manual_seed) and makes one call; the header
keeps the CRC-32 (zlib's) of the result's raw little-endian bytes and sample values as bit
patterns: every element up to 17 elements, else the first 8 and the last 8. It also keeps
the quickstart's initial Linear parameters (tests/test_nn.c) and DataLoader orders
(tests/test_data.c). Reads nothing from the network.

    python3 tools/gen_golden_rng.py   # from the repository root
"""
import os
import warnings
import zlib

import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "rng_golden.h")
SEEDS = (0, 1, 42)
SIZES = (1, 15, 16, 17, 1000, 10**6)
DTYPES = {torch.float32: "CT_FLOAT32", torch.float64: "CT_FLOAT64", torch.int64: "CT_INT64",
          torch.int32: "CT_INT32", torch.int16: "CT_INT16", torch.int8: "CT_INT8",
          torch.uint8: "CT_UINT8", torch.bool: "CT_BOOL", torch.float16: "CT_FLOAT16",
          torch.bfloat16: "CT_BFLOAT16"}
SHORT = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.int32: "i32",
         torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8", torch.bool: "b8",
         torch.float16: "f16", torch.bfloat16: "bf16"}
HALVES = (torch.float16, torch.bfloat16)
WIDE = (-(2**62), 2**62)  # a range of 2^63
MEAN_STD = (-1.5, 0.3)
FROM_TO = (-0.7, 1.3)
LOADER_N, LOADER_BATCH, LOADER_EPOCHS = 100, 7, 3


def sample_positions(n):
    """Indices whose values the header keeps (tests/golden/rng_golden.h's rng_sample_index)."""
    return list(range(n)) if n <= 17 else list(range(8)) + list(range(n - 8, n))


def raw_bytes(t):
    """The contiguous tensor's bytes (the half types through their int16 view: numpy has no
    bfloat16)."""
    t = t.contiguous()
    return (t.view(torch.int16) if t.dtype in HALVES else t).numpy().tobytes()


def bits(t):
    """Each element's bytes as an unsigned little-endian integer."""
    raw = raw_bytes(t)
    size = t.element_size()
    return [int.from_bytes(raw[k:k + size], "little") for k in range(0, len(raw), size)]


def summary(t):
    """(numel, CRC-32 of the raw bytes, sampled bit patterns) of a tensor."""
    raw = raw_bytes(t)
    flat = t.contiguous().reshape(-1)
    pos = sample_positions(flat.numel())
    return flat.numel(), zlib.crc32(raw), bits(flat[pos]) if pos else []


def run(op, dtype, n, a, b, lo, hi):
    """The PyTorch call of one case (the generator already seeded); its output tensor."""
    if op == "RAND":
        return torch.rand(n, dtype=dtype)
    if op == "RANDN":
        return torch.randn(n, dtype=dtype)
    if op == "UNIFORM":
        return torch.empty(n, dtype=dtype).uniform_(a, b)
    if op == "NORMAL":
        return torch.empty(n, dtype=dtype).normal_(a, b)
    if op in ("UNIFORM_T", "NORMAL_T"):  # a transposed (5, n / 5) view; the base's bytes
        base = torch.empty(n // 5, 5, dtype=dtype)
        view = base.t()
        view.uniform_(a, b) if op == "UNIFORM_T" else view.normal_(a, b)
        return base
    if op == "RANDINT":
        return torch.randint(lo, hi, (n,), dtype=dtype)
    if op == "RANDPERM":
        return torch.randperm(n)
    if op == "BERNOULLI":
        return torch.empty(n, dtype=dtype).bernoulli_(a)
    if op == "RANDOM":
        return torch.empty(n, dtype=dtype).random_()
    if op == "EXPONENTIAL":
        return torch.empty(n, dtype=dtype).exponential_(a)
    if op == "CAUCHY":
        return torch.empty(n, dtype=dtype).cauchy_(a, b)
    if op == "LOG_NORMAL":
        return torch.empty(n, dtype=dtype).log_normal_(a, b)
    if op == "GEOMETRIC":
        return torch.empty(n, dtype=dtype).geometric_(a)
    if op == "NORMAL_TT":  # mean[i] = i % 7 - 3, std[i] = 0.5 + (i % 3) / 4
        i = torch.arange(n, dtype=torch.float64)
        return torch.normal((i % 7 - 3).to(dtype), (0.5 + (i % 3) / 4).to(dtype))
    if op == "RANDINT_LIKE":
        return torch.randint_like(torch.empty(n, dtype=dtype), lo, hi)
    if op == "MULTINOMIAL":  # n rows (0: 1-D) of lo categories, hi samples, replacement a
        j = torch.arange(lo, dtype=torch.float64) % 5 + 1
        p = j if n == 0 else torch.stack([j * (i + 1) for i in range(n)])
        return torch.multinomial(p.to(torch.float32 if b == 32 else torch.float64), hi, bool(a))
    if op == "STATE":  # the default generator's state after randn(n) in float64
        torch.randn(n, dtype=torch.float64)
        return torch.get_rng_state()
    if op == "SEQ":  # calls that share the cached normal sample; bytes concatenated
        parts = [torch.randn(1, dtype=torch.float64), torch.randn(3, dtype=torch.float64),
                 torch.rand(2, dtype=torch.float64), torch.randn(15),
                 torch.randn(16, dtype=torch.float64), torch.randn(5, dtype=torch.float64),
                 torch.randint(0, 7, (5,)).double()]
        return torch.cat(parts)
    raise ValueError(op)


def cases():
    """(name, op, dtype, seed, n, a, b, lo, hi) of every case."""
    out = []

    def add(op, dtype, seed, n, a=0.0, b=0.0, lo=0, hi=0, tag=""):
        name = f"{op.lower()}{tag}_{SHORT[dtype]}_s{seed}_n{n}"
        out.append((name, op, dtype, seed, n, a, b, lo, hi))

    for seed in SEEDS:
        for n in SIZES:
            for dt in (torch.float32, torch.float64):
                add("RANDN", dt, seed, n)
                add("NORMAL", dt, seed, n, *MEAN_STD)
                add("UNIFORM", dt, seed, n, *FROM_TO)
            add("RANDINT", torch.int64, seed, n, lo=WIDE[0], hi=WIDE[1], tag="_wide")
            add("RANDPERM", torch.int64, seed, n)
            for dt in (torch.float32, torch.float64):
                add("BERNOULLI", dt, seed, n, a=0.3)
                add("EXPONENTIAL", dt, seed, n, a=1.5)
                add("CAUCHY", dt, seed, n, a=0.5, b=2.0)
                add("LOG_NORMAL", dt, seed, n, a=0.2, b=0.7)
                add("GEOMETRIC", dt, seed, n, a=0.3)
                add("NORMAL_TT", dt, seed, n)
            add("GEOMETRIC", torch.int64, seed, n, a=0.05)
            add("RANDINT_LIKE", torch.int32, seed, n, lo=-5, hi=1000)
            add("MULTINOMIAL", torch.int64, seed, 0, a=1, b=32, lo=10, hi=n, tag=f"_repl{n}")
            add("MULTINOMIAL", torch.int64, seed, 0, a=0, b=64, lo=n, hi=min(n, 16),
                tag=f"_norepl{n}")
        for n in (15, 1000):
            for dt in (torch.float32, torch.float64):
                add("UNIFORM_T", dt, seed, n, *FROM_TO)
                add("NORMAL_T", dt, seed, n, *MEAN_STD)
        add("RAND", torch.float32, seed, 1000)
        add("RAND", torch.float64, seed, 1000)
        add("RANDINT", torch.int64, seed, 1000, lo=-3, hi=2**40 + 7, tag="_2p40")
        add("RANDINT", torch.int64, seed, 1000, lo=-5, hi=1000, tag="_small")
        add("RANDINT", torch.int32, seed, 17, lo=-5, hi=1000, tag="_small")
        add("RANDINT", torch.int32, seed, 1000, lo=-(2**30), hi=2**30, tag="_2p31")
        add("RANDINT", torch.int64, seed, 1000, lo=0, hi=2**28 - 1, tag="_2p28m1")
        add("RANDINT", torch.int64, seed, 1000, lo=0, hi=2**28, tag="_2p28")
        add("RANDINT", torch.int8, seed, 17, lo=-100, hi=100, tag="_small")
        add("RANDINT", torch.float32, seed, 17, lo=0, hi=100, tag="_small")
        add("RANDINT", torch.float32, seed, 1000, lo=-(2**30) - 97, hi=2**30, tag="_2p30")
        add("RANDINT", torch.float64, seed, 1000, lo=-(2**60) - 5, hi=2**60 + 1000, tag="_2p60")
        add("BERNOULLI", torch.int64, seed, 17, a=0.3)
        for dt in DTYPES:
            add("RANDOM", dt, seed, 17)
        add("SEQ", torch.float64, seed, 0)
        for rows, cats, samples, repl, bits in ((3, 1000, 17, 1, 32), (4, 10, 7, 0, 32),
                                                (2, 100, 100, 0, 64), (5, 16, 1, 1, 32),
                                                (2, 7, 1000, 1, 64)):
            add("MULTINOMIAL", torch.int64, seed, rows, a=repl, b=bits, lo=cats, hi=samples,
                tag=f"_{rows}x{cats}_{samples}_{repl}")
        for n in (0, 1, 2, 623, 624, 625, 1000):
            add("STATE", torch.uint8, seed, n)
    for seed in SEEDS:  # float16 and bfloat16: PyTorch's own streams for the half types
        for n in SIZES:
            for dt in HALVES:
                add("RAND", dt, seed, n)
                add("RANDN", dt, seed, n)
                add("UNIFORM", dt, seed, n, *FROM_TO)
                add("NORMAL", dt, seed, n, *MEAN_STD)
                add("BERNOULLI", dt, seed, n, a=0.3)
                add("RANDOM", dt, seed, n)
                add("RANDINT", dt, seed, n, lo=-200, hi=200, tag="_small")
                add("EXPONENTIAL", dt, seed, n, a=1.5)
                add("CAUCHY", dt, seed, n, a=0.5, b=2.0)
                add("LOG_NORMAL", dt, seed, n, a=0.2, b=0.7)
                add("GEOMETRIC", dt, seed, n, a=0.3)
        for dt in HALVES:
            add("UNIFORM_T", dt, seed, 1000, *FROM_TO)
            add("NORMAL_T", dt, seed, 1000, *MEAN_STD)
            add("NORMAL_TT", dt, seed, 17)
        add("RANDINT", torch.float16, seed, 1000, lo=-65504, hi=65505, tag="_max")
        add("RANDINT", torch.bfloat16, seed, 1000, lo=-(2**40) - 3, hi=2**40 + 7, tag="_2p40")
    add("RANDPERM", torch.int64, 0, 2**24)
    return out


def c_double(v):
    return repr(float(v))


def c_int64(v):
    return f"INT64_C({v})" if v >= 0 else f"(-INT64_C({-v - 1}) - 1)"


def wrap(items, per_line, indent):
    """items joined by ", ", per_line to a line."""
    rows = [", ".join(items[k:k + per_line]) for k in range(0, len(items), per_line)]
    return (",\n" + indent).join(rows)


def entry(name, op, ctype, seed, n, a, b, lo, hi, t):
    numel, crc, samples = summary(t)
    body = wrap([f"UINT64_C(0x{s:x})" for s in samples], 3, "      ") or "0"
    return (f'    {{"{name}", RNG_OP_{op}, {ctype}, {seed}, {n}, {c_double(a)}, {c_double(b)},\n'
            f"     {c_int64(lo)}, {c_int64(hi)}, {numel}, 0x{crc:08x}u, {len(samples)},\n"
            f"     {{{body}}}}},")


def linear_entries():
    """The quickstart's three layers after torch.manual_seed(s), parameters in order."""
    rows = []
    for seed in SEEDS:
        torch.manual_seed(seed)
        layers = [torch.nn.Linear(784, 512), torch.nn.Linear(512, 512), torch.nn.Linear(512, 10)]
        for k, layer in enumerate(layers):
            for pname in ("weight", "bias"):
                p = getattr(layer, pname).detach()
                rows.append(entry(f"linear_s{seed}_fc{k + 1}.{pname}", "PARAM", "CT_FLOAT32",
                                  seed, p.numel(), 0, 0, layer.in_features, layer.out_features, p))
    return rows


def loader_entries():
    """DataLoader(TensorDataset(arange(N)), B, shuffle=True) orders over several epochs."""
    rows = []
    ds = torch.utils.data.TensorDataset(torch.arange(LOADER_N))
    for seed in SEEDS:
        for use_default in (True, False):
            for drop_last in (False, True):
                torch.manual_seed(seed)
                gen = None if use_default else torch.Generator().manual_seed(seed)
                dl = torch.utils.data.DataLoader(ds, batch_size=LOADER_BATCH, shuffle=True,
                                                 drop_last=drop_last, generator=gen)
                epochs = [[int(i) for (batch,) in dl for i in batch]
                          for _ in range(LOADER_EPOCHS)]
                after = bits(torch.rand(1, generator=gen))[0]
                count = len(epochs[0])
                body = ",\n      ".join("{" + wrap([str(i) for i in e], 20, "       ") + "}"
                                          for e in epochs)
                rows.append(f"    {{{seed}, {str(use_default).lower()}, "
                            f"{str(drop_last).lower()}, {count}, 0x{after:08x}u,\n"
                            f"     {{{body}}}}},")
    return rows


HEADER = """/* tests/golden/rng_golden.h - GENERATED by tools/gen_golden_rng.py (torch {version}):
 * do not edit. PyTorch's random streams for tests/test_rng.c, test_nn.c and test_data.c.
 *
 * A case seeds the default generator with `seed`, then makes one call (RNG_OP_*, on n
 * elements of dtype, with a, b or lo, hi). crc is the CRC-32 (zlib's polynomial) of the
 * result's raw little-endian bytes; samples[k] holds the bits of element rng_sample_index(k, n)
 * (every element up to 17, else the first 8 and the last 8), zero-extended.
 */
#ifndef RNG_GOLDEN_H
#define RNG_GOLDEN_H

#include <stdint.h>

typedef enum rng_op {{
    RNG_OP_RAND,      /* ct_rand(n, dtype) */
    RNG_OP_RANDN,     /* ct_randn(n, dtype) */
    RNG_OP_UNIFORM,   /* ct_uniform_(empty(n), a, b) */
    RNG_OP_NORMAL,    /* ct_normal_(empty(n), a, b) */
    RNG_OP_UNIFORM_T, /* ct_uniform_ on the transposed view of empty(n / 5, 5): its bytes */
    RNG_OP_NORMAL_T,  /* ct_normal_ the same way */
    RNG_OP_RANDINT,   /* ct_randint(lo, hi, n, dtype) */
    RNG_OP_RANDPERM,  /* ct_randperm(n) */
    RNG_OP_BERNOULLI, /* ct_bernoulli_(empty(n), a) */
    RNG_OP_RANDOM,    /* ct_random_(empty(n)) */
    RNG_OP_EXPONENTIAL,  /* ct_exponential_(empty(n), a) */
    RNG_OP_CAUCHY,       /* ct_cauchy_(empty(n), a, b) */
    RNG_OP_LOG_NORMAL,   /* ct_log_normal_(empty(n), a, b) */
    RNG_OP_GEOMETRIC,    /* ct_geometric_(empty(n), a) */
    RNG_OP_NORMAL_TT,    /* ct_normal(mean, std): mean[i] = i % 7 - 3, std[i] = 0.5 + (i % 3) / 4 */
    RNG_OP_RANDINT_LIKE, /* ct_randint_like(empty(n), lo, hi) */
    RNG_OP_MULTINOMIAL,  /* ct_multinomial of n rows (0: 1-D) of lo categories weighted
                            j % 5 + 1 times the row number + 1, float32 (b == 32) or float64,
                            hi samples, replacement when a != 0 */
    RNG_OP_STATE,        /* ct_get_rng_state() after ct_randn(n) in float64 */
    RNG_OP_SEQ,       /* tests/test_rng.c's call sequence, float64 results concatenated */
    RNG_OP_PARAM      /* a parameter of Linear(lo, hi), the quickstart's layers in order */
}} rng_op;

typedef struct rng_golden {{
    const char *name;
    rng_op op;
    ct_dtype dtype;
    uint64_t seed;
    int64_t n;
    double a, b;
    int64_t lo, hi;
    int64_t numel; /* of the result */
    uint32_t crc;
    int nsamples;
    uint64_t samples[17];
}} rng_golden;

/* The element sample k stands for. */
static inline int64_t rng_sample_index(int k, int64_t numel)
{{
    return numel <= 17 || k < 8 ? k : numel - 16 + k;
}}

/* Checks a contiguous tensor against a case (dtype, numel, CRC, samples), reporting the first
   differing sample; returns whether it matches. Defined in tests/test_rng.c. */
int rng_golden_check(const char *file, int line, const ct_tensor *t, const rng_golden *g);
#define RNG_GOLDEN_CHECK(t, g) rng_golden_check(__FILE__, __LINE__, t, g)

#define RNG_LOADER_N {loader_n}
#define RNG_LOADER_BATCH {loader_batch}
#define RNG_LOADER_EPOCHS {loader_epochs}
/* DataLoader(TensorDataset(arange(N)), BATCH, shuffle=True, drop_last) after
   torch.manual_seed(seed), with the default generator or Generator().manual_seed(seed):
   each epoch's sample order, then the bits of torch.rand(1) from that generator. */
typedef struct rng_golden_loader {{
    uint64_t seed;
    bool use_default;
    bool drop_last;
    int64_t count; /* samples per epoch */
    uint32_t after;
    int64_t order[RNG_LOADER_EPOCHS][RNG_LOADER_N];
}} rng_golden_loader;
"""


def main():
    warnings.filterwarnings("ignore", "from is out of bounds|to - 1 is out of bounds")
    lines = [HEADER.format(version=torch.__version__, loader_n=LOADER_N,
                           loader_batch=LOADER_BATCH, loader_epochs=LOADER_EPOCHS)]
    lines.append("static const rng_golden rng_golden_cases[] = {")
    for name, op, dtype, seed, n, a, b, lo, hi in cases():
        torch.manual_seed(seed)
        t = run(op, dtype, n, a, b, lo, hi)
        lines.append(entry(name, op, DTYPES[dtype], seed, n, a, b, lo, hi, t))
    lines.append("};\n")
    lines.append("static const rng_golden rng_golden_linear[] = {")
    lines += linear_entries()
    lines.append("};\n")
    lines.append("static const rng_golden_loader rng_golden_loaders[] = {")
    lines += loader_entries()
    lines.append("};\n")
    lines.append("#endif")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
