"""Pass: Program -> (CompiledModel, ground-truth circuit). Where every definition lives.

The compiler knows, for every circuit node it builds (``crasp.compiler.circuit``), which part
of the model computes it (``schedule``: the layer; ``allocate``: the residual coordinates;
``emit_weights``: the weights). This pass compiles the program as ``compile_program`` does and
records that knowledge as data, for scoring circuit-discovery methods against it:

* a **test** of level l (a comparison of counts) is computed by layer l's head: head dimension
  k (its value row ``layers.{l-1}.attn.v[k]``) averages its counts into residual coordinate
  ``scratch[k]`` (the slot), and layer l's feed-forward units turn that average into a bit;
* an **And/Or** node of depth l is computed by feed-forward units of layer l, at the hidden
  layer ``schedule`` gives it;
* a node read outside its layer (*exported*) is written to its own residual coordinate;
* a node of depth 0 (a token test) is read from the token coordinates of the embedding.

Feed-forward units are attributed by recording, while the emitter builds each layer
(``FeedForward``), which node every unit it adds belongs to: a test's bit gadget, a gate's
gadget, or the carry of a node's value to a later hidden layer. A unit is named
``(layer, hidden layer, index)``: row ``index`` of ``layers.{layer-1}.ffn.{hidden layer-1}``.

A **definition** maps to nodes: a Boolean definition to its node; a count definition to the
tests that count its bodies (the nodes that first appeared in it). **Edges** are the circuit's:
a test reads the bodies it counts (through the attention), a gate its operands (through the
feed-forward sublayer or the residual stream), a negation its operand.
"""

from __future__ import annotations

import hashlib

from crasp import syntax
from crasp.compiler.allocate import allocate
from crasp.compiler.circuit import And, Constant, Not, Or, Test, Token, operands
from crasp.compiler.compiling import compile_program
from crasp.compiler.emit_weights import FeedForward, Realization, emit
from crasp.compiler.linearize import linearize
from crasp.compiler.schedule import schedule

KINDS = {Test: "test", And: "and", Or: "or", Not: "not", Token: "token", Constant: "constant"}


def _recording_feed_forward(owners: dict[tuple[int, int, int], int]) -> type[FeedForward]:
    """A ``FeedForward`` that records the node owning every unit it adds into ``owners``."""

    class Recording(FeedForward):
        def __init__(self, *args, **kwargs):
            self.owner: list[int] = []
            super().__init__(*args, **kwargs)

        def _as(self, node: int, build, *args):
            self.owner.append(node)
            try:
                return build(*args)
            finally:
                self.owner.pop()

        def add_test_bit(self, test, low, high):
            return self._as(test, super().add_test_bit, test, low, high)

        def add_gate(self, gate, stage):
            return self._as(gate, super().add_gate, gate, stage)

        def value(self, key, stage):
            node = key[1] if isinstance(key, tuple) else key
            return self._as(node, super().value, key, stage)

        def add_unit(self, stage, pre, low, high, what):
            owners[(self.layer.layer, stage, len(self.units[stage]))] = self.owner[-1]
            return super().add_unit(stage, pre, low, high, what)

    return Recording


def _counted(program: syntax.Program, name: str, booleans: dict[str, int], circuit) -> set[int]:
    """The circuit nodes a count definition counts: a counted Boolean definition's node, a
    token test's node, or (an expression written inline) the nodes first built in it; counts
    it refers to are followed."""
    by_name = {d.name: d for d in program.definitions}
    found: set[int] = set()
    for node in syntax.walk(by_name[name].expr):
        if isinstance(node, syntax.Count):
            body = node.body
            if isinstance(body, syntax.Ref) and body.name in booleans:
                found.add(circuit.base(booleans[body.name]))
            elif isinstance(body, syntax.TokenTest) and Token(body.token) in circuit.index:
                found.add(circuit.index[Token(body.token)])
            else:
                found |= {i for i in range(len(circuit.nodes)) if circuit.origin[i] == name}
        elif isinstance(node, syntax.Ref) and by_name.get(node.name, None) is not None \
                and by_name[node.name].type == syntax.COUNT:
            found |= _counted(program, node.name, booleans, circuit)
    return found


def ground_truth(program: syntax.Program) -> dict:
    """The circuit of a checked, compilable program (module docstring) as a JSON object:
    ``nodes`` (by id), ``definitions`` (by name, in program order) and ``edges``."""
    plan = schedule(linearize(program))
    layout = allocate(plan)
    owners: dict[tuple[int, int, int], int] = {}
    weights = emit(plan, layout, Realization(feed_forward=_recording_feed_forward(owners)))
    reference = compile_program(program)
    for name, tensor in reference.tensors.items():   # the recording changes nothing
        assert (weights.tensors[name] == tensor).all(), name
    circuit = plan.linearized.circuit
    layer_of = {node: layer.layer for layer in plan.layers for node in (*layer.tests,
                                                                         *layer.gates)}
    head_dim = {test: k for layer in plan.layers for k, test in enumerate(layer.tests)}
    units: dict[int, list[list[int]]] = {}
    for (layer, stage, index), node in sorted(owners.items()):
        units.setdefault(node, []).append([layer, stage, index])
    needed = set(plan.needed)
    nodes = {}
    for ident in sorted(needed):
        node = circuit.nodes[ident]
        entry = {"kind": KINDS[type(node)], "text": circuit.text[ident],
                 "first_in": circuit.origin[ident], "depth": circuit.depth[ident],
                 "layer": layer_of.get(ident, circuit.depth[ident] if circuit.depth[ident]
                                       else None),
                 "reads": list(operands(node))}
        if isinstance(node, Test):
            k = head_dim[ident]
            entry.update(test=circuit.describe_test(ident), head=0, head_dim=k,
                         slot=layout.scratch[k],
                         counts=[{"node": body, "coefficient": coefficient}
                                 for body, coefficient in node.terms])
        if isinstance(node, Token):
            entry["residual"] = [layout.tokens[node.symbol]]
        elif ident in layout.bits:
            entry["residual"] = [layout.bits[ident]]
        entry["units"] = units.get(ident, [])
        nodes[ident] = entry
    edges = [{"from": source, "to": target,
              "via": ("attention" if nodes[target]["kind"] == "test" else "feed-forward"
                      if nodes[source]["layer"] == nodes[target]["layer"] else "residual")}
             for target in sorted(nodes) for source in nodes[target]["reads"]]
    definitions = []
    for definition in program.definitions:
        depth = None
        ident = plan.linearized.definitions.get(definition.name)
        negated = ident is not None and circuit.base(ident) != ident
        if ident is not None and circuit.base(ident) in nodes:
            computed = [circuit.base(ident)]
        elif definition.type == syntax.BOOL:   # merged into a larger gate: its own tests
            computed = sorted(i for i in nodes if circuit.origin[i] == definition.name)
        else:   # a count: the tests that count its bodies
            bodies = _counted(program, definition.name, plan.linearized.definitions, circuit)
            computed = sorted(i for i, entry in nodes.items() if entry["kind"] == "test"
                              and bodies & {c["node"] for c in entry["counts"]})
        if computed:
            depth = max(nodes[i]["depth"] for i in computed)
        definitions.append({
            "name": definition.name, "type": definition.type, "nodes": computed,
            "negated": negated, "used": bool(computed),
            "layers": sorted({nodes[i]["layer"] for i in computed if nodes[i]["layer"]}),
            "depth": depth,
            "heads": sorted({(nodes[i]["layer"], nodes[i]["head_dim"]) for i in computed
                             if nodes[i]["kind"] == "test"}),
            "residual": sorted({c for i in computed for c in nodes[i].get("residual", [])}
                               | {nodes[i]["slot"] for i in computed
                                  if nodes[i]["kind"] == "test"}),
            "units": sorted(u for i in computed for u in nodes[i]["units"]),
        })
    source = program.source or ""
    return {
        "answer": program.answer.name,
        "answer_node": circuit.base(plan.linearized.answer),
        "answer_negated": circuit.base(plan.linearized.answer) != plan.linearized.answer,
        "program_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "definitions": definitions,
        "nodes": {str(ident): entry for ident, entry in nodes.items()},
        "edges": edges,
    }
