"""Sparse-memory languages: the label at position i is a Boolean function of the tokens at fixed
lags, y_i = f(w_{i-t_1}, ..., w_{i-t_k}), 1 <= t_1 < ... < t_k.

These are the "fixed, long but sparse memory" targets of the approximation-rate analysis of
transformers with relative positional encodings (Wang & E, "Understanding the Expressive Power
and Mechanisms of Transformer for Sequence Modeling", NeurIPS 2024, §3: y_t = f(x_{t-T_1}, ...,
x_{t-T_M})), over the alphabet {a, b} with b read as 1 and a as 0, and f one of the symmetric
functions ``FUNCTIONS`` (xor, and, or of the bits). The name spells the function and the lags:
``memory-xor-1-2-4`` is y_i = w_{i-1} xor w_{i-2} xor w_{i-4}.

Lag sets. Light-tailed: t_j = j (``light_lags``), all the memory within distance k, as with an
exponentially decaying memory kernel; heavy-tailed: t_j = 2^(j-1) (``heavy_lags``), one lag
in every octave [2^(j-1), 2^j), as with a kernel decaying like 1/t, so the memory reaches
exponentially far in k.

Before the start. A lag that points before the first token (i - t < 0) reads a: the string
is as if padded on the left with a's. This is what C-RASP's ``#[offset(t)] "b"`` computes (it
counts the single position i - t, and is 0 when there is none; BOS is no token), so y_i is
defined at every position, and the empty string's answer (read at BOS, every lag before the
start) is f(0, ..., 0) = false for all three functions.

The language is the set of strings whose label at the last position is true, so the label
of the prediction task at i, "is the prefix up to i in the language", is y_i itself, and
recognition and prediction are one task.

Depth 1, in C-RASP with the ``offset`` predicate: ``bits = #[offset(t_1)] "b" + ... +
#[offset(t_k)] "b"`` (each count is 0 or 1, so ``bits`` is the number of lags holding b) and a
comparison of ``bits`` with constants (xor: bits is odd; and: bits == k; or: bits >= 1).
Depth 0 does not suffice: at the last position a depth-0 formula reads only the last token
and the position, and for xor and or, b a^(t_1) and a^(t_1 + 1) agree on both (the lag t_1
reads b, resp. a; every other lag is before the start) but not on the label; for and,
b^(t_k + 1) and a b^(t_k) (the lag t_k reads b, resp. a; every other lag b). The
compiler builds a one-layer model with one ALiBi head per lag (``crasp.compiler.local_heads``);
whether plain C-RASP (no positions) expresses these languages is not claimed.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from functools import reduce
from typing import Callable

import numpy as np

from crasp.errors import CraspError
from crasp.languages.counting import nonempty_strings_program
from crasp.languages.language import Ids, Lengths, choose_weighted

A, B = 0, 1  # ids: the alphabet is ("a", "b"), b is the bit 1


@dataclass(frozen=True)
class MemoryFunction:
    """A symmetric Boolean function of the k bits, given twice, independently: on the bits
    (``of_bits``, for the oracle) and on their number (``of_count``, for the labeller and the
    program, whose ``condition`` compares the count ``bits`` with constants)."""

    name: str
    of_bits: Callable[[list[bool]], bool]
    of_count: Callable[[np.ndarray, int], np.ndarray]
    condition: Callable[[int], str]


FUNCTIONS = {f.name: f for f in (
    MemoryFunction("xor", lambda bits: reduce(operator.xor, bits, False),
                   lambda count, k: count % 2 == 1,
                   lambda k: " || ".join(f"bits == {c}" for c in range(1, k + 1, 2))),
    MemoryFunction("and", all, lambda count, k: count == k,
                   lambda k: f"bits == {k}"),
    MemoryFunction("or", any, lambda count, k: count >= 1, lambda k: "bits >= 1"),
)}

NAME = re.compile(r"memory-(?P<function>[a-z]+)(?P<lags>(?:-[0-9]+)+)")
"""``memory-FUNCTION-t1-t2-...``."""


def light_lags(k: int) -> tuple[int, ...]:
    """1, 2, ..., k."""
    return tuple(range(1, k + 1))


def heavy_lags(k: int) -> tuple[int, ...]:
    """1, 2, 4, ..., 2^(k-1)."""
    return tuple(2 ** j for j in range(k))


def memory_name(function: str, lags: tuple[int, ...]) -> str:
    return f"memory-{function}-" + "-".join(map(str, lags))


def parse_memory_name(name: str) -> tuple[MemoryFunction, tuple[int, ...]] | None:
    """(function, lags) for ``memory-FUNCTION-t1-...``, None for another kind of name; a
    malformed memory name is an error that says what is expected."""
    match = NAME.fullmatch(name)
    if not match:
        if name.startswith("memory-"):
            raise CraspError(f"{name}: write memory-FUNCTION-LAG-LAG-..., like "
                             f"memory-xor-1-2-4, with FUNCTION one of {', '.join(FUNCTIONS)}")
        return None
    if match["function"] not in FUNCTIONS:
        raise CraspError(f"{name}: unknown function {match['function']!r}; use one of "
                         f"{', '.join(FUNCTIONS)}")
    lags = tuple(int(t) for t in match["lags"][1:].split("-"))
    if lags[0] < 1 or any(b <= a for a, b in zip(lags, lags[1:])):
        example = memory_name(match["function"], (1, 2, 4))
        raise CraspError(f"{name}: the lags must be increasing integers >= 1 (each is a "
                         f"distance into the past), like {example}")
    return FUNCTIONS[match["function"]], lags


# ---------------------------------------------------------------------------- membership

def memory_oracle(function: MemoryFunction, lags: tuple[int, ...], tokens) -> bool:
    """f of the bits at the lags of the last position (position -1, BOS, for the empty
    string); a lag before the start reads a."""
    last = len(tokens) - 1
    return function.of_bits([last - t >= 0 and tokens[last - t] == "b" for t in lags])


def memory_labels(function: MemoryFunction, lags: tuple[int, ...], ids: Ids) -> np.ndarray:
    """y_i at every position: the number of lags holding b, by shifted sums, then f of it."""
    is_b = (ids == B).astype(np.int64)
    count = np.zeros(len(ids), dtype=np.int64)
    for t in lags:
        count[t:] += is_b[:max(len(ids) - t, 0)]
    return np.asarray(function.of_count(count, len(lags)), dtype=bool)


# ---------------------------------------------------------------------------- generation

def _satisfying_counts(function: MemoryFunction, lags: tuple[int, ...],
                       n: int) -> tuple[int, np.ndarray]:
    """m, the number of lags inside a string of length n (seen from its last position), and
    for s = 0..m the number of ways to put b at s of them so that f holds (the other lags
    read a)."""
    m = sum(1 for t in lags if t <= n - 1)
    holds = function.of_count(np.arange(m + 1), len(lags))
    return m, np.array([math.comb(m, s) if ok else 0 for s, ok in enumerate(holds)],
                       dtype=object)


def memory_support(function: MemoryFunction, lags: tuple[int, ...], n: int) -> int:
    """The strings of length n in the language: a satisfying choice of the m lag positions
    inside the string, times 2^(n - m) for the other positions."""
    m, ways = _satisfying_counts(function, lags, n)
    return int(ways.sum()) * 2 ** (n - m) if n >= 0 else 0


def sample_memory(function: MemoryFunction, lags: tuple[int, ...], n: int,
                  rng: np.random.Generator) -> Ids:
    """A uniformly random string of the language of length n (only called where there is one).

    Uniform: the positions outside the lags are uniform tokens; the number s of b's at the m
    lags inside the string is drawn with probability proportional to its number of
    satisfying placements C(m, s) [f(s)], and the s positions uniformly among the m. Each
    string of the language so has probability 1 / ``memory_support``.
    """
    ids = rng.integers(0, 2, size=n, dtype=np.int8)
    m, ways = _satisfying_counts(function, lags, n)
    count = choose_weighted(ways.tolist(), rng)
    positions = np.array([n - 1 - t for t in lags if t <= n - 1], dtype=np.int64)
    ids[positions] = A
    ids[rng.permutation(positions)[:count]] = B
    return ids


# ---------------------------------------------------------------------------- program

def memory_program(function: MemoryFunction, lags: tuple[int, ...]) -> str:
    """The depth-1 C-RASP program (with ``offset``) of ``memory_name(function, lags)``."""
    name = memory_name(function.name, lags)
    reads = f" {function.name} ".join(f"w[i-{t}]" for t in lags)
    bits = " + ".join(f'#[offset({t})] "b"' for t in lags)
    return (f"// language: {name}: y_i = {reads} (b is 1; a lag before the start reads a)\n"
            "// depth: 1\n"
            'alphabet "a" "b"\n'
            f"bits = {bits}\n"
            f"memory_{function.name} = {function.condition(len(lags))}\n")


def memory_prefixes_program(function: MemoryFunction, lags: tuple[int, ...]) -> str:
    """The nonempty prefixes of the language's strings, every nonempty string of a and b
    (derived in the program's comment: appended tokens fill every lag of the last position)."""
    name = memory_name(function.name, lags)
    return nonempty_strings_program(
        name, "ab", name.replace("-", "_"), "Every string of a and b is a prefix of one in "
        "the language: append the last lag's count of tokens, all b for and, b at the first "
        "lag and a elsewhere for xor and or.")


def lengths(function: MemoryFunction, lags: tuple[int, ...]) -> Lengths:
    """Where strings exist: from the shortest length that holds one. The lags inside a string
    of length n change only at n = t + 1, and more lags inside never make f unsatisfiable
    (the new ones can read a), so the shortest is 0 or some t + 1, and all longer lengths
    hold strings too; with every lag inside, xor, and and or are satisfiable."""
    shortest = next(n for n in (0, *(t + 1 for t in lags))
                    if _satisfying_counts(function, lags, n)[1].any())
    return Lengths(shortest)
