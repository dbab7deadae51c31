"""One sweep process per sweep directory and shard, and workers that die with their parent.

``SweepLock`` — why ``flock(2)``: the lock belongs to an open file description, and the kernel
drops it when the last descriptor closes, which happens whenever the holding process ends,
however it ends (exit, exception, ``kill -9``, a crash). A dead process therefore never holds a
sweep directory, and no stale-lock clean-up is needed. The lock file records the holder (pid,
host, command, start time), so that a refused sweep can say who holds the directory. Shards of
one sweep may share a directory by design (their cells are disjoint, docs/experiments.md), so the
lock is per shard: ``DIR/locks/shard-<i>-of-<n>.lock``.

Shards of different splits can still meet: shard i/n takes the cells with index ≡ i (mod n),
and j/m those ≡ j (mod m); by the Chinese remainder theorem some index satisfies both iff
i ≡ j (mod gcd(n, m)) (``shards_meet``). So a sweep also probes the lock file of every other
split in the directory and is refused when one that can meet it is held: 0/2 and 0/4 meet,
0/2 and 1/4 do not. Taking one's own lock and probing the others happen under a short
directory-wide lock (``DIR/locks/registry.lock``), so two sweeps that start at once cannot both
miss each other. Preconditions: a local file system, or
a network file system whose ``flock`` is honoured across hosts (NFS v4 maps it to byte-range
locks; some older set-ups do not, and two hosts could then both take the lock).

``watch_parent`` — a worker of the process pool must not outlive the sweep that started it
(left alone it would finish its cell and then wait forever for work). Two mechanisms, because
neither alone covers every case: on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` makes the
kernel kill the worker the moment its parent dies; it is tied to the parent *thread* that
spawned the worker, which is the sweep's main thread here (``ProcessPoolExecutor.submit``
spawns ``spawn``-context workers in the calling thread). It cannot fire for a parent that died
before the call, and it does not exist elsewhere, so a daemon thread also polls ``os.getppid()``
once a second and ends the worker (``os._exit``) when the parent it was started by is gone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import json
import math
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from crasp.errors import CraspError

LOCKS_DIR = "locks"
REGISTRY = "registry.lock"
PARENT_POLL_S = 1.0
PR_SET_PDEATHSIG = 1


class SweepInUseError(CraspError):
    """Another live process holds the sweep directory (for this shard)."""


def shards_meet(first: tuple[int, int], second: tuple[int, int]) -> bool:
    """Whether shards i/n and j/m have a cell index in common (module docstring)."""
    return (first[0] - second[0]) % math.gcd(first[1], second[1]) == 0


def _held(path: Path) -> str | None:
    """The holder record of the lock file ``path`` when a process holds it, else None."""
    try:
        file = open(path, "r", encoding="utf-8")
    except OSError:
        return None
    with file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return file.read()
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)
        return None


def _shard_locks(locks: Path) -> list[tuple[Path, tuple[int, int]]]:
    """Each shard lock file in the folder ``locks`` (``shard-<i>-of-<n>.lock``, as
    ``SweepLock`` names them) with its shard, in file-name order; other names are left out."""
    found = []
    for path in sorted(locks.glob("shard-*-of-*.lock")):
        try:
            i, n = (int(part) for part in path.stem.removeprefix("shard-").split("-of-"))
        except ValueError:
            continue
        if n >= 1:
            found.append((path, (i, n)))
    return found


def _holder_text(holder_text: str) -> str:
    """``process 8096 on host (since ...: crasp sweep ...)`` from a lock file's record."""
    try:
        holder = json.loads(holder_text)
        return (f"process {holder.get('pid')} on {holder.get('host')} (since "
                f"{holder.get('started')}: {holder.get('command') or 'a sweep'})")
    except (ValueError, AttributeError):
        return "another process (it has not recorded itself yet)"


def running_sweeps(out_dir: str | Path) -> list[str]:
    """``shard 0/1: process ...`` for each shard of the sweep directory ``out_dir`` that a live
    process holds now (its lock is held: ``flock``, module docstring), in shard-file order.
    Writes nothing. The probe takes each lock shared for an instant; it does so under the
    registry lock, shared, so that a sweep starting meanwhile (which takes the registry
    exclusively first) waits for it rather than finding its shard held."""
    locks = Path(out_dir) / LOCKS_DIR
    try:
        registry = open(locks / REGISTRY, "r", encoding="utf-8")
    except OSError:  # no sweep has run here (or one of a version without the registry)
        registry = None
    try:
        if registry is not None:
            fcntl.flock(registry.fileno(), fcntl.LOCK_SH)
        return [f"shard {i}/{n}: {_holder_text(holder)}" for path, (i, n) in _shard_locks(locks)
                if (holder := _held(path)) is not None]
    finally:
        if registry is not None:
            registry.close()


class SweepLock:
    """``with SweepLock(out, shard, command):`` holds the directory for this shard, or raises
    ``SweepInUseError`` naming the process that holds it."""

    def __init__(self, out_dir: str | Path, shard: tuple[int, int], command: str | None):
        self.path = Path(out_dir) / LOCKS_DIR / f"shard-{shard[0]}-of-{shard[1]}.lock"
        self.shard = shard
        self.command = command
        self.file = None

    def __enter__(self) -> "SweepLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.parent / REGISTRY, "a", encoding="utf-8") as registry:
            fcntl.flock(registry.fileno(), fcntl.LOCK_EX)   # released when the file closes
            file = self._take_own()
            try:
                self._refuse_meeting_shards()
            except SweepInUseError:
                file.close()
                raise
        file.seek(0)
        file.truncate()
        file.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                               "shard": f"{self.shard[0]}/{self.shard[1]}",
                               "command": self.command,
                               "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}) + "\n")
        file.flush()
        self.file = file
        return self

    def _take_own(self):
        file = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.seek(0)
            holder = file.read()
            file.close()
            raise SweepInUseError(self._refusal(holder)) from None
        return file

    def _refuse_meeting_shards(self) -> None:
        for path, (i, n) in _shard_locks(self.path.parent):
            if path != self.path and shards_meet(self.shard, (i, n)):
                holder = _held(path)
                if holder is not None:
                    raise SweepInUseError(self._refusal(holder, f"{i}/{n}"))

    def __exit__(self, *exc) -> bool:
        if self.file is not None:
            self.file.close()  # closing the descriptor releases the lock
            self.file = None
        return False

    def _refusal(self, holder_text: str, other: str | None = None) -> str:
        directory = self.path.parent.parent
        shard = f"shard {self.shard[0]}/{self.shard[1]}"
        if other is not None:
            shard += f", whose cells shard {other} shares"
        return (f"the sweep directory {directory} ({shard}) is in use by "
                f"{_holder_text(holder_text)}; wait for it to "
                "finish or stop it, then run this command again (finished cells are kept either "
                "way)")


def watch_parent(parent_pid: int) -> None:
    """End this process when ``parent_pid`` is no longer its parent (see the module docstring)."""
    if sys.platform.startswith("linux"):
        libc_name = ctypes.util.find_library("c")
        if libc_name:
            libc = ctypes.CDLL(libc_name, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the kernel could be told
        os._exit(1)

    def poll() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=poll, name="crasp-parent-watch", daemon=True).start()
