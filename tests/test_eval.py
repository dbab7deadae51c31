"""crasp eval: any model (compiled exact, compiled float, trained) scored like the trainer."""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

from crasp.cli import cli
from crasp.train.loop import train
from crasp.train.presets import resolve_preset

torch.set_num_threads(1)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def scored(*args) -> dict:
    result = invoke("eval", *args, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert all({"bin", "exact_match", "token_accuracy", "n"} <= set(row) for row in rows)
    return {row["bin"]: row for row in rows}


@pytest.mark.parametrize("target", ["exact", "float"])
def test_compiled_predictor_scores_perfectly_on_its_language(target, tmp_path):
    options = ["--target", "float", "--max-length", "120"] if target == "float" else []
    result = invoke("compile", "examples/L4_predict.crasp", "-o", tmp_path / "m", *options)
    assert result.exit_code == 0, result.output
    rows = scored(tmp_path / "m", "--language", "L4", "--bins", "20:40,100:120", "--n", "40")
    assert list(rows) == ["20:40", "100:120"]
    assert all(row["exact_match"] == 1.0 and row["token_accuracy"] == 1.0 and row["n"] == 40
               for row in rows.values())


@pytest.mark.parametrize("target", ["exact", "float"])
def test_a_model_never_trained_is_scored_at_any_length(target, tmp_path):
    """A compiled model has no training bin: bins inside, across and beside the default's
    201:250 are scored (they were refused as overlapping it); a trained run still refuses a bin
    that overlaps its own."""
    options = ["--target", "float", "--max-length", "260"] if target == "float" else []
    result = invoke("compile", "examples/majority.crasp", "-o", tmp_path / "m", *options)
    assert result.exit_code == 0, result.output
    rows = scored(tmp_path / "m", "--language", "majority", "--bins",
                  "201:210,245:255,5:9", "--n", "30")
    assert list(rows) == ["201:210", "245:255", "5:9"]
    assert all(row["exact_match"] == 1.0 and row["n"] == 30 for row in rows.values())
    train_tiny_l4(tmp_path / "run")
    refused = invoke("eval", tmp_path / "run", "--language", "L4", "--bins", "10:12")
    assert refused.exit_code == 2 and "overlaps the train bin 8:16" in refused.output


def test_a_wrong_program_scores_below_perfect(tmp_path):
    """L3's predictor is not L4's: eval must notice (it cannot pass by construction)."""
    invoke("compile", "examples/L3_predict.crasp", "-o", tmp_path / "m")
    rows = scored(tmp_path / "m", "--language", "L4", "--bins", "20:40", "--n", "40")
    assert rows["20:40"]["exact_match"] < 1.0


def train_tiny_l4(place) -> dict:
    """One epoch of a tiny L4 run trained on 8..16 and tested on 17:30; its results.json."""
    config = resolve_preset("default", language="L4", depth=1, d_model=16, n_heads=2, d_ff=32,
                            train_bin=(8, 16), test_bins=[(17, 30)], n_train=80, n_test=30,
                            epochs=1, warmup_steps=1, device="cpu")
    return train(config, place, progress=False, resume=False)


def test_a_trained_run_scores_exactly_what_its_results_json_says(tmp_path):
    results = train_tiny_l4(tmp_path / "run")
    rows = scored(tmp_path / "run", "--language", "L4", "--bins", "17:30")
    for key in ("exact_match", "token_accuracy", "n"):
        assert rows["17:30"][key] == results["bins"]["17:30"][key]


def test_errors_are_clear(tmp_path):
    missing = invoke("eval", tmp_path / "none", "--language", "L4", "--bins", "1:5")
    assert missing.exit_code == 2 and "does not exist" in missing.output
    invoke("compile", "examples/dyck1.crasp", "-o", tmp_path / "d")
    wrong = invoke("eval", tmp_path / "d", "--language", "L4", "--bins", "1:5")
    assert wrong.exit_code == 2 and "lacks the language's token(s) a, b" in wrong.output
    bins = invoke("eval", tmp_path / "d", "--language", "dyck1", "--bins", "9")
    assert bins.exit_code == 2 and "Traceback" not in bins.output


def test_eval_counts_the_strings_it_scores_only_with_progress(tmp_path):
    """A trained run's bins take minutes to score (the paper grid's: 5 bins of 1,000 strings
    of up to 400 tokens): --progress counts the strings of every bin together; the scores
    are the same with and without it."""
    result = invoke("compile", "examples/majority.crasp", "-o", tmp_path / "m")
    assert result.exit_code == 0, result.output
    arguments = ["eval", tmp_path / "m", "--language", "majority", "--bins", "5:9,30:40",
                 "--n", "25", "--json"]
    quiet, shown = invoke(*arguments), invoke(*arguments, "--progress")
    assert quiet.exit_code == shown.exit_code == 0, quiet.output + shown.output
    assert quiet.stderr == "" and quiet.stdout == shown.stdout
    assert "scored: 100%" in shown.stderr and "50/50" in shown.stderr
