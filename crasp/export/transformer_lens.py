"""Pass: BlockPlan -> TransformerLens ``TransformerBridge`` (and its export directory).

TransformerLens 4 builds custom, LayerNorm-free models through its native route:
``TransformerBridge.boot_native(config)`` (``transformer_lens.model_bridge.sources.native``)
constructs a ``NativeModel`` from a ``TransformerBridgeConfig`` and wraps it in the bridge whose
hook points researchers use (``hook_embed``, ``blocks.{i}.hook_resid_pre``,
``blocks.{i}.attn.hook_pattern``, ``blocks.{i}.hook_mlp_out``, ...); the weights then load with
``bridge.load_state_dict``, unprocessed (no LayerNorm folding, no centering).

The mapping, block by block (``blocks``): ``embed`` is the checkpoint's embedding (ids
unchanged; ``d_vocab`` = |vocab| + 3 with BOS, padding and the NaN row of unknown tokens),
``pos_embed`` the position table (zero for NoPE; ``n_ctx`` rows), each block's
``attn.{q,k,v,o}`` and ``mlp.{in,out}`` the plan's weights and biases, ``ln1``/``ln2``/
``ln_final`` LayerNorm (pre-LN) or identity (``normalization_type=None``), and ``unembed``
(weight and bias) the output direction as ``d_vocab_out = 1`` logit: the score, whose sign is
the decision at every position. Native attention divides scores by sqrt(d_head), the
checkpoint's scale; compiled heads have q = k = 0 and average uniformly. The tensors are named
as ``bridge.state_dict()`` names them.

The export directory holds ``config.json`` (the ``TransformerBridgeConfig`` fields),
``model.safetensors`` (``bridge.state_dict()``, the checkpoint's dtype), the tokenizer
(``crasp.export.tokenizer``), and ``crasp.json`` (the residual labels, the block of every
crasp layer, and the source model's certificate).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save
from transformer_lens.model_bridge.sources.native import boot

from crasp.export.blocks import BlockPlan, description, plan_blocks
from crasp.export.outputs import INTEROP_EXPORT
from crasp.export.tokenizer import build_tokenizer
from crasp.util.outputs import replace_directory
from crasp.util.safetensors_bytes import stable

TARGET = "TransformerLens"
FORMAT = "crasp-transformer-lens"


def bridge_config(plan: BlockPlan) -> dict:
    """The ``TransformerBridgeConfig`` fields of the plan (``boot_native`` reads them)."""
    return {
        "d_model": plan.d_model, "n_layers": len(plan.blocks), "n_heads": plan.n_heads,
        "d_head": plan.d_head, "d_mlp": plan.d_mlp, "n_ctx": plan.n_ctx,
        "d_vocab": len(plan.vocab) + 3, "d_vocab_out": 1, "act_fn": plan.activation,
        "normalization_type": "LN" if plan.norm == "pre" else None, "eps": plan.eps,
        "positional_embedding_type": "standard", "attn_only": False, "init_weights": False,
        "default_prepend_bos": True, "tokenizer_prepends_bos": True,
        "model_name": "crasp-" + str(plan.source.get("train_config", {}).get("language", "model")),
    }


def bridge_state(plan: BlockPlan) -> dict:
    """The plan's tensors under the names of ``TransformerBridge.state_dict()``."""
    state = {"embed.weight": plan.embed,
             "pos_embed.weight": (plan.positions if plan.positions is not None
                                  else torch.zeros(plan.n_ctx, plan.d_model, dtype=plan.dtype)),
             "unembed.weight": plan.head_weight[None, :],
             "unembed.bias": plan.head_bias.reshape(1)}
    inner = plan.n_heads * plan.d_head
    for index, block in enumerate(plan.blocks):
        prefix = f"blocks.{index}"
        for part in ("q", "k", "v", "o"):
            if block.attention is None:
                shape = (plan.d_model, inner) if part == "o" else (inner, plan.d_model)
                weight = torch.zeros(shape, dtype=plan.dtype)
                bias = torch.zeros(shape[0], dtype=plan.dtype)
            else:
                weight, bias = block.attention[part]
            state[f"{prefix}.attn.{part}.weight"], state[f"{prefix}.attn.{part}.bias"] = \
                weight, bias
        for name, (weight, bias) in (("in", block.fc_in), ("out", block.fc_out)):
            state[f"{prefix}.mlp.{name}.weight"], state[f"{prefix}.mlp.{name}.bias"] = \
                weight, bias
        if plan.norm == "pre":
            # a pre-LN plan has one block per layer, each with both LayerNorms
            state[f"{prefix}.ln1.weight"], state[f"{prefix}.ln1.bias"] = block.norm1
            state[f"{prefix}.ln2.weight"], state[f"{prefix}.ln2.bias"] = block.norm2
    if plan.norm == "pre":
        state["ln_final.weight"], state["ln_final.bias"] = plan.final_norm
    return {name: tensor.contiguous() for name, tensor in state.items()}


def bridge_of(model, n_ctx: int | None = None):
    """The ``TransformerBridge`` of a float realization or trained run (module docstring), with
    its tokenizer; ``n_ctx`` positions (default ``blocks.context_length``)."""
    plan = plan_blocks(model, TARGET, n_ctx)
    bridge = boot(bridge_config(plan), tokenizer=build_tokenizer(plan.vocab), dtype=plan.dtype)
    bridge.load_state_dict(bridge_state(plan), strict=True)
    bridge.eval()
    bridge.crasp_plan = plan
    return bridge


def write_transformer_lens(model, output: str | Path, force: bool = False,
                           n_ctx: int | None = None) -> None:
    """Write the export directory atomically (``crasp.util.outputs.replace_directory``)."""
    bridge = bridge_of(model, n_ctx)
    plan: BlockPlan = bridge.crasp_plan
    tensors = {name: value.detach().contiguous() for name, value in bridge.state_dict().items()}

    def write(staging: Path) -> None:
        (staging / "config.json").write_text(json.dumps(bridge_config(plan), indent=2) + "\n")
        weights = save(tensors, metadata={"format": FORMAT})
        (staging / "model.safetensors").write_bytes(stable(weights))
        build_tokenizer(plan.vocab).save_pretrained(str(staging))
        (staging / "crasp.json").write_text(json.dumps(description(plan, FORMAT), indent=2)
                                            + "\n")
    replace_directory(output, INTEROP_EXPORT, force, write)
