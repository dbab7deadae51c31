"""Report pass 3c: cells -> the successes that a larger budget loses.

A cell *loses a success* when it reaches the threshold on its longest test bin at some budget b
and misses it at the report's budget (the epochs it trained, or ``--budget B``). The budget-b
reading (``crasp.train.budget.results_at_budget``) is the checkpoint with the best validation
among the first b epochs, so it is not monotone in b on a test bin: a later checkpoint that
validates better, on strings of the training lengths, can generalize worse to the test lengths,
and once validation selects it the earlier success is no longer the cell's answer. This is why a
budget curve (``budget_<encoding>.png``) can lose a depth it had; the curve is per setting, this
listing names the cells.

The paper's criterion, 100% validation exact match, cannot be lost: the selected checkpoint's
validation key is the maximum over a growing set of records, so its validation exact match
never falls as the budget grows. The listing is therefore about the longest-bin criterion only.

Only cells with per-epoch test records (``improvements`` in results.json) can be read at a
budget; the others are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from crasp.train.budget import results_at_budget, trained_epochs
from crasp.train.report.loading import CellResult, cell_order
from crasp.train.report.ordering import language_sort_key, posenc_sort_key

Reading = tuple[float, float]  # (exact match on the bin, validation exact match)


def readings(results: Mapping, bin_name: str, horizon: int | None = None
             ) -> list[Reading | None]:
    """The cell's reading at every budget from 1 epoch to the epochs it trained, or to
    ``horizon`` if that is smaller (item b - 1 is budget b); None where the run had recorded
    nothing on that bin by then; empty for a cell without improvement records."""
    if not results.get("improvements"):
        return []
    last = trained_epochs(results)
    if horizon is not None:
        last = min(last, horizon)
    found: list[Reading | None] = []
    for budget in range(1, last + 1):
        view = results_at_budget(results, budget)
        found.append(None if view is None or bin_name not in view["bins"] else
                     (view["bins"][bin_name]["exact_match"], view["val_exact_match"]))
    return found


def succeeds(reading: Reading | None, threshold: float) -> bool:
    return reading is not None and reading[0] >= threshold


@dataclass(frozen=True)
class LostSuccess:
    last_success: int          # the largest budget at which the cell still succeeds
    at_success: Reading
    final_budget: int
    at_final: Reading


def lost_success(by_budget: Sequence[Reading | None], threshold: float) -> LostSuccess | None:
    """The lost success in ``by_budget`` (from ``readings``): its final reading misses
    ``threshold`` and an earlier one reaches it. None otherwise."""
    if not by_budget or by_budget[-1] is None or succeeds(by_budget[-1], threshold):
        return None
    last_success = max((budget for budget, reading in enumerate(by_budget[:-1], start=1)
                        if succeeds(reading, threshold)), default=None)
    if last_success is None:
        return None
    return LostSuccess(last_success, by_budget[last_success - 1], len(by_budget), by_budget[-1])


def budget_losses(cells: Sequence[CellResult], threshold: float,
                  budget: int | None = None) -> list[dict]:
    """Per (encoding, language) with per-epoch records: how many cells are read, how many reach
    ``threshold`` on their longest bin at some budget up to ``budget`` (None: each run's own),
    and every one of those that misses it at that budget, by name with both readings. A cell
    that cannot answer for ``budget`` (``results_at_budget`` is None) is not read."""
    groups: dict[tuple[str, str], dict] = {}
    for cell in sorted(cells, key=cell_order):
        results = cell.results.to_json()
        if cell.long_bin is None or (budget is not None
                                     and results_at_budget(results, budget) is None):
            continue
        by_budget = readings(results, cell.long_bin, budget)
        if not by_budget:
            continue
        group = groups.setdefault((cell.architecture, cell.language), {
            "posenc": cell.architecture, "language": cell.language, "threshold": threshold,
            "bin": cell.long_bin, "budget": budget, "cells_read": 0, "reached": 0, "lost": []})
        group["cells_read"] += 1
        group["reached"] += any(succeeds(reading, threshold) for reading in by_budget)
        found = lost_success(by_budget, threshold)
        if found is not None:
            group["lost"].append({
                "id": cell.id, "depth": cell.depth, "seed": cell.seed, "hyper": cell.hyper,
                "last_success": found.last_success,
                "exact_match_at_success": found.at_success[0],
                "val_exact_match_at_success": found.at_success[1],
                "final_budget": found.final_budget, "exact_match_at_final": found.at_final[0],
                "val_exact_match_at_final": found.at_final[1]})
    return [groups[key] for key in sorted(
        groups, key=lambda k: (posenc_sort_key(k[0]), language_sort_key(k[1])))]
