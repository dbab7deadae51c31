"""Output places: crasp writes only its own results, replaces them atomically, and never loses
what a person made.

An output place (a directory, or one file) is claimed only when it is absent, an empty
directory, or, with ``force``, crasp's own output of the same kind. A kind is recognised by the
marker crasp writes inside it (the ``format`` key of a model's ``config.json``, a dataset's
manifest, a training run's config, a trace's first line), never by a file name alone, so a
folder that merely holds a ``config.json`` (a Hugging Face model, a project) is refused with a
message naming what is there.

Replacing is atomic: the new result is written into a temporary sibling in the same parent,
then swapped in with two renames, so a failure while writing leaves the old result whole (and
no temporary behind). Every ``OSError`` while writing becomes an ``OutputError`` that says what
could not be written, where and why.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from crasp.util.atomic import current_umask, write_bytes_atomic
from crasp.errors import CraspError
from crasp.util.safe_read import SafeReadError, read_json_file

STAGING_SUFFIX = ".crasp-tmp"
RETIRED_SUFFIX = ".crasp-old"
SHOWN_ENTRIES = 5


class OutputError(CraspError):
    """An output place that crasp may not use, or a write that failed."""


@dataclass(frozen=True)
class OutputKind:
    """What crasp writes into a place, and how to recognise it there.

    ``marker`` is the file (inside a directory) whose JSON object ``recognise`` accepts; for a
    single-file output (``marker`` is None) ``recognise`` gets the file's first bytes.
    ``own_entries`` are entries crasp makes before the marker (a sweep's ``locks/``): a
    directory holding only those counts as empty. ``written`` are the paths of every file crasp
    writes in such a directory, relative to it, ``/``-separated, each part an ``fnmatch``
    pattern (``models/*/meta.json``): ``--force`` replaces one only when every file in it, at
    any depth, matches, so a file a person added anywhere inside is never deleted (None: not
    enumerable; every entry counts as crasp's). A directory is looked into when a pattern
    leads through it; an ``own_entries`` directory counts as crasp's with all it holds.
    """

    name: str
    marker: str | None
    recognise: Callable[[object], bool]
    own_entries: tuple[str, ...] = ()
    written: tuple[str, ...] | None = None


def _has(*keys: str) -> Callable[[object], bool]:
    return lambda value: isinstance(value, dict) and all(key in value for key in keys)


COMPILED_MODEL = OutputKind(
    "compiled model", "config.json",
    lambda value: isinstance(value, dict) and value.get("format") == "crasp-transformer",
    written=("config.json", "model.safetensors"))
DATASET = OutputKind(
    "dataset", "manifest.json",
    lambda value: _has("language", "splits", "bins", "format")(value)
    and value["format"] in ("paper", "jsonl"),
    written=("manifest.json", "*_src.txt", "*_tgt.txt", "*.jsonl"))
ANALYSIS_FILES = (".crasp-analyze", "*.json", "*.csv", "*.png")
RUN_FILES = ("config.json", "model.json", "metrics.jsonl", "results.json", "*.safetensors",
             "state.pt", "cell.json", "error.txt")


def _inside(directory: str, patterns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{directory}/{pattern}" for pattern in patterns)


# A run's own sub-results: a --precision run's format model in model/ (crasp.train.run's
# FORMAT_MODEL_DIR), crasp analyze's default places analysis/ and hessian/, and a split
# search's trials/N/ (crasp.train.search_parts' TRIALS_DIR), each a run of its own.
RUN_WRITTEN = RUN_FILES + _inside("model", COMPILED_MODEL.written)
TRAINING_RUN = OutputKind(
    "training run", "config.json", _has("language", "depth", "posenc", "preset", "seed"),
    written=RUN_WRITTEN + _inside("analysis", ANALYSIS_FILES) + _inside("hessian", ANALYSIS_FILES)
    + _inside("trials/*", RUN_WRITTEN))
SWEEP = OutputKind("sweep", "sweep.json", _has("version", "specs"), own_entries=("locks",))
REPORT = OutputKind("report", "report.json", _has("sources", "threshold", "tables"))
TRACE_MARKERS = (b"# crasp trace", b"<!DOCTYPE html><html><head><meta name='generator' "
                                   b"content='crasp trace'>")
TRACE = OutputKind("trace", None,
                   lambda head: isinstance(head, bytes) and head.startswith(TRACE_MARKERS))
FLOAT_REALIZATION = OutputKind(
    "float realization", "model.json",
    lambda value: isinstance(value, dict) and value.get("kind") == "crasp-float-realization",
    written=("model.json", "config.json", "*.safetensors"))
ANALYSIS = OutputKind("analysis", ".crasp-analyze", _has("kind"), written=ANALYSIS_FILES)
DIRECTORY_KINDS = (COMPILED_MODEL, FLOAT_REALIZATION, DATASET, TRAINING_RUN, SWEEP, REPORT,
                   ANALYSIS)


def holds(path: Path, kind: OutputKind) -> bool:
    """Whether ``path`` holds crasp's own output of ``kind`` (judged by its marker); a symbolic
    link never does (replacing it would act on whatever it points to)."""
    if path.is_symlink():
        return False
    if kind.marker is None:
        if not path.is_file():
            return False
        try:
            with open(path, "rb") as file:
                return kind.recognise(file.read(256))
        except OSError:
            return False
    try:
        return kind.recognise(read_json_file(path / kind.marker))
    except SafeReadError:
        return False


def describe(path: Path) -> str:
    """What is at ``path``, for a message: a kind crasp knows, or a few of the entries."""
    if path.is_symlink():
        return "a symbolic link"
    if not path.is_dir():
        return "a file" if path.is_file() else "something that is neither file nor directory"
    for kind in DIRECTORY_KINDS:
        if holds(path, kind):
            return f"a crasp {kind.name}"
    entries = sorted(entry.name for entry in path.iterdir())
    return f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} ({_listing(entries)})"


def _listing(entries: list[str]) -> str:
    """The first ``SHOWN_ENTRIES`` of ``entries``, and how many more, for a message."""
    more = f" and {len(entries) - SHOWN_ENTRIES} more" if len(entries) > SHOWN_ENTRIES else ""
    return ", ".join(entries[:SHOWN_ENTRIES]) + more


def _kind_name(kind: OutputKind | str) -> str:
    return kind.name if isinstance(kind, OutputKind) else kind


def _is_empty_directory(path: Path, kind: OutputKind) -> bool:
    return (path.is_dir() and not path.is_symlink()
            and all(entry.name in kind.own_entries for entry in path.iterdir()))


def claim(path: str | Path, kind: OutputKind, force: bool) -> bool:
    """Check that crasp may write ``kind`` at ``path``; returns whether an old result of that
    kind is there to be replaced. Raises ``OutputError`` naming what is there otherwise."""
    path = Path(path)
    with writing(path, kind):
        if not os.path.lexists(path):
            return False
        if kind.marker is not None and _is_empty_directory(path, kind):
            return False
        if holds(path, kind):
            if not force:
                raise OutputError(f"{path} already holds a crasp {kind.name}; use --force to "
                                  f"replace it, or choose another place")
            foreign = _not_written(path, kind)
            if foreign:
                raise OutputError(f"refusing to replace the crasp {kind.name} at {path}: it "
                                  f"also holds {_listing(foreign)}, which crasp did not write "
                                  f"and does not delete (not even with --force); move "
                                  f"{'it' if len(foreign) == 1 else 'them'} away, or choose "
                                  f"another place")
            return True
        what = describe(path) if kind.marker is not None else "a file crasp did not write"
        raise OutputError(f"refusing to write the {kind.name} to {path}: it holds {what}, "
                          f"which crasp does not replace (not even with --force); choose an "
                          f"absent or empty place")


def _not_written(path: Path, kind: OutputKind) -> list[str]:
    """The files, and directories that no pattern leads through, inside the directory ``path``
    at any depth, that are not among what crasp writes for ``kind``: their paths relative to
    ``path``, sorted (none for a kind whose entries are not enumerable)."""
    if kind.written is None or not path.is_dir() or path.is_symlink():
        return []
    patterns = [tuple(pattern.split("/")) for pattern in kind.written]
    foreign: list[str] = []

    def matches(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
        return all(fnmatch.fnmatchcase(part, glob) for part, glob in zip(parts, pattern))

    def visit(directory: Path, parts: tuple[str, ...]) -> None:
        for entry in directory.iterdir():
            here = parts + (entry.name,)
            if entry.is_dir() and not entry.is_symlink():
                if not parts and entry.name in kind.own_entries:
                    continue
                if any(len(pattern) > len(here) and matches(here, pattern)
                       for pattern in patterns):
                    visit(entry, here)
                    continue
            elif any(len(pattern) == len(here) and matches(here, pattern)
                     for pattern in patterns):
                continue
            foreign.append("/".join(here))

    visit(path, ())
    return sorted(foreign)


def claim_updatable(path: str | Path, kind: OutputKind) -> None:
    """For a result that a command updates in place by design (a sweep resumes in its
    directory, a report is refreshed): the place must be absent, empty, or hold ``kind``."""
    path = Path(path)
    if os.path.lexists(path) and not _is_empty_directory(path, kind) and not holds(path, kind):
        raise OutputError(f"refusing to write the {kind.name} to {path}: it holds "
                          f"{describe(path)}, which crasp does not touch; choose an absent or "
                          f"empty directory")


@contextmanager
def writing(path: str | Path, kind: OutputKind | str) -> Iterator[None]:
    """Turn an ``OSError`` into an ``OutputError`` saying what, where and why."""
    what = _kind_name(kind)
    try:
        yield
    except OSError as error:
        reason = error.strerror or str(error)
        if isinstance(error, (NotADirectoryError, FileExistsError)) or _under_a_file(Path(path)):
            reason = f"{reason} (a part of the path is a file, not a directory)"
        where = f" ({error.filename})" if error.filename and str(error.filename) != str(path) \
            else ""
        raise OutputError(f"cannot write the {what} to {path}: {reason}{where}") from None


def _under_a_file(path: Path) -> bool:
    return any(parent.is_file() for parent in path.parents)


def _sibling(path: Path, suffix: str) -> Path:
    """A new hidden directory beside ``path`` (same file system, so renames are atomic)."""
    return Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix))


def replace_directory(path: str | Path, kind: OutputKind, force: bool,
                      write: Callable[[Path], None]) -> None:
    """Write a ``kind`` result at ``path`` with ``write(staging_directory)``, atomically.

    The claim is checked first; the result is written into a temporary sibling and renamed
    into place; an old result of the same kind is renamed aside first, checked again under its
    private name (a person may have put a file into it while the new one was written, or
    replaced it: then it is renamed back and nothing is written), and removed only after the
    new one is in place, so a failure at any moment leaves the old result whole and nothing
    crasp did not write is removed. An empty directory is filled entry by entry, none
    replacing an entry made there meanwhile."""
    path = Path(path)
    replacing = claim(path, kind, force)
    empty_directory = not replacing and os.path.lexists(path)   # kept, and filled
    with writing(path, kind):
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = _sibling(path, STAGING_SUFFIX)
        try:
            write(staging)
            _usual_permissions(staging, path if replacing else None)
            if empty_directory:
                _move_into(staging, path, kind)
            else:
                _swap_in(staging, path, replacing, kind)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def _appeared(path: Path, kind: OutputKind | str) -> OutputError:
    return OutputError(f"{path} appeared while crasp was writing the {_kind_name(kind)}; it is "
                       f"left as it is, and nothing was written (choose another place, or move "
                       f"it away)")


def _usual_permissions(staging: Path, replaced: Path | None) -> None:
    """Give the staged result the permissions of a directory and files made by hand (the
    umask's), not ``mkdtemp``'s 0700 or a library's 0600; a replaced result's directory keeps
    its mode."""
    umask = current_umask()
    for root, directories, files in os.walk(staging):
        for name in directories:
            os.chmod(os.path.join(root, name), 0o777 & ~umask)
        for name in files:
            os.chmod(os.path.join(root, name), 0o666 & ~umask)
    mode = (os.stat(replaced).st_mode & 0o7777) if replaced is not None else 0o777 & ~umask
    os.chmod(staging, mode)


def _move_into(staging: Path, path: Path, kind: OutputKind) -> None:
    """Move the staged entries into the existing empty directory ``path`` (so the person's
    directory, its mode, owner and ACLs, and a shell inside it, stay), if it is still an empty
    directory; on a failure, the entries moved so far go back, leaving ``path`` as it was."""
    # made or filled since the claim (the staging folder is inside it for ``-o .``)
    if path.is_symlink() or not path.is_dir():
        raise _appeared(path, kind)
    inside = staging.name if os.path.samefile(staging.parent, path) else None
    added = sorted(entry for entry in os.listdir(path)
                   if entry not in kind.own_entries and entry != inside)
    if added:
        raise OutputError(f"{path} was empty, but while crasp was writing the {kind.name} "
                          f"{_listing(added)} appeared in it; it is left as it is, and nothing "
                          f"was written")
    moved: list[str] = []
    try:
        for entry in sorted(os.listdir(staging)):
            if os.path.lexists(path / entry):   # made there since the claim: never replaced
                raise _appeared(path / entry, kind)
            os.rename(staging / entry, path / entry)
            moved.append(entry)
    except BaseException:
        for entry in moved:
            os.rename(path / entry, staging / entry)
        raise
    os.rmdir(staging)


def _swap_in(staging: Path, path: Path, old_present: bool, kind: OutputKind) -> None:
    if not old_present:
        try:
            os.rename(staging, path)   # fails where anything but an empty folder is there now
        except OSError:
            if not os.path.lexists(path) or _under_a_file(path):
                raise
            raise _appeared(path, kind) from None
        return
    retired = staging.with_name(staging.name[:-len(STAGING_SUFFIX)] + RETIRED_SUFFIX)
    os.rename(path, retired)
    if not holds(retired, kind) or _not_written(retired, kind):   # changed since the claim
        os.rename(retired, path)
        raise OutputError(f"{path} changed while crasp was writing a new {kind.name} there "
                          f"(it no longer holds only crasp's {kind.name}); it is left as it "
                          f"is, and nothing was written")
    try:
        os.rename(staging, path)
    except BaseException:
        _put_back(retired, path, kind)
        raise
    if retired.is_dir():
        shutil.rmtree(retired, ignore_errors=True)
    else:
        retired.unlink(missing_ok=True)


def _put_back(retired: Path, path: Path, kind: OutputKind) -> None:
    """Rename the earlier result back to ``path``; where a person made ``path`` again
    meanwhile, leave theirs and say where the earlier result is kept."""
    try:
        os.rename(retired, path)
    except OSError:
        raise OutputError(f"{path} was made again while crasp was replacing the {kind.name} "
                          f"there; it is left as it is, nothing was written, and the earlier "
                          f"{kind.name} is kept in {retired}") from None


def replace_file(path: str | Path, kind: OutputKind, force: bool, data: bytes) -> None:
    """Write one ``kind`` file atomically (temporary sibling, fsync, rename) after the claim."""
    write_file(path, kind, data, claim(path, kind, force))


def write_file(path: str | Path, kind: OutputKind | str, data: bytes, replacing: bool) -> None:
    """Write ``data`` at ``path`` atomically after its claim. Where the claim found nothing
    there (``replacing`` False), never over a file made there since (a claim can be hours
    old: a long extraction): ``OutputError`` then, and that file left as it is."""
    with writing(path, kind):
        try:
            write_bytes_atomic(path, data, replace=replacing)
        except FileExistsError:
            if not os.path.lexists(path) or _under_a_file(Path(path)):
                raise
            raise _appeared(Path(path), kind) from None


@contextmanager
def restored_on_failure(path: str | Path, kind: OutputKind, force: bool) -> Iterator[None]:
    """For a result built in place over a long time (a training run): the old result of
    ``kind`` at ``path`` is moved aside while the body writes a new one there, put back if the
    body fails, and removed once it succeeds. An interruption (Ctrl-C) keeps the new, resumable
    result; a hard kill leaves the old one in a hidden sibling ``.NAME.*.crasp-old``. Where a
    person put something into the new result before the body failed, neither is removed: the
    error says where the old one is kept."""
    path = Path(path)
    if not claim(path, kind, force):
        yield
        return
    with writing(path, kind):
        retired = _sibling(path, RETIRED_SUFFIX)
        os.rename(path, retired)
    try:
        yield
    except Exception as error:
        with writing(path, kind):
            added = (_not_written(path, kind) if path.is_dir() and not path.is_symlink()
                     else [path.name] if os.path.lexists(path) else [])
            if added:   # a person's file in (or at) the failed new result: neither is removed
                raise OutputError(f"{error}\n{path} holds what crasp did not write "
                                  f"({_listing(added)}), so the failed new {kind.name} is left "
                                  f"there with it, and the earlier {kind.name} is kept in "
                                  f"{retired}") from error
            if os.path.lexists(path):
                shutil.rmtree(path)
            _put_back(retired, path, kind)
        raise
    except BaseException:  # interrupted: the new result is resumable and replaces the old
        shutil.rmtree(retired, ignore_errors=True)
        raise
    shutil.rmtree(retired, ignore_errors=True)
