"""A single-file result is claimed before the work and written after it, and the work can take
hours (``crasp extract`` on a run of the paper's size). A file a person makes at that place
meanwhile is never replaced, and a program of ours that a person replaces meanwhile is not
overwritten either: every single-file writer (decompile's and extract's program, the ONNX
export, a trace) checks the place again when it writes, and puts a new file in place only where
nothing is (``crasp.util.atomic.write_bytes_atomic(replace=False)``: a hard link, not a rename).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.compiler import compile_program
from crasp.train.loop import train
from crasp.train.presets import resolve_preset
from crasp.util.atomic import write_bytes_atomic

torch.set_num_threads(1)
PERSON = b"// my own notes, written while crasp worked\n"


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """A compiled model and a tiny float run, shared by the writers."""
    root = tmp_path_factory.mktemp("made-during-work")
    compile_program(crasp.load_program(crasp.example("dyck1"))).save(root / "model")
    train(resolve_preset("default", language="L3", depth=1, d_model=2, n_heads=1, d_ff=8,
                         train_bin=(4, 8), test_bins=[(9, 12)], n_train=60, n_test=10,
                         epochs=1, device="cpu"), root / "run", resume=False)
    return root


def _writers(places: Path) -> dict[str, tuple[list[str], str, str]]:
    """name -> (arguments without -o, its output's suffix, the attribute doing the work)."""
    return {
        "decompile": (["decompile", str(places / "model")], ".crasp",
                      "crasp.decompile.cli.decompile_model"),
        "extract": (["extract", str(places / "run")], ".crasp",
                    "crasp.train.extract_cli.extract_run"),
        "export onnx": (["export", str(places / "model"), "--format", "onnx"], ".onnx",
                        "crasp.export.onnx.onnx_model"),
    }


def _during_work(monkeypatch, attribute: str, change) -> None:
    """Make ``change()`` happen while the work ``attribute`` names runs."""
    module_name, name = attribute.rsplit(".", 1)
    module = __import__(module_name, fromlist=[name])
    work = getattr(module, name)

    def working(*args, **kwargs):
        result = work(*args, **kwargs)
        change()
        return result

    monkeypatch.setattr(module, name, working)


def _hidden(folder: Path) -> list[str]:
    return [entry.name for entry in folder.iterdir() if entry.name.startswith(".")]


def _make(made: str, place: Path) -> None:
    """What a person makes at ``place``: a file, a symbolic link to a file of theirs beside
    it (``elsewhere.txt``), or a folder with a file."""
    elsewhere = place.parent / "elsewhere.txt"
    elsewhere.write_bytes(PERSON)
    if made == "a file":
        place.write_bytes(PERSON)
    elif made == "a symbolic link":
        place.symlink_to(elsewhere)
    else:
        place.mkdir()
        (place / "notes.txt").write_bytes(PERSON)


def _check_kept(made: str, place: Path) -> None:
    """What ``_make`` made is as it made it, and crasp left no hidden file beside it."""
    assert (place.parent / "elsewhere.txt").read_bytes() == PERSON
    if made == "a file":
        assert place.read_bytes() == PERSON
    elif made == "a symbolic link":
        assert os.readlink(place) == str(place.parent / "elsewhere.txt")
    else:
        assert sorted(os.listdir(place)) == ["notes.txt"]
        assert (place / "notes.txt").read_bytes() == PERSON
    assert _hidden(place.parent) == []


@pytest.mark.parametrize("writer", ["decompile", "extract", "export onnx"])
@pytest.mark.parametrize("made", ["a file", "a symbolic link", "a folder"])
def test_a_place_made_during_the_work_is_left_as_it_is(places, tmp_path, monkeypatch, writer,
                                                       made):
    arguments, suffix, attribute = _writers(places)[writer]
    target = tmp_path / f"out{suffix}"
    _during_work(monkeypatch, attribute, lambda: _make(made, target))
    result = CliRunner().invoke(cli, [*arguments, "-o", str(target)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and str(target.name) in result.output
    _check_kept(made, target)


@pytest.mark.parametrize("writer", ["decompile", "extract", "export onnx"])
def test_a_result_of_ours_replaced_by_a_person_during_the_work_is_not_overwritten(
        places, tmp_path, monkeypatch, writer):
    """--force was given for crasp's own earlier result; while the new one was computed, a
    person put their own file there: it stays."""
    arguments, suffix, attribute = _writers(places)[writer]
    target = tmp_path / f"out{suffix}"
    first = CliRunner().invoke(cli, [*arguments, "-o", str(target)])
    assert first.exit_code == 0, first.output
    _during_work(monkeypatch, attribute, lambda: target.write_bytes(PERSON))
    result = CliRunner().invoke(cli, [*arguments, "-o", str(target), "--force"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert target.read_bytes() == PERSON and _hidden(tmp_path) == []


@pytest.mark.parametrize("writer", ["decompile", "extract", "export onnx"])
def test_an_earlier_result_of_ours_removed_during_the_work_is_written_anew(
        places, tmp_path, monkeypatch, writer):
    arguments, suffix, attribute = _writers(places)[writer]
    target = tmp_path / f"out{suffix}"
    assert CliRunner().invoke(cli, [*arguments, "-o", str(target)]).exit_code == 0
    expected = target.read_bytes()
    _during_work(monkeypatch, attribute, target.unlink)
    result = CliRunner().invoke(cli, [*arguments, "-o", str(target), "--force"])
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == expected and _hidden(tmp_path) == []


@pytest.mark.parametrize("writer", ["decompile", "extract", "export onnx"])
@pytest.mark.parametrize("force", [False, True])
def test_a_result_of_ours_made_during_the_work_is_replaced_only_with_force(
        places, tmp_path, monkeypatch, writer, force):
    """Nothing was at the place when the work began; another crasp command wrote its own
    result there meanwhile: --force (given for crasp's own results) replaces it, and without
    it the command refuses, as it would have at the start."""
    arguments, suffix, attribute = _writers(places)[writer]
    target, other = tmp_path / f"out{suffix}", tmp_path / f"other{suffix}"
    assert CliRunner().invoke(cli, [*arguments, "-o", str(other)]).exit_code == 0
    theirs = other.read_bytes()
    _during_work(monkeypatch, attribute, lambda: target.write_bytes(theirs))
    result = CliRunner().invoke(cli, [*arguments, "-o", str(target)]
                                + (["--force"] if force else []))
    assert result.exit_code == (0 if force else 2), result.output
    assert "Traceback" not in result.output and _hidden(tmp_path) == []
    assert target.read_bytes() == theirs   # kept, or replaced by the same result


def test_a_trace_never_replaces_a_file_made_as_it_is_written(tmp_path, monkeypatch):
    from crasp.util import atomic
    target = tmp_path / "trace.txt"
    made = atomic.os.fsync

    def fsync_then_make(descriptor):
        made(descriptor)
        if not target.exists():
            target.write_bytes(PERSON)

    monkeypatch.setattr(atomic.os, "fsync", fsync_then_make)
    result = CliRunner().invoke(cli, ["run", "examples/dyck1.crasp", "()", "--trace",
                                      str(target)])
    assert result.exit_code == 2 and "appeared while crasp was writing" in result.output
    assert target.read_bytes() == PERSON and _hidden(tmp_path) == []


@pytest.mark.parametrize("links", ["hard links", "no hard links"])
def test_a_new_file_is_put_only_where_nothing_is(tmp_path, monkeypatch, links):
    """Both ways of putting a new file in place: a hard link, and where the file system has
    none, an exclusive create and a rename over that empty file."""
    if links == "no hard links":
        def refused(*_):
            raise OSError(errno.EPERM, "Operation not permitted")
        monkeypatch.setattr(os, "link", refused)
    new = tmp_path / "new.bin"
    write_bytes_atomic(new, b"crasp", replace=False)
    assert new.read_bytes() == b"crasp"
    taken = tmp_path / "taken.bin"
    taken.write_bytes(PERSON)
    with pytest.raises(FileExistsError):
        write_bytes_atomic(taken, b"crasp", replace=False)
    assert taken.read_bytes() == PERSON
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["new.bin", "taken.bin"]
    assert oct(new.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def test_without_hard_links_a_failed_rename_leaves_no_empty_file(tmp_path, monkeypatch):
    def refused(*_):
        raise OSError(errno.EPERM, "Operation not permitted")

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", refused)
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        write_bytes_atomic(tmp_path / "new.bin", b"crasp", replace=False)
    assert list(tmp_path.iterdir()) == []


def test_without_hard_links_a_persons_file_in_the_placeholders_place_stays(tmp_path,
                                                                           monkeypatch):
    """The rename fails after a person removed crasp's empty placeholder and wrote a file of
    their own there (which may take its inode number): that file is not crasp's to remove."""
    target = tmp_path / "new.bin"

    def refused(*_):
        raise OSError(errno.EPERM, "Operation not permitted")

    def replaced_by_a_person(*_):
        target.unlink()
        target.write_bytes(PERSON)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", refused)
    monkeypatch.setattr(os, "replace", replaced_by_a_person)
    with pytest.raises(OSError):
        write_bytes_atomic(target, b"crasp", replace=False)
    assert target.read_bytes() == PERSON


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _directory_kinds():
    from crasp.export.outputs import INTEROP_EXPORT
    from crasp.util.outputs import DIRECTORY_KINDS
    from crasp.zoo.collection import ZOO
    return [*DIRECTORY_KINDS, ZOO, INTEROP_EXPORT]


@pytest.mark.parametrize("kind", _directory_kinds(), ids=lambda kind: kind.name)
@pytest.mark.parametrize("made", ["a file", "a symbolic link", "a folder"])
@pytest.mark.parametrize("claimed", ["absent", "an empty folder"])
def test_a_directory_result_never_lands_on_a_place_made_while_it_was_written(tmp_path, kind,
                                                                             made, claimed):
    """Every directory writer claims an absent place (or an empty folder, which it fills),
    builds its result beside it, and renames it in: where a person made something else there
    meanwhile, it stays, and the error says so."""
    from crasp.util.outputs import OutputError, replace_directory
    place = tmp_path / "result"
    if claimed == "an empty folder":
        place.mkdir()

    def write(staging: Path) -> None:
        (staging / (kind.marker or "result")).write_text("{}")
        if claimed == "an empty folder":
            place.rmdir()
        _make(made, place)

    with pytest.raises(OutputError, match="appeared (while crasp was writing|in it)"):
        replace_directory(place, kind, False, write)
    _check_kept(made, place)
