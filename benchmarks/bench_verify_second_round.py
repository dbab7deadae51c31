"""What the verifier's second round costs and proves (crasp/verify/driver.py, ``SECOND_ROUND``:
after an inconclusive induction, one more with the ``wider`` inequalities of
crasp/verify/bounds.py, over sums of tokens, with coefficients up to 6 and observed slopes up
to 12): ``crasp equiv A B --unbounded`` with N = 8, CPU seconds, best of three, the settings
taking turns, in the same invocation:

* ``off``, the baseline: no second round, the verifier before it;
* ``lazy``, the default: the wider templates in a second induction, only after the first proves
  nothing;
* ``eager``: the wider templates in the first and only induction (what the lazy order avoids).

All three without reading the programs' comparisons (``sides.STATED`` False), which proves
most of these programs in the first round since (benchmarks/bench_verify_stated.py): this
measures the templates alone.

Programs: three that hold only by a bound over a sum of tokens (tests/test_verify_unbounded.py's
``TOKEN_SUMS``), one only by a coefficient of 4, one only by a coefficient of 7 (an observed
slope, ``bounds._observed_slopes``) and one only by a bound over a sum of two counts
(the last line of its program shown), each against ``x = true``, and two
decompiled twins, proved in the first round (``examples/L5.crasp`` and
``examples/anbncn.crasp`` against their compiled-then-decompiled models), where the wider
templates only cost.

    python benchmarks/bench_verify_second_round.py [--repeats 3] [--length 8] [--whole-class]
    python benchmarks/bench_verify_second_round.py --slopes PROGRAM.crasp

``--whole-class`` then counts the answers over the whole class of ``TOKEN_SUMS`` (42 programs),
off and lazy, with N = 6 and no search after the induction (``deepen=0``), as the tests run it.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import crasp  # noqa: E402
from crasp.verify import Question, bounded, decide, driver, sides  # noqa: E402

from timing import best_of_each  # noqa: E402

PROGRAMS = [
    ('x = #(#"a" == #"b" + #"c") <= #"a"', ("a", "b", "c")),
    ('x = #(2 * #"a" == #"b" + #"c" + #"d") <= #"a"', ("a", "b", "c", "d")),
    ('x = 3 * #(#"a" == 3 * #"b" + 3 * #"c") <= #"a"', ("a", "b", "c")),
    ('x = #(#"a" == 4 * #"b") <= #"b"', ("a", "b")),
    ('x = #(#"a" == 7 * #"b") <= #"b"', ("a", "b")),
    ('y = #("b" && #"a" >= 1)\nz = #("c" && #"a" >= 1)\n'
     'x = #(#"a" >= 1 && #"a" == y + z) <= #"a"', ("a", "b", "c")),
]
TWINS = ["L5", "anbncn"]


def questions():
    """(label, question, alphabet) of every benchmarked comparison."""
    always = crasp.parse_program("x = true")
    for text, alphabet in PROGRAMS:
        first = crasp.parse_program(text)
        yield text.splitlines()[-1][4:], Question("equivalent", (first, always),
                                                  ("A", "B")), alphabet
    yield from twin_questions(TWINS)


def twin_questions(names: list[str]):
    """(label, question, None) of each named example against its compiled-then-decompiled
    model (benchmarks/bench_verify_stated.py asks the same)."""
    from crasp.compiler import compile_program, decompile_model
    for name in names:
        original = crasp.load_program(crasp.example(name))
        twin = decompile_model(compile_program(original)).program
        yield f"{name} and its decompiled twin", Question("equivalent", (original, twin),
                                                          ("A", "B")), None


def run(question: Question, alphabet, setting: str, outcomes: dict, length: int = 8,
        deepen: int | None = None):
    """A ``decide`` call under ``setting``, its outcome kept in ``outcomes``."""
    plain_pairs = bounded.proved_pairs

    def call():
        saved = driver.SECOND_ROUND
        sides.STATED = False
        if setting != "lazy":
            driver.SECOND_ROUND = False
        if setting == "eager":   # the wider templates in the first induction, no second one
            bounded.proved_pairs = lambda *args, **_: plain_pairs(*args, second_round=True)
        try:
            outcomes[setting] = decide(question, length, alphabet, unbounded=True,
                                       deepen=deepen).outcome
        finally:
            driver.SECOND_ROUND, bounded.proved_pairs = saved, plain_pairs
            sides.STATED = True
    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--length", type=int, default=8,
                        help="N, the --max-length of each check")
    parser.add_argument("--whole-class", action="store_true")
    parser.add_argument("--slopes", metavar="PROGRAM",
                        help="only time the observed slopes' hulls within the wider candidates "
                             "of one program's counts (CPU seconds)")
    args = parser.parse_args()
    if args.slopes:
        print(slopes_cost(crasp.parse_program(open(args.slopes, encoding="utf-8").read())))
        return
    print(f"{'comparison':<44} {'off s':>6} {'lazy s':>7} {'eager s':>8} {'lazy/off':>9} "
          f"{'eager/off':>10}  answers (off / lazy / eager)")
    for label, question, alphabet in questions():
        outcomes: dict[str, str] = {}
        off, lazy, eager = best_of_each(
            args.repeats, *(run(question, alphabet, setting, outcomes, args.length)
                            for setting in ("off", "lazy", "eager")), clock=time.process_time)
        print(f"{label:<44} {off:>6.2f} {lazy:>7.2f} {eager:>8.2f} {lazy / off:>8.1f}x "
              f"{eager / off:>9.1f}x  {outcomes['off']} / {outcomes['lazy']} / "
              f"{outcomes['eager']}", flush=True)
    if args.whole_class:
        print(f"TOKEN_SUMS, (off, lazy) answers: {whole_class()}")


def slopes_cost(program) -> str:
    """The CPU seconds of sampling ``program``'s counts, of its wider candidates, and of the
    hulls (``bounds._observed_slopes``) within them, the baseline of the ratio."""
    import numpy as np
    from crasp.verify import bounds, relations
    start = time.process_time()
    rows = np.unique(relations._sample_matrix((program,), program.alphabet, 8), axis=0)
    sampled = time.process_time()
    hulls = bounds._observed_slopes
    spent = [0.0]

    def timed(*args):
        begin = time.process_time()
        try:
            return hulls(*args)
        finally:
            spent[0] += time.process_time() - begin
    bounds._observed_slopes = timed
    try:
        bounds.candidate_inequalities(rows, len(program.alphabet), [], wider=True)
    finally:
        bounds._observed_slopes = hulls
    wider = time.process_time() - sampled
    return (f"{rows.shape[1] - len(program.alphabet)} counts, {rows.shape[0]} distinct rows: "
            f"sampling {sampled - start:.2f} s, wider candidates {wider:.2f} s, of which the "
            f"hulls {spent[0]:.2f} s ({spent[0] / wider:.2f} of it)")


def whole_class() -> dict[tuple[str, str], int]:
    """How many programs of tests/test_verify_unbounded.py's ``TOKEN_SUMS`` get each pair of
    answers (off, lazy)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_verify_unbounded import TOKEN_SUMS
    always = crasp.parse_program("x = true")
    answers: dict[tuple[str, str], int] = {}
    for text, alphabet in TOKEN_SUMS:
        question = Question("equivalent", (crasp.parse_program(text), always), ("A", "B"))
        outcomes: dict[str, str] = {}
        for setting in ("off", "lazy"):
            run(question, alphabet, setting, outcomes, length=6, deepen=0)()
        key = (outcomes["off"], outcomes["lazy"])
        answers[key] = answers.get(key, 0) + 1
    return answers


if __name__ == "__main__":
    main()
