"""Verifier benchmark: ``crasp equiv`` between every compilable reference program and its
decompiled twin (compile, then decompile: a different program with the same answers), on one
core.

For each example, over the default alphabet (the program's tokens plus one foreign token:
three letters for the {a, b} languages):

1. at a small N (default 10) both searches run: enumeration (the interpreter on all k^N
   strings) and z3; the ratio is enumeration time over z3 time, measured in the same run;
2. at N = 30 (3^30 ~ 2 * 10^14 strings for three letters) z3 alone (goal: seconds), beside
   enumeration's time extrapolated from step 1 (k^(30 - small N) times longer);
3. ``--unbounded`` with N = 8: proved (with the k of the step) or unknown, and its time.

Every pair must come out equivalent (a counterexample would be a decompiler bug).

``SLOW`` examples skip step 2: anbncn's twin counts "b after the first c" where the original
counts "b before any c" and compares with #b; relating the two sums takes z3 case splits that
grow with the length (about 3x per two tokens: 14 s at N = 12 on this machine), which neither
the shared counts nor the sweeping (``crasp/verify/sweep.py``) remove.

    python benchmarks/bench_verify.py [--small 10] [--large 30]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

import crasp  # noqa: E402
from crasp.compiler import compile_program, decompile_model  # noqa: E402
from crasp.verify import Question, decide  # noqa: E402
from crasp.verify import bounded, enumeration  # noqa: E402
from crasp.verify.questions import default_alphabet  # noqa: E402
from timing import best_of  # noqa: E402


SLOW = {"anbncn"}


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
    args = parser.parse_args()
    print(f"{'example':<14}{'k':>3}{'enum s':>9}{'z3 s':>8}{'ratio':>8}   "
          f"{'z3 s N=' + str(args.large):>11}{'enum s N=' + str(args.large) + ' (extrap.)':>22}"
          f"   {'unbounded (N=8)':>18}")
    slowest = 0.0
    for name, question in pairs():
        alphabet, _ = default_alphabet(question.programs)
        k = len(alphabet)
        results = []
        enum_s = best_of(1, lambda: results.append(
            enumeration.first_violation(question, alphabet, args.small)))
        smt_s = best_of(1, lambda: results.append(
            bounded.first_violation(question, alphabet, args.small)))
        extrapolated = enum_s * k ** (args.large - args.small)
        if name in SLOW:
            large = "(skipped)"
        else:
            large_s = best_of(1, lambda: results.append(
                bounded.first_violation(question, alphabet, args.large)))
            slowest = max(slowest, large_s)
            large = f"{large_s:.2f}"
        assert results == [None] * len(results), (name, results)
        verdict = decide(question, 8, method="smt", unbounded=True)
        assert verdict.outcome in ("proved", "unknown"), (name, verdict.outcome)
        unbounded = (f"proved k={verdict.induction.k}" if verdict.outcome == "proved"
                     else "unknown") + f" {verdict.seconds:.1f}s"
        print(f"{name:<14}{k:>3}{enum_s:>9.3f}{smt_s:>8.3f}{enum_s / smt_s:>7.2f}x   "
              f"{large:>11}{extrapolated:>22.1e}   {unbounded:>18}", flush=True)
    print(f"\nslowest z3 check at N = {args.large}: {slowest:.2f} s")


if __name__ == "__main__":
    main()
