"""The cases of issue #10 through the command line: exit status, message, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from crasp.cli import cli


@pytest.fixture
def runner():
    return CliRunner()


def crasp(runner, *args, input=None):
    result = runner.invoke(cli, list(args), input=input)
    assert "Traceback" not in result.output and not isinstance(result.exception, RecursionError)
    return result


def write(tmp_path, text, name="p.cr"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_predicate_names_are_free_until_imported(runner, tmp_path):
    program = write(tmp_path, 'pos_even = "b"\npred4 = "a"\npred = pred4 || pos_even\n')
    result = crasp(runner, "run", program, "a b")
    assert result.exit_code == 0 and result.output == "1 a b: True\n"
    imported = write(tmp_path, '#import pred\npred = "a"\n', "q.cr")
    refused = crasp(runner, "run", imported, "a")
    assert refused.exit_code == 2 and "'pred' is the name of a predicate" in refused.output
    builtin = write(tmp_path, 'mod = "a"\n', "m.cr")
    assert "'mod' is the name of a predicate" in crasp(runner, "run", builtin, "a").output


def test_keywords_are_never_names_but_alphabet_is_one_outside_its_line(runner, tmp_path):
    for keyword in ["if", "else", "min", "max"]:
        result = crasp(runner, "run", write(tmp_path, f'{keyword} = "a"\n'), "a")
        assert result.exit_code == 2
        assert f"p.cr:1:1: error: '{keyword}' is a keyword, not a name" in result.output
    constant = crasp(runner, "run", write(tmp_path, 'true = "a"\n'), "a")
    assert constant.exit_code == 2 and "p.cr:1:6: error: unexpected '='" in constant.output
    program = write(tmp_path, 'alphabet = "a"\nx = alphabet && #"b" == 0\n')
    assert crasp(runner, "run", program, "a a").output == "1 a a: True\n"


def test_redefinition_is_an_error_that_names_the_hahn_dialect(runner, tmp_path):
    program = write(tmp_path, 'x = "a"\nx = x || "b"\ny = #x == 2\n')
    refused = crasp(runner, "run", program, "a b")
    assert refused.exit_code == 2
    assert "p.cr:2:1: error: 'x' is already defined on line 1" in refused.output
    assert "--dialect hahn" in refused.output
    accepted = crasp(runner, "run", "--dialect", "hahn", program, "a b")
    assert accepted.exit_code == 0 and accepted.output == "1 a b: True\n"


def test_a_token_outside_the_programs_literals_is_read_as_hahn_does(runner, tmp_path):
    program = write(tmp_path, 'first_is_a = #(#true == 1 && "a") > 0\n')
    result = crasp(runner, "run", program, input="b a\na b\nc\na c c\n")
    assert result.exit_code == 0
    assert result.output.splitlines() == ["1 b a: False", "2 a b: True", "3 c: False",
                                          "4 a c c: True"]
    assert crasp(runner, "run", "--dialect", "hahn", program, "ab").output == "1 ab: False\n"
    assert crasp(runner, "run", program, "ab").output == "1 ab: True\n"   # split: a b
    strict = crasp(runner, "run", "--strict-alphabet", program, "a c")
    assert strict.exit_code == 2 and "token 'c' at position 1 is not in the alphabet" in \
        strict.output


@pytest.mark.parametrize("text, ours, theirs", [
    ('V && !W || X', '(V && (!W)) || X', 'V && (!(W || X))'),
    ('x + 2*y - z > 0', '((x + (2 * y)) - z) > 0', '(x + (2 * (y - z))) > 0'),
    ('#"a" == #"b" && V', '((#"a") == (#"b")) && V', '(#"a") == (#("b" && V))'),
])
def test_precedence_warnings_show_both_readings_with_the_place(runner, tmp_path, text, ours,
                                                              theirs):
    header = 'V = "a"\nW = "b"\nX = "a" || "b"\nx = #"a"\ny = #"b"\nz = #V\n'
    program = write(tmp_path, header + f"answer = {text}\n")
    result = crasp(runner, "run", program, "a b")
    assert result.exit_code == 0
    assert "p.cr:7:10: warning: Hahn's interpreter reads 'answer' differently" in result.output
    assert f"crasp reads: {ours}\n" in result.output
    assert f"Hahn reads:  {theirs}\n" in result.output
    assert result.output.count("warning:") == 1
    formatted = crasp(runner, "fmt", program).stdout
    assert "warning:" not in crasp(runner, "run", write(tmp_path, formatted, "f.cr"), "a b").output


def test_a_file_valid_only_in_hahns_reading_gets_an_error_with_his_reading(runner, tmp_path):
    program = write(tmp_path, 'P = "a"\nQ = "b"\nc = #P && Q\nanswer = c == 0\n')
    result = crasp(runner, "depth-check", program)
    assert result.exit_code == 2
    assert "p.cr:3:5: error: '&&' needs a Boolean, but this is a count" in result.output
    assert "note: Hahn's interpreter reads this line as #(P && Q)" in result.output
    assert "--dialect hahn" in result.output
    assert crasp(runner, "depth-check", "--dialect", "hahn", program).exit_code == 0


def test_fmt_keeps_comments_and_blank_lines_and_makes_the_text_safe_for_hahn(runner, tmp_path):
    source = ('// Dyck-1, Hahn style\n\nopen = #"("   // opening brackets\nclose = #")"\n\n'
              'ok = !(open < close) && #(open < close) == 0 && open == close\n')
    program = write(tmp_path, source)
    result = crasp(runner, "fmt", program)
    assert result.exit_code == 0
    assert result.output.startswith('// Dyck-1, Hahn style\n\nopen = #"("  // opening brackets\n'
                                    'close = #")"\n\n')
    assert crasp(runner, "fmt", "--write", program).exit_code == 0
    rewritten = (tmp_path / "p.cr").read_text()
    assert rewritten == result.stdout
    again = crasp(runner, "fmt", program)
    assert "warning:" not in again.output and again.output == rewritten
    hahn = crasp(runner, "run", "--dialect", "hahn", program, "( ( ) )")
    ours = crasp(runner, "run", program, "( ( ) )")
    assert hahn.output == ours.output == "1 ( ( ) ): True\n"


def test_fmt_dialect_hahn_migrates_to_conventional_text(runner, tmp_path):
    program = write(tmp_path, '// mine\nx = "a"\nx = !x || "b"\nn = 2 * #x - 1\n'
                              'answer = n > 0\n')
    migrated = crasp(runner, "fmt", "--dialect", "hahn", program)
    assert migrated.exit_code == 0
    assert migrated.stdout == ('// mine\nx = "a"\nx_2 = !(x || "b")\nn = 2 * (#x_2 - 1)\n'
                               'answer = n > 0\n')
    assert migrated.stderr.endswith("p.cr:3: note: 'x' defined here is named 'x_2' "
                                    "(a redefinition)\n")
    converted = write(tmp_path, migrated.stdout, "m.cr")
    for word in ["a", "b a", "b b", "a b b"]:
        assert (crasp(runner, "run", "--dialect", "hahn", program, word).output
                == crasp(runner, "run", converted, word).output)


def test_byte_order_mark_stdin_and_any_file_name(runner, tmp_path):
    bom = tmp_path / "bom.cr"
    bom.write_bytes('\ufeffx = #"a" > 0\n'.encode("utf-8"))
    assert crasp(runner, "run", str(bom), "a").output == "1 a: True\n"
    named = write(tmp_path, 'x = #"a" > 0\n', "program.txt")
    assert crasp(runner, "run", named, "b").output == "1 b: False\n"
    piped = crasp(runner, "run", "-", "a b", input='x = #"b" > 0\n')
    assert piped.exit_code == 0 and piped.output == "1 a b: True\n"
    assert crasp(runner, "fmt", "-", input='x=#"b">0 // c\n').output == 'x = #"b" > 0  // c\n'
    broken = crasp(runner, "depth-check", "-", input="x = #\n")
    assert "<stdin>:1:6: error: unexpected end of the line" in broken.output
    no_tokens = crasp(runner, "run", "-", input='x = "a"\n')
    assert no_tokens.exit_code == 2 and "give the input tokens as arguments" in no_tokens.output


def test_depth_check_verify_takes_an_alphabet(runner, tmp_path):
    program = write(tmp_path, 'x = #"a" > #"b"\n')
    result = crasp(runner, "depth-check", program, "--verify", "--alphabet", "c",
                   "--max-length", "4", "--random-count", "2", "--json")
    assert result.exit_code == 0
    assert '"ok": true' in result.output and '"checked_strings": 123' in result.output


def test_compile_reads_the_hahn_dialect(runner, tmp_path):
    program = write(tmp_path, 'x = #"a"\nx = #"b" - x\nanswer = 2 * x + 1 > 0\n')
    result = crasp(runner, "compile", "--dialect", "hahn", program, "-o",
                   str(tmp_path / "model"))
    assert result.exit_code == 0, result.output
    for word in ["b", "a b b", "a", "c a b"]:
        assert (crasp(runner, "run", "--model", str(tmp_path / "model"), word).output
                == crasp(runner, "run", "--dialect", "hahn", program, word).output)
    strict = crasp(runner, "run", "--model", str(tmp_path / "model"), "--strict-alphabet", "a c")
    assert strict.exit_code == 2 and "token 'c' at position 1 is not in the alphabet" in \
        strict.output


@pytest.mark.parametrize("text, place, message", [
    ("x = a b", "1:7", "unexpected 'b' (read as in Hahn's grammar)"),
    ("x = (a", "1:7", "unexpected end of the line (read as in Hahn's grammar)"),
    ('x = "a" < 3', "1:9", "unexpected '<'"),
    ("x = #[foo] a", "1:7", "unknown positional relation 'foo'"),
    ("x = " + "!" * 2000 + '"a"', "1:", "nested too deeply for Hahn's parser"),
])
def test_hahn_dialect_errors_have_a_place_and_no_traceback(runner, tmp_path, text, place,
                                                          message):
    result = crasp(runner, "run", "--dialect", "hahn", write(tmp_path, text + "\n"), "a")
    assert result.exit_code == 2
    assert f"p.cr:{place}" in result.output and message in result.output


EDGES = json.loads(Path("tests/fixtures/hahn/edges.json").read_text())


@pytest.mark.parametrize("fixture", EDGES["programs"], ids=range(len(EDGES["programs"])))
def test_run_dialect_hahn_prints_what_his_command_line_prints(runner, tmp_path, fixture):
    """Token literals that equal no input token ("", "a b", "\\t"; they never match) and a
    count as the last line (he prints its value), against his interpreter's recorded output
    (scripts/hahn_fixtures.py --edges)."""
    program = write(tmp_path, fixture["program"])
    result = crasp(runner, "run", "--dialect", "hahn", program, input=EDGES["stdin"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == fixture["stdout"]
    conventional = crasp(runner, "run", program, input=EDGES["stdin"])
    assert conventional.exit_code == 2 and "Traceback" not in conventional.output


@pytest.mark.parametrize("literal", ['""', '" "', '"a b"', '"\t"', '"\u2028"', '"a\u00a0b"'])
def test_fmt_dialect_hahn_writes_a_literal_no_input_equals_as_false_and_says_so(
        runner, tmp_path, literal):
    program = write(tmp_path, f'x = "a" || {literal}\ny = !{literal} && x\n')
    result = crasp(runner, "fmt", "--dialect", "hahn", program)
    assert result.exit_code == 0, result.output
    assert result.stdout == 'x = "a" || false\ny = !(false && x)\n'
    assert result.stderr.count("written false") == 2
    assert crasp(runner, "run", write(tmp_path, result.stdout, "m.crasp"), "a").exit_code == 0


def test_count_answers_are_read_only_by_run_dialect_hahn(runner, tmp_path):
    program = write(tmp_path, 'c = #"a" - 2\n')
    assert crasp(runner, "run", "--dialect", "hahn", program, "a a a").output == "1 a a a: 1\n"
    for command in (["fmt", "--dialect", "hahn"], ["depth-check", "--dialect", "hahn"],
                    ["run"], ["compile", "--dialect", "hahn", "-o", str(tmp_path / "m")]):
        refused = crasp(runner, *command, program)
        assert refused.exit_code == 2 and "is a count" in refused.output, command
