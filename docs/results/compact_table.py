"""A report's table of one encoding and bin in the compact form the results READMEs quote:
the mean exact match (%) over seeds, then (seeds; seeds >= the threshold), bold where every
seed reaches it, and the theory column (a depth, a proved range, or – where no theorem gives
one).

    python docs/results/compact_table.py REPORT_DIR [--posenc nope] [--bin 351:400@skewed]

REPORT_DIR is a `crasp report` output directory; the numbers are read from its report.json
(`tables`, or `distribution_tables` for a bin drawn from a named distribution), so they are the
report's own, rounded as report.md rounds them. Every depth table in docs/results/README.md and
second-edition/README.md is preceded by `<!-- compact_table.py ARGS -->` and is this script's
output for ARGS, checked by tests/test_results_tables.py; run it to refresh a table after a
report changes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from crasp.train.report.markdown import bound_cell, pct
from crasp.train.theory_bounds import depth_bound


def cell_text(entry: dict | None, threshold: float) -> str:
    if entry is None:
        return "–"
    values = entry["values"]
    text = f"{pct(entry['mean'])} ({len(values)}; {sum(v >= threshold for v in values)})"
    return f"**{text}**" if entry["all_pass"] else text


def compact_table(report_dir: Path, posenc: str = "nope", bin_name: str | None = None) -> str:
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    if bin_name is None or bin_name not in report.get("distribution_tables", {}).get(posenc, {}):
        languages = report["tables"][posenc]
        bins = {entry["bin"] for by_depth in languages.values() for entry in by_depth.values()}
        if bin_name is not None and bins != {bin_name}:
            raise SystemExit(f"{report_dir}: no table of {posenc} on {bin_name} "
                             f"(the main table is on {', '.join(sorted(bins))})")
    else:
        languages = report["distribution_tables"][posenc][bin_name]
    depths = report["depths"]
    lines = ["| | " + " | ".join(f"d{depth}" for depth in depths) + " | theory |",
             "|---|" + "---|" * len(depths) + "---|"]
    for language, by_depth in languages.items():
        cells = [cell_text(by_depth.get(str(depth)), report["threshold"]) for depth in depths]
        lines.append(f"| {language} | " + " | ".join(cells)
                     + f" | {bound_cell(depth_bound(language, posenc))} |")
    return "\n".join(lines) + "\n"


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report_dir", type=Path)
    parser.add_argument("--posenc", default="nope")
    parser.add_argument("--bin", dest="bin_name", default=None,
                        help="a test bin (default: the report's main table, the longest bin)")
    return parser.parse_args(argv)


def main() -> None:
    args = arguments()
    print(compact_table(args.report_dir, args.posenc, args.bin_name), end="")


if __name__ == "__main__":
    main()
