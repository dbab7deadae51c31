"""Sweep pass 2: a ``SweepSpec`` -> its ``Cell`` s, each with a resolved config and a stable id.

Cells are enumerated in a fixed order (encoding, language, depth, grid point, seed) and numbered
from 0; a cell's id is ``<language>-d<depth>-<posenc>-s<seed>-<hash>`` (the hash covers the
resolved config's identity fields, ``crasp.train.config.identity_fields``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from crasp.errors import CraspError
from crasp.train.config import architecture_label, identity_fields
from crasp.train.field_text import field_types


Resolver = Callable[..., Any]


@dataclass
class SweepSpec:
    """What to sweep. ``grid`` maps config fields to the values to try (a product)."""

    depths: list[int]
    languages: list[str]
    posencs: list[str] = field(default_factory=lambda: ["nope"])
    seeds: list[int] = field(default_factory=lambda: [0])
    grid: dict[str, list] = field(default_factory=dict)
    preset: str = "default"
    # --search: the configurations each cell tries in order (the trainer's ``search``: the
    # first to reach 100% validation exact match ends it, else the best on validation is kept)
    search: list[dict] | None = None
    search_text: str | None = None

    def as_dict(self) -> dict:
        spec = {"preset": self.preset, "depths": list(self.depths),
                "languages": list(self.languages), "posenc": list(self.posencs),
                "seeds": list(self.seeds), "grid": {k: list(v) for k, v in self.grid.items()}}
        if self.search:  # absent otherwise, so the specs of sweeps without one keep their keys
            spec.update(search=[dict(entry) for entry in self.search], search_text=self.search_text)
        return spec

    def key(self) -> str:
        return canonical_json(self.as_dict())


@dataclass
class Cell:
    """One training run of a sweep."""

    index: int
    id: str
    overrides: dict   # keyword overrides given to resolve_preset (axes + grid point)
    hyper: dict       # the grid point alone (what "best over hyperparameters" ranges over),
                      # and "search" (its text) when every cell searches: one setting of its own
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


def jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
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
            return jsonable(getattr(config, method)())
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return jsonable(config)
    if isinstance(config, Mapping):
        return jsonable(config)
    return jsonable(vars(config))


def canonical_json(value: Any) -> str:
    return json.dumps(jsonable(value), sort_keys=True, separators=(",", ":"))


def config_hash(config: Mapping) -> str:
    return hashlib.sha256(canonical_json(config).encode("utf-8")).hexdigest()[:10]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", str(text)).strip("_") or "x"


def cell_id(overrides: Mapping, config: Mapping) -> str:
    """``L5-d3-nope-s0-<hash>``; a non-default attention shows in the encoding part
    (``nope_dp_free``), which leaves the ids of default-attention cells as they were."""
    encoding = architecture_label({**config, "posenc": overrides["posenc"]})
    return (f"{slug(overrides['language'])}-d{overrides['depth']}-{slug(encoding)}"
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
    types_by_field = field_types(config_cls)
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
                        setting = dict(hyper)
                        if spec.search:
                            overrides["search"] = [dict(entry) for entry in spec.search]
                            setting["search"] = spec.search_text
                        if pin_threads:
                            overrides["threads"] = 1
                        config_object = resolve(spec.preset, **overrides)
                        config = config_dict(config_object)
                        identifier = cell_id(overrides, config)
                        if identifier in seen:
                            continue
                        seen.add(identifier)
                        cells.append(Cell(len(cells), identifier, overrides, setting, config,
                                          spec.preset, config_object))
    return cells


def shard_cells(cells: Sequence[Cell], shard: tuple[int, int] = (0, 1)) -> list[Cell]:
    """The cells of shard ``i/n``: those whose index is ``i`` modulo ``n``."""
    index, count = shard
    return [cell for cell in cells if cell.index % count == index]
