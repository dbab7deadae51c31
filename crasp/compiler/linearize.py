"""Pass: Program -> Linearized. Every Boolean becomes a circuit over strict linear count tests.

Count-valued expressions are normalized into *piecewise-linear terms*: trees whose leaves are
linear forms ``sum(alpha_k * #[phi_k]) + c`` and whose inner nodes are ``min``, ``max`` and
``if P``. The arithmetic pushes through the tree:

* ``t + u`` replaces every leaf L of t by ``u + L`` (u with L added to each of its leaves):
  min(a, b) + u = min(a + u, b + u), and (P ? a : b) + u = P ? a + u : b + u;
* ``k * t`` scales every leaf and, for k < 0, swaps min and max (k * min(a, b) = max(ka, kb));
  ``t - u`` is ``t + (-1) * u``;
* ``min``/``max`` collect their operands (nested ones of the same kind are flattened), and
  ``c if P else d`` becomes *cases* (guard, term) with exclusive guards P and !P; an if-else
  inside a branch is flattened into the list (its guards conjoined with P or !P), so a chain
  of if-else stays one level deep, in the tree and in the circuit.

A comparison becomes a Boolean over the strict test "tree < 0", which distributes over the
tree (theory §2.4, without guard comparisons): ``min(...) < 0`` is the OR of its parts,
``max(...) < 0`` the AND, and cases give ``(g_1 && t_1 < 0) || (g_2 && t_2 < 0) || ...``
(for ``P ? a : b``: ``(P && a < 0) || (!P && b < 0)``); a leaf is a ``Test``. Counts are
integers, so with D = t1 - t2:

    t1 < t2  <=>  D < 0            t1 <= t2  <=>  D - 1 < 0
    t1 > t2  <=>  -D < 0           t1 >= t2  <=>  -D - 1 < 0
    t1 == t2 <=>  !(D < 0) && !(-D < 0)       t1 != t2 <=>  (D < 0) || (-D < 0)

Size. A term has at most 2^m leaves, m the number of min, max and if-else nodes it contains
with definitions expanded (a sum multiplies leaf counts, a min/max or if-else adds them), and a
comparison yields as many tests as D has leaves. Identical tests are shared (the circuit is
hash-consed). A term or comparison that would exceed ``MAX_PIECES`` leaves is rejected with a
``ProgramError`` at the expression rather than compiled into an enormous model.

Depth is preserved exactly: a leaf keeps every count it was built from (a cancelled or
zero-scaled count stays as a term with coefficient 0), and no simplification removes a
subexpression, so the circuit node of every Boolean definition has the definition's depth.

Positional constructs: a periodic predicate (``pos_even``, ``mod(m, r)``) is a depth-0 leaf
``Position``; a guarded count ``#[offset(c)] P`` (also ``pred``, ``pred4``) is 0 or 1, so it
is the term ``1 if L else 0`` for the node ``L = Local(P, c)`` (cases, as for an if-else): a
comparison over it splits into the branch where L holds and the one where it does not, each a
strict test of the remaining (global) counts, or a constant when none remain. Which encodings
realize them is decided before this pass (``crasp.compiler.encodings``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from crasp import syntax
from crasp.compiler import circuit
from crasp.compiler.circuit import And, Circuit, Or
from crasp.util.deep_stack import call_with_deep_stack
from crasp.errors import ProgramError
from crasp.fmt import format_expr

MAX_PIECES = 4096
"""The most linear pieces a count term or a comparison may expand into."""
MAX_GUARDED_BRANCHES = 16 * MAX_PIECES
"""The most guarded branches the if-else cases of one definition may build in all. Each
if-else rebuilds every branch of its operands under a new guard (``choose``), so a chain of n
nested if-else builds about n^2 / 2 of them: this bounds the work (a 10,000-deep chain is
refused after about 360 levels, in well under a second, instead of after 4,097 levels and
8 million branches), and any program it refuses has terms within a factor of a few hundred of
``MAX_PIECES``."""


@dataclass(frozen=True)
class Linear:
    """``sum(coefficient * #[body]) + constant``, terms sorted by body id; a coefficient may be
    0 (a cancelled count, kept for its depth)."""

    terms: tuple[tuple[int, int], ...] = ()
    constant: int = 0
    size = 1  # leaves: a class attribute, like Extreme.size and Cases.size

    def plus(self, other: Linear) -> Linear:
        merged = dict(self.terms)
        for body, coefficient in other.terms:
            merged[body] = merged.get(body, 0) + coefficient
        return Linear(tuple(sorted(merged.items())), self.constant + other.constant)

    def times(self, factor: int) -> Linear:
        return Linear(tuple((b, factor * c) for b, c in self.terms), factor * self.constant)


@dataclass(frozen=True)
class Extreme:
    """The minimum (``is_min``) or maximum of two or more terms."""

    is_min: bool
    parts: tuple[Term, ...]
    size: int = field(compare=False, default=0)


@dataclass(frozen=True)
class Cases:
    """``term`` where the circuit node ``guard`` holds, for each branch; exactly one guard
    holds at every position."""

    branches: tuple[tuple[int, Term], ...]
    size: int = field(compare=False, default=0)


Term = Union[Linear, Extreme, Cases]


def extreme(is_min: bool, parts: list[Term]) -> Extreme:
    flat: list[Term] = []
    for part in parts:
        if isinstance(part, Extreme) and part.is_min == is_min:
            flat.extend(part.parts)
        else:
            flat.append(part)
    return Extreme(is_min, tuple(flat), sum(part.size for part in flat))


def cases(branches: list[tuple[int, Term]]) -> Cases:
    return Cases(tuple(branches), sum(term.size for _, term in branches))


def add(term: Term, other: Term) -> Term:
    """``term + other``: ``other`` is added to every leaf of ``term``."""
    if isinstance(term, Extreme):
        return extreme(term.is_min, [add(part, other) for part in term.parts])
    if isinstance(term, Cases):
        return cases([(guard, add(part, other)) for guard, part in term.branches])
    if isinstance(other, Linear):
        return term.plus(other)
    return add(other, term)


def scale(factor: int, term: Term) -> Term:
    if isinstance(term, Linear):
        return term.times(factor)
    if isinstance(term, Extreme):
        return extreme(term.is_min == (factor >= 0), [scale(factor, p) for p in term.parts])
    return cases([(guard, scale(factor, part)) for guard, part in term.branches])


@dataclass
class Linearized:
    """The circuit of a program: ``definitions`` maps each Boolean definition to its node and
    ``answer`` is the answer's node."""

    program: syntax.Program
    circuit: Circuit
    definitions: dict[str, int]
    answer: int


class _Linearizer:
    def __init__(self, program: syntax.Program):
        self.program = program
        self.circuit = Circuit(program.alphabet)
        self.booleans: dict[str, int] = {}
        self.counts: dict[str, Term] = {}
        self.origin = ""
        self.branches_built = 0

    def error(self, message: str, expr: syntax.Expr, note: str | None = None) -> ProgramError:
        return ProgramError(message, source=self.program.source, filename=self.program.filename,
                            span=expr.span, note=note)

    def run(self) -> Linearized:
        """The circuit; ``term`` and ``boolean`` follow the expression tree recursively, so
        they run with a deep stack (``crasp.util.deep_stack``): nesting up to tens of thousands of
        levels compiles, deeper nesting is refused."""
        return call_with_deep_stack(self._run)

    def _run(self) -> Linearized:
        for definition in self.program.definitions:
            self.origin = definition.name
            self.branches_built = 0
            try:
                if definition.type == syntax.BOOL:
                    ident = self.boolean(definition.expr)
                    self.booleans[definition.name] = ident
                    self.circuit.names.setdefault(ident, definition.name)
                else:
                    self.counts[definition.name] = self.term(definition.expr)
            except RecursionError:  # an expression tree thousands deep
                raise self.error(f"'{definition.name}' nests its expression too deeply for the "
                                 f"compiler (beyond Python's recursion limit)", definition.expr,
                                 note="split it into several definitions") from None
        return Linearized(self.program, self.circuit, dict(self.booleans),
                          self.booleans[self.program.answer.name])

    # ------------------------------------------------------------ count terms

    def limit(self, pieces: int, expr: syntax.Expr) -> None:
        if pieces > MAX_PIECES:
            raise self.error(
                f"this count expression expands into {pieces} linear pieces, more than the "
                f"compiler's limit of {MAX_PIECES}", expr,
                note="each min, max and if-else splits a count into pieces and a sum "
                     "multiplies their numbers; every piece becomes an attention dimension")

    def budget_branches(self, branches: int, expr: syntax.Expr) -> None:
        self.branches_built += branches
        if self.branches_built > MAX_GUARDED_BRANCHES:
            raise self.error(
                f"the if-else cases of '{self.origin}' build more than {MAX_GUARDED_BRANCHES} "
                f"guarded branches in all (this if-else alone rebuilds {branches})", expr,
                note="each if-else rebuilds the branches of both operands under its guard, so "
                     "n nested if-else build about n^2 / 2; split the definition, or use fewer "
                     "nested cases")

    def checked(self, term: Term, expr: syntax.Expr) -> Term:
        self.limit(term.size, expr)
        return term

    def term(self, expr: syntax.Expr) -> Term:
        kind = type(expr)
        if kind is syntax.Ref:
            return self.counts[expr.name]
        if kind is syntax.IntConst:
            return Linear((), expr.value)
        if kind is syntax.Count and expr.relation is not None:
            local = self.circuit.add(circuit.Local(self.boolean(expr.body), expr.relation.offset),
                                     _label(expr), self.origin)
            return cases([(local, Linear((), 1)),
                          (self.circuit.negate(local, _label(expr), self.origin), Linear((), 0))])
        if kind is syntax.Count:
            return Linear(((self.boolean(expr.body), 1),), 0)
        if kind is syntax.Scale:
            return scale(expr.factor, self.term(expr.operand))
        if kind is syntax.Conditional:
            guard, if_true, if_false = (self.boolean(expr.condition), self.term(expr.if_true),
                                        self.term(expr.if_false))
            self.budget_branches(if_true.size + if_false.size, expr)
            return self.checked(self.choose(guard, if_true, if_false, _label(expr)), expr)
        left, right = self.term(expr.left), self.term(expr.right)
        if kind is syntax.Add:
            return self.sized_add(left, right, expr)
        if kind is syntax.Sub:
            return self.sized_add(left, scale(-1, right), expr)
        if kind in (syntax.Min, syntax.Max):
            return self.checked(extreme(kind is syntax.Min, [left, right]), expr)
        raise TypeError(f"not a count expression: {expr!r}")

    def sized_add(self, left: Term, right: Term, expr: syntax.Expr) -> Term:
        self.limit(left.size * right.size, expr)  # refuse before building it
        return self.flat(add(left, right))

    def flat(self, term: Term) -> Term:
        """Cases nested in a branch of cases (a sum of two cases terms, such as two local
        counts) become one level: (g, (h ? a : b)) is (g && h, a), (g && !h, b). The guards
        are exclusive and cover every position as before, and a comparison over the result is
        one OR of ANDs instead of alternating levels (fewer hidden layers)."""
        if isinstance(term, Extreme):
            return extreme(term.is_min, [self.flat(part) for part in term.parts])
        if not isinstance(term, Cases):
            return term
        branches = []
        for guard, part in term.branches:
            inner = self.flat(part)
            if not isinstance(inner, Cases):
                branches.append((guard, inner))
                continue
            for other, leaf in inner.branches:
                both = self.circuit.connect(And, [guard, other], self.circuit.text[guard],
                                            self.origin)
                branches.append((both, leaf))
        return cases(branches)

    # ------------------------------------------------------------ Booleans

    def boolean(self, expr: syntax.Expr) -> int:
        kind = type(expr)
        if kind is syntax.Ref:
            return self.booleans[expr.name]
        c = self.circuit
        text = _label(expr)
        if kind is syntax.TokenTest:
            return c.add(circuit.Token(expr.token), text, self.origin)
        if kind is syntax.PositionTest:
            return c.add(circuit.Position(expr.modulus, expr.residue), text, self.origin)
        if kind is syntax.BoolConst:
            return c.constant(expr.value, self.origin)
        if kind is syntax.Not:
            return c.negate(self.boolean(expr.operand), text, self.origin)
        if kind in (syntax.And, syntax.Or):
            items = [self.boolean(expr.left), self.boolean(expr.right)]
            return c.connect(And if kind is syntax.And else Or, items, text, self.origin)
        if kind is syntax.Conditional:
            guard = self.boolean(expr.condition)
            return c.connect(Or, [
                c.connect(And, [guard, self.boolean(expr.if_true)], text, self.origin),
                c.connect(And, [c.negate(guard, text, self.origin),
                                self.boolean(expr.if_false)], text, self.origin),
            ], text, self.origin)
        if kind is syntax.Compare:
            return self.compare(expr, text)
        raise TypeError(f"not a Boolean expression: {expr!r}")

    def compare(self, expr: syntax.Compare, text: str) -> int:
        left, right = self.term(expr.left), self.term(expr.right)
        difference = self.sized_add(left, scale(-1, right), expr)
        below = lambda term: self.negative(term, text)  # noqa: E731
        minus_one = Linear((), -1)
        c = self.circuit
        if expr.op == "<":
            return below(difference)
        if expr.op == "<=":
            return below(add(difference, minus_one))
        if expr.op == ">":
            return below(scale(-1, difference))
        if expr.op == ">=":
            return below(add(scale(-1, difference), minus_one))
        less, greater = below(difference), below(scale(-1, difference))
        if expr.op == "==":
            return c.connect(And, [c.negate(less, text, self.origin),
                                   c.negate(greater, text, self.origin)], text, self.origin)
        return c.connect(Or, [less, greater], text, self.origin)

    def choose(self, guard: int, if_true: Term, if_false: Term, text: str) -> Cases:
        """``if_true if guard else if_false`` as flat cases: a branch (g, t) of ``if_true``
        becomes (guard && g, t), one of ``if_false`` (!guard && g, t)."""
        c = self.circuit
        branches = []
        for condition, term in ((guard, if_true), (c.negate(guard, text, self.origin), if_false)):
            inner = term.branches if isinstance(term, Cases) else ((None, term),)
            for g, part in inner:
                both = condition if g is None else c.connect(And, [condition, g], text,
                                                             self.origin)
                branches.append((both, part))
        return cases(branches)

    def negative(self, term: Term, text: str) -> int:
        """The node for "term < 0", distributed over the term's min/max/cases tree."""
        c = self.circuit
        if isinstance(term, Linear):
            if not term.terms:  # no count at all: a constant comparison
                return c.constant(term.constant < 0, self.origin)
            return c.add(circuit.Test(term.terms, term.constant), text, self.origin)
        if isinstance(term, Extreme):
            parts = [self.negative(part, text) for part in term.parts]
            return c.connect(Or if term.is_min else And, parts, text, self.origin)
        return c.connect(Or, [c.connect(And, [guard, self.negative(part, text)], text,
                                        self.origin)
                              for guard, part in term.branches], text, self.origin)


LABEL_NODES = 64


def _label(expr: syntax.Expr) -> str:
    """A node's label: the source text of a small expression; a large one is named by its kind
    and size, since printing every node of a long chain would cost time quadratic in it."""
    for count, _ in enumerate(syntax.walk(expr), start=1):
        if count > LABEL_NODES:
            return f"({type(expr).__name__.lower()} of more than {LABEL_NODES} operations)"
    return format_expr(expr)


def linearize(program: syntax.Program) -> Linearized:
    """Build the circuit of ``program`` (raises ``ProgramError`` on terms too large)."""
    return _Linearizer(program).run()
