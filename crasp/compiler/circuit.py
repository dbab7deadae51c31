"""The compiler's intermediate representation: one Boolean circuit over strict linear tests.

``linearize`` turns every Boolean of a program into a node of a single hash-consed DAG whose
leaves are token tests, constants and *tests*; the later passes only read this circuit.

* ``Test(terms, constant)`` holds at position i iff
  ``sum(coefficient * #[body](i) for body, coefficient in terms) + constant < 0``, where
  ``#[body](i)`` counts the token positions j <= i at which the node ``body`` holds (never BOS).
  Its depth (level) is 1 + the largest depth of a counted body. Cancelled terms stay, with
  coefficient 0 (``#"a" - #"a" < 1`` keeps the term of ``"a"``), so that the circuit has
  exactly the program's depth, every level keeps its tests, and the compiled model has exactly
  that many non-empty layers.
* ``Not``, ``And``, ``Or`` (n-ary, operands sorted and distinct) are the connectives; ``Token``,
  ``Constant`` and ``Position`` (the periodic predicate i % m == r) are the depth-0 leaves.
* ``Local(body, offset)`` is the guarded count ``#[offset(c)] body``, which is 0 or 1: it holds
  at i iff i - c >= 0 and ``body`` holds at i - c. Like a count it is one level above its body
  (crasp's depth; ``crasp.compiler.local_heads`` computes it with one ALiBi head).

Node ids are indices into ``Circuit.nodes`` and every operand has a smaller id than its user,
so ids are a topological order. ``depth`` of a node is the program's notion of depth: a token
or constant 0, a test its level, a connective the maximum over its operands. Each node keeps a
``text`` (the source expression it was first built from) and ``origin`` (the definition it
first appeared in), and ``names`` the first Boolean definition whose value it is, for labels.

At a position the value of a node is a Boolean; ``values_at_bos`` and ``values_on_token`` give
the values at BOS and (for depth-0 nodes) at a token, which the weight emitter needs: BOS is
"no token", where every token test is false and every count is 0, so a test reads
``constant < 0`` there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Token:
    symbol: str


@dataclass(frozen=True)
class Constant:
    value: bool


@dataclass(frozen=True)
class Position:
    """The periodic predicate ``i % modulus == residue`` at the 0-based token position i (BOS is
    i = -1, where Python's modulo makes it hold iff residue == modulus - 1)."""

    modulus: int
    residue: int


@dataclass(frozen=True)
class Local:
    """``#[offset(offset)] body``: the body's value at i - offset, and 0 (False) before the
    first token."""

    body: int
    offset: int


@dataclass(frozen=True)
class Not:
    operand: int


@dataclass(frozen=True)
class And:
    operands: tuple[int, ...]


@dataclass(frozen=True)
class Or:
    operands: tuple[int, ...]


@dataclass(frozen=True)
class Test:
    """``sum(coefficient * #[body]) + constant < 0``; at least one term, sorted by body id
    (a coefficient may be 0: a cancelled count)."""

    terms: tuple[tuple[int, int], ...]
    constant: int

    @property
    def bodies(self) -> tuple[int, ...]:
        return tuple(body for body, _ in self.terms)


Node = Union[Token, Constant, Position, Not, And, Or, Test, Local]


def operands(node: Node) -> tuple[int, ...]:
    """The nodes ``node`` reads: a connective's operands, or a test's counted bodies."""
    if isinstance(node, Not):
        return (node.operand,)
    if isinstance(node, (And, Or)):
        return node.operands
    if isinstance(node, Test):
        return node.bodies
    if isinstance(node, Local):
        return (node.body,)
    return ()


@dataclass
class Circuit:
    """A hash-consed DAG of nodes with their depths, built by the ``add_*`` helpers."""

    alphabet: tuple[str, ...]
    nodes: list[Node] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    origin: list[str] = field(default_factory=list)
    index: dict[Node, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)  # node -> first Boolean definition

    def add(self, node: Node, text: str, origin: str) -> int:
        found = self.index.get(node)
        if found is not None:
            return found
        ident = len(self.nodes)
        self.nodes.append(node)
        self.index[node] = ident
        below = max((self.depth[o] for o in operands(node)), default=0)
        self.depth.append(below + 1 if isinstance(node, (Test, Local)) else below)
        self.text.append(text)
        self.origin.append(origin)
        return ident

    def constant(self, value: bool, origin: str) -> int:
        return self.add(Constant(value), "true" if value else "false", origin)

    def negate(self, operand: int, text: str, origin: str) -> int:
        """``!x``, with ``!!x = x`` and ``!constant`` folded (neither changes any depth)."""
        node = self.nodes[operand]
        if isinstance(node, Not):
            return node.operand
        if isinstance(node, Constant):
            return self.constant(not node.value, origin)
        return self.add(Not(operand), text, origin)

    def connect(self, kind: type[And] | type[Or], items: list[int], text: str,
                origin: str) -> int:
        """n-ary ``&&`` / ``||``: duplicates and the identity constant (true for &&, false
        for ||) are dropped, and a nested node of the same kind is flattened into this one when
        it has the result's depth (so both are computed by the same feed-forward sublayer,
        flattening saves a hidden layer; a shallower one stays a single stored bit).

        Nothing else is simplified: ``x && false`` stays a gate, because folding it would drop
        ``x`` and possibly the only test of some level, leaving that layer empty.
        """
        identity = Constant(kind is And)
        top = max(self.depth[item] for item in items)
        flat: set[int] = set()
        for item in items:
            node = self.nodes[item]
            if isinstance(node, kind) and self.depth[item] == top:
                flat.update(node.operands)
            elif node != identity:
                flat.add(item)
        if not flat:
            return self.constant(identity.value, origin)
        if len(flat) == 1:
            return flat.pop()
        return self.add(kind(tuple(sorted(flat))), text, origin)

    def locals(self) -> list[int]:
        """The local counts (``Local`` nodes) of the circuit."""
        return [i for i, node in enumerate(self.nodes) if isinstance(node, Local)]

    def base(self, ident: int) -> int:
        """The node under any negation: what a residual coordinate would store."""
        node = self.nodes[ident]
        return node.operand if isinstance(node, Not) else ident

    def _evaluate(self, token: str | None, position: int, limit: int) -> list[bool | None]:
        values: list[bool | None] = []
        for ident, node in enumerate(self.nodes):
            if self.depth[ident] > limit:
                values.append(None)
            elif isinstance(node, Token):
                values.append(node.symbol == token)
            elif isinstance(node, Position):
                values.append(position % node.modulus == node.residue)
            elif isinstance(node, Local):  # at BOS: no position before the first token
                values.append(False)
            elif isinstance(node, Constant):
                values.append(node.value)
            elif isinstance(node, Not):
                values.append(not values[node.operand])
            elif isinstance(node, And):
                values.append(all(values[o] for o in node.operands))
            elif isinstance(node, Or):
                values.append(any(values[o] for o in node.operands))
            else:  # a test at BOS: every count is 0 there
                values.append(node.constant < 0)
        return values

    def values_at_bos(self) -> list[bool]:
        """Every node's value at the BOS position (no token, position -1; all counts 0)."""
        return self._evaluate(None, -1, limit=len(self.nodes))  # type: ignore[return-value]

    def values_on_token(self, token: str, position: int = 0) -> list[bool | None]:
        """The value of every depth-0 node at the token position ``position`` holding
        ``token`` (None above depth 0); a periodic predicate depends on the position only
        through its residue."""
        return self._evaluate(token, position, limit=0)

    def reachable(self, roots: list[int]) -> list[int]:
        """The ids of ``roots`` and everything they read, in increasing (topological) order."""
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            ident = stack.pop()
            if ident not in seen:
                seen.add(ident)
                stack.extend(operands(self.nodes[ident]))
        return sorted(seen)

    def describe_test(self, ident: int) -> str:
        """A test as text, e.g. ``#"(" - #")" < 0``."""
        test = self.nodes[ident]
        assert isinstance(test, Test)
        parts: list[str] = []
        for body, coefficient in test.terms:
            if not coefficient:
                continue
            name = self.names.get(body, self.text[body])
            if not _atomic(name):
                name = f"({name})"
            magnitude = abs(coefficient)
            term = f"#{name}" if magnitude == 1 else f"{magnitude} * #{name}"
            if not parts:
                parts.append(term if coefficient > 0 else f"-{term}")
            else:
                parts.append(("+ " if coefficient > 0 else "- ") + term)
        if test.constant or not parts:
            if not parts:
                parts.append(str(test.constant))
            else:
                parts.append(("+ " if test.constant > 0 else "- ") + str(abs(test.constant)))
        return " ".join(parts) + " < 0"


def _atomic(text: str) -> bool:
    if text.startswith('"') and text.endswith('"') and text.count('"') == 2:
        return True
    return text.replace("_", "a").isalnum() and not text[0].isdigit()
