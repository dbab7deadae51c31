"""Pass 1, text -> statements: parse C-RASP source by the grammar in ``grammar.lark``.

The result is a list of statements whose expressions are ``crasp.syntax`` nodes, each with the
source ``Span`` it came from. Names are not resolved and nothing is typed yet: that is
``check``'s job. Syntax errors become ``ProgramError`` with the line, the column, a caret and
the tokens that would have been accepted, in words.

Two parsers read the grammar. ``crasp.parse_direct`` (a hand-written tokenizer and precedence
climber, linear and without a parse tree) reads every program it can read exactly as the
grammar does and declines everything else: a syntax error, any rule a node builder enforces,
nesting deeper than it recurses. ``crasp.parse_lark`` (Lark's LALR parser, from the grammar
file) then reads the text as it always has, so every error, and every rare form, is what the
grammar file says. Both build their nodes with ``NodeBuilder`` below.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

from crasp import predicates, syntax
from crasp.errors import ProgramError
from crasp.util.inputs import can_be_input_token
from crasp.syntax import Span

StatementKind = Literal["import", "alphabet", "assign", "bare"]

MAX_LITERAL_DIGITS = 100_000
# Python refuses int <-> str conversions beyond 4,300 digits (against quadratic-time input);
# literals, and the values printed from them, may be as long as the limit above.
if 0 < sys.get_int_max_str_digits() < MAX_LITERAL_DIGITS:
    sys.set_int_max_str_digits(MAX_LITERAL_DIGITS)


def literal_too_long(digits: int) -> str:
    return f"an integer literal of {digits:,} digits (at most {MAX_LITERAL_DIGITS:,})"


@dataclass(frozen=True)
class Statement:
    kind: StatementKind
    span: Span
    name: str = ""                 # assign: the defined name; import: the imported name
    name_span: Span | None = None
    expr: syntax.Expr | None = None
    tokens: tuple[tuple[str, Span], ...] = ()   # alphabet: the declared tokens


@dataclass(frozen=True)
class ParsedProgram:
    statements: tuple[Statement, ...]
    source: str
    filename: str


KEYWORDS = ("if", "else", "true", "false", "min", "max")
"""Never names (in Hahn's grammar too). ``alphabet`` is a keyword only at the start of an
alphabet declaration, so it can name a definition."""
BYTE_ORDER_MARK = "\ufeff"


def undecodable_program(data: bytes, error: UnicodeDecodeError, filename: str) -> ProgramError:
    """The error for a program whose bytes are not UTF-8: where the first bad byte is (line,
    and column in characters), the line shown with the byte as U+FFFD and a caret."""
    line_start = data.rfind(b"\n", 0, error.start) + 1
    line = data.count(b"\n", 0, error.start) + 1
    column = len(data[line_start:error.start].decode("utf-8", errors="replace")) + 1
    return ProgramError(f"byte {error.start + 1} (0x{data[error.start]:02x}) is not UTF-8 text",
                        source=data.decode("utf-8", errors="replace"), filename=filename,
                        span=Span(line, column, line, column + 1),
                        note="crasp reads programs as UTF-8")


def token_literal_problem(token: str) -> str | None:
    """Why ``token`` cannot be written as the token literal ``"token"``, or None when it can.

    A literal is a double quote, the token, a double quote, with no escapes (as in Hahn's
    grammar, so a backslash is an ordinary character): the token is non-empty, holds no
    double quote (it would end the literal) and no whitespace (``str.isspace``: inputs are split
    on it, so no input could hold such a token). It is UTF-8 text (no lone surrogate)."""
    if not can_be_input_token(token):
        return ("is empty" if not token else
                "holds whitespace (inputs are split on it, so no input holds such a token)")
    if '"' in token:
        return "holds a double quote, which would end the literal (literals have no escapes)"
    if any("\ud800" <= c <= "\udfff" for c in token):
        return "holds a lone surrogate, which is not UTF-8 text"
    return None


def without_byte_order_mark(source: str) -> str:
    return source[1:] if source.startswith(BYTE_ORDER_MARK) else source


class NodeBuilder:
    """The nodes and statements of the grammar's rules, from their parts (token texts, built
    subexpressions, spans), with the rules the grammar leaves to them: names are not keywords,
    literals are well formed, calls and relations exist, a product has a literal factor. Both
    parsers build through it, so they build the same nodes and raise the same errors."""

    def __init__(self, source: str, filename: str):
        self.source = source
        self.filename = filename

    def error(self, message: str, span: Span, expected: str | None = None) -> ProgramError:
        return ProgramError(message, source=self.source, filename=self.filename, span=span,
                            expected=expected)

    # statements
    def alphabet(self, span: Span, keyword: str, literals: list[tuple[str, Span]]) -> Statement:
        """``keyword "t1" "t2" ...``; ``literals``: each literal's text (quotes included)."""
        if keyword != "alphabet":
            raise self.error(f"unexpected {literals[0][0]!r}", literals[0][1],
                             expected=f"= after '{keyword}' (only an 'alphabet' line lists "
                                      "tokens)")
        tokens = tuple((self.token_text(text, at), at) for text, at in literals)
        return Statement("alphabet", span, tokens=tokens)

    def name(self, text: str, span: Span) -> str:
        if text in KEYWORDS:
            raise self.error(f"'{text}' is a keyword, not a name", span,
                             expected="a name such as x or C_a")
        return text

    def assignment(self, span: Span, name: str, name_span: Span, expr: syntax.Expr) -> Statement:
        return Statement("assign", span, name=self.name(name, name_span), name_span=name_span,
                         expr=expr)

    # atoms
    def token_text(self, literal: str, span: Span) -> str:
        """The token of a literal (``literal`` with its quotes)."""
        text = literal[1:-1]
        if token_literal_problem(text):
            raise self.error("a token literal must be non-empty and contain no whitespace",
                             span, expected='a token such as "a" or "("')
        return text

    def integer(self, digits: str, span: Span) -> syntax.IntConst:
        if len(digits) > MAX_LITERAL_DIGITS:
            raise self.error(literal_too_long(len(digits)), span)
        return syntax.IntConst(int(digits), span=span)

    def call(self, name: str, name_span: Span, args: list[syntax.Expr], span: Span
             ) -> syntax.Expr:
        if name in ("min", "max"):
            if len(args) != 2:
                raise self.error(f"{name}() takes exactly two counts, got {len(args)}", span,
                                 expected=f"{name}(c, d)")
            node = syntax.Min if name == "min" else syntax.Max
            return node(args[0], args[1], span=span)
        if name == predicates.BUILTIN_UNARY_CALL:
            modulus, residue = self._literal_ints(name, args, 2, span)
            if modulus < 1 or not 0 <= residue < modulus:
                raise self.error(f"mod({modulus}, {residue}) needs m >= 1 and 0 <= r < m", span,
                                 expected="mod(m, r): true at 0-based positions i with i % m == r")
            return syntax.PositionTest("mod", modulus, residue, span=span)
        raise self.error(f"unknown function '{name}'", name_span,
                         expected="min(c, d), max(c, d) or mod(m, r)")

    def _literal_ints(self, name, args, arity: int, span: Span) -> tuple[int, ...]:
        values = []
        for arg in args:
            if not isinstance(arg, syntax.IntConst):
                raise self.error(f"the arguments of {name}() must be integer literals",
                                 arg.span or span, expected="an integer literal such as 2")
            values.append(arg.value)
        if len(values) != arity:
            raise self.error(f"{name}() takes {arity} integer arguments, got {len(values)}",
                             span)
        return tuple(values)

    # operators
    def product(self, left: syntax.Expr, right: syntax.Expr, span: Span) -> syntax.Expr:
        if isinstance(left, syntax.IntConst):
            return syntax.Scale(left.value, right, span=span)
        if isinstance(right, syntax.IntConst):
            return syntax.Scale(right.value, left, span=span)
        factors = _literal_product_factors(left)
        if factors is not None:   # (2 * 3) * c is 2 * (3 * c): every factor is a literal
            product = right
            for factor in reversed(factors):
                product = syntax.Scale(factor, product, span=span)
            return product
        raise self.error("a product needs an integer literal on one side", span,
                         expected="INT * c, for example 2 * #\"a\" (counts are never multiplied "
                                  "together)")

    @staticmethod
    def negation(operand: syntax.Expr, span: Span) -> syntax.Expr:
        if isinstance(operand, syntax.IntConst):
            return syntax.IntConst(-operand.value, span=span)
        return syntax.Scale(-1, operand, span=span)

    def relation(self, name: str, args: list[str], span: Span) -> syntax.LocalRelation:
        """``name`` or ``name(INT, ...)`` inside ``#[...]`` (``args``: the digits)."""
        if name == predicates.BUILTIN_RELATION_CALL:
            if len(args) != 1:
                raise self.error("offset() takes one integer c >= 0 (it means j = i - c)", span,
                                 expected="offset(c)")
            return syntax.LocalRelation(name, int(args[0]), (int(args[0]),), span=span)
        if name in predicates.IMPORTABLE_RELATIONS and not args:
            return syntax.LocalRelation(name, predicates.IMPORTABLE_RELATIONS[name], span=span)
        raise self.error(f"unknown positional relation '{name}'", span,
                         expected="pred or pred4 (after #import), or offset(c)")


def _literal_product_factors(expr: syntax.Expr) -> list[int] | None:
    """The literals of a product of literals (``2 * 3`` is ``Scale(2, IntConst(3))``), outermost
    first, or None for anything else."""
    factors = []
    while isinstance(expr, syntax.Scale):
        factors.append(expr.factor)
        expr = expr.operand
    return factors + [expr.value] if factors and isinstance(expr, syntax.IntConst) else None


def parse(source: str, filename: str = "<string>") -> ParsedProgram:
    """Parse C-RASP source text into statements (raises ``ProgramError`` on a syntax error)."""
    from crasp import parse_direct

    text = without_byte_order_mark(source)
    text = text if text.endswith("\n") else text + "\n"
    statements = parse_direct.statements(text, filename)
    if statements is None:   # declined: what Lark reads, or the error it reports
        from crasp import parse_lark

        statements = parse_lark.statements(text, filename)
    return ParsedProgram(statements, text, filename)
