"""Compare two reports' cells.csv on the cells they share: how many agree to the last digit on
a bin's exact match, and how many pass or fail alike (>= the threshold), listing the others.

    python docs/results/compare_cells.py OLD/cells.csv NEW/cells.csv [--bin 351_400]
                                         [--threshold 0.99]
"""

from __future__ import annotations

import argparse
import csv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--bin", default="351_400", help="the bin's column suffix")
    parser.add_argument("--threshold", type=float, default=0.99)
    args = parser.parse_args()
    old, new = ({row["cell_id"]: row for row in csv.DictReader(open(path, encoding="utf-8"))}
                for path in (args.old, args.new))
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
