"""A yes restricted to a domain says whether the domain accepts a nonempty string at all
(crasp.verify.vacuity): against the interpreter on every short string for random domains,
for every kind of question, through the CLI's text and JSON, and within its time share."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

import crasp
from crasp.cli import cli
from crasp.verify import Question, decide
from crasp.verify import driver
from crasp.verify.vacuity import accepts_empty_string, decide_vacuity, nonempty_form
from strategies import program_asts

ALPHABET = ("a", "b", "?")
CHECKED = 5


def shortest_accepted(max_length: int, *programs: crasp.Program) -> tuple[str, ...] | None:
    """The reference: the first nonempty string over ALPHABET, shortest first, that the
    interpreter finds every one of ``programs`` accepts (its answer at the last token); None
    if none up to ``max_length``."""
    for length in range(1, max_length + 1):
        strings = [list(s) for s in itertools.product(ALPHABET, repeat=length)]
        accepted = np.logical_and.reduce([
            np.asarray(crasp.evaluate(program, strings).output[:, length - 1], dtype=bool)
            for program in programs])
        if accepted.any():
            return tuple(strings[int(np.argmax(accepted))])
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3, positional=True))
def test_the_witness_is_a_shortest_string_the_interpreter_accepts(domain):
    vacuity = decide_vacuity(domain, ALPHABET, CHECKED, unbounded=False, seconds=60)
    reference = shortest_accepted(CHECKED, domain)
    if reference is None:
        assert vacuity.status == "vacuous" and vacuity.witness is None
        assert f"no nonempty string of length ≤ {CHECKED}" in vacuity.detail
    else:
        assert vacuity.status == "witnessed" and len(vacuity.witness) == len(reference)
        tokens = list(vacuity.witness)
        assert crasp.evaluate(domain, [tokens]).output[0, len(tokens) - 1]
    every_length = decide_vacuity(domain, ALPHABET, CHECKED, unbounded=True, seconds=60)
    if every_length.status == "vacuous":   # proved: none at any length, so none up to 6
        assert every_length.detail.startswith("accepts no nonempty string of any length")
        assert shortest_accepted(CHECKED + 1, domain) is None
    elif every_length.status == "witnessed":
        tokens = list(every_length.witness)
        assert crasp.evaluate(domain, [tokens]).output[0, len(tokens) - 1]
        assert reference is None or len(tokens) == len(reference)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3, positional=True))
def test_the_nonempty_form_holds_exactly_at_token_positions_where_the_domain_does(domain):
    strings = [list(s) for n in range(0, 5) for s in itertools.product(ALPHABET, repeat=n)]
    nonempty = crasp.evaluate(nonempty_form(domain), strings)
    plain = crasp.evaluate(domain, strings)
    name, answer = "\0nonempty", domain.answer.name
    for row, tokens in enumerate(strings):
        assert not nonempty.columns[name][row, 0]   # BOS: the empty string
        for position in range(1, len(tokens) + 1):
            assert bool(nonempty.columns[name][row, position]) == \
                bool(plain.columns[answer][row, position])


NOWHERE = 'only_A = #"A" == #true'   # over a b: only the empty string
EMPTY_ONLY = "x = #true == 0"
FALSE = "x = false"
PROG, OTHER = 'x = 2 * #"a" > #true', 'x = #"a" > #"b"'
QUESTIONS = {
    "equivalent": lambda d: Question("equivalent", (crasp.parse_program(PROG),
                                                    crasp.parse_program(OTHER)), ("A", "B"), d),
    "includes": lambda d: Question("includes", (crasp.parse_program(PROG),
                                                crasp.parse_program(PROG)), ("A", "B"), d),
    "empty": lambda d: Question("empty", (crasp.parse_program(FALSE),), ("PROG",), d),
    "universal": lambda d: Question("universal", (crasp.parse_program("x = true"),),
                                    ("PROG",), d),
    "prefix-closed": lambda d: Question("prefix-closed", (crasp.parse_program('x = #"b" < 3'),),
                                        ("PROG",), d),
}


@pytest.mark.parametrize("kind", sorted(QUESTIONS))
@pytest.mark.parametrize("unbounded", [False, True])
@pytest.mark.parametrize("text,empty", [(NOWHERE, "only the empty string"),
                                        (EMPTY_ONLY, "only the empty string"),
                                        (FALSE, "not even the empty string")])
def test_every_kind_of_yes_on_a_domain_without_nonempty_strings_is_vacuous(kind, unbounded,
                                                                         text, empty):
    domain = crasp.parse_program(text, "domain.crasp")
    assert accepts_empty_string(domain) == (empty == "only the empty string")
    question = QUESTIONS[kind](domain)
    verdict = decide(question, 8, ("a", "b"), unbounded=unbounded)
    assert verdict.outcome == ("proved" if unbounded else "holds"), verdict
    reach = "of any length" if unbounded else "of length ≤ 8"
    assert verdict.vacuity.status == "vacuous"
    if kind in ("includes", "prefix-closed"):   # the program a violation needs, within D
        program = question.programs[1 if kind == "includes" else 0]
        both = accepts_empty_string(program) and accepts_empty_string(domain)
        empty = "only the empty string" if both else "not even the empty string"
        assert verdict.vacuity.detail == (f"accepts no nonempty string that domain.crasp "
                                          f"accepts {reach}, {empty}")
        assert verdict.vacuity.program == program.filename
    else:
        assert verdict.vacuity.detail == f"accepts no nonempty string {reach}, {empty}"
        assert verdict.vacuity.program == "domain.crasp"


@pytest.mark.parametrize("unbounded", [False, True])
def test_an_inclusion_of_an_empty_program_and_an_empty_program_prefix_closed_are_vacuous(
        unbounded):
    """Without a domain too: PROG includes OTHER when OTHER accepts nothing, and a program
    that accepts nothing is prefix-closed; equivalence, emptiness and universality are not
    checked (nothing makes them hold trivially)."""
    never, prog = crasp.parse_program(FALSE, "never.crasp"), crasp.parse_program(PROG, "p")
    for question in (Question("includes", (prog, never), ("PROG", "OTHER")),
                     Question("prefix-closed", (never,), ("PROG",))):
        verdict = decide(question, 6, ("a", "b"), unbounded=unbounded)
        assert verdict.outcome in ("holds", "proved") and verdict.vacuity.status == "vacuous"
        assert verdict.vacuity.program == "never.crasp"
    witnessed = decide(Question("includes", (prog, prog), ("PROG", "OTHER")), 6, ("a", "b"))
    assert witnessed.vacuity.status == "witnessed" and witnessed.vacuity.witness == ("a",)
    for question in (Question("equivalent", (never, never), ("A", "B")),
                     Question("empty", (never,), ("PROG",))):
        assert decide(question, 6, ("a", "b")).vacuity is None


@pytest.mark.parametrize("kind", sorted(QUESTIONS))
def test_a_yes_on_a_domain_with_strings_has_its_shortest_witness(kind):
    for text, shortest in [('x = #"b" >= 1 && #"a" >= 2', 3), ('x = #"a" == 0', 1)]:
        if kind == "prefix-closed" and shortest == 3:
            continue   # a domain that is not prefix-closed leaves this induction unknown
        verdict = decide(QUESTIONS[kind](crasp.parse_program(text)), 8, ("a", "b"),
                         unbounded=True)
        if kind == "includes" and shortest == 1:
            # the antecedent is OTHER within the domain: 2 * #"a" > #true on no string
            # without a, so the inclusion holds trivially
            assert verdict.outcome == "proved" and verdict.vacuity.status == "vacuous"
            continue
        assert verdict.outcome == "proved" and verdict.vacuity.status == "witnessed"
        tokens = verdict.vacuity.witness
        assert len(tokens) == shortest and f"(length {shortest})" in verdict.vacuity.detail
        assert crasp.evaluate(crasp.parse_program(text), [list(tokens)]).output[0, -1]


def test_no_domain_and_no_yes_are_not_checked():
    prog, other = crasp.parse_program(PROG), crasp.parse_program('x = #"b" > #"a"')
    assert decide(Question("equivalent", (prog, prog), ("A", "B")), 6).vacuity is None
    domain = crasp.parse_program(FALSE)
    differ = Question("equivalent", (prog, other), ("A", "B"), crasp.parse_program("x = true"))
    assert decide(differ, 6).outcome == "counterexample" and decide(differ, 6).vacuity is None
    assert decide(Question("universal", (domain,), ("PROG",)), 6).vacuity is None


def test_a_domain_search_out_of_time_is_unknown_with_the_lengths_it_decided(monkeypatch):
    """The search for a witness gets its own share of the limit; spent, the status is
    unknown and says so (the answer itself stands)."""
    monkeypatch.setattr(driver, "VACUITY_SECONDS", 1e-9)
    verdict = decide(QUESTIONS["universal"](crasp.parse_program(NOWHERE)), 30, ("a", "b"),
                     method="smt")
    assert verdict.outcome == "holds" and verdict.vacuity.status == "unknown"
    assert "not decided within 1e-09 s" in verdict.vacuity.detail


def test_the_cli_warns_in_text_and_reports_in_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.crasp").write_text(PROG + "\n")
    (tmp_path / "other.crasp").write_text(OTHER + "\n")
    (tmp_path / "only_a.crasp").write_text(NOWHERE + "\n")
    runner = CliRunner()
    common = ["--domain", "only_a.crasp", "--alphabet", "a b", "--unbounded"]
    # equiv needs the domain to accept a string; check --includes, OTHER within it (and
    # prog.crasp, 2 * #"a" > #true, rejects the empty string)
    for command, program, detail in [
            (["equiv", "prog.crasp", "prog.crasp"], "only_a.crasp",
             "accepts no nonempty string of any length, only the empty string"),
            (["check", "prog.crasp", "--includes", "prog.crasp"], "prog.crasp",
             "accepts no nonempty string that only_a.crasp accepts of any length, not even "
             "the empty string")]:
        text = runner.invoke(cli, command + common)
        assert text.exit_code == 0, text.output
        assert f"warning: the answer is vacuous: {program} {detail}" in text.output.splitlines()
        shown = json.loads(runner.invoke(cli, command + common + ["--json"]).output)
        assert shown["vacuity"] == {"program": program, "status": "vacuous", "witness": None,
                                    "detail": detail}
    # the default alphabet holds A: the domain accepts it, and nothing is said
    plain = runner.invoke(cli, ["equiv", "prog.crasp", "prog.crasp", "--domain", "only_a.crasp"])
    assert plain.exit_code == 0 and "vacuous" not in plain.output
    shown = json.loads(runner.invoke(cli, ["equiv", "prog.crasp", "prog.crasp", "--domain",
                                           "only_a.crasp", "--json"]).output)
    assert shown["vacuity"]["status"] == "witnessed"
    assert shown["vacuity"]["witness"] == ["A"]
    differ = json.loads(runner.invoke(cli, ["equiv", "prog.crasp", "other.crasp", "--json"]).output)
    assert differ["vacuity"] is None


def test_solving_a_language_over_an_alphabet_without_its_tokens_is_vacuous(tmp_path):
    program = tmp_path / "prog.crasp"
    program.write_text('x = #"a" >= 1\n')
    result = CliRunner().invoke(cli, ["check", str(program), "--solves", "L4", "--alphabet",
                                      "z", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["vacuity"]["status"] == "vacuous"


def test_the_alphabet_line_names_the_tokens_an_alphabet_leaves_out(tmp_path, monkeypatch):
    """Every token some program tells apart (the domain's too) and --alphabet omits is named,
    in text and JSON; with the default alphabet, none is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.crasp").write_text('x = #"a" > #"b"\n')
    (tmp_path / "dom.crasp").write_text('x = #"c" == 0 && #"d" == 0\n')
    runner = CliRunner()
    for alphabet, left_out in [("a b c d", []), ("a b", ["c", "d"]), ("b d", ["a", "c"]),
                               ("z", ["a", "b", "c", "d"])]:
        command = ["check", "prog.crasp", "--empty", "--domain", "dom.crasp", "--alphabet",
                   alphabet]
        shown = json.loads(runner.invoke(cli, command + ["--json"]).output)
        assert shown["left_out_tokens"] == left_out
        line = next(line for line in runner.invoke(cli, command).output.splitlines()
                    if line.startswith("alphabet: "))
        named = " ".join(f'"{token}"' for token in left_out)
        assert (f"(leaves out {named}, which" in line) == bool(left_out), line
    default = json.loads(runner.invoke(cli, ["check", "prog.crasp", "--empty", "--domain",
                                             "dom.crasp", "--json"]).output)
    assert default["left_out_tokens"] == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=2, positional=True),
       program_asts(max_depth=1, max_definitions=2, positional=True))
def test_within_a_domain_the_witness_is_accepted_by_both(program, domain):
    """The includes' antecedent: OTHER's nonempty strings that the domain accepts too, against
    the interpreter on every string of up to 5 tokens."""
    vacuity = decide_vacuity(program, ALPHABET, CHECKED, unbounded=False, seconds=60,
                             within=domain)
    reference = shortest_accepted(CHECKED, program, domain)
    if reference is None:
        assert vacuity.status == "vacuous"
    else:
        assert vacuity.status == "witnessed" and len(vacuity.witness) == len(reference)
        tokens = list(vacuity.witness)
        assert crasp.evaluate(program, [tokens]).output[0, -1]
        assert crasp.evaluate(domain, [tokens]).output[0, -1]
