"""Sweep processes that clean up after themselves: workers die with their parent, one sweep per directory.

Two guarantees, each with the mechanism that gives it:

* ``exit_with_parent`` (run first in every worker). A ``kill -9`` of the sweep gives the parent
  no chance to stop its workers, so each worker arranges its own end: on Linux the kernel sends
  it SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon thread
  polls ``os.getppid()`` once a second and exits when the parent has changed (the worker was
  re-parented to init or a subreaper). The poll also covers the race where the parent died
  before ``prctl`` ran, and platforms without ``prctl``. Killing a worker mid-cell loses nothing:
  checkpoints and results are written atomically and the next sweep resumes the cell.

* ``sweep_lock`` (held by the sweep for as long as it writes a directory). An exclusive
  ``fcntl.flock`` on ``DIR/sweep.lock``; the file records the holder's pid, host and start
  time so that a refused second sweep can name it. The kernel drops a flock when its holder's
  last descriptor closes, including when the holder is killed, so a dead sweep never keeps
  the directory locked; the stale pid text is simply overwritten by the next holder. (flock is
  advisory and, on some network file systems, local to one host: the recorded host says which.)
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

from crasp.errors import CraspError

LOCK_FILE = "sweep.lock"
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PARENT_POLL_S = 1.0

_held: dict[Path, int] = {}  # lock path -> nesting depth, so one process may re-enter its lock


def exit_with_parent(parent_pid: int) -> None:
    """Make this process exit when ``parent_pid`` (the process that started it) dies."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True,
                     name="crasp-parent-watchdog").start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)  # no cleanup: the parent is gone and nothing here is half-written


@contextlib.contextmanager
def sweep_lock(directory: str | Path) -> Iterator[None]:
    """Hold ``DIR/sweep.lock`` exclusively, or raise ``CraspError`` naming its holder."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = (directory / LOCK_FILE).resolve()
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 4096, 0).decode("utf-8", "replace").strip()
            raise CraspError(
                f"{directory}: another sweep is using this directory ({holder or 'unknown process'}); "
                f"wait for it to finish or stop it, then run this command again") from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, (f"pid {os.getpid()} on host {socket.gethostname()}, since "
                               f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n").encode(), 0)
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
    finally:
        os.close(descriptor)  # releases the flock
