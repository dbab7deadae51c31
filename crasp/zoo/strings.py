"""The strings a parity check looks at: every string up to a length, then random long ones."""

from __future__ import annotations

import itertools

import numpy as np


def check_strings(vocab: list[str], up_to: int, per_length: int, long_count: int,
                  long_length: int, seed: int = 0) -> list[list[str]]:
    """Every string of length 0..``up_to`` over ``vocab`` (when a length has more than
    ``per_length``, that many drawn with ``seed``), then ``long_count`` random strings of
    ``long_length``."""
    rng = np.random.default_rng(seed)
    strings: list[list[str]] = []
    for length in range(up_to + 1):
        if len(vocab) ** length <= per_length:
            strings += [list(s) for s in itertools.product(vocab, repeat=length)]
        else:
            strings += [list(rng.choice(vocab, length)) for _ in range(per_length)]
    strings += [list(rng.choice(vocab, long_length)) for _ in range(long_count)]
    return strings
