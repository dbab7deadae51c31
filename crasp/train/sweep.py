"""Sweeps: a grid of independent training runs (depth x language x encoding x seed x grid).

A sweep directory looks like this::

    DIR/sweep.json                 the sweep specs (grid, preset, command, cell ids); atomic
    DIR/cells/<id>/cell.json       what the cell is: index, overrides, resolved config; atomic
    DIR/cells/<id>/results.json    written by the trainer when the run ends: the cell is done
    DIR/cells/<id>/error.txt       the traceback of a cell that raised (retried on the next run)
    DIR/sessions/<stamp>.json      one file per ``crasp sweep`` invocation: command, wall time

Cells are enumerated in a fixed order (encoding, language, depth, grid point, seed; each in
the order given on the command line) and numbered from 0. A cell's id is readable and stable:
``<language>-d<depth>-<posenc>-s<seed>-<hash>``, where the hash is the first 10 hex digits of
the SHA-256 of the cell's resolved training config (canonical JSON). So the same cell has the
same directory in every shard and in every re-run, and a change to the resolved config (a new
preset value, a new trainer default) makes a new cell rather than silently reusing an old one.

A cell is done iff ``results.json`` exists in its directory (the trainer writes it atomically,
last). Re-running the same command skips done cells and resumes the others from the trainer's
checkpoints, so a killed sweep loses at most the epochs in flight. ``--shard i/n`` takes the
cells whose index satisfies ``index % n == i``: the shards of one sweep partition its cells.

Workers are ``spawn``-ed processes with one thread each (``OMP_NUM_THREADS=1`` and
``torch.set_num_threads(1)``): on a small CPU, two one-thread processes train about twice as
fast as one two-thread process. Workers ignore SIGINT; the parent turns Ctrl-C (or SIGTERM,
which Slurm sends on preemption or time-out) into terminating its workers, so results already
written stay, and in-flight cells resume from their last checkpoint.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import difflib
import hashlib
import itertools
import json
import multiprocessing
import os
import re
import signal
import socket
import time
import traceback
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from crasp.train.config import architecture_label, identity_fields
from crasp.atomic import write_text_atomic
from crasp.errors import CraspError
from crasp.languages import datasets
from crasp.train.sweep_lock import watch_parent
from crasp.train.progress import progress_bar
from crasp.train.signals import SignalGuard

SWEEP_FILE = "sweep.json"
CELLS_DIR = "cells"
SESSIONS_DIR = "sessions"
CELL_FILE = "cell.json"
RESULTS_FILE = "results.json"
ERROR_FILE = "error.txt"
SWEEP_VERSION = 1

# Cell coordinates come from their own options, never from --grid.
AXES = ("language", "depth", "posenc", "seed")

TrainFn = Callable[..., dict]
Resolver = Callable[..., Any]


# --------------------------------------------------------------------------- parsing

def _split_list(text: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses; drop empty items."""
    items, depth, current = [], 0, []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CraspError(f"{what}: {text!r} is not an integer") from None


def parse_int_range(text: str, what: str = "--depths") -> list[int]:
    """``"1:6"`` -> 1..6 (inclusive), ``"1,3,5"`` -> [1, 3, 5], ``"2"`` -> [2]; mixes allowed."""
    values: list[int] = []
    for item in _split_list(text):
        if ":" in item:
            lo, hi = (_int(part.strip(), what) for part in item.split(":", 1))
            if hi < lo:
                raise CraspError(f"{what}: empty range {item!r}")
            values.extend(range(lo, hi + 1))
        else:
            values.append(_int(item, what))
    if not values:
        raise CraspError(f"{what}: no values in {text!r}")
    return _unique(values)


def parse_seeds(text: str) -> list[int]:
    """``"3"`` -> seeds 0, 1, 2 (a count); ``"5:7"`` -> 5, 6, 7; ``"0,4"`` -> 0, 4; ``"5,"`` -> 5."""
    text = text.strip()
    if re.fullmatch(r"\d+", text):
        count = int(text)
        if count < 1:
            raise CraspError("--seeds: need at least one seed")
        return list(range(count))
    return parse_int_range(text, "--seeds")


_NUMBERED = re.compile(r"^([A-Za-z_]*?)(\d+)$")


def parse_languages(text: str) -> list[str]:
    """``"L3:L8"`` -> L3..L8; ``"L3:L8,E3:E6"``; ``"L3,E4,dyck1"``."""
    names: list[str] = []
    for item in _split_list(text):
        if ":" in item:
            first, last = (part.strip() for part in item.split(":", 1))
            a, b = _NUMBERED.match(first), _NUMBERED.match(last)
            if not a or not b or a.group(1) != b.group(1):
                raise CraspError(f"--languages: {item!r} is not a range like L3:L8 "
                                 "(same prefix, numbered ends)")
            lo, hi = int(a.group(2)), int(b.group(2))
            if hi < lo:
                raise CraspError(f"--languages: empty range {item!r}")
            names.extend(f"{a.group(1)}{k}" for k in range(lo, hi + 1))
        else:
            names.append(item)
    if not names:
        raise CraspError(f"--languages: no languages in {text!r}")
    return _unique(names)


def parse_names(text: str, what: str = "--posenc") -> list[str]:
    names = [item.lower() for item in _split_list(text)]
    if not names:
        raise CraspError(f"{what}: no values in {text!r}")
    return _unique(names)


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` with 0 <= i < n (0-based, as ``$SLURM_ARRAY_TASK_ID`` with ``--array=0-(n-1)``)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match:
        raise CraspError(f"--shard: {text!r} is not of the form i/n (e.g. 0/4)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise CraspError(f"--shard: need 0 <= i < n, got {index}/{count}")
    return index, count


def _unique(values: Iterable) -> list:
    seen, out = set(), []
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _field_types(config_cls: type | None) -> dict[str, Any] | None:
    """Field name -> type annotation of the trainer's config dataclass (None if unknown)."""
    if config_cls is None or not dataclasses.is_dataclass(config_cls):
        return None
    try:
        hints = typing.get_type_hints(config_cls)
    except Exception:  # unresolvable annotations: fall back to the raw strings
        hints = {}
    return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(config_cls)}


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


_BIN_TEXT = r"\d+\s*:\s*\d+(@[\w-]+)?"


def parse_value(text: str, annotation: Any = None) -> Any:
    """Parse one grid value with the type of its config field.

    ``int``, ``float``, ``bool`` (true/false/yes/no/1/0), ``str``, ``X | None`` ("none"),
    ``Literal``; tuples and lists as JSON (``[0.5,0.25]``) or ``lo:hi`` for a pair of ints;
    a list of pairs also as ``251:300+301:350``.
    Without a known type: JSON if it parses, else the text.
    """
    text = text.strip()
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is None or annotation is Any or isinstance(annotation, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    if origin in (typing.Union, types.UnionType):
        if type(None) in args and text.lower() in ("none", "null"):
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return parse_value(text, arg)
            except (ValueError, TypeError) as error:
                errors.append(str(error))
        raise ValueError("; ".join(errors) or f"cannot parse {text!r}")
    if origin is typing.Literal:
        for option in args:
            if str(option) == text or (isinstance(option, str) and option.lower() == text.lower()):
                return option
        raise ValueError(f"{text!r} is not one of {', '.join(map(str, args))}")
    if annotation is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ValueError(f"{text!r} is not a boolean (true/false)")
    if annotation is int:
        try:
            return int(text)
        except ValueError:
            number = float(text)
            if not number.is_integer():
                raise ValueError(f"{text!r} is not an integer") from None
            return int(number)
    if annotation is float:
        return float(text)
    if annotation is str:
        return text
    if origin in (tuple, list) or annotation in (tuple, list):
        item = args[0] if args else None
        if origin is list and (item is tuple or typing.get_origin(item) is tuple) and \
                re.fullmatch(rf"{_BIN_TEXT}(\s*\+\s*{_BIN_TEXT})*", text):
            # a list of bins: 251:300+301:350@skewed (a comma would separate grid values); a
            # bin with a test distribution stays text, which the config parses
            return [part.strip() if "@" in part else parse_value(part, tuple[int, int])
                    for part in text.split("+")]
        pair = re.fullmatch(r"(-?\d+)\s*:\s*(-?\d+)", text)
        value = [int(pair.group(1)), int(pair.group(2))] if pair else json.loads(text)
        if not isinstance(value, list):
            raise ValueError(f"{text!r} is not a list")
        if args and args[-1] is not Ellipsis and len(args) == len(value):
            value = [_coerce(v, a) for v, a in zip(value, args)]
        elif args:
            value = [_coerce(v, args[0]) for v in value]
        return tuple(value) if (origin or annotation) is tuple else value
    try:
        return json.loads(text)
    except ValueError:
        return text


def _coerce(value: Any, annotation: Any) -> Any:
    if isinstance(value, (list, str)) and annotation not in (str, Any):
        return parse_value(json.dumps(value) if isinstance(value, list) else value, annotation)
    if annotation is float and isinstance(value, int):
        return float(value)
    return value


def parse_grid(entries: Sequence[str], config_cls: type | None = None) -> dict[str, list]:
    """``["lr=1e-3,3e-4", "d_model=64,128"]`` -> ``{"lr": [0.001, 0.0003], "d_model": [64, 128]}``.

    An entry may hold several space-separated ``key=values``. Keys are config field names
    (checked against ``config_cls`` when it is a dataclass); a key given twice is an error.
    """
    types_by_field = _field_types(config_cls)
    grid: dict[str, list] = {}
    for entry in entries:
        for item in entry.split():
            if "=" not in item:
                raise CraspError(f"--grid: {item!r} is not KEY=VALUE[,VALUE...]")
            key, _, text = item.partition("=")
            key = key.strip().replace("-", "_")
            if key in AXES:
                option = {"language": "--languages", "depth": "--depths",
                          "posenc": "--posenc", "seed": "--seeds"}[key]
                raise CraspError(f"--grid: {key!r} is a sweep axis; use {option}")
            if key in grid:
                raise CraspError(f"--grid: {key!r} given twice")
            annotation = None
            if types_by_field is not None:
                if key not in types_by_field:
                    close = difflib.get_close_matches(key, list(types_by_field), n=3)
                    hint = f" (did you mean {', '.join(close)}?)" if close else ""
                    raise CraspError(f"--grid: unknown training config field {key!r}{hint}")
                annotation = types_by_field[key]
            values = []
            for value_text in _split_list(text):
                try:
                    values.append(parse_value(value_text, annotation))
                except (ValueError, TypeError) as error:
                    raise CraspError(f"--grid {key}: cannot parse {value_text!r}: {error}") from None
            if not values:
                raise CraspError(f"--grid: no values for {key!r}")
            grid[key] = _unique(values)
    return grid


# --------------------------------------------------------------------------- cells

@dataclass
class SweepSpec:
    """What to sweep. ``grid`` maps config fields to the values to try (a product)."""

    depths: list[int]
    languages: list[str]
    posencs: list[str] = field(default_factory=lambda: ["nope"])
    seeds: list[int] = field(default_factory=lambda: [0])
    grid: dict[str, list] = field(default_factory=dict)
    preset: str = "default"

    def as_dict(self) -> dict:
        return {"preset": self.preset, "depths": list(self.depths),
                "languages": list(self.languages), "posenc": list(self.posencs),
                "seeds": list(self.seeds), "grid": {k: list(v) for k, v in self.grid.items()}}

    def key(self) -> str:
        return canonical_json(self.as_dict())


@dataclass
class Cell:
    """One training run of a sweep."""

    index: int
    id: str
    overrides: dict   # keyword overrides given to resolve_preset (axes + grid point)
    hyper: dict       # the grid point alone (what "best over hyperparameters" ranges over)
    config: dict      # the resolved config, as a JSON-able dict
    preset: str = "default"
    config_object: Any = field(default=None, repr=False, compare=False)

    @property
    def language(self) -> str:
        return self.overrides["language"]

    @property
    def depth(self) -> int:
        return self.overrides["depth"]

    @property
    def posenc(self) -> str:
        return self.overrides["posenc"]

    @property
    def seed(self) -> int:
        return self.overrides["seed"]

    def label(self) -> str:
        hyper = " ".join(f"{k}={v}" for k, v in self.hyper.items())
        return f"{self.language} d{self.depth} {self.posenc} s{self.seed}" + (
            f" {hyper}" if hyper else "")

    def record(self) -> dict:
        return {"index": self.index, "id": self.id, "preset": self.preset,
                "overrides": self.overrides, "hyper": self.hyper, "config": self.config}


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def config_dict(config: Any) -> dict:
    """The resolved config as a JSON-able dict (dataclass, ``to_dict()`` or mapping)."""
    for method in ("to_dict", "as_dict"):
        if hasattr(config, method) and callable(getattr(config, method)):
            return _jsonable(getattr(config, method)())
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return _jsonable(config)
    if isinstance(config, Mapping):
        return _jsonable(config)
    return _jsonable(vars(config))


def canonical_json(value: Any) -> str:
    return json.dumps(_jsonable(value), sort_keys=True, separators=(",", ":"))


def config_hash(config: Mapping) -> str:
    return hashlib.sha256(canonical_json(config).encode("utf-8")).hexdigest()[:10]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", str(text)).strip("_") or "x"


def cell_id(overrides: Mapping, config: Mapping) -> str:
    """``L5-d3-nope-s0-<hash>``; a non-default attention shows in the encoding part
    (``nope_dp_free``), which leaves the ids of default-attention cells as they were."""
    encoding = architecture_label({**config, "posenc": overrides["posenc"]})
    return (f"{_slug(overrides['language'])}-d{overrides['depth']}-{_slug(encoding)}"
            f"-s{overrides['seed']}-{config_hash(identity_fields(dict(config)))}")


def default_resolver() -> tuple[Resolver, type | None]:
    try:
        from crasp.train import TrainConfig, resolve_preset
    except ImportError as error:
        raise CraspError(f"the trainer is not available (crasp.train): {error}") from None
    return resolve_preset, TrainConfig


def check_languages(names: Sequence[str]) -> None:
    """Refuse unknown language names before any cell runs (when the library is available)."""
    try:
        from crasp.languages import get_language
    except ImportError:
        return
    for name in names:
        get_language(name)  # raises CraspError for an unknown name


def _config_fields(config_cls: type | None) -> set[str] | None:
    types_by_field = _field_types(config_cls)
    return None if types_by_field is None else set(types_by_field)


def enumerate_cells(spec: SweepSpec, resolve: Resolver | None = None,
                    config_cls: type | None = None) -> list[Cell]:
    """Every cell of ``spec``, in the sweep's fixed order, numbered from 0.

    ``resolve(preset, **overrides)`` builds a cell's config (default: the trainer's
    ``resolve_preset``; its ``CraspError`` on an unknown field or value propagates). When the
    config has a ``threads`` field and the grid does not set it, cells get ``threads=1``.
    Cells whose resolved configs coincide (e.g. a grid value equal to the preset's) are kept once.
    """
    if resolve is None:
        resolve, default_cls = default_resolver()
        config_cls = config_cls or default_cls
    fields = _config_fields(config_cls)
    pin_threads = fields is not None and "threads" in fields and "threads" not in spec.grid
    keys = list(spec.grid)
    points = [dict(zip(keys, values)) for values in itertools.product(*spec.grid.values())]
    cells: list[Cell] = []
    seen: set[str] = set()
    for posenc in spec.posencs:
        for language in spec.languages:
            for depth in spec.depths:
                for hyper in points:
                    for seed in spec.seeds:
                        overrides = {"language": language, "depth": depth, "posenc": posenc,
                                     "seed": seed, **hyper}
                        if pin_threads:
                            overrides["threads"] = 1
                        config_object = resolve(spec.preset, **overrides)
                        config = config_dict(config_object)
                        identifier = cell_id(overrides, config)
                        if identifier in seen:
                            continue
                        seen.add(identifier)
                        cells.append(Cell(len(cells), identifier, overrides, dict(hyper), config,
                                          spec.preset, config_object))
    return cells


def shard_cells(cells: Sequence[Cell], shard: tuple[int, int] = (0, 1)) -> list[Cell]:
    """The cells of shard ``i/n``: those whose index is ``i`` modulo ``n``."""
    index, count = shard
    return [cell for cell in cells if cell.index % count == index]


def cell_dir(out_dir: str | Path, cell: Cell | str) -> Path:
    return Path(out_dir) / CELLS_DIR / (cell if isinstance(cell, str) else cell.id)


def is_done(out_dir: str | Path, cell: Cell | str) -> bool:
    return (cell_dir(out_dir, cell) / RESULTS_FILE).is_file()


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def write_json_atomic(path: Path, value: Any) -> None:
    write_text_atomic(path, json.dumps(_jsonable(value), indent=2, sort_keys=False) + "\n")


# --------------------------------------------------------------------------- sweep.json

def record_spec(out_dir: str | Path, spec: SweepSpec, cells: Sequence[Cell],
                command: str | None) -> dict:
    """Add ``spec`` to ``DIR/sweep.json`` (atomically) unless it is already there.

    One directory may hold several specs (e.g. a NoPE sweep, then a RoPE/ALiBi one); the
    report reads every cell directory and uses the specs to count missing cells.
    """
    path = Path(out_dir) / SWEEP_FILE
    data = {"version": SWEEP_VERSION, "specs": []}
    if path.is_file():
        try:
            data = read_json(path)
        except (OSError, ValueError) as error:
            raise CraspError(f"{path}: unreadable sweep file ({error})") from None
    key = spec.key()
    ids = [{"index": c.index, "id": c.id} for c in cells]
    for entry in data.get("specs", []):
        if canonical_json({k: entry.get(k) for k in spec.as_dict()}) == key:
            changed = False
            if command and command not in entry.setdefault("commands", []):
                entry["commands"].append(command)
                changed = True
            if entry.get("cells") != ids:  # the resolved configs changed: the new ids count
                entry.update(cells=ids, n_cells=len(cells), updated=_now())
                changed = True
            if changed:
                write_json_atomic(path, data)
            return entry
    entry = {**spec.as_dict(), "commands": [command] if command else [],
             "created": _now(), "n_cells": len(cells), "cells": ids}
    data.setdefault("specs", []).append(entry)
    data["version"] = SWEEP_VERSION
    write_json_atomic(path, data)
    return entry


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def long_bin_exact_match(results: Mapping) -> tuple[str | None, float | None]:
    """The longest test bin (largest upper end) and its exact match, from a results dict."""
    bins = results.get("bins") or {}
    best, best_key = None, None
    for name in bins:
        bounds = parse_bin(name)
        if bounds is not None and (best is None or (bounds[1], bounds[0]) > (best[1], best[0])):
            best, best_key = bounds, name
    if best_key is None:
        return None, None
    value = bins[best_key].get("exact_match")
    return best_key, (float(value) if value is not None else None)


def parse_bin(name: str) -> tuple[int, int] | None:
    """The bounds of a bin name such as ``351:400``, or None for a name that is not a bin."""
    try:
        return datasets.parse_bin(name)
    except CraspError:
        return None


# --------------------------------------------------------------------------- workers

def _init_worker(parent_pid: int) -> None:
    """Runs first in each spawned worker: die with the parent, ignore Ctrl-C (the parent
    handles it), one thread."""
    watch_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work already started
        pass


def run_cell(train_fn: TrainFn | None, config: Any, run_dir: str) -> tuple[str, Any]:
    """Train one cell (in a worker or inline). Returns ("ok", results) or ("error", traceback)."""
    run_path = Path(run_dir)
    try:
        if train_fn is None:
            from crasp.train.loop import train as train_fn
        results = train_fn(config, run_path, progress=False, resume=True)
    except Exception:  # one broken cell must not stop the sweep; it is retried next time
        text = traceback.format_exc()
        write_text_atomic(run_path / ERROR_FILE, text)
        return "error", text
    (run_path / ERROR_FILE).unlink(missing_ok=True)
    if not isinstance(results, Mapping):
        results = read_json(run_path / RESULTS_FILE) if (run_path / RESULTS_FILE).is_file() else {}
    return "ok", _jsonable(results)


@dataclass
class SweepOutcome:
    total: int          # cells in this shard
    already_done: int   # done before this invocation
    ran: int            # finished by this invocation
    failed: list[str]   # ids of cells that raised
    interrupted: bool = False
    elapsed_s: float = 0.0
    successes: int = 0  # done cells whose results say "success"


class _OneThreadEnvironment:
    """``OMP_NUM_THREADS=1`` (and friends) in ``os.environ`` while spawning workers."""

    NAMES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

    def __enter__(self):
        self.saved = {name: os.environ.get(name) for name in self.NAMES}
        for name in self.NAMES:
            os.environ[name] = "1"
        return self

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        return False


def _terminate(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)


def run_sweep(cells: Sequence[Cell], out_dir: str | Path, *, jobs: int = 1,
              train_fn: TrainFn | None = None, progress: bool = True,
              command: str | None = None, shard: tuple[int, int] = (0, 1),
              echo: Callable[[str], None] | None = None) -> SweepOutcome:
    """Run every cell of ``cells`` that is not done yet, ``jobs`` at a time.

    ``cells`` is normally one shard of ``enumerate_cells``. ``train_fn`` defaults to the
    trainer's ``train``; with ``jobs > 1`` it must be picklable (a module-level function).
    With ``jobs == 1`` cells run in this process, in order. A ``KeyboardInterrupt`` (or SIGTERM)
    stops the workers and is re-raised after the session file is written. ``crasp sweep``
    holds the directory's lock (``crasp.train.sweep_lock``) around this call.
    """
    out = Path(out_dir)
    started = time.time()
    session_path = out / SESSIONS_DIR / (
        time.strftime("%Y%m%dT%H%M%S") + f"-{_slug(socket.gethostname())}-{os.getpid()}.json")
    session = {"command": command, "shard": f"{shard[0]}/{shard[1]}", "jobs": jobs,
               "host": socket.gethostname(), "started": _now(), "finished": None,
               "elapsed_s": None, "cells": len(cells), "ran": 0, "failed": [],
               "interrupted": False}
    write_json_atomic(session_path, session)

    done = [cell for cell in cells if is_done(out, cell)]
    pending = [cell for cell in cells if not is_done(out, cell)]
    successes = 0
    for cell in done:
        try:
            successes += bool(read_json(cell_dir(out, cell) / RESULTS_FILE).get("success"))
        except (OSError, ValueError):
            pass
    outcome = SweepOutcome(total=len(cells), already_done=len(done), ran=0, failed=[],
                           successes=successes)
    for cell in pending:
        write_json_atomic(cell_dir(out, cell) / CELL_FILE, cell.record())

    bar = _progress_bar(len(cells), len(done), progress)
    last = {"text": ""}

    def finished(cell: Cell, status: str, payload: Any) -> None:
        if status == "ok":
            outcome.ran += 1
            outcome.successes += bool(payload.get("success"))
            _, em = long_bin_exact_match(payload)
            last["text"] = f"{cell.language} d{cell.depth} {cell.posenc} s{cell.seed}: " + (
                f"{em:.2f}" if em is not None else "?")
        else:
            outcome.failed.append(cell.id)
            last["text"] = f"{cell.language} d{cell.depth} {cell.posenc} s{cell.seed}: ERROR"
            if echo:
                echo(f"cell {cell.id} failed; traceback in "
                     f"{cell_dir(out, cell) / ERROR_FILE}")
        if bar is not None:
            bar.set_postfix_str(f"ok={outcome.successes} fail={len(outcome.failed)} "
                                f"last={last['text']}", refresh=False)
            bar.update(1)

    try:
        with SignalGuard(interrupt=True):
            if jobs <= 1 or len(pending) <= 1:
                for cell in pending:
                    status, payload = run_cell(train_fn, _config_for(cell),
                                               str(cell_dir(out, cell)))
                    finished(cell, status, payload)
            else:
                _run_pool(pending, out, jobs, train_fn, finished)
    except KeyboardInterrupt:
        outcome.interrupted = True
        raise
    finally:
        if bar is not None:
            bar.close()
        outcome.elapsed_s = time.time() - started
        session.update(finished=_now(), elapsed_s=round(outcome.elapsed_s, 3), ran=outcome.ran,
                       failed=outcome.failed, interrupted=outcome.interrupted)
        write_json_atomic(session_path, session)
    return outcome


def _config_for(cell: Cell) -> Any:
    return cell.config_object if cell.config_object is not None else cell.config


def _run_pool(pending: Sequence[Cell], out: Path, jobs: int, train_fn: TrainFn | None,
              finished: Callable[[Cell, str, Any], None]) -> None:
    context = multiprocessing.get_context("spawn")
    with _OneThreadEnvironment():  # workers are spawned on submit and inherit os.environ
        executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(pending)), mp_context=context, initializer=_init_worker,
            initargs=(os.getpid(),))
        try:
            futures = {executor.submit(run_cell, train_fn, _config_for(cell),
                                       str(cell_dir(out, cell))): cell for cell in pending}
        except BaseException:
            _terminate(executor)
            raise
    try:
        for future in concurrent.futures.as_completed(futures):
            cell = futures[future]
            try:
                status, payload = future.result()
            except concurrent.futures.process.BrokenProcessPool:
                raise CraspError("a sweep worker died (killed for memory?); finished cells are "
                                 "kept: run the same command again to resume") from None
            except Exception:  # e.g. unpicklable results
                status, payload = "error", traceback.format_exc()
                write_text_atomic(cell_dir(out, cell) / ERROR_FILE, payload)
            finished(cell, status, payload)
    except BaseException:
        _terminate(executor)
        raise
    executor.shutdown(wait=True)


def _progress_bar(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    return progress_bar(total=total, initial=initial, desc="sweep", unit="cell", smoothing=0.1)


# --------------------------------------------------------------------------- status

def sweep_status(out_dir: str | Path, cells: Sequence[Cell]) -> dict[str, list[Cell]]:
    """Split ``cells`` into done, failed (an error.txt and no results) and pending."""
    status: dict[str, list[Cell]] = {"done": [], "failed": [], "pending": []}
    for cell in cells:
        directory = cell_dir(out_dir, cell)
        if (directory / RESULTS_FILE).is_file():
            status["done"].append(cell)
        elif (directory / ERROR_FILE).is_file():
            status["failed"].append(cell)
        else:
            status["pending"].append(cell)
    return status
