"""The package graph points one way, read from the imports of every module (their syntax trees,
imports inside functions included; those under ``if TYPE_CHECKING:`` are annotations only).

Every module belongs to one layer; a layer imports only the layers below it:

    errors      crasp/errors.py: the one error type every layer raises
    util        crasp/util/: atomic writes, safe reads, output places, inputs, tables, ...
    core        the language: crasp/*.py (parse, check, depth, interpret, fmt, trace, hahn, ...)
    languages   crasp/languages/: registry, generators, oracles, datasets
    verify      crasp/verify/: questions about programs -> z3 terms or enumeration -> verdicts
    compiler    crasp/compiler/: program -> fixed-precision model, its format and executor
    decompile   crasp/decompile/: fixed-precision model -> program (--vocabulary-only shrinks
                it with the verifier's pass, ``crasp.verify.shrink``)
    model class crasp/train/{model,posenc,config,run,results,checkpoint,fixed_precision,
                exact_attention}.py: the trainer's model classes (the fixed-precision one's
                attention included) and its run directory, which a float realization is
                written in
    realize     crasp/realize/: program -> float realization, its certificate and checkpoint
    train       the rest of crasp/train/: the loop (which can start from a realization), sweeps,
                reports, analyses, extraction (which decompiles a quantized run)
    models      crasp/models/: every kind of model, one type each, one loader
    export      crasp/export/: models for other tools
    zoo         crasp/zoo/: compiled models with their ground-truth circuits, scored by ablation
    commands    the click commands (crasp/cli.py and every cli.py, crasp eval): everything

The API names that ``docs/api.md`` shows in ``crasp.compiler`` but that live above it
(``load_model``, ``decompile_model``) are imported by name on first use (``_LAZY`` there), as
the command line imports its commands (``LAZY_COMMANDS``): neither is an import statement.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import crasp

PACKAGE = Path(crasp.__file__).parent
MAX_LINES = 450
MAX_COLUMNS = 100

LAYERS = ["errors", "util", "core", "languages", "verify", "compiler", "decompile", "model class",
          "realize", "train", "models", "export", "zoo", "commands"]
ALLOWED = {
    "errors": set(),
    "util": {"errors"},
    "core": {"errors", "util"},
    "languages": {"errors", "util", "core"},
    "verify": {"errors", "util", "core"},
    "compiler": {"errors", "util", "core"},
    "decompile": {"errors", "util", "core", "verify", "compiler"},   # verify: its shrink pass
    "model class": {"errors", "util", "core", "languages", "compiler"},
    "realize": {"errors", "util", "core", "compiler", "model class"},
    "train": {"errors", "util", "core", "languages", "compiler", "decompile", "model class",
              "realize"},
    "models": {"errors", "util", "core", "compiler", "model class"},
    "export": {"errors", "util", "core", "compiler", "models"},
    "zoo": {"errors", "util", "core", "languages", "compiler", "realize", "models"},
    "commands": set(LAYERS),
}
MODEL_CLASS = {"crasp.train.model", "crasp.train.posenc", "crasp.train.config", "crasp.train.run",
               "crasp.train.results", "crasp.train.checkpoint", "crasp.train.fixed_precision",
               "crasp.train.exact_attention"}
PACKAGES = {"util", "languages", "verify", "compiler", "decompile", "realize", "models",
            "export", "zoo"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The crasp modules (or packages) ``module`` imports, at any depth but annotations."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package this module is in
                anchor = module.split(".")
                anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            # ``from crasp import compiler`` imports the module crasp.compiler (and runs the
            # package's __init__, as every import of a submodule does: not counted)
            submodules = {f"{base}.{alias.name}" for alias in node.names
                          if _exists(f"{base}.{alias.name}")}
            found.update(submodules or {base})
            if len(submodules) < len(node.names):
                found.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in found if name == "crasp" or name.startswith("crasp.")}


def _exists(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _is_command(module: str, tree: ast.AST) -> bool:
    """crasp/cli.py, __main__, every cli.py, and any module that defines a click command."""
    if module.split(".")[-1] in ("cli", "__main__"):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                call = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(call, ast.Attribute) and call.attr == "command":
                    return True
    return False


def layer_of(module: str, tree: ast.AST | None = None) -> str:
    if tree is not None and _is_command(module, tree):
        return "commands"
    if module == "crasp.errors":
        return "errors"
    if module in MODEL_CLASS:
        return "model class"
    parts = module.split(".")
    if len(parts) == 1 or (len(parts) == 2 and not _package(parts[1])):
        return "core"
    if parts[1] == "train":
        return "train"
    assert parts[1] in PACKAGES, f"{module}: a package the layers do not name"
    return parts[1]


def _package(name: str) -> bool:
    return (PACKAGE / name / "__init__.py").is_file()


def _sources() -> dict[str, tuple[Path, ast.AST]]:
    return {_module_name(path): (path, ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted(PACKAGE.rglob("*.py"))}


SOURCES = _sources()


def _graph() -> dict[str, set[str]]:
    return {module: _imports(tree, module, path.name == "__init__.py")
            for module, (path, tree) in SOURCES.items()}


def _layer(name: str) -> str:
    """The layer of an imported name (a module, or the package ``crasp`` itself: the core)."""
    if name in SOURCES:
        return layer_of(name, SOURCES[name][1])
    return layer_of(name)


def test_the_sources_are_found_and_the_allowed_layers_point_down():
    assert len(SOURCES) > 100 and "crasp.models.registry" in SOURCES
    for layer, below in ALLOWED.items():
        if layer != "commands":
            assert all(LAYERS.index(other) < LAYERS.index(layer) for other in below), layer


def test_every_import_points_down_the_layers():
    wrong = []
    for module, imported in _graph().items():
        layer = _layer(module)
        wrong += [f"{module} ({layer}) imports {name} ({_layer(name)})"
                  for name in sorted(imported)
                  if _layer(name) != layer and _layer(name) not in ALLOWED[layer]]
    assert wrong == []


def test_only_commands_import_commands():
    wrong = [f"{module} imports {name}" for module, imported in _graph().items()
             for name in imported
             if _layer(name) == "commands" and _layer(module) != "commands"]
    assert wrong == []


def test_the_compiler_never_imports_the_trainer():
    """Not even its command: ``crasp compile --target float`` reaches the trainer's checkpoint
    format through ``crasp.realize``."""
    wrong = [f"{module} imports {name}" for module, imported in _graph().items()
             if module.startswith("crasp.compiler") for name in imported
             if name == "crasp.train" or name.startswith("crasp.train.")]
    assert wrong == []


def test_the_core_and_the_utilities_never_import_torch():
    wrong = []
    for module, (_path, tree) in SOURCES.items():
        if _layer(module) not in ("errors", "util", "core"):
            continue
        for node in ast.walk(tree):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            wrong += [f"{module} imports {name}" for name in names
                      if name.split(".")[0] == "torch"]
    assert wrong == []


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_module_is_over_the_line_limit(module):
    path = SOURCES[module][0]
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES, path


def test_no_line_is_wider_than_the_limit():
    """Every line of the package's modules and of the Python files beside it (tests,
    benchmarks, the scripts under docs/) has at most ``MAX_COLUMNS`` characters."""
    checkout = Path(__file__).resolve().parents[1]
    files = [path for path, *_ in SOURCES.values()] + [
        path for folder in ("tests", "benchmarks", "docs") for path in
        sorted((checkout / folder).rglob("*.py"))]
    wide = [f"{path}:{number}" for path in files
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if len(line) > MAX_COLUMNS]
    assert Path(__file__).resolve() in files and not wide, wide


def test_the_layers_are_what_the_file_list_shows():
    """A sample of where things go: the file list is the architecture."""
    assert _layer("crasp.parse") == "core" and _layer("crasp.util.atomic") == "util"
    assert _layer("crasp.decompile.enumerate_states") == "decompile"
    assert _layer("crasp.realize.realization") == "realize"
    assert _layer("crasp.train.loop") == "train" and _layer("crasp.train.model") == "model class"
    assert _layer("crasp.train.evaluate") == "commands"  # crasp eval
    assert _layer("crasp.export.onnx") == "export" and _layer("crasp.models.kinds") == "models"
    assert _layer("crasp.verify.bounded") == "verify" and _layer("crasp.verify.cli") == "commands"


def test_an_upward_import_is_caught(tmp_path):
    """The reader sees imports inside functions, relative imports and ``from crasp import x``,
    and skips annotations under TYPE_CHECKING."""
    tree = ast.parse("from typing import TYPE_CHECKING\n"
                     "if TYPE_CHECKING:\n    from crasp.train.loop import train\n"
                     "def f():\n    from crasp import models\n    from ..train import run\n")
    imported = _imports(tree, "crasp.compiler.x", False)
    assert "crasp.models" in imported and "crasp.train.run" in imported
    assert "crasp.train.loop" not in imported
    assert "models" not in ALLOWED[_layer("crasp.compiler.x")]
