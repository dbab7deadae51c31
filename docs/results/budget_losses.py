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


def reading(results: dict, budget: int, bin_name: str) -> tuple[float, float] | None:
    """(exact match on the bin, validation exact match) at ``budget`` epochs, or None where the
    run recorded nothing on that bin by then."""
    view = results_at_budget(results, budget)
    if view is None or bin_name not in view["bins"]:
        return None
    return view["bins"][bin_name]["exact_match"], view["val_exact_match"]


def lost_success(results: dict, cell_id: str, language: str, bin_name: str,
                   threshold: float) -> LostSuccess | None:
    """The cell's lost success, if its final reading misses ``threshold`` on ``bin_name`` and an
    earlier budget's reaches it; None otherwise (also for a cell without improvement records)."""
    if not results.get("improvements"):
        return None
    final_budget = trained_epochs(results)
    final = reading(results, final_budget, bin_name)
    if final is None or final[0] >= threshold:
        return None
    for budget in range(final_budget - 1, 0, -1):
        earlier = reading(results, budget, bin_name)
        if earlier is not None and earlier[0] >= threshold:
            return LostSuccess(cell_id, language, budget, earlier[0], earlier[1], final_budget,
                               final[0], final[1])
    return None


def ever_reaches(results: dict, bin_name: str, threshold: float) -> bool:
    """Whether the cell reaches ``threshold`` on ``bin_name`` at some budget it can answer for."""
    for budget in range(1, trained_epochs(results) + 1):
        found = reading(results, budget, bin_name)
        if found is not None and found[0] >= threshold:
            return True
    return False


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", metavar="SWEEP_DIR")
    parser.add_argument("--bin", dest="bin_name", default="351:400")
    parser.add_argument("--threshold", type=float, default=0.99)
    args = parser.parse_args(argv)
    data = load_sweeps(args.dirs)
    recorded = [(cell, cell.results.to_json()) for cell in data.cells
                if cell.results.improvements]
    lost = [found for cell, results in recorded
            if (found := lost_success(results, cell.id, cell.language, args.bin_name,
                                        args.threshold)) is not None]
    reached = Counter(cell.language for cell, results in recorded
                      if ever_reaches(results, args.bin_name, args.threshold))
    print(f"{len(recorded)} cells with per-epoch records; {sum(reached.values())} reach "
          f">= {args.threshold:g} on {args.bin_name} at some budget; {len(lost)} of them miss it "
          f"at their final budget")
    for item in lost:
        print(f"  {item.cell_id}: {100 * item.at_success:.1f}% (val {100 * item.val_at_success:.1f}%)"
              f" at {item.last_success} epochs -> {100 * item.at_final:.1f}% "
              f"(val {100 * item.val_at_final:.1f}%) at {item.final_budget}")
    lost_by_language = Counter(item.language for item in lost)
    print("by language (lost / reached at some budget): " + ", ".join(
        f"{language} {lost_by_language[language]} / {reached[language]}"
        for language in sorted(reached, key=language_sort_key)))


if __name__ == "__main__":
    main()
