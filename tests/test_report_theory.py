"""The report says only what the data say: theory checks against proved bounds, selection on
validation by default, seed counts, budget views, and theory lines only where a theorem gives
one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.train import report as rep
from crasp.train.theory_bounds import depth_bound

from test_report import write_cell


def add_records(root: Path, identifier: str, records: list[tuple[int, float, float]],
                configured_epochs: int = 4, stopped: str = "max_epochs") -> None:
    """Per-epoch improvement records (epoch, val exact match, long-bin exact match)."""
    path = root / "cells" / identifier / "results.json"
    results = json.loads(path.read_text())
    results["improvements"] = [
        {"trial": 0, "epoch": epoch, "step": 10 * epoch, "val_key": [int(100 * val), epoch],
         "val_exact_match": val, "val_token_accuracy": 0.9,
         "bins": {"201:250": {"exact_match": 1.0, "token_accuracy": 1.0, "n": 8},
                  "251:300": {"exact_match": long, "token_accuracy": 0.9, "n": 8},
                  "351:400": {"exact_match": long, "token_accuracy": 0.9, "n": 8}}}
        for epoch, val, long in records]
    results["epochs"] = max(epoch for epoch, _, _ in records)
    results["stopped"] = stopped
    results["config"]["epochs"] = configured_epochs
    path.write_text(json.dumps(results))


def test_bounds_only_where_a_theorem_gives_one():
    assert depth_bound("L5", "nope").exact and depth_bound("L5", "nope").upper == 3
    assert depth_bound("L2", "nope").upper == 0
    e5 = depth_bound("E5", "nope")
    assert (e5.lower, e5.upper, e5.exact) == (3, 4, False) and "conjectured" in e5.statement
    assert depth_bound("E3", "nope").exact and depth_bound("E3", "nope").upper == 2
    for posenc in ("rope", "alibi", "learned", "sinusoidal"):
        assert depth_bound("L5", posenc) is None and depth_bound("E5", posenc) is None
    assert depth_bound("dyck1", "nope") is None


def test_theory_checks_list_the_cells_on_the_wrong_side(tmp_path):
    below_both = write_cell(tmp_path, "L5", 2, 0, 1.0, val=1.0)
    below_long = write_cell(tmp_path, "L5", 2, 1, 0.995, val=0.9)
    write_cell(tmp_path, "L5", 2, 2, 0.3, val=0.6)
    write_cell(tmp_path, "L5", 3, 0, 1.0)
    above_fail = write_cell(tmp_path, "L5", 3, 1, 0.5, val=0.8)
    below_e = write_cell(tmp_path, "E5", 2, 0, 1.0)
    write_cell(tmp_path, "E5", 3, 0, 1.0)          # inside the proved range: no check applies
    write_cell(tmp_path, "L5", 1, 0, 1.0, posenc="rope")  # no bound under RoPE
    report = rep.build_report([tmp_path], compiled=False)
    checks = {(c["posenc"], c["language"]): c for c in report.checks}
    assert set(checks) == {("nope", "L5"), ("nope", "E5")}
    l5 = checks["nope", "L5"]
    assert (l5["cells_below"], l5["cells_at_or_above"]) == (3, 2)
    assert [c["id"] for c in l5["below_bound_succeed"]["long"]] == [below_both, below_long]
    assert [c["id"] for c in l5["below_bound_succeed"]["val"]] == [below_both]
    assert [c["id"] for c in l5["at_or_above_bound_fail"]["long"]] == [above_fail]
    assert [c["id"] for c in checks["nope", "E5"]["below_bound_succeed"]["long"]] == [below_e]
    assert checks["nope", "E5"]["cells_at_or_above"] == 0  # depth 3 < the upper bound 4
    # depth 3 of E5 is where the proofs leave it open: a success there is against the conjecture
    e5 = checks["nope", "E5"]
    assert e5["cells_between"] == 1 and len(e5["between_bounds_succeed"]["long"]) == 1
    assert l5["cells_between"] == 0 and l5["between_bounds_succeed"]["long"] == []
    markdown = rep.markdown_report(report)
    assert "L5 [NoPE], ≥ 99% on the longest bin: 2 of 3 cells below depth 3 succeed" in markdown
    assert "L5 [NoPE], 100% validation: 1 of 3 cells below depth 3 succeed" in markdown
    assert "closest below" not in markdown  # said only where no cell crossed
    assert ("E5 [NoPE], ≥ 99% on the longest bin: 1 of 1 cells below depth 3 succeed; 0 of 0 "
            "cells at depth ≥ 4 fail; unproved depth 3: 1 of 1 cells succeed (the conjecture: "
            "none)") in markdown
    assert "unproved" not in next(line for line in markdown.splitlines()
                                  if line.startswith("- L5 [NoPE], ≥ 99%"))
    assert l5["closest_below"]["long"]["id"] == below_both
    assert checks["nope", "E5"]["closest_below"]["val"]["id"] == below_e
    # every counted cell is named, on both sides of the bound
    assert ("2 of 3 cells below depth 3 succeed; 1 of 2 cells at depth ≥ 3 fail — below the "
            "bound: d2 s0 (100.0 long, 100.0 val), d2 s1 (99.5 long, 90.0 val) — failing at or "
            "above: d3 s1 (50.0 long, 80.0 val)") in markdown
    line = {(l["posenc"], l["language"]): l for l in report.summary}
    assert line["rope", "L5"]["theory_depth"] is None
    assert "no proved bound" in rep.summary_text(line["rope", "L5"])
    assert "compiled program: not scored" in rep.summary_text(line["rope", "L5"])  # compiled=False
    assert line["nope", "E5"]["theory_depth"] is None  # only a range is proved
    assert "conjectured" in rep.summary_text(line["nope", "E5"])
    # L5 has 3 seeds at depth 2 and 2 at depth 3: the summary does not say "all 3 seeds"
    assert (line["nope", "L5"]["seeds_min"], line["nope", "L5"]["seeds"]) == (2, 3)
    assert "every seed (2 to 3 per depth) reaches" in rep.summary_text(line["nope", "L5"])


def test_selection_is_on_validation_unless_asked_and_then_labelled(tmp_path):
    for seed in range(2):  # lr 1e-3: better validation, worse test; lr 3e-4 the opposite
        write_cell(tmp_path, "L4", 1, seed, 0.4, lr=1e-3, val=0.9)
        write_cell(tmp_path, "L4", 1, seed, 0.7, lr=3e-4, val=0.5)
    default = rep.build_report([tmp_path], compiled=False)
    assert default.select == "val" and default.table["nope"]["L4"][1].hyper == {"lr": 1e-3}
    assert "SELECTED ON TEST DATA" not in rep.markdown_report(default)
    on_test = rep.build_report([tmp_path], compiled=False, select="long")
    assert on_test.table["nope"]["L4"][1].hyper == {"lr": 3e-4}
    assert "SELECTED ON TEST DATA" in rep.markdown_report(on_test)


def test_one_seed_shows_no_deviation():
    assert rep.seeds_text([0.5]) == "50.0 (n=1)"
    assert rep.seeds_text([0.5, 0.7]) == "60.0 ± 14.1 (n=2)"
    # with the threshold, the successes: a mean hides whether any seed passed
    assert rep.seeds_text([0.995, 0.97], 0.99) == "98.2 ± 1.8 (n=2; 1 ≥ 99%)"
    assert rep.seeds_text([1.0], 0.99) == "100.0 (n=1; 1 ≥ 99%)"


def test_budget_views_and_curves(tmp_path):
    # L4 at depth 2 succeeds from epoch 3; at depth 1 never; one cell has no records.
    for seed in range(2):
        ok = write_cell(tmp_path, "L4", 2, seed, 1.0)
        add_records(tmp_path, ok, [(1, 0.5, 0.3), (3, 1.0, 1.0)], stopped="success")
        shallow = write_cell(tmp_path, "L4", 1, seed, 0.4, val=0.7)
        add_records(tmp_path, shallow, [(1, 0.6, 0.2), (2, 0.7, 0.4)], configured_epochs=2)
    old = write_cell(tmp_path, "L4", 3, 0, 1.0)
    early = rep.build_report([tmp_path], compiled=False, budget=2)
    assert early.data.budget == 2 and early.data.unbudgeted == [old]
    assert early.table["nope"]["L4"][2].mean == pytest.approx(0.3)
    assert early.table["nope"]["L4"][1].mean == pytest.approx(0.4)
    late = rep.build_report([tmp_path], compiled=False, budget=4)
    assert late.table["nope"]["L4"][2].mean == 1.0
    assert 1 not in late.table["nope"]["L4"]  # trained its 2 epochs: cannot answer for 4
    assert sorted(late.data.unbudgeted) == sorted(early.data.unbudgeted + [
        cell.id for cell in early.data.cells if cell.depth == 1])
    curve = late.curves["nope"]["languages"]["L4"]
    assert late.curves["nope"]["budgets"] == [1, 2, 3]
    assert curve["majority"] == [None, None, 2] and curve["all"] == [None, None, 2]
    paths = rep.write_report(late, tmp_path / "out")
    assert paths["budget_nope"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "every cell read at 4 epoch(s)" in paths["markdown"].read_text()


def test_cli_budget_and_select(tmp_path):
    ok = write_cell(tmp_path / "sweep", "L4", 2, 0, 1.0)
    add_records(tmp_path / "sweep", ok, [(1, 0.5, 0.3), (3, 1.0, 1.0)], stopped="success")
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "sweep"), "--no-compiled",
                                      "--budget", "1", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["budget"] == 1 and data["select"] == "val"
    assert data["tables"]["nope"]["L4"]["2"]["mean"] == pytest.approx(0.3)


def test_distribution_bins_get_their_own_table(tmp_path):
    for seed in range(2):
        identifier = write_cell(tmp_path, "L5", 3, seed, 1.0)
        path = tmp_path / "cells" / identifier / "results.json"
        results = json.loads(path.read_text())
        results["bins"]["351:400@skewed"] = {"exact_match": 0.5 + 0.25 * seed,
                                             "token_accuracy": 0.9, "n": 8}
        path.write_text(json.dumps(results))
    report = rep.build_report([tmp_path], compiled=False)
    assert report.table["nope"]["L5"][3].bin == "351:400"  # the uniform bin stays the main one
    markdown = rep.markdown_report(report)
    assert "Exact match (%) on the test bin `351:400@skewed`" in markdown
    assert "| L5 | 62.5 ± 17.7 (n=2; 0 ≥ 99%) |" in markdown
    assert "exact_match_351_400_skewed" in report.columns
    skewed = report.distribution_tables["nope"]["351:400@skewed"]["L5"][3]
    assert (skewed.values, skewed.bin, skewed.all_pass) == ([0.5, 0.75], "351:400@skewed", False)
    assert skewed.hyper == report.table["nope"]["L5"][3].hyper   # the main table's setting
    paths = rep.write_report(report, tmp_path / "out")
    assert paths["heatmap_nope_351-400_skewed"].read_bytes().startswith(b"\x89PNG")
    assert "![nope 351:400@skewed](heatmap_nope_351-400_skewed.png)" in markdown
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["distribution_tables"]["nope"]["351:400@skewed"]["L5"]["3"]["mean"] == 0.625


def test_distribution_bins_are_labelled_by_their_distribution_in_the_compiled_table():
    from crasp.train.report.summary import bin_label

    assert bin_label("351:400") == "[351, 400]"
    assert bin_label("351:400@skewed") == "[351, 400] skewed"
    assert bin_label(None) == "the longest bin"


def test_distribution_checks_count_the_cells_that_pass_uniform_and_name_the_others(tmp_path):
    def cell(language, depth, seed, uniform, **distributions):
        identifier = write_cell(tmp_path, language, depth, seed, uniform)
        path = tmp_path / "cells" / identifier / "results.json"
        results = json.loads(path.read_text())
        for name, score in distributions.items():
            results["bins"][f"351:400@{name}"] = {"exact_match": score, "token_accuracy": 0.9,
                                                  "n": 8}
        path.write_text(json.dumps(results))
        return identifier

    cell("L5", 3, 0, 1.0, skewed=1.0, extreme=0.995)
    failing = cell("L5", 3, 1, 1.0, skewed=0.9, extreme=0.3)
    cell("L5", 3, 2, 0.5, skewed=0.2, extreme=1.0)   # fails uniform: not counted anywhere
    cell("L4", 2, 0, 1.0, skewed=1.0)               # no extreme bin: counted for skewed only
    report = rep.build_report([tmp_path], compiled=False)
    checks = {(c["language"], c["bin"]): c for c in report.distributions}
    assert set(checks) == {("L4", "351:400@skewed"), ("L5", "351:400@skewed"),
                           ("L5", "351:400@extreme")}
    assert (checks["L4", "351:400@skewed"]["passing_uniform"],
            checks["L4", "351:400@skewed"]["also_passing"]) == (1, 1)
    skewed = checks["L5", "351:400@skewed"]
    assert (skewed["passing_uniform"], skewed["also_passing"]) == (2, 1)
    assert [c["id"] for c in skewed["failing"]] == [failing]
    assert skewed["uniform_bin"] == "351:400"
    assert [c["exact_match"] for c in checks["L5", "351:400@extreme"]["failing"]] == [0.3]
    markdown = rep.markdown_report(report)
    assert "- NoPE, [351, 400] skewed: 2 of 3 cells, over all languages" in markdown
    assert "- NoPE, [351, 400] extreme: 1 of 2 cells, over all languages" in markdown
    assert "- L5 [NoPE], [351, 400] skewed: 1 of 2 — below: d3 s1 (100.0 → 90.0)" in markdown
    assert "- L4 [NoPE], [351, 400] skewed: 1 of 1\n" in markdown
    data = json.loads(json.dumps(report.as_dict(), default=str))
    assert data["distribution_checks"] == report.distributions


def test_theory_checks_name_the_closest_cell_when_none_crosses(tmp_path):
    write_cell(tmp_path, "L6", 2, 0, 0.4, val=0.7)
    nearest = write_cell(tmp_path, "L6", 3, 1, 0.8, val=0.6)
    write_cell(tmp_path, "L6", 4, 0, 1.0)
    report = rep.build_report([tmp_path], compiled=False)
    (check,) = report.checks
    assert check["closest_below"]["long"]["id"] == nearest
    markdown = rep.markdown_report(report)
    assert ("L6 [NoPE], ≥ 99% on the longest bin: 0 of 2 cells below depth 4 succeed "
            "(closest below: d3 s1, 80.0 long, 60.0 val)") in markdown
    assert ("L6 [NoPE], 100% validation: 0 of 2 cells below depth 4 succeed "
            "(closest below: d2 s0, 40.0 long, 70.0 val)") in markdown


def test_the_heatmap_never_rounds_a_failing_mean_up_to_100():
    from crasp.train.report.plots import mean_label

    assert mean_label(1.0) == "100"
    assert mean_label(0.996) == "99.6"      # two seeds at 100, one at 98.8: not a success
    assert mean_label(0.99996) == "99.9"    # rounded down, never up to 100
    assert mean_label(0.5) == "50" and mean_label(0.994) == "99"
