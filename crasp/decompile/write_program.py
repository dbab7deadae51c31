"""Pass: (StateMachine, StateClasses) -> program text. Each state class becomes a Boolean
definition, each head-output threshold a comparison of counts.

The derivation (continuing ``enumerate_states``):

* **Level 0.** A position's embedding state is a function of its token (and, in a version-3
  model with periodic tables, of its position t mod the lcm P of their moduli): the class
  formula is the disjunction of the token tests of the vocabulary entries in that class (a
  single token is written as its test), and ``!("a" || ...)`` for the "other token" row, which
  the interpreter reads at a token outside the alphabet (every token test false there); a
  row whose class depends on the residue is conjoined with the disjunction of
  ``mod(P, (t - 1) mod P)`` over its residues t (the program numbers tokens from 0).
* **BOS.** A class formula needs to be right at token positions only: C-RASP never counts BOS.
  The answer must also be right at BOS, where it is the model's answer on the empty input:
  the interpreter evaluates the finished answer there (token tests false, counts 0) and, only
  if it differs, it is corrected with ``bos``: the negation of all token tests, or, when an
  outside token reads the same way, ``#true == 0`` (C-RASP's only way to tell BOS from it,
  one count deep).
* **Counts.** C-RASP's ``#P`` at token position i counts the token positions j <= i where P
  holds; BOS is not among them. So the number of visible positions in state t is
  ``#class(t)`` for the classes of the previous level, plus 1 for BOS's key; all states of
  a class have the same coefficient (``classify``), so states are summed per class.
* **Thresholds are exact.** For query state q, head output coordinate e and threshold k, with
  D > 0: floor(2^s N / D) >= k iff 2^s N >= k D (D > 0, integers), i.e.
  sum_t (2^s S(q, t)_e - k W(q, t)) n_t >= 0: integer coefficients, no rounding anywhere.
  Saturation clamps the rounded value into [low, high], so thresholds outside the box are
  constants. If W(q, BOS) > 0 then D > 0 always. Otherwise D = 0 exactly when no visible state
  has a positive weight (a count test, ``== 0``), and then c >= k iff
  sum_t (2^s v_t - k) n_t >= 0, with the v_t's exact binary fractions scaled to integers.
* **Feed-forward.** The class of the next level is a finite function of (q, c): for each class
  and query class a decision tree over the coordinates of c in their boxes, whose leaves are
  intervals of one coordinate, i.e. at most two thresholds. The class formula of level l is
  the disjunction over query classes Q of (class Q) && (its tree), so its depth is l; query
  classes with the same tree share one disjunct, and when they are all of them the class
  test is dropped (exactly one class of a level holds at every token position).
* **Simplification.** Comparisons are reduced to the smallest integer coefficients (divided by
  the gcd of the count coefficients, the constant rounded up) and shared when equal; constants
  fold through !, && and ||; definitions the answer does not use are dropped; names come from
  the model's ``residual_labels`` when a class is exactly "coordinate j is nonzero" (or zero),
  or two such conditions (``crasp.decompile.class_names``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction

import numpy as np

import crasp
from crasp import syntax
from crasp.decompile.budget import Budget
from crasp.decompile.class_names import ClassNamer
from crasp.decompile.classify import StateClasses
from crasp.decompile.enumerate_states import LayerTables, StateMachine
from crasp.decompile.windows import offset_count, windowed_at_least
from crasp.errors import CraspError
from crasp.fmt import format_expr
from crasp.parse import token_literal_problem

TRUE, FALSE = syntax.BoolConst(True), syntax.BoolConst(False)
HEADER = "// Decompiled by crasp decompile"
CHAIN = 32


def _and(left: syntax.Expr, right: syntax.Expr) -> syntax.Expr:
    if FALSE in (left, right):
        return FALSE
    if left == TRUE or right == TRUE:
        return right if left == TRUE else left
    if isinstance(right, syntax.And):  # left-nested chains print without parentheses
        return syntax.And(_and(left, right.left), right.right)
    return syntax.And(left, right)


def _or(left: syntax.Expr, right: syntax.Expr) -> syntax.Expr:
    if TRUE in (left, right):
        return TRUE
    if left == FALSE or right == FALSE:
        return right if left == FALSE else left
    return syntax.Or(left, right)


def _not(operand: syntax.Expr) -> syntax.Expr:
    if isinstance(operand, syntax.BoolConst):
        return syntax.BoolConst(not operand.value)
    return operand.operand if isinstance(operand, syntax.Not) else syntax.Not(operand)


def _any(exprs) -> syntax.Expr:
    """The disjunction: a flat chain when short, else a balanced tree (a chain of thousands
    would be as deep as it is long, past the recursion limit of every reader)."""
    terms = [expr for expr in exprs if expr != FALSE]
    if TRUE in terms:
        return TRUE
    if len(terms) > CHAIN:
        middle = len(terms) // 2
        return _or(_any(terms[:middle]), _any(terms[middle:]))
    result = FALSE
    for expr in terms:
        result = _or(result, expr)
    return result


def _sum(terms: list[tuple[int, syntax.Expr]]) -> syntax.Expr:
    """sum of factor * #body, for positive factors."""
    total = None
    for factor, body in terms:
        term = body if isinstance(body, syntax.Count) else syntax.Count(body)
        term = term if factor == 1 else syntax.Scale(factor, term)
        total = term if total is None else syntax.Add(total, term)
    return total


def _comparison(terms: list[tuple[int, syntax.Expr]], bound: int) -> syntax.Expr:
    """sum factor * #body >= bound, with positive terms on the left and negative on the right."""
    positive = [(f, b) for f, b in terms if f > 0]
    negative = [(-f, b) for f, b in terms if f < 0]
    if not negative:  # counts are never negative
        return TRUE if bound <= 0 else syntax.Compare(">=", _sum(positive), syntax.IntConst(bound))
    if not positive:
        if bound > 0:
            return FALSE
        return syntax.Compare("==" if bound == 0 else "<=", _sum(negative), syntax.IntConst(-bound))
    left, right = _sum(positive), _sum(negative)
    if bound == 1:
        return syntax.Compare(">", left, right)
    if bound > 1:
        right = syntax.Add(right, syntax.IntConst(bound))
    elif bound < 0:
        left = syntax.Add(left, syntax.IntConst(-bound))
    return syntax.Compare(">=", left, right)


@dataclass
class _Writer:
    machine: StateMachine
    classes: StateClasses
    namer: ClassNamer
    budget: Budget
    definitions: dict[str, syntax.Expr] = field(default_factory=dict)
    comparisons: dict[tuple, syntax.Ref] = field(default_factory=dict)
    layer_of: dict[str, int] = field(default_factory=dict)
    class_formulas: list[dict[int, syntax.Expr]] = field(default_factory=list)
    thresholds: dict[tuple, syntax.Expr] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def define(self, name: str, expr: syntax.Expr, layer: int) -> syntax.Expr:
        if isinstance(expr, (syntax.BoolConst, syntax.TokenTest, syntax.Ref)):
            return expr
        self.definitions[name] = expr
        self.layer_of[name] = layer
        return syntax.Ref(name)

    def class_name(self, level: int, members: np.ndarray, number: int) -> str:
        """From the labels of one or two coordinates whose being nonzero (or zero) is exactly
        membership in the class (``crasp.decompile.class_names``), the first name not taken;
        ``L{level}_state{number}`` when there is none."""
        for base in self.namer.candidates(level, members):
            name = f"L{level}_{base}"
            if name not in self.definitions and name not in self.aliases.values():
                return name
        return f"L{level}_state{number}"

    # ------------------------------------------------------------- comparisons

    def linear(self, layer: int, coefficients: np.ndarray, holds: bool = True) -> syntax.Expr:
        """sum_t coefficients[t] * n_t >= 0 over the keys of ``layer`` (integers; the last
        key is BOS, whose count is 1), or with ``holds=False`` its negation, which is again
        such an inequality: sum_t -coefficients[t] * n_t - 1 >= 0."""
        if not holds:
            coefficients = -coefficients
            coefficients[-1] -= 1
        per_class = np.zeros(self.classes.count[layer - 1], np.int64)
        per_class[self.classes.of[layer - 1]] = coefficients[:-1]  # equal within a class
        constant = int(coefficients[-1])
        divisor = int(np.gcd.reduce(np.abs(per_class))) if len(per_class) else 0
        if not divisor:
            return syntax.BoolConst(constant >= 0)
        bound = -(constant // divisor)  # ceil(-constant / divisor)
        grouped: dict[int, list[int]] = {}
        for member in np.flatnonzero(per_class):
            grouped.setdefault(int(per_class[member]) // divisor, []).append(int(member))
        key = (layer, tuple(sorted((c, tuple(m)) for c, m in grouped.items())), bound)
        if key not in self.comparisons:
            terms = sum(len(members) for members in grouped.values())
            self.budget.charge(terms, f"layer {layer}: count terms written",
                               f"comparison {len(self.comparisons) + 1} of the program (layer "
                               f"{layer}) would count {terms:,} classes of states")
            terms = [(c, _any(self.class_formulas[layer - 1][m] for m in members))
                     for c, members in sorted(grouped.items(), key=lambda item: -item[0])]
            name = f"L{layer}_cmp{sum(1 for k in self.comparisons if k[0] == layer)}"
            self.comparisons[key] = self.define(name, _comparison(terms, bound), layer)
        return self.comparisons[key]

    def local_linear(self, layer: int, coefficients: np.ndarray, constant: int,
                     holds: bool = True) -> syntax.Expr:
        """sum_{t,d} coefficients[t, d] * ``#[offset(d)] class(t)`` + constant >= 0 over the
        states t of level layer - 1 (``windows``), or with ``holds=False`` its negation."""
        if not holds:
            coefficients, constant = -coefficients, -constant - 1
        classes = self.classes.count[layer - 1]
        per_class = np.zeros((classes, coefficients.shape[1]), np.int64)
        per_class[self.classes.of[layer - 1]] = coefficients   # equal within a class
        divisor = int(np.gcd.reduce(np.abs(per_class).ravel())) if per_class.size else 0
        if not divisor:
            return syntax.BoolConst(constant >= 0)
        grouped: dict[tuple[int, int], list[int]] = {}
        for member, distance in zip(*np.nonzero(per_class)):
            factor = int(per_class[member, distance]) // divisor
            grouped.setdefault((factor, int(distance)), []).append(int(member))
        terms = [(factor, offset_count(_any(self.class_formulas[layer - 1][m] for m in members),
                                       distance))
                 for (factor, distance), members in sorted(grouped.items(),
                                                           key=lambda item: (-item[0][0],
                                                                             item[0][1]))]
        comparison = _comparison(terms, -(constant // divisor))
        key = (layer, "local", format_expr(comparison))
        if key not in self.comparisons:
            name = f"L{layer}_cmp{sum(1 for k in self.comparisons if k[0] == layer)}"
            self.comparisons[key] = self.define(name, comparison, layer)
        return self.comparisons[key]

    def at_least(self, layer: int, tables: LayerTables, q: int, coordinate: int, k: int,
                 holds: bool = True) -> syntax.Expr:
        """The head output coordinate is >= k (grid units) at a position in state q (with
        ``holds=False``: it is < k). Negations are written as comparisons, never with !."""
        low, high = tables.boxes[q, coordinate]
        if k <= low or k > high:
            return syntax.BoolConst((k <= low) == holds)
        cached = (layer, q, coordinate, k, holds)
        if cached not in self.thresholds:
            self.thresholds[cached] = self._at_least(layer, tables, q, coordinate, k, holds)
        return self.thresholds[cached]

    def _at_least(self, layer: int, tables: LayerTables, q: int, coordinate: int, k: int,
                  holds: bool) -> syntax.Expr:
        head, e = divmod(coordinate, self.machine.d_head)
        if head in tables.windows:
            return windowed_at_least(self, layer, tables, tables.windows[head], head, q, e, k,
                                     holds)
        scale = 2 ** self.machine.frac_bits
        weights = tables.weights[head, q]
        ratio = self.linear(layer, scale * tables.summands[head, q, :, e] - k * weights, holds)
        if weights[-1] > 0:
            return ratio
        positive = -(weights > 0).astype(np.int64)  # >= 0 iff D = 0
        distinct, index = np.unique(tables.values[head, :, e], return_inverse=True)
        exact = [scale * Fraction(float(v)) - k for v in distinct]  # floats are binary fractions
        common = math.lcm(*(c.denominator for c in exact))
        integral = np.array([int(c * common) for c in exact], np.int64)[index.reshape(-1)]
        mean = self.linear(layer, np.where(weights == 0, integral, 0), holds)
        return _or(_and(self.linear(layer, positive, False), ratio),
                   _and(self.linear(layer, positive), mean))

    # ------------------------------------------------------------- state classes

    def tree(self, layer: int, tables: LayerTables, q: int, table: np.ndarray, axis: int
             ) -> syntax.Expr:
        """A formula over the thresholds of coordinates axis.. that holds where table is True."""
        if table.all():
            return TRUE
        if not table.any():
            return FALSE
        low = int(tables.boxes[q, axis, 0])
        runs = []  # maximal intervals [start, stop) of equal sub-tables, with their formulas
        for stop in range(1, len(table) + 1):
            start = runs[-1][1] if runs else 0
            if stop == len(table) or not np.array_equal(table[stop], table[start]):
                runs.append((start, stop, self.tree(layer, tables, q, table[start], axis + 1)))
        result = FALSE
        for index, (start, stop, below) in enumerate(runs):
            # a bound is implied where every run beyond it holds throughout
            lower = (TRUE if all(f == TRUE for _, _, f in runs[:index])
                     else self.at_least(layer, tables, q, axis, low + start))
            upper = (TRUE if all(f == TRUE for _, _, f in runs[index + 1:])
                     else self.at_least(layer, tables, q, axis, low + stop, holds=False))
            result = _or(result, _and(_and(lower, upper), below))
        return result

    def level_formulas(self, level: int, wanted: list[int]) -> dict[int, syntax.Expr]:
        machine, of = self.machine, self.classes.of
        if level == 0:
            tests = [syntax.TokenTest(token) for token in machine.vocab]
            if machine.has_other:
                tests.append(_not(_any(tests)))
            bodies = {c: TRUE if (of[0][machine.token_states] == c).all() else
                      _any(_and(test, self.residues(of[0][states] == c))
                           for test, states in zip(tests, machine.token_states))
                      for c in wanted}
        else:
            tables = machine.layers[level - 1]
            queries = range(self.classes.count[level - 1])
            representatives = [int(np.argmax(of[level - 1] == Q)) for Q in queries]
            bodies = {}
            for c in wanted:
                grouped: dict[syntax.Expr, list[int]] = {}
                for query_class, q in zip(queries, representatives):
                    after = of[level][tables.transitions[q]]
                    grouped.setdefault(self.tree(level, tables, q, after == c, 0),
                                       []).append(query_class)
                bodies[c] = _any(
                    _and(TRUE if len(members) == len(queries) else
                         _any(self.class_formulas[level - 1][Q] for Q in members), condition)
                    for condition, members in grouped.items())
        last = level == len(machine.states) - 1
        return {c: body if last else self.define_class(level, of[level] == c, c, body)
                for c, body in bodies.items()}

    def residues(self, holds: np.ndarray) -> syntax.Expr:
        """A formula of the position that holds exactly where ``holds[t mod period]`` does (t
        the transformer position, so the program position t - 1 has residue t - 1)."""
        period = self.machine.period
        if holds.all() or not holds.any():
            return syntax.BoolConst(bool(holds.all()))
        return _any(syntax.PositionTest("mod", period, (t - 1) % period)
                    for t in np.flatnonzero(holds))

    def define_class(self, level: int, members: np.ndarray, number: int, body: syntax.Expr
                     ) -> syntax.Expr:
        """A class's definition; a class that is one comparison lends it its label name."""
        name = self.class_name(level, members, number)
        if (isinstance(body, syntax.Ref) and body.name.startswith(f"L{level}_cmp")
                and body.name not in self.aliases and name != f"L{level}_state{number}"):
            self.aliases[body.name] = name
            return body
        return self.define(name, body, level)

    def program(self) -> tuple[dict[str, syntax.Expr], syntax.Expr]:
        levels = len(self.machine.states)
        for level in range(levels - 1):
            self.class_formulas.append(
                self.level_formulas(level, list(range(self.classes.count[level]))))
        return self.definitions, self.level_formulas(levels - 1, [1])[1]

    def at_bos(self, accept: syntax.Expr, holds_at_bos: bool) -> syntax.Expr:
        """``accept`` corrected at BOS to the model's answer on the empty input."""
        if holds_at_bos == self.machine.bos_decision:
            return accept
        if self.machine.has_other:
            test = syntax.Compare("==", syntax.Count(TRUE), syntax.IntConst(0))
        else:
            test = _not(_any(syntax.TokenTest(t) for t in self.machine.vocab))
        bos = self.define("bos", test, 0)
        return _or(accept, bos) if self.machine.bos_decision else _and(accept, _not(bos))


def _used(definitions: dict[str, syntax.Expr], answer: syntax.Expr) -> set[str]:
    used, stack = set(), [answer]
    while stack:
        for node in syntax.walk(stack.pop()):
            if isinstance(node, syntax.Ref) and node.name not in used:
                used.add(node.name)
                stack.append(definitions[node.name])
    return used


def _holds_at_bos(vocab: tuple[str, ...], definitions: dict[str, syntax.Expr],
                  answer: syntax.Expr) -> bool:
    """The interpreter's value of ``answer`` at BOS (token tests false, counts 0)."""
    program = syntax.Program(
        tuple(syntax.Definition(name, expr, syntax.BOOL)
              for name, expr in [*definitions.items(), ("answer", answer)]), vocab, True)
    return bool(crasp.evaluate(program, [[]]).accept[0])


def _renamed(expr: syntax.Expr, names: dict[str, str]) -> syntax.Expr:
    if isinstance(expr, syntax.Ref):
        return syntax.Ref(names.get(expr.name, expr.name))
    changes = {f.name: _renamed(getattr(expr, f.name), names) for f in fields(expr)
               if isinstance(getattr(expr, f.name), syntax.Expr)}
    return replace(expr, **changes) if changes else expr


def _numbered(names: list[str]) -> dict[str, str]:
    """Consecutive numbers for the generated names that survive (L2_cmp0, L2_cmp1, ...)."""
    counters: dict[str, int] = {}
    mapping = {}
    for name in names:
        generated = re.fullmatch(r"(L\d+_(?:cmp|state))\d+", name)
        if generated:
            mapping[name] = f"{generated[1]}{counters.setdefault(generated[1], 0)}"
            counters[generated[1]] += 1
    return mapping


def check_vocabulary(vocab: tuple[str, ...], source: str) -> None:
    """Refuse a vocabulary with a token no token literal can hold (``token_literal_problem``):
    the program could not test for it, and its text would not read back."""
    for number, token in enumerate(vocab, start=1):
        problem = token_literal_problem(token)
        if problem:
            raise CraspError(f"cannot decompile {source}: token {number} of its vocabulary, "
                             f"{token!r}, {problem}; a C-RASP token literal cannot hold it, so "
                             f"no program can test for it")


def write_program(machine: StateMachine, classes: StateClasses, labels: list[str],
                  source: str, budget: Budget | None = None) -> str:
    """The decompiled program's text (``source`` names the model in the header, as Python
    writes it when it holds a character that is not printable, such as a line break).
    ``decompiling`` parses this text: the program it returns is what was written."""
    writer = _Writer(machine, classes, ClassNamer(machine.states, labels), budget or Budget())
    definitions, answer = writer.program()
    answer = writer.at_bos(answer, _holds_at_bos(machine.vocab, definitions, answer))
    used = _used(definitions, answer)
    layers = len(machine.layers)
    shown = source if source.isprintable() else repr(source)
    lines = [f"{HEADER} from {shown}: {layers} layer{'s' * (layers != 1)}.",
             "// Each Lk_ definition reads the counts of layer k; its depth is k.",
             "alphabet " + " ".join(f'"{token}"' for token in machine.vocab)]
    names = {**_numbered([name for name in definitions
                          if name in used and name not in writer.aliases]), **writer.aliases}
    current = None
    for name, expr in [*definitions.items(), ("answer", answer)]:
        if name not in used and name != "answer":
            continue
        layer = writer.layer_of.get(name)
        if layer != current and layer:
            lines.append(f"// layer {layer}: counts of the states after "
                         + ("the embedding" if layer == 1 else f"layer {layer - 1}"))
        current = layer
        lines.append(f"{names.get(name, name)} = {format_expr(_renamed(expr, names))}")
    return "\n".join(lines) + "\n"
