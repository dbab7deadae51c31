"""docs/results/merge_records.py folds one sweep directory into a family's committed records:
finished cells and finished trial parts once each, never over a file already there, except a
session file copied while its sweep still ran, which the ended sweep's file replaces."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
_spec = importlib.util.spec_from_file_location("merge_records", RESULTS / "merge_records.py")
merge_records = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(merge_records)

RUNNING = {"started": "2026-12-06T13:11:02+0000", "finished": None, "elapsed_s": None}
ENDED = {**RUNNING, "finished": "2026-12-06T15:00:00+0000", "elapsed_s": 6538.0}


def write(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))


def sweep_dir(root: Path, session: dict, part_done: bool) -> Path:
    """A split sweep with one assembled cell, one cell with a finished and a running part."""
    write(root / "sweep.json", {"specs": [{"seeds": [0]}]})
    write(root / "sessions" / "run.json", session)
    write(root / "cells" / "done" / "results.json", {"cell": "done"})
    write(root / "cells" / "open" / "cell.json", {"id": "open"})
    write(root / "cells" / "open" / "trials" / "1" / "results.json", {"trial": 1})
    write(root / "cells" / "open" / "trials" / "2" / "metrics.jsonl", "{}\n")
    if part_done:
        write(root / "cells" / "open" / "trials" / "2" / "results.json", {"trial": 2})
    return root


def test_a_session_merged_while_running_is_replaced_when_it_ends(tmp_path):
    records = tmp_path / "records"
    running = sweep_dir(tmp_path / "running", RUNNING, part_done=False)
    assert merge_records.merge(running, records) == (1, 0, 1)
    assert json.loads((records / "sessions" / "run.json").read_text()) == RUNNING
    assert not (records / "cells" / "open" / "trials" / "2").exists()
    assert json.loads((records / "cells" / "open" / "cell.json").read_text()) == {"id": "open"}

    ended = sweep_dir(tmp_path / "ended", ENDED, part_done=True)
    assert merge_records.merge(ended, records) == (0, 1, 1)
    assert json.loads((records / "sessions" / "run.json").read_text()) == ENDED
    assert json.loads((records / "cells" / "open" / "trials" / "2" / "results.json")
                      .read_text()) == {"trial": 2}
    assert sorted(path.name for path in (records / "sessions").iterdir()) == ["run.json"]


def test_an_ended_session_and_written_cells_are_never_replaced(tmp_path):
    records = sweep_dir(tmp_path / "records", ENDED, part_done=True)
    write(records / "cells" / "done" / "results.json", {"cell": "ours"})
    other = sweep_dir(tmp_path / "other", {**ENDED, "elapsed_s": 1.0}, part_done=True)
    write(other / "sweep.json", {"specs": [{"seeds": [0]}, {"seeds": [1]}]})
    for session in (RUNNING, {**ENDED, "elapsed_s": 1.0}):
        write(other / "sessions" / "run.json", session)
        assert merge_records.merge(other, records) == (0, 1, 0)
        assert json.loads((records / "sessions" / "run.json").read_text()) == ENDED
    assert json.loads((records / "cells" / "done" / "results.json").read_text()) == \
        {"cell": "ours"}
    assert json.loads((records / "sweep.json").read_text()) == \
        {"specs": [{"seeds": [0]}, {"seeds": [1]}]}


def test_a_merge_stopped_midway_leaves_no_cell_or_part_finished_without_its_files(tmp_path):
    """results.json is copied last: a merge stopped by an unreadable file (an I/O error) leaves
    the cell and the part unfinished in the records, and the next merge copies them whole."""
    source = sweep_dir(tmp_path / "sweep", ENDED, part_done=True)
    records = tmp_path / "records"
    finished = [source / "cells" / "done", source / "cells" / "open" / "trials" / "2"]
    for run in finished:
        write(run / "config.json", {"run": run.name})
    for broken in finished:
        metrics = broken / "metrics.jsonl"
        metrics.unlink(missing_ok=True)
        metrics.symlink_to("/proc/self/mem")   # a regular file whose first read fails: EIO
        with pytest.raises(OSError):
            merge_records.merge(source, records)
        metrics.unlink()
        write(metrics, f'{{"epoch": "{broken.name}"}}\n')
        stopped_in = records / broken.relative_to(source)
        assert not (stopped_in / "results.json").exists()
        assert not (stopped_in / "metrics.jsonl").exists()
        assert not list(records.rglob("*.tmp"))
    merge_records.merge(source, records)
    for run in finished:
        copied = records / run.relative_to(source)
        assert sorted(path.name for path in copied.iterdir() if path.is_file()) == \
            sorted(path.name for path in run.iterdir() if path.is_file())
        for path in run.iterdir():
            if path.is_file():
                assert (copied / path.name).read_bytes() == path.read_bytes()
