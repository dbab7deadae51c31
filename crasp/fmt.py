"""Pass: Program -> text that means the same under crasp's and Hahn's parsers.

``format_expr`` prints the conventional precedence of ``grammar.lark`` with the fewest
parentheses, plus the ones Hahn's parser needs (see ``crasp.hahn_parse``): there a prefix
operator (``!``, ``#``, ``INT *``) takes every ``&&``/``||`` (``+``/``-`` for ``INT *``) to
its right, and ``+`` binds tighter than ``-``. So a left operand whose printed text ends in a
prefix operator that would take the operator after it is parenthesized (``(!P) || Q``,
``(2 * x) + 1``, ``(c < #P) && Q``), and so is a difference on the left of ``+``
(``(a - b) + c``).

Every printed definition is then read back with both parsers; if either reads a different
meaning (``crasp.canonical``), the definition is printed fully parenthesized instead, which
both parsers read alike. The output is therefore safe for both tools by construction, and
``fmt`` is idempotent because it prints the same tree the same way.

``format_source`` keeps the file's comments and blank lines: each statement's line is replaced
by its canonical text, and every other line is kept.
"""

from __future__ import annotations

from typing import Union

from crasp import canonical, syntax
from crasp.errors import ProgramError

CONDITIONAL, OR, AND, COMPARE, SUM, PRODUCT, PREFIX, ATOM = range(8)
_BINARY = {syntax.Or: ("||", OR), syntax.And: ("&&", AND), syntax.Add: ("+", SUM),
           syntax.Sub: ("-", SUM)}
_PREFIX = (syntax.Not, syntax.Count, syntax.Scale)


def _precedence(expr: syntax.Expr) -> int:
    if isinstance(expr, syntax.Conditional):
        return CONDITIONAL
    if isinstance(expr, syntax.Compare):
        return COMPARE
    if type(expr) in _BINARY:
        return _BINARY[type(expr)][1]
    if isinstance(expr, syntax.Scale):
        return PRODUCT
    if isinstance(expr, (syntax.Not, syntax.Count)):
        return PREFIX
    if isinstance(expr, syntax.IntConst) and expr.value < 0:
        return PREFIX
    return ATOM


_BOOLEAN_LOOP, _COUNT_LOOP = frozenset({"&&", "||"}), frozenset({"+", "-"})


def _swallowed(expr: syntax.Expr, minimum: int) -> frozenset[str]:
    """The operators that Hahn's parser lets a prefix operator at the printed end of ``expr``
    (an operand needing precedence ``minimum``) take from the text after it."""
    operators: frozenset[str] = frozenset()
    while _precedence(expr) >= minimum:
        if isinstance(expr, (syntax.Not, syntax.Count)):
            operators |= _BOOLEAN_LOOP
            expr, minimum = (expr.operand if isinstance(expr, syntax.Not) else expr.body), PREFIX
        elif isinstance(expr, syntax.Scale):
            operators |= _COUNT_LOOP
            expr, minimum = expr.operand, PREFIX
        elif isinstance(expr, syntax.Conditional):
            expr, minimum = expr.if_false, CONDITIONAL
        elif isinstance(expr, syntax.Compare):
            expr, minimum = expr.right, SUM
        elif type(expr) in _BINARY:
            expr, minimum = expr.right, _BINARY[type(expr)][1] + 1
        else:
            break
    return operators


def _relation(relation: syntax.LocalRelation) -> str:
    if relation.args:
        return f"{relation.name}({', '.join(str(a) for a in relation.args)})"
    return relation.name


def _atom_text(expr: syntax.Expr) -> str | None:
    if isinstance(expr, syntax.TokenTest):
        return f'"{expr.token}"'
    if isinstance(expr, syntax.BoolConst):
        return "true" if expr.value else "false"
    if isinstance(expr, syntax.IntConst):
        return str(expr.value)
    if isinstance(expr, syntax.Ref):
        return expr.name
    if isinstance(expr, syntax.PositionTest):
        return f"mod({expr.modulus}, {expr.residue})" if expr.name == "mod" else expr.name
    return None


Text = Union[str, list]
"""Printed text as a rope: a string, or a list of ropes read left to right. A long chain is
printed in linear time (joining the operands' strings at every level would copy the left
operand once per level: quadratic) and joined once at the end (``_joined``)."""


def format_expr(expr: syntax.Expr, group_mixed: bool = False) -> str:
    """The conventional text with the parentheses both parsers need (without recursion);
    ``group_mixed`` also parenthesizes every ``&&`` operand of ``||`` (and ``||`` of ``&&``),
    so that a mixed chain needs no precedence rule to be read."""
    def node(expr: syntax.Expr, texts: list[Text]) -> Text:
        kids = syntax.children(expr)

        def operand(index: int, minimum: int, followed_by: str = "") -> tuple[Text, bool]:
            kid = kids[index]
            swallows = followed_by and followed_by in _swallowed(kid, minimum)
            hahn_sum = followed_by == "+" and isinstance(kid, syntax.Sub)   # a - b + c
            mixed = (group_mixed and isinstance(kid, (syntax.And, syntax.Or))
                     and isinstance(expr, (syntax.And, syntax.Or)) and type(kid) is not type(expr))
            return texts[index], bool(_precedence(kid) < minimum or swallows or hahn_sum or mixed)
        return _print(expr, texts, operand)
    return _joined(syntax.fold(expr, node))


def format_parenthesized(expr: syntax.Expr) -> str:
    """Every operand that is not an atom in parentheses: one reading in any parser."""
    def node(expr: syntax.Expr, texts: list[Text]) -> Text:
        kids = syntax.children(expr)

        def operand(index: int, minimum: int = ATOM, followed_by: str = "") -> tuple[Text, bool]:
            return texts[index], _precedence(kids[index]) != ATOM
        return _print(expr, texts, operand)
    return _joined(syntax.fold(expr, node))


def _joined(text: Text) -> str:
    """The string of a rope (with an explicit stack: ropes nest as deep as the tree)."""
    pieces, stack = [], [text]
    while stack:
        part = stack.pop()
        if isinstance(part, str):
            pieces.append(part)
        else:
            stack.extend(reversed(part))
    return "".join(pieces)


def _print(expr: syntax.Expr, texts: list[Text], operand) -> Text:
    """``expr`` printed, given its children's texts; ``operand(index, minimum, followed_by)``
    is child ``index`` as an operand that must bind at least as tightly as ``minimum`` and is
    followed by the operator ``followed_by``: its text, and whether the caller parenthesizes
    it."""
    def child(index: int, minimum: int, followed_by: str = "") -> Text:
        text, parenthesized = operand(index, minimum, followed_by)
        return ["(", text, ")"] if parenthesized else text

    atom = _atom_text(expr)
    if atom is not None:
        return atom
    if isinstance(expr, syntax.Not):
        return ["!", child(0, PREFIX)]
    if isinstance(expr, syntax.Count):
        guard = f"[{_relation(expr.relation)}] " if expr.relation else ""
        body, parenthesized = operand(0, PREFIX)
        # Both lexers read "#import" (Hahn's also "#importx") as the keyword, never as a count;
        # only a name can start the body's text with it (other operands start with a symbol).
        spaced = not guard and not parenthesized and (_atom_text(expr.body) or "").startswith(
            "import")
        return ["#" + guard + (" " if spaced else ""), ["(", body, ")"] if parenthesized else body]
    if isinstance(expr, (syntax.Min, syntax.Max)):
        name = "min" if isinstance(expr, syntax.Min) else "max"
        return [f"{name}(", texts[0], ", ", texts[1], ")"]
    if isinstance(expr, syntax.Scale):
        return [f"{expr.factor} * ", child(0, PREFIX)]
    if isinstance(expr, syntax.Compare):
        return [child(0, SUM), f" {expr.op} ", child(1, SUM)]
    if isinstance(expr, syntax.Conditional):
        return [child(1, OR), " if ", child(0, OR), " else ", child(2, CONDITIONAL)]
    symbol, level = _BINARY[type(expr)]
    return [child(0, level, symbol), f" {symbol} ", child(1, level + 1)]


def _reads_back(expr: syntax.Expr, text: str) -> bool:
    """Whether both parsers read ``text`` as ``expr`` (Hahn's only where his grammar can)."""
    from crasp import hahn_parse
    from crasp.parse import parse

    try:
        ours = parse(f"v = {text}\n").statements[0].expr
    except ProgramError:
        return False
    try:
        statements = hahn_parse.tokenize(text, "<fmt>")
        theirs = hahn_parse.parse_expression_tokens(statements[0], text, "<fmt>")
    except ProgramError:
        theirs = ours   # crasp's extensions (mod, unary minus, ...) have no Hahn reading
    return canonical.same_meaning(expr, ours) and canonical.same_meaning(expr, theirs)


def _is_plain_atom(expr: syntax.Expr) -> bool:
    """A name, a token, a Boolean or a non-negative integer: one token in both grammars."""
    return (isinstance(expr, (syntax.Ref, syntax.TokenTest, syntax.BoolConst))
            or (isinstance(expr, syntax.IntConst) and expr.value >= 0))


def _prefixed_atom(expr: syntax.Expr) -> bool:
    while isinstance(expr, syntax.Not) or (isinstance(expr, syntax.Count)
                                           and expr.relation is None):
        expr = expr.operand if isinstance(expr, syntax.Not) else expr.body
    return _is_plain_atom(expr)


def has_one_reading(expr: syntax.Expr) -> bool:
    """Whether ``format_expr(expr)`` is ``atom``, ``!``/``#`` prefixes over an atom, or
    ``atom op prefixes-over-an-atom`` for one binary operator or comparison: text that every
    precedence reads alike (``crasp.hahn.has_one_reading`` derives it on tokens), so checking
    that both parsers read it back cannot fail and is skipped (it is most of ``fmt``'s time on
    long chains of small definitions)."""
    if isinstance(expr, syntax.Compare) or type(expr) in _BINARY:
        left, right = (expr.left, expr.right)
        return _is_plain_atom(left) and _prefixed_atom(right)
    return _prefixed_atom(expr)


def format_definition_expr(expr: syntax.Expr) -> str:
    text = format_expr(expr)
    return text if has_one_reading(expr) or _is_flat_chain(text) or _reads_back(expr, text) \
        else format_parenthesized(expr)


def _is_flat_chain(text: str) -> bool:
    """Whether ``text`` is a chain without parentheses that both parsers read alike
    (``crasp.hahn.is_flat_chain``); ``format_expr`` prints such a chain only for the tree that
    crasp's precedence builds from it, so the read-back check cannot fail."""
    from crasp import hahn, hahn_parse

    try:
        statements = hahn_parse.tokenize(text, "<fmt>")
    except ProgramError:
        return False
    return len(statements) == 1 and hahn.is_flat_chain(statements[0])


def _header(program: syntax.Program) -> list[str]:
    """The ``#import`` lines and the ``alphabet`` line."""
    lines = [f"#import {name}" for name in program.imports]
    if program.declared_alphabet:
        lines.append("alphabet " + " ".join(f'"{t}"' for t in program.alphabet))
    return lines


def _lines(program: syntax.Program) -> list[tuple[int | None, str]]:
    """(source line or None, text) of every definition, after the header lines (line None)."""
    lines: list[tuple[int | None, str]] = [(None, text) for text in _header(program)]
    for definition in program.definitions:
        text = format_definition_expr(definition.expr)
        lines.append((definition.span.line if definition.span else None,
                      text if definition.bare else f"{definition.name} = {text}"))
    return lines


def format_program(program: syntax.Program) -> str:
    """The program's statements in canonical form, one per line (no comments).

    >>> import crasp
    >>> print(format_program(crasp.parse_program('x = (#"a") > (#"b" + 1)')), end="")
    x = #"a" > #"b" + 1
    """
    return "\n".join(text for _, text in _lines(program)) + "\n"


def format_source(program: syntax.Program) -> str:
    """The program's source with each statement in canonical form; comments and blank lines
    are kept where they are (the header statements, ``#import`` and ``alphabet``, all at the
    first of their lines: both readers take them before any definition).

    Lines are what both parsers count as lines: text between line feeds (a form feed, a
    U+2028 or a carriage return inside a comment is part of the comment). A carriage return
    left in a comment becomes a space (Hahn's lexer would end the comment there), and only
    spaces and tabs are kept before a comment (the only blanks Hahn's lexer skips)."""
    if not program.source:
        return format_program(program)
    by_line = {line: text for line, text in _lines(program) if line is not None}
    header_lines = sorted(program.header_lines)
    if header_lines:
        by_line[header_lines[0]] = "\n".join(_header(program))
    continued = {number for d in program.definitions if d.span   # a literal over lines (Hahn)
                 for number in range(d.span.line + 1, d.span.end_line + 1)}
    out = []
    for number, line in enumerate(program.source.split("\n"), start=1):
        line = line.removesuffix("\r")
        # a line that continues a statement starts inside the literal that the newline is in
        comment = _trailing_comment(line, number in continued).replace("\r", " ").rstrip()
        if number in continued:
            out[-1] += f"  {comment}" if comment else ""
            continue
        if number in by_line:
            out.append(by_line[number] + (f"  {comment}" if comment else ""))
        elif number in header_lines:
            out.extend([comment] if comment else [])
        elif comment:
            indent = line[:len(line) - len(line.lstrip())]
            out.append("".join(c for c in indent if c in " \t") + comment)
        else:
            out.append("")
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def _trailing_comment(line: str, in_string: bool = False) -> str:
    """The ``//`` comment of a line ("" if none); quotes are skipped."""
    for index, char in enumerate(line):
        if char == '"':
            in_string = not in_string
        elif not in_string and line.startswith("//", index):
            return line[index:]
    return ""
