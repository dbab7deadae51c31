"""The one-head boundary, before and after the search: for L3..L8, the smallest depth at which a
majority of seeds succeeds, by crasp's criterion (>= 99% exact match on 351:400; the
``smallest_depth_majority`` of each family's report.json) and by the paper's (100% validation
exact match; computed here from cells.csv: more than half of a depth's seeds), for the second
edition's single configuration (one-head, 20 epochs) and the third edition's search
(search-one-head), beside the theory's k - 2. Prints the table and writes boundary.png.

    python docs/results/third-edition/boundary.py

"none" is a language where no depth of the family's grid has a majority (the second edition
ran depths 1..6; the search k - 3..k).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAMILIES = {"second edition, one configuration": HERE.parent / "second-edition" / "one-head",
            "third edition, the search": HERE / "search-one-head"}
LANGUAGES = ["L3", "L4", "L5", "L6", "L7", "L8"]


def by_report(family: Path) -> dict[str, int | None]:
    report = json.loads((family / "report.json").read_text())
    return {row["language"]: row["smallest_depth_majority"] for row in report["summary"]}


def by_validation(family: Path) -> dict[str, int | None]:
    fits = defaultdict(list)   # (language, depth) -> [whether each seed fit validation]
    for row in csv.DictReader(open(family / "cells.csv", encoding="utf-8")):
        fits[row["language"], int(row["depth"])].append(float(row["val_exact_match"]) == 1.0)
    first = {}
    for (language, depth), seeds in sorted(fits.items()):
        if 2 * sum(seeds) > len(seeds) and language not in first:
            first[language] = depth
    return {language: first.get(language) for language, _ in fits}


def curves() -> dict[str, dict[str, int | None]]:
    lines = {"theory, k - 2": {language: int(language[1:]) - 2 for language in LANGUAGES}}
    for name, family in FAMILIES.items():
        lines[f"{name}: >= 99% on 351:400"] = by_report(family)
        lines[f"{name}: 100% validation"] = by_validation(family)
    return lines


def table(lines: dict[str, dict[str, int | None]]) -> list[str]:
    """The printed table: one row per curve, "-" where the family has no cell of a language."""
    rows = ["first majority depth".ljust(58) + "".join(f"{k:>6}" for k in LANGUAGES)]
    for name, first in lines.items():
        cells = [("none" if first[k] is None else first[k]) if k in first else "-"
                 for k in LANGUAGES]
        rows.append(name.ljust(58) + "".join(f"{cell:>6}" for cell in cells))
    return rows


def main() -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = curves()
    print("\n".join(table(lines)))
    figure, axes = plt.subplots(figsize=(7, 4.5))
    styles = ["k--", "C0o-", "C0s:", "C1o-", "C1s:"]
    top = 9
    for (name, first), style in zip(lines.items(), styles):
        known = [(int(language[1:]), first[language]) for language in LANGUAGES
                 if language in first]
        xs = [k for k, _ in known]
        ys = [top if depth is None else depth for _, depth in known]
        axes.plot(xs, ys, style, label=name, alpha=0.85)
    axes.axhline(top, color="0.8", lw=0.8)
    axes.text(5.6, top + 0.15, "no majority at any depth run", fontsize=8, color="0.4")
    axes.set_xlabel("k (language L_k)")
    axes.set_ylabel("smallest depth where most seeds succeed")
    axes.set_title("One head per layer, NoPE: where a majority of seeds first succeeds")
    axes.set_ylim(0, top + 1)
    axes.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    figure.savefig(HERE / "boundary.png", dpi=120)


if __name__ == "__main__":
    main()
