"""crasp: a toolkit for C-RASP, the counting RASP language that is equivalent, depth for depth,
to fixed-precision future-masked transformers (Yang, Cadilhac & Chiang, NeurIPS 2025).

The language core (this package) is the pipeline ``parse -> check -> depth / interpret / fmt``;
it never imports torch. ``crasp.compiler``, ``crasp.languages`` and ``crasp.train`` build on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from crasp.check import DIALECTS, check
from crasp.depth import analyze, depth_of
from crasp.errors import CraspError, InputError, ProgramError
from crasp.fmt import format_program, format_source
from crasp.interpret import Evaluation, evaluate
from crasp.parse import parse
from crasp.syntax import Program

__all__ = [
    "CraspError", "Evaluation", "InputError", "Program", "ProgramError", "analyze", "depth_of",
    "evaluate", "format_program", "format_source", "load_program", "parse_program",
    "read_program_text",
]

PROGRAM_SUFFIXES = (".crasp", ".cr")
"""The usual suffixes of program files (any file name is read)."""


def parse_program(text: str, filename: str = "<string>", extra_alphabet: Sequence[str] = (),
                  dialect: str = "crasp") -> Program:
    """Parse and type-check C-RASP source text.

    ``dialect="crasp"`` (the default) reads the conventional precedence; ``dialect="hahn"``
    reads the text exactly as Hahn's interpreter does (``crasp.hahn_parse``): his precedence,
    redefinitions, predicate names free until imported.
    """
    from crasp import hahn, hahn_parse

    if dialect not in DIALECTS:
        raise CraspError(f"unknown dialect {dialect!r} (expected one of {', '.join(DIALECTS)})")
    if dialect == "hahn":
        return check(hahn_parse.parse(text, filename), tuple(extra_alphabet), dialect="hahn")
    parsed = None
    try:
        parsed = parse(text, filename)
        return check(parsed, tuple(extra_alphabet))
    except ProgramError as error:
        try:
            check(hahn_parse.parse(text, filename), tuple(extra_alphabet), dialect="hahn")
            checks_as_hahn = True
        except ProgramError:
            checks_as_hahn = False
        raise hahn.explain_failure(error, parsed, checks_as_hahn) from None


def read_program_text(path: str | Path) -> str:
    """The UTF-8 text of a program file (a byte-order mark is dropped by the parsers)."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise CraspError(f"cannot read program {str(path)!r}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CraspError(f"program {str(path)!r} is not UTF-8 text") from None


def load_program(path: str | Path, extra_alphabet: Sequence[str] = (),
                 dialect: str = "crasp") -> Program:
    """Read, parse and type-check a C-RASP program file (any name; see ``parse_program``)."""
    return parse_program(read_program_text(path), str(path), extra_alphabet, dialect)
