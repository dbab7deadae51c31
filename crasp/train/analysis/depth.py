"""Effective depth: the fewest attention layers that must stay in place for the run to succeed.

Success is the trainer's and the report's rule: exact match >= 99% on the longest test bin
(``crasp.train.report.DEFAULT_THRESHOLD``). The effective depth is the smallest n such that
some set of n attention layers, kept intact while every head of every other layer is ablated
(``mean`` by default, see ``ablation``), still succeeds; all subsets of each size are tried,
smallest size first. Feed-forward layers always stay. A run that does not succeed unablated
has no effective depth (``None``).

The theory's depth beside it is ``crasp.train.theory_bounds.depth_bound`` for the run's
language and architecture: the exact depth where a theorem fixes it, ``None`` where it gives
only a range (``theory_bound`` then states it) or nothing (RoPE, ALiBi, T5, hardmax, ...).
"""

from __future__ import annotations

from itertools import combinations

from crasp.train.analysis.ablation import metrics_with
from crasp.train.analysis.loading import LoadedRun
from crasp.train.config import architecture_label
from crasp.train.metrics import Scored
from crasp.train.theory_bounds import depth_bound
from crasp.train.report import DEFAULT_THRESHOLD


def effective_depth(loaded: LoadedRun, means, mode: str = "mean",
                    threshold: float = DEFAULT_THRESHOLD,
                    scored: Scored = None) -> dict:
    """The effective depth of ``loaded``'s run and every subset tried (module docstring): at
    most 2^depth of them, each on the longest bin; ``scored`` as ``metrics_with``'s."""
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
            exact = metrics_with(loaded, heads, mode, means, [longest],
                                 scored)[longest.name]["exact_match"]
            tried.append({"kept_layers": list(kept), "exact_match": exact})
            if exact >= threshold:
                found = found or {"effective_depth": size, "kept_layers": list(kept)}
        if found:
            break
    config = loaded.config.to_dict()
    bound = depth_bound(config["language"], architecture_label(config))
    # the last subset tried keeps every layer, so ``found`` is None iff the run itself fails
    return {**(found or {"effective_depth": None, "kept_layers": None}), "mode": mode,
            "threshold": threshold, "bin": longest.name, "nominal_depth": depth,
            "theory_depth": bound.lower if bound is not None and bound.exact else None,
            "theory_bound": bound.statement if bound is not None else "no bound is proved",
            "subsets": tried}
