"""Bad and extreme programs: exact integers against plain Python arithmetic, nesting and chains
far past Python's recursion limit in the passes that must not recurse, and a seeded generator
of mutated programs whose every run, depth-check and compile ends in exit 0 or 2, never a
traceback."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp import syntax
from crasp.cli import cli
from crasp.compiler import compile_program, execute
from reference import evaluate_at

BIG = 2 ** 63 - 1


def run(program_text: str, tokens: str, tmp_path, *extra: str):
    path = tmp_path / "p.crasp"
    path.write_text(program_text)
    return CliRunner().invoke(cli, ["run", str(path), tokens, *extra])


# ---------------------------------------------------------------- exact integers

@pytest.mark.parametrize("text", [
    'x = 9223372036854775807*#"a" > 0',
    'x = #"a" - 9223372036854775807 - 10 < 0',
    'x = #"a" + 170141183460469231731687303715884105727 > 170141183460469231731687303715884105727',
    'x = -9223372036854775808 - #"a" < -9223372036854775808',
])
def test_the_issues_overflow_cases_answer_true(tmp_path, text):
    result = run(text + "\n", "a a", tmp_path, "--alphabet", "a b")
    assert result.exit_code == 0, result.output
    assert result.output == "1 a a: True\n"


def test_coefficients_times_long_counts_are_exact_in_the_interpreter_and_the_model():
    program = crasp.parse_program('alphabet "a" "b"\n'
                                  'x = 1125899906842624*#"a" > 1125899906842624*#"b"\n')
    inputs = [["a"] * 8193, ["a"] * 8193 + ["b"] * 8193, ["b"] + ["a"] * 8193]
    expected = [True, False, True]
    assert crasp.evaluate(program, inputs).accept.tolist() == expected
    assert execute(compile_program(program), inputs).accept.tolist() == expected


def test_a_5000_digit_literal_is_read_and_exact(tmp_path):
    huge = 10 ** 5000
    result = run(f'x = #"a" - {huge} < -{huge - 3}\n', "a a a", tmp_path, "--alphabet", "a")
    assert result.exit_code == 0, result.output
    assert result.output == "1 a a a: False\n"   # 3 - 10^5000 < 3 - 10^5000 is false
    shorter = run(f'x = #"a" - {huge} < -{huge - 4}\n', "a a a", tmp_path, "--alphabet", "a")
    assert shorter.output == "1 a a a: True\n"


def test_a_literal_past_the_limit_is_refused_at_its_position(tmp_path):
    result = run('x = #"a" < ' + "9" * 100_001 + "\n", "a", tmp_path, "--alphabet", "a")
    assert result.exit_code == 2
    assert "p.crasp:1:12: error: an integer literal of 100,001 digits" in result.output


def test_compiling_a_program_that_needs_more_than_53_bits_names_the_constant(tmp_path):
    path = tmp_path / "wide.crasp"
    path.write_text('x = 9007199254740993*#"a" > 0\n')
    result = CliRunner().invoke(cli, ["compile", str(path), "-o", str(tmp_path / "m"),
                                      "--alphabet", "a"])
    assert result.exit_code == 2
    assert "9007199254740993" in result.output and "53" in result.output
    assert "config.json" not in result.output and "Traceback" not in result.output
    assert not (tmp_path / "m").exists()


SMALL = st.integers(-3, 3)
HUGE = st.integers(-(2 ** 200), 2 ** 200) | st.sampled_from([BIG, -BIG - 1, BIG + 1, 2 ** 62])


@st.composite
def wide_integer_programs(draw):
    """An integer expression mixing counts with literals near and past 64 bits."""
    count = lambda: syntax.Count(syntax.TokenTest(draw(st.sampled_from("ab"))))  # noqa: E731
    expr: syntax.Expr = count()
    for _ in range(draw(st.integers(1, 6))):
        operand = draw(st.sampled_from(["count", "const"]))
        right = count() if operand == "count" else syntax.IntConst(draw(HUGE))
        kind = draw(st.sampled_from([syntax.Add, syntax.Sub, syntax.Min, syntax.Max, "scale"]))
        expr = syntax.Scale(draw(HUGE | SMALL), expr) if kind == "scale" else kind(expr, right)
    threshold = syntax.IntConst(draw(HUGE))
    answer = syntax.Compare(draw(st.sampled_from(syntax.COMPARISON_OPERATORS)), expr, threshold)
    return syntax.Program((syntax.Definition("n", expr, syntax.COUNT),
                           syntax.Definition("x", answer, syntax.BOOL)), ("a", "b"))


@settings(max_examples=150, deadline=None)
@given(wide_integer_programs(), st.lists(st.sampled_from("ab"), max_size=12))
def test_the_interpreter_matches_python_integers(program, tokens):
    evaluation = crasp.evaluate(program, [tokens])
    for i in range(-1, len(tokens)):
        expected = evaluate_at(program, tokens, i)
        assert int(evaluation.columns["n"][0, i + 1]) == expected["n"]
        assert bool(evaluation.columns["x"][0, i + 1]) == expected["x"]


# ---------------------------------------------------------------- no recursion limits

DEEP = 10_000


def deep_programs() -> dict[str, syntax.Program]:
    a = syntax.TokenTest("a")
    count = syntax.Count(a)
    nots, negations, sums, mins, ifs, ands = a, count, count, count, count, a
    for i in range(DEEP):
        nots = syntax.Not(nots)
        negations = syntax.Scale(-1, negations)
        sums = syntax.Add(sums, count)
        mins = syntax.Min(mins, syntax.IntConst(i))
        ifs = syntax.Conditional(a, ifs, syntax.IntConst(i))
        ands = syntax.And(ands, a)
    zero = syntax.IntConst(0)
    # a source text stands in for the program's text (hashed by the compiler), which a
    # printer would need a deep recursion to produce
    return {name: syntax.Program((syntax.Definition("x", expr, syntax.BOOL),), ("a", "b"),
                                 source=name)
            for name, expr in {
                "10,000 nested !": nots,
                "10,000 nested -": syntax.Compare(">", negations, zero),
                "10,000 + operands": syntax.Compare(">", sums, zero),
                "10,000 nested min": syntax.Compare(">", mins, zero),
                "10,000 nested if": syntax.Compare(">", ifs, zero),
                "10,000 && operands": ands,
            }.items()}


@pytest.fixture(scope="module")
def deep():
    return deep_programs()


@pytest.mark.parametrize("name", list(deep_programs()))
def test_depth_and_interpretation_have_no_recursion_limit(deep, name):
    program = deep[name]
    tokens = ["a", "b", "a"]
    assert crasp.analyze(program).depth == 1 - ("!" in name or "&&" in name)
    accept = crasp.evaluate(program, [tokens]).accept[0]
    if "+" in name:  # 10,001 counts of a, 2 a's
        assert accept
    elif "!" in name:  # an even number of negations of "a"
        assert accept
    elif "&&" in name:
        assert accept
    elif "-" in name:  # (-1)^10000 * 2 > 0
        assert accept
    elif "min" in name:  # min(2, 0, 1, ...) = 0
        assert not accept
    else:  # if a then ... then #a: 2 > 0
        assert accept


@pytest.mark.parametrize("name", deep_programs())
def test_compiling_a_deep_program_agrees_with_the_interpreter(deep, name):
    program = deep[name]
    if "min" in name:  # every min splits the count: more pieces than the compiler allows
        with pytest.raises(crasp.ProgramError, match="4097 linear pieces"):
            compile_program(program)
        return
    if "if" in name:  # n nested if-else build about n^2 / 2 guarded branches: refused early
        with pytest.raises(crasp.ProgramError, match="more than 65536 guarded branches"):
            compile_program(program)
        return
    tokens = [["a", "b", "a"], ["b", "b"], []]
    assert execute(compile_program(program), tokens).accept.tolist() == \
        crasp.evaluate(program, tokens).accept.tolist()


def test_nesting_past_the_deep_stack_is_refused_clearly():
    expr = syntax.TokenTest("a")
    for _ in range(100_000):
        expr = syntax.Not(expr)
    program = syntax.Program((syntax.Definition("x", expr, syntax.BOOL),), ("a",), source="x")
    with pytest.raises(crasp.ProgramError, match="'x' nests its expression too deeply"):
        compile_program(program)


def test_a_50000_definition_chain_is_analysed_and_evaluated():
    definitions = [syntax.Definition("x0", syntax.Count(syntax.TokenTest("a")), syntax.COUNT)]
    for i in range(1, 50_000):
        definitions.append(syntax.Definition(
            f"x{i}", syntax.Add(syntax.Ref(f"x{i - 1}"), syntax.IntConst(1)), syntax.COUNT))
    definitions.append(syntax.Definition(
        "y", syntax.Compare(">", syntax.Ref("x49999"), syntax.IntConst(50_000)), syntax.BOOL))
    program = syntax.Program(tuple(definitions), ("a",))
    report = crasp.analyze(program)
    assert report.depth == 1 and len(report.critical_path) == 50_001
    assert crasp.evaluate(program, [["a", "a"]]).accept.tolist() == [True]


# ---------------------------------------------------------------- mutated programs

KEYWORDS = ["alphabet", "import", "if", "else", "min", "max", "true", "false", "pos_even",
            "mod", "and", "or", "not"]


def mutations(rng: random.Random, source: str) -> str:
    choice = rng.randrange(9)
    if choice == 0:  # deep nesting
        depth = rng.choice([50, 300, 2000])
        op = rng.choice(["!", "-", "#", "min("])
        inner = '#"a" > 0' if op != "min(" else '#"a"'
        if op == "min(":
            return f"x = {'min(' * depth}{inner}{', 1)' * depth} > 0\n"
        if op == "#":
            return f"x = {'#(' * depth}\"a\"{' > 0)' * depth} > 0\n"
        return f"x = {op * depth}({inner})\n" if op == "!" else f"x = {op * depth}#\"a\" > 0\n"
    if choice == 1:  # a long chain
        n = rng.choice([100, 1000, 3000])
        return "x = " + rng.choice([" + ", " - "]).join(['#"a"'] * n) + " > 0\n"
    if choice == 2:  # a huge literal
        digits = rng.choice([19, 20, 40, 400, 5000])
        return f'x = {rng.choice(["", "-"])}{"9" * digits} * #"a" > #"b"\n'
    if choice == 3:  # a keyword as a name
        return f'{rng.choice(KEYWORDS)} = #"a" > 0\n'
    if choice == 4:  # binary garbage
        return rng.randbytes(rng.randrange(1, 200)).decode("latin-1")
    lines = source.splitlines()
    position = rng.randrange(len(source) + 1)
    if choice == 5:  # delete a slice
        return source[:position] + source[position + rng.randrange(1, 20):]
    if choice == 6:  # insert punctuation
        return source[:position] + rng.choice("()#!<>=+-*,{}\"'&|") + source[position:]
    if choice == 7:  # duplicate or drop a line
        index = rng.randrange(len(lines))
        lines.insert(index, lines[index]) if rng.random() < 0.5 else lines.pop(index)
        return "\n".join(lines) + "\n"
    return source.replace(rng.choice(["<", "#", "==", "&&", "C_open"]), rng.choice(
        ["<=", "#!", "=", "||", "C_close", "1", ""]), 1)


SEEDS = range(12)


@pytest.mark.parametrize("seed", SEEDS)
def test_mutated_programs_end_in_exit_0_or_2_without_a_traceback(tmp_path, seed):
    rng = random.Random(seed)
    base = crasp.example("dyck1")
    source = open(base, encoding="utf-8").read()
    runner = CliRunner()
    for case in range(6):
        path = tmp_path / f"m{case}.crasp"
        path.write_bytes(mutations(rng, source).encode("utf-8", "surrogateescape"))
        for arguments in (["run", str(path), "( ) (", "--alphabet", "( ) a b"],
                          ["depth-check", str(path)],
                          ["compile", str(path), "-o", str(tmp_path / f"out{case}"),
                           "--alphabet", "( ) a b"]):
            result = runner.invoke(cli, arguments)
            assert result.exit_code in (0, 2), (arguments, result.output)
            assert "Traceback" not in result.output, (path.read_text("latin-1")[:200],
                                                      result.output)
            if result.exception is not None:
                assert isinstance(result.exception, SystemExit), repr(result.exception)


def test_errors_on_long_lines_show_a_window_around_the_column():
    from crasp.errors import SHOWN_LINE, ProgramError
    from crasp.syntax import Span
    line = "x = " + " + ".join(f"c{i}" for i in range(5000)) + " > 0"
    column = line.index("c2500") + 1
    error = ProgramError("unknown name", source=line + "\n", filename="long.crasp",
                         span=Span(1, column, 1, column + 5))
    shown, carets = error.render().splitlines()[1:3]
    assert len(shown) <= SHOWN_LINE + 4 + 6 and shown.strip().startswith("...")
    assert shown[carets.index("^"):carets.index("^") + 5] == "c2500"
    short = ProgramError("bad", source="x = y\n", filename="s.crasp", span=Span(1, 5, 1, 6))
    assert short.render().splitlines()[1:3] == ["    x = y", "        ^"]


NOT_UTF8 = [chr(0xDC80 + byte - 0x80) for byte in (0x80, 0xC3, 0xFF)]   # how Python reads bytes


@pytest.mark.parametrize("bad", NOT_UTF8)
@pytest.mark.parametrize("where", ["input tokens", "input tokens with --trace",
                                   "run --alphabet", "depth-check --alphabet",
                                   "compile --alphabet"])
def test_a_command_line_value_that_is_not_utf8_is_one_message(tmp_path, where, bad):
    """A byte that is not UTF-8 in a token or --alphabet argument, alone or inside a word,
    is one message naming the argument, exit status 2, no traceback (with --trace it was a
    UnicodeEncodeError; compile --alphabet made a model that export could not write)."""
    program = "examples/dyck1.crasp"
    arguments = {
        "input tokens": ["run", program, "(", f"({bad}"],
        "input tokens with --trace": ["run", program, "--trace", str(tmp_path / "t.txt"), bad],
        "run --alphabet": ["run", program, "--alphabet", f"x {bad}", "("],
        "depth-check --alphabet": ["depth-check", program, "--alphabet", bad],
        "compile --alphabet": ["compile", program, "--alphabet", f"a{bad}b", "-o",
                               str(tmp_path / "m")],
    }[where]
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 2, result.output
    assert "not UTF-8 text" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "m").exists() and not (tmp_path / "t.txt").exists()


@pytest.mark.parametrize("from_stdin", [False, True])
@given(prefix=st.text(alphabet=st.sampled_from(list('ab "#=()é\n')), max_size=30),
       bad=st.sampled_from([b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80"]))
@settings(max_examples=30, deadline=None, derandomize=True)
def test_a_program_that_is_not_utf8_points_at_the_first_bad_byte(from_stdin, prefix, bad):
    """Against a plain reference: the line is the count of newlines before the first byte
    that does not decode, plus one; the column counts the characters before it on its line;
    exit status 2, the caret line, no traceback; from a file or standard input alike."""
    import tempfile
    from pathlib import Path
    data = prefix.encode("utf-8") + bad + b" = true\n"
    start = len(prefix.encode("utf-8"))
    line = prefix.count("\n") + 1
    column = len(prefix.rsplit("\n", 1)[-1]) + 1
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "p.crasp"
        path.write_bytes(data)
        arguments = ["run", "-" if from_stdin else str(path), "a"]
        result = CliRunner().invoke(cli, arguments, input=data if from_stdin else None)
    name = "<stdin>" if from_stdin else str(path)
    assert result.exit_code == 2, result.output
    assert f"{name}:{line}:{column}: error: byte {start + 1} " in result.output, result.output
    assert "^" in result.output and "Traceback" not in result.output


def test_an_empty_trace_name_is_refused_not_ignored():
    result = CliRunner().invoke(cli, ["run", "examples/dyck1.crasp", "--trace", "", "()"])
    assert result.exit_code == 2 and "--trace" in result.output and "file name" in result.output
