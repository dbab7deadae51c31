"""Decompiled programs' length against the original's, for every compilable example.

Lines are the program's non-blank, non-comment lines (the alphabet line and one per
definition). For each example: the original's, the decompiler's own output (``readable=False``:
one definition per state class and per comparison) and the readable program
(``crasp.decompile.readable``, what ``crasp decompile`` writes), with the ratios to the
original, then the median and largest ratio of each.

    python benchmarks/bench_decompile_lines.py
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

import crasp  # noqa: E402
from crasp import syntax  # noqa: E402
from crasp.compiler import compile_program  # noqa: E402
from crasp.decompile.decompiling import decompile_model  # noqa: E402


def lines(text: str) -> int:
    return sum(1 for line in text.splitlines()
               if line.strip() and not line.strip().startswith("//"))


def compilable(program: crasp.Program) -> bool:
    return not any(isinstance(node, syntax.PositionTest)
                   or (isinstance(node, syntax.Count) and node.relation is not None)
                   for definition in program.definitions for node in syntax.walk(definition.expr))


def main() -> None:
    rows = []
    for path in sorted((ROOT / "examples").glob("*.crasp")):
        program = crasp.load_program(path)
        if not compilable(program):
            continue
        model = compile_program(program)
        raw = lines(decompile_model(model, readable=False).text)
        readable = lines(decompile_model(model).text)
        original = lines(path.read_text(encoding="utf-8"))
        rows.append((path.stem, original, raw, readable))
    print(f"{'example':16} {'original':>8} {'raw':>5} {'ratio':>6} {'readable':>8} {'ratio':>6}")
    for name, original, raw, readable in rows:
        print(f"{name:16} {original:8} {raw:5} {raw / original:6.2f} {readable:8} "
              f"{readable / original:6.2f}")
    for label, column in (("raw", 2), ("readable", 3)):
        ratios = [row[column] / row[1] for row in rows]
        print(f"{label}: median {statistics.median(ratios):.2f}x, largest {max(ratios):.2f}x "
              f"over {len(rows)} examples")


if __name__ == "__main__":
    main()
