"""Budget as an axis: the improvement records a run writes, and the answer at any budget."""

from __future__ import annotations

import json

import pytest
import torch

from crasp.train import run as run_files
from crasp.train.loop import train
from crasp.train.budget import at_budget, results_at_budget, trained_epochs

from test_train import tiny

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("budget")
    config = tiny(epochs=6, test_bins=[(25, 32), (33, 40)], lr=1e-3, dropout=0.0)
    results = train(config, run_dir, progress=False)
    history = [json.loads(line) for line in open(run_dir / run_files.METRICS_FILE)]
    return results, history


def test_a_record_for_every_validation_improvement(run):
    results, history = run
    records = results["improvements"]
    best_so_far, improved = None, []
    for line in history:  # the trainer's rule, replayed from metrics.jsonl
        key = (line["val_exact_match"], line["val_token_accuracy"])
        if best_so_far is None or key > best_so_far:
            best_so_far = key
            improved.append(line["epoch"])
    assert [r["epoch"] for r in records] == improved
    for record in records:
        assert set(record["bins"]) == {"25:32", "33:40"}
        for metrics in record["bins"].values():
            assert 0.0 <= metrics["exact_match"] <= metrics["token_accuracy"] <= 1.0


def test_the_full_budget_is_the_runs_own_answer(run):
    results, _ = run
    final = at_budget(results, trained_epochs(results))
    assert final["epoch"] == results["best_epoch"]
    for name, metrics in results["bins"].items():
        assert final["bins"][name]["exact_match"] == metrics["exact_match"]
        assert final["bins"][name]["token_accuracy"] == metrics["token_accuracy"]


def test_budget_b_is_the_best_validation_among_the_first_b_epochs(run):
    results, history = run
    for budget in range(1, trained_epochs(results) + 1):
        lines = [line for line in history if line["epoch"] <= budget]
        best = max(lines, key=lambda l: ((l["val_exact_match"], l["val_token_accuracy"]),
                                         -l["epoch"]))
        view = results_at_budget(results, budget)
        assert view["best_epoch"] == best["epoch"]
        assert view["val_exact_match"] == best["val_exact_match"]
        assert view["epochs"] == min(budget, results["epochs"])
    assert results_at_budget(results, 0) is None


def test_a_run_cannot_answer_for_a_budget_it_did_not_train():
    records = [{"trial": 0, "epoch": 1, "step": 5, "val_key": [1, 9], "val_exact_match": 0.5,
                "val_token_accuracy": 0.9, "bins": {"9:9": {"exact_match": 0.25}}}]
    ran_out = {"improvements": records, "epochs": 2, "stopped": "max_epochs",
               "config": {"epochs": 2}}
    assert results_at_budget(ran_out, 2)["bins"] == records[0]["bins"]
    assert results_at_budget(ran_out, 3) is None
    stopped_early = {**ran_out, "stopped": "patience"}
    assert results_at_budget(stopped_early, 50)["best_epoch"] == 1
    assert results_at_budget({"epochs": 2, "config": {"epochs": 2}}, 1) is None  # no records


def test_test_distributions_reach_results_and_the_csv(tmp_path):
    from crasp.train import report as rep
    from crasp.train.results import RunResults

    config = tiny(language="L5", epochs=1, test_bins="25:32,25:32@skewed,25:32@extreme")
    assert config.test_bins == [(25, 32), (25, 32, "skewed"), (25, 32, "extreme")]
    results = train(config, tmp_path / "sweep" / "cells" / "one", progress=False)
    assert set(results["bins"]) == {"25:32", "25:32@skewed", "25:32@extreme"}
    assert set(results["improvements"][0]["bins"]) == set(results["bins"])
    rows, columns = rep.csv_rows([rep.CellResult("one", "sweep", 0, results["config"], {},
                                                 RunResults.from_json(results))])
    assert {"exact_match_25_32_skewed", "exact_match_25_32_extreme"} <= set(columns)
    assert rows[0]["long_bin"] == "25:32"  # the uniform bin is the one the tables read
