"""The outcome of one training run, ``RUN/results.json``: written and read here, and nowhere else.

The trainer (``crasp.train.loop``) builds a ``RunResults`` and writes it; the sweep counts its
successes and shows the longest bin's score; the report reads every cell's; the test fakes
write theirs through it, so their files cannot drift from the trainer's shape.

The JSON format: an object with the keys below in this order, a key left out where its value
is None (older runs and the fakes lack most of them; the trainer writes all of them), then any
keys this module does not know, kept as they were (``extra``). ``bins`` maps each test bin's
name (``"351:400"``, ``"351:400@skewed"``) to its scores.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from crasp.util.atomic import write_text_atomic
from crasp.errors import CraspError
from crasp.languages import datasets
from crasp.train.config import LARGEST
from crasp.util.json_shape import (ANY, BOOLEAN, FINITE, INTEGER, NUMBER, STRING, Count, ListOf,
                                   MapOf, Object, OrNull, mismatch)

RESULTS_FILE = "results.json"
EPOCHS = Count(LARGEST["epochs"])
"""An epoch count or number, at most the trainer's own limit: the report loops over the budgets
up to the most epochs a run trained (``crasp.train.budget``), so an absurd count is refused,
never looped over."""

BIN_SHAPE = Object({"exact_match": OrNull(FINITE), "token_accuracy": OrNull(FINITE),
                    "n": OrNull(INTEGER), "loss": OrNull(NUMBER)})
TRIAL_SHAPE = Object({"overrides": OrNull(MapOf(ANY)), "epochs": OrNull(EPOCHS),
                      "val_exact_match": OrNull(FINITE), "stopped": OrNull(STRING)})
IMPROVEMENT_SHAPE = Object(  # crasp.train.budget's records
    {"trial": OrNull(INTEGER), "epoch": EPOCHS, "step": OrNull(INTEGER),
     "val_key": ListOf(FINITE), "val_exact_match": FINITE, "val_token_accuracy": OrNull(FINITE),
     "bins": MapOf(BIN_SHAPE)},
    required=frozenset({"epoch", "val_key", "val_exact_match", "bins"}))
RESULTS_SHAPE = Object({
    "bins": MapOf(BIN_SHAPE), "val_exact_match": OrNull(FINITE),
    "val_token_accuracy": OrNull(FINITE), "val_n": OrNull(INTEGER), "success": BOOLEAN,
    "epochs": OrNull(EPOCHS), "best_epoch": OrNull(EPOCHS), "stopped": OrNull(STRING),
    "total_epochs": OrNull(INTEGER), "best_trial": OrNull(INTEGER),
    "selected": OrNull(MapOf(ANY)), "trials": OrNull(ListOf(TRIAL_SHAPE)),
    "search_trial": OrNull(INTEGER), "assembled_from": OrNull(ListOf(ANY)),
    "improvements": OrNull(ListOf(IMPROVEMENT_SHAPE)), "wall_time_s": OrNull(FINITE),
    "train_time_s": OrNull(FINITE), "eval_time_s": OrNull(FINITE), "n_params": OrNull(INTEGER),
    "language": OrNull(MapOf(ANY)), "data": OrNull(Object({"vocab": OrNull(ListOf(STRING))})),
    "environment": OrNull(Object({"code": OrNull(STRING)})),
    "config": OrNull(Object({"epochs": OrNull(EPOCHS),
                             "search": OrNull(ListOf(MapOf(ANY)))}))})
"""What ``RunResults.from_json`` accepts: every field's type, and inside the nested records the
keys that readers index (the report, the budget view, a checkpoint's vocabulary)."""


class ResultsFormatError(CraspError, ValueError):
    """A results.json that is not shaped as the module docstring says (a ``ValueError`` too,
    so readers that skip unreadable JSON skip it as well)."""


@dataclass(frozen=True)
class BinScore:
    """One test bin's scores: exact strings, right positions, strings scored, mean loss."""

    exact_match: float | None = None
    token_accuracy: float | None = None
    n: int | None = None
    loss: float | None = None

    @classmethod
    def from_json(cls, value: Any, where: str) -> BinScore:
        if not isinstance(value, Mapping):
            raise ResultsFormatError(f"{where}: a bin's scores must be an object")
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value[key] for key in known if key in value})

    def to_json(self) -> dict:
        return {key: value for key, value in dataclasses.asdict(self).items() if value is not None}


@dataclass(frozen=True)
class RunResults:
    bins: dict[str, BinScore] = field(default_factory=dict)
    val_exact_match: float | None = None
    val_token_accuracy: float | None = None
    val_n: int | None = None
    success: bool = False            # 100% validation exact match: the paper's criterion
    epochs: int | None = None        # epochs the selected trial trained
    best_epoch: int | None = None    # the epoch of the checkpoint validation selected
    stopped: str | None = None       # why the selected trial stopped
    total_epochs: int | None = None  # summed over the trials of a search
    best_trial: int | None = None
    selected: dict | None = None     # the selected trial's overrides of the config
    trials: list | None = None       # one summary per trial
    search_trial: int | None = None  # a run of one trial of a search alone: that trial
    assembled_from: list | None = None  # a search assembled from one-trial runs: their folders
    improvements: list | None = None  # crasp.train.budget's records
    wall_time_s: float | None = None
    train_time_s: float | None = None
    eval_time_s: float | None = None
    n_params: int | None = None
    language: dict | None = None     # name, expressible, recognition and prediction depth
    data: dict | None = None         # the data's settings and vocabulary
    environment: dict | None = None  # device, threads, torch and Python versions
    config: dict | None = None       # the run's resolved TrainConfig
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, value: Any, where: str = RESULTS_FILE) -> RunResults:
        """Raise ``ResultsFormatError`` naming ``where`` unless ``value`` has the shape above."""
        if not isinstance(value, Mapping):
            raise ResultsFormatError(f"{where}: results must be a JSON object")
        bins = value.get("bins", {})
        if not isinstance(bins, Mapping):
            raise ResultsFormatError(f"{where}: 'bins' must map bin names to scores")
        bins = {str(name): BinScore.from_json(scores, f"{where}: bin {name}")
                for name, scores in bins.items()}
        problem = mismatch(dict(value), RESULTS_SHAPE)
        if problem:
            raise ResultsFormatError(f"{where}: {problem}")
        known = {f.name for f in dataclasses.fields(cls)} - {"bins", "extra"}
        return cls(bins=bins, **{key: value[key] for key in known if key in value},
                   extra={key: item for key, item in value.items()
                          if key not in known and key != "bins"})

    def to_json(self) -> dict:
        text = {"bins": {name: score.to_json() for name, score in self.bins.items()}}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name not in ("bins", "extra") and value is not None:
                text[item.name] = value
        return {**text, **self.extra}

    def write(self, run_dir: str | Path) -> None:
        """``RUN/results.json``, atomically (a sweep counts a cell done once it exists)."""
        import json

        write_text_atomic(Path(run_dir) / RESULTS_FILE, json.dumps(self.to_json(), indent=2) + "\n")

    @classmethod
    def read(cls, run_dir: str | Path) -> RunResults:
        """A run's results; a ``CraspError`` saying why when missing, unreadable or malformed."""
        from crasp.util.safe_read import read_json_file

        path = Path(run_dir) / RESULTS_FILE
        return cls.from_json(read_json_file(path), str(path))

    @property
    def long_bin(self) -> str | None:
        """The uniform test bin with the largest upper end (then lower end): the length
        generalization the report judges by."""
        best, best_name = None, None
        for name in self.bins:
            bounds = parse_bin(name)
            if bounds is not None and (best is None or bounds[::-1] > best[::-1]):
                best, best_name = bounds, name
        return best_name

    @property
    def long_exact_match(self) -> float | None:
        name = self.long_bin
        value = None if name is None else self.bins[name].exact_match
        return None if value is None else float(value)


def parse_bin(name: str) -> tuple[int, int] | None:
    """``"351:400"`` -> (351, 400); None for a bin drawn from a named distribution or a
    name that is not a bin."""
    if "@" in str(name):
        return None
    try:
        return datasets.parse_bin(name)
    except CraspError:
        return None
