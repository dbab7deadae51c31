"""``crasp zoo score``: a model of a zoo, its circuit less some nodes, scored by ablation
(``ablation.score``) on the strings ``crasp zoo check`` uses, as a printable report."""

from __future__ import annotations

import json
from pathlib import Path

from crasp.compiler import load_model
from crasp.errors import CraspError
from crasp.zoo.ablation import score
from crasp.zoo.collection import CHECK_LENGTH, CHECK_PER_LENGTH, zoo_models
from crasp.zoo.strings import check_strings

SCORE_LONG_STRINGS, SCORE_LONG_LENGTH = 4, 64


def score_in_zoo(zoo: str | Path, name: str, drop: set[int], edges: bool) -> str:
    place = Path(zoo) / "models" / name
    if name not in zoo_models(zoo) or not (place / "meta.json").is_file():
        raise CraspError(f"{zoo} has no model {name!r} (see {zoo}/index.md)")
    try:
        meta = json.loads((place / "meta.json").read_text(encoding="utf-8"))
        circuit = meta["circuit"]
        nodes = {int(i) for i in circuit["nodes"]}
    except (ValueError, TypeError, KeyError):
        raise CraspError(f"{place / 'meta.json'} is not a zoo model's summary (a JSON object "
                         f"with its circuit's nodes); rebuild the zoo with crasp zoo build"
                         ) from None
    unknown = sorted(drop - nodes)
    if unknown:
        raise CraspError(f"--drop {unknown[0]}: no such node in {name}'s circuit (nodes "
                         f"{min(nodes)}..{max(nodes)})")
    model = load_model(place)
    strings = check_strings(meta["vocab"], CHECK_LENGTH, CHECK_PER_LENGTH, SCORE_LONG_STRINGS,
                            SCORE_LONG_LENGTH)
    if not edges:
        circuit = {**circuit, "edges": []}
    result = score(model, circuit, nodes - drop, strings)
    lines = [f"{name}: circuit of {result['nodes']} nodes ({result['ablated']} ablated), "
             f"{result['positions']} positions",
             f"faithfulness (decisions kept with everything outside ablated): "
             f"{result['faithfulness']:.4f}"]
    if edges:
        lines.append(f"necessary edges (cutting one changes a decision): "
                     f"{result['necessary_edges']} of {result['edges']}")
        for edge in result["edge_effects"]:
            source, target = (circuit["nodes"][str(edge[k])] for k in ("from", "to"))
            lines.append(f"  {edge['from']:>3} -> {edge['to']:<3} {edge['via']:<12} "
                         f"{edge['changes']:7.2%} changed   {source['text']}  ->  "
                         f"{target.get('test', target['text'])}")
    return "\n".join(lines)
