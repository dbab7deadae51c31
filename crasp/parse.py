"""Pass 1, text -> statements: parse C-RASP source with the Lark grammar in ``grammar.lark``.

The result is a list of statements whose expressions are ``crasp.syntax`` nodes, each with the
source ``Span`` it came from. Names are not resolved and nothing is typed yet: that is
``check``'s job. Syntax errors become ``ProgramError`` with the line, the column, a caret and
the tokens that would have been accepted, in words.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

from lark import Lark, Token, Transformer_NonRecursive, v_args
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken,
                             VisitError)

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


TERMINAL_DESCRIPTIONS = {
    "NAME": "a name",
    "STRING": 'a token literal such as "a"',
    "INT": "an integer",
    "TRUE": "true",
    "FALSE": "false",
    "IMPORT": "#import",
    "CMP_OP": "a comparison (== != < > <= >=)",
    "_IF": "if",
    "_ELSE": "else",
    "_ASSIGN": "=",
    "_OR": "||",
    "_AND": "&&",
    "_PLUS": "+",
    "_MINUS": "-",
    "_STAR": "*",
    "_BANG": "!",
    "_HASH": "#",
    "_LSQB": "[",
    "_RSQB": "]",
    "_LPAR": "(",
    "_RPAR": ")",
    "_COMMA": ",",
    "_NL": "the end of the line",
    "$END": "the end of the program",
}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("crasp").joinpath("grammar.lark").read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def _span_of(item) -> Span:
    if isinstance(item, Token):
        return Span(item.line, item.column, item.end_line, item.end_column)
    return Span(item.line, item.column, item.end_line, item.end_column)


def _binary(node_type):
    """The transformer callback that builds a two-operand node with its span."""
    @v_args(meta=True)
    def build(self, meta, children):
        return node_type(*children, span=_span_of(meta))
    return build


KEYWORDS = ("if", "else", "true", "false", "min", "max")
"""Never names (in Hahn's grammar too). ``alphabet`` is a keyword only at the start of an
alphabet declaration, so it can name a definition."""
BYTE_ORDER_MARK = "\ufeff"


def without_byte_order_mark(source: str) -> str:
    return source[1:] if source.startswith(BYTE_ORDER_MARK) else source


class _ToSyntax(Transformer_NonRecursive):
    """Builds ``crasp.syntax`` nodes from the parse tree; rejects malformed calls and products."""

    def __init__(self, source: str, filename: str):
        super().__init__()
        self.source = source
        self.filename = filename

    def _error(self, message: str, span: Span, expected: str | None = None) -> ProgramError:
        return ProgramError(message, source=self.source, filename=self.filename, span=span,
                            expected=expected)

    # statements
    @v_args(meta=True)
    def import_stmt(self, meta, children):
        _, name = children
        return Statement("import", _span_of(meta), name=str(name), name_span=_span_of(name))

    @v_args(meta=True)
    def alphabet_decl(self, meta, children):
        keyword, *literals = children
        if str(keyword) != "alphabet":
            raise self._error(f"unexpected {str(literals[0])!r}", _span_of(literals[0]),
                              expected=f"= after '{keyword}' (only an 'alphabet' line lists "
                                       "tokens)")
        tokens = tuple((self._token_text(t), _span_of(t)) for t in literals)
        return Statement("alphabet", _span_of(meta), tokens=tokens)

    def _name(self, token: Token) -> str:
        if str(token) in KEYWORDS:
            raise self._error(f"'{token}' is a keyword, not a name", _span_of(token),
                              expected="a name such as x or C_a")
        return str(token)

    @v_args(meta=True)
    def assignment(self, meta, children):
        name, expr = children
        return Statement("assign", _span_of(meta), name=self._name(name),
                         name_span=_span_of(name), expr=expr)

    @v_args(meta=True)
    def bare(self, meta, children):
        return Statement("bare", _span_of(meta), expr=children[0])

    def start(self, children):
        return tuple(children)

    # atoms
    def _token_text(self, token: Token) -> str:
        text = str(token)[1:-1]
        if not can_be_input_token(text):
            raise self._error("a token literal must be non-empty and contain no whitespace",
                              _span_of(token), expected='a token such as "a" or "("')
        return text

    def token(self, children):
        (tok,) = children
        return syntax.TokenTest(self._token_text(tok), span=_span_of(tok))

    def int(self, children):
        (tok,) = children
        if len(tok) > MAX_LITERAL_DIGITS:
            raise self._error(literal_too_long(len(tok)), _span_of(tok))
        return syntax.IntConst(int(tok), span=_span_of(tok))

    def true(self, children):
        return syntax.BoolConst(True, span=_span_of(children[0]))

    def false(self, children):
        return syntax.BoolConst(False, span=_span_of(children[0]))

    def ref(self, children):
        (tok,) = children
        return syntax.Ref(self._name(tok), span=_span_of(tok))

    @v_args(meta=True)
    def call(self, meta, children):
        name, *args = children
        span = _span_of(meta)
        if str(name) in ("min", "max"):
            if len(args) != 2:
                raise self._error(f"{name}() takes exactly two counts, got {len(args)}", span,
                                  expected=f"{name}(c, d)")
            node = syntax.Min if str(name) == "min" else syntax.Max
            return node(args[0], args[1], span=span)
        if str(name) == predicates.BUILTIN_UNARY_CALL:
            modulus, residue = self._literal_ints(name, args, 2, span)
            if modulus < 1 or not 0 <= residue < modulus:
                raise self._error(f"mod({modulus}, {residue}) needs m >= 1 and 0 <= r < m", span,
                                  expected="mod(m, r): true at 0-based positions i with i % m == r")
            return syntax.PositionTest("mod", modulus, residue, span=span)
        raise self._error(f"unknown function '{name}'", _span_of(name),
                          expected="min(c, d), max(c, d) or mod(m, r)")

    def _literal_ints(self, name, args, arity: int, span: Span) -> tuple[int, ...]:
        values = []
        for arg in args:
            if not isinstance(arg, syntax.IntConst):
                raise self._error(f"the arguments of {name}() must be integer literals",
                                  arg.span or span, expected="an integer literal such as 2")
            values.append(arg.value)
        if len(values) != arity:
            raise self._error(f"{name}() takes {arity} integer arguments, got {len(values)}",
                              span)
        return tuple(values)

    # operators
    or_ = _binary(syntax.Or)
    and_ = _binary(syntax.And)
    add = _binary(syntax.Add)
    sub = _binary(syntax.Sub)

    @v_args(meta=True)
    def conditional(self, meta, children):
        if_true, condition, if_false = children
        return syntax.Conditional(condition, if_true, if_false, span=_span_of(meta))

    @v_args(meta=True)
    def compare(self, meta, children):
        left, op, right = children
        return syntax.Compare(str(op), left, right, span=_span_of(meta))

    @v_args(meta=True)
    def mul(self, meta, children):
        left, right = children
        span = _span_of(meta)
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
        raise self._error("a product needs an integer literal on one side", span,
                          expected="INT * c, for example 2 * #\"a\" (counts are never multiplied "
                                   "together)")

    @v_args(meta=True)
    def neg(self, meta, children):
        (operand,) = children
        if isinstance(operand, syntax.IntConst):
            return syntax.IntConst(-operand.value, span=_span_of(meta))
        return syntax.Scale(-1, operand, span=_span_of(meta))

    @v_args(meta=True)
    def not_(self, meta, children):
        return syntax.Not(children[0], span=_span_of(meta))

    @v_args(meta=True)
    def count(self, meta, children):
        return syntax.Count(children[0], span=_span_of(meta))

    @v_args(meta=True)
    def guarded_count(self, meta, children):
        relation, body = children
        return syntax.Count(body, relation, span=_span_of(meta))

    @v_args(meta=True)
    def relation(self, meta, children):
        name, *args = children
        span = _span_of(meta)
        name = str(name)
        if name == predicates.BUILTIN_RELATION_CALL:
            if len(args) != 1:
                raise self._error("offset() takes one integer c >= 0 (it means j = i - c)", span,
                                  expected="offset(c)")
            return syntax.LocalRelation(name, int(args[0]), (int(args[0]),), span=span)
        if name in predicates.IMPORTABLE_RELATIONS and not args:
            return syntax.LocalRelation(name, predicates.IMPORTABLE_RELATIONS[name], span=span)
        raise self._error(f"unknown positional relation '{name}'", span,
                          expected="pred or pred4 (after #import), or offset(c)")


def _literal_product_factors(expr: syntax.Expr) -> list[int] | None:
    """The literals of a product of literals (``2 * 3`` is ``Scale(2, IntConst(3))``), outermost
    first, or None for anything else."""
    factors = []
    while isinstance(expr, syntax.Scale):
        factors.append(expr.factor)
        expr = expr.operand
    return factors + [expr.value] if factors and isinstance(expr, syntax.IntConst) else None


def _describe_expected(expected: set[str]) -> str:
    words = sorted({TERMINAL_DESCRIPTIONS.get(name, name) for name in expected})
    return ", ".join(words) if words else "nothing more"


def _syntax_error(error: UnexpectedInput, source: str, filename: str) -> ProgramError:
    line, column = max(error.line, 1), max(error.column, 1)
    if isinstance(error, UnexpectedCharacters):
        char = source[error.pos_in_stream] if error.pos_in_stream < len(source) else "?"
        message = f"unexpected character {char!r}"
        expected = _describe_expected(set(error.allowed or ()))
    elif isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            message = "unexpected end of the program"
            lines = source.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
        elif token.type == "_NL":
            message = "unexpected end of the line"
        else:
            message = f"unexpected {str(token)!r}"
            if token.type == "CMP_OP":
                message += " (comparisons do not chain: combine them with &&)"
        expected = _describe_expected(set(error.expected))
    else:  # UnexpectedEOF
        message = "unexpected end of the program"
        expected = _describe_expected(set(getattr(error, "expected", ()) or ()))
    return ProgramError(message, source=source, filename=filename,
                        span=Span(line, column, line, column + 1), expected=expected)


def parse(source: str, filename: str = "<string>") -> ParsedProgram:
    """Parse C-RASP source text into statements (raises ``ProgramError`` on a syntax error)."""
    text = without_byte_order_mark(source)
    text = text if text.endswith("\n") else text + "\n"
    try:
        tree = _parser().parse(text)
    except (UnexpectedCharacters, UnexpectedToken, UnexpectedEOF) as error:
        raise _syntax_error(error, text, filename) from None
    try:
        statements = _ToSyntax(text, filename).transform(tree)
    except VisitError as error:  # Lark wraps what a callback raises
        raise error.orig_exc from None
    return ParsedProgram(statements, text, filename)
