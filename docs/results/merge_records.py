"""Merges sweep records brought back from another machine into a family's committed records.

    python docs/results/merge_records.py FROM_DIR FAMILY_RECORDS_DIR

FROM_DIR holds the small files of one sweep directory (sweep.json, sessions/*.json and
cells/<id>/{cell,config,results}.json, metrics.jsonl), as docs/results/stage_lib.sh's archive
keeps them. Concurrent sweeps need directories of their own (a sweep directory is locked per
shard), so a lent machine runs one directory per language (``search-one-head.L6``, ...) and this
script folds each into the family: finished cells and session files are copied unless the
family already has one of that name (a cell is written once, so nothing of either side is lost;
a session file is written when its sweep starts and again when it ends, so one that an earlier
merge copied while its sweep still ran is replaced by the ended one), and the sweep specs
are the union of both sweep.json files, in order, each spec once. The
finished trial parts of a ``--split-trials`` search (``cells/<id>/trials/<i>/``, the same small
files) are copied too, those of unfinished cells included (with the cell's cell.json): a later
session or lent machine restores them and runs only the parts left.
"""

import json
import sys
from pathlib import Path

CELL_FILES = ("cell.json", "config.json", "results.json", "metrics.jsonl")


def merge_specs(ours: dict, theirs: dict) -> dict:
    specs = list(ours.get("specs", []))
    for spec in theirs.get("specs", []):
        if spec not in specs:
            specs.append(spec)
    return {**ours, "specs": specs} if ours else theirs


def copy_new(source: Path, destination: Path, names=CELL_FILES) -> None:
    """Copies each of ``names`` that ``destination`` lacks, each atomically and results.json
    last: it marks a cell or part finished, and a merge skips a finished one, so a merge that
    stops midway (an I/O error, a kill) must not leave one without the files beside it."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in sorted(names, key=lambda name: name == "results.json"):
        if (source / name).is_file() and not (destination / name).exists():
            write_atomically(destination / name, (source / name).read_bytes())


def write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


def session_is_newer(source: Path, destination: Path) -> bool:
    """Whether ``source`` should be copied over ``destination``: absent there, or there from a
    sweep that had not ended (``finished`` null) and ended here."""
    if not destination.exists():
        return True
    return json.loads(destination.read_text()).get("finished") is None and \
        json.loads(source.read_text()).get("finished") is not None


def merge(source: Path, target: Path) -> tuple[int, int, int]:
    """Copies ``source``'s finished cells, finished trial parts and sessions into ``target``;
    returns (new cells, cells already there, new parts)."""
    (target / "cells").mkdir(parents=True, exist_ok=True)
    (target / "sessions").mkdir(exist_ok=True)
    new = kept = parts = 0
    for cell in sorted((source / "cells").glob("*/")):
        destination = target / "cells" / cell.name
        for part in sorted((cell / "trials").glob("*/")):
            if (part / "results.json").is_file() and \
                    not (destination / "trials" / part.name / "results.json").exists():
                copy_new(part, destination / "trials" / part.name)
                copy_new(cell, destination, ["cell.json"])
                parts += 1
        if not (cell / "results.json").is_file():
            continue
        if (destination / "results.json").exists():
            kept += 1
            continue
        copy_new(cell, destination)
        new += 1
    for session in sorted((source / "sessions").glob("*.json")):
        destination = target / "sessions" / session.name
        if session_is_newer(session, destination):
            write_atomically(destination, session.read_bytes())
    sweep_file = target / "sweep.json"
    ours = json.loads(sweep_file.read_text()) if sweep_file.is_file() else {}
    theirs = json.loads((source / "sweep.json").read_text())
    merged = json.dumps(merge_specs(ours, theirs), indent=2) + "\n"
    write_atomically(sweep_file, merged.encode())
    return new, kept, parts


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    added, already, parts = merge(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{sys.argv[1]} -> {sys.argv[2]}: {added} new cells, {already} already there, "
          f"{parts} new trial parts")
