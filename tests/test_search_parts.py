"""A search run as one-trial parts (``train(..., only_trial=i)``) and assembled
(``crasp.train.search_parts``) gives the whole search's result: the same selected trial, test
bins, validation scores, trial summaries, improvement records and best weights, byte for byte
on the CPU, whatever order the parts ran in and whether or not parts past a success ran."""

from __future__ import annotations

import csv
import json
import random
import shutil

import pytest
from click.testing import CliRunner
import torch
from safetensors import safe_open

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.train import TrainConfig, sweep
from crasp.train import run as files
from crasp.train.loop import TIMING_KEYS, train
from crasp.train.search_parts import (assemble, trial_dir, trial_needed, trials_to_run)
from crasp.train.sweep import SweepSpec, enumerate_cells

GRID = ["n_train=40", "n_test=12", "train_bin=6:12", "test_bins=[[13,20],[21,28]]",
        "n_heads=2", "d_ff=32", "batch_size=8", "warmup_steps=0", "patience=0", "device=cpu"]
# Between them these searches (on the CPU, seeds 0..2) end in every way a search can: the
# first trial succeeds (L3, first search), a later one does (L3, second), none does and
# validation exact match selects (L4), none does and every trial scores 0 exact, so token
# accuracy selects (L4 seed 2, second search). test_the_cases_cover_every_ending checks it.
SEARCHES = ["d_model=8,16 lr=3e-2,1e-3 epochs=2", "d_model=8,16 lr=1e-3,3e-2 epochs=3"]
CASES = [(language, search, seed) for language in ("L3", "L4") for search in SEARCHES
         for seed in range(3)]
METRIC_TIMES = ("epoch_time_s", "train_time_s", "elapsed_s", "tokens_per_s", "strings_per_s")


def search_config(language: str, search: str, seed: int, grid=GRID) -> TrainConfig:
    configurations, _ = sweep.parse_search([search], TrainConfig)
    return enumerate_cells(SweepSpec(depths=[1], languages=[language], seeds=[seed],
                                     grid=sweep.parse_grid(grid, TrainConfig),
                                     search=configurations, search_text=search))[0].config_object


def without(record: dict, keys) -> dict:
    return {key: value for key, value in record.items() if key not in keys}


def metric_lines(run_dir) -> list[dict]:
    text = (run_dir / files.METRICS_FILE).read_text()
    return [without(json.loads(line), METRIC_TIMES) for line in text.splitlines()]


def same_weights(path, other) -> bool:
    """Equal tensors, bit for bit, and equal metadata (safetensors writes the metadata's keys
    in no fixed order, so the files' bytes may differ)."""
    def read(where):
        with safe_open(str(where), framework="pt") as file:
            return file.metadata(), {key: file.get_tensor(key) for key in file.keys()}
    (metadata, tensors), (other_metadata, other_tensors) = read(path), read(other)
    return metadata == other_metadata and tensors.keys() == other_tensors.keys() and all(
        torch.equal(tensors[key], other_tensors[key]) for key in tensors)


def run_parts(config: TrainConfig, run_dir, order) -> None:
    for trial in order:
        train(config, trial_dir(run_dir, trial), only_trial=trial)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Each case's whole search and its parts (every trial, in a shuffled order)."""
    root = tmp_path_factory.mktemp("parts")
    found = {}
    for number, case in enumerate(CASES):
        config = search_config(*case)
        whole, parted = root / f"whole-{number}", root / f"parted-{number}"
        whole_results = train(config, whole)
        order = list(range(len(config.search)))
        random.Random(number).shuffle(order)
        run_parts(config, parted, order)
        found[case] = (config, whole, whole_results, parted, assemble(parted, config))
    return found


@pytest.mark.parametrize("case", CASES, ids=lambda case: "-".join(map(str, case)))
def test_parts_assemble_to_the_whole_search(outcomes, case):
    config, whole, whole_results, parted, assembled = outcomes[case]
    parted_results = json.loads((parted / "results.json").read_text())
    assert assembled.to_json() == parted_results
    assert parted_results.pop("assembled_from") == [
        f"trials/{summary['trial']}" for summary in whole_results["trials"]]
    assert without(parted_results, TIMING_KEYS) == without(whole_results, TIMING_KEYS)
    for name in ("best.safetensors", "last.safetensors"):
        assert same_weights(parted / name, whole / name), name
    assert metric_lines(parted) == metric_lines(whole)
    assert json.loads((parted / "config.json").read_text()) == config.to_dict()
    # the parted directory is a finished run: train returns its results without training
    assert train(config, parted) == parted_results | {"assembled_from": assembled.assembled_from}


def test_the_cases_cover_every_ending(outcomes):
    endings = set()
    for config, _, results, _, _ in outcomes.values():
        trials = results["trials"]
        if results["success"]:
            endings.add("first succeeds" if len(trials) == 1 else "a later one succeeds")
        else:
            assert len(trials) == len(config.search)
            tied = [t for t in trials if t["val_exact_match"] == results["val_exact_match"]]
            endings.add("exact match selects" if len(tied) == 1 else "token accuracy selects")
    assert endings == {"first succeeds", "a later one succeeds", "exact match selects",
                       "token accuracy selects"}


def test_assembly_waits_for_every_trial_the_search_ran(tmp_path):
    config = search_config("L4", SEARCHES[1], 0)   # no trial succeeds: all four are needed
    assert trials_to_run(tmp_path, 4) == [0, 1, 2, 3]
    run_parts(config, tmp_path, [3, 1, 0])
    assert trials_to_run(tmp_path, 4) == [2]
    assert assemble(tmp_path, config) is None
    assert not (tmp_path / "results.json").exists()
    run_parts(config, tmp_path, [2])
    assert trials_to_run(tmp_path, 4) == []
    assert assemble(tmp_path, config).assembled_from == [f"trials/{t}" for t in range(4)]


def test_a_success_ends_the_search_and_later_parts_are_not_part_of_it(tmp_path):
    config = search_config("L3", SEARCHES[1], 0)   # trial 1 succeeds
    run_parts(config, tmp_path, [1])
    assert trials_to_run(tmp_path, 4) == [0]
    assert trial_needed(tmp_path, 1) and not trial_needed(tmp_path, 2)
    assert assemble(tmp_path, config) is None   # trial 0 ran first in the search
    run_parts(config, tmp_path, [3, 0])
    results = assemble(tmp_path, config)
    assert results.assembled_from == ["trials/0", "trials/1"] and results.best_trial == 1
    assert [summary["trial"] for summary in results.trials] == [0, 1]


def test_a_part_is_refused_where_another_trial_or_the_whole_search_ran(tmp_path):
    config = search_config("L3", SEARCHES[0], 0)
    train(config, tmp_path / "one", only_trial=1, max_epochs_this_session=1)
    with pytest.raises(CraspError, match="holds a run of trial 1 of the search alone, not of "
                                         "trial 2"):
        train(config, tmp_path / "one", only_trial=2)
    with pytest.raises(CraspError, match="not of the whole search"):
        train(config, tmp_path / "one")
    train(config, tmp_path / "whole")
    with pytest.raises(CraspError, match="holds a run of the whole search, not of trial 0"):
        train(config, tmp_path / "whole", only_trial=0)
    for bad in (-1, 4):
        with pytest.raises(CraspError, match=f"only_trial={bad}: the config searches 4"):
            train(config, tmp_path / "bad", only_trial=bad)
    plain = config.replace(search=None)
    with pytest.raises(CraspError, match="searches 0 configurations"):
        train(plain, tmp_path / "plain", only_trial=0)


def test_parts_without_weights_assemble_as_records_do(outcomes, tmp_path):
    """Committed records keep a part's config, results and metrics only."""
    config, _, whole_results, parted, assembled = outcomes[CASES[-1]]
    for part in (parted / "trials").iterdir():
        for name in ("config.json", "results.json", "metrics.jsonl"):
            (tmp_path / "trials" / part.name).mkdir(parents=True, exist_ok=True)
            (tmp_path / "trials" / part.name / name).write_bytes((part / name).read_bytes())
    results = assemble(tmp_path, config)
    assert results.to_json() == assembled.to_json()
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "config.json", "metrics.jsonl", "results.json", "trials"]
    assert metric_lines(tmp_path) == metric_lines(parted)


def test_a_folder_named_like_the_format_model_that_crasp_did_not_write_is_kept(tmp_path):
    from crasp.train.search_parts import _copy_format_model

    (tmp_path / "part" / "model").mkdir(parents=True)
    (tmp_path / "part" / "model" / "config.json").write_text("{}")
    (tmp_path / "cell" / "model").mkdir(parents=True)
    (tmp_path / "cell" / "model" / "notes.txt").write_text("mine")
    with pytest.raises(CraspError, match="which crasp does not replace"):
        _copy_format_model(tmp_path / "part", tmp_path / "cell")
    assert (tmp_path / "cell" / "model" / "notes.txt").read_text() == "mine"


def same_folder(folder, other) -> bool:
    """The same files, equal byte for byte, weights tensor for tensor (``same_weights``)."""
    names = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    if names != sorted(str(path.relative_to(other)) for path in other.rglob("*")
                       if path.is_file()):
        return False
    return all(same_weights(folder / name, other / name) if name.endswith(".safetensors")
               else (folder / name).read_bytes() == (other / name).read_bytes()
               for name in names)


def test_a_precision_search_assembles_the_selected_parts_format_model(tmp_path):
    """The cell's fixed-precision model is the selected trial's, as the whole search writes
    it, and replaces a format model crasp wrote there before (here another trial's)."""
    config = search_config("L3", SEARCHES[1], 0, grid=[*GRID, "precision=8.4"])
    whole = train(config, tmp_path / "whole")
    parted = tmp_path / "parted"
    run_parts(config, parted, range(len(config.search)))
    selected = whole["best_trial"]
    other = next(trial for trial in range(len(config.search)) if trial != selected)
    model = files.FORMAT_MODEL_DIR
    shutil.copytree(trial_dir(parted, other) / model, parted / model)
    assert not same_folder(parted / model, tmp_path / "whole" / model)
    assemble(parted, config)
    assert same_folder(parted / model, tmp_path / "whole" / model)
    assert same_folder(parted / model, trial_dir(parted, selected) / model)


def test_a_part_of_another_config_is_refused(tmp_path):
    config = search_config("L3", SEARCHES[0], 0)
    other = search_config("L3", SEARCHES[0], 1)
    train(other, trial_dir(tmp_path, 0), only_trial=0)
    with pytest.raises(CraspError, match="ran another config"):
        assemble(tmp_path, config)


def sweep_args(out, *extra, languages="L3,L4") -> list[str]:
    return ["sweep", "--depths", "1", "--languages", languages, "--seeds", "2", "--grid", *GRID,
            "--search", SEARCHES[1], "--no-progress", "-o", str(out), *extra]


def cell_results(out) -> dict[str, dict]:
    return {path.parent.name: without(json.loads(path.read_text()), TIMING_KEYS)
            for path in out.glob("cells/*/results.json")}


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_a_split_sweep_gives_the_whole_sweeps_results(tmp_path, jobs):
    whole, split = tmp_path / "whole", tmp_path / "split"
    result = CliRunner().invoke(cli, sweep_args(whole, "--jobs", "1"))
    assert result.exit_code == 0, result.output + repr(result.exception)
    # an earlier session ran the L3 cells and one part of an L4 cell: the sweep keeps them
    result = CliRunner().invoke(cli, sweep_args(split, "--split-trials", languages="L3"))
    assert result.exit_code == 0, result.output + repr(result.exception)
    cell = sorted(whole.glob("cells/L4-*"))[0].name
    config = TrainConfig.from_dict(json.loads((whole / "cells" / cell / "config.json").read_text()))
    train(config, trial_dir(split / "cells" / cell, 2), only_trial=2)
    kept = (trial_dir(split / "cells" / cell, 2) / "results.json").read_text()
    result = CliRunner().invoke(cli, sweep_args(split, "--jobs", jobs, "--split-trials"))
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "ran 2 cell(s)" in result.output and "4/4 done" in result.output
    assert (trial_dir(split / "cells" / cell, 2) / "results.json").read_text() == kept
    parted = cell_results(split)
    assert len(parted) == 4
    for name, results in parted.items():
        assert results.pop("assembled_from") == [
            f"trials/{summary['trial']}" for summary in results["trials"]]
    assert parted == cell_results(whole)
    command = json.loads((split / "sweep.json").read_text())["specs"][1]["commands"][0]
    assert command.endswith(f"--split-trials --jobs {jobs} -o {split}")
    again = CliRunner().invoke(cli, sweep_args(split, "--jobs", jobs, "--split-trials"))
    assert again.exit_code == 0 and "done 4, to run 0" in again.output
    # the report reads the assembled cells as it reads whole ones
    rows = report_rows(whole, tmp_path / "whole-report")
    assert len(rows) == 4 and rows == report_rows(split, tmp_path / "split-report")


def report_rows(sweep_dir, report_dir) -> list[dict]:
    """cells.csv of ``crasp report``, less the columns that differ between two directories of
    the same cells (times, the directory)."""
    result = CliRunner().invoke(cli, ["report", str(sweep_dir), "-o", str(report_dir)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    with open(report_dir / "cells.csv", newline="") as file:
        return [{key: value for key, value in row.items()
                 if "time" not in key and key != "sweep_dir"} for row in csv.DictReader(file)]


def test_parts_finished_in_an_earlier_session_are_assembled_without_training(tmp_path):
    config = search_config("L3", SEARCHES[1], 0)   # trial 1 succeeds: the search is 0 and 1
    out = tmp_path / "split"
    result = CliRunner().invoke(cli, sweep_args(out, "--split-trials", languages="L4"))
    assert result.exit_code == 0, result.output + repr(result.exception)
    listed = CliRunner().invoke(cli, [*sweep_args(out, "--split-trials"), "--dry-run"])
    cell = next(line.split("\t")[1] for line in listed.stdout.splitlines()
                if line.startswith("0\t"))
    run_parts(config, out / "cells" / cell, [0, 1])
    parts = [(trial_dir(out / "cells" / cell, t) / "metrics.jsonl").read_text() for t in (0, 1)]
    result = CliRunner().invoke(cli, sweep_args(out, "--split-trials"))
    assert result.exit_code == 0, result.output + repr(result.exception)
    # the other L3 cell trained its two parts (its trial 1 succeeds); this one trained none
    assert "ran 2 cell(s) and 2 trial part(s)" in result.output
    assert json.loads((out / "cells" / cell / "results.json").read_text())[
        "assembled_from"] == ["trials/0", "trials/1"]
    assert not (out / "cells" / cell / "trials" / "2").exists()
    assert parts == [(trial_dir(out / "cells" / cell, t) / "metrics.jsonl").read_text()
                     for t in (0, 1)]   # no part trained again (timings would differ)


def test_split_trials_needs_a_search(tmp_path):
    result = CliRunner().invoke(cli, ["sweep", "--depths", "1", "--languages", "L3",
                                      "--split-trials", "-o", str(tmp_path / "s")])
    assert result.exit_code == 2 and "--split-trials splits a --search" in result.output
    assert not (tmp_path / "s").exists()


def test_trials_runs_some_configurations_now_and_the_rest_later(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    assert CliRunner().invoke(cli, sweep_args(whole, languages="L4")).exit_code == 0
    first = CliRunner().invoke(cli, sweep_args(split, "--split-trials", "--trials", "0,1",
                                               languages="L4"))
    assert first.exit_code == 0, first.output + repr(first.exception)
    assert "ran 0 cell(s) and 4 trial part(s)" in first.output and "0/2 done" in first.output
    # (no L4 trial succeeds: each search needs all four)
    for cell in split.glob("cells/*/"):
        assert sorted(path.name for path in (cell / "trials").iterdir()) == ["0", "1"]
        assert not (cell / "results.json").exists()
    command = json.loads((split / "sweep.json").read_text())["specs"][0]["commands"][0]
    assert "--split-trials --trials 0,1 --jobs" in command
    listed = CliRunner().invoke(cli, [*sweep_args(split, "--split-trials", languages="L4"),
                                      "--dry-run"])
    assert [line.split("\t")[2] for line in listed.stdout.splitlines()] == \
        ["todo (parts 0, 1 of 4 done)"] * 2
    rest = CliRunner().invoke(cli, sweep_args(split, "--split-trials", "--trials", "2:3",
                                              languages="L4"))
    assert rest.exit_code == 0 and "ran 2 cell(s) and 4 trial part(s)" in rest.output
    assert "2/2 done" in rest.output
    parted = cell_results(split)
    for results in parted.values():
        assert results.pop("assembled_from") == [f"trials/{t}" for t in range(4)]
    assert parted == cell_results(whole)


@pytest.mark.parametrize("extra, message", [
    (["--trials", "0"], "--trials picks configurations of a split search: give --split-trials"),
    (["--split-trials", "--trials", "1,4,7"], "configurations 0 to 3, not 4, 7"),
    (["--split-trials", "--trials", "x"], "--trials"),
])
def test_bad_trials_are_refused(tmp_path, extra, message):
    result = CliRunner().invoke(cli, sweep_args(tmp_path / "s", *extra))
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "s").exists()
