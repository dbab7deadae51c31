"""Start-up stays light: ``import crasp``, ``import crasp.cli`` and a whole ``crasp run PROG
TOKENS`` (also ``crasp fmt``, ``crasp depth-check`` and ``crasp --help``) load none of the
heavy packages, nor the command modules they do not run. A structural test, in a fresh
interpreter each time (``sys.modules``), not a timing: the time is in
``benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("networkx", "torch", "scipy", "pandas", "matplotlib", "safetensors", "onnx",
         "onnxruntime", "tqdm", "importlib.resources", "crasp.compiler", "crasp.decompile",
         "crasp.train", "crasp.realize", "crasp.models", "crasp.export", "crasp.languages",
         "crasp.trace")
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
