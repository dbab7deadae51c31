"""Effective depth: the fewest attention layers that must stay in place for the run to succeed.

Success is the trainer's and the report's rule: exact match >= 99% on the longest test bin
(``crasp.train.report.DEFAULT_THRESHOLD``). The effective depth is the smallest n such that
some set of n attention layers, kept intact while every head of every other layer is ablated
(``mean`` by default, see ``ablation``), still succeeds; all subsets of each size are tried,
smallest size first. Feed-forward layers always stay. A run that does not succeed unablated
has no effective depth (``None``).
"""

from __future__ import annotations

from itertools import combinations

from crasp.train.analysis.ablation import metrics_with
from crasp.train.analysis.loading import LoadedRun
from crasp.train.report import DEFAULT_THRESHOLD


def effective_depth(loaded: LoadedRun, means, mode: str = "mean",
                    threshold: float = DEFAULT_THRESHOLD) -> dict:
    model = loaded.model
    depth = len(model.layers)
    n_heads = model.layers[0].attn.n_heads
    longest = loaded.longest
    tried = []
    found = None
    for size in range(depth + 1):
        for kept in combinations(range(depth), size):
            heads = [(layer, h) for layer in range(depth) if layer not in kept
                     for h in range(n_heads)]
            exact = metrics_with(loaded, heads, mode, means, [longest])[longest.name]["exact_match"]
            tried.append({"kept_layers": list(kept), "exact_match": exact})
            if exact >= threshold:
                found = found or {"effective_depth": size, "kept_layers": list(kept)}
        if found:
            break
    # the last subset tried keeps every layer, so ``found`` is None iff the run itself fails
    return {**(found or {"effective_depth": None, "kept_layers": None}), "mode": mode, "threshold": threshold, "bin": longest.name,
            "nominal_depth": depth,
            "theory_depth": getattr(loaded.language, "prediction_depth", None),
            "subsets": tried}
