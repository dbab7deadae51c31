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

from crasp.errors import CraspError
from crasp.outputs import COMPILED_MODEL, replace_directory
from crasp.safe_read import SafeReadError, parse_json, read_bytes_file

FORMAT = "crasp-transformer"
VERSION = 2
READABLE_VERSIONS = (1, 2)
"""Version 2 added the embedding row ``other_id`` for tokens outside the vocabulary; a version 1
model (without it) still loads, and rejects such tokens."""
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
MAX_CONFIG_BYTES = 16 << 20
MAX_WEIGHTS_BYTES = 8 << 30
MIN_TOTAL_BITS, MAX_TOTAL_BITS = 2, 53


class ModelFormatError(CraspError):
    """A model directory that is missing, truncated, or does not match the format."""


@dataclass
class CompiledModel:
    """A transformer in the crasp model format: ``config`` (the JSON object) and ``tensors``
    (name -> numpy array), as in ``docs/model-format.md``."""

    config: dict
    tensors: dict[str, np.ndarray]

    @property
    def n_layers(self) -> int:
        return self.config["n_layers"]

    @property
    def params(self) -> int:
        return int(sum(tensor.size for tensor in self.tensors.values()))

    def save(self, directory: str | Path, force: bool = False) -> None:
        """Write the model directory atomically (``crasp.outputs``): into a temporary
        directory beside it, then renamed into place. An absent or empty place is used; an
        existing crasp model is replaced only with ``force``; anything else is refused."""
        validate(self.config, self.tensors, str(directory))

        def write(staging: Path) -> None:
            _write(staging / CONFIG_FILE, (json.dumps(self.config, indent=2) + "\n").encode())
            _write(staging / WEIGHTS_FILE, safetensors.numpy.save(
                {name: _stored(t) for name, t in self.tensors.items()},
                metadata={"format": FORMAT, "version": str(VERSION)}))
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


# ---------------------------------------------------------------- the schema

def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_config(config, where: str) -> None:
    def fail(message: str):
        raise ModelFormatError(f"{where}/{CONFIG_FILE}: {message}")

    if not isinstance(config, dict):
        fail("is not a JSON object")
    if config.get("format") != FORMAT:
        fail(f"'format' is {config.get('format')!r}, expected {FORMAT!r} (not a crasp model?)")
    if not _is_int(config.get("version")) or config["version"] not in READABLE_VERSIONS:
        fail(f"format version {config.get('version')!r} is not supported (this crasp reads "
             f"versions {', '.join(map(str, READABLE_VERSIONS))})")
    minimum = {"bos_id": 0, "d_model": 1, "n_layers": 0, "n_heads": 0, "d_head": 0, "depth": 0}
    for key, low in minimum.items():
        if key not in config:
            fail(f"missing key {key!r}")
        if not _is_int(config[key]) or config[key] < low:
            fail(f"{key!r} must be an integer >= {low}, got {config[key]!r}")
    for key in ("vocab", "ffn_widths", "residual_labels", "precision", "program_sha256"):
        if key not in config:
            fail(f"missing key {key!r}")
    vocab = config["vocab"]
    if (not isinstance(vocab, list) or not all(isinstance(t, str) and t for t in vocab)
            or len(set(vocab)) != len(vocab)):
        fail("'vocab' must be a list of distinct non-empty token strings")
    if config["bos_id"] != len(vocab):
        fail(f"'bos_id' must be len(vocab) = {len(vocab)} (the row after the tokens), got "
             f"{config['bos_id']}")
    if config["version"] >= 2 and config.get("other_id") != len(vocab) + 1:
        fail(f"'other_id' must be len(vocab) + 1 = {len(vocab) + 1} (the row after BOS), got "
             f"{config.get('other_id')!r}")
    widths = config["ffn_widths"]
    if (not isinstance(widths, list) or len(widths) != config["n_layers"]
            or not all(isinstance(w, list) and w and all(_is_int(x) and x > 0 for x in w)
                       for w in widths)):
        fail(f"'ffn_widths' must hold one non-empty list of positive hidden widths per layer "
             f"({config['n_layers']} layers)")
    labels = config["residual_labels"]
    if not isinstance(labels, list) or len(labels) != config["d_model"]:
        fail(f"'residual_labels' must be a list of d_model = {config['d_model']} strings")
    precision = config["precision"]
    if (not isinstance(precision, dict) or not _is_int(precision.get("total_bits"))
            or not _is_int(precision.get("frac_bits"))
            or not 0 <= precision["frac_bits"] < precision["total_bits"]
            or not MIN_TOTAL_BITS <= precision["total_bits"] <= MAX_TOTAL_BITS):
        fail(f"'precision' must be {{\"total_bits\": p, \"frac_bits\": s}} with 0 <= s < p "
             f"and {MIN_TOTAL_BITS} <= p <= {MAX_TOTAL_BITS}")
    if config["n_layers"] and not config["n_heads"]:
        fail("a model with layers needs 'n_heads' >= 1")


def expected_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor's name and shape, as the config determines them."""
    d, inner = config["d_model"], config["n_heads"] * config["d_head"]
    rows = len(config["vocab"]) + (2 if config["version"] >= 2 else 1)   # tokens, BOS, other
    shapes = {"embed": (rows, d)}
    for layer, widths in enumerate(config["ffn_widths"]):
        prefix = f"layers.{layer}"
        for name in ("q", "k", "v"):
            shapes[f"{prefix}.attn.{name}"] = (inner, d)
        shapes[f"{prefix}.attn.o"] = (d, inner)
        sizes = [d, *widths, d]
        for m in range(len(sizes) - 1):
            shapes[f"{prefix}.ffn.{m}.weight"] = (sizes[m + 1], sizes[m])
            shapes[f"{prefix}.ffn.{m}.bias"] = (sizes[m + 1],)
    shapes["out.weight"], shapes["out.bias"] = (d,), ()
    return shapes


def validate(config: dict, tensors: dict[str, np.ndarray], where: str) -> None:
    """Raise ``ModelFormatError`` unless ``config`` and ``tensors`` form a valid model."""
    _check_config(config, where)
    expected = expected_shapes(config)
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


def load_model(directory: str | Path):
    """Read and check a model directory (raises ``ModelFormatError``): a compiled exact model
    (``CompiledModel``), or a run directory of the trainer's model class (a trained run or a
    float realization: ``crasp.train.checkpoint.Checkpoint``).

    >>> import crasp, tempfile
    >>> from crasp.compiler import compile_program
    >>> directory = f"{tempfile.mkdtemp()}/dyck1.model"
    >>> compile_program(crasp.load_program(crasp.example("dyck1"))).save(directory)
    >>> load_model(directory).config["vocab"]
    ['(', ')']
    """
    path = Path(directory)
    where = str(path)
    if (path / "best.safetensors").is_file():
        from crasp.train.checkpoint import load_checkpoint  # torch: only for checkpoints
        return load_checkpoint(path)
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
    _check_config(config, where)
    try:
        tensors = safetensors.numpy.load(weights)
    except Exception as error:  # safetensors raises its own SafetensorError (or others)
        raise ModelFormatError(f"{where}/{WEIGHTS_FILE} is truncated or corrupt: "
                               f"{error}") from None
    validate(config, tensors, where)
    return CompiledModel(config, {n: t.astype(np.float64) for n, t in tensors.items()})
