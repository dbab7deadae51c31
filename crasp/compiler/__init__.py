"""Compiler: C-RASP programs to the weights of equivalent fixed-precision transformers.

The driver is ``compiling.py`` (program -> ``CompiledModel``); ``executor.py`` runs a model,
``model_format.py`` reads and writes its directory, ``verification.py`` compares it with the
interpreter. The compiler imports the language core and the utilities only, never the trainer.

The public API (the torch-based parts, ``execute`` and ``verify``, are imported on first use,
so that ``crasp compile`` never loads torch):

* ``compile_program(program) -> CompiledModel`` (``.config``, ``.tensors``, ``.save(dir)``);
* ``load_model(dir) -> CompiledModel`` (raises ``ModelFormatError``, a ``CraspError``), or the
  checkpoint of a trained run or a float realization (``crasp.models`` reads every kind);
* ``execute(model, inputs, mode="exact") -> ModelEvaluation``;
* ``verify(program, ...) -> VerificationResult``;
* ``compile_summary(model) -> dict`` and ``format_summary(summary) -> str``;
* ``decompile_model(model) -> Decompilation`` (``.program``, ``.text``, ``.summary``): any model in
  the format back to a C-RASP program of the same depth (``docs/decompile.md``).

``load_model`` and ``decompile_model`` come from the packages that build on the compiler
(``crasp.models``, ``crasp.decompile``): this namespace keeps them where ``docs/api.md`` shows
them, importing them on first use; no module of the compiler imports either package.

See ``docs/compiler.md`` for the construction and ``docs/model-format.md`` for the format.
"""

from __future__ import annotations

import importlib

from crasp.compiler.compiling import compile_program
from crasp.compiler.model_format import CompiledModel, ModelFormatError
from crasp.compiler.summary import compile_summary, format_summary

__all__ = [
    "CompiledModel", "Decompilation", "ModelEvaluation", "ModelFormatError",
    "VerificationResult", "compile_program", "compile_summary", "decompile_model", "execute",
    "format_summary", "load_model", "verify",
]

_LAZY = {  # name -> (module, attribute)
    "execute": ("crasp.compiler.executor", "execute"),
    "ModelEvaluation": ("crasp.compiler.executor", "ModelEvaluation"),
    "verify": ("crasp.compiler.verification", "verify"),
    "VerificationResult": ("crasp.compiler.verification", "VerificationResult"),
    "load_model": ("crasp.models.registry", "load_executable"),
    "decompile_model": ("crasp.decompile.decompiling", "decompile_model"),
    "Decompilation": ("crasp.decompile.decompiling", "Decompilation"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'crasp.compiler' has no attribute {name!r}")
