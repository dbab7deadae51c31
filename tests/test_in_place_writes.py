"""In-place writes keep the file's identity: ``fmt -w`` and ``decompile --force`` write through
symbolic links and into the same inode (hard links stay joined, the mode stays), for every kind
of link and mode; a write that fails midway puts the old text back, whatever byte it stopped at.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

import crasp
from crasp.util import atomic
from crasp.cli import cli
from crasp.compiler import compile_program
from strategies import programs

LAYOUTS = ("plain", "relative symlink", "absolute symlink", "symlink chain", "hard link")
MODES = (0o600, 0o640, 0o644, 0o700, 0o755)


def lay_out(directory: Path, layout: str, text: bytes, mode: int) -> tuple[Path, Path]:
    """(the path a command is given, the file holding the text) for ``layout``."""
    target = directory / "real" / "program.crasp"
    target.parent.mkdir(parents=True)
    target.write_bytes(text)
    target.chmod(mode)
    given_path = directory / "given.crasp"
    if layout == "plain":
        return target, target
    if layout == "relative symlink":
        given_path.symlink_to(Path("real") / "program.crasp")
    elif layout == "absolute symlink":
        given_path.symlink_to(target)
    elif layout == "symlink chain":
        (directory / "middle.crasp").symlink_to(target)
        given_path.symlink_to("middle.crasp")
    else:
        os.link(target, given_path)
    return given_path, target


def snapshot(directory: Path) -> dict[str, tuple]:
    """Every entry under ``directory``: link target, or inode, mode and bytes."""
    entries = {}
    for path in sorted(directory.rglob("*")):
        if path.is_symlink():
            entries[str(path.relative_to(directory))] = ("link", os.readlink(path))
        elif path.is_file():
            status = path.stat()
            entries[str(path.relative_to(directory))] = (status.st_ino, status.st_mode,
                                                        status.st_nlink)
    return entries


def spaced(text: str) -> str:
    return text.replace(" ", "   ").replace("\n", "  \n\n")


@given(programs(), st.sampled_from(LAYOUTS), st.sampled_from(MODES), st.booleans())
def test_fmt_write_formats_the_file_itself(tmp_path_factory, text, layout, mode, spread):
    directory = tmp_path_factory.mktemp("fmt")
    source = spaced(text) if spread else text
    given_path, target = lay_out(directory, layout, source.encode(), mode)
    before = snapshot(directory)
    result = CliRunner().invoke(cli, ["fmt", "-w", str(given_path)])
    assert result.exit_code == 0, result.output
    assert target.read_text() == crasp.format_source(crasp.parse_program(source))
    assert given_path.read_bytes() == target.read_bytes()
    assert snapshot(directory) == before  # same links, inodes, modes; no file left beside


@given(programs(), st.data())
def test_a_write_that_fails_midway_puts_the_old_text_back(tmp_path_factory, program_text,
                                                          data):
    text = spaced(program_text)
    formatted = crasp.format_source(crasp.parse_program(text)).encode()
    written = data.draw(st.integers(0, len(formatted)), label="bytes written before the error")
    directory = tmp_path_factory.mktemp("full")
    given_path, target = lay_out(directory, data.draw(st.sampled_from(LAYOUTS)), text.encode(),
                                 0o640)
    before = snapshot(directory)
    calls = []

    def disk_fills_up(file, contents):
        calls.append(contents)
        if len(calls) == 1:  # the new text: the disk is full after ``written`` bytes
            file.seek(0)
            file.write(contents[:written])
            file.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_overwrite(file, contents)

    real_overwrite = atomic.overwrite
    atomic.overwrite = disk_fills_up
    try:
        result = CliRunner().invoke(cli, ["fmt", "-w", str(given_path)])
    finally:
        atomic.overwrite = real_overwrite
    assert result.exit_code == 2
    assert result.output == (f"error: cannot write the formatted program to {given_path}: "
                             f"No space left on device\n")
    assert target.read_bytes() == text.encode() and snapshot(directory) == before


def test_when_the_old_text_cannot_be_put_back_the_backup_stays_and_is_named(tmp_path,
                                                                           monkeypatch):
    program = tmp_path / "p.crasp"
    program.write_text("x  =  #\"a\" > 0\n")

    def full(file, contents):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic, "overwrite", full)
    result = CliRunner().invoke(cli, ["fmt", "-w", str(program)])
    backups = list(tmp_path.glob(".p.crasp.*.crasp-backup"))
    assert result.exit_code == 2 and len(backups) == 1
    assert f"the original is kept in {backups[0]}" in result.output
    assert backups[0].read_text() == "x  =  #\"a\" > 0\n"


def test_a_read_only_file_is_not_rewritten(tmp_path, monkeypatch):
    program = tmp_path / "p.crasp"
    program.write_text("x  =  #\"a\" > 0\n")
    program.chmod(0o444)
    if os.access(program, os.W_OK):   # root may write any file: the OS's refusal, simulated
        def refusing_open(file, mode="r", *args, **kwargs):
            if "+" in mode or "w" in mode:
                raise PermissionError(13, "Permission denied", str(file))
            return open(file, mode, *args, **kwargs)
        monkeypatch.setattr(atomic, "open", refusing_open, raising=False)
    result = CliRunner().invoke(cli, ["fmt", "-w", str(program)])
    assert result.exit_code == 2 and "Permission denied" in result.output
    assert program.read_text() == "x  =  #\"a\" > 0\n"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "majority.model"
    compile_program(crasp.load_program("examples/majority.crasp")).save(path)
    return path


@pytest.mark.parametrize("layout", LAYOUTS)
def test_decompile_force_writes_through_links_into_the_same_file(tmp_path, model, layout):
    first = CliRunner().invoke(cli, ["decompile", str(model), "-o", str(tmp_path / "d.crasp")])
    assert first.exit_code == 0, first.output
    written = (tmp_path / "d.crasp").read_bytes()
    (tmp_path / "d.crasp").unlink()
    old = written.replace(b"\n", b"\n// an older version\n", 1)
    given_path, target = lay_out(tmp_path, layout, old, 0o604)
    before = snapshot(tmp_path)
    refused = CliRunner().invoke(cli, ["decompile", str(model), "-o", str(given_path)])
    assert refused.exit_code == 2 and target.read_bytes() == old
    result = CliRunner().invoke(cli, ["decompile", str(model), "-o", str(given_path), "--force"])
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == written and snapshot(tmp_path) == before


def test_decompile_refuses_a_dangling_symbolic_link(tmp_path, model):
    (tmp_path / "d.crasp").symlink_to("nowhere.crasp")
    result = CliRunner().invoke(cli, ["decompile", str(model), "-o", str(tmp_path / "d.crasp"),
                                      "--force"])
    assert result.exit_code == 2
    assert "symbolic link to nothing" in result.output
    assert not (tmp_path / "nowhere.crasp").exists() and (tmp_path / "d.crasp").is_symlink()
