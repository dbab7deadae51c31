"""``--vocabulary-only`` (``crasp.decompile.vocabulary``): a decompiled program shrunk for the
model's own tokens answers as the model on every string of them, at a depth no greater and in
no more lines; on a trained model's program it is a few definitions where the exact one has
hundreds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.compiler import compile_program
from crasp.compiler.random_models import random_model
from crasp.decompile import decompile_model
from crasp.decompile import vocabulary
from crasp.decompile.budget import Budget
from crasp.decompile.decompiling import shorter
from crasp.verify import Question, enumeration
from test_decompile import COMPILABLE
from test_decompile_readable import lines, same_answers

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TRAINED_L4 = (Path(__file__).resolve().parent.parent / "docs" / "extraction" / "programs" /
              "L4-d2-nope_fp6.2-s1-242659fb8c.crasp")


def both(model):
    return decompile_model(model), decompile_model(model, vocabulary_only=True)


def check(exact, shrunk, max_length: int) -> None:
    assert shrunk.text.splitlines()[1] == vocabulary.NOTE
    assert shrunk.summary["vocabulary_only"] and not exact.summary["vocabulary_only"]
    assert same_answers(exact.program, shrunk.program, max_length)
    assert crasp.depth_of(shrunk.program) <= crasp.depth_of(exact.program)
    assert lines(shrunk.text) <= lines(exact.text)
    assert crasp.parse_program(shrunk.text) == shrunk.program


@pytest.mark.parametrize("path", COMPILABLE, ids=lambda p: p.stem)
def test_every_example_answers_as_its_model_on_its_tokens(path):
    check(*both(compile_program(crasp.load_program(path))), 6)


@pytest.mark.parametrize("seed,positional", [(2, {}), (12, {}), (26, {}), (2, {"alibi": True}),
                                             (3, {"alibi": True}), (2, {"moduli": (2,)}),
                                             (3, {"moduli": (2, 3)})])
def test_models_no_program_made_answer_as_before_on_their_tokens(seed, positional):
    check(*both(random_model(seed, **positional)), 5)


def test_the_trained_l4_program_comes_down_to_two_definitions():
    """The extraction study's trained L4 run, decompiled exactly (1,298 definitions): over
    {a, b} its answers are those of two definitions, checked by the interpreter alone on
    every string up to length 8 against the program as committed."""
    text = TRAINED_L4.read_text(encoding="utf-8")
    exact = crasp.parse_program(text, str(TRAINED_L4))
    assert len(exact.definitions) == 1298
    new_text, program = vocabulary.over_vocabulary(text, exact, ("a", "b"))
    new_text, program, readability = shorter(new_text, program, Budget(10**9), vocabulary.NOTE)
    assert readability == "rewritten" and len(program.definitions) == 2, new_text
    assert crasp.depth_of(program) == 2
    question = Question("equivalent", (exact, program), ("A", "B"))
    assert enumeration.first_violation(question, ("a", "b"), 8) is None


def test_the_command_writes_proves_and_replaces_its_own_program(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    source = tmp_path / "dyck1.crasp"
    source.write_text(Path(crasp.example("dyck1")).read_text(encoding="utf-8"))
    assert runner.invoke(cli, ["compile", str(source), "-o", "dyck1.model"]).exit_code == 0
    args = ["decompile", "dyck1.model", "-o", "small.crasp", "--vocabulary-only", "--json"]
    first = runner.invoke(cli, args + ["--prove"])
    assert first.exit_code == 0, first.output
    assert 'alphabet: "(" ")"' in first.output   # the proof is over the vocabulary only
    summary = json.loads(first.output[first.output.index("{"):])
    assert summary["vocabulary_only"] is True
    assert (tmp_path / "small.crasp").read_text().splitlines()[1] == vocabulary.NOTE
    assert runner.invoke(cli, args).exit_code == 2                   # exists: --force
    assert runner.invoke(cli, args + ["--force"]).exit_code == 0


@pytest.mark.parametrize("program_file", [5, [1], {"a": 1}, None, True, "a\u0000b", ""])
def test_prove_with_a_program_file_that_is_not_a_readable_path_runs_the_model(tmp_path,
                                                                             program_file):
    """config.json's ``program_file`` is informational: a number, a list, an object, null, a
    Boolean, a name with a NUL or an empty name names no program, so ``--prove`` says so and
    compares with the model itself (as for a program that cannot be read), never a
    traceback."""
    model = tmp_path / "m"
    compiled = CliRunner().invoke(cli, ["compile", str(crasp.example("dyck1")), "-o", str(model)])
    assert compiled.exit_code == 0, compiled.output
    config = json.loads((model / "config.json").read_text())
    config["program_file"] = program_file
    (model / "config.json").write_text(json.dumps(config))
    result = CliRunner().invoke(cli, ["decompile", str(model), "-o", "-", "--prove", "3"])
    assert result.exit_code == 0, result.output
    assert "config.json names" in result.output and "the model itself was run" in result.output
