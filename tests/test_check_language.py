"""``crasp check PROG --recognizes NAME`` and ``--solves NAME``: a program against a built-in
language's own program (every string), or against its prediction program on the prefixes of
its strings (the task, Knee-Deep def:prediction_task)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.languages import get_language
from test_verify_domain import prefix_of_the_language

EXTRACTED = Path(__file__).resolve().parent.parent / "docs" / "extraction" / "programs"


def check(*arguments) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", *map(str, arguments)])
    return result.exit_code, result.output


def written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["L4", "E3", "L9", "dyck1", "dyck2", "anbncn",
                                  "memory-xor-1-2-4", "majority"])
def test_each_prediction_program_solves_its_languages_task(tmp_path, name):
    language = get_language(name)
    program = written(tmp_path, "predict.crasp", language.prediction_program.source)
    code, output = check(program, "--solves", name, "--unbounded", "--max-length", 10, "--json")
    verdict = json.loads(output)
    assert code == 0 and verdict["result"] == "proved", output
    assert verdict["programs"] == [str(program), f"{name}'s prediction program"]
    assert verdict["domain"] == f"{name}'s prefixes program"
    assert verdict["domain_closure"]["status"] == "recognized"


@pytest.mark.parametrize("name", ["L3", "L5", "E4", "anbn"])
def test_a_languages_own_program_solves_its_task_and_recognizes_it(tmp_path, name):
    program = written(tmp_path, "own.crasp", get_language(name).program.source)
    assert check(program, "--solves", name, "--unbounded", "--max-length", 10)[0] == 0
    code, output = check(program, "--recognizes", name, "--max-length", 8)
    assert code == 0 and output.startswith(f"{program} and {name}'s program are equivalent")


@pytest.mark.parametrize("wrong,name", [("L3", "L4"), ("L4", "L5"), ("E3", "E4"),
                                        ("L5", "L4")])
def test_a_wrong_prediction_program_fails_on_a_prefix_of_the_language(tmp_path, wrong, name):
    """The witness of a program that does not solve the task is a prefix of a string of the
    language where the program's answer is not the prefix's membership."""
    program = written(tmp_path, "wrong.crasp", get_language(wrong).prediction_program.source)
    code, output = check(program, "--solves", name, "--json")
    verdict = json.loads(output)
    assert code == 1, output
    tokens = tuple(verdict["counterexample"]["tokens"])
    language = get_language(name)
    assert prefix_of_the_language(language, tokens)
    mine = bool(crasp.evaluate(crasp.parse_program(program.read_text()),
                               [list(tokens)]).accept[0])
    assert mine != language.contains(list(tokens))


def test_prediction_is_not_recognition(tmp_path):
    program = written(tmp_path, "L3_predict.crasp", get_language("L3").prediction_program.source)
    code, output = check(program, "--recognizes", "L3")
    assert code == 1 and "shortest counterexample: ba (length 2)" in output


def test_a_trained_transformers_program_is_checked_on_its_task():
    """docs/extraction.md: the float run L3 depth 2 seed 1's program solves L3's task at every
    length; its reading at precision 6.2 answers aaaaa wrongly."""
    code, output = check(EXTRACTED / "L3-d2-nope-s1-69c75dc4e2.crasp", "--solves", "L3",
                         "--unbounded", "--max-length", 16)
    assert code == 0 and output.startswith("proved: ")
    code, output = check(EXTRACTED / "L3-d2-nope-s1-69c75dc4e2.p6.2.crasp", "--solves", "L3")
    assert code == 1 and "shortest counterexample: aaaaa (length 5)" in output


@pytest.mark.parametrize("arguments,message", [
    (["--solves", "parity"], "parity has no prediction program"),
    (["--recognizes", "parity"], "parity has no program"),
    (["--solves", "nope"], "unknown language 'nope'"),
    (["--solves", "L3", "--domain", "{program}"], "leave out --domain"),
    (["--solves", "L3", "--empty"], "give exactly one of"),
    (["--recognizes", "L3", "--solves", "L3"], "give exactly one of"),
])
def test_language_questions_refuse_what_they_cannot_ask(tmp_path, arguments, message):
    program = written(tmp_path, "p.crasp", 'x = #"a" >= 1\n')
    code, output = check(program, *[a.format(program=program) for a in arguments])
    assert code == 2 and message in output and "Traceback" not in output
