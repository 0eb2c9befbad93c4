#!/usr/bin/env python3
"""tools/gen_golden_bench.py - golden values for tests/test_bench.c from torch.utils.benchmark.

Defines every input of the bench tests (raw times and task specs of Measurements, the scripted
costs and clock reads of the synthetic clock, the Compare sets) and writes them, with what
PyTorch makes of them, to tests/golden/bench_golden.h:

- Measurement(number_per_run, raw_times, TaskSpec(...)): times, raw_times, mean, median, IQR,
  significant_figures, has_warnings, meets_confidence and repr(m) without its first line (the
  object's address) plus "\\n", which is what ct_measurement_str prints;
- Timer(stmt="f.stmt()", globals={"f": f}, timer=f.clock) on the synthetic clock, where
      f.clock(): f.now += reads[f.nr % len(reads)]; f.nr += 1; return f.now / 1e9
      f.stmt():  f.now += costs[f.nc % len(costs)]; f.nc += 1
  (times in ns): the calls of stmt and setup, the clock reads and the Measurement of timeit,
  blocked_autorange and adaptive_autorange;
- str(Compare(...)) + "\\n" (what print() writes) after trim_significant_figures,
  highlight_warnings, colorize and extend_results.

Usage: python3 tools/gen_golden_bench.py [--out tests/golden/bench_golden.h]
"""
import argparse
import os

import torch
from torch.utils.benchmark import Compare, Measurement, Timer
from torch.utils.benchmark.utils.common import TaskSpec

from golden_c import c_wrap

# Thresholds for meets_confidence: bit k of a result's mask is meets_confidence(THRESHOLDS[k]).
THRESHOLDS = [0.01, 0.05, 0.1, 0.2, 0.25]


def spec(stmt=None, label=None, sub_label=None, description=None, env=None, num_threads=0):
    """A ct_timer_opts: None is a NULL string, num_threads 0 is PyTorch's default (1)."""
    return dict(stmt=stmt, label=label, sub_label=sub_label, description=description, env=env,
                num_threads=num_threads)


def task_spec(s):
    """The TaskSpec PyTorch builds for ct_timer_opts s (None: NULL opts)."""
    s = s or spec()
    kw = dict(label=s["label"], sub_label=s["sub_label"], description=s["description"],
              env=s["env"])
    if s["num_threads"]:
        kw["num_threads"] = s["num_threads"]
    return TaskSpec(s["stmt"] or "", "pass", **kw)


# ---- Measurements from raw times: (name, number_per_run, raw_times, spec or None) ----------
RAW7 = [0.0243, 0.0251, 0.0239, 0.0262, 0.0247, 0.0244, 0.0290]
MATMUL = spec(label="matmul", sub_label="[64, 64]", description="float32", num_threads=1)
MEASUREMENTS = [
    # IQR 5.3% of the median: no warning
    ("matmul", 10, RAW7, MATMUL),
    # significant_figures of Measurement(1, times, spec); "sigfig_a" has an even count
    ("sigfig_a", 1, [2.43e-3, 2.44e-3, 2.42e-3, 2.43e-3, 2.45e-3, 2.41e-3], None),
    ("sigfig_b", 1, [1e-6] * 8, None),
    ("sigfig_c", 1, [1.0e-3, 1.5e-3, 2.0e-3, 2.5e-3], None),
    ("sigfig_d", 1, [5e-05, 5.001e-05, 4.999e-05, 5.0002e-05, 5.0001e-05], None),
    ("sigfig_e", 1, [1e-3, 1.0001e-3, 0.9999e-3, 1.00005e-3], None),
    # a multi-line stmt title; no IQR line under 4 runs
    ("multiline", 100, [3.1e-6 * 100, 3.3e-6 * 100],
     spec(stmt="x = 1\ny = 2", sub_label="small", num_threads=4)),
    # one run: no "Median: " and PyTorch's "runs ,"
    ("one_run", 1000, [5.5e-7 * 1000], spec(stmt="f()", description="d", num_threads=2)),
    # IQR / median 33%: the gross warning; seconds
    ("slow", 1, [1.0, 1.2, 1.5, 2.0, 1.1], spec(label="slow", num_threads=1)),
    # an empty label and no stmt: the summary line stays, empty
    ("empty_label", 1, [1.0, 1.05, 1.12, 1.2, 1.1], spec(label="")),
    # 10% <= IQR / median < 25%: the milder warning
    ("mild_warning", 1, [1.0e-3, 1.2e-3, 0.95e-3, 1.1e-3], None),
    # a one-line stmt with a sub_label; select_unit takes log10 in float32, where a median
    # just under 1 us (or 1 s) is 1 us (1 s)
    ("unit_just_under_1us", 1, [9.9999999e-7], spec(stmt="f(x)", sub_label="small")),
    ("unit_just_under_1s", 1, [0.99999999], spec(stmt="f(x)", sub_label="small")),
    # significant_figures takes the std of float32 values: 3 figures, not double's 4
    ("sigfig_float32_std", 1, [0.001000515937, 0.001000859895, 0.000999312084, 0.001000687916],
     None),
]

# ---- Timers on the synthetic clock ----------------------------------------------------------
# Scripted ns: "cost_*" advance the clock at each call of stmt, "read_*" at each clock read.
CLOCK_SCRIPTS = {
    "cost_1500ns": [1500],
    "cost_1100ns": [1100],
    "cost_250ms": [250000000],
    "cost_varying": [1000, 1200, 900, 1500, 1100, 1000, 1300],
    "cost_cycle": [1000] * 100 + [1300] * 100 + [1100] * 100,  # blocks of 100 see 3 costs
    "read_free": [0],
    "read_200ns": [0, 200],  # every second read: a run's clock overhead is 200 ns
    "read_1ms": [1000000],
    "read_varying": [0, 30, 0, 70, 0, 10],
    "cost_69993ns": [69993],
    "read_7ns": [0, 7],
}
# (name, method, args, costs, reads, num_threads (0: default))
TIMERS = [
    # warmup max(100 // 100, 2) = 2 calls, then 100 timed
    ("timeit_100", "timeit", dict(number=100), "cost_1500ns", "read_free", 0),
    ("timeit_1000", "timeit", dict(number=1000), "cost_1500ns", "read_free", 0),
    # a free clock: the overhead is the 1 ns floor; the first block >= 0.2 ms is 1000 calls
    ("blocked_free_clock", "blocked", dict(min_run_time=0.2), "cost_1100ns", "read_free", 1),
    # a 200 ns clock read: the overhead rule needs a 2 ms block
    ("blocked_clock_200ns", "blocked", dict(min_run_time=0.2), "cost_1100ns", "read_200ns", 1),
    # one call already exceeds min_run_time: a block of 1, one block
    ("blocked_slow", "blocked", dict(min_run_time=0.2), "cost_250ms", "read_1ms", 1),
    ("blocked_varying", "blocked", dict(min_run_time=0.05), "cost_varying", "read_varying", 1),
    # overhead / time is 1e-4 for one call, but the overhead is float32 (torch.tensor(...)
    # .median()), a little more than 7 ns: blocks of 10
    ("blocked_overhead_float32", "blocked", dict(min_run_time=0.05), "cost_69993ns", "read_7ns",
     1),
    # constant times meet any threshold: 4 blocks (more than 3) when min_run_time is reached,
    # else min_run_time; blocks sized for 0.05 s
    ("adaptive_four_blocks", "adaptive",
     dict(threshold=0.1, min_run_time=0.0002, max_run_time=10), "cost_1100ns", "read_free", 1),
    ("adaptive_min_run_time", "adaptive",
     dict(threshold=0.1, min_run_time=0.01, max_run_time=10), "cost_1100ns", "read_free", 1),
    # blocks of 100 calls over the 300-call cycle: IQR / median 17% after 4 blocks < 20%
    ("adaptive_threshold_met", "adaptive",
     dict(threshold=0.2, min_run_time=0.0002, max_run_time=0.01), "cost_cycle", "read_free", 1),
    # never below 5%: stops at the first total past max_run_time
    ("adaptive_max_run_time", "adaptive",
     dict(threshold=0.05, min_run_time=0.0002, max_run_time=0.01), "cost_cycle", "read_free", 1),
]
METHODS = {"timeit": "BENCH_TIMEIT", "blocked": "BENCH_BLOCKED_AUTORANGE",
           "adaptive": "BENCH_ADAPTIVE_AUTORANGE"}

# ---- Compare ----------------------------------------------------------------------------------
# 2 labels x 2 sub_labels x 2 thread counts x 2 descriptions; raw times base * F (NOISY for the
# last), 10 calls per run. The first task comes in two pieces (3 runs of 10 calls, 2 runs of 20
# calls) that Compare merges.
F = [1.0, 1.02, 0.99, 1.01, 0.97]
NOISY = [1.0, 1.3, 0.8, 1.1, 0.9]
BASE = {  # BASE[label][sub_label][threads] = (float32, float64)
    "matmul": {"[64, 64]": {1: (2.1e-5, 4.3e-5), 4: (8.0e-6, 1.5e-5)},
               "[256, 256]": {1: (1.2e-3, 2.5e-3), 4: (3.3e-4, 6.8e-4)}},
    "add": {"[64, 64]": {1: (1.1e-6, 1.3e-6), 4: (1.6e-6, 1.7e-6)},
            "[256, 256]": {1: (1.5e-5, 2.9e-5), 4: (6.0e-6, 1.1e-5)}},
}


def compare_set():
    out = []
    for label, subs in BASE.items():
        for sub, by_threads in subs.items():
            for threads, bases in by_threads.items():
                for desc, b in zip(("float32", "float64"), bases):
                    s = spec(label=label, sub_label=sub, description=desc, num_threads=threads)
                    name = "%s_%s_%d_%s" % (label, sub.split(",")[0][1:], threads, desc)
                    if not out:
                        out.append((name + "_piece1", 10, [b * x for x in F[:3]], s))
                        out.append((name + "_piece2", 20, [b * x * 2 for x in F[3:]], s))
                    else:
                        fac = NOISY if len(out) == 16 else F
                        out.append((name, 10, [b * x for x in fac], s))
    return out


COLORIZED_N = 8  # Compare(set[:8]).colorize(): a missing cell

# envs differ: the env column; a row named by its stmt (no sub_label); extend_results
COMPARE_ENV = [
    ("env_a", 1, [2e-3, 2.1e-3, 1.9e-3, 2.05e-3],
     spec(label="env", sub_label="x", description="a", env="A")),
    ("env_b", 1, [3e-3, 3.1e-3, 2.9e-3, 3.05e-3],
     spec(label="env", sub_label="x", description="b", env="B")),
    ("env_long", 1, [1e-3], spec(stmt="f(x)", label="env", description="a", env="long_env")),
]

# Compare takes log10 and rounds in float32 (torch.tensor of a Python float): 100000.001 ns has
# 5 leading digits, not 6; trimmed to 1 figure, 349.99999 ns is 400 (3.5 rounds to even 4)
COMPARE_EDGE = [
    ("edge_digits", 1, [1.00000001e-4] * 4,
     spec(label="edge", sub_label="digits", description="a")),
    ("edge_round", 1, [3.4999999e-7] * 4, spec(label="edge", sub_label="round", description="a")),
]


def compare_texts(ms, env_ms, edge_ms):
    """name -> str(Compare) + "\\n", in the order tests/test_bench.c makes them."""
    texts = []
    c = Compare(ms)
    texts.append(("plain", str(c)))
    c.trim_significant_figures()
    texts.append(("trimmed", str(c)))
    c.highlight_warnings()
    texts.append(("trimmed_highlighted", str(c)))
    c = Compare(ms[:COLORIZED_N])
    c.colorize()
    texts.append(("colorized", str(c)))
    c.colorize(rowwise=True)
    texts.append(("colorized_rowwise", str(c)))
    c = Compare(env_ms[:1])
    c.extend_results(env_ms[1:])
    texts.append(("env", str(c)))
    texts.append(("empty", str(Compare([]))))
    c = Compare(edge_ms)
    texts.append(("edge", str(c)))
    c.trim_significant_figures()
    texts.append(("edge_trimmed", str(c)))
    return [(name, text + "\n") for name, text in texts]


# ---- running PyTorch ----------------------------------------------------------------------
class FakeClock:
    def __init__(self, costs, reads):
        self.costs, self.reads = costs, reads
        self.now = self.nc = self.nr = self.setups = 0

    def clock(self):
        self.now += self.reads[self.nr % len(self.reads)]
        self.nr += 1
        return self.now / 1e9

    def stmt(self):
        self.now += self.costs[self.nc % len(self.costs)]
        self.nc += 1

    def setup(self):
        self.setups += 1


def run_timer(method, args, costs, reads, num_threads, setup):
    f = FakeClock(CLOCK_SCRIPTS[costs], CLOCK_SCRIPTS[reads])
    kw = dict(num_threads=num_threads) if num_threads else {}
    t = Timer(stmt="f.stmt()", setup=setup, globals={"f": f}, timer=f.clock, **kw)
    if method == "timeit":
        m = t.timeit(args["number"])
    elif method == "blocked":
        m = t.blocked_autorange(min_run_time=args["min_run_time"])
    else:
        m = t.adaptive_autorange(args["threshold"], min_run_time=args["min_run_time"],
                                 max_run_time=args["max_run_time"])
    return f, m


def timer_case(case):
    """PyTorch's counts and Measurement. setup="pass" keeps the printed text free of a setup
    line; a second run with setup="f.setup()" counts the setups and must time the same."""
    name, method, args, costs, reads, num_threads = case
    f, m = run_timer(method, args, costs, reads, num_threads, "pass")
    g, m2 = run_timer(method, args, costs, reads, num_threads, "f.setup()")
    assert (f.nc, f.nr, m.raw_times) == (g.nc, g.nr, m2.raw_times), name
    return f.nc, f.nr, g.setups, m


def sum_in_order(values):
    """The sum of values added one by one (Python 3.12's sum() compensates)."""
    total = 0.0
    for v in values:
        total += v
    return total


def text_of(m):
    """ct_measurement_str's text: repr(m) without the object's address line, then "\\n"."""
    return "\n".join(repr(m).split("\n")[1:]) + "\n"


# ---- writing C ----------------------------------------------------------------------------
def c_double(x):
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("non-finite golden value")
    return "%.17g" % x


def c_array(ctype, name, values, fmt):
    return "static const %s %s[%d] = {\n%s\n};" % (ctype, name, len(values),
                                                   c_wrap([fmt(v) for v in values], "    "))


def c_escape(ch):
    if ch == "\\" or ch == '"':
        return "\\" + ch
    if ch == "\n":
        return "\\n"
    if " " <= ch <= "~":
        return ch
    return "\\%03o" % ord(ch)  # three digits: a following digit cannot join the escape


def c_string(s, indent, width=100):
    """A C string literal, split after each newline and at width columns; NULL for None."""
    if s is None:
        return "NULL"
    if s == "":
        return '""'
    pieces, cur = [], ""
    room = width - len(indent) - 3  # quotes and a comma
    for ch in s:
        e = c_escape(ch)
        if len(cur) + len(e) > room:
            pieces.append(cur)
            cur = ""
        cur += e
        if ch == "\n":
            pieces.append(cur)
            cur = ""
    if cur:
        pieces.append(cur)
    return ("\n" + indent).join('"%s"' % p for p in pieces)


def c_int(x):
    return "%d" % x


def c_u64(x):
    return "%du" % x


def result_init(o, name, m, indent, raw_name=None):
    """The bench_golden_result of Measurement m; its arrays go to o first. raw_name: an array
    already holding m.raw_times (a Measurement keeps the raw times it is given)."""
    if raw_name is None:
        raw_name = name + "_raw_times"
        o.append(c_array("double", raw_name, m.raw_times, c_double))
    o.append(c_array("double", name + "_times", m.times, c_double))
    mask = sum(1 << k for k, t in enumerate(THRESHOLDS) if m.meets_confidence(t))
    i2 = indent + "    "
    return "\n".join([
        indent + "{",
        c_wrap([c_int(m.number_per_run), c_int(len(m.raw_times)), c_int(m.num_threads),
                raw_name, name + "_times"], i2, ","),
        c_wrap([c_double(m.mean), c_double(m.median), c_double(m.iqr),
                c_double(m.iqr / m.median), c_double(sum_in_order(m.raw_times))], i2, ","),
        i2 + "%d, %d, 0x%xu," % (m.significant_figures, int(m.has_warnings), mask),
        i2 + c_string(text_of(m), i2),
        indent + "}",
    ])


def measurement_case(o, prefix, case):
    name, number, raw, s = case
    cname = prefix + name
    m = Measurement(number, list(raw), task_spec(s))
    assert m.raw_times == raw, name
    o.append(c_array("double", cname + "_raw_times", raw, c_double))
    want = result_init(o, cname, m, "    ", cname + "_raw_times")
    t = s or spec()
    o.append("static const bench_golden_measurement %s = {" % cname)
    o.append('    "%s", %d, %s, %s, %s, %s, %s, %d,' % (
        name, int(s is not None), c_string(t["stmt"], ""), c_string(t["label"], ""),
        c_string(t["sub_label"], ""), c_string(t["description"], ""), c_string(t["env"], ""),
        t["num_threads"]))
    o.append("    %d, %d, %s_raw_times," % (number, len(raw), cname))
    o.append(want + ",")
    o.append("};")
    o.append("")
    return m


def measurement_list(o, name, prefix, cases):
    ms = [measurement_case(o, prefix, case) for case in cases]
    o.append("#define %s_N %d" % (name.upper(), len(cases)))
    o.append("static const bench_golden_measurement *const %s[%s_N] = {" % (name, name.upper()))
    o.append(c_wrap(["&" + prefix + c[0] for c in cases], "    "))
    o.append("};")
    o.append("")
    return ms


def timer_cases(o):
    for name, values in CLOCK_SCRIPTS.items():
        o.append(c_array("uint64_t", "bench_" + name, values, c_u64))
    o.append("")
    for case in TIMERS:
        name, method, args, costs, reads, num_threads = case
        cname = "bench_timer_" + name
        calls, reads_n, setups, m = timer_case(case)
        want = result_init(o, cname, m, "    ")
        o.append("static const bench_golden_timer %s = {" % cname)
        o.append(c_wrap(['"%s"' % name, METHODS[method], c_int(args.get("number", 0)),
                         c_double(args.get("min_run_time", 0)),
                         c_double(args.get("threshold", 0)),
                         c_double(args.get("max_run_time", 0)), c_int(num_threads),
                         "bench_" + costs, c_int(len(CLOCK_SCRIPTS[costs])),
                         "bench_" + reads, c_int(len(CLOCK_SCRIPTS[reads])),
                         c_int(calls), c_int(reads_n), c_int(setups)], "    ", ","))
        o.append(want + ",")
        o.append("};")
        o.append("")
    o.append("#define BENCH_TIMERS_N %d" % len(TIMERS))
    o.append("static const bench_golden_timer *const bench_timers[BENCH_TIMERS_N] = {")
    o.append(c_wrap(["&bench_timer_" + c[0] for c in TIMERS], "    "))
    o.append("};")
    o.append("")


HEADER = """\
/* tests/golden/bench_golden.h - GENERATED by tools/gen_golden_bench.py (PyTorch %s);
 * do not edit. The inputs of tests/test_bench.c and what torch.utils.benchmark makes of them.
 * Strings are NULL where ct_timer_opts leaves them NULL (PyTorch: None, stmt ""); num_threads 0
 * is PyTorch's default, 1. Texts: repr(Measurement) without its first line, plus "\\n";
 * str(Compare) + "\\n". Timers run on the synthetic clock described in test_bench.c. */
#include <stddef.h>
#include <stdint.h>

enum { BENCH_TIMEIT, BENCH_BLOCKED_AUTORANGE, BENCH_ADAPTIVE_AUTORANGE };

/* Bit k of bench_golden_result.meets_confidence: m.meets_confidence(bench_thresholds[k]). */
%s

/* What PyTorch makes of a Measurement. */
typedef struct bench_golden_result {
    int64_t number_per_run, number_of_runs;
    int num_threads;
    const double *raw_times, *times; /* number_of_runs each: per run, per call */
    double mean, median, iqr;
    double iqr_over_median;
    double raw_total; /* sum(m.raw_times), summed in order */
    int significant_figures, has_warnings;
    unsigned meets_confidence;
    const char *text;
} bench_golden_result;

/* Measurement(number_per_run, raw_times, TaskSpec(...)); has_spec 0: NULL ct_timer_opts. */
typedef struct bench_golden_measurement {
    const char *name;
    int has_spec;
    const char *stmt, *label, *sub_label, *description, *env;
    int num_threads;
    int64_t number_per_run, n;
    const double *raw_times;
    bench_golden_result want;
} bench_golden_measurement;

/* A Timer on the synthetic clock: costs and clock reads in ns, cycled; the method and its
 * arguments (number for timeit; min_run_time for blocked_autorange; threshold, min_run_time
 * and max_run_time for adaptive_autorange); then PyTorch's calls of stmt, clock reads and
 * setup runs, and its Measurement. */
typedef struct bench_golden_timer {
    const char *name;
    int method;
    int64_t number;
    double min_run_time, threshold, max_run_time;
    int num_threads;
    const uint64_t *costs;
    int n_costs;
    const uint64_t *reads;
    int n_reads;
    int64_t calls, clock_reads, setups;
    bench_golden_result want;
} bench_golden_timer;
"""


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "golden",
                                                  "bench_golden.h"))
    args = ap.parse_args()
    o = [HEADER % (torch.__version__.split("+")[0],
                   c_array("double", "bench_thresholds", THRESHOLDS, c_double))]
    o.append("/* ---- Measurements from raw times ---- */")
    measurement_list(o, "bench_measurements", "bench_m_", MEASUREMENTS)
    o.append("/* ---- Timers on the synthetic clock ---- */")
    timer_cases(o)
    o.append("/* ---- Compare: the set (in order), the env set, and the printed tables ---- */")
    ms = measurement_list(o, "bench_compare_set", "bench_cmp_", compare_set())
    env_ms = measurement_list(o, "bench_compare_env", "bench_cmp_", COMPARE_ENV)
    edge_ms = measurement_list(o, "bench_compare_edge", "bench_cmp_", COMPARE_EDGE)
    o.append("#define BENCH_COMPARE_COLORIZED_N %d" % COLORIZED_N)
    for name, text in compare_texts(ms, env_ms, edge_ms):
        o.append("static const char bench_compare_text_%s[] =\n    %s;"
                 % (name, c_string(text, "    ")))
    text = "\n".join(o) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print("wrote %s (%d measurements, %d timers)" % (args.out, len(MEASUREMENTS), len(TIMERS)))


if __name__ == "__main__":
    main()
