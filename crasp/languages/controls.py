"""Negative controls: regular languages outside C-RASP, on which a NoPE transformer is not
expected to length-generalize (Huang et al. 2025, Lemma 38, as cited by the algebraic
decomposition paper).

- PARITY: strings over {a, b} with an odd number of b.
- (aa)*: over {a, b}, the strings of a's of even length (the empty string included). It is in
  C-RASP[periodic] (examples/aa_star.crasp, depth 1 with ``#import pos_even``), not in C-RASP.
"""

from __future__ import annotations

import re

import numpy as np

from crasp.languages.language import Ids

A, B = 0, 1


def parity_support(n: int) -> int:
    return 2 ** (n - 1) if n >= 1 else 0


def sample_parity(n: int, rng: np.random.Generator) -> Ids:
    """Uniform over odd-parity strings: n - 1 uniform tokens, and the last one fixes the parity
    (a bijection between {a,b}^(n-1) and the positive strings of length n)."""
    ids = rng.integers(0, 2, size=n, dtype=np.int8)
    ids[-1] = 1 - int(ids[:-1].sum()) % 2
    return ids


def parity_oracle(tokens) -> bool:
    return sum(t == "b" for t in tokens) % 2 == 1


def parity_labels(ids: Ids) -> np.ndarray:
    return np.cumsum(ids == B) % 2 == 1


def aa_star_support(n: int) -> int:
    return 1 if n % 2 == 0 else 0


def sample_aa_star(n: int, rng: np.random.Generator) -> Ids:
    return np.zeros(n, dtype=np.int8)


_AA_STAR = re.compile("(aa)*")


def aa_star_oracle(tokens) -> bool:
    return _AA_STAR.fullmatch("".join(tokens)) is not None


def aa_star_labels(ids: Ids) -> np.ndarray:
    only_a = np.logical_and.accumulate(ids == A)
    return only_a & (np.arange(1, len(ids) + 1) % 2 == 0)
