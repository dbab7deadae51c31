"""The run directory: its files and atomic checkpoints.

::

    RUN/config.json          the fully resolved TrainConfig (JSON); --resume reads it back
    RUN/metrics.jsonl        one line per epoch (loss, train/val exact match, time, tokens/s)
    RUN/best.safetensors     the weights with the best validation score so far (a real copy)
    RUN/last.safetensors     the weights at the end of the last finished epoch
    RUN/state.pt             everything needed to resume (model, optimizer, scheduler, RNG
                             states, epoch, best so far, history); removed when the run ends
    RUN/results.json         per-bin exact match and token accuracy, epochs, wall time, ...

Every file is written through a temporary file and a rename, so a kill at any moment leaves
either the previous or the new version. ``state.pt`` is the single source of truth for
resuming; ``metrics.jsonl`` is rewritten from its history on resume.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save

from crasp.atomic import write_bytes_atomic, write_text_atomic

CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.jsonl"
BEST_FILE = "best.safetensors"
LAST_FILE = "last.safetensors"
STATE_FILE = "state.pt"
RESULTS_FILE = "results.json"
RUN_FILES = (CONFIG_FILE, METRICS_FILE, BEST_FILE, LAST_FILE, STATE_FILE, RESULTS_FILE)


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by ``train`` after SIGINT/SIGTERM, once the run directory is resumable."""

    def __init__(self, run_dir: Path, epoch: int):
        super().__init__(f"training interrupted; resume with --resume {run_dir}")
        self.run_dir = run_dir
        self.epoch = epoch


def write_json(path: Path, value: Any) -> None:
    write_text_atomic(path, json.dumps(value, indent=2) + "\n")


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def save_weights(path: Path, model: torch.nn.Module, metadata: dict[str, Any]) -> None:
    """Write the model's weights (cloned, contiguous, CPU) as safetensors, atomically."""
    tensors = {name: value.detach().to("cpu", copy=True).contiguous()
               for name, value in model.state_dict().items()}
    write_bytes_atomic(path, save(tensors, metadata={k: json.dumps(v) for k, v in metadata.items()}))


def load_weights(path: Path, model: torch.nn.Module) -> None:
    model.load_state_dict(load_file(str(path)), strict=True)


def save_state(path: Path, state: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_bytes_atomic(path, buffer.getvalue())


def load_state(path: Path) -> dict[str, Any]:
    return torch.load(path, map_location="cpu", weights_only=True)


def write_metrics(path: Path, history: list[dict[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(line) + "\n" for line in history))


def append_metrics(path: Path, line: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")
