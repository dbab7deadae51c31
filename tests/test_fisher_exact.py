"""docs/results/fisher_exact.py, which the results READMEs use to say whether two seed counts
differ by more than chance, against published values and a plain count over relabellings."""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "results" / "fisher_exact.py"
spec = importlib.util.spec_from_file_location("fisher_exact", SCRIPT)
fisher_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fisher_module)
fisher_exact = fisher_module.fisher_exact


def relabelling_p(m1: int, n1: int, m2: int, n2: int) -> Fraction:
    """The same p-value counted directly: of all ways to place the m1 + m2 successes among the
    n1 + n2 labelled seeds, the fraction whose first-family count is no more frequent than the
    observed one."""
    placements = list(combinations(range(n1 + n2), m1 + m2))
    counts: dict[int, int] = {}
    for placement in placements:
        first = sum(seed < n1 for seed in placement)
        counts[first] = counts.get(first, 0) + 1
    return Fraction(sum(c for c in counts.values() if c <= counts[m1]), len(placements))


def test_published_values():
    # Fisher's tea-tasting table, [[3, 1], [1, 3]]: p = 34/70 (R's fisher.test gives 0.4857)
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(34 / 70)
    assert fisher_exact(5, 5, 0, 5) == pytest.approx(2 / 252)
    assert fisher_exact(2, 5, 2, 5) == pytest.approx(1.0)


@pytest.mark.parametrize("n1,n2", [(3, 3), (3, 5), (5, 5), (2, 6)])
def test_every_table_of_small_families_matches_a_count_over_relabellings(n1, n2):
    for m1 in range(n1 + 1):
        for m2 in range(n2 + 1):
            assert fisher_exact(m1, n1, m2, n2) == pytest.approx(
                float(relabelling_p(m1, n1, m2, n2)))
            assert fisher_exact(m1, n1, m2, n2) == pytest.approx(fisher_exact(m2, n2, m1, n1))


def test_impossible_counts_are_refused():
    with pytest.raises(ValueError):
        fisher_exact(6, 5, 0, 5)
