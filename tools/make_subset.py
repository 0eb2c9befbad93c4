#!/usr/bin/env python3
"""tools/make_subset.py - writes the small Fashion-MNIST subset shipped in data/fashion-mnist/.

Reads the full gzip-compressed IDX files (default /usr/share/datasets/fashion-mnist) and
writes the FIRST 3000 training and the FIRST 1000 test samples, uncompressed, under the
standard names without .gz, plus a README.md. Uses only the Python standard library.

    python3 tools/make_subset.py [--src DIR] [--out DIR] [--train N] [--test N]
"""
import argparse
import gzip
import os
import struct

ITEM_SIZE = {0x08: 1, 0x09: 1, 0x0B: 2, 0x0C: 4, 0x0D: 4, 0x0E: 8}


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in ITEM_SIZE:
        raise SystemExit(f"{path}: not an IDX file")
    dtype, ndim = raw[2], raw[3]
    dims = list(struct.unpack(">%dI" % ndim, raw[4:4 + 4 * ndim]))
    data = raw[4 + 4 * ndim:]
    row = ITEM_SIZE[dtype]
    for d in dims[1:]:
        row *= d
    if len(data) != row * dims[0]:
        raise SystemExit(f"{path}: data length {len(data)} does not match header {dims}")
    return dtype, dims, data, row


def write_first(src, dst, n):
    dtype, dims, data, row = read_idx(src)
    if n > dims[0]:
        raise SystemExit(f"{src}: has {dims[0]} samples, fewer than {n}")
    dims[0] = n
    with open(dst, "wb") as f:
        f.write(bytes([0, 0, dtype, len(dims)]))
        f.write(struct.pack(">%dI" % len(dims), *dims))
        f.write(data[:n * row])
    print(f"wrote {dst}: {'x'.join(map(str, dims))}")


README = """# Fashion-MNIST subset

The first {train} training samples and the first {test} test samples of
[Fashion-MNIST](https://github.com/zalandoresearch/fashion-mnist) (Zalando Research,
MIT license), so that `make demo` and the tests run with nothing installed.

| file | contents |
|---|---|
| `train-images-idx3-ubyte` | {train}x28x28 uint8 images, training samples 0..{train_last} |
| `train-labels-idx1-ubyte` | {train} uint8 labels in 0..9 |
| `t10k-images-idx3-ubyte` | {test}x28x28 uint8 images, test samples 0..{test_last} |
| `t10k-labels-idx1-ubyte` | {test} uint8 labels in 0..9 |

The files are uncompressed IDX (the MNIST format), read by `ct_idx_load`. The bytes are
exactly the leading records of the official files, with the first dimension of the header
changed. Labels: 0 T-shirt/top, 1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt,
7 Sneaker, 8 Bag, 9 Ankle boot.

Made by `python3 tools/make_subset.py` from the official `*-ubyte.gz` files in
`/usr/share/datasets/fashion-mnist` (pass `--src DIR` for another location). For the full
dataset, download the four `.gz` files from the Fashion-MNIST repository and load them
with `ct_idx_load` (built with `-DCTORCH_ZLIB -lz`) or gunzip them first.

Fashion-MNIST is Copyright (c) 2017 Zalando SE, released under the MIT License:
https://github.com/zalandoresearch/fashion-mnist/blob/master/LICENSE
"""


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--out", default=os.path.join(root, "data", "fashion-mnist"))
    ap.add_argument("--train", type=int, default=3000)
    ap.add_argument("--test", type=int, default=1000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for split, n in (("train", args.train), ("t10k", args.test)):
        for kind in ("images-idx3", "labels-idx1"):
            name = f"{split}-{kind}-ubyte"
            write_first(os.path.join(args.src, name + ".gz"), os.path.join(args.out, name), n)
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(README.format(train=args.train, test=args.test, train_last=args.train - 1,
                              test_last=args.test - 1))


if __name__ == "__main__":
    main()
