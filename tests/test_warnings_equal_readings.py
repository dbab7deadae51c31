"""The default dialect's warnings mean what they say: a warning exactly where the two readings
differ as formulas (different canonical forms), none for equal readings, and each warning's
evidence checked against the plain reference evaluator."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp import canonical
from crasp.check import expression_checker
from crasp.hahn import hahn_readings, precedence_warnings
from reference import evaluate_at

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from hahn_fixtures import HEADER as FIXTURE_HEADER, _bool, _count  # noqa: E402  the generator

HEADER = FIXTURE_HEADER + "#import pos_even\n"
WORDS = [list(w) for n in range(6) for w in itertools.product("abc", repeat=n)]


def _both_readings(text: str):
    """(crasp's program, Hahn's program) for HEADER + text, or None if either refuses it."""
    try:
        return crasp.parse_program(text), crasp.parse_program(text, dialect="hahn")
    except crasp.ProgramError:
        return None


@settings(max_examples=250, deadline=None)
@given(st.randoms(use_true_random=False))
def test_a_warning_exactly_where_the_readings_differ_as_formulas_with_checked_evidence(rng):
    text = HEADER + f"answer = {_bool(rng, rng.randint(1, 3))}\n"
    both = _both_readings(text)
    if both is None:
        return
    ours, theirs = both
    warnings = precedence_warnings(ours)
    answer = ours.answer
    reading = hahn_readings(ours.source, ours.filename).get(answer.span.line)
    earlier = {d.name: d.expr for d in ours.definitions[:-1]}
    differ = reading is not None and not canonical.same_meaning(
        answer.expr, expression_checker(ours)(len(ours.definitions) - 1, reading)[0], earlier)
    assert bool(warnings) == differ, text
    answers_differ = (crasp.evaluate(ours, WORDS).columns[answer.name].tolist()
                      != crasp.evaluate(theirs, WORDS).columns[theirs.answer.name].tolist())
    assert not answers_differ or warnings, text   # never a difference without a warning
    if not warnings:
        return
    evidence = warnings[0].evidence
    found = re.fullmatch(r'on (?:"(.*)"|the empty input), crasp\'s reading is (\S+) and '
                         r"Hahn's (\S+)", evidence)
    if found is None:   # no input in the search tells them apart: the forms still differ
        assert evidence.startswith("the two are different formulas"), evidence
        return
    word = found.group(1).split() if found.group(1) else []
    values = [evaluate_at(program, word, len(word) - 1)[program.answer.name]
              for program in (ours, theirs)]
    assert [str(v) for v in values] == [found.group(2), found.group(3)], text
    assert values[0] != values[1]


EQUAL_READINGS = [
    "(pos_even)", "(P)", "((pos_even))",
    "x - y + 0 > 1", "1 * x + y > 2", "x - y + #false > 0", "x - y + (x - x) < n",
    "(1 if P else 1 if Q else 1) > 0", "(x if P else x if Q else x) > y",
    "(x if true else y) - n + 0 > 1",
    "#[pred] true - 2 + #\"a\" > #\"a\"", "#[pred] P - 3 + x > x + 0",
    "2 * #\"a\" + 0 >= 0 - 1", "!(x < 0) && #\"b\" >= 0",
]


@pytest.mark.parametrize("line", EQUAL_READINGS)
def test_equal_readings_get_no_warning(line):
    program = crasp.parse_program(HEADER + f"answer = {line}\n")
    hahn = crasp.parse_program(HEADER + f"answer = {line}\n", dialect="hahn")
    assert precedence_warnings(program) == []
    assert (crasp.evaluate(program, WORDS).accept.tolist()
            == crasp.evaluate(hahn, WORDS).accept.tolist())


@settings(max_examples=100, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 4))
def test_conditional_chains_with_one_branch_form_and_zero_terms_get_no_warning(rng, length):
    """Generated equal readings: ``c if P1 else c if P2 else ... c`` (his chain associates the
    other way, the branches are all c) and ``a - b + z`` with z always 0 (his a - (b + z))."""
    branch = _count(rng, 1)
    chain = f" if {_bool(rng, 1)} else ".join([f"({branch})"] * (length + 1))
    zero = rng.choice(["0", "#false", "0 * x", "(n - n)", "#[pred] false"])
    for line in [f"({chain}) > {_count(rng, 1)}",
                 f"{_count(rng, 0)} - {_count(rng, 0)} + {zero} > {_count(rng, 1)}"]:
        both = _both_readings(HEADER + f"answer = {line}\n")
        if both is not None:
            assert precedence_warnings(both[0]) == [], line
