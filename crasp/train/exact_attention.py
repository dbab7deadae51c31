"""One causal head in the model format's exact arithmetic: ``fixed_attention``.

The format (``docs/model-format.md``; the executor's ``attend``) computes, at query i,

    w_ij = R(exp(q_i . k_j))          j <= i, each weight a grid value m 2^-s, 0 <= m < 2^(p-1)
    N_i = sum_j R(w_ij v_j)           every summand rounded on its own (floor, saturating)
    D_i = sum_j w_ij
    c_i = R(N_i / D_i), or R(mean of v_j over j <= i) when D_i = 0.

The summands are the cost: B T^2 d_h / 2 roundings per head, each a few passes over a
[B, C, T, d_h] tensor. Two exact ways to get N:

* **by distinct weights.** A summand depends on its pair only through the weight's value u
  and v_j, so, with ``table_u = R(u v)`` [B, T, d_h] (the same float product and the same
  rounding as the pair's own, so the same bits) and ``[w = u]`` the 0/1 matrix of the pairs
  whose weight is u,

      N = sum over the distinct nonzero u of  [w = u] @ table_u.

  Every term is an integer number of grid units, at most 2^(p-1) in magnitude, and the 0/1
  matrix is exact, so a matrix product is exact in any summation order while every partial
  sum stays below 2^24 (float32, T 2^(p-1) < 2^24; ``_exact_dtype``) or 2^53 (float64, the
  precondition the summand-by-summand sum needs too); saturation is exact because it
  happens inside table_u. A later key's weight is 0, so it is in no [w = u]. A grid of p bits
  has at most 2^(p-1) - 1 nonzero weights: 7 at p = 4, 127 at p = 8.
* **summand by summand**, in query chunks of about ``QUERY_CHUNK_ELEMENTS`` summands, each
  reading only the keys up to its last query (a later key's summand is set to 0: R(0 * v) is
  NaN where v is infinite).

Measured on one core of the development machine (B T from 3,200 to 4,016, d_h 4 to 512:
the shapes of ``benchmarks/bench_exact_attention.py`` and smaller), a summand costs 3-6 ns,
and a pair per distinct weight 2 ns (d_h 4 and 16), 3.5 ns (d_h 64) to 15 ns (d_h 512), so
the first way is cheaper below about 120 d_h / (d_h + 64) distinct weights (9 at d_h 4, 25
at d_h 16, 95 at d_h 256);
``_by_distinct_weights`` chooses, with a margin. Both give the same N, bit for bit
(tests/test_exact_attention.py against a per-pair reference, and
tests/test_fixed_precision_train.py against the executor). Where every weight rounds to 0,
``_prefix_means`` gives R of the exact mean.

Gradient: the straight-through estimator of every R (``Grid.straight``) makes N's gradient
that of sum_j w_ij v_j, i.e. of the matrix product ``weights @ values``, which is what the
backward pass differentiates (the rounded N is its forward value).
"""

from __future__ import annotations

import math
from fractions import Fraction

import torch

WEIGHT_CHUNK_ELEMENTS = 1 << 22
"""Rough number of elements of a chunk's weight matrix [B, C, T] (queries in chunks)."""

QUERY_CHUNK_ELEMENTS = 1 << 21
"""Rough number of elements of a smaller chunk's summands [B, C, T, dh], where every summand
is rounded on its own."""

QUERY_BLOCK = 64
"""Queries per matrix product when summing by distinct weights (a block reads the keys up to
its last query only, a little over half of the products of the whole square)."""

COUNTED_WEIGHT_BITS = 21
"""Up to this many bits of a weight's grid units, its distinct values are counted with a
``bincount`` (linear) rather than ``torch.unique`` (a sort)."""


def _by_distinct_weights(distinct: int, d_head: int) -> bool:
    """Whether a matrix product per distinct weight is cheaper than rounding every summand:
    below the measured crossover 120 d_h / (d_h + 64) distinct weights (module docstring),
    less a sixth for margin."""
    return distinct * (d_head + 64) <= 100 * d_head


def _distinct_weights(units: torch.Tensor, values: torch.Tensor, grid) -> torch.Tensor | None:
    """The distinct nonzero values among the weights' grid units (nonnegative integers), or
    None where a weight is NaN or a value infinite or NaN (a diverged run's): R(0 * inf) is
    NaN, which only the summands carry."""
    if torch.isnan(units).any() or not torch.isfinite(values).all():
        return None
    if grid.total_bits - 1 <= COUNTED_WEIGHT_BITS:
        counts = torch.bincount(units.reshape(-1).long(), minlength=2)
        present = torch.nonzero(counts[1:]).reshape(-1) + 1
        return present.to(units.dtype)
    present = torch.unique(units)
    return present[present != 0]


def _exact_dtype(keys: int, grid, device) -> torch.dtype:
    """float32 where its matrix products of integers are exact: every partial sum of a
    query's keys at most keys 2^(p-1) < 2^24, on the CPU at the default "highest" float32
    matrix-product precision (TF32 or bfloat16 products would not be exact); else float64."""
    exact = keys * 2 ** (grid.total_bits - 1) < 2 ** 24
    if exact and device.type == "cpu" and torch.get_float32_matmul_precision() == "highest":
        return torch.float32
    return torch.float64


def _sums_by_distinct_weights(units: torch.Tensor, values: torch.Tensor, distinct, first: int,
                              grid) -> torch.Tensor:
    """N in grid units [B, C, dh] of the queries first .. first + C - 1 from the weights'
    units [B, C, K] (0 where masked) and values [B, K, dh]; the queries in blocks of
    ``QUERY_BLOCK``, each reading only the keys up to its last query."""
    queries = units.shape[1]
    dtype = _exact_dtype(units.shape[2], grid, units.device)
    total = values.new_zeros(units.shape[0], queries, values.shape[-1])
    for weight in distinct:
        table = grid.units((weight / grid.scale) * values).to(dtype)
        for start in range(0, queries, QUERY_BLOCK):
            stop = min(queries, start + QUERY_BLOCK)
            pairs = (units[:, start:stop, :first + stop] == weight).to(dtype)
            total[:, start:stop] += (pairs @ table[:, :first + stop]).to(total.dtype)
    return total


def _sums_by_summand(weights: torch.Tensor, values: torch.Tensor, mask: torch.Tensor,
                     first: int, grid) -> torch.Tensor:
    """N in grid units [B, C, dh] of the queries first .. first + C - 1 (weights [B, C, K],
    values [B, K, dh], ``mask`` [C, K] True where a key is visible), each summand rounded on
    its own, the queries in smaller chunks."""
    batch, width, keys = weights.shape
    chunk = max(1, QUERY_CHUNK_ELEMENTS // max(1, batch * keys * max(1, values.shape[-1])))
    pieces = []
    for start in range(0, width, chunk):
        stop = min(width, start + chunk)
        # the chunk's queries read the keys up to the last of them only, and a later key's
        # summand is 0 even where R(0 * v) is not (v infinite or NaN)
        seen = first + stop
        summands = grid.units(weights[:, start:stop, :seen, None] * values[:, None, :seen])
        visible = mask[None, start:stop, :seen, None]
        pieces.append(torch.where(visible, summands, 0.0).sum(dim=2))
    return torch.cat(pieces, dim=1)


def _exact_prefix_sums(values: torch.Tensor, magnitudes: torch.Tensor, grid) -> bool:
    """Whether the float prefix sums S, and floor(2^s S / n), are exact: every v_j a multiple
    of 2^-2s (the trained class's v = h W, both on the grid) and every |S| 2^2s + n 2^s below
    2^53. Then S 2^2s is an integer a, the sums are exact, and 2^s S / n = a / (n 2^s), a
    quotient of integers whose magnitudes sum below 2^53, is never rounded onto an integer it
    is not (it is at least 1 / (n 2^s) away from one, more than half a unit in its last
    place), so its floor is exact."""
    units = values * grid.scale ** 2
    if not torch.equal(torch.floor(units), units):
        return False
    largest = float(magnitudes.max()) if magnitudes.numel() else 0.0
    return largest * grid.scale ** 2 + values.shape[1] * grid.scale < 2.0 ** 53


def _prefix_means(values: torch.Tensor, first: int, grid) -> torch.Tensor:
    """R(mean of v_j over j <= i) [B, C, dh] for the queries i = first .. first + C - 1
    (values [B, K, dh], K = first + C): the output where every weight rounds to 0.

    Exactly R of the real mean, as the decompiler's exact arithmetic takes it, for any float64
    v (a float run's are not dyadic, so a float sum may round across a grid point): the
    prefix sums S are float cumulative sums, whose error is at most gamma_(K-1) sum |v_j| in
    any summation order (Higham, Accuracy and Stability of Numerical Algorithms, 4.2); t =
    2^s S / n adds one rounding. Where floor(t - e) = floor(t + e) for a bound e of four
    times those errors, that floor is R's; the few others are summed as exact fractions. For
    the trained class's v the float sums are exact (``_exact_prefix_sums``), and e is 0:
    there a mean often falls on a grid point, which the bound could not tell apart."""
    keys = values.shape[1]
    counts = torch.arange(first + 1, keys + 1, dtype=values.dtype, device=values.device)
    sums = torch.cumsum(values, dim=1)[:, first:]
    with torch.no_grad():
        magnitudes = torch.cumsum(values.detach().abs(), dim=1)[:, first:]
        scaled = sums.detach() * grid.scale / counts[None, :, None]
        # the float errors, twice over, and the rounding of t -/+ e (a subnormal t included)
        if _exact_prefix_sums(values, magnitudes, grid):
            error = torch.zeros_like(scaled)
        else:
            error = 4 * (keys + 2) * 2.0 ** -53 * (
                magnitudes * grid.scale / counts[None, :, None] + scaled.abs()) + 2.0 ** -1073
            # S is exactly 0 where every v_j is 0; an infinite or NaN sum is R's as it is
            error = torch.where((magnitudes == 0) | ~torch.isfinite(error), 0.0, error)
        units = torch.floor(scaled - error)
        uncertain = (units != torch.floor(scaled + error)) & torch.isfinite(scaled)
        for batch, query, coordinate in torch.nonzero(uncertain).tolist():
            column = values[batch, :first + query + 1, coordinate].tolist()
            exact = sum(map(Fraction, column), Fraction(0)) * int(grid.scale) / len(column)
            units[batch, query, coordinate] = min(max(math.floor(exact), grid.low), grid.high)
        units = torch.clamp(units, grid.low, grid.high)
    return grid.straight(sums / counts[None, :, None], units / grid.scale)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, first: int, grid
            ) -> torch.Tensor:
    """The averages [B, C, dh] of the queries first .. first + C - 1 (q [B, C, dq]) over the
    keys 0 .. first + C - 1 (k [B, K, dq], v [B, K, dh])."""
    keys, queries = k.shape[1], q.shape[1]
    mask = (torch.arange(keys, device=q.device)[None, :]
            <= torch.arange(first, first + queries, device=q.device)[:, None])
    scores = q @ k.transpose(1, 2)
    weights = grid.round(torch.exp(torch.clamp(scores, max=grid.cap))) * mask
    with torch.no_grad():
        units = weights.detach() * grid.scale
        distinct = _distinct_weights(units, v, grid)
        if distinct is not None and _by_distinct_weights(len(distinct), v.shape[-1]):
            sums = _sums_by_distinct_weights(units, v.detach(), distinct, first, grid)
        else:
            sums = _sums_by_summand(weights.detach(), v.detach(), mask, first, grid)
    numerator = sums / grid.scale
    if torch.is_grad_enabled() and (weights.requires_grad or v.requires_grad):
        numerator = grid.straight(weights @ v, numerator)
    denominator = weights.sum(dim=2)[..., None]
    zero = denominator == 0
    average = grid.ratio(numerator * grid.scale, torch.where(zero, 1.0, denominator * grid.scale))
    if zero.any():  # every weight rounded to 0: R(plain average of the v_j)
        average = torch.where(zero, _prefix_means(v, first, grid), average)
    return average


def fixed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, grid) -> torch.Tensor:
    """One causal head in the format's arithmetic: q, k [B, T, dq], v [B, T, dh] (unrounded,
    as the format computes them) -> the averages c [B, T, dh] (see the module docstring);
    ``grid`` is a ``crasp.train.fixed_precision.Grid``. The queries go in chunks of about
    ``WEIGHT_CHUNK_ELEMENTS`` weights, each reading the keys up to its last query."""
    batch, width = q.shape[0], q.shape[1]
    chunk = max(1, WEIGHT_CHUNK_ELEMENTS // max(1, batch * width))
    return torch.cat([_attend(q[:, start:start + chunk], k[:, :start + chunk],
                              v[:, :start + chunk], start, grid)
                      for start in range(0, width, chunk)], dim=1)
