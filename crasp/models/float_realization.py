"""The float realization (``crasp compile --target float``; built by ``crasp.realize``)."""

from __future__ import annotations

from typing import ClassVar

from crasp.models.kinds import FLOAT_REALIZATION, Kind
from crasp.models.trainer_checkpoint import TrainerCheckpoint


class FloatRealizationModel(TrainerCheckpoint):
    """A compiled program's float transformer, certified exact up to a length."""

    kind: ClassVar[Kind] = FLOAT_REALIZATION

    def describe(self) -> str:
        config = self.executable.config
        gadgets = config.get("gadgets", "unrecorded")
        return (f"{self.path}: {self.kind.what}: {self.shape()}, {gadgets} gadgets, "
                f"certified exact up to length {config.get('certified_length', 'unrecorded')}")
