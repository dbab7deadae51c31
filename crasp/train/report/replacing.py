"""Report pass 5: the report's files take the place of an earlier report's, all or none.

A report directory is shared: besides the report's files it may hold what a person keeps
there (``docs/results`` holds its README and the scripts that made it; a family's report holds
its ``budget-6/`` report), which a report never touches. So an earlier report is not replaced
by swapping the directory but by swapping its set of files:

1. every new file is written (and fsynced) into a hidden staging directory inside ``OUT``,
   so a failure there (a full disk) leaves the earlier report as it was;
2. the earlier report's files (``earlier_report_files``: its fixed names, and the pictures
   its ``report.md`` shows) are renamed into a hidden retired directory inside ``OUT``, and
   the new ones renamed into ``OUT``: renames within one directory tree need no space and
   cannot half-happen; should one fail all the others are undone, so ``OUT`` holds one
   report's files, never a mix (report.md of one sweep beside cells.csv of another, or a
   heatmap of an encoding the new sweep lacks); a new file whose name a person's file holds
   is refused before anything moves;
3. the retired files are deleted.

An absent or empty ``OUT`` gets the new report with one rename
(``crasp.util.outputs.replace_directory``).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from fnmatch import fnmatch
from pathlib import Path
from typing import Callable

from crasp.util.outputs import REPORT, RETIRED_SUFFIX, STAGING_SUFFIX, OutputError, \
    claim_updatable, holds, replace_directory, writing

REPORT_FILES = ("cells.csv", "report.md", "report.json", "compiled_cache.json")
"""The fixed names a report writes; its pictures (``heatmap_*.png``, ``budget_*.png``) are
named by the sweep's encodings and bins, and each is shown in its ``report.md``."""
PICTURES = ("heatmap_*.png", "budget_*.png")
SHOWN_PICTURE = re.compile(r"!\[[^\]\n]*\]\(([^()/\s]+\.png)\)")
"""A picture that report.md shows, ``![nope heatmap](heatmap_nope.png)``: its file name."""


def earlier_report_files(out: Path) -> list[str]:
    """The files of the earlier report in ``out``: those of ``REPORT_FILES`` there, and the
    pictures its ``report.md`` shows (every picture a report writes, it shows). A person's
    file of a picture's pattern that no report shows (``heatmap_mine.png``) is theirs, and
    stays; so does every picture when ``report.md`` is gone (then it is not known which are
    the report's)."""
    try:
        markdown = (out / "report.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        markdown = ""
    shown = {name for name in SHOWN_PICTURE.findall(markdown)
             if any(fnmatch(name, picture) for picture in PICTURES)}
    return sorted(entry.name for entry in out.iterdir()
                  if entry.is_file() and not entry.is_symlink()
                  and (entry.name in REPORT_FILES or entry.name in shown))


def replace_report(out: Path, write: Callable[[Path], None]) -> None:
    """Put the report that ``write(directory)`` writes at ``out`` (absent, empty, or an
    earlier report), replacing an earlier report's files as a set."""
    claim_updatable(out, REPORT)
    if not holds(out, REPORT):
        replace_directory(out, REPORT, True, write)
        return
    with writing(out, REPORT):
        staging = Path(tempfile.mkdtemp(dir=out, prefix=".report.", suffix=STAGING_SUFFIX))
        try:
            write(staging)
            retired = Path(tempfile.mkdtemp(dir=out, prefix=".report.", suffix=RETIRED_SUFFIX))
            try:
                _swap(out, staging, retired)
            finally:
                shutil.rmtree(retired, ignore_errors=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _swap(out: Path, staging: Path, retired: Path) -> None:
    """Move the old report files from ``out`` to ``retired`` and the new ones from ``staging``
    to ``out``; on any failure, move back everything moved so far (last moved, first back).
    A new file would never take the place of one that is not the earlier report's: that is
    refused, before anything moves."""
    old = earlier_report_files(out)
    new = sorted(os.listdir(staging))
    taken = [name for name in new if name not in old and os.path.lexists(out / name)]
    if taken:
        is_, it = ("is", "it") if len(taken) == 1 else ("are", "them")
        raise OutputError(f"refusing to refresh the report in {out}: {', '.join(taken)} "
                          f"there {is_} not the earlier report's (its report.md does not show "
                          f"{it}), and crasp does not replace a file it did not write; move "
                          f"{it} away")
    moves = [(out / name, retired / name) for name in old]
    moves += [(staging / name, out / name) for name in new]
    done: list[tuple[Path, Path]] = []
    try:
        for source, destination in moves:
            rename(source, destination)
            done.append((source, destination))
    except BaseException:
        for source, destination in reversed(done):
            os.rename(destination, source)
        raise


def rename(source: Path, destination: Path) -> None:
    """One step of the swap (a name of its own so that a test can make one fail)."""
    os.rename(source, destination)
