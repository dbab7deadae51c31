"""Heads with a positive ALiBi slope, decompiled: their tables by distance, and their
thresholds as comparisons of local counts ``#[offset(d)] class``.

The derivation (continuing ``enumerate_states`` and ``write_program``, for a head with slope
a > 0 of a version-3 model):

* **The window.** The score of query state q and key state t at distance d = i - j is
  q . k_t - a d, and its weight W(q, t, d) = R(exp(q . k_t - a d)). With S the largest
  q . k_t over the level's states (BOS included), every key at distance d > Delta =
  floor((S + s ln 2) / a) has exp(...) < 2^-s, so W = 0 (the window lemma,
  ``docs/model-format.md``). The tables hold W(q, t, d) and S(q, t, d) = R(W v_t) for
  d = 0 .. Delta.
* **Counts by distance.** At the program position p (transformer position p + 1), the key at
  distance d is the token position p - d when p - d >= 0, which is in class C exactly when
  ``#[offset(d)] C`` is 1 (it is 0 when p - d < 0); BOS is at distance p + 1, inside the
  window when p + 1 <= Delta. So, with n_{C,d} = ``#[offset(d)] C`` and beta = 1 when BOS is at
  distance d_B = p + 1 <= Delta, the exact sums are N = sum_{C,d} n_{C,d} S(q, C, d) +
  beta S(q, BOS, d_B) and D = sum n_{C,d} W(q, C, d) + beta W(q, BOS, d_B).
* **Thresholds.** As for a uniform head, c >= k iff 2^s N - k D >= 0 when D > 0: one integer
  linear inequality per case of the position, p = 0, ..., Delta - 1 (BOS at distance p + 1,
  written ``#[offset(p)] true >= 1 && #[offset(p + 1)] true == 0``) or p >= Delta (BOS outside,
  ``#[offset(Delta)] true >= 1``). When D = 0 the output is the plain average of v over all
  j <= i, a comparison of the ordinary counts (``#C``, and 1 for BOS), whatever the window.
* **Boxes.** c is a weighted average of the points 2^s S / W with W > 0, or, when D = 0 can
  happen (W(q, q, 0) = 0: the query's own key may weigh nothing), the plain average of any
  v_t: the box spans both.

Every local count has depth (its class's level) + 1, the layer's level: the program keeps the
model's layer count. Preconditions: as ``enumerate_states`` (exact linear maps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

from crasp import syntax

TRUE = syntax.BoolConst(True)


@dataclass(frozen=True)
class Window:
    """``weights[q, t, d]`` = W(q, t, d), ``summands[q, t, d, e]`` = S(q, t, d)_e (grid units),
    keys t the level's states then BOS, distances d = 0 .. ``size``."""

    size: int
    weights: np.ndarray
    summands: np.ndarray


def window_size(scores: torch.Tensor, slope: float, frac_bits: int) -> int:
    """Delta, the largest distance whose weight can be nonzero (the window lemma above), for
    the scores q . k_t of every (query, key) pair."""
    largest = float(scores.max()) if scores.numel() else 0.0
    return max(0, math.floor((largest + frac_bits * math.log(2)) / slope))


def window_tables(arithmetic, scores: torch.Tensor, v: torch.Tensor, slope: float,
                  size: int) -> Window:
    """The tables of one positive-slope head (``scores`` q . k_t for every query and key, v:
    the keys' values, BOS last) up to distance ``size`` (``window_size``)."""
    distances = torch.arange(size + 1, dtype=torch.float64)
    weights = arithmetic.units(torch.exp(scores[..., None] - slope * distances))
    summands = arithmetic.units(arithmetic.value(weights)[..., None] * v[None, :, None, :])
    return Window(size, weights.numpy(), summands.numpy())


def window_points(window: Window, values: np.ndarray, q: int, e: int, scale: float) -> list:
    """The points whose average the head's output coordinate e is, at query state q."""
    weight = window.weights[q]
    positive = weight > 0
    points = list(np.floor_divide(window.summands[q, ..., e][positive] * scale,
                                  weight[positive]))
    if window.weights[q, q, 0] == 0:   # D = 0 is possible: the plain average of any v_t
        points += list(np.floor(values[:, e] * scale).astype(np.int64))
    return points


def offset_count(body: syntax.Expr, distance: int) -> syntax.Count:
    return syntax.Count(body, syntax.LocalRelation("offset", distance, (distance,)))


def _at_least_positions(first: int) -> syntax.Expr:
    """The program position is at least ``first`` (a token exists ``first`` back)."""
    return syntax.Compare(">=", offset_count(TRUE, first), syntax.IntConst(1))


def windowed_at_least(writer, layer: int, tables, window: Window, head: int, q: int, e: int,
                      k: int, holds: bool) -> syntax.Expr:
    """The head output coordinate e is >= k at a position in state q (``holds=False``: < k)."""
    from crasp.decompile.write_program import _and, _any, _or

    scale = 2 ** writer.machine.frac_bits
    weights, summands = window.weights[q], window.summands[q, ..., e]
    ratio = scale * summands - k * weights                           # [keys, distances]
    distinct, index = np.unique(tables.values[head, :, e], return_inverse=True)
    exact = [scale * Fraction(float(value)) - k for value in distinct]
    common = math.lcm(*(c.denominator for c in exact))
    mean = np.array([int(c * common) for c in exact], np.int64)[index.reshape(-1)]
    fallback = writer.linear(layer, mean, holds)                     # D = 0: every position
    cases = []
    for position in range(window.size + 1):   # BOS at distance position + 1, or outside
        bos = position + 1 if position < window.size else None
        where = _at_least_positions(position)
        if bos is not None:
            where = _and(where, syntax.Compare("==", offset_count(TRUE, position + 1),
                                               syntax.IntConst(0)))
        positive = writer.local_linear(layer, weights[:-1], int(weights[-1, bos]) - 1
                                       if bos is not None else -1, True)
        above = writer.local_linear(layer, ratio[:-1], int(ratio[-1, bos])
                                    if bos is not None else 0, holds)
        none = writer.local_linear(layer, weights[:-1], int(weights[-1, bos]) - 1
                                   if bos is not None else -1, False)
        cases.append(_and(where, _or(_and(positive, above), _and(none, fallback))))
    return _any(cases)
