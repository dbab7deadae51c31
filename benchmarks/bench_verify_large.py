"""Verifier benchmark on large programs: ``crasp equiv`` between the largest programs of the
extraction study (docs/extraction.md: decompiled or extracted from trained transformers, 600
to 1,500 definitions) and their language's prediction program, as the study ran it
(``--alphabet "a b"`` or ``"a b e"``, ``--max-length 16 --unbounded``), on one core.

``--part programs``: for each program, its definitions and count nodes as given and after
``crasp.verify.shrink`` (the pre-pass every search now runs on), the answer and the CPU time
of the check (the best of ``--repeats``), and the baseline in the same invocation: the same
check on the programs as given (``decide(..., shrink=False)`` with no budget on the relation
search, ``relations.MAX_COLUMNS``: the engine before both), in a subprocess under a
CPU limit (``--baseline-limit``, default 120 s as in the study; ">120" when it ran out). The
speed-up is baseline time over new time (a lower bound after ">"). Both answers must agree
where the baseline answers. Times are of ``decide`` alone: reading a program is the same in
both (a few seconds for the largest).

``--part scaling``: the same comparison on a made-up program of n redundant copies of one
check (``redundant_program``: 3n + 2 definitions whose n first-layer comparisons all mean
``#"b" == 0`` or its negation, as in the L4 program), against ``"b" && #("a" && #"b" == 0)
>= 1``, for growing n: the time per 1,000 definitions stays flat when the check is linear
in the program's size.

    PYTHONPATH=. python benchmarks/bench_verify_large.py --part programs
        [--min-definitions 600] [--baseline-limit 120] [--repeats 3] [PROGRAM ...]
    PYTHONPATH=. python benchmarks/bench_verify_large.py --part scaling [--baseline-limit 60]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

import crasp  # noqa: E402
from crasp.verify import Question, decide  # noqa: E402
from crasp.verify.encode import count_nodes  # noqa: E402
from crasp.verify.shrink import shrink  # noqa: E402
from timing import best_of_each  # noqa: E402

PROGRAMS = ROOT / "docs" / "extraction" / "programs"
MAX_LENGTH = 16

BASELINE = """
import json, resource, sys, time
import crasp
from crasp.verify import Question, decide, relations
relations.MAX_COLUMNS = float("inf")   # the engine before the pre-pass had no budget either
path, reference, alphabet, limit = sys.argv[1], sys.argv[2], tuple(sys.argv[3].split()), \\
    float(sys.argv[4])
question = Question("equivalent", (crasp.load_program(path), crasp.load_program(reference)),
                    ("A", "B"))
used = time.process_time()
resource.setrlimit(resource.RLIMIT_CPU, (int(used + limit) + 1, int(used + limit) + 6))
verdict = decide(question, %d, alphabet, unbounded=True, shrink=False)
print(json.dumps({"outcome": verdict.outcome, "cpu_s": time.process_time() - used}))
""" % MAX_LENGTH


SCALING = (250, 500, 1000, 2000, 4000)
SCALING_REFERENCE = 'alphabet "a" "b"\n"b" && #("a" && #"b" == 0) >= 1\n'


def redundant_program(copies: int) -> str:
    """n comparisons that all mean #"b" == 0 or #"b" >= 1 (``never`` holds at no token of
    {a, b}), n states over them, n second-layer comparisons of three kinds, and an answer
    equal to ``SCALING_REFERENCE``'s."""
    lines = ['alphabet "a" "b"', 'never = !("a" || "b")']
    for k in range(copies):
        lines += [f'c{k} = ({k + 1} * #never) + {k + 2} * #"b" {("==", ">=")[k % 2]} {k % 2}',
                  f's{k} = "a" && {("", "!")[k % 2]}c{k}', f'd{k} = #s{k} >= {k % 3 + 1}']
    lines.append('answer = "b" && (' + " || ".join(f"d{k}" for k in range(copies)) + ")")
    return "\n".join(lines) + "\n"


def language_of(path: Path) -> str:
    return path.name.split("-")[0]


def baseline(path: Path, reference: Path, alphabet: tuple[str, ...],
             limit: float) -> dict | None:
    """The check on the programs as given, in a subprocess: its outcome and CPU seconds, or
    None when the CPU limit stopped it."""
    done = subprocess.run([sys.executable, "-c", BASELINE, str(path), str(reference),
                           " ".join(alphabet), str(limit)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        if done.returncode < 0:   # SIGXCPU or SIGKILL: the limit
            return None
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def timed(question: Question, alphabet: tuple[str, ...], repeats: int):
    """The verdict of the check and its CPU seconds (the best of ``repeats``)."""
    verdicts = []
    seconds, = best_of_each(repeats, lambda: verdicts.append(
        decide(question, MAX_LENGTH, alphabet, unbounded=True)), clock=time.process_time)
    return verdicts[-1], seconds


def compared(verdict, old: dict | None, seconds: float, limit: float) -> tuple[str, str]:
    """The baseline's time and the speed-up, as printed (">" where the limit stopped it)."""
    if old is not None:
        assert old["outcome"] == verdict.outcome, (old, verdict.outcome)
        return f"{old['cpu_s']:.2f}", f"{old['cpu_s'] / seconds:.1f}x"
    return f">{limit:.0f}", f">{limit / seconds:.1f}x"


def scaling(options) -> None:
    print("| copies n | definitions | count nodes | shrunk: definitions | count nodes | answer "
          "| CPU s | per 1,000 definitions | baseline CPU s | speed-up |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        reference = Path(folder) / "reference.crasp"
        reference.write_text(SCALING_REFERENCE)
        for copies in SCALING:
            path = Path(folder) / f"redundant{copies}.crasp"
            path.write_text(redundant_program(copies))
            program = crasp.load_program(path)
            question = Question("equivalent", (program, crasp.load_program(reference)),
                                ("A", "B"))
            shrunk = shrink(program, ("a", "b"))
            verdict, seconds = timed(question, ("a", "b"), options.repeats)
            old_text, speed_up = compared(verdict, baseline(
                path, reference, ("a", "b"), options.baseline_limit), seconds,
                options.baseline_limit)
            size = len(program.definitions)
            print(f"| {copies:,} | {size:,} | {len(count_nodes(program)):,} "
                  f"| {len(shrunk.definitions):,} | {len(count_nodes(shrunk)):,} "
                  f"| {verdict.outcome} | {seconds:.2f} | {1000 * seconds / size:.3f} "
                  f"| {old_text} | {speed_up} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", type=Path)
    parser.add_argument("--part", choices=("programs", "scaling"), default="programs")
    parser.add_argument("--min-definitions", type=int, default=600)
    parser.add_argument("--baseline-limit", type=float, default=120.0)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    if options.part == "scaling":
        scaling(options)
        return
    paths = options.programs or sorted(PROGRAMS.glob("*.crasp"))
    print("| program | definitions | count nodes | shrunk: definitions | count nodes | answer "
          "| CPU s | baseline CPU s | speed-up |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for path in paths:
        program = crasp.load_program(path)
        if len(program.definitions) < options.min_definitions:
            continue
        language = language_of(path)
        alphabet = ("a", "b", "e") if language.startswith("E") else ("a", "b")
        reference = crasp.PROGRAMS_DIR / f"{language}_predict.crasp"
        question = Question("equivalent", (program, crasp.load_program(reference)), ("A", "B"))
        shrunk = shrink(program, alphabet)
        verdict, seconds = timed(question, alphabet, options.repeats)
        answer = verdict.outcome
        if verdict.counterexample is not None:
            answer += f" {''.join(verdict.counterexample.tokens) or 'the empty input'}"
        old_text, speed_up = compared(verdict, baseline(path, reference, alphabet,
                                                        options.baseline_limit),
                                      seconds, options.baseline_limit)
        print(f"| {path.stem} | {len(program.definitions):,} | {len(count_nodes(program)):,} "
              f"| {len(shrunk.definitions):,} | {len(count_nodes(shrunk)):,} | {answer} "
              f"| {seconds:.2f} | {old_text} | {speed_up} |", flush=True)


if __name__ == "__main__":
    main()
