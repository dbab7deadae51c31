"""The training loop, run directory, resume and the ``crasp train`` command (CPU only)."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from crasp.errors import CraspError
from crasp.train import TrainConfig, resolve_preset
from crasp.train.loop import train
from crasp.train import run as run_files
from crasp.train.cli import train_command
from crasp.train.loop import TIMING_KEYS
from crasp.train.run import TrainingInterrupted

torch.set_num_threads(1)


def tiny(**overrides) -> TrainConfig:
    values = dict(language="L4", depth=2, d_model=32, n_heads=2, d_ff=64, dropout=0.1,
                  train_bin=(8, 24), test_bins=[(25, 40)], n_train=240, n_test=60,
                  batch_size=16, lr=2e-3, warmup_steps=5, epochs=4, patience=0, device="cpu")
    values.update(overrides)
    return resolve_preset("default", **values)


def untimed(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in TIMING_KEYS}


def untimed_metrics(run_dir) -> list[dict]:
    lines = [json.loads(line) for line in open(run_dir / run_files.METRICS_FILE)]
    return [{k: v for k, v in line.items()
             if not k.endswith("_s") and k not in ("tokens_per_s", "strings_per_s")}
            for line in lines]


def same_weights(a, b) -> bool:
    x, y = load_file(str(a)), load_file(str(b))
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("full")
    return run_dir, train(tiny(), run_dir, progress=False, resume=False)


def test_learns_L3_depth1_nope_within_a_minute(tmp_path):
    config = resolve_preset("default", language="L3", depth=1, posenc="nope", d_model=32,
                            n_heads=2, d_ff=64, train_bin=(10, 30), test_bins=[(31, 60)],
                            n_train=500, n_test=100, batch_size=16, lr=3e-3, warmup_steps=20,
                            epochs=30, seed=0, device="cpu")
    start = time.perf_counter()
    results = train(config, tmp_path, progress=False, resume=False)
    elapsed = time.perf_counter() - start
    assert results["val_exact_match"] == 1.0 and results["success"]
    assert results["stopped"] == "success" and results["epochs"] == results["best_epoch"]
    assert elapsed < 60, elapsed


def test_run_directory_contents(uninterrupted):
    run_dir, results = uninterrupted
    for name in ("config.json", "metrics.jsonl", "best.safetensors", "last.safetensors",
                 "results.json"):
        assert (run_dir / name).is_file(), name
    assert not (run_dir / run_files.STATE_FILE).exists()
    assert TrainConfig.from_dict(json.loads((run_dir / "config.json").read_text())) == tiny()
    assert json.loads((run_dir / "results.json").read_text()) == results
    lines = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
    assert [line["epoch"] for line in lines] == [1, 2, 3, 4]
    for key in ("loss", "train_exact_match", "val_exact_match", "elapsed_s", "tokens_per_s"):
        assert all(key in line for line in lines), key
    assert set(results["bins"]) == {"25:40"}
    for metrics in results["bins"].values():
        assert 0 <= metrics["exact_match"] <= 1 and 0 <= metrics["token_accuracy"] <= 1
        assert metrics["n"] == 60
    assert results["epochs"] == 4 and 1 <= results["best_epoch"] <= 4
    assert results["val_exact_match"] == max(line["val_exact_match"] for line in lines)
    assert results["config"] == tiny().to_dict()
    assert isinstance(results["success"], bool) and results["wall_time_s"] > 0


def test_same_seed_is_bitwise_reproducible(uninterrupted, tmp_path):
    run_dir, results = uninterrupted
    again = train(tiny(), tmp_path, progress=False, resume=False)
    assert untimed(again) == untimed(results)
    assert untimed_metrics(tmp_path) == untimed_metrics(run_dir)
    assert same_weights(tmp_path / "best.safetensors", run_dir / "best.safetensors")


def test_resume_after_interruption_reproduces_results(uninterrupted, tmp_path):
    run_dir, results = uninterrupted
    assert train(tiny(), tmp_path, resume=True, max_epochs_this_session=2) is None
    state = torch.load(tmp_path / run_files.STATE_FILE, weights_only=True)
    assert state["epoch"] == 2 and not (tmp_path / "results.json").exists()
    resumed = train(tiny(), tmp_path, resume=True)
    assert untimed(resumed) == untimed(results)
    assert untimed_metrics(tmp_path) == untimed_metrics(run_dir)
    assert same_weights(tmp_path / "best.safetensors", run_dir / "best.safetensors")
    assert same_weights(tmp_path / "last.safetensors", run_dir / "last.safetensors")
    # a finished run is returned at once
    assert train(tiny(), tmp_path, resume=True) == resumed


def test_sigint_leaves_a_resumable_checkpoint(uninterrupted, tmp_path, monkeypatch):
    run_dir, results = uninterrupted
    original = run_files.append_metrics

    def append_then_interrupt(path, line):
        original(path, line)
        if line["epoch"] == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C during epoch 2 (handled at next step)

    monkeypatch.setattr(run_files, "append_metrics", append_then_interrupt)
    with pytest.raises(TrainingInterrupted):
        train(tiny(), tmp_path, resume=True)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
    monkeypatch.setattr(run_files, "append_metrics", original)
    resumed = train(tiny(), tmp_path, resume=True)
    assert untimed(resumed) == untimed(results)
    assert untimed_metrics(tmp_path) == untimed_metrics(run_dir)


def test_resume_refuses_a_different_config(uninterrupted):
    run_dir, _ = uninterrupted
    with pytest.raises(CraspError, match="different config"):
        train(tiny(lr=1e-3), run_dir, resume=True)


def test_patience_stops_a_stalled_run(tmp_path):
    results = train(tiny(lr=1e-9, warmup_steps=0, epochs=8, patience=2, dropout=0.0), tmp_path)
    assert results["stopped"] == "patience"
    assert results["epochs"] == results["best_epoch"] + 2 < 8
    assert not results["success"]


def test_knee_deep_preset_runs_its_search(tmp_path):
    config = resolve_preset("knee-deep", language="L3", depth=1, train_bin=(6, 12),
                            test_bins=[(13, 16)], n_train=20, n_test=8, epochs=1, d_ff=32,
                            device="cpu")
    assert [(e["d_model"], e["lr"]) for e in config.search] == \
        [(256, 1e-4), (256, 1e-5), (512, 1e-4), (512, 1e-5)]
    results = train(config, tmp_path)
    tried = [t["overrides"] for t in results["trials"]]
    assert tried == config.search[:len(tried)]
    assert results["success"] or len(tried) == 4
    assert results["selected"] == tried[results["best_trial"]]
    assert set(results["bins"]) == {"13:16"}
    lines = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    assert [line["trial"] for line in lines] == list(range(len(tried)))


# ---------------------------------------------------------------------------- CLI

def invoke(*args):
    return CliRunner().invoke(train_command, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("args, message", [
    (["--language", "L999x"], "unknown"),
    (["--posenc", "xpos"], "unknown positional encoding"),
    (["--depth", "0"], "depth must be"),
    (["--train-bin", "51:100", "--test-bins", "90:150"], "overlaps the train bin"),
    (["--set", "bogus=1"], "unknown config field"),
])
def test_cli_refuses_invalid_options(args, message, tmp_path):
    result = invoke(*args, "-o", tmp_path / "run")
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "run").exists()  # refused before any work


def test_cli_trains_and_resumes(tmp_path):
    run_dir = tmp_path / "run"
    args = ["--language", "L3", "--depth", "1", "--posenc", "rope", "--d-model", "16",
            "--n-heads", "2", "--d-ff", "32", "--train-bin", "6:12", "--test-bins", "13:20,21:30",
            "--n-train", "60", "--n-test", "10", "--epochs", "2", "--seed", "1",
            "--device", "cpu", "--no-progress", "-o", run_dir]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "13:20" in result.output and "21:30" in result.output
    config = json.loads((run_dir / "config.json").read_text())
    assert config["posenc"] == "rope" and config["test_bins"] == [[13, 20], [21, 30]]
    assert set(json.loads((run_dir / "results.json").read_text())["bins"]) == {"13:20", "21:30"}
    again = invoke(*args)
    assert again.exit_code == 2 and "--resume" in again.output
    resumed = invoke("--resume", run_dir, "--json")
    assert resumed.exit_code == 0
    assert json.loads(resumed.output) == json.loads((run_dir / "results.json").read_text())
    assert invoke("--resume", run_dir, "--depth", "3").exit_code == 2


def test_cli_program_defined_language(tmp_path):
    result = invoke("--language", "examples/L3.crasp", "--depth", "1", "--d-model", "16",
                    "--n-heads", "2", "--d-ff", "32", "--train-bin", "6:12", "--test-bins",
                    "13:20", "--n-train", "40", "--n-test", "10", "--epochs", "1",
                    "--device", "cpu", "--no-progress", "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    assert "13:20" in result.output


def test_cli_cuda_when_absent(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    result = invoke("--device", "cuda", "-o", tmp_path / "run")
    assert result.exit_code == 2 and "CUDA is not available" in result.output


# A stop asked for after the loop last checks for one (the last epoch's validation, the scoring
# of the test bins) must neither be lost nor cost the finished run: the run writes its results,
# and a sweep running cells in its own process stops before its next cell.
LATE_MOMENTS = ("last metrics line", "improvement scoring", "final scoring")


def _signal_at(moment: str, signum: int, monkeypatch) -> None:
    """Sends ``signum`` once, at ``moment`` of a one-epoch run: all come after its last step."""
    from crasp.train import loop

    owner, name = {"last metrics line": (run_files, "append_metrics"),
                   "improvement scoring": (loop._Trainer, "_test_bins"),
                   "final scoring": (loop._Trainer, "finish")}[moment]
    original = getattr(owner, name)
    sent = []

    def signal_once(*args, **kwargs):
        if not sent:
            sent.append(signum)
            os.kill(os.getpid(), signum)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, signal_once)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("moment", LATE_MOMENTS)
def test_a_late_stop_reaches_a_sweep_after_the_run_finishes(moment, signum, tmp_path,
                                                            monkeypatch):
    from crasp.train.sweep import SweepSpec, enumerate_cells, run_sweep
    from test_sweep_fakes import FakeConfig, fake_resolve

    cells = enumerate_cells(SweepSpec(depths=[2], languages=["L4"], posencs=["nope"],
                                      seeds=[0, 1], grid={}),
                            resolve=fake_resolve, config_cls=FakeConfig)

    def train_tiny(config, run_dir, progress=False, resume=True):
        return train(tiny(epochs=1, seed=config.seed), run_dir, progress=progress,
                     resume=resume)

    _signal_at(moment, signum, monkeypatch)
    previous = signal.getsignal(signum)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cells, tmp_path, train_fn=train_tiny, progress=False)
    first, second = (tmp_path / "cells" / cell.id for cell in cells)
    assert json.loads((first / "results.json").read_text())["epochs"] == 1
    assert not (second / "config.json").exists()   # the next cell never started
    assert signal.getsignal(signum) == previous
    session = json.loads(next((tmp_path / "sessions").glob("*.json")).read_text())
    assert session["interrupted"] and session["ran"] == 1


@pytest.mark.parametrize("moment", LATE_MOMENTS)
def test_a_late_stop_without_a_sweep_keeps_the_finished_run(moment, tmp_path, monkeypatch):
    _signal_at(moment, signal.SIGINT, monkeypatch)
    results = train(tiny(epochs=1), tmp_path, resume=False)
    assert results["epochs"] == 1 and (tmp_path / "results.json").is_file()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("ending", ["finished", "interrupted", "failed"])
def test_training_leaves_the_process_its_own_thread_count(ending, tmp_path, monkeypatch):
    """``threads`` is the run's: a finished, interrupted or failing run gives the process the
    thread count it had back (a notebook that trains at threads=1 goes on at its own)."""
    def stop(path, line):
        if ending == "interrupted":
            raise TrainingInterrupted(path, 1)
        raise OSError("disk full")
    if ending != "finished":
        monkeypatch.setattr(run_files, "append_metrics", stop)
    torch.set_num_threads(2)
    try:
        if ending == "finished":
            train(tiny(epochs=1, threads=1), tmp_path, resume=False)
        else:
            with pytest.raises((TrainingInterrupted, OSError)):
                train(tiny(epochs=1, threads=1), tmp_path, resume=False)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)
