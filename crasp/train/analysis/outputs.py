"""The output directory of ``crasp analyze``: only its own files, atomically, never over others.

A directory is ours when it holds the marker file ``MARKER``. A missing or empty directory is
taken; one holding anything without the marker is refused; one with the marker is replaced
(our files only) with ``--force`` and refused without it.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from crasp.atomic import write_bytes_atomic, write_text_atomic
from crasp.errors import CraspError

MARKER = ".crasp-analyze"


def claim(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise CraspError(f"{out}: exists and is not a directory; choose another -o")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise CraspError(f"{out}: holds files that crasp analyze did not write; "
                             f"choose an empty or new directory with -o")
        if not force:
            raise CraspError(f"{out}: already holds an analysis; use --force to replace it")
    write_text_atomic(out / MARKER, "written by crasp analyze\n")


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
