#!/usr/bin/env python3
"""Writes tests/golden/sampler_golden.h: PyTorch's sampler index streams and DataLoader batch
orders (tests/test_dataloader.c compares them index for index).

Every stream is one int64 array (passes concatenated); rand bits are float32 bit patterns.
The DataLoader orders are taken with 0, 1, 2 and 4 worker processes and checked here to be
the same (PyTorch's in-order delivery); the values a dataset draws from its worker's default
generator (seeded base_seed + worker_id) are kept per worker count.
Reads nothing from the network.

    python3 tools/gen_golden_sampler.py   # from the repository root
"""
import os
import struct
import warnings

import torch
from torch.utils.data import (BatchSampler, DataLoader, Dataset, RandomSampler,
                              SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                              random_split)
from torch.utils.data.distributed import DistributedSampler

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "sampler_golden.h")
WEIGHTS = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
SUBSET = [5, 9, 2, 14, 7, 30]
LOADER_N, LOADER_BATCH = 23, 4


def gen(seed):
    return torch.Generator().manual_seed(seed)


def passes(sampler, n):
    """n passes of a sampler, concatenated (batches flattened)."""
    out = []
    for _ in range(n):
        for item in sampler:
            out += item if isinstance(item, list) else [item]
    return out


def bits(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def after_default():
    """The default generator's next float32 after the stream, as bits."""
    return bits(torch.rand(()).item())


def sampler_streams():
    s = {}
    data = range(10)
    s["random"] = passes(RandomSampler(data, generator=gen(3)), 2)
    s["random_num25"] = passes(RandomSampler(data, num_samples=25, generator=gen(3)), 1)
    torch.manual_seed(5)
    s["random_default"] = passes(RandomSampler(data), 2)
    s["random_default_after"] = [after_default()]
    s["random_repl70"] = passes(RandomSampler(data, True, 70, generator=gen(4)), 1)
    torch.manual_seed(5)
    s["random_repl_default"] = passes(RandomSampler(data, True), 2)
    s["random_repl_default_after"] = [after_default()]
    s["subset_stream"] = passes(SubsetRandomSampler(SUBSET, generator=gen(6)), 2)
    s["weighted_repl"] = passes(WeightedRandomSampler(WEIGHTS, 12, True, generator=gen(7)), 2)
    s["weighted_norepl"] = passes(WeightedRandomSampler(WEIGHTS, 5, False, generator=gen(7)), 1)
    torch.manual_seed(9)
    s["weighted_default"] = passes(WeightedRandomSampler(WEIGHTS, 7), 1)
    s["weighted_default_after"] = [after_default()]
    for drop in (False, True):
        sampler = BatchSampler(RandomSampler(data, generator=gen(8)), 3, drop)
        s["batch_drop%d" % drop] = passes(sampler, 2)
        s["batch_drop%d_len" % drop] = [len(b) for b in sampler]
    parts = random_split(range(17), [0.5, 0.3, 0.2], generator=gen(19))
    s["split_fractions"] = [i for p in parts for i in p.indices]
    s["split_fractions_len"] = [len(p) for p in parts]
    return s


def distributed_streams():
    """DistributedSampler over 11 (and 2) samples: every rank, epochs 0 and 1."""
    s = {}
    for name, n, reps, shuffle, drop in (("d11_r4", 11, 4, True, False),
                                         ("d11_r4_drop", 11, 4, True, True),
                                         ("d11_r4_noshuf", 11, 4, False, False),
                                         ("d2_r5", 2, 5, True, False)):
        out = []
        for rank in range(reps):
            for epoch in (0, 1):
                d = DistributedSampler(range(n), reps, rank, shuffle, seed=17, drop_last=drop)
                d.set_epoch(epoch)
                out += list(d)
        s[name] = out
    return s


class RandDataset(Dataset):
    """Sample i = (i, a float32 drawn from the current default generator)."""

    def __len__(self):
        return LOADER_N

    def __getitem__(self, i):
        return torch.tensor(i), torch.rand(())


def loader_ids(loader, epochs):
    ids, draws = [], []
    for _ in range(epochs):
        for batch in loader:
            ids += batch[0].tolist()
            if len(batch) > 1 and batch[1].dtype == torch.float32:
                draws += [bits(v) for v in batch[1].tolist()]
    return ids, draws


def loader_streams():
    """DataLoader orders (and worker-drawn values) for the same seed."""
    s = {}
    base = TensorDataset(torch.arange(LOADER_N))
    for workers in (0, 1, 2, 4):
        out = {}
        torch.manual_seed(11)
        dl = DataLoader(base, LOADER_BATCH, shuffle=True, num_workers=workers)
        out["loader_shuffle"] = loader_ids(dl, 2)[0]
        out["loader_shuffle_after"] = [after_default()]
        dl = DataLoader(base, LOADER_BATCH, sampler=WeightedRandomSampler(
            (WEIGHTS * 4)[:LOADER_N], 19, generator=gen(12)), num_workers=workers)
        out["loader_weighted"] = loader_ids(dl, 2)[0]
        ranks = []
        for rank in range(3):
            d = DistributedSampler(base, 3, rank, seed=13)
            dl = DataLoader(base, LOADER_BATCH, sampler=d, num_workers=workers)
            for epoch in (0, 1):
                d.set_epoch(epoch)
                ranks += loader_ids(dl, 1)[0]
        out["loader_dist"] = ranks
        torch.manual_seed(14)
        dl = DataLoader(RandDataset(), 3, shuffle=True, num_workers=workers,
                        generator=gen(15))
        out["loader_rand_ids"], out["loader_rand_bits_w%d" % workers] = loader_ids(dl, 1)
        if workers:
            torch.manual_seed(16)
            dl = DataLoader(RandDataset(), 3, shuffle=True, num_workers=workers,
                            persistent_workers=True)
            out["loader_persist_ids"], out["loader_persist_bits_w%d" % workers] = \
                loader_ids(dl, 2)
            out["loader_persist_after"] = [after_default()]
        for k, v in out.items():
            assert k not in s or s[k] == v, (k, workers)
            s[k] = v
    return s


def emit(name, values):
    u32 = name.endswith("after") or "bits" in name
    ctype = "uint32_t" if u32 else "int64_t"
    items = ["%du" % v if u32 else "%d" % v for v in values]
    return "static const %s sampler_golden_%s[] = {\n%s\n};" % (ctype, name,
                                                               c_wrap(items, "    "))


def main():
    warnings.filterwarnings("ignore", "This DataLoader will create")
    streams = {}
    streams.update(sampler_streams())
    streams.update(distributed_streams())
    streams.update(loader_streams())
    lines = ["/* tests/golden/sampler_golden.h - generated by tools/gen_golden_sampler.py from "
             "torch %s; do not edit. */" % torch.__version__,
             "#define SAMPLER_LOADER_N %d" % LOADER_N,
             "#define SAMPLER_LOADER_BATCH %d" % LOADER_BATCH,
             "static const double sampler_golden_weights[] = {%s};" %
             ", ".join(repr(w) for w in WEIGHTS),
             "static const int64_t sampler_golden_subset[] = {%s};" %
             ", ".join(str(i) for i in SUBSET)]
    for name, values in streams.items():
        lines.append(emit(name, values))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
