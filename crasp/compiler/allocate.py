"""Pass: Schedule -> Layout. The residual stream's coordinates and a label for each.

In order:

1. one coordinate per token of the alphabet: the one-hot token (0 at BOS);
2. the BOS flag (1 at BOS only), and the other-token flag (1 at a token outside the alphabet,
   where every token test is false, as in the interpreter), so that the token coordinates and
   the two flags sum to 1 at every position: that sum is the model's constant 1
   (``Layout.one``);
2a. (positional models) for each periodic table of M rows (``encodings``), M coordinates: the
   one-hot residue of the 0-based token position i modulo M (BOS, i = -1, has residue M - 1);
2b. (periodic predicates) one coordinate per *mixed* depth-0 pattern: a depth-0 node that
   depends on both the token and the position holds, on the token sigma, at the residues S of
   some set, and the coordinate [token = sigma and i mod M in S] (``readouts.embedding``)
   stores that conjunction; ``patterns`` records every needed depth-0 node's pattern;
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

from dataclasses import dataclass, field

from crasp.compiler.circuit import Circuit
from crasp.compiler.encodings import Encodings
from crasp.compiler.schedule import Schedule

OTHER_TOKEN = ""
"""Stands for any token outside the alphabet: no token literal is empty, so every token test
is false on it."""


@dataclass(frozen=True)
class Pattern:
    """Where a depth-0 node holds: at BOS (``bos``), and on each token of the alphabet and
    ``OTHER_TOKEN``, at the token positions whose residue modulo the period is in the set."""

    bos: bool
    on_token: dict[str, frozenset[int]]


def depth0_patterns(circuit: Circuit, nodes, period: int) -> dict[int, Pattern]:
    """The pattern of each depth-0 node of ``nodes``; the residues are modulo ``period`` (a
    multiple of every modulus of the circuit), or the single residue 0 without one."""
    residues = range(max(period, 1))
    tokens = (*circuit.alphabet, OTHER_TOKEN)
    values = {(token, r): circuit.values_on_token(token, r) for token in tokens for r in residues}
    at_bos = circuit.values_at_bos()
    return {ident: Pattern(bool(at_bos[ident]), {
        token: frozenset(r for r in residues if values[token, r][ident]) for token in tokens})
        for ident in nodes if circuit.depth[ident] == 0}


def mixed_conjunctions(pattern: Pattern, period: int) -> set[tuple[str, frozenset[int]]]:
    """The (token, residues) conjunctions a readout of ``pattern`` needs coordinates for: none
    when the node depends on the token only or on the position only."""
    sets = set(pattern.on_token.values())
    full = frozenset(range(max(period, 1)))
    if sets <= {full, frozenset()} or len(sets) == 1:
        return set()
    return {(token, s) for token, s in pattern.on_token.items() if s not in (full, frozenset())}


@dataclass(frozen=True)
class Layout:
    d_model: int
    tokens: dict[str, int]
    bos: int
    other: int
    bits: dict[int, int]
    scratch: tuple[int, ...]
    labels: tuple[str, ...]
    encodings: Encodings = Encodings("nope")
    residues: dict[int, tuple[int, ...]] = field(default_factory=dict)  # modulus -> coordinates
    mixed: dict[tuple[str, frozenset[int]], int] = field(default_factory=dict)
    patterns: dict[int, Pattern] = field(default_factory=dict)

    def token_coordinate(self, token: str) -> int:
        return self.other if token == OTHER_TOKEN else self.tokens[token]

    @property
    def one(self) -> tuple[int, ...]:
        """Coordinates whose sum is 1 at every position (the tokens and the two flags)."""
        return (*self.tokens.values(), self.bos, self.other)


def allocate(plan: Schedule, encodings: Encodings = Encodings("nope")) -> Layout:
    linearized = plan.linearized
    circuit = linearized.circuit
    names: dict[int, list[str]] = {}
    for name, ident in linearized.definitions.items():
        names.setdefault(ident, []).append(name)
    labels = [f'token "{token}"' for token in circuit.alphabet] + ["BOS", "other token"]
    tokens = {token: i for i, token in enumerate(circuit.alphabet)}
    residues: dict[int, tuple[int, ...]] = {}
    for modulus in encodings.moduli:
        residues[modulus] = tuple(range(len(labels), len(labels) + modulus))
        labels += [f"position = {r} (mod {modulus})" for r in range(modulus)]
    patterns = depth0_patterns(circuit, plan.needed, encodings.period)
    mixed: dict[tuple[str, frozenset[int]], int] = {}
    for ident, pattern in patterns.items():
        for token, where in sorted(mixed_conjunctions(pattern, encodings.period),
                                   key=lambda key: (key[0], sorted(key[1]))):
            if (token, where) not in mixed:
                mixed[token, where] = len(labels)
                shown = f'token "{token}"' if token != OTHER_TOKEN else "other token"
                labels.append(f"{shown} at positions = {sorted(where)} (mod {encodings.period})")
    counts = [len(layer.tests) for layer in plan.layers]
    width = max(counts, default=0)
    in_slot: dict[int, int] = {}
    fresh: list[tuple[int, int]] = []  # (layer, node) for exports with coordinates of their own
    taken: set[int] = set()
    for index, layer in enumerate(plan.layers):
        free = [k for k in range(max(counts[index:]), width) if k not in taken]
        for ident in (*layer.locals, *layer.exports):
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
            for ident in (*layer.locals, *layer.exports):
                if in_slot.get(ident) == slot:
                    bits[ident] = scratch[slot]
                    label += f"; then {describe(ident, layer.layer)}"
        labels.append(label)
    return Layout(len(labels), tokens, len(tokens), len(tokens) + 1, bits, scratch, tuple(labels),
                  encodings, residues, mixed, patterns)
