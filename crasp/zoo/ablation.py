"""Scoring a circuit against the zoo's ground truth by ablation (``crasp zoo score``).

A circuit is a set of nodes of a model's ground-truth circuit (``ground_truth``). Two
measurements on an exact compiled model, at every position of the check strings
(``crasp.zoo.strings``):

* **faithfulness**: zero-ablate every node outside the circuit, and count the positions whose
  decision is unchanged (the ground-truth circuit of the answer keeps all of them);
* **necessity** of each edge: cut the edge alone, and report whether some decision changes.

Zero ablation of a node removes what carries it: a test's value row (``attn.v[k]`` of its
layer: its average becomes 0), its feed-forward units (their rows and biases), and its residual
coordinate (the output rows that write it; for a token, its embedding column). Cutting an edge
source -> target zeroes only the weights by which the target reads the source: for a test, the
source's columns of its value row; for a gate, its units' weights on the source's units or
residual coordinate.
"""

from __future__ import annotations

import copy

import numpy as np

from crasp.compiler import execute
from crasp.compiler.model_config import EMBED, attention, ffn
from crasp.compiler.model_format import CompiledModel


def _coordinates(circuit: dict, ident: int) -> list[int]:
    """The residual coordinates from which a node's value is read."""
    return list(circuit["nodes"][str(ident)].get("residual", []))


def _read_columns(model: CompiledModel, circuit: dict, source: int) -> list[int]:
    """Residual columns through which a node is read: its own coordinate, or for a depth-0
    node without one, the token and flag coordinates of its lookup table."""
    columns = _coordinates(circuit, source)
    if columns:
        return columns
    return list(range(len(model.config["vocab"]) + 2))


def ablate_nodes(model: CompiledModel, circuit: dict, removed: set[int]) -> CompiledModel:
    """A copy of ``model`` with every node of ``removed`` zero-ablated (module docstring)."""
    ablated = CompiledModel(model.config, copy.deepcopy(model.tensors))
    t = ablated.tensors
    last = [len(widths) for widths in model.config["ffn_widths"]]
    for ident in removed:
        node = circuit["nodes"][str(ident)]
        if node["kind"] == "token":
            t[EMBED][:, node["residual"]] = 0
            continue
        if node["kind"] == "test":
            t[attention(node["layer"] - 1, "v")][node["head_dim"]] = 0
        for layer, stage, index in node["units"]:
            t[ffn(layer - 1, stage - 1, "weight")][index] = 0
            t[ffn(layer - 1, stage - 1, "bias")][index] = 0
        if node.get("residual") and node["layer"]:
            layer = node["layer"] - 1
            t[ffn(layer, last[layer], "weight")][node["residual"]] = 0
            t[ffn(layer, last[layer], "bias")][node["residual"]] = 0
    return ablated


def cut_edge(model: CompiledModel, circuit: dict, source: int, target: int) -> CompiledModel:
    """A copy of ``model`` in which ``target`` no longer reads ``source`` (a negation carries
    no weights: reading !x is reading x, so the edge from !x is cut at x)."""
    while circuit["nodes"][str(source)]["kind"] == "not":
        source = circuit["nodes"][str(source)]["reads"][0]
    cut = CompiledModel(model.config, copy.deepcopy(model.tensors))
    t = cut.tensors
    node = circuit["nodes"][str(target)]
    if node["kind"] == "test":
        t[attention(node["layer"] - 1, "v")][node["head_dim"],
                                             _read_columns(model, circuit, source)] = 0
        return cut
    source_units = {(s, i) for layer, s, i in circuit["nodes"][str(source)]["units"]
                    if layer == node["layer"]}
    for layer, stage, index in node["units"]:
        weight = t[ffn(layer - 1, stage - 1, "weight")]
        if stage == 1:
            weight[index, _read_columns(model, circuit, source)] = 0
        else:
            weight[index, [i for s, i in source_units if s == stage - 1]] = 0
    return cut


def decisions(model: CompiledModel, strings: list[list[str]]) -> np.ndarray:
    """The decision at every position, BOS included, as one flat array."""
    evaluation = execute(model, strings)
    return np.concatenate([evaluation.scores[row, :len(s) + 1] > 0
                           for row, s in enumerate(strings)])


def score(model: CompiledModel, circuit: dict, kept: set[int],
          strings: list[list[str]]) -> dict:
    """Faithfulness of the circuit ``kept`` and the necessity of each of its edges."""
    reference = decisions(model, strings)
    outside = {int(i) for i in circuit["nodes"]} - kept
    faithful = decisions(ablate_nodes(model, circuit, outside), strings) == reference
    weighted = ("test", "and", "or")   # a negation or constant has no weights of its own
    edges = [edge for edge in circuit["edges"] if edge["from"] in kept and edge["to"] in kept
             and circuit["nodes"][str(edge["to"])]["kind"] in weighted
             and circuit["nodes"][str(edge["from"])]["kind"] != "constant"]
    necessary = [{**edge, "changes": float(np.mean(
        decisions(cut_edge(model, circuit, edge["from"], edge["to"]), strings) != reference))}
        for edge in edges]
    return {"nodes": len(kept), "ablated": len(outside),
            "faithfulness": float(faithful.mean()), "positions": int(faithful.size),
            "edges": len(edges),
            "necessary_edges": sum(edge["changes"] > 0 for edge in necessary),
            "edge_effects": necessary}
