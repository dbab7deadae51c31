"""Pass: (Schedule, Layout) -> Weights. The model's numpy weights, one gadget at a time.

Every weight is a small integer and the compiled model runs at s = 0 fractional bits (see
``precision``), so every activation is an integer. The rounding R the model applies (after each
attention average, each residual addition and each feed-forward linear layer) is then the
identity on every value that occurs, as long as p bits hold them all: each gadget records the
range of every value it produces as a ``Bound``, and ``precision`` chooses p from those. The
one rounding that does work is the floor of the attention average (``value_row``).

Notation: h is the residual vector at one position; e_x its coordinate x; ONE = sum of the
token coordinates and the BOS flag, which is 1 at every position (``allocate``). A *readout* of
a circuit node is a linear function of h equal to the node's 0/1 value at every position,
BOS included (``Readouts``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from crasp.compiler.affine import Affine, constant, matrix, unit
from crasp.compiler.allocate import Layout
from crasp.compiler.circuit import And, Constant, Local, Not, Or, Test
from crasp.compiler.local_heads import SLOPE, local_head, local_head_width
from crasp.compiler.readouts import Readouts, embedding, periodic_tables
from crasp.compiler.model_config import (EMBED, OUT_BIAS, OUT_WEIGHT, alibi, attention, ffn,
                                         periodic)
from crasp.compiler.schedule import LayerPlan, Schedule

@dataclass(frozen=True)
class Bound:
    """Every value of the quantity ``what`` lies in [low, high]."""

    what: str
    low: int
    high: int


@dataclass
class Weights:
    """The tensors by model-format name, the hidden widths per layer, the head width, and the
    bound of every value the model computes (for ``precision``)."""

    tensors: dict[str, np.ndarray]
    ffn_widths: list[list[int]]
    d_head: int
    bounds: list[Bound]
    n_heads: int = 1


@dataclass(frozen=True)
class TestValue:
    """A test's row of the value projection and the range of what it yields."""

    row: Affine
    bos_value: int   # the value at BOS, c
    low: int         # bounds on the value at a token position
    high: int

    @property
    def average_range(self) -> tuple[int, int]:
        """Bounds on r = floor(average): [min(c, low), max(c, high - 1)] (see value_row)."""
        return min(self.bos_value, self.low), max(self.bos_value, self.high - 1)


def value_row(test: Test, read: Readouts) -> TestValue:
    """The value projection for the test ``d = sum_k a_k #[phi_k] + c < 0`` (uniform head).

    With q = k = 0 every score is 0 and R(exp(0)) = 1, so position i averages the values of the
    i + 1 positions BOS, 1, ..., i. Take

        v = sum_k a_k readout(phi_k) + (c - sum_k a_k phi_k(BOS)) e_BOS.

    At a token j, e_BOS = 0 and v_j = sum_k a_k phi_k(j). At BOS the readouts give the
    compile-time constants phi_k(BOS) (the program's values on the empty input), which the
    second term cancels: v_BOS = c. So BOS contributes exactly the constant and never a count,
    even when a body such as !"a" is true at BOS, and

        sum_{j <= i} v_j = c + sum_k a_k #[phi_k](i) = d(i),    average = d(i) / (i + 1).

    The average is rounded down (s = 0): r = floor(d(i) / (i + 1)), and since i + 1 > 0,
    r < 0 <=> d(i) < 0 at every length, exactly (ties d = 0 give r = 0: correctly false).

    Ranges: with L <= v_j <= H at tokens, the average is a mean of c and values in [L, H], so
    r >= min(c, L); and if c < H the mean stays below H, so r <= H - 1 (integers), else r <= c.
    L and H are exact over the tokens for depth-0 bodies and treat deeper bodies as free bits.

    If the row is 0 (the counts cancel to d = 0 everywhere: a test that is always false) it is
    replaced by e_BOS (d = 1 everywhere: still always false), so that no head is all zero.
    """
    layout = read.layout
    row = Affine()
    for body, coefficient in test.terms:
        row = row + read(body).scaled(coefficient)
    at_bos = sum(coefficient * read.bos_values[body] for body, coefficient in test.terms)
    row = row + Affine({layout.bos: test.constant - at_bos})
    row = Affine({i: v for i, v in row.coefficients.items() if v})
    bos_value = test.constant
    if not row.coefficients:
        row, bos_value = Affine({layout.bos: 1}), 1
    tokens = {*layout.tokens.values(), layout.other}
    on_token = [row.coefficients.get(i, 0) for i in tokens]
    bits = [v for i, v in row.coefficients.items() if i not in tokens and i != layout.bos]
    return TestValue(row, bos_value, min(on_token) + sum(min(0, v) for v in bits),
                     max(on_token) + sum(max(0, v) for v in bits))


@dataclass(frozen=True)
class Gadget:
    """A few ReLU units and what they compute, on integer inputs.

    ``units[i]`` is unit i's pre-activation, an ``Affine`` over the previous stage's values,
    and ``ranges[i]`` the range of that pre-activation; ``outputs`` are affine functions of the
    units' activations (unit i is variable i), each exact on every input in range, with
    ``output_ranges`` theirs. ``FeedForward.place`` puts a gadget at a stage.
    """

    units: tuple[Affine, ...]
    ranges: tuple[tuple[int, int], ...]
    labels: tuple[str, ...]
    outputs: dict[str, Affine]
    output_ranges: dict[str, tuple[int, int]]


def bit_of_test(r: Affine, low: int, high: int) -> Gadget:
    """The bit [r < 0] of a test's rounded average r in [low, high], and -r to clear its slot.

    u1 = ReLU(-r), u2 = ReLU(-r - 1), u3 = ReLU(r). If r <= -1 then u1 - u2 = -r - (-r - 1)
    = 1, and if r >= 0 both are 0: ``bit`` = u1 - u2 = [r < 0]. For every r, u1 - u3 = -r,
    which the output layer adds to the slot to clear it, so u1 (``ReLU(-r)``) and u3
    (``ReLU(r)``) are outputs too. When high <= 0 (the common case: see ``value_row``'s
    range), u3 = 0 everywhere and is left out: -r = u1.
    """
    units = [r.scaled(-1), r.scaled(-1) - constant(1)]
    ranges = [(-high, -low), (-high - 1, -low - 1)]
    labels = ["ReLU(-r)", "ReLU(-r-1)"]
    outputs = {"bit": unit(0) - unit(1), "ReLU(-r)": unit(0)}
    output_ranges = {"bit": (0, 1), "ReLU(-r)": (0, max(0, -low))}
    if high > 0:
        units.append(r)
        ranges.append((low, high))
        labels.append("ReLU(r)")
        outputs["ReLU(r)"] = unit(2)
        output_ranges["ReLU(r)"] = (0, high)
    return Gadget(tuple(units), tuple(ranges), tuple(labels), outputs, output_ranges)


def and_gate(total: Affine, n: int, name: str) -> Gadget:
    """AND(x_1..x_n) = ReLU(x_1 + ... + x_n - (n - 1)) on 0/1 inputs, ``total`` being their
    sum: the sum is n exactly when all hold, so the pre-activation is 1 then and <= 0
    otherwise (range [1 - n, 1])."""
    return Gadget((total - constant(n - 1),), ((1 - n, 1),), (f"AND of {n} for {name}",),
                  {"value": unit(0)}, {"value": (0, 1)})


def or_gate(total: Affine, n: int, name: str) -> Gadget:
    """OR(x_1..x_n) = 1 - ReLU(1 - x_1 - ... - x_n) on 0/1 inputs, ``total`` being their sum:
    the pre-activation is 1 exactly when none holds, <= 0 otherwise (range [1 - n, 1])."""
    return Gadget((constant(1) - total,), ((1 - n, 1),), (f"OR of {n} for {name}",),
                  {"value": constant(1) - unit(0)}, {"value": (0, 1)})


def carry(value: Affine, high: int) -> Gadget:
    """ReLU(x) = x for x in [0, high]: copies a value to the next stage, because hidden layer
    k reads only hidden layer k - 1."""
    return Gadget((value,), ((0, high),), ("carry",), {"value": unit(0)}, {"value": (0, high)})


class FeedForward:
    """One feed-forward sublayer, built stage by stage (stage k = hidden layer k; stage 0 is
    the residual stream, stage H + 1 the output added to it) from the gadgets above: each
    test's ``bit_of_test`` at stage 1, each gate's ``and_gate`` / ``or_gate`` one stage after
    its latest operand, and a ``carry`` for every value read later than its stage. NOT(x) =
    1 - x is affine and needs no unit; constants are biases.

    The output layer writes each exported node's value into its (zero) coordinate and -r into
    each slot, so after the residual addition the slots are 0 again and the bits are 0/1.
    """

    def __init__(self, layer: LayerPlan, read: Readouts, values: dict[int, TestValue],
                 slots: dict[int, int], bounds: list[Bound]):
        self.layer, self.read, self.slots, self.bounds = layer, read, slots, bounds
        self.circuit = read.circuit
        self.units: list[list[Affine]] = [[] for _ in range(layer.hidden_layers + 1)]
        self.native: dict[object, tuple[int, Affine]] = {}
        self.ranges: dict[object, int] = {}  # upper bound of each carried value (all are >= 0)
        self.carried: dict[tuple[object, int], Affine] = {}
        self.clear: dict[int, list[tuple[int, object]]] = {}  # test -> (sign, part) of -r
        for test in layer.tests:
            self.add_test_bit(test, *values[test].average_range)
        for gate in layer.gates:
            self.native[gate] = (layer.stage[gate], self.add_gate(gate, layer.stage[gate]))

    def add_gate(self, gate: int, stage: int) -> Affine:
        """``and_gate`` / ``or_gate`` over the operands' values one stage earlier (a
        realization may build a gate another way: ``crasp.realize.realization``)."""
        node = self.circuit.nodes[gate]
        assert isinstance(node, (And, Or))
        total = Affine()
        for operand in node.operands:
            total = total + self.at(operand, stage - 1)
        build = and_gate if isinstance(node, And) else or_gate
        return self.place(stage, build(total, len(node.operands), self.gate_name(gate)))["value"]

    def gate_name(self, gate: int) -> str:
        return self.circuit.names.get(gate, self.circuit.text[gate])

    def add_test_bit(self, test: int, low: int, high: int) -> None:
        """``bit_of_test`` for the average r of ``test``, which lies in [low, high]: its bit at
        stage 1 and the parts of -r that clear its slot (a realization may put another gadget
        here: ``crasp.realize.realization``)."""
        gadget = bit_of_test(unit(self.slots[test]), low, high)
        outputs = self.place(1, gadget)
        self.native[test] = (1, outputs["bit"])
        self.clear[test] = []
        for part, sign in (("ReLU(-r)", 1), ("ReLU(r)", -1)):
            if part in outputs:
                self.native[part, test] = (1, outputs[part])
                self.ranges[part, test] = gadget.output_ranges[part][1]
                self.clear[test].append((sign, (part, test)))

    def place(self, stage: int, gadget: Gadget) -> dict[str, Affine]:
        """Add ``gadget``'s units to hidden layer ``stage`` (recording their bounds) and return
        its outputs as affine functions of that layer."""
        offset = len(self.units[stage])
        for pre, (low, high), what in zip(gadget.units, gadget.ranges, gadget.labels):
            self.add_unit(stage, pre, low, high, what)
        return {name: output.shifted(offset) for name, output in gadget.outputs.items()}

    def add_unit(self, stage: int, pre: Affine, low: int, high: int, what: str) -> Affine:
        self.units[stage].append(pre)
        self.bounds.append(Bound(f"layer {self.layer.layer} feed-forward {what}", low, high))
        return unit(len(self.units[stage]) - 1)

    def at(self, ident: int, stage: int) -> Affine:
        """The node's value as an affine function of stage ``stage``."""
        node = self.circuit.nodes[ident]
        if stage == 0:
            return self.read(ident)
        if isinstance(node, Constant):
            return constant(int(node.value))
        if isinstance(node, Not) and self.circuit.depth[ident] > 0:
            return constant(1) - self.at(node.operand, stage)
        return self.value(ident, stage)

    def value(self, key: object, stage: int) -> Affine:
        """A value that units carry (a node under no negation, or a test's ReLU(-r) / ReLU(r)) at
        a stage at or after the one that computes it, carried forward as needed."""
        native_stage, affine = self.native.get(key) or (0, self.read(key))  # type: ignore[arg-type]
        if stage == native_stage:
            return affine
        assert stage > native_stage, (key, stage, native_stage)
        if (key, stage) not in self.carried:
            previous = self.value(key, stage - 1)
            self.carried[key, stage] = self.place(
                stage, carry(previous, self.ranges.get(key, 1)))["value"]
        return self.carried[key, stage]

    def matrices(self, layout: Layout) -> list[tuple[np.ndarray, np.ndarray]]:
        """The (weight, bias) of every linear layer, the output layer last. (The output layer
        never writes an export and a clear to one coordinate: see ``allocate``.)"""
        last = self.layer.hidden_layers
        outputs: dict[int, Affine] = {}
        for ident in self.layer.exports:
            outputs[layout.bits[ident]] = self.value(ident, last)
            self.bounds.append(Bound(f"layer {self.layer.layer} output bit", 0, 1))
        for test in self.layer.tests:
            clear = Affine()
            for sign, part in self.clear[test]:
                clear = clear + self.value(part, last).scaled(sign)
            outputs[self.slots[test]] = clear
            self.bounds.append(Bound(f"layer {self.layer.layer} output -r",
                                     -self.ranges.get(("ReLU(r)", test), 0),
                                     self.ranges[("ReLU(-r)", test)]))
        widths = [layout.d_model] + [len(units) for units in self.units[1:]]
        layers = [matrix(dict(enumerate(self.units[stage])), (widths[stage], widths[stage - 1]))
                  for stage in range(1, last + 1)]
        layers.append(matrix(outputs, (layout.d_model, widths[last])))
        return layers


@dataclass(frozen=True)
class Realization:
    """What a realization other than the exact one changes (``realization`` is one): how a
    test's value row is transformed, which feed-forward class turns the average into bits and
    gates, and how many hidden layers that adds (every stage of ``schedule`` shifts by the
    extra)."""

    test_value: Callable[[TestValue, Layout], TestValue] = lambda value, layout: value
    feed_forward: type[FeedForward] = FeedForward
    extra_stages: int = 0

    def layer_plan(self, layer: LayerPlan) -> LayerPlan:
        if not self.extra_stages:
            return layer
        return replace(layer, stage={node: s + self.extra_stages
                                     for node, s in layer.stage.items()},
                       hidden_layers=layer.hidden_layers + self.extra_stages)


EXACT = Realization()


def emit(plan: Schedule, layout: Layout, realization: Realization = EXACT) -> Weights:
    """All tensors of the model format (``docs/model-format.md``) and the bounds of every value
    they produce. Per layer: a uniform head (q = k = 0, ALiBi slope 0) with one value row per
    test (``value_row``) and o copying head dimension k to scratch slot k; one ALiBi head per
    distinct offset of the layer's local counts (``local_heads``); zero heads where a layer has
    fewer heads than the widest; and the feed-forward sublayer (``FeedForward``). The output
    reads the answer: out . h - 1 = 2 * answer - 1. A positional model also gets its periodic
    tables and the slopes. ``realization`` swaps the test-bit gadget (the exact model's is the
    default)."""
    read = Readouts(plan, layout)
    grouped = [_locals_by_offset(plan, layer) for layer in plan.layers]
    d = layout.d_model
    d_head = max([len(layout.scratch)] + [local_head_width(layout, g) for g in grouped])
    n_heads = max([int(bool(layer.tests)) + len(g) for layer, g in zip(plan.layers, grouped)],
                  default=0)
    tensors = {EMBED: embedding(layout)}
    for modulus, table in periodic_tables(layout).items():
        tensors[periodic(modulus)] = table
    bounds = [Bound("the embedding's bits and the attention weight R(exp(0)) = 1", 0, 1)]
    ffn_widths = []
    for layer, by_offset in zip(plan.layers, grouped):
        index = layer.layer - 1  # tensor names count layers from 0, the schedule from 1
        heads, values = _uniform_head(plan, layer, read, realization, d_head, bounds)
        slopes = [0.0] * bool(layer.tests)
        for offset, nodes in sorted(by_offset.items()):
            heads.append(local_head(offset, nodes, read, d_head))
            slopes.append(SLOPE)
        zero = {part: np.zeros((d_head, d)) for part in "qkv"}
        heads += [{**zero, "o": np.zeros((d, d_head))}] * (n_heads - len(heads))
        for part in "qkv":
            tensors[attention(index, part)] = np.concatenate([h[part] for h in heads])
        tensors[attention(index, "o")] = np.concatenate([h["o"] for h in heads], axis=1)
        if layout.encodings.local_period:
            tensors[alibi(index)] = np.array(slopes + [0.0] * (n_heads - len(slopes)))
        slots = {test: layout.scratch[k] for k, test in enumerate(layer.tests)}
        linears = realization.feed_forward(realization.layer_plan(layer), read, values, slots,
                                           bounds).matrices(layout)
        for m, (weight, bias) in enumerate(linears):
            tensors[ffn(index, m, "weight")], tensors[ffn(index, m, "bias")] = weight, bias
        ffn_widths.append([weight.shape[0] for weight, _ in linears[:-1]])
    out = read(plan.linearized.answer).scaled(2)
    tensors[OUT_WEIGHT] = np.zeros(d)
    for index, value in out.coefficients.items():
        tensors[OUT_WEIGHT][index] += value
    tensors[OUT_BIAS] = np.array(-1.0)
    return Weights(tensors, ffn_widths, d_head, bounds, n_heads)


def _locals_by_offset(plan: Schedule, layer: LayerPlan) -> dict[int, list[int]]:
    grouped: dict[int, list[int]] = {}
    for ident in layer.locals:
        node = plan.linearized.circuit.nodes[ident]
        assert isinstance(node, Local)
        grouped.setdefault(node.offset, []).append(ident)
    return grouped


def _uniform_head(plan: Schedule, layer: LayerPlan, read: Readouts, realization: Realization,
                  d_head: int, bounds: list[Bound]) -> tuple[list[dict], dict[int, TestValue]]:
    """The uniform head of ``layer`` (none if it has no test) and its tests' values."""
    circuit, layout, d = plan.linearized.circuit, read.layout, read.layout.d_model
    values = {test: realization.test_value(value_row(circuit.nodes[test], read), layout)
              for test in layer.tests}
    if not layer.tests:
        return [], values
    v, no_bias = matrix({k: values[test].row for k, test in enumerate(layer.tests)},
                        (d_head, d))
    assert not no_bias.any()  # value rows are linear: constants go through ONE
    o = np.zeros((d, d_head))
    for k, test in enumerate(layer.tests):
        o[layout.scratch[k], k] = 1
        value = values[test]
        test_text = circuit.describe_test(test)
        bounds.append(Bound(f"layer {layer.layer} attention values of [{test_text}]",
                            min(value.low, value.bos_value), max(value.high, value.bos_value)))
        bounds.append(Bound(f"layer {layer.layer} rounded average of [{test_text}]",
                            *value.average_range))
    return [{"q": np.zeros((d_head, d)), "k": np.zeros((d_head, d)), "v": v, "o": o}], values
