"""Path ablation: head a of layer l -> head b of layer l + 1.

Head b's queries, keys and values are computed from a stream in which head a's contribution is
ablated (``mean`` or ``zero``, as in ``ablation``); every other head, the feed-forward layers,
the residual additions and the output read the unablated stream. Done with hooks, in two passes
over the same batch, so the model's own forward is never copied:

1. the ablated input ``x'`` of layer l + 1's attention:

   * pre-LN, where the stream is a sum: layer l + 1's attention reads ``LN1(x)`` with
     ``x = ... + o(z) + ...`` and head a writes ``W_O[:, a] z_a``; so
     ``x' = LN1(x - W_O[:, a] (z_a - r_a))`` with ``r_a`` the replacement (the mean or 0).
     This removes exactly head a's direct write; layer l's feed-forward still sees head a.
   * post-LN, where ``LN(x + Attn(x))`` mixes all writes and no direct write can be isolated:
     ``x'`` is the output of layer l recomputed with head a ablated (its feed-forward and
     norms see the ablation), i.e. the stream layer l + 1 would read had head a been ablated.

2. the unablated forward, in which forward hooks on layer l + 1's ``attn.q``, ``attn.k`` and
   ``attn.v`` replace head b's columns of their outputs by those of ``q(x')``, ``k(x')``,
   ``v(x')`` (the projections are per-head column blocks, so this is exactly "head b reads
   ``x'``"). Given ``x'`` equal to the unablated input, the logits are the model's own.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

from crasp.train.analysis.ablation import ablated, head_slice, replacement


@contextmanager
def capturing(module: nn.Module, store: dict, key: str):
    """Store the first positional input of ``module`` at each call in ``store[key]``."""
    def hook(mod, inputs):
        store[key] = inputs[0]
    handle = module.register_forward_pre_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def ablated_stream(model, tokens: torch.Tensor, layer: int, head: int, mode: str,
                   means) -> torch.Tensor:
    """The input ``x'`` of ``layers[layer + 1].attn`` with head ``head`` of ``layer`` ablated."""
    store: dict = {}
    target = model.layers[layer + 1]
    if target.pre:
        with capturing(model.layers[layer].attn.o, store, "z"), \
                capturing(target, store, "x"):
            model(tokens)
        z = store["z"][..., head_slice(model, head)]
        write = (z - replacement(model, means, mode, layer, head, z)) @ \
            model.layers[layer].attn.o.weight[:, head_slice(model, head)].T
        return target.norm1(store["x"] - write)
    with ablated(model, [(layer, head)], mode, means), capturing(target, store, "x"):
        model(tokens)
    return store["x"]


@contextmanager
def head_reads(model, layer: int, head: int, stream: torch.Tensor):
    """Within the block, head ``head`` of ``layer`` computes q, k, v from ``stream``."""
    attn = model.layers[layer].attn

    def hook_for(width: int):
        columns = slice(head * width, (head + 1) * width)

        def hook(module, inputs, output):
            output = output.clone()
            # the functional form: calling ``module`` here would re-enter this hook
            output[..., columns] = nn.functional.linear(stream, module.weight[columns],
                                                        module.bias[columns])
            return output
        return hook

    # q and k have attn.qk_dim columns per head (qk_rank); dp-free attention has neither
    widths = [(attn.q, attn.qk_dim), (attn.k, attn.qk_dim), (attn.v, attn.head_dim)]
    handles = [projection.register_forward_hook(hook_for(width))
               for projection, width in widths if projection is not None]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


class PathAblated(nn.Module):
    """``model`` with the path (layer, a) -> (layer + 1, b) ablated; same call signature."""

    def __init__(self, model, layer: int, source: int, target: int, mode: str, means):
        super().__init__()
        self.model, self.layer, self.source, self.target = model, layer, source, target
        self.mode, self.means = mode, means

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        stream = ablated_stream(self.model, tokens, self.layer, self.source, self.mode, self.means)
        with head_reads(self.model, self.layer + 1, self.target, stream):
            return self.model(tokens)
