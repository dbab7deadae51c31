"""What z3's bounded search proves of the relations between counts (``lemmas.Held``), and the
induction's base case built from it (``bounded.proved_pairs(held=...)``): every relation it
reports as held up to L tokens holds at every position of every string of up to L tokens, and
one it reports as refuted at L fails on a string of L + 1 (both checked by running the
programs on all of them); the base case takes the held ones as they are, and never a refuted
one."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp.verify import bounded, lemmas
from crasp.verify.lemmas import Held
from crasp.verify.questions import Question, default_alphabet
from crasp.verify.relations import LinearRelation, value_matrix
from crasp.verify.sweep import unrolled_counts
from test_verify_relations import complement_of, holds_everywhere, near_miss_of
from strategies import program_asts


def every_string(alphabet: tuple[str, ...], length: int) -> list[tuple[str, ...]]:
    return [string for n in range(length + 1) for string in itertools.product(alphabet, repeat=n)]


def check_held(question: Question, alphabet: tuple[str, ...], max_length: int,
               exhaustive: int) -> Held | None:
    """Search to ``max_length``; where nothing violates, check every held relation on every
    string of up to min(its length, ``exhaustive``) tokens, and return what was held."""
    violation, held = bounded.search(question, alphabet, max_length)
    if violation is not None:
        assert held is None
        return None
    assert len(held.relations) == len(held.lengths) == len(held.refuted)
    assert all(0 <= length <= max_length for length in held.lengths)
    strings = every_string(alphabet, exhaustive)
    matrices = {length: value_matrix(question.programs, alphabet,
                                     [s for s in strings if len(s) <= length])
                for length in range(exhaustive + 1)}
    for relation, length, refuted in zip(held.relations, held.lengths, held.refuted):
        assert holds_everywhere(relation, matrices[min(length, exhaustive)]), relation
        if refuted and length < exhaustive:
            assert not holds_everywhere(relation, matrices[length + 1]), relation
    return held


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=4, positional=True), st.integers(1, 3),
       st.booleans(), st.integers(2, 7))
def test_every_relation_the_search_holds_is_true_on_every_short_string(program, threshold,
                                                                        near_miss, max_length):
    twin = complement_of(program)
    twin = near_miss_of(twin, threshold) if near_miss else twin
    question = Question("equivalent", (program, twin), ("A", "B"))
    alphabet, _ = default_alphabet(question.programs)
    check_held(question, alphabet, max_length, exhaustive=min(max_length, 6))


def chain_question(links: int) -> Question:
    """A chain of nested counts against itself (benchmarks/bench_scale.py's nested_counts)."""
    text = 'alphabet "a" "b"\nc0 = #"a" > #"b"\n' + "".join(
        f'c{i} = #(c{i - 1}) > #"b"\n' for i in range(1, links))
    program = crasp.parse_program(text)
    return Question("equivalent", (program, program), ("A", "B"))


def test_a_chain_of_nested_counts_keeps_some_relations_and_retries_those_given_up():
    """A chain of 14 nested counts (``c_i = #(c_{i-1}) > #"b"``) against itself, searched to
    16 tokens: what it holds is true on every string of up to 12 tokens, some relations hold
    all the way, and some are given up (the effort bound) at a position before 8, which the
    base case of 8 tokens proves again from there rather than dropping: its relations are
    every one held to 8 tokens and some of those given up, nothing refuted before 8."""
    question = chain_question(14)
    held = check_held(question, ("a", "b"), 16, exhaustive=12)
    assert held.up_to(16)
    given_up = [relation for relation, length, refuted
                in zip(held.relations, held.lengths, held.refuted) if length < 8 and not refuted]
    assert given_up
    pairs = bounded.proved_pairs(question, ("a", "b"), 8, held=held)
    proved = [relation for kind, relation, _ in pairs if kind == "relation"]
    assert set(held.up_to(8)) <= set(proved) <= set(held.known(8))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=3, max_definitions=4, positional=True), st.integers(2, 6),
       st.integers(0, 4))
def test_the_base_case_takes_the_held_relations_as_they_are(program, max_length, shorter):
    """``proved_pairs`` given what the search held up to N: its relations for a base case of
    L <= N tokens are those held up to L (proved again only where given up before L)."""
    twin = complement_of(program)
    question = Question("equivalent", (program, twin), ("A", "B"))
    alphabet, _ = default_alphabet(question.programs)
    violation, held = bounded.search(question, alphabet, max_length)
    assert violation is None
    length = max(max_length - shorter, 1)
    pairs = bounded.proved_pairs(question, alphabet, length, held=held)
    proved = [relation for kind, relation, _ in pairs if kind == "relation"]
    assert set(held.up_to(length)) <= set(proved) <= set(held.known(length))


def test_held_up_to_keeps_the_relations_proved_at_least_that_far():
    first, second, third = (LinearRelation(((0, 1), (1, -1))), LinearRelation(((0, 1),), 3,
                                                                              equation=False),
                            LinearRelation(((1, 2), (2, -1))))
    held = Held((first, second, third), (8, 3, 5), (False, True, False))
    assert held.up_to(3) == [first, second, third]
    assert held.up_to(4) == [first, third]
    assert held.up_to(6) == [first]
    assert held.up_to(9) == []
    assert held.known(3) == {first: 3, second: 3, third: 3}
    assert held.known(6) == {first: 6, third: 5}   # second refuted on 4 tokens; third given up
    assert held.known(9) == {first: 8, third: 5}


def at_most_three_a(monkeypatch) -> tuple[Question, LinearRelation]:
    """A question whose guessed candidates also get n_a <= 3, true up to 3 tokens only."""
    program = crasp.parse_program('alphabet "a" "b"\nc = #"a" > #"b"\nd = #(c) > 1\n')
    question = Question("equivalent", (program, program), ("A", "B"))
    columns = 2 * len(unrolled_counts(program))
    false_later = LinearRelation(((columns, 1),), 3, equation=False)   # n_a <= 3
    guess = bounded.candidate_relations
    monkeypatch.setattr(bounded, "candidate_relations",
                        lambda *arguments, **options: guess(*arguments, **options) +
                        [false_later])
    return question, false_later


def test_a_relation_refuted_on_a_longer_string_is_held_up_to_it_only(monkeypatch):
    question, false_later = at_most_three_a(monkeypatch)
    violation, held = bounded.search(question, ("a", "b"), 6)
    assert violation is None
    found = held.relations.index(false_later)
    assert (held.lengths[found], held.refuted[found]) == (3, True)
    assert false_later in held.up_to(3) and false_later not in held.up_to(4)
    assert false_later in held.known(3) and false_later not in held.known(4)
    check_held(question, ("a", "b"), 6, exhaustive=6)


def test_a_relation_given_up_is_tried_again_in_the_base_case(monkeypatch):
    """With no effort at all for the full solver, n_a <= 3 is given up (not refuted) at the
    first position where the local solver cannot prove it (from n_a <= 3 one token before,
    only n_a <= 4 follows); the base case of 6 tokens, with the effort restored, tries it
    again from there and refutes it, and the base case of 3 keeps it."""
    question, false_later = at_most_three_a(monkeypatch)
    monkeypatch.setattr(lemmas, "LEMMA_EFFORT", 1)
    violation, held = bounded.search(question, ("a", "b"), 6)
    monkeypatch.undo()
    found = held.relations.index(false_later)
    assert held.refuted[found] is False and 1 <= held.lengths[found] < 3
    assert held.known(6)[false_later] == held.lengths[found]
    monkeypatch.setattr(bounded, "candidate_relations", lambda *_, **__: [])   # not guessed
    pairs = bounded.proved_pairs(question, ("a", "b"), 6, held=held)
    assert false_later not in [relation for kind, relation, _ in pairs if kind == "relation"]
    pairs = bounded.proved_pairs(question, ("a", "b"), 3, held=held)
    assert false_later in [relation for kind, relation, _ in pairs if kind == "relation"]
