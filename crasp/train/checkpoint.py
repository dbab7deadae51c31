"""Checkpoints of the trainer's model class: trained runs and compiled float realizations.

A checkpoint directory is a run directory (``run.py``)::

    DIR/config.json          the TrainConfig of the architecture (norm, posenc, depth, widths)
    DIR/best.safetensors     the weights of ``CausalTransformer``, under its own tensor names
    DIR/model.json           (float realizations) vocab, per-layer hidden widths, residual
                             labels, dtype, certified length, gain, program hash
    DIR/results.json         (trained runs) holds the vocabulary under data.vocab

``save_float_realization`` writes a compiled program's float realization (``float_realize``)
in this format: the realization's tensors (``docs/model-format.md`` names) map one to one onto
the class's parameters. The model has one head, so the head width is d_model: the value and
output projections are the realization's, padded with zero rows and columns (q = k = 0, so the
attention stays uniform whatever the width). Embedding row V + 1 (padding) is zero.
``load_checkpoint`` reads either kind back as a ``Checkpoint``, which ``crasp.compiler.execute``
runs like any model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save

from crasp.compiler.float_realize import FloatRealization
from crasp.compiler.model_config import (
    ATTENTION_PARTS, EMBED, OUT_BIAS, OUT_WEIGHT, attention, ffn,
)
from crasp.compiler.model_format import ModelFormatError
from crasp.errors import CraspError
from crasp.outputs import FLOAT_REALIZATION, replace_directory
from crasp.train import run as files
from crasp.train.config import TrainConfig
from crasp.train.model import CausalTransformer

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
    def params(self) -> int:
        return sum(p.numel() for p in self.module.parameters())

    def scores(self, ids: np.ndarray) -> np.ndarray:
        """Logits [B, T + 1] for token ids [B, T + 1] with BOS (id len(vocab)) in column 0."""
        with torch.inference_mode():
            return self.module(torch.as_tensor(ids)).double().numpy()


def architecture_config(realization: FloatRealization, name: str) -> TrainConfig:
    widths = realization.ffn_widths
    if not widths:
        raise CraspError("a program of depth 0 compiles to no layers, and the trainer's model "
                         "class has at least one: use --target exact for it")
    return TrainConfig(language=name, depth=len(widths), posenc="nope",
                       d_model=len(realization.residual_labels), n_heads=1,
                       d_ff=max(w for layer in widths for w in layer), norm="none",
                       activation="relu", dropout=0.0).validate()


def state_dict(realization: FloatRealization) -> dict[str, torch.Tensor]:
    """The realization's tensors under ``CausalTransformer``'s parameter names."""
    t = {name: torch.as_tensor(value, dtype=torch.float64)
         for name, value in realization.tensors.items()}
    d = len(realization.residual_labels)
    # The trainer's table: the tokens, BOS (id len(vocab)) and PAD (never read). The compiled
    # table's row after BOS is the other-token row of the exact format, which a checkpoint has
    # no use for: its inputs are over the vocabulary (execute refuses other tokens).
    token_rows = len(realization.vocab) + 1
    embed = torch.zeros(token_rows + 1, d, dtype=torch.float64)
    embed[:token_rows] = t[EMBED][:token_rows]
    state = {"embed.weight": embed, "head.weight": t[OUT_WEIGHT][None, :],
             "head.bias": t[OUT_BIAS].reshape(1)}
    for layer, widths in enumerate(realization.ffn_widths):
        target = f"layers.{layer}"  # the module's parameter path (crasp.train.model)
        for part in ATTENTION_PARTS:
            square = torch.zeros(d, d, dtype=torch.float64)
            weight = t[attention(layer, part)]
            square[:weight.shape[0], :weight.shape[1]] = weight
            state[f"{target}.attn.{part}.weight"] = square
            state[f"{target}.attn.{part}.bias"] = torch.zeros(d, dtype=torch.float64)
        names = (["up"] + [f"hidden.{k}" for k in range(len(widths) - 1)] + ["down"])
        for m, name in enumerate(names):
            for kind in ("weight", "bias"):
                state[f"{target}.ff.{name}.{kind}"] = t[ffn(layer, m, kind)]
    return state


def save_float_realization(directory: str | Path, realization: FloatRealization, name: str,
                           program_sha256: str, force: bool = False) -> None:
    """Write the checkpoint directory atomically (``crasp.outputs.replace_directory``): the
    place must be absent or empty, or, with ``force``, hold a float realization, which is then
    replaced; anything else is refused."""
    config = architecture_config(realization, name)
    dtype = DTYPES[realization.dtype]
    tensors = {k: v.to(dtype).contiguous() for k, v in state_dict(realization).items()}
    architecture = {
        "kind": KIND, "vocab": realization.vocab, "ffn_widths": realization.ffn_widths,
        "dtype": realization.dtype, "certified_length": realization.certified_length,
        "largest_certifiable": realization.largest_certifiable, "gain": realization.gain,
        "largest_value": realization.largest_value, "program_sha256": program_sha256,
        "residual_labels": realization.residual_labels, "gadgets": realization.style,
    }

    def write(staging: Path) -> None:
        files.write_json(staging / files.CONFIG_FILE, config.to_dict())
        files.write_json(staging / ARCHITECTURE_FILE, architecture)
        (staging / files.BEST_FILE).write_bytes(save(tensors, metadata={"format": KIND}))

    replace_directory(directory, FLOAT_REALIZATION, force, write)


def _read_json(path: Path, where: str):
    try:
        return files.read_json(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelFormatError(f"{where}: cannot read {path.name} ({error})") from None


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
        vocab, widths = architecture.get("vocab"), architecture.get("ffn_widths")
        kind, dtype = "compiled-float", architecture.get("dtype")
        if dtype not in DTYPES:
            raise ModelFormatError(f"{where}/{ARCHITECTURE_FILE}: 'dtype' must be one of "
                                   f"{', '.join(DTYPES)}, got {dtype!r}")
    else:
        results = path / files.RESULTS_FILE
        if not results.is_file():
            raise ModelFormatError(f"{where}/{files.RESULTS_FILE} is missing: the run has not "
                                   f"finished, so its vocabulary is not recorded")
        recorded = _read_json(results, where)
        vocab = (recorded.get("data") or {}).get("vocab")
        # a search's best trial may differ from config.json: results.json names its overrides
        config = config.replace(**(recorded.get("selected") or {}), search=None)
        architecture, widths, kind, dtype = {}, None, "trained", "float32"
    if not isinstance(vocab, list) or not all(isinstance(token, str) for token in vocab):
        raise ModelFormatError(f"{where}: no vocabulary (a list of token strings) recorded")
    module = CausalTransformer(config, len(vocab), config.max_length() + 1,
                               widths or config.ffn_widths)
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
    return Checkpoint(module, {**architecture, "vocab": vocab, "bos_id": len(vocab),
                               "n_layers": config.depth,
                               "kind": kind, "dtype": dtype, "train_config": config.to_dict()})
