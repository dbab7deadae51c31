"""Warnings by construction: where Hahn's interpreter reads a definition differently.

A program read in the conventional dialect is also read with Hahn's parser
(``crasp.hahn_parse``), line by line. A definition gets a warning exactly when the two trees
have different canonical forms (``crasp.canonical``: same form, same values everywhere; the
earlier definitions are inlined for their names), and the warning shows both readings fully
parenthesized. No other rule decides: a line that Hahn's
grammar cannot read at all (crasp's extensions: ``alphabet``, ``mod``, unary minus, ``c * 2``,
a bare last line is read as his right-hand side) has no Hahn reading to differ from.

A file that fails to type-check conventionally but checks as Hahn reads it gets an error that
shows his reading of the failing line and names ``--dialect hahn`` (``explain_failure``).
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import canonical, hahn_parse, syntax
from crasp.errors import ProgramError
from crasp.fmt import format_parenthesized
from crasp.parse import ParsedProgram, without_byte_order_mark
from crasp.syntax import Span


SHOWN_READING = 200
"""The most characters of a reading a warning prints (``crasp fmt`` shows all of it)."""


def abridged(text: str) -> str:
    if len(text) <= SHOWN_READING:
        return text
    return f"{text[:SHOWN_READING]}... ({len(text) - SHOWN_READING:,} more characters)"


@dataclass(frozen=True)
class PrecedenceWarning:
    span: Span
    name: str
    crasp_reading: str
    hahn_reading: str

    def render(self, filename: str) -> str:
        return (f"{filename}:{self.span.line}:{self.span.column}: warning: Hahn's interpreter "
                f"reads '{self.name}' differently\n"
                f"    crasp reads: {abridged(self.crasp_reading)}\n"
                f"    Hahn reads:  {abridged(self.hahn_reading)}\n"
                f"    add parentheses to make the meaning explicit (crasp fmt does), or read "
                f"the file as Hahn does with --dialect hahn")


_ATOMS = frozenset({"VARIABLE", "STRING", "INT", "TRUE", "FALSE"})
_PREFIXES = frozenset({"!", "#"})       # Hahn's grammar has no unary minus
_BINARIES = frozenset({"+", "-", "*", "&&", "||", "<", ">", "==", "!=", "<=", ">="})


def has_one_reading(tokens: list[hahn_parse.Token]) -> bool:
    """Whether every precedence and associativity reads ``tokens`` alike, so that Hahn's parse
    need not be computed to know it matches crasp's: atoms joined by at most one binary
    operator, with prefix operators only after it (``x + 1``, ``x - #"a"``, ``#!"a"``).

    Derivation: readings differ only in where an operator's operand ends. With one binary
    operator B, its left operand is a lone atom (no prefix operator precedes B), and every
    prefix operator after B is followed by nothing but prefix operators and one final atom, so
    its operand is that rest in any grammar; with no binary operator the expression is a chain
    of prefix operators over one atom. Anything else (parentheses, ``min``, ``if``, ``#[``,
    two binary operators, a prefix before a binary one) is parsed and compared.
    """
    binaries = 0
    prefix_seen = False
    for token in tokens:
        if token.kind in _ATOMS:
            continue
        if token.kind in _PREFIXES:
            prefix_seen = True
        elif token.kind in _BINARIES and not prefix_seen and binaries == 0:
            binaries = 1
        else:
            return False
    return True


def hahn_readings(source: str, filename: str) -> dict[int, syntax.Expr]:
    """Line -> Hahn's reading of the right-hand side (or bare expression) that starts there;
    lines that ``has_one_reading`` are left out (their reading is crasp's)."""
    try:
        statements = hahn_parse.tokenize(without_byte_order_mark(source), filename)
    except ProgramError:
        return {}
    readings = {}
    for tokens in statements:
        assignment = len(tokens) > 2 and tokens[0].kind == "VARIABLE" and tokens[1].kind == "="
        expression = tokens[2:] if assignment else tokens
        if has_one_reading(expression):
            continue
        try:
            readings[tokens[0].span.line] = hahn_parse.parse_expression_tokens(
                expression, source, filename)
        except ProgramError:
            continue
    return readings


def precedence_warnings(program: syntax.Program) -> list[PrecedenceWarning]:
    readings = hahn_readings(program.source, program.filename)
    earlier: dict[str, syntax.Expr] = {}
    warnings = []
    for definition in program.definitions:
        hahn = readings.get(definition.span.line) if definition.span else None
        same = hahn is None or canonical.same_meaning(definition.expr, hahn, earlier)
        earlier[definition.name] = definition.expr
        if same:
            continue
        name = "the last line" if definition.bare else definition.name
        warnings.append(PrecedenceWarning(definition.expr.span or definition.span, name,
                                          format_parenthesized(definition.expr),
                                          format_parenthesized(hahn)))
    return warnings


def explain_failure(error: ProgramError, parsed: ParsedProgram | None, checks_as_hahn: bool
                    ) -> ProgramError:
    """``error`` with Hahn's reading of its line, when the file checks as Hahn reads it and his
    reading of that line differs from crasp's (``parsed`` is None after a syntax error)."""
    if not checks_as_hahn or error.span is None:
        return error
    hahn = hahn_readings(error.source, error.filename).get(error.span.line)
    line = error.span.line
    ours = None if parsed is None else next(
        (s.expr for s in parsed.statements if s.expr is not None and s.span.line == line), None)
    if hahn is None or (parsed is not None and (ours is None or syntax.same_structure(ours, hahn))):
        return error
    return ProgramError(error.message, source=error.source, filename=error.filename,
                        span=error.span, expected=error.expected,
                        note=f"Hahn's interpreter reads this line as {format_parenthesized(hahn)}"
                             f", and the file type-checks that way; to read it as he does, use "
                             f"--dialect hahn")
