"""tools/golden_c.py - C source helpers shared by the golden-header generators."""


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
