"""Pass: FloatRealization -> checkpoint directory of the trainer's model class.

``save_float_realization`` writes a compiled program's float realization (``realization``) in
the trainer's checkpoint format (``crasp.train.checkpoint``, which reads it back): the
realization's tensors (``docs/model-format.md`` names) map one to one onto the parameters of
``CausalTransformer``. The model has one head, so the head width is d_model: the value and
output projections are the realization's, padded with zero rows and columns (q = k = 0, so the
attention stays uniform whatever the width). Embedding row V + 1 (padding) is zero.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save

from crasp.compiler.model_config import ATTENTION_PARTS, EMBED, OUT_BIAS, OUT_WEIGHT, attention, ffn
from crasp.errors import CraspError
from crasp.realize.realization import FloatRealization
from crasp.train import run as files
from crasp.train.checkpoint import ARCHITECTURE_FILE, DTYPES, KIND
from crasp.train.config import TrainConfig
from crasp.util.outputs import FLOAT_REALIZATION, replace_directory


def architecture_config(realization: FloatRealization, name: str) -> TrainConfig:
    widths = realization.ffn_widths
    if not widths:
        raise CraspError("a program of depth 0 compiles to no layers, and the trainer's model "
                         "class has at least one: use --target exact for it")
    return TrainConfig(language=name, depth=len(widths), posenc="nope",
                       d_model=len(realization.residual_labels), n_heads=1,
                       d_ff=max(w for layer in widths for w in layer), norm="none",
                       activation="relu", dropout=0.0).validate()


def state_dict(realization: FloatRealization) -> dict[str, torch.Tensor]:
    """The realization's tensors under ``CausalTransformer``'s parameter names."""
    t = {name: torch.as_tensor(value, dtype=torch.float64)
         for name, value in realization.tensors.items()}
    d = len(realization.residual_labels)
    # The trainer's table: the tokens, BOS (id len(vocab)) and PAD (never read). The compiled
    # table's row after BOS is the other-token row of the exact format, which a checkpoint has
    # no use for: its inputs are over the vocabulary (execute refuses other tokens).
    token_rows = len(realization.vocab) + 1
    embed = torch.zeros(token_rows + 1, d, dtype=torch.float64)
    embed[:token_rows] = t[EMBED][:token_rows]
    state = {"embed.weight": embed, "head.weight": t[OUT_WEIGHT][None, :],
             "head.bias": t[OUT_BIAS].reshape(1)}
    for layer, widths in enumerate(realization.ffn_widths):
        target = f"layers.{layer}"  # the module's parameter path (crasp.train.model)
        for part in ATTENTION_PARTS:
            square = torch.zeros(d, d, dtype=torch.float64)
            weight = t[attention(layer, part)]
            square[:weight.shape[0], :weight.shape[1]] = weight
            state[f"{target}.attn.{part}.weight"] = square
            state[f"{target}.attn.{part}.bias"] = torch.zeros(d, dtype=torch.float64)
        names = (["up"] + [f"hidden.{k}" for k in range(len(widths) - 1)] + ["down"])
        for m, name in enumerate(names):
            for kind in ("weight", "bias"):
                state[f"{target}.ff.{name}.{kind}"] = t[ffn(layer, m, kind)]
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
        "kind": KIND, "vocab": realization.vocab, "ffn_widths": realization.ffn_widths,
        "dtype": realization.dtype, "certified_length": realization.certified_length,
        "largest_certifiable": realization.largest_certifiable, "gain": realization.gain,
        "largest_value": realization.largest_value, "program_sha256": program_sha256,
        "residual_labels": realization.residual_labels, "gadgets": realization.style,
    }

    def write(staging: Path) -> None:
        files.write_json(staging / files.CONFIG_FILE, config.to_dict())
        files.write_json(staging / ARCHITECTURE_FILE, architecture)
        (staging / files.BEST_FILE).write_bytes(save(tensors, metadata={"format": KIND}))

    replace_directory(directory, FLOAT_REALIZATION, force, write)
