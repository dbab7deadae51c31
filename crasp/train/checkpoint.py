"""Reading checkpoints of the trainer's model class: trained runs and compiled float realizations.

A checkpoint directory is a run directory (``run.py``)::

    DIR/config.json          the TrainConfig of the architecture (norm, posenc, depth, widths)
    DIR/best.safetensors     the weights of ``CausalTransformer``, under its own tensor names
    DIR/model.json           (float realizations) vocab, per-layer hidden widths, residual
                             labels, dtype, certified length, gain, program hash
    DIR/results.json         (trained runs) holds the vocabulary under data.vocab

``crasp.realize.checkpoint`` writes a compiled program's float realization in this format;
``load_checkpoint`` reads either kind back as a ``Checkpoint``, which ``crasp.compiler.execute``
runs like any model (``crasp.models`` wraps it in the type of its kind).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

from crasp.compiler.model_config import ModelFormatError
from crasp.errors import CraspError
from crasp.train import run as files
from crasp.train.config import TrainConfig
from crasp.train.model import CausalTransformer
from crasp.util.safe_read import SafeReadError

ARCHITECTURE_FILE = "model.json"
KIND = "crasp-float-realization"
DTYPES = {"float32": torch.float32, "float64": torch.float64}


@dataclass
class Checkpoint:
    """A ``CausalTransformer`` with its vocabulary, ready to run. ``config`` holds at least
    ``vocab``, ``n_layers``, ``kind`` ("trained" or "compiled-float") and ``dtype``."""

    module: CausalTransformer
    config: dict

    @property
    def n_layers(self) -> int:
        return self.config["n_layers"]

    @property
    def max_tokens(self) -> int | None:
        """The longest input it reads: a learned positional table has a row for BOS and for
        each of this many tokens, and no row beyond; None for the position encodings that
        read any length."""
        table = getattr(self.module.pos, "table", None)
        return None if table is None else table.num_embeddings - 1

    @property
    def params(self) -> int:
        return sum(p.numel() for p in self.module.parameters())

    def scores(self, ids: np.ndarray) -> np.ndarray:
        """Logits [B, T + 1] for token ids [B, T + 1] with BOS (id len(vocab)) in column 0."""
        with torch.inference_mode():
            return self.module(torch.as_tensor(ids)).double().numpy()


def _read_json(path: Path, where: str) -> dict:
    """A run file's JSON object (every file of a run or realization holds one)."""
    try:
        value = files.read_json(path)
    except SafeReadError as error:   # it names the file already
        raise ModelFormatError(str(error)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelFormatError(f"{where}: cannot read {path.name} ({error})") from None
    if not isinstance(value, dict):
        raise ModelFormatError(f"{where}/{path.name} must hold a JSON object, not "
                               f"{type(value).__name__ if value is not None else 'null'}")
    return value


def _changed(config: TrainConfig, changes: dict, where: str) -> TrainConfig:
    """``config`` with ``changes`` (a file's own values), checked like config.json."""
    try:
        return config.replace(**changes).validate()
    except CraspError as error:
        raise ModelFormatError(f"{where}: {error}") from None


def load_checkpoint(directory: str | Path) -> Checkpoint:
    """Read a trained run or a float realization (raises ``ModelFormatError``)."""
    path = Path(directory)
    where = str(path)
    try:
        config = TrainConfig.from_dict(_read_json(path / files.CONFIG_FILE, where)).validate()
    except CraspError as error:
        if isinstance(error, ModelFormatError):
            raise
        raise ModelFormatError(f"{where}/{files.CONFIG_FILE}: {error}") from None
    architecture_path = path / ARCHITECTURE_FILE
    if architecture_path.is_file():
        architecture = _read_json(architecture_path, where)
        if not isinstance(architecture, dict) or architecture.get("kind") != KIND:
            raise ModelFormatError(f"{where}/{ARCHITECTURE_FILE}: 'kind' must be {KIND!r}")
        vocab, kind, dtype = architecture.get("vocab"), "compiled-float", architecture.get("dtype")
        if architecture.get("ffn_widths") is not None:  # else config.json's widths
            # the realization's own hidden widths, checked by the trainer config's rule
            config = _changed(config, {"ffn_widths": architecture["ffn_widths"]},
                              f"{where}/{ARCHITECTURE_FILE}")
        if not isinstance(dtype, str) or dtype not in DTYPES:
            raise ModelFormatError(f"{where}/{ARCHITECTURE_FILE}: 'dtype' must be one of "
                                   f"{', '.join(DTYPES)}, got {dtype!r}")
    else:
        results = path / files.RESULTS_FILE
        if not results.is_file():
            raise ModelFormatError(f"{where}/{files.RESULTS_FILE} is missing: the run has not "
                                   f"finished, so its vocabulary is not recorded; crasp train "
                                   f"--resume {where} finishes it")
        recorded = _read_json(results, where)
        data, selected = recorded.get("data"), recorded.get("selected") or {}
        vocab = data.get("vocab") if isinstance(data, dict) else None
        if not isinstance(selected, dict):
            raise ModelFormatError(f"{where}/{files.RESULTS_FILE}: 'selected' must be a JSON "
                                   f"object of config overrides, got {selected!r}")
        # a search's best trial may differ from config.json: results.json names its overrides
        config = _changed(config, {**selected, "search": None}, f"{where}/{files.RESULTS_FILE}")
        if config.precision is not None:  # its files would not fit this float model
            raise ModelFormatError(
                f"{where} is a finished --precision run without its format model "
                f"({where}/{files.FORMAT_MODEL_DIR}); crasp train --resume {where} writes it "
                f"again from the run's best weights")
        architecture, kind, dtype = {}, "trained", "float32"
    if not isinstance(vocab, list) or not all(isinstance(token, str) for token in vocab):
        raise ModelFormatError(f"{where}: no vocabulary (a list of token strings) recorded")
    if len(set(vocab)) != len(vocab):
        raise ModelFormatError(f"{where}: the vocabulary repeats a token")
    certified = architecture.get("certified_length", 0)
    if not isinstance(certified, int) or isinstance(certified, bool) or certified < 0:
        raise ModelFormatError(f"{where}/{ARCHITECTURE_FILE}: 'certified_length' must be an "
                               f"integer >= 0, got {certified!r}")
    module = CausalTransformer(config, len(vocab), config.max_length() + 1, config.ffn_widths)
    module.to(DTYPES[dtype]).eval()  # first: float32 would not hold large gains exactly
    try:
        weights = load_file(str(path / files.BEST_FILE))
        module.load_state_dict(weights, strict=True)
    except FileNotFoundError:
        raise ModelFormatError(f"{where}/{files.BEST_FILE} is missing") from None
    except Exception as error:  # safetensors' own error, or load_state_dict's RuntimeError
        first = " ".join(str(error).split())[:300] or type(error).__name__
        raise ModelFormatError(f"{where}/{files.BEST_FILE} does not fit {files.CONFIG_FILE} "
                               f"(truncated, corrupt or from another architecture): "
                               f"{first}") from None
    files.check_finite(weights, f"{where}/{files.BEST_FILE}")
    return Checkpoint(module, {**architecture, "vocab": vocab, "bos_id": len(vocab),
                               "n_layers": config.depth,
                               "kind": kind, "dtype": dtype, "train_config": config.to_dict()})
