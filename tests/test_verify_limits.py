"""``--timeout`` and z3's ``unknown``: a search the solver leaves undecided answers ``unknown``
(exit status 3) with the reason, and is never reported as ``holds`` or ``proved``."""

from __future__ import annotations

import json

import pytest
import z3
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.verify import Question, decide
from crasp.verify import bounded
from crasp.verify.questions import default_alphabet
from crasp.verify.solver import TimeLimit, Undecided

ANBNCN = crasp.example("anbncn")
TWIN = """alphabet "a" "b" "c"
b_or_c = "b" || "c"
a_after_b_or_c = "a" && #b_or_c >= 1
b_after_c = "b" && #"c" >= 1
answer = ((#"a" == #"b") && #"b" == #"c") && #a_after_b_or_c == 0 && #b_after_c == 0
"""
"""anbncn as ``crasp decompile`` writes it back: it counts the complements of anbncn's
counts, which only the relation lemmas (``crasp.verify.relations``) make easy for z3."""


def anbncn_pair() -> Question:
    return Question("equivalent", (crasp.load_program(ANBNCN),
                                   crasp.parse_program(TWIN, "twin.crasp")), ("A", "B"))


def test_a_tiny_timeout_answers_unknown_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "twin.crasp").write_text(TWIN)
    runner = CliRunner()
    for command in (["equiv", str(ANBNCN), "twin.crasp"],
                    ["check", str(ANBNCN), "--includes", "twin.crasp"]):
        text = runner.invoke(cli, command + ["--max-length", "30", "--timeout", "0.001"])
        assert text.exit_code == 3, text.output
        assert text.output.startswith("unknown: ") and "--timeout 0.001 s) ran out" in text.output
        result = runner.invoke(cli, command + ["--max-length", "30", "--timeout", "0.001",
                                               "--json", "--unbounded"])
        assert result.exit_code == 3, result.output
        verdict = json.loads(result.output)
        assert verdict["result"] == "unknown" and verdict["timeout"] == 0.001
        assert verdict["timed_out"] is True
        assert "ran out" in verdict["reason"] and verdict["counterexample"] is None
        assert verdict["decided_length"] is None or verdict["decided_length"] < 30
    enumerated = runner.invoke(cli, ["equiv", str(ANBNCN), "twin.crasp", "--max-length", "12",
                                     "--method", "enumerate", "--timeout", "0.001"])
    assert enumerated.exit_code == 3 and "running every string of length 12" in enumerated.output


def test_the_same_pair_without_a_limit_is_decided(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "twin.crasp").write_text(TWIN)
    result = CliRunner().invoke(cli, ["equiv", str(ANBNCN), "twin.crasp", "--max-length", "14",
                                      "--method", "smt", "--timeout", "600", "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    assert verdict["reason"] is None and verdict["timed_out"] is False


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_a_timeout_must_be_a_positive_number(value):
    result = CliRunner().invoke(cli, ["equiv", str(ANBNCN), str(ANBNCN), "--timeout", value])
    assert result.exit_code == 2 and "--timeout" in result.output
    assert "Traceback" not in result.output


def test_z3_running_out_of_time_is_undecided_with_the_lengths_it_did_decide():
    """Without the relation lemmas, z3 needs minutes for this pair at length 30: its own
    timeout (not the check before a call) ends the search, after the lengths it decided."""
    question = anbncn_pair()
    alphabet, _ = default_alphabet(question.programs)
    with pytest.raises(Undecided) as undecided:
        bounded.first_violation(question, alphabet, 30, TimeLimit(1.0), relations=False)
    assert 0 <= undecided.value.holds_up_to < 30
    assert "ran out while z3 was deciding" in undecided.value.reason
    assert undecided.value.timed_out


class UnknownAt:
    """``z3.Solver.check`` that answers ``unknown`` at its ``at``-th call (from 0) and
    truthfully otherwise; ``calls`` counts them."""

    def __init__(self, at: int | None):
        self.at, self.calls = at, 0
        self.real = z3.Solver.check

    def install(self, monkeypatch) -> UnknownAt:
        def check(solver, *assumptions):
            self.calls += 1
            return z3.unknown if self.calls - 1 == self.at else self.real(solver, *assumptions)
        monkeypatch.setattr(z3.Solver, "check", check)
        return self


QUESTIONS = {
    "proved": (Question("equivalent", (crasp.parse_program('m = #"a" > #"b"'),
                                       crasp.parse_program('m = 2 * #"a" > #true')),
                        ("A", "B")), ("a", "b")),
    "includes": (Question("includes", (crasp.parse_program('m = #"a" > #"b"'),
                                       crasp.parse_program('x = #"a" > 0 && #"b" == 0')),
                          ("PROG", "OTHER")), None),
}


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_an_unknown_from_the_solver_is_never_reported_as_a_proof(name, monkeypatch):
    """Every solver call in turn answers unknown (the others truthfully): the verdict is then
    unknown, with the reason; never holds or proved. Without the unknown, the same question is
    proved."""
    question, alphabet = QUESTIONS[name]
    counting = UnknownAt(None).install(monkeypatch)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda solver: "incomplete")
    honest = decide(question, 6, alphabet, method="smt", unbounded=True)
    assert honest.outcome == "proved" and counting.calls > 0
    for at in range(counting.calls):
        UnknownAt(at).install(monkeypatch)
        verdict = decide(question, 6, alphabet, method="smt", unbounded=True)
        assert verdict.outcome == "unknown" and not verdict.timed_out, (at, verdict)
        # an undecided shrink of the induction's model leaves the step unproved
        assert "z3 could not decide" in verdict.reason or "k-induction" in verdict.reason
        bounded_only = decide(question, 6, alphabet, method="smt")
        assert bounded_only.outcome in ("unknown", "holds")
        if bounded_only.outcome == "unknown":
            assert "(incomplete), at length" in bounded_only.reason
            assert not bounded_only.timed_out


def test_prove_fails_when_z3_leaves_the_equivalence_unknown(tmp_path, monkeypatch):
    """``compile --prove`` with z3 answering unknown: exit status 1 and the reason, not the
    equivalence."""
    monkeypatch.chdir(tmp_path)
    UnknownAt(0).install(monkeypatch)
    result = CliRunner().invoke(cli, ["compile", str(ANBNCN), "-o", "m.model", "--prove", "14"])
    assert result.exit_code == 1, result.output
    assert "compile --prove: unknown: " in result.output
    assert "z3 could not decide" in result.output and "Traceback" not in result.output
