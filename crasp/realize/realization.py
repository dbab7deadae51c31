"""Pass: program -> float realization. The compiled model without rounding, exact up to N.

The exact model (``emit_weights``) needs the floor of each attention average: the average
a = d(i) / (i + 1) of a test ``d < 0`` is then an integer whose sign is d's. In plain floating
point the average is a real number, and for d = -1 it is only 1 / (i + 1) below zero. The
float realization replaces each floor by a *threshold gadget* whose gain is derived from the
largest length N it must serve, and certifies that length for a dtype.

**Threshold.** Scale every value row by the gain K = 3 (N + 1) and add 1 at every position
(through ONE, the token coordinates plus the BOS flag; uniform attention adds a constant
exactly). The head then yields r = K a + 1 = 3 (N + 1) d(i) / (i + 1) + 1, and for i <= N:

    d(i) >= 0   =>  r >= 1                 (the test is false)
    d(i) <= -1  =>  r <= 1 - 3 = -2        (the test is true)

so an error of less than 1 in the computed r-hat leaves r-hat >= 0 or r-hat <= -1.

Two styles of gadgets turn the thresholds into bits and gates (``--gadgets``):

**robust** (the default; one more hidden layer per layer than the exact model). Every bit is
made *clean* before anything reads it. Stage 1: u1 = ReLU(-r-hat), u3 = ReLU(r-hat). Stage 2:
w = ReLU(1 - u1), and bit = 1 - w. If r-hat <= -1 then u1 >= 1, 1 - u1 <= 0 (the sign of a float
subtraction is exact), w = 0 and bit = 1 exactly; if r-hat >= 0 then u1 = 0, w = 1 and bit = 0
exactly. The slot is cleared with u1 - u3 = -r-hat: one of the two is exactly 0 and the other
exactly |r-hat| (each pre-activation reads the slot with weight +-1 and nothing else), so the
slot returns to exactly 0. The gates (AND, OR, carries of ``emit_weights``) then act on exact
0/1 values with small integer weights, which floats compute exactly. The clean stage also gives
the bits slack: a small relative change of the feed-forward weights leaves them where they
are, which helps training from these weights (``crasp train --init-from``); it does not make
training safe (the gain K amplifies changes of the value rows), see the measurement below.

**minimal** (the exact model's hidden layers). *Bits*: the exact model's ``bit_of_test``,
u1 = ReLU(-r-hat), u2 = ReLU(-r-hat - 1), u3 = ReLU(r-hat), bit = u1 - u2, the slot cleared by
u1 - u3. In floating point with p mantissa bits: if r-hat >= 0, then -r-hat - 1 <= -1 whatever
the rounding, so u1 = u2 = 0 and the bit is 0 exactly. If r-hat <= -1, x = -r-hat is a float in
[1, 2^p): ulp(x) <= 1 divides 1, so x - 1 is a multiple of ulp(x) below 2^p and representable,
the bias addition x + (-1) is exact, and u1 - u2 = x - (x - 1) = 1 exactly. Wherever the bit is
used on its own (written to the residual stream, or carried to a later stage by ReLU(u1 - u2))
its row holds exactly these two nonzero terms (zeros add nothing), so it is exactly 0 or 1.
The precondition |r-hat| < 2^(p-1) holds wherever the certificate below does. *First-level
gates* read the thresholds directly: a sum of several u1 - u2 could round (2n large terms in
an arbitrary order), so a gate at stage 2 over *literals* (a test t of its layer or its
negation, or an exact 0/1 value x from stage 1) sums, per literal, an indicator that is exactly
0 when the literal holds (fails), else >= 2:

    holds(t) = 2 u1     (t true: r-hat <= -3/2, so 2 u1 >= 3; t false: r-hat >= 1/2, u1 = 0)
    holds(!t) = 4 u3    (!t true: r-hat >= 1/2, so 4 u3 >= 2; else r-hat <= -3/2, u3 = 0)
    holds(x) = x,  fails(l) = holds(!l),  fails(x) = 1 - x

    AND(l_1..l_n) = ReLU(1 - sum fails(l_i)),   OR(l_1..l_n) = 1 - ReLU(1 - sum holds(l_i)).

When every indicator of a test literal is exactly 0, the pre-activation is a sum of small
integers, computed exactly: 1 or an integer <= 0. When one is >= 2, the true pre-activation is
<= 1 - 2 = -1, and the computed one stays below 0 if its rounding error is below 1: n + 1
nonzero terms (one per literal, the bias; the weights 1, 2, 4 multiply exactly) of total
magnitude at most 2 n + 4 n M_r (M_r = K V + 3/2 bounds |r-hat|) are summed within
gamma_{n+1} (2 n + 4 n M_r) of the truth. **Gate margin**: certified when that is <= 1/2 for the
largest fan-in n of a gate at stage 2. Deeper gates read exact 0/1 values with small integer
weights, as in the exact model. The price of the minimal style is slack: u1 - u2 cancels two
values of size up to K V, so a relative weight perturbation e moves a bit by about e K V.
Measured (``python benchmarks/bench_float.py --skip certificates,beyond,throughput,onnx``, the
L5 predictor at N = 100, one epoch at lr 1e-4, five seeds): with 100 training strings robust
keeps 100% validation exact match in 5 of 5 seeds, minimal in 1 of 5 (mean 90%); with 200,
robust in 3 of 5 (mean 87%), minimal in 3 of 5 (mean 81%).

In both styles the value projections of the next layer are sums of small integers over exact
bits, also exact: errors never carry from layer to layer.

**Float error of the softmax average** (the only inexact step). With q = k = 0 every score is
0, exp(0) = 1 and the weights are 1/n (n = i + 1 <= N + 1 positions) up to a relative error of a
few unit roundoffs u; the weighted sum of n values, each of magnitude at most
M = K V + 1 (V the largest |value| of an exact value row, a program constant), is within
gamma_{n+8} M of the true average, gamma_k = k u / (1 - k u), whatever the summation order
(Higham, Accuracy and Stability of Numerical Algorithms, §3.1; the 8 covers the weight's own
rounding and a log-sum-exp softmax). **Margin**: the construction is certified for length N
in a dtype when gamma_{N+9} (3 (N + 1) V + 1) <= 1/2, half the tolerance of 1, and the gate
margin above holds.

Preconditions: the realization runs the attention as softmax(q k^T) v (any summation order),
the tokens and BOS are embedded by the one-hot table, and inputs have length <= N. Beyond N
the gain no longer separates d = -1 from d = 0: the bit of d = -1 at position i is then
3 (N + 1) / (i + 1) - 1 < 1, and a decision that reads it alone turns wrong once
i + 1 >= 2 (N + 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crasp import syntax
from crasp.compiler.allocate import Layout, allocate
from crasp.compiler.circuit import And, Not
from crasp.compiler.emit_weights import (Affine, FeedForward, Realization, TestValue, constant,
                                         emit, unit)
from crasp.compiler.linearize import linearize
from crasp.compiler.schedule import Schedule, schedule
from crasp.errors import CraspError

UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53}
SOFTMAX_SLACK = 8
"""Extra unit roundoffs allowed for the softmax weights (see the module docstring)."""


def gain(max_length: int) -> int:
    return 3 * (max_length + 1)


def _gamma(terms: int, dtype: str) -> float:
    """gamma_k = k u / (1 - k u), infinite where k u >= 1 (Higham's bound is void there)."""
    k = terms * UNIT_ROUNDOFF[dtype]
    return k / (1 - k) if k < 1 else float("inf")


def certified(max_length: int, dtype: str, largest_value: int, fan_in: int = 0) -> bool:
    """Whether at every length <= ``max_length`` the float error of the softmax average stays
    within half the threshold's tolerance ("Margin") and, for first-level gates of up to
    ``fan_in`` literals, the error of their pre-activation within 1/2 ("Gate margin")."""
    softmax = _gamma(max_length + 1 + SOFTMAX_SLACK, dtype) * (
        gain(max_length) * largest_value + 1) <= 0.5
    bound = gain(max_length) * largest_value + 1.5
    gates = fan_in == 0 or _gamma(fan_in + 1, dtype) * (2 * fan_in + 4 * fan_in * bound) <= 0.5
    return softmax and gates


def largest_certifiable(dtype: str, largest_value: int, fan_in: int = 0) -> int:
    """The largest N that ``certified`` accepts (it is monotone in N)."""
    low, high = 0, 1
    while certified(high, dtype, largest_value, fan_in):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = ((middle, high) if certified(middle, dtype, largest_value, fan_in)
                     else (low, middle))
    return low


class CleanBitFeedForward(FeedForward):
    """``FeedForward`` of the robust style: the clean-bit threshold gadget in place of the
    floor-based test bit (bit at stage 2, -r cleared by u1 - u3; module docstring)."""

    def add_test_bit(self, test: int, low: int, high: int) -> None:
        r = unit(self.slots[test])
        u1 = self.add_unit(1, r.scaled(-1), -high, -low, "ReLU(-r)")
        u3 = self.add_unit(1, r, low, high, "ReLU(r)")
        w = self.add_unit(2, constant(1) - u1, 1 - max(0, -low), 1, "ReLU(1 - ReLU(-r))")
        self.native[test] = (2, constant(1) - w)
        self.native[("ReLU(-r)", test)], self.ranges[("ReLU(-r)", test)] = (1, u1), max(0, -low)
        self.native[("ReLU(r)", test)], self.ranges[("ReLU(r)", test)] = (1, u3), max(0, high)
        self.clear[test] = [(1, ("ReLU(-r)", test)), (-1, ("ReLU(r)", test))]


class DirectFeedForward(FeedForward):
    """``FeedForward`` of the minimal style: the exact model's bits, and first-level gates
    over a test of their own layer built from the thresholds' indicators (module docstring)."""

    def add_gate(self, gate: int, stage: int) -> Affine:
        literals = [self.literal(operand) for operand in self.circuit.nodes[gate].operands]
        if stage != 2 or all(test is None for _, test, _ in literals):
            return super().add_gate(gate, stage)
        is_and = isinstance(self.circuit.nodes[gate], And)
        total = Affine()
        for positive, test, operand in literals:
            if test is None:  # an exact 0/1 value: holds(x) = x, fails(x) = 1 - x
                value = self.at(operand, 1)
                total = total + (constant(1) - value if is_and else value)
            elif positive != is_and:  # holds(t) for OR, fails(!t) = holds(t) for AND
                total = total + self.value(("ReLU(-r)", test), 1).scaled(2)
            elif ("ReLU(r)", test) in self.native:  # holds(!t) for OR, fails(t) for AND
                total = total + self.value(("ReLU(r)", test), 1).scaled(4)
            # else r <= its range's high < 0 everywhere: u3 = 0, and so is the indicator
        n = len(literals)
        pre = constant(1) - total
        name = f"{'AND' if is_and else 'OR'} of {n} thresholds for {self.gate_name(gate)}"
        value = self.add_unit(stage, pre, 1 - 4 * n * self.largest_indicator(), 1, name)
        return value if is_and else constant(1) - value

    def literal(self, ident: int) -> tuple[bool, int | None, int]:
        """(positive, the test of this layer it reads or None, the operand itself): NOT of
        depth >= 1 is peeled, as ``FeedForward.at`` reads it."""
        positive, node_id = True, ident
        node = self.circuit.nodes[node_id]
        while isinstance(node, Not) and self.circuit.depth[node_id] > 0:
            positive, node_id = not positive, node.operand
            node = self.circuit.nodes[node_id]
        return positive, (node_id if node_id in self.layer.tests else None), ident

    def largest_indicator(self) -> int:
        return max([1] + [self.ranges.get((part, test), 0) for test in self.layer.tests
                          for part in ("ReLU(-r)", "ReLU(r)")])


@dataclass
class Threshold:
    """The value-row transformation r = K a + 1, remembering the largest exact |value| V."""

    gain: int
    largest_value: int = 0

    def __call__(self, value: TestValue, layout: Layout) -> TestValue:
        self.largest_value = max(self.largest_value, abs(value.low), abs(value.high),
                                 abs(value.bos_value))
        one = Affine({i: 1 for i in layout.one})
        return TestValue(value.row.scaled(self.gain) + one, self.gain * value.bos_value + 1,
                         self.gain * value.low + 1, self.gain * value.high + 1)


# style -> (its feed-forward class, the hidden layers it adds to every layer)
STYLES: dict[str, tuple[type[FeedForward], int]] = {
    "robust": (CleanBitFeedForward, 1), "minimal": (DirectFeedForward, 0)}


def hidden_layer_reasons(plan: Schedule, style: str) -> list[str]:
    """Per layer, how many hidden layers its feed-forward sublayer has in ``style`` and why:
    one for the bits of its tests (two when they are made clean), and one per level of AND/OR
    that combines them (``schedule``'s stages)."""
    clean = STYLES[style][1]
    reasons = []
    for layer in plan.layers:
        tests = f"{len(layer.tests)} test{'s' if len(layer.tests) != 1 else ''}"
        bits = (f"{1 + clean} for the clean bits of its {tests}" if clean
                else f"1 for the bits of its {tests}")
        levels = layer.hidden_layers - 1
        total = layer.hidden_layers + clean
        gates = (f", {levels} for its {len(layer.gates)} gate"
                 f"{'s' if len(layer.gates) != 1 else ''} (AND/OR nested {levels} deep)"
                 if levels else "")
        reasons.append(f"layer {layer.layer}: {total} hidden layer{'s' if total != 1 else ''} "
                       f"({bits}{gates})")
    return reasons


def first_level_fan_in(plan: Schedule) -> int:
    """The most operands of a gate at stage 2 (one that can read a test of its own layer):
    the n of the gate margin (module docstring)."""
    nodes = plan.linearized.circuit.nodes
    return max([0] + [len(nodes[gate].operands) for layer in plan.layers
                      for gate in layer.gates if layer.stage[gate] == 2])


@dataclass
class FloatRealization:
    """The weights (names of ``docs/model-format.md``), the architecture, and the certificate:
    exact at every position of every input of length <= ``certified_length`` in ``dtype``;
    ``largest_certifiable`` is the most this program allows in that dtype."""

    tensors: dict[str, np.ndarray]
    vocab: list[str]
    d_head: int
    ffn_widths: list[list[int]]
    residual_labels: list[str]
    dtype: str
    certified_length: int
    largest_certifiable: int
    gain: int
    largest_value: int
    hidden_layer_reasons: list[str]
    style: str


def realize_float(program: syntax.Program, max_length: int, dtype: str = "float32",
                  require_certificate: bool = True, style: str = "robust") -> FloatRealization:
    """The float realization of a checked program for inputs of length <= ``max_length``
    in the gadget ``style`` (module docstring; raises ``CraspError`` when that length cannot be
    certified in ``dtype``, unless ``require_certificate`` is False: then ``certified_length``
    is the largest certifiable length, below ``max_length``, and the rest is up to
    measurement)."""
    if dtype not in UNIT_ROUNDOFF:
        raise CraspError(f"--dtype must be one of {', '.join(UNIT_ROUNDOFF)}, got {dtype!r}")
    if style not in STYLES:
        raise CraspError(f"--gadgets must be one of {', '.join(STYLES)}, got {style!r}")
    if max_length < 1:
        raise CraspError(f"--max-length must be at least 1, got {max_length}")
    plan = schedule(linearize(program))
    layout = allocate(plan)
    threshold = Threshold(gain(max_length))
    feed_forward, extra_stages = STYLES[style]
    weights = emit(plan, layout, Realization(threshold, feed_forward, extra_stages))
    largest = largest_certifiable(dtype, max(1, threshold.largest_value),
                                  first_level_fan_in(plan) if style == "minimal" else 0)
    if max_length > largest and require_certificate:
        raise CraspError(f"cannot certify length {max_length} in {dtype} for this program: the "
                         f"largest certifiable length is {largest} (the rounding errors of the "
                         f"softmax average and of the gates must stay below the threshold's "
                         f"margin; try "
                         f"--dtype float64 or a smaller --max-length)")
    return FloatRealization(weights.tensors, list(program.alphabet), weights.d_head,
                            weights.ffn_widths, list(layout.labels), dtype,
                            min(max_length, largest), largest,
                            threshold.gain, threshold.largest_value,
                            hidden_layer_reasons(plan, style), style)
