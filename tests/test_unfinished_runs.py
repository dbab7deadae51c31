"""Runs that are not what their files' names suggest: a run stopped before it finished (float or
``--precision``: the same file names until it finishes), a searched run whose selected trial has
another width than config.json's, and a finished ``--precision`` run whose format model was
removed. A session fuzzer that damaged runs and ran every command on them found the first
(``crasp analyze`` on a stopped ``--precision`` run: AttributeError) and, beside it, the second
(``crasp analyze`` refused a searched run's weights as corrupt).
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
import torch
from click.testing import CliRunner

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.models import recognize
from crasp.models.kinds import (FIXED_PRECISION_RUN, PRECISION_RUN_WITHOUT_MODEL, TRAINED_RUN,
                                UNFINISHED_RUN)
from crasp.train import run as files
from crasp.train.analysis.loading import load_run
from crasp.train.api import load_run as api_load_run
from crasp.train.loop import train
from crasp.train.presets import resolve_preset

torch.set_num_threads(1)

PRECISIONS = {"float": None, "precision": "4.1"}


def config(precision=None, epochs=2, **overrides):
    return resolve_preset("default", **{
        "language": "L3", "depth": 1, "d_model": 2, "n_heads": 1, "d_ff": 8, "train_bin": (4, 8),
        "test_bins": [(9, 12)], "n_train": 32, "n_test": 8, "epochs": epochs, "warmup_steps": 1,
        "device": "cpu", "precision": precision, **overrides})


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


COMMANDS = {
    "run --model": lambda run, out: ["run", "--model", run, "a b a"],
    "eval": lambda run, out: ["eval", run, "--language", "L3", "--bins", "9:12", "--n", "4"],
    "decompile": lambda run, out: ["decompile", run, "-o", out / "program.crasp"],
    "extract": lambda run, out: ["extract", run, "-o", out / "program.crasp"],
    "analyze": lambda run, out: ["analyze", run, "-o", out / "analysis"],
    "export": lambda run, out: ["export", run, "--format", "onnx", "-o", out / "model.onnx"],
    "train --init-from": lambda run, out: [
        "train", "--language", "L3", "--depth", "1", "--init-from", run, "--epochs", "1",
        "--train-bin", "4:8", "--test-bins", "9:12", "--n-train", "32", "--n-test", "8",
        "-o", out / "run"],
}


@pytest.mark.parametrize("trained", sorted(PRECISIONS))
def test_every_command_refuses_an_unfinished_run_until_a_resume_finishes_it(trained, tmp_path):
    run = tmp_path / "run"
    assert train(config(PRECISIONS[trained]), run, resume=False,
                 max_epochs_this_session=1) is None
    assert recognize(run) is UNFINISHED_RUN
    for command, arguments in COMMANDS.items():
        out = tmp_path / command.replace(" ", "_")
        out.mkdir()
        result = invoke(*arguments(run, out))
        assert result.exit_code == 2, (command, result.output)
        assert result.output.count("\n") == 1 and "Traceback" not in result.output, command
        assert result.output.startswith(f"error: {run} is {UNFINISHED_RUN.what}; "), command
        assert "finish it first: crasp train --resume RUN" in result.output, command
        assert list(out.iterdir()) == [], command
    with pytest.raises(CraspError, match=f"finish it with crasp train --resume {run}$"):
        api_load_run(run)
    assert invoke("train", "--resume", run, "--no-progress").exit_code == 0
    assert recognize(run) is (FIXED_PRECISION_RUN if PRECISIONS[trained] else TRAINED_RUN)
    result = invoke(*COMMANDS["eval"](run, tmp_path))
    assert result.exit_code == 0 and "exact match" in result.output, result.output


def test_a_searched_run_is_read_with_its_selected_trials_width(tmp_path):
    """Trial 0 cannot learn (lr 1e-9), so the search keeps trial 1, four wide where config.json
    says two: every reader builds the model of the selected trial."""
    run = tmp_path / "run"
    searched = config(epochs=4, search=[{"d_model": 2, "lr": 1e-9}, {"d_model": 4, "lr": 0.03}])
    results = train(searched, run, resume=False)
    assert results["best_trial"] == 1 and results["selected"]["d_model"] == 4
    assert json.loads((run / files.CONFIG_FILE).read_text())["d_model"] == 2
    loaded = load_run(run)
    assert loaded.config.d_model == 4 and loaded.config.search is None
    public = api_load_run(run)
    assert public.config.d_model == loaded.config.d_model
    ours, theirs = loaded.model.state_dict(), public.model.state_dict()
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[name], theirs[name]) for name in ours)
    result = invoke("analyze", run, "-o", tmp_path / "analysis", "--no-progress")
    assert result.exit_code == 0 and "effective depth" in result.output, result.output
    shown = results["bins"]["9:12"]["exact_match"]
    assert f"exact match on 9:12: {shown:.2%}" in result.output


@pytest.fixture(scope="module")
def precision_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("precision") / "run"
    train(config("4.1", epochs=1), run, resume=False)
    assert recognize(run) is FIXED_PRECISION_RUN
    return run


def model_files(run) -> dict[str, bytes]:
    return {path.name: path.read_bytes()
            for path in sorted((run / files.FORMAT_MODEL_DIR).iterdir())}


@pytest.mark.parametrize("removed", ["the folder", "its weights"])
def test_a_resume_writes_a_removed_format_model_again_the_same(precision_run, removed, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(precision_run, run)
    model = run / files.FORMAT_MODEL_DIR
    if removed == "the folder":
        shutil.rmtree(model)
    else:
        (model / "model.safetensors").unlink()
    refused = invoke(*COMMANDS["eval"](run, tmp_path))
    assert refused.exit_code == 2 and refused.output.count("\n") == 1, refused.output
    assert refused.output.startswith(f"error: {run} is {PRECISION_RUN_WITHOUT_MODEL.what}; ")
    assert refused.output.endswith("crasp train --resume RUN writes its format model (RUN/model) "
                                   "again from the run's best weights\n")
    assert recognize(run) is PRECISION_RUN_WITHOUT_MODEL
    with pytest.raises(CraspError, match=re.escape(
            f"{run} is a finished --precision run without its format model ({model}); crasp "
            f"train --resume {run} writes it again")):  # the float runs' reader says so too
        load_run(run)
    assert invoke("train", "--resume", run, "--no-progress").exit_code == 0
    assert model_files(run) == model_files(precision_run)
    assert recognize(run) is FIXED_PRECISION_RUN
    assert invoke(*COMMANDS["eval"](run, tmp_path)).exit_code == 0


@pytest.mark.parametrize("holding", ["a file of its own", "the weights alone"])
def test_a_resume_leaves_a_format_model_folder_it_cannot_tell_is_crasps_alone(precision_run,
                                                                              holding, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(precision_run, run)
    model = run / files.FORMAT_MODEL_DIR
    if holding == "a file of its own":
        shutil.rmtree(model)
        model.mkdir()
        (model / "notes.txt").write_text("mine")
    else:
        (model / "config.json").unlink()
    kept = model_files(run)
    result = invoke("train", "--resume", run, "--no-progress")
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert f"{model}: it holds 1 entry ({next(iter(kept))})" in result.output
    assert model_files(run) == kept


@pytest.mark.parametrize("field, value, message", [
    ("best_trial", 3, "best_trial 3 is not one of the 1 trials of its config"),
    ("best_trial", -1, "best_trial -1 is not one of the 1 trials of its config"),
    ("data", {"vocab": None}, "no vocabulary recorded, so the format model cannot be written"),
    ("config", {"precision": "4.1", "depth": 0}, "config: depth must be an integer from 1"),
])
def test_a_format_model_that_results_json_cannot_rebuild_is_refused_naming_it(
        precision_run, tmp_path, field, value, message):
    run = tmp_path / "run"
    shutil.copytree(precision_run, run)
    shutil.rmtree(run / files.FORMAT_MODEL_DIR)
    results = json.loads((run / files.RESULTS_FILE).read_text())
    changed = {**results, field: value} if field != "config" else {
        **results, "config": {**results["config"], **value}}
    (run / files.RESULTS_FILE).write_text(json.dumps(changed))
    result = invoke("train", "--resume", run, "--no-progress")
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert f"{run / files.RESULTS_FILE}: {message}" in result.output
    assert not (run / files.FORMAT_MODEL_DIR).exists()
