"""crasp.verify.relations: the null space that guesses linear relations between counts, and the
class of rewrites those relations are for (a count replaced by #true minus the count of the
complement), cross-checked against enumeration."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp import syntax
from crasp.cli import cli
from crasp.errors import CraspError
from crasp.verify import Question, bounded, decide, enumeration
from crasp.verify.explain import confirm
from crasp.verify.questions import default_alphabet
from crasp.verify.relations import (LinearRelation, candidate_relations, distinct_rows,
                                    null_space, value_matrix)
from crasp.verify.solver import TimeLimit, Undecided
from crasp.verify.sweep import body_pairs, candidate_pairs, unrolled_counts
from strategies import program_asts


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 8), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_the_null_space_is_exact(rank, width, rows, seed):
    """Rows drawn from a random subspace (so the null space is not trivial): every returned
    vector is an integer relation of every row, and there are width - rank of them."""
    generator = np.random.default_rng(seed)
    factors = generator.integers(-3, 4, (rows, min(rank, width)))
    matrix = factors @ generator.integers(-3, 4, (min(rank, width), width))
    basis = null_space(matrix)
    assert all(not (matrix @ np.array(vector)).any() for vector in basis)
    assert len(basis) == width - np.linalg.matrix_rank(matrix)
    if basis:
        assert np.linalg.matrix_rank(np.array(basis)) == len(basis)


def complemented(expr: syntax.Expr) -> syntax.Expr:
    """``expr`` with every unguarded count #P written #true - #(!P), as a decompiler that
    counts the complement would (anbncn's "b after a c" for "b before any c")."""

    def combine(node, parts):
        node = syntax.with_children(node, parts)
        if isinstance(node, syntax.Count) and node.relation is None:
            return syntax.Sub(syntax.Count(syntax.BoolConst(True)),
                              syntax.Count(syntax.Not(node.body)))
        return node
    return syntax.fold(expr, combine)


def complement_of(program: syntax.Program) -> syntax.Program:
    return syntax.Program(tuple(dataclasses.replace(d, expr=complemented(d.expr))
                                for d in program.definitions), program.alphabet,
                          declared_alphabet=True)


def near_miss_of(program: syntax.Program, threshold: int) -> syntax.Program:
    """``program`` whose answer also needs fewer than ``threshold`` a's."""
    late = syntax.And(syntax.Ref(program.answer.name), syntax.Compare(
        "<", syntax.Count(syntax.TokenTest("a")), syntax.IntConst(threshold)))
    return syntax.Program(program.definitions + (syntax.Definition("late", late, "bool"),),
                          program.alphabet, declared_alphabet=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=4, positional=True), st.integers(0, 10))
def test_a_program_and_its_complemented_counts_are_equivalent(program, max_length):
    twin = complement_of(program)
    question = Question("equivalent", (program, twin), ("A", "B"))
    alphabet, _ = default_alphabet(question.programs)
    assert enumeration.first_violation(question, alphabet, max_length) is None
    assert bounded.first_violation(question, alphabet, max_length) is None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=4, positional=True), st.integers(1, 3),
       st.integers(0, 10))
def test_a_near_miss_of_a_complemented_program_is_found_at_its_shortest(program, threshold,
                                                                        max_length):
    """The twin's answer also needs fewer than ``threshold`` a's: the solver, with the relation
    lemmas, finds the same shortest length as enumeration, and a string the interpreter
    confirms."""
    twin = near_miss_of(complement_of(program), threshold)
    question = Question("equivalent", (program, twin), ("A", "B"))
    alphabet, _ = default_alphabet(question.programs)
    by_solver = bounded.first_violation(question, alphabet, max_length)
    by_enumeration = enumeration.first_violation(question, alphabet, max_length)
    assert (by_solver is None) == (by_enumeration is None)
    if by_solver is not None:
        assert len(by_solver.tokens) == len(by_enumeration.tokens)
        confirm(question, by_solver.tokens)


def test_anbncn_against_its_complement_relates_every_count_of_the_original():
    """Each of anbncn's two unrolled counts X is in a relation with the twin's count of its
    complement (X + X' = #true), and the pair is decided at length 16."""
    original = crasp.load_program(crasp.example("anbncn"))
    twin = complement_of(original)
    alphabet, _ = default_alphabet((original, twin))
    relations = candidate_relations((original, twin), alphabet, 12)
    for index in range(len(unrolled_counts(original))):
        assert any(index in relation.columns for relation in relations if relation.equation)
    assert decide(Question("equivalent", (original, twin), ("A", "B")), 16,
                  method="smt").outcome == "holds"


RECHECK_LENGTH = 8


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=4, positional=True), st.integers(1, 3),
       st.booleans())
def test_an_unbounded_proof_with_relations_is_never_wrong(program, threshold, near_miss):
    """--unbounded with the relations in the induction: a complemented twin (or a near miss
    of it) is proved only if enumeration finds no difference, and a counterexample is one."""
    twin = complement_of(program)
    twin = near_miss_of(twin, threshold) if near_miss else twin
    question = Question("equivalent", (program, twin), ("A", "B"))
    verdict = decide(question, 4, method="smt", unbounded=True)
    if verdict.outcome == "proved":
        assert enumeration.first_violation(question, verdict.alphabet, RECHECK_LENGTH) is None
    elif verdict.outcome == "counterexample":
        confirm(question, verdict.counterexample.tokens)
    assert near_miss or verdict.outcome in ("proved", "unknown")


def test_anbncn_is_proved_equal_to_its_decompiled_twin_at_every_length():
    """The relations X + Y = #"b" and U + W = #"a" are 0-inductive; without them the pair was
    unknown. The proof is re-checked by enumeration."""
    from test_verify_limits import anbncn_pair

    question = anbncn_pair()
    verdict = decide(question, 8, method="smt", unbounded=True)
    assert verdict.outcome == "proved" and verdict.induction.k == 0
    assert enumeration.first_violation(question, verdict.alphabet, RECHECK_LENGTH) is None


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(1, 12), st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_distinct_rows_are_numpys_unique_rows_in_order_of_first_occurrence(rows, width,
                                                                           spread, seed):
    """Against ``np.unique(axis=0)``: the same set of rows, each once, in the order the rows
    first occur (few distinct values, so that rows repeat)."""
    matrix = np.random.default_rng(seed).integers(-spread, spread + 1, (rows, width))
    _, first = np.unique(matrix, axis=0, return_index=True)
    assert np.array_equal(distinct_rows(matrix), matrix[np.sort(first)])


def test_rows_that_share_a_hash_are_told_apart():
    """Two rows whose hashes are equal by construction (they differ by (w1, -w0, 0, ...), whose
    dot product with the weights (w0, w1, ...) is 0) are both kept, as np.unique keeps them."""
    width = 4
    weights = np.random.default_rng(0).integers(1, 2 ** 62, width, dtype=np.int64)
    row = np.array([5, 7, 1, 2], dtype=np.int64)
    twin = row + np.array([weights[1], -weights[0], 0, 0])
    with np.errstate(over="ignore"):
        assert twin @ weights == row @ weights
    matrix = np.stack([twin, row, twin, row])
    assert np.array_equal(distinct_rows(matrix), np.stack([twin, row]))


def test_the_time_limit_stops_the_guessing_before_any_solver_call():
    """A limit that has run out ends every simulation pass of the lemmas' guessing at its first
    check (``Undecided``, saying what it was doing), so ``--timeout`` covers them too."""
    first = crasp.load_program(crasp.example("anbncn"))
    spent = TimeLimit(1e-9)
    time.sleep(1e-6)
    for guess in (lambda: candidate_relations((first, first), ("a", "b", "c"), 8, limit=spent),
                  lambda: candidate_pairs(first, first, ("a", "b", "c"), 8, spent),
                  lambda: body_pairs(first, first, ("a", "b", "c"), 8, spent)):
        with pytest.raises(Undecided, match="ran out while simulation was"):
            guess()


def test_an_exhausted_time_limit_answers_unknown_while_guessing_lemmas():
    """Through the driver: a program whose lemmas take longer to guess than the limit (a chain of
    400 nested counts) is answered ``unknown`` by a time limit of 10 ms, at the first check
    after shrinking, in the simulation, before any solver call."""
    lines = ['alphabet "a" "b"', 'c0 = #"a" > #"b"']
    lines += [f'c{i} = #(c{i - 1}) > #"b"' for i in range(1, 400)]
    program = crasp.parse_program("\n".join(lines))
    verdict = decide(Question("equivalent", (program, program), ("A", "B")), max_length=8,
                     method="smt", timeout=0.01)
    assert verdict.outcome == "unknown"
    assert "ran out while simulation was" in verdict.reason


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf"), float("-inf")])
def test_a_time_limit_is_positive_and_finite(seconds):
    """One message from the API and the commands alike (nan passed click's range and crashed z3's
    timeout as ``int(nan)``; inf as ``int(inf)``)."""
    with pytest.raises(CraspError, match="positive, finite number of seconds"):
        TimeLimit(seconds)
    result = CliRunner().invoke(cli, ["equiv", str(crasp.example("majority")),
                                      str(crasp.example("majority")), "--timeout",
                                      str(seconds)])
    assert result.exit_code == 2 and "Traceback" not in result.output


def holds_everywhere(relation: LinearRelation, matrix: np.ndarray) -> bool:
    """``relation`` at every row of ``matrix`` (``relations.value_matrix``: one row per
    position)."""
    total = sum(coefficient * matrix[:, column] for column, coefficient in relation.terms)
    return bool(np.all(total == relation.constant if relation.equation
                       else total <= relation.constant))


@pytest.mark.parametrize("name, length", [("L6", 11), ("E6", 8)])
def test_the_relations_guessed_for_a_twin_hold_on_every_short_string(name, length):
    """The relations guessed between a program's counts and its decompiled twin's hold on
    every string up to ``length`` tokens over the default alphabet. Guessed from random
    samples alone, the L6 twin's included ``#B <= 1 + 2 #A``-like inequalities that first fail
    on a b a b a b b b b b b (11 tokens), which the solver proved at each position until the
    one where they fail; the samples pumped with a long run (``sweep.samples``) rule them out.
    E6's twin has four tokens: 8 tokens is as far as every string goes here."""
    from itertools import product
    from crasp.compiler import compile_program, decompile_model

    program = crasp.load_program(f"examples/{name}.crasp")
    programs = (program, decompile_model(compile_program(program), name).program)
    alphabet, _ = default_alphabet(programs)
    guessed = candidate_relations(programs, alphabet, 30)
    assert guessed
    matrix = value_matrix(programs, alphabet, list(product(alphabet, repeat=length)))
    for relation in guessed:
        assert holds_everywhere(relation, matrix), relation
