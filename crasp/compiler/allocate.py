"""Pass: Schedule -> Layout. The residual stream's coordinates and a label for each.

In order:

1. one coordinate per token of the alphabet: the one-hot token (0 at BOS);
2. the BOS flag (1 at BOS only), so that the token coordinates and the flag sum to 1 at every
   position: that sum is the model's constant 1 (``Layout.one``);
3. one coordinate per exported node (see ``schedule``), by layer then node id: the node's
   0/1 value, written by its layer's feed-forward sublayer into a coordinate that is 0 before;
4. the scratch coordinates: slot k receives the rounded attention average of the k-th test of
   the running layer, and that layer's feed-forward sublayer sets it back to 0. Layers share
   the slots, so there are max_l #tests(l) of them, which is also the head width ``d_head``.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp.compiler.schedule import Schedule


@dataclass(frozen=True)
class Layout:
    d_model: int
    tokens: dict[str, int]
    bos: int
    bits: dict[int, int]
    scratch: tuple[int, ...]
    labels: tuple[str, ...]

    @property
    def one(self) -> tuple[int, ...]:
        """Coordinates whose sum is 1 at every position (the tokens and the BOS flag)."""
        return (*self.tokens.values(), self.bos)


def allocate(plan: Schedule) -> Layout:
    linearized = plan.linearized
    circuit = linearized.circuit
    names: dict[int, list[str]] = {}
    for name, ident in linearized.definitions.items():
        names.setdefault(ident, []).append(name)
    labels = [f'token "{token}"' for token in circuit.alphabet] + ["BOS"]
    tokens = {token: i for i, token in enumerate(circuit.alphabet)}
    bits: dict[int, int] = {}
    for layer in plan.layers:
        for ident in layer.exports:
            bits[ident] = len(labels)
            if ident in names:
                labels.append(f"{', '.join(names[ident])}: value (layer {layer.layer})")
            else:
                labels.append(f"{circuit.origin[ident]}: {circuit.text[ident]} "
                              f"(layer {layer.layer})")
    width = max((len(layer.tests) for layer in plan.layers), default=0)
    scratch = tuple(range(len(labels), len(labels) + width))
    for slot in range(width):
        uses = [f"layer {layer.layer} {circuit.describe_test(layer.tests[slot])} "
                f"({circuit.origin[layer.tests[slot]]})"
                for layer in plan.layers if slot < len(layer.tests)]
        labels.append(f"scratch {slot}: " + "; ".join(uses))
    return Layout(len(labels), tokens, len(tokens), bits, scratch, tuple(labels))
