"""Trainer building blocks: positional encodings, causality, padding, metrics, config."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from crasp.errors import CraspError
from crasp.train import TrainConfig, resolve_preset
from crasp.train.batching import encode_strings
from crasp.train.metrics import batch_counts, evaluate
from crasp.train.model import build_model
from crasp.train.posenc import (Rotary, alibi_bias, alibi_slopes, apply_rope, rope_angles,
                                sinusoidal_table)

torch.set_num_threads(1)
VOCAB = ("a", "b")
POSENCS = ["nope", "rope", "alibi", "learned", "sinusoidal"]


def small_config(**overrides) -> TrainConfig:
    values = dict(language="L3", depth=2, d_model=16, n_heads=2, d_ff=32, dropout=0.0,
                  train_bin=(5, 12), test_bins=[(13, 20)])
    values.update(overrides)
    return resolve_preset("default", **values)


def model_for(posenc: str, seed: int = 0, **overrides):
    torch.manual_seed(seed)
    model = build_model(small_config(posenc=posenc, **overrides), len(VOCAB))
    return model.eval()


# ---------------------------------------------------------------------------- RoPE

@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_rope_scores_depend_only_on_relative_position(fraction):
    head_dim = 16
    rotary = Rotary(int(head_dim * fraction), 10000.0)
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(head_dim, generator=generator, dtype=torch.float64)
    k = torch.randn(head_dim, generator=generator, dtype=torch.float64)
    length = 64
    # the same q and k vector at every position: the score at (m, n) is a function of m - n
    Q = q.expand(1, 1, length, head_dim).float()
    K = k.expand(1, 1, length, head_dim).float()
    rq, rk = rotary(Q, K)
    scores = (rq[0, 0] @ rk[0, 0].T).double()
    for m, n, shift in [(5, 2, 7), (10, 10, 30), (3, 9, 40), (0, 0, 63), (20, 1, 17)]:
        assert scores[m + shift, n + shift] == pytest.approx(float(scores[m, n]), abs=1e-4)
    # and it does depend on the offset (the encoding is not NoPE)
    assert abs(float(scores[5, 0] - scores[5, 4])) > 1e-3


def test_rope_leaves_unrotated_dims_and_values_alone():
    cos, sin = rope_angles(8, 4, 10000.0)
    x = torch.randn(1, 1, 8, 10)
    y = apply_rope(x, cos, sin)
    assert torch.equal(y[..., 4:], x[..., 4:])
    assert torch.allclose(y[..., 0, :], x[..., 0, :])  # position 0: rotation by angle 0
    assert torch.allclose(y.norm(dim=-1), x.norm(dim=-1), atol=1e-5)  # rotations keep norms


def test_rope_model_attention_scores_are_shift_invariant():
    model = model_for("rope")
    attention = model.layers[0].attn
    x = torch.randn(1, 1, 16).expand(1, 40, 16)  # the same input vector at every position
    q, k, _ = attention.heads(x)
    q, k = model.rotary(q, k)
    scores = q @ k.transpose(-1, -2)
    for m, n, shift in [(6, 1, 11), (30, 30, 5), (12, 0, 20)]:
        assert torch.allclose(scores[..., m + shift, n + shift], scores[..., m, n], atol=1e-4)


# ---------------------------------------------------------------------------- ALiBi

def published_slopes(n: int) -> list[float]:
    """Press et al.'s reference ``get_slopes`` (as published with the ALiBi paper)."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + published_slopes(2 * closest)[0::2][: n - closest]


@pytest.mark.parametrize("heads, expected", [
    (1, [2 ** -8]),
    (2, [2 ** -4, 2 ** -8]),
    (8, [2 ** -h for h in range(1, 9)]),
    (12, [2 ** -h for h in range(1, 9)] + [2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5]),
])
def test_alibi_slopes_match_the_published_formula(heads, expected):
    assert alibi_slopes(heads) == pytest.approx(expected, rel=1e-12)
    assert alibi_slopes(heads) == pytest.approx(published_slopes(heads), rel=1e-12)


def test_alibi_bias_is_minus_slope_times_distance():
    slopes = torch.tensor([0.5, 0.25], dtype=torch.float64)
    bias = alibi_bias(slopes, 6)
    for h in range(2):
        for i in range(6):
            for j in range(6):
                if j <= i:
                    assert bias[h, i, j] == pytest.approx(-float(slopes[h]) * (i - j))
                else:
                    assert bias[h, i, j] == float("-inf")


@pytest.mark.parametrize("impl", ["mask", "fold"])
def test_alibi_attention_matches_explicit_softmax(impl):
    torch.manual_seed(0)
    heads, length, head_dim = 3, 9, 4
    slopes = [0.5, 0.125, 1 / 256]
    model_config = small_config(posenc="alibi", n_heads=heads, d_model=heads * head_dim,
                                alibi_slopes=slopes, alibi_impl=impl)
    model = build_model(model_config, 2).eval()
    attention = model.layers[0].attn
    x = torch.randn(2, length, heads * head_dim)
    q, k, v = attention.heads(x)
    scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim)
    i = torch.arange(length)[:, None]
    j = torch.arange(length)[None, :]
    bias = -torch.tensor(slopes)[:, None, None] * (i - j)
    scores = (scores + bias).masked_fill(j > i, float("-inf"))
    expected = torch.softmax(scores, dim=-1) @ v
    expected = attention.o(expected.transpose(1, 2).reshape(2, length, -1))
    with torch.no_grad():
        got = attention(x, bias=model.alibi)
    assert torch.allclose(got, expected, atol=1e-5)


def test_single_head_alibi_default_slope_is_nearly_nope():
    model = model_for("alibi", n_heads=1)
    assert model.alibi.slopes.tolist() == [2 ** -8]


# ---------------------------------------------------------------------------- causality & padding

@pytest.mark.parametrize("posenc", POSENCS)
def test_output_at_i_ignores_later_tokens(posenc):
    model = model_for(posenc)
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 2, (1, 15), generator=generator)
    tokens[0, 0] = 2  # BOS
    with torch.no_grad():
        base = model(tokens)
        for i in [0, 3, 9]:
            changed = tokens.clone()
            changed[0, i + 1:] = 1 - changed[0, i + 1:]
            out = model(changed)
            assert torch.allclose(out[0, : i + 1], base[0, : i + 1], atol=1e-5), i
            assert not torch.allclose(out[0, i + 1:], base[0, i + 1:])


@pytest.mark.parametrize("posenc", POSENCS)
def test_padded_batch_equals_each_string_alone(posenc):
    model = model_for(posenc)
    rng = np.random.default_rng(3)
    strings = [list(rng.choice(list(VOCAB), size=n)) for n in (3, 11, 7, 1, 11, 5)]
    labels = [rng.random(len(s)) < 0.5 for s in strings]
    split = encode_strings(strings, labels, VOCAB)
    batch = split.batch(np.arange(split.n))
    with torch.no_grad():
        together = model(batch.tokens)
        for row, string in enumerate(strings):
            alone = model(split.batch(np.array([row])).tokens)
            assert alone.shape[1] == len(string) + 1
            assert torch.allclose(together[row, : len(string) + 1], alone[0], atol=1e-5)
    many = evaluate(model, split, "cpu", max_tokens=10_000)
    single = evaluate(model, split, "cpu", max_tokens=1)  # one string per batch
    assert len(split.eval_batches(1)) == split.n
    assert (many.exact, many.token_correct, many.token_total) == \
        (single.exact, single.token_correct, single.token_total)
    assert many.loss == pytest.approx(single.loss, rel=1e-5)


def test_exact_match_ignores_bos_and_padding():
    strings = [["a", "b", "a"], ["b"]]
    labels = [np.array([True, False, True]), np.array([False])]
    split = encode_strings(strings, labels, VOCAB)
    batch = split.batch(np.array([0, 1]))
    assert batch.tokens.tolist() == [[2, 0, 1, 0], [2, 1, 3, 3]]  # BOS=2, PAD=3
    assert batch.mask.tolist() == [[False, True, True, True], [False, True, False, False]]
    # right at every labelled position; BOS and padding predicted "wrong" on purpose
    logits = torch.tensor([[5.0, 1.0, -1.0, 1.0], [5.0, -1.0, 5.0, 5.0]])
    assert batch_counts(logits, batch) == (2, 4, 4)
    logits[0, 2] = 1.0  # one wrong labelled position in string 0
    assert batch_counts(logits, batch) == (1, 3, 4)


def test_train_batches_are_bucketed_and_reproducible():
    rng = np.random.default_rng(0)
    strings = [["a"] * int(n) for n in rng.integers(1, 60, size=200)]
    split = encode_strings(strings, [np.zeros(len(s), bool) for s in strings], VOCAB)
    first = split.train_batches(8, np.random.default_rng([0, 0, 0]))
    again = split.train_batches(8, np.random.default_rng([0, 0, 0]))
    assert [b.tokens.tolist() for b in first] == [b.tokens.tolist() for b in again]
    assert sum(b.n_strings for b in first) == 200
    real = sum(b.n_tokens for b in first)
    padded = sum(b.tokens.numel() for b in first)
    assert real / padded > 0.85  # length bucketing keeps padding small


def test_sinusoidal_table_shape_and_values():
    table = sinusoidal_table(5, 8)
    assert table.shape == (5, 8)
    assert table[0, 0::2].abs().max() == 0 and torch.all(table[0, 1::2] == 1)


# ---------------------------------------------------------------------------- config & presets

def test_config_json_round_trip():
    config = resolve_preset("knee-deep", language="L4", depth=2, posenc="alibi",
                            alibi_slopes=[0.25], seed=3)
    text = config.to_json()
    again = TrainConfig.from_json(text)
    assert again == config
    assert json.loads(again.to_json()) == json.loads(text)


def test_resolve_preset_defaults_and_overrides():
    config = resolve_preset("default", depth=3, posenc="rope", language="L5", seed=0, lr=3e-4,
                            d_model=64)
    assert (config.depth, config.posenc, config.lr, config.preset) == (3, "rope", 3e-4, "default")
    assert resolve_preset("default") == TrainConfig()
    knee = resolve_preset("knee-deep")
    assert (knee.batch_size, knee.norm, knee.d_ff, knee.n_heads, knee.epochs) == \
        (1, "post", 2048, 1, 25)
    assert knee.train_bin == (201, 250)
    assert knee.test_bins == [(251, 300), (301, 350), (351, 400)]
    assert [(e["d_model"], e["lr"]) for e in knee.search] == \
        [(256, 1e-4), (256, 1e-5), (512, 1e-4), (512, 1e-5)]
    # an explicit override pins the searched field
    assert resolve_preset("knee-deep", d_model=512).search == [{"lr": 1e-4}, {"lr": 1e-5}]
    pinned = resolve_preset("knee-deep", d_model=512, lr=1e-5)
    assert pinned.search is None and (pinned.d_model, pinned.lr) == (512, 1e-5)


@pytest.mark.parametrize("overrides, message", [
    ({"bogus": 1}, "unknown config field"),
    ({"depth": 0}, "depth must be"),
    ({"posenc": "xpos"}, "unknown positional encoding"),
    ({"norm": "sandwich"}, "norm must be"),
    ({"train_bin": (51, 100), "test_bins": [(90, 150)]}, "overlaps the train bin"),
    ({"test_bins": [(151, 200), (151, 200)]}, "given twice"),
    ({"d_model": 10, "n_heads": 4}, "divisible"),
    ({"posenc": "alibi", "n_heads": 2, "alibi_slopes": [0.5]}, "alibi_slopes"),
    ({"val_fraction": 1.5}, "val_fraction"),
])
def test_invalid_configs_are_refused(overrides, message):
    with pytest.raises(CraspError, match=message):
        resolve_preset("default", **overrides)


def test_unknown_preset_is_refused():
    with pytest.raises(CraspError, match="unknown preset"):
        resolve_preset("nope-deep")


@pytest.mark.parametrize("posenc, impl", [(p, "mask") for p in POSENCS] + [("alibi", "fold")])
def test_tables_built_during_evaluation_serve_training(posenc, impl):
    """Evaluation (inference mode) at a new length, then a training step at that length."""
    model = model_for(posenc, alibi_impl=impl)
    tokens = torch.randint(0, 2, (2, 9))
    with torch.inference_mode():
        model(tokens)
    model.train()
    model(tokens).sum().backward()
