"""Start-up stays light: ``import crasp``, ``import crasp.cli`` and a whole ``crasp run PROG
TOKENS`` (also ``crasp fmt``, ``crasp depth-check`` and ``crasp --help``) load none of the
heavy packages, nor the command modules they do not run, nor Lark (``crasp.parse_direct``
reads a program without a syntax error; Lark's parser, with its cache of the analyzed grammar,
is loaded for a syntax error). A structural test, in a fresh
interpreter each time (``sys.modules``), not a timing: the time is in
``benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from lark import Lark

HEAVY = ("networkx", "torch", "scipy", "pandas", "matplotlib", "safetensors", "onnx",
         "onnxruntime", "tqdm", "importlib.resources", "crasp.compiler", "crasp.decompile",
         "crasp.train", "crasp.realize", "crasp.models", "crasp.export", "crasp.languages",
         "crasp.trace", "lark", "crasp.parse_lark")
"""Packages (and their submodules) that the light commands must not import."""


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, check=True)
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(name for name in modules
                  if any(name == heavy or name.startswith(heavy + ".") for heavy in HEAVY))


def invoking(*arguments: str) -> str:
    return ("from click.testing import CliRunner\nfrom crasp.cli import cli\n"
            f"result = CliRunner().invoke(cli, {list(arguments)!r})\n"
            "assert result.exit_code == 0, result.output")


@pytest.mark.parametrize("code", ["import crasp", "import crasp.cli",
                                  invoking("run", "examples/dyck1.crasp", "( ( ) )"),
                                  invoking("run", "examples/majority.crasp", "--json", "aab"),
                                  invoking("fmt", "examples/L3.crasp"),
                                  invoking("depth-check", "examples/dyck1.crasp"),
                                  invoking("--help")])
def test_the_light_paths_import_nothing_heavy(code):
    modules = loaded_after(code)
    assert "crasp" in modules
    assert heavy_in(modules) == []


def test_the_check_sees_a_heavy_import():
    """The test can fail: a command that compiles loads the compiler."""
    modules = loaded_after(invoking("compile", "examples/dyck1.crasp", "-o", "-", "--json")
                           .replace("assert result.exit_code == 0, result.output", ""))
    assert "crasp.compiler" in heavy_in(modules)


SYNTAX_ERROR = 'x = #"a" >\n'
"""A program with a syntax error: Lark's parser reports it (and needs the grammar)."""


def _run_with_cache(cache_dir) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "crasp", "run", "-", "( )"], input=SYNTAX_ERROR,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CRASP_CACHE_DIR": str(cache_dir)})


def test_a_syntax_error_loads_lark():
    """The check above can fail: the error path loads Lark's parser."""
    modules = loaded_after("import crasp\ntry:\n    crasp.parse_program('x = #\"a\" >')\n"
                           "except crasp.ProgramError:\n    pass")
    assert "lark" in modules and "crasp.parse_lark" in modules


def test_the_grammar_cache_is_written_reused_and_never_trusted_blindly(tmp_path):
    """Written on the first run that needs Lark's parser (a syntax error); a corrupt or foreign
    file is rebuilt over; a place that cannot hold it (a file where the directory should be)
    only costs the time. The error is the same each time."""
    cache_dir = tmp_path / "cache"
    first = _run_with_cache(cache_dir)
    assert first.returncode == 2 and first.stdout == "", first.stderr
    assert "<stdin>:1:11: error: unexpected end of the line" in first.stderr, first.stderr
    (cached,) = cache_dir.iterdir()
    good = cached.read_bytes()
    assert good
    for damage in (b"", good[:len(good) // 2], b"not a pickle at all"):
        cached.write_bytes(damage)
        again = _run_with_cache(cache_dir)
        assert (again.returncode, again.stdout, again.stderr) == (2, "", first.stderr)
        assert cached.read_bytes() != damage
        with open(cached, "rb") as file:  # rewritten whole: it loads
            assert Lark.load(file).options.parser == "lalr"
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a directory")
    result = _run_with_cache(blocked / "cache")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", first.stderr)
