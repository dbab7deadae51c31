"""A whole run (not a sweep's part) resumed or read over damaged files: every field of a stopped
run's config.json, and every score of a finished run's results.json, replaced or removed.
``crasp train --resume`` finishes the run, prints its summary or refuses in one line; never a
traceback. Found by a session fuzzer of runs (float, ``--precision`` and ALiBi, finished and
stopped mid-way): an ``init_from`` that is not a path and a seed beyond what
``torch.manual_seed`` takes reached the trainer (TypeError, ValueError), and a bin without its
exact match broke the summary of a finished run (KeyError).
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from click.testing import CliRunner

from crasp.cli import cli
from crasp.languages.language import MAX_LENGTH
from crasp.train import run as files
from crasp.train.config import TrainConfig
from crasp.train.loop import train
from crasp.train.results import RESULTS_FILE

torch.set_num_threads(1)

WRONG = [None, "x", -1, 10**30, [], {}, 1.5, True]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A run stopped after its first of two epochs, and the same run finished."""
    root = tmp_path_factory.mktemp("runs")
    config = TrainConfig(language="L3", depth=1, d_model=4, n_heads=1, d_ff=8, train_bin=(1, 4),
                         test_bins=[(5, 6), (7, 8)], n_train=20, n_test=10, epochs=2,
                         device="cpu")
    assert train(config, root / "stopped", max_epochs_this_session=1) is None
    shutil.copytree(root / "stopped", root / "finished")
    assert train(config, root / "finished") is not None
    return root


def resume(run):
    return CliRunner().invoke(cli, ["train", "--resume", str(run), "--no-progress"])


def assert_answered(result, where):
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        where, result.exception)
    assert result.exit_code in (0, 2) and "Traceback" not in result.output, where
    if result.exit_code == 2:
        assert result.output.startswith("error: ") and result.output.count("\n") == 1, where


def test_every_config_field_of_a_stopped_run_resumes_or_is_refused_in_words(runs, tmp_path):
    config = json.loads((runs / "stopped" / files.CONFIG_FILE).read_text())
    refused = 0
    for field in config:
        for wrong in WRONG:
            run = tmp_path / "run"
            shutil.rmtree(run, ignore_errors=True)
            shutil.copytree(runs / "stopped", run)
            (run / files.CONFIG_FILE).write_text(json.dumps({**config, field: wrong}))
            result = resume(run)
            assert_answered(result, (field, wrong))
            refused += result.exit_code == 2
    assert refused > len(config) * 4


@pytest.mark.parametrize("field, value, message", [
    ("init_from", 7, "init_from must be a checkpoint directory or 'compiled', got 7"),
    ("init_from", "", "init_from must be a checkpoint directory or 'compiled', got ''"),
    ("seed", 1 << 63, f"seed must be at most {(1 << 63) - 1:,}, got {1 << 63}"),
    ("data_seed", 10**30, f"data_seed must be at most {(1 << 63) - 1:,}, got {10**30}"),
])
def test_a_config_field_the_trainer_cannot_use_is_refused_naming_it(runs, tmp_path, field,
                                                                    value, message):
    run = tmp_path / "run"
    shutil.copytree(runs / "stopped", run)
    config = json.loads((run / files.CONFIG_FILE).read_text())
    (run / files.CONFIG_FILE).write_text(json.dumps({**config, field: value}))
    result = resume(run)
    assert result.exit_code == 2 and message in result.output, result.output


def test_the_largest_seed_trains(tmp_path):
    config = TrainConfig(language="L3", depth=1, d_model=4, n_heads=1, d_ff=8, train_bin=(1, 4),
                         test_bins=[(5, 6)], n_train=20, n_test=10, epochs=1, device="cpu",
                         seed=(1 << 63) - 1, data_seed=(1 << 63) - 1)
    assert train(config, tmp_path / "run") is not None


def places(results: dict):
    """Every key the summary shows: the top level's, and each bin's."""
    yield from ((key,) for key in results if key != "bins")
    for name, scores in results["bins"].items():
        yield from (("bins", name, key) for key in scores)


@pytest.mark.parametrize("how", ["deleted", "null"])
def test_a_finished_runs_summary_shows_what_results_json_lacks_as_a_dash(runs, tmp_path, how):
    results = json.loads((runs / "finished" / RESULTS_FILE).read_text())
    shown = 0
    for place in places(results):
        changed = json.loads(json.dumps(results))
        holder = changed
        for key in place[:-1]:
            holder = holder[key]
        if how == "deleted":
            del holder[place[-1]]
        else:
            holder[place[-1]] = None
        run = tmp_path / "run"
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(runs / "finished", run)
        (run / RESULTS_FILE).write_text(json.dumps(changed))
        result = resume(run)
        assert_answered(result, place)
        if result.exit_code == 0:
            shown += 1
            if place[0] == "bins" and place[-1] in ("exact_match", "token_accuracy", "n"):
                row = next(line for line in result.output.splitlines()
                           if line.startswith(place[1] + " "))
                assert " - " in f"{row} ", (place, row)
    assert shown > len(results)


def bin_bounds(config: dict):
    """Every bound of every bin a run's config.json names: (field, index, side)."""
    yield from (("train_bin", None, side) for side in (0, 1))
    yield from (("test_bins", index, side) for index in range(len(config["test_bins"]))
                for side in (0, 1))


@pytest.mark.parametrize("bound", [MAX_LENGTH + 1, 10**30])
def test_a_bin_bound_past_the_longest_length_is_refused_by_every_reader(runs, tmp_path, bound):
    """A finished run whose config.json names a bin bound beyond ``MAX_LENGTH``: found by the
    fuzzer at a test bin's upper bound, where ``crasp extract`` and ``crasp analyze`` rebuilt
    the test bins and enumerated 10**30 lengths; every bound of every bin is tried here."""
    config = json.loads((runs / "finished" / files.CONFIG_FILE).read_text())
    for field, index, side in bin_bounds(config):
        changed = json.loads(json.dumps(config))
        holder = changed[field] if index is None else changed[field][index]
        holder[side] = bound
        run = tmp_path / "run"
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(runs / "finished", run)
        (run / files.CONFIG_FILE).write_text(json.dumps(changed))
        for args in (["extract", str(run), "-o", str(tmp_path / "e.crasp")],
                     ["analyze", str(run), "-o", str(tmp_path / "a"), "--no-progress"],
                     ["train", "--resume", str(run), "--no-progress"]):
            result = CliRunner().invoke(cli, args)
            assert_answered(result, (field, index, side, args[0]))
            assert result.exit_code == 2 and "1 <= LO <= HI" in result.output, (args, result.output)
