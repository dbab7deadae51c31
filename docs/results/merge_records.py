"""Merges sweep records brought back from another machine into a family's committed records.

    python docs/results/merge_records.py FROM_DIR FAMILY_RECORDS_DIR

FROM_DIR holds the small files of one sweep directory (sweep.json, sessions/*.json and
cells/<id>/{cell,config,results}.json, metrics.jsonl), as docs/results/stage_lib.sh's archive
keeps them. Concurrent sweeps need directories of their own (a sweep directory is locked per
shard), so a lent machine runs one directory per language (``search-one-head.L6``, ...) and this
script folds each into the family: finished cells and session files are copied unless the
family already has one of that name (a cell is written once, so nothing of either side is lost),
and the sweep specs are the union of both sweep.json files, in order, each spec once.
"""

import json
import shutil
import sys
from pathlib import Path

CELL_FILES = ("cell.json", "config.json", "results.json", "metrics.jsonl")


def merge_specs(ours: dict, theirs: dict) -> dict:
    specs = list(ours.get("specs", []))
    for spec in theirs.get("specs", []):
        if spec not in specs:
            specs.append(spec)
    return {**ours, "specs": specs} if ours else theirs


def merge(source: Path, target: Path) -> tuple[int, int]:
    """Copies ``source``'s finished cells and sessions into ``target``; returns (new, kept)."""
    (target / "cells").mkdir(parents=True, exist_ok=True)
    (target / "sessions").mkdir(exist_ok=True)
    new = kept = 0
    for cell in sorted((source / "cells").glob("*/")):
        if not (cell / "results.json").is_file():
            continue
        destination = target / "cells" / cell.name
        if destination.exists():
            kept += 1
            continue
        destination.mkdir()
        for name in CELL_FILES:
            if (cell / name).is_file():
                shutil.copy2(cell / name, destination / name)
        new += 1
    for session in sorted((source / "sessions").glob("*.json")):
        if not (target / "sessions" / session.name).exists():
            shutil.copy2(session, target / "sessions" / session.name)
    sweep_file = target / "sweep.json"
    ours = json.loads(sweep_file.read_text()) if sweep_file.is_file() else {}
    theirs = json.loads((source / "sweep.json").read_text())
    temporary = sweep_file.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(merge_specs(ours, theirs), indent=2) + "\n")
    temporary.replace(sweep_file)
    return new, kept


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    added, already = merge(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{sys.argv[1]} -> {sys.argv[2]}: {added} new cells, {already} already there")
