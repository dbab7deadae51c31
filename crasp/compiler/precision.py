"""Pass: bounds -> Precision. The smallest fixed-precision format the construction is exact in.

A p-bit number with s fractional bits is m * 2^-s for an integer m with
-2^(p-1) <= m <= 2^(p-1) - 1; R(x) rounds down to that grid and saturates to its ends.

* s = 0 is enough: every weight is an integer, so every activation is an integer, and the only
  rounding that matters, the floor of an attention average d / (i + 1), keeps the sign of d
  exactly at every length (``emit_weights.value_row``). Fewer fractional bits are impossible.
* p is the smallest width whose range holds every value the construction produces, as bounded
  by the gadgets (``emit_weights.Bound``: attention summands and averages, feed-forward
  pre-activations, outputs and the residual stream); then no rounding ever saturates and every
  R is the identity except the floors that compute the tests. The bounds hold at every input
  length (a count grows with the length, but it only ever enters a value through its average,
  which stays within the per-position range). At least p = 2, so that 1 (the attention weight
  R(exp(0)) and every true bit) is representable. At most p = 53 (``MAX_TOTAL_BITS``): a
  program that needs more is refused, naming the quantity and its range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from crasp.compiler.emit_weights import Bound
from crasp.compiler.schedule import Schedule
from crasp.compiler.model_config import MAX_TOTAL_BITS, MIN_TOTAL_BITS
from crasp.errors import CraspError


class PrecisionError(CraspError):
    """A program whose exact model needs more bits than the model format allows."""


@dataclass(frozen=True)
class Precision:
    total_bits: int
    frac_bits: int
    widest: Bound  # the quantity that sets total_bits


def bits_for(low: int, high: int) -> int:
    """The smallest p with -2^(p-1) <= low and high <= 2^(p-1) - 1."""
    below = max(-low, 1) - 1   # need 2^(p-1) >= -low
    return max(MIN_TOTAL_BITS, below.bit_length() + 1, max(high, 0).bit_length() + 1)


def refuse_wide_constants(plan: Schedule, filename: str) -> None:
    """Before any weight is made: a test whose coefficient or constant needs more than
    ``MAX_TOTAL_BITS`` bits alone makes an attention value that wide (its value row holds the
    constant times a bit), so the program is refused, naming the test and the constant."""
    circuit = plan.linearized.circuit
    for layer in plan.layers:
        for test in layer.tests:
            node = circuit.nodes[test]
            widest = max([node.constant, *(c for _, c in node.terms)], key=abs)
            if bits_for(-abs(widest), abs(widest)) > MAX_TOTAL_BITS:
                digits = len(str(abs(widest)))
                shown = f"the constant {widest}" if digits <= 40 else f"a {digits}-digit constant"
                raise PrecisionError(
                    f"{filename}: its exact model needs more than the {MAX_TOTAL_BITS}-bit "
                    f"precision the model format allows: {shown} in the test "
                    f"[{_short(circuit.describe_test(test))}] alone needs "
                    f"{bits_for(-abs(widest), abs(widest))} bits; use smaller constants")


def _short(text: str, width: int = 200) -> str:
    return text if len(text) <= width else text[:width] + "..."


def choose_precision(bounds: Iterable[Bound], filename: str = "the program") -> Precision:
    """The precision, or a ``PrecisionError`` naming the quantity that needs more than
    ``MAX_TOTAL_BITS`` (float64 holds every p-bit grid value exactly only up to p = 53)."""
    widest = max(bounds, key=lambda b: bits_for(b.low, b.high))
    total_bits = bits_for(widest.low, widest.high)
    if total_bits > MAX_TOTAL_BITS:
        raise PrecisionError(
            f"{filename}: its exact model needs {total_bits}-bit precision, more than the "
            f"{MAX_TOTAL_BITS} bits the model format allows: {_short(widest.what)} ranges over "
            f"[{widest.low}, {widest.high}]; use smaller constants")
    return Precision(total_bits, 0, widest)
