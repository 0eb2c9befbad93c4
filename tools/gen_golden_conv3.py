#!/usr/bin/env python3
"""Writes tests/golden/conv3_golden.h: PyTorch's numbers for tests/test_conv3.c.

conv3d and conv_transpose3d (stride, padding ints / 'same' / 'valid', dilation, groups,
depthwise, 1x1x1, output_padding, unbatched, contiguous / transposed / step-sliced input,
float32 and float64), F.unfold and F.fold (every option, unbatched, non-contiguous input),
and the conv modules' padding_mode ('reflect', 'replicate', 'circular', with int and 'same'
padding): outputs and the gradients of sum(out * g) for g[k] = (k % 7 - 3) / 4 with respect
to every input; the modules' initial weights come from torch.manual_seed(seed) (Conv3d's
init is checked too).
Run with PyTorch installed:
python3 tools/gen_golden_conv3.py
"""
import os
import warnings

import torch
import torch.nn.functional as F

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "conv3_golden.h")
CONV3D, CONVT3D = 0, 1
UNFOLD, FOLD = 0, 1
CONTIG, TRANSPOSED, STEP = 0, 1, 2
EXPLICIT, VALID, SAME = 0, 1, 2
MODES = {"zeros": 0, "reflect": 1, "replicate": 2, "circular": 3}
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64")}


def values(shape, phase, dtype, scale=1.5):
    """Deterministic values the header carries (no RNG needed on either side)."""
    n = 1
    for s in shape:
        n *= s
    v = torch.sin(torch.arange(n, dtype=torch.float64) * 0.77 + phase) * scale
    return v.to(dtype).reshape(shape)


def layout_input(shape, lay, dtype):
    """The input: values over a base whose layout view has `shape`."""
    s = list(shape)
    if lay == TRANSPOSED:
        s[-1], s[-2] = s[-2], s[-1]
    elif lay == STEP:
        s[-1] *= 2
    b = values(s, 0.3, dtype)
    if lay == TRANSPOSED:
        return b.transpose(-1, -2)
    if lay == STEP:
        return b[..., ::2]
    return b


def grad_of(y):
    return ((torch.arange(y.numel()) % 7 - 3).to(y.dtype) / 4).reshape(y.shape)


def arr(name, t):
    fmt = "%.13g" if t.dtype == torch.float64 else "%.9g"
    items = [fmt % v for v in t.detach().reshape(-1).tolist()] or ["0"]
    return "static const double %s[] = {\n%s\n};\n" % (name, c_wrap(items, "    ", ""))


def ints(v, n):
    v = list(v) + [0] * (n - len(v))
    return "{" + ", ".join(str(x) for x in v) + "}"


def triple(v):
    return [v] * 3 if isinstance(v, int) else list(v)


def conv_case(out, k, name, kind, dt, xshape, wshape, bias=True, stride=1, padding=0,
              dilation=1, groups=1, output_padding=0, lay=CONTIG):
    dtype = DTYPES[dt][0]
    x = layout_input(xshape, lay, dtype).detach().requires_grad_(True)
    w = values(wshape, 1.1, dtype, 0.75).requires_grad_(True)
    b = values([wshape[1] * groups if kind == CONVT3D else wshape[0]], 2.0, dtype)
    b.requires_grad_(True)
    pad_type, pad = EXPLICIT, padding
    if padding in ("same", "valid"):
        pad_type, pad = (SAME if padding == "same" else VALID), 0
    if kind == CONV3D:
        y = F.conv3d(x, w, b if bias else None, stride=stride, padding=padding,
                     dilation=dilation, groups=groups)
    else:
        y = F.conv_transpose3d(x, w, b if bias else None, stride=stride, padding=padding,
                               output_padding=output_padding, groups=groups, dilation=dilation)
    (y * grad_of(y)).sum().backward()
    p = "c3d%d_" % k
    out.append(arr(p + "out", y) + arr(p + "gx", x.grad) + arr(p + "gw", w.grad) +
               arr(p + "gb", b.grad if bias else torch.zeros(0, dtype=dtype)))
    return ("    {\"%s\", %d, %s, %d, %d, %s, %s, %d, %s, %s, %d, %s, %s, %d, %d, %s,\n"
            "     %s, %s, %s, %s}," %
            (name, kind, DTYPES[dt][1], lay, len(xshape), ints(xshape, 5), ints(wshape, 5),
             int(bias), ints(triple(stride), 3), ints(triple(pad), 3), pad_type,
             ints(triple(dilation), 3), ints(triple(output_padding), 3), groups, y.dim(),
             ints(y.shape, 5), p + "out", p + "gx", p + "gw", p + "gb"))


CONV_CASES = [
    ("conv3d_basic", CONV3D, "f64", [2, 2, 3, 3, 3], [2, 2, 2, 2, 2], {}),
    ("conv3d_basic_f32", CONV3D, "f32", [2, 2, 3, 3, 3], [2, 2, 2, 2, 2], {}),
    ("conv3d_opts", CONV3D, "f64", [1, 4, 4, 3, 4], [4, 2, 2, 2, 2],
     dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)),
    ("conv3d_depthwise", CONV3D, "f32", [1, 3, 3, 3, 4], [3, 1, 2, 2, 2],
     dict(groups=3, padding=1)),
    ("conv3d_1x1", CONV3D, "f64", [2, 3, 2, 3, 3], [2, 3, 1, 1, 1], {}),
    ("conv3d_same", CONV3D, "f64", [1, 2, 3, 4, 4], [2, 2, 2, 3, 2], dict(padding="same")),
    ("conv3d_valid_nobias", CONV3D, "f64", [1, 2, 3, 4, 3], [2, 2, 2, 2, 2],
     dict(padding="valid", bias=False)),
    ("conv3d_unbatched", CONV3D, "f64", [2, 3, 3, 3], [2, 2, 2, 2, 2], dict(padding=1)),
    ("conv3d_transposed_in", CONV3D, "f64", [1, 2, 3, 3, 4], [2, 2, 2, 2, 2],
     dict(padding=(0, 1, 1), lay=TRANSPOSED)),
    ("conv3d_step_in", CONV3D, "f32", [1, 2, 3, 4, 5], [2, 2, 2, 2, 2],
     dict(stride=(1, 1, 2), lay=STEP)),
    ("convt3d_basic", CONVT3D, "f64", [1, 2, 2, 3, 2], [2, 3, 2, 2, 2], {}),
    ("convt3d_basic_f32", CONVT3D, "f32", [1, 2, 2, 2, 3], [2, 2, 3, 2, 2],
     dict(stride=2, padding=1, output_padding=1)),
    ("convt3d_opts", CONVT3D, "f64", [1, 4, 2, 2, 2], [4, 1, 2, 2, 2],
     dict(stride=(2, 1, 3), padding=(0, 1, 1), dilation=(1, 2, 1), groups=2,
          output_padding=(1, 1, 2))),
    ("convt3d_dil_outpad", CONVT3D, "f64", [1, 2, 2, 2, 2], [2, 1, 2, 2, 2],
     dict(dilation=3, output_padding=2, bias=False)),
    ("convt3d_unbatched", CONVT3D, "f64", [2, 2, 2, 3], [2, 2, 2, 2, 2], dict(stride=2)),
    ("convt3d_transposed_in", CONVT3D, "f64", [1, 2, 2, 3, 3], [2, 2, 2, 2, 2],
     dict(padding=1, lay=TRANSPOSED)),
]


def fold_case(out, k, name, kind, dt, xshape, ks, output_size=(0, 0), dilation=1, padding=0,
              stride=1, lay=CONTIG):
    dtype = DTYPES[dt][0]
    x = layout_input(xshape, lay, dtype).detach().requires_grad_(True)
    kw = dict(dilation=dilation, padding=padding, stride=stride)
    if kind == UNFOLD:
        y = F.unfold(x, ks, **kw)
    else:
        y = F.fold(x, output_size, ks, **kw)
    (y * grad_of(y)).sum().backward()
    p = "fold%d_" % k

    def pair(v):
        return [v, v] if isinstance(v, int) else list(v)
    out.append(arr(p + "out", y) + arr(p + "gx", x.grad))
    return ("    {\"%s\", %d, %s, %d, %d, %s, %s, %s, %s, %s, %s, %d, %s, %s, %s}," %
            (name, kind, DTYPES[dt][1], lay, len(xshape), ints(xshape, 4), ints(pair(ks), 2),
             ints(list(output_size), 2), ints(pair(dilation), 2), ints(pair(padding), 2),
             ints(pair(stride), 2), y.dim(), ints(y.shape, 4), p + "out", p + "gx"))


FOLD_CASES = [
    ("unfold_basic", UNFOLD, "f64", [2, 2, 3, 4], (2, 3), {}),
    ("unfold_basic_f32", UNFOLD, "f32", [2, 2, 3, 4], (2, 3), {}),
    ("unfold_opts", UNFOLD, "f64", [1, 2, 6, 5], (3, 2),
     dict(dilation=(2, 1), padding=(1, 2), stride=(2, 3))),
    ("unfold_unbatched", UNFOLD, "f64", [2, 4, 4], 2, dict(stride=2)),
    ("unfold_transposed_in", UNFOLD, "f32", [1, 2, 3, 4], 2, dict(padding=1, lay=TRANSPOSED)),
    ("unfold_step_in", UNFOLD, "f64", [1, 2, 3, 4], 2, dict(lay=STEP)),
    ("fold_basic", FOLD, "f64", [2, 6, 9], (2, 3), dict(output_size=(4, 5))),
    ("fold_basic_f32", FOLD, "f32", [2, 6, 9], (2, 3), dict(output_size=(4, 5))),
    ("fold_opts", FOLD, "f64", [1, 12, 6], (3, 2),
     dict(output_size=(6, 5), dilation=(2, 1), padding=(1, 2), stride=(2, 3))),
    ("fold_unbatched", FOLD, "f64", [8, 4], 2, dict(output_size=(4, 4), stride=2)),
    ("fold_transposed_in", FOLD, "f64", [2, 8, 16], 2,
     dict(output_size=(3, 3), padding=1, stride=1, lay=TRANSPOSED)),
]


def mode_case(out, k, name, dims, mode, seed, cin, cout, ks, xshape, padding=0, **kw):
    torch.manual_seed(seed)
    cls = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[dims]
    m = cls(cin, cout, ks, padding=padding, padding_mode=mode, **kw).double()
    x = values(xshape, 0.3, torch.float64).requires_grad_(True)
    y = m(x)
    (y * grad_of(y)).sum().backward()
    p = "mode%d_" % k
    pad_type, pad = EXPLICIT, padding
    if padding in ("same", "valid"):
        pad_type, pad = (SAME if padding == "same" else VALID), 0
    out.append(arr(p + "out", y) + arr(p + "gx", x.grad) + arr(p + "gw", m.weight.grad) +
               arr(p + "gb", m.bias.grad))
    return ("    {\"%s\", %d, %d, %d, %d, %d, %s, %d, %s, %s, %d, %s, %s, %d, %s,\n"
            "     %s, %s, %s, %s}," %
            (name, dims, MODES[mode], seed, cin, cout, ints(triple(ks)[:dims], 3), len(xshape),
             ints(xshape, 5), ints(triple(pad)[:dims], 3), pad_type,
             ints(triple(kw.get("stride", 1))[:dims], 3),
             ints(triple(kw.get("dilation", 1))[:dims], 3), y.dim(), ints(y.shape, 5),
             p + "out", p + "gx", p + "gw", p + "gb"))


MODE_CASES = [
    ("conv2d_reflect", 2, "reflect", 1, 2, 3, 3, [1, 2, 4, 4], dict(padding=1)),
    ("conv2d_replicate_hw", 2, "replicate", 2, 2, 2, (3, 2), [1, 2, 4, 5],
     dict(padding=(2, 1), stride=2)),
    ("conv2d_circular", 2, "circular", 3, 2, 2, 3, [2, 2, 4, 4], dict(padding=(1, 2))),
    ("conv2d_reflect_same", 2, "reflect", 4, 2, 2, (4, 3), [1, 2, 5, 5],
     dict(padding="same", dilation=(1, 2))),
    ("conv1d_circular", 1, "circular", 5, 2, 3, 3, [2, 2, 6], dict(padding=2)),
    ("conv1d_replicate_unbatched", 1, "replicate", 6, 2, 2, 2, [2, 5], dict(padding=1)),
    ("conv3d_replicate", 3, "replicate", 7, 2, 2, 2, [1, 2, 2, 3, 3], dict(padding=1)),
    ("conv3d_circular_same", 3, "circular", 8, 1, 2, (2, 3, 2), [1, 1, 3, 4, 3],
     dict(padding="same")),
]


def main():
    warnings.filterwarnings("ignore", "Using padding='same'")
    out, conv_rows, fold_rows, mode_rows = [], [], [], []
    for k, (name, kind, dt, xs, ws, opts) in enumerate(CONV_CASES):
        conv_rows.append(conv_case(out, k, name, kind, dt, xs, ws, **opts))
    for k, (name, kind, dt, xs, ks, opts) in enumerate(FOLD_CASES):
        fold_rows.append(fold_case(out, k, name, kind, dt, xs, ks, **opts))
    for k, (name, dims, mode, seed, cin, cout, ks, xs, opts) in enumerate(MODE_CASES):
        mode_rows.append(mode_case(out, k, name, dims, mode, seed, cin, cout, ks, xs, **opts))
    torch.manual_seed(5)
    m = torch.nn.Conv3d(4, 6, (2, 3, 2), groups=2)
    out.append(arr("init_conv3d_w", m.weight) + arr("init_conv3d_b", m.bias))
    with open(OUT, "w") as f:
        f.write("/* Generated by tools/gen_golden_conv3.py with PyTorch %s - do not edit. */\n"
                % torch.__version__)
        f.write("/* conv kind 0 conv3d, 1 conv_transpose3d; fold kind 0 unfold, 1 fold; layout 0\n"
                "   contiguous, 1 transposed (base has the last two dims swapped), 2 step-sliced\n"
                "   (base's last dim doubled, every second element); padding_type 0 ints,\n"
                "   1 'valid', 2 'same'; padding_mode 0 zeros, 1 reflect, 2 replicate,\n"
                "   3 circular. Inputs (not stored): the base of x has values\n"
                "   sin(0.77 k + 0.3) * 1.5, weight sin(0.77 k + 1.1) * 0.75, bias\n"
                "   sin(0.77 k + 2.0) * 1.5 (k: the contiguous index; float32 rounds them);\n"
                "   the modules' parameters: torch.manual_seed(seed) then the constructor\n"
                "   (float64 copies of the float32 init). init_conv3d: Conv3d(4, 6, (2, 3, 2),\n"
                "   groups=2) after torch.manual_seed(5). */\n")
        f.write("typedef struct conv3_golden {\n"
                "    const char *name;\n    int kind;\n    ct_dtype dtype;\n    int layout;\n"
                "    int xnd;\n    int64_t xshape[5], wshape[5];\n    int bias;\n"
                "    int64_t stride[3], padding[3];\n    int padding_type;\n"
                "    int64_t dilation[3], output_padding[3], groups;\n    int ond;\n"
                "    int64_t oshape[5];\n    const double *out, *gx, *gw, *gb;\n"
                "} conv3_golden;\n\n")
        f.write("typedef struct fold_golden {\n"
                "    const char *name;\n    int kind;\n    ct_dtype dtype;\n    int layout;\n"
                "    int xnd;\n    int64_t xshape[4], kernel[2], output_size[2];\n"
                "    int64_t dilation[2], padding[2], stride[2];\n    int ond;\n"
                "    int64_t oshape[4];\n    const double *out, *gx;\n} fold_golden;\n\n")
        f.write("typedef struct conv_mode_golden {\n"
                "    const char *name;\n    int dims, padding_mode;\n    uint64_t seed;\n"
                "    int64_t cin, cout, kernel[3];\n    int xnd;\n    int64_t xshape[5];\n"
                "    int64_t padding[3];\n    int padding_type;\n"
                "    int64_t stride[3], dilation[3];\n    int ond;\n    int64_t oshape[5];\n"
                "    const double *out, *gx, *gw, *gb;\n} conv_mode_golden;\n\n")
        f.write("".join(out))
        f.write("\nstatic const conv3_golden conv3_cases[] = {\n" + "\n".join(conv_rows) +
                "\n};\n")
        f.write("\nstatic const fold_golden fold_cases[] = {\n" + "\n".join(fold_rows) +
                "\n};\n")
        f.write("\nstatic const conv_mode_golden conv_mode_cases[] = {\n" +
                "\n".join(mode_rows) + "\n};\n")


if __name__ == "__main__":
    main()
