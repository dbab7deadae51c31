"""L_k (k alternating blocks starting with a) and E_k (L_k with a neutral letter e anywhere).

L_k = a+ b+ a+ ... (k nonempty blocks) over {a, b}: Knee-Deep's depth-hierarchy family.
Recognition needs depth exactly k (thm:TLCl_depth); the prediction task needs depth exactly
k - 2 for k >= 3 (cor:prediction_task_depth, witness B_{k-2} && Q_{sigma_k}) and depth 0 for
k <= 2 (every prefix of a+ is in a+, so ``true`` works, and a prefix of a+b+ is in a+b+ iff it
ends in b).

E_k = the strings over {a, b, e} whose e-deleted string is in L_k: the family that keeps the
hierarchy under RoPE and ALiBi (Knee-Deep v3, thm:tlclpos_depth_hierarchy). Its prediction
depth is derived in ``neutral_prediction_depth``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Callable

import numpy as np

from crasp.languages.language import Ids

A, B, E = 0, 1, 2  # ids: the alphabet is ("a", "b") or ("a", "b", "e")


def block_letters(k: int) -> str:
    """"a b a ..." with k letters: the letter of each block."""
    return " ".join("ab"[i % 2] for i in range(k))


# ---------------------------------------------------------------------------- L_k

def blocks_support(k: int, n: int) -> int:
    """|L_k ∩ {a,b}^n| = C(n-1, k-1): a string of L_k is its composition of n into k parts."""
    return math.comb(n - 1, k - 1) if n >= k else 0


def sample_blocks(k: int, n: int, rng: np.random.Generator) -> Ids:
    """A uniformly random string of L_k of length n >= k (the paper's generator).

    Why it is uniform: a string of L_k is fixed by its block lengths, a composition
    n = n_1 + ... + n_k into positive parts, and compositions are in bijection with their sets
    of partial sums {n_1, n_1 + n_2, ..., n_1 + ... + n_{k-1}}, the (k-1)-subsets of
    {1, ..., n-1} (the positions where a new block starts). The first k - 1 entries of a
    uniform permutation form a uniform (k-1)-subset, hence a uniform string of L_k: each of the
    C(n-1, k-1) strings has probability 1 / C(n-1, k-1). The letter at a position is the
    parity of the number of block starts up to it (an exclusive-or scan).
    """
    starts = np.zeros(n, dtype=np.int8)
    starts[rng.permutation(n - 1)[:k - 1] + 1] = 1
    return np.bitwise_xor.accumulate(starts)


def blocks_of_lengths(lengths: np.ndarray) -> Ids:
    """The string of L_k whose blocks have these lengths (a, b, a, ... repeated)."""
    return np.repeat(np.arange(len(lengths), dtype=np.int8) % 2, lengths)


def lengths_of_blocks(ids: Ids) -> np.ndarray:
    """The lengths of the blocks (maximal runs) of the letters of a string, e's skipped."""
    letters = ids[ids != E]
    starts = np.flatnonzero(np.concatenate(([True], letters[1:] != letters[:-1])))
    return np.diff(np.append(starts, len(letters)))


@lru_cache(maxsize=None)
def _blocks_regex(k: int) -> re.Pattern:
    return re.compile("".join("ab"[i % 2] + "+" for i in range(k)))


def blocks_oracle(k: int, tokens) -> bool:
    return _blocks_regex(k).fullmatch("".join(tokens)) is not None


def blocks_labels(k: int, ids: Ids) -> np.ndarray:
    """Prefix i is in L_k iff the string starts with a and has k blocks up to i: a scan of the
    letter changes, independent of the regular expression."""
    changes = np.zeros(len(ids), dtype=bool)
    np.not_equal(ids[1:], ids[:-1], out=changes[1:])
    return (np.cumsum(changes) == k - 1) & (len(ids) > 0 and ids[0] == A)


def blocks_prediction_depth(k: int) -> int:
    return max(k - 2, 0)


# ---------------------------------------------------------------------------- E_k

DEFAULT_INSERTION_RATE = 0.5
"""The default probability that a position of an E_k string holds the neutral letter e."""


LettersSupport = Callable[[int, int], int]
"""(k, m) -> the number of strings of L_k of length m a letters generator can produce."""
LettersSampler = Callable[[int, int, np.random.Generator], Ids]
"""(k, m, rng) -> a string of L_k of length m >= k."""


def neutral_support(k: int, rate: float, n: int,
                    letters_support: LettersSupport = blocks_support,
                    settles_at: int | None = None) -> int:
    """The number of strings of length n the E_k generator can produce.

    With rate 0 it produces the letters' strings only; otherwise every string made of them
    and e's: choose the r <= n - k positions of e (C(n, r) ways) and a letters string on the
    other n - r (``letters_support(k, n - r)`` ways; C(n-r-1, k-1) for all of L_k).

    That sum has n terms; two letter laws have it in fewer. All of L_k: k terms
    (``_neutral_blocks_support``). A law whose count no longer changes from ``settles_at``
    letters on (``letters_support(k, m) = c`` for every m >= M, as for ``extreme``, whose
    short blocks are bounded): with m = n - r letters, sum_{m<M} C(n, m) f(m) + c sum_{m>=M}
    C(n, m), and the second sum is 2^n - sum_{m<M} C(n, m), so M terms for every n >= M.
    """
    if rate == 0:
        return letters_support(k, n)
    if letters_support is blocks_support:
        return _neutral_blocks_support(k, n)
    if settles_at is not None and n >= settles_at:
        below = [math.comb(n, m) for m in range(settles_at)]
        return (sum(below[m] * letters_support(k, m) for m in range(k, settles_at))
                + letters_support(k, settles_at) * (2 ** n - sum(below)))
    return sum(math.comb(n, r) * letters_support(k, n - r) for r in range(n - k + 1))


def _neutral_blocks_support(k: int, n: int) -> int:
    """sum_r C(n, r) C(n - r - 1, k - 1) in k terms instead of n (its cost grew with n^2 over
    a bin's lengths: a bin 1:2000 of E_4 took 43 s).

    With m = n - r letters the sum is sum_{m=1..n} C(n, m) C(m - 1, k - 1). For m >= 1,
    C(m - 1, k - 1) = sum_{j<k} (-1)^(k-1-j) C(m, j) (the alternating partial sums of row m),
    and sum_{m=0..n} C(n, m) C(m, j) = C(n, j) 2^(n-j) (choose the j first, then any subset of
    the rest); the term m = 0 of that sum, C(0, j) = [j = 0], is not in ours. So the count is
    sum_{j<k} (-1)^(k-1-j) C(n, j) 2^(n-j) - (-1)^(k-1), and 0 for n < k (the tests compare
    both forms for k <= 9, n <= 70)."""
    if n < k:
        return 0
    return (sum((-1) ** (k - 1 - j) * math.comb(n, j) * 2 ** (n - j) for j in range(k))
            - (-1) ** (k - 1))


@lru_cache(maxsize=4096)
def _e_count_cdf(k: int, rate: float, n: int) -> np.ndarray:
    """Cumulative distribution of the number r of e's: Binomial(n, rate) conditioned on
    r <= n - k (so that the k blocks fit), computed in log space for long strings."""
    if rate == 0:
        return np.ones(1)
    r = np.arange(n - k + 1)
    # log C(n, i) = sum_{t=1..i} log((n - t + 1) / t), as one cumulative sum
    log_comb = np.concatenate(([0.0], np.cumsum(np.log((n - r[1:] + 1) / r[1:]))))
    log_pmf = log_comb + r * math.log(rate) + (n - r) * math.log1p(-rate)
    pmf = np.exp(log_pmf - log_pmf.max())
    return np.cumsum(pmf) / pmf.sum()


def sample_neutral(k: int, rate: float, n: int, rng: np.random.Generator,
                   sample_letters: LettersSampler = sample_blocks) -> Ids:
    """A random string of E_k of length n >= k.

    The distribution: every position is e independently with probability ``rate``,
    conditioned on at least k positions being letters; the letters then form a string of L_k
    drawn by ``sample_letters`` (by default uniform, the paper's). Sampling: draw the number r
    of e's from that conditioned binomial; choose the n - r letter positions uniformly (given
    r, every placement is equally likely under independent insertions); fill them with
    ``sample_letters(k, n - r)``. With the default, each string of E_k with r e's therefore
    has the same probability given r, and rate 0 gives back L_k's generator.
    """
    cdf = _e_count_cdf(k, rate, n)
    e_count = int(np.searchsorted(cdf, rng.random(), side="right"))
    e_count = min(e_count, n - k)  # guards the last bin against rounding of the cdf
    ids = np.full(n, E, dtype=np.int8)
    letter_positions = np.sort(rng.choice(n, size=n - e_count, replace=False))
    ids[letter_positions] = sample_letters(k, n - e_count, rng)
    return ids


def neutral_oracle(k: int, tokens) -> bool:
    return _blocks_regex(k).fullmatch("".join(tokens).replace("e", "")) is not None


def neutral_labels(k: int, ids: Ids) -> np.ndarray:
    """Prefix i is in E_k iff its letters (e skipped) start with a and form k blocks."""
    letters = np.flatnonzero(ids != E)
    if len(letters) == 0:
        return np.zeros(len(ids), dtype=bool)
    letter_ids = ids[letters]
    blocks = np.zeros(len(ids), dtype=np.int64)
    blocks[letters] = 1 + np.concatenate(([0], np.cumsum(letter_ids[1:] != letter_ids[:-1])))
    blocks = np.maximum.accumulate(blocks)  # an e keeps the block count of the letters before it
    return (blocks == k) & (letter_ids[0] == A)


def neutral_prediction_depth(k: int) -> int:
    """The depth of the E_k prediction task: 1 for k = 1, and k - 1 for k >= 2.

    Upper bound (the programs ``E{k}_predict``). A prefix of a string of E_k, e's deleted, is a
    prefix of a string of L_k: empty, or starting with a with j <= k blocks. It is in E_k iff
    j = k. For k >= 2, j >= k iff the prefix contains the alternating word b a b ... of length
    k - 1 as a subsequence (a string starting with a with j blocks contains exactly the
    alternating words starting with b of length <= j - 1), the test B_{k-1} of depth k - 1;
    e's never match a pattern letter, so they are skipped for free. For k = 1 the prefix may be
    all e's, so the test is "contains an a", depth 1.

    Why L_k's trick (B_{k-2} && Q_{sigma_k}, depth k - 2) fails: when the prefix ends in e, its
    last letter is not at the last position, and no count can read it there.

    Lower bounds. Depth 0 reads only the last token: "abe" (in E_2, a prefix of itself) and
    "aae" (not in E_2, a prefix of "aaeb") both end in e; "ae" and "ee" likewise for E_1. For
    k = 3, a depth-1 formula at the last position depends only on the last token and the
    counts of a, b and e: "abae" (in E_3) and "aabe" (not in E_3, a prefix of "aabea") agree on
    all four, so depth 2 = k - 1 is needed. For every k, depth k - 2 is needed: run a
    prediction formula on u e, where u is a nonempty prefix of a string of L_k (then u e is a
    prefix of a string of E_k, and it is in E_k iff u is in L_k). Unfolding the last position
    (#[phi] at n + 1 is #[phi] at n plus phi at n + 1, and a comparison of such terms is a
    Boolean combination over the values of the phi at n + 1, recursively) gives a formula of
    the same depth at the last position of u that solves the prediction task of L_k, which
    needs depth k - 2 (cor:prediction_task_depth). That k - 1 is needed for k >= 4 is
    conjectured, not proved (theory.md §7, §13); the registry's note says so.
    """
    return 1 if k == 1 else k - 1
