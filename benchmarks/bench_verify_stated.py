"""What reading the programs' comparisons costs and proves (crasp/verify/sides.py): ``crasp
equiv A B --unbounded`` with N = 8 and no search after the induction (``deepen=0``, as the
tests run it), CPU seconds, best of three, the two settings taking turns in the same
invocation: ``templates``, the baseline (``sides.STATED`` False: the verifier before the
reading), and ``stated``, the default.

Programs, each against ``x = true``: five that the templates leave unknown (a sum of four of
five tokens, coefficients 13 and 50, sums of three and four counts), two that the templates
prove only in the second round (a sum of two counts, docs/verification.md's ``pair.crasp``;
the ray 7 #"b", an observed slope), two they prove in the first (``TOKEN_SUMS``' sum of two
tokens, the coefficient 2), and two decompiled twins (``examples/L5.crasp`` and
``examples/anbncn.crasp`` against their compiled-then-decompiled models), where the reading
only costs.

``--part reading``: ``stated_sums`` alone on a sum of n token counts, n = 10^4 .. 8 x 10^4
(the forms merge into the larger one, so about n log n; the baseline column is n = 10^4).

    python benchmarks/bench_verify_stated.py [--repeats 3] [--length 8]
    python benchmarks/bench_verify_stated.py --part reading [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import crasp  # noqa: E402
from crasp.verify import Question, decide, sides  # noqa: E402

from bench_verify_second_round import twin_questions  # noqa: E402
from timing import best_of_each  # noqa: E402


def count_sum(counts: int) -> tuple[str, tuple[str, ...]]:
    tokens = "abcde"[:counts + 1]
    lines = [f'y{k} = #("{u}" && #"a" >= 1)' for k, u in enumerate(tokens[1:])]
    total = " + ".join(f"y{k}" for k in range(counts))
    return "\n".join(lines + [f'x = #(#"a" >= 1 && #"a" == {total}) <= #"a"']), tuple(tokens)


PROGRAMS = [
    ('x = #(2 * #"a" == #"b" + #"c" + #"d" + #"e") <= #"a"', tuple("abcde")),
    ('x = #(#"a" == 13 * #"b") <= #"b"', ("a", "b")),
    ('x = #(#"a" == 50 * #"b") <= #"b"', ("a", "b")),
    count_sum(3),
    count_sum(4),
    count_sum(2),
    ('x = #(#"a" == 7 * #"b") <= #"b"', ("a", "b")),
    ('x = #(#"a" == #"b" + #"c") <= #"a"', ("a", "b", "c")),
    ('x = #(#"a" == 2 * #"b") <= #"b"', ("a", "b")),
]
TWINS = ["L5", "anbncn"]


def questions():
    """(label, question, alphabet) of every benchmarked comparison."""
    always = crasp.parse_program("x = true")
    for text, alphabet in PROGRAMS:
        label = text.splitlines()[-1][4:]
        if "\n" in text:
            label = f"{text.count(chr(10))} counts: {label}"
        yield label, Question("equivalent", (crasp.parse_program(text), always),
                              ("A", "B")), alphabet
    yield from twin_questions(TWINS)


def run(question: Question, alphabet, stated: bool, outcomes: dict, length: int):
    def call():
        sides.STATED = stated
        try:
            outcomes[stated] = decide(question, length, alphabet, unbounded=True,
                                      deepen=0).outcome
        finally:
            sides.STATED = True
    return call


def reading(repeats: int) -> None:
    always = crasp.parse_program("x = true")
    programs = {}
    for size in (10_000, 20_000, 40_000, 80_000):
        text = 'x = #(#"a" == ' + " + ".join(['#"b"', '#"c"'] * (size // 2)) + ') <= #"b"'
        programs[size] = crasp.parse_program(text)
    times = best_of_each(repeats, *(lambda p=p: sides.stated_sums((p, always), ("a", "b", "c"))
                                    for p in programs.values()), clock=time.process_time)
    print(f"{'operands':>9} {'CPU s':>7} {'ratio to 10^4':>14}")
    for size, seconds in zip(programs, times):
        print(f"{size:>9} {seconds:>7.3f} {seconds / times[0]:>13.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--part", choices=["programs", "reading"], default="programs")
    parser.add_argument("--length", type=int, default=8,
                        help="N, the --max-length of each check")
    args = parser.parse_args()
    if args.part == "reading":
        reading(args.repeats)
        return
    print(f"{'comparison':<56} {'templates s':>11} {'stated s':>9} {'ratio':>7}  "
          "answers (templates / stated)")
    for label, question, alphabet in questions():
        outcomes: dict[bool, str] = {}
        templates, stated = best_of_each(args.repeats,
                                         run(question, alphabet, False, outcomes, args.length),
                                         run(question, alphabet, True, outcomes, args.length),
                                         clock=time.process_time)
        print(f"{label[:56]:<56} {templates:>11.2f} {stated:>9.2f} {stated / templates:>6.3f}x"
              f"  {outcomes[False]} / {outcomes[True]}", flush=True)


if __name__ == "__main__":
    main()
