"""Pass: violating string -> Counterexample. Re-runs a string found by a search (the solver's
or the enumeration's) through the interpreter, which confirms the violation independently of
the search, and says where the programs part.

"The definitions that first differ": on the counterexample string, each definition of a
program has a sequence of values (BOS and every token position). A definition whose sequence
equals the sequence of some definition of the other program (of the same type) computes the
same thing there, whatever its name; the *first* definition, in program order, that has no
such twin is where that program starts to compute something the other does not. It is
reported for each program, with its values. A constant Boolean sequence (false, or true, at
every position) counts as computed by both, since either can write it as a literal, and a
definition that is a literal (``x = false``, ``k = 3``) is never the answer: a decompiled
program's ``L1_not_h0 = false`` or a Boolean that holds nowhere on this string would
otherwise be named before the definition where the programs really part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crasp import interpret, syntax
from crasp.errors import CraspError
from crasp.verify.questions import Question


@dataclass(frozen=True)
class Difference:
    """The first definition of program ``label`` that no definition of the other computes on
    the counterexample, with its values at BOS and at each token."""

    label: str
    name: str
    line: int | None
    values: tuple

    def as_dict(self) -> dict:
        return {"program": self.label, "name": self.name, "line": self.line,
                "values": list(self.values)}


@dataclass(frozen=True)
class Counterexample:
    tokens: tuple[str, ...]
    position: int                # the last token's index; -1 (BOS) for the empty string
    answers: tuple[bool, ...]    # each program's answer there
    differences: tuple[Difference, ...]

    def as_dict(self, shown: str) -> dict:
        return {"tokens": list(self.tokens), "string": shown, "length": len(self.tokens),
                "position": self.position, "answers": list(self.answers),
                "first_differences": [d.as_dict() for d in self.differences]}


def _plain(value) -> bool | int:
    return bool(value) if isinstance(value, (bool, np.bool_)) else int(value)


def confirm(question: Question, tokens: tuple[str, ...]) -> Counterexample:
    """The counterexample on ``tokens``, after checking with the interpreter that the question
    is violated at its last position (a ``CraspError`` if not: a search reported a string
    that the interpreter does not confirm, which would be a bug in crasp)."""
    evaluations = [interpret.evaluate(program, [list(tokens)])
                   for program in question.evaluated]
    length = len(tokens)
    answers = [np.array([bool(e.columns[p.answer.name][0, length])])
               for e, p in zip(evaluations, question.evaluated)]
    if not question.violation(answers)[0]:
        raise CraspError(f"internal error: the string {list(tokens)} found by the search does "
                         "not violate the question when the interpreter runs it; please report")
    # (type, values): a Boolean's True must not pass for a count's 1
    values = [{d.name: (d.type, tuple(_plain(v) for v in e.columns[d.name][0, :length + 1]))
               for d in p.definitions} for e, p in zip(evaluations, question.programs)]
    differences = []
    if len(question.programs) == 2:
        literals = {(syntax.BOOL, (constant,) * (length + 1)) for constant in (False, True)}
        for mine, theirs, program, label in zip(values, values[::-1], question.programs,
                                                question.labels):
            twins = set(theirs.values()) | literals
            first = next((d for d in program.definitions
                          if mine[d.name] not in twins and not _is_literal(d.expr)), None)
            if first is not None:
                differences.append(Difference(label, first.name,
                                              first.span.line if first.span else None,
                                              mine[first.name][1]))
    return Counterexample(tokens, length - 1, tuple(bool(a[0]) for a in answers),
                          tuple(differences))


def _is_literal(expr: syntax.Expr) -> bool:
    return isinstance(expr, (syntax.BoolConst, syntax.IntConst))


def is_violated(question: Question, tokens: tuple[str, ...]) -> bool:
    """Whether the interpreter finds the question violated at the last position of
    ``tokens``."""
    answers = [np.array([bool(interpret.evaluate(p, [list(tokens)]).accept[0])])
               for p in question.evaluated]
    return bool(question.violation(answers)[0])
