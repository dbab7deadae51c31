"""Report pass 3d: the cells that searched (``crasp sweep --search``, or a preset with a search)
-> the configuration each one chose, and what it tried.

The trainer chose on validation alone (``crasp.train.loop``: the first configuration to reach
100% validation exact match ends the search, else the best validation score is kept); this
pass only reads ``results.json`` (``best_trial``, ``selected``, ``trials``) and lays the choices
out per cell, so that a reader sees which width and learning rate each seed ended with.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from crasp.train.report.loading import CellResult, cell_order


def overrides_text(overrides: Mapping | None) -> str:
    """``{"d_model": 256, "lr": 1e-4}`` -> ``d_model=256 lr=0.0001``."""
    return " ".join(f"{key}={value}" for key, value in (overrides or {}).items()) or "–"


def search_choices(cells: Sequence[CellResult]) -> list[dict]:
    """One entry per cell whose config searched, in the report's cell order."""
    choices = []
    for cell in sorted(cells, key=cell_order):
        search = cell.config.get("search")
        if not search:
            continue
        results = cell.results
        trials = results.trials or []
        choices.append({
            "posenc": cell.architecture, "language": cell.language, "depth": cell.depth,
            "seed": cell.seed, "id": cell.id, "setting": cell.hyper,
            "trials_in_search": len(search), "trials_run": len(trials),
            "chosen_trial": results.best_trial, "selected": results.selected,
            "success": results.success, "val_exact_match": results.val_exact_match,
            "long_bin": cell.long_bin, "long_exact_match": cell.long_exact_match,
            "trials": [{"overrides": trial.get("overrides"), "epochs": trial.get("epochs"),
                        "val_exact_match": trial.get("val_exact_match"),
                        "stopped": trial.get("stopped")} for trial in trials],
        })
    return choices


def search_choice_lines(choices: Sequence[Mapping], pct) -> list[str]:
    """The Markdown section of the choices; ``pct`` formats a fraction as a percentage."""
    if not choices:
        return []
    lines = ["## Search: the configuration each cell chose", "",
             "Each cell tried its search's configurations in order and stopped at the first "
             "with 100% validation exact match; a cell that never reached it ran them all and "
             "kept the best on validation (the first of equals). Chosen on validation only; "
             "the test bin is shown beside it.", "",
             "| encoding | language | depth | seed | chosen configuration | trial | tried | "
             "validation % | longest bin % |",
             "|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for choice in choices:
        trial = choice["chosen_trial"]
        lines.append(
            f"| {choice['posenc']} | {choice['language']} | {choice['depth']} | {choice['seed']} "
            f"| {overrides_text(choice['selected'])} | "
            f"{'–' if trial is None else trial + 1} | "
            f"{choice['trials_run']} of {choice['trials_in_search']} | "
            f"{pct(choice['val_exact_match'])} | {pct(choice['long_exact_match'])} |")
    return lines + [""]
