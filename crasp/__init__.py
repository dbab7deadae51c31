"""crasp: a toolkit for C-RASP, the counting RASP language that is equivalent, depth for depth,
to fixed-precision future-masked transformers (Yang, Cadilhac & Chiang, NeurIPS 2025).

The language core (this package) is the pipeline ``parse -> check -> depth / interpret / fmt``;
it never imports torch. ``crasp.compiler``, ``crasp.languages`` and ``crasp.train`` build on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from crasp.check import check
from crasp.depth import analyze, depth_of
from crasp.errors import CraspError, InputError, ProgramError
from crasp.fmt import format_program
from crasp.interpret import Evaluation, evaluate
from crasp.parse import parse
from crasp.syntax import Program

__all__ = [
    "CraspError", "Evaluation", "InputError", "Program", "ProgramError", "analyze", "depth_of",
    "evaluate", "format_program", "load_program", "parse_program",
]

PROGRAM_SUFFIXES = (".crasp", ".cr")


def parse_program(text: str, filename: str = "<string>",
                  extra_alphabet: Sequence[str] = ()) -> Program:
    """Parse and type-check C-RASP source text."""
    return check(parse(text, filename), tuple(extra_alphabet))


def load_program(path: str | Path, extra_alphabet: Sequence[str] = ()) -> Program:
    """Read, parse and type-check a C-RASP program file (``.crasp`` or ``.cr``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CraspError(f"cannot read program {str(path)!r}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CraspError(f"program {str(path)!r} is not UTF-8 text") from None
    return parse_program(text, str(path), extra_alphabet)
