"""Pass: Question x alphabet x N -> the shortest violating string, by an SMT solver.

Derivation. ``crasp.verify.encode`` turns each program's answer at position i of a symbolic
string into a term of linear integer arithmetic over the one-hot tokens t_0..t_i. Because the
answer at i is the acceptance of the prefix of length i + 1 (``crasp.verify.questions``), the
shortest violating string has length n exactly when

    V(n) = violation at position n - 1   is satisfiable   and   V(m) is not, for every m < n.

The solver is asked V(0) (BOS: no tokens), V(1), V(2), ... in order, on one incremental
solver: the string grows by one token per round, and a round that is unsatisfiable adds
``not V(n)`` as a *lemma* (it holds for every string, so adding it changes no answer, and it
spares the solver rediscovering that the shorter prefixes agree). The first satisfiable round
gives the shortest counterexample; its model's tokens are read off and returned. If every
round up to N is unsatisfiable, no string of length <= N violates.

A length z3 cannot decide (``unknown``: the time limit ran out) ends the search with
``Undecided`` (``crasp.verify.solver``): the lengths before it hold, nothing is said of it.

Precondition: ``alphabet`` is non-empty. The caller re-runs the returned string through the
interpreter (``crasp.verify.explain``), so a solver answer is never reported unchecked.
"""

from __future__ import annotations

from typing import Callable

from crasp import syntax
from crasp.verify.encode import CountTable, ParikhCounts, ProgramEncoder, one_hot_token
from crasp.verify.enumeration import Violation
from crasp.verify.questions import Question
from crasp.verify.relations import LinearRelation, candidate_relations
from crasp.verify.sweep import body_pairs, candidate_pairs, unrolled_counts
from crasp.verify.solver import UNLIMITED, TimeLimit, Undecided, z3


KEEP_PROVED_EQUALITIES = True
"""Whether a definition the sweeper proves equal to its partner on the full solver leaves that
equality as a fact. Why: the swap drops the second program's term, and with it what the proof
established about it (``#(#"a" == 13 * #"b") <= #"b"`` against ``x = true``: the answer's
comparison holds at this position); without the fact, every later position re-derives it from
scratch, and the search to length 70 took 109 s instead of 2.7 s. Sound: the solver implied
the equality, so adding it changes no answer. False is the baseline of
benchmarks/bench_verify_deepen.py ``--part kept``."""

LEMMA_EFFORT = 1_000_000
"""The most of z3's resource units (``rlimit``, about 0.2 s on this machine) that the full
solver spends proving one relation at one position; beyond, the relation is dropped for good,
as a refuted one is (sound: a lemma only helps, and the search's own calls are unbounded).
Why: a relation that one step does not re-establish (the local solver's proof fails) is proved
from the whole unrolled string, at a cost that grows with the position: over a chain of 10
nested counts (``c_i = #(c_{i-1}) > #"b"``, each program against itself) the cost of the
hardest proof grew from 5,132 units at position 1 to 16.9 million at 17, and the search to
length 20 took 30 s, nearly all of it these proofs. The bound makes the lemmas' work at most
linear in the length. The proofs that the test suite's questions need cost 1,431
units at the median and 341,365 at the 99th percentile (the verifier's tests, 10,635 proofs);
the few above 1 million were in the searches after an inconclusive induction, where no lemma
decides anything."""


class _Unrolling:
    """Both programs unrolled over a symbolic string that grows one token per ``advance``,
    on one solver, with the second program's definitions swept (``_Sweeper``)."""

    def __init__(self, question: Question, alphabet: tuple[str, ...], max_length: int,
                 limit: TimeLimit, relations: bool = True, second_round: bool = False):
        z = self.z = z3()
        self.question, self.alphabet, self.limit = question, alphabet, limit
        self.solver = z.Solver()
        table = CountTable(self.solver)
        self.encoders = [ProgramEncoder(program, alphabet, table)
                         for program in question.programs]
        self.bos = [encoder.bos() for encoder in self.encoders]
        pairs = candidate_pairs(*question.programs, alphabet, max_length, limit) \
            if len(question.programs) == 2 else []
        # a pair must hold at BOS too (all its terms are constants there)
        pairs = [(a, b) for a, b in pairs
                 if z.is_true(z.simplify(self.bos[0][a] == self.bos[1][b]))]
        guessed = relations and (len(self.encoders) == 2 or second_round)
        self.lemmas = _Lemmas(z, self.solver, limit, self.encoders, candidate_relations(
            question.programs, alphabet, max_length, wider=second_round, limit=limit)
            if guessed else [])
        self.sweeper = _Sweeper(z, self.solver, pairs, limit, self.lemmas.prove) \
            if pairs else None
        self.tokens: list[list] = []
        self.parikh = ParikhCounts(self.solver, [z.IntVal(0)] * len(alphabet), 0, "n")

    def violation_at_bos(self):
        return self.question.violation([values[p.answer.name]
                                        for values, p in zip(self.bos, self.question.programs)])

    def advance(self):
        """The violation at the next position (whose token is added to the string)."""
        position = len(self.tokens)
        bits, exactly_one = one_hot_token(f"t{position}", len(self.alphabet))
        self.tokens.append(bits)
        self.solver.add(exactly_one)
        counts = self.parikh.advance(bits)
        self.lemmas.start(position, counts, bits, exactly_one)
        values = [self.encoders[0].step(bits, position, counts)]
        if self.sweeper is not None:
            self.sweeper.first, self.sweeper.token_constraint = values[0], exactly_one
        values += [encoder.step(bits, position, counts, self.sweeper)
                   for encoder in self.encoders[1:]]
        self.lemmas.prove()
        return self.question.violation([value[p.answer.name]
                                        for value, p in zip(values, self.question.programs)])


class _Lemmas:
    """The candidate relations between counts (``crasp.verify.relations``: equations and
    inequalities) as lemmas: at each position, each relation whose counts have all been
    stepped is proved from what the solver holds (every relation proved at the previous
    position among it: inequalities are often inductive only together) and added to it; one
    the solver cannot prove is dropped for good. ``prove`` runs when the second program's step
    needs the full solver (``_Sweeper``), which then has every relation it can use, and
    after both steps.

    Each proof is first tried on a small *local* solver (one scope per position: a push and
    pop cost less than a new solver), which holds only facts of the full one: one token here,
    the relations proved at the previous position and so far at this one, and the one-step
    definitions value = previous + [body] of the counts the relations weigh and of the counts
    their bodies read (``_reads``), those counts non-negative. Tried all at once, then in
    rounds until no more is proved, it settles what one step re-establishes (X <= #"a" from
    X <= #"a" and X <= #"b" one position before; E_k's #B4 <= #B2 from #B3 <= #"b" here)
    without z3's search over every position, which took up to a quarter of a second per
    relation at length 30 on the E_k programs and their twins. What it leaves goes to the
    full solver."""

    def __init__(self, z, solver, limit: TimeLimit, encoders: list[ProgramEncoder],
                 relations: list[LinearRelation]):
        self.z, self.solver, self.limit, self.encoders = z, solver, limit, encoders
        self.counted = [(encoder, node) for encoder in encoders
                        for node in unrolled_counts(encoder.program)]
        self.reads = self._reads()
        # a relation must hold before the first token too, where every count is 0: the
        # induction assumes it of that start state
        zero = [z.IntVal(0)] * len(self.reads)
        self.relations = [r for r in relations if z.is_true(z.simplify(r.holds(z, zero)))]
        self.pending: list[LinearRelation] = []
        self.position, self.parikh, self.bits = -1, [], []
        self.previous: list = []
        self.proved: list = []        # the terms of the relations proved at this position
        self.established: list = []   # the terms of those proved at the previous position
        self.local, self.token_constraint = z.SimpleSolver(), None
        self.defined: set[int] | None = None   # the columns defined in ``local`` here
        self.guards = 0

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

    def prove(self) -> None:
        z, values = self.z, self._values()
        ready = {id(r): (r, z.simplify(r.holds(z, values))) for r in self.pending
                 if all(values[column] is not None for column in r.columns)}
        for key, (relation, holds) in list(ready.items()):
            if z.is_true(holds):   # between counts the programs share (``CountTable``)
                self._add(relation, holds)
                del ready[key]
        if ready:
            self._define(values, {c for relation, _ in ready.values()
                                  for column in relation.columns
                                  for c in (column, *self.reads[column])})
        # all at once first (what one step re-establishes, the usual case), then in rounds
        if len(ready) > 1 and self._locally(z.And(*[h for _, h in ready.values()])):
            for relation, holds in ready.values():
                self._add(relation, holds)
            ready = {}
        progress = bool(ready)
        while progress:
            progress = False
            for key, (relation, holds) in list(ready.items()):
                if self._locally(holds):
                    self._add(relation, holds)
                    del ready[key]
                    progress = True
        for relation, holds in ready.values():
            if self._unsatisfiable(z.Not(holds)):
                self._add(relation, holds)
            else:
                self.pending.remove(relation)
                self.relations.remove(relation)

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

    def _unsatisfiable(self, goal) -> bool:
        """Whether the full solver refutes ``goal`` within ``LEMMA_EFFORT`` (a relation it
        cannot prove within it is dropped, as one it refutes is: see ``LEMMA_EFFORT``)."""
        self.solver.push()
        self.solver.add(goal)
        verdict = self.limit.check(self.solver, "a relation between counts",
                                   effort=LEMMA_EFFORT)
        self.solver.pop()
        return verdict == self.z.unsat

    def _locally(self, holds) -> bool:
        """Whether the local solver proves ``holds``: its negation is asserted under a fresh
        guard, assumed for one check (a push and pop per relation would cost more than the
        check)."""
        z = self.z
        self.guards += 1
        guard = z.Bool(f"relation#{self.guards}")
        self.local.add(z.Implies(guard, z.Not(holds)))
        return self.limit.check(self.local, "a relation between counts", guard) == z.unsat

    def _add(self, relation: LinearRelation, holds) -> None:
        self.solver.add(holds)
        if self.defined is not None:
            self.local.add(holds)
        self.pending.remove(relation)
        self.proved.append(holds)


def first_violation(question: Question, alphabet: tuple[str, ...], max_length: int,
                    limit: TimeLimit = UNLIMITED, relations: bool = True) -> Violation | None:
    """The shortest string of length <= ``max_length`` over ``alphabet`` on which the question
    is violated (found by z3), or None; ``Undecided`` if z3 cannot decide a length within
    ``limit``. ``relations=False`` leaves out the relation lemmas, equations and inequalities
    (``crasp.verify.relations``; benchmarks/bench_verify.py measures what they gain)."""
    unrolling = _Unrolling(question, alphabet, max_length, limit, relations)
    z, solver = unrolling.z, unrolling.solver
    if z.is_true(z.simplify(unrolling.violation_at_bos())):
        return Violation(())
    for position in range(max_length):
        try:
            violated = unrolling.advance()
            solver.push()
            solver.add(violated)
            verdict = limit.check(solver, "the question")
        except Undecided as undecided:
            raise Undecided(f"{undecided.reason}, at length {position + 1}",
                            holds_up_to=position) from None
        if verdict == z.sat:
            model = solver.model()
            return Violation(tuple(alphabet[_which(z, model, bits)]
                                   for bits in unrolling.tokens))
        solver.pop()
        solver.add(z.Not(violated))
    return None


def proved_pairs(question: Question, alphabet: tuple[str, ...], length: int,
                 limit: TimeLimit = UNLIMITED, second_round: bool = False) -> list[tuple]:
    """What simulation proposes and the solver proves equal at every position of every string
    of length <= ``length`` (the base case of the induction's strengthened property,
    ``crasp.verify.induction``): ``("definition", name, other)`` for two definitions (at BOS
    too), ``("count", i, j)`` for the bodies of ``unrolled_counts`` i and j (BOS is never
    counted), ``("relation", r, None)`` for a ``LinearRelation`` between counts, an equation
    or an inequality (``crasp.verify.relations``; it holds at BOS, where every count is 0).
    The ``second_round`` (``driver.SECOND_ROUND``) adds the ``wider`` inequalities of
    ``crasp.verify.bounds``, and relations between the counts of a single program."""
    single = len(question.programs) != 2
    if single and not second_round:
        return []
    unrolling = _Unrolling(question, alphabet, length, limit, second_round=second_round)
    z, solver = unrolling.z, unrolling.solver
    nodes = [unrolled_counts(program) for program in question.programs]
    bodies = [] if single else body_pairs(*question.programs, alphabet, length, limit)
    for _ in range(length):
        unrolling.advance()
        kept = []
        for i, j in bodies:
            left, right = (encoder.history[id(node_list[index])][-1] for encoder, node_list, index
                           in zip(unrolling.encoders, nodes, (i, j)))
            solver.push()
            solver.add(left != right)
            if limit.check(solver, "a pair of equal counts") == z.unsat:
                kept.append((i, j))
            solver.pop()
        bodies = kept
    definitions = unrolling.sweeper.partner.items() if unrolling.sweeper else ()
    return [("definition", name, other) for other, name in definitions] + \
        [("count", i, j) for i, j in bodies] + \
        [("relation", relation, None) for relation in unrolling.lemmas.relations]


class _Sweeper:
    """``replace`` for the second program's encoder: a definition that simulation paired with
    one of the first program (``crasp.verify.sweep``) and that the solver proves equal to it
    at this position takes the first program's term, so that everything built on it (counts
    above all) is the same term in both programs. Proved under valid facts only, so the swap
    changes no answer; a pair the solver refutes is dropped. ``prepare`` runs before a proof
    that needs the full solver (it adds the relation lemmas that can be proved so far)."""

    def __init__(self, z, solver, pairs: list[tuple[str, str]], limit: TimeLimit,
                 prepare: Callable[[], None]):
        self.z, self.solver, self.limit, self.prepare = z, solver, limit, prepare
        self.partner = {other: name for name, other in pairs}
        self.first: dict = {}
        self.token_constraint = None   # exactly one token at the current position

    def __call__(self, name: str, term):
        if name not in self.partner:
            return term
        theirs = self.first[self.partner[name]]
        if theirs.eq(term) or self._locally_equal(theirs, term):
            return theirs
        self.prepare()
        self.solver.push()
        self.solver.add(theirs != term)
        verdict = self.limit.check(self.solver, "a pair of equal definitions")
        self.solver.pop()
        if verdict == self.z.unsat:
            if KEEP_PROVED_EQUALITIES:
                self.solver.add(theirs == term)
            return theirs
        del self.partner[name]
        return term

    def _locally_equal(self, theirs, term) -> bool:
        """Equal given only that every integer variable (a count or a Parikh count) is
        non-negative and that one token is at this position: a small, fast solver call that
        settles most pairs (the full solver holds every position's constraints)."""
        z = self.z
        scratch = z.Solver()
        difference = theirs != term
        scratch.add(difference, self.token_constraint,
                    *[v >= 0 for v in _integer_variables(z, difference)])
        return self.limit.check(scratch, "a pair of equal definitions") == z.unsat


def _integer_variables(z, term) -> list:
    """The integer variables in ``term`` (each once)."""
    found: dict[int, object] = {}
    seen: set[int] = set()
    stack = [term]
    while stack:
        node = stack.pop()
        if node.get_id() in seen:
            continue
        seen.add(node.get_id())
        if z.is_const(node) and node.decl().kind() == z.Z3_OP_UNINTERPRETED:
            if z.is_int(node):
                found[node.get_id()] = node
        else:
            stack.extend(node.children())
    return list(found.values())


def _which(z, model, bits: list) -> int:
    """The index of the one-hot bit that holds in ``model``."""
    return next(k for k, bit in enumerate(bits)
                if z.is_true(model.evaluate(bit, model_completion=True)))
