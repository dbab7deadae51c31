"""Pass: (CompiledModel, inputs) -> ModelEvaluation. Runs a model's weights in PyTorch.

Two number systems run the same forward pass (``docs/model-format.md`` has the semantics):

* ``exact``: fixed precision with p total and s fractional bits. Every activation is a float64
  holding a grid value m * 2^-s (|m| < 2^52, so float64 holds it exactly); R rounds down to the
  grid and saturates, after each attention average, each residual addition and each
  feed-forward linear layer. The two sums inside attention are exact: they run on int64 grid
  units where a bound proves it safe (T + 1 summands of at most 2^(p-1) units, times 2^s, below
  2^63), and on Python integers otherwise (so nothing degrades or overflows at any length); the
  average is an integer floor division.
  Linear maps are computed in float64, which is exact for the compiled models (integer
  weights, small integer activations); for arbitrary real weights it is the float64 value
  that R then rounds. The number of roundings that saturated is counted.
* ``float``: the same weights in plain float64 with no rounding (attention is a softmax).

The input is the embedding plus, in a version-3 model, each periodic table's row t mod M. A
head whose query or key weights are all zero and whose ALiBi slope is 0 scores every pair 0, so
it averages uniformly: that is a cumulative sum, O(T). A head with a positive slope sees only a
window of keys in exact mode (the window lemma, ``_window``): O(T W). Any other head takes the
general path, O(T^2), in chunks of query positions: score q_i . k_j - slope (i - j), weight
R(exp(score)) per pair, summand R(weight * v_j).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from torch.nn.functional import linear

from crasp import syntax
from crasp.api_inputs import Inputs, check_lengths, token_batch
from crasp.compiler.model_config import (EMBED, OUT_BIAS, OUT_WEIGHT, alibi, attention, ffn,
                                         periodic)
from crasp.compiler.model_format import CompiledModel
from crasp.interpret import BOS_ID, PAD_ID, encode

MODES = ("exact", "float")
CHUNK_ELEMENTS = 1 << 22
"""Rough number of float64 elements per intermediate tensor (rows and query chunks)."""


class _Exact:
    """The fixed-precision number system: p total bits, s fractional bits."""

    def __init__(self, total_bits: int, frac_bits: int):
        self.total_bits = total_bits
        self.scale = 2 ** frac_bits
        self.low, self.high = -(2 ** (total_bits - 1)), 2 ** (total_bits - 1) - 1
        self.saturations = 0

    def saturate(self, m: torch.Tensor) -> torch.Tensor:
        """Clamp fresh grid units to the p-bit range in place, counting the values outside."""
        if m.numel():
            smallest, largest = torch.aminmax(m)
            if smallest < self.low or largest > self.high:
                self.saturations += int(((m < self.low) | (m > self.high)).sum())
                m.clamp_(self.low, self.high)
        return m

    def grid(self, x: torch.Tensor) -> torch.Tensor:
        """floor(x * 2^s) as a new float64 tensor."""
        return torch.floor(x * self.scale if self.scale != 1 else x)

    def round(self, x: torch.Tensor) -> torch.Tensor:
        m = self.saturate(self.grid(x))
        return m / self.scale if self.scale != 1 else m

    def units(self, x: torch.Tensor) -> torch.Tensor:
        """R(x) as int64 grid units m (R(x) = m * 2^-s)."""
        return self.saturate(self.grid(x)).to(torch.int64)

    def value(self, m: torch.Tensor) -> torch.Tensor:
        return m.to(torch.float64) / self.scale

    def fits_int64(self, terms: int) -> bool:
        """Whether ``terms`` summands of p-bit grid units, scaled by 2^s, provably fit int64."""
        return terms * 2 ** (self.total_bits - 1) * self.scale < 2 ** 63

    def ratio(self, numerator, denominator) -> torch.Tensor:
        """R(N / D) for exact sums N, D in grid units, D > 0: floor(N * 2^s / D) units. N and D
        are int64 tensors, or numpy arrays of Python integers where int64 could overflow."""
        if isinstance(numerator, torch.Tensor) and isinstance(denominator, torch.Tensor):
            m = torch.div(numerator * self.scale, denominator, rounding_mode="floor")
            return self.value(self.saturate(m))
        exact = (np.asarray(numerator, dtype=object) * self.scale) // np.asarray(denominator,
                                                                                 dtype=object)
        self.saturations += int(((exact < self.low) | (exact > self.high)).sum())
        clamped = np.minimum(np.maximum(exact, self.low), self.high).astype(np.int64)
        return self.value(torch.as_tensor(clamped))

    def exact_sum(self, units: torch.Tensor, dim: int, cumulative: bool = False):
        """A sum of int64 grid units along ``dim``: int64 when ``fits_int64`` proves it safe,
        else a numpy array of Python integers."""
        if self.fits_int64(units.shape[dim]):
            return torch.cumsum(units, dim=dim) if cumulative else units.sum(dim=dim)
        exact = units.cpu().numpy().astype(object)
        return np.cumsum(exact, axis=dim) if cumulative else exact.sum(axis=dim)

    def uniform(self, v: torch.Tensor) -> torch.Tensor:
        """Causal average with every weight R(exp(0)): v is [B, T, d]."""
        weight = self.units(torch.ones((), dtype=torch.float64, device=v.device))
        summands = self.units(self.value(weight) * v)
        positions = torch.arange(1, v.shape[1] + 1, device=v.device)[None, :, None]
        sums = self.exact_sum(summands, 1, cumulative=True)
        if not isinstance(sums, torch.Tensor):
            positions = positions.cpu().numpy()
        return self.ratio(sums, positions * weight.item())

    def attend(self, scores: torch.Tensor, v: torch.Tensor, mask: torch.Tensor,
               prefix_mean) -> torch.Tensor:
        """scores [B, C, W] of C query positions against W key positions each, v [B, C or 1,
        W, d] their values, mask [C, W] (True where a key is visible) -> [B, C, d].
        ``prefix_mean()`` is the plain average of v over all j <= i [B, C, d], the output
        where every weight rounds to 0."""
        weights = torch.where(mask, self.units(torch.exp(scores).masked_fill(~mask, 0)), 0)
        summands = self.units(self.value(weights)[..., None] * v)
        numerator = self.exact_sum(summands * mask[None, :, :, None], 2)
        denominator = self.exact_sum(weights, 2)[..., None]
        zero = torch.as_tensor(np.asarray(denominator == 0, dtype=bool))
        # every weight rounded to 0: R(plain average of the v_j)
        if isinstance(numerator, torch.Tensor):
            average = self.ratio(torch.where(zero, 0, numerator),
                                 torch.where(zero, 1, denominator))
        else:
            average = self.ratio(np.where(zero.numpy(), 0, numerator),
                                 np.where(zero.numpy(), 1, denominator))
        if zero.any():
            average = torch.where(zero, self.round(torch.where(zero, prefix_mean(), 0)), average)
        return average


class _Float:
    """Plain float64: no rounding, softmax attention."""

    saturations = 0

    @staticmethod
    def round(x: torch.Tensor) -> torch.Tensor:
        return x

    @staticmethod
    def uniform(v: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(1, v.shape[1] + 1, dtype=torch.float64, device=v.device)
        return torch.cumsum(v, dim=1) / positions[None, :, None]

    @staticmethod
    def attend(scores: torch.Tensor, v: torch.Tensor, mask: torch.Tensor,
               prefix_mean) -> torch.Tensor:
        weights = torch.softmax(scores.masked_fill(~mask, -math.inf), dim=-1)
        return (weights[..., None] * v).sum(dim=2)


def _distinct_rows(x: torch.Tensor) -> torch.Tensor | None:
    """The distinct rows of x [..., d], found through a random projection (a 1-D sort, much
    faster than ``torch.unique(dim=0)``) and checked exactly; None if two distinct rows
    collide under the projection."""
    rows = x.reshape(-1, x.shape[-1])
    direction = torch.linspace(1.0, 2.0, rows.shape[-1], dtype=rows.dtype, device=rows.device)
    keys, inverse = torch.unique(rows @ (direction * math.pi), return_inverse=True)
    first = torch.zeros(len(keys), dtype=torch.long, device=rows.device)
    first.scatter_(0, inverse, torch.arange(len(rows), device=rows.device))
    distinct = rows[first]
    return distinct if torch.equal(distinct[inverse], rows) else None


class FixedPrecisionTransformer(torch.nn.Module):
    """The model of ``docs/model-format.md`` as a PyTorch module.

    ``forward(ids)`` takes token ids [B, T + 1] (column 0 = BOS) and returns the output scores
    out . h_i + b [B, T + 1], and with ``record=True`` also the residual stream after every
    layer; ``saturations`` then holds the number of roundings that saturated. ``exact=False``
    runs the float64 number system. ``uniform_shortcut=False`` sends every head through the
    general O(T^2) path (for testing that path on compiled models). The weights are float64
    buffers (``weight(name)``), so the module moves with ``.to(device)``.
    """

    def __init__(self, model: CompiledModel, exact: bool = True, uniform_shortcut: bool = True):
        super().__init__()
        spec = model.spec
        self.spec = spec
        self.exact = exact
        self.uniform_shortcut = uniform_shortcut
        for name, value in model.tensors.items():
            self.register_buffer(name.replace(".", "__"),
                                 torch.as_tensor(np.asarray(value, dtype=np.float64)),
                                 persistent=False)
        self.n_heads, self.d_head = spec.n_heads, spec.d_head
        self.ffn_depths = [len(widths) + 1 for widths in spec.ffn_widths]
        self.slopes = [[float(self.weight(alibi(layer))[head]) if spec.alibi else 0.0
                        for head in range(self.n_heads)] for layer in range(spec.n_layers)]
        self.uniform = [[self._zero_scores(layer, head) and not self.slopes[layer][head]
                         for head in range(self.n_heads)] for layer in range(spec.n_layers)]
        self.arithmetic: _Exact | _Float = _Float()

    def weight(self, name: str) -> torch.Tensor:
        """The tensor of the model format named ``name`` (e.g. ``layers.0.attn.v``)."""
        return getattr(self, name.replace(".", "__"))

    @property
    def saturations(self) -> int:
        return self.arithmetic.saturations

    def _zero_scores(self, layer: int, head: int) -> bool:
        rows = slice(head * self.d_head, (head + 1) * self.d_head)
        return bool((self.weight(attention(layer, "q"))[rows] == 0).all()
                    or (self.weight(attention(layer, "k"))[rows] == 0).all())

    def project(self, h: torch.Tensor, layer: int, head: int):
        """q, k, v of ``head`` in ``layer`` for states h [..., d_model] (exact, not rounded)."""
        rows = slice(head * self.d_head, (head + 1) * self.d_head)
        return tuple(linear(h, self.weight(attention(layer, part))[rows]) for part in "qkv")

    def _head(self, h: torch.Tensor, layer: int, head: int) -> torch.Tensor:
        arithmetic = self.arithmetic
        q, k, v = self.project(h, layer, head)
        if self.uniform[layer][head] and self.uniform_shortcut:
            return arithmetic.uniform(v)
        slope = self.slopes[layer][head]
        batch, width = h.shape[0], h.shape[1]
        positions = torch.arange(width, device=h.device)

        def prefix_mean(start: int, stop: int) -> torch.Tensor:
            counts = positions[start:stop, None].to(torch.float64) + 1
            return torch.cumsum(v, dim=1)[:, start:stop] / counts

        window = self._window(q, k, slope)
        if window is not None and window < width:
            return self._windowed(q, k, v, slope, window, lambda: prefix_mean(0, width))
        chunk = max(1, CHUNK_ELEMENTS // max(1, batch * width * max(1, self.d_head)))
        pieces = []
        for start in range(0, width, chunk):
            stop = min(width, start + chunk)
            distance = positions[start:stop, None] - positions[None, :]
            scores = q[:, start:stop] @ k.transpose(1, 2) - slope * distance
            pieces.append(arithmetic.attend(scores, v[:, None], distance >= 0,
                                            lambda a=start, b=stop: prefix_mean(a, b)))
        return torch.cat(pieces, dim=1)

    def _window(self, q: torch.Tensor, k: torch.Tensor, slope: float) -> int | None:
        """The window lemma (``docs/model-format.md``): with slope a > 0 and every score
        q_i . k_j <= S, a key at distance d > (S + s ln 2) / a has exp(score) < 2^-s, so its
        weight rounds to 0. S is the largest score over the distinct query and key vectors
        (a fixed-precision model has few), or max |q_i| max |k_j| (Cauchy-Schwarz) when they
        are many. Exact mode only (a softmax gives every key a positive weight); None when
        there is no window."""
        if not (self.exact and slope > 0) or not q.numel():
            return None
        queries, keys = _distinct_rows(q), _distinct_rows(k)
        if queries is not None and keys is not None and len(queries) * len(keys) <= CHUNK_ELEMENTS:
            bound = float((queries @ keys.T).max())
        else:
            bound = float(q.norm(dim=-1).max() * k.norm(dim=-1).max())
        frac_bits = self.spec.precision.frac_bits
        return max(0, int(math.floor((bound + frac_bits * math.log(2)) / slope))) + 1

    def _windowed(self, q, k, v, slope: float, window: int, prefix_mean) -> torch.Tensor:
        """A positive-slope head over the keys j = i - window .. i only (``_window``)."""
        width = q.shape[1]
        distance = torch.arange(window + 1, device=q.device)
        keys = torch.arange(width, device=q.device)[:, None] - distance[None, :]   # [T, W]
        valid = keys >= 0
        keys = keys.clamp(min=0)
        scores = (q[:, :, None, :] * k[:, keys]).sum(-1) - slope * distance
        return self.arithmetic.attend(scores, v[:, keys], valid, prefix_mean)

    def finish_layer(self, h: torch.Tensor, heads: torch.Tensor, layer: int) -> torch.Tensor:
        """The rest of ``layer`` after its heads: R(h + Wo heads), then the feed-forward
        sublayer and its residual. ``heads`` [..., n_heads * d_head] are the averages c."""
        arithmetic, p = self.arithmetic, self.weight
        h = arithmetic.round(h + linear(heads, p(attention(layer, "o"))))
        x = h
        for m in range(self.ffn_depths[layer]):
            x = arithmetic.round(linear(x, p(ffn(layer, m, "weight")),
                                        p(ffn(layer, m, "bias"))))
            if m < self.ffn_depths[layer] - 1:
                x = torch.relu(x)
        return arithmetic.round(h + x)

    def forward(self, ids: torch.Tensor, record: bool = False):
        self.arithmetic = (_Exact(self.spec.precision.total_bits, self.spec.precision.frac_bits)
                           if self.exact else _Float())
        arithmetic, p = self.arithmetic, self.weight
        positions = torch.arange(ids.shape[1], device=ids.device)
        h = p(EMBED)[ids]
        for modulus in self.spec.periodic_moduli:
            h = h + p(periodic(modulus))[positions % modulus]
        h = arithmetic.round(h)
        states = []
        for layer in range(self.spec.n_layers):
            heads = [self._head(h, layer, head) for head in range(self.n_heads)]
            h = self.finish_layer(h, torch.cat(heads, dim=-1), layer)
            if record:
                states.append(h)
        scores = h @ p(OUT_WEIGHT) + p(OUT_BIAS)
        return (scores, states) if record else scores


@dataclass(frozen=True)
class Disagreement:
    """Where the float model's decision first differs from the exact model's."""

    input: int              # index in the batch
    tokens: list[str]
    position: int           # 0-based token position; -1 is BOS (the empty input's answer)
    layer: int | None       # first layer after which the residual streams differ there
    exact: bool
    float: bool

    def describe(self) -> str:
        where = "at BOS" if self.position < 0 else f"at position {self.position}"
        layer = (f"; the residual streams first differ after layer {self.layer}"
                 if self.layer is not None else "")
        return (f"input {self.input + 1} ({' '.join(self.tokens) or 'empty'}) {where}: the float "
                f"model answers {self.float}, the exact model {self.exact}{layer}")


@dataclass
class ModelEvaluation:
    """A model's decisions on a batch.

    ``output`` [B, T_max] is the decision at every token position (False past each length),
    ``accept`` [B] the decision at each input's last position (at BOS for the empty input),
    ``scores`` [B, T_max + 1] the raw out . h + b (column 0 = BOS). ``saturations`` counts the
    roundings that saturated (exact mode; 0 for every compiled model), and in float mode
    ``disagreement`` is the first place its decisions differ from the exact mode's, or None.
    """

    output: np.ndarray
    accept: np.ndarray
    lengths: np.ndarray
    scores: np.ndarray
    mode: str
    saturations: int = 0
    disagreement: Disagreement | None = None


def _encode(model: CompiledModel, inputs: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids [B, T + 1] with BOS in column 0 (the interpreter's encoding). A token outside
    the vocabulary gets the row ``other_id``; a version 1 model has none and rejects it."""
    vocab = tuple(model.config["vocab"])
    other_id = model.config.get("other_id")
    batch = encode(syntax.Program((), vocab), inputs, strict_alphabet=other_id is None)
    is_other = batch.ids == len(vocab)   # the interpreter's id for a token outside the alphabet
    # The interpreter marks BOS (column 0) with -1 and the padding after each input with -2.
    # Padding becomes the first token (BOS if there is none; then every input is empty): never
    # read by the real positions (the mask is causal), and a real token keeps the padded
    # positions within the ranges the compiler planned for, so they cause no saturation.
    ids = np.where(batch.ids == BOS_ID, model.config["bos_id"], batch.ids)
    ids = np.where(ids == PAD_ID, 0 if model.config["vocab"] else model.config["bos_id"], ids)
    if other_id is not None:
        ids = np.where(is_other, other_id, ids)
    return ids, batch.lengths


def _scores(module: FixedPrecisionTransformer, ids: np.ndarray) -> tuple[np.ndarray, int]:
    widest = max([module.spec.d_model, module.spec.d_head]
                 + [w for widths in module.spec.ffn_widths for w in widths])
    rows = max(1, CHUNK_ELEMENTS // (ids.shape[1] * widest))
    pieces, saturations = [], 0
    with torch.no_grad():
        for start in range(0, len(ids), rows):
            pieces.append(module(torch.as_tensor(ids[start:start + rows])).numpy())
            saturations += module.saturations
    width = ids.shape[1]
    return (np.concatenate(pieces) if pieces else np.zeros((0, width))), saturations


def _first_layer_apart(model: CompiledModel, ids: np.ndarray, column: int,
                       uniform_shortcut: bool) -> int | None:
    states = []
    for exact in (True, False):
        module = FixedPrecisionTransformer(model, exact, uniform_shortcut)
        with torch.no_grad():
            states.append(module(torch.as_tensor(ids[None, :]), record=True)[1])
    for layer, (exact, plain) in enumerate(zip(*states), start=1):
        if not torch.allclose(exact[0, column], plain[0, column], rtol=0, atol=1e-9):
            return layer
    return None


def score_ids(model, ids: np.ndarray) -> np.ndarray:
    """The output scores [B, T + 1] of any model (a ``CompiledModel``, run exactly, or a
    checkpoint) on token ids [B, T + 1] with BOS (``bos_id``) in column 0 (``InputError`` for
    a T longer than a learned positional table, ``check_lengths``)."""
    if isinstance(model, CompiledModel):
        return _scores(FixedPrecisionTransformer(model), ids)[0]
    check_lengths(model, [range(ids.shape[1] - 1)])
    return model.scores(ids)


def execute(model: CompiledModel, inputs: Inputs, mode: str = "exact",
            uniform_shortcut: bool = True) -> ModelEvaluation:
    """Run ``model`` on one input string, a list of them, or a list of token lists, read as
    ``crasp run --model`` reads them (a token outside the vocabulary reads as the interpreter
    reads it; a version 1 model raises ``InputError`` naming it and its position). ``mode`` is
    "exact" (fixed precision) or "float" (float64, no rounding; then ``disagreement`` reports the
    first place it decides differently from exact). A checkpoint of the trainer's model class
    (``crasp.train.checkpoint``: a trained run or a float realization) runs in its own dtype,
    whatever ``mode`` says; ``.mode`` names that dtype.

    >>> import crasp
    >>> from crasp.compiler import compile_program
    >>> model = compile_program(crasp.load_program(crasp.example("dyck1")))
    >>> execute(model, ["(())", "())("]).accept.tolist()
    [True, False]
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    inputs = token_batch(inputs, model.config["vocab"])
    check_lengths(model, inputs)
    ids, lengths = _encode(model, inputs)
    if not isinstance(model, CompiledModel):  # a checkpoint (crasp.train.checkpoint)
        return _evaluation(score_ids(model, ids), lengths, model.config["dtype"])
    exact_scores, saturations = _scores(FixedPrecisionTransformer(model, True, uniform_shortcut),
                                        ids)
    scores = exact_scores
    disagreement = None
    if mode == "float":
        scores, _ = _scores(FixedPrecisionTransformer(model, False, uniform_shortcut), ids)
        valid = np.arange(ids.shape[1])[None, :] <= lengths[:, None]
        differs = ((scores > 0) != (exact_scores > 0)) & valid
        if differs.any():
            row = int(np.argmax(differs.any(axis=1)))
            column = int(np.argmax(differs[row]))
            disagreement = Disagreement(
                row, list(inputs[row]), column - 1,
                _first_layer_apart(model, ids[row, :lengths[row] + 1], column, uniform_shortcut),
                bool(exact_scores[row, column] > 0), bool(scores[row, column] > 0))
    return _evaluation(scores, lengths, mode, saturations, disagreement)


def _evaluation(scores: np.ndarray, lengths: np.ndarray, mode: str, saturations: int = 0,
                disagreement: Disagreement | None = None) -> ModelEvaluation:
    decisions = scores > 0
    mask = np.arange(scores.shape[1] - 1)[None, :] < lengths[:, None]
    return ModelEvaluation(output=decisions[:, 1:] & mask,
                           accept=decisions[np.arange(len(lengths)), lengths], lengths=lengths,
                           scores=scores, mode=mode, saturations=saturations,
                           disagreement=disagreement)

