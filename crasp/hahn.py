"""Warnings by construction: where Hahn's interpreter reads a definition differently.

A program read in the conventional dialect is also read with Hahn's parser
(``crasp.hahn_parse``), line by line. A definition gets a warning exactly when the two readings
differ as formulas: Hahn's tree, resolved and typed where the definition stands, has another
canonical form than crasp's (``crasp.canonical``: same form, same values everywhere; the
earlier definitions are inlined for their names). Equal readings, different trees with the
same form, get none. The warning shows both readings fully parenthesized and the shortest input
found on which they answer differently. No other rule decides: a line that Hahn's
grammar cannot read at all (crasp's extensions: ``alphabet``, ``mod``, unary minus, ``c * 2``,
a bare last line is read as his right-hand side) has no Hahn reading to differ from.

A file that fails to type-check conventionally but checks as Hahn reads it gets an error that
shows his reading of the failing line and names ``--dialect hahn`` (``explain_failure``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from crasp import canonical, hahn_parse, syntax
from crasp.check import expression_checker
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
    evidence: str = ""
    """Where the readings answer differently (an input and both values), or why none is shown."""

    def render(self, filename: str) -> str:
        return (f"{filename}:{self.span.line}:{self.span.column}: warning: Hahn's interpreter "
                f"reads '{self.name}' differently\n"
                f"    crasp reads: {abridged(self.crasp_reading)}\n"
                f"    Hahn reads:  {abridged(self.hahn_reading)}\n"
                + (f"    {self.evidence}\n" if self.evidence else "") +
                "    add parentheses to make the meaning explicit (crasp fmt does), or read "
                "the file as Hahn does with --dialect hahn")


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
            return is_flat_chain(tokens)
    return True


_BOOLEAN_LOOP = frozenset({"&&", "||"})
_COMPARISONS = frozenset({"<", ">", "==", "!=", "<=", ">="})


def is_flat_chain(tokens: list[hahn_parse.Token]) -> bool:
    """Whether ``tokens`` are units joined by ``&& || + -`` and comparisons, which both
    grammars read alike, however long (so a 100,000-operand chain is never parsed twice).

    A unit is an atom or ``#`` before a token literal; no parentheses, ``!``, ``*``, ``if``,
    ``min``/``max`` or ``#[``. Two rules keep Hahn's reading equal to crasp's: a ``#"a"`` unit is
    not followed by ``&&`` or ``||`` (his ``#`` would take them into its body), and within one
    sum no ``-`` comes before a ``+`` (his ``a - b + c`` is ``a - (b + c)``).

    Derivation (``crasp.hahn_parse``): his ``&&`` (7) and ``||`` (6) loops are left-associative
    with ``&&`` binding tighter, as crasp's; his ``+`` (7) and ``-`` (6) read ``a + b - c`` as
    ``(a + b) - c`` and ``a - b - c`` as ``(a - b) - c``, as crasp does, and differ only when a
    ``+`` follows a ``-``. His ``#`` reads a whole bool_expr, but at a token literal that is the
    literal with the ``&&``/``||`` after it: none follows. A comparison's operands are the
    maximal sums around it: the first end tried for a count is the longest (its loop continues
    before it exits), and that is the one followed by the comparison; after the right operand
    the Boolean loop goes on as crasp's does. Comparisons do not chain in either grammar.
    """
    minus_in_sum = False
    previous = None
    for index, token in enumerate(tokens):
        kind = token.kind
        expects_unit = index == 0 or previous in _BINARIES
        if expects_unit:
            if kind == "#":
                if index + 1 >= len(tokens) or tokens[index + 1].kind != "STRING":
                    return False
                following = tokens[index + 2].kind if index + 2 < len(tokens) else None
                if following in _BOOLEAN_LOOP:
                    return False
            elif kind not in _ATOMS:
                return False
        elif previous == "#":
            pass   # the literal after it, checked above
        elif kind in ("+", "-"):
            if kind == "+" and minus_in_sum:
                return False
            minus_in_sum |= kind == "-"
        elif kind in _BOOLEAN_LOOP or kind in _COMPARISONS:
            minus_in_sum = False
        else:
            return False
        previous = kind
    return previous is not None and previous not in _BINARIES and previous != "#"


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
    """A warning for each definition whose two readings differ as formulas: Hahn's reading,
    resolved and typed where the definition stands (``check.expression_checker``), has another
    canonical form than crasp's. Equal readings (the same form: ``(pos_even)``, ``a - b + 0``,
    ``1 if P else 1 if Q else 1``) get none. Each warning shows the shortest input found on
    which the two answer differently (``evidence``)."""
    readings = hahn_readings(program.source, program.filename)
    earlier: dict[str, syntax.Expr] = {}
    check_at = expression_checker(program)
    warnings = []
    for index, definition in enumerate(program.definitions):
        hahn = readings.get(definition.span.line) if definition.span else None
        problem = ""
        if hahn is not None:
            try:
                hahn, _ = check_at(index, hahn)
            except ProgramError as error:
                problem = f"Hahn's reading is not well typed here: {error.message}"
        same = hahn is None or canonical.same_meaning(definition.expr, hahn, earlier)
        earlier[definition.name] = definition.expr
        if same:
            continue
        name = "the last line" if definition.bare else definition.name
        evidence = problem or (difference_witness(program, index, hahn)
                               if len(warnings) < MAX_WITNESS_SEARCHES else "")
        warnings.append(PrecedenceWarning(definition.expr.span or definition.span, name,
                                          format_parenthesized(definition.expr),
                                          format_parenthesized(hahn), evidence))
    return warnings


MAX_WITNESS_SEARCHES = 10
WITNESS_STRINGS = 1500
"""About how many strings (all of them, shortest first) are tried for a witness."""


def difference_witness(program: syntax.Program, index: int, hahn: syntax.Expr) -> str:
    """The shortest input, of every string over the alphabet and one other token up to a
    length where there are about WITNESS_STRINGS of them, at whose end the two readings of
    definition ``index`` have different values, told in words."""
    from crasp.interpret import evaluate

    definition = program.definitions[index]
    other = "_".join(program.alphabet) + "_other"
    tokens = (*program.alphabet, other)
    length = 0
    while len(tokens) ** (length + 1) <= WITNESS_STRINGS and length < 12:
        length += 1
    inputs = [list(w) for n in range(length + 1) for w in itertools.product(tokens, repeat=n)]
    theirs = syntax.Definition(f"{definition.name} (Hahn)", hahn, definition.type)
    earlier = {d.name: d for d in program.definitions[:index]}
    needed: dict[str, syntax.Definition] = {}   # only what the two readings use
    pending = [definition.expr, hahn]
    while pending:
        for node in syntax.walk(pending.pop()):
            if isinstance(node, syntax.Ref) and node.name in earlier and node.name not in needed:
                needed[node.name] = earlier[node.name]
                pending.append(earlier[node.name].expr)
    used = tuple(d for d in program.definitions[:index] if d.name in needed)
    both = syntax.Program((*used, definition, theirs), program.alphabet, imports=program.imports)
    columns = evaluate(both, inputs).columns
    ours_values, their_values = columns[definition.name], columns[theirs.name]
    for row, word in enumerate(inputs):   # every prefix of a word is an earlier word
        if ours_values[row, len(word)] != their_values[row, len(word)]:
            shown = f'"{" ".join(word)}"' if word else "the empty input"
            value = bool if definition.type == syntax.BOOL else int
            return (f"on {shown}, crasp's reading is {value(ours_values[row, len(word)])} and "
                    f"Hahn's {value(their_values[row, len(word)])}")
    return (f"the two are different formulas, though no input up to length {length} tells "
            "them apart")


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
