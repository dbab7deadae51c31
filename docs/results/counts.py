"""The counts the results READMEs quote, recomputed from the committed reports and CSVs.

    python docs/results/counts.py distributions REPORT_DIR [--leave-out L3]
    python docs/results/counts.py below REPORT_DIR
    python docs/results/counts.py fragile REPORT_DIR [REPORT_DIR ...]
    python docs/results/counts.py hours CELLS_CSV [--seeds 0:2]
    python docs/results/counts.py means CELLS_CSV LANGUAGE:DEPTH [LANGUAGE:DEPTH ...]
    python docs/results/counts.py settings CELLS_CSV [CELLS_CSV ...] --by FIELD[,FIELD] --bin A:B
        [--seeds 0:1] [--places L4:1,L4:2]

* ``distributions``: of the cells that reach the threshold on the uniform longest bin, how many
  also reach it on each bin drawn from another distribution (``distribution_checks`` of
  report.json), over every language and without the languages ``--leave-out`` names.
* ``below``: per language with a proved depth bound, the cells below the proved lower bound and
  the cells below depth k - 2 (``theory_checks`` and ``cells`` of report.json), and how many of
  each succeed on the longest bin.
* ``fragile``: every seed count that one string would change (``seed_counts``, computed by
  ``crasp report``; crasp.train.report.seed_counts).
* ``hours``: hours of training summed over the cells of a cells.csv (``wall_time_s``), for the
  seeds given.
* ``means``: the mean exact match (%) on 351-400 of NoPE cells at the given places.
* ``settings``: the cells of one or more cells.csv files (NoPE) grouped by language, depth and
  the fields ``--by`` names (a setting: lr and batch_size, or train_bin), with per group the
  seeds, how many reach 100% validation and after how many epochs, and the exact match (%)
  per seed on the bin ``--bin`` with how many reach 99%; ``--seeds`` and ``--places`` (a
  comma list of LANGUAGE:DEPTH) keep only those cells.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
from pathlib import Path


def report(directory: str) -> dict:
    return json.loads((Path(directory) / "report.json").read_text(encoding="utf-8"))


def distributions(directory: str, leave_out: list[str]) -> list[str]:
    lines = []
    totals: dict[tuple, list[int]] = {}
    for check in report(directory)["distribution_checks"]:
        for scope in ("all", "rest"):
            if scope == "rest" and check["language"] in leave_out:
                continue
            key = (check["posenc"], check["bin"], scope)
            total = totals.setdefault(key, [0, 0])
            total[0] += check["also_passing"]
            total[1] += check["passing_uniform"]
    for (posenc, name, scope), (also, passing) in totals.items():
        languages = "every language" if scope == "all" else f"without {', '.join(leave_out)}"
        lines.append(f"{posenc} {name}: {also} of {passing} ({languages})")
    return lines


def k_of(language: str) -> int:
    return int(re.sub(r"\D", "", language))


def below(directory: str, threshold: float = 0.99) -> list[str]:
    data = report(directory)
    lines, sums = [], [0, 0, 0, 0]
    for check in data["theory_checks"]:
        language, lower = check["language"], check["bound"]["lower"]
        cells = [row for row in data["cells"] if row["language"] == language
                 and row["posenc"] == check["posenc"]]
        under_bound = [row for row in cells if row["depth"] < lower]
        under_k2 = [row for row in cells if row["depth"] < k_of(language) - 2]
        counts = [len(under_bound), sum(r["long_exact_match"] >= threshold for r in under_bound),
                  len(under_k2), sum(r["long_exact_match"] >= threshold for r in under_k2)]
        sums = [a + b for a, b in zip(sums, counts)]
        lines.append(f"{check['posenc']} {language}: below the proved lower bound {lower}: "
                     f"{counts[1]} of {counts[0]} succeed; below k - 2 = {k_of(language) - 2}: "
                     f"{counts[3]} of {counts[2]}")
    lines.append(f"total: below the proved lower bounds {sums[1]} of {sums[0]} succeed; "
                 f"below k - 2 {sums[3]} of {sums[2]}")
    return lines


def fragile(directories: list[str]) -> list[str]:
    lines = []
    for directory in directories:
        for entry in report(directory)["seed_counts"]:
            if not entry["fragile"]:
                continue
            verdicts = [name for name, key in (("majority", "majority_fragile"),
                                               ("every seed", "all_fragile")) if entry[key]]
            seeds = ", ".join(f"s{seed['seed']} {seed['correct']}/{seed['strings']}"
                              for seed in entry["fragile_seeds"])
            lines.append(f"{Path(directory).name} {entry['posenc']} {entry['language']} "
                         f"d{entry['depth']}: {entry['text']} ({seeds}); one string changes "
                         f"the count" + (f" and the {' and the '.join(verdicts)} verdict"
                                         if verdicts else ""))
    return lines


def rows(path: str) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def seed_range(seeds: str) -> range:
    """The seeds A:B name (both included)."""
    first, last = (int(part) for part in seeds.split(":"))
    return range(first, last + 1)


def hours(path: str, seeds: str) -> list[str]:
    chosen = [row for row in rows(path) if int(row["seed"]) in seed_range(seeds)]
    total = sum(float(row["wall_time_s"]) for row in chosen) / 3600
    return [f"{len(chosen)} cells (seeds {seeds}): {total:.2f} h of training summed over cells"]


def means(path: str, places: list[str]) -> list[str]:
    table = rows(path)
    lines = []
    for place in places:
        language, depth = place.split(":")
        values = [float(row["exact_match_351_400"]) for row in table
                  if row["posenc"] == "nope" and row["language"] == language
                  and int(row["depth"]) == int(depth)]
        lines.append(f"{language} d{depth}: {100 * statistics.fmean(values):.1f}% "
                     f"(mean of {len(values)} seeds)")
    return lines


def settings(paths: list[str], by: list[str], bin_name: str, seeds: str | None = None,
             places: str | None = None) -> list[str]:
    column = "exact_match_" + bin_name.replace(":", "_")
    wanted = {tuple(place.split(":")) for place in places.split(",")} if places else None
    groups: dict[tuple, list[dict]] = {}
    for path in paths:
        for row in rows(path):
            if (row["posenc"] == "nope" and row.get(column)
                    and (seeds is None or int(row["seed"]) in seed_range(seeds))
                    and (wanted is None or (row["language"], row["depth"]) in wanted)):
                key = (k_of(row["language"]), int(row["depth"]),
                       *(row[field] for field in by))
                groups.setdefault(key, []).append(row)
    lines = []
    for key in sorted(groups, key=lambda key: (key[0], key[1], *key[2:])):
        group = sorted(groups[key], key=lambda row: int(row["seed"]))
        fitted = [row for row in group if float(row["val_exact_match"]) >= 1.0]
        scores = [100 * float(row[column]) for row in group]
        setting = " ".join(f"{field}={value}" for field, value in zip(by, key[2:]))
        lines.append(
            f"L{key[0]} d{key[1]} {setting}: seeds {','.join(row['seed'] for row in group)}; "
            f"100% validation {len(fitted)}/{len(group)}"
            + (f" (epochs {', '.join(row['epochs_run'] for row in fitted)})" if fitted else "")
            + f"; {bin_name}: {', '.join(f'{score:.1f}' for score in scores)} "
              f"({sum(score >= 99 for score in scores)} >= 99%)")
    return lines


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed (tests/test_results_counts.py reads the quoted ones with it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("distributions")
    command.add_argument("report_dir")
    command.add_argument("--leave-out", default="L3")
    commands.add_parser("below").add_argument("report_dir")
    commands.add_parser("fragile").add_argument("report_dirs", nargs="+")
    command = commands.add_parser("hours")
    command.add_argument("cells_csv")
    command.add_argument("--seeds", default="0:2")
    command = commands.add_parser("means")
    command.add_argument("cells_csv")
    command.add_argument("places", nargs="+")
    command = commands.add_parser("settings")
    command.add_argument("cells_csvs", nargs="+")
    command.add_argument("--by", required=True)
    command.add_argument("--bin", required=True)
    command.add_argument("--seeds")
    command.add_argument("--places")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    if args.command == "distributions":
        lines = distributions(args.report_dir, args.leave_out.split(","))
    elif args.command == "below":
        lines = below(args.report_dir)
    elif args.command == "fragile":
        lines = fragile(args.report_dirs)
    elif args.command == "hours":
        lines = hours(args.cells_csv, args.seeds)
    elif args.command == "settings":
        lines = settings(args.cells_csvs, args.by.split(","), args.bin, args.seeds, args.places)
    else:
        lines = means(args.cells_csv, args.places)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
