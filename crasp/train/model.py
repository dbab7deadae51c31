"""A future-masked (causal) transformer with a per-position binary head.

Layout (every part a plain, separately addressable module; ``crasp.train.checkpoint`` writes
compiled programs' float realizations as checkpoints of this class)::

    embed                      nn.Embedding(V + 2, d)      tokens, BOS = V, PAD = V + 1
    pos                        Learned | Sinusoidal | None (absolute encodings only)
    layers[l].attn.{q,k,v,o}   nn.Linear(d, d)             per-layer attention projections
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
``is_causal=True`` (and, for ALiBi with ``alibi_impl="mask"``, a float bias that includes the
causal mask). Sequences are right-padded, so real positions never attend to padding.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from crasp.train.config import TrainConfig, rope_dims
from crasp.train.posenc import ALiBi, Learned, Rotary, Sinusoidal, alibi_slopes


class Attention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.dropout = dropout
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)

    def heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v of shape (B, H, T, d_h), before any positional rotation."""
        B, T, _ = x.shape
        shape = (B, T, self.n_heads, self.head_dim)
        return (self.q(x).view(shape).transpose(1, 2), self.k(x).view(shape).transpose(1, 2),
                self.v(x).view(shape).transpose(1, 2))

    def forward(self, x: torch.Tensor, rotary: Rotary | None = None,
                alibi: ALiBi | None = None) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.heads(x)
        if rotary is not None:
            q, k = rotary(q, k)
        mask = None
        if alibi is not None:
            if alibi.impl == "mask":
                mask = alibi.mask(T, x.device, q.dtype)
            else:
                column = alibi.key_column(T, self.scale, x.device, q.dtype)
                q = torch.cat([q, q.new_ones(B, self.n_heads, T, 1)], dim=-1)
                k = torch.cat([k, column.expand(B, -1, -1, -1)], dim=-1)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=mask is None, scale=self.scale,
            dropout_p=self.dropout if self.training else 0.0)
        return self.o(out.transpose(1, 2).reshape(B, T, D))


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
        self.attn = Attention(d, config.n_heads, config.dropout)
        self.ff = FeedForward(d, ffn_widths, config.dropout, config.activation)
        norm = nn.Identity if config.norm == "none" else nn.LayerNorm
        self.norm1 = norm(d)
        self.norm2 = norm(d)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x, rotary=None, alibi=None):
        if self.pre:
            x = x + self.drop(self.attn(self.norm1(x), rotary, alibi))
            return x + self.drop(self.ff(self.norm2(x)))
        x = self.norm1(x + self.drop(self.attn(x, rotary, alibi)))
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
        self.rotary = None
        self.alibi = None
        head_dim = d // config.n_heads
        if config.posenc == "rope":
            self.rotary = Rotary(rope_dims(head_dim, config.rope_fraction), config.rope_base)
        elif config.posenc == "alibi":
            slopes = config.alibi_slopes or alibi_slopes(config.n_heads)
            self.alibi = ALiBi(list(slopes), config.alibi_impl)
        self.ffn_widths = ffn_widths or [[config.d_ff]] * config.depth
        self.layers = nn.ModuleList(Block(config, widths) for widths in self.ffn_widths)
        self.final_norm = nn.LayerNorm(d) if config.norm == "pre" else nn.Identity()
        self.head = nn.Linear(d, 1)

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        if self.pos is not None:
            x = x + self.pos(tokens.shape[1], tokens.device)
        for layer in self.layers:
            x = layer(x, self.rotary, self.alibi)
        return self.final_norm(x)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.hidden(tokens)).squeeze(-1)


def build_model(config: TrainConfig, vocab_size: int) -> CausalTransformer:
    """The model for ``config`` (weights drawn from torch's global RNG)."""
    return CausalTransformer(config, vocab_size, max_positions=config.max_length() + 1,
                             ffn_widths=config.ffn_widths)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
