"""``crasp zoo hooks PROG``: where each definition of a program lives in its TransformerLens
export, as a markdown table generated from the compiler's circuit and allocation
(``ground_truth``).

The TransformerLens export of a float realization (``crasp.export.blocks``) gives crasp layer
l the consecutive blocks ``first(l) .. last(l)``, one per hidden layer of its feed-forward
sublayer (``ffn_widths`` of the realization, robust gadgets by default): block ``first(l)``
holds the layer's head. The residual coordinates are the compiled model's (the realization
and the export keep the allocation; the export only appends its hidden banks). So:

* a test of layer l is head 0, dimension k of block ``first(l)``: its average r (the counts of
  the test, scaled by the threshold's gain, plus 1) is ``blocks.{first}.attn.hook_z[..., 0, k]``
  and, after the attention's residual addition, coordinate ``slot`` of
  ``blocks.{first}.hook_resid_mid``; the test holds where r < 0 (r <= -2 true, r >= 1
  false, within the certificate);
* a definition written to the residual stream is coordinate c of ``blocks.{last}.hook_out``
  (0/1) from its layer on; a definition that lives only in hidden units is computed by
  ``blocks.{first..last}.mlp.hook_post`` (see ``meta.json`` of the zoo for the exact model's
  units);
* a depth-0 definition is read from the token coordinates of ``hook_embed``.
"""

from __future__ import annotations

from crasp import syntax
from crasp.realize import realize_float
from crasp.zoo.ground_truth import ground_truth


def block_ranges(program: syntax.Program, style: str = "robust") -> list[tuple[int, int]]:
    """(first, last) block of each crasp layer in the TransformerLens export."""
    widths = realize_float(program, 1, "float64", style=style).ffn_widths
    ranges, start = [], 0
    for layer in widths:
        ranges.append((start, start + len(layer) - 1))
        start += len(layer)
    return ranges


def hook_table(program: syntax.Program) -> str:
    """Two markdown tables: every definition -> hook points and residual coordinates; every
    head dimension -> the counts it computes (module docstring)."""
    circuit = ground_truth(program)
    ranges = block_ranges(program)
    nodes = circuit["nodes"]
    lines = ["| definition | type | depth | hook point (TransformerLens) | residual coordinates |",
             "|---|---|---|---|---|"]
    for definition in circuit["definitions"]:
        hooks, coordinates = [], []
        for ident in definition["nodes"]:
            node = nodes[str(ident)]
            if node["kind"] == "token":
                hooks.append("hook_embed")
                coordinates += node["residual"]
                continue
            first, last = ranges[node["layer"] - 1]
            if node["kind"] == "test":
                hooks.append(f"blocks.{first}.attn.hook_z[..., 0, {node['head_dim']}]")
                coordinates.append(node["slot"])
                if definition["type"] == syntax.BOOL:
                    hooks.append(f"blocks.{first}.hook_resid_mid[..., {node['slot']}] < 0")
            if node.get("residual"):
                hooks.append(f"blocks.{last}.hook_out[..., {node['residual'][0]}]")
                coordinates += node["residual"]
            elif definition["type"] == syntax.BOOL:
                hooks.append(f"blocks.{first}-{last}.mlp.hook_post")
        if not definition["used"]:
            hooks, coordinates = ["(not used by the answer: not compiled)"], []
        lines.append(f"| {definition['name']} | {definition['type']} | "
                     f"{definition['depth'] if definition['depth'] is not None else '-'} | "
                     f"{', '.join(dict.fromkeys(hooks))} | "
                     f"{', '.join(map(str, sorted(set(coordinates)))) or '-'} |")
    lines += ["", "| head | hook point | computes (average over the prefix) | "
                  "residual slot | definitions |", "|---|---|---|---|---|"]
    for ident, node in sorted(nodes.items(), key=lambda item: (item[1]["layer"] or 0,
                                                                item[1].get("head_dim", -1))):
        if node["kind"] != "test":
            continue
        first, _ = ranges[node["layer"] - 1]
        users = [d["name"] for d in circuit["definitions"] if int(ident) in d["nodes"]]
        lines.append(f"| layer {node['layer']} head 0 dim {node['head_dim']} | "
                     f"blocks.{first}.attn.hook_z[..., 0, {node['head_dim']}] | "
                     f"`{node['test']}` | {node['slot']} | {', '.join(users)} |")
    return "\n".join(lines) + "\n"
