"""Enumeration runs each string whole, so its cost grows with N even where the strings are few:
over one token there is one string of each length. ``--alphabet a --max-length 1000000000``
took the machine's 23 GB (found by a fuzz of equiv/check options); ``auto`` now asks z3
beyond ``MAX_ENUMERATED_LENGTH``, after enumerating up to it, and ``--method enumerate``
refuses."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.verify import Question, decide, driver
from crasp.verify.driver import MAX_ENUMERATED_LENGTH, PREFIX_STRINGS
from crasp.verify.enumeration import strings_of_length

NEVER_TWO_B = crasp.parse_program('x = #"b" >= 2 && #"b" < 2', "never.crasp")


def test_one_token_past_the_enumerated_length_asks_z3_after_enumerating_up_to_it():
    verdict = decide(Question("empty", (NEVER_TWO_B,), ("PROG",)), 10**9, ("a",),
                     timeout=3)
    assert verdict.outcome == "unknown" and verdict.method == "smt"
    assert verdict.decided_length == MAX_ENUMERATED_LENGTH and verdict.timed_out


def test_a_counterexample_within_the_enumerated_length_is_found_by_it():
    """``#"a" > 999`` accepts a string of 1,000 a's: the enumerated prefix finds it, where z3
    would unroll 1,000 positions."""
    program = crasp.parse_program('x = #"a" > 999', "a.crasp")
    verdict = decide(Question("empty", (program,), ("PROG",)), 10**9, ("a",), timeout=60)
    assert verdict.outcome == "counterexample" and verdict.method == "enumeration"
    assert verdict.counterexample.tokens == ("a",) * 1000


@pytest.mark.parametrize("max_length", [0, 1, 50, MAX_ENUMERATED_LENGTH])
def test_one_token_up_to_the_enumerated_length_is_enumerated(max_length):
    verdict = decide(Question("empty", (NEVER_TWO_B,), ("PROG",)), max_length, ("a",))
    assert verdict.outcome == "holds" and verdict.method == "enumeration"


def test_enumerate_refuses_strings_past_the_enumerated_length(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.crasp").write_text('x = #"a" > 3\n')
    result = CliRunner().invoke(cli, ["check", "p.crasp", "--empty", "--alphabet", "a",
                                      "--method", "enumerate", "--max-length",
                                      str(MAX_ENUMERATED_LENGTH + 1)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"error: --method enumerate: strings of {MAX_ENUMERATED_LENGTH + 1:,} tokens are too "
        f"long to run whole (at most {MAX_ENUMERATED_LENGTH:,}); use --method smt or a "
        "smaller --max-length")


def test_the_cli_answers_one_token_and_an_astronomical_length_within_its_limit(tmp_path,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "many_a.crasp").write_text('x = #"a" > 3000000\n')   # past the enumerated
    result = CliRunner().invoke(cli, ["check", "many_a.crasp", "--empty", "--alphabet", "a",
                                      "--max-length", str(10**9), "--timeout", "3", "--json"])
    assert result.exit_code == 3, result.output
    verdict = json.loads(result.output)
    assert verdict["decided_length"] == MAX_ENUMERATED_LENGTH and verdict["timed_out"]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 50])
@pytest.mark.parametrize("max_length", [0, 1, 5, 11, 12, 30, 10**6, 10**12])
def test_the_enumerated_prefix_is_the_longest_length_of_few_strings(size, max_length):
    """Against its definition, by counting: the longest length <= N (and <= the enumerated
    length) whose strings number at most PREFIX_STRINGS."""
    expected = max((length for length in range(min(max_length, 64) + 1)
                    if strings_of_length(size, length) <= PREFIX_STRINGS), default=0)
    if size == 1:
        expected = min(max_length, MAX_ENUMERATED_LENGTH)
    assert driver._enumerated_prefix(size, max_length) == expected
