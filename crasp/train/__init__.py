"""Training causal transformers on counting languages (``crasp train``).

Public API::

    from crasp.train import TrainConfig, train, resolve_preset
    config = resolve_preset("default", depth=3, posenc="rope", language="L5", seed=0)
    results = train(config, "runs/L5-d3-rope-s0", progress=False, resume=True)

``TrainConfig`` and ``resolve_preset`` need no torch; ``train`` (and the model modules) import
it on first use, so ``import crasp.train`` stays cheap for tools such as the sweep planner.
"""

from __future__ import annotations

from typing import Any

from crasp.languages.datasets import format_bin as bin_name
from crasp.languages.datasets import parse_bin
from crasp.train.config import TrainConfig
from crasp.train.presets import PRESETS, preset_names, resolve_preset

__all__ = ["TrainConfig", "resolve_preset", "train", "PRESETS", "preset_names", "parse_bin",
           "bin_name", "TrainingInterrupted", "check_config"]


def __getattr__(name: str) -> Any:
    if name in ("train", "check_config"):
        from crasp.train import loop
        return getattr(loop, name)
    if name == "TrainingInterrupted":
        from crasp.train.run import TrainingInterrupted
        return TrainingInterrupted
    raise AttributeError(f"module 'crasp.train' has no attribute {name!r}")
