"""What the two kinds of checkpoint of the trainer's model class share (``crasp.train.checkpoint``
reads both): a ``CausalTransformer`` with its vocabulary, run in its own dtype."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from crasp.api_inputs import Inputs

if TYPE_CHECKING:
    from crasp.compiler.executor import ModelEvaluation
    from crasp.train.checkpoint import Checkpoint


@dataclass(frozen=True)
class TrainerCheckpoint:
    """``executable`` is the ``Checkpoint``, which ``crasp.compiler.execute`` runs."""

    path: str
    executable: Checkpoint

    @classmethod
    def load(cls, path: str) -> TrainerCheckpoint:
        from crasp.train.checkpoint import load_checkpoint  # torch

        return cls(path, load_checkpoint(path))

    @property
    def vocab(self) -> tuple[str, ...]:
        return tuple(self.executable.config["vocab"])

    @property
    def n_layers(self) -> int:
        return self.executable.n_layers

    def predict(self, inputs: Inputs) -> ModelEvaluation:
        from crasp.compiler.executor import execute

        return execute(self.executable, inputs)

    def shape(self) -> str:
        """Layers, vocabulary, parameters and dtype, for ``describe``."""
        return (f"{self.n_layers} layer{'s' * (self.n_layers != 1)}, vocabulary "
                f"{' '.join(self.vocab)}, {self.executable.params:,} parameters in "
                f"{self.executable.config['dtype']}")
