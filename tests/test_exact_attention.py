"""``crasp.train.exact_attention``: both ways of summing the rounded summands are the format's
arithmetic, for any q, k, v and any grid.

The model-level tests (tests/test_fixed_precision_train.py) compare with the executor on
weights of the trained class, whose v are exact dyadic numbers; ``crasp extract`` reads float
runs, whose v are any float64 (LayerNorm, biases). Here a plain per-pair reference, and the
two ways against each other on arbitrary floats, saturation and all-zero rows included.
"""

from __future__ import annotations

import math
from fractions import Fraction
from unittest import mock

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.train import exact_attention
from crasp.train.exact_attention import fixed_attention
from crasp.train.extract import CANDIDATES
from crasp.train.fixed_precision import Grid

torch.set_num_threads(1)
GRIDS = sorted(set(CANDIDATES) | {(2, 0), (3, 1), (9, 0), (7, 6)})


def _units(grid: Grid, x: float) -> float:
    return min(max(math.floor(x * grid.scale), grid.low), grid.high)


def reference(q, k, v, grid: Grid) -> torch.Tensor:
    """The format's attention, one pair at a time in Python floats (docs/model-format.md),
    from exp(q . k) as torch computes it (a dot product in another order, or another exp,
    may differ in the last bit, and then R(exp) may too)."""
    batch, width, d_head = v.shape
    exps = torch.exp(torch.clamp(q @ k.transpose(1, 2), max=grid.cap)).tolist()
    out = torch.zeros(batch, width, d_head, dtype=torch.float64)
    for b in range(batch):
        for i in range(width):
            weights = [_units(grid, exps[b][i][j]) / grid.scale for j in range(i + 1)]
            denominator = sum(weights) * grid.scale
            for c in range(d_head):
                if denominator == 0:  # the exact mean, as the decompiler takes it
                    mean = sum(Fraction(float(v[b, j, c])) for j in range(i + 1)) / (i + 1)
                    out[b, i, c] = _units(grid, mean) / grid.scale
                    continue
                numerator = sum(_units(grid, w * float(v[b, j, c]))
                                for j, w in enumerate(weights))
                # R(N / D) = floor(N 2^s / D) units, N and D in units
                out[b, i, c] = _units(grid, numerator / denominator) / grid.scale
    return out


def _inputs(seed, batch, width, d_qk, d_head, score_scale, value_scale, grid, dyadic):
    generator = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(batch, width, d_qk, generator=generator, dtype=torch.float64)
            * math.sqrt(score_scale) for _ in range(2))
    v = torch.randn(batch, width, d_head, generator=generator, dtype=torch.float64) * value_scale
    if dyadic:  # multiples of 2^-2s, as the trained class's v (exact sums in any order)
        v = torch.floor(v * grid.scale ** 2) / grid.scale ** 2
    return q, k, v


def _both_ways(q, k, v, grid, weight_chunk=1 << 22, summand_chunk=1 << 21):
    results = []
    for by_distinct in (True, False):
        with mock.patch.object(exact_attention, "_by_distinct_weights", lambda *_: by_distinct), \
                mock.patch.object(exact_attention, "WEIGHT_CHUNK_ELEMENTS", weight_chunk), \
                mock.patch.object(exact_attention, "QUERY_CHUNK_ELEMENTS", summand_chunk):
            results.append(fixed_attention(q, k, v, grid))
    return results


@settings(max_examples=60, deadline=None)
@given(grid=st.sampled_from(GRIDS), seed=st.integers(0, 10 ** 6), batch=st.integers(1, 3),
       width=st.integers(1, 12), d_qk=st.integers(1, 3), d_head=st.integers(1, 3),
       score_scale=st.sampled_from([0.01, 1.0, 10.0, 100.0]),
       value_scale=st.sampled_from([0.1, 3.0, 1000.0]), dyadic=st.booleans())
def test_both_ways_are_the_per_pair_reference(grid, seed, batch, width, d_qk, d_head,
                                              score_scale, value_scale, dyadic):
    grid = Grid(*grid)
    q, k, v = _inputs(seed, batch, width, d_qk, d_head, score_scale, value_scale, grid, dyadic)
    expected = reference(q, k, v, grid)
    for result in _both_ways(q, k, v, grid):
        assert torch.equal(result, expected)


@settings(max_examples=60, deadline=None)
@given(grid=st.sampled_from(GRIDS), seed=st.integers(0, 10 ** 6), batch=st.integers(1, 4),
       width=st.integers(1, 60), d_qk=st.integers(1, 4), d_head=st.integers(1, 8),
       score_scale=st.sampled_from([0.01, 1.0, 10.0, 100.0]),
       value_scale=st.sampled_from([0.1, 3.0, 1000.0]),
       weight_chunk=st.sampled_from([1, 100, 1 << 22]), summand_chunk=st.sampled_from([1, 700]))
def test_both_ways_agree_bit_for_bit_on_any_floats(grid, seed, batch, width, d_qk, d_head,
                                                  score_scale, value_scale, weight_chunk,
                                                  summand_chunk):
    """Arbitrary float64 v (as a float run's), in chunks of every size: the same bits."""
    grid = Grid(*grid)
    q, k, v = _inputs(seed, batch, width, d_qk, d_head, score_scale, value_scale, grid, False)
    by_distinct, by_summand = _both_ways(q, k, v, grid, weight_chunk, summand_chunk)
    whole, _ = _both_ways(q, k, v, grid)
    assert torch.equal(by_distinct, by_summand)
    assert torch.equal(by_distinct, whole)


def test_the_inputs_reach_saturation_and_rows_whose_weights_all_round_to_zero():
    """The generated cases above are not vacuous: they saturate summands, and make rows
    whose every weight is 0 (the plain mean) beside rows that are not."""
    grid = Grid(4, 1)
    q, k, v = _inputs(3, 2, 12, 2, 2, 10.0, 1000.0, grid, True)
    weights = torch.floor(torch.exp(torch.clamp(q @ k.transpose(1, 2), max=grid.cap))
                          * grid.scale) * torch.tril(torch.ones(12, 12, dtype=torch.float64))
    summands = weights[..., None] / grid.scale * v[:, None] * grid.scale
    assert (summands >= grid.high + 1).any() and (summands < grid.low).any()
    zero_rows = (weights.sum(dim=2) == 0)
    assert zero_rows.any() and not zero_rows.all()
    assert torch.equal(fixed_attention(q, k, v, grid), reference(q, k, v, grid))


def test_the_gradient_is_that_of_the_unrounded_weighted_sum():
    """Straight through every R: N's gradient is that of weights @ v, whichever way N is
    summed (so training follows sum_j w_ij v_j)."""
    grid = Grid(8, 4)
    q, k, v = (tensor.requires_grad_() for tensor in
               _inputs(5, 2, 9, 3, 4, 1.0, 3.0, grid, True))
    gradients = []
    for by_distinct in (True, False):
        with mock.patch.object(exact_attention, "_by_distinct_weights", lambda *_: by_distinct):
            fixed_attention(q, k, v, grid).sum().backward()
        gradients.append([tensor.grad.clone() for tensor in (q, k, v)])
        for tensor in (q, k, v):
            tensor.grad = None
    assert all(torch.equal(a, b) for a, b in zip(*gradients))
    assert all(gradient.abs().sum() > 0 for gradient in gradients[0])


def _zero_weight_rows(columns: list[list[float]], grid: Grid):
    """q, k, v whose every weight rounds to 0 (scores of -1000), v [1, T, d] from columns."""
    width = len(columns[0])
    q = torch.full((1, width, 1), 10.0, dtype=torch.float64)
    k = torch.full((1, width, 1), -100.0, dtype=torch.float64)
    v = torch.tensor(columns, dtype=torch.float64).T[None]
    return q, k, v


@pytest.mark.parametrize("frac", [1, 2, 6])
@pytest.mark.parametrize("big", [2.0 ** 53, 2.0 ** 60, 1e300])
def test_a_mean_whose_float_sum_rounds_across_a_grid_point_is_exact(frac, big):
    """Where every weight rounds to 0 the output is R(mean of v_j), and the float prefix sum
    of (big, 1, -big) is 0 while the real one is 1: R must be that of 1/3, exactly, as the
    decompiler's Fractions give it (and of 1, 1/2, 1/4 at the earlier positions); the
    sums of 0 are exactly 0 (no correction for a column of zeros)."""
    grid = Grid(12, frac)
    q, k, v = _zero_weight_rows([[1.0, big, 1.0, -big, 0.0], [0.0] * 5], grid)
    expected = reference(q, k, v, grid)
    assert expected[0, 3, 0] == math.floor(Fraction(2, 4) * 2 ** frac) / 2 ** frac > 0
    assert expected[0, :, 1].eq(0).all()
    for result in _both_ways(q, k, v, grid):
        assert torch.equal(result, expected)


@pytest.mark.parametrize("poison", [math.nan, math.inf, -math.inf])
def test_a_diverged_runs_nan_or_infinite_numbers_give_the_same_output_either_way(poison):
    """A run whose training diverged can hold NaN or infinite weights: the scores, weights and
    values are then NaN or infinite somewhere. Both ways give the same output (NaN where the
    other gives NaN) instead of an error, in any chunks, and a key never reaches the queries
    before it (R(0 * inf) is NaN, but a later key's summand is 0)."""
    grid = Grid(8, 4)
    q, k, v = _inputs(7, 2, 10, 2, 3, 1.0, 3.0, grid, False)
    q[0, 3, 0], v[1, 2, 1] = poison, poison
    outputs = [*_both_ways(q, k, v, grid), *_both_ways(q, k, v, grid, 1, 1)]
    for output in outputs[1:]:
        torch.testing.assert_close(output, outputs[0], rtol=0, atol=0, equal_nan=True)
    assert torch.isnan(outputs[0]).any() == math.isnan(poison)
    assert torch.isfinite(outputs[0][0, :3]).all() and torch.isfinite(outputs[0][1, :2]).all()


@pytest.mark.parametrize("frac", [0, 1, 2, 4])
def test_the_trained_classs_means_on_grid_points_need_no_fractions(frac):
    """The trained class's v are multiples of 2^-2s, so its float prefix sums are exact and
    R of the mean is the float floor; a mean that falls on a grid point (equal values, here
    in every column) is common there and must not send every such row to exact fractions
    (a Python sum per row and coordinate). Beside them, arbitrary floats still do where the
    float sum rounds across a grid point."""
    grid = Grid(8, frac)
    step = 2.0 ** -frac
    columns = [[3 * step] * 6, [step, -step, 2 * step, 0.0, -3 * step, step],
               [2.0 ** -(2 * frac)] * 6]
    q, k, v = _zero_weight_rows(columns, grid)
    calls = []

    def counted(value=0):
        calls.append(value)
        return Fraction(value)

    with mock.patch.object(exact_attention, "Fraction", counted):
        results = _both_ways(q, k, v, grid)
    assert calls == []
    for result in results:
        assert torch.equal(result, reference(q, k, v, grid))
    q, k, v = _zero_weight_rows([[1.0, 2.0 ** 60, 1.0, -2.0 ** 60]], grid)
    with mock.patch.object(exact_attention, "Fraction", counted):
        assert torch.equal(fixed_attention(q, k, v, grid), reference(q, k, v, grid))
    assert calls
