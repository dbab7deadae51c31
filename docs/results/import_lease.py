"""Brings a lease of docs/results/third-edition/device-h200/device.sh into the repository.

    python docs/results/import_lease.py FOLDER OUT [OUT ...] [--note TEXT ...]
                                        [--family paper-grid] [--records DIR]

OUT: the folder each call of the lease brought back (``files_at``: records.tar.gz,
partial.tar.gz, logs.tar.gz), in the order the calls ran on one warm machine, so the last
holds every run as far as it got. FOLDER: the lease's new folder beside the others
(``docs/results/third-edition/device-h200-5``); it must not exist yet or be empty.

It writes, and nothing else:
* FOLDER/environment.txt: each call's environment and timings (``--- call N (NOTE)``, a
  ``--note`` per call in order: its variables, say), and the GPU state at the end;
* FOLDER/<family>-L<k>-d<depth>-s<seed>-metrics.jsonl for every run that did not finish, the
  names ``counts.py draws`` and ``paper_runs.py`` read; a run of a cell that had finished
  before the lease (a driver's mistake: the sixth lease's ``PAPER_K2="L8:2"``) is kept as
  ``rerun-after-finish-L<k>-d<depth>-s<seed>-metrics.jsonl``, a name they do not read, since
  it is no draw before a finished one; an unfinished part of a ``--split-trials`` search
  (PLAN=split) is ``<family>-trial<i>-L<k>-d<depth>-s<seed>-metrics.jsonl``, which they do
  not read either;
* the finished cells and finished trial parts into the family's committed records
  (``merge_records.merge``), from the family's sweep directories that finished a cell or a part
  the records lack. The family's directories
  are ``FAMILY`` and ``FAMILY.*`` or ``FAMILY-*.*`` (the driver's ``paper-grid.L6``,
  ``paper-grid-k2.L8``: one per concurrent sweep, as a sweep directory is locked per shard);
  the others are every other family's records, which the driver restores so that no sweep
  reruns a finished cell, and are left alone.

Then add FOLDER to ``paper_runs.RUNS`` and to the ``--runs`` of the quoted ``counts.py draws``,
and regenerate the report and the quoted blocks (third-edition README, "What is missing").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "third-edition" / "records"
CELL_ID = re.compile(r"(L\d+)-d(\d+)-[a-z]+-s(\d+)-[0-9a-f]+")

_spec = importlib.util.spec_from_file_location("merge_records", HERE / "merge_records.py")
merge_records = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(merge_records)


def unpack(out: Path, into: Path) -> None:
    for name in ("records", "partial", "logs"):
        archive = out / f"{name}.tar.gz"
        if archive.is_file():
            with tarfile.open(archive) as tar:
                tar.extractall(into, filter="data")


def environment(calls: list[Path], notes: list[str]) -> str:
    """Each call's environment.txt and times.txt; a warm machine's times.txt keeps the earlier
    calls' lines, so each call shows only the lines it added."""
    text, seen = [], 0
    for number, call in enumerate(calls, 1):
        logs = call / "logs"
        times = (logs / "times.txt").read_text().splitlines() if (logs / "times.txt").is_file() \
            else []
        note = notes[number - 1] if number <= len(notes) else ""
        text.append(f"--- call {number}" + (f" ({note})" if note else ""))
        if (logs / "environment.txt").is_file():
            text.append((logs / "environment.txt").read_text().rstrip("\n"))
        text += times[seen:]
        seen = len(times)
        text.append("")
    gpu = calls[-1] / "logs" / "gpu.txt"
    if gpu.is_file():
        text.append(gpu.read_text().rstrip("\n"))
    return "\n".join(text) + "\n"


def finished_ids(records: Path) -> set[str]:
    cells = records / "cells"
    return {cell.name for cell in cells.glob("*/") if (cell / "results.json").is_file()} \
        if cells.is_dir() else set()


def in_family(sweep: str, family: str) -> bool:
    """Whether the sweep directory named ``sweep`` is one of ``family``'s (the docstring)."""
    base = sweep.split(".", 1)[0]
    return base == family or (base.startswith(family + "-") and "." in sweep)


PART_METRICS = re.compile(r"trials_(\d+)_metrics\.jsonl")


def stopped_runs(last: Path, family: str, done: set[str]) -> dict[str, Path]:
    """File name -> metrics.jsonl, for every run in ``last``'s partial/ (the module's names;
    ``done``: the ids of the cells finished before). A ``--split-trials`` part that did not
    finish (the driver's ``trials_<i>_metrics.jsonl``) is ``<family>-trial<i>-L<k>-d<depth>-
    s<seed>-metrics.jsonl``, a name ``counts.py`` does not read (its runs are whole searches); a
    finished part's metrics are in its records."""
    runs = {}
    for metrics in sorted((last / "partial").glob("*/*/*metrics.jsonl")):
        sweep, cell = metrics.parent.parent.name, metrics.parent.name
        part = PART_METRICS.fullmatch(metrics.name)
        if not in_family(sweep, family) or (metrics.name != "metrics.jsonl" and not part):
            continue
        if part and (last / "records" / sweep / "cells" / cell / "trials" / part[1] /
                     "results.json").is_file():
            continue
        found = CELL_ID.fullmatch(cell)
        if not found:
            raise SystemExit(f"{metrics}: not a cell id like L8-d6-nope-s2-0bb2b4f28a")
        language, depth, seed = found.groups()
        stem = f"{language}-d{depth}-s{seed}-metrics.jsonl"
        name = f"rerun-after-finish-{stem}" if cell in done else \
            f"{family}-trial{part[1]}-{stem}" if part else f"{family}-{stem}"
        if name in runs:
            raise SystemExit(f"two runs of {cell} in {last / 'partial'}")
        runs[name] = metrics
    return runs


def summary(metrics: Path) -> str:
    rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    if not rows:
        return "no epoch"
    configurations = sorted({row["trial"] for row in rows})
    return (f"{len(rows)} epochs, configuration(s) {', '.join(str(c + 1) for c in configurations)}"
            f", best validation {100 * max(row['val_exact_match'] for row in rows):.1f}%")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("outs", type=Path, nargs="+")
    parser.add_argument("--note", dest="notes", action="append", default=[],
                        help="what call N ran (its variables), once per call in order")
    parser.add_argument("--family", default="paper-grid")
    parser.add_argument("--records", type=Path, default=None,
                        help="the family's records (default: third-edition/records/FAMILY)")
    args = parser.parse_args(argv)
    if len(args.notes) > len(args.outs):
        parser.error("more --note than calls")
    records = args.records or RECORDS / args.family
    if args.folder.exists() and any(args.folder.iterdir()):
        sys.exit(f"{args.folder} holds files already: import a lease into a new folder")
    with tempfile.TemporaryDirectory() as scratch:
        calls = []
        for number, out in enumerate(args.outs, 1):
            call = Path(scratch) / f"call{number}"
            unpack(out, call)
            calls.append(call)
        done = finished_ids(records)
        runs = stopped_runs(calls[-1], args.family, done)
        sweeps = [sweep for sweep in sorted((calls[-1] / "records").glob("*/"))
                  if in_family(sweep.name, args.family) and (any(
                      cell.name not in done and (cell / "results.json").is_file()
                      for cell in sweep.glob("cells/*/")) or any(
                      not (records / part.relative_to(sweep) / "results.json").is_file()
                      for part in sweep.glob("cells/*/trials/*/")))]
        args.folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=args.folder.parent, prefix=".import-"))
        (staging / "environment.txt").write_text(environment(calls, args.notes))
        for name, metrics in runs.items():
            (staging / name).write_bytes(metrics.read_bytes())
        if args.folder.exists():
            args.folder.rmdir()
        staging.rename(args.folder)
        for sweep in sweeps:
            new, _, parts = merge_records.merge(sweep, records)
            print(f"{sweep.name}: {new} new cells and {parts} trial parts merged into "
                  f"{records}")
    for name in runs:
        print(f"{name}: {summary(args.folder / name)}")
    print(f"{args.folder}: environment.txt and {len(runs)} metrics files")


if __name__ == "__main__":
    main()
