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

**Bits in a layer without gates** (one hidden layer, as in the exact model). The exact model's
``bit_of_test``: u1 = ReLU(-r-hat), u2 = ReLU(-r-hat - 1), u3 = ReLU(r-hat), bit = u1 - u2,
slot cleared by u1 - u3. In floating point with p mantissa bits: if r-hat >= 0, then
-r-hat - 1 <= -1 whatever the rounding, so u1 = u2 = 0 and the bit is 0 exactly. If r-hat <= -1,
x = -r-hat is a float in [1, 2^p): ulp(x) <= 1 divides 1, so x - 1 is a multiple of ulp(x)
below 2^p and representable, the bias addition x + (-1) is exact, and u1 - u2 = x - (x - 1) = 1
exactly. Each pre-activation reads the slot with weight -1 or +1 and nothing else (a negation
is exact) and each output coordinate sums exactly two nonzero terms, u1 - u2 or u1 - u3 (zeros
add nothing), so the bits written to the residual stream are exactly 0 or 1 and the slot
returns to exactly 0. The precondition |r-hat| < 2^p holds wherever the certificate below
does: it bounds |r-hat| by M + 1/2 with M <= 1 / (2 gamma_{N+9}) < 2^(p-1).

**Clean bits in a layer with gates** (one more hidden layer). A gate sums several bits in one
pre-activation, and u1 - u2 is exact only as a difference of its own two terms: summed with
other large u's in an arbitrary order it could round. So these layers make each bit clean
first. Stage 1: u1 = ReLU(-r-hat), u3 = ReLU(r-hat).
Stage 2: w = ReLU(1 - u1), and bit = 1 - w. If r-hat <= -1 then u1 >= 1, 1 - u1 <= 0 (the
sign of a float subtraction is exact), w = 0 and bit = 1 exactly; if r-hat >= 0 then u1 = 0,
w = 1 and bit = 0 exactly. So every bit is exactly 0 or 1, and errors never accumulate from
layer to layer. The slot is cleared with u1 - u3 = -r-hat: one of the two is exactly 0 and the
other exactly |r-hat| (each pre-activation reads the slot with weight +-1 and nothing else),
so the slot returns to exactly 0. The gates (AND, OR, carries of ``emit_weights``) then act on
exact 0/1 values with small integer weights, which floats compute exactly; the value
projections are sums of small integers, also exact. Gates therefore sit one stage later than
in the exact model: a layer with gates has one more hidden layer, and one without has as many
as the exact model's (one). ``hidden_layer_reasons`` states it per layer.

**Float error of the softmax average** (the only inexact step). With q = k = 0 every score is
0, exp(0) = 1 and the weights are 1/n (n = i + 1 <= N + 1 positions) up to a relative error of a
few unit roundoffs u; the weighted sum of n values, each of magnitude at most
M = K V + 1 (V the largest |value| of an exact value row, a program constant), is within
gamma_{n+8} M of the true average, gamma_k = k u / (1 - k u), whatever the summation order
(Higham, Accuracy and Stability of Numerical Algorithms, §3.1; the 8 covers the weight's own
rounding and a log-sum-exp softmax). **Margin**: the construction is certified for length N
in a dtype when gamma_{N+9} (3 (N + 1) V + 1) <= 1/2, half the tolerance of 1.

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
from crasp.compiler.emit_weights import (Affine, FeedForward, Realization, TestValue, constant,
                                         emit, unit)
from crasp.compiler.linearize import linearize
from crasp.compiler.schedule import Schedule, schedule
from crasp.errors import CraspError

UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53}
GATE_DELAY = 1
"""The stage a layer with gates adds to make its bits clean (module docstring)."""
SOFTMAX_SLACK = 8
"""Extra unit roundoffs allowed for the softmax weights (see the module docstring)."""


def gain(max_length: int) -> int:
    return 3 * (max_length + 1)


def certified(max_length: int, dtype: str, largest_value: int) -> bool:
    """Whether the float error of the softmax average stays within half the threshold's
    tolerance at every length <= ``max_length`` (module docstring, "Margin")."""
    k = (max_length + 1 + SOFTMAX_SLACK) * UNIT_ROUNDOFF[dtype]
    return k < 1 and k / (1 - k) * (gain(max_length) * largest_value + 1) <= 0.5


def largest_certifiable(dtype: str, largest_value: int) -> int:
    """The largest N that ``certified`` accepts (it is monotone in N)."""
    low, high = 0, 1
    while certified(high, dtype, largest_value):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if certified(middle, dtype, largest_value) else (low, middle)
    return low


class ThresholdFeedForward(FeedForward):
    """``FeedForward`` for the float realization: in a layer with gates, the clean-bit
    threshold gadget of this module (bit at stage 2, -r cleared by u1 - u3); in a layer without,
    the exact model's one-stage bit, which is exact in floats too (module docstring)."""

    def add_test_bit(self, test: int, low: int, high: int) -> None:
        if not self.layer.gates:
            super().add_test_bit(test, low, high)
            return
        r = unit(self.slots[test])
        u1 = self.add_unit(1, r.scaled(-1), -high, -low, "ReLU(-r)")
        u3 = self.add_unit(1, r, low, high, "ReLU(r)")
        w = self.add_unit(2, constant(1) - u1, 1 - max(0, -low), 1, "ReLU(1 - ReLU(-r))")
        self.native[test] = (2, constant(1) - w)
        self.native[("ReLU(-r)", test)], self.ranges[("ReLU(-r)", test)] = (1, u1), max(0, -low)
        self.native[("ReLU(r)", test)], self.ranges[("ReLU(r)", test)] = (1, u3), max(0, high)
        self.clear[test] = [(1, ("ReLU(-r)", test)), (-1, ("ReLU(r)", test))]


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


def hidden_layer_reasons(plan: Schedule, gate_delay: int = 1) -> list[str]:
    """Per layer, how many hidden layers its feed-forward sublayer has in the float
    realization and why: one where the layer only turns its tests into bits; where gates
    combine them, ``gate_delay`` (one) stage to make the bits clean, one for the bits, and one
    per level of nested AND/OR (``schedule``'s stages)."""
    reasons = []
    for layer in plan.layers:
        tests = f"{len(layer.tests)} test{'s' if len(layer.tests) != 1 else ''}"
        if not layer.gates:
            reasons.append(f"layer {layer.layer}: 1 hidden layer (the bits of its {tests}; "
                           f"no gates, so one ReLU layer gives exact bits)")
            continue
        levels = layer.hidden_layers - 1
        total = layer.hidden_layers + gate_delay
        reasons.append(f"layer {layer.layer}: {total} hidden layers ({1 + gate_delay} to make "
                       f"the bits of its {tests} clean for its {len(layer.gates)} gate"
                       f"{'s' if len(layer.gates) != 1 else ''}, {levels} for AND/OR nested "
                       f"{levels} deep)")
    return reasons


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


def realize_float(program: syntax.Program, max_length: int, dtype: str = "float32",
                  require_certificate: bool = True) -> FloatRealization:
    """The float realization of a checked program for inputs of length <= ``max_length``
    (raises ``CraspError`` when that length cannot be certified in ``dtype``, unless
    ``require_certificate`` is False: then ``certified_length`` is the largest certifiable
    length, below ``max_length``, and the rest is up to measurement)."""
    if dtype not in UNIT_ROUNDOFF:
        raise CraspError(f"--dtype must be one of {', '.join(UNIT_ROUNDOFF)}, got {dtype!r}")
    if max_length < 1:
        raise CraspError(f"--max-length must be at least 1, got {max_length}")
    plan = schedule(linearize(program))
    layout = allocate(plan)
    threshold = Threshold(gain(max_length))
    weights = emit(plan, layout, Realization(threshold, ThresholdFeedForward, GATE_DELAY))
    largest = largest_certifiable(dtype, max(1, threshold.largest_value))
    if max_length > largest and require_certificate:
        raise CraspError(f"cannot certify length {max_length} in {dtype} for this program: the "
                         f"largest certifiable length is {largest} (the softmax average's "
                         f"rounding error must stay below the threshold's margin; try "
                         f"--dtype float64 or a smaller --max-length)")
    return FloatRealization(weights.tensors, list(program.alphabet), weights.d_head,
                            weights.ffn_widths, list(layout.labels), dtype,
                            min(max_length, largest), largest,
                            threshold.gain, threshold.largest_value,
                            hidden_layer_reasons(plan, GATE_DELAY))
