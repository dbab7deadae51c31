"""Head ablation through a forward pre-hook on ``layers[l].attn.o``.

The input of ``attn.o`` is the concatenation of the heads' outputs, head h occupying columns
``h * d_h : (h + 1) * d_h``; ``attn.o`` maps it to the attention's contribution to the stream.
Ablating head h replaces its slice, at every position of every string, by

* ``zero``: the zero vector, so the attention's output loses ``W_O[:, slice] z_h`` and keeps
  the bias of ``o`` and the other heads;
* ``mean``: ``m_h``, the mean of head h's slice over the run's evaluation data (every test
  bin, every real position, BOS included, padding excluded) in the unablated model, so the
  stream keeps head h's average contribution and loses only what varies with the input.

Ablating a layer ablates all its heads (the attention's output becomes ``o``'s bias, or the
mean output). Nothing else is touched: the model's own forward runs, with the hook in place.
Metrics are the trainer's (``crasp.train.metrics.evaluate``): exact match and token accuracy.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import torch

from crasp.train.analysis.loading import LoadedRun, all_tokens_batches
from crasp.train.metrics import Scored, evaluate

MODES = ("mean", "zero")

Head = tuple[int, int]  # (layer, head)


def head_slice(model, head: int) -> slice:
    width = model.layers[0].attn.head_dim
    return slice(head * width, (head + 1) * width)


@torch.inference_mode()
def head_means(loaded: LoadedRun, scored: Scored = None) -> torch.Tensor:
    """(layers, d_model): the mean input of each layer's ``attn.o`` over the evaluation data
    (``scored(k)``, here and below, is told after each batch of ``k`` strings a model read: a
    progress bar's ``update``)."""
    model = loaded.model
    sums = torch.zeros(len(model.layers), model.layers[0].attn.o.in_features, dtype=torch.float64)
    count = 0
    current = {}

    def capture(layer):
        def hook(module, inputs):
            current[layer] = inputs[0]
        return hook

    handles = [layer.attn.o.register_forward_pre_hook(capture(index))
               for index, layer in enumerate(model.layers)]
    try:
        for batch in all_tokens_batches(loaded):
            model(batch.tokens)
            real = batch.mask.clone()
            real[:, 0] = True
            count += int(real.sum())
            for layer, value in current.items():
                sums[layer] += value[real].double().sum(dim=0)
            if scored is not None:
                scored(len(batch.tokens))
    finally:
        for handle in handles:
            handle.remove()
    return (sums / max(1, count)).float()


def replacement(model, means: torch.Tensor | None, mode: str, layer: int, head: int,
                like: torch.Tensor) -> torch.Tensor:
    """What head ``head`` of ``layer`` outputs when ablated, broadcastable to
    ``like[..., slice]``."""
    if mode == "zero":
        return torch.zeros((), dtype=like.dtype)
    return means[layer, head_slice(model, head)].to(like.dtype)


@contextmanager
def ablated(model, heads, mode: str, means: torch.Tensor | None = None):
    """Within the block, the heads ``[(layer, head), ...]`` are ablated (``mode`` in MODES)."""
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        by_layer.setdefault(layer, []).append(head)

    def hook_for(layer, chosen):
        def hook(module, inputs):
            x = inputs[0].clone()
            for head in chosen:
                x[..., head_slice(model, head)] = replacement(model, means, mode, layer, head, x)
            return (x,)
        return hook

    handles = [model.layers[layer].attn.o.register_forward_pre_hook(hook_for(layer, chosen))
               for layer, chosen in by_layer.items()]
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()


def all_heads(model) -> list[Head]:
    return [(layer, head) for layer in range(len(model.layers))
            for head in range(model.layers[0].attn.n_heads)]


def metrics_with(loaded: LoadedRun, heads, mode: str, means, splits=None,
                 scored: Scored = None) -> dict[str, dict]:
    """``{bin: {"exact_match", "token_accuracy"}}`` with ``heads`` ablated."""
    splits = loaded.tests if splits is None else splits
    with ablated(loaded.model, heads, mode, means):
        result = {split.name: evaluate(loaded.model, split, "cpu", loaded.config.eval_batch_tokens,
                                       scored)
                  for split in splits}
    return {name: {"exact_match": m.exact_match, "token_accuracy": m.token_accuracy}
            for name, m in result.items()}


@dataclass
class AblationRow:
    unit: str            # "head" or "layer"
    layer: int
    head: int | None
    mode: str
    bin: str
    exact_match: float
    token_accuracy: float
    exact_match_drop: float
    token_accuracy_drop: float


def ablation_table(loaded: LoadedRun, means, baseline: dict[str, dict],
                   scored: Scored = None) -> list[AblationRow]:
    """Every head alone and every layer whole, in both modes, on every test bin."""
    model = loaded.model
    units = [("head", layer, head, [(layer, head)]) for layer, head in all_heads(model)]
    units += [("layer", layer, None, [(layer, h) for h in range(model.layers[0].attn.n_heads)])
              for layer in range(len(model.layers))]
    rows = []
    for unit, layer, head, heads in units:
        for mode in MODES:
            for name, value in metrics_with(loaded, heads, mode, means, scored=scored).items():
                rows.append(AblationRow(
                    unit, layer, head, mode, name, value["exact_match"], value["token_accuracy"],
                    baseline[name]["exact_match"] - value["exact_match"],
                    baseline[name]["token_accuracy"] - value["token_accuracy"]))
    return rows


def head_scores(rows: list[AblationRow], longest: str) -> dict[Head, float]:
    """A head's score: the drop in token accuracy on the longest bin when it alone is
    mean-ablated (token accuracy rather than exact match, which is too coarse to rank heads)."""
    return {(row.layer, row.head): row.token_accuracy_drop for row in rows
            if row.unit == "head" and row.mode == "mean" and row.bin == longest}


def pruning_curve(loaded: LoadedRun, means, scores: dict[Head, float],
                  scored: Scored = None) -> list[dict]:
    """Mean-ablate heads cumulatively, lowest score first; metrics on the longest bin."""
    order = sorted(scores, key=lambda head: (scores[head], head))
    longest = loaded.longest
    curve = []
    for removed in range(len(order) + 1):
        value = metrics_with(loaded, order[:removed], "mean", means, [longest],
                             scored)[longest.name]
        curve.append({"heads_kept": len(order) - removed,
                      "removed": [list(h) for h in order[:removed]], **value})
    return curve
