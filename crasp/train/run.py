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
from crasp.train.results import IMPROVEMENT_SHAPE, RESULTS_FILE
from crasp.util.json_shape import (ANY, BOOLEAN, FINITE, INTEGER, NUMBER, STRING, ListOf, MapOf,
                                   Object, OrNull, mismatch)
from crasp.util.atomic import write_bytes_atomic, write_text_atomic
from crasp.util.safetensors_bytes import stable

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
    write_bytes_atomic(path, stable(save(
        tensors, metadata={k: json.dumps(v) for k, v in metadata.items()})))


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


def selected_config(config: Any, best_trial: Any, where: Path) -> TrainConfig:
    """The config of the weights a finished run kept: trial ``best_trial`` (null: 0) of
    results.json's ``config``, validated. Raises ``CraspError`` naming ``where`` (results.json)
    for a config that is not one or a trial outside its search."""
    from crasp.errors import CraspError

    trial = best_trial or 0
    try:
        trials = TrainConfig.from_dict(config).validate().trials()
    except CraspError as error:  # the config's own checks do not name the file
        raise CraspError(f"{where}: config: {error}") from None
    if not (isinstance(trial, int) and 0 <= trial < len(trials)):
        raise CraspError(f"{where}: best_trial {trial} is not one of the {len(trials)} trials "
                         f"of its config")
    return trials[trial]


def selected_model(run_dir: Path, config: TrainConfig, vocab_size: int) -> torch.nn.Module:
    """A finished run's kept model, as the trainer built it (``build_model`` of the selected
    trial's ``config``: the format's fixed-precision class for a ``--precision`` run), with its
    best weights, checked finite, in eval mode."""
    from crasp.train.model import build_model

    model = build_model(config, vocab_size)
    load_weights(run_dir / BEST_FILE, model)
    check_finite(model.state_dict(), str(run_dir / BEST_FILE))
    return model.eval()


def save_state(path: Path, state: dict[str, Any]) -> None:
    import torch

    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_bytes_atomic(path, buffer.getvalue())


MAX_STATE_BYTES = 4 << 30
STATE_TENSORS = ("model", "optimizer", "scheduler", "rng")
METRICS_LINE_SHAPE = Object(
    {"trial": INTEGER, "epoch": INTEGER, "step": INTEGER,
     **dict.fromkeys(("lr", "loss", "train_exact_match", "val_exact_match", "val_token_accuracy",
                      "val_loss", "epoch_time_s", "train_time_s", "elapsed_s", "tokens_per_s",
                      "strings_per_s"), NUMBER)},
    required=frozenset({"trial", "epoch"}))
"""A line of ``metrics.jsonl`` as ``crasp.train.loop`` writes it (one per finished epoch)."""
_SCORE = {"epoch": INTEGER, "val_exact_match": FINITE, "val_token_accuracy": FINITE,
          "key": ListOf(FINITE)}
_TRIAL_SUMMARY = {"trial": INTEGER, "epochs": INTEGER, "stopped": STRING, "success": BOOLEAN,
                  "overrides": MapOf(ANY), "best_epoch": OrNull(INTEGER),
                  "val_exact_match": OrNull(FINITE), "val_token_accuracy": OrNull(FINITE)}
STATE_SHAPE = Object(
    {"version": INTEGER, "trial": INTEGER, "epoch": INTEGER, "step": INTEGER,
     "history": ListOf(METRICS_LINE_SHAPE),
     "trial_summaries": ListOf(Object(_TRIAL_SUMMARY, required=frozenset(_TRIAL_SUMMARY))),
     "best": OrNull(Object({**_SCORE, "trial": INTEGER}, required=frozenset({*_SCORE, "trial"}))),
     "trial_best": OrNull(Object(_SCORE, required=frozenset(_SCORE))),
     "since_improvement": INTEGER, "elapsed": FINITE, "done": BOOLEAN,
     "improvements": ListOf(IMPROVEMENT_SHAPE), "only_trial": OrNull(INTEGER)},
    required=frozenset({"version", "trial", "epoch", "step", "history", "trial_summaries",
                        "best", "trial_best", "since_improvement", "elapsed", "done"}))
"""The plain part of ``state.pt`` (everything but ``STATE_TENSORS``), as ``crasp.train.loop``
writes it and reads it back: every key it indexes, with its type."""
START_OVER = "start over (crasp train --force; in a sweep, remove that run's folder)"
_COUNTS = ("trial", "epoch", "step", "since_improvement", "only_trial")


def load_state(path: Path) -> dict[str, Any]:
    """The resume state in ``path``: a regular file within the size limit, loaded with
    ``weights_only=True`` (no code runs), its plain part JSON data of ``STATE_SHAPE`` (tuples
    read as lists) with counts that are not negative; anything else is a ``CraspError`` naming
    the file. The loop checks the state against the run's configuration
    (``crasp.train.loop``)."""
    import torch

    from crasp.errors import CraspError
    from crasp.util.safe_read import read_bytes_file

    data = read_bytes_file(path, MAX_STATE_BYTES)
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols it then refuses
            warnings.simplefilter("ignore", UserWarning)
            state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # truncated, random, or holding objects weights_only refuses
        raise CraspError(f"{path} is not a crasp resume state (truncated, corrupt, or holding "
                         f"objects other than tensors and plain data, which are never "
                         f"loaded): {type(error).__name__}: {first_line(error)}") from None
    state, problem = _plain_state(state)
    if problem:
        raise CraspError(f"{path} is not a crasp resume state: {problem}; {START_OVER}")
    return state


def first_line(error: Exception) -> str:
    """The first line of ``error``'s message, at most 200 characters (``""`` for none)."""
    return (str(error).strip().splitlines() or [""])[0][:200]


def _plain_state(state: Any) -> tuple[dict[str, Any], str]:
    """``state`` with its plain part read as JSON data, and what is wrong with it (``""``)."""
    if not isinstance(state, dict):
        return {}, f"it holds {type(state).__name__}, not a dict"
    plain = {key: value for key, value in state.items() if key not in STATE_TENSORS}
    try:
        plain = json.loads(json.dumps(plain))
    except (TypeError, ValueError, RecursionError):  # a tensor or a deep nest in it
        return {}, "its records hold values other than plain numbers, strings and lists"
    problem = mismatch(plain, STATE_SHAPE)
    if problem:
        return {}, problem
    negative = [key for key in _COUNTS if (plain.get(key) or 0) < 0]
    if negative:
        return {}, f"{negative[0]!r} is negative"
    if plain["epoch"] > 0:
        missing = [key for key in STATE_TENSORS if not isinstance(state.get(key), dict)]
        if missing:
            return {}, f"missing {', '.join(missing)} for resuming mid-trial"
    return {**state, **plain}, ""


def check_state_fits(path: Path, state: dict[str, Any], trials: list[TrainConfig],
                     only_trial: int | None) -> None:
    """Refuse a resume state (of ``STATE_SHAPE``) that does not fit this run: a trial outside
    its search, or not the part's own; more epochs than the trial trains; no best after an
    epoch has run; a finished run whose best trial has no summary. The loop indexes all of
    these, so a damaged state would otherwise fail deep inside it."""
    from crasp.errors import CraspError

    problem = next(_misfits(state, trials, only_trial), None)
    if problem:
        raise CraspError(f"{path} does not fit this run: {problem}; {START_OVER}")


def _misfits(state: dict[str, Any], trials: list[TrainConfig], only_trial: int | None):
    best, summaries, trial = state["best"], state["trial_summaries"], state["trial"]
    places = [("trial", trial)] + ([("best.trial", best["trial"])] if best else []) + [
        (f"trial_summaries[{i}].trial", summary["trial"]) for i, summary in enumerate(summaries)]
    for place, value in places:
        if not 0 <= value < len(trials):
            yield f"{place} is {value}, but the run searches {len(trials)} configuration(s)"
    if only_trial is not None and trial != only_trial:
        yield f"trial is {trial}, but the folder runs trial {only_trial} alone"
    if state["epoch"] > trials[trial].epochs:
        yield f"epoch is {state['epoch']}, but trial {trial} trains {trials[trial].epochs} epochs"
    if best is None and (state["epoch"] > 0 or summaries):
        yield "epochs have run but no best is recorded"
    if state["trial_best"] is None and state["epoch"] > 0:
        yield "epochs of the trial have run but its best is not recorded"
    if state["done"] and all(summary["trial"] != best["trial"] for summary in summaries):
        yield "the run is marked finished but its best trial has no summary"


def write_metrics(path: Path, history: list[dict[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(line) + "\n" for line in history))


def append_metrics(path: Path, line: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")
