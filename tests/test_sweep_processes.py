"""Sweep processes clean up after themselves (#12 item 7): workers die with a SIGKILLed parent,
and a second sweep on a directory in use is refused naming the first (with a fake trainer)."""

from __future__ import annotations

import itertools
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
from crasp.errors import CraspError
from crasp.train import sweep
from crasp.train.process_guards import sweep_lock

from test_sweep_fakes import FakeConfig, fake_resolve, fake_train

ROOT = Path(__file__).resolve().parent.parent

SWEEP_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from crasp.train.sweep import SweepSpec, enumerate_cells, run_sweep
    from test_sweep_fakes import FakeConfig, fake_resolve, fake_train

    if __name__ == "__main__":
        spec = SweepSpec(depths=[1, 2, 3], languages=["L3", "L4"], seeds=[0])
        cells = enumerate_cells(spec, resolve=fake_resolve, config_cls=FakeConfig)
        run_sweep(cells, sys.argv[1], jobs=2, train_fn=fake_train, progress=False)
""")


def start_slow_sweep(tmp_path: Path, out: Path) -> subprocess.Popen:
    """A two-worker sweep whose cells each sleep 60 s; returns once both workers are training."""
    script = tmp_path / "sweep_script.py"
    script.write_text(SWEEP_SCRIPT.format(tests=str(ROOT / "tests")))
    process = subprocess.Popen([sys.executable, str(script), str(out)], cwd=ROOT,
                               env={**os.environ, "FAKE_SLEEP": "60"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    while len(worker_pids(out)) < 2:
        if time.time() > deadline or process.poll() is not None:
            process.kill()
            pytest.fail(f"the sweep's workers did not start: {process.communicate()[1]}")
        time.sleep(0.1)
    return process


def worker_pids(out: Path) -> set[int]:
    return {int(line) for path in out.glob("cells/*/calls.txt")
            for line in path.read_text().split()}


def is_running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "zombie" not in status.lower()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_exit_when_the_sweep_is_sigkilled(tmp_path):
    out = tmp_path / "sweep"
    process = start_slow_sweep(tmp_path, out)
    workers = worker_pids(out)
    assert all(is_running(pid) for pid in workers)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    deadline = time.time() + 15
    while any(is_running(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(is_running(pid) for pid in workers), "a worker outlived its sweep"
    assert not list(out.glob("cells/*/results.json"))  # the killed cells did not finish


def sweep_cli(out: Path) -> list[str]:
    return ["sweep", "--depths", "1", "--languages", "L3", "--seeds", "1", "--no-progress",
            "-o", str(out)]


def test_second_sweep_on_a_directory_in_use_is_refused_naming_the_first(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep, "default_resolver", lambda: (fake_resolve, FakeConfig))
    out = tmp_path / "sweep"
    first = start_slow_sweep(tmp_path, out)
    try:
        lock_before = (out / "locks" / "shard-0-of-1.lock").read_text()
        result = CliRunner().invoke(cli, sweep_cli(out))
        assert result.exit_code == 2, result.output
        assert f"pid {first.pid}" in result.output
        assert "another sweep is using this directory" in result.output
        assert "Traceback" not in result.output
        assert not (out / sweep.SWEEP_FILE).exists()  # the refused sweep recorded nothing
        assert (out / "locks" / "shard-0-of-1.lock").read_text() == lock_before
    finally:
        first.kill()
        first.wait(timeout=10)
    # a dead sweep holds no lock: the same command now runs (the fake trainer, no sleep)
    real_run_cell = sweep.run_cell
    monkeypatch.setattr(sweep, "run_cell", lambda train_fn, config, run_dir: real_run_cell(
        fake_train, config, run_dir))
    result = CliRunner().invoke(cli, sweep_cli(out))
    assert result.exit_code == 0, result.output


def take_lock_elsewhere(directory: Path, shard: str) -> subprocess.CompletedProcess:
    """Another process takes the lock of ``shard`` ("i/n") in ``directory`` and lets it go."""
    code = ("import sys\nfrom crasp.train.process_guards import sweep_lock\n"
            "i, n = map(int, sys.argv[2].split('/'))\n"
            "with sweep_lock(sys.argv[1], (i, n)): print('held')")
    return subprocess.run([sys.executable, "-c", code, str(directory), shard], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=60)


def test_lock_is_reentrant_in_one_process_and_exclusive_across_processes(tmp_path):
    with sweep_lock(tmp_path):
        with sweep_lock(tmp_path):  # the CLI holds it around run_sweep, which takes it again
            pass
        assert f"pid {os.getpid()}" in (tmp_path / "locks" / "shard-0-of-1.lock").read_text()
        refused = take_lock_elsewhere(tmp_path, "0/1")
        assert refused.returncode != 0 and f"pid {os.getpid()}" in refused.stderr
    assert take_lock_elsewhere(tmp_path, "0/1").stdout.strip() == "held"  # released


@pytest.mark.parametrize("running, second, refused", [
    ((0, 2), "1/2", False), ((0, 2), "0/2", True), ((0, 2), "0/1", True),
    ((0, 2), "2/4", True), ((0, 2), "1/4", False), ((1, 3), "0/2", True)])
def test_shards_of_one_sweep_share_a_directory_unless_their_cells_meet(tmp_path, running,
                                                                      second, refused):
    with sweep_lock(tmp_path, running):
        result = take_lock_elsewhere(tmp_path, second)
    assert (result.returncode != 0) == refused, result.stderr
    if refused:
        assert f"pid {os.getpid()}" in result.stderr and "another sweep" in result.stderr


def test_shards_overlap_exactly_when_they_share_a_cell_index():
    from crasp.train.process_guards import shards_overlap

    for n, m in itertools.product(range(1, 9), repeat=2):
        for i, j in itertools.product(range(n), range(m)):
            shared = any(k % n == i and k % m == j for k in range(n * m))
            assert shards_overlap((i, n), (j, m)) == shared, (i, n, j, m)


def test_one_signal_guard_stops_a_run_or_interrupts_a_sweep():
    from crasp.train.signals import SignalGuard

    before = signal.getsignal(signal.SIGTERM)
    with SignalGuard() as guard:  # a training run: SIGTERM asks the loop to stop
        os.kill(os.getpid(), signal.SIGTERM)
        assert guard.stop and guard.signal == signal.SIGTERM
    with pytest.raises(KeyboardInterrupt):  # a sweep's parent: SIGTERM interrupts at once
        with SignalGuard(interrupt=True):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler runs here
    assert signal.getsignal(signal.SIGTERM) is before  # handlers restored on exit
