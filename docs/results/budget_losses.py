"""Cells whose success does not last as the budget grows: a cell that reaches the threshold on a
bin at some budget B and misses it at a larger one.

    python docs/results/budget_losses.py SWEEP_DIR [SWEEP_DIR ...] [--bin 351:400]
                                         [--threshold 0.99]

SWEEP_DIR is a sweep directory or a family's committed records
(docs/results/second-edition/records/<family>). Each cell is read at every budget from 1 epoch to
the epochs it trained, by `crasp.train.budget.results_at_budget`, the reading `crasp report
--budget` uses: the checkpoint with the best validation among the first B epochs. That reading
is not monotone in B. A later checkpoint that validates better (on strings of the training
lengths) can generalize worse to the test lengths, and once it is selected the earlier success
is no longer the cell's answer. This is why a budget curve (`budget_<encoding>.png`) can lose a
depth it had: the report's curve is per setting, this script names the cells.

Prints one line per lost success (the cell, the last budget at which it succeeds, its readings
there and at its final budget, with validation beside each) and a count per language.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass

from crasp.train.budget import results_at_budget, trained_epochs
from crasp.train.report.loading import load_sweeps
from crasp.train.report.ordering import language_sort_key


@dataclass(frozen=True)
class LostSuccess:
    cell_id: str
    language: str
    last_success: int            # the largest budget at which the cell still succeeds
    at_success: float            # exact match on the bin then
    val_at_success: float
    final_budget: int
    at_final: float
    val_at_final: float


Reading = tuple[float, float]  # (exact match on the bin, validation exact match)


def readings(results: dict, bin_name: str) -> list[Reading | None]:
    """The cell's reading at every budget from 1 epoch to the epochs it trained (item B - 1 is
    budget B), None where the run recorded nothing on that bin by then; empty for a cell without
    improvement records."""
    if not results.get("improvements"):
        return []
    found: list[Reading | None] = []
    for budget in range(1, trained_epochs(results) + 1):
        view = results_at_budget(results, budget)
        found.append(None if view is None or bin_name not in view["bins"] else
                     (view["bins"][bin_name]["exact_match"], view["val_exact_match"]))
    return found


def succeeds(reading: Reading | None, threshold: float) -> bool:
    return reading is not None and reading[0] >= threshold


def lost_success(by_budget: list[Reading | None], cell_id: str, language: str,
                 threshold: float) -> LostSuccess | None:
    """The cell's lost success, if its final reading (``by_budget`` from ``readings``) misses
    ``threshold`` and an earlier budget's reaches it; None otherwise."""
    if not by_budget or by_budget[-1] is None or succeeds(by_budget[-1], threshold):
        return None
    last_success = max((budget for budget, reading in enumerate(by_budget[:-1], start=1)
                        if succeeds(reading, threshold)), default=None)
    if last_success is None:
        return None
    at_success, val_at_success = by_budget[last_success - 1]
    at_final, val_at_final = by_budget[-1]
    return LostSuccess(cell_id, language, last_success, at_success, val_at_success,
                       len(by_budget), at_final, val_at_final)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", metavar="SWEEP_DIR")
    parser.add_argument("--bin", dest="bin_name", default="351:400")
    parser.add_argument("--threshold", type=float, default=0.99)
    args = parser.parse_args(argv)
    data = load_sweeps(args.dirs)
    recorded = [(cell, readings(cell.results.to_json(), args.bin_name)) for cell in data.cells
                if cell.results.improvements]
    lost = [found for cell, by_budget in recorded
            if (found := lost_success(by_budget, cell.id, cell.language,
                                      args.threshold)) is not None]
    reached = Counter(cell.language for cell, by_budget in recorded
                      if any(succeeds(reading, args.threshold) for reading in by_budget))
    print(f"{len(recorded)} cells with per-epoch records; {sum(reached.values())} reach "
          f">= {args.threshold:g} on {args.bin_name} at some budget; {len(lost)} of them miss it "
          f"at their final budget")
    for item in lost:
        print(f"  {item.cell_id}: {100 * item.at_success:.1f}% "
              f"(val {100 * item.val_at_success:.1f}%) at {item.last_success} epochs -> "
              f"{100 * item.at_final:.1f}% "
              f"(val {100 * item.val_at_final:.1f}%) at {item.final_budget}")
    lost_by_language = Counter(item.language for item in lost)
    print("by language (lost / reached at some budget): " + ", ".join(
        f"{language} {lost_by_language[language]} / {reached[language]}"
        for language in sorted(reached, key=language_sort_key)))


if __name__ == "__main__":
    main()
