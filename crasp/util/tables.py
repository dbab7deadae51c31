"""Plain-text tables for the command line: one formatter, so every table lines up the same way.

Columns are left-aligned and separated by two spaces; the last column is not padded (it may be
long free text) and no line ends in spaces. A standard-library helper of a dozen lines was
chosen over a table library: crasp's tables are small, and no dependency is needed for them.
"""

from __future__ import annotations

from typing import Sequence


def format_table(rows: Sequence[Sequence[str]], rule: bool = True) -> list[str]:
    """The lines of ``rows`` (the first is the header), with a dashed rule under the header
    when ``rule``."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join([cell.ljust(width) for cell, width in zip(row, widths)]
                       + [row[-1]]).rstrip() for row in rows]
    if rule:
        lines.insert(1, "  ".join("-" * width for width in [*widths, len(rows[0][-1])]).rstrip())
    return lines
