"""Pass: Question -> proof for every length (or a candidate counterexample), by k-induction
over the programs' counts.

Derivation. A program's values at position i are a function of the token at i, of i itself
(positional predicates), of the *state* before i (the value of every count through i - 1)
and, for a guarded count ``#[offset c] P``, of P at i - c. Write V(i) for "the question is
violated at position i". The *base case* is that V holds at no position of a string of length
<= N (``bounded`` or ``enumeration``). The *induction step of depth k* is that no window of
k + 1 consecutive positions p, ..., p + k, starting from any state S that satisfies the
invariant Inv below, has V false at p, ..., p + k - 1 and true at p + k. If both hold for some
k <= N, V holds nowhere, at any length: take a string of length L > N >= k and its last
position L - 1; with p = L - 1 - k >= 0, the prefix of length p reaches a state satisfying
Inv (Inv holds in every reachable state), V is false at p..L-2 (those positions are shorter
strings: induction on L), so V is false at L - 1.

The invariant (true in every reachable state before position p, p >= 0 tokens read):

* n_s >= 0 for each token s of the alphabet (how many times it occurred), sum n_s = p;
* every count c satisfies 0 <= c <= p;
* a count whose body depends on the token alone (no count, no positional predicate below it)
  equals sum of n_s over the tokens s where the body holds: exact, not a bound;
* a guarded count's body at a position before p is unknown (a fresh Boolean), and 0 before
  the string starts.

Strengthening (two programs). The property proved is V' = "no violation, and every pair
equal", for the pairs that ``bounded.proved_pairs`` proves equal at every position of every
string of length <= max_k (the base case of V'): two definitions x and y, the bodies of two
counts, or a linear relation between the counts (``crasp.verify.relations``): an equation
such as X + Y = #"b" for counts of complementary bodies, or an inequality
(``crasp.verify.bounds``) such as X <= #"a" for the number X of positions where
#"a" == #"b", or 2X <= #"a" for those where #"a" == 2 * #"b". Under V' at every earlier
position, two counts with paired bodies (or counting paired definitions) are equal: their
start values are one variable; and every relation holds of the start values (the state
after position p - 1, or before the string, where every count is 0, which satisfies every
relation ``bounded`` keeps). The step must then also re-establish every pair at p + k,
assuming all of them at the start and at p..p+k-1; a pair it cannot is dropped and the steps
re-run (Houdini's fixed point: the remaining pairs still have their base case), down to
plain k-induction on V. Pairs that are inductive only together survive: X <= #"a" alone is
not re-established (a new balanced position after a b), but with X <= #"b" it is (at a new
balanced position with #"a" = #"b" = m, one of them was m - 1).

Exactness for depth 1. When every count of both programs is of the third kind (each program
has depth <= 1 and no guarded count or positional predicate), every state allowed by Inv is
reached by some string (any arrangement of the n_s), so the step of depth 0 is a complete
Presburger decision: it is unsatisfiable (proved) or its model is a real counterexample.

What it cannot prove: an equivalence that rests on a relation between counts of depth >= 2 that
neither Inv nor a pair states (an equation, or an inequality of ``bounds``' templates a v_i - b
v_j <= c over two columns, where a column may be a sum of tokens over at most four or of two
counts among at most eight, v_i <= c) and that no k consecutive positions re-establish: over a
b c d e, the number X of positions where 2 #"a" == #"b" + #"c" + #"d" + #"e" is at most #"a",
but that is inductive only together with 2X <= #"b" + #"c" + #"d" + #"e", a sum of four tokens
(no column over five), and a state that breaks it can keep the answers equal for any number of
positions before they differ; likewise a sum of three counts, or a coefficient beyond 12
(``bounds.RATIO_LIMIT``; from 7 on, only a slope the samples show).
Then the answer is ``unknown``. A model of a
failed step is turned into a string (the tokens of the state, grouped, then the window) and
run through the interpreter: where that string violates, it is a real counterexample longer
than N.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import syntax
from crasp.verify.encode import (CountTable, ParikhCounts, ProgramEncoder, count_nodes,
                                 is_token_only, one_hot_token, token_only_definitions)
from crasp.verify.explain import is_violated
from crasp.verify.questions import Question
from crasp.verify.sweep import unrolled_counts
from crasp.verify.solver import UNLIMITED, TimeLimit, Undecided, z3

REALIZE_LIMIT = 4096
"""The longest string a failed step's model is turned into (longer ones are not tried)."""

SHRINK_ROUNDS = 24
"""How many times the solver is asked for a failed step's model with fewer tokens before it."""


@dataclass(frozen=True)
class InductionResult:
    proved: bool
    k: int | None                          # the depth of the step that proved it
    tried: int                             # the deepest step tried
    counterexample: tuple[str, ...] | None  # a confirmed violating string (longer than N)
    exact: bool                            # the step of depth 0 decides (see the docstring)

    @property
    def inconclusive(self) -> bool:
        """Neither a proof nor a confirmed counterexample."""
        return not self.proved and self.counterexample is None


def is_exact(question: Question) -> bool:
    """Whether every count of every program depends on the token alone (see the docstring)."""
    for program in question.evaluated:
        pure = token_only_definitions(program)
        if any(isinstance(node, syntax.PositionTest)
               for d in program.definitions for node in syntax.walk(d.expr)):
            return False
        if not all(is_token_only(node, pure) for node in count_nodes(program)):
            return False
    return True


class _Window:
    """The symbolic start state (with Inv asserted on ``solver``) and the encoders over it."""

    def __init__(self, question: Question, alphabet: tuple[str, ...], solver,
                 pairs: list[tuple]):
        z = self.z = z3()
        self.start = z.Int("p")
        self.parikh = [z.Int(f"n#{k}") for k in range(len(alphabet))]
        solver.add(self.start >= 0, z.Sum(self.parikh) == self.start,
                   *[n >= 0 for n in self.parikh])
        self.fresh = 0
        self.counts = ParikhCounts(solver, self.parikh, self.start, "m")
        self.encoders = []
        table = CountTable(solver)
        self.unrolled = [unrolled_counts(program) for program in question.evaluated]
        # the second program's counts that start equal to one of the first program's: those
        # whose bodies are paired, or that count paired definitions
        same: dict[int, int] = {j: i for kind, i, j in pairs if kind == "count"}
        partner = {other: name for kind, name, other in pairs if kind == "definition"}
        counting = {node.body.name: i for i, node in enumerate(self.unrolled[0])
                    if isinstance(node.body, syntax.Ref)}
        for j, node in enumerate(self.unrolled[1] if len(question.programs) == 2 else ()):
            if isinstance(node.body, syntax.Ref) and partner.get(node.body.name) in counting:
                same.setdefault(j, counting[partner[node.body.name]])
        first: list = []
        for index, program in enumerate(question.evaluated):
            start: dict[int, object] = {}
            for number, node in enumerate(self.unrolled[index]):
                if index == 1 and number in same:
                    value = first[same[number]]
                else:
                    value = z.Int(f"c{index}#{number}")
                    solver.add(value >= 0, value <= self.start)
                start[id(node)] = value
                if index == 0:
                    first.append(value)
            self.encoders.append(ProgramEncoder(program, alphabet, table, start,
                                                self.earlier_body))
        # the relations between counts hold in the start state (an earlier position)
        values = self.count_values()
        solver.add(*[relation.holds(z, values) for kind, relation, _ in pairs
                     if kind == "relation"])

    def count_values(self) -> list:
        """Every unrolled count's value (at the start, or the position just stepped), then the
        Parikh counts: the vector a relation between counts weighs."""
        return [encoder.counts[id(node)] for encoder, nodes in zip(self.encoders, self.unrolled)
                for node in nodes] + list(self.counts.current)

    def equalities(self, values: list[dict], pairs: list[tuple]) -> list:
        """Each pair's equality at the position just stepped."""
        found = []
        counted = self.count_values()
        for kind, left, right in pairs:
            if kind == "definition":
                found.append(values[0][left] == values[1][right])
            elif kind == "relation":
                found.append(left.holds(self.z, counted))
            else:   # the bodies' values, as the encoders last recorded them
                first, second = (encoder.history[id(nodes[index])][-1] for encoder, nodes, index
                                 in zip(self.encoders, self.unrolled, (left, right)))
                found.append(first == second)
        return found

    def earlier_body(self, node: syntax.Count, position):
        """A guarded count's body before the window: unknown, and false before the string."""
        self.fresh += 1
        return self.z.And(position >= 0, self.z.Bool(f"earlier#{self.fresh}"))


def prove(question: Question, alphabet: tuple[str, ...], max_k: int, pairs: list[tuple] = (),
          limit: TimeLimit = UNLIMITED) -> InductionResult:
    """Try the induction steps of depth 0..``max_k`` (the base case, lengths <= max_k at
    least, is the caller's), with the property strengthened by ``pairs`` (definitions of the
    two programs proved equal at every position of every string of length <= ``max_k``;
    ``bounded.proved_pairs``). A pair that the deepest step cannot carry over is dropped and
    the steps are tried again (Houdini's fixed point), down to no pairs at all. A solver call
    that ``limit`` or z3 leaves undecided ends the attempt (``Undecided``)."""
    pairs = list(pairs)
    while True:
        result, failing = _steps(question, alphabet, max_k, pairs, limit)
        if result.proved or result.counterexample is not None or not failing:
            return result
        pairs = [pair for pair in pairs if pair not in failing]


def _steps(question: Question, alphabet: tuple[str, ...], max_k: int, pairs: list[tuple],
           limit: TimeLimit) -> tuple[InductionResult, list[tuple]]:
    """The steps of depth 0..max_k for the property "no violation, and every pair equal";
    the result, and the pairs the deepest step could not prove."""
    z = z3()
    solver = z.Solver()
    window = _Window(question, alphabet, solver, pairs)
    exact = is_exact(question)
    tokens: list[list] = []
    for k in range(max_k + 1):
        limit.report(f"k-induction up to k = {max_k}", k, max_k + 1)
        bits, exactly_one = one_hot_token(f"w{k}", len(alphabet))
        tokens.append(bits)
        solver.add(exactly_one)
        counts = window.counts.advance(bits)
        values = [encoder.step(bits, window.start + k, counts) for encoder in window.encoders]
        if question.prefix_closed:   # it holds where a violation is, so at the window's start
            solver.add(values[-1][question.domain.answer.name])
        violated = question.violation([value[program.answer.name]
                                       for value, program in zip(values, question.evaluated)])
        equal = window.equalities(values, pairs)
        step = f"the induction step of depth {k}"
        if _unsatisfiable(z, solver, z.Or(violated, z.Not(z.And(equal))), limit, step):
            return InductionResult(True, k, k, None, exact), []
        solver.push()
        solver.add(violated)
        violable = limit.check(solver, step) == z.sat
        found = _realize(z, solver, window, tokens, alphabet, question, limit) \
            if violable else None
        solver.pop()
        if found is not None or (exact and k == 0 and violable):
            return InductionResult(False, None, k, found, exact), []
        if k == max_k:
            failing = [pair for pair, same in zip(pairs, equal)
                       if not _unsatisfiable(z, solver, z.Not(same), limit, step)]
            return InductionResult(False, None, max_k, None, exact), failing
        solver.add(z.Not(violated), *equal)
    raise AssertionError("unreachable")


def _unsatisfiable(z, solver, goal, limit: TimeLimit, what: str) -> bool:
    solver.push()
    solver.add(goal)
    verdict = limit.check(solver, what)
    solver.pop()
    return verdict == z.unsat


def _realize(z, solver, window: _Window, tokens: list[list], alphabet: tuple[str, ...],
             question: Question, limit: TimeLimit) -> tuple[str, ...] | None:
    """A string from the failed step's model (with as few tokens before the window as the
    solver finds in ``SHRINK_ROUNDS`` halvings, while ``limit`` allows), if the interpreter
    confirms it violates."""
    model = solver.model()
    for _ in range(SHRINK_ROUNDS):
        size = model.evaluate(window.start, model_completion=True).as_long()
        if size == 0:
            break
        solver.push()
        solver.add(window.start <= size // 2)
        try:
            smaller = limit.check(solver, "a shorter counterexample") == z.sat
        except Undecided:   # the model in hand is still a model
            smaller = False
        if smaller:
            model = solver.model()
        solver.pop()
        if not smaller:
            break
    counts = [model.evaluate(n, model_completion=True).as_long() for n in window.parikh]
    if sum(counts) + len(tokens) > REALIZE_LIMIT:
        return None
    prefix = [alphabet[k] for k, n in enumerate(counts) for _ in range(n)]
    window_tokens = [alphabet[next(k for k, bit in enumerate(bits)
                                   if z.is_true(model.evaluate(bit, model_completion=True)))]
                     for bits in tokens]
    string = tuple(prefix + window_tokens)
    return string if is_violated(question, string) else None
