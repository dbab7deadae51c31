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

Sound, not complete: a form never equates two different meanings, but two expressions that are
equal for deeper reasons (``#"a" >= 0`` and ``true``) get different forms.
"""

from __future__ import annotations

import itertools
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


def canonical(expr: syntax.Expr, definitions: Mapping[str, syntax.Expr] = {}) -> Hashable:
    """The canonical form of a Boolean or count expression (names from ``definitions`` are
    replaced by their expressions)."""
    form = _Canonical(definitions)
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
    if max(syntax.nesting(first), syntax.nesting(second)) <= MAX_NESTING:
        try:
            return canonical(first, definitions) == canonical(second, definitions)
        except (TypeError, RecursionError):
            pass
    return syntax.same_structure(first, second)


def _negated(form: Linear) -> Linear:
    return tuple((a, -c) for a, c in form[0]), -form[1]


def _shifted(form: Linear, by: int) -> Linear:
    return form[0], form[1] + by


class _Canonical:
    def __init__(self, definitions: Mapping[str, syntax.Expr]):
        self.definitions = definitions
        self.inlined_names = 0

    def definition(self, node: syntax.Expr) -> syntax.Expr | None:
        """The expression a name stands for, while the inlining stays small."""
        if not isinstance(node, syntax.Ref) or node.name not in self.definitions:
            return None
        self.inlined_names += 1
        return self.definitions[node.name] if self.inlined_names <= MAX_INLINED_NAMES else None

    def is_boolean(self, expr: syntax.Expr) -> bool:
        if isinstance(expr, syntax.Conditional):
            return self.is_boolean(expr.if_true) or self.is_boolean(expr.if_false)
        inlined = self.definition(expr)
        return self.is_boolean(inlined) if inlined is not None else isinstance(expr, _BOOLEAN)

    # ------------------------------------------------------------ counts

    def linear(self, expr: syntax.Expr) -> Linear:
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
            else:
                atom = self.count_atom(node)
                terms[atom] = terms.get(atom, 0) + factor
        return tuple(sorted(((a, c) for a, c in terms.items() if c), key=repr)), constant

    def count_atom(self, node: syntax.Expr) -> Hashable:
        if isinstance(node, syntax.Count):
            if node.relation is not None:   # 0 or 1: a Boolean atom of the truth table
                return ("#[]", node.relation.offset, self.boolean(node.body))
            return ("#", self.boolean(node.body))
        if isinstance(node, (syntax.Min, syntax.Max)):
            return (type(node).__name__, frozenset((self.linear(node.left),
                                                    self.linear(node.right))))
        if isinstance(node, syntax.Conditional):
            return ("if", self.boolean(node.condition), self.linear(node.if_true),
                    self.linear(node.if_false))
        return _name(node)

    # ------------------------------------------------------------ Booleans

    def boolean(self, expr: syntax.Expr) -> Hashable:
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
        difference = self.linear(syntax.Add(node.left, syntax.Scale(-1, node.right)))
        op, negate = node.op, False
        if op in (">", ">="):
            difference, op = _negated(difference), {">": "<", ">=": "<="}[op]
        if op == "<":
            difference, op = _shifted(difference, 1), "<="
        if op == "!=":
            op, negate = "==", True
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
