"""``crasp.util.json_shape``, and the report over sweep records with any value damaged.

Fuzzing ``crasp report`` over a sweep's records found 24 kinds of traceback: a cell.json that
is not an object or whose ``config`` is a number, a results.json whose ``trials``,
``improvements``, ``environment`` or ``config`` has the wrong shape, a session whose
``command`` is a number or whose ``elapsed_s`` is NaN. Each file's shape is now declared and
checked on reading: a damaged cell is listed as failed, naming the file and the place; a
damaged session is left out, as an unreadable one is.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from json_places import replaced_at
from crasp.errors import CraspError
from crasp.train.report import build_report, markdown_report
from crasp.train.results import RESULTS_SHAPE, RunResults
from crasp.util.json_shape import (ANY, BOOLEAN, FINITE, INTEGER, NUMBER, STRING, Count, ListOf,
                                   MapOf, Object, OrNull, mismatch)

RECORDS = Path(__file__).resolve().parents[1] / "docs/results/third-edition/records"
SWEEP = RECORDS / "alibi-one-head"   # five real cells, with budget records and a session


@pytest.mark.parametrize("value, shape, expected", [
    (1, NUMBER, None), (1.5, NUMBER, None), (True, NUMBER, "expected a number, got true"),
    (float("nan"), NUMBER, None), (float("nan"), FINITE, "expected a finite number, got NaN"),
    (float("inf"), FINITE, "expected a finite number, got Infinity"),
    (2, INTEGER, None), (2.0, INTEGER, "expected an integer, got 2.0"),
    (False, INTEGER, "expected an integer, got false"), ("x", STRING, None),
    (1, STRING, "expected a string, got 1"), (True, BOOLEAN, None),
    (0, BOOLEAN, "expected true or false, got 0"), ({"a": [1]}, ANY, None),
    (0, Count(5), None), (5, Count(5), None),
    (6, Count(5), "expected an integer from 0 to 5, got 6"),
    (-1, Count(5), "expected an integer from 0 to 5, got -1"),
    (10**30, OrNull(Count(10**6)), "expected an integer from 0 to 1,000,000 or null, got "
                                   "1000000000000000000000000000000"),
    (True, Count(5), "expected an integer from 0 to 5, got true"),
    (None, OrNull(INTEGER), None), ("x", OrNull(INTEGER), "expected an integer or null, got \"x\""),
    ([1, 2, "3"], ListOf(INTEGER), "[2]: expected an integer, got \"3\""),
    ({"a": 1}, ListOf(INTEGER), "expected a list, got {\"a\": 1}"),
    ({"a": 1, "b": "2"}, MapOf(INTEGER), "b: expected an integer, got \"2\""),
    ([1], MapOf(ANY), "expected an object, got [1]"),
    ({"x": 1}, Object({"y": INTEGER}, frozenset({"y"})), "y: missing"),
    ({"y": {"z": [0, None]}, "other": "anything"},
     Object({"y": Object({"z": ListOf(INTEGER)})}), "y.z[1]: expected an integer, got null"),
])
def test_mismatch_names_the_first_place_that_departs(value, shape, expected):
    assert mismatch(value, shape) == expected


def test_the_results_shape_names_every_field_of_run_results():
    """One list of fields: the shape checks every field the dataclass reads."""
    import dataclasses

    fields = {item.name for item in dataclasses.fields(RunResults)} - {"extra"}
    assert set(RESULTS_SHAPE.fields) == fields


def test_every_committed_results_file_fits_its_shape():
    paths = sorted(RECORDS.glob("*/cells/*/results.json")) + sorted(
        RECORDS.glob("*/cells/*/trials/*/results.json"))
    assert len(paths) > 300
    for path in paths:
        RunResults.read(path.parent)


WRONG_VALUES = [None, True, -1, 1.5, float("nan"), "x", [], [1], {}, {"a": 1}, [[1, 2]]]


def _places(record):
    """Every top-level key, and every key of the first element of a list of objects or the
    first value of an object of objects (a bin, a budget record, a trial)."""
    for key, value in record.items():
        yield (key,)
        inner = value[0] if isinstance(value, list) and value else (
            next(iter(value.values()), None) if isinstance(value, dict) else None)
        first = 0 if isinstance(value, list) else (next(iter(value), None)
                                                   if isinstance(value, dict) else None)
        if isinstance(inner, dict):
            for inner_key in inner:
                yield (key, first, inner_key)


def test_a_report_over_records_with_any_value_damaged_lists_the_cell_or_refuses_in_words(
        tmp_path):
    cell = sorted((SWEEP / "cells").iterdir())[0]
    files = [cell / "results.json", cell / "cell.json", SWEEP / "sweep.json",
             *sorted((SWEEP / "sessions").glob("*.json"))]
    outcomes = {"reported": 0, "listed": 0, "refused": 0}
    index = 0
    for path in files:
        record = json.loads(path.read_text())
        for place in _places(record):
            index += 1
            for value in [WRONG_VALUES[(index * 2 + k) % len(WRONG_VALUES)] for k in range(2)]:
                target = tmp_path / "sweep"
                shutil.copytree(SWEEP, target)
                (target / path.relative_to(SWEEP)).write_text(
                    json.dumps(replaced_at(record, place, value)))
                try:
                    for budget in (None, 3) if path.name == "results.json" else (None,):
                        report = build_report([target], compiled=False, budget=budget)
                        markdown_report(report)
                        json.dumps(report.as_dict(), default=str)
                    listed = [e for e in report.data.errors if e["id"] == cell.name]
                    outcomes["listed" if listed else "reported"] += 1
                except CraspError as error:
                    assert str(target) in str(error), error
                    outcomes["refused"] += 1
                shutil.rmtree(target)
    assert outcomes["listed"] > 20 and outcomes["refused"] >= 1, outcomes


def test_the_report_command_names_a_damaged_cell_and_reports_the_rest(tmp_path):
    target = tmp_path / "sweep"
    shutil.copytree(SWEEP, target)
    cell = sorted((target / "cells").iterdir())[0]
    results = json.loads((cell / "results.json").read_text())
    results["improvements"][0]["epoch"] = "3"
    (cell / "results.json").write_text(json.dumps(results))
    outcome = CliRunner().invoke(cli, ["report", str(target), "-o", str(tmp_path / "report"),
                                       "--no-compiled", "--no-progress"])
    assert outcome.exit_code == 0, outcome.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert f"`{cell.name}` failed: unreadable results: " in text
    assert "improvements[0].epoch: expected an integer from 0 to 1,000,000, got \"3\"" in text
    written = json.loads((tmp_path / "report" / "report.json").read_text())
    assert written["cells_done"] == 4
    assert [failed["id"] for failed in written["cells_failed"]] == [cell.name]


@pytest.mark.parametrize("epochs, listed", [(100_000, False), (10**30, True)])
def test_a_run_claiming_many_epochs_is_reported_at_the_cost_of_its_records(tmp_path, epochs,
                                                                          listed):
    """The fuzz's OverflowError: ``epochs`` of 10^30 reached ``range`` in the budget curves.
    Counts past the trainer's limit are refused; within it, the curves are computed at the
    budgets where a reading changes and carried over the rest (``aggregate._changes``), so a
    claim of 100,000 epochs is reported without 100,000 evaluations of every table."""
    target = tmp_path / "sweep"
    shutil.copytree(SWEEP, target)
    cell = sorted((target / "cells").iterdir())[0]
    results = json.loads((cell / "results.json").read_text())
    results["epochs"] = epochs
    (cell / "results.json").write_text(json.dumps(results))
    report = build_report([target], compiled=False)
    assert [e["id"] for e in report.data.errors] == ([cell.name] if listed else [])
    (curve,) = report.curves.values()
    assert len(curve["budgets"]) == (max(
        json.loads(path.read_text())["epochs"] for path in SWEEP.glob("cells/*/results.json"))
        if listed else epochs)


def curves_budget_by_budget(data, threshold, select):
    """The plain reference: every table evaluated at every budget."""
    import dataclasses

    from crasp.train.budget import trained_epochs
    from crasp.train.report.aggregate import aggregate, theory_checks
    from crasp.train.report.loading import at_budget

    recorded = [cell for cell in data.cells if cell.results.improvements]
    budgets = list(range(1, max(trained_epochs(c.results.to_json()) for c in recorded) + 1))
    curves = {}
    for budget in budgets:
        view = at_budget(dataclasses.replace(data, cells=recorded), budget)
        against = {(c["posenc"], c["language"]): len(c["below_bound_succeed"]["long"])
                   for c in theory_checks(view.cells, threshold)}
        for posenc, languages in aggregate(view.cells, threshold, select).items():
            for language, by_depth in languages.items():
                curve = curves.setdefault(posenc, {"budgets": budgets, "languages": {}})[
                    "languages"].setdefault(language, {key: [None] * len(budgets)
                                                       for key in ("majority", "all")})
                curve.setdefault("contradictions", [0] * len(budgets))
                curve["majority"][budget - 1] = min(
                    (d for d, a in by_depth.items() if a.majority_pass), default=None)
                curve["all"][budget - 1] = min(
                    (d for d, a in by_depth.items() if a.all_pass), default=None)
                curve["contradictions"][budget - 1] = against.get((posenc, language), 0)
    return curves


@pytest.mark.parametrize("records", ["alibi-one-head", "train-length"])
def test_budget_curves_equal_every_budget_evaluated(records):
    """Both record sets have budgets where no reading changes (16 of 20 and 28 of 30 budgets
    are change points), so the carried spans are compared too."""
    from crasp.train.report.aggregate import budget_curves
    from crasp.train.report.loading import load_sweeps

    data = load_sweeps([RECORDS / records])
    for threshold in (0.9, 0.99):
        for select in ("val", "long"):
            assert budget_curves(data, threshold, select) == curves_budget_by_budget(
                data, threshold, select)
