"""Expr -> canonical form: equal forms mean equal values at every position of every input.

Used to decide whether two readings of the same text mean the same (``crasp.hahn``). The form
is a hashable value built bottom-up:

* A count is a linear form ``sum(coefficient * atom) + constant`` (``+``, ``-``, scaling and
  literals are folded; counts are integers). Its atoms are counts (``#P`` with P canonical,
  and its relation's offset), names, ``min``/``max`` (unordered pairs) and conditionals.
* A comparison ``c op d`` becomes a test of the linear form ``c - d``: ``<`` and ``>`` become
  ``<=`` on integers (``c < d`` iff ``c - d + 1 <= 0``), ``>``/``>=`` are negated into
  ``<=``, ``!=`` is the negation of ``==``, and each test is oriented so that its first atom's
  coefficient is positive (``e <= 0`` iff not ``-e + 1 <= 0``; ``e == 0`` iff ``-e == 0``).
* A Boolean is a truth table over its atoms (token tests, predicates, names, the oriented
  comparison tests), keeping only the atoms it depends on, so Boolean algebra is decided
  exactly. Beyond ``MAX_TABLE_ATOMS`` atoms the connectives are kept as a tree instead (equal
  forms still mean equal values; some equal values then get unequal forms).

Sound, not complete: a form never equates two different meanings, but two expressions that are
equal for deeper reasons (``#"a" >= 0`` and ``true``) get different forms.
"""

from __future__ import annotations

import itertools
from typing import Hashable

from crasp import syntax

MAX_TABLE_ATOMS = 10
Linear = tuple[tuple[tuple[Hashable, int], ...], int]   # sorted (atom, coefficient), constant


def canonical(expr: syntax.Expr) -> Hashable:
    """The canonical form of a Boolean or count expression."""
    if _is_boolean(expr):
        return ("bool", _boolean(expr))
    return ("count", _linear(expr))


def same_meaning(first: syntax.Expr, second: syntax.Expr) -> bool:
    """Whether two trees have the same canonical form (ill-typed trees: the same structure)."""
    try:
        return canonical(first) == canonical(second)
    except TypeError:   # an ill-typed tree has no canonical form
        return first == second


def _is_boolean(expr: syntax.Expr) -> bool:
    boolean = (syntax.TokenTest, syntax.BoolConst, syntax.PositionTest, syntax.Not, syntax.And,
               syntax.Or, syntax.Compare)
    if isinstance(expr, syntax.Conditional):
        return _is_boolean(expr.if_true) or _is_boolean(expr.if_false)
    return isinstance(expr, boolean)


# ---------------------------------------------------------------- counts

def _linear(expr: syntax.Expr) -> Linear:
    terms: dict[Hashable, int] = {}
    constant = 0
    for factor, node in _summands(expr):
        if isinstance(node, syntax.IntConst):
            constant += factor * node.value
        else:
            atom = _count_atom(node)
            terms[atom] = terms.get(atom, 0) + factor
    return tuple(sorted(((a, c) for a, c in terms.items() if c), key=repr)), constant


def _summands(expr: syntax.Expr):
    """(factor, node) pairs whose sum is ``expr``; nodes are not +, - or scaling."""
    stack = [(1, expr)]
    while stack:
        factor, node = stack.pop()
        if isinstance(node, syntax.Add):
            stack += [(factor, node.left), (factor, node.right)]
        elif isinstance(node, syntax.Sub):
            stack += [(factor, node.left), (-factor, node.right)]
        elif isinstance(node, syntax.Scale):
            stack.append((factor * node.factor, node.operand))
        else:
            yield factor, node


def _count_atom(node: syntax.Expr) -> Hashable:
    if isinstance(node, syntax.Count):
        offset = None if node.relation is None else node.relation.offset
        return ("#", offset, _boolean(node.body))
    if isinstance(node, (syntax.Min, syntax.Max)):
        pair = frozenset((_linear(node.left), _linear(node.right)))
        return (type(node).__name__, pair)
    if isinstance(node, syntax.Conditional):
        return ("if", _boolean(node.condition), _linear(node.if_true), _linear(node.if_false))
    return _name(node)


def _name(node: syntax.Expr) -> Hashable:
    """A name and the predicate it may stand for have the same form (Hahn writes both alike)."""
    if isinstance(node, syntax.PositionTest):
        return ("name", node.name) if node.name != "mod" else ("mod", node.modulus, node.residue)
    if isinstance(node, syntax.Ref):
        return ("name", node.name)
    raise TypeError(f"not a count atom: {node!r}")


def _negated(form: Linear) -> Linear:
    terms, constant = form
    return tuple((a, -c) for a, c in terms), -constant


def _shifted(form: Linear, by: int) -> Linear:
    return form[0], form[1] + by


# ---------------------------------------------------------------- Booleans

def _comparison(node: syntax.Compare) -> tuple[str, Hashable] | bool:
    """("le" | "eq", linear form) oriented, possibly negated as ("not", ...); or a constant."""
    difference = _linear(syntax.Add(node.left, syntax.Scale(-1, node.right)))
    op, negate = node.op, False
    if op in (">", ">="):
        difference, op = _negated(difference), {">": "<", ">=": "<="}[op]
    if op == "<":
        difference, op = _shifted(difference, 1), "<="
    if op == "!=":
        op, negate = "==", True
    terms, constant = difference
    if not terms:
        value = constant <= 0 if op == "<=" else constant == 0
        return value != negate
    if terms[0][1] < 0:
        if op == "==":
            difference = _negated(difference)
        else:   # e <= 0 iff not (-e + 1 <= 0)
            difference, negate = _shifted(_negated(difference), 1), not negate
    atom = ("le" if op == "<=" else "eq", difference)
    return ("not", atom) if negate else atom


def _boolean(expr: syntax.Expr) -> Hashable:
    atoms: list[Hashable] = []
    tree = _connectives(expr, atoms)
    if len(atoms) > MAX_TABLE_ATOMS:
        return ("tree", tree)
    relevant = [a for a in atoms if _depends_on(tree, atoms, a)]
    relevant.sort(key=repr)
    table = tuple(_evaluate(tree, dict(zip(relevant, values)))
                  for values in itertools.product((False, True), repeat=len(relevant)))
    return ("table", tuple(relevant), table)


def _connectives(expr: syntax.Expr, atoms: list) -> Hashable:
    """A tree of ("and"/"or"/"not", ...) over atoms and constants; collects the atoms."""
    if isinstance(expr, syntax.BoolConst):
        return expr.value
    if isinstance(expr, syntax.Not):
        return ("not", _connectives(expr.operand, atoms))
    if isinstance(expr, (syntax.And, syntax.Or)):
        return ("and" if isinstance(expr, syntax.And) else "or",
                _connectives(expr.left, atoms), _connectives(expr.right, atoms))
    if isinstance(expr, syntax.Conditional):
        condition = _connectives(expr.condition, atoms)
        return ("or", ("and", condition, _connectives(expr.if_true, atoms)),
                ("and", ("not", condition), _connectives(expr.if_false, atoms)))
    if isinstance(expr, syntax.Compare):
        test = _comparison(expr)
        if isinstance(test, bool):
            return test
        if test[0] == "not":
            return ("not", _atom(test[1], atoms))
        return _atom(test, atoms)
    if isinstance(expr, syntax.TokenTest):
        return _atom(("token", expr.token), atoms)
    return _atom(_name(expr), atoms)


def _atom(atom: Hashable, atoms: list) -> Hashable:
    if atom not in atoms:
        atoms.append(atom)
    return ("atom", atom)


def _evaluate(tree: Hashable, values: dict) -> bool:
    if isinstance(tree, bool):
        return tree
    kind = tree[0]
    if kind == "atom":
        return values.get(tree[1], False)
    if kind == "not":
        return not _evaluate(tree[1], values)
    if kind == "and":
        return _evaluate(tree[1], values) and _evaluate(tree[2], values)
    return _evaluate(tree[1], values) or _evaluate(tree[2], values)


def _depends_on(tree: Hashable, atoms: list, atom: Hashable) -> bool:
    others = [a for a in atoms if a != atom]
    for values in itertools.product((False, True), repeat=len(others)):
        assignment = dict(zip(others, values))
        if (_evaluate(tree, {**assignment, atom: False})
                != _evaluate(tree, {**assignment, atom: True})):
            return True
    return False
