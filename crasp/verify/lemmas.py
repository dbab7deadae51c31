"""Pass: candidate relations between counts x one position of the unrolled programs -> the
relations proved there, as lemmas on the search's solver (``crasp.verify.bounded``).

The candidates are guessed by simulation (``crasp.verify.relations``: equations, and the
inequalities of ``crasp.verify.bounds``); each is proved at each position from what the solver
holds, first on a small local solver, then on the full one within ``LEMMA_EFFORT``, and is
dropped for good where it is not. Lemmas are valid facts, so they change no answer; they
spare the solver case splits over the positions (docs/verification.md, Speed).
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import syntax
from crasp.verify.encode import ProgramEncoder
from crasp.verify.relations import LinearRelation
from crasp.verify.solver import TimeLimit
from crasp.verify.sweep import unrolled_counts

LEMMA_EFFORT = 1_000_000
"""The most of z3's resource units (``rlimit``, about 0.2 s on this machine) that the full
solver spends on one call (one relation, or a position's rest together: ``_prove_fully``);
beyond, the relations are dropped for good, as a refuted one is (sound: a lemma only helps,
and the search's own calls are unbounded).
Why: a relation that one step does not re-establish (the local solver's proof fails) is proved
from the whole unrolled string, at a cost that grows with the position: over a chain of 10
nested counts (``c_i = #(c_{i-1}) > #"b"``, each program against itself) the cost of the
hardest proof grew from 5,132 units at position 1 to 16.9 million at 17, and the search to
length 20 took 30 s, nearly all of it these proofs. The bound makes the lemmas' work at most
linear in the length. The proofs that the test suite's questions need cost 1,431
units at the median and 341,365 at the 99th percentile (the verifier's tests, 10,635 proofs);
the few above 1 million were in the searches after an inconclusive induction, where no lemma
decides anything."""


@dataclass(frozen=True)
class Held:
    """What a search's lemmas established: each candidate relation (those that hold before
    the first token), with the longest length up to which it was proved at every position
    (the search's length for one never dropped; p for one dropped at position p, which
    holds on every string of up to p tokens), and whether it was dropped because refuted (a
    string of p + 1 tokens on which it fails) rather than given up (``LEMMA_EFFORT``)."""
    relations: tuple[LinearRelation, ...]
    lengths: tuple[int, ...]
    refuted: tuple[bool, ...]

    def up_to(self, length: int) -> list[LinearRelation]:
        """The relations proved at every position of every string of up to ``length``
        tokens."""
        return [relation for relation, held in zip(self.relations, self.lengths)
                if held >= length]

    def known(self, length: int) -> dict[LinearRelation, int]:
        """The relations not refuted on a string of up to ``length`` tokens, each with the
        positions (at most ``length``) at which it is known to hold: a relation given up at
        position p < ``length`` is not known false, and is proved again from p on."""
        return {relation: min(held, length) for relation, held, refuted
                in zip(self.relations, self.lengths, self.refuted)
                if held >= length or not refuted}


class Lemmas:
    """The candidate relations between counts (``crasp.verify.relations``: equations and
    inequalities) as lemmas: at each position, each relation whose counts have all been
    stepped is proved from what the solver holds (every relation proved at the previous
    position among it: inequalities are often inductive only together) and added to it; one
    the solver cannot prove is dropped for good. ``prove`` runs when the second program's step
    needs the full solver (``bounded._Sweeper``), which then has every relation it can use, and
    after both steps.

    Each proof is first tried on a small *local* solver (one scope per position: a push and
    pop cost less than a new solver), which holds only facts of the full one: one token here,
    the relations proved at the previous position and so far at this one, and the one-step
    definitions value = previous + [body] of the counts the relations weigh and of the counts
    their bodies read (``_reads``), those counts non-negative. Asked what its facts imply
    (``_locally_implied``), it settles what one step re-establishes (X <= #"a" from
    X <= #"a" and X <= #"b" one position before; E_k's #B4 <= #B2 from #B3 <= #"b" here)
    without z3's search over every position, which took up to a quarter of a second per
    relation at length 30 on the E_k programs and their twins. What it leaves goes to the
    full solver.

    ``known``: for some relations, the positions before which each is known to hold (an
    earlier search on the same programs proved it there: ``Held``); there it is added
    without a proof."""

    def __init__(self, z, solver, limit: TimeLimit, encoders: list[ProgramEncoder],
                 relations: list[LinearRelation], known: dict[LinearRelation, int] | None = None):
        self.z, self.solver, self.limit, self.encoders = z, solver, limit, encoders
        self.counted = [(encoder, node) for encoder in encoders
                        for node in unrolled_counts(encoder.program)]
        self.reads = self._reads()
        # a relation must hold before the first token too, where every count is 0: the
        # induction assumes it of that start state
        zero = [z.IntVal(0)] * len(self.reads)
        self.relations = [r for r in relations if z.is_true(z.simplify(r.holds(z, zero)))]
        self.candidates, self.known = tuple(self.relations), known or {}
        self.dropped_at: dict[LinearRelation, tuple[int, bool]] = {}   # position, refuted
        self.pending: list[LinearRelation] = []
        self.position, self.parikh, self.bits = -1, [], []
        self.previous: list = []
        self.proved: list = []        # the terms of the relations proved at this position
        self.established: list = []   # the terms of those proved at the previous position
        self.local, self.token_constraint = z.SimpleSolver(), None
        self.defined: set[int] | None = None   # the columns defined in ``local`` here

    def start(self, position: int, parikh: list, bits: list, token_constraint) -> None:
        """A new position, with the Parikh counts and the token's one-hot bits there."""
        z = self.z
        previous = [encoder.counts[id(node)] for encoder, node in self.counted] + \
            (list(self.parikh) or [z.IntVal(0)] * len(parikh))
        self.established, self.proved = self.proved, []
        if self.defined is not None:   # the last position's facts
            self.local.pop()
        self.defined, self.token_constraint = None, token_constraint
        self.previous, self.pending = previous, list(self.relations)
        self.position, self.parikh, self.bits = position, parikh, bits

    def _values(self) -> list:
        """Each count's value at this position (None if not stepped yet), then n_s."""
        return [encoder.counts[id(node)] if len(encoder.history[id(node)]) > self.position
                else None for encoder, node in self.counted] + list(self.parikh)

    def held(self) -> Held:
        """What the positions so far established (``Held``)."""
        searched = self.position + 1
        dropped = [self.dropped_at.get(relation, (searched, False))
                   for relation in self.candidates]
        return Held(self.candidates, tuple(position for position, _ in dropped),
                    tuple(refuted for _, refuted in dropped))

    def prove(self) -> None:
        """Prove the pending relations whose counts have all been stepped here. One that an
        earlier search gave up on at this position (``known``) goes straight to the full
        solver, with the others given up there, all together (``_prove_fully``): the local
        solver failed on it there, with the same facts, and the full one gave up; over
        chains of 20 and 40 nested counts, proving them again one at a time (106 and 256
        relations) kept none, at 2.5 s."""
        z, values = self.z, self._values()
        ready, retried = [], []
        for relation in [r for r in self.pending
                         if all(values[column] is not None for column in r.columns)]:
            known = self.known.get(relation)
            if known is not None and self.position < known:
                self._add(relation, relation.holds(z, values))
                continue
            holds = z.simplify(relation.holds(z, values))
            if z.is_true(holds):   # between counts the programs share (``CountTable``)
                self._add(relation, holds)
            else:
                (retried if known == self.position else ready).append((relation, holds))
        if retried:
            self._prove_fully(retried, together=True)
        if ready:
            self._define(values, {c for relation, _ in ready for column in relation.columns
                                  for c in (column, *self.reads[column])})
            self._prove_fully(self._locally_implied(ready))

    def _prove_fully(self, ready: list[tuple[LinearRelation, object]],
                     together: bool = False) -> None:
        """Prove on the full solver the relations (with their terms) that the local one left:
        one at a time, each proved, refuted or given up (``LEMMA_EFFORT``) and then dropped;
        a refutation's model, a string on which the relation fails, also drops every other
        relation false on it, without a call of its own. After the first give-up (or from the
        start, ``together``), the rest are tried together: all proved at once, a model's
        refuted ones dropped and the others tried again, or all dropped on a give-up.

        Why together: simulation's samples leave some counts equal that are equal only on
        short strings (the links above the 11th of a chain of nested counts, ``c_i =
        #(c_{i-1}) > #"b"``, agree on every string of up to 13 tokens but not on b a^13, and
        the samples are random or shorter), and the full solver proves such an equation only
        by going through the strings, at a cost that grows with the position until it gives
        up: over 80 links, 265 equations gave up one after another, 40 s of the 75 s proof
        of the chain against itself. A call now gives up at most twice (a position at most
        three times: ``prove`` makes a second call for the relations retried there). Sound
        either way: lemmas only help, and each is proved before it is added."""
        z = self.z
        while ready:
            trying = ready if together else ready[:1]
            verdict, model = self._refute(z.Not(z.And(*[holds for _, holds in trying])))
            if verdict == z.unsat:
                for relation, holds in trying:
                    self._add(relation, holds)
                ready = ready[len(trying):]
                continue
            if model is None:   # given up
                failed, refuted, together = trying, False, True
            else:
                failed = _false_in(z, model, ready)
                refuted, failed = bool(failed), failed or trying
            for relation, _ in failed:
                self._drop(relation, refuted)
            ready = _without(ready, failed)

    def _define(self, values: list, columns: set[int]) -> None:
        """The local solver (given the position's first facts, in a scope of their own, at
        the first proof of the position that needs it) gets value = previous + [what the
        column adds here] for each of ``columns`` stepped: a count's body, or the token's bit
        for a Parikh count."""
        z, counts = self.z, len(self.counted)
        if self.defined is None:
            self.defined = set()
            self.local.push()
            self.local.add(self.token_constraint, *self.established)
        for column in sorted(columns - self.defined):
            value = values[column]
            if value is None:
                continue
            self.defined.add(column)
            adds = self.bits[column - counts] if column >= counts else \
                self.counted[column][0].history[id(self.counted[column][1])][-1]
            self.local.add(value == self.previous[column] + z.If(adds, 1, 0),
                           self.previous[column] >= 0)

    def _reads(self) -> list[tuple[int, ...]]:
        """For each column, the columns a count's body reads at the same position (whose
        definitions a local proof may need): the unrolled counts in it, through the
        definitions it refers to but not into the bodies of counts, and the Parikh counts
        its token-only counts sum; none for a Parikh count."""
        column = {id(node): k for k, (_, node) in enumerate(self.counted)}
        definitions = {id(encoder): {d.name: d.expr for d in encoder.program.definitions}
                       for encoder in self.encoders}
        reads = []
        for encoder, node in self.counted:
            found: set[int] = set()
            stack, seen = [node.body], set()
            while stack:
                expr = stack.pop()
                if id(expr) in seen:
                    continue
                seen.add(id(expr))
                if isinstance(expr, syntax.Count):
                    found |= {column[id(expr)]} if id(expr) in column else \
                        {len(self.counted) + k for k in encoder.token_sets.get(id(expr), ())}
                elif isinstance(expr, syntax.Ref):
                    stack.append(definitions[id(encoder)][expr.name])
                else:
                    stack.extend(syntax.children(expr))
            reads.append(tuple(sorted(found)))
        return reads + [()] * len(self.encoders[0].index)

    def _refute(self, goal) -> tuple:
        """The full solver's verdict on ``goal`` within ``LEMMA_EFFORT`` (None where spent),
        and its model where ``sat``."""
        return _checked(self.z, self.solver, self.limit, goal, LEMMA_EFFORT)

    def _drop(self, relation: LinearRelation, refuted: bool) -> None:
        self.dropped_at[relation] = (self.position, refuted)
        self.pending.remove(relation)
        self.relations.remove(relation)

    def _locally_implied(self, ready: list[tuple[LinearRelation, object]]) -> list[tuple]:
        """Add the relations (with their terms) that the local solver's facts F imply, and
        return the others. All together first (what one step re-establishes, the usual case:
        one call); else each in turn, in a scope of its own, and a model, a point of F where
        one fails, also rules out every other candidate false in it (F does not imply those
        either), without a call of its own.

        Why so: the implied set is the one that a call per candidate finds (a relation F
        implies adds nothing to F, so no second round proves more than the first), and the
        calls before asserted each negation under a guard that stayed in the local solver
        until the position's end, so each call was slower than the last, a cost quadratic in
        the relations: over a chain of 80 nested counts against itself, 3,079 local calls
        took 11 s of its 22. Asking Houdini's way instead (does some candidate fail?) took
        one round per candidate that fails, each on a disjunction of all of them: 421 rounds,
        16 s, where some hundred inequalities fail at a position."""
        z, left, candidates, together = self.z, [], ready, True
        while candidates:
            trying = candidates if together else candidates[:1]
            together = False
            verdict, model = _checked(z, self.local, self.limit,
                                      z.Not(z.And(*[holds for _, holds in trying])))
            if verdict == z.unsat:
                for relation, holds in trying:
                    self._add(relation, holds)
                candidates = candidates[len(trying):]
                continue
            failed = _false_in(z, model, candidates) or trying[:1]
            left += failed
            candidates = _without(candidates, failed)
        return left

    def _add(self, relation: LinearRelation, holds) -> None:
        self.solver.add(holds)
        if self.defined is not None:
            self.local.add(holds)
        self.pending.remove(relation)
        self.proved.append(holds)


def _checked(z, solver, limit: TimeLimit, goal, effort: int | None = None) -> tuple:
    """``solver``'s verdict on ``goal``, asserted in a scope of its own (``effort``: see
    ``TimeLimit.check``; None where spent), and its model where ``sat``."""
    solver.push()
    solver.add(goal)
    verdict = limit.check(solver, "a relation between counts", effort=effort)
    model = solver.model() if verdict == z.sat else None
    solver.pop()
    return verdict, model


def _false_in(z, model, relations: list[tuple]) -> list[tuple]:
    """The (relation, term) pairs whose term ``model`` makes false."""
    return [(relation, holds) for relation, holds in relations
            if z.is_false(model.evaluate(holds, model_completion=True))]


def _without(relations: list[tuple], removed: list[tuple]) -> list[tuple]:
    """``relations`` less the (relation, term) pairs of ``removed``."""
    gone = {id(relation) for relation, _ in removed}
    return [pair for pair in relations if id(pair[0]) not in gone]
