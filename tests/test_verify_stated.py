"""What the programs' comparisons state (``crasp.verify.sides``): the linear reading of every
comparison checked against the interpreter on random programs, and the classes it proves
that the templates alone leave unknown (each proof re-checked by enumeration): rays of any
coefficient, reached by the samples or not; a count bounded by a sum of tokens over five
and six tokens; a count bounded by a sum of three and four counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp import interpret, syntax
from crasp.verify import Question, decide, driver, enumeration, sides
from crasp.verify.relations import _sample_matrix
from crasp.verify.sides import StatedBound, StatedSums, stated_sums
from crasp.verify.sweep import samples
from strategies import program_asts

ALWAYS = crasp.parse_program("x = true")


RECHECKED_STRINGS = 500_000
"""A proof is re-checked on every string up to the longest length whose strings number at
most this (tests/test_verify_unbounded.py's length 10 over two to four tokens; 8 over five,
7 over six)."""


def decided(text: str, alphabet: tuple[str, ...]) -> str:
    """The verdict on ``text`` against ``x = true``; a proof is re-checked by enumeration."""
    question = Question("equivalent", (crasp.parse_program(text), ALWAYS), ("A", "B"))
    verdict = decide(question, 6, alphabet, unbounded=True, deepen=0)
    if verdict.outcome == "proved":
        length = 10 if len(alphabet) <= 4 else int(math.log(RECHECKED_STRINGS, len(alphabet)))
        assert enumeration.first_violation(question, alphabet, length) is None
    return verdict.outcome


def test_the_sides_of_the_five_token_bound_are_read_as_the_docstring_says():
    """Columns: X (the first program's one unrolled count), then n_a .. n_e."""
    program = crasp.parse_program('x = #(2 * #"a" == #"b" + #"c" + #"d" + #"e") <= #"a"')
    assert stated_sums((program, ALWAYS), tuple("abcde")) == StatedSums(
        sums=((2, 3, 4, 5),), coefficients=((2, 1),),
        bounds=(StatedBound(0, (1,), 1), StatedBound(0, (2, 3, 4, 5), 2)))


def test_subtraction_moves_terms_across_references_are_followed_and_constants_drop():
    """``s - #"c" + 3 == 13 * #"b" - #"c"`` with s = #"a" reads as #"a" - 13 #"b": the c's
    cancel; a token-only count of a disjunction is the sum of its tokens (the answer's
    ``X <= t`` states #"b" + #"c")."""
    program = crasp.parse_program('s = #"a"\nt = #("b" || "c")\n'
                                  'x = #(s - #"c" + 3 == 13 * #"b" - #"c") <= t')
    stated = stated_sums((program, ALWAYS), ("a", "b", "c"))
    assert stated.coefficients == ((13, 1),)
    assert stated.bounds == (StatedBound(0, (1,), 13), StatedBound(0, (2,), 1))
    assert stated.sums == ((2, 3),)


@pytest.mark.parametrize("side", ['max(#"b", 0)', '(#"b" if #"a" > 0 else 0)',
                                  '#[offset(1)] "b"', 'min(#"b", #"c")'])
def test_a_side_that_is_not_linear_states_nothing(side):
    program = crasp.parse_program(f'x = #(#"a" == 13 * {side}) <= #"b"')
    assert stated_sums((program, ALWAYS), ("a", "b", "c")) == StatedSums((), ())


def test_nothing_is_read_when_switched_off(monkeypatch):
    monkeypatch.setattr(sides, "STATED", False)
    program = crasp.parse_program('x = #(#"a" == 13 * #"b") <= #"b"')
    assert stated_sums((program, ALWAYS), ("a", "b")) == StatedSums((), ())


def _difference_definitions(program: syntax.Program) -> list[syntax.Definition]:
    """One count definition ``left - right`` per comparison of ``program``, in walk order."""
    return [syntax.Definition(f"\0difference {k}", syntax.Sub(node.left, node.right),
                              syntax.COUNT)
            for k, node in enumerate(node for d in program.definitions
                                     for node in syntax.walk(d.expr)
                                     if isinstance(node, syntax.Compare))]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(alphabet=("a", "b", "c"), max_depth=3, positional=True, max_size=4))
def test_every_linear_reading_differs_from_the_interpreter_by_a_constant(program):
    """Against the interpreter: for every comparison that ``sides`` reads as a form over the
    sample matrix's columns, left - right minus the form is the same number at every sampled
    position (the dropped constant); comparisons it does not read are skipped."""
    alphabet = ("a", "b", "c")
    columns = sides._count_columns(program, alphabet, 0,
                                   len(sides.unrolled_counts(program)))
    forms = sides._compared_forms(program, columns)
    compares = [node for d in program.definitions for node in syntax.walk(d.expr)
                if isinstance(node, syntax.Compare)]
    differences = _difference_definitions(program)
    copy = syntax.Program(program.definitions + tuple(differences), alphabet,
                          declared_alphabet=True)
    strings = samples(alphabet, 12)
    evaluation = interpret.evaluate(copy, strings)
    width = evaluation.columns[program.answer.name].shape[1]
    valid = np.arange(width)[None, :] <= evaluation.lengths[:, None]
    matrix = _sample_matrix((program,), alphabet, 12)
    for node, definition in zip(compares, differences):
        form = forms.get(id(node))
        if form is None:
            continue
        actual = np.asarray(evaluation.columns[definition.name])[valid].astype(np.int64)
        predicted = sum((c * matrix[:, k] for k, c in form.items()),
                        np.zeros(len(matrix), np.int64))
        assert len(set((actual - predicted).tolist())) == 1, (node, form)


def test_a_chain_of_many_operands_is_read_without_recursion():
    """A sum of 2 x 10^4 token counts (benchmarks/bench_verify_stated.py --part reading
    times 10^4 .. 8 x 10^4: the forms merge into the larger one, so about n log n)."""
    text = 'x = #(#"a" == ' + " + ".join(['#"b"', '#"c"'] * 10_000) + ') <= #"b"'
    stated = stated_sums((crasp.parse_program(text), ALWAYS), ("a", "b", "c"))
    assert stated.coefficients == ((10_000, 1),)
    assert stated.bounds == (StatedBound(0, (1,), 10_000), StatedBound(0, (2, 3), 1))


STATED_RAYS = [(1, 13), (13, 1), (1, 50), (3, 17), (17, 3), (11, 12)]


@pytest.mark.parametrize("p,q", STATED_RAYS)
def test_a_ray_of_any_coefficient_is_proved_in_the_first_round(p, q, monkeypatch):
    """On p #"a" == q #"b" (coprime) the positions X have (#"a", #"b") = (q m, p m): pX <=
    #"b" and qX <= #"a" together are inductive. Coefficients beyond the observed slopes'
    12, and rays that the samples reach rarely or never (1, 50: a string of 50 a's and a b),
    are proved from the comparison alone, with no second round; unknown without it."""
    monkeypatch.setattr(driver, "SECOND_ROUND", False)
    text = f'x = #({p} * #"a" == {q} * #"b") <= #"b"'
    assert decided(text, ("a", "b")) == "proved"
    monkeypatch.setattr(sides, "STATED", False)
    assert decided(text, ("a", "b")) == "unknown"


def token_sums_over(size: int):
    """Over ``size`` tokens, for every token t and k of 1..3: the positions where
    k #t == S, S the sum of the other tokens, number at most #t, with kX <= S (the argument
    of tests/test_verify_unbounded.py's ``token_sum_identities``), a sum of size - 1 tokens
    that no template column holds beyond four tokens."""
    alphabet = tuple("abcdef"[:size])
    for t in alphabet:
        others = " + ".join(f'#"{s}"' for s in alphabet if s != t)
        for k in (1, 2, 3):
            yield f'x = #({k} * #"{t}" == {others}) <= #"{t}"', alphabet


@settings(max_examples=4, deadline=None, derandomize=True)
@given(st.sampled_from([*token_sums_over(5), *token_sums_over(6)]))
def test_a_count_bounded_by_a_sum_of_five_or_six_tokens_is_proved(member):
    """4 of the 33."""
    text, alphabet = member
    assert decided(text, alphabet) == "proved"


def count_sums(counts: int):
    """With the first token t and one count per other token u, #(u && #t >= 1), the positions
    where #t >= 1 and #t == the sum of the counts number at most #t (each token after the
    first t moves one side), with X <= the sum: three or four counts, never a column of the
    templates (``bounds.sum_columns`` sums two)."""
    tokens = "abcde"[:counts + 1]
    names = [f"y{k}" for k in range(counts)]
    lines = [f'{name} = #("{u}" && #"a" >= 1)' for name, u in zip(names, tokens[1:])]
    return "\n".join(lines + [f'x = #(#"a" >= 1 && #"a" == {" + ".join(names)}) <= #"a"']), \
        tuple(tokens)


@pytest.mark.parametrize("counts", [3, 4])
def test_a_count_bounded_by_a_sum_of_three_or_four_counts_is_proved(counts):
    text, alphabet = count_sums(counts)
    assert decided(text, alphabet) == "proved"


def test_in_a_chain_of_definitions_a_sum_wider_than_the_limit_states_nothing():
    """d_k = d_(k-1) + a count of its own, 2,000 deep: a form wider than
    ``MAX_MULTIPLICITY`` columns is dropped, so no reference copies a form that grows with
    the chain (n^2 otherwise); d_2 (two counts) against a sum of two tokens is read, the
    2,000 counts of d_1999 are not."""
    lines = ['d0 = #("a" && #"b" >= 0)']
    lines += [f'd{k} = d{k - 1} + #("a" && #"b" >= {k})' for k in range(1, 2000)]
    lines += ['x = d1 == #"b" + #"c" && d1999 >= #"b"']
    program = crasp.parse_program("\n".join(lines))
    stated = stated_sums((program, ALWAYS), ("a", "b", "c"))
    parikh = len(sides.unrolled_counts(program))
    assert stated.sums == ((0, 1), (parikh + 1, parikh + 2))
