"""A float run read in fixed precision: ``QuantizedRun(module, p, s)``.

``crasp extract`` turns an ordinary trained run (``CausalTransformer``, float32, any
normalization) into a program by reading its weights in the model format's number system:
the same weights, every sublayer output rounded by R (p total bits, s fractional, rounding
down and saturating, ``crasp.train.fixed_precision.Grid``) and attention computed as the
format computes it (weights R(exp(score)), summands R(weight * v), exact sums, R(N / D)). For
a block of layer l (pre-LN, as the trainer's default; post-LN and no normalization likewise)::

    h^0 = R(embed[token])
    q, k, v = the head projections of LN1(h) (biases and the 1/sqrt(d_qk) scale included)
    h = R(h + o(c))               c: the heads' fixed-precision averages
    h = R(h + R(down(... R(act(R(up(LN2(h))))))))       every linear layer's output rounded
    score = head(final_norm(h))                          not rounded: its sign decides

Post-LN rounds after each normalization: h = R(LN1(h + o(c))), h = R(LN2(h + ffn(h))).
Everything a layer computes at a position is a function of that position's state and the
counts of states before it, so the decompiler's state enumeration applies unchanged
(``project``, ``finish_layer``, ``decide`` and ``embedded`` are its interface, shared with
the executor's ``FixedPrecisionTransformer``). The rounding changes the function: how much is
measured (``crasp extract`` reports the fidelity to the float model), not assumed.

Preconditions: NoPE (a positional encoding would make the layer's maps depend on the
position, not on the state alone) and softmax or DP-free attention (hardmax is not exp).
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from crasp.errors import CraspError
from crasp.train.exact_attention import fixed_attention
from crasp.train.fixed_precision import Grid
from crasp.train.model import CausalTransformer


def check_readable(module: CausalTransformer, what: str) -> None:
    """Refuse a run whose layers are not functions of the state alone."""
    if module.posenc != "nope":
        raise CraspError(f"{what} uses the positional encoding {module.posenc}: only NoPE runs "
                         f"can be read in fixed precision (a position-dependent layer has no "
                         f"finite state table)")
    if module.layers and module.layers[0].attn.attention == "hardmax":
        raise CraspError(f"{what} uses hardmax attention, which the format's exp-weighted "
                         f"attention does not compute")


class QuantizedRun(nn.Module):
    """``forward(ids (B, T)) -> scores (B, T)`` (float64) of ``module`` read at precision
    (``total_bits``, ``frac_bits``); ``record=True`` also returns the state after each layer."""

    def __init__(self, module: CausalTransformer, total_bits: int, frac_bits: int):
        super().__init__()
        check_readable(module, "the run")
        self.module = copy.deepcopy(module).to(torch.float64).eval()
        self.grid = Grid(total_bits, frac_bits)
        self.total_bits, self.frac_bits = total_bits, frac_bits
        self.n_layers = len(self.module.layers)
        attention = self.module.layers[0].attn if self.module.layers else None
        self.n_heads = attention.n_heads if attention else 0
        self.d_head = attention.head_dim if attention else 0
        self.slopes = [[0.0] * self.n_heads for _ in range(self.n_layers)]   # NoPE

    def embedded(self, residue: int = 0) -> torch.Tensor:
        """The rounded embedding rows (tokens, BOS, padding), the same at every position."""
        return self.grid.round(self.module.embed.weight)

    def project(self, h: torch.Tensor, layer: int, head: int):
        """q (scaled by 1/sqrt(d_qk)), k, v of ``head`` in ``layer`` for states h [..., d];
        DP-free attention scores every pair 0 (q = k = 0)."""
        block = self.module.layers[layer]
        attn = block.attn
        a = block.norm1(h) if block.pre else h
        v = attn.v(a)[..., head * attn.head_dim:(head + 1) * attn.head_dim]
        if attn.q is None:
            zero = v.new_zeros(*v.shape[:-1], 1)
            return zero, zero, v
        rows = slice(head * attn.qk_dim, (head + 1) * attn.qk_dim)
        return attn.q(a)[..., rows] * attn.scale, attn.k(a)[..., rows], v

    def ignored_outputs(self, layer: int) -> torch.Tensor:
        """Per head-output coordinate: whether the output projection ignores it."""
        return (self.module.layers[layer].attn.o.weight == 0).all(dim=0)

    def _feed_forward(self, x: torch.Tensor, block) -> torch.Tensor:
        R, ff = self.grid.round, block.ff
        x = ff.act(R(ff.up(x)))
        for linear in ff.hidden:
            x = ff.act(R(linear(x)))
        return R(ff.down(x))

    def finish_layer(self, h: torch.Tensor, heads: torch.Tensor, layer: int) -> torch.Tensor:
        """The rest of ``layer`` after its heads' averages ``heads`` [..., H]."""
        R, block = self.grid.round, self.module.layers[layer]
        if block.pre:
            h = R(h + block.attn.o(heads))
            return R(h + self._feed_forward(block.norm2(h), block))
        h = R(block.norm1(h + block.attn.o(heads)))
        return R(block.norm2(h + self._feed_forward(h, block)))

    def decide(self, h: torch.Tensor) -> torch.Tensor:
        return self.module.head(self.module.final_norm(h)).squeeze(-1)

    def forward(self, ids: torch.Tensor, record: bool = False):
        h = self.embedded()[ids]
        states = []
        for layer in range(self.n_layers):
            heads = [fixed_attention(*self.project(h, layer, a), self.grid)
                     for a in range(self.n_heads)]
            h = self.finish_layer(h, torch.cat(heads, dim=-1), layer)
            states.append(h)
        scores = self.decide(h)
        return (scores, states) if record else scores
