"""Pass: sample matrix of two programs' counts -> candidate linear inequalities between the
counts (for the solver's lemmas, beside the equations of ``crasp.verify.relations``).

Why. Over ``a b``, ``#(#"a" == #"b") <= #"a"`` always holds: the balanced positions have
distinct values of #"a". No equation between the counts says so, and the answer alone is
not inductive: a state with more balanced positions X than a's keeps the answer true while
b's follow, and breaks it only later. The conjunction {X <= #"a", X <= #"b"} is inductive:
at a new balanced position with #"a" = #"b" = m one of the two was m - 1 before, so
X + 1 <= m. Houdini's search over such candidates (``bounded`` proves them position by
position, ``induction`` assumes the survivors of its start state and re-proves them) finds it.

Templates, over the columns v of ``relations._sample_matrix`` (both programs' unrolled counts,
then the Parikh counts n_s):

* ``v_i - v_j <= c`` for two distinct columns, with c the largest value of v_i - v_j over the
  samples, proposed only when 0 <= c <= ``MAX_CONSTANT``: a difference that grows with the
  length (#"a" - #"b") exceeds a small constant on the random samples, up to 64 tokens long,
  so small observed bounds are the ones worth a solver call;
* ``v_i <= c`` for a count that stays at most ``MAX_CONSTANT`` (the count of the first "a").

Every sample has its BOS row, where every count and n_s is 0, so c >= 0: each candidate holds
at the start of every string, which the induction's base case needs (the start state before
p = 0 is that row). Not proposed, because the zero row or the invariant Inv of ``induction``
(0 <= count <= p, n_s >= 0) implies them or they add nothing: ``v_i + v_j >= c`` (c <= 0),
``v_i + v_j <= c`` (each of v_i, v_j is then bounded: two single bounds), ``n_s - n_t <= c``
(a difference of Parikh counts is unbounded or its sign is implied by n >= 0), ``v_i - v_j
<= c`` where v_j is the position p on every sample (Inv), where v_i is always 0 or v_i and v_j
are the same column on every sample (an equation then states more), or where a basis equation
r (``relations.null_space``) reads r_i (v_i - v_j) + sum of terms of r_i's sign = 0 (so
v_i - v_j <= 0 follows from the equation and v >= 0: anbncn's X + Y = #"b" gives X <= #"b"),
or that follows from two other candidates v_i - v_k <= c1, v_k - v_j <= c2 with c1 + c2 <= c
(E_k's nested counts #B5 <= #B3 <= #B1 make no #B5 <= #B1).

A candidate is only a guess, bounded by samples of length <= 64: the solver proves it or it is
dropped, so a wrong one costs solver calls, never an answer.

Budget. The count-Parikh pairs and single bounds are linear in the number of counts; pairs of
two counts are tried only when there are at most ``PAIRWISE_COUNTS`` distinct count columns
(so a decompiled program of 1,000+ counts stays near-linear, with the linear templates only),
and each maximum is first taken over every ``PREFILTER_STRIDE``-th row, then over all rows for
the pairs that pass. At most ``MAX_INEQUALITIES`` candidates are kept, the tightest first
(smallest c, then the most sample rows at which the bound is attained).
"""

from __future__ import annotations

import numpy as np

MAX_CONSTANT = 2
"""The largest c of a proposed ``v_i - v_j <= c`` or ``v_i <= c``."""

PAIRWISE_COUNTS = 48
"""Pairs of two counts are tried only when there are at most this many distinct count columns."""

MAX_INEQUALITIES = 256
"""At most this many candidates are proposed (each costs up to one solver call per position)."""

PREFILTER_STRIDE = 8
"""The first pass over a pair takes every this-th row (a maximum there is a lower bound)."""

BLOCK = 1 << 22
"""Entries of one difference block (rows x pairs) computed at a time."""

Inequality = tuple[int, "int | None", int]
"""(i, j, c): v_i - v_j <= c, or v_i <= c when j is None."""


def candidate_inequalities(rows: np.ndarray, parikh: int,
                           equations: list[tuple[int, ...]]) -> list[Inequality]:
    """The inequalities of the templates above that hold at every row of ``rows`` (one row per
    distinct sampled position; the last ``parikh`` columns are the Parikh counts), not implied
    as said above, at most ``MAX_INEQUALITIES``, the tightest first."""
    counts = rows.shape[1] - parikh
    first: dict[bytes, int] = {}   # one column of each class of equal columns
    for column, values in enumerate(np.ascontiguousarray(rows.T)):
        first.setdefault(values.tobytes(), column)
    distinct = sorted(column for column in first.values() if rows[:, column].any())
    position = rows[:, counts:].sum(axis=1)
    is_position = {column for column in distinct
                   if np.array_equal(rows[:, column], position)}
    count_columns = [column for column in distinct if column < counts]
    parikh_columns = [column for column in distinct if column >= counts]
    pairs = [(i, -1) for i in count_columns]
    pairs += [pair for i in count_columns for s in parikh_columns for pair in ((i, s), (s, i))]
    if len(count_columns) <= PAIRWISE_COUNTS:
        pairs += [(i, j) for i in count_columns for j in count_columns if i != j]
    pairs = [(i, j) for i, j in pairs if j not in is_position]
    if not pairs:
        return []
    larger, smaller = (np.array(side) for side in zip(*pairs))
    coarse, _ = _maxima(rows[::PREFILTER_STRIDE], larger, smaller)
    passed = coarse <= MAX_CONSTANT
    larger, smaller = larger[passed], smaller[passed]
    maxima, attained = _maxima(rows, larger, smaller)
    implied = _implied_by_equations(equations, rows.shape[1])
    bound = {(int(i), int(j)): int(c) for i, j, c in zip(larger, smaller, maxima)
             if 0 <= c <= MAX_CONSTANT and (j < 0 or not implied(int(i), int(j)))}
    above: dict[int, dict[int, int]] = {}
    for (i, j), c in bound.items():
        above.setdefault(i, {})[j] = c
    found = sorted((bound[pair], -int(hits), *pair)
                   for pair, hits in zip(zip(larger.tolist(), smaller.tolist()), attained)
                   if pair in bound and not _through(above, *pair))
    return [(i, None if j < 0 else j, c) for c, _, i, j in found[:MAX_INEQUALITIES]]


def _through(above: dict[int, dict[int, int]], i: int, k: int) -> bool:
    """Whether the candidate v_i - v_k <= c follows from two others, v_i - v_j <= c1 and
    v_j - v_k <= c2 with c1 + c2 <= c (k = -1: v_k is 0); a transitive consequence costs
    solver calls and adds nothing."""
    c = above[i][k]
    return any(j != k and k in above.get(j, {}) and first + above[j][k] <= c
               for j, first in above[i].items())


def _maxima(rows: np.ndarray, larger: np.ndarray, smaller: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """For each pair k, the largest value of rows[:, larger[k]] - rows[:, smaller[k]] (minus
    0 where smaller[k] is -1), and at how many rows it is attained; in blocks of ``BLOCK``."""
    maxima = np.empty(len(larger), dtype=np.int64)
    attained = np.empty(len(larger), dtype=np.int64)
    step = max(1, BLOCK // max(1, rows.shape[0]))
    padded = np.concatenate([rows, np.zeros((rows.shape[0], 1), rows.dtype)], axis=1)
    for start in range(0, len(larger), step):
        block = slice(start, start + step)
        difference = padded[:, larger[block]] - padded[:, smaller[block]]   # -1: the zero column
        maxima[block] = difference.max(axis=0)
        attained[block] = (difference == maxima[block]).sum(axis=0)
    return maxima, attained


def _implied_by_equations(equations: list[tuple[int, ...]], width: int):
    """``implied(i, j)``: some basis equation r has r_j = -r_i != 0 and every other
    coefficient of r_i's sign, so v_i - v_j = -(sum of the others) / r_i <= 0 (v >= 0).
    Equations with coefficients beyond int64 are not consulted (only a skip is lost)."""
    try:
        matrix = np.array(equations, dtype=np.int64).reshape(len(equations), width)
    except OverflowError:
        matrix = np.array([equation for equation in equations
                           if max(abs(x) for x in equation) < 2 ** 62],
                          dtype=np.int64).reshape(-1, width)
    positive, negative = (matrix > 0).sum(axis=1), (matrix < 0).sum(axis=1)

    def implied(i: int, j: int) -> bool:
        a = matrix[:, i]
        return bool(np.any((a != 0) & (matrix[:, j] == -a)
                           & np.where(a > 0, negative == 1, positive == 1)))
    return implied
