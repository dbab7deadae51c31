"""The direct parser (``crasp.parse_direct``) reads every text as Lark's parser of
``grammar.lark`` does (``crasp.parse_lark``), spans included, or declines it: generated programs
(which it must read), the same with odd blanks, comments and parentheses, and mutated token
soups near the edge of the grammar (where it may decline, and ``crasp.parse`` then gives Lark's
statements or its error).
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp import parse_direct, parse_lark, syntax
from crasp.errors import ProgramError
from crasp.fmt import format_expr, format_parenthesized, format_program
from crasp.parse import parse
from tests.strategies import program_asts

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _node_record(node) -> tuple:
    """A node's type, span and own fields (a relation with its span), without its children."""
    kids = syntax.children(node)
    fields = tuple((f.name, getattr(node, f.name), getattr(getattr(node, f.name), "span", None))
                   for f in dataclasses.fields(node)
                   if f.name != "span" and not any(getattr(node, f.name) is kid for kid in kids))
    return type(node).__name__, node.span, fields


def with_spans(statements) -> list:
    """Everything both parsers build, spans included (``==`` on nodes ignores spans)."""
    return [(s.kind, s.span, s.name, s.name_span, s.tokens,
             None if s.expr is None else [_node_record(n) for n in syntax.walk(s.expr)])
            for s in statements]


def lark_outcome(text: str):
    try:
        return with_spans(parse_lark.statements(text, "<t>"))
    except ProgramError as error:
        return ("error", error.render())


def assert_reads_as_lark(text: str, must_read: bool = False) -> None:
    text = text if text.endswith("\n") else text + "\n"
    direct = parse_direct.statements(text, "<t>")
    expected = lark_outcome(text)
    if must_read:
        assert direct is not None, text
    if direct is not None:
        assert with_spans(direct) == expected, text
    try:
        public = with_spans(parse(text, "<t>").statements)
    except ProgramError as error:
        public = ("error", error.render())
    assert public == expected, text


@SETTINGS
@given(program_asts(positional=True, max_size=5), st.booleans())
def test_generated_programs_are_read_directly_as_lark_reads_them(program, parenthesized):
    lines = [f"alphabet {' '.join(chr(34) + t + chr(34) for t in program.alphabet)}"]
    for definition in program.definitions:
        text = (format_parenthesized if parenthesized else format_expr)(definition.expr)
        lines.append(f"{definition.name} = {text}")
    assert_reads_as_lark("\n".join(lines), must_read=True)


LEXEME = re.compile(r'#import|"[^"\n]*"|[A-Za-z_][A-Za-z_0-9]*|[0-9]+|&&|\|\||[<>=!]=|//[^\n]*'
                    r'|\r?\n|\S')
VOCABULARY = ["x", "y", "alphabet", "min", "max", "mod", "offset", "pred", "true", "false", "if",
              "else", "import", "#import", '"a"', '""', '"a b"', "0", "12", "007", "&&", "||",
              "==", "<", ">=", "!=", "+", "-", "*", "!", "#", "[", "]", "(", ")", ",", "=",
              "\n", "\r\n", "// c", "\r", "$", "é", "/", "\f", "\t", "truex", "#importy"]


@st.composite
def mutated_programs(draw) -> str:
    """A generated program's lexemes, some dropped, repeated or replaced, some spans wrapped in
    parentheses, joined with blanks or nothing: texts on both sides of the grammar's edge."""
    program = draw(program_asts(positional=True, max_size=4, max_definitions=3))
    lexemes = LEXEME.findall(format_program(program))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(lexemes)))
        action = draw(st.sampled_from(["drop", "repeat", "replace", "insert", "wrap"]))
        if action == "insert" or not lexemes:
            lexemes.insert(at, draw(st.sampled_from(VOCABULARY)))
            continue
        at = min(at, len(lexemes) - 1)
        if action == "drop":
            del lexemes[at]
        elif action == "repeat":
            lexemes.insert(at, lexemes[at])
        elif action == "replace":
            lexemes[at] = draw(st.sampled_from(VOCABULARY))
        else:
            end = draw(st.integers(at, len(lexemes)))
            lexemes[at:end] = ["(", *lexemes[at:end], ")"]
    separators = draw(st.lists(st.sampled_from([" ", "", "  ", "\t", " // note\n"]),
                               min_size=len(lexemes), max_size=len(lexemes)))
    return "".join(s + lexeme for s, lexeme in zip(separators, lexemes))


@SETTINGS
@given(mutated_programs())
def test_mutated_programs_read_as_lark_reads_them(text):
    assert_reads_as_lark(text)


@SETTINGS
@given(st.lists(st.sampled_from(VOCABULARY + ["x = ", " ", "\n", "y"]), max_size=14))
def test_token_soups_read_as_lark_reads_them(lexemes):
    assert_reads_as_lark("".join(lexemes))


@pytest.mark.parametrize("text", [
    '#import true\nx = "a"', 'x = #[true] "a"', "x = if", "min = 1", "x = (#import)",
    'x = # import', 'x = "a" y', 'x = 1 < 2 < 3', 'x = mod(2, 1) && -(2) * 3 > - - 4',
    'alphabet "a" "b"\nx = #[offset(2)] "a" > 2 * (3 * #"b")', 'y "a"', 'x = f(1)',
    'x = ((1)) + (2) if ("a") else (3)', '"a"', '(x)', 'x = "a"\r\n\r\ny = x // c\f\n',
    'x = "a" \r y', 'x = 99999999999999999999 * #"a" > 0', 'x = (2 * 3) * #"a" > 0',
    'x = #"a" * #"b" > 0', 'x = min(1)', 'x = mod(0, 1)', 'x = ""', 'x = "a" if "b"'])
def test_edge_texts_read_as_lark_reads_them(text):
    assert_reads_as_lark(text)


def test_deep_nesting_is_left_to_lark():
    levels = parse_direct.MAX_NESTING + 5
    deep = "x = " + "(" * levels + '"a"' + ")" * levels
    assert parse_direct.statements(deep + "\n", "<t>") is None
    assert_reads_as_lark(deep)
    shallow = "x = " + "(" * 20 + '"a"' + ")" * 20
    assert_reads_as_lark(shallow, must_read=True)


@pytest.mark.parametrize("operands", [1, 2, 3, 500])
def test_long_chains_are_read_directly_as_lark_reads_them(operands):
    """The benchmark's three shapes (``benchmarks/bench_scale.py --expressions``), and chains of
    prefix operators and conditionals."""
    shapes = ['p = "a"\nq = "b"\nx = ' + " && ".join(["p", "q"] * operands),
              "c = " + " + ".join(['#"a"', '#"b"'] * operands) + "\nx = c > 0",
              'p = "a"\nq = "b"\nx = ' + " || ".join(["p && q"] * operands),
              'x = ' + "!" * operands + "#" * operands + '"a" > ' + "- " * operands + "1",
              'x = ' + " else ".join(['"a" if "b"'] * operands) + ' else "c"']
    for text in shapes:
        assert_reads_as_lark(text, must_read=True)
