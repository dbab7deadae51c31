"""The language core: grammar, precedence, checker errors, interpreter, depth, fmt."""

from __future__ import annotations

import itertools


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp import syntax
from crasp.errors import InputError, ProgramError
from reference import accepts, evaluate_at
from strategies import program_asts, token_strings


def parse_expr(text: str, alphabet: str = 'alphabet "a" "b"') -> syntax.Expr:
    """The expression of a one-line program ``x = TEXT`` (typed, so it must be Boolean)."""
    return crasp.parse_program(f"{alphabet}\nx = {text}\n").answer.expr


# ------------------------------------------------------------------ grammar and precedence

def test_prefix_operators_bind_tightest():
    a, b = syntax.TokenTest("a"), syntax.TokenTest("b")
    assert parse_expr('!"a" && "b"') == syntax.And(syntax.Not(a), b)
    assert parse_expr('!"a" || "b"') == syntax.Or(syntax.Not(a), b)
    assert parse_expr('#"a" == 0') == syntax.Compare("==", syntax.Count(a), syntax.IntConst(0))
    assert parse_expr('# !"a" > 0') == syntax.Compare(">", syntax.Count(syntax.Not(a)),
                                                      syntax.IntConst(0))


def test_arithmetic_is_left_associative_and_scaling_binds_tighter():
    ca, cb = syntax.Count(syntax.TokenTest("a")), syntax.Count(syntax.TokenTest("b"))
    one = syntax.IntConst(1)
    left = parse_expr('#"a" - #"b" + 1 > 0').left
    assert left == syntax.Add(syntax.Sub(ca, cb), one)
    assert parse_expr('2 * #"a" - #"b" > 0').left == syntax.Sub(syntax.Scale(2, ca), cb)
    assert parse_expr('#"a" * 3 > 0').left == syntax.Scale(3, ca)
    assert parse_expr('-#"a" < 0').left == syntax.Scale(-1, ca)
    assert parse_expr('-2 < 0').left == syntax.IntConst(-2)


def test_and_binds_tighter_than_or_and_conditional_is_loosest():
    a, b = syntax.TokenTest("a"), syntax.TokenTest("b")
    assert parse_expr('"a" || "b" && "a"') == syntax.Or(a, syntax.And(b, a))
    expr = parse_expr('"a" if "a" || "b" else #"b" > 1')
    assert isinstance(expr, syntax.Conditional)
    assert expr.condition == syntax.Or(a, b)
    assert expr.if_false == syntax.Compare(">", syntax.Count(b), syntax.IntConst(1))
    count_branch = parse_expr('(#"a" if "a" else #"b") > 1').left
    assert count_branch == syntax.Conditional(a, syntax.Count(a), syntax.Count(b))


def test_hahn_style_programs_parse_unchanged():
    text = (
        "\n// Hahn's dialect: comments, blank lines, imports\n\n#import pred4\n"
        'is_a_copy = "a" && ((#[pred4] "a") == 1)\n'
        "token_count = #true\n"
        "num = #is_a_copy + #is_a_copy\n"
        "ok = (num + num == token_count)\n\n"
    )
    program = crasp.parse_program(text)
    assert [d.name for d in program.definitions] == ["is_a_copy", "token_count", "num", "ok"]
    assert program.definition("is_a_copy").expr.right.left.relation.offset == 4
    assert crasp.depth_of(program) == 2


def test_guarded_counts_and_periodic_predicates():
    program = crasp.parse_program(
        '#import pred\n#import pos_even\nx = #[pred] "a" == 1 && pos_even && mod(3, 1) || '
        '#[offset(2)] "b" > 0\n')
    tokens = list("aabab")
    evaluation = crasp.evaluate(program, [tokens])
    expected = [evaluate_at(program, tokens, i)["x"] for i in range(len(tokens))]
    assert evaluation.output[0].tolist() == expected


def test_bare_final_expression_is_a_formula():
    program = crasp.parse_program('#(#"b" >= 1 && "a") >= 1')
    assert program.answer.name == syntax.ANSWER_NAME and program.answer.bare
    assert crasp.depth_of(program) == 2
    assert crasp.evaluate(program, [list("ba"), list("ab")]).accept.tolist() == [True, False]


def test_alphabet_defaults_to_literals_plus_extra_tokens():
    program = crasp.parse_program('x = "b" || "a"', extra_alphabet=("c", "a"))
    assert program.alphabet == ("b", "a", "c")
    declared = crasp.parse_program('alphabet "a" "b" "e"\nx = "a"')
    assert declared.alphabet == ("a", "b", "e") and declared.declared_alphabet


# ------------------------------------------------------------------ checker errors

ERRORS = [
    ("syntax", 'x = #"a" +\n', 1, 11, "unexpected end of the line"),
    ("bad character", 'x = #"a" $ 1\n', 1, 10, "unexpected character '$'"),
    ("chained comparison", 'x = 1 < 2 < 3\n', 1, 11, "comparisons do not chain"),
    ("undefined", 'x = "a"\ny = z && x\n', 2, 5, "undefined name 'z'"),
    ("use before definition", 'y = x\nx = "a"\n', 1, 5, "used before its definition on line 2"),
    ("defined twice", 'x = "a"\nx = "b"\n', 2, 1, "'x' is already defined on line 1"),
    ("count a count", 'x = #(#"a") > 0\n', 1, 7, "but this is a count"),
    ("compare Booleans", 'x = "a" < "b"\n', 1, 5, "compares counts, but this is a Boolean"),
    ("and on counts", 'x = #"a" && "b"\n', 1, 5, "'&&' needs a Boolean"),
    ("not on a count", 'x = !#"a"\n', 1, 6, "'!' needs a Boolean"),
    ("arithmetic on Booleans", 'x = "a" + 1 > 0\n', 1, 5, "'+' needs a count"),
    ("scale a Boolean", 'x = 2 * "a" > 0\n', 1, 9, "'*' needs a count"),
    ("product of counts", 'x = #"a" * #"b" > 0\n', 1, 5, "integer literal on one side"),
    ("unknown import", '#import magic\nx = "a"\n', 1, 9, "unknown import 'magic'"),
    ("predicate without import", 'x = #[pred] "a" > 0\n', 1, 7,
     "'pred' is used without its import"),
    ("unary predicate without import", 'x = pos_even\n', 1, 5,
     "'pos_even' is used without its import"),
    ("unknown relation", 'x = #[next] "a" > 0\n', 1, 7, "unknown positional relation 'next'"),
    ("answer is a count", 'x = #"a"\n', 1, 5, "the program's answer 'x' is a count"),
    ("token outside the alphabet", 'alphabet "a"\nx = "b"\n', 2, 5, "not in the declared alphabet"),
    ("bare expression not last", '"a"\nx = "b"\n', 1, 1, "bare expression can only be"),
    ("conditional branches", 'x = "a" if "b" else #"a"\n', 1, 5, "different types"),
]


@pytest.mark.parametrize("name, source, line, column, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_program_errors_point_at_the_problem(name, source, line, column, message):
    with pytest.raises(ProgramError) as caught:
        crasp.parse_program(source, "prog.crasp")
    error = caught.value
    assert message in error.message
    assert (error.line, error.column) == (line, column)
    rendered = error.render()
    assert rendered.startswith(f"prog.crasp:{line}:{column}: error: ")
    caret_line = rendered.splitlines()[2]
    assert caret_line.index("^") == 4 + column - 1
    assert "expected: " in rendered or "note: " in rendered or name == "bad character"


@pytest.mark.parametrize("lines", [lines for lines in itertools.product(
    ["", "// only a comment", "#import pred", 'alphabet "a" "b"', "  \t", "\t// tab"], repeat=3)
    if sum(line.startswith("alphabet") for line in lines) <= 1])   # a second is its own error
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_program_that_defines_nothing_is_an_error_placed_after_its_last_text(lines, newline):
    """Every mix of blank lines, comments, imports and alphabets, either line ending: the
    error points just past the last character of the last line that holds any."""
    source = newline.join(lines) + newline
    with pytest.raises(ProgramError, match="defines nothing") as caught:
        crasp.parse_program(source, "prog.crasp")
    held = [index for index, line in enumerate(lines) if line.strip()]
    line = held[-1] + 1 if held else 1
    column = len(lines[held[-1]]) + 1 if held else 1
    assert (caught.value.line, caught.value.column) == (line, column)
    rendered = caught.value.render()
    assert rendered.startswith(f"prog.crasp:{line}:{column}: error: the program defines nothing")
    if held:
        shown, caret = rendered.splitlines()[1:3]
        assert shown == "    " + lines[held[-1]].expandtabs(1)
        assert caret.index("^") == 4 + column - 1


def test_unknown_input_token_names_token_and_position_with_strict_alphabet():
    program = crasp.load_program("examples/majority.crasp")
    with pytest.raises(InputError, match=r"token 'c' at position 2 is not in the alphabet"):
        crasp.evaluate(program, [list("ab"), list("abc")], strict_alphabet=True)


# ------------------------------------------------------------------ interpreter

@settings(max_examples=150, deadline=None)
@given(program_asts(max_depth=3, positional=True), st.lists(token_strings(max_length=9),
                                                             min_size=1, max_size=4))
def test_vectorized_interpreter_matches_reference(program, strings):
    evaluation = crasp.evaluate(program, strings)
    for row, tokens in enumerate(strings):
        values = evaluation.values_of(row)
        for i in range(len(tokens)):
            expected = evaluate_at(program, tokens, i)
            for name, value in expected.items():
                assert values[name][i] == value, (name, tokens, i)
        assert evaluation.accept[row] == accepts(program, tokens)


def test_empty_input_is_the_bos_position():
    program = crasp.parse_program('x = #"a" == 0 && !"a"\n')
    evaluation = crasp.evaluate(program, [[], ["a"]])
    assert evaluation.accept.tolist() == [True, False]
    assert evaluation.output.shape == (2, 1) and not evaluation.output[0].any()
    assert crasp.evaluate(program, []).accept.shape == (0,)


def test_batch_padding_does_not_change_answers():
    program = crasp.load_program("examples/dyck1.crasp")
    strings = [list("(())"), list("()"), [], list("(()))(")]
    together = crasp.evaluate(program, strings)
    for row, tokens in enumerate(strings):
        alone = crasp.evaluate(program, [tokens])
        assert together.accept[row] == alone.accept[0]
        assert (together.output[row, :len(tokens)] == alone.output[0, :len(tokens)]).all()


# ------------------------------------------------------------------ fmt

@settings(max_examples=200, deadline=None)
@given(program_asts(max_depth=4, positional=True))
def test_fmt_round_trip(program):
    text = crasp.format_program(program)
    reparsed = crasp.parse_program(text)
    assert reparsed.definitions == program.definitions
    assert crasp.format_program(reparsed) == text


def test_fmt_keeps_imports_alphabet_and_bare_answer(tmp_path):
    source = '#import pred\nalphabet "a" "b"\nx = #[pred] "a" >= 1\n"b" && x\n'
    program = crasp.parse_program(source)
    assert crasp.format_program(program) == source
    assert crasp.parse_program(crasp.format_program(program)) == program


# ------------------------------------------------------------------ depth

def test_depth_report_and_critical_path():
    program = crasp.load_program("examples/dyck1.crasp")
    report = crasp.analyze(program)
    assert report.depth == 2
    depths = {d.name: d.depth for d in report.definitions}
    assert depths == {"C_open": 1, "C_close": 1, "V": 1, "CV": 2, "M": 2, "B": 1, "D": 2}
    assert report.critical_path[:4] == ("D", "M", "CV", "V")
    assert report.unused == ()


def test_unused_definitions_do_not_count():
    program = crasp.parse_program('deep = #(#"a" > 1) > 0\nanswer = "b"\n')
    report = crasp.analyze(program)
    assert report.depth == 0 and report.unused == ("deep",)
    assert {d.name: d.depth for d in report.definitions}["deep"] == 2


def test_depth_rules_on_each_construct():
    cases = {
        '"a"': 0, "true": 0, '1 < 2': 0, '#"a" > 0': 1, '#"a" + #(#"b" > 0) > 0': 2,
        'min(#"a", 2) < max(1, #"b")': 1, '(#"a" if #(#"b" == 0) > 0 else 0) > 0': 2,
        '#!(#"a" == 0) > 0': 2,
    }
    for text, depth in cases.items():
        assert crasp.depth_of(crasp.parse_program(f"x = {text}")) == depth, text
