"""Sweep pass 3: the sweep directory and its records (file names, the specs, done or not).

The layout is in ``crasp.train.sweep``'s docstring; everything here writes atomically.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from crasp.util.atomic import write_text_atomic
from crasp.errors import CraspError
from crasp.util.json_shape import STRING, ListOf, Object, mismatch
from crasp.train.results import RESULTS_FILE
from crasp.train.run import METRICS_FILE
from crasp.train.search_parts import TRIALS_DIR, trial_dir
from crasp.train.sweep.cells import Cell, SweepSpec, canonical_json, jsonable

SWEEP_FILE = "sweep.json"
CELLS_DIR = "cells"
SESSIONS_DIR = "sessions"
CELL_FILE = "cell.json"
ERROR_FILE = "error.txt"
SWEEP_VERSION = 1
SWEEP_SHAPE = Object({"specs": ListOf(Object({
    "commands": ListOf(STRING), "cells": ListOf(Object({"id": STRING}, frozenset({"id"})))}))})
"""The keys of sweep.json that ``record_spec`` and the report index
(``crasp.util.json_shape``): a file that departs from them is named, never read or rewritten."""


def error_reason(text: str) -> str:
    """The line of an error.txt that says why the cell failed: its last non-blank one (the
    message, or a traceback's exception)."""
    return next((line for line in reversed(text.splitlines()) if line.strip()), "")


def cell_dir(out_dir: str | Path, cell: Cell | str) -> Path:
    return Path(out_dir) / CELLS_DIR / (cell if isinstance(cell, str) else cell.id)


def is_done(out_dir: str | Path, cell: Cell | str) -> bool:
    return (cell_dir(out_dir, cell) / RESULTS_FILE).is_file()


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def write_json_atomic(path: Path, value: Any) -> None:
    write_text_atomic(path, json.dumps(jsonable(value), indent=2, sort_keys=False) + "\n")


def record_spec(out_dir: str | Path, spec: SweepSpec, cells: Sequence[Cell],
                command: str | None) -> dict:
    """Add ``spec`` to ``DIR/sweep.json`` (atomically) unless it is already there.

    One directory may hold several specs (e.g. a NoPE sweep, then a RoPE/ALiBi one); the
    report reads every cell directory and uses the specs to count missing cells.
    """
    path = Path(out_dir) / SWEEP_FILE
    data = {"version": SWEEP_VERSION, "specs": []}
    if path.is_file():
        try:
            data = read_json(path)
        except (OSError, ValueError) as error:
            raise CraspError(f"{path}: unreadable sweep file ({error})") from None
        problem = mismatch(data, SWEEP_SHAPE)
        if problem:
            raise CraspError(f"{path}: not a sweep record ({problem}); mend it, or give the "
                             f"sweep another --out directory")
    key = spec.key()
    ids = [{"index": c.index, "id": c.id} for c in cells]
    for entry in data.get("specs", []):
        if canonical_json({k: entry.get(k) for k in spec.as_dict()}) == key:
            changed = False
            if command and command not in entry.setdefault("commands", []):
                entry["commands"].append(command)
                changed = True
            if entry.get("cells") != ids:  # the resolved configs changed: the new ids count
                entry.update(cells=ids, n_cells=len(cells), updated=utc_now())
                changed = True
            if changed:
                write_json_atomic(path, data)
            return entry
    entry = {**spec.as_dict(), "commands": [command] if command else [],
             "created": utc_now(), "n_cells": len(cells), "cells": ids}
    data.setdefault("specs", []).append(entry)
    data["version"] = SWEEP_VERSION
    write_json_atomic(path, data)
    return entry


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def sweep_status(out_dir: str | Path, cells: Sequence[Cell]) -> dict[str, list[Cell]]:
    """Split ``cells`` into done, failed (an error.txt and no results) and pending."""
    status: dict[str, list[Cell]] = {"done": [], "failed": [], "pending": []}
    for cell in cells:
        directory = cell_dir(out_dir, cell)
        if (directory / RESULTS_FILE).is_file():
            status["done"].append(cell)
        elif (directory / ERROR_FILE).is_file():
            status["failed"].append(cell)
        else:
            status["pending"].append(cell)
    return status


def unfinished_note(directory: str | Path, config: Mapping[str, Any],
                    split_trials: bool = False) -> str:
    """How far the cell in ``directory`` (resolved config ``config``) got when it is not done,
    as ``crasp sweep --dry-run`` says it in parentheses after ``todo``; ``""`` when nothing of
    it has run. With ``split_trials``, its finished parts (``parts 0, 1 of 4 done``) and how far
    each started part got (``part 3 at epoch 16 of 25, best validation 78.5%``); without, how
    far a whole run got (``trial 1 at ...`` in a search); and a failed last attempt with its
    traceback's file."""
    directory = Path(directory)
    search = config.get("search") or []
    notes = []
    if split_trials:
        started = sorted(int(path.name) for path in (directory / TRIALS_DIR).glob("*")
                         if path.name.isdigit() and int(path.name) < len(search))
        done = [trial for trial in started
                if (trial_dir(directory, trial) / RESULTS_FILE).is_file()]
        if done:
            notes.append(f"parts {', '.join(map(str, done))} of {len(search)} done")
        notes += [f"part {trial} {progress}" for trial in started if trial not in done
                  if (progress := epochs_reached(trial_dir(directory, trial), config))]
    if progress := epochs_reached(directory, config, name_trial=len(search) > 1):
        notes.append(progress)
    if (directory / ERROR_FILE).is_file():
        notes.append(f"the last attempt failed: {directory / ERROR_FILE}")
    return "; ".join(notes)


def epochs_reached(run_dir: Path, config: Mapping[str, Any], name_trial: bool = False) -> str:
    """``at epoch 16 of 25, best validation 78.5%``: how far the unfinished run in ``run_dir``
    got, from its ``metrics.jsonl`` (one line per finished epoch; ``epoch`` counts from 1
    within its trial), or ``""`` before its first epoch. The epochs are those of the last
    line's trial, which ``name_trial`` names (``trial 1 at epoch ...``: a search run whole);
    the best is the run's so far. A line cut off mid-write is left out."""
    try:
        text = (run_dir / METRICS_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # unreadable: the dry run lists the cell as todo
        return ""
    lines = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("epoch"), int):
            lines.append(record)
    if not lines:
        return ""
    last = lines[-1]
    search = config.get("search") or []
    trial = last.get("trial") if isinstance(last.get("trial"), int) else 0
    overrides = search[trial] if 0 <= trial < len(search) else {}
    epochs = overrides.get("epochs", config.get("epochs"))
    scores = [record["val_exact_match"] for record in lines
              if isinstance(record.get("val_exact_match"), (int, float))]
    note = f"at epoch {last['epoch']}" + (f" of {epochs}" if isinstance(epochs, int) else "")
    if scores:
        note += f", best validation {100 * max(scores):.1f}%"
    return f"trial {trial} {note}" if name_trial else note
