"""The hostile-file matrix: model directories and resume states that are broken, hostile or
not files at all are refused at once with a message naming the file, exit status 2, and no
traceback (and no hang: FIFOs and /dev/zero are refused before a byte is read)."""

from __future__ import annotations

import copy
import io
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

import crasp
from crasp.cli import cli
from crasp.errors import CraspError
from crasp.compiler import compile_program, model_format
from crasp.train.config import TrainConfig
from crasp.train.loop import train


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "m"
    compile_program(crasp.load_program("examples/majority.crasp")).save(path)
    return path


def edit_config(change):
    def mutate(path: Path) -> None:
        config = json.loads((path / "config.json").read_text())
        change(config)
        (path / "config.json").write_text(json.dumps(config))
    return mutate


def replace_with(name: str, make):
    def mutate(path: Path) -> None:
        (path / name).unlink()
        make(path / name)
    return mutate


def write(name: str, data: bytes):
    return lambda path: (path / name).write_bytes(data)


def set_precision(**values):
    return edit_config(lambda config: config["precision"].update(values))


MODEL_CASES = {
    "config symlink to /dev/zero": replace_with("config.json",
                                                lambda p: p.symlink_to("/dev/zero")),
    "weights symlink to /dev/zero": replace_with("model.safetensors",
                                                 lambda p: p.symlink_to("/dev/zero")),
    "config is a FIFO": replace_with("config.json", os.mkfifo),
    "weights are a FIFO": replace_with("model.safetensors", os.mkfifo),
    "config is a directory": replace_with("config.json", Path.mkdir),
    "config missing": lambda path: (path / "config.json").unlink(),
    "config empty": write("config.json", b""),
    "config truncated": lambda path: (path / "config.json").write_bytes(
        (path / "config.json").read_bytes()[:40]),
    "config not UTF-8": write("config.json", b"\xff\xfe{}"),
    "100,000 nested brackets": write("config.json", b"[" * 100_000 + b"]" * 100_000),
    "5,000-digit integer": write("config.json", b'{"version": ' + b"9" * 5000 + b"}"),
    "NaN": write("config.json", b'{"version": NaN}'),
    "config is a list": write("config.json", b"[1, 2]"),
    "version is true": edit_config(lambda config: config.update(version=True)),
    "version is 99": edit_config(lambda config: config.update(version=99)),
    "d_model is a string": edit_config(lambda config: config.update(d_model="4")),
    "n_layers is true": edit_config(lambda config: config.update(n_layers=True)),
    "total_bits = 1": set_precision(total_bits=1),
    "total_bits = 54": set_precision(total_bits=54),
    "total_bits is true": set_precision(total_bits=True),
    "frac_bits = -1": set_precision(frac_bits=-1),
    "weights random": write("model.safetensors", os.urandom(256)),
    "weights empty": write("model.safetensors", b""),
    "weights truncated": lambda path: (path / "model.safetensors").write_bytes(
        (path / "model.safetensors").read_bytes()[:100]),
}


@pytest.mark.parametrize("case", MODEL_CASES)
def test_a_broken_or_hostile_model_directory_is_refused(tmp_path, model_dir, case):
    broken = tmp_path / "m"
    shutil.copytree(model_dir, broken)
    MODEL_CASES[case](broken)
    result = CliRunner().invoke(cli, ["run", "--model", str(broken), "a b"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert str(broken) in result.output


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path, model_dir,
                                                              monkeypatch):
    monkeypatch.setattr(model_format, "MAX_CONFIG_BYTES", 64)
    result = CliRunner().invoke(cli, ["run", "--model", str(model_dir), "a b"])
    assert result.exit_code == 2
    assert "config.json is" in result.output and "more than the 64 allowed" in result.output


# ---------------------------------------------------------------- resume states

@pytest.fixture(scope="module")
def interrupted_run(tmp_path_factory) -> Path:
    """A run stopped after its first of two epochs: config.json and a real state.pt."""
    path = tmp_path_factory.mktemp("run") / "r"
    config = TrainConfig(language="L3", depth=1, train_bin=(1, 4), test_bins=[(5, 6)],
                         n_train=20, n_test=10, epochs=2, device="cpu")
    assert train(config, path, max_epochs_this_session=1) is None
    assert (path / "state.pt").is_file()
    return path


def torch_bytes(value) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


class Hostile:
    def __reduce__(self):
        return (os.system, ("touch HACKED",))


def real_state(path: Path) -> dict:
    return torch.load(path / "state.pt", weights_only=True)


STATE_CASES = {
    "truncated": lambda path: (path / "state.pt").write_bytes(
        (path / "state.pt").read_bytes()[:200]),
    "random": write("state.pt", os.urandom(4096)),
    "empty": write("state.pt", b""),
    "hostile pickle": write("state.pt", pickle.dumps(Hostile())),
    "wrong keys": write("state.pt", torch_bytes({"weights": torch.zeros(2)})),
    "not a dict": write("state.pt", torch_bytes([1, 2, 3])),
    "epoch is true": lambda path: (path / "state.pt").write_bytes(
        torch_bytes({**real_state(path), "epoch": True})),
    "model of another shape": lambda path: (path / "state.pt").write_bytes(
        torch_bytes({**real_state(path), "model": {"embed.weight": torch.zeros(3)}})),
    "symlink to /dev/zero": replace_with("state.pt", lambda p: p.symlink_to("/dev/zero")),
    "FIFO": replace_with("state.pt", os.mkfifo),
    "config.json symlink to /dev/zero": replace_with("config.json",
                                                     lambda p: p.symlink_to("/dev/zero")),
    "config.json a list": write("config.json", b"[]"),
}


@pytest.mark.parametrize("case", STATE_CASES)
def test_a_broken_or_hostile_resume_state_is_refused(tmp_path, interrupted_run, case,
                                                     monkeypatch):
    run = tmp_path / "r"
    shutil.copytree(interrupted_run, run)
    STATE_CASES[case](run)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["train", "--resume", str(run), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert str(run) in result.output
    assert not (tmp_path / "HACKED").exists()


def test_the_real_state_still_resumes(tmp_path, interrupted_run):
    run = tmp_path / "r"
    shutil.copytree(interrupted_run, run)
    result = CliRunner().invoke(cli, ["train", "--resume", str(run), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert (run / "results.json").is_file()


# ---------------------------------------------------------------- dataset manifests

@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    result = CliRunner().invoke(cli, ["generate", "L3", "--bins", "1:6,7:8", "--n", "6",
                                      "--val-fraction", "0", "-o", str(root)])
    assert result.exit_code == 0, result.output
    return root / "L3"


DATASET_CASES = {
    "manifest symlink to /dev/zero": replace_with("manifest.json",
                                                  lambda p: p.symlink_to("/dev/zero")),
    "manifest is a FIFO": replace_with("manifest.json", os.mkfifo),
    "manifest is a list": write("manifest.json", b"[]"),
    "manifest without splits": write("manifest.json", json.dumps(
        {"language": "L3", "bins": [], "format": "paper"}).encode()),
    "splits of the wrong shape": write("manifest.json", json.dumps(
        {"language": "L3", "bins": ["1:6"], "format": "paper", "splits": [1, 2],
         "alphabet": ["a"]}).encode()),
    "a split file is a FIFO": replace_with("1_to_6_src.txt", os.mkfifo),
}


@pytest.mark.parametrize("case", DATASET_CASES)
def test_a_broken_or_hostile_dataset_is_refused(tmp_path, dataset_dir, case):
    from crasp.errors import CraspError
    from crasp.languages import read_task

    broken = tmp_path / "L3"
    shutil.copytree(dataset_dir, broken)
    DATASET_CASES[case](broken)
    with pytest.raises(CraspError, match=str(broken)):
        read_task(broken)


@pytest.mark.parametrize("kind", ["device", "fifo"])
@pytest.mark.parametrize("command", [["run"], ["depth-check"], ["fmt"], ["compile", "-o", "m"]])
def test_a_program_that_is_not_a_regular_file_is_refused_at_once(tmp_path, monkeypatch, kind,
                                                                  command):
    monkeypatch.chdir(tmp_path)
    program = tmp_path / "p.crasp"
    if kind == "device":
        program.symlink_to("/dev/zero")   # read to the end, it never ends
    else:
        os.mkfifo(program)                # opened for reading, it blocks forever
    arguments = [command[0], str(program), *command[1:]] + (["a"] if command == ["run"] else [])
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 2, result.output
    assert "not a regular file" in result.output and "Traceback" not in result.output


JSON_VALUES = st.sampled_from([0, -1, 1.5, None, True, "", "x", [], [1], {}, {"a": 1}])


@st.composite
def config_edits(draw, config: dict):
    """A path into ``config`` (a top-level key, or an element of a list-valued key) and a
    JSON value of any type to put there."""
    key = draw(st.sampled_from(sorted(config)))
    value = config[key]
    if isinstance(value, list) and value and draw(st.booleans()):
        return (key, draw(st.integers(0, len(value) - 1))), draw(JSON_VALUES)
    return (key,), draw(JSON_VALUES)


@settings(max_examples=40)
@given(st.data())
def test_a_config_value_of_any_type_anywhere_loads_or_is_one_message(tmp_path_factory, model_dir,
                                                                    data):
    from crasp.decompile.decompiling import decompile_model

    config = json.loads((model_dir / "config.json").read_text())
    path, value = data.draw(config_edits(config))
    edited = copy.deepcopy(config)
    if len(path) == 1:
        edited[path[0]] = value
    else:
        edited[path[0]][path[1]] = value
    broken = tmp_path_factory.mktemp("edited") / "m"
    shutil.copytree(model_dir, broken)
    (broken / "config.json").write_text(json.dumps(edited))
    try:
        model = model_format.load_model(broken)
    except CraspError as error:
        assert str(broken) in str(error)
        return
    decompile_model(model, source=str(broken))  # what loads is usable: no traceback later
    CliRunner().invoke(cli, ["run", "--model", str(broken), "a b"], catch_exceptions=False)


@pytest.fixture(scope="module")
def run_and_realization(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("json-objects")
    runner = CliRunner()
    realization = root / "float"
    result = runner.invoke(cli, ["compile", "examples/dyck1.crasp", "--target", "float",
                                 "--max-length", "12", "-o", str(realization)])
    assert result.exit_code == 0, result.output
    run = root / "run"
    result = runner.invoke(cli, ["train", "--language", "L3", "--depth", "1", "--train-bin",
                                 "1:4", "--test-bins", "5:6", "--n-train", "16", "--n-test", "8",
                                 "--epochs", "1", "--no-progress", "-o", str(run)])
    assert result.exit_code == 0, result.output
    return run, realization


NOT_OBJECTS = ["[]", "1", '"text"', "null", "true"]
# (which directory, its JSON file, the commands that read it; PLACE is the directory)
JSON_READERS = [
    ("realization", "config.json", [["eval", "PLACE", "--language", "dyck1", "--bins", "1:4",
                                     "--n", "2"], ["export", "PLACE", "--format", "hf", "-o",
                                                   "OUT"], ["train", "--init-from", "PLACE",
                                                            "--language", "dyck1", "-o", "OUT"]]),
    ("realization", "model.json", [["eval", "PLACE", "--language", "dyck1", "--bins", "1:4",
                                    "--n", "2"]]),
    ("run", "config.json", [["eval", "PLACE", "--language", "L3", "--bins", "5:6", "--n", "2"],
                            ["extract", "PLACE", "-o", "OUT.crasp"]]),
    ("run", "results.json", [["eval", "PLACE", "--language", "L3", "--bins", "5:6", "--n", "2"],
                             ["extract", "PLACE", "-o", "OUT.crasp"]]),
]


@pytest.mark.parametrize("text", NOT_OBJECTS)
@pytest.mark.parametrize("which,name,commands", JSON_READERS)
def test_a_run_file_that_is_json_but_not_an_object_is_one_message(tmp_path, run_and_realization,
                                                                  which, name, commands, text):
    """Every JSON file of a run or realization holds an object: a list, a number, a string,
    null or a Boolean there is one message naming the file, exit status 2, no traceback,
    from every command that reads it."""
    source = dict(zip(("run", "realization"), run_and_realization))[which]
    place = tmp_path / which
    shutil.copytree(source, place)
    (place / name).write_text(text)
    for command in commands:
        places = {"PLACE": place, "OUT": tmp_path / "out", "OUT.crasp": tmp_path / "out.crasp"}
        words = [str(places[w]) if w in places else w for w in command]
        result = CliRunner().invoke(cli, words)
        assert result.exit_code == 2, (command, result.output)
        assert "Traceback" not in result.output and name in result.output, (command,
                                                                           result.output)


@pytest.mark.parametrize("text", NOT_OBJECTS + ['{"specs": 3}'])
def test_a_sweep_record_that_is_not_one_is_one_message(tmp_path, text):
    (tmp_path / "sweep" / "cells").mkdir(parents=True)
    (tmp_path / "sweep" / "sweep.json").write_text(text)
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "sweep"), "--no-compiled"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "sweep.json" in result.output


def test_a_missing_checkpoint_is_named_once(tmp_path):
    missing = str(tmp_path / "nowhere")
    result = CliRunner().invoke(cli, ["train", "--language", "L3", "--depth", "1",
                                      "--init-from", missing, "-o", str(tmp_path / "run")])
    assert result.exit_code == 2 and result.output.count(missing) == 1, result.output
    assert "is missing" in result.output


def test_a_realization_with_a_repeated_token_or_a_bad_certified_length_is_refused(tmp_path):
    """export --format hf accepted both (an outside audit): a repeated vocabulary token, and a
    ``certified_length`` that is not an integer >= 0 (a TypeError in the export)."""
    model = tmp_path / "m"
    result = CliRunner().invoke(cli, ["compile", "examples/dyck1.crasp", "--target", "float",
                                      "--max-length", "12", "-o", str(model)])
    assert result.exit_code == 0, result.output
    original = json.loads((model / "model.json").read_text())
    for change, message in [({"vocab": original["vocab"] + ["("]}, "repeats a token"),
                            ({"certified_length": "x"}, "certified_length"),
                            ({"certified_length": -1}, "certified_length"),
                            ({"certified_length": True}, "certified_length")]:
        (model / "model.json").write_text(json.dumps({**original, **change}))
        for command in (["export", str(model), "--format", "hf", "-o", str(tmp_path / "x")],
                        ["eval", str(model), "--language", "dyck1", "--bins", "1:4",
                         "--n", "2"]):
            result = CliRunner().invoke(cli, command)
            assert result.exit_code == 2 and message in result.output, (command, result.output)
