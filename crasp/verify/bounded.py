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

A length z3 cannot decide (``unknown``: the time limit ran out; or z3 ran out of memory, in
the solver or while the programs are unrolled) ends the search with ``Undecided``
(``crasp.verify.solver``): the lengths before it hold, nothing is said of it.

Precondition: ``alphabet`` is non-empty. The caller re-runs the returned string through the
interpreter (``crasp.verify.explain``), so a solver answer is never reported unchecked.
"""

from __future__ import annotations

from typing import Callable

from crasp.verify.encode import CountTable, ParikhCounts, ProgramEncoder, one_hot_token
from crasp.verify.enumeration import Violation
from crasp.verify.lemmas import Held, Lemmas
from crasp.verify.questions import Question
from crasp.verify.relations import candidate_relations
from crasp.verify.sweep import body_pairs, candidate_pairs, unrolled_counts
from crasp.verify.solver import UNLIMITED, TimeLimit, Undecided, out_of_memory_undecided, z3


KEEP_PROVED_EQUALITIES = True
"""Whether a definition the sweeper proves equal to its partner on the full solver leaves that
equality as a fact. Why: the swap drops the second program's term, and with it what the proof
established about it (``#(#"a" == 13 * #"b") <= #"b"`` against ``x = true``: the answer's
comparison holds at this position); without the fact, every later position re-derives it from
scratch, and the search to length 70 took 109 s instead of 2.7 s. Sound: the solver implied
the equality, so adding it changes no answer. False is the baseline of
benchmarks/bench_verify_deepen.py ``--part kept``."""


class _Unrolling:
    """Both programs (and the domain) unrolled over a symbolic string that grows one token per
    ``advance``, on one solver, with the second program's definitions swept (``_Sweeper``)."""

    def __init__(self, question: Question, alphabet: tuple[str, ...], max_length: int,
                 limit: TimeLimit, relations: bool = True, second_round: bool = False,
                 held: Held | None = None):
        z = self.z = z3()
        self.question, self.alphabet, self.limit = question, alphabet, limit
        self.solver = z.Solver()
        table = CountTable(self.solver)
        self.encoders = [ProgramEncoder(program, alphabet, table)
                         for program in question.evaluated]
        self.bos = [encoder.bos() for encoder in self.encoders]
        within = question.assumed_domain
        pairs = candidate_pairs(*question.programs, alphabet, max_length, limit, within) \
            if len(question.programs) == 2 else []
        # a pair must hold at BOS too (all its terms are constants there)
        pairs = [(a, b) for a, b in pairs
                 if z.is_true(z.simplify(self.bos[0][a] == self.bos[1][b]))]
        guessed = relations and (len(question.programs) == 2 or second_round)
        if held is not None:   # what an earlier search up to max_length or more proved
            known = held.known(max_length)
            self.lemmas = Lemmas(z, self.solver, limit, self.encoders, list(known), known)
        else:
            self.lemmas = Lemmas(z, self.solver, limit, self.encoders, candidate_relations(
                question.evaluated, alphabet, max_length, wider=second_round, limit=limit,
                within=within)
                if guessed else [])
        self.sweeper = _Sweeper(z, self.solver, pairs, limit, self.lemmas.prove) \
            if pairs else None
        self.tokens: list[list] = []
        self.parikh = ParikhCounts(self.solver, [z.IntVal(0)] * len(alphabet), 0, "n")

    def violation_at_bos(self):
        return self.question.violation([values[p.answer.name]
                                        for values, p in zip(self.bos, self.question.evaluated)])

    def advance(self):
        """The violation at the next position (whose token is added to the string)."""
        position = len(self.tokens)
        bits, exactly_one = one_hot_token(f"t{position}", len(self.alphabet))
        self.tokens.append(bits)
        self.solver.add(exactly_one)
        counts = self.parikh.advance(bits)
        self.lemmas.start(position, counts, bits, exactly_one)
        values: list = [None] * len(self.encoders)
        values[0] = self.encoders[0].step(bits, position, counts)
        if self.sweeper is not None:
            self.sweeper.first, self.sweeper.token_constraint = values[0], exactly_one
        # an assumed domain first (the sweeper's proofs below assume it here too); only the
        # second program's definitions have partners (the domain's never do)
        last = len(self.encoders) - 1
        for index in ([last] if self.question.prefix_closed else []) + list(range(1, last + 1)):
            if values[index] is None:
                values[index] = self.encoders[index].step(bits, position, counts,
                                                          self.sweeper if index == 1 else None)
            if index == last and self.question.prefix_closed:
                self.solver.add(values[last][self.question.domain.answer.name])
        self.lemmas.prove()
        return self.question.violation([value[p.answer.name]
                                        for value, p in zip(values, self.question.evaluated)])


def first_violation(question: Question, alphabet: tuple[str, ...], max_length: int,
                    limit: TimeLimit = UNLIMITED, relations: bool = True) -> Violation | None:
    """The shortest string of length <= ``max_length`` over ``alphabet`` on which the question
    is violated (found by z3), or None; ``Undecided`` if z3 cannot decide a length within
    ``limit``. ``relations=False`` leaves out the relation lemmas, equations and inequalities
    (``crasp.verify.relations``; benchmarks/bench_verify.py measures what they gain)."""
    return search(question, alphabet, max_length, limit, relations)[0]


def search(question: Question, alphabet: tuple[str, ...], max_length: int,
           limit: TimeLimit = UNLIMITED, relations: bool = True
           ) -> tuple[Violation | None, Held | None]:
    """``first_violation``, and where it finds none, what its lemmas established (``Held``),
    for ``proved_pairs``."""
    with out_of_memory_undecided("unrolling the programs"):
        unrolling = _Unrolling(question, alphabet, max_length, limit, relations)
    z, solver = unrolling.z, unrolling.solver
    if z.is_true(z.simplify(unrolling.violation_at_bos())):
        return Violation(()), None
    for position in range(max_length):
        limit.report(f"z3: strings of length ≤ {max_length}", position, max_length)
        try:
            with out_of_memory_undecided("unrolling the programs"):
                violated = unrolling.advance()
                solver.push()
                solver.add(violated)
            verdict = limit.check(solver, "the question")
        except Undecided as undecided:
            raise undecided.at(f"at length {position + 1}", holds_up_to=position) from None
        if verdict == z.sat:
            model = solver.model()
            return Violation(tuple(alphabet[_which(z, model, bits)]
                                   for bits in unrolling.tokens)), None
        solver.pop()
        solver.add(z.Not(violated))
    return None, unrolling.lemmas.held()


def proved_pairs(question: Question, alphabet: tuple[str, ...], length: int,
                 limit: TimeLimit = UNLIMITED, second_round: bool = False,
                 held: Held | None = None) -> list[tuple]:
    """What simulation proposes and the solver proves equal at every position of every string
    of length <= ``length`` (the base case of the induction's strengthened property,
    ``crasp.verify.induction``): ``("definition", name, other)`` for two definitions (at BOS
    too), ``("count", i, j)`` for the bodies of ``unrolled_counts`` i and j (BOS is never
    counted), ``("relation", r, None)`` for a ``LinearRelation`` between counts, an equation
    or an inequality (``crasp.verify.relations``; it holds at BOS, where every count is 0).
    The ``second_round`` (``driver.SECOND_ROUND``) adds the ``wider`` inequalities of
    ``crasp.verify.bounds``, and relations between the counts of a single program.

    ``held``: what the search up to N >= ``length`` on the same question established
    (``search``); the first round then takes its candidates, instead of guessing them again
    from samples of up to ``length`` tokens: those it proved up to ``length`` as they are,
    those it gave up on before tried again, together, at the position where it gave up
    (``Held.known``, ``Lemmas.prove``), and none it refuted. Why: those samples are short,
    and many relations guessed from them fail only on longer strings, each refuted or given
    up by the full solver at some position; a relation that fails on a string of up to N
    tokens cannot be part of an induction proof (its step fails on that string's
    positions), so nothing is lost. Over a chain of 40 nested counts against itself (``c_i =
    #(c_{i-1}) > #"b"``) this pass took 10.1 s of the 18.9 s of ``crasp equiv
    --unbounded``, nearly all of it on such relations."""
    single = len(question.programs) != 2
    if single and not second_round:
        return []
    unrolling = _Unrolling(question, alphabet, length, limit, second_round=second_round,
                           held=None if second_round else held)
    z, solver = unrolling.z, unrolling.solver
    nodes = [unrolled_counts(program) for program in question.programs]
    bodies = [] if single else body_pairs(*question.programs, alphabet, length, limit,
                                          question.assumed_domain)
    for position in range(length):
        limit.report(f"lemmas up to length {length}", position, length)
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
