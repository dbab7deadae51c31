"""Pass: BlockPlan -> a Hugging Face ``transformers`` model of an existing architecture.

No architecture of ``transformers`` has blocks without normalization, so each crasp model goes
to the one whose normalization can be made exact:

* **Llama** (``LlamaForTokenClassification``) for models without normalization whose heads all
  have q = k = 0 (every float realization; trained runs with ``--norm none`` and
  ``--attention dp-free``), in **float32**. Llama's RMSNorm computes, in float32,
  ``w * x * rsqrt(mean(x^2) + eps)``. With eps = 2^120 and w = 2^60: mean(x^2) + eps rounds to
  eps whenever mean(x^2) < 2^95 (|x| < 2^47), rsqrt(2^120) = 2^-60 exactly, and scaling by
  powers of two is exact (no value of a realization is below 2^-66 in magnitude without being
  0), so every RMSNorm is the identity. The gated MLP ``down(act(gate x) * up x)`` with
  ``mlp_bias`` becomes the plain one: ``up`` has zero weights and bias 1, so ``up x = 1`` and
  the product is exact. RoPE rotates q = k = 0 into 0: every score is 0 and each head averages
  its prefix uniformly, as the checkpoint does. The score is ``score``'s single label (a linear
  layer with bias). Llama's RMSNorm casts its input to float32, so a **float64** realization
  cannot be expressed (its weights and the attention averages would be rounded): refused.
* **GPT-2** (``GPT2ForTokenClassification``) for pre-LN trained runs with one hidden layer per
  block: GPT-2 is exactly pre-LN (``x + attn(ln_1 x)``, ``x + mlp(ln_2 x)``, ``ln_f``), with
  LayerNorm eps 1e-5, biases everywhere (``Conv1D`` stores weights as [in, out]), attention
  scaled by 1/sqrt(d_head), ReLU or exact GELU (``activation_function`` "relu"/"gelu"), and a
  learned position table ``wpe`` (zero for NoPE, the sinusoidal table for ``sinusoidal``).

Refused (exit status 2, the reason named): exact compiled models, float64 checkpoints without
normalization, post-LN runs, models without normalization whose heads read positions through
q and k (Llama would rotate them with RoPE), and what ``crasp.export.blocks`` refuses. The
export directory is ``save_pretrained``'s (``config.json``, ``model.safetensors``), the
tokenizer's files and ``crasp.json``; it loads with
``AutoModelForTokenClassification.from_pretrained`` and ``AutoTokenizer.from_pretrained``
without crasp.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from transformers import (GPT2Config, GPT2ForTokenClassification, LlamaConfig,
                          LlamaForTokenClassification)
from transformers.utils.logging import disable_progress_bar

from crasp.errors import CraspError
from crasp.export.blocks import BlockPlan, description, plan_blocks
from crasp.export.outputs import INTEROP_EXPORT
from crasp.export.tokenizer import build_tokenizer
from crasp.util.outputs import replace_directory

TARGET = "Hugging Face"
FORMAT = "crasp-hugging-face"
IDENTITY_EPS, IDENTITY_WEIGHT = 2.0 ** 120, 2.0 ** 60


def _uniform_heads(plan: BlockPlan) -> bool:
    return all(block.attention is None
               or all(not tensor.any() for part in ("q", "k") for tensor in block.attention[part])
               for block in plan.blocks)


def architecture_for(plan: BlockPlan) -> str:
    """"llama" or "gpt2" (module docstring), or ``CraspError`` saying why neither fits."""
    if plan.norm == "pre":
        return "gpt2"
    if plan.dtype != torch.float32:
        raise CraspError(
            f"{TARGET} cannot express this {str(plan.dtype).split('.')[-1]} model: the only "
            f"normalization-free construction (Llama with an identity RMSNorm) computes the "
            f"norm in float32 and would round the weights; export a --dtype float32 "
            f"realization, or use --format transformer-lens, which keeps float64")
    if not _uniform_heads(plan):
        raise CraspError(f"{TARGET} cannot express this model: its heads have queries and keys "
                         f"but no normalization, and the only normalization-free construction "
                         f"(Llama) rotates queries and keys with RoPE")
    if plan.positions is not None:
        raise CraspError(f"{TARGET} cannot express this model: a position table without "
                         f"normalization (Llama has no position table)")
    return "llama"


def _llama(plan: BlockPlan):
    d_head = plan.d_head + plan.d_head % 2
    config = LlamaConfig(
        vocab_size=len(plan.vocab) + 3, hidden_size=plan.d_model,
        intermediate_size=plan.d_mlp, num_hidden_layers=len(plan.blocks),
        num_attention_heads=plan.n_heads, num_key_value_heads=plan.n_heads,
        head_dim=d_head, hidden_act=plan.activation, max_position_embeddings=plan.n_ctx,
        rms_norm_eps=IDENTITY_EPS, attention_bias=True, mlp_bias=True,
        tie_word_embeddings=False, num_labels=1, classifier_dropout=0.0,
        attention_dropout=0.0, bos_token_id=plan.bos_id, pad_token_id=plan.pad_id,
        eos_token_id=None)
    model = LlamaForTokenClassification(config).to(plan.dtype).eval()
    state = {"model.embed_tokens.weight": plan.embed,
             "model.norm.weight": _identity_norm(plan),
             "score.weight": plan.head_weight[None, :], "score.bias": plan.head_bias.reshape(1)}
    names = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj"}
    for index, block in enumerate(plan.blocks):
        prefix = f"model.layers.{index}"
        for part, name in names.items():
            weight, bias = _attention(plan, block, part, d_head)
            state[f"{prefix}.self_attn.{name}.weight"] = weight
            state[f"{prefix}.self_attn.{name}.bias"] = bias
        state[f"{prefix}.input_layernorm.weight"] = _identity_norm(plan)
        state[f"{prefix}.post_attention_layernorm.weight"] = _identity_norm(plan)
        state[f"{prefix}.mlp.gate_proj.weight"], state[f"{prefix}.mlp.gate_proj.bias"] = \
            block.fc_in
        state[f"{prefix}.mlp.up_proj.weight"] = torch.zeros_like(block.fc_in[0])
        state[f"{prefix}.mlp.up_proj.bias"] = torch.ones_like(block.fc_in[1])
        state[f"{prefix}.mlp.down_proj.weight"], state[f"{prefix}.mlp.down_proj.bias"] = \
            block.fc_out
    model.load_state_dict(state, strict=True)
    return model


def _identity_norm(plan: BlockPlan) -> torch.Tensor:
    return torch.full((plan.d_model,), IDENTITY_WEIGHT, dtype=plan.dtype)


def _attention(plan: BlockPlan, block, part: str, d_head: int
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """A head projection with each head widened to ``d_head`` by zero dimensions (RoPE needs
    an even head width; a zero query, key and value dimension changes no score or value)."""
    heads, inner = plan.n_heads, plan.n_heads * plan.d_head
    if block.attention is None:
        shape = (plan.d_model, inner) if part == "o" else (inner, plan.d_model)
        weight, bias = torch.zeros(shape, dtype=plan.dtype), torch.zeros(shape[0],
                                                                         dtype=plan.dtype)
    else:
        weight, bias = block.attention[part]
    extra = d_head - plan.d_head
    if part == "o":
        split = weight.reshape(plan.d_model, heads, plan.d_head)
        widened = torch.nn.functional.pad(split, (0, extra)).reshape(plan.d_model, -1)
        return widened, bias
    split = weight.reshape(heads, plan.d_head, plan.d_model)
    widened = torch.nn.functional.pad(split, (0, 0, 0, extra)).reshape(-1, plan.d_model)
    return widened, torch.nn.functional.pad(bias.reshape(heads, plan.d_head),
                                            (0, extra)).reshape(-1)


def _gpt2(plan: BlockPlan):
    config = GPT2Config(
        vocab_size=len(plan.vocab) + 3, n_positions=plan.n_ctx, n_embd=plan.d_model,
        n_layer=len(plan.blocks), n_head=plan.n_heads, n_inner=plan.d_mlp,
        activation_function=plan.activation, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        layer_norm_epsilon=plan.eps, scale_attn_weights=True, num_labels=1,
        classifier_dropout=0.0, bos_token_id=plan.bos_id, pad_token_id=plan.pad_id,
        eos_token_id=None, tie_word_embeddings=False)
    model = GPT2ForTokenClassification(config).to(plan.dtype).eval()
    positions = (plan.positions if plan.positions is not None
                 else torch.zeros(plan.n_ctx, plan.d_model, dtype=plan.dtype))
    state = {"transformer.wte.weight": plan.embed, "transformer.wpe.weight": positions,
             "transformer.ln_f.weight": plan.final_norm[0],
             "transformer.ln_f.bias": plan.final_norm[1],
             "classifier.weight": plan.head_weight[None, :],
             "classifier.bias": plan.head_bias.reshape(1)}
    for index, block in enumerate(plan.blocks):
        prefix = f"transformer.h.{index}"
        # Conv1D holds [in, out]; c_attn is q, k, v side by side
        state[f"{prefix}.attn.c_attn.weight"] = torch.cat(
            [block.attention[part][0].T for part in ("q", "k", "v")], dim=1)
        state[f"{prefix}.attn.c_attn.bias"] = torch.cat(
            [block.attention[part][1] for part in ("q", "k", "v")])
        state[f"{prefix}.attn.c_proj.weight"] = block.attention["o"][0].T
        state[f"{prefix}.attn.c_proj.bias"] = block.attention["o"][1]
        state[f"{prefix}.ln_1.weight"], state[f"{prefix}.ln_1.bias"] = block.norm1
        state[f"{prefix}.ln_2.weight"], state[f"{prefix}.ln_2.bias"] = block.norm2
        state[f"{prefix}.mlp.c_fc.weight"] = block.fc_in[0].T
        state[f"{prefix}.mlp.c_fc.bias"] = block.fc_in[1]
        state[f"{prefix}.mlp.c_proj.weight"] = block.fc_out[0].T
        state[f"{prefix}.mlp.c_proj.bias"] = block.fc_out[1]
    missing, unexpected = model.load_state_dict(
        {k: v.contiguous() for k, v in state.items()}, strict=False)
    if unexpected or [name for name in missing if not name.endswith(".attn.bias")]:
        raise CraspError(f"internal: GPT-2's tensors differ from the plan's: "
                         f"{', '.join((unexpected or missing)[:5])}")
    return model


def hugging_face_of(model, n_ctx: int | None = None):
    """(the ``...ForTokenClassification`` model, its tokenizer) for a float realization or a
    trained run (module docstring)."""
    plan = plan_blocks(model, TARGET, n_ctx)
    built = _llama(plan) if architecture_for(plan) == "llama" else _gpt2(plan)
    built.crasp_plan = plan
    return built, build_tokenizer(plan.vocab)


def write_hugging_face(model, output: str | Path, force: bool = False,
                       n_ctx: int | None = None) -> None:
    """Write the ``save_pretrained`` directory atomically (``crasp.util.outputs``)."""
    built, tokenizer = hugging_face_of(model, n_ctx)
    plan: BlockPlan = built.crasp_plan
    info = {**description(plan, FORMAT), "architecture": type(built).__name__}

    def write(staging: Path) -> None:
        disable_progress_bar()   # save_pretrained's shard bar is noise for a model this size
        built.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        (staging / "crasp.json").write_text(json.dumps(info, indent=2) + "\n")
    replace_directory(output, INTEROP_EXPORT, force, write)
