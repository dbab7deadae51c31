"""The verifier tells a progress callback where each search is (crasp.verify.solver.Progress),
and ``crasp equiv`` / ``crasp check`` show it as a bar on stderr with --progress (by default
only on a terminal), never in what they print on stdout."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.verify import Question, decide


class Recorder:
    def __init__(self):
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        assert 0 <= done <= total, (stage, done, total)
        self.calls.append((stage, done, total))

    def stages(self) -> list[str]:
        return list(dict.fromkeys(stage for stage, _, _ in self.calls))


MAJORITY, TWICE = 'x = #"a" > #"b"', 'x = 2 * #"a" > #true'


@pytest.mark.parametrize("method,stage", [("smt", "z3: strings of length ≤ 12"),
                                          ("enumerate", "every string of length 12")])
def test_every_search_reports_its_stage_in_order(method, stage):
    recorder = Recorder()
    question = Question("equivalent", (crasp.parse_program(MAJORITY),
                                       crasp.parse_program(TWICE)), ("A", "B"))
    verdict = decide(question, 12, ("a", "b"), method=method, unbounded=True,
                     progress=recorder)
    assert verdict.outcome == "proved"
    stages = recorder.stages()
    assert stages[0] == stage and any(s.startswith("k-induction up to k = ") for s in stages)
    searched = [done for name, done, _ in recorder.calls if name == stage]
    assert searched == sorted(searched)   # lengths (or strings) in order
    if method == "smt":
        assert searched == list(range(12))


def test_without_a_callback_nothing_is_reported_and_the_answer_is_the_same():
    question = Question("equivalent", (crasp.parse_program(MAJORITY),
                                       crasp.parse_program(TWICE)), ("A", "B"))
    quiet = decide(question, 10, ("a", "b"), unbounded=True)
    shown = decide(question, 10, ("a", "b"), unbounded=True, progress=Recorder())
    assert (quiet.outcome, quiet.induction.k) == (shown.outcome, shown.induction.k)


@pytest.mark.parametrize("command", [["equiv", "a.crasp", "b.crasp"],
                                     ["check", "a.crasp", "--includes", "b.crasp"]])
def test_the_cli_bar_goes_to_stderr_only_when_asked(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.crasp").write_text(MAJORITY + "\n")
    (tmp_path / "b.crasp").write_text(TWICE + "\n")
    runner = CliRunner()
    options = ["--alphabet", "a b", "--max-length", "14", "--method", "smt", "--json"]
    shown = runner.invoke(cli, command + options + ["--progress"])
    quiet = runner.invoke(cli, command + options)
    assert shown.exit_code == quiet.exit_code == 0, shown.output
    assert "z3: strings of length ≤ 14" in shown.stderr and quiet.stderr == ""
    assert json.loads(shown.stdout)["result"] == json.loads(quiet.stdout)["result"] == "holds"


def test_prove_shows_the_bar_where_stderr_is_a_terminal(tmp_path, monkeypatch):
    """compile, decompile and fmt --prove run the same searches: their bar follows the
    terminal rule (no option of their own)."""
    import crasp.verify.cli as verify_cli
    (tmp_path / "m.crasp").write_text(MAJORITY + "\n")
    runner = CliRunner()
    monkeypatch.setattr(verify_cli, "wants_progress", lambda flag: True)
    shown = runner.invoke(cli, ["fmt", str(tmp_path / "m.crasp"), "--prove", "14"])
    monkeypatch.setattr(verify_cli, "wants_progress", lambda flag: False)
    quiet = runner.invoke(cli, ["fmt", str(tmp_path / "m.crasp"), "--prove", "14"])
    assert shown.exit_code == quiet.exit_code == 0, shown.output
    assert shown.stdout == quiet.stdout
    # three tokens and 14 positions: z3 searches (3^14 strings are too many to run)
    assert "z3: strings of length ≤ 14" in shown.stderr
    assert "z3: strings of length ≤ 14" not in quiet.stderr
