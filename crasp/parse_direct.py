"""Pass 1 without a parse tree, text -> statements: ``grammar.lark`` read by hand, in linear time.

A regular-expression tokenizer and a precedence-climbing parser build the ``crasp.syntax``
nodes directly, through ``parse.NodeBuilder``, with the spans Lark's parser gives them. They
read what the grammar reads, as it reads it, and decline (return None) wherever they are not
sure to: at any syntax error, at any node the builder refuses, and past ``MAX_NESTING``
parentheses or calls. ``crasp.parse`` then hands the text to ``crasp.parse_lark``, which
reports the error exactly as the grammar file says (or reads the rare form). A 100,000-operand
expression takes a fraction of a second here, several seconds through Lark's tree.

Derivation (``tests/test_parse_direct.py`` compares both parsers, spans included, on generated
programs and token soups):

* Tokens. Lark's lexer tries the terminals in one order (priority, then the longest possible
  width): ``#import``, then the keywords ``true false if else`` (each ending at a word
  boundary), names, literals, integers, comments, blanks, line ends, two-character operators,
  one-character ones; the first that matches is taken. ``_TOKENS`` lists them in that order.
  Lark's contextual lexer only tries the terminals that the parser state accepts, which
  changes nothing here: the parser below declines wherever its token is not accepted, and where
  it is, the accepted terminal that comes first is the same. Lines and columns count ``\\n``.
* Precedence, loosest first (``grammar.lark``): ``c if P else d`` (right-nested), ``||``,
  ``&&``, one comparison (they do not chain), ``+ -``, ``*``, then the prefix operators ``! #
  #[rel] -`` over an atom. Binary operators are left-associative: the loop of
  ``_binary(minimum)`` takes an operator of level >= ``minimum`` and its right operand at the
  next level, so a chain of any length is a loop, not a recursion.
* Spans (Lark's ``propagate_positions``): a node spans its rule's tokens, from the first token
  of its first part to the last token of its last part, where a part in parentheses counts with
  its outermost parentheses; the parenthesized node keeps its own span. So every parser
  function returns the node with the indices of the first and last token of its text,
  parentheses included.
"""

from __future__ import annotations

import re

from crasp import syntax
from crasp.errors import ProgramError
from crasp.parse import NodeBuilder, Statement
from crasp.syntax import Span

_TOKENS = re.compile(r"""
    (?P<IMPORT>\#import\b) | (?P<TRUE>true\b) | (?P<FALSE>false\b) | (?P<IF>if\b)
  | (?P<ELSE>else\b) | (?P<NAME>[A-Za-z_][A-Za-z_0-9]*) | (?P<STRING>"[^"\n]*") | (?P<INT>[0-9]+)
  | (?P<COMMENT>//[^\n]*) | (?P<BLANK>[\ \t\f]+) | (?P<NL>(?:\r?\n)+)
  | (?P<CMP><=|>=|==|!=|<|>) | (?P<OP>\|\||&&|[=+\-*!\#\[\](),])
""", re.VERBOSE)
_SKIPPED = ("COMMENT", "BLANK")
_LEVELS = {"||": 1, "&&": 2, "CMP": 3, "+": 4, "-": 4, "*": 5}
_BINARY_NODES = {"||": syntax.Or, "&&": syntax.And, "+": syntax.Add, "-": syntax.Sub}
_PREFIXES = frozenset({"!", "#", "-"})
MAX_NESTING = 50
"""Parentheses and calls nested deeper are left to Lark (this parser recurses on them)."""


class _Declined(Exception):
    """Not read here: Lark's parser reads the text (or reports its error)."""


def _tokens(text: str) -> tuple[list[str], list[str], list[int], list[int]]:
    """The kind, text, line and column of every token, and an ``END`` after the last; the
    kind of an operator is its text (``CMP`` for a comparison)."""
    kinds, texts, lines, columns = [], [], [], []
    line, line_start, position = 1, 0, 0
    for match in _TOKENS.finditer(text):
        start = match.start()
        if start != position:   # a character no terminal matches
            raise _Declined
        kind, value = match.lastgroup, match.group()
        position = match.end()
        if kind in _SKIPPED:
            continue
        if kind == "OP":
            kind = value
        kinds.append(kind)
        texts.append(value)
        lines.append(line)
        columns.append(start - line_start + 1)
        if kind == "NL":
            line, line_start = line + value.count("\n"), position
    if position != len(text):
        raise _Declined
    kinds.append("END")
    texts.append("")
    lines.append(line)
    columns.append(position - line_start + 1)
    return kinds, texts, lines, columns


class _Parser:
    def __init__(self, text: str, filename: str):
        self.kinds, self.texts, self.lines, self.columns = _tokens(text)
        self.build = NodeBuilder(text, filename)
        self.index = 0
        self.nesting = 0
        self.literals: dict[str, str] = {}   # literal text -> its token (checked once)

    def span(self, first: int, last: int) -> Span:
        """From the start of token ``first`` to the end of token ``last``."""
        return Span(self.lines[first], self.columns[first], self.lines[last],
                    self.columns[last] + len(self.texts[last]))

    def expect(self, kind: str) -> int:
        index = self.index
        if self.kinds[index] != kind:
            raise _Declined
        self.index = index + 1
        return index

    # ------------------------------------------------------------ statements

    def statements(self) -> tuple[Statement, ...]:
        kinds, found = self.kinds, []
        while kinds[self.index] != "END":
            if kinds[self.index] != "NL":
                found.append(self.statement())
            self.expect("NL")
        return tuple(found)

    def statement(self) -> Statement:
        kinds, start = self.kinds, self.index
        if kinds[start] == "IMPORT":
            name = self.expect_name(start + 1)
            return Statement("import", self.span(start, name), name=self.texts[name],
                             name_span=self.span(name, name))
        if kinds[start] == "NAME" and kinds[start + 1] == "STRING":
            self.index = start + 1
            while kinds[self.index] == "STRING":
                self.index += 1
            literals = [(self.texts[i], self.span(i, i)) for i in range(start + 1, self.index)]
            return self.build.alphabet(self.span(start, self.index - 1), self.texts[start],
                                       literals)
        if kinds[start] == "NAME" and kinds[start + 1] == "=":
            self.index = start + 2
            expr, _, last = self.expression()
            return self.build.assignment(self.span(start, last), self.texts[start],
                                         self.span(start, start), expr)
        expr, first, last = self.expression()
        return Statement("bare", self.span(first, last), expr=expr)

    def expect_name(self, index: int) -> int:
        self.index = index
        return self.expect("NAME")

    # ------------------------------------------------------------ expressions

    def expression(self) -> tuple[syntax.Expr, int, int]:
        """``or_expr (if or_expr else or_expr)*``: the conditionals nest to the right."""
        if_true, first, last = self._binary(1)
        branches = []
        while self.kinds[self.index] == "IF":
            self.index += 1
            condition, _, _ = self._binary(1)
            self.expect("ELSE")
            branches.append((if_true, first, condition))
            if_true, first, last = self._binary(1)
        node = if_true
        for if_true, first, condition in reversed(branches):
            node = syntax.Conditional(condition, if_true, node, span=self.span(first, last))
        return node, (branches[0][1] if branches else first), last

    def _binary(self, minimum: int) -> tuple[syntax.Expr, int, int]:
        kinds, levels = self.kinds, _LEVELS
        node, first, last = self._prefixed()
        while True:
            operator = kinds[self.index]
            level = levels.get(operator, 0)
            if level < minimum:
                return node, first, last
            at = self.index
            self.index = at + 1
            right, _, last = self._binary(level + 1)
            span = self.span(first, last)
            if operator == "CMP":
                if kinds[self.index] == "CMP":   # comparisons do not chain
                    raise _Declined
                node = syntax.Compare(self.texts[at], node, right, span=span)
            elif operator == "*":
                node = self.build.product(node, right, span)
            else:
                node = _BINARY_NODES[operator](node, right, span=span)

    def _prefixed(self) -> tuple[syntax.Expr, int, int]:
        """Prefix operators (``! # #[rel] -``) over an atom, read in a loop."""
        kinds, prefixes = self.kinds, []
        while kinds[self.index] in _PREFIXES:
            at = self.index
            self.index = at + 1
            relation = None
            if kinds[at] == "#" and kinds[at + 1] == "[":
                self.index = at + 2
                relation = self._relation()
                self.expect("]")
            prefixes.append((at, relation))
        node, first, last = self._atom()
        for at, relation in reversed(prefixes):
            span = self.span(at, last)
            kind = kinds[at]
            node = (syntax.Not(node, span=span) if kind == "!" else
                    syntax.Count(node, relation, span=span) if kind == "#" else
                    self.build.negation(node, span))
            first = at
        return node, first, last

    def _relation(self) -> syntax.LocalRelation:
        name = self.expect("NAME")
        args = []
        if self.kinds[self.index] == "(":
            self.index += 1
            args.append(self.texts[self.expect("INT")])
            while self.kinds[self.index] == ",":
                self.index += 1
                args.append(self.texts[self.expect("INT")])
            self.expect(")")
        return self.build.relation(self.texts[name], args, self.span(name, self.index - 1))

    def _atom(self) -> tuple[syntax.Expr, int, int]:
        at = self.index
        kind, text = self.kinds[at], self.texts[at]
        self.index = at + 1
        if kind == "NAME" and self.kinds[at + 1] != "(":
            return syntax.Ref(self.build.name(text, self.span(at, at)), span=self.span(at, at)), \
                at, at
        if kind == "STRING":
            token = self.literals.get(text)
            if token is None:
                token = self.literals[text] = self.build.token_text(text, self.span(at, at))
            return syntax.TokenTest(token, span=self.span(at, at)), at, at
        if kind == "INT":
            return self.build.integer(text, self.span(at, at)), at, at
        if kind in ("TRUE", "FALSE"):
            return syntax.BoolConst(kind == "TRUE", span=self.span(at, at)), at, at
        if kind not in ("NAME", "("):
            raise _Declined
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise _Declined
        if kind == "(":
            node, _, _ = self.expression()
            close = self.expect(")")
        else:   # a call: NAME ( expr (, expr)* )
            self.index = at + 2
            args = [self.expression()[0]]
            while self.kinds[self.index] == ",":
                self.index += 1
                args.append(self.expression()[0])
            close = self.expect(")")
            node = self.build.call(text, self.span(at, at), args, self.span(at, close))
        self.nesting -= 1
        return node, at, close


def statements(text: str, filename: str) -> tuple[Statement, ...] | None:
    """The statements of ``text`` (without a byte-order mark, ending in a newline) as
    ``grammar.lark`` reads them, or None where this parser declines (see the module)."""
    try:
        return _Parser(text, filename).statements()
    except (_Declined, ProgramError, ValueError, RecursionError):
        return None   # ValueError: an integer Python refuses; RecursionError: little stack left
