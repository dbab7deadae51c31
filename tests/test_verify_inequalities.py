"""Inequalities between counts (crasp/verify/bounds.py) as lemmas of ``crasp equiv
--unbounded``: the templates and what they skip, the class of programs that are equivalent only
because of an inequality (each proved, and unknown without the inequalities), the class that
needs a coefficient (each proved, and unknown with the (1, 1) templates only), near misses of
both (a real counterexample, confirmed by the interpreter), and false inequalities forced on
the prover (dropped, never used)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp.cli import cli
from crasp.verify import (Question, bounded, bounds, decide, driver, enumeration, lemmas,
                          relations, sides)
from crasp.verify.bounds import Inequality
from test_verify_unbounded import TOKEN_SUMS

RECHECK_LENGTH = 9


def test_the_balanced_positions_are_proved_at_most_the_as_through_the_cli(tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "balanced.crasp").write_text('x = #(#"a" == #"b") <= #"a"\n')
    (tmp_path / "always.crasp").write_text("x = true\n")
    result = CliRunner().invoke(cli, ["equiv", "balanced.crasp", "always.crasp",
                                      "--alphabet", "a b", "--unbounded"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("proved: balanced.crasp and always.crasp are equivalent "
                                    "for every string of every length")


# -- the templates ---------------------------------------------------------------------------

def test_the_templates_skip_what_is_implied_and_keep_the_tight_bounds():
    """Columns: X (at most A and at most B), a copy of X, a count that is always 0, a count
    that is at most 1, the position p (as a count), then the Parikh counts A, B."""
    rows = []
    for string in ["", "a", "ab", "abab", "ba", "bb", "aab", "abba", "bbaa", "aabb"]:
        x = a = b = 0
        first = 0
        for position, token in enumerate(string, 1):
            a, b = a + (token == "a"), b + (token == "b")
            x += a == b
            first = int(first or token == "b")
            rows.append([x, x, 0, first, position, a, b])
        rows.append([0] * 7)
    found = bounds.candidate_inequalities(np.unique(np.array(rows), axis=0), 2, [])
    assert set(found) >= {Inequality(0, 5, 0), Inequality(0, 6, 0), Inequality(3, None, 1)}
    # the balanced positions are at even positions p: 2X <= p, a fact Inv lacks
    assert Inequality(0, 4, 0, (2, 1)) in found
    for i, j, c, (a, b) in found:
        assert 0 <= c <= bounds.MAX_CONSTANT * a
        assert 1 not in (i, j) and 2 not in (i, j)      # a copy, a zero column: equations
        assert j != 4 or a > b                           # a v <= b p: the induction's invariant
        assert not (i >= 5 and (j or 0) >= 5)            # two Parikh counts
        # every candidate holds on every row
        assert all(a * row[i] - (b * row[j] if j is not None else 0) <= c for row in rows)


def test_an_inequality_an_equation_implies_is_not_proposed():
    """X + Y = B (anbncn's complementary counts): X <= B and Y <= B follow from it and v >= 0."""
    rows = np.array([[0, 0, 0, 0], [1, 0, 1, 0], [1, 1, 2, 1], [0, 2, 2, 1], [2, 1, 3, 0]])
    equation = (1, 1, -1, 0)
    assert not (rows @ np.array(equation)).any()
    with_equation = bounds.candidate_inequalities(rows, 2, [equation])
    assert Inequality(0, 2, 0) in bounds.candidate_inequalities(rows, 2, [])
    # nor a X - b B <= c for a <= b (X <= B gives it); 2X - B <= 1 is no consequence
    assert not any(j == 2 and a <= b for _, j, _, (a, b) in with_equation)
    assert Inequality(0, 2, 1, (2, 1)) in with_equation


def test_the_number_of_candidates_is_bounded(monkeypatch):
    """Nested counts base // k (k = 2..9, each at most the one before, by at most 2 for the
    close ones) beside the Parikh count base: the transitive consequences are not proposed,
    and the budget keeps the tightest."""
    generator = np.random.default_rng(0)
    base = np.cumsum(generator.integers(0, 2, (40, 30)), axis=1).ravel()
    rows = np.stack([base // k for k in range(2, 10)] + [base], axis=1)
    rows = np.unique(np.concatenate([rows, np.zeros((1, 9), dtype=rows.dtype)]), axis=0)
    found = bounds.candidate_inequalities(rows, 1, [])
    assert Inequality(7, 6, 0) in found and Inequality(7, 5, 0) not in found   # 9 <= 8 <= 7
    monkeypatch.setattr(bounds, "MAX_INEQUALITIES", 3)
    tightest = bounds.candidate_inequalities(rows, 1, [])
    assert len(tightest) == 3 and all(c == 0 for _, _, c, _ in tightest)


def test_sums_of_tokens_are_columns_on_request():
    """Over a b c, X = #(#"a" == #"b" + #"c"): X <= #"b" + #"c" is a bound over a sum of two
    token columns, proposed only with ``wider`` and expanded into three terms; its (2, 1)
    companion over the position (2X <= p) is already a plain template."""
    rows = [[0, 0, 0, 0]]
    for string in ["abc", "bac", "aabcb", "cab", "aacbcb", "ccaa", "abab", "acacbb"]:
        x = a = b = c = 0
        for token in string:
            a, b, c = a + (token == "a"), b + (token == "b"), c + (token == "c")
            x += a == b + c
            rows.append([x, a, b, c])
    rows = np.unique(np.array(rows), axis=0)
    plain = bounds.candidate_inequalities(rows, 3, [])
    summed = bounds.candidate_inequalities(rows, 3, [], wider=True)
    assert Inequality(0, (2, 3), 0) in summed and Inequality(0, (2, 3), 0) not in plain
    assert Inequality(0, (2, 3), 0).terms == ((0, 1), (2, -1), (3, -1))
    assert Inequality(0, 1, 0) in plain and Inequality(0, 1, 0) in summed   # X <= #"a"
    assert all(isinstance(i, int) and (j is None or isinstance(j, int))
               for i, j, _, _ in plain)
    many = np.zeros((1, 6), dtype=np.int64)   # five tokens: beyond SUMS_UP_TO, no sums
    assert bounds.sum_columns(many, 5)[1] == [] and len(bounds.sum_columns(many[:, :5], 4)[1]) == 11


def test_many_counts_get_the_linear_templates_only():
    """Beyond PAIRWISE_COUNTS distinct counts, no pair of two counts is tried (the number of
    pairs would grow with the square of the counts); bounds against the Parikh counts are.
    Counts: #"a" // 2 and #"a" // 3 (the second at most the first), then counts of random
    subsets of the a's."""
    generator = np.random.default_rng(1)
    steps = generator.integers(0, 2, (60, 40))   # 1: an a, 0: a b
    a, b = np.cumsum(steps, axis=1), np.cumsum(1 - steps, axis=1)
    counts = bounds.PAIRWISE_COUNTS + 2
    columns = [a // 2, a // 3] + [np.cumsum(steps * generator.integers(0, 2, steps.shape),
                                            axis=1) for _ in range(counts - 2)] + [a, b]
    rows = np.unique(np.concatenate([np.stack([c.ravel() for c in columns], axis=1),
                                     np.zeros((1, counts + 2), dtype=np.int64)]), axis=0)
    found = bounds.candidate_inequalities(rows, 2, [])
    assert {Inequality(i, counts, 0) for i in range(2, counts)} <= set(found)   # <= #"a"
    assert not any(isinstance(i, int) and isinstance(j, int) and max(i, j) < counts
                   for i, j, _, _ in found)
    assert Inequality(counts, 0, 1, (1, 2)) in found   # #"a" <= 2 (#"a" // 2) + 1: coefficients
    few = rows[:, [0, 1, counts, counts + 1]]
    assert Inequality(1, 0, 0) in bounds.candidate_inequalities(few, 2, [])   # two counts


# -- the class: programs equivalent only because of an inequality ------------------------------

def members(s: str, t: str) -> list[tuple[str, tuple[str, ...]]]:
    """(answer, alphabet) that hold on every string, where X, the number of positions counted,
    is bounded by a count only through a pair of inequalities that are inductive together
    (X <= #s and X <= #t for the balanced positions) or one that is not the answer."""
    balanced = f'#"{s}" == #"{t}"'
    found = []
    for body, alphabet in [(balanced, (s, t)),
                           (f'{balanced} && ("{s}" || "{t}")', (s, t, "c")),
                           (f'{balanced} && #"{s}" > 0', (s, t))]:
        found += [(f"#({body}) <= {bound}", alphabet)
                  for bound in (f'#"{s}"', f'#"{t}"', f'#"{t}" + 1', f'#"{s}" + 2')]
    # X counts balanced positions at a t: X <= #t is inductive alone, and gives X <= #s
    found += [(f'#({balanced} && "{t}") <= #"{s}"', alphabet)
              for alphabet in ((s, t), (s, t, "c"))]
    # X counts positions where #s is one more than #t: at most #s, at most #t + 1
    found += [(f'#(#"{s}" == #"{t}" + 1) <= {bound}', (s, t))
              for bound in (f'#"{s}"', f'#"{t}" + 1')]
    return found


MEMBERS = members("a", "b") + members("b", "a")


def question(first: str, second: str) -> Question:
    return Question("equivalent", (crasp.parse_program(first), crasp.parse_program(second)),
                    ("A", "B"))


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.sampled_from(MEMBERS), st.booleans())
def test_a_program_true_only_by_an_inequality_is_proved_for_every_length(member, both):
    """Against ``x = true`` (or another member over the same alphabet, also always true):
    proved with the inequalities and re-checked by running every string of length <=
    RECHECK_LENGTH; against ``x = true``, unknown without them (their budget set to 0). (Two
    members may compute the same answer by other formulas, proved equal without them.)"""
    answer, alphabet = member
    other = next((a for a, alpha in MEMBERS if alpha == alphabet and a != answer), None) \
        if both else None
    pair = question(f"x = {answer}", f"y = {other}" if other else "y = true")
    verdict = decide(pair, 8, alphabet, unbounded=True)
    assert verdict.outcome == "proved", (answer, verdict.reason)
    assert enumeration.first_violation(pair, alphabet, RECHECK_LENGTH) is None
    if other:
        return
    budget = bounds.MAX_INEQUALITIES
    bounds.MAX_INEQUALITIES = 0
    try:
        without = decide(pair, 8, alphabet, unbounded=True)
    finally:
        bounds.MAX_INEQUALITIES = budget
    assert without.outcome == "unknown", answer


def answers(pair: Question, tokens: tuple[str, ...]) -> list[bool]:
    """Each program's answer on ``tokens``, by the interpreter."""
    return [bool(crasp.evaluate(program, [list(tokens)]).answer_at_end[0])
            for program in pair.programs]


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.sampled_from(MEMBERS), st.integers(9, 14), st.integers(4, 8))
def test_a_near_miss_beyond_n_is_a_real_counterexample(member, threshold, max_length):
    """The member also needs fewer than ``threshold`` of its first token: the programs differ
    first at length ``threshold`` > N. The inequality lemmas never make that equivalent: the
    induction finds the difference, the interpreter confirms it, and it is the shortest."""
    answer, alphabet = member
    pair = question(f'x = ({answer}) && #"{alphabet[0]}" < {threshold}', "y = true")
    verdict = decide(pair, max_length, alphabet, method="smt", unbounded=True)
    assert verdict.outcome == "counterexample", (answer, verdict.reason)
    tokens = verdict.counterexample.tokens
    first, second = answers(pair, tokens)
    assert first != second
    assert len(tokens) == threshold if verdict.shortest else len(tokens) > threshold


@pytest.mark.parametrize("answer,alphabet,shortest", [
    ('#(#"a" == #"b") <= #"a"', ("a", "b", "c"), 1),          # a balanced position at a c
    ('#(#"a" == #"b") <= #"a" - 1 || #true < 2', ("a", "b"), 2),
    ('#(#"a" == #"b" + 1) <= #"b"', ("a", "b"), 1),
    ('#(#"a" == #"b") <= 2', ("a", "b"), 6),
])
def test_a_program_that_differs_within_n_gets_its_shortest_counterexample(answer, alphabet,
                                                                          shortest):
    """Near misses of the class within N: the search with the inequality lemmas, and the
    induction after it, find a shortest difference, which the interpreter confirms."""
    pair = question(f"x = {answer}", "y = true")
    for unbounded in (False, True):
        verdict = decide(pair, 10, alphabet, method="smt", unbounded=unbounded)
        assert verdict.outcome == "counterexample" and verdict.shortest
        assert len(verdict.counterexample.tokens) == shortest
        assert answers(pair, verdict.counterexample.tokens) == [False, True]


# -- the class: programs equivalent only because of an inequality with a coefficient ----------

RATIOS = ((1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2))


def scaled(k: int, token: str) -> str:
    return f'#"{token}"' if k == 1 else f'{k} * #"{token}"'


def coefficient_members(s: str, t: str) -> list[tuple[str, tuple[str, ...]]]:
    """(program, alphabet) that hold on every string, where X counts the positions on the ray
    p #s = q #t, whose values are (q m, p m), m >= 1 (bounds.py's docstring derives p = 1,
    q = 2): X <= #s and X <= #t hold only through q X <= #s and p X <= #t together, of which
    at least one has a coefficient. The program's last definition is x."""
    found = []
    for p, q in RATIOS:
        ray = f"{scaled(p, s)} == {scaled(q, t)}"
        for body, alphabet in [(ray, (s, t)), (f'{ray} && ("{s}" || "{t}")', (s, t, "c"))]:
            found += [(f'x = #({body}) <= #"{bound}"', alphabet) for bound in (s, t)]
        # the ray moved by one: (q m + 1, p m) when p < q, m >= 0, so X <= #t + 1, and
        # symmetrically
        found.append((f'x = #({scaled(p, s)} == {scaled(q, t)} + 1) <= '
                      f'#"{t if p < q else s}" + 1', (s, t)))
        # nested in a larger program
        found.append((f'ray = {ray}\nhits = #ray\nx = hits <= #"{s}" && (hits <= #"{t}" || '
                      f'"{s}")', (s, t)))
    return found


COEFFICIENT_MEMBERS = coefficient_members("a", "b") + coefficient_members("b", "a")


def without_coefficients(pair: Question, alphabet: tuple[str, ...]) -> str:
    """The unbounded outcome with the (1, 1) templates only (and no second round, whose
    wider templates have coefficients of their own, nor the coefficients that the
    comparisons state, ``crasp.verify.sides``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounds, "COEFFICIENTS", ((1, 1),))
        patch.setattr(driver, "SECOND_ROUND", False)
        patch.setattr(sides, "STATED", False)
        return decide(pair, 8, alphabet, unbounded=True).outcome


@settings(max_examples=16, deadline=None, derandomize=True)
@given(st.sampled_from(COEFFICIENT_MEMBERS))
def test_a_program_true_only_by_a_coefficient_inequality_is_proved_for_every_length(member):
    """Against ``x = true``: proved with the coefficient templates and re-checked by running
    every string of length <= RECHECK_LENGTH; unknown with the (1, 1) templates only."""
    text, alphabet = member
    pair = question(text, "y = true")
    verdict = decide(pair, 8, alphabet, unbounded=True)
    assert verdict.outcome == "proved", (text, verdict.reason)
    assert enumeration.first_violation(pair, alphabet, RECHECK_LENGTH) is None
    assert without_coefficients(pair, alphabet) == "unknown", text


@settings(max_examples=8, deadline=None, derandomize=True)
@given(st.sampled_from(COEFFICIENT_MEMBERS), st.integers(9, 14))
def test_a_coefficient_near_miss_beyond_n_is_a_real_counterexample(member, threshold):
    """The member also needs fewer than ``threshold`` of its first token: the coefficient
    lemmas never make that equivalent; the counterexample is confirmed and the shortest."""
    text, alphabet = member
    pair = question(f'{text}\nz = x && #"{alphabet[0]}" < {threshold}', "y = true")
    verdict = decide(pair, 6, alphabet, method="smt", unbounded=True)
    assert verdict.outcome == "counterexample", (text, verdict.reason)
    tokens = verdict.counterexample.tokens
    assert answers(pair, tokens) == [False, True]
    assert len(tokens) == threshold if verdict.shortest else len(tokens) > threshold


def test_the_double_example_gets_exactly_its_inductive_pair(monkeypatch):
    """Over a b, with X the positions where #"a" == 2 * #"b" (columns X, n_a, n_b): X <= #"b"
    and 2X <= #"a"; X <= #"a" and X <= 2 #"b" hold too but are implied (stage 2 of
    bounds.py's docstring)."""
    pair = question('x = #(#"a" == 2 * #"b") <= #"b"', "y = true")
    rows = np.unique(relations._sample_matrix(pair.programs, ("a", "b"), 20), axis=0)
    assert bounds.candidate_inequalities(rows, 2, []) == [
        Inequality(0, 2, 0), Inequality(0, 1, 0, (2, 1))]
    # a source the budget leaves out prunes nothing: 2X <= #"a" ranks after X <= #"a"
    monkeypatch.setattr(bounds, "MAX_INEQUALITIES", 2)
    assert bounds.candidate_inequalities(rows, 2, []) == [
        Inequality(0, 2, 0), Inequality(0, 1, 0)]
    monkeypatch.setattr(bounds, "MAX_INEQUALITIES", 256)
    monkeypatch.setattr(bounds, "COEFFICIENTS", ((1, 1),))
    assert bounds.candidate_inequalities(rows, 2, []) == [
        Inequality(0, 2, 0), Inequality(0, 1, 0)]


# -- soundness: a false inequality forced on the prover ------------------------------------------

FALSE_INEQUALITIES = [
    # (answer over a b, injected inequality over [X, n_a, n_b], length of the shortest
    # difference)
    ('#(#"a" == #"b") <= 3', Inequality(0, None, 3), 8),            # X <= 3
    ('#(#"a" == #"b") >= #"a"', Inequality(1, 0, 0), 1),            # #a <= X
    ('#"a" <= #"b"', Inequality(0, 1, 0), 1),                       # #a <= #b ([n_a, n_b])
    ('2 * #"a" <= #"b" + 1', Inequality(0, 1, 1, (2, 1)), 1),       # 2 #a <= #b + 1
]


@pytest.mark.parametrize("answer,injected,shortest", FALSE_INEQUALITIES)
def test_a_false_inequality_is_dropped_and_never_used(answer, injected, shortest, monkeypatch):
    """The candidate list gets a false inequality that would make the programs equivalent:
    the solver drops it (it is not among the relations proved for the induction), and the
    answer is the real shortest counterexample."""
    real = relations.candidate_inequalities
    monkeypatch.setattr(relations, "candidate_inequalities",
                        lambda *arguments: [injected] + real(*arguments))
    pair = question(f"x = {answer}", "y = true")
    alphabet = ("a", "b")
    forced = relations.candidate_relations(pair.programs, alphabet, 10)
    wrong = next(r for r in forced if not r.equation and r.constant == injected.constant
                 and r.terms == injected.terms)
    proved = [r for kind, r, _ in bounded.proved_pairs(pair, alphabet, 10) if kind == "relation"]
    assert wrong not in proved
    for unbounded in (False, True):
        verdict = decide(pair, 10, alphabet, method="smt", unbounded=unbounded)
        assert verdict.outcome == "counterexample" and verdict.shortest, verdict
        assert len(verdict.counterexample.tokens) == shortest
        assert answers(pair, verdict.counterexample.tokens) == [False, True]


def test_inequalities_the_solver_does_not_prove_are_not_used(monkeypatch):
    """A solver that never proves a relation between counts (the local solver settles none,
    and the full one gives up on each): every candidate is dropped and the balanced pair,
    proved with them, is unknown, never proved."""
    monkeypatch.setattr(lemmas.Lemmas, "_locally_implied", lambda self, ready: ready)
    monkeypatch.setattr(lemmas.Lemmas, "_refute", lambda self, goal: (None, None))
    pair = question('x = #(#"a" == #"b") <= #"a"', "y = true")
    assert not [r for kind, r, _ in bounded.proved_pairs(pair, ("a", "b"), 8)
                if kind == "relation"]
    verdict = decide(pair, 8, ("a", "b"), unbounded=True)
    assert verdict.outcome == "unknown"


# -- the same classes asked of one program: universal, and the empty complement -----------------

@settings(max_examples=16, deadline=None, derandomize=True)
@given(st.sampled_from([(f"x = {answer}", alphabet) for answer, alphabet in MEMBERS]
                       + COEFFICIENT_MEMBERS + TOKEN_SUMS), st.booleans())
def test_one_program_gets_the_relations_too(member, complement):
    """``crasp check --universal`` (or ``--empty`` of the negation) on a member of the classes
    above is proved, as its equivalence with ``x = true`` is: the relations between counts
    that the first round guesses only between two programs come in the second round
    (``driver.second_round``), with the sums of tokens. Re-checked by running every string."""
    text, alphabet = member
    program = crasp.parse_program(text + ("\nnot_x = !x" if complement else ""))
    single = Question("empty" if complement else "universal", (program,), ("A",))
    verdict = decide(single, 8, alphabet, unbounded=True)
    assert verdict.outcome == "proved", (text, verdict.reason)
    assert enumeration.first_violation(single, alphabet, RECHECK_LENGTH) is None
