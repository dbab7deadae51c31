"""Report pass 3e: the cells the specs name that are not done -> how far each got.

A cell is done when its ``results.json`` exists. Until then its folder may already hold what
it ran: the finished parts of a search run in parts (``crasp sweep --split-trials``:
``cells/<id>/trials/<i>/results.json``, each configuration of the search alone, which
committed records keep), and the epochs of a run in progress (``metrics.jsonl``). This pass
reads both in every source directory, so that a reader of a partial grid sees which
configurations of a cell are done and what each reached, before the cell is assembled from
them (``crasp.train.search_parts``). A part found in several directories is read from the
first, as a cell is (``loading``). Validation only: the test bins belong to the assembled
cell, whose configuration is chosen on validation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from crasp.errors import CraspError
from crasp.train.search_parts import finished_part, trial_dir
from crasp.train.sweep import CELL_FILE, CELLS_DIR, epochs_reached, read_json
from crasp.train.report.loading import SweepData
from crasp.train.report.search_choices import overrides_text


def unfinished_cells(data: SweepData) -> list[dict]:
    """One entry per cell the specs name that no directory has finished, in the specs' order:
    its finished parts (trial, configuration, epochs, best epoch, validation, stop reason) and
    its runs in progress (one line each, naming the run's folder; a failed attempt is listed
    with the report's failed cells)."""
    return [_unfinished(identifier, data.dirs) for identifier in data.missing]


def _unfinished(identifier: str, dirs: Sequence[str]) -> dict:
    folders = [Path(d) / CELLS_DIR / identifier for d in dirs]
    folders = [folder for folder in folders if folder.is_dir()]
    config = next((found for folder in folders if (found := _config(folder))), {})
    search = config.get("search") or []
    parts: dict[int, dict] = {}
    for folder in folders:
        for trial in range(len(search)):
            if trial in parts:
                continue
            try:
                results = finished_part(folder, trial)
            except CraspError:  # unreadable, or another trial's run: not a part of this cell
                continue
            if results is not None:
                parts[trial] = {
                    "trial": trial, "dir": str(trial_dir(folder, trial)),
                    "overrides": search[trial], "epochs": results.epochs,
                    "best_epoch": results.best_epoch, "stopped": results.stopped,
                    "val_exact_match": results.val_exact_match, "success": results.success}
    running = []
    for folder in folders:
        running += [f"part {trial} {reached} ({trial_dir(folder, trial)})"
                    for trial in range(len(search)) if trial not in parts
                    if (reached := epochs_reached(trial_dir(folder, trial), config))]
        if reached := epochs_reached(folder, config, name_trial=len(search) > 1):
            running.append(f"{reached} ({folder})")
    return {"id": identifier, "trials_in_search": len(search),
            "parts": [parts[trial] for trial in sorted(parts)], "in_progress": running}


def _config(folder: Path) -> dict:
    """The resolved config the sweep recorded for the cell (``cell.json``), or {}."""
    try:
        record = read_json(folder / CELL_FILE)
    except (OSError, ValueError):
        return {}
    config = record.get("config") if isinstance(record, dict) else None
    return config if isinstance(config, dict) else {}


def _parts_done(cell: Mapping) -> str:
    """``0, 1, 2 of 4``: the finished parts of an unfinished cell's search, or ``""``."""
    if not cell["parts"]:
        return ""
    return (f"{', '.join(str(part['trial']) for part in cell['parts'])} of "
            f"{cell['trials_in_search']}")


def unfinished_lines(cells: Sequence[Mapping], pct) -> list[str]:
    """The Markdown lines under "Unfinished cells": a row per cell, then its finished parts;
    ``pct`` formats a fraction as a percentage."""
    if not cells:
        return []
    lines = ["| cell | finished parts | in progress |", "|---|---|---|"]
    for cell in cells:
        lines.append(f"| `{cell['id']}` | {_parts_done(cell) or '–'} | "
                     f"{'; '.join(cell['in_progress']) or '–'} |")
    parts = [(cell["id"], part) for cell in cells for part in cell["parts"]]
    if parts:
        lines += ["", "Their finished parts: each configuration of the cell's search run alone "
                  "(`crasp sweep --split-trials`); the cell is assembled, as one search would "
                  "give it, once every configuration its search needs is done. Validation only "
                  "(the search chooses on it).", "",
                  "| cell | part | configuration | epochs | best epoch | validation % | "
                  "stopped |", "|---|---:|---|---:|---:|---:|---|"]
        lines += [f"| `{identifier}` | {part['trial']} | {overrides_text(part['overrides'])} | "
                  f"{part['epochs']} | {part['best_epoch']} | {pct(part['val_exact_match'])} | "
                  f"{part['stopped']} |" for identifier, part in parts]
    return lines


def started_text(cells: Sequence[Mapping], most: int = 10) -> str:
    """``; started: ID (parts 0, 1 of 4 done; part 3 at epoch ...), ...``: the unfinished cells
    that have run something, for the error of a report with no finished cell; ``""`` if none."""
    started = []
    for cell in cells:
        notes = ([f"parts {_parts_done(cell)} done"] if cell["parts"] else []) \
            + cell["in_progress"]
        if notes:
            started.append(f"{cell['id']} ({'; '.join(notes)})")
    if not started:
        return ""
    more = f", and {len(started) - most} more" if len(started) > most else ""
    return f"; started: {', '.join(started[:most])}{more}"
