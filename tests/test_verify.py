"""crasp.verify: bounded equivalence, emptiness, universality and inclusion, by z3 and by
enumeration; shortest counterexamples at known lengths; both searches cross-checked on random
programs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp.verify import Question, decide
from crasp.verify import bounded, enumeration
from crasp.verify.explain import confirm
from crasp.verify.questions import default_alphabet
from strategies import program_asts

DYCK = crasp.load_program(crasp.example("dyck1"))


def program(text: str, name: str = "<string>") -> crasp.Program:
    return crasp.parse_program(text, name)


def equivalence(first: crasp.Program, second: crasp.Program) -> Question:
    return Question("equivalent", (first, second), ("A", "B"))


def dyck_bounded_by(height: int) -> crasp.Program:
    """Dyck-1 that also rejects strings whose nesting ever reaches ``height``: it first differs
    from Dyck-1 on "(" * height + ")" * height, of length 2 * height."""
    text = crasp.read_program_text(crasp.example("dyck1"))
    return program(text.replace("D = M && B", f'low = #(C_open - C_close >= {height}) == 0\n'
                                              "D = M && B && low"))


@pytest.mark.parametrize("method", ["smt", "enumerate"])
@pytest.mark.parametrize("height", [1, 2, 3])
def test_a_depth_two_difference_is_found_at_its_shortest_length(height, method):
    verdict = decide(equivalence(DYCK, dyck_bounded_by(height)), 8, method=method)
    assert verdict.outcome == "counterexample" and verdict.shortest
    assert verdict.counterexample.tokens == ("(",) * height + (")",) * height
    assert verdict.counterexample.position == 2 * height - 1
    assert verdict.counterexample.answers == (True, False)
    assert verdict.method == ("smt" if method == "smt" else "enumeration")


def test_a_difference_only_beyond_length_12_is_found_and_none_is_missed_below():
    question = equivalence(DYCK, dyck_bounded_by(7))
    assert decide(question, 13).outcome == "holds"          # the shortest has length 14
    verdict = decide(question, 20)
    assert verdict.method == "smt"
    assert verdict.counterexample.tokens == ("(",) * 7 + (")",) * 7


@pytest.mark.parametrize("length", [0, 1, 4, 13, 17])
def test_pairs_that_first_differ_at_a_known_length(length):
    question = equivalence(program(f'x = #"a" < {length}'), program("y = true"))
    verdict = decide(question, 20)
    assert verdict.outcome == "counterexample"
    assert verdict.counterexample.tokens == ("a",) * length
    assert decide(question, max(length - 1, 0)).outcome == ("holds" if length else
                                                            "counterexample")


def test_equivalent_rewrites_of_the_reference_programs_hold_at_length_30():
    rewritten = program('o = #"("\nc = #")"\nbad = #(o - c == -1) == 0\nD = bad && o - c == 0')
    verdict = decide(equivalence(DYCK, rewritten), 30)
    assert (verdict.outcome, verdict.method) == ("holds", "smt")


def test_the_default_alphabet_adds_one_foreign_token_and_it_matters():
    majority = program('majority = #"a" > #"b"')
    rewritten = program('m = 2 * #"a" > #true')
    assert default_alphabet((majority, rewritten)) == (("a", "b", "?"), "?")
    verdict = decide(equivalence(majority, rewritten), 10)
    assert sorted(verdict.counterexample.tokens) == ["?", "a"]   # #true counts the foreign token
    assert decide(equivalence(majority, rewritten), 10, alphabet=("a", "b")).outcome == "holds"


def test_a_counterexample_names_the_first_definitions_that_differ():
    first = program('c = #"a"\nd = #"b"\nx = c > d', "first.crasp")
    second = program('c = #"a"\ne = #"b" + 1\nx = c > e', "second.crasp")
    example = decide(equivalence(first, second), 5).counterexample
    assert example.tokens == ("a",)
    differences = {d.label: (d.name, d.values) for d in example.differences}
    assert differences == {"A": ("d", (0, 0)), "B": ("e", (1, 1))}


# Definitions that say nothing about the string: literals, and Booleans true or false at every
# position of it (either program can write those as `true` or `false`)
SILENT = ["z = false", "z = true", "k = 3", 'n = "a" && "b"', 'm = "a" || !"a"',
          'q = #"b" > 0', 'z = false\nn = "a" && "b"\nk = 3']


@pytest.mark.parametrize("silent", SILENT)
@pytest.mark.parametrize("side", ["A", "B", "both"])
def test_a_silent_definition_is_never_named_as_the_difference(silent, side):
    first = 'c = #"a"\nd = #"b"\nx = c > d'
    second = 'c = #"a"\ne = #"b" + 1\nx = c > e'
    first = f"{silent}\n{first}" if side in ("A", "both") else first
    second = f"{silent}\n{second}" if side in ("B", "both") else second
    example = decide(equivalence(program(first), program(second)), 5).counterexample
    assert example.tokens == ("a",)
    differences = {d.label: d.name for d in example.differences}
    assert differences == {"A": "d", "B": "e"}


def test_the_difference_of_a_decompiled_program_is_where_its_answer_parts():
    """The extraction study's L3-d2-nope-s0 program (a literal `L1_not_h0 = false` and
    Booleans that hold nowhere on the counterexample come first) against L3's: every
    definition before its answer has a twin in L3's program, and L3's program has none that
    the decompiled one lacks (its answer is the decompiled `a_after_b`)."""
    root = Path(__file__).resolve().parent.parent
    decompiled = crasp.load_program(root / "docs" / "extraction" / "programs" /
                                    "L3-d2-nope-s0-77501e1003.crasp")
    verdict = decide(equivalence(decompiled, crasp.load_program(crasp.example("L3_predict"))),
                     16, ("a", "b"), unbounded=True)
    assert verdict.outcome == "counterexample"
    assert [(d.label, d.name) for d in verdict.counterexample.differences] == [("A", "answer")]


@pytest.mark.parametrize("kind,text,witness", [
    ("empty", 'x = #"a" == 2 && #"b" == 1', ("a", "a", "b")),
    ("universal", 'x = #"a" < 3', ("a", "a", "a")),
    ("empty", 'x = #"a" == 0', ()),
])
def test_emptiness_and_universality_give_a_shortest_witness(kind, text, witness):
    verdict = decide(Question(kind, (program(text),), ("PROG",)), 8, method="smt")
    assert verdict.outcome == "counterexample"
    assert len(verdict.counterexample.tokens) == len(witness)
    assert sorted(verdict.counterexample.tokens) == sorted(witness)


def test_inclusion_is_one_way():
    majority = program('m = #"a" > #"b"')
    all_a = program('x = #"a" > 0 && #"b" == 0')
    assert decide(Question("includes", (majority, all_a), ("PROG", "OTHER")), 12).outcome \
        == "holds"
    verdict = decide(Question("includes", (all_a, majority), ("PROG", "OTHER")), 12)
    assert verdict.counterexample.tokens in {("a", "a", "b"), ("a", "b", "a"),
                                             ("b", "a", "a"), ("a", "?"), ("?", "a")}
    assert verdict.counterexample.answers == (False, True)


def _search_agrees(question: Question, alphabet, max_length: int) -> None:
    by_solver = bounded.first_violation(question, alphabet, max_length)
    by_enumeration = enumeration.first_violation(question, alphabet, max_length)
    assert (by_solver is None) == (by_enumeration is None)
    if by_solver is not None:
        assert len(by_solver.tokens) == len(by_enumeration.tokens)
        confirm(question, by_solver.tokens)        # raises unless the interpreter agrees
        confirm(question, by_enumeration.tokens)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=4, positional=True),
       program_asts(max_depth=3, max_definitions=4, positional=True),
       st.integers(0, 10))
def test_the_solver_and_enumeration_agree_on_random_pairs(first, second, max_length):
    alphabet, _ = default_alphabet((first, second))
    _search_agrees(equivalence(first, second), alphabet, max_length)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=5, positional=True),
       st.sampled_from(["empty", "universal"]), st.integers(0, 10))
def test_the_solver_and_enumeration_agree_on_single_program_questions(prog, kind, max_length):
    _search_agrees(Question(kind, (prog,), ("PROG",)), ("a", "b"), max_length)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=4, positional=True), st.integers(1, 3),
       st.integers(0, 10))
def test_a_program_against_itself_with_a_changed_answer(prog, threshold, max_length):
    """Near-identical pairs: the answer also needs a count to stay below a threshold, so the
    first difference comes late (or never)."""
    answer = prog.answer
    changed = crasp.syntax.And(crasp.syntax.Ref(answer.name), crasp.syntax.Compare(
        "<", crasp.syntax.Count(crasp.syntax.TokenTest("a")), crasp.syntax.IntConst(threshold)))
    other = crasp.Program(prog.definitions + (crasp.syntax.Definition("late", changed, "bool"),),
                          prog.alphabet, declared_alphabet=True)
    _search_agrees(equivalence(prog, other), ("a", "b"), max_length)
