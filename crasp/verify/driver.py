"""Driver: Question -> Verdict. Picks the search (solver or enumeration), runs the bounded
check, and with ``unbounded`` the induction (``crasp.verify.induction``).

* ``bounded.first_violation`` (z3) or ``enumeration.first_violation`` (the interpreter on every
  string): the shortest string of length <= N that violates the question. ``method="auto"``
  enumerates when there are at most ``ENUMERATION_LIMIT`` strings of length N (enumeration
  is then as fast; benchmarks/bench_verify.py measures both), and asks z3 otherwise, after
  enumerating the short lengths (``PREFIX_STRINGS``).
* ``explain.confirm``: the string re-run by the interpreter, and the definitions that differ.
* ``induction.prove`` (only with ``unbounded``): steps of depth 0..min(N, ``MAX_INDUCTION``),
  strengthened by ``bounded.proved_pairs`` (after z3's search, with the relations between
  counts that the search proved: ``bounded.search``, ``lemmas.Held``); when it neither
  proves nor refutes, once more with more lemmas (``SECOND_ROUND``), then
  the bounded search again, up to ``deepest(N)`` tokens.

With a domain, ``closure.decide_closure`` first decides whether it is prefix-closed (by its
form, or with ``unbounded`` by a proof of its own, at most ``CLOSURE_SECONDS`` of the limit):
only then may the searches assume it at every position (``Question.prefix_closed``). After a
yes, ``vacuity.decide_vacuity`` asks whether its antecedent (the domain, an includes' OTHER)
accepts a nonempty string at all. A ``prefix-closed`` question is searched in its
``questions.searched_form``; the verdict keeps it as asked.

Every search runs on the programs shrunk for the alphabet (``shrink``: same answers on every
string over it, with equal definitions merged and unread ones dropped), and every string it
finds is confirmed on the programs as given.

The outcome is ``holds`` (no violation up to N), ``counterexample`` (with the shortest one
below N, or a confirmed longer one found by the induction), ``proved`` (every length) or
``unknown``, with the reason: the induction found neither a proof nor a real counterexample,
or a search was left undecided (``solver.Undecided``: the time limit ran out, z3 ran out of
memory (``max_memory``), or z3 answered unknown). A yes is a proof, a no has a
counterexample the interpreter confirmed, and an undecided solver call is never taken for
either.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from crasp.errors import CraspError
from crasp.verify import enumeration
from crasp.verify.closure import CLOSURE_SECONDS, Closure, decide_closure
from crasp.verify.explain import Counterexample, confirm
from crasp.verify.induction import InductionResult
from crasp.verify.questions import Question, chosen_alphabet, default_alphabet, searched_form
from crasp.verify.shrink import shrink_question
from crasp.verify.solver import (Progress, TimeLimit, Undecided, memory_budget,
                                 out_of_memory_undecided)
from crasp.verify.vacuity import VACUITY_SECONDS, Vacuity, antecedent, decide_vacuity

METHODS = ("auto", "smt", "enumerate")
ENUMERATION_LIMIT = 200_000
"""auto enumerates when the strings of length N number at most this: over three letters,
enumeration beats z3 up to about N = 11 (benchmarks/bench_verify.py: at N = 10 it takes
0.2-0.8x z3's time), over four z3 is faster from N = 10 on (3-9x)."""
PREFIX_STRINGS = 2_048
"""Before asking z3, ``auto`` enumerates the longest length whose strings number at most this
(its prefixes cover the shorter lengths: over two letters up to 11, over three up to 6). A
short counterexample then costs no solver set-up, which on a program of thousands of counts
(the relation lemmas' samples and per-position proofs) takes minutes: benchmarks/
bench_verify_large.py's E3-d3 program, whose counterexample has 3 tokens. Enumeration finds
the shortest violation, as the solver would (maybe another string of that length). It runs
on the programs as given: shrinking them (``shrink``) costs more than these few strings."""
SECOND_ROUND = True
"""Whether an inconclusive induction is tried again with more lemmas (``bounded.proved_pairs``'
``second_round``): for a question about one program (universal, empty), the relations between
its counts, which the first round guesses only between two programs; for any, the ``wider``
inequalities of ``crasp.verify.bounds`` (over sums of tokens and of two counts, with
coefficients up to 6, and the slopes up to 12 that the samples show). Only after the first
round fails: the candidates cost solver calls at every position of every proof
(benchmarks/bench_verify_second_round.py: 18 to 230 times as long for two decompiled twins,
had they been in their only round)."""
MAX_INDUCTION = 8
"""The deepest induction step ``unbounded`` tries (at most N)."""
LONGEST_SEARCH = 64
"""The longest strings the bounded search is given beyond N: a counterexample found by the
induction (longer than N) is shrunk to a shortest one when it has at most this many tokens,
and an inconclusive induction is followed by a search up to ``deepest(N)`` tokens."""
DEEPENING = 4
"""After an inconclusive induction, ``unbounded`` searches every string of up to DEEPENING x N
tokens (at most LONGEST_SEARCH) before it answers unknown. k steps of induction see no
violation that needs a long run of one letter to build up a count difference, when an
unreachable state keeps every step open: the extraction study's L3-d2-nope-s0 program
differs from L3's only from length 31 on (``b`` and 30 ``a``, where ``#a_after_b > 21 *
#"b" + 8`` first holds), and with N = 16 was unknown. The search is z3's, incremental in the
length, so it costs about one bounded search of DEEPENING x N tokens (1.0 s for a 3-letter,
one-line program at 64; under the same ``timeout`` as the rest)."""
WITHOUT_DOMAIN_SECONDS = 30.0
"""At most this long (never past --timeout) an inconclusive induction on a domain that is not
assumed is tried again with the domain left out (``_proved_without_domain``)."""
MAX_ENUMERATED_STRINGS = 50_000_000
"""--method enumerate refuses more strings than this (it would run for many minutes)."""
MAX_ENUMERATED_LENGTH = 1_000_000
"""The longest strings enumeration runs (``auto`` asks z3 beyond it, and ``--method
enumerate`` refuses). Enumeration runs each string whole, every definition at every
position, so its memory grows with N even where the strings are few: over one token there is
one string of each length, and ``--alphabet a --max-length 1000000000`` took the machine's
23 GB within 40 s before this bound."""


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
    reason: str | None = None    # why the outcome is unknown
    decided_length: int | None = None
    """The longest length up to which the answer is known to hold (unknown outcomes)."""
    timeout: float | None = None
    closure: Closure | None = None
    """How the domain is known to be prefix-closed (``crasp.verify.closure``); None without
    one."""
    timed_out: bool = False
    """The outcome is unknown because the time limit ran out."""
    without_domain: bool = False
    """The proof is of the question on every string, the domain left out (so on the domain's
    strings too): ``_proved_without_domain``."""
    vacuity: Vacuity | None = None
    """Whether a yes is vacuous (``crasp.verify.vacuity``); None for other answers and for
    questions nothing makes hold trivially."""
    max_memory: int | None = None
    """z3's memory budget in megabytes (None: none)."""
    out_of_memory: bool = False
    """The outcome is unknown because z3 ran out of memory."""


def _induction(question: Question, alphabet: tuple[str, ...], depth: int, limit: TimeLimit,
               held) -> InductionResult:
    """k-induction up to ``depth``, strengthened by the pairs the bounded search proved, and
    once more with the second round's lemmas if that is inconclusive (``SECOND_ROUND``)."""
    from crasp.verify import bounded, induction as induction_pass
    with out_of_memory_undecided("encoding the induction"):
        pairs = bounded.proved_pairs(question, alphabet, depth, limit, held=held)
        induction = induction_pass.prove(question, alphabet, depth, pairs, limit)
        if induction.inconclusive and SECOND_ROUND:
            pairs = bounded.proved_pairs(question, alphabet, depth, limit, second_round=True)
            induction = induction_pass.prove(question, alphabet, depth, pairs, limit)
    return induction


def _proved_without_domain(question: Question, alphabet: tuple[str, ...], search,
                           max_length: int, depth: int,
                           limit: TimeLimit) -> InductionResult | None:
    """The proof of ``question`` with its domain left out, or None: its domain is not assumed
    (not shown prefix-closed) and the induction on it was inconclusive.

    Why: no violation on any string implies none on the strings the domain accepts, and
    without the domain the step is easier, not harder. Filtered only at the position a
    violation is sought, the domain weakens the step's hypothesis (no violation at the k
    positions before, *where the domain held*), so a property that holds everywhere can
    fail to carry: ``#"b" < 3`` is prefix-closed, proved by k = 1, but not on the strings of
    ``#"b" >= 1 && #"a" >= 2`` (which accepts ``aab`` and not ``a``). The base case is a
    search of its own, up to ``max_length`` (a violation outside the domain ends the
    attempt, proving nothing either way), and the whole attempt gets at most
    ``WITHOUT_DOMAIN_SECONDS`` of the limit."""
    share = TimeLimit(limit.share(WITHOUT_DOMAIN_SECONDS), limit.progress)
    everywhere = dataclasses.replace(question, domain=None, prefix_closed=False)
    try:
        violation, held = search(everywhere, alphabet, max_length, share)
        if violation:
            return None
        induction = _induction(everywhere, alphabet, depth, share, held)
    except Undecided:
        return None
    return induction if induction.proved else None


def deepest(max_length: int) -> int:
    """How long the strings of the search after an inconclusive induction are by default:
    DEEPENING x N, at most LONGEST_SEARCH, never below N."""
    return max(max_length, min(DEEPENING * max_length, LONGEST_SEARCH))


def decide(question: Question, max_length: int = 20, alphabet: tuple[str, ...] | None = None,
           method: str = "auto", unbounded: bool = False,
           timeout: float | None = None, shrink: bool = True,
           deepen: int | None = None, progress: Progress | None = None,
           check_vacuity: bool = True, max_memory: int | None = None) -> Verdict:
    """Answer ``question`` for every string of length <= ``max_length`` over ``alphabet``
    (default: the programs' tokens plus one foreign token), and with ``unbounded`` for every
    length, within ``timeout`` seconds (None: no limit; the answer is ``unknown`` if the
    limit runs out first). The searches run on the programs shrunk for the alphabet
    (``crasp.verify.shrink``; ``shrink=False`` runs them on the programs as given, the
    baseline of benchmarks/bench_verify_large.py); counterexamples are confirmed on the
    programs as given. ``deepen``: how long the strings of the search after an inconclusive
    induction are (default ``deepest(max_length)``; at most ``max_length``: no such search).
    A yes then says whether it is vacuous (``vacuity``: a domain, or an includes' OTHER,
    that accepts no nonempty string; ``check_vacuity=False`` leaves that out, for the
    verifier's own side questions, whose answers are read, not reported). ``progress`` is told
    where the searches are (``solver.Progress``; the CLI's bar). ``max_memory``: z3 allocates
    at most this many megabytes (None: the budget of the question this one is part of, by
    default none); past it the answer is ``unknown`` (``solver.memory_budget``)."""
    started = time.perf_counter()
    limit = TimeLimit(timeout, progress)
    with memory_budget(max_memory):
        try:
            with out_of_memory_undecided("building the programs' terms"):
                verdict = _answer(question, max_length, alphabet, method, unbounded, shrink,
                                  deepen, limit, started)
        except Undecided as undecided:   # only z3's memory escapes _answer's own handlers
            verdict = Verdict(question, *_searched_alphabet(question, alphabet), max_length,
                              "smt", "unknown", None, False, None,
                              time.perf_counter() - started, undecided.reason,
                              timeout=limit.seconds, timed_out=undecided.timed_out,
                              out_of_memory=undecided.out_of_memory)
        verdict = dataclasses.replace(verdict, max_memory=max_memory)
        needed = antecedent(verdict.question)
        if not check_vacuity or needed is None or verdict.outcome not in ("holds", "proved"):
            return verdict
        vacuity = decide_vacuity(needed[0], verdict.alphabet, max_length, unbounded,
                                 limit.share(VACUITY_SECONDS), within=needed[1])
    return dataclasses.replace(verdict, vacuity=vacuity, seconds=time.perf_counter() - started)


def _searched_alphabet(question: Question, alphabet: tuple[str, ...] | None
                       ) -> tuple[tuple[str, ...], str | None]:
    """The alphabet the searches run over and the foreign token in it (None: ``alphabet``
    was chosen): ``alphabet``, else the searched programs' tokens plus a foreign one."""
    if alphabet is not None:
        return chosen_alphabet(tuple(alphabet)), None
    return default_alphabet(searched_form(question).evaluated)


def _enumerated_prefix(size: int, max_length: int) -> int:
    """The lengths ``auto`` enumerates before it asks z3 (``PREFIX_STRINGS``): up to the
    longest whose strings number at most PREFIX_STRINGS, never past N or
    MAX_ENUMERATED_LENGTH. Over one token every length has one string, so that is the whole
    of min(N, MAX_ENUMERATED_LENGTH), found without counting up to it."""
    if size == 1:
        return min(max_length, MAX_ENUMERATED_LENGTH)
    prefix = 0
    while (prefix < max_length and
           enumeration.strings_of_length(size, prefix + 1) <= PREFIX_STRINGS):
        prefix += 1
    return prefix


def _answer(question: Question, max_length: int, alphabet: tuple[str, ...] | None,
            method: str, unbounded: bool, shrink: bool, deepen: int | None,
            limit: TimeLimit, started: float) -> Verdict:
    """``decide``'s answer, before the vacuity check: the passes of the module docstring."""
    asked, question = question, searched_form(question)
    if method not in METHODS:
        raise CraspError(f"unknown method {method!r} (expected one of {', '.join(METHODS)})")
    alphabet, foreign = _searched_alphabet(asked, alphabet)
    # decided here, never taken from the caller: assuming a domain that is not
    # prefix-closed would miss violations
    closure = None if question.domain is None else decide_closure(
        question.domain, alphabet, max_length, unbounded, limit.share(CLOSURE_SECONDS))
    assumed = closure is not None and closure.assumed
    question, asked = (dataclasses.replace(form, prefix_closed=assumed)
                       for form in (question, asked))
    strings = enumeration.strings_of_length(len(alphabet), max_length)
    prefix = 0
    if method == "auto":
        method = "enumerate" if (strings <= ENUMERATION_LIMIT and
                                 max_length <= MAX_ENUMERATED_LENGTH) else "smt"
        if method == "smt":
            prefix = _enumerated_prefix(len(alphabet), max_length)
    if method == "enumerate":
        if strings > MAX_ENUMERATED_STRINGS:
            raise CraspError(f"--method enumerate: {len(alphabet)}^{max_length} strings is too "
                             f"many to run (more than {MAX_ENUMERATED_STRINGS:,}); use "
                             "--method smt or a smaller --max-length")
        if max_length > MAX_ENUMERATED_LENGTH:
            raise CraspError(f"--method enumerate: strings of {max_length:,} tokens are too long "
                             f"to run whole (at most {MAX_ENUMERATED_LENGTH:,}); use "
                             "--method smt or a smaller --max-length")
        def search(*arguments):
            return enumeration.first_violation(*arguments), None
    else:
        from crasp.verify import bounded
        search = bounded.search
    method = "enumeration" if method == "enumerate" else "smt"

    def verdict(outcome: str, counterexample: Counterexample | None = None,
                shortest: bool = False, induction: InductionResult | None = None,
                reason: str | None = None, decided_length: int | None = None,
                without_domain: bool = False, undecided: Undecided | None = None) -> Verdict:
        """``undecided``: why a search was left undecided, which says whether time or memory
        ran out."""
        return Verdict(asked, alphabet, foreign, max_length, method, outcome, counterexample,
                       shortest, induction, time.perf_counter() - started, reason,
                       decided_length, limit.seconds, closure,
                       undecided is not None and undecided.timed_out, without_domain,
                       out_of_memory=undecided is not None and undecided.out_of_memory)

    held = None   # what the solver's search proved of the relations between counts
    enumerated = None   # the lengths the enumerated prefix decided, once it has
    try:
        violation = enumeration.first_violation(question, alphabet, prefix, limit) \
            if prefix else None
        if violation:
            method = "enumeration"
        else:
            enumerated = prefix or None
            searched = shrink_question(question, alphabet) if shrink else question
            violation, held = search(searched, alphabet, max_length, limit)
    except Undecided as undecided:
        decided = max((length for length in (enumerated, undecided.holds_up_to)
                       if length is not None), default=None)
        return verdict("unknown", reason=undecided.reason, decided_length=decided,
                       undecided=undecided)
    if violation:
        return verdict("counterexample", confirm(question, violation.tokens), shortest=True)
    if not unbounded:
        return verdict("holds")
    from crasp.verify import bounded
    depth = min(max_length, MAX_INDUCTION)
    try:
        induction = _induction(searched, alphabet, depth, limit, held)
    except Undecided as undecided:
        return verdict("unknown", reason=f"{undecided.reason}, in the induction",
                       decided_length=max_length, undecided=undecided)
    if induction.proved:
        return verdict("proved", induction=induction)
    if induction.inconclusive and searched.domain is not None and not searched.prefix_closed:
        everywhere = _proved_without_domain(searched, alphabet, search, max_length, depth,
                                            limit)
        if everywhere is not None:
            return verdict("proved", induction=everywhere, without_domain=True)
    deeper = deepest(max_length) if deepen is None else deepen
    if induction.inconclusive:
        inconclusive = (f"k-induction up to k = {induction.tried} proves nothing for longer "
                        "strings and found no counterexample")
        try:
            found = bounded.first_violation(searched, alphabet, deeper, limit) \
                if deeper > max_length else None
        except Undecided as undecided:
            return verdict("unknown", induction=induction, reason=f"{inconclusive}; "
                           f"the search beyond length {max_length}: {undecided.reason}",
                           decided_length=max(max_length, undecided.holds_up_to or 0),
                           undecided=undecided)
        if found:   # none has length <= N, so this is a shortest one
            method = "smt"   # whichever searched up to N, z3 found this one
            return verdict("counterexample", confirm(question, found.tokens), shortest=True,
                           induction=induction)
        return verdict("unknown", induction=induction, reason=inconclusive,
                       decided_length=max(max_length, deeper))
    # the shortest lies between N and the one found: the solver finds it if not far, and
    # else searches as far as an inconclusive induction would (the model z3 gave the
    # induction decides how long its counterexample is, not the question)
    reach = len(induction.counterexample)
    reach = reach if reach <= LONGEST_SEARCH else deeper
    try:
        found = bounded.first_violation(searched, alphabet, reach, limit) \
            if reach > max_length else None
    except Undecided:   # the induction's counterexample is confirmed all the same
        found = None
    method = "smt"   # the induction's or the search's, both z3's
    return verdict("counterexample", confirm(question, found.tokens if found
                                             else induction.counterexample),
                   shortest=found is not None, induction=induction)
