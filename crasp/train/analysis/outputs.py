"""The output directory of ``crasp analyze`` and its files.

The directory is written as a whole through ``crasp.util.outputs.replace_directory``: a missing or
empty place is taken, an earlier analysis (recognised by its marker ``MARKER``) is replaced with
``--force``, anything else is refused, naming what is there.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Callable

from crasp.util.atomic import write_bytes_atomic, write_text_atomic
from crasp.util.outputs import ANALYSIS, replace_directory

MARKER = ANALYSIS.marker


def write_directory(out: Path, force: bool, write: Callable[[Path], dict]) -> dict:
    """Run ``write(staging)`` and put its directory at ``out`` (``crasp.util.outputs``: a new or
    empty place, or with ``force`` an earlier analysis, replaced whole and atomically); returns
    what ``write`` returned."""
    result: dict = {}

    def staged(staging: Path) -> None:
        write_json(staging / MARKER, {"kind": "crasp analyze"})
        result.update(write(staging))

    replace_directory(out, ANALYSIS, force, staged)
    return result


def write_json(path: Path, value) -> None:
    write_text_atomic(path, json.dumps(value, indent=2) + "\n")


def write_csv(path: Path, rows: list[dict]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else [])
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(path, buffer.getvalue())


def write_figure(path: Path, figure) -> None:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    write_bytes_atomic(path, buffer.getvalue())
