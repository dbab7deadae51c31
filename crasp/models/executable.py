"""What every kind of model that crasp runs shares: the object the executor runs, and through it
the vocabulary, the layer count and the decisions (``crasp.compiler.execute``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crasp.api_inputs import Inputs

if TYPE_CHECKING:
    from crasp.compiler.executor import ModelEvaluation


@dataclass(frozen=True)
class ExecutableModel:
    """``executable`` is what ``crasp.compiler.execute`` runs: a ``CompiledModel`` or the
    ``Checkpoint`` of the trainer's model class; both hold ``config["vocab"]`` and
    ``n_layers``."""

    path: str
    executable: Any

    @property
    def vocab(self) -> tuple[str, ...]:
        return tuple(self.executable.config["vocab"])

    @property
    def n_layers(self) -> int:
        return self.executable.n_layers

    def predict(self, inputs: Inputs) -> ModelEvaluation:
        from crasp.compiler.executor import execute  # torch

        return execute(self.executable, inputs)

    def layers_and_vocabulary(self) -> str:
        """For ``describe``: "2 layers, vocabulary ( )"."""
        return (f"{self.n_layers} layer{'s' * (self.n_layers != 1)}, vocabulary "
                f"{' '.join(self.vocab)}")
