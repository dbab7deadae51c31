"""Driver: Question -> Verdict. Picks the search (solver or enumeration), runs the bounded
check, and with ``unbounded`` the induction (``crasp.verify.induction``).

* ``bounded.first_violation`` (z3) or ``enumeration.first_violation`` (the interpreter on every
  string): the shortest string of length <= N that violates the question. ``method="auto"``
  enumerates when there are at most ``ENUMERATION_LIMIT`` strings of length N (enumeration
  is then as fast; benchmarks/bench_verify.py measures both), and asks z3 otherwise.
* ``explain.confirm``: the string re-run by the interpreter, and the definitions that differ.
* ``induction.prove`` (only with ``unbounded``): steps of depth 0..min(N, ``MAX_INDUCTION``).

The outcome is ``holds`` (no violation up to N), ``counterexample`` (with the shortest one
below N, or a confirmed longer one found by the induction), ``proved`` (every length) or
``unknown`` (the bounded check holds, the induction found neither a proof nor a real
counterexample). A yes is a proof, a no has a counterexample the interpreter confirmed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from crasp.errors import CraspError
from crasp.verify import enumeration
from crasp.verify.explain import Counterexample, confirm
from crasp.verify.induction import InductionResult
from crasp.verify.questions import Question, chosen_alphabet, default_alphabet

METHODS = ("auto", "smt", "enumerate")
ENUMERATION_LIMIT = 200_000
"""auto enumerates when the strings of length N number at most this: over three letters,
enumeration beats z3 up to about N = 11 (benchmarks/bench_verify.py: at N = 10 it takes
0.3-0.8x z3's time), over four z3 is faster from N = 10 on (3.5-20x)."""
MAX_INDUCTION = 8
"""The deepest induction step ``unbounded`` tries (at most N)."""
SHORTEST_SEARCH_LIMIT = 64
"""A counterexample found by the induction (longer than N) is shrunk to a shortest one by the
bounded search when it has at most this many tokens."""
MAX_ENUMERATED_STRINGS = 50_000_000
"""--method enumerate refuses more strings than this (it would run for many minutes)."""


@dataclass(frozen=True)
class Verdict:
    question: Question
    alphabet: tuple[str, ...]
    foreign: str | None          # the token standing for every unmentioned one (default alphabet)
    max_length: int
    method: str                  # "smt" or "enumeration"
    outcome: str                 # holds, counterexample, proved, unknown
    counterexample: Counterexample | None
    shortest: bool               # the counterexample is a shortest one
    induction: InductionResult | None
    seconds: float


def decide(question: Question, max_length: int = 20, alphabet: tuple[str, ...] | None = None,
           method: str = "auto", unbounded: bool = False) -> Verdict:
    """Answer ``question`` for every string of length <= ``max_length`` over ``alphabet``
    (default: the programs' tokens plus one foreign token), and with ``unbounded`` for every
    length."""
    started = time.perf_counter()
    if method not in METHODS:
        raise CraspError(f"unknown method {method!r} (expected one of {', '.join(METHODS)})")
    foreign = None
    if alphabet is not None:
        alphabet = chosen_alphabet(tuple(alphabet))
    else:
        alphabet, foreign = default_alphabet(question.programs)
    strings = enumeration.strings_of_length(len(alphabet), max_length)
    if method == "auto":
        method = "enumerate" if strings <= ENUMERATION_LIMIT else "smt"
    if method == "enumerate":
        if strings > MAX_ENUMERATED_STRINGS:
            raise CraspError(f"--method enumerate: {len(alphabet)}^{max_length} strings is too "
                             f"many to run (more than {MAX_ENUMERATED_STRINGS:,}); use "
                             "--method smt or a smaller --max-length")
        search = enumeration.first_violation
    else:
        from crasp.verify import bounded
        search = bounded.first_violation
    violation = search(question, alphabet, max_length)
    counterexample = confirm(question, violation.tokens) if violation else None
    outcome = "counterexample" if counterexample else "holds"
    shortest, induction = counterexample is not None, None
    if unbounded and counterexample is None:
        from crasp.verify import bounded, induction as induction_pass
        depth = min(max_length, MAX_INDUCTION)
        pairs = bounded.proved_pairs(question, alphabet, depth)
        induction = induction_pass.prove(question, alphabet, depth, pairs)
        outcome = "proved" if induction.proved else "unknown"
        if induction.counterexample is not None:
            outcome = "counterexample"
            longest = len(induction.counterexample)
            # the shortest lies between N and the one found: the solver finds it if not far
            found = bounded.first_violation(question, alphabet, longest) \
                if longest <= SHORTEST_SEARCH_LIMIT else None
            counterexample = confirm(question, found.tokens if found
                                     else induction.counterexample)
            shortest = found is not None
    return Verdict(question, alphabet, foreign, max_length,
                   "enumeration" if method == "enumerate" else "smt", outcome, counterexample,
                   shortest, induction, time.perf_counter() - started)
