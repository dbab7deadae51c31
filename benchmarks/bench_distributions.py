"""Test-bin throughput by test distribution: one 10,000-string test bin of lengths 351-400.

For L_8 and E_5, prints the seconds for a whole test bin (``build_task`` with no training
strings: draw, oracle labels, token lists) drawn from each distribution, and the ratio to the
same bin drawn from the language's own generator (``uniform``, the baseline, timed in the same
invocation). The sparse-memory language memory-xor-1-2-4-8 is timed against L_8's uniform bin.

    python benchmarks/bench_distributions.py [--strings 10000] [--bin 351:400]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crasp.languages import BinSpec, build_task, get_language, parse_bin  # noqa: E402
from timing import best_of  # noqa: E402


def bin_seconds(name: str, spec: BinSpec, count: int) -> float:
    lang = get_language(name)
    return best_of(3, lambda: build_task(lang, spec.bounds, [spec], 0, count, 0.0, seed=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strings", type=int, default=10_000)
    parser.add_argument("--bin", default="351:400")
    args = parser.parse_args()
    lo, hi = parse_bin(args.bin)
    print(f"{args.strings:,} strings, lengths {lo}-{hi}, best of 3, one core")
    print(f"{'language':<20} {'distribution':<12} {'bin (s)':>8} {'x uniform':>10}")
    rows = [("L8", "L8", d) for d in ("uniform", "skewed", "extreme")]
    rows += [("E5", "E5", d) for d in ("uniform", "skewed", "extreme")]
    rows += [("memory-xor-1-2-4-8", "L8", "uniform")]
    baselines: dict[str, float] = {}
    for name, baseline, distribution in rows:
        seconds = bin_seconds(name, BinSpec(lo, hi, distribution), args.strings)
        if name == baseline and distribution == "uniform":
            baselines[name] = seconds
        print(f"{name:<20} {distribution:<12} {seconds:>8.2f} "
              f"{seconds / baselines[baseline]:>10.2f}")


if __name__ == "__main__":
    main()
