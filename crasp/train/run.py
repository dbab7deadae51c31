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
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crasp import PROGRAM_SUFFIXES
from crasp.train.config import TrainConfig
from crasp.train.results import RESULTS_FILE
from crasp.util.atomic import write_bytes_atomic, write_text_atomic

if TYPE_CHECKING:
    import torch

CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.jsonl"
BEST_FILE = "best.safetensors"
LAST_FILE = "last.safetensors"
STATE_FILE = "state.pt"
RUN_FILES = (CONFIG_FILE, METRICS_FILE, BEST_FILE, LAST_FILE, STATE_FILE, RESULTS_FILE)
FORMAT_MODEL_DIR = "model"
"""A finished ``--precision`` run's best weights as a model-format directory (config.json,
model.safetensors: ``crasp.train.fixed_precision.format_model``), beside the run's files."""


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by ``train`` after SIGINT/SIGTERM, once the run directory is resumable."""

    def __init__(self, run_dir: Path, epoch: int):
        super().__init__(f"training interrupted; resume with --resume {run_dir}")
        self.run_dir = run_dir
        self.epoch = epoch


def _slug(text: str) -> str:
    stem = Path(text).stem if text.endswith(PROGRAM_SUFFIXES) else text
    return re.sub(r"[^A-Za-z0-9_.]+", "_", stem).strip("_") or "run"


def default_run_dir(config: TrainConfig) -> Path:
    """Where ``crasp train`` (and ``crasp.train.train``) write a run not given a directory."""
    return Path("runs") / f"{_slug(config.language)}-d{config.depth}-{config.posenc}-s{config.seed}"


def write_json(path: Path, value: Any) -> None:
    write_text_atomic(path, json.dumps(value, indent=2) + "\n")


def read_json(path: Path) -> Any:
    """A run file's JSON, read by ``crasp.util.safe_read`` (a regular file, bounded size and
    depth)."""
    from crasp.util.safe_read import read_json_file

    return read_json_file(path)


def save_weights(path: Path, model: torch.nn.Module, metadata: dict[str, Any]) -> None:
    """Write the model's weights (cloned, contiguous, CPU) as safetensors, atomically."""
    from safetensors.torch import save

    tensors = {name: value.detach().to("cpu", copy=True).contiguous()
               for name, value in model.state_dict().items()}
    write_bytes_atomic(path, save(tensors,
                                  metadata={k: json.dumps(v) for k, v in metadata.items()}))


MAX_WEIGHTS_BYTES = 8 << 30


def load_weights(path: Path, model: torch.nn.Module) -> None:
    """Load the safetensors file ``path`` into ``model`` (every tensor, exact shapes). A file
    that is missing, not a regular file, too large, truncated, corrupt or made for another
    architecture is a ``CraspError`` naming it."""
    from crasp.errors import CraspError
    from crasp.util.safe_read import read_bytes_file
    from safetensors.torch import load

    data = read_bytes_file(path, MAX_WEIGHTS_BYTES)
    try:
        model.load_state_dict(load(data), strict=True)
    except Exception as error:  # safetensors' own error type, or load_state_dict's RuntimeError
        first = " ".join(str(error).split())[:300] or type(error).__name__
        raise CraspError(f"{path}: not the weights of this run (truncated, corrupt or from "
                         f"another architecture): {first}") from None


def check_finite(weights: dict[str, torch.Tensor], where: str) -> None:
    """Every reader of a model's weights calls this: a NaN or an infinity would run (and
    export) without a word, answering from garbage. Raises ``CraspError`` naming the tensor
    (the fixed-precision format refuses the same, ``crasp.compiler.model_format.validate``)."""
    import torch

    from crasp.errors import CraspError

    for name, tensor in weights.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CraspError(f"{where}: tensor {name!r} has non-finite values (NaN or "
                             f"infinity); a model's weights must be finite numbers")


def save_state(path: Path, state: dict[str, Any]) -> None:
    import torch

    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_bytes_atomic(path, buffer.getvalue())


MAX_STATE_BYTES = 4 << 30
STATE_SCHEMA = {"version": (int,), "trial": (int,), "epoch": (int,), "step": (int,),
                "history": (list,), "trial_summaries": (list,), "best": (dict, type(None)),
                "trial_best": (dict, type(None)), "since_improvement": (int,),
                "elapsed": (float, int), "done": (bool,)}
STATE_TENSORS = ("model", "optimizer", "scheduler", "rng")


def load_state(path: Path) -> dict[str, Any]:
    """The resume state in ``path``: a regular file within the size limit, loaded with
    ``weights_only=True`` (no code runs), holding every key of ``STATE_SCHEMA`` with exactly
    that type; anything else is a ``CraspError`` naming the file."""
    import torch

    from crasp.errors import CraspError
    from crasp.util.safe_read import read_bytes_file

    data = read_bytes_file(path, MAX_STATE_BYTES)
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols it then refuses
            warnings.simplefilter("ignore", UserWarning)
            state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # truncated, random, or holding objects weights_only refuses
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise CraspError(f"{path} is not a crasp resume state (truncated, corrupt, or holding "
                         f"objects other than tensors and plain data, which are never "
                         f"loaded): {type(error).__name__}: {first_line[:200]}") from None
    problems = _state_problems(state)
    if problems:
        raise CraspError(f"{path} is not a crasp resume state: {problems}; start over with "
                         f"--force")
    return state


def _state_problems(state: Any) -> str:
    if not isinstance(state, dict):
        return f"it holds {type(state).__name__}, not a dict"
    for key, types in STATE_SCHEMA.items():
        if key not in state:
            return f"missing key {key!r}"
        if type(state[key]) not in types:
            return f"{key!r} is {type(state[key]).__name__}, expected {types[0].__name__}"
        if types == (int,) and state[key] < 0:
            return f"{key!r} is negative"
    if state["epoch"] > 0:
        missing = [key for key in STATE_TENSORS if not isinstance(state.get(key), dict)]
        if missing:
            return f"missing {', '.join(missing)} for resuming mid-trial"
    return ""


def write_metrics(path: Path, history: list[dict[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(line) + "\n" for line in history))


def append_metrics(path: Path, line: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")
