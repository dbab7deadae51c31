"""Pass: FloatRealization -> checkpoint directory of the trainer's model class.

``save_float_realization`` writes a compiled program's float realization (``realization``) in
the trainer's checkpoint format (``crasp.train.checkpoint``, which reads it back): the
realization's tensors (``docs/model-format.md`` names) map one to one onto the parameters of
``CausalTransformer``. A NoPE program's model has one head, so the head width is d_model: the
value and output projections are the realization's, padded with zero rows and columns (q = k
= 0, so the attention stays uniform whatever the width). A positional program's periodic
tables become the model's ``pos.tables.{M}`` (posenc ``sinusoidal-rational``, or ``alibi`` with
moduli when it has local heads, placed by ``host_layout``), and a conjunction layer comes first
when it has token-and-residue coordinates. Embedding row V + 1 (padding) is zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save

from crasp.compiler.model_config import (ATTENTION_PARTS, EMBED, OUT_BIAS, OUT_WEIGHT, alibi,
                                         attention, ffn, periodic)
from crasp.errors import CraspError
from crasp.realize.realization import LOCAL_SCORE_GAIN, FloatRealization
from crasp.train import run as files
from crasp.train.checkpoint import ARCHITECTURE_FILE, DTYPES, KIND
from crasp.train.config import TrainConfig
from crasp.util.outputs import FLOAT_REALIZATION, replace_directory
from crasp.util.safetensors_bytes import stable


@dataclass(frozen=True)
class HostLayout:
    """How the realization sits in ``CausalTransformer``: ``n_heads`` heads of ``head_dim``
    (d_model = n_heads * head_dim >= the realization's width, padded with unused zero
    coordinates), a conjunction layer first when ``conjunctions`` (``realization``'s
    docstring), and the hidden widths of every layer."""

    n_heads: int
    head_dim: int
    conjunctions: bool
    ffn_widths: list[list[int]]

    @property
    def d_model(self) -> int:
        return self.n_heads * self.head_dim


def _local_head_counts(realization: FloatRealization) -> list[int]:
    return [int(np.count_nonzero(realization.tensors[alibi(layer)]))
            if alibi(layer) in realization.tensors else 0
            for layer in range(len(realization.ffn_widths))]


def host_layout(realization: FloatRealization) -> HostLayout:
    """Without local heads: one head as wide as the residual stream. With them: head 0 is
    every layer's uniform head (slope 0) and heads 1.. its local heads (slope G), each of a
    width that is a power of 16, so the scale 1/sqrt(head_dim) and its square root (which
    attention kernels may apply to q and k separately) are powers of 2 and the scaled scores
    stay exact integers."""
    d = len(realization.residual_labels)
    conjunctions = bool(realization.mixed)
    widths = [[2 * len(realization.mixed)]] * conjunctions + realization.ffn_widths
    if not realization.local_heads:
        return HostLayout(1, d, conjunctions, widths)
    n_heads = 1 + max(_local_head_counts(realization))
    head_dim = 16
    while head_dim < max(realization.d_head, -(-d // n_heads)):
        head_dim *= 16
    return HostLayout(n_heads, head_dim, conjunctions, widths)


def architecture_config(realization: FloatRealization, name: str) -> TrainConfig:
    host = host_layout(realization)
    if not realization.ffn_widths:
        raise CraspError("a program of depth 0 compiles to no layers, and the trainer's model "
                         "class has at least one: use --target exact for it")
    posenc = ("alibi" if realization.local_heads
              else "sinusoidal-rational" if realization.moduli else "nope")
    return TrainConfig(language=name, depth=len(host.ffn_widths), posenc=posenc,
                       d_model=host.d_model, n_heads=host.n_heads,
                       d_ff=max(w for layer in host.ffn_widths for w in layer), norm="none",
                       activation="relu", dropout=0.0, moduli=realization.moduli or None,
                       alibi_slopes=([0.0] + [float(LOCAL_SCORE_GAIN)] * (host.n_heads - 1)
                                     if realization.local_heads else None),
                       ffn_widths=host.ffn_widths).validate()


def _pad(matrix: torch.Tensor, rows: int, columns: int) -> torch.Tensor:
    padded = torch.zeros(rows, columns, dtype=torch.float64)
    padded[:matrix.shape[0], :matrix.shape[1]] = matrix
    return padded


def _conjunction_layer(mixed: list[int], d: int) -> dict[str, torch.Tensor]:
    """Zero attention and the units ReLU(2x - 1), ReLU(x) per mixed coordinate x, writing
    their difference back to x (``realization``'s docstring)."""
    up = torch.zeros(2 * len(mixed), d, dtype=torch.float64)
    bias = torch.zeros(2 * len(mixed), dtype=torch.float64)
    down = torch.zeros(d, 2 * len(mixed), dtype=torch.float64)
    for k, coordinate in enumerate(mixed):
        up[2 * k, coordinate], bias[2 * k], up[2 * k + 1, coordinate] = 2, -1, 1
        down[coordinate, 2 * k], down[coordinate, 2 * k + 1] = 1, -1
    state = {f"attn.{part}.{kind}": torch.zeros(d, d) if kind == "weight" else torch.zeros(d)
             for part in ATTENTION_PARTS for kind in ("weight", "bias")}
    return {**{k: v.double() for k, v in state.items()}, "ff.up.weight": up, "ff.up.bias": bias,
            "ff.down.weight": down, "ff.down.bias": torch.zeros(d, dtype=torch.float64)}


def _attention(t: dict[str, torch.Tensor], layer: int, realization: FloatRealization,
               host: HostLayout) -> dict[str, torch.Tensor]:
    """The layer's heads placed by ``host_layout``; a local head's query scaled by
    G sqrt(head_dim), so that with the model's scale 1/sqrt(head_dim) and slope G its scores
    are G times the exact model's."""
    d, width, compiled = host.d_model, realization.d_head, realization.d_head
    slopes = t.get(alibi(layer), torch.zeros(realization.n_heads))
    parts = {part: torch.zeros(d, d, dtype=torch.float64) for part in ATTENTION_PARTS}
    local = 1
    for head in range(realization.n_heads):
        rows = slice(head * compiled, (head + 1) * compiled)
        if slopes[head] > 0:
            target, local, factor = local, local + 1, LOCAL_SCORE_GAIN * math.sqrt(host.head_dim)
        else:
            target, factor = 0, 0.0   # the uniform head (or a zero head): q = k = 0
            if not t[attention(layer, "v")][rows].any():
                continue
        place = slice(target * host.head_dim, target * host.head_dim + width)
        for part in "qkv":
            parts[part][place] = _pad(t[attention(layer, part)][rows], width, d)
        parts["q"][place] *= factor
        parts["o"][:, place] = _pad(t[attention(layer, "o")][:, rows], d, width)
    return {**{f"attn.{part}.weight": parts[part] for part in ATTENTION_PARTS},
            **{f"attn.{part}.bias": torch.zeros(d, dtype=torch.float64)
               for part in ATTENTION_PARTS}}


def state_dict(realization: FloatRealization) -> dict[str, torch.Tensor]:
    """The realization's tensors under ``CausalTransformer``'s parameter names."""
    t = {name: torch.as_tensor(value, dtype=torch.float64)
         for name, value in realization.tensors.items()}
    host = host_layout(realization)
    d = host.d_model
    # The trainer's table: the tokens, BOS (id len(vocab)) and PAD (never read). The compiled
    # table's row after BOS is the other-token row of the exact format, which a checkpoint has
    # no use for: its inputs are over the vocabulary (execute refuses other tokens).
    token_rows = len(realization.vocab) + 1
    embed = torch.zeros(token_rows + 1, d, dtype=torch.float64)
    embed[:token_rows] = _pad(t[EMBED][:token_rows], token_rows, d)
    state = {"embed.weight": embed, "head.weight": _pad(t[OUT_WEIGHT][None, :], 1, d),
             "head.bias": t[OUT_BIAS].reshape(1)}
    if realization.local_heads:
        state["alibi.slopes"] = torch.tensor(architecture_config(realization, "").alibi_slopes,
                                             dtype=torch.float64)
    for modulus in realization.moduli:
        state[f"pos.tables.{modulus}"] = _pad(t[periodic(modulus)], modulus, d)
    layers = [_conjunction_layer(realization.mixed, d)] if host.conjunctions else []
    for layer, widths in enumerate(realization.ffn_widths):
        parts = _attention(t, layer, realization, host)
        names = (["up"] + [f"hidden.{k}" for k in range(len(widths) - 1)] + ["down"])
        for m, name in enumerate(names):
            weight, bias = t[ffn(layer, m, "weight")], t[ffn(layer, m, "bias")]
            if name == "up":
                weight = _pad(weight, weight.shape[0], d)
            elif name == "down":
                weight, bias = _pad(weight, d, weight.shape[1]), _pad(bias[:, None], d, 1)[:, 0]
            parts[f"ff.{name}.weight"], parts[f"ff.{name}.bias"] = weight, bias
        layers.append(parts)
    for index, parts in enumerate(layers):
        state.update({f"layers.{index}.{name}": value for name, value in parts.items()})
    return state


def save_float_realization(directory: str | Path, realization: FloatRealization, name: str,
                           program_sha256: str, force: bool = False) -> None:
    """Write the checkpoint directory atomically (``crasp.util.outputs.replace_directory``): the
    place must be absent or empty, or, with ``force``, hold a float realization, which is then
    replaced; anything else is refused."""
    config = architecture_config(realization, name)
    dtype = DTYPES[realization.dtype]
    tensors = {k: v.to(dtype).contiguous() for k, v in state_dict(realization).items()}
    architecture = {
        "kind": KIND, "vocab": realization.vocab, "ffn_widths": config.ffn_widths,
        "dtype": realization.dtype, "certified_length": realization.certified_length,
        "largest_certifiable": realization.largest_certifiable, "gain": realization.gain,
        "largest_value": realization.largest_value, "program_sha256": program_sha256,
        "residual_labels": realization.residual_labels, "gadgets": realization.style,
    }

    def write(staging: Path) -> None:
        files.write_json(staging / files.CONFIG_FILE, config.to_dict())
        files.write_json(staging / ARCHITECTURE_FILE, architecture)
        (staging / files.BEST_FILE).write_bytes(stable(save(tensors, metadata={"format": KIND})))

    replace_directory(directory, FLOAT_REALIZATION, force, write)
