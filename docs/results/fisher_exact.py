"""Two-sided Fisher exact test of two success counts: is m1 of n1 against m2 of n2 (seeds that
reach the threshold, say, in two families) more than chance would give?

    python docs/results/fisher_exact.py M1 N1 M2 N2

Conditioned on the margins, the first family's count is hypergeometric:
P(x) = C(n1, x) C(n2, m - x) / C(n1 + n2, m) with m = m1 + m2 successes in all. The two-sided
p-value sums P(x) over every x no more likely than the observed m1 (the usual convention, as in
R's fisher.test and scipy.stats.fisher_exact; a relative tolerance of 1e-9 keeps ties that
floating point would split). With the 3 to 5 seeds of a cell, only large differences can reach
p < 0.05: 5 of 5 against 0 of 5 gives 0.008, 3 of 5 against 0 of 5 gives 0.17.
"""

from __future__ import annotations

import argparse
from math import comb


def fisher_exact(m1: int, n1: int, m2: int, n2: int) -> float:
    if not (0 <= m1 <= n1 and 0 <= m2 <= n2):
        raise ValueError(f"counts out of range: {m1} of {n1}, {m2} of {n2}")
    total = m1 + m2

    def probability(x: int) -> float:
        return comb(n1, x) * comb(n2, total - x) / comb(n1 + n2, total)

    observed = probability(m1)
    support = range(max(0, total - n2), min(total, n1) + 1)
    return min(1.0, sum(p for p in map(probability, support) if p <= observed * (1 + 1e-9)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("m1", "n1", "m2", "n2"):
        parser.add_argument(name, type=int)
    args = parser.parse_args()
    p = fisher_exact(args.m1, args.n1, args.m2, args.n2)
    print(f"{args.m1} of {args.n1} against {args.m2} of {args.n2}: "
          f"two-sided Fisher exact p = {p:.3g}")


if __name__ == "__main__":
    main()
