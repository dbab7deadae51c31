"""Each compiler pass on its own: the feed-forward gadgets (every input in range, truth tables),
``schedule`` (levels and stages), ``allocate`` (no coordinate written twice by one layer, no
stored bit overwritten) and ``emit_weights`` (the attention average stays in the range its
gadget was sized for, slots are cleared, bits are 0/1), on every example and on random programs."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import crasp
from crasp import syntax
from crasp.compiler.allocate import Layout, allocate
from crasp.compiler import circuit as ir
from crasp.compiler.emit_weights import (Affine, Gadget, Readouts, and_gate, bit_of_test, carry,
                                         emit, or_gate, unit, value_row)
from crasp.compiler.linearize import linearize
from crasp.compiler.schedule import Schedule, schedule
from crasp.errors import ProgramError
from strategies import programs, token_strings


def evaluate(gadget: Gadget, inputs: dict[int, int]) -> tuple[list[int], dict[str, int]]:
    """The gadget on integer inputs: its pre-activations and its outputs (a plain reference)."""
    def at(affine: Affine, values: dict[int, int]) -> int:
        return affine.constant + sum(c * values[i] for i, c in affine.coefficients.items())

    pre = [at(u, inputs) for u in gadget.units]
    activations = {i: max(0, value) for i, value in enumerate(pre)}
    return pre, {name: at(output, activations) for name, output in gadget.outputs.items()}


def assert_in_ranges(gadget: Gadget, pre: list[int], outputs: dict[str, int]) -> None:
    for value, (low, high) in zip(pre, gadget.ranges):
        assert low <= value <= high
    for name, value in outputs.items():
        low, high = gadget.output_ranges[name]
        assert low <= value <= high, name


# ----------------------------------------------------------------------------- gadgets

@pytest.mark.parametrize("low, high", [(-5, 0), (-1, 0), (0, 0), (-3, 4), (0, 6), (2, 9)])
def test_bit_of_test_on_every_value_in_range(low, high):
    gadget = bit_of_test(unit(0), low, high)
    assert ("ReLU(r)" in gadget.outputs) == (high > 0)  # the third unit only when r can be > 0
    for r in range(low, high + 1):
        pre, outputs = evaluate(gadget, {0: r})
        assert outputs["bit"] == int(r < 0)
        assert outputs["ReLU(-r)"] - outputs.get("ReLU(r)", 0) == -r  # what clears the slot
        assert_in_ranges(gadget, pre, outputs)


@given(st.integers(-1000, 1000), st.integers(0, 1000), st.data())
def test_bit_of_test_on_an_affine_input(low, width, data):
    high = low + width
    x = data.draw(st.integers(low + 7, high + 7))
    gadget = bit_of_test(Affine({3: 1}, -7), low, high)  # r = x_3 - 7, in [low, high]
    pre, outputs = evaluate(gadget, {3: x})
    assert outputs["bit"] == int(x - 7 < 0)
    assert_in_ranges(gadget, pre, outputs)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("build, truth", [(and_gate, all), (or_gate, any)])
def test_gate_truth_tables(build, truth, n):
    gadget = build(Affine({i: 1 for i in range(n)}), n, "g")
    for bits in itertools.product((0, 1), repeat=n):
        pre, outputs = evaluate(gadget, dict(enumerate(bits)))
        assert outputs["value"] == int(truth(bits)), bits
        assert_in_ranges(gadget, pre, outputs)


@pytest.mark.parametrize("high", [1, 2, 7])
def test_carry_copies_every_value_in_range(high):
    gadget = carry(unit(5), high)
    for x in range(high + 1):
        pre, outputs = evaluate(gadget, {5: x})
        assert outputs["value"] == x
        assert_in_ranges(gadget, pre, outputs)


# ----------------------------------------------------------------------------- passes

def plan_of(text: str) -> Schedule:
    return schedule(linearize(crasp.parse_program(text)))


def position_free(path: Path) -> bool:
    """The forward pass below is the NoPE one (positional programs: test_compiler_positional)."""
    program = crasp.parse_program(path.read_text())
    return not any(syntax.reads_position(node) for definition in program.definitions
                   for node in syntax.walk(definition.expr))


EXAMPLES = [path for path in sorted(Path("examples").glob("*.crasp")) if position_free(path)]


def check_schedule(plan: Schedule) -> None:
    circuit = plan.linearized.circuit
    assert [layer.layer for layer in plan.layers] == list(range(1, plan.depth + 1))
    for layer in plan.layers:
        assert layer.tests or layer.locals, "every layer computes at least one test or local"
        for test in layer.tests:
            assert isinstance(circuit.nodes[test], ir.Test)
            assert circuit.depth[test] == layer.layer
            assert layer.stage[test] == 1
            assert all(circuit.depth[body] < layer.layer for body in circuit.nodes[test].bodies)
        for gate in layer.gates:
            node = circuit.nodes[gate]
            assert isinstance(node, (ir.And, ir.Or)) and circuit.depth[gate] == layer.layer
            latest = max(layer.stage.get(circuit.base(o), 0) for o in node.operands)
            assert layer.stage[gate] == latest + 1
        for ident in layer.exports:
            assert not isinstance(circuit.nodes[ident], ir.Not)
            assert 1 <= layer.stage[ident] <= layer.hidden_layers
    answer = circuit.base(plan.linearized.answer)
    if circuit.depth[answer] >= 1:
        assert answer in plan.layers[circuit.depth[answer] - 1].exports


def check_layout(plan: Schedule, layout: Layout) -> None:
    """No coordinate is written twice within a layer, and no stored bit is overwritten later."""
    assert len(layout.labels) == layout.d_model
    assert len(set(layout.bits.values())) == len(layout.bits)  # one coordinate per export
    fixed = set(layout.tokens.values()) | {layout.bos}
    assert not fixed & set(layout.bits.values()) and not fixed & set(layout.scratch)
    for index, layer in enumerate(plan.layers):
        slots = {layout.scratch[k] for k in range(len(layer.tests))}
        written = [layout.bits[e] for e in layer.exports] + sorted(slots)
        assert len(set(written)) == len(written), f"layer {layer.layer} shares a slot"
        later_slots = {layout.scratch[k] for later in plan.layers[index + 1:]
                       for k in range(len(later.tests))}
        assert not later_slots & {layout.bits[e] for e in layer.exports}


def forward_checking_ranges(plan: Schedule, layout: Layout, tokens: list[str]) -> None:
    """A plain numpy forward pass of the emitted weights (q = k = 0: uniform attention, the
    average floored), asserting at every layer that each rounded average lies in the range its
    bit gadget was built for, that the slots are 0 again afterwards and that the bits are 0/1."""
    circuit = plan.linearized.circuit
    weights = emit(plan, layout).tensors
    read = Readouts(plan, layout)
    ids = [layout.tokens[token] for token in tokens]
    h = weights["embed"][[len(layout.tokens), *ids]]
    positions = np.arange(1, len(ids) + 2)[:, None]
    for index, layer in enumerate(plan.layers):
        prefix = f"layers.{index}"
        v = h @ weights[f"{prefix}.attn.v"].T
        average = np.floor(np.cumsum(v, axis=0) / positions)
        for k, test in enumerate(layer.tests):
            low, high = value_row(circuit.nodes[test], read).average_range
            assert low <= average[:, k].min() and average[:, k].max() <= high
        h = h + average @ weights[f"{prefix}.attn.o"].T
        x = h
        for m in range(layer.hidden_layers + 1):  # the hidden layers, then the output
            x = x @ weights[f"{prefix}.ffn.{m}.weight"].T + weights[f"{prefix}.ffn.{m}.bias"]
            if m < layer.hidden_layers:
                x = np.maximum(x, 0)
        h = h + x
        assert not h[:, list(layout.scratch[:len(layer.tests)])].any(), "a slot was not cleared"
        stored = h[:, sorted(layout.bits.values())]
        assert np.isin(stored, (0, 1)).all()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.stem)
def test_passes_on_every_example(path):
    plan = plan_of(path.read_text())
    layout = allocate(plan)
    check_schedule(plan)
    check_layout(plan, layout)
    alphabet = sorted(layout.tokens)
    rng = np.random.default_rng(len(path.stem))
    for length in (0, 1, 5, 40):
        forward_checking_ranges(plan, layout, list(rng.choice(alphabet, size=length)))


@settings(max_examples=60, deadline=None)
@given(programs(max_depth=3), st.lists(token_strings(max_length=20), min_size=1, max_size=4))
def test_passes_on_random_programs_and_strings(text, strings):
    try:
        plan = plan_of(text)
    except ProgramError:
        assume(False)
    layout = allocate(plan)
    check_schedule(plan)
    check_layout(plan, layout)
    for tokens in strings:
        forward_checking_ranges(plan, layout, tokens)
