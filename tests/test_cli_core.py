"""End-to-end tests of crasp run, depth-check and fmt through click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import crasp
from crasp.util.code_fingerprint import code_fingerprint
from crasp.cli import cli
from test_core import ERRORS


@pytest.fixture
def runner():
    return CliRunner()


def invoke(runner, *args, input=None):
    return runner.invoke(cli, list(args), input=input, catch_exceptions=False)


def test_run_prints_hahn_compatible_lines(runner):
    result = invoke(runner, "run", "examples/dyck1.crasp", "( ( ) )")
    assert result.exit_code == 0
    assert result.output == "1 ( ( ) ): True\n"


def test_run_reads_stdin_skipping_blank_and_comment_lines(runner):
    result = invoke(runner, "run", "examples/majority.crasp",
                    input="// header\naab\n\nb b a\n  \nabb\n")
    assert result.output.splitlines() == ["1 aab: True", "2 b b a: False", "3 abb: False"]


def test_run_json_has_tokens_accept_and_output(runner):
    result = invoke(runner, "run", "examples/dyck1.crasp", "--json", input="()\n)(\n")
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert rows[0] == {"id": 1, "tokens": ["(", ")"], "accept": True, "output": [False, True]}
    assert rows[1]["accept"] is False and rows[1]["output"] == [False, False]


def test_run_empty_argument_is_the_empty_input(runner):
    result = invoke(runner, "run", "examples/dyck1.crasp", "")
    assert result.output == "1 : True\n"


@pytest.mark.parametrize("suffix", ["txt", "html"])
def test_run_trace_writes_every_definition(runner, tmp_path, suffix):
    trace = tmp_path / f"trace.{suffix}"
    result = invoke(runner, "run", "examples/dyck1.crasp", "--trace", str(trace), "( ) )")
    assert result.exit_code == 0
    text = trace.read_text()
    for name in ["C_open", "C_close", "V", "CV", "M", "B", "D"]:
        assert name in text
    if suffix == "txt":
        assert "C_close | 0 1 2" in text
        assert "D       | F T F" in text


def test_run_alphabet_option_extends_an_undeclared_alphabet(runner, tmp_path):
    program = tmp_path / "p.crasp"
    program.write_text('x = #"a" > 0\n')
    assert invoke(runner, "run", str(program), "--strict-alphabet", "a c").exit_code == 2
    result = invoke(runner, "run", str(program), "--alphabet", "c", "a c")
    assert result.output == "1 a c: True\n"


def test_depth_check_table_and_budget(runner):
    result = invoke(runner, "depth-check", "examples/L4.crasp")
    assert result.exit_code == 0
    assert "program depth: 4" in result.output
    assert "critical path: L4 <- " in result.output
    over = invoke(runner, "depth-check", "examples/L4.crasp", "--max-depth", "3")
    assert over.exit_code == 1 and "EXCEEDS the budget of 3" in over.output
    assert invoke(runner, "depth-check", "examples/L4.crasp", "--max-depth", "4").exit_code == 0


def test_depth_check_json(runner):
    result = invoke(runner, "depth-check", "examples/dyck1.crasp", "--json", "--max-depth", "1")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["depth"] == 2 and report["within_budget"] is False
    assert {"name": "CV", "type": "count", "depth": 2}.items() <= report["definitions"][3].items()


def test_fmt_prints_and_rewrites(runner, tmp_path):
    program = tmp_path / "p.cr"
    program.write_text('// comment\nx   =  ( #"a" )>0&&!("b")\n')
    result = invoke(runner, "fmt", str(program))
    assert result.output == '// comment\nx = #"a" > 0 && !"b"\n'
    invoke(runner, "fmt", "--write", str(program))
    assert program.read_text() == result.output


def test_program_error_exits_2_with_location_and_caret(runner, tmp_path):
    program = tmp_path / "bad.crasp"
    program.write_text('a = #"x"\nb = #a > 0\n')
    result = runner.invoke(cli, ["run", str(program), "x"])
    assert result.exit_code == 2
    assert f"{program}:2:6: error: '#' counts positions where a Boolean holds" in result.output
    assert "    b = #a > 0\n         ^" in result.output
    assert "Traceback" not in result.output


def test_bad_token_with_strict_alphabet_and_missing_file_exit_2(runner, tmp_path):
    bad_token = runner.invoke(cli, ["run", "examples/majority.crasp", "--strict-alphabet",
                                    "a b z"])
    assert bad_token.exit_code == 2 and "token 'z' at position 2" in bad_token.output
    missing = runner.invoke(cli, ["depth-check", str(tmp_path / "none.crasp")])
    assert missing.exit_code == 2 and "cannot read program" in missing.output


def test_core_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, crasp, crasp.cli; crasp.evaluate(crasp.load_program("
            "'examples/dyck1.crasp'), [list('()')]); print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_warns_where_hahns_parser_reads_differently(tmp_path):
    program = tmp_path / "p.cr"
    program.write_text('x = #"a" - #"b" + 1\ny = !"a" || x > 0\nz = (!"a") || 2 * x - 1 > 0\n'
                       'w = (!"a") || (2 * x) - 1 > 0\n')
    result = CliRunner().invoke(cli, ["depth-check", str(program)])
    assert result.exit_code == 0
    assert f"{program}:1:5: warning: Hahn's interpreter reads 'x' differently" in result.output
    assert 'Hahn reads:  (#"a") - ((#"b") + 1)' in result.output
    assert 'crasp reads: (!"a") || (x > 0)' in result.output
    assert 'Hahn reads:  !("a" || (x > 0))' in result.output
    assert 'Hahn reads:  (!"a") || ((2 * (x - 1)) > 0)' in result.output
    assert f"{program}:4:5: warning" not in result.output  # parenthesized: same meaning
    assert result.output.count("warning:") == 3


def test_hahns_published_style_examples_give_no_warning():
    from crasp.hahn import precedence_warnings

    for path in ["examples/dyck1.crasp", "examples/anbncn.crasp", "examples/contains_ab.crasp"]:
        assert precedence_warnings(crasp.load_program(path)) == []


@pytest.mark.parametrize("name, source, line, column, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_every_program_error_exits_2_through_the_cli(runner, tmp_path, name, source, line, column,
                                                     message):
    program = tmp_path / "prog.crasp"
    program.write_text(source)
    result = runner.invoke(cli, ["run", str(program), "a"])
    assert result.exit_code == 2
    assert f"{program}:{line}:{column}: error: " in result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_version_comes_from_the_package_not_its_install_metadata(runner):
    """``--version`` works from a source checkout too (it once asked pip's metadata and crashed)."""
    result = invoke(runner, "--version")
    assert result.exit_code == 0
    assert result.output == f"crasp, version {crasp.__version__} (code {code_fingerprint()})\n"


def test_the_code_fingerprint_follows_the_sources(tmp_path, monkeypatch):
    """Two checkouts that differ in one source byte have different fingerprints; the fingerprint
    of the same sources is the same wherever they lie."""
    import shutil

    import crasp.util.code_fingerprint as module

    installed = code_fingerprint()
    copy = tmp_path / "crasp"
    shutil.copytree(Path(module.__file__).parent.parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(module, "__file__", str(copy / "util" / "code_fingerprint.py"))
    assert module.code_fingerprint() == installed
    (copy / "parse.py").write_text((copy / "parse.py").read_text() + "\n")
    assert module.code_fingerprint() != installed


@pytest.mark.parametrize("suffix", ["txt", "html"])
def test_a_trace_reads_the_answers_once_for_every_input(tmp_path, monkeypatch, suffix):
    """A trace of many inputs computes the batch's answers once, not once per input (which made
    ``run --trace`` quadratic in the number of lines), and still shows each input's own."""
    from crasp.interpret import Evaluation
    from crasp.trace import write_trace

    reads = []
    answers = Evaluation.accept
    monkeypatch.setattr(Evaluation, "accept",
                        property(lambda self: reads.append(1) or answers.fget(self)))
    program = crasp.load_program(crasp.example("majority"))
    inputs = [["a"] * (i % 3) + ["b"] * (i % 2) for i in range(300)]
    write_trace(tmp_path / f"trace.{suffix}", crasp.evaluate(program, inputs), inputs)
    text = (tmp_path / f"trace.{suffix}").read_text()
    assert len(reads) == 1
    expected = crasp.evaluate(program, inputs).accept
    shown = [part.split("accept = ")[1].startswith("True")
             for part in text.split("input ")[1:]]
    assert shown == expected.tolist()
