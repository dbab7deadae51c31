"""How far each unfinished cell got. ``crasp sweep --dry-run``: a whole run, a search run whole
(naming its trial), and each started part of a split search, stopped after every number of
epochs it can stop at; a line cut off mid-write is left out; a failed attempt is named.
``crasp report``: the finished parts of unfinished cells across several directories (records
that keep only small files, and a live sweep), and the runs in progress."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.train import run as files
from crasp.train.results import RESULTS_FILE
from crasp.train.search_parts import trial_dir
from crasp.train.sweep import ERROR_FILE

from test_search_parts import GRID, sweep_args

WHOLE_EPOCHS = 3   # SEARCHES[1] in test_search_parts, which sweep_args searches, has 3 epochs


def whole_run_args(out) -> list[str]:
    return ["sweep", "--depths", "1", "--languages", "L4", "--seeds", "2", "--grid", *GRID,
            "d_model=8", f"epochs={WHOLE_EPOCHS}", "--no-progress", "-o", str(out)]


def states(args: list[str]) -> dict[str, str]:
    """Each cell's state column in the dry run of ``args``."""
    result = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return {line.split("\t")[1]: line.split("\t")[2] for line in result.stdout.splitlines()}


def expected(lines: list[dict], epochs: int, name_trial: bool) -> str:
    """The plain reference: the last line's epoch, the best validation of all lines."""
    best = max(line["val_exact_match"] for line in lines)
    text = f"at epoch {lines[-1]['epoch']} of {epochs}, best validation {100 * best:.1f}%"
    return f"trial {lines[-1]['trial']} {text}" if name_trial else text


def stop_after(run_dir, lines: list[str], count: int) -> None:
    """``run_dir`` as a run stopped after its first ``count`` epoch lines, with the next line
    half written."""
    cut = lines[count][: len(lines[count]) // 2] if count < len(lines) else ""
    (run_dir / files.METRICS_FILE).write_text("".join(lines[:count]) + cut)


@pytest.mark.parametrize("search", [False, True], ids=["whole run", "search run whole"])
def test_a_dry_run_says_how_far_a_stopped_run_got(tmp_path, search):
    out = tmp_path / "sweep"
    args = sweep_args(out, languages="L4") if search else whole_run_args(out)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert set(states(args).values()) == {"done"}
    for cell in out.glob("cells/*/"):
        lines = (cell / files.METRICS_FILE).read_text().splitlines(keepends=True)
        records = [json.loads(line) for line in lines]
        # no L4 search succeeds: every trial's every epoch is there
        assert len(records) == (4 * WHOLE_EPOCHS if search else WHOLE_EPOCHS)
        (cell / RESULTS_FILE).unlink()
        for count in range(len(lines) + 1):
            stop_after(cell, lines, count)
            note = f" ({expected(records[:count], WHOLE_EPOCHS, search)})" if count else ""
            assert states(args)[cell.name] == "todo" + note
        (cell / files.METRICS_FILE).write_bytes(b"\xff" + "".join(lines).encode())
        assert states(args)[cell.name] == "todo"   # not UTF-8: unreadable, no traceback
        (cell / files.METRICS_FILE).write_text("".join(lines))
        (cell / ERROR_FILE).write_text("Traceback ...")
        assert states(args)[cell.name] == (f"todo ({expected(records, WHOLE_EPOCHS, search)}; "
                                           f"the last attempt failed: {cell / ERROR_FILE})")


def test_a_dry_run_says_how_far_each_started_part_got(tmp_path):
    out = tmp_path / "split"
    args = sweep_args(out, "--split-trials", languages="L4")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and "2/2 done" in result.output, result.output
    for cell in out.glob("cells/*/"):
        # as before the assembly, with parts 2 and 3 stopped: 2 before its first epoch
        for name in (RESULTS_FILE, files.METRICS_FILE):
            (cell / name).unlink()
        for trial in (2, 3):
            (trial_dir(cell, trial) / RESULTS_FILE).unlink()
        (trial_dir(cell, 2) / files.METRICS_FILE).write_text("")
        lines = (trial_dir(cell, 3) / files.METRICS_FILE).read_text().splitlines(keepends=True)
        records = [json.loads(line) for line in lines]
        assert len(records) == WHOLE_EPOCHS and {r["trial"] for r in records} == {3}
        for count in range(len(lines) + 1):
            stop_after(trial_dir(cell, 3), lines, count)
            part = f"; part 3 {expected(records[:count], WHOLE_EPOCHS, False)}" if count else ""
            assert states(args)[cell.name] == f"todo (parts 0, 1 of 4 done{part})"
        # a sweep run without --split-trials trains the cell whole: the parts are not its own
        whole = [word for word in args if word != "--split-trials"]
        assert states(whole)[cell.name] == "todo"


def test_the_report_lists_each_unfinished_cells_finished_parts_and_runs(tmp_path):
    live, records = tmp_path / "live", tmp_path / "records"
    result = CliRunner().invoke(cli, sweep_args(live, "--split-trials"))
    assert result.exit_code == 0 and "4/4 done" in result.output, result.output
    # the L3 cells stay done (a report needs one); records made in an earlier session keep
    # parts 0 and 1 of each L4 cell, small files only
    shutil.copytree(live, records, ignore=shutil.ignore_patterns(
        "*.safetensors", "state.pt", "results.json", "metrics.jsonl", "trials"))
    for cell in live.glob("cells/L4-*/"):
        for trial in (0, 1):
            shutil.copytree(trial_dir(cell, trial), trial_dir(records / "cells" / cell.name,
                                                              trial),
                            ignore=shutil.ignore_patterns("*.safetensors"))
        # live: as before the assembly, part 3 stopped after 2 of its 3 epochs
        for name in (RESULTS_FILE, files.METRICS_FILE):
            (cell / name).unlink()
        (trial_dir(cell, 3) / RESULTS_FILE).unlink()
        lines = (trial_dir(cell, 3) / files.METRICS_FILE).read_text().splitlines(keepends=True)
        stop_after(trial_dir(cell, 3), lines, 2)
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["report", str(records), str(live), "-o", str(out),
                                      "--no-compiled"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    report = json.loads((out / "report.json").read_text())
    markdown = (out / "report.md").read_text()
    cells = sorted(path.name for path in live.glob("cells/L4-*/"))
    assert sorted(report["cells_missing"]) == cells
    assert [entry["id"] for entry in report["cells_unfinished"]] == report["cells_missing"]
    for entry in report["cells_unfinished"]:
        name = entry["id"]
        first = [records / "cells" / name] * 2 + [live / "cells" / name]  # parts 0, 1 and 2
        assert [part["trial"] for part in entry["parts"]] == [0, 1, 2]
        for part, folder in zip(entry["parts"], first):
            stored = json.loads((trial_dir(folder, part["trial"]) / RESULTS_FILE).read_text())
            assert part["dir"] == str(trial_dir(folder, part["trial"]))
            assert {key: part[key] for key in ("epochs", "best_epoch", "stopped",
                                               "val_exact_match", "success")} == \
                {key: stored[key] for key in ("epochs", "best_epoch", "stopped",
                                              "val_exact_match", "success")}
            assert part["overrides"] == stored["selected"]
        records_part3 = [json.loads(line) for line in (trial_dir(
            live / "cells" / name, 3) / files.METRICS_FILE).read_text().splitlines(
                keepends=True) if line.endswith("\n")]   # the half-written third left out
        assert len(records_part3) == 2
        running = (f"part 3 {expected(records_part3, WHOLE_EPOCHS, False)} "
                   f"({trial_dir(live / 'cells' / name, 3)})")
        assert entry["in_progress"] == [running]
        assert f"| `{name}` | 0, 1, 2 of 4 | {running} |" in markdown
        for part in entry["parts"]:
            assert f"| `{name}` | {part['trial']} | " in markdown


def test_a_report_with_no_finished_cell_says_which_have_started(tmp_path):
    out = tmp_path / "split"
    result = CliRunner().invoke(cli, sweep_args(out, "--split-trials", "--trials", "0",
                                                languages="L4"))
    assert result.exit_code == 0 and "0/2 done" in result.output, result.output
    cells = sorted(path.name for path in out.glob("cells/*/"))
    report = CliRunner().invoke(cli, ["report", str(out), "--no-compiled"])
    assert report.exit_code == 2 and "Traceback" not in report.output
    assert (f"no finished cells in {out}; started: "
            + ", ".join(f"{name} (parts 0 of 4 done)" for name in cells)) in report.output
    assert not (out / "report").exists()
