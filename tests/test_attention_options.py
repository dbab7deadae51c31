"""The positional and attention options of issue 17 item 1, each by its defining property:
T5 buckets against a reference written from the T5 paper's definition, the rpe biases at known
distances, DP-free scores independent of content, hardmax evaluation equal to the argmax
selection (ties shared), W_Q W_K^T of rank at most R, and cell ids of earlier sweeps unchanged.
"""

from __future__ import annotations

import math

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.cli import cli as main
from crasp.errors import CraspError
from crasp.train import sweep
from crasp.train.config import TrainConfig, identity_fields
from crasp.train.model import Attention, build_model, hardmax
from crasp.train.posenc import RelativeBias, T5Bias, t5_bucket


def reference_t5_bucket(n: int, buckets: int, max_distance: int) -> int:
    """Raffel et al. (2020), §2.1, causal case, written out for one distance."""
    exact = buckets // 2
    if n < exact:
        return n
    grown = exact + int(math.log(n / exact) / math.log(max_distance / exact) * (buckets - exact))
    return min(grown, buckets - 1)


@pytest.mark.parametrize("buckets,max_distance", [(32, 128), (8, 20), (2, 5), (16, 400)])
def test_t5_buckets_match_the_definition_for_every_distance_up_to_2000(buckets, max_distance):
    n = torch.arange(2001)
    got = t5_bucket(n, buckets, max_distance).tolist()
    assert got == [reference_t5_bucket(d, buckets, max_distance) for d in range(2001)]


def test_t5_default_buckets_at_known_distances():
    # 32 buckets, max distance 128: 16 exact buckets, then log-spaced up to 128
    known = {0: 0, 1: 1, 15: 15, 16: 16, 20: 17, 32: 21, 64: 26, 127: 31, 128: 31, 10_000: 31}
    got = t5_bucket(torch.tensor(list(known)), 32, 128).tolist()
    assert dict(zip(known, got)) == known


def test_t5_bias_is_causal_and_depends_on_the_distance_only():
    bias = T5Bias(n_heads=3, buckets=8, max_distance=20)
    torch.nn.init.normal_(bias.table.weight)
    mask = bias.mask(30, "cpu", torch.float32)[0]
    i, j = torch.tril_indices(30, 30)
    expected = bias.table.weight[t5_bucket(i - j, 8, 20)].T
    assert torch.equal(mask[:, i, j], expected)
    assert torch.isinf(mask.triu(1)[:, torch.ones(30, 30, dtype=torch.bool).triu(1)]).all()


@pytest.mark.parametrize("kind,shape", [("rpe-log", math.log1p), ("rpe-lin", float)])
def test_relative_biases_at_known_distances(kind, shape):
    bias = RelativeBias(kind, n_heads=2)
    with torch.no_grad():
        bias.rate.copy_(torch.tensor([0.5, -2.0]))
    mask = bias.mask(12, "cpu", torch.float64)[0]
    for i, j in [(0, 0), (5, 1), (11, 0), (11, 10)]:
        for h, rate in enumerate([0.5, -2.0]):
            assert mask[h, i, j].item() == pytest.approx(-rate * shape(i - j))
    assert mask[0, 3, 4].item() == float("-inf")


def attention(kind: str, qk_rank=None, d_model=12, heads=3) -> Attention:
    torch.manual_seed(0)
    return Attention(d_model, heads, 0.0, kind, qk_rank).eval()


def test_dp_free_with_nope_is_the_uniform_prefix_average():
    attn = attention("dp-free")
    assert attn.q is None and attn.k is None
    x = torch.randn(2, 7, 12)
    values = attn.v(x)
    prefix_mean = values.cumsum(1) / torch.arange(1, 8)[None, :, None]
    assert torch.allclose(attn(x), attn.o(prefix_mean), atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_dp_free_weights_do_not_depend_on_content(seed):
    """Two inputs with equal values but different content: the outputs agree, because the
    scores come from the (T5) bias alone."""
    torch.manual_seed(seed)
    attn = attention("dp-free")
    bias = T5Bias(3, 8, 20)
    torch.nn.init.normal_(bias.table.weight)
    x, other = torch.randn(1, 9, 12), torch.randn(1, 9, 12)
    # give `other` the same value projections as x: only what the scores could read differs
    with torch.no_grad():
        attn.v.weight.zero_()
    assert torch.equal(attn(x, bias=bias), attn(other, bias=bias))
    weights = torch.softmax(bias.mask(9, "cpu", torch.float32), -1)
    assert torch.allclose(weights.sum(-1), torch.ones(1, 3, 9))


def reference_hardmax_output(attn: Attention, x: torch.Tensor) -> torch.Tensor:
    """Argmax attention written out per head and position (ties: equal shares)."""
    T = x.shape[1]
    q = attn.q(x)[0].view(T, attn.n_heads, attn.qk_dim)
    k = attn.k(x)[0].view(T, attn.n_heads, attn.qk_dim)
    v = attn.v(x)[0].view(T, attn.n_heads, attn.head_dim)
    out = torch.zeros(T, attn.n_heads, attn.head_dim)
    for h in range(attn.n_heads):
        for i in range(T):
            scores = [float(q[i, h] @ k[j, h]) * attn.scale for j in range(i + 1)]
            best = [j for j, s in enumerate(scores) if s == max(scores)]
            out[i, h] = sum(v[j, h] for j in best) / len(best)
    return attn.o(out.reshape(1, T, -1))


def test_hardmax_evaluation_is_the_argmax_selection():
    attn = attention("hardmax")
    x = torch.randn(1, 10, 12)
    with torch.no_grad():
        assert torch.allclose(attn(x), reference_hardmax_output(attn, x), atol=1e-5)


def test_hardmax_ties_share_the_weight_equally():
    attn = attention("hardmax")
    with torch.no_grad():
        attn.q.weight.zero_()
        attn.q.bias.zero_()        # every score 0: every position of the prefix ties
        x = torch.randn(1, 6, 12)
        prefix_mean = attn.v(x).cumsum(1) / torch.arange(1, 7)[None, :, None]
        assert torch.allclose(attn(x), attn.o(prefix_mean), atol=1e-6)
    assert torch.equal(hardmax(torch.tensor([[1.0, 3.0, 3.0, 2.0]])),
                       torch.tensor([[0.0, 0.5, 0.5, 0.0]]))


def test_hardmax_trains_through_the_straight_through_gradient():
    """Training computes the hard function too (the estimator changes only the gradient), and
    the gradient reaches the queries and keys, which a true argmax would not let through."""
    attn = attention("hardmax").train()
    x = torch.randn(1, 8, 12)
    trained = attn(x)
    trained.square().sum().backward()
    assert attn.q.weight.grad.abs().sum() > 0 and attn.k.weight.grad.abs().sum() > 0
    with torch.no_grad():
        assert torch.allclose(trained, reference_hardmax_output(attn, x), atol=1e-5)


@pytest.mark.parametrize("rank", [1, 2, 5])
def test_qk_rank_bounds_the_rank_of_each_heads_bilinear_form(rank):
    attn = attention("softmax", qk_rank=rank, d_model=12, heads=3)
    for h in range(3):
        rows = slice(h * rank, (h + 1) * rank)
        form = attn.q.weight[rows].double().T @ attn.k.weight[rows].double()  # W_Q,h W_K,h^T
        assert form.shape == (12, 12)
        assert torch.linalg.matrix_rank(form).item() == rank   # <= R, and R when generic


@pytest.mark.parametrize("overrides", [
    dict(posenc="t5"), dict(posenc="rpe-log"), dict(posenc="rpe-lin"),
    dict(attention="dp-free"), dict(attention="dp-free", posenc="t5"),
    dict(attention="hardmax", posenc="alibi"), dict(qk_rank=2, posenc="rope"),
    dict(qk_rank=3, posenc="alibi", alibi_impl="fold")])
def test_every_option_builds_a_model_that_runs_and_learns(overrides):
    config = TrainConfig(language="L3", depth=2, d_model=12, n_heads=3, d_ff=16,
                         train_bin=(4, 8), test_bins=[(9, 12)], **overrides).normalized().validate()
    torch.manual_seed(0)
    model = build_model(config, vocab_size=3)
    tokens = torch.randint(0, 3, (2, 9))
    tokens[:, 0] = 3
    model(tokens).sum().backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


@pytest.mark.parametrize("overrides,message", [
    (dict(attention="dp-free", posenc="rope"), "RoPE"),
    (dict(attention="dp-free", qk_rank=2), "no W_Q W_K"),
    (dict(qk_rank=0), "qk_rank"),
    (dict(attention="argmax"), "attention must be one of"),
    (dict(posenc="t5", t5_buckets=1), "t5_buckets"),
    (dict(posenc="t5", t5_buckets=32, t5_max_distance=16), "t5_max_distance"),
    (dict(posenc="rope", qk_rank=1), "rotates no pair")])
def test_impossible_settings_are_refused(overrides, message):
    with pytest.raises(CraspError, match=message):
        TrainConfig(**overrides).normalized().validate()


def test_cell_ids_of_earlier_sweeps_do_not_change():
    """The new fields at their defaults are left out of a cell's hash, so the ids of cells run
    before they existed stay the same; another value makes another cell."""
    config = TrainConfig(language="L4", depth=2).to_dict()
    overrides = {"language": "L4", "depth": 2, "posenc": "nope", "seed": 0}
    before = {k: v for k, v in config.items()
              if k not in ("t5_buckets", "t5_max_distance", "attention", "qk_rank", "moduli",
                       "precision")}
    assert identity_fields(config) == before
    assert sweep.cell_id(overrides, config) == sweep.cell_id(overrides, before)
    assert sweep.cell_id(overrides, {**config, "attention": "dp-free"}) != \
        sweep.cell_id(overrides, config)


def test_a_second_edition_cell_keeps_its_id():
    """docs/results/run_second_edition.sh's first cell (one-head preset, L3 depth 1 seed 0)
    ran before these options existed; its id is pinned here."""
    runner = CliRunner()
    result = runner.invoke(main, [
        "sweep", "--preset", "one-head", "--posenc", "nope", "--languages", "L3", "--depths", "1",
        "--seeds", "1", "--grid", "epochs=20",
        "test_bins=251:300+301:350+351:400+351:400@skewed+351:400@extreme",
        "-o", "unused-sweep-dir", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "L3-d1-nope-s0-7bab121083" in result.output


def test_the_options_are_sweep_axes_and_train_options(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, [
        "sweep", "--posenc", "t5,rpe-log,rpe-lin", "--languages", "L4", "--depths", "2",
        "--grid", "attention=softmax,dp-free,hardmax", "qk_rank=none", "-o",
        str(tmp_path / "sweep"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.output.count("todo") == 9
    result = runner.invoke(main, ["train", "--language", "L4", "--posenc", "t5", "--attention",
                                  "DP-FREE", "--t5-buckets", "8", "--t5-max-distance", "64",
                                  "--qk-rank", "4", "--print-config"])
    assert result.exit_code == 2 and "no W_Q W_K" in result.output
    result = runner.invoke(main, ["train", "--language", "L4", "--posenc", "t5", "--attention",
                                  "hardmax", "--t5-buckets", "8", "--qk-rank", "4",
                                  "--print-config"])
    assert result.exit_code == 0, result.output
    for text in ('"posenc": "t5"', '"attention": "hardmax"', '"t5_buckets": 8', '"qk_rank": 4'):
        assert text in result.output


def test_the_report_keeps_attention_variants_apart_and_bounds_only_what_theory_covers(tmp_path):
    """Softmax NoPE fails L4 at depth 1, dp-free NoPE succeeds: the report does not treat the two
    as settings of one cell and pick the better, but gives each its own table, and draws the
    NoPE bound for dp-free (a restriction of NoPE's weights) but none for hardmax."""
    from test_report import write_cell
    from crasp.train import report as rep
    from crasp.train.theory_bounds import depth_bound

    def with_attention(identifier: str, attention: str) -> None:
        for name in ("cell.json", "results.json"):
            path = tmp_path / "cells" / identifier / name
            path.write_text(path.read_text().replace(
                '"posenc": "nope"', f'"posenc": "nope", "attention": "{attention}"'))

    for seed in range(2):
        write_cell(tmp_path, "L4", 1, seed, 0.2)
        with_attention(write_cell(tmp_path, "L4", 1, seed + 10, 1.0), "dp-free")
        with_attention(write_cell(tmp_path, "L4", 1, seed + 20, 0.5), "hardmax")
    report = rep.build_report([tmp_path], compiled=False)
    assert set(report.table) == {"nope", "nope+dp-free", "nope+hardmax"}
    assert report.table["nope"]["L4"][1].values == pytest.approx([0.2, 0.2])
    assert report.table["nope+dp-free"]["L4"][1].values == pytest.approx([1.0, 1.0])
    markdown = rep.markdown_report(report)
    assert "### NoPE + dp-free: exact match" in markdown
    assert "proved for hardmax" in markdown
    assert depth_bound("L4", "nope+dp-free") == depth_bound("L4", "nope") is not None
    assert depth_bound("L4", "nope+qk2") == depth_bound("L4", "nope")
    assert depth_bound("L4", "nope+hardmax") is None and depth_bound("L4", "t5") is None
