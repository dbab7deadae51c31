"""crasp.train.report.budget_losses: the cells whose success at some budget is lost at a larger
one (a later checkpoint validates better and generalizes worse), in report.json and report.md."""

from __future__ import annotations

import json
from pathlib import Path

import crasp.train.report as rep
from crasp.train.report.budget_losses import lost_success, readings

from test_report import write_cell
from test_report_theory import add_records


def synthetic_sweep(root: Path) -> dict[str, str]:
    """L5 cells with per-epoch records (epoch, validation, exact match on 351:400)."""
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
    by_budget = {name: readings(results[name], "351:400") for name in results}
    assert by_budget["lost"] == [(0.4, 0.5), (0.995, 0.9), (0.97, 0.95), (0.9, 1.0)]
    found = lost_success(by_budget["lost"], 0.99)
    assert found is not None
    assert (found.last_success, found.at_success, found.final_budget, found.at_final) == (
        2, (0.995, 0.9), 4, (0.9, 1.0))
    for name in ("kept", "no_improvement", "never"):
        assert lost_success(by_budget[name], 0.99) is None
    # at a lower threshold the lost cell's final 90% is a success: nothing lost
    assert lost_success(by_budget["lost"], 0.9) is None
    # read up to 3 epochs, the lost cell's final reading (97%) still misses 99%
    assert lost_success(readings(results["lost"], "351:400", 3), 0.99).final_budget == 3
    assert lost_success(readings(results["lost"], "351:400", 2), 0.99) is None
    assert readings({"improvements": []}, "351:400") == []
    assert lost_success([], 0.99) is None


def test_the_report_counts_and_names_the_lost_cells(tmp_path):
    cells = synthetic_sweep(tmp_path)
    report = rep.build_report([tmp_path], compiled=False)
    [group] = report.budget_losses
    assert (group["posenc"], group["language"], group["bin"], group["budget"]) == (
        "nope", "L5", "351:400", None)
    assert (group["cells_read"], group["reached"]) == (4, 3)
    assert [(c["id"], c["depth"], c["seed"], c["last_success"], c["final_budget"])
            for c in group["lost"]] == [(cells["lost"], 3, 0, 2, 4)]
    assert (group["lost"][0]["exact_match_at_success"], group["lost"][0]["exact_match_at_final"]
            ) == (0.995, 0.9)
    assert report.as_dict()["budget_losses"] == report.budget_losses
    text = rep.markdown_report(report)
    assert "- NoPE: 1 of 3 cells, over all languages (of 4 with per-epoch test records)" in text
    assert ("- L5 [NoPE]: 1 of 3 — d3 s0 (99.5 long, 90.0 val at 2 epochs → 90.0 long, "
            "100.0 val at 4)") in text
    stricter = rep.build_report([tmp_path], compiled=False, threshold=0.999)
    assert (stricter.budget_losses[0]["reached"], stricter.budget_losses[0]["lost"]) == (2, [])


def test_a_budgeted_report_reads_up_to_its_budget(tmp_path):
    cells = synthetic_sweep(tmp_path)
    at_three = rep.build_report([tmp_path], compiled=False, budget=3)
    [group] = at_three.budget_losses
    assert group["budget"] == 3
    # the kept cell reads 99.2% at 3 epochs (epoch 2 stays selected): a success, not a loss
    assert [(c["id"], c["last_success"], c["final_budget"], c["exact_match_at_final"])
            for c in group["lost"]] == [(cells["lost"], 2, 3, 0.97)]
    assert "miss it at 3 epochs" in rep.markdown_report(at_three)
    assert rep.build_report([tmp_path], compiled=False, budget=2).budget_losses[0]["lost"] == []


def test_no_section_without_per_epoch_records(tmp_path):
    write_cell(tmp_path, "L5", 2, 1, 0.995)
    report = rep.build_report([tmp_path], compiled=False)
    assert report.budget_losses == []
    assert "larger budget loses" not in rep.markdown_report(report)
