"""Sweep processes that clean up: workers die with their parent, one sweep per shard at a time.

Two guarantees, each with the mechanism that gives it:

* ``exit_with_parent`` (run first in every worker). A ``kill -9`` of the sweep gives the parent
  no chance to stop its workers, so each worker arranges its own end: on Linux the kernel sends
  it SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon thread
  polls ``os.getppid()`` once a second and exits when the parent has changed (the worker was
  re-parented to init or a subreaper). The poll also covers the race where the parent died
  before ``prctl`` ran, and platforms without ``prctl``. Killing a worker mid-cell loses nothing:
  checkpoints and results are written atomically and the next sweep resumes the cell.

* ``sweep_lock`` (held by a sweep for as long as it writes a directory). Shards of one sweep
  share a directory and run disjoint cells (a Slurm array), so the lock is per shard: an
  exclusive ``fcntl.flock`` on ``DIR/locks/shard-I-of-N.lock``, and a shard whose cells could
  meet a running shard's is refused too (shards i/n and j/m share cells iff
  i = j (mod gcd(n, m)), by the Chinese remainder theorem). The file records the holder's pid,
  host and start time, so that a refused sweep can name it. The kernel drops a flock when its
  holder's last descriptor closes, including when the holder is killed, so a dead sweep never
  keeps a shard locked; the stale text is overwritten by the next holder. (flock is advisory
  and, on some network file systems, local to one host: the recorded host says which.)
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import math
import os
import re
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

from crasp.errors import CraspError

LOCKS_DIR = "locks"
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


def shards_overlap(first: tuple[int, int], second: tuple[int, int]) -> bool:
    """Whether shards i/n and j/m can hold a common cell index: i = j (mod gcd(n, m))."""
    (i, n), (j, m) = first, second
    return (i - j) % math.gcd(n, m) == 0


def _holder(descriptor: int) -> str:
    return os.pread(descriptor, 4096, 0).decode("utf-8", "replace").strip() or "unknown process"


def _refuse(directory: Path, holder: str) -> CraspError:
    return CraspError(f"{directory}: another sweep is using this directory ({holder}); wait for "
                      f"it to finish or stop it, then run this command again")


@contextlib.contextmanager
def sweep_lock(directory: str | Path, shard: tuple[int, int] = (0, 1)) -> Iterator[None]:
    """Hold the lock of ``shard`` in ``DIR``, or raise ``CraspError`` naming the sweep that
    holds it or an overlapping shard's. Re-entrant within one process."""
    directory = Path(directory)
    locks = directory / LOCKS_DIR
    locks.mkdir(parents=True, exist_ok=True)
    path = (locks / f"shard-{shard[0]}-of-{shard[1]}.lock").resolve()
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
            raise _refuse(directory, _holder(descriptor)) from None
        _check_overlapping_shards(directory, locks, path, shard)
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, (f"pid {os.getpid()} on host {socket.gethostname()}, shard "
                               f"{shard[0]}/{shard[1]}, since "
                               f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n").encode(), 0)
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
    finally:
        os.close(descriptor)  # releases the flock


def _check_overlapping_shards(directory: Path, locks: Path, mine: Path,
                              shard: tuple[int, int]) -> None:
    for other in locks.glob("shard-*-of-*.lock"):
        match = re.fullmatch(r"shard-(\d+)-of-(\d+)\.lock", other.name)
        if other.resolve() == mine or not match:
            continue
        if not shards_overlap(shard, (int(match[1]), int(match[2]))):
            continue
        descriptor = os.open(other, os.O_RDONLY)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)  # free unless a sweep holds it
        except BlockingIOError:
            raise _refuse(directory, _holder(descriptor)) from None
        finally:
            os.close(descriptor)
