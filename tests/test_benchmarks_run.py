"""Every benchmark script runs to its end.

benchmarks/bench_verify.py once crashed on every run (a local variable named ``baseline``
shadowed the function ``baseline``: UnboundLocalError), and nothing noticed, because no test
ran the benchmark scripts. Here every ``benchmarks/bench_*.py``, found by a glob, runs as its
own process as a user runs it (``python benchmarks/bench_x.py``, from the repository root, on
one thread), with the smallest arguments that still take it through its whole main path: each
of its modes, each section, each kind of row it prints. It must exit with status 0 and print
its figures. A new script without an entry in ``SMALLEST_RUNS`` runs with its defaults (give
it an entry that makes it small); one that cannot run here needs a reason in ``SKIPPED``.
Runs whose minimum takes more than about 20 s on the 2-core project machine are marked slow
(run them with -m slow), as is one that would take the rest past 90 s.

The scripts import crasp from whatever Python runs them (the checkout's, or the installed wheel
when scripts/test.sh runs the suite in a copy of the checkout without crasp/), and their
helpers (timing.py, other benchmarks) from their own directory, benchmarks/, which Python puts
first on the path of a script it runs.
"""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
TIME_LIMIT_S = 600
"""A run that takes longer fails: a script without an entry runs with its defaults."""


class SlowRun(NamedTuple):
    """A run of more than about 20 s, only with -m slow (the comment above it says why)."""

    arguments: str


FLOAT_SMALL = ("--strings 1 --length 1 --beyond-length 1 --beyond-strings 1 --onnx-length 1 "
               "--onnx-strings 1")

SMALLEST_RUNS: dict[str, list[str | SlowRun]] = {
    "bench_bin_lengths.py": ["--his 20,40 --baseline-up-to 20 --extreme-ns 20,40 "
                             "--extreme-baseline-up-to 20"],
    "bench_compiler.py": ["--definitions 3 --strings 1 --length 1"],
    "bench_decompile.py": [
        # seed 0 is refused at the default --max-states, seed 1 is timed and printed
        "--random 2",
        # the model's states alone take 65,994 units: a smaller limit refuses their enumeration
        # (the baseline), not the decompiling after it
        "--large-vocabulary --max-states 70000",
    ],
    "bench_decompile_lines.py": [""],
    "bench_distributions.py": ["--strings 1 --bin 10:11"],
    "bench_exact_attention.py": ["--length 8 --strings 2 --repeats 1",
                                 "--length 8 --strings 2 --repeats 1 --precision 4.1 "
                                 "--query-scale 20"],
    "bench_float.py": [
        f"{FLOAT_SMALL} --skip certificates",
        # slow: the certificates section, which no option shrinks, measures the float32 model
        # of every example on random strings of up to 4,096 tokens: about 110 s
        SlowRun(FLOAT_SMALL),
    ],
    "bench_hahn.py": ["--definitions 3"],
    # not run: --hahn-dir, which needs a checkout of Hahn's interpreter and its antlr4 runtime
    "bench_interpreter.py": ["--strings 1 --length 1 --baseline-strings 1"],
    # the paper's generator draws 8 blocks: strings of at least 8 tokens
    "bench_languages.py": ["--strings 1 --bin 10:11"],
    "bench_positional.py": ["--definitions 3 --strings 1 --length 1"],
    "bench_scale.py": [
        "--sizes 2",
        "--expressions --sizes 2",
        # slow: --edges has fixed sizes (up to 10,000 definitions, 40,000 input lines): 17 to
        # 30 s
        SlowRun("--edges"),
    ],
    "bench_search_cost.py": ["--steps 1 --depths 1"],
    "bench_startup.py": ["--repeats 1 --shapes 1x1"],
    # fewer strings leave train() no validation string
    "bench_train.py": ["--repeats 1 --strings 3 --default-strings 3"],
    "bench_verify.py": ["--small 1 --large 1 --baseline-limit 1 --unbounded-length 1"],
    "bench_verify_deepen.py": [
        # N = 5: the search after the induction goes to length 20, past the first difference
        # of the third program (length 19), so that both kinds of answer are printed
        "--repeats 1 --length 5",
        "--part kept --repeats 1 --lengths 1",
    ],
    "bench_verify_inequalities.py": ["--length 1 --baseline-limit 1 --unbounded-length 1"],
    "bench_verify_large.py": [
        "docs/extraction/programs/L3-d1-nope-s0-8dac490e9b.crasp --min-definitions 0 "
        "--baseline-limit 1 --repeats 1",
        # slow: the scaling part's sizes are fixed (250 to 4,000 copies): 21 to 24 s
        SlowRun("--part scaling --baseline-limit 1 --repeats 1"),
    ],
    "bench_verify_second_round.py": [
        "--repeats 1 --length 1",
        "--slopes examples/L3.crasp",
        # slow: --whole-class checks 42 programs with N = 6, which no option shrinks: about 110 s
        SlowRun("--repeats 1 --length 1 --whole-class"),
    ],
    "bench_verify_stated.py": [
        "--repeats 1 --length 1",
        # slow: --part reading has fixed sizes (sums of 10^4 to 8 x 10^4 counts): about 12 s,
        # under 20 s but the run that would take the rest of this file past 90 s
        SlowRun("--part reading --repeats 1"),
    ],
}
"""Each script's runs: the arguments of each, the fewest runs that cover its main path."""

SKIPPED: dict[str, str] = {}
"""Scripts that cannot run here, with the reason; none at present."""


def benchmark_runs():
    """A parameter set (script, arguments) for every run of every script the glob finds."""
    for path in sorted(BENCHMARKS.glob("bench_*.py")):
        if path.name in SKIPPED:
            yield pytest.param(path.name, "", id=path.name,
                               marks=pytest.mark.skip(reason=SKIPPED[path.name]))
            continue
        for run in SMALLEST_RUNS.get(path.name, [""]):
            slow = isinstance(run, SlowRun)
            arguments = run.arguments if slow else run
            yield pytest.param(path.name, arguments, id=f"{path.name} {arguments}".strip(),
                               marks=[pytest.mark.slow] if slow else [])


def test_every_listed_script_is_one_the_glob_finds():
    found = {path.name for path in BENCHMARKS.glob("bench_*.py")}
    assert (SMALLEST_RUNS.keys() | SKIPPED.keys()) - found == set()
    assert SMALLEST_RUNS.keys() & SKIPPED.keys() == set()


@pytest.mark.parametrize("script, arguments", list(benchmark_runs()))
def test_benchmark_runs_to_its_end(script, arguments):
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *arguments.split()],
                          cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"},
                          capture_output=True, text=True, timeout=TIME_LIMIT_S)
    assert done.returncode == 0, done.stderr[-5000:]
    assert done.stdout.strip(), f"nothing printed; standard error:\n{done.stderr[-5000:]}"


def test_the_exact_attention_benchmark_reads_a_trained_run(tmp_path):
    """``bench_exact_attention.py --run RUN`` (docs/benchmarks.md's trained-run table): a tiny
    NoPE run trained here, its longest test strings read both ways."""
    from crasp.train.loop import train
    from crasp.train.presets import resolve_preset

    run = tmp_path / "run"
    train(resolve_preset("default", language="L3", depth=1, d_model=4, n_heads=1, d_ff=8,
                         train_bin=(4, 8), test_bins=[(9, 12)], n_train=60, n_test=10,
                         epochs=1, device="cpu"), run, resume=False)
    done = subprocess.run([sys.executable, str(BENCHMARKS / "bench_exact_attention.py"),
                           "--run", str(run), "--strings", "2", "--repeats", "1",
                           "--precision", "6.2"],
                          cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"},
                          capture_output=True, text=True, timeout=TIME_LIMIT_S)
    assert done.returncode == 0, done.stderr[-5000:]
    assert re.search(rf"^2 of the longest test strings \((9|10|11|12) positions\) of "
                     rf"{re.escape(str(run))}$", done.stdout, re.MULTILINE), done.stdout
    assert "exact arithmetic 6.2" in done.stdout and "ratio" in done.stdout
