"""Long bins: a test bin of 100 distinct strings with lengths 11..HI, for HI doubling.

For each language, prints the seconds of the whole bin (``build_task``: its lengths, the
availability check, drawing, labels) and of listing its lengths (``Language.lengths_in``),
against the baseline: listing them by counting the strings of every length
(``support_size(n) > 0`` at each n, crasp's rule before ``Language.lengths``), run in the same
invocation. Processor time of this process, best of 3 (the baseline once: it is the slow one).
A near-linear bin doubles its time when HI doubles; the baseline's counts are exact integers
that grow with n (a Catalan number for Dyck-1; E_k's and majority's were sums of n binomials
until commit 51b3a9d made them closed forms), so it grows faster, and it runs only up to
``--baseline-up-to``.

Then one length's count of E_4 under ``extreme`` (where a narrow bin is asked for more
strings than it has lengths, so its counts are summed): ``support_size(n)``, which sums 17
terms once the letter count has settled (``blocks.neutral_support``'s ``settles_at``), against
the sum over all n numbers of e's it replaces (``neutral_support`` without ``settles_at``: the
baseline, same invocation, up to ``--extreme-baseline-up-to``).

    python benchmarks/bench_bin_lengths.py [--his 1000,2000,250000,500000,1000000]
                                           [--extreme-ns 1000,2000,4000,8000,1000000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crasp.languages import build_task, get_language  # noqa: E402
from crasp.languages.blocks import DEFAULT_INSERTION_RATE, neutral_support  # noqa: E402
from crasp.languages.distributions import extreme_support  # noqa: E402
from timing import best_of_each  # noqa: E402

LANGUAGES = ("dyck1", "E4", "majority", "L8")


def counted_lengths(language, lo: int, hi: int) -> list[int]:
    """The baseline: the lengths that hold strings, found by counting them at every length."""
    return [n for n in range(lo, hi + 1) if language.support_size(n) > 0]


def summed_extreme_count(k: int, n: int) -> int:
    """The baseline: E_k's count under extreme as the sum over r e's of C(n, r) times the
    letters' count, n - k + 1 terms (``neutral_support`` told nothing of where the letters'
    count settles)."""
    return neutral_support(k, DEFAULT_INSERTION_RATE, n, extreme_support)


def extreme_counts(ns: list[int], baseline_up_to: int) -> None:
    language = get_language("E4").under("extreme")
    print("\nE4@extreme, the count of one length n; processor seconds, best of 3 "
          "(baseline once)")
    print(f"{'n':>8} {'count (s)':>10} {'summed (baseline, s)':>21} {'ratio':>9}")
    for n in ns:
        (count,) = best_of_each(3, lambda: language.support_size(n), clock=time.process_time)
        if n > baseline_up_to:
            print(f"{n:>8} {count:>10.5f} {'-':>21} {'-':>9}")
            continue
        start = time.process_time()
        summed = summed_extreme_count(4, n)
        baseline = time.process_time() - start
        assert summed == language.support_size(n)
        print(f"{n:>8} {count:>10.5f} {baseline:>21.3f} {baseline / max(count, 1e-9):>8,.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--his", default="1000,2000,250000,500000,1000000")
    parser.add_argument("--baseline-up-to", type=int, default=2000)
    parser.add_argument("--extreme-ns", default="1000,2000,4000,8000,1000000")
    parser.add_argument("--extreme-baseline-up-to", type=int, default=8000)
    args = parser.parse_args()
    his = [int(hi) for hi in args.his.split(",")]
    print("one test bin 11..HI of 100 distinct strings (training bin 1:10, 20 strings); "
          "processor seconds, best of 3 (baseline once)")
    print(f"{'language':<10} {'HI':>7} {'bin (s)':>9} {'lengths (s)':>12} "
          f"{'counted lengths (s)':>20} {'ratio':>9}")
    for name in LANGUAGES:
        language = get_language(name)
        for hi in his:
            def whole():
                build_task(language, "1:10", [f"11:{hi}"], n_train=20, n_test=100, seed=0,
                           distinct=True)
            bin_time, listing = best_of_each(3, whole, lambda: language.lengths_in(1, hi),
                                             clock=time.process_time)
            row = f"{name:<10} {hi:>7} {bin_time:>9.3f} {listing:>12.5f}"
            if hi > args.baseline_up_to:
                print(f"{row} {'-':>20} {'-':>9}")
                continue
            start = time.process_time()
            baseline = counted_lengths(language, 1, hi)
            counted = time.process_time() - start
            assert baseline == language.lengths_in(1, hi).tolist()
            print(f"{row} {counted:>20.3f} {counted / max(listing, 1e-9):>8,.0f}x")
    extreme_counts([int(n) for n in args.extreme_ns.split(",")], args.extreme_baseline_up_to)


if __name__ == "__main__":
    main()
