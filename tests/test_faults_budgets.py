"""Budgets bound the work: an astronomical --max-length, --random-count or --random-length is
refused or answered at once (not computed as a 10^20-digit power, not sampled into
gigabytes), and --timeout holds on every path (an outside audit found hangs)."""

from __future__ import annotations

from click.testing import CliRunner
from hypothesis import given, strategies as st

import crasp
from crasp.cli import cli
from crasp.util import counting
from crasp.verify import sweep

HUGE = "99999999999999999999"


@given(st.integers(0, 12), st.integers(0, 90))
def test_string_counts_are_the_powers_capped(size, length):
    """Against the plain sums, for every small alphabet and length up to 90."""
    assert counting.strings_of_length(size, length) == min(size ** length,
                                                           counting.BEYOND_ANY_LIMIT)
    assert counting.strings_up_to(size, length) == min(
        sum(size ** n for n in range(length + 1)), counting.BEYOND_ANY_LIMIT)


def test_an_astronomical_length_is_counted_without_its_power():
    assert counting.strings_up_to(3, 10 ** 20) == counting.BEYOND_ANY_LIMIT
    assert counting.strings_of_length(2, 10 ** 20) == counting.BEYOND_ANY_LIMIT
    assert counting.strings_of_length(1, 10 ** 20) == 1
    assert counting.strings_up_to(1, 10 ** 20) == counting.BEYOND_ANY_LIMIT


def test_random_samples_stay_short_whatever_the_bound():
    strings = sweep.samples(("a", "b"), 10 ** 6)
    assert max(map(len, strings)) <= sweep.LONGEST_SAMPLE


def test_check_and_equiv_with_an_astronomical_length_answer_within_the_time_limit():
    runner = CliRunner()
    empty = runner.invoke(cli, ["check", "examples/dyck1.crasp", "--empty", "--max-length", HUGE,
                                "--timeout", "2"])
    assert empty.exit_code == 1 and empty.output.startswith("not empty"), empty.output
    same = runner.invoke(cli, ["equiv", "examples/dyck1.crasp", "examples/dyck1.crasp",
                               "--max-length", HUGE, "--method", "smt", "--timeout", "2"])
    assert same.exit_code == 3 and "time limit" in same.output, same.output


def test_verify_budgets_are_refused_before_any_work():
    runner = CliRunner()
    for option in (["--max-length", HUGE], ["--random-count", HUGE],
                   ["--random-length", HUGE], ["--seed", "-1"]):
        for command in (["depth-check", "examples/dyck1.crasp", "--verify"],):
            result = runner.invoke(cli, command + option)
            assert result.exit_code == 2, (option, result.output)
            assert "Traceback" not in result.output


def test_an_astronomical_sweep_axis_or_language_is_refused_before_it_is_built():
    """Every axis of a sweep (a range of depths, languages or seeds, or a seed count), and
    L_k or E_k by name, past its bound: one message, exit status 2, before any list of that
    length or program of that size is built."""
    runner = CliRunner()
    for option, value in (("--languages", "L3:L99999999999"), ("--languages", "E3:E99999999999"),
                          ("--depths", "1:99999999999"), ("--depths", "1,2,3:99999999999"),
                          ("--seeds", "99999999999"), ("--seeds", "0:99999999999")):
        axes = {"--languages": "L3", "--depths": "1", "--seeds": "1", option: value}
        words = ["sweep", "-o", "s", "--dry-run"] + [w for pair in axes.items() for w in pair]
        result = runner.invoke(cli, words)
        assert result.exit_code == 2 and "10,000" in result.output, (option, result.output)
    for name in ("L" + HUGE, "E" + HUGE, "E" + HUGE + "@0.2", "L100001"):
        result = runner.invoke(cli, ["generate", name, "--bins", "1:4", "--n", "4", "-o", "d"])
        assert result.exit_code == 2 and "100,000" in result.output, (name, result.output)


def test_a_training_size_past_its_bound_is_one_message_and_no_run_directory(tmp_path):
    """Every bounded size of a training config (``config.LARGEST``) one past its bound: exit
    status 2 before the run directory is made (99,999 threads crashed the process; 10^11
    d_model was an allocation error after the directory was made)."""
    from crasp.train.config import LARGEST
    runner = CliRunner()
    for name, largest in LARGEST.items():
        run = tmp_path / name
        result = runner.invoke(cli, ["train", "--language", "L3", "--depth", "1",
                                     f"--{name.replace('_', '-')}", str(largest + 1),
                                     "--device", "cpu", "--no-progress", "-o", str(run)])
        assert result.exit_code == 2 and f"{largest:,}" in result.output, (name, result.output)
        assert not run.exists()


def test_a_file_is_read_to_its_end_not_to_its_reported_size(tmp_path):
    """/proc files report 0 bytes and hold more: read to the end (a program there is parsed,
    not "defines nothing"); the size limit holds on what is read."""
    from crasp.util.safe_read import SafeReadError, read_bytes_file
    assert read_bytes_file("/proc/self/status", 1 << 20).startswith(b"Name:")
    try:
        read_bytes_file("/proc/self/status", 4)
    except SafeReadError as error:
        assert "more than the 4 bytes" in str(error)
    else:
        raise AssertionError("the limit did not hold")


def test_a_string_count_past_its_bound_is_one_message(tmp_path):
    """``generate --n`` and ``eval --n``, one past ``datasets.MAX_STRINGS`` and astronomically
    past it: exit status 2 naming the range, nothing written (numpy's allocation error of 72.8
    TiB, or its "Maximum allowed dimension exceeded", before)."""
    from crasp.languages.datasets import MAX_STRINGS
    runner = CliRunner()
    compiled = tmp_path / "model"
    assert runner.invoke(cli, ["compile", str(crasp.example("majority")), "-o",
                               str(compiled)]).exit_code == 0
    for n in (str(MAX_STRINGS + 1), HUGE):
        for words in (["generate", "L3", "--bins", "1:5,6:8", "-o", str(tmp_path / "data")],
                      ["eval", str(compiled), "--language", "majority"]):
            result = runner.invoke(cli, [*words, "--n", n])
            assert result.exit_code == 2 and f"{MAX_STRINGS}" in result.output, result.output
            assert "Traceback" not in result.output
    assert not (tmp_path / "data").exists()


def test_a_report_budget_past_any_run_is_one_message(tmp_path):
    """``report --budget`` past ``config.LARGEST["epochs"]`` (no run can have trained longer):
    a usage message, no report (it printed a report "read at 99999999999999999999 epochs")."""
    from crasp.train.config import LARGEST
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "-o", str(tmp_path / "report"),
                                      "--budget", str(LARGEST["epochs"] + 1)])
    assert result.exit_code == 2 and f"{LARGEST['epochs']}" in result.output
    assert not (tmp_path / "report").exists()


def test_a_proof_length_past_its_bound_is_one_message(tmp_path):
    """``--prove N`` of compile, decompile and fmt has no time limit: an N past
    ``PROVE_LIMIT`` is a usage message before any work (an astronomical N ran z3's unrolling
    without end)."""
    from crasp.verify.cli import PROVE_LIMIT
    majority = str(crasp.example("majority"))
    runner = CliRunner()
    assert runner.invoke(cli, ["compile", majority, "-o", str(tmp_path / "m")]).exit_code == 0
    for words in (["compile", majority, "-o", str(tmp_path / "again")],
                  ["decompile", str(tmp_path / "m"), "-o", str(tmp_path / "p.crasp")],
                  ["fmt", majority]):
        for n in (str(PROVE_LIMIT + 1), HUGE):
            result = runner.invoke(cli, [*words, f"--prove={n}"])
            assert result.exit_code == 2 and f"{PROVE_LIMIT}" in result.output, result.output
    assert not (tmp_path / "again").exists() and not (tmp_path / "p.crasp").exists()
