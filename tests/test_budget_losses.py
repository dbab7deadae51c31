"""docs/results/budget_losses.py, which the results READMEs use to name the cells whose success at
some budget is lost at a larger one (a later checkpoint validates better and generalizes worse)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from test_report import write_cell
from test_report_theory import add_records

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "results" / "budget_losses.py"
spec = importlib.util.spec_from_file_location("budget_losses", SCRIPT)
budget_losses = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = budget_losses  # dataclasses look their module up there
spec.loader.exec_module(budget_losses)


def synthetic_sweep(root: Path) -> dict[str, str]:
    """Four L5 cells with per-epoch records (epoch, validation, exact match on 351:400)."""
    lost = write_cell(root, "L5", 3, 0, 0.9)
    add_records(root, lost, [(1, 0.5, 0.4), (2, 0.9, 0.995), (3, 0.95, 0.97), (4, 1.0, 0.9)])
    kept = write_cell(root, "L5", 3, 1, 1.0)
    add_records(root, kept, [(1, 0.5, 0.4), (2, 0.9, 0.992), (4, 1.0, 1.0)])
    no_improvement = write_cell(root, "L5", 3, 2, 0.999)
    add_records(root, no_improvement, [(1, 0.8, 0.999), (2, 0.9, 0.999)])
    never = write_cell(root, "L5", 2, 0, 0.6)
    add_records(root, never, [(1, 0.5, 0.3), (4, 0.8, 0.6)])
    write_cell(root, "L5", 2, 1, 0.995)  # no per-epoch records: not read at any budget
    return {"lost": lost, "kept": kept, "no_improvement": no_improvement, "never": never}


def test_only_a_success_that_the_final_reading_misses_is_lost(tmp_path):
    cells = synthetic_sweep(tmp_path)
    results = {name: json.loads((tmp_path / "cells" / cell / "results.json").read_text())
               for name, cell in cells.items()}
    by_budget = {name: budget_losses.readings(results[name], "351:400") for name in results}
    found = budget_losses.lost_success(by_budget["lost"], cells["lost"], "L5", 0.99)
    assert found is not None
    assert (found.last_success, found.at_success, found.final_budget, found.at_final) == (
        2, 0.995, 4, 0.9)
    assert (found.val_at_success, found.val_at_final) == (0.9, 1.0)
    for name in ("kept", "no_improvement", "never"):
        assert budget_losses.lost_success(by_budget[name], cells[name], "L5", 0.99) is None
    # at a lower threshold the lost cell's final 90% is a success: nothing lost
    assert budget_losses.lost_success(by_budget["lost"], cells["lost"], "L5", 0.9) is None
    no_records = budget_losses.readings({"improvements": []}, "351:400")
    assert budget_losses.lost_success(no_records, "x", "L5", 0.99) is None


def test_the_listing_counts_and_names_the_lost_cells(tmp_path, capsys):
    cells = synthetic_sweep(tmp_path)
    budget_losses.main([str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("4 cells with per-epoch records; 3 reach >= 0.99 on 351:400 at some "
                      "budget; 1 of them miss it at their final budget")
    assert out[1] == (f"  {cells['lost']}: 99.5% (val 90.0%) at 2 epochs -> 90.0% (val 100.0%) "
                      "at 4")
    assert out[2] == "by language (lost / reached at some budget): L5 1 / 3"
    budget_losses.main([str(tmp_path), "--bin", "251:300", "--threshold", "0.999"])
    assert capsys.readouterr().out.splitlines()[0].endswith(
        "2 reach >= 0.999 on 251:300 at some budget; 0 of them miss it at their final budget")
