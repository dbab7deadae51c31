"""Pass: sample matrix of two programs' counts -> candidate linear inequalities between the
counts (for the solver's lemmas, beside the equations of ``crasp.verify.relations``).

Why. Over ``a b``, ``#(#"a" == #"b") <= #"a"`` always holds: the balanced positions have
distinct values of #"a". No equation between the counts says so, and the answer alone is
not inductive: a state with more balanced positions X than a's keeps the answer true while
b's follow, and breaks it only later. The conjunction {X <= #"a", X <= #"b"} is inductive:
at a new balanced position with #"a" = #"b" = m one of the two was m - 1 before, so
X + 1 <= m. Houdini's search over such candidates (``bounded`` proves them position by
position, ``induction`` assumes the survivors of its start state and re-proves them) finds it.

Coefficients. ``#(#"a" == 2 * #"b") <= #"b"`` holds too, but needs a coefficient. X counts
the token positions (BOS is never counted, ``crasp.interpret``) where (#"a", #"b") = (2m, m),
m >= 1; such positions have distinct m (the position is 3m), all at most the current #"b",
so X <= #"b" and 2X <= #"a". Neither is inductive alone: a state with X = #"b" = m,
#"a" = 2m - 1 satisfies the first and an "a" makes X = m + 1 > #"b"; one with 2X = #"a" = 2m,
#"b" = m - 1 satisfies the second and a "b" makes 2X = 2m + 2 > #"a". Together they are: at a
new such position, if the token was "a", before it #"a" = 2m - 1, so 2X <= 2m - 1 gives
X <= m - 1; if "b", #"b" was m - 1, so X <= m - 1; either way X + 1 <= m = #"b" and
2(X + 1) <= 2m = #"a" (elsewhere X stays and #"a", #"b" do not fall). Both constants are
0. Over (#"a", #"b") = (3m, 2m) (``#(2 * #"a" == 3 * #"b")``) the pair is 3X <= #"a",
2X <= #"b", by the same argument.

Templates, over the columns v of ``relations._sample_matrix`` (both programs' unrolled counts,
then the Parikh counts n_s), for the coefficient pairs (a, b) of ``COEFFICIENTS`` (a, b in
1..3, coprime: a multiple of a pair states the same as the pair):

* ``a v_i - b v_j <= c`` for two distinct columns, with c the largest value of a v_i - b v_j
  over the samples, proposed only when 0 <= c <= ``MAX_CONSTANT`` * a: read as
  v_i <= (b / a) v_j + c / a, it leaves v_i a slack of at most ``MAX_CONSTANT`` over its
  bound, as v_i <= v_j + c does for (1, 1); a combination that grows with the length
  (#"a" - #"b") exceeds such a constant on the random samples, up to 64 tokens long, so small
  observed bounds are the ones worth a solver call (a larger slack lets in the guesses of a
  count that is merely rare on the samples: X <= 3 #"c" + 6 for a rare X);
* ``v_i <= c`` for a count that stays at most ``MAX_CONSTANT`` (the count of the first "a";
  a v_i <= c says no more).

Sums of tokens. Over ``a b c``, the positions X where #"a" == #"b" + #"c" are at most #"a" (the
position is 2 #"a" there, so they have distinct #"a"), but X <= #"a" is inductive only together
with X <= #"b" + #"c": at a new such position, where #"a" = #"b" + #"c" = m, either #"a" or
#"b" + #"c" was m - 1 before it (the token was an "a", or a "b" or "c"), so X <= m - 1 by one
of the two. The second names three columns. So on request (``wider``, the driver's second
round), beside the n_s, the columns include the sum of every set of two or more tokens
(``SUMS_UP_TO`` tokens in the alphabet at most: 11 sums over four tokens; none beyond, where
their number would grow as 2^|alphabet|), each one more Parikh-like column of the templates
above: ``a v_i - b (n_b + n_c) <= c`` is an inequality of three columns, two of them with the
same coefficient. The sum of all tokens is the position p, handled as p is below. An
``Inequality`` names such a column by the tuple of the columns it sums, and its ``terms``
expand it. They multiply the candidates, and so the solver calls of every proof, so the driver
asks for them only after an induction without them proves nothing (``driver.SECOND_ROUND``,
which gives the measured cost).

Sums of counts. The same request adds, where there are at most ``PAIRED_COUNTS`` distinct
counts, the sum of every pair of counts as a column: over ``a b c``, with Y = #("b" && #"a" >=
1) and Z = #("c" && #"a" >= 1), the positions X where #"a" >= 1 and #"a" == Y + Z are at most
#"a" only together with X <= Y + Z (every token after the first "a" moves #"a" or Y + Z: the
argument above). A count is never paired with a sum that contains it (X <= X + Y says nothing).

Wider coefficients. The same request adds the coprime pairs of ``WIDER_COEFFICIENTS`` (a or b
from 4 to 6): over the ray p #"a" == q #"b", p, q coprime, the positions X have (#"a", #"b") =
(q m, p m), m >= 1, so pX <= #"b" and qX <= #"a", inductive together by the argument above;
#(#"a" == 4 * #"b") <= #"b" needs (4, 1). Asked for in the second round only, for the same
reason: the pairs of columns that pass the prefilter get 23 templates instead of 7.

Observed slopes. Beyond those pairs, the same request reads slopes off the samples: for each
pair of columns (i, j) it takes the upper convex hull of the sampled points (v_j, v_i) (the
values are at most the longest sample's length, so one point per value of v_j, the highest), and
each edge from (x0, y0) to (x1, y1) that rises, dy = y1 - y0 > 0 over dx = x1 - x0 > 0, gives
a = dx / g, b = dy / g (g = gcd(dx, dy)) and a v_i - b v_j <= a y0 - b x0: every sample lies
on or below the edge's line, so it holds at every row, and it is proposed as the templates'
are (0 <= c <= ``MAX_CONSTANT`` a, the position never on the smaller side with a <= b) when a
and b are at most ``RATIO_LIMIT`` and the pair is in neither list. Over the ray #"a" ==
7 #"b" the points (#"a", X) = (7m, m) make the edge 7X - #"a" <= 0 that #(#"a" == 7 * #"b")
<= #"b" needs beside X <= #"b" (the argument of "Coefficients" above); a ray the samples never
reach leaves X = 0 on every sample and gives no edge. One template per rising hull edge,
where fixed lists would need every coprime pair up to ``RATIO_LIMIT`` (68 more).

Stated. Both rounds add the bounds that the programs' equations give their counts, and the
second the sums and coefficients that their comparisons state (``crasp.verify.sides``): the
sum of four of five tokens that ``2 * #"a" == #"b" + #"c" + #"d" + #"e"`` compares, which no
template column holds, and the 13 of ``#"a" == 13 * #"b"``, beyond ``RATIO_LIMIT``.

Every sample has its BOS row, where every count and n_s is 0, so c >= 0: each candidate holds
at the start of every string, which the induction's base case needs (the start state before
p = 0 is that row). Not proposed, because the zero row or the invariant Inv of ``induction``
(0 <= count <= p, n_s >= 0) implies them or they add nothing: ``a v_i + b v_j >= c`` (c <= 0),
``a v_i + b v_j <= c`` (each of v_i, v_j is then bounded: two single bounds), ``a n_s - b n_t
<= c`` (n_s grows alone on some string, so the combination is unbounded, or it is always 0
and is no column), ``a v_i - b v_j <= c`` where v_j is the position p on every sample and
a <= b (Inv: a v_i - b p <= a (v_i - p) <= 0; with a > b, 2X <= p is a fact Inv lacks), where
v_i is always 0 or v_i and v_j are the same column on every sample (an equation then states
more), or where a basis equation r (``relations.null_space``) reads
r_i v_i + r_j v_j + sum of terms of r_i's sign = 0 with r_j of the other sign and
a |r_j| <= b |r_i| (so a v_i - b v_j <= 0 follows from the equation and v >= 0: anbncn's
X + Y = #"b" gives X <= #"b" and X <= 2 #"b"). Among the candidates found, one
that the others imply is dropped, in two acyclic stages (so whatever is dropped follows from
what is kept):

1. of the (1, 1) templates and single bounds, v_i - v_j <= c (v_j = 0 for a single bound)
   when v_i - v_k <= c1 and v_k - v_j <= c2 with c1 + c2 <= c (E_k's nested counts
   #B5 <= #B3 <= #B1 make no #B5 <= #B1): a cycle of such implications would make its
   columns equal on every sample, and equal columns are one;
2. among the candidates the budget keeps (below), a v_i - b v_j <= c when another kept one
   over the same columns, a' v_i - b' v_j <= c' (a single bound v_i <= c' as
   (a', b') = (1, 0)), has a b' <= a' b and a' c >= a c': scaled by a / a', it gives
   a v_i - (a b' / a') v_j <= c' a / a' <= c, and a b' / a' <= b with v_j >= 0
   (X - #"b" <= 0 makes X - 2 #"b" <= 0 redundant; 2X - #"a" <= 0 makes X - #"a" <= 0 so).
   The source's ratio a'/b' is then larger than the target's (equal ratios of coprime pairs
   are the same pair), so no cycle; and a source the budget leaves out prunes nothing.

A candidate is only a guess, bounded by samples of length <= 64: the solver proves it or it is
dropped, so a wrong one costs solver calls, never an answer.

Budget. The count-Parikh pairs and single bounds are linear in the number of counts; pairs of
two counts are tried only when there are at most ``PAIRWISE_COUNTS`` distinct count columns
(so a decompiled program of 1,000+ counts stays near-linear, with the linear templates only).
Each maximum is first taken over every ``PREFILTER_STRIDE``-th row, then over all rows for
the templates that pass (a maximum over some rows is a lower bound). The coefficient pairs
other than (1, 1) are tried only on the pairs of columns that pass the weakest of the
family, v_i - B v_j with B the largest b: any template a v_i - b v_j <= c of the family with
c <= ``MAX_CONSTANT`` a gives v_i - B v_j <= (b / a - B) v_j + c / a <= ``MAX_CONSTANT``
(b / a <= B, v_j >= 0), so a pair whose v_i - B v_j exceeds ``MAX_CONSTANT`` has no
candidate. At most ``MAX_INEQUALITIES`` candidates are kept, the tightest first (smallest
slack c / a; at an equal slack the (1, 1) templates first, so that where the budget binds,
as for the decompiled programs of thousands of counts, the (1, 1) candidates are kept as
before the coefficients; then the most sample rows at which the bound is attained), each
skipped where one kept before it implies it (stage 2).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import NamedTuple

import numpy as np

from crasp.verify.sides import StatedBound, StatedSums

SUMS_UP_TO = 4
"""Sums of two or more tokens are columns when the alphabet has at most this many tokens."""

PAIRED_COUNTS = 8
"""Sums of two counts are columns when there are at most this many distinct count columns."""

MAX_CONSTANT = 2
"""The largest c of a proposed ``v_i - v_j <= c`` or ``v_i <= c``; ``a v_i - b v_j <= c``
gets up to this times a (the same slack over v_i's bound)."""

COEFFICIENTS = ((1, 1), (2, 1), (1, 2), (3, 1), (1, 3), (3, 2), (2, 3))
"""The coefficient pairs (a, b) of the templates ``a v_i - b v_j <= c``; (1, 1) first."""

WIDER_COEFFICIENTS = tuple(sorted(((a, b) for a in range(1, 7) for b in range(1, 7)
                                   if max(a, b) >= 4 and math.gcd(a, b) == 1),
                                  key=lambda pair: (max(pair), pair)))
"""The pairs the ``wider`` templates add: coprime, in 1..6, one of them at least 4 (16 pairs)."""

RATIO_LIMIT = 12
"""The largest a or b of an observed slope (``_observed_slopes``; ``wider`` only)."""

PAIRWISE_COUNTS = 48
"""Pairs of two counts are tried only when there are at most this many distinct count columns."""

MAX_INEQUALITIES = 256
"""At most this many candidates are proposed (each costs up to one solver call per position)."""

PREFILTER_STRIDE = 8
"""The first pass over a template takes every this-th row (a maximum there is a lower bound)."""

BLOCK = 1 << 22
"""Entries of one difference block (rows x templates) computed at a time."""


Column = int | tuple[int, ...]
"""A column of the sample matrix, or a tuple of its columns: their sum (``sum_columns``)."""


class Inequality(NamedTuple):
    """``a v_larger - b v_smaller <= constant`` with (a, b) = ``coefficients``, or
    ``v_larger <= constant`` when ``smaller`` is None, over the columns of the sample matrix
    (a tuple of columns stands for their sum)."""
    larger: Column
    smaller: Column | None
    constant: int
    coefficients: tuple[int, int] = (1, 1)

    @property
    def terms(self) -> tuple[tuple[int, int], ...]:
        """(column, coefficient) of the left side (the sparse form of ``LinearRelation``)."""
        a, b = self.coefficients
        sides = ((self.larger, a), (self.smaller, -b))
        return tuple((column, coefficient) for side, coefficient in sides if side is not None
                     for column in (side if isinstance(side, tuple) else (side,)))


def sum_columns(rows: np.ndarray, parikh: int, stated: tuple[tuple[int, ...], ...] = ()
                ) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """``rows`` with one more column per set of two or more of its last ``parikh`` (token)
    columns, their sum, when ``parikh`` <= ``SUMS_UP_TO``, per pair of its count columns
    (one of each class of equal columns, never 0) when there are at most ``PAIRED_COUNTS``,
    and per ``stated`` sum (``crasp.verify.sides``; a column repeated in it is summed as often);
    and those sets, in column order."""
    width = rows.shape[1]
    tokens = range(width - parikh, width)
    sets = [chosen for size in range(2, parikh + 1)
            for chosen in combinations(tokens, size)] if parikh <= SUMS_UP_TO else []
    counts = _distinct(rows, width - parikh)
    if len(counts) <= PAIRED_COUNTS:
        sets += list(combinations(counts, 2))
    return _with_sums(rows, [], sets + list(stated))


def _with_sums(rows: np.ndarray, sets: list[tuple[int, ...]], more
               ) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """``rows`` (whose columns past the matrix's are the sums of ``sets``) and ``sets``, with
    one more column per tuple of ``more`` not among them: its sum."""
    known = set(sets)
    new = [chosen for chosen in dict.fromkeys(more) if chosen not in known]
    sums = [rows[:, list(chosen)].sum(axis=1) for chosen in new]
    return (np.column_stack([rows, *sums]) if sums else rows), sets + new


def candidate_inequalities(rows: np.ndarray, parikh: int, equations: list[tuple[int, ...]],
                           wider: bool = False, stated: StatedSums = StatedSums((), ())
                           ) -> list[Inequality]:
    """The inequalities of the templates above that hold at every row of ``rows`` (one row per
    distinct sampled position; the last ``parikh`` columns are the Parikh counts), not implied
    as said above, at most ``MAX_INEQUALITIES``, the tightest first; ``wider``: over the
    columns of ``sum_columns`` too (the ``stated`` sums among them), and with
    ``WIDER_COEFFICIENTS`` and the ``stated`` coefficients too."""
    counts, width = rows.shape[1] - parikh, rows.shape[1]
    rows, sets = sum_columns(rows, parikh, stated.sums) if wider else (rows, [])
    coefficients = COEFFICIENTS + WIDER_COEFFICIENTS if wider else COEFFICIENTS
    if wider:
        coefficients += tuple(pair for pair in stated.coefficients if pair not in coefficients)
    distinct = _distinct(rows, rows.shape[1])
    position = rows[:, counts:width].sum(axis=1)
    is_position = {column for column in distinct
                   if np.array_equal(rows[:, column], position)}
    count_columns = [column for column in distinct if column < counts]
    parikh_columns = [column for column in distinct if column >= counts]
    summed = {width + k: set(chosen) for k, chosen in enumerate(sets)}
    pairs = [pair for i in count_columns for s in parikh_columns if i not in summed.get(s, ())
             for pair in ((i, s), (s, i))]
    if len(count_columns) <= PAIRWISE_COUNTS:
        pairs += [(i, j) for i in count_columns for j in count_columns if i != j]
    templates = _templates(rows, count_columns, pairs, is_position, coefficients)
    if wider:
        templates = np.concatenate([templates, _observed_slopes(rows, pairs, is_position,
                                                                coefficients)])
    rows, sets = _with_sums(rows, sets, (b.side for b in stated.bounds if len(b.side) > 1))
    templates = np.concatenate([templates, _stated_templates(stated.bounds, sets, width,
                                                             is_position)])
    if not len(templates):
        return []
    coarse, _ = _maxima(rows[::PREFILTER_STRIDE], templates)
    templates = templates[coarse <= _bounds(templates)]
    maxima, attained = _maxima(rows, templates)
    implied = _implied_by_equations(equations, width)
    found = {(i, j, a, b): (int(c), int(hits))
             for (i, j, a, b), c, hits, bound in zip(templates.tolist(), maxima, attained,
                                                     _bounds(templates))
             if 0 <= c <= bound and (j < 0 or max(i, j) >= width or not implied(i, j, a, b))}

    def column(index: int) -> Column:
        return index if index < width else sets[index - width]
    return [Inequality(column(i), None if j < 0 else column(j), found[i, j, a, b][0], (a, b))
            for i, j, a, b in _selected(_untransitive(found))]


def _stated_templates(bounds: tuple[StatedBound, ...], sets: list[tuple[int, ...]], width: int,
                      is_position: set[int]) -> np.ndarray:
    """The templates (i, j, a, 1) of the ``bounds`` stated by the programs
    (``crasp.verify.sides``), j the column of the side (a sum column's index after the
    ``width`` columns of the matrix); of any count, a column of zeros too (a ray that the
    samples never reach), and never a <= 1 against the position (``Inv`` implies it)."""
    index = {chosen: width + k for k, chosen in enumerate(sets)}
    found = [(bound.count, bound.side[0] if len(bound.side) == 1 else index[bound.side],
              bound.coefficient, 1) for bound in bounds]
    return np.array([template for template in found
                     if template[2] > 1 or template[1] not in is_position],
                    dtype=np.int64).reshape(-1, 4)


def _distinct(rows: np.ndarray, stop: int) -> list[int]:
    """Of the first ``stop`` columns, the first of each class of equal columns, less the columns
    of zeros."""
    first: dict[bytes, int] = {}
    for column, values in enumerate(np.ascontiguousarray(rows[:, :stop].T)):
        first.setdefault(values.tobytes(), column)
    return sorted(column for column in first.values() if rows[:, column].any())


def _templates(rows: np.ndarray, count_columns: list[int], pairs: list[tuple[int, int]],
               is_position: set[int], coefficients: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The templates worth a maximum, (i, j, a, b) a row each (j = -1: a single bound): the
    single bounds, the (1, 1) pairs, and the other coefficient pairs on the pairs of columns
    that pass the family's prefilter (see the docstring); none with the position on the
    smaller side and a <= b."""
    passed = _passing(rows, pairs, max(b for _, b in coefficients))
    found = [(i, -1, 1, 1) for i in count_columns]
    found += [(i, j, 1, 1) for i, j in pairs if j not in is_position]
    found += [(i, j, a, b) for i, j in passed for a, b in coefficients
              if (a, b) != (1, 1) and (a > b or j not in is_position)]
    return np.array(found, dtype=np.int64).reshape(-1, 4)


def _passing(rows: np.ndarray, pairs: list[tuple[int, int]], weakest: int) -> list[tuple]:
    """The pairs (i, j) whose v_i - ``weakest`` v_j stays at most ``MAX_CONSTANT`` on every
    ``PREFILTER_STRIDE``-th row: only those can have a template a v_i - b v_j <= c with
    b / a <= ``weakest`` and c <= ``MAX_CONSTANT`` a (the docstring's "Budget")."""
    family = np.array([(i, j, 1, weakest) for i, j in pairs], dtype=np.int64).reshape(-1, 4)
    coarse, _ = _maxima(rows[::PREFILTER_STRIDE], family)
    return [tuple(pair) for pair in family[coarse <= MAX_CONSTANT, :2].tolist()]


def _observed_slopes(rows: np.ndarray, pairs: list[tuple[int, int]], is_position: set[int],
                     known: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The templates (i, j, a, b) of the rising edges of each pair's upper hull (the
    docstring's "Observed slopes") whose (a, b) is not in ``known``, over the pairs that
    pass the prefilter of b / a up to ``RATIO_LIMIT``."""
    found = set()
    top = int(rows.max(initial=0)) + 1
    for i, j in _passing(rows, pairs, RATIO_LIMIT):
        highest = np.full(top, -1, dtype=np.int64)
        np.maximum.at(highest, rows[:, j], rows[:, i])
        hull: list[tuple[int, int]] = []
        for point in zip(*(axis.tolist() for axis in (np.flatnonzero(highest >= 0),
                                                       highest[highest >= 0]))):
            while len(hull) >= 2 and _turns_left_or_straight(hull[-2], hull[-1], point):
                hull.pop()
            hull.append(point)
        for (x0, y0), (x1, y1) in zip(hull, hull[1:]):
            if y1 <= y0:
                continue
            g = math.gcd(x1 - x0, y1 - y0)
            a, b = (x1 - x0) // g, (y1 - y0) // g
            if (max(a, b) <= RATIO_LIMIT and (a, b) not in known
                    and 0 <= a * y0 - b * x0 <= MAX_CONSTANT * a
                    and (a > b or j not in is_position)):
                found.add((i, j, a, b))
    return np.array(sorted(found), dtype=np.int64).reshape(-1, 4)


def _turns_left_or_straight(o: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether o -> a -> b does not turn right (a is then not on the upper hull)."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]) >= 0


def _bounds(templates: np.ndarray) -> np.ndarray:
    """The largest c proposed for each template: ``MAX_CONSTANT`` * a."""
    return MAX_CONSTANT * templates[:, 2]


def _untransitive(found: dict) -> dict:
    """``found`` less the (1, 1) templates and single bounds that two others of them imply
    (stage 1 of the docstring)."""
    above: dict[int, dict[int, int]] = {}
    for (i, j, a, b), (c, _) in found.items():
        if (a, b) == (1, 1):
            above.setdefault(i, {})[j] = c
    return {key: value for key, value in found.items()
            if key[2:] != (1, 1) or not _through(above, *key[:2])}


def _through(above: dict[int, dict[int, int]], i: int, k: int) -> bool:
    """Whether the candidate v_i - v_k <= c follows from two others, v_i - v_j <= c1 and
    v_j - v_k <= c2 with c1 + c2 <= c (k = -1: v_k is 0); a transitive consequence costs
    solver calls and adds nothing."""
    c = above[i][k]
    return any(j != k and k in above.get(j, {}) and first + above[j][k] <= c
               for j, first in above[i].items())


def _selected(found: dict) -> list[tuple[int, int, int, int]]:
    """At most ``MAX_INEQUALITIES`` of ``found``, the tightest first, less those a kept one
    over the same columns (or the single bound of the larger column) implies: each is skipped
    when one kept before it implies it, and one that a later one implies is dropped at the end
    (stage 2 of the docstring)."""
    order = sorted(found, key=lambda key: (found[key][0] / key[2], max(key[2:]),
                                           -found[key][1], key))
    kept: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    chosen = []
    for key in order:
        if len(chosen) == MAX_INEQUALITIES:
            break
        if not _dominated(kept, key, found[key][0]):
            chosen.append(key)
            i, j, a, b = key
            kept.setdefault((i, j), []).append((a, 0 if j < 0 else b, found[key][0]))
    return [key for key in chosen if not _dominated(kept, key, found[key][0])]


def _dominated(kept: dict, key: tuple[int, int, int, int], c: int) -> bool:
    """Whether a v_i - b v_j <= c (``key`` = (i, j, a, b)) follows from another of ``kept``
    over (i, j), or from the single bound of v_i: a' v_i - b' v_j <= c' with a b' <= a' b and
    a' c >= a c' (a single bound as (a', b') = (1, 0))."""
    i, j, a, b = key
    b = 0 if j < 0 else b
    return any((other_a, other_b) != (a, b) and a * other_b <= other_a * b
               and other_a * c >= a * other_c
               for column in {j, -1} for other_a, other_b, other_c in kept.get((i, column), ()))


def _maxima(rows: np.ndarray, templates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each template (i, j, a, b), the largest value of a rows[:, i] - b rows[:, j]
    (minus 0 where j is -1), and at how many rows it is attained; in blocks of ``BLOCK``."""
    maxima = np.empty(len(templates), dtype=np.int64)
    attained = np.empty(len(templates), dtype=np.int64)
    step = max(1, BLOCK // max(1, rows.shape[0]))
    padded = np.concatenate([rows, np.zeros((rows.shape[0], 1), rows.dtype)], axis=1)
    for start in range(0, len(templates), step):
        larger, smaller, a, b = templates[start:start + step].T
        difference = a * padded[:, larger] - b * padded[:, smaller]   # -1: the zero column
        maxima[start:start + step] = largest = difference.max(axis=0)
        attained[start:start + step] = (difference == largest).sum(axis=0)
    return maxima, attained


def _implied_by_equations(equations: list[tuple[int, ...]], width: int):
    """``implied(i, j, a, b)``: some basis equation r has r_i and r_j of opposite signs,
    a |r_j| <= b |r_i|, and every other coefficient of r_i's sign, so
    |r_i| v_i - |r_j| v_j = -(the others, signed) <= 0 (v >= 0) and a v_i - b v_j
    <= (a |r_j| / |r_i| - b) v_j <= 0. Equations with coefficients beyond 2^60 are not
    consulted (only a skip is lost)."""
    small = [equation for equation in equations if max(map(abs, equation), default=0) < 2 ** 60]
    matrix = np.array(small, dtype=np.int64).reshape(len(small), width)
    positive, negative = (matrix > 0).sum(axis=1), (matrix < 0).sum(axis=1)

    def implied(i: int, j: int, a: int, b: int) -> bool:
        first, second = matrix[:, i], matrix[:, j]
        return bool(np.any((np.sign(first) == -np.sign(second)) & (first != 0)
                           & (a * np.abs(second) <= b * np.abs(first))
                           & np.where(first > 0, negative == 1, positive == 1)))
    return implied
