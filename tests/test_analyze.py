"""crasp analyze: ablation, paths, effective depth, Hessian, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from crasp.cli import cli as main
from crasp.train.analysis import ablation, depth, hessian, outputs
from crasp.train.analysis.ablation import ablated, head_slice
from crasp.train.analysis.loading import LoadedRun
from crasp.train.analysis.paths import PathAblated, capturing, head_reads
from crasp.train.batching import Batch, encode_strings
from crasp.train.loop import train
from crasp.train.metrics import masked_loss
from crasp.train.model import build_model
from crasp.train.presets import resolve_preset

torch.set_num_threads(1)


def tiny_config(**overrides):
    values = dict(language="L4", depth=2, d_model=8, n_heads=2, d_ff=8, dropout=0.0,
                  train_bin=(8, 12), test_bins=[(13, 16)], n_train=60, n_test=20,
                  batch_size=16, lr=3e-3, warmup_steps=2, epochs=1, patience=0, device="cpu")
    values.update(overrides)
    return resolve_preset("default", **values)


def tiny_model(seed=0, **overrides):
    torch.manual_seed(seed)
    return build_model(tiny_config(**overrides), 2).eval()


def tokens(seed=0, n=4, length=9):
    generator = torch.Generator().manual_seed(seed)
    result = torch.randint(0, 2, (n, length), generator=generator)
    result[:, 0] = 2  # BOS
    return result


def loaded_from(model, labels_of=lambda s: [int(c) for c in np.cumsum([x == "a" for x in s]) % 2]):
    """A LoadedRun over two bins of random strings with some fixed labelling."""
    rng = np.random.default_rng(0)
    splits = []
    for lo, hi in ((5, 8), (9, 12)):
        strings = [tuple(rng.choice(["a", "b"], rng.integers(lo, hi + 1))) for _ in range(12)]
        split = encode_strings(strings, [labels_of(s) for s in strings], ("a", "b"), f"{lo}:{hi}")
        split.lo, split.hi = lo, hi
        splits.append(split)
    return LoadedRun(tiny_config(), model, splits, None, ("a", "b"), splits[0])


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("mode", ablation.MODES)
def test_ablating_a_head_the_model_ignores_changes_nothing(norm, mode):
    model = tiny_model(norm=norm)
    with torch.no_grad():
        model.layers[1].attn.o.weight[:, head_slice(model, 0)] = 0  # head (1, 0) writes nothing
    x = tokens()
    means = ablation.head_means(loaded_from(model))
    before = model(x)
    with ablated(model, [(1, 0)], mode, means):
        after = model(x)
    torch.testing.assert_close(after, before, rtol=0, atol=0)
    with ablated(model, [(1, 1)], mode, means):
        assert not torch.equal(model(x), before)  # the other head matters


def test_mean_and_zero_ablation_definitions():
    model = tiny_model()
    loaded = loaded_from(model)
    means = ablation.head_means(loaded)
    seen = {}
    with capturing(model.layers[0].attn.o, seen, "z"):
        model(loaded.tests[0].tokens[:3])
    inputs = {}
    for mode, expected in (("zero", torch.zeros(4)), ("mean", means[0, head_slice(model, 1)])):
        with ablated(model, [(0, 1)], mode, means), capturing(model.layers[0].attn.o, inputs, mode):
            model(loaded.tests[0].tokens[:3])
        z = inputs[mode]
        assert torch.equal(z[..., head_slice(model, 1)], expected.expand_as(z[..., 4:]))
        assert torch.equal(z[..., head_slice(model, 0)], seen["z"][..., head_slice(model, 0)])
    # the mean is over real positions of every test bin: recompute it by hand
    rows = []
    for split in loaded.tests:
        for row in range(split.n):
            with capturing(model.layers[0].attn.o, seen, "one"):
                model(split.tokens[row:row + 1, :split.lengths[row]])
            rows.append(seen["one"][0])
    torch.testing.assert_close(means[0], torch.cat(rows).mean(dim=0))


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("posenc", ["nope", "rope", "alibi", "learned"])
def test_path_rewiring_without_ablation_is_the_models_forward(norm, posenc):
    model = tiny_model(norm=norm, posenc=posenc, depth=3)
    x = tokens(length=11)
    for layer in (1, 2):
        seen = {}
        with capturing(model.layers[layer].attn, seen, "x"):
            reference = model(x)
        for head in (0, 1):
            with head_reads(model, layer, head, seen["x"]):
                torch.testing.assert_close(model(x), reference, rtol=0, atol=0)


def test_path_ablation_pre_ln_removes_only_the_direct_write():
    model = tiny_model(norm="pre")
    x = tokens()
    reference = model(x)
    with torch.no_grad():
        model.layers[0].attn.o.weight[:, head_slice(model, 0)] = 0
    assert torch.equal(PathAblated(model, 0, 0, 1, "zero", None)(x), model(x))
    model = tiny_model(norm="pre")
    changed = PathAblated(model, 0, 1, 0, "zero", None)(x)
    assert not torch.equal(changed, reference)


def test_path_ablation_post_ln_feeds_the_ablated_layer_output():
    """A single-head model: head 0 of layer 1 reading the stream with (0, 0) ablated, while
    the residual keeps the clean stream, differs from ablating (0, 0) everywhere."""
    model = tiny_model(norm="post", n_heads=1)
    means = torch.zeros(2, 8)
    x = tokens()
    with ablated(model, [(0, 0)], "zero"):
        whole = model(x)
    path = PathAblated(model, 0, 0, 0, "zero", means)(x)
    assert not torch.allclose(path, whole) and not torch.allclose(path, model(x))


def label_by_the_model(model):
    """A LoadedRun labelled by ``model``'s own predictions, with its output bias moved to the
    median logit so that the labels are balanced and depend on what the layers compute."""
    probe = loaded_from(model)
    with torch.no_grad():
        logits = torch.cat([model(split.tokens)[split.tokens != model.pad_id]
                            for split in probe.tests])
        model.head.bias -= logits.median() + 1e-4
        for split in probe.tests:
            split.labels = (model(split.tokens) > 0).float()
    return probe


def test_effective_depth_of_a_model_whose_second_layer_does_nothing():
    model = tiny_model()
    with torch.no_grad():
        model.layers[1].attn.o.weight.zero_()
        model.layers[1].attn.o.bias.zero_()
    probe = label_by_the_model(model)
    for mode in ablation.MODES:
        result = depth.effective_depth(probe, ablation.head_means(probe), mode)
        assert result["nominal_depth"] == 2 and result["threshold"] == 0.99
        assert result["effective_depth"] == 1 and result["kept_layers"] == [0]
        assert result["subsets"][0] == {"kept_layers": [], "exact_match": pytest.approx(
            result["subsets"][0]["exact_match"])} and result["subsets"][0]["exact_match"] < 0.99


def test_effective_depth_of_a_model_that_needs_both_layers():
    probe = label_by_the_model(tiny_model(seed=3))
    assert depth.effective_depth(probe, ablation.head_means(probe))["effective_depth"] == 2


def test_a_run_that_fails_has_no_effective_depth():
    model = tiny_model()
    probe = loaded_from(model)
    for split in probe.tests:
        with torch.no_grad():
            split.labels = (model(split.tokens) <= 0).float()  # always wrong
    assert depth.effective_depth(probe, ablation.head_means(probe))["effective_depth"] is None


@pytest.mark.parametrize("posenc", ["nope", "rope"])
def test_hessian_against_finite_differences(posenc):
    model = tiny_model(posenc=posenc, d_model=4, d_ff=4, depth=1)
    x = tokens(length=7)
    labels = (torch.arange(7) % 2).float().expand(4, 7).clone()
    mask = torch.ones(4, 7, dtype=torch.bool)
    mask[:, 0] = False
    batch = Batch(x, labels, mask, 4, 28)
    result = hessian.loss_hessian(model, batch)
    names = hessian.block_names(model)
    assert result.matrix.shape == (sum(result.sizes),) * 2
    torch.testing.assert_close(result.matrix, result.matrix.T)

    work = model.double()
    params = dict(work.named_parameters())
    double_batch = Batch(x, labels.double(), mask, 4, 28)

    def gradient():
        work.zero_grad()
        masked_loss(work(x), double_batch).backward()
        return torch.cat([params[name].grad.reshape(-1) for name in names])

    direction = torch.randn(sum(result.sizes), generator=torch.Generator().manual_seed(1),
                            dtype=torch.float64)
    epsilon = 1e-5
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.MATH):
        finite = []
        for sign in (1, -1):
            with torch.no_grad():
                offset = 0
                for name in names:
                    size = params[name].numel()
                    params[name] += (sign * epsilon
                                     * direction[offset:offset + size].view_as(params[name]))
                    offset += size
            finite.append(gradient())
            with torch.no_grad():
                offset = 0
                for name in names:
                    size = params[name].numel()
                    params[name] -= (sign * epsilon
                                     * direction[offset:offset + size].view_as(params[name]))
                    offset += size
    torch.testing.assert_close(result.matrix @ direction, (finite[0] - finite[1]) / (2 * epsilon),
                               rtol=1e-5, atol=1e-7)


def test_hessian_refuses_above_the_parameter_limit():
    model = tiny_model()
    with pytest.raises(hessian.CraspError, match="above the limit 100"):
        hessian.check_size(model, 100)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("run") / "L4"
    train(tiny_config(d_model=8, n_heads=2), run)
    return run


def test_cli_analyze_writes_records_and_plots(tiny_run, tmp_path):
    out = tmp_path / "analysis"
    result = CliRunner().invoke(main, ["analyze", str(tiny_run), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "nominal depth 2" in result.output
    record = json.loads((out / "analysis.json").read_text())
    assert record["nominal_depth"] == 2 and record["theory_depth"] == 2
    assert len(record["paths"]) == 4 and len(record["pruning_curve"]) == 5
    assert record["pruning_curve"][0]["heads_kept"] == 4
    for name in ("ablations.csv", "pruning.csv", "paths.csv", "head_ablation.png", "pruning.png",
                 "paths.png", outputs.MARKER):
        assert (out / name).is_file()
    baseline = json.loads((tiny_run / "results.json").read_text())
    bin_name = record["longest_bin"]
    for key in ("exact_match", "token_accuracy"):  # the trainer's data and metrics, rebuilt
        assert record["baseline"][bin_name][key] == baseline["bins"][bin_name][key]

    again = CliRunner().invoke(main, ["analyze", str(tiny_run), "-o", str(out)])
    assert again.exit_code == 2 and "--force" in again.output
    assert CliRunner().invoke(main, ["analyze", str(tiny_run), "-o", str(out),
                                     "--force"]).exit_code == 0
    assert "analyze" not in result.stderr  # not a terminal: no bar unless asked
    shown = CliRunner().invoke(main, ["analyze", str(tiny_run), "-o", str(out), "--force",
                                      "--progress"])
    assert shown.exit_code == 0 and "analyze: 100%" in shown.stderr
    # the strings every evaluation read: the heads' means and the baseline on every bin, each
    # of 4 heads and 2 layers ablated in 2 modes on every bin, then on the longest bin the
    # pruning curve, the paths and the subsets the effective depth tried in each mode
    every = sum(row["n"] for row in baseline["bins"].values())
    longest = baseline["bins"][bin_name]["n"]
    subsets = sum(len(record["effective_depth"][mode]["subsets"]) for mode in ("mean", "zero"))
    read = 2 * every + 6 * 2 * every + (5 + 4 + subsets) * longest
    assert f"| {read}/{read} [" in shown.stderr.replace("\r", "\n").splitlines()[-1]


def test_cli_hessian_and_refusals(tiny_run, tmp_path):
    out = tmp_path / "h"
    result = CliRunner().invoke(main, ["analyze", str(tiny_run), "--hessian", "-o", str(out),
                                       "--hessian-strings", "4", "--max-params", "2048"])
    assert result.exit_code == 0, result.output
    record = json.loads((out / "hessian.json").read_text())
    assert len(record["blocks"]) == 12 and len(record["block_norms"]) == 12
    assert (out / "hessian_blocks.png").is_file() and (out / "hessian_spectra.png").is_file()

    refused = CliRunner().invoke(main, ["analyze", str(tiny_run), "--hessian", "-o",
                                        str(tmp_path / "h2"), "--max-params", "100"])
    assert refused.exit_code == 2 and "above the limit 100" in refused.output
    assert not (tmp_path / "h2").exists()

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(main, ["analyze", str(tiny_run), "-o", str(foreign)])
    assert refused.exit_code == 2 and "holds 1 entry (notes.txt)" in refused.output
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]

    missing = CliRunner().invoke(main, ["analyze", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "not a finished training run" in missing.output
    assert "Traceback" not in missing.output


BROKEN_RUNS = {
    "weights empty": lambda run: (run / "best.safetensors").write_bytes(b""),
    "weights random": lambda run: (run / "best.safetensors").write_bytes(bytes(range(256)) * 4),
    "weights a directory": lambda run: ((run / "best.safetensors").unlink(),
                                        (run / "best.safetensors").mkdir()),
    "config truncated": lambda run: (run / "config.json").write_bytes(
        (run / "config.json").read_bytes()[:30]),
    "config a list": lambda run: (run / "config.json").write_text("[1, 2]"),
}


def broken_copy(tiny_run, tmp_path_factory, damage):
    import shutil

    run = tmp_path_factory.mktemp("broken") / "run"
    shutil.copytree(tiny_run, run)
    damage(run)
    return run


def assert_one_message(result, run):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and str(run) in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@given(fraction=st.floats(0.0, 0.999))
@settings(max_examples=12)
def test_analyze_on_a_truncated_checkpoint_is_one_message(tiny_run, tmp_path_factory, fraction):
    weights = (tiny_run / "best.safetensors").read_bytes()
    run = broken_copy(tiny_run, tmp_path_factory, lambda run: (run / "best.safetensors")
                      .write_bytes(weights[:int(len(weights) * fraction)]))
    assert_one_message(CliRunner().invoke(main, ["analyze", str(run), "-o",
                                                 str(run.parent / "out")]), run)
    assert not (run.parent / "out").exists()


@pytest.mark.parametrize("case", BROKEN_RUNS)
def test_analyze_on_a_broken_run_is_one_message(tiny_run, tmp_path_factory, case):
    run = broken_copy(tiny_run, tmp_path_factory, BROKEN_RUNS[case])
    assert_one_message(CliRunner().invoke(main, ["analyze", str(run), "-o",
                                                 str(run.parent / "out")]), run)


def test_the_count_docs_analysis_gives_for_a_paper_grid_run():
    """docs/analysis.md: at most 92,000 strings for a paper-grid run (5 bins of 1,000
    strings, depth 3, one head)."""
    from types import SimpleNamespace

    from crasp.train.analysis.driver import most_strings_read

    attention = SimpleNamespace(n_heads=1)
    model = SimpleNamespace(layers=[SimpleNamespace(attn=attention)] * 3)
    bins = [SimpleNamespace(n=1000) for _ in range(5)]
    run = SimpleNamespace(model=model, tests=bins, longest=bins[-1])
    assert most_strings_read(run) == 92_000
    assert "at most 92,000 strings" in (Path(__file__).resolve().parents[1] / "docs" /
                                        "analysis.md").read_text()
