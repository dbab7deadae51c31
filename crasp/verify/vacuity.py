"""Pass: a yes answer restricted to a domain -> whether it says anything (*vacuity*).

A question asked of the strings a domain D accepts (``crasp.verify.questions``) holds
*vacuously* when D accepts no string it could be violated on: every violation counts only
where D holds, so a D that holds nowhere makes every question hold, and ``--unbounded`` then
proves it. That is what a D written with a misspelt token, or asked over an ``--alphabet``
that leaves out the tokens D needs, gives; model checkers warn of the same thing.

Which strings count: the nonempty ones. A yes on the empty string alone says nothing of any
string with a token in it (and a prediction task is specified on nonempty prefixes only,
so the prefixes programs crasp ships reject the empty string). So the check asks whether
``D && #true >= 1`` (D at a token position: ``#true`` is i + 1 >= 1 there and 0 at BOS) is
empty, as the question was asked: up to the question's length N, and with
``--unbounded`` at every length, within ``VACUITY_SECONDS`` (never past ``--timeout``):

* a string it accepts is a *witness*: the yes says something (the shortest such string is
  reported, as every search reports the shortest);
* none up to N (or, proved, none at all) makes the yes *vacuous*, and the report says so,
  with whether D accepts the empty string;
* otherwise (the time ran out) it is *unknown*.

Only yes answers are checked: a counterexample lies inside D by construction, so it is
itself a witness.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import interpret, syntax

VACUITY_SECONDS = 10.0
"""At most this long (and never beyond the question's own --timeout) the verifier looks for a
nonempty string the domain accepts, after a yes."""
NONEMPTY_NAME = "\0nonempty"
"""The name of the nonempty-domain program's answer (no program's name can hold a NUL)."""


@dataclass(frozen=True)
class Vacuity:
    """Whether a yes restricted to a domain is vacuous: ``status`` is ``witnessed`` (the
    domain accepts ``witness``, a nonempty string), ``vacuous`` or ``unknown``; ``detail``
    says which strings the domain accepts, or why that is unknown (read after the domain's
    name: "D accepts ...")."""

    status: str
    detail: str
    witness: tuple[str, ...] | None = None


def nonempty_domain(domain: syntax.Program) -> syntax.Program:
    """``domain`` answering ``D && #true >= 1``: D holds at a token position (it accepts a
    nonempty string). Empty iff ``domain`` accepts no nonempty string."""
    answer = syntax.Ref(domain.answer.name)
    at_a_token = syntax.Compare(">=", syntax.Count(syntax.BoolConst(True)), syntax.IntConst(1))
    return syntax.Program(domain.definitions + (
        syntax.Definition(NONEMPTY_NAME, syntax.And(answer, at_a_token), syntax.BOOL),),
        domain.alphabet, declared_alphabet=True, filename=f"{domain.filename} (nonempty)")


def accepts_empty_string(program: syntax.Program) -> bool:
    """``program``'s answer at BOS: whether it accepts the empty string."""
    return bool(interpret.evaluate(program, [[]]).columns[program.answer.name][0, 0])


def decide_vacuity(domain: syntax.Program, alphabet: tuple[str, ...], max_length: int,
                   unbounded: bool, seconds: float) -> Vacuity:
    """Whether ``domain`` accepts a nonempty string over ``alphabet`` (of length <=
    ``max_length``, or with ``unbounded`` of any length), within ``seconds`` (the module's
    derivation)."""
    from crasp.verify.driver import decide
    from crasp.verify.questions import DOMAIN_LABEL, Question, shown_string
    verdict = decide(Question("empty", (nonempty_domain(domain),), (DOMAIN_LABEL,)),
                     max_length, alphabet, unbounded=unbounded, timeout=seconds, deepen=0)
    if verdict.outcome == "counterexample":
        tokens = verdict.counterexample.tokens
        return Vacuity("witnessed", f"accepts {shown_string(tokens, alphabet)} (length "
                                    f"{len(tokens)}), the shortest such string", tokens)
    empty = ("only the empty string" if accepts_empty_string(domain)
             else "not even the empty string")   # of length <= N, or of any length
    if verdict.outcome == "proved":
        return Vacuity("vacuous", f"accepts no nonempty string of any length, {empty}")
    if verdict.outcome == "holds":
        return Vacuity("vacuous", f"accepts no nonempty string of length ≤ {max_length}, "
                                  f"{empty}")
    why = (f"not decided within {seconds:.3g} s (at most {VACUITY_SECONDS:g} s go to it, never "
           "past --timeout)" if verdict.timed_out else verdict.reason)
    known = verdict.decided_length
    if known is not None and known >= max_length:
        return Vacuity("unknown", f"accepts no nonempty string of length ≤ {known}, "
                                  f"{empty}; longer ones: {why}")
    return Vacuity("unknown", f"accepts a nonempty string or not: {why}")
