"""Sweep processes clean up after themselves: workers die with their parent, however it dies,
and a second sweep on a directory in use is refused, naming the process that holds it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.train.sweep.lock import SweepInUseError, SweepLock

TESTS = Path(__file__).resolve().parent

PARENT_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from crasp.train.sweep import SweepSpec, enumerate_cells, run_sweep
    from test_sweep_fakes import FakeConfig, fake_resolve, fake_train

    if __name__ == "__main__":
        spec = SweepSpec(depths=[1, 2], languages=["L3"], seeds=[0])
        cells = enumerate_cells(spec, resolve=fake_resolve, config_cls=FakeConfig)
        run_sweep(cells, sys.argv[1], jobs=2, train_fn=fake_train, progress=False)
""")

HOLDER_SCRIPT = textwrap.dedent("""
    import sys, time
    from crasp.train.sweep.lock import SweepLock

    with SweepLock(sys.argv[1], (0, 1), "the holder"):
        print("HELD", flush=True)
        time.sleep(120)
""")


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "zombie" not in status.lower()


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads worker states from /proc")
def test_workers_die_when_the_sweep_is_killed(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT_SCRIPT.format(tests=str(TESTS)))
    out = tmp_path / "sweep"
    parent = subprocess.Popen([sys.executable, str(script), str(out)],
                              env={**os.environ, "FAKE_SLEEP": "60"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker_pids: set[int] = set()

    def both_workers_started() -> bool:
        worker_pids.update(int(line) for path in out.glob("cells/*/calls.txt")
                           for line in path.read_text().split())
        return len(worker_pids) == 2

    try:
        assert _wait_for(both_workers_started, 60), "the workers did not start"
        parent.send_signal(signal.SIGKILL)  # no handler, no clean-up code runs in the parent
        parent.wait(timeout=10)
        assert _wait_for(lambda: not any(map(_alive, worker_pids)), 10), (
            f"workers {sorted(p for p in worker_pids if _alive(p))} outlived their sweep")
    finally:
        parent.kill()
        for pid in worker_pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_second_sweep_on_a_directory_in_use_is_refused(tmp_path):
    out = tmp_path / "sweep"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER_SCRIPT, str(out)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        result = CliRunner().invoke(cli, ["sweep", "--depths", "1", "--languages", "L3",
                                          "--seeds", "1", "--no-progress", "-o", str(out)])
        assert result.exit_code == 2, result.output
        assert f"in use by process {holder.pid}" in result.output
        assert "the holder" in result.output and "Traceback" not in result.output
        assert not (out / "sweep.json").exists()  # refused before writing anything
    finally:
        holder.kill()
        holder.wait(timeout=10)
    # The holder died without releasing anything by hand: the kernel dropped its lock.
    with SweepLock(out, (0, 1), "after the holder") as lock:
        record = json.loads(lock.path.read_text())
        assert record["pid"] == os.getpid() and record["command"] == "after the holder"


def test_the_lock_is_per_shard_and_released_on_exit(tmp_path):
    with SweepLock(tmp_path, (0, 2), "shard 0"):
        with SweepLock(tmp_path, (1, 2), "shard 1"):  # shards of one sweep share a directory
            pass
        with pytest.raises(SweepInUseError, match=r"shard 0/2\) is in use by process"):
            with SweepLock(tmp_path, (0, 2), "again"):
                pass
    with SweepLock(tmp_path, (0, 2), "after release"):
        pass


def test_shards_meet_exactly_when_some_cell_index_is_in_both():
    from crasp.train.sweep.lock import shards_meet
    for n in range(1, 9):
        for m in range(1, 9):
            for i in range(n):
                for j in range(m):
                    both = any(k % n == i and k % m == j for k in range(n * m))
                    assert shards_meet((i, n), (j, m)) == both, (i, n, j, m)


def test_a_sweep_is_refused_where_a_running_split_shares_its_cells(tmp_path):
    with SweepLock(tmp_path, (0, 2), "half of the cells"):
        with pytest.raises(SweepInUseError, match=r"shard 0/4, whose cells shard 0/2 shares\) "
                                                  r"is in use by process"):
            with SweepLock(tmp_path, (0, 4), "a quarter inside that half"):
                pass
        with pytest.raises(SweepInUseError, match="whose cells shard 0/2 shares"):
            with SweepLock(tmp_path, (2, 3), "thirds meet every half"):
                pass
        with SweepLock(tmp_path, (1, 4), "a quarter in the other half"):
            pass
    with SweepLock(tmp_path, (0, 4), "once the half is done"):
        pass


def test_a_dry_run_names_the_process_running_the_sweep_now(tmp_path):
    out = tmp_path / "sweep"
    dry_run = ["sweep", "--depths", "1", "--languages", "L3", "--seeds", "1", "--dry-run",
               "-o", str(out)]
    result = CliRunner().invoke(cli, dry_run)
    assert result.exit_code == 0 and "running now" not in result.stderr
    assert not out.exists()   # a dry run writes nothing, not even the locks folder
    holder = subprocess.Popen([sys.executable, "-c", HOLDER_SCRIPT, str(out)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        files = sorted(out.rglob("*"))
        result = CliRunner().invoke(cli, dry_run)
        assert result.exit_code == 0, result.output
        assert (f"running now in {out}: shard 0/1: process {holder.pid} on "
                in result.stderr) and "the holder)" in result.stderr
        assert sorted(out.rglob("*")) == files
    finally:
        holder.kill()
        holder.wait(timeout=10)
    result = CliRunner().invoke(cli, dry_run)
    assert result.exit_code == 0 and "running now" not in result.stderr
    with SweepLock(out, (0, 1), "after the dry runs"):   # the probe left no lock behind
        pass
