"""docs/api.md runs as written, and every API name it shows has a docstring with an example."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

API_DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"

# The modules whose docstring examples are part of the API's documentation.
DOCTESTED_MODULES = ["crasp", "crasp.api_inputs", "crasp.depth", "crasp.compiler.compiling",
                     "crasp.compiler.executor", "crasp.compiler.model_format",
                     "crasp.languages.datasets", "crasp.languages.programs",
                     "crasp.languages.registry", "crasp.languages.storage",
                     "crasp.compiler.verification", "crasp.decompile.decompiling", "crasp.fmt",
                     "crasp.models.registry",
                     "crasp.train.api"]

SHOWN = {"crasp": ["parse_program", "load_program", "example", "depth_of", "analyze",
                   "evaluate", "format_trace", "format_program"],
         "crasp.compiler": ["compile_program", "execute", "verify", "load_model"],
         "crasp.languages": ["get_language", "build_task", "write_task", "read_task"],
         "crasp.train": ["train", "load_run", "train_sweep", "load_sweep"]}


def test_api_md_snippets_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testfile(str(API_DOC), module_relative=False, report=True,
                              optionflags=doctest.ELLIPSIS)
    assert result.attempted > 30 and result.failed == 0, result


@pytest.mark.parametrize("module", DOCTESTED_MODULES)
def test_docstring_examples_run(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(module), report=True)
    assert result.failed == 0, result


@pytest.mark.parametrize("package,name", [(p, n) for p, names in SHOWN.items() for n in names])
def test_every_name_shown_is_exported_and_has_an_example(package, name):
    module = importlib.import_module(package)
    assert name in module.__all__
    assert ">>>" in (getattr(module, name).__doc__ or ""), f"{package}.{name}: no example"


def test_api_md_shows_every_exported_name_it_lists():
    text = API_DOC.read_text(encoding="utf-8")
    for package, names in SHOWN.items():
        for name in names:
            assert re.search(rf"\b{name}\b", text), f"docs/api.md does not show {package}.{name}"
