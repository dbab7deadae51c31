"""The float realization of positional programs (version 3: periodic tables, ALiBi heads):
exact against the interpreter at every position up to its certified length, hosted by the
trainer's model class (posenc sinusoidal-rational / alibi with moduli), trained from, exported."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

import crasp
from crasp import syntax
from crasp.cli import cli
from crasp.compiler import execute, load_model, verify
from crasp.errors import CraspError
from crasp.interpret import evaluate
from crasp.languages.registry import LANGUAGES
from crasp.realize.measure import compile_float
from crasp.realize.realization import LOCAL_SCORE_GAIN, local_heads_certified, realize_float
from crasp.languages import get_language
from crasp.train import metrics
from crasp.train.checkpoint import load_checkpoint
from crasp.train.init import adopt_architecture, load_initial_weights
from crasp.train.loop import build_splits
from crasp.train.presets import resolve_preset
from crasp.train.config import TrainConfig
from crasp.train.model import build_model
from crasp.train.posenc import rational_sinusoid
from strategies import programs

pytestmark = pytest.mark.usefixtures("one_torch_thread")

POSITIONAL_PROGRAMS = {
    **{name: crasp.load_program(f"examples/{name}.crasp") for name in ("aa_star", "contains_ab")},
    **{name: language.program.load() for name, language in LANGUAGES.items()
       if language.program is not None and syntax.is_positional(language.program.load())},
}
LONG = 1000


def realize(program, directory: Path, max_length: int, dtype: str = "float64"):
    summary = compile_float(program, str(directory), max_length, dtype, measure_beyond=False)
    return load_model(directory), summary


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(POSITIONAL_PROGRAMS))
def test_positional_programs_realized_in_float_agree_with_the_interpreter(name, dtype, tmp_path):
    """Every position of every string up to length 8 and of random strings of 10^3 tokens
    (the certified length asked for)."""
    program = POSITIONAL_PROGRAMS[name]
    model, summary = realize(program, tmp_path / "f", LONG, dtype)
    assert summary["certified_length"] == LONG
    result = verify(program, max_exhaustive_length=8, max_random_length=LONG, n_random=3,
                    model=model)
    assert result.ok, result.describe()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(alphabet=("a", "b"), max_depth=3, max_definitions=5, positional=True))
def test_random_positional_programs_realized_in_float_agree(text):
    program = crasp.parse_program(text)
    if crasp.depth_of(program) == 0:
        return  # no layers: the trainer's class needs one
    with tempfile.TemporaryDirectory() as directory:
        model, _ = realize(program, Path(directory) / "f", 200, "float32")
        result = verify(program, max_exhaustive_length=7, max_random_length=200, n_random=3,
                        model=model)
        assert result.ok, (text, result.describe())


def test_the_architecture_hosts_tables_alibi_heads_and_the_conjunction_layer(tmp_path):
    aa_star = realize(POSITIONAL_PROGRAMS["aa_star"], tmp_path / "a", 50)[1]
    assert (aa_star["posenc"], aa_star["heads"], aa_star["layers"]) == (
        "sinusoidal-rational", 1, 1)
    xor = POSITIONAL_PROGRAMS["memory-xor-1-2-4"]
    summary = realize(xor, tmp_path / "x", 50)[1]
    config = json.loads((tmp_path / "x" / "config.json").read_text())
    assert summary["posenc"] == "alibi" and summary["heads"] == 4  # one per offset + uniform
    assert config["alibi_slopes"] == [0.0] + [float(LOCAL_SCORE_GAIN)] * 3
    assert config["moduli"] and summary["d_model"] % 16 == 0
    mixed = crasp.parse_program('alphabet "a" "b"\nodd_a = "a" && mod(2, 1)\n'
                                'p = #odd_a >= 1\n')
    realization = realize_float(mixed, 50, "float64")
    assert realization.mixed, "a token-and-residue conjunction"
    model, summary = realize(mixed, tmp_path / "m", 50)
    assert verify(mixed, max_exhaustive_length=8, max_random_length=50, n_random=4,
                  model=model).ok
    assert summary["layers"] == 2 and summary["hidden_layer_reasons"][0].startswith(
        "conjunction layer")


def test_the_alibi_scores_bound_the_float32_certificate():
    assert local_heads_certified(2 ** 14 - 3 - 2, "float32", 3)
    assert not local_heads_certified(2 ** 14 - 3 - 1, "float32", 3)
    program = POSITIONAL_PROGRAMS["memory-xor-1-2-4"]
    largest = realize_float(program, 10, "float32").largest_certifiable
    assert largest <= 2 ** 14 - 4 - 2
    with pytest.raises(CraspError, match="largest certifiable length"):
        realize_float(program, 2 ** 14, "float32")


def test_the_realization_goes_wrong_without_the_gain_of_the_local_scores(tmp_path):
    """The slope G is what makes the local heads exact: with slope 1 the weights are
    exp(-1), exp(-2), ... and the realization disagrees with the interpreter."""
    program = POSITIONAL_PROGRAMS["memory-xor-1-2-4"]
    realize(program, tmp_path / "f", 100)
    checkpoint = load_checkpoint(tmp_path / "f")
    strings = [list(np.random.default_rng(0).choice(["a", "b"], 60)) for _ in range(8)]
    expected = evaluate(program, strings).output
    assert (execute(checkpoint, strings).output == expected).all()
    checkpoint.module.alibi.slopes[1:] = 1.0
    checkpoint.module.alibi._cache.clear()
    for layer in checkpoint.module.layers:
        layer.attn.q.weight.data /= LOCAL_SCORE_GAIN
    assert not (execute(checkpoint, strings).output == expected).all()


def test_sinusoidal_rational_tables_depend_on_the_position_mod_m():
    config = TrainConfig(depth=1, posenc="sinusoidal-rational", moduli=[2, 3], d_model=8,
                         n_heads=1).validate()
    model = build_model(config, 2)
    table = model.pos(12, "cpu")
    assert torch.equal(table[:6], table[6:12]) and not torch.equal(table[0], table[2])
    assert torch.allclose(model.pos.tables["3"], rational_sinusoid(3, 8))
    with pytest.raises(CraspError, match="needs the moduli"):
        TrainConfig(posenc="sinusoidal-rational").validate()
    with pytest.raises(CraspError, match="moduli are set"):
        TrainConfig(posenc="rope", moduli=[2]).validate()


def test_float_compile_run_and_onnx_export_through_the_cli(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["compile", "examples/contains_ab.crasp", "--target", "float",
                                 "--max-length", "100", "-o", str(tmp_path / "f")])
    assert result.exit_code == 0, result.output
    assert "posenc alibi" in result.output and "length <= 100" in result.output
    ran = runner.invoke(cli, ["run", "--model", str(tmp_path / "f"), "b a b b a"])
    expected = runner.invoke(cli, ["run", "examples/contains_ab.crasp", "b a b b a"])
    assert ran.exit_code == 0 and ran.output.split()[-1] == expected.output.split()[-1]
    pytest.importorskip("onnxruntime")
    import onnxruntime

    exported = runner.invoke(cli, ["export", str(tmp_path / "f"), "--format", "onnx", "-o",
                                   str(tmp_path / "f.onnx")])
    assert exported.exit_code == 0, exported.output
    session = onnxruntime.InferenceSession(str(tmp_path / "f.onnx"))
    strings = [list(np.random.default_rng(1).choice(["a", "b"], 100)) for _ in range(4)]
    ids = np.array([[2] + [["a", "b"].index(t) for t in s] for s in strings], dtype=np.int64)
    decision = session.run(None, {"ids": ids})[0]
    assert (decision[:, 1:] == evaluate(POSITIONAL_PROGRAMS["contains_ab"], strings).output).all()


def test_init_from_compiled_aa_star_is_perfect_at_epoch_zero(tmp_path):
    language = "examples/aa_star.crasp"
    config = adopt_architecture(resolve_preset(
        "default", language=language, depth=1, train_bin=(1, 20), test_bins=[(21, 40)],
        n_train=50, n_test=20, epochs=1, device="cpu", init_from="compiled", lr=1e-6))
    assert (config.posenc, config.moduli, config.norm) == ("sinusoidal-rational", [2], "none")
    vocab, _, _, val, _ = build_splits(config, get_language(language))
    model = build_model(config, len(vocab))
    load_initial_weights(model, config, vocab)
    assert metrics.evaluate(model, val, torch.device("cpu"), config.eval_batch_tokens).perfect
    runner = CliRunner()
    result = runner.invoke(cli, [
        "train", "--language", language, "--depth", "1", "--train-bin", "1:20", "--test-bins",
        "21:40", "--n-train", "50", "--n-test", "20", "--epochs", "1", "--lr", "1e-6",
        "--device", "cpu", "--no-progress", "--init-from", "compiled", "-o",
        str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    evaluated = runner.invoke(cli, ["eval", str(tmp_path / "run"), "--language", language,
                                    "--bins", "21:40,41:60", "--n", "40", "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert [row["exact_match"] for row in json.loads(evaluated.output)] == [1.0, 1.0]


def test_a_deeper_alibi_run_keeps_the_compiled_slopes_and_a_shallower_one_is_refused(tmp_path):
    language = "memory-xor-1-2-4"
    values = dict(language=language, depth=2, train_bin=(1, 30), test_bins=[(31, 60)],
                  n_train=40, n_test=20, epochs=1, device="cpu", init_from="compiled")
    config = adopt_architecture(resolve_preset("default", **values))
    assert config.posenc == "alibi" and config.alibi_slopes[1:] == [float(LOCAL_SCORE_GAIN)] * 3
    vocab, _, _, val, _ = build_splits(config, get_language(language))
    model = build_model(config, len(vocab))
    load_initial_weights(model, config, vocab)
    assert metrics.evaluate(model, val, torch.device("cpu"), config.eval_batch_tokens).perfect
    mixed = tmp_path / "odd_a.crasp"
    mixed.write_text('alphabet "a" "b"\nodd_a = "a" && mod(2, 1)\np = #odd_a >= 1\n')
    with pytest.raises(CraspError, match="has depth 2, so --depth 1 is too small"):
        adopt_architecture(resolve_preset("default", **{**values, "language": str(mixed),
                                                        "depth": 1}))


def test_train_from_scratch_with_sinusoidal_rational_tables(tmp_path):
    result = CliRunner().invoke(cli, [
        "train", "--language", "examples/aa_star.crasp", "--depth", "1", "--d-model", "8",
        "--n-heads", "1", "--posenc", "sinusoidal-rational", "--moduli", "2,3",
        "--train-bin", "1:10", "--test-bins", "11:20", "--n-train", "20", "--n-test", "10",
        "--epochs", "1", "--device", "cpu", "--no-progress", "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (config["posenc"], config["moduli"]) == ("sinusoidal-rational", [2, 3])
    assert load_checkpoint(tmp_path / "run").module.pos.tables["3"].shape == (3, 8)
    refused = CliRunner().invoke(cli, ["train", "--language", "L5", "--posenc",
                                       "sinusoidal-rational", "-o", str(tmp_path / "x")])
    assert refused.exit_code == 2 and "needs the moduli" in refused.output
    assert "Traceback" not in refused.output
