"""Sweep pass 3: the sweep directory and its records (file names, the specs, done or not).

The layout is in ``crasp.train.sweep``'s docstring; everything here writes atomically.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Sequence

from crasp.util.atomic import write_text_atomic
from crasp.errors import CraspError
from crasp.train.results import RESULTS_FILE
from crasp.train.sweep.cells import Cell, SweepSpec, canonical_json, jsonable

SWEEP_FILE = "sweep.json"
CELLS_DIR = "cells"
SESSIONS_DIR = "sessions"
CELL_FILE = "cell.json"
ERROR_FILE = "error.txt"
SWEEP_VERSION = 1


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
