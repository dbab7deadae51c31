"""Do the cells that length-generalize on the paper's test distribution also do on the harder
ones? Per (architecture, language) and per test bin drawn from a named distribution
(``351:400@skewed``, docs/languages.md), the cells (every seed and setting) that reach the
threshold on their longest uniform bin, how many of them reach it on the distribution's bin as
well, and the others by name.

Why the report computes this and not only the mean tables: a mean over seeds of 90% on
``@extreme`` can be one seed at 70% or every seed at 90%, and the question a reviewer asks is
whether *a model that succeeds by the paper's criterion* has learned the language or leans on the
uniform composition of block lengths, which is a statement about individual cells.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from crasp.train.report.loading import CellResult, cell_order
from crasp.train.report.ordering import language_sort_key, posenc_sort_key


def distribution_checks(cells: Sequence[CellResult], threshold: float) -> list[dict]:
    """One entry per (architecture, language, distribution bin) with cells that pass the
    longest uniform bin: ``passing_uniform`` (how many), ``also_passing`` (how many of those
    reach ``threshold`` on the distribution bin too) and ``failing`` (the others, by id, depth,
    seed and both scores). Cells without the distribution bin are not counted."""
    groups: dict[tuple[str, str, str], list[tuple[CellResult, float]]] = {}
    for cell in cells:
        uniform = cell.long_exact_match
        if uniform is None or uniform < threshold:
            continue
        for name, scores in cell.results.bins.items():
            if "@" in name and scores.exact_match is not None:
                key = (cell.architecture, cell.language, name)
                groups.setdefault(key, []).append((cell, float(scores.exact_match)))
    checks = []
    for (posenc, language, name), members in sorted(
            groups.items(),
            key=lambda i: (posenc_sort_key(i[0][0]), language_sort_key(i[0][1]), i[0][2])):
        failing = sorted((pair for pair in members if pair[1] < threshold),
                         key=lambda pair: cell_order(pair[0]))
        checks.append({
            "posenc": posenc, "language": language, "bin": name, "threshold": threshold,
            "uniform_bin": members[0][0].long_bin,
            "passing_uniform": len(members),
            "also_passing": len(members) - len(failing),
            "failing": [{"id": cell.id, "depth": cell.depth, "seed": cell.seed,
                         "hyper": cell.hyper, "uniform_exact_match": cell.long_exact_match,
                         "exact_match": score} for cell, score in failing],
        })
    return checks


def totals(checks: Sequence[Mapping]) -> dict[tuple[str, str], tuple[int, int]]:
    """(architecture, bin) -> (cells passing the uniform bin, of which also this bin), summed
    over languages."""
    sums: dict[tuple[str, str], tuple[int, int]] = {}
    for check in checks:
        passing, also = sums.get((check["posenc"], check["bin"]), (0, 0))
        sums[check["posenc"], check["bin"]] = (passing + check["passing_uniform"],
                                               also + check["also_passing"])
    return sums
