"""Training causal transformers on counting languages (``crasp train``).

Public API (``crasp.train.api``; walked through in ``docs/api.md``)::

    from crasp.train import resolve_preset, train, load_run, train_sweep, load_sweep
    config = resolve_preset("default", depth=3, posenc="rope", language="L5", seed=0)
    result = train(config, "runs/L5-d3-rope-s0")      # TrainResult: model, config, vocab, metrics
    result = load_run("runs/L5-d3-rope-s0")            # the same, for a finished run
    train_sweep("runs/sweep", depths="1:3", languages="L3:L5", posenc="nope,rope", seeds=3)
    table = load_sweep("runs/sweep")                   # pandas DataFrame, one row per cell x bin

``TrainConfig`` and ``resolve_preset`` need no torch; ``train`` (and the model modules) import
it on first use, so ``import crasp.train`` stays cheap for tools such as the sweep planner.
``crasp.train.loop.train`` is the underlying loop (returns the ``results.json`` dict).

The pipeline, one module (or package) per step::

    config (presets, posenc)   the TrainConfig: every field once, with its type and help
    field_text                 text -> a field's value, for --FIELD, --set and --grid
    batching, metrics          language -> encoded splits; predictions -> exact match, accuracy
    model (posenc, init)       the causal transformer, from scratch or from a checkpoint
    loop (run, checkpoint)     training with resumable checkpoints in a run directory
    results                    RUN/results.json: RunResults, written and read only there
    budget                     the run read at a smaller budget, from its improvement records
    sweep/                     axes -> cells -> directory records -> worker pool (+ lock, cli)
    report/                    loading -> reference programs -> aggregate -> markdown, plots
    analysis/                  effective depth, attention paths, Hessians of trained runs
"""

from __future__ import annotations

from typing import Any

from crasp.languages.datasets import format_bin as bin_name
from crasp.languages.datasets import parse_bin
from crasp.train.config import TrainConfig
from crasp.train.presets import PRESETS, preset_names, resolve_preset

__all__ = ["TrainConfig", "resolve_preset", "train", "PRESETS", "preset_names", "parse_bin",
           "bin_name", "TrainingInterrupted", "check_config", "TrainResult", "load_run",
           "train_sweep", "load_sweep"]

_API = ("train", "TrainResult", "load_run", "train_sweep", "load_sweep")


def __getattr__(name: str) -> Any:
    if name in _API:
        from crasp.train import api
        return getattr(api, name)
    if name == "check_config":
        from crasp.train import loop
        return loop.check_config
    if name == "TrainingInterrupted":
        from crasp.train.run import TrainingInterrupted
        return TrainingInterrupted
    raise AttributeError(f"module 'crasp.train' has no attribute {name!r}")
