"""``crasp train --precision P.S``: the trainer's fixed-precision class is the model format's.

The trainer's forward pass and ``crasp.compiler.execute`` (exact mode) on the converted model
must give the same scores bit for bit at every real position, for any weights of the class:
random ones (generated widths, heads, depths, precisions) and trained ones.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp.compiler.executor import _encode, execute
from crasp.train import resolve_preset
from crasp.train.cli import train_command
from crasp.train.config import TrainConfig
from crasp.train.fixed_precision import Grid, format_model, parse_precision
from crasp.train.model import build_model

torch.set_num_threads(1)
VOCAB = ("a", "b")


def _config(**overrides) -> TrainConfig:
    values = dict(language="L3", depth=2, d_model=4, n_heads=1, d_ff=4, precision="6.2",
                  train_bin=(4, 12), test_bins=[(13, 20)], n_train=200, n_test=50)
    values.update(overrides)
    return resolve_preset("default", **values)


def _random_inputs(seed: int, count: int, longest: int, vocab=VOCAB) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [list(rng.choice(list(vocab), size=int(rng.integers(0, longest + 1))))
            for _ in range(count)]


def assert_bit_for_bit(module, config, inputs) -> np.ndarray:
    """The module's scores equal the executor's on the format model at every real position;
    returns the executor's decisions there (so a caller can check they are not constant)."""
    model = format_model(module, VOCAB, config)
    ids, lengths = _encode(model, inputs)
    with torch.no_grad():
        trainer = module.eval()(torch.as_tensor(ids)).numpy()
    executor = execute(model, inputs).scores
    real = np.arange(ids.shape[1])[None, :] <= lengths[:, None]
    assert trainer.dtype == executor.dtype == np.float64
    mismatch = np.argwhere((trainer != executor) & real)
    assert not len(mismatch), (f"first mismatch at {mismatch[0]}: trainer "
                               f"{trainer[tuple(mismatch[0])]!r}, executor "
                               f"{executor[tuple(mismatch[0])]!r}")
    return executor[real] > 0


@settings(max_examples=25, deadline=None)
@given(total=st.integers(3, 9), frac=st.integers(0, 4), heads=st.sampled_from([1, 2]),
       width=st.sampled_from([2, 4, 6]), depth=st.integers(1, 3), hidden=st.integers(1, 5),
       seed=st.integers(0, 10 ** 6), scale=st.sampled_from([0.5, 1.0, 3.0]))
def test_random_models_of_the_class_agree_with_the_executor_bit_for_bit(
        total, frac, heads, width, depth, hidden, seed, scale):
    frac = min(frac, total - 1)
    config = _config(precision=f"{total}.{frac}", n_heads=heads, d_model=width, depth=depth,
                     ffn_widths=[[hidden]] * depth)
    torch.manual_seed(seed)
    module = build_model(config, len(VOCAB))
    with torch.no_grad():  # larger weights reach saturation and all-zero attention weights
        for parameter in module.parameters():
            parameter.mul_(scale)
    assert_bit_for_bit(module, config, _random_inputs(seed, 40, 25))


@settings(max_examples=20, deadline=None)
@given(total=st.integers(3, 9), frac=st.integers(0, 4), heads=st.sampled_from([1, 2]),
       depth=st.integers(1, 2), seed=st.integers(0, 10 ** 6),
       scale=st.sampled_from([0.5, 1.0, 3.0]), weight_chunk=st.sampled_from([1, 40, 10 ** 6]),
       summand_chunk=st.sampled_from([1, 50, 997]), by_distinct=st.booleans())
def test_both_ways_of_summing_in_any_chunks_change_no_bit(
        total, frac, heads, depth, seed, scale, weight_chunk, summand_chunk, by_distinct):
    """N = sum_j R(w_ij v_j) is summed either by distinct weights (a 0/1 matrix product per
    weight value) or summand by summand, and the queries go in chunks of about
    WEIGHT_CHUNK_ELEMENTS weights (then SUMMAND chunks), each reading only the keys up to its
    last query. Either way, in chunks of one query, a few or all, the scores are the
    executor's bit for bit, and the gradient is that of one chunk summed by distinct weights."""
    from unittest import mock

    from crasp.train import exact_attention

    frac = min(frac, total - 1)
    config = _config(precision=f"{total}.{frac}", n_heads=heads, d_model=4, depth=depth,
                     ffn_widths=[[3]] * depth)
    torch.manual_seed(seed)
    module = build_model(config, len(VOCAB))
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.mul_(scale)
    inputs = _random_inputs(seed, 6, 30)
    ids = torch.as_tensor(_encode(format_model(module, VOCAB, config), inputs)[0])

    def gradient():
        module.zero_grad()
        module.train()(ids).sum().backward()
        return [parameter.grad.clone() for parameter in module.parameters()]

    with mock.patch.object(exact_attention, "_by_distinct_weights", lambda *_: True):
        whole = gradient()
    with mock.patch.object(exact_attention, "WEIGHT_CHUNK_ELEMENTS", weight_chunk), \
            mock.patch.object(exact_attention, "QUERY_CHUNK_ELEMENTS", summand_chunk), \
            mock.patch.object(exact_attention, "_by_distinct_weights",
                              lambda *_: by_distinct):
        assert_bit_for_bit(module, config, inputs)
        chunked = gradient()
    # the same up to float64 summation order (a key's gradient sums over the chunks)
    assert all(torch.allclose(a, b, rtol=1e-9, atol=1e-12) for a, b in zip(whole, chunked))


def test_a_trained_run_agrees_with_the_executor_bit_for_bit(tmp_path):
    from crasp.train.api import train
    from crasp.train import run as files

    train(_config(epochs=3), run_dir=tmp_path)
    config = TrainConfig.from_dict(json.loads((tmp_path / "config.json").read_text()))
    module = build_model(config, len(VOCAB))
    files.load_weights(tmp_path / files.BEST_FILE, module)
    decisions = assert_bit_for_bit(module, config, _random_inputs(1, 300, 30))
    assert decisions.size > 1000


def test_the_rounding_is_the_formats_R_and_its_gradient_goes_straight_through():
    grid = Grid(5, 2)
    x = torch.tensor([-9.0, -4.1, -0.01, 0.0, 0.26, 3.74, 3.75, 3.99, 100.0],
                     dtype=torch.float64, requires_grad=True)
    reference = np.clip(np.floor(x.detach().numpy() * 4), -16, 15) / 4   # docs/model-format.md
    rounded = grid.round(x)
    assert rounded.detach().numpy().tolist() == reference.tolist()
    rounded.sum().backward()
    assert x.grad.tolist() == [1.0] * len(x)


def test_every_parameter_learns_through_the_rounding():
    config = _config()
    torch.manual_seed(0)
    module = build_model(config, len(VOCAB))
    ids = torch.tensor([[2, 0, 0, 1, 0, 1], [2, 1, 0, 0, 3, 3]])
    module(ids).pow(2).sum().backward()
    silent = [name for name, p in module.named_parameters()
              if p.grad is None or not p.grad.abs().sum() > 0]
    assert silent == []


def test_precision_text_and_the_class_are_checked():
    assert parse_precision("8.4") == (8, 4) and parse_precision("8") == (8, 0)
    for bad in ("8.8", "1", "8.x", "", "54", "8.4.1"):
        with pytest.raises(Exception, match="precision"):
            parse_precision(bad)
    config = _config(precision="8.4")
    assert (config.norm, config.dropout) == ("none", 0.0)   # the preset gives way
    for name, value in [("norm", "pre"), ("posenc", "rope"), ("activation", "gelu"),
                        ("attention", "hardmax"), ("dropout", 0.1)]:
        with pytest.raises(Exception, match=f"model format's class, which has {name}"):
            _config(**{name: value})
    with pytest.raises(Exception, match="more than float64's 53"):
        _config(precision="14.4", d_model=64, n_heads=1)


def test_train_cli_precision_option(tmp_path):
    runner = CliRunner()
    shown = runner.invoke(train_command, ["--precision", "8.4", "--print-config"])
    assert shown.exit_code == 0, shown.output
    config = json.loads(shown.output)
    assert config["precision"] == "8.4" and config["norm"] == "none"
    for args in (["--precision", "8.9"], ["--precision", "8.4", "--norm", "post"]):
        refused = runner.invoke(train_command, [*args, "--print-config"])
        assert refused.exit_code == 2 and "Traceback" not in refused.output
        assert "precision" in refused.output


def test_a_trained_run_of_the_class_decompiles_to_a_program_that_agrees_everywhere(tmp_path):
    """``crasp decompile RUN`` on a --precision run: the program against the executor at every
    position of every string up to length 8 (511) and of 1,000 random ones up to length 60."""
    from crasp.cli import cli
    from crasp.models import load_model
    from crasp.train.api import train

    run = tmp_path / "run"
    train(_config(precision="5.2", d_model=3, depth=1, d_ff=4, epochs=3), run_dir=run)
    runner = CliRunner()
    answered = runner.invoke(cli, ["run", "--model", str(run), "a b b a"])
    assert answered.exit_code == 0 and answered.output.startswith("1 a b b a: ")
    result = runner.invoke(cli, ["decompile", str(run), "-o", str(tmp_path / "p.crasp"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    program = crasp.load_program(tmp_path / "p.crasp")
    model = load_model(run, "decompile").executable
    inputs = [list(w) for n in range(9) for w in itertools.product(VOCAB, repeat=n)]
    inputs += _random_inputs(7, 1000, 60)
    expected, got = execute(model, inputs), crasp.evaluate(program, inputs)
    assert len(inputs) >= 1000
    assert np.array_equal(expected.output, got.output)
    assert np.array_equal(expected.accept, got.accept)
    assert crasp.depth_of(program) <= 1


@pytest.mark.parametrize("only_trial", [None, 1], ids=["whole run", "search part"])
def test_a_run_killed_while_writing_its_format_model_is_not_finished_and_resumes(
        tmp_path, monkeypatch, only_trial):
    """``results.json`` marks a run finished, so it is written last: a run stopped while
    writing its format model (a lent machine taken back) has none, and resuming writes both;
    the old order left a finished run without its model, which a resume never wrote."""
    import crasp.train.loop as loop
    from crasp.models import load_model
    from crasp.train import run as files
    from crasp.train.results import RunResults

    config = _config(epochs=1, n_train=40, n_test=12,
                     search=None if only_trial is None else [{"lr": 1e-3}, {"lr": 3e-2}])
    write = loop.write_format_model

    def killed(*args):
        raise KeyboardInterrupt("the machine was taken back")

    monkeypatch.setattr(loop, "write_format_model", killed)
    with pytest.raises(KeyboardInterrupt):
        loop.train(config, tmp_path, only_trial=only_trial)
    assert not (tmp_path / files.RESULTS_FILE).exists()
    assert (tmp_path / files.STATE_FILE).is_file()
    monkeypatch.setattr(loop, "write_format_model", write)
    results = loop.train(config, tmp_path, only_trial=only_trial)
    assert results == RunResults.read(tmp_path).to_json()
    assert results.get("search_trial") == only_trial and results["total_epochs"] == 1
    assert not (tmp_path / files.STATE_FILE).exists()
    # the written model is the best weights' (of the part's configuration)
    trained = config.normalized().trials()[only_trial or 0]
    module = build_model(trained, len(VOCAB))
    files.load_weights(tmp_path / files.BEST_FILE, module)
    saved = load_model(tmp_path / files.FORMAT_MODEL_DIR, "decompile").executable
    inputs = _random_inputs(3, 200, 20)
    expected = execute(format_model(module, VOCAB, trained), inputs).scores
    assert np.array_equal(execute(saved, inputs).scores, expected)
