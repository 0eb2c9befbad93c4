#!/usr/bin/env python3
"""Writes tests/golden/conv_golden.h: PyTorch's numbers for tests/test_conv.c.

conv1d, conv2d, conv_transpose1d and conv_transpose2d with stride, padding (ints, 'same',
'valid'), dilation, groups (depthwise included), 1x1 kernels, output_padding, unbatched
input, contiguous, transposed and step-sliced inputs, float32 and float64 (one float16 and
one bfloat16 case): the output and the gradients of sum(out * g) for g[k] = (k % 7 - 3) / 4
(g in out's contiguous order) with respect to input, weight and bias. Also the initial
weights of nn.Conv1d, nn.Conv2d and nn.ConvTranspose2d after torch.manual_seed.
Run with PyTorch installed:
python3 tools/gen_golden_conv.py
"""
import os
import warnings

import torch
import torch.nn.functional as F

from golden_c import c_wrap

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "conv_golden.h")
CONV1D, CONV2D, CONVT1D, CONVT2D = 0, 1, 2, 3
CONTIG, TRANSPOSED, STEP = 0, 1, 2
EXPLICIT, VALID, SAME = 0, 1, 2
DTYPES = {"f32": (torch.float32, "CT_FLOAT32"), "f64": (torch.float64, "CT_FLOAT64"),
          "f16": (torch.float16, "CT_FLOAT16"), "bf16": (torch.bfloat16, "CT_BFLOAT16")}
FNS = {CONV1D: F.conv1d, CONV2D: F.conv2d, CONVT1D: F.conv_transpose1d,
       CONVT2D: F.conv_transpose2d}


def values(shape, phase, dtype):
    """Deterministic values the header carries (no RNG needed on either side)."""
    n = 1
    for s in shape:
        n *= s
    v = torch.sin(torch.arange(n, dtype=torch.float64) * 0.77 + phase) * 1.5
    return v.to(dtype).reshape(shape)


def base_of(shape, lay):
    """The base tensor's shape whose layout view has `shape`."""
    s = list(shape)
    if lay == TRANSPOSED:
        s[-1], s[-2] = s[-2], s[-1]
    elif lay == STEP:
        s[-1] *= 2
    return s


def view_of(base, lay):
    if lay == TRANSPOSED:
        return base.transpose(-1, -2)
    if lay == STEP:
        return base[..., ::2]
    return base


def arr(name, t):
    fmt = "%.13g" if t.dtype == torch.float64 else "%.9g"
    items = [fmt % v for v in t.detach().reshape(-1).tolist()] or ["0"]
    return "static const double %s[] = {\n%s\n};\n" % (name, c_wrap(items, "    ", ""))


def ints(v, n=4):
    v = list(v) + [0] * (n - len(v))
    return "{" + ", ".join(str(x) for x in v) + "}"


def case(out, k, name, kind, dt, xshape, wshape, bias=True, stride=1, padding=0, dilation=1,
         groups=1, output_padding=0, lay=CONTIG):
    dtype = DTYPES[dt][0]
    nsp = 1 if kind in (CONV1D, CONVT1D) else 2
    xb = values(base_of(xshape, lay), 0.3, dtype)
    x = view_of(xb, lay).detach().requires_grad_(True)
    w = values(wshape, 1.1, dtype).mul_(0.5).requires_grad_(True)
    b = values([wshape[1] * groups if kind >= CONVT1D else wshape[0]], 2.0, dtype)
    b.requires_grad_(True)
    pad_type, pad = EXPLICIT, padding
    if padding in ("same", "valid"):
        pad_type, pad = (SAME if padding == "same" else VALID), 0
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    if kind >= CONVT1D:
        kw["output_padding"] = output_padding
    y = FNS[kind](x, w, b if bias else None, **kw)
    g = ((torch.arange(y.numel()) % 7 - 3).to(dtype) / 4).reshape(y.shape)
    (y * g).sum().backward()

    def pair(v):
        return [v, v] if isinstance(v, int) else list(v)
    p = "c%d_" % k
    out.append(arr(p + "out", y) +
               arr(p + "gx", x.grad) + arr(p + "gw", w.grad) +
               arr(p + "gb", b.grad if bias else torch.zeros(0, dtype=dtype)))
    return ("    {\"%s\", %d, %s, %d, %d, %s, %d, %s, %d, %s, %s, %d, %s, %s, %d, %d, %s,\n"
            "     %s, %s, %s, %s}," %
            (name, kind, DTYPES[dt][1], lay, len(xshape),
             ints(xshape), len(wshape), ints(wshape), int(bias), ints(pair(stride)[:nsp], 2),
             ints(pair(pad)[:nsp], 2), pad_type, ints(pair(dilation)[:nsp], 2),
             ints(pair(output_padding)[:nsp], 2), groups, y.dim(), ints(y.shape),
             p + "out", p + "gx", p + "gw", p + "gb"))


CASES = [
    # name, kind, dtype, input shape, weight shape, options
    ("conv2d_basic", CONV2D, "f64", [2, 3, 5, 4], [2, 3, 3, 3], {}),
    ("conv2d_basic_f32", CONV2D, "f32", [2, 3, 5, 4], [2, 3, 3, 3], {}),
    ("conv2d_pad1", CONV2D, "f32", [1, 3, 4, 4], [2, 3, 3, 3], dict(padding=1)),
    ("conv2d_stride2", CONV2D, "f64", [2, 2, 5, 4], [2, 2, 3, 3], dict(stride=2, padding=1)),
    ("conv2d_stride_pad_hw", CONV2D, "f64", [1, 2, 5, 4], [2, 2, 2, 3],
     dict(stride=(2, 1), padding=(1, 2))),
    ("conv2d_dilation2", CONV2D, "f64", [1, 2, 6, 5], [2, 2, 3, 2], dict(dilation=2, padding=1)),
    ("conv2d_groups2", CONV2D, "f64", [1, 4, 4, 4], [4, 2, 3, 3], dict(groups=2, padding=1)),
    ("conv2d_depthwise", CONV2D, "f32", [2, 3, 4, 4], [3, 1, 3, 3], dict(groups=3, padding=1)),
    ("conv2d_depthwise_mult", CONV2D, "f64", [1, 2, 4, 4], [4, 1, 3, 3], dict(groups=2)),
    ("conv2d_depthwise_opts", CONV2D, "f64", [2, 3, 6, 5], [3, 1, 3, 2],
     dict(groups=3, stride=(2, 1), padding=(1, 2), dilation=(1, 2), lay=TRANSPOSED)),
    ("conv2d_1x1", CONV2D, "f32", [2, 4, 3, 3], [3, 4, 1, 1], {}),
    ("conv2d_1x1_groups", CONV2D, "f64", [1, 4, 3, 3], [4, 2, 1, 1], dict(groups=2)),
    ("conv2d_1x1_stride2", CONV2D, "f64", [1, 3, 5, 5], [2, 3, 1, 1], dict(stride=2)),
    ("conv2d_same", CONV2D, "f64", [1, 2, 4, 5], [2, 2, 3, 3], dict(padding="same")),
    ("conv2d_same_even", CONV2D, "f64", [1, 2, 4, 5], [2, 2, 4, 2], dict(padding="same")),
    ("conv2d_same_dil", CONV2D, "f32", [1, 2, 5, 5], [2, 2, 3, 2],
     dict(padding="same", dilation=(2, 3))),
    ("conv2d_valid", CONV2D, "f64", [1, 2, 4, 5], [2, 2, 3, 3], dict(padding="valid")),
    ("conv2d_nobias", CONV2D, "f64", [2, 3, 3, 3], [2, 3, 2, 2], dict(bias=False)),
    ("conv2d_unbatched", CONV2D, "f64", [3, 4, 4], [2, 3, 3, 3], dict(padding=1)),
    ("conv2d_transposed_in", CONV2D, "f64", [2, 2, 4, 5], [3, 2, 3, 3],
     dict(padding=1, lay=TRANSPOSED)),
    ("conv2d_step_in", CONV2D, "f32", [2, 3, 5, 4], [2, 3, 3, 3], dict(stride=2, lay=STEP)),
    ("conv2d_1x1_transposed_in", CONV2D, "f64", [2, 3, 3, 4], [2, 3, 1, 1],
     dict(lay=TRANSPOSED)),
    ("conv1d_basic", CONV1D, "f64", [2, 3, 7], [4, 3, 3], {}),
    ("conv1d_opts", CONV1D, "f32", [2, 4, 9], [4, 2, 3],
     dict(stride=2, padding=2, dilation=2, groups=2)),
    ("conv1d_same", CONV1D, "f64", [2, 2, 6], [3, 2, 4], dict(padding="same")),
    ("conv1d_unbatched", CONV1D, "f64", [3, 6], [2, 3, 3], dict(padding=1)),
    ("conv1d_step_in", CONV1D, "f64", [2, 3, 6], [2, 3, 2], dict(lay=STEP)),
    ("convt2d_basic", CONVT2D, "f64", [1, 3, 3, 3], [3, 2, 3, 3], {}),
    ("convt2d_stride2", CONVT2D, "f32", [1, 3, 3, 4], [3, 2, 3, 3],
     dict(stride=2, padding=1, output_padding=1)),
    ("convt2d_opts", CONVT2D, "f64", [1, 4, 3, 3], [4, 1, 3, 2],
     dict(stride=(2, 3), padding=(1, 0), dilation=(1, 2), groups=2, output_padding=(1, 2))),
    ("convt2d_dil_outpad", CONVT2D, "f64", [1, 2, 2, 3], [2, 1, 2, 2],
     dict(dilation=3, output_padding=2)),
    ("convt2d_unbatched", CONVT2D, "f64", [2, 2, 3], [2, 2, 2, 2], dict(stride=2)),
    ("convt2d_transposed_in", CONVT2D, "f64", [1, 2, 3, 4], [2, 2, 3, 3],
     dict(padding=1, lay=TRANSPOSED)),
    ("convt2d_depthwise", CONVT2D, "f64", [2, 3, 3, 3], [3, 1, 3, 3],
     dict(groups=3, stride=2, padding=1, output_padding=1)),
    ("convt2d_1x1", CONVT2D, "f32", [2, 3, 3, 3], [3, 2, 1, 1], dict(bias=False)),
    ("convt1d_basic", CONVT1D, "f64", [2, 3, 4], [3, 2, 3], dict(stride=2, output_padding=1)),
    ("convt1d_groups", CONVT1D, "f32", [1, 4, 5], [4, 3, 2], dict(groups=2, padding=1)),
    ("conv2d_f16", CONV2D, "f16", [1, 2, 4, 4], [2, 2, 3, 3], dict(padding=1)),
    ("convt2d_bf16", CONVT2D, "bf16", [1, 2, 3, 3], [2, 2, 2, 2], dict(stride=2)),
]


def init_case(out, name, make, seed):
    torch.manual_seed(seed)
    m = make()
    lines = []
    w = m.weight.detach()
    b = m.bias.detach()
    out.append(arr("init_%s_w" % name, w) + arr("init_%s_b" % name, b))
    lines.append("    {\"%s\", %d, init_%s_w, %d, init_%s_b, %d}," %
                 (name, seed, name, w.numel(), name, b.numel()))
    return lines


def main():
    warnings.filterwarnings("ignore", "Using padding='same'")
    out, rows = [], []
    for k, (name, kind, dt, xs, ws, opts) in enumerate(CASES):
        rows.append(case(out, k, name, kind, dt, xs, ws, **opts))
    init_rows = []
    init_rows += init_case(out, "conv2d", lambda: torch.nn.Conv2d(3, 4, 3), 0)
    init_rows += init_case(out, "conv2d_groups", lambda: torch.nn.Conv2d(4, 6, (3, 2), groups=2), 7)
    init_rows += init_case(out, "conv1d", lambda: torch.nn.Conv1d(4, 5, 3), 42)
    init_rows += init_case(out, "convt2d", lambda: torch.nn.ConvTranspose2d(4, 6, (2, 3),
                                                                          groups=2), 1)
    with open(OUT, "w") as f:
        f.write("/* Generated by tools/gen_golden_conv.py with PyTorch %s - do not edit. */\n"
                % torch.__version__)
        f.write("/* kind 0 conv1d, 1 conv2d, 2 conv_transpose1d, 3 conv_transpose2d; layout 0\n"
                "   contiguous, 1 transposed (base has the last two dims swapped), 2 step-sliced\n"
                "   (base's last dim doubled, every second element); padding_type 0 ints,\n"
                "   1 'valid', 2 'same'. Inputs (not stored): the base of x has values\n"
                "   sin(0.77 k + 0.3) * 1.5, weight sin(0.77 k + 1.1) * 0.75, bias\n"
                "   sin(0.77 k + 2.0) * 1.5 (k: the contiguous index; float32 rounds them). */\n")
        f.write("typedef struct conv_golden {\n"
                "    const char *name;\n    int kind;\n    ct_dtype dtype;\n    int layout;\n"
                "    int xnd;\n    int64_t xshape[4];\n    int wnd;\n    int64_t wshape[4];\n"
                "    int bias;\n    int64_t stride[2], padding[2];\n    int padding_type;\n"
                "    int64_t dilation[2], output_padding[2], groups;\n    int ond;\n"
                "    int64_t oshape[4];\n"
                "    const double *out, *gx, *gw, *gb;\n} conv_golden;\n\n")
        f.write("typedef struct conv_init_golden {\n    const char *name;\n    uint64_t seed;\n"
                "    const double *w;\n    int64_t wn;\n    const double *b;\n    int64_t bn;\n"
                "} conv_init_golden;\n\n")
        f.write("".join(out))
        f.write("\nstatic const conv_golden conv_cases[] = {\n" + "\n".join(rows) + "\n};\n")
        f.write("\nstatic const conv_init_golden conv_inits[] = {\n" + "\n".join(init_rows) +
                "\n};\n")


if __name__ == "__main__":
    main()
