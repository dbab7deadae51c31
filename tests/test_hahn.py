"""Hahn's dialect against his interpreter's own answers, warnings by construction, and a fmt
that is safe for both parsers.

tests/fixtures/hahn/programs.json holds programs made by scripts/hahn_fixtures.py and the
answers of Hahn's interpreter (m-hahn/c-rasp, run during development) at every position of
every string over a, b, c up to length 4.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp import canonical, hahn_parse, syntax
from crasp.errors import ProgramError
from crasp.hahn import precedence_warnings
from strategies import program_asts, token_strings

FIXTURES = json.loads(Path("tests/fixtures/hahn/programs.json").read_text())
INPUTS = [line.split() for line in FIXTURES["inputs"]]
PROGRAMS = [fixture["program"] for fixture in FIXTURES["programs"]]
EXAMPLES = sorted(Path("examples").glob("*.crasp"))


def answers(program: crasp.Program, inputs=INPUTS) -> list[str]:
    output = crasp.evaluate(program, inputs).output
    return ["".join("1" if v else "0" for v in output[row, :len(tokens)])
            for row, tokens in enumerate(inputs)]


def test_fixtures_cover_every_operator_and_both_outcomes():
    text = "\n".join(program.splitlines()[-1] for program in PROGRAMS)
    for operator in ["&&", "||", "!", "#", "#[pred]", "+", "-", "*", " if ", "min(", "max(",
                     "<", ">", "==", "!=", "<=", ">=", "("]:
        assert operator in text
    assert len(PROGRAMS) >= 200


def test_hahn_dialect_gives_his_answers_at_every_position_of_every_fixture():
    for fixture in FIXTURES["programs"]:
        program = crasp.parse_program(fixture["program"], dialect="hahn")
        assert answers(program) == fixture["outputs"], fixture["program"]


def test_default_dialect_warns_exactly_where_the_two_readings_answer_differently():
    warned = differ = refused = 0
    for fixture in FIXTURES["programs"]:
        try:
            program = crasp.parse_program(fixture["program"])
        except ProgramError as error:   # conventionally ill-formed, well formed as Hahn reads it
            assert "--dialect hahn" in error.render() and "reads this line as" in error.render()
            refused += 1
            continue
        differs = answers(program) != fixture["outputs"]
        assert bool(precedence_warnings(program)) == differs, fixture["program"]
        warned += differs
        differ += not differs
    assert warned >= 20 and differ >= 100 and refused >= 10


def _same_under_both_parsers(formatted: str, original: crasp.Program) -> None:
    conventional = crasp.parse_program(formatted)
    hahn_reading = crasp.parse_program(formatted, dialect="hahn") if "alphabet" not in formatted \
        and "mod(" not in formatted else conventional
    assert precedence_warnings(conventional) == []
    for program in (conventional, hahn_reading):
        ours = {d.name: d.expr for d in program.definitions}
        for definition in original.definitions:
            assert canonical.same_meaning(definition.expr, ours[definition.name]), formatted


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_fmt_of_every_example_means_the_same_to_both_parsers_and_is_a_fixed_point(path):
    program = crasp.load_program(path)
    formatted = crasp.format_source(program)
    _same_under_both_parsers(formatted, program)
    assert crasp.format_source(crasp.parse_program(formatted)) == formatted
    assert formatted.count("//") == path.read_text().count("//")   # comments kept


def test_fmt_of_every_fixture_means_the_same_to_both_parsers_and_is_a_fixed_point():
    for fixture in FIXTURES["programs"]:
        try:
            program = crasp.parse_program(fixture["program"])
        except ProgramError:
            continue
        formatted = crasp.format_source(program)
        _same_under_both_parsers(formatted, program)
        assert crasp.format_source(crasp.parse_program(formatted)) == formatted


def test_fmt_dialect_hahn_migrates_every_fixture_to_conventional_text_with_his_answers():
    for fixture in FIXTURES["programs"]:
        migrated = crasp.format_source(crasp.parse_program(fixture["program"], dialect="hahn"))
        program = crasp.parse_program(migrated)
        assert answers(program) == fixture["outputs"], migrated
        assert precedence_warnings(program) == []


@settings(max_examples=60, deadline=None)
@given(program_asts(max_depth=3, positional=True), st.lists(token_strings(), max_size=6))
def test_fmt_output_is_read_alike_by_hahns_parser(program, inputs):
    formatted = crasp.format_program(program)
    if "alphabet" in formatted or "mod(" in formatted or "offset(" in formatted \
            or "-" in formatted.replace(" - ", ""):
        return   # crasp's extensions: no Hahn reading to compare with
    hahn_program = crasp.parse_program(formatted, dialect="hahn", extra_alphabet=program.alphabet)
    ours = crasp.evaluate(program, inputs)
    theirs = crasp.evaluate(hahn_program, inputs)
    assert np.array_equal(ours.output, theirs.output) and np.array_equal(ours.accept,
                                                                         theirs.accept)


# ------------------------------------------------------------------ Hahn's parser itself

@pytest.mark.parametrize("text, reading", [
    ("V && !W || X", "V && (!(W || X))"),
    ("x + 2*y - z > 0", "(x + (2 * (y - z))) > 0"),
    ('#"a" == #"b" && P', '(#"a") == (#("b" && P))'),
    ("#P && Q", "#(P && Q)"),
    ("#y < 3", "(#y) < 3"),
    ("a - b + c > 0", "(a - (b + c)) > 0"),
    ("(a if P else b if Q else c) > 0", "((a if P else b) if Q else c) > 0"),
    ("c < #P && Q", "c < (#(P && Q))"),
    ("!P == Q", "!(P == Q)"),
    ('"a" == 1', None),
])
def test_hahns_reading_of_the_issues_cases(text, reading):
    from crasp.fmt import format_parenthesized

    tokens = hahn_parse.tokenize(f"v = {text}\n", "<t>")[0]
    if reading is None:
        with pytest.raises(ProgramError, match="Hahn's grammar"):
            hahn_parse.parse_statement_tokens(tokens, f"v = {text}\n", "<t>")
        return
    statement = hahn_parse.parse_statement_tokens(tokens, f"v = {text}\n", "<t>")
    assert format_parenthesized(statement.expr) == reading


def test_redefinition_and_names_in_hahns_dialect():
    source = ('#import pos_even\npred = "a"\nx = pred && pos_even\npos_even = !pred\n'
              'x = x || pos_even\nalphabet = x\n')
    program = crasp.parse_program(source, dialect="hahn")
    assert [d.name for d in program.definitions] == ["pred", "x", "pos_even_2", "x_2",
                                                     "alphabet"]
    assert crasp.parse_program(crasp.format_source(program)).definitions == program.definitions
    # position 0 is even: x is a at 0; pos_even is now !a; x_2 = x || !a
    assert answers(program, [["a"], ["b"], ["a", "a"], ["b", "a"]]) == ["1", "1", "10", "10"]
DEEP = {
    "&& chain": " && ".join(['"a"'] * 10_000),
    "+ chain": " + ".join(['#"a"'] * 10_000) + " > 0",
    "! nesting": "!" * 10_000 + '"a"',
    "- nesting": "-" * 10_000 + '#"a" > 0',
    "# nesting": "#(" * 10_000 + '"a"' + ") > 0" * 10_000,
    "min nesting": 'min(#"a", ' * 10_000 + "1" + ")" * 10_000 + " > 0",
    "if nesting": '(#"a" if "a" else ' * 10_000 + "1" + ")" * 10_000 + " > 0",
}


@pytest.mark.parametrize("name", DEEP)
def test_deep_programs_are_read_formatted_and_compared_without_recursion(name):
    program = crasp.parse_program(f"x = {DEEP[name]}\n")
    assert program.answer.type == "bool"
    precedence_warnings(program)
    formatted = crasp.format_source(program)
    again = crasp.parse_program(formatted)
    assert syntax.same_structure(again.answer.expr, program.answer.expr)
    assert crasp.format_source(again) == formatted


@pytest.mark.parametrize("name", DEEP)
def test_deep_programs_in_hahns_dialect_are_read_or_refused_clearly(name):
    try:
        program = crasp.parse_program(f"x = {DEEP[name]}\n", dialect="hahn")
    except ProgramError as error:
        assert "nested too deeply for Hahn's parser" in str(error) or "-" in name
    else:
        assert name.endswith("chain") and program.answer.type == "bool"


# ------------------------------------------------------------------ compiled models

def test_compiled_models_answer_on_tokens_outside_the_alphabet_as_the_interpreter_does():
    import random

    from crasp.compiler import compile_program, execute

    rng = random.Random(0)
    for path in EXAMPLES:
        program = crasp.load_program(path)
        try:
            model = compile_program(program)
        except ProgramError:   # positional predicates: not compilable
            continue
        symbols = [*program.alphabet, "z", "other"]
        strings = [[rng.choice(symbols) for _ in range(rng.randint(0, 12))] for _ in range(200)]
        got, expected = execute(model, strings), crasp.evaluate(program, strings)
        assert np.array_equal(got.output, expected.output), path
        assert np.array_equal(got.accept, expected.accept), path


def test_a_version_1_model_still_loads_and_refuses_a_token_outside_its_vocabulary(tmp_path):
    from crasp.compiler import compile_program, execute, load_model
    from crasp.compiler.model_format import CompiledModel
    from crasp.errors import InputError

    model = compile_program(crasp.load_program("examples/majority.crasp"))
    config = {key: value for key, value in model.config.items() if key != "other_id"}
    # a version 1 model has no embedding row for tokens outside the vocabulary
    tensors = dict(model.tensors, embed=model.tensors["embed"][:-1])
    CompiledModel({**config, "version": 1}, tensors).save(tmp_path / "v1")
    old = load_model(tmp_path / "v1")
    assert execute(old, [["a", "b", "a"]]).accept.tolist() == [True]
    with pytest.raises(InputError, match="token 'z' at position 1"):
        execute(old, [["a", "z"]])


# ------------------------------------------------------------------ canonical forms

def _boolean_formulas():
    leaves = st.sampled_from(['"a"', '"b"', "true", "false"])
    return st.recursive(leaves, lambda inner: st.one_of(
        inner.map(lambda p: f"!({p})"),
        st.tuples(inner, inner).map(lambda pq: f"({pq[0]}) && ({pq[1]})"),
        st.tuples(inner, inner).map(lambda pq: f"({pq[0]}) || ({pq[1]})")), max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(_boolean_formulas(), _boolean_formulas())
def test_canonical_forms_decide_token_formulas_exactly(first, second):
    """Equal forms iff equal values on every one-token input (a, b, and a token in neither)."""
    program = crasp.parse_program(f"p = {first}\nq = {second}\n", extra_alphabet=("c",))
    values = crasp.evaluate(program, [["a"], ["b"], ["c"]]).trace
    agree = np.array_equal(values["p"], values["q"])
    p, q = (d.expr for d in program.definitions)
    assert canonical.same_meaning(p, q) == agree


@pytest.mark.parametrize("first, second, same", [
    ('#"a" - #"b" + 0 > 1', '#"a" > #"b" + 1', True),
    ('!(#"a" < #"b")', '#"a" >= #"b"', True),
    ('#"a" != 2', '!(2 == #"a")', True),
    ('#[pred] "a" < 3', "true", True),
    ('min(#"a", #"b") > 0', 'min(#"b", #"a") > 0', True),
    ('#"a" - #"b" + 1 > 0', '#"a" - (#"b" + 1) > 0', False),
    ('2 * #"a" - 1 > 0', '2 * (#"a" - 1) > 0', False),
])
def test_canonical_forms_fold_arithmetic_and_comparisons(first, second, same):
    program = crasp.parse_program(f'#import pred\np = {first}\nq = {second}\n')
    p, q = (d.expr for d in program.definitions)
    assert canonical.same_meaning(p, q) == same


# ------------------------------------------------------------------ lines with one reading

def _statements_and_expressions(source: str):
    try:
        parsed = crasp.parse(source)
    except ProgramError:
        return   # 35 fixtures are syntax errors conventionally
    ours = {s.span.line: s.expr for s in parsed.statements if s.expr is not None}
    for tokens in hahn_parse.tokenize(source, "<fixture>"):
        assignment = len(tokens) > 2 and tokens[0].kind == "VARIABLE" and tokens[1].kind == "="
        yield ours.get(tokens[0].span.line), tokens[2:] if assignment else tokens


@pytest.mark.parametrize("text, one", [
    ('x + 1', True), ('x - #"a"', True), ('#!"a"', True), ('c < #P', True), ('P', True),
    ('!P || Q', False), ('#y < 3', False), ('a - b + c > 0', False), ('(a)', False),
    ('#"a" == #"b" && P', False), ('min(a, b)', False), ('a if P else b', False)])
def test_has_one_reading_on_the_issues_cases(text, one):
    from crasp.hahn import has_one_reading
    assert has_one_reading(hahn_parse.tokenize(text, "<case>")[0]) is one


def test_lines_with_one_reading_are_read_alike_by_both_parsers():
    """hahn_readings skips the lines that has_one_reading accepts; on every line of every
    fixture and example where it does, Hahn's parser gives crasp's tree."""
    from crasp.hahn import has_one_reading
    checked = 0
    for source in PROGRAMS + [path.read_text() for path in EXAMPLES]:
        for ours, tokens in _statements_and_expressions(source):
            if ours is None or not has_one_reading(tokens):
                continue
            theirs = hahn_parse.parse_expression_tokens(tokens, source, "<fixture>")
            assert syntax.same_structure(ours, theirs), source
            checked += 1
    assert checked > 100


@settings(max_examples=200, deadline=None)
@given(program_asts(max_depth=2))
def test_fmt_skips_the_read_back_check_only_where_it_cannot_fail(program):
    from crasp.fmt import _reads_back, format_expr, has_one_reading
    for definition in program.definitions:
        if has_one_reading(definition.expr):
            assert _reads_back(definition.expr, format_expr(definition.expr)), definition


@pytest.mark.parametrize("text, one", [
    ('x = y + 1', True), ('x = y - #"a"', True), ('x = #!"a"', True), ('x = y < #"a"', True),
    ('x = #"a" - #"b"', False), ('x = y + 1 + 2', False), ('x = y - -1', False),
    ('x = !y || z', False), ('x = 2 * y', False), ('x = #[offset(1)] "a"', False)])
def test_fmts_one_reading_shapes(text, one):
    from crasp.fmt import has_one_reading
    expr = crasp.parse(text + "\n").statements[0].expr
    assert has_one_reading(expr) is one
