"""Pass: CompiledModel <-> model directory (``config.json`` + ``model.safetensors``).

The format is specified in ``docs/model-format.md``; this module writes it atomically and reads
it back with every check a reader needs: the format name and version, the config's keys and
types, each tensor's presence, shape (derived from the config) and dtype, and finite values.
Every problem is a ``ModelFormatError`` that names the file and what is wrong with it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import safetensors.numpy

from crasp.compiler.model_config import (
    CONFIG_FILE, FORMAT, ModelConfig, ModelFormatError, alibi, expected_shapes,
)
from crasp.util.outputs import COMPILED_MODEL, replace_directory
from crasp.util.safe_read import SafeReadError, parse_json, read_bytes_file
from crasp.util.safetensors_bytes import stable

WEIGHTS_FILE = "model.safetensors"
CHECKPOINT_WEIGHTS_FILE = "best.safetensors"
"""The weights of a trainer's checkpoint (``crasp.train.run.BEST_FILE``), told apart here."""
MAX_CONFIG_BYTES = 16 << 20
MAX_WEIGHTS_BYTES = 8 << 30


@dataclass
class CompiledModel:
    """A transformer in the crasp model format: ``config`` (the JSON object) and ``tensors``
    (name -> numpy array), as in ``docs/model-format.md``."""

    config: dict
    tensors: dict[str, np.ndarray]

    @property
    def spec(self) -> ModelConfig:
        """``config`` read and checked (``ModelFormatError`` if it is not a valid config)."""
        return ModelConfig.from_json(self.config, "the model")

    @property
    def n_layers(self) -> int:
        return self.config["n_layers"]

    @property
    def params(self) -> int:
        return int(sum(tensor.size for tensor in self.tensors.values()))

    def save(self, directory: str | Path, force: bool = False) -> None:
        """Write the model directory atomically (``crasp.util.outputs``): into a temporary
        directory beside it, then renamed into place. An absent or empty place is used; an
        existing crasp model is replaced only with ``force``; anything else is refused."""
        validate(self.config, self.tensors, str(directory))

        def write(staging: Path) -> None:
            _write(staging / CONFIG_FILE, (json.dumps(self.config, indent=2) + "\n").encode())
            _write(staging / WEIGHTS_FILE, stable(safetensors.numpy.save(
                {name: _stored(t) for name, t in self.tensors.items()},
                metadata={"format": FORMAT, "version": str(self.config["version"])})))
        replace_directory(directory, COMPILED_MODEL, force, write)


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _stored(tensor: np.ndarray) -> np.ndarray:
    """float32 when that is exact (always, for compiled models: small integers), else float64."""
    as32 = tensor.astype(np.float32)
    return as32 if np.array_equal(as32, tensor) else tensor.astype(np.float64)


def validate(config: dict, tensors: dict[str, np.ndarray], where: str) -> None:
    """Raise ``ModelFormatError`` unless ``config`` and ``tensors`` form a valid model."""
    spec = ModelConfig.from_json(config, where)
    expected = expected_shapes(spec)
    name = f"{where}/{WEIGHTS_FILE}"
    missing = [n for n in expected if n not in tensors]
    if missing:
        raise ModelFormatError(f"{name}: missing tensor(s) {', '.join(missing)}")
    unexpected = sorted(set(tensors) - set(expected))
    if unexpected:
        raise ModelFormatError(f"{name}: unexpected tensor(s) {', '.join(unexpected)}")
    for key, shape in expected.items():
        tensor = tensors[key]
        if tuple(tensor.shape) != shape:
            raise ModelFormatError(f"{name}: tensor {key!r} has shape {list(tensor.shape)}, but "
                                   f"{CONFIG_FILE} implies {list(shape)}")
        if not np.issubdtype(tensor.dtype, np.floating):
            raise ModelFormatError(f"{name}: tensor {key!r} has dtype {tensor.dtype}, expected "
                                   f"float32 or float64")
        if not np.all(np.isfinite(tensor)):
            raise ModelFormatError(f"{name}: tensor {key!r} has non-finite values")
    for layer in range(spec.n_layers if spec.alibi else 0):
        if (tensors[alibi(layer)] < 0).any():
            raise ModelFormatError(f"{name}: tensor {alibi(layer)!r} has a negative slope (ALiBi "
                                   f"slopes are >= 0)")


def load_model(directory: str | Path) -> CompiledModel:
    """Read and check a fixed-precision model directory (raises ``ModelFormatError``). Every
    kind of model (trained runs and float realizations too) is read by ``crasp.models``.

    >>> import crasp, tempfile
    >>> from crasp.compiler import compile_program
    >>> directory = f"{tempfile.mkdtemp()}/dyck1.model"
    >>> compile_program(crasp.load_program(crasp.example("dyck1"))).save(directory)
    >>> load_model(directory).config["vocab"]
    ['(', ')']
    """
    path = Path(directory)
    where = str(path)
    if (path / CHECKPOINT_WEIGHTS_FILE).is_file():
        raise ModelFormatError(f"{where!r} is a checkpoint of the trainer's model class (a "
                               f"trained run or a float realization), not a fixed-precision "
                               f"model: read it with crasp.models.load_model")
    if not path.exists():
        raise ModelFormatError(f"model directory {where!r} does not exist")
    if not path.is_dir():
        raise ModelFormatError(f"{where!r} is not a directory (a compiled model is a directory "
                               f"holding {CONFIG_FILE} and {WEIGHTS_FILE})")
    try:
        config = parse_json(read_bytes_file(path / CONFIG_FILE, MAX_CONFIG_BYTES),
                            path / CONFIG_FILE)
        weights = read_bytes_file(path / WEIGHTS_FILE, MAX_WEIGHTS_BYTES)
    except SafeReadError as error:
        raise ModelFormatError(f"{error} ({where!r} is not a complete crasp model; write one "
                               f"with: crasp compile PROG -o DIR)") from None
    ModelConfig.from_json(config, where)  # before the weights: a clear error for a bad config
    try:
        tensors = safetensors.numpy.load(weights)
    except Exception as error:  # safetensors raises its own SafetensorError (or others)
        raise ModelFormatError(f"{where}/{WEIGHTS_FILE} is truncated or corrupt: "
                               f"{error}") from None
    validate(config, tensors, where)
    return CompiledModel(config, {n: t.astype(np.float64) for n, t in tensors.items()})
