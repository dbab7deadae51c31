"""Pass: two programs -> the sums, coefficients and bounds their comparisons state (for the
inequalities of ``crasp.verify.bounds``).

Why. The positions X where ``2 * #"a" == #"b" + #"c" + #"d" + #"e"`` number at most #"a", but
X <= #"a" is inductive only together with 2X <= S, S = #"b" + #"c" + #"d" + #"e" (at a new
such position, where #"a" = m and S = 2m, the token moved #"a" or S: before it #"a" = m - 1,
or S = 2m - 1 and 2X <= 2m - 1; either way X <= m - 1). S is a sum of four of five tokens,
which the templates' columns (sums of tokens over at most ``bounds.SUMS_UP_TO`` tokens, of
two counts) do not hold, and 2^|alphabet| sums would be too many to try. But the program
states S: it is one side of the comparison whose positions X counts. Likewise
``#"a" == 13 * #"b"`` states the coefficient that 13X <= #"a" needs (the ray's positions have
(#"a", #"b") = (13m, m), so X <= #"b" and 13X <= #"a", inductive together: the argument of
``bounds``' "Coefficients"), beyond the observed slopes' ``bounds.RATIO_LIMIT`` and whether
or not the samples reach the ray.

Derivation. Every comparison ``left OP right`` of either program whose sides are linear in
the sample matrix's columns (``relations._sample_matrix``: both programs' unrolled counts,
then the Parikh counts n_s) is read as left - right = sum of c_k v_k + constant. Its positive
terms P = sum over c_k > 0 of c_k v_k and negative terms N = sum over c_k < 0 of |c_k| v_k
are the two sums it compares (terms on both sides cancel, constants drop: a constant only
shifts the c of a template, which the samples give). Each is f times a sum of columns with
integer multiplicities whose gcd is 1 (f the gcd of its coefficients): that sum, where it
has two columns or more, is a new column of the ``wider`` templates (``sums``), and with
g = gcd(f_P, f_N) the coefficient pairs (f_N / g, 1) and (f_P / g, 1) are added to theirs
(``coefficients``: the ray f_P P' = f_N N' has (P', N') = (f_N m, f_P m) / g on it, so a count
X of its positions, at most m, has (f_N / g) X <= P' and (f_P / g) X <= N').

Bounds. Where the comparison is an equation that is a conjunct (through ``&&``) of the body
of an unrolled count X, those two bounds are proposed as such (``bounds``), in both rounds:
they are at most two per such count, so cheap, and they hold on a count that the samples
never see rise (a ray they do not reach: X is 0 on every sample, a column no template pairs).
A count reads as a column: an unrolled count (``sweep.unrolled_counts``)
as its own, a count of a body that depends on the current token alone as the sum of the n_s
of the tokens s where the body holds (evaluated once per token), a reference as its
definition's form; a guarded count, a min, a max or a conditional makes the side non-linear
and it states nothing. Like every template, what this proposes is a guess the solver proves
or drops: it changes no answer, only which invariants are tried.

Cost: one walk of every definition (left-deep sums merged into the larger form, so a chain
of n operands costs about n log n: benchmarks/bench_verify_stated.py --part reading), one
evaluation of the token-only bodies on one string per token; at most ``MAX_STATED_SUMS`` sums
of at most ``MAX_MULTIPLICITY`` columns counted with multiplicity, at most
``MAX_STATED_COEFFICIENTS`` pairs of coefficients up to ``COEFFICIENT_LIMIT`` and at most
``MAX_STATED_BOUNDS`` bounds, the first in program order.
"""

from __future__ import annotations

from functools import reduce
from math import gcd
from typing import NamedTuple

import numpy as np

from crasp import syntax
from crasp.verify.encode import (count_nodes, is_token_only, token_only_definitions,
                                 tokens_where_bodies_hold)
from crasp.verify.sweep import unrolled_counts

STATED = True
"""Whether the programs' comparisons are read (False: the templates alone, as before; the
baseline of benchmarks/bench_verify_stated.py and of the tests of the templates)."""

MAX_STATED_SUMS = 32
"""The most stated sums made columns (each is one more column of every template pair)."""

MAX_MULTIPLICITY = 64
"""The most columns, counted with multiplicity, of a stated sum."""

MAX_STATED_BOUNDS = 64
"""The most bounds of counts of equations proposed (``StatedBound``; the first round has
them too, so they are few: two per such count at most, one solver call each per position)."""

MAX_STATED_COEFFICIENTS = 8
"""The most coefficient pairs taken from the programs."""

COEFFICIENT_LIMIT = 1 << 16
"""The largest stated coefficient taken (a times a column of the samples stays in int64)."""


Form = dict[int, int]
"""A linear form: column of the sample matrix -> integer coefficient (constants dropped)."""


class StatedBound(NamedTuple):
    """``a X - (the sum of the columns of side) <= c``, c read off the samples: X the column
    of a count whose body has an equation ``f_P P' == f_N N'`` as a conjunct, ``side`` P' (or
    N', a tuple of columns as in ``StatedSums.sums``) and a = f_N / g (or f_P / g)."""
    count: int
    side: tuple[int, ...]
    coefficient: int


class StatedSums(NamedTuple):
    """What the programs' comparisons state: ``sums`` (tuples of columns, a column repeated
    as often as its multiplicity, sorted), ``coefficients`` (pairs (a, 1), a > 1) and the
    ``bounds`` of the counts of equations (``StatedBound``)."""
    sums: tuple[tuple[int, ...], ...]
    coefficients: tuple[tuple[int, int], ...]
    bounds: tuple[StatedBound, ...] = ()


class _Side(NamedTuple):
    factor: int                     # the gcd of the side's coefficients
    columns: tuple[int, ...]        # each column as often as its coefficient / factor


def stated_sums(programs: tuple[syntax.Program, ...], alphabet: tuple[str, ...]) -> StatedSums:
    """The sums, coefficient pairs and bounds that the comparisons of ``programs`` state, over
    the columns of ``relations._sample_matrix`` for these programs and ``alphabet``."""
    if not STATED:
        return StatedSums((), ())
    offsets = np.cumsum([0] + [len(unrolled_counts(p)) for p in programs]).tolist()
    sums: dict[tuple[int, ...], None] = {}
    coefficients: dict[tuple[int, int], None] = {}
    bounds: dict[StatedBound, None] = {}
    for program, offset in zip(programs, offsets):
        columns = _count_columns(program, alphabet, offset, offsets[-1])
        sides = {key: _sides(form) for key, form in _compared_forms(program, columns).items()}
        for pair in sides.values():
            for side in pair:
                if 2 <= len(side.columns) <= MAX_MULTIPLICITY and len(sums) < MAX_STATED_SUMS:
                    sums.setdefault(side.columns, None)
            for a in _ray_coefficients(pair):
                if a > 1 and len(coefficients) < MAX_STATED_COEFFICIENTS:
                    coefficients.setdefault((a, 1), None)
        for k, node in enumerate(unrolled_counts(program)):
            for conjunct in _conjuncts(node.body):
                pair = sides.get(id(conjunct)) if conjunct.op == "==" else None
                if pair is None:
                    continue
                for side, a in zip(pair, _ray_coefficients(pair)):
                    if (side.columns and 0 < a <= COEFFICIENT_LIMIT
                            and len(bounds) < MAX_STATED_BOUNDS):
                        bounds.setdefault(StatedBound(offset + k, side.columns, a), None)
    return StatedSums(tuple(sums), tuple(coefficients), tuple(bounds))


def _sides(left_minus_right: Form) -> tuple[_Side, _Side]:
    """The positive and the negative terms of a comparison's left - right."""
    sides = []
    for sign in (1, -1):
        side = {column: sign * c for column, c in left_minus_right.items() if sign * c > 0}
        factor = reduce(gcd, side.values(), 0)
        sides.append(_Side(factor, tuple(sorted(
            column for column, c in side.items() for _ in range(c // factor)))
            if len(side) and sum(side.values()) // factor <= MAX_MULTIPLICITY else ()))
    return sides[0], sides[1]


def _ray_coefficients(pair: tuple[_Side, _Side]) -> tuple[int, int]:
    """(f_N / g, f_P / g), the coefficients of X against P' and N' (0, 0 for a side of no
    columns: the comparison of a sum with a constant states no ray)."""
    positive, negative = pair
    if not (positive.factor and negative.factor):
        return 0, 0
    common = gcd(positive.factor, negative.factor)
    return negative.factor // common, positive.factor // common


def _conjuncts(expr: syntax.Expr) -> list[syntax.Compare]:
    """The comparisons that are conjuncts of ``expr`` (through ``&&`` only)."""
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, syntax.And):
            stack += [node.right, node.left]
        elif isinstance(node, syntax.Compare):
            found.append(node)
    return found


def _count_columns(program: syntax.Program, alphabet: tuple[str, ...], offset: int,
                   parikh_start: int) -> dict[int, Form]:
    """id(count node) -> its form: its own column for an unrolled count, the tokens' columns
    where its body holds for a token-only one (guarded counts, and token-only ones of more
    than ``MAX_MULTIPLICITY`` tokens, have none)."""
    columns = {id(node): {offset + k: 1} for k, node in enumerate(unrolled_counts(program))}
    pure = token_only_definitions(program)
    token_only = [node for node in count_nodes(program) if is_token_only(node, pure)]
    holds = tokens_where_bodies_hold(program, token_only, alphabet)
    for node in token_only:
        if len(holds[id(node)]) <= MAX_MULTIPLICITY:   # a wider sum is no side
            columns[id(node)] = {parikh_start + t: 1 for t in holds[id(node)]}
    return columns


def _compared_forms(program: syntax.Program, columns: dict[int, Form]) -> dict[int, Form]:
    """id(comparison) -> left - right, as a form, for every comparison of ``program`` whose
    sides are linear. A form of more than ``MAX_MULTIPLICITY`` columns states no sum and is
    dropped (as non-linear), so that no form copied for a reference grows with the program
    (a chain of n definitions, each the previous plus a count, would cost n^2)."""
    compared: dict[int, Form] = {}
    definitions: dict[str, Form | None] = {}

    def combine(node, parts):
        form = linear(node, parts)
        return form if form is None or len(form) <= MAX_MULTIPLICITY else None

    def linear(node, parts):
        if isinstance(node, syntax.Compare):
            left, right = parts
            if left is not None and right is not None:
                compared[id(node)] = _merged(left, right, -1)
            return None
        if isinstance(node, syntax.Count):
            form = columns.get(id(node))
            return dict(form) if form is not None else None
        if isinstance(node, syntax.IntConst):
            return {}
        if isinstance(node, syntax.Ref):
            form = definitions.get(node.name)
            return dict(form) if form is not None else None
        if isinstance(node, (syntax.Add, syntax.Sub)):
            left, right = parts
            if left is None or right is None:
                return None
            return _merged(left, right, 1 if isinstance(node, syntax.Add) else -1)
        if isinstance(node, syntax.Scale):
            (operand,) = parts
            return None if operand is None else {k: node.factor * c for k, c in operand.items()}
        return None

    for definition in program.definitions:
        form = syntax.fold(definition.expr, combine)
        definitions[definition.name] = form if definition.type == syntax.COUNT else None
    return compared


def _merged(left: Form, right: Form, sign: int) -> Form:
    """left + sign * right, reusing the larger of the two (each form has one reader)."""
    if len(left) >= len(right) or sign < 0:
        into, other, factor = left, right, sign
    else:
        into, other, factor = right, left, 1
    for column, coefficient in other.items():
        total = into.get(column, 0) + factor * coefficient
        if total:
            into[column] = total
        else:
            into.pop(column, None)
    return into
