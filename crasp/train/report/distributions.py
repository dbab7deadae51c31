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

import dataclasses
from typing import Mapping, Sequence

from crasp.train.report.aggregate import Aggregate, mean_std
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


def distribution_tables(posenc: str, languages: Mapping[str, Mapping[int, Aggregate]],
                        cells: Sequence[CellResult], threshold: float
                        ) -> dict[str, dict[str, dict[int, Aggregate]]]:
    """bin -> language -> depth -> the main table's ``Aggregate`` for the same setting and
    seeds, scored on that bin drawn from a named distribution (``LO:HI@NAME``) instead of the
    uniform one: what the distribution tables and heatmaps show, so that they compare like with
    like. ``all_pass``/``majority_pass`` are this setting's, on this bin."""
    chosen = {(language, depth): (a.hyper, set(a.seeds))
              for language, by_depth in languages.items() for depth, a in by_depth.items()}
    scores: dict[str, dict[tuple[str, int], list[float]]] = {}
    for cell in sorted(cells, key=cell_order):
        if cell.architecture != posenc or (cell.language, cell.depth) not in chosen:
            continue
        hyper, seeds = chosen[cell.language, cell.depth]
        if cell.hyper != hyper or cell.seed not in seeds:
            continue
        for name, metrics in cell.results.bins.items():
            if "@" in name and metrics.exact_match is not None:
                scores.setdefault(name, {}).setdefault((cell.language, cell.depth), []).append(
                    float(metrics.exact_match))
    tables: dict[str, dict[str, dict[int, Aggregate]]] = {}
    for name in sorted(scores):
        for language, by_depth in languages.items():
            for depth, main in by_depth.items():
                values = scores[name].get((language, depth))
                if not values:
                    continue
                mean, std = mean_std(values)
                passing = sum(v >= threshold for v in values)
                tables.setdefault(name, {}).setdefault(language, {})[depth] = dataclasses.replace(
                    main, mean=mean, std=std, n=len(values), values=values, bin=name,
                    all_pass=passing == len(values), majority_pass=passing * 2 > len(values))
    return tables


def totals(checks: Sequence[Mapping]) -> dict[tuple[str, str], tuple[int, int]]:
    """(architecture, bin) -> (cells passing the uniform bin, of which also this bin), summed
    over languages."""
    sums: dict[tuple[str, str], tuple[int, int]] = {}
    for check in checks:
        passing, also = sums.get((check["posenc"], check["bin"]), (0, 0))
        sums[check["posenc"], check["bin"]] = (passing + check["passing_uniform"],
                                               also + check["also_passing"])
    return sums
