"""Report pass 3: cells -> per (encoding, language, depth) aggregates, summaries, theory checks
and budget curves (the selection rules are in ``crasp.train.report``'s docstring).
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

from crasp.errors import CraspError
from crasp.train.budget import trained_epochs
from crasp.train.theory_bounds import depth_bound
from crasp.train.report.loading import CellResult, SweepData, at_budget, cell_order
from crasp.train.report.ordering import language_sort_key, posenc_sort_key

DEFAULT_THRESHOLD = 0.99


@dataclass
class Aggregate:
    """One (encoding, language, depth) entry: the selected setting over seeds."""

    mean: float
    std: float
    n: int
    values: list[float]
    seeds: list[int]
    hyper: dict
    val_mean: float | None
    settings: int               # how many hyperparameter settings were tried
    all_pass: bool              # some setting: every seed >= threshold
    majority_pass: bool         # some setting: more than half of its seeds >= threshold
    bin: str | None
    epochs_mean: float | None = None
    wall_time_s: float = 0.0

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, std


def aggregate(cells: Sequence[CellResult], threshold: float = DEFAULT_THRESHOLD,
              select: str = "val") -> dict[str, dict[str, dict[int, Aggregate]]]:
    """posenc -> language -> depth -> Aggregate (best setting by ``select``: long or val)."""
    if select not in ("long", "val"):
        raise CraspError(f"select must be 'long' or 'val', not {select!r}")
    groups: dict[tuple, dict[str, list[CellResult]]] = {}
    for cell in cells:
        if cell.long_exact_match is None:
            continue
        key = (cell.architecture, cell.language, cell.depth)
        groups.setdefault(key, {}).setdefault(cell.hyper_key, []).append(cell)
    table: dict[str, dict[str, dict[int, Aggregate]]] = {}
    for (posenc, language, depth), settings in groups.items():
        best, best_score = None, None
        any_all = any_majority = False
        for hyper_key, members in settings.items():
            members = sorted(members, key=lambda c: c.seed)
            values = [c.long_exact_match for c in members]
            mean, std = mean_std(values)
            vals = [c.val_exact_match for c in members if c.val_exact_match is not None]
            val_mean = statistics.fmean(vals) if vals else None
            passing = sum(v >= threshold for v in values)
            any_all |= passing == len(values)
            any_majority |= passing * 2 > len(values)
            score = (mean if select == "long" else (val_mean if val_mean is not None else -1.0),
                     mean, -std)
            if best_score is None or score > best_score:
                epochs = [float(c.results.epochs) for c in members
                          if isinstance(c.results.epochs, (int, float))]
                best_score = score
                best = Aggregate(mean, std, len(values), values, [c.seed for c in members],
                                 dict(members[0].hyper), val_mean, len(settings), False, False,
                                 members[0].long_bin,
                                 statistics.fmean(epochs) if epochs else None,
                                 sum(float(c.results.wall_time_s or 0.0)
                                     for c in members))
        best.all_pass, best.majority_pass = any_all, any_majority
        table.setdefault(posenc, {}).setdefault(language, {})[depth] = best
    return {p: {l: dict(sorted(d.items()))
                for l, d in sorted(langs.items(), key=lambda i: language_sort_key(i[0]))}
            for p, langs in sorted(table.items(), key=lambda i: posenc_sort_key(i[0]))}


def summarize(table: Mapping[str, Mapping[str, Mapping[int, Aggregate]]],
              compiled: Mapping[str, dict], threshold: float) -> list[dict]:
    """One summary per (encoding, language): smallest generalizing depth vs theory vs compiled.

    ``theory_depth`` is the depth a theorem fixes exactly (``theory_bounds``), else None;
    ``theory_bound`` states what is known (a proved range, or nothing)."""
    lines = []
    for posenc, languages in table.items():
        for language, depths in languages.items():
            all_depths = [d for d, a in depths.items() if a.all_pass]
            majority_depths = [d for d, a in depths.items() if a.majority_pass]
            bound = depth_bound(language, posenc)
            depth_predicted = bound.upper if bound is not None and bound.exact else None
            reference = compiled.get(language) or {}
            smallest_all = min(all_depths) if all_depths else None
            smallest_majority = min(majority_depths) if majority_depths else None
            tried = sorted(depths)
            # Non-monotone: some depth above the smallest passing one fails.
            gaps = [d for d in tried if smallest_all is not None and d > smallest_all
                    and d not in all_depths]
            agrees = None
            if depth_predicted is not None:
                if smallest_all is not None:
                    agrees = smallest_all == depth_predicted
                elif tried and max(tried) < depth_predicted:
                    agrees = None   # the sweep did not reach the predicted depth
                else:
                    agrees = False
            lines.append({
                "posenc": posenc, "language": language, "threshold": threshold,
                "bin": next(iter(depths.values())).bin if depths else None,
                "seeds": max((a.n for a in depths.values()), default=0),
                "seeds_min": min((a.n for a in depths.values()), default=0),
                "depths_tried": tried,
                "smallest_depth_all_seeds": smallest_all,
                "smallest_depth_majority": smallest_majority,
                "passing_depths_all_seeds": sorted(all_depths),
                "fails_above_smallest": gaps,
                "theory_depth": depth_predicted,
                "theory_bound": None if bound is None else {
                    "lower": bound.lower, "upper": bound.upper, "statement": bound.statement},
                "compiled_depth": reference.get("depth"),
                "compiled_status": reference.get("status"),
                "compiled_all_perfect": reference.get("all_perfect"),
                "agrees_with_theory": agrees,
            })
    return lines


def theory_checks(cells: Sequence[CellResult], threshold: float) -> list[dict]:
    """Per (encoding, language) that a theorem bounds: every cell below the proved lower bound
    that succeeds, every cell at or above the proved upper bound that fails, and, where the
    bounds differ, every cell between them that succeeds (against the conjecture that the
    upper bound is exact), under each of
    the two criteria (≥ ``threshold`` exact match on the longest test bin; 100% validation exact
    match, the paper's), with the number of cells (one per seed and setting) on each side."""
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for cell in cells:
        if cell.long_exact_match is not None and depth_bound(cell.language, cell.architecture):
            groups.setdefault((cell.architecture, cell.language), []).append(cell)
    checks = []
    for (posenc, language), members in sorted(
            groups.items(), key=lambda i: (posenc_sort_key(i[0][0]), language_sort_key(i[0][1]))):
        bound = depth_bound(language, posenc)
        below = [c for c in members if c.depth < bound.lower]
        above = [c for c in members if c.depth >= bound.upper]
        # depths the proofs leave open (E_k: k - 2 proved necessary, k - 1 sufficient): the
        # conjecture that the upper bound is exact says no cell here succeeds
        between = [c for c in members if bound.lower <= c.depth < bound.upper]

        def entry(cell: CellResult) -> dict:
            return {"id": cell.id, "depth": cell.depth, "seed": cell.seed, "hyper": cell.hyper,
                    "long_exact_match": cell.long_exact_match,
                    "val_exact_match": cell.val_exact_match}

        def closest(side: list[CellResult], score) -> dict | None:
            return entry(max(side, key=lambda c: (score(c), c.id))) if side else None

        def succeeds(cell: CellResult) -> dict[str, bool]:
            return {"long": cell.long_exact_match >= threshold,
                    "val": (cell.val_exact_match or 0.0) >= 1.0}

        checks.append({
            "posenc": posenc, "language": language, "threshold": threshold,
            "bound": {"lower": bound.lower, "upper": bound.upper, "statement": bound.statement},
            "cells_below": len(below), "cells_at_or_above": len(above),
            # how near the boundary came to being crossed, when nothing crossed it
            "closest_below": {"long": closest(below, lambda c: c.long_exact_match),
                              "val": closest(below, lambda c: c.val_exact_match or 0.0)},
            "below_bound_succeed": {criterion: [entry(c) for c in sorted(below, key=cell_order)
                                                if succeeds(c)[criterion]]
                                    for criterion in ("long", "val")},
            "at_or_above_bound_fail": {criterion: [entry(c) for c in sorted(above, key=cell_order)
                                                   if not succeeds(c)[criterion]]
                                       for criterion in ("long", "val")},
            "cells_between": len(between),
            "between_bounds_succeed": {criterion: [entry(c) for c in sorted(between,
                                                                            key=cell_order)
                                                   if succeeds(c)[criterion]]
                                       for criterion in ("long", "val")},
        })
    return checks


def budget_curves(data: SweepData, threshold: float, select: str) -> dict[str, dict]:
    """posenc -> {"budgets": [1..B], "languages": {language: {"majority": [...], "all": [...],
    "contradictions": [...]}}}: per budget, the smallest depth at which a majority (all) of a
    setting's seeds succeed, None where none does, and the number of cells below a proved lower
    bound that succeed on the longest bin. Only cells with improvement records count; the
    budgets run from 1 to the most epochs any of them trained.

    The tables are computed only at the budgets where some cell's reading can change
    (``_changes``) and carried to the budgets after, which give the same tables: the cost grows
    with the number of improvement records, not with the epochs a run claims."""
    recorded = [cell for cell in data.cells if cell.results.improvements]
    if not recorded:
        return {}
    horizon = max(trained_epochs(cell.results.to_json()) for cell in recorded)
    budgets = list(range(1, horizon + 1))
    changes = _changes(recorded, horizon)
    curves: dict[str, dict] = {}
    for start, end in zip(changes, changes[1:] + [horizon + 1]):
        view = at_budget(dataclasses.replace(data, cells=recorded), start)
        table = aggregate(view.cells, threshold, select)
        contradictions = {(c["posenc"], c["language"]): len(c["below_bound_succeed"]["long"])
                          for c in theory_checks(view.cells, threshold)}
        for posenc, languages in table.items():
            for language, by_depth in languages.items():
                curve = curves.setdefault(posenc, {"budgets": budgets, "languages": {}})[
                    "languages"].setdefault(language, {"majority": [None] * len(budgets),
                                                       "all": [None] * len(budgets),
                                                       "contradictions": [0] * len(budgets)})
                span = slice(start - 1, end - 1)
                curve["majority"][span] = [min(
                    (d for d, a in by_depth.items() if a.majority_pass), default=None)] * (
                    end - start)
                curve["all"][span] = [min((d for d, a in by_depth.items() if a.all_pass),
                                          default=None)] * (end - start)
                curve["contradictions"][span] = [
                    contradictions.get((posenc, language), 0)] * (end - start)
    return curves


def _changes(cells: Sequence[CellResult], horizon: int) -> list[int]:
    """The budgets up to ``horizon`` at which some cell's reading (``results_at_budget``: the
    record selected, whether the cell can answer) may differ from the budget before: 1, every
    improvement record's epoch, and for a run that used up its configured epochs C, C + 1
    (where it stops answering)."""
    changes = {1}
    for cell in cells:
        results = cell.results.to_json()
        changes.update(record["epoch"] for record in results["improvements"])
        if results.get("stopped") == "max_epochs":
            changes.add(int((results.get("config") or {}).get("epochs") or 0) + 1)
    return sorted(change for change in changes if 1 <= change <= horizon)
