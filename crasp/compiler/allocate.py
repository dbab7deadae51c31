"""Pass: Schedule -> Layout. The residual stream's coordinates and a label for each.

In order:

1. one coordinate per token of the alphabet: the one-hot token (0 at BOS);
2. the BOS flag (1 at BOS only), and the other-token flag (1 at a token outside the alphabet,
   where every token test is false, as in the interpreter), so that the token coordinates and
   the two flags sum to 1 at every position: that sum is the model's constant 1
   (``Layout.one``);
3. one coordinate per exported node (see ``schedule``) that does not fit in a scratch slot
   (below), by layer then node id: the node's 0/1 value, written by its layer's feed-forward
   sublayer into a coordinate that is 0 before and never changes after;
4. the scratch slots: slot k receives the rounded attention average of the k-th test of the
   running layer, and that layer's feed-forward sublayer sets it back to 0. Layers share the
   slots, so there are max_l #tests(l) of them, which is also the head width ``d_head``.

A slot that neither layer l nor any later layer uses (k >= #tests(m) for every m >= l) is 0
from layer l on, so an export of layer l may live there instead of in a new coordinate (for
example the answer, when the last layer has fewer tests than an earlier one). A slot that
layer l itself uses is not shared: writing ``bit - r`` there would need one more bit of
precision than the construction otherwise does.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp.compiler.schedule import Schedule


@dataclass(frozen=True)
class Layout:
    d_model: int
    tokens: dict[str, int]
    bos: int
    other: int
    bits: dict[int, int]
    scratch: tuple[int, ...]
    labels: tuple[str, ...]

    @property
    def one(self) -> tuple[int, ...]:
        """Coordinates whose sum is 1 at every position (the tokens and the two flags)."""
        return (*self.tokens.values(), self.bos, self.other)


def allocate(plan: Schedule) -> Layout:
    linearized = plan.linearized
    circuit = linearized.circuit
    names: dict[int, list[str]] = {}
    for name, ident in linearized.definitions.items():
        names.setdefault(ident, []).append(name)
    labels = [f'token "{token}"' for token in circuit.alphabet] + ["BOS", "other token"]
    tokens = {token: i for i, token in enumerate(circuit.alphabet)}
    counts = [len(layer.tests) for layer in plan.layers]
    width = max(counts, default=0)
    in_slot: dict[int, int] = {}
    fresh: list[tuple[int, int]] = []  # (layer, node) for exports with coordinates of their own
    taken: set[int] = set()
    for index, layer in enumerate(plan.layers):
        free = [k for k in range(max(counts[index:]), width) if k not in taken]
        for ident in layer.exports:
            if free:
                in_slot[ident] = free.pop(0)
                taken.add(in_slot[ident])
            else:
                fresh.append((layer.layer, ident))

    def describe(ident: int, layer: int) -> str:
        if ident in names:
            return f"{', '.join(names[ident])}: value (layer {layer})"
        return f"{circuit.origin[ident]}: {circuit.text[ident]} (layer {layer})"

    bits: dict[int, int] = {}
    for layer_number, ident in fresh:
        bits[ident] = len(labels)
        labels.append(describe(ident, layer_number))
    scratch = tuple(range(len(labels), len(labels) + width))
    for slot in range(width):
        uses = [f"layer {layer.layer} {circuit.describe_test(layer.tests[slot])} "
                f"({circuit.origin[layer.tests[slot]]})"
                for layer in plan.layers if slot < len(layer.tests)]
        label = f"scratch {slot}: " + "; ".join(uses)
        for layer in plan.layers:
            for ident in layer.exports:
                if in_slot.get(ident) == slot:
                    bits[ident] = scratch[slot]
                    label += f"; then {describe(ident, layer.layer)}"
        labels.append(label)
    return Layout(len(labels), tokens, len(tokens), len(tokens) + 1, bits, scratch, tuple(labels))
