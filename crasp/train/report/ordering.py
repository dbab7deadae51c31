"""How the report names and orders encodings and languages (L3 < ... < L10 < E3 < others).
"""

from __future__ import annotations

import re


POSENC_NAMES = {"nope": "NoPE", "rope": "RoPE", "alibi": "ALiBi", "t5": "T5 bias",
                "rpe-log": "log RPE", "rpe-lin": "linear RPE"}


def language_sort_key(name: str) -> tuple:
    """L3 < L4 < ... < L10 < E3 < ... < other names (alphabetical, numbers numerically)."""
    match = re.fullmatch(r"([A-Za-z_]*?)(\d+)", name)
    if match:
        prefix, number = match.group(1), int(match.group(2))
    else:
        prefix, number = name, -1
    rank = {"L": 0, "E": 1}.get(prefix, 2)
    return rank, prefix.lower(), number, name


def architecture_name(label: str) -> str:
    """``nope+dp-free`` -> ``NoPE + dp-free``: the encoding's display name, then modifiers."""
    posenc, *modifiers = label.split("+")
    return " + ".join([POSENC_NAMES.get(posenc, posenc), *modifiers])


def posenc_sort_key(name: str) -> tuple:
    order = list(POSENC_NAMES)
    posenc = name.split("+")[0]
    return (order.index(posenc) if posenc in order else len(order), name)
