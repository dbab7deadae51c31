"""Pass 1 in Hahn's dialect, text -> statements: read a ``.cr`` file exactly as m-hahn/c-rasp does.

Hahn's interpreter parses with an ANTLR 4 grammar (``antlr/crasp.g4``)::

    statement : VARIABLE '=' (bool_expr | count_expr) | '#import' VARIABLE
    bool_expr : STRING | count_expr (< | > | == | != | <= | >=) count_expr
              | bool_expr && bool_expr | bool_expr || bool_expr | ! bool_expr
              | true | false | VARIABLE | ( bool_expr )
    count_expr: # bool_expr | # [ VARIABLE ] bool_expr | VARIABLE | INT
              | count_expr + count_expr | count_expr - count_expr | INT * count_expr
              | max ( count_expr , count_expr ) | min ( count_expr , count_expr )
              | count_expr if bool_expr else count_expr | ( count_expr )

Derivation of the reading, from how ANTLR 4 generates a parser for it:

* ANTLR rewrites each directly left-recursive rule into ``primary (op operand)*`` with
  precedence predicates. Alternative k of a rule with n alternatives has precedence n - k + 1;
  a binary operator continues the loop only while its precedence >= the precedence p the rule
  was called with, and parses its right operand at precedence + 1 (left-associative); a prefix
  alternative (``! bool_expr``, ``INT * count_expr``) parses its operand at its own precedence.
  That gives ``&&`` 7, ``||`` 6, ``!`` 5 in bool_expr and ``+`` 7, ``-`` 6, ``INT *`` 5,
  ``if else`` 2 in count_expr. So ``!`` takes every ``&&``/``||`` to its right, ``INT *`` every
  ``+``/``-``, ``a - b + c`` is ``a - (b + c)``, and ``x if P else y if Q else z`` is
  ``(x if P else y) if Q else z``. ``#`` is not a prefix alternative of count_expr (its operand
  is a bool_expr), so its body is a whole bool_expr called at precedence 0: ``#P && Q`` is
  ``#(P && Q)``.
* Every decision (statement bool-or-count, which primary alternative, whether a loop goes on)
  is made left to right by adaptive LL(*) prediction, which picks the lowest-numbered
  alternative that can still complete a parse of the whole input (ambiguities resolve to the
  minimum alternative; a loop's "continue" is numbered before its "exit"). A backtracking
  parser that tries the alternatives of every decision in grammar order and keeps the first
  parse that reaches the end of the statement therefore builds the same tree. This matters for
  a bare name, which is both a bool_expr and a count_expr: ``x = #y < 3`` is the comparison
  ``(#y) < 3`` (bool_expr is tried first), while ``x = #P && Q`` is the count ``#(P && Q)``.

The parser memoizes, for every (rule, precedence, position), the ends it can reach in the order
the decisions would try them, with the first tree for each end (later trees with the same end
can never be preferred: every continuation open to them is open to the first), computed lazily:
only as far as a caller reads them, so the greedy parse that usually succeeds costs linear work.

Tokens follow his lexer: ``#import``, ``true``, ``false``, ``if``, ``else``, ``min``, ``max``
are keywords; a string literal is anything between double quotes; only spaces and tabs are
whitespace; ``//`` comments run to the end of the line; statements are separated by newlines.
"""

from __future__ import annotations

import re
import sys
from typing import NamedTuple

from crasp import predicates, syntax
from crasp.errors import ProgramError
from crasp.parse import (MAX_LITERAL_DIGITS, ParsedProgram, Statement, literal_too_long,
                         without_byte_order_mark)
from crasp.syntax import Span

_KEYWORDS = {"true": "TRUE", "false": "FALSE", "if": "IF", "else": "ELSE", "min": "MIN",
             "max": "MAX"}
_LEXEMES = re.compile(r"""[ \t]*(?:      # the blanks before a lexeme are skipped with it
    (?P<COMMENT>//[^\r\n]*)
  | (?P<IMPORT>\#import)
  | (?P<VARIABLE>[a-zA-Z_][a-zA-Z_0-9]*)
  | (?P<STRING>"[^"]*")
  | (?P<INT>[0-9]+)
  | (?P<OP>&&|\|\||==|!=|<=|>=|[!<>=?:+\-*\#()\[\],])
  | (?P<NL>(\r?\n)+)
  | (?P<END>$)
)""", re.VERBOSE)
_COMPARISONS = ("<", ">", "==", "!=", "<=", ">=")   # in the order of bool_expr's alternatives
_COUNT_STARTS = frozenset({"#", "VARIABLE", "INT", "MAX", "MIN", "("})
_BOOL_STARTS = _COUNT_STARTS | {"STRING", "!", "TRUE", "FALSE"}
# ANTLR precedences (alternative k of n has n - k + 1); see the module docstring.
_AND, _OR, _NOT = 7, 6, 5
_PLUS, _MINUS, _TIMES, _IF = 7, 6, 5, 2
MAX_NESTING = 400
"""More nested rule calls are refused with an error (Hahn's own recursive parser and evaluator
stop with a Python recursion error on such expressions too)."""


class Token(NamedTuple):
    """A lexeme and where it is (a tuple: a 100,000-operand line has 300,000 of them, and most
    are only looked at for their kind)."""

    kind: str      # VARIABLE, STRING, INT, a keyword's name in capitals, or the operator itself
    text: str
    line: int
    column: int
    end_line: int
    end_column: int

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


def tokenize(source: str, filename: str) -> list[list[Token]]:
    """Hahn's lexer: the tokens of each newline-separated statement (empty ones dropped)."""
    statements: list[list[Token]] = [[]]
    current = statements[0]
    line, line_start, position = 1, 0, 0
    keywords = _KEYWORDS
    for match in _LEXEMES.finditer(source):
        if match.start() != position:   # skipped a character that starts no lexeme
            break
        kind = match.lastgroup
        start, position = match.start(kind), match.end()
        if kind == "NL":
            current = []
            statements.append(current)
            line, line_start = line + position - start - source.count("\r", start, position), \
                position
            continue
        if kind == "COMMENT" or kind == "END":
            continue
        text = match.group(kind)
        column = start - line_start + 1
        if kind == "VARIABLE":
            kind = keywords.get(text, kind)
        elif kind == "OP":
            kind = text
        if kind == "STRING" and "\n" in text:   # a literal over lines (his lexer allows it)
            end_line = line + text.count("\n")
            current.append(Token(kind, text, line, column, end_line, len(text) - text.rfind("\n")))
            line, line_start = end_line, start + text.rfind("\n") + 1
        else:
            current.append(Token(kind, text, line, column, line, column + len(text)))
    if position < len(source):
        position += len(source[position:]) - len(source[position:].lstrip(" \t"))
        column = position - line_start + 1
        raise ProgramError(f"unexpected character {source[position]!r}", source=source,
                           filename=filename, span=Span(line, column, line, column + 1),
                           expected="a token of Hahn's grammar")
    return [tokens for tokens in statements if tokens]


def _between(first: Span, last: Span) -> Span:
    return Span(first.line, first.column, last.end_line, last.end_column)


class _Results:
    """The (end, tree) pairs of one rule call, in try order, each end once with its first tree;
    computed only as far as some caller has read (the search stops at the first parse of the
    whole statement), and shared by every caller."""

    def __init__(self, parser: _StatementParser, start: int, pairs):
        self.parser, self.start, self.pairs = parser, start, pairs
        self.found: list[tuple[int, syntax.Expr]] = []
        self.ends: set[int] = set()

    def __iter__(self):
        index = 0
        while True:
            if index < len(self.found):
                yield self.found[index]
                index += 1
                continue
            if self.pairs is None:
                return
            self.parser.enter(self.start)
            try:
                pair = next(self.pairs, None)
            finally:
                self.parser.depth -= 1
            if pair is None:
                self.pairs = None
            elif pair[0] not in self.ends:
                self.ends.add(pair[0])
                self.found.append(pair)


class _StatementParser:
    """Parses one statement; ``bool_expr``/``count_expr`` give (end, tree) in try order."""

    def __init__(self, tokens: list[Token], source: str, filename: str):
        self.tokens = tokens
        self.source = source
        self.filename = filename
        self.memo: dict[tuple[str, int, int], _Results] = {}
        self.furthest = 0
        self.expected: set[str] = set()
        self.depth = 0
        self.steps = 0
        """Loop steps taken (a measure of the work, linear in the tokens for any chain)."""

    def kind(self, index: int) -> str:
        return self.tokens[index].kind if index < len(self.tokens) else "END"

    def accept(self, index: int, kind: str) -> bool:
        if self.kind(index) == kind:
            return True
        self._note(index, kind)
        return False

    def _note(self, index: int, expected: str) -> None:
        if index > self.furthest:
            self.furthest, self.expected = index, set()
        if index == self.furthest:
            self.expected.add(expected)

    def span(self, first: int, end: int) -> Span:
        return _between(self.tokens[first].span, self.tokens[end - 1].span)

    # ------------------------------------------------------------ rules

    def _memoized(self, rule: str, precedence: int, start: int, primaries) -> _Results:
        key = (rule, precedence, start)
        if key not in self.memo:
            step = self._bool_step if rule == "bool" else self._count_step
            self.memo[key] = _Results(self, start, self._search(step, precedence, start,
                                                                primaries))
        return self.memo[key]

    def _search(self, step, precedence: int, start: int, primaries):
        visited: set[int] = set()
        for end, tree in primaries(start):
            yield from self._loop(step, precedence, start, end, tree, visited)

    def enter(self, start: int) -> None:
        """One more rule call in progress (``_Results`` calls it around each computation)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error_at(start, "the expression is nested too deeply for Hahn's "
                                       f"parser (more than {MAX_NESTING} rule calls)")

    def bool_expr(self, precedence: int, start: int):
        return self._memoized("bool", precedence, start, self._bool_primaries)

    def count_expr(self, precedence: int, start: int):
        return self._memoized("count", precedence, start, self._count_primaries)

    def _bool_primaries(self, i: int):
        kind = self.kind(i)
        if kind not in _BOOL_STARTS:
            self._note(i, "a Boolean expression")
        if kind == "STRING":
            # "" and "a b" equal no input token: his interpreter reads them (and they never
            # match); crasp's checker writes them as false.
            yield i + 1, syntax.TokenTest(self.tokens[i].text[1:-1], span=self.tokens[i].span)
        for op in _COMPARISONS:
            for left_end, left in self.count_expr(0, i):
                if self.accept(left_end, op):
                    for end, right in self.count_expr(0, left_end + 1):
                        yield end, syntax.Compare(op, left, right, span=self.span(i, end))
        if kind == "!":
            for end, operand in self.bool_expr(_NOT, i + 1):
                yield end, syntax.Not(operand, span=self.span(i, end))
        if kind in ("TRUE", "FALSE"):
            yield i + 1, syntax.BoolConst(kind == "TRUE", span=self.tokens[i].span)
        if kind == "VARIABLE":
            yield i + 1, syntax.Ref(self.tokens[i].text, span=self.tokens[i].span)
        if kind == "(":
            for end, inner in self.bool_expr(0, i + 1):
                if self.accept(end, ")"):
                    yield end + 1, inner

    def _count_primaries(self, i: int):
        kind = self.kind(i)
        if kind not in _COUNT_STARTS:
            self._note(i, "a count")
        if kind == "#" and self.kind(i + 1) != "[":
            for end, body in self.bool_expr(0, i + 1):
                yield end, syntax.Count(body, span=self.span(i, end))
        if (kind == "#" and self.accept(i + 1, "[") and self.accept(i + 2, "VARIABLE")
                and self.accept(i + 3, "]")):
            name = self.tokens[i + 2]
            if name.text not in predicates.IMPORTABLE_RELATIONS:
                raise self.error_at(i + 2, f"unknown positional relation '{name.text}'",
                                    expected=" or ".join(predicates.IMPORTABLE_RELATIONS))
            relation = syntax.LocalRelation(name.text,
                                            predicates.IMPORTABLE_RELATIONS[name.text],
                                            span=name.span)
            for end, body in self.bool_expr(0, i + 4):
                yield end, syntax.Count(body, relation, span=self.span(i, end))
        if kind == "VARIABLE":
            yield i + 1, syntax.Ref(self.tokens[i].text, span=self.tokens[i].span)
        if kind == "INT":
            value = self.literal(i)
            yield i + 1, syntax.IntConst(value, span=self.tokens[i].span)
            if self.accept(i + 1, "*"):
                for end, operand in self.count_expr(_TIMES, i + 2):
                    yield end, syntax.Scale(value, operand, span=self.span(i, end))
        if kind in ("MAX", "MIN") and self.accept(i + 1, "("):
            node = syntax.Max if kind == "MAX" else syntax.Min
            for comma, left in self.count_expr(0, i + 2):
                if self.accept(comma, ","):
                    for close, right in self.count_expr(0, comma + 1):
                        if self.accept(close, ")"):
                            yield close + 1, node(left, right, span=self.span(i, close + 1))
        if kind == "(":
            for end, inner in self.count_expr(0, i + 1):
                if self.accept(end, ")"):
                    yield end + 1, inner

    def _loop(self, step, precedence: int, start: int, end: int, tree, visited: set[int]):
        """Every end the operator loop can reach from (end, tree), continuing before exiting,
        each with the first tree that reaches it (a generator: computed as far as it is read).

        A depth-first search over the positions the loop can stand at, each entered once
        (``visited`` is shared by every primary of one rule call): what the loop can do from
        a position does not depend on the tree built so far, so a later tree reaching a
        position could only reach the ends already found, each of which keeps its first tree.
        Without this, an ``A && B || C && D || ...`` chain has two trees for each ``||``
        operand (``C`` and ``C && D``) and the trees multiply: 2^k paths for k pairs. With it,
        and with every rule call read only as far as a caller needs (``_Results``), reading a
        chain costs a number of steps linear in its length. Iterative (an explicit stack), so
        a chain of thousands of operands needs no recursion.
        """
        if end in visited:
            return
        visited.add(end)
        stack = [(end, tree, iter(step(precedence, start, end, tree)))]
        while stack:
            at, node, continuations = stack[-1]
            following = next(continuations, None)
            self.steps += 1
            if following is None:
                stack.pop()
                yield at, node
            elif following[0] not in visited:
                visited.add(following[0])
                stack.append((*following, iter(step(precedence, start, *following))))

    def _bool_step(self, precedence: int, start: int, i: int, tree):
        kind = self.kind(i)
        if kind == "&&" and _AND >= precedence:
            for end, right in self.bool_expr(_AND + 1, i + 1):
                yield end, syntax.And(tree, right, span=self.span(start, end))
        elif kind == "||" and _OR >= precedence:
            for end, right in self.bool_expr(_OR + 1, i + 1):
                yield end, syntax.Or(tree, right, span=self.span(start, end))

    def _count_step(self, precedence: int, start: int, i: int, tree):
        kind = self.kind(i)
        if kind in ("+", "-") and (_PLUS if kind == "+" else _MINUS) >= precedence:
            node, level = (syntax.Add, _PLUS) if kind == "+" else (syntax.Sub, _MINUS)
            for end, right in self.count_expr(level + 1, i + 1):
                yield end, node(tree, right, span=self.span(start, end))
        elif kind == "IF" and _IF >= precedence:
            for else_at, condition in self.bool_expr(0, i + 1):
                if self.accept(else_at, "ELSE"):
                    for end, if_false in self.count_expr(_IF + 1, else_at + 1):
                        yield end, syntax.Conditional(condition, tree, if_false,
                                                      span=self.span(start, end))

    # ------------------------------------------------------------ statements

    def literal(self, index: int) -> int:
        text = self.tokens[index].text
        if len(text) > MAX_LITERAL_DIGITS:
            raise self.error_at(index, literal_too_long(len(text)))
        return int(text)

    def error_at(self, index: int, message: str, expected: str | None = None) -> ProgramError:
        if index < len(self.tokens):
            span = self.tokens[index].span
        else:
            last = self.tokens[-1].span
            span = Span(last.end_line, last.end_column, last.end_line, last.end_column + 1)
        return ProgramError(message, source=self.source, filename=self.filename, span=span,
                            expected=expected)

    def syntax_error(self) -> ProgramError:
        index = self.furthest
        found = (f"unexpected {self.tokens[index].text!r}" if index < len(self.tokens)
                 else "unexpected end of the line")
        return self.error_at(index, found + " (read as in Hahn's grammar)",
                             expected=", ".join(sorted(self.expected)) or None)

    def expression(self, start: int) -> syntax.Expr:
        """The right-hand side: bool_expr if it can span the statement, else count_expr."""
        for rule in (self.bool_expr, self.count_expr):
            for end, tree in rule(0, start):
                if end == len(self.tokens):
                    return tree
                self._note(end, "an operator or the end of the line")
        raise self.syntax_error()

    def statement(self) -> Statement:
        tokens = self.tokens
        whole = self.span(0, len(tokens))
        if tokens[0].kind == "IMPORT":
            if len(tokens) != 2 or tokens[1].kind != "VARIABLE":
                raise self.error_at(min(1, len(tokens)), "expected a name after #import",
                                    expected="#import NAME")
            return Statement("import", whole, name=tokens[1].text, name_span=tokens[1].span)
        if not (self.accept(0, "VARIABLE") and self.accept(1, "=")):
            raise self.syntax_error()
        return Statement("assign", whole, name=tokens[0].text, name_span=tokens[0].span,
                         expr=self.expression(2))


def parse_expression_tokens(tokens: list[Token], source: str, filename: str) -> syntax.Expr:
    """The reading of one bare expression (used to compare a crasp line with Hahn's reading)."""
    return _run_deep(lambda: _StatementParser(tokens, source, filename).expression(0))


def parse_statement_tokens(tokens: list[Token], source: str, filename: str) -> Statement:
    return _run_deep(lambda: _StatementParser(tokens, source, filename).statement())


def _run_deep(parse):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 40 * MAX_NESTING + 1000))
    try:
        return parse()
    finally:
        sys.setrecursionlimit(limit)


def parse(source: str, filename: str = "<string>") -> ParsedProgram:
    """Parse source text as Hahn's interpreter does (raises ``ProgramError`` on a syntax error)."""
    text = without_byte_order_mark(source)
    text = text if text.endswith("\n") else text + "\n"
    statements = tuple(parse_statement_tokens(tokens, text, filename)
                       for tokens in tokenize(text, filename))
    if not statements:
        raise ProgramError("the program is empty", source=text, filename=filename, span=None,
                           expected="at least one line NAME = expression")
    return ParsedProgram(statements, text, filename)
