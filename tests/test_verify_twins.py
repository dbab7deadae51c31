"""Questions about a program and a copy of it written the same way (itself, or with its names
renamed): simulation pairs each definition and count body with its own copy, not with an
earlier one that agrees on every sample (``sweep._choose``), and a lemma the full solver cannot
prove within ``lemmas.LEMMA_EFFORT`` is dropped without changing any answer."""

from __future__ import annotations

import dataclasses
from unittest import mock

import pytest
import z3
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from crasp import syntax
from crasp.verify import Question, bounded, decide, enumeration, lemmas
from crasp.verify.questions import default_alphabet
from crasp.verify.solver import TimeLimit, Undecided
from crasp.verify.sweep import body_pairs, candidate_pairs, unrolled_counts
from strategies import program_asts
from test_verify_relations import complement_of, near_miss_of


def renamed(program: syntax.Program, prefix: str = "z_") -> syntax.Program:
    """``program`` with every definition ``x`` called ``prefix + x`` (its uses too)."""
    def rename(expr):
        return syntax.fold(expr, lambda node, parts: syntax.Ref(prefix + node.name)
                           if isinstance(node, syntax.Ref) else syntax.with_children(node, parts))
    return syntax.Program(tuple(dataclasses.replace(d, name=prefix + d.name, expr=rename(d.expr))
                                for d in program.definitions), program.alphabet,
                          declared_alphabet=True)


def first_written_alike(first: list[syntax.Expr], second: list[syntax.Expr],
                        names: dict[str, str]) -> list[int]:
    """The plain reference: for each expression of ``second``, the index of the first one of
    ``first`` equal to it once its names are read through ``names``."""
    def read(expr):
        return syntax.fold(expr, lambda node, parts: syntax.Ref(names.get(node.name, node.name))
                           if isinstance(node, syntax.Ref) else syntax.with_children(node, parts))
    return [next(k for k, mine in enumerate(first) if syntax.same_structure(mine, read(expr)))
            for expr in second]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=6, positional=True), st.booleans())
def test_a_copy_pairs_each_definition_and_body_with_the_first_written_alike(program, rename):
    """Without two definitions written alike, each of the copy's is paired with its own
    original; each count body with the first body written alike (bodies repeat often)."""
    copy = renamed(program) if rename else program
    alphabet, _ = default_alphabet((program, copy))
    names = {d.name: original.name for d, original in zip(copy.definitions, program.definitions)}
    mine = [d.expr for d in program.definitions]
    assume(first_written_alike(mine, mine, {}) == list(range(len(mine))))
    assert candidate_pairs(program, copy, alphabet, 6) == [
        (original.name, d.name) for original, d in zip(program.definitions, copy.definitions)]
    bodies = [node.body for node in unrolled_counts(program)]
    expected = first_written_alike(bodies, [node.body for node in unrolled_counts(copy)], names)
    assert body_pairs(program, copy, alphabet, 6) == list(zip(expected, range(len(expected))))


def nested(n: int, shape: str) -> syntax.Program:
    """A chain of ``n`` nested counts: ``c_i = #(c_{i-1}) > #"b"`` and two other shapes."""
    a, b = syntax.Count(syntax.TokenTest("a")), syntax.Count(syntax.TokenTest("b"))
    definitions = [syntax.Definition("c0", syntax.Compare(">", a, b), syntax.BOOL)]
    for i in range(1, n):
        below = syntax.Ref(f"c{i - 1}")
        expr = {"plain": syntax.Compare(">", syntax.Count(below), b),
                "and": syntax.Compare(">=", syntax.Count(syntax.And(below, syntax.TokenTest(
                    "a"))), b),
                "not": syntax.Compare("<", syntax.Count(syntax.Not(below)), a)}[shape]
        definitions.append(syntax.Definition(f"c{i}", expr, syntax.BOOL))
    return syntax.Program(tuple(definitions), ("a", "b"), declared_alphabet=True)


@pytest.mark.parametrize("shape", ["plain", "and", "not"])
@pytest.mark.parametrize("n", [4, 14])
def test_a_chain_of_nested_counts_is_proved_equal_to_its_renamed_copy(n, shape):
    """Before the pairing preferred the copy written alike, c_13 of the copy was paired with
    c_12 (they agree up to length 20), and the chain of 20 was unknown after minutes."""
    program = nested(n, shape)
    verdict = decide(Question("equivalent", (program, renamed(program)), ("A", "B")), 20,
                     method="smt", unbounded=True)
    assert verdict.outcome == "proved" and verdict.induction.k == 0


def hard_solver():
    """A problem that z3 needs far more than 100 resource units to decide."""
    solver = z3.Solver()
    xs = [z3.Int(f"x{i}") for i in range(30)]
    solver.add(*[x >= 0 for x in xs], z3.Sum(xs) == 1000,
               *[(xs[i] * 3 + xs[i + 1] * 7) % 11 == 5 for i in range(29)])
    return solver


def test_check_with_an_effort_gives_up_at_its_effort_and_leaves_the_solver_unlimited():
    solver, limit = hard_solver(), TimeLimit()
    assert limit.check(solver, "a lemma", effort=100) is None
    assert limit.check(solver, "the question") in (z3.sat, z3.unsat)   # no rlimit left


def test_check_with_an_effort_still_answers_undecided_when_the_time_runs_out():
    limit = TimeLimit(0.001)
    solver = hard_solver()
    with pytest.raises(Undecided, match="time limit"):
        limit.check(solver, "a lemma", effort=10**12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=4, positional=True), st.integers(1, 3),
       st.booleans(), st.integers(1, 8))
def test_lemmas_given_up_on_change_no_answer(program, threshold, near_miss, max_length):
    """With an effort of 1 unit every lemma that the local solver cannot prove is dropped: the
    search still finds exactly what enumeration finds."""
    twin = complement_of(program)
    twin = near_miss_of(twin, threshold) if near_miss else twin
    question = Question("equivalent", (program, twin), ("A", "B"))
    alphabet, _ = default_alphabet(question.programs)
    with mock.patch.object(lemmas, "LEMMA_EFFORT", 1):
        by_solver = bounded.first_violation(question, alphabet, max_length)
    by_enumeration = enumeration.first_violation(question, alphabet, max_length)
    assert (by_solver is None) == (by_enumeration is None)
    if by_solver is not None:
        assert len(by_solver.tokens) == len(by_enumeration.tokens)


def _individually(solver, candidates: list[tuple]) -> set[int]:
    """The plain reference: the ids of the relations whose negation ``solver`` refutes, one
    call each."""
    proved = set()
    for relation, holds in candidates:
        solver.push()
        solver.add(z3.Not(holds))
        if solver.check() == z3.unsat:
            proved.add(id(relation))
        solver.pop()
    return proved


def _twin_question(program: syntax.Program, threshold: int, near_miss: bool) -> Question:
    twin = complement_of(program)
    return Question("equivalent", (program, near_miss_of(twin, threshold) if near_miss
                                   else twin), ("A", "B"))


def _rounds_against_one_call_each(question: Question, length: int, local_first: bool = True
                                  ) -> tuple[list, list, list]:
    """``proved_pairs`` with no give-ups (an unbounded effort), each position's rounds checked
    against ``_individually``: the positions where they differ, and for each round on the
    local solver and on the full one, how many relations it got and how many it left
    unproved. ``local_first=False`` sends every relation to the full solver."""
    alphabet, _ = default_alphabet(question.programs)
    real_local, real_full = lemmas.Lemmas._locally_implied, lemmas.Lemmas._prove_fully
    mismatches, locally, fully = [], [], []

    def local(self, ready):
        if not local_first:
            return ready
        expected = _individually(self.local, ready)
        left = real_local(self, ready)
        locally.append((len(ready), len(left)))
        if {id(r) for r, _ in ready} - {id(r) for r, _ in left} != expected:
            mismatches.append(("local", self.position))
        return left

    def full(self, ready):
        expected = _individually(self.solver, ready)
        real_full(self, ready)
        proved = {id(r) for r, _ in ready} & set(map(id, self.relations))
        fully.append((len(ready), len(ready) - len(proved)))
        if proved != expected:
            mismatches.append(("full", self.position))

    with mock.patch.object(lemmas.Lemmas, "_locally_implied", local), \
            mock.patch.object(lemmas.Lemmas, "_prove_fully", full), \
            mock.patch.object(lemmas, "LEMMA_EFFORT", None):
        bounded.proved_pairs(question, alphabet, length)
    return mismatches, locally, fully


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=4, positional=True), st.integers(1, 3),
       st.booleans(), st.booleans())
def test_the_relations_proved_at_a_position_are_those_one_call_each_proves(
        program, threshold, near_miss, local_first):
    """The local solver's rounds prove exactly the relations that its facts imply one by
    one, and with no give-ups the full solver's rounds, whose models drop the relations
    they refute, prove exactly those it proves one by one."""
    mismatches, _, _ = _rounds_against_one_call_each(
        _twin_question(program, threshold, near_miss), 6, local_first)
    assert not mismatches


def test_the_rounds_prove_what_one_call_each_proves_on_a_chain():
    """The same on a chain of 8 nested counts against its copy, whose samples guess relations
    that hold only on short strings, up to length 12: rounds of several relations, some of
    them unproved, on the local solver, and on the full one with every relation sent to it."""
    question = Question("equivalent", (nested(8, "plain"), renamed(nested(8, "plain"))),
                        ("A", "B"))
    mismatches, locally, _ = _rounds_against_one_call_each(question, 12)
    assert not mismatches
    assert any(got > 1 and left for got, left in locally)
    mismatches, _, fully = _rounds_against_one_call_each(question, 12, local_first=False)
    assert not mismatches
    assert any(got > 1 and 0 < failed < got for got, failed in fully)


def test_a_position_gives_up_on_at_most_two_calls():
    """With an effort of 1 unit the full solver gives up on every relation the local one
    leaves; after the first give-up of a position the rest are tried together, so no
    position gives up more than twice, however many relations reach it (once more in the
    induction's base case, where the relations the search gave up on there are tried again,
    together), and the chain is still proved equal to its copy."""
    program = nested(12, "plain")
    question = Question("equivalent", (program, renamed(program)), ("A", "B"))
    real_refute, real_full = lemmas.Lemmas._refute, lemmas.Lemmas._prove_fully
    give_ups: dict[tuple[int, int], int] = {}
    retried: set[tuple[int, int]] = set()
    reaching: list[int] = []

    def refute(self, goal):
        verdict, model = real_refute(self, goal)
        if verdict is None:
            key = (id(self), self.position)
            give_ups[key] = give_ups.get(key, 0) + 1
        return verdict, model

    def full(self, ready, together=False):
        if together:
            retried.add((id(self), self.position))
        else:
            reaching.append(len(ready))
        return real_full(self, ready, together)

    with mock.patch.object(lemmas.Lemmas, "_refute", refute), \
            mock.patch.object(lemmas.Lemmas, "_prove_fully", full), \
            mock.patch.object(lemmas, "LEMMA_EFFORT", 1):
        verdict = decide(question, 12, method="smt", unbounded=True)
    assert verdict.outcome == "proved"
    assert max(reaching) > 2 and give_ups and retried
    assert all(count <= 2 + (key in retried) for key, count in give_ups.items())
