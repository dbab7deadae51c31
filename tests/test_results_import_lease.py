"""docs/results/import_lease.py brings a lease's archives into the repository as the sixth
lease was brought in by hand: metrics named for counts.py draws, a rerun of a finished cell
kept apart, new finished cells merged, each call's log once, and never over existing files."""

from __future__ import annotations

import importlib.util
import io
import json
import tarfile
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
_spec = importlib.util.spec_from_file_location("import_lease", RESULTS / "import_lease.py")
import_lease = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_lease)

FINISHED = "L8-d6-nope-s0-f849700953"
NEW = "L7-d5-nope-s2-49488dab8b"
CUT = "L6-d3-nope-s1-9f5bd9d939"
OTHER = "E3-d1-nope-s0-89af9243bc"


def epoch(trial: int, value: float) -> str:
    return json.dumps({"trial": trial, "epoch": 1, "val_exact_match": value}) + "\n"


def archive(out: Path, name: str, files: dict[str, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / f"{name}.tar.gz", "w:gz") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def lease(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two calls on one warm machine, and the family's committed records (FINISHED)."""
    records = tmp_path / "records" / "paper-grid"
    (records / "cells" / FINISHED).mkdir(parents=True)
    (records / "cells" / FINISHED / "results.json").write_text("{}")
    (records / "sweep.json").write_text(json.dumps({"specs": [{"seeds": [0]}]}))
    first, second = tmp_path / "out1", tmp_path / "out2"
    times = "stopping at 517 s\npaper-grid-L6: 511 s, exit 130\n"
    for out, metrics, more in [(first, epoch(0, 0.2), ""),
                               (second, epoch(0, 0.2) + epoch(1, 0.4),
                                "stopping at 263 s\npaper-grid-L6: 261 s, exit 130\n")]:
        archive(out, "logs", {"environment.txt": f"torch 2.11 ({out.name})\n",
                              "times.txt": times + more, "gpu.txt": "0 MiB, 0 %\n"})
        archive(out, "partial", {f"paper-grid.L6/{CUT}/metrics.jsonl": metrics,
                                 f"search-one-head.L7/{NEW}/metrics.jsonl": epoch(0, 0.1),
                                 f"paper-grid-k2.L8/{FINISHED}/metrics.jsonl": epoch(0, 0.35)})
        archive(out, "records", {
            "paper-grid.L7/sweep.json": json.dumps({"specs": [{"seeds": [2]}]}),
            "paper-grid.L7/sessions/lease.json": "{}",
            f"paper-grid.L7/cells/{NEW}/results.json": "{}",
            f"paper-grid.L7/cells/{NEW}/metrics.jsonl": epoch(0, 1.0),
            "paper-grid.L8/sweep.json": json.dumps({"specs": [{"seeds": [9]}]}),
            f"paper-grid.L8/cells/{FINISHED}/results.json": "{}",
            # another family's records, restored by the driver: not this family's
            "ek-one-head/sweep.json": json.dumps({"specs": [{"seeds": [5]}]}),
            f"ek-one-head/cells/{OTHER}/results.json": "{}",
            "search-one-head.L6/sweep.json": json.dumps({"specs": [{"seeds": [6]}]}),
            f"search-one-head.L6/cells/{OTHER}/results.json": "{}"})
    return first, second, records


def test_a_lease_is_imported_as_by_hand(tmp_path, capsys):
    first, second, records = lease(tmp_path)
    folder = tmp_path / "device-h200-9"
    import_lease.main([str(folder), str(first), str(second), "--note", "PLAN=paper",
                       "--records", str(records)])
    assert sorted(path.name for path in folder.iterdir()) == [
        "environment.txt", "paper-grid-L6-d3-s1-metrics.jsonl",
        "rerun-after-finish-L8-d6-s0-metrics.jsonl"]
    # the last call's metrics: the run as far as it got
    assert (folder / "paper-grid-L6-d3-s1-metrics.jsonl").read_text() == \
        epoch(0, 0.2) + epoch(1, 0.4)
    text = (folder / "environment.txt").read_text()
    assert text.startswith("--- call 1 (PLAN=paper)\ntorch 2.11 (out1)\nstopping at 517 s\n")
    assert "--- call 2\ntorch 2.11 (out2)\nstopping at 263 s\n" in text
    assert text.count("stopping at 517 s") == 1 and text.endswith("0 MiB, 0 %\n")
    # L7's new cell merged with its sweep's spec and session; L8 finished nothing new
    assert (records / "cells" / NEW / "results.json").is_file()
    assert sorted(cell.name for cell in (records / "cells").iterdir()) == sorted([FINISHED, NEW])
    assert (records / "sessions" / "lease.json").is_file()
    assert json.loads((records / "sweep.json").read_text())["specs"] == [{"seeds": [0]},
                                                                        {"seeds": [2]}]
    printed = capsys.readouterr().out
    assert "paper-grid-L6-d3-s1-metrics.jsonl: 2 epochs, configuration(s) 1, 2, best " \
           "validation 40.0%" in printed
    assert "paper-grid.L7: 1 new cells and 0 trial parts merged" in printed
    assert "paper-grid.L8:" not in printed


def test_finished_parts_are_merged_and_unfinished_ones_kept_as_metrics(tmp_path, capsys):
    """PLAN=split: the cut cell's part 0 finished (records), part 1 did not (partial)."""
    records = tmp_path / "records" / "paper-grid"
    (records / "cells").mkdir(parents=True)
    (records / "sweep.json").write_text(json.dumps({"specs": []}))
    out = tmp_path / "out1"
    archive(out, "logs", {"times.txt": "stopping at 517 s\n"})
    archive(out, "partial", {
        f"paper-grid.L6/{CUT}/cell.json": "{}",
        f"paper-grid.L6/{CUT}/trials_0_metrics.jsonl": epoch(0, 0.5),
        f"paper-grid.L6/{CUT}/trials_1_metrics.jsonl": epoch(1, 0.25)})
    archive(out, "records", {
        "paper-grid.L6/sweep.json": json.dumps({"specs": [{"seeds": [1]}]}),
        f"paper-grid.L6/cells/{CUT}/cell.json": '{"id": "cut"}',
        f"paper-grid.L6/cells/{CUT}/trials/0/results.json": '{"search_trial": 0}',
        f"paper-grid.L6/cells/{CUT}/trials/0/metrics.jsonl": epoch(0, 0.5)})
    folder = tmp_path / "device-h200-9"
    import_lease.main([str(folder), str(out), "--records", str(records)])
    assert sorted(path.name for path in folder.iterdir()) == [
        "environment.txt", "paper-grid-trial1-L6-d3-s1-metrics.jsonl"]
    cell = records / "cells" / CUT
    assert sorted(str(path.relative_to(cell)) for path in cell.rglob("*") if path.is_file()) \
        == ["cell.json", "trials/0/metrics.jsonl", "trials/0/results.json"]
    assert "paper-grid.L6: 0 new cells and 1 trial parts merged" in capsys.readouterr().out
    # a second import of the same lease finds nothing new to merge
    import_lease.main([str(tmp_path / "again"), str(out), "--records", str(records)])
    assert "trial parts merged" not in capsys.readouterr().out


def test_an_existing_folder_with_files_is_refused_and_kept(tmp_path):
    first, second, records = lease(tmp_path)
    folder = tmp_path / "device-h200-9"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit, match="holds files already"):
        import_lease.main([str(folder), str(first), "--records", str(records)])
    assert [path.name for path in folder.iterdir()] == ["notes.txt"]
    assert not (records / "cells" / NEW).exists()
    with pytest.raises(SystemExit):
        import_lease.main([str(tmp_path / "other"), str(first), "--note", "a", "--note", "b",
                           "--records", str(records)])
