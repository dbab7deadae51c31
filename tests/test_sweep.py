"""crasp sweep: parsing, cell enumeration, sharding, resume, worker pool (with a fake trainer)."""

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

from crasp.errors import CraspError
from crasp.train import sweep
from crasp.train.sweep import SweepSpec, enumerate_cells, run_sweep, shard_cells

import test_sweep_fakes as fakes
from test_sweep_fakes import FakeConfig, fake_resolve, fake_train

ROOT = Path(__file__).resolve().parent.parent


def cells_for(spec: SweepSpec):
    return enumerate_cells(spec, resolve=fake_resolve, config_cls=FakeConfig)


def small_spec(**changes) -> SweepSpec:
    values = dict(depths=[1, 2], languages=["L3", "L4"], posencs=["nope", "rope"], seeds=[0, 1],
                  grid={"lr": [1e-3, 3e-4]})
    values.update(changes)
    return SweepSpec(**values)


# ----------------------------------------------------------------------------- parsing

def test_parse_ranges_and_lists():
    assert sweep.parse_int_range("1:6") == [1, 2, 3, 4, 5, 6]
    assert sweep.parse_int_range("1,3,2:4") == [1, 3, 2, 4]
    assert sweep.parse_seeds("3") == [0, 1, 2]
    assert sweep.parse_seeds("5:7") == [5, 6, 7]
    assert sweep.parse_seeds("4,") == [4]
    assert sweep.parse_languages("L3:L8") == ["L3", "L4", "L5", "L6", "L7", "L8"]
    assert sweep.parse_languages("L3:L4,E3:E4,dyck1") == ["L3", "L4", "E3", "E4", "dyck1"]
    assert sweep.parse_names("NoPE,rope, alibi") == ["nope", "rope", "alibi"]
    assert sweep.parse_shard("2/5") == (2, 5)
    for bad in ("5/5", "1", "-1/2", "a/b"):
        with pytest.raises(CraspError):
            sweep.parse_shard(bad)
    for bad in ("L3:E5", "L5:L3", "L3:"):
        with pytest.raises(CraspError):
            sweep.parse_languages(bad)
    with pytest.raises(CraspError):
        sweep.parse_int_range("3:1")
    with pytest.raises(CraspError):
        sweep.parse_seeds("0")


def test_parse_grid_uses_field_types():
    grid = sweep.parse_grid(["lr=1e-3,3e-4 d_model=64,128", "use_bias=true,no",
                             "rope_fraction=none,0.5", "train_bin=101:150",
                             "test_bins=[[251,300],[351,400]]"], FakeConfig)
    assert grid == {"lr": [1e-3, 3e-4], "d_model": [64, 128], "use_bias": [True, False],
                    "rope_fraction": [None, 0.5], "train_bin": [(101, 150)],
                    "test_bins": [[(251, 300), (351, 400)]]}
    assert isinstance(grid["d_model"][0], int) and isinstance(grid["lr"][0], float)
    with pytest.raises(CraspError, match="d_model"):
        sweep.parse_grid(["d_modle=64"], FakeConfig)
    with pytest.raises(CraspError, match="--depths"):
        sweep.parse_grid(["depth=1,2"], FakeConfig)
    with pytest.raises(CraspError, match="cannot parse"):
        sweep.parse_grid(["d_model=abc"], FakeConfig)
    with pytest.raises(CraspError, match="twice"):
        sweep.parse_grid(["lr=1", "lr=2"], FakeConfig)
    assert sweep.parse_grid(["test_bins=251:300+351:400,401:450"], FakeConfig) == {
        "test_bins": [[(251, 300), (351, 400)], [(401, 450)]]}
    # Without a known config class values are JSON or text.
    assert sweep.parse_grid(["lr=1e-3,x"]) == {"lr": [1e-3, "x"]}


# ----------------------------------------------------------------------------- cells

def test_enumeration_is_deterministic_and_complete():
    spec = small_spec()
    cells = cells_for(spec)
    assert len(cells) == 2 * 2 * 2 * 2 * 2
    assert [c.index for c in cells] == list(range(len(cells)))
    # Fixed nesting order: posenc, language, depth, grid point, seed.
    assert [(c.posenc, c.language, c.depth, c.hyper["lr"], c.seed) for c in cells[:5]] == [
        ("nope", "L3", 1, 1e-3, 0), ("nope", "L3", 1, 1e-3, 1), ("nope", "L3", 1, 3e-4, 0),
        ("nope", "L3", 1, 3e-4, 1), ("nope", "L3", 2, 1e-3, 0)]
    assert len({c.id for c in cells}) == len(cells)
    again = cells_for(small_spec())
    assert [c.id for c in again] == [c.id for c in cells]
    first = cells[0]
    assert first.id.startswith("L3-d1-nope-s0-") and len(first.id.rsplit("-", 1)[1]) == 10
    assert first.overrides["threads"] == 1 and first.config["lr"] == 1e-3
    # The id depends on the resolved config, not on where the cell sits in the grid.
    other = cells_for(small_spec(languages=["L4"], posencs=["rope"]))
    assert {c.id for c in other} <= {c.id for c in cells}


def test_enumeration_rejects_unknown_fields():
    with pytest.raises(CraspError):
        cells_for(small_spec(grid={"nonsense": [1]}))


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7])
def test_shards_partition_the_cells(count):
    cells = cells_for(small_spec())
    shards = [shard_cells(cells, (i, count)) for i in range(count)]
    ids = [c.id for shard in shards for c in shard]
    assert sorted(ids) == sorted(c.id for c in cells)
    assert len(ids) == len(set(ids))
    for i, shard in enumerate(shards):
        assert all(c.index % count == i for c in shard)
        assert abs(len(shard) - len(cells) / count) < 1


# ----------------------------------------------------------------------------- running

def test_run_resume_after_kill_runs_only_missing_cells(tmp_path, monkeypatch):
    cells = cells_for(small_spec(posencs=["nope"], grid={}))
    assert len(cells) == 8
    calls = {"n": 0}

    def killed_on_fourth(config, run_dir, progress=False, resume=True):
        calls["n"] += 1
        if calls["n"] == 4:
            Path(run_dir).mkdir(parents=True, exist_ok=True)
            (Path(run_dir) / "calls.txt").write_text("interrupted\n")
            raise KeyboardInterrupt
        return fake_train(config, run_dir, progress, resume)

    with pytest.raises(KeyboardInterrupt):
        run_sweep(cells, tmp_path, train_fn=killed_on_fourth, progress=False, command="first")
    done = [c for c in cells if sweep.is_done(tmp_path, c)]
    assert [c.index for c in done] == [0, 1, 2]
    sessions = [json.loads(p.read_text()) for p in (tmp_path / "sessions").glob("*.json")]
    assert len(sessions) == 1 and sessions[0]["interrupted"] and sessions[0]["ran"] == 3

    outcome = run_sweep(cells, tmp_path, train_fn=fake_train, progress=False)
    assert (outcome.already_done, outcome.ran, outcome.failed) == (3, 5, [])
    assert all(sweep.is_done(tmp_path, c) for c in cells)
    # Finished cells were not trained again; the killed cell resumed once.
    assert [fakes.calls(sweep.cell_dir(tmp_path, c)) for c in cells] == [1, 1, 1, 2, 1, 1, 1, 1]
    record = json.loads((sweep.cell_dir(tmp_path, cells[3]) / "cell.json").read_text())
    assert record["index"] == 3 and record["overrides"] == {
        "language": "L3", "depth": 2, "posenc": "nope", "seed": 1, "threads": 1}
    # A third run does nothing.
    outcome = run_sweep(cells, tmp_path, train_fn=fake_train, progress=False)
    assert (outcome.already_done, outcome.ran) == (8, 0)


def test_failed_cell_is_recorded_and_retried(tmp_path, monkeypatch):
    cells = cells_for(small_spec(posencs=["nope"], grid={}, seeds=[0]))
    monkeypatch.setenv("FAKE_FAIL", "L4")
    outcome = run_sweep(cells, tmp_path, train_fn=fake_train, progress=False)
    failed = [c.id for c in cells if c.language == "L4"]
    assert outcome.failed == failed and outcome.ran == 2
    assert "fake failure" in (sweep.cell_dir(tmp_path, failed[0]) / "error.txt").read_text()
    status = sweep.sweep_status(tmp_path, cells)
    assert [c.id for c in status["failed"]] == failed
    monkeypatch.delenv("FAKE_FAIL")
    outcome = run_sweep(cells, tmp_path, train_fn=fake_train, progress=False)
    assert outcome.ran == 2 and not outcome.failed
    assert not (sweep.cell_dir(tmp_path, failed[0]) / "error.txt").exists()


def test_record_spec_is_idempotent(tmp_path):
    spec = small_spec()
    cells = cells_for(spec)
    sweep.record_spec(tmp_path, spec, cells, "cmd A")
    sweep.record_spec(tmp_path, spec, cells, "cmd B")
    sweep.record_spec(tmp_path, spec, cells, "cmd A")
    other = small_spec(seeds=[2])
    sweep.record_spec(tmp_path, other, cells_for(other), "cmd C")
    data = json.loads((tmp_path / "sweep.json").read_text())
    assert len(data["specs"]) == 2
    assert data["specs"][0]["commands"] == ["cmd A", "cmd B"]
    assert data["specs"][0]["n_cells"] == len(cells)
    assert [c["id"] for c in data["specs"][0]["cells"]] == [c.id for c in cells]
    assert data["specs"][0]["grid"] == {"lr": [1e-3, 3e-4]}
    assert not list(tmp_path.glob(".*.tmp"))


def test_worker_pool_runs_every_cell_with_one_thread(tmp_path):
    cells = cells_for(small_spec(posencs=["nope"], grid={}, seeds=[0]))
    outcome = run_sweep(cells, tmp_path, jobs=2, train_fn=fake_train, progress=True)
    assert (outcome.ran, outcome.failed, outcome.successes) == (4, [], 3)
    for cell in cells:
        results = json.loads((sweep.cell_dir(tmp_path, cell) / "results.json").read_text())
        assert results["threads_seen"] == "1"
        assert fakes.calls(sweep.cell_dir(tmp_path, cell)) == 1


KILL_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from crasp.train.sweep import SweepSpec, enumerate_cells, run_sweep
    from test_sweep_fakes import FakeConfig, fake_resolve, fake_train

    if __name__ == "__main__":
        spec = SweepSpec(depths=[1, 2, 3], languages=["L3", "L4"], seeds=[0])
        cells = enumerate_cells(spec, resolve=fake_resolve, config_cls=FakeConfig)
        try:
            outcome = run_sweep(cells, sys.argv[1], jobs=2, train_fn=fake_train, progress=False)
        except KeyboardInterrupt:
            print("INTERRUPTED", flush=True)
            sys.exit(130)
        print("RAN", outcome.ran, "DONE", outcome.already_done, flush=True)
""")


def test_ctrl_c_stops_workers_and_resume_completes(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(KILL_SCRIPT.format(tests=str(ROOT / "tests")))
    out = tmp_path / "sweep"
    env = {**os.environ, "FAKE_SLEEP": "1.0"}
    process = subprocess.Popen([sys.executable, str(script), str(out)], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(list(out.glob("cells/*/results.json"))) < 2:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "INTERRUPTED" in stdout
    finished = list(out.glob("cells/*/results.json"))
    assert 2 <= len(finished) < 6
    for path in finished:
        json.loads(path.read_text())  # complete JSON: written atomically
    worker_pids = {int(line) for path in out.glob("cells/*/calls.txt")
                   for line in path.read_text().split()}
    time.sleep(0.2)
    for pid in worker_pids:  # no worker outlives the sweep
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(
            f"/proc/{pid}/status").read_text().lower()
    before = {p.parent.name for p in finished}
    result = subprocess.run([sys.executable, str(script), str(out)], cwd=ROOT, text=True,
                            capture_output=True, timeout=120, env={**os.environ})
    assert result.returncode == 0, result.stderr
    assert f"DONE {len(before)}" in result.stdout
    assert len(list(out.glob("cells/*/results.json"))) == 6
    for name in before:
        assert fakes.calls(out / "cells" / name) == 1


# ----------------------------------------------------------------------------- CLI

def test_cli_dry_run_lists_shard(tmp_path, monkeypatch):
    from crasp.train.sweep.cli import sweep_command

    monkeypatch.setattr(sweep, "default_resolver", lambda: (fake_resolve, FakeConfig))
    result = CliRunner().invoke(sweep_command, [
        "--depths", "1:2", "--languages", "L3:L4", "--posenc", "nope,rope", "--seeds", "2",
        "--grid", "lr=1e-3,3e-4", "d_model=64", "--shard", "1/3", "-o", str(tmp_path),
        "--dry-run"])
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert [int(line[0]) for line in lines] == list(range(1, 32, 3))
    assert all(line[2] == "todo" for line in lines)
    assert not (tmp_path / "sweep.json").exists()
    assert result.stderr == ("11 of 32 cells (languages L3, L4; depths 1, 2; nope, rope; "
                             "seeds 0, 1) in shard 1/3\n")


def test_cli_rejects_bad_grid(tmp_path, monkeypatch):
    from crasp.train.sweep.cli import sweep_command

    monkeypatch.setattr(sweep, "default_resolver", lambda: (fake_resolve, FakeConfig))
    result = CliRunner().invoke(sweep_command, [
        "--depths", "1", "--languages", "L3", "-o", str(tmp_path), "--dry-run", "oops"])
    assert isinstance(result.exception, CraspError)


@pytest.mark.parametrize("seeds,shown", [("2", "seeds 0, 1"), ("2,", "seeds 2"),
                                         ("2:3", "seeds 2, 3"), ("0,4", "seeds 0, 4")])
def test_cli_header_shows_the_axes_as_parsed(tmp_path, monkeypatch, seeds, shown):
    """``--seeds 2`` is a count: the header says which seeds run, so that reading it as
    seed 2 (as the sixth lease's driver did) shows at once."""
    from crasp.train.sweep.cli import sweep_command

    monkeypatch.setattr(sweep, "default_resolver", lambda: (fake_resolve, FakeConfig))
    monkeypatch.setattr(sweep, "run_sweep",
                        lambda *args, run=sweep.run_sweep, **kwargs:
                        run(*args, train_fn=fake_train, **kwargs))
    result = CliRunner().invoke(sweep_command, [
        "--depths", "2", "--languages", "L3,L4", "--seeds", seeds, "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    header = result.stderr.splitlines()[0]
    assert f"(languages L3, L4; depths 2; nope; {shown})" in header, header
