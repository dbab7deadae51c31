"""``crasp equiv`` and ``crasp check`` through click's CliRunner: verdicts, exit statuses, JSON,
and every error path (exit status 2, one message, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.verify import sides


def run(*args, input=None):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    texts = {
        "majority.crasp": 'majority = #"a" > #"b"\n',
        "twice.crasp": 'm = 2 * #"a" > #true\n',
        "bad.crasp": 'x = #"a" >\n',
        "count.crasp": 'x = #"a"\n',
        "short.crasp": 'x = #"a" < 13\n',
        "true.crasp": 'x = true\n',
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_equivalent_up_to_n_exits_0(files):
    result = run("equiv", "majority.crasp", "twice.crasp", "--alphabet", "a b",
                 "--max-length", "30")
    assert result.exit_code == 0, result.output
    assert "equivalent for every string of length ≤ 30" in result.output
    assert "method: z3" in result.output


def test_a_counterexample_exits_1_with_the_string_position_answers_and_definitions(files):
    result = run("equiv", "majority.crasp", "twice.crasp")
    assert result.exit_code == 1
    assert "shortest counterexample" in result.output and "(length 2)" in result.output
    assert "at its last position 1" in result.output
    assert "A majority.crasp answers True" in result.output
    assert "B twice.crasp answers False" in result.output
    assert '"?" stands for every token no program mentions' in result.output


def test_json_has_the_documented_keys(files):
    result = run("equiv", "short.crasp", "true.crasp", "--json", "--alphabet", "a")
    assert result.exit_code == 1
    verdict = json.loads(result.output)
    assert {"question", "programs", "result", "max_length", "alphabet", "foreign_token",
            "method", "counterexample", "shortest", "induction", "seconds"} <= set(verdict)
    assert verdict["result"] == "counterexample" and verdict["shortest"] is True
    example = verdict["counterexample"]
    assert example["tokens"] == ["a"] * 13 and example["position"] == 12
    assert example["answers"] == [False, True]


def test_method_enumerate_and_auto_say_which_was_used(files):
    small = run("equiv", "majority.crasp", "majority.crasp", "--max-length", "4", "--json")
    assert json.loads(small.output)["method"] == "enumeration"
    forced = run("equiv", "majority.crasp", "majority.crasp", "--max-length", "4",
                 "--method", "smt", "--json")
    assert json.loads(forced.output)["method"] == "smt"


def test_unbounded_proved_counterexample_and_unknown(files):
    proved = run("equiv", "majority.crasp", "twice.crasp", "--alphabet", "a b", "--unbounded")
    assert proved.exit_code == 0 and proved.output.startswith("proved:")
    beyond = run("equiv", "short.crasp", "true.crasp", "--max-length", "5", "--unbounded",
                 "--json")
    verdict = json.loads(beyond.output)
    assert beyond.exit_code == 1 and verdict["counterexample"]["length"] == 13
    # it rests on X <= #"b" and 13X <= #"a" together, a coefficient beyond the observed
    # slopes' 12 that the comparison states (crasp/verify/sides.py); one beyond
    # sides.COEFFICIENT_LIMIT is not read (nor one behind a max: tests/test_verify_unbounded.py's
    # UNKNOWN)
    (files / "treize.crasp").write_text('x = #(#"a" == 13 * #"b") <= #"b"\n')
    treize = run("equiv", "treize.crasp", "true.crasp", "--alphabet", "a b", "--unbounded")
    assert treize.exit_code == 0 and treize.output.startswith("proved:")
    (files / "beyond.crasp").write_text('x = #(#"a" == 70000 * #"b") <= #"b"\n')
    unknown = run("equiv", "beyond.crasp", "true.crasp", "--alphabet", "a b", "--unbounded")
    assert unknown.exit_code == 3 and unknown.output.startswith("unknown:")
    # with 7, the edge 7X <= #"a" of the samples' hull proves it
    (files / "sept.crasp").write_text('x = #(#"a" == 7 * #"b") <= #"b"\n')
    sept = run("equiv", "sept.crasp", "true.crasp", "--alphabet", "a b", "--unbounded")
    assert sept.exit_code == 0 and sept.output.startswith("proved:")
    # three columns: X <= #"a" with X <= #"b" + #"c", a sum of tokens
    (files / "sum.crasp").write_text('x = #(#"a" == #"b" + #"c") <= #"a"\n')
    summed = run("equiv", "sum.crasp", "true.crasp", "--alphabet", "a b c", "--unbounded")
    assert summed.exit_code == 0 and summed.output.startswith("proved:")
    # the double example this test used before the coefficient templates is now proved
    (files / "double.crasp").write_text('x = #(#"a" == 2 * #"b") <= #"b"\n')
    double = run("equiv", "double.crasp", "true.crasp", "--alphabet", "a b", "--unbounded")
    assert double.exit_code == 0 and double.output.startswith("proved:")


@pytest.mark.parametrize("command", ["equiv", "check"])
def test_deepen_bounds_the_search_after_an_inconclusive_induction(files, command):
    """``treize.crasp``, with a coefficient beyond ``sides.COEFFICIENT_LIMIT`` (the 13 it had
    is read from the comparison since), is true at every length and unprovable here: the
    answer is unknown and holds up to the --deepen length (default 4 x --max-length, at
    most 64; 0: none)."""
    assert sides.COEFFICIENT_LIMIT < 70_000
    (files / "treize.crasp").write_text('x = #(#"a" == 70000 * #"b") <= #"b"\n')
    other = ["true.crasp"] if command == "equiv" else ["--universal"]
    for deepen, decided in [(None, 24), ("0", 6), ("3", 6), ("15", 15), ("70", 70)]:
        extra = ["--deepen", deepen] if deepen is not None else []
        result = run(command, "treize.crasp", *other, "--alphabet", "a b", "--max-length", "6",
                     "--unbounded", "--json", *extra)
        verdict = json.loads(result.output)
        assert result.exit_code == 3 and verdict["result"] == "unknown", result.output
        assert verdict["decided_length"] == decided and verdict["timed_out"] is False
    refused = run(command, "treize.crasp", *other, "--deepen", "-1")
    assert refused.exit_code == 2 and "--deepen" in refused.output


@pytest.mark.parametrize("prog,args,status,text", [
    ("all_a.crasp", ["--empty"], 1, "not empty: all_a.crasp accepts the string\n"
                                    "shortest witness: a (length 1)"),
    ("all_a.crasp", ["--universal"], 1, "not universal: all_a.crasp rejects the string\n"
                                        'shortest witness: "" (length 0), at BOS'),
    ("majority.crasp", ["--includes", "all_a.crasp"], 0,
     "majority.crasp includes all_a.crasp (every string all_a.crasp accepts, majority.crasp "
     "accepts) for every string of length ≤ 8"),
    ("all_a.crasp", ["--includes", "true.crasp"], 1,
     "all_a.crasp does not include true.crasp: true.crasp accepts the string, all_a.crasp "
     "rejects it"),
])
def test_check(files, prog, args, status, text):
    (files / "all_a.crasp").write_text('x = #"a" > 0 && #"b" == 0\n')
    result = run("check", prog, *args, "--max-length", "8")
    assert result.exit_code == status, result.output
    assert text in result.output


def test_check_universal_proved_for_every_length(files):
    (files / "sum.crasp").write_text('x = #"a" + #"b" == #true\n')
    result = run("check", "sum.crasp", "--universal", "--alphabet", "a b", "--unbounded")
    assert result.exit_code == 0 and result.output.startswith("proved:")


@pytest.mark.parametrize("args,message", [
    (["equiv", "missing.crasp", "majority.crasp"], "cannot read program"),
    (["equiv", "majority.crasp", "bad.crasp"], "bad.crasp:1:"),
    (["equiv", "majority.crasp", "count.crasp"], "is a count"),
    (["equiv", "-", "-"], "only one program can be read from stdin"),
    (["equiv", "majority.crasp"], "Missing argument"),
    (["equiv", "majority.crasp", "twice.crasp", "--alphabet", " "], "at least one token"),
    (["equiv", "majority.crasp", "twice.crasp", "--alphabet", "a a"], "given twice"),
    (["equiv", "majority.crasp", "twice.crasp", "--max-length", "-1"], "-1"),
    (["equiv", "majority.crasp", "twice.crasp", "--method", "magic"], "magic"),
    (["equiv", "majority.crasp", "twice.crasp", "--method", "enumerate", "--max-length",
      "40"], "too many to run"),
    (["check", "majority.crasp"], "exactly one of --empty, --universal, --includes"),
    (["check", "majority.crasp", "--empty", "--includes", "twice.crasp"], "exactly one"),
    (["check", "majority.crasp", "--includes", "missing.crasp"], "cannot read program"),
])
def test_errors_exit_2_with_one_message(files, args, message):
    result = run(*args, input="")
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_missing_z3_is_one_line(files, monkeypatch):
    monkeypatch.setitem(sys.modules, "z3", None)
    result = run("equiv", "majority.crasp", "twice.crasp", "--method", "smt")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: this needs the z3 solver, which is not installed: pip install 'crasp[verify]' "
        "(or pip install z3-solver); or use --method enumerate"]
    assert run("equiv", "majority.crasp", "twice.crasp", "--max-length", "6").exit_code == 1


def test_neither_the_core_nor_the_verify_commands_import_z3_when_loaded():
    code = ("import sys, crasp, crasp.cli, crasp.verify, crasp.verify.cli; "
            "assert 'z3' not in sys.modules, 'z3 imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_json_key_is_documented(files):
    """docs/verification.md's paragraph on --json names every key a verdict has, the nested
    ones of ``induction``, ``domain_closure`` and ``vacuity`` too."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "docs" / "verification.md").read_text(
        encoding="utf-8")
    paragraph = text.split("`--json` prints the verdict as one object:", 1)[1].split("\n\n")[0]
    documented = set(re.findall(r"`([a-z_]+)`", paragraph))
    (files / "dom.crasp").write_text('x = #"a" <= 3\n')
    verdict = json.loads(run("check", "true.crasp", "--universal", "--alphabet", "a b",
                             "--domain", "dom.crasp", "--unbounded", "--json").output)
    keys = set(verdict) | set(verdict["induction"]) | set(verdict["domain_closure"]) | \
        set(verdict["vacuity"])
    refuted = json.loads(run("check", "true.crasp", "--empty", "--json").output)
    keys |= set(refuted["counterexample"])
    assert keys - documented == set()
