"""crasp sweep --search: the paper's per-cell search as a sweep option (parsing, cells, ids,
the recorded spec, the real trainer's selection rule, resume, the report's chosen configs)."""

from __future__ import annotations

import csv
import itertools
import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.train import TrainConfig, resolve_preset, sweep
from crasp.train.loop import train
from crasp.train.sweep import SweepSpec, enumerate_cells

# test_sweep_e2e's tiny cells, without the fields the searches below set
GRID = ["n_train=40", "n_test=12", "train_bin=6:12", "test_bins=[[13,20],[21,28]]",
        "n_heads=2", "d_ff=32", "batch_size=8", "warmup_steps=0", "patience=0", "device=cpu"]

SEARCHABLE = {"d_model": [8, 16, 32], "lr": [1e-2, 3e-3, 1e-3], "epochs": [1, 2],
              "batch_size": [4, 8]}


def test_paper_search_is_the_papers_nested_loops():
    configurations, text = sweep.parse_search(["paper"], TrainConfig)
    assert configurations == [
        {"n_heads": 1, "d_model": d, "lr": lr, "batch_size": 1, "epochs": 25}
        for d in (256, 512) for lr in (1e-4, 1e-5)]
    # the named search is the same as its text, and the same as the knee-deep preset's trials
    assert sweep.parse_search([text], TrainConfig) == (configurations, text)
    knee = resolve_preset("knee-deep")
    assert [(c["d_model"], c["lr"]) for c in configurations] == \
        [(e["d_model"], e["lr"]) for e in knee.search]
    assert sweep.parse_search([], TrainConfig) is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(SEARCHABLE)), min_size=1, max_size=4, unique=True),
       st.data())
def test_search_is_the_ordered_product_first_key_outermost(keys, data):
    values = {key: data.draw(st.lists(st.sampled_from(SEARCHABLE[key]), min_size=1,
                                      max_size=3, unique=True)) for key in keys}
    items = [f"{key}={','.join(map(str, points))}" for key, points in values.items()]
    split = data.draw(st.integers(0, len(items)))  # one option or several: the same search
    entries = [" ".join(items[:split]), " ".join(items[split:])]
    configurations, text = sweep.parse_search([e for e in entries if e], TrainConfig)
    assert configurations == [dict(zip(keys, point))
                              for point in itertools.product(*values.values())]
    assert sweep.parse_search([text], TrainConfig)[0] == configurations


@pytest.mark.parametrize("entries, message", [
    (["papr"], "neither a named search"),
    (["d_model=64", "lr"], "neither a named search"),
    (["seed=1,2"], "sweep axis"),
    (["d_modle=64"], "did you mean d_model"),
    (["lr=fast"], "cannot parse"),
    (["lr=1e-3", "lr=1e-4"], "given twice"),
])
def test_bad_searches_are_refused(entries, message):
    with pytest.raises(CraspError, match=message) as error:
        sweep.parse_search(entries, TrainConfig)
    assert "--search" in str(error.value) or "named search" in str(error.value)


def test_search_cells_carry_the_search_in_config_id_and_setting():
    configurations, text = sweep.parse_search(["d_model=16,32 lr=1e-3,3e-4"], TrainConfig)
    plain = SweepSpec(depths=[1, 2], languages=["L4"], seeds=[0, 1])
    searched = SweepSpec(depths=[1, 2], languages=["L4"], seeds=[0, 1], search=configurations,
                         search_text=text)
    plain_cells, cells = enumerate_cells(plain), enumerate_cells(searched)
    assert [c.index for c in cells] == list(range(4))
    for before, cell in zip(plain_cells, cells):
        assert cell.config["search"] == configurations
        assert cell.hyper == {"search": text} and before.hyper == {}
        assert cell.id != before.id and cell.id.rsplit("-", 1)[0] == before.id.rsplit("-", 1)[0]
        assert [t.d_model for t in cell.config_object.trials()] == [16, 16, 32, 32]
    assert "search" not in plain.as_dict() and searched.as_dict()["search"] == configurations
    # another search is another cell
    other = SweepSpec(depths=[1], languages=["L4"], seeds=[0],
                      search=configurations[::-1], search_text="reversed")
    assert enumerate_cells(other)[0].id != cells[0].id


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_search_cells_shard_like_any_cells(count):
    configurations, text = sweep.parse_search(["paper"], TrainConfig)
    cells = enumerate_cells(SweepSpec(depths=[3, 4, 5], languages=["L6", "L7"], seeds=[0, 1],
                                      search=configurations, search_text=text))
    shards = [sweep.shard_cells(cells, (i, count)) for i in range(count)]
    assert sorted(c.id for shard in shards for c in shard) == sorted(c.id for c in cells)
    assert len({c.id for c in cells}) == len(cells) == 12


def test_cli_records_the_search_and_refuses_a_field_in_both(tmp_path):
    out = tmp_path / "sweep"
    base = ["sweep", "--depths", "1", "--languages", "L3", "-o", str(out)]
    both = CliRunner().invoke(cli, [*base, "--grid", "lr=1e-3", "--search", "lr=1e-2,1e-3"])
    assert both.exit_code == 2 and "--grid and --search both set lr" in both.output
    assert not out.exists()
    listed = CliRunner().invoke(cli, [*base, "--search", "paper", "--dry-run"])
    assert listed.exit_code == 0, listed.output
    assert "search=n_heads=1 d_model=256,512" in listed.stdout
    shown = " ".join(CliRunner().invoke(cli, ["sweep", "--help"]).output.split())
    assert "--search paper|KEY=V1,V2..." in shown and "reaches 100% validation" in shown
    assert f"'paper' is the paper's: {sweep.PAPER_SEARCH}." in shown


def tiny_args(out, search: str) -> list[str]:
    return ["sweep", "--depths", "1", "--languages", "L3", "--seeds", "2", "--grid", *GRID,
            "--search", search, "--jobs", "1", "--no-progress", "-o", str(out)]


def check_selection_rule(results: dict, configurations: list[dict]) -> None:
    """The paper's rule: trials in order, the first to reach 100% validation exact match ends
    the search and is chosen; when none does, every trial ran and the chosen one has the best
    validation exact match (the first of equals)."""
    trials = results["trials"]
    assert [t["overrides"] for t in trials] == configurations[:len(trials)]
    successes = [t["trial"] for t in trials if t["success"]]
    if successes:
        assert successes == [len(trials) - 1] == [results["best_trial"]]
        assert results["success"] and results["val_exact_match"] == 1.0
    else:
        assert len(trials) == len(configurations) and not results["success"]
        best = max(t["val_exact_match"] for t in trials)
        assert results["best_trial"] == next(t["trial"] for t in trials
                                             if t["val_exact_match"] == best)
    assert results["selected"] == configurations[results["best_trial"]]


def test_real_search_sweep_selects_resumes_and_reports(tmp_path):
    search = "d_model=8,16 lr=3e-2,1e-3 epochs=2"
    configurations, _ = sweep.parse_search([search], TrainConfig)
    out = tmp_path / "sweep"
    result = CliRunner().invoke(cli, tiny_args(out, search))
    assert result.exit_code == 0, result.output + repr(result.exception)
    paths = sorted(out.glob("cells/*/results.json"))
    assert len(paths) == 2
    for path in paths:
        check_selection_rule(json.loads(path.read_text()), configurations)
    spec = json.loads((out / "sweep.json").read_text())["specs"][0]
    assert spec["search"] == configurations and "--search" in spec["commands"][0]
    assert "done 2, to run 0" in CliRunner().invoke(cli, tiny_args(out, search)).output

    # A search stopped after one epoch resumes mid-search to the same results as one run
    # straight through (the search is the trainer's state, checkpointed every epoch).
    cell = enumerate_cells(SweepSpec(depths=[1], languages=["L3"], seeds=[1],
                                     grid=sweep.parse_grid(GRID, TrainConfig),
                                     search=configurations, search_text=search))[0]
    interrupted = tmp_path / "interrupted"
    assert train(cell.config_object, interrupted, max_epochs_this_session=1) is None
    resumed = train(cell.config_object, interrupted)
    straight = json.loads((out / "cells" / cell.id / "results.json").read_text())
    for key in ("trials", "best_trial", "selected", "bins", "val_exact_match"):
        assert resumed[key] == straight[key], key

    report_dir = tmp_path / "report"
    result = CliRunner().invoke(cli, ["report", str(out), "-o", str(report_dir)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    report = json.loads((report_dir / "report.json").read_text())
    choices = report["search_choices"]
    assert [(c["language"], c["depth"], c["seed"]) for c in choices] == [("L3", 1, 0), ("L3", 1, 1)]
    for choice, path in zip(choices, paths):
        results = json.loads((out / "cells" / choice["id"] / "results.json").read_text())
        assert choice["selected"] == results["selected"]
        assert choice["trials_run"] == len(results["trials"])
        assert choice["trials_in_search"] == len(configurations)
    with open(report_dir / "cells.csv", newline="") as file:
        rows = {row["cell_id"]: row for row in csv.DictReader(file)}
    for choice in choices:
        row = rows[choice["id"]]
        assert json.loads(row["selected"]) == choice["selected"]
        for key, value in choice["selected"].items():
            assert float(row[key]) == value, key
    # A row states the settings of the trial that produced its numbers: with a later trial
    # selected (the record rewritten so; the tiny cells above all chose their first), the
    # row's d_model and lr are that trial's, not the first trial's.
    rewritten = json.loads(paths[0].read_text())
    last = len(configurations) - 1
    rewritten.update(best_trial=last, selected=configurations[last])
    paths[0].write_text(json.dumps(rewritten))
    later = CliRunner().invoke(cli, ["report", str(out), "-o", str(tmp_path / "later")])
    assert later.exit_code == 0, later.output + repr(later.exception)
    with open(tmp_path / "later" / "cells.csv", newline="") as file:
        row = {row["cell_id"]: row for row in csv.DictReader(file)}[paths[0].parent.name]
    assert configurations[last] != configurations[0]
    for key, value in configurations[last].items():
        assert float(row[key]) == value, key
    # the budget view reads a search cell too (every trial's improvements are recorded)
    budget = CliRunner().invoke(cli, ["report", str(out), "--budget", "1", "-o",
                                      str(tmp_path / "budget-1")])
    assert budget.exit_code == 0, budget.output + repr(budget.exception)
    markdown = (report_dir / "report.md").read_text()
    assert "## Search: the configuration each cell chose" in markdown
    first = choices[0]["selected"]
    assert f"d_model={first['d_model']} lr={first['lr']} epochs=2" in markdown
