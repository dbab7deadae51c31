"""Pass: domain program -> whether it is *prefix-closed*, and sample strings cut to it.

A domain D (``crasp.verify.questions``) is prefix-closed when, on every string, D holding at a
token position means D held at every token position before it (BOS aside): the set of
nonempty strings D accepts is closed under nonempty prefixes. The prefixes of a language's
strings are (``crasp/languages/programs.py``, ``prefixes_program``).

Why it matters. A question restricted to D is violated only at a position where D holds; when
D is prefix-closed, D then held at every earlier token position too, so every search may
assume D at every position it unrolls (``bounded``, ``induction``), and the relations and
pairs the induction is strengthened with need to hold only on D's strings. That is what
proves a prediction program equal to its language on the task's strings: on a string that
starts with a, a b always follows an a, so L4's ``#("a" && #("b" && #"a" >= 1) >= 1)`` equals
the prediction program's ``#("a" && #"b" >= 1)``, which fails on ``b a``; no relation that
holds on every string carries the induction there.

Derivation (sufficient, syntactic). Call a Boolean expression *closing* when, false at a token
position, it is false at every later one; and *token-true* when it holds at every token
position. A count ``#P`` (unguarded) never decreases from one position to the next, and
neither does a sum of such counts with positive coefficients, so with a constant c

* ``S < c``, ``S <= c`` and ``S == 0`` (S such a sum; either side may be the constant, the
  comparison read the other way round), and ``!(S >= c)``, ``!(S > c)``, are closing: once S
  has passed the bound it stays past it;
* ``#true >= c`` and ``#true > c - 1`` with c <= 1 are token-true (at token position i,
  ``#true`` is i + 1 >= 1);
* a token-true expression is closing (it is false at no token position), a conjunction of
  closing expressions is closing (false at a token position, one of its conjuncts is, and
  stays so), and a name is what its definition is.

* a disjunction of closing expressions is closing too (false at a token position, both
  disjuncts are, and stay so), and negations are pushed down to the comparisons (De Morgan:
  ``!(A || B)`` is ``!A && !B``; ``!(S >= c)`` is ``S < c``; ``!(S != 0)`` is ``S == 0``); a
  token-true expression negated is false at every token position, so closing as well.

D is prefix-closed when its answer is closing. That is the *recognized* case, free of cost.

Derivation (exact, by the verifier). D is prefix-closed iff, at no token position of any
string, D holds while it failed at an earlier token position; counts never include BOS, so
that is "V = D && #(!D) >= 1 is empty" (``closure_violation``; at the position itself D holds,
so ``#(!D)`` counts earlier positions only). When the form is not recognized (a guarded count,
a positional predicate, a count compared with a count, a count bounded from below), an
unbounded question asks the driver to *prove* V empty over the question's own alphabet (the
strings its searches unroll), within ``CLOSURE_SECONDS``: proved, D is assumed as if
recognized; a counterexample *refutes* closure (D accepts the string but not one of its
prefixes, which the report names); otherwise D stays *unknown*. A domain that is not assumed
is still exact: the searches then filter by D only where a violation needs it, which is only
weaker. A bounded question leaves an unrecognized domain *unchecked*: assuming it changes no
bounded answer, only how the solver gets there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crasp import interpret, syntax
from crasp.verify.questions import DOMAIN_LABEL, Question, answer_and, shown_string

_CLOSING_BELOW = {"<", "<="}     # S op c
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


CLOSURE_SECONDS = 30.0
"""At most this long (and never beyond the question's own --timeout) the verifier tries to
prove an unrecognized domain prefix-closed before the question itself is searched."""
CLOSURE_NAME = "\0closure"
"""The name of the closure violation's answer (no program's name can hold a NUL)."""


@dataclass(frozen=True)
class Closure:
    """Whether a domain is prefix-closed: ``status`` is ``recognized`` (by its form),
    ``proved`` (by the verifier), ``refuted``, ``unknown`` or ``unchecked`` (a bounded
    question); ``detail`` says how it was proved, which strings refute it, or why it is
    unknown."""

    status: str
    detail: str | None = None

    @property
    def assumed(self) -> bool:
        """Whether the searches may assume the domain at every position they unroll."""
        return self.status in ("recognized", "proved")


def decide_closure(domain: syntax.Program, alphabet: tuple[str, ...], max_length: int,
                   prove: bool, seconds: float) -> Closure:
    """How ``domain`` is known to be prefix-closed over ``alphabet``: by its form, else (with
    ``prove``) by the verifier, checking strings of length <= ``max_length`` before the
    induction, within ``seconds`` (the module's derivation)."""
    if is_prefix_closed(domain):
        return Closure("recognized")
    if not prove:
        return Closure("unchecked")
    from crasp.verify.driver import MAX_INDUCTION, decide
    verdict = decide(Question("prefix-closed", (domain,), (DOMAIN_LABEL,)),
                     min(max_length, MAX_INDUCTION), alphabet, unbounded=True, timeout=seconds,
                     deepen=0, check_vacuity=False)
    if verdict.outcome == "proved":
        return Closure("proved", f"k-induction with k = {verdict.induction.k}, "
                                 f"{verdict.seconds:.2f} s")
    if verdict.outcome == "counterexample":
        tokens = verdict.counterexample.tokens
        prefix = rejected_prefix(domain, tokens)
        return Closure("refuted", f"it accepts {shown_string(tokens, alphabet)} but not its "
                                  f"prefix {shown_string(prefix, alphabet)}")
    if verdict.timed_out:   # its own share ran out, not --timeout as such
        return Closure("unknown", f"neither proved nor refuted within {seconds:.3g} s: at "
                                  f"most {CLOSURE_SECONDS:g} s go to it, never past --timeout")
    return Closure("unknown", verdict.reason)


def rejected_prefix(program: syntax.Program, tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The shortest nonempty prefix of ``tokens`` that ``program`` rejects (the tokens of a
    closure violation: the program accepts them, so such a prefix is a proper one)."""
    holds = np.asarray(interpret.evaluate(program, [list(tokens)]).output[0, :len(tokens)],
                       dtype=bool)
    return tuple(tokens[:int(np.argmin(holds)) + 1])


def closure_violation(domain: syntax.Program) -> syntax.Program:
    """``domain`` answering ``D && #(!D) >= 1`` (D its answer): D holds at a token position
    after one where it failed. Empty iff ``domain`` is prefix-closed."""
    failed = syntax.Not(syntax.Ref(domain.answer.name))
    failed_before = syntax.Compare(">=", syntax.Count(failed), syntax.IntConst(1))
    return answer_and(domain, failed_before, CLOSURE_NAME, "closure")


def is_prefix_closed(program: syntax.Program) -> bool:
    """Whether ``program``'s answer is closing (the module's derivation): D held at every
    token position before any token position where it holds."""
    definitions = {d.name: d.expr for d in program.definitions}
    return _closing(program.answer.expr, definitions)


def _closing(expr, definitions, negated: bool = False) -> bool:
    """Whether ``expr`` (``!expr`` when ``negated``) is closing: negations are pushed down to
    the comparisons (De Morgan), where they turn the operator round."""
    if isinstance(expr, syntax.Ref):
        return _closing(definitions[expr.name], definitions, negated)
    if isinstance(expr, syntax.Not):
        return _closing(expr.operand, definitions, not negated)
    if isinstance(expr, (syntax.And, syntax.Or)):
        return all(_closing(side, definitions, negated) for side in (expr.left, expr.right))
    if isinstance(expr, syntax.BoolConst) or _token_true(expr, definitions):
        return True   # true at every token position, or (negated) at none: both closing
    found = _sum_against_constant(expr, definitions, _monotone)
    if found is None:
        return False
    op, constant = (_NEGATED[found[0]], found[1]) if negated else found
    return op in _CLOSING_BELOW or (op, constant) == ("==", 0)


def _token_true(expr, definitions) -> bool:
    if isinstance(expr, syntax.Ref):
        return _token_true(definitions[expr.name], definitions)
    found = _sum_against_constant(expr, definitions, _count_of_true)
    return found is not None and ((found[0] == ">=" and found[1] <= 1) or
                                  (found[0] == ">" and found[1] <= 0))


def _sum_against_constant(expr, definitions, is_sum):
    """(op, c) when ``expr`` is ``S op c`` or ``c op S`` (read as ``S op' c``), for S what
    ``is_sum(S, definitions)`` accepts; None otherwise."""
    if not isinstance(expr, syntax.Compare):
        return None
    for count, constant, op in ((expr.left, expr.right, expr.op),
                                (expr.right, expr.left, _MIRRORED[expr.op])):
        value = _constant(constant, definitions)
        if value is not None and is_sum(count, definitions):
            return op, value
    return None


def _constant(expr, definitions) -> int | None:
    if isinstance(expr, syntax.Ref):
        return _constant(definitions[expr.name], definitions)
    return expr.value if isinstance(expr, syntax.IntConst) else None


def _monotone(expr, definitions) -> bool:
    """A sum of unguarded counts with positive coefficients (non-decreasing over positions)."""
    if isinstance(expr, syntax.Ref):
        return _monotone(definitions[expr.name], definitions)
    if isinstance(expr, syntax.Count):
        return expr.relation is None
    if isinstance(expr, syntax.Add):
        return all(_monotone(side, definitions) for side in (expr.left, expr.right))
    if isinstance(expr, syntax.Scale):
        return expr.factor > 0 and _monotone(expr.operand, definitions)
    return False


def _count_of_true(expr, definitions) -> bool:
    """``#true`` (unguarded): i + 1 at token position i."""
    if isinstance(expr, syntax.Ref):
        return _count_of_true(definitions[expr.name], definitions)
    return (isinstance(expr, syntax.Count) and expr.relation is None
            and isinstance(expr.body, syntax.BoolConst) and expr.body.value is True)


def cut_to_domain(strings: list[list[str]], domain: syntax.Program) -> list[list[str]]:
    """Each string cut before the first token position where ``domain`` does not hold (the
    longest prefix inside a prefix-closed domain), each result once, in order. Simulation's
    guesses (pairs, relations) then hold on the domain's strings, where the searches assume
    it."""
    outputs = interpret.evaluate(domain, strings).output   # token positions only
    kept: dict[tuple[str, ...], None] = {}
    for row, string in enumerate(strings):
        holds = np.asarray(outputs[row, :len(string)], dtype=bool)
        end = int(np.argmin(holds)) if not holds.all() else len(string)
        kept.setdefault(tuple(string[:end]), None)
    return [list(string) for string in kept]
