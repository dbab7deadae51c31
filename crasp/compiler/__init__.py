"""Compiler: C-RASP programs to the weights of equivalent fixed-precision transformers.

The public API (the torch-based parts, ``execute`` and ``verify``, are imported on first use,
so that ``crasp compile`` never loads torch):

* ``compile_program(program) -> CompiledModel`` (``.config``, ``.tensors``, ``.save(dir)``);
* ``load_model(dir) -> CompiledModel`` (raises ``ModelFormatError``, a ``CraspError``);
* ``execute(model, inputs, mode="exact") -> ModelEvaluation``;
* ``verify(program, ...) -> VerificationResult``;
* ``compile_summary(model) -> dict`` and ``format_summary(summary) -> str``;
* ``decompile_model(model) -> Decompilation`` (``.program``, ``.text``, ``.summary``): any model in
  the format back to a C-RASP program of the same depth (``docs/decompile.md``).

See ``docs/compiler.md`` for the construction and ``docs/model-format.md`` for the format.
"""

from __future__ import annotations

import importlib

from crasp.compiler.compiling import compile_program
from crasp.compiler.model_format import CompiledModel, ModelFormatError, load_model
from crasp.compiler.summary import compile_summary, format_summary

__all__ = [
    "CompiledModel", "Decompilation", "ModelEvaluation", "ModelFormatError",
    "VerificationResult", "compile_program", "compile_summary", "decompile_model", "execute",
    "format_summary", "load_model", "verify",
]

_LAZY = {"execute": "executor", "ModelEvaluation": "executor",
         "decompile_model": "decompile", "Decompilation": "decompile",
         "verify": "verification", "VerificationResult": "verification"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"crasp.compiler.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'crasp.compiler' has no attribute {name!r}")
