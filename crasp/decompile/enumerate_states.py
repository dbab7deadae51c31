"""Pass: CompiledModel -> StateMachine. The finitely many residual states of a fixed-precision
model, layer by layer, and how each layer's attention and feed-forward map them.

The derivation (Knee-Deep, thm:rtfr_to_TLCl, made exact for the arithmetic of
``docs/model-format.md`` as ``crasp.compiler.executor`` runs it):

* **States.** Every residual vector is a vector of grid values (multiples of 2^-s within p
  bits), so the residual stream after layer l takes finitely many values. Level 0 holds the
  rounded embedding rows of the vocabulary (every vocabulary entry alike), and of the "other
  token" row (``other_id``, format version 2) that every token outside it reads; level l holds the
  candidate outputs of layer l. We keep vectors as integer grid units, so equality is exact.
* **BOS** sees only itself, so its state after every layer is one fixed vector; we take it
  from the executor run on the empty input. It is a separate key: it is visible from every
  position with multiplicity exactly 1, which turns its terms into constants.
* **Attention is a function of counts.** For a query in state q and a key in state t, the score
  q . k_t, the weight W(q, t) = R(exp(score)) and the summand S(q, t) = R(W(q, t) v_t) are
  constants (grid units, computed with the executor's own operations). With n_t the number of
  positions j <= i in state t (BOS included), the two exact sums are N = sum_t n_t S(q, t) and
  D = sum_t n_t W(q, t), and the head's output in grid units is c = clamp(floor(2^s N / D)),
  or clamp(floor(2^s * mean of v_j)) when D = 0. So c >= k is an integer linear inequality in
  the counts (``write_program`` writes it out).
* **Reachable** means "produced by the relaxation": c is a weighted average of the points
  2^s S(q, t) / W(q, t) (or of 2^s v_t when D = 0), rounded down, so it lies in the box
  [floor(min), floor(max)] per coordinate, clamped to the p-bit range. Every value the model
  can really produce is in the box; some box values may never occur, which costs program size,
  never exactness. A coordinate whose column of W_O is zero cannot change the result, so its
  box shrinks to one value. The feed-forward sublayer then maps every (q, c) in the box to a
  state of the next level: a finite table (``finish_layer`` of the executor, so the rounding
  is the executor's). Measured before enumerating: the candidates of a layer are
  sum_q prod(box sizes), and a layer's tables grow with the square of its states; both are
  charged to the ``Budget`` (``budget.py``) before the work, which stops it at ``max_states``.

Precondition for exactness: the linear maps are computed exactly in float64 (integer or
dyadic weights on grid activations: compiled models, the random test models). For arbitrary
real weights the tables hold the same float64 formulas as the executor, which agree with it
except where a different float64 summation order moves a value across a rounding boundary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from crasp.compiler.executor import FixedPrecisionTransformer, _Exact
from crasp.compiler.model_config import EMBED, OUT_BIAS, OUT_WEIGHT, attention, periodic
from crasp.compiler.model_format import CompiledModel
from crasp.decompile.budget import (DEFAULT_MAX_STATES, PAIRS_PER_STATE, Budget,
                                    StateLimitError, count_text)
from crasp.decompile.windows import Window, window_points, window_size, window_tables

__all__ = ["DEFAULT_MAX_STATES", "LayerTables", "StateLimitError", "StateMachine",
           "charge_first_layer", "enumerate_states"]
CHUNK_ROWS = 1 << 15


@dataclass
class LayerTables:
    """Layer l (1-based) as maps on the states of level l - 1.

    Keys are the level's states, then BOS (index ``len(states)``). For head a, query q, key t:
    ``weights[a, q, t]`` = W(q, t) and ``summands[a, q, t, e]`` = S(q, t)_e in grid units, and
    ``values[a, t, e]`` = v_t,e as a float (the D = 0 average). Output coordinate e of the
    concatenated heads has the box ``boxes[q, e] = (low, high)`` in grid units, and
    ``transitions[q]`` (shape: the box sizes) is the next level's state for each c.
    """

    weights: np.ndarray
    summands: np.ndarray
    values: np.ndarray
    boxes: np.ndarray
    transitions: list[np.ndarray] = field(default_factory=list)
    windows: dict[int, Window] = field(default_factory=dict)
    """The heads with a positive ALiBi slope, by head (``windows``; their ``weights`` and
    ``summands`` rows above are 0)."""


@dataclass
class StateMachine:
    """``states[l]`` [n_l, d_model] grid units of level l, ``bos[l]`` BOS's state there,
    ``token_states[v]`` the level-0 state of vocabulary entry v (and, if ``has_other``, last,
    of a token outside the vocabulary), ``layers[l - 1]`` the tables
    of layer l, ``decisions[n_L]`` the decision of each last-level state, ``bos_decision``
    the answer on the empty input; ``candidates[l - 1]`` the enumerated (q, c) of layer l."""

    vocab: tuple[str, ...]
    period: int          # the lcm of the periodic tables' moduli (1 without): token_states
                         # holds one state per (vocabulary row, position mod period)
    d_head: int
    frac_bits: int
    states: list[np.ndarray]
    bos: list[np.ndarray]
    token_states: np.ndarray
    has_other: bool
    layers: list[LayerTables]
    decisions: np.ndarray
    bos_decision: bool
    candidates: list[int]


@dataclass(frozen=True)
class StateSource:
    """What the enumeration reads: a fixed-precision ``module`` with ``project(h, layer,
    head) -> q, k, v``, ``finish_layer(h, heads, layer)``, ``decide(h) -> scores``,
    ``embedded(residue)`` (the rounded embedding rows at a position of that residue modulo the
    period of ``periodic_moduli``), ``slopes[layer][head]``, ``ignored_outputs(layer)`` and
    ``forward(ids, record=True)``, computing with R at (``total_bits``, ``frac_bits``) and
    the format's attention; and the vocabulary, with the ids of BOS and of the row of tokens
    outside it (None: the model reads no such tokens). The executor's
    ``FixedPrecisionTransformer`` (``from_model``) and ``crasp.train.quantize.QuantizedRun``
    (a float run read in fixed precision) are such modules."""

    module: torch.nn.Module
    vocab: tuple[str, ...]
    bos_id: int
    other_id: int | None
    n_layers: int
    n_heads: int
    d_head: int
    total_bits: int
    frac_bits: int
    labels: tuple[str, ...]
    periodic_moduli: tuple[int, ...] = ()

    @classmethod
    def from_model(cls, model: CompiledModel) -> StateSource:
        spec = model.spec
        return cls(_FormatModule(model), spec.vocab, spec.bos_id, spec.other_id,
                   spec.n_layers, spec.n_heads, spec.d_head, spec.precision.total_bits,
                   spec.precision.frac_bits, spec.residual_labels, spec.periodic_moduli)


class _FormatModule(FixedPrecisionTransformer):
    """The executor's module with the rest of the ``StateSource`` interface."""

    def embedded(self, residue: int = 0) -> torch.Tensor:
        """R of every embedding row at a position t with t mod M = ``residue`` for each
        periodic table M (which adds its row t mod M)."""
        x = self.weight(EMBED)
        for modulus in self.spec.periodic_moduli:
            x = x + self.weight(periodic(modulus))[residue % modulus]
        precision = self.spec.precision
        return _Exact(precision.total_bits, precision.frac_bits).round(x)

    def ignored_outputs(self, layer: int) -> torch.Tensor:
        """Per head-output coordinate: whether the output projection ignores it."""
        return (self.weight(attention(layer, "o")) == 0).all(dim=0)

    def decide(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.weight(OUT_WEIGHT) + self.weight(OUT_BIAS)


class _Model:
    """The source's module with the fixed-precision arithmetic, on grid-unit arrays."""

    def __init__(self, source: StateSource):
        self.module = source.module
        self.arithmetic = _Exact(source.total_bits, source.frac_bits)
        self.module.arithmetic = self.arithmetic   # the executor's module rounds with it
        self.scale, self.frac_bits = self.arithmetic.scale, source.frac_bits
        self.n_heads, self.d_head = source.n_heads, source.d_head

    def values(self, units: np.ndarray) -> torch.Tensor:
        return self.arithmetic.value(torch.tensor(np.asarray(units), dtype=torch.int64))

    def units(self, values: torch.Tensor) -> np.ndarray:
        return torch.round(values * self.scale).to(torch.int64).numpy()


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def _tables(model: _Model, layer: int, keys: np.ndarray, budget: Budget) -> LayerTables:
    """W, S and v for every (query, key) pair: the executor's ``attend`` on one pair each
    (by distance for a head with a positive slope: ``windows``, whose (pair, distance)
    entries are charged to ``budget`` as pairs before they are built: a small slope makes
    the window long)."""
    arithmetic = model.arithmetic
    h = model.values(keys)
    queries = h[:-1]
    weights, summands, values, windows = [], [], [], {}
    for head in range(model.n_heads):
        q = model.module.project(queries, layer, head)[0]
        _, k, v = model.module.project(h, layer, head)
        slope = model.module.slopes[layer][head]
        scores = q @ k.T
        w = arithmetic.units(torch.exp(scores)) * (slope == 0)
        weights.append(w.numpy())
        summands.append(arithmetic.units(arithmetic.value(w)[..., None] * v[None]).numpy())
        values.append(v.numpy())
        if slope:
            size = window_size(scores, slope, model.frac_bits)
            entries = scores.numel() * (size + 1)
            budget.charge(-(-entries // PAIRS_PER_STATE), f"layer {layer + 1}: ALiBi windows",
                          f"head {head + 1} of layer {layer + 1} (ALiBi slope {slope:g}) sees "
                          f"{size + 1:,} distances, {entries:,} (query state, key state, "
                          "distance) entries")
            windows[head] = window_tables(arithmetic, scores, v, slope, size)
    return LayerTables(np.stack(weights), np.stack(summands), np.stack(values),
                       boxes=np.zeros((len(queries), model.n_heads * model.d_head, 2), np.int64),
                       windows=windows)


def _boxes(model: _Model, tables: LayerTables, ignored: np.ndarray) -> None:
    """The range of every head output coordinate per query (see the module docstring)."""
    low, high = model.arithmetic.low, model.arithmetic.high
    n_queries = tables.boxes.shape[0]
    bos = tables.weights.shape[2] - 1
    for a in range(model.n_heads):
        for e in range(model.d_head):
            column = a * model.d_head + e
            for q in range(n_queries):
                weight = tables.weights[a, q]
                positive = weight > 0
                points = list(np.floor_divide(tables.summands[a, q, positive, e] * model.scale,
                                              weight[positive]))
                if a in tables.windows:
                    points = window_points(tables.windows[a], tables.values[a], q, e,
                                           model.scale)
                elif weight[bos] == 0:  # D = 0 is possible: the plain average of the v_t
                    zero = ~positive
                    points += list(np.floor(tables.values[a, zero, e] * model.scale)
                                   .astype(np.int64))
                first, last = np.clip([min(points), max(points)], low, high)
                if ignored[column]:
                    last = first  # W_O ignores this coordinate
                tables.boxes[q, column] = (first, last)


def _box_grid(box: np.ndarray) -> np.ndarray:
    """Every c in the box, [count, coordinates], in C order of the box's shape. Only the
    coordinates with more than one value are spread out (a box may have more coordinates
    than numpy has dimensions: several wide heads, most of them fixed by W_O)."""
    free = [i for i, (first, last) in enumerate(box) if last > first]
    grid = np.broadcast_to(box[:, 0], (1, len(box))).astype(np.int64)
    if not free:
        return grid
    axes = [np.arange(box[i, 0], box[i, 1] + 1) for i in free]
    spread = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(free))
    grid = np.repeat(grid, len(spread), axis=0)
    grid[:, free] = spread
    return grid


def _transitions(model: _Model, layer: int, states: np.ndarray, tables: LayerTables
                 ) -> np.ndarray:
    """Fill ``tables.transitions``; returns the next level's states (grid units)."""
    found: dict[bytes, int] = {}
    found_rows: list[np.ndarray] = []
    for q, box in enumerate(tables.boxes):
        grid = _box_grid(box)
        table = np.empty(len(grid), np.int64)
        for start in range(0, len(grid), CHUNK_ROWS):
            c = grid[start:start + CHUNK_ROWS]
            h = model.values(np.broadcast_to(states[q], (len(c), states.shape[1])))
            with torch.no_grad():
                after = model.module.finish_layer(h, model.values(c), layer)
            unique, inverse = _unique_rows(model.units(after))
            ids = np.empty(len(unique), np.int64)
            for index, row in enumerate(unique):
                ids[index] = found.setdefault(row.tobytes(), len(found))
                if ids[index] == len(found_rows):
                    found_rows.append(row)
            table[start:start + len(c)] = ids[inverse]
        tables.transitions.append(table.reshape(tuple(box[:, 1] - box[:, 0] + 1)))
    return np.array(found_rows, np.int64).reshape(-1, states.shape[1])


def _embedded(model: _Model, rows: list[int], residue: int) -> torch.Tensor:
    """The rounded input of the embedding rows ``rows`` at a position t with t mod period =
    ``residue`` (each periodic table adds its row t mod M, ``docs/model-format.md``)."""
    return model.module.embedded(residue)[rows]


def enumerate_states(source: CompiledModel | StateSource, budget: Budget | None = None
                     ) -> StateMachine:
    """The states and tables of every layer, each layer's tables and candidates charged to
    ``budget`` before they are built (``StateLimitError`` when they would exceed it)."""
    budget = budget or Budget()
    if isinstance(source, CompiledModel):
        source = StateSource.from_model(source)
    start = _Start(source)
    states, layers, candidates = [start.first], [], []
    for layer in range(source.n_layers):
        tables, count = _charged_layer(start, layer, states[-1], budget)
        candidates.append(count)
        states.append(_transitions(start.arithmetic, layer, states[-1], tables))
        layers.append(tables)
    with torch.no_grad():
        decisions = (source.module.decide(start.arithmetic.values(states[-1])) > 0).numpy()
    return StateMachine(
        vocab=source.vocab, period=start.period, d_head=source.d_head,
        frac_bits=source.frac_bits, states=states, bos=start.bos,
        token_states=start.token_states, has_other=source.other_id is not None, layers=layers,
        decisions=decisions, bos_decision=start.bos_decision, candidates=candidates)


def charge_first_layer(source: StateSource, budget: Budget) -> None:
    """Charges ``budget`` with layer 1's tables and candidates, as ``enumerate_states`` does
    first (``StateLimitError`` where they exceed it), without enumerating anything: its query
    states are the vocabulary's, so this costs a few table rows per token."""
    start = _Start(source)
    _charged_layer(start, 0, start.first, budget)


class _Start:
    """What every layer starts from: the arithmetic, BOS's state after each layer (from the
    executor on the empty input), and level 0, the rounded embedding rows by residue."""

    def __init__(self, source: StateSource):
        self.source, self.arithmetic = source, _Model(source)
        module, bos_id, other_id = source.module, source.bos_id, source.other_id
        with torch.no_grad():
            bos_score, recorded = module(torch.tensor([[bos_id]]), record=True)
        self.bos_decision = bool(bos_score[0, 0] > 0)
        self.period = math.lcm(*source.periodic_moduli) if source.periodic_moduli else 1
        self.bos = [self.arithmetic.units(_embedded(self.arithmetic, [bos_id], 0))[0]]
        self.bos += [self.arithmetic.units(h[0, 0]) for h in recorded]
        rows = list(range(bos_id)) + ([other_id] if other_id is not None else [])
        inputs = np.concatenate([self.arithmetic.units(_embedded(self.arithmetic, rows, residue))
                                 for residue in range(self.period)])       # [residue][row]
        self.first, inverse = _unique_rows(inputs)
        self.token_states = inverse.reshape(self.period, len(rows)).T     # [row, residue]


def _charged_layer(start: _Start, layer: int, states: np.ndarray, budget: Budget
                   ) -> tuple[LayerTables, int]:
    """Layer ``layer``'s tables over its query ``states`` and its candidate count, each charged
    to ``budget`` before it is built."""
    source = start.source
    pairs = len(states) * (len(states) + 1) * source.n_heads
    budget.charge(-(-pairs // PAIRS_PER_STATE), f"layer {layer + 1}: attention tables",
                  f"the attention tables of layer {layer + 1} would hold {pairs:,} (query "
                  f"state, key state) pairs over its {len(states):,} states")
    keys = np.concatenate([states, start.bos[layer][None]])
    with torch.no_grad():
        tables = _tables(start.arithmetic, layer, keys, budget)
        _boxes(start.arithmetic, tables, source.module.ignored_outputs(layer).numpy())
    sizes = tables.boxes[:, :, 1] - tables.boxes[:, :, 0] + 1
    count = int(sum(int(np.prod(row, dtype=object)) for row in sizes))
    budget.charge(count, f"layer {layer + 1}: candidate states",
                  f"layer {layer + 1} would enumerate {count_text(count)} (query state, "
                  f"head output) pairs from its {len(states):,} query states")
    return tables, count
