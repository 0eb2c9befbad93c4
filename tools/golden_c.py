"""tools/golden_c.py - C source helpers shared by the golden-header generators."""
import math


def c_wrap(items, indent, end="", width=100):
    """Comma-separated items wrapped to width columns, end after the last."""
    lines, cur = [], indent
    for k, item in enumerate(items):
        item += "," if k + 1 < len(items) else end
        if len(cur) + 1 + len(item) > width and cur.strip():
            lines.append(cur.rstrip())
            cur = indent
        cur += ("" if cur == indent else " ") + item
    lines.append(cur.rstrip())
    return "\n".join(lines)


def num(v, digits=17):
    """A C literal of v: float32 values need 9 digits, float64 values the shortest repr."""
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v) if digits == 17 else "%.9g" % v


def layout(base, lay):
    """The reduction generators' layouts of a 2-D base: 0 itself, 1 transpose(0, 1), 2 every
    second column (base (A, 2B) -> (A, B)), 3 broadcast (base (1, B) expanded to (3, B))."""
    if lay == 1:
        return base.transpose(0, 1)
    if lay == 2:
        return base.reshape(base.shape[0], -1, 2)[..., 0]
    if lay == 3:
        return base.expand(3, base.shape[1])
    return base
