"""Loading a program named on a command line: every ``crasp`` command that takes PROG uses this.

It checks the file suffix, parses and type-checks the program, and prints to stderr a warning
for each expression that Hahn's interpreter would read differently (see ``crasp.hahn``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import crasp
from crasp.errors import CraspError
from crasp.hahn import precedence_warnings


def load_program_argument(path: str, extra_alphabet: Sequence[str] = ()) -> crasp.Program:
    if Path(path).suffix not in crasp.PROGRAM_SUFFIXES:
        raise CraspError(f"{path!r} is not a C-RASP program (expected a .crasp or .cr file)")
    program = crasp.load_program(path, extra_alphabet)
    for warning in precedence_warnings(program):
        print(warning.render(program.filename), file=sys.stderr)
    return program


def split_tokens(values: Sequence[str]) -> tuple[str, ...]:
    """Tokens given as (possibly several, space-separated) option values."""
    return tuple(token for value in values for token in value.split())
