"""Verifier benchmark: programs that hold only because of an inequality between counts
(crasp/verify/bounds.py; the last two need one with a coefficient, 2X <= #"a"), against
``x = true``, with and without the inequality lemmas.

For each program, in the same invocation and on one core:

1. z3 for every string of length <= N (default 20), as ``crasp equiv`` runs it, and the
   baseline: the same search without the relation lemmas (``bench_verify.baseline``: these
   programs have no equations between counts, so it is the search without the
   inequalities), under a time limit (``--baseline-limit``, default 60 s; ">60" when it ran
   out); each the best of three runs, the baseline once when it runs out; the ratio is
   baseline time over the new time (a lower bound after ">");
2. ``--unbounded`` with N = 8, with the inequalities, with the (1, 1) templates only
   (``bounds.COEFFICIENTS``) and without any (``bounds.MAX_INEQUALITIES = 0``), the last two
   without the second round (``driver.SECOND_ROUND``): proved or unknown.

    python benchmarks/bench_verify_inequalities.py [--length 20] [--baseline-limit 60]
                                                   [--unbounded-length 8]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import crasp  # noqa: E402
from crasp.verify import Question, bounded, bounds, decide, driver  # noqa: E402
from bench_verify import REPEATS, baseline  # noqa: E402
from timing import best_of  # noqa: E402

PROGRAMS = [
    ('x = #(#"a" == #"b") <= #"a"', ("a", "b")),
    ('x = #(#"a" == #"b") <= #"b" + 1', ("a", "b")),
    ('x = #(#"a" == #"b" && ("a" || "b")) <= #"a"', ("a", "b", "c")),
    ('x = #(#"a" == #"b" + 1) <= #"a"', ("a", "b")),
    # a coefficient: X <= #"b" and 2X <= #"a" together
    ('x = #(#"a" == 2 * #"b") <= #"b"', ("a", "b")),
    ('x = #(2 * #"a" == 3 * #"b") <= #"a"', ("a", "b")),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--baseline-limit", type=float, default=60.0)
    parser.add_argument("--unbounded-length", type=int, default=8,
                        help="N, the --max-length of the --unbounded checks")
    args = parser.parse_args()
    print(f"{'program':<46}{'k':>3}{'z3 s':>8}{'baseline s':>12}{'speed-up':>10}"
          f"{'unbounded':>12}{'(1, 1) only':>13}{'without':>10}")
    for text, alphabet in PROGRAMS:
        question = Question("equivalent", (crasp.parse_program(text),
                                           crasp.parse_program("x = true")), ("A", "B"))
        found = []
        new_s = best_of(REPEATS, lambda: found.append(
            bounded.first_violation(question, alphabet, args.length)))
        assert found == [None] * REPEATS, (text, found)
        baseline_s, ran_out = baseline(question, alphabet, args.length, args.baseline_limit)
        with_them = unbounded(question, alphabet, args.unbounded_length)
        units = unbounded(question, alphabet, args.unbounded_length, COEFFICIENTS=((1, 1),))
        without = unbounded(question, alphabet, args.unbounded_length, MAX_INEQUALITIES=0)
        mark = ">" if ran_out else ""
        print(f"{text[4:]:<46}{len(alphabet):>3}{new_s:>8.2f}{mark + f'{baseline_s:.2f}':>12}"
              f"{mark + f'{baseline_s / new_s:.0f}x':>10}{with_them:>12}{units:>13}{without:>10}",
              flush=True)


def unbounded(question: Question, alphabet: tuple[str, ...], length: int, **settings) -> str:
    """The outcome of ``--unbounded`` with N = ``length``, with ``settings`` of ``bounds`` in
    force and, where there are any, without the second round (whose wider templates have
    coefficients and inequalities of their own: ``driver.SECOND_ROUND``)."""
    saved = {name: getattr(bounds, name) for name in settings}
    second_round = driver.SECOND_ROUND
    for name, value in settings.items():
        setattr(bounds, name, value)
    driver.SECOND_ROUND = second_round and not settings
    try:
        return decide(question, length, alphabet, method="smt", unbounded=True).outcome
    finally:
        for name, value in saved.items():
            setattr(bounds, name, value)
        driver.SECOND_ROUND = second_round


if __name__ == "__main__":
    main()
