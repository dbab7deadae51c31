"""The classic counting languages: Dyck-1, bounded Dyck D_2, a^n b^n, a^n b^n c^n, majority,
contains-ab. Each has a uniform generator of positive strings, an oracle (an automaton with a
counter, a regular expression with counts, or explicit counting) and a vectorized prefix
labeller; the depths are derived in ``DEPTHS``.

Depth lower bounds below use one fact: a plain C-RASP formula of depth 1 read at the last
position depends only on the last token and the letter counts (its counts are counts of
depth-0 formulas, Boolean combinations of token tests, so they are sums of letter counts); a
depth-0 formula depends only on the last token.
"""

from __future__ import annotations

import math
import re
import textwrap

import numpy as np

from crasp.languages.language import Ids

OPEN, CLOSE = 0, 1  # ids for "(" and ")"
A, B, C = 0, 1, 2


# ---------------------------------------------------------------------------- Dyck-1

def catalan(m: int) -> int:
    return math.comb(2 * m, m) // (m + 1)


def dyck_support(n: int) -> int:
    return catalan(n // 2) if n % 2 == 0 else 0


def sample_dyck(n: int, rng: np.random.Generator) -> Ids:
    """A uniformly random Dyck-1 word of even length n = 2m, by the cycle lemma.

    Shuffle m opens (+1) and m + 1 closes (-1): a uniform arrangement x_1 .. x_{2m+1}, with
    prefix sums S_t and total -1. Let t be the first index where S attains its minimum. The
    rotation x_{t+1} .. x_{2m+1} x_1 .. x_t has every proper prefix sum >= 0 and total -1
    (after t the sums never go below S_t; before t they stay strictly above it), so dropping
    its final close leaves a Dyck word. Exactly one of the 2m + 1 rotations has this property,
    and the rotations are distinct (a period p < 2m + 1 would make the total a multiple of
    (2m + 1) / p > 1, not -1), so each Dyck word comes from exactly 2m + 1 arrangements:
    uniform.
    """
    m = n // 2
    steps = np.ones(n + 1, dtype=np.int8)
    steps[m:] = -1
    rng.shuffle(steps)
    first_minimum = int(np.argmin(np.cumsum(steps))) + 1
    rotated = np.concatenate((steps[first_minimum:], steps[:first_minimum - 1]))
    return (rotated < 0).view(np.int8)  # the final close, steps[first_minimum - 1], dropped


def dyck_oracle(tokens, bound: int | None = None) -> bool:
    """A one-counter automaton: the height never goes below 0 (nor above ``bound``), ends at 0."""
    height = 0
    for token in tokens:
        height += 1 if token == "(" else -1
        if height < 0 or (bound is not None and height > bound):
            return False
    return height == 0


def dyck_labels(ids: Ids, bound: int | None = None) -> np.ndarray:
    height = np.cumsum(np.where(ids == OPEN, 1, -1))
    in_range = height >= 0 if bound is None else (height >= 0) & (height <= bound)
    return np.logical_and.accumulate(in_range) & (height == 0)


# ---------------------------------------------------------------------------- bounded D_2

def bounded_dyck2_support(n: int) -> int:
    """Dyck words of height <= 2 and length 2m: 2^(m-1) for m >= 1 (``sample_bounded_dyck2``)."""
    if n % 2:
        return 0
    return 1 if n == 0 else 2 ** (n // 2 - 1)


def sample_bounded_dyck2(n: int, rng: np.random.Generator) -> Ids:
    """A uniformly random Dyck word of height <= 2 and length n = 2m.

    Such a word is a sequence of primitive words "(" X ")" with X of height <= 1, that is
    X = "()"^(p-1); a primitive of p pairs has length 2p. So words of length 2m are in
    bijection with compositions of m (the list of p's), and compositions of m with subsets of
    the m - 1 gaps between consecutive pairs (cut or not). Cutting each gap independently with
    probability 1/2 draws a uniform subset, hence a uniform word; there are 2^(m-1).
    """
    m = n // 2
    if m == 0:
        return np.zeros(0, dtype=np.int8)
    cuts = np.flatnonzero(rng.random(m - 1) < 0.5) + 1
    parts = np.diff(np.concatenate(([0], cuts, [m])))
    word = "".join("(" + "()" * (p - 1) + ")" for p in parts.tolist())
    return (np.frombuffer(word.encode(), dtype=np.uint8) == ord(")")).astype(np.int8)


# ---------------------------------------------------------------------------- a^n b^n (c^n)

def equal_blocks_support(letters: int, n: int) -> int:
    """a^n b^n (c^n) has one string of each length divisible by the number of letters."""
    return 1 if n % letters == 0 else 0


def sample_equal_blocks(letters: int, n: int, rng: np.random.Generator) -> Ids:
    return np.repeat(np.arange(letters, dtype=np.int8), n // letters)


def equal_blocks_oracle(letters: int, tokens) -> bool:
    word = "".join(tokens)
    alphabet = "abc"[:letters]
    return (re.fullmatch("".join(f"{x}*" for x in alphabet), word) is not None
            and len({word.count(x) for x in alphabet}) == 1)


def equal_blocks_labels(letters: int, ids: Ids) -> np.ndarray:
    """Prefix i is in a^n b^n (c^n) iff its letters never decrease and all counts are equal."""
    sorted_so_far = np.logical_and.accumulate(np.concatenate(([True], ids[1:] >= ids[:-1])))
    counts = np.cumsum(ids[:, None] == np.arange(letters)[None, :], axis=0)
    equal = np.all(counts == counts[:, :1], axis=1)
    return sorted_so_far[:len(ids)] & equal


# ---------------------------------------------------------------------------- majority

def majority_support(n: int) -> int:
    """The strings of {a, b}^n with more a than b: by the symmetry a <-> b, half of those
    without a tie, and a tie (n/2 of each) needs n even."""
    ties = math.comb(n, n // 2) if n % 2 == 0 else 0
    return (2 ** n - ties) // 2


def sample_majority(n: int, rng: np.random.Generator) -> Ids:
    """A uniformly random string over {a, b} of length n with more a than b.

    Draw the number of a's c ~ Binomial(n, 1/2), mirror it (c -> n - c) when c < n / 2 and
    redraw on a tie: by the symmetry of the binomial, P(c) is proportional to C(n, c) on
    c > n / 2, the share of the positive strings with c a's. Then place the a's uniformly.
    """
    while True:
        count_a = int(rng.binomial(n, 0.5))
        if 2 * count_a != n:
            break
    count_a = max(count_a, n - count_a)
    ids = np.full(n, B, dtype=np.int8)
    ids[:count_a] = A
    rng.shuffle(ids)
    return ids


def majority_oracle(tokens) -> bool:
    return sum(t == "a" for t in tokens) > sum(t == "b" for t in tokens)


def majority_labels(ids: Ids) -> np.ndarray:
    return np.cumsum(ids == A) > np.cumsum(ids == B)


# ---------------------------------------------------------------------------- contains ab

def contains_ab_support(n: int) -> int:
    """All 2^n strings but the n + 1 of the form b^i a^(n-i)."""
    return 2 ** n - (n + 1)


def sample_contains_ab(n: int, rng: np.random.Generator) -> Ids:
    """Uniform over the positive strings: uniform strings, rejected until one contains "ab"
    (the rejection rate (n + 1) / 2^n is at most 3/4, at n = 2)."""
    while True:
        ids = rng.integers(0, 2, size=n, dtype=np.int8)
        if np.any((ids[:-1] == A) & (ids[1:] == B)):
            return ids


def contains_ab_oracle(tokens) -> bool:
    return "ab" in "".join(tokens)


def contains_ab_labels(ids: Ids) -> np.ndarray:
    ends_ab = np.concatenate(([False], (ids[:-1] == A) & (ids[1:] == B)))
    return np.logical_or.accumulate(ends_ab)[:len(ids)]


# ---------------------------------------------------------------------------- depths

DEPTHS = {
    # name: (recognition depth, prediction depth)
    "dyck1": (2, 1),
    "dyck2": (2, 1),
    "anbn": (2, 1),
    "anbncn": (2, 1),
    "majority": (1, 1),
    "contains_ab": (2, 2),
}
"""Recognition and prediction depths, with the programs that reach them and why no less works.

- Dyck-1 and bounded D_2: recognition 2 (examples/dyck1.crasp, dyck2_bounded.crasp); depth 1
  fails on "()()" (in) and ")(()" (out): same last token and counts. Prediction 1: a prefix of
  a Dyck word never goes below 0 (nor above the bound), so it is one iff #( = #); depth 0 fails
  on "()" (in) and "(()" (out, a prefix of "(())"), both ending in ")".
- a^n b^n: recognition 2 (examples/anbn.crasp); depth 1 fails on "aabb" and "abab". Prediction
  1: a prefix of a^n b^n is a^i or a^n b^j, in the language iff #a = #b; depth 0 fails on "ab"
  and "aab".
- a^n b^n c^n: recognition 2 (examples/anbncn.crasp); depth 1 fails on "aabbcc" and "abcabc".
  Prediction 1: #a = #b = #c on prefixes; depth 0 fails on "abc" and "aabbc".
- majority: recognition 1 (examples/majority.crasp); depth 0 fails on "aab" (in) and "ab"
  (out). Every string is a prefix of a positive one (append a's), so prediction is recognition.
- contains_ab: over {a, b}, some a immediately followed by b iff some a followed later by some
  b (between them the letters change from a to b somewhere), so it is the subsequence test
  #[Q_b && #[Q_a] >= 1] >= 1 of depth 2 in plain C-RASP. Depth 1 fails on "aba" (in) and "baa"
  (out). Every string is a prefix of a positive one, so prediction is recognition. The shipped
  program uses the local predicate (#[pred], a count in Hahn's dialect, also depth 2); with
  Knee-Deep's free Y operator it would be depth 1.
"""


PREDICTION_PROGRAMS = {
    "dyck1": '// language: Dyck-1 prediction\n// depth: 1\nalphabet "(" ")"\n'
             'predict_dyck1 = #"(" == #")"\n',
    "dyck2": '// language: bounded Dyck D_2 prediction\n// depth: 1\nalphabet "(" ")"\n'
             'predict_dyck2 = #"(" == #")"\n',
    "anbn": '// language: a^n b^n prediction\n// depth: 1\nalphabet "a" "b"\n'
            'predict_anbn = #"a" == #"b"\n',
    "anbncn": '// language: a^n b^n c^n prediction\n// depth: 1\nalphabet "a" "b" "c"\n'
              'predict_anbncn = (#"a" == #"b") && (#"b" == #"c")\n',
}
"""The depth-1 prediction programs of ``DEPTHS`` for the languages whose shipped recognition
program is deeper (made in code; no file ships)."""


def _prefix_program(title: str, letters: str, why: list[str], conditions: list[str],
                    name: str) -> str:
    """A program of the nonempty prefixes of a language's strings over ``letters`` (``why``:
    the derivation, as comment lines): no other token, and no position where one of the
    ``conditions`` holds (each a definition ``NAME = ...``, counted to 0)."""
    alphabet = " ".join(f'"{letter}"' for letter in letters)
    other = "other = !(" + " || ".join(f'"{letter}"' for letter in letters) + ")"
    tests = [line.split(" = ")[0] for line in conditions]
    answer = " && ".join(["#true >= 1", "#other == 0"] + [f"#{test} == 0" for test in tests])
    return "\n".join([f"// language: the nonempty prefixes of the strings of {title}, where "
                      "its prediction task is specified",
                      f"// depth: {2 if conditions else 1}", *(f"// {line}" for line in why),
                      f"alphabet {alphabet}", other, *conditions,
                      f"{name}_prefix = {answer}"]) + "\n"


def nonempty_strings_program(title: str, letters: str, name: str, why: str) -> str:
    """The prefixes of a language every nonempty string over ``letters`` extends into (``why``
    says how): every nonempty string of its letters (depth 1)."""
    return _prefix_program(title, letters, textwrap.wrap(why, 88), [], name)


PREFIXES_PROGRAMS = {
    "dyck1": _prefix_program("Dyck-1", "()", [
        "A string of ( and ) is a prefix of a Dyck word iff none of its prefixes has more )",
        "than ( (append the missing )); dips counts the positions where one does."],
        ['dips = #"(" < #")"'], "dyck1"),
    "dyck2": _prefix_program("bounded Dyck D_2", "()", [
        "A prefix of a D_2 word keeps 0 <= #( - #) <= 2 at every position (append the",
        "missing )); dips and deep count the positions where it does not."],
        ['dips = #"(" < #")"', 'deep = #"(" > #")" + 2'], "dyck2"),
    "anbn": _prefix_program("a^n b^n", "ab", [
        "A prefix of a^n b^n is a^i b^j with j <= i (append the missing b): no a after a b",
        "(a_late) and no position with more b than a (b_over)."],
        ['a_late = "a" && #"b" >= 1', 'b_over = #"b" > #"a"'], "anbn"),
    "anbncn": _prefix_program("a^n b^n c^n", "abc", [
        "A prefix of a^n b^n c^n is a^i b^j c^l with j, l <= i and j = i once l >= 1",
        "(append the missing b and c): no a after a b or c (a_late), no b after a c (b_late),",
        "no position with more b or c than a (over), no c while b is short of a (c_early)."],
        ['a_late = "a" && #("b" || "c") >= 1', 'b_late = "b" && #"c" >= 1',
         'over = (#"b" > #"a") || (#"c" > #"a")', 'c_early = "c" && #"b" < #"a"'], "anbncn"),
    "majority": nonempty_strings_program(
        "majority", "ab", "majority", "Every string of a and b is a prefix of one with more a "
        "than b (append a's)."),
    "contains_ab": nonempty_strings_program(
        "contains_ab", "ab", "contains_ab", "Every string of a and b is a prefix of one that "
        "contains a b (append a b)."),
}
"""The nonempty prefixes of each language's strings, where its prediction task is specified
(``crasp equiv --domain``; made in code). Every test is counted to 0, so each program is
prefix-closed by its form (``crasp.verify.closure``)."""
