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
* distribution checks (``distributions``): of the cells that reach the threshold on the longest
  uniform bin, how many reach it on each bin drawn from a harder distribution, and the others;
* seed counts (``seed_counts``): per (encoding, language, depth), how many seeds of the
  selected setting reach the threshold, and whether one string would change that count or the
  majority verdict ("fragile");
* search choices (``search_choices``): for cells that searched (``crasp sweep --search``), the
  configuration each chose on validation and the trials it ran;
* unfinished cells (``unfinished``): for each cell the specs name that is not done, its
  finished parts (a search run in parts) with their validation scores, and its runs in progress;
* with ``budget=B``: every cell as the checkpoint validation selects within B epochs
  (``crasp.train.budget``); ``budget_<encoding>.png`` plots the smallest succeeding depth
  against the budget for every budget the runs can answer for.

``write_report(report, out)`` writes ``cells.csv``, ``report.md``, ``report.json``,
``heatmap_<posenc>.png`` (and one per distribution bin), ``budget_<posenc>.png`` and the compiled
references' cache ``compiled_cache.json``, as a whole: an earlier report is replaced entirely or
not at all.

The pipeline, one module per pass: ``loading`` (directories -> cells), ``reference`` (the theory's
depths and the compiled reference programs), ``aggregate`` (cells -> tables, summaries, theory
checks, budget curves), ``distributions`` (the distribution checks), ``seed_counts`` (the seed
counts and their fragile marks), ``search_choices`` (the configuration each searching cell
chose), ``unfinished`` (how far each unfinished cell got), ``budget_losses`` (the successes a
larger budget loses), ``summary`` (each summary line's sentence), ``contents`` (the ``Report``
and its CSV rows), ``markdown`` and ``plots`` (the files), ``replacing`` (the files take an
earlier report's place); ``cli`` is ``crasp report``. ``build_report`` below is the driver.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Iterable, Sequence

from crasp.util.atomic import write_bytes_atomic, write_text_atomic
from crasp.errors import CraspError
from crasp.train.report.aggregate import (
    DEFAULT_THRESHOLD, Aggregate, aggregate, budget_curves, summarize, theory_checks,
)
from crasp.train.report.budget_losses import budget_losses
from crasp.train.report.contents import Report, csv_rows
from crasp.train.report.distributions import distribution_checks, distribution_tables
from crasp.train.report.loading import CellResult, SweepData, at_budget, commands, load_sweeps
from crasp.train.report.markdown import distribution_file_stem, markdown_report, seeds_text
from crasp.train.report.ordering import language_sort_key
from crasp.train.report.plots import budget_png, heatmap_png
from crasp.train.report.replacing import replace_report
from crasp.train.report.search_choices import search_choices
from crasp.train.report.seed_counts import seed_counts
from crasp.train.report.unfinished import started_text, unfinished_cells
from crasp.train.report.reference import (
    COMPILED_CACHE, CompiledFn, evaluate_compiled, read_cache, score_references, theory_depth,
    theory_depths,
)
from crasp.train.report.summary import summary_text

__all__ = [
    "Aggregate", "COMPILED_CACHE", "CellResult", "DEFAULT_THRESHOLD", "Report", "SweepData",
    "build_report", "commands", "csv_rows", "evaluate_compiled", "language_sort_key",
    "load_sweeps", "markdown_report", "report_lines", "seeds_text", "started_text", "summary_text",
    "theory_depth", "write_report",
]


def build_report(dirs: Sequence[str | Path], threshold: float = DEFAULT_THRESHOLD,
                 select: str = "val", compiled: bool = True,
                 compiled_fn: CompiledFn | None = None, budget: int | None = None,
                 progress: bool = False, previous: str | Path | None = None) -> Report:
    """Load and aggregate sweep directories (see the module docstring).

    ``compiled_fn`` replaces the compiled-reference evaluation (tests); only the default one is
    cached: the results go into the report's ``compiled_cache`` (written with the report), and
    those of the earlier report in the directory ``previous`` are reused. Nothing is written
    into ``dirs``. ``progress`` shows a bar while the references compile."""
    if not 0.0 < threshold <= 1.0:
        raise CraspError(f"threshold must be in (0, 1], not {threshold}")
    data = load_sweeps(dirs)
    curves = budget_curves(data, threshold, select)
    losses = budget_losses(data.cells, threshold, budget)
    if budget is not None:
        data = at_budget(data, budget)
    table = aggregate(data.cells, threshold, select)
    references, cache = {}, {}
    if compiled:
        if compiled_fn is None and previous is not None:
            cache = read_cache(Path(previous) / COMPILED_CACHE)
        references = score_references(data.cells, compiled_fn or evaluate_compiled,
                                      cache if compiled_fn is None else None, progress)
    rows, columns = csv_rows(data.cells)
    return Report(data, threshold, select, table, summarize(table, references, threshold),
                  references, rows, columns, theory_depths(data.cells),
                  theory_checks(data.cells, threshold), curves,
                  distribution_checks(data.cells, threshold),
                  {posenc: distribution_tables(posenc, languages, data.cells, threshold)
                   for posenc, languages in table.items()}, losses,
                  seed_counts(data.cells, table, threshold), search_choices(data.cells), cache,
                  unfinished_cells(data))


def write_report(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Write cells.csv, report.md, report.json, the heatmaps and budget plots, and the compiled
    references' cache into ``out_dir`` (absent, empty or an earlier report), as a whole: an
    earlier report's files are replaced all together or not at all, and nothing else there is
    touched (``replacing``)."""
    out = Path(out_dir)
    names: dict[str, str] = {}
    replace_report(out, lambda staging: names.update(_write_files(report, staging)))
    return {key: out / name for key, name in names.items()}


def _write_files(report: Report, out: Path) -> dict[str, str]:
    names = {"csv": "cells.csv", "markdown": "report.md", "json": "report.json"}
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=report.columns, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for row in report.rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    write_text_atomic(out / names["csv"], buffer.getvalue())
    depths = sorted({d for langs in report.table.values() for ds in langs.values() for d in ds})
    for posenc, languages in report.table.items():
        names[f"heatmap_{posenc}"] = f"heatmap_{posenc}.png"
        write_bytes_atomic(out / names[f"heatmap_{posenc}"],
                           heatmap_png(posenc, languages, depths, report.compiled,
                                       report.threshold))
    for posenc, tables in report.distribution_tables.items():
        for name, languages in tables.items():
            stem = distribution_file_stem(posenc, name)
            names[f"heatmap_{stem}"] = f"heatmap_{stem}.png"
            write_bytes_atomic(out / names[f"heatmap_{stem}"],
                               heatmap_png(posenc, languages, depths, report.compiled,
                                           report.threshold))
    for posenc, curve in report.curves.items():
        names[f"budget_{posenc}"] = f"budget_{posenc}.png"
        write_bytes_atomic(out / names[f"budget_{posenc}"],
                           budget_png(posenc, curve, depths, report.threshold))
    if report.compiled_cache:
        names["compiled_cache"] = COMPILED_CACHE
        write_text_atomic(out / COMPILED_CACHE,
                          json.dumps(report.compiled_cache, indent=1, default=str) + "\n")
    write_text_atomic(out / names["markdown"], markdown_report(report))
    write_text_atomic(out / names["json"],
                      json.dumps(report.as_dict(), indent=2, default=str) + "\n")
    return names


def report_lines(report: Report) -> Iterable[str]:
    for line in report.summary:
        yield summary_text(line)
