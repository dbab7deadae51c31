"""A tiny real sweep, end to end: the real trainer, language library and compiler.

Two depths, one language, one seed, two epochs on a few dozen short strings; then the report,
with the compiled reference program scored on the same test bins.
"""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner

from crasp.cli import cli

TINY = ["--grid", "epochs=2", "n_train=40", "n_test=12", "train_bin=6:12",
        "test_bins=[[13,20],[21,28]]", "d_model=16", "n_heads=2", "d_ff=32", "batch_size=8",
        "warmup_steps=0", "patience=0", "device=cpu"]


def test_tiny_real_sweep_and_report(tmp_path):
    out = tmp_path / "sweep"
    args = ["sweep", "--depths", "1:2", "--languages", "L3", "--posenc", "nope", "--seeds", "1",
            *TINY, "--jobs", "1", "--no-progress", "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    results = sorted(out.glob("cells/*/results.json"))
    assert len(results) == 2
    for path in results:
        data = json.loads(path.read_text())
        assert set(data["bins"]) == {"13:20", "21:28"}
        assert data["config"]["epochs"] == 2 and data["config"]["threads"] == 1
    spec = json.loads((out / "sweep.json").read_text())["specs"][0]
    assert spec["n_cells"] == 2 and spec["grid"]["test_bins"] == [[[13, 20], [21, 28]]]
    # Resume: the same command finds nothing to do.
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "done 2, to run 0" in again.output

    report_dir = tmp_path / "report"
    result = CliRunner().invoke(cli, ["report", str(out), "-o", str(report_dir)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "L3 [NoPE]" in result.stdout
    with open(report_dir / "cells.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert sorted(int(r["depth"]) for r in rows) == [1, 2]
    assert all(r["exact_match_21_28"] != "" for r in rows)
    assert (report_dir / "heatmap_nope.png").read_bytes()[:4] == b"\x89PNG"
    report = json.loads((report_dir / "report.json").read_text())
    assert report["theory_depths"]["L3"] == 1
    compiled = report["compiled"]["L3"]
    # The compiled reference program exists at its depth and scores 100% on every bin.
    assert compiled["status"] == "ok" and compiled["kind"] == "prediction", compiled
    assert compiled["depth"] == 1 and compiled["all_perfect"], compiled
    assert set(compiled["bins"]) == {"13:20", "21:28"}
    assert compiled["bins"]["21:28"]["n"] == 12
    markdown = (report_dir / "report.md").read_text()
    assert "| L3 | 1 |" in markdown and "100.0 (d1) |" in markdown
