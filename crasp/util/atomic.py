"""Atomic file writes: a reader (or a crash) never sees a half-written result file."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def current_umask() -> int:
    """The process's umask (reading it means setting it, so it is set back at once)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def write_bytes_atomic(path: str | Path, data: bytes, replace: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename.
    With ``replace`` False, the file is put in place only if nothing is at ``path`` at that
    moment (``FileExistsError`` otherwise, ``path`` untouched): a hard link, which unlike a
    rename never replaces."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes 0600; give the usual permissions
        os.chmod(temporary, 0o666 & ~current_umask())
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if replace:
            os.replace(temporary, path)
        else:
            _put_new(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _put_new(temporary: str, path: Path) -> None:
    """Move ``temporary`` to ``path`` unless something is there (``FileExistsError``)."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK,
                               errno.ENOSYS):
            raise
        # a file system without hard links: take the name with an exclusive create, then
        # rename over that empty file of ours (removed again if the rename fails)
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        placeholder = os.fstat(descriptor)
        os.close(descriptor)
        try:
            os.replace(temporary, path)
        except BaseException:
            _remove_if_same(path, placeholder)
            raise
        return
    os.unlink(temporary)


def _remove_if_same(path: Path, placeholder: os.stat_result) -> None:
    """Remove ``path`` only if it is still the file ``placeholder`` describes (ours): the same
    device and inode, and the same change time, so that a person's file that took the inode
    number of a placeholder removed meanwhile, or our placeholder written to since, stays."""
    try:
        found = os.lstat(path)
        if os.path.samestat(found, placeholder) and found.st_ctime_ns == placeholder.st_ctime_ns:
            os.unlink(path)
    except OSError:
        pass   # gone, or not ours to remove: the caller's error is the one to report


def write_text_atomic(path: str | Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def rewrite_in_place(path: str | Path, data: bytes) -> None:
    """Replace the contents of the existing regular file ``path`` by ``data``, keeping the
    file's identity: through symbolic links (the target is rewritten, the link stays), into
    the same inode (hard links stay joined; mode, owner and ACLs stay as they were).

    Why not ``write_bytes_atomic``: a rename puts a new file at the name, so a symbolic link
    becomes a plain file (its target untouched), a hard link is split off and the mode is the
    umask's. Writing into the inode gives up the rename's atomicity, so the old bytes are
    first saved, fsynced, in a hidden sibling of the target; if overwriting fails (a full
    disk), the old bytes are written back, and only if that fails too does the sibling stay,
    named in the error. Unchanged contents are not written at all."""
    target = Path(os.path.realpath(path))
    with open(target, "r+b") as file:
        old = file.read()
        if old == data:
            return
        handle, backup = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                          suffix=".crasp-backup")
        try:
            with os.fdopen(handle, "wb") as saved:
                saved.write(old)
                saved.flush()
                os.fsync(saved.fileno())
        except BaseException:
            os.unlink(backup)
            raise
        try:
            overwrite(file, data)
        except BaseException:
            try:
                overwrite(file, old)
            except OSError as error:
                raise OSError(error.errno, f"{error.strerror}; the original is kept in "
                                           f"{backup}") from None
            os.unlink(backup)
            raise
        os.unlink(backup)


def overwrite(file, data: bytes) -> None:
    """Make the open ``file`` hold exactly ``data``, in place, on disk."""
    file.seek(0)
    file.write(data)
    file.truncate()
    file.flush()
    os.fsync(file.fileno())
