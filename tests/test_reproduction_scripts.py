"""The committed reproduction scripts run the stages their headers describe.

`CRASP` is replaced by a recorder that writes each invocation's arguments to a file, so the
test reads the exact `crasp sweep` / `crasp report` command lines a real run would execute.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECOND_EDITION = ROOT / "docs" / "results" / "run_second_edition.sh"
FIRST_EDITION = ROOT / "docs" / "results" / "run_reproduction.sh"

FAKE_VERSION = "crasp, version 9.9 (code 0123456789ab)"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def run_script(tmp_path: Path, stages: str, make_sweeps: tuple[str, ...] = (),
               script: Path = SECOND_EDITION) -> list[list[str]]:
    log = tmp_path / "calls.txt"
    recorder = tmp_path / "crasp"
    recorder.write_text('#!/usr/bin/env bash\n'
                        f'if [ "$1" = --version ]; then echo "{FAKE_VERSION}"; exit; fi\n'
                        'printf "%s\\t" "$@" >> "$CRASP_LOG"\necho >> "$CRASP_LOG"\n')
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    out = tmp_path / "runs"
    for family in make_sweeps:
        (out / family).mkdir(parents=True)
        (out / family / "sweep.json").write_text("{}")
    env = {**os.environ, "CRASP": str(recorder), "CRASP_LOG": str(log), "PYTHON": "true",
           "OUT": str(out), "RESULTS": str(tmp_path / "results"), "STAGES": stages}
    subprocess.run(["bash", str(script)], env=env, check=True, capture_output=True)
    if not log.exists():  # the script called crasp not once
        return []
    return [line.rstrip("\t").split("\t") for line in log.read_text().splitlines()]


def option(call: list[str], name: str) -> str:
    return call[call.index(name) + 1]


def test_each_stage_sweeps_its_family_into_its_own_directory(tmp_path):
    calls = run_script(tmp_path, "one-head four-head ek-nope pe")
    assert [c[0] for c in calls] == ["sweep"] * 6
    families = [Path(option(c, "-o")).name for c in calls]
    assert families == ["one-head", "four-head", "ek-nope", "pe", "pe", "pe"]
    assert [option(c, "--preset") for c in calls] == ["one-head"] + ["default"] * 5
    assert [option(c, "--languages") for c in calls] == ["L3:L8", "L3:L8", "E3:E6"] + [
        "L4:L6,E3:E5"] * 3
    # pe runs seed by seed, so that an unfinished stage leaves every cell with the same seeds
    assert [option(c, "--seeds") for c in calls] == ["3", "3", "3", "0:0", "1:1", "2:2"]
    assert {option(c, "--posenc") for c in calls[3:]} == {"rope,alibi"}
    for call in calls:
        assert "epochs=20" in call
        bins = next(arg for arg in call if arg.startswith("test_bins="))
        assert bins.endswith("351:400@skewed+351:400@extreme")
        assert option(call, "--depths") == "1:6"


def test_edge_stages_add_seeds_3_and_4_beside_each_boundary(tmp_path):
    calls = run_script(tmp_path, "one-head-edge ek-nope-edge")
    depths = {option(c, "--languages"): option(c, "--depths") for c in calls}
    # L_k's boundary is k - 2 (depths k-3 and k-2, at least 1); E_k's registered depth is k - 1.
    assert depths == {"L3": "1:1", "L4": "1:2", "L5": "2:3", "L6": "3:4", "L7": "4:5", "L8": "5:6",
                      "E3": "1:2", "E4": "2:3", "E5": "3:4", "E6": "4:5"}
    assert {option(c, "--seeds") for c in calls} == {"3:4"}
    assert {Path(option(c, "-o")).name for c in calls} == {"one-head", "ek-nope"}
    assert {option(c, "--posenc") for c in calls} == {"nope"}


def test_pe_edge_adds_alibi_seeds_one_depth_below_the_nope_boundary(tmp_path):
    calls = run_script(tmp_path, "pe-edge")
    depths = {option(c, "--languages"): option(c, "--depths") for c in calls}
    assert depths == {"L4": "1:1", "L5": "2:2", "L6": "3:3", "E3": "1:1", "E4": "2:2", "E5": "3:3"}
    assert {option(c, "--posenc") for c in calls} == {"alibi"}
    assert {option(c, "--seeds") for c in calls} == {"3:4"}
    assert {Path(option(c, "-o")).name for c in calls} == {"pe"}


def test_report_stage_reports_only_families_that_have_a_sweep(tmp_path):
    calls = run_script(tmp_path, "report", make_sweeps=("one-head", "pe"))
    assert [(c[0], Path(c[1]).name, Path(option(c, "-o")).name) for c in calls] == [
        ("report", "one-head", "one-head"), ("report", "pe", "pe")]


def test_an_unknown_stage_is_refused(tmp_path):
    with pytest.raises(subprocess.CalledProcessError) as failure:
        run_script(tmp_path, "nonsense")
    assert failure.value.returncode == 2


def test_the_first_edition_runs_its_stages_and_records_its_settings(tmp_path):
    calls = run_script(tmp_path, "A B report", script=FIRST_EDITION)
    assert [c[0] for c in calls] == ["sweep", "sweep", "report"]
    assert option(calls[0], "--languages") == "L3:L8" and option(calls[0], "--seeds") == "3"
    assert option(calls[1], "--posenc") == "rope,alibi" and "epochs=6" in calls[1]
    environment = (tmp_path / "results" / "environment.txt").read_text()
    assert "seeds: NoPE 3, RoPE/ALiBi 1; recipe overrides: epochs=6" in environment
    assert environment.startswith("commit: ")
    # the code that ran, which need not be the commit's (a frozen worktree's crasp, say)
    assert f"crasp: {FAKE_VERSION}\n" in environment


def fake_cell(family_dir: Path, name: str, finished: bool) -> Path:
    cell = family_dir / "cells" / name
    cell.mkdir(parents=True)
    for file in ("cell.json", "config.json", "metrics.jsonl", "last.safetensors"):
        (cell / file).write_text(f"{name} {file}")
    if finished:
        (cell / "results.json").write_text(f"{name} results")
    return cell


def test_archive_keeps_finished_cells_records_and_a_new_clone_restores_them(tmp_path):
    out = tmp_path / "runs" / "one-head"
    (out / "sessions").mkdir(parents=True)
    (out / "sweep.json").write_text("specs")
    (out / "sessions" / "s1.json").write_text("session")
    fake_cell(out, "L3-d1-done", finished=True)
    fake_cell(out, "L3-d2-running", finished=False)
    run_script(tmp_path, "archive")
    records = tmp_path / "results" / "records" / "one-head"
    archived = sorted(str(p.relative_to(records)) for p in records.rglob("*") if p.is_file())
    assert archived == ["cells/L3-d1-done/cell.json", "cells/L3-d1-done/config.json",
                        "cells/L3-d1-done/metrics.jsonl", "cells/L3-d1-done/results.json",
                        "sessions/s1.json", "sweep.json"]  # no weights, no unfinished cell

    # A fresh clone: no runs/ at all. Any stage restores the records first.
    shutil.rmtree(tmp_path / "runs")
    run_script(tmp_path, "report")
    assert (out / "cells" / "L3-d1-done" / "results.json").read_text() == "L3-d1-done results"
    assert not (out / "cells" / "L3-d2-running").exists()


def test_restoring_never_replaces_a_file_already_in_the_sweep_directory(tmp_path):
    records = tmp_path / "results" / "records" / "one-head"
    records.mkdir(parents=True)
    (records / "sweep.json").write_text("old specs")
    fake_cell(records, "L3-d1-done", finished=True)
    out = tmp_path / "runs" / "one-head"
    out.mkdir(parents=True)
    (out / "sweep.json").write_text("newer specs")
    run_script(tmp_path, "report")
    assert (out / "sweep.json").read_text() == "newer specs"
    assert (out / "cells" / "L3-d1-done" / "results.json").is_file()


def test_only_an_invocation_that_trains_records_the_environment(tmp_path):
    run_script(tmp_path, "report archive")
    assert not (tmp_path / "results" / "environment.txt").exists()
    run_script(tmp_path, "one-head archive")
    assert (tmp_path / "results" / "environment.txt").read_text().startswith("commit: ")


def test_compare_cells_counts_identical_cells_and_lists_the_ones_that_flip(tmp_path):
    header = "cell_id,exact_match_351_400\n"
    (tmp_path / "old.csv").write_text(header + "a,1.0\nb,0.5\nc,0.995\nonly_old,0.1\n")
    (tmp_path / "new.csv").write_text(header + "a,1.0\nb,0.4\nc,0.98\nonly_new,0.2\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "results" / "compare_cells.py"),
         str(tmp_path / "old.csv"), str(tmp_path / "new.csv")],
        capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [
        "4 and 4 cells, 3 in common; exact_match_351_400: identical in 1, pass/fail (>= 0.99) "
        "alike in 2",
        "  c: 0.995 -> 0.98"]


def test_compare_cells_matches_on_named_columns_and_leaves_out_shared_keys(tmp_path):
    header = "cell_id,language,seed,exact_match_351_400\n"
    (tmp_path / "old.csv").write_text(
        header + "h1,L4,0,1.0\nh2,L4,1,0.995\nh3,L5,0,0.5\nh4,L5,0,0.6\n")
    (tmp_path / "new.csv").write_text(
        header + "x1,L4,0,1.0\nx2,L4,1,0.98\nx3,L5,0,0.5\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "results" / "compare_cells.py"),
         str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "--key", "language,seed"],
        capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'old.csv'}: left out 1 keys that several rows share: L5 0",
        "2 and 3 cells, 2 in common; exact_match_351_400: identical in 1, pass/fail (>= 0.99) "
        "alike in 1",
        "  L4 1: 0.995 -> 0.98"]


def test_a_training_stage_archives_when_it_ends(tmp_path):
    out = tmp_path / "runs" / "one-head"
    out.mkdir(parents=True)
    (out / "sweep.json").write_text("specs")
    fake_cell(out, "L3-d1-done", finished=True)
    calls = run_script(tmp_path, "one-head")
    assert [c[0] for c in calls] == ["sweep"]
    records = tmp_path / "results" / "records" / "one-head"
    assert (records / "cells" / "L3-d1-done" / "results.json").is_file()


THIRD_EDITION = ROOT / "docs" / "results" / "run_third_edition.sh"


def test_third_edition_runs_e_k_with_one_head_seed_by_seed(tmp_path):
    calls = run_script(tmp_path, "ek-one-head ek-one-head-edge alibi-one-head",
                       script=THIRD_EDITION)
    assert [c[0] for c in calls] == ["sweep"] * 8
    assert {option(c, "--preset") for c in calls} == {"one-head"}
    assert [option(c, "--seeds") for c in calls[:3]] == ["0:0", "1:1", "2:2"]
    assert {option(c, "--languages") for c in calls[:3]} == {"E3:E6"}
    edges = {option(c, "--languages"): option(c, "--depths") for c in calls[3:7]}
    assert edges == {"E3": "1:2", "E4": "2:3", "E5": "3:4", "E6": "4:5"}
    assert {option(c, "--seeds") for c in calls[3:7]} == {"3:4"}
    alibi = calls[7]
    assert (option(alibi, "--posenc"), option(alibi, "--languages"), option(alibi, "--depths"),
            option(alibi, "--seeds")) == ("alibi", "E4", "2:2", "0:4")
    assert [Path(option(c, "-o")).name for c in calls] == ["ek-one-head"] * 7 + ["alibi-one-head"]
    for call in calls:
        assert "epochs=20" in call


def test_third_edition_refuses_an_unknown_stage(tmp_path):
    with pytest.raises(subprocess.CalledProcessError) as failure:
        run_script(tmp_path, "nonsense", script=THIRD_EDITION)
    assert failure.value.returncode == 2


def test_third_edition_searches_the_disputed_cells_seed_by_seed(tmp_path):
    calls = run_script(tmp_path, "search-one-head search-four-head search-l7d4 paper-grid",
                       script=THIRD_EDITION)
    assert [c[0] for c in calls] == ["sweep"] * (15 + 15 + 5 + 15)
    families = [Path(option(c, "-o")).name for c in calls]
    assert families == (["search-one-head"] * 15 + ["search-four-head"] * 20
                        + ["paper-grid"] * 15)
    presets = [option(c, "--preset") for c in calls]
    assert presets == ["one-head"] * 15 + ["default"] * 20 + ["knee-deep"] * 15
    searches = [option(c, "--search") for c in calls]
    assert set(searches[:35]) == {"d_model=64,256 lr=1e-3,3e-4,1e-4 epochs=25"}
    assert set(searches[35:]) == {"paper"}
    for stage in (calls[:15], calls[15:30], calls[35:]):
        # seed by seed; within a seed L6..L8 at depths k-3..k
        assert [option(c, "--seeds") for c in stage] == [f"{s}:{s}" for s in range(5)
                                                         for _ in range(3)]
        assert [(option(c, "--languages"), option(c, "--depths")) for c in stage[:3]] == [
            ("L6", "3:6"), ("L7", "4:7"), ("L8", "5:8")]
    l7d4 = calls[30:35]
    assert [(option(c, "--languages"), option(c, "--depths"), option(c, "--seeds"))
            for c in l7d4] == [("L7", "4:4", f"{s}:{s}") for s in range(5, 10)]
    for call in calls:
        # the search sets the epochs (25 per configuration); the grid keeps the test bins
        assert not any(arg.startswith("epochs=") for arg in call)
        assert any(arg.startswith("test_bins=") for arg in call)
        assert option(call, "--posenc") == "nope"
