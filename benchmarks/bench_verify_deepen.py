"""What the deeper search costs and finds: ``crasp equiv A B --unbounded`` with N = 16, with the
search after an inconclusive induction (the default, up to ``deepest(16)`` = 64 tokens) and
without it (``--deepen 0``, the baseline, the verifier before the search), in the same run,
best of three CPU timings each (the two take turns). The programs: two that are true at every
length and that the induction cannot prove (a sum of four tokens behind a max,
tests/test_verify_unbounded.py's UNKNOWN, and a coefficient beyond sides.COEFFICIENT_LIMIT,
tests/test_verify_cli.py's; the search finds nothing and only costs), and three whose first
difference lies beyond N (``#(a after the first b) <= c * #b + d``: first at length
c + d + 2). The answer columns say what each gives; without the search, an answer that is
``counterexample`` comes from the induction happening to meet the difference.

``--part kept``: the search alone at growing lengths, on ``#(#"a" == 13 * #"b") <= #"b"``
against ``x = true`` (true at every length, so the search runs to its end; the induction
proves it since crasp/verify/sides.py, but the search alone does not use the induction), with
the sweeper keeping each equality it proves as a fact (``bounded.KEEP_PROVED_EQUALITIES``, the
default) and, the baseline, without. Both must answer the same; the ratio is kept over
baseline.

    python benchmarks/bench_verify_deepen.py [--repeats 3] [--length 16]
    python benchmarks/bench_verify_deepen.py --part kept [--repeats 3] [--lengths 20,40,60]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import crasp  # noqa: E402
from crasp.verify import Question, bounded, decide  # noqa: E402

from timing import best_of_each  # noqa: E402

PROGRAMS = [
    ('x = #(2 * #"a" == max(#"b" + #"c" + #"d" + #"e", 0)) <= #"a"', ("a", "b", "c", "d", "e")),
    ('x = #(#"a" == 70000 * #"b") <= #"b"', ("a", "b")),
    ('x = #("a" && #"b" >= 1) <= (1 * #"b") + 16', ("a", "b")),
    ('x = #("a" && #"b" >= 1) <= (21 * #"b") + 8', ("a", "b")),
    ('x = #("a" && #"b" >= 1) <= (10 * #"b") + 50', ("a", "b")),
]
N = 16


def answer(verdict) -> str:
    if verdict.outcome == "counterexample":
        return f"counterexample, length {len(verdict.counterexample.tokens)}"
    if verdict.outcome == "unknown":
        return f"unknown, holds to {verdict.decided_length}"
    return verdict.outcome


def kept(repeats: int, lengths: list[int]) -> None:
    question = Question("equivalent", (crasp.parse_program('x = #(#"a" == 13 * #"b") <= #"b"'),
                                       crasp.parse_program("y = true")), ("A", "B"))
    print(f"{'length':>6} {'baseline s':>10} {'kept s':>8} {'ratio':>6}  answers")
    for length in lengths:
        found = {}

        def run(keep):
            def search():
                bounded.KEEP_PROVED_EQUALITIES = keep
                found[keep] = bounded.first_violation(question, ("a", "b"), length)
            return search
        baseline, with_facts = best_of_each(repeats, run(False), run(True),
                                            clock=time.process_time)
        bounded.KEEP_PROVED_EQUALITIES = True
        assert found[False] == found[True]
        print(f"{length:>6} {baseline:>10.2f} {with_facts:>8.2f} {with_facts / baseline:>5.2f}x"
              f"  {'none' if found[True] is None else found[True]} (both)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--part", choices=["search", "kept"], default="search")
    parser.add_argument("--lengths", default="20,40,60")
    parser.add_argument("--length", type=int, default=N,
                        help="N, the --max-length of each check")
    args = parser.parse_args()
    if args.part == "kept":
        kept(args.repeats, [int(length) for length in args.lengths.split(",")])
        return
    always = crasp.parse_program("y = true")
    print(f"{'program':<48} {'deepen 0 s':>10} {'default s':>10} {'ratio':>6}  "
          f"answers (deepen 0 / default)")
    for text, alphabet in PROGRAMS:
        question = Question("equivalent", (crasp.parse_program(text), always), ("A", "B"))
        verdicts = {}

        def run(deepen):
            return lambda: verdicts.__setitem__(deepen, decide(
                question, args.length, alphabet, unbounded=True, deepen=deepen))
        baseline, searched = best_of_each(args.repeats, run(0), run(None),
                                          clock=time.process_time)
        print(f"{text:<48} {baseline:>10.2f} {searched:>10.2f} {searched / baseline:>5.1f}x  "
              f"{answer(verdicts[0])} / {answer(verdicts[None])}")


if __name__ == "__main__":
    main()
