"""The counts the results READMEs quote, recomputed from the committed reports and CSVs.

    python docs/results/counts.py distributions REPORT_DIR [--leave-out L3]
    python docs/results/counts.py below REPORT_DIR
    python docs/results/counts.py fragile REPORT_DIR [REPORT_DIR ...]
    python docs/results/counts.py hours CELLS_CSV [--seeds 0:2]
    python docs/results/counts.py means CELLS_CSV LANGUAGE:DEPTH [LANGUAGE:DEPTH ...]
    python docs/results/counts.py settings CELLS_CSV [CELLS_CSV ...] --by FIELD[,FIELD] --bin A:B
        [--seeds 0:1] [--places L4:1,L4:2]
    python docs/results/counts.py draws CELLS_CSV --runs DIR [DIR ...] --bin A:B [--seeds 0:4]
        [--depths k-3:k] [--summary]

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
* ``draws``: per cell, the runs that stopped before their cell finished (cut at a lease's
  end, or paused on this CPU) and then the finished run; per language and depth, how many cells
  finished, how many of them finished in their *first* run, and how the finished cells score
  on ``--bin``. Why: a run cut short is started again from scratch on whatever machine is
  free, and a run that fits in a few epochs finishes where a slow one is cut, so the finished
  cells favour the quick fitters. One draw per cell is the first run; counted over all seeds,
  the first runs that finished and succeeded are a lower bound on the first runs that succeed
  (a stopped run is unknown, not failed). The ``--runs`` folders hold the stopped runs'
  ``<family>-L<k>-d<depth>-s<seed>-metrics.jsonl`` files, named in the order they ran; a file
  whose rows begin the finished run's metrics.jsonl is that run, paused and resumed, not a
  draw of its own.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
from pathlib import Path
from typing import NamedTuple

REPOSITORY = Path(__file__).resolve().parents[2]   # cells.csv names sweep_dir relative to it


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


class Epoch(NamedTuple):
    """One line of a run's metrics.jsonl, as far as telling runs apart needs."""
    trial: int
    epoch: int
    loss: float
    val_exact_match: float


def metrics_rows(path: Path) -> list[Epoch]:
    """The epochs of one run's metrics file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Epoch(row["trial"], row["epoch"], row["loss"], row["val_exact_match"])
            for row in map(json.loads, filter(None, lines))]


def finished_cells(path: str) -> dict[tuple[str, int, int], dict]:
    """The NoPE rows of a cells.csv by (language, depth, seed)."""
    return {(row["language"], int(row["depth"]), int(row["seed"])): row
            for row in rows(path) if row["posenc"] == "nope"}


def finished_metrics(row: dict) -> list[Epoch]:
    """The epochs of a cells.csv row's run (its sweep_dir is relative to the repository)."""
    return metrics_rows(REPOSITORY / row["sweep_dir"] / "cells" / row["cell_id"] / "metrics.jsonl")


def part_runs(records: Path) -> dict[tuple[str, int, int], list[Epoch]]:
    """Per NoPE cell of a records directory that is not done (no results.json) but has parts
    of a split search (``cells/<id>/trials/<i>/``, ``crasp sweep --split-trials``), the epochs
    of its finished parts from the first configuration on, in order. They are the run the
    whole search makes up to there: a part computes what its configuration computes inside the
    search (crasp.train.search_parts), and the search's metrics are its trials' in order. A
    finished part after one not finished is not yet part of that run."""
    found = {}
    for cell in sorted(records.glob("cells/*/trials")):
        cell = cell.parent
        name = re.fullmatch(r"(L\d+)-d(\d+)-nope-s(\d+)-[0-9a-f]+", cell.name)
        if name is None or (cell / "results.json").is_file():
            continue
        epochs, trial = [], 0
        while (cell / "trials" / str(trial) / "results.json").is_file():
            epochs += metrics_rows(cell / "trials" / str(trial) / "metrics.jsonl")
            trial += 1
        if epochs:
            language, depth, seed = name.groups()
            found[(language, int(depth), int(seed))] = epochs
    return found


def stopped_runs(finished: dict, family: str, folders: list[str], records: Path | None = None
                 ) -> dict[tuple[str, int, int], list[tuple[str, list[Epoch]]]]:
    """Per cell, (name, epochs) of each run that is not its finished run, in the order they
    ran: the files in ``folders`` (a file whose epochs begin the finished run's is that run,
    paused), then the finished parts of an unfinished cell in ``records`` (``part_runs``,
    named ``parts``). Runs of one cell whose epochs agree as far as both go are one run seen
    more than once, kept once under the names joined by `` + `` with the longer epochs: on
    one CPU the code computes the same numbers, so a run started again from scratch after its
    machine was lost, or as parts, repeats the lost one; it is no second draw."""
    stopped: dict[tuple, list[tuple[str, list[Epoch]]]] = {}
    for folder in folders:
        for file in sorted(Path(folder).glob(f"{family}-L*-d*-s*-metrics.jsonl")):
            language, depth, seed = re.fullmatch(
                rf"{family}-(L\d+)-d(\d+)-s(\d+)-metrics\.jsonl", file.name).groups()
            key = (language, int(depth), int(seed))
            epochs, row = metrics_rows(file), finished.get(key)
            if epochs and not (row and finished_metrics(row)[:len(epochs)] == epochs):
                _add_run(stopped.setdefault(key, []), Path(folder).name, epochs)
    for key, epochs in (part_runs(records) if records else {}).items():
        _add_run(stopped.setdefault(key, []), "parts", epochs)
    return stopped


def _add_run(runs: list[tuple[str, list[Epoch]]], name: str, epochs: list[Epoch]) -> None:
    for index, (other_name, other) in enumerate(runs):
        if other[:len(epochs)] == epochs[:len(other)]:
            runs[index] = (f"{other_name} + {name}", max(other, epochs, key=len))
            return
    runs.append((name, epochs))


def stopped_run_text(folder: str, epochs: list[Epoch]) -> str:
    first, last = (1 + min(e.trial for e in epochs)), (1 + max(e.trial for e in epochs))
    configurations = f"configuration {first}" if first == last else f"configurations {first}-{last}"
    return (f"{folder} stopped after {len(epochs)} epoch{'s' * (len(epochs) != 1)} in "
            f"{configurations}, best validation "
            f"{100 * max(e.val_exact_match for e in epochs):.1f}%")


def relative_depths(depths: str) -> range:
    """The offsets from k that ``k-3:k`` (or ``k-2:k-1``) names, lowest first."""
    low, high = (int(part[1:] or 0) for part in depths.split(":"))
    return range(low, high + 1)


def draws(path: str, folders: list[str], bin_name: str, seeds: str = "0:4",
          depths: str = "k-3:k", summary: bool = False) -> list[str]:
    column = "exact_match_" + bin_name.replace(":", "_")
    finished = finished_cells(path)
    sweep_dir = next(iter(finished.values()))["sweep_dir"]
    stopped = stopped_runs(finished, Path(sweep_dir).name, folders, REPOSITORY / sweep_dir)
    languages = sorted({key[0] for key in (*finished, *stopped)}, key=k_of)
    lines, totals = [], {}
    for language in languages:
        for offset in relative_depths(depths):
            depth = k_of(language) + offset
            seed_lines, first, passing = [], [], []
            for seed in seed_range(seeds):
                key = (language, depth, seed)
                row = finished.get(key)
                runs = [stopped_run_text(*run) for run in stopped.get(key, [])]
                outcome = "no epoch recorded" if row is None and not runs else "not finished"
                if row is not None:
                    score = 100 * float(row[column])
                    epochs = int(row["epochs_run"])
                    outcome = (f"finished: {100 * float(row['val_exact_match']):.1f}% "
                               f"validation after {epochs} epoch{'s' * (epochs != 1)}, "
                               f"{bin_name} {score:.1f}%")
                    passing.append(score >= 99)
                    if not runs:
                        first.append(score >= 99)
                seed_lines.append(f"  {language} d{depth} s{seed}: " + "; ".join([*runs, outcome]))
            total = totals.setdefault(offset, [0, 0, 0, 0, 0])
            for index, value in enumerate((len(passing), sum(passing), len(first), sum(first),
                                           len(seed_range(seeds)) - len(first))):
                total[index] += value
            lines.append(f"{language} d{depth}: {len(passing)} finished ({sum(passing)} >= 99% "
                         f"on {bin_name}); first runs: {len(first)} finished ({sum(first)} "
                         f">= 99%)")
            lines.extend([] if summary else seed_lines)
    for offset, (done, passed, first, first_passed, other) in sorted(totals.items()):
        name = f"k - {-offset}" if offset else "k"
        lines.append(f"{name}: {done} finished ({passed} >= 99%); first runs: {first} finished "
                     f"({first_passed} >= 99%), {other} stopped or not run")
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
    command = commands.add_parser("draws")
    command.add_argument("cells_csv")
    command.add_argument("--runs", nargs="+", required=True)
    command.add_argument("--bin", required=True)
    command.add_argument("--seeds", default="0:4")
    command.add_argument("--depths", default="k-3:k")
    command.add_argument("--summary", action="store_true", help="no line per seed")
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
    elif args.command == "draws":
        lines = draws(args.cells_csv, args.runs, args.bin, args.seeds, args.depths,
                      args.summary)
    else:
        lines = means(args.cells_csv, args.places)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
