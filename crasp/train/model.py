"""A future-masked (causal) transformer with a per-position binary head.

Layout (every part a plain, separately addressable module; ``crasp.train.checkpoint`` writes
compiled programs' float realizations as checkpoints of this class)::

    embed                      nn.Embedding(V + 2, d)      tokens, BOS = V, PAD = V + 1
    pos                        Learned | Sinusoidal | PeriodicTables | None (absolute encodings:
                                                           learned, sinusoidal, moduli)
    layers[l].attn.{q,k,v,o}   nn.Linear(d, d)             per-layer attention projections
                                                           (q, k: d -> H R with qk_rank R;
                                                           none with attention "dp-free")
    layers[l].attn.relative    RelativeBias                rpe-log / rpe-lin rates, per layer
    t5.table                   nn.Embedding(buckets, H)    T5's bias, shared by the layers
    layers[l].ff.up            nn.Linear(d, w_1)           the first hidden layer
    layers[l].ff.hidden[k]     nn.Linear(w_k+1, w_k+2)     further hidden layers (none by default)
    layers[l].ff.down          nn.Linear(w_M, d)
    layers[l].norm1, .norm2    nn.LayerNorm(d), or Identity for norm "none"
    final_norm                 nn.LayerNorm(d) for pre-LN, Identity for post-LN and "none"
    head                       nn.Linear(d, 1)             logit of "prefix is in the language"

Pre-LN: ``x + Attn(LN(x))``, ``x + FF(LN(x))``, final LN. Post-LN (PyTorch's default, the
paper's): ``LN(x + Attn(x))``, ``LN(x + FF(x))``, no final LN. No normalization ("none", what
compiled programs need): ``x + Attn(x)``, ``x + FF(x)``. The hidden widths default to one
layer of ``d_ff`` per block; ``ffn_widths`` gives each block its own list. Dropout (as in PyTorch's
transformer layers) acts on the attention weights, on each residual branch, and after the
feed-forward activation. Attention is ``torch.nn.functional.scaled_dot_product_attention`` with
``is_causal=True`` (and, for ALiBi with ``alibi_impl="mask"``, T5 and the ``rpe`` biases, a float
bias that includes the causal mask); ``Attention`` documents the ``dp-free`` and ``hardmax``
variants and ``qk_rank``. Sequences are right-padded, so real positions never attend to padding.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from crasp.errors import CraspError
from crasp.train.config import RELATIVE_POSENCS, TrainConfig, rope_dims
from crasp.train.posenc import (ALiBi, Learned, PeriodicTables, RelativeBias, Rotary,
                                 Sinusoidal, T5Bias, alibi_slopes, causal_bias)


def hardmax(scores: torch.Tensor) -> torch.Tensor:
    """Average-hard attention: the weights are uniform over the positions of maximal score in
    each row and 0 elsewhere. Tie rule: tied maxima (equal float scores) share the weight
    equally, the *average-hard* attention of the transformer-expressivity literature (AHAT);
    with content-free scores (NoPE, DP-free) every position ties, which is C-RASP's uniform
    average. Rows always hold their own position (causal), so no row is all ``-inf``."""
    top = (scores == scores.amax(dim=-1, keepdim=True)).to(scores.dtype)
    return top / top.sum(dim=-1, keepdim=True)


def straight_through_hardmax(scores: torch.Tensor) -> torch.Tensor:
    """``hardmax`` in the forward pass, softmax's gradient in the backward pass (the
    straight-through estimator, Bengio, Leonard & Courville 2013): ``hard + soft - soft.detach()``
    equals ``hard`` in value, while its derivative is that of ``soft``. Training and evaluation
    therefore compute the same (hard) function; only the gradient is relaxed."""
    soft = torch.softmax(scores, dim=-1)
    return hardmax(scores) + soft - soft.detach()


class Attention(nn.Module):
    """Multi-head causal self-attention in three variants (``TrainConfig.attention``):

    * ``softmax``: ``softmax(q k^T / sqrt(d_qk) + bias) v`` (``scaled_dot_product_attention``);
    * ``dp-free``: ``softmax(bias) v`` — no dot product, no ``q``/``k`` projections; the scores
      come from the positional bias alone (Wang & E, NeurIPS 2024, "DP-free" attention). With
      NoPE the bias is 0, every score is equal, and each position averages the values of its
      prefix uniformly: the averaging of the C-RASP construction;
    * ``hardmax``: the scores of ``softmax`` through ``straight_through_hardmax``.

    ``qk_rank = R`` gives each head queries and keys of R dimensions (``q``, ``k``:
    ``d -> H R``), so the head's bilinear form ``W_Q,h W_K,h^T`` (d x d) has rank at most R; the
    scale is ``1/sqrt(R)``. By default R is the head dimension ``d / H``.

    ``bias`` is a positional bias with ``mask(T, device, dtype) -> (1, H, T, T)`` (causal mask
    folded in): the model's ALiBi or T5 table, passed to ``forward``, or this layer's own
    ``relative`` bias (``rpe-log``/``rpe-lin``).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float, attention: str = "softmax",
                 qk_rank: int | None = None, relative: str | None = None):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qk_dim = qk_rank or self.head_dim
        self.scale = 1.0 / math.sqrt(self.qk_dim)
        self.dropout = dropout
        self.attention = attention
        self.q = self.k = None
        if attention != "dp-free":
            self.q = nn.Linear(d_model, n_heads * self.qk_dim)
            self.k = nn.Linear(d_model, n_heads * self.qk_dim)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        self.relative = RelativeBias(relative, n_heads) if relative else None

    def split(self, x: torch.Tensor, width: int) -> torch.Tensor:
        """(B, T, H * width) -> (B, H, T, width)."""
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, width).transpose(1, 2)

    def heads(self, x: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None,
                                              torch.Tensor]:
        """q, k of shape (B, H, T, d_qk) before any positional rotation (None for ``dp-free``),
        and v of shape (B, H, T, d_h)."""
        v = self.split(self.v(x), self.head_dim)
        if self.q is None:
            return None, None, v
        return self.split(self.q(x), self.qk_dim), self.split(self.k(x), self.qk_dim), v

    def forward(self, x: torch.Tensor, rotary: Rotary | None = None, bias=None) -> torch.Tensor:
        B, T, D = x.shape
        bias = self.relative or bias
        q, k, v = self.heads(x)
        fold = isinstance(bias, ALiBi) and bias.impl == "fold" and self.attention == "softmax"
        mask = bias.mask(T, x.device, x.dtype) if bias is not None and not fold else None
        if self.attention == "dp-free":
            scores = mask if mask is not None else causal_bias(x.new_zeros(1, T, T))
            out = self.attend(torch.softmax(scores, dim=-1), v)
        else:
            if rotary is not None:
                q, k = rotary(q, k)
            if self.attention == "hardmax":
                scores = q @ k.transpose(-1, -2) * self.scale
                scores = scores + (mask if mask is not None
                                   else causal_bias(scores.new_zeros(1, T, T)))
                out = self.attend(straight_through_hardmax(scores), v)
            else:
                if fold:
                    column = bias.key_column(T, self.scale, x.device, q.dtype)
                    q = torch.cat([q, q.new_ones(B, self.n_heads, T, 1)], dim=-1)
                    k = torch.cat([k, column.expand(B, -1, -1, -1)], dim=-1)
                out = F.scaled_dot_product_attention(
                    q, k, v, attn_mask=mask, is_causal=mask is None, scale=self.scale,
                    dropout_p=self.dropout if self.training else 0.0)
        return self.o(out.transpose(1, 2).reshape(B, T, D))

    def attend(self, weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.dropout(weights, self.dropout, self.training) @ v


class FeedForward(nn.Module):
    def __init__(self, d_model: int, widths: list[int], dropout: float, activation: str):
        super().__init__()
        self.up = nn.Linear(d_model, widths[0])
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.down = nn.Linear(widths[-1], d_model)
        self.act = nn.ReLU() if activation == "relu" else nn.GELU()
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.drop(self.act(self.up(x)))
        for layer in self.hidden:
            x = self.drop(self.act(layer(x)))
        return self.down(x)


class Block(nn.Module):
    def __init__(self, config: TrainConfig, ffn_widths: list[int]):
        super().__init__()
        d = config.d_model
        self.pre = config.norm in ("pre", "none")
        self.attn = Attention(d, config.n_heads, config.dropout, config.attention,
                              config.qk_rank,
                              config.posenc if config.posenc in RELATIVE_POSENCS else None)
        self.ff = FeedForward(d, ffn_widths, config.dropout, config.activation)
        norm = nn.Identity if config.norm == "none" else nn.LayerNorm
        self.norm1 = norm(d)
        self.norm2 = norm(d)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x, rotary=None, bias=None):
        if self.pre:
            x = x + self.drop(self.attn(self.norm1(x), rotary, bias))
            return x + self.drop(self.ff(self.norm2(x)))
        x = self.norm1(x + self.drop(self.attn(x, rotary, bias)))
        return self.norm2(x + self.drop(self.ff(x)))


class CausalTransformer(nn.Module):
    """``forward(tokens (B, T) long) -> logits (B, T)``; position 0 holds BOS."""

    def __init__(self, config: TrainConfig, vocab_size: int, max_positions: int,
                 ffn_widths: list[list[int]] | None = None):
        super().__init__()
        self.vocab_size = vocab_size
        self.bos_id = vocab_size
        self.pad_id = vocab_size + 1
        self.posenc = config.posenc
        d = config.d_model
        self.embed = nn.Embedding(vocab_size + 2, d)
        self.pos: nn.Module | None = None
        if config.posenc == "learned":
            self.pos = Learned(max_positions, d)
        elif config.posenc == "sinusoidal":
            self.pos = Sinusoidal(d)
        elif config.moduli:  # sinusoidal-rational, or alibi with periodic tables
            self.pos = PeriodicTables(config.moduli, d)
        self.rotary = None
        self.alibi = None
        self.t5 = None
        qk_dim = config.qk_rank or d // config.n_heads
        if config.posenc == "rope":
            self.rotary = Rotary(rope_dims(qk_dim, config.rope_fraction), config.rope_base)
        elif config.posenc == "alibi":
            slopes = config.alibi_slopes or alibi_slopes(config.n_heads)
            self.alibi = ALiBi(list(slopes), config.alibi_impl)
        elif config.posenc == "t5":
            self.t5 = T5Bias(config.n_heads, config.t5_buckets, config.t5_max_distance)
        self.ffn_widths = ffn_widths or [[config.d_ff]] * config.depth
        self.layers = nn.ModuleList(Block(config, widths) for widths in self.ffn_widths)
        self.final_norm = nn.LayerNorm(d) if config.norm == "pre" else nn.Identity()
        self.head = nn.Linear(d, 1)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """``nn.Module.load_state_dict``, refusing weights it would round: PyTorch copies a
        float64 tensor into a float32 parameter silently, and a float realization is exact only
        in its own dtype (``docs/model-format.md``: dyck2_bounded, certified in float64, answers
        wrongly at length 6 once rounded to float32). Convert the module first
        (``module.to(torch.float64)``); widening (float32 into float64) is exact and allowed."""
        own = self.state_dict()
        for name, value in state_dict.items():
            target = own.get(name)
            if (target is not None and value.is_floating_point()
                    and torch.promote_types(value.dtype, target.dtype) != target.dtype):
                raise CraspError(
                    f"tensor {name!r} is {str(value.dtype).removeprefix('torch.')} but the module "
                    f"is {str(target.dtype).removeprefix('torch.')}: loading would round the "
                    f"weights (a float realization is exact only in its own dtype); call "
                    f"module.to(torch.{str(value.dtype).removeprefix('torch.')}) first")
        return super().load_state_dict(state_dict, strict, assign)

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        if self.pos is not None:
            x = x + self.pos(tokens.shape[1], tokens.device)
        bias = self.alibi or self.t5
        for layer in self.layers:
            x = layer(x, self.rotary, bias)
        return self.final_norm(x)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.hidden(tokens)).squeeze(-1)


def build_model(config: TrainConfig, vocab_size: int) -> nn.Module:
    """The model for ``config`` (weights drawn from torch's global RNG): a
    ``CausalTransformer``, or with ``precision`` set the format's fixed-precision class
    (``crasp.train.fixed_precision.PrecisionTransformer``)."""
    if config.precision is not None:
        from crasp.train.fixed_precision import PrecisionTransformer, parse_precision

        return PrecisionTransformer(vocab_size, config.d_model, config.n_heads,
                                    config.ffn_widths or [[config.d_ff]] * config.depth,
                                    *parse_precision(config.precision))
    return CausalTransformer(config, vocab_size, max_positions=config.max_length() + 1,
                             ffn_widths=config.ffn_widths)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
