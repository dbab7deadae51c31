"""The questions the verifier answers, each as a *violation* of the programs' answers at one
position, and the alphabet the strings are drawn from.

Every question is "does the violation hold at no position of any string?":

* ``equivalent`` (A, B): A's answer differs from B's.
* ``includes`` (PROG, OTHER): OTHER answers True where PROG answers False (PROG's language
  includes OTHER's when this never happens).
* ``empty`` (PROG): PROG answers True.
* ``universal`` (PROG): PROG answers False.

Why positions and acceptance agree: a program's value at position i depends only on the tokens
up to i (every count is a prefix count), and a string's answer is the answer at its last
position (at BOS for the empty string; docs/language.md). So the answers at the positions of a
string are the acceptances of its prefixes, "no violation at any position of any string of
length <= N" is "no violation on the acceptance of any string of length <= N", and the
shortest counterexample string violates at its last position.

The alphabet: by default the union of the tokens the programs can tell apart (their
alphabets) plus one *foreign* token that none of them mentions. Every token outside a program's
alphabet fails all its token tests, so one foreign token stands for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from crasp import syntax
from crasp.errors import CraspError

QUESTIONS = ("equivalent", "includes", "empty", "universal")

FOREIGN_CANDIDATES = ("?", "_", "~", "$", "%", "other")


@dataclass(frozen=True)
class Question:
    """``kind`` (one of QUESTIONS) about ``programs`` (two for equivalent and includes)."""

    kind: str
    programs: tuple[syntax.Program, ...]
    labels: tuple[str, ...]

    def violation(self, answers: list) -> object:
        """The violation over the programs' answers at one position, for z3 terms or for
        numpy Boolean arrays alike (only ``^ & ~`` are used)."""
        return _VIOLATIONS[self.kind](answers)


_VIOLATIONS: dict[str, Callable[[list], object]] = {
    "equivalent": lambda answers: answers[0] ^ answers[1],
    "includes": lambda answers: answers[1] & ~answers[0],
    "empty": lambda answers: answers[0],
    "universal": lambda answers: ~answers[0],
}


def default_alphabet(programs: tuple[syntax.Program, ...]) -> tuple[tuple[str, ...], str]:
    """The union of the programs' alphabets, in order of first appearance, plus one foreign
    token (returned second): the first of ``FOREIGN_CANDIDATES`` that none of them uses."""
    tokens = dict.fromkeys(token for program in programs for token in program.alphabet)
    foreign = next((c for c in FOREIGN_CANDIDATES if c not in tokens), None)
    suffix = 2
    while foreign is None:
        foreign = f"other{suffix}" if f"other{suffix}" not in tokens else None
        suffix += 1
    return tuple(tokens) + (foreign,), foreign


def chosen_alphabet(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """An alphabet given with --alphabet: at least one token, none twice."""
    if not tokens:
        raise CraspError("--alphabet: give at least one token")
    repeated = sorted({token for token in tokens if tokens.count(token) > 1})
    if repeated:
        raise CraspError(f"--alphabet: token {repeated[0]!r} is given twice")
    return tokens


def shown_string(tokens: list[str] | tuple[str, ...], alphabet: tuple[str, ...]) -> str:
    """A string as ``crasp run`` reads it back: characters run together when every token of
    the alphabet is one character, tokens separated by spaces otherwise; "" when empty."""
    if not tokens:
        return '""'
    if all(len(token) == 1 for token in alphabet):
        return "".join(tokens)
    return " ".join(tokens)
