"""The fixed-precision run (``crasp train --precision P.S``): a trained transformer of the model
format's class, read as the format model it wrote beside its run files."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from crasp.compiler.model_format import load_model
from crasp.models.executable import ExecutableModel
from crasp.models.kinds import FIXED_PRECISION_RUN, FORMAT_MODEL_DIR, Kind


class FixedPrecisionRun(ExecutableModel):
    """``executable`` is the run's ``CompiledModel`` (``RUN/model``: R of its best weights,
    which is exactly what the trainer computed with), run and decompiled like any format
    model."""

    kind: ClassVar[Kind] = FIXED_PRECISION_RUN

    @classmethod
    def load(cls, path: str) -> FixedPrecisionRun:
        return cls(path, load_model(Path(path) / FORMAT_MODEL_DIR))

    def describe(self) -> str:
        config = self.executable.config
        trained = config.get("trained") or {}
        precision = config["precision"]
        return (f"{self.path}: {self.kind.what}: {self.layers_and_vocabulary()}, "
                f"{precision['total_bits']} total and {precision['frac_bits']} fractional bits, "
                f"{trained.get('language')} seed {trained.get('seed')}")
