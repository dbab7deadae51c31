"""``--prove [N]`` on ``compile`` and ``fmt``: equiv between the input and what is read back."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli

HAHN_AA_STAR = '\n#import pos_even\n\nC_not_a = # !"a"\nA = (C_not_a == 0)\nD = !pos_even && A\n'
HAHN_REDEFINED = 'P = "a"\nQ = "b"\nx = #P && Q\nx = x > 0\nP = #x > 1\ny = P || x\n'


def run(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", ["dyck1", "majority", "L3", "anbn"])
def test_compile_prove_decompiles_the_model_and_proves_it_equal(scratch, name):
    result = run("compile", str(crasp.example(name)), "-o", "m.model", "--prove", "8")
    assert result.exit_code == 0, result.output
    assert "compile --prove: " in result.output
    assert "are equivalent for every string of length ≤ 8" in result.output


def test_compile_prove_reports_a_model_that_differs(scratch, monkeypatch):
    from crasp import compiler

    wrong = crasp.parse_program('x = #"(" > 0', "wrong.crasp")
    real = compiler.decompile_model

    def broken(model, source="a model", **options):
        return real(model, source, **options).__class__(wrong, "", {})
    monkeypatch.setattr(compiler, "decompile_model", broken, raising=False)
    result = run("compile", str(crasp.example("dyck1")), "-o", "m.model", "--prove")
    assert result.exit_code == 1
    assert "compile --prove: not equivalent" in result.output
    assert 'compile --prove: shortest counterexample: "" (length 0), at BOS' in result.output


def test_compile_prove_refuses_the_float_target(scratch):
    result = run("compile", str(crasp.example("dyck1")), "-o", "f", "--target", "float",
                 "--max-length", "8", "--prove")
    assert result.exit_code == 2 and "--prove" in result.output


@pytest.mark.parametrize("text", [HAHN_AA_STAR, HAHN_REDEFINED])
def test_fmt_prove_in_hahns_dialect(scratch, text):
    (scratch / "p.cr").write_text(text)
    result = run("fmt", "--dialect", "hahn", "p.cr", "--prove=10")
    assert result.exit_code == 0, result.output
    assert "fmt --prove: p.cr and p.cr (formatted) are equivalent for every string of " \
           "length ≤ 10" in result.output


def test_fmt_prove_stops_a_wrong_rewrite_before_it_is_written(scratch, monkeypatch):
    (scratch / "p.crasp").write_text('x = #"a" > #"b"\n')
    monkeypatch.setattr(crasp, "format_source", lambda program: 'x = #"a" >= #"b"\n')
    result = run("fmt", "-w", "p.crasp", "--prove")
    assert result.exit_code == 1
    assert 'fmt --prove: shortest counterexample: "" (length 0), at BOS' in result.output
    assert (scratch / "p.crasp").read_text() == 'x = #"a" > #"b"\n'


def test_decompile_prove_against_the_original_program(scratch):
    (scratch / "L3.crasp").write_text(crasp.example("L3").read_text())
    assert run("compile", "L3.crasp", "-o", "L3.model").exit_code == 0
    result = run("decompile", "L3.model", "-o", "L3.decompiled.crasp", "--prove", "10")
    assert result.exit_code == 0, result.output
    assert "decompile --prove: L3.crasp and L3.model are equivalent for every string of " \
           "length ≤ 10" in result.output


def test_decompile_prove_without_the_original_runs_the_model(scratch):
    (scratch / "L3.crasp").write_text(crasp.example("L3").read_text())
    assert run("compile", "L3.crasp", "-o", "L3.model").exit_code == 0
    (scratch / "L3.crasp").write_text("// edited since\n" + crasp.example("L3").read_text())
    result = run("decompile", "L3.model", "-o", "L3.decompiled.crasp", "--prove", "5")
    assert result.exit_code == 0, result.output
    assert "decompile --prove: 'L3.crasp' has changed since the model was compiled; so the " \
           "model itself was run instead: the decompiled program agrees with the model " \
           "(3 layers) at every position of 63 strings: all strings up to length 5" \
           in result.output


def test_decompile_prove_reports_a_program_that_differs(scratch, monkeypatch):
    from crasp.decompile import cli as decompile_cli

    (scratch / "L3.crasp").write_text(crasp.example("L3").read_text())
    assert run("compile", "L3.crasp", "-o", "L3.model").exit_code == 0
    real = decompile_cli.decompile_model
    wrong = crasp.parse_program('alphabet "a" "b"\nx = #"a" > 0', "L3.model")

    def broken(model, source="a model", **options):
        result = real(model, source, **options)
        return result.__class__(wrong, result.text, result.summary)
    monkeypatch.setattr(decompile_cli, "decompile_model", broken)
    result = run("decompile", "L3.model", "-o", "L3.decompiled.crasp", "--prove")
    assert result.exit_code == 1
    assert "decompile --prove: not equivalent" in result.output
    assert 'decompile --prove: shortest counterexample: a (length 1)' in result.output
