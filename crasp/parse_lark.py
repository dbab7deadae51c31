"""Pass 1 by Lark, text -> statements: the LALR parser of ``grammar.lark`` and its errors.

``crasp.parse`` comes here for what ``crasp.parse_direct`` declines: a syntax error (reported
with the line, the column, a caret and the tokens the grammar would have accepted, in words),
a rule a node builder enforces, a form the direct parser does not take. Lark builds a parse
tree with positions; ``_ToSyntax`` turns it into statements through ``parse.NodeBuilder``.
"""

from __future__ import annotations

import io
import sys
from functools import lru_cache
from pathlib import Path

from lark import Lark, Transformer_NonRecursive, v_args
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken,
                             VisitError)

from crasp import syntax
from crasp.errors import ProgramError
from crasp.parse import NodeBuilder, Statement
from crasp.syntax import Span
from crasp.util.atomic import write_bytes_atomic

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


PARSER_OPTIONS = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False}


def parser_cache_path(grammar: str) -> Path:
    """Where the analyzed grammar is kept between runs: ``$CRASP_CACHE_DIR`` (else
    ``$XDG_CACHE_HOME/crasp``, else ``~/.cache/crasp``), under a name that changes with the
    grammar, the options, and the versions of lark and Python (so a stale file is never read)."""
    import hashlib
    import os

    import lark

    key = hashlib.sha256(repr((grammar, sorted(PARSER_OPTIONS.items()), lark.__version__,
                               sys.version_info[:2])).encode()).hexdigest()[:24]
    base = os.environ.get("CRASP_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "crasp")
    return Path(base) / f"grammar-{key}.lark"


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser. Analyzing the grammar takes about 0.1 s, most of the start-up of a
    short ``crasp run`` that needs it; so the analyzed parser is kept in a cache file (written
    atomically; one that cannot be read or written is rebuilt or skipped without a word)."""
    grammar = Path(__file__).with_name("grammar.lark").read_text(encoding="utf-8")
    cache = parser_cache_path(grammar)
    try:
        with open(cache, "rb") as file:
            return Lark.load(file)
    except Exception:  # absent, unreadable or from elsewhere: rebuilt below
        pass
    parser = Lark(grammar, **PARSER_OPTIONS)
    try:
        buffer = io.BytesIO()
        parser.save(buffer)
        write_bytes_atomic(cache, buffer.getvalue())
    except OSError:  # a read-only home, a full disk: parse without the cache
        pass
    return parser


def _span_of(item) -> Span:
    """The span of a token or of a rule's meta (both have the four positions)."""
    return Span(item.line, item.column, item.end_line, item.end_column)


def _binary(node_type):
    """The transformer callback that builds a two-operand node with its span."""
    @v_args(meta=True)
    def build(self, meta, children):
        return node_type(*children, span=_span_of(meta))
    return build


class _ToSyntax(Transformer_NonRecursive):
    """Builds ``crasp.syntax`` nodes from the parse tree (``NodeBuilder`` checks the rules)."""

    def __init__(self, source: str, filename: str):
        super().__init__()
        self.build = NodeBuilder(source, filename)

    # statements
    @v_args(meta=True)
    def import_stmt(self, meta, children):
        _, name = children
        return Statement("import", _span_of(meta), name=str(name), name_span=_span_of(name))

    @v_args(meta=True)
    def alphabet_decl(self, meta, children):
        keyword, *literals = children
        return self.build.alphabet(_span_of(meta), str(keyword),
                                   [(str(t), _span_of(t)) for t in literals])

    @v_args(meta=True)
    def assignment(self, meta, children):
        name, expr = children
        return self.build.assignment(_span_of(meta), str(name), _span_of(name), expr)

    @v_args(meta=True)
    def bare(self, meta, children):
        return Statement("bare", _span_of(meta), expr=children[0])

    def start(self, children):
        return tuple(children)

    # atoms
    def token(self, children):
        (tok,) = children
        return syntax.TokenTest(self.build.token_text(str(tok), _span_of(tok)),
                                span=_span_of(tok))

    def int(self, children):
        (tok,) = children
        return self.build.integer(str(tok), _span_of(tok))

    def true(self, children):
        return syntax.BoolConst(True, span=_span_of(children[0]))

    def false(self, children):
        return syntax.BoolConst(False, span=_span_of(children[0]))

    def ref(self, children):
        (tok,) = children
        return syntax.Ref(self.build.name(str(tok), _span_of(tok)), span=_span_of(tok))

    @v_args(meta=True)
    def call(self, meta, children):
        name, *args = children
        return self.build.call(str(name), _span_of(name), args, _span_of(meta))

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
        return self.build.product(left, right, _span_of(meta))

    @v_args(meta=True)
    def neg(self, meta, children):
        return self.build.negation(children[0], _span_of(meta))

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
        return self.build.relation(str(name), [str(arg) for arg in args], _span_of(meta))


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


def statements(text: str, filename: str) -> tuple[Statement, ...]:
    """The statements of ``text`` (without a byte-order mark, ending in a newline), or the
    ``ProgramError`` of its first syntax error (else of the first node a builder refuses)."""
    try:
        tree = _parser().parse(text)
    except (UnexpectedCharacters, UnexpectedToken, UnexpectedEOF) as error:
        raise _syntax_error(error, text, filename) from None
    try:
        return _ToSyntax(text, filename).transform(tree)
    except VisitError as error:  # Lark wraps what a callback raises
        raise error.orig_exc from None
