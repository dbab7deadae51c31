"""The trained run (``crasp train``): the best weights of a finished run."""

from __future__ import annotations

from typing import ClassVar

from crasp.models.kinds import TRAINED_RUN, Kind
from crasp.models.trainer_checkpoint import TrainerCheckpoint


class TrainedRun(TrainerCheckpoint):
    """A ``CausalTransformer`` trained on a language, with the settings it was trained with."""

    kind: ClassVar[Kind] = TRAINED_RUN

    def describe(self) -> str:
        config = self.executable.config["train_config"]
        return (f"{self.path}: {self.kind.what}: {self.shape()}, {config['language']} with "
                f"{config['posenc']}, seed {config['seed']}")
