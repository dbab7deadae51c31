"""What the two kinds of checkpoint of the trainer's model class share (``crasp.train.checkpoint``
reads both): a ``CausalTransformer`` with its vocabulary, run in its own dtype."""

from __future__ import annotations

from crasp.models.executable import ExecutableModel


class TrainerCheckpoint(ExecutableModel):
    """``executable`` is the ``Checkpoint``."""

    @classmethod
    def load(cls, path: str) -> TrainerCheckpoint:
        from crasp.train.checkpoint import load_checkpoint  # torch

        return cls(path, load_checkpoint(path))

    def shape(self) -> str:
        """Layers, vocabulary, parameters and dtype, for ``describe``."""
        return (f"{self.layers_and_vocabulary()}, {self.executable.params:,} parameters in "
                f"{self.executable.config['dtype']}")
