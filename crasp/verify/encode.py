"""Pass: Program x symbolic tokens -> z3 terms. A C-RASP program unrolled one position at a time.

Derivation. A program's value at position i depends only on the tokens at positions <= i
(every count is a prefix count), so it can be computed left to right from a *state*: the value
of every count node through the previous position. With ``t_i`` the token at i,

    #P (i)          = #P (i - 1) + [P(i)]              (linear integer arithmetic)
    #[offset c] P (i) = [P(i - c)]  (0 when i - c < 0)

and every other operation is the same operation on the terms of its operands: ``< <= == ...``
become integer comparisons, ``+ - k*x`` linear terms, ``min``, ``max`` and ``if`` become z3's
``If``, ``! && ||`` its Boolean connectives, a token test a Boolean over the token's one-hot
variables, ``mod(m, r)`` the test ``position % m == r``. So the value of every definition at
every position of a string of length n is a term of linear integer arithmetic over n tokens,
exactly what the interpreter (``crasp.interpret``) computes for each concrete string.

The BOS position (``bos``) reads no token: every token test is false, every count is 0 and
positional predicates see position -1, as in the interpreter; the empty string's answer is
the answer there.

Preconditions: the program is checked (``crasp.check``); ``alphabet`` is the set of tokens the
strings are drawn from (a token the program does not mention fails all its token tests, as in
the interpreter). The *start state* (the counts before the first unrolled position, and the
body values of guarded counts before it) is the caller's: zero for strings from the start
(``bounded``), symbolic for an induction window (``induction``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from crasp import interpret, syntax
from crasp.verify.solver import z3

Term = object
"""A z3 term: ``BoolRef`` for a Boolean definition, ``ArithRef`` (Int) for a count."""


def count_nodes(program: syntax.Program) -> list[syntax.Count]:
    """Every count node of ``program`` (each object once), in definition order."""
    seen: dict[int, syntax.Count] = {}
    for definition in program.definitions:
        for node in syntax.walk(definition.expr):
            if isinstance(node, syntax.Count):
                seen.setdefault(id(node), node)
    return list(seen.values())


class ProgramEncoder:
    """Unrolls one program over the positions of a string, one ``step`` per token.

    ``start_counts`` maps ``id(count node)`` to its value before the first step (default 0);
    ``earlier_body(node, position)`` is the Boolean value of a guarded count's body at a
    ``position`` before the first step (default: such a position is before the string, so the
    guarded count reads 0 there).

    A count whose body depends on the token alone (no count or positional predicate below
    it, ``token_only``) is not unrolled: it is the sum of the Parikh counts (``ParikhCounts``)
    of the tokens where its body holds, so both programs' token counts are the same linear
    terms and the solver sees at once that, for example, #true = #"a" + #"b" + #other.
    """

    def __init__(self, program: syntax.Program, alphabet: tuple[str, ...],
                 table: CountTable, start_counts: dict[int, Term] | None = None,
                 earlier_body: Callable[[syntax.Count, Term], Term] | None = None):
        self.z3 = z3()
        self.table = table
        self.program = program
        self.index = {token: i for i, token in enumerate(alphabet)}
        nodes = count_nodes(program)
        start_counts = start_counts or {}
        self.counts: dict[int, Term] = {id(node): start_counts.get(id(node), self.z3.IntVal(0))
                                        for node in nodes}
        self.earlier_body = earlier_body
        self.history: dict[int, list[Term]] = {key: [] for key in self.counts}
        pure = token_only_definitions(program)
        self.token_sets = tokens_where_bodies_hold(
            program, [node for node in nodes if is_token_only(node, pure)], alphabet)
        self.steps = 0

    def bos(self) -> dict[str, Term]:
        """Every definition's value at BOS (no token, counts 0, position -1)."""
        return self._values(None, -1, lambda node, body: self.z3.IntVal(0))

    def step(self, token: list[Term], position: Term | int, parikh: list[Term],
             replace: Callable[[str, Term], Term] | None = None) -> dict[str, Term]:
        """Every definition's value at the next position, whose token is given one-hot
        (``token[k]`` holds iff the token is ``alphabet[k]``), whose 0-based index is
        ``position`` (an int, or a z3 term in an induction window), and where ``parikh[k]``
        is how many times ``alphabet[k]`` occurred up to it (inclusive). ``replace(name,
        term)``, if given, may swap a definition's term for one proved equal to it before
        later definitions use it (``bounded``'s sweeping)."""

        def count(node: syntax.Count, body: Term) -> Term:
            if id(node) in self.token_sets:
                return self.z3.Sum([self.z3.IntVal(0)] + [parikh[k]
                                                          for k in self.token_sets[id(node)]])
            return self._count(node, body, position)
        values = self._values(token, position, count, replace)
        self.steps += 1
        return values

    def _values(self, token, position, count_value, replace=None) -> dict[str, Term]:
        z = self.z3
        env: dict[str, Term] = {}
        stepped: dict[int, Term] = {}   # a count node shared by two expressions steps once

        def combine(node: syntax.Expr, parts: list[Term]) -> Term:
            kind = type(node)
            if kind is syntax.TokenTest:
                if token is None or node.token not in self.index:
                    return z.BoolVal(False)
                return token[self.index[node.token]]
            if kind is syntax.BoolConst:
                return z.BoolVal(node.value)
            if kind is syntax.IntConst:
                return z.IntVal(node.value)
            if kind is syntax.PositionTest:
                if isinstance(position, int):
                    return z.BoolVal(position % node.modulus == node.residue)
                return position % node.modulus == node.residue
            if kind is syntax.Ref:
                return env[node.name]
            if kind is syntax.Count:
                if id(node) not in stepped:
                    stepped[id(node)] = count_value(node, parts[0])
                return stepped[id(node)]
            return _OPERATIONS[kind](z, node, *parts)

        for definition in self.program.definitions:
            env[definition.name] = syntax.fold(definition.expr, combine)
            if replace is not None:
                env[definition.name] = replace(definition.name, env[definition.name])
        return env

    def _count(self, node: syntax.Count, body: Term, position) -> Term:
        z, key = self.z3, id(node)
        self.history[key].append(body)
        if node.relation is None:
            self.counts[key] = self.table.next(self.counts[key], body)
            return self.counts[key]
        back = self.steps - node.relation.offset
        if back >= 0:
            return z.If(self.history[key][back], 1, 0)
        if self.earlier_body is None:
            return z.IntVal(0)
        return z.If(self.earlier_body(node, position - node.relation.offset), 1, 0)


def token_only_definitions(program: syntax.Program) -> set[str]:
    """The definitions whose value depends on the current token alone."""
    pure: set[str] = set()
    for definition in program.definitions:
        if _reads_token_only(definition.expr, pure):
            pure.add(definition.name)
    return pure


def _reads_token_only(expr: syntax.Expr, pure: set[str]) -> bool:
    return all(not isinstance(node, (syntax.Count, syntax.PositionTest))
               and (not isinstance(node, syntax.Ref) or node.name in pure)
               for node in syntax.walk(expr))


def is_token_only(node: syntax.Count, pure: set[str]) -> bool:
    """Whether an (unguarded) count's body depends on the current token alone, given the
    ``token_only_definitions``."""
    return node.relation is None and _reads_token_only(node.body, pure)


def with_definitions(program: syntax.Program, name: str, exprs: list[syntax.Expr],
                     type_: str) -> syntax.Program:
    """``program`` with one more definition of ``type_`` per expression, named
    ``name.format(k)`` for the k-th (a name with a NUL, which no program's can hold), so that
    the interpreter evaluates each where the program does (simulation reads them back by
    name)."""
    extra = tuple(syntax.Definition(name.format(k), expr, type_) for k, expr in enumerate(exprs))
    return syntax.Program(program.definitions + extra, program.alphabet, declared_alphabet=True)


TOKEN_BODY = "\0token-only body {}"
"""The name a token-only count's body gets in the copy of a program that is evaluated per
token (no program name can contain a NUL)."""


def tokens_where_bodies_hold(program: syntax.Program, nodes: list[syntax.Count],
                             alphabet: tuple[str, ...]) -> dict[int, list[int]]:
    """For each token-only count of ``nodes`` (``is_token_only``), the indices of the tokens
    of ``alphabet`` where its body holds: the program, with each body as one more definition,
    run by the interpreter on one string per token (such a body reads no count and no
    position, so its value at the only token is its value at that token anywhere); a token
    the program does not mention fails its token tests, as in the encoding. One vectorized
    evaluation: time linear in the program times the alphabet, where asking z3 to simplify
    the program's terms once per token cost a solver call per token."""
    holds: dict[int, list[int]] = {id(node): [] for node in nodes}
    if not nodes or not alphabet:
        return holds
    copy = with_definitions(program, TOKEN_BODY, [node.body for node in nodes], syntax.BOOL)
    columns = interpret.evaluate(copy, [[token] for token in alphabet]).columns
    for k, node in enumerate(nodes):
        holds[id(node)] = np.flatnonzero(np.asarray(columns[TOKEN_BODY.format(k)])[:, 1]
                                         ).tolist()
    return holds


class CountTable:
    """The running value of every unguarded count, as one integer variable per count and
    position, shared between the programs: the count that adds ``body`` to ``previous`` is
    the same variable wherever the same terms meet (two programs that count the same thing
    share it, so the solver sees them equal without reasoning). Each variable comes with its
    definition ``value == previous + If(body, 1, 0)`` and the redundant bounds
    ``previous <= value <= previous + 1``, which give the solver at once that counts never
    decrease and are never negative (from a start of 0, or of a start state bounded so)."""

    def __init__(self, solver):
        self.z3 = z3()
        self.solver = solver
        self.made: dict[tuple[int, int], Term] = {}

    def next(self, previous: Term, body: Term) -> Term:
        key = (previous.get_id(), body.get_id())
        if key not in self.made:
            value = self.z3.Int(f"count#{len(self.made)}")
            self.solver.add(value == previous + self.z3.If(body, 1, 0),
                            previous <= value, value <= previous + 1)
            self.made[key] = value
        return self.made[key]


class ParikhCounts:
    """How many times each token occurred through the current position: one fresh integer per
    token and position, tied to the one-hot token bits, with the redundant fact that they sum
    to the number of positions (the solver would otherwise have to find it by case splits)."""

    def __init__(self, solver, start: list[Term], start_length: Term | int, name: str):
        self.z3 = z3()
        self.solver = solver
        self.current = list(start)
        self.length = start_length
        self.name = name
        self.steps = 0

    def advance(self, token: list[Term]) -> list[Term]:
        z = self.z3
        self.steps += 1
        self.length = self.length + 1
        fresh = [z.Int(f"{self.name}{self.steps}#{k}") for k in range(len(token))]
        self.solver.add(*[new == old + z.If(bit, 1, 0)
                          for new, old, bit in zip(fresh, self.current, token)])
        self.solver.add(*[z.And(old <= new, new <= old + 1)
                          for new, old in zip(fresh, self.current)])
        self.solver.add(z.Sum(fresh) == self.length)
        self.current = fresh
        return fresh


_OPERATIONS = {
    syntax.Not: lambda z, node, a: z.Not(a),
    syntax.And: lambda z, node, a, b: z.And(a, b),
    syntax.Or: lambda z, node, a, b: z.Or(a, b),
    syntax.Add: lambda z, node, a, b: a + b,
    syntax.Sub: lambda z, node, a, b: a - b,
    syntax.Scale: lambda z, node, a: node.factor * a,
    syntax.Min: lambda z, node, a, b: z.If(a <= b, a, b),
    syntax.Max: lambda z, node, a, b: z.If(a >= b, a, b),
    syntax.Conditional: lambda z, node, c, a, b: z.If(c, a, b),
    syntax.Compare: lambda z, node, a, b: _COMPARE[node.op](a, b),
}

_COMPARE = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def one_hot_token(name: str, size: int) -> tuple[list[Term], Term]:
    """``size`` fresh Booleans for one position's token and the constraint that exactly one
    holds."""
    z = z3()
    bits = [z.Bool(f"{name}#{k}") for k in range(size)]
    return bits, z.PbEq([(bit, 1) for bit in bits], 1)
