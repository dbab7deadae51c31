"""Expr -> canonical form: equal forms mean equal values at every position of every input.

Used to decide whether two readings of the same text mean the same (``crasp.hahn``, and
``crasp.fmt`` checking its own output). The form is a hashable value built bottom-up, with the
program's earlier definitions inlined for its names (so a name and its definition compare by
meaning):

* A count is a linear form ``sum(coefficient * atom) + constant`` (``+``, ``-``, scaling and
  literals are folded; counts are integers). Its atoms are counts (``#P`` with P canonical),
  ``min``/``max`` (unordered pairs), conditionals, and names left undefined.
* A Boolean is a truth table over its atoms, keeping only the atoms it depends on, so Boolean
  algebra is decided exactly. Atoms: token tests (at most one holds at a position: the table
  has only those rows), predicates, names, guarded counts ``#[rel] P`` (0 or 1: the count of
  the single position j = i - c, so they are Boolean atoms), and comparisons. A comparison
  ``c op d`` is a test of the linear form ``c - d``; when that form's only atoms are guarded
  counts, the test is evaluated row by row of the table; otherwise it is itself an atom:
  ``<`` and ``>`` become ``<=`` on integers (``c < d`` iff ``c - d + 1 <= 0``), ``>``/``>=``
  are negated into ``<=``, ``!=`` is the negation of ``==``, and each test is oriented so that
  its first atom's coefficient is positive (``e <= 0`` iff not ``-e + 1 <= 0``).
  Beyond ``MAX_TABLE_ATOMS`` atoms the connectives are kept as a tree instead.

  Before that, a test whose outcome the atoms' ranges decide is folded to a constant: ``#P``
  is in [0, inf), ``#[rel] P`` in [0, 1], ``min``/``max``/``if`` in the range of their operands,
  a name is unbounded (so ``#"a" >= 0`` is ``true``, ``#[pred] P - 2 > 0`` is ``false``); and a
  test is divided by the gcd of its coefficients (``2 * c <= 3`` is ``c <= 1``: counts are
  integers), and an equality whose form is bounded by 0 on one side is an inequality (``#P == 0``
  is ``#P <= 0``, so it is the negation of ``#P >= 1``). A count of a body that is false
  everywhere is 0; a conditional whose branches
  have the same form is that form, and one whose condition is constant is its branch.

Sound, not complete: a form never equates two different meanings, but two expressions that are
equal for deeper reasons (``#("a" || "b") >= #"a"``) get different forms.
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import Hashable, Mapping

from crasp import syntax

MAX_TABLE_ATOMS = 10
MAX_NESTING = 100
MAX_INLINED_NAMES = 64
Linear = tuple[tuple[tuple[Hashable, int], ...], int]   # sorted (atom, coefficient), constant
_BOOLEAN = (syntax.TokenTest, syntax.BoolConst, syntax.PositionTest, syntax.Not, syntax.And,
            syntax.Or, syntax.Compare)
_TESTS = {"<=": operator.le, "==": operator.eq}
_FALSE, _TRUE = ("table", (), (False,)), ("table", (), (True,))   # constant Boolean forms
_UNBOUNDED = (-math.inf, math.inf)


def canonical(expr: syntax.Expr, definitions: Mapping[str, syntax.Expr] = {}) -> Hashable:
    """The canonical form of a Boolean or count expression (names from ``definitions`` are
    replaced by their expressions)."""
    return _form(_Canonical(definitions), expr)


def _form(form: _Canonical, expr: syntax.Expr) -> Hashable:
    if form.is_boolean(expr):
        return ("bool", form.boolean(expr))
    return ("count", form.linear(expr))


def same_meaning(first: syntax.Expr, second: syntax.Expr,
                 definitions: Mapping[str, syntax.Expr] = {}) -> bool:
    """Whether two trees have the same canonical form.

    Ill-typed trees have none, and trees nested deeper than ``MAX_NESTING`` (with the
    definitions inlined) are not put in one: those compare by structure (same structure, same
    meaning; a different structure is then taken as a different meaning).
    """
    if syntax.same_structure(first, second):
        return True
    if max(syntax.nesting(first), syntax.nesting(second)) > MAX_NESTING:
        return False
    forms = form_or_none(first, definitions), form_or_none(second, definitions)
    return forms[0] is not None and forms[0] == forms[1]


def form_or_none(expr: syntax.Expr,
                 definitions: Mapping[str, syntax.Expr] = {}) -> Hashable | None:
    """The canonical form of ``expr``, or None where it has none: ill-typed trees, and trees
    nested deeper than ``MAX_NESTING`` (the form is built by recursion)."""
    return Forms(definitions).of(expr)


class Forms:
    """``form_or_none`` of many expressions that share subexpressions (the definitions of a
    program and the counts in them), each shared node put in its form once. The forms are
    cached by the identity of the nodes, so every expression given is kept alive here (a node
    made and dropped by the caller could otherwise lend its identity to another).

    ``definitions`` may grow between calls (a name must be added before any expression that
    reads it is given). ``inlined_names`` bounds how many names are inlined (None: all of
    them); inlining is then linear only if no inlined definition reads another."""

    def __init__(self, definitions: Mapping[str, syntax.Expr] = {},
                 inlined_names: int | None = MAX_INLINED_NAMES):
        self.canonical = _Canonical(definitions, inlined_names)
        self.given: list[syntax.Expr] = []

    def of(self, expr: syntax.Expr) -> Hashable | None:
        if syntax.nesting(expr) > MAX_NESTING:
            return None
        self.given.append(expr)
        try:
            return _form(self.canonical, expr)
        except (TypeError, RecursionError):
            return None


def constant_of(form: Hashable) -> bool | int | None:
    """The value of a form that is a constant (a Boolean or a count), else None."""
    kind, body = form
    if kind == "bool":
        return body[2][0] if body[0] == "table" and not body[1] else None
    terms, constant = body
    return None if terms else constant


def _negated(form: Linear) -> Linear:
    return tuple((a, -c) for a, c in form[0]), -form[1]


def _shifted(form: Linear, by: int) -> Linear:
    return form[0], form[1] + by


class _Canonical:
    def __init__(self, definitions: Mapping[str, syntax.Expr],
                 inlined_names: int | None = MAX_INLINED_NAMES):
        self.definitions = definitions
        self.inlined_names_limit = inlined_names
        self.inlined_names: set[str] = set()
        self.ranges: dict[Hashable, tuple[float, float]] = {}   # count atom -> [low, high]
        # forms by node identity: a conditional's branches are compared and then put in its
        # atom, so without these a chain of k conditionals would be formed 4^k times
        self.linear_forms: dict[int, Linear] = {}
        self.boolean_forms: dict[int, Hashable] = {}

    def definition(self, node: syntax.Expr) -> syntax.Expr | None:
        """The expression a name stands for, while the inlining stays small (at most
        MAX_INLINED_NAMES names, each inlined wherever it appears)."""
        if not isinstance(node, syntax.Ref) or node.name not in self.definitions:
            return None
        if node.name not in self.inlined_names:
            if self.inlined_names_limit is not None \
                    and len(self.inlined_names) >= self.inlined_names_limit:
                return None
            self.inlined_names.add(node.name)
        return self.definitions[node.name]

    def is_boolean(self, expr: syntax.Expr) -> bool:
        if isinstance(expr, syntax.Conditional):
            return self.is_boolean(expr.if_true) or self.is_boolean(expr.if_false)
        inlined = self.definition(expr)
        return self.is_boolean(inlined) if inlined is not None else isinstance(expr, _BOOLEAN)

    # ------------------------------------------------------------ counts

    def linear(self, expr: syntax.Expr) -> Linear:
        if id(expr) not in self.linear_forms:
            self.linear_forms[id(expr)] = self._linear(expr)
        return self.linear_forms[id(expr)]

    def _linear(self, expr: syntax.Expr) -> Linear:
        terms: dict[Hashable, int] = {}
        constant = 0
        stack = [(1, expr)]
        while stack:
            factor, node = stack.pop()
            inlined = self.definition(node)
            if inlined is not None:
                stack.append((factor, inlined))
            elif isinstance(node, syntax.Add):
                stack += [(factor, node.left), (factor, node.right)]
            elif isinstance(node, syntax.Sub):
                stack += [(factor, node.left), (-factor, node.right)]
            elif isinstance(node, syntax.Scale):
                stack.append((factor * node.factor, node.operand))
            elif isinstance(node, syntax.IntConst):
                constant += factor * node.value
            elif isinstance(node, syntax.Conditional) and (branch := self.branch(node)):
                stack.append((factor, branch))
            else:
                atom = self.count_atom(node)
                if atom is None:   # a count of a body false everywhere
                    continue
                terms[atom] = terms.get(atom, 0) + factor
        return tuple(sorted(((a, c) for a, c in terms.items() if c), key=repr)), constant

    def branch(self, node: syntax.Conditional) -> syntax.Expr | None:
        """The branch a conditional always takes, or one of two branches with the same form."""
        condition = self.boolean(node.condition)
        if condition in (_TRUE, _FALSE):
            return node.if_true if condition == _TRUE else node.if_false
        same = self.linear(node.if_true) == self.linear(node.if_false)
        return node.if_true if same else None

    def range_of(self, form: Linear) -> tuple[float, float]:
        terms, constant = form
        low = high = constant
        for atom, coefficient in terms:
            atom_low, atom_high = self.ranges.get(atom, _UNBOUNDED)
            ends = (coefficient * atom_low, coefficient * atom_high)
            low, high = low + min(ends), high + max(ends)
        return low, high

    def count_atom(self, node: syntax.Expr) -> Hashable | None:
        """The atom of a count that is not linear (None: a count that is always 0), with its
        range recorded in ``ranges``."""
        if isinstance(node, syntax.Count):
            body = self.boolean(node.body)
            if body == _FALSE:
                return None
            if node.relation is not None:   # 0 or 1: a Boolean atom of the truth table
                atom: Hashable = ("#[]", node.relation.offset, body)
                self.ranges[atom] = (0, 1)
            else:
                atom = ("#", body)
                self.ranges[atom] = (0, math.inf)
            return atom
        if isinstance(node, (syntax.Min, syntax.Max)):
            left, right = self.linear(node.left), self.linear(node.right)
            atom = (type(node).__name__, frozenset((left, right)))
            pick = min if isinstance(node, syntax.Min) else max
            (left_low, left_high), (right_low, right_high) = (self.range_of(left),
                                                              self.range_of(right))
            self.ranges[atom] = (pick(left_low, right_low), pick(left_high, right_high))
            return atom
        if isinstance(node, syntax.Conditional):
            if_true, if_false = self.linear(node.if_true), self.linear(node.if_false)
            atom = ("if", self.boolean(node.condition), if_true, if_false)
            (true_low, true_high), (false_low, false_high) = (self.range_of(if_true),
                                                              self.range_of(if_false))
            self.ranges[atom] = (min(true_low, false_low), max(true_high, false_high))
            return atom
        return _name(node)

    # ------------------------------------------------------------ Booleans

    def boolean(self, expr: syntax.Expr) -> Hashable:
        if id(expr) not in self.boolean_forms:
            self.boolean_forms[id(expr)] = self._boolean(expr)
        return self.boolean_forms[id(expr)]

    def _boolean(self, expr: syntax.Expr) -> Hashable:
        atoms: list[Hashable] = []
        tree = self.connectives(expr, atoms)
        if len(atoms) > MAX_TABLE_ATOMS:
            return ("tree", tree)
        full = {values: _evaluate(tree, dict(zip(atoms, values)))
                for values in itertools.product((False, True), repeat=len(atoms))
                if _possible(dict(zip(atoms, values)))}
        relevant = sorted((a for k, a in enumerate(atoms) if _depends_on(full, k)), key=repr)
        table = []
        for values in itertools.product((False, True), repeat=len(relevant)):
            chosen = dict(zip(relevant, values))
            row = tuple(chosen.get(atom, False) for atom in atoms)
            if row in full:   # the irrelevant atoms false: a possible row if any is
                table.append(full[row])
        return ("table", tuple(relevant), tuple(table))

    def connectives(self, expr: syntax.Expr, atoms: list) -> Hashable:
        """A tree of ("and"/"or"/"not"/"test", ...) over atoms and constants; collects atoms."""
        inlined = self.definition(expr)
        if inlined is not None:
            return self.connectives(inlined, atoms)
        if isinstance(expr, syntax.BoolConst):
            return expr.value
        if isinstance(expr, syntax.Not):
            return ("not", self.connectives(expr.operand, atoms))
        if isinstance(expr, (syntax.And, syntax.Or)):
            return ("and" if isinstance(expr, syntax.And) else "or",
                    self.connectives(expr.left, atoms), self.connectives(expr.right, atoms))
        if isinstance(expr, syntax.Conditional):
            condition = self.connectives(expr.condition, atoms)
            return ("or", ("and", condition, self.connectives(expr.if_true, atoms)),
                    ("and", ("not", condition), self.connectives(expr.if_false, atoms)))
        if isinstance(expr, syntax.Compare):
            return self.comparison(expr, atoms)
        if isinstance(expr, syntax.TokenTest):
            return _atom(("token", expr.token), atoms)
        return _atom(_name(expr), atoms)

    def comparison(self, node: syntax.Compare, atoms: list) -> Hashable:
        # _linear: a node made here must not be cached by an identity that can be reused
        difference = self._linear(syntax.Add(node.left, syntax.Scale(-1, node.right)))
        op, negate = node.op, False
        if op in (">", ">="):
            difference, op = _negated(difference), {">": "<", ">=": "<="}[op]
        if op == "<":
            difference, op = _shifted(difference, 1), "<="
        if op == "!=":
            op, negate = "==", True
        bounds = self.range_of(difference)
        decided = _decided(op, bounds)
        if decided is not None:
            return decided != negate
        if op == "==" and 0 in bounds:   # e == 0 is e <= 0 where e >= 0, -e <= 0 where e <= 0
            difference, op = (difference if bounds[0] == 0 else _negated(difference)), "<="
        difference = _divided_by_gcd(op, difference)
        if difference is None:   # c1 * x + ... == k with the gcd of the c's not dividing k
            return negate
        terms, constant = difference
        if all(atom[0] == "#[]" for atom, _ in terms):
            for atom, _ in terms:
                _atom(atom, atoms)
            test: Hashable = ("test", op, difference)
        else:
            if terms[0][1] < 0:
                if op == "==":
                    difference = _negated(difference)
                else:   # e <= 0 iff not (-e + 1 <= 0)
                    difference, negate = _shifted(_negated(difference), 1), not negate
            test = _atom(("le" if op == "<=" else "eq", difference), atoms)
        return ("not", test) if negate else test


def _decided(op: str, bounds: tuple[float, float]) -> bool | None:
    """The outcome of ``e <= 0`` or ``e == 0`` when the range of e decides it."""
    low, high = bounds
    if op == "<=":
        return True if high <= 0 else False if low > 0 else None
    if low > 0 or high < 0:
        return False
    return True if low == high == 0 else None


def _divided_by_gcd(op: str, form: Linear) -> Linear | None:
    """``form <= 0`` or ``form == 0`` with the coefficients divided by their gcd g (atoms are
    integers: sum c x + k <= 0 iff sum (c/g) x + ceil(k/g) <= 0; for == it needs g | k, and
    None means never equal)."""
    terms, constant = form
    divisor = math.gcd(*(c for _, c in terms)) if terms else 1
    if divisor <= 1:
        return form
    if op == "==" and constant % divisor:
        return None
    shifted = -(-constant // divisor) if op == "<=" else constant // divisor
    return tuple((a, c // divisor) for a, c in terms), shifted


def _name(node: syntax.Expr) -> Hashable:
    """A name and the predicate it may stand for have the same form (Hahn writes both alike)."""
    if isinstance(node, syntax.PositionTest):
        return ("name", node.name) if node.name != "mod" else ("mod", node.modulus, node.residue)
    if isinstance(node, syntax.Ref):
        return ("name", node.name)
    raise TypeError(f"not an atom: {node!r}")


def _atom(atom: Hashable, atoms: list) -> Hashable:
    if atom not in atoms:
        atoms.append(atom)
    return ("atom", atom)


def _possible(values: dict) -> bool:
    """At most one token test holds at a position."""
    return sum(1 for atom, value in values.items() if value and atom[0] == "token") <= 1


def _evaluate(tree: Hashable, values: dict) -> bool:
    if isinstance(tree, bool):
        return tree
    kind = tree[0]
    if kind == "atom":
        return values.get(tree[1], False)
    if kind == "test":
        _, op, (terms, constant) = tree
        total = constant + sum(c for atom, c in terms if values.get(atom, False))
        return _TESTS[op](total, 0)
    if kind == "not":
        return not _evaluate(tree[1], values)
    if kind == "and":
        return _evaluate(tree[1], values) and _evaluate(tree[2], values)
    return _evaluate(tree[1], values) or _evaluate(tree[2], values)


def _depends_on(full: dict[tuple[bool, ...], bool], index: int) -> bool:
    """Whether flipping atom ``index`` changes the value in some pair of possible rows."""
    for values, value in full.items():
        if not values[index]:
            flipped = values[:index] + (True,) + values[index + 1:]
            if flipped in full and full[flipped] != value:
                return True
    return False
