"""The fixed-precision model (``crasp compile``): the compiler's ``CompiledModel`` as a model."""

from __future__ import annotations

from typing import ClassVar

from crasp.compiler.model_format import load_model
from crasp.models.executable import ExecutableModel
from crasp.models.kinds import FIXED_PRECISION, Kind


class FixedPrecisionModel(ExecutableModel):
    """A model in the crasp model format (``docs/model-format.md``), run in fixed precision;
    ``executable`` is its ``CompiledModel``, which the decompiler also takes."""

    kind: ClassVar[Kind] = FIXED_PRECISION

    @classmethod
    def load(cls, path: str) -> FixedPrecisionModel:
        return cls(path, load_model(path))

    def describe(self) -> str:
        config = self.executable.config
        return (f"{self.path}: {self.kind.what}, format version {config['version']}: "
                f"{self.layers_and_vocabulary()}, {config['precision']['total_bits']} total and "
                f"{config['precision']['frac_bits']} fractional bits")
