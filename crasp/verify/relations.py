"""Pass: two programs -> linear relations between their counts, guessed by simulation (for the
solver's lemmas, ``bounded``).

Why. A rewritten or decompiled program may count the complement of what the original counts:
anbncn's ``#("b" && #"c" == 0) == #"b"`` ("every b is before any c") becomes, decompiled,
``#("b" && #"c" >= 1) == 0``. The two counts X and Y are different integer variables, and
their answers agree only because X + Y = #"b" at every position, which z3 can establish for a
string of length n only by case splits over its positions, at a cost that grows with n (over
a minute at n = 20; benchmarks/bench_verify.py runs this baseline). Stated as a lemma at each
position, the relation leaves one linear step per position:
X_i + Y_i = X_{i-1} + Y_{i-1} + [b_i and c_i = 0] + [b_i and c_i >= 1] = #"b"_{i-1} + [b_i].

The prover (``bounded``) proves each candidate at position i as soon as the counts it weighs
have been stepped there, and the induction (``induction``) assumes the proved ones of its start
state and re-proves them at the end of its window.

Derivation. At every position of every sample string (``sweep.samples``, run by the
interpreter) take the vector v of the values of both programs' unrolled counts
(``sweep.unrolled_counts``) and of the Parikh counts n_s (how many times each token s of the
alphabet occurred). Every relation r . v = 0 that holds at all of them lies in the null space of
the matrix of these vectors; its integer basis (exact elimination over the rationals) is the
candidate set. A candidate is only a guess: ``bounded`` asks the solver at each position i to
prove r . v_i = 0 from what it already holds (both programs' step equations, and the
relations proved at i - 1: an induction on the position, whose base case is BOS, where every
count is 0), adds it as a lemma when proved and drops it for good when not. Lemmas are valid
facts, so they change no answer; a wrong guess costs one solver call.

Beside the equations, candidate *inequalities* a v_i - b v_j <= c guessed on the same matrix
(``crasp.verify.bounds``: the number of balanced positions #(#"a" == #"b") is at most #"a"
and at most #"b") are proved, assumed and dropped exactly as the equations are
(``LinearRelation`` is either).

Cost: the rows are deduplicated (by a hash of each row, ``distinct_rows``) and their rank
found by elimination modulo a prime (numpy, vectorized); the null space is then computed
exactly, with fractions, from the at most (number of columns) independent rows. A row
independent over the rationals but dependent modulo the prime (rare) only makes a false
candidate, which the solver rejects.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import gcd, lcm

import numpy as np

from crasp import interpret, syntax
from crasp.verify.bounds import candidate_inequalities
from crasp.verify.encode import with_definitions
from crasp.verify.sides import stated_sums
from crasp.verify.solver import UNLIMITED, TimeLimit
from crasp.verify.sweep import samples, unrolled_counts

PRIME = 2_147_483_647
"""The modulus of the rank computation (2^31 - 1: a product of two residues fits in int64)."""

MAX_COLUMNS = 256
"""The most counts (columns) the null space is computed for: its exact elimination grows with
the cube of the columns (2 s at 200, 27 s at 400 for a dense matrix of rank w/4), and the
decompiled L4 program of docs/extraction.md, as given, has 24,955 (``crasp.verify.shrink``
brings it to 1). Beyond, no equation is guessed (the inequalities still are): lemmas only
speed the solver up, so no answer changes."""

COUNT = "\0count {}"
"""The name a count gets in the copy of a program that simulation runs (no program name can
contain a NUL)."""

Relation = tuple[int, ...]
"""Integer coefficients over (first program's unrolled counts, second's, Parikh counts)."""


@dataclass(frozen=True)
class LinearRelation:
    """A lemma candidate over the vector v of ``_sample_matrix``'s columns: sum of
    coefficient * v[column] over ``terms`` (sparse), ``== constant`` for an equation (a
    ``null_space`` vector, constant 0) or ``<= constant`` for an inequality
    (``crasp.verify.bounds``)."""
    terms: tuple[tuple[int, int], ...]   # (column, coefficient), coefficient != 0
    constant: int = 0
    equation: bool = True

    @classmethod
    def of(cls, relation: Relation) -> LinearRelation:
        """The equation ``relation . v == 0``."""
        return cls(tuple((column, int(coefficient))
                         for column, coefficient in enumerate(relation) if coefficient))

    @property
    def columns(self) -> tuple[int, ...]:
        return tuple(column for column, _ in self.terms)

    def holds(self, z, values: list):
        """The z3 term of this relation over ``values`` (one term per column): the terms of
        positive coefficient on the left, the others on the right (with the constant)."""
        sides: tuple[list, list] = ([], [])
        for column, coefficient in self.terms:
            side = sides[coefficient < 0]
            side.append(values[column] if abs(coefficient) == 1
                        else abs(coefficient) * values[column])
        left, right = (z.Sum(side) if len(side) > 1 else side[0] if side else z.IntVal(0)
                       for side in sides)
        right = right + self.constant if self.constant else right
        return left == right if self.equation else left <= right


def _with_counts(program: syntax.Program) -> syntax.Program:
    """``program`` with one more definition per unrolled count: the count itself."""
    return with_definitions(program, COUNT, unrolled_counts(program), syntax.COUNT)


def _sample_matrix(programs: tuple[syntax.Program, ...], alphabet: tuple[str, ...],
                   max_length: int, limit: TimeLimit = UNLIMITED,
                   within: syntax.Program | None = None) -> np.ndarray:
    """One row per sampled position (BOS included): the counts' values, then n_s."""
    return value_matrix(programs, alphabet, samples(alphabet, max_length, within), limit)


def value_matrix(programs: tuple[syntax.Program, ...], alphabet: tuple[str, ...],
                 strings: list[tuple[str, ...]], limit: TimeLimit = UNLIMITED) -> np.ndarray:
    """One row per position of each of ``strings`` (BOS included), over the columns of
    ``LinearRelation``: the programs' unrolled counts, then n_s."""
    columns = []
    valid = None
    for program in programs:
        limit.expire("simulation was evaluating a program's counts on the sample strings")
        evaluation = interpret.evaluate(_with_counts(program), strings)
        width = evaluation.columns[program.answer.name].shape[1]
        valid = np.arange(width)[None, :] <= evaluation.lengths[:, None]
        columns += [np.asarray(evaluation.columns[COUNT.format(index)])[valid]
                    for index in range(len(unrolled_counts(program)))]
    width = valid.shape[1]
    index = {token: k for k, token in enumerate(alphabet)}
    tokens = np.full((len(strings), width), -1)
    for row, string in enumerate(strings):
        tokens[row, 1:len(string) + 1] = [index[token] for token in string]
    columns += [np.cumsum(tokens == k, axis=1)[valid] for k in range(len(alphabet))]
    return np.stack(columns, axis=1).astype(np.int64)


def distinct_rows(matrix: np.ndarray) -> np.ndarray:
    """The distinct rows of ``matrix``, in the order they first occur. Each row is hashed to
    one integer (its dot product with fixed random weights, wrapping modulo 2^64), and the
    rows are grouped by the hash: time linear in the entries, where sorting the rows as
    wholes (``np.unique(axis=0)``) compared rows of thousands of entries (7.7 s of a
    1,600-count program's 13 s of guessing). Each row is then compared with its group's first:
    only when two rows share a hash but differ (never seen) are the rows sorted as wholes
    after all, with the same result."""
    matrix = np.ascontiguousarray(matrix, dtype=np.int64)
    weights = np.random.default_rng(0).integers(1, 2 ** 62, matrix.shape[1], dtype=np.int64)
    with np.errstate(over="ignore"):
        hashes = matrix @ weights
    _, first, group = np.unique(hashes, return_index=True, return_inverse=True)
    if not np.array_equal(matrix[first[group.ravel()]], matrix):
        _, first = np.unique(matrix, axis=0, return_index=True)
    return matrix[np.sort(first)]


def _independent_rows(matrix: np.ndarray) -> np.ndarray:
    """A maximal set of rows of ``matrix`` independent modulo ``PRIME``."""
    reduced = np.mod(matrix, PRIME)
    chosen: list[int] = []
    for column in range(matrix.shape[1]):
        candidates = np.flatnonzero(reduced[:, column])
        candidates = candidates[~np.isin(candidates, chosen)]
        if candidates.size == 0:
            continue
        pivot = int(candidates[0])
        chosen.append(pivot)
        inverse = pow(int(reduced[pivot, column]), PRIME - 2, PRIME)
        row = reduced[pivot] * inverse % PRIME
        factors = reduced[:, column].copy()
        factors[pivot] = 0
        reduced = (reduced - np.outer(factors, row) % PRIME) % PRIME
    return matrix[chosen]


def null_space(matrix: np.ndarray) -> list[Relation]:
    """An integer basis of {r : matrix @ r = 0} (exact, up to the rare modular rank loss).
    Repeated rows are allowed; ``candidate_relations`` removes them first, for the
    inequalities as well (one ``np.unique`` for both)."""
    width = matrix.shape[1]
    rows = [[Fraction(int(x)) for x in row] for row in _independent_rows(matrix)]
    pivots: list[int] = []
    for row_index, row in enumerate(rows):   # reduced row echelon form
        column = next(c for c in range(width) if row[c] != 0)
        scale = row[column]
        rows[row_index] = row = [x / scale for x in row]
        for other_index, other in enumerate(rows):
            if other_index != row_index and other[column] != 0:
                factor = other[column]
                rows[other_index] = [x - factor * y for x, y in zip(other, row)]
        pivots.append(column)
    basis = []
    for free in (c for c in range(width) if c not in pivots):
        vector = [Fraction(0)] * width
        vector[free] = Fraction(1)
        for row, column in zip(rows, pivots):
            vector[column] = -row[free]
        scale = lcm(*(x.denominator for x in vector))
        integers = [int(x * scale) for x in vector]
        divisor = gcd(*integers)
        basis.append(tuple(x // divisor for x in integers))
    return basis


def candidate_relations(programs: tuple[syntax.Program, ...], alphabet: tuple[str, ...],
                        max_length: int, wider: bool = False, limit: TimeLimit = UNLIMITED,
                        within: syntax.Program | None = None) -> list[LinearRelation]:
    """The relations between the programs' unrolled counts and the Parikh counts that hold
    at every sampled position: the equations r . v = 0 (an integer basis of them), then the
    inequalities of ``crasp.verify.bounds`` (its ``wider`` templates too with ``wider``), at
    most ``bounds.MAX_INEQUALITIES`` of them. No equation beyond ``MAX_COLUMNS`` columns.
    ``Undecided`` when ``limit`` runs out first (checked between the steps). ``within``: a
    prefix-closed domain the searches assume (``sweep.samples``)."""
    rows = distinct_rows(_sample_matrix(programs, alphabet, max_length, limit, within))
    limit.expire("simulation was guessing equations between counts")
    equations = null_space(rows) if rows.shape[1] <= MAX_COLUMNS else []
    limit.expire("simulation was guessing inequalities between counts")
    stated = stated_sums(programs, alphabet)
    return [LinearRelation.of(relation) for relation in equations] + \
        [LinearRelation(inequality.terms, inequality.constant, equation=False)
         for inequality in candidate_inequalities(rows, len(alphabet), equations, wider,
                                                  stated)]
