"""Compare two reports' cells.csv on the cells they share: how many agree to the last digit on
a bin's exact match, and how many pass or fail alike (>= the threshold), listing the others.

    python docs/results/compare_cells.py OLD/cells.csv NEW/cells.csv [--bin 351_400]
                                         [--threshold 0.99] [--key language,depth,posenc,seed]

Cells are matched by `cell_id` (the hash of the whole config) unless --key names the columns to
match on instead: runs whose configs differ in a field outside the key (another test-bin list,
another code version's fields) can still be compared seed by seed.
"""

from __future__ import annotations

import argparse
import csv


def cells_by_key(path: str, key: list[str]) -> dict[str, dict[str, str]]:
    """The rows of a cells.csv by their key; a key that several rows share is left out (and
    said), since which of them to compare would be a guess."""
    rows: dict[str, list[dict[str, str]]] = {}
    for row in csv.DictReader(open(path, encoding="utf-8")):
        rows.setdefault(" ".join(row[column] for column in key), []).append(row)
    shared = sorted(cell for cell, group in rows.items() if len(group) > 1)
    if shared:
        print(f"{path}: left out {len(shared)} keys that several rows share: {', '.join(shared)}")
    return {cell: group[0] for cell, group in rows.items() if len(group) == 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--bin", default="351_400", help="the bin's column suffix")
    parser.add_argument("--threshold", type=float, default=0.99)
    parser.add_argument("--key", default="cell_id",
                        help="comma-separated columns that identify a cell in both files")
    args = parser.parse_args()
    old, new = (cells_by_key(path, args.key.split(",")) for path in (args.old, args.new))
    column = f"exact_match_{args.bin}"
    common = sorted(set(old) & set(new))
    same = [cell for cell in common if old[cell][column] == new[cell][column]]
    flips = [cell for cell in common
             if (float(old[cell][column]) >= args.threshold)
             != (float(new[cell][column]) >= args.threshold)]
    print(f"{len(old)} and {len(new)} cells, {len(common)} in common; {column}: identical in "
          f"{len(same)}, pass/fail (>= {args.threshold:g}) alike in {len(common) - len(flips)}")
    for cell in flips:
        print(f"  {cell}: {old[cell][column]} -> {new[cell][column]}")


if __name__ == "__main__":
    main()
