"""crasp.verify.shrink: the pre-pass that shrinks programs before the searches keeps every
answer (generated programs with redundancy injected, checked by the interpreter on every string
up to length 6 and by equiv against the program as given), shrinks n redundant copies to a size
independent of n, and leaves real differences to be found; and the large decompiled program of
docs/extraction.md that it was made for."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp import canonical, interpret, syntax
from crasp.verify import Question, decide, relations
from crasp.verify.encode import count_nodes
from crasp.verify.enumeration import token_rows
from crasp.verify.shrink import shrink
from strategies import program_asts

ROOT = Path(__file__).resolve().parent.parent
NEVER = syntax.Not(syntax.Or(syntax.TokenTest("a"), syntax.TokenTest("b")))
"""True at BOS and at no token of {a, b}: its count is 0 over {a, b}, not over {a, b, ?}."""


def _renamed(expr: syntax.Expr, names: dict[str, str]) -> syntax.Expr:
    return syntax.fold(expr, lambda node, parts: syntax.Ref(names.get(node.name, node.name))
                       if isinstance(node, syntax.Ref) else syntax.with_children(node, parts))


def _variant(expr: syntax.Expr, type_: str, k: int) -> syntax.Expr:
    """``expr`` written differently with the same value over {a, b} (copy number ``k``)."""
    if type_ == syntax.COUNT:
        return [syntax.Add(expr, syntax.Count(syntax.And(NEVER, syntax.TokenTest("a")))),
                syntax.Sub(syntax.Scale(k + 1, expr), syntax.Scale(k, expr)),
                syntax.Add(syntax.Scale(k, syntax.Count(NEVER)), expr)][k % 3]
    if isinstance(expr, syntax.Compare):   # a comparison scaled by k
        return syntax.Compare(expr.op, syntax.Scale(k, expr.left), syntax.Scale(k, expr.right))
    return [syntax.Not(syntax.Not(expr)), syntax.And(expr, syntax.BoolConst(True)),
            syntax.Or(expr, syntax.Compare(">=", syntax.Count(NEVER), syntax.IntConst(1)))][k % 3]


def redundant(program: syntax.Program, copies: int) -> syntax.Program:
    """``program`` with ``copies`` rewritten copies of each definition, each reading the one
    before it, and every later definition reading the last copy."""
    names: dict[str, str] = {}
    definitions = []
    for definition in program.definitions[:-1]:
        expr = _renamed(definition.expr, names)
        definitions.append(syntax.Definition(definition.name, expr, definition.type))
        for k in range(1, copies + 1):
            expr = _variant(expr if k == 1 or definition.type == syntax.COUNT else
                            syntax.Ref(definitions[-1].name), definition.type, k)
            definitions.append(syntax.Definition(f"{definition.name}_copy{k}", expr,
                                                 definition.type))
        names[definition.name] = definitions[-1].name
    answer = program.answer
    definitions.append(syntax.Definition(answer.name, _renamed(answer.expr, names), answer.type))
    return syntax.Program(tuple(definitions), program.alphabet, declared_alphabet=True)


def values(program: syntax.Program, alphabet: tuple[str, ...], length: int) -> dict:
    """Every definition's value at every position (BOS included) of every string of
    ``length`` tokens (so of every string up to that length)."""
    rows = token_rows(0, len(alphabet) ** length, len(alphabet), length)
    evaluation = interpret.evaluate(program, [[alphabet[k] for k in row] for row in rows])
    return {d.name: np.asarray(evaluation.columns[d.name]) for d in program.definitions}


def answers(program: syntax.Program, alphabet: tuple[str, ...], length: int) -> np.ndarray:
    """The answer at every position: the acceptance of every string up to ``length``."""
    return values(program, alphabet, length)[program.answer.name].astype(bool)


def assert_same_values(shrunk: syntax.Program, given_program: syntax.Program,
                       alphabet: tuple[str, ...], length: int) -> None:
    """Every definition the shrunk program keeps (the answer among them) has its value in
    the program as given, at every position of every string up to ``length``."""
    given_values = values(given_program, alphabet, length)
    for name, column in values(shrunk, alphabet, length).items():
        assert (column == given_values[name]).all(), name


def _expr(text: str) -> syntax.Expr:
    return crasp.parse_program(text).answer.expr


def _size(program: syntax.Program) -> int:
    return sum(1 for d in program.definitions for _ in syntax.walk(d.expr))


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(program_asts(max_depth=2, max_definitions=5, positional=True), st.integers(1, 3),
       st.sampled_from([("a", "b"), ("a", "b", "?")]))
def test_the_shrunk_program_answers_as_the_program_on_every_string(program, copies, alphabet):
    """Generated programs (guarded counts and positional predicates included) with redundant
    copies, over {a, b} (where #!("a" || "b") is 0) and over {a, b, ?} (where it is not)."""
    given_program = redundant(program, copies)
    shrunk = shrink(given_program, alphabet)
    assert_same_values(shrunk, given_program, alphabet, 6 if len(alphabet) == 2 else 4)
    assert len(shrunk.definitions) <= len(given_program.definitions)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(program_asts(max_depth=2, max_definitions=4), st.integers(1, 3))
def test_equiv_proves_the_shrunk_program_equal_to_the_program(program, copies):
    """z3 on the programs as given (no shrinking), up to length 5."""
    given_program = redundant(program, copies)
    shrunk = shrink(given_program, ("a", "b"))
    verdict = decide(Question("equivalent", (given_program, shrunk), ("A", "B")), 5, ("a", "b"),
                     method="smt", shrink=False)
    assert verdict.outcome == "holds", verdict.counterexample


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(program_asts(max_depth=2, max_definitions=5))
def test_n_redundant_copies_shrink_to_a_size_independent_of_n(program):
    sizes = {copies: shrink(redundant(program, copies), ("a", "b")) for copies in (1, 2, 4, 8)}
    assert len({_size(p) for p in sizes.values()}) == 1
    assert len({len(count_nodes(p)) for p in sizes.values()}) == 1


def flipped(program: syntax.Program, times: int) -> syntax.Program:
    """``program`` with its answer flipped where the string has exactly ``times`` a's (so the
    shortest difference from ``program`` has at least that many tokens)."""
    answer = program.answer
    flip = syntax.Compare("==", syntax.Count(syntax.TokenTest("a")), syntax.IntConst(times))
    changed = syntax.Program(program.definitions[:-1] + (syntax.Definition(
        answer.name, syntax.Compare("!=", syntax.Conditional(answer.expr, syntax.IntConst(1),
                                                             syntax.IntConst(0)),
                                    syntax.Conditional(flip, syntax.IntConst(1),
                                                       syntax.IntConst(0))), syntax.BOOL),),
        program.alphabet, declared_alphabet=True)
    return changed


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(program_asts(max_depth=2, max_definitions=4), st.integers(1, 3), st.integers(1, 3))
def test_a_real_difference_is_still_found_and_confirmed(program, copies, times):
    """The program's answer flipped where the string has ``times`` a's, against its redundant
    copy."""
    changed = flipped(program, times)
    for method in ("smt", "enumerate"):
        verdict = decide(Question("equivalent", (redundant(program, copies), changed),
                                  ("A", "B")), 6, ("a", "b"), method=method)
        assert verdict.outcome == "counterexample"
        tokens = verdict.counterexample.tokens
        assert tokens.count("a") == times
        ran = [interpret.evaluate(p, [list(tokens)]) for p in (program, changed)]
        assert ran[0].answer_at_end[0] != ran[1].answer_at_end[0]


def test_counts_of_bodies_false_at_every_token_are_zero_only_over_their_alphabet():
    program = crasp.parse_program('never = !("a" || "b")\n'
                                  'x = (117 * #never) + 157 * #"b" == 0\n'
                                  'y = (65 * #never) + 73 * #"b" == 0\n'
                                  'x && y && never || #never >= 1')
    over_ab = shrink(program, ("a", "b"))
    assert len(count_nodes(over_ab)) == 1   # #"b": x and y merged, #never gone
    assert [d.name for d in over_ab.definitions] == ["never", "x", "<answer>"]
    over_abq = shrink(program, ("a", "b", "?"))
    assert len(count_nodes(over_abq)) == 2
    for alphabet, shrunk in ((("a", "b"), over_ab), (("a", "b", "?"), over_abq)):
        assert_same_values(shrunk, program, alphabet, 4)
    assert answers(over_ab, ("a", "b"), 0).all()   # never holds at BOS


def test_an_equality_with_zero_is_the_negation_of_its_complement():
    """canonical: #P == 0 is #P <= 0, the negation of #P >= 1 (so names of both are seen to
    be complementary)."""
    zero, some = _expr('#"b" == 0'), _expr('#"b" >= 1')
    assert canonical.same_meaning(zero, syntax.Not(some))
    assert canonical.same_meaning(_expr('0 == #"b" - #"b" + #"a"'),
                                  _expr('!(#"a" > 0)'))
    assert not canonical.same_meaning(_expr('#"b" - #"a" == 0'),
                                      _expr('#"b" - #"a" <= 0'))


def test_the_decompiled_l4_program_of_the_extraction_study_is_proved_equal_to_l4():
    """docs/extraction.md's L4 run (1,298 definitions, 26,441 count nodes): stopped by a CPU
    limit of 120 s before the pre-pass; now 7 definitions over 2 counts, proved."""
    program = crasp.load_program(ROOT / "docs/extraction/programs/"
                                        "L4-d2-nope_fp6.2-s1-242659fb8c.crasp")
    reference = crasp.load_program(crasp.PROGRAMS_DIR / "L4_predict.crasp")
    shrunk = shrink(program, ("a", "b"))
    assert len(shrunk.definitions) <= 10 and len(count_nodes(shrunk)) <= 3
    assert_same_values(shrunk, program, ("a", "b"), 8)
    verdict = decide(Question("equivalent", (program, reference), ("A", "B")), 16, ("a", "b"),
                     unbounded=True)
    assert verdict.outcome == "proved"


@pytest.mark.parametrize("alphabet", [("a",), ("a", "?")])
def test_a_token_set_may_name_a_token_the_program_does_not_mention(alphabet):
    """#!"a" over {a, ?} counts the foreign token: its body becomes the test "?", which the
    shrunk program must be able to read."""
    program = crasp.parse_program('#!"a" >= 2')
    shrunk = shrink(program, alphabet)
    assert_same_values(shrunk, program, alphabet, 4)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(program_asts(max_depth=2, max_definitions=4), st.integers(0, 3))
def test_a_wide_alphabet_shrinks_to_the_same_program_as_its_mentioned_tokens(program, extra):
    """Tokens a program never mentions all take the same value in every token-only node
    (``shrink.PerToken``): over its alphabet plus ``extra`` unmentioned tokens, the shrunk
    program answers as the given one on every string up to length 3 (4 tokens) or 2."""
    alphabet = tuple(program.alphabet) + tuple(f"unmentioned{i}" for i in range(extra))
    shrunk = shrink(program, alphabet)
    assert_same_values(shrunk, program, alphabet, 3 if len(alphabet) <= 4 else 2)


def test_a_token_only_node_costs_the_tokens_it_mentions():
    """Over 5,000 tokens, "t5" || !"t7" holds everywhere but at t7: one exception, not a value
    per token."""
    from crasp.verify.shrink import _Shrinker

    alphabet = tuple(f"t{i}" for i in range(5000))
    program = crasp.parse_program('alphabet ' + " ".join(f'"{t}"' for t in alphabet)
                                  + '\nx = #("t5" || !"t7") >= 1')
    shrinker = _Shrinker(alphabet)
    body = program.answer.expr.left.body
    _, values = shrinker.rewrite(body)
    assert (values.default, values.exceptions) == (True, {7: False})


def test_no_relation_is_guessed_beyond_the_column_budget(monkeypatch):
    """Past ``relations.MAX_COLUMNS`` counts the null space is not computed (its cost grows
    with their cube): no equation is guessed, and the answer is the same without them."""
    first = crasp.parse_program('x = #("a" && #"b" == 0)\ny = #("a" && #"b" >= 1)\n'
                                'x + y == #"a"')
    second = crasp.parse_program('#"a" >= 0')
    def equations():
        return [r for r in relations.candidate_relations((first, second), ("a", "b"), 6)
                if r.equation]
    assert equations()
    monkeypatch.setattr(relations, "MAX_COLUMNS", 3)
    assert equations() == []
    verdict = decide(Question("equivalent", (first, second), ("A", "B")), 8, ("a", "b"),
                     method="smt", unbounded=True)
    assert verdict.outcome in ("proved", "holds")


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(program_asts(max_depth=2, max_definitions=4), st.sampled_from([2, 8]))
def test_auto_enumerates_the_short_lengths_before_asking_z3(program, times):
    """Over three letters at N = 12 ``auto`` asks z3, after enumerating lengths up to 6
    (``driver.PREFIX_STRINGS``): a difference with 2 a's is found there, by enumeration, one
    with 8 a's by z3; either way as short as z3's own answer."""
    question = Question("equivalent", (program, flipped(program, times)), ("A", "B"))
    auto = decide(question, 12, ("a", "b", "c"))
    smt = decide(question, 12, ("a", "b", "c"), method="smt")
    assert auto.outcome == smt.outcome == "counterexample"
    assert auto.method == ("enumeration" if times == 2 else "smt")
    assert len(auto.counterexample.tokens) == len(smt.counterexample.tokens)
    assert auto.counterexample.tokens.count("a") == times
