"""Reports on sweep directories: a CSV, Markdown tables, heatmaps, summary lines, report.json.

``build_report(dirs)`` reads every finished cell of one or more sweep directories (shards are
merged: cells are keyed by id, so a cell present twice counts once) and aggregates them:

* per cell: one CSV row with every config field, the seed, per-bin metrics, epochs, wall time;
* per (encoding, language, depth): the hyperparameter setting (grid point) with the best mean
  validation exact match over seeds (``select="val"``, the default), or — asked for explicitly
  and labelled as such — with the best mean exact match on the longest *test* bin
  (``select="long"``), and its mean, sample standard deviation (for two seeds or more) and
  number of seeds;
* per (encoding, language): the smallest depth at which every seed of some setting reaches the
  threshold (default 0.99) on the longest bin, and the smallest at which a strict majority does,
  next to the depth the theory predicts (the language's prediction depth: k - 2 for L_k) and
  the depth of the language's compiled reference program;
* per language with a reference program: the compiled model's exact match on the same test bins
  (built with ``build_task`` from the cells' own data settings), which must be 100%;
* theory checks (``crasp.train.theory_bounds``): where a theorem bounds the depth, the cells
  below the lower bound that succeed and the cells at or above the upper bound that fail, by
  both criteria (≥ threshold on the longest bin; 100% validation exact match);
* with ``budget=B``: every cell as the checkpoint validation selects within B epochs
  (``crasp.train.budget``); ``budget_<encoding>.png`` plots the smallest succeeding depth
  against the budget for every budget the runs can answer for.

``write_report(report, out)`` writes ``cells.csv``, ``report.md``, ``report.json`` and
``heatmap_<posenc>.png`` atomically.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from crasp import syntax
from crasp.atomic import write_bytes_atomic, write_text_atomic
from crasp.errors import CraspError
from crasp.train.config import architecture_label
from crasp.train.budget import has_records, results_at_budget, trained_epochs
from crasp.train.sweep import (
    AXES, CELL_FILE, CELLS_DIR, ERROR_FILE, RESULTS_FILE, SESSIONS_DIR, SWEEP_FILE,
    canonical_json, long_bin_exact_match, parse_bin, read_json,
)
from crasp.train.theory_bounds import DepthBound, bounded_architecture, depth_bound

DEFAULT_THRESHOLD = 0.99
POSENC_NAMES = {"nope": "NoPE", "rope": "RoPE", "alibi": "ALiBi", "t5": "T5 bias", "rpe-log": "log RPE",
                "rpe-lin": "linear RPE"}
# Fields that never distinguish hyperparameter settings (used only when cell.json is missing).
_NOT_HYPER = set(AXES) | {"threads", "device", "preset", "run_dir", "out_dir"}
# The data-generation settings of a cell: the compiled model is evaluated on the same bins.
DATA_FIELDS = ("train_bin", "test_bins", "n_train", "n_test", "val_fraction", "seed", "data_seed",
               "dialect")

CompiledFn = Callable[[str, Mapping], dict]


# --------------------------------------------------------------------------- loading

@dataclass
class CellResult:
    id: str
    sweep_dir: str
    index: int | None
    config: dict
    hyper: dict
    results: dict

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
        return long_bin_exact_match(self.results)[0]

    @property
    def long_exact_match(self) -> float | None:
        return long_bin_exact_match(self.results)[1]

    @property
    def val_exact_match(self) -> float | None:
        value = self.results.get("val_exact_match")
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
        view = results_at_budget(cell.results, budget)
        if view is None:
            left_out.append(cell.id)
        else:
            kept.append(dataclasses.replace(cell, results=view))
    return dataclasses.replace(data, cells=kept, unbudgeted=left_out, budget=budget)


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
                specs.extend(read_json(directory / SWEEP_FILE).get("specs", []))
            except (OSError, ValueError) as error:
                raise CraspError(f"{directory / SWEEP_FILE}: unreadable ({error})") from None
        for path in sorted((directory / SESSIONS_DIR).glob("*.json")):
            try:
                sessions.append(read_json(path))
            except (OSError, ValueError):
                pass
        for cell_path in sorted((directory / CELLS_DIR).glob("*")) if (
                directory / CELLS_DIR).is_dir() else []:
            if not cell_path.is_dir():
                continue
            results_path = cell_path / RESULTS_FILE
            if not results_path.is_file():
                if (cell_path / ERROR_FILE).is_file():
                    text = (cell_path / ERROR_FILE).read_text(encoding="utf-8", errors="replace")
                    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
                    errors.append({"id": cell_path.name, "dir": str(directory), "error": last})
                continue
            if cell_path.name in cells:
                duplicates += 1
                continue
            try:
                results = read_json(results_path)
            except (OSError, ValueError):
                continue
            record = {}
            if (cell_path / CELL_FILE).is_file():
                try:
                    record = read_json(cell_path / CELL_FILE)
                except (OSError, ValueError):
                    record = {}
            config = dict(record.get("config") or {})
            config.update(results.get("config") or {})
            for axis in AXES:
                if axis not in config and axis in (record.get("overrides") or {}):
                    config[axis] = record["overrides"][axis]
            if "hyper" in record:
                hyper = dict(record["hyper"])
            else:
                hyper = {k: v for k, v in config.items() if k not in _NOT_HYPER}
            if any(axis not in config for axis in ("language", "depth", "posenc")):
                continue
            cells[cell_path.name] = CellResult(cell_path.name, str(directory),
                                               record.get("index"), config, hyper, results)
    named: dict[str, None] = {}
    seen_specs: dict[str, dict] = {}
    unique_specs = []
    for spec in specs:
        key = canonical_json({k: spec.get(k) for k in
                              ("preset", "depths", "languages", "posenc", "seeds", "grid")})
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
    return SweepData([str(d) for d in dirs], sorted(kept, key=_cell_order),
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


def language_sort_key(name: str) -> tuple:
    """L3 < L4 < ... < L10 < E3 < ... < other names (alphabetical, numbers numerically)."""
    match = re.fullmatch(r"([A-Za-z_]*?)(\d+)", name)
    if match:
        prefix, number = match.group(1), int(match.group(2))
    else:
        prefix, number = name, -1
    rank = {"L": 0, "E": 1}.get(prefix, 2)
    return rank, prefix.lower(), number, name


def architecture_name(label: str) -> str:
    """``nope+dp-free`` -> ``NoPE + dp-free``: the encoding's display name, then modifiers."""
    posenc, *modifiers = label.split("+")
    return " + ".join([POSENC_NAMES.get(posenc, posenc), *modifiers])


def posenc_sort_key(name: str) -> tuple:
    order = list(POSENC_NAMES)
    posenc = name.split("+")[0]
    return (order.index(posenc) if posenc in order else len(order), name)


def _cell_order(cell: CellResult) -> tuple:
    return (posenc_sort_key(cell.architecture), language_sort_key(cell.language), cell.depth,
            cell.hyper_key, cell.seed, cell.id)


# --------------------------------------------------------------------------- theory, compiled

def theory_depth(language: str, recorded: int | None = None) -> int | None:
    """The depth the theory predicts for the prediction task on ``language``.

    The language registry's ``prediction_depth`` when the library knows the name; else
    ``recorded`` (the prediction depth a cell's results.json recorded); else k - 2 for L_k
    (Knee-Deep, cor:prediction_task_depth).
    """
    try:
        from crasp.languages import get_language

        language_object = get_language(language)
    except Exception:
        language_object = None
    if language_object is not None:
        value = getattr(language_object, "prediction_depth", None)
        return None if value is None else int(value)
    if recorded is not None:
        return int(recorded)
    match = re.fullmatch(r"L(\d+)", language)
    if match and int(match.group(1)) >= 3:
        return int(match.group(1)) - 2
    return None


def theory_depths(cells: Sequence[CellResult]) -> dict[str, int | None]:
    recorded: dict[str, int | None] = {}
    for cell in cells:
        info = cell.results.get("language")
        if isinstance(info, Mapping) and info.get("prediction_depth") is not None:
            recorded.setdefault(cell.language, info["prediction_depth"])
        else:
            recorded.setdefault(cell.language, None)
    return {language: theory_depth(language, value) for language, value in recorded.items()}


def _tokens(string: Any, alphabet: Sequence[str]) -> list[str]:
    if isinstance(string, str):
        if all(len(symbol) == 1 for symbol in alphabet):
            return list(string)
        return string.split()
    return [str(token) for token in string]


def compiled_exact_match(model: Any, strings: Sequence, labels: Sequence,
                         alphabet: Sequence[str], batch: int = 256) -> float:
    """Fraction of strings whose per-position compiled output equals the labels everywhere.

    Labels of length ``len(tokens) + 1`` carry the BOS position first; it is dropped.
    """
    import numpy as np

    from crasp.compiler import execute

    if not strings:
        return float("nan")
    correct = 0
    for start in range(0, len(strings), batch):
        token_lists = [_tokens(s, alphabet) for s in strings[start:start + batch]]
        output = np.asarray(execute(model, token_lists).output)
        for row, (tokens, label) in enumerate(zip(token_lists, labels[start:start + batch])):
            label = np.asarray(label).astype(bool).reshape(-1)
            if len(label) == len(tokens) + 1:
                label = label[1:]
            correct += bool(len(label) == len(tokens)
                            and np.array_equal(output[row, :len(tokens)].astype(bool), label))
    return correct / len(strings)


def evaluate_compiled(language: str, config: Mapping) -> dict:
    """Compile ``language``'s reference program and score it on the cell's test bins.

    Returns ``{"status": "ok", "program", "depth", "bins": {"lo:hi": {"exact_match", "n"}},
    "all_perfect"}``, or a status of ``"no program"``, ``"n/a (positional)"`` or
    ``"error: ..."``.
    """
    import crasp

    from crasp.languages import build_task, get_language
    from crasp.languages.datasets import parse_test_bin
    from crasp.train.config import test_bin_name

    try:
        lang = get_language(language, config.get("dialect", "crasp"))
    except Exception as error:
        return {"status": f"error: {error}"}
    try:
        found = reference_program(lang)
    except Exception as error:
        return {"status": f"error: {error}"}
    if found is None:
        return {"status": "no program"}
    program, path, kind = found
    try:
        depth = crasp.depth_of(program)
    except Exception as error:
        return {"status": f"error: {error}", "program": path, "kind": kind}
    result = {"program": path, "kind": kind, "depth": depth}
    if syntax.is_positional(program):
        return {**result, "status": "n/a (positional)"}
    try:
        from crasp.compiler import compile_program

        model = compile_program(program)
        task = build_task(lang, train_bin=_bin_tuple(config["train_bin"]),
                          test_bins=[parse_test_bin(b if isinstance(b, str) else
                                                    test_bin_name(b))
                                     for b in config["test_bins"]],
                          n_train=config["n_train"], n_test=config["n_test"],
                          val_fraction=config.get("val_fraction", 0.2),
                          seed=config["seed"] if config.get("data_seed") is None
                          else config["data_seed"])
        bins = {}
        for split in task.tests:
            em = compiled_exact_match(model, split.strings, split.labels, program.alphabet)
            bins[split.name] = {"exact_match": em, "n": len(split.strings)}
    except Exception as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        return {**result, "status": f"error: {message}"}
    return {**result, "status": "ok", "bins": bins,
            "all_perfect": all(b["exact_match"] == 1.0 for b in bins.values())}


def reference_program(lang: Any) -> tuple[Any, str, str] | None:
    """The language's reference program: ``(program, where, kind)`` or None.

    The prediction program (the one that solves the prediction task at the prediction depth)
    when the language has one, else the recognition program (per-position recognition also
    gives the prefix labels, at a larger depth). Programs made in code are loaded too.
    """
    import crasp

    for kind, attribute, path_attribute in (
            ("prediction", "prediction_program", "prediction_program_path"),
            ("recognition", "program", "program_path")):
        reference = getattr(lang, attribute, None)
        if reference is not None and hasattr(reference, "load"):
            where = getattr(reference, "origin", None) or str(getattr(reference, "path", ""))
            return reference.load(), where, kind
        path = getattr(lang, path_attribute, None)
        if path:
            return crasp.load_program(path), str(path), kind
    return None


def _bin_tuple(value: Any) -> tuple[int, int]:
    if isinstance(value, str):
        bounds = parse_bin(value)
        if bounds is None:
            raise CraspError(f"bad bin {value!r}")
        return bounds
    lo, hi = value
    return int(lo), int(hi)


# --------------------------------------------------------------------------- aggregation

@dataclass
class Aggregate:
    """One (encoding, language, depth) entry: the selected setting over seeds."""

    mean: float
    std: float
    n: int
    values: list[float]
    seeds: list[int]
    hyper: dict
    val_mean: float | None
    settings: int               # how many hyperparameter settings were tried
    all_pass: bool              # some setting: every seed >= threshold
    majority_pass: bool         # some setting: more than half of its seeds >= threshold
    bin: str | None
    epochs_mean: float | None = None
    wall_time_s: float = 0.0

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, std


def aggregate(cells: Sequence[CellResult], threshold: float = DEFAULT_THRESHOLD,
              select: str = "val") -> dict[str, dict[str, dict[int, Aggregate]]]:
    """posenc -> language -> depth -> Aggregate (best setting by ``select``: long or val)."""
    if select not in ("long", "val"):
        raise CraspError(f"select must be 'long' or 'val', not {select!r}")
    groups: dict[tuple, dict[str, list[CellResult]]] = {}
    for cell in cells:
        if cell.long_exact_match is None:
            continue
        key = (cell.architecture, cell.language, cell.depth)
        groups.setdefault(key, {}).setdefault(cell.hyper_key, []).append(cell)
    table: dict[str, dict[str, dict[int, Aggregate]]] = {}
    for (posenc, language, depth), settings in groups.items():
        best, best_score = None, None
        any_all = any_majority = False
        for hyper_key, members in settings.items():
            members = sorted(members, key=lambda c: c.seed)
            values = [c.long_exact_match for c in members]
            mean, std = _mean_std(values)
            vals = [c.val_exact_match for c in members if c.val_exact_match is not None]
            val_mean = statistics.fmean(vals) if vals else None
            passing = sum(v >= threshold for v in values)
            any_all |= passing == len(values)
            any_majority |= passing * 2 > len(values)
            score = (mean if select == "long" else (val_mean if val_mean is not None else -1.0),
                     mean, -std)
            if best_score is None or score > best_score:
                epochs = [float(c.results["epochs"]) for c in members
                          if isinstance(c.results.get("epochs"), (int, float))]
                best_score = score
                best = Aggregate(mean, std, len(values), values, [c.seed for c in members],
                                 dict(members[0].hyper), val_mean, len(settings), False, False,
                                 members[0].long_bin,
                                 statistics.fmean(epochs) if epochs else None,
                                 sum(float(c.results.get("wall_time_s") or 0.0)
                                     for c in members))
        best.all_pass, best.majority_pass = any_all, any_majority
        table.setdefault(posenc, {}).setdefault(language, {})[depth] = best
    return {p: {l: dict(sorted(d.items())) for l, d in sorted(langs.items(),
                                                               key=lambda i: language_sort_key(i[0]))}
            for p, langs in sorted(table.items(), key=lambda i: posenc_sort_key(i[0]))}


def summarize(table: Mapping[str, Mapping[str, Mapping[int, Aggregate]]],
              compiled: Mapping[str, dict], threshold: float) -> list[dict]:
    """One summary per (encoding, language): smallest generalizing depth vs theory vs compiled.

    ``theory_depth`` is the depth a theorem fixes exactly (``theory_bounds``), else None;
    ``theory_bound`` states what is known (a proved range, or nothing)."""
    lines = []
    for posenc, languages in table.items():
        for language, depths in languages.items():
            all_depths = [d for d, a in depths.items() if a.all_pass]
            majority_depths = [d for d, a in depths.items() if a.majority_pass]
            bound = depth_bound(language, posenc)
            depth_predicted = bound.upper if bound is not None and bound.exact else None
            reference = compiled.get(language) or {}
            smallest_all = min(all_depths) if all_depths else None
            smallest_majority = min(majority_depths) if majority_depths else None
            tried = sorted(depths)
            # Non-monotone: some depth above the smallest passing one fails.
            gaps = [d for d in tried if smallest_all is not None and d > smallest_all
                    and d not in all_depths]
            agrees = None
            if depth_predicted is not None:
                if smallest_all is not None:
                    agrees = smallest_all == depth_predicted
                elif tried and max(tried) < depth_predicted:
                    agrees = None   # the sweep did not reach the predicted depth
                else:
                    agrees = False
            lines.append({
                "posenc": posenc, "language": language, "threshold": threshold,
                "bin": next(iter(depths.values())).bin if depths else None,
                "seeds": max((a.n for a in depths.values()), default=0),
                "depths_tried": tried,
                "smallest_depth_all_seeds": smallest_all,
                "smallest_depth_majority": smallest_majority,
                "passing_depths_all_seeds": sorted(all_depths),
                "fails_above_smallest": gaps,
                "theory_depth": depth_predicted,
                "theory_bound": None if bound is None else {
                    "lower": bound.lower, "upper": bound.upper, "statement": bound.statement},
                "compiled_depth": reference.get("depth"),
                "compiled_status": reference.get("status"),
                "compiled_all_perfect": reference.get("all_perfect"),
                "agrees_with_theory": agrees,
            })
    return lines


def theory_checks(cells: Sequence[CellResult], threshold: float) -> list[dict]:
    """Per (encoding, language) that a theorem bounds: every cell below the proved lower bound
    that succeeds, and every cell at or above the proved upper bound that fails, under each of
    the two criteria (≥ ``threshold`` exact match on the longest test bin; 100% validation exact
    match, the paper's), with the number of cells (one per seed and setting) on each side."""
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for cell in cells:
        if cell.long_exact_match is not None and depth_bound(cell.language, cell.architecture):
            groups.setdefault((cell.architecture, cell.language), []).append(cell)
    checks = []
    for (posenc, language), members in sorted(
            groups.items(), key=lambda i: (posenc_sort_key(i[0][0]), language_sort_key(i[0][1]))):
        bound = depth_bound(language, posenc)
        below = [c for c in members if c.depth < bound.lower]
        above = [c for c in members if c.depth >= bound.upper]

        def entry(cell: CellResult) -> dict:
            return {"id": cell.id, "depth": cell.depth, "seed": cell.seed, "hyper": cell.hyper,
                    "long_exact_match": cell.long_exact_match,
                    "val_exact_match": cell.val_exact_match}

        def succeeds(cell: CellResult) -> dict[str, bool]:
            return {"long": cell.long_exact_match >= threshold,
                    "val": (cell.val_exact_match or 0.0) >= 1.0}

        checks.append({
            "posenc": posenc, "language": language, "threshold": threshold,
            "bound": {"lower": bound.lower, "upper": bound.upper, "statement": bound.statement},
            "cells_below": len(below), "cells_at_or_above": len(above),
            "below_bound_succeed": {criterion: [entry(c) for c in sorted(below, key=_cell_order)
                                                if succeeds(c)[criterion]]
                                    for criterion in ("long", "val")},
            "at_or_above_bound_fail": {criterion: [entry(c) for c in sorted(above, key=_cell_order)
                                                   if not succeeds(c)[criterion]]
                                       for criterion in ("long", "val")},
        })
    return checks


def budget_curves(data: SweepData, threshold: float, select: str) -> dict[str, dict]:
    """posenc -> {"budgets": [1..B], "languages": {language: {"majority": [...], "all": [...],
    "contradictions": [...]}}}: per budget, the smallest depth at which a majority (all) of a
    setting's seeds succeed, None where none does, and the number of cells below a proved lower
    bound that succeed on the longest bin. Only cells with improvement records count; the
    budgets run from 1 to the most epochs any of them trained."""
    recorded = [cell for cell in data.cells if has_records(cell.results)]
    if not recorded:
        return {}
    horizon = max(trained_epochs(cell.results) for cell in recorded)
    budgets = list(range(1, horizon + 1))
    curves: dict[str, dict] = {}
    for budget in budgets:
        view = at_budget(dataclasses.replace(data, cells=recorded), budget)
        table = aggregate(view.cells, threshold, select)
        contradictions = {(c["posenc"], c["language"]): len(c["below_bound_succeed"]["long"])
                          for c in theory_checks(view.cells, threshold)}
        for posenc, languages in table.items():
            for language, by_depth in languages.items():
                curve = curves.setdefault(posenc, {"budgets": budgets, "languages": {}})[
                    "languages"].setdefault(language, {"majority": [None] * len(budgets),
                                                       "all": [None] * len(budgets),
                                                       "contradictions": [0] * len(budgets)})
                index = budget - 1
                curve["majority"][index] = min(
                    (d for d, a in by_depth.items() if a.majority_pass), default=None)
                curve["all"][index] = min((d for d, a in by_depth.items() if a.all_pass),
                                          default=None)
                curve["contradictions"][index] = contradictions.get((posenc, language), 0)
    return curves


def budget_png(posenc: str, curve: Mapping, depths: Sequence[int], threshold: float) -> bytes:
    """Smallest depth where a majority of seeds succeed, against the training budget, one line
    per language; a dotted line at a depth a theorem fixes exactly, none elsewhere."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    budgets = curve["budgets"]
    none_level = max(depths, default=0) + 1
    figure = Figure(figsize=(7.2, 4.2))
    axes = figure.add_subplot()
    colors = matplotlib.colormaps["tab10"]
    for index, (language, lines) in enumerate(curve["languages"].items()):
        color = colors(index % 10)
        values = [none_level if v is None else v for v in lines["majority"]]
        offset = (index - len(curve["languages"]) / 2) * 0.04  # keep equal lines apart
        axes.step(budgets, [v + offset for v in values], where="post", color=color,
                  linewidth=1.8, marker="o", markersize=3, label=language)
        bound = depth_bound(language, posenc)
        if bound is not None and bound.exact:
            axes.axhline(bound.upper + offset, color=color, linestyle=":", linewidth=1.2)
    axes.set_yticks(list(depths) + [none_level],
                    [str(d) for d in depths] + ["none"])
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("training budget (epochs; the checkpoint validation selects by then)")
    axes.set_ylabel("smallest depth where a majority\nof seeds succeed")
    axes.set_title(f"{architecture_name(posenc)}: smallest succeeding depth vs budget\n"
                   f"(success: ≥ {100 * threshold:g}% exact match on the longest test bin; "
                   "dotted: the depth a theorem fixes)", fontsize=9)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def distribution_table(posenc: str, languages: Mapping[str, Mapping[int, Aggregate]],
                       cells: Sequence[CellResult], depths: Sequence[int]) -> str:
    """Exact match on every test bin drawn from a named distribution (``LO:HI@NAME``), for the
    setting each cell of the main table selected: one Markdown table per such bin, or ''."""
    chosen = {(language, depth): (a.hyper, set(a.seeds))
              for language, by_depth in languages.items() for depth, a in by_depth.items()}
    scores: dict[str, dict[tuple[str, int], list[float]]] = {}
    for cell in cells:
        if cell.architecture != posenc or (cell.language, cell.depth) not in chosen:
            continue
        hyper, seeds = chosen[cell.language, cell.depth]
        if cell.hyper != hyper or cell.seed not in seeds:
            continue
        for name, metrics in (cell.results.get("bins") or {}).items():
            if "@" in name and metrics.get("exact_match") is not None:
                scores.setdefault(name, {}).setdefault((cell.language, cell.depth), []).append(
                    float(metrics["exact_match"]))
    parts = []
    for name in sorted(scores):
        parts += [f"Exact match (%) on the test bin `{name}` (same settings and seeds as above):",
                  "", "| language | " + " | ".join(f"depth {d}" for d in depths) + " |",
                  "|---|" + "---:|" * len(depths)]
        for language in languages:
            row = [seeds_text(scores[name][language, d]) if (language, d) in scores[name]
                   else "–" for d in depths]
            parts.append(f"| {language} | " + " | ".join(row) + " |")
        parts.append("")
    return "\n".join(parts)


def theory_check_lines(checks: Sequence[Mapping]) -> list[str]:
    """Markdown bullets: the counts, then every contradicting cell by name."""
    lines = []
    for check in checks:
        bound = check["bound"]
        name = f"{check['language']} [{architecture_name(check['posenc'])}]"
        for criterion, label in (("long", f"≥ {100 * check['threshold']:g}% on the longest bin"),
                                 ("val", "100% validation")):
            wins = check["below_bound_succeed"][criterion]
            losses = check["at_or_above_bound_fail"][criterion]
            text = (f"- {name}, {label}: {len(wins)} of {check['cells_below']} cells below depth "
                    f"{bound['lower']} succeed; {len(losses)} of {check['cells_at_or_above']} "
                    f"cells at depth ≥ {bound['upper']} fail")
            if wins:
                text += " — below the bound: " + ", ".join(
                    f"d{c['depth']} s{c['seed']} ({_pct(c['long_exact_match'])} long, "
                    f"{_pct(c['val_exact_match'])} val)" for c in wins)
            lines.append(text)
    return lines


def summary_text(line: Mapping) -> str:
    pct = f"{100 * line['threshold']:g}%"
    tried = line["depths_tried"]
    span = f"depths {min(tried)}–{max(tried)}" if tried else "no depths"

    def depth(value):
        return f"depth {value}" if value is not None else f"none of {span}"

    seeds = f"all {line['seeds']} seeds reach" if line["seeds"] != 1 else "the one seed reaches"
    text = (f"{line['language']} [{architecture_name(line['posenc'])}]: "
            f"smallest depth where {seeds} ≥ {pct} exact match on "
            f"{_bin_label(line['bin'])}: {depth(line['smallest_depth_all_seeds'])}; "
            f"majority of seeds: {depth(line['smallest_depth_majority'])}; "
            f"theory: {_bound_text(line.get('theory_bound'))}; "
            f"compiled program: {_compiled_text(line)}")
    if line["fails_above_smallest"]:
        text += f"; not monotone (fails again at depth {', '.join(map(str, line['fails_above_smallest']))})"
    return text


def _bound_text(bound: Mapping | None) -> str:
    if not bound:
        return "no proved bound"
    if bound["lower"] == bound["upper"]:
        return f"depth {bound['upper']} (proved)"
    return f"depth {bound['lower']}–{bound['upper']} (proved range; {bound['upper']} conjectured)"


def _bound_cell(bound: DepthBound | None) -> str:
    if bound is None:
        return "–"
    return str(bound.upper) if bound.exact else f"{bound.lower}–{bound.upper}"


def seeds_text(values: Sequence[float]) -> str:
    """Mean with its sample standard deviation and seed count; one seed shows no deviation."""
    if len(values) == 1:
        return f"{_pct(values[0])} (n=1)"
    mean, std = _mean_std(values)
    return f"{_pct(mean)} ± {_pct(std)} (n={len(values)})"


def _compiled_text(line: Mapping) -> str:
    status = line.get("compiled_status")
    if status is None or status == "no program":
        return "none"
    if status == "ok":
        verdict = ("exact fixed-precision model: " + ("100% on every bin"
                   if line.get("compiled_all_perfect") else "NOT 100% on every bin"))
        return f"depth {line['compiled_depth']} ({verdict})"
    if line.get("compiled_depth") is not None:
        return f"depth {line['compiled_depth']}, {status}"
    return status


def _bin_label(name: str | None) -> str:
    bounds = parse_bin(name) if name else None
    return f"[{bounds[0]}, {bounds[1]}]" if bounds else "the longest bin"


# --------------------------------------------------------------------------- the report

@dataclass
class Report:
    data: SweepData
    threshold: float
    select: str
    table: dict
    summary: list[dict]
    compiled: dict[str, dict]
    rows: list[dict]
    columns: list[str]
    theory: dict[str, int | None] = field(default_factory=dict)
    checks: list[dict] = field(default_factory=list)
    curves: dict[str, dict] = field(default_factory=dict)

    def as_dict(self) -> dict:
        depths = sorted({d for langs in self.table.values() for ds in langs.values() for d in ds})
        return {
            "sources": self.data.dirs,
            "threshold": self.threshold,
            "select": self.select,
            "cells_done": len(self.data.cells),
            "cells_expected": self.data.expected,
            "cells_missing": self.data.missing,
            "cells_failed": self.data.errors,
            "cells_superseded": self.data.superseded,
            "depths": depths,
            "tables": {posenc: {language: {str(d): a.as_dict() for d, a in ds.items()}
                                for language, ds in langs.items()}
                       for posenc, langs in self.table.items()},
            "summary": [{**line, "text": summary_text(line)} for line in self.summary],
            "theory_depths": self.theory,
            "theory_checks": self.checks,
            "budget": self.data.budget,
            "cells_without_budget": self.data.unbudgeted,
            "budget_curves": self.curves,
            "compiled": self.compiled,
            "wall_time": wall_time(self.data),
            "commands": commands(self.data),
            "cells": self.rows,
        }


def wall_time(data: SweepData) -> dict:
    cell_seconds = sum(float(c.results.get("wall_time_s") or 0.0) for c in data.cells)
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


def _flat(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, separators=(",", ":"))
    return value


def _bin_suffix(name: str) -> str:
    bounds = parse_bin(name)
    return f"{bounds[0]}_{bounds[1]}" if bounds else re.sub(r"\W+", "_", name)


def csv_rows(cells: Sequence[CellResult]) -> tuple[list[dict], list[str]]:
    """One row per cell: ids, every config field, hyper, scalar results, per-bin metrics."""
    head = ["cell_id", "sweep_dir", "index", "language", "depth", "posenc", "seed"]
    config_fields: dict[str, None] = {}
    scalar_fields: dict[str, None] = {}
    bins: dict[str, None] = {}
    for cell in cells:
        for key in cell.config:
            if key not in head:
                config_fields[key] = None
        for key, value in cell.results.items():
            if key not in ("bins", "config") and not isinstance(value, (dict, list)):
                scalar_fields[key] = None
        for name in cell.results.get("bins") or {}:
            bins[name] = None
    ordered_bins = sorted(bins, key=lambda n: parse_bin(n) or (10**9, 10**9))
    known = ["val_exact_match", "epochs", "best_epoch", "wall_time_s", "success"]
    scalars = known + [k for k in scalar_fields if k not in known]
    # A result named like a config field gets "_run" (e.g. epochs run vs the epochs budget).
    taken = set(head) | set(config_fields) | {"hyper"}
    scalar_columns = {k: f"{k}_run" if k in taken else k for k in scalars}
    columns = (head + list(config_fields) + ["hyper"] + list(scalar_columns.values())
               + ["long_bin", "long_exact_match"]
               + [f"{metric}_{_bin_suffix(b)}" for b in ordered_bins
                  for metric in ("exact_match", "token_accuracy", "n")])
    rows = []
    for cell in cells:
        row = {"cell_id": cell.id, "sweep_dir": cell.sweep_dir, "index": cell.index,
               "language": cell.language, "depth": cell.depth, "posenc": cell.posenc,
               "seed": cell.seed, "hyper": _flat(cell.hyper),
               "long_bin": cell.long_bin, "long_exact_match": cell.long_exact_match}
        for key in config_fields:
            row[key] = _flat(cell.config.get(key))
        for key, column in scalar_columns.items():
            row[column] = _flat(cell.results.get(key))
        for name in ordered_bins:
            metrics = (cell.results.get("bins") or {}).get(name) or {}
            for metric in ("exact_match", "token_accuracy", "n"):
                row[f"{metric}_{_bin_suffix(name)}"] = metrics.get(metric)
        rows.append(row)
    return rows, columns


COMPILED_CACHE = "compiled_cache.json"


def _read_cache(path: Path | None) -> dict:
    if path is None or not path.is_file():
        return {}
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _file_sha(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _compiled_configs(cells: Sequence[CellResult]) -> dict[str, dict]:
    """Per language, the data settings of its lowest-seed cell (the bins the models saw)."""
    chosen: dict[str, CellResult] = {}
    for cell in cells:
        current = chosen.get(cell.language)
        if current is None or (cell.seed, cell.id) < (current.seed, current.id):
            chosen[cell.language] = cell
    return {language: {k: cell.config[k] for k in DATA_FIELDS if k in cell.config}
            for language, cell in chosen.items()}


def build_report(dirs: Sequence[str | Path], threshold: float = DEFAULT_THRESHOLD,
                 select: str = "val", compiled: bool = True,
                 compiled_fn: CompiledFn | None = None, budget: int | None = None) -> Report:
    """Load and aggregate sweep directories (see the module docstring)."""
    if not 0.0 < threshold <= 1.0:
        raise CraspError(f"threshold must be in (0, 1], not {threshold}")
    data = load_sweeps(dirs)
    curves = budget_curves(data, threshold, select)
    if budget is not None:
        data = at_budget(data, budget)
    table = aggregate(data.cells, threshold, select)
    compiled_results: dict[str, dict] = {}
    if compiled:
        # The default evaluation is cached in the first directory (keyed by language, data
        # settings and the program file's hash): a report re-run does not recompile.
        cache_path = Path(dirs[0]) / COMPILED_CACHE if compiled_fn is None else None
        cache = _read_cache(cache_path)
        changed = False
        compiled_fn = compiled_fn or evaluate_compiled
        for language, config in sorted(_compiled_configs(data.cells).items(),
                                       key=lambda i: language_sort_key(i[0])):
            key = canonical_json({"language": language, "data": config})
            entry = cache.get(key)
            if entry is not None and entry.get("program_sha") == _file_sha(
                    entry["result"].get("program")):
                compiled_results[language] = entry["result"]
                continue
            try:
                result = compiled_fn(language, config)
            except Exception as error:
                result = {"status": f"error: {error}"}
            result.setdefault("data", config)
            compiled_results[language] = result
            if cache_path is not None and not str(result.get("status")).startswith("error"):
                cache[key] = {"result": result, "program_sha": _file_sha(result.get("program"))}
                changed = True
        if changed:
            try:
                write_text_atomic(cache_path, json.dumps(cache, indent=1, default=str) + "\n")
            except OSError:  # a read-only sweep directory: no cache, same report
                pass
    theory = theory_depths(data.cells)
    summary = summarize(table, compiled_results, threshold)
    rows, columns = csv_rows(data.cells)
    return Report(data, threshold, select, table, summary, compiled_results, rows, columns,
                  theory, theory_checks(data.cells, threshold), curves)


# --------------------------------------------------------------------------- writers

def _pct(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * value:.{digits}f}"


def _compiled_cell(reference: Mapping | None, bin_name: str | None) -> str:
    if not reference or reference.get("status") in (None, "no program"):
        return "–"
    status = reference["status"]
    if status != "ok":
        return status if status.startswith("n/a") else "error"
    bins = reference.get("bins") or {}
    value = bins.get(bin_name) if bin_name in bins else None
    if value is None and bins:
        value = bins[max(bins, key=lambda n: (parse_bin(n) or (0, 0))[::-1])]
    score = _pct(value["exact_match"]) if value else "–"
    return f"{score} (d{reference['depth']})"


def markdown_table(posenc: str, languages: Mapping[str, Mapping[int, Aggregate]],
                   depths: Sequence[int], compiled: Mapping[str, dict], threshold: float,
                   select: str = "val") -> str:
    bins = {a.bin for ds in languages.values() for a in ds.values()}
    bin_text = _bin_label(next(iter(bins))) if len(bins) == 1 else "the longest test bin"
    chosen_by = ("validation exact match" if select == "val"
                 else "exact match on the longest TEST bin (selected on test data)")
    lines = [
        f"### {architecture_name(posenc)}: exact match (%) on {bin_text}",
        "",
        f"Per cell the hyperparameter setting with the best mean {chosen_by}; mean ± sample "
        f"standard deviation over its seeds, and the number of seeds n (one seed: no deviation). "
        f"**Bold**: every seed of some setting reaches ≥ {100 * threshold:g}%. *theory*: the "
        "depth a theorem fixes (a range where only bounds are proved; – where none is known, "
        "crasp.train.theory_bounds); *compiled*: the compiled reference program's exact match on "
        "the same bin, at its depth, in crasp's exact fixed-precision executor (floor rounding).",
        "",
        "| language | theory | " + " | ".join(f"depth {d}" for d in depths) + " | compiled |",
        "|---|---:|" + "---:|" * len(depths) + "---:|",
    ]
    for language, by_depth in languages.items():
        cells = []
        for depth in depths:
            entry = by_depth.get(depth)
            if entry is None:
                cells.append("–")
                continue
            text = seeds_text(entry.values)
            cells.append(f"**{text}**" if entry.all_pass else text)
        bin_name = next(iter(by_depth.values())).bin if by_depth else None
        lines.append(f"| {language} | {_bound_cell(depth_bound(language, posenc))} | "
                     + " | ".join(cells) + f" | {_compiled_cell(compiled.get(language), bin_name)} |")
    hypers = [a.hyper for ds in languages.values() for a in ds.values()]
    varying = sorted({k for h in hypers for k in h
                      if len({canonical_json(x.get(k)) for x in hypers}) > 1})
    settings = max((a.settings for ds in languages.values() for a in ds.values()), default=1)
    if settings > 1 or varying:
        lines.append("")
        lines.append(f"Up to {settings} grid points per cell; the chosen one differs between cells "
                     f"in: {', '.join(varying) or 'nothing'} (per cell in report.json, "
                     "`tables.<encoding>.<language>.<depth>.hyper`).")
    return "\n".join(lines) + "\n"


def heatmap_png(posenc: str, languages: Mapping[str, Mapping[int, Aggregate]],
                depths: Sequence[int], compiled: Mapping[str, dict]) -> bytes:
    """A language x depth heatmap of mean exact match, with a theory staircase only for the
    rows a theorem bounds (``theory_bounds``): solid at a proved exact depth or lower bound,
    dashed at an upper bound whose exactness is conjectured."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    names = list(languages)
    grid = np.full((len(names), len(depths)), np.nan)
    stds = np.zeros_like(grid)
    for r, language in enumerate(names):
        for c, depth in enumerate(depths):
            entry = languages[language].get(depth)
            if entry is not None:
                grid[r, c], stds[r, c] = entry.mean, entry.std
    figure = Figure(figsize=(1.0 + 0.85 * max(len(depths), 2) + 1.6, 1.3 + 0.55 * max(len(names), 2)))
    axes = figure.add_subplot()
    cmap = plt.get_cmap("viridis").with_extremes(bad="#d9d9d9")
    image = axes.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0,
                        aspect="auto", interpolation="nearest")
    for r in range(len(names)):
        for c in range(len(depths)):
            if np.isnan(grid[r, c]):
                axes.text(c, r, "–", ha="center", va="center", fontsize=8, color="#555555")
                continue
            label = f"{100 * grid[r, c]:.0f}"
            if stds[r, c] > 0.005:
                label += f"\n±{100 * stds[r, c]:.0f}"
            axes.text(c, r, label, ha="center", va="center", fontsize=7 if "\n" in label else 8,
                      color="black" if grid[r, c] > 0.6 else "white")
    # Staircases: the left edge of the column of the bound, joined row to row.
    bounds = [depth_bound(language, posenc) for language in names]
    solid = _staircase(axes, [b.lower if b else None for b in bounds], depths, "-")
    dashed = _staircase(axes, [b.upper if b and not b.exact else None for b in bounds], depths,
                        "--")
    marked = False
    for r, language in enumerate(names):
        reference = compiled.get(language) or {}
        if reference.get("status") == "ok" and reference.get("depth") in depths:
            c = list(depths).index(reference["depth"])
            axes.plot(c + 0.33, r - 0.28, marker="D", markersize=5, color="white",
                      markeredgecolor="black", linestyle="none")
            marked = True
    axes.set_xticks(range(len(depths)), [str(d) for d in depths])
    axes.set_yticks(range(len(names)), names)
    axes.set_xlabel("depth (layers)")
    axes.set_ylabel("language")
    axes.set_xlim(-0.5, len(depths) - 0.5)
    axes.set_ylim(len(names) - 0.5, -0.5)
    bins = {a.bin for ds in languages.values() for a in ds.values()}
    where = _bin_label(next(iter(bins))) if len(bins) == 1 else "the longest test bin"
    seeds = sorted({a.n for ds in languages.values() for a in ds.values()})
    seeds_label = "–".join(map(str, sorted({seeds[0], seeds[-1]}))) if seeds else "0"
    axes.set_title(f"{architecture_name(posenc)}: exact match on {where}\n"
                   f"(best setting, mean over {seeds_label} seed(s) per cell, %)", fontsize=9)
    handles = []
    if solid:
        handles.append(Line2D([], [], color="red", linewidth=2.2,
                              label="proved: minimal depth\n(or its lower bound)"))
    if dashed:
        handles.append(Line2D([], [], color="red", linewidth=2.2, linestyle="--",
                              label="proved upper bound,\nconjectured exact"))
    if not solid and not dashed:
        handles.append(Line2D([], [], color="none", label="no proved depth bound\n"
                                                          "for this encoding"))
    if marked:
        handles.append(Line2D([], [], marker="D", color="white", markeredgecolor="black",
                              linestyle="none", label="compiled program depth"))
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.22, 1.0), fontsize=7,
                frameon=False)
    figure.colorbar(image, ax=axes, fraction=0.05, pad=0.03)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120)
    return buffer.getvalue()


def _staircase(axes, levels: Sequence[int | None], depths: Sequence[int], style: str) -> bool:
    """Draw the left edges of the columns at ``levels`` (one per row, None: no line there);
    returns whether anything was drawn."""
    drawn = False
    xs: list[float] = []
    ys: list[float] = []
    for row, level in enumerate([*levels, None]):
        if level is None:
            if xs:
                axes.plot(xs, ys, color="red", linewidth=2.2, linestyle=style)
                drawn = True
            xs, ys = [], []
            continue
        edge = sum(1 for d in depths if d < level) - 0.5
        xs += [edge, edge]
        ys += [row - 0.5, row + 0.5]
    return drawn


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def markdown_report(report: Report) -> str:
    data = report.data
    table = report.table
    depths = sorted({d for langs in table.values() for ds in langs.values() for d in ds})
    times = wall_time(data)
    selected = ("the best mean exact match on the longest test bin — SELECTED ON TEST DATA "
                "(--select long), so these numbers overstate what a held-out choice would get"
                if report.select == "long" else "the best mean validation exact match")
    budget = (f"Budget: every cell read at {data.budget} epoch(s), as the checkpoint validation "
              f"selects by then (crasp.train.budget)"
              + (f"; {len(data.unbudgeted)} cell(s) cannot answer for it (no per-epoch test "
                 "records, or fewer epochs trained) and are left out" if data.unbudgeted
                 else "") + "." if data.budget is not None
              else "Budget: each run's own (all the epochs it trained).")
    parts = [
        "# Sweep report",
        "",
        f"Sources: {', '.join(f'`{d}`' for d in data.dirs)}. Cells done: {len(data.cells)}"
        + (f" of {data.expected} named by the sweep specs" if data.expected else "")
        + (f"; {len(data.errors)} failed" if data.errors else "") + ".",
        f"Threshold for \"length-generalizes\": ≥ {100 * report.threshold:g}% exact match on the "
        "longest test bin. Per cell, the hyperparameter setting (grid point) with "
        f"{selected} is shown; mean ± sample standard deviation over its seeds (n).",
        budget,
        "",
        (f"Wall time: {_duration(times['sessions_total_s'])} over {times['sessions']} sweep "
         f"invocation(s); " if times["sessions"] else "Wall time: ")
        + f"{_duration(times['cells_total_s'])} of training summed over cells.",
        "",
    ]
    for posenc, languages in table.items():
        parts.append(markdown_table(posenc, languages, depths, report.compiled, report.threshold,
                                    report.select))
        if "hardmax" in posenc.split("+"):
            parts.append(
                "No depth bound for the prediction task is proved for hardmax (average-hard) "
                "attention, so no theory line is drawn: the theorems are about softmax "
                "transformers of fixed precision.\n")
        elif not bounded_architecture(posenc):
            parts.append(
                "No depth bound for the prediction task is proved under this encoding, so no "
                "theory line is drawn: with a positional encoding a head can attend locally (the "
                "Y operator of TL[◁#]^pos), which in theory brings L_k down to depth 1, and the "
                "E_k theorems under positional encodings are about recognition.\n")
        parts.append(f"![{posenc} heatmap](heatmap_{posenc}.png)\n")
        extra = distribution_table(posenc, languages, data.cells, depths)
        if extra:
            parts.append(extra)
        parts.append("Smallest depth that length-generalizes, against theory and the compiled "
                     "program:\n")
        parts += [f"- {summary_text(line)}" for line in report.summary
                  if line["posenc"] == posenc]
        parts.append("")
        checks = [c for c in report.checks if c["posenc"] == posenc]
        if checks:
            parts += ["Theory checks (cells on the wrong side of a proved bound; "
                      "crasp.train.theory_bounds):", ""] + theory_check_lines(checks) + [""]
        if posenc in report.curves:
            parts.append(f"![{posenc} budget](budget_{posenc}.png)\n")
    if report.compiled:
        all_bins = sorted({b for r in report.compiled.values() for b in (r.get("bins") or {})},
                          key=lambda n: parse_bin(n) or (0, 0))
        parts += ["## Compiled reference programs", "",
                  "Each language's reference program compiled to the exact fixed-precision "
                  "transformer (floor rounding, crasp's exact executor; not a float model) and "
                  "run on the same test bins (data settings of the language's lowest-seed cell). "
                  "These weights exist at the stated depth; they must score 100% on every bin. "
                  "A float transformer with the same depth exists up to a certified length: "
                  "`crasp compile --target float`.", "",
                  "| " + " | ".join(["language", "program", "depth", "status"]
                                    + [_bin_label(b) for b in all_bins]) + " |",
                  "|---|---|---:|---|" + "---:|" * len(all_bins)]
        for language, result in report.compiled.items():
            bins = result.get("bins") or {}
            program = f"`{Path(result['program']).name}`" if result.get("program") else "–"
            if result.get("kind"):
                program += f" ({result['kind']})"
            row = [language, program, str(result.get("depth", "–")), str(result.get("status"))]
            row += [_pct(bins[b]["exact_match"]) if b in bins else "–" for b in all_bins]
            parts.append("| " + " | ".join(row) + " |")
        parts.append("")
    if data.superseded:
        parts += [f"{len(data.superseded)} older cell(s) with the same coordinates but another "
                  "resolved config (e.g. run before a trainer default changed) are left out: "
                  + ", ".join(f"`{i}`" for i in data.superseded[:10])
                  + (" …" if len(data.superseded) > 10 else ""), ""]
    if data.errors or data.missing:
        parts += ["## Unfinished cells", ""]
        if data.missing:
            parts.append(f"{len(data.missing)} cell(s) named by the specs have no results yet "
                         "(run the sweep command again to resume them).")
        for error in data.errors:
            parts.append(f"- `{error['id']}` failed: {error['error']}")
        parts.append("")
    cmds = commands(data)
    if cmds:
        parts += ["## Commands", "", "```"] + cmds + ["```", ""]
    parts += ["Files: `cells.csv` (one row per cell), `report.json` (everything above), "
              "`heatmap_<encoding>.png`, `budget_<encoding>.png` (where runs recorded their "
              "per-epoch test scores).", ""]
    return "\n".join(parts)


def write_report(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Write cells.csv, report.md, report.json and one heatmap per encoding (atomically)."""
    out = Path(out_dir)
    paths = {"csv": out / "cells.csv", "markdown": out / "report.md", "json": out / "report.json"}
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=report.columns, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for row in report.rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    write_text_atomic(paths["csv"], buffer.getvalue())
    depths = sorted({d for langs in report.table.values() for ds in langs.values() for d in ds})
    for posenc, languages in report.table.items():
        path = out / f"heatmap_{posenc}.png"
        write_bytes_atomic(path, heatmap_png(posenc, languages, depths, report.compiled))
        paths[f"heatmap_{posenc}"] = path
    for posenc, curve in report.curves.items():
        path = out / f"budget_{posenc}.png"
        write_bytes_atomic(path, budget_png(posenc, curve, depths, report.threshold))
        paths[f"budget_{posenc}"] = path
    write_text_atomic(paths["markdown"], markdown_report(report))
    write_text_atomic(paths["json"], json.dumps(report.as_dict(), indent=2, default=str) + "\n")
    return paths


def report_lines(report: Report) -> Iterable[str]:
    for line in report.summary:
        yield summary_text(line)
