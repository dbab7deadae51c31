"""fmt on odd text: every blank and line break a parser may meet, names that start or end like
keywords, ``#import`` lines written Hahn's way. The output is read back by both parsers with
the original meaning, keeps every comment, repeats no line, and is a fixed point of fmt."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp import canonical, syntax
from crasp.fmt import format_program
from crasp.hahn import precedence_warnings
from strategies import program_asts

KEYWORDS = ("if", "else", "true", "false", "min", "max", "import", "alphabet", "mod", "offset",
            "pred", "pred4", "pos_even")
PREFIXES = sorted({word[:n] for word in KEYWORDS for n in range(1, len(word) + 1)}
                  - {"if", "else", "true", "false", "min", "max", "mod", "offset"})
"""Every identifier that is a prefix of a keyword or predicate name (the keywords themselves
and the built-in names excepted: they are never names in crasp's dialect)."""
NAMES = PREFIXES + [w + s for w in KEYWORDS for s in ("_", "x", "2", "_if")]
BLANKS = [" ", "\t", "\f", " \t ", "\f "]
COMMENT_CHARACTERS = ["a", " ", "\t", "\f", "\v", "\r", "\u2028", "\u2029", "\x85", "\x1c",
                      '"', "//", "#import", "x = 1"]


@st.composite
def odd_sources(draw):
    """(source text, program): a random program whose names are drawn from NAMES, printed with
    random blanks between tokens, comment lines and trailing comments full of odd characters,
    blank lines, and LF or CRLF line ends."""
    program = draw(program_asts(max_depth=2, max_definitions=5, positional=False))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=len(program.definitions),
                          max_size=len(program.definitions), unique=True))
    renamed = _renamed(program, dict(zip((d.name for d in program.definitions), names)))
    lines = []
    for line in format_program(renamed).splitlines():
        pieces = line.split(" ")
        blanks = draw(st.lists(st.sampled_from(BLANKS), min_size=len(pieces) - 1,
                               max_size=len(pieces) - 1))
        text = pieces[0] + "".join(b + p for b, p in zip(blanks, pieces[1:]))
        if draw(st.booleans()):
            text += draw(st.sampled_from(BLANKS)) + "//" + _comment(draw)
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "\f", " \t"])) + "//" + _comment(draw))
        lines.append(text)
    ends = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines),
                         max_size=len(lines)))
    return "".join(line + end for line, end in zip(lines, ends)), renamed


def _comment(draw) -> str:
    return "".join(draw(st.lists(st.sampled_from(COMMENT_CHARACTERS), max_size=8)))


def _renamed(program: syntax.Program, names: dict[str, str]) -> syntax.Program:
    def rename(node, parts):
        if isinstance(node, syntax.Ref):
            return syntax.Ref(names[node.name])
        return syntax.with_children(node, parts)
    definitions = tuple(syntax.Definition(names[d.name], syntax.fold(d.expr, rename), d.type)
                        for d in program.definitions)
    return syntax.Program(definitions, program.alphabet, declared_alphabet=False)


def _hahn_readable(text: str) -> bool:
    """Without crasp's extensions (unary minus, mod, offset), which Hahn's grammar lacks."""
    return not re.search(r"(^|[^\w)\s]\s*)-|\bmod\(|\boffset\(", text, re.MULTILINE)


@settings(max_examples=150, deadline=None)
@given(odd_sources())
def test_fmt_output_is_read_back_alike_by_both_parsers(case):
    source, program = case
    read = crasp.parse_program(source)
    assert [d.expr for d in read.definitions] == [d.expr for d in program.definitions]
    formatted = crasp.format_source(read)
    again = crasp.parse_program(formatted)
    assert again.definitions == read.definitions, formatted
    assert precedence_warnings(again) == []
    assert crasp.format_source(again) == formatted
    # every comment kept, once (a carriage return in one becomes a space), no line repeated
    assert _comments(formatted) == [c.replace("\r", " ").rstrip() for c in _comments(source)]
    statements = [line.split("//")[0] for line in formatted.split("\n")]
    assert len([s for s in statements if s.strip()]) == len(program.definitions)
    if _hahn_readable(formatted):
        try:
            hahn = crasp.parse_program(formatted, dialect="hahn")
        except crasp.ProgramError as error:   # crasp's Boolean conditional: not in his grammar
            assert " if " in formatted, error
            return
        for ours, theirs in zip(read.definitions, hahn.definitions):
            assert canonical.same_meaning(ours.expr, theirs.expr), formatted


def _comments(text: str) -> list[str]:
    """The comment of every line (the programs here hold no "//" in a token literal)."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return [line[line.index("//"):].rstrip() for line in lines if "//" in line]


def test_a_form_feed_or_line_separator_in_a_comment_stays_in_it():
    for odd in ["\f", "\u2028", "\u2029", "\x85", "\v", "\x1c"]:
        source = f'x = "a" // one{odd}two\ny = #x > 0 // three{odd}\n'
        assert crasp.format_source(crasp.parse_program(source)) == \
            f'x = "a"  // one{odd}two\ny = #x > 0  // three\n'.replace(f"three{odd}", "three"
                                                                         if odd.isspace()
                                                                         else f"three{odd}")


def test_a_count_of_a_name_that_starts_with_import_keeps_its_space():
    for name in ["import", "importx", "import_", "imports"]:
        program = crasp.parse_program(f'{name} = "a"\nx = # {name} > 0\n')
        formatted = crasp.format_source(program)
        assert f"# {name}" in formatted
        for dialect in ("crasp", "hahn"):
            assert crasp.parse_program(formatted, dialect=dialect).definitions == \
                program.definitions


def test_fmt_dialect_hahn_output_is_read_by_crasps_dialect_with_his_meaning():
    """#importpred (his lexer: #import pred), mod and offset as names (crasp reserves them)."""
    source = ('#importpred\n#import  pos_even // keep\nmod = #[pred] "a" + #pos_even\n'
              'offset = mod - 1\nmod = offset > 0\n')
    hahn = crasp.parse_program(source, dialect="hahn")
    formatted = crasp.format_source(hahn)
    assert formatted.startswith("#import pred\n#import pos_even\n// keep\n")
    conventional = crasp.parse_program(formatted)
    inputs = [list(w) for n in range(5) for w in itertools.product("ab", repeat=n)]
    assert (crasp.evaluate(conventional, inputs).accept.tolist()
            == crasp.evaluate(hahn, inputs).accept.tolist())
    assert {text.split("'")[1] for _, text in hahn.rewrites} == {"mod", "offset"}
