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
