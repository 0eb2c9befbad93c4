#!/usr/bin/env python3
"""Writes tests/golden/readers_golden.h: files numpy writes, for tests/test_readers.c.

.npy files of every dtype ctorch shares with numpy in both byte orders, C and Fortran order,
format versions 1.0/2.0/3.0, 0-d and empty arrays, each with the C-ordered little-endian bytes
expected after loading; .npz archives (numpy.savez, numpy.savez_compressed, one with the zip64
end records that archives over 4 GiB carry) with the same expectations per member; hostile
archives (a zip bomb by ratio, a declared size the .npy header contradicts, a central
directory past the end, a local header that differs, overlapping members, a bad CRC); CSV
texts with the values Python's csv module and float() read from them.
Run: python3 tools/gen_golden_readers.py
"""
import csv
import io
import os
import struct
import zlib

import numpy as np

from golden_c import c_wrap, num

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "readers_golden.h")
CT = {"b1": "CT_BOOL", "u1": "CT_UINT8", "i1": "CT_INT8", "i2": "CT_INT16", "i4": "CT_INT32",
      "i8": "CT_INT64", "f2": "CT_FLOAT16", "f4": "CT_FLOAT32", "f8": "CT_FLOAT64"}


def values(shape, kind):
    n = int(np.prod(shape)) if shape else 1
    v = np.sin(np.arange(n) * 1.7 + 0.3) * 100
    if kind == "b1":
        v = v > 0
    elif kind[0] in "iu":
        v = np.round(v).astype(np.int64) % 256 if kind == "u1" else np.round(v)
    return np.asarray(v).reshape(shape)


def c_bytes(name, data):
    items = ["0x%02x" % b for b in data] or ["0"]
    return "static const unsigned char %s[] = {\n%s\n};\n" % (name, c_wrap(items, "    "))


def npy_bytes(a, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, a)
    else:
        np.lib.format.write_array(b, a, version=version)
    return b.getvalue()


def expect(a):
    """The C-ordered little-endian bytes of a (ctorch's tensor on a little-endian host)."""
    c = np.ascontiguousarray(a)
    return c.astype(c.dtype.newbyteorder("<")).tobytes()


def npy_cases():
    cases = []
    for kind in CT:
        orders = "|" if kind[1] == "1" else "<>"
        for order in orders:
            dt = np.dtype(order + kind if order != "|" else kind)
            a = values((2, 3), kind).astype(dt)
            cases.append(("%s_%s" % (kind, {"<": "le", ">": "be", "|": "na"}[order]), a, None))
    f = np.asfortranarray(values((2, 3, 4), "f4").astype(">f4"))
    cases.append(("fortran_f4_be", f, None))
    cases.append(("fortran_i2", np.asfortranarray(values((3, 5), "i2").astype("<i2")), None))
    cases.append(("fortran_1d", np.asfortranarray(values((4,), "f8")), None))
    cases.append(("v2_f8", values((3,), "f8"), (2, 0)))
    cases.append(("v3_i4", values((2, 2), "i4").astype("<i4"), (3, 0)))
    cases.append(("scalar_f8", np.array(2.5), None))
    cases.append(("empty_i8", np.zeros((0, 3), dtype="<i8"), None))
    return cases


def npz_bytes(arrays, compressed):
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **arrays)
    return bytearray(b.getvalue())


def eocd_at(z):
    return z.rindex(b"PK\x05\x06")


def with_zip64_end(z):
    """z with a zip64 end of central directory record and locator, the EOCD's fields 0xff.."""
    e = eocd_at(z)
    count, size, offset = struct.unpack_from("<HII", z, e + 10)
    rec = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, count, count, size, offset)
    loc = struct.pack("<IIQI", 0x07064b50, 0, e, 1)
    end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
    return z[:e] + rec + loc + end


def central_entries(z):
    e = eocd_at(z)
    count, size, offset = struct.unpack_from("<HII", z, e + 10)
    out, pos = [], offset
    for _ in range(count):
        nl, el, cl = struct.unpack_from("<HHH", z, pos + 28)
        out.append(pos)
        pos += 46 + nl + el + cl
    return out


def hostile_npz():
    small = {"a": np.arange(6, dtype="<f4"), "b": np.arange(3, dtype="<i8")}
    cases = []
    # a deflated member declaring 2^40 bytes: more than its compressed bytes can hold
    z = npz_bytes({"x": np.zeros(4000)}, True)
    c = central_entries(z)[0]
    struct.pack_into("<I", z, c + 24, 0xfffffff0)
    loc = struct.unpack_from("<I", z, c + 42)[0]
    struct.pack_into("<Q", z, loc + 30 + 5 + 4, 0xfffffff0)  # the local zip64 extra's usize
    cases.append(("bomb_ratio", bytes(z), "CT_ERR_FORMAT", "zip bomb"))
    # a declared size (within the ratio) that the .npy header contradicts
    z = npz_bytes({"x": np.zeros(20000)}, True)
    c = central_entries(z)[0]
    usize = struct.unpack_from("<I", z, c + 24)[0]
    struct.pack_into("<I", z, c + 24, usize + 8)
    loc = struct.unpack_from("<I", z, c + 42)[0]
    struct.pack_into("<Q", z, loc + 30 + 5 + 4, usize + 8)  # the local zip64 extra's usize
    cases.append(("bomb_header", bytes(z), "CT_ERR_FORMAT", "but its .npy header needs"))
    # central directory offset past the end
    z = npz_bytes(small, False)
    struct.pack_into("<I", z, eocd_at(z) + 16, len(z) + 100)
    cases.append(("cd_past_end", bytes(z), "CT_ERR_FORMAT", "central directory at offset"))
    # local header name differs from the central entry's
    z = npz_bytes(small, False)
    z[30] = ord("q")
    cases.append(("local_mismatch", bytes(z), "CT_ERR_FORMAT", "does not match its central"))
    # the second central entry points at the first member's local header
    z = npz_bytes(small, False)
    c0, c1 = central_entries(z)
    z[c1 + 46] = ord("a")  # same name as member 0, so the local header matches
    struct.pack_into("<I", z, c1 + 42, struct.unpack_from("<I", z, c0 + 42)[0])
    struct.pack_into("<III", z, c1 + 16, *struct.unpack_from("<III", z, c0 + 16))
    cases.append(("overlap", bytes(z), "CT_ERR_FORMAT", "overlap"))
    # a flipped data byte
    z = npz_bytes(small, False)
    z[len(z) // 3] ^= 0x01
    cases.append(("bad_crc", bytes(z), "CT_ERR_FORMAT", "Bad CRC-32"))
    # EOCD entry count larger than the directory can hold
    z = npz_bytes(small, False)
    struct.pack_into("<HH", z, eocd_at(z) + 8, 900, 900)
    cases.append(("count_lies", bytes(z), "CT_ERR_FORMAT", "cannot hold the 900 entries"))
    return cases


CSV_TEXTS = [
    ("basic", 'a,b,"c ""q""",label\n1,2.5,-3e2,cat\r\n\n4,NA, 6 ,dog\n7,,1E3,cat\n'),
    ("ints", "x,y,cls\n0.5,10,3\n-1.25,-20,1\n1e-3,30,3\n"),
    ("quoted", 'p;"q\n;r"\n"1.5";2\n" 3";4'),
]


def csv_expect(text):
    delim = ";" if "p;" in text else ","
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delim) if r]
    return rows[0], rows[1:]


def num_or_nan(s):
    s = s.strip()
    return float("nan") if s in ("", "NA") else float(s)


def main():
    out = ["/* GENERATED by tools/gen_golden_readers.py - do not edit. */",
           "typedef struct readers_npy_case {", "    const char *name;",
           "    const unsigned char *file;", "    size_t file_len;", "    ct_dtype dtype;",
           "    int ndim;", "    int64_t shape[8];", "    const unsigned char *want;",
           "    size_t want_len;", "} readers_npy_case;",
           "typedef struct readers_bad_case {", "    const char *name;",
           "    const unsigned char *file;", "    size_t file_len;", "    ct_status code;",
           "    const char *msg;", "} readers_bad_case;", ""]
    rows = []
    for name, a, version in npy_cases():
        out.append(c_bytes("npy_file_" + name, npy_bytes(a, version)))
        out.append(c_bytes("npy_want_" + name, expect(a)))
        shape = list(a.shape) + [0] * (8 - a.ndim)
        rows.append('    {"%s", npy_file_%s, sizeof npy_file_%s, %s, %d, {%s}, npy_want_%s, %d},'
                    % (name, name, name, CT[a.dtype.str[1:]], a.ndim,
                       ", ".join(map(str, shape)), name, len(expect(a))))
    out.append("static const readers_npy_case readers_npy[] = {\n%s\n};\n" % "\n".join(rows))
    arrays = {"w": values((2, 3), "f4").astype("<f4"),
              "bias_1": values((3,), "f8").astype(">f8"),
              "t": np.asfortranarray(values((2, 2), "i2").astype("<i2")),
              "flag": np.array(True)}
    stored = npz_bytes(arrays, False)
    out.append(c_bytes("npz_stored", stored))
    out.append(c_bytes("npz_deflated", npz_bytes(arrays, True)))
    out.append(c_bytes("npz_zip64", with_zip64_end(stored)))
    rows = []
    for k, a in arrays.items():
        out.append(c_bytes("npz_want_" + k, expect(a)))
        rows.append('    {"%s", NULL, 0, %s, %d, {%s}, npz_want_%s, %d},'
                    % (k, CT[a.dtype.str[1:]], a.ndim,
                       ", ".join(map(str, list(a.shape) + [0] * (8 - a.ndim))), k,
                       len(expect(a))))
    out.append("static const readers_npy_case readers_npz_members[] = {\n%s\n};\n"
               % "\n".join(rows))
    rows = []
    for name, data, code, msg in hostile_npz():
        out.append(c_bytes("npz_bad_" + name, data))
        rows.append('    {"%s", npz_bad_%s, sizeof npz_bad_%s, %s, "%s"},'
                    % (name, name, name, code, msg))
    out.append("static const readers_bad_case readers_npz_bad[] = {\n%s\n};\n"
               % "\n".join(rows))
    for name, text in CSV_TEXTS:
        header, body = csv_expect(text)
        out.append("static const char csv_text_%s[] = %s;" % (name, c_string(text)))
        out.append("static const char *const csv_header_%s[] = {%s};"
                   % (name, ", ".join(c_string(h) for h in header)))
        cells = [num(num_or_nan(v)) if (name != "basic" or j != 3) else "0"
                 for r in body for j, v in enumerate(r)]
        out.append("static const double csv_cells_%s[] = {\n%s\n};\n"
                   % (name, c_wrap(cells, "    ")))
    text = "v\n0.1\n3.14159265358979\n1e-40\n-2.5e38\n16777217\n 7.000000476837158 \n"
    f32 = np.loadtxt(io.StringIO(text), dtype=np.float32, skiprows=1)
    out.append("static const char csv_text_round[] = %s;" % c_string(text))
    out.append("static const uint32_t csv_bits_round_f32[] = {\n%s\n};\n"
               % c_wrap(["0x%08x" % b for b in f32.view(np.uint32)], "    "))
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")
    write_corpus(stored)


def write_corpus(npz):
    """Seed inputs for make fuzz: fuzz/corpus/<reader>/<name>."""
    root = os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus")
    seeds = {"npz": {"stored": npz, "deflated": npz_bytes({"x": values((3, 4), "f8")}, True)},
             "npy": {n: npy_bytes(a, v) for n, a, v in npy_cases()[::3]},
             "csv": {n: ("\x01" if n == "basic" else "\x00") + t for n, t in CSV_TEXTS}}
    header = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' \
             b'"b":{"dtype":"I64","shape":[1],"data_offsets":[8,16]}}'
    header += b" " * (-len(header) % 8)
    seeds["safetensors"] = {"two": struct.pack("<Q", len(header)) + header + bytes(range(16))}
    seeds["idx"] = {"u8": bytes([0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3]) + bytes(range(6)),
                    "f32": bytes([0, 0, 0x0D, 1, 0, 0, 0, 2]) + struct.pack(">ff", 1.5, -2)}
    for reader, files in seeds.items():
        os.makedirs(os.path.join(root, reader), exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(root, reader, name), "wb") as f:
                f.write(data.encode() if isinstance(data, str) else bytes(data))


def c_string(s):
    return '"' + "".join(c if c.isalnum() or c in " ,.-+_:;/<>|'!?#()" else
                         "\\%03o" % ord(c) for c in s) + '"'


if __name__ == "__main__":
    main()
