"""``crasp export MODEL --format onnx -o FILE``: any crasp model as an ONNX graph.

The graph's contract (``docs/model-format.md``): one input ``ids``, int64 [batch, positions],
BOS (id len(vocab)) first, then the tokens, with the vocabulary stored in the metadata
(``vocab``, a JSON list); outputs ``decision`` (bool [batch, positions], the decision at every
position: the model's answer on a string is the decision at its last position) and ``score``
[batch, positions] (decision = score > 0).

* A compiled exact model (``CompiledModel``) is written node by node with ``onnx.helper``: its
  fixed-precision arithmetic exactly as ``docs/model-format.md`` states it, in float64 with an
  explicit floor and saturation after every linear layer. A uniform head (q = k = 0, slope 0:
  every compiled counting head) is an int64 cumulative sum of grid units and an int64 floor
  division by the number of positions, so it agrees with the exact executor at any length
  (int64 sums hold 2^63). Positions are computed inside the graph (``Range`` over the length
  of ``ids``, BOS = 0): a version-3 model adds its periodic tables' rows ``i mod M`` to the
  embedding, and any other head (an ALiBi head, scores q_i . k_j - slope (i - j)) is computed
  in full, O(T^2) memory per head, with the same int64 sums and roundings.
* A checkpoint of the trainer's model class (a float realization or a trained run) goes
  through PyTorch's TorchScript exporter, in the checkpoint's dtype.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from crasp.compiler.model_config import (EMBED, OUT_BIAS, OUT_WEIGHT, alibi, attention, ffn,
                                         periodic)
from crasp.compiler.model_format import CompiledModel
from crasp.errors import CraspError
from crasp.util.outputs import write_file

OPSET = 17
PRODUCER = "crasp"


class _Graph:
    """A growing ONNX graph with fresh names."""

    def __init__(self):
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def constant(self, value, dtype=np.float64) -> str:
        name = f"const_{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, kind: str, *inputs: str, **attributes) -> str:
        self.count += 1
        output = f"{kind.lower()}_{self.count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [output], **attributes))
        return output


def _exact_graph(model: CompiledModel) -> onnx.ModelProto:
    spec, t = model.spec, model.tensors
    g = _Graph()
    total, frac = spec.precision.total_bits, spec.precision.frac_bits
    scale, low, high = 2.0 ** frac, -(2 ** (total - 1)), 2 ** (total - 1) - 1

    def grid_units(x: str) -> str:
        """floor(x * 2^s), saturated: R(x) in grid units, as float64."""
        m = g.op("Floor", g.op("Mul", x, g.constant(scale)) if frac else x)
        return g.op("Max", g.op("Min", m, g.constant(high)), g.constant(low))

    def rounded(x: str) -> str:
        m = grid_units(x)
        return g.op("Div", m, g.constant(scale)) if frac else m

    def linear(x: str, weight: str, bias: str | None = None) -> str:
        y = g.op("MatMul", x, g.constant(t[weight].T))
        return g.op("Add", y, g.constant(t[bias])) if bias else y

    # positions 0..T-1 (BOS is 0): computed inside the graph from the shape of ids
    width = g.op("Gather", g.op("Shape", "ids"), g.constant(1, np.int64), axis=0)
    index = g.op("Range", g.constant(0, np.int64), width, g.constant(1, np.int64))
    x = g.op("Gather", g.constant(t[EMBED]), "ids", axis=0)
    for modulus in spec.periodic_moduli:   # version 3: row i mod M of each periodic table
        rows = g.op("Mod", index, g.constant(modulus, np.int64))
        x = g.op("Add", x, g.op("Gather", g.constant(t[periodic(modulus)]), rows, axis=0))
    h = rounded(x)
    # positions 1..T as int64 [1, T, 1], the divisor of every uniform average
    positions = g.op("Reshape", g.op("Add", index, g.constant(1, np.int64)),
                     g.constant([1, -1, 1], np.int64))
    weight_units = int(np.floor(scale))  # R(exp(0)) = 1 in grid units
    denominator = g.op("Mul", positions, g.constant(weight_units, np.int64))
    distance = g.op("Sub", g.op("Unsqueeze", index, g.constant([1], np.int64)),
                    g.op("Unsqueeze", index, g.constant([0], np.int64)))     # [T, T]: i - j
    visible = g.op("GreaterOrEqual", distance, g.constant(0, np.int64))

    def floor_ratio(numerator: str, divisor: str) -> str:
        """floor(numerator / divisor) on int64 (ONNX Div truncates; Mod, fmod=0, takes the
        divisor's sign), saturated to the p-bit range."""
        quotient = g.op("Div", g.op("Sub", numerator, g.op("Mod", numerator, divisor)), divisor)
        return g.op("Max", g.op("Min", quotient, g.constant(high, np.int64)),
                    g.constant(low, np.int64))

    def value_of(units: str) -> str:
        average = g.op("Cast", units, to=TensorProto.DOUBLE)
        return g.op("Div", average, g.constant(scale)) if frac else average

    def uniform_head(v: str) -> str:
        summands = g.op("Cast", grid_units(v), to=TensorProto.INT64)
        numerator = g.op("Mul", g.op("CumSum", summands, g.constant(1, np.int64)),
                         g.constant(int(scale), np.int64))
        return value_of(floor_ratio(numerator, denominator))

    def scored_head(q: str, k: str, v: str, slope: float) -> str:
        """The general head, O(T^2): w_ij = R(exp(q_i . k_j - slope (i - j))) for j <= i,
        N = sum R(w_ij v_j), D = sum w_ij in int64 grid units, R(N / D), or R(mean v) where
        D = 0."""
        scores = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 2, 1]))        # [B, T, T]
        scores = g.op("Sub", scores, g.op("Mul", g.op("Cast", distance, to=TensorProto.DOUBLE),
                                          g.constant(slope)))
        weights = g.op("Where", visible, grid_units(g.op("Exp", scores)), g.constant(0.0))
        summands = grid_units(g.op("Mul", g.op("Unsqueeze", g.op("Div", weights,
                                                                 g.constant(scale)),
                                               g.constant([3], np.int64)),
                                   g.op("Unsqueeze", v, g.constant([1], np.int64))))
        summands = g.op("Where", g.op("Unsqueeze", visible, g.constant([2], np.int64)),
                        summands, g.constant(0.0))
        numerator = g.op("ReduceSum", g.op("Cast", summands, to=TensorProto.INT64),
                         g.constant([2], np.int64), keepdims=0)
        total = g.op("ReduceSum", g.op("Cast", weights, to=TensorProto.INT64),
                     g.constant([2], np.int64), keepdims=1)                        # [B, T, 1]
        empty = g.op("Equal", total, g.constant(0, np.int64))
        ratio = value_of(floor_ratio(
            g.op("Where", empty, g.constant(0, np.int64),
                 g.op("Mul", numerator, g.constant(int(scale), np.int64))),
            g.op("Where", empty, g.constant(1, np.int64), total)))
        mean = rounded(g.op("Div", g.op("CumSum", v, g.constant(1, np.int64)),
                            g.op("Cast", positions, to=TensorProto.DOUBLE)))
        return g.op("Where", empty, mean, ratio)

    for layer, widths in enumerate(spec.ffn_widths):
        heads = []
        for head in range(spec.n_heads):
            rows = slice(head * spec.d_head, (head + 1) * spec.d_head)
            part = {name: t[attention(layer, name)][rows] for name in "qkv"}
            slope = float(t[alibi(layer)][head]) if spec.alibi else 0.0
            v = g.op("MatMul", h, g.constant(part["v"].T))
            if (not part["q"].any() or not part["k"].any()) and not slope:
                heads.append(uniform_head(v))
            else:
                heads.append(scored_head(g.op("MatMul", h, g.constant(part["q"].T)),
                                         g.op("MatMul", h, g.constant(part["k"].T)), v, slope))
        average = heads[0] if len(heads) == 1 else g.op("Concat", *heads, axis=-1)
        h = rounded(g.op("Add", h, linear(average, attention(layer, "o"))))
        x = h
        for m in range(len(widths) + 1):
            x = rounded(linear(x, ffn(layer, m, "weight"), ffn(layer, m, "bias")))
            if m < len(widths):
                x = g.op("Relu", x)
        h = rounded(g.op("Add", h, x))
    score = g.op("Add", g.op("MatMul", h, g.constant(t[OUT_WEIGHT])),
                 g.constant(t[OUT_BIAS]))
    g.nodes.append(helper.make_node("Identity", [score], ["score"]))
    g.nodes.append(helper.make_node("Greater", [score, g.constant(0.0)], ["decision"]))
    graph = helper.make_graph(
        g.nodes, "crasp_exact",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "positions"])],
        [helper.make_tensor_value_info("decision", TensorProto.BOOL, ["batch", "positions"]),
         helper.make_tensor_value_info("score", TensorProto.DOUBLE, ["batch", "positions"])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name=PRODUCER)


def _checkpoint_graph(checkpoint) -> onnx.ModelProto:
    import warnings

    import torch

    class Decisions(torch.nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

        def forward(self, ids):
            score = self.module(ids)
            return score > 0, score

    buffer = io.BytesIO()
    with warnings.catch_warnings():  # "legacy exporter": the new one needs onnxscript
        warnings.simplefilter("ignore")
        torch.onnx.export(Decisions(checkpoint.module), (torch.zeros(1, 4, dtype=torch.long),),
                          buffer, dynamo=False, opset_version=OPSET, input_names=["ids"],
                          output_names=["decision", "score"],
                          dynamic_axes={name: {0: "batch", 1: "positions"}
                                        for name in ("ids", "decision", "score")})
    model = onnx.load_from_string(buffer.getvalue())
    model.producer_name = PRODUCER
    if checkpoint.max_tokens is not None:
        _guard_length(model.graph, checkpoint.max_tokens)
    return model


def _guard_length(graph: onnx.GraphProto, max_tokens: int) -> None:
    """Make every node read ``ids`` through a check that it has at most ``max_tokens + 1``
    columns (BOS and the tokens: a learned positional table has no row beyond). The check looks
    up the last column's position in the table of positions 0..max_tokens and subtracts it
    again (adding 0 to the ids): on a longer input the runtime stops at that lookup, and its
    error names this node, whose name says why. (Without it onnxruntime failed later with a
    broadcasting error naming no cause; a lookup whose result were unused, or always zero,
    its optimizer would remove.)"""
    name = f"input_longer_than_{max_tokens}_tokens_the_learned_position_table_holds"
    nodes = [
        helper.make_node("Shape", ["ids"], ["guard_shape"], start=1, end=2),
        helper.make_node("Squeeze", ["guard_shape"], ["guard_width"]),
        helper.make_node("Sub", ["guard_width", "guard_one"], ["guard_last"]),
        helper.make_node("Gather", ["guard_positions", "guard_last"], ["guard_found"],
                         name=name, axis=0),
        helper.make_node("Sub", ["guard_found", "guard_last"], ["guard_zero"]),
        helper.make_node("Add", ["ids", "guard_zero"], ["ids_checked"])]
    for node in graph.node:
        node.input[:] = ["ids_checked" if value == "ids" else value for value in node.input]
    graph.initializer.extend([
        numpy_helper.from_array(np.arange(max_tokens + 1, dtype=np.int64), "guard_positions"),
        numpy_helper.from_array(np.array(1, np.int64), "guard_one")])
    nodes += list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)


def onnx_model(model) -> onnx.ModelProto:
    """The ONNX graph of a ``CompiledModel`` or a checkpoint, with the vocabulary as metadata."""
    graph = _exact_graph(model) if isinstance(model, CompiledModel) else _checkpoint_graph(model)
    kind = "compiled-exact" if isinstance(model, CompiledModel) else model.config["kind"]
    limit = getattr(model, "max_tokens", None)
    for key, value in (("vocab", json.dumps(list(model.config["vocab"]))),
                       ("bos_id", str(len(model.config["vocab"]))), ("kind", kind),
                       *([("max_tokens", str(limit))] if limit is not None else [])):
        graph.metadata_props.append(onnx.StringStringEntryProto(key=key, value=value))
    onnx.checker.check_model(graph)
    return graph


def _ours(path: Path) -> bool:
    try:
        return onnx.load(str(path), load_external_data=False).producer_name == PRODUCER
    except Exception:  # not ONNX at all
        return False


def write_onnx(model, path: str | Path, force: bool = False) -> None:
    """Write the graph of ``model`` (a type of ``crasp.models``, or the ``CompiledModel`` or
    checkpoint it wraps) to ``path`` atomically. An existing file is refused unless ``force``
    and it is an ONNX file crasp wrote."""
    model = getattr(model, "executable", model)
    target = Path(path)
    _claim(target, force)
    data = onnx_model(model).SerializeToString()
    # the claim again: a person may have made or changed the file while the graph was built
    write_file(target, "ONNX graph", data, _claim(target, force))


def _claim(target: Path, force: bool) -> bool:
    """Whether an ONNX file crasp wrote is at ``target`` to be replaced (only with ``force``);
    refuses anything else there."""
    if os.path.lexists(target) and not (force and target.is_file() and _ours(target)):
        raise CraspError(f"refusing to overwrite {str(target)!r}: it exists" +
                         (" and is not an ONNX file written by crasp" if force else
                          " (use --force to replace an ONNX file crasp wrote)"))
    return os.path.lexists(target)
