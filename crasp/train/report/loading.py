"""Report pass 1: sweep directories -> ``SweepData``, one ``CellResult`` per finished cell.

Shards are merged by cell id; of two cells with the same coordinates (a trainer default changed
between runs) the one a recorded spec names wins, then the newer (``_one_per_seed``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from crasp.errors import CraspError
from crasp.train.budget import results_at_budget
from crasp.train.config import architecture_label
from crasp.train.sweep import (
    AXES, CELL_FILE, CELLS_DIR, ERROR_FILE, RESULTS_FILE, SESSIONS_DIR, SWEEP_FILE, canonical_json,
    read_json,
)
from crasp.train.results import RunResults
from crasp.train.sweep.directory import SWEEP_SHAPE, error_reason
from crasp.util.json_shape import (ANY, FINITE, INTEGER, STRING, ListOf, MapOf, Object, OrNull,
                                   mismatch)
from crasp.train.report.ordering import language_sort_key, posenc_sort_key

# Fields that never distinguish hyperparameter settings (used only when cell.json is missing).
_NOT_HYPER = set(AXES) | {"threads", "device", "preset", "run_dir", "out_dir"}


@dataclass
class CellResult:
    id: str
    sweep_dir: str
    index: int | None
    config: dict
    hyper: dict
    results: RunResults

    @property
    def language(self) -> str:
        return str(self.config.get("language"))

    @property
    def depth(self) -> int:
        return int(self.config.get("depth"))

    @property
    def posenc(self) -> str:
        return str(self.config.get("posenc"))

    @property
    def architecture(self) -> str:
        """The encoding with any non-default attention (``nope+dp-free``): runs of different
        architectures are never pooled into one table or one selection."""
        return architecture_label(self.config)

    @property
    def seed(self) -> int:
        return int(self.config.get("seed", 0))

    @property
    def long_bin(self) -> str | None:
        return self.results.long_bin

    @property
    def long_exact_match(self) -> float | None:
        return self.results.long_exact_match

    @property
    def val_exact_match(self) -> float | None:
        value = self.results.val_exact_match
        return None if value is None else float(value)

    @property
    def hyper_key(self) -> str:
        return canonical_json(self.hyper)


@dataclass
class SweepData:
    dirs: list[str]
    cells: list[CellResult]
    specs: list[dict] = field(default_factory=list)
    sessions: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)     # cells with error.txt and no results
    expected: int = 0                                      # cells named by the specs
    missing: list[str] = field(default_factory=list)       # ids named by specs, not done
    duplicates: int = 0                                    # same id in several directories
    superseded: list[str] = field(default_factory=list)    # same coordinates, other config
    unbudgeted: list[str] = field(default_factory=list)    # cells that cannot answer the budget
    budget: int | None = None                              # epochs; None: each run's own


def at_budget(data: SweepData, budget: int) -> SweepData:
    """``data`` with every cell read at ``budget`` epochs (``crasp.train.budget``); the cells
    that cannot answer for it (no records, or fewer epochs trained) move to ``unbudgeted``."""
    if budget < 1:
        raise CraspError(f"--budget must be at least 1 epoch, not {budget}")
    kept, left_out = [], []
    for cell in data.cells:
        view = results_at_budget(cell.results.to_json(), budget)
        if view is None:
            left_out.append(cell.id)
        else:
            kept.append(dataclasses.replace(cell, results=RunResults.from_json(view)))
    return dataclasses.replace(data, cells=kept, unbudgeted=left_out, budget=budget)


SESSION_SHAPE = Object({"command": OrNull(STRING), "started": OrNull(STRING),
                        "elapsed_s": OrNull(FINITE)})
CELL_RECORD_SHAPE = Object({"config": OrNull(MapOf(ANY)), "overrides": OrNull(MapOf(ANY)),
                            "hyper": MapOf(ANY), "index": OrNull(INTEGER)})
AXES_SHAPE = Object({"language": STRING, "depth": INTEGER, "posenc": STRING,
                     "seed": INTEGER, "search": OrNull(ListOf(MapOf(ANY)))})
"""The keys of a session file, a cell's cell.json and its merged config that the
report indexes (``crasp.util.json_shape``): a file that departs from them is named, not read."""


def load_sweeps(dirs: Sequence[str | Path]) -> SweepData:
    """Read the finished cells, specs and sessions of one or more sweep (shard) directories."""
    if not dirs:
        raise CraspError("report: give at least one sweep directory")
    cells: dict[str, CellResult] = {}
    specs: list[dict] = []
    sessions: list[dict] = []
    errors: list[dict] = []
    duplicates = 0
    for directory in map(Path, dirs):
        if not directory.is_dir():
            raise CraspError(f"report: {str(directory)!r} is not a directory")
        if not (directory / CELLS_DIR).is_dir() and not (directory / SWEEP_FILE).is_file():
            raise CraspError(f"report: {str(directory)!r} is not a sweep directory "
                             f"(no {CELLS_DIR}/ or {SWEEP_FILE})")
        if (directory / SWEEP_FILE).is_file():
            try:
                recorded = read_json(directory / SWEEP_FILE)
            except (OSError, ValueError) as error:
                raise CraspError(f"{directory / SWEEP_FILE}: unreadable ({error})") from None
            problem = mismatch(recorded, SWEEP_SHAPE)
            if problem:
                raise CraspError(f"{directory / SWEEP_FILE}: not a sweep record ({problem})")
            specs.extend(recorded.get("specs", []))
        for path in sorted((directory / SESSIONS_DIR).glob("*.json")):
            try:
                session = read_json(path)
            except (OSError, ValueError):
                continue
            if mismatch(session, SESSION_SHAPE) is None:  # a damaged one is left out, as an
                sessions.append(session)                  # unreadable one is
        for cell_path in sorted((directory / CELLS_DIR).glob("*")) if (
                directory / CELLS_DIR).is_dir() else []:
            if not cell_path.is_dir():
                continue
            results_path = cell_path / RESULTS_FILE
            if not results_path.is_file():
                if (cell_path / ERROR_FILE).is_file():
                    text = (cell_path / ERROR_FILE).read_text(encoding="utf-8", errors="replace")
                    last = error_reason(text)
                    errors.append({"id": cell_path.name, "dir": str(directory), "error": last})
                continue
            if cell_path.name in cells:
                duplicates += 1
                continue
            try:
                results = RunResults.read(cell_path)
            except CraspError as error:  # unreadable or malformed: listed, not counted
                errors.append({"id": cell_path.name, "dir": str(directory),
                               "error": f"unreadable results: {error}"})
                continue
            record = {}
            if (cell_path / CELL_FILE).is_file():
                try:
                    record = read_json(cell_path / CELL_FILE)
                except (OSError, ValueError):
                    record = {}
                problem = mismatch(record, CELL_RECORD_SHAPE)
                if problem:
                    errors.append({"id": cell_path.name, "dir": str(directory),
                                   "error": f"malformed {CELL_FILE}: {problem}"})
                    continue
            config = dict(record.get("config") or {})
            config.update(results.config or {})
            # A searched cell's numbers come from its selected trial: its row states that
            # trial's settings (d_model, lr, ...), not the first trial's.
            config.update(results.selected or {})
            for axis in AXES:
                if axis not in config and axis in (record.get("overrides") or {}):
                    config[axis] = record["overrides"][axis]
            if "hyper" in record:
                hyper = dict(record["hyper"])
            else:
                hyper = {k: v for k, v in config.items() if k not in _NOT_HYPER}
            if any(axis not in config for axis in ("language", "depth", "posenc")):
                continue
            problem = mismatch(config, AXES_SHAPE)
            if problem:
                errors.append({"id": cell_path.name, "dir": str(directory),
                               "error": f"malformed config ({CELL_FILE} and {RESULTS_FILE}): "
                                        f"{problem}"})
                continue
            cells[cell_path.name] = CellResult(cell_path.name, str(directory),
                                               record.get("index"), config, hyper, results)
    named: dict[str, None] = {}
    seen_specs: dict[str, dict] = {}
    unique_specs = []
    for spec in specs:
        key = canonical_json({k: spec.get(k) for k in
                              ("preset", "depths", "languages", "posenc", "seeds", "grid",
                               "search")})
        if key in seen_specs:  # the same spec in several shard directories
            known = seen_specs[key].setdefault("commands", [])
            known += [c for c in spec.get("commands", []) if c not in known]
            continue
        spec = {**spec, "commands": list(spec.get("commands", []))}
        seen_specs[key] = spec
        unique_specs.append(spec)
        for entry in spec.get("cells", []):
            named[entry["id"]] = None
    errors = [e for e in errors if e["id"] not in cells]
    missing = [identifier for identifier in named if identifier not in cells]
    kept, superseded = _one_per_seed(cells.values(), named)
    return SweepData([str(d) for d in dirs], sorted(kept, key=cell_order),
                     unique_specs, sessions, errors, len(named), missing, duplicates, superseded)


def _one_per_seed(cells: Iterable[CellResult], named: Mapping[str, None]
                  ) -> tuple[list[CellResult], list[str]]:
    """Keep one cell per (encoding, language, depth, grid point, seed).

    Two cells collide when the resolved config changed between runs (a new trainer default
    gives new ids) while the sweep's coordinates stayed the same; counting both would count a
    seed twice. The cell named by a recorded spec wins (the latest spec's ids replace older
    ones), then the most recently finished one.
    """
    best: dict[tuple, CellResult] = {}
    superseded: list[str] = []
    for cell in cells:
        key = (cell.architecture, cell.language, cell.depth, cell.hyper_key, cell.seed)
        current = best.get(key)
        if current is None:
            best[key] = cell
            continue
        rank = lambda c: (c.id in named, _mtime(c))
        winner, loser = (cell, current) if rank(cell) > rank(current) else (current, cell)
        best[key] = winner
        superseded.append(loser.id)
    return list(best.values()), superseded


def _mtime(cell: CellResult) -> float:
    try:
        return (Path(cell.sweep_dir) / CELLS_DIR / cell.id / RESULTS_FILE).stat().st_mtime
    except OSError:
        return 0.0


def cell_order(cell: CellResult) -> tuple:
    return (posenc_sort_key(cell.architecture), language_sort_key(cell.language), cell.depth,
            cell.hyper_key, cell.seed, cell.id)


UNRECORDED_CODE = "unrecorded"


def code_versions(data: SweepData) -> dict[str, int]:
    """Cells per fingerprint of the code that trained them (``environment["code"]``,
    ``crasp.util.code_fingerprint``); ``UNRECORDED_CODE`` for runs older than the fingerprint."""
    counts: dict[str, int] = {}
    for cell in data.cells:
        code = (cell.results.environment or {}).get("code") or UNRECORDED_CODE
        counts[code] = counts.get(code, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def wall_time(data: SweepData) -> dict:
    cell_seconds = sum(float(c.results.wall_time_s or 0.0) for c in data.cells)
    session_seconds = sum(float(s.get("elapsed_s") or 0.0) for s in data.sessions)
    return {"cells_total_s": round(cell_seconds, 3), "sessions_total_s": round(session_seconds, 3),
            "sessions": len(data.sessions)}


def commands(data: SweepData) -> list[str]:
    seen: dict[str, None] = {}
    for spec in data.specs:
        for command in spec.get("commands", []):
            seen[command] = None
    for session in sorted(data.sessions, key=lambda s: str(s.get("started"))):
        if session.get("command"):
            seen[session["command"]] = None
    return list(seen)
