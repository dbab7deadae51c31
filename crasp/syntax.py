"""The C-RASP intermediate representation: plain frozen dataclasses.

Every pass of crasp reads or writes these nodes: ``parse`` builds them from text, ``check``
types them, ``depth`` measures them, ``interpret`` evaluates them, ``fmt`` prints them, and
the compiler lowers them to weights.

Nodes compare by structure only: the source ``span`` is carried for error messages and is
excluded from equality, so a program printed by ``fmt`` and parsed back compares equal to the
original.

Semantics (positions are the input tokens, 0-based as in Hahn's interpreter; the BOS position
that precedes them is index -1):

* ``TokenTest(t)``: true where the token is ``t``; false at BOS.
* ``Count(body)``: the number of positions j <= i (the current one included) where ``body``
  holds. BOS never counts.
* ``Count(body, relation)``: the same, restricted to the positions j = i - offset (a local
  relation; Hahn's ``pred`` is offset 1, ``pred4`` offset 4).
* ``PositionTest(name, modulus, residue)``: true where i mod modulus == residue (0-based i;
  Hahn's ``pos_even`` is modulus 2, residue 0).
* Comparisons, Boolean connectives, +, -, constant scaling, min, max and ``c if P else d``
  have their usual meaning, position by position.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Hashable, Literal, Union

BOOL: Literal["bool"] = "bool"
COUNT: Literal["count"] = "count"
Type = Literal["bool", "count"]

COMPARISON_OPERATORS = ("<", "<=", ">", ">=", "==", "!=")


@dataclass(frozen=True)
class Span:
    """A source location: 1-based line and column of the first character, and of the end."""

    line: int
    column: int
    end_line: int
    end_column: int


def _span() -> Span | None:
    return field(default=None, compare=False, repr=False,  # type: ignore[return-value]
                 kw_only=True)


# ---------------------------------------------------------------- Boolean-valued expressions


@dataclass(frozen=True)
class TokenTest:
    token: str
    span: Span | None = _span()


@dataclass(frozen=True)
class BoolConst:
    value: bool
    span: Span | None = _span()


@dataclass(frozen=True)
class PositionTest:
    """Periodic unary predicate: true at 0-based position i iff i % modulus == residue.

    ``name`` is how the program wrote it (``pos_even`` or ``mod``) so that ``fmt`` can print
    it back unchanged.
    """

    name: str
    modulus: int
    residue: int
    span: Span | None = _span()


@dataclass(frozen=True)
class Not:
    operand: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class _Binary:
    """Two operands; the subclasses differ only in meaning (and compare unequal)."""

    left: Expr
    right: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class And(_Binary):
    pass


@dataclass(frozen=True)
class Or(_Binary):
    pass


@dataclass(frozen=True)
class Compare:
    op: str  # one of COMPARISON_OPERATORS
    left: Expr
    right: Expr
    span: Span | None = _span()


# ---------------------------------------------------------------- count-valued expressions


@dataclass(frozen=True)
class LocalRelation:
    """The binary predicate j = i - offset used as a guard in ``#[relation] body``.

    ``name`` and ``args`` are how the program wrote it (``pred``, ``pred4`` or
    ``offset(3)``), kept for printing.
    """

    name: str
    offset: int
    args: tuple[int, ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True)
class Count:
    body: Expr
    relation: LocalRelation | None = None
    span: Span | None = _span()


@dataclass(frozen=True)
class IntConst:
    value: int
    span: Span | None = _span()


@dataclass(frozen=True)
class Add(_Binary):
    pass


@dataclass(frozen=True)
class Sub(_Binary):
    pass


@dataclass(frozen=True)
class Scale:
    """``factor * operand`` with an integer literal factor (unary minus is factor -1)."""

    factor: int
    operand: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Min(_Binary):
    pass


@dataclass(frozen=True)
class Max(_Binary):
    pass


# ---------------------------------------------------------------- either type


@dataclass(frozen=True)
class Ref:
    """A use of an earlier definition."""

    name: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Conditional:
    """``if_true if condition else if_false``; both branches have the same type."""

    condition: Expr
    if_true: Expr
    if_false: Expr
    span: Span | None = _span()


Expr = Union[
    TokenTest, BoolConst, PositionTest, Not, And, Or, Compare,
    Count, IntConst, Add, Sub, Scale, Min, Max, Ref, Conditional,
]


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct subexpressions of ``expr``, left to right."""
    direct = _CHILDREN.get(type(expr))
    return direct(expr) if direct is not None else ()


_CHILD_FIELDS = {   # the fields that hold subexpressions, in ``children``'s order
    Not: ("operand",), Scale: ("operand",), Count: ("body",),
    **{binary: ("left", "right") for binary in (And, Or, Add, Sub, Min, Max, Compare)},
    Conditional: ("condition", "if_true", "if_false"),
}


def _children_getter(names: tuple[str, ...]):
    get = attrgetter(*names)   # a tuple for two names or more, the value itself for one
    return get if len(names) > 1 else lambda node: (get(node),)


# by exact type: a dict look-up, not a chain of isinstance (every pass walks)
_CHILDREN = {kind: _children_getter(names) for kind, names in _CHILD_FIELDS.items()}


def with_children(expr: Expr, kids: list[Expr] | tuple[Expr, ...]) -> Expr:
    """``expr`` with its direct subexpressions replaced by ``kids`` (in ``children``'s order);
    ``expr`` itself where they are the same objects (most are, in a pass that rewrites a few
    nodes: a new node for each would double the time to check a long expression)."""
    names = _CHILD_FIELDS.get(type(expr), ())
    for name, kid in zip(names, kids):
        if getattr(expr, name) is not kid:
            return replace(expr, **dict(zip(names, kids)))
    return expr


def interning_key(expr: Expr) -> Hashable:
    """A key for hash-consing: two nodes with the same key have the same structure if their
    children are interned (one object per structure) already. A leaf is its own key (nodes
    compare by structure); an inner node's key is its type, its own fields and the identities
    of its children, so that building it costs no walk below them."""
    kids = children(expr)
    if not kids:
        return expr
    return (type(expr), *_own_fields(expr), *map(id, kids))


def fold(expr: Expr, combine):
    """``combine(node, [result of each child])`` for every node, children first (left to
    right), with an explicit stack: no recursion, however deep the tree."""
    results: list = []
    stack: list[tuple[Expr, tuple | None]] = [(expr, None)]
    pop, push, direct_children = stack.pop, stack.append, _CHILDREN.get
    while stack:
        node, kids = pop()
        if kids is None:   # first visit: the children go first, then the node again
            direct = direct_children(type(node))
            if direct is None:
                results.append(combine(node, []))
                continue
            kids = direct(node)
            push((node, kids))
            for kid in reversed(kids):
                push((kid, None))
        else:
            parts = results[-len(kids):]
            del results[-len(kids):]
            results.append(combine(node, parts))
    return results[0]


def nesting(expr: Expr) -> int:
    """The number of nodes on the longest path from ``expr`` down to a leaf."""
    return fold(expr, lambda node, depths: 1 + max(depths, default=0))


def same_structure(first: Expr, second: Expr) -> bool:
    """``first == second`` (spans ignored) without recursion."""
    stack = [(first, second)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        kids_a, kids_b = children(a), children(b)
        if not kids_a:
            if a != b:
                return False
            continue
        if _own_fields(a) != _own_fields(b):
            return False
        stack.extend(zip(kids_a, kids_b))
    return True


def _own_fields(expr: Expr) -> tuple:
    """The fields of a node that are not subexpressions (operator, factor, relation)."""
    if isinstance(expr, Compare):
        return (expr.op,)
    if isinstance(expr, Scale):
        return (expr.factor,)
    if isinstance(expr, Count):
        return (expr.relation,)
    return ()


def walk(expr: Expr):
    """Every node of ``expr``, parents before children."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def reads_position(node: Expr) -> bool:
    """Whether ``node`` itself sees positions: a periodic predicate or a guarded count (one
    with a local relation). Programs without such nodes are position-free, the fragment that
    NoPE transformers and the compiler handle."""
    return isinstance(node, PositionTest) or (isinstance(node, Count) and node.relation is not None)


def is_positional(program: Program) -> bool:
    """Whether any definition of ``program`` has a node that ``reads_position``."""
    return any(reads_position(node) for d in program.definitions for node in walk(d.expr))


# ---------------------------------------------------------------- programs

ANSWER_NAME = "<answer>"
"""The name given to a program's final bare expression (it cannot clash with a user name)."""


@dataclass(frozen=True)
class Definition:
    name: str
    expr: Expr
    type: Type
    bare: bool = False  # the program's final bare expression, printed without "NAME ="
    span: Span | None = _span()


@dataclass(frozen=True)
class Program:
    """A checked C-RASP program.

    ``alphabet`` is the declared alphabet if the program has an ``alphabet`` line, otherwise the
    token literals of the program (plus any added by the caller), in order of first use.
    ``declared_alphabet`` records which, so that printing keeps the program unchanged. The answer
    is the last definition, read at the last position.
    """

    definitions: tuple[Definition, ...]
    alphabet: tuple[str, ...]
    declared_alphabet: bool = False
    imports: tuple[str, ...] = ()
    source: str = field(default="", compare=False, repr=False)
    filename: str = field(default="<string>", compare=False)
    header_lines: tuple[int, ...] = field(default=(), compare=False, repr=False)
    """The source lines of the ``#import`` and ``alphabet`` statements (``fmt`` rewrites them)."""
    rewrites: tuple[tuple[int, str], ...] = field(default=(), compare=False, repr=False)
    """(line, what was changed) where Hahn's reading is expressed in crasp's dialect: a renamed
    definition, a token literal that no input token can equal written as ``false``."""

    @property
    def answer(self) -> Definition:
        return self.definitions[-1]

    @property
    def types(self) -> dict[str, Type]:
        return {d.name: d.type for d in self.definitions}

    def definition(self, name: str) -> Definition:
        for d in self.definitions:
            if d.name == name:
                return d
        raise KeyError(name)
