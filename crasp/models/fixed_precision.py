"""The fixed-precision model (``crasp compile``): the compiler's ``CompiledModel`` as a model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from crasp.api_inputs import Inputs
from crasp.compiler.model_format import CompiledModel, load_model
from crasp.models.kinds import FIXED_PRECISION, Kind

if TYPE_CHECKING:
    from crasp.compiler.executor import ModelEvaluation


@dataclass(frozen=True)
class FixedPrecisionModel:
    """A model in the crasp model format (``docs/model-format.md``), run in fixed precision.
    ``executable`` is what ``crasp.compiler.execute`` and the decompiler take."""

    kind: ClassVar[Kind] = FIXED_PRECISION
    path: str
    executable: CompiledModel

    @classmethod
    def load(cls, path: str) -> FixedPrecisionModel:
        return cls(path, load_model(path))

    @property
    def vocab(self) -> tuple[str, ...]:
        return tuple(self.executable.config["vocab"])

    @property
    def n_layers(self) -> int:
        return self.executable.n_layers

    def predict(self, inputs: Inputs) -> ModelEvaluation:
        from crasp.compiler.executor import execute  # torch

        return execute(self.executable, inputs)

    def describe(self) -> str:
        precision = self.executable.config["precision"]
        return (f"{self.path}: {self.kind.what}, format version {self.executable.config['version']}"
                f": {self.n_layers} layer{'s' * (self.n_layers != 1)}, vocabulary "
                f"{' '.join(self.vocab)}, {precision['total_bits']} total and "
                f"{precision['frac_bits']} fractional bits")
