#!/usr/bin/env python3
"""tools/gen_golden.py - writes the PyTorch golden fixtures of tests/test_ops.c.

    python3 tools/gen_golden.py [--out tests/golden]

Needs torch and numpy (developers only: the fixtures are committed, users never run this).
Deterministic and re-runnable: every input comes from numpy.random.RandomState seeded with
the CRC-32 of the case name, random ops use torch.manual_seed(seed), and the whole output
directory is rewritten (old *.npy files are removed first).

Files are named <case>.<role>.npy:
    a, b, c, d      inputs, in argument order (saved as given, C order)
    out             the op's result (float32/float64/int/bool as PyTorch returns it)
    idx             the indices of max/min along a dim
    layout          view cases: the result's strides followed by its storage offset (int64)
    gout            the upstream gradient given to backward (the output's shape and dtype)
    grad_a, grad_b  PyTorch's gradient for each input that requires grad (torch.autograd,
                    in the input's dtype: float32 and float64 cases both exist)
    out0, out1 ...  several results of one case (the RNG sequence)
tests/golden/MANIFEST lists every .npy file (sorted; the tests read which roles a case has
from it) and tests/golden/VERSION records torch.__version__ and numpy.__version__.
"""
import argparse
import glob
import math
import os
import warnings
import zlib

import numpy as np
import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore")
torch.set_default_dtype(torch.float32)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)

OUT = "tests/golden"
ROLES = "abcd"
NP = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32,
      "i16": np.int16, "i8": np.int8, "u8": np.uint8, "bool": np.bool_}
COUNT = {"cases": 0, "files": 0}


def rs(name):
    return np.random.RandomState(zlib.crc32(name.encode()))


def save(name, role, arr):
    if isinstance(arr, torch.Tensor):
        arr = arr.detach().numpy()
    arr = np.array(arr, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    np.save(os.path.join(OUT, f"{name}.{role}.npy"), arr, allow_pickle=False)
    COUNT["files"] += 1


def gen(r, shape, dt, kind="normal"):
    """An input of numpy dtype key dt; kind picks the value domain."""
    shape = tuple(shape)
    if dt == "bool":
        return r.randint(0, 2, size=shape).astype(np.bool_)
    if dt in ("i64", "i32", "i16", "i8", "u8"):
        lo, hi = {"normal": (-5, 6), "pos": (1, 6), "small": (0, 4), "ties": (0, 3)}[kind]
        if dt == "u8":
            lo = max(lo, 0)
        return r.randint(lo, hi, size=shape).astype(NP[dt])
    if kind == "normal":
        x = r.randn(*shape) * 1.5
    elif kind == "pos":        # away from 0: log, sqrt, rsqrt, reciprocal, pow base
        x = r.uniform(0.2, 3.0, size=shape)
    elif kind == "log1p":
        x = r.uniform(-0.8, 3.0, size=shape)
    elif kind == "nonzero":    # divisors
        x = r.uniform(0.5, 2.0, size=shape) * np.where(r.rand(*shape) < 0.5, -1, 1)
    elif kind == "exp":        # exponents
        x = r.uniform(-2.0, 2.0, size=shape)
    elif kind == "ties":       # repeated values for ties and equality
        x = r.randint(-2, 3, size=shape).astype(np.float64)
    elif kind == "zeros":      # exact zeros among the values (abs, relu)
        x = r.randn(*shape) * 1.5
        x.flat[::3] = 0.0
    else:
        raise ValueError(kind)
    return np.asarray(x, dtype=NP[dt])


def case(name, fn, inputs, grad=True, grad_inputs=None, layout=False):
    """Runs fn on torch copies of inputs, saves inputs, results and gradients."""
    COUNT["cases"] += 1
    ts = []
    for i, x in enumerate(inputs):
        save(name, ROLES[i], x)
        ts.append(torch.from_numpy(np.array(x, copy=True)))
    if grad_inputs is None:
        grad_inputs = [i for i, t in enumerate(ts) if t.is_floating_point()]
    if grad:
        for i in grad_inputs:
            ts[i].requires_grad_(True)
    res = fn(*ts)
    if isinstance(res, tuple):
        out, idx = res
        save(name, "idx", idx)
    else:
        out = res
    save(name, "out", out)
    if layout:
        save(name, "layout", np.array(list(out.stride()) + [out.storage_offset()], np.int64))
    if grad and out.requires_grad:
        gout = np.asarray(rs(name + ".gout").randn(*out.shape)).astype(out.detach().numpy().dtype)
        save(name, "gout", gout)
        out.backward(torch.from_numpy(gout))
        for i in grad_inputs:
            g = ts[i].grad
            save(name, "grad_" + ROLES[i], g if g is not None else torch.zeros_like(ts[i]))


# ---- creation and random ---------------------------------------------------------------
def creation():
    f32, f64, i64, i32 = torch.float32, torch.float64, torch.int64, torch.int32
    fixed = {
        "c_zeros_f32": torch.zeros(2, 3, dtype=f32),
        "c_ones_i64": torch.ones(3, dtype=i64),
        "c_full_f64": torch.full((2, 2), 1.5, dtype=f64),
        "c_full_i32": torch.full((4,), 7, dtype=i32),
        "c_scalar_f64": torch.scalar_tensor(3.5, dtype=f64),
        "c_arange_i64": torch.arange(0, 10, 3, dtype=i64),
        "c_arange_f32": torch.arange(0, 1, 0.1, dtype=f32),
        "c_arange_f32_b": torch.arange(1, 2.5, 0.5, dtype=f32),
        "c_arange_f32_c": torch.arange(-3, 3, 0.7, dtype=f32),
        "c_arange_f64_neg": torch.arange(1, -1, -0.25, dtype=f64),
        "c_linspace_f32": torch.linspace(0, 1, 5, dtype=f32),
        "c_linspace_f32_long": torch.linspace(-2, 7, 100, dtype=f32),
        "c_linspace_f64": torch.linspace(-1, 1, 7, dtype=f64),
        "c_linspace_one": torch.linspace(2, 3, 1, dtype=f32),
        "c_linspace_zero": torch.linspace(0, 10, 0, dtype=f32),
        "c_eye_f32": torch.eye(3, dtype=f32),
        "c_eye_2x4_f64": torch.eye(2, 4, dtype=f64),
        "c_eye_3x2_i64": torch.eye(3, 2, dtype=i64),
    }
    for name, t in fixed.items():
        COUNT["cases"] += 1
        save(name, "out", t)

    def rnd(name, seed, fn):
        COUNT["cases"] += 1
        torch.manual_seed(seed)
        save(name, "out", fn())

    rnd("rng_rand_f32_5", 0, lambda: torch.rand(5, dtype=f32))
    rnd("rng_rand_f32_3x7", 42, lambda: torch.rand(3, 7, dtype=f32))
    rnd("rng_rand_f32_40", 5, lambda: torch.rand(40, dtype=f32))
    rnd("rng_rand_f64_10", 1, lambda: torch.rand(10, dtype=f64))
    rnd("rng_rand_f64_20", 3, lambda: torch.rand(20, dtype=f64))
    for n, seed in ((5, 0), (16, 1), (37, 2), (20, 3), (48, 9)):
        rnd(f"rng_randn_f32_{n}", seed, lambda n=n: torch.randn(n, dtype=f32))
    rnd("rng_randn_f32_4x5", 4, lambda: torch.randn(4, 5, dtype=f32))
    for n, seed in ((7, 5), (16, 6), (33, 7)):
        rnd(f"rng_randn_f64_{n}", seed, lambda n=n: torch.randn(n, dtype=f64))
    rnd("rng_randint_0_10", 0, lambda: torch.randint(0, 10, (20,)))
    rnd("rng_randint_m5_5", 11, lambda: torch.randint(-5, 5, (3, 4)))
    rnd("rng_randint_big", 12, lambda: torch.randint(0, 1 << 40, (6,)))
    rnd("rng_randint_i32", 13, lambda: torch.randint(0, 100, (10,), dtype=i32))
    for n, seed in ((1, 0), (10, 1), (100, 2)):
        rnd(f"rng_randperm_{n}", seed, lambda n=n: torch.randperm(n))
    # one seed, several draws: the generator state (and the cached normal) carries over
    COUNT["cases"] += 1
    torch.manual_seed(7)
    save("rng_seq", "out0", torch.rand(5))
    save("rng_seq", "out1", torch.randn(5))
    save("rng_seq", "out2", torch.randint(0, 100, (5,)))
    save("rng_seq", "out3", torch.randn(20))
    save("rng_seq", "out4", torch.rand(3, dtype=f64))


# ---- pointwise -------------------------------------------------------------------------
UNARY = {  # op: (torch fn, input domain)
    "neg": (torch.neg, "normal"), "abs": (torch.abs, "zeros"), "exp": (torch.exp, "normal"),
    "log": (torch.log, "pos"), "log1p": (torch.log1p, "log1p"), "sqrt": (torch.sqrt, "pos"),
    "rsqrt": (torch.rsqrt, "pos"), "sin": (torch.sin, "normal"), "cos": (torch.cos, "normal"),
    "sigmoid": (torch.sigmoid, "normal"), "tanh": (torch.tanh, "normal"),
    "relu": (torch.relu, "zeros"), "square": (torch.square, "normal"),
    "reciprocal": (torch.reciprocal, "nonzero"),
}

BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "pow": torch.pow, "maximum": torch.maximum, "minimum": torch.minimum,
          "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
          "ge": torch.ge, "logical_and": torch.logical_and, "logical_or": torch.logical_or}

# variant: (shape a, dtype a, shape b, dtype b)
VARIANTS = {
    "same_f32": ((3, 4), "f32", (3, 4), "f32"),
    "same_f64": ((3, 4), "f64", (3, 4), "f64"),
    "bcast_f32": ((3, 1), "f32", (1, 4), "f32"),
    "bcast3_f64": ((2, 3, 4), "f64", (4,), "f64"),
    "bcast0_f32": ((2, 1, 4), "f32", (3, 1), "f32"),
    "zerod_f32": ((3, 4), "f32", (), "f64"),
    "f32_f64": ((3, 4), "f32", (3, 4), "f64"),
    "i64_f32": ((3, 4), "i64", (3, 4), "f32"),
    "i64_0df64": ((3, 4), "i64", (), "f64"),
    "i32_i64": ((3, 4), "i32", (4,), "i64"),
    "i32_0di64": ((3, 4), "i32", (), "i64"),
    "u8_i8": ((3, 4), "u8", (3, 4), "i8"),
    "bool_i32": ((3, 4), "bool", (3, 4), "i32"),
    "nan_f64": ((3, 4), "f64", (3, 4), "f64"),
    "bool_bool": ((3, 4), "bool", (3, 4), "bool"),
}
BINARY_VARIANTS = {
    "add": ["same_f32", "same_f64", "bcast_f32", "bcast3_f64", "bcast0_f32", "zerod_f32",
            "f32_f64", "i64_f32", "i64_0df64", "i32_i64", "i32_0di64", "u8_i8", "bool_i32"],
    "sub": ["same_f32", "same_f64", "bcast_f32", "bcast3_f64", "zerod_f32", "i64_f32",
            "i32_i64", "u8_i8"],
    "mul": ["same_f32", "same_f64", "bcast_f32", "bcast3_f64", "zerod_f32", "f32_f64",
            "i64_f32", "i32_i64", "u8_i8", "bool_i32", "bool_bool"],
    "div": ["same_f32", "same_f64", "bcast_f32", "bcast3_f64", "zerod_f32", "i64_f32",
            "i64_0df64", "i32_i64", "u8_i8", "bool_i32"],
    "pow": ["same_f32", "same_f64", "bcast_f32", "bcast3_f64", "zerod_f32", "i32_i64"],
    "maximum": ["same_f32", "same_f64", "bcast_f32", "bcast3_f64", "i64_f32", "i32_i64",
                "nan_f64"],
    "minimum": ["same_f32", "same_f64", "bcast_f32", "bcast3_f64", "i64_f32", "i32_i64",
                "nan_f64"],
}
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    BINARY_VARIANTS[_op] = ["same_f32", "bcast_f32", "i64_f32", "i32_i64", "nan_f64"]
for _op in ("logical_and", "logical_or"):
    BINARY_VARIANTS[_op] = ["same_f32", "bcast_f32", "i64_f32", "bool_bool", "nan_f64"]


def binary_inputs(name, op, variant):
    r = rs(name)
    sa, da, sb, db = VARIANTS[variant]
    ka, kb = "normal", "normal"
    if op == "div":
        kb = "nonzero" if db in ("f32", "f64") else "pos"
    if op == "pow":
        ka, kb = ("pos", "exp") if da in ("f32", "f64") else ("normal", "small")
    if op in ("eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum"):
        ka = kb = "ties"
    if op.startswith("logical"):
        ka = kb = "ties"
    a, b = gen(r, sa, da, ka), gen(r, sb, db, kb)
    if variant == "nan_f64":
        a.flat[[1, 5]] = np.nan
        b.flat[[5, 7]] = np.nan
    return a, b


def pointwise():
    for op, (fn, dom) in UNARY.items():
        for dt in ("f32", "f64"):
            name = f"u_{op}_{dt}"
            case(name, fn, [gen(rs(name), (3, 4), dt, dom)])
        name = f"u_{op}_i64"
        idom = "pos" if dom in ("pos", "nonzero") else "normal"
        case(name, fn, [gen(rs(name), (3, 4), "i64", idom)], grad=False)
    # strided (transposed) inputs
    case("u_exp_f32_t", lambda a: torch.exp(a.t()), [gen(rs("u_exp_f32_t"), (4, 3), "f32")])
    case("u_tanh_f64_t", lambda a: torch.tanh(a.t()), [gen(rs("u_tanh_f64_t"), (4, 3), "f64")])

    for op, variants in BINARY_VARIANTS.items():
        for v in variants:
            name = f"b_{op}_{v}"
            case(name, BINARY[op], list(binary_inputs(name, op, v)),
                 grad=op in ("add", "sub", "mul", "div", "pow", "maximum", "minimum")
                 and v != "nan_f64")
    # alpha
    for v, alpha in (("same_f32", 2.5), ("bcast3_f64", -0.5), ("i32_i64", 3)):
        name = f"b_add_alpha_{v}"
        case(name, lambda a, b, al=alpha: torch.add(a, b, alpha=al),
             list(binary_inputs(name, "add", v)))

    # C scalars: (case, op, dtype, scalar); integral scalars are Python ints as in ctorch
    scalars = [
        ("s_add_f32", "add", "f32", 2.5), ("s_add_f64_int", "add", "f64", -1),
        ("s_add_i64", "add", "i64", 2), ("s_add_i64_float", "add", "i64", 2.5),
        ("s_add_i32", "add", "i32", 3), ("s_add_u8", "add", "u8", 3),
        ("s_add_bool", "add", "bool", 1),
        ("s_sub_f32", "sub", "f32", 1.5), ("s_sub_i64", "sub", "i64", 2),
        ("s_mul_f64", "mul", "f64", -1.5), ("s_mul_i32_float", "mul", "i32", 2.5),
        ("s_mul_i16", "mul", "i16", 3),
        ("s_div_f32", "div", "f32", 4), ("s_div_i64", "div", "i64", 2),
        ("s_pow_f32_2", "pow", "f32", 2), ("s_pow_f32_0p5", "pow", "f32", 0.5),
        ("s_pow_f32_m1", "pow", "f32", -1), ("s_pow_f64_3", "pow", "f64", 3),
        ("s_pow_f64_0", "pow", "f64", 0), ("s_pow_f64_2p5", "pow", "f64", 2.5),
        ("s_pow_i64_2", "pow", "i64", 2), ("s_pow_i64_0p5", "pow", "i64", 0.5),
        ("s_eq_f32", "eq", "f32", 1), ("s_eq_i64_float", "eq", "i64", 2.5),
        ("s_gt_f32", "gt", "f32", 0.5), ("s_gt_i64", "gt", "i64", 2),
        ("s_lt_f64", "lt", "f64", -0.5), ("s_lt_i32", "lt", "i32", 1),
    ]
    for name, op, dt, s in scalars:
        kind = "pos" if op == "pow" else ("ties" if op in ("eq", "gt", "lt") else "normal")
        if op == "pow" and dt == "i64":
            kind = "small" if s == 2 else "pos"
        case(name, lambda a, op=op, s=s: BINARY[op](a, s), [gen(rs(name), (3, 4), dt, kind)],
             grad=op in ("add", "sub", "mul", "div", "pow"))

    # where(condition, input, other)
    for name, sc, si, so, dti, dto in (
            ("where_f32", (3, 4), (3, 4), (3, 4), "f32", "f32"),
            ("where_bcast_f64", (3, 1), (1, 4), (), "f64", "f64"),
            ("where_mixed", (3, 4), (3, 4), (4,), "f32", "f64"),
            ("where_i64", (2, 3), (2, 3), (2, 3), "i64", "i64")):
        r = rs(name)
        case(name, torch.where, [gen(r, sc, "bool"), gen(r, si, dti), gen(r, so, dto)])
    # clamp(input, min, max); inf means open
    for name, dt, lo, hi in (("clamp_f32", "f32", -0.5, 0.5), ("clamp_f64_hi", "f64", -math.inf, 0.3),
                             ("clamp_f64_lo", "f64", -0.2, math.inf), ("clamp_i64", "i64", -2, 3),
                             ("clamp_nan_f32", "f32", -1.0, 1.0)):
        x = gen(rs(name), (3, 4), dt)
        if "nan" in name:
            x.flat[[2, 9]] = np.nan
        case(name, lambda a, lo=lo, hi=hi: torch.clamp(a, None if lo == -math.inf else lo,
                                                       None if hi == math.inf else hi),
             [x], grad="nan" not in name)


# ---- reductions ------------------------------------------------------------------------
def reductions():
    def x(name, shape=(3, 4), dt="f64", kind="normal"):
        return gen(rs(name), shape, dt, kind)

    for dt in ("f32", "f64"):
        case(f"r_sum_{dt}", torch.sum, [x(f"r_sum_{dt}", dt=dt)])
        case(f"r_mean_{dt}", torch.mean, [x(f"r_mean_{dt}", dt=dt)])
        case(f"r_max_{dt}", torch.max, [x(f"r_max_{dt}", dt=dt)])
        case(f"r_min_{dt}", torch.min, [x(f"r_min_{dt}", dt=dt)])
    for dt in ("i32", "u8", "bool", "i64"):
        case(f"r_sum_{dt}", torch.sum, [x(f"r_sum_{dt}", (3, 4), dt)])
    u8 = rs("r_sum_u8_big").randint(200, 256, size=(3, 4)).astype(np.uint8)
    case("r_sum_u8_big", torch.sum, [u8])
    case("r_sum_dim_i32", lambda a: torch.sum(a, 1), [x("r_sum_dim_i32", (3, 4), "i32")])
    for d in (0, 1, -1):
        for k in (0, 1):
            name = f"r_sum_dim_{d}_{k}".replace("-", "m")
            case(name, lambda a, d=d, k=k: torch.sum(a, d, keepdim=bool(k)), [x(name, (2, 3, 4))])
            name = f"r_mean_dim_{d}_{k}".replace("-", "m")
            case(name, lambda a, d=d, k=k: torch.mean(a, d, keepdim=bool(k)), [x(name, (2, 3, 4))])
            for op, fn in (("max", torch.max), ("min", torch.min)):
                name = f"r_{op}_dim_{d}_{k}".replace("-", "m")
                case(name, lambda a, d=d, k=k, fn=fn: tuple(fn(a, d, keepdim=bool(k))),
                     [x(name, (2, 3, 4))])
            for op, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
                name = f"r_{op}_dim_{d}_{k}".replace("-", "m")
                case(name, lambda a, d=d, k=k, fn=fn: fn(a, d, keepdim=bool(k)),
                     [x(name, (2, 3, 4), "f32", "ties")], grad=False)
    case("r_sum_dim_1_f32", lambda a: torch.sum(a, 1), [x("r_sum_dim_1_f32", (2, 3, 4), "f32")])
    case("r_mean_dim_0_f32", lambda a: torch.mean(a, 0), [x("r_mean_dim_0_f32", (3, 4), "f32")])
    case("r_sum_dims_02_1", lambda a: torch.sum(a, (0, 2), keepdim=True), [x("r_sum_dims_02_1", (2, 3, 4))])
    case("r_sum_dims_m1m2_0", lambda a: torch.sum(a, (-1, -2)), [x("r_sum_dims_m1m2_0", (2, 3, 4))])
    case("r_sum_to_size", lambda a: a.sum_to_size(3, 1), [x("r_sum_to_size", (2, 3, 4))])
    # ties: the gradient of max()/min() is split evenly; max/min/arg* with dim pick the first
    case("r_max_ties_f64", torch.max, [x("r_max_ties_f64", (3, 4), "f64", "ties")])
    case("r_min_ties_f32", torch.min, [x("r_min_ties_f32", (3, 4), "f32", "ties")])
    case("r_max_dim_ties_f32", lambda a: tuple(torch.max(a, 1)), [x("r_max_dim_ties_f32", (3, 5), "f32", "ties")])
    case("r_min_dim_ties_f64", lambda a: tuple(torch.min(a, 0)), [x("r_min_dim_ties_f64", (5, 3), "f64", "ties")])
    case("r_max_i32", torch.max, [x("r_max_i32", (3, 4), "i32")], grad=False)
    case("r_max_dim_i64", lambda a: tuple(torch.max(a, 1)), [x("r_max_dim_i64", (3, 4), "i64")], grad=False)
    for op, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
        case(f"r_{op}_f32", fn, [x(f"r_{op}_f32", (3, 4), "f32")], grad=False)
        case(f"r_{op}_ties", fn, [x(f"r_{op}_ties", (3, 4), "f64", "ties")], grad=False)
        case(f"r_{op}_i64", fn, [x(f"r_{op}_i64", (3, 4), "i64")], grad=False)
    # NaN propagates; arg* point at the first NaN
    nan = x("r_nan", (3, 4), "f32")
    nan.flat[[6, 9]] = np.nan
    case("r_max_nan", torch.max, [nan], grad=False)
    case("r_min_nan", torch.min, [nan], grad=False)
    case("r_argmax_nan", torch.argmax, [nan], grad=False)
    case("r_argmin_nan", torch.argmin, [nan], grad=False)
    case("r_sum_nan", torch.sum, [nan], grad=False)
    case("r_max_dim_nan", lambda a: tuple(torch.max(a, 1)), [nan], grad=False)
    case("r_argmax_dim_nan", lambda a: torch.argmax(a, 0), [nan], grad=False)


# ---- views and shape ops ---------------------------------------------------------------
def views():
    def v(name, fn, shape=(2, 3, 4), dt="f64", n=1):
        r = rs(name)
        case(name, fn, [gen(r, shape, dt) for _ in range(n)], layout=True)

    v("v_view_6x4", lambda a: a.view(6, 4))
    v("v_view_m1", lambda a: a.view(4, -1))
    v("v_view_flat_f32", lambda a: a.view(-1), dt="f32")
    v("v_reshape_view", lambda a: a.reshape(3, 8))
    v("v_reshape_copy", lambda a: a.transpose(0, 2).reshape(4, 6))
    v("v_permute", lambda a: a.permute(2, 0, 1))
    v("v_permute_f32", lambda a: a.permute(1, 2, 0), dt="f32")
    v("v_transpose", lambda a: a.transpose(0, 2))
    v("v_transpose_neg", lambda a: a.transpose(-1, -2))
    v("v_t_2d", lambda a: a.t(), shape=(3, 4))
    v("v_t_1d", lambda a: a.t(), shape=(5,))
    v("v_unsqueeze_0", lambda a: a.unsqueeze(0))
    v("v_unsqueeze_m1", lambda a: a.unsqueeze(-1))
    v("v_unsqueeze_2", lambda a: a.unsqueeze(2))
    v("v_squeeze", lambda a: a.squeeze(), shape=(1, 3, 1, 4))
    v("v_squeeze_dim0", lambda a: a.squeeze(0), shape=(1, 3, 1, 4))
    v("v_squeeze_dim1_noop", lambda a: a.squeeze(1), shape=(1, 3, 1, 4))
    v("v_expand", lambda a: a.expand(3, 4), shape=(3, 1))
    v("v_expand_new", lambda a: a.expand(2, 3, 5), shape=(3, 1))
    v("v_expand_m1", lambda a: a.expand(2, -1, 4), shape=(3, 1))
    v("v_narrow", lambda a: a.narrow(1, 1, 2))
    v("v_narrow_neg", lambda a: a.narrow(-1, 2, 2))
    v("v_select", lambda a: a.select(0, 1))
    v("v_select_neg", lambda a: a.select(-1, 2))
    v("v_flatten_all", lambda a: a.flatten(0, -1))
    v("v_flatten_12", lambda a: a.flatten(1, 2))
    v("v_flatten_copy", lambda a: a.transpose(0, 1).flatten(1, 2))
    v("v_contiguous_t", lambda a: a.transpose(0, 1).contiguous())
    v("v_chain", lambda a: a.permute(2, 0, 1).narrow(0, 1, 2).select(2, 1))
    v("v_cat_0", lambda a, b: torch.cat([a, b], 0), n=2)
    v("v_cat_1", lambda a, b, c: torch.cat([a, b, c], 1), n=3)
    v("v_cat_m1", lambda a, b: torch.cat([a, b], -1), n=2)
    v("v_stack_0", lambda a, b: torch.stack([a, b], 0), shape=(3, 4), n=2)
    v("v_stack_1", lambda a, b, c: torch.stack([a, b, c], 1), shape=(3, 4), n=3)
    v("v_stack_m1", lambda a, b: torch.stack([a, b], -1), shape=(3, 4), n=2)
    r = rs("v_cat_mixed")
    case("v_cat_mixed", lambda a, b: torch.cat([a, b], 0),
         [gen(r, (2, 3), "f32"), gen(r, (1, 3), "f64")], layout=True)
    r = rs("v_cat_int")
    case("v_cat_int", lambda a, b: torch.cat([a, b], 1),
         [gen(r, (2, 3), "i32"), gen(r, (2, 2), "i64")], layout=True)


# ---- linear algebra --------------------------------------------------------------------
def linalg():
    shapes = {  # case: (shape a, shape b)
        "1d1d": ((4,), (4,)), "2d2d": ((3, 4), (4, 5)), "1d2d": ((4,), (4, 5)),
        "2d1d": ((3, 4), (4,)), "3d3d": ((2, 3, 4), (2, 4, 5)),
        "bcast4d3d": ((2, 1, 3, 4), (3, 4, 5)), "3d1d": ((2, 3, 4), (4,)),
        "1d3d": ((4,), (2, 4, 5)), "3d2d": ((2, 3, 4), (4, 5)), "big": ((17, 33), (33, 9)),
    }
    for dt in ("f32", "f64"):
        for k, (sa, sb) in shapes.items():
            name = f"m_matmul_{k}_{dt}"
            r = rs(name)
            case(name, torch.matmul, [gen(r, sa, dt), gen(r, sb, dt)])
        r = rs(f"m_mm_{dt}")
        case(f"m_mm_{dt}", torch.mm, [gen(r, (3, 4), dt), gen(r, (4, 5), dt)])
        r = rs(f"m_mm_tA_{dt}")
        case(f"m_mm_tA_{dt}", lambda a, b: torch.mm(a.t(), b), [gen(r, (4, 3), dt), gen(r, (4, 5), dt)])
        r = rs(f"m_mm_tB_{dt}")
        case(f"m_mm_tB_{dt}", lambda a, b: torch.mm(a, b.t()), [gen(r, (3, 4), dt), gen(r, (5, 4), dt)])
        r = rs(f"m_bmm_{dt}")
        case(f"m_bmm_{dt}", torch.bmm, [gen(r, (2, 3, 4), dt), gen(r, (2, 4, 5), dt)])
        r = rs(f"m_addmm_{dt}")
        case(f"m_addmm_{dt}", lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
             [gen(r, (5,), dt), gen(r, (3, 4), dt), gen(r, (4, 5), dt)])
        r = rs(f"m_addmm_full_{dt}")
        case(f"m_addmm_full_{dt}", torch.addmm, [gen(r, (3, 5), dt), gen(r, (3, 4), dt), gen(r, (4, 5), dt)])
        r = rs(f"m_mv_{dt}")
        case(f"m_mv_{dt}", torch.mv, [gen(r, (3, 4), dt), gen(r, (4,), dt)])
        r = rs(f"m_dot_{dt}")
        case(f"m_dot_{dt}", torch.dot, [gen(r, (7,), dt), gen(r, (7,), dt)])
        r = rs(f"m_linear_bias_{dt}")
        case(f"m_linear_bias_{dt}", F.linear, [gen(r, (2, 3, 4), dt), gen(r, (5, 4), dt), gen(r, (5,), dt)])
        r = rs(f"m_linear_nobias_{dt}")
        case(f"m_linear_nobias_{dt}", F.linear, [gen(r, (3, 4), dt), gen(r, (5, 4), dt)])
        r = rs(f"m_linear_1d_{dt}")
        case(f"m_linear_1d_{dt}", F.linear, [gen(r, (4,), dt), gen(r, (5, 4), dt), gen(r, (5,), dt)])
    # beta = 0 ignores input, NaN included (no gradient: PyTorch's would be NaN * 0)
    r = rs("m_addmm_beta0_nan")
    c = gen(r, (3, 5), "f64")
    c.flat[[0, 7]] = np.nan
    case("m_addmm_beta0_nan", lambda c, a, b: torch.addmm(c, a, b, beta=0.0, alpha=1.5),
         [c, gen(r, (3, 4), "f64"), gen(r, (4, 5), "f64")], grad=False)


# ---- softmax and losses ----------------------------------------------------------------
def softmax_losses():
    for op, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        for dt in ("f32", "f64"):
            for shape, dims in (((3, 4), (0, 1, -1)), ((2, 3, 4), (0, 1, 2))):
                for d in dims:
                    name = f"sm_{op}_{len(shape)}d_{d}_{dt}".replace("-", "m")
                    case(name, lambda a, d=d, fn=fn: fn(a, d), [gen(rs(name), shape, dt)])
        name = f"sm_{op}_large_f32"
        x = gen(rs(name), (3, 4), "f32") * 300 + 1000
        case(name, lambda a, fn=fn: fn(a, 1), [x.astype(np.float32)])

    red = {"mean": "mean", "sum": "sum", "none": "none"}
    for dt in ("f32", "f64"):
        for rname in red:
            r = rs(f"l_nll_{rname}_{dt}")
            tgt = r.randint(0, 5, size=(4,)).astype(np.int64)
            case(f"l_nll_{rname}_{dt}", lambda a, t, rn=rname: F.nll_loss(a, t, reduction=rn),
                 [gen(r, (4, 5), dt), tgt])
            r = rs(f"l_ce_{rname}_{dt}")
            tgt = r.randint(0, 5, size=(4,)).astype(np.int64)
            case(f"l_ce_{rname}_{dt}", lambda a, t, rn=rname: F.cross_entropy(a, t, reduction=rn),
                 [gen(r, (4, 5), dt), tgt])
            r = rs(f"l_mse_{rname}_{dt}")
            case(f"l_mse_{rname}_{dt}", lambda a, b, rn=rname: F.mse_loss(a, b, reduction=rn),
                 [gen(r, (3, 4), dt), gen(r, (3, 4), dt)])
    r = rs("l_mse_bcast_f64")
    case("l_mse_bcast_f64", lambda a, b: F.mse_loss(a, b), [gen(r, (3, 4), "f64"), gen(r, (4,), "f64")])
    for loss, fn in (("nll", F.nll_loss), ("ce", F.cross_entropy)):
        for rname in red:
            # class weights (input c); no gradient for the weights, as in PyTorch
            name = f"l_{loss}_weight_{rname}_f64"
            r = rs(name)
            tgt = np.array([0, 3, 3, 1, 4, 2], np.int64)
            case(name, lambda a, t, w, rn=rname, fn=fn: fn(a, t, weight=w, reduction=rn),
                 [gen(r, (6, 5), "f64"), tgt, r.uniform(0.2, 2.0, size=(5,))], grad_inputs=[0])
        name = f"l_{loss}_ignore_f64"  # ignore_index 2, weights too
        r = rs(name)
        tgt = np.array([2, 0, 2, 4, 1], np.int64)
        case(name, lambda a, t, w, fn=fn: fn(a, t, weight=w, ignore_index=2),
             [gen(r, (5, 5), "f64"), tgt, r.uniform(0.2, 2.0, size=(5,))], grad_inputs=[0])
        name = f"l_{loss}_ignore_default_f32"  # -100
        r = rs(name)
        tgt = np.array([1, -100, 3, -100], np.int64)
        case(name, lambda a, t, fn=fn: fn(a, t), [gen(r, (4, 5), "f32"), tgt])
        name = f"l_{loss}_ignore_none_f32"
        r = rs(name)
        case(name, lambda a, t, fn=fn: fn(a, t, reduction="none"), [gen(r, (4, 5), "f32"), tgt])
        name = f"l_{loss}_1d_f64"  # input (C), target ()
        r = rs(name)
        case(name, lambda a, t, fn=fn: fn(a, t), [gen(r, (5,), "f64"), np.array(3, np.int64)])
        name = f"l_{loss}_allignored_f32"  # mean over zero weight: NaN, as PyTorch
        r = rs(name)
        case(name, lambda a, t, fn=fn: fn(a, t), [gen(r, (3, 4), "f32"),
                                                  np.array([-100, -100, -100], np.int64)])


def main():
    global OUT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=OUT)
    OUT = ap.parse_args().out
    os.makedirs(OUT, exist_ok=True)
    for f in glob.glob(os.path.join(OUT, "*.npy")):
        os.remove(f)
    creation()
    pointwise()
    reductions()
    views()
    linalg()
    softmax_losses()
    # a numpy-written file of every dtype, for the NPY reader/writer tests
    r = rs("npy")
    for dt in NP:
        COUNT["cases"] += 1
        save("npy_" + dt, "out", gen(r, (2, 3), dt))
    save("npy_f64_0d", "out", np.array(2.5))
    save("npy_i16_empty", "out", np.zeros((2, 0, 3), np.int16))
    # every fixture, sorted: tests/test_ops.c reads which roles a case has from it
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(OUT, "*.npy")))
    with open(os.path.join(OUT, "MANIFEST"), "w") as f:
        f.write("".join(n + "\n" for n in names))
    with open(os.path.join(OUT, "VERSION"), "w") as f:
        f.write(f"torch {torch.__version__}\nnumpy {np.__version__}\n")
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(OUT, "*")))
    print(f"{COUNT['cases']} cases, {COUNT['files']} files, {total} bytes in {OUT} "
          f"(torch {torch.__version__})")


if __name__ == "__main__":
    main()
