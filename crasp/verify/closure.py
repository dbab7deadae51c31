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

D is prefix-closed when its answer is closing. Anything else (a disjunction, a guarded count,
a positional predicate, a count compared with a count) is not recognized, and the searches
then assume D nowhere but where a violation needs it: still exact, only weaker.
"""

from __future__ import annotations

import numpy as np

from crasp import interpret, syntax

_CLOSING_BELOW = {"<", "<="}     # S op c
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def is_prefix_closed(program: syntax.Program) -> bool:
    """Whether ``program``'s answer is closing (the module's derivation): D held at every
    token position before any token position where it holds."""
    definitions = {d.name: d.expr for d in program.definitions}
    return _closing(program.answer.expr, definitions)


def _closing(expr, definitions) -> bool:
    if isinstance(expr, syntax.Ref):
        return _closing(definitions[expr.name], definitions)
    if isinstance(expr, syntax.And):
        return _closing(expr.left, definitions) and _closing(expr.right, definitions)
    if _token_true(expr, definitions):
        return True
    if isinstance(expr, syntax.Not):
        inner = _sum_against_constant(expr.operand, definitions, _monotone)
        return inner is not None and inner[0] in (">=", ">")
    found = _sum_against_constant(expr, definitions, _monotone)
    return found is not None and (found[0] in _CLOSING_BELOW or found == ("==", 0))


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
