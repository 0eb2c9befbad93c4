#!/usr/bin/env python3
"""Writes tests/golden/half_golden.h: PyTorch's numbers for tests/test_half.c.

- Conversions: float32 special values to float16/bfloat16 bits; FNV-1a hashes of 2^16
  float32 values from a 64-bit LCG (half of them with exponents in float16's range) converted
  to float16 and bfloat16, and of every float16/bfloat16 bit pattern converted to float32
  (NaN outputs hashed as one canonical NaN: PyTorch's paths disagree on NaN payloads).
- torch.promote_types for every pair of dtypes, torch.result_type of a dimensioned tensor
  and a 0-dim tensor for every pair, and of a tensor and a Python int / float.
- Ops on float16/bfloat16 (and int8/int16) inputs, contiguous, transposed and step-sliced,
  broadcast: outputs as bits (floating dtypes) or values (integer dtypes), and the
  gradient of sum(x * w + exp(x)) in float16 and bfloat16.
Inputs are rebuilt by the C side from the same formula (base()). Run with PyTorch:
python3 tools/gen_golden_half.py
"""
import os

import numpy as np
import torch

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "half_golden.h")
# ct_dtype order (CT_BOOL = 1 ...)
DTYPES = [("CT_BOOL", torch.bool), ("CT_UINT8", torch.uint8), ("CT_INT8", torch.int8),
          ("CT_INT16", torch.int16), ("CT_INT32", torch.int32), ("CT_INT64", torch.int64),
          ("CT_FLOAT32", torch.float32), ("CT_FLOAT64", torch.float64),
          ("CT_FLOAT16", torch.float16), ("CT_BFLOAT16", torch.bfloat16)]
CNAME = {t: c for c, t in DTYPES}
F16, BF16, I8, I16, F32 = torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.float32
CONTIG, TRANSPOSED, STEP = 0, 1, 2
FNV_OFFSET, FNV_PRIME, MASK64 = 0xcbf29ce484222325, 0x100000001b3, (1 << 64) - 1


def fnv(words):
    h = FNV_OFFSET
    for w in words:
        h = ((h ^ int(w)) * FNV_PRIME) & MASK64
    return h


def lcg_floats(n):
    """The float32 bit patterns test_half.c draws: raw LCG bits, every odd one with its
    exponent moved into [103, 142] (float16's subnormal to overflow range)."""
    out = np.empty(n, dtype=np.uint32)
    s = 12345
    for i in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & MASK64
        b = s >> 32
        if i & 1:
            b = (b & 0x807fffff) | ((103 + (i // 2) % 40) << 23)
        out[i] = b
    return out


def canon16(bits, nan_bits):
    bits = bits.astype(np.int64) & 0xffff
    isnan = ((bits & 0x7fff) > 0x7c00) if nan_bits == 0x7e00 else ((bits & 0x7fff) > 0x7f80)
    return np.where(isnan, nan_bits, bits)


def conversions():
    lines = []
    special = [0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
               0x7fc00000, 0xffc00000, 0x7f800001, 0x477fe000, 0x477ff000, 0x477fefff,
               0x477ff001, 0x47800000, 0x38800000, 0x387fffff, 0x387fc000, 0x33800000,
               0x33000000, 0x33000001, 0x337fffff, 0x33c00000, 0x34000000, 0x00000001,
               0x80012345, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f7f8000,
               0x7f7f7fff, 0x3f808000, 0x3f818000, 0x3f808001, 0x3f801000, 0x3f803000,
               0x3f802000, 0x3dcccccd, 0xc0490fdb, 0x3eaaaaab, 0x4b7fffff, 0x3a800100]
    f = torch.from_numpy(np.array(special, dtype=np.uint32).view(np.float32))
    h = f.to(F16).view(torch.int16).numpy().astype(np.int64) & 0xffff
    b = f.to(BF16).view(torch.int16).numpy().astype(np.int64) & 0xffff
    rows = ["{0x%08xu, 0x%04x, 0x%04x}" % (s, x, y) for s, x, y in zip(special, h, b)]
    lines.append("static const uint32_t half_special[][3] = {\n" + c_wrap(rows, "    ") +
                 "\n};\n")
    n = 1 << 16
    fl = torch.from_numpy(lcg_floats(n).view(np.float32))
    h16 = canon16(fl.to(F16).view(torch.int16).numpy(), 0x7e00)
    hb16 = canon16(fl.to(BF16).view(torch.int16).numpy(), 0x7fc0)
    allbits = torch.arange(n, dtype=torch.int32).to(torch.int16)
    wide = []
    for dt in (F16, BF16):
        v = allbits.view(dt).float()
        u = v.view(torch.int32).numpy().astype(np.int64) & 0xffffffff
        u = np.where(torch.isnan(v).numpy(), 0x7fc00000, u)
        wide.append(fnv(u))
    lines.append("#define HALF_LCG_N %d\n" % n)
    lines.append("static const uint64_t half_hash_to_f16 = 0x%016xu;\n" % fnv(h16))
    lines.append("static const uint64_t half_hash_to_bf16 = 0x%016xu;\n" % fnv(hb16))
    lines.append("static const uint64_t half_hash_from_f16 = 0x%016xu;\n" % wide[0])
    lines.append("static const uint64_t half_hash_from_bf16 = 0x%016xu;\n" % wide[1])
    return "".join(lines)


def promotion():
    n = len(DTYPES)
    table = [CNAME[torch.promote_types(a, b)] for _, a in DTYPES for _, b in DTYPES]
    res = [CNAME[torch.result_type(torch.zeros(2, dtype=a), torch.zeros((), dtype=b))]
           for _, a in DTYPES for _, b in DTYPES]
    scal = []
    for _, a in DTYPES:
        t = torch.zeros(2, dtype=a)
        scal.append(CNAME[torch.result_type(t, 2)])
        scal.append(CNAME[torch.result_type(t, 2.5)])
    def rows(name, flat, m):
        body = ["{" + c_wrap(flat[i:i + m], "     ", "}").strip() for i in range(0, len(flat), m)]
        return ("static const ct_dtype %s[%d][%d] = {\n" % (name, len(flat) // m, m) +
                c_wrap(body, "    ") + "\n};\n")
    return (rows("half_promote", table, n) + rows("half_result_zero_dim", res, n) +
            rows("half_result_scalar", scal, 2))


def base(rows, cols, seed, dtype):
    """((i * 7 + seed * 3) % 19 - 9) / 4 for floating dtypes, * 13 for integers."""
    n = rows * cols
    v = torch.tensor([((i * 7 + seed * 3) % 19 - 9) for i in range(n)], dtype=torch.float64)
    v = v / 4 if dtype.is_floating_point else v * 13
    return v.to(dtype).reshape(rows, cols)


def layout(t, how):
    if how == TRANSPOSED:
        return t.t()
    if how == STEP:
        return t[:, ::2]
    return t


def raw(t):
    """Bits of floating outputs, values of integer ones."""
    t = t.detach().contiguous()
    if t.dtype in (F16, BF16):
        return (t.view(torch.int16).to(torch.int64) & 0xffff).flatten().tolist()
    if t.dtype == F32:
        return (t.view(torch.int32).to(torch.int64) & 0xffffffff).flatten().tolist()
    return t.to(torch.int64).flatten().tolist()


OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "maximum": torch.maximum, "eq": torch.eq, "lt": torch.lt,
    "matmul": torch.matmul, "exp": torch.exp, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "sqrt": torch.sqrt, "neg": torch.neg, "abs": torch.abs, "relu": torch.relu,
    "add_s": lambda a: a + 0.1, "mul_s": lambda a: a * 0.3,
    "sum": torch.sum, "mean": torch.mean, "argmax": torch.argmax,
    "sum1": lambda a: a.sum(1), "amax1": lambda a: a.amax(1),
    "softmax1": lambda a: torch.softmax(a, 1),
    "add_alpha2_": lambda a, b: a.add_(b, alpha=2), "mul_": lambda a, b: a.mul_(b),
    "clamp": lambda a: a.clamp(-50, 60), "to_float32": lambda a: a.float(),
    "to_int8": lambda a: (a * 1.5).to(I8), "to_int16": lambda a: (a * 300).to(I16),
    "index_select": lambda a: a.index_select(1, torch.tensor([2, 0, 2])),
    "gather": lambda a: a.gather(1, torch.tensor([[1, 0], [2, 2], [0, 1]])),
    "masked_fill": lambda a: a.masked_fill(a > 0, 5),
}


def case(op, dt, a, b=None, tol=0, dtb=None):
    """a, b: (rows, cols, layout, seed) of the operands' base tensors and views."""
    ta = layout(base(a[0], a[1], a[3], dt), a[2])
    args = [ta.clone() if op.endswith("_") else ta]
    if op.endswith("_") and a[2] != CONTIG:  # in place on the view itself
        args = [layout(base(a[0], a[1], a[3], dt).clone(), a[2])]
    if b:
        args.append(layout(base(b[0], b[1], b[3], dtb or dt), b[2]))
    out = OPS[op](*args)
    bb = b or (0, 0, 0, 0)
    vals = raw(out)
    return ('    {"%s", %s, %s, %s, %d, {%d, %d, %d, %d}, {%d, %d, %d, %d}, %d, {%s},\n'
            "     {%s}},\n" % (op, CNAME[dt], CNAME[dtb or dt], CNAME[out.dtype], tol,
                               *a, *bb, out.dim(), ", ".join(map(str, out.shape)) or "0",
                               c_wrap([str(v) for v in vals], "      ").strip()))


def cases():
    rows = []
    for dt in (F16, BF16):
        for op in ("add", "sub", "mul", "div"):
            rows.append(case(op, dt, (3, 8, CONTIG, 1), (3, 8, CONTIG, 2)))
            rows.append(case(op, dt, (3, 8, TRANSPOSED, 3), (8, 6, STEP, 4)))
            rows.append(case(op, dt, (3, 8, STEP, 5), (1, 4, CONTIG, 6)))
        rows.append(case("add", dt, (4, 64, CONTIG, 7), (4, 64, CONTIG, 8)))  # vector body
        rows.append(case("add_s", dt, (3, 8, TRANSPOSED, 7)))  # a wrapped scalar: float32
        rows.append(case("mul_s", dt, (3, 8, STEP, 8)))
        rows.append(case("add_alpha2_", dt, (3, 8, CONTIG, 1), (3, 8, CONTIG, 2)))
        rows.append(case("add_alpha2_", dt, (3, 8, TRANSPOSED, 3), (1, 3, CONTIG, 4)))
        rows.append(case("mul_", dt, (3, 8, STEP, 5), (3, 4, CONTIG, 6)))
        rows.append(case("maximum", dt, (3, 8, TRANSPOSED, 1), (8, 3, CONTIG, 2)))
        rows.append(case("eq", dt, (3, 8, CONTIG, 1), (3, 8, CONTIG, 11)))
        rows.append(case("lt", dt, (3, 8, STEP, 1), (3, 4, CONTIG, 2)))
        for op in ("exp", "tanh", "sigmoid", "sqrt"):
            rows.append(case(op, dt, (3, 8, TRANSPOSED, 2), tol=1))
        for op in ("neg", "abs", "relu"):
            rows.append(case(op, dt, (3, 8, STEP, 3)))
        for op in ("sum", "mean", "sum1", "softmax1"):
            rows.append(case(op, dt, (3, 8, TRANSPOSED, 4), tol=1))
        rows.append(case("amax1", dt, (3, 8, STEP, 4)))
        rows.append(case("argmax", dt, (3, 8, CONTIG, 4)))
        rows.append(case("matmul", dt, (3, 8, CONTIG, 1), (3, 8, TRANSPOSED, 2), tol=1))
        rows.append(case("matmul", dt, (8, 3, TRANSPOSED, 3), (8, 4, STEP, 4), tol=1))
        rows.append(case("add", dt, (3, 8, CONTIG, 1), (8, 3, TRANSPOSED, 2), dtb=F32))
        rows.append(case("to_float32", dt, (3, 8, STEP, 1)))
    rows.append(case("add", F16, (3, 8, CONTIG, 1), (3, 8, CONTIG, 2), dtb=BF16))
    for dt in (I8, I16):
        for op in ("add", "sub", "mul"):
            rows.append(case(op, dt, (3, 8, CONTIG, 1), (3, 8, CONTIG, 2)))
            rows.append(case(op, dt, (3, 8, TRANSPOSED, 3), (8, 6, STEP, 4)))
            rows.append(case(op, dt, (3, 8, STEP, 5), (1, 4, CONTIG, 6)))
        rows.append(case("add_alpha2_", dt, (3, 8, TRANSPOSED, 3), (1, 3, CONTIG, 4)))
        rows.append(case("maximum", dt, (3, 8, STEP, 1), (3, 4, CONTIG, 2)))
        rows.append(case("eq", dt, (3, 8, CONTIG, 1), (3, 8, CONTIG, 11)))
        rows.append(case("lt", dt, (3, 8, TRANSPOSED, 1), (8, 3, CONTIG, 2)))
        rows.append(case("div", dt, (3, 8, CONTIG, 1), (1, 8, CONTIG, 3)))
        for op in ("neg", "abs", "clamp", "sum", "sum1", "amax1", "argmax",
                   "to_float32", "index_select", "gather", "masked_fill"):
            rows.append(case(op, dt, (3, 8, TRANSPOSED if op != "gather" else STEP, 2)))
        rows.append(case("add", dt, (3, 8, CONTIG, 1), (3, 8, CONTIG, 2), dtb=F16))
    rows.append(case("add", I8, (3, 8, CONTIG, 1), (3, 8, CONTIG, 2), dtb=torch.uint8))
    rows.append(case("to_int8", F32, (3, 8, TRANSPOSED, 1)))
    rows.append(case("to_int16", F32, (3, 8, STEP, 1)))
    return "static const half_case half_cases[] = {\n" + "".join(rows) + "};\n"


CONVERT_VALUES = [-3.75, 0.0, 1.5, 2.25, 100.5, -129.25, 300.0, 1e5]


def raw64(t):
    """raw(), and float64 outputs as their bits."""
    if t.dtype == torch.float64:
        return t.contiguous().view(torch.int64).flatten().tolist()
    return raw(t)


def convert_pairs():
    """Every (source, destination) pair of dtypes: CONVERT_VALUES as float64 -> source ->
    destination, the destination's raw values (float64: bits)."""
    rows = []
    for _, src in DTYPES:
        s = torch.tensor(CONVERT_VALUES, dtype=torch.float64).to(src)
        for _, dst in DTYPES:
            vals = ["(%dll - 1)" % (v + 1) if v == -2**63 else "%dll" % v if abs(v) > 2**31
                    else str(v) for v in raw64(s.to(dst))]
            rows.append("    {" + c_wrap(vals, "     ", "},").strip())
    return ("static const double half_convert_values[%d] = {\n" % len(CONVERT_VALUES) +
            c_wrap([repr(v) for v in CONVERT_VALUES], "    ", "};") + "\n" +
            "static const int64_t half_convert[%d][%d] = {\n" % (len(rows), len(CONVERT_VALUES)) +
            "\n".join(rows) + "\n};\n")


def gradient():
    out = []
    for dt in (F16, BF16):
        x = base(3, 8, 1, dt).requires_grad_(True)
        w = base(3, 8, 2, dt)
        (x * w + x.exp()).sum().backward()
        out.append("    {" + c_wrap([str(v) for v in raw(x.grad)], "     ").strip() + "}")
        x.grad = None
        (x @ w.t()).sum().backward()  # matmul in half: float32 accumulation
        out.append("    {" + c_wrap([str(v) for v in raw(x.grad)], "     ").strip() + "}")
    return ("static const int64_t half_grad[4][24] = {\n" + ",\n".join(out) + "\n};\n")


def type_info():
    rows = []
    for c, t in DTYPES[6:]:
        f = torch.finfo(t)
        fields = [c, str(f.bits)] + [repr(v) for v in (f.eps, f.max, f.min, f.tiny,
                                                       f.smallest_normal, f.resolution)]
        rows.append("    {" + c_wrap(fields, "     ", "},").strip())
    out = "static const half_finfo_row half_finfo[] = {\n" + "\n".join(rows) + "\n};\n"
    rows = []
    for c, t in DTYPES[1:6]:
        i = torch.iinfo(t)
        lo = "(-%dll - 1)" % (-i.min - 1) if i.bits == 64 else "%dll" % i.min
        rows.append("    {%s, %d, %s, %dll}," % (c, i.bits, lo, i.max))
    return out + "static const half_iinfo_row half_iinfo[] = {\n" + "\n".join(rows) + "\n};\n"


def main():
    text = ("/* GENERATED by tools/gen_golden_half.py with torch %s - do not edit. */\n"
            % torch.__version__ + conversions() + promotion() + type_info() + cases() +
            convert_pairs() + gradient())
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
