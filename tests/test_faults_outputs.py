"""The output-failure matrix: every writing command x every kind of folder already at its place
(a training run, a sweep, a compiled model, a dataset, a Hugging Face-style model, unrelated
files), with and without --force, and failing writes (a path under a file, a full disk, a
read-only place). Nothing foreign is ever lost; a failure leaves the old result whole."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.compiler import compile_program, load_model
from crasp.train.config import TrainConfig

TRAIN_ARGS = ["--language", "L3", "--depth", "1", "--train-bin", "1:4", "--test-bins", "5:6",
              "--n-train", "20", "--n-test", "10", "--epochs", "1", "--no-progress"]


def make_training_run(path: Path) -> None:
    path.mkdir(parents=True)
    config = TrainConfig(language="L3", depth=1).to_dict()
    (path / "config.json").write_text(json.dumps(config))
    (path / "metrics.jsonl").write_text('{"epoch": 1}\n')
    (path / "results.json").write_text('{"bins": []}\n')


def make_sweep(path: Path) -> None:
    (path / "cells" / "c0").mkdir(parents=True)
    (path / "sweep.json").write_text(json.dumps({"version": 1, "specs": []}))
    (path / "cells" / "c0" / "results.json").write_text("{}\n")


def make_compiled_model(path: Path) -> None:
    compile_program(crasp.load_program("examples/majority.crasp")).save(path)


def make_dataset(path: Path) -> None:
    result = CliRunner().invoke(cli, ["generate", "L3", "--bins", "1:3", "--n", "5",
                                      "--val-fraction", "0", "-o", str(path.parent)])
    assert result.exit_code == 0, result.output
    assert path.is_dir()


def make_huggingface(path: Path) -> None:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_layer": 2}))
    (path / "model.safetensors").write_bytes(os.urandom(64))
    (path / "tokenizer.json").write_text("{}")


def make_unrelated(path: Path) -> None:
    path.mkdir(parents=True)
    (path / "notes.txt").write_text("keep me")


FOLDERS = {"training run": make_training_run, "sweep": make_sweep,
           "compiled model": make_compiled_model, "dataset": make_dataset,
           "huggingface": make_huggingface, "unrelated": make_unrelated}

# command -> (its own kind, arguments writing to PLACE); generate writes into PARENT/L3
WRITERS = {
    "compile": ("compiled model", lambda place: ["compile", "examples/dyck1.crasp",
                                                 "-o", str(place)]),
    "generate": ("dataset", lambda place: ["generate", "L3", "--bins", "1:6,7:8", "--n", "6",
                                           "--val-fraction", "0", "-o", str(place.parent)]),
    "train": ("training run", lambda place: ["train", *TRAIN_ARGS, "-o", str(place)]),
}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def place_for(tmp_path: Path) -> Path:
    return tmp_path / "out" / "L3"


def leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("command", WRITERS)
def test_a_writer_replaces_only_its_own_kind_and_only_with_force(tmp_path, command, folder,
                                                                 force):
    own_kind, arguments = WRITERS[command]
    place = place_for(tmp_path)
    FOLDERS[folder](place)
    before = snapshot(place)
    result = CliRunner().invoke(cli, arguments(place) + (["--force"] if force else []))
    assert "Traceback" not in result.output
    if folder == own_kind and force:
        assert result.exit_code == 0, result.output
        assert snapshot(place) != before
    else:
        assert result.exit_code == 2, result.output
        assert snapshot(place) == before
        expected = "--force" if folder == own_kind else "refusing"
        assert expected in result.output
    assert leftovers(place.parent) == []


@pytest.mark.parametrize("command", WRITERS)
def test_an_absent_or_empty_place_is_written(tmp_path, command):
    _, arguments = WRITERS[command]
    place = place_for(tmp_path)
    place.mkdir(parents=True)
    result = CliRunner().invoke(cli, arguments(place))
    assert result.exit_code == 0, result.output
    assert any(place.iterdir())


@pytest.mark.parametrize("command", WRITERS)
def test_a_place_under_a_file_is_a_clear_error(tmp_path, command):
    _, arguments = WRITERS[command]
    (tmp_path / "out").write_text("a file")
    result = CliRunner().invoke(cli, arguments(place_for(tmp_path)))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "error" in result.output.lower()
    assert (tmp_path / "out").read_text() == "a file"


def full_disk(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("command", WRITERS)
def test_a_full_disk_leaves_the_old_result_whole(tmp_path, monkeypatch, command):
    own_kind, arguments = WRITERS[command]
    place = place_for(tmp_path)
    FOLDERS[own_kind](place)
    before = snapshot(place)
    monkeypatch.setattr(os, "fsync", full_disk)
    result = CliRunner().invoke(cli, arguments(place) + ["--force"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "No space left on device" in result.output
    assert snapshot(place) == before
    assert leftovers(place.parent) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
@pytest.mark.parametrize("command", WRITERS)
def test_a_read_only_place_is_a_clear_error(tmp_path, command):
    _, arguments = WRITERS[command]
    place = place_for(tmp_path)
    place.parent.mkdir()
    place.parent.chmod(0o500)
    try:
        result = CliRunner().invoke(cli, arguments(place))
    finally:
        place.parent.chmod(0o700)
    assert result.exit_code == 2, result.output
    assert "Permission denied" in result.output and "Traceback" not in result.output


def test_a_trace_replaces_only_an_earlier_trace_and_only_with_force(tmp_path):
    trace = tmp_path / "t.txt"
    run = ["run", "examples/majority.crasp", "a b a", "--trace", str(trace)]
    assert CliRunner().invoke(cli, run).exit_code == 0
    first = trace.read_bytes()
    again = CliRunner().invoke(cli, run)
    assert again.exit_code == 2 and "--force" in again.output
    assert CliRunner().invoke(cli, [*run[:3], "b b a", *run[3:], "--force"]).exit_code == 0
    assert trace.read_bytes() != first
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    refused = CliRunner().invoke(cli, [*run[:3], "--trace", str(notes), "--force"])
    assert refused.exit_code == 2 and "refusing" in refused.output
    assert notes.read_text() == "mine"


@pytest.mark.parametrize("target", ["trace", "fmt"])
def test_single_file_writers_report_a_full_disk(tmp_path, monkeypatch, target):
    program = tmp_path / "p.crasp"
    program.write_text('alphabet "a" "b"\nx =   #"a" > #"b"\n')
    original = program.read_bytes()
    monkeypatch.setattr(os, "fsync", full_disk)
    arguments = (["fmt", "-w", str(program)] if target == "fmt" else
                 ["run", str(program), "a", "--trace", str(tmp_path / "t.html")])
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.output and "Traceback" not in result.output
    assert program.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.crasp"]


def test_a_replaced_model_is_whole_and_loads(tmp_path):
    place = tmp_path / "m"
    make_compiled_model(place)
    result = CliRunner().invoke(cli, ["compile", "examples/dyck1.crasp", "-o", str(place),
                                      "--force"])
    assert result.exit_code == 0, result.output
    assert load_model(place).config["vocab"] == ["(", ")"]


# ---------------------------------------------------------------- sweep and report



@pytest.mark.parametrize("folder", ["unrelated", "huggingface", "compiled model"])
def test_sweep_and_report_refuse_a_foreign_folder(tmp_path, folder):
    from test_report import synthetic

    place = tmp_path / "place"
    FOLDERS[folder](place)
    before = snapshot(place)
    sweep = CliRunner().invoke(cli, ["sweep", "--depths", "1", "--languages", "L3",
                                     "--seeds", "1", "-o", str(place)])
    synthetic(tmp_path / "sweep")
    report = CliRunner().invoke(cli, ["report", str(tmp_path / "sweep"), "--no-compiled",
                                      "-o", str(place)])
    for result in (sweep, report):
        assert result.exit_code == 2, result.output
        assert "refusing" in result.output and "Traceback" not in result.output
    assert snapshot(place) == before


def test_sweep_and_report_under_a_file_are_clear_errors(tmp_path):
    from test_report import synthetic

    (tmp_path / "file").write_text("a file")
    synthetic(tmp_path / "sweep")
    for arguments in (["sweep", "--depths", "1", "--languages", "L3", "--seeds", "1",
                       "-o", str(tmp_path / "file" / "s")],
                      ["report", str(tmp_path / "sweep"), "--no-compiled",
                       "-o", str(tmp_path / "file" / "r")]):
        result = CliRunner().invoke(cli, arguments)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
    assert (tmp_path / "file").read_text() == "a file"


def test_a_report_is_refreshed_in_place(tmp_path):
    from test_report import synthetic

    synthetic(tmp_path / "sweep")
    arguments = ["report", str(tmp_path / "sweep"), "--no-compiled", "-o", str(tmp_path / "r")]
    assert CliRunner().invoke(cli, arguments).exit_code == 0
    again = CliRunner().invoke(cli, arguments)
    assert again.exit_code == 0, again.output


def test_a_forced_run_restores_the_old_one_on_failure_and_replaces_it_on_interrupt(tmp_path):
    from crasp.util.outputs import TRAINING_RUN, restored_on_failure

    place = tmp_path / "run"
    make_training_run(place)
    before = snapshot(place)
    with pytest.raises(OSError):
        with restored_on_failure(place, TRAINING_RUN, force=True):
            place.mkdir()
            (place / "metrics.jsonl").write_bytes(b"partial")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert snapshot(place) == before and leftovers(tmp_path) == []
    with pytest.raises(KeyboardInterrupt):
        with restored_on_failure(place, TRAINING_RUN, force=True):
            place.mkdir()
            (place / "state.pt").write_bytes(b"resumable")
            raise KeyboardInterrupt
    assert snapshot(place) == {"state.pt": b"resumable"} and leftovers(tmp_path) == []


@pytest.mark.parametrize("added", ["a file inside", "a folder inside", "a file in its place"])
def test_a_failed_forced_run_keeps_what_a_person_added_and_says_where_the_old_one_is(
        tmp_path, added):
    """A run is trained for hours; a person adds notes to its folder (or puts a file where it
    is written) and the run then fails: nothing is removed, the person's entry and the failed
    run stay, and the error names the hidden folder that keeps the old run."""
    from crasp.util.outputs import TRAINING_RUN, OutputError, restored_on_failure

    place = tmp_path / "run"
    make_training_run(place)
    before = snapshot(place)
    with pytest.raises(OutputError) as refused:
        with restored_on_failure(place, TRAINING_RUN, force=True):
            if added == "a file in its place":
                place.write_text("mine")
            else:
                place.mkdir()
                (place / "state.pt").write_bytes(b"partial")
                if added == "a file inside":
                    (place / "notes.txt").write_text("mine")
                else:
                    (place / "mine").mkdir()
            raise OSError(errno.ENOSPC, "No space left on device")
    message = str(refused.value)
    assert message.startswith("[Errno 28] No space left on device")
    kept = [entry for entry in tmp_path.iterdir() if entry.name.startswith(".run.")]
    assert len(kept) == 1 and snapshot(kept[0]) == before and str(kept[0]) in message
    if added == "a file in its place":
        assert place.read_text() == "mine" and "(run)" in message
    elif added == "a file inside":
        assert (place / "notes.txt").read_text() == "mine" and "(notes.txt)" in message
    else:
        assert (place / "mine").is_dir() and "(mine)" in message


def test_a_place_made_again_while_the_old_result_is_aside_keeps_both(tmp_path, monkeypatch):
    """--force moved the old result aside; before the new one is renamed in, a person makes
    the place again and puts a file in it: the new one is not written, the person's file stays,
    and the error names the hidden folder that keeps the old result."""
    from crasp.util import outputs
    kind, old = _kind_and_old_result(tmp_path)
    before = snapshot(old)
    checked = outputs._not_written

    def made_again(path, kind):
        if path.name.endswith(outputs.RETIRED_SUFFIX):   # the re-check, after the move aside
            old.mkdir()
            (old / "notes.txt").write_text("mine")
        return checked(path, kind)

    monkeypatch.setattr(outputs, "_not_written", made_again)
    with pytest.raises(outputs.OutputError) as refused:
        outputs.replace_directory(old, kind, True, _model_writer())
    assert "was made again" in str(refused.value)
    assert snapshot(old) == {"notes.txt": b"mine"}
    kept = [entry for entry in tmp_path.iterdir() if entry.name.startswith(".model.")]
    assert len(kept) == 1 and snapshot(kept[0]) == before and str(kept[0]) in str(refused.value)


def test_a_symbolic_link_to_a_model_is_not_replaced(tmp_path):
    make_compiled_model(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    before = snapshot(tmp_path / "real")
    result = CliRunner().invoke(cli, ["compile", "examples/dyck1.crasp", "-o",
                                      str(tmp_path / "link"), "--force"])
    assert result.exit_code == 2 and "a symbolic link" in result.output
    assert snapshot(tmp_path / "real") == before and (tmp_path / "link").is_symlink()


def _float_model(place: Path) -> Path:
    model = place.parent / "float.model"
    if not model.exists():
        result = CliRunner().invoke(cli, ["compile", "examples/dyck1.crasp", "--target",
                                          "float", "--max-length", "12", "-o", str(model)])
        assert result.exit_code == 0, result.output
    return model


def _trained_run(run: Path) -> Path:
    if not (run / "config.json").exists():
        result = CliRunner().invoke(cli, ["train", *TRAIN_ARGS, "-o", str(run)])
        assert result.exit_code == 0, result.output
    return run


# every command with --force that writes a directory: arguments writing its result at PLACE
# (for analyze, PLACE is RUN/analysis; generate writes PLACE's parent / L3)
FORCED_WRITERS = {
    "compile": WRITERS["compile"][1],
    "compile --target float": lambda place: ["compile", "examples/dyck1.crasp", "--target",
                                             "float", "--max-length", "12", "-o", str(place)],
    "generate": WRITERS["generate"][1],
    "train": WRITERS["train"][1],
    "export --format hf": lambda place: ["export", str(_float_model(place)), "--format", "hf",
                                         "-o", str(place)],
    "export --format transformer-lens": lambda place: [
        "export", str(_float_model(place)), "--format", "transformer-lens", "-o", str(place)],
    "analyze": lambda place: ["analyze", str(_trained_run(place.parent)), "--no-progress"],
}


def forced_place(tmp_path: Path, command: str) -> Path:
    return (tmp_path / "out" / "trained" / "analysis" if command == "analyze"
            else place_for(tmp_path))


@pytest.mark.parametrize("added", ["file", "folder", "hidden file"])
@pytest.mark.parametrize("command", FORCED_WRITERS)
def test_force_replaces_a_result_but_never_deletes_what_a_person_added(tmp_path, command,
                                                                       added):
    """Every writer's own result is replaced by --force (so every entry it writes is among
    its kind's ``written``), and refused, untouched, once it also holds a file or a folder
    that a person put there, named in the message."""
    place = forced_place(tmp_path, command)
    arguments = FORCED_WRITERS[command](place) + ["--force"]
    for _ in range(2):
        result = CliRunner().invoke(cli, arguments)
        assert result.exit_code == 0, result.output
    name = {"file": "notes.txt", "folder": "mine", "hidden file": ".notes"}[added]
    if added == "folder":
        (place / name).mkdir()
        (place / name / "f").write_text("keep me")
    else:
        (place / name).write_text("keep me")
    before = snapshot(place)
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and name in result.output
    assert snapshot(place) == before
    assert leftovers(place.parent) == []


@pytest.mark.parametrize("command", [c for c in FORCED_WRITERS if c != "train"])
def test_an_existing_empty_directory_is_filled_and_kept(tmp_path, command):
    """The person's empty directory stays (its inode and mode, a setgid bit too) and gets
    files of the usual permissions (the umask's), not a 0700 directory swapped in."""
    place = forced_place(tmp_path, command)
    FORCED_WRITERS[command](place)   # makes what the command reads first
    place.mkdir(parents=True, exist_ok=True)
    os.chmod(place, 0o2775)
    identity = os.stat(place).st_ino
    result = CliRunner().invoke(cli, FORCED_WRITERS[command](place))
    assert result.exit_code == 0, result.output
    assert os.stat(place).st_ino == identity and os.stat(place).st_mode & 0o7777 == 0o2775
    umask = os.umask(0)
    os.umask(umask)
    files = [p for p in place.rglob("*") if p.is_file()]
    assert files and all(p.stat().st_mode & 0o777 == 0o666 & ~umask for p in files)
    assert leftovers(place.parent) == []


def test_a_model_is_compiled_into_the_current_directory_when_it_is_empty(tmp_path,
                                                                        monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    source = Path(__file__).resolve().parents[1] / "examples" / "dyck1.crasp"
    result = CliRunner().invoke(cli, ["compile", str(source), "-o", "."])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in here.iterdir()) == ["config.json", "model.safetensors"]


def _model_writer():
    """A ``write`` for ``replace_directory`` that makes a minimal compiled-model directory."""
    def write(staging: Path) -> None:
        (staging / "config.json").write_text(json.dumps({"format": "crasp-transformer"}))
        (staging / "model.safetensors").write_bytes(b"new")
    return write


def _kind_and_old_result(tmp_path):
    from crasp.util.outputs import COMPILED_MODEL, holds
    old = tmp_path / "model"
    old.mkdir()
    _model_writer()(old)
    (old / "model.safetensors").write_bytes(b"old")
    assert holds(old, COMPILED_MODEL)
    return COMPILED_MODEL, old


@pytest.mark.parametrize("change", ["foreign file", "foreign directory", "replaced by a file"])
def test_a_place_that_changes_while_the_result_is_written_is_left_as_it_is(tmp_path, change):
    """--force claimed an old result; while the new one was being written a person put a file
    into it (or replaced it): the swap refuses, the person's file stays, nothing is removed."""
    from crasp.util.outputs import OutputError, replace_directory
    kind, old = _kind_and_old_result(tmp_path)

    def write(staging: Path) -> None:
        _model_writer()(staging)
        if change == "foreign file":
            (old / "notes.txt").write_text("mine")
        elif change == "foreign directory":
            (old / "mine").mkdir()
        else:
            for entry in old.iterdir():
                entry.unlink()
            old.rmdir()
            old.write_text("mine")

    with pytest.raises(OutputError):
        replace_directory(old, kind, True, write)
    if change == "replaced by a file":
        assert old.read_text() == "mine"
    else:
        assert (old / "model.safetensors").read_bytes() == b"old"
        assert (old / ("notes.txt" if change == "foreign file" else "mine")).exists()
    assert not [entry for entry in tmp_path.iterdir() if entry.name.startswith(".model.")]


def test_a_place_made_while_the_result_is_written_is_not_overwritten(tmp_path):
    """Nothing was at the place when crasp claimed it; a person made a directory there with a
    file of the same name as one crasp writes: crasp refuses, the person's file stays."""
    from crasp.util.outputs import COMPILED_MODEL, OutputError, replace_directory
    place = tmp_path / "model"

    def write(staging: Path) -> None:
        _model_writer()(staging)
        place.mkdir()
        (place / "model.safetensors").write_bytes(b"mine")

    with pytest.raises(OutputError):
        replace_directory(place, COMPILED_MODEL, False, write)
    assert (place / "model.safetensors").read_bytes() == b"mine"
