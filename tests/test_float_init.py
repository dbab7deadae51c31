"""crasp train --init-from: start from a compiled float realization or another checkpoint."""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.languages import get_language
from crasp.train.init import adopt_architecture, load_initial_weights
from crasp.train.loop import build_splits, train
from crasp.train.metrics import evaluate
from crasp.train.model import build_model
from crasp.train.presets import resolve_preset

torch.set_num_threads(1)


def small(**overrides):
    values = dict(language="L5", depth=3, train_bin=(20, 40), test_bins=[(41, 80)],
                  n_train=200, n_test=50, epochs=1, device="cpu", init_from="compiled",
                  lr=1e-4)  # the gains make the model fragile at lr 1e-3 (see init.py)
    values.update(overrides)
    return resolve_preset("default", **values)


def test_compiled_L5_predictor_is_perfect_before_and_after_an_epoch(tmp_path):
    config = adopt_architecture(small())
    assert (config.norm, config.n_heads, config.posenc) == ("none", 1, "nope")
    vocab, _, _, val, _ = build_splits(config, get_language("L5"))
    model = build_model(config, len(vocab))
    load_initial_weights(model, config, vocab)
    before = evaluate(model, val, torch.device("cpu"), config.eval_batch_tokens)
    assert before.perfect
    results = train(config, tmp_path / "run", progress=False, resume=False)
    assert results["val_exact_match"] == 1.0 and results["epochs"] == 1
    assert results["bins"]["41:80"]["exact_match"] == 1.0


def test_a_deeper_run_gets_identity_layers_and_a_shallower_one_is_refused():
    config = adopt_architecture(small(depth=4))
    vocab, _, _, val, _ = build_splits(config, get_language("L5"))
    model = build_model(config, len(vocab))
    load_initial_weights(model, config, vocab)
    assert evaluate(model, val, torch.device("cpu"), config.eval_batch_tokens).perfect
    with pytest.raises(CraspError, match="depth 3, so --depth 2 is too small"):
        adopt_architecture(small(depth=2))


def test_init_from_a_checkpoint_directory_through_the_cli(tmp_path):
    compiled = CliRunner().invoke(cli, ["compile", "examples/L5_predict.crasp", "--target",
                                        "float", "--max-length", "100", "-o",
                                        str(tmp_path / "f")])
    assert compiled.exit_code == 0, compiled.output
    args = ["train", "--language", "L5", "--depth", "3", "--train-bin", "20:40", "--test-bins",
            "41:80", "--n-train", "100", "--n-test", "20", "--epochs", "1", "--lr", "1e-4",
            "--device", "cpu", "--no-progress", "--init-from", str(tmp_path / "f"), "-o",
            str(tmp_path / "run")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "validation exact match: 1.0000" in result.output
    wrong = CliRunner().invoke(cli, args[:3] + ["--depth", "2"] + args[5:-1] + [
        str(tmp_path / "run2")])
    assert wrong.exit_code == 2 and "the checkpoint has 3 layers" in wrong.output
