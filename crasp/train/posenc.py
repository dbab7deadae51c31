"""Positional encodings: RoPE, ALiBi, learned absolute, sinusoidal and periodic tables
(``sinusoidal-rational``: the model format's tables indexed by i mod M; NoPE needs nothing).

Positions are 0-based and BOS sits at position 0. With right padding the positions of every
real token are ``arange(T)``, whatever the batch, so no position ids are passed around.

RoPE (Su et al.): the first ``rope_dims(d_h, fraction)`` dimensions of each query and key head
are rotated in the half-split layout (pairs ``(i, i + r/2)``, as in GPT-NeoX/HF Llama), with
``theta_i = base^(-2i/r)``. Angles are computed in float64 and stored as float32. Scores then
depend on positions only through ``m - n``.

ALiBi (Press et al.): ``score_ij = q_i . k_j / sqrt(d_h) - m_h (i - j)`` for ``j <= i``. The
standard slopes for ``H`` heads are ``2^(-8h/H)``, ``h = 1..H``, for ``H`` a power of two;
otherwise the slopes of the nearest lower power of two followed by every other slope of the
next power of two. With one head the slope is ``2^-8 = 0.0039``: a bias of only -1.56 at distance
400, i.e. nearly NoPE. Set ``alibi_slopes`` to choose slopes.

Two exact ALiBi implementations: ``mask`` (default) passes the (1, H, T, T) bias, causal
mask included, as a float attention mask (on torch 2.13 CPU this runs as fast as NoPE); ``fold``
uses ``-m (i - j) = m j - m i`` and the shift-invariance of softmax in
each row: the row constant ``-m i`` is dropped and ``m j`` is folded into the dot product by
appending a coordinate ``1`` to each query and ``m j / scale`` to each key, so the causal
kernel (``is_causal=True``) runs with no mask (measured 2.2x slower on CPU because of the odd
head size; kept for GPUs whose fused kernels take no float mask).
"""

from __future__ import annotations

import math

import torch
from torch import nn


def _cached(cache: dict, key, make):
    """Memoize a constant table. Tables are built outside inference mode (and without grad),
    so one first built during evaluation can still be used by a training step."""
    if key not in cache:
        if len(cache) > 64:
            cache.clear()
        with torch.inference_mode(False), torch.no_grad():
            cache[key] = make()
    return cache[key]


# ---------------------------------------------------------------------------- RoPE

def rope_angles(length: int, dims: int, base: float,
                device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of shape (length, dims) for the half-split layout (frequencies repeated by
    cat)."""
    half = dims // 2
    inv = base ** (-torch.arange(half, dtype=torch.float64) * 2 / dims)
    angles = torch.arange(length, dtype=torch.float64)[:, None] * inv[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().float().to(device), angles.sin().float().to(device)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate the first ``cos.shape[-1]`` dims of ``x`` (..., T, d_h); the rest pass through."""
    dims = cos.shape[-1]
    if dims == x.shape[-1]:
        return x * cos + rotate_half(x) * sin
    rotated, rest = x[..., :dims], x[..., dims:]
    return torch.cat([rotated * cos + rotate_half(rotated) * sin, rest], dim=-1)


class Rotary(nn.Module):
    """Caches cos/sin per (length, device); ``forward(q, k)`` rotates both (B, H, T, d_h)."""

    def __init__(self, dims: int, base: float):
        super().__init__()
        self.dims = dims
        self.base = base
        self._cache: dict = {}

    def tables(self, length: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        return _cached(self._cache, (length, str(device)),
                       lambda: rope_angles(length, self.dims, self.base, device))

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = self.tables(q.shape[-2], q.device)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin)


# ---------------------------------------------------------------------------- ALiBi

def alibi_slopes(n_heads: int) -> list[float]:
    """The standard ALiBi slopes (Press et al.; as in BLOOM, x-transformers, DeepMind)."""
    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if n_heads < 1:
        raise ValueError("n_heads must be >= 1")
    if math.log2(n_heads).is_integer():
        return power_of_two(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return power_of_two(closest) + power_of_two(2 * closest)[0::2][: n_heads - closest]


def alibi_bias(slopes: torch.Tensor, length: int) -> torch.Tensor:
    """(H, T, T) float bias: ``-m_h (i - j)`` for ``j <= i`` and ``-inf`` above the diagonal."""
    i = torch.arange(length)[:, None]
    j = torch.arange(length)[None, :]
    distance = (i - j).to(slopes.dtype)
    bias = -slopes[:, None, None] * distance[None]
    return bias.masked_fill((j > i)[None], float("-inf"))


class ALiBi(nn.Module):
    """Holds the slopes (a buffer, saved with the model) and caches the mask or key tables."""

    def __init__(self, slopes: list[float], impl: str = "mask"):
        super().__init__()
        self.register_buffer("slopes", torch.tensor(slopes, dtype=torch.float32))
        self.impl = impl
        self._cache: dict = {}

    def _load_from_state_dict(self, *args, **kwargs):
        self._cache.clear()  # tables depend on the slopes being loaded
        return super()._load_from_state_dict(*args, **kwargs)

    def mask(self, length: int, device, dtype) -> torch.Tensor:
        return _cached(self._cache, ("mask", length, str(device), dtype), lambda: alibi_bias(
            self.slopes.detach().double().cpu(), length).to(device=device, dtype=dtype)[None])

    def key_column(self, length: int, scale: float, device, dtype) -> torch.Tensor:
        """(H, T, 1): ``m_h j / scale``, appended to the keys by the ``fold`` implementation."""
        def make():
            j = torch.arange(length, dtype=torch.float64)
            column = self.slopes.detach().double().cpu()[:, None] * j[None, :] / scale
            return column[..., None].to(device=device, dtype=dtype)
        return _cached(self._cache, ("fold", length, scale, str(device), dtype), make)


# ---------------------------------------------------------------------------- absolute

def sinusoidal_table(length: int, d_model: int) -> torch.Tensor:
    """The (length, d_model) table of Vaswani et al. (sin on even, cos on odd dimensions)."""
    position = torch.arange(length, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64)
                    * (-math.log(10000.0) / d_model))
    table = torch.zeros(length, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div)
    return table.float()


class Sinusoidal(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model
        self._cache: dict = {}

    def forward(self, length: int, device) -> torch.Tensor:
        return _cached(self._cache, (length, str(device)),
                       lambda: sinusoidal_table(length, self.d_model).to(device))


class Learned(nn.Module):
    """Learned absolute positions 0 .. max_positions-1 (positions past the train lengths are
    never trained: the usual APE baseline)."""

    def __init__(self, max_positions: int, d_model: int):
        super().__init__()
        self.table = nn.Embedding(max_positions, d_model)
        nn.init.normal_(self.table.weight, std=0.02)

    def forward(self, length: int, device) -> torch.Tensor:
        if length > self.table.num_embeddings:
            raise ValueError(f"sequence of {length} positions exceeds the learned table "
                             f"({self.table.num_embeddings})")
        return self.table.weight[:length]


def rational_sinusoid(modulus: int, d_model: int) -> torch.Tensor:
    """(modulus, d_model): row r is (cos(2 pi k r / M), sin(2 pi k r / M)) for k = 1, 2, ...
    in dimension pairs (2k - 2, 2k - 1), truncated to d_model; zeros past k = M / 2 (higher k
    repeat lower ones). A sinusoid at these rational angles depends on a position i only
    through i mod M, so it *is* this table indexed by i mod M."""
    table = torch.zeros(modulus, d_model, dtype=torch.float64)
    residue = torch.arange(modulus, dtype=torch.float64)
    for k in range(1, modulus // 2 + 1):
        if 2 * k > d_model:
            break
        angle = 2 * math.pi * k * residue / modulus
        table[:, 2 * k - 2], table[:, 2 * k - 1] = angle.cos(), angle.sin()
    return table.float()


class PeriodicTables(nn.Module):
    """The format's periodic positional tables (``docs/model-format.md``, version 3): per
    modulus M a table of M rows, row ``i mod M`` added to the input at position i (BOS is
    position 0). Trainable parameters ``tables.{M}``, initialized to ``rational_sinusoid``,
    so a compiled model's tables (any function of i mod M) load into them exactly."""

    def __init__(self, moduli: list[int], d_model: int):
        super().__init__()
        self.tables = nn.ParameterDict({str(m): nn.Parameter(rational_sinusoid(m, d_model))
                                        for m in moduli})

    def forward(self, length: int, device) -> torch.Tensor:
        position = torch.arange(length, device=device)
        total = 0
        for modulus, table in self.tables.items():
            total = total + table[position % int(modulus)]
        return total


# ---------------------------------------------------------------------------- relative biases

def causal_bias(values: torch.Tensor) -> torch.Tensor:
    """(H, T, T) bias with ``-inf`` above the diagonal (``j > i``): the causal mask, folded in
    so that the bias can be passed to ``scaled_dot_product_attention`` as ``attn_mask``."""
    length = values.shape[-1]
    future = torch.ones(length, length, dtype=torch.bool, device=values.device).triu(1)
    return values.masked_fill(future, float("-inf"))


def distances(length: int, device=None) -> torch.Tensor:
    """(T, T) long: ``i - j`` clamped at 0 (future positions are masked anyway)."""
    i = torch.arange(length, device=device)[:, None]
    j = torch.arange(length, device=device)[None, :]
    return (i - j).clamp(min=0)


def t5_bucket(distance: torch.Tensor, buckets: int, max_distance: int) -> torch.Tensor:
    """T5's causal ("unidirectional") relative-position bucket of ``distance = i - j >= 0``
    (Raffel et al. 2020, JMLR 21(140), §2.1; the ``_relative_position_bucket`` of
    mesh-tensorflow and Hugging Face with ``bidirectional=False``).

    With ``exact = buckets // 2``: distances ``0 .. exact - 1`` get a bucket each; a distance
    ``n >= exact`` gets ``exact + floor(log(n / exact) / log(max_distance / exact) *
    (buckets - exact))``, capped at ``buckets - 1``. So buckets grow logarithmically up to
    ``max_distance`` and every farther distance shares the last bucket. The logarithm is taken in
    float32, as in both reference implementations, so the boundaries are theirs exactly.
    """
    exact = buckets // 2
    n = distance.long()
    scaled = (torch.log(n.float().clamp(min=1) / exact) / math.log(max_distance / exact)
              * (buckets - exact))
    large = (exact + scaled.to(torch.long)).clamp(max=buckets - 1)
    return torch.where(n < exact, n, large)


class T5Bias(nn.Module):
    """T5's learned relative bias: ``score_ij += b_h[bucket(i - j)]`` for ``j <= i``.

    One table of ``buckets x heads`` learned scalars, shared by every layer as in T5 (the first
    layer owns it there; here the model does). Initialized to zero, so a new model starts as
    NoPE. ``mask(T)`` returns the (1, H, T, T) bias with the causal mask folded in.
    """

    def __init__(self, n_heads: int, buckets: int, max_distance: int):
        super().__init__()
        self.buckets = buckets
        self.max_distance = max_distance
        self.table = nn.Embedding(buckets, n_heads)
        nn.init.zeros_(self.table.weight)
        self._cache: dict = {}

    def bucket_table(self, length: int, device) -> torch.Tensor:
        return _cached(self._cache, (length, str(device)), lambda: t5_bucket(
            distances(length), self.buckets, self.max_distance).to(device))

    def mask(self, length: int, device, dtype) -> torch.Tensor:
        values = self.table(self.bucket_table(length, device)).permute(2, 0, 1)  # (H, T, T)
        return causal_bias(values.to(dtype))[None]


RELATIVE_KINDS = {"rpe-log": lambda n: torch.log1p(n), "rpe-lin": lambda n: n}


class RelativeBias(nn.Module):
    """The two relative-bias families of the approximation-rate analysis of T5-style relative
    positional encodings (Wang & E, "Understanding the Expressive Power and Mechanisms of
    Transformer for Sequence Modeling", NeurIPS 2024, §3: RPE of log type and of linear type):

    * ``rpe-log``: ``score_ij -= p_h log(1 + (i - j))``, a polynomially decaying memory
      (``softmax`` weights ``(1 + i - j)^(-p_h)``: heavy-tailed);
    * ``rpe-lin``: ``score_ij -= p_h (i - j)``, an exponentially decaying memory (ALiBi's form,
      with learned slopes).

    ``p_h`` is a learned real number per head and per layer (one module per layer), initialized
    to ALiBi's standard slopes (so that the heads start at different memory lengths); it is not
    constrained to be positive, as in the analysis, where the sign of ``p`` is free.
    (``log(1 + n)`` rather than the paper's ``log n`` keeps the bias finite at ``n = 0``.)
    """

    def __init__(self, kind: str, n_heads: int):
        super().__init__()
        self.kind = kind
        self.rate = nn.Parameter(torch.tensor(alibi_slopes(n_heads), dtype=torch.float32))
        self._cache: dict = {}

    def mask(self, length: int, device, dtype) -> torch.Tensor:
        shape = _cached(self._cache, (length, str(device)), lambda: RELATIVE_KINDS[self.kind](
            distances(length).double()).float().to(device))
        return causal_bias((-self.rate[:, None, None] * shape[None]).to(dtype))[None]
