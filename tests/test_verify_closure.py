"""Whether a domain is prefix-closed, decided by the verifier where its form is not recognized
(``crasp.verify.closure.decide_closure``): against the interpreter on every short string, on
the prediction domains of L_k and E_k written in forms the recognizer does not take, and as
``crasp equiv`` / ``crasp check`` report it."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

import crasp
from crasp.cli import cli
from crasp.languages.programs import prefixes_program, prediction_program, recognition_program
from crasp.verify import Question, decide
from crasp.verify import driver
from crasp.verify.closure import closure_violation, decide_closure, is_prefix_closed
from strategies import program_asts

ALPHABET = ("a", "b", "?")
CHECKED = 6        # decide_closure's bounded search covers these lengths exactly
BEYOND = 7         # and a proof must hold a little further


def first_reopening(domain: crasp.Program, max_length: int) -> tuple[str, ...] | None:
    """The reference: the shortest string over ALPHABET at whose last token position the
    domain holds although it failed at an earlier token position (the interpreter on every
    string); None if none has at most ``max_length`` tokens."""
    for length in range(2, max_length + 1):
        strings = [list(s) for s in itertools.product(ALPHABET, repeat=length)]
        held = np.asarray(crasp.evaluate(domain, strings).output[:, :length], dtype=bool)
        for row, tokens in enumerate(strings):
            if held[row, -1] and not held[row, :-1].all():
                return tuple(tokens)
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3, positional=True))
def test_closure_is_decided_as_the_interpreter_finds_it_on_every_short_string(domain):
    closure = decide_closure(domain, ALPHABET, CHECKED, prove=True, seconds=60)
    reopening = first_reopening(domain, BEYOND)
    if closure.status in ("recognized", "proved"):
        assert reopening is None
    elif closure.status == "refuted":
        accepted, prefix = closure.detail.removeprefix("it accepts ").split(" but not its prefix ")
        held = crasp.evaluate(domain, [list(accepted)]).output[0, :len(accepted)]
        assert accepted.startswith(prefix) and held[-1] and not held[len(prefix) - 1]
    else:
        assert closure.status == "unknown" and closure.detail
    if reopening is not None and len(reopening) <= CHECKED:
        assert closure.status == "refuted"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3, positional=True))
def test_closure_violation_holds_exactly_where_the_domain_reopens(domain):
    strings = [list(s) for n in range(0, 6) for s in itertools.product(ALPHABET, repeat=n)]
    violation = crasp.evaluate(closure_violation(domain), strings).output
    held = np.asarray(crasp.evaluate(domain, strings).output, dtype=bool)
    for row, tokens in enumerate(strings):
        for position in range(len(tokens)):
            reopens = held[row, position] and not held[row, :position].all()
            assert bool(violation[row, position]) == reopens, (tokens, position)


def test_a_bounded_question_does_not_try_to_prove_closure():
    domain = crasp.parse_program('x = #"a" >= 1')
    assert decide_closure(domain, ALPHABET, 4, prove=False, seconds=60).status == "unchecked"


def test_closure_that_runs_out_of_time_is_unknown_and_says_why(monkeypatch):
    monkeypatch.setattr(driver, "CLOSURE_SECONDS", 1e-9)
    prog, domain = (crasp.parse_program(text) for text in
                    ('x = #"a" >= 1', 'first_a = #("a" && #true == 1) >= 1'))
    verdict = decide(Question("universal", (prog,), ("PROG",), domain), 4, unbounded=True)
    assert verdict.closure.status == "unknown"
    assert verdict.closure.detail.startswith("neither proved nor refuted within 1e-09 s")
    assert not verdict.question.prefix_closed


def unrecognized_prefixes(k: int, neutral: bool) -> crasp.Program:
    """The prefixes of L_k (E_k) in a form the recognizer does not take: ``!(#B_k >= 1)``
    written ``#B_k <= #other``, a count against a count (equal on the strings where
    ``#other == 0``, the conjunct beside it)."""
    text = prefixes_program(k, neutral).replace(f"!(#B{k} >= 1)", f"#B{k} <= #other")
    assert text != prefixes_program(k, neutral)
    return crasp.parse_program(text, filename=f"{'E' if neutral else 'L'}{k}_unrecognized")


@pytest.mark.parametrize("neutral", [False, True], ids=["L", "E"])
@pytest.mark.parametrize("k", [3, 4, 5])
def test_prediction_witnesses_are_proved_on_prefix_domains_the_recognizer_does_not_take(
        k, neutral):
    domain = unrecognized_prefixes(k, neutral)
    assert not is_prefix_closed(domain)
    pair = tuple(crasp.parse_program(source(k, neutral))
                 for source in (recognition_program, prediction_program))
    verdict = decide(Question("equivalent", pair, ("A", "B"), domain), 8, unbounded=True,
                     timeout=120)
    assert verdict.closure.status == "proved" and verdict.question.prefix_closed
    assert verdict.outcome == "proved", verdict.reason


def run(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(arguments))
    return result.exit_code, result.output


@pytest.mark.parametrize("domain_text, unbounded, status, said", [
    ('x = #"b" == 0 || #"a" == 0', True, "recognized", "recognized by its form"),
    ('x = #("a" && #true == 1) >= 1', True, "proved", "proved: k-induction with k = 1"),
    ('x = #"a" >= 1', True, "refuted", "it accepts ba but not its prefix b"),
    ('x = #"a" >= 1', False, "unchecked", "--unbounded would try to prove it"),
])
def test_equiv_and_check_say_how_the_domain_was_used(tmp_path, domain_text, unbounded, status,
                                                     said):
    (tmp_path / "d.crasp").write_text(domain_text + "\n")
    (tmp_path / "p.crasp").write_text('x = #"a" >= 1 || #"b" >= 0\n')
    common = ["--domain", str(tmp_path / "d.crasp"), "--max-length", "4"] + \
        (["--unbounded"] if unbounded else [])
    code, text = run("check", str(tmp_path / "p.crasp"), "--universal", *common)
    line = next(line for line in text.splitlines() if line.startswith("domain: "))
    assert code == 0 and said in line and line.startswith(f"domain: {tmp_path / 'd.crasp'} ")
    code, text = run("equiv", str(tmp_path / "p.crasp"), str(tmp_path / "p.crasp"), *common,
                     "--json")
    report = json.loads(text)
    assert code == 0 and report["domain_closure"]["status"] == status
    assert (report["domain_closure"]["detail"] is None) == (status in ("recognized",
                                                                       "unchecked"))


def test_without_a_domain_nothing_is_said_of_closure(tmp_path):
    (tmp_path / "p.crasp").write_text('x = #"a" >= 1\n')
    code, text = run("check", str(tmp_path / "p.crasp"), "--empty", "--json")
    assert code == 1 and json.loads(text)["domain_closure"] is None
    code, text = run("check", str(tmp_path / "p.crasp"), "--empty")
    assert "domain:" not in text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3, positional=True))
def test_the_prefix_closed_question_finds_the_shortest_reopening(prog):
    """``crasp check --prefix-closed``: a witness exactly when the interpreter finds a string
    whose last position reopens, of the same (shortest) length; a proof only where none
    does up to BEYOND tokens."""
    question = Question("prefix-closed", (prog,), ("PROG",))
    reopening = first_reopening(prog, BEYOND)
    bounded = decide(question, CHECKED, ALPHABET)
    if reopening is not None and len(reopening) <= CHECKED:
        assert bounded.outcome == "counterexample"
        assert len(bounded.counterexample.tokens) == len(reopening)
    else:
        assert bounded.outcome == "holds"
    unbounded = decide(question, CHECKED, ALPHABET, unbounded=True, deepen=0, timeout=60)
    if unbounded.outcome == "proved":
        assert reopening is None


@pytest.mark.parametrize("name", ["L5", "E5", "dyck1", "anbncn", "memory-and-1-2-4"])
def test_every_prefixes_program_is_proved_prefix_closed(tmp_path, name):
    from crasp.languages import get_language
    path = tmp_path / "prefixes.crasp"
    path.write_text(get_language(name).prefixes_program.source)
    code, text = run("check", str(path), "--prefix-closed", "--unbounded", "--max-length", "8")
    assert code == 0 and text.startswith(f"proved: {path} is prefix-closed")


def test_prefix_closed_names_the_rejected_prefix(tmp_path):
    (tmp_path / "d.crasp").write_text('x = #"a" >= 1 && #"b" <= 1\n')
    code, text = run("check", str(tmp_path / "d.crasp"), "--prefix-closed")
    assert code == 1 and "shortest witness: ba (length 2)" in text
    assert "  its prefix b (length 1) " in text
    code, text = run("check", str(tmp_path / "d.crasp"), "--prefix-closed", "--json")
    report = json.loads(text)
    assert code == 1 and report["question"] == "prefix-closed"
    assert report["counterexample"]["rejected_prefix"] == ["b"]
    assert report["programs"] == [str(tmp_path / "d.crasp")]


def test_closure_reads_the_time_out_from_the_verdict_not_its_wording(monkeypatch):
    """A closure question z3 gives up on for another reason, whose reason happens to begin
    like a time-out's, keeps that reason; one whose own share runs out says so."""
    domain = crasp.parse_program('first_a = #("a" && #true == 1) >= 1')
    real = driver.decide

    def undecided(reason: str, timed_out: bool):
        def decide(*args, **kwargs):
            return dataclasses.replace(real(*args, **kwargs), outcome="unknown",
                                       reason=reason, timed_out=timed_out)
        return decide

    monkeypatch.setattr(driver, "decide", undecided("the time limit of z3's tactic", False))
    kept = decide_closure(domain, ALPHABET, 4, prove=True, seconds=5)
    assert (kept.status, kept.detail) == ("unknown", "the time limit of z3's tactic")
    monkeypatch.setattr(driver, "decide", undecided("z3 could not decide (timeout)", True))
    spent = decide_closure(domain, ALPHABET, 4, prove=True, seconds=5)
    assert spent.status == "unknown" and spent.detail.startswith("neither proved nor refuted")
