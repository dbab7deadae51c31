"""Pass: decompiled program -> an equivalent program written for reading.

``write_program`` emits one definition per state class and per comparison, which is exact but
long (a median of twice the original's lines on the examples). This pass rewrites it, keeping
every answer at every position (and at BOS) and the depth:

* **Atoms.** Each definition is expanded, through the references to earlier definitions, into
  a Boolean formula over *atoms*: token tests, and linear count inequalities sum_t c_t #body_t
  >= b, less the terms whose body minimizes to false (no token position has it: a count of 0).
  An inequality is stored in one orientation (first coefficient positive, divided by the gcd
  of the coefficients, the bound rounded up), so a comparison and its negation become one
  atom with two polarities: sum c #B >= b  iff  !(sum -c #B >= 1 - b). Comparisons whose
  count bodies are formulas are keyed by the minimized bodies: equal bodies, equal atoms.
* **Minimization.** Each formula is minimized over its atoms by SymPy's ``simplify_logic``
  (Quine-McCluskey, the smaller of the sum-of-products and product-of-sums forms), with as
  *don't cares* the assignments that cannot occur at a token position: two token tests true
  at once, and sum c #B >= b1 true with sum c #B >= b2 false for b1 > b2. The minimized
  formula is equal to the original on every assignment that can occur, so the program's
  answers are unchanged; atoms only disappear, so no depth grows. Beyond ``MAX_ATOMS`` atoms
  exact minimization is exponential, so the literals the formula implies are taken out first
  (F = l && F[l := true] where F && !l holds on no possible assignment: a truth table), and the
  rest is minimized if it is small enough. A formula of more than ``WIDE_ATOMS`` atoms keeps
  its own definition (its users read it as one atom), as SymPy builds it. Each distinct
  formula is minimized once, each minimization charged to the work budget before it runs
  (``budget.minimization_units``).
* **Writing.** Only the count bodies and the answer get definitions (and, in a formula too wide
  to minimize, each comparison: ``cmpN``); every other formula is inlined where it is used. A
  definition is named after what it computes where that is recognizable: ``x_after_y`` for "x"
  && #y >= 1, ``x_before_y`` for "x" && #y == 0 (y a token or an earlier definition), ``x_or_y``
  for "x" || "y", the name ``write_program`` took from the model's residual labels when the body
  equals that definition, ``Lk_pN`` otherwise. A conjunction of sum >= b and sum <= b is written
  sum == b, a disjunction of sum > b and sum < b is written sum != b, and every operand of &&
  that is an || (and of || that is an &&) is parenthesized.

``readable_program`` returns the rewritten text and program; the driver keeps it only if it
is not longer (in definition lines) than the input.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import sympy
from sympy.logic import boolalg

from crasp import syntax
from crasp.decompile.budget import Budget, minimization_units
from crasp.fmt import format_expr

MAX_ATOMS = 6
"""Exact two-level minimization above this many atoms costs more than it saves (SymPy stops at 8;
at 8 one random trained model took minutes)."""
WIDE_ATOMS = 14
"""A formula of more atoms is not expanded into its users (it keeps its definition)."""
LONGEST_NAME = 40
"""A recognized name longer than this gives way to the label's or a number."""


class Unreadable(Exception):
    """A program outside what ``write_program`` emits (the driver then keeps it as it is)."""


@dataclass(frozen=True)
class _Inequality:
    """sum_t coefficients[t] * #bodies[t] >= bound (bodies: keys of minimized formulas)."""

    terms: tuple[tuple[str, int], ...]   # (body key, coefficient), sorted by key
    bound: int


def _linear(expr: syntax.Expr, count) -> tuple[dict[str, int], int] | None:
    """``expr`` as (body key -> coefficient, constant), or None if it is not linear in counts
    (``count(body)`` gives a count's body key)."""
    if isinstance(expr, syntax.IntConst):
        return {}, expr.value
    if isinstance(expr, syntax.Count) and expr.relation is None:
        return {count(expr.body): 1}, 0
    if isinstance(expr, syntax.Scale):
        inner = _linear(expr.operand, count)
        return None if inner is None else ({k: expr.factor * c for k, c in inner[0].items()},
                                           expr.factor * inner[1])
    if isinstance(expr, (syntax.Add, syntax.Sub)):
        left, right = _linear(expr.left, count), _linear(expr.right, count)
        if left is None or right is None:
            return None
        sign = 1 if isinstance(expr, syntax.Add) else -1
        terms = dict(left[0])
        for key, c in right[0].items():
            terms[key] = terms.get(key, 0) + sign * c
        return {k: c for k, c in terms.items() if c}, left[1] + sign * right[1]
    return None


def _at_least(terms: dict[str, int], constant: int):
    """sum terms + constant >= 0, as (polarity, _Inequality) or a constant bool."""
    if not terms:
        return constant >= 0
    divisor = math.gcd(*terms.values())
    items = tuple(sorted((k, c // divisor) for k, c in terms.items()))
    bound = -(constant // divisor)   # ceil(-constant / divisor)
    if items[0][1] < 0:             # the other orientation: !(sum -c >= 1 - bound)
        return False, _Inequality(tuple((k, -c) for k, c in items), 1 - bound)
    if all(c > 0 for _, c in items) and bound <= 0:
        return True                  # counts are never negative
    return True, _Inequality(items, bound)


@dataclass
class _Reader:
    """Definitions -> minimized SymPy formulas over atom symbols."""

    definitions: dict[str, syntax.Expr]
    alphabet: tuple[str, ...]
    budget: Budget   # charged before each minimization
    atoms: dict[object, sympy.Symbol] = field(default_factory=dict)
    meaning: dict[sympy.Symbol, object] = field(default_factory=dict)
    formulas: dict[str, boolalg.Boolean] = field(default_factory=dict)
    bodies: dict[str, boolalg.Boolean] = field(default_factory=dict)   # body key -> formula
    kept: set[str] = field(default_factory=set)   # definitions too wide to expand
    minimal: dict[boolalg.Boolean, boolalg.Boolean] = field(default_factory=dict)  # memo

    def symbol(self, atom) -> sympy.Symbol:
        if atom not in self.atoms:
            self.atoms[atom] = sympy.Symbol(f"x{len(self.atoms)}")
            self.meaning[self.atoms[atom]] = atom
        return self.atoms[atom]

    def body_key(self, body: syntax.Expr) -> str:
        formula = self.minimized(self.formula(body))
        key = sympy.srepr(formula)
        self.bodies.setdefault(key, formula)
        return key

    def formula(self, expr: syntax.Expr) -> boolalg.Boolean:
        if isinstance(expr, syntax.BoolConst):
            return sympy.true if expr.value else sympy.false
        if isinstance(expr, syntax.TokenTest):
            return self.symbol(("token", expr.token))
        if isinstance(expr, syntax.Not):
            return sympy.Not(self.formula(expr.operand))
        if isinstance(expr, syntax.And):
            return sympy.And(self.formula(expr.left), self.formula(expr.right))
        if isinstance(expr, syntax.Or):
            return sympy.Or(self.formula(expr.left), self.formula(expr.right))
        if isinstance(expr, syntax.Ref):
            return self.reference(expr.name)
        if isinstance(expr, syntax.Compare):
            return self.comparison(expr)
        raise Unreadable(f"no atoms for {format_expr(expr)}")

    def reference(self, name: str) -> boolalg.Boolean:
        if name not in self.formulas:
            formula = self.minimized(self.formula(self.definitions[name]))
            if len(formula.free_symbols) > WIDE_ATOMS:
                self.kept.add(name)
            self.formulas[name] = formula
        if name in self.kept:
            return self.symbol(("ref", name))
        return self.formulas[name]

    def comparison(self, expr: syntax.Compare) -> boolalg.Boolean:
        left, right = _linear(expr.left, self.body_key), _linear(expr.right, self.body_key)
        if left is None or right is None:
            raise Unreadable(f"not a linear comparison of counts: {format_expr(expr)}")
        terms = dict(left[0])
        for key, c in right[0].items():
            terms[key] = terms.get(key, 0) - c
        terms = {k: c for k, c in terms.items() if c and self.bodies[k] != sympy.false}
        constant = left[1] - right[1]            # left - right = sum terms + constant
        negated = {k: -c for k, c in terms.items()}
        at_least = {">=": [(terms, constant)], ">": [(terms, constant - 1)],
                    "<=": [(negated, -constant)], "<": [(negated, -constant - 1)],
                    "==": [(terms, constant), (negated, -constant)]}
        parts = [self.literal(_at_least(t, c)) for t, c in at_least.get(expr.op, at_least["=="])]
        result = sympy.And(*parts)
        return sympy.Not(result) if expr.op == "!=" else result

    def literal(self, atom) -> boolalg.Boolean:
        if isinstance(atom, bool):
            return sympy.true if atom else sympy.false
        polarity, inequality = atom
        symbol = self.symbol(("at_least", inequality))
        return symbol if polarity else sympy.Not(symbol)

    def impossible(self, symbols) -> boolalg.Boolean:
        """The assignments of ``symbols`` that no token position has (the don't cares)."""
        tokens = [s for s in symbols if self.meaning[s][0] == "token"]
        cases = [sympy.And(a, b) for i, a in enumerate(tokens) for b in tokens[i + 1:]]
        inequalities = [(s, self.meaning[s][1]) for s in symbols
                        if self.meaning[s][0] == "at_least"]
        for s, first in inequalities:
            for t, second in inequalities:
                if first.terms == second.terms and first.bound > second.bound:
                    cases.append(sympy.And(s, sympy.Not(t)))   # s implies t
        return sympy.Or(*cases) if cases else sympy.false

    def minimized(self, formula: boolalg.Boolean) -> boolalg.Boolean:
        if formula not in self.minimal:
            self.minimal[formula] = self.minimize(formula)
        return self.minimal[formula]

    def minimize(self, formula: boolalg.Boolean) -> boolalg.Boolean:
        symbols = sorted(formula.free_symbols, key=str)
        if not symbols or len(symbols) > WIDE_ATOMS:
            return formula
        self.budget.charge(minimization_units(size := len(symbols), size <= MAX_ATOMS),
                           "readable: minimization", f"minimizing a formula of {size} atoms")
        impossible = self.impossible(symbols)
        if len(symbols) <= MAX_ATOMS:
            return boolalg.simplify_logic(formula, dontcare=impossible)
        rows = (np.arange(2 ** len(symbols))[:, None] >> np.arange(len(symbols))) & 1 == 1
        holds = _table(formula, symbols, rows) & ~_table(impossible, symbols, rows)
        implied = [symbol if value else sympy.Not(symbol)
                   for column, symbol in enumerate(symbols) for value in (True, False)
                   if not (holds & (rows[:, column] != value)).any()]
        if not implied:
            return formula
        rest = formula.xreplace({(s.args[0] if isinstance(s, boolalg.Not) else s):
                                 not isinstance(s, boolalg.Not) for s in implied})
        return sympy.And(*implied, self.minimized(rest))


def _table(formula: boolalg.Boolean, symbols: list, rows: np.ndarray) -> np.ndarray:
    """``formula``'s value on every assignment (``rows``: [2^n, n] booleans)."""
    values = sympy.lambdify(symbols, formula, "numpy")(*rows.T)
    return np.broadcast_to(np.asarray(values, dtype=bool), (len(rows),))


def _chain(node: type, operands: list[syntax.Expr]) -> syntax.Expr:
    result = operands[0]
    for operand in operands[1:]:
        result = node(result, operand)
    return result


def _identifier(text: str) -> str | None:
    name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    return name if name and not name[0].isdigit() else None


@dataclass
class _Writer:
    reader: _Reader
    names: dict[str, str] = field(default_factory=dict)      # body key -> definition name
    definitions: list[syntax.Definition] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)
    original_names: dict[str, str] = field(default_factory=dict)  # body key -> writer's name
    name_inequalities: bool = False   # while writing a formula too wide to minimize
    inequality_names: dict = field(default_factory=dict)          # atom symbol -> name

    def sum(self, terms: list[tuple[str, int]]) -> syntax.Expr:
        parts = []
        for key, c in terms:
            count = syntax.Count(self.body(key))
            parts.append(count if c == 1 else syntax.Scale(c, count))
        return _chain(syntax.Add, parts)

    def inequality(self, inequality: _Inequality, op: str = ">=", negate: bool = False
                   ) -> syntax.Expr:
        """sum >= bound (or sum == bound, sum != bound with ``op``), positive terms on the
        left; ``negate``: the negation, !(sum >= b) = (-sum >= 1 - b)."""
        terms, bound = list(inequality.terms), inequality.bound
        if negate:
            terms, bound = [(k, -c) for k, c in terms], 1 - bound
        positive = [(k, c) for k, c in terms if c > 0]
        negative = [(k, -c) for k, c in terms if c < 0]
        if not positive:   # -N >= b: N <= -b
            return syntax.Compare({">=": "<="}.get(op, op), self.sum(negative),
                                  syntax.IntConst(-bound))
        left = self.sum(positive)
        if not negative:
            return syntax.Compare(op, left, syntax.IntConst(bound))
        right = self.sum(negative)
        if op == ">=" and bound == 1:
            return syntax.Compare(">", left, right)
        if bound > 0:
            right = syntax.Add(right, syntax.IntConst(bound))
        elif bound < 0:
            left = syntax.Add(left, syntax.IntConst(-bound))
        return syntax.Compare(op, left, right)

    def literal(self, symbol, positive: bool) -> syntax.Expr:
        kind, value = self.reader.meaning[symbol]
        if kind == "token":
            test = syntax.TokenTest(value)
            return test if positive else syntax.Not(test)
        if kind == "at_least" and self.name_inequalities:
            if symbol not in self.inequality_names:
                self.inequality_names[symbol] = self.fresh("cmp")
                self.definitions.append(syntax.Definition(
                    self.inequality_names[symbol], self.inequality(value), syntax.BOOL))
            kind, value = "ref", self.inequality_names[symbol]
        if kind == "at_least":
            if not positive and all(c > 0 for _, c in value.terms) and value.bound == 1:
                return syntax.Compare("==", self.sum(list(value.terms)), syntax.IntConst(0))
            return self.inequality(value, negate=not positive)
        return syntax.Ref(value) if positive else syntax.Not(syntax.Ref(value))

    def expr(self, formula: boolalg.Boolean) -> syntax.Expr:
        if formula is sympy.true or formula is sympy.false:
            return syntax.BoolConst(formula is sympy.true)
        if isinstance(formula, sympy.Symbol):
            return self.literal(formula, True)
        if isinstance(formula, boolalg.Not):
            return self.literal(formula.args[0], False)
        conjunction = isinstance(formula, boolalg.And)
        args = sorted(formula.args, key=_order)
        operands = self.equalities(args, conjunction)
        operands += [self.expr(arg) for arg in args]
        return _chain(syntax.And if conjunction else syntax.Or, operands)

    def equalities(self, args: list, conjunction: bool) -> list[syntax.Expr]:
        """Take out of ``args`` each pair sum >= b && !(sum >= b + 1) (an equality) or, in a
        disjunction, !(sum >= b) || sum >= b + 1 (a disequality); return them written."""
        found = []
        meaning = self.reader.meaning
        literals = {}
        for arg in args:
            symbol, positive = (arg, True) if isinstance(arg, sympy.Symbol) else (
                (arg.args[0], False) if isinstance(arg, boolalg.Not) else (None, None))
            if symbol is not None and meaning[symbol][0] == "at_least":
                literals[(meaning[symbol][1], positive)] = arg
        for (inequality, positive), arg in list(literals.items()):
            if positive != conjunction or arg not in args:
                continue
            upper = _Inequality(inequality.terms, inequality.bound + 1)
            partner = literals.get((upper, not positive))
            if partner is not None and partner in args:
                args.remove(arg)
                args.remove(partner)
                found.append(self.inequality(inequality, "==" if conjunction else "!="))
        return found

    def body(self, key: str) -> syntax.Expr:
        formula = self.reader.bodies[key]
        if formula is sympy.true or isinstance(formula, sympy.Symbol) and \
                self.reader.meaning[formula][0] == "token":
            return self.expr(formula)
        if key not in self.names:
            expr = self.expr(formula)   # first: the bodies it counts are defined before it
            name = self.name(key, expr)
            self.names[key] = name
            self.definitions.append(syntax.Definition(name, expr, syntax.BOOL))
        return syntax.Ref(self.names[key])

    def name(self, key: str, expr: syntax.Expr) -> str:
        candidates = [_recognized(expr), self.original_names.get(key)]
        for candidate in candidates:
            if candidate and len(candidate) <= LONGEST_NAME and candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        return self.fresh("p")

    def fresh(self, prefix: str) -> str:
        number = len(self.definitions)
        while f"{prefix}{number}" in self.taken:
            number += 1
        self.taken.add(f"{prefix}{number}")
        return f"{prefix}{number}"


def _order(formula) -> tuple:
    """Token tests first, then the rest, stably by text."""
    base = formula.args[0] if isinstance(formula, boolalg.Not) else formula
    return (0 if isinstance(base, sympy.Symbol) else 1, str(formula))


def _recognized(expr: syntax.Expr) -> str | None:
    """``x_after_y`` for "x" && #y >= 1, ``x_before_y`` for "x" && #y == 0 (y a token or a
    definition), ``x_or_y`` for "x" || "y"."""
    if (isinstance(expr, syntax.Or) and isinstance(expr.left, syntax.TokenTest)
            and isinstance(expr.right, syntax.TokenTest)):
        x, y = _identifier(expr.left.token), _identifier(expr.right.token)
        return f"{x}_or_{y}" if x and y else None
    if not (isinstance(expr, syntax.And) and isinstance(expr.left, syntax.TokenTest)
            and isinstance(expr.right, syntax.Compare)
            and isinstance(expr.right.left, syntax.Count)
            and isinstance(expr.right.right, syntax.IntConst)):
        return None
    counted = expr.right.left.body
    y = (_identifier(counted.token) if isinstance(counted, syntax.TokenTest) else
         counted.name if isinstance(counted, syntax.Ref) else None)
    x = _identifier(expr.left.token)
    relation = {(">=", 1): "after", ("==", 0): "before"}.get(
        (expr.right.op, expr.right.right.value))
    return f"{x}_{relation}_{y}" if x and y and relation else None


@dataclass(frozen=True)
class ReadableProgram:
    definitions: tuple[syntax.Definition, ...]
    lines: list[str]   # "name = formula", one per definition


def readable_program(program: syntax.Program, budget: Budget | None = None) -> ReadableProgram:
    """``program`` (a decompiled one) rewritten as the module docstring says; raises
    ``Unreadable`` for a construct ``write_program`` never emits, ``StateLimitError`` where the
    minimizations would take ``budget`` (default: none) past its limit. A count body equal to
    one of ``program``'s definitions named from residual labels keeps that name."""
    definitions = {d.name: d.expr for d in program.definitions}
    reader = _Reader(definitions, program.alphabet, budget or Budget(limit=math.inf))
    answer_name = program.answer.name
    reader.reference(answer_name)
    writer = _Writer(reader, taken={"answer", *reader.kept})
    for name in definitions:
        if name in reader.formulas and name not in reader.kept and _labelled(name):
            writer.original_names.setdefault(sympy.srepr(reader.formulas[name]), name)
    for name in sorted(reader.kept - {answer_name}, key=list(definitions).index):
        writer.definitions.append(syntax.Definition(name, wide(writer, reader.formulas[name]),
                                                    syntax.BOOL))
    formula = reader.formulas[answer_name]
    final = syntax.Definition("answer", wide(writer, formula) if answer_name in reader.kept
                              else writer.expr(formula), syntax.BOOL)
    kept = tuple(_by_depth(writer.definitions)) + (final,)
    return ReadableProgram(kept, [f"{d.name} = {format_expr(d.expr, group_mixed=True)}"
                                  for d in kept])


def wide(writer: _Writer, formula: boolalg.Boolean) -> syntax.Expr:
    """A formula with more than ``MAX_ATOMS`` atoms, unminimized: each of its comparisons
    gets a definition of its own (``cmpN``), so that it reads as a formula of names."""
    writer.name_inequalities = True
    try:
        return writer.expr(formula)
    finally:
        writer.name_inequalities = False


def _by_depth(definitions: list[syntax.Definition]) -> list[syntax.Definition]:
    """Stably by counting depth (a definition reads shallower or earlier ones: still valid)."""
    depth: dict[str, int] = {}

    def of(expr: syntax.Expr) -> int:
        if isinstance(expr, syntax.Count):
            return 1 + of(expr.body)
        if isinstance(expr, syntax.Ref):
            return depth[expr.name]
        return max((of(kid) for kid in syntax.children(expr)), default=0)
    for definition in definitions:
        depth[definition.name] = of(definition.expr)
    return sorted(definitions, key=lambda d: depth[d.name])


def _labelled(name: str) -> bool:
    """A name ``write_program`` took from the model's residual labels."""
    return not re.fullmatch(r"L\d+_(cmp|state)\d+|answer|bos|L0_other_token", name)

