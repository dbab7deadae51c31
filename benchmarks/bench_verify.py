"""Verifier benchmark: ``crasp equiv`` between every compilable reference program and its
decompiled twin (compile, then decompile: a different program with the same answers), on one
core.

For each example, over the default alphabet (the program's tokens plus one foreign token:
three letters for the {a, b} languages, four for anbncn and the E family):

1. at a small N (default 10) both searches run: enumeration (the interpreter on all k^N
   strings) and z3; the ratio is enumeration time over z3 time, measured in the same run;
2. at N = 30 (3^30 ~ 2 * 10^14 strings for three letters) z3 as ``crasp equiv`` runs it, and
   the baseline in the same run: z3 without the relation lemmas
   (``crasp/verify/relations.py``), the engine before them, under a time limit
   (``--baseline-limit``, default 60 s; ">60" when it ran out); each the best of three runs;
   the ratio is baseline time over the new time (a lower bound when the baseline ran out);
   enumeration's time at N = 30 is extrapolated from step 1 (k^(30 - small N) times longer);
3. ``--unbounded`` with N = 8 (``--unbounded-length``): proved (with the k of the step) or
   unknown, and its time.

Every pair must come out equivalent (a counterexample would be a decompiler bug).

    python benchmarks/bench_verify.py [--small 10] [--large 30] [--baseline-limit 60]
                                      [--unbounded-length 8]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

import numpy as np  # noqa: E402

import crasp  # noqa: E402
from crasp.compiler import compile_program, decompile_model  # noqa: E402
from crasp.verify import Question, decide  # noqa: E402
from crasp.verify import bounded, enumeration  # noqa: E402
from crasp.verify.questions import default_alphabet  # noqa: E402
from crasp.verify.solver import TimeLimit, Undecided  # noqa: E402
from timing import best_of  # noqa: E402


REPEATS = 3
"""Each search at N = 30 runs this many times (the best time counts): the machine is shared."""


def pairs():
    for path in sorted((ROOT / "examples").glob("*.crasp")):
        program = crasp.load_program(path)
        if crasp.syntax.is_positional(program):
            continue  # positional predicates: not compilable, so no decompiled twin
        twin = decompile_model(compile_program(program), path.stem).program
        yield path.stem, Question("equivalent", (program, twin), ("A", "B"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--large", type=int, default=30)
    parser.add_argument("--baseline-limit", type=float, default=60.0)
    parser.add_argument("--unbounded-length", type=int, default=8,
                        help="N of the --unbounded check")
    args = parser.parse_args()
    large = f"N={args.large}"
    print(f"{'example':<14}{'k':>3}{'enum s':>9}{'z3 s':>8}{'ratio':>8}   "
          f"{'z3 s ' + large:>11}{'baseline s':>12}{'speed-up':>10}"
          f"{'enum s ' + large + ' (extrap.)':>22}   "
          f"{f'unbounded (N={args.unbounded_length})':>18}")
    slowest, speedups = 0.0, []
    for name, question in pairs():
        alphabet, _ = default_alphabet(question.programs)
        k = len(alphabet)
        results = []
        enum_s = best_of(1, lambda: results.append(
            enumeration.first_violation(question, alphabet, args.small)))
        smt_s = best_of(1, lambda: results.append(
            bounded.first_violation(question, alphabet, args.small)))
        extrapolated = enum_s * k ** (args.large - args.small)
        large_s = best_of(REPEATS, lambda: results.append(
            bounded.first_violation(question, alphabet, args.large)))
        slowest = max(slowest, large_s)
        baseline_s, ran_out = baseline(question, alphabet, args.large, args.baseline_limit)
        speedups.append(baseline_s / large_s)
        baseline_text = (">" if ran_out else "") + f"{baseline_s:.2f}"
        speedup = (">" if ran_out else "") + f"{baseline_s / large_s:.1f}x"
        assert results == [None] * len(results), (name, results)
        verdict = decide(question, args.unbounded_length, method="smt", unbounded=True)
        assert verdict.outcome in ("proved", "unknown"), (name, verdict.outcome)
        unbounded = (f"proved k={verdict.induction.k}" if verdict.outcome == "proved"
                     else "unknown") + f" {verdict.seconds:.1f}s"
        print(f"{name:<14}{k:>3}{enum_s:>9.3f}{smt_s:>8.3f}{enum_s / smt_s:>7.2f}x   "
              f"{large_s:>11.2f}{baseline_text:>12}{speedup:>10}{extrapolated:>22.1e}   "
              f"{unbounded:>18}", flush=True)
    mean = float(np.exp(np.mean(np.log(speedups))))
    print(f"\nslowest z3 check at N = {args.large}: {slowest:.2f} s; speed-up over the "
          f"baseline (geometric mean, a lower bound where it ran out): {mean:.2f}x")


def baseline(question, alphabet, length: int, seconds: float) -> tuple[float, bool]:
    """z3 without the relation lemmas, within ``seconds``: its best time of ``REPEATS``, and
    whether it ran out (then once is enough)."""
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        try:
            found = bounded.first_violation(question, alphabet, length, TimeLimit(seconds),
                                            relations=False)
        except Undecided:
            return time.perf_counter() - started, True
        assert found is None
        times.append(time.perf_counter() - started)
    return min(times), False


if __name__ == "__main__":
    main()
