"""Pass: a yes answer -> whether it says anything (*vacuity*).

A question holds *vacuously* when the program its violations need accepts no string: its
*antecedent* (``antecedent``). Asked of the strings a domain D accepts
(``crasp.verify.questions``), every violation counts only where D holds, so a D that holds
nowhere makes every question hold, and ``--unbounded`` then proves it; PROG includes OTHER
whenever OTHER accepts nothing (within D, if any); and PROG is prefix-closed whenever it
accepts nothing. That is what a program written with a misspelt token, or asked over an
``--alphabet`` that leaves out the tokens it needs, gives; model checkers warn of the same
thing.

Which strings count: the nonempty ones. A yes on the empty string alone says nothing of any
string with a token in it (and a prediction task is specified on nonempty prefixes only,
so the prefixes programs crasp ships reject the empty string). So the check asks whether
``A && #true >= 1`` (A the antecedent at a token position: ``#true`` is i + 1 >= 1 there and
0 at BOS) is empty (within D, for includes and prefix-closed), as the question was asked:
up to the question's length N, and with ``--unbounded`` at every length, within
``VACUITY_SECONDS`` (never past ``--timeout``):

* a string it accepts is a *witness*: the yes says something (the shortest such string is
  reported, as every search reports the shortest);
* none up to N (or, proved, none at all) makes the yes *vacuous*, and the report says so,
  with whether the antecedent accepts the empty string;
* otherwise (the time ran out) it is *unknown*.

Only yes answers are checked: a counterexample is a string the antecedent accepts, so it is
itself a witness. Equivalence, emptiness and universality without a domain have no
antecedent: nothing makes them hold trivially.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import interpret, syntax
from crasp.verify.questions import Question, answer_and, shown_string

VACUITY_SECONDS = 10.0
"""At most this long (and never beyond the question's own --timeout) the verifier looks for a
nonempty string the domain accepts, after a yes."""
NONEMPTY_NAME = "\0nonempty"
"""The name of the nonempty form's answer (no program's name can hold a NUL)."""


@dataclass(frozen=True)
class Vacuity:
    """Whether a yes is vacuous: ``program`` names the antecedent; ``status`` is ``witnessed``
    (it accepts ``witness``, a nonempty string), ``vacuous`` or ``unknown``; ``detail`` says
    which strings it accepts, or why that is unknown (read after its name: "A accepts ...")."""

    program: str
    status: str
    detail: str
    witness: tuple[str, ...] | None = None


def antecedent(question) -> tuple[syntax.Program, syntax.Program | None] | None:
    """(the program a violation of ``question`` needs to accept a string, the domain it is
    asked within), or None where nothing makes the question hold trivially (the module's
    derivation)."""
    if question.kind == "includes":
        return question.programs[1], question.domain
    if question.kind == "prefix-closed":
        return question.programs[0], question.domain
    return (question.domain, None) if question.domain is not None else None


def nonempty_form(program: syntax.Program) -> syntax.Program:
    """``program`` answering ``A && #true >= 1`` (A its answer): it holds at a token position
    (accepts a nonempty string). Empty iff ``program`` accepts no nonempty string."""
    at_a_token = syntax.Compare(">=", syntax.Count(syntax.BoolConst(True)), syntax.IntConst(1))
    return answer_and(program, at_a_token, NONEMPTY_NAME, "nonempty")


def accepts_empty_string(program: syntax.Program) -> bool:
    """``program``'s answer at BOS: whether it accepts the empty string."""
    return bool(interpret.evaluate(program, [[]]).columns[program.answer.name][0, 0])


def decide_vacuity(program: syntax.Program, alphabet: tuple[str, ...], max_length: int,
                   unbounded: bool, seconds: float,
                   within: syntax.Program | None = None) -> Vacuity:
    """Whether ``program`` accepts a nonempty string over ``alphabet`` (that ``within``
    accepts, if given; of length <= ``max_length``, or with ``unbounded`` of any length),
    within ``seconds`` (the module's derivation)."""
    from crasp.verify.driver import decide
    verdict = decide(Question("empty", (nonempty_form(program),), ("PROG",), within),
                     max_length, alphabet, unbounded=unbounded, timeout=seconds, deepen=0,
                     check_vacuity=False)

    def vacuity(status: str, detail: str, witness: tuple[str, ...] | None = None) -> Vacuity:
        return Vacuity(program.filename, status, detail, witness)

    where = f" that {within.filename} accepts" if within is not None else ""
    if verdict.outcome == "counterexample":
        tokens = verdict.counterexample.tokens
        return vacuity("witnessed", f"accepts {shown_string(tokens, alphabet)} (length "
                                    f"{len(tokens)}){where}, the shortest such string", tokens)
    both = [program] + ([within] if within is not None else [])
    empty = ("only the empty string" if all(map(accepts_empty_string, both))
             else "not even the empty string")   # of length <= N, or of any length
    if verdict.outcome == "proved":
        return vacuity("vacuous", f"accepts no nonempty string{where} of any length, {empty}")
    if verdict.outcome == "holds":
        return vacuity("vacuous", f"accepts no nonempty string{where} of length ≤ "
                                  f"{max_length}, {empty}")
    why = (f"not decided within {seconds:.3g} s (at most {VACUITY_SECONDS:g} s go to it, never "
           "past --timeout)" if verdict.timed_out else verdict.reason)
    known = verdict.decided_length
    if known is not None and known >= max_length:
        return vacuity("unknown", f"accepts no nonempty string{where} of length ≤ {known}, "
                                  f"{empty}; longer ones: {why}")
    return vacuity("unknown", f"accepts a nonempty string{where} or not: {why}")
