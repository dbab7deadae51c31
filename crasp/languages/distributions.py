"""Named test distributions of the block languages: how the length n of a string of L_k is
split into its k blocks.

A string of L_k is fixed by its composition n = n_1 + ... + n_k into positive block lengths,
so a distribution over strings of L_k of length n is a distribution over compositions. The
paper draws them uniformly (``blocks.sample_blocks``), so blocks have similar lengths and a
model may lean on the average block length; the distributions here move the block lengths
away from it while every string stays in L_k and keeps its oracle labels.

- ``uniform``: the paper's: uniform over the C(n-1, k-1) compositions. It is the language's
  own generator, so a test bin written ``LO:HI`` or ``LO:HI@uniform`` draws the same strings.
- ``skewed``: Dirichlet-multinomial with concentration ``SKEWED_CONCENTRATION`` (heavy-tailed
  block lengths; see ``sample_dirichlet_composition``). Concentration 1 is exactly the uniform
  composition, so ``uniform`` and ``skewed`` are one family.
- ``extreme``: one block, chosen uniformly, takes almost all of the length; each other block
  has at most ``EXTREME_SHORT_MAX`` letters (see ``sample_extreme_composition``).

For E_k each distribution applies to the letters (the e-deleted string), and the e's are
inserted as by E_k's own generator (``blocks.sample_neutral``). ``blocks_distributions`` and
``neutral_distributions`` give them to the registry as ``Language.distributions``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable

import numpy as np

from crasp.languages.blocks import (blocks_of_lengths, blocks_support, lengths_of_blocks,
                                   neutral_support, sample_neutral)
from crasp.languages.language import StringDistribution, choose_weighted

SKEWED_CONCENTRATION = 0.25
"""The Dirichlet concentration of ``skewed``: well below 1, so that most of the length goes to
a few blocks and the others stay short (the variance of a block length is about
(1 + k) / (1 + k alpha) = 2.3 to 3.3 times the uniform composition's for k = 3 .. 12)."""

EXTREME_SHORT_MAX = 4
"""The longest a short block of ``extreme`` can be."""


@dataclass(frozen=True)
class CompositionDistribution:
    """A named distribution over the compositions of n into k positive parts.

    ``support(k, n)`` is the exact number of compositions ``sample(k, n, rng)`` can return
    and ``reaches(lengths)`` says whether it can return this one (the dataset builder's
    distinct-string checks rely on both); ``sample`` is only called for n >= k, and returns
    the k block lengths as an int64 array. ``settles_at(k)``: a length M from which
    ``support(k, n)`` is the same for every n >= M (None: no such length), which lets E_k
    count its strings in M terms instead of n (``blocks.neutral_support``).
    """

    name: str
    definition: str
    support: Callable[[int, int], int]
    sample: Callable[[int, int, np.random.Generator], np.ndarray]
    reaches: Callable[[np.ndarray], bool]
    settles_at: Callable[[int], int | None] = lambda k: None


# ---------------------------------------------------------------------------- skewed

def sample_dirichlet_composition(k: int, n: int, concentration: float,
                                 rng: np.random.Generator) -> np.ndarray:
    """Block lengths 1 + m_j, where (m_1, ..., m_k) ~ Dirichlet-multinomial(n - k, alpha 1_k).

    That is: draw block shares p ~ Dirichlet(alpha, ..., alpha), then distribute the n - k
    letters beyond the one each block needs by Multinomial(n - k, p). Every composition has
    positive probability (so the support is all C(n-1, k-1) compositions). With alpha = 1 the
    law of (m_j) is uniform over the C(n-1, k-1) ways to write n - k as k ordered parts >= 0
    (the Dirichlet-multinomial pmf is prod_j Gamma(m_j + alpha) / Gamma(alpha) / m_j! up to a
    factor of n alone, and Gamma(m_j + 1) / m_j! = 1), hence the uniform composition of the
    paper. With alpha < 1 the shares are U-shaped: a block's share has the Beta(alpha,
    (k-1) alpha) law, so most blocks are short and a few take most of the length. Moments,
    with N = n - k: E[n_j] = 1 + N / k, Var[n_j] = N (1/k)(1 - 1/k)(N + k alpha)/(1 + k alpha).
    """
    shares = rng.dirichlet(np.full(k, concentration))
    return 1 + rng.multinomial(n - k, shares)


# ---------------------------------------------------------------------------- extreme

@lru_cache(maxsize=None)
def _short_tuples(count: int, budget: int) -> int:
    """The number of tuples in {1..EXTREME_SHORT_MAX}^count with sum <= budget.

    Without the upper bound, tuples of positive integers with sum <= B are C(B, count) (stars
    and bars, with one slack part); inclusion-exclusion over the j parts that exceed the bound
    s (subtract s from each) gives sum_j (-1)^j C(count, j) C(B - j s, count).
    """
    if budget >= count * EXTREME_SHORT_MAX:
        return EXTREME_SHORT_MAX ** count
    return sum((-1) ** j * math.comb(count, j) * math.comb(budget - j * EXTREME_SHORT_MAX, count)
               for j in range(count + 1) if budget - j * EXTREME_SHORT_MAX >= count)


@lru_cache(maxsize=None)
def _short_tuples_summing_to(count: int, total: int) -> int:
    """The number of tuples in {1..EXTREME_SHORT_MAX}^count with sum exactly ``total``."""
    return _short_tuples(count, total) - _short_tuples(count, total - 1)


def extreme_support(k: int, n: int) -> int:
    """The number of compositions of n into k parts with at most one part > EXTREME_SHORT_MAX.

    Those with exactly one long part: k places for it, times the short tuples of the other
    k - 1 parts that leave it more than EXTREME_SHORT_MAX letters; plus those with every part
    short. ``sample_extreme_composition`` reaches each of them (an all-short composition with
    any choice of the long block).

    From n = k S + 1 on (S = EXTREME_SHORT_MAX) it is k S^(k-1): no composition is all short
    (their sum is at most k S), and every tuple of k - 1 short parts leaves the long one at
    least n - (k - 1) S >= S + 1 letters (``_extreme_settles_at``).
    """
    if n < k:
        return 0
    one_long = k * _short_tuples(k - 1, n - EXTREME_SHORT_MAX - 1)
    return one_long + _short_tuples_summing_to(k, n)


def _extreme_settles_at(k: int) -> int:
    """The length from which ``extreme_support(k, n)`` is k S^(k-1) for every n."""
    return k * EXTREME_SHORT_MAX + 1


def sample_extreme_composition(k: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """One long block and k - 1 short ones.

    Definition: the long block's index is uniform in {1, ..., k}; the other k - 1 lengths are
    independent and uniform in {1, ..., EXTREME_SHORT_MAX}, conditioned on leaving the long
    block at least one letter (a condition that only bites when n <= (k - 1) *
    EXTREME_SHORT_MAX, that is for short strings); the long block takes the rest. So every
    block but one has at most EXTREME_SHORT_MAX letters. Sampling the conditioned tuple:
    each length in turn, with probability proportional to the number of ways to complete the
    tuple within the budget (``_short_tuples``), which gives the uniform law on the allowed
    tuples.
    """
    lengths = np.empty(k, dtype=np.int64)
    long_block = int(rng.integers(k))
    budget, short = n - 1, k - 1
    if budget >= short * EXTREME_SHORT_MAX:
        shorts = rng.integers(1, EXTREME_SHORT_MAX + 1, size=short)
    else:
        shorts = np.empty(short, dtype=np.int64)
        for i in range(short):
            ways = [_short_tuples(short - i - 1, budget - x)
                    for x in range(1, EXTREME_SHORT_MAX + 1)]
            shorts[i] = 1 + choose_weighted(ways, rng)
            budget -= int(shorts[i])
    lengths[np.arange(k) != long_block] = shorts
    lengths[long_block] = n - int(shorts.sum())
    return lengths


# ---------------------------------------------------------------------------- the table

SKEWED = CompositionDistribution(
    name="skewed",
    definition=f"Dirichlet-multinomial block lengths with concentration "
               f"{SKEWED_CONCENTRATION:g}: shares p ~ Dirichlet({SKEWED_CONCENTRATION:g}, ...), "
               "block j gets 1 + Multinomial(n - k, p)_j letters (concentration 1 is the "
               "uniform composition)",
    support=blocks_support, reaches=lambda lengths: True,
    sample=lambda k, n, rng: sample_dirichlet_composition(k, n, SKEWED_CONCENTRATION, rng))

EXTREME = CompositionDistribution(
    name="extreme",
    definition=f"one block, chosen uniformly, is long; every other block has a length uniform "
               f"in 1..{EXTREME_SHORT_MAX} (conditioned on the long block keeping a letter)",
    support=extreme_support, sample=sample_extreme_composition,
    reaches=lambda lengths: int(np.sum(lengths > EXTREME_SHORT_MAX)) <= 1,
    settles_at=_extreme_settles_at)

COMPOSITION_DISTRIBUTIONS = {d.name: d for d in (SKEWED, EXTREME)}
"""The named distributions besides ``uniform`` (the language's own generator), by name."""


# ---------------------------------------------------------------------------- as strings

def _letters_of(composition: CompositionDistribution):
    """(k, m, rng) -> a string of L_k of length m with its blocks drawn by ``composition``."""
    return lambda k, m, rng: blocks_of_lengths(composition.sample(k, m, rng))


def _reaches_of(composition: CompositionDistribution):
    """ids -> whether ``composition`` can draw the blocks of this string's letters."""
    return lambda ids: composition.reaches(lengths_of_blocks(ids))


def blocks_distributions(k: int) -> dict[str, StringDistribution]:
    """L_k's named test distributions, as drawers of strings."""
    return {name: StringDistribution(
                name, composition.definition, partial(composition.support, k),
                partial(_letters_of(composition), k), _reaches_of(composition))
            for name, composition in COMPOSITION_DISTRIBUTIONS.items()}


def neutral_distributions(k: int, rate: float) -> dict[str, StringDistribution]:
    """Each composition distribution applied to the letters; the e's as E_k inserts them."""
    return {name: StringDistribution(
                name, f"{composition.definition}, applied to the letters; e's inserted at "
                      f"rate {rate:g} as by E{k}'s generator",
                partial(neutral_support, k, rate, letters_support=composition.support,
                        settles_at=composition.settles_at(k)),
                partial(sample_neutral, k, rate,
                        sample_letters=_letters_of(composition)),
                _reaches_of(composition))
            for name, composition in COMPOSITION_DISTRIBUTIONS.items()}
