"""What a report holds: the ``Report`` object, its JSON form, and one CSV row per cell.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from crasp.train.sweep import parse_bin
from crasp.train.report.loading import CellResult, SweepData, code_versions, commands, wall_time
from crasp.train.report.summary import summary_text

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
    distributions: list[dict] = field(default_factory=list)
    distribution_tables: dict[str, dict] = field(default_factory=dict)
    budget_losses: list[dict] = field(default_factory=list)
    seed_counts: list[dict] = field(default_factory=list)
    search_choices: list[dict] = field(default_factory=list)
    compiled_cache: dict = field(default_factory=dict)
    unfinished: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        depths = sorted({d for langs in self.table.values() for ds in langs.values() for d in ds})
        return {
            "sources": self.data.dirs,
            "threshold": self.threshold,
            "select": self.select,
            "cells_done": len(self.data.cells),
            "cells_expected": self.data.expected,
            "cells_missing": self.data.missing,
            "cells_unfinished": self.unfinished,
            "cells_failed": self.data.errors,
            "cells_superseded": self.data.superseded,
            "depths": depths,
            "tables": {posenc: {language: {str(d): a.as_dict() for d, a in ds.items()}
                                for language, ds in langs.items()}
                       for posenc, langs in self.table.items()},
            "summary": [{**line, "text": summary_text(line)} for line in self.summary],
            "theory_depths": self.theory,
            "theory_checks": self.checks,
            "distribution_checks": self.distributions,
            "distribution_tables": {
                posenc: {name: {language: {str(d): a.as_dict() for d, a in ds.items()}
                                for language, ds in langs.items()}
                         for name, langs in tables.items()}
                for posenc, tables in self.distribution_tables.items()},
            "budget": self.data.budget,
            "cells_without_budget": self.data.unbudgeted,
            "budget_curves": self.curves,
            "budget_losses": self.budget_losses,
            "seed_counts": self.seed_counts,
            "search_choices": self.search_choices,
            "compiled": self.compiled,
            "wall_time": wall_time(self.data),
            "code_versions": code_versions(self.data),
            "commands": commands(self.data),
            "cells": self.rows,
        }


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
        for key, value in cell.results.to_json().items():
            if key not in ("bins", "config") and not isinstance(value, (dict, list)):
                scalar_fields[key] = None
        for name in cell.results.bins:
            bins[name] = None
    ordered_bins = sorted(bins, key=lambda n: parse_bin(n) or (10**9, 10**9))
    known = ["val_exact_match", "epochs", "best_epoch", "wall_time_s", "success"]
    scalars = known + [k for k in scalar_fields if k not in known]
    # A result named like a config field gets "_run" (e.g. epochs run vs the epochs budget).
    taken = set(head) | set(config_fields) | {"hyper"}
    scalar_columns = {k: f"{k}_run" if k in taken else k for k in scalars}
    # a search's chosen configuration (a dict, so not among the scalars)
    searched = ["selected"] if any(cell.results.selected for cell in cells) else []
    columns = (head + list(config_fields) + ["hyper"] + list(scalar_columns.values()) + searched
               + ["long_bin", "long_exact_match"]
               + [f"{metric}_{_bin_suffix(b)}" for b in ordered_bins
                  for metric in ("exact_match", "token_accuracy", "n")])
    rows = []
    for cell in cells:
        row = {"cell_id": cell.id, "sweep_dir": cell.sweep_dir, "index": cell.index,
               "language": cell.language, "depth": cell.depth, "posenc": cell.posenc,
               "seed": cell.seed, "hyper": _flat(cell.hyper),
               "selected": _flat(cell.results.selected),
               "long_bin": cell.long_bin, "long_exact_match": cell.long_exact_match}
        for key in config_fields:
            row[key] = _flat(cell.config.get(key))
        for key, column in scalar_columns.items():
            row[column] = _flat(cell.results.to_json().get(key))
        for name in ordered_bins:
            metrics = cell.results.bins[name].to_json() if name in cell.results.bins else {}
            for metric in ("exact_match", "token_accuracy", "n"):
                row[f"{metric}_{_bin_suffix(name)}"] = metrics.get(metric)
        rows.append(row)
    return rows, columns
