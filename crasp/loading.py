"""Loading a program named on a command line: every ``crasp`` command that takes PROG uses this.

PROG is any file name, or ``-`` for standard input. The program is parsed and type-checked in
the chosen dialect; in the conventional one, a warning goes to stderr for each definition that
Hahn's interpreter reads differently (see ``crasp.hahn``).
"""

from __future__ import annotations

import sys
from typing import Sequence

import click

import crasp
from crasp.check import DIALECTS
from crasp.errors import CraspError
from crasp.hahn import precedence_warnings
from crasp.parse import undecodable_program

STDIN_NAME = "-"

dialect_option = click.option(
    "--dialect", type=click.Choice(DIALECTS, case_sensitive=False), default="crasp",
    show_default=True,
    help="How to read PROG: crasp (conventional precedence) or hahn (exactly as Hahn's "
         "interpreter m-hahn/c-rasp reads .cr files: his precedence, redefinitions allowed).")


def load_program_argument(path: str, extra_alphabet: Sequence[str] = (),
                          dialect: str = "crasp", count_answer: bool = False) -> crasp.Program:
    """The program PROG names (``count_answer``: see ``crasp.parse_program``)."""
    if path == STDIN_NAME:
        program = crasp.parse_program(_standard_input_text(), "<stdin>", extra_alphabet, dialect,
                                      count_answer)
    else:
        program = crasp.load_program(path, extra_alphabet, dialect, count_answer)
    if dialect == "crasp":
        for warning in precedence_warnings(program):
            print(warning.render(program.filename), file=sys.stderr)
    return program


def _standard_input_text() -> str:
    """The program on standard input, read as a program file is: UTF-8 bytes, at most
    ``crasp.MAX_PROGRAM_BYTES`` of them (so ``- < /dev/zero`` stops), whatever the locale."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise CraspError("standard input is closed: there is no program to read from -")
    data = stream.read(crasp.MAX_PROGRAM_BYTES + 1)
    if len(data) > crasp.MAX_PROGRAM_BYTES:
        raise CraspError(f"the program on standard input is longer than "
                         f"{crasp.MAX_PROGRAM_BYTES:,} bytes, the limit on a program")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise undecodable_program(data, error, "<stdin>") from None


def split_tokens(values: Sequence[str], option: str = "--alphabet") -> tuple[str, ...]:
    """Tokens given as (possibly several, space-separated) option values, each UTF-8 text."""
    return tuple(token for value in utf8_arguments(values, option) for token in value.split())


def utf8_arguments(values: Sequence[str], what: str) -> Sequence[str]:
    """``values`` (command-line arguments), refused unless each is UTF-8 text: a byte that is
    not becomes a lone surrogate in Python's reading of the command line, which no token,
    trace or JSON output can hold."""
    for number, value in enumerate(values, 1):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise CraspError(f"{what}: argument {number} is not UTF-8 text (character "
                             f"{error.start + 1})") from None
    return values
