"""The questions the verifier answers, each as a *violation* of the programs' answers at one
position, and the alphabet the strings are drawn from.

Every question is "does the violation hold at no position of any string?":

* ``equivalent`` (A, B): A's answer differs from B's.
* ``includes`` (PROG, OTHER): OTHER answers True where PROG answers False (PROG's language
  includes OTHER's when this never happens).
* ``empty`` (PROG): PROG answers True.
* ``universal`` (PROG): PROG answers False.
* ``prefix-closed`` (PROG): PROG answers True at a token position after one where it answered
  False (it accepts a string but not one of its nonempty prefixes). That is no violation of
  PROG's answer alone: ``searched_form`` asks it as ``empty`` of the program that answers
  exactly there (``crasp.verify.closure.closure_violation``).

With a *domain* (a third program, D), each violation counts only where D answers True: the
question is asked of the strings D accepts. D's answer at position i is its acceptance of the
prefix of length i + 1, so "no violation at a position where D holds" is "no violation on any
string D accepts", with the same per-position reading as below. A prediction task is specified
only on the prefixes of a language's strings (Knee-Deep, def:prediction_task); with those
prefixes as D (``L<k>_prefixes.crasp`` among the programs crasp ships), a program is compared
with another only where the task says what to answer.

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

QUESTIONS = ("equivalent", "includes", "empty", "universal", "prefix-closed")

DOMAIN_LABEL = "DOMAIN"
FOREIGN_CANDIDATES = ("?", "_", "~", "$", "%", "other")


@dataclass(frozen=True)
class Question:
    """``kind`` (one of QUESTIONS) about ``programs`` (two for equivalent and includes), asked
    of the strings ``domain`` accepts (None: of every string)."""

    kind: str
    programs: tuple[syntax.Program, ...]
    labels: tuple[str, ...]
    domain: syntax.Program | None = None
    prefix_closed: bool = False
    """The domain is prefix-closed (``crasp.verify.closure``): the searches assume it at every
    position they unroll. ``driver.decide`` sets it from the domain, whatever it was given."""

    @property
    def assumed_domain(self) -> syntax.Program | None:
        """The domain the searches may assume everywhere (and sample within), if any."""
        return self.domain if self.prefix_closed else None

    @property
    def evaluated(self) -> tuple[syntax.Program, ...]:
        """Every program a search runs: ``programs``, then the domain if there is one."""
        return self.programs + ((self.domain,) if self.domain is not None else ())

    @property
    def evaluated_labels(self) -> tuple[str, ...]:
        return self.labels + ((DOMAIN_LABEL,) if self.domain is not None else ())

    def violation(self, answers: list) -> object:
        """The violation over the answers of ``evaluated`` at one position, for z3 terms or
        for numpy Boolean arrays alike (only ``^ & ~`` are used)."""
        violated = _VIOLATIONS[self.kind](answers[:len(self.programs)])
        return violated & answers[-1] if self.domain is not None else violated


_VIOLATIONS: dict[str, Callable[[list], object]] = {
    "equivalent": lambda answers: answers[0] ^ answers[1],
    "includes": lambda answers: answers[1] & ~answers[0],
    "empty": lambda answers: answers[0],
    "universal": lambda answers: ~answers[0],
}


def searched_form(question: Question) -> Question:
    """The question the searches answer: ``question`` itself, or for ``prefix-closed``, the
    emptiness of its program's closure violation (the module docstring)."""
    if question.kind != "prefix-closed":
        return question
    from crasp.verify.closure import closure_violation
    return Question("empty", (closure_violation(question.programs[0]),), question.labels,
                    question.domain)


def answer_and(program: syntax.Program, condition: syntax.Expr, name: str,
               label: str) -> syntax.Program:
    """``program`` answering ``A && condition`` (A its answer, which ``condition`` may read):
    one more definition, ``name`` (a NUL in it keeps it apart from every program's names),
    the alphabet kept, the file shown as ``FILE (label)``. The searches ask questions of such
    derived programs (``closure.closure_violation``, ``vacuity.nonempty_form``)."""
    conjunction = syntax.And(syntax.Ref(program.answer.name), condition)
    return syntax.Program(program.definitions + (
        syntax.Definition(name, conjunction, syntax.BOOL),), program.alphabet,
        declared_alphabet=True, filename=f"{program.filename} ({label})")


def mentioned_tokens(programs: tuple[syntax.Program, ...]) -> tuple[str, ...]:
    """The union of the programs' alphabets (the tokens they tell apart), in order of first
    appearance."""
    return tuple(dict.fromkeys(token for program in programs for token in program.alphabet))


def default_alphabet(programs: tuple[syntax.Program, ...]) -> tuple[tuple[str, ...], str]:
    """``mentioned_tokens`` plus one foreign token (returned second): the first of
    ``FOREIGN_CANDIDATES`` that none of them uses."""
    tokens = mentioned_tokens(programs)
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
