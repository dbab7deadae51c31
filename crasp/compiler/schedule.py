"""Pass: Linearized -> Schedule. Circuit nodes to layers, and to hidden layers inside each FFN.

Layer l (1-based) is assigned every node of depth l that the answer needs:

* its attention computes every test of level l, one head dimension each (a test's counted
  bodies have depth <= l - 1, so they are in the residual stream by then), and every local
  count ``Local`` of level l (one ALiBi head per distinct offset, ``local_heads``), which the
  attention writes straight into its own coordinate: locals are always stored, at stage 0 of
  the feed-forward sublayer;
* its feed-forward sublayer turns each test's rounded average into a bit and evaluates every
  And/Or gate of depth l.

Depth-0 nodes (any Boolean function of the current token) are never computed: the weight
emitter reads them as a fixed linear function of the one-hot token coordinates. A negation is
never stored either: ``!x`` reads as ``1 - x``.

**Exports.** A node of depth l >= 1 must be written to the residual stream (be *exported*) when
something outside layer l's feed-forward sublayer reads it: a test of a later layer counts it,
a gate of greater depth uses it, or it is the answer. What is stored is the node under any
negation (``base``). Everything else of depth l lives only in hidden units.

**Stages.** Inside the feed-forward sublayer, hidden layer k can only read hidden layer k - 1
(hidden layer 0 being the residual stream). A test's bit is available at stage 1 (it needs one
ReLU layer, see ``emit_weights.bit_of_test``); a gate's output at one stage after its latest
operand, where anything of smaller depth is available at stage 0. The sublayer has
``hidden_layers`` = max(1, largest stage of an export) hidden layers; values needed later than
their stage are carried forward by the emitter.

Every layer 1..depth gets at least one test or local: a node of depth l >= 1 reads a node of
depth l or is a test or local of level l, and cancelled counts stay in the circuit (see
``circuit``), so the answer's depth-l ancestors include a test or local of level l for every l
up to its depth. So no sublayer is empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp.compiler.circuit import And, Local, Or, Test, operands
from crasp.compiler.linearize import Linearized


@dataclass(frozen=True)
class LayerPlan:
    layer: int
    tests: tuple[int, ...]
    locals: tuple[int, ...]
    gates: tuple[int, ...]
    exports: tuple[int, ...]
    stage: dict[int, int]
    hidden_layers: int


@dataclass(frozen=True)
class Schedule:
    linearized: Linearized
    needed: tuple[int, ...]
    layers: tuple[LayerPlan, ...]
    depth: int


def schedule(linearized: Linearized) -> Schedule:
    circuit = linearized.circuit
    depth = circuit.depth
    needed = circuit.reachable([linearized.answer])
    exported: set[int] = set()

    def export(ident: int) -> None:
        base = circuit.base(ident)
        if depth[base] >= 1:
            exported.add(base)

    for ident in needed:
        node = circuit.nodes[ident]
        if isinstance(node, (Test, Local)):
            for body in operands(node):
                export(body)
        elif isinstance(node, (And, Or)):
            for operand in node.operands:
                if depth[operand] < depth[ident]:
                    export(operand)
    export(linearized.answer)

    program_depth = depth[linearized.answer]
    layers = []
    for layer in range(1, program_depth + 1):
        tests = tuple(i for i in needed
                      if depth[i] == layer and isinstance(circuit.nodes[i], Test))
        gates = tuple(i for i in needed
                      if depth[i] == layer and isinstance(circuit.nodes[i], (And, Or)))
        locals_ = tuple(i for i in needed
                        if depth[i] == layer and isinstance(circuit.nodes[i], Local))
        if not tests and not locals_:
            raise AssertionError(f"layer {layer} has no test (the circuit lost a level)")
        stage = {test: 1 for test in tests}
        for gate in gates:
            stage[gate] = 1 + max(stage.get(circuit.base(o), 0)
                                  for o in operands(circuit.nodes[gate]))
        exports = tuple(sorted(i for i in exported if depth[i] == layer
                               and not isinstance(circuit.nodes[i], Local)))
        hidden = max([1] + [stage[i] for i in exports])
        layers.append(LayerPlan(layer, tests, locals_, gates, exports, stage, hidden))
    return Schedule(linearized, tuple(needed), tuple(layers), program_depth)
