#!/usr/bin/env python3
"""Writes tests/golden/transforms_golden.h: torchvision.transforms (v1, on tensors) outputs for
fixed float32 images under torch.manual_seed(s) (tests/test_transforms.c compares them bit for
bit), a transformed dataset's batches through DataLoader with 0 and 2 workers, and
StandardScaler's statistics and output.

torchvision is used when installed; otherwise tv_* below are its tensor code paths written
with torch ops (RandomCrop.forward/get_params with F.pad's four modes, RandomHorizontalFlip,
RandomErasing.forward/get_params with F.erase, F.normalize, Compose): the draws are the same
torch calls in the same order. Images: wave(i, k) = sin(1.3 i + 0.7 + k) * 2 + cos(0.37 i)
+ 0.5 k in float64, then float32 (ct_test_wave in tests/test.h). Reads nothing from the network.

    python3 tools/gen_golden_transforms.py   # from the repository root
"""
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "transforms_golden.h")
IMG = (3, 6, 7)
MEAN, STD = (0.1, 0.2, 0.3), (0.5, 0.25, 2.0)


def wave(shape, k):
    n = math.prod(shape)
    v = [math.sin(i * 1.3 + 0.7 + k) * 2 + math.cos(i * 0.37) + 0.5 * k for i in range(n)]
    return torch.tensor(v, dtype=torch.float64).reshape(shape).float()


# ---- torchvision v1's tensor paths --------------------------------------------------------
def tv_pad(img, padding, fill, mode):
    """F.pad on a tensor, padding (left, top, right, bottom)."""
    left, top, right, bottom = padding
    p = [left, right, top, bottom]
    if mode == "constant":
        return F.pad(img, p, mode="constant", value=float(fill))
    if mode == "symmetric":
        h, w = img.shape[-2:]
        xs = list(range(left - 1, -1, -1)) + list(range(w)) + [-(i + 1) for i in range(right)]
        ys = list(range(top - 1, -1, -1)) + list(range(h)) + [-(i + 1) for i in range(bottom)]
        return img[..., torch.tensor(ys)[:, None], torch.tensor(xs)[None, :]]
    shape = img.shape
    x = img.reshape(-1, *shape[-3:]) if img.ndim >= 3 else img[None, None]
    x = F.pad(x, p, mode="replicate" if mode == "edge" else "reflect")
    return x.reshape(*shape[:-2], *x.shape[-2:])


class TvRandomCrop:
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.padding, self.pad_if_needed = padding, pad_if_needed
        self.fill, self.padding_mode = fill, padding_mode

    def __call__(self, img):
        if self.padding is not None:
            pd = self.padding
            pd = [pd] * 4 if isinstance(pd, int) else list(pd) * (2 if len(pd) == 2 else 1)
            img = tv_pad(img, pd, self.fill, self.padding_mode)
        height, width = img.shape[-2:]
        if self.pad_if_needed and width < self.size[1]:
            d = self.size[1] - width
            img = tv_pad(img, [d, 0, d, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            d = self.size[0] - height
            img = tv_pad(img, [0, d, 0, d], self.fill, self.padding_mode)
        h, w = img.shape[-2:]
        th, tw = self.size
        if h < th or w < tw:
            raise ValueError("crop too large")
        if w == tw and h == th:
            return img
        i = torch.randint(0, h - th + 1, size=(1,)).item()
        j = torch.randint(0, w - tw + 1, size=(1,)).item()
        return img[..., i:i + th, j:j + tw]


class TvRandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return img.flip(-1) if torch.rand(1) < self.p else img


class TvRandomErasing:
    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = torch.log(torch.tensor(ratio))
        for _ in range(10):
            erase_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = torch.empty([img_c, h, w], dtype=torch.float32).normal_()
            else:
                v = torch.tensor(value)[:, None, None]
            i = torch.randint(0, img_h - h + 1, size=(1,)).item()
            j = torch.randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def __call__(self, img):
        if torch.rand(1) < self.p:
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            else:
                value = [float(v) for v in self.value]
            i, j, h, w, v = self.get_params(img, self.scale, self.ratio, value)
            if not self.inplace:
                img = img.clone()
            img[..., i:i + h, j:j + w] = v
        return img


class TvNormalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        if not self.inplace:
            tensor = tensor.clone()
        mean = torch.as_tensor(self.mean, dtype=tensor.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=tensor.dtype).view(-1, 1, 1)
        return tensor.sub_(mean).div_(std)


class TvCompose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


def pipeline():
    """The pipeline of the Compose and dataset cases (test_transforms.c builds the same)."""
    return TvCompose([TvRandomCrop(6, padding=2, padding_mode="reflect"),
                      TvRandomHorizontalFlip(), TvNormalize(MEAN, STD),
                      TvRandomErasing(p=0.8, value="random")])


# ---- cases --------------------------------------------------------------------------------
def runs(seed, transform, img, n):
    """n applications of transform to img after torch.manual_seed(seed), flattened, and the
    default generator's next rand bits."""
    torch.manual_seed(seed)
    out = torch.cat([transform(img).reshape(-1) for _ in range(n)])
    return out, bits(torch.rand(()).item())


def bits(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


class Images(Dataset):
    def __init__(self, x, transform):
        self.x, self.transform = x, transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.transform(self.x[i]), torch.tensor(i)


def loader_batches(workers):
    """The batches with the default generator seeded 21 (the transforms' draws without
    workers)."""
    torch.manual_seed(21)
    x = wave((8,) + IMG, 3)
    dl = DataLoader(Images(x, pipeline()), batch_size=3, num_workers=workers,
                    generator=torch.Generator().manual_seed(7))
    return torch.cat([b[0].reshape(-1) for b in dl])


def main():
    img, batch = wave(IMG, 0), wave((2,) + IMG, 1)
    cases = {}
    cases["crop_pad"] = runs(1, TvRandomCrop(5, padding=2), img, 3)
    cases["crop_fill"] = runs(2, TvRandomCrop((4, 6), padding=(1, 2), fill=-2), img, 3)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        cases["crop_" + mode] = runs(3, TvRandomCrop((9, 10), padding=(3, 1, 2, 2),
                                                     pad_if_needed=True, padding_mode=mode),
                                     img, 2)
    cases["crop_batch"] = runs(4, TvRandomCrop(4, padding=1, padding_mode="edge"), batch, 2)
    cases["crop_exact"] = runs(5, TvRandomCrop((6, 7)), img, 1)
    cases["flip"] = runs(6, TvRandomHorizontalFlip(), img, 6)
    cases["flip_batch"] = runs(7, TvRandomHorizontalFlip(0.3), batch, 4)
    cases["erase_zero"] = runs(8, TvRandomErasing(p=1.0), img, 3)
    cases["erase_random"] = runs(9, TvRandomErasing(p=1.0, value="random"), img, 3)
    cases["erase_rgb"] = runs(10, TvRandomErasing(p=0.7, value=(0.1, 0.2, 0.3)), batch, 4)
    cases["erase_large"] = runs(11, TvRandomErasing(p=1.0, scale=(0.8, 1.0)), img, 2)
    cases["normalize"] = runs(12, TvNormalize(MEAN, STD), batch, 1)
    cases["compose"] = runs(13, pipeline(), img, 3)
    workers0, workers2 = loader_batches(0), loader_batches(2)

    # StandardScaler: (10, 4) float32 rows, column 2 constant.
    rows = wave((10, 4), 4)
    rows[:, 2] = 0.7
    var, mean = torch.var_mean(rows.double(), 0, correction=0)
    n, eps = rows.shape[0], np.finfo(np.float64).eps
    scale = torch.where(var <= n * eps * var + (n * mean * eps) ** 2, 1.0, var.sqrt())
    std_out = (rows - mean.float()) / scale.float()
    try:
        from sklearn.preprocessing import StandardScaler
        sk = StandardScaler().fit(rows.numpy())
        assert np.allclose(sk.mean_, mean.numpy(), rtol=1e-12, atol=1e-12)
        assert np.allclose(sk.scale_, scale.numpy(), rtol=1e-12, atol=1e-12)
        assert np.array_equal(sk.transform(rows.numpy()), std_out.numpy())
    except ImportError:
        pass

    with open(OUT, "w") as f:
        f.write("/* GENERATED by tools/gen_golden_transforms.py - do not edit. */\n")
        f.write("#ifndef TRANSFORMS_GOLDEN_H\n#define TRANSFORMS_GOLDEN_H\n\n")

        def arr(name, ctype, items):
            f.write("static const %s %s[%d] = {\n%s\n};\n" % (ctype, name, len(items),
                                                            c_wrap(items, "    ")))

        for name, (out, after) in cases.items():
            arr("tf_golden_" + name, "float", ["%.9g" % v for v in out.tolist()])
            f.write("static const uint32_t tf_golden_%s_after = 0x%08xu;\n" % (name, after))
        arr("tf_golden_loader", "float", ["%.9g" % v for v in workers0.tolist()])
        arr("tf_golden_loader_workers2", "float", ["%.9g" % v for v in workers2.tolist()])
        arr("tf_golden_std_mean", "double", [repr(v) for v in mean.tolist()])
        arr("tf_golden_std_scale", "double", [repr(v) for v in scale.tolist()])
        arr("tf_golden_std_out", "float", ["%.9g" % v for v in std_out.reshape(-1).tolist()])
        f.write("\n#endif\n")


if __name__ == "__main__":
    main()
